#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The VM side of the benchmark, started by tools/bench/run.sh through
# selftests/vm/run-vm.sh (soft-RoCE rxe0 on d0 and the rmbd modules are
# already set up).  It sets up every selected system on a device of the
# same size, writes each device fully once, runs every fio job RUNS times
# on each (the systems take turns, so each system's runs are spread over
# the same stretch of time) and leaves fio's JSON output in the results
# share, under bench/:
#
#   env.json              kernel, vCPUs, memory, rxe MTU, fio version
#   systems/SYSTEM.json   {status: ok|n/a, reason, device, queues, ...}
#   fio/SYSTEM/JOB.RUN.json   fio --output-format=json of one run
#   fio/SYSTEM/JOB.RUN.err    fio's stderr; .failed when the run failed
#   swap/SYSTEM/JOB.RUN.json  a swap job's run: completion time, exit
#                             status, pswpout/pswpin; .failed when it failed
#   swap/SYSTEM/JOB.RUN.log   swapverify's output (RUN warm-up: the run
#                             before the counted ones)
#
# The systems:
#   rmbd       export on the rmbd target, rmbd dev connect over rxe0
#   nvme-rdma  nvmet-rdma exporting a brd device (configfs), nvme connect
#              over rxe0
#   nbd        nbd-server exporting a brd device on loopback TCP, nbd-client
#   brd        the RAM disk itself: the local limit
#
# Settings come from the environment (run.sh sets them): RMBD_BENCH_SYSTEMS,
# RMBD_BENCH_JOBS, RMBD_BENCH_RUNS, RMBD_BENCH_RUNTIME, RMBD_BENCH_RAMP,
# RMBD_BENCH_SIZE (bytes), RMBD_BENCH_QUEUES, RMBD_BENCH_DEPTH,
# RMBD_BENCH_POLLQ, RMBD_BENCH_CEILING; RMBD_BENCH_SCALE=1 runs the
# scaling section after the jobs (tools/bench/scale.sh, its settings
# RMBD_BENCH_SCALE_*), results under scale/.
#
# A system that cannot be set up is recorded as n/a with the reason and
# the others still run.  Exit status 1 when rmbd was selected and failed
# (setup, a fio run, or a device that is not live at the end).

set -u

# Parsed whole before it runs, so editing this file cannot derail a run.
{

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tools/bench/jobs.sh
source "$here/jobs.sh"
RMBD_REPO=$repo
# shellcheck source=selftests/vm/tests/lib.sh
source "$repo/selftests/vm/tests/lib.sh"

size=${RMBD_BENCH_SIZE:-536870912}
runs=${RMBD_BENCH_RUNS:-3}
swap_runs=${RMBD_BENCH_SWAP_RUNS:-7}
runtime=${RMBD_BENCH_RUNTIME:-3}
ramp=${RMBD_BENCH_RAMP:-1}
queues=${RMBD_BENCH_QUEUES:-}
depth=${RMBD_BENCH_DEPTH:-}
pollq=${RMBD_BENCH_POLLQ:-0}
# The systems of two copies: the loss timeout of their rmbd devices, and
# for the failover job the size of its devices, its fio run time and when
# in it the second copy's target falls silent.
loss_timeout=${RMBD_BENCH_LOSS:-10}
fo_size=64M
fo_runtime=$(( loss_timeout + 8 ))
fo_kill_at=4
mapfile -t systems < <(bench_select system "${RMBD_BENCH_SYSTEMS:-}" "${BENCH_ALL_SYSTEMS[@]}") || exit 2
mapfile -t jobs < <(bench_select job "${RMBD_BENCH_JOBS:-}" $(bench_all_jobs)) || exit 2

nvme_nqn=nqn.2014-08.org.nvmexpress:rmbd-bench
nvme_port=4420
nbd_port=10809
nbd_dev=/dev/nbd0

# The writable share run-vm.sh mounts for results.
share=$(awk '$1 == "rmbdout" && $3 == "9p" {print $2; exit}' /proc/mounts)
if [[ -z $share ]]; then
	echo "bench: the results share is not mounted" >&2
	exit 1
fi
res=$share/bench
rm -rf "$res"
mkdir -p "$res/systems" "$res/fio"

say() { printf 'bench: %s\n' "$*"; }

declare -A dev=() reason=()

# na SYSTEM WHY: mark SYSTEM as not available; the table shows n/a.
na() {
	reason[$1]=$2
	unset "dev[$1]"
	say "$1: n/a: $2"
}

# try WHAT CMD...: run CMD, and on failure set $why to WHAT and its output.
why=
try() {
	local what=$1 o rc=0
	shift
	o=$("$@" 2>&1) || rc=$?
	if (( rc != 0 )); then
		why="$what failed (exit $rc): $(printf '%s' "$o" | tr '\n' ' ' | cut -c1-300)"
		return 1
	fi
	[[ -n $o ]] && printf '%s\n' "$o"
	return 0
}

wait_for() {	# SECONDS CMD...
	local t=$1 i
	shift
	for (( i = 0; i < t * 10; i++ )); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

has_pollq() { "$RMBD_BIN" dev help 2>&1 | grep -qw pollq; }

# ---- the network -------------------------------------------------------

# "two" (the default): two soft-RoCE devices on the two ends of a veth
# pair, rxe_c on c0 (the client side, $net_client) and rxe_t on t0 (the
# target side, $RMBD_ADDR), with policy routes that send the traffic
# between the two addresses through the pair instead of the loopback
# shortcut, and the target end's receive processing steered (RPS) to the
# last CPU.  Every system's servers listen on the target address.  That
# is closer to two machines than one device talking to itself: there,
# soft-RoCE does both ends' packet work (copies and ICRCs) inline on the
# CPU that posts, while nbd's server and nvmet run on any CPU.
# "loop": rxe0 on the dummy d0, one address for both ends, as the tests.
net=${RMBD_BENCH_NET:-two}
net_client=$RMBD_ADDR
rps_target=${RMBD_BENCH_RPS_TARGET:-$(printf '%x' $(( 1 << ($(nproc) - 1) )))}
rps_client=${RMBD_BENCH_RPS_CLIENT:-0}

# Pair N of the "two" network: cN and tN (pair 0: rxe_c on c0, rxe_t on
# t0; pair 1, the second copy's path: rxe_c1 on c1, rxe_t1 on t1), the
# client's end 10.20(1+N).0.1, the target's .2.
setup_net_pair() {	# N
	local n=$1 c=10.$(( 201 + $1 )).0.1 t=10.$(( 201 + $1 )).0.2 i sfx=
	(( n > 0 )) && sfx=$n
	ip link add c$n mtu 4500 type veth peer name t$n mtu 4500 || return 1
	ip addr add $c/24 dev c$n && ip addr add $t/24 dev t$n || return 1
	ip link set c$n up && ip link set t$n up || return 1
	for i in all default c$n t$n; do
		sysctl -q -w "net.ipv4.conf.$i.accept_local=1" "net.ipv4.conf.$i.rp_filter=0" || return 1
	done
	# Locally sent packets to either address leave through the pair
	# (tables 201 and 202 for pair 0); packets coming in on it are
	# delivered (the local table, looked up after them).
	ip route add $t dev c$n src $c table $(( 201 + 2 * n )) &&
	ip route add $c dev t$n src $t table $(( 202 + 2 * n )) &&
	ip rule add pref $(( 10 + 2 * n )) iif lo to $t lookup $(( 201 + 2 * n )) &&
	ip rule add pref $(( 11 + 2 * n )) iif lo to $c lookup $(( 202 + 2 * n )) || return 1
	echo "$rps_target" > /sys/class/net/t$n/queues/rx-0/rps_cpus &&
	echo "$rps_client" > /sys/class/net/c$n/queues/rx-0/rps_cpus || return 1
	rdma link add rxe_c$sfx type rxe netdev c$n &&
	rdma link add rxe_t$sfx type rxe netdev t$n || return 1
	pair_client=$c pair_target=$t
}

setup_net_two() {
	setup_net_pair 0 || return 1
	ip rule add pref 100 lookup local &&
	ip rule del pref 0 lookup local || return 1
	net_client=$pair_client
	RMBD_ADDR=$pair_target
	if (( need_second )); then
		setup_net_pair 1 || return 1
		target2=$pair_target
	fi
	if (( need_fo )); then
		setup_net_pair 2 || return 1
		target_fo=$pair_target
	fi
}

# The second copy's path, for the systems of two copies: with "two", the
# second veth pair; with "loop", rxe1 on a second dummy netdev (d2).  The
# failover job's second copies have a path of their own (the third pair;
# rxe2 on d3), which it silences.
need_second=0 need_fo=0
for s in "${systems[@]}"; do
	bench_is_mirror_system "$s" && need_second=1
done
for j in "${jobs[@]}"; do
	[[ $(bench_job_field "$j" 2) == failover ]] && need_fo=$need_second
done
target2= target_fo=

case $net in
two)	setup_net_two || { echo "bench: setting up the veth pairs failed" >&2; exit 1; } ;;
loop)
	if (( need_second )); then
		{ ip link add d2 mtu 4500 type dummy &&
		  ip addr add "$RMBD_ADDR2/24" dev d2 && ip link set d2 up &&
		  rdma link add rxe1 type rxe netdev d2; } ||
			{ echo "bench: setting up rxe1 on d2 failed" >&2; exit 1; }
		target2=$RMBD_ADDR2
	fi
	if (( need_fo )); then
		{ ip link add d3 mtu 4500 type dummy &&
		  ip addr add "$RMBD_ADDR3/24" dev d3 && ip link set d3 up &&
		  rdma link add rxe2 type rxe netdev d3; } ||
			{ echo "bench: setting up rxe2 on d3 failed" >&2; exit 1; }
		target_fo=$RMBD_ADDR3
	fi
	;;
*)	echo "bench: RMBD_BENCH_NET must be two or loop" >&2; exit 2 ;;
esac

# ---- environment -------------------------------------------------------

rxe_dev=rxe0 net_dev=d0
[[ $net == two ]] && rxe_dev=rxe_c net_dev=c0
rxe_mtu=$(ibv_devinfo -d $rxe_dev 2>/dev/null | awk '/active_mtu/ {print $2; exit}')
jq -n \
	--arg kernel "$(uname -r)" \
	--argjson vcpus "$(nproc)" \
	--argjson mem_kb "$(awk '/^MemTotal/ {print $2}' /proc/meminfo)" \
	--arg rxe_mtu "${rxe_mtu:-unknown}" \
	--arg netdev_mtu "$(cat /sys/class/net/$net_dev/mtu 2>/dev/null || echo unknown)" \
	--arg net "$net" --arg client "$net_client" --arg target "$RMBD_ADDR" --arg rps_target "$rps_target" --arg rps_client "$rps_client" \
	--arg fio "$(fio --version 2>/dev/null)" \
	--arg rdma_link "$(rdma link show 2>/dev/null | head -n 1)" \
	--arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	--argjson size "$size" --argjson runs "$runs" --argjson swap_runs "$swap_runs" \
	--argjson runtime "$runtime" --argjson ramp "$ramp" \
	--arg queues "$queues" --arg depth "$depth" --argjson pollq "$pollq" \
	--argjson loss "$loss_timeout" \
	--argjson ceiling "$([[ ${RMBD_BENCH_CEILING:-1} == 1 ]] && echo true || echo false)" \
	--argjson ceil_s "$BENCH_CEILING_SECONDS" \
	--argjson rmbd_pollq "$(has_pollq && echo true || echo false)" \
	--arg systems "${systems[*]}" --arg jobs "${jobs[*]}" \
	'{kernel: $kernel, vcpus: $vcpus, mem_kb: $mem_kb, rxe_mtu: $rxe_mtu,
	  netdev_mtu: $netdev_mtu, net: $net, client_addr: $client,
	  target_addr: $target,
	  rps_target: (if $net == "two" then $rps_target else null end),
	  rps_client: (if $net == "two" then $rps_client else null end), fio: $fio, rdma_link: $rdma_link,
	  date: $date, device_size: $size, runs: $runs, swap_runs: $swap_runs, runtime_s: $runtime,
	  ramp_s: $ramp, queues: $queues, depth: $depth, pollq: $pollq,
	  loss_timeout_s: $loss, ceiling: $ceiling, ceiling_s: $ceil_s,
	  rmbd_has_pollq: $rmbd_pollq, systems: ($systems / " "),
	  jobs: ($jobs / " ")}' > "$res/env.json"
say "kernel $(uname -r), $(nproc) vCPUs, $(awk '/^MemTotal/ {print int($2/1024) " MiB"}' /proc/meminfo), $rxe_dev active MTU ${rxe_mtu:-unknown} ($net_dev MTU $(cat /sys/class/net/$net_dev/mtu 2>/dev/null)), network $net"
say "systems: ${systems[*]}; jobs: ${jobs[*]}"
say "device size $(( size >> 20 )) MiB, $runs runs of ${ramp}+${runtime} s per fio job and system, $swap_runs runs of a swap job"

# ---- the raw RDMA ceiling ----------------------------------------------

# Before the systems are set up, over the same soft-RoCE path: the server
# (passive) side on the target's device and address, the client (active)
# side on the client's.  For each point of the selected jobs
# (jobs.sh), RUNS times, the two tools in turns:
#   perftest  ib_read_bw / ib_write_bw (-t DEPTH, and -o DEPTH for
#             reads), ib_read_lat for the QD1 points (-e, sleeping on
#             completion events, for the "wait" one); rdma_cm (-R), the
#             server pinned to the target end's CPUs as nbd-server
#   kernel    tools/bench/kverbs (rmbd_kverbs.ko): kernel verbs, no system
#             call per post, completions in softirq as rmbd's; for the
#             "wait" point posted by this shell's write, which sleeps
#             until each one completes (wait=1)
# Each run leaves ceiling/TOOL/POINT.RUN.json ({ops_per_s, mbps, lat_us})
# or .failed, and the tool's output in .log.
ceiling=${RMBD_BENCH_CEILING:-1}
ceil_s=$BENCH_CEILING_SECONDS
kverbs_ko=$repo/tools/bench/kverbs/rmbd_kverbs.ko
kverbs_run=/sys/kernel/debug/rmbd_kverbs/run
perftest_port=18515
kverbs_port=20886
ceil_sdev=rxe0 ceil_cdev=rxe0
[[ $net == two ]] && ceil_sdev=rxe_t ceil_cdev=rxe_c
declare -A ceil_na=()

ceil_fail() {	# OUT TOOL WHY
	echo "$3" > "$1.failed"
	say "ceiling $pt run $r $2: FAILED: $3"
	return 1
}

# ceil_perftest OUT OP SIZE DEPTH POST
ceil_perftest() {
	local out=$1 op=$2 sz=$3 qd=$4 post=$5 prog args=() srv=() spid rc=0 k line
	if [[ $op == read && $qd == 1 ]]; then
		prog=ib_read_lat args=(-s "$sz")
		[[ $post == wait ]] && args+=(-e)
	elif [[ $post == wait ]]; then
		ceil_fail "$out" perftest "no perftest program waits for each $op at depth $qd"
		return 1
	else
		prog=ib_${op}_bw args=(-s "$sz" -t "$qd")
		[[ $op == read ]] && args+=(-o "$qd")
	fi
	# It has no duration mode with events: a count of READs that takes
	# about the seconds at the 180 to 250 us each takes in this VM.
	if [[ $post == wait ]]; then
		args+=(-n $(( ceil_s * 4500 )))
	else
		args+=(-D "$ceil_s")
	fi
	args+=(-R -F -p "$perftest_port")
	[[ $net == two ]] && srv=(taskset "$rps_target")
	rm -f "$out.json" "$out.failed"
	# Line-buffered: its banner says when it is about to listen.
	"${srv[@]}" timeout -k 5 $(( ceil_s + 60 )) stdbuf -oL "$prog" -d "$ceil_sdev" "${args[@]}" \
		> "$out.server.log" 2>&1 &
	spid=$!
	for (( k = 0; k < 50; k++ )); do
		grep -q 'Waiting for client' "$out.server.log" 2> /dev/null && break
		kill -0 "$spid" 2> /dev/null || break
		sleep 0.2
	done
	# The client does not retry a refused connection: try it again while
	# the server waits.
	for (( k = 0; k < 3; k++ )); do
		sleep 0.5
		rc=0
		timeout -k 5 $(( ceil_s + 60 )) "$prog" -d "$ceil_cdev" "${args[@]}" \
			--source_ip "$net_client" "$RMBD_ADDR" > "$out.log" 2>&1 || rc=$?
		(( rc != 0 )) && kill -0 "$spid" 2> /dev/null || break
	done
	kill "$spid" 2> /dev/null
	wait "$spid" 2> /dev/null
	(( rc == 0 )) ||
		{ ceil_fail "$out" perftest "$prog exit $rc: $(grep -v '^[ -]*$' "$out.log" | tail -n 3 | tr '\n' ' ' | cut -c1-300)"; return 1; }
	# The line after the header: #bytes #iterations then the figures;
	# the latency test's t_avg[usec] (and tps average with -D; with -n
	# t_stdev and percentiles), the
	# bandwidth tests' BW peak, BW average[MB/sec] (MiB/s), MsgRate[Mpps].
	line=$(awk '/#bytes/ { h = $0; next } h && $1 ~ /^[0-9]+$/ { print h; print; exit }' "$out.log")
	[[ -n $line ]] || { ceil_fail "$out" perftest "$prog printed no result line"; return 1; }
	awk -v sz="$sz" -v lat="$([[ $prog == *_lat ]] && echo 1 || echo 0)" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^t_avg/) a = i; tps = $(a + 1) ~ /^tps/; next }
		lat { ops = (tps && $(a + 1) ~ /^[0-9.]+$/ && $(a + 1) > 0) ? $(a + 1) : 1e6 / $a
		      printf "{\"ops_per_s\": %.1f, \"mbps\": %.3f, \"lat_us\": %.3f}\n", ops, ops * sz / 1e6, $a; exit }
		{ b = $4 * 1048576
		  printf "{\"ops_per_s\": %.1f, \"mbps\": %.3f, \"lat_us\": null}\n", b / sz, b / 1e6 }' \
		<<< "$line" > "$out.json"
	jq -e '.ops_per_s > 0' "$out.json" > /dev/null 2>&1 ||
		{ rm -f "$out.json"; ceil_fail "$out" perftest "cannot read $prog's result: $(tail -n 1 <<< "$line")"; return 1; }
}

# ceil_kernel OUT OP SIZE DEPTH POST: an operation larger than 128 KiB is
# measured as one work request and as a chain of 128 KiB ones (as rmbd
# posts a large request over rxe's 32 SGEs), and the better one counts.
ceil_kernel() {
	local out=$1 o wr best=0 ops wait=0
	local splits=("$3")
	[[ $5 == wait ]] && wait=1
	(( $3 > 131072 )) && splits+=(131072)
	rm -f "$out.json" "$out.failed" "$out.log"
	for wr in "${splits[@]}"; do
		if ! echo "op=$2 size=$3 wr=$wr depth=$4 wait=$wait ms=$(( ceil_s * 1000 )) src=$net_client dst=$RMBD_ADDR port=$kverbs_port" \
				> "$kverbs_run" 2>> "$out.log"; then
			o=$(cat "$kverbs_run" 2> /dev/null)
			ceil_fail "$out" kernel "wr=$wr: ${o:-$(cat "$out.log")}"
			return 1
		fi
		o=$(cat "$kverbs_run")
		printf '%s\n' "$o" >> "$out.log"
		awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
			END { if (v["ops"] == "" || v["ns"] == 0) exit 1
			      s = v["ns"] / 1e9
			      printf "{\"ops_per_s\": %.1f, \"mbps\": %.3f, \"lat_us\": %s, \"wr_bytes\": %d, \"rd_atom\": %d, \"client_dev\": \"%s\", \"target_dev\": \"%s\"}\n",
				v["ops"] / s, v["bytes"] / s / 1e6,
				(v["ops"] > 0 ? sprintf("%.3f", v["lat_ns_sum"] / v["ops"] / 1000) : "null"),
				v["wr"], v["rd_atom"], v["client_dev"], v["target_dev"] }' <<< "$o" > "$out.wr$wr.json" ||
			{ rm -f "$out.wr$wr.json"; ceil_fail "$out" kernel "cannot read the result: $o"; return 1; }
		ops=$(jq '.ops_per_s' "$out.wr$wr.json")
		if awk -v a="$ops" -v b="$best" 'BEGIN { exit !(a > b) }'; then
			best=$ops
			cp "$out.wr$wr.json" "$out.json"
		fi
	done
}

ceiling_run() {
	local points=() p op sz qd t i tools=()
	mapfile -t points < <(bench_ceiling_points "${jobs[@]}")
	(( ${#points[@]} )) || return 0
	mkdir -p "$res/ceiling"
	for t in "${BENCH_CEILING_TOOLS[@]}"; do
		mkdir -p "$res/ceiling/$t"
	done
	if ! command -v ib_read_bw > /dev/null; then
		ceil_na[perftest]="perftest is not installed"
	elif ! modprobe -a ib_uverbs rdma_ucm; then
		ceil_na[perftest]="cannot load ib_uverbs and rdma_ucm"
	fi
	if [[ ! -f $kverbs_ko ]]; then
		ceil_na[kernel]="tools/bench/kverbs/rmbd_kverbs.ko is not built"
	else
		mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
		{ modprobe rdma_cm && insmod "$kverbs_ko"; } > "$res/ceiling/kernel/insmod.log" 2>&1 ||
			ceil_na[kernel]="insmod rmbd_kverbs.ko failed: $(tr '\n' ' ' < "$res/ceiling/kernel/insmod.log" | cut -c1-200)"
	fi
	for t in "${BENCH_CEILING_TOOLS[@]}"; do
		if [[ -n ${ceil_na[$t]:-} ]]; then
			echo "${ceil_na[$t]}" > "$res/ceiling/$t/n-a"
			say "ceiling: $t: n/a: ${ceil_na[$t]}"
		else
			tools+=("$t")
		fi
	done
	say "ceiling: ${#points[@]} points, $runs runs of $ceil_s s each with ${tools[*]:-nothing}; $ceil_cdev -> $ceil_sdev ($net_client -> $RMBD_ADDR)"
	for (( r = 1; r <= runs; r++ )); do
		for p in "${points[@]}"; do
			read -r pt op sz qd _ post <<< "$p"
			for (( i = 0; i < ${#tools[@]}; i++ )); do
				t=${tools[(i + r - 1) % ${#tools[@]}]}
				"ceil_$t" "$res/ceiling/$t/$pt.$r" "$op" "$sz" "$qd" "$post" &&
					say "ceiling $pt run $r $t: $(jq -r '"\(.ops_per_s | floor) ops/s, \(.mbps * 10 | round / 10) MB/s\(if .lat_us then ", mean \(.lat_us * 10 | round / 10) us" else "" end)"' "$res/ceiling/$t/$pt.$r.json")"
			done
		done
	done
	if [[ -d /sys/module/rmbd_kverbs ]] && ! rmmod rmbd_kverbs; then
		say "ceiling: rmmod rmbd_kverbs failed"
	fi
}

if [[ $ceiling == 1 ]]; then
	ceiling_run
else
	say "ceiling: not measured (RMBD_BENCH_CEILING=0)"
fi

# ---- setup -------------------------------------------------------------

# brd: ram0 for brd itself, ram1 behind nvmet-rdma, ram2 behind nbd-server.
# Pages are allocated on first write, so unused devices cost nothing.
setup_brd_module() {
	if [[ -d /sys/module/brd ]]; then
		rmmod brd 2>/dev/null || { why="brd is loaded and busy"; return 1; }
	fi
	try "modprobe brd" modprobe brd rd_nr=3 rd_size=$(( size / 1024 )) || return 1
	wait_for 5 test -b /dev/ram2 || { why="/dev/ram0..2 did not appear"; return 1; }
}

setup_brd() { dev[brd]=/dev/ram0; }

setup_rmbd() {
	local args=() d
	[[ -f $RMBD_TARGET_KO ]] || { why="kmod/rmbd-target.ko not built"; return 1; }
	[[ -f $RMBD_CLIENT_KO ]] || { why="kmod/rmbd-client.ko not built"; return 1; }
	[[ -x $RMBD_BIN ]] || { why="tools/rmbd not built"; return 1; }
	rmbd_modules_loaded || try "loading the rmbd modules" rmbd_load_modules || return 1
	rmbd_modules_loaded || { why="the rmbd modules are not loaded"; return 1; }
	try "rmbd export add" "$RMBD_BIN" export add bench size "$size" \
		hosts "$("$RMBD_BIN" host)" > /dev/null || return 1
	rmbd_listen "$RMBD_ADDR" || return 1
	[[ -n $queues ]] && args+=(queues "$queues")
	[[ -n $depth ]] && args+=(depth "$depth")
	if (( pollq > 0 )); then
		if has_pollq; then
			args+=(pollq "$pollq")
		else
			say "rmbd: this rmbd has no pollq option; connecting without poll queues"
		fi
	fi
	rmbd_connect addr "$RMBD_ADDR" export bench "${args[@]}" || return 1
	dev[rmbd]=$d
}

# A listener on ADDR, unless there is one.
rmbd_listen() {	# ADDR
	"$RMBD_BIN" -j listener show 2> /dev/null |
		jq -e --arg a "$1" 'any(.[]; .addr == $a)' > /dev/null && return 0
	try "rmbd listener add $1" "$RMBD_BIN" listener add "$1" > /dev/null
}

# rmbd dev connect ARGS...; sets $d to the new device's path.
rmbd_connect() {
	if ! d=$("$RMBD_BIN" dev connect "$@" 2> /tmp/bench-connect.err); then
		why="rmbd dev connect $* failed: $(tr '\n' ' ' < /tmp/bench-connect.err | cut -c1-300)"
		return 1
	fi
	d=$(printf '%s\n' "$d" | tail -n 1)
	[[ $d =~ ^rmbd[0-9]+$ ]] || { why="rmbd dev connect printed '$d'"; return 1; }
	wait_node "/dev/$d" || { why="/dev/$d did not appear"; return 1; }
	d=/dev/$d
}

# Exports NAME0 on the first target address and NAME1 on the second
# (ADDR2, default $target2), of SIZE bytes each, with listeners on both.
rmbd_export_pair() {	# NAME SIZE [ADDR2]
	local host addr2=${3:-$target2}
	[[ -n $addr2 ]] || { why="no second target address"; return 1; }
	rmbd_modules_loaded || try "loading the rmbd modules" rmbd_load_modules || return 1
	host=$("$RMBD_BIN" host) || { why="rmbd host failed"; return 1; }
	try "rmbd export add ${1}0" "$RMBD_BIN" export add "${1}0" size "$2" hosts "$host" > /dev/null &&
	try "rmbd export add ${1}1" "$RMBD_BIN" export add "${1}1" size "$2" hosts "$host" > /dev/null &&
	rmbd_listen "$RMBD_ADDR" && rmbd_listen "$addr2"
}

rmbd_conn_args() {
	conn_args=(reconnect_delay 1 loss_timeout "$loss_timeout")
	[[ -n $queues ]] && conn_args+=(queues "$queues")
	[[ -n $depth ]] && conn_args+=(depth "$depth")
	return 0
}

# A mirror of two legs: export mirror0 over the first path, mirror1 over
# the second.
setup_rmbd_mirror() {
	local d conn_args
	rmbd_export_pair mirror "$size" || return 1
	rmbd_conn_args
	rmbd_connect addr "$RMBD_ADDR" export mirror0 addr "$target2" export mirror1 \
		layout mirror "${conn_args[@]}" || return 1
	dev[rmbd-mirror]=$d
}

# md raid1 (no bitmap, assume-clean: both sides start zeroed) over two
# single-leg rmbd devices, one per path.
md_dev=/dev/md/rmbd-bench
md_create() {	# MD DEV DEV
	try "modprobe raid1" modprobe raid1 || return 1
	command -v mdadm > /dev/null || { why="mdadm is not installed"; return 1; }
	try "mdadm --create $1" mdadm --create "$1" --run --quiet --level=1 \
		--raid-devices=2 --metadata=1.2 --bitmap=none --assume-clean \
		--homehost=rmbd-bench "$2" "$3" || return 1
	wait_for 10 test -b "$1" || { why="$1 did not appear"; return 1; }
}

setup_md_raid1() {
	local d d0 conn_args
	rmbd_export_pair md "$size" || return 1
	rmbd_conn_args
	rmbd_connect addr "$RMBD_ADDR" export md0 "${conn_args[@]}" || return 1
	d0=$d
	md_members=("$d0")
	rmbd_connect addr "$target2" export md1 "${conn_args[@]}" || return 1
	md_members+=("$d")
	md_create "$md_dev" "$d0" "$d" || return 1
	dev[md-raid1]=$(readlink -f "$md_dev")
}

nvme_cfs=/sys/kernel/config/nvmet

nvme_find_dev() {
	local b n
	for b in /sys/block/nvme*n*; do
		n=${b##*/}
		[[ $n =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
		if [[ $(cat "$b/device/subsysnqn" 2>/dev/null) == "$nvme_nqn" && -b /dev/$n ]]; then
			echo "/dev/$n"
			return 0
		fi
	done
	return 1
}

setup_nvme_rdma() {
	local s=$nvme_cfs/subsystems/$nvme_nqn p=$nvme_cfs/ports/1 args=() d
	try "modprobe nvmet-rdma" modprobe nvmet-rdma || return 1
	try "modprobe nvme-rdma" modprobe nvme-rdma || return 1
	command -v nvme > /dev/null || { why="nvme-cli is not installed"; return 1; }
	if ! mountpoint -q /sys/kernel/config; then
		try "mounting configfs" mount -t configfs configfs /sys/kernel/config || return 1
	fi
	[[ -d $nvme_cfs ]] || { why="$nvme_cfs does not exist after loading nvmet"; return 1; }
	try "creating the nvmet subsystem" mkdir "$s" || return 1
	echo 1 > "$s/attr_allow_any_host" || { why="attr_allow_any_host"; return 1; }
	try "creating the nvmet namespace" mkdir "$s/namespaces/1" || return 1
	echo -n /dev/ram1 > "$s/namespaces/1/device_path" || { why="nvmet device_path /dev/ram1 refused"; return 1; }
	echo 1 > "$s/namespaces/1/enable" || { why="enabling the nvmet namespace failed"; return 1; }
	try "creating the nvmet port" mkdir "$p" || return 1
	echo rdma > "$p/addr_trtype" &&
	echo ipv4 > "$p/addr_adrfam" &&
	echo "$RMBD_ADDR" > "$p/addr_traddr" &&
	echo "$nvme_port" > "$p/addr_trsvcid" || { why="configuring the nvmet port failed"; return 1; }
	try "enabling the nvmet-rdma port" ln -s "$s" "$p/subsystems/$nvme_nqn" || return 1
	[[ -n $queues ]] && args+=(--nr-io-queues="$queues")
	[[ -n $depth ]] && args+=(--queue-size="$depth")
	(( pollq > 0 )) && args+=(--nr-poll-queues="$pollq")
	try "nvme connect" nvme connect -t rdma -a "$RMBD_ADDR" -s "$nvme_port" -n "$nvme_nqn" "${args[@]}" > /dev/null || return 1
	wait_for 10 nvme_find_dev > /dev/null || { why="no nvme block device for $nvme_nqn after nvme connect"; return 1; }
	d=$(nvme_find_dev)
	dev[nvme-rdma]=$d
}

nbd_pid=/run/bench-nbd-server.pid

setup_nbd() {
	local conf=/tmp/bench-nbd.conf conns=${queues:-$(nproc)} nbd_addr=127.0.0.1 srv=()
	[[ $net == two ]] && nbd_addr=$RMBD_ADDR
	try "modprobe nbd" modprobe nbd || return 1
	command -v nbd-server > /dev/null || { why="nbd-server is not installed"; return 1; }
	command -v nbd-client > /dev/null || { why="nbd-client is not installed"; return 1; }
	cat > "$conf" <<-EOF
	[generic]
	user = root
	group = root
	listenaddr = $nbd_addr
	port = $nbd_port
	allowlist = true
	[bench]
	exportname = /dev/ram2
	EOF
	# With two ends, the server is the target's: it runs on the target
	# end's CPUs, where the other systems' target side runs.
	[[ $net == two ]] && srv=(taskset "$rps_target")
	try "nbd-server" "${srv[@]}" nbd-server -C "$conf" -p "$nbd_pid" > /dev/null || return 1
	wait_for 10 bash -c "exec 3<>/dev/tcp/$nbd_addr/$nbd_port" 2> /dev/null ||
		{ why="nbd-server does not listen on $nbd_addr:$nbd_port"; return 1; }
	try "nbd-client" nbd-client -N bench "$nbd_addr" "$nbd_port" "$nbd_dev" -b 4096 -C "$conns" > /dev/null || return 1
	wait_for 10 bash -c "(( \$(cat /sys/block/${nbd_dev#/dev/}/size) > 0 ))" ||
		{ why="$nbd_dev has no size after nbd-client"; return 1; }
	dev[nbd]=$nbd_dev
}

teardown() {
	local s
	timeout 120 swapoff -a 2>/dev/null
	for s in "${systems[@]}"; do
		case $s in
		nbd)
			nbd-client -d "$nbd_dev" > /dev/null 2>&1
			[[ -f $nbd_pid ]] && kill "$(cat "$nbd_pid")" 2>/dev/null
			;;
		nvme-rdma)
			nvme disconnect -n "$nvme_nqn" > /dev/null 2>&1
			rm -f "$nvme_cfs/ports/1/subsystems/$nvme_nqn" 2>/dev/null
			rmdir "$nvme_cfs/ports/1" 2>/dev/null
			rmdir "$nvme_cfs/subsystems/$nvme_nqn/namespaces/1" 2>/dev/null
			rmdir "$nvme_cfs/subsystems/$nvme_nqn" 2>/dev/null
			;;
		rmbd)
			[[ -n ${dev[rmbd]:-} ]] && "$RMBD_BIN" dev disconnect "${dev[rmbd]}" > /dev/null
			"$RMBD_BIN" export del bench force > /dev/null 2>&1
			;;
		rmbd-mirror)
			[[ -n ${dev[rmbd-mirror]:-} ]] &&
				"$RMBD_BIN" dev disconnect "${dev[rmbd-mirror]#/dev/}" > /dev/null
			"$RMBD_BIN" export del mirror0 force > /dev/null 2>&1
			"$RMBD_BIN" export del mirror1 force > /dev/null 2>&1
			;;
		md-raid1)
			[[ -e $md_dev ]] && mdadm --stop "$md_dev" > /dev/null 2>&1
			for d in "${md_members[@]}"; do
				"$RMBD_BIN" dev disconnect "${d#/dev/}" > /dev/null 2>&1
			done
			"$RMBD_BIN" export del md0 force > /dev/null 2>&1
			"$RMBD_BIN" export del md1 force > /dev/null 2>&1
			;;
		esac
	done
	"$RMBD_BIN" listener del "$RMBD_ADDR" > /dev/null 2>&1
	[[ -n $target2 ]] && "$RMBD_BIN" listener del "$target2" > /dev/null 2>&1
	[[ -n $target_fo ]] && "$RMBD_BIN" listener del "$target_fo" > /dev/null 2>&1
	sleep 1
	rmmod brd 2>/dev/null
}

need_brd=0
md_members=()
for s in "${systems[@]}"; do
	[[ $s == rmbd* ]] || bench_is_mirror_system "$s" || need_brd=1
done
brd_ok=1
if (( need_brd )) && ! setup_brd_module; then
	brd_ok=0
	brd_why=$why
fi

for s in "${systems[@]}"; do
	why=
	if [[ $s != rmbd ]] && ! bench_is_mirror_system "$s" && (( !brd_ok )); then
		na "$s" "brd: $brd_why"
		continue
	fi
	if "setup_${s//-/_}" && [[ -n ${dev[$s]:-} ]]; then
		say "$s: ${dev[$s]}"
	else
		na "$s" "${why:-setup failed}"
	fi
done

# Measure the devices, not the I/O scheduler.
for s in "${!dev[@]}"; do
	b=${dev[$s]#/dev/}
	[[ -w /sys/block/$b/queue/scheduler ]] && echo none > "/sys/block/$b/queue/scheduler" 2>/dev/null
done

# ---- precondition: write each device fully once ------------------------

# For the fio jobs only: a swap job writes its own data.  Not the systems
# of two copies: they are rmbd devices, whose target memory is allocated
# and zeroed when the export is created, so an unwritten block is read
# as any other (and writing 512 MiB twice over soft-RoCE takes ~50 s).
fio_jobs=0
for j in "${jobs[@]}"; do
	[[ $(bench_job_field "$j" 2) == swap ]] || fio_jobs=1
done
for s in "${systems[@]}"; do
	(( fio_jobs )) || break
	[[ -n ${dev[$s]:-} ]] || continue
	bench_is_mirror_system "$s" && continue
	t0=$(date +%s.%N)
	if ! o=$(timeout -k 10 $(( size / 5000000 + 60 )) fio --name=precondition \
			--filename="${dev[$s]}" --direct=1 --ioengine=libaio --rw=write \
			--bs=1M --iodepth=4 --output-format=json 2>&1); then
		na "$s" "writing the device fully failed: $(printf '%s' "$o" | grep -v '^[ {}\[]' | tr '\n' ' ' | cut -c1-300)"
		continue
	fi
	say "$s: wrote ${dev[$s]} fully in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"
done

# ---- record what each system is ----------------------------------------

for s in "${systems[@]}"; do
	if [[ -z ${dev[$s]:-} ]]; then
		jq -n --arg r "${reason[$s]:-not set up}" '{status: "n/a", reason: $r}' > "$res/systems/$s.json"
		continue
	fi
	b=${dev[$s]#/dev/}
	extra=null
	case $s in
	rmbd|rmbd-mirror) extra=$("$RMBD_BIN" -j dev show "$b" 2>/dev/null | jq -c '.[0]' 2>/dev/null) ;;
	md-raid1)
		extra=$(jq -nc --arg l "$(cat "/sys/block/$b/md/level" 2> /dev/null)" \
			--arg m "${md_members[*]}" '{level: $l, members: ($m / " ")}') ;;
	nvme-rdma)
		for c in /sys/class/nvme/nvme*; do
			[[ $(cat "$c/subsysnqn" 2>/dev/null) == "$nvme_nqn" ]] || continue
			extra=$(jq -nc --arg c "${c##*/}" --arg q "$(cat "$c/queue_count" 2>/dev/null)" \
				--arg sq "$(cat "$c/sqsize" 2>/dev/null)" \
				'{ctrl: $c, queue_count: $q, sqsize: $sq}')
		done ;;
	nbd) extra=$(jq -nc --argjson c "${queues:-$(nproc)}" '{connections: $c}') ;;
	esac
	jq -n --arg d "${dev[$s]}" \
		--argjson size "$(( $(cat "/sys/block/$b/size") * 512 ))" \
		--argjson hwq "$(ls -1d "/sys/block/$b/mq/"* 2>/dev/null | wc -l)" \
		--arg nr_requests "$(cat "/sys/block/$b/queue/nr_requests" 2>/dev/null)" \
		--arg io_poll "$(cat "/sys/block/$b/queue/io_poll" 2>/dev/null)" \
		--arg sched "$(cat "/sys/block/$b/queue/scheduler" 2>/dev/null)" \
		--argjson extra "${extra:-null}" \
		'{status: "ok", device: $d, size: $size, hw_queues: $hwq,
		  nr_requests: $nr_requests, polled: ($io_poll == "1"),
		  scheduler: $sched, details: $extra}' > "$res/systems/$s.json"
	say "$s: ${dev[$s]}: $(jq -r '"size \(.size) hw queues \(.hw_queues) nr_requests \(.nr_requests) poll \(.polled) scheduler \(.scheduler) \(.details // "" | tostring)"' "$res/systems/$s.json")"
done

# ---- the jobs ----------------------------------------------------------

# fio takes over a second to start under TCG, so each run of a job is one
# fio process with a section per system, one after the other (stonewall,
# each its own reporting group).  The order of the systems rotates from
# run to run.  When that process fails as a whole (a hang ends in the
# timeout), each system runs alone to find the culprit, and a system that
# fails alone is dropped from the later runs.

# For each section: "NAME<TAB>ERROR<TAB>SUMMARY<TAB>JSON".
split='.jobs[] | . as $j
	| ($j.read.total_ios + $j.write.total_ios) as $n
	| [$j.jobname, ($j.error | tostring),
	   "\(($j.read.iops + $j.write.iops) | floor) IOPS, \((($j.read.bw_bytes + $j.write.bw_bytes) / 1e6) * 10 | round / 10) MB/s, mean \(if $n > 0 then (($j.read.lat_ns.mean * $j.read.total_ios + $j.write.lat_ns.mean * $j.write.total_ios) / $n / 100 | round / 10) else "-" end) us",
	   ({jobs: [$j]} | tojson)] | join("\t")'

live=()
for s in "${systems[@]}"; do
	[[ -n ${dev[$s]:-} ]] && live+=("$s")
done
declare -A dead=()

# The systems fio job $1 runs on: bench_job_systems, but a mirror job
# whose one-leg base job runs too leaves rmbd out (the same fio arguments
# on the same device: report.sh takes the base job's runs).
job_run_systems() {	# JOB
	local b s
	b=$(bench_job_base "$1")
	if [[ -n $b ]] && printf '%s\n' "${jobs[@]}" | grep -qx -- "$b"; then
		bench_job_systems "$1" "${live[@]}" | while read -r s; do
			[[ $s == rmbd ]] || echo "$s"
		done
	else
		bench_job_systems "$1" "${live[@]}"
	fi
}

total=0
for j in "${jobs[@]}"; do
	case $(bench_job_field "$j" 2) in
	swap|failover) ;;
	*) total=$(( total + runs * $(job_run_systems "$j" | wc -l) )) ;;
	esac
done
rmbd_failed=0
n=0

# run_fio OUT SYSTEM...: one run of the current job ($j, $args) on each
# SYSTEM in turn.  Writes fio/SYSTEM/$j.$r.json or .failed for each.
run_fio() {
	local out=$1 s name e sum js rc=0 sec=()
	shift
	for s in "$@"; do
		sec+=(--name="$s" --filename="${dev[$s]}" --stonewall --new_group)
	done
	timeout -k 10 $(( $# * (ramp + runtime + 30) + 30 )) fio --direct=1 "${args[@]}" \
		--ramp_time="$ramp" --runtime="$runtime" --time_based \
		--randrepeat=0 --norandommap --lat_percentiles=1 \
		--output-format=json --output="$out.json" "${sec[@]}" 2> "$out.err" || rc=$?
	declare -A got=()
	if [[ -s $out.json ]]; then
		while IFS=$'\t' read -r name e sum js; do
			[[ -n ${dev[$name]:-} ]] || continue
			got[$name]=1
			n=$(( n + 1 ))
			if [[ $e == 0 ]]; then
				printf '%s\n' "$js" > "$res/fio/$name/$j.$r.json"
				rm -f "$res/fio/$name/$j.$r.failed"
				say "[$n/$total] $j run $r $name: $sum"
			else
				echo "fio error $e: $(tr '\n' ' ' < "$out.err" | cut -c1-300)" > "$res/fio/$name/$j.$r.failed"
				say "[$n/$total] $j run $r $name: FAILED: $(cat "$res/fio/$name/$j.$r.failed")"
				[[ $name == rmbd ]] && rmbd_failed=1
			fi
		done < <(jq -r "$split" "$out.json" 2>/dev/null)
	fi
	missing=()
	for s in "$@"; do
		[[ -n ${got[$s]:-} ]] || missing+=("$s")
	done
	(( ${#missing[@]} )) || return 0
	say "$j run $r: fio exit $rc without results for ${missing[*]}: $(tr '\n' ' ' < "$out.err" | cut -c1-300)"
	return 1
}

# ---- swap jobs ----------------------------------------------------------

# swapverify (a working set written and read back, every byte checked) in
# a cgroup whose memory.max is half its working set, with one system's
# device as the only swap, at the highest priority; and once in a group
# with no limit, which needs no swap at all: the baseline.  Each run's
# completion time is the program's wall time, from exec to exit.

swapverify=$repo/selftests/vm/swapverify
swap_cg=/sys/fs/cgroup/rmbd-bench-swap
vmstat() { awk -v k="$1" '$1 == k {print $2}' /proc/vmstat; }

# The block device that counts DEV's I/O: for an NVMe multipath node
# (nvme0n1, which counts nothing) its path device (nvme0c0n1).
stat_dev() {	# DEV
	local b p
	b=$(basename "$1")
	if [[ $b == nvme* ]]; then
		for p in /sys/block/"${b%n*}"c*n"${b##*n}"; do
			[[ -f $p/stat ]] && { echo "$p/stat"; return; }
		done
	fi
	echo "/sys/block/$b/stat"
}

# Busy jiffies of each CPU (all but idle and iowait), one line each.
cpu_busy() {
	awk '$1 ~ /^cpu[0-9]+$/ { b = 0; for (f = 2; f <= NF; f++) if (f != 5 && f != 6) b += $f; print b }' /proc/stat
}
swaps_active() { tail -n +2 /proc/swaps | awk '{print $1}'; }

# How often, and how long, reclaim was throttled (vmscan's throttle
# tracepoint, counted by a histogram trigger): reclaim that waits for the
# swap device's writes to finish shows up here.  Empty when tracing is
# not there.  The trigger is registered once for the whole job and
# cleared before each run: registering one patches kernel text on every
# CPU, and doing that twice a run once hung a TCG guest for good (one
# vCPU looping on the int3 of the patch site, the other waiting for it
# in text_poke_bp()).
throttle_ev=/sys/kernel/tracing/events/vmscan/mm_vmscan_throttled
throttle_hist='hist:keys=reason:vals=hitcount,usec_delayed'
throttle_on=0
throttle_setup() {
	[[ -d $throttle_ev ]] ||
		mount -t tracefs nodev /sys/kernel/tracing 2> /dev/null || true
	{ echo "$throttle_hist" > "$throttle_ev/trigger"; } 2> /dev/null && throttle_on=1
}
throttle_teardown() {
	(( throttle_on )) || return 0
	{ echo "!$throttle_hist" > "$throttle_ev/trigger"; } 2> /dev/null
	throttle_on=0
}
throttle_begin() {
	(( throttle_on )) || return 0
	# Without the clear, the counts would be those of every run so far.
	{ echo "$throttle_hist:clear" >> "$throttle_ev/trigger"; } 2> /dev/null || throttle_teardown
}
# Print {"REASON": {"count": N, "ms": N}, ...}, or null when the trigger
# is not there.
throttle_end() {
	local h
	(( throttle_on )) || { echo null; return; }
	h=$(cat "$throttle_ev/hist" 2> /dev/null) || { echo null; return; }
	[[ $h == *"trigger info"* ]] || { echo null; return; }
	awk '
		BEGIN { n[1] = "writeback"; n[2] = "isolated"; n[4] = "noprogress"; n[8] = "congested" }
		/^\{ reason:/ {
			r = $3; c = 0; u = 0
			for (f = 1; f < NF; f++) {
				if ($f == "hitcount:") c = $(f + 1)
				if ($f == "usec_delayed:") u = $(f + 1)
			}
			printf "%s\"%s\": {\"count\": %d, \"ms\": %d}", (k++ ? ", " : "{"), ((r in n) ? n[r] : r), c, u / 1000
		}
		END { print (k ? "}" : "{}") }' <<< "$h"
}

# swap_fail OUT SYSTEM WHY: record a failed run.
swap_fail() {
	echo "$3" > "$1.failed"
	say "$j run $r $2: FAILED: $3"
	[[ $2 == rmbd ]] && rmbd_failed=1
	return 1
}

# swap_run OUT SYSTEM: one run of swap job $j (run $r) on SYSTEM.
swap_run() {
	local out=$1 s=$2 d='' limit=max rc=0 t0 t1 o0 i0 o i oom so=0 err k throttled
	rm -f "$out.json" "$out.failed"
	if [[ -n $(swaps_active) ]]; then
		swap_fail "$out" "$s" "a swap is still active: $(swaps_active | tr '\n' ' ')"
		return 1
	fi
	if [[ $s != "$BENCH_SWAP_BASELINE" ]]; then
		d=${dev[$s]}
		limit=$(( swap_mib / 2 ))M
		err=$(mkswap "$d" 2>&1 > /dev/null) ||
			{ swap_fail "$out" "$s" "mkswap $d: $err"; return 1; }
		err=$(swapon -p 32767 "$d" 2>&1) ||
			{ swap_fail "$out" "$s" "swapon $d: $err"; return 1; }
		if [[ $(swaps_active) != "$d" ]]; then
			swapoff "$d" 2> /dev/null
			swap_fail "$out" "$s" "not the only swap: $(swaps_active | tr '\n' ' ')"
			return 1
		fi
	fi
	rmdir "$swap_cg" 2> /dev/null
	mkdir "$swap_cg" && echo "$limit" > "$swap_cg/memory.max" || {
		[[ -n $d ]] && swapoff "$d"
		swap_fail "$out" "$s" "cannot set up the cgroup $swap_cg"
		return 1
	}
	[[ -f $swap_cg/memory.swap.max ]] && echo max > "$swap_cg/memory.swap.max"
	sync
	echo 3 > /proc/sys/vm/drop_caches
	local st='' st0='' st1='' c0 c1
	[[ -n $d ]] && st=$(stat_dev "$d")
	[[ -n $st ]] && st0=$(cat "$st")
	c0=$(cpu_busy)
	throttle_begin
	o0=$(vmstat pswpout)
	i0=$(vmstat pswpin)
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	timeout -k 10 "$swap_tmo" sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' \
		sh "$swap_cg" "$swapverify" $swap_args > "$out.log" 2>&1 || rc=$?
	t1=$(date +%s.%N)
	c1=$(cpu_busy)
	throttled=$(throttle_end)
	[[ -n $st ]] && st1=$(cat "$st")
	o=$(( $(vmstat pswpout) - o0 ))
	i=$(( $(vmstat pswpin) - i0 ))
	oom=$(awk '$1 == "oom_kill" {print $2}' "$swap_cg/memory.events")
	if [[ -n $d ]]; then
		so=$(date +%s.%N)
		if ! err=$(timeout 120 swapoff "$d" 2>&1); then
			dead[$s]="swapoff $d failed: $err"
			say "$s: ${dead[$s]}"
		fi
		so=$(awk -v a="$so" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
	fi
	for (( k = 0; k < 50; k++ )); do
		rmdir "$swap_cg" 2> /dev/null && break
		sleep 0.1
	done
	if (( rc != 0 )); then
		swap_fail "$out" "$s" "swapverify exit $rc$( (( rc == 124 )) && echo " (timeout after $swap_tmo s)"), oom_kill ${oom:-?}: $(grep -m 3 -e MISMATCH -e mismatched -e cannot "$out.log" | tr '\n' ' ' | cut -c1-300)"
		return 1
	fi
	grep -q ' 0 mismatched bytes in 0 pages' "$out.log" ||
		{ swap_fail "$out" "$s" "swapverify printed no clean summary"; return 1; }
	# Where the time went: the program's two phases, the device's
	# requests (their count, size and time, from its stat file) and how
	# busy each CPU was.
	local dt sum phases io cpu
	dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')
	sum=$(grep ' mismatched bytes in ' "$out.log" | tail -n 1)
	phases=$(sed -n 's/.*(write \([0-9.]*\) s, verify \([0-9.]*\) s).*/{"write_s": \1, "verify_s": \2}/p' <<< "$sum")
	io=null
	if [[ -n $st0 && -n $st1 ]]; then
		io=$(printf '%s\n%s\n' "$st0" "$st1" | awk '
			NR == 1 { for (f = 1; f <= 8; f++) a[f] = $f; next }
			{ printf "{\"reads\": %d, \"read_kib\": %d, \"read_ms\": %d, ", $1 - a[1], ($3 - a[3]) / 2, $4 - a[4]
			  printf "\"writes\": %d, \"write_kib\": %d, \"write_ms\": %d}", $5 - a[5], ($7 - a[7]) / 2, $8 - a[8] }')
	fi
	cpu=$(paste <(echo "$c0") <(echo "$c1") | awk -v t="$dt" \
		-v hz="$(getconf CLK_TCK)" '{ printf "%s%.0f", (NR > 1 ? "," : "["), 100 * ($2 - $1) / hz / t } END { print "]" }')
	jq -n --argjson t "$dt" \
		--argjson o "$o" --argjson i "$i" --argjson oom "${oom:-0}" \
		--argjson so "$so" --arg limit "$limit" --arg dev "$d" \
		--argjson phases "${phases:-{\}}" --argjson io "$io" \
		--argjson cpu "$cpu" --argjson thr "$throttled" --arg sum "$sum" \
		'{time_s: $t} + $phases + {pswpout: $o, pswpin: $i, oom_kill: $oom,
		  swapoff_s: $so, memory_max: $limit, device: $dev, io: $io,
		  cpu_busy_pct: $cpu, reclaim_throttled: $thr, summary: $sum}' > "$out.json"
	say "$j run $r $s: $(jq -r '"\(.time_s) s, out \(.pswpout / 256 | floor) MiB, in \(.pswpin / 256 | floor) MiB"' "$out.json")"
}

swap_job() {
	local s order=() err
	swap_args=$(bench_job_field "$j" 4)
	swap_mib=$(bench_swap_mib "$j")
	# A run is ~10 s under TCG; a hung device ends in the timeout.
	swap_tmo=$(( swap_mib + 120 ))
	swap_live=()
	for s in "${BENCH_SWAP_SYSTEMS[@]}"; do
		[[ -n ${dev[$s]:-} ]] && swap_live+=("$s")
	done
	swap_live+=("$BENCH_SWAP_BASELINE")
	for s in "${swap_live[@]}"; do
		mkdir -p "$res/swap/$s"
	done
	err=
	[[ -x $swapverify ]] || err="selftests/vm/swapverify is not built"
	[[ -n $err ]] || grep -qw memory /sys/fs/cgroup/cgroup.controllers ||
		err="no memory controller in cgroup v2"
	[[ -n $err ]] || echo +memory > /sys/fs/cgroup/cgroup.subtree_control ||
		err="cannot enable the memory controller"
	[[ -n $err ]] || swapoff -a || err="swapoff -a failed"
	if [[ -n $err ]]; then
		for s in "${swap_live[@]}"; do
			for (( r = 1; r <= swap_runs; r++ )); do
				echo "$err" > "$res/swap/$s/$j.$r.failed"
			done
		done
		say "$j: not run: $err"
		[[ -n ${dev[rmbd]:-} ]] && rmbd_failed=1
		return
	fi
	# zswap would keep swapped pages in RAM, away from the devices.
	[[ $(cat /sys/module/zswap/parameters/enabled 2> /dev/null) == Y ]] &&
		echo N > /sys/module/zswap/parameters/enabled
	say "$j: swapverify $swap_args, memory.max $(( swap_mib / 2 ))M, swap on: ${swap_live[*]}"
	throttle_setup
	# A run on each first that does not count ($j.warm-up.*): the first
	# runs after boot were the slowest, on every system.  A system whose
	# warm-up fails runs no more: its counted runs say why.
	r=warm-up
	for s in "${swap_live[@]}"; do
		[[ -z ${dead[$s]:-} ]] || continue
		swap_run "$res/swap/$s/$j.$r" "$s" ||
			dead[$s]="its warm-up run failed: $(cat "$res/swap/$s/$j.$r.failed" 2> /dev/null)"
	done
	for (( r = 1; r <= swap_runs; r++ )); do
		for (( i = 0; i < ${#swap_live[@]}; i++ )); do
			s=${swap_live[(i + r - 1) % ${#swap_live[@]}]}
			if [[ -n ${dead[$s]:-} ]]; then
				swap_fail "$res/swap/$s/$j.$r" "$s" "not run: ${dead[$s]}"
				continue
			fi
			swap_run "$res/swap/$s/$j.$r" "$s"
		done
	done
	throttle_teardown
}

# ---- failover jobs ------------------------------------------------------

# For each run, each system of two copies in turn gets a fresh device of
# its own over fresh exports (fo0 over the first path, fo1 over a third
# path of its own; two single-leg devices and md raid1 over them for
# md-raid1).  fio runs the job's arguments on it for $fo_runtime s, and
# $fo_kill_at s in, the second copy's target falls silent: with "two",
# netem drops every packet both ways on the third veth pair (no link
# event: the client learns of it only when its transport gives up, as
# when a machine dies); with "loop", d3 goes down (soft-RoCE loops packets
# back inside the driver, past any qdisc).  The longest I/O latency is the
# stall.  Each run leaves failover/SYSTEM/JOB.RUN.json, or .failed.

fo_silence() {	# on|off
	local n
	if [[ $net == loop ]]; then
		if [[ $1 == on ]]; then
			ip link set d3 down
		else
			ip link set d3 up
		fi
		return
	fi
	for n in c2 t2; do
		if [[ $1 == on ]]; then
			tc qdisc add dev $n root netem loss 100% || return 1
		else
			tc qdisc del dev $n root 2> /dev/null
		fi
	done
	return 0
}

fo_teardown() {
	local d
	[[ -e /dev/md/rmbd-fo ]] && mdadm --stop /dev/md/rmbd-fo > /dev/null 2>&1
	for d in "${fo_devs[@]}"; do
		timeout 60 "$RMBD_BIN" dev disconnect "${d#/dev/}" > /dev/null 2>&1
	done
	fo_devs=()
	"$RMBD_BIN" export del fo0 force > /dev/null 2>&1
	"$RMBD_BIN" export del fo1 force > /dev/null 2>&1
}

fo_fail() {	# OUT WHY
	jq -n --arg w "$2" '{error: $w}' > "$1.failed"
	say "$j run $r $s: FAILED: $2"
	[[ $s == rmbd-mirror ]] && rmbd_failed=1
	return 1
}

# One run of failover job $j on system $s, into OUT.json.
fo_run() {	# OUT
	local out=$1 d d0 conn_args rc=0 fio_pid t0 state= legs=
	fo_devs=()
	why=
	rmbd_export_pair fo "$fo_size" "$target_fo" ||
		{ fo_teardown; fo_fail "$out" "setup: $why"; return; }
	rmbd_conn_args
	if [[ $s == rmbd-mirror ]]; then
		rmbd_connect addr "$RMBD_ADDR" export fo0 addr "$target_fo" export fo1 \
			layout mirror "${conn_args[@]}" && fo_devs+=("$d")
	else
		rmbd_connect addr "$RMBD_ADDR" export fo0 "${conn_args[@]}" && fo_devs+=("$d") &&
		rmbd_connect addr "$target_fo" export fo1 "${conn_args[@]}" && fo_devs+=("$d") &&
		md_create /dev/md/rmbd-fo "${fo_devs[@]}" && d=/dev/md/rmbd-fo
	fi
	if [[ -n $why ]]; then
		fo_teardown
		fo_fail "$out" "setup: $why"
		return
	fi
	timeout -k 10 $(( fo_runtime + 60 )) fio --name="$s" --filename="$d" --direct=1 \
		"${args[@]}" --time_based --runtime="$fo_runtime" --randrepeat=0 \
		--norandommap --output-format=json --output="$out.fio.json" \
		2> "$out.err" &
	fio_pid=$!
	sleep "$fo_kill_at"
	t0=$(date +%s.%N)
	fo_silence on || why="cannot silence the second path"
	wait "$fio_pid" || rc=$?
	fo_silence off
	if [[ $s == rmbd-mirror ]]; then
		state=$("$RMBD_BIN" -j dev show "${d#/dev/}" 2> /dev/null | jq -r '.[0].state')
		legs=$("$RMBD_BIN" -j dev show "${d#/dev/}" 2> /dev/null |
			jq -r '.[0].legs | map(.state) | join(",")')
	else
		state=$(cat "/sys/block/$(basename "$(readlink -f "$d")")/md/array_state" 2> /dev/null)
		legs=$(cat /sys/block/"$(basename "$(readlink -f "$d")")"/md/dev-*/state 2> /dev/null | tr '\n' ',')
	fi
	fo_teardown
	[[ -z $why ]] || { fo_fail "$out" "$why"; return; }
	if ! jq -e '.jobs[0]' "$out.fio.json" > /dev/null 2>&1; then
		fo_fail "$out" "fio exit $rc, no results: $(tr '\n' ' ' < "$out.err" | cut -c1-300)"
		return
	fi
	jq --arg s "$s" --argjson at "$fo_kill_at" --argjson rt "$fo_runtime" \
		--argjson loss "$loss_timeout" --arg net "$net" --argjson rc "$rc" \
		--arg state "$state" --arg legs "$legs" '.jobs[0] as $j
		| {stall_ms: ([$j.read.lat_ns.max, $j.write.lat_ns.max] | max / 1e6),
		   fio_error: $j.error, fio_exit: $rc,
		   ios: ($j.read.total_ios + $j.write.total_ios),
		   silent_after_s: $at, runtime_s: $rt, loss_timeout_s: $loss,
		   silenced_by: (if $net == "two" then "netem loss 100% both ways" else "link down" end),
		   state_after: $state, copies_after: $legs}' \
		"$out.fio.json" > "$out.json"
	say "$j run $r $s: longest stall $(jq -r '.stall_ms | floor' "$out.json") ms, fio error $(jq -r .fio_error "$out.json"), then $state ($legs)"
	if [[ $s == rmbd-mirror && ( $rc != 0 || $(jq -r .fio_error "$out.json") != 0 ) ]]; then
		say "rmbd-mirror: I/O errors during a failover"
		rmbd_failed=1
	fi
}

failover_job() {
	local fo_sys=() i
	read -r -a args <<< "$(bench_job_field "$j" 4)"
	mapfile -t fo_sys < <(bench_job_systems "$j" "${live[@]}")
	if [[ $net == two ]] && ! modprobe sch_netem; then
		say "$j: not run: no sch_netem"
		fo_sys=()
	fi
	say "$j: $fo_size devices, fio $fo_runtime s, the second copy silent after $fo_kill_at s, loss_timeout $loss_timeout; systems: ${fo_sys[*]}"
	for (( r = 1; r <= runs; r++ )); do
		for (( i = 0; i < ${#fo_sys[@]}; i++ )); do
			s=${fo_sys[(i + r - 1) % ${#fo_sys[@]}]}
			mkdir -p "$res/failover/$s"
			fo_run "$res/failover/$s/$j.$r"
		done
	done
}

for j in "${jobs[@]}"; do
	case $(bench_job_field "$j" 2) in
	swap) swap_job; continue ;;
	failover) failover_job; continue ;;
	esac
	read -r -a args <<< "$(bench_job_field "$j" 4)"
	mapfile -t jlive < <(job_run_systems "$j")
	for (( r = 1; r <= runs; r++ )); do
		order=()
		for (( i = 0; i < ${#jlive[@]}; i++ )); do
			s=${jlive[(i + r - 1) % ${#jlive[@]}]}
			mkdir -p "$res/fio/$s"
			if [[ -n ${dead[$s]:-} ]]; then
				echo "not run: ${dead[$s]}" > "$res/fio/$s/$j.$r.failed"
				n=$(( n + 1 ))
				say "[$n/$total] $j run $r $s: not run: ${dead[$s]}"
				continue
			fi
			order+=("$s")
		done
		(( ${#order[@]} )) || continue
		run_fio "$res/fio/$j.$r" "${order[@]}" && continue
		# Find out which system it was.
		for s in "${missing[@]}"; do
			if ! run_fio "$res/fio/$s/$j.$r.alone" "$s"; then
				echo "no result: $(tr '\n' ' ' < "$res/fio/$s/$j.$r.alone.err" | cut -c1-300)" > "$res/fio/$s/$j.$r.failed"
				n=$(( n + 1 ))
				say "[$n/$total] $j run $r $s: FAILED: $(cat "$res/fio/$s/$j.$r.failed")"
				dead[$s]="$j run $r failed or hung on its own"
				say "$s: dropped from the later runs: ${dead[$s]}"
				[[ $s == rmbd ]] && rmbd_failed=1
			fi
		done
	done
done

# ---- scaling --------------------------------------------------------------

# tools/bench/scale.sh: connect and reconnect against the export size,
# sessions and devices on one target and client, memory, CPU per I/O.
if [[ ${RMBD_BENCH_SCALE:-0} == 1 ]]; then
	# shellcheck source=tools/bench/scale.sh
	source "$here/scale.sh"
	rmbd_modules_loaded || try "loading the rmbd modules" rmbd_load_modules > /dev/null
	scale_main || true
fi

# ---- rmbd's health at the end ------------------------------------------

for s in rmbd rmbd-mirror; do
	[[ -n ${dev[$s]:-} ]] || continue
	st=$("$RMBD_BIN" -j dev show "${dev[$s]#/dev/}" 2>/dev/null |
		jq -r '.[0] | "\(.state)\(if .degraded then " degraded" else "" end)"' 2>/dev/null)
	if [[ $st != live ]]; then
		say "$s: ${dev[$s]} is '${st:-gone}' after the jobs, not live"
		rmbd_failed=1
	fi
done
for s in "${systems[@]}"; do
	[[ ( $s == rmbd || $s == rmbd-mirror ) && -z ${dev[$s]:-} ]] && rmbd_failed=1
done

teardown
if dmesg | grep -aE 'rmbd' | grep -av 'module verification failed' |
		grep -aiE 'warn|error|fail|timeout|timed out|bug|stall' > "$res/rmbd-dmesg.txt"; then
	say "kernel messages about rmbd that look wrong:"
	sed 's/^/bench:   /' "$res/rmbd-dmesg.txt" | tail -n 20
fi
echo "$rmbd_failed" > "$res/rmbd-failed"
if (( rmbd_failed )); then
	say "rmbd FAILED"
	exit 1
fi
say "done"
exit 0
exit
}
