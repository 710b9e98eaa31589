#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Module unload: rmmod rmbd_client is refused while a device is mounted
# (and the mount keeps working), succeeds with a connected but unused
# device and removes it; rmmod rmbd_target with an export and a listener
# succeeds and gives the export's memory back; both load again and a fresh
# connect works.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

mnt=/tmp/rmbd-unload
mkdir -p "$mnt"

# Big enough that a leaked export stands far above the noise (~40 MiB).
size=512M
avail0=$(mem_avail)

target_setup unload "$size"
mem=$(export_field unload mem)
held=$(( avail0 - $(mem_avail) ))
log "export of $size: mem $(( mem >> 20 )) MiB, MemAvailable fell by $(( held >> 20 )) MiB"
# Otherwise the check after unloading proves nothing.
(( held > (256 << 20) )) || fail "the export does not seem to hold its memory"
dev=$(dev_connect unload)
log "/dev/$dev connected"

mkfs.ext4 -q -F -E nodiscard "/dev/$dev" || fail "mkfs.ext4 failed"
mount "/dev/$dev" "$mnt" || fail "mount failed"
if rmmod rmbd_client 2> /tmp/rmmod.err; then
	fail "rmmod rmbd_client succeeded with /dev/$dev mounted"
fi
log "rmmod rmbd_client refused while mounted: $(cat /tmp/rmmod.err)"
[[ -d /sys/module/rmbd_client ]] || fail "rmbd_client is gone"
# Written after the refused rmmod, then read back from the device (not
# the page cache) and again after a remount.
head -c 4M /dev/urandom > /tmp/unload.src
cp /tmp/unload.src "$mnt/after-rmmod" && sync || fail "writing a file after the refused rmmod failed"
echo 3 > /proc/sys/vm/drop_caches
cmp /tmp/unload.src "$mnt/after-rmmod" || fail "the file written after the refused rmmod reads back wrong"
umount "$mnt"
mount "/dev/$dev" "$mnt" || fail "remount failed"
cmp /tmp/unload.src "$mnt/after-rmmod" || fail "file changed across remount"
umount "$mnt"
log "the mount kept working"

rmmod rmbd_client || fail "rmmod rmbd_client with an unused connected device failed"
[[ ! -d /sys/module/rmbd_client ]] || fail "rmbd_client still loaded"
[[ -z $(dev_nodes) ]] || fail "device nodes left after rmmod: $(dev_nodes)"
log "rmmod rmbd_client removed /dev/$dev"

# The target must notice the client went away.
for (( i = 0; i < 100; i++ )); do
	[[ $(export_field unload sessions) == 0 ]] && break
	sleep 0.1
done
[[ $(export_field unload sessions) == 0 ]] ||
	fail "export still has $(export_field unload sessions) sessions after the client module left"

rmmod rmbd_target || fail "rmmod rmbd_target with an export and a listener failed"
[[ ! -d /sys/module/rmbd_target ]] || fail "rmbd_target still loaded"
avail1=$(mem_avail)
log "MemAvailable: $(( avail0 >> 20 )) MiB before, $(( avail1 >> 20 )) MiB after unloading"
(( avail1 > avail0 - (64 << 20) )) ||
	fail "the export's memory was not freed: MemAvailable $(( avail0 >> 20 )) -> $(( avail1 >> 20 )) MiB"

rmbd_load_modules || fail "reloading the modules failed"
rmbd_modules_loaded || fail "modules not loaded again"
[[ $(rmbd_cli -j export show | jq length) == 0 ]] || fail "exports survived the reload"
target_setup again 16M
dev=$(dev_connect again)
head -c 1M /dev/urandom > /tmp/unload.img
dd if=/tmp/unload.img of="/dev/$dev" bs=64k oflag=direct status=none || fail "write after reload failed"
dd if="/dev/$dev" of=/tmp/unload.rb bs=64k count=16 iflag=direct status=none || fail "read after reload failed"
cmp /tmp/unload.img /tmp/unload.rb || fail "data mismatch after reload"
dev_disconnect "$dev"
log "after reloading, a fresh connect works"
