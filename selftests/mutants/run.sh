#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Mutation checks of the VM tests: each selftests/mutants/*.patch breaks
# the modules on purpose in one way a test claims to catch.  For each,
# the work tree is copied into the cache, the patch applied, the modules
# built, and the VM tests its "Tests:" line names run; the mutant is
# caught when every result its "Fails:" line names is "not ok" ("vm" is
# the result of the VM itself: its boot, teardown and console).  Prints
# TAP, one result per mutant, with the failure the tests reported.  A
# mutant that is not caught is a test that can pass while the behaviour
# it names is broken.
#
# A patch's header, before its "---" line:
#   Mutant:  what it breaks
#   Tests:   the VM tests to run; "two-vm" among them runs
#            selftests/vm/two-vm.sh as well
#   Fails:   the results that must be "not ok" (two-vm.sh's are its
#            step names)
#   Expect:  optional, an extended regular expression that one of the
#            failures ("FAIL:", "vm-error:" or "not ok" lines) must
#            match: the check the mutant is for caught it, not another
#   Kernel:  optional, "debug" to boot the debug kernel
#   Why:     what the test missed before it was fixed
#
# usage: selftests/mutants/run.sh [NAME...]   (NAME: a patch's file name
#                                             without .patch; default all)
#   RMBD_CACHE          cache directory (default ${XDG_CACHE_HOME:-~/.cache}/rmbd)
#   RMBD_DEBUG_KERNEL=1  run the tests on the debug kernel
#   RMBD_MUTANTS_FROM=COMMIT  with the selftests/ of COMMIT instead: shows
#                       which mutants an older suite let through
#
# Not part of make check (each mutant is a module build and a VM boot):
# run it as root with make check-mutants when a test or what it checks
# changes.

set -u

# Parsed whole before it runs, so editing this file cannot derail a run.
{
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${RMBD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rmbd}
work=$cache/mutants${RMBD_MUTANTS_FROM:+-$RMBD_MUTANTS_FROM}
KVER=${KVER:-$(ls -1 /lib/modules 2> /dev/null | sort -V | tail -n 1)}
KDIR=${KDIR:-/lib/modules/$KVER/build}

if (( EUID != 0 )); then
	echo "mutants: run as root (the VM tests load kernel modules)" >&2
	exit 1
fi

patches=()
if (( $# )); then
	for n in "$@"; do
		[[ -f $here/$n.patch ]] || { echo "mutants: no $here/$n.patch" >&2; exit 2; }
		patches+=("$here/$n.patch")
	done
else
	patches=("$here"/*.patch)
fi

header() {	# PATCH FIELD
	sed -n "s/^$2: *//p" "$1" | head -n 1
}

echo "TAP version 13"
echo "1..${#patches[@]}"
num=0 caught=0
for p in "${patches[@]}"; do
	num=$(( num + 1 ))
	name=$(basename "$p" .patch)
	tests=$(header "$p" Tests)
	fails=$(header "$p" Fails)
	expect=$(header "$p" Expect)
	debug=${RMBD_DEBUG_KERNEL:-}
	[[ $(header "$p" Kernel) == debug ]] && debug=1
	echo "# $name: $(header "$p" Mutant)"
	if [[ -z $tests || -z $fails ]]; then
		echo "not ok $num $name # no Tests: or Fails: line"
		continue
	fi
	# A tree of its own: runs of different mutants may overlap.
	tree=$work/$name/tree
	mkdir -p "$tree"
	rsync -a --delete --exclude=/.git --exclude=/selftests/results \
		"$repo/" "$tree/" || { echo "not ok $num $name # copying the tree failed"; continue; }
	# The tests of an older commit, to see whether they caught it.
	if [[ -n ${RMBD_MUTANTS_FROM:-} ]] &&
	   ! git -C "$repo" archive "$RMBD_MUTANTS_FROM" selftests | tar -x -C "$tree"; then
		echo "not ok $num $name # no selftests/ in $RMBD_MUTANTS_FROM"
		continue
	fi
	if ! patch -s -p1 -d "$tree" < "$p"; then
		echo "not ok $num $name # the patch does not apply"
		continue
	fi
	kdir=$KDIR
	[[ -n $debug ]] && kdir=$cache/debug-kernel/linux
	if ! make -s -C "$kdir" M="$tree" modules > "$work/$name/build.log" 2>&1; then
		sed 's/^/# /' "$work/$name/build.log" | tail -n 20
		echo "not ok $num $name # the mutant does not build"
		continue
	fi
	res=$work/$name/results
	mkdir -p "$res/vm" "$res/two-vm"
	vm_tests=() two_vm=
	for t in $tests; do
		if [[ $t == two-vm ]]; then
			two_vm=1
		else
			vm_tests+=("$t")
		fi
	done
	: > "$work/$name/ktap"
	if (( ${#vm_tests[@]} )); then
		RMBD_DEBUG_KERNEL=$debug RMBD_RESULTS=$res/vm \
			"$tree/selftests/vm/run-vm.sh" "${vm_tests[@]}" >> "$work/$name/ktap" 2>&1
	fi
	if [[ -n $two_vm ]]; then
		RMBD_DEBUG_KERNEL=$debug RMBD_RESULTS=$res/two-vm \
			"$tree/selftests/vm/two-vm.sh" >> "$work/$name/ktap" 2>&1
	fi
	missed=
	for f in $fails; do
		grep -qE "^not ok [0-9]+ $f( |\$)" "$work/$name/ktap" || missed+=" $f"
	done
	if [[ -n $expect ]] &&
	   ! grep -aE '^(# (.*FAIL: |vm-error: )|not ok )' "$work/$name/ktap" | grep -qE -- "$expect"; then
		missed+=" (no failure matches \"$expect\")"
	fi
	why=$(grep -a -m 3 -E '^# ([a-z0-9]+: )?(FAIL: |vm-error: |task .* blocked|kernel errors)' "$work/$name/ktap" |
		cut -c3- | tr '\n' ' ')
	if [[ -z $missed ]]; then
		caught=$(( caught + 1 ))
		echo "ok $num $name # caught by $fails: ${why:0:300}"
	else
		grep -aE '^(not )?ok ' "$work/$name/ktap" | sed 's/^/# /'
		echo "not ok $num $name # not caught by$missed (log: $work/$name/ktap)"
	fi
done
echo "# $caught of $num mutants caught"
(( caught == num ))
exit
}
