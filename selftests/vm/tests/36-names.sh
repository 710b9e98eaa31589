#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stable names, sysfs and uevents, with udevd running the project's rule
# (tools/udev/60-rmbd.rules) and no other:
# - /sys/block/rmbdN/rmbd/ says what netlink says: state, layout, legs,
#   target address, port, export, host, the export's serial (distinct per
#   export, the same across a reconnect) and the by-id name;
# - /dev/disk/by-id/rmbd-<addr>-<export> and its -partN links, by-uuid
#   links of ext4 and swap on partitions, by-label and by-partuuid;
#   blkid -U, mount UUID= and swapon UUID= find them;
# - the link goes down: sysfs shows reconnecting (the leg down), each
#   change comes as a change uevent with RMBD_EVENT and RMBD_STATE
#   (link-down, reconnecting, live), the links stay while the device is
#   not live, and are there when it is live again;
# - a disconnect removes the links.
# timeout=240

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
udevd=/lib/systemd/systemd-udevd
[[ -x $udevd ]] || fail "$udevd not installed (selftests/deps.sh installs udev)"
for t in udevadm unshare sfdisk mkfs.ext4 mkswap blkid swapon; do
	command -v "$t" > /dev/null || fail "$t not installed"
done

rules=/run/rmbd-names-rules
mon=/run/rmbd-names-uevents
mnt=/run/rmbd-names-mnt
udevd_pid= mon_pid=
cleanup() {
	link_up 2> /dev/null || true
	[[ -n $mon_pid ]] && kill "$mon_pid" 2> /dev/null
	swapoff -a 2> /dev/null || true
	umount "$mnt" 2> /dev/null || true
	rmbd_reset > /dev/null 2>&1 || true
	udevadm settle -t 10 2> /dev/null || true
	[[ -n $udevd_pid ]] && kill "$udevd_pid" 2> /dev/null
	rm -rf "$rules" "$mon" "$mnt"
	return 0
}
trap cleanup EXIT
mkdir -p "$rules" "$mnt"

# udevd with rmbd's rule only, in a mount namespace of its own where the
# rule directories hold just that: the VM's root is the host's, whose
# rules are for other hardware.
cp "$RMBD_REPO/tools/udev/60-rmbd.rules" "$rules/"
unshare --mount --propagation private bash -c '
	mount --bind "$1" /usr/lib/udev/rules.d &&
	mount -t tmpfs tmpfs /etc/udev/rules.d &&
	exec "$2" --resolve-names=never' _ "$rules" "$udevd" \
	> /run/rmbd-names-udevd.log 2>&1 &
udevd_pid=$!
for (( i = 0; i < 100; i++ )); do
	udevadm control --ping 2> /dev/null && break
	kill -0 "$udevd_pid" 2> /dev/null || fail "udevd exited: $(cat /run/rmbd-names-udevd.log)"
	sleep 0.1
done
udevadm control --ping || fail "udevd does not answer"

# Wait up to SECONDS for DEV's state in sysfs to be STATE.
wait_state() {		# DEV STATE SECONDS WHAT
	local t0
	t0=$(usec)
	until [[ $(sysattr "$1" state) == "$2" ]]; do
		(( $(usec) - t0 < $3 * 1000000 )) ||
			fail "$1: state $(sysattr "$1" state) $3 s after $4"
		sleep 0.1
	done
}
settle() { udevadm settle -t 60 || fail "udev events still queued after 60 s"; }
sysattr() { cat "/sys/block/$1/rmbd/$2"; }	# DEV ATTR
# LINK must lead to /dev/DEV
points_to() {		# LINK DEV
	[[ -L $1 ]] || fail "$1 is not there: $(ls -l "$(dirname "$1")" 2>&1 | tail -n +2 | tr '\n' ';')"
	[[ $(readlink -f "$1") == "/dev/$2" ]] || fail "$1 leads to $(readlink -f "$1"), not /dev/$2"
}

target_setup names0 64M
target_setup names1 32M
d0=$(dev_connect names0)
d1=$(dev_connect names1)
settle

# ---- sysfs ---------------------------------------------------------------

for d in "$d0" "$d1"; do
	[[ -d /sys/block/$d/rmbd ]] || fail "/sys/block/$d/rmbd is missing"
	exp=$(dev_field "$d" export)
	for a in state layout addr port export host; do
		want=$(dev_field "$d" "$a")
		[[ $(sysattr "$d" "$a") == "$want" ]] ||
			fail "$d: rmbd/$a is '$(sysattr "$d" "$a")', netlink says '$want'"
	done
	[[ $(sysattr "$d" state) == live ]] || fail "$d: state $(sysattr "$d" state)"
	[[ $(sysattr "$d" addr) == "$RMBD_ADDR" ]] || fail "$d: addr $(sysattr "$d" addr)"
	[[ $(sysattr "$d" legs) == 1 && $(sysattr "$d" leg_state) == up ]] ||
		fail "$d: legs $(sysattr "$d" legs), leg_state $(sysattr "$d" leg_state)"
	[[ $(sysattr "$d" id) == "$RMBD_ADDR-$exp" ]] || fail "$d: id $(sysattr "$d" id)"
	[[ $(sysattr "$d" serial) =~ ^[0-9a-f]{16}$ ]] || fail "$d: serial '$(sysattr "$d" serial)'"
	# Read-only: a write is refused.
	if echo x 2> /dev/null > "/sys/block/$d/rmbd/state"; then
		fail "$d: rmbd/state took a write"
	fi
	points_to "/dev/disk/by-id/rmbd-$RMBD_ADDR-$exp" "$d"
done
serial0=$(sysattr "$d0" serial)
[[ $serial0 != "$(sysattr "$d1" serial)" ]] || fail "two exports, one serial $serial0"
log "sysfs: $(for a in state layout legs addr port export serial id; do printf '%s=%s ' "$a" "$(sysattr "$d0" "$a")"; done)"
log "by-id: rmbd-$RMBD_ADDR-names0 -> $d0, rmbd-$RMBD_ADDR-names1 -> $d1"

# ---- file system and swap on partitions, by UUID -------------------------

fsuuid=$(cat /proc/sys/kernel/random/uuid)
swuuid=$(cat /proc/sys/kernel/random/uuid)
printf 'label: gpt\n,24M\n,\n' | sfdisk -q "/dev/$d0" || fail "sfdisk on $d0 failed"
settle
wait_node "/dev/${d0}p2" || fail "/dev/${d0}p2 did not appear"
mkfs.ext4 -q -F -U "$fsuuid" -L rmbdnames "/dev/${d0}p1" || fail "mkfs.ext4 failed"
mkswap -q -U "$swuuid" "/dev/${d0}p2" > /dev/null || fail "mkswap failed"
settle
points_to "/dev/disk/by-id/rmbd-$RMBD_ADDR-names0-part1" "${d0}p1"
points_to "/dev/disk/by-id/rmbd-$RMBD_ADDR-names0-part2" "${d0}p2"
points_to "/dev/disk/by-uuid/$fsuuid" "${d0}p1"
points_to "/dev/disk/by-uuid/$swuuid" "${d0}p2"
points_to /dev/disk/by-label/rmbdnames "${d0}p1"
partuuid=$(blkid -s PARTUUID -o value "/dev/${d0}p1")
[[ -n $partuuid ]] || fail "${d0}p1 has no PARTUUID"
points_to "/dev/disk/by-partuuid/$partuuid" "${d0}p1"
[[ $(blkid -U "$fsuuid") == "/dev/${d0}p1" ]] || fail "blkid -U $fsuuid: $(blkid -U "$fsuuid")"
mount UUID="$fsuuid" "$mnt" || fail "mount UUID=$fsuuid failed"
echo names > "$mnt/f"
swapon UUID="$swuuid" || fail "swapon UUID=$swuuid failed"
grep -q "^/dev/${d0}p2 " /proc/swaps || fail "swap is not on ${d0}p2: $(cat /proc/swaps)"
log "by-uuid: ext4 on ${d0}p1 and swap on ${d0}p2, mounted and swapped on by UUID; by-label, by-partuuid, -partN"

# ---- state changes: sysfs and uevents ------------------------------------

udevadm monitor --kernel --property --subsystem-match=block > "$mon" &
mon_pid=$!
sleep 0.5
link_down
wait_state "$d0" reconnecting 20 "its link went down"
[[ $(sysattr "$d0" leg_state) == down ]] || fail "$d0 reconnecting, its leg $(sysattr "$d0" leg_state)"
settle
# Not probed while it is not live: the links stay.
points_to "/dev/disk/by-uuid/$fsuuid" "${d0}p1"
points_to "/dev/disk/by-id/rmbd-$RMBD_ADDR-names0" "$d0"
sleep 1
link_up
wait_state "$d0" live 60 "its link came back"
[[ $(sysattr "$d0" serial) == "$serial0" ]] || fail "$d0: serial $serial0 became $(sysattr "$d0" serial) on reconnect"
settle
sleep 0.5
kill "$mon_pid"
wait "$mon_pid" 2> /dev/null || true
mon_pid=
# The change uevents of d0, as "EVENT/STATE" in order.
events=$(awk -v dev="DEVNAME=/dev/$d0" '
	/^KERNEL\[/ { ev = ""; st = ""; mine = 0; change = ($2 == "change") }
	$0 == dev { mine = 1 }
	/^RMBD_EVENT=/ { ev = substr($0, 12) }
	/^RMBD_STATE=/ { st = substr($0, 12) }
	/^$/ { if (mine && change && ev != "") print ev "/" st; mine = 0 }
	END { if (mine && change && ev != "") print ev "/" st }' "$mon" | tr '\n' ' ')
log "uevents of $d0: $events"
[[ $events == "link-down/reconnecting "*"reconnecting/reconnecting "*"live/live " ]] ||
	fail "$d0: change uevents '$events', not link-down/reconnecting, reconnecting/reconnecting ... live/live"
settle
points_to "/dev/disk/by-uuid/$fsuuid" "${d0}p1"
[[ $(cat "$mnt/f") == names ]] || fail "the file on ${d0}p1 reads back wrong after the reconnect"
log "link down: sysfs reconnecting, leg down, links kept; live again, same serial"

# ---- disconnect ------------------------------------------------------------

swapoff "/dev/${d0}p2" || fail "swapoff failed"
umount "$mnt" || fail "umount failed"
dev_disconnect "$d0" > /dev/null
settle
for l in "/dev/disk/by-id/rmbd-$RMBD_ADDR-names0" "/dev/disk/by-id/rmbd-$RMBD_ADDR-names0-part1" \
	 "/dev/disk/by-uuid/$fsuuid" "/dev/disk/by-uuid/$swuuid"; do
	[[ ! -e $l && ! -L $l ]] || fail "$l is still there after the disconnect"
done
points_to "/dev/disk/by-id/rmbd-$RMBD_ADDR-names1" "$d1"
log "disconnect: $d0's links gone, $d1's there"
