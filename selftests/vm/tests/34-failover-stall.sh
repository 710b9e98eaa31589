#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# How long I/O stalls when a memory server is lost, against the baseline
# of md raid1 over two rmbd devices.  fio (4k random reads and writes,
# depth 1, direct) runs on each while the link to its second target (d2,
# then d3) goes down for good; fio's longest I/O latency is the stall.
# 1. A mirror of two legs: the device goes on over the other leg; its
#    stall must stay far below the loss timeout (20 s here).
# 2. md raid1 over two single-leg rmbd devices (no failfast): md waits
#    for the member's requests, which wait for the loss timeout before
#    they fail; only then does md fail the member and go on.  Measured
#    and shown, as the baseline of item 5 of the replicas work.
# Neither run may see an I/O error.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
for t in mdadm fio; do
	command -v "$t" > /dev/null || skip "$t not installed"
done

loss=20
md=/dev/md/rmbd-stall
out=/run/rmbd-stall
mkdir -p "$out"

cleanup() {
	ip link set d2 up 2> /dev/null || true
	ip link set d3 up 2> /dev/null || true
	[[ -n ${fio_pid:-} ]] && kill "$fio_pid" 2> /dev/null
	if [[ -e $md ]]; then
		mdadm --stop "$md" > /dev/null 2>&1 || true
	fi
	rmbd_reset > /dev/null 2>&1 || true
	second_link_del
	third_link_del
}
trap cleanup EXIT

modprobe raid1 || fail "cannot load raid1"
for e in m0 m1 r0 r1; do
	target_setup "$e" 64M
done
second_link_add
third_link_add

# fio on $1 for $2 s, link $4 going down after 3 s; prints the longest
# I/O latency in ms.
stall_run() {	# PATH RUNTIME TAG NETDEV
	local rc=0 max
	fio --name=stall --filename="$1" --rw=randrw --bs=4k --iodepth=1 \
		--ioengine=libaio --direct=1 --size=32M --time_based \
		--runtime="$2" --output-format=json --output="$out/$3.json" \
		> "$out/$3.err" 2>&1 &
	fio_pid=$!
	sleep 3
	ip link set "$4" down
	wait "$fio_pid" || rc=$?
	fio_pid=
	(( rc == 0 )) || fail "fio on $1 failed ($rc): $(tail -n 5 "$out/$3.err") $(head -c 400 "$out/$3.json")"
	[[ $(jq '[.jobs[].error] | add' "$out/$3.json") == 0 ]] ||
		fail "fio on $1 saw errors: $(jq -c '.jobs[0] | {error, read: .read.io_bytes, write: .write.io_bytes}' "$out/$3.json")"
	max=$(jq '[.jobs[0].read.lat_ns.max, .jobs[0].write.lat_ns.max] | max / 1000000 | floor' \
		"$out/$3.json")
	[[ $max =~ ^[0-9]+$ ]] || fail "no latency in fio's output: $(head -c 400 "$out/$3.json")"
	echo "$max"
}

# 1. The mirror.
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export m0 addr "$RMBD_ADDR2" export m1 \
	reconnect_delay 1 loss_timeout "$loss" | tail -n 1)
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
mirror=$(stall_run "/dev/$dev" 10 mirror d2)
[[ $(dev_field "$dev" state) == live ]] || fail "the mirror went $(dev_field "$dev" state)"
[[ $(dev_jq "$dev" '.legs[1].state') != up ]] || fail "leg 1 is up with its link down"
log "mirror of two legs: longest I/O stall $mirror ms when a target was lost (loss_timeout $loss s)"
(( mirror < loss * 1000 / 4 )) ||
	fail "the mirror stalled I/O for $mirror ms: it waited as if for the loss timeout ($loss s)"
dev_disconnect "$dev"

# 2. md raid1 over two rmbd devices, one per target, the second over a
# third link (d3), which goes down in turn.
d0=$(dev_connect r0 reconnect_delay 1 loss_timeout "$loss")
d1=$(rmbd_ok dev connect addr "$RMBD_ADDR3" export r1 reconnect_delay 1 \
	loss_timeout "$loss" | tail -n 1)
wait_node "/dev/$d1" || fail "/dev/$d1 did not appear"
mdadm --create "$md" --run --quiet --level=1 --raid-devices=2 --metadata=1.2 \
	--assume-clean "/dev/$d0" "/dev/$d1" > "$out/create" 2>&1 ||
	{ cat "$out/create"; fail "mdadm --create failed"; }
mdstall=$(stall_run "$md" $(( loss + 10 )) md d3)
mdname=$(basename "$(readlink -f "$md")")
grep -q faulty "/sys/block/$mdname/md/dev-$d1/state" 2> /dev/null ||
	fail "md did not fail /dev/$d1: $(cat "/sys/block/$mdname/md/dev-$d1/state" 2>&1)"
log "md raid1 over two rmbd devices: longest I/O stall $mdstall ms (md waits for the member's loss timeout, $loss s)"
log "the mirror's stall: $mirror ms, md raid1's: $mdstall ms"
