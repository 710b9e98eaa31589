#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Deleting an export in use: refused as busy without force; with force
# the session is torn down, the client's I/O fails within 30 s instead of
# hanging, and the device can still be disconnected.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

target_setup victim 64M
dev=$(dev_connect victim)
dd if=/dev/urandom of="/dev/$dev" bs=64k count=16 oflag=direct status=none || fail "initial write failed"
(( $(export_field victim sessions) >= 1 )) || fail "export shows no session"

rmbd_fails "delete a busy export" export del victim
shopt -s nocasematch
[[ $RMBD_ERR == *busy* || $RMBD_ERR == *"in use"* ]] ||
	fail "refusal does not say busy or in use: $RMBD_ERR"
shopt -u nocasematch
[[ -n $(export_field victim name) ]] || fail "export gone after a refused delete"
dd if="/dev/$dev" of=/dev/null bs=64k count=16 iflag=direct status=none ||
	fail "I/O failed after the refused delete"
log "plain delete refused: $RMBD_ERR"

rmbd_ok export del victim force || fail "forced delete failed"
[[ -z $(export_field victim name) ]] || fail "export still listed after forced delete"
log "forced delete done; device state: $(dev_field "$dev" state)"

io_fails() {	# WHAT DD-ARGS...
	local what=$1 t0 rc=0
	shift
	t0=$(date +%s)
	timeout -k 5 30 dd "$@" status=none 2> /tmp/dd.err || rc=$?
	(( rc != 124 && rc != 137 )) || fail "$what hung for 30 s after the forced delete"
	(( rc != 0 )) || fail "$what succeeded after the forced delete"
	log "$what failed after $(( $(date +%s) - t0 )) s: $(head -n 1 /tmp/dd.err)"
}
io_fails "write" if=/dev/zero of="/dev/$dev" bs=4k count=1 oflag=direct
io_fails "read" if="/dev/$dev" of=/dev/null bs=4k count=1 iflag=direct

state=$(dev_field "$dev" state)
[[ $state == failed ]] || fail "device state is '$state', expected failed"
dev_disconnect "$dev"
(( $(dev_count) == 0 )) || fail "dev show lists $(dev_count) devices"
log "disconnect after the forced delete works"
