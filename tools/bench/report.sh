#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn a benchmark run's fio JSON into OUT/bench.json and the table in
# OUT/bench.txt (also printed), then chart it (chart.sh: OUT/bench.png and
# OUT/bench.svg, when gnuplot is installed).  run.sh calls it; run it
# again by hand to redo the table and the chart of an earlier run:
#
#   tools/bench/report.sh [OUT]      (default selftests/results/bench)
#
# Reads OUT/host.json (written by run.sh) and OUT/vm/bench/ (written by
# guest.sh in the VM).  For every job and system it takes the median over
# the runs of: IOPS (read + write), MB/s (10^6 bytes/s, read + write),
# mean latency and p99 latency (fio's lat_ns, submission to completion, in
# microseconds; for a mixed job the mean is over all I/Os and the p99 is
# the larger of the read and the write p99).  For a swap job (OUT/vm/bench/
# swap/): the median completion time, its write and verify phases, pages
# swapped out and in, and the mean size of the swap device's requests.  Then
# rmbd's ratio to each peer and the project's targets.  The mirror jobs
# compare rmbd's mirror of two legs with one leg and with md raid1 over
# two rmbd devices; the failover job (OUT/vm/bench/failover/) gives the
# median, lowest and highest of the longest I/O stall of each run.
#
# Exit status 1 when rmbd was run and has no result for some job (or
# failed to set up), 0 otherwise: not for the chart.

set -u

# Parsed whole before it runs, so editing this file cannot derail a run.
{

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tools/bench/jobs.sh
source "$here/jobs.sh"

out=${1:-${RMBD_BENCH_OUT:-$repo/selftests/results/bench}}
res=$out/vm/bench
if [[ ! -f $res/env.json ]]; then
	echo "bench: no results in $res (the VM did not get as far as the benchmark; see $out/vm/console.log)" >&2
	exit 1
fi

# Metrics of one fio run.
metrics='.jobs[0] as $j
	| ($j.read.total_ios + $j.write.total_ios) as $n
	| {iops: ($j.read.iops + $j.write.iops),
	   mbps: (($j.read.bw_bytes + $j.write.bw_bytes) / 1e6),
	   lat_mean_us: (if $n > 0 then ($j.read.lat_ns.mean * $j.read.total_ios
				+ $j.write.lat_ns.mean * $j.write.total_ios) / $n / 1000
			else null end),
	   lat_p99_us: ([$j.read, $j.write | select(.total_ios > 0)
			| .lat_ns.percentile["99.000000"] // empty]
			| if length > 0 then max / 1000 else null end)}'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mapfile -t systems < <(jq -r '.systems[]' "$res/env.json")
mapfile -t jobs < <(jq -r '.jobs[]' "$res/env.json")
runs=$(jq -r '.runs' "$res/env.json")
swap_runs=$(jq -r '.swap_runs // .runs' "$res/env.json")

# The systems of job $1 (jobs.sh); for a swap job also the baseline
# without a memory limit.
job_systems() {
	bench_job_systems "$1" "${systems[@]}"
	[[ $(bench_job_field "$1" 2) == swap ]] && printf '%s\n' "$BENCH_SWAP_BASELINE"
	return 0
}

# Every run of every job on every system, as one JSON object a line.
for j in "${jobs[@]}"; do
	dir=fio get=$metrics n=$runs
	if [[ $(bench_job_field "$j" 2) == swap ]]; then
		n=$swap_runs dir=swap get='{time_s, write_s, verify_s, pswpout, pswpin, oom_kill, swapoff_s, io, cpu_busy_pct, reclaim_throttled}'
	elif [[ $(bench_job_field "$j" 2) == failover ]]; then
		dir=failover get='{stall_ms, fio_error, fio_exit, ios, silent_after_s, runtime_s, loss_timeout_s, silenced_by, state_after, copies_after}'
	fi
	# A mirror job's rmbd row: its base job's runs (guest.sh)
	b=$(bench_job_base "$j")
	for s in $(job_systems "$j"); do
		for (( r = 1; r <= n; r++ )); do
			f=$res/$dir/$s/$j.$r
			if [[ $s == rmbd && -n $b && ! -f $f.json && ! -f $f.failed ]]; then
				f=$res/$dir/$s/$b.$r
			fi
			if [[ -f $f.failed ]]; then
				jq -nc --arg s "$s" --arg j "$j" --argjson r "$r" --arg e "$(cat "$f.failed")" \
					'{system: $s, job: $j, run: $r, error: $e}'
			elif [[ -f $f.json ]]; then
				jq -c --arg s "$s" --arg j "$j" --argjson r "$r" \
					"{system: \$s, job: \$j, run: \$r} + ($get)" "$f.json" 2>/dev/null ||
				jq -nc --arg s "$s" --arg j "$j" --argjson r "$r" --arg d "$dir" \
					'{system: $s, job: $j, run: $r, error: "unreadable \($d) output"}'
			fi
		done
	done
done > "$tmp/runs.jsonl"

for j in "${jobs[@]}"; do
	jq -nc --arg n "$j" --arg k "$(bench_job_field "$j" 2)" \
		--arg d "$(bench_job_field "$j" 3)" --arg a "$(bench_job_field "$j" 4)" \
		--arg sys "$(job_systems "$j")" --arg mib "$(bench_swap_mib "$j")" \
		--arg subj "$(bench_job_subject "$j")" \
		'{name: $n, kind: $k, description: $d, subject: $subj,
		  systems: ($sys | split("\n") | map(select(. != "")))}
		 + if $k == "swap" then {swapverify_args: $a, working_set_mib: ($mib | tonumber),
			memory_max_mib: ($mib | tonumber / 2 | floor)}
		   else {fio_args: $a} end'
done > "$tmp/jobs.jsonl"

for s in "${systems[@]}"; do
	if [[ -f $res/systems/$s.json ]]; then
		jq -c --arg s "$s" '{($s): .}' "$res/systems/$s.json"
	else
		jq -nc --arg s "$s" '{($s): {status: "n/a", reason: "the benchmark stopped before setting it up"}}'
	fi
done > "$tmp/systems.jsonl"

# The raw RDMA ceiling (guest.sh): each point's runs with each tool, or
# the reason a tool was not there.
mapfile -t ceil_points < <(bench_ceiling_points "${jobs[@]}")
[[ $(jq -r '.ceiling // false' "$res/env.json") == true ]] || ceil_points=()
for p in "${ceil_points[@]}"; do
	read -r pt op sz qd job post <<< "$p"
	for t in "${BENCH_CEILING_TOOLS[@]}"; do
		d=$res/ceiling/$t
		if [[ -f $d/n-a ]]; then
			jq -nc --arg p "$pt" --arg t "$t" --arg e "$(cat "$d/n-a")" \
				'{point: $p, tool: $t, na: $e}'
			continue
		fi
		for (( r = 1; r <= runs; r++ )); do
			if [[ -f $d/$pt.$r.failed ]]; then
				jq -nc --arg p "$pt" --arg t "$t" --argjson r "$r" --arg e "$(cat "$d/$pt.$r.failed")" \
					'{point: $p, tool: $t, run: $r, error: $e}'
			elif [[ -f $d/$pt.$r.json ]]; then
				jq -c --arg p "$pt" --arg t "$t" --argjson r "$r" \
					'{point: $p, tool: $t, run: $r} + .' "$d/$pt.$r.json" 2> /dev/null ||
				jq -nc --arg p "$pt" --arg t "$t" --argjson r "$r" \
					'{point: $p, tool: $t, run: $r, error: "unreadable result"}'
			fi
		done
	done
done > "$tmp/ceiling.jsonl"
for p in "${ceil_points[@]}"; do
	read -r pt op sz qd job post <<< "$p"
	jq -nc --arg n "$pt" --arg o "$op" --argjson s "$sz" --argjson d "$qd" --arg j "$job" --arg w "$post" \
		'{name: $n, op: $o, size: $s, depth: $d, job: $j, post: $w}'
done > "$tmp/points.jsonl"
tools_json=$(printf '%s\n' "${BENCH_CEILING_TOOLS[@]}" | jq -R . | jq -sc .)

host='{}'
[[ -f $out/host.json ]] && host=$(cat "$out/host.json")

jq -n \
	--argjson host "$host" \
	--slurpfile env "$res/env.json" \
	--slurpfile runs "$tmp/runs.jsonl" \
	--slurpfile jobs "$tmp/jobs.jsonl" \
	--slurpfile systems "$tmp/systems.jsonl" \
	--slurpfile ceilruns "$tmp/ceiling.jsonl" \
	--slurpfile points "$tmp/points.jsonl" \
	--argjson ceiltools "$tools_json" '
def median: map(select(. != null)) | sort
	| if length == 0 then null
	  elif length % 2 == 1 then .[(length - 1) / 2]
	  else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def ratio($a; $b): if $a == null or $b == null or $b == 0 then null else $a / $b end;

($env[0]) as $e
| ($systems | add) as $sys
| [$jobs[] as $job
   | ($job | del(.systems)) + {
      results: ([$job.systems[] as $s
		| [$runs[] | select(.job == $job.name and .system == $s)] as $rr
		| [$rr[] | select(.error == null)] as $ok
		| {($s): (if ($sys[$s].status // "ok") != "ok" then {status: "n/a", reason: $sys[$s].reason}
			  elif ($ok | length) == 0 then {status: "failed",
				errors: [$rr[] | .error]}
			  else {status: "ok", runs: ($ok | length),
				failed_runs: (($rr | length) - ($ok | length)),
				errors: [$rr[] | select(.error != null) | .error]}
			    + if $job.kind == "swap" then
				{time_s: ([$ok[].time_s] | median),
				 write_s: ([$ok[].write_s] | median),
				 verify_s: ([$ok[].verify_s] | median),
				 write_kib_per_io: ([$ok[].io | select(. != null and .writes > 0)
						    | .write_kib / .writes] | median),
				 read_kib_per_io: ([$ok[].io | select(. != null and .reads > 0)
						   | .read_kib / .reads] | median),
				 pswpout: ([$ok[].pswpout] | median),
				 pswpin: ([$ok[].pswpin] | median),
				 samples: [$ok[] | del(.system, .job)]}
			      elif $job.kind == "failover" then
				{stall_ms: ([$ok[].stall_ms] | median),
				 stall_ms_min: ([$ok[].stall_ms] | min),
				 stall_ms_max: ([$ok[].stall_ms] | max),
				 io_error_runs: ([$ok[] | select(.fio_error != 0 or .fio_exit != 0)] | length),
				 samples: [$ok[] | del(.system, .job)]}
			      else
				{iops: ([$ok[].iops] | median),
				 mbps: ([$ok[].mbps] | median),
				 lat_mean_us: ([$ok[].lat_mean_us] | median),
				 lat_p99_us: ([$ok[].lat_p99_us] | median),
				 samples: [$ok[] | del(.system, .job)]} end end)}]
		| add)}
   | .results as $res
   | $res[$job.subject] as $r
   | .ratios = ([$job.systems[] | select(. != $job.subject) as $p
		| {($p): (if $job.kind == "swap" then {time: ratio($r.time_s; $res[$p].time_s)}
			  elif $job.kind == "failover" then {stall: ratio($r.stall_ms; $res[$p].stall_ms)}
			  else {iops: ratio($r.iops; $res[$p].iops),
			  mbps: ratio($r.mbps; $res[$p].mbps),
			  lat_mean: ratio($r.lat_mean_us; $res[$p].lat_mean_us),
			  lat_p99: ratio($r.lat_p99_us; $res[$p].lat_p99_us)} end)}]
		| add // {})
  ] as $jr0
# The raw RDMA ceiling: per point and tool the medians over the runs; the
# ceiling used is the tool with the most operations a second (normally
# the kernel one: perftest pays a system call a post), and the rmbd job of
# the same size and depth as a fraction of it.
| [$points[] as $pt
   | ([$ceiltools[] as $t
	| [$ceilruns[] | select(.point == $pt.name and .tool == $t)] as $rr
	| [$rr[] | select(.error == null and .na == null)] as $ok
	| {($t): (if any($rr[]; .na != null) then {status: "n/a", reason: ([$rr[] | .na] | first)}
		  elif ($rr | length) == 0 then {status: "n/a", reason: "not measured in this run"}
		  elif ($ok | length) == 0 then {status: "failed",
			errors: ([$rr[] | .error] | if length == 0 then ["no result"] else . end)}
		  else {status: "ok", runs: ($ok | length),
			failed_runs: (($rr | length) - ($ok | length)),
			errors: [$rr[] | select(.error != null) | .error],
			ops_per_s: ([$ok[].ops_per_s] | median),
			mbps: ([$ok[].mbps] | median),
			lat_us: ([$ok[].lat_us] | median),
			samples: [$ok[] | del(.point, .tool)]} end)}] | add // {}) as $by
   | ([$ceiltools[] | select($by[.].status == "ok")]
      | max_by($by[.].ops_per_s) // null) as $used
   | ([$jr0[] | select(.name == $pt.job) | .results.rmbd] | first) as $rm
   | $pt + {tools: $by, used: $used,
	    ceiling: (if $used then $by[$used] | {ops_per_s, mbps, lat_us} else null end),
	    rmbd: (if ($rm.status // "") == "ok" then {iops: $rm.iops, mbps: $rm.mbps, lat_mean_us: $rm.lat_mean_us} else null end)}
   | .of_ceiling = (if .ceiling == null or .rmbd == null then null
		    else {iops: ratio(.rmbd.iops; .ceiling.ops_per_s),
			  mbps: ratio(.rmbd.mbps; .ceiling.mbps),
			  lat_mean: ratio(.rmbd.lat_mean_us; .ceiling.lat_us)} end)
  ] as $ceil
| [$jr0[] | . as $j
   | ([$ceil[] | select(.job == $j.name)] | first) as $c
   | if $c then . + {ceiling: {point: $c.name, used: $c.used, of_ceiling: $c.of_ceiling}} else . end
  ] as $jr
| def jobratio($j; $p; $m): ([$jr[] | select(.name == $j) | .ratios[$p][$m]] | first);
  def target($what; $j; $p; $m; $op; $t):
	jobratio($j; $p; $m) as $v
	| {target: $what, job: $j, peer: $p, metric: $m, op: $op, threshold: $t,
	   value: $v,
	   met: (if $v == null then null elif $op == ">=" then $v >= $t
		 elif $op == "<=" then $v <= $t elif $op == ">" then $v > $t
		 else $v < $t end)};
  # The swap job against both peers at once: its worse time ratio.
  def swap_target($what; $op; $t):
	$jr[] | select(.kind == "swap") | . as $j
	| [$j.ratios["nvme-rdma"].time, $j.ratios.nbd.time] as $v
	| {target: "\($j.name) \($what)",
	   job: $j.name, peer: "nvme-rdma,nbd", metric: "time", op: $op, threshold: $t,
	   value: (if any($v[]; . == null) then null else ($v | max) end),
	   values: {"nvme-rdma": $v[0], nbd: $v[1]},
	   met: (if any($v[]; . == null) then null
		 elif $op == "<" then all($v[]; . < $t) else all($v[]; . <= $t) end)};
  [target("4k randread QD16 IOPS >= 2x nvme-rdma"; "randread-qd16"; "nvme-rdma"; "iops"; ">="; 2),
   target("4k randwrite QD16 IOPS >= 2x nvme-rdma"; "randwrite-qd16"; "nvme-rdma"; "iops"; ">="; 2),
   target("4k randread QD1 mean latency <= 0.6x nvme-rdma"; "randread-qd1"; "nvme-rdma"; "lat_mean"; "<="; 0.6),
   target("1M seq read MB/s >= 1.3x nvme-rdma"; "seqread-1m-qd4"; "nvme-rdma"; "mbps"; ">="; 1.3),
   target("failover: a mirror stalls I/O <= 0.25x md raid1"; "failover"; "md-raid1"; "stall"; "<="; 0.25),
   swap_target("job completion time: rmbd ahead of nvme-rdma and nbd"; "<"; 1),
   ($jr[] | select(.kind != "swap" and .subject == "rmbd") | . as $j
    | target("\($j.name) IOPS ahead of nbd"; $j.name; "nbd"; "iops"; ">"; 1),
      (select($j.kind == "lat")
       | target("\($j.name) mean latency ahead of nbd"; $j.name; "nbd"; "lat_mean"; "<"; 1))),
   # Issue 20: every job ahead of nvme-rdma as well, the swap job by
   # 15 %, QD16 against QD1, the fraction of the raw ceiling.
   ($jr[] | select(.kind != "swap" and .subject == "rmbd") | . as $j
    | target("\($j.name) IOPS ahead of nvme-rdma"; $j.name; "nvme-rdma"; "iops"; ">"; 1),
      (select($j.kind == "lat")
       | target("\($j.name) mean latency ahead of nvme-rdma"; $j.name; "nvme-rdma"; "lat_mean"; "<"; 1))
    | .group = "nvme"),
   swap_target("job time <= 0.87x of nvme-rdma and of nbd (15 % ahead)"; "<="; 0.87),
   ([$jr[] | select(.name == "randread-qd16") | .results.rmbd.iops] | first) as $q16
   | ([$jr[] | select(.name == "randread-qd1") | .results.rmbd.iops] | first) as $q1
   | {target: "4k randread QD16 IOPS >= 1.5x QD1 (rmbd)", job: "randread-qd16",
      peer: "rmbd", metric: "iops", op: ">=", threshold: 1.5,
      value: ratio($q16; $q1),
      met: (ratio($q16; $q1) as $v | if $v == null then null else $v >= 1.5 end)},
   ($ceil[] | select(.rmbd != null and .ceiling != null) | . as $c
    | (if .size == "1m" or (.name | test("-1m-")) then 0.9 else 0.75 end) as $t
    | (.of_ceiling.iops) as $v
    | {target: "\(.job) >= \($t)x of the raw ceiling (\(.used))", job: .job,
       peer: "ceiling", metric: "iops", op: ">=", threshold: $t, value: $v,
       met: (if $v == null then null else $v >= $t end), group: "ceiling"})
  ] as $targets
| {date: ($host.date // $e.date), commit: $host.commit, dirty: $host.dirty,
   elapsed_s: $host.elapsed_s, vm_s: $host.vm_s,
   environment: {guest_kernel: $e.kernel, vcpus: $e.vcpus,
		 mem_mib: ($e.mem_kb / 1024 | floor), rxe_mtu: $e.rxe_mtu,
		 netdev_mtu: $e.netdev_mtu, net: ($e.net // "loop"),
		 client_addr: $e.client_addr, target_addr: $e.target_addr,
		 rps_target: $e.rps_target, rps_client: $e.rps_client, fio: $e.fio, rdma_link: $e.rdma_link,
		 accel: $host.accel, qemu: $host.qemu, vm_mem: $host.vm_mem,
		 host_cpu: $host.host_cpu, host_cpus: $host.host_cpus},
   config: {device_size: $e.device_size, runs: $e.runs,
	    swap_runs: ($e.swap_runs // $e.runs), runtime_s: $e.runtime_s,
	    ramp_s: $e.ramp_s, queues: $e.queues, depth: $e.depth, pollq: $e.pollq,
	    rmbd_has_pollq: $e.rmbd_has_pollq, loss_timeout_s: $e.loss_timeout_s,
	    direct: true},
   systems: $sys,
   jobs: $jr,
   ceiling: {measured: ($e.ceiling // false), seconds: $e.ceiling_s, runs: $e.runs,
	     tools: {perftest: "perftest ib_read_bw/ib_write_bw (-t DEPTH, reads -o DEPTH), ib_read_lat at QD1 (-e -n N for the wait point); rdma_cm, user-space verbs",
		     kernel: "tools/bench/kverbs: kernel verbs, rdma_cm, CQ in softirq, one SGE a work request; above 128 KiB the better of one work request and a chain of 128 KiB ones; wait=1 for the wait point"},
	     points: $ceil},
   targets: $targets,
   rmbd_ok: all("rmbd", "rmbd-mirror"; . as $s
		| $sys[$s] == null or
		  ($sys[$s].status == "ok"
		   and all($jr[] | select(.results | has($s)) | .results[$s];
			   .status == "ok" and .failed_runs == 0
			   and (.io_error_runs // 0) == 0)))}
' > "$out/bench.json.tmp" || { echo "bench: building bench.json failed" >&2; exit 1; }
mv "$out/bench.json.tmp" "$out/bench.json"

# The scaling section (tools/bench/scale.sh), when it ran: .scaling, its
# curves ({name, xlabel, ylabel, unit, points: [{x, y}]}) and the raw
# figures under .scaling.raw.
sc=$res/scale
if [[ -f $sc/env.json ]]; then
	for f in connect sessions client_mem cpu; do
		[[ -f $sc/$f.jsonl ]] || : > "$sc/$f.jsonl"
	done
	jq --slurpfile env "$sc/env.json" --slurpfile conn "$sc/connect.jsonl" \
		--slurpfile sess "$sc/sessions.jsonl" --slurpfile cmem "$sc/client_mem.jsonl" \
		--slurpfile cpu "$sc/cpu.jsonl" '
	def curve($n; $xl; $yl; $u; $p): {name: $n, xlabel: $xl, ylabel: $yl, unit: $u,
		points: [$p[] | select(.y != null)]};
	def mib: . / 1048576;
	def neg: if . == null then null else -. end;
	def rnd: if . == null then null else round end;
	[$conn[] | select(.connect_ms != null)] as $c
	| . + {scaling: {
	    curves: [
		curve("connect"; "export size (MiB)"; "rmbd dev connect until the first 4 KiB read is back"; "ms";
		      [$c[] | {x: (.size | mib), y: .first_read_ms}]),
		curve("connect-map"; "export size (MiB)"; "the MAPs of a connect (kprobes)"; "ms";
		      [$c[] | {x: (.size | mib), y: .phases.map_ms?}]),
		curve("map-round-trips"; "export size (MiB)"; "MAP round trips per connect"; "round trips";
		      [$c[] | {x: (.size | mib), y: (.phases.map_round_trips? // .nr_slabs)}]),
		curve("reconnect"; "export size (MiB)"; "link down and up: from the break to reads flowing again"; "ms";
		      [$c[] | {x: (.size | mib), y: (.reconnect.phases.at.flowing? // .reconnect.flowing_ms?)}]),
		curve("reconnect-live"; "export size (MiB)"; "link down and up: from the break to the new session set up"; "ms";
		      [$c[] | {x: (.size | mib), y: (.reconnect.phases.at.leg_start_ret? // .reconnect.live_ms?)}]),
		curve("reconnect-session"; "export size (MiB)"; "a reconnect: the new session set up (kprobes)"; "ms";
		      [$c[] | {x: (.size | mib), y: .reconnect.phases.leg_start_ms?}]),
		curve("target-mrs"; "sessions on one target"; "memory regions the target holds"; "MRs";
		      [$sess[] | {x: .sessions, y: .target.mapped}]),
		curve("session-memory"; "sessions on one target"; "kernel memory per session and device, both ends (MemAvailable)"; "KiB";
		      [$sess[] | {x: .sessions, y: (.per_session_kb.MemAvailable | neg | rnd)}]),
		curve("devices-iops"; "devices on one client"; "aggregate 4k randread IOPS, QD16 each"; "IOPS";
		      [$sess[] | {x: .sessions, y: (.iops | rnd)}]),
		curve("devices-latency"; "devices on one client"; "mean 4k randread latency of a device, QD16"; "us";
		      [$sess[] | {x: .sessions, y: (.lat_mean_us | rnd)}]),
		(([$cmem[] | .queues] | unique[]) as $q
		 | curve("client-memory-q\($q)"; "queue depth"; "kernel memory per device, \($q) queue(s), both ends (MemAvailable)"; "KiB";
			[$cmem[] | select(.queues == $q) | {x: .depth, y: (.per_device_kb.MemAvailable | neg | rnd)}])),
		($cpu[] | select(.busy_us_per_io != null) as $r
		 | curve("cpu-per-io-\($r.system)"; "queue depth"; "busy CPU time (all CPUs) per 4 KiB read, \($r.system)"; "us";
			[{x: 16, y: $r.busy_us_per_io}]),
		   curve("fio-cpu-per-io-\($r.system)"; "queue depth"; "fio usr+sys per 4 KiB read, \($r.system)"; "us";
			[{x: 16, y: $r.fio_us_per_io}]))
	    ],
	    raw: {settings: $env[0], connect: $conn, sessions: $sess, client_memory: $cmem, cpu: $cpu}}}
	# The targets of issue 20 in the scaling section, when it measured them.
	| .targets += [
	    ($c | map(select(.size == 17179869184)) | first | select(. != null)
	     | .reconnect.flowing_ms as $v
	     | {target: "16 GiB export: reads flow < 1 s after a link break",
		job: "scaling", peer: "", metric: "reconnect_ms", op: "<", threshold: 1000,
		value: $v, met: (if $v == null then null else $v < 1000 end)}),
	    (($sess | map(select(.sessions == 1)) | first) as $one
	     | ($sess | map(select(.sessions == 32)) | first) as $many
	     | select($one.iops != null and $many.iops != null and $one.iops > 0)
	     | ($many.iops / $one.iops) as $v
	     | {target: "32 devices: aggregate IOPS >= 1 device",
		job: "scaling", peer: "", metric: "iops", op: ">=", threshold: 1,
		value: $v, met: ($v >= 1)})]
	' "$out/bench.json" > "$out/bench.json.tmp" && mv "$out/bench.json.tmp" "$out/bench.json" ||
		echo "bench: building bench.json's scaling section failed" >&2
fi

# Number formats of the two tables: fmt(DECIMALS), lpad(N), rpad(N).
fmt_defs='
def fmt($d): if . == null then "-" elif $d == 0 then (round | tostring)
	else (. * pow(10; $d) | round | tostring
	      | ("0" * ($d + 1 - length) // "") + .
	      | .[:length - $d] + "." + .[length - $d:]) end;
def lpad($n): tostring | if length < $n then " " * ($n - length) + . else . end;
def rpad($n): tostring | if length < $n then . + " " * ($n - length) else . end;
'
jq -r "$fmt_defs"'
def x: if . == null then "-" else (fmt(2) + "x") end;

. as $b
| "rmbd benchmark \($b.date), commit \($b.commit)\(if $b.dirty then " (modified)" else "" end)",
  "guest: Linux \($b.environment.guest_kernel), \($b.environment.vcpus) vCPUs, \($b.environment.mem_mib) MiB, rxe MTU \($b.environment.rxe_mtu) (netdev \($b.environment.netdev_mtu)), QEMU \($b.environment.accel // "?"); \($b.config.device_size / 1048576 | floor) MiB devices",
  "network: \(if $b.environment.net == "two" then "client and target each on their own soft-RoCE device, the two ends of a veth pair; the target end receives on CPU mask 0x\($b.environment.rps_target)" else "one soft-RoCE device on a dummy netdev, client and target on one address (loopback)" end)",
def fiojob: .kind != "swap" and .kind != "failover";
# A row of the fio table for system $s of job $j.
def row($j; $s; $first):
  $j.results[$s] as $r
  | (if $first then $j.name else "" end | rpad(23))
    + (($s + (if $j.name == "randread-qd1-hipri" and $r.status == "ok" and ($b.systems[$s].polled | not) then "*" else "" end)) | rpad(12))
    + (if $r.status == "ok" then
	 ($r.iops | fmt(0) | lpad(8)) + ($r.mbps | fmt(1) | lpad(9))
	 + ($r.lat_mean_us | fmt(1) | lpad(10)) + ($r.lat_p99_us | fmt(1) | lpad(10))
	 + (if $s == $j.subject then
	       (if $j.ceiling.of_ceiling then
		  (($j.ceiling.of_ceiling.iops | fmt(2)) + " ceil" | lpad(15))
		  + (if $j.kind == "lat" then (($j.ceiling.of_ceiling.lat_mean | x) + " ceil" | lpad(15)) else "" end)
		else "" end)
	   else
	       ($j.ratios[$s].iops | x | lpad(15))
	       + (if $j.kind == "lat" then ($j.ratios[$s].lat_mean | x | lpad(15)) else "" end) end)
	 + (if $r.failed_runs > 0 then "  (\($r.failed_runs) run(s) failed)" else "" end)
       elif $r.status == "failed" then "FAILED" | lpad(8)
       else "n/a" | lpad(8) end);
# The rows of job $j, its subject first.
def rows($j):
  ([$j.subject] + ($j.results | keys_unsorted | map(select(. != $j.subject)))) as $ss
  | range(0; $ss | length) as $i
  | select($j.results | has($ss[$i]))
  | row($j; $ss[$i]; $i == 0);
def header($who):
  ("job" | rpad(23)) + ("system" | rpad(12)) + ("IOPS" | lpad(8)) + ("MB/s" | lpad(9))
  + ("mean" | lpad(10)) + ("p99" | lpad(10)) + ("\($who)/x IOPS" | lpad(15)) + ("\($who)/x mean" | lpad(15));

  (select(any($b.jobs[]; fiojob and .subject == "rmbd"))
   | "median of \($b.config.runs) runs of \($b.config.runtime_s) s (after \($b.config.ramp_s) s ramp), fio --direct=1; latency in us (submission to completion)",
     "rmbd/x = rmbd divided by the row: IOPS (= MB/s ratio) higher is better, latency lower is better",
     (select(any($b.jobs[]; .ceiling.of_ceiling != null))
      | "ceil (rmbd\u0027s own row): its IOPS as a fraction of the raw RDMA ceiling of the same size and depth, and at QD1 its",
	"mean latency over the ceiling\u0027s (the ceiling table below)"),
     "",
     header("rmbd")),
  ($b.jobs[] | select(fiojob and .subject == "rmbd") | rows(.)),
  (select(any($b.jobs[]; fiojob and .subject == "rmbd-mirror"))
   | "",
     "two copies: rmbd-mirror, a mirror of two legs (one per path); rmbd, one leg; md-raid1, md raid1 over",
     "two single-leg rmbd devices (one per path); mirror/x = rmbd-mirror divided by the row",
     "",
     header("mirror")),
  ($b.jobs[] | select(fiojob and .subject == "rmbd-mirror") | rows(.)),
  ($b.jobs[] | select(.kind == "failover") as $j
   | ([$j.results[] | .samples[0]? // empty] | first) as $s0
   | "",
     "\($j.name): fio \($j.fio_args) --runtime=\($s0.runtime_s // "?") on a fresh device per run; \($s0.silent_after_s // "?") s in,",
     "the target of the second copy falls silent (\($s0.silenced_by // "?")); loss_timeout \($b.config.loss_timeout_s // "?") s. stall: the longest I/O",
     "latency in ms, median of \($b.config.runs) runs (lowest and highest beside it); mirror/x stall: lower is better",
     "",
     ("job" | rpad(23)) + ("system" | rpad(12)) + ("stall" | lpad(8)) + ("lowest" | lpad(8))
	+ ("highest" | lpad(9)) + ("I/O errors" | lpad(12)) + ("mirror/x stall" | lpad(16)),
     (([$j.subject] + ($j.results | keys_unsorted | map(select(. != $j.subject)))) as $ss
      | range(0; $ss | length) as $i
      | $ss[$i] as $s | $j.results[$s] as $r
      | select($r != null)
      | (if $i == 0 then $j.name else "" end | rpad(23)) + ($s | rpad(12))
	+ (if $r.status == "ok" then
	     ($r.stall_ms | fmt(0) | lpad(8)) + ($r.stall_ms_min | fmt(0) | lpad(8))
	     + ($r.stall_ms_max | fmt(0) | lpad(9))
	     + ("\($r.io_error_runs) run(s)" | lpad(12))
	     + (if $s == $j.subject then "" else ($j.ratios[$s].stall | x | lpad(16)) end)
	     + (if $r.failed_runs > 0 then "  (\($r.failed_runs) run(s) failed)" else "" end)
	   elif $r.status == "failed" then "FAILED" | lpad(8)
	   else "n/a" | lpad(8) end))),
  ($b.jobs[] | select(.kind == "swap") as $j
   | "",
     "\($j.name): median of \($b.config.swap_runs) runs of swapverify \($j.swapverify_args) (a \($j.working_set_mib) MiB working set written, read back and checked)",
     "in a cgroup with memory.max \($j.memory_max_mib)M, each device in turn the only swap; no-limit: no memory.max, no swap used",
     "time: completion time in s, write and verify: the program phases; out/in: MiB swapped out and in",
     "(pswpout/pswpin); KiB/wr, KiB/rd: mean size of a write and of a read request on the device; rmbd/x time: lower is better",
     "",
     ("job" | rpad(19)) + ("system" | rpad(11)) + ("time s" | lpad(8)) + ("write" | lpad(7))
	+ ("verify" | lpad(8)) + ("out MiB" | lpad(9)) + ("in MiB" | lpad(8))
	+ ("KiB/wr" | lpad(8)) + ("KiB/rd" | lpad(8)) + ("rmbd/x time" | lpad(13)),
     (($j.results | keys_unsorted)[] as $s
      | $j.results[$s] as $r
      | (if $s == ($j.results | keys_unsorted | first) then $j.name else "" end | rpad(19))
	+ ($s | rpad(11))
	+ (if $r.status == "ok" then
	     ($r.time_s | fmt(2) | lpad(8)) + ($r.write_s | fmt(1) | lpad(7))
	     + ($r.verify_s | fmt(1) | lpad(8)) + ($r.pswpout / 256 | fmt(0) | lpad(9))
	     + ($r.pswpin / 256 | fmt(0) | lpad(8))
	     + ($r.write_kib_per_io | fmt(0) | lpad(8)) + ($r.read_kib_per_io | fmt(0) | lpad(8))
	     + (if $s == "rmbd" then "" else ($j.ratios[$s].time | x | lpad(13)) end)
	     + (if $r.failed_runs > 0 then "  (\($r.failed_runs) run(s) failed)" else "" end)
	   elif $r.status == "failed" then "FAILED" | lpad(8)
	   else "n/a" | lpad(8) end))),
  (select($b.ceiling.measured and ($b.ceiling.points | length) > 0)
   | "",
     "raw RDMA ceiling: RDMA READ/WRITE over the same soft-RoCE path, \($b.ceiling.seconds) s a measurement, median of \($b.ceiling.runs) runs;",
     "perftest: user-space verbs (a system call a post on rxe; ib_read_lat at QD1); kernel: kernel verbs (tools/bench/kverbs; above 128 KiB the better of 1 WR and 128 KiB WRs);",
     "-wait: the next operation posted by a submitter that sleeps until each completes (ib_read_lat -e, kverbs wait=1), as fio at QD1 without --hipri; the others post at once from the completion;",
     "ops/s, MB/s and mean latency in us; used: the higher, the ceiling of rmbd/ceil (rmbd IOPS / ceiling ops/s; QD1: mean x)",
     "",
     ("point" | rpad(17)) + ("rmbd job" | rpad(19)) + ("perftest" | lpad(9)) + ("MB/s" | lpad(8)) + ("mean" | lpad(8))
	+ ("kernel" | lpad(9)) + ("MB/s" | lpad(8)) + ("mean" | lpad(8)) + ("used" | lpad(10)) + ("rmbd/ceil" | lpad(11)),
     ($b.ceiling.points[] as $p
      | def fig($t): $p.tools[$t] as $r
	  | if ($r.status // "n/a") == "ok" then
	      ($r.ops_per_s | fmt(0) | lpad(9)) + ($r.mbps | fmt(1) | lpad(8)) + ($r.lat_us | fmt(1) | lpad(8))
	    elif $r.status == "failed" then ("FAILED" | lpad(9)) + (" " * 16)
	    else ("n/a" | lpad(9)) + (" " * 16) end;
	($p.name | rpad(17)) + ($p.job | rpad(19)) + fig("perftest") + fig("kernel")
	+ ($p.used // "-" | lpad(10))
	+ ($p.of_ceiling.iops | fmt(2) | lpad(11))
	+ (if $p.depth == 1 and $p.of_ceiling != null then " (mean \($p.of_ceiling.lat_mean | x))" else "" end)),
     ($b.ceiling.points[] as $p | $p.tools | to_entries[]
      | select(.value.status != "ok" or (.value.failed_runs // 0) > 0)
      | "note: ceiling \($p.name) with \(.key): \(.value.reason // (.value.errors | first))")),
  "",
  (if any($b.jobs[] | select(.name == "randread-qd1-hipri") | .results | to_entries[];
	  .value.status == "ok" and ($b.systems[.key].polled | not)) then
	"* no poll queues on this device: io_uring --hipri ran, but completions came by interrupt",
	"" else empty end),
  "targets (rmbd against its peers, medians above):",
  ($b.targets[] | select(.peer != "nbd" and .group != "nvme")
   | "  " + (if .met == true then "MET    " elif .met == false then "NOT MET" else "n/a    " end)
     + "  " + (.target | rpad(57)) + "  "
     + (if .values then ([.values | to_entries[] | "\(.value | x) \(.key)"] | join(", "))
	elif .metric == "reconnect_ms" then (if .value == null then "-" else "\(.value | round) ms" end)
	else (.value | x) end)),
  (("nbd", "nvme") as $g
   | [$b.targets[] | select(if $g == "nbd" then .peer == "nbd" else .group == "nvme" end)] as $n
   | [$n[] | select(.met == false)] as $miss
   | [$n[] | select(.met == null)] as $na
   | "  " + (if ($n | length) == 0 or ($na | length) == ($n | length) then "n/a    "
	     elif ($miss | length) == 0 and ($na | length) == 0 then "MET    " else "NOT MET" end)
     + "  every job ahead of \(if $g == "nbd" then "nbd" else "nvme-rdma" end) (IOPS; and mean latency at QD1)"
     + (if ($miss | length) > 0 then ": behind in " + ([$miss[] | "\(.job) \(.metric) \(.value | x)"] | join(", ")) else "" end)),
  (($b.systems | to_entries[] | select(.value.status != "ok")
    | "note: \(.key) is n/a: \(.value.reason)")),
  ($b.jobs[] as $j | $j.results | to_entries[]
   | select(.value.status == "failed" or (.value.failed_runs // 0) > 0)
   | "note: \($j.name) on \(.key): \(.value.errors | first)")
' "$out/bench.json" > "$out/bench.txt" || { echo "bench: rendering the table failed" >&2; exit 1; }
jq -r "$fmt_defs"'
def neg: if . == null then null else -. end;
select(.scaling) | .scaling.raw as $r
| "",
  "scaling (tools/bench/scale.sh): connect and reconnect against the export size (slabs of \($r.connect[0].slab_size // 0 | . / 1048576 | floor) MiB), in ms.",
  "add: export add; connect: rmbd dev connect until the first 4 KiB read is back; session: the session set up in it",
  "(rmbd_c_leg_start), MAPs: its MAP round trips and their time. Reconnect: link down under QD1 reads, up once noticed;",
  "from the break: lost (the client noticed), retry (the new session starts), live (it is up), flowing (reads count again)",
  "",
  ("export" | rpad(8)) + ("add" | lpad(7)) + ("connect" | lpad(8)) + ("session" | lpad(8)) + ("MAPs" | lpad(6))
	+ ("MAP ms" | lpad(7)) + ("lost" | lpad(8)) + ("retry" | lpad(7)) + ("live" | lpad(7)) + ("flowing" | lpad(8))
	+ ("session" | lpad(8)) + ("MAP ms" | lpad(7)),
  ($r.connect[] | ((.size / 1048576 | floor | tostring) + "M" | rpad(8))
	+ (if .skipped then "  skipped: \(.skipped)" elif .error then "  FAILED: \(.error)" else
	  (.export_add_ms | fmt(0) | lpad(7)) + (.first_read_ms | fmt(0) | lpad(8)) + (.phases.leg_start_ms? | fmt(1) | lpad(8))
	  + ((.phases.map_round_trips? // .nr_slabs) | fmt(0) | lpad(6)) + (.phases.map_ms? | fmt(1) | lpad(7))
	  + (.reconnect.phases.at.lost? | fmt(0) | lpad(8)) + (.reconnect.phases.at.leg_start? | fmt(0) | lpad(7))
	  + ((.reconnect.phases.at.leg_start_ret? // .reconnect.live_ms?) | fmt(0) | lpad(7))
	  + ((.reconnect.phases.at.flowing? // .reconnect.flowing_ms?) | fmt(0) | lpad(8))
	  + (.reconnect.phases.leg_start_ms? | fmt(1) | lpad(8)) + (.reconnect.phases.map_ms? | fmt(1) | lpad(7)) end)),
  (select(($r.sessions | length) > 0)
   | "",
     "sessions and devices: N devices on one shared export of \($r.settings.shared_export) (slabs of \($r.settings.shared_slab)), one client,",
     "one target; MRs: the target'"'"'s memory regions; KiB/session: MemAvailable drop per session and device (both ends,",
     "one kernel); fio \($r.settings.fio_args) on every device at once",
     "",
     ("devices" | rpad(9)) + ("sessions" | lpad(9)) + ("MRs" | lpad(6)) + ("KiB/session" | lpad(13)) + ("Slab KiB" | lpad(10))
	+ ("Vmalloc KiB" | lpad(13)) + ("IOPS" | lpad(8)) + ("mean us" | lpad(9)),
     ($r.sessions[] | (.sessions | tostring | rpad(9)) + (.target.sessions | fmt(0) | lpad(9)) + (.target.mapped | fmt(0) | lpad(6))
	+ (.per_session_kb.MemAvailable | neg | fmt(0) | lpad(13)) + (.per_session_kb.Slab | fmt(0) | lpad(10))
	+ (.per_session_kb.VmallocUsed | fmt(0) | lpad(13))
	+ (.iops | fmt(0) | lpad(8)) + (.lat_mean_us | fmt(0) | lpad(9)))),
  (select(($r.client_memory | length) > 0)
   | "",
     "memory per device (\($r.settings.devmem_devices) devices at a time, both ends, one kernel), KiB:",
     ("queues x depth" | rpad(16)) + ("MemAvailable" | lpad(13)) + ("Slab" | lpad(8)) + ("SUnreclaim" | lpad(12))
	+ ("VmallocUsed" | lpad(13)),
     ($r.client_memory[] | ("\(.queues) x \(.depth)" | rpad(16)) + (.per_device_kb.MemAvailable | neg | fmt(0) | lpad(13))
	+ (.per_device_kb.Slab | fmt(0) | lpad(8)) + (.per_device_kb.SUnreclaim | fmt(0) | lpad(12))
	+ (.per_device_kb.VmallocUsed | fmt(0) | lpad(13)))),
  (select(($r.cpu | length) > 0)
   | "",
     "CPU per 4 KiB read, \($r.settings.fio_args): busy time of all CPUs (both ends; a window inside the run,",
     "its share of all CPUs beside it) and fio'"'"'s own usr+sys, per I/O:",
     ($r.cpu[] | (.system | rpad(12)) + (if .skipped then "n/a: \(.skipped)" elif .error then "FAILED: \(.error)" else
	((.window_iops // .iops) | fmt(0) | lpad(8)) + " IOPS" + (.busy_pct | fmt(0) | lpad(5)) + " % busy"
	+ (.busy_us_per_io | fmt(1) | lpad(8)) + " us busy" + (.fio_us_per_io | fmt(1) | lpad(8)) + " us fio" end)))
' "$out/bench.json" >> "$out/bench.txt" || echo "bench: rendering the scaling table failed" >&2
cat "$out/bench.txt"

# The charts (chart.sh): a missing gnuplot or a chart that fails is a
# warning, never the benchmark's failure.
if ! command -v gnuplot > /dev/null; then
	echo "bench: WARNING: gnuplot is not installed (make deps): no chart"
	rm -f "$out/bench.png" "$out/bench.svg" "$out/scaling.png" "$out/scaling.svg"
elif ! "$here/chart.sh" "$out"; then
	echo "bench: WARNING: the chart failed (above); the results stand"
fi

if [[ $(jq -r '.rmbd_ok' "$out/bench.json") != true ]]; then
	echo "bench: rmbd FAILED (see the notes above and $out/vm/)"
	exit 1
fi
exit 0
exit
}
