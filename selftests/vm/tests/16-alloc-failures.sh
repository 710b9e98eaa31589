#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Allocation failures (debug kernel only: failslab, fail_page_alloc,
# fail_function; skips elsewhere).  Every failure must end the command
# with a clean error (exit 1, "rmbd: failed to ...") or not matter (exit
# 0): never an oops, a lockdep or KASAN report, a hang, a device, an
# export or a session left behind, or a leak kmemleak finds.
#
#  1. export add and dev connect: the kernel's fault points reached from
#     the CLI's own request (the netlink call, the target's export setup,
#     the client's session start and disk creation) fail one at a time,
#     the N-th after the request went out (failnth.so arms
#     /proc/thread-self/fail-nth): each of the first RMBD_FI_DENSE (6),
#     then N grows by RMBD_FI_STRIDE percent (50; 0: every point).
#  2. The target's side of a connect runs in kworkers (the session in the
#     rdma_cm handler, OPEN and the slab MAPs in rmbd_target's work):
#     failslab with its task filter on every kworker fails the first slab
#     allocation after SPACE bytes, for a range of SPACE.
#  3. Functions of rmbd marked ALLOW_ERROR_INJECTION, if there are any
#     (listed in /sys/kernel/debug/fail_function/injectable): each fails
#     at its first call, then at its second, under export add and dev
#     connect (8M in slabs of 2M: four slabs, three queue pairs).
#
# Wrong outcomes are collected and the test fails at the end with the
# list; a kernel report, a hang or a session that stays stop it at once.
# timeout=1200

set -eu
source "$(dirname "$0")/lib.sh"

dbg=/sys/kernel/debug
[[ -d $dbg/failslab ]] || skip "no failslab in this kernel (the debug kernel has it: make check-debug)"
shim=$(cd "$(dirname "$0")/.." && pwd)/failnth.so
[[ -f $shim ]] || skip "selftests/vm/failnth.so not built"
require_rmbd

dense=${RMBD_FI_DENSE:-6}
stride=${RMBD_FI_STRIDE:-50}
tmp=$(mktemp -d)

# Commands are slow on the debug kernel: the loops below run the CLI and
# bash builtins only.
problems=()
problem() {
	log "PROBLEM: $*"
	problems+=("$*")
}

# ---- fault-injection knobs, restored at exit ---------------------------

knobs=(failslab/probability failslab/interval failslab/times failslab/space
       failslab/verbose failslab/verbose_ratelimit_interval_ms
       failslab/task-filter failslab/ignore-gfp-wait
       fail_page_alloc/probability fail_page_alloc/times fail_page_alloc/verbose
       fail_page_alloc/verbose_ratelimit_interval_ms
       fail_page_alloc/ignore-gfp-wait fail_page_alloc/min-order)
declare -A saved
for k in "${knobs[@]}"; do
	saved[$k]=$(< "$dbg/$k")
done
set_knob() { echo "$2" > "$dbg/$1"; }

kworkers_fail() {	# 0|1: make-it-fail of every kworker
	local p c
	for p in /proc/[0-9]*; do
		# The braces also silence the redirection of a task gone meanwhile.
		{ read -r c < "$p/comm"; } 2> /dev/null || continue
		if [[ $c == kworker/* ]]; then
			{ echo "$1" > "$p/make-it-fail"; } 2> /dev/null || true
		fi
	done
}

cleanup() {
	local k
	kworkers_fail 0
	for k in "${knobs[@]}"; do
		echo "${saved[$k]}" > "$dbg/$k" 2> /dev/null
	done
	if [[ -w $dbg/fail_function/inject ]]; then
		echo > "$dbg/fail_function/inject" 2> /dev/null
	fi
	kill "$kmsg_pid" 2> /dev/null
	rm -rf "$tmp"
}

# The kernel log since the test began, read after each fault point to
# stop at the first report with the failure that caused it.
: > "$tmp/kmsg"
dmesg -w > "$tmp/kmsg" 2>&1 &
kmsg_pid=$!
trap cleanup EXIT
kmsg_check() {	# WHAT
	local errs
	errs=$(kmsg_reports < "$tmp/kmsg")
	if [[ -n $errs ]]; then
		head -n 20 <<< "$errs"
		fail "kernel report after $1"
	fi
	return 0
}

# Leaks: guest.sh has kmemleak scan after the last test (a scan takes
# 20 s on the debug kernel); an object leaked here is still unreferenced
# then, and fails the suite.

# Fault points count only if their filters let them through: every slab
# allocation, and the target's 2 MiB chunks (order 9, __GFP_NOWARN) among
# the page allocations (smaller orders would fail noisily elsewhere).
# The kernel logs each injected failure, without a stack dump and with
# no rate limit: a stack dump the failure causes is only excused right
# after its notice (kmsg_reports in lib.sh).
set_knob failslab/ignore-gfp-wait N
set_knob failslab/verbose 1
set_knob failslab/verbose_ratelimit_interval_ms 0
set_knob fail_page_alloc/ignore-gfp-wait N
set_knob fail_page_alloc/min-order 9
set_knob fail_page_alloc/verbose 1
set_knob fail_page_alloc/verbose_ratelimit_interval_ms 0

# ---- state -------------------------------------------------------------

export_exists() { "$RMBD_BIN" export show "$1" > /dev/null 2>&1; }

sessions() {	# EXPORT: its session count, empty if it does not exist
	local j
	j=$("$RMBD_BIN" -j export show "$1" 2> /dev/null) || return 0
	[[ $j =~ \"sessions\":[[:space:]]*([0-9]+) ]] && echo "${BASH_REMATCH[1]}"
	return 0
}

# The target drops a session when the client's teardown reaches it, a
# little later.  One that stays is a leak: stop.
wait_no_session() {	# EXPORT WHAT
	local i s
	for (( i = 0; i < 60; i++ )); do
		s=$(sessions "$1")
		[[ -z $s || $s == 0 ]] && return 0
		sleep 0.5
	done
	fail "$2: export $1 still has $s session(s) after 30 s"
}

devices() {	# the names of the client's devices
	local j
	j=$("$RMBD_BIN" -j dev show 2> /dev/null) || return 0
	while [[ $j =~ \"name\":[[:space:]]*\"(rmbd[0-9]+)\"(.*) ]]; do
		echo "${BASH_REMATCH[1]}"
		j=${BASH_REMATCH[2]}
	done
}

# Disconnect whatever devices are left; a problem if there were any.
no_device() {	# WHAT
	local d left
	left=$(devices)
	[[ -z $left ]] && return 0
	problem "$1: device(s) left: $left"
	for d in $left; do
		timeout 60 "$RMBD_BIN" dev disconnect "$d" force ||
			fail "cannot disconnect the left-over $d"
	done
}

# A connect said it succeeded: its device must be there; disconnect it.
connected() {	# WHAT
	dev=${out##*$'\n'}
	if [[ $dev =~ ^rmbd[0-9]+$ ]]; then
		wait_node "/dev/$dev" || problem "$1: /dev/$dev did not appear"
		# Every slab mapped: the whole device reads.
		dd if="/dev/$dev" of=/dev/null bs=1M iflag=direct status=none ||
			problem "$1: connected, but /dev/$dev does not read whole"
		rmbd_ok dev disconnect "$dev"
	else
		problem "$1: exit 0, but it printed '$out'"
	fi
}

# Run the CLI once with the N-th fault point after its request failing.
# The CLI prints "rmbd: failed to WHAT: STRERROR[: REASON]", the reason
# being the kernel's extended ack message.  Every refusal must give one,
# but for the first fault points of a command, which lie in the kernel's
# netlink before rmbd's handler runs and end with a bare ENOMEM: on the
# debug kernel (6.1) points 1 and 3 are netlink_sendmsg's skb, 5
# genetlink's attribute table (the even ones fail nothing); 7 is rmbd's
# reply, allocated first.
noreason=0 noreason_at=
noreason_max=${RMBD_FI_NOREASON_MAX:-5}
reason_given() {	# ERR
	[[ $1 =~ rmbd:\ failed\ to\ [^:]*:\ [^:]*:\ [^[:space:]] ]]
}

# Sets rc, out, err and left (what the counter had left at exit: > 0 when
# the N-th point was never reached; empty when nothing was armed).
cli_nth() {	# N ARGS...
	local n=$1 state nth
	shift
	rm -f "$tmp/report"
	rc=0
	out=$(RMBD_FAILNTH=$n RMBD_FAILNTH_REPORT=$tmp/report LD_PRELOAD=$shim \
		timeout -k 5 120 "$RMBD_BIN" "$@" 2> "$tmp/err") || rc=$?
	err=$(< "$tmp/err")
	err=${err//$'\n'/ }
	err=${err:0:300}
	left=
	if [[ -f $tmp/report ]]; then
		read -r state nth left < "$tmp/report" || true
	fi
	# The kernel could not allocate its reply: the command may have been
	# carried out all the same.
	lost_reply=0
	[[ $rc == 1 && $err == *"No buffer space available"* ]] && lost_reply=1
	if (( rc == 124 || rc == 137 )); then
		fail "rmbd $* with fault point $n failing: no answer in 120 s"
	elif (( rc == 1 )); then
		if [[ $err != *"rmbd: failed to "* ]]; then
			problem "rmbd $* with fault point $n failing: exit 1 without 'rmbd: failed to ...': $err"
		elif ! reason_given "$err" && (( !lost_reply )); then
			# Allowed only before rmbd's code runs: see the end.
			noreason=$(( noreason + 1 ))
			noreason_at+=" $1:$n"
			(( n <= noreason_max )) ||
				problem "rmbd $* with fault point $n failing: refused without a reason: $err"
		fi
	elif (( rc != 0 )); then
		problem "rmbd $* with fault point $n failing: exit $rc: $err"
	fi
	return 0
}

# The fault points to try out of TOTAL.
points() {	# TOTAL
	local n=1
	while (( n <= $1 )); do
		echo "$n"
		if (( n < dense || stride == 0 )); then
			n=$(( n + 1 ))
		else
			n=$(( n + 1 + n * stride / 100 ))
		fi
	done
}

# How many fault points the command passes when none fails.
calibrate() {	# ARGS...
	cli_nth 1000000 "$@"
	(( rc == 0 )) || fail "rmbd $* failed without an injected failure: $err"
	[[ -n $left ]] || fail "failnth.so did not arm for rmbd $*"
	total=$(( 1000000 - left ))
	# None would leave the loop below with nothing to try.
	(( total > 0 )) || fail "rmbd $* passed no fault point after its request: fail-nth counts nothing"
}

# ---- 1. export add -----------------------------------------------------

# The host identity the exports a client connects to must allow.
host=$(rmbd_cli host) || fail "no host identity"

target_setup fi-conn 16M slab 4M

calibrate export add fi-cal size 12M slab 4M
rmbd_ok export del fi-cal
log "export add: $total fault points after the request"
tried=0 refused=0 t0=$SECONDS
for n in $(points "$total"); do
	cli_nth "$n" export add fi-add size 12M slab 4M
	kmsg_check "failing fault point $n of export add"
	tried=$(( tried + 1 ))
	if (( rc == 0 )); then
		export_exists fi-add ||
			problem "export add exited 0 with fault point $n failing, but there is no export"
	elif (( lost_reply )); then
		# Carried out or not, but never half: if the export is there,
		# it is whole.
		log "  fault point $n: the reply was lost: $err"
		if export_exists fi-add; then
			j=$(rmbd_cli -j export show fi-add)
			[[ $(jq -r '.[0].size' <<< "$j") == $(( 12 << 20 )) &&
			   $(jq -r '.[0].nr_slabs' <<< "$j") == 3 ]] ||
				problem "export add with fault point $n failing lost its reply and left a partial export: $j"
		fi
	else
		refused=$(( refused + 1 ))
		export_exists fi-add &&
			problem "export add with fault point $n failing: '$err', but the export exists"
	fi
	if export_exists fi-add; then
		rmbd_ok export del fi-add
	fi
	if [[ -n $left && $left != 0 ]]; then
		break
	fi
done
log "export add: $tried fault points failed, $refused refusals, $(( SECONDS - t0 )) s"

# ---- 1. dev connect ----------------------------------------------------

connect_args=(dev connect addr "$RMBD_ADDR" export fi-conn queues 2 depth 16)
calibrate "${connect_args[@]}"
dev_disconnect "$(tail -n 1 <<< "$out")"
wait_no_session fi-conn "calibration"
log "dev connect: $total fault points after the request"
tried=0 refused=0 t0=$SECONDS
for n in $(points "$total"); do
	cli_nth "$n" "${connect_args[@]}"
	tried=$(( tried + 1 ))
	if (( rc == 0 )); then
		connected "dev connect with fault point $n failing"
	elif (( lost_reply )); then
		log "  fault point $n: the reply was lost: $err"
		for dev in $(devices); do
			rmbd_ok dev disconnect "$dev"
		done
	else
		refused=$(( refused + 1 ))
	fi
	no_device "dev connect with fault point $n failing ('$err')"
	wait_no_session fi-conn "dev connect with fault point $n failing ('$err')"
	kmsg_check "failing fault point $n of dev connect"
	if [[ -n $left && $left != 0 ]]; then
		break
	fi
done
log "dev connect: $tried fault points failed, $refused refusals, $(( SECONDS - t0 )) s"

# ---- 2. the kworkers ---------------------------------------------------

# With the task filter only tasks marked make-it-fail fail: every kworker
# (rdma_cm's and ib_cm's handlers, rmbd_target's and rmbd_client's
# work).  times=1: one failure per connect, the first slab allocation
# after SPACE bytes.
tried=0 refused=0 t0=$SECONDS
for space in 0 128 512 2048 8192 32768 131072 262144; do
	set_knob failslab/space "$space"
	set_knob failslab/times 1
	set_knob failslab/interval 1
	set_knob failslab/task-filter Y
	kworkers_fail 1
	set_knob failslab/probability 100
	rc=0
	out=$(timeout -k 5 120 "$RMBD_BIN" "${connect_args[@]}" 2> "$tmp/err") || rc=$?
	set_knob failslab/probability 0
	kworkers_fail 0
	err=$(< "$tmp/err")
	err=${err//$'\n'/ }
	injected=$(( 1 - $(< "$dbg/failslab/times") ))
	tried=$(( tried + injected ))
	what="dev connect with a kworker allocation failing (space $space)"
	if (( rc == 0 )); then
		connected "$what"
	elif (( rc == 124 || rc == 137 )); then
		fail "$what: no answer in 120 s"
	elif (( rc == 1 )) && reason_given "$err"; then
		refused=$(( refused + 1 ))
		log "  space $space: $err"
	else
		problem "$what: exit $rc: $err"
	fi
	no_device "$what"
	wait_no_session fi-conn "$what"
	kmsg_check "$what"
	(( injected )) || break
done
set_knob failslab/space 0
set_knob failslab/task-filter N
log "kworkers: $tried allocations failed during dev connect, $refused refusals, $(( SECONDS - t0 )) s"
(( tried > 0 )) || fail "kworkers: no allocation of a kworker was ever failed: the task filter matched nothing"

# ---- 3. rmbd functions open to fail_function ---------------------------

funcs=()
ff=$dbg/fail_function
if [[ -r $ff/injectable ]]; then
	mapfile -t funcs < <(awk '$2 ~ /^\[rmbd_(target|client)\]$/ {print $1 " " $3}' \
		"$ff/injectable")
fi
# Every function the sources mark must be there to fail.
want=$(grep -rhoE 'ALLOW_ERROR_INJECTION\(rmbd_[a-z0-9_]+' "$RMBD_REPO/kmod" |
	sed 's/.*(//' | sort -u)
[[ -n $want ]] || fail "no ALLOW_ERROR_INJECTION in $RMBD_REPO/kmod"
have=" ${funcs[*]%% *} "
for f in $want; do
	[[ " $(printf '%s ' "${funcs[@]%% *}") " == *" $f "* ]] ||
		fail "fail_function: $f is marked ALLOW_ERROR_INJECTION but not injectable (injectable: $have)"
done
log "fail_function: ${#funcs[@]} rmbd functions: $(printf '%s ' "${funcs[@]%% *}")"
# Functions whose failure past the first call a command gets over by
# design, and why (the device it connects must then work all the same).
declare -A absorbed=(
	[rmbd_t_map_slab]="a MAP_RANGE reply carries the slabs registered before the failure, and the client asks again for the rest"
)
# Fault points that hold a path back rather than fail it, for the
# tests of races; no command fails with them.
declare -A delays=(
	[rmbd_c_recover_late]="38-leg-race: a lost leg's recovery decides late"
)
for f in "${funcs[@]}"; do
	read -r fn type <<< "$f"
	[[ -z ${delays[$fn]:-} ]] || continue
	# Its first call fails, then its second (when a command calls it
	# more than once, the first one's work has to be undone).  fail_function
	# passes calls until "space" is down to 1: 2 lets one through.
	for call in 1 2; do
		what="$fn failing (call $call)"
		echo "$fn" > "$ff/inject" || fail "cannot inject into $fn"
		case "$type" in
		NULL) echo 0 > "$ff/$fn/retval" ;;
		TRUE) echo 1 > "$ff/$fn/retval" ;;
		# retval is an unsigned long: -ENOMEM in two's complement.
		*) printf '%#x\n' -12 > "$ff/$fn/retval" ;;
		esac
		echo N > "$ff/task-filter"
		echo 100 > "$ff/probability"
		echo 1 > "$ff/interval"
		echo $(( call == 1 ? 0 : 2 )) > "$ff/space"
		echo 1 > "$ff/times"
		echo 1 > "$ff/verbose"
		echo 0 > "$ff/verbose_ratelimit_interval_ms"
		rc=0
		timeout -k 5 120 "$RMBD_BIN" export add fi-ff size 8M slab 2M hosts "$host" > /dev/null 2> "$tmp/err" || rc=$?
		if (( rc == 0 )); then
			out=$(timeout -k 5 120 "$RMBD_BIN" dev connect addr "$RMBD_ADDR" \
				export fi-ff queues 2 depth 16 2> "$tmp/err") || rc=$?
			(( rc != 0 )) || connected "$what"
		fi
		# times is down to 0 once the failure was injected.
		fired=$(( $(< "$ff/times") == 0 ))
		echo > "$ff/inject"
		err=$(< "$tmp/err")
		err=${err//$'\n'/ }
		if (( rc == 124 || rc == 137 )); then
			fail "$what: no answer in 120 s"
		elif (( call == 1 && !fired )); then
			problem "$what: export add and dev connect never called it"
		elif (( rc == 1 )) && reason_given "$err"; then
			(( fired )) || problem "$what: not injected, but the commands failed: $err"
			log "  $what: $err"
		elif (( rc != 0 )); then
			problem "$what: exit $rc: $err"
		elif (( fired && call > 1 )) && [[ -n ${absorbed[$fn]:-} ]]; then
			log "  $what: absorbed, and the device reads whole: ${absorbed[$fn]}"
		elif (( fired )); then
			problem "$what: it failed, yet export add and dev connect succeeded"
		else
			log "  $what: called only once"
		fi
		no_device "$what"
		if export_exists fi-ff; then
			wait_no_session fi-ff "$what"
			rmbd_ok export del fi-ff
		fi
		kmsg_check "$what"
	done
done

# ---- nothing left ------------------------------------------------------

log "refusals without a reason: $noreason (command:fault point:$noreason_at)"

rmbd_ok export del fi-conn
no_device "the end"
[[ $(rmbd_cli -j export show | jq length) == 0 ]] ||
	problem "exports left: $(rmbd_cli -j export show | jq -r '.[].name' | tr '\n' ' ')"

if (( ${#problems[@]} )); then
	log "${#problems[@]} problem(s):"
	printf '  %s\n' "${problems[@]}"
	fail "allocation failures not handled cleanly"
fi
log "allocation failures handled"
