#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installed as an administrator installs it.  On the host (35-install.setup)
# make install into a scratch root and make dkms-install plus dkms install
# into scratch trees; here:
# - make install put each file where it belongs: modules under
#   /lib/modules/KVER/updates/rmbd, librmbd (shared, static, header,
#   pkg-config file), the CLI, its man pages and bash completion, the
#   udev rule, the systemd units and swap generator;
# - a program built with pkg-config's flags for the installed librmbd
#   compiles, links against the shared library and runs;
# - the installed CLI reports the version of ../VERSION;
# - depmod indexes the installed modules (and then DKMS's) and modprobe
#   loads them by name with what they need (their srcversion is the file's, their
#   version VERSION), and with them the installed CLI exports memory,
#   connects a device and reads back what it wrote;
# - make uninstall leaves nothing of it, make dkms-uninstall no sources.
# timeout=240
# host-setup=35-install.setup

set -eu
source "$(dirname "$0")/lib.sh"
for t in pkg-config gcc depmod modprobe modinfo make; do
	command -v "$t" > /dev/null || skip "$t not installed"
done
command -v jq > /dev/null || skip "jq not installed"

sdir=${RMBD_SETUP_DIR:?}
if [[ ! -f $sdir/done ]]; then
	grep -q '^SKIP: ' "$sdir/setup.log" 2> /dev/null &&
		skip "$(grep '^SKIP: ' "$sdir/setup.log" | cut -c7-)"
	tail -n 30 "$sdir/setup.log" 2> /dev/null
	fail "the host half (35-install.setup) failed"
fi
kver=$(cat "$sdir/kver")
[[ $kver == "$(uname -r)" ]] || fail "installed for $kver, the VM runs $(uname -r)"
version=$(cat "$RMBD_REPO/VERSION")
root=$sdir/root
dkms=$sdir/dkms
tdev=

cleanup() {
	local cli=$root/usr/sbin/rmbd
	if [[ -x $cli ]]; then
		if [[ -n $tdev ]]; then "$cli" dev disconnect "$tdev" > /dev/null 2>&1 || true; fi
		"$cli" export del inst force > /dev/null 2>&1 || true
		"$cli" listener del "$RMBD_ADDR" > /dev/null 2>&1 || true
	fi
	rmmod rmbd_client rmbd_target 2> /dev/null || true
	rm -rf "$mroot" /tmp/rmbd-install-prog /tmp/rmbd-install-prog.c
	return 0
}
trap cleanup EXIT

# ---- make install's files -----------------------------------------------

want=(
	"lib/modules/$kver/updates/rmbd/kmod/rmbd-client.ko"
	"lib/modules/$kver/updates/rmbd/kmod/rmbd-target.ko"
	usr/include/rmbd/librmbd.h
	usr/include/rmbd/linux/rmbd_client.h
	usr/include/rmbd/linux/rmbd_target.h
	usr/lib/librmbd.a
	"usr/lib/librmbd.so.$version"
	usr/lib/librmbd.so.0
	usr/lib/librmbd.so
	usr/lib/pkgconfig/librmbd.pc
	usr/sbin/rmbd
	usr/share/man/man8/rmbd.8
	usr/share/man/man8/rmbd-dev.8
	usr/share/man/man8/rmbd-export.8
	usr/lib/udev/rules.d/60-rmbd.rules
	usr/lib/systemd/system/rmbd-target.service
	usr/lib/systemd/system/rmbd-dev@.service
	usr/lib/systemd/system-generators/rmbd-swap-generator
	usr/share/bash-completion/completions/rmbd
)
for f in "${want[@]}"; do
	[[ -e $root/$f ]] || fail "make install did not install /$f; it installed: $(cd "$root" && find . -type f | sort | tr '\n' ' ')"
done
log "make install: $(cd "$root" && find . -type f -o -type l | wc -l) files, each expected one there"

# ---- the library, as a program that uses it is built ------------------

cat > /tmp/rmbd-install-prog.c <<'PROG'
#include <stdio.h>
#include <librmbd.h>

int main(void)
{
	char host[256];

	if (rmbd_host_default(host, sizeof(host)) < 0)
		return 1;
	printf("%s %d %d\n", host, rmbd_valid_host(host),
	       rmbd_valid_host("-bad"));
	return 0;
}
PROG
# The install's prefix is /usr inside the scratch root.
pc=(pkg-config "--define-variable=prefix=$root/usr")
export PKG_CONFIG_PATH=$root/usr/lib/pkgconfig
pc_version=$("${pc[@]}" --modversion librmbd) || fail "pkg-config does not find the installed librmbd"
[[ $pc_version == "$version" ]] || fail "librmbd.pc says version $pc_version, VERSION $version"
flags=$("${pc[@]}" --cflags --libs librmbd) || fail "pkg-config --cflags --libs librmbd failed"
[[ $flags == *"-I$root/usr/include/rmbd"* ]] || fail "pkg-config's flags lack the installed header's directory: $flags"
# shellcheck disable=SC2086 # pkg-config's flags, one per word
gcc -o /tmp/rmbd-install-prog /tmp/rmbd-install-prog.c $flags ||
	fail "a program cannot be built with pkg-config's flags for librmbd: $flags"
unset PKG_CONFIG_PATH
out=$(LD_LIBRARY_PATH=$root/usr/lib /tmp/rmbd-install-prog) ||
	fail "the program built against librmbd failed"
[[ $out == "$(rmbd_cli host) 1 0" ]] || fail "the program printed '$out'"
LD_LIBRARY_PATH=$root/usr/lib ldd /tmp/rmbd-install-prog | grep -q "librmbd.so.0 => $root/usr/lib/librmbd.so.0" ||
	fail "the program is not linked with the installed librmbd.so.0: $(LD_LIBRARY_PATH=$root/usr/lib ldd /tmp/rmbd-install-prog)"
log "pkg-config: librmbd $pc_version; a program built with its flags runs ($SECONDS s)"

cli_v=$("$root/usr/sbin/rmbd" -V) || fail "the installed rmbd -V failed"
[[ $(head -n 2 <<< "$cli_v") == "rmbd $version"$'\n'"librmbd $version" ]] ||
	fail "the installed rmbd -V says '$cli_v', VERSION is $version"

# ---- modprobe: the installed modules, then DKMS's ----------------------

# Unload the work tree's modules (the earlier tests loaded them).
rmmod rmbd_client rmbd_target 2> /dev/null || true
rmbd_modules_loaded && fail "the work tree's modules would not unload"

# A module root of the installed modules and those they need from
# /lib/modules/KVER (depmod over the whole tree takes minutes on a 9p
# root under TCG); depmod, then modprobe -d loads them by name, with
# their dependencies, as from /lib/modules.
mroot=/tmp/rmbd-install-mroot
modprobe_from() {	# TREE SUBDIR WHAT
	local tree=$1 sub=$2 what=$3 m path ver d
	local -a todo=() seen=()
	rm -rf "$mroot"
	mkdir -p "$mroot/lib/modules/$kver"
	cp -R "$tree/$kver/." "$mroot/lib/modules/$kver/"
	cp "/lib/modules/$kver"/modules.{builtin,builtin.modinfo,order} "$mroot/lib/modules/$kver/"
	for m in rmbd-client rmbd-target; do
		todo+=("$(modinfo -F depends "$mroot/lib/modules/$kver/$sub/"*"/$m.ko" \
			"$mroot/lib/modules/$kver/$sub/$m.ko" 2> /dev/null | tr ',' ' ')")
	done
	read -r -a todo <<< "${todo[*]}"
	while (( ${#todo[@]} )); do
		m=${todo[0]}
		todo=("${todo[@]:1}")
		[[ -z $m || " ${seen[*]} " == *" $m "* ]] && continue
		seen+=("$m")
		path=$(modinfo -n "$m") || fail "modinfo does not find $m, which rmbd needs"
		[[ $path == /lib/modules/* ]] || continue	# built in
		mkdir -p "$mroot$(dirname "$path")"
		cp "$path" "$mroot$path"
		for d in $(modinfo -F depends "$path" | tr ',' ' '); do todo+=("$d"); done
	done
	depmod -b "$mroot" -a "$kver" || fail "depmod over $what failed"
	for m in rmbd-client rmbd-target; do
		path=$(modinfo -b "$mroot" -n "$m") || fail "modinfo does not find $m over $what"
		[[ $path == "$mroot/lib/modules/$kver/$sub/"* ]] || fail "$m resolves to $path, not under $sub"
		grep -q "^$sub/.*$m.ko:" "$mroot/lib/modules/$kver/modules.dep" ||
			fail "modules.dep has no entry for $sub/.../$m.ko"
		modprobe -d "$mroot" "$m" || fail "modprobe $m ($what) failed"
		ver=$(cat "/sys/module/${m//-/_}/version")
		[[ $ver == "$version" ]] || fail "$m ($what) reports version $ver, VERSION is $version"
		[[ $(cat "/sys/module/${m//-/_}/srcversion") == "$(modinfo -F srcversion "$path")" ]] ||
			fail "the loaded $m is not the one in $path"
	done
	log "$what: modprobe loaded rmbd-client and rmbd-target $version from $sub, with ${#seen[@]} modules they need ($SECONDS s)"
}

modprobe_from "$root/lib/modules" updates/rmbd "make install's modules"

# The installed CLI drives the installed modules.
cli=$root/usr/sbin/rmbd
[[ $(LD_LIBRARY_PATH=$root/usr/lib "$cli" -V | tail -n 2) == "rmbd_target $version"$'\n'"rmbd_client $version" ]] ||
	fail "rmbd -V does not show the loaded modules' version: $("$cli" -V)"
"$cli" export add inst size 16M hosts "$(rmbd_cli host)" > /dev/null || fail "installed CLI: export add failed"
"$cli" listener add "$RMBD_ADDR" > /dev/null || fail "installed CLI: listener add failed"
tdev=$("$cli" dev connect addr "$RMBD_ADDR" export inst | tail -n 1) || fail "installed CLI: dev connect failed"
wait_node "/dev/$tdev" || fail "/dev/$tdev did not appear"
head -c 4M /dev/urandom > /tmp/rmbd-install-data
dd if=/tmp/rmbd-install-data of="/dev/$tdev" bs=1M oflag=direct status=none || fail "write to /dev/$tdev failed"
cmp <(dd if="/dev/$tdev" bs=1M count=4 iflag=direct status=none) /tmp/rmbd-install-data ||
	fail "/dev/$tdev read back other data"
rm -f /tmp/rmbd-install-data
"$cli" dev disconnect "$tdev" > /dev/null || fail "installed CLI: dev disconnect failed"
tdev=
"$cli" export del inst > /dev/null || fail "installed CLI: export del failed"
"$cli" listener del "$RMBD_ADDR" > /dev/null || fail "installed CLI: listener del failed"
log "the installed CLI and modules: export, connect, 4M written and read back, disconnect"

modprobe -d "$mroot" -r rmbd-client rmbd-target || fail "modprobe -r failed"

grep -q "^rmbd/$version, $kver, .*: installed" "$dkms/status" ||
	fail "dkms status does not say installed: $(cat "$dkms/status")"
modprobe_from "$dkms/modules" updates/dkms "DKMS's modules"
modprobe -d "$mroot" -r rmbd-client rmbd-target || fail "modprobe -r failed"
rm -rf "$mroot"

# ---- uninstall -----------------------------------------------------------

make -s -C "$RMBD_REPO" uninstall DESTDIR="$root" PREFIX=/usr KVER="$kver" > /dev/null ||
	fail "make uninstall failed"
left=$(cd "$root" && find . \( -type f -o -type l \) | sort | tr '\n' ' ')
[[ -z $left ]] || fail "make uninstall left: $left"
make -s -C "$RMBD_REPO" dkms-uninstall DESTDIR="$dkms/src" KVER="$kver" > /dev/null ||
	fail "make dkms-uninstall failed"
[[ ! -e $dkms/src/usr/src/rmbd-$version ]] || fail "make dkms-uninstall left /usr/src/rmbd-$version"
log "make uninstall and make dkms-uninstall leave nothing behind ($SECONDS s)"
