# SPDX-License-Identifier: GPL-2.0
#
# The benchmark's fio jobs and the systems it compares, sourced by run.sh
# (host) and guest.sh (VM).  One job a line:
#
#   NAME | KIND | DESCRIPTION | FIO ARGUMENTS
#
# KIND says which figure the job is about: "lat" (a QD1 job: the mean
# latency is compared as well as IOPS), "iops", or "bw" (1M jobs: MB/s).
# guest.sh adds --direct=1, the device, the ramp and run time and the JSON
# output options to every job.
#
# Jobs named mirror-* run on a mirror of two legs (rmbd-mirror), against
# rmbd's single leg and md raid1 over two single-leg rmbd devices
# (md-raid1); the other fio jobs on rmbd and its peers.  KIND "failover"
# runs its fio arguments on a fresh rmbd-mirror and md-raid1 device per
# run while the second copy's target falls silent (guest.sh); the figure
# is the longest I/O stall.
#
# KIND "swap" is not fio: its arguments are selftests/vm/swapverify's, and
# guest.sh runs that program in a cgroup whose memory.max is half its
# working set (-m), with each system's device in turn as the only swap,
# and once with no memory limit (the "no-limit" row).  The figure is the
# completion time.

bench_jobs_table() {
	cat <<'JOBS'
randread-qd1       | lat  | 4k random read, QD1, libaio              | --ioengine=libaio --rw=randread --bs=4k --iodepth=1
randread-qd16      | iops | 4k random read, QD16, libaio             | --ioengine=libaio --rw=randread --bs=4k --iodepth=16
randwrite-qd1      | lat  | 4k random write, QD1, libaio             | --ioengine=libaio --rw=randwrite --bs=4k --iodepth=1
randwrite-qd16     | iops | 4k random write, QD16, libaio            | --ioengine=libaio --rw=randwrite --bs=4k --iodepth=16
randread-qd1-hipri | lat  | 4k random read, QD1, io_uring, polled    | --ioengine=io_uring --hipri=1 --rw=randread --bs=4k --iodepth=1
seqread-1m-qd4     | bw   | 1M sequential read, QD4, libaio          | --ioengine=libaio --rw=read --bs=1M --iodepth=4
seqwrite-1m-qd4    | bw   | 1M sequential write, QD4, libaio         | --ioengine=libaio --rw=write --bs=1M --iodepth=4
randrw-qd16x2      | iops | 4k random 70/30 read/write, QD16, 2 jobs | --ioengine=libaio --rw=randrw --rwmixread=70 --bs=4k --iodepth=16 --numjobs=2 --group_reporting
swap               | swap | swapverify under memory.max = half of it  | -m 48 -p 1 -n
mirror-randread-qd16   | iops | 4k random read, QD16, two copies  | --ioengine=libaio --rw=randread --bs=4k --iodepth=16
mirror-randwrite-qd16  | iops | 4k random write, QD16, two copies | --ioengine=libaio --rw=randwrite --bs=4k --iodepth=16
mirror-seqread-1m-qd4  | bw   | 1M sequential read, QD4, two copies  | --ioengine=libaio --rw=read --bs=1M --iodepth=4
mirror-seqwrite-1m-qd4 | bw   | 1M sequential write, QD4, two copies | --ioengine=libaio --rw=write --bs=1M --iodepth=4
failover           | failover | 4k random 70/30 r/w, QD1, a copy lost | --ioengine=libaio --rw=randrw --rwmixread=70 --bs=4k --iodepth=1
JOBS
}

# The raw RDMA ceiling (RMBD_BENCH_CEILING, default on): one point a
# line, the RDMA operation, its size and the number outstanding, the rmbd
# job it is the ceiling of, and how the next operation is posted: "poll"
# by whatever sees a completion, at once (perftest polls its CQ, kverbs
# reposts from the completion handler), "wait" by a submitter that sleeps
# until each one completes, as fio does at QD1 without --hipri (perftest
# ib_read_lat -e, kverbs wait=1).  guest.sh measures each point whose job
# is selected over the same soft-RoCE path as the systems, with perftest
# (user-space verbs; ib_read_lat for the QD1 points) and with
# tools/bench/kverbs (kernel verbs).
#
#   NAME | OP | SIZE | DEPTH | JOB | POST
bench_ceiling_table() {
	cat <<'POINTS'
read-4k-qd16     | read  | 4096    | 16 | randread-qd16      | poll
write-4k-qd16    | write | 4096    | 16 | randwrite-qd16     | poll
read-4k-qd1      | read  | 4096    | 1  | randread-qd1-hipri | poll
read-4k-qd1-wait | read  | 4096    | 1  | randread-qd1       | wait
read-1m-qd4      | read  | 1048576 | 4  | seqread-1m-qd4     | poll
write-1m-qd4     | write | 1048576 | 4  | seqwrite-1m-qd4    | poll
POINTS
}

# The tools that measure the ceiling, and the seconds of one measurement.
BENCH_CEILING_TOOLS=(perftest kernel)
BENCH_CEILING_SECONDS=2

# bench_ceiling_points JOB...: the points of the ceiling of the JOBs, one
# line each: NAME OP SIZE DEPTH JOB POST.
bench_ceiling_points() {
	local jobs=" $* "
	bench_ceiling_table | awk -F' *[|] *' '{print $1, $2, $3, $4, $5, $6}' |
		while read -r n o s d j w; do
			[[ $jobs == *" $j "* ]] && echo "$n $o $s $d $j $w"
		done
	return 0
}

# rmbd first: the others are the peers it is measured against.  Then the
# two systems of two copies: rmbd's mirror, and md raid1 over two rmbd
# devices.
BENCH_ALL_SYSTEMS=(rmbd nvme-rdma nbd brd rmbd-mirror md-raid1)
BENCH_MIRROR_SYSTEMS=(rmbd-mirror md-raid1)

# The systems with a device to swap to (brd is the local RAM disk: not
# one of the remote swaps compared), and the baseline row of a swap job.
BENCH_SWAP_SYSTEMS=(rmbd nvme-rdma nbd)
BENCH_SWAP_BASELINE=no-limit

bench_all_jobs() { bench_jobs_table | awk -F' *[|] *' '{print $1}'; }

bench_is_mirror_system() {	# SYSTEM
	[[ " ${BENCH_MIRROR_SYSTEMS[*]} " == *" $1 "* ]]
}

# bench_job_subject NAME: the system job NAME measures (the one its
# ratios are of): rmbd-mirror for the mirror and failover jobs, else rmbd.
bench_job_subject() {
	if [[ $1 == mirror-* || $(bench_job_field "$1" 2) == failover ]]; then
		echo rmbd-mirror
	else
		echo rmbd
	fi
}

# bench_job_systems NAME SYSTEM...: the SYSTEMs job NAME runs on, one a
# line: a mirror job's are rmbd-mirror, rmbd and md-raid1; a failover
# job's the two systems of two copies; a swap job's those with a device
# to swap to (its baseline row is not a system); the other fio jobs' the
# rest.
bench_job_systems() {
	local j=$1 s a kind
	shift
	kind=$(bench_job_field "$j" 2)
	for s in "$@"; do
		if [[ $kind == swap ]]; then
			for a in "${BENCH_SWAP_SYSTEMS[@]}"; do
				[[ $s == "$a" ]] && echo "$s"
			done
		elif [[ $kind == failover ]]; then
			bench_is_mirror_system "$s" && echo "$s"
		elif [[ $j == mirror-* ]]; then
			{ bench_is_mirror_system "$s" || [[ $s == rmbd ]]; } && echo "$s"
		else
			bench_is_mirror_system "$s" || echo "$s"
		fi
	done
	return 0
}

# bench_job_base NAME: for a mirror job, the one-leg job with the same
# fio arguments (mirror-randread-qd16: randread-qd16), whose rmbd runs
# are its rmbd row when both run; else nothing.
bench_job_base() {
	local b=${1#mirror-}
	[[ $1 == mirror-* && -n $(bench_job_field "$b" 4) &&
	   $(bench_job_field "$b" 4) == "$(bench_job_field "$1" 4)" ]] && echo "$b"
	return 0
}

# bench_job_field NAME N: field N of job NAME (2 kind, 3 description,
# 4 fio arguments).
bench_job_field() {
	bench_jobs_table | awk -F' *[|] *' -v n="$1" -v f="$2" '$1 == n {print $f}'
}

# bench_swap_mib NAME: the working set (swapverify -m) of swap job NAME, in MiB.
bench_swap_mib() {
	bench_job_field "$1" 4 | sed -n 's/.*-m *\([0-9][0-9]*\).*/\1/p'
}

# bench_select WHAT LIST ALL...: print the names in LIST (comma or space
# separated; empty or "all" means ALL) one a line, in the order of ALL.
# Fails on a name not in ALL.
bench_select() {
	local what=$1 list=$2 n a ok
	shift 2
	list=${list//,/ }
	if [[ -z ${list// /} || $list == all ]]; then
		printf '%s\n' "$@"
		return 0
	fi
	for n in $list; do
		ok=0
		for a in "$@"; do
			[[ $n == "$a" ]] && ok=1
		done
		if (( !ok )); then
			echo "bench: unknown $what '$n' (one of: $*)" >&2
			return 1
		fi
	done
	for a in "$@"; do
		for n in $list; do
			if [[ $n == "$a" ]]; then
				printf '%s\n' "$a"
				break
			fi
		done
	done
}
