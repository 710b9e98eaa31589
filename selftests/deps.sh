#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages that building rmbd, its tests, its demo and
# its benchmark (nvme-cli, nbd-server, nbd-client: the peers; gnuplot-nox:
# its charts; perftest: its RDMA ceiling) need.
# Idempotent: returns at once when everything is present.
#
#   RMBD_DEPS_NO_OPTIONAL=1   skip optional packages (linux-source for checkpatch,
#                             the siw module of the tests over soft-iWARP
#                             and, with the build tools and rsync, for the
#                             debug kernel)

set -eu

required=(
	build-essential
	linux-image-amd64
	linux-headers-amd64
	libnl-3-dev
	libnl-genl-3-dev
	libibverbs-dev
	librdmacm-dev
	pkg-config
	qemu-system-x86
	busybox-static
	rdma-core
	ibverbs-utils
	ibverbs-providers
	iproute2
	kmod
	cpio
	xz-utils
	fio
	e2fsprogs
	xfsprogs
	util-linux
	fdisk
	procps
	coreutils
	sparse
	perl
	jq
	nvme-cli
	nbd-server
	nbd-client
	gnuplot-nox
	perftest
	mdadm
	lvm2
	cryptsetup-bin
	dkms
	python3-yaml
	udev
	systemd
	man-db
	bsdextrautils
)
optional=(
	linux-source-6.1
	rsync
	flex
	bison
	bc
	libelf-dev
	libssl-dev
)

missing() {
	local p st
	for p in "$@"; do
		st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
		[[ $st == ii* ]] || printf '%s\n' "$p"
	done
}

mapfile -t need < <(missing "${required[@]}")
opt=()
if [[ -z ${RMBD_DEPS_NO_OPTIONAL:-} ]]; then
	mapfile -t opt < <(missing "${optional[@]}")
fi

if (( ${#need[@]} == 0 && ${#opt[@]} == 0 )); then
	exit 0
fi

if (( EUID != 0 )); then
	echo "deps: missing packages: ${need[*]} ${opt[*]}" >&2
	echo "deps: run as root to install them" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q -o Dpkg::Use-Pty=0 --no-install-recommends)

echo "deps: installing ${need[*]} ${opt[*]}"
apt-get -q update >/dev/null
if (( ${#need[@]} )); then
	apt-get "${apt_opts[@]}" install "${need[@]}" >/dev/null
fi
if (( ${#opt[@]} )); then
	apt-get "${apt_opts[@]}" install "${opt[@]}" >/dev/null ||
		echo "deps: optional packages not installed: ${opt[*]}" >&2
fi

mapfile -t need < <(missing "${required[@]}")
if (( ${#need[@]} )); then
	echo "deps: still missing: ${need[*]}" >&2
	exit 1
fi
