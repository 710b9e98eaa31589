#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the debug kernel (KASAN, lockdep, kmemleak, fault injection) from
# Debian's linux-source-6.1 and the rmbd modules against it, all in the
# cache, outside the work tree:
#
#   $RMBD_CACHE/debug-kernel/linux/     the kernel tree, built in place
#   $RMBD_CACHE/debug-kernel/mods/      modules_install; the guest binds its
#                                        lib/modules over /lib/modules
#   $RMBD_CACHE/debug-kernel/rmbd/      a copy of Kbuild, kmod/ and uapi/
#   $RMBD_CACHE/debug-kernel/env        what run-vm.sh needs (shell syntax)
#
# The kernel is rebuilt only when the source package, this recipe, the
# config fragments, the patches or the compiler changed (incrementally
# when only the patches did); the rmbd modules every time (incrementally).
# The kernel build runs under nice -n 19.
#
# patches/*.patch (-p1, applied in order) fix bugs of the kernel's own that
# the tests would otherwise trip over; each says why in its header.
#
# usage: build.sh [--kernel-only] [--force]
#   RMBD_CACHE    cache directory (default ${XDG_CACHE_HOME:-~/.cache}/rmbd)
#   RMBD_JOBS     make -j (default: nproc)

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${RMBD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rmbd}
dir=$cache/debug-kernel
jobs=${RMBD_JOBS:-$(nproc)}

# Bump when the way the kernel is built changes.
recipe=1

kernel_only=0
force=0
for a in "$@"; do
	case "$a" in
	--kernel-only) kernel_only=1 ;;
	--force) force=1 ;;
	-h|--help) sed -n '3,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "build.sh: unknown argument $a" >&2; exit 2 ;;
	esac
done

say() { echo "debug-kernel: $*" >&2; }
die() { say "$*"; exit 1; }

# ---- packages ----------------------------------------------------------

pkgs=(linux-source-6.1 build-essential flex bison bc libelf-dev libssl-dev xz-utils patch)
missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[[ $st == ii* ]] || missing+=("$p")
done
if (( ${#missing[@]} )); then
	(( EUID == 0 )) || die "missing packages: ${missing[*]} (run as root to install them)"
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -q update > /dev/null
	apt-get -y -q -o Dpkg::Use-Pty=0 --no-install-recommends install "${missing[@]}" > /dev/null
fi

tarball=/usr/src/linux-source-6.1.tar.xz
[[ -f $tarball ]] || die "$tarball not found"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)

mkdir -p "$dir"
# One build at a time per cache (two work trees may share it).
exec 8> "$dir/.lock"
if ! flock -n 8; then
	say "waiting for another build in $dir"
	flock 8
fi

src=$dir/linux
mods=$dir/mods

# ---- kernel ------------------------------------------------------------

wanted=$dir/wanted.config
# vm/config then our fragment; for each symbol the last line wins.
cat "$repo/selftests/vm/config" "$here/config" |
	sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=\(.*\)$/\1 \1=\2/p' \
		-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1 # \1 is not set/p' |
	awk '{ k = $1; sub(/^[^ ]* /, ""); if (!(k in v)) o[n++] = k; v[k] = $0 }
	     END { for (i = 0; i < n; i++) print v[o[i]] }' > "$wanted.tmp"
mv "$wanted.tmp" "$wanted"

shopt -s nullglob
patches=("$here"/patches/*.patch)
shopt -u nullglob
patch_key=$(cat /dev/null "${patches[@]}" | sha256sum | cut -c1-16)

key=$( { echo "recipe $recipe"; echo "source $srcver"; gcc --version | head -n 1
	 cat "$wanted"; echo "patches $patch_key"; } | sha256sum | cut -c1-16)

kernel_ok() {
	[[ -f $dir/stamp && $(cat "$dir/stamp") == "$key" && -f $dir/bzImage &&
	   -f $dir/release && -d $mods/lib/modules/$(cat "$dir/release") ]]
}

# Every wanted line must hold in .config; "=m" is met by "=y".
check_config() {
	local line sym val got bad=0
	while IFS= read -r line; do
		if [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
			sym=${BASH_REMATCH[1]}
			if grep -q "^$sym=" "$src/.config"; then
				say "Kconfig: $sym is set, wanted off: $(grep "^$sym=" "$src/.config")"
				bad=1
			fi
			continue
		fi
		sym=${line%%=*}
		val=${line#*=}
		got=$(sed -n "s/^$sym=//p" "$src/.config")
		if [[ $got == "$val" || ( $val == m && $got == y ) ]]; then
			continue
		fi
		say "Kconfig dropped $line (got: ${got:-not set})"
		bad=1
	done < "$wanted"
	return "$bad"
}

# Bring the tree to the pristine source plus patches/: the files an earlier
# set of patches touched come back from the tarball (with a new time, so
# that make rebuilds them), then the patches apply.
apply_patches() {
	local p top files=()
	[[ -f $dir/patched && $(cat "$dir/patched") == "$patch_key" ]] && return 0
	rm -f "$dir/patched"
	if [[ -s $dir/patched-files ]]; then
		# head ends the listing early: tar's SIGPIPE is expected.
		top=$({ tar -tJf "$tarball" 2> /dev/null || true; } | head -n 1)
		top=${top%%/*}
		say "restoring $(wc -l < "$dir/patched-files") patched file(s) from the source package"
		sed "s|^|$top/|" "$dir/patched-files" |
			tar -xJf "$tarball" -C "$src" --strip-components=1 --touch -T - ||
			die "cannot restore the patched files"
	fi
	for p in "${patches[@]}"; do
		say "applying patches/${p##*/}"
		patch -s -p1 -N -d "$src" < "$p" || die "patches/${p##*/} does not apply"
		mapfile -t -O "${#files[@]}" files < <(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$p")
	done
	printf '%s\n' "${files[@]}" | sort -u | grep . > "$dir/patched-files" || true
	echo "$patch_key" > "$dir/patched"
}

build_kernel() {
	local t0 rel
	t0=$(date +%s)
	if [[ ! -f $dir/source || $(cat "$dir/source") != "$srcver" || ! -f $src/Makefile ]]; then
		say "extracting linux-source-6.1 $srcver"
		rm -rf "$src" "$dir/source" "$dir/patched" "$dir/patched-files"
		mkdir -p "$src"
		tar -xJf "$tarball" -C "$src" --strip-components=1
		echo "$srcver" > "$dir/source"
	fi
	rm -f "$dir/stamp"
	apply_patches

	# kvm_guest.config, less the symbols we set ourselves, then ours.
	{ grep -v -F -f <(sed -E 's/^(# )?(CONFIG_[A-Za-z0-9_]+)[= ].*/\2=/' "$wanted") \
		"$src/kernel/configs/kvm_guest.config"; cat "$wanted"; } > "$dir/allconfig"
	make -s -C "$src" ARCH=x86_64 KCONFIG_ALLCONFIG="$dir/allconfig" allnoconfig
	make -s -C "$src" ARCH=x86_64 olddefconfig
	check_config || die "the kernel config lacks wanted options (see above; $src/.config)"

	say "building the kernel with -j$jobs under nice -n 19 (log: $dir/build.log)"
	if ! nice -n 19 make -C "$src" ARCH=x86_64 -j"$jobs" bzImage modules > "$dir/build.log" 2>&1; then
		tail -n 30 "$dir/build.log" >&2
		die "kernel build failed"
	fi
	rel=$(make -s -C "$src" ARCH=x86_64 kernelrelease)
	rm -rf "$mods"
	nice -n 19 make -s -C "$src" ARCH=x86_64 INSTALL_MOD_PATH="$mods" modules_install \
		>> "$dir/build.log" 2>&1 || die "modules_install failed"
	cp "$src/arch/x86/boot/bzImage" "$dir/bzImage"
	echo "$rel" > "$dir/release"
	echo "$key" > "$dir/stamp"
	say "kernel $rel built in $(( $(date +%s) - t0 )) s"
}

if (( force )) || ! kernel_ok; then
	build_kernel
else
	say "kernel $(cat "$dir/release") is up to date"
fi
rel=$(cat "$dir/release")
moddir=$mods/lib/modules/$rel

# ---- rmbd modules ------------------------------------------------------

if (( ! kernel_only )); then
	# kbuild writes its objects next to the sources: build in a copy, so
	# that the work tree's build for the Debian kernel stays as it is.
	# Unchanged files keep their times, so the build is incremental;
	# files are compared by content, not time, so that a tree whose file
	# is older than the copy's (a mutant's, an older commit's) is built.
	mkdir -p "$dir/rmbd"
	rsync -rc --delete --prune-empty-dirs --exclude='*.mod.c' \
		--include='/Kbuild' --include='/kmod/' --include='/uapi/' --exclude='/*' \
		--include='*/' --include='*.[ch]' --include='Kbuild' --exclude='*' \
		"$repo/" "$dir/rmbd/"
	say "building the rmbd modules for $rel"
	if ! nice -n 10 make -s -C "$src" ARCH=x86_64 M="$dir/rmbd" -j"$jobs" \
			KCFLAGS=-g UBSAN_SANITIZE=y modules > "$dir/rmbd.log" 2>&1; then
		cat "$dir/rmbd.log" >&2
		die "building the rmbd modules against the debug kernel failed"
	fi
	grep -v '^$' "$dir/rmbd.log" >&2 || true
	mkdir -p "$moddir/rmbd"
	# Whole files only: a VM that runs meanwhile may be loading them.
	for m in rmbd-target rmbd-client; do
		cp "$dir/rmbd/kmod/$m.ko" "$moddir/rmbd/.$m.ko.tmp"
		mv -f "$moddir/rmbd/.$m.ko.tmp" "$moddir/rmbd/$m.ko"
	done
fi

# Paths as the guest sees them once guest-init has bound
# $mods/lib/modules over /lib/modules.
{
	printf 'DEBUG_KERNEL_IMAGE=%q\n' "$dir/bzImage"
	printf 'DEBUG_KERNEL_RELEASE=%q\n' "$rel"
	printf 'DEBUG_KERNEL_MODULES=%q\n' "$mods/lib/modules"
	printf 'DEBUG_KERNEL_TARGET_KO=%q\n' "/lib/modules/$rel/rmbd/rmbd-target.ko"
	printf 'DEBUG_KERNEL_CLIENT_KO=%q\n' "/lib/modules/$rel/rmbd/rmbd-client.ko"
} > "$dir/env.tmp"
mv "$dir/env.tmp" "$dir/env"
