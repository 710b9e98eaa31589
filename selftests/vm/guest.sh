#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of the test VM, started by the initramfs after switch_root into the
# host's read-only root.  Reads the job that run-vm.sh left in the results
# share, sets up soft-RoCE and the rmbd modules, runs each test with its own
# timeout and writes KTAP result lines to the share.

set -u

# Parsed whole before it runs, so editing this file cannot derail a run.
{
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LC_ALL=C TERM=dumb

out=/run/rmbd-out

mount_fs() { mount -t "$1" -o "$4" "$2" "$3"; }

# One process for all the mount points: a process costs about a second
# on the debug kernel.
mkdir -p /run /tmp /var/tmp /var/log /dev/pts /dev/shm /sys/fs/cgroup \
	/sys/kernel/debug /sys/kernel/config 2>/dev/null
mount_fs tmpfs tmpfs /run mode=0755
mount_fs tmpfs tmpfs /tmp mode=1777
mount_fs tmpfs tmpfs /var/tmp mode=1777
mount_fs tmpfs tmpfs /var/log mode=0755
mount_fs devpts devpts /dev/pts gid=5,mode=620,ptmxmode=666
mount_fs tmpfs tmpfs /dev/shm mode=1777
mount_fs cgroup2 cgroup2 /sys/fs/cgroup nsdelegate
mount_fs debugfs debugfs /sys/kernel/debug mode=0700
mount_fs configfs configfs /sys/kernel/config rw 2>/dev/null
mkdir -p "$out"
mount_fs 9p rmbdout "$out" trans=virtio,version=9p2000.L,msize=262144
[[ -L /dev/fd ]] || ln -s /proc/self/fd /dev/fd
echo rmbd-vm > /proc/sys/kernel/hostname
ip link set lo up

finish() {
	sync
	cp /tmp/kmsg.log "$out/dmesg.log" 2>/dev/null
	sync
	umount "$out" 2>/dev/null
	echo "guest: powering off"
	reboot -f
	sleep 10
}

if [[ ! -f $out/job ]]; then
	echo "guest: no job in the results share"
	finish
fi
# shellcheck source=/dev/null
source "$out/job"

# The work tree comes as its own share, mounted at its host path: that path
# may lie under one of the tmpfs mounts above (a clone in /tmp).
mkdir -p "$REPO" 2>/dev/null
if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose rmbdrepo "$REPO"; then
	echo "guest: cannot mount the work tree at $REPO"
	finish
fi

# Everything the guest prints also lands on the serial console.
ktap() {
	printf '%s\n' "$*" >> "$out/ktap"
	printf '%s\n' "$*" > /dev/console
}
# Each line of stdin as a KTAP diagnostic.
ktap_diag() {
	local l
	while IFS= read -r l; do ktap "# $l"; done
}

# The kernel log, captured from the start, so each test can see exactly
# the lines it produced.
dmesg -w > /tmp/kmsg.log 2>&1 &

kmsg_lines() { wc -l < /tmp/kmsg.log; }

# The log is read in windows, one per test, each from where the last one
# ended (the first from the boot's first line) to a second after the
# test's cleanup, so that every line falls in exactly one: close_window
# closes the current window, copies its lines to FILE and sets errs to
# the kernel errors among them, after the tasks left stuck (stuck_tasks
# below).  Not in a subshell: it keeps state.
win_start=0
close_window() {	# FILE
	local end
	stuck_tasks > /tmp/stuck.log
	sleep 1
	end=$(kmsg_lines)
	sed -n "$(( win_start + 1 )),${end}p" /tmp/kmsg.log > "$1"
	win_start=$end
	errs=$(cat /tmp/stuck.log; kmsg_reports < "$1")
}

# Tasks in uninterruptible sleep, "PID COMM" a line, bash builtins only.
d_tasks() {
	local p st
	for p in /proc/[0-9]*; do
		{ read -r st < "$p/stat"; } 2> /dev/null || continue
		# "PID (COMM) STATE ...": COMM may hold spaces and parentheses.
		[[ ${st##*) } == D\ * ]] || continue
		st=${st#*(}
		printf '%s %s\n' "${p#/proc/}" "${st%)*}"
	done
}

# A task that a test left in D state is a hang the hung-task detector
# would report only 30 to 60 s later, in another test's window or after
# the last one.  Wait up to 30 s for every task to leave D state and
# print, as kernel errors of this window, those that stayed all along
# (once each: one stuck for good is not waited for again).
declare -A stuck_seen=()
stuck_tasks() {
	local i pid comm cur left=() keep
	while read -r pid comm; do
		[[ -n $pid && -z ${stuck_seen[$pid]:-} ]] && left+=("$pid $comm")
	done <<< "$(d_tasks)"
	for (( i = 0; i < 30 && ${#left[@]}; i++ )); do
		sleep 1
		cur=" $(d_tasks | while read -r pid _; do printf '%s ' "$pid"; done)"
		keep=()
		for pid in "${left[@]}"; do
			[[ $cur == *" ${pid%% *} "* ]] && keep+=("$pid")
		done
		left=("${keep[@]}")
	done
	for pid in "${left[@]}"; do
		stuck_seen[${pid%% *}]=1
		echo "task ${pid%% *} (${pid#* }) blocked in D state for more than 30 s:"
		sed 's/^/  /' "/proc/${pid%% *}/stack" 2> /dev/null
	done
}

# Soft-RoCE over a dummy netdev, d0 (10.200.0.1); MTU 4500 gives a
# 4096-byte RDMA MTU.  When the job runs tests over soft-iWARP too
# (TEST@siw), siw0 on a second one, d1 (10.202.0.1: 04-bad-input takes
# 10.201.0.9 for an address nobody routes to).  A job with
# LOCAL_RXE=0 (two-vm.sh's, whose tests bring up their own on the NIC)
# loads the modules only.
setup_rxe() {
	modprobe rdma_rxe && modprobe rdma_cm || return 1
	if [[ " ${TESTS[*]} " == *@siw\ * ]]; then
		# Built in, or our module for Debian's kernel (build-siw.sh)
		modprobe siw 2> /dev/null ||
			{ modprobe libcrc32c && insmod "$RMBD_SIW_KO"; } ||
			return 1
	fi
	[[ ${LOCAL_RXE:-1} == 0 ]] && return 0
	setup_netdev d0 10.200.0.1 && rdma link add rxe0 type rxe netdev d0 ||
		return 1
	if [[ " ${TESTS[*]} " == *@siw\ * ]]; then
		setup_netdev d1 10.202.0.1 &&
			rdma link add siw0 type siw netdev d1 || return 1
	fi
}

setup_netdev() {	# NAME ADDRESS
	ip link add "$1" type dummy &&
	ip link set "$1" mtu 4500 &&
	ip addr add "$2/24" dev "$1" &&
	ip link set "$1" up
}

sysctl -q -w kernel.hung_task_timeout_secs=30 kernel.hung_task_panic=0 \
	kernel.hung_task_warnings=-1 kernel.panic_on_oops=0

export RMBD_REPO=$REPO
# shellcheck source=tests/lib.sh
source "$REPO/selftests/vm/tests/lib.sh"

# A kernel with kmemleak (the debug kernel) scans after the last test.
# Boot leaves no unreferenced object behind: no scan and "clear" now,
# which would cost a debug VM 20 s.
kmemleak=/sys/kernel/debug/kmemleak
# Its thread would also scan every 10 minutes, each scan 20 s of a CPU
# taken from the tests: off.  The scan at the end finds what it would.
if [[ -w $kmemleak ]]; then
	echo scan=off > "$kmemleak" || true
fi

# Setup is reported as diagnostics; a failure there, or a kernel error
# since the boot, marks the "vm" result.
{
	echo "guest: kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print $2 " kB"}' /proc/meminfo)"
	setup_ok=1
	setup_rxe || { echo "vm-error: soft-RoCE setup failed"; setup_ok=0; }
	rdma link show
	rmbd_load_modules || { echo "vm-error: the rmbd modules do not load"; setup_ok=0; }
	(( setup_ok ))
} > "$out/setup.log" 2>&1
ktap_diag < "$out/setup.log"
close_window "$out/setup.dmesg"
if [[ -n $errs ]]; then
	ktap "# vm-error: kernel errors during the boot or setup"
	ktap_diag <<< "$errs"
fi

test_cg=/sys/fs/cgroup/rmbd-test

mem_avail() { awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo; }
mem_boot=$(mem_avail)
mem_low=$mem_boot
mem_low_after=setup
mem_note() {	# NAME
	local m
	m=$(mem_avail)
	if (( m < mem_low )); then
		mem_low=$m
		mem_low_after=$1
	fi
	echo "MemAvailable after cleanup: $m MiB (after the setup: $mem_boot MiB)"
}

# Results are numbered from FIRST on: run-vm.sh may boot several VMs.
i=$(( ${FIRST:-1} - 1 ))
j=0
for t in "${TESTS[@]}"; do
	tmo=${TIMEOUTS[$j]}
	j=$(( j + 1 ))
	i=$(( i + 1 ))
	# TEST@siw: the test over soft-iWARP, on d1
	transport=rxe
	if [[ $t == *@siw ]]; then
		t=${t%@siw}
		transport=siw
	fi
	name=$(basename "$t" .sh)
	[[ $transport == rxe ]] || name+=@$transport
	log=$out/$name.log
	echo "$i $name $tmo" > "$out/current"
	t0=$(date +%s)
	prefix="# "
	(( RAW )) && prefix=
	# The test runs in a cgroup of its own, killed whole once the test
	# ended: a background process it left behind would otherwise run on
	# and hold the pipe open, and the runner would wait for it forever.
	mkdir -p "$test_cg"
	(
		echo "$BASHPID" > "$test_cg/cgroup.procs"
		cd "$(dirname "$t")" || exit 1
		trc=0
		if [[ $transport == siw ]]; then
			export RMBD_TRANSPORT=siw RMBD_NETDEV=d1 RMBD_ADDR=10.202.0.1
		fi
		# What its host-setup script made (run-vm.sh), if it has one.
		export RMBD_SETUP_DIR=$out/setup/$name
		timeout -k 10 "$tmo" bash "$t" || trc=$?
		echo "$BASHPID" > /sys/fs/cgroup/cgroup.procs
		echo 1 > "$test_cg/cgroup.kill"
		exit "$trc"
	) 2>&1 < /dev/null |
		tee "$log" | while IFS= read -r l; do ktap "$prefix$l"; done
	rc=${PIPESTATUS[0]}
	dt=$(( $(date +%s) - t0 ))

	# Put the machine back in a known state for the next test.
	dirty=
	if ! rmbd_reset > /tmp/reset.log 2>&1; then
		dirty=1
		ktap "# cleanup after $name failed:"
		ktap_diag < /tmp/reset.log
	fi
	cat /tmp/reset.log >> "$log"
	# A test's scratch files in /run (tmpfs, in RAM) go with it: left,
	# they took the memory that later tests export (03-ext4@siw's 1G).
	for d in /run/rmbd-*; do
		[[ $d == "$out" ]] || rm -rf "$d"
	done
	# What a test left in memory shows as a falling MemAvailable: traced
	# per test in its log and summed up after the last one.
	mem_note "$name" >> "$log"

	close_window "$out/$name.dmesg"
	if [[ -n $errs ]]; then
		ktap "# kernel errors during $name:"
		ktap_diag <<< "$errs"
		# The first report whole: a CI log may be all there is to read.
		first=$(head -n 1 <<< "$errs")
		n=$(grep -anFx -m 1 -- "$first" "$out/$name.dmesg" | cut -d: -f1)
		if [[ -n $n ]]; then
			ktap "# the first report in full ($name.dmesg has the rest):"
			tail -n +$(( n > 3 ? n - 3 : 1 )) "$out/$name.dmesg" | head -n 80 |
				while IFS= read -r l; do ktap "#   $l"; done
		fi
	fi

	if (( rc == 124 || rc == 137 )); then
		ktap "not ok $i $name # TIMEOUT after $tmo s"
	elif [[ -n $errs ]]; then
		ktap "not ok $i $name # kernel errors (rc=$rc, $dt s)"
	elif [[ -n $dirty ]]; then
		ktap "not ok $i $name # cleanup failed (rc=$rc, $dt s)"
	elif (( rc == 0 )); then
		ktap "ok $i $name # $dt s"
	elif (( rc == 4 )); then
		reason=$(grep -a '^SKIP: ' "$log" | tail -n 1 | cut -c7-)
		ktap "ok $i $name # SKIP ${reason:-no reason given}"
	else
		ktap "not ok $i $name # exit code $rc, $dt s"
	fi
done

# After the last test: unload rmbd (its exit paths run here, in a window
# of their own), and on a kernel with kmemleak (the debug kernel) scan
# twice (an object must be seen unreferenced by two scans) and read the
# report: with the modules gone, what only their data pointed to counts.
echo "0 teardown 600" > "$out/current"
for m in rmbd_client rmbd_target; do
	[[ -d /sys/module/$m ]] || continue
	if ! rmmod "$m" > /tmp/rmmod.err 2>&1; then
		ktap "# vm-error: rmmod $m after the last test failed: $(tr '\n' ' ' < /tmp/rmmod.err)"
	fi
done
if [[ -w $kmemleak ]]; then
	if ! { echo scan > "$kmemleak" && sleep 5 && echo scan > "$kmemleak"; } 2> /tmp/kmemleak.err; then
		ktap "# vm-error: kmemleak scan failed: $(tr '\n' ' ' < /tmp/kmemleak.err)"
	fi
	cat "$kmemleak" > "$out/kmemleak.log" 2>&1
	if grep -q '^unreferenced object' "$out/kmemleak.log"; then
		ktap "# vm-error: kmemleak: $(grep -c '^unreferenced object' "$out/kmemleak.log") unreferenced objects after the last test:"
		head -n 400 "$out/kmemleak.log" | ktap_diag
	else
		ktap "# kmemleak: no leaks after the last test"
	fi
fi
ktap "# MemAvailable: $mem_boot MiB after the setup, lowest $mem_low MiB after $mem_low_after, $(mem_avail) MiB with rmbd unloaded"
close_window "$out/teardown.dmesg"
if [[ -n $errs ]]; then
	ktap "# vm-error: kernel errors after the last test (module unload, kmemleak):"
	ktap_diag <<< "$errs"
fi

echo done > "$out/current"
touch "$out/done"
finish
exit
}
