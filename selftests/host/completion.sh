#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# TAP test of the bash completion of rmbd (tools/completion/rmbd): it is
# sourced, COMP_WORDS and COMP_CWORD (or COMP_LINE and COMP_POINT) are
# set as bash sets them, _rmbd is called and COMPREPLY checked.  Export
# names come from rmbd-fake (the command being completed), device names
# from a stand-in for /sys.  Then tools' make install and uninstall.

here=$(cd "$(dirname "$0")" && pwd)
top=$here/../..
FAKE=${RMBD_FAKE:-$here/rmbd-fake}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tap.sh
. "$here/tap.sh"

if [ ! -x "$FAKE" ]; then
	echo "Bail out! $FAKE not built"
	exit 1
fi

# shellcheck source=../../tools/completion/rmbd
. "$top/tools/completion/rmbd"

if complete -p rmbd 2>/dev/null | grep -q -- '-F _rmbd rmbd$'; then
	pass "complete -F _rmbd rmbd"
else
	fail "complete -F _rmbd rmbd"
fi

# got: COMPREPLY, one word a line, sorted.
got() {
	[ ${#COMPREPLY[@]} -gt 0 ] && printf '%s\n' "${COMPREPLY[@]}" | sort
}

# comp "WANT" WORD...: completing the last WORD (the command first).
comp() {
	local want
	want=$(echo "$1" | tr ' ' '\n' | sed '/^$/d' | sort)
	shift
	unset COMP_LINE COMP_POINT
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	_rmbd
	if [ "$(got)" = "$want" ]; then
		pass "${*:2} -> ${want//$'\n'/ }"
	else
		fail "${*:2} -> ${want//$'\n'/ }"
		echo "# got: $(got | tr '\n' ' ')"
	fi
}

# comp_line "WANT" LINE: as bash calls it, with the line to the cursor.
comp_line() {
	local want
	want=$(echo "$1" | tr ' ' '\n' | sed '/^$/d' | sort)
	COMP_LINE=$2
	COMP_POINT=${#2}
	# What bash would split, at its COMP_WORDBREAKS; _rmbd ignores it
	read -ra COMP_WORDS <<<"${2//:/ : }"
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_rmbd
	if [ "$(got)" = "$want" ]; then
		pass "line '$2' -> ${want//$'\n'/ }"
	else
		fail "line '$2' -> ${want//$'\n'/ }"
		echo "# got: $(got | tr '\n' ' ')"
	fi
}

objects="export listener dev monitor host secret config help"
# Options, objects
comp "$objects" rmbd ""
comp "dev" rmbd d
opts="json pretty details stats human timestamp version help"
comp "$(for o in $opts; do echo "-$o --$o"; done)" rmbd -j -
comp "-details" rmbd -de
comp "--json" rmbd --j
comp "--help --human" rmbd --h
comp "$objects" rmbd -j -d ""
comp "$objects" rmbd -- ""
comp "export listener dev monitor host secret config" rmbd help ""
comp "" rmbd help dev ""

# Commands of each object, abbreviated objects too
comp "show add del host help" rmbd export ""
comp "show add del help" rmbd l ""
comp "show connect disconnect replace help" rmbd -j dev ""
comp "connect" rmbd d con
comp "all dev session count help" rmbd monitor ""
comp "show help" rmbd host ""
comp "generate help" rmbd secret ""
comp "apply check remove help" rmbd config ""
comp "config" rmbd co
comp "check" rmbd -j config ch
comp "apply" rmbd c a

# Keywords, each once (spare, addr, export and port again: a leg each)
comp "size slab hosts any_host shared read_only" rmbd export add foo ""
comp "slab hosts any_host read_only" rmbd export add foo size 1G sh ""
comp "" rmbd export add foo size ""
comp "" rmbd export add foo hosts ""
comp "port max_sessions" rmbd listener add 10.0.0.1 ""
comp "max_sessions" rmbd listener add 10.0.0.1 port 7 ""
comp "port" rmbd listener del 10.0.0.1 ""
comp "" rmbd listener del 10.0.0.1 port 7 ""
legs="addr export port spare"
once="layout copies queues pollq depth reconnect_delay loss_timeout shared read_only host secret-file"
comp "$legs $once" rmbd dev connect ""
comp "$legs ${once/ shared/}" rmbd dev connect addr 10.0.0.1 export e shared ""
comp "$legs ${once/ queues/}" rmbd d c addr 10.0.0.1 export shared qu 2 ""
comp "" rmbd dev connect addr ""
comp "" rmbd dev connect addr 10.0.0.1 export ""
comp "mirror pool" rmbd dev connect addr 10.0.0.1 export e layout ""
comp "pool" rmbd dev connect addr 10.0.0.1 export e lay p
comp "force" rmbd dev disconnect rmbd0 ""
comp "leg" rmbd dev replace rmbd0 ""
comp "with" rmbd dev replace rmbd0 leg 1 ""
comp "with" rmbd dev replace rmbd0 1 ""
comp "addr export port" rmbd dev replace rmbd0 1 with ""
comp "export port" rmbd dev replace rmbd0 1 with addr 10.0.0.1 ""
comp "count" rmbd monitor dev ""
comp "" rmbd monitor count ""
comp "" rmbd monitor count 3 ""
comp "secret-file" rmbd export host add foo h ""
comp "" rmbd export host del foo h ""
comp "add del" rmbd export host ""
comp "force" rmbd export del foo ""

# Export names: what the rmbd being completed shows
comp "foo bar.2" "$FAKE" export show ""
comp "bar.2" "$FAKE" export del b
comp "foo bar.2" "$FAKE" -j export host add ""
comp "foo" "$FAKE" export host d f
RMBD_FAKE_EMPTY=1 comp "" "$FAKE" export show ""
comp "" "$tmp/no-such-rmbd" export show ""

# Device names, from /sys/block
mkdir -p "$tmp/sys/block/rmbd0" "$tmp/sys/block/rmbd12" "$tmp/sys/block/sda"
export _RMBD_SYSFS=$tmp/sys
comp "rmbd0 rmbd12" rmbd dev show ""
comp "rmbd12" rmbd dev disconnect rmbd1
comp "rmbd0 rmbd12" rmbd dev replace ""
_RMBD_SYSFS=$tmp/none comp "" rmbd dev show ""
unset _RMBD_SYSFS

# Files, after secret-file and for secret generate
touch "$tmp/s.secret"
comp "$tmp/s.secret" rmbd dev connect addr 10.0.0.1 export e sec "$tmp/s."
comp "$tmp/s.secret" rmbd export host add foo h secret-file "$tmp/s.s"
comp "$tmp/s.secret" rmbd secret generate "$tmp/s."

# config: FILE, then wait after apply's FILE, and nothing else
touch "$tmp/t.conf"
comp "$tmp/t.conf" rmbd config apply "$tmp/t."
comp "$tmp/t.conf" rmbd config check "$tmp/t"
comp "$tmp/t.conf" rmbd -j config remove "$tmp/t.c"
comp "$tmp/t.conf" rmbd c ap "$tmp/t."
comp "wait" rmbd config apply "$tmp/t.conf" ""
comp "wait" rmbd config apply "$tmp/t.conf" w
comp "" rmbd config apply "$tmp/t.conf" wait ""
comp "" rmbd config apply "$tmp/t.conf" wait 90 ""
comp "" rmbd config check "$tmp/t.conf" ""
comp "" rmbd config remove "$tmp/t.conf" ""
comp "" rmbd config help ""
comp_line "wait" "rmbd config apply $tmp/t.conf "

# The line as typed: addresses and hosts with colons are one word each.
comp_line "secret-file" "rmbd export host add foo rmbd:uuid:0a "
comp_line "export port" "rmbd dev replace rmbd0 1 with addr fe80::1%lo "
comp_line "" "rmbd dev connect addr fe80::"
comp_line "count" "rmbd -j monitor  c"
comp_line "$objects" "rmbd "

# make install and uninstall: to share/bash-completion/completions/rmbd
f=usr/share/bash-completion/completions/rmbd
if make -s -C "$top/tools" install DESTDIR="$tmp/root" PREFIX=/usr \
	>"$tmp/out" 2>&1 && cmp -s "$tmp/root/$f" "$top/tools/completion/rmbd"; then
	pass "make install puts the completion in /$f"
else
	fail "make install puts the completion in /$f"
	sed 's/^/# /' "$tmp/out"
fi
if make -s -C "$top/tools" uninstall DESTDIR="$tmp/root" PREFIX=/usr \
	>"$tmp/out" 2>&1 && [ ! -e "$tmp/root/$f" ] &&
   [ -z "$(find "$tmp/root" -type f)" ]; then
	pass "make uninstall removes it, and every file of tools"
else
	fail "make uninstall removes it, and every file of tools"
	find "$tmp/root" -type f | sed 's/^/# left: /'
fi

tap_end
