#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo, run inside the VM by demo.sh: remote memory as an ext4 file
# system, target and client in one kernel over soft-RoCE.
# timeout=600

set -eu
source "$(dirname "$0")/tests/lib.sh"
require_rmbd

mnt=/tmp/rmbd-demo
mkdir -p "$mnt"

say() { printf '\n==> %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
rmbd() { rmbd_cli "$@"; }

say "Soft-RoCE: rxe0 over the dummy netdev d0 ($RMBD_ADDR)"
run rdma link show

say "Target side: export 1 GiB of RAM as 'demo' and listen on $RMBD_ADDR:$RMBD_PORT"
run rmbd export add demo size 1G
run rmbd listener add "$RMBD_ADDR"
run rmbd export show
run rmbd listener show

say "Client side: connect to the export over RDMA"
printf '$ rmbd dev connect addr %s export demo\n' "$RMBD_ADDR"
dev=$(rmbd dev connect addr "$RMBD_ADDR" export demo)
echo "$dev"
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
run rmbd dev show
run lsblk "/dev/$dev"

say "Make an ext4 file system on /dev/$dev and mount it"
run mkfs.ext4 -q "/dev/$dev"
run mount "/dev/$dev" "$mnt"
run df -h "$mnt"

say "Write files of random data and record their checksums"
for i in 1 2 3; do
	run dd if=/dev/urandom of="$mnt/file$i" bs=1M count=16 status=none
done
run cp -r /usr/share/doc/bash "$mnt/bash-doc"
(cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum) > /tmp/demo.sha256
echo "$(wc -l < /tmp/demo.sha256) files:"
head -n 3 /tmp/demo.sha256
run rmbd export show

say "Unmount and disconnect: the data lives on only in the target's memory"
run umount "$mnt"
run rmbd dev disconnect "$dev"
run rmbd dev show
echo 3 > /proc/sys/vm/drop_caches

say "Reconnect, mount again and verify every checksum"
printf '$ rmbd dev connect addr %s export demo\n' "$RMBD_ADDR"
dev=$(rmbd dev connect addr "$RMBD_ADDR" export demo)
echo "$dev"
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
run rmbd dev show
run mount "/dev/$dev" "$mnt"
(cd "$mnt" && run sha256sum --quiet -c /tmp/demo.sha256) || fail "checksums differ"
echo "all $(wc -l < /tmp/demo.sha256) checksums verified"

say "Clean up"
run umount "$mnt"
run rmbd dev disconnect "$dev"
run rmbd export del demo
run rmbd listener del "$RMBD_ADDR"
