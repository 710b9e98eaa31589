#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Queues: a device has one hardware queue per I/O and per poll queue
# (/sys/block/rmbdN/mq) and one RC queue pair for each, besides its
# admin queue's (rdma res show cm_id); with poll queues the block layer
# polls (queue/io_poll, a hardware context of type poll), and io_uring
# with hipri I/O on it writes and verifies every block.  The poll queue
# (the third I/O queue) takes a completion vector the device has: the
# debug kernel's rxe refuses others, as mlx5 does.  A queue depth of 1024
# falls back to one the RDMA device's send queue can hold, where it
# cannot (the debug kernel's rxe has a mlx5-like budget), and says so.
# Slabs that the target's RDMA device cannot register in one region are
# refused when the export is opened, with the reason.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
command -v fio > /dev/null || fail "fio not installed"

out=/run/rmbd-queues
mkdir -p "$out"
dbg=/sys/kernel/debug/block

# Connected queue pairs of a module: its rdma_cm ids that have one, in
# the RDMA resource tracker (the queue pairs themselves are rdma_cm's).
qps() {	# MODULE
	rdma -j res show cm_id |
		jq --arg c "$1" '[.[] | select((.comm == $c or .comm == "[\($c)]") and
			.lqpn != null)] | length'
}

target_setup queues 64M
qp_client0=$(qps rmbd_client)
qp_target0=$(qps rmbd_target)
dev=$(dev_connect queues queues 2 pollq 1 depth 32)
log "connected: $(rmbd_cli -d dev show "$dev")"

hw=$(find "/sys/block/$dev/mq" -mindepth 1 -maxdepth 1 -type d | wc -l)
(( hw == 3 )) || fail "queues 2 pollq 1: $hw hardware queues in /sys/block/$dev/mq, expected 3"
c=$(( $(qps rmbd_client) - qp_client0 ))
t=$(( $(qps rmbd_target) - qp_target0 ))
log "hardware queues: $hw; queue pairs: client $c, target $t"
(( c == 4 )) || fail "client queue pairs: $c, expected 4 (admin, 2 I/O, 1 poll): $(rdma -j res show cm_id)"
(( t == 4 )) || fail "target queue pairs: $t, expected 4 (admin, 2 I/O, 1 poll): $(rdma res show cm_id)"
[[ $(cat "/sys/block/$dev/queue/io_poll") == 1 ]] ||
	fail "queue/io_poll is $(cat "/sys/block/$dev/queue/io_poll") with a poll queue"

# The poll queue's hardware context: one of type "poll" (in blk-mq's
# debugfs, which the debug kernel does not build).
if compgen -G "$dbg/$dev/hctx*/type" > /dev/null; then
	types=$(cat "$dbg/$dev"/hctx*/type | sort | uniq -c | tr -s ' \n' ' ')
	[[ $(grep -lx poll "$dbg/$dev"/hctx*/type | wc -l) == 1 ]] ||
		fail "expected one hardware context of type poll in $dbg/$dev: $types"
	log "hardware context types:$types"
elif [[ $(uname -r) != *-rmbd-debug ]]; then
	fail "no $dbg/$dev/hctx*/type"
fi

# 32 MiB of 4 KiB blocks; 8 on the debug kernel, where each costs more.
mib=32
[[ $(uname -r) == *-rmbd-debug ]] && mib=8
fio --name=hipri --filename="/dev/$dev" --size=${mib}M --rw=randwrite --bs=4k \
	--ioengine=io_uring --hipri=1 --iodepth=8 --direct=1 \
	--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
	--output-format=json --output="$out/fio.json" > "$out/fio.out" 2>&1 ||
	fail "fio io_uring hipri: $(tail -n 5 "$out/fio.out") $(head -c 500 "$out/fio.json")"
e=$(jq '.jobs[0].error' "$out/fio.json")
(( e == 0 )) || fail "fio io_uring hipri reported error $e"
w=$(jq '.jobs[0].write.io_kbytes' "$out/fio.json")
r=$(jq '.jobs[0].read.io_kbytes' "$out/fio.json")
(( w >= mib * 1024 && r >= mib * 1024 )) ||
	fail "fio wrote $w KiB and verified $r KiB, expected $(( mib * 1024 )) each"
log "io_uring hipri: $w KiB written and $r KiB verified"

dev_disconnect "$dev"
(( $(qps rmbd_client) == qp_client0 )) || fail "client queue pairs left after disconnect: $(rdma res show cm_id)"

# A send queue has room for every request at its smallest and a quarter
# of them at their largest (rmbd_c_wr_budget()): at depth 16 on rxe,
# 16 + 4 x 7 work requests, where a 1 MiB request of 256 pages takes 8
# of 32 SGEs.  (The debug kernel's READs take 8 SGEs: a device there
# takes requests of 128 segments, and 16 work requests a READ of them,
# so its read-back waits.)  16 writers of such requests (scatterio:
# scattered pages, which fio's buffers are not) exceed it: requests wait
# for room (requeues), none fails, times out or breaks the session (an
# overflowing send queue would: its requests would be requeued too,
# after a reconnect), and every block reads back.
scatterio=$RMBD_REPO/selftests/vm/scatterio
[[ -x $scatterio ]] || fail "selftests/vm/scatterio not built"
dev=$(dev_connect queues queues 1 depth 16)
k=$(kmsg_mark)
"$scatterio" "/dev/$dev" 16 48 > "$out/scatter.out" 2>&1 ||
	fail "scatterio at depth 16: $(tail -n 5 "$out/scatter.out")"
st=$(rmbd_cli -s -j dev show "$dev" | jq -c '.[0].stats')
(( $(jq '.errors + .timeouts + .reconnects' <<< "$st") == 0 )) &&
	! kmsg_since "$k" | grep -q "$dev: posting work requests failed" ||
	fail "1 MiB of 256 pages at depth 16: errors, timeouts or a reconnect: $st"
(( $(jq .requeues <<< "$st") > 0 )) ||
	fail "1 MiB of 256 pages, 16 at a time, at depth 16: no request waited for the send queue: $st"
log "1 MiB of 256 pages by 16 writers at depth 16: $(cat "$out/scatter.out"), $(jq .requeues <<< "$st") requeues"
dev_disconnect "$dev"

# 1024 requests at their smallest and 256 at their largest: on rxe 2817
# work requests of 32 SGEs, which Debian's rxe holds; the debug kernel's
# rxe refuses send queues a NIC could not hold
# (selftests/debug-kernel/patches/0006) and its READs take 8 SGEs
# (patches/0010), so 16 work requests a READ of 128 segments: 4865 do
# not fit, and the depth halves until they do.
k=$(kmsg_mark)
dev=$(dev_connect queues queues 1 depth 1024)
d=$(dev_field "$dev" depth)
if [[ $(uname -r) == *-rmbd-debug ]]; then
	(( d >= 16 && d < 1024 )) || fail "depth 1024 on the stricter rxe: the device has depth $d"
	kmsg_since "$k" | grep -q "$dev: queue depth $d, not 1024:" ||
		fail "no word in the kernel log of the depth $d, not 1024"
else
	(( d == 1024 )) || fail "depth 1024 on rxe: the device has depth $d"
fi
fio --name=deep --filename="/dev/$dev" --size=16M --rw=randwrite --bs=64k \
	--ioengine=libaio --iodepth=64 --direct=1 --verify=crc32c \
	--do_verify=1 --verify_fatal=1 --verify_state_save=0 \
	> "$out/deep.out" 2>&1 || fail "fio at depth $d: $(tail -n 5 "$out/deep.out")"
log "depth 1024 asked, $d given; 16 MiB written and verified at iodepth 64"
dev_disconnect "$dev"
rmbd_ok export del queues

# A slab the target's RDMA device cannot register in one region: 128 MiB
# are 32768 pages of 4 KiB, past the 16384 entries of the debug kernel's
# rxe (patches/0009, 4 KiB pages only); Debian's rxe takes 64 of 2 MiB.
# The OPEN is refused with the reason, before any slab is mapped.
target_setup bigslab 128M slab 128M
if debug_kernel && [[ $RMBD_TRANSPORT == rxe ]]; then
	rmbd_fails "a slab the RDMA device cannot register" \
		dev connect addr "$RMBD_ADDR" export bigslab
	[[ $RMBD_ERR == *"cannot register this export's slabs"* ]] ||
		fail "a slab too large to register: '$RMBD_ERR'"
	dmesg | grep -q "cannot register the slabs of export bigslab" ||
		fail "no word from the target of the slabs it cannot register"
	for (( i = 0; i < 50; i++ )); do
		(( $(export_field bigslab sessions) == 0 )) && break
		sleep 0.1
	done
	(( $(export_field bigslab sessions) == 0 )) ||
		fail "the refused session stays: $(export_field bigslab sessions)"
	log "128 MiB slabs in 4 KiB pages: refused at OPEN, with the reason"
else
	dev=$(dev_connect bigslab)
	dd if="/dev/$dev" of=/dev/null bs=1M skip=127 count=1 iflag=direct status=none ||
		fail "reading the last MiB of a 128 MiB slab failed"
	log "128 MiB slabs: connected, the last MiB read"
	dev_disconnect "$dev"
fi
rmbd_ok export del bigslab
