#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole machine short of memory, swapping onto rmbd.  In a VM of its
# own with 384M, a 128M export is the only swap and a 64M export takes fio
# write+verify passes (crc32c) all along.  The exports are this VM's own
# RAM, held by the target.  swapverify writes and verifies, twice, a
# working set of 1.5 times what MemAvailable says is left.  It must find
# every byte intact, as must fio; swap must really be used (pswpout), no
# OOM kill may hit swapverify or fio, and all must end in time: swapoff
# and both disconnects included.
#
# Soft-RoCE allocates a socket buffer per packet with GFP_ATOMIC and fails
# the work request when it cannot (see "I/O under memory pressure" in
# Documentation/design.rst): as for any swap over a network, the atomic
# reserve is raised (vm.min_free_kbytes 16M).  With the default (~2M
# here) rxe runs out of it and the device fails.
# timeout=400
# vm-mem=384M
# vm-mem-debug=512M

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
require_swapverify fio

stop=/tmp/lowmem-stop
rm -f "$stop"
cleanup() {
	touch "$stop"
	swap_sample_stop
	if [[ -n ${sv:-} ]]; then
		kill -9 "$sv" 2> /dev/null || true
	fi
	if [[ -n ${fio_loop:-} ]]; then
		pkill -P "$fio_loop" || true
		wait "$fio_loop" 2> /dev/null || true
	fi
	if [[ -n ${min_free:-} ]]; then
		echo "$min_free" > /proc/sys/vm/min_free_kbytes
	fi
	return 0
}
trap cleanup EXIT

meminfo() { awk -v k="$1:" '$1 == k {print int($2 / 1024)}' /proc/meminfo; }

min_free=$(cat /proc/sys/vm/min_free_kbytes)
(( min_free >= 16384 )) || echo 16384 > /proc/sys/vm/min_free_kbytes

log "MemTotal $(meminfo MemTotal) MiB, MemAvailable $(meminfo MemAvailable) MiB before the exports, min_free_kbytes $(cat /proc/sys/vm/min_free_kbytes)"
target_setup swap 128M
target_setup data 64M
sdev=$(dev_connect swap)
fdev=$(dev_connect data)
swap_only_on "$sdev"

sync
echo 3 > /proc/sys/vm/drop_caches
sleep 1
avail=$(meminfo MemAvailable)
ws=$(( avail * 3 / 2 ))
log "swap on /dev/$sdev, fio on /dev/$fdev; MemAvailable now $avail MiB: working set $ws MiB"
(( avail >= 32 )) || fail "only $avail MiB available after setup: the VM is too small for this test"

# fio write+verify passes over the whole second device until told to stop.
fio_passes() {
	local n=0 t0
	while [[ ! -e $stop ]]; do
		n=$(( n + 1 ))
		t0=$(date +%s)
		if ! fio --name=lowmem --filename="/dev/$fdev" --rw=randwrite --bs=64k \
			--direct=1 --ioengine=libaio --iodepth=4 --size=100% \
			--verify=crc32c --verify_fatal=1 --do_verify=1 --randseed="$n" \
			> /tmp/fio-lowmem.out 2>&1; then
			tail -n 30 /tmp/fio-lowmem.out
			echo "fio pass $n failed"
			return 1
		fi
		echo "  fio pass $n: 64 MiB written and verified in $(( $(date +%s) - t0 )) s"
	done
	echo "fio passes: $n"
}

out0=$(vmstat_get pswpout)
in0=$(vmstat_get pswpin)
t0=$(date +%s)
swap_sample_start "$sdev" /tmp/swap-used
fio_passes > /tmp/fio-passes 2>&1 &
fio_loop=$!

# A line every 10 s tells thrashing from a standstill.
inflight() { awk '{print $1 "/" $2}' "/sys/block/$1/inflight"; }
status() {
	local sw
	sw=$(awk -v d="/dev/$sdev" '$1 == d {print int($4 / 1024)}' /proc/swaps)
	log "  $(( $(date +%s) - t0 )) s: MemFree $(meminfo MemFree) MiB, swap used ${sw:-?} MiB," \
		"pswpout +$(( $(vmstat_get pswpout) - out0 )), pswpin +$(( $(vmstat_get pswpin) - in0 ))," \
		"in flight (r/w) $sdev $(inflight "$sdev"), $fdev $(inflight "$fdev")," \
		"fio passes $(grep -c '^  fio pass' /tmp/fio-passes)"
}

# swapverify gets most of the test's time; past that it counts as hung.
"$swapverify" -m "$ws" -p 2 > /tmp/sv-lowmem 2>&1 &
sv=$!
deadline=$(( t0 + $(rounds 200 600) ))
next=$(( t0 + 10 ))
while kill -0 "$sv" 2> /dev/null && (( $(date +%s) < deadline )); do
	sleep 1
	if (( $(date +%s) >= next )); then
		status
		next=$(( next + 10 ))
	fi
done
if kill -0 "$sv" 2> /dev/null; then
	status
	cat /tmp/sv-lowmem /tmp/fio-passes
	grep -E '^(MemFree|MemAvailable|Active|Inactive|Swap|Dirty|Writeback|AnonPages|Mapped|Shmem)' /proc/meminfo
	rmbd_cli dev show
	[[ -w /proc/sysrq-trigger ]] && echo w > /proc/sysrq-trigger
	fail "swapverify still running after $(( deadline - t0 )) s"
fi
rc=0
wait "$sv" || rc=$?
sv=
sv_time=$(( $(date +%s) - t0 ))
touch "$stop"
fio_rc=0
wait "$fio_loop" || fio_rc=$?
fio_loop=
swap_sample_stop

sed 's/^/  /' /tmp/sv-lowmem
cat /tmp/fio-passes
out=$(( $(vmstat_get pswpout) - out0 ))
in=$(( $(vmstat_get pswpin) - in0 ))
used=$(swap_used_max /tmp/swap-used)
log "swapverify $sv_time s, all $(( $(date +%s) - t0 )) s: pswpout $out pages ($(( out >> 8 )) MiB), pswpin $in pages ($(( in >> 8 )) MiB), most swap used $(( used >> 10 )) MiB"

kills=$(dmesg | grep -a 'Killed process' || true)
[[ -z $kills ]] || log "OOM kills: $kills"
grep -qE '\((swapverify|fio)\)' <<< "$kills" && fail "the OOM killer hit swapverify or fio"
(( rc == 0 )) || fail "swapverify exited with $rc"
grep -q ' 0 mismatched bytes in 0 pages' /tmp/sv-lowmem || fail "swapverify printed no clean summary"
(( fio_rc == 0 )) || fail "fio failed on /dev/$fdev under memory pressure"
grep -q '^fio passes: [1-9]' /tmp/fio-passes || fail "no fio pass completed"
# At least what does not fit must have gone out.
(( out >= (ws - avail) << 8 )) ||
	fail "pswpout grew by $out pages, expected at least $(( (ws - avail) << 8 ))"
(( used > 0 )) || fail "no swap used on /dev/$sdev"

t0=$(date +%s)
swapoff "/dev/$sdev" || fail "swapoff /dev/$sdev failed"
log "swapoff in $(( $(date +%s) - t0 )) s"
dev_disconnect "$sdev"
dev_disconnect "$fdev"
log "both devices disconnected"
