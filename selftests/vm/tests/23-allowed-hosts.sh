#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Allowed hosts.  An export opens only for the hosts it names, or for
# anyone when created any_host; one that names nobody refuses everyone.
# A refused connect says why in one line and leaves nothing behind.
# Hosts are added and removed on a live export; removing a host ends its
# session, and its device fails at once instead of waiting out the loss
# timeout.  export show and the session events name the hosts.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
require_peer

out=/run/rmbd-hosts
mkdir -p "$out"
me=$(rmbd_cli host) || fail "no host identity"
other=nqn.2014-08.org.nvmexpress:uuid:0b0b0b0b-0000-4000-8000-000000000000
cleanup() {
	[[ -n ${mon:-} ]] && kill "$mon" 2> /dev/null
	true
}
trap cleanup EXIT

"$RMBD_BIN" -j monitor session > "$out/events" 2> "$out/monitor.err" &
mon=$!
sleep 1

refused() {	# WHAT EXPORT [dev connect args]
	local what=$1 exp=$2
	shift 2
	rmbd_fails "$what" dev connect addr "$RMBD_ADDR" export "$exp" "$@"
	[[ $RMBD_ERR == *"Permission denied: host "*" is not allowed to use export $exp" ]] ||
		fail "$what: '$RMBD_ERR', expected 'host H is not allowed to use export $exp'"
	(( $(dev_count) == 0 )) || fail "$what: a device is left: $(rmbd_cli dev show)"
	[[ $(export_field "$exp" sessions) == 0 ]] || fail "$what: a session is left"
}

# Named hosts: this machine and another.
target_setup named 16M hosts "$me,$other"
[[ $(rmbd_cli -j export show named | jq -r '.[0].hosts | join(",")') == "$me,$other" ]] ||
	fail "export show named: hosts $(rmbd_cli -j export show named | jq -c '.[0].hosts')"
[[ $(export_field named any_host) == false ]] || fail "named: any_host"
dev=$(dev_connect named)
[[ $(dev_field "$dev" host) == "$me" ]] || fail "$dev gave host '$(dev_field "$dev" host)'"
dev_disconnect "$dev"
dev=$(dev_connect named host "$other")
dev_disconnect "$dev"
refused "a host the export does not name" named host nqn.x:nobody
rc=0
"$peer" --addr "$RMBD_ADDR" --export named --do connect,open > "$out/anon" 2>&1 || rc=$?
(( rc == 1 )) && grep -q 'OPEN: target answered Permission denied' "$out/anon" ||
	fail "a peer without identity on a named export: exit $rc, $(tr '\n' ' ' < "$out/anon")"
log "export named ($me, $other): both connect, nqn.x:nobody and a peer without identity are refused"

# Nobody named: nobody gets in, until a host is added.
target_setup nobody 16M hosts "$other"
rmbd_ok export host del nobody "$other"
[[ $(rmbd_cli -j export show nobody | jq '.[0].hosts | length') == 0 ]] || fail "nobody still names a host"
refused "an export that names no host" nobody
rmbd_fails "removing a host the export does not name" export host del nobody "$other"
[[ $RMBD_ERR == *"No such file or directory: the export does not name this host"* ]] ||
	fail "removing an unnamed host: '$RMBD_ERR'"
rmbd_ok export host add nobody "$me"
rmbd_fails "adding a host twice" export host add nobody "$me"
[[ $RMBD_ERR == *"File exists"* ]] || fail "adding a host twice: '$RMBD_ERR'"
dev=$(dev_connect nobody)
log "export nobody: refused everyone, took $me once added"

# Removing the host of a live device: its session ends, the device fails
# (with a loss timeout of 60 s) within a few seconds, not after 60.
t0=$SECONDS
rmbd_ok export host del nobody "$me"
for (( i = 0; i < 300; i++ )); do
	[[ $(dev_field "$dev" state) == failed ]] && break
	sleep 0.1
done
[[ $(dev_field "$dev" state) == failed ]] ||
	fail "$dev is $(dev_field "$dev" state) 30 s after its host was removed"
log "host removed under $dev: failed after $(( SECONDS - t0 )) s: $(dmesg | grep -a "rmbd_client: $dev: " | tail -n 1)"
rc=0
timeout -k 5 10 dd if="/dev/$dev" of=/dev/null bs=4k count=1 iflag=direct status=none 2> /dev/null || rc=$?
(( rc != 0 && rc != 124 && rc != 137 )) || fail "a read on $dev after its host was removed: exit $rc"
dev_disconnect "$dev"
[[ $(export_field nobody sessions) == 0 ]] || fail "nobody keeps a session"

# any_host: a peer without identity gets in.
target_setup open 16M any_host
[[ $(export_field open any_host) == true ]] || fail "open: any_host $(export_field open any_host)"
"$peer" --addr "$RMBD_ADDR" --export open --do connect,open,close > "$out/open" 2>&1 ||
	fail "a peer without identity on an any_host export: $(tr '\n' ' ' < "$out/open")"
dev=$(dev_connect open host nqn.x:anyone)
dev_disconnect "$dev"

# Bad identities: the CLI refuses them itself (a usage error, exit 2),
# the kernel refuses them over netlink (nl-fuzz) and in OPEN: a peer's
# host with a slash gets EINVAL, a session neither opened nor up.
bad_host() {	# WHAT ARGS...
	local what=$1 rc=0
	shift
	rmbd_cli "$@" > /dev/null 2> "$out/err" || rc=$?
	(( rc == 2 )) && grep -q "^rmbd: invalid host identity" "$out/err" ||
		fail "$what: exit $rc, $(tr '\n' ' ' < "$out/err")"
}
bad_host "a host with a slash" dev connect addr "$RMBD_ADDR" export open host a/b
bad_host "a host with a space" export host add open "a b"
bad_host "a host of 200 characters" export host add open "$(printf 'h%.0s' $(seq 200))"
rc=0
"$peer" --addr "$RMBD_ADDR" --export open --host a/b --do connect,open > "$out/bad" 2>&1 || rc=$?
(( rc == 1 )) && grep -q 'OPEN: target answered Invalid argument' "$out/bad" ||
	fail "a peer's host with a slash: exit $rc, $(tr '\n' ' ' < "$out/bad")"
log "bad host identities refused by the CLI and, from a peer, by the target"

# The session events name the host.
sleep 1
kill "$mon" 2> /dev/null; mon=
grep -q "\"host\":\"$me\"" "$out/events" || fail "no session event names $me: $(head -c 600 "$out/events")"
grep -q '"host":"nqn.x:anyone"' "$out/events" || fail "no session event names nqn.x:anyone"
log "$(grep -c '"event":"up"' "$out/events") session up events, hosts named"
for e in named nobody open; do rmbd_ok export del "$e"; done
