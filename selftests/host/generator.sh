#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# TAP test of tools/systemd:
#  - rmbd-swap-generator on test fstab files ($SYSTEMD_FSTAB) into a
#    scratch directory: the drop-ins' paths and exact contents for swap
#    entries with x-systemd.requires=rmbd-dev@NAME.service by UUID=,
#    LABEL= (a space, a slash, UTF-8), PARTUUID=, PARTLABEL=, a /dev path
#    and a swap file, with other options and with two such units; mounts,
#    other units, a missing fstab left alone; bad options reported and
#    ignored, exit 0; exit 1 only when the output cannot be written;
#  - the unit names against systemd-escape, and the device nodes against
#    systemd's own fstab generator, where they are installed;
#  - systemd-analyze verify of the units (@SBINDIR@ the build tree's) and
#    of a swap unit with the generator's drop-in, where it is installed.

here=$(cd "$(dirname "$0")" && pwd)
top=$here/../..
GEN=${RMBD_SWAP_GENERATOR:-$top/tools/systemd/rmbd-swap-generator}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tap.sh
. "$here/tap.sh"

# gen FSTAB_LINES...: the generator on an fstab of those lines into a new
# $tmp/out (the early and late directories must stay unused); $rc is its
# exit code, $tmp/err its stderr.
gen() {
	rm -rf "$tmp/out" "$tmp/early" "$tmp/late"
	mkdir "$tmp/out"
	printf '%s\n' "$@" > "$tmp/fstab"
	SYSTEMD_FSTAB=$tmp/fstab "$GEN" "$tmp/out" "$tmp/early" "$tmp/late" \
		2> "$tmp/err"
	rc=$?
}

# check DESC RC FILES...: exit code $RC, the out directory has exactly
# FILES (the drop-ins of the units named) and nothing else was created.
check() {
	local desc=$1 want_rc=$2 got want
	shift 2
	got=$(cd "$tmp/out" && find . -type f | sed 's|^\./||' | sort)
	want=$(for u in "$@"; do echo "$u.d/50-rmbd.conf"; done | sort)
	if [ "$rc" = "$want_rc" ] && [ "$got" = "$want" ] &&
	   [ ! -e "$tmp/early" ] && [ ! -e "$tmp/late" ]; then
		pass "$desc"
	else
		fail "$desc"
		echo "# exit $rc, want $want_rc"
		diff <(echo "$want") <(echo "$got") | sed 's/^/# files: /'
		sed 's/^/# stderr: /' "$tmp/err"
	fi
}

# swap_conf UNITS...: the swap unit's drop-in; device_conf: the device's.
swap_conf() {
	echo "[Unit]"
	echo "DefaultDependencies=no"
	for u in "$@"; do
		echo "Requires=$u"
		echo "After=$u"
	done
	echo "Conflicts=umount.target"
	echo "Before=umount.target"
}

device_conf() {
	echo "[Unit]"
	for u in "$@"; do
		echo "After=$u"
	done
}

# has UNIT DESC CONF_FUNCTION UNITS...: UNIT's drop-in is exactly that.
has() {
	local unit=$1 desc=$2 fn=$3
	shift 3
	if cmp -s <("$fn" "$@") "$tmp/out/$unit.d/50-rmbd.conf"; then
		pass "$desc"
	else
		fail "$desc"
		diff <("$fn" "$@") "$tmp/out/$unit.d/50-rmbd.conf" 2>&1 |
			sed 's/^/# /'
	fi
}

# stderr_is DESC LINES...: the generator's stderr, exactly.
stderr_is() {
	local desc=$1
	shift
	if cmp -s <(if [ $# -gt 0 ]; then printf '%s\n' "$@"; fi) "$tmp/err"; then
		pass "$desc"
	else
		fail "$desc"
		diff <(if [ $# -gt 0 ]; then printf '%s\n' "$@"; fi) "$tmp/err" |
			sed 's/^/# /'
	fi
}

if [ ! -x "$GEN" ]; then
	fail "$GEN is not built (make -C tools/systemd)"
	tap_end
	exit
fi

R=rmbd-dev@swap0.service
P="rmbd-swap-generator: $tmp/fstab"

# Each case: the fstab source, its device node as systemd names it, and
# the unit name of that (checked against systemd-escape below).
uuid=0a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d
uuid_node=/dev/disk/by-uuid/$uuid
uuid_unit='dev-disk-by\x2duuid-0a1b2c3d\x2d4e5f\x2d4a6b\x2d8c7d\x2d0e1f2a3b4c5d'
label_node='/dev/disk/by-label/rmbd\x20swap'
label_unit='dev-disk-by\x2dlabel-rmbd\x5cx20swap'
slash_node='/dev/disk/by-label/a\x2fb'
slash_unit='dev-disk-by\x2dlabel-a\x5cx2fb'
utf8_node=$(printf '/dev/disk/by-label/\xc3\xa9t\\xff')
utf8_unit='dev-disk-by\x2dlabel-\xc3\xa9t\x5cxff'
partuuid=7d3f1c2e-01
partuuid_node=/dev/disk/by-partuuid/$partuuid
partuuid_unit='dev-disk-by\x2dpartuuid-7d3f1c2e\x2d01'
partlabel_node=/dev/disk/by-partlabel/rmbd_swap
partlabel_unit='dev-disk-by\x2dpartlabel-rmbd_swap'
dev_node=/dev/rmbd0
dev_unit=dev-rmbd0
file_node=/.swapfile
file_unit='\x2eswapfile'

# ---- swap entries the generator orders after their rmbd-dev@ units ----

gen "UUID=$uuid none swap sw,pri=5,x-systemd.requires=$R,nofail 0 0"
check "UUID=: a swap and a device drop-in" 0 "$uuid_unit.swap" \
	"$uuid_unit.device"
has "$uuid_unit.swap" "UUID=: the swap unit's drop-in" swap_conf "$R"
has "$uuid_unit.device" "UUID=: the device unit's drop-in" device_conf "$R"
stderr_is "UUID=: nothing on stderr"

gen "# a comment" "" \
	'LABEL=rmbd\040swap none swap defaults,x-systemd.requires=rmbd-dev@a.service,discard,x-systemd.requires=rmbd-dev@b.service 0 0'
check "LABEL= with a space, two rmbd-dev@ units" 0 "$label_unit.swap" \
	"$label_unit.device"
has "$label_unit.swap" "two units: the swap unit requires and comes after both" \
	swap_conf rmbd-dev@a.service rmbd-dev@b.service
has "$label_unit.device" "two units: the device unit comes after both" \
	device_conf rmbd-dev@a.service rmbd-dev@b.service
stderr_is "LABEL=: nothing on stderr"

gen "LABEL=\"a/b\" none swap x-systemd.requires=$R 0 0" \
	"LABEL=$(printf '\xc3\xa9t\xff') none swap x-systemd.requires=$R 0 0"
check "LABEL= quoted with a slash, and UTF-8 and a stray byte" 0 \
	"$slash_unit.swap" "$slash_unit.device" \
	"$utf8_unit.swap" "$utf8_unit.device"

gen "PARTUUID=$partuuid none swap x-systemd.requires=$R 0 0" \
	"PARTLABEL=rmbd_swap none swap x-systemd.requires=$R 0 0"
check "PARTUUID= and PARTLABEL=" 0 "$partuuid_unit.swap" \
	"$partuuid_unit.device" "$partlabel_unit.swap" \
	"$partlabel_unit.device"
has "$partuuid_unit.swap" "PARTUUID=: the swap unit's drop-in" swap_conf "$R"

gen "$dev_node none swap x-systemd.requires=$R,x-systemd.requires=$R 0 0" \
	"//dev//./rmbd0/ none swap x-systemd.requires=rmbd-dev@other.service 0 0"
check "/dev path: drop-ins; the same unit again is reported" 0 \
	"$dev_unit.swap" "$dev_unit.device"
has "$dev_unit.swap" "/dev path: a unit named twice comes once" swap_conf "$R"
stderr_is "/dev path: the second entry of dev-rmbd0.swap is reported" \
	"$P: //dev//./rmbd0/: dev-rmbd0.swap: in an earlier entry already, ignored"

gen "//dev//./rmbd3/ none swap x-systemd.requires=$R 0 0"
check "a /dev path not simplified: named as simplified" 0 \
	dev-rmbd3.swap dev-rmbd3.device

gen "$file_node none swap x-systemd.requires=$R 0 0"
check "a swap file: its swap unit only (a file binds to no device)" 0 \
	"$file_unit.swap"
has "$file_unit.swap" "a swap file: the swap unit's drop-in" swap_conf "$R"

# ---- entries left alone -----------------------------------------------

gen "/dev/rmbd0 /mnt ext4 _netdev,x-systemd.requires=$R 0 2" \
	"UUID=$uuid /srv xfs x-systemd.requires=$R 0 0" \
	"/dev/rmbd1 none swap sw 0 0" \
	"/dev/rmbd2 none swap x-systemd.requires-mounts-for=/srv 0 0"
check "mounts with x-systemd.requires, swap without: nothing written" 0
stderr_is "mounts and plain swap: nothing on stderr"

gen "/dev/rmbd0 none swap x-systemd.requires=foo.service 0 0"
check "a swap entry requiring another unit: nothing written" 0
stderr_is "another unit: reported as ignored" \
	"$P: /dev/rmbd0: x-systemd.requires=foo.service: not an rmbd-dev@ unit, ignored"

rm -rf "$tmp/out" "$tmp/early" "$tmp/late"
mkdir "$tmp/out"
SYSTEMD_FSTAB=$tmp/none "$GEN" "$tmp/out" "$tmp/early" "$tmp/late" \
	2> "$tmp/err"
rc=$?
check "a missing fstab: exit 0, nothing written" 0
stderr_is "a missing fstab: nothing on stderr"

# ---- bad options --------------------------------------------------------

gen "/dev/rmbd0 none swap x-systemd.requires=,x-systemd.requires=rmbd-dev@.service,x-systemd.requires=rmbd-dev@a/b.service,x-systemd.requires=rmbd-dev@c,x-systemd.requires=rmbd-dev@ok.service 0 0" \
	"/dev/rmbd1 none swap x-systemd.requires=rmbd-dev@x*y.service 0 0"
check "malformed units ignored, the valid one kept, exit 0" 0 \
	"$dev_unit.swap" "$dev_unit.device"
has "$dev_unit.swap" "malformed units: the swap drop-in has the valid one" \
	swap_conf rmbd-dev@ok.service
stderr_is "malformed units: each reported" \
	"$P: /dev/rmbd0: x-systemd.requires= is empty: ignored" \
	"$P: /dev/rmbd0: x-systemd.requires=rmbd-dev@.service: not a valid rmbd-dev@NAME.service name, ignored" \
	"$P: /dev/rmbd0: x-systemd.requires=rmbd-dev@a/b.service: not a valid rmbd-dev@NAME.service name, ignored" \
	"$P: /dev/rmbd0: x-systemd.requires=rmbd-dev@c: not a valid rmbd-dev@NAME.service name, ignored" \
	"$P: /dev/rmbd1: x-systemd.requires=rmbd-dev@x*y.service: not a valid rmbd-dev@NAME.service name, ignored"

gen "/dev/../rmbd0 none swap x-systemd.requires=$R 0 0" \
	"/dev/$(printf 'x%.0s' {1..300}) none swap x-systemd.requires=$R 0 0"
check "paths without a unit name: nothing written, exit 0" 0
stderr_is "paths without a unit name: reported" \
	"$P: /dev/../rmbd0: /dev/../rmbd0: no unit name (not a normalized path), ignored" \
	"$P: /dev/$(printf 'x%.0s' {1..300}): /dev/$(printf 'x%.0s' {1..300}): no unit name (too long), ignored"

# An output directory that is a file: exit 1.
printf '%s\n' "/dev/rmbd0 none swap x-systemd.requires=$R 0 0" > "$tmp/fstab"
: > "$tmp/file"
SYSTEMD_FSTAB=$tmp/fstab "$GEN" "$tmp/file" "$tmp/early" "$tmp/late" \
	2> "$tmp/err"
rc=$?
if [ "$rc" = 1 ] && grep -q "^rmbd-swap-generator: cannot create $tmp/file/dev-rmbd0.swap.d: " "$tmp/err"; then
	pass "an output directory that cannot be written: exit 1, reported"
else
	fail "an output directory that cannot be written: exit 1, reported"
	echo "# exit $rc"
	sed 's/^/# stderr: /' "$tmp/err"
fi

"$GEN" > /dev/null 2>&1
rc=$?
if [ "$rc" = 1 ]; then
	pass "no directory: usage, exit 1"
else
	fail "no directory: usage, exit 1 (exit $rc)"
fi

# ---- unit names and device nodes as systemd makes them -----------------

nodes=("$uuid_node" "$label_node" "$slash_node" "$utf8_node"
       "$partuuid_node" "$partlabel_node" "$dev_node" "$file_node")
units=("$uuid_unit" "$label_unit" "$slash_unit" "$utf8_unit"
       "$partuuid_unit" "$partlabel_unit" "$dev_unit" "$file_unit")
if command -v systemd-escape > /dev/null; then
	bad=
	for i in "${!nodes[@]}"; do
		for s in swap device; do
			got=$(systemd-escape --path --suffix=$s "${nodes[$i]}")
			[ "$got" = "${units[$i]}.$s" ] ||
				bad+=" ${nodes[$i]}: $got, not ${units[$i]}.$s;"
		done
	done
	if [ -z "$bad" ]; then
		pass "unit names as systemd-escape --path makes them"
	else
		fail "unit names as systemd-escape --path makes them"
		echo "#$bad"
	fi
else
	skip "unit names as systemd-escape --path makes them" \
		"no systemd-escape"
fi

# systemd's fstab generator says (at debug level) which device node each
# entry names, even where it then ignores swap (in a container).
fstab_gen=
for d in /usr/lib/systemd/system-generators /lib/systemd/system-generators; do
	if [ -x "$d/systemd-fstab-generator" ]; then
		fstab_gen=$d/systemd-fstab-generator
		break
	fi
done
sources=("UUID=$uuid" 'LABEL=rmbd\040swap' 'LABEL="a/b"'
	 "LABEL=$(printf '\xc3\xa9t\xff')" "PARTUUID=$partuuid"
	 "PARTLABEL=rmbd_swap" "$dev_node" "$file_node")
printf '%s none swap sw 0 0\n' "${sources[@]}" > "$tmp/fstab"
mkdir -p "$tmp/sd"
: > "$tmp/what"
if [ -n "$fstab_gen" ]; then
	SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_TARGET=console \
		SYSTEMD_PROC_CMDLINE='' SYSTEMD_FSTAB=$tmp/fstab \
		"$fstab_gen" "$tmp/sd" "$tmp/sd" "$tmp/sd" 2>&1 |
		sed -n 's/^Found entry what=\(.*\) where=none type=swap.*/\1/p' \
		> "$tmp/what"
fi
# With /sys read-only it skips device entries before it reports them.
if [ "$(wc -l < "$tmp/what")" = "${#sources[@]}" ]; then
	if cmp -s <(printf '%s\n' "${nodes[@]}") "$tmp/what"; then
		pass "device nodes as systemd's fstab generator names them"
	else
		fail "device nodes as systemd's fstab generator names them"
		diff <(printf '%s\n' "${nodes[@]}") "$tmp/what" | sed 's/^/# /'
	fi
else
	skip "device nodes as systemd's fstab generator names them" \
		"no systemd-fstab-generator that reports every entry"
fi

# ---- the units ----------------------------------------------------------

if command -v systemd-analyze > /dev/null; then
	mkdir -p "$tmp/units"
	for f in "$top"/tools/systemd/*.service.in; do
		u=$(basename "$f" .in)
		sed "s|@SBINDIR@|$top/tools|g" "$f" > "$tmp/units/$u"
	done
	grep -h '@[A-Z]*@' "$tmp/units"/* | sed 's/^/# left: /'
	ln -s rmbd-dev@.service "$tmp/units/rmbd-dev@test.service"
	# A swap unit as systemd's fstab generator writes it, with the
	# drop-in of this generator.
	printf '[Swap]\nWhat=/dev/rmbd0\n' > "$tmp/units/dev-rmbd0.swap"
	gen "/dev/rmbd0 none swap x-systemd.requires=rmbd-dev@test.service 0 0"
	cp -R "$tmp/out/dev-rmbd0.swap.d" "$tmp/units/"
	for u in rmbd-target.service rmbd-dev@.service \
		 rmbd-dev@test.service dev-rmbd0.swap; do
		if (cd "$tmp/units" &&
		    systemd-analyze verify --man=no "$tmp/units/$u") \
			> "$tmp/verify" 2>&1 && [ ! -s "$tmp/verify" ]; then
			pass "systemd-analyze verify $u"
		else
			fail "systemd-analyze verify $u"
			sed 's/^/# /' "$tmp/verify"
		fi
	done
else
	for u in rmbd-target.service rmbd-dev@.service \
		 rmbd-dev@test.service dev-rmbd0.swap; do
		skip "systemd-analyze verify $u" "no systemd-analyze"
	done
fi

tap_end
