#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A pool of three legs, each on its own soft-RoCE link (exports p0, p1,
# p2 of 24M in slabs of 2M, over d0, d2 and d3), two copies of each
# extent: the device holds 36M, in extents of 2M placed as dev show -d
# says.  fio writes and verifies its first 24M while the third link goes
# down for good: the device stays live (degraded) and dev replace puts
# export p3, over the first link, in the lost leg's place, which copies
# only the extents that leg holds (24 MiB of 36).  Then the second link
# goes down too, dd writes extent 15 (on legs 0 and 1): the device still
# stays live, and when that link is back the leg resyncs what it missed.
# fio finds no error, the block layer logs none, and each export
# connected alone holds the device's extents where the placement shown
# says.  Before all that, on a pool of its own, two blips one after the
# other (legs 0 and 1) leave leg 1 in sync, and the pool is live again as
# soon as it is back.
# timeout=600

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
command -v fio > /dev/null || skip "fio not installed"

out=/run/rmbd-pool
rm -rf "$out"
mkdir -p "$out"
MiB=$(( 1 << 20 ))

cleanup() {
	[[ -n ${fio_pid:-} ]] && kill "$fio_pid" 2> /dev/null
	[[ -n ${mon:-} ]] && kill "$mon" 2> /dev/null
	rmbd_reset > /dev/null 2>&1 || true
	second_link_del
	third_link_del
}
trap cleanup EXIT

for m in p0 p1 p2 p3; do
	target_setup "$m" 24M slab 2M
done
second_link_add
third_link_add

# Wrong layouts are refused, with the reason.
usage_fails() {	# WHAT MESSAGE ARGS...
	local what=$1 msg=$2 rc=0 err
	shift 2
	err=$("$RMBD_BIN" "$@" 2>&1 > /dev/null) || rc=$?
	(( rc == 2 )) && [[ $err == *"$msg"* ]] ||
		fail "$what: 'rmbd $*' exited with $rc: $err"
}
usage_fails "copies over legs" "invalid copies '3' (1-2, the legs)" \
	dev connect addr "$RMBD_ADDR" export p0 addr "$RMBD_ADDR2" export p1 layout pool copies 3
usage_fails "copies of a mirror" "copies belongs to layout pool" \
	dev connect addr "$RMBD_ADDR" export p0 addr "$RMBD_ADDR2" export p1 copies 2
rmbd_fails "a pool of one leg" dev connect addr "$RMBD_ADDR" export p0 layout pool
[[ $RMBD_ERR == *"a pool needs two legs or more"* ]] || fail "a pool of one leg: '$RMBD_ERR'"
[[ $(dev_count) == 0 ]] || fail "a refused pool left a device"

io_errors() { dmesg | grep -c "error, dev $dev," || true; }

# Wait up to 20 s for leg N to be STATE, failing if the device leaves live.
wait_leg() {	# N STATE WHAT
	local t0 st
	t0=$(usec)
	while st=$(dev_jq "$dev" ".legs[$1].state"); [[ $st != "$2" ]]; do
		[[ $(dev_field "$dev" state) == live ]] ||
			fail "the device went $(dev_field "$dev" state): $3"
		(( $(usec) - t0 < 20000000 )) || fail "leg $1 is $st 20 s on: $3"
		sleep 0.1
	done
	log "leg $1 $2 after $(( ($(usec) - t0) / 1000 )) ms: $3"
}

# Wait up to SECONDS for the device's FILTER to print WANT; past that,
# fail with WHAT and what it printed.  Sets t0 to when it started.
wait_jq() {	# FILTER WANT SECONDS WHAT
	local st
	t0=$(usec)
	while st=$(dev_jq "$dev" "$1"); [[ $st != "$2" ]]; do
		(( $(usec) - t0 < $3 * 1000000 )) || fail "$4: '$st' $3 s on"
		sleep 0.1
	done
}

# Two blips: leg 0 goes and misses writes (stale), then leg 1, with
# writes in flight to extents of legs 1 and 2.  Those writes wait rather
# than make leg 1 stale too: extent 0's only copy in sync would be gone.
# So when leg 1 is back in sync the pool is live again at once, and leg
# 0 is resynced when its link is back.
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export p0 addr "$RMBD_ADDR2" export p1 \
	addr "$RMBD_ADDR3" export p2 layout pool reconnect_delay 1 \
	loss_timeout 120 | tail -n 1)
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
errors0=$(io_errors)
fio_verify_start "$dev" 0 24M "$out"
sleep 2
link_down
wait_leg 0 down "first link down"
sleep 2
ip link set d2 down
wait_jq '"\(.state) \(.legs[1].state)"' "reconnecting down" 20 "legs 0 and 1 down, not reconnecting"
log "legs 0 and 1 down: extent 0 has no copy up, the pool waits"
sleep 2
ip link set d2 up
wait_jq '"\(.state) \(.legs[1].state)"' "live up" 30 "leg 1 back (not live with leg 1 in sync)"
log "leg 1 back in sync: live again after $(( ($(usec) - t0) / 1000 )) ms, with leg 0 $(dev_jq "$dev" '.legs[0].state')"
link_up
wait_jq '[.legs[] | "\(.state)/\(.dirty)"] | join(" ")' "up/0 up/0 up/0" 60 "legs after the first link came back"
sleep 1
fio_verify_stop "$out"
errors=$(( $(io_errors) - errors0 ))
(( errors == 0 )) || fail "the block layer logged $errors I/O errors of $dev after two blips"
log "after two blips the pool is healthy, fio found no error"
dev_disconnect "$dev"
rm -f "$out"/stop "$out"/passes "$out"/fio.*

dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export p0 addr "$RMBD_ADDR2" export p1 \
	addr "$RMBD_ADDR3" export p2 layout pool copies 2 reconnect_delay 1 \
	loss_timeout 120 | tail -n 1)
[[ $dev =~ ^rmbd[0-9]+$ ]] || fail "dev connect printed '$dev'"
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
log "connected: $(rmbd_cli -d dev show "$dev" | tr '\n' '|')"
got=$(dev_jq "$dev" '"\(.layout) \(.copies) \(.size) \(.placement.extent_size) \(.placement.extents) \(.placement.period) \(.placement.period_leg_bytes)"')
[[ $got == "pool 2 $(( 36 * MiB )) $(( 2 * MiB )) 18 3 $(( 4 * MiB ))" ]] ||
	fail "a pool of 3 x 24M, 2 copies, extents of 2M: $got"
got=$(dev_jq "$dev" '[.placement.pattern[] | [.copies[] | "\(.leg)@\(.offset)"] | join(",")] | join(" ")')
[[ $got == "0@0,1@0 2@0,0@$(( 2 * MiB )) 1@$(( 2 * MiB )),2@$(( 2 * MiB ))" ]] ||
	fail "placement of the first three extents: $got"
(( $(blockdev --getsize64 "/dev/$dev") == 36 * MiB )) ||
	fail "/dev/$dev has $(blockdev --getsize64 "/dev/$dev") bytes, not 36M"
rmbd_cli -d dev show "$dev" | grep -q "placement: extent_size $(( 2 * MiB )) extents 18 period 3" ||
	fail "dev show -d shows no placement: $(rmbd_cli -d dev show "$dev")"

"$RMBD_BIN" -j monitor dev > "$out/events" 2> "$out/monitor.err" &
mon=$!
sleep 1
errors0=$(io_errors)
# fio on the first 24M; extents 12 to 17 are for dd.
fio_verify_start "$dev" 0 24M "$out"
sleep 2


# The third target goes for good: its leg is down, the device live.
ip link set d3 down
wait_leg 2 down "third link down"
for (( i = 0; i < 30; i++ )); do
	[[ $(dev_field "$dev" state) == live ]] || fail "the device went $(dev_field "$dev" state) with one leg down"
	kill -0 "$fio_pid" 2> /dev/null || fail "fio exited with a leg down: $(cat "$out"/fio.*.out | tail -n 5)"
	sleep 0.1
done
[[ $(dev_field "$dev" degraded) == true ]] || fail "a pool with a leg down is not shown degraded"

# Leg 0 cannot go: extents 1, 4, ... are on legs 2 and 0 (a mirror of
# three would let it, leg 1 being in sync).
rmbd_fails "a leg whose extents have no other copy" dev replace "$dev" leg 0 with addr "$RMBD_ADDR" export p3
[[ $RMBD_ERR == *"no other leg is up and holds every write of some extent of this leg"* ]] ||
	fail "replace of leg 0 with leg 2 down: '$RMBD_ERR'"
# Replaced by p3 over the first link: only what leg 2 holds is copied.
rmbd_ok dev replace "$dev" leg 2 with addr "$RMBD_ADDR" export p3 > /dev/null
t0=$(usec)
while leg=$(dev_jq "$dev" '.legs[2] | "\(.state) \(.export) \(.dirty)"'); [[ $leg != "up p3 0" ]]; do
	(( $(usec) - t0 < 60000000 )) || fail "leg 2 is '$leg' 60 s after the replace"
	[[ $(dev_field "$dev" state) == live ]] || fail "the device went $(dev_field "$dev" state) during the rebuild"
	sleep 0.2
done
copied=$(dmesg | grep -o "$dev: leg 2: resync of [0-9]* MiB starts" | tail -n 1 | grep -o '[0-9]* MiB' || true)
[[ $copied == "24 MiB" ]] || fail "the rebuild of leg 2 copied '$copied', not the 24 MiB it holds"
log "p3 in sync $(( ($(usec) - t0) / 1000 )) ms later, $copied copied: $(dmesg | grep -o 'leg 2 in sync again.*' | tail -n 1)"

# The third link is back, for the two blips below; no leg uses it now.
ip link set d3 up

# A second target goes after the rebuild: still live, no error.
ip link set d2 down
wait_leg 1 down "second link down after the rebuild"
# Extent 15 is on legs 0 and 1: leg 1 misses this write.
head -c 2M /dev/urandom > "$out/late"
dd if="$out/late" of="/dev/$dev" bs=1M seek=30 oflag=direct status=none ||
	fail "a write with leg 1 down failed"
sleep 3
[[ $(dev_field "$dev" state) == live ]] || fail "the device went $(dev_field "$dev" state) with leg 1 down"
ip link set d2 up
wait_jq '.legs[1] | "\(.state) \(.dirty)"' "up 0" 60 "leg 1 after its link came back"
copied=$(dmesg | grep -o "$dev: leg 1: resync of [0-9]* MiB starts" | tail -n 1 | grep -o '[0-9]* MiB' || true)
[[ -n $copied ]] && (( ${copied% MiB} >= 2 && ${copied% MiB} <= 24 )) ||
	fail "leg 1's resync copied '$copied' (2 MiB dd wrote while it was down, 24 MiB at most)"
cmp "$out/late" <(dd if="/dev/$dev" bs=1M skip=30 count=2 iflag=direct status=none) ||
	fail "2M written while leg 1 was down read back wrong"
log "leg 1 back and in sync $(( ($(usec) - t0) / 1000 )) ms later, $copied copied"
sleep 2
fio_verify_stop "$out"
[[ $(dev_field "$dev" degraded) == false ]] || fail "in sync again, the pool is still degraded"
kill "$mon" 2> /dev/null
wait "$mon" 2> /dev/null || true
mon=
names=$(jq -r --arg d "$dev" 'select(.name == $d) | .event' "$out/events" | sort -u | tr '\n' ' ')
for e in degraded replaced resync healthy; do
	[[ " $names" == *" $e "* ]] || fail "no $e event: $names"
done
errors=$(( $(io_errors) - errors0 ))
(( errors == 0 )) || fail "the block layer logged $errors I/O errors of $dev: $(dmesg | grep -m 2 "error, dev $dev," | tr '\n' ' ')"

# Zeroes across extents 13 and 14 (on legs 2, 0 and 1, 2) land on
# both, and nothing else changes: a pool takes no discards or write
# zeroes, so the block layer writes zero pages, split at the extent.
head -c 12M /dev/urandom > "$out/z"
dd if="$out/z" of="/dev/$dev" bs=1M seek=24 oflag=direct status=none || fail "write at 24M failed"
blkdiscard -z -o $(( 27 * MiB )) -l $(( 2 * MiB )) "/dev/$dev" || fail "zeroing 27M-29M failed"
dd if=/dev/zero of="$out/z" bs=1M seek=3 count=2 conv=notrunc status=none
cmp "$out/z" <(dd if="/dev/$dev" bs=1M skip=24 count=12 iflag=direct status=none) ||
	fail "zeroes across extents 13 and 14: 24M-36M read back wrong"
[[ $(cat "/sys/block/$dev/queue/discard_max_bytes") == 0 ]] ||
	fail "a pool offers discards: $(cat "/sys/block/$dev/queue/discard_max_bytes")"
log "zeroes across two extents read back right; no discards offered"

# Each extent lies on its legs where the placement says.
dev_jq "$dev" '.placement' > "$out/placement"
legs=(p0 p1 p3)
dd if="/dev/$dev" of="$out/pool.img" bs=1M iflag=direct status=none || fail "cannot read the pool"
dev_disconnect "$dev"
for l in 0 1 2; do
	one=$(dev_connect "${legs[l]}")
	dd if="/dev/$one" of="$out/leg$l.img" bs=1M iflag=direct status=none ||
		fail "cannot read export ${legs[l]} alone"
	dev_disconnect "$one"
done
period=3
for (( e = 0; e < 18; e++ )); do
	for k in 0 1; do
		read -r l off < <(jq -r --argjson p $(( e % period )) --argjson k "$k" \
			'.pattern[$p].copies[$k] | "\(.leg) \(.offset)"' "$out/placement")
		off=$(( off + e / period * 4 * MiB ))
		cmp -n $(( 2 * MiB )) -i "$(( e * 2 * MiB )):$off" "$out/pool.img" "$out/leg$l.img" > /dev/null ||
			fail "extent $e, copy $k: not at leg $l (${legs[l]}) offset $off"
	done
done
log "each of the 18 extents is on its two legs where dev show -d says"

