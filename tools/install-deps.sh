#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building and testing cask needs, from Debian's archive.
# Usage: install-deps.sh [all|kernel-source|headers|lint|arm64|fuzz|coverage]
#   arm64: the cross compiler, qemu-system-aarch64 and an arm64
#   busybox-static for the guest (make check ARCH=arm64), in
#   $CASK_CACHE/arm64/busybox
#   fuzz: trinity, the system call fuzzer make fuzz runs in the guest
#         (all installs it too: make check's trinity_smoke)
#   coverage: lcov (lcov, genhtml) for make coverage's report
# Idempotent: packages already present are not fetched again.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=kernel/base
. "$top/tools/kernel/base"

what=${1:-all}
say() { printf '[deps] %s\n' "$*"; }

need=()
want() {
	local pkg=$1 ver=${2:-}
	local have
	have=$(dpkg-query -W -f='${Status} ${Version}' "$pkg" 2>/dev/null || true)
	case $have in
	"install ok installed "*)
		[ -z "$ver" ] || [ "${have##* }" = "$ver" ] && return 0 ;;
	esac
	need+=("$pkg${ver:+=$ver}")
}

# gcc-12-multilib, not gcc-multilib: the 32-bit ashmem selftest needs only
# the compiler's 32-bit support and libc6-dev-i386 (its <asm/...> come
# from the test kernel's headers), and Debian's gcc-multilib conflicts
# with the arm64 cross compiler that ARCH=arm64 installs.
tools="build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils
       kmod patch python3 busybox-static qemu-system-x86 sparse perl rsync
       gcc-12-multilib shellcheck lxc trinity"

case $what in
all)
	for p in $tools; do want "$p"; done
	want "$BASE_PACKAGE" "$BASE_VERSION"
	;;
kernel-source)
	want "$BASE_PACKAGE" "$BASE_VERSION" ;;
headers)
	want "$HEADERS_PACKAGE" ;;
lint)
	for p in shellcheck sparse perl rsync; do want "$p"; done ;;
arm64)
	for p in gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm; do
		want "$p"
	done ;;
fuzz)
	want trinity ;;
coverage)
	want lcov ;;
*)
	echo "usage: $0 [all|kernel-source|headers|lint|arm64|fuzz|coverage]" >&2; exit 2 ;;
esac

# The guest's shell for arm64: Debian's busybox-static for arm64, taken
# from its .deb without installing it (apt needs arm64 as a foreign
# architecture to download it).
arm64_busybox() {
	local dir=${CASK_CACHE:-$HOME/.cache/cask}/arm64 deb
	[ -x "$dir/busybox" ] && return 0
	mkdir -p "$dir"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		say "adding arm64 as a foreign architecture (to download busybox-static:arm64)"
		dpkg --add-architecture arm64
		apt-get update -qq
	fi
	(cd "$dir" && rm -f ./*.deb && apt-get download -qq busybox-static:arm64) ||
		{ say "error: could not download busybox-static:arm64"; exit 1; }
	deb=$(ls "$dir"/busybox-static_*_arm64.deb)
	rm -rf "$dir/x"
	dpkg-deb -x "$deb" "$dir/x"
	cp "$dir/x/bin/busybox" "$dir/busybox"
	rm -rf "$dir/x" "$deb"
	say "arm64 busybox in $dir/busybox"
}

if [ ${#need[@]} -eq 0 ]; then
	[ "$what" != arm64 ] || arm64_busybox
	exit 0
fi
say "installing: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
if [ ! -f /var/lib/apt/periodic/cask-updated ] ||
   [ -n "$(find /var/lib/apt/periodic/cask-updated -mmin +720 2>/dev/null)" ]; then
	apt-get update -qq
	mkdir -p /var/lib/apt/periodic && touch /var/lib/apt/periodic/cask-updated
fi
if ! apt-get install -y -qq --no-install-recommends "${need[@]}" > /tmp/cask-apt.log 2>&1; then
	# The pinned kernel source may have left the archive: take the newest
	# linux-source-6.12 rather than fail, and say so (build-kernel.sh warns).
	fallback=()
	for p in "${need[@]}"; do
		case $p in "$BASE_PACKAGE="*) fallback+=("$BASE_PACKAGE") ;;
		*) fallback+=("$p") ;; esac
	done
	say "exact versions unavailable, retrying with: ${fallback[*]}"
	apt-get install -y -qq --no-install-recommends "${fallback[@]}" > /tmp/cask-apt.log 2>&1 || {
		tail -n 20 /tmp/cask-apt.log >&2
		say "error: apt-get install failed (log: /tmp/cask-apt.log)"
		exit 1
	}
fi
say "done"
[ "$what" != arm64 ] || arm64_busybox
