#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Export memory: an export that does not fit in MemAvailable less a
# 64 MiB reserve is refused at once, with the reason, and takes nothing.
# Two exports added at the same time that fit one at a time but not
# together are not both allocated: one is refused with the same reason,
# not halfway through its allocation and not by the OOM killer.
# Deleting the export gives its memory back.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

MiB=$(( 1 << 20 ))
out=/run/rmbd-export-memory
mkdir -p "$out"
enough='not enough free memory for an export of this size'

ooms() { dmesg | grep -c 'invoked oom-killer' || true; }

oom0=$(ooms)
avail0=$(mem_avail)
log "MemAvailable $(( avail0 / MiB )) MiB"

# Larger than MemAvailable: refused before any allocation.
t0=$SECONDS
rmbd_fails "an export larger than MemAvailable" \
	export add big size "$(( avail0 / MiB + 256 ))M"
[[ $RMBD_ERR == *"Cannot allocate memory: $enough"* ]] ||
	fail "an export larger than MemAvailable: '$RMBD_ERR', expected ENOMEM, '$enough'"
(( SECONDS - t0 <= 10 )) || fail "the refusal took $(( SECONDS - t0 )) s"
[[ -z $(export_field big name) ]] || fail "export big exists after its refusal"

# Two at once, each 55% of what is available above the reserve.
each=$(( (avail0 - 64 * MiB) * 55 / 100 / (2 * MiB) * 2 ))
pids=()
for n in 1 2; do
	"$RMBD_BIN" export add "mem$n" size "${each}M" > "$out/add$n" 2>&1 &
	pids+=("$!")
done
ok=0 refused=()
for n in 1 2; do
	rc=0
	wait "${pids[n - 1]}" || rc=$?
	if (( rc == 0 )); then
		ok=$(( ok + 1 ))
		kept=mem$n
	else
		refused+=("$n: $(tr '\n' ' ' < "$out/add$n")")
	fi
done
log "two exports of $each MiB at once: $ok added; refused: ${refused[*]:-none}"
(( ok == 1 )) || fail "$ok of two exports of $each MiB added at once, expected 1 (refused: ${refused[*]:-none})"
[[ ${refused[0]} == *"Cannot allocate memory: $enough"* ]] ||
	fail "the second export was refused otherwise: ${refused[0]}"
(( $(ooms) == oom0 )) || fail "the OOM killer ran: $(dmesg | grep -m 1 'invoked oom-killer')"
mem=$(export_field "$kept" mem)
(( mem == each * MiB )) || fail "export $kept holds $mem bytes, expected $(( each * MiB ))"
(( $(rmbd_cli -j export show | jq length) == 1 )) ||
	fail "exports: $(rmbd_cli export show | tr '\n' ' ')"

rmbd_ok export del "$kept"
avail1=$(mem_avail)
log "MemAvailable $(( avail1 / MiB )) MiB after deleting $kept"
(( avail1 > avail0 - 64 * MiB )) ||
	fail "the export's memory was not given back: MemAvailable $(( avail0 / MiB )) -> $(( avail1 / MiB )) MiB"
