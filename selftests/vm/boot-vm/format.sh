#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The client's first boot (rmbd-test-format.service), after its
# rmbd-dev@swap and rmbd-dev@data units connected the target's swap0 and
# data0, which hold nothing yet (the target's memory starts empty): swap
# with the UUID the second boot's fstab names, ext4 likewise with a file
# of random data on it, whose sha256 the host hands on to the second
# boot.  Then the VM powers off: the units' stop path with nothing on
# the devices.

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

client_devices
check "mkswap -U $SWAP_UUID on $swap" mkswap -U "$SWAP_UUID" "$swap"
check "mkfs.ext4 -U $DATA_UUID on $data" mkfs.ext4 -q -F -U "$DATA_UUID" "$data"
mkdir -p /run/rmbd-test-mnt
if mount -t ext4 "$data" /run/rmbd-test-mnt; then
	head -c 4M /dev/urandom > /run/rmbd-test-mnt/marker
	(cd /run/rmbd-test-mnt && sha256sum marker) > "$out/marker.sha256"
	check "the marker file is written and the file system unmounted" \
		umount /run/rmbd-test-mnt
else
	not_ok "mount $data"
fi
# udev watches the devices (60-rmbd.rules): the new contents give them
# their by-uuid links.
udevadm settle
for u in "$SWAP_UUID" "$DATA_UUID"; do
	check "/dev/disk/by-uuid/$u" test -b "/dev/disk/by-uuid/$u"
done
systemd_health
save_logs ""
echo 'done' > "$out/done"
systemctl poweroff --no-block
