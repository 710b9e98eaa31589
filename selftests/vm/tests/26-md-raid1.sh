#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md raid1 of an rmbd device and a local disk (brd here), the local side
# write-mostly so that reads go to remote memory, with a write-intent
# bitmap: Infiniswap's backup disk, done with md, with ext4 on it.  fio
# writes and verifies a file, pass after pass, while the target's link
# goes down twice; fio sees no error, and the array runs degraded on the
# local disk meanwhile:
# 1. with the rmbd member failfast, md fails it as soon as the device
#    notices the loss, before the loss timeout; the device reconnects by
#    itself and is re-added;
# 2. without, md fails it once the loss timeout ends; the device gives
#    up, is connected again and re-added.
# Each time the bitmap resync copies what changed, not the whole, and a
# check finds no mismatch.  Last, with the local disk failed, the pass
# written while the rmbd side was away reads back intact from remote
# memory alone, and fsck finds the file system clean.
# timeout=600

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
for t in mdadm fio mkfs.ext4; do
	command -v "$t" > /dev/null || skip "$t not installed"
done

loss=8
md=/dev/md/rmbd-mirror
mnt=/tmp/rmbd-md
out=/run/rmbd-md
mkdir -p "$out" "$mnt"
rm -f "$out/stop" "$out/passes"

cleanup() {
	link_up 2> /dev/null || true
	touch "$out/stop"
	if [[ -n ${fio_pid:-} ]]; then
		pkill -P "$fio_pid" 2> /dev/null || true
		kill "$fio_pid" 2> /dev/null || true
		wait "$fio_pid" 2> /dev/null || true
	fi
	umount "$mnt" 2> /dev/null || true
	if [[ -e $md ]]; then
		mdadm --stop "$md" > /dev/null 2>&1 || true
	fi
	if lsmod | grep -q '^brd '; then
		rmmod brd 2> /dev/null || true
	fi
}
trap cleanup EXIT

modprobe raid1 || fail "cannot load raid1"
lsmod | grep -q '^brd ' && fail "brd is loaded already"
# brd's rd_size is in KiB: a 256M local disk.
modprobe brd rd_nr=1 rd_size=262144 max_part=0 || fail "cannot load brd"
local_dev=ram0

target_setup mirror 256M
dev=$(dev_connect mirror reconnect_delay 1 loss_timeout "$loss")

# Both sides start zeroed (an export is zeroed, so is brd): no initial
# resync is needed, and the check below would find one that was.
mdadm --create "$md" --run --quiet --level=1 --raid-devices=2 --metadata=1.2 \
	--bitmap=internal --bitmap-chunk=1M --assume-clean "/dev/$dev" --write-mostly "/dev/$local_dev" \
	> "$out/create" 2>&1 || { cat "$out/create"; fail "mdadm --create failed"; }
mdname=$(basename "$(readlink -f "$md")")
sysmd=/sys/block/$mdname/md
grep -q write_mostly "$sysmd/dev-$local_dev/state" ||
	fail "$local_dev is not write-mostly: $(cat "$sysmd/dev-$local_dev/state")"
log "$md ($mdname): /dev/$dev and /dev/$local_dev (write-mostly), $(blockdev --getsize64 "$md") bytes"

# Everything written now: no lazy initialization writing later.
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$md" ||
	fail "mkfs.ext4 on $md failed"
mount -t ext4 "$md" "$mnt" || fail "mount $md failed"

member_state() { cat "$sysmd/dev-$1/state" 2> /dev/null || echo gone; }
reads_of() { awk '{print $3}' "/sys/block/$1/stat"; }	# sectors read
writes_of() { awk '{print $7}' "/sys/block/$1/stat"; }	# sectors written

# fio passes over a 96M file until told to stop: random
# writes with a checksum per block, each pass with its own seed, then
# every block read back and checked.  Any error or mismatch ends the
# loop with fio's exit status.
fio_job() {	# SEED EXTRA...
	local seed=$1
	shift
	fio --name=mirror --filename="$mnt/data" --size=96M --rw=randwrite --bs=16k \
		--iodepth=8 --ioengine=libaio --direct=1 --verify=crc32c \
		--verify_fatal=1 --verify_state_save=0 --randseed="$seed" "$@"
}
passes() { cat "$out/passes" 2> /dev/null || echo 0; }
fio_start() {
	rm -f "$out/stop"
	(
		pass=$(passes)
		while [[ ! -e $out/stop ]]; do
			pass=$(( pass + 1 ))
			fio_job "$pass" --do_verify=1 > "$out/fio.$pass.out" 2>&1 || {
				tail -n 20 "$out/fio.$pass.out"
				exit 1
			}
			echo "$pass" > "$out/passes"
		done
	) &
	fio_pid=$!
}
# Let the pass under way finish, then stop; every pass must have passed.
fio_stop() {	# WHAT
	local rc=0
	touch "$out/stop"
	wait_exit "$fio_pid" 120 "fio did not stop"
	wait "$fio_pid" || rc=$?
	fio_pid=
	(( rc == 0 )) || fail "fio failed: $1"
}
fio_start
wait_passes() {	# N SECONDS WHAT
	local i
	for (( i = 0; i < $2 * 10; i++ )); do
		(( $(passes) >= $1 )) && return 0
		kill -0 "$fio_pid" 2> /dev/null || break
		sleep 0.1
	done
	kill -0 "$fio_pid" 2> /dev/null || { wait "$fio_pid" || true; fail "fio failed: $3"; }
	fail "fio did not finish pass $1 in $2 s: $3"
}

r0=$(reads_of "$dev")
wait_passes 1 120 "healthy array"
r=$(( $(reads_of "$dev") - r0 ))
log "pass 1 on the whole array; /dev/$dev read $(( r >> 11 )) MiB of it"
# Reads go to the rmbd side: fio read back its 96M there.
(( r >= 96 << 11 )) || fail "/dev/$dev read $(( r >> 11 )) MiB, expected the 96 MiB fio verified"

# The target's link goes down; md must fail the rmbd member within
# LIMIT seconds, with fio running on.  Prints how long it took (ms).
outage() {	# LIMIT
	local st t0 i
	link_down
	t0=$(usec)
	for (( i = 0; ; i++ )); do
		st=$(member_state "$dev")
		[[ $st == *faulty* ]] && break
		kill -0 "$fio_pid" 2> /dev/null ||
			{ wait "$fio_pid" || true; fail "fio failed while md was failing /dev/$dev"; }
		(( $(usec) - t0 < $1 * 1000000 )) ||
			fail "md did not fail /dev/$dev in $1 s (state $st, device $(dev_field "$dev" state))"
		sleep 0.1
	done
	[[ $(cat "$sysmd/degraded") == 1 ]] || fail "array not degraded"
	echo $(( ($(usec) - t0) / 1000 ))
}

# Re-add /dev/$dev and wait for the resync; it must copy what changed,
# not the whole.
readd() {
	local w0 w t0 i size
	w0=$(writes_of "$dev")
	t0=$(usec)
	mdadm "$md" --re-add "/dev/$dev" > "$out/readd" 2>&1 ||
		{ cat "$out/readd"; fail "mdadm --re-add /dev/$dev failed"; }
	# mdadm --wait returns 1 when there was nothing to wait for.
	mdadm --wait "$md" > /dev/null 2>&1 || true
	for (( i = 0; i < 600; i++ )); do
		[[ $(cat "$sysmd/degraded") == 0 && $(cat "$sysmd/sync_action") == idle ]] && break
		sleep 0.1
	done
	[[ $(cat "$sysmd/degraded") == 0 ]] || fail "array still degraded after the re-add: $(cat /proc/mdstat)"
	w=$(( $(writes_of "$dev") - w0 ))
	size=$(blockdev --getsize64 "$md")
	log "re-added /dev/$dev: resync wrote $(( w >> 11 )) MiB of $(( size >> 20 )) in $(( ($(usec) - t0) / 1000 )) ms"
	(( w > 0 )) || fail "the resync wrote nothing to /dev/$dev"
	# fio wrote 96M while the rmbd side was away, ext4 its journal and
	# metadata: that, in 1M bitmap chunks, not the whole.
	(( w < size >> 10 )) ||
		fail "the resync wrote $(( w >> 11 )) MiB of $(( size >> 20 )): the bitmap was not used"
	echo check > "$sysmd/sync_action"
	sleep 0.5
	mdadm --wait "$md" > /dev/null 2>&1 || true
	for (( i = 0; i < 600; i++ )); do
		[[ $(cat "$sysmd/sync_action") == idle ]] && break
		sleep 0.1
	done
	mm=$(cat "$sysmd/mismatch_cnt")
	log "check: mismatch_cnt $mm"
	[[ $mm == 0 ]] || fail "the halves differ in $mm sectors after the resync"
}

# 1. A failfast member (md marks it so when the array has another
# good one): md's requests fail as soon as the device notices the loss,
# not after its loss timeout; the device stays and reconnects by itself
# once the link is back, and the same device is re-added.
echo failfast > "$sysmd/dev-$dev/state"
grep -q failfast "$sysmd/dev-$dev/state" || fail "md did not take failfast on /dev/$dev"
dt=$(outage 30)
state=$(dev_field "$dev" state)
log "failfast: md failed /dev/$dev after $dt ms, loss_timeout $loss s; the device is $state"
[[ $state != failed ]] || fail "failfast: md failed /dev/$dev only once the device gave up"
link_up
p=$(passes)
wait_passes $(( p + 1 )) 120 "degraded array (failfast)"
fio_stop "degraded array (failfast)"
log "fio: $(passes) passes, none failed"
wait_live_again "$dev" > /dev/null
mdadm "$md" --remove "/dev/$dev" > "$out/remove" 2>&1 ||
	{ cat "$out/remove"; fail "mdadm --remove /dev/$dev failed"; }
readd
fio_start

# 2. No failfast: md's requests wait out the loss timeout like any
# other, then fail, and the device gives up.
echo -failfast > "$sysmd/dev-$dev/state"
dt=$(outage $(( loss + 30 )))
state=$(dev_field "$dev" state)
log "md failed /dev/$dev after $dt ms (loss_timeout $loss s); the device is $state"
(( dt >= loss * 1000 )) || fail "md failed /dev/$dev after $dt ms, within loss_timeout $loss s"
[[ $state == failed ]] || fail "the device is $state after its loss timeout"
# The device has given up: md keeps it out whether the target comes back
# or not.  (The link comes back now, before the target ends the silent
# session: over rxe, a session the target releases while the link is
# down leaves the connection manager deaf for good.)
link_up
# Two whole passes on the local disk alone: the last one is written
# only there until the resync.
p=$(passes)
wait_passes $(( p + 2 )) 120 "degraded array"
fio_stop "degraded array"
last=$(passes)
log "fio: $last passes, none failed; passes $(( p + 1 ))..$last on the degraded array"

# Back: remove the failed member, connect again (the target kept the
# memory), re-add; the bitmap says what to copy.
mdadm "$md" --remove "/dev/$dev" > "$out/remove" 2>&1 ||
	{ cat "$out/remove"; fail "mdadm --remove /dev/$dev failed"; }
dev_disconnect "$dev"
wait_live_link
dev=$(dev_connect mirror reconnect_delay 1 loss_timeout "$loss")
readd

# The local disk out: what fio wrote last, while the rmbd side was away,
# must come from remote memory alone.
mdadm "$md" --fail "/dev/$local_dev" --remove "/dev/$local_dev" > "$out/fail" 2>&1 ||
	{ cat "$out/fail"; fail "mdadm --fail /dev/$local_dev failed"; }
r0=$(reads_of "$dev")
fio_job "$last" --verify_only > "$out/fio.verify.out" 2>&1 ||
	{ tail -n 20 "$out/fio.verify.out"; fail "pass $last read back wrong from /dev/$dev"; }
r=$(( $(reads_of "$dev") - r0 ))
(( r >= 96 << 11 )) || fail "the verify read $(( r >> 11 )) MiB from /dev/$dev, expected 96"
log "pass $last verified from /dev/$dev alone"
umount "$mnt" || fail "umount $md failed"
e2fsck -fn "$md" > "$out/fsck" 2>&1 || { cat "$out/fsck"; fail "fsck on $md"; }

mdadm --stop "$md" > "$out/stop.out" 2>&1 || { cat "$out/stop.out"; fail "mdadm --stop failed"; }
dev_disconnect "$dev"
rmmod brd || fail "cannot unload brd"
rmbd_ok export del mirror
