#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Swap on a mirror that loses a target mid-run.  A mirror of two legs
# (export s0 over the first link, s1 over a second, rxe1 on d2) is the
# only swap; swapverify keeps a 96 MiB working set (48 on the debug
# kernel) under a cgroup memory.max of 24M (12), page after page going
# out and coming back.  Once swap is in use, the second link goes down
# for good: the device must stay live, and swapverify find every byte,
# with no SIGBUS and no OOM kill.  Then, under a second run, leg 1 is
# replaced by export s2 over the first link and rebuilt while the pages
# go in and out; the second run is clean too, the mirror is healthy, and
# the block layer logged no I/O error.
# timeout=600

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
require_swapverify

ws=$(rounds 96 48)
limit=$(rounds 24 12)
cg=/sys/fs/cgroup/rmbd-mirror-swap

cleanup() {
	swap_sample_stop
	if [[ -d $cg ]]; then
		xargs -r kill -9 < "$cg/cgroup.procs" 2> /dev/null || true
		for (( i = 0; i < 50; i++ )); do
			rmdir "$cg" 2> /dev/null && break
			sleep 0.1
		done
	fi
	ip link set d2 up 2> /dev/null || true
	swapoff -a 2> /dev/null || true
	rmbd_reset > /dev/null 2>&1 || true
	second_link_del
}
trap cleanup EXIT

if ! grep -q "^cgroup2 /sys/fs/cgroup " /proc/mounts; then
	mount -t cgroup2 cgroup2 /sys/fs/cgroup || fail "cannot mount cgroup2"
fi
echo +memory > /sys/fs/cgroup/cgroup.subtree_control ||
	fail "cannot enable the memory controller"
mkdir -p "$cg"
echo "${limit}M" > "$cg/memory.max"
[[ ! -f $cg/memory.swap.max ]] || echo max > "$cg/memory.swap.max"

# The exports: twice the working set, half on the debug kernel too.
size=$(rounds 256 128)M
target_setup s0 "$size"
target_setup s1 "$size"
target_setup s2 "$size"
second_link_add
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export s0 addr "$RMBD_ADDR2" export s1 \
	reconnect_delay 1 loss_timeout 120 | tail -n 1)
[[ $dev =~ ^rmbd[0-9]+$ ]] || fail "dev connect printed '$dev'"
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
swap_only_on "$dev"
io_errors() { dmesg | grep -c "error, dev $dev," || true; }
errors0=$(io_errors)
log "swap on the mirror /dev/$dev (s0 and s1)"

# swapverify in the group, output in /tmp/sv-TAG; its pid in $sv.
sv_start() {	# TAG OPTS...
	local tag=$1
	shift
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
		"$swapverify" "$@" > "/tmp/sv-$tag" 2>&1 &
	sv=$!
}

# Wait until MiB more pages went out to swap than when it was called.
wait_swapout() {	# MIB
	local out0 t0
	out0=$(vmstat_get pswpout)
	t0=$(usec)
	while (( $(vmstat_get pswpout) - out0 < $1 * 256 )); do
		kill -0 "$sv" 2> /dev/null || break
		(( $(usec) - t0 < 120000000 )) || fail "not $1 MiB swapped out in 120 s"
		sleep 0.2
	done
}

# Wait for swapverify TAG (at most 300 s): clean, no OOM kill.
sv_check() {	# TAG WHAT
	local rc=0
	# About a minute here, on either kernel: a stall of minutes is a hang.
	wait_exit "$sv" 300 "$2: swapverify still runs after 300 s: $(tail -n 3 "/tmp/sv-$1" | tr '\n' ' ')"
	wait "$sv" || rc=$?
	sed 's/^/  /' "/tmp/sv-$1"
	(( rc == 0 )) || fail "$2: swapverify exited with $rc$( (( rc > 128 )) && echo " (signal $(( rc - 128 )))")"
	grep -q ' 0 mismatched bytes in 0 pages' "/tmp/sv-$1" ||
		fail "$2: swapverify printed no clean summary"
	[[ $(oom_kills "$cg") == 0 ]] || fail "$2: oom_kill $(oom_kills "$cg")"
}

# A target lost while pages are in swap on both legs.
sv_start lose -m "$ws" -p 3
wait_swapout $(( ws - limit ))
ip link set d2 down
t0=$(usec)
while read -r st leg1 < <(dev_jq "$dev" '"\(.state) \(.legs[1].state)"'); [[ $leg1 != down ]]; do
	[[ $st == live ]] || fail "the device went $st when one leg of two was lost"
	(( $(usec) - t0 < 20000000 )) || fail "leg 1 still $leg1 20 s after its link went down"
	sleep 0.1
done
log "leg 1 down after $(( ($(usec) - t0) / 1000 )) ms, with $(awk -v d="/dev/$dev" '$1 == d {print int($4 / 1024)}' /proc/swaps) MiB in swap"
sv_check lose "a leg lost under swap"
[[ $(dev_field "$dev" state) == live ]] || fail "the device is $(dev_field "$dev" state) after the run"

# A rebuild under swap: leg 1 replaced by s2 over the first link.
sv_start rebuild -m "$ws" -p 3 -s 5
wait_swapout $(( (ws - limit) / 2 ))
rmbd_ok dev replace "$dev" leg 1 with addr "$RMBD_ADDR" export s2 > /dev/null
t0=$(usec)
while leg1=$(dev_jq "$dev" '.legs[1] | "\(.state) \(.dirty)"'); [[ $leg1 != "up 0" ]]; do
	(( $(usec) - t0 < 240000000 )) || fail "leg 1 is '$leg1' 240 s after its replace"
	[[ $(dev_field "$dev" state) == live ]] || fail "the device went $(dev_field "$dev" state) during the rebuild"
	sleep 0.2
done
log "leg 1 replaced by s2 and rebuilt under swap in $(( ($(usec) - t0) / 1000 )) ms"
sv_check rebuild "a rebuild under swap"
[[ $(dev_field "$dev" degraded) == false ]] || fail "rebuilt, the mirror is still degraded"
errors=$(( $(io_errors) - errors0 ))
(( errors == 0 )) || fail "the block layer logged $errors I/O errors of $dev"
swapoff "/dev/$dev" || fail "swapoff /dev/$dev failed"
dev_disconnect "$dev"
