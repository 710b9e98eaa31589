#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the target tells, and lets, a peer that is not rmbd-client:
# rmbd-peer (librdmacm, libibverbs) as the client.
#  - The addresses of the mapped slabs are no kernel addresses (on
#    soft-RoCE a DMA address is one): each session gets a random base,
#    and slab i lies i slab sizes above it, as protocol.rst says.
#  - Sessions beyond max_sessions are refused (RMBD_REJ_LIMIT; the kernel
#    client says why), and the target serves again once they are gone.
#  - A session that opens no export is released after 10 s, long before
#    the session timeout (30 s).
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
require_peer

out=/run/rmbd-hostile
mkdir -p "$out"
slab=$(( 2 << 20 ))
# rmbd-peer gives no host identity.
target_setup hostile 6M slab 2M any_host
checks=0

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
for (( i = 0; i < 100; i++ )); do
	[[ $(export_field hostile sessions) == 0 ]] && break
	sleep 0.1
done
[[ $(export_field hostile sessions) == 0 ]] || fail "sessions left: $(export_field hostile sessions)"

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
for (( i = 0; i < 300; i++ )); do
	[[ $(export_field hostile sessions) == 3 ]] && break
	sleep 0.1
done
[[ $(export_field hostile sessions) == 3 ]] ||
	fail "3 peers hold $(export_field hostile sessions) sessions: $(cat "$out"/hold.* | tr '\n' ' ')"
rc=0
"$peer" --addr "$RMBD_ADDR" --export hostile --do connect,open > "$out/fourth" 2>&1 || rc=$?
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
for (( i = 0; i < 100; i++ )); do
	[[ $(export_field hostile sessions) == 0 ]] && break
	sleep 0.1
done
[[ $(export_field hostile sessions) == 0 ]] || fail "sessions left after the peers ended"
echo "$max0" > "$param"
dev=$(dev_connect hostile)
dev_disconnect "$dev"
log "max_sessions 3: a fourth peer got reason 8 and the kernel client \"$RMBD_ERR\"; after the peers left a device connected"

# ---- open deadline -----------------------------------------------------

t0=$(usec)
rc=0
"$peer" --addr "$RMBD_ADDR" --export hostile --seconds 40 --do connect,silent \
	> "$out/unopened" 2>&1 || rc=$?
dt=$(( ($(usec) - t0) / 1000 ))
(( rc == 0 )) || fail "a session that opened nothing: exit $rc (3: still there after 40 s): $(tr '\n' ' ' < "$out/unopened")"
(( dt >= 9000 && dt <= 25000 )) ||
	fail "a session that opened nothing ended after $dt ms, not about 10 s"
dmesg | grep -q 'rmbd_target: session [0-9a-f]*: no export opened within 10 s' ||
	fail "no kernel log line for the session that opened nothing"
log "a session that opened nothing: released, the peer ended after $dt ms"

rmbd_ok export del hostile
