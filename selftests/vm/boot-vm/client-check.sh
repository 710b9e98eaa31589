#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The client's second boot (rmbd-test-check.service, after
# multi-user.target and the swap unit): the fstab's swap and ext4 on
# rmbd devices came up by themselves, by their UUIDs, with the data of
# the first boot, which the target kept.  Then the VM powers off, and the
# stop records (record-stop.sh) show the order of the shutdown.

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

client_devices

# Swap: on, by the fstab's UUID, on the rmbd device.
check "/dev/disk/by-uuid/$SWAP_UUID is $swap" \
	test "$(readlink -f "/dev/disk/by-uuid/$SWAP_UUID")" = "$swap"
check "swapon --show lists $swap" grep -qx "$swap" <(swapon --show=NAME --noheadings)
check "its swap unit is active" systemctl is-active "$SWAP_UNIT"

# /srv/data: ext4 from the rmbd device, with the first boot's file.
check "/srv/data is ext4 on $data" \
	test "$(findmnt -n -o SOURCE,FSTYPE /srv/data)" = "$data ext4"
check "/srv/data/marker holds what the first boot wrote" \
	sha256sum -c --status <(sed 's| marker$| /srv/data/marker|' /etc/rmbd-test/marker.sha256)

# Counters: the marker's read and the boot's swap and mount I/O.
sync
data_reads=$(rmbd -j -s dev show "$data" | jq '.[0].stats.read_bytes')
check "rmbd -s dev show $data counts reads ($data_reads bytes, the 4M marker at least)" \
	test "${data_reads:-0}" -ge $((4 << 20))
check "rmbd -s dev show counts no request that ended in an error" \
	test "$(rmbd -j -s dev show | jq '[.[].stats.errors] | add')" = 0

# The configuration as the units applied it.
for f in /etc/rmbd/dev.d/*.conf; do
	check "rmbd config check $f exits 0" rmbd config check "$f"
done
before=$(rmbd -j dev show | jq -c '[.[].name] | sort')
for f in /etc/rmbd/dev.d/*.conf; do
	check "rmbd config apply $f again exits 0" rmbd config apply "$f"
done
after=$(rmbd -j dev show | jq -c '[.[].name] | sort')
check "... and changes nothing: devices $before, then $after" \
	test "$before" = "$after" -a "$(jq length <<< "$after")" = 2

# udev's rule for rmbd (60-rmbd.rules) named the devices.
check "/dev/disk/by-id/rmbd-$TARGET_ADDR-swap0 and -data0 exist" \
	test -b "/dev/disk/by-id/rmbd-$TARGET_ADDR-swap0" -a -b "/dev/disk/by-id/rmbd-$TARGET_ADDR-data0"

systemd_health
save_logs ""
echo 'done' > "$out/done"
systemctl poweroff --no-block
