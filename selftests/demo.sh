#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot the test VM and show rmbd at work over soft-RoCE: a
# 1 GiB export, a client device, ext4 on it, data surviving a disconnect
# and a reconnect; then a second export as the only swap, a program in a
# cgroup held to 64M of its 256 MiB working set, and every byte of that
# working set verified after its trip through swap.  Ends with PASS or
# FAIL.

set -u

# Parsed whole before it runs, so editing this file cannot derail a run.
{

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if (( EUID != 0 )); then
	echo "demo.sh: run as root" >&2
	exit 1
fi

echo "rmbd demo: booting a VM (QEMU, $( [[ ${RMBD_VM_KVM:-0} == 1 ]] && echo KVM || echo TCG)); this takes three to four minutes"
export RMBD_RESULTS=${RMBD_RESULTS:-$here/results/demo}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$here/vm/run-vm.sh" --raw "$here/vm/demo-guest.sh" |
	grep -v -e '^KTAP version' -e '^1\.\.[0-9]*$' | tee "$log"
rc=${PIPESTATUS[0]}
if (( rc == 0 )) && grep -q '^ok 1 demo-guest' "$log" &&
   ! grep -q '^ok 1 demo-guest # SKIP' "$log"; then
	echo "PASS (exit code 0)"
	exit 0
fi
echo "FAIL (exit code 1)"
exit 1
exit
}
