#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Swap on remote memory under a cgroup memory limit.  A 512M export is the
# only swap device.  swapverify writes a 96 MiB working set from a cgroup
# v2 group whose memory.max is 24M (48 and 12 on the debug kernel) and
# verifies it, twice; then two run at once, each in its own group (one
# without huge pages).  Every run must find every byte intact, no group
# may see an OOM kill, pswpout and pswpin must grow by at least the
# working sets beyond the limits, and the rmbd swap must be in use
# meanwhile.  Last, a working set held in swap comes back through swapoff
# and is verified; the device disconnects cleanly.
# timeout=480

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
require_swapverify

# MiB, each program's working set and each group's memory.max: half on
# the debug kernel, where the whole test would take about 30 minutes.
ws=$(rounds 96 48)
limit=$(rounds 24 12)
cg_root=/sys/fs/cgroup
groups=("$cg_root/rmbd-swap-a" "$cg_root/rmbd-swap-b")

cleanup() {
	local g
	swap_sample_stop
	for g in "${groups[@]}"; do
		[[ -d $g ]] || continue
		xargs -r kill -9 < "$g/cgroup.procs" 2> /dev/null || true
		for (( i = 0; i < 50; i++ )); do
			rmdir "$g" 2> /dev/null && break
			sleep 0.1
		done
	done
	return 0
}
trap cleanup EXIT

# Memory cgroups: cgroup2 at /sys/fs/cgroup, memory enabled for children.
if ! grep -q "^cgroup2 $cg_root " /proc/mounts; then
	mount -t cgroup2 cgroup2 "$cg_root" || fail "cannot mount cgroup2"
fi
grep -qw memory "$cg_root/cgroup.controllers" || fail "no memory controller in cgroup v2"
echo +memory > "$cg_root/cgroup.subtree_control" || fail "cannot enable the memory controller"
for g in "${groups[@]}"; do
	mkdir -p "$g"
	echo "${limit}M" > "$g/memory.max"
	if [[ -f $g/memory.swap.max ]]; then
		echo max > "$g/memory.swap.max"
	else
		log "no memory.swap.max (swap accounting off): swap is not limited anyway"
	fi
done

# The rmbd device as the only swap.
target_setup swap 512M
dev=$(dev_connect swap)
swap_only_on "$dev"
log "swap on /dev/$dev: $(awk -v d="/dev/$dev" '$1 == d {print $3 " KiB, priority " $5}' /proc/swaps)"


# Run swapverify in group $1 with the options after it; output in /tmp/sv-$2.
sv_start() {	# GROUP TAG OPTS...
	local g=$1 tag=$2
	shift 2
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$g" \
		"$swapverify" "$@" > "/tmp/sv-$tag" 2>&1 &
}

# Run swapverify in the given groups at once and check the whole.
swap_run() {	# WHAT GROUP:TAG:OPTS...
	local what=$1 spec g tag opts rc out0 in0 thp0 out in thp used t0 dt n=0 pids=()
	shift
	log "$what"
	out0=$(vmstat_get pswpout)
	in0=$(vmstat_get pswpin)
	thp0=$(vmstat_get thp_swpout)
	swap_sample_start "$dev" /tmp/swap-used
	t0=$(date +%s)
	for spec in "$@"; do
		IFS=: read -r g tag opts <<< "$spec"
		# shellcheck disable=SC2086
		sv_start "$g" "$tag" -m "$ws" -p 2 $opts
		pids+=("$!")
		n=$(( n + 1 ))
	done
	for spec in "$@"; do
		IFS=: read -r g tag _ <<< "$spec"
		rc=0
		wait "${pids[0]}" || rc=$?
		pids=("${pids[@]:1}")
		sed 's/^/  /' "/tmp/sv-$tag"
		(( rc == 0 )) || fail "$what: swapverify $tag exited with $rc"
		grep -q ' 0 mismatched bytes in 0 pages' "/tmp/sv-$tag" ||
			fail "$what: swapverify $tag printed no clean summary"
		[[ $(oom_kills "$g") == 0 ]] ||
			fail "$what: memory.events of $g: oom_kill $(oom_kills "$g")"
	done
	dt=$(( $(date +%s) - t0 ))
	swap_sample_stop
	out=$(( $(vmstat_get pswpout) - out0 ))
	in=$(( $(vmstat_get pswpin) - in0 ))
	thp=$(( $(vmstat_get thp_swpout) - thp0 ))
	used=$(swap_used_max /tmp/swap-used)
	log "  $dt s: pswpout $out pages ($(( out >> 8 )) MiB, $thp huge pages whole), pswpin $in pages ($(( in >> 8 )) MiB), most swap used $(( used >> 10 )) MiB"
	# Each working set beyond its group's limit must go out and come back.
	min=$(( n * (ws - limit) * 256 ))
	(( out >= min )) || fail "$what: pswpout grew by $out pages, expected at least $min"
	(( in >= min )) || fail "$what: pswpin grew by $in pages, expected at least $min"
	(( used > 0 )) || fail "$what: no swap used on /dev/$dev during the run"
}

a=${groups[0]} b=${groups[1]}
swap_run "one ${ws} MiB working set under memory.max=${limit}M" "$a:one:"
swap_run "two at once, each in its own group, one without huge pages" \
	"$a:two-a:" "$b:two-b:-n -s 7"

# A working set parked in swap comes back through swapoff.
log "swapoff with a working set in swap"
sv_start "$a" park -m "$ws" -p 1 -n -s 3 -w
pid=$!
for (( i = 0; i < 1200; i++ )); do
	grep -q 'waiting for SIGUSR1' /tmp/sv-park && break
	kill -0 "$pid" 2> /dev/null || break
	sleep 0.1
done
grep -q 'waiting for SIGUSR1' /tmp/sv-park || { cat /tmp/sv-park; fail "swapverify did not finish writing"; }
parked=$(cat "$a/memory.swap.current" 2> /dev/null ||
	awk -v d="/dev/$dev" '$1 == d {print $4 * 1024}' /proc/swaps)
(( parked >= (ws - limit) << 20 )) ||
	fail "only $(( parked >> 20 )) MiB of the working set in swap, expected $(( ws - limit )) MiB"
# Room to take the pages back: the only swap is going away.
echo max > "$a/memory.max"
in0=$(vmstat_get pswpin)
t0=$(date +%s)
swapoff "/dev/$dev" || fail "swapoff /dev/$dev failed"
in=$(( $(vmstat_get pswpin) - in0 ))
log "  swapoff took $(( $(date +%s) - t0 )) s for $(( parked >> 20 )) MiB in swap: pswpin $in pages"
[[ $(wc -l < /proc/swaps) == 1 ]] || fail "swap still listed after swapoff: $(tail -n +2 /proc/swaps)"
# Pages still in the swap cache need no read: allow a tenth for those.
(( in >= (parked >> 12) * 9 / 10 )) || fail "swapoff read $in pages, $(( parked >> 12 )) were in swap"
kill -USR1 "$pid"
rc=0
wait "$pid" || rc=$?
sed 's/^/  /' /tmp/sv-park
(( rc == 0 )) || fail "the working set brought back by swapoff: swapverify exited with $rc"
[[ $(oom_kills "$a") == 0 ]] || fail "memory.events of $a: oom_kill $(oom_kills "$a")"

dev_disconnect "$dev"
log "/dev/$dev disconnected"
