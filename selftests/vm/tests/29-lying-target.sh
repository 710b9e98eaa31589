#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the client does with a target that lies: rmbd-liar (librdmacm,
# libibverbs; selftests/vm/rmbd-liar.c) plays the target.
#  - A MAP reply with a wrong length or for another slab (from a target
#    without RMBD_OPEN_MAP_RANGE, mapped slab by slab), a MAP_RANGE reply
#    from another first slab, with more slabs than asked, with none, or
#    whose range ends past 2^64, and an OPEN reply whose slab count does
#    not match its size, fail the connect at once with the reason, and
#    leave no device behind.
#  - A target that maps fewer slabs per MAP_RANGE than asked is asked
#    again from the first one missing until every slab is mapped, and the
#    device holds what was written to it, from first byte to last.
#  - A slab whose memory region covers only half of what MAP said: every
#    READ and WRITE into the other half breaks the session with a remote
#    access error, and each reconnect succeeds, so the loss timeout never
#    runs out.  Such a request must fail with EIO after a few sessions
#    (RMBD_C_MAX_FAULTS), not loop forever; the rest of the device keeps
#    its data and stays live.
# timeout=240

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
require_liar

out=/run/rmbd-liar
mkdir -p "$out"
port=4421
start_liar() {	# LIE [ARGS...]
	liar_start "$out" "$RMBD_ADDR" "$port" --size $(( 8 << 20 )) --lie "$@"
}
stop_liar() { liar_stop; }
trap stop_liar EXIT

# ---- lies the connect must refuse ------------------------------------
# LIE[,OPTION]:REASON; map-len and map-slab lie in MAP, which a client
# sends only to a target without RMBD_OPEN_MAP_RANGE (--no-range).
for lie in map-len,--no-range:"invalid slab mapping" \
	   map-slab,--no-range:"invalid slab mapping" \
	   range-first:"invalid slab mapping" range-count:"invalid slab mapping" \
	   range-zero:"invalid slab mapping" range-wrap:"invalid slab mapping" \
	   geometry:"invalid export geometry"; do
	why=${lie#*:}
	lie=${lie%%:*}
	opt=
	[[ $lie == *,* ]] && opt=${lie#*,}
	lie=${lie%%,*}
	start_liar "$lie" $opt
	t0=$(usec)
	rc=0
	err=$(timeout 60 "$RMBD_BIN" dev connect addr "$RMBD_ADDR" port "$port" \
		export liar loss_timeout 20 2>&1 >/dev/null) || rc=$?
	(( rc != 0 )) || fail "dev connect to a target that lies ($lie) succeeded"
	(( rc != 124 )) || fail "dev connect to a target that lies ($lie) still runs after 60 s"
	ms=$(( ($(usec) - t0) / 1000 ))
	[[ $err == *"$why"* ]] ||
		fail "connect to a target that lies ($lie): '$err', expected '$why'"
	(( $(dev_count) == 0 )) || fail "a device is left after the refused connect ($lie)"
	# At once: not retried until the loss timeout (20 s)
	(( ms < 10000 )) || fail "connect to a target that lies ($lie) refused only after $ms ms"
	if [[ $lie != geometry ]]; then
		grep -q '^slab [0-9]* lied about' "$out/liar.out" ||
			fail "rmbd-liar did not lie ($lie${opt:+ $opt}): $(cat "$out/liar.out")"
	fi
	log "lie $lie${opt:+ $opt}: refused after $ms ms: $err"
done

# ---- a target that maps fewer slabs than asked ------------------------
# 64 slabs, the last one 1 MiB: MAP_RANGE asks for 58 first.
size=$(( (63 * 2 + 1) << 20 ))
rm -f "$out/mem"
start_liar range-partial --size "$size" --dump "$out/mem"
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" port "$port" export liar \
	loss_timeout 20 | tail -n 1)
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
# Each range asked from where the last reply stopped, all 64 slabs.
next=0
ranges=0
partial=0
while read -r _ asked got; do
	first=${asked%+*}
	count=${asked#*+}
	count=${count%:}
	(( first == next )) ||
		fail "MAP_RANGE from slab $first, not from $next, the first missing: $(cat "$out/liar.out")"
	(( count == (64 - first < 58 ? 64 - first : 58) )) ||
		fail "MAP_RANGE of $count slabs from $first: $(cat "$out/liar.out")"
	(( got < count )) && partial=$(( partial + 1 ))
	next=$(( first + got ))
	ranges=$(( ranges + 1 ))
done < <(grep '^range ' "$out/liar.out")
(( next == 64 )) || fail "the MAP_RANGEs mapped slabs up to $next of 64: $(cat "$out/liar.out")"
(( partial >= 2 )) || fail "only $partial MAP_RANGE replies mapped fewer than asked"
head -c "$size" /dev/urandom > "$out/data"
dd if="$out/data" of="/dev/$dev" bs=1M oflag=direct status=none ||
	fail "writing /dev/$dev failed"
cmp "$out/data" <(dd if="/dev/$dev" bs=1M iflag=direct status=none) ||
	fail "/dev/$dev reads back other data than was written"
dev_disconnect "$dev"
# And each slab's bytes went to that slab of the target's memory.
stop_liar
cmp "$out/data" "$out/mem" ||
	fail "the target's memory holds other data than was written to /dev/$dev"
log "range-partial: $ranges MAP_RANGEs, $partial of them partial; all $(( size >> 20 )) MiB read back, in place on the target"
rm -f "$out/data" "$out/mem"

# ---- a slab half registered --------------------------------------------
# Mapped with MAP_RANGE: the liar says each one it answers.
start_liar short-slab:1
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" port "$port" export liar \
	reconnect_delay 1 loss_timeout 20 | tail -n 1)
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
grep -q '^slab 1 lied about' "$out/liar.out" || fail "rmbd-liar did not lie: $(cat "$out/liar.out")"
grep -q '^range 0+4: 4$' "$out/liar.out" ||
	fail "the client did not map with MAP_RANGE: $(cat "$out/liar.out")"
head -c 3M /dev/urandom > "$out/data"
# Slab 0 and the half of slab 1 that is there: 0 to 3 MiB.
dd if="$out/data" of="/dev/$dev" bs=1M oflag=direct status=none ||
	fail "writing the first 3 MiB of /dev/$dev failed"
before=$(dev_field "$dev" reconnects)
kmsg0=$(dmesg | wc -l)

for op in read write; do
	t0=$(usec)
	rc=0
	if [[ $op == read ]]; then
		timeout -k 5 90 dd if="/dev/$dev" of=/dev/null bs=4k skip=$(( 3 << 8 )) \
			count=1 iflag=direct 2> "$out/dd.err" || rc=$?
	else
		timeout -k 5 90 dd if=/dev/zero of="/dev/$dev" bs=4k seek=$(( 3 << 8 )) \
			count=1 oflag=direct 2> "$out/dd.err" || rc=$?
	fi
	ms=$(( ($(usec) - t0) / 1000 ))
	(( rc != 124 && rc != 137 )) ||
		fail "a $op into the unregistered half of slab 1 still waits after 90 s ($(( $(dev_field "$dev" reconnects) - before )) reconnects)"
	(( rc != 0 )) || fail "a $op into the unregistered half of slab 1 succeeded"
	grep -qi "input/output error" "$out/dd.err" ||
		fail "the $op did not fail with EIO: $(cat "$out/dd.err")"
	log "$op into the unregistered half: EIO after $ms ms"
done

n=$(( $(dev_field "$dev" reconnects) - before ))
(( n >= 4 )) || fail "only $n reconnects: the requests failed before trying again"
dmesg | tail -n +$(( kmsg0 + 1 )) | grep -q "rmbd[0-9]*: .* failed on 3 sessions: giving it up" ||
	fail "no 'giving it up' in the kernel log: $(dmesg | grep rmbd | tail -n 5)"
sessions=$(grep -c '^session .* opened' "$out/liar.out")
log "$n reconnects, $sessions sessions opened on the liar in all"

wait_live_again "$dev" > /dev/null
cmp "$out/data" <(dd if="/dev/$dev" bs=1M count=3 iflag=direct status=none) ||
	fail "/dev/$dev reads back other data than was written, after the failed requests"
log "/dev/$dev: live, its first 3 MiB intact: $(rmbd_cli dev show "$dev")"
dev_disconnect "$dev"
stop_liar
log "a lying target: connects refused with the reason, requests it fails every time end in EIO"
