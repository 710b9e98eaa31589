#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Soft-RoCE is up: rxe0 on d0 is ACTIVE with a 4096-byte RDMA MTU and
# libibverbs sees it.
# timeout=60

set -eu
source "$(dirname "$0")/lib.sh"

link=$(rdma link show rxe0/1) || fail "rdma link show rxe0/1 failed"
log "$link"
[[ $link == *"state ACTIVE"* ]] || fail "rxe0 port 1 is not ACTIVE"
[[ $link == *"netdev d0"* ]] || fail "rxe0 is not bound to d0"

devs=$(ibv_devices) || fail "ibv_devices failed"
grep -qw rxe0 <<< "$devs" || fail "ibv_devices does not list rxe0"

info=$(ibv_devinfo -d rxe0) || fail "ibv_devinfo -d rxe0 failed"
grep -Eq 'active_mtu:[[:space:]]+4096' <<< "$info" ||
	fail "active_mtu is not 4096: $(grep active_mtu <<< "$info")"

ip -o addr show dev d0 | grep -q "inet $RMBD_ADDR/24" || fail "d0 lacks $RMBD_ADDR/24"
log "rxe0 up, RDMA MTU 4096, $RMBD_ADDR on d0"
