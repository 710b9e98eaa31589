#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Counters (rmbd -s):
# - a device of two queues counts what it ended: 4 MiB written, 2 MiB
#   read and 1 MiB discarded show in writes, reads, discards and their
#   bytes, nothing in errors, timeouts or in_flight; each queue's counters
#   add up to the totals; a list (dump) has the totals, no queues; no
#   counters without -s;
# - the target's session of that export has its 4 slabs of 32 MiB mapped;
# - the link goes down under reads: the device counts a reconnect and the
#   requests that waited (requeues), no error; a device without a loss
#   timeout counts the reads that failed as errors.
# timeout=240

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
command -v blkdiscard > /dev/null || fail "blkdiscard not installed"

reader_pid=
cleanup() {
	link_up 2> /dev/null || true
	[[ -n $reader_pid ]] && kill "$reader_pid" 2> /dev/null
	rmbd_reset > /dev/null 2>&1 || true
	rm -f /tmp/rmbd-counters-data
	return 0
}
trap cleanup EXIT

MiB=1048576
target_setup cnt0 128M slab 32M
target_setup cnt1 16M
d=$(dev_connect cnt0 queues 2)
st() { rmbd_cli -s -j dev show "$d" | jq -r ".[0].stats.$1"; }	# FIELD

for f in reads read_bytes writes write_bytes discards discard_bytes; do
	declare "b_$f=$(st "$f")"
done
head -c 4M /dev/urandom > /tmp/rmbd-counters-data
dd if=/tmp/rmbd-counters-data of="/dev/$d" bs=1M oflag=direct status=none || fail "write failed"
dd if="/dev/$d" of=/dev/null bs=1M count=2 iflag=direct status=none || fail "read failed"

(( $(st write_bytes) - b_write_bytes == 4 * MiB )) ||
	fail "write_bytes grew by $(( $(st write_bytes) - b_write_bytes )), not 4 MiB"
(( $(st writes) - b_writes >= 4 )) || fail "writes grew by $(( $(st writes) - b_writes )) for 4 MiB in 1 MiB writes"
(( $(st read_bytes) - b_read_bytes == 2 * MiB )) ||
	fail "read_bytes grew by $(( $(st read_bytes) - b_read_bytes )), not 2 MiB"
(( $(st reads) - b_reads >= 2 )) || fail "reads grew by $(( $(st reads) - b_reads ))"
# blkdiscard reads the device first, for signatures it would destroy.
blkdiscard -f -o 0 -l 1M "/dev/$d" || fail "blkdiscard failed"
(( $(st discard_bytes) - b_discard_bytes == MiB )) ||
	fail "discard_bytes grew by $(( $(st discard_bytes) - b_discard_bytes )), not 1 MiB"
(( $(st discards) - b_discards >= 1 )) || fail "discards did not grow"
for f in errors timeouts in_flight requeues reconnects; do
	(( $(st "$f") == 0 )) || fail "$f is $(st "$f") on a quiet device"
done
rmbd_cli -s -j dev show "$d" > /run/rmbd-counters.json
jq -e '.[0].stats as $s | ($s.queues | length) == 2 and
	all(["reads", "read_bytes", "writes", "write_bytes", "discards",
	     "discard_bytes", "errors", "requeues", "timeouts"][];
	    . as $k | ([$s.queues[][$k]] | add) == $s[$k])' \
	/run/rmbd-counters.json > /dev/null ||
	fail "the queues' counters do not add up to the device's: $(cat /run/rmbd-counters.json)"
rmbd_cli -s -j dev show | jq -e --arg d "$d" \
	'.[] | select(.name == $d) | .stats | has("reads") and (has("queues") | not)' > /dev/null ||
	fail "-s dev show: no totals, or queues, in the list: $(rmbd_cli -s -j dev show)"
! rmbd_cli -j dev show | jq -e '.[] | select(has("stats"))' > /dev/null ||
	fail "counters without -s"
rmbd_cli -s dev show "$d" | grep -q "^    stats reads [0-9]* read_bytes" ||
	fail "-s dev show in text: $(rmbd_cli -s dev show "$d")"
log "$d: $(rmbd_cli -s dev show "$d" | sed -n 2p | sed 's/^ *//')"

# The target: the session of cnt0 has its 4 slabs registered.
sess=$(rmbd_cli -j -d export show cnt0 | jq -c '.[0].session_list[0]')
[[ $(jq -r '[.mapped, .mapped_bytes] | @tsv' <<< "$sess") == $'4\t134217728' ]] ||
	fail "the target's session of cnt0: $sess, not 4 slabs, 128 MiB mapped"
rmbd_cli -s -d export show cnt0 | grep -q " mapped 4 mapped_bytes 134217728$" ||
	fail "-s -d export show: $(rmbd_cli -s -d export show cnt0)"
log "target: the session of cnt0 maps 4 slabs, 128 MiB"

# ---- a link loss under reads ----------------------------------------------

d2=$(dev_connect cnt1 loss_timeout 0)
(
	while :; do
		dd if="/dev/$d" of=/dev/null bs=64k count=512 iflag=direct status=none
	done
) &
reader_pid=$!
sleep 0.5
link_down
t0=$(usec)
until [[ $(dev_field "$d" state) == reconnecting && $(dev_field "$d2" state) == failed ]]; do
	(( $(usec) - t0 < 20000000 )) ||
		fail "link down 20 s: $d $(dev_field "$d" state), $d2 $(dev_field "$d2" state)"
	sleep 0.1
done
sleep 1
dd if="/dev/$d2" of=/dev/null bs=4k count=4 iflag=direct status=none 2> /dev/null &&
	fail "a read of the failed $d2 succeeded"
link_up
wait_live_again "$d" > /dev/null
sleep 1
kill "$reader_pid"
wait "$reader_pid" 2> /dev/null || true
reader_pid=
(( $(st reconnects) >= 1 )) || fail "$d reconnected, its counters say $(st reconnects) reconnects"
(( $(st requeues) > 0 )) || fail "$d: reads waited for the session, requeues $(st requeues)"
(( $(st errors) == 0 )) || fail "$d: $(st errors) errors across a reconnect"
(( $(st in_flight) == 0 )) || fail "$d: $(st in_flight) in flight with nothing reading"
errs=$(rmbd_cli -s -j dev show "$d2" | jq -r '.[0].stats.errors')
(( errs > 0 )) || fail "$d2 failed reads, its errors are $errs"
log "link loss: $d requeues $(st requeues), reconnects $(st reconnects), errors 0; $d2 (no loss timeout) errors $errs"
