#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test's drop-ins make a unit's stop call this (boot-vm.sh writes
# them): "pre NAME" before rmbd-dev@NAME.service's own ExecStop records
# the device the unit connected, the swaps and whether /srv/data is
# mounted: both must be gone by then.  "post NAME" (ExecStopPost) records
# how the stop went and what the CLI shows after it, rmbd's devices
# (dev) or exports (the target): the device or exports must be gone.
# Files in the results share: stop-NAME.pre, stop-NAME.post and
# stop-NAME.json.

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

mode=$1 name=$2
case "$mode" in
pre)
	{
		conf=/etc/rmbd/dev.d/$name.conf
		export=$(sed -n 's/.* export \([^ ]*\).*/\1/p' "$conf" | head -n 1)
		echo "dev=$(basename "$(rmbd_dev_of "$export")")"
		echo "--- /proc/swaps"
		cat /proc/swaps
		echo "--- /srv/data in /proc/mounts"
		grep ' /srv/data ' /proc/mounts
		echo "--- end"
	} > "$out/stop-$name.pre" 2>&1
	;;
post)
	echo "result=${SERVICE_RESULT:-} code=${EXIT_CODE:-} status=${EXIT_STATUS:-}" > "$out/stop-$name.post"
	if [[ $name == target ]]; then
		rmbd -j export show > "$out/stop-$name.json" 2>> "$out/stop-$name.post"
	else
		rmbd -j dev show > "$out/stop-$name.json" 2>> "$out/stop-$name.post"
	fi
	;;
esac
exit 0
