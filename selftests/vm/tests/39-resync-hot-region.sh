#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The resync of a region that writes keep hitting (a journal): a mirror
# of one queue of depth 16, its second leg away while fio writes 1 MiB
# at depth 64; the leg comes back stale and its resync copies that region
# while fio goes on.  The writes the resync holds off wait on the requeue
# list with their tags: they must not leave the resync's own read and
# write without one (they take the tag set's reserved tag), or every
# write to the region, and the resync, wait for ever.  fio ends on time
# without an error, the leg is in sync, and each export alone then holds
# the same data.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
command -v fio > /dev/null || skip "fio not installed"

addr2=$RMBD_ADDR2
out=/run/rmbd-hot-region
rm -rf "$out"
mkdir -p "$out"
runtime=12

cleanup() {
	[[ -n ${fio_pid:-} ]] && kill "$fio_pid" 2> /dev/null
	ip link set d2 up 2> /dev/null || true
	dev_disconnect_all
	rmbd_reset > /dev/null 2>&1 || true
	second_link_del
}
trap cleanup EXIT

legs() { dev_jq "$1" '"\(.state) \(.legs[0].state) \(.legs[1].state)"'; }

target_setup h0 16M
target_setup h1 16M
second_link_add
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export h0 addr "$addr2" export h1 \
	layout mirror queues 1 depth 16 reconnect_delay 1 loss_timeout 60 | tail -n 1)
[[ $dev =~ ^rmbd[0-9]+$ ]] || fail "dev connect printed '$dev'"
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"

ip link set d2 down
t0=$(usec)
until [[ $(legs "$dev") == "live up down" ]]; do
	(( $(usec) - t0 < 30000000 )) || fail "leg 1 not down 30 s after its link: $(legs "$dev")"
	sleep 0.1
done

# Writes to the first region (1 MiB), from before the leg is back until
# after its resync.
fio --name=hot --filename="/dev/$dev" --rw=randwrite --bs=4k --size=1M \
	--ioengine=libaio --iodepth=64 --direct=1 --time_based \
	--runtime="$runtime" --output-format=json --output="$out/fio.json" \
	> "$out/fio.out" 2>&1 &
fio_pid=$!
sleep 2
kmsg=$(kmsg_mark)
ip link set d2 up
t0=$(usec)
while kill -0 "$fio_pid" 2> /dev/null; do
	(( $(usec) - t0 < (runtime + 60) * 1000000 )) ||
		fail "writes to the region the resync copies hung: $(legs "$dev"); $(kmsg_since "$kmsg" | grep rmbd | tail -n 3)"
	sleep 0.2
done
rc=0
wait "$fio_pid" || rc=$?
fio_pid=
(( rc == 0 )) || fail "fio failed ($rc): $(tail -n 5 "$out/fio.out")"
ios=$(jq '.jobs[0].write.total_ios' "$out/fio.json")
errs=$(jq '.jobs[0].error' "$out/fio.json")
(( errs == 0 && ios > 0 )) || fail "fio: $ios writes, error $errs"
kmsg_since "$kmsg" | grep -q "rmbd[0-9]*: leg 1: resync of" ||
	fail "leg 1 came back without a resync: $(kmsg_since "$kmsg" | grep rmbd | tail -n 5)"
t0=$(usec)
until [[ $(legs "$dev") == "live up up" ]]; do
	(( $(usec) - t0 < 60000000 )) || fail "leg 1 not in sync 60 s after fio: $(legs "$dev")"
	sleep 0.1
done
log "fio: $ios writes at depth 64 while leg 1 came back; its resync ended"
dev_disconnect "$dev"

# Each export alone holds what the mirror held.
for m in h0 h1; do
	one=$(dev_connect "$m")
	dd if="/dev/$one" of="$out/$m.img" bs=1M count=2 iflag=direct status=none ||
		fail "cannot read export $m alone"
	dev_disconnect "$one"
done
cmp "$out/h0.img" "$out/h1.img" || fail "the legs differ after the resync"
log "ok"
