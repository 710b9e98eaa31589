#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# LVM on remote memory: a volume group on a 512M export, ext4 on a 256M
# logical volume, files of random data, then a snapshot of it taken with
# the file system mounted.  The origin changes (files rewritten, deleted,
# added): the snapshot still holds the old files and the origin the new
# ones, checked by checksum, both clean for fsck.  The volume group is
# deactivated and the device disconnected and connected again: the
# volume group comes back with both volumes; merging the snapshot rolls
# the origin back to the old files.
# timeout=420

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
for t in pvcreate vgcreate lvcreate lvconvert vgchange mkfs.ext4 e2fsck; do
	command -v "$t" > /dev/null || skip "$t not installed"
done

vg=rmbdvg
mnt=/tmp/rmbd-lvm
snapmnt=/tmp/rmbd-lvm-snap
out=/run/rmbd-lvm
mkdir -p "$mnt" "$snapmnt" "$out/lvm" /run/lock/lvm

# LVM without udev or lvmpolld (neither runs in the VM), looking at rmbd
# devices only, writing no metadata backups into /etc.  "types" is what
# every user of LVM on rmbd needs (Documentation/admin-guide.rst): LVM
# takes only block device types it knows by name, up to 16 partitions.
export LVM_SYSTEM_DIR=$out/lvm
cat > "$LVM_SYSTEM_DIR/lvm.conf" << 'EOF'
devices {
	types = [ "rmbd", 16 ]
	filter = [ "a|^/dev/rmbd[0-9]+$|", "r|.*|" ]
	use_devicesfile = 0
	obtain_device_list_from_udev = 0
}
activation {
	udev_sync = 0
	udev_rules = 0
	monitoring = 0
}
global {
	use_lvmpolld = 0
}
backup {
	backup = 0
	archive = 0
}
EOF

cleanup() {
	umount "$snapmnt" 2> /dev/null || true
	umount "$mnt" 2> /dev/null || true
	vgchange -an "$vg" > /dev/null 2>&1 || true
}
trap cleanup EXIT

lvm_ok() {	# COMMAND ARGS...
	if ! "$@" > "$out/cmd" 2>&1; then
		cat "$out/cmd"
		fail "$* failed"
	fi
}

sums() {	# DIR FILE
	(cd "$1" && find . -type f ! -path './lost+found/*' -print0 | sort -z |
		xargs -0 sha256sum) > "$2"
}
check_sums() {	# DIR FILE WHAT
	local n
	(cd "$1" && sha256sum --quiet -c "$2") || fail "$3: checksums differ"
	n=$(cd "$1" && find . -type f ! -path './lost+found/*' | wc -l)
	[[ $n == "$(wc -l < "$2")" ]] || fail "$3: $n files, expected $(wc -l < "$2")"
}

target_setup lvm 512M
dev=$(dev_connect lvm)
lvm_ok pvcreate -q "/dev/$dev"
lvm_ok vgcreate -q "$vg" "/dev/$dev"
lvm_ok lvcreate -q -y -L 256M -n origin "$vg"
mkfs.ext4 -q -F -E nodiscard "/dev/$vg/origin" || fail "mkfs.ext4 on the origin failed"
mount -t ext4 "/dev/$vg/origin" "$mnt" || fail "mount of the origin failed"
for i in 1 2 3 4; do
	head -c 8M /dev/urandom > "$mnt/file$i"
done
mkdir "$mnt/dir"
for i in $(seq 1 100); do
	head -c $(( RANDOM * 2 )) /dev/urandom > "$mnt/dir/small$i"
done
sums "$mnt" "$out/old.sum"
sync

# The snapshot, with the file system mounted (LVM freezes it meanwhile).
lvm_ok lvcreate -q -s -L 128M -n snap "$vg/origin"
# The origin changes.
head -c 8M /dev/urandom > "$mnt/file1"
rm "$mnt/file2"
head -c 16M /dev/urandom > "$mnt/file5"
for i in $(seq 1 50); do
	head -c 1000 /dev/urandom > "$mnt/dir/small$i"
done
sums "$mnt" "$out/new.sum"
sync
cow=$(lvs --noheadings -o snap_percent "$vg/snap" | tr -d ' ')
log "snapshot of $vg/origin on /dev/$dev: ${cow}% of its 128M copy-on-write space used"
[[ $cow =~ ^[0-9.]+$ ]] && awk -v c="$cow" 'BEGIN { exit !(c > 0) }' ||
	fail "the snapshot's copy-on-write space is unused ($cow) after the origin changed"

mount -t ext4 -o ro "/dev/$vg/snap" "$snapmnt" || fail "mount of the snapshot failed"
check_sums "$snapmnt" "$out/old.sum" "the snapshot"
check_sums "$mnt" "$out/new.sum" "the origin"
log "snapshot: $(wc -l < "$out/old.sum") old files intact; origin: $(wc -l < "$out/new.sum") new ones"
umount "$snapmnt"
umount "$mnt"
e2fsck -fn "/dev/$vg/snap" > "$out/fsck" 2>&1 || { cat "$out/fsck"; fail "fsck of the snapshot"; }
e2fsck -fn "/dev/$vg/origin" > "$out/fsck" 2>&1 || { cat "$out/fsck"; fail "fsck of the origin"; }

# Off and on again: the volume group lives in the export.
lvm_ok vgchange -an "$vg"
dev_disconnect "$dev"
dev=$(dev_connect lvm)
echo 3 > /proc/sys/vm/drop_caches
lvm_ok vgchange -ay "$vg"
lvs --noheadings -o lv_name "$vg" | tr -d ' ' | sort > "$out/lvs"
[[ $(tr '\n' ' ' < "$out/lvs") == "origin snap " ]] ||
	fail "after reconnecting, $vg holds: $(tr '\n' ' ' < "$out/lvs")"
mount -t ext4 "/dev/$vg/origin" "$mnt" || fail "mount of the origin after reconnecting failed"
check_sums "$mnt" "$out/new.sum" "the origin after reconnecting"
umount "$mnt"

# Roll back: merge the snapshot into the (unmounted) origin.
lvm_ok lvconvert -q --merge -i 1 "$vg/snap"
lvs --noheadings -o lv_name "$vg" | tr -d ' ' > "$out/lvs"
[[ $(tr '\n' ' ' < "$out/lvs") == "origin " ]] ||
	fail "after the merge, $vg holds: $(tr '\n' ' ' < "$out/lvs")"
e2fsck -fn "/dev/$vg/origin" > "$out/fsck" 2>&1 || { cat "$out/fsck"; fail "fsck after the merge"; }
mount -t ext4 "/dev/$vg/origin" "$mnt" || fail "mount after the merge failed"
check_sums "$mnt" "$out/old.sum" "the origin after the merge"
log "merged: the origin holds the $(wc -l < "$out/old.sum") old files again"
umount "$mnt"
lvm_ok vgchange -an "$vg"
dev_disconnect "$dev"
rmbd_ok export del lvm
