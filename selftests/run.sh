#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every rmbd test: host tests (selftests/host), checkpatch, then the VM
# suite (over soft-RoCE, and its data tests over soft-iWARP too, as
# TEST@siw), and with RMBD_WITH_DEBUG=1 the VM suite once more on the debug
# kernel (selftests/debug-kernel: KASAN, lockdep, kmemleak, fault
# injection; built first when it is not in the cache).  Prints TAP and
# ends with one line "N passed, N failed, N skipped".  Exit status 1 when
# a test failed.  A skip fails too unless selftests/expected-skips lists
# it for its lane.
#
# usage: run.sh [VM-TEST...]     e.g. run.sh 01-data-verify 04-bad-input
#   RMBD_SKIP_HOST=1  RMBD_SKIP_CHECKPATCH=1  RMBD_SKIP_VM=1  skip a part
#   RMBD_SKIP_TWO_VM=1  skip the two-VM test (selftests/vm/two-vm.sh), which
#                     runs after each VM suite when no VM test is named
#   RMBD_SKIP_BOOT_VM=1  skip the systemd boot test (selftests/vm/boot-vm.sh:
#                     make install's units and configuration, booted),
#                     which runs after the two-VM test when no VM test is
#                     named
#   RMBD_WITH_DEBUG=1  add the debug-kernel lane (vm-debug/...; with
#                     RMBD_DEBUG_TESTS=all, then two-vm-debug/...)
#   RMBD_DEBUG_TESTS  the tests of that lane when none are named: "all"
#                     (make check-debug), or a list (default: the failure,
#                     removal, race and fault-injection tests, which fit
#                     CI's time budget; the data-volume tests run on the
#                     Debian kernel)

set -u

# Parsed whole before it runs, so editing this file cannot derail a run.
{

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The project's own checks treat compiler warnings as errors.
export WERROR=${WERROR:-1}
repo=$(cd "$here/.." && pwd)

if (( EUID != 0 )); then
	echo "run.sh: run as root (the VM tests load kernel modules)" >&2
	exit 1
fi

passed=0
failed=0
skipped=0
num=0

# The skips that are right (selftests/expected-skips); any other fails.
declare -A skip_ok=()
while read -r name _; do
	[[ -z $name || $name == \#* ]] || skip_ok[$name]=1
done < "$here/expected-skips"

result() {	# RC NAME [DETAIL]
	num=$(( num + 1 ))
	if [[ $1 == 4 && -z ${skip_ok[$2]:-} ]]; then
		failed=$(( failed + 1 ))
		echo "not ok $num $2 # unexpected SKIP (not in selftests/expected-skips): ${3:-}"
		return
	fi
	case "$1" in
	0) passed=$(( passed + 1 )); echo "ok $num $2${3:+ # $3}" ;;
	4) skipped=$(( skipped + 1 )); echo "ok $num $2 # SKIP ${3:-}" ;;
	*) failed=$(( failed + 1 )); echo "not ok $num $2${3:+ # $3}" ;;
	esac
}

# Run a command as one test; its output becomes diagnostics.
run_one() {	# NAME CMD...
	local name=$1 rc=0 t0 out
	shift
	t0=$(date +%s)
	out=$("$@" 2>&1) || rc=$?
	[[ -n $out ]] && sed 's/^/# /' <<< "$out"
	# A TAP line of its own that skipped (prove passes those) counts as
	# NAME/DESCRIPTION: only an expected one may.
	local line
	while IFS= read -r line; do
		[[ $line =~ ^ok\ [0-9]+\ -\ (.*[^\ ])\ +#\ SKIP\ ?(.*)$ ]] &&
			result 4 "$name/${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
	done <<< "$out"
	if (( rc == 4 )); then
		result 4 "$name" "$(grep '^SKIP: ' <<< "$out" | tail -n 1 | cut -c7-)"
	else
		result "$rc" "$name" "$(( $(date +%s) - t0 )) s"
	fi
}

echo "TAP version 13"
t_start=$(date +%s)

echo "# building test helpers"
run_one build-helpers make -s -C "$here"

if [[ -z ${RMBD_SKIP_HOST:-} ]]; then
	if [[ -f $here/host/Makefile ]]; then
		run_one host make -s -C "$here/host" run
	else
		result 4 host "no selftests/host"
	fi
fi

if [[ -z ${RMBD_SKIP_CHECKPATCH:-} ]]; then
	run_one checkpatch "$here/checkpatch.sh"
fi

# A VM runner's KTAP as results LANE/TEST: vm_lane LANE DEBUG RUNNER ARGS...
vm_lane() {
	local lane=$1 debug=$2 runner=$3 line name detail vm_failed
	shift 3
	vm_failed=$failed
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ )?ok\ [0-9]+\ ([^#]*[^#\ ])(\ #\ (.*))?$ ]]; then
			name="$lane/${BASH_REMATCH[2]}"
			detail=${BASH_REMATCH[4]}
			if [[ -n ${BASH_REMATCH[1]} ]]; then
				result 1 "$name" "$detail"
			elif [[ $detail == SKIP* ]]; then
				detail=${detail#SKIP}
				result 4 "$name" "${detail# }"
			else
				result 0 "$name" "$detail"
			fi
		elif [[ $line == "KTAP version"* || $line =~ ^1\.\.[0-9]+$ ]]; then
			continue
		elif [[ $line =~ ^#\ runner\ exit\ status\ ([0-9]+)$ ]]; then
			if (( BASH_REMATCH[1] != 0 && failed == vm_failed )); then
				result 1 "$lane" "${runner##*/} exited with ${BASH_REMATCH[1]}"
			fi
		else
			printf '%s\n' "$line"
		fi
	done < <(RMBD_DEBUG_KERNEL=$debug "$runner" "$@" 2>&1
		 echo "# runner exit status $?")
}

# The data tests over soft-iWARP as well (TEST@siw, in the same VM):
# registered READ sinks, a flush per write, siw's own completion order,
# swap and link flaps.
siw_tests="00-rxe@siw 01-data-verify@siw 03-ext4@siw 08-swap-cgroup@siw
	12-link-flap@siw"

if [[ -z ${RMBD_SKIP_VM:-} ]]; then
	echo "# VM suite"
	vm_tests=("$@")
	if (( ! $# )); then
		vm_tests=("$here"/vm/tests/[0-9]*.sh)
		# siw.ko for Debian's kernel is built from linux-source-6.1.
		if [[ -f /usr/src/linux-source-6.1.tar.xz ]]; then
			read -r -d '' -a siw_list <<< "$siw_tests" || true
			vm_tests+=("${siw_list[@]}")
		else
			# A skip: it fails unless expected (expected-skips).
			result 4 vm/siw "no linux-source-6.1 (selftests/deps.sh installs it): no tests over soft-iWARP"
		fi
	fi
	vm_lane vm 0 "$here/vm/run-vm.sh" "${vm_tests[@]}"
	# The target VM killed under the client's I/O; not when some VM
	# tests were named.
	if (( ! $# )) && [[ -z ${RMBD_SKIP_TWO_VM:-} ]]; then
		echo "# two VMs"
		vm_lane two-vm 0 "$here/vm/two-vm.sh"
	fi
	# make install's units started by systemd at boot, in two VMs.
	if (( ! $# )) && [[ -z ${RMBD_SKIP_BOOT_VM:-} ]]; then
		echo "# systemd boot of two VMs"
		vm_lane boot-vm 0 "$here/vm/boot-vm.sh"
	fi
fi

# The debug kernel runs 3 to 10 times slower under TCG: by default its
# lane takes the tests of the failure and teardown paths, where KASAN,
# lockdep and kmemleak find what the Debian kernel hides: bad input,
# module unload, forced deletion, the loss timeout, removal under I/O,
# the races (38-leg-race needs the debug kernel's fail_function), fault
# injection, the in-use check, a hostile peer and a lying target.  19-queues for the stricter
# rxe's completion vectors and send queue budget (debug-kernel/patches/
# 0005, 0006); over its stricter siw (0004) the data: registered READ
# sinks, each write's flush.  Left to make check-debug, for CI's time
# (each runs on the Debian kernel): 06-connect-cycle (15-races and
# 16-alloc-failures connect and disconnect dozens of times),
# 12-link-flap (13-loss-timeout and 14-removal-under-io reconnect under
# I/O too), 17-session-timeout, 20-reconnect-delay, 23-allowed-hosts,
# 24-auth and 25-ownership (policy, not teardown), and the two-VM test.
debug_default="00-rxe 04-bad-input 05-module-unload 07-force-delete
	13-loss-timeout 14-removal-under-io 15-races 16-alloc-failures
	18-in-use 19-queues 22-hostile-peer 29-lying-target 38-leg-race
	00-rxe@siw 01-data-verify@siw"

if [[ ${RMBD_WITH_DEBUG:-0} != 0 ]]; then
	echo "# the debug kernel (a long build when it is not in the cache)"
	debug_failed=$failed
	run_one debug-kernel "$here/debug-kernel/build.sh" --kernel-only
	if (( failed == debug_failed )); then
		debug_tests=("$@")
		if (( ! $# )) && [[ ${RMBD_DEBUG_TESTS:-} != all ]]; then
			# Every line of the list, not the first only.
			read -r -d '' -a debug_tests \
				<<< "${RMBD_DEBUG_TESTS:-$debug_default}" || true
		fi
		echo "# VM suite on the debug kernel: ${debug_tests[*]:-all tests}"
		vm_lane vm-debug 1 "$here/vm/run-vm.sh" "${debug_tests[@]}"
		# The two VMs too, in the whole lane only.
		if (( ! $# )) && [[ ${RMBD_DEBUG_TESTS:-} == all &&
		      -z ${RMBD_SKIP_TWO_VM:-} ]]; then
			echo "# two VMs on the debug kernel"
			vm_lane two-vm-debug 1 "$here/vm/two-vm.sh"
		fi
	fi
fi

echo "1..$num"
echo "# total $(( $(date +%s) - t_start )) s"
echo "$passed passed, $failed failed, $skipped skipped"
(( failed == 0 ))
exit
}
