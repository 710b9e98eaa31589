#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# File systems keep what they fsync: on ext4 and on xfs, each on a fresh
# 512M export, files of random data are written and fsync'd (whole files,
# an in-place overwrite, a replace by rename, directory fsyncs).  Then the
# client "crashes" with the file system mounted: "dev disconnect force", a
# lazy umount of the dead mount, a connect to the same export.  Twice: once
# under the live file system, once after a shutdown without log flush (a
# power cut).  Each mount after a crash must replay the journal and find
# every fsync'd file with its checksum.  Then the plain path: umount, fsck,
# disconnect, connect, mount, every file's checksum, umount, fsck.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

mnt=/tmp/rmbd-fsync
src=/tmp/rmbd-fsync-src
mkdir -p "$mnt"

# Random files in tmpfs, copied onto the file system later.
rm -rf "$src"
mkdir -p "$src"
for i in $(seq 1 5); do
	head -c $(( (i * 389 + RANDOM % 300) * 1024 + RANDOM )) /dev/urandom > "$src/big$i"
done
for i in $(seq 1 16); do
	head -c $(( RANDOM % 20000 + 1 )) /dev/urandom > "$src/small$i"
done
head -c 1M /dev/urandom > "$src/patch"
head -c 100000 /dev/urandom > "$src/conf1"
head -c 120000 /dev/urandom > "$src/conf2"

# sha256 of every regular file under the mount, by path.
manifest() { (cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum); }

check_sums() {	# WHAT MANIFEST
	local bad
	bad=$(cd "$mnt" && sha256sum --quiet -c "$2" 2>&1) ||
		fail "$1: checksums differ: $(head -n 5 <<< "$bad" | tr '\n' ' ')"
	log "  $1: all $(wc -l < "$2") checksums match"
}

fsck_clean() {	# FS DEV WHAT
	local rc=0
	case $1 in
	ext4) e2fsck -fn "/dev/$2" > /tmp/fsck.out 2>&1 || rc=$? ;;
	xfs) xfs_repair -n "/dev/$2" > /tmp/fsck.out 2>&1 || rc=$? ;;
	esac
	if (( rc != 0 )); then
		cat /tmp/fsck.out
		fail "$1: fsck $3 exited with $rc"
	fi
	log "  $1: fsck $3 clean"
}

# mkfs without discarding the device: a fresh export is zeroed anyway.
do_mkfs() {	# FS DEV
	case $1 in
	ext4) mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 "/dev/$2" ;;
	xfs) mkfs.xfs -q -f -K "/dev/$2" ;;
	esac > /tmp/mkfs.out 2>&1 || { cat /tmp/mkfs.out; fail "mkfs.$1 failed"; }
}

do_mount() {	# FS DEV WHAT
	mount -t "$1" "/dev/$2" "$mnt" || fail "$1: mount $3 failed"
}

expect() {	# SOURCE PATH: a line of sha256sum for PATH holding SOURCE
	echo "$(sha256sum < "$1" | cut -c1-64)  ./$2"
}

# Files made durable by fsync under $mnt/TAG; their sums are added to
# /tmp/synced.sha256.
write_synced() {	# FS TAG NBIG
	local fs=$1 d=$mnt/$2 i t0 rc=0
	t0=$(date +%s)
	mkdir "$d"
	for i in $(seq 1 "$3"); do
		dd if="$src/big$i" of="$d/big$i" bs=256k conv=fsync status=none ||
			fail "$fs: writing $2/big$i failed"
		expect "$src/big$i" "$2/big$i" >> /tmp/synced.sha256
	done
	# In place: overwrite 1 MiB inside a file, fsync.
	cp "$src/big5" "$d/patched"
	sync "$d/patched"
	dd if="$src/patch" of="$d/patched" bs=64k seek=5 conv=notrunc,fsync status=none ||
		fail "$fs: overwriting $2/patched failed"
	cp "$src/big5" /tmp/patched.expect
	dd if="$src/patch" of=/tmp/patched.expect bs=64k seek=5 conv=notrunc status=none
	expect /tmp/patched.expect "$2/patched" >> /tmp/synced.sha256
	# Small files made durable by fdatasync and then directory fsyncs.
	mkdir "$d/small"
	for i in $(seq 1 16); do
		dd if="$src/small$i" of="$d/small/$i" conv=fdatasync status=none ||
			fail "$fs: writing $2/small/$i failed"
		expect "$src/small$i" "$2/small/$i" >> /tmp/synced.sha256
	done
	# Replace by rename: write, fsync, rename over the old one.
	dd if="$src/conf1" of="$d/conf" conv=fsync status=none || fail "$fs: writing $2/conf failed"
	dd if="$src/conf2" of="$d/conf.new" conv=fsync status=none || fail "$fs: writing $2/conf.new failed"
	mv "$d/conf.new" "$d/conf"
	expect "$src/conf2" "$2/conf" >> /tmp/synced.sha256
	sync "$d/small" "$d" "$mnt" || rc=$?
	(( rc == 0 )) || fail "$fs: directory fsync failed with $rc"
	# Right before the crash, what is on the file system must match.
	check_sums "$fs: before the crash" /tmp/synced.sha256
	log "  $fs: $2: wrote and fsync'd $(find "$d" -type f | wc -l) files," \
		"$(du -sk "$d" | cut -f1) KiB, in $(( $(date +%s) - t0 )) s"

	# Written, never fsync'd: may or may not survive.
	mkdir "$d/unsynced"
	for i in $(seq 1 8); do
		head -c 65536 /dev/urandom > "$d/unsynced/$i"
	done
	(cd "$mnt" && sha256sum "./$2/unsynced/"*) > /tmp/unsynced.sha256
}

# The client crashes with the file system mounted: disconnect force, lazy
# umount, connect again.  Sets dev to the new device.
crash() {	# FS
	local fs=$1 t0 rc=0
	t0=$(date +%s)
	rmbd_ok dev disconnect "$dev" force
	wait_gone "/dev/$dev" || fail "$fs: /dev/$dev still exists after disconnect force"
	[[ -z $(dev_field "$dev" name) ]] || fail "$fs: dev show still lists $dev"
	log "  $fs: disconnect force with the file system mounted: $(( $(date +%s) - t0 )) s"
	timeout -k 5 60 dd if=/dev/zero of="$mnt/after-crash" bs=4k count=1 conv=fsync \
		status=none 2> /tmp/dd.err || rc=$?
	(( rc != 124 && rc != 137 )) || fail "$fs: a write on the dead mount hung for 60 s"
	(( rc != 0 )) || fail "$fs: write and fsync on the dead mount succeeded"
	log "  $fs: write and fsync on the dead mount fail: $(head -n 1 /tmp/dd.err)"
	timeout -k 5 60 umount -l "$mnt" || fail "$fs: lazy umount of the dead mount failed"
	dev=$(dev_connect "fsync-$fs")
	echo 3 > /proc/sys/vm/drop_caches
}

# Mount after a crash: the journal must be replayed and every fsync'd
# file must be there.
recover() {	# FS
	local fs=$1 k n lost
	if [[ $fs == ext4 ]]; then
		dumpe2fs -h "/dev/$dev" 2> /dev/null | grep -q '^Filesystem features:.*needs_recovery' ||
			fail "ext4: the journal does not need recovery: the crash was a clean umount"
	fi
	k=$(kmsg_mark)
	if ! mount -t "$fs" "/dev/$dev" "$mnt" 2> /tmp/mount.err; then
		# The dead mount's xfs super block may still hold the UUID.
		[[ $fs == xfs ]] || fail "$fs: mount after the crash failed: $(cat /tmp/mount.err)"
		log "  xfs: mount refused ($(head -n 1 /tmp/mount.err)); with nouuid"
		mount -t xfs -o nouuid "/dev/$dev" "$mnt" || fail "xfs: mount after the crash failed"
	fi
	case $fs in
	ext4) kmsg_since "$k" | grep -q "EXT4-fs ($dev): recovery complete" ||
		fail "ext4: no journal recovery at mount: $(kmsg_since "$k" | tr '\n' ' ')" ;;
	xfs) kmsg_since "$k" | grep -q "XFS ($dev): Ending recovery" ||
		fail "xfs: no log recovery at mount: $(kmsg_since "$k" | tr '\n' ' ')" ;;
	esac
	log "  $fs: connected as /dev/$dev, mount replayed the journal"
	check_sums "$fs: after the crash" /tmp/synced.sha256
	n=$(wc -l < /tmp/unsynced.sha256)
	lost=$(cd "$mnt" && sha256sum --quiet -c /tmp/unsynced.sha256 2> /dev/null | grep -c FAILED) || true
	log "  $fs: $(( n - lost )) of $n files never fsync'd read back intact"
}

one_fs() {	# FS
	local fs=$1
	log "$fs:"
	: > /tmp/synced.sha256
	target_setup "fsync-$fs" 512M
	dev=$(dev_connect "fsync-$fs")
	do_mkfs "$fs" "$dev"
	do_mount "$fs" "$dev" "after mkfs"

	# Crash 1: the device goes away under a live file system.  On 6.1
	# del_gendisk() syncs the file system first, so this exercises the
	# journal replay more than fsync.
	write_synced "$fs" a 5
	crash "$fs"
	recover "$fs"

	# Crash 2, a power cut: the file system stops without writing
	# anything more (shutdown without log flush), then the device goes.
	# Only what fsync made durable is in the export.
	write_synced "$fs" b 2
	xfs_io -x -c shutdown "$mnt" || fail "$fs: xfs_io shutdown failed"
	log "  $fs: shut down without log flush"
	crash "$fs"
	recover "$fs"

	# The replayed file system takes new writes.
	dd if="$src/big1" of="$mnt/after" bs=256k conv=fsync status=none || fail "$fs: write after the replay failed"
	manifest > /tmp/all.sha256
	umount "$mnt" || fail "$fs: umount after the crash failed"
	fsck_clean "$fs" "$dev" "after the crashes"

	# The plain path.
	dev_disconnect "$dev"
	dev=$(dev_connect "fsync-$fs")
	echo 3 > /proc/sys/vm/drop_caches
	do_mount "$fs" "$dev" "after a plain reconnect"
	check_sums "$fs: after umount, disconnect, reconnect" /tmp/all.sha256
	umount "$mnt" || fail "$fs: umount failed"
	fsck_clean "$fs" "$dev" "after the plain reconnect"
	dev_disconnect "$dev"
	rmbd_ok export del "fsync-$fs"
}

command -v xfs_io > /dev/null || skip "xfs_io (xfsprogs) not installed"
ran=0
for fs in ext4 xfs; do
	if ! command -v "mkfs.$fs" > /dev/null; then
		log "$fs: mkfs.$fs not installed, not tested"
		continue
	fi
	one_fs "$fs"
	ran=$(( ran + 1 ))
done
(( ran > 0 )) || skip "neither mkfs.ext4 nor mkfs.xfs installed"
rm -rf "$src" /tmp/patched.expect
