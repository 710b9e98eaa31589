#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The soft RDMA device is up: rxe0 on d0 (siw0 on d1 for 00-rxe@siw) is
# ACTIVE with a 4096-byte RDMA MTU and libibverbs sees it.
# timeout=60

set -eu
source "$(dirname "$0")/lib.sh"

link=$(rdma link show "$RMBD_RDMA_DEV/1") || fail "rdma link show $RMBD_RDMA_DEV/1 failed"
log "$link"
[[ $link == *"state ACTIVE"* ]] || fail "$RMBD_RDMA_DEV port 1 is not ACTIVE"
[[ $link == *"netdev $RMBD_NETDEV"* ]] || fail "$RMBD_RDMA_DEV is not bound to $RMBD_NETDEV"

devs=$(ibv_devices) || fail "ibv_devices failed"
grep -qw "$RMBD_RDMA_DEV" <<< "$devs" || fail "ibv_devices does not list $RMBD_RDMA_DEV"

info=$(ibv_devinfo -d "$RMBD_RDMA_DEV") || fail "ibv_devinfo -d $RMBD_RDMA_DEV failed"
grep -Eq 'active_mtu:[[:space:]]+4096' <<< "$info" ||
	fail "active_mtu is not 4096: $(grep active_mtu <<< "$info")"

ip -o addr show dev "$RMBD_NETDEV" | grep -q "inet $RMBD_ADDR/24" || fail "$RMBD_NETDEV lacks $RMBD_ADDR/24"
log "$RMBD_RDMA_DEV up, RDMA MTU 4096, $RMBD_ADDR on $RMBD_NETDEV"
