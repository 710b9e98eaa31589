# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the VM tests, sourced by each test and by the guest runner.
# A test exits 0 to pass, 4 to skip, anything else to fail.

RMBD_REPO=${RMBD_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
RMBD_BIN=${RMBD_BIN:-$RMBD_REPO/tools/rmbd}
RMBD_TARGET_KO=${RMBD_TARGET_KO:-$RMBD_REPO/kmod/rmbd-target.ko}
RMBD_CLIENT_KO=${RMBD_CLIENT_KO:-$RMBD_REPO/kmod/rmbd-client.ko}

# The soft RDMA device the test runs over, its netdev and address, as
# the guest runner sets them up: soft-RoCE's rxe0 on d0, or soft-iWARP's
# siw0 on d1 for a test run as TEST@siw.
RMBD_TRANSPORT=${RMBD_TRANSPORT:-rxe}
RMBD_NETDEV=${RMBD_NETDEV:-d0}
RMBD_ADDR=${RMBD_ADDR:-10.200.0.1}
RMBD_RDMA_DEV=${RMBD_TRANSPORT}0
RMBD_PORT=7470

log() { printf '%s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
skip() { printf 'SKIP: %s\n' "$*"; exit 4; }

# shellcheck source=../reports.sh
source "$(dirname "${BASH_SOURCE[0]}")/../reports.sh"

# Wait up to SECONDS for process PID to end; past that, kill it and fail
# the test with WHAT.  Collect the status with wait afterwards.
wait_exit() {	# PID SECONDS WHAT
	local i
	for (( i = 0; i < $2 * 10; i++ )); do
		kill -0 "$1" 2> /dev/null || return 0
		sleep 0.1
	done
	kill -0 "$1" 2> /dev/null || return 0
	kill -9 "$1" 2> /dev/null
	fail "$3"
}

# The wall clock in microseconds, from a builtin: no fork while timing.
usec() { echo "${EPOCHREALTIME/./}"; }

# The kernel log's length now, and its lines after such a mark: what a
# step logged, not what earlier tests in the same VM did.
# A mark written into the kernel log, and the log after it: a count of
# lines would shift once the ring buffer drops its oldest (a VM that ran
# many tests).
kmsg_mark() {
	local m="rmbd-test-mark-$$-$(usec)"
	echo "$m" > /dev/kmsg
	echo "$m"
}
kmsg_since() { dmesg | sed -n "/$1/,\$p" | tail -n +2; }	# MARK

# MemAvailable in bytes once the page cache is dropped and frees have
# settled.
mem_avail() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	sleep 1
	awk '/^MemAvailable:/ {print $2 * 1024}' /proc/meminfo
}

# fio's words for a block that read back wrong (a verify failure).
RMBD_FIO_MISMATCH_RE='verify: bad|verify failed|bad magic|bad header|mismatch'

# Run the CLI; its output and exit status pass through.
rmbd_cli() { "$RMBD_BIN" "$@"; }

# The debug kernel (selftests/debug-kernel) runs 3 to 10 times slower.
debug_kernel() { [[ $(uname -r) == *-rmbd-debug ]]; }
# How many rounds of something to run: N, or N_DEBUG on the debug kernel.
rounds() {	# N N_DEBUG
	if debug_kernel; then echo "$2"; else echo "$1"; fi
}

# Run the CLI and fail the test when it fails, with its last error line.
rmbd_ok() {
	local err rc=0 msg
	err=$(mktemp)
	"$RMBD_BIN" "$@" 2> "$err" || rc=$?
	if (( rc != 0 )); then
		cat "$err" >&2
		msg=$(grep -v '^$' "$err" | tail -n 1)
		rm -f "$err"
		fail "rmbd $* exited with $rc${msg:+: $msg}"
	fi
	cat "$err" >&2
	rm -f "$err"
}

# rmbd_fails "what" ARGS...: the CLI must refuse ARGS with exit status 1 and
# one "rmbd: failed to ..." line on stderr.  Prints that line.
rmbd_fails() {
	local what=$1 err out rc=0
	shift
	err=$(mktemp)
	out=$("$RMBD_BIN" "$@" 2> "$err") || rc=$?
	log "  rmbd $* -> exit $rc: $(head -c 300 "$err" | tr '\n' ' ')"
	if (( rc != 1 )); then
		rm -f "$err"
		fail "$what: 'rmbd $*' exited with $rc, expected 1 (stdout: $out)"
	fi
	if ! grep -q '^rmbd: failed to ' "$err"; then
		rm -f "$err"
		fail "$what: stderr lacks 'rmbd: failed to ...'"
	fi
	RMBD_ERR=$(cat "$err")
	rm -f "$err"
}

rmbd_modules_loaded() {
	[[ -d /sys/module/rmbd_target && -d /sys/module/rmbd_client ]]
}

# Load rdma_cm and the two modules from the work tree (when built).
rmbd_load_modules() {
	local ko rc=0
	modprobe rdma_cm || return 1
	for ko in "$RMBD_TARGET_KO" "$RMBD_CLIENT_KO"; do
		local m
		m=$(basename "$ko" .ko)
		m=${m//-/_}
		[[ -d /sys/module/$m ]] && continue
		if [[ ! -f $ko ]]; then
			log "$ko not built"
			continue
		fi
		# shellcheck disable=SC2086 # parameters, one per word
		if [[ $ko == "$RMBD_CLIENT_KO" ]]; then
			insmod "$ko" ${RMBD_CLIENT_PARAMS:-} ||
				{ log "insmod $ko ${RMBD_CLIENT_PARAMS:-} failed"; rc=1; }
		else
			insmod "$ko" || { log "insmod $ko failed"; rc=1; }
		fi
	done
	return "$rc"
}

# Skip the test unless swapverify and the swap tools are built and
# installed, and the extra TOOLS too; sets swapverify to its path.
require_swapverify() {	# [TOOLS...]
	local t
	swapverify=$RMBD_REPO/selftests/vm/swapverify
	[[ -x $swapverify ]] || skip "selftests/vm/swapverify not built"
	for t in mkswap swapon swapoff "$@"; do
		command -v "$t" > /dev/null || skip "$t not installed"
	done
}

# The OOM kills memory cgroup GROUP (a directory) has seen.
oom_kills() { awk '$1 == "oom_kill" {print $2}' "$1/memory.events"; }

# Skip the test unless the modules and the CLI are there; fail when they
# are built but would not load.
require_rmbd() {
	[[ -f $RMBD_TARGET_KO ]] || skip "kmod/rmbd-target.ko not built"
	[[ -f $RMBD_CLIENT_KO ]] || skip "kmod/rmbd-client.ko not built"
	[[ -x $RMBD_BIN ]] || skip "tools/rmbd not built"
	rmbd_modules_loaded || rmbd_load_modules || fail "cannot load the rmbd modules"
	rmbd_modules_loaded || fail "rmbd modules not loaded"
	command -v jq > /dev/null || skip "jq not installed"
}

# rmbd-peer (a userspace client, selftests/vm/rmbd-peer.c) in $peer, and
# the kernel's userspace verbs and rdma_cm it needs (built in on the
# debug kernel).
require_peer() {
	peer=$RMBD_REPO/selftests/vm/rmbd-peer
	[[ -x $peer ]] || fail "$peer not built (make -C selftests)"
	modprobe -a ib_uverbs rdma_ucm || fail "cannot load ib_uverbs and rdma_ucm"
}

# RDMA READs land in regions registered per request over iWARP and with
# read_mr=1; the disk then has a page as its virtual boundary
# (rmbd_c_disk_add()).  Fail unless DEV's boundary is what the transport
# and the parameter make it.
check_read_sinks() {	# DEV
	local want=0 got
	# A READ first: the stricter siw (selftests/debug-kernel/patches/0004)
	# fails one into a sink without REMOTE_WRITE, as iWARP NICs do.
	timeout 30 dd if="/dev/$1" of=/dev/null bs=1M count=1 iflag=direct status=none ||
		fail "reading 1 MiB of $1 over $RMBD_TRANSPORT failed or hung: $(dmesg | grep -m 1 'RDMA READ failed')"
	if [[ $RMBD_TRANSPORT == siw ||
	      $(cat /sys/module/rmbd_client/parameters/read_mr) == Y ]]; then
		want=4095
	fi
	got=$(cat "/sys/block/$1/queue/virt_boundary_mask")
	(( got == want )) ||
		fail "$1: virt_boundary_mask $got, wanted $want (READs over $RMBD_TRANSPORT, read_mr=$(cat /sys/module/rmbd_client/parameters/read_mr))"
	log "$1: READ sinks $( (( want )) && echo "registered per request" || echo "at the local DMA lkey" ) over $RMBD_TRANSPORT"
}

# JSON helpers.
export_field() {	# NAME FIELD
	rmbd_cli -j export show | jq -r --arg n "$1" ".[] | select(.name == \$n) | .$2"
}
dev_jq() {		# DEV FILTER: FILTER applied to the device's JSON object
	rmbd_cli -j dev show | jq -r --arg n "$1" ".[] | select(.name == \$n) | $2"
}
dev_field() { dev_jq "$1" ".$2"; }	# DEV FIELD
dev_count() { rmbd_cli -j dev show | jq length; }
dev_nodes() { ls /dev/rmbd* 2>/dev/null || true; }

# Wait up to $2 seconds (default 10) for the block device node $1.
wait_node() {
	local i
	for (( i = 0; i < ${2:-10} * 10; i++ )); do
		[[ -b $1 ]] && return 0
		sleep 0.1
	done
	return 1
}

# Wait up to $2 seconds (default 10) for $1 to disappear.
wait_gone() {
	local i
	for (( i = 0; i < ${2:-10} * 10; i++ )); do
		[[ -e $1 ]] || return 0
		sleep 0.1
	done
	return 1
}

# The test's link down and up again.  Over siw its address goes as well:
# its TCP would otherwise go on over the loopback, where siw's traffic to
# a local address flows whatever the link.
link_down() {
	[[ $RMBD_TRANSPORT != siw ]] || ip addr del "$RMBD_ADDR/24" dev "$RMBD_NETDEV"
	ip link set "$RMBD_NETDEV" down
}
link_up() {
	ip link set "$RMBD_NETDEV" up
	[[ $RMBD_TRANSPORT != siw ]] || ip addr replace "$RMBD_ADDR/24" dev "$RMBD_NETDEV"
}

# More soft-RoCE links for the other targets of a device over several:
# rxe1 on a dummy d2 with RMBD_ADDR2 (second_link_add), rxe2 on d3 with
# RMBD_ADDR3 (third_link_add), as the guest set up rxe0 on d0, each with
# a listener.  second_link_del and third_link_del remove them (in a
# test's cleanup).
RMBD_ADDR2=10.201.0.1
RMBD_ADDR3=10.202.0.1
extra_link_add() {	# NETDEV RXE ADDR
	ip link add "$1" type dummy && ip link set "$1" mtu 4500 &&
		ip addr add "$3/24" dev "$1" && ip link set "$1" up &&
		rdma link add "$2" type rxe netdev "$1" ||
		fail "cannot set up $2 on $1"
	rmbd_ok listener add "$3" > /dev/null
}
extra_link_del() {	# NETDEV RXE: either may be gone already
	rdma link del "$2" 2> /dev/null || true
	ip link del "$1" 2> /dev/null || true
}
second_link_add() { extra_link_add d2 rxe1 "$RMBD_ADDR2"; }
second_link_del() { extra_link_del d2 rxe1; }
third_link_add() { extra_link_add d3 rxe2 "$RMBD_ADDR3"; }
third_link_del() { extra_link_del d3 rxe2; }

# Disconnect every device, by force (a test's cleanup).
dev_disconnect_all() {
	local d
	for d in $(rmbd_cli -j dev show 2> /dev/null | jq -r '.[].name' 2> /dev/null); do
		timeout 60 "$RMBD_BIN" dev disconnect "$d" force > /dev/null 2>&1 || true
	done
}

# rmbd-liar (selftests/vm/rmbd-liar.c, a target that lies) in the
# background on ADDR port PORT with ARGS (--lie, --size ...): its pid in
# $liar_pid, what it says in DIR/liar.out, its errors in DIR/liar.err.
# Returns once it listens; liar_stop ends it.  require_liar first.
require_liar() {
	require_peer
	[[ -x $RMBD_REPO/selftests/vm/rmbd-liar ]] ||
		fail "$RMBD_REPO/selftests/vm/rmbd-liar not built (make -C selftests)"
}
liar_pid=
liar_start() {	# DIR ADDR PORT ARGS...
	local dir=$1 addr=$2 port=$3 i
	shift 3
	liar_stop
	"$RMBD_REPO/selftests/vm/rmbd-liar" --addr "$addr" --port "$port" "$@" \
		> "$dir/liar.out" 2> "$dir/liar.err" &
	liar_pid=$!
	for (( i = 0; i < 100; i++ )); do
		grep -q '^listening' "$dir/liar.out" && return 0
		kill -0 "$liar_pid" 2> /dev/null ||
			fail "rmbd-liar $* did not start: $(cat "$dir/liar.err")"
		sleep 0.1
	done
	fail "rmbd-liar $* not listening after 10 s"
}
liar_stop() {
	[[ -n $liar_pid ]] || return 0
	kill "$liar_pid" 2> /dev/null || true
	wait "$liar_pid" 2> /dev/null || true
	liar_pid=
}

# Wait up to 10 s for the test's RDMA port to be ACTIVE again.
wait_live_link() {
	local i
	for (( i = 0; i < 100; i++ )); do
		rdma link show "$RMBD_RDMA_DEV/1" 2> /dev/null | grep -q 'state ACTIVE' && return 0
		sleep 0.1
	done
	fail "$RMBD_RDMA_DEV not active again"
}

# Wait up to 60 s for DEV to be live after its link came back; prints
# how long it took (ms).  The state is polled by elapsed time (a command
# takes long on the debug kernel).
wait_live_again() {	# DEV
	local t0 state
	t0=$(usec)
	while state=$(dev_field "$1" state); [[ $state != live ]]; do
		(( $(usec) - t0 < 60000000 )) ||
			fail "$1 is $state 60 s after the link came back"
		sleep 0.1
	done
	echo $(( ($(usec) - t0) / 1000 ))
}

# Take the test's link (d0) down until device DEV noticed (at least 2 s, at most
# 20 s), bring it up, and wait up to 60 s for DEV to be live again with
# its reconnect count up.  Timed by the clock: a command takes long on
# the debug kernel.
link_flap() {		# DEV
	local dev=$1 before noticed=0 t0 limit=20
	# Over siw nothing fails at once: a WRITE completes into TCP, a
	# READ waits for TCP's retransmissions; the keepalive, sent every
	# 10 s and answered within 10 s, notices.
	[[ $RMBD_TRANSPORT == siw ]] && limit=35
	before=$(dev_field "$dev" reconnects)
	link_down
	t0=$(usec)
	while :; do
		[[ $(dev_field "$dev" state) != live ]] && noticed=1
		(( $(usec) - t0 >= (noticed ? 2000000 : limit * 1000000) )) && break
		sleep 0.1
	done
	link_up
	(( noticed )) || fail "$dev stayed live with its link down for $limit s"
	wait_live_again "$dev" > /dev/null
	(( $(dev_field "$dev" reconnects) > before )) ||
		fail "$dev live again, but its reconnect count stayed at $before"
}

# fio on /dev/DEV from OFFSET, SIZE bytes, pass after pass until DIR/stop
# exists, in the background (its pid in $fio_pid): random 4k writes with
# a checksum per block at depth 16, then every block read back and
# checked.  Any error or mismatch ends the loop with fio's exit status.
# Each pass leaves DIR/fio.N.json and .out; DIR/passes counts them.
fio_verify_start() {	# DEV OFFSET SIZE DIR
	local dev=$1 offset=$2 size=$3 dir=$4
	(
		cd "$dir"
		pass=0
		while [[ ! -e $dir/stop ]]; do
			pass=$(( pass + 1 ))
			fio --name=verify --filename="/dev/$dev" --offset="$offset" \
				--size="$size" --rw=randwrite --bs=4k --iodepth=16 \
				--ioengine=libaio --direct=1 --verify=crc32c \
				--do_verify=1 --verify_fatal=1 --verify_state_save=0 \
				--randseed="$pass" --output-format=json \
				--output="$dir/fio.$pass.json" \
				> "$dir/fio.$pass.out" 2>&1 || exit $?
			echo "$pass" > "$dir/passes"
		done
	) &
	fio_pid=$!
}

# Stop fio_verify_start's loop in DIR (after its pass), wait up to 120 s,
# and fail the test unless every pass ended without an error and at
# least one completed.  Logs the passes and MiB written.
fio_verify_stop() {	# DIR
	local dir=$1 rc=0 f e passes written=0
	touch "$dir/stop"
	wait_exit "$fio_pid" 120 "fio still runs 120 s after it was told to stop"
	wait "$fio_pid" || rc=$?
	fio_pid=
	passes=$(cat "$dir/passes" 2> /dev/null || echo 0)
	for f in "$dir"/fio.*.json; do
		[[ -s $f ]] || continue
		e=$(jq '.jobs[0].error' "$f") || fail "$f: not fio's JSON: $(head -c 300 "$f")"
		(( e == 0 )) || fail "fio reported error $e in $f: $(grep -i 'err\|verify' "${f%.json}.out" | head -n 5)"
		written=$(( written + $(jq '.jobs[0].write.io_kbytes' "$f") ))
	done
	(( rc == 0 )) || fail "fio failed (exit $rc): $(cat "$dir"/fio.*.out | grep -i 'err\|verify' | head -n 5)"
	log "fio: $passes passes complete, $(( written >> 10 )) MiB written and verified, no error"
	(( passes >= 1 )) || fail "fio did not complete a single pass"
}

# Wait up to SECONDS (default 10) for export NAME to have N sessions;
# past that, fail the test with WHAT (default: the export's name).
wait_sessions() {	# NAME N [SECONDS [WHAT]]
	local i
	for (( i = 0; i < ${3:-10} * 10; i++ )); do
		[[ $(export_field "$1" sessions) == "$2" ]] && return 0
		sleep 0.1
	done
	fail "${4:-export $1}: $(export_field "$1" sessions) sessions, expected $2"
}

# Start the target side: export NAME of SIZE and a listener (once).
# The export allows this machine's host identity (rmbd host: the VMs
# boot the host's root, so the guests share its /etc/machine-id), as an
# administrator allows a client, unless the extra args say who may.
target_setup() {	# NAME SIZE [extra export add args]
	local name=$1 size=$2 acl=()
	shift 2
	if [[ " $* " != *" hosts "* && " $* " != *" any_host "* ]]; then
		acl=(hosts "$(rmbd_cli host)") || fail "no host identity: $(rmbd_cli host 2>&1)"
	fi
	rmbd_ok export add "$name" size "$size" "${acl[@]}" "$@" > /dev/null
	if ! rmbd_cli -j listener show | jq -e --arg a "$RMBD_ADDR" \
			'.[] | select(.addr == $a)' > /dev/null; then
		rmbd_ok listener add "$RMBD_ADDR" > /dev/null
	fi
}

# Connect to export NAME; prints the device name (e.g. rmbd0).
dev_connect() {		# NAME [extra args]
	local name=$1 dev
	shift
	dev=$(rmbd_ok dev connect addr "$RMBD_ADDR" export "$name" "$@") ||
		exit 1
	dev=$(printf '%s\n' "$dev" | tail -n 1)
	[[ $dev =~ ^rmbd[0-9]+$ ]] || fail "dev connect printed '$dev', not a device name"
	wait_node "/dev/$dev" || fail "/dev/$dev did not appear"
	printf '%s\n' "$dev"
}

dev_disconnect() {	# DEV
	rmbd_ok dev disconnect "$1"
	wait_gone "/dev/$1" || fail "/dev/$1 still exists after disconnect"
}

# Return the machine to its state before the test: nothing mounted, no
# device, no export, no listener, both modules loaded.
rmbd_reset() {
	local m d rc=0
	while read -r m; do
		umount -l "$m" || rc=1
	done < <(awk '$1 ~ /^\/dev\/rmbd/ {print $2}' /proc/mounts)
	swapoff -a 2>/dev/null
	# What a failed test stacked on rmbd devices: md arrays, device-mapper
	# targets (dm-crypt, LVM).
	if command -v mdadm > /dev/null; then
		mdadm --stop --scan > /dev/null 2>&1 || true
	fi
	if command -v dmsetup > /dev/null; then
		dmsetup remove_all > /dev/null 2>&1 || true
	fi
	if [[ -x $RMBD_BIN ]] && rmbd_modules_loaded; then
		for d in $(rmbd_cli -j dev show 2>/dev/null | jq -r '.[].name' 2>/dev/null); do
			timeout 60 "$RMBD_BIN" dev disconnect "$d" || rc=1
		done
		for d in $(rmbd_cli -j export show 2>/dev/null | jq -r '.[].name' 2>/dev/null); do
			timeout 60 "$RMBD_BIN" export del "$d" force || rc=1
		done
		rmbd_cli -j listener show 2>/dev/null | jq -r '.[] | "\(.addr) \(.port)"' 2>/dev/null |
		while read -r a p; do
			timeout 60 "$RMBD_BIN" listener del "$a" port "$p" || exit 1
		done || rc=1
	fi
	if [[ -f $RMBD_TARGET_KO ]] && ! rmbd_modules_loaded; then
		rmbd_load_modules || rc=1
	fi
	if [[ -n $(dev_nodes) ]]; then
		echo "reset: left over: $(dev_nodes)"
		rc=1
	fi
	return "$rc"
}

# ---- swap --------------------------------------------------------------

vmstat_get() { awk -v k="$1" '$1 == k {print $2}' /proc/vmstat; }

# Make /dev/DEV the only swap, at the highest priority.  zswap, if on, is
# turned off: it would keep swapped pages in RAM, away from the device.
swap_only_on() {	# DEV
	local swaps
	if [[ $(cat /sys/module/zswap/parameters/enabled 2> /dev/null) == Y ]]; then
		echo N > /sys/module/zswap/parameters/enabled
		log "zswap disabled"
	fi
	[[ $(wc -l < /proc/swaps) -le 1 ]] ||
		fail "swap already in use before the test: $(tail -n +2 /proc/swaps)"
	mkswap "/dev/$1" > /dev/null || fail "mkswap /dev/$1 failed"
	swapon -p 32767 "/dev/$1" || fail "swapon /dev/$1 failed"
	swaps=$(tail -n +2 /proc/swaps)
	[[ $(wc -l <<< "$swaps") == 1 && $swaps == "/dev/$1 "* ]] ||
		fail "/proc/swaps should list only /dev/$1: $swaps"
}

# Note the swap used on /dev/DEV (KiB) in FILE twice a second, in the
# background, until swap_sample_stop.
swap_sample_start() {	# DEV FILE
	local d=/dev/$1
	while :; do
		awk -v d="$d" '$1 == d {print $4}' /proc/swaps
		sleep 0.5
	done > "$2" &
	RMBD_SWAP_SAMPLER=$!
}

swap_sample_stop() {
	[[ -n ${RMBD_SWAP_SAMPLER:-} ]] || return 0
	kill "$RMBD_SWAP_SAMPLER" 2> /dev/null || true
	wait "$RMBD_SWAP_SAMPLER" 2> /dev/null || true
	RMBD_SWAP_SAMPLER=
}

# The most swap (KiB) a sampler noted in FILE.
swap_used_max() { sort -n "$1" | tail -n 1 | grep . || echo 0; }
