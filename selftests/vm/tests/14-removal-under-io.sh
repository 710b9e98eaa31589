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
	if ! rdma link show "$RMBD_RDMA_DEV/1" > /dev/null 2>&1; then
		rdma link add "$RMBD_RDMA_DEV" type "$RMBD_TRANSPORT" netdev "$RMBD_NETDEV" 2> /dev/null || true
	fi
	true
}
trap cleanup EXIT

# fio_start TAG DEV [FIO-OPTION...]: random writes with verification,
# until stopped; by default 8 at a time with libaio over 48M.  Returns
# once writes reach the device (fio starts slowly on the debug kernel);
# fio never creates a file in its place.
fio_start() {
	local tag=$1 dev=$2 w0 i
	local engine=(--size=48M --iodepth=8 --ioengine=libaio)
	shift 2
	(( $# )) && engine=("$@")
	w0=$(awk '{print $5}' "/sys/block/$dev/stat")
	fio --name="$tag" --filename="/dev/$dev" --rw=randwrite "${engine[@]}" \
		--bs=4k --direct=1 \
		--verify=crc32c --verify_backlog=128 --verify_fatal=1 \
		--verify_state_save=0 --allow_file_create=0 \
		--time_based --runtime=3600 > "$out/$tag.out" 2>&1 &
	fio_pid=$!
	for (( i = 0; i < 600; i++ )); do
		kill -0 "$fio_pid" 2> /dev/null ||
			fail "$tag: fio did not start: $(tail -n 5 "$out/$tag.out")"
		(( $(awk '{print $5}' "/sys/block/$dev/stat") > w0 + 64 )) && break
		sleep 0.1
	done
	(( i < 600 )) || fail "$tag: fio wrote nothing to /dev/$dev in 60 s"
	sleep 1
}

# fio_ends_with_error TAG SECONDS [ERROR-RE]: fio must end within
# SECONDS, with EIO (an I/O error, not wrong data read back), or an error
# ERROR-RE matches.
fio_ends_with_error() {
	local tag=$1 limit=$2 errors="Input/output error${3:+|$3}" rc=0
	wait_exit "$fio_pid" "$limit" "$tag: fio still running $limit s later (hung I/O?)"
	wait "$fio_pid" || rc=$?
	fio_pid=
	(( rc != 0 )) || fail "$tag: fio succeeded"
	if grep -qiE "$RMBD_FIO_MISMATCH_RE" "$out/$tag.out"; then
		fail "$tag: fio read back wrong data: $(grep -iE -m 3 "$RMBD_FIO_MISMATCH_RE" "$out/$tag.out" | tr '\n' ' ')"
	fi
	grep -qE "$errors" "$out/$tag.out" ||
		fail "$tag: fio failed (exit $rc) without EIO: $(tail -n 3 "$out/$tag.out" | tr '\n' ' ')"
	log "$tag: fio ended with an I/O error: $(grep -m 1 -E "$errors" "$out/$tag.out")"
}

# 1. RDMA device removal, then back: the device reconnects, fio carries on.
target_setup rm1 64M
dev=$(dev_connect rm1 reconnect_delay 1 loss_timeout 120)
fio_start rdma-del "$dev"
rdma link delete "$RMBD_RDMA_DEV" || fail "rdma link delete $RMBD_RDMA_DEV failed"
log "$RMBD_RDMA_DEV deleted: device $(dev_field "$dev" state)"
sleep 3
st=$(dev_field "$dev" state)
[[ $st == reconnecting ]] || fail "device $st without its RDMA device, expected reconnecting"
kill -0 "$fio_pid" 2> /dev/null || fail "fio ended while the device was reconnecting"
rdma link add "$RMBD_RDMA_DEV" type "$RMBD_TRANSPORT" netdev "$RMBD_NETDEV" || fail "rdma link add failed"
# The target's listener went with the device.
rmbd_cli listener del "$RMBD_ADDR" 2> /dev/null || true
rmbd_ok listener add "$RMBD_ADDR" > /dev/null
for (( i = 0; i < 300; i++ )); do
	[[ $(dev_field "$dev" state) == live ]] && break
	sleep 0.1
done
[[ $(dev_field "$dev" state) == live ]] || fail "device not live 30 s after $RMBD_RDMA_DEV came back"
sleep 3
kill -0 "$fio_pid" 2> /dev/null || fail "fio ended after the reconnect: $(tail -n 5 "$out/rdma-del.out")"
kill -INT "$fio_pid"
rc=0
wait "$fio_pid" || rc=$?
fio_pid=
# 128: fio stopped by the signal, with no error of its own.
if (( rc != 128 )) || grep -qiE "$RMBD_FIO_MISMATCH_RE|err= *[1-9]" "$out/rdma-del.out"; then
	fail "fio (exit $rc, 128 expected) reported errors across the device removal: $(grep -iE "err|$RMBD_FIO_MISMATCH_RE" "$out/rdma-del.out" | head -n 3 | tr '\n' ' ')"
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

# 3. Forced disconnect of the client device.  Once the disk is deleted
# its size is 0, and the block layer ends a read at or past the end with
# 0 bytes (EOF) and fails a write with ENOSPC, before any driver sees
# them.  fio's asynchronous engines verify the untouched buffer of such a
# read (a mismatch that is no wrong data); its synchronous ones fail it
# ("full resid", EIO).  So four psync jobs, each on its own 12M.
target_setup rm2 64M
dev=$(dev_connect rm2)
fio_start disconnect "$dev" --ioengine=psync --numjobs=4 --size=12M \
	--offset_increment=12M
rmbd_ok dev disconnect "$dev" force
fio_ends_with_error disconnect 30 "No space left on device"
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
