#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Keepalive reaping: the target ends the session of a client that went
# silent.  With session_timeout 3 s (6 on the debug kernel), rmbd-peer
# opens an export, maps its slabs and then sends nothing: export show
# counts its session and its mappings until the target releases them, no
# sooner than the timeout after the peer's last message and within a few
# seconds more (bounded both by the peer, which sees its connection end,
# and by polling export show); the kernel log gives silence as the
# reason and rmbd monitor reports the session up and down.  A peer that
# sends keepalives at the interval the target asks for stays for several
# timeouts.  A kernel client on the same export, connected under the
# short timeout, stays live through it all on its own keepalives, and its
# data is intact.  Last, its link goes down for longer than the timeout:
# the target releases the session at once but destroys its connection
# ids only once the link is back, and the device reconnects.
# timeout=180

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

require_peer

param=/sys/module/rmbd_target/parameters/session_timeout
# session_timeout, seconds: on the debug kernel, where a process takes
# about a second to start, the test's first look at export show comes a
# few seconds after the peer fell silent.
T=$(rounds 3 6)
slack=$(rounds 2 5)	# from the deadline to the peer seeing its disconnect
hold=$(( 3 * T + 1 ))	# how long the keepalive peer stays
out=/run/rmbd-sto
rm -rf "$out"
mkdir -p "$out"

old_timeout=$(< "$param")
mon='' peer_pid=''
cleanup() {
	[[ -n $peer_pid ]] && kill "$peer_pid" 2> /dev/null
	[[ -n $mon ]] && kill "$mon" 2> /dev/null
	echo "$old_timeout" > "$param"
	true
}
trap cleanup EXIT
# Read when an admin queue connects: set before anyone connects.
echo "$T" > "$param"

# The value after KEY on the line of FILE whose first word is WORD.
# Builtins only, as in wait_peer_line: they run while the clock runs.
peer_val() {	# FILE WORD KEY
	local -a w
	local i
	while read -r -a w; do
		[[ ${w[0]:-} == "$2" ]] || continue
		for (( i = 0; i + 1 < ${#w[@]}; i++ )); do
			[[ ${w[i]} == "$3" ]] && { echo "${w[i + 1]}"; return 0; }
		done
	done < "$1"
}

has_line() {	# FILE WORD
	local -a w
	[[ -f $1 ]] || return 1
	while read -r -a w; do
		[[ ${w[0]:-} == "$2" ]] && return 0
	done < "$1"
	return 1
}

# Wait up to SECONDS for a line starting with WORD in FILE, written by
# the peer PID, which must not exit first.
wait_peer_line() {	# FILE WORD PID SECONDS
	local i
	for (( i = 0; i < $4 * 20; i++ )); do
		has_line "$1" "$2" && return 0
		kill -0 "$3" 2> /dev/null || break
		sleep 0.05
	done
	has_line "$1" "$2" && return 0
	fail "rmbd-peer printed no '$2' line: $(tr '\n' ' ' < "$1") $(cat "${1%.out}.err" 2> /dev/null)"
}

# Sessions ($s) and mapped slabs ($m) of export sto: one process, no jq,
# as the release is timed with it.
counts() {
	local j
	s='' m=''
	j=$(rmbd_cli -j export show sto) || return 0
	[[ $j =~ \"sessions\":[[:space:]]*([0-9]+) ]] && s=${BASH_REMATCH[1]}
	[[ $j =~ \"mapped\":[[:space:]]*([0-9]+) ]] && m=${BASH_REMATCH[1]}
	return 0
}

"$RMBD_BIN" -j monitor session > "$out/events" 2> "$out/monitor.err" &
mon=$!
sleep "$(rounds 1 3)"

# rmbd-peer gives no host identity.
target_setup sto 32M slab 8M any_host shared
nr_slabs=$(export_field sto nr_slabs)
[[ $nr_slabs == 4 ]] || fail "export sto of 32M in 8M slabs has nr_slabs $nr_slabs"
dev=$(dev_connect sto)
head -c 4M /dev/urandom > "$out/data"
dd if="$out/data" of="/dev/$dev" bs=1M oflag=direct status=none || fail "write to /dev/$dev failed"
counts
(( s == 1 && m == nr_slabs )) ||
	fail "with the kernel client: $s sessions, $m slabs mapped; expected 1 and $nr_slabs"
log "/dev/$dev connected under session_timeout $T: $(rmbd_cli dev show "$dev")"

# ---- a peer that falls silent ------------------------------------------
"$peer" --addr "$RMBD_ADDR" --port "$RMBD_PORT" --export sto --map \
	--open-then silent --seconds $(( T + slack + 10 )) \
	> "$out/silent.out" 2> "$out/silent.err" &
peer_pid=$!
wait_peer_line "$out/silent.out" silent-since-us "$peer_pid" 30
since=$(peer_val "$out/silent.out" silent-since-us silent-since-us)

# Poll export show until the session is gone.  A poll that still sees it
# started before the release (last_there); the first one that does not
# ended after it (gone_at).
last_there='' gone_at='' polls=0
while :; do
	polls=$(( polls + 1 ))
	t0=$(usec)
	counts
	t1=$(usec)
	if (( s == 2 )); then
		(( m == 2 * nr_slabs )) ||
			fail "the silent peer's session is there with $m slabs mapped, expected $(( 2 * nr_slabs ))"
		last_there=$t0
	elif (( s == 1 )); then
		gone_at=$t1
		break
	else
		fail "export sto has $s sessions, expected the kernel client's and the peer's"
	fi
	(( t0 - since <= (T + slack) * 1000000 )) ||
		fail "the target still holds the silent peer's session $(( (t0 - since) / 1000 )) ms after its last message (session_timeout $T s)"
	sleep 0.05
done
gone_ms=$(( (gone_at - since) / 1000 ))
sid=$(peer_val "$out/silent.out" session session)
tmo_ms=$(peer_val "$out/silent.out" opened session_timeout_ms)
mapped=$(grep -c '^mapped slab ' "$out/silent.out" || true)
log "peer: session $sid, $mapped slabs mapped, session_timeout_ms $tmo_ms, then silent"
[[ $sid =~ ^[0-9a-f]+$ ]] || fail "no session id from the peer: $(cat "$out/silent.out")"
(( tmo_ms == T * 1000 )) || fail "OPEN reply gives session_timeout_ms $tmo_ms, the target's session_timeout is $T s"
(( mapped == nr_slabs )) || fail "the peer mapped $mapped slabs of $nr_slabs"
[[ -n $last_there ]] ||
	fail "the silent peer's session was gone at the first look, $gone_ms ms after its last message"
(( m == nr_slabs )) || fail "after the release $m slabs mapped, expected the kernel client's $nr_slabs"
there_ms=$(( (last_there - since) / 1000 ))
log "export show ($polls polls): the session there $there_ms ms after the peer's last message, gone $gone_ms ms after it"

wait_exit "$peer_pid" 10 "the silent peer did not end after the target released its session"
rc=0
wait "$peer_pid" || rc=$?
peer_pid=
log "peer: $(grep -v '^mapped slab ' "$out/silent.out" | tr '\n' ' ')"
(( rc == 0 )) || fail "the silent peer exited with $rc: $(cat "$out/silent.err") $(tail -n 2 "$out/silent.out" | tr '\n' ' ')"
ms=$(peer_val "$out/silent.out" disconnected-after-ms disconnected-after-ms)
[[ -n $ms ]] || fail "the silent peer did not report its disconnect"
# The target counts from its receive of the last message, which the peer
# sent before, in jiffies: one jiffy (up to 10 ms) short is the timeout.
(( ms >= T * 1000 - 10 )) || fail "the target released the silent session after $ms ms, before session_timeout $T s"
(( ms <= (T + slack) * 1000 )) || fail "the target released the silent session after $ms ms, more than session_timeout $T + $slack s"
(( gone_ms >= T * 1000 - 10 )) || fail "export show lost the session $gone_ms ms after the last message, before session_timeout $T s"
log "released after $ms ms of silence (session_timeout $T s; peer ended by $(peer_val "$out/silent.out" ended-by ended-by))"

dmesg | grep -q "session $sid: client silent for $T s, releasing the session" ||
	fail "no 'client silent' line for session $sid in the kernel log: $(dmesg | grep rmbd | tail -n 5)"

for (( i = 0; i < 100; i++ )); do
	jq -e --arg id "$sid" 'select(.id == $id and .event == "down")' "$out/events" > /dev/null && break
	sleep 0.1
done
for ev in up down; do
	n=$(jq -r --arg id "$sid" 'select(.id == $id and .type == "session" and .export == "sto") | .event' "$out/events" |
		grep -cx "$ev" || true)
	(( n == 1 )) || fail "rmbd monitor reported $n '$ev' events of session $sid, expected 1: $(head -c 600 "$out/events")"
done
log "rmbd monitor: session $sid up and down"

# ---- a peer that sends keepalives --------------------------------------
"$peer" --addr "$RMBD_ADDR" --port "$RMBD_PORT" --export sto \
	--keepalive --seconds "$hold" > "$out/ka.out" 2> "$out/ka.err" &
peer_pid=$!
wait_peer_line "$out/ka.out" keepalive-interval-ms "$peer_pid" 30
ka_sid=$(peer_val "$out/ka.out" session session)
interval=$(peer_val "$out/ka.out" keepalive-interval-ms keepalive-interval-ms)
(( interval == T * 1000 / 3 )) || fail "the keepalive peer sends every $interval ms, expected a third of $T s"
# Its session must be there all along, the kernel client's too.
end=$(( SECONDS + hold + 15 ))
while kill -0 "$peer_pid" 2> /dev/null; do
	(( SECONDS <= end )) || fail "the keepalive peer still runs $(( hold + 15 )) s after it started, for $hold s"
	counts
	if (( s != 2 )) && kill -0 "$peer_pid" 2> /dev/null; then
		has_line "$out/ka.out" keepalives ||
			fail "export sto has $s sessions while the keepalive peer holds its own: $(tr '\n' ' ' < "$out/ka.out")"
	fi
	sleep 0.2
done
rc=0
wait "$peer_pid" || rc=$?
peer_pid=
log "keepalive peer: $(tr '\n' ' ' < "$out/ka.out")"
(( rc == 0 )) || fail "the keepalive peer exited with $rc: $(cat "$out/ka.err") $(tail -n 3 "$out/ka.out" | tr '\n' ' ')"
grep -qx still-connected "$out/ka.out" || fail "the keepalive peer did not stay connected"
kas=$(peer_val "$out/ka.out" keepalives keepalives)
(( kas >= hold * 1000 / interval - 2 )) || fail "the keepalive peer had only $kas keepalives answered in $hold s"
log "the keepalive peer stayed $hold s ($(( hold * 1000 / (T * 1000) )) timeouts) with $kas keepalives"

# It disconnected: its session goes, and the monitor says so.
for (( i = 0; i < 100; i++ )); do
	counts
	(( s == 1 )) && break
	sleep 0.1
done
(( s == 1 )) || fail "export sto has $s sessions after the keepalive peer disconnected"
for (( i = 0; i < 100; i++ )); do
	jq -e --arg id "$ka_sid" 'select(.id == $id and .event == "down")' "$out/events" > /dev/null && break
	sleep 0.1
done
n=$(jq -r --arg id "$ka_sid" 'select(.id == $id) | .event' "$out/events" | tr '\n' ' ')
[[ $n == "up down " ]] || fail "rmbd monitor reported '$n' for the keepalive peer's session $ka_sid, expected up down"
if dmesg | grep -q "session $ka_sid: client silent"; then
	fail "the target took the keepalive peer for silent"
fi

# ---- the kernel client ---------------------------------------------------
# No session but the two peers' ended while it was connected.
downs=$(jq -r 'select(.event == "down") | .id' "$out/events" | sort | tr '\n' ' ')
want=$(printf '%s\n' "$sid" "$ka_sid" | sort | tr '\n' ' ')
[[ $downs == "$want" ]] || fail "sessions that ended: $downs; expected only the peers' $want"
[[ $(dev_field "$dev" state) == live ]] || fail "/dev/$dev is $(dev_field "$dev" state), not live"
[[ $(dev_field "$dev" reconnects) == 0 ]] || fail "/dev/$dev lost its session: $(dev_field "$dev" reconnects) reconnects"
cmp "$out/data" <(dd if="/dev/$dev" bs=1M count=4 iflag=direct status=none) ||
	fail "/dev/$dev reads back other data than was written"
head -c 4M /dev/urandom > "$out/data2"
dd if="$out/data2" of="/dev/$dev" bs=1M seek=28 oflag=direct status=none || fail "write to /dev/$dev failed"
cmp "$out/data2" <(dd if="/dev/$dev" bs=1M skip=28 count=4 iflag=direct status=none) ||
	fail "/dev/$dev reads back other data than was just written"
log "/dev/$dev stayed live through the test: $(rmbd_cli dev show "$dev")"

# ---- the client's link down for longer than the timeout -----------------
# The target takes the client for silent and releases its session: its
# export and memory at once, but it says goodbye only once its port is
# back, since a disconnect request sent on a down soft-RoCE port leaves
# rxe's connection manager deaf for good.  The device then reconnects as
# after any outage.
trap 'link_up 2> /dev/null || true; cleanup' EXIT
before=$(dev_field "$dev" reconnects)
link_down
sleep $(( 3 * T + 4 ))
n=$(export_field sto sessions)
[[ $n == 0 ]] || fail "export sto still counts $n sessions with the link down"
link_up
ms=$(wait_live_again "$dev")
dmesg | grep -q "port 1 of $RMBD_RDMA_DEV is down: its disconnect waits for the port" ||
	fail "the target did not hold its disconnect for the port: $(dmesg | grep rmbd | tail -n 4)"
(( $(dev_field "$dev" reconnects) > before )) || fail "/dev/$dev live again without a reconnect"
cmp "$out/data2" <(dd if="/dev/$dev" bs=1M skip=28 count=4 iflag=direct status=none) ||
	fail "/dev/$dev reads back other data after the outage"
log "link down $(( 3 * T + 4 )) s: the target released the session and held its disconnect for the port; /dev/$dev reconnected in $ms ms"

dev_disconnect "$dev"
rmbd_ok export del sto
