# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the guest scripts of boot-vm.sh, which copies this directory
# into each VM's stage as /usr/local/lib/rmbd-test.  What the host passes
# to a VM is in /etc/rmbd-test/env (see boot-vm.sh); results go to the
# results share, mounted at /run/rmbd-out: one line "ok - WHAT" or "not
# ok - WHAT: WHY" a check in "checks", then "done" once all ran.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C

# shellcheck source=/dev/null
source /etc/rmbd-test/env
# shellcheck disable=SC2034 # used by the scripts that source this
out=/run/rmbd-out

ok() {
	echo "ok - $*" >> "$out/checks"
	echo "ok - $*"
}

not_ok() {
	echo "not ok - $*" >> "$out/checks"
	echo "not ok - $*"
}

# One line of at most 400 characters of what stdin holds.
oneline() { tr '\n' ' ' | sed 's/ *$//' | cut -c1-400; }

# check WHAT CMD...: ok when CMD succeeds, else not ok with its output.
check() {
	local what=$1 o
	shift
	if o=$("$@" 2>&1); then
		ok "$what"
	else
		not_ok "$what: $(oneline <<< "$o")"
	fi
}

# The by-id link of the rmbd device on EXPORT of the target, resolved:
# udev makes it (60-rmbd.rules) soon after the device appears.
rmbd_dev_of() {	# EXPORT
	local link=/dev/disk/by-id/rmbd-$TARGET_ADDR-$1 i
	for (( i = 0; i < 100; i++ )); do
		[[ -e $link ]] && break
		sleep 0.2
	done
	readlink -f "$link"
}

# The client's two units active, and their devices, found by their
# by-id links, in swap and data.
client_devices() {
	local u
	for u in rmbd-dev@swap.service rmbd-dev@data.service; do
		check "$u is active" systemctl is-active "$u"
	done
	swap=$(rmbd_dev_of swap0)
	data=$(rmbd_dev_of data0)
	echo "swap0 is $swap, data0 is $data"
	check "swap0 and data0 are rmbd devices (by-id links)" \
		test "${swap#/dev/rmbd}" != "$swap" -a "${data#/dev/rmbd}" != "$data" -a -b "$swap" -a -b "$data"
}

# systemd's view of this boot: no failed unit; no ordering cycle, job
# timeout or failed dependency in what PID 1 logged; when
# multi-user.target was reached.
systemd_health() {
	local f t
	f=$(systemctl --failed --plain --no-legend | awk '{print $1}' | oneline)
	if [[ -z $f ]]; then ok "no failed units"; else not_ok "failed units: $f"; fi
	f=$(journalctl -b -o cat _PID=1 | grep -aiE 'ordering cycle|timed out|dependency failed' | oneline)
	if [[ -z $f ]]; then
		ok "no ordering cycle, job timeout or failed dependency"
	else
		not_ok "systemd reported: $f"
	fi
	t=$(systemctl show -P ActiveEnterTimestampMonotonic multi-user.target)
	echo "multi-user.target reached $(( t / 1000000 )) s after the kernel started" |
		tee "$out/boot-time"
}

# The logs of this boot so far, for the record.
save_logs() {	# SUFFIX (may be empty)
	journalctl -b -o short-monotonic > "$out/journal$1.log" 2>&1
	dmesg > "$out/dmesg$1.log" 2>&1
	systemctl list-units --all --plain --no-legend > "$out/units$1.log" 2>&1
	# rmbd's counters (timeouts, reconnects), of the devices or exports.
	{ rmbd -s dev show; rmbd -s export show; } > "$out/rmbd-stats$1.log" 2>&1
}
