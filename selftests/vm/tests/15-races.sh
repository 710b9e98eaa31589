#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connect, disconnect and client module unload racing each other: in each
# of 36 rounds (10 on the debug kernel) two connects (one of them
# "shared"), a disconnect of whatever exists and (every other round) an
# rmmod start at once.  Each may win or lose, with a clear error; none may hang,
# oops or leak: afterwards the target has no session left and the client
# module unloads.
# timeout=900

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

rounds=${RMBD_RACE_ROUNDS:-$(rounds 36 10)}
out=/run/rmbd-races
mkdir -p "$out"

target_setup race 16M shared

connects=0 rmmods=0
: > "$out/disconnected"
for (( r = 1; r <= rounds; r++ )); do
	rmbd_modules_loaded || rmbd_load_modules > /dev/null 2>&1 || true
	pids=()
	# The second one "shared": both may set a session up at once, while
	# the first one may be refused as a second device on the export.
	for j in 1 2; do
		shared=()
		(( j == 2 )) && shared=(shared)
		timeout -k 5 60 "$RMBD_BIN" dev connect addr "$RMBD_ADDR" export race \
			queues 1 depth 16 "${shared[@]}" > "$out/c$j" 2>&1 &
		pids+=("$!")
	done
	# A disconnect may lose (the device went meanwhile), never hang.
	# It waits up to a second for a device to appear.
	rm -f "$out/hung"
	(
		sleep "0.$(( RANDOM % 5 ))"
		for (( k = 0; k < 10; k++ )); do
			devs=$("$RMBD_BIN" -j dev show 2> /dev/null | jq -r '.[].name' 2> /dev/null)
			[[ -n $devs ]] && break
			sleep 0.1
		done
		for d in $devs; do
			rc=0
			timeout -k 5 60 "$RMBD_BIN" dev disconnect "$d" 2> /dev/null || rc=$?
			if (( rc == 124 || rc == 137 )); then
				echo "dev disconnect $d" >> "$out/hung"
			elif (( rc == 0 )); then
				echo "$d" >> "$out/disconnected"
			fi
		done
	) &
	pids+=("$!")
	# The unload in odd rounds only: in the others the disconnects, slow
	# to start on the debug kernel, get their chance against the connects.
	(
		(( r % 2 )) || exit 1
		sleep "0.$(( RANDOM % 9 ))"
		timeout -k 5 60 rmmod rmbd_client 2> /dev/null
	) &
	rm_pid=$!
	for p in "${pids[@]}"; do
		rc=0
		wait "$p" || rc=$?
		(( rc != 124 && rc != 137 )) || fail "round $r: a command hung for 60 s"
	done
	[[ ! -e $out/hung ]] || fail "round $r: $(head -n 1 "$out/hung") hung for 60 s"
	rc=0
	wait "$rm_pid" || rc=$?
	(( rc != 124 && rc != 137 )) || fail "round $r: rmmod hung for 60 s"
	(( rc == 0 )) && rmmods=$(( rmmods + 1 ))
	for j in 1 2; do
		if grep -qx 'rmbd[0-9]*' "$out/c$j"; then
			connects=$(( connects + 1 ))
		elif ! grep -q '^rmbd: ' "$out/c$j"; then
			fail "round $r: connect neither succeeded nor said why: $(cat "$out/c$j")"
		fi
	done
done
disconnects=$(wc -l < "$out/disconnected")
log "$rounds rounds: $connects connects succeeded, $disconnects disconnects, rmmod won $rmmods times"
(( connects > 0 )) || fail "no connect ever succeeded: the races were not raced"
(( disconnects > 0 )) || fail "no disconnect ever succeeded: disconnect was not raced"
(( rmmods > 0 )) || fail "rmmod never won: module unload was not raced"

# Clean up: every device goes, the module unloads, the target lets go.
rmbd_modules_loaded || rmbd_load_modules || fail "cannot load the modules again"
for d in $(rmbd_cli -j dev show | jq -r '.[].name'); do
	dev_disconnect "$d"
done
rmmod rmbd_client || fail "rmmod rmbd_client after the races failed"
for (( i = 0; i < 100; i++ )); do
	[[ $(export_field race sessions) == 0 ]] && break
	sleep 0.1
done
[[ $(export_field race sessions) == 0 ]] ||
	fail "target still has $(export_field race sessions) sessions after the client module went"
[[ $(export_field race mapped) == 0 ]] || fail "target still maps $(export_field race mapped) slabs"
rmbd_load_modules || fail "cannot load rmbd_client again"
rmbd_ok export del race
