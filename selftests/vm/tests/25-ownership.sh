#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Ownership and read-only.  An export is held by one host at a time: a
# second host is refused with "export in use by host X", and a "shared"
# connect is refused unless the export is shared.  The holder coming
# back (a peer of the same host holding a stale session, then a link
# flap under a device) takes its old session over at once instead of
# waiting for the session timeout.  A shared export serves several hosts.
# A read-only export or connect gives a read-only /dev/rmbdN, and the
# target registers the memory without remote write: an RDMA WRITE from a
# read-only session gets a remote access error from the RDMA device, a
# READ works.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
require_peer

out=/run/rmbd-own
rm -rf "$out"
mkdir -p "$out"
me=$(rmbd_cli host) || fail "no host identity"
hb=nqn.x:host-b
cleanup() {
	ip link set "$RMBD_NETDEV" up 2> /dev/null || true
	[[ -n ${ppid_:-} ]] && kill "$ppid_" 2> /dev/null
	true
}
trap cleanup EXIT

# Exclusive (the default): one host at a time.
target_setup own 32M hosts "$me,$hb"
[[ $(export_field own shared) == false ]] || fail "own: shared $(export_field own shared)"
da=$(dev_connect own)
head -c 8M /dev/urandom > "$out/data"
dd if="$out/data" of="/dev/$da" bs=1M oflag=direct status=none || fail "write failed"
rmbd_fails "another host" dev connect addr "$RMBD_ADDR" export own host "$hb"
[[ $RMBD_ERR == *"Device or resource busy: export in use by host $me" ]] ||
	fail "another host: '$RMBD_ERR', expected 'export in use by host $me'"
rmbd_fails "a shared connect" dev connect addr "$RMBD_ADDR" export own shared
[[ $RMBD_ERR == *"Operation not permitted: the export is not shared: connect without shared" ]] ||
	fail "a shared connect: '$RMBD_ERR'"
(( $(dev_count) == 1 )) || fail "$(dev_count) devices after the refusals"
wait_sessions own 1
rc=0
"$peer" --addr "$RMBD_ADDR" --export own --host "$hb" --do connect,open > "$out/p-b" 2>&1 || rc=$?
(( rc == 1 )) && grep -qx "holder $me" "$out/p-b" ||
	fail "a peer of another host: exit $rc: $(tr '\n' ' ' < "$out/p-b")"
sl=$(rmbd_cli -j -d export show own | jq -c '.[0].session_list')
[[ $(jq length <<< "$sl") == 1 && $(jq -r '.[0].host' <<< "$sl") == "$me" &&
   $(jq -r '.[0].up' <<< "$sl") == true && $(jq -r '.[0].read_only' <<< "$sl") == false ]] ||
	fail "export show -d lists $sl, expected one session of $me, up"
log "export own held by $me: host $hb refused (in use by $me), a shared connect refused; export show -d: $sl"

# Once the holder left, another host gets the export at once (while the
# old session is still torn down the target says EAGAIN and the client
# asks again).
dev_disconnect "$da"
db=$(dev_connect own host "$hb")
dev_disconnect "$db"
wait_sessions own 0
log "host $hb got the export right after $me left it"

# The same host coming back takes its stale session over: a peer of
# this host holds the export, keeping its session alive, when the
# device comes back; its session ends at once, not at its timeout.
"$peer" --addr "$RMBD_ADDR" --export own --host "$me" --seconds 60 \
	--do connect,open,map,keepalive > "$out/p-stale" 2>&1 &
ppid_=$!
wait_sessions own 1
rmbd_fails "another host while the peer holds it" dev connect addr "$RMBD_ADDR" export own host "$hb"
[[ $RMBD_ERR == *"export in use by host $me" ]] || fail "while the peer holds it: '$RMBD_ERR'"
t0=$(usec)
da=$(dev_connect own)
wait_exit "$ppid_" 20 "the stale peer did not end"
rc=0
wait "$ppid_" || rc=$?
ppid_=
dt=$(( ($(usec) - t0) / 1000 ))
grep -q '^ended-by' "$out/p-stale" ||
	fail "the stale session did not end: exit $rc: $(tr '\n' ' ' < "$out/p-stale")"
(( dt < 15000 )) || fail "the stale session ended after $dt ms"
wait_sessions own 1
dmesg | grep -q "rmbd_target: session [0-9a-f]*: host '$me' takes export own over from its session" ||
	fail "no kernel log line for the takeover"
cmp "$out/data" <(dd if="/dev/$da" bs=1M count=8 iflag=direct status=none) ||
	fail "data differs after the takeover"
log "a stale session of $me taken over in $dt ms, data intact"

# A link flap: the device reconnects long before the target's session
# timeout (30 s), and within 10 s its old session is gone (here the
# target usually sees the link go too; where it does not, the reconnect
# takes the old session over).
link_flap "$da"
wait_sessions own 1
cmp "$out/data" <(dd if="/dev/$da" bs=1M count=8 iflag=direct status=none) ||
	fail "data differs after the flap"
dev_disconnect "$da"
log "after a link flap: one session, no stale one waiting for its timeout, data intact"

# Shared: several hosts at once.
target_setup shr 16M hosts "$me,$hb" shared
[[ $(export_field shr shared) == true ]] || fail "shr: shared $(export_field shr shared)"
d1=$(dev_connect shr)
d2=$(dev_connect shr host "$hb" shared)
d3=$(dev_connect shr shared)
wait_sessions shr 3
head -c 1M /dev/urandom > "$out/s"
dd if="$out/s" of="/dev/$d1" bs=1M oflag=direct status=none || fail "write to $d1 failed"
cmp "$out/s" <(dd if="/dev/$d2" bs=1M count=1 iflag=direct status=none) ||
	fail "$d2 does not see what $d1 wrote"
for d in "$d1" "$d2" "$d3"; do dev_disconnect "$d"; done
log "shared export: $me twice and $hb at once, one's writes seen by the other"

# Read-only: an export, and a connect.
target_setup ro 16M read_only
[[ $(export_field ro read_only) == true ]] || fail "ro: read_only $(export_field ro read_only)"
for how in "export ro" "connect read_only"; do
	if [[ $how == export* ]]; then
		d=$(dev_connect ro)
	else
		d=$(dev_connect own read_only)
	fi
	[[ $(dev_field "$d" read_only) == true ]] || fail "$how: $d read_only $(dev_field "$d" read_only)"
	[[ $(blockdev --getro "/dev/$d") == 1 ]] || fail "$how: /dev/$d is not read-only"
	if dd if=/dev/zero of="/dev/$d" bs=4k count=1 oflag=direct status=none 2> "$out/dd"; then
		fail "$how: a write to /dev/$d succeeded"
	fi
	dd if="/dev/$d" of=/dev/null bs=1M iflag=direct status=none || fail "$how: reading /dev/$d failed"
	[[ $(dev_field "$d" state) == live ]] || fail "$how: $d is $(dev_field "$d" state)"
	dev_disconnect "$d"
done
d=$(dev_connect own)
cmp "$out/data" <(dd if="/dev/$d" bs=1M count=8 iflag=direct status=none) ||
	fail "the read-only device changed export own"
dev_disconnect "$d"
log "read-only: export ro and a read_only connect give read-only devices; writes refused, reads work"

# The RDMA device enforces it: a read-only session's WRITE fails with a
# remote access error, its READ works; a read-write session's WRITE works.
attacks=0
for e in ro own; do
	flags=()
	[[ $e == own ]] && flags=(--open-flags rdonly)
	rc=0
	"$peer" --addr "$RMBD_ADDR" --export "$e" --host "$me" "${flags[@]}" \
		--do connect,open,map:0,read:0,write:0 > "$out/p-ro" 2>&1 || rc=$?
	attacks=$(( attacks + 1 ))
	grep -q 'read_only 1' "$out/p-ro" && grep -q '^read slab 0 off 0: ok' "$out/p-ro" &&
		grep -q '^write slab 0 off 0: remote access error' "$out/p-ro" && (( rc == 3 )) ||
		fail "an RDMA WRITE from a read-only session of $e: exit $rc: $(tr '\n' ' ' < "$out/p-ro")"
	wait_sessions "$e" 0
done
rc=0
"$peer" --addr "$RMBD_ADDR" --export own --host "$me" \
	--do connect,open,map:0,write:0,close > "$out/p-rw" 2>&1 || rc=$?
(( rc == 0 )) && grep -q '^write slab 0 off 0: ok' "$out/p-rw" ||
	fail "an RDMA WRITE from a read-write session: exit $rc: $(tr '\n' ' ' < "$out/p-rw")"
log "RDMA WRITE: remote access error from the target's device in $attacks read-only sessions, works in a read-write one"

rc=0
"$peer" --addr "$RMBD_ADDR" --export own --host "$me" --open-flags 0x80 --do connect,open > "$out/p-bad" 2>&1 || rc=$?
(( rc == 1 )) && grep -q 'OPEN: target answered Invalid argument' "$out/p-bad" ||
	fail "an OPEN with an unknown flag: exit $rc: $(tr '\n' ' ' < "$out/p-bad")"
wait_sessions own 0
for e in own shr ro; do rmbd_ok export del "$e"; done
