#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --no-tree on every kmod/ source and uapi header, and the
# benchmark's module (tools/bench/kverbs).  The
# script comes from the linux-source package's tarball, extracted once
# into the cache.  Exit 0 clean, 1 on any error or warning, 4 when no
# kernel source tarball is installed.
#
#   CHECKPATCH_STRICT=1   also report CHECK-level issues (--strict)

set -eu

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${RMBD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rmbd}

tarball=$(ls -1 /usr/src/linux-source-*.tar.* 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -z $tarball ]]; then
	echo "SKIP: no /usr/src/linux-source-*.tar.* (install linux-source-6.1)"
	exit 4
fi

ver=$(basename "$tarball")
ver=${ver%.tar.*}
dir=$cache/checkpatch/$ver
if [[ ! -f $dir/checkpatch.pl ]]; then
	mkdir -p "$dir"
	tmp=$(mktemp -d)
	tar -xf "$tarball" -C "$tmp" --wildcards \
		"$ver/scripts/checkpatch.pl" "$ver/scripts/spelling.txt" \
		"$ver/scripts/const_structs.checkpatch"
	mv "$tmp/$ver/scripts/"* "$dir/"
	rm -rf "$tmp"
fi

cd "$repo"
mapfile -t files < <(find kmod uapi tools/bench/kverbs -type f \( -name '*.c' -o -name '*.h' \) \
	-not -name '*.mod.c' | sort)
if (( ${#files[@]} == 0 )); then
	echo "SKIP: no kernel sources in kmod/ or uapi/"
	exit 4
fi

opts=(--no-tree --quiet --show-types --color=never --summary-file)
[[ -n ${CHECKPATCH_STRICT:-} ]] && opts+=(--strict)

rc=0
for f in "${files[@]}"; do
	perl "$dir/checkpatch.pl" "${opts[@]}" -f "$f" || rc=1
done
if (( rc == 0 )); then
	echo "checkpatch: ${#files[@]} files clean"
fi
exit "$rc"
