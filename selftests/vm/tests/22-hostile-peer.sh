#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the target tells, and lets, a peer that is not rmbd-client:
# rmbd-peer (librdmacm, libibverbs) as the client.
#  - The addresses of the mapped slabs are no kernel addresses (on
#    soft-RoCE a DMA address is one): each session gets a random base,
#    and slab i lies i slab sizes above it, as protocol.rst says.
#  - Sessions beyond max_sessions are refused (RMBD_REJ_LIMIT; the kernel
#    client says why), and the target serves again once they are gone;
#    so are those beyond a listener's own max_sessions, while another
#    listener still serves, and a listener's sessions outlive it.
#  - A session that opens no export is released after 10 s, long before
#    the session timeout (30 s).
#  - Malformed connect requests are rejected with their reason, I/O
#    queues without their session's join key too; admin messages of an
#    unknown opcode, the wrong length or a reply's opcode, a MAP past the
#    end, a MAP_RANGE of no slab, of more than 58 or past the end, and a
#    second OPEN are refused or end the session (a MAP_RANGE of every
#    slab maps them); two requests
#    in flight with one tag are both answered; a slab mapped three times
#    is registered once; a keepalive flood is answered; a device
#    connected throughout lives.
#  - RDMA READ and WRITE just outside a mapped slab, across its end, with
#    one slab's key to another, with another session's key (while it
#    lives, and after it ended) get a remote access error, and a device
#    connected throughout keeps its data.
# The last line counts the attacks: none accepted, no kernel report.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
require_peer

out=/run/rmbd-hostile
mkdir -p "$out"
slab=$(( 2 << 20 ))
# rmbd-peer gives no host identity.
target_setup hostile 6M slab 2M any_host shared
checks=0
limits=0
kmsg0=$(dmesg | wc -l)

# ---- slab addresses ---------------------------------------------------

# peer_session N: connect, OPEN, MAP every slab, then leave (no CLOSE:
# its reply and the disconnect that follows race on a slow kernel); the
# addresses in $out/map.N, one "SLAB ADDR" line each.
peer_session() {
	"$peer" --addr "$RMBD_ADDR" --export hostile --do connect,open,map \
		> "$out/peer.$1" 2> "$out/peer.$1.err" ||
		fail "rmbd-peer session $1 failed: $(tr '\n' ' ' < "$out/peer.$1.err")"
	sed -n 's/^mapped slab \([0-9]*\) addr \(0x[0-9a-f]*\) .*/\1 \2/p' "$out/peer.$1" > "$out/map.$1"
	(( $(wc -l < "$out/map.$1") == 3 )) ||
		fail "rmbd-peer session $1 mapped $(wc -l < "$out/map.$1") slabs, expected 3: $(tr '\n' ' ' < "$out/peer.$1")"
}

peer_session 1
peer_session 2
for n in 1 2; do
	base=
	while read -r i a; do
		checks=$(( checks + 1 ))
		# A kernel address has the top bit set: negative to bash.
		(( a > 0 )) || fail "session $n: slab $i at $(printf 0x%x "$a"), a kernel address or 0"
		[[ -n $base ]] || base=$(( a - i * slab ))
		(( a == base + i * slab )) ||
			fail "session $n: slab $i at $(printf 0x%x "$a"), not $i slabs above slab 0"
	done < "$out/map.$n"
	printf -v "base$n" '%d' "$base"
done
(( base1 != base2 )) || fail "two sessions saw their slabs at the same address $(printf 0x%x "$base1")"
log "slab addresses: session 1 from $(printf 0x%x "$base1"), session 2 from $(printf 0x%x "$base2"), 2 MiB apart, no kernel address"
# The peers left: the target releases their sessions.
wait_sessions hostile 0 10 "sessions left after the address peers"

log "$checks slab addresses checked, none a kernel address"

# ---- session limit -----------------------------------------------------

param=/sys/module/rmbd_target/parameters/max_sessions
max0=$(< "$param")
trap 'echo "$max0" > "$param" 2> /dev/null || true' EXIT
echo 3 > "$param"
pids=()
for n in 1 2 3; do
	"$peer" --addr "$RMBD_ADDR" --export hostile --seconds 20 \
		--do connect,open,keepalive > "$out/hold.$n" 2>&1 &
	pids+=("$!")
done
wait_sessions hostile 3 30 "3 peers ($(cat "$out"/hold.* | tr '\n' ' '))"
rc=0
"$peer" --addr "$RMBD_ADDR" --export hostile --do connect,open > "$out/fourth" 2>&1 || rc=$?
limits=$(( limits + 2 ))
(( rc == 1 )) && grep -q 'rejected, reason 8' "$out/fourth" ||
	fail "a fourth session beyond max_sessions 3: exit $rc, $(tr '\n' ' ' < "$out/fourth")"
rmbd_fails "a kernel client beyond max_sessions" dev connect addr "$RMBD_ADDR" export hostile
[[ $RMBD_ERR == *"Too many users: target holds as many sessions as it allows"* ]] ||
	fail "a kernel client beyond max_sessions: '$RMBD_ERR'"
(( $(dev_count) == 0 )) || fail "a device exists after the refused connect"
dmesg | grep -q 'rmbd_target: refused a session from .*max_sessions limit' ||
	fail "no kernel log line for the refused sessions"
for p in "${pids[@]}"; do
	wait "$p" || fail "a peer holding a session failed: $(cat "$out"/hold.* | tr '\n' ' ')"
done
wait_sessions hostile 0 10 "sessions left after the peers ended"
echo "$max0" > "$param"
dev=$(dev_connect hostile)
dev_disconnect "$dev"
log "max_sessions 3: a fourth peer got reason 8 and the kernel client \"$RMBD_ERR\"; after the peers left a device connected"

# ---- per-listener limit ------------------------------------------------

# A second listener that holds 2 sessions: a third peer on it is refused
# while a device still connects through the first one; deleting the
# listener under its sessions leaves them be, and they end cleanly (the
# debug kernel's KASAN sees a use of the freed listener).
lport=7471
lfield() {	# FIELD: of listener $lport
	rmbd_cli -j listener | jq --argjson p "$lport" ".[] | select(.port == \$p) | .$1"
}
rmbd_ok listener add "$RMBD_ADDR" port "$lport" max_sessions 2 > /dev/null
[[ $(lfield max_sessions) == 2 ]] ||
	fail "listener port $lport: not max_sessions 2: $(rmbd_cli -j listener)"
# Long enough for what follows while they hold on (on a slow host the
# debug kernel took more than 15 s).
hold=$(rounds 8 30)
pids=()
for n in 1 2; do
	"$peer" --addr "$RMBD_ADDR" --port "$lport" --export hostile --seconds "$hold" \
		--do connect,open,keepalive > "$out/lhold.$n" 2>&1 &
	pids+=("$!")
done
wait_sessions hostile 2 30 "2 peers on port $lport ($(cat "$out"/lhold.* | tr '\n' ' '))"
[[ $(lfield sessions) == 2 ]] || fail "listener port $lport holds $(lfield sessions) sessions, not 2"
rc=0
"$peer" --addr "$RMBD_ADDR" --port "$lport" --export hostile --do connect,open > "$out/lthird" 2>&1 || rc=$?
limits=$(( limits + 1 ))
(( rc == 1 )) && grep -q 'rejected, reason 8' "$out/lthird" ||
	fail "a third session on a listener of max_sessions 2: exit $rc, $(tr '\n' ' ' < "$out/lthird")"
dmesg | grep -q "rmbd_target: refused a session from .*: listener .*:$lport holds 2 sessions, its max_sessions" ||
	fail "no kernel log line for the session the listener refused"
dev=$(dev_connect hostile shared)
rmbd_ok listener del "$RMBD_ADDR" port "$lport"
wait_sessions hostile 3 5 "the device and 2 peers after their listener went"
for p in "${pids[@]}"; do
	wait "$p" || fail "a peer of the deleted listener failed: $(cat "$out"/lhold.* | tr '\n' ' ')"
done
wait_sessions hostile 1 10 "sessions left after the peers of the deleted listener ended"
dev_disconnect "$dev"
wait_sessions hostile 0 10 "sessions left after the device"
log "listener max_sessions 2: a third peer got reason 8, a device connected through the other listener; its 2 sessions outlived the listener's deletion and ended cleanly"

# ---- open deadline -----------------------------------------------------

# A peer that connects and opens nothing, released after 10 s; it waits
# in the background while the malformed messages below go (it opens no
# export: the export's session count does not see it).
"$peer" --addr "$RMBD_ADDR" --export hostile --seconds 40 --do connect,silent \
	> "$out/unopened" 2>&1 &
unopened=$!

# ---- malformed connects and admin messages ------------------------------

# Each connect request refused with its reason (IB and RoCE pad private
# data with zeros to 56 bytes: 6 bytes arrive as queue type 0), and a
# valid one with bytes after it accepted; admin messages of the wrong
# length, an unknown opcode or a reply's opcode refused or the session
# ended; a keepalive flood answered.  A device connected throughout
# keeps working.
dev=$(dev_connect hostile shared)
bad=0
bad_connect() {	# WHAT HOW REASONS
	local rc=0
	"$peer" --addr "$RMBD_ADDR" --export hostile --do "connect:$2" > "$out/bad" 2>&1 || rc=$?
	bad=$(( bad + 1 ))
	(( rc == 1 )) && grep -qE "rejected, reason ($3), " "$out/bad" ||
		fail "$1: exit $rc: $(tr '\n' ' ' < "$out/bad")"
}
bad_connect "no private data" none 1
# IB and RoCE pad private data with zeros to 56 bytes: 6 bytes (magic
# and version) arrive as a request of queue type 0.
bad_connect "6 bytes of private data" short "1|3"
bad_connect "a wrong magic" magic 1
bad_connect "a wrong version" version 2
bad_connect "an unknown queue type" qtype 3
bad_connect "a queue depth of 0" depth 3
bad_connect "an I/O queue of no session" ioq 4
"$peer" --addr "$RMBD_ADDR" --export hostile --do connect:long,open > "$out/bad" 2>&1 ||
	fail "valid private data with bytes after it: $(tr '\n' ' ' < "$out/bad")"
# An I/O queue joins its session with the OPEN reply's join key, not with
# a wrong one or none: the session id alone (logged, shown by export show
# -d) is not enough.
"$peer" --addr "$RMBD_ADDR" --export hostile --do connect,open,ioq > "$out/bad" 2>&1 &&
	grep -qx 'ioq 0 joined' "$out/bad" ||
	fail "an I/O queue with its session's join key: $(tr '\n' ' ' < "$out/bad")"
for key in wrong none; do
	rc=0
	"$peer" --addr "$RMBD_ADDR" --export hostile --do "connect,open,ioq:$key" > "$out/bad" 2>&1 || rc=$?
	bad=$(( bad + 1 ))
	(( rc == 1 )) && grep -q 'ioq: rejected, reason 4, ' "$out/bad" ||
		fail "an I/O queue with join key '$key': exit $rc: $(tr '\n' ' ' < "$out/bad")"
done
dmesg | grep -q 'rmbd_target: session [0-9a-f]*: refused an I/O queue from .* with a wrong join key' ||
	fail "no kernel log line for the I/O queues with a wrong join key"
bad_msg() {	# WHAT STEPS EXPECT(regex of the output)
	local rc=0
	"$peer" --addr "$RMBD_ADDR" --export hostile --do "connect,open,$2" > "$out/bad" 2>&1 || rc=$?
	bad=$(( bad + 1 ))
	grep -qE "$3" "$out/bad" || fail "$1: exit $rc: $(tr '\n' ' ' < "$out/bad")"
}
bad_msg "an unknown opcode" raw:0x77:8 '^raw 0x77 8: status 95$'
bad_msg "a short OPEN" raw:1:16 '^raw 0x1 16: status (22|114)$'
bad_msg "a short MAP" raw:2:8 '^raw 0x2 8: status 22$'
bad_msg "a short AUTH" raw:5:8 '^raw 0x5 8: status 22$'
bad_msg "a reply's opcode" raw:0x8004:8 '^raw 0x8004 8: ended$'
bad_msg "a slab past the end" map:99 'MAP of slab 99: target answered Numerical result out of range'
bad_msg "a MAP_RANGE of no slab" range:0:0 'MAP_RANGE of 0\+0: target answered Invalid argument'
bad_msg "a MAP_RANGE of 59 slabs" range:0:59 'MAP_RANGE of 0\+59: target answered Invalid argument'
bad_msg "a MAP_RANGE past the end" range:2:2 'MAP_RANGE of 2\+2: target answered Numerical result out of range'
bad_msg "a MAP_RANGE that wraps" range:2:4294967295 'MAP_RANGE of 2\+4294967295: target answered Invalid argument'
bad_msg "a MAP_RANGE far past the end" range:4294967295:1 'MAP_RANGE of 4294967295\+1: target answered Numerical result out of range'
bad_msg "a MAP_RANGE of every slab" range:0:3 '^MAP_RANGE of 0\+3: first 0 count 3 addr 0x'
bad_msg "a second OPEN" open 'OPEN: target answered Operation already in progress'
bad_msg "two requests at once with one tag" pair '^pair: 2 replies, tag [0-9]+, status 0$'
# MAP of one slab again and again: one registration, whatever the count
# (the device holds its 3).
"$peer" --addr "$RMBD_ADDR" --export hostile --seconds "$(rounds 3 8)" \
	--do connect,open,map:0,map:0,map:0,keepalive > "$out/remap" 2>&1 &
rp=$!
for (( i = 0; i < 100; i++ )); do
	n=$(grep -c '^mapped slab 0 ' "$out/remap" 2> /dev/null) || n=0
	(( n == 3 )) && break
	sleep 0.1
done
mapped=$(export_field hostile mapped)
wait "$rp" || fail "a peer that maps slab 0 three times: $(tr '\n' ' ' < "$out/remap")"
bad=$(( bad + 1 ))
(( $(grep -c '^mapped slab 0 ' "$out/remap") == 3 && mapped == 4 )) ||
	fail "slab 0 mapped three times by one session: $mapped registrations, expected 4: $(tr '\n' ' ' < "$out/remap")"
flood=$(rounds 2000 300)
"$peer" --addr "$RMBD_ADDR" --export hostile --do "connect,open,ping:$flood" > "$out/bad" 2>&1 &&
	grep -qx "keepalives $flood" "$out/bad" ||
	fail "$flood keepalives in a row: $(tail -n 3 "$out/bad" | tr '\n' ' ')"
bad=$(( bad + 1 ))
dd if=/dev/zero of="/dev/$dev" bs=1M count=1 oflag=direct status=none || fail "$dev failed after the bad messages"
[[ $(dev_field "$dev" state) == live ]] || fail "$dev is $(dev_field "$dev" state)"
dev_disconnect "$dev"
wait_sessions hostile 0 10 "sessions left after the bad messages"
log "malformed connects and messages: $bad tried, each refused or the session ended; $flood keepalives answered; the device stayed live"

rc=0
wait "$unopened" || rc=$?
limits=$(( limits + 1 ))
(( rc == 0 )) || fail "a session that opened nothing: exit $rc (3: still there after 40 s): $(tr '\n' ' ' < "$out/unopened")"
# From its connect request, as the peer measured it.
dt=$(sed -n 's/^disconnected-after-ms //p' "$out/unopened")
dt=${dt:-0}
(( dt >= 9000 && dt <= 25000 )) ||
	fail "a session that opened nothing ended after $dt ms, not about 10 s"
dmesg | grep -q 'rmbd_target: session [0-9a-f]*: no export opened within 10 s' ||
	fail "no kernel log line for the session that opened nothing"
log "a session that opened nothing: released, the peer ended after $dt ms"

# ---- RDMA outside what a session was given -----------------------------

# Each attempt must end in a remote access error from the target's RDMA
# device (which ends that peer's queue pair), while a device connected
# throughout keeps its data.
dev=$(dev_connect hostile shared)
head -c 6M /dev/urandom > "$out/data"
dd if="$out/data" of="/dev/$dev" bs=1M oflag=direct status=none || fail "write to $dev failed"
attacks=0
refused_rdma() {	# WHAT STEPS
	local rc=0
	"$peer" --addr "$RMBD_ADDR" --export hostile --do "connect,open,$2" \
		> "$out/rdma" 2>&1 || rc=$?
	attacks=$(( attacks + 1 ))
	(( rc == 3 )) && grep -qE '^(read|write) .*: remote access error$' "$out/rdma" ||
		fail "$1: exit $rc: $(tr '\n' ' ' < "$out/rdma")"
}
refused_rdma "a READ before slab 0" map:0,read:0:-4096
refused_rdma "a WRITE after the last slab" map:2,write:2:$slab
refused_rdma "a READ across the end of slab 1" map:1,read:1:$(( slab - 2048 ))
refused_rdma "a WRITE with slab 0's key at slab 1's address" map:0,map:1,write:0:$slab
# Another session's key, while it lives; then after it ended.
"$peer" --addr "$RMBD_ADDR" --export hostile --seconds 30 \
	--do connect,open,map:0,keepalive > "$out/holder" 2>&1 &
hp=$!
for (( i = 0; i < 100; i++ )); do
	grep -q '^mapped slab 0' "$out/holder" && break
	sleep 0.1
done
read -r a k < <(sed -n 's/^mapped slab 0 addr \(0x[0-9a-f]*\) len [0-9]* rkey \(0x[0-9a-f]*\)$/\1 \2/p' "$out/holder")
[[ -n ${k:-} ]] || fail "the holding peer mapped nothing: $(tr '\n' ' ' < "$out/holder")"
refused_rdma "a READ with another session's key" "map:0,read:@$a:$k"
refused_rdma "a WRITE with another session's key" "map:0,write:@$a:$k"
kill "$hp" 2> /dev/null || true
wait "$hp" 2> /dev/null || true
wait_sessions hostile 1 10 "the holding peer's session did not end"
refused_rdma "a READ with the key of a session that ended" "map:0,read:@$a:$k"
# A legitimate read still works, and the device's data is intact.
rc=0
"$peer" --addr "$RMBD_ADDR" --export hostile --do connect,open,map:0,read:0,close > "$out/rdma" 2>&1 || rc=$?
(( rc == 0 )) && grep -q '^read slab 0 off 0: ok' "$out/rdma" ||
	fail "a READ inside slab 0: exit $rc: $(tr '\n' ' ' < "$out/rdma")"
cmp "$out/data" <(dd if="/dev/$dev" bs=1M count=6 iflag=direct status=none) ||
	fail "the device's data changed under the attacks"
[[ $(dev_field "$dev" state) == live ]] || fail "$dev is $(dev_field "$dev" state) after the attacks"
dev_disconnect "$dev"
wait_sessions hostile 0 10 "sessions left after the RDMA attacks"
[[ $(export_field hostile mapped) == 0 ]] ||
	fail "left: $(export_field hostile sessions) sessions, $(export_field hostile mapped) mapped"
log "RDMA attacks: $attacks tried, 0 accepted (remote access errors); a device connected throughout kept its data"

# Every section failed the test at its first accepted attack, and guest.sh
# fails it on any kernel report; the count of those, for the record.
dmesg | tail -n "+$(( kmsg0 + 1 ))" | kmsg_reports > "$out/reports" || true
[[ ! -s $out/reports ]] || fail "kernel reports: $(head -n 5 "$out/reports")"
log "hostile peer: $(( limits + bad + attacks )) attacks ($limits on the limits, $bad malformed, $attacks with RDMA), 0 accepted, 0 kernel reports"

rmbd_ok export del hostile
