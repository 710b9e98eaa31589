#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Spares named at connect.  A mirror of s0 (over d0) and s1 (over a
# second link, d2) with spare s2: export s1 deleted under fio verify,
# its leg fails for good and s2 takes its place by itself, rebuilt while
# fio goes on, with no I/O error.  Another mirror, with loss_timeout 10:
# its second link down for good, the spare takes the lost leg's place
# once the loss timeout has passed.  Spares on a leg's export, of a
# device of one leg or of a pool of one copy, and a replace onto a
# spare's export, are refused with the reason.
# timeout=600

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
command -v fio > /dev/null || skip "fio not installed"

out=/run/rmbd-spares
rm -rf "$out"
mkdir -p "$out"

cleanup() {
	[[ -n ${fio_pid:-} ]] && kill "$fio_pid" 2> /dev/null
	ip link set d2 up 2> /dev/null || true
	rmbd_reset > /dev/null 2>&1 || true
	second_link_del
}
trap cleanup EXIT

for m in s0 s1 s2 s3 s4; do
	target_setup "$m" 64M
done
second_link_add
io_errors() { dmesg | grep -c "error, dev $dev," || true; }

rmbd_fails "a spare on a leg's export" dev connect addr "$RMBD_ADDR" export s0 \
	addr "$RMBD_ADDR2" export s1 spare addr "$RMBD_ADDR" export s0
[[ $RMBD_ERR == *"spare 0 (addr $RMBD_ADDR export s0): a spare on the export of a leg or of another spare" ]] ||
	fail "a spare on a leg's export: '$RMBD_ERR'"
rmbd_fails "a spare of one leg" dev connect addr "$RMBD_ADDR" export s0 spare addr "$RMBD_ADDR" export s2
[[ $RMBD_ERR == *"spares need a device of two legs or more"* ]] || fail "a spare of one leg: '$RMBD_ERR'"
rmbd_fails "spares of a pool of one copy" dev connect addr "$RMBD_ADDR" export s0 \
	addr "$RMBD_ADDR2" export s1 layout pool copies 1 spare addr "$RMBD_ADDR" export s2
[[ $RMBD_ERR == *"spares need copies 2 or more: with one copy, a lost leg's data is gone" ]] ||
	fail "spares of a pool of one copy: '$RMBD_ERR'"
[[ $(dev_count) == 0 ]] || fail "a refused connect left a device"

dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export s0 addr "$RMBD_ADDR2" export s1 \
	spare addr "$RMBD_ADDR" export s2 reconnect_delay 1 | tail -n 1)
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
[[ $(dev_jq "$dev" '[.spares[] | .export] | join(",")') == s2 ]] ||
	fail "the spare is not shown: $(rmbd_cli -j dev show "$dev")"
rmbd_fails "a replace onto a spare" dev replace "$dev" leg 1 with addr "$RMBD_ADDR" export s2
[[ $RMBD_ERR == *"the export of one of the device's spares; a spare is used by itself" ]] ||
	fail "a replace onto a spare: '$RMBD_ERR'"
errors0=$(io_errors)
fio_verify_start "$dev" 0 32M "$out"
sleep 2
rmbd_ok export del s1 force > /dev/null
t0=$(usec)
while leg=$(dev_jq "$dev" '.legs[1] | "\(.state) \(.export) \(.dirty)"'); [[ $leg != "up s2 0" ]]; do
	(( $(usec) - t0 < 120000000 )) || fail "leg 1 is '$leg' 120 s after its export was deleted"
	[[ $(dev_field "$dev" state) == live ]] || fail "the device went $(dev_field "$dev" state)"
	sleep 0.2
done
log "export s1 deleted: spare s2 in its place and in sync after $(( ($(usec) - t0) / 1000 )) ms"
[[ $(dev_jq "$dev" '.spares | length') == 0 ]] || fail "the spare used is still listed"
sleep 2
fio_verify_stop "$out"
errors=$(( $(io_errors) - errors0 ))
(( errors == 0 )) || fail "the block layer logged $errors I/O errors of $dev"
dev_disconnect "$dev"

# The second link down for good: the spare steps in after loss_timeout.
rm -f "$out"/stop "$out"/passes "$out"/fio.*
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export s0 addr "$RMBD_ADDR2" export s3 \
	spare addr "$RMBD_ADDR" export s4 reconnect_delay 1 loss_timeout 10 | tail -n 1)
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
errors0=$(io_errors)
fio_verify_start "$dev" 0 32M "$out"
sleep 2
ip link set d2 down
t0=$(usec)
while leg=$(dev_jq "$dev" '.legs[1] | "\(.state) \(.export) \(.dirty)"'); [[ $leg != "up s4 0" ]]; do
	(( $(usec) - t0 < 150000000 )) || fail "leg 1 is '$leg' 150 s after its link went down"
	[[ $(dev_field "$dev" state) == live ]] || fail "the device went $(dev_field "$dev" state)"
	sleep 0.2
done
took=$(( ($(usec) - t0) / 1000 ))
(( took >= 10000 )) || fail "the spare stepped in after $took ms, before the loss timeout"
log "second link down: spare s4 in place and in sync after $took ms (loss_timeout 10 s)"
sleep 2
fio_verify_stop "$out"
errors=$(( $(io_errors) - errors0 ))
(( errors == 0 )) || fail "the block layer logged $errors I/O errors of $dev"
ip link set d2 up
