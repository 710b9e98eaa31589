# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154
#
# The scaling section of the benchmark, sourced by tools/bench/guest.sh
# (in the VM, after the jobs; it uses guest.sh's network, its devices and
# helpers) when RMBD_BENCH_SCALE is 1.  scale_main measures:
#
#   connect    per export size (RMBD_BENCH_SCALE_SIZES, bytes, one a
#              word): the time of "export add" (allocation and zeroing),
#              of "rmbd dev connect" until the first 4 KiB read of the new
#              /dev/rmbdN is back, the slabs and the admin round trips
#              (MAP and the others) the connect took, and a reconnect:
#              the link of the scaling path goes down under reads (a dd
#              at QD1) and up again once the device noticed; the time
#              from the break to the device live again and to reads
#              flowing again, and the reconnect's own figures
#   sessions   1, 8 and 32 devices on one shared export (its target
#              keeps a session for each): the target's sessions and
#              memory regions, and the kernel's memory growth
#   devices    the same devices: aggregate 4k randread IOPS (one fio
#              process, a section per device, all at once) and each
#              device's mean latency
#   client_mem the memory growth of a device (RMBD_BENCH_SCALE_DEVMEM
#              devices at a time) for a few queues x depth settings
#   cpu        CPU time per 4 KiB read, randread QD16, on the benchmark's
#              rmbd and nvme-rdma devices: busy time of all CPUs
#              (/proc/stat) over a window inside fio's run divided by the
#              device's reads in it, and fio's own (usr + sys) per I/O
#
# Where a connect's time goes comes from kprobes on the client module
# (rmbd_c_leg_start, rmbd_c_admin_xfer, rmbd_c_queue_connect), registered
# once for the whole section, their hits stamped in the trace buffer.
# Results: scale/*.json in the results share, one object a line in the
# .jsonl files; report.sh turns them into bench.json's .scaling.

scale_sizes=${RMBD_BENCH_SCALE_SIZES-67108864 268435456 1073741824 4294967296}
scale_counts=${RMBD_BENCH_SCALE_DEVICES:-1 8 32}
scale_devmem=${RMBD_BENCH_SCALE_DEVMEM:-8}
scale_qd=${RMBD_BENCH_SCALE_QD:-1x32 1x128 2x128 2x1024}
scale_shared_size=256M
scale_shared_slab=16M
scale_fio_args="--ioengine=libaio --rw=randread --bs=4k --iodepth=16"
scale_trace=${RMBD_BENCH_SCALE_TRACE:-1}
T=/sys/kernel/tracing
scale_traced=0
scale_host=
scale_addr=
scale_cnet=

ssay() { say "scale: $*"; }

# The scaling path: a network of its own, so that taking its link down
# touches no other device: the fourth veth pair (c3/t3, rxe_c3/rxe_t3,
# 10.204.0.1 and .2) with "two", rxe3 on a dummy d4 (10.204.0.1) with
# "loop".
scale_net() {
	if [[ $net == two ]]; then
		setup_net_pair 3 || return 1
		scale_addr=$pair_target scale_cnet=c3
	else
		ip link add d4 mtu 4500 type dummy &&
		ip addr add 10.204.0.1/24 dev d4 && ip link set d4 up &&
		rdma link add rxe3 type rxe netdev d4 || return 1
		scale_addr=10.204.0.1 scale_cnet=d4
	fi
	rmbd_listen "$scale_addr"
}

scale_link() {	# up|down
	ip link set "$scale_cnet" "$1"
}

# ---- kprobes ------------------------------------------------------------

scale_trace_on() {
	(( scale_trace )) || return 0
	[[ -d $T/events ]] || mount -t tracefs nodev "$T" 2> /dev/null || return 0
	[[ -w $T/kprobe_events ]] || return 0
	{
		echo 'p:rmbd_scale/leg_start rmbd_client:rmbd_c_leg_start' >> "$T/kprobe_events" &&
		echo "r:rmbd_scale/leg_start_ret rmbd_client:rmbd_c_leg_start ret=\$retval" >> "$T/kprobe_events" &&
		echo 'p:rmbd_scale/xfer rmbd_client:rmbd_c_admin_xfer op=%si:u16' >> "$T/kprobe_events" &&
		echo 'p:rmbd_scale/qconn rmbd_client:rmbd_c_queue_connect idx=%si:u32' >> "$T/kprobe_events" &&
		echo 'p:rmbd_scale/recover rmbd_client:rmbd_c_recover' >> "$T/kprobe_events"
	} 2> /dev/null || { scale_trace_off; ssay "no kprobes on the client module: no connect phases"; return 0; }
	echo mono > "$T/trace_clock" 2> /dev/null
	echo 4096 > "$T/buffer_size_kb" 2> /dev/null
	echo 1 > "$T/events/rmbd_scale/enable" && scale_traced=1
}

scale_trace_off() {
	[[ -d $T/events/rmbd_scale ]] || return 0
	echo 0 > "$T/events/rmbd_scale/enable" 2> /dev/null
	echo > "$T/trace" 2> /dev/null
	{
		echo '-:rmbd_scale/leg_start'
		echo '-:rmbd_scale/leg_start_ret'
		echo '-:rmbd_scale/xfer'
		echo '-:rmbd_scale/qconn'
		echo '-:rmbd_scale/recover'
	} >> "$T/kprobe_events" 2> /dev/null
	scale_traced=0
}

scale_trace_clear() { (( scale_traced )) && echo > "$T/trace"; return 0; }

# A mark in the trace buffer, in the clock of the kprobes' stamps.
scale_mark() { (( scale_traced )) && echo "scale-$1" > "$T/trace_marker"; return 0; }

# What the trace holds since it was cleared, as JSON (null without
# kprobes), in ms: "at" gives the time of each mark (scale_mark) and
# kernel event from the first mark: the client noticing a loss (lost,
# rmbd_c_recover), each session setup starting and ending (leg_start,
# leg_start_ret: the last of each); the phases of the last session
# setup: the admin queue's connect (to its first admin message), OPEN
# (and AUTH) to the first MAP, the MAPs, the I/O queues' connects; the
# admin round trips by kind (MAP and MAP_RANGE count as MAPs), and the
# setups tried.
scale_trace_phases() {
	(( scale_traced )) || { echo null; return; }
	awk '
	function ms(a, b) { return sprintf("%.3f", (b - a) * 1000) + 0 }
	function at(n, t) { if (t0 == "") return; if (!(n in when)) order[++no] = n; when[n] = t }
	match($0, /[0-9]+\.[0-9]+: (leg_start|leg_start_ret|xfer|qconn|recover|tracing_mark_write):/) {
		s = substr($0, RSTART, RLENGTH); split(s, f, ": ")
		t = f[1] + 0; ev = f[2]; sub(/:$/, "", ev)
		if (ev == "tracing_mark_write") {
			m = $0; sub(/.*tracing_mark_write: scale-/, "", m); sub(/[ \t]+$/, "", m)
			if (t0 == "") t0 = t
			at(m, t)
		} else if (ev == "recover") {
			if (!("lost" in when)) at("lost", t)
		} else if (ev == "leg_start") {
			st = t; x0 = ""; m0 = ""; q1 = ""; end = ""; ret = ""
			nopen = 0; nmap = 0; nother = 0; tries++
			at("leg_start", t)
		} else if (st == "") {
			next
		} else if (ev == "xfer") {
			op = $0; sub(/.*op=/, "", op); op += 0
			if (x0 == "") x0 = t
			if (op == 2 || op == 6) { if (m0 == "") m0 = t; nmap++ }
			else if (op == 1) nopen++
			else nother++
		} else if (ev == "qconn") {
			i = $0; sub(/.*idx=/, "", i); i += 0
			if (i == 1 && q1 == "") q1 = t
		} else if (ev == "leg_start_ret") {
			end = t; ret = $0; sub(/.*ret=/, "", ret); sub(/[ \t]+$/, "", ret)
			at("leg_start_ret", t)
		}
	}
	END {
		printf "{\"at\": {"
		for (i = 1; i <= no; i++)
			printf "%s\"%s\": %s", (i > 1 ? ", " : ""), order[i], ms(t0, when[order[i]])
		printf "}"
		if (st != "" && end != "") {
			if (m0 == "") m0 = x0
			mapend = (q1 != "" ? q1 : end)
			printf ", \"leg_start_ms\": %s, \"admin_connect_ms\": %s, \"open_ms\": %s, ", ms(st, end), ms(st, x0), ms(x0, m0)
			printf "\"map_ms\": %s, \"io_queues_ms\": %s, ", ms(m0, mapend), (q1 != "" ? ms(q1, end) : 0)
			printf "\"map_round_trips\": %d, \"open_round_trips\": %d, \"other_round_trips\": %d, \"ret\": \"%s\", \"tries\": %d", nmap, nopen, nother, ret, tries
		}
		print "}"
	}' "$T/trace" 2> /dev/null || echo null
}

# ---- memory ---------------------------------------------------------------

# MemAvailable, Slab, SUnreclaim (KiB), after the page cache is dropped.
scale_mem() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	sleep 1
	awk '/^(MemAvailable|MemFree|Slab|SUnreclaim|KernelStack|PageTables|VmallocUsed):/ {
		k = $1; sub(/:$/, "", k); printf "%s\"%s\": %d", (n++ ? ", " : "{"), k, $2 } END { print "}" }' /proc/meminfo
}

# mem_delta A B: B - A of each field, as JSON.
scale_mem_delta() {
	jq -nc --argjson a "$1" --argjson b "$2" '$b | with_entries(.value -= ($a[.key] // 0))'
}

# ---- devices --------------------------------------------------------------

scale_devs=()
scale_connect() {	# EXPORT ARGS...: a device in $d (/dev/rmbdN)
	local e=$1
	shift
	rmbd_connect addr "$scale_addr" export "$e" "$@"
}

scale_disconnect_all() {
	local x
	for x in "${scale_devs[@]}"; do
		timeout 60 "$RMBD_BIN" dev disconnect "${x#/dev/}" > /dev/null 2>&1
	done
	scale_devs=()
}

# The reads of device DEV so far (its stat file).
scale_reads() { awk '{print $1}' "/sys/block/${1#/dev/}/stat"; }

# ---- 1. connect and reconnect against the export size ---------------------

scale_nap() { read -rt "$1" -u "$scale_napfd" 2> /dev/null; return 0; }	# SECONDS, no fork
scale_state() { local x; read -r x < "/sys/block/${1#/dev/}/rmbd/state" 2> /dev/null; echo "$x"; }

scale_size_point() {	# SIZE
	local out=$res/scale/connect.jsonl sz=$1 name=scale$(( $1 >> 20 ))m t0 t1 t2 avail e leg ph tsess d
	local add_ms conn_ms first_ms rc_json='null'
	avail=$(awk '/^MemAvailable:/ {printf "%.0f\n", $2 * 1024}' /proc/meminfo)
	if (( sz + (256 << 20) > avail )); then
		ssay "$(( sz >> 20 )) MiB: skipped, MemAvailable is $(( avail >> 20 )) MiB"
		jq -nc --argjson s "$sz" --argjson a "$avail" \
			'{size: $s, skipped: "MemAvailable \($a / 1048576 | floor) MiB is less than the export plus 256 MiB"}' >> "$out"
		return
	fi
	t0=$(usec)
	if ! e=$("$RMBD_BIN" export add "$name" size "$sz" hosts "$scale_host" 2>&1); then
		ssay "$(( sz >> 20 )) MiB: export add failed: $e"
		jq -nc --argjson s "$sz" --arg e "$e" '{size: $s, error: "export add: \($e)"}' >> "$out"
		return
	fi
	add_ms=$(( ($(usec) - t0) / 1000 ))
	scale_trace_clear
	why=
	scale_mark begin
	t0=$(usec)
	if ! scale_connect "$name" reconnect_delay 1 loss_timeout 60; then
		ssay "$(( sz >> 20 )) MiB: $why"
		"$RMBD_BIN" export del "$name" force > /dev/null 2>&1
		jq -nc --argjson s "$sz" --arg e "$why" '{size: $s, error: $e}' >> "$out"
		return
	fi
	t1=$(usec)
	scale_mark node
	dd if="$d" of=/dev/null bs=4k count=1 iflag=direct status=none
	t2=$(usec)
	scale_mark read
	conn_ms=$(( (t1 - t0) / 1000 )) first_ms=$(( (t2 - t0) / 1000 ))
	ph=$(scale_trace_phases)
	leg=$("$RMBD_BIN" -j dev show "${d#/dev/}" | jq -c '.[0].legs[0] | {nr_slabs, slab_size, size}')
	tsess=$("$RMBD_BIN" -j -d export show "$name" | jq -c '.[0] | {sessions, mapped, mem, session_mapped: [.session_list[]?.mapped]}')

	# The reconnect: reads at QD1 all along; the link goes down, comes
	# up once the device noticed, and the device must be live and its
	# reads counting again.  Polled from the shell's builtins (sysfs),
	# every 5 ms.
	local dd_pid tb tn tu tl tf r0 r sess2 ph2 noticed=0 k
	rm -f /tmp/scale-stop
	( while [[ ! -e /tmp/scale-stop ]]; do
		dd if="$d" of=/dev/null bs=4k count=256 iflag=direct status=none
	  done ) &
	dd_pid=$!
	sleep 1
	scale_trace_clear
	scale_mark break
	tb=$(usec)
	scale_link down
	for (( k = 0; k < 4000; k++ )); do
		[[ $(scale_state "$d") != live ]] && { noticed=1; break; }
		scale_nap 0.005
	done
	tn=$(usec)
	scale_link up
	tu=$(usec)
	scale_mark up
	tl='' tf=''
	for (( k = 0; k < 12000; k++ )); do
		[[ $(scale_state "$d") == live ]] && { tl=$(usec); break; }
		scale_nap 0.005
	done
	if [[ -n $tl ]]; then
		scale_mark live-seen
		read -r r0 _ < "/sys/block/${d#/dev/}/stat"
		for (( k = 0; k < 2000; k++ )); do
			read -r r _ < "/sys/block/${d#/dev/}/stat"
			(( r > r0 )) && { tf=$(usec); scale_mark flowing; break; }
			scale_nap 0.005
		done
	fi
	touch /tmp/scale-stop
	wait "$dd_pid" 2> /dev/null
	ph2=$(scale_trace_phases)
	sess2=$("$RMBD_BIN" -j -d export show "$name" | jq -c '.[0] | {sessions, mapped}')
	rc_json=$(jq -nc --argjson n "$noticed" --argjson tb "$tb" --argjson tn "$tn" --argjson tu "$tu" \
		--arg tl "$tl" --arg tf "$tf" --argjson ph "$ph2" \
		--argjson sess "$sess2" --argjson rc "$("$RMBD_BIN" -j dev show "${d#/dev/}" | jq '.[0].reconnects // null')" '
		def ms($a; $b): if $b == "" then null else (($b | tonumber) - $a) / 1000 end;
		{noticed: ($n == 1), notice_ms: (($tn - $tb) / 1000), link_down_ms: (($tu - $tb) / 1000),
		 live_ms: ms($tb; $tl), flowing_ms: ms($tb; $tf), live_after_up_ms: ms($tu; $tl),
		 phases: $ph, target_after: $sess, reconnects: $rc}')
	timeout 60 "$RMBD_BIN" dev disconnect "${d#/dev/}" > /dev/null 2>&1
	"$RMBD_BIN" export del "$name" force > /dev/null 2>&1
	jq -nc --argjson s "$sz" --argjson add "$add_ms" --argjson c "$conn_ms" \
		--argjson f "$first_ms" --argjson ph "$ph" --argjson leg "$leg" \
		--argjson t "$tsess" --argjson rc "$rc_json" \
		'{size: $s, export_add_ms: $add, connect_ms: $c, first_read_ms: $f,
		  nr_slabs: $leg.nr_slabs, slab_size: $leg.slab_size, phases: $ph,
		  target: $t, reconnect: $rc}' >> "$out"
	ssay "$(( sz >> 20 )) MiB: export add $add_ms ms, connect $first_ms ms ($(jq -r '.nr_slabs' <<< "$leg") slabs, session $(jq -r '.leg_start_ms // "?"' <<< "$ph") ms, MAPs $(jq -r '.map_ms // "?"' <<< "$ph") ms), reconnect: live $(jq -r '.live_ms' <<< "$rc_json") ms, reads $(jq -r '.flowing_ms' <<< "$rc_json") ms after the break (session $(jq -r '.leg_start_ms // "?"' <<< "$ph2") ms)"
}

# A connect and disconnect that does not count: the first connect over
# a fresh path waits for address resolution (2 s in the first runs).
scale_warm_up() {
	local name=scalewarm
	"$RMBD_BIN" export add "$name" size 4M slab 4M hosts "$scale_host" > /dev/null 2>&1 || return 0
	why=
	if scale_connect "$name"; then
		dd if="$d" of=/dev/null bs=4k count=1 iflag=direct status=none
		timeout 60 "$RMBD_BIN" dev disconnect "${d#/dev/}" > /dev/null 2>&1
	fi
	"$RMBD_BIN" export del "$name" force > /dev/null 2>&1
}

# ---- 2 and 4. sessions and devices -----------------------------------------

scale_fio_devices() {	# OUT: one fio, a section per device in ${scale_devs[@]}
	local out=$1 x sec=() args
	read -r -a args <<< "$scale_fio_args"
	for x in "${scale_devs[@]}"; do
		sec+=(--name="${x#/dev/}" --filename="$x")
	done
	timeout -k 10 $(( ramp + runtime + 120 )) fio --direct=1 "${args[@]}" \
		--ramp_time="$ramp" --runtime="$runtime" --time_based \
		--randrepeat=0 --norandommap --output-format=json \
		--output="$out" "${sec[@]}" > /dev/null 2> "$out.err"
}

scale_sessions() {
	local name=scaleshared n m0 m1 e target k fj iops lat
	if ! e=$("$RMBD_BIN" export add "$name" size "$scale_shared_size" slab "$scale_shared_slab" \
			shared hosts "$scale_host" 2>&1); then
		ssay "sessions: export add failed: $e"
		return
	fi
	m0=$(scale_mem)
	for n in $scale_counts; do
		while (( ${#scale_devs[@]} < n )); do
			why=
			scale_connect "$name" shared || { ssay "sessions: $why"; break 2; }
			scale_devs+=("$d")
		done
		m1=$(scale_mem)
		target=$("$RMBD_BIN" -j -d export show "$name" |
			jq -c '.[0] | {sessions, mapped, mem, nr_slabs, session_mapped: ([.session_list[]?.mapped] | unique)}')
		fj=$res/scale/devices.$n.json
		if scale_fio_devices "$fj"; then
			iops=$(jq '[.jobs[].read.iops] | add' "$fj")
			lat=$(jq '[.jobs[].read.lat_ns.mean / 1000] | add / length' "$fj")
		else
			iops=null lat=null
			ssay "devices: fio on $n devices failed: $(tr '\n' ' ' < "$fj.err" | cut -c1-200)"
		fi
		jq -nc --argjson n "$n" --argjson m0 "$m0" --argjson m1 "$m1" \
			--argjson d "$(scale_mem_delta "$m0" "$m1")" --argjson t "$target" \
			--argjson iops "$iops" --argjson lat "$lat" \
			--argjson per "$( [[ -f $fj ]] && jq -c '[.jobs[] | {dev: .jobname, iops: .read.iops, lat_mean_us: (.read.lat_ns.mean / 1000)}]' "$fj" 2> /dev/null || echo null)" \
			'{sessions: $n, target: $t, mem_before_kb: $m0, mem_kb: $m1, delta_kb: $d,
			  per_session_kb: ($d | with_entries(.value /= $n)),
			  iops: $iops, lat_mean_us: $lat, per_device: $per}' >> "$res/scale/sessions.jsonl"
		ssay "$n sessions: $(jq -r '.target | "\(.sessions) sessions, \(.mapped) MRs"' <<< "{\"target\": $target}"), MemAvailable -$(( ($(jq .MemAvailable <<< "$m0") - $(jq .MemAvailable <<< "$m1")) / n )) KiB a session; $n devices: ${iops%.*} IOPS, mean ${lat%.*} us"
	done
	scale_disconnect_all
	"$RMBD_BIN" export del "$name" force > /dev/null 2>&1
}

# ---- 3. client memory per device against queues and depth -----------------

scale_client_mem() {
	local name=scaleshared qd q dp m0 m1 k e ok
	if ! e=$("$RMBD_BIN" export add "$name" size "$scale_shared_size" slab "$scale_shared_slab" \
			shared hosts "$scale_host" 2>&1); then
		ssay "client memory: export add failed: $e"
		return
	fi
	for qd in $scale_qd; do
		q=${qd%x*} dp=${qd#*x}
		m0=$(scale_mem)
		ok=1
		for (( k = 0; k < scale_devmem; k++ )); do
			why=
			scale_connect "$name" shared queues "$q" depth "$dp" || { ok=0; ssay "client memory: $why"; break; }
			scale_devs+=("$d")
		done
		m1=$(scale_mem)
		(( ok )) && jq -nc --argjson q "$q" --argjson dp "$dp" --argjson n "$scale_devmem" \
			--argjson m0 "$m0" --argjson m1 "$m1" --argjson d "$(scale_mem_delta "$m0" "$m1")" \
			--argjson got "$("$RMBD_BIN" -j dev show "${d#/dev/}" | jq -c '.[0] | {queues, depth}' 2> /dev/null || echo null)" \
			'{queues: $q, depth: $dp, devices: $n, got: $got, mem_before_kb: $m0,
			  delta_kb: $d, per_device_kb: ($d | with_entries(.value /= $n))}' >> "$res/scale/client_mem.jsonl"
		(( ok )) && ssay "queues $q depth $dp: MemAvailable -$(( ($(jq .MemAvailable <<< "$m0") - $(jq .MemAvailable <<< "$m1")) / scale_devmem )) KiB, Slab +$(( ($(jq .Slab <<< "$m1") - $(jq .Slab <<< "$m0")) / scale_devmem )) KiB a device"
		scale_disconnect_all
	done
	"$RMBD_BIN" export del "$name" force > /dev/null 2>&1
}

# ---- 5. CPU time per 4 KiB I/O ----------------------------------------------

scale_busy() {	# all CPUs' busy jiffies (all but idle and iowait)
	awk '$1 == "cpu" { b = 0; for (f = 2; f <= NF; f++) if (f != 5 && f != 6) b += $f; print b }' /proc/stat
}

scale_cpu() {
	local s x out b0 b1 t0 t1 r0 r1 r args hz st fio_pid k win
	hz=$(getconf CLK_TCK)
	read -r -a args <<< "$scale_fio_args"
	win=$(( runtime > 3 ? runtime - 1 : 2 ))
	for s in rmbd nvme-rdma; do
		x=${dev[$s]:-}
		if [[ -z $x ]]; then
			jq -nc --arg s "$s" '{system: $s, skipped: "no device (not among the systems, or n/a)"}' >> "$res/scale/cpu.jsonl"
			continue
		fi
		# The window: from 1 s after the device's reads start counting,
		# $win s long, inside fio's run; the I/Os are the device's
		# completed reads in it (stat_dev: the path device of nvme).
		st=$(stat_dev "$x")
		out=$res/scale/cpu.$s.json
		timeout -k 10 $(( runtime + win + 120 )) fio --direct=1 "${args[@]}" --name="$s" --filename="$x" \
			--runtime=$(( win + 3 )) --time_based --randrepeat=0 --norandommap \
			--output-format=json --output="$out" > /dev/null 2> "$out.err" &
		fio_pid=$!
		read -r r0 _ < "$st"
		for (( k = 0; k < 600; k++ )); do
			read -r r _ < "$st"
			(( r > r0 )) && break
			scale_nap 0.05
		done
		scale_nap 1
		read -r r0 _ < "$st"
		b0=$(scale_busy) t0=$(usec)
		scale_nap "$win"
		read -r r1 _ < "$st"
		b1=$(scale_busy) t1=$(usec)
		wait "$fio_pid"
		if ! jq -e '.jobs[0].read.total_ios > 0' "$out" > /dev/null 2>&1 || (( r1 <= r0 )); then
			jq -nc --arg s "$s" --arg e "$(tr '\n' ' ' < "$out.err" | cut -c1-200)" '{system: $s, error: "fio: \($e)"}' >> "$res/scale/cpu.jsonl"
			continue
		fi
		jq -c --arg s "$s" --argjson busy "$(( b1 - b0 ))" --argjson hz "$hz" \
			--argjson wall "$(( t1 - t0 ))" --argjson ncpu "$(nproc)" --argjson n "$(( r1 - r0 ))" '.jobs[0] as $j
			| {system: $s, window_s: ($wall / 1e6), window_ios: $n, window_iops: ($n / $wall * 1e6),
			   busy_s: ($busy / $hz), cpus: $ncpu, busy_pct: ($busy / $hz / ($wall / 1e6) / $ncpu * 100),
			   busy_us_per_io: ($busy / $hz * 1e6 / $n),
			   ios: $j.read.total_ios, iops: $j.read.iops, runtime_ms: $j.job_runtime,
			   usr_pct: $j.usr_cpu, sys_pct: $j.sys_cpu,
			   fio_us_per_io: (($j.usr_cpu + $j.sys_cpu) / 100 * $j.job_runtime * 1000 / $j.read.total_ios)}' \
			"$out" >> "$res/scale/cpu.jsonl"
		ssay "cpu $s: $(tail -n 1 "$res/scale/cpu.jsonl" | jq -r '"\(.window_iops | floor) IOPS, CPUs \(.busy_pct | floor) % busy: \(.busy_us_per_io | floor) us busy (all CPUs) and \(.fio_us_per_io | floor) us of fio per I/O"')"
	done
}

# ---- all of it -------------------------------------------------------------

scale_main() {
	local sz t0
	t0=$(usec)
	mkdir -p "$res/scale"
	scale_host=$("$RMBD_BIN" host) || { ssay "not run: rmbd host failed"; return 1; }
	if ! rmbd_modules_loaded; then
		ssay "not run: the rmbd modules are not loaded"
		echo '{"error": "the rmbd modules are not loaded"}' > "$res/scale/env.json"
		return 1
	fi
	if ! scale_net; then
		ssay "not run: setting up the scaling path failed"
		echo '{"error": "setting up the scaling path failed"}' > "$res/scale/env.json"
		return 1
	fi
	jq -n --arg sizes "$scale_sizes" --arg counts "$scale_counts" --arg qd "$scale_qd" \
		--argjson devmem "$scale_devmem" --arg fio "$scale_fio_args" --arg addr "$scale_addr" \
		--arg shared "$scale_shared_size" --arg slab "$scale_shared_slab" \
		--argjson mem "$(awk '/^MemTotal/ {print $2}' /proc/meminfo)" \
		--argjson runtime "$runtime" --argjson ramp "$ramp" --arg net "$net" \
		'{sizes: ($sizes | split(" ") | map(select(. != "") | tonumber)),
		  devices: ($counts | split(" ") | map(select(. != "") | tonumber)),
		  queues_depth: ($qd | split(" ") | map(select(. != ""))), devmem_devices: $devmem,
		  fio_args: $fio, addr: $addr, shared_export: $shared, shared_slab: $slab,
		  mem_kb: $mem, runtime_s: $runtime, ramp_s: $ramp, net: $net}' > "$res/scale/env.json"
	scale_trace_on
	ssay "export sizes $(for sz in $scale_sizes; do printf '%sM ' $(( sz >> 20 )); done)(kprobes: $( (( scale_traced )) && echo on || echo off)); devices: $scale_counts; queues x depth: $scale_qd"
	exec {scale_napfd}<> <(:)
	scale_warm_up
	for sz in $scale_sizes; do
		scale_size_point "$sz"
	done
	scale_sessions
	scale_client_mem
	scale_trace_off
	scale_cpu
	"$RMBD_BIN" listener del "$scale_addr" > /dev/null 2>&1
	ssay "done in $(( ($(usec) - t0) / 1000000 )) s"
}
