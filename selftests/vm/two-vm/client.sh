#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The client VM of two-vm.sh.  Its steps, each reported to the host as a
# line "ok|not ok STEP # detail" in the share's "steps" file:
#   connect-verify     connect to the first target VM over rxe on virtio-net
#                      and fio writes and verifies (crc32c)
#   kill-target-eio    fio runs while the host kills the target VM's qemu
#                      (kill -9): the client notices within $detect s, the
#                      I/O fails with EIO no sooner than the loss timeout
#                      after that and within a few seconds more (a read
#                      then fails too, without hanging), the device says
#                      failed, no task is
#                      left in D state, no kernel error
#   new-target-verify  a second target VM, a fresh export: a new connect
#                      works and fio writes and verifies on it
#   disconnect-failed  the failed device, still failed, disconnects
#   mirror-kill-verify a mirror over the second target (first link) and a
#                      third target VM (second link, the client's second
#                      NIC); fio verifies while the host kills the third
#                      VM's qemu: the client marks that leg down within
#                      $detect s, the mirror stays live through and past
#                      the loss timeout, with no I/O error
#   mirror-replace-verify  the third VM re-created (a fourth, with the
#                      same address and a fresh export of the same name):
#                      the lost leg, reconnecting, refuses it (the data it
#                      held is gone); "dev replace" puts the leg on it and
#                      the rebuild copies the device while fio verifies,
#                      with no I/O error; each copy read alone is the same
# Files it waits for (the host writes them): target-ready.1,
# target1-killed, target-ready.2, target-ready.3, target3-killed,
# target-ready.4; files it writes: kill-target, need-target,
# need-target3, kill-target3, need-target4, steps.

set -eu
source "$(dirname "$0")/lib.sh"

loss=${RMBD_TWOVM_LOSS:-10}
# Seconds the client may take to notice that the target is gone: fio's
# work requests fail once the transport's 6 retries of 268 ms are spent.
detect=${RMBD_TWOVM_DETECT:-8}
# From the loss timeout to fio's end: the I/O fails in the kernel on
# time, fio then needs a moment (three on the debug kernel).
slack=$(rounds 5 15)
# What fio writes and verifies on a live device: on the debug kernel
# (under 1 MB/s) less, to keep the test in CI's time.
size=$(rounds 64M 8M)
out=/run/rmbd-two-vm
mkdir -p "$out"

step=
step_t0=0
step_begin() {	# NAME
	step=$1
	step_t0=$(date +%s)
	log "---- $step"
}
step_ok() {	# DETAIL
	echo "ok $step # $1, $(( $(date +%s) - step_t0 )) s" >> "$tv_out/steps"
	step=
}
# lib.sh's fail, reporting the step it ends too, and what the kernel
# said last of rmbd (the host's log keeps only the client's output).
fail() {
	printf 'FAIL: %s\n' "$*" >&2
	dmesg | grep -a rmbd | tail -n 12 | sed 's/^/  kernel: /' >&2
	if [[ -n $step ]]; then
		echo "not ok $step # $*" >> "$tv_out/steps"
		step=
	fi
	exit 1
}

cleanup() {
	local rc=$?
	[[ -n ${loader:-} ]] && kill "$loader" 2> /dev/null
	[[ -n ${fio_pid:-} ]] && kill "$fio_pid" 2> /dev/null
	[[ -n ${mon:-} ]] && kill "$mon" 2> /dev/null
	if [[ -n $step ]]; then
		echo "not ok $step # client.sh ended with exit $rc" >> "$tv_out/steps"
	fi
	true
}
trap cleanup EXIT

# Writes then verifies SIZE of /dev/DEV with crc32c headers; a verify
# mismatch or an I/O error fails fio.
fio_verify() {	# DEV SIZE LOG
	fio --name=verify --filename="/dev/$1" --rw=randwrite --bs=16k \
		--direct=1 --ioengine=libaio --iodepth=16 --size="$2" \
		--verify=crc32c --verify_fatal=1 --do_verify=1 > "$3" 2>&1
}

fio_summary() {	# LOG
	grep -aE '^ +(READ|WRITE):' "$1" | sed 's/^ *//; s/, run=.*//' | tr '\n' ' '
}

# ---- connect-verify

step_begin connect-verify
require_rmbd
command -v fio > /dev/null || fail "fio not installed"
nic=$(tv_nic_setup)
mtu=$(cat "/sys/class/net/$nic/mtu")
log "$nic: $RMBD_TWOVM_IP, MTU $mtu; $(rdma link show rxe1/1)"
tv_wait target-ready.1 300 || fail "the first target VM did not come up"
rdma_mtu=$(ibv_devinfo -d rxe1 | awk '/active_mtu/ {print $2}')
log "rxe1 active_mtu $rdma_mtu"
dev=$(dev_connect "$RMBD_TWOVM_EXPORT" reconnect_delay 1 loss_timeout "$loss")
log "connected /dev/$dev: $(rmbd_cli dev show "$dev")"
[[ $(dev_field "$dev" state) == live ]] || fail "/dev/$dev is not live"
fio_verify "$dev" "$size" "$out/fio1" ||
	fail "fio on /dev/$dev: $(grep -aE 'error|verify|bad' "$out/fio1" | head -n 5 | tr '\n' ' ')"
log "fio: $(fio_summary "$out/fio1")"
# Full-size RDMA packets crossed the socket netdev (with an MTU too big
# for it, fio would have failed).
st=/sys/class/net/$nic/statistics
log "$nic: $(cat "$st/rx_packets") packets received, $(( $(cat "$st/rx_bytes") / $(cat "$st/rx_packets") )) bytes on average"
step_ok "/dev/$dev, MTU $mtu (RDMA $rdma_mtu), $size written and verified"

# ---- kill-target-eio

step_begin kill-target-eio
# fio, pass after pass, until one fails: I/O is in flight when the host
# kills the target VM.
(
	while fio_verify "$dev" 32M "$out/fio2"; do
		:
	done
	exit 1
) &
loader=$!
sleep 3
kill -0 "$loader" 2> /dev/null ||
	fail "fio ended before the target was killed: $(grep -a error "$out/fio2" | head -n 3)"
tv_say kill-target
tv_wait target1-killed 60 || fail "the host did not kill the target VM"
t0=$(date +%s.%N)
up0=$(cut -d' ' -f1 /proc/uptime)
log "the host killed the target VM at $(cat "$tv_out/target1-killed")"
for (( i = 0; i < (detect + loss + slack + 30) * 10; i++ )); do
	kill -0 "$loader" 2> /dev/null || break
	sleep 0.1
done
if kill -0 "$loader" 2> /dev/null; then
	log "tasks in D state: $(tv_d_tasks)"
	fail "I/O still blocked $(( $(date +%s) - ${t0%.*} )) s after the kill (loss_timeout $loss)"
fi
rc=0
wait "$loader" || rc=$?
loader=
up1=$(cut -d' ' -f1 /proc/uptime)
dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
tv_say client-eio "$dt"
# When the client noticed: its "connection ... lost" line in the kernel log.
lost=$(dmesg | grep -a "rmbd_client: $dev: connection to .* lost" | tail -n 1 |
	sed 's/^\[ *\([0-9.]*\)\].*/\1/')
[[ -n $lost ]] || fail "no 'connection lost' for $dev in the kernel log"
noticed=$(awk -v a="$up0" -v b="$lost" 'BEGIN {printf "%.1f", b - a}')
after=$(awk -v a="$lost" -v b="$up1" 'BEGIN {printf "%.1f", b - a}')
log "the client noticed the loss $noticed s after the kill: $(dmesg | grep -a "rmbd_client: $dev: " | tail -n 4 | tr '\n' ' ')"
log "fio ended $dt s after the kill: $(grep -aE 'error' "$out/fio2" | head -n 2 | tr '\n' ' ')"
grep -aq 'Input/output error' "$out/fio2" ||
	fail "fio did not fail with EIO: $(tail -n 5 "$out/fio2" | tr '\n' ' ')"
if grep -aqE "$RMBD_FIO_MISMATCH_RE" "$out/fio2"; then
	fail "verify mismatch: $(grep -aE "$RMBD_FIO_MISMATCH_RE" "$out/fio2" | head -n 3 | tr '\n' ' ')"
fi
awk -v d="$noticed" -v m="$detect" 'BEGIN {exit !(d <= m)}' ||
	fail "the client noticed the loss $noticed s after the kill, more than $detect s"
awk -v d="$after" -v m=$(( loss + slack )) 'BEGIN {exit !(d <= m)}' ||
	fail "EIO $after s after the client noticed the loss, more than loss_timeout $loss + $slack s"
# The I/O waits for the target the whole loss timeout, from the moment
# the loss is noticed (half a second for the log's and uptime's rounding).
awk -v d="$after" -v m="$loss" 'BEGIN {exit !(d >= m - 0.5)}' ||
	fail "EIO $after s after the client noticed the loss, before loss_timeout $loss s"
state=$(dev_field "$dev" state)
log "$(rmbd_cli dev show "$dev")"
[[ $state == failed ]] || fail "/dev/$dev is '$state' after the loss timeout, expected failed"
rc=0
timeout -k 5 10 dd if="/dev/$dev" of=/dev/null bs=4k count=1 iflag=direct status=none 2> /dev/null || rc=$?
(( rc != 124 && rc != 137 )) || fail "a read on the failed device hung"
(( rc != 0 )) || fail "a read on the failed device succeeded"
d=$(tv_stuck_tasks)
[[ -z $d ]] || fail "tasks stuck in D state: $(tr '\n' ' ' <<< "$d")"
errs=$(tv_kernel_errors)
[[ -z $errs ]] || fail "kernel errors: $(head -n 5 <<< "$errs" | tr '\n' ' ')"
step_ok "EIO $dt s after kill -9: noticed after $noticed s, failed $after s later (loss_timeout $loss)"

# ---- new-target-verify

step_begin new-target-verify
old=$dev
tv_say need-target
tv_wait target-ready.2 300 || fail "the second target VM did not come up"
dev=$(dev_connect "$RMBD_TWOVM_EXPORT" reconnect_delay 1 loss_timeout "$loss")
log "connected /dev/$dev: $(rmbd_cli dev show "$dev")"
[[ $dev != "$old" ]] || fail "the new device reuses the failed one's name $old"
[[ $(dev_field "$dev" state) == live ]] || fail "/dev/$dev is not live"
fio_verify "$dev" "$size" "$out/fio3" ||
	fail "fio on /dev/$dev: $(grep -aE 'error|verify|bad' "$out/fio3" | head -n 5 | tr '\n' ' ')"
log "fio: $(fio_summary "$out/fio3")"
errs=$(tv_kernel_errors)
[[ -z $errs ]] || fail "kernel errors: $(head -n 5 <<< "$errs" | tr '\n' ' ')"
step_ok "/dev/$dev on the new target, $size written and verified"

# ---- disconnect-failed

step_begin disconnect-failed
state=$(dev_field "$old" state)
[[ $state == failed ]] || fail "/dev/$old is '$state' with a new target up, expected failed"
timeout 60 "$RMBD_BIN" dev disconnect "$old" || fail "rmbd dev disconnect $old failed"
wait_gone "/dev/$old" || fail "/dev/$old still exists after disconnect"
[[ $(dev_field "$dev" state) == live ]] || fail "/dev/$dev is not live after disconnecting $old"
dev_disconnect "$dev"
[[ $(dev_count) == 0 ]] || fail "devices left: $(rmbd_cli dev show)"
step_ok "/dev/$old and /dev/$dev disconnected"

# ---- mirror-kill-verify

# Block-layer I/O errors of DEV in the kernel log so far.
io_errors() { dmesg | grep -c "error, dev $1," || true; }

# Leg N's state and export, and the bytes it has to copy.
leg_state() { dev_jq "$1" ".legs[$2] | \"\\(.state) \\(.export) \\(.dirty)\""; }

step_begin mirror-kill-verify
nic2=$(tv_nic_setup "$RMBD_TWOVM_MAC2" "$RMBD_TWOVM_IP2" rxe2)
log "$nic2: $RMBD_TWOVM_IP2; $(rdma link show rxe2/1)"
tv_say need-target3
tv_wait target-ready.3 300 || fail "the third target VM did not come up"
dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export "$RMBD_TWOVM_EXPORT" \
	addr "$RMBD_TWOVM_ADDR2" export "$RMBD_TWOVM_EXPORT" layout mirror \
	reconnect_delay 1 loss_timeout "$loss" | tail -n 1)
[[ $dev =~ ^rmbd[0-9]+$ ]] || fail "dev connect printed '$dev'"
wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
log "connected /dev/$dev: $(rmbd_cli -d dev show "$dev" | tr '\n' ' ')"
# The first target's export holds the runs' data, the third's is new
# (blank): the mirror copies the first to it (initial sync) at connect.
[[ $(dev_jq "$dev" '[.state, (.legs | map(.state) | join(","))] | join(" ")') == "live up,stale" ]] ||
	fail "the mirror is not live with leg 1 stale (blank, to be copied to): $(rmbd_cli -d dev show "$dev")"
t0=$(date +%s%N)
while [[ $(dev_jq "$dev" '[.state, (.legs | map("\(.state)/\(.dirty)") | join(","))] | join(" ")') != "live up/0,up/0" ]]; do
	(( $(date +%s%N) - t0 < $(rounds 120 600) * 1000000000 )) ||
		fail "the initial sync did not end in $(rounds 120 600) s: $(rmbd_cli -d dev show "$dev")"
	sleep 0.2
done
log "initial sync of leg 1 (the third target's blank export): $(( ($(date +%s%N) - t0) / 1000000 )) ms"
"$RMBD_BIN" -j monitor dev > "$out/events" 2> "$out/monitor.err" &
mon=$!
errors0=$(io_errors "$dev")
mkdir -p "$out/m1"
fio_verify_start "$dev" 0 "$(rounds 32M 8M)" "$out/m1"
sleep 3
kill -0 "$fio_pid" 2> /dev/null ||
	fail "fio ended before the target was killed: $(cat "$out"/m1/fio.*.out | grep -ai error | head -n 3)"
tv_say kill-target3
tv_wait target3-killed 60 || fail "the host did not kill the third target VM"
t0=$(date +%s.%N)
log "the host killed the third target VM at $(cat "$tv_out/target3-killed")"
# The leg is down within $detect s; the device stays live, past the loss
# timeout, with fio going on.
noticed=
end=$(( $(usec) + (detect + loss + 5) * 1000000 ))
while (( $(usec) < end )); do
	st=$(dev_jq "$dev" '[.state, .legs[1].state] | join(" ")')
	[[ $st == live* ]] || fail "the mirror went '${st% *}' after the kill"
	if [[ -z $noticed && $st != "live up" ]]; then
		noticed=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
		log "leg 1 $st $noticed s after the kill: $(dmesg | grep -a "rmbd_client: $dev: " | tail -n 2 | tr '\n' ' ')"
	fi
	kill -0 "$fio_pid" 2> /dev/null || break
	sleep 0.1
done
[[ -n $noticed ]] || fail "leg 1 still up $(( detect + loss + 5 )) s after its target was killed"
awk -v d="$noticed" -v m="$detect" 'BEGIN {exit !(d <= m)}' ||
	fail "leg 1 went down $noticed s after the kill, more than $detect s"
fio_verify_stop "$out/m1"
[[ $(dev_field "$dev" degraded) == true ]] || fail "a mirror with a leg lost is not degraded"
errors=$(( $(io_errors "$dev") - errors0 ))
(( errors == 0 )) || fail "the block layer logged $errors I/O errors of $dev"
d=$(tv_stuck_tasks)
[[ -z $d ]] || fail "tasks stuck in D state: $(tr '\n' ' ' <<< "$d")"
errs=$(tv_kernel_errors)
[[ -z $errs ]] || fail "kernel errors: $(head -n 5 <<< "$errs" | tr '\n' ' ')"
step_ok "leg 1 down $noticed s after kill -9, the mirror live and degraded $(( detect + loss + 5 )) s on, fio $(cat "$out/m1/passes") passes with no error"

# ---- mirror-replace-verify

step_begin mirror-replace-verify
mkdir -p "$out/m2"
fio_verify_start "$dev" 0 "$(rounds 32M 8M)" "$out/m2"
tv_say need-target4
tv_wait target-ready.4 300 || fail "the re-created third target VM did not come up"
# The lost leg reconnects to the same address and finds an export of the
# same name, but another one: it must give up for good, not take it as
# holding the mirror's data.
t0=$(usec)
while st=$(leg_state "$dev" 1); [[ $st != failed* ]]; do
	[[ $st != up* && $st != stale* ]] ||
		fail "leg 1 took the re-created target's fresh export as its own: $st"
	(( $(usec) - t0 < 30000000 )) || fail "leg 1 is '$st' 30 s after its target came back re-created"
	sleep 0.2
done
why=$(dmesg | grep -a "rmbd_client: $dev: .*created again" | tail -n 1)
[[ -n $why ]] || fail "no reason in the kernel log for leg 1's failure: $(dmesg | grep -a "rmbd_client: $dev:" | tail -n 3 | tr '\n' ' ')"
log "leg 1 refused the fresh export: ${why#*: }"
t0=$(usec)
rmbd_ok dev replace "$dev" leg 1 with addr "$RMBD_TWOVM_ADDR2" export "$RMBD_TWOVM_EXPORT" > /dev/null
log "leg 1 replaced in $(( ($(usec) - t0) / 1000 )) ms: $(leg_state "$dev" 1)"
t0=$(usec)
while st=$(leg_state "$dev" 1); [[ $st != "up $RMBD_TWOVM_EXPORT 0" ]]; do
	(( $(usec) - t0 < $(rounds 120 600) * 1000000 )) ||
		fail "leg 1 is '$st' $(rounds 120 600) s after the replace"
	[[ $(dev_field "$dev" state) == live ]] || fail "the mirror went $(dev_field "$dev" state) during the rebuild"
	sleep 0.2
done
rebuilt=$(( ($(usec) - t0) / 1000 ))
log "leg 1 in sync $rebuilt ms after the replace: $(dmesg | grep -ao "$dev: leg 1 in sync again.*" | tail -n 1)"
sleep 2
fio_verify_stop "$out/m2"
[[ $(dev_field "$dev" degraded) == false ]] || fail "rebuilt, the mirror is still degraded"
errors=$(( $(io_errors "$dev") - errors0 ))
(( errors == 0 )) || fail "the block layer logged $errors I/O errors of $dev"
kill "$mon" 2> /dev/null
wait "$mon" 2> /dev/null || true
mon=
events=$(jq -r --arg d "$dev" 'select(.name == $d) | .event' "$out/events" | sort | uniq -c | tr -s ' \n' ' ')
log "events: $events"
for e in degraded replaced healthy; do
	jq -s -e --arg d "$dev" --arg e "$e" 'any(.[]; .name == $d and .event == $e)' "$out/events" > /dev/null ||
		fail "no $e event of $dev: $events"
done
# Each copy, connected alone, holds the same data.
size_b=$(dev_field "$dev" size)
dev_disconnect "$dev"
for a in "$RMBD_ADDR" "$RMBD_TWOVM_ADDR2"; do
	one=$(rmbd_ok dev connect addr "$a" export "$RMBD_TWOVM_EXPORT" | tail -n 1)
	wait_node "/dev/$one" || fail "/dev/$one did not appear"
	dd if="/dev/$one" of="$out/copy.$a" bs=1M iflag=direct status=none ||
		fail "cannot read the export on $a alone"
	dev_disconnect "$one"
done
[[ $(stat -c %s "$out/copy.$RMBD_ADDR") == "$size_b" ]] ||
	fail "read $(stat -c %s "$out/copy.$RMBD_ADDR") bytes of the first copy, the mirror had $size_b"
cmp "$out/copy.$RMBD_ADDR" "$out/copy.$RMBD_TWOVM_ADDR2" ||
	fail "the survivor's copy and the rebuilt one differ"
rm -f "$out"/copy.*
errs=$(tv_kernel_errors)
[[ -z $errs ]] || fail "kernel errors: $(head -n 5 <<< "$errs" | tr '\n' ' ')"
[[ $(dev_count) == 0 ]] || fail "devices left: $(rmbd_cli dev show)"
step_ok "the fresh export refused by the lost leg, replaced onto it and rebuilt in $rebuilt ms under fio ($(cat "$out/m2/passes") passes, no error), both copies the same $(( size_b >> 20 )) MiB"
