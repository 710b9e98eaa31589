#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build soft-iWARP (siw.ko), which Debian's kernel does not build, for
# that kernel: its source from linux-source-6.1, the siw patches of
# selftests/debug-kernel/patches/ applied (the stricter checks the debug
# kernel carries too), against the kernel's headers.  The module lands in
# the cache and is rebuilt only when the kernel, the source package or
# the patches changed.  Prints the module's path.
#
# usage: build-siw.sh KVER
#   RMBD_CACHE    cache directory (default ${XDG_CACHE_HOME:-~/.cache}/rmbd)

set -euo pipefail

kver=${1:?usage: build-siw.sh KVER}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
patchdir=$here/../debug-kernel/patches
cache=${RMBD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rmbd}
dir=$cache/siw/$kver
tarball=/usr/src/linux-source-6.1.tar.xz
kdir=/lib/modules/$kver/build

say() { echo "build-siw: $*" >&2; }

[[ -f $tarball ]] || { say "$tarball not found (apt-get install linux-source-6.1)"; exit 1; }
[[ -d $kdir ]] || { say "$kdir not found (the headers of $kver)"; exit 1; }

shopt -s nullglob
patches=("$patchdir"/*-siw-*.patch)
shopt -u nullglob
key=$( { echo "recipe 1"; echo "$kver"; dpkg-query -W -f='${Version}\n' linux-source-6.1
	 cat /dev/null "${patches[@]}"; } | sha256sum | cut -c1-16)

if [[ -f $dir/siw.ko && -f $dir/stamp && $(cat "$dir/stamp") == "$key" ]]; then
	echo "$dir/siw.ko"
	exit 0
fi

mkdir -p "$dir"
exec 8> "$dir/.lock"
flock 8
rm -rf "$dir/src" "$dir/siw.ko" "$dir/stamp"
mkdir -p "$dir/src"
say "extracting drivers/infiniband/sw/siw from linux-source-6.1"
tar -xJf "$tarball" -C "$dir/src" --strip-components=1 --wildcards \
	'*/drivers/infiniband/sw/siw/*'
for p in "${patches[@]}"; do
	say "applying ${p##*/}"
	patch -s -p1 -N -d "$dir/src" < "$p"
done
m=$dir/src/drivers/infiniband/sw/siw
say "building siw.ko for $kver"
make -s -C "$kdir" M="$m" CONFIG_RDMA_SIW=m modules > "$dir/build.log" 2>&1 ||
	{ tail -n 20 "$dir/build.log" >&2; say "the build failed"; exit 1; }
cp "$m/siw.ko" "$dir/siw.ko"
echo "$key" > "$dir/stamp"
echo "$dir/siw.ko"
