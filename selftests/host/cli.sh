#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# TAP test of the rmbd CLI on a host without the rmbd modules:
#  - usage errors: exit 2, the exact message, and no netlink request;
#  - help: exit 0;
#  - text and JSON output, and the values passed to librmbd, through
#    rmbd-fake (the CLI linked with fake_librmbd.c);
#  - a request without the modules: exit 1, "not loaded" and how to load
#    them.

here=$(cd "$(dirname "$0")" && pwd)
RMBD=${RMBD:-$here/../../tools/rmbd}
FAKE=${RMBD_FAKE:-$here/rmbd-fake}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export RMBD_FAKE_LOG=$tmp/log
unset RMBD_FAKE_EMPTY RMBD_FAKE_FAIL RMBD_FAKE_MODULES

# shellcheck source=tap.sh
. "$here/tap.sh"

# Writes $1 as lines, nothing if empty.
lines() {
	if [ -n "$1" ]; then
		printf '%s\n' "$1"
	fi
}

# expect RC STDOUT STDERR BINARY ARGS...: exact exit code and output.
expect() {
	local rc=$1 out=$2 err=$3 got_rc desc
	shift 3
	desc="$(basename "$1") ${*:2} -> $rc"
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	got_rc=$?
	lines "$out" >"$tmp/want_out"
	lines "$err" >"$tmp/want_err"
	if [ "$got_rc" = "$rc" ] && cmp -s "$tmp/out" "$tmp/want_out" &&
	   cmp -s "$tmp/err" "$tmp/want_err"; then
		pass "$desc"
	else
		fail "$desc"
		echo "# exit $got_rc, want $rc"
		diff "$tmp/want_out" "$tmp/out" | sed 's/^/# stdout: /'
		diff "$tmp/want_err" "$tmp/err" | sed 's/^/# stderr: /'
	fi
}

# usage HINT_OBJECT MESSAGE ARGS...: a usage error, with the real binary
# and with the fake one, which logs any library call.
usage() {
	local obj=$1 msg=$2 hint
	shift 2
	if [ -n "$obj" ]; then
		hint="Try 'rmbd $obj help'."
	else
		hint="Try 'rmbd help'."
	fi
	expect 2 "" "rmbd: $msg"$'\n'"$hint" "$RMBD" "$@"
	"$FAKE" "$@" >/dev/null 2>&1
}

# log_is WANT DESC: the library calls since the last log_reset.
log_is() {
	local got
	got=$(cat "$RMBD_FAKE_LOG" 2>/dev/null)
	if [ "$got" = "$1" ]; then
		pass "$2"
	else
		fail "$2"
		echo "# library calls: $(echo "$got" | tr '\n' ';')"
		echo "# want:          $(echo "$1" | tr '\n' ';')"
	fi
}

log_reset() {
	rm -f "$RMBD_FAKE_LOG"
}

for bin in "$RMBD" "$FAKE"; do
	if [ ! -x "$bin" ]; then
		echo "Bail out! $bin not built"
		exit 1
	fi
done

# config apply / check / remove FILE, against the fake's objects: what
# matches is left ("unchanged", no request), what is missing is made in
# the file's order, a conflict anywhere changes nothing (exit 1).
echo rmbd:uuid:0a >"$tmp/hostid"
export RMBD_HOSTID_FILE=$tmp/hostid
"$RMBD" secret generate "$tmp/cfg.key" >/dev/null
cat >"$tmp/cfg" <<CFG
# as the fake has them, in other spellings
listener add 10.200.0.1
listener add fd00:0:0::1 port 7471 max_sessions 16
export add foo size 1024M slab 64M hosts rmbd:uuid:0a shared
export host add foo nqn.2014-08.org.nvmexpress:uuid:0b secret-file $tmp/cfg.key
export add bar.2 size 8M any_host read_only
dev connect addr 10.200.0.1 export foo queues 2
dev connect addr 10.200.0.3 export baz2 addr 10.200.0.2 export baz shared host h6 reconnect_delay 5 loss_timeout 300
CFG
present="listener 10.200.0.1 port 7470: unchanged
listener fd00:0:0::1 port 7471: unchanged
export foo: unchanged
export foo host nqn.2014-08.org.nvmexpress:uuid:0b: unchanged
export bar.2: unchanged
rmbd0 (addr 10.200.0.1 port 7470 export foo): unchanged
rmbd6 (addr 10.200.0.3 port 7470 export baz2 ...): unchanged"
log_reset
expect 0 "$present" "" "$FAKE" config check "$tmp/cfg"
expect 0 "$present" "" "$FAKE" config apply "$tmp/cfg"
log_is "open
listener_list
export_list
dev_list
open
listener_list
export_list
dev_list" "config check and apply of what is there: no request but the lists"

cat >"$tmp/cfg2" <<CFG
listener add 10.200.0.1
listener add 10.0.0.5 port 7480 max_sessions 4
export add foo size 1G hosts rmbd:uuid:0a,new-host shared
export add fresh size 4M slab 1M hosts h1
export host add fresh h2 secret-file $tmp/cfg.key
export host add foo nqn.2014-08.org.nvmexpress:uuid:0b secret-file $tmp/cfg.key
dev connect addr 10.200.0.9 export fresh loss_timeout 0 wait_not_a_keyword
CFG
log_reset
expect 2 "" "rmbd: unknown keyword 'wait_not_a_keyword'
Try 'rmbd dev help'.
rmbd: $tmp/cfg2:7: invalid line" "$FAKE" config apply "$tmp/cfg2"
log_is "" "config apply of a file with a bad line: no request"
sed -i 's/ wait_not_a_keyword//' "$tmp/cfg2"
log_reset
expect 1 "listener 10.200.0.1 port 7470: missing
listener 10.0.0.5 port 7480: missing
export foo: missing
export fresh: missing
export fresh host h2: missing
export foo host nqn.2014-08.org.nvmexpress:uuid:0b: missing
addr 10.200.0.9 port 7470 export fresh: missing" "" \
	env RMBD_FAKE_EMPTY=1 "$FAKE" config check "$tmp/cfg2"
log_reset
expect 0 '[{"line":1,"object":"listener","addr":"10.200.0.1","port":7470,"result":"unchanged"},{"line":2,"object":"listener","addr":"10.0.0.5","port":7480,"result":"added"},{"line":3,"object":"export","export":"foo","result":"hosts added"},{"line":4,"object":"export","export":"fresh","result":"added"},{"line":5,"object":"host","export":"fresh","host":"h2","result":"added"},{"line":6,"object":"host","export":"foo","host":"nqn.2014-08.org.nvmexpress:uuid:0b","result":"unchanged"},{"line":7,"object":"dev","dev":"rmbd7","addr":"10.200.0.9","export":"fresh","result":"connected"}]' "" \
	"$FAKE" -j config apply "$tmp/cfg2"
log_is "open
listener_list
export_list
dev_list
listener_add 10.0.0.5 7480 4
export_host_add foo new-host secret 0
export_add fresh 4194304 1048576
  any_host 0 shared 0 read_only 0 hosts h1
export_host_add fresh h2 secret 32 ?
dev_connect 10.200.0.9 0 fresh 0 0 0 0 0 0 0 - 0" "config apply makes what is missing, in order"

cat >"$tmp/cfg3" <<CFG
listener add 10.200.0.1 max_sessions 5
export add foo size 2G hosts rmbd:uuid:0a shared
export add bar.2 size 8M any_host
export add new size 1M any_host
export host add foo nqn.2014-08.org.nvmexpress:uuid:0b
dev connect addr 10.200.0.1 export foo depth 64
dev connect addr 10.200.0.2 export baz addr 10.200.0.7 export q shared host h6 reconnect_delay 5 loss_timeout 300
dev connect addr fd00::1 port 7471 export bar.2 read_only
dev connect addr 10.201.0.1 export m1 addr 10.200.0.3 export baz2
CFG
log_reset
expect 1 "" "rmbd: $tmp/cfg3:1: listener 10.200.0.1 port 7470: conflict: it takes max_sessions 128, the file says 5
rmbd: $tmp/cfg3:2: export foo: conflict: its size is 1G, the file says 2G
rmbd: $tmp/cfg3:3: export bar.2: conflict: read_only is on, the file says off
rmbd: $tmp/cfg3:5: export foo host nqn.2014-08.org.nvmexpress:uuid:0b: conflict: the host has a secret, the file gives none
rmbd: $tmp/cfg3:6: rmbd0 (addr 10.200.0.1 port 7470 export foo): conflict: rmbd0 has depth 128, the file says 64
rmbd: $tmp/cfg3:7: rmbd6 (addr 10.200.0.2 port 7470 export baz ...): conflict: rmbd6 has a leg on addr 10.200.0.3 export baz2, which the file does not name
rmbd: $tmp/cfg3:8: rmbd3 (addr fd00::1 port 7471 export bar.2): conflict: rmbd3 has failed: disconnect it first
rmbd: $tmp/cfg3:9: addr 10.201.0.1 port 7470 export m1 ...: conflict: its legs are on two devices, rmbd6 and rmbd8" \
	"$FAKE" config apply "$tmp/cfg3"
log_is "open
listener_list
export_list
dev_list" "config apply with conflicts: every one told, nothing made"
printf 'export add foo size 1G slab 64M shared\n' >"$tmp/cfg4"
expect 1 "" "rmbd: $tmp/cfg4:1: export foo: conflict: it allows host rmbd:uuid:0a, which the file does not name" \
	"$FAKE" config apply "$tmp/cfg4"

# remove: the last line first; what is not there is left
log_reset
expect 0 "addr 10.200.0.9 port 7470 export fresh: absent
export foo host nqn.2014-08.org.nvmexpress:uuid:0b: with its export
export fresh host h2: absent
export fresh: absent
export foo: deleted
listener 10.0.0.5 port 7480: absent
listener 10.200.0.1 port 7470: deleted" "" "$FAKE" config remove "$tmp/cfg2"
log_is "open
listener_list
export_list
dev_list
export_del foo 0
listener_del 10.200.0.1 0" "config remove deletes the file's objects, last first; the hosts with their export"
log_reset
expect 0 "rmbd6 (addr 10.200.0.3 port 7470 export baz2 ...): disconnected
rmbd0 (addr 10.200.0.1 port 7470 export foo): disconnected
export bar.2: deleted
export foo host nqn.2014-08.org.nvmexpress:uuid:0b: with its export
export foo: deleted
listener fd00:0:0::1 port 7471: deleted
listener 10.200.0.1 port 7470: deleted" "" "$FAKE" config remove "$tmp/cfg"
log_is "open
listener_list
export_list
dev_list
dev_disconnect 6 0
dev_disconnect 0 0
export_del bar.2 0
export_del foo 0
listener_del fd00:0:0::1 7471
listener_del 10.200.0.1 0" "config remove disconnects the file's devices, found by their legs"

# A host line of an export the file does not add is deleted by remove
printf 'export host add foo nqn.2014-08.org.nvmexpress:uuid:0b secret-file %s\n' "$tmp/cfg.key" >"$tmp/cfg8"
log_reset
expect 0 "export foo host nqn.2014-08.org.nvmexpress:uuid:0b: deleted" "" \
	"$FAKE" config remove "$tmp/cfg8"
log_is "open
export_list
export_host_del foo nqn.2014-08.org.nvmexpress:uuid:0b" "config remove of a host line alone deletes the host"

# More conflicts: a device of fewer legs than the line, and a host of
# "hosts" with a secret
printf 'dev connect addr 10.200.0.1 export foo addr 10.200.0.5 export x queues 2\nexport add foo size 1G hosts rmbd:uuid:0a,nqn.2014-08.org.nvmexpress:uuid:0b shared\n' >"$tmp/cfg9"
expect 1 "" "rmbd: $tmp/cfg9:1: rmbd0 (addr 10.200.0.1 port 7470 export foo ...): conflict: rmbd0 has 1 leg, the file says 2
rmbd: $tmp/cfg9:2: export foo: conflict: host nqn.2014-08.org.nvmexpress:uuid:0b has a secret, the file gives none" \
	"$FAKE" config check "$tmp/cfg9"

# A queue shallower than the line's: the RDMA device may hold no more,
# a note and no conflict
printf 'dev connect addr 10.200.0.1 export foo depth 256\n' >"$tmp/cfg10"
expect 0 "rmbd0 (addr 10.200.0.1 port 7470 export foo): unchanged" \
	"rmbd: $tmp/cfg10:1: note: rmbd0 has depth 128, the file says 256 (as deep as its RDMA device allows?)" \
	"$FAKE" config check "$tmp/cfg10"

# A thing made twice, or a host before its export: an error of the
# file, found before any request
for dup in "export add a size 1M|export add a size 2M|2: the export is on line 1 already" \
	   "listener add 10.0.0.1|listener add 10.0.0.1 port 7470|2: the listener is on line 1 already" \
	   "export add a size 1M hosts h1,h2|export host add a h2|2: the host of the export is on line 1 already" \
	   "export host add a h1|export add a size 1M|1: export a is added on line 2, after its host" \
	   "dev connect addr 10.0.0.1 export a|dev connect addr 10.0.0.2 export b spare addr 10.0.0.1 export a|2: the leg is on line 1 already"; do
	printf '%s\n%s\n' "${dup%%|*}" "$(echo "$dup" | cut -d'|' -f2)" >"$tmp/cfgdup"
	log_reset
	expect 2 "" "rmbd: $tmp/cfgdup:${dup##*|}" "$FAKE" config apply "$tmp/cfgdup"
	log_is "" "config: ${dup##*|}: no request"
done

# A failed request stops apply at its line, exit 1
printf 'export add badx size 1M any_host\nlistener add 10.0.0.7\n' >"$tmp/cfg5"
log_reset
expect 1 "" "rmbd: $tmp/cfg5:1: export badx: failed: Invalid argument: fake refusal of badx" \
	env RMBD_FAKE_EMPTY=1 "$FAKE" config apply "$tmp/cfg5"
if grep -q '^listener_add' "$RMBD_FAKE_LOG"; then
	fail "config apply goes on after a failed line"
else
	pass "config apply stops at a failed line"
fi

log_reset
printf 'listener add 10.0.0.1\nexport del foo\n' >"$tmp/cfg6"
expect 2 "" "rmbd: a config file holds only listener add, export add, export host add and dev connect, not 'export del'
Try 'rmbd config help'.
rmbd: $tmp/cfg6:2: invalid line" "$FAKE" config apply "$tmp/cfg6"
printf 'export add "x size 1M\n' >"$tmp/cfg7"
expect 2 "" "rmbd: $tmp/cfg7:1: unterminated quote" "$FAKE" config check "$tmp/cfg7"
log_is "" "config: a bad line anywhere, no request at all"
expect 1 "" "rmbd: $tmp/nofile: cannot open: No such file or directory" \
	"$FAKE" config apply "$tmp/nofile"
usage config "missing config file" config apply
usage config "invalid wait 'soon' (0-86400 seconds)" config apply "$tmp/cfg" wait soon
usage config "unknown keyword 'wait'" config check "$tmp/cfg" wait 5
expect 0 "" "" sh -c "printf '# nothing\n\n' | '$FAKE' config apply -"
expect 0 "[]" "" sh -c "printf '' | '$FAKE' -j config check -"

# Files of any length: every line kept as parsed (a request points into
# its own line, which must not move as the file grows), each made once,
# in order.  Line 1 is a two-leg connect, then exports with two hosts,
# hosts with a secret and listeners; comments and blank lines between.
for len in 1 9 50 500; do
	f=$tmp/cfg-$len
	want="open
dev_list"
	[ "$len" -gt 1 ] && want="$want
export_list
listener_list"
	want="$want
dev_connect legs 10.200.0.2 0 m0 + 10.200.0.3 0 m1 layout 0 0 0 0 0 0 - 0 0 host-1 32"
	echo "dev connect addr 10.200.0.2 export m0 addr 10.200.0.3 export m1 host host-1 secret-file $tmp/cfg.key" >"$f"
	for ((i = 2; i <= len; i++)); do
		case $((i % 4)) in
		0|1)
			echo "export add e$i size 4M hosts h$i,h$i-b"
			want="$want
export_add e$i 4194304 0
  any_host 0 shared 0 read_only 0 hosts h$i,h$i-b" ;;
		2)
			echo "# line $i"
			echo
			echo "export host add e$((i - 1)) g$i secret-file $tmp/cfg.key"
			want="$want
export_host_add e$((i - 1)) g$i secret 32 ?" ;;
		3)
			echo "listener add 10.1.$((i / 200)).$((i % 200 + 1)) port $((7000 + i))"
			want="$want
listener_add 10.1.$((i / 200)).$((i % 200 + 1)) $((7000 + i)) 0" ;;
		esac
	done >>"$f"
	log_reset
	env RMBD_FAKE_EMPTY=1 "$FAKE" config check "$f" >"$tmp/out" 2>&1
	got=$(grep -c ': missing$' "$tmp/out")
	if [ "$got" = "$len" ] && ! grep -q '(null)' "$tmp/out"; then
		pass "config check of $len lines: each line missing, once"
	else
		fail "config check of $len lines: $got of $len missing"
		head -n 5 "$tmp/out" | sed 's/^/# /'
	fi
	log_reset
	env RMBD_FAKE_EMPTY=1 "$FAKE" config apply "$f" >"$tmp/out" 2>&1
	rc=$?
	# The fake logs the lists it reads where it reads them; keep only
	# what apply asked for, after them.
	got=$(grep -v '^dev_list$\|^export_list$\|^listener_list$\|^open$' \
		"$RMBD_FAKE_LOG")
	want_req=$(echo "$want" | grep -v '^dev_list$\|^export_list$\|^listener_list$\|^open$')
	if [ "$rc" = 0 ] && [ "$got" = "$want_req" ]; then
		pass "config apply of $len lines: every request as its line says"
	else
		fail "config apply of $len lines: exit $rc"
		diff <(echo "$want_req") <(echo "$got") | head -n 10 | sed 's/^/# /'
		head -n 5 "$tmp/out" | sed 's/^/# /'
	fi
done
unset RMBD_HOSTID_FILE

# Usage errors
log_reset
usage "" "missing object"
usage "" "unknown object 'foo'" foo
usage "" "invalid option '-x'" -x export

# -batch FILE: a command a line; comments, blank lines and quotes; the
# first that fails stops it (exit 1, its line named) unless -force.
cat >"$tmp/batch" <<'BATCH'
# a target's setup
export add b1 size 1G   # a comment

  listener add 10.0.0.1 port "7471"
export add 'b 2' size 1G
listener show
BATCH
log_reset
expect 1 "" "rmbd: invalid export name 'b 2'
Try 'rmbd export help'.
rmbd: $tmp/batch:5: command failed" "$FAKE" -batch "$tmp/batch"
if grep -q '^export_add b1 1073741824 0$' "$RMBD_FAKE_LOG" &&
   grep -q '^listener_add 10.0.0.1 7471 0$' "$RMBD_FAKE_LOG" &&
   ! grep -q '^listener_list$' "$RMBD_FAKE_LOG"; then
	pass "-batch runs the lines up to the one that fails"
else
	fail "-batch: library calls $(tr '\n' ';' <"$RMBD_FAKE_LOG")"
fi
log_reset
"$FAKE" -f -b "$tmp/batch" >"$tmp/out" 2>/dev/null
rc=$?
if [ $rc = 1 ] && grep -q '^listener_list$' "$RMBD_FAKE_LOG" &&
   [ "$(cat "$tmp/out")" = "$("$FAKE" listener show)" ]; then
	pass "-force -batch goes on after a failed line, exit 1"
else
	fail "-force -batch: exit $rc, calls $(tr '\n' ';' <"$RMBD_FAKE_LOG")"
fi
expect 0 "$("$FAKE" -j listener show)" "" sh -c "printf 'listener show\n' | '$FAKE' -jb -"
expect 1 "" "rmbd: $tmp/nofile: cannot open: No such file or directory" \
	"$FAKE" -batch "$tmp/nofile"
printf 'export add "b3 size 1G\n' >"$tmp/batch2"
expect 1 "" "rmbd: $tmp/batch2:1: unterminated quote
rmbd: $tmp/batch2:1: command failed" "$FAKE" -batch "$tmp/batch2"
log_reset
usage "" "option '-batch' needs a file" -batch
usage "" "option '-b' must come last in '-bj'" -bj "$tmp/batch"
usage "" "unexpected argument 'listener' after -batch" -b "$tmp/batch" listener
usage "" "-force goes with -batch" -force listener
usage "" "invalid option '--bogus'" --bogus export
usage "" "unknown object 'nope'" help nope
usage export "unknown export command 'frob'" export frob
usage export "missing export name" export add
usage export "missing keyword 'size'" export add foo
usage export "missing value for 'size'" export add foo size
usage export "invalid size '1X'" export add foo size 1X
usage export "invalid size '-1'" export add foo size -1
usage export "invalid slab size '0'" export add foo size 1G slab 0
usage export "size '99999999999E' is too large" export add foo size 99999999999E
usage export "size '16E' is too large" export add foo size 16E
usage export "size '18446744073709551616' is too large" \
	export add foo size 18446744073709551616
usage export "slab size '16384PiB' is too large" export add foo size 1G slab 16384PiB
usage export "invalid slab size '2Q'" export add foo size 1G slab 2Q
usage export "invalid size '1.5G'" export add foo size 1.5G
usage export "invalid size '1GB'" export add foo size 1GB
usage export "duplicate keyword 'size'" export add foo size 1G size 2G
usage export "ambiguous keyword 's'" export add foo s 1G
usage export "unknown keyword 'bogus'" export add foo size 1G bogus 1
usage export "invalid export name 'a/b'" export add a/b size 1G
usage export "invalid export name '.hidden'" export add .hidden size 1G
usage export "invalid export name ''" export del ""
usage export "invalid export name '$(printf 'x%.0s' {1..64})'" \
	export add "$(printf 'x%.0s' {1..64})" size 1G
usage export "unknown keyword 'yes'" export add foo size 1G shared yes
usage export "unknown keyword 'no'" export add foo size 1G read_only no
usage export "duplicate keyword 'read_only'" \
	export add foo size 1G read_only shared read_only
usage export "duplicate keyword 'shared'" export add foo size 1G sh shared
usage export "unknown keyword 'now'" export del foo now
usage export "unexpected argument 'bar'" export show foo bar
usage export "unexpected argument 'x'" export help x
usage listener "missing address" listener add
usage listener "invalid address 'host.example'" listener add host.example
usage listener "invalid port '0' (1-65535)" listener add 10.0.0.1 port 0
usage listener "invalid port '65536' (1-65535)" \
	listener add 10.0.0.1 port 65536
usage listener "invalid port 'x' (1-65535)" listener del ::1 port x
usage listener "missing value for 'port'" listener del ::1 port
usage listener "unexpected argument 'x'" listener show x
usage listener "invalid max_sessions '0' (1-65536)" listener add 10.0.0.1 max_sessions 0
usage listener "invalid max_sessions '65537' (1-65536)" \
	listener add 10.0.0.1 max_sessions 65537
usage listener "invalid max_sessions '-1' (1-65536)" listener add ::1 max_sessions -1
usage listener "unknown keyword 'max_sessions'" listener del ::1 max_sessions 4
usage dev "missing keyword 'addr'" dev connect export foo
usage dev "unknown keyword 'yes'" dev connect addr 10.0.0.1 export foo shared yes
usage dev "duplicate keyword 'shared'" dev connect addr 10.0.0.1 export foo shared shared
usage dev "unknown keyword 'yes'" dev connect addr 10.0.0.1 export foo read_only yes
usage dev "duplicate keyword 'read_only'" \
	dev connect addr 10.0.0.1 export foo read_only shared read_only
usage dev "ambiguous keyword 're'" dev connect addr 10.0.0.1 export foo re 5
usage dev "invalid host identity 'a/b'" dev connect addr 10.0.0.1 export foo host a/b
usage dev "missing keyword 'export'" dev connect addr 10.0.0.1
usage dev "invalid address '10.0.0'" dev connect addr 10.0.0 export foo
usage dev "invalid queues '0' (1-256)" \
	dev connect addr 10.0.0.1 export foo queues 0
usage dev "invalid queues 'two' (1-256)" \
	dev connect addr 10.0.0.1 export foo queues two
usage dev "invalid depth '0' (1-1024)" \
	dev connect addr 10.0.0.1 export foo depth 0
usage dev "invalid depth '2048' (1-1024)" \
	dev connect addr 10.0.0.1 export foo depth 2048
usage dev "invalid pollq '257' (0-256)" \
	dev connect addr 10.0.0.1 export foo pollq 257
usage dev "invalid reconnect_delay '0' (1-3600)" \
	dev connect addr 10.0.0.1 export foo reconnect_delay 0
usage dev "invalid reconnect_delay '3601' (1-3600)" \
	dev connect addr 10.0.0.1 export foo reconnect_delay 3601
usage dev "invalid reconnect_delay '2s' (1-3600)" \
	dev connect addr 10.0.0.1 export foo reconnect_delay 2s
usage dev "invalid reconnect_delay '-1' (1-3600)" \
	dev connect addr 10.0.0.1 export foo reconnect_delay -1
usage dev "missing value for 'reconnect_delay'" \
	dev connect addr 10.0.0.1 export foo reconnect_delay
usage dev "invalid loss_timeout '86401' (0-86400)" \
	dev connect addr 10.0.0.1 export foo loss_timeout 86401
usage dev "invalid loss_timeout '18446744073709551616' (0-86400)" \
	dev connect addr 10.0.0.1 export foo loss_timeout 18446744073709551616
usage dev "invalid loss_timeout 'never' (0-86400)" \
	dev connect addr 10.0.0.1 export foo loss_timeout never
usage dev "invalid loss_timeout '' (0-86400)" \
	dev connect addr 10.0.0.1 export foo loss_timeout ""
usage dev "invalid loss_timeout ' 5' (0-86400)" \
	dev connect addr 10.0.0.1 export foo loss_timeout " 5"
usage dev "missing value for 'loss_timeout'" \
	dev connect addr 10.0.0.1 export foo loss_timeout
usage dev "duplicate keyword 'loss_timeout'" \
	dev connect addr 10.0.0.1 export foo loss 5 loss_timeout 6
usage dev "leg 0: missing keyword 'export'" \
	dev connect addr 10.0.0.1 addr 10.0.0.2 export foo
usage dev "missing device" dev disconnect
usage dev "invalid device 'sda'" dev disconnect sda
usage dev "invalid device 'rmbd'" dev show rmbd
usage dev "unexpected argument 'rmbd2'" dev show rmbd1 rmbd2
usage monitor "unknown keyword 'bogus'" monitor bogus
usage monitor "unknown keyword 'session'" monitor dev session
usage monitor "missing value for 'count'" monitor count
usage monitor "invalid count '0' (1-4294967295)" monitor count 0
usage monitor "invalid count '4294967296' (1-4294967295)" \
	monitor dev count 4294967296
usage monitor "invalid count 'x' (1-4294967295)" monitor session count x
usage monitor "invalid count '-1' (1-4294967295)" monitor all count -1
usage monitor "duplicate keyword 'count'" monitor all count 1 c 2
usage monitor "unexpected argument 'x'" monitor help x
log_is "" "usage errors make no library call"

# Help
# -V: the CLI's, the library's, the protocol's and each module's version,
# the first two from ../../VERSION, the project's one version source.
ver=$(cat "$here/../../VERSION")
proto=$(sed -n 's/^#define RMBD_PROTO_VERSION[[:space:]]*\([0-9]*\)$/\1/p' \
	"$here/../../uapi/linux/rmbd_proto.h")
for opt in -V --version; do
	"$RMBD" $opt >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	printf 'rmbd %s\nlibrmbd %s\nprotocol %s\n' "$ver" "$ver" "$proto" \
		>"$tmp/want"
	if [ $rc = 0 ] && [ ! -s "$tmp/err" ] && [ -n "$proto" ] &&
	   head -n 3 "$tmp/out" | cmp -s - "$tmp/want" &&
	   [ "$(sed -n 4,5p "$tmp/out" | grep -cE \
		'^rmbd_(target|client) (not loaded|[0-9][0-9.]*)$')" = 2 ] &&
	   [ "$(wc -l <"$tmp/out")" = 5 ]; then
		pass "rmbd $opt: rmbd, librmbd $ver, protocol $proto, modules"
	else
		fail "rmbd $opt"
		sed 's/^/# /' "$tmp/out" "$tmp/err"
	fi
done
# Every man page's footer names the same version.
for m in "$here"/../../Documentation/man/*.8; do
	if grep -q "^\.TH .* \"rmbd $ver\" " "$m"; then
		pass "$(basename "$m") is for rmbd $ver"
	else
		fail "$(basename "$m"): .TH does not say rmbd $ver"
	fi
done
for args in "help" "-help" "--help" "-he" "--he" "-h -help" "help export" \
	    "export help" "listener help" "dev help" "d h" "help l" \
	    "monitor help" "help monitor" "m h"; do
	# shellcheck disable=SC2086
	"$RMBD" $args >"$tmp/out" 2>"$tmp/err"
	if [ $? = 0 ] && grep -q '^Usage: rmbd' "$tmp/out" &&
	   [ ! -s "$tmp/err" ]; then
		pass "rmbd $args prints usage, exit 0"
	else
		fail "rmbd $args prints usage, exit 0"
	fi
done
"$RMBD" dev help >"$tmp/out"
if grep -q 'default 7470' "$tmp/out" && grep -q 'default 128' "$tmp/out"
then
	pass "dev help gives the default port and depth"
else
	fail "dev help gives the default port and depth"
fi
if grep -q '^ .*\[ shared \] \[ read_only \]' "$tmp/out" &&
   grep -q '^       read_only: ' "$tmp/out"; then
	pass "dev help gives read_only"
else
	fail "dev help gives read_only"
fi
if grep -q 'reconnect_delay: .*1-3600, default 2$' "$tmp/out" &&
   grep -q '0-86400 (0: fail at once), default 60$' "$tmp/out"; then
	pass "dev help gives the reconnect_delay and loss_timeout ranges"
else
	fail "dev help gives the reconnect_delay and loss_timeout ranges"
fi

for obj in listener dev; do
	if "$RMBD" $obj help | grep -q 'link-local IPv6' &&
	   "$RMBD" $obj help | grep -q 'fe80::1%eth0'; then
		pass "$obj help gives scoped addresses"
	else
		fail "$obj help gives scoped addresses"
	fi
done

"$RMBD" export help >"$tmp/out"
if grep -q '^ .*\[ shared \] \[ read_only \]$' "$tmp/out" &&
   grep -q 'unless it is$' "$tmp/out" &&
   grep -q '^       shared; read_only: ' "$tmp/out"; then
	pass "export help gives shared and read_only"
else
	fail "export help gives shared and read_only"
fi

# Output and library calls, through the fake library
exports_text="export foo size 1073741824 slab_size 67108864 nr_slabs 16 sessions 1 mapped 3 mem 1073741824 shared hosts rmbd:uuid:0a,nqn.2014-08.org.nvmexpress:uuid:0b auth_hosts nqn.2014-08.org.nvmexpress:uuid:0b
export bar.2 size 8388608 slab_size 2097152 nr_slabs 4 sessions 0 mapped 0 mem 8388608 any_host read_only"
exports_json='[{"name":"foo","size":1073741824,"slab_size":67108864,"nr_slabs":16,"sessions":1,"mapped":3,"mem":1073741824,"any_host":false,"shared":true,"read_only":false,"hosts":["rmbd:uuid:0a","nqn.2014-08.org.nvmexpress:uuid:0b"],"auth_hosts":["nqn.2014-08.org.nvmexpress:uuid:0b"]},{"name":"bar.2","size":8388608,"slab_size":2097152,"nr_slabs":4,"sessions":0,"mapped":0,"mem":8388608,"any_host":true,"shared":false,"read_only":true,"hosts":[],"auth_hosts":[]}]'
# Text: pollq, reconnect_delay, loss_timeout and reconnects only when not
# at their defaults (0, 2, 60, 0) or with -d; slab only with -d.
devs_text="rmbd0: size 1073741824 state live addr 10.200.0.1 port 7470 export foo queues 2 depth 128 host rmbd:uuid:0a
rmbd3: size 8388608 state failed addr fd00::1 port 7471 export bar.2 queues 1 poll_queues 1 depth 16 loss_timeout 0 read_only
rmbd6: size 4294967296 state reconnecting addr 10.200.0.2 port 7470 export baz queues 4 depth 128 reconnect_delay 5 loss_timeout 300 reconnects 3 shared host h6 layout mirror legs 2
rmbd8: size 1073741824 state live addr 10.200.0.1 port 7470 export m0 queues 2 depth 128 reconnects 1 host rmbd:uuid:0a layout mirror legs 2 degraded"
devs_details="rmbd0: size 1073741824 state live addr 10.200.0.1 port 7470 export foo queues 2 poll_queues 0 depth 128 reconnect_delay 2 loss_timeout 60 reconnects 0 host rmbd:uuid:0a slab_size 67108864
    leg 0 state up addr 10.200.0.1 port 7470 export foo size 1073741824 nr_slabs 16 slab_size 67108864 reconnects 0
rmbd3: size 8388608 state failed addr fd00::1 port 7471 export bar.2 queues 1 poll_queues 1 depth 16 reconnect_delay 2 loss_timeout 0 reconnects 0 read_only slab_size 2097152
    leg 0 state down addr fd00::1 port 7471 export bar.2 size 8388608 nr_slabs 4 slab_size 2097152 reconnects 0
rmbd6: size 4294967296 state reconnecting addr 10.200.0.2 port 7470 export baz queues 4 poll_queues 0 depth 128 reconnect_delay 5 loss_timeout 300 reconnects 3 shared host h6 slab_size 1073741824 layout mirror legs 2
    leg 0 state down addr 10.200.0.2 port 7470 export baz size 4294967296 nr_slabs 4 slab_size 1073741824 reconnects 3
    leg 1 state up addr 10.200.0.3 port 7470 export baz2 size 8589934592 nr_slabs 8 slab_size 1073741824 reconnects 0
rmbd8: size 1073741824 state live addr 10.200.0.1 port 7470 export m0 queues 2 poll_queues 0 depth 128 reconnect_delay 2 loss_timeout 60 reconnects 1 host rmbd:uuid:0a slab_size 67108864 layout mirror legs 2 degraded
    leg 0 state up addr 10.200.0.1 port 7470 export m0 size 1073741824 nr_slabs 16 slab_size 67108864 reconnects 0
    leg 1 state stale addr 10.201.0.1 port 7470 export m1 size 2147483648 nr_slabs 32 slab_size 67108864 reconnects 1 dirty 5242880"
dev6_json='{"index":6,"name":"rmbd6","size":4294967296,"state":"reconnecting","addr":"10.200.0.2","port":7470,"export":"baz","queues":4,"poll_queues":0,"depth":128,"reconnect_delay":5,"loss_timeout":300,"reconnects":3,"shared":true,"host":"h6","auth":false,"read_only":false,"slab_size":1073741824,"layout":"mirror","copies":2,"degraded":false,"legs":[{"index":0,"state":"down","addr":"10.200.0.2","port":7470,"export":"baz","size":4294967296,"nr_slabs":4,"slab_size":1073741824,"reconnects":3,"dirty":0},{"index":1,"state":"up","addr":"10.200.0.3","port":7470,"export":"baz2","size":8589934592,"nr_slabs":8,"slab_size":1073741824,"reconnects":0,"dirty":0}],"spares":[]}'
devs_json='[{"index":0,"name":"rmbd0","size":1073741824,"state":"live","addr":"10.200.0.1","port":7470,"export":"foo","queues":2,"poll_queues":0,"depth":128,"reconnect_delay":2,"loss_timeout":60,"reconnects":0,"shared":false,"host":"rmbd:uuid:0a","auth":false,"read_only":false,"slab_size":67108864,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"up","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0}],"spares":[]},{"index":3,"name":"rmbd3","size":8388608,"state":"failed","addr":"fd00::1","port":7471,"export":"bar.2","queues":1,"poll_queues":1,"depth":16,"reconnect_delay":2,"loss_timeout":0,"reconnects":0,"shared":false,"host":"","auth":false,"read_only":true,"slab_size":2097152,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"down","addr":"fd00::1","port":7471,"export":"bar.2","size":8388608,"nr_slabs":4,"slab_size":2097152,"reconnects":0,"dirty":0}],"spares":[]},'"$dev6_json"',{"index":8,"name":"rmbd8","size":1073741824,"state":"live","addr":"10.200.0.1","port":7470,"export":"m0","queues":2,"poll_queues":0,"depth":128,"reconnect_delay":2,"loss_timeout":60,"reconnects":1,"shared":false,"host":"rmbd:uuid:0a","auth":false,"read_only":false,"slab_size":67108864,"layout":"mirror","copies":2,"degraded":true,"legs":[{"index":0,"state":"up","addr":"10.200.0.1","port":7470,"export":"m0","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0},{"index":1,"state":"stale","addr":"10.201.0.1","port":7470,"export":"m1","size":2147483648,"nr_slabs":32,"slab_size":67108864,"reconnects":1,"dirty":5242880}],"spares":[]}]'

# With -d, each export's sessions (the fake's are not in the order of
# their exports, and one is of an export no longer listed).
sessions_foo="    session 3f2a9c0d1b2e4f60 host nqn.2014-08.org.nvmexpress:uuid:0b peer 10.200.0.1:41234 up auth
    session 1c host - peer 10.200.0.3:41300 authenticating"
sessions_bar="    session 7 host - peer [fd00::2]:41235 up read_only"
exports_details="$(echo "$exports_text" | sed -n 1p)
$sessions_foo
$(echo "$exports_text" | sed -n 2p)
$sessions_bar"
session_list_foo='"session_list":[{"id":"3f2a9c0d1b2e4f60","host":"nqn.2014-08.org.nvmexpress:uuid:0b","peer":"10.200.0.1:41234","up":true,"auth":true,"read_only":false,"mapped":4,"mapped_bytes":268435456},{"id":"1c","host":"-","peer":"10.200.0.3:41300","up":false,"auth":false,"read_only":false,"mapped":0,"mapped_bytes":0}]'
session_list_bar='"session_list":[{"id":"7","host":"-","peer":"[fd00::2]:41235","up":true,"auth":false,"read_only":true,"mapped":1,"mapped_bytes":2097152}]'
exports_details_json="$(echo "$exports_json" | sed 's/\]}/],'"$session_list_foo"'}/; s/\]}\]$/],'"$session_list_bar"'}]/')"
case $exports_details_json in
*'"auth_hosts":["nqn.2014-08.org.nvmexpress:uuid:0b"],"session_list":[{"id":"3f2a9c0d1b2e4f60",'*'"auth_hosts":[],"session_list":[{"id":"7",'*'"read_only":true,"mapped":1,"mapped_bytes":2097152}]}]')
	pass "exports_details_json built" ;;
*)
	fail "exports_details_json built"
	echo "# $exports_details_json" ;;
esac

log_reset
expect 0 "$exports_text" "" "$FAKE" export
expect 0 "$exports_text" "" "$FAKE" export show
expect 0 "$exports_details"$'\n'"total mem 1082130432" "" "$FAKE" -d ex sh
expect 0 "$exports_json" "" "$FAKE" -j export
expect 0 "$(echo "$exports_text" | head -n 1)" "" "$FAKE" export show foo
expect 0 "[$(echo "$exports_json" | sed 's/^\[//; s/,{"name":"bar.*//')]" \
	"" "$FAKE" -j export show foo
expect 1 "" "rmbd: failed to show export: No such file or directory: no such export" \
	"$FAKE" export show nope
log_is "open
export_list
open
export_list
open
export_list
session_list -
open
export_list
open
export_get foo
open
export_get foo
open
export_get nope" "export show calls"

# export show -d: the sessions asked for after the exports, of all or of
# the one export shown; none without -d.
log_reset
expect 0 "$exports_details_json" "" "$FAKE" -j -d export show
expect 0 "$(echo "$exports_details" | sed -n 1,3p)" "" \
	"$FAKE" -d export show foo
expect 0 "$(echo "$exports_details" | sed -n 4,5p)" "" \
	"$FAKE" -d export show bar.2
expect 0 "[$(echo "$exports_details_json" | sed 's/^\[//; s/,{"name":"bar.*//')]" \
	"" "$FAKE" -j -d export show foo
expect 0 '[
    {
        "name": "bar.2",
        "size": 8388608,
        "slab_size": 2097152,
        "nr_slabs": 4,
        "sessions": 0,
        "mapped": 0,
        "mem": 8388608,
        "any_host": true,
        "shared": false,
        "read_only": true,
        "hosts": [],
        "auth_hosts": [],
        "session_list": [
            {
                "id": "7",
                "host": "-",
                "peer": "[fd00::2]:41235",
                "up": true,
                "auth": false,
                "read_only": true,
                "mapped": 1,
                "mapped_bytes": 2097152
            }
        ]
    }
]' "" "$FAKE" -p -d export show bar.2
expect 1 "" "rmbd: failed to show export: No such file or directory: no such export" \
	"$FAKE" -d export show nope
log_is "open
export_list
session_list -
open
export_get foo
session_list foo
open
export_get bar.2
session_list bar.2
open
export_get foo
session_list foo
open
export_get bar.2
session_list bar.2
open
export_get nope" "export show -d lists the sessions, of the export shown"

# A failed session list fails export show -d, with nothing shown; without
# -d it is not asked for.
export RMBD_FAKE_FAIL=session_list
log_reset
expect 1 "" "rmbd: failed to list sessions: Operation not supported" \
	"$FAKE" -d export show
expect 1 "" "rmbd: failed to list sessions: Operation not supported" \
	"$FAKE" -j -d export show foo
expect 0 "$exports_text" "" "$FAKE" export show
expect 0 "$exports_json" "" "$FAKE" -j export show
log_is "open
export_list
session_list -
open
export_get foo
session_list foo
open
export_list
open
export_list" "export show: a failed session list"
unset RMBD_FAKE_FAIL

log_reset
expect 0 "" "" "$FAKE" export add foo size 1G
expect 0 "" "" "$FAKE" export add foo size 3MiB slab 2M
expect 0 "" "" "$FAKE" export add zero size 0
expect 0 '{"name":"x","size":8589934592,"slab_size":67108864,"nr_slabs":128,"sessions":0,"mapped":0,"mem":8589934592,"any_host":false,"shared":false,"read_only":false,"hosts":[],"auth_hosts":[]}' \
	"" "$FAKE" -j export add x size 8G
expect 1 "" "rmbd: failed to add export: Invalid argument: fake refusal of bad" \
	"$FAKE" export add bad size 4K
expect 0 "" "" "$FAKE" export del foo
expect 0 "" "" "$FAKE" export d foo f
log_is "open
export_add foo 1073741824 0
  any_host 0 shared 0 read_only 0 hosts -
open
export_add foo 3145728 2097152
  any_host 0 shared 0 read_only 0 hosts -
open
export_add zero 0 0
  any_host 0 shared 0 read_only 0 hosts -
open
export_add x 8589934592 0
  any_host 0 shared 0 read_only 0 hosts -
open
export_add bad 4096 0
  any_host 0 shared 0 read_only 0 hosts -
open
export_del foo 0
open
export_del foo 1" "export add/del pass the parsed values"

# Every suffix the help names, in any case, with or without iB.
log_reset
want=""
for sz in 4096:4096 16G:17179869184 16g:17179869184 16GiB:17179869184 \
	  16gib:17179869184 16GIB:17179869184 2k:2048 2KiB:2048 2kib:2048 \
	  3m:3145728 3mib:3145728 1t:1099511627776 1tib:1099511627776 \
	  1p:1125899906842624 1PiB:1125899906842624 1pib:1125899906842624 \
	  1e:1152921504606846976 1eib:1152921504606846976; do
	expect 0 "" "" "$FAKE" export add foo size "${sz%%:*}"
	want+="open
export_add foo ${sz#*:} 0
  any_host 0 shared 0 read_only 0 hosts -
"
done
log_is "${want%$'\n'}" "export add: every size suffix reaches the library in bytes"

# Allowed hosts.
usage export "invalid host identity '-x'" export add foo size 1G hosts a,-x
usage export "invalid host identity 'a b'" export add foo size 1G hosts "a b"
usage export "hosts: no host in ','" export add foo size 1G hosts ,
usage export "hosts and any_host exclude each other" export add foo size 1G hosts a any_host
usage export "missing host command (add or del)" export host
usage export "unknown export host command 'set'" export host set foo h
usage export "missing host identity" export host add foo
usage export "invalid host identity '.h'" export host add foo .h
usage export "unexpected argument 'x'" export host del foo h x
usage export "unknown keyword 'shared'" export host add foo h shared
usage export "unknown keyword 'read_only'" export host add foo h read_only
usage export "unexpected argument 'read_only'" export host del foo h read_only
log_reset
expect 0 '{"name":"foo","size":1073741824,"slab_size":67108864,"nr_slabs":16,"sessions":0,"mapped":0,"mem":1073741824,"any_host":false,"shared":false,"read_only":false,"hosts":["rmbd:uuid:0a","h.b"],"auth_hosts":[]}' \
	"" "$FAKE" -j export add foo size 1G hosts rmbd:uuid:0a,h.b
expect 0 "" "" "$FAKE" export add foo size 1G any_host
expect 0 "" "" "$FAKE" export host add foo nqn.2014-08.org.nvmexpress:uuid:0b
expect 0 "" "" "$FAKE" export host d foo h.b
expect 1 "" "rmbd: failed to add host: Invalid argument: fake refusal of bad" \
	"$FAKE" export host add bad h
log_is "open
export_add foo 1073741824 0
  any_host 0 shared 0 read_only 0 hosts rmbd:uuid:0a,h.b
open
export_add foo 1073741824 0
  any_host 1 shared 0 read_only 0 hosts -
open
export_host_add foo nqn.2014-08.org.nvmexpress:uuid:0b secret 0
open
export_host_del foo h.b
open
export_host_add bad h secret 0" "export hosts pass the parsed values"

# Shared and read-only exports: each keyword sets its own flag, and
# export add shows them.
log_reset
expect 0 "" "" "$FAKE" export add foo size 1G shared read_only
expect 0 "" "" "$FAKE" export add foo size 1G sh
expect 0 '{"name":"foo","size":1073741824,"slab_size":67108864,"nr_slabs":16,"sessions":0,"mapped":0,"mem":1073741824,"any_host":true,"shared":false,"read_only":true,"hosts":[],"auth_hosts":[]}' \
	"" "$FAKE" -j export add foo size 1G read_only any_host
expect 0 '{"name":"foo","size":1073741824,"slab_size":67108864,"nr_slabs":16,"sessions":0,"mapped":0,"mem":1073741824,"any_host":false,"shared":true,"read_only":false,"hosts":["h.b"],"auth_hosts":[]}' \
	"" "$FAKE" -j export add foo shared size 1G hosts h.b
expect 0 "" "" "$FAKE" export host add foo h.b
log_is "open
export_add foo 1073741824 0
  any_host 0 shared 1 read_only 1 hosts -
open
export_add foo 1073741824 0
  any_host 0 shared 1 read_only 0 hosts -
open
export_add foo 1073741824 0
  any_host 1 shared 0 read_only 1 hosts -
open
export_add foo 1073741824 0
  any_host 0 shared 1 read_only 0 hosts h.b
open
export_host_add foo h.b secret 0" "export add passes shared and read_only"

# Secrets: generated into a file of its owner's, read back by the
# commands that take one.
sdir=$(mktemp -d)
expect 0 "" "" "$RMBD" secret generate "$sdir/s"
[[ $(stat -c %a "$sdir/s") == 600 ]] && grep -qxE '[0-9a-f]{64}' "$sdir/s" &&
	pass "secret generate: 64 hex digits, mode 600" ||
	fail "secret generate: mode $(stat -c %a "$sdir/s"), $(cat "$sdir/s")"
expect 1 "" "rmbd: failed to generate secret: $sdir/s: File exists" "$RMBD" secret generate "$sdir/s"
usage secret "missing file" secret generate
printf '9d%.0s' $(seq 32) > "$sdir/k"
chmod 600 "$sdir/k"
log_reset
expect 0 "" "" "$FAKE" export host add foo h secret-file "$sdir/k"
expect 0 '{"index":7,"name":"rmbd7","size":1073741824,"state":"live","addr":"10.200.0.1","port":7470,"export":"foo","queues":2,"poll_queues":0,"depth":128,"reconnect_delay":2,"loss_timeout":60,"reconnects":0,"shared":false,"host":"h","auth":true,"read_only":false,"slab_size":67108864,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"up","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0}],"spares":[]}' \
	"" "$FAKE" -j dev connect addr 10.200.0.1 export foo host h secret-file "$sdir/k"
log_is "open
export_host_add foo h secret 32 9d...
open
dev_connect 10.200.0.1 0 foo 0 0 0 0 - 0 0 h 32" "secrets reach the library"
chmod 640 "$sdir/k"
usage export "secret file '$sdir/k' may be read by others than its owner (chmod 600)" \
	export host add foo h secret-file "$sdir/k"
printf 'abc\n' > "$sdir/short"
chmod 600 "$sdir/short"
usage dev "secret file '$sdir/short' does not start with a line of 64 to 128 hex digits" \
	dev connect addr 10.0.0.1 export foo secret-file "$sdir/short"
usage export "unexpected argument 'secret-file'" export host del foo h secret-file "$sdir/k"
rm -rf "$sdir"

# This machine's identity: /etc/rmbd/hostid, else the machine id.
hid=$(mktemp)
mid=$(mktemp)
echo 0123456789ABCDEF0123456789abcdef > "$mid"
expect 0 "rmbd:uuid:01234567-89ab-cdef-0123-456789abcdef" "" \
	env RMBD_HOSTID_FILE=/nonexistent RMBD_MACHINE_ID_FILE="$mid" "$RMBD" host
printf 'nqn.2014-08.org.nvmexpress:uuid:0b\nrest\n' > "$hid"
expect 0 '{"host":"nqn.2014-08.org.nvmexpress:uuid:0b"}' "" \
	env RMBD_HOSTID_FILE="$hid" RMBD_MACHINE_ID_FILE="$mid" "$RMBD" -j host show
echo 'bad host' > "$hid"
expect 1 "" "rmbd: failed to show host: Invalid argument: /etc/rmbd/hostid holds no valid host identity" \
	env RMBD_HOSTID_FILE="$hid" "$RMBD" host
echo 12345 > "$mid"
expect 1 "" "rmbd: failed to show host: No such file or directory: no /etc/rmbd/hostid and no /etc/machine-id" \
	env RMBD_HOSTID_FILE=/nonexistent RMBD_MACHINE_ID_FILE="$mid" "$RMBD" host
rm -f "$hid" "$mid"
usage host "unexpected argument 'x'" host show x

log_reset
expect 0 "listener 10.200.0.1 port 7470 max_sessions 128 sessions 3
listener fd00::1 port 7471 max_sessions 16 sessions 0" "" "$FAKE" listener
expect 0 '[{"addr":"10.200.0.1","port":7470,"max_sessions":128,"sessions":3},{"addr":"fd00::1","port":7471,"max_sessions":16,"sessions":0}]' \
	"" "$FAKE" --json listener show
expect 0 '[
    {
        "addr": "10.200.0.1",
        "port": 7470,
        "max_sessions": 128,
        "sessions": 3
    },
    {
        "addr": "fd00::1",
        "port": 7471,
        "max_sessions": 16,
        "sessions": 0
    }
]' "" "$FAKE" -p listener
expect 0 "" "" "$FAKE" listener add 10.200.0.1
expect 0 '{"addr":"fe80::2","port":9000,"max_sessions":128,"sessions":0}' "" "$FAKE" -j listener add fe80::2 port 9000
expect 0 '{"addr":"10.0.0.9","port":7470,"max_sessions":4,"sessions":0}' "" "$FAKE" -j listener add 10.0.0.9 max_sessions 4
expect 0 "" "" "$FAKE" listener del 10.200.0.1 port 7470
log_is "open
listener_list
open
listener_list
open
listener_list
open
listener_add 10.200.0.1 0 0
open
listener_add fe80::2 9000 0
open
listener_add 10.0.0.9 0 4
open
listener_del 10.200.0.1 7470" "listener calls"

# Scoped IPv6 addresses, as the kernel takes them for rdma_cm: a
# link-local address with an interface that exists, or its index; they
# reach the library as given.
log_reset
expect 0 "" "" "$FAKE" listener add fe80::1%lo
expect 0 '{"addr":"fe80::2%1","port":7470,"max_sessions":128,"sessions":0}' "" \
	"$FAKE" -j listener add fe80::2%1
expect 0 "" "" "$FAKE" listener del fe80::1%lo port 7470
expect 0 "rmbd7" "" "$FAKE" dev connect addr fe80::1%lo export foo
expect 0 "rmbd7" "" "$FAKE" dev connect addr fe80::1%lo export m0 \
	addr FE80::2%4294967295 export m1
expect 0 "" "" "$FAKE" dev replace rmbd0 1 with addr fe80::3%lo export m2
log_is "open
listener_add fe80::1%lo 0 0
open
listener_add fe80::2%1 0 0
open
listener_del fe80::1%lo 7470
open
dev_connect fe80::1%lo 0 foo 0 0 0 0 - 0 0 - 0
open
dev_connect legs fe80::1%lo 0 m0 + FE80::2%4294967295 0 m1 layout 0 0 0 0 0 0 - 0 0 - 0
open
dev_replace 0 1 fe80::3%lo 0 m2" "scoped addresses reach the library as given"
usage listener "invalid address 'fe80::1%no-such-if0': no interface 'no-such-if0'" \
	listener add fe80::1%no-such-if0
usage listener "invalid address 'fe80::1%0': an interface index is 1-4294967295" \
	listener add fe80::1%0
usage listener "invalid address 'fe80::1%4294967296': an interface index is 1-4294967295" \
	listener del fe80::1%4294967296
usage listener "invalid address 'fe80::1%'" listener add fe80::1%
usage listener "invalid address 'fe80::1%lo%lo'" listener add fe80::1%lo%lo
usage listener "invalid address 'fe80::1%a/b'" listener add fe80::1%a/b
usage listener "invalid address 'fe80::1%0123456789abcdef'" \
	listener add fe80::1%0123456789abcdef
usage listener "invalid address 'fd00::1%lo': only a link-local IPv6 address (fe80::/10) takes a scope" \
	listener add fd00::1%lo
usage dev "invalid address '10.0.0.1%lo': only a link-local IPv6 address (fe80::/10) takes a scope" \
	dev connect addr 10.0.0.1%lo export foo
usage dev "invalid address 'fe80::1%no-such-if0': no interface 'no-such-if0'" \
	dev replace rmbd0 1 with addr fe80::1%no-such-if0 export foo

# Options, as iproute2 takes them: -NAME, --NAME, a unique prefix of
# either in any case, a letter alone, letters bundled after one dash.
listeners_text="listener 10.200.0.1 port 7470 max_sessions 128 sessions 3
listener fd00::1 port 7471 max_sessions 16 sessions 0"
listeners_json='[{"addr":"10.200.0.1","port":7470,"max_sessions":128,"sessions":3},{"addr":"fd00::1","port":7471,"max_sessions":16,"sessions":0}]'
for o in -j -json --json -js --js -JSON; do
	expect 0 "$listeners_json" "" "$FAKE" $o listener
done
for o in -p -pretty --pretty -pre --pr; do
	expect 0 "$("$FAKE" -p listener)" "" "$FAKE" $o listener
done
case $("$FAKE" -p listener) in
'['$'\n''    {'*) pass "-p indents" ;;
*) fail "-p indents" ;;
esac
for o in -d -details --details -det --de; do
	expect 0 "$(echo "$devs_details" | sed -n '5,7p')" "" "$FAKE" $o dev show 6
done
for o in -jd -dj "-j -d" "-d --json"; do
	# shellcheck disable=SC2086
	expect 0 "[$(echo "$devs_json" | sed 's/^\[//; s/,{"index":3,.*//')]" "" \
		"$FAKE" $o dev show 0
done
# -s: counters where an object has them; listeners have none.
for o in -s -stats --stats -st -sj; do
	want=$listeners_text
	[ "$o" = -sj ] && want=$listeners_json
	expect 0 "$want" "" "$FAKE" $o listener
done
# Devices: a line of totals below each (none for rmbd3, failed while
# connecting as far as the fake knows), each queue's for one device.
devs_stats=$("$FAKE" dev show | sed '1a\
    stats reads 3 read_bytes 12288 writes 6 write_bytes 3145728 discards 1 discard_bytes 2097152 errors 0 requeues 0 timeouts 0 in_flight 1 reconnects 0
3a\
    stats reads 250 read_bytes 1024000 writes 500 write_bytes 262144000 discards 6 discard_bytes 12582912 errors 4 requeues 26 timeouts 0 in_flight 6 reconnects 3
4a\
    stats reads 163 read_bytes 667648 writes 326 write_bytes 170917888 discards 1 discard_bytes 2097152 errors 0 requeues 0 timeouts 0 in_flight 1 reconnects 1')
for o in -s -stats --stats; do
	expect 0 "$devs_stats" "" "$FAKE" $o dev show
done
expect 0 "$("$FAKE" -h dev show 6)
    stats reads 250 read_bytes 1000K writes 500 write_bytes 250M discards 6 discard_bytes 12M errors 4 requeues 26 timeouts 0 in_flight 6 reconnects 3
    queue 0 reads 61 read_bytes 244K writes 122 write_bytes 61M discards 0 discard_bytes 0 errors 1 requeues 5 timeouts 0 in_flight 0
    queue 1 reads 62 read_bytes 248K writes 124 write_bytes 62M discards 1 discard_bytes 2M errors 1 requeues 6 timeouts 0 in_flight 1
    queue 2 reads 63 read_bytes 252K writes 126 write_bytes 63M discards 2 discard_bytes 4M errors 1 requeues 7 timeouts 0 in_flight 2
    queue 3 reads 64 read_bytes 256K writes 128 write_bytes 64M discards 3 discard_bytes 6M errors 1 requeues 8 timeouts 0 in_flight 3" \
	"" "$FAKE" -s -h dev show 6
log_reset
"$FAKE" -s dev show 6 >/dev/null
log_is "open
dev_get_stats 6" "-s dev show DEV asks for the counters of each queue"
# JSON: the same keys; the totals are the queues' sums; a list has no
# queues; bytes stay exact with -h.
if command -v jq >/dev/null; then
	"$FAKE" -s -h -j dev show 6 >"$tmp/out" 2>"$tmp/err"
	if jq -e '.[0].stats as $s | ($s.queues | length) == 4 and
		  ([$s.queues[].reads] | add) == $s.reads and
		  ([$s.queues[].write_bytes] | add) == $s.write_bytes and
		  ([$s.queues[].requeues] | add) == $s.requeues and
		  ([$s.queues[].in_flight] | add) == $s.in_flight and
		  $s.write_bytes == 262144000 and $s.reconnects == 3 and
		  ([$s.queues[].index] == [0, 1, 2, 3]) and
		  ($s | keys_unsorted) == ["reads", "read_bytes", "writes",
			"write_bytes", "discards", "discard_bytes", "errors",
			"requeues", "timeouts", "in_flight", "reconnects",
			"queues"]' "$tmp/out" >/dev/null && [ ! -s "$tmp/err" ]; then
		pass "-s -j dev show DEV: totals are the queues' sums, keys as in text"
	else
		fail "-s -j dev show DEV"
		sed 's/^/# /' "$tmp/out" "$tmp/err"
	fi
	"$FAKE" -s -j dev show >"$tmp/out"
	if jq -e '[.[] | .stats | if . == null then null else has("queues") end] ==
		  [false, null, false, false]' "$tmp/out" >/dev/null &&
	   ! "$FAKE" -j dev show | jq -e '.[] | select(has("stats"))' >/dev/null; then
		pass "-s -j dev show: totals only, none for a device without them; none without -s"
	else
		fail "-s -j dev show"
		sed 's/^/# /' "$tmp/out"
	fi
	"$FAKE" -j -d export show >"$tmp/out"
	if jq -e '[.[].session_list[]? | [.mapped, .mapped_bytes]] ==
		  [[4, 268435456], [0, 0], [1, 2097152]]' "$tmp/out" >/dev/null; then
		pass "-j -d export show: each session's mapped slabs and bytes"
	else
		fail "-j -d export show: mapped"
		sed 's/^/# /' "$tmp/out"
	fi
fi
"$FAKE" -s -d export show >"$tmp/out"
if grep -qx '    session 3f2a9c0d1b2e4f60 host nqn.2014-08.org.nvmexpress:uuid:0b peer 10.200.0.1:41234 up auth mapped 4 mapped_bytes 268435456' "$tmp/out" &&
   ! "$FAKE" -d export show | grep -q mapped_bytes; then
	pass "-s -d export show: sessions' mapped slabs and bytes, only with -s"
else
	fail "-s -d export show"
	sed 's/^/# /' "$tmp/out"
fi
for o in -V -version --version -Version -vers --v -jV; do
	expect 0 "$("$RMBD" -V)" "" "$RMBD" $o
done
usage "" "invalid option '--jd'" --jd listener
usage "" "invalid option '-jx'" -jx listener
usage "" "invalid option '-jsonx'" -jsonx listener
usage "" "invalid option '---json'" ---json listener
usage "" "invalid option '-xxxxxxxxxxxxxxxxxxxxxxxx'" -xxxxxxxxxxxxxxxxxxxxxxxx listener
usage "" "unknown object '-j'" -- -j listener
usage "" "unknown object '-'" - listener
# Options come before the object only.
usage listener "unexpected argument '-j'" listener show -j

# -h[uman]: sizes in binary units in text; JSON keeps the bytes.  -h is
# no longer -help.
usage "" "missing object" -h
exports_human="export foo size 1G slab_size 64M nr_slabs 16 sessions 1 mapped 3 mem 1G shared hosts rmbd:uuid:0a,nqn.2014-08.org.nvmexpress:uuid:0b auth_hosts nqn.2014-08.org.nvmexpress:uuid:0b
export bar.2 size 8M slab_size 2M nr_slabs 4 sessions 0 mapped 0 mem 8M any_host read_only"
for o in -h -human --human -hu -HUMAN; do
	expect 0 "$exports_human" "" "$FAKE" $o export
done
expect 0 "$(echo "$exports_human" | sed -n 1p)
$sessions_foo
$(echo "$exports_human" | sed -n 2p)
$sessions_bar
total mem 1.01G" "" "$FAKE" -hd export
expect 0 "$exports_json" "" "$FAKE" -h -j export
expect 0 "$exports_json" "" "$FAKE" -jh export
expect 0 "rmbd6: size 4G state reconnecting addr 10.200.0.2 port 7470 export baz queues 4 poll_queues 0 depth 128 reconnect_delay 5 loss_timeout 300 reconnects 3 shared host h6 slab_size 1G layout mirror legs 2
    leg 0 state down addr 10.200.0.2 port 7470 export baz size 4G nr_slabs 4 slab_size 1G reconnects 3
    leg 1 state up addr 10.200.0.3 port 7470 export baz2 size 8G nr_slabs 8 slab_size 1G reconnects 0" \
	"" "$FAKE" -h -d dev show 6
expect 0 "    leg 1 state stale addr 10.201.0.1 port 7470 export m1 size 2G nr_slabs 32 slab_size 64M reconnects 1 dirty 5M" \
	"" sh -c "'$FAKE' -h -d dev show 8 | tail -n 1"
expect 0 "[$dev6_json]" "" "$FAKE" -h -j dev show 6

log_reset
expect 0 "$devs_text" "" "$FAKE" dev
expect 0 "$devs_details" "" "$FAKE" -d dev show
expect 0 "$devs_json" "" "$FAKE" -j dev
expect 0 "$(echo "$devs_text" | sed -n 2p)" "" "$FAKE" dev show /dev/rmbd3
expect 0 "$(echo "$devs_text" | sed -n 3p)" "" "$FAKE" dev show rmbd6
expect 0 "$(echo "$devs_details" | sed -n '5,7p')" "" "$FAKE" -d dev show 6
expect 0 "[$dev6_json]" "" "$FAKE" -j dev show rmbd6
expect 0 '[
    {
        "index": 6,
        "name": "rmbd6",
        "size": 4294967296,
        "state": "reconnecting",
        "addr": "10.200.0.2",
        "port": 7470,
        "export": "baz",
        "queues": 4,
        "poll_queues": 0,
        "depth": 128,
        "reconnect_delay": 5,
        "loss_timeout": 300,
        "reconnects": 3,
        "shared": true,
        "host": "h6",
        "auth": false,
        "read_only": false,
        "slab_size": 1073741824,
        "layout": "mirror",
        "copies": 2,
        "degraded": false,
        "legs": [
            {
                "index": 0,
                "state": "down",
                "addr": "10.200.0.2",
                "port": 7470,
                "export": "baz",
                "size": 4294967296,
                "nr_slabs": 4,
                "slab_size": 1073741824,
                "reconnects": 3,
                "dirty": 0
            },
            {
                "index": 1,
                "state": "up",
                "addr": "10.200.0.3",
                "port": 7470,
                "export": "baz2",
                "size": 8589934592,
                "nr_slabs": 8,
                "slab_size": 1073741824,
                "reconnects": 0,
                "dirty": 0
            }
        ],
        "spares": []
    }
]' "" "$FAKE" -p dev show /dev/rmbd6
expect 1 "" "rmbd: failed to show device: No such device" "$FAKE" dev show 5
expect 0 "rmbd7" "" "$FAKE" dev connect addr 10.200.0.1 export foo
expect 0 '{"index":7,"name":"rmbd7","size":1073741824,"state":"live","addr":"fd00::1","port":99,"export":"foo","queues":4,"poll_queues":2,"depth":64,"reconnect_delay":2,"loss_timeout":60,"reconnects":0,"shared":false,"host":"rmbd:uuid:default","auth":false,"read_only":false,"slab_size":67108864,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"up","addr":"fd00::1","port":99,"export":"foo","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0}],"spares":[]}' \
	"" "$FAKE" -j dev conn export foo addr fd00::1 port 99 queues 4 depth 64 pollq 2
expect 0 '{"index":7,"name":"rmbd7","size":1073741824,"state":"live","addr":"10.200.0.1","port":7470,"export":"foo","queues":2,"poll_queues":0,"depth":128,"reconnect_delay":10,"loss_timeout":0,"reconnects":0,"shared":false,"host":"rmbd:uuid:default","auth":false,"read_only":false,"slab_size":67108864,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"up","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0}],"spares":[]}' \
	"" "$FAKE" -j dev connect addr 10.200.0.1 export foo reconnect_delay 10 loss_timeout 0
expect 0 "rmbd7" "" "$FAKE" dev c addr 10.200.0.1 export foo loss 86400 reco 3600
expect 0 "rmbd7" "" "$FAKE" dev connect addr 10.200.0.1 export foo reconnect_delay 1
expect 0 '{"index":7,"name":"rmbd7","size":1073741824,"state":"live","addr":"10.200.0.1","port":7470,"export":"foo","queues":2,"poll_queues":0,"depth":128,"reconnect_delay":2,"loss_timeout":60,"reconnects":0,"shared":true,"host":"rmbd:uuid:default","auth":false,"read_only":false,"slab_size":67108864,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"up","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0}],"spares":[]}' \
	"" "$FAKE" -j dev connect addr 10.200.0.1 export foo shared
expect 0 '{"index":7,"name":"rmbd7","size":1073741824,"state":"live","addr":"10.200.0.1","port":7470,"export":"foo","queues":2,"poll_queues":0,"depth":128,"reconnect_delay":2,"loss_timeout":60,"reconnects":0,"shared":false,"host":"rmbd:uuid:default","auth":false,"read_only":true,"slab_size":67108864,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"up","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0}],"spares":[]}' \
	"" "$FAKE" -j dev connect addr 10.200.0.1 export foo read_only
expect 0 "rmbd7" "" "$FAKE" dev connect read addr 10.200.0.1 shared export foo
expect 0 "rmbd7" "" "$FAKE" dev connect addr 10.200.0.1 export foo host h.x
expect 1 "" "rmbd: failed to connect device: Permission denied: host h.x is not allowed to use export denied" \
	"$FAKE" dev connect addr 10.200.0.1 export denied host h.x
expect 1 "" "rmbd: failed to connect device: Invalid argument: fake refusal of bad" \
	"$FAKE" dev connect addr 10.200.0.1 export bad
expect 0 "" "" "$FAKE" dev disconnect rmbd3
expect 1 "" "rmbd: failed to disconnect device: No such device: no such device" \
	"$FAKE" dev disconnect 9
expect 0 "" "" "$FAKE" dev disconnect /dev/rmbd4 force
log_is "open
dev_list
open
dev_list
open
dev_list
open
dev_get 3
open
dev_get 6
open
dev_get 6
open
dev_get 6
open
dev_get 6
open
dev_get 5
open
dev_connect 10.200.0.1 0 foo 0 0 0 0 - 0 0 - 0
open
dev_connect fd00::1 99 foo 4 64 2 0 - 0 0 - 0
open
dev_connect 10.200.0.1 0 foo 0 0 0 10 0 0 0 - 0
open
dev_connect 10.200.0.1 0 foo 0 0 0 3600 86400 0 0 - 0
open
dev_connect 10.200.0.1 0 foo 0 0 0 1 - 0 0 - 0
open
dev_connect 10.200.0.1 0 foo 0 0 0 0 - 1 0 - 0
open
dev_connect 10.200.0.1 0 foo 0 0 0 0 - 0 1 - 0
open
dev_connect 10.200.0.1 0 foo 0 0 0 0 - 1 1 - 0
open
dev_connect 10.200.0.1 0 foo 0 0 0 0 - 0 0 h.x 0
open
dev_connect 10.200.0.1 0 denied 0 0 0 0 - 0 0 h.x 0
open
dev_connect 10.200.0.1 0 bad 0 0 0 0 - 0 0 - 0
open
dev_disconnect 3 0
open
dev_disconnect 9 0
open
dev_disconnect 4 1" "dev calls"

# A device over several legs: each addr, export and port goes to the leg
# being given until that leg has it; the library gets the legs, the
# device's own target unset, and names a refused leg in the message.
log_reset
expect 0 "rmbd7" "" "$FAKE" dev connect addr 10.200.0.1 export m0 addr 10.201.0.1 export m1
expect 0 "rmbd7" "" "$FAKE" dev connect export m0 addr 10.200.0.1 port 7471 \
	export m1 addr fd00::1 layout mirror depth 16
mirror_json='{"index":7,"name":"rmbd7","size":1073741824,"state":"live","addr":"10.200.0.1","port":7470,"export":"m0","queues":2,"poll_queues":0,"depth":128,"reconnect_delay":2,"loss_timeout":60,"reconnects":0,"shared":false,"host":"rmbd:uuid:default","auth":false,"read_only":false,"slab_size":67108864,"layout":"mirror","copies":2,"degraded":false,"legs":[{"index":0,"state":"up","addr":"10.200.0.1","port":7470,"export":"m0","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0},{"index":1,"state":"up","addr":"10.201.0.1","port":7470,"export":"m1","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0}],"spares":[]}'
expect 0 "$mirror_json" "" "$FAKE" -j dev connect addr 10.200.0.1 export m0 addr 10.201.0.1 export m1
expect 1 "" "rmbd: failed to connect device: Invalid argument: leg 1 (addr 10.201.0.1 export bad1): fake refusal of bad1" \
	"$FAKE" dev connect addr 10.200.0.1 export m0 addr 10.201.0.1 export bad1
log_is "open
dev_connect legs 10.200.0.1 0 m0 + 10.201.0.1 0 m1 layout 0 0 0 0 0 0 - 0 0 - 0
open
dev_connect legs 10.200.0.1 7471 m0 + fd00::1 0 m1 layout 1 0 0 16 0 0 - 0 0 - 0
open
dev_connect legs 10.200.0.1 0 m0 + 10.201.0.1 0 m1 layout 0 0 0 0 0 0 - 0 0 - 0
open
dev_connect legs 10.200.0.1 0 m0 + 10.201.0.1 0 bad1 layout 0 0 0 0 0 0 - 0 0 - 0" \
	"mirror calls"
usage dev "too many legs (at most 4)" dev connect addr 10.0.0.1 export a \
	addr 10.0.0.2 export b addr 10.0.0.3 export c addr 10.0.0.4 export d \
	addr 10.0.0.5 export e
usage dev "leg 1: missing keyword 'export'" \
	dev connect addr 10.0.0.1 export a addr 10.0.0.2 port 5
usage dev "leg 1: missing keyword 'addr'" \
	dev connect addr 10.0.0.1 export a export b
usage dev "invalid address '10.0.0'" \
	dev connect addr 10.0.0.1 export a addr 10.0.0 export b
usage dev "invalid port '0' (1-65535)" \
	dev connect addr 10.0.0.1 export a addr 10.0.0.2 export b port 0
usage dev "invalid layout 'raid5' (mirror, pool)" \
	dev connect addr 10.0.0.1 export a addr 10.0.0.2 export b layout raid5
usage dev "copies belongs to layout pool" \
	dev connect addr 10.0.0.1 export a addr 10.0.0.2 export b copies 2
usage dev "invalid copies '3' (1-2, the legs)" \
	dev connect addr 10.0.0.1 export a addr 10.0.0.2 export b layout pool copies 3
usage dev "invalid copies '0' (1-2, the legs)" \
	dev connect addr 10.0.0.1 export a addr 10.0.0.2 export b layout pool copies 0

# Spares: "spare" starts a leg that goes to the spares, wherever it is.
log_reset
expect 0 "rmbd7" "" "$FAKE" dev connect addr 10.200.0.1 export m0 spare addr 10.202.0.1 \
	export s0 port 7471 addr 10.201.0.1 export m1 spare export s1 addr 10.203.0.1
log_is "open
dev_connect legs 10.200.0.1 0 m0 + 10.201.0.1 0 m1 spare 10.202.0.1 7471 s0 spare 10.203.0.1 0 s1 layout 0 0 0 0 0 0 - 0 0 - 0" \
	"spare calls"
usage dev "too many spares (at most 2)" dev connect addr 10.0.0.1 export a \
	addr 10.0.0.2 export b spare addr 10.0.0.3 export c spare addr 10.0.0.4 export d \
	spare addr 10.0.0.5 export e
usage dev "too many legs and spares (at most 4 legs and 2 spares)" dev connect \
	addr 10.0.0.1 export a addr 10.0.0.2 export b addr 10.0.0.3 export c \
	addr 10.0.0.4 export d spare addr 10.0.0.5 export e \
	spare addr 10.0.0.6 export f addr 10.0.0.7 export g
usage dev "spare 0: missing keyword 'export'" \
	dev connect addr 10.0.0.1 export a addr 10.0.0.2 export b spare addr 10.0.0.3
usage dev "'spare' is followed by no leg" \
	dev connect addr 10.0.0.1 export a addr 10.0.0.2 export b spare
usage dev "missing keyword 'addr'" dev connect spare addr 10.0.0.3 export c

# A pool: layout and copies reach the library; dev show -d prints where
# the extents lie (three legs, two copies: extent e + 3j on the legs of
# extent e, two extents further on each).
log_reset
expect 0 "rmbd7" "" "$FAKE" dev connect addr 10.200.0.1 export p0 addr 10.201.0.1 export p1 \
	addr 10.202.0.1 export p2 layout pool copies 2
expect 0 "rmbd7" "" "$FAKE" -d dev connect addr 10.200.0.1 export p0 addr 10.201.0.1 export p1 \
	addr 10.202.0.1 export p2 layout pool
expect 0 '{"extent_size":67108864,"extents":24,"period":3,"period_leg_bytes":134217728,"pattern":[{"extent":0,"start":0,"copies":[{"leg":0,"offset":0},{"leg":1,"offset":0}]},{"extent":1,"start":67108864,"copies":[{"leg":2,"offset":0},{"leg":0,"offset":67108864}]},{"extent":2,"start":134217728,"copies":[{"leg":1,"offset":67108864},{"leg":2,"offset":67108864}]}]}' "" \
	sh -c "'$FAKE' -j dev connect addr 10.200.0.1 export p0 addr 10.201.0.1 export p1 addr 10.202.0.1 export p2 layout pool | jq -c .placement"
log_is "open
dev_connect legs 10.200.0.1 0 p0 + 10.201.0.1 0 p1 + 10.202.0.1 0 p2 layout 2 2 0 0 0 0 - 0 0 - 0
open
dev_connect legs 10.200.0.1 0 p0 + 10.201.0.1 0 p1 + 10.202.0.1 0 p2 layout 2 0 0 0 0 0 - 0 0 - 0
open
dev_connect legs 10.200.0.1 0 p0 + 10.201.0.1 0 p1 + 10.202.0.1 0 p2 layout 2 0 0 0 0 0 - 0 0 - 0" \
	"pool calls"
usage dev "missing value for 'export'" dev connect addr 10.0.0.1 export

# dev replace DEV [leg] N with LEG: one leg, its keywords in any order.
log_reset
expect 0 "" "" "$FAKE" dev replace rmbd0 leg 1 with addr 10.202.0.1 export m2
expect 0 "" "" "$FAKE" dev replace /dev/rmbd0 0 with export m2 port 7471 addr fd00::2
expect 1 "" "rmbd: failed to replace leg: Invalid argument: fake refusal of bad2" \
	"$FAKE" dev replace 0 1 with addr 10.202.0.1 export bad2
log_is "open
dev_replace 0 1 10.202.0.1 0 m2
open
dev_replace 0 0 fd00::2 7471 m2
open
dev_replace 0 1 10.202.0.1 0 bad2" "replace calls"
expect 0 "$(RMBD_FAKE_EMPTY= "$FAKE" -j dev show rmbd0 | sed 's/^\[//; s/\]$//')" "" \
	"$FAKE" -j dev replace rmbd0 leg 1 with addr 10.202.0.1 export m2
usage dev "missing device" dev replace
usage dev "missing leg" dev replace rmbd0
usage dev "missing leg" dev replace rmbd0 leg
usage dev "invalid leg '4' (0-3)" dev replace rmbd0 leg 4 with addr 10.0.0.1 export a
usage dev "invalid leg 'x' (0-3)" dev replace rmbd0 x with addr 10.0.0.1 export a
usage dev "missing keyword 'with' after the leg" dev replace rmbd0 1 addr 10.0.0.1 export a
usage dev "missing keyword 'export'" dev replace rmbd0 1 with addr 10.0.0.1
usage dev "missing keyword 'addr'" dev replace rmbd0 1 with export a
usage dev "invalid address '10.0.0'" dev replace rmbd0 1 with addr 10.0.0 export a
usage dev "invalid port '0' (1-65535)" dev replace rmbd0 1 with addr 10.0.0.1 export a port 0
usage dev "duplicate keyword 'addr'" dev replace rmbd0 1 with addr 10.0.0.1 addr 10.0.0.2 export a

# monitor: the fake library's events, in order; events lost after the
# third.  Text: dev NAME EVENT state ... export NAME, with -d the other
# fields of dev show; session ID EVENT peer PEER export NAME [host HOST]
# [auth] [read_only].
events_text="dev rmbd0 connected state live addr 10.200.0.1 port 7470 export foo
session 3f2a9c0d1b2e4f60 up peer 10.200.0.1:41234 export foo host nqn.2014-08.org.nvmexpress:uuid:0b auth
dev rmbd0 link-down state reconnecting addr 10.200.0.1 port 7470 export foo
dev rmbd0 reconnecting state reconnecting addr 10.200.0.1 port 7470 export foo
dev rmbd0 live state live addr 10.200.0.1 port 7470 export foo
session 3f2a9c0d1b2e4f60 down peer 10.200.0.1:41234 export foo host nqn.2014-08.org.nvmexpress:uuid:0b auth
session 7 up peer [fd00::2]:41235 export bar.2 read_only
dev rmbd3 link-down state failed addr fd00::1 port 7471 export bar.2
dev rmbd3 failed state failed addr fd00::1 port 7471 export bar.2
dev rmbd3 disconnected state deleting addr fd00::1 port 7471 export bar.2
dev rmbd6 unknown state reconnecting addr 10.200.0.2 port 7470 export baz"
events_json='{"type":"dev","event":"connected","index":0,"name":"rmbd0","state":"live","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"queues":2,"poll_queues":0,"depth":128,"reconnect_delay":2,"loss_timeout":60,"reconnects":0,"shared":false,"host":"rmbd:uuid:0a","auth":false,"read_only":false,"slab_size":67108864,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"up","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0}],"spares":[]}
{"type":"session","event":"up","id":"3f2a9c0d1b2e4f60","peer":"10.200.0.1:41234","export":"foo","host":"nqn.2014-08.org.nvmexpress:uuid:0b","auth":true,"read_only":false}
{"type":"dev","event":"link-down","index":0,"name":"rmbd0","state":"reconnecting","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"queues":2,"poll_queues":0,"depth":128,"reconnect_delay":2,"loss_timeout":60,"reconnects":0,"shared":false,"host":"rmbd:uuid:0a","auth":false,"read_only":false,"slab_size":67108864,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"up","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0}],"spares":[]}
{"type":"dev","event":"reconnecting","index":0,"name":"rmbd0","state":"reconnecting","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"queues":2,"poll_queues":0,"depth":128,"reconnect_delay":2,"loss_timeout":60,"reconnects":0,"shared":false,"host":"rmbd:uuid:0a","auth":false,"read_only":false,"slab_size":67108864,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"up","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0}],"spares":[]}
{"type":"dev","event":"live","index":0,"name":"rmbd0","state":"live","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"queues":2,"poll_queues":0,"depth":128,"reconnect_delay":2,"loss_timeout":60,"reconnects":1,"shared":false,"host":"rmbd:uuid:0a","auth":false,"read_only":false,"slab_size":67108864,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"up","addr":"10.200.0.1","port":7470,"export":"foo","size":1073741824,"nr_slabs":16,"slab_size":67108864,"reconnects":0,"dirty":0}],"spares":[]}
{"type":"session","event":"down","id":"3f2a9c0d1b2e4f60","peer":"10.200.0.1:41234","export":"foo","host":"nqn.2014-08.org.nvmexpress:uuid:0b","auth":true,"read_only":false}
{"type":"session","event":"up","id":"7","peer":"[fd00::2]:41235","export":"bar.2","host":"","auth":false,"read_only":true}
{"type":"dev","event":"link-down","index":3,"name":"rmbd3","state":"failed","addr":"fd00::1","port":7471,"export":"bar.2","size":8388608,"queues":1,"poll_queues":1,"depth":16,"reconnect_delay":2,"loss_timeout":0,"reconnects":0,"shared":false,"host":"","auth":false,"read_only":true,"slab_size":2097152,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"down","addr":"fd00::1","port":7471,"export":"bar.2","size":8388608,"nr_slabs":4,"slab_size":2097152,"reconnects":0,"dirty":0}],"spares":[]}
{"type":"dev","event":"failed","index":3,"name":"rmbd3","state":"failed","addr":"fd00::1","port":7471,"export":"bar.2","size":8388608,"queues":1,"poll_queues":1,"depth":16,"reconnect_delay":2,"loss_timeout":0,"reconnects":0,"shared":false,"host":"","auth":false,"read_only":true,"slab_size":2097152,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"down","addr":"fd00::1","port":7471,"export":"bar.2","size":8388608,"nr_slabs":4,"slab_size":2097152,"reconnects":0,"dirty":0}],"spares":[]}
{"type":"dev","event":"disconnected","index":3,"name":"rmbd3","state":"deleting","addr":"fd00::1","port":7471,"export":"bar.2","size":8388608,"queues":1,"poll_queues":1,"depth":16,"reconnect_delay":2,"loss_timeout":0,"reconnects":0,"shared":false,"host":"","auth":false,"read_only":true,"slab_size":2097152,"layout":"mirror","copies":1,"degraded":false,"legs":[{"index":0,"state":"down","addr":"fd00::1","port":7471,"export":"bar.2","size":8388608,"nr_slabs":4,"slab_size":2097152,"reconnects":0,"dirty":0}],"spares":[]}
{"type":"dev","event":"unknown","index":6,"name":"rmbd6","state":"reconnecting","addr":"10.200.0.2","port":7470,"export":"baz","size":4294967296,"queues":4,"poll_queues":0,"depth":128,"reconnect_delay":5,"loss_timeout":300,"reconnects":3,"shared":true,"host":"h6","auth":false,"read_only":false,"slab_size":1073741824,"layout":"mirror","copies":2,"degraded":false,"legs":[{"index":0,"state":"down","addr":"10.200.0.2","port":7470,"export":"baz","size":4294967296,"nr_slabs":4,"slab_size":1073741824,"reconnects":3,"dirty":0},{"index":1,"state":"up","addr":"10.200.0.3","port":7470,"export":"baz2","size":8589934592,"nr_slabs":8,"slab_size":1073741824,"reconnects":0,"dirty":0}],"spares":[]}'
lost="rmbd: events lost: the receive buffer was full; rmbd dev show has the current state"

log_reset
expect 0 "$events_text" "$lost" "$FAKE" monitor count 11
expect 0 "$(echo "$events_text" | head -n 3)" "" "$FAKE" monitor all count 3
expect 0 "$events_json" "$lost" "$FAKE" -j monitor count 11
expect 0 "$(echo "$events_text" | grep '^dev' | head -n 2 | \
	sed 's/$/ size 1073741824 queues 2 poll_queues 0 depth 128 reconnect_delay 2 loss_timeout 60 reconnects 0 host rmbd:uuid:0a slab_size 67108864/')" \
	"" "$FAKE" -d monitor dev count 2
expect 0 "$(echo "$events_text" | grep '^session')" "$lost" \
	"$FAKE" monitor session count 3
expect 0 '{
    "type": "session",
    "event": "up",
    "id": "3f2a9c0d1b2e4f60",
    "peer": "10.200.0.1:41234",
    "export": "foo",
    "host": "nqn.2014-08.org.nvmexpress:uuid:0b",
    "auth": true,
    "read_only": false
}' "" "$FAKE" -p monitor s c 1
# -d: read_only in the text of a read-only device's event (the fifth).
expect 0 "$(echo "$events_text" | grep '^dev' | head -n 5 | sed \
	-e '1,3s/$/ size 1073741824 queues 2 poll_queues 0 depth 128 reconnect_delay 2 loss_timeout 60 reconnects 0 host rmbd:uuid:0a slab_size 67108864/' \
	-e '4s/$/ size 1073741824 queues 2 poll_queues 0 depth 128 reconnect_delay 2 loss_timeout 60 reconnects 1 host rmbd:uuid:0a slab_size 67108864/' \
	-e '5s/$/ size 8388608 queues 1 poll_queues 1 depth 16 reconnect_delay 2 loss_timeout 0 reconnects 0 read_only slab_size 2097152/')" \
	"$lost" "$FAKE" -d monitor dev count 5
log_is "open
events_subscribe 3
open
events_subscribe 3
open
events_subscribe 3
open
events_subscribe 1
open
events_subscribe 2
open
events_subscribe 2
open
events_subscribe 1" "monitor subscribes to dev 1, session 2, all 3"
# -h: the sizes of -d in binary units.
expect 0 "$(echo "$events_text" | grep '^dev' | head -n 1) size 1G queues 2 poll_queues 0 depth 128 reconnect_delay 2 loss_timeout 60 reconnects 0 host rmbd:uuid:0a slab_size 64M" \
	"" "$FAKE" -h -d monitor dev count 1

# A pool (rmbd7, which dev show finds but does not list): its legs and,
# with -d, where its extents lie.
pool_details="rmbd7: size 1610612736 state live addr 10.200.0.1 port 7470 export p0 queues 2 poll_queues 0 depth 128 reconnect_delay 2 loss_timeout 60 reconnects 0 host rmbd:uuid:default slab_size 67108864 layout pool copies 2 legs 3
    leg 0 state up addr 10.200.0.1 port 7470 export p0 size 1610612736 nr_slabs 24 slab_size 67108864 reconnects 0
    leg 1 state up addr 10.201.0.1 port 7470 export p1 size 1610612736 nr_slabs 24 slab_size 67108864 reconnects 0
    leg 2 state up addr 10.202.0.1 port 7470 export p2 size 1610612736 nr_slabs 24 slab_size 67108864 reconnects 0
    placement: extent_size 67108864 extents 24 period 3 period_leg_bytes 134217728
      extent 0 start 0 leg 0 offset 0 leg 1 offset 0
      extent 1 start 67108864 leg 2 offset 0 leg 0 offset 67108864
      extent 2 start 134217728 leg 1 offset 67108864 leg 2 offset 67108864"
expect 0 "$pool_details" "" "$FAKE" -d dev show rmbd7
expect 0 "$(echo "$pool_details" | head -n 1 | sed 's/ poll_queues 0//; s/ reconnect_delay 2 loss_timeout 60 reconnects 0//; s/ slab_size 67108864//')" \
	"" "$FAKE" dev show rmbd7

# Text and JSON name a field alike: in every line of text, each word but
# the first (the kind of object: export, leg, dev, ...) that is not one
# of the JSON's values is one of its keys.  "authenticating" is a
# session's up false.
same_keys() {
	local text keys vals w bad=""
	text=$("$FAKE" "$@" 2>/dev/null | sed 's/^ *[^ ]* *//')
	keys=$("$FAKE" -j "$@" 2>/dev/null | jq -rn '[inputs | .. | objects | keys[]] | unique[]')
	vals=$("$FAKE" -j "$@" 2>/dev/null | jq -rn '[inputs | .. | strings] | unique[]')
	for w in $(echo "$text" | tr ' ' '\n' | grep -xE '[a-z_]+' | sort -u); do
		if ! grep -qxF -- "$w" <<<"$keys" &&
		   ! grep -qxF -- "$w" <<<"$vals" &&
		   [ "$w" != authenticating ]; then
			bad+=" $w"
		fi
	done
	if [ -n "$text" ] && [ -n "$keys" ] && [ -z "$bad" ]; then
		pass "text keys are JSON keys: $*"
	else
		fail "text keys are JSON keys: $*"
		echo "# text only:$bad"
	fi
}
same_keys export
same_keys -d export
same_keys listener
same_keys dev
same_keys -d dev
same_keys -d dev show rmbd7
same_keys monitor count 11
same_keys -d monitor count 11
same_keys -s dev
same_keys -s -d dev
same_keys -s -d export

# -t[imestamp]: each event stamped with the local time it came, as RFC
# 3339 with microseconds: first in text, in brackets; the first key in
# JSON.  Other commands take no stamp.
ts_re='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}'
# stamps_ok FILE ZONE BEFORE AFTER: each stamp in ZONE, within the run.
stamps_ok() {
	local t s
	while read -r t; do
		[[ $t =~ ^${ts_re}$2$ ]] || return 1
		s=$(date -u -d "$t" +%s) || return 1
		[ "$s" -ge "$3" ] && [ "$s" -le "$4" ] || return 1
	done <"$1"
}
for o in -t -timestamp --timestamp -ti -tj; do
	before=$(date +%s)
	TZ=UTC "$FAKE" $o monitor count 11 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	after=$(date +%s)
	if [ "$o" = -tj ]; then
		want=$events_json
		jq -r .timestamp "$tmp/out" >"$tmp/stamps"
		firsts=$(jq -r 'keys_unsorted[0]' "$tmp/out" | sort -u)
		got=$(jq -c 'del(.timestamp)' "$tmp/out")
	else
		want=$events_text
		sed -E 's/^\[([^]]*)\] .*/\1/' "$tmp/out" >"$tmp/stamps"
		firsts=timestamp
		got=$(sed -E "s/^\[$ts_re\+00:00\] //" "$tmp/out")
	fi
	if [ "$rc" = 0 ] && [ "$got" = "$want" ] &&
	   [ "$(wc -l <"$tmp/stamps")" = 11 ] && [ "$firsts" = timestamp ] &&
	   stamps_ok "$tmp/stamps" '\+00:00' "$before" "$((after + 1))"; then
		pass "monitor $o: each event stamped, first"
	else
		fail "monitor $o: each event stamped, first"
		sed 's/^/# /' "$tmp/out" "$tmp/err"
	fi
done
# The zone's offset, also of half hours, as +hh:mm.
for zone in "IST-5:30 +05:30" "NST+3:30 -03:30"; do
	TZ=${zone% *} "$FAKE" -t monitor count 1 >"$tmp/out"
	sed -E 's/^\[([^]]*)\] .*/\1/' "$tmp/out" >"$tmp/stamps"
	if stamps_ok "$tmp/stamps" "\\${zone#* }" 0 "$(( $(date +%s) + 1 ))"; then
		pass "monitor -t: offset ${zone#* } in TZ=${zone% *}"
	else
		fail "monitor -t: offset ${zone#* } in TZ=${zone% *}"
		sed 's/^/# /' "$tmp/out"
	fi
done
expect 0 "$listeners_text" "" "$FAKE" -t listener
expect 0 "$listeners_json" "" "$FAKE" -tj listener

# A family whose module is missing is skipped; none: exit 1.
export RMBD_FAKE_MODULES=client
expect 0 "$(echo "$events_text" | grep '^dev' | head -n 2)" "" \
	"$FAKE" monitor count 2
expect 1 "" "rmbd: failed to monitor: kernel module rmbd-target is not loaded (modprobe rmbd-target)" \
	"$FAKE" monitor session
export RMBD_FAKE_MODULES=target
expect 0 "$(echo "$events_text" | grep '^session' | head -n 2)" "$lost" \
	"$FAKE" monitor count 2
expect 1 "" "rmbd: failed to monitor: kernel module rmbd-client is not loaded (modprobe rmbd-client)" \
	"$FAKE" -j monitor dev count 1
export RMBD_FAKE_MODULES=none
expect 1 "" "rmbd: failed to monitor: neither rmbd-client nor rmbd-target is loaded (modprobe -a rmbd-client rmbd-target)" \
	"$FAKE" monitor
unset RMBD_FAKE_MODULES

# monitor_signal SIG: without count, monitor prints each event as it comes
# (stdout is a file, so only a flush gets it there), waits for more, and
# exits 0 on SIG.
monitor_signal() {
	local sig=$1 pid rc i lines=0
	"$FAKE" -j monitor >"$tmp/out" 2>"$tmp/err" </dev/null &
	pid=$!
	for i in $(seq 100); do
		lines=$(wc -l <"$tmp/out")
		[ "$lines" -ge 11 ] && break
		sleep 0.1
	done
	sleep 0.2
	if kill -0 "$pid" 2>/dev/null && [ "$lines" = 11 ]; then
		pass "monitor: 11 events written while it runs"
	else
		fail "monitor: 11 events written while it runs"
		echo "# $lines lines before SIG$sig"
	fi
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = "$events_json" ] &&
	   [ "$(cat "$tmp/err")" = "$lost" ]; then
		pass "monitor: SIG$sig ends it, exit 0"
	else
		fail "monitor: SIG$sig ends it, exit 0"
		echo "# exit $rc"
		sed 's/^/# stderr: /' "$tmp/err"
	fi
}
monitor_signal TERM
monitor_signal INT

# Empty lists: nothing in text, [] in JSON, for every show that lists.
export RMBD_FAKE_EMPTY=1
for args in "export" "export show" "-d export" "listener" "listener show" \
	    "dev" "dev show" "-d dev" "-h dev"; do
	want=""
	[ "$args" = "-d export" ] && want="total mem 0"
	# shellcheck disable=SC2086
	expect 0 "$want" "" "$FAKE" $args
	for o in -j -p "-j -d" "-p -d" "-j -h"; do
		# shellcheck disable=SC2086
		expect 0 "[]" "" "$FAKE" $o $args
	done
done
# Exports without sessions: an empty session_list.
export RMBD_FAKE_EMPTY=sessions
expect 0 "$exports_text"$'\n'"total mem 1082130432" "" "$FAKE" -d export
expect 0 "$(echo "$exports_json" | sed 's/\]}/],"session_list":[]}/g')" "" \
	"$FAKE" -j -d export
expect 0 '[
    {
        "name": "bar.2",
        "size": 8388608,
        "slab_size": 2097152,
        "nr_slabs": 4,
        "sessions": 0,
        "mapped": 0,
        "mem": 8388608,
        "any_host": true,
        "shared": false,
        "read_only": true,
        "hosts": [],
        "auth_hosts": [],
        "session_list": []
    }
]' "" "$FAKE" -p -d export show bar.2
unset RMBD_FAKE_EMPTY

# The real library, without the modules
# (each: the library's message and how to load the module).
hint_target="kernel module rmbd-target is not loaded (modprobe rmbd-target)"
hint_client="kernel module rmbd-client is not loaded (modprobe rmbd-client)"
if [ -d /sys/module/rmbd_target ]; then
	skip "requests without rmbd-target" "rmbd_target is loaded"
else
	expect 1 "" "rmbd: failed to list exports: $hint_target" \
		"$RMBD" export show
	expect 1 "" "rmbd: failed to show export: $hint_target" \
		"$RMBD" -d export show foo
	expect 1 "" "rmbd: failed to add export: $hint_target" \
		"$RMBD" -j export add foo size 1G
	expect 1 "" "rmbd: failed to delete export: $hint_target" \
		"$RMBD" export del foo
	expect 1 "" "rmbd: failed to add host: $hint_target" \
		"$RMBD" export host add foo h
	expect 1 "" "rmbd: failed to list listeners: $hint_target" \
		"$RMBD" listener
	expect 1 "" "rmbd: failed to add listener: $hint_target" \
		"$RMBD" listener add 10.0.0.1
	expect 1 "" "rmbd: failed to monitor: $hint_target" \
		"$RMBD" monitor session count 1
fi
if [ -d /sys/module/rmbd_client ]; then
	skip "requests without rmbd-client" "rmbd_client is loaded"
else
	expect 1 "" "rmbd: failed to list devices: $hint_client" "$RMBD" dev
	expect 1 "" "rmbd: failed to show device: $hint_client" \
		"$RMBD" dev show rmbd0
	expect 1 "" "rmbd: failed to disconnect device: $hint_client" \
		"$RMBD" dev disconnect rmbd0
	echo h1 >"$tmp/hostid"
	expect 1 "" "rmbd: failed to connect device: $hint_client" \
		env RMBD_HOSTID_FILE="$tmp/hostid" \
		"$RMBD" dev connect addr 10.0.0.1 export foo
	expect 1 "" "rmbd: failed to monitor: $hint_client" \
		"$RMBD" monitor dev count 1
fi
# Another thing not found is no module: its errno is told.
expect 1 "" "rmbd: failed to connect device: No such file or directory: this machine has no host identity: write one to /etc/rmbd/hostid" \
	env RMBD_HOSTID_FILE=/nonexistent RMBD_MACHINE_ID_FILE=/nonexistent \
	"$RMBD" dev connect addr 10.0.0.1 export foo
if [ -d /sys/module/rmbd_client ] || [ -d /sys/module/rmbd_target ]; then
	skip "monitor without either module" "one is loaded"
else
	expect 1 "" "rmbd: failed to monitor: neither rmbd-client nor rmbd-target is loaded (modprobe -a rmbd-client rmbd-target)" \
		"$RMBD" -j monitor
fi

tap_end
