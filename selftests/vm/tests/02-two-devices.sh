#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two exports, two devices: each reads back its own data, and writing one
# leaves the other untouched.  Export b uses the smallest slab so its
# I/O crosses many slab boundaries.  A second device on export a is
# refused (two devices of one host on one export overwrite each other),
# unless connected with "shared" (export a is shared), and then it sees
# a's data.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

size=$(( 64 << 20 ))
target_setup a 64M shared
target_setup b 64M slab 2M
[[ $(export_field b slab_size) == $(( 2 << 20 )) ]] ||
	fail "export b: slab_size $(export_field b slab_size), expected 2M"
[[ $(export_field b nr_slabs) == 32 ]] ||
	fail "export b: nr_slabs $(export_field b nr_slabs), expected 32"

da=$(dev_connect a)
db=$(dev_connect b)
[[ $da != "$db" ]] || fail "both connects returned $da"
log "a -> /dev/$da, b -> /dev/$db"
[[ $(dev_field "$da" export) == a ]] || fail "$da: export '$(dev_field "$da" export)'"
[[ $(dev_field "$db" export) == b ]] || fail "$db: export '$(dev_field "$db" export)'"
(( $(dev_count) == 2 )) || fail "dev show lists $(dev_count) devices"

head -c "$size" /dev/urandom > /tmp/a.img
head -c "$size" /dev/urandom > /tmp/b.img

readback() {	# DEV FILE
	dd if="/dev/$1" of=/tmp/rb.img bs=1M iflag=direct status=none ||
		fail "reading /dev/$1 failed"
	cmp /tmp/rb.img "$2" || fail "/dev/$1 does not hold $2"
	rm -f /tmp/rb.img
}

dd if=/tmp/a.img of="/dev/$da" bs=1M oflag=direct status=none || fail "writing /dev/$da failed"
readback "$da" /tmp/a.img
log "/dev/$da holds pattern a"

dd if=/tmp/b.img of="/dev/$db" bs=1M oflag=direct status=none || fail "writing /dev/$db failed"
readback "$db" /tmp/b.img
log "/dev/$db holds pattern b"
readback "$da" /tmp/a.img
log "/dev/$da still holds pattern a after writing b"

# Unaligned-to-slab writes straddling a 2M slab boundary of b.
head -c $(( 1 << 20 )) /dev/urandom > /tmp/c.img
dd if=/tmp/c.img of="/dev/$db" bs=4k seek=$(( (6 << 20) / 4096 - 128 )) oflag=direct status=none
dd if=/tmp/c.img of=/tmp/b.img bs=4k seek=$(( (6 << 20) / 4096 - 128 )) conv=notrunc status=none
readback "$db" /tmp/b.img
readback "$da" /tmp/a.img
log "a 1M write across a slab boundary of b lands where it should"

rmbd_fails "a second device on export a" dev connect addr "$RMBD_ADDR" export a
[[ $RMBD_ERR == *"File exists"*"already connected here"* ]] ||
	fail "a second device on export a: '$RMBD_ERR', expected EEXIST and why"
(( $(dev_count) == 2 )) || fail "dev show lists $(dev_count) devices after the refused connect"
[[ $(dev_field "$da" shared) == false ]] || fail "$da: shared '$(dev_field "$da" shared)'"
dc=$(dev_connect a shared)
[[ $(dev_field "$dc" shared) == true ]] || fail "$dc: shared '$(dev_field "$dc" shared)'"
readback "$dc" /tmp/a.img
dev_disconnect "$dc"
log "a second device on export a: refused ($RMBD_ERR); with shared it reads a's data"

# The data stays with the export, not with the device.
dev_disconnect "$da"
dev_disconnect "$db"
db=$(dev_connect b)
da=$(dev_connect a)
readback "$da" /tmp/a.img
readback "$db" /tmp/b.img
log "after reconnecting in the other order each device holds its export's data"
