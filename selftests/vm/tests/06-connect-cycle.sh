#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 25 connect/disconnect cycles (10 on the debug kernel) leak nothing:
# every connect brings a device, every disconnect removes it, and
# afterwards the export has no session or mapping and MemAvailable is back
# within 32 MiB.
# timeout=600

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

cycles=${CYCLES:-$(rounds 25 10)}

target_setup cycle 64M
# One cycle first, so lazily created caches do not count as a leak.
dev_disconnect "$(dev_connect cycle)"
avail0=$(mem_avail)
s0=$(export_field cycle sessions)
m0=$(export_field cycle mapped)
log "before: sessions $s0, mapped $m0, MemAvailable $(( avail0 >> 20 )) MiB"
[[ $s0 == 0 && $m0 == 0 ]] || fail "export busy before the cycles"

t0=$(date +%s)
for (( i = 1; i <= cycles; i++ )); do
	dev=$(dev_connect cycle) || fail "connect $i failed"
	[[ $(export_field cycle sessions) -ge 1 ]] || fail "cycle $i: export shows no session"
	# A little I/O, so each session maps memory.
	dd if="/dev/$dev" of=/dev/null bs=64k count=4 iflag=direct status=none ||
		fail "cycle $i: read failed"
	rmbd_ok dev disconnect "$dev" || fail "disconnect $i failed"
	wait_gone "/dev/$dev" || fail "cycle $i: /dev/$dev still exists"
done
log "$cycles cycles in $(( $(date +%s) - t0 )) s"

[[ -z $(dev_nodes) ]] || fail "device nodes left: $(dev_nodes)"
(( $(dev_count) == 0 )) || fail "dev show lists $(dev_count) devices"
for (( i = 0; i < 100; i++ )); do
	[[ $(export_field cycle sessions) == 0 && $(export_field cycle mapped) == 0 ]] && break
	sleep 0.1
done
s1=$(export_field cycle sessions)
m1=$(export_field cycle mapped)
avail1=$(mem_avail)
log "after: sessions $s1, mapped $m1, MemAvailable $(( avail1 >> 20 )) MiB"
[[ $s1 == 0 ]] || fail "export still has $s1 sessions"
[[ $m1 == 0 ]] || fail "export still has $m1 mappings"
(( avail1 > avail0 - (32 << 20) )) ||
	fail "MemAvailable fell by $(( (avail0 - avail1) >> 20 )) MiB over $cycles cycles"
