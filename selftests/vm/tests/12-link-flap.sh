#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The link under a device goes down for 2 s (longer until the device
# noticed) and up again, 5 times (2 on the debug kernel and over siw),
# while fio writes and verifies: the device notices each loss and
# reconnects every time, fio sees no error and no verify mismatch, data
# written before the flaps is intact, a buffered read during each flap
# returns it (its readahead failing quietly: no I/O error in the log),
# and rmbd monitor reports link-down, reconnecting and live.
# timeout=900

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
command -v fio > /dev/null || skip "fio not installed"

flaps=${RMBD_FLAPS:-$(rounds 5 2)}
# Over soft-iWARP (12-link-flap@siw) fewer: the same client code, its own CM
[[ $RMBD_TRANSPORT == siw ]] && flaps=${RMBD_FLAPS:-2}
fio_size=$(rounds 96M 24M)
out=/run/rmbd-flap
# Fresh: 12-link-flap@siw runs in the same VM after 12-link-flap.
rm -rf "$out"
mkdir -p "$out"

cleanup() {
	link_up 2> /dev/null || true
	[[ -n ${mon:-} ]] && kill "$mon" 2> /dev/null
	[[ -n ${fio_pid:-} ]] && kill "$fio_pid" 2> /dev/null
	true
}
trap cleanup EXIT

target_setup flap 128M
dev=$(dev_connect flap reconnect_delay 1 loss_timeout 120)
log "connected /dev/$dev: $(rmbd_cli dev show "$dev")"
legs=$(rmbd_cli -j dev show "$dev" | jq -c '.[0].legs')
[[ $(jq -r 'length' <<< "$legs") == 1 &&
   $(jq -r '.[0] | "\(.index) \(.state) \(.export) \(.size) \(.nr_slabs * .slab_size)"' <<< "$legs") == "0 up flap $(( 128 << 20 )) $(( 128 << 20 ))" ]] ||
	fail "the device's one leg is not shown as it is: $legs"
log "its leg: $(rmbd_cli -d dev show "$dev" | sed -n 2p)"

# Data that must survive: the first 32M, written and checksummed once.
head -c 32M /dev/urandom > "$out/base"
dd if="$out/base" of="/dev/$dev" bs=1M oflag=direct status=none ||
	fail "initial write failed"

"$RMBD_BIN" -j monitor dev > "$out/events" 2> "$out/monitor.err" &
mon=$!
sleep 1

# fio on 96M above those (24M on the slower debug kernel), pass after
# pass until the flapping is over (fio_verify_start).
fio_verify_start "$dev" 32M "$fio_size" "$out"
sleep 3

# Each flap: the link stays down 2 s, longer if need be until the device
# noticed (up to 20 s; 35 over siw, where the keepalive notices: see
# link_flap()), then comes up, and the device must reconnect: be live
# again with its reconnect count up.  The state is polled by elapsed time
# (a command takes long on the debug kernel).
limit=20
[[ $RMBD_TRANSPORT == siw ]] && limit=35
before=$(dev_field "$dev" reconnects)
io_errors() { dmesg | grep -c "error, dev $dev," || true; }
errors0=$(io_errors)
for (( i = 1; i <= flaps; i++ )); do
	# Not from the page cache: the buffered read below must reach the
	# device, by readahead, while it is reconnecting.
	blockdev --flushbufs "/dev/$dev"
	link_down
	t0=$(usec)
	noticed=0 leg_down=0
	while :; do
		# The device's state and its leg's, in one snapshot
		read -r st leg_st < <(dev_jq "$dev" '"\(.state) \(.legs[0].state)"')
		[[ $st != live ]] && noticed=1
		[[ $leg_st == down ]] && leg_down=1
		el=$(( $(usec) - t0 ))
		(( (noticed && el >= 2000000) || el >= limit * 1000000 )) && break
		sleep 0.1
	done
	# Readahead is fail-fast in blk-mq: it ends at once, without a log
	# line (reads completed, field 1 of stat, goes up while every other
	# request waits); the page is then read again, and that read waits
	# for the reconnect.
	reads0=$(awk '{print $1}' "/sys/block/$dev/stat")
	(cmp "$out/base" <(dd if="/dev/$dev" bs=1M count=32 status=none) &&
	 echo same) > "$out/ra.$i" 2>&1 &
	ra_pid=$!
	sleep 1
	reads=$(( $(awk '{print $1}' "/sys/block/$dev/stat") - reads0 ))
	link_up
	(( reads > 0 )) ||
		fail "flap $i: a readahead while the device was $(dev_field "$dev" state) waited instead of failing at once"
	(( noticed )) || fail "flap $i: the device stayed live with its link down for $limit s"
	(( leg_down )) || fail "flap $i: the device was $st, but its leg never showed down"
	t0=$(usec)
	while :; do
		state=$(dev_field "$dev" state)
		[[ $state == live ]] && break
		(( $(usec) - t0 < 60000000 )) || fail "flap $i: device $state 60 s after the link came back"
		sleep 0.1
	done
	now=$(dev_field "$dev" reconnects)
	(( now > before )) || fail "flap $i: live again, but its reconnect count stayed at $now"
	leg=$(dev_jq "$dev" '.legs[0] | "\(.state) \(.reconnects)"')
	[[ $leg == "up $now" ]] ||
		fail "flap $i: device live with $now reconnects, but its leg says: $leg"
	before=$now
	wait_exit "$ra_pid" 30 "flap $i: a buffered read during the flap still runs 30 s after the reconnect"
	wait "$ra_pid" || true
	[[ $(cat "$out/ra.$i") == same ]] ||
		fail "flap $i: a buffered read of the first 32M during the flap: $(head -c 300 "$out/ra.$i")"
	kill -0 "$fio_pid" 2> /dev/null || fail "flap $i: fio exited: $(cat "$out"/fio.*.out | tail -n 5)"
	sleep 1
done
reconnects=$(dev_field "$dev" reconnects)
log "$flaps flaps, device reconnected $reconnects times"
log "buffered reads of the first 32M during each flap: the same data"
errors=$(( $(io_errors) - errors0 ))
(( errors == 0 )) ||
	fail "the block layer logged $errors I/O errors of $dev during the flaps (a failed readahead must be quiet): $(dmesg | grep -m 2 "error, dev $dev," | tr '\n' ' ')"

fio_verify_stop "$out"
(( reconnects >= flaps )) || fail "$flaps flaps, but only $reconnects reconnects"

cmp "$out/base" <(dd if="/dev/$dev" bs=1M count=32 iflag=direct status=none) ||
	fail "data written before the flaps changed"
log "the 32M written before the flaps are intact"

sleep 1
kill "$mon"
wait "$mon" 2> /dev/null || true
mon=
for ev in link-down reconnecting live; do
	n=$(jq -r 'select(.name == "'"$dev"'") | .event' "$out/events" | grep -cx "$ev" || true)
	log "monitor: $n $ev events"
	(( n >= 1 )) || fail "rmbd monitor saw no $ev event: $(head -c 600 "$out/events")"
done
dev_disconnect "$dev"
rmbd_ok export del flap
