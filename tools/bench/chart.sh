#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Chart a benchmark run: OUT/bench.json -> OUT/bench.png and OUT/bench.svg,
# and, when bench.json has a "scaling" object, OUT/scaling.png and
# OUT/scaling.svg.  report.sh calls it at its end; run it by hand to redo
# the charts of an earlier run:
#
#   tools/bench/chart.sh [OUT]       (default selftests/results/bench)
#
# Needs jq and gnuplot (gnuplot-nox: the pngcairo terminal, else png, and
# svg).
#
# bench.png: the job table as rmbd's ratio to each peer, one bar per peer
# and job, drawn from 1.0 on a log scale, oriented so that a bar above the
# line at 1.0 means rmbd is ahead:
#   - 4k jobs (kind lat and iops): rmbd's IOPS / the peer's IOPS;
#   - 1M jobs (kind bw): rmbd's MB/s / the peer's MB/s;
#   - the swap job: the peer's completion time / rmbd's (the inverse of
#     the table's rmbd/x time);
#   - the mirror jobs: rmbd-mirror's IOPS (1M: MB/s) / the peer's;
#   - failover: the peer's longest stall / rmbd-mirror's.
# Each bar carries its value; a peer without a figure is marked n/a.  A
# target of bench.json's "targets" on the panel's own figure (the QD16
# IOPS and 1M read targets, the failover stall) is drawn as a dashed mark
# over its bar.  A panel without jobs is left out.
#
# scaling.png: one small panel per curve of bench.json's "scaling"
# object, expected as
#
#   "scaling": {
#     "title":  "...",                      (optional: the chart's title)
#     "curves": [
#       {"name":   "rmbd randread IOPS by queue depth",   (required)
#        "xlabel": "queue depth",                         (required)
#        "ylabel": "IOPS",                                (required)
#        "unit":   "IOPS",      (optional; shown in the y label when it
#                                differs from it)
#        "system": "rmbd",      (optional: the line's colour and legend)
#        "panel":  "...",       (optional: curves with the same panel
#                                share one, a line each; default: name)
#        "points": [{"x": 1, "y": 8572}, {"x": 2, "y": 9100}, ...]},
#       ...]}
#
# x and y are numbers (a point whose y is null is left out).  x is on a
# log2 scale when every x is above 0 and the largest is at least 16 times
# the smallest; y starts at 0 when no y is negative.  Without "scaling"
# there is no scaling chart (an old one is removed).  bench.json's
# "ceiling" section, if any, is not charted.
#
# Exit status: 0 when the charts were written, 1 otherwise (report.sh
# then prints a warning; the benchmark does not fail for it).

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-${RMBD_BENCH_OUT:-$repo/selftests/results/bench}}
json=$out/bench.json

die() { echo "chart: $1" >&2; exit 1; }

for c in jq gnuplot; do
	command -v "$c" > /dev/null || die "$c is not installed (make deps)"
done
[[ -f $json ]] || die "no $json"

# Colours by system, the same in both charts; others take the fallbacks.
colours='{"rmbd": "#2ca02c", "nvme-rdma": "#1f77b4", "nbd": "#ff7f0e",
	  "brd": "#7f7f7f", "rmbd-mirror": "#17becf", "md-raid1": "#9467bd",
	  "no-limit": "#bcbd22"}'
fallback='["#d62728", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#1f77b4"]'

bench_err='' scaling_err=''
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The bench chart's gnuplot script, without a terminal: its first line is
# "# size W H".
jq -r --argjson colours "$colours" --argjson fallback "$fallback" '
def q: tostring | gsub("\\\\"; "\\\\") | gsub("\""; "\\\"") | gsub("\n"; "\\n") | "\"" + . + "\"";
def num: if . == null then "NaN" else tostring end;
# A ratio as the table has it: two decimals below 10, e.g. 0.10x.
def fmtx: (if . >= 10 then 10 else 100 end) as $m
	| (. * $m | round) as $n
	| if $m == 10 then "\($n / 10 | floor).\($n % 10)x"
	  else "\($n / 100 | floor).\($n % 100 | tostring | if length < 2 then "0" + . else . end)x" end;
def colour($s; $i): $colours[$s] // $fallback[$i % ($fallback | length)];
# Peers in the order of the systems (bench.json keeps run.sh order).
def order($all): . as $p | [$all[] | select(. as $s | $p | index($s))]
	+ [$p[] | select(. as $s | $all | index($s) | not)];

. as $b
| ($b.systems | keys_unsorted) as $allsys
| [{id: "4k", subject: "rmbd", kinds: ["lat", "iops"],
    metric: "iops", inv: false,
    title: "4k jobs: IOPS",
    ylabel: "rmbd IOPS / peer IOPS"},
   {id: "1m", subject: "rmbd", kinds: ["bw"], metric: "mbps", inv: false,
    title: "1M jobs: MB/s",
    ylabel: "rmbd MB/s / peer MB/s"},
   {id: "swap", subject: null, kinds: ["swap"], metric: "time", inv: true,
    title: "swap job: completion time",
    ylabel: "peer time / rmbd time"},
   {id: "mirror", subject: "rmbd-mirror", kinds: ["iops", "bw"],
    metric: "iops", inv: false,
    title: "two copies: IOPS (1M jobs: MB/s)",
    ylabel: "rmbd-mirror / peer"},
   {id: "failover", subject: null, kinds: ["failover"], metric: "stall", inv: true,
    title: "failover: longest I/O stall",
    ylabel: "peer stall / rmbd-mirror stall"}
  ] as $defs
| [$defs[] as $d
   | [$b.jobs[] | select(.kind as $k | ($d.kinds | index($k)) and ($d.subject == null or .subject == $d.subject))] as $jobs
   | select($jobs | length > 0)
   | ([$jobs[] | .ratios | keys_unsorted[]] | unique | order($allsys)) as $peers
   | ($peers | length) as $np
   | ([0.8 / ([$np, 1] | max), 0.27] | min) as $slot
   | [$jobs | to_entries[] as $je | $peers | to_entries[] as $pe
      | select($je.value.results | has($pe.value))
      | ($je.value.ratios[$pe.value][$d.metric]) as $r
      | {job: $je.key, peer: $pe.key,
	 x: ($je.key + $slot * ($pe.key + 0.5 - $np / 2)),
	 y: (if $r == null or $r == 0 then null elif $d.inv then 1 / $r else $r end)}] as $bars
   | [$b.targets[]? | . as $t
      | ($jobs | map(.name) | index($t.job)) as $ji
      | ($peers | index($t.peer)) as $pi
      | select($ji != null and $pi != null and $t.metric == $d.metric
	       and $t.threshold != null and $t.threshold != 1 and $t.threshold != 0)
      | {x: ($ji + $slot * ($pi + 0.5 - $np / 2)),
	 y: (if $d.inv then 1 / $t.threshold else $t.threshold end)}] as $targets
   | $d + {jobs: [$jobs[].name], peers: $peers, slot: $slot, bars: $bars,
	   targets: $targets}] as $panels
| [["4k"], ["1m", "swap"], ["mirror", "failover"]] as $layout
| [$layout[] | [.[] as $id | $panels[] | select(.id == $id and (.peers | length) > 0)]
   | select(length > 0)] as $rows
| ($rows | length) as $nr
# As wide as the widest row needs: a job takes some 180 pixels.
| ([$rows[] | [.[] | [(.jobs | length), 2] | max] | add] | max // 2) as $wmax
| ([[160 + 180 * $wmax, 1300] | min, 700] | max) as $w | (110 + 330 * $nr) as $h
| (80 / $h) as $top
| ((1 - $top) / ([$nr, 1] | max)) as $rowh
| "# size \($w) \($h)",
  "set encoding utf8",
  "set multiplot title \(("rmbd against its peers: above the line at 1.0, rmbd is ahead (ratios of medians, log scale)\n"
	+ "commit \($b.commit // "?")\(if $b.dirty then " (modified)" else "" end), \($b.date // "?")\n"
	+ "\($b.environment.vcpus // "?") vCPUs, QEMU \($b.environment.accel // "?"), network \($b.environment.net // "?"); "
	+ "medians of \($b.config.runs // "?") run\(if $b.config.runs == 1 then "" else "s" end) of \($b.config.runtime_s // "?") s"
	+ (if any($b.jobs[]; .kind == "swap") then " (swap: \($b.config.swap_runs // "?") runs)" else "" end)) | q)",
  "set logscale y",
  "set ytics (" + ([["0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5",
		     "1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"][]
		    | "\"\(.)x\" \(.)"] | join(", ")) + ")",
  "set mytics 1",
  "set grid ytics lc rgb \"#e0e0e0\"",
  "set border 3", "set xtics nomirror scale 0", "set ytics nomirror",
  "set style fill solid 0.85 border lc rgb \"#404040\"",
  "set key outside bottom center horizontal samplen 1.5 font \",9\"",
  "set style textbox opaque noborder margins 0.5, 0.2",
    "set tmargin 2.5", "set lmargin 10", "set rmargin 2",
  ($rows | to_entries[] as $re
   | ([$re.value[] | [(.jobs | length), 2] | max] | add) as $wsum
   | $re.value | to_entries[] as $pe | $pe.value as $p
   | ([$re.value[:$pe.key][] | [(.jobs | length), 2] | max] | add // 0) as $before
   | ([$p.bars[].y, $p.targets[].y, 1] | map(select(. != null))) as $ys
   | ([($ys | min), 0.5] | min / 1.7) as $lo
   | ([($ys | max), 2] | max * 1.7) as $hi
   | "# panel \($p.id)",
     "set origin \($before / $wsum), \(1 - $top - $rowh * ($re.key + 1))",
     "set size \(([($p.jobs | length), 2] | max) / $wsum), \($rowh)",
     "set title \($p.title | q) font \",11\"",
     "set ylabel \($p.ylabel | q)",
     "set xrange [-0.6:\(($p.jobs | length) - 0.4)]",
     "set yrange [\($lo):\($hi)]",
     "unset arrow",
     "set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb \"black\" lw 1.5 front",
     "set xtics (" + ([$p.jobs | to_entries[] | "\(.value | q) \(.key)"] | join(", ")) + ")",
     ($p.peers | to_entries[] as $s
      | [$p.bars[] | select(.peer == $s.key and .y != null)] as $pb
      | "$p_\($p.id)_\($s.key) << EOD",
	(if ($pb | length) == 0 then "NaN NaN NaN NaN NaN NaN" else $pb[]
	 | "\(.x) \(.y) \(.x - $p.slot * 0.45) \(.x + $p.slot * 0.45) \([.y, 1] | min) \([.y, 1] | max) \(.y | fmtx | q)" end),
	"EOD",
	# The values, above the bars that go up and below those that go down.
	($pb | map(select(.y >= 1)) | select(length > 0)
	 | "$p_\($p.id)_\($s.key)_up << EOD", (.[] | "\(.x) \(.y) \(.y | fmtx | q)"), "EOD"),
	($pb | map(select(.y < 1)) | select(length > 0)
	 | "$p_\($p.id)_\($s.key)_dn << EOD", (.[] | "\(.x) \(.y) \(.y | fmtx | q)"), "EOD")),
     ([$p.bars[] | select(.y == null)] | select(length > 0)
      | "$p_\($p.id)_na << EOD", (.[] | "\(.x) 1 \"n/a\""), "EOD"),
     ($p.targets | select(length > 0)
      | "$p_\($p.id)_t << EOD", (.[] | "\(.x - $p.slot * 0.5) \(.y) \($p.slot)"), "EOD"),
     # The bars, the targets over them, then the values over both.
     "plot " + ([($p.peers | to_entries[] as $s
		  | "$p_\($p.id)_\($s.key) using 1:2:3:4:5:6 with boxxyerror lc rgb \(colour($s.value; $s.key) | q) title \($s.value | q)"),
		 (select($p.targets | length > 0)
		  | "$p_\($p.id)_t using 1:2:3:(0) with vectors nohead dt 2 lw 2.5 lc rgb \"#d62728\" title \"target\""),
		 ($p.peers | to_entries[] as $s
		  | (select(any($p.bars[]; .peer == $s.key and .y != null and .y >= 1))
		     | "$p_\($p.id)_\($s.key)_up using 1:2:3 with labels boxed offset 0, 0.7 font \",8\" notitle"),
		    (select(any($p.bars[]; .peer == $s.key and .y != null and .y < 1))
		     | "$p_\($p.id)_\($s.key)_dn using 1:2:3 with labels boxed offset 0, -0.7 font \",8\" notitle")),
		 (select(any($p.bars[]; .y == null))
		  | "$p_\($p.id)_na using 1:2:3 with labels offset 0, 0.7 font \",9\" tc rgb \"#606060\" notitle")
		] | join(", \\\n     "))),
  "unset multiplot"
' "$json" > "$tmp/bench.gp" 2> "$tmp/bench.err" || bench_err=$(head -n 3 "$tmp/bench.err")

# The scaling chart's script, or nothing when there is no "scaling".
jq -r --argjson colours "$colours" --argjson fallback "$fallback" '
def q: tostring | gsub("\\\\"; "\\\\") | gsub("\""; "\\\"") | gsub("\n"; "\\n") | "\"" + . + "\"";
select(.scaling != null)
| . as $b
| [.scaling.curves[]? | select(.points | type == "array")
   | .points |= map(select((.x | type) == "number" and (.y | type) == "number"))
   | select(.points | length > 0)] as $curves
| if ($curves | length) == 0 then error("scaling has no curve with points") else . end
| [$curves | group_by(.panel // .name)[] | {key: (.[0].panel // .[0].name), curves: .}]
  as $groups
| [$curves[] | (.panel // .name)] as $seen
| [$seen | to_entries[] | . as $e | select($e.key == ($seen | index($e.value))) | .value] as $porder
| [$porder[] as $k | $groups[] | select(.key == $k)] as $panels
| ($panels | length) as $n
| ([$n, 3] | min) as $nc
| (($n + $nc - 1) / $nc | floor) as $nr
| (420 * $nc) as $w | (70 + 320 * $nr) as $h
| (50 / $h) as $top
| "# size \($w) \($h)",
  "set encoding utf8",
  "set multiplot title \(($b.scaling.title // "rmbd scaling") + "\ncommit \($b.commit // "?"), \($b.date // "?")" | q)",
  "set grid lc rgb \"#e0e0e0\"",
  "set border 3", "set xtics nomirror", "set ytics nomirror",
  "set key top left samplen 2 font \",8\"",
  "set tmargin 2.5", "set bmargin 3.5", "set lmargin 10", "set rmargin 3",
  ($panels | to_entries[] as $pe | $pe.value as $p
   | ($pe.key % $nc) as $col | ($pe.key / $nc | floor) as $row
   | [$p.curves[].points[]] as $pts
   | ([$pts[].x] | min) as $xmin | ([$pts[].x] | max) as $xmax
   | $p.curves[0] as $c0
   | ($c0.ylabel // "") as $yl
   | "# panel \($pe.key)",
     "set origin \($col / $nc), \(1 - $top - (1 - $top) / $nr * ($row + 1))",
     "set size \(1 / $nc), \((1 - $top) / $nr)",
     "set title \($p.key | q) font \",10\"",
     "set xlabel \(($c0.xlabel // "") | q)",
     "set ylabel \((if ($c0.unit // "") == "" or ($yl | ascii_downcase | contains($c0.unit | ascii_downcase))
		   then $yl else "\($yl) (\($c0.unit))" end) | q)",
     (if $xmin > 0 and $xmax >= 16 * $xmin
      then "set logscale x 2" else "unset logscale x" end),
     "set autoscale x",
     (if all($pts[].x; . == floor) and $xmax - $xmin <= 12
      then "set xtics 1" else "set xtics autofreq" end),
     (if ([$pts[].y] | min) >= 0 then "set yrange [0:*]" else "set autoscale y" end),
     ($p.curves | to_entries[]
      | "$s\($pe.key)_\(.key) << EOD",
	(.value.points | sort_by(.x)[] | "\(.x) \(.y)"),
	"EOD"),
     "plot " + ([$p.curves | to_entries[]
		 | (if .value.system != null then .value.system
		    elif ($p.curves | length) > 1 then .value.name else null end) as $t
		 | "$s\($pe.key)_\(.key) using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb \(($colours[.value.system // ""] // $fallback[.key % ($fallback | length)]) | q) \(if $t == null then "notitle" else "title \($t | q)" end)"]
		| join(", \\\n     "))),
  "unset multiplot"
' "$json" > "$tmp/scaling.gp" 2> "$tmp/scaling.err" || scaling_err=$(head -n 3 "$tmp/scaling.err")

if gnuplot -e 'set terminal pngcairo' > /dev/null 2>&1; then
	pngterm=pngcairo
else
	pngterm=png
fi

# render NAME: $tmp/NAME.gp -> OUT/NAME.png and OUT/NAME.svg
render() {
	local name=$1 w h
	read -r _ _ w h < "$tmp/$name.gp"
	{
		echo "set terminal $pngterm size $w,$h noenhanced font \"sans,10\" background rgb \"white\""
		echo "set output \"$tmp/$name.png\""
		cat "$tmp/$name.gp"
	} > "$tmp/$name.png.gp"
	{
		echo "set terminal svg size $w,$h noenhanced font \"sans,10\" background rgb \"white\""
		echo "set output \"$tmp/$name.svg\""
		cat "$tmp/$name.gp"
	} > "$tmp/$name.svg.gp"
	if ! gnuplot "$tmp/$name.png.gp" > "$tmp/$name.log" 2>&1 ||
	   ! gnuplot "$tmp/$name.svg.gp" >> "$tmp/$name.log" 2>&1 ||
	   [[ ! -s $tmp/$name.png || ! -s $tmp/$name.svg ]]; then
		echo "chart: gnuplot failed on $name:" >&2
		grep -v '^$' "$tmp/$name.log" | head -n 5 | sed 's/^/chart:   /' >&2
		return 1
	fi
	mv "$tmp/$name.png" "$out/$name.png" && mv "$tmp/$name.svg" "$out/$name.svg"
}

# Each chart on its own: one that fails leaves the other.
rc=0
rm -f "$out/bench.png" "$out/bench.svg"
if [[ -n $bench_err ]]; then
	echo "chart: reading $json failed: $bench_err" >&2
	rc=1
elif ! grep -q '^plot ' "$tmp/bench.gp"; then
	echo "chart: no peer ran beside rmbd: no chart of the jobs" >&2
else
	render bench || rc=1
fi
rm -f "$out/scaling.png" "$out/scaling.svg"
if [[ -n $scaling_err ]]; then
	echo "chart: reading the scaling object of $json failed: $scaling_err" >&2
	rc=1
elif [[ -s $tmp/scaling.gp ]]; then
	render scaling || rc=1
fi
exit "$rc"
