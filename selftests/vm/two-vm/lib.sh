# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the guest side of two-vm.sh, sourced by target.sh and
# client.sh on top of the VM tests' lib.sh.  two-vm.sh puts these in the
# job that guest.sh sources:
#   RMBD_TWOVM_OUT     the results share as the guest mounts it; the host
#                      and the guest talk through files in it
#   RMBD_TWOVM_MAC     MAC of this VM's virtio-net NIC
#   RMBD_TWOVM_IP      this VM's address on that NIC (/24)
#   RMBD_TWOVM_MTU     the NIC's MTU
#   RMBD_ADDR          the target's address (lib.sh: listener, connect)
#   RMBD_TWOVM_EXPORT  name and size of the export
#   RMBD_TWOVM_SIZE
#   RMBD_TWOVM_LOSS    the client's loss_timeout
#   RMBD_TWOVM_MAC2    the client only: MAC and address of its second NIC,
#   RMBD_TWOVM_IP2     on the second link, and the address of the targets
#   RMBD_TWOVM_ADDR2   on that link

# shellcheck source=../tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tests/lib.sh"

tv_out=${RMBD_TWOVM_OUT:?not started by two-vm.sh}

# Wait up to $2 seconds for the file $tv_out/$1 (the host writes it).
tv_wait() {	# NAME SECONDS
	local i
	for (( i = 0; i < $2 * 10; i++ )); do
		[[ -f $tv_out/$1 ]] && return 0
		sleep 0.1
	done
	return 1
}

# Tell the host something: a file in the share, written whole.
tv_say() {	# NAME [CONTENT]
	printf '%s\n' "${2:-}" > "$tv_out/$1.tmp"
	mv "$tv_out/$1.tmp" "$tv_out/$1"
}

# The virtio-net NIC with MAC (default this VM's first, RMBD_TWOVM_MAC),
# up with its address IP/24 (RMBD_TWOVM_IP) and the MTU, and soft-RoCE
# RXE (rxe1) on it.  Prints the NIC's name.
tv_nic_setup() {	# [MAC IP RXE]
	local mac=${1:-$RMBD_TWOVM_MAC} ip=${2:-$RMBD_TWOVM_IP} rxe=${3:-rxe1}
	local d nic='' i
	modprobe virtio_net || fail "modprobe virtio_net failed"
	for (( i = 0; i < 50; i++ )); do
		for d in /sys/class/net/*; do
			if [[ $(cat "$d/address" 2> /dev/null) == "$mac" ]]; then
				nic=${d##*/}
			fi
		done
		[[ -n $nic ]] && break
		sleep 0.1
	done
	[[ -n $nic ]] || fail "no NIC with MAC $mac"
	ip link set "$nic" mtu "$RMBD_TWOVM_MTU" ||
		fail "$nic does not take MTU $RMBD_TWOVM_MTU"
	ip addr add "$ip/24" dev "$nic" || fail "ip addr add on $nic failed"
	ip link set "$nic" up || fail "ip link set $nic up failed"
	rdma link add "$rxe" type rxe netdev "$nic" || fail "rdma link add $rxe on $nic failed"
	for (( i = 0; i < 100; i++ )); do
		rdma link show "$rxe/1" 2> /dev/null | grep -q 'state ACTIVE' && break
		sleep 0.1
	done
	rdma link show "$rxe/1" | grep -q 'state ACTIVE' || fail "$rxe not ACTIVE"
	echo "$nic"
}

# Tasks in uninterruptible sleep (D), if any.
tv_d_tasks() {
	ps -eo stat=,pid=,comm= | awk '$1 ~ /^D/ {print $2, $3}' | sort
}

# Tasks in D state now and still 3 s later (stuck, not just waiting for
# an I/O that is about to end).
tv_stuck_tasks() {
	local a
	a=$(tv_d_tasks)
	[[ -n $a ]] || return 0
	sleep 3
	comm -12 <(echo "$a") <(tv_d_tasks)
}

# Kernel errors in the kernel log so far (guest.sh judges the whole test;
# this names the step).
tv_kernel_errors() {
	dmesg | kmsg_reports
}
