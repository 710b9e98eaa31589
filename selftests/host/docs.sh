#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# TAP test that the documentation keeps the CLI's and the kernel's word:
#  - every keyword and option of each object's help is in the SYNOPSIS of
#    its man page (and rmbd help's in rmbd(8)'s);
#  - rmbd(8) and the admin guide give each object's default command;
#  - modules are loaded with modprobe, insmod only from the build tree;
#  - rmbd-export(8) and the admin guide give the kernel's limits of an
#    export, as kmod/common/proto.h has them;
#  - rmbd-monitor(8) says the events need CAP_NET_ADMIN, as the kernel's
#    groups do.

here=$(cd "$(dirname "$0")" && pwd)
top=$here/../..
RMBD=${RMBD:-$top/tools/rmbd}
man=$top/Documentation/man
guide=$top/Documentation/admin-guide.rst

# shellcheck source=tap.sh
. "$here/tap.sh"

# render PAGE: the man page as text, one line per paragraph.
render() {
	MANWIDTH=10000 MAN_KEEP_FORMATTING=0 man -l "$1" 2>/dev/null |
		col -b 2>/dev/null
}

# usage OBJECT: the words of its help's usage lines, Usage: to the first
# line that is neither indented nor a usage line; of rmbd help, its
# objects and options too.
usage_words() {
	local prog='/^Usage:/ { u = 1 } u && /^(Usage:|[[:space:]])/ { print; next } { u = 0 }'

	[ -z "$1" ] && prog='/option is/ { exit } { print }'
	# shellcheck disable=SC2086
	"$RMBD" $1 help | awk "$prog" |
		tr ' ' '\n' | grep -E '^(-[a-zA-Z]+(\[[a-z]+\])?|[a-z][a-z_-]*)$' |
		grep -vxE "rmbd|where" | sort -u
}

if ! command -v man >/dev/null || [ -z "$(render "$man/rmbd.8")" ]; then
	echo "1..1"
	skip "man pages" "no man to render them"
	exit 0
fi

# Keywords of the help in the SYNOPSIS
for obj in "" export listener dev monitor host secret config; do
	page=$man/rmbd${obj:+-$obj}.8
	syn=$(render "$page" | sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' |
		tr ' ' '\n')
	missing=""
	for w in $(usage_words "$obj"); do
		grep -qxF -- "$w" <<<"$syn" || missing+=" $w"
	done
	if [ -n "$(usage_words "$obj")" ] && [ -z "$missing" ]; then
		pass "rmbd ${obj:-(no object)} help: its words are in the SYNOPSIS of $(basename "$page")"
	else
		fail "rmbd ${obj:-(no object)} help: its words are in the SYNOPSIS of $(basename "$page")"
		echo "# not in the SYNOPSIS:$missing"
	fi
done

# Each object's default command
text=$(render "$man/rmbd.8" | tr -s ' \n' ' ')
gtext=$(tr -s ' \n' ' ' <"$guide")
for want in "show for export, listener, dev and host" "all for monitor" \
	    "generate for secret"; do
	case $text in
	*"$want"*) pass "rmbd.8: $want" ;;
	*) fail "rmbd.8: $want" ;;
	esac
	g=${want//export, listener, dev and host/\`\`export\`\`, \`\`listener\`\`, \`\`dev\`\` and \`\`host\`\`}
	g=${g/show/\`\`show\`\`}
	g=${g/all/\`\`all\`\`}
	g=${g/generate/\`\`generate\`\`}
	g=${g/ monitor/ \`\`monitor\`\`}
	g=${g/ secret/ \`\`secret\`\`}
	case $gtext in
	*"$g"*) pass "admin-guide: $want" ;;
	*) fail "admin-guide: $want"; echo "# want: $g" ;;
	esac
done
case $text in
*"show is the default command of every"*) fail "rmbd.8: no object's default but show" ;;
*) pass "rmbd.8: no object's default but show" ;;
esac

# modprobe, as make install installs the modules; insmod from the tree
for f in "$man/rmbd.8" "$guide"; do
	for m in rmbd-target rmbd-client; do
		if grep -q "modprobe $m" "$f"; then
			pass "$(basename "$f") loads $m with modprobe"
		else
			fail "$(basename "$f") loads $m with modprobe"
		fi
	done
done
# Each insmod of the guide is of the build tree, which the text names.
bad=$(grep -n 'insmod' "$guide" | grep -v 'insmod kmod/rmbd-\(target\|client\)\.ko')
if [ -z "$bad" ] && grep -q 'From the build tree' "$guide"; then
	pass "admin-guide: insmod only of the build tree's modules"
else
	fail "admin-guide: insmod only of the build tree's modules"
	echo "# $bad"
fi

# The limits of an export, from the kernel's own header
proto=$top/kmod/common/proto.h
slabs=$(sed -n 's/^#define RMBD_MAX_SLABS[[:space:]]*(1U << \([0-9]*\))$/\1/p' "$proto")
size=$(sed -n 's/^#define RMBD_MAX_EXPORT_SIZE[[:space:]]*(1ULL << \([0-9]*\))$/\1/p' "$proto")
etext=$(render "$man/rmbd-export.8" | tr -s ' \n' ' ')
if [ "$slabs" = 20 ] && [ "$size" = 50 ]; then
	pass "kmod: 2^20 slabs, 2^50 bytes (1 PiB) an export at most"
else
	fail "kmod: 2^$slabs slabs, 2^$size bytes an export at most; the pages say 2^20 and 2^50"
fi
for want in "at most 1 PiB (2^$size bytes)" "in at most $((1 << slabs)) (2^$slabs) slabs" \
	    "too many slabs for this size: use a larger slab size"; do
	case $etext in
	*"$want"*) pass "rmbd-export.8: $want" ;;
	*) fail "rmbd-export.8: $want" ;;
	esac
done
case $gtext in
*"at most 1 PiB, in at most 2^$slabs ($((1 << slabs))) slabs"*)
	pass "admin-guide: 1 PiB, 2^$slabs slabs" ;;
*) fail "admin-guide: 1 PiB, 2^$slabs slabs" ;;
esac

# Events need CAP_NET_ADMIN: the kernel's groups say so, and the page
groups=$(grep -c 'MCGRP_EVENTS, .flags = GENL_MCAST_CAP_NET_ADMIN' \
	"$top/kmod/client/netlink.c" "$top/kmod/target/netlink.c" |
	grep -c ':1$')
mtext=$(render "$man/rmbd-monitor.8" | tr -s ' \n' ' ')
if [ "$groups" = 2 ] || ! grep -q GENL_MCAST "$top"/kmod/*/netlink.c; then
	case $mtext in
	*"Joining the groups needs the CAP_NET_ADMIN capability"*)
		pass "rmbd-monitor.8: CAP_NET_ADMIN" ;;
	*) fail "rmbd-monitor.8: CAP_NET_ADMIN" ;;
	esac
else
	fail "kmod: an events group without GENL_MCAST_CAP_NET_ADMIN ($groups of 2)"
fi

tap_end
