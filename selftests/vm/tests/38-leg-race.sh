#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One leg of a mirror fails while the other comes back (the debug
# kernel's fail_function holds the lost leg's recovery back
# RMBD_C_RECOVER_LATE_MS, 10 s, as a reconnect holding the leg's
# recovery_lock would).  Leg 1
# is down (its link d2), then leg 0's link goes down as d2 comes back:
# the device waits (reconnecting) the moment leg 0's loss is seen, not
# when its recovery gets to it, and is live again once leg 1 is back,
# before leg 0's recovery ran.  Then I/O completes and reads back what
# was written.  (Before the device's state had one owner, the device said
# live while every request waited for a kick that never came.)  With leg
# 1 kept down, the device fails the loss timeout after leg 0's loss:
# the loss timer runs from the loss, not from the late recovery.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

ff=/sys/kernel/debug/fail_function
fn=rmbd_c_recover_late
[[ -w $ff/inject ]] || skip "no fail_function (the debug kernel has it)"
grep -qw "$fn" "$ff/injectable" || fail "$fn is not open to fail_function"

addr2=$RMBD_ADDR2
out=/run/rmbd-leg-race
rm -rf "$out"
mkdir -p "$out"
late=10		# RMBD_C_RECOVER_LATE_MS
loss=6

late_off() { echo > "$ff/inject" 2> /dev/null || true; }
cleanup() {
	late_off
	link_up 2> /dev/null || true
	ip link set d2 up 2> /dev/null || true
	dev_disconnect_all
	rmbd_reset > /dev/null 2>&1 || true
	second_link_del
}
trap cleanup EXIT

# Every recovery of a lost leg decides late from now on.
late_on() {
	echo "$fn" > "$ff/inject" || fail "cannot inject into $fn"
	printf '%#x\n' -5 > "$ff/$fn/retval"
	echo N > "$ff/task-filter"
	echo 100 > "$ff/probability"
	echo 1 > "$ff/interval"
	echo -1 > "$ff/times"
	echo 0 > "$ff/space"
	echo 0 > "$ff/verbose"
}

# Run CMD in the background: it must end, with status 0, within 20 s.
# (A request that never completes leaves it in D state: no timeout or
# kill ends it, only the forced disconnect of the cleanup.)
io_within() {	# WHAT CMD...
	local what=$1 pid t0 rc=0
	shift
	"$@" &
	pid=$!
	t0=$(usec)
	while kill -0 "$pid" 2> /dev/null; do
		(( $(usec) - t0 < 20000000 )) ||
			fail "$what did not complete in 20 s: $(dev_jq "$dev" '"\(.state) \(.legs[0].state) \(.legs[1].state)"')"
		sleep 0.1
	done
	wait "$pid" || rc=$?
	(( rc == 0 )) || fail "$what failed ($rc)"
}

# Wait up to SECONDS for the device's state and leg states to be WANT
# ("state leg0 leg1"); prints the milliseconds it took.
wait_states() {	# DEV WANT SECONDS
	local t0 got
	t0=$(usec)
	while got=$(dev_jq "$1" '"\(.state) \(.legs[0].state) \(.legs[1].state)"'); [[ $got != "$2" ]]; do
		(( $(usec) - t0 < $3 * 1000000 )) || fail "$1 is '$got' after $3 s, not '$2'"
		sleep 0.1
	done
	echo $(( ($(usec) - t0) / 1000 ))
}

target_setup m0 16M
target_setup m1 16M
second_link_add

mirror() {
	local dev
	dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export m0 addr "$addr2" export m1 \
		layout mirror reconnect_delay 1 loss_timeout "$1" | tail -n 1)
	[[ $dev =~ ^rmbd[0-9]+$ ]] || fail "dev connect printed '$dev'"
	wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
	echo "$dev"
}

# ---- a leg fails while the other comes back -----------------------------

dev=$(mirror 60)
head -c 4M /dev/urandom > "$out/base"
dd if="$out/base" of="/dev/$dev" bs=1M oflag=direct status=none ||
	fail "the first write failed"
# Leg 1 down without a write: it stays in sync, and is back in sync.
ip link set d2 down
ms=$(wait_states "$dev" "live up down" 30)
log "leg 1 down after $ms ms"
late_on
kmsg=$(kmsg_mark)
link_down
ip link set d2 up
t0=$(usec)
# Leg 0's loss is seen at once (its port's event): the device waits,
# before the recovery, which is held back $late s, says a word.
seen=
while (( $(usec) - t0 < (late - 2) * 1000000 )); do
	st=$(dev_field "$dev" state)
	if [[ $st != live ]]; then
		seen="$st after $(( ($(usec) - t0) / 1000 )) ms"
		break
	fi
	sleep 0.1
done
ms=$(wait_states "$dev" "live down up" 60)
log "device ${seen:-never seen waiting}; live over leg 1 after $ms ms more"
# The device is live: its I/O must complete.  A read of what was
# written, and a write read back, each within 20 s.
io_within "a read of the live device" dd if="/dev/$dev" of="$out/read" \
	bs=1M count=4 iflag=direct status=none
cmp "$out/base" "$out/read" || fail "the read returned other data than was written"
head -c 1M /dev/urandom > "$out/new"
io_within "a write to the live device" dd if="$out/new" of="/dev/$dev" \
	bs=1M seek=8 oflag=direct status=none
io_within "reading back the write" dd if="/dev/$dev" of="$out/read" \
	bs=1M skip=8 count=1 iflag=direct status=none
cmp "$out/new" "$out/read" || fail "the write did not read back"
# It waited for leg 1 and came back with it, before leg 0's recovery.
kmsg_since "$kmsg" | grep -q "rmbd[0-9]*: reconnected to $addr2:" ||
	fail "the device did not wait for leg 1 and come back with it: $(kmsg_since "$kmsg" | grep rmbd | tail -n 8)"
# Leg 0's recovery ran late; the device went on without it.
ms=$(wait_states "$dev" "live down up" 30)
kmsg_since "$kmsg" | grep -q "rmbd.*(leg 0) lost" ||
	fail "leg 0's recovery never ran: $(kmsg_since "$kmsg" | grep rmbd | tail -n 5)"
late_off
link_up
# Leg 0 missed a write: back, stale, then in sync.
wait_states "$dev" "live up up" 60 > /dev/null
dev_disconnect "$dev"

# ---- the loss timer runs from the loss ----------------------------------

dev=$(mirror "$loss")
ip link set d2 down
wait_states "$dev" "live up down" 30 > /dev/null
late_on
link_down
t0=$(usec)
while [[ $(dev_field "$dev" state) != failed ]]; do
	# The recovery, late, would arm it only $late s after the loss.
	(( $(usec) - t0 < (loss + late - 2) * 1000000 )) ||
		fail "$dev not failed $(( loss + late - 2 )) s after its loss, with a loss timeout of $loss s: $(dev_field "$dev" state)"
	sleep 0.2
done
ms=$(( ($(usec) - t0) / 1000 ))
(( ms >= loss * 1000 - 500 )) || fail "$dev failed after $ms ms, before its loss timeout of $loss s"
log "failed $ms ms after the loss, with a loss timeout of $loss s"
late_off
timeout 20 dd if="/dev/$dev" of=/dev/null bs=4k count=1 iflag=direct status=none 2> /dev/null &&
	fail "a read of a failed device succeeded"
link_up
ip link set d2 up
timeout 60 "$RMBD_BIN" dev disconnect "$dev" force > /dev/null || fail "cannot disconnect failed $dev"
log "ok"
