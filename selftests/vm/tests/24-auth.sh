#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Authentication: an export's host with a secret must prove it has it,
# and the target must prove it too.  Right secret: the device connects,
# says auth, and reconnects after a link flap.  No secret, a wrong one,
# or a secret for a target that asks for none: refused, each with its
# own reason, nothing left behind; the target logs the failure without
# the secret.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd
require_peer

out=/run/rmbd-auth
rm -rf "$out"
mkdir -p "$out"
me=$(rmbd_cli host) || fail "no host identity"
rmbd_ok secret generate "$out/s1"
rmbd_ok secret generate "$out/s2"
cleanup() { ip link set "$RMBD_NETDEV" up 2> /dev/null || true; }
trap cleanup EXIT

refused() {	# WHAT EXPORT WHY [dev connect args]
	local what=$1 exp=$2 why=$3
	shift 3
	rmbd_fails "$what" dev connect addr "$RMBD_ADDR" export "$exp" "$@"
	[[ $RMBD_ERR == *"$why"* ]] || fail "$what: '$RMBD_ERR', expected '$why'"
	(( $(dev_count) == 0 )) || fail "$what: a device is left"
	wait_sessions "$exp" 0 5 "$what: a session is left"
}

target_setup secure 16M hosts nqn.x:placeholder
rmbd_ok export host add secure "$me" secret-file "$out/s1"
dev=$(dev_connect secure secret-file "$out/s1")
[[ $(dev_field "$dev" auth) == true ]] || fail "$dev: auth $(dev_field "$dev" auth)"
head -c 4M /dev/urandom > "$out/data"
dd if="$out/data" of="/dev/$dev" bs=1M oflag=direct status=none || fail "write failed"
[[ $(rmbd_cli -j -d export show secure | jq -r '.[0].session_list[0].auth') == true ]] ||
	fail "export show -d: $(rmbd_cli -j -d export show secure)"
log "the right secret: /dev/$dev connected, auth (on both sides)"

# A reconnect authenticates again.
link_flap "$dev"
cmp "$out/data" <(dd if="/dev/$dev" bs=1M count=4 iflag=direct status=none) ||
	fail "data differs after the reconnect"
n=$(dmesg | grep -c "rmbd_target: session [0-9a-f]*: host '$me' opened export secure, authenticated") || true
(( n >= 2 )) || fail "the target logged $n authenticated opens of secure, expected 2 (connect, reconnect)"
log "reconnected after a link flap, authenticated again, data intact"
dev_disconnect "$dev"

refused "no secret" secure "Permission denied: the target wants this host's secret: connect with one"
refused "a wrong secret" secure "Permission denied: the target refused this host's secret" \
	secret-file "$out/s2"
dmesg | grep -q "rmbd_target: session [0-9a-f]*: host '$me' failed to authenticate for export secure" ||
	fail "no kernel log line for the wrong secret"
if dmesg | grep -qF "$(cut -c1-16 "$out/s1")"; then
	fail "the kernel log shows the secret"
fi

# A peer playing the host: the right answer works; a wrong one, an
# answer replayed from another session, and MAP before AUTH are refused;
# a session that opens but never answers is released after 10 s.
pp=(--addr "$RMBD_ADDR" --export secure --host "$me")
"$peer" "${pp[@]}" --secret-file "$out/s1" --do connect,open,auth,close > "$out/p1" 2>&1 ||
	fail "rmbd-peer with the secret: $(tr '\n' ' ' < "$out/p1")"
grep -q 'auth 1' "$out/p1" && grep -q '^target-proved yes' "$out/p1" ||
	fail "rmbd-peer with the secret: $(tr '\n' ' ' < "$out/p1")"
answer=$(sed -n 's/^auth-response //p' "$out/p1")
attacks=0
for how in "auth:wrong" "auth:$answer" "map"; do
	rc=0
	"$peer" "${pp[@]}" --secret-file "$out/s1" --do "connect,open,$how" > "$out/p2" 2>&1 || rc=$?
	attacks=$(( attacks + 1 ))
	# A wrong answer ends the session right after the refusal: the
	# peer must still have the refusal.
	(( rc == 1 )) && grep -q 'target answered Permission denied' "$out/p2" ||
		fail "rmbd-peer ${how%%:*}: exit $rc: $(tr '\n' ' ' < "$out/p2")"
done
wait_sessions secure 0 10 "a session is left after the attacks"
t0=$(usec)
rc=0
"$peer" "${pp[@]}" --seconds 30 --do connect,open,silent > "$out/p3" 2>&1 || rc=$?
dt=$(( ($(usec) - t0) / 1000 ))
(( rc == 0 && dt >= 9000 && dt <= 25000 )) ||
	fail "a session that never answers: exit $rc after $dt ms: $(tr '\n' ' ' < "$out/p3")"
log "rmbd-peer: the right answer proved both ways; $attacks attacks (a wrong answer, a replayed one, MAP first) refused; no answer: released after $dt ms"

target_setup plain 16M
refused "a secret for a target that asks for none" plain \
	"Permission denied: the target asks for no secret, so it cannot prove it has it" \
	secret-file "$out/s1"
log "no secret, a wrong one, one the target did not ask for: refused"
for e in secure plain; do rmbd_ok export del "$e"; done
