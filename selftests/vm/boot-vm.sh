#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmbd as an administrator installs and configures it, started by
# systemd at boot with nothing typed: two VMs boot the host's systemd as
# PID 1 from the host's / under an overlay (initramfs-init's
# rmbd.overlay=1) whose upper layer holds a stage: make install
# DESTDIR=stage PREFIX=/usr (modules, librmbd, the CLI, the udev rule,
# the systemd units and swap generator) and the machine's configuration.
#   target  rmbd-target.service applies /etc/rmbd/target.conf: a
#           listener, swap0 for client-a, data0 for client-a with a
#           secret.  It stays up for both client boots.
#   client  rmbd-dev@swap and rmbd-dev@data (enabled) connect
#           /etc/rmbd/dev.d/{swap,data}.conf as host client-a.  Its first
#           boot formats the devices (mkswap, mkfs.ext4 with fixed UUIDs)
#           and writes a file; its second boots with an fstab that swaps
#           on the one and mounts the other at /srv/data by UUID, and
#           finds both up, with the file.  A test drop-in for
#           rmbd-dev@.service records, at shutdown, that the swap was off
#           and /srv/data unmounted before the device's unit disconnected
#           it, and that the device was gone after.
# Results as KTAP on stdout, one per step:
#   target-boot     rmbd-target active, the exports and their hosts as
#                   target.conf says, config check exits 0, config apply
#                   again changes nothing
#   client-format   the client's first boot: both units active, the
#                   devices formatted, the file written; it powers off and
#                   each unit's stop disconnects its device
#   client-boot     the second boot: both units active, swap on the
#                   device by the UUID's link, /srv/data ext4 on the other
#                   with the file intact, config check of each dev.d file
#                   exits 0, config apply again changes nothing, the udev
#                   links are there
#   client-shutdown-order  its shutdown: swap off and /srv/data unmounted
#                   before each unit's stop ran, the device gone after it
#   target-shutdown the target powers off: rmbd-target's stop deletes the
#                   exports
#   vms             in each boot: no failed unit, no ordering cycle, job
#                   timeout or failed dependency, no stop job that hung,
#                   no kernel report on the console, a clean power off
#
# usage: boot-vm.sh
#
# Environment:
#   RMBD_KVER         kernel release to boot (as run-vm.sh)
#   RMBD_VM_KVM=1     use KVM instead of TCG
#   RMBD_BOOTVM_MEM   memory of each VM (default 512M)
#   RMBD_RESULTS      results directory (default selftests/results/boot-vm):
#                     stage/ (what each VM's upper layer starts with),
#                     target/, client1/ and client2/ (each VM's results
#                     share: console.log, journal, checks, stop records)
#   RMBD_CACHE        cache directory (default ${XDG_CACHE_HOME:-~/.cache}/rmbd)
#
# Exit status: 0 when every step passed, 1 otherwise.

set -eu

# Parsed whole before it runs, so editing this file cannot derail a run.
{

vm_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$vm_dir/../.." && pwd)
files=$vm_dir/boot-vm
# shellcheck source=vm-lib.sh
source "$vm_dir/vm-lib.sh"

case "${1:-}" in
'') ;;
-h|--help) sed -n '4,/^# Exit status/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "boot-vm: unknown argument $1" >&2; exit 2 ;;
esac

kver=$(vm_kernel_release boot-vm) || exit 1
cache=${RMBD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rmbd}
mkdir -p "$cache"
mem=${RMBD_BOOTVM_MEM:-512M}
results=${RMBD_RESULTS:-$repo/selftests/results/boot-vm}
mkdir -p "$results"
results=$(cd "$results" && pwd)

target_ip=10.203.0.1
client_ip=10.203.0.2
target_mac=52:54:00:52:4d:11
client_mac=52:54:00:52:4d:12
# The UUIDs the first client boot formats with and the fstab names.
swap_uuid=6c1f0a52-8d3e-4b7a-9e21-5a0d7c3b2f11
data_uuid=b24e9d07-1c6a-4f85-a3d2-7e9b0c5f4a22
# What each boot may take, the boot itself included (about 40 s).
client_timeout=240
target_timeout=600
steps=(target-boot client-format client-boot client-shutdown-order
	target-shutdown vms)

vm_lock "$cache" boot-vm

initrd=$(vm_initramfs "$cache" "$kver" "$vm_dir")

vm_results_reset "$results" boot-vm || exit 2
vm_accel accel

# ---- the stages ----------------------------------------------------------

stages=$results/stage
rmbd_cli=$repo/tools/rmbd

# make install as a packager runs it, then what the package manager does
# on the target system: the files that it would install under /lib, /bin
# and /sbin go under /usr on a host with merged /usr (its /lib is a
# symlink, which a directory in the upper layer would hide), and depmod
# indexes the modules.  depmod runs here, on a module tree of symlinks
# to the host's modules and the stage's: in the guest it would walk the
# whole tree over 9p under TCG, for minutes.
make_base_stage() {	# DIR
	local base=$1 d t m
	make -s -C "$repo" install DESTDIR="$base" PREFIX=/usr KVER="$kver" \
		> "$stages/install.log" 2>&1 || return 1
	for d in bin sbin lib lib64; do
		[[ -L /$d && -d $base/$d && ! -L $base/$d ]] || continue
		t=$(readlink "/$d")
		mkdir -p "$base/${t#/}"
		cp -a "$base/$d/." "$base/${t#/}/"
		rm -rf "${base:?}/$d"
	done
	m=$stages/modules
	mkdir -p "$m/lib/modules"
	cp -rs "/lib/modules/$kver" "$m/lib/modules/"
	rm -f "$m/lib/modules/$kver/build" "$m/lib/modules/$kver/source"
	cp -rs "$base/usr/lib/modules/$kver/." "$m/lib/modules/$kver/"
	depmod -b "$m" "$kver" || return 1
	find "$m/lib/modules/$kver" -maxdepth 1 -type f -name 'modules.*' \
		-exec cp {} "$base/usr/lib/modules/$kver/" \;
	rm -rf "$m"
	grep -q '^updates/rmbd/.*rmbd-client.ko:' "$base/usr/lib/modules/$kver/modules.dep"
}

# A VM's stage: the base, the test's files, the machine's identity and
# network, and its rmbd configuration (the caller adds that).
make_vm_stage() {	# NAME HOSTNAME IP MAC
	local s=$stages/$1 u
	cp -a "$stages/base" "$s"
	chmod 0755 "$s"
	mkdir -p "$s/etc/systemd/system" "$s/etc/systemd/system-generators" \
		"$s/etc/systemd/network" "$s/etc/systemd/journald.conf.d" \
		"$s/etc/rmbd-test" "$s/etc/rmbd" "$s/usr/local/lib/rmbd-test"
	echo "$2" > "$s/etc/hostname"
	# A machine of its own (the host's machine-id would be shared).
	echo "$2" | md5sum | cut -c1-32 > "$s/etc/machine-id"
	# The host's fstab is no VM's; /tmp a tmpfs, or tmpfiles would empty
	# the host's /tmp through the overlay, for a minute, at each boot.
	printf '%s\n' "# rmbd boot-vm test: $2" \
		'tmpfs /tmp tmpfs mode=1777,nosuid,nodev 0 0' > "$s/etc/fstab"
	# The journal in /run: the upper layer is memory anyway.
	printf '[Journal]\nStorage=volatile\n' > "$s/etc/systemd/journald.conf.d/rmbd-test.conf"
	while read -r u; do
		[[ -z $u || $u == \#* ]] && continue
		if [[ $u == *-generator ]]; then
			ln -s /dev/null "$s/etc/systemd/system-generators/$u"
		else
			ln -s /dev/null "$s/etc/systemd/system/$u"
		fi
	done < "$files/masked"
	cp "$files"/*.sh "$s/usr/local/lib/rmbd-test/"
	cp "$files"/rmbd-test-*.service "$s/etc/systemd/system/"
	sed "s/@MAC@/$4/" "$files/10-rmbd-test.link" > "$s/etc/systemd/network/10-rmbd-test.link"
	# Read by the guest scripts (bash) and by rmbd-test-net.service
	# (systemd's EnvironmentFile=, which takes the quotes too).
	{
		printf 'ADDR=%q\n' "$3"
		printf 'TARGET_ADDR=%q\n' "$target_ip"
		printf 'SWAP_UUID=%q\n' "$swap_uuid"
		printf 'DATA_UUID=%q\n' "$data_uuid"
		printf 'SWAP_UNIT=%q\n' "$swap_unit"
	} > "$s/etc/rmbd-test/env"
	install -m 0600 "$stages/client-a.key" "$s/etc/rmbd/client-a.key"
	enable "$1" rmbd-test-net.service
}

# systemctl enable, as an administrator would, offline in a stage.
enable() {	# STAGE UNIT...
	local s=$stages/$1
	shift
	systemctl --root="$s" --quiet enable "$@"
}

# A unit's ExecStop= lines as the stage installed it.
exec_stop() {	# STAGE UNIT
	grep '^ExecStop=' "$stages/$1/usr/lib/systemd/system/$2"
}

# The drop-in that records a unit's stop (record-stop.sh): for
# rmbd-dev@.service, first the state before the unit's own ExecStop=,
# which then runs as installed; after it, for both units, the outcome.
# The results share must stay mounted until then.
record_dropin() {	# STAGE UNIT NAME
	local d=$stages/$1/etc/systemd/system/$2.d
	mkdir -p "$d"
	{
		echo "# The rmbd boot-vm test: record the stop (record-stop.sh)."
		echo "[Unit]"
		echo "RequiresMountsFor=/run/rmbd-out"
		echo "[Service]"
		if [[ $2 == rmbd-dev@.service ]]; then
			echo "ExecStop="
			echo "ExecStop=-/usr/local/lib/rmbd-test/record-stop.sh pre $3"
			exec_stop "$1" "$2"
		fi
		echo "ExecStopPost=-/usr/local/lib/rmbd-test/record-stop.sh post $3"
	} > "$d/rmbd-test-record.conf"
}

client_stage() {	# NAME
	local s=$stages/$1
	make_vm_stage "$1" client-a "$client_ip" "$client_mac"
	echo client-a > "$s/etc/rmbd/hostid"
	mkdir -p "$s/etc/rmbd/dev.d"
	echo "dev connect addr $target_ip export swap0" > "$s/etc/rmbd/dev.d/swap.conf"
	echo "dev connect addr $target_ip export data0 secret-file /etc/rmbd/client-a.key" \
		> "$s/etc/rmbd/dev.d/data.conf"
	enable "$1" rmbd-dev@swap.service rmbd-dev@data.service
	record_dropin "$1" rmbd-dev@.service %i
}

swap_unit=$(systemd-escape -p --suffix=swap "/dev/disk/by-uuid/$swap_uuid")

make_stages() {
	mkdir -p "$stages"
	make_base_stage "$stages/base" || return 1
	"$rmbd_cli" secret generate "$stages/client-a.key" > /dev/null || return 1

	make_vm_stage target rmbd-target "$target_ip" "$target_mac"
	cat > "$stages/target/etc/rmbd/target.conf" <<-EOF
	listener add $target_ip
	export add swap0 size 128M hosts client-a
	export add data0 size 64M
	export host add data0 client-a secret-file /etc/rmbd/client-a.key
	EOF
	enable target rmbd-target.service rmbd-test-target-check.service \
		rmbd-test-stop.service
	record_dropin target rmbd-target.service target

	client_stage client1
	enable client1 rmbd-test-format.service
}

# The second boot's stage, once the first has written the file: its
# fstab swaps on the one device and mounts the other, as an administrator
# writes it.
make_client2_stage() {
	local s=$stages/client2
	client_stage client2
	cat >> "$s/etc/fstab" <<-EOF
	UUID=$swap_uuid none swap x-systemd.requires=rmbd-dev@swap.service 0 0
	UUID=$data_uuid /srv/data ext4 _netdev,x-systemd.requires=rmbd-dev@data.service 0 0
	EOF
	mkdir -p "$s/srv/data"
	cp "$results/client1/marker.sha256" "$s/etc/rmbd-test/marker.sha256"
	mkdir -p "$s/etc/systemd/system/rmbd-test-check.service.d"
	printf '[Unit]\nAfter=%s\n' "$swap_unit" \
		> "$s/etc/systemd/system/rmbd-test-check.service.d/swap.conf"
	enable client2 rmbd-test-check.service
}

# ---- VMs -----------------------------------------------------------------

declare -A qpid=() qrc=()

# Boot VM NAME (its stage and results share of that name) in the
# background: one vCPU, a virtio NIC with MAC on a UDP socket from PORT
# to PEER-PORT on the host's loopback.  A q35 machine: it has none of the
# i440fx's legacy devices (IDE, floppy) for udev to load drivers for.
# The kernel command line: systemd's status and the kernel's messages on
# the serial console (console.log), panic on nothing but reboot at once.
boot_vm() {	# NAME TIMEOUT MAC PORT PEER-PORT
	local name=$1 tmo=$2 mac=$3 port=$4 peer=$5 out=$results/$1
	mkdir -p "$out"
	# shellcheck disable=SC2054 # commas within qemu's option values
	local qemu=(
		qemu-system-x86_64 "${accel[@]}" -machine q35 -m "$mem" -smp 1
		-nodefaults -nographic -no-reboot -monitor none
		-serial "file:$out/console.log" -pidfile "$out/qemu.pid"
		-kernel "/boot/vmlinuz-$kver" -initrd "$initrd"
		-append "console=ttyS0 panic=-1 mitigations=off rmbd.overlay=1 systemd.show_status=1"
		-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=root,mount_tag=rootfs
		-fsdev "local,id=stage,path=$stages/$name,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=stage,mount_tag=rmbdstage
		-fsdev "local,id=out,path=$out,security_model=none,multidevs=remap"
		-device virtio-9p-pci,fsdev=out,mount_tag=rmbdout
		-netdev "socket,id=n0,udp=127.0.0.1:$peer,localaddr=127.0.0.1:$port"
		-device "virtio-net-pci,netdev=n0,mac=$mac"
	)
	timeout -k 5 "$tmo" "${qemu[@]}" < /dev/null > "$out/qemu.log" 2>&1 &
	qpid[$name]=$!
	echo "# $name: booting ($mem, 1 vCPU, kernel $kver) at $(( $(date +%s) - start )) s"
}

# Wait for VM NAME to end, at most until DEADLINE (date +%s), then its
# exit status in qrc (124: killed by its timeout).
wait_vm() {	# NAME DEADLINE
	while vm_running "$1" && (( $(date +%s) < $2 )); do
		sleep 0.5
	done
	if vm_running "$1"; then
		kill "${qpid[$1]}" 2> /dev/null || true
	fi
	[[ -n ${qpid[$1]:-} ]] || return 0
	vm_reap "$1"
	echo "# $1: ended (status ${qrc[$1]}) at $(( $(date +%s) - start )) s"
}

trap vm_kill_all EXIT

# ---- results -------------------------------------------------------------

num=0
failed=0

# Report step NAME: ok when WHY (the problems found) is empty.
report() {	# NAME WHY DETAIL
	num=$(( num + 1 ))
	if [[ -z $2 ]]; then
		echo "ok $num $1${3:+ # $3}"
	else
		echo "not ok $num $1 # $2"
		failed=1
	fi
}

# The guest's checks of VM NAME as diagnostics; prints the failed ones.
guest_checks() {	# NAME
	local f=$results/$1/checks
	if [[ ! -f $f ]]; then
		echo "$1 wrote no checks"
		return
	fi
	sed "s/^/# $1: /" "$f" >&2
	grep '^not ok' "$f" | sed 's/^not ok - //' | tr '\n' ';' | sed 's/;$//'
	[[ -f $results/$1/done || -f $results/$1/ready ]] || echo "; $1's checks did not finish"
}

# VM NAME's console log without ANSI colours or carriage returns.
console_text() {	# NAME
	sed 's/\x1b\[[0-9;]*[a-zA-Z]//g' "$results/$1/console.log" 2> /dev/null | tr -d '\r'
}

# What is wrong in VM NAME's console log: kernel reports, and systemd's
# ordering cycles, failed units and dependencies, job timeouts ("Timed
# out waiting for device", "Job X/start timed out.", "start operation
# timed out") and stop jobs that took long enough to be shown.
console_problems() {	# NAME
	local log=$results/$1/console.log errs
	[[ -f $log ]] || { echo "no console log"; return; }
	errs=$(vm_console_reports "$log")
	[[ -z $errs ]] || echo "kernel reports: $(head -n 3 <<< "$errs" | tr '\n' ' ')"
	errs=$(console_text "$1" |
		grep -aE 'ordering cycle|FAILED|DEPEND|TIME \]|Timed out|timed out\.|operation timed out|A stop job is running|Dependency failed' |
		sort -u | head -n 5)
	[[ -z $errs ]] || echo "systemd: $(tr '\n' ' ' <<< "$errs")"
}

# Diagnostics, not failures: a start job shown as running (the client's
# unit waiting for a target that is not up yet is one), and rmbd's own
# warnings (a request that timed out and the connection's reset).
console_notes() {	# NAME
	console_text "$1" | grep -aoE 'A start job is running for [^(]*' |
		sort -u | sed "s/^/# $1: /"
	console_text "$1" | grep -aE 'rmbd_(client|target): .*(timed out|lost|reconnect)' |
		sed "s/^/# $1: /"
}

vm_ended_well() {	# NAME
	if [[ ${qrc[$1]:-x} != 0 ]]; then
		echo "$1: qemu exited with status ${qrc[$1]:-?}$( [[ ${qrc[$1]:-} == 124 ]] && echo " (timed out)")"
	elif ! grep -aq 'reboot: Power down' "$results/$1/console.log" 2> /dev/null; then
		echo "$1: did not power off"
	fi
}

# The stop records of client boot NAME (record-stop.sh) for unit
# instance INST: the device existed, swap off and /srv/data unmounted
# before the unit's own stop, the device gone after it.
stop_order() {	# NAME INST
	local d=$results/$1 pre dev
	pre=$d/stop-$2.pre
	[[ -f $pre ]] || { echo "$1: no record of rmbd-dev@$2's stop"; return; }
	sed "s/^/# $1: stop-$2.pre: /" "$pre" >&2
	dev=$(sed -n 's/^dev=//p' "$pre")
	[[ $dev == rmbd* ]] || echo "$1: rmbd-dev@$2 had no device when it stopped"
	if sed -n '/^--- \/proc\/swaps/,/^---/p' "$pre" | grep -q "^/dev/${dev}[[:space:]]"; then
		echo "$1: /dev/$dev was still swap when rmbd-dev@$2 stopped"
	fi
	if sed -n '/^--- \/srv\/data/,/^--- end/p' "$pre" | grep -v '^---' | grep -q ' /srv/data '; then
		echo "$1: /srv/data was still mounted when rmbd-dev@$2 stopped"
	fi
	[[ -f $d/stop-$2.post ]] || { echo "$1: no record after rmbd-dev@$2's stop"; return; }
	sed "s/^/# $1: stop-$2.post: /" "$d/stop-$2.post" >&2
	grep -q '^result=success ' "$d/stop-$2.post" ||
		echo "$1: rmbd-dev@$2's stop: $(head -n 1 "$d/stop-$2.post")"
	if [[ -z $dev ]] || jq -e --arg d "$dev" 'any(.[]; .name == $d)' "$d/stop-$2.json" > /dev/null 2>&1 ||
	   ! jq -e . "$d/stop-$2.json" > /dev/null 2>&1; then
		echo "$1: after rmbd-dev@$2's stop, dev show: $(head -c 300 "$d/stop-$2.json" 2> /dev/null)"
	fi
}

join_why() { sed '/^$/d' | tr '\n' ';' | sed 's/;$//; s/;/; /g'; }

# ---- run -----------------------------------------------------------------

echo "KTAP version 1"
echo "1..${#steps[@]}"
echo "# kernel $kver, results in $results"
start=$(date +%s)

if ! make_stages; then
	tail -n 20 "$stages/install.log" 2> /dev/null | sed 's/^/# /'
	for s in "${steps[@]}"; do
		report "$s" "the stages could not be made"
	done
	exit 1
fi
echo "# stages made in $(( $(date +%s) - start )) s"

# Free UDP ports on the loopback, one per end of the link.
udp_ports=()
vm_udp_ports udp_ports 2
client_port=${udp_ports[0]} target_port=${udp_ports[1]}

# The target and the client's first boot at once, as machines powered on
# together: the client's units wait for the target ("wait 90").
boot_vm target "$target_timeout" "$target_mac" "$target_port" "$client_port"
boot_vm client1 "$client_timeout" "$client_mac" "$client_port" "$target_port"

deadline=$(( $(date +%s) + client_timeout ))
while [[ ! -f $results/target/ready ]] && vm_running target && (( $(date +%s) < deadline )); do
	sleep 0.5
done
[[ -f $results/target/ready ]] && echo "# target: ready at $(( $(date +%s) - start )) s: $(cat "$results/target/boot-time" 2> /dev/null)"
why=$( { guest_checks target; [[ -f $results/target/ready ]] || echo "target not ready"; } | join_why)
report target-boot "$why"

wait_vm client1 $(( $(date +%s) + client_timeout ))
why=$( {
	guest_checks client1
	vm_ended_well client1
	[[ -f $results/client1/marker.sha256 ]] || echo "client1 wrote no marker file"
	for i in swap data; do
		stop_order client1 "$i"
	done
} | join_why)
report client-format "$why" "$(cat "$results/client1/boot-time" 2> /dev/null)"

if [[ -f $results/client1/marker.sha256 ]] && vm_running target; then
	make_client2_stage
	boot_vm client2 "$client_timeout" "$client_mac" "$client_port" "$target_port"
	wait_vm client2 $(( $(date +%s) + client_timeout ))
	why=$( { guest_checks client2; vm_ended_well client2; } | join_why)
	report client-boot "$why" "$(cat "$results/client2/boot-time" 2> /dev/null)"
	why=$( {
		for i in swap data; do
			stop_order client2 "$i"
		done
	} | join_why)
	report client-shutdown-order "$why"
else
	report client-boot "not run: no formatted devices or no target"
	report client-shutdown-order "not run"
fi

# The target's turn to stop: rmbd-target's stop deletes the exports.
echo stop > "$results/target/stop"
wait_vm target $(( $(date +%s) + 120 ))
why=$( {
	vm_ended_well target
	if [[ ! -f $results/target/stop-target.post ]]; then
		echo "no record of rmbd-target's stop"
	else
		grep -q '^result=success ' "$results/target/stop-target.post" ||
			echo "rmbd-target's stop: $(head -n 1 "$results/target/stop-target.post")"
		jq -e 'length == 0' "$results/target/stop-target.json" > /dev/null 2>&1 ||
			echo "exports after rmbd-target's stop: $(head -c 300 "$results/target/stop-target.json")"
	fi
} | join_why)
report target-shutdown "$why"

why=$( for n in target client1 client2; do
	[[ -d $results/$n ]] || continue
	console_problems "$n" | sed "s/^/$n: /"
	console_notes "$n" >&2
done | join_why)
if [[ -n $why ]]; then
	for n in target client1 client2; do
		[[ -f $results/$n/console.log ]] || continue
		echo "# last lines of $n's console ($results/$n/console.log):"
		sed 's/\x1b\[[0-9;]*[a-zA-Z]//g' "$results/$n/console.log" | tr -d '\r' |
			tail -n 15 | sed 's/^/# /'
	done
fi
report vms "$why" "$(( $(date +%s) - start )) s"
echo "# results in $results"
exit "$failed"
# shellcheck disable=SC2317 # the end of the block, never reached
exit
}
