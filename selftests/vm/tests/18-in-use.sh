#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A new export reads as zeros, also over memory that an export just
# deleted had filled with data.  rmbd dev disconnect refuses a device
# that is open in a process, has a partition mounted, is mounted or used
# as swap, with the reason, and the device keeps working; an open that
# ends within two seconds is waited out.  With force it removes a mounted
# device all the same, and the file system's I/O then fails (no hang) and
# it unmounts.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
for t in mkfs.ext4 mkswap swapon swapoff; do
	command -v "$t" > /dev/null || fail "$t not installed"
done

mnt=/tmp/rmbd-inuse
mkdir -p "$mnt"
cleanup() {
	swapoff -a 2> /dev/null
	if mountpoint -q "$mnt"; then umount -l "$mnt"; fi
	rm -f /tmp/inuse.*
	return 0
}
trap cleanup EXIT

# ---- zeroed at creation -------------------------------------------------

# 16M on the slower debug kernel.
mb=$(rounds 64 16)
size=$(( mb << 20 ))
target_setup dirty "${mb}M"
dev=$(dev_connect dirty)
head -c "$size" /dev/urandom > /tmp/inuse.rand
dd if=/tmp/inuse.rand of="/dev/$dev" bs=1M oflag=direct status=none || fail "filling /dev/$dev failed"
cmp /tmp/inuse.rand <(dd if="/dev/$dev" bs=1M iflag=direct status=none) ||
	fail "the data written does not read back"
rm -f /tmp/inuse.rand
# An open that ends within the grace (udev's probe after a change) does
# not make the device in use: the disconnect waits it out.
( exec 3< "/dev/$dev"; sleep 0.5 ) &
opener=$!
for (( i = 0; i < 50; i++ )); do
	[[ -e /proc/$opener/fd/3 ]] && break
	sleep 0.1
done
[[ -e /proc/$opener/fd/3 ]] || fail "the transient opener did not open /dev/$dev"
dev_disconnect "$dev"
wait "$opener" || true
rmbd_ok export del dirty
# The memory just freed is the likeliest to come back to the next export.
rmbd_ok export add fresh size "${mb}M" hosts "$(rmbd_cli host)" > /dev/null
dev=$(dev_connect fresh)
dd if="/dev/$dev" of=/tmp/inuse.back bs=1M iflag=direct status=none || fail "reading /dev/$dev failed"
got=$(stat -c %s /tmp/inuse.back)
(( got == size )) || fail "read $got bytes of the new export, expected $size"
nz=$(tr -d '\0' < /tmp/inuse.back | wc -c)
rm -f /tmp/inuse.back
(( nz == 0 )) || fail "a new export over a deleted one's memory: $nz bytes are not zero"
log "a new ${mb}M export over the memory of a deleted one filled with random data reads as zeros"

# ---- refused while in use ---------------------------------------------

in_use_refused() {	# WHAT
	rmbd_fails "dev disconnect of a device $1" dev disconnect "$dev"
	[[ $RMBD_ERR == *"in use"* ]] || fail "disconnect of a device $1: no reason given: $RMBD_ERR"
	[[ -b /dev/$dev && $(dev_field "$dev" state) == live ]] ||
		fail "/dev/$dev not live after the refused disconnect"
}

exec 3< "/dev/$dev"
in_use_refused "open in a process"
exec 3<&-
log "disconnect refused while a process held /dev/$dev open"

# A partition's opens count for the whole disk.
printf 'label: dos\n,%sM\n' $(( mb / 2 )) | sfdisk -q "/dev/$dev" ||
	fail "sfdisk on /dev/$dev failed"
wait_node "/dev/${dev}p1" || fail "/dev/${dev}p1 did not appear"
mkfs.ext4 -q -F -E nodiscard "/dev/${dev}p1" || fail "mkfs.ext4 on /dev/${dev}p1 failed"
mount "/dev/${dev}p1" "$mnt" || fail "mount of /dev/${dev}p1 failed"
in_use_refused "whose partition is mounted"
umount "$mnt"
dd if=/dev/zero of="/dev/$dev" bs=1M count=1 oflag=direct status=none
blockdev --rereadpt "/dev/$dev" || fail "cannot drop the partition table of /dev/$dev"
log "disconnect refused while a partition of /dev/$dev was mounted"

mkswap "/dev/$dev" > /dev/null || fail "mkswap failed"
swapon "/dev/$dev" || fail "swapon failed"
in_use_refused "used as swap"
swapoff "/dev/$dev" || fail "swapoff after the refused disconnect failed"
log "disconnect refused while /dev/$dev was swap"

mkfs.ext4 -q -F -E nodiscard "/dev/$dev" || fail "mkfs.ext4 failed"
mount "/dev/$dev" "$mnt" || fail "mount failed"
in_use_refused "mounted"
head -c 4M /dev/urandom > /tmp/inuse.src
cp /tmp/inuse.src "$mnt/f" && sync || fail "writing to the mount after the refused disconnect failed"
umount "$mnt"
mount "/dev/$dev" "$mnt" || fail "mount after the refused disconnect failed"
cmp /tmp/inuse.src "$mnt/f" || fail "the file written after the refused disconnect reads back wrong"
log "disconnect refused while /dev/$dev was mounted; the file system kept working"

# ---- force ------------------------------------------------------------

rmbd_ok dev disconnect "$dev" force
wait_gone "/dev/$dev" || fail "/dev/$dev still there after a forced disconnect"
rc=0
timeout -k 5 60 dd if=/tmp/inuse.src of="$mnt/g" bs=1M oflag=direct,sync status=none 2> /tmp/inuse.err || rc=$?
(( rc != 124 && rc != 137 )) || fail "a write to the file system of a removed device hung"
(( rc != 0 )) || fail "a write to the file system of a removed device succeeded"
log "after disconnect force: a write on the mount fails: $(head -n 1 /tmp/inuse.err)"
rc=0
timeout -k 5 60 umount "$mnt" || rc=$?
(( rc == 0 )) || fail "umount of the removed device's file system: exit $rc"
(( $(dev_count) == 0 )) || fail "devices left: $(rmbd_cli dev show)"
[[ $(export_field fresh sessions) == 0 ]] || sleep 2
[[ $(export_field fresh sessions) == 0 ]] ||
	fail "the target still has $(export_field fresh sessions) sessions after the forced disconnect"
log "disconnect force removed the mounted device; the file system failed its I/O and unmounted"
rmbd_ok export del fresh
