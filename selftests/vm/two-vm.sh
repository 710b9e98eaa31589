#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The target and the client in two VMs, joined by a QEMU socket netdev
# (UDP on the host's loopback): soft-RoCE on a virtio-net NIC in each.
# The client connects and fio verifies; the host kills the target VM's
# qemu (kill -9) under fio, and the client must notice within a few
# seconds (its RDMA transport gives up) and fail the I/O with EIO within
# the loss timeout plus a few seconds after that; the device must say
# failed, with no task hung and no kernel error; then a second target VM
# comes up with a fresh export, a new connect works and fio verifies on
# it, and the failed device disconnects.  Then a mirror over that target
# and a third target VM on a second link (the client has a NIC on each):
# the host kills the third VM's qemu under fio verify, and the mirror
# goes on with no I/O error; a fourth VM, the third one re-created on
# the same link with the same address, comes up with a fresh export,
# which the lost leg must refuse to take as its own; the leg is replaced
# onto it and rebuilt under fio, and each copy read alone holds the same
# data.  Prints KTAP on stdout: one result per client step (see
# two-vm/client.sh), then one for the VMs themselves.
#
# usage: two-vm.sh
#
# The VMs boot like run-vm.sh's (the Debian kernel, the host's / over 9p,
# guest.sh as init), one vCPU each; guest.sh runs two-vm/target.sh or
# two-vm/client.sh as its only test.  The host and the guests talk through
# files in each VM's results share (see two-vm/client.sh).
#
# Environment:
#   RMBD_KVER         kernel release to boot (as run-vm.sh)
#   RMBD_DEBUG_KERNEL=1  boot the client on the debug kernel
#                     (selftests/debug-kernel) instead, with more memory
#                     and time
#   RMBD_TWOVM_TARGET_DEBUG=1  with it, the targets too
#   RMBD_VM_KVM=1     use KVM instead of TCG
#   RMBD_TWOVM_MEM    memory of each VM (default 512M; 768M on the debug
#                     kernel)
#   RMBD_TWOVM_MTU    MTU of the virtio-net NICs (default 4500)
#   RMBD_TWOVM_LOSS   the client's loss_timeout (default 10)
#   RMBD_TWOVM_DETECT seconds from the kill to the client noticing (default
#                     8, 16 on the debug kernel: the transport's retries
#                     take about 2 s)
#   RMBD_RESULTS      results directory (default selftests/results/two-vm,
#                     or two-vm-debug): client/ and target1/ to target4/,
#                     one per VM (target1 and target2 on the first link,
#                     target3 and target4 on the second)
#   RMBD_CACHE        cache directory (default ${XDG_CACHE_HOME:-~/.cache}/rmbd)
#
# Exit status: 0 when every step passed, 1 otherwise.

set -eu

# Parsed whole before it runs, so editing this file cannot derail a run.
{

vm_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$vm_dir/../.." && pwd)
# shellcheck source=vm-lib.sh
source "$vm_dir/vm-lib.sh"

case "${1:-}" in
'') ;;
-h|--help) sed -n '4,/^# Exit status/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "two-vm: unknown argument $1" >&2; exit 2 ;;
esac

kver=$(vm_kernel_release two-vm) || exit 1
deb_kver=$kver

cache=${RMBD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rmbd}
mkdir -p "$cache"

# The debug kernel is 3 to 10 times slower and boots in about 2 minutes.
# The targets boot the Debian kernel even then, unless
# RMBD_TWOVM_TARGET_DEBUG=1: the client is what sees its target vanish,
# and the single-VM debug lane runs the target's code under the debug
# kernel already; a debug target2 costs its two minutes of boot.
debug=${RMBD_DEBUG_KERNEL:-0}
target_debug=${RMBD_TWOVM_TARGET_DEBUG:-0}
scale=1
mem=${RMBD_TWOVM_MEM:-512M}
deb_mem=${RMBD_TWOVM_MEM:-512M}
detect=${RMBD_TWOVM_DETECT:-8}
results=${RMBD_RESULTS:-$repo/selftests/results/two-vm}
if [[ $debug == 1 ]]; then
	vm_debug_kernel "$cache" "$repo" || exit 1
	kver=$DEBUG_KERNEL_RELEASE
	scale=3
	mem=${RMBD_TWOVM_MEM:-768M}
	detect=${RMBD_TWOVM_DETECT:-16}
	results=${RMBD_RESULTS:-$repo/selftests/results/two-vm-debug}
fi
mkdir -p "$results"
results=$(cd "$results" && pwd)

mtu=${RMBD_TWOVM_MTU:-4500}
loss=${RMBD_TWOVM_LOSS:-10}
export_name=twovm
export_size=64M
# Two links, each a UDP pair on the host's loopback: the client's first
# NIC and target1 then target2 (the same machine, rebooted: the same MAC
# and address), its second NIC and target3 then target4.
target_ip=10.201.0.1
client_ip=10.201.0.2
target_mac=52:54:00:52:4d:01
client_mac=52:54:00:52:4d:02
target_ip2=10.202.0.1
client_ip2=10.202.0.2
target_mac2=52:54:00:52:4d:03
client_mac2=52:54:00:52:4d:04
client_timeout=$(( 900 * scale ))	# client.sh, in the guest
target_timeout=$(( 1500 * scale ))	# target.sh: it outlives the client
boot_budget=$(( 180 * scale ))
steps=(connect-verify kill-target-eio new-target-verify disconnect-failed
	mirror-kill-verify mirror-replace-verify)

vm_lock "$cache" two-vm

initrd=
if [[ $debug != 1 || $target_debug != 1 ]]; then
	initrd=$(vm_initramfs "$cache" "$deb_kver" "$vm_dir")
fi

vm_results_reset "$results" two-vm || exit 2
vm_accel accel

# Free UDP ports on the loopback, one per end of each link.
udp_ports=()
vm_udp_ports udp_ports 4
client_port=${udp_ports[0]} target_port=${udp_ports[1]}
client_port2=${udp_ports[2]} target_port2=${udp_ports[3]}

# ---- VMs ---------------------------------------------------------------

declare -A qpid=()	# VM name -> pid of its `timeout qemu`

# Boot VM NAME, running SCRIPT as guest.sh's only test, in the background,
# with a NIC on link 1 (IP, MAC, a UDP socket from PORT to PEER-PORT) whose
# target has the address TARGET.  The client has a second NIC, on link 2.
boot_vm() {	# NAME SCRIPT TIMEOUT IP MAC PORT PEER-PORT TARGET
	local name=$1 script=$2 tmo=$3 ip=$4 mac=$5 port=$6 peer=$7 addr=$8
	local out=$results/$name vdebug=$debug vmem=$mem
	if [[ $name == target* && $target_debug != 1 ]]; then
		vdebug=0
		vmem=$deb_mem
	fi
	mkdir -p "$out"
	{
		printf 'REPO=%q\n' "$repo"
		printf 'RAW=0\n'
		printf 'FIRST=1\n'
		printf 'TESTS=(%q)\n' "$script"
		printf 'TIMEOUTS=(%q)\n' "$tmo"
		printf 'LOCAL_RXE=0\n'
		# shellcheck disable=SC2016 # guest.sh's $out, where it mounts the share
		printf 'export RMBD_TWOVM_OUT=$out\n'
		printf 'export RMBD_ADDR=%q RMBD_TWOVM_IP=%q RMBD_TWOVM_MAC=%q\n' \
			"$addr" "$ip" "$mac"
		if [[ $name == client ]]; then
			printf 'export RMBD_TWOVM_ADDR2=%q RMBD_TWOVM_IP2=%q RMBD_TWOVM_MAC2=%q\n' \
				"$target_ip2" "$client_ip2" "$client_mac2"
		fi
		printf 'export RMBD_TWOVM_MTU=%q RMBD_TWOVM_LOSS=%q RMBD_TWOVM_DETECT=%q\n' \
			"$mtu" "$loss" "$detect"
		printf 'export RMBD_TWOVM_EXPORT=%q RMBD_TWOVM_SIZE=%q\n' \
			"$export_name" "$export_size"
		if [[ $vdebug == 1 ]]; then
			vm_debug_job
		fi
	} > "$out/job"

	local qemu=(
		qemu-system-x86_64 "${accel[@]}" -m "$vmem" -smp 1
		-nographic -no-reboot -monitor none
		-serial "file:$out/console.log" -pidfile "$out/qemu.pid"
		-kernel "/boot/vmlinuz-$deb_kver" -initrd "$initrd"
		-append "console=ttyS0 panic=-1 mitigations=off rmbd.guest=$vm_dir/guest.sh"
		-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=root,mount_tag=rootfs
		-fsdev "local,id=repo,path=$repo,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=repo,mount_tag=rmbdrepo
		-fsdev "local,id=out,path=$out,security_model=none,multidevs=remap"
		-device virtio-9p-pci,fsdev=out,mount_tag=rmbdout
		-netdev "socket,id=n0,udp=127.0.0.1:$peer,localaddr=127.0.0.1:$port"
		-device "virtio-net-pci,netdev=n0,mac=$mac"
	)
	if [[ $name == client ]]; then
		qemu+=(-netdev "socket,id=n1,udp=127.0.0.1:$target_port2,localaddr=127.0.0.1:$client_port2"
		       -device "virtio-net-pci,netdev=n1,mac=$client_mac2")
	fi
	if [[ $vdebug == 1 ]]; then
		vm_debug_qemu qemu "$repo"
	fi
	timeout -k 5 $(( boot_budget + tmo + 60 )) "${qemu[@]}" < /dev/null > "$out/qemu.log" 2>&1 &
	qpid[$name]=$!
	echo "# $name: booting ($ip, udp $port <-> $peer, $vmem, 1 vCPU, kernel $( ((vdebug)) && echo "$kver" || echo "$deb_kver"))"
}

declare -A qrc=()	# VM name -> exit status of its `timeout qemu`

# kill -9 VM NAME's qemu itself (not its timeout), as a power cut would.
kill9_vm() {	# NAME
	local pid
	pid=$(cat "$results/$1/qemu.pid" 2> /dev/null) || return 1
	grep -qa "$results/$1/qemu.pid" "/proc/$pid/cmdline" 2> /dev/null || return 1
	kill -9 "$pid"
}

# Ask VM NAME to end (its guest script waits for "stop"), else end it.
stop_vm() {	# NAME WAIT
	local i
	vm_running "$1" || { vm_reap "$1"; return 0; }
	: > "$results/$1/stop"
	for (( i = 0; i < $2 * 5; i++ )); do
		vm_running "$1" || break
		sleep 0.2
	done
	if vm_running "$1"; then
		echo "# $1: still running $2 s after stop, killing it"
		kill "${qpid[$1]}" 2> /dev/null || true
		why+="${why:+; }$1 did not stop"
	fi
	vm_reap "$1"
}

trap vm_kill_all EXIT

# Host to guest: a file in NAME's share, written whole.
say() {	# NAME FILE CONTENT
	printf '%s\n' "$3" > "$results/$1/$2.tmp"
	mv "$results/$1/$2.tmp" "$results/$1/$2"
}

# Pass on target NAME's "ready" to the client (as the phase's file) and
# go to phase NEXT; fails when the target stopped before it was ready.
forward_ready() {	# NAME NEXT
	if [[ -f $results/$1/ready ]]; then
		say client "$phase" "$(cat "$results/$1/ready")"
		phase=$2
	elif ! vm_running "$1"; then
		why+="${why:+; }$1 stopped before it was ready"
		return 1
	fi
}

# ---- output ------------------------------------------------------------

# The guests' KTAP as diagnostics, prefixed with the VM's name.
declare -A printed=()
flush_vm() {	# NAME
	local f=$results/$1/ktap lines
	[[ -f $f ]] || return 0
	lines=$(wc -l < "$f")
	if (( lines > ${printed[$1]:-0} )); then
		sed -n "$(( ${printed[$1]:-0} + 1 )),${lines}p" "$f" | sed "s/^\(# \)\{0,1\}/# $1: /"
		printed[$1]=$lines
	fi
}

# The client's step results, in order, as they come.
next_step=0
flush_steps() {
	local s line
	while (( next_step < ${#steps[@]} )); do
		s=${steps[next_step]}
		line=$(grep -aE "^(not )?ok $s( |$)" "$results/client/steps" 2> /dev/null | head -n 1)
		[[ -n $line ]] || return 0
		next_step=$(( next_step + 1 ))
		case "$line" in
		"not ok "*) echo "not ok $next_step ${line#not ok }"; failed=1 ;;
		*) echo "ok $next_step ${line#ok }" ;;
		esac
	done
}

flush() {
	local n
	for n in target1 client target2 target3 target4; do
		flush_vm "$n"
	done
	flush_steps
}

# ---- run ---------------------------------------------------------------

echo "KTAP version 1"
echo "1..$(( ${#steps[@]} + 1 ))"
echo "# kernel $kver, MTU $mtu, loss_timeout $loss, results in $results"

start=$(date +%s)
deadline=$(( start + boot_budget + client_timeout + 120 ))
failed=0
why=
phase=target-ready.1
killed_at=
eio_host=

boot_vm client "$vm_dir/two-vm/client.sh" "$client_timeout" "$client_ip" \
	"$client_mac" "$client_port" "$target_port" "$target_ip"
boot_vm target1 "$vm_dir/two-vm/target.sh" "$target_timeout" "$target_ip" \
	"$target_mac" "$target_port" "$client_port" "$target_ip"

# kill -9 target VM NAME (the client asked for it), tell the client when.
kill_target() {	# NAME
	if ! vm_running "$1"; then
		why+="${why:+; }$1 stopped before it was killed"
		return 1
	fi
	kill9_vm "$1" || { why+="${why:+; }cannot find $1's qemu"; return 1; }
	killed_at=$(date +%s.%N)
	vm_reap "$1"
	echo "# host: kill -9 of $1's qemu at $(date -d "@$killed_at" +%T.%N | cut -c1-12)"
	say client "$1-killed" "$(date -d "@$killed_at" +%T.%N | cut -c1-12)"
}

while :; do
	sleep 0.2
	flush
	if ! vm_running client; then
		break
	fi
	if (( $(date +%s) > deadline )); then
		why+="${why:+; }timed out after $(( $(date +%s) - start )) s"
		break
	fi
	case "$phase" in
	target-ready.1)
		forward_ready target1 kill-target || break
		;;
	kill-target)
		[[ -f $results/client/kill-target ]] || continue
		kill_target target1 || break
		phase=need-target
		;;
	need-target)
		if [[ -z $eio_host && -f $results/client/client-eio ]]; then
			eio_host=$(awk -v a="$killed_at" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
			echo "# host: the client reported EIO $eio_host s after the kill (it measured $(cat "$results/client/client-eio") s)"
		fi
		[[ -f $results/client/need-target ]] || continue
		boot_vm target2 "$vm_dir/two-vm/target.sh" "$target_timeout" "$target_ip" \
			"$target_mac" "$target_port" "$client_port" "$target_ip"
		phase=target-ready.2
		;;
	target-ready.2)
		forward_ready target2 need-target3 || break
		;;
	need-target3)
		[[ -f $results/client/need-target3 ]] || continue
		boot_vm target3 "$vm_dir/two-vm/target.sh" "$target_timeout" "$target_ip2" \
			"$target_mac2" "$target_port2" "$client_port2" "$target_ip2"
		phase=target-ready.3
		;;
	target-ready.3)
		forward_ready target3 kill-target3 || break
		;;
	kill-target3)
		[[ -f $results/client/kill-target3 ]] || continue
		kill_target target3 || break
		phase=need-target4
		;;
	need-target4)
		[[ -f $results/client/need-target4 ]] || continue
		# target3 re-created: the same machine on the same link
		boot_vm target4 "$vm_dir/two-vm/target.sh" "$target_timeout" "$target_ip2" \
			"$target_mac2" "$target_port2" "$client_port2" "$target_ip2"
		phase=target-ready.4
		;;
	target-ready.4)
		forward_ready target4 client-done || break
		;;
	esac
done

# The client is done (or something broke): let it and the targets end.
for (( i = 0; i < 150 * scale; i++ )); do
	vm_running client || break
	sleep 0.2
done
if vm_running client; then
	kill "${qpid[client]}" 2> /dev/null || true
fi
vm_reap client
if [[ $phase == kill-target || $phase == target-ready.1 ]]; then
	stop_vm target1 $(( 30 * scale ))
fi
if [[ $phase == kill-target3 || $phase == target-ready.3 ]]; then
	stop_vm target3 $(( 30 * scale ))
fi
stop_vm target2 $(( 60 * scale ))
stop_vm target4 $(( 60 * scale ))
flush

# ---- account -----------------------------------------------------------

# Steps the client did not report.
while (( next_step < ${#steps[@]} )); do
	next_step=$(( next_step + 1 ))
	echo "not ok $next_step ${steps[next_step - 1]} # not run"
	failed=1
done

# The VMs: the client, the second and the fourth target ran their script
# to the end, passed and stopped on their own; the first and the third
# target ran until they were killed; no kernel error in any of them.
for n in client target2 target4; do
	[[ -d $results/$n ]] || continue
	if [[ ${qrc[$n]:-x} != 0 ]]; then
		why+="${why:+; }$n: qemu exited with status ${qrc[$n]:-?}"
	elif [[ ! -f $results/$n/done ]]; then
		why+="${why:+; }$n: stopped before its script finished (crash or panic)"
	fi
	if ! grep -qa '^ok 1 ' "$results/$n/ktap" 2> /dev/null; then
		why+="${why:+; }$n: $(grep -a '^not ok 1 ' "$results/$n/ktap" 2> /dev/null || echo "no result")"
	fi
done
for n in target1 client target2 target3 target4; do
	[[ -d $results/$n ]] || continue
	if grep -qa '^# vm-error' "$results/$n/ktap" 2> /dev/null; then
		why+="${why:+; }$n: errors outside its script"
	fi
	errs=$(vm_console_reports "$results/$n/console.log")
	if [[ -n $errs ]]; then
		echo "# kernel errors on $n's console:"
		sed 's/^/# /' <<< "$errs"
		why+="${why:+; }$n: kernel errors"
	fi
done

elapsed=$(( $(date +%s) - start ))
if [[ -z $why ]]; then
	echo "ok $(( ${#steps[@]} + 1 )) vms # ${elapsed} s"
else
	for n in target1 client target2 target3 target4; do
		[[ -f $results/$n/console.log ]] || continue
		echo "# last lines of $n's console ($results/$n/console.log):"
		tail -n 20 "$results/$n/console.log" | sed 's/^/# /'
	done
	echo "not ok $(( ${#steps[@]} + 1 )) vms # ${why}, ${elapsed} s"
	failed=1
fi
echo "# results in $results"
exit "$failed"
exit
}
