#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A device whose connection broke tries to reconnect every
# reconnect_delay seconds while the target does not answer (its listener
# is gone), and holds its I/O meanwhile: the write that found the link
# down neither fails nor completes until the listener is back, then
# completes, and reads back.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

delay=2
loss=60
attempts=4
out=/run/rmbd-reconnect
mkdir -p "$out"
cleanup() {
	ip link set "$RMBD_NETDEV" up 2> /dev/null
	[[ -n ${mon:-} ]] && kill "$mon" 2> /dev/null
	[[ -n ${writer:-} ]] && kill "$writer" 2> /dev/null
	return 0
}
trap cleanup EXIT

target_setup recon 16M
dev=$(dev_connect recon reconnect_delay "$delay" loss_timeout "$loss")

# Device events, each with the time it arrived.
"$RMBD_BIN" -j monitor dev 2> "$out/monitor.err" |
	while IFS= read -r l; do printf '%s %s\n' "$(usec)" "$l"; done > "$out/events" &
mon=$!
sleep 1

# No listener: every reconnect attempt is refused.  A write issued with
# the link down breaks the connection (its work request fails) and is
# held; the link comes back once the device noticed.
rmbd_ok listener del "$RMBD_ADDR"
head -c 1M /dev/urandom > "$out/data"
ip link set "$RMBD_NETDEV" down
dd if="$out/data" of="/dev/$dev" bs=1M oflag=direct status=none 2> "$out/dd.err" &
writer=$!
t0=$(usec)
while [[ $(dev_field "$dev" state) == live ]]; do
	(( $(usec) - t0 < 20000000 )) || fail "the device did not notice the link loss in 20 s"
	sleep 0.1
done
ip link set "$RMBD_NETDEV" up
log "device $(dev_field "$dev" state)"

# Wait for ATTEMPTS reconnecting events after the loss.
t0=$(usec)
while (( $(grep -c '"event":"reconnecting"' "$out/events" || true) < attempts )); do
	(( $(usec) - t0 < (attempts * delay + 20) * 1000000 )) ||
		fail "$(grep -c '"event":"reconnecting"' "$out/events" || true) reconnect attempts in $(( attempts * delay + 20 )) s, expected $attempts: $(cat "$out/events")"
	kill -0 "$writer" 2> /dev/null ||
		fail "the write issued during the outage ended before the target was back: $(cat "$out/dd.err")"
	sleep 0.2
done
kill -0 "$writer" 2> /dev/null || fail "the write issued during the outage ended: $(cat "$out/dd.err")"
[[ $(dev_field "$dev" state) == reconnecting ]] || fail "device $(dev_field "$dev" state) while the target is away"

# From one attempt to the next: reconnect_delay, plus what an attempt
# takes (a refused connect is quick; 1.5 s of slack).
mapfile -t at < <(grep '"event":"reconnecting"' "$out/events" | cut -d' ' -f1)
for (( i = 1; i < ${#at[@]}; i++ )); do
	gap=$(( (at[i] - at[i - 1]) / 1000 ))
	log "attempt $(( i + 1 )): $gap ms after the one before"
	(( gap >= delay * 1000 - 100 )) || fail "reconnect attempts $gap ms apart, reconnect_delay is $delay s"
	(( gap <= delay * 1000 + 1500 )) || fail "reconnect attempts $gap ms apart, reconnect_delay is $delay s"
done

rmbd_ok listener add "$RMBD_ADDR" > /dev/null
rc=0
wait_exit "$writer" $(( delay + 20 )) "the held write did not complete $(( delay + 20 )) s after the listener came back"
wait "$writer" || rc=$?
writer=
(( rc == 0 )) || fail "the write held through the outage failed: $(cat "$out/dd.err")"
[[ $(dev_field "$dev" state) == live ]] || fail "device $(dev_field "$dev" state) after the listener came back"
cmp "$out/data" <(dd if="/dev/$dev" bs=1M count=1 iflag=direct status=none) ||
	fail "the write held through the outage does not read back"
log "the write held through ${#at[@]} refused attempts completed once the listener was back; reads back"
dev_disconnect "$dev"
rmbd_ok export del recon
