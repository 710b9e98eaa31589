#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The link stays down longer than the loss timeout while I/O runs: the I/O
# fails with EIO within the loss timeout plus a few seconds (no hang), the
# device says failed, and after the link is back a new connect finds every
# acknowledged write.  With loss_timeout 0 the device fails at once.
# timeout=600

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

loss=8
slack=12	# detecting the dead link (ACK timeout, retries) and reporting
out=/run/rmbd-loss
mkdir -p "$out"
trap 'ip link set d0 up 2> /dev/null || true' EXIT

wait_live_link() {
	local i
	for (( i = 0; i < 100; i++ )); do
		rdma link show rxe0/1 2> /dev/null | grep -q 'state ACTIVE' && return 0
		sleep 0.1
	done
	fail "rxe0 not active again"
}

target_setup loss 64M
dev=$(dev_connect loss reconnect_delay 1 loss_timeout "$loss")
head -c 16M /dev/urandom > "$out/data"
dd if="$out/data" of="/dev/$dev" bs=1M oflag=direct status=none || fail "write failed"
log "/dev/$dev: 16M written; $(rmbd_cli dev show "$dev")"

# A writer that keeps I/O in flight (the upper 32M, over and over); it
# must end with an error, not hang.
(
	while dd if=/dev/zero of="/dev/$dev" bs=64k seek=512 count=512 \
		oflag=direct status=none; do
		:
	done
	exit 1
) 2> "$out/dd.err" &
writer=$!
sleep 2
kill -0 "$writer" 2> /dev/null || fail "the writer ended before the link went down"

t0=$(date +%s)
ip link set d0 down
log "link down"
rc=0
wait_exit "$writer" $(( loss + slack + 20 )) \
	"I/O still blocked $(( loss + slack + 20 )) s after the link went down (loss_timeout $loss)"
wait "$writer" || rc=$?
dt=$(( $(date +%s) - t0 ))
log "writer ended after $dt s with exit $rc: $(head -n 1 "$out/dd.err")"
(( rc != 0 )) || fail "the writer succeeded with the link down"
grep -qi "input/output error" "$out/dd.err" || fail "the writer did not fail with EIO: $(cat "$out/dd.err")"
(( dt <= loss + slack )) || fail "I/O failed after $dt s, more than loss_timeout $loss + $slack s"
state=$(dev_field "$dev" state)
[[ $state == failed ]] || fail "device state '$state' after the loss timeout, expected failed"
dd if="/dev/$dev" of=/dev/null bs=4k count=1 iflag=direct status=none 2> /dev/null &&
	fail "a read on the failed device succeeded"

ip link set d0 up
wait_live_link
sleep 2
[[ $(dev_field "$dev" state) == failed ]] || fail "a failed device came back by itself"
dev_disconnect "$dev"

# The target kept the data: a new connect reads back what was acknowledged.
dev=$(dev_connect loss loss_timeout 0)
cmp "$out/data" <(dd if="/dev/$dev" bs=1M count=16 iflag=direct status=none) ||
	fail "acknowledged writes lost"
log "reconnected as /dev/$dev: the 16M written before the loss are intact"

# loss_timeout 0: the first failure fails the device, no reconnect.
ip link set d0 down
t0=$(date +%s)
rc=0
timeout -k 5 $(( slack + 20 )) dd if=/dev/zero of="/dev/$dev" bs=4k count=1 \
	oflag=direct status=none 2> "$out/dd0.err" || rc=$?
dt=$(( $(date +%s) - t0 ))
ip link set d0 up
(( rc != 124 && rc != 137 )) || fail "loss_timeout 0: I/O hung"
(( rc != 0 )) || fail "loss_timeout 0: a write succeeded with the link down"
log "loss_timeout 0: write failed after $dt s; state $(dev_field "$dev" state)"
(( dt <= slack )) || fail "loss_timeout 0: I/O failed after $dt s"
[[ $(dev_field "$dev" reconnects) == 0 ]] || fail "loss_timeout 0 reconnected"
wait_live_link
dev_disconnect "$dev"
rmbd_ok export del loss
