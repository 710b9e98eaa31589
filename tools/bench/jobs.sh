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
JOBS
}

# rmbd first: the others are the peers it is measured against.
BENCH_ALL_SYSTEMS=(rmbd nvme-rdma nbd brd)

# The systems with a device to swap to (brd is the local RAM disk: not
# one of the remote swaps compared), and the baseline row of a swap job.
BENCH_SWAP_SYSTEMS=(rmbd nvme-rdma nbd)
BENCH_SWAP_BASELINE=no-limit

bench_all_jobs() { bench_jobs_table | awk -F' *[|] *' '{print $1}'; }

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
