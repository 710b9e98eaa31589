#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo, run inside the VM by demo.sh: remote memory as an ext4 file
# system, then as swap for a program kept well below its working set by a
# cgroup memory limit; target and client in one kernel over soft-RoCE.
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

say "Target side: export 1 GiB of RAM as 'demo' to this host, which must prove it has a secret, and listen on $RMBD_ADDR:$RMBD_PORT"
run rmbd host
secret=/run/rmbd-demo.secret
rm -f "$secret"
run rmbd secret generate "$secret"
run rmbd export add demo size 1G
run rmbd export host add demo "$(rmbd host)" secret-file "$secret"
run rmbd listener add "$RMBD_ADDR"
run rmbd export show
run rmbd listener show

say "Client side: connect to the export over RDMA"
printf '$ rmbd dev connect addr %s export demo secret-file %s\n' "$RMBD_ADDR" "$secret"
dev=$(rmbd dev connect addr "$RMBD_ADDR" export demo secret-file "$secret")
echo "$dev"
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
run rmbd dev show
run lsblk "/dev/$dev"

say "Make an ext4 file system on /dev/$dev and mount it"
# nodiscard: the device takes discards and writes zeroes for them over
# RDMA, which soft-RoCE under TCG does at only ~35 MB/s; discarding the
# whole 1 GiB at mkfs would add some 30 s to the demo.
run mkfs.ext4 -q -E nodiscard "/dev/$dev"
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
printf '$ rmbd dev connect addr %s export demo secret-file %s\n' "$RMBD_ADDR" "$secret"
dev=$(rmbd dev connect addr "$RMBD_ADDR" export demo secret-file "$secret")
echo "$dev"
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
run rmbd dev show
run mount "/dev/$dev" "$mnt"
(cd "$mnt" && run sha256sum --quiet -c /tmp/demo.sha256) || fail "checksums differ"
echo "all $(wc -l < /tmp/demo.sha256) checksums verified"

say "Done with the file system: unmount, disconnect, delete the export"
run umount "$mnt"
run rmbd dev disconnect "$dev"
run rmbd export del demo


# ---- remote memory as swap ----------------------------------------------

swapverify=$RMBD_REPO/selftests/vm/swapverify
[[ -x $swapverify ]] || fail "selftests/vm/swapverify is not built (make -C selftests)"
ws=256				# MiB, swapverify's working set
limit=64M			# the group's memory.max
cg=/sys/fs/cgroup/rmbd-demo
svlog=/tmp/demo-swapverify.log
swaplog=/tmp/demo-swap-used

sampler= svpid=
demo_cleanup() {
	[[ -n $sampler ]] && kill "$sampler" 2> /dev/null
	[[ -n $svpid ]] && kill -9 "$svpid" 2> /dev/null
	return 0
}
trap demo_cleanup EXIT

# A command line with redirections, printed and run by the shell.
runsh() { printf '$ %s\n' "$1"; bash -c "$1"; }
vmstat() { awk -v k="$1" '$1 == k {print $2}' /proc/vmstat; }
# Print the lines of swapverify's output not shown yet.
shown=0
sv_show() {
	local n
	n=$(wc -l < "$svlog")
	(( n > shown )) && sed -n "$(( shown + 1 )),${n}p" "$svlog"
	shown=$n
}

say "Remote memory as swap: the VM has no swap of its own"
run cat /proc/swaps
[[ $(wc -l < /proc/swaps) -le 1 ]] || fail "swap already in use: $(tail -n +2 /proc/swaps)"

say "A second export, 'swap', of 512 MiB; mkswap and swapon on its device"
run rmbd export add swap size 512M
run rmbd export host add swap "$(rmbd host)" secret-file "$secret"
printf '$ rmbd dev connect addr %s export swap secret-file %s\n' "$RMBD_ADDR" "$secret"
dev=$(rmbd dev connect addr "$RMBD_ADDR" export swap secret-file "$secret")
echo "$dev"
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
run mkswap "/dev/$dev"
run swapon "/dev/$dev"
run cat /proc/swaps
# zswap would keep the swapped pages in RAM, away from the device.
if [[ $(cat /sys/module/zswap/parameters/enabled 2> /dev/null) == Y ]]; then
	runsh "echo N > /sys/module/zswap/parameters/enabled"
fi

say "A cgroup v2 group that may keep only $limit resident"
grep -q "^cgroup2 /sys/fs/cgroup " /proc/mounts ||
	run mount -t cgroup2 cgroup2 /sys/fs/cgroup
runsh "echo +memory > /sys/fs/cgroup/cgroup.subtree_control"
run mkdir -p "$cg"
runsh "echo $limit > $cg/memory.max"

say "swapverify in the group: a $ws MiB working set of checksummed pages, written, then read back and verified"
echo "(it pauses once it is all written, for a look at the swap)"
out0=$(vmstat pswpout)
in0=$(vmstat pswpin)
# The swap in use on the device, every half second, for the largest.
while :; do
	awk -v d="/dev/$dev" '$1 == d {print $4}' /proc/swaps
	sleep 0.5
done > "$swaplog" &
sampler=$!
t0=$(date +%s)
printf '$ sh -c '\''echo $$ > %s/cgroup.procs && exec swapverify -m %s -p 1 -w'\'' &\n' "$cg" "$ws"
sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" -m "$3" -p 1 -w' sh "$cg" \
	"$swapverify" "$ws" > "$svlog" 2>&1 &
svpid=$!
for (( i = 0; i < 6000; i++ )); do
	grep -q 'waiting for SIGUSR1' "$svlog" && break
	kill -0 "$svpid" 2> /dev/null || break
	sleep 0.1
	(( i % 10 )) || sv_show
done
sv_show
grep -q 'waiting for SIGUSR1' "$svlog" || fail "swapverify did not get through its writes"

say "All written: most of it is out on /dev/$dev"
run cat /proc/swaps
sw=$(cat "$cg/memory.swap.current" 2> /dev/null) && sw="$(( sw >> 20 )) MiB" ||
	sw="not counted (no swap accounting)"
echo "the group: memory.current $(( $(cat "$cg/memory.current") >> 20 )) MiB, memory.swap.current $sw"

say "Let swapverify read the working set back and check every byte"
run kill -USR1 "$svpid"
rc=0
wait "$svpid" || rc=$?
svpid=
sv_show
dt=$(( $(date +%s) - t0 ))
kill "$sampler"
wait "$sampler" 2> /dev/null || true
sampler=
out=$(( $(vmstat pswpout) - out0 ))
in=$(( $(vmstat pswpin) - in0 ))
used=$(sort -n "$swaplog" | tail -n 1)
oom=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.events")

say "What went through the swap on /dev/$dev in those $dt s"
printf 'pages out (pswpout): %9d  (%d MiB)\n' "$out" $(( out >> 8 ))
printf 'pages in  (pswpin):  %9d  (%d MiB)\n' "$in" $(( in >> 8 ))
printf 'most swap in use on /dev/%s: %d MiB of %d MiB\n' "$dev" \
	$(( ${used:-0} >> 10 )) $(( $(awk -v d="/dev/$dev" '$1 == d {print $3}' /proc/swaps) >> 10 ))
echo "OOM kills in the group: ${oom:-?}"
summary=$(grep ' mismatched bytes in ' "$svlog" | tail -n 1)
echo "${summary:-swapverify printed no summary}"
(( rc == 0 )) || fail "swapverify exited with $rc: the working set did not come back intact"
[[ $summary == *' 0 mismatched bytes in 0 pages'* ]] || fail "swapverify found mismatches"
(( out > 0 && in > 0 )) || fail "no page went out to swap and came back"
echo "every byte of the $ws MiB working set verified after going through remote memory"

say "Clean up: swapoff, disconnect, delete the export and the listener"
for (( i = 0; i < 50; i++ )); do
	[[ -s $cg/cgroup.procs ]] || break
	sleep 0.1
done
run rmdir "$cg"
run swapoff "/dev/$dev"
run rmbd dev disconnect "$dev"
run rmbd export del swap
run rmbd listener del "$RMBD_ADDR"
