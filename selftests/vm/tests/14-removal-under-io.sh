#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Things pulled out from under running fio: the RDMA device (rdma link
# delete; the device parks its I/O and carries on once rxe and the
# listener are back), the export (delete force: I/O fails), the client
# device (disconnect force: I/O fails) and the target module (rmmod: I/O
# fails).  Nothing may hang, oops or leave a device behind.
# timeout=600

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
command -v fio > /dev/null || skip "fio not installed"

out=/run/rmbd-removal
mkdir -p "$out"
cd "$out"

cleanup() {
	[[ -n ${fio_pid:-} ]] && kill -9 "$fio_pid" 2> /dev/null
	if ! rdma link show rxe0/1 > /dev/null 2>&1; then
		rdma link add rxe0 type rxe netdev d0 2> /dev/null || true
	fi
	true
}
trap cleanup EXIT

# fio_start TAG DEV: random writes with verification, until stopped.
# Returns once writes reach the device (fio starts slowly on the debug
# kernel); fio never creates a file in its place.
fio_start() {
	local w0 i
	w0=$(awk '{print $5}' "/sys/block/$2/stat")
	fio --name="$1" --filename="/dev/$2" --size=48M --rw=randwrite \
		--bs=4k --iodepth=8 --ioengine=libaio --direct=1 \
		--verify=crc32c --verify_backlog=128 --verify_fatal=1 \
		--verify_state_save=0 --allow_file_create=0 \
		--time_based --runtime=3600 > "$out/$1.out" 2>&1 &
	fio_pid=$!
	for (( i = 0; i < 600; i++ )); do
		kill -0 "$fio_pid" 2> /dev/null ||
			fail "$1: fio did not start: $(tail -n 5 "$out/$1.out")"
		(( $(awk '{print $5}' "/sys/block/$2/stat") > w0 + 64 )) && break
		sleep 0.1
	done
	(( i < 600 )) || fail "$1: fio wrote nothing to /dev/$2 in 60 s"
	sleep 1
}

# fio's words for a block that read back wrong.
mismatch_re='verify: bad|verify failed|bad magic|bad header|mismatch'

# fio_ends_with_error TAG SECONDS: fio must end within SECONDS, with EIO
# (an I/O error, not wrong data read back).
fio_ends_with_error() {
	local tag=$1 limit=$2 rc=0
	wait_exit "$fio_pid" "$limit" "$tag: fio still running $limit s later (hung I/O?)"
	wait "$fio_pid" || rc=$?
	fio_pid=
	(( rc != 0 )) || fail "$tag: fio succeeded"
	if grep -qiE "$mismatch_re" "$out/$tag.out"; then
		fail "$tag: fio read back wrong data: $(grep -iE -m 3 "$mismatch_re" "$out/$tag.out" | tr '\n' ' ')"
	fi
	grep -q "Input/output error" "$out/$tag.out" ||
		fail "$tag: fio failed (exit $rc) without EIO: $(tail -n 3 "$out/$tag.out" | tr '\n' ' ')"
	log "$tag: fio ended with EIO: $(grep -m 1 'Input/output error' "$out/$tag.out")"
}

# 1. RDMA device removal, then back: the device reconnects, fio carries on.
target_setup rm1 64M
dev=$(dev_connect rm1 reconnect_delay 1 loss_timeout 120)
fio_start rdma-del "$dev"
rdma link delete rxe0 || fail "rdma link delete rxe0 failed"
log "rxe0 deleted: device $(dev_field "$dev" state)"
sleep 3
st=$(dev_field "$dev" state)
[[ $st == reconnecting ]] || fail "device $st without its RDMA device, expected reconnecting"
kill -0 "$fio_pid" 2> /dev/null || fail "fio ended while the device was reconnecting"
rdma link add rxe0 type rxe netdev d0 || fail "rdma link add failed"
# The target's listener went with the device.
rmbd_cli listener del "$RMBD_ADDR" 2> /dev/null || true
rmbd_ok listener add "$RMBD_ADDR" > /dev/null
for (( i = 0; i < 300; i++ )); do
	[[ $(dev_field "$dev" state) == live ]] && break
	sleep 0.1
done
[[ $(dev_field "$dev" state) == live ]] || fail "device not live 30 s after rxe0 came back"
sleep 3
kill -0 "$fio_pid" 2> /dev/null || fail "fio ended after the reconnect: $(tail -n 5 "$out/rdma-del.out")"
kill -INT "$fio_pid"
rc=0
wait "$fio_pid" || rc=$?
fio_pid=
# 128: fio stopped by the signal, with no error of its own.
if (( rc != 128 )) || grep -qiE "$mismatch_re|err= *[1-9]" "$out/rdma-del.out"; then
	fail "fio (exit $rc, 128 expected) reported errors across the device removal: $(grep -iE "err|$mismatch_re" "$out/rdma-del.out" | head -n 3 | tr '\n' ' ')"
fi
log "RDMA device removed and re-added under fio: reconnected ($(dev_field "$dev" reconnects)), fio clean"
dev_disconnect "$dev"

# 2. Forced export deletion: fio fails, the device fails.
dev=$(dev_connect rm1 reconnect_delay 1 loss_timeout 60)
fio_start export-del "$dev"
rmbd_ok export del rm1 force
fio_ends_with_error export-del 30
[[ $(dev_field "$dev" state) == failed ]] || fail "device $(dev_field "$dev" state) after its export was deleted"
dev_disconnect "$dev"

# 3. Forced disconnect of the client device.
target_setup rm2 64M
dev=$(dev_connect rm2)
fio_start disconnect "$dev"
rmbd_ok dev disconnect "$dev" force
fio_ends_with_error disconnect 30
wait_gone "/dev/$dev" || fail "/dev/$dev still there after a forced disconnect"

# 4. Target module unload.
# Nothing listens any more: the client retries until its loss timeout.
dev=$(dev_connect rm2 reconnect_delay 1 loss_timeout 10)
fio_start rmmod "$dev"
rmmod rmbd_target || fail "rmmod rmbd_target failed under client I/O"
fio_ends_with_error rmmod 40
st=$(dev_field "$dev" state)
[[ $st == failed ]] || fail "device $st after the target module went away"
dev_disconnect "$dev"
(( $(dev_count) == 0 )) || fail "devices left: $(rmbd_cli dev show)"
rmbd_load_modules || fail "cannot load rmbd_target again"
