#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Data integrity over the whole device: fio writes every block of a 256M
# export (on the debug kernel, for CI's time, 32M in slabs of 8M, and
# 16M in slabs of 4M over siw) with crc32c headers and reads it back; a verify-only pass checks
# it again, and once more after a disconnect and a reconnect.  The device
# size must equal the export size.  Then buffers that start 512 bytes into
# a page, whose requests begin and end inside pages: over iWARP (and with
# read_mr=1) READs land in a region registered per request, whose first
# and last pages are then partial ones.  Over rxe, those and mixed reads
# and writes once more with read_mr=1.
# timeout=600

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
command -v fio > /dev/null || skip "fio not installed"

size=$(( $(rounds 256 32) << 20 ))
slab=()
if debug_kernel; then
	slab=(slab 8M)
	# siw on the debug kernel moves about 0.5 MB/s.
	[[ $RMBD_TRANSPORT == siw ]] && size=$(( 16 << 20 )) slab=(slab 4M)
fi
# The unaligned pass and the mixed one: 64M and 2 x 32M (8M and 2 x 4M
# at 32M).
unaligned=$(( size >> 22 ))m
mixed=$(( size >> 23 ))m

# One job for writing and verifying: with a fixed seed, --verify_only
# regenerates each block's expected header and checks its crc32c.
fio_verify() {	# DEV EXTRA...
	local d=$1
	shift
	fio --name=verify --filename="/dev/$d" --rw=write --bs=64k \
		--direct=1 --ioengine=libaio --iodepth=16 --size=100% \
		--verify=crc32c --verify_fatal=1 --randseed=4242 \
		--output-format=terse --terse-version=3 "$@" > /tmp/fio.out 2>&1
}

fio_run() {	# WHAT DEV EXTRA...
	local what=$1 t0 rc=0
	shift
	log "$what"
	t0=$(date +%s)
	fio_verify "$@" || rc=$?
	if (( rc != 0 )); then
		cat /tmp/fio.out
		fail "$what: fio exited with $rc"
	fi
	# terse v3: field 6 read KiB, field 47 written KiB
	awk -F';' 'END {printf "  read %d MiB, written %d MiB", $6 / 1024, $47 / 1024}' /tmp/fio.out
	log ", $(( $(date +%s) - t0 )) s"
}

check_size() {	# DEV
	local got
	got=$(blockdev --getsize64 "/dev/$1")
	(( got == size )) || fail "/dev/$1 is $got bytes, the export $size"
	got=$(dev_field "$1" size)
	[[ $got == "$size" ]] || fail "dev show: size of $1 is '$got'"
	got=$(dev_field "$1" state)
	[[ $got == live ]] ||
		fail "dev show: state of $1 is '$got': $(dmesg | grep 'rmbd_client: ' | tail -n 3 | tr '\n' ' ')"
}

target_setup data "$size" "${slab[@]}"
dev=$(dev_connect data)
log "connected /dev/$dev"
check_size "$dev"
check_read_sinks "$dev"

fio_run "write and verify all of /dev/$dev" "$dev" --do_verify=1
grep -q "^3;" /tmp/fio.out || fail "no terse output from fio"
fio_run "verify only" "$dev" --verify_only

dev_disconnect "$dev"
dev=$(dev_connect data)
log "reconnected as /dev/$dev"
check_size "$dev"
fio_run "verify only after reconnecting" "$dev" --verify_only

# The verify-only pass must be able to fail: zero one block in the middle.
dd if=/dev/zero of="/dev/$dev" bs=64k count=1 seek=$(( size / 2 / 65536 )) \
	oflag=direct status=none
if fio_verify "$dev" --verify_only; then
	fail "verify-only passed over a zeroed block"
fi
log "verify-only detects a zeroed block"

# Buffers that start inside pages, and mixed reads and writes; over
# rxe once more with read_mr=1 below.
unaligned_and_mixed() {	# DEV
	local dev=$1 lost0 lost
	fio_run "write and verify $unaligned from unaligned buffers, 132k blocks" "$dev" \
		--do_verify=1 --size="$unaligned" --bs=132k --iomem_align=512 --randseed=99

	# Reads and writes mixed on every queue pair, as swap makes them: over
	# iWARP each write ends with a READ of its own, which queues on the
	# target behind the reads' READs (siw answered a zero-length one there
	# with the previous response, and the connection ended).  No reconnect.
	lost0=$(dmesg | grep -c "rmbd[0-9]*: connection to .* lost" || true)
	log "mixed random reads and writes, verified, 2 jobs at depth 32"
	fio --name=mixed --filename="/dev/$dev" --rw=randrw --bsrange=4k-256k \
		--direct=1 --ioengine=libaio --iodepth=32 --numjobs=2 --size="$mixed" \
		--offset_increment=$(( size >> 21 ))m --verify=crc32c --verify_fatal=1 \
		--randseed=7 --group_reporting --output-format=terse \
		--terse-version=3 > /tmp/fio.out 2>&1 ||
		{ cat /tmp/fio.out; fail "mixed reads and writes: fio failed"; }
	awk -F';' 'END {printf "  read %d MiB, written %d MiB\n", $6 / 1024, $47 / 1024}' /tmp/fio.out
	lost=$(( $(dmesg | grep -c "rmbd[0-9]*: connection to .* lost" || true) - lost0 ))
	(( lost == 0 )) ||
		fail "the connection ended $lost time(s) under mixed I/O: $(dmesg | grep -E 'siw|rmbd' | tail -n 4 | tr '\n' ' ')"
	[[ $(dev_field "$dev" state) == live ]] || fail "/dev/$dev is not live after mixed I/O"
}

unaligned_and_mixed "$dev"
dev_disconnect "$dev"

# Over rxe, READ sinks registered per request as well (read_mr=1, as
# iWARP has them): REG_MR, the READ, then a LOCAL_INV fenced behind it,
# where iWARP's READ invalidates the region itself.
if [[ $RMBD_TRANSPORT == rxe &&
      $(cat /sys/module/rmbd_client/parameters/read_mr) == N ]]; then
	rmmod rmbd_client || fail "cannot unload rmbd_client for read_mr=1"
	# shellcheck disable=SC2086 # parameters, one per word
	insmod "$RMBD_CLIENT_KO" ${RMBD_CLIENT_PARAMS:-} read_mr=1 ||
		fail "insmod $RMBD_CLIENT_KO read_mr=1 failed"
	dev=$(dev_connect data)
	log "with read_mr=1: /dev/$dev"
	check_read_sinks "$dev"
	unaligned_and_mixed "$dev"
	dev_disconnect "$dev"
	rmmod rmbd_client || fail "cannot unload rmbd_client after read_mr=1"
	rmbd_load_modules || fail "cannot load rmbd_client again"
fi
