#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The link stays down longer than the loss timeout while I/O runs: the I/O
# is held no less than the loss timeout, then fails with EIO within a few
# seconds more (no hang), the device says failed, and after the link is
# back a new connect finds every acknowledged write, including those of
# the writer that ran into the outage.  With loss_timeout 0 the device
# fails at once.
# timeout=600

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

loss=8
slack=12	# detecting the dead link (ACK timeout, retries) and reporting
out=/run/rmbd-loss
mkdir -p "$out"
trap 'ip link set "$RMBD_NETDEV" up 2> /dev/null || true' EXIT

target_setup loss 64M
dev=$(dev_connect loss reconnect_delay 1 loss_timeout "$loss")
head -c 16M /dev/urandom > "$out/data"
dd if="$out/data" of="/dev/$dev" bs=1M oflag=direct status=none || fail "write failed"
log "/dev/$dev: 16M written; $(rmbd_cli dev show "$dev")"

# A writer that keeps I/O in flight: the upper 32M, over and over, from
# two random patterns in turn (pass 1 A, pass 2 B, pass 3 A ...), so that
# the device's contents tell which writes landed.  It must end with an
# error, not hang; dd's last "records out" says how far its last pass got.
head -c 32M /dev/urandom > "$out/patA"
head -c 32M /dev/urandom > "$out/patB"
pattern() { if (( $1 % 2 )); then echo "$out/patA"; else echo "$out/patB"; fi; }
(
	pass=0
	while :; do
		pass=$(( pass + 1 ))
		# Whole or not at all for the reader below.
		echo "$pass" > "$out/pass.new" && mv "$out/pass.new" "$out/pass"
		dd if="$(pattern "$pass")" of="/dev/$dev" bs=64k seek=512 \
			oflag=direct 2> "$out/dd.err" || exit 1
	done
) &
writer=$!
# Into its third pass before the outage: the blocks after the one that
# fails then hold the other pattern, not the export's first zeros.
for (( i = 0; i < 600; i++ )); do
	kill -0 "$writer" 2> /dev/null ||
		fail "the writer ended before the link went down: $(cat "$out/dd.err")"
	p=$(cat "$out/pass" 2> /dev/null || true)
	[[ $p =~ ^[0-9]+$ ]] && (( p >= 3 )) && break
	sleep 0.1
done
(( i < 600 )) || fail "the writer did not reach its third pass in 60 s"
sleep 0.5

t0=$(usec)
ip link set "$RMBD_NETDEV" down
log "link down"
rc=0
wait_exit "$writer" $(( loss + slack + 20 )) \
	"I/O still blocked $(( loss + slack + 20 )) s after the link went down (loss_timeout $loss)"
wait "$writer" || rc=$?
dt_ms=$(( ($(usec) - t0) / 1000 ))
dt=$(( dt_ms / 1000 ))
log "writer ended after $dt_ms ms with exit $rc: $(head -n 1 "$out/dd.err")"
(( rc != 0 )) || fail "the writer succeeded with the link down"
grep -qi "input/output error" "$out/dd.err" || fail "the writer did not fail with EIO: $(cat "$out/dd.err")"
# The I/O is held the whole loss timeout, which starts once the client
# notices the loss: no sooner than loss_timeout after the link went down.
(( dt_ms >= loss * 1000 )) || fail "I/O failed after $dt_ms ms, before loss_timeout $loss s"
(( dt <= loss + slack )) || fail "I/O failed after $dt s, more than loss_timeout $loss + $slack s"
state=$(dev_field "$dev" state)
[[ $state == failed ]] || fail "device state '$state' after the loss timeout, expected failed"
rc=0
timeout -k 5 20 dd if="/dev/$dev" of=/dev/null bs=4k count=1 iflag=direct status=none 2> /dev/null || rc=$?
(( rc != 124 && rc != 137 )) || fail "a read on the failed device hung"
(( rc != 0 )) || fail "a read on the failed device succeeded"

ip link set "$RMBD_NETDEV" up
wait_live_link
sleep 2
[[ $(dev_field "$dev" state) == failed ]] || fail "a failed device came back by itself"
dev_disconnect "$dev"

# The target kept the data: a new connect reads back every acknowledged
# write.  The writer's last pass P wrote blocks 0 .. DONE-1 of its
# pattern (dd's "records out"); block DONE failed, landed or not; the
# blocks after it still hold pass P-1's pattern (zeros before pass 1: an
# export starts zeroed).
dev=$(dev_connect loss loss_timeout 0)
cmp "$out/data" <(dd if="/dev/$dev" bs=1M count=16 iflag=direct status=none) ||
	fail "acknowledged writes lost: the 16M written before the outage differ"
pass=$(< "$out/pass")
[[ $pass =~ ^[0-9]+$ ]] || fail "the writer's pass file says '$pass'"
done_blocks=$(sed -n 's/^\([0-9]*\)+[0-9]* records out$/\1/p' "$out/dd.err")
[[ -n $done_blocks ]] || fail "no 'records out' from the writer's dd: $(cat "$out/dd.err")"
dd if="/dev/$dev" of="$out/back" bs=64k skip=512 count=512 iflag=direct status=none ||
	fail "reading back the writer's 32M failed"
bk=65536
cmp -n $(( done_blocks * bk )) "$out/back" "$(pattern "$pass")" ||
	fail "acknowledged writes lost: pass $pass's first $done_blocks blocks differ"
if (( pass > 1 )); then
	prev=$(pattern $(( pass - 1 )))
else
	prev=/dev/zero
fi
rest=$(( (511 - done_blocks) * bk ))
if (( rest > 0 )); then
	cmp -n "$rest" -i $(( (done_blocks + 1) * bk )):$(( (done_blocks + 1) * bk )) \
		"$out/back" "$prev" ||
		fail "blocks after the failed write of pass $pass are not pass $(( pass - 1 ))'s"
fi
log "reconnected as /dev/$dev: the 16M written before the loss intact; the writer's pass $pass had $done_blocks blocks acknowledged, all there, the rest as before"

# loss_timeout 0: the first failure fails the device, no reconnect.
ip link set "$RMBD_NETDEV" down
t0=$(date +%s)
rc=0
timeout -k 5 $(( slack + 20 )) dd if=/dev/zero of="/dev/$dev" bs=4k count=1 \
	oflag=direct status=none 2> "$out/dd0.err" || rc=$?
dt=$(( $(date +%s) - t0 ))
ip link set "$RMBD_NETDEV" up
(( rc != 124 && rc != 137 )) || fail "loss_timeout 0: I/O hung"
(( rc != 0 )) || fail "loss_timeout 0: a write succeeded with the link down"
state=$(dev_field "$dev" state)
log "loss_timeout 0: write failed after $dt s; state $state"
(( dt <= slack )) || fail "loss_timeout 0: I/O failed after $dt s"
[[ $state == failed ]] || fail "loss_timeout 0: device state '$state' after the failed write, expected failed"
[[ $(dev_field "$dev" reconnects) == 0 ]] || fail "loss_timeout 0 reconnected"
wait_live_link
dev_disconnect "$dev"
rmbd_ok export del loss
