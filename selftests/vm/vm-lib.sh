# SPDX-License-Identifier: GPL-2.0
#
# Host-side helpers shared by the VM runners (run-vm.sh, two-vm.sh):
# which kernel to boot and the initramfs that mounts the host's / over 9p
# and starts the guest script named by rmbd.guest=.  Sourced, not run.

# shellcheck source=reports.sh
source "$(dirname "${BASH_SOURCE[0]}")/reports.sh"

# The kernel reports in a guest's console log FILE, its KTAP lines aside,
# and a panic or a failed early setup (initramfs, guest-init): the last 40.
vm_console_reports() {	# FILE
	tr -d '\r' 2> /dev/null < "$1" | grep -avE '^(#|ok |not ok )' |
		kmsg_reports 'Kernel panic|initramfs:|guest-init:' | tail -n 40
}

# Print the kernel release to boot: RMBD_KVER, else the newest one in
# /lib/modules that has /boot/vmlinuz-<release>.  Fails when there is none.
vm_kernel_release() {	# WHO: prefix of the error message
	local k
	if [[ -n ${RMBD_KVER:-} ]]; then
		if [[ ! -f /boot/vmlinuz-$RMBD_KVER ]]; then
			echo "$1: RMBD_KVER=$RMBD_KVER, but there is no /boot/vmlinuz-$RMBD_KVER" >&2
			return 1
		fi
		echo "$RMBD_KVER"
		return 0
	fi
	for k in $(ls -1 /lib/modules 2>/dev/null | sort -rV); do
		if [[ -f /boot/vmlinuz-$k ]]; then
			echo "$k"
			return 0
		fi
	done
	echo "$1: no kernel image found in /boot (install linux-image-amd64)" >&2
	return 1
}

# What goes into the initramfs besides /init: the busybox applets it
# runs, the modules that every boot loads (modules.order) and those only
# the overlay boot (rmbd.overlay=1, boot-vm.sh) loads
# (modules-overlay.order), so that the default boot loads what it always
# did.  The cache key (vm_initramfs) covers these lists.
VM_INITRAMFS_APPLETS="sh mount umount insmod mkdir mknod cat cp chown chmod sleep reboot switch_root echo"
VM_INITRAMFS_MODULES="virtio_pci 9pnet_virtio 9p"
VM_INITRAMFS_OVERLAY_MODULES="overlay"

# Copy module M for KVER and those it needs into DIR/modules, each once
# (SEEN, a name reference, lists those copied), and list them in LIST.
vm_initramfs_module() {	# DIR KVER M LIST SEEN
	local dir=$1 kver=$2 m=$3 list=$4 ko b
	local -n seen_ko=$5
	while read -r _ ko _; do
		[[ $seen_ko == *" $ko "* ]] && continue
		seen_ko+="$ko "
		b=$(basename "$ko")
		case "$ko" in
		*.ko.xz) xz -dc "$ko" > "$dir/modules/${b%.xz}"; b=${b%.xz} ;;
		*.ko.zst) zstd -qdc "$ko" > "$dir/modules/${b%.zst}"; b=${b%.zst} ;;
		*.ko.gz) gzip -dc "$ko" > "$dir/modules/${b%.gz}"; b=${b%.gz} ;;
		*) cp "$ko" "$dir/modules/$b" ;;
		esac
		echo "$b" >> "$dir/$list"
	done < <(modprobe -S "$kver" --show-depends "$m" | grep '^insmod ')
}

# Build the initramfs OUT for kernel KVER: busybox, VM_DIR/initramfs-init
# as /init and the 9p and virtio modules with their dependencies.
vm_build_initramfs() {	# OUT KVER VM_DIR
	# shellcheck disable=SC2034 # vm_initramfs_module adds to it by name
	local out=$1 kver=$2 vm_dir=$3 dir m a seen=" "
	dir=$(mktemp -d)
	mkdir -p "$dir/bin" "$dir/modules"
	cp /bin/busybox "$dir/bin/busybox"
	for a in $VM_INITRAMFS_APPLETS; do
		ln -s busybox "$dir/bin/$a"
	done
	install -m 0755 "$vm_dir/initramfs-init" "$dir/init"
	: > "$dir/modules.order"
	: > "$dir/modules-overlay.order"
	for m in $VM_INITRAMFS_MODULES; do
		vm_initramfs_module "$dir" "$kver" "$m" modules.order seen
	done
	for m in $VM_INITRAMFS_OVERLAY_MODULES; do
		vm_initramfs_module "$dir" "$kver" "$m" modules-overlay.order seen
	done
	(cd "$dir" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$dir"
}

# Print the path of the initramfs for KVER in CACHE, building it when the
# cache lacks it (the name carries a hash of what goes into it).
vm_initramfs() {	# CACHE KVER VM_DIR
	local cache=$1 kver=$2 vm_dir=$3 key initrd
	key=$( (echo "$kver"; echo "$VM_INITRAMFS_APPLETS"
		echo "$VM_INITRAMFS_MODULES"; echo "$VM_INITRAMFS_OVERLAY_MODULES"
		cat "$vm_dir/initramfs-init" /bin/busybox) | sha256sum | cut -c1-12)
	initrd=$cache/initramfs-$kver-$key.cpio.gz
	if [[ ! -f $initrd ]]; then
		rm -f "$cache"/initramfs-"$kver"-*.cpio.gz
		vm_build_initramfs "$initrd" "$kver" "$vm_dir" || return 1
	fi
	echo "$initrd"
}

# One VM run at a time, the machine has two cores: take the runners'
# lock in CACHE on fd 9, after the run that holds it.
vm_lock() {	# CACHE WHO
	exec 9>"$1/vm.lock"
	if ! flock -n 9; then
		echo "# $2: waiting for another VM to finish" >&2
		flock 9
	fi
}

# Empty runner WHO's results directory DIR, which it marks with
# .rmbd-WHO-results: only ever a directory it made.
vm_results_reset() {	# DIR WHO
	if [[ -n $(ls -A "$1") && ! -f $1/.rmbd-$2-results ]]; then
		echo "$2: $1 is not empty and not a $2 results directory" >&2
		return 2
	fi
	rm -rf "${1:?}"/*
	touch "$1/.rmbd-$2-results"
}

# QEMU's accelerator options into the array NAME: TCG, or KVM with
# RMBD_VM_KVM=1.
# shellcheck disable=SC2034 # set by name
vm_accel() {	# NAME
	local -n acc=$1
	if [[ ${RMBD_VM_KVM:-0} == 1 ]]; then
		acc=(-accel kvm -cpu host)
	else
		acc=(-accel tcg -cpu max)
	fi
}

# N free UDP ports on the loopback, for the ends of socket netdevs, into
# the array NAME.
vm_udp_ports() {	# NAME N
	local -n ports=$1
	local p
	ports=()
	while (( ${#ports[@]} < $2 )); do
		p=$(( 20000 + RANDOM % 30000 ))
		[[ " ${ports[*]} " != *" $p "* && -z $(ss -Hluan "sport = :$p") ]] &&
			ports+=("$p")
	done
}

# The VMs a runner boots in the background, in its associative arrays
# qpid (NAME -> the pid of their `timeout qemu`, empty once reaped) and
# qrc (NAME -> its exit status, once reaped).
# shellcheck disable=SC2154 # the runner's arrays
vm_running() { [[ -n ${qpid[$1]:-} ]] && kill -0 "${qpid[$1]}" 2> /dev/null; }

# Wait for VM NAME to end; its exit status in qrc.
# shellcheck disable=SC2034 # qrc: the runner's
vm_reap() {	# NAME
	local rc=0
	[[ -n ${qpid[$1]:-} ]] || return 0
	# (quietly: a qemu killed by a signal is expected)
	{ wait "${qpid[$1]}"; } 2> /dev/null || rc=$?
	qrc[$1]=$rc
	qpid[$1]=
}

# End every VM still running: the runners' EXIT trap.
vm_kill_all() {
	local n
	for n in "${!qpid[@]}"; do
		[[ -n ${qpid[$n]} ]] && kill "${qpid[$n]}" 2> /dev/null
	done
	true
}

# The debug kernel (selftests/debug-kernel): build it when its recipe
# changed, then load its paths (DEBUG_KERNEL_*) from CACHE.
vm_debug_kernel() {	# CACHE REPO
	RMBD_CACHE=$1 "$2/selftests/debug-kernel/build.sh" >&2 || return 1
	# shellcheck source=/dev/null
	source "$1/debug-kernel/env"
}

# Make the qemu command line in array NAME boot the debug kernel.  It has
# no initramfs: the kernel mounts the root share itself (its mount_tag
# must then be /dev/root) and starts guest-init, which binds the debug
# kernel's modules over /lib/modules.  The machine is a q35: its ACPI
# interpreter is slow under KASAN and TCG, and the default i440fx's _PRT
# is an AML loop over 128 entries that hits the interpreter's 30 s loop
# limit for each PCI device (about 90 s a boot), where q35's is a table.
# Not acpi=noirq: the guest would see one CPU.  Not pci=noacpi: MSI
# setup then warns and the devices fall back to INTx.
vm_debug_qemu() {	# NAME REPO
	local -n q=$1
	local i
	for i in "${!q[@]}"; do
		case "${q[i]-}" in
		-kernel) q[i+1]=$DEBUG_KERNEL_IMAGE ;;
		-initrd) unset 'q[i]' 'q[i+1]' ;;
		-append) q[i+1]+=" root=/dev/root rootfstype=9p ro"
			 q[i+1]+=" rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose"
			 q[i+1]+=" init=$2/selftests/debug-kernel/guest-init"
			 q[i+1]+=" rmbd.modules=$DEBUG_KERNEL_MODULES" ;;
		*,mount_tag=rootfs) q[i]=${q[i]%rootfs}/dev/root ;;
		esac
	done
	q=("${q[@]}" -machine q35)
}

# The job-file line that points the guest at the debug kernel's modules.
vm_debug_job() {
	printf 'export RMBD_TARGET_KO=%q RMBD_CLIENT_KO=%q\n' \
		"$DEBUG_KERNEL_TARGET_KO" "$DEBUG_KERNEL_CLIENT_KO"
}
