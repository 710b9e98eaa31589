#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the installed Debian kernel in QEMU with the host's / as a read-only
# 9p root, set up soft-RoCE and the rmbd modules in the guest, run guest
# test scripts there and print their results as KTAP on stdout.
#
# usage: run-vm.sh [--raw] TEST...
#   TEST is a script path or the name of one in selftests/vm/tests
#   (e.g. "01-data-verify", or just "01"); TEST@siw runs it over soft-iWARP
#   instead of soft-RoCE (siw is built into the debug kernel; for Debian's
#   build-siw.sh builds it).  With no TEST, every tests/[0-9]*.sh runs.
#   --raw passes the tests' output through unprefixed (for the demo).
#
# A test script may carry these header lines:
#   # timeout=N       seconds it may run (default: timeout= in vm/settings)
#   # vm-mem=SIZE     run it in a VM of its own with SIZE of memory (qemu -m
#                     syntax, e.g. 384M); the tests without one share one VM
#                     of RMBD_VM_MEM, booted first.  Results are numbered in
#                     the order the tests run; a test's own VM keeps its
#                     console.log and dmesg.log in RMBD_RESULTS/<test>/.
#   # vm-mem-debug=SIZE  vm-mem on the debug kernel, whose KASAN shadow and
#                     bookkeeping take a good part of a small VM
#   # host-setup=SCRIPT  a script (beside the test) that runs on the host,
#                     as root, before the VM boots, with a directory of the
#                     results share as its argument; the test finds it as
#                     RMBD_SETUP_DIR (RMBD_KVER: the kernel the VM boots),
#                     with the script's output in setup.log
#                     and a file "done" when the script succeeded (what the
#                     read-only guest cannot do: install into a scratch root,
#                     build with DKMS)
#
# Environment:
#   RMBD_KVER         kernel release to boot (default: newest in /lib/modules
#                     that has /boot/vmlinuz-<release>)
#   RMBD_VM_MEM       guest memory of the shared VM (default 2G)
#   RMBD_VM_SMP       guest CPUs (default 2)
#   RMBD_VM_KVM=1     use KVM instead of TCG
#   RMBD_VM_TIMEOUT   seconds before a VM is killed (default: sum of its
#                     tests' timeouts plus a boot budget)
#   RMBD_RESULTS      results directory (default selftests/results/vm)
#   RMBD_CACHE        cache directory (default ${XDG_CACHE_HOME:-~/.cache}/rmbd)
#   RMBD_DEBUG_KERNEL=1  boot the debug kernel (KASAN, lockdep, kmemleak, fault
#                     injection) that selftests/debug-kernel/build.sh builds
#                     or finds in the cache; results default to results/vm-debug
#   RMBD_VM_TIMEOUT_SCALE  multiply the tests' timeouts (default 1, 3 on the
#                     debug kernel)
#   RMBD_CLIENT_PARAMS  parameters for rmbd-client.ko (e.g. read_mr=1)
#
# Exit status: 0 when every test passed or skipped, 1 otherwise.

set -eu

# Parsed whole before it runs, so editing this file cannot derail a run.
{

vm_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$vm_dir/../.." && pwd)
# shellcheck source=vm-lib.sh
source "$vm_dir/vm-lib.sh"

raw=0
tests=()

while (( $# )); do
	case "$1" in
	--raw) raw=1 ;;
	-h|--help) sed -n '4,/^# Exit status/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run-vm: unknown option $1" >&2; exit 2 ;;
	*) tests+=("$1") ;;
	esac
	shift
done

if (( ${#tests[@]} == 0 )); then
	for t in "$vm_dir"/tests/[0-9]*.sh; do
		tests+=("$t")
	done
fi

# Resolve test names to absolute paths, a variant (@siw) kept.
paths=()
siw=0
for t in "${tests[@]}"; do
	variant=
	if [[ $t == *@* ]]; then
		variant=@${t##*@}
		t=${t%@*}
		[[ $variant == @siw ]] ||
			{ echo "run-vm: unknown variant $variant (only @siw)" >&2; exit 2; }
		siw=1
	fi
	if [[ -f $t ]]; then
		p=$(cd "$(dirname "$t")" && pwd)/$(basename "$t")
	elif [[ -f $vm_dir/tests/$t ]]; then
		p=$vm_dir/tests/$t
	elif [[ -f $vm_dir/tests/$t.sh ]]; then
		p=$vm_dir/tests/$t.sh
	elif m=("$vm_dir"/tests/"$t"-*.sh) && [[ -f ${m[0]} ]]; then
		p=${m[0]}
	else
		echo "run-vm: no such test: $t" >&2
		exit 2
	fi
	case "$p" in
	"$repo"/*) ;;
	/tmp/*|/run/*|/var/tmp/*|/var/log/*)
		echo "run-vm: $p: the guest mounts tmpfs over /tmp, /run, /var/tmp and /var/log; put tests elsewhere" >&2
		exit 2 ;;
	esac
	paths+=("$p$variant")
done

default_timeout=300
if [[ -f $vm_dir/settings ]]; then
	v=$(sed -n 's/^timeout=\([0-9]\+\)$/\1/p' "$vm_dir/settings")
	[[ -n $v ]] && default_timeout=$v
fi

# A test may override the timeout with a "# timeout=N" line.
test_timeout() {
	local v
	v=$(sed -n 's/^# timeout=\([0-9]\+\)$/\1/p' "${1%@*}" | head -n 1)
	echo "$(( ${v:-$default_timeout} * ${timeout_scale:-1} ))"
}

# A test with a "# vm-mem=SIZE" line runs in a VM of its own with SIZE of
# memory (a number with an optional K, M or G suffix, as qemu -m takes);
# on the debug kernel a "# vm-mem-debug=SIZE" line, when there is one,
# overrides it.
test_mem() {
	local m=''
	[[ $debug == 1 ]] &&
		m=$(sed -n 's/^# vm-mem-debug=\([0-9]\+[KMG]\?\)$/\1/p' "${1%@*}" | head -n 1)
	[[ -n $m ]] ||
		m=$(sed -n 's/^# vm-mem=\([0-9]\+[KMG]\?\)$/\1/p' "${1%@*}" | head -n 1)
	echo "$m"
}

kver=$(vm_kernel_release run-vm) || exit 1
kernel=/boot/vmlinuz-$kver

cache=${RMBD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rmbd}
results=${RMBD_RESULTS:-$repo/selftests/results/vm}
mkdir -p "$cache" "$results"
results=$(cd "$results" && pwd)

# The debug kernel boots without an initramfs: 9p and virtio are built in,
# its modules and the rmbd modules built for it live in the cache.
debug=${RMBD_DEBUG_KERNEL:-0}
timeout_scale=${RMBD_VM_TIMEOUT_SCALE:-1}
if [[ $debug == 1 ]]; then
	vm_debug_kernel "$cache" "$repo" || exit 1
	timeout_scale=${RMBD_VM_TIMEOUT_SCALE:-3}
	if [[ -z ${RMBD_RESULTS:-} ]]; then
		results=$repo/selftests/results/vm-debug
		mkdir -p "$results"
	fi
fi

# soft-iWARP: built into the debug kernel, a module of our own build for
# Debian's (which lacks it).
siw_ko=
if (( siw )) && [[ $debug != 1 ]]; then
	siw_ko=$("$vm_dir/build-siw.sh" "$kver") || exit 1
fi

# One VM at a time: the machine has two cores.
exec 9>"$cache/vm.lock"
if ! flock -n 9; then
	echo "# run-vm: waiting for another VM to finish" >&2
	flock 9
fi

# The tests' helper programs (nl-fuzz, swapverify) are built on the host:
# the guest's root is read-only.
make -s -C "$repo/selftests" all >&2 || echo "# run-vm: building the test helpers failed" >&2

# ---- initramfs ---------------------------------------------------------

initrd=$(vm_initramfs "$cache" "$kver" "$vm_dir")

# ---- job ---------------------------------------------------------------

# Only ever empty a directory this script made.
if [[ -n $(ls -A "$results") && ! -f $results/.rmbd-vm-results &&
      ! -f $results/job ]]; then
	echo "run-vm: $results is not empty and not a results directory" >&2
	exit 2
fi
rm -rf "${results:?}"/*
touch "$results/.rmbd-vm-results"

# The boots: one VM for every test without a "# vm-mem=" line, then one of
# its own for each test with one.  Tests are numbered in that order.
order=()
boot_first=()	# index in order of each boot's first test
boot_count=()
boot_mem=()
for p in "${paths[@]}"; do
	[[ -z $(test_mem "$p") ]] && order+=("$p")
done
if (( ${#order[@]} )); then
	boot_first+=(0)
	boot_count+=("${#order[@]}")
	boot_mem+=("${RMBD_VM_MEM:-2G}")
fi
for p in "${paths[@]}"; do
	m=$(test_mem "$p")
	[[ -n $m ]] || continue
	boot_first+=("${#order[@]}")
	boot_count+=(1)
	boot_mem+=("$m")
	order+=("$p")
done

smp=${RMBD_VM_SMP:-2}
if [[ ${RMBD_VM_KVM:-0} == 1 ]]; then
	accel=(-accel kvm -cpu host)
else
	accel=(-accel tcg -cpu max)
fi
boot_budget=180

# ---- run ---------------------------------------------------------------

n=${#order[@]}
echo "KTAP version 1"
echo "1..$(( n + 1 ))"

diag() { sed 's/^/# /'; }

# Boot one VM for tests FIRST+1 .. FIRST+COUNT of order[] with MEM of
# memory and the results share OUT; print their KTAP lines, and a result
# for each test the guest did not report.  Sets failed=1 on a failure and
# adds to vm_why what went wrong with the VM itself (LABEL: ...).
run_boot() {	# FIRST COUNT MEM OUT LABEL
	local first=$1 count=$2 mem=$3 out=$4 label=$5 p i
	local -a bpaths=("${order[@]:first:count}")
	mkdir -p "$out"
	{
		printf 'REPO=%q\n' "$repo"
		printf 'RAW=%q\n' "$raw"
		printf 'FIRST=%q\n' "$(( first + 1 ))"
		printf 'TESTS=('
		printf '%q ' "${bpaths[@]}"
		printf ')\n'
		printf 'TIMEOUTS=('
		for p in "${bpaths[@]}"; do
			printf '%q ' "$(test_timeout "$p")"
		done
		printf ')\n'
		printf 'export RMBD_CLIENT_PARAMS=%q RMBD_SIW_KO=%q\n' \
			"${RMBD_CLIENT_PARAMS:-}" "$siw_ko"
	} > "$out/job"
	if [[ $debug == 1 ]]; then
		vm_debug_job >> "$out/job"
	fi

	# The tests' host-setup scripts, before the boot.
	local setup sdir
	for p in "${bpaths[@]}"; do
		setup=$(sed -n 's/^# host-setup=\([A-Za-z0-9._-]\+\)$/\1/p' "${p%@*}" | head -n 1)
		[[ -n $setup ]] || continue
		sdir=$out/setup/$(basename "${p%@*}" .sh)${p##*.sh}
		mkdir -p "$sdir"
		if RMBD_DEBUG_KERNEL=$debug RMBD_KVER=$kver \
		   "$(dirname "$p")/$setup" "$sdir" \
		   > "$sdir/setup.log" 2>&1 < /dev/null; then
			touch "$sdir/done"
		fi
	done

	local vm_timeout=${RMBD_VM_TIMEOUT:-}
	if [[ -z $vm_timeout ]]; then
		vm_timeout=$boot_budget
		for p in "${bpaths[@]}"; do
			vm_timeout=$(( vm_timeout + $(test_timeout "$p") + 30 ))
		done
	fi

	# init_on_alloc=0: Debian's kernel zeroes every allocation by
	# default, which would hide memory rmbd hands out without zeroing.
	local qemu=(
		qemu-system-x86_64 "${accel[@]}" -m "$mem" -smp "$smp"
		-nographic -no-reboot -monitor none -nic none
		-serial "file:$out/console.log"
		-kernel "$kernel" -initrd "$initrd"
		-append "console=ttyS0 panic=-1 mitigations=off init_on_alloc=0 rmbd.guest=$vm_dir/guest.sh"
		-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=root,mount_tag=rootfs
		-fsdev "local,id=repo,path=$repo,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=repo,mount_tag=rmbdrepo
		-fsdev "local,id=out,path=$out,security_model=none,multidevs=remap"
		-device virtio-9p-pci,fsdev=out,mount_tag=rmbdout
	)
	if [[ $debug == 1 ]]; then
		vm_debug_qemu qemu "$repo"
	fi

	local start qpid
	start=$(date +%s)
	timeout -k 5 "$vm_timeout" "${qemu[@]}" < /dev/null > "$out/qemu.log" 2>&1 &
	qpid=$!

	# Print the guest's KTAP lines as they arrive and watch for a guest
	# whose own per-test timeout could not end a test (a task stuck in the
	# kernel).
	local printed=0 cur='' cur_since=$start killed='' c now cname t lines
	flush_ktap() {
		[[ -f $out/ktap ]] || return 0
		lines=$(wc -l < "$out/ktap")
		if (( lines > printed )); then
			sed -n "$(( printed + 1 )),${lines}p" "$out/ktap"
			printed=$lines
		fi
	}
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 1
		flush_ktap
		c=$(cat "$out/current" 2>/dev/null || true)
		now=$(date +%s)
		if [[ $c != "$cur" ]]; then
			cur=$c
			cur_since=$now
		fi
		if [[ -n $cur && $cur != done ]]; then
			read -r _ cname t <<< "$cur"
			if (( now - cur_since > t + 90 )); then
				killed="$cname still running $(( now - cur_since )) s after it started (timeout $t s)"
				kill "$qpid" 2>/dev/null || true
			fi
		fi
	done
	local rc=0
	wait "$qpid" || rc=$?
	flush_ktap

	# ---- account ---------------------------------------------------

	console_errors() {
		vm_console_reports "$out/console.log" | diag
	}

	local -A have
	local num
	while read -r _ num _; do
		have[$num]=1
	done < <(grep -aE '^(not )?ok [0-9]+ ' "$out/ktap" 2>/dev/null | sed 's/^not //')

	local why=
	if [[ -n $killed ]]; then
		why="VM killed: $killed"
	elif (( rc == 124 || rc == 137 )); then
		why="VM timed out after $vm_timeout s"
	elif (( rc != 0 )); then
		why="qemu exited with status $rc"
	elif [[ ! -f $out/done ]]; then
		why="VM stopped before the tests finished (crash or panic)"
	fi

	local running='' name
	if [[ -n $why && $cur != done ]]; then
		read -r running _ <<< "$cur"
	fi
	for (( i = first + 1; i <= first + count; i++ )); do
		if [[ -z ${have[$i]:-} ]]; then
			name=$(basename "${order[i-1]}" .sh)
			if [[ $i == "$running" ]]; then
				echo "# $why"
				console_errors
				echo "not ok $i $name # ${why}"
			else
				echo "not ok $i $name # not run: ${why:-no result}"
			fi
			failed=1
		fi
	done
	if grep -qa '^not ok ' "$out/ktap" 2>/dev/null; then
		failed=1
	fi

	# The VM booted, ran everything and stopped on its own, in time, with
	# no kernel error outside the tests, and none on its console that the
	# guest did not see in its own log (which the tests' windows cover
	# whole): a report the guest missed, or one logged after it stopped
	# reading (the shutdown).
	if [[ -z $why ]] && grep -qa '^# vm-error' "$out/ktap"; then
		why="kernel errors outside the tests"
	fi
	if [[ -z $why ]]; then
		local cerrs
		cerrs=$(vm_console_reports "$out/console.log" |
			{ grep -avxFf <(tr -d '\r' < "$out/dmesg.log" 2> /dev/null) || true; })
		if [[ -n $cerrs ]]; then
			echo "# kernel errors on the console missing from the guest's log:"
			diag <<< "$cerrs"
			why="kernel errors on the console"
		fi
	fi
	if [[ -n $why ]]; then
		if [[ $why != kernel* ]]; then
			echo "# last lines of the console ($out/console.log):"
			tail -n 40 "$out/console.log" 2>/dev/null | diag
		fi
		vm_why+="${vm_why:+; }${label:+$label: }$why"
	fi

	# A test's own VM keeps the boot's files in a directory of its own;
	# its logs join the others.
	if [[ $out != "$results" ]]; then
		for p in "${bpaths[@]}"; do
			name=$(basename "$p" .sh)
			mv -f "$out/$name.log" "$out/$name.dmesg" "$results/" 2>/dev/null || true
		done
	fi
}

start=$(date +%s)
failed=0
vm_why=
for (( b = 0; b < ${#boot_first[@]}; b++ )); do
	out=$results
	label=
	if (( b > 0 )); then
		out=$results/$(basename "${order[boot_first[b]]}" .sh)
	fi
	if (( ${#boot_first[@]} > 1 )); then
		label="VM $(( b + 1 )) of ${#boot_first[@]}, ${boot_mem[b]}"
		echo "# $label"
	fi
	run_boot "${boot_first[b]}" "${boot_count[b]}" "${boot_mem[b]}" "$out" "$label"
done
elapsed=$(( $(date +%s) - start ))

# The last test stands for the VMs themselves.
if [[ -z $vm_why ]]; then
	echo "ok $(( n + 1 )) vm # ${elapsed} s"
else
	echo "not ok $(( n + 1 )) vm # ${vm_why}, ${elapsed} s"
	failed=1
fi
echo "# results in $results"
exit "$failed"
exit
}
