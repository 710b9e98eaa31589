#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Encrypted swap on remote memory, as crypttab's "swap" option sets it up:
# dm-crypt in plain mode with a random key over a 512M export, the only
# swap.  swapverify writes a 96 MiB working set (48 on the debug kernel)
# from a cgroup v2 group whose memory.max is 24M (12), twice, the second
# pass held in swap while the swap area is read through dm-crypt and
# raw: every page that reads back as data through dm-crypt must differ on
# the rmbd device (the target never sees the plaintext).  Every byte
# must come back intact, no OOM kill, pswpout and pswpin must grow by at
# least the working set beyond the limit, and the rmbd device must have
# taken the writes.  swapoff, close and disconnect end it cleanly.
# timeout=420

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
require_swapverify cryptsetup

ws=$(rounds 96 48)
limit=$(rounds 24 12)
name=rmbd-cswap
g=/sys/fs/cgroup/rmbd-cswap
out=/run/rmbd-cswap
mkdir -p "$out"

cleanup() {
	if [[ -d $g ]]; then
		xargs -r kill -9 < "$g/cgroup.procs" 2> /dev/null || true
		for (( i = 0; i < 50; i++ )); do
			rmdir "$g" 2> /dev/null && break
			sleep 0.1
		done
	fi
	swapoff "/dev/mapper/$name" 2> /dev/null || true
	if [[ -e /dev/mapper/$name ]]; then
		cryptsetup close "$name" 2> /dev/null || true
	fi
}
trap cleanup EXIT

grep -qw memory /sys/fs/cgroup/cgroup.controllers || fail "no memory controller in cgroup v2"
echo +memory > /sys/fs/cgroup/cgroup.subtree_control || fail "cannot enable the memory controller"
mkdir -p "$g"
echo "${limit}M" > "$g/memory.max"
[[ -f $g/memory.swap.max ]] && echo max > "$g/memory.swap.max"

target_setup cswap 512M
dev=$(dev_connect cswap)
cryptsetup open --type plain --cipher aes-xts-plain64 --key-size 512 \
	--key-file /dev/urandom "/dev/$dev" "$name" > "$out/open" 2>&1 ||
	{ cat "$out/open"; fail "cryptsetup open over /dev/$dev failed"; }
# The mapping sits on the rmbd device and nothing else.
deps=$(dmsetup deps -o devname "$name")
[[ $deps == *"($dev)"* && $(dmsetup table "$name") == *" crypt "* ]] ||
	fail "$name is not dm-crypt over /dev/$dev: $deps; $(dmsetup table "$name")"
swap_only_on "mapper/$name"
log "encrypted swap /dev/mapper/$name over /dev/$dev: $(awk -v d="/dev/mapper/$name" '$1 == d {print $3 " KiB"}' /proc/swaps)"

writes_of() { awk '{print $7}' "/sys/block/$1/stat"; }	# sectors written

swpout0=$(vmstat_get pswpout)
in0=$(vmstat_get pswpin)
w0=$(writes_of "$dev")
t0=$(date +%s)
sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$g" \
	"$swapverify" -m "$ws" -p 2 -w > "$out/sv" 2>&1 &
pid=$!
for (( i = 0; i < 3000; i++ )); do
	grep -q 'waiting for SIGUSR1' "$out/sv" && break
	kill -0 "$pid" 2> /dev/null || break
	sleep 0.1
done
grep -q 'waiting for SIGUSR1' "$out/sv" || { cat "$out/sv"; fail "swapverify did not finish writing"; }

used=$(awk -v d="/dev/mapper/$name" '$1 == d {print $4}' /proc/swaps)
(( used >= (ws - limit) * 1024 )) ||
	fail "only $(( used >> 10 )) MiB in swap, expected $(( ws - limit )) MiB"
# The working set is out: read the used part of the swap area both ways
# (past the first page, mkswap's header), the first 32M of it at most,
# and compare page by page.
pages=$(( used / 4 ))
(( pages <= 8192 )) || pages=8192
rm -rf "$out/p" "$out/r"
mkdir "$out/p" "$out/r"
dd if="/dev/mapper/$name" of="$out/plain" bs=4k skip=1 count="$pages" iflag=direct status=none ||
	fail "cannot read /dev/mapper/$name"
dd if="/dev/$dev" of="$out/raw" bs=4k skip=1 count="$pages" iflag=direct status=none ||
	fail "cannot read /dev/$dev"
(cd "$out/p" && split -b 4096 -a 5 ../plain x && sha256sum x*) > "$out/plain.sum"
(cd "$out/r" && split -b 4096 -a 5 ../raw x && sha256sum x*) > "$out/raw.sum"
zero=$(head -c 4096 /dev/zero | sha256sum | cut -d' ' -f1)
read -r data same < <(paste -d' ' "$out/plain.sum" "$out/raw.sum" |
	awk -v z="$zero" '$1 != z { d++; if ($1 == $3) s++ } END { print d + 0, s + 0 }')
rm -rf "$out/p" "$out/r" "$out/plain" "$out/raw"
log "swap area: $data of $pages pages hold data through dm-crypt, $same of them the same on /dev/$dev"
(( data >= pages / 2 )) || fail "only $data of $pages pages in the swap area hold data"
(( same == 0 )) || fail "$same pages reached the target unencrypted"

kill -USR1 "$pid"
rc=0
wait "$pid" || rc=$?
sed 's/^/  /' "$out/sv"
(( rc == 0 )) || fail "swapverify exited with $rc"
grep -q ' 0 mismatched bytes in 0 pages' "$out/sv" || fail "swapverify printed no clean summary"
[[ $(oom_kills "$g") == 0 ]] || fail "memory.events: oom_kill $(oom_kills "$g")"
swpout=$(( $(vmstat_get pswpout) - swpout0 ))
in=$(( $(vmstat_get pswpin) - in0 ))
w=$(( $(writes_of "$dev") - w0 ))
log "$(( $(date +%s) - t0 )) s: pswpout $swpout pages, pswpin $in pages, /dev/$dev wrote $(( w >> 11 )) MiB"
min=$(( (ws - limit) * 256 ))
(( swpout >= min )) || fail "pswpout grew by $swpout pages, expected at least $min"
(( in >= min )) || fail "pswpin grew by $in pages, expected at least $min"
(( w >= swpout * 8 )) || fail "/dev/$dev wrote $w sectors for $swpout pages swapped out"

swapoff "/dev/mapper/$name" || fail "swapoff failed"
cryptsetup close "$name" || fail "cryptsetup close failed"
dev_disconnect "$dev"
rmbd_ok export del cswap
