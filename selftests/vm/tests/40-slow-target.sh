#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A target that answers, but slowly: rmbd-liar maps one slab per
# MAP_RANGE and answers each after seconds (--lie slow), so that mapping
# its export would take minutes, each answer within the client's 10 s.
#  - dev connect gives up after connect_timeout (a module parameter),
#    with that reason, and leaves no device;
#  - kill -9 ends a dev connect at once (its waits are killable);
#  - a device whose reconnect meets such a target (--lie slow-again: the
#    first session is answered at once) is disconnected at once and the
#    module unloaded at once, and its RDMA device removed at once once the
#    liar is gone (the reconnect then waits for an answer that never
#    comes): each aborts the reconnect, which holds the leg's
#    recovery_lock, rather than wait for it.
# timeout=400

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
require_liar

param=/sys/module/rmbd_client/parameters/connect_timeout
[[ -w $param ]] || fail "rmbd_client has no connect_timeout parameter"
saved=$(< "$param")
out=/run/rmbd-slow
rm -rf "$out"
mkdir -p "$out"
port=4431
slow=8000	# ms per slab: 16 slabs take over 2 minutes
cleanup() {
	[[ -n ${cpid:-} ]] && kill -9 "$cpid" 2> /dev/null
	liar_stop
	link_up 2> /dev/null || true
	rmbd_modules_loaded || rmbd_load_modules || true
	echo "$saved" > "$param" 2> /dev/null || true
	dev_disconnect_all
	second_link_del
}
trap cleanup EXIT

start_liar() {	# ADDR LIE
	liar_start "$out" "$1" "$port" --size $(( 32 << 20 )) --lie "$2"
}

# Wait up to 30 s for the liar's Nth session to open.
wait_session() {	# N
	local t0
	t0=$(usec)
	until (( $(grep -c 'opened$' "$out/liar.out") >= $1 )); do
		(( $(usec) - t0 < 30000000 )) ||
			fail "rmbd-liar: no session $1 within 30 s: $(tail -n 3 "$out/liar.out")"
		sleep 0.1
	done
}

no_device() {	# WHAT
	local n
	n=$(dev_count)
	(( n == 0 )) || fail "$1 left $n device(s): $(rmbd_cli dev show)"
}

# ---- the connect's deadline ---------------------------------------------

echo 6 > "$param"
start_liar "$RMBD_ADDR" "slow:3000"
t0=$(usec)
rc=0
err=$(timeout 120 "$RMBD_BIN" dev connect addr "$RMBD_ADDR" port "$port" \
	export liar 2>&1 > /dev/null) || rc=$?
ms=$(( ($(usec) - t0) / 1000 ))
(( rc == 1 )) || fail "dev connect to a slow target: exit $rc after $ms ms: $err"
[[ $err == *connect_timeout* ]] || fail "dev connect to a slow target: '$err', no word of connect_timeout"
(( ms < 6000 + 10000 )) || fail "dev connect gave up after $ms ms, with connect_timeout 6 s"
no_device "a connect past its deadline"
log "dev connect gave up after $ms ms with connect_timeout 6: $err"

# ---- kill -9 -------------------------------------------------------------

echo 300 > "$param"
start_liar "$RMBD_ADDR" "slow:$slow"
"$RMBD_BIN" dev connect addr "$RMBD_ADDR" port "$port" export liar \
	> /dev/null 2>&1 &
cpid=$!
wait_session 1
sleep 1
t0=$(usec)
kill -9 "$cpid"
while kill -0 "$cpid" 2> /dev/null; do
	(( $(usec) - t0 < 5000000 )) ||
		fail "dev connect still runs 5 s after kill -9 (state $(awk '{print $3}' "/proc/$cpid/stat" 2> /dev/null))"
	sleep 0.1
done
wait "$cpid" 2> /dev/null || true
cpid=
log "kill -9 ended dev connect after $(( ($(usec) - t0) / 1000 )) ms"
t0=$(usec)
until (( $(dev_count) == 0 )); do
	(( $(usec) - t0 < 10000000 )) || no_device "a killed connect"
	sleep 0.1
done

# ---- a reconnect that meets a slow target --------------------------------

# A device ($dev) on the liar at ADDR whose link (NETDEV: d0 or d2) goes
# and comes back: its reconnect opens the liar's second session, and
# waits.  Not in a subshell: the liar's pid is this shell's.
slow_reconnect() {	# ADDR NETDEV
	local t0
	start_liar "$1" "slow-again:$slow"
	dev=$(rmbd_ok dev connect addr "$1" port "$port" export liar \
		reconnect_delay 1 loss_timeout 300 | tail -n 1)
	[[ $dev =~ ^rmbd[0-9]+$ ]] || fail "dev connect printed '$dev'"
	ip link set "$2" down
	t0=$(usec)
	until [[ $(dev_field "$dev" state) != live ]]; do
		(( $(usec) - t0 < 30000000 )) || fail "$dev stayed live with its link down"
		sleep 0.1
	done
	ip link set "$2" up
	wait_session 2
	sleep 1
}

# Run CMD...; it must end within LIMIT seconds, with status 0.
prompt() {	# LIMIT WHAT CMD...
	local limit=$1 what=$2 rc=0 t0
	shift 2
	t0=$(usec)
	timeout -k 5 60 "$@" > "$out/cmd.out" 2>&1 || rc=$?
	ms=$(( ($(usec) - t0) / 1000 ))
	(( rc != 124 && rc != 137 )) || fail "$what waited for the reconnect: still running after $ms ms"
	(( rc == 0 )) || fail "$what: exit $rc after $ms ms: $(tail -n 3 "$out/cmd.out")"
	(( ms < limit * 1000 )) || fail "$what took $ms ms: it waited for the reconnect"
	log "$what: $ms ms"
}

slow_reconnect "$RMBD_ADDR" "$RMBD_NETDEV"
prompt 5 "dev disconnect during a slow reconnect" "$RMBD_BIN" dev disconnect "$dev" force
no_device "the disconnect"

slow_reconnect "$RMBD_ADDR" "$RMBD_NETDEV"
prompt 5 "module unload during a slow reconnect" rmmod rmbd_client
rmbd_load_modules || fail "cannot load the modules again"
echo 300 > "$param"

# The liar, a user of rxe1 too, must go first: the removal waits for
# its verbs context (ib_uverbs), not for rmbd.  The reconnect then waits
# for an answer that never comes, up to 10 s; the removal must not.
second_link_add
slow_reconnect "$RMBD_ADDR2" d2
liar_stop
prompt 5 "RDMA device removal during a slow reconnect" rdma link del rxe1
prompt 5 "dev disconnect after its RDMA device went" "$RMBD_BIN" dev disconnect "$dev" force
no_device "the disconnect"
liar_stop
log "ok"
