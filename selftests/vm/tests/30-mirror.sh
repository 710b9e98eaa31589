#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A mirror of two legs, each on its own soft-RoCE link (export m0 over
# d0, m1 over a second link, d2): fio writes and verifies from start to
# end while the second link goes down and stays down.  The device stays
# live the whole time (no wait, no I/O error), its second leg shows down,
# and rmbd monitor says "degraded".  When the link comes back the leg
# reconnects as "stale", with the regions it missed in its dirty map,
# and takes no reads, while its resync (throttled to 1 MiB/s here)
# copies them: with the first link down now, the device waits
# (reconnecting) rather than read the stale copy, and is live again
# with the first link.  Unthrottled, the resync ends ("healthy"), having
# copied only the dirty regions, and fio, which wrote all along, found
# no error.  Each export connected alone then holds the same data.  A
# leg whose export is deleted fails for good and the device stays live;
# dev replace puts a new export in its place (refused for one too small,
# the other leg's, or when no other copy is in sync), the whole device is
# copied to it under fio (in requests smaller than the resync's own
# reads and writes), and it holds what the survivor holds; a replace
# of the first leg keeps the device's by-id name.  A mirror
# of a blank export and one that holds data copies that data to the
# blank one (initial sync); two blank ones, or two written ones, are
# taken as they are.
# timeout=600

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
command -v fio > /dev/null || skip "fio not installed"

addr2=$RMBD_ADDR2
out=/run/rmbd-mirror
rm -rf "$out"
mkdir -p "$out"

cleanup() {
	[[ -n ${fio_pid:-} ]] && kill "$fio_pid" 2> /dev/null
	[[ -n ${mon:-} ]] && kill "$mon" 2> /dev/null
	link_up 2> /dev/null || true
	ip link set d2 up 2> /dev/null || true
	echo 0 > /sys/module/rmbd_client/parameters/resync_rate 2> /dev/null || true
	rmbd_reset > /dev/null 2>&1 || true
	second_link_del
}
trap cleanup EXIT

# Stop the monitor, and fail unless its events of DEV in FILE hold each
# of the names given.
check_events() {	# FILE DEV EVENT...
	local file=$1 dev=$2 names e
	shift 2
	kill "$mon" 2> /dev/null
	wait "$mon" 2> /dev/null || true
	mon=
	names=$(jq -r --arg d "$dev" 'select(.name == $d) | .event' "$file")
	log "events: $(sort <<< "$names" | uniq -c | tr -s ' \n' ' ')"
	for e in "$@"; do
		grep -qx -- "$e" <<< "$names" || fail "no $e event: $(tr '\n' ' ' <<< "$names")"
	done
}

# Each export connected alone (after DEV is gone) holds the same 64M.
same_alone() {	# EXPORT EXPORT...
	local m one
	for m in "$@"; do
		one=$(dev_connect "$m")
		dd if="/dev/$one" of="$out/$m.img" bs=1M count=64 iflag=direct status=none ||
			fail "cannot read export $m alone"
		dev_disconnect "$one"
		cmp "$out/$1.img" "$out/$m.img" || fail "the copies of $1 and $m differ"
	done
}

resync_rate=/sys/module/rmbd_client/parameters/resync_rate
echo 1 > "$resync_rate" || fail "cannot throttle the resync"
target_setup m0 64M
target_setup m1 96M
second_link_add

# Connect: both legs up, the device as large as the smaller export.
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export m0 addr "$addr2" export m1 \
	layout mirror reconnect_delay 1 loss_timeout 120 | tail -n 1)
[[ $dev =~ ^rmbd[0-9]+$ ]] || fail "dev connect printed '$dev'"
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
log "connected /dev/$dev: $(rmbd_cli dev show "$dev")"
got=$(dev_jq "$dev" '"\(.layout) \(.size) \(.degraded) \([.legs[] | "\(.state)/\(.export)"] | join(","))"')
[[ $got == "mirror $(( 64 << 20 )) false up/m0,up/m1" ]] ||
	fail "a new mirror of m0 (64M) and m1 (96M): $got"
(( $(blockdev --getsize64 "/dev/$dev") == 64 << 20 )) ||
	fail "/dev/$dev has $(blockdev --getsize64 "/dev/$dev") bytes, not 64M"

# Both legs refused as a whole: the same export twice
rmbd_fails "one export twice" dev connect addr "$RMBD_ADDR" export m0 addr "$RMBD_ADDR" export m0
[[ $RMBD_ERR == *"leg 1 (addr $RMBD_ADDR export m0): two legs of a device on the same export" ]] ||
	fail "two legs on one export: '$RMBD_ERR'"

# Data that must survive on both copies: the first 16M.
head -c 16M /dev/urandom > "$out/base"
dd if="$out/base" of="/dev/$dev" bs=1M oflag=direct status=none ||
	fail "initial write failed"

"$RMBD_BIN" -j monitor dev > "$out/events" 2> "$out/monitor.err" &
mon=$!
sleep 1

# fio on the 32M above, pass after pass (fio_verify_start).
io_errors() { dmesg | grep -c "error, dev $dev," || true; }
errors0=$(io_errors)
fio_verify_start "$dev" 16M 32M "$out"
sleep 2

# The second link goes down for good: within 20 s its leg is down, and
# the device never leaves live.
ip link set d2 down
t0=$(usec)
while :; do
	read -r st leg1 < <(dev_jq "$dev" '"\(.state) \(.legs[1].state)"')
	[[ $st == live ]] || fail "the device went $st when one leg of two was lost"
	[[ $leg1 == down ]] && break
	(( $(usec) - t0 < 20000000 )) || fail "leg 1 still $leg1 20 s after its link went down"
	sleep 0.1
done
log "leg 1 down after $(( ($(usec) - t0) / 1000 )) ms; the device stays live"
for (( i = 0; i < 50; i++ )); do
	st=$(dev_field "$dev" state)
	[[ $st == live ]] || fail "the device went $st with one leg down"
	kill -0 "$fio_pid" 2> /dev/null || fail "fio exited with a leg down: $(cat "$out"/fio.*.out | tail -n 5)"
	sleep 0.1
done
[[ $(dev_field "$dev" degraded) == true ]] || fail "a mirror with a leg down is not shown degraded"
# Written while leg 1 is down: only leg 0 has it.
head -c 4M /dev/urandom > "$out/late"
dd if="$out/late" of="/dev/$dev" bs=1M seek=56 oflag=direct status=none ||
	fail "a write with a leg down failed"

# The link is back: the leg reconnects, stale, having missed writes.
# (The kernel log from here: an earlier test's resync is not this one.)
kmsg0=$(dmesg | wc -l)
ip link set d2 up
t0=$(usec)
while leg1=$(dev_jq "$dev" '.legs[1] | "\(.state) \(.reconnects) \(.dirty)"'); [[ $leg1 != stale* ]]; do
	(( $(usec) - t0 < 30000000 )) || fail "leg 1 is '$leg1' 30 s after its link came back"
	sleep 0.1
done
read -r _ reconnects dirty <<< "$leg1"
(( reconnects >= 1 && dirty >= 4 << 20 && dirty <= 36 << 20 )) ||
	fail "leg 1 back: $reconnects reconnects, $dirty bytes dirty (fio wrote 32M, dd 4M)"
log "leg 1 back after $(( ($(usec) - t0) / 1000 )) ms: stale, $(( dirty >> 20 )) MiB to resync"
# Reads (spread over the legs by position) never go to the stale leg.
cmp "$out/late" <(dd if="/dev/$dev" bs=64k skip=896 count=64 iflag=direct status=none) ||
	fail "4M written while leg 1 was down read back wrong with leg 1 stale"

# Now the first link goes: the stale leg holds no reads, so the device
# waits, and comes back live with the first leg.
blockdev --flushbufs "/dev/$dev"
link_down
t0=$(usec)
while [[ $(dev_field "$dev" state) == live ]]; do
	(( $(usec) - t0 < 20000000 )) || fail "the device stayed live with only a stale leg up"
	sleep 0.1
done
(cmp "$out/base" <(dd if="/dev/$dev" bs=1M count=16 iflag=direct status=none) &&
 echo same) > "$out/read" 2>&1 &
rd=$!
sleep 1
kill -0 "$rd" 2> /dev/null || fail "a read with only the stale leg up did not wait: $(cat "$out/read")"
link_up
wait_live_again "$dev" > /dev/null
wait_exit "$rd" 30 "a read still waits 30 s after the device was live again"
[[ $(cat "$out/read") == same ]] || fail "the read that waited: $(head -c 300 "$out/read")"
log "with the in-sync leg down the device waited, then read the right data"
[[ $(dev_jq "$dev" '.legs[1].state') == stale ]] ||
	fail "leg 1 is $(dev_jq "$dev" '.legs[1].state') before its resync could end"

# Unthrottled, the resync ends within 60 s while fio goes on writing.
echo 0 > "$resync_rate"
t0=$(usec)
while leg1=$(dev_jq "$dev" '.legs[1] | "\(.state) \(.dirty)"'); [[ $leg1 != "up 0" ]]; do
	(( $(usec) - t0 < 60000000 )) || fail "leg 1 is '$leg1' 60 s after its resync was let go"
	[[ $(dev_field "$dev" state) == live ]] || fail "the device went $(dev_field "$dev" state) during the resync"
	sleep 0.2
done
log "leg 1 in sync $(( ($(usec) - t0) / 1000 )) ms later: $(dmesg | grep -o 'leg 1 in sync again.*' | tail -n 1)"
copied=$(dmesg | tail -n +$(( kmsg0 + 1 )) | grep -o 'leg 1: resync of [0-9]* MiB starts' |
	head -n 1 | grep -o '[0-9]* MiB')
[[ -n $copied ]] && (( ${copied% MiB} <= 36 )) ||
	fail "the resync did not copy only what leg 1 missed (36 MiB at most): '$copied'"
sleep 2
fio_verify_stop "$out"
[[ $(dev_field "$dev" degraded) == false ]] || fail "in sync again, the mirror is still degraded"

check_events "$out/events" "$dev" degraded leg-back link-down live resync healthy

errors=$(( $(io_errors) - errors0 ))
(( errors == 0 )) || fail "the block layer logged $errors I/O errors of $dev: $(dmesg | grep -m 2 "error, dev $dev," | tr '\n' ' ')"

# Each copy alone holds the same 64M, the first 16M as written first.
dev_disconnect "$dev"
same_alone m0 m1
cmp "$out/base" <(head -c 16M "$out/m0.img") || fail "the first 16M changed"
log "m0 and m1, each alone, hold the same 64M"

# Initial sync: m4 is new (blank), and m1, written alone, now differs
# from m0.  A mirror of m4 and m0 copies m0 to m4: m4 is stale, with the
# whole device to copy, and takes no reads meanwhile.
head -c 2M /dev/urandom > "$out/apart"
one=$(dev_connect m1)
dd if="$out/apart" of="/dev/$one" bs=1M seek=20 oflag=direct status=none ||
	fail "cannot write export m1 alone"
dev_disconnect "$one"
target_setup m4 64M
echo 16 > "$resync_rate"
kmsg0=$(dmesg | wc -l)
dev=$(rmbd_ok dev connect addr "$addr2" export m4 addr "$RMBD_ADDR" export m0 \
	reconnect_delay 1 | tail -n 1)
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
got=$(dev_jq "$dev" '[.legs[] | "\(.export)/\(.state)/\(.dirty > 0)"] | join(" ")')
[[ $got == "m4/stale/true m0/up/false" ]] ||
	fail "a new mirror of blank m4 and m0: $got (m4 stale, to be copied from m0)"
dmesg | tail -n +$(( kmsg0 + 1 )) | grep -q "$dev: initial sync: stale until copied to: leg(s) 0$" ||
	fail "no initial sync of leg 0 in the kernel log"
cmp <(dd if="$out/m0.img" bs=1M skip=16 count=8 status=none) \
	<(dd if="/dev/$dev" bs=1M skip=16 count=8 iflag=direct status=none) ||
	fail "the mirror read what m0 does not hold while m4 was stale"
echo 0 > "$resync_rate"
t0=$(usec)
while got=$(dev_jq "$dev" '[.legs[] | "\(.state)/\(.dirty)"] | join(" ")'); [[ $got != "up/0 up/0" ]]; do
	(( $(usec) - t0 < 60000000 )) || fail "legs '$got' 60 s after the initial sync was let go"
	sleep 0.2
done
log "initial sync: m4 (blank) copied from m0 in $(( ($(usec) - t0) / 1000 )) ms once unthrottled"
dev_disconnect "$dev"
same_alone m0 m4
log "m0 and m4, each alone, hold the same 64M"

# Exports that both hold data are not copied between (which one holds
# the device's data cannot be told): m1 keeps what it was written alone.
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export m0 addr "$addr2" export m1 | tail -n 1)
got=$(dev_jq "$dev" '[.legs[] | "\(.state)/\(.dirty)"] | join(" ")')
[[ $got == "up/0 up/0" ]] || fail "a mirror of m0 and m1, both written: $got, not taken as they are"
dev_disconnect "$dev"
one=$(dev_connect m1)
cmp "$out/apart" <(dd if="/dev/$one" bs=1M skip=20 count=2 iflag=direct status=none) ||
	fail "a mirror of m0 and m1 copied over what m1 held"
dev_disconnect "$one"

# Blank exports alone: nothing to copy, every leg in sync at once.
target_setup b0 8M
target_setup b1 8M
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export b0 addr "$addr2" export b1 | tail -n 1)
got=$(dev_jq "$dev" '[.legs[] | "\(.state)/\(.dirty)"] | join(" ")')
[[ $got == "up/0 up/0" ]] || fail "a mirror of two blank exports: $got, not in sync at once"
dev_disconnect "$dev"
rmbd_ok export del b0 > /dev/null
rmbd_ok export del b1 > /dev/null
rmbd_ok export del m4 > /dev/null

# A leg whose export is deleted fails for good; the device stays live.
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export m0 addr "$addr2" export m1 \
	reconnect_delay 1 | tail -n 1)
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
rmbd_ok export del m1 force > /dev/null
t0=$(usec)
while leg1=$(dev_jq "$dev" '.legs[1].state'); [[ $leg1 != failed ]]; do
	(( $(usec) - t0 < 30000000 )) || fail "leg 1 is '$leg1' 30 s after its export was deleted"
	[[ $(dev_field "$dev" state) == live ]] || fail "the device went $(dev_field "$dev" state) when a leg's export was deleted"
	sleep 0.1
done
dd if=/dev/urandom of="/dev/$dev" bs=1M count=1 seek=48 oflag=direct status=none ||
	fail "a write with leg 1 failed"
cmp "$out/base" <(dd if="/dev/$dev" bs=1M count=16 iflag=direct status=none) ||
	fail "the first 16M differ after leg 1 failed"
log "leg 1 failed for good with its export; the device is live"

# The failed leg is replaced, while fio verifies: by export m2 (refused
# first: a smaller export, the other leg's export, and leg 0, whose
# only other copy is the failed one).  The whole device is copied to m2
# and the mirror is healthy again, with no I/O error.
target_setup m2 64M
target_setup small 32M
rm -f "$out"/stop "$out"/passes "$out"/fio.*
"$RMBD_BIN" -j monitor dev > "$out/events2" 2> "$out/monitor.err" &
mon=$!
sleep 1
errors0=$(io_errors)
fio_verify_start "$dev" 16M 32M "$out"
sleep 2
rmbd_fails "a smaller export" dev replace "$dev" leg 1 with addr "$addr2" export small
[[ $RMBD_ERR == *"the export is smaller than the device" ]] ||
	fail "replace by a smaller export: '$RMBD_ERR'"
rmbd_fails "the other leg's export" dev replace "$dev" leg 1 with addr "$RMBD_ADDR" export m0
[[ $RMBD_ERR == *"two legs of a device on the same export" ]] ||
	fail "replace by the other leg's export: '$RMBD_ERR'"
rmbd_fails "the leg in sync" dev replace "$dev" leg 0 with addr "$addr2" export m2
[[ $RMBD_ERR == *"no other leg is up and holds every write"* ]] ||
	fail "replace of the only leg in sync: '$RMBD_ERR'"
[[ $(rmbd_cli -j export show small | jq '.[0].sessions') == 0 ]] ||
	fail "a refused replace left a session on export small"
echo 16 > "$resync_rate"
kmsg0=$(dmesg | wc -l)
t0=$(usec)
rmbd_ok dev replace "$dev" leg 1 with addr "$addr2" export m2 > /dev/null
# Requests of at most 256 KiB from now on, less than the resync, under
# way, copies at once: its writes are split, and it must still know them
# as its own.
until dmesg | tail -n +$(( kmsg0 + 1 )) | grep -q "$dev: leg 1: resync of"; do
	(( $(usec) - t0 < 10000000 )) || fail "no resync of leg 1 10 s after its replace"
	sleep 0.1
done
echo 256 > "/sys/block/$dev/queue/max_sectors_kb" || fail "cannot set max_sectors_kb"
echo 0 > "$resync_rate"
log "leg 1 replaced by m2 in $(( ($(usec) - t0) / 1000 )) ms: $(dev_jq "$dev" '.legs[1] | "\(.state), \(.dirty) bytes to copy"')"
t0=$(usec)
while leg1=$(dev_jq "$dev" '.legs[1] | "\(.state) \(.export) \(.dirty)"'); [[ $leg1 != "up m2 0" ]]; do
	(( $(usec) - t0 < 60000000 )) || fail "leg 1 is '$leg1' 60 s after the replace"
	[[ $(dev_field "$dev" state) == live ]] || fail "the device went $(dev_field "$dev" state) during the rebuild"
	sleep 0.2
done
log "m2 in sync $(( ($(usec) - t0) / 1000 )) ms later, with max_sectors_kb 256: $(dmesg | grep -o 'leg 1 in sync again.*' | tail -n 1)"
sleep 2
fio_verify_stop "$out"
[[ $(dev_field "$dev" degraded) == false ]] || fail "rebuilt, the mirror is still degraded"
check_events "$out/events2" "$dev" replaced resync healthy
errors=$(( $(io_errors) - errors0 ))
(( errors == 0 )) || fail "the block layer logged $errors I/O errors of $dev during the replace"

# Then leg 1's link goes down for good: the leg reconnects in vain until
# it is replaced by export m3, reached over the first link.
target_setup m3 64M
ip link set d2 down
t0=$(usec)
while leg1=$(dev_jq "$dev" '.legs[1].state'); [[ $leg1 != down ]]; do
	(( $(usec) - t0 < 20000000 )) || fail "leg 1 is '$leg1' 20 s after its link went down"
	sleep 0.1
done
sleep 2
rmbd_ok dev replace "$dev" leg 1 with addr "$RMBD_ADDR" export m3 > /dev/null
t0=$(usec)
while leg1=$(dev_jq "$dev" '.legs[1] | "\(.state) \(.export) \(.dirty)"'); [[ $leg1 != "up m3 0" ]]; do
	(( $(usec) - t0 < 60000000 )) || fail "leg 1 is '$leg1' 60 s after its replace"
	sleep 0.2
done
log "leg 1, its link down, replaced by m3 over the first link: in sync $(( ($(usec) - t0) / 1000 )) ms later"
ip link set d2 up

# Leg 0 replaced too (by m2, which no leg uses now): the device keeps
# its by-id name, that of the leg it was connected with, while its legs'
# attributes follow the change.
id=$(cat "/sys/block/$dev/rmbd/id")
[[ $id == "$RMBD_ADDR-m0" ]] || fail "sysfs id of $dev is '$id', not $RMBD_ADDR-m0"
rmbd_ok dev replace "$dev" leg 0 with addr "$RMBD_ADDR" export m2 > /dev/null
t0=$(usec)
while leg0=$(dev_jq "$dev" '.legs[0] | "\(.state) \(.export) \(.dirty)"'); [[ $leg0 != "up m2 0" ]]; do
	(( $(usec) - t0 < 60000000 )) || fail "leg 0 is '$leg0' 60 s after its replace"
	sleep 0.2
done
[[ $(cat "/sys/block/$dev/rmbd/id") == "$id" ]] ||
	fail "the replace of leg 0 changed the by-id name: '$(cat "/sys/block/$dev/rmbd/id")', was '$id'"
[[ $(cat "/sys/block/$dev/rmbd/export") == "m2 m3" ]] ||
	fail "sysfs export of $dev is '$(cat "/sys/block/$dev/rmbd/export")' after the replace, not 'm2 m3'"
log "leg 0 replaced by m2: in sync $(( ($(usec) - t0) / 1000 )) ms later, by-id name still $id"
dev_disconnect "$dev"
same_alone m0 m2 m3
log "m0, m2 and m3, each alone, hold the same 64M after the rebuilds"
