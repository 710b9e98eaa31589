#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ext4 on a 1G export: files of random data survive umount, disconnect,
# reconnect and mount, and fsck finds the file system clean.
# timeout=420

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
command -v mkfs.ext4 > /dev/null || skip "e2fsprogs not installed"

mnt=/tmp/rmbd-ext4
mkdir -p "$mnt"

target_setup fs 1G
dev=$(dev_connect fs)
log "connected /dev/$dev ($(blockdev --getsize64 "/dev/$dev") bytes)"

mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1,nodiscard "/dev/$dev" ||
	fail "mkfs.ext4 failed"
mount -t ext4 "/dev/$dev" "$mnt" || fail "mount failed"

mkdir "$mnt/dir"
for i in 1 2 3 4; do
	dd if=/dev/urandom of="$mnt/file$i" bs=1M count=8 status=none
done
for i in $(seq 1 200); do
	head -c $(( RANDOM * 3 )) /dev/urandom > "$mnt/dir/small$i"
done
(cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > /tmp/ext4.sha256
log "wrote $(wc -l < /tmp/ext4.sha256) files, $(du -sm "$mnt" | cut -f1) MiB"
sync
umount "$mnt" || fail "umount failed"
e2fsck -fn "/dev/$dev" > /tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; fail "fsck after umount"; }

dev_disconnect "$dev"
dev=$(dev_connect fs)
log "reconnected as /dev/$dev"
# Nothing may come from the page cache of the old device.
echo 3 > /proc/sys/vm/drop_caches

mount -t ext4 "/dev/$dev" "$mnt" || fail "mount after reconnect failed"
(cd "$mnt" && sha256sum --quiet -c /tmp/ext4.sha256) || fail "checksums differ after reconnect"
log "all $(wc -l < /tmp/ext4.sha256) checksums match after reconnect"
umount "$mnt"
e2fsck -fn "/dev/$dev" > /tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; fail "fsck after reconnect"; }
dev_disconnect "$dev"
