#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The target VM of two-vm.sh: soft-RoCE on the virtio-net NIC, a fresh
# export and a listener on the NIC's address, then "ready" in the results
# share.  It serves until the host writes "stop" (the second target) or
# kills the whole VM (the first).

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

nic=$(tv_nic_setup)
target_setup "$RMBD_TWOVM_EXPORT" "$RMBD_TWOVM_SIZE"
log "$nic: $(ip -o -4 addr show dev "$nic" | awk '{print $4}'), MTU $(cat "/sys/class/net/$nic/mtu")"
log "$(rdma link show rxe1/1)"
log "export: $(rmbd_cli export show "$RMBD_TWOVM_EXPORT")"
tv_say ready "$RMBD_TWOVM_EXPORT"

# The host stops the second target once the client is done; the test's
# timeout (guest.sh) bounds the wait.
while ! tv_wait stop 60; do
	:
done
log "at the end: $(rmbd_cli export show "$RMBD_TWOVM_EXPORT")"
rmbd_ok export del "$RMBD_TWOVM_EXPORT" force
