#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Refusals: bad sizes, names, addresses, ports and unknown objects are
# refused with exit status 1 and a "failed to" line carrying the kernel's
# reason; nothing is created by a refused command.  Then nl-fuzz sends
# malformed generic netlink requests of both families straight to the
# kernel.
# timeout=300

set -eu
source "$(dirname "$0")/lib.sh"
require_rmbd

nl_fuzz=$(cd "$(dirname "$0")/.." && pwd)/nl-fuzz

# The kernel refused: exit 1, and the line ends in the extack message.
kernel_refuses() {	# WHAT ARGS...
	rmbd_fails "$@"
	[[ $RMBD_ERR =~ ^rmbd:\ failed\ to\ [^:]+:\ [^:]+:\ .+ ]] ||
		fail "$1: no kernel message in '$RMBD_ERR'"
}

# Malformed input: the CLI may refuse it itself (usage error, exit 2) or
# pass the kernel's refusal on (exit 1); nl-fuzz checks the kernel side.
refused() {	# WHAT ARGS...
	local what=$1 err rc=0
	shift
	err=$(rmbd_cli "$@" 2>&1 > /dev/null) || rc=$?
	log "  rmbd $* -> exit $rc: $(head -n 1 <<< "$err")"
	(( rc == 1 || rc == 2 )) || fail "$what: exit $rc, expected 1 or 2"
	[[ $err == rmbd:* ]] || fail "$what: no 'rmbd: ...' message on stderr"
}

# any_host: the fuzzer's connects give no host identity, or a random one.
target_setup keep 4M any_host shared
before_mem=$(export_field keep mem)

log "export add"
kernel_refuses "size 0" export add z0 size 0
kernel_refuses "size not a multiple of 4096" export add z1 size 12345
kernel_refuses "size larger than RAM" export add z2 size 64T
kernel_refuses "duplicate name" export add keep size 4M
kernel_refuses "slab size not a power of two" export add z3 size 64M slab 3M
kernel_refuses "slab size below the minimum" export add z4 size 64M slab 1M
kernel_refuses "slab size above the maximum" export add z5 size 4G slab 2G
[[ $RMBD_ERR == *"failed to add export"* ]] || fail "wrong verb/object: $RMBD_ERR"
refused "name with a slash" export add a/b size 4M
refused "name with a space" export add "a b" size 4M
refused "name of 100 characters" export add "$(printf 'n%.0s' $(seq 100))" size 4M

names=$(rmbd_cli -j export show | jq -r '[.[].name] | join(" ")')
[[ $names == keep ]] || fail "exports after refused adds: '$names'"
[[ $(export_field keep mem) == "$before_mem" ]] || fail "export keep changed"

log "export del"
kernel_refuses "unknown export" export del nosuch
kernel_refuses "unknown export, force" export del nosuch force

log "listener"
refused "bad address" listener add 1.2.3
kernel_refuses "duplicate listener" listener add "$RMBD_ADDR"
kernel_refuses "unknown listener" listener del 10.200.0.77
kernel_refuses "unknown port" listener del "$RMBD_ADDR" port 7471
(( $(rmbd_cli -j listener show | jq length) == 1 )) || fail "listeners: $(rmbd_cli -j listener show)"

log "dev connect"
kernel_refuses "unknown export" dev connect addr "$RMBD_ADDR" export nosuch
kernel_refuses "wrong port" dev connect addr "$RMBD_ADDR" export keep port 7999
t0=$(date +%s)
kernel_refuses "unreachable address" dev connect addr 10.201.0.9 export keep
dt=$(( $(date +%s) - t0 ))
log "  unreachable address refused after $dt s"
(( dt <= 20 )) || fail "connect to an unreachable address took $dt s"

log "dev disconnect"
kernel_refuses "unknown device" dev disconnect rmbd99
kernel_refuses "unknown device index" dev disconnect 99

[[ -z $(dev_nodes) ]] || fail "device nodes after refused connects: $(dev_nodes)"
(( $(dev_count) == 0 )) || fail "dev show lists $(dev_count) devices"
[[ $(export_field keep sessions) == 0 ]] || fail "export keep has $(export_field keep sessions) sessions"

log "raw generic netlink"
[[ -x $nl_fuzz ]] || fail "$nl_fuzz not built (make -C selftests)"
"$nl_fuzz" || fail "nl-fuzz found malformed requests the kernel did not refuse properly"

names=$(rmbd_cli -j export show | jq -r '[.[].name] | join(" ")')
[[ $names == keep ]] || fail "exports after nl-fuzz: '$names'"
(( $(rmbd_cli -j listener show | jq length) == 1 )) || fail "listeners after nl-fuzz: $(rmbd_cli -j listener show)"
[[ -z $(dev_nodes) ]] || fail "device nodes after nl-fuzz: $(dev_nodes)"
