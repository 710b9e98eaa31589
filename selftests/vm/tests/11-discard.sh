#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Discard and write zeroes: the queue limits say both are supported; over
# a 64M device filled with a random pattern, discards and write-zeroes of
# ranges that are not aligned to a slab (2 MiB) and cross slab boundaries
# read back as zeros inside and the pattern outside, also when several run
# at once next to writes; a whole-device discard leaves only zeros.  fstrim
# on ext4 trims the deleted files' blocks to zeros and the remaining files
# keep their checksums.  swapon --discard zeroes all but the swap header,
# swap is used a little and swapoff brings it back intact.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
for t in blkdiscard fstrim mkswap swapon swapoff cmp mkfs.ext4 e2fsck filefrag blkid; do
	command -v "$t" > /dev/null || skip "$t not installed"
done

MiB=$(( 1 << 20 ))
size=$(( 64 * MiB ))
pat=/tmp/rmbd-discard-pattern
exp=/tmp/rmbd-discard-expect
mnt=/tmp/rmbd-discard
cg=/sys/fs/cgroup/rmbd-discard
zswap=/sys/module/zswap/parameters/enabled
zswap_was=

cleanup() {
	if mountpoint -q "$mnt"; then umount "$mnt"; fi
	rm -f "$pat" "$exp" /tmp/rmbd-swapfill
	if [[ -d $cg ]]; then rmdir "$cg"; fi
	if [[ $zswap_was == Y ]]; then echo Y > "$zswap"; fi
	return 0
}
trap cleanup EXIT

target_setup discard 64M
dev=$(dev_connect discard)

# ---- queue limits ---------------------------------------------------------

q=/sys/block/$dev/queue
lbs=$(cat "$q/logical_block_size")
gran=$(cat "$q/discard_granularity")
dmax=$(cat "$q/discard_max_bytes")
wzmax=$(cat "$q/write_zeroes_max_bytes")
log "/dev/$dev: logical block $lbs, discard_granularity $gran," \
	"discard_max_bytes $dmax (hw $(cat "$q/discard_max_hw_bytes")), write_zeroes_max_bytes $wzmax"
(( dmax > 0 )) || fail "discard_max_bytes is 0: no discard"
(( wzmax > 0 )) || fail "write_zeroes_max_bytes is 0: no write zeroes"
(( gran == 4096 )) || fail "discard_granularity is $gran, expected 4096"

# ---- ranges ---------------------------------------------------------------

# The whole device must equal the expected image.
check_all() {	# WHAT
	local first
	if ! dd if="/dev/$dev" bs=1M iflag=direct status=none | cmp - "$exp" > /tmp/cmp.out 2>&1; then
		first=$(dd if="/dev/$dev" bs=1M iflag=direct status=none | cmp -l - "$exp" 2> /dev/null | head -n 3 | tr '\n' ' ')
		fail "$1: the device differs from the expected image: $(head -n 1 /tmp/cmp.out) (byte, got, expected in octal: $first)"
	fi
}

# Only [FROM, FROM + LEN) of the device against the expected image.
check_window() {	# WHAT FROM LEN
	local got=/tmp/rmbd-discard-got want=/tmp/rmbd-discard-want
	dd if="/dev/$dev" of="$got" bs=64k iflag=direct,skip_bytes,count_bytes \
		skip="$2" count="$3" status=none || fail "$1: reading the device failed"
	dd if="$exp" of="$want" bs=64k iflag=skip_bytes,count_bytes \
		skip="$2" count="$3" status=none
	if ! cmp "$got" "$want" > /tmp/cmp.out 2>&1; then
		fail "$1: [$2, +$3) differs: $(head -n 1 /tmp/cmp.out);" \
			"first differences (byte, got, expected): $(cmp -l "$got" "$want" | head -n 3 | tr '\n' ' ')"
	fi
	rm -f "$got" "$want"
}

expect_zeros() {	# OFF LEN
	dd if=/dev/zero of="$exp" bs=64k conv=notrunc oflag=seek_bytes iflag=count_bytes \
		seek="$1" count="$2" status=none
}

# blkdiscard [-z] over [OFF, OFF + LEN), then zeros there and the pattern
# for 1 MiB on both sides.
zero_range() {	# WHAT OFF LEN [-z]
	local what=$1 off=$2 len=$3 from to
	shift 3
	blkdiscard "$@" -o "$off" -l "$len" "/dev/$dev" ||
		fail "blkdiscard $* -o $off -l $len failed"
	expect_zeros "$off" "$len"
	from=$(( off > MiB ? off - MiB : 0 ))
	to=$(( off + len + MiB < size ? off + len + MiB : size ))
	check_window "$what" "$from" $(( to - from ))
	log "$what [$off, +$len): zeros inside, the pattern for" \
		"$(( (off - from) >> 10 )) KiB before and $(( (to - off - len) >> 10 )) KiB after"
}

t0=$(date +%s)
head -c "$size" /dev/urandom > "$pat"
dd if="$pat" of="/dev/$dev" bs=1M oflag=direct status=none || fail "writing the pattern failed"
cp "$pat" "$exp"
log "wrote a 64 MiB random pattern in $(( $(date +%s) - t0 )) s"

slab=$(( 2 * MiB ))
# 4 KiB aligned, across one slab boundary.
zero_range "discard" $(( slab - 12 * 1024 )) $(( 40 * 1024 ))
# Longer than one request: the block layer splits it; across 2 boundaries.
zero_range "discard" $(( 3 * slab + 20 * 1024 )) $(( 2 * slab + 8 * 1024 ))
# 512-byte aligned, inside two 4 KiB blocks and across a slab boundary.
zero_range "discard" $(( 7 * slab - 1536 )) 5120
# The last 6 KiB of the device.
zero_range "discard" $(( size - 6 * 1024 )) $(( 6 * 1024 ))
# Write zeroes: sector aligned, across two slab boundaries.
zero_range "write zeroes" $(( 10 * slab - 1536 )) $(( slab + 2560 )) -z
zero_range "write zeroes" $(( 15 * slab + 512 )) 512 -z

# Several at once on disjoint ranges, next to direct writes of new data.
# -f: otherwise blkdiscard opens the device exclusively.
bd_bg() { blkdiscard -f "$@" "/dev/$dev" 2> >(grep -v 'Operation forced' >&2); }
t0=$(date +%s)
pids=()
for i in 0 1 2 3; do
	off=$(( (16 + i) * slab - (i + 1) * 4096 ))
	bd_bg -o "$off" -l $(( 3 * 4096 + i * 512 * 8 )) & pids+=($!)
	expect_zeros "$off" $(( 3 * 4096 + i * 512 * 8 ))
	off=$(( (20 + i) * slab - (i + 1) * 1024 ))
	bd_bg -z -o "$off" -l $(( 64 * 1024 + i * 512 )) & pids+=($!)
	expect_zeros "$off" $(( 64 * 1024 + i * 512 ))
done
head -c $(( 4 * MiB )) /dev/urandom > /tmp/rmbd-discard-new
dd if=/tmp/rmbd-discard-new of="/dev/$dev" bs=64k seek=$(( 25 * slab / 65536 )) oflag=direct status=none & pids+=($!)
dd if=/tmp/rmbd-discard-new of="$exp" bs=64k seek=$(( 25 * slab / 65536 )) conv=notrunc status=none
rm -f /tmp/rmbd-discard-new
for p in "${pids[@]}"; do
	wait "$p" || fail "a concurrent discard, write zeroes or write failed"
done
check_all "concurrent discards, write zeroes and writes"
log "4 discards, 4 write zeroes and a 4 MiB write at once: the whole device as expected," \
	"$(( $(date +%s) - t0 )) s"

# Whole device.
t0=$(date +%s%N)
blkdiscard "/dev/$dev" || fail "whole-device blkdiscard failed"
t1=$(date +%s%N)
dd if="/dev/$dev" bs=1M iflag=direct status=none | cmp -n "$size" - /dev/zero > /tmp/cmp.out 2>&1 ||
	fail "not all zeros after a whole-device discard: $(head -n 1 /tmp/cmp.out)"
log "whole-device discard of 64 MiB: $(( (t1 - t0) / 1000000 )) ms; all zeros"
rm -f "$pat" "$exp"

# ---- fstrim -------------------------------------------------------------

t0=$(date +%s)
mkdir -p "$mnt"
mkfs.ext4 -q -F -b 4096 -E nodiscard "/dev/$dev" > /tmp/mkfs.out 2>&1 || { cat /tmp/mkfs.out; fail "mkfs.ext4 failed"; }
mount -t ext4 "/dev/$dev" "$mnt" || fail "mount failed"
for i in 1 2 3 4; do
	head -c $(( 2 * MiB + i * 4096 )) /dev/urandom > "$mnt/keep$i"
	head -c $(( 2 * MiB + i * 4096 )) /dev/urandom > "$mnt/del$i"
done
sync
(cd "$mnt" && sha256sum keep*) > /tmp/keep.sha256

# The deleted files' blocks, as "start length" in 4 KiB blocks.
for i in 1 2 3 4; do
	filefrag -e "$mnt/del$i" | awk '$1 ~ /^[0-9]+:$/ { gsub(/\.\./, " "); print $4, $6 + 0 }'
done > /tmp/del.extents
[[ -s /tmp/del.extents ]] || fail "filefrag listed no extents for the files to delete"

# Count the bytes that are not zero in FILE into nz: a failed or short
# read is a failure, never zeros.
count_nonzero() {	# FILE EXPECTED-SIZE
	local got
	got=$(stat -c %s "$1")
	(( got == $2 )) || fail "read $got bytes of /dev/$dev, expected $2"
	nz=$(tr -d '\0' < "$1" | wc -c)
	[[ $nz =~ ^[0-9]+$ ]] || fail "cannot count the bytes of $1"
}

# The non-zero bytes in the deleted files' blocks on the device, into nz.
nonzero() {
	local start len total=0
	: > /tmp/del.bytes
	while read -r start len; do
		dd if="/dev/$dev" bs=4096 skip="$start" count="$len" iflag=direct \
			status=none >> /tmp/del.bytes ||
			fail "reading the blocks $start+$len of /dev/$dev failed"
		total=$(( total + len * 4096 ))
	done < /tmp/del.extents
	count_nonzero /tmp/del.bytes "$total"
}
nonzero
(( nz > 0 )) || fail "the files to delete read as zeros before fstrim"

rm "$mnt"/del*
sync
fstrim -v "$mnt" > /tmp/fstrim.out 2>&1 || { cat /tmp/fstrim.out; fail "fstrim failed"; }
trimmed=$(sed -n 's/.*(\([0-9]*\) bytes) trimmed.*/\1/p' /tmp/fstrim.out)
log "fstrim: $(cat /tmp/fstrim.out)"
[[ -n $trimmed ]] || fail "cannot read the trimmed bytes from fstrim -v"
(( trimmed >= 8 * MiB )) || fail "fstrim trimmed $trimmed bytes, less than the 8 MiB deleted"
nonzero
(( nz == 0 )) || fail "$nz bytes of the deleted files' $(wc -l < /tmp/del.extents) extents are not zero after fstrim"
log "the deleted files' $(wc -l < /tmp/del.extents) extents read as zeros after fstrim"
fstrim -v "$mnt" > /tmp/fstrim.out 2>&1 || { cat /tmp/fstrim.out; fail "second fstrim failed"; }
log "fstrim again: $(cat /tmp/fstrim.out)"

umount "$mnt"
echo 3 > /proc/sys/vm/drop_caches
mount -t ext4 "/dev/$dev" "$mnt" || fail "mount after fstrim failed"
(cd "$mnt" && sha256sum --quiet -c /tmp/keep.sha256) || fail "files kept differ after fstrim"
log "the $(wc -l < /tmp/keep.sha256) files kept match their checksums after a remount"
umount "$mnt"
e2fsck -fn "/dev/$dev" > /tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; fail "fsck after fstrim"; }
log "fsck clean; ext4 part $(( $(date +%s) - t0 )) s"

# ---- swap -----------------------------------------------------------------

t0=$(date +%s)
[[ $(wc -l < /proc/swaps) -le 1 ]] || fail "swap already in use before the test: $(tail -n +2 /proc/swaps)"
mkswap "/dev/$dev" > /dev/null || fail "mkswap failed"
swapon --discard "/dev/$dev" || fail "swapon --discard failed"
grep -q "^/dev/$dev " /proc/swaps || fail "/dev/$dev not in /proc/swaps"
# Everything after the header page was discarded; the header is intact.
dd if="/dev/$dev" of=/tmp/swap.bytes bs=64k iflag=direct,skip_bytes skip=4096 status=none ||
	fail "reading /dev/$dev after swapon --discard failed"
count_nonzero /tmp/swap.bytes $(( size - 4096 ))
rm -f /tmp/swap.bytes
(( nz == 0 )) || fail "$nz bytes after the swap header are not zero after swapon --discard"
[[ $(dd if="/dev/$dev" bs=4096 count=1 iflag=direct status=none | tail -c 10) == SWAPSPACE2 ]] ||
	fail "swapon --discard damaged the swap header"
log "swapon --discard: all but the header page is zeros"

# A little swap use: a tmpfs file of 24 MiB written from a group limited
# to 8 MiB.
if [[ $(cat "$zswap" 2> /dev/null) == Y ]]; then
	zswap_was=Y
	echo N > "$zswap"
fi
grep -qw memory /sys/fs/cgroup/cgroup.controllers || fail "no memory controller in cgroup v2"
echo +memory > /sys/fs/cgroup/cgroup.subtree_control || fail "cannot enable the memory controller"
mkdir -p "$cg"
echo 8M > "$cg/memory.max"
[[ -f $cg/memory.swap.max ]] && echo max > "$cg/memory.swap.max"
sum=$(
	echo "$BASHPID" > "$cg/cgroup.procs"
	head -c $(( 24 * MiB )) /dev/urandom | tee /tmp/rmbd-swapfill | sha256sum | cut -c1-64
)
used=$(awk -v d="/dev/$dev" '$1 == d {print $4}' /proc/swaps)
(( used > 0 )) || fail "no swap used on /dev/$dev"
log "swap in use: $used KiB on /dev/$dev"
# Read back while swapped out (page faults read /dev/$dev), then once
# more after swapoff has brought every page back (with the group's limit
# lifted: the pages are charged to it).
[[ $(sha256sum < /tmp/rmbd-swapfill | cut -c1-64) == "$sum" ]] || fail "the file swapped out differs"
used=$(awk -v d="/dev/$dev" '$1 == d {print $4}' /proc/swaps)
(( used > 0 )) || fail "no swap used on /dev/$dev before swapoff"
echo max > "$cg/memory.max"
swapoff "/dev/$dev" || fail "swapoff failed"
[[ $(sha256sum < /tmp/rmbd-swapfill | cut -c1-64) == "$sum" ]] ||
	fail "the file differs after swapoff brought its $used KiB back"
rm -f /tmp/rmbd-swapfill
rmdir "$cg"
[[ $(blkid -p -o value -s TYPE "/dev/$dev") == swap ]] || fail "no swap signature after swapoff"
log "swapped-out file read back intact, and again after swapoff brought $used KiB back; swap part $(( $(date +%s) - t0 )) s"
dev_disconnect "$dev"
