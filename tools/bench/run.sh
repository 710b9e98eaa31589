#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: boot the test VM once (selftests/vm/run-vm.sh) and run the
# same fio jobs on rmbd, nvme-rdma, nbd and brd there (tools/bench/guest.sh),
# then turn fio's JSON into a table and bench.json, and chart it
# (tools/bench/report.sh, tools/bench/chart.sh).
# See Documentation/performance.rst.
#
# usage: tools/bench/run.sh        (as root, after "make all")
#
# Environment (all optional):
#   RMBD_BENCH_SYSTEMS  systems to run, comma or space separated (default:
#                       rmbd,nvme-rdma,nbd,brd,rmbd-mirror,md-raid1; the
#                       last two, two copies each, run the mirror-* and
#                       failover jobs)
#   RMBD_BENCH_JOBS     jobs to run (default: all; names in tools/bench/jobs.sh;
#                       "swap" is the swap job, the others are fio's)
#   RMBD_BENCH_RUNS     runs of each fio job on each system (default 3; the table
#                       shows the median)
#   RMBD_BENCH_SWAP_RUNS  runs of the swap job on each system (default 7:
#                       a run is one pass of one program, a few seconds)
#   RMBD_BENCH_RUNTIME  seconds measured per run (default 3)
#   RMBD_BENCH_LOSS     loss_timeout of the rmbd devices of the systems of
#                       two copies, in s (default 10; the failover job runs
#                       8 s longer)
#   RMBD_BENCH_RAMP     seconds of ramp before each run (default 1)
#   RMBD_BENCH_SIZE     size of every device, e.g. 512M, 1G (default 512M)
#   RMBD_BENCH_QUEUES   I/O queues (rmbd queues, nvme --nr-io-queues, nbd
#                       connections; default: each system's own default,
#                       one per CPU, and one nbd connection per CPU)
#   RMBD_BENCH_DEPTH    queue depth (rmbd depth, nvme --queue-size; default:
#                       each system's own)
#   RMBD_BENCH_POLLQ    poll queues for rmbd (pollq N, when the CLI has it)
#                       and nvme-rdma (--nr-poll-queues); default 1, for the
#                       io_uring --hipri job; 0 for none
#   RMBD_BENCH_NET      "two" (default): the client's and the target's
#                       soft-RoCE devices on the two ends of a veth pair,
#                       the target end's receive steered to the last CPU;
#                       "loop": one rxe0 on a dummy netdev, loopback
#   RMBD_BENCH_RPS_TARGET, RMBD_BENCH_RPS_CLIENT  RPS CPU masks (hex) of the
#                       target and client ends with RMBD_BENCH_NET=two
#                       (default: the last CPU, and 0: no steering)
#   RMBD_BENCH_SCALE    1: run the scaling section (tools/bench/scale.sh)
#                       after the jobs, 0: not (default: 1 when every job
#                       runs, i.e. RMBD_BENCH_JOBS is unset or "all")
#   RMBD_BENCH_SCALE_SIZES  export sizes of its connect and reconnect
#                       points, comma or space separated (default
#                       64M,256M,1G,4G; 16G needs a VM of some 18G); the
#                       VM gets the largest on top of its memory, and
#                       sizes the host cannot hold are dropped
#   RMBD_BENCH_SCALE_DEVICES  device counts of its sessions and devices
#                       points (default "1 8 32")
#   RMBD_BENCH_SCALE_QD  queues x depth settings of its client memory
#                       points (default "1x32 1x128 2x128 2x1024")
#   RMBD_BENCH_CEILING  1 (default): measure the raw RDMA ceiling of the
#                       selected jobs first (perftest, and kernel verbs
#                       with tools/bench/kverbs, built here when needed),
#                       RMBD_BENCH_RUNS times 2 s per point and tool;
#                       0: do not
#   RMBD_BENCH_OUT      output directory (default selftests/results/bench)
#   RMBD_VM_MEM         guest memory (default: 1 GiB plus one device per
#                       system)
#   and the other RMBD_VM_* settings of selftests/vm/run-vm.sh.
#
# Quick development run of one job on rmbd and its nvme-rdma peer:
#   RMBD_BENCH_SYSTEMS=rmbd,nvme-rdma RMBD_BENCH_JOBS=randread-qd16 \
#   RMBD_BENCH_RUNS=1 tools/bench/run.sh
#
# Exit status: 0 when rmbd ran every job; 1 when rmbd failed (setup, a
# run, a kernel error naming rmbd, or the VM died); 2 on a usage error.
# A peer that cannot be set up is shown as n/a with the reason.

set -u

# Parsed whole before it runs, so editing this file cannot derail a run.
{

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tools/bench/jobs.sh
source "$here/jobs.sh"

die() { echo "bench: $1" >&2; exit "${2:-1}"; }

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
	awk 'NR < 3 {next} !/^#/ {exit} {print}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	exit 0
fi
(( $# == 0 )) || die "no arguments expected (see --help)" 2
(( EUID == 0 )) || die "run as root (the VM loads kernel modules)"
for c in jq fio qemu-system-x86_64; do
	command -v "$c" > /dev/null || die "$c is not installed (make deps)"
done

mapfile -t systems < <(bench_select system "${RMBD_BENCH_SYSTEMS:-}" "${BENCH_ALL_SYSTEMS[@]}") || exit 2
mapfile -t jobs < <(bench_select job "${RMBD_BENCH_JOBS:-}" $(bench_all_jobs)) || exit 2
(( ${#systems[@]} && ${#jobs[@]} )) || die "nothing to run" 2

posint() {	# NAME VALUE
	[[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, not '$2'" 2
}
runs=${RMBD_BENCH_RUNS:-3};       posint RMBD_BENCH_RUNS "$runs"
swap_runs=${RMBD_BENCH_SWAP_RUNS:-7}; posint RMBD_BENCH_SWAP_RUNS "$swap_runs"
runtime=${RMBD_BENCH_RUNTIME:-3}; posint RMBD_BENCH_RUNTIME "$runtime"
ramp=${RMBD_BENCH_RAMP:-1}
[[ $ramp =~ ^[0-9]+$ ]] || die "RMBD_BENCH_RAMP must be a number of seconds" 2
queues=${RMBD_BENCH_QUEUES:-}; [[ -z $queues ]] || posint RMBD_BENCH_QUEUES "$queues"
depth=${RMBD_BENCH_DEPTH:-};   [[ -z $depth ]] || posint RMBD_BENCH_DEPTH "$depth"
pollq=${RMBD_BENCH_POLLQ:-1}
[[ $pollq =~ ^[0-9]+$ ]] || die "RMBD_BENCH_POLLQ must be a number" 2
size=$(numfmt --from=iec "${RMBD_BENCH_SIZE:-512M}" 2>/dev/null) ||
	die "RMBD_BENCH_SIZE: not a size: ${RMBD_BENCH_SIZE}" 2
(( size >= 64 << 20 && size % (1 << 20) == 0 )) ||
	die "RMBD_BENCH_SIZE must be a multiple of 1M and at least 64M" 2

net=${RMBD_BENCH_NET:-two}
[[ $net == two || $net == loop ]] || die "RMBD_BENCH_NET must be two or loop" 2
for v in RMBD_BENCH_RPS_TARGET RMBD_BENCH_RPS_CLIENT; do
	[[ ${!v:-0} =~ ^[0-9a-fA-F]{1,8}$ ]] || die "$v must be a CPU mask in hex, e.g. 2" 2
done
ceiling=${RMBD_BENCH_CEILING:-1}
[[ $ceiling == 0 || $ceiling == 1 ]] || die "RMBD_BENCH_CEILING must be 0 or 1" 2
mapfile -t ceil_points < <(bench_ceiling_points "${jobs[@]}")
(( ceiling )) || ceil_points=()
out=${RMBD_BENCH_OUT:-$repo/selftests/results/bench}
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)

for f in kmod/rmbd-target.ko kmod/rmbd-client.ko tools/rmbd; do
	[[ -e $repo/$f ]] || echo "bench: WARNING: $f is not built (make all); rmbd will be n/a" >&2
done
for c in nvme nbd-server nbd-client; do
	command -v "$c" > /dev/null ||
		echo "bench: WARNING: $c is not installed (make deps); its system will be n/a" >&2
done
if (( ${#ceil_points[@]} )); then
	command -v ib_read_bw > /dev/null ||
		echo "bench: WARNING: perftest is not installed (make deps); its ceiling will be n/a" >&2
	# The kernel verbs ceiling, against the kernel of the modules (KDIR
	# as in the top Makefile, or from the environment).
	make -s -C "$here/kverbs" ${KDIR:+KDIR="$KDIR"} > "$out/kverbs-build.log" 2>&1 ||
		echo "bench: WARNING: building tools/bench/kverbs failed (see $out/kverbs-build.log); its ceiling will be n/a" >&2
fi

# Memory: every system holds one device of RAM (the rmbd export, or a brd
# device; two exports for a system of two copies) plus the guest's own
# needs, and the failover job's two 64M exports.
mem=$(( 1024 + 128 ))
for s in "${systems[@]}"; do
	mem=$(( mem + (size >> 20) ))
	bench_is_mirror_system "$s" && mem=$(( mem + (size >> 20) ))
done
# The scaling section: one export of each size at a time, a shared one
# of 256M and up to 32 devices (some 8 MiB each, both ends).
scale=${RMBD_BENCH_SCALE:-}
if [[ -z $scale ]]; then
	scale=0
	[[ -z ${RMBD_BENCH_JOBS:-} || ${RMBD_BENCH_JOBS:-} == all ]] && scale=1
fi
[[ $scale == 0 || $scale == 1 ]] || die "RMBD_BENCH_SCALE must be 0 or 1" 2
scale_sizes=() scale_max=0
if (( scale )); then
	list=${RMBD_BENCH_SCALE_SIZES:-64M,256M,1G,4G}
	for v in ${list//,/ }; do
		b=$(numfmt --from=iec "$v" 2>/dev/null) || die "RMBD_BENCH_SCALE_SIZES: not a size: $v" 2
		(( b >= 4 << 20 && b % (2 << 20) == 0 )) ||
			die "RMBD_BENCH_SCALE_SIZES: $v is not a multiple of 2M of at least 4M" 2
		scale_sizes+=("$b")
	done
	mapfile -t scale_sizes < <(printf '%s\n' "${scale_sizes[@]}" | sort -n -u)
	for v in ${RMBD_BENCH_SCALE_DEVICES:-}; do
		[[ $v =~ ^[1-9][0-9]{0,2}$ ]] || die "RMBD_BENCH_SCALE_DEVICES: not a device count: $v" 2
	done
	for v in ${RMBD_BENCH_SCALE_QD:-}; do
		[[ $v =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || die "RMBD_BENCH_SCALE_QD: not QUEUESxDEPTH: $v" 2
	done
	if [[ -z ${RMBD_VM_MEM:-} ]]; then
		# The host must hold the VM: the largest sizes go when it
		# cannot (QEMU allocates on touch, the exports touch it all).
		avail=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
		while (( ${#scale_sizes[@]} )) &&
		      (( mem + 768 + (scale_sizes[-1] >> 20) > avail - 1024 )); do
			echo "bench: scaling: the host has $avail MiB available, too little for a VM with a $(( scale_sizes[-1] >> 20 )) MiB export; leaving that size out" >&2
			unset 'scale_sizes[-1]'
		done
	fi
	(( ${#scale_sizes[@]} )) && scale_max=${scale_sizes[-1]}
	[[ -z ${RMBD_VM_MEM:-} ]] && mem=$(( mem + 768 + (scale_max >> 20) ))
	[[ ${RMBD_BENCH_SCALE_DEVMEM:-1} =~ ^[1-9][0-9]?$ ]] ||
		die "RMBD_BENCH_SCALE_DEVMEM must be a number of devices, 1 to 99" 2
fi
export RMBD_VM_MEM=${RMBD_VM_MEM:-${mem}M}
[[ ${RMBD_BENCH_LOSS:-10} =~ ^[1-9][0-9]{0,2}$ ]] ||
	die "RMBD_BENCH_LOSS must be a number of seconds, 1 to 999" 2

# Time: boot and setup, writing each device once (the network systems do
# some 30 MB/s under TCG; for the fio jobs only), then one fio process per
# job run (~3 s to start under TCG) with a section per system (~1 s of its
# own); a swap job runs swapverify once per run on each swap system and
# without a limit, and once more each to warm up, some 15 s each under
# TCG with mkswap and swapoff.
nfio=0 nswap=0 swap_sys=1 nfo=0
for j in "${jobs[@]}"; do
	if [[ $(bench_job_field "$j" 2) == failover ]]; then
		nfo=$(( nfo + 1 ))
	elif [[ $(bench_job_field "$j" 2) == swap ]]; then
		nswap=$(( nswap + 1 ))
		mib=$(bench_swap_mib "$j")
		(( size >> 20 >= mib )) ||
			die "RMBD_BENCH_SIZE must be at least ${mib}M for the $j job (its working set)" 2
	else
		nfio=$(( nfio + 1 ))
	fi
done
for s in "${systems[@]}"; do
	for a in "${BENCH_SWAP_SYSTEMS[@]}"; do
		[[ $s == "$a" ]] && swap_sys=$(( swap_sys + 1 ))
	done
done
estimate=$(( 60 + ${#systems[@]} * ((nfio > 0) * size / 30000000 + 5) +
	nfio * runs * (3 + ${#systems[@]} * (ramp + runtime + 1)) +
	nswap * (swap_runs + 1) * swap_sys * 15 +
	nfo * runs * 2 * (${RMBD_BENCH_LOSS:-10} + 8 + 15) +
	scale * (150 + ${#scale_sizes[@]} * 20 + (scale_max >> 20) / 100) +
	${#ceil_points[@]} * runs * ${#BENCH_CEILING_TOOLS[@]} * (BENCH_CEILING_SECONDS + 4) ))
tmo=$(( estimate * 2 + 300 ))

# run-vm.sh runs scripts from inside the work tree only: a small generated
# wrapper carries the settings and the timeout into the guest.
jobdir=$repo/selftests/results/.bench-job
mkdir -p "$jobdir"
wrapper=$jobdir/bench.sh
{
	echo '#!/bin/bash'
	echo "# Generated by tools/bench/run.sh; the guest runs it."
	echo "# timeout=$tmo"
	printf 'export RMBD_BENCH_SYSTEMS=%q\n' "${systems[*]}"
	printf 'export RMBD_BENCH_JOBS=%q\n' "${jobs[*]}"
	printf 'export RMBD_BENCH_RUNS=%q RMBD_BENCH_RUNTIME=%q RMBD_BENCH_RAMP=%q\n' "$runs" "$runtime" "$ramp"
	printf 'export RMBD_BENCH_SWAP_RUNS=%q\n' "$swap_runs"
	printf 'export RMBD_BENCH_SIZE=%q RMBD_BENCH_QUEUES=%q RMBD_BENCH_DEPTH=%q RMBD_BENCH_POLLQ=%q\n' \
		"$size" "$queues" "$depth" "$pollq"
	printf 'export RMBD_BENCH_NET=%q\n' "$net"
	printf 'export RMBD_BENCH_SCALE=%q RMBD_BENCH_SCALE_SIZES=%q\n' "$scale" "${scale_sizes[*]}"
	for v in RMBD_BENCH_SCALE_DEVICES RMBD_BENCH_SCALE_QD RMBD_BENCH_SCALE_DEVMEM RMBD_BENCH_SCALE_TRACE; do
		[[ -n ${!v:-} ]] && printf 'export %s=%q\n' "$v" "${!v}"
	done
	printf 'export RMBD_BENCH_CEILING=%q\n' "$ceiling"
	[[ -n ${RMBD_BENCH_LOSS:-} ]] && printf 'export RMBD_BENCH_LOSS=%q\n' "$RMBD_BENCH_LOSS"
	[[ -n ${RMBD_BENCH_RPS_TARGET:-} ]] && printf 'export RMBD_BENCH_RPS_TARGET=%q\n' "$RMBD_BENCH_RPS_TARGET"
	[[ -n ${RMBD_BENCH_RPS_CLIENT:-} ]] && printf 'export RMBD_BENCH_RPS_CLIENT=%q\n' "$RMBD_BENCH_RPS_CLIENT"
	printf 'exec bash %q\n' "$here/guest.sh"
} > "$wrapper"

commit=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
dirty=false
[[ -n $(git -C "$repo" status --porcelain --untracked-files=no -- kmod lib tools uapi 2>/dev/null) ]] && dirty=true
accel=TCG
[[ ${RMBD_VM_KVM:-0} == 1 ]] && accel=KVM
start=$(date +%s)
jq -n --arg commit "$commit" --argjson dirty "$dirty" \
	--arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	--arg cpu "$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)" \
	--argjson cpus "$(nproc)" --arg accel "$accel" \
	--arg qemu "$(qemu-system-x86_64 --version | head -n 1)" \
	--arg vm_mem "$RMBD_VM_MEM" --arg vm_smp "${RMBD_VM_SMP:-2}" \
	'{commit: $commit, dirty: $dirty, date: $date, host_cpu: $cpu,
	  host_cpus: $cpus, accel: $accel, qemu: $qemu, vm_mem: $vm_mem,
	  vm_smp: $vm_smp}' > "$out/host.json"

echo "bench: commit $commit$([[ $dirty == true ]] && echo ' (modified)'), systems: ${systems[*]}"
echo "bench: jobs: ${jobs[*]}"
what=
(( nfio )) && what+="$runs x (${ramp}+${runtime} s) per fio job and system, "
(( nswap )) && what+="$swap_runs runs of the swap job per system, "
(( ${#ceil_points[@]} )) && what+="${#ceil_points[@]} ceiling points, "
echo "bench: $what$(( size >> 20 )) MiB devices, VM $RMBD_VM_MEM ${RMBD_VM_SMP:-2} vCPUs ($accel), network $net"
(( scale )) && echo "bench: scaling: export sizes $(for v in "${scale_sizes[@]}"; do printf '%sM ' $(( v >> 20 )); done)"
echo "bench: about $(( (estimate + 59) / 60 )) minutes"

# The VM's results directory: emptied here so that nothing of an earlier
# run can pass for this one's.
vmres=$out/vm
if [[ -e $vmres ]]; then
	[[ -f $vmres/.rmbd-vm-results || -f $vmres/job ]] ||
		die "$vmres exists and is not a VM results directory; not touching it"
	rm -rf "$vmres"
fi
rm -f "$out/bench.json" "$out/bench.txt" "$out/bench.png" "$out/bench.svg" \
	"$out/scaling.png" "$out/scaling.svg"
RMBD_RESULTS=$vmres "$repo/selftests/vm/run-vm.sh" --raw "$wrapper" 2>&1 |
	grep --line-buffered -v -e '^KTAP version' -e '^1\.\.[0-9]*$' | tee "$out/run.log"
vmrc=${PIPESTATUS[0]}
elapsed=$(( $(date +%s) - start ))
# The VM's own time, from boot to power-off: elapsed less any wait for
# another VM to finish (run-vm.sh runs one at a time).
vm_s=$(sed -n 's/^\(not \)\{0,1\}ok [0-9]* vm # \([0-9]*\) s$/\2/p' "$out/run.log" | tail -n 1)
jq --argjson s "$elapsed" --argjson v "${vm_s:-null}" '. + {elapsed_s: $s, vm_s: $v}' \
	"$out/host.json" > "$out/host.json.tmp" &&
	mv "$out/host.json.tmp" "$out/host.json"

rc=0
"$here/report.sh" "$out" || rc=1

# The VM's own verdict: a timeout, a crash or kernel errors during the run.
if (( vmrc != 0 )); then
	echo
	echo "bench: the VM run did not pass (run-vm.sh exit $vmrc):"
	grep -aE '^(not ok|# )' "$out/run.log" | grep -avE '^# (results in|run-vm: waiting|guest: kernel|link rxe)' |
		tail -n 30 | sed 's/^/bench:   /'
	if [[ ! -f $vmres/done ]]; then
		echo "bench: FAIL: the VM did not finish (see $vmres/console.log)"
		rc=1
	elif grep -aq '^# kernel errors during' "$out/run.log"; then
		# Not a user-space fault ("traps: PROG[PID] general protection
		# fault ..."): perftest's own crash is a failed ceiling point.
		if grep -av '^\[[ 0-9.]*\] traps: ' "$vmres/bench.dmesg" 2>/dev/null |
				grep -aE 'WARNING:|BUG:|Oops|general protection|blocked for more than|Call Trace' -A 40 |
				grep -aq 'rmbd'; then
			echo "bench: FAIL: kernel errors that involve rmbd (see $vmres/bench.dmesg)"
			rc=1
		else
			echo "bench: kernel errors during the run, none naming rmbd (see $vmres/bench.dmesg)"
		fi
	elif grep -aq '^not ok 1 bench # TIMEOUT' "$out/run.log"; then
		echo "bench: FAIL: the benchmark timed out in the VM"
		rc=1
	fi
fi
files="bench.json, bench.txt"
for f in bench.png bench.svg scaling.png scaling.svg; do
	[[ -f $out/$f ]] && files+=", $f"
done
echo "bench: $(( elapsed / 60 )) min $(( elapsed % 60 )) s$([[ -n $vm_s ]] &&
	echo " (the VM $(( vm_s / 60 )) min $(( vm_s % 60 )) s)"); results in $out ($files, vm/)"
if (( rc )); then
	echo "bench: FAIL"
fi
exit "$rc"
exit
}
