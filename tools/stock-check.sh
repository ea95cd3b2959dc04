#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one of Debian's stock kernel images under QEMU with the modules
# DKMS built for it (tools/dkms-check.sh) and run the selftests there: the
# modules must load and pass on a distribution kernel, not only on the
# debug kernel they are tested with.
#
# Usage: stock-check.sh [HEADERS-METAPACKAGE]   (default linux-headers-6.12-amd64)
#
# The guest is make check's (tools/cask-test image: busybox, tools/qemu/init,
# the selftests and tools, built against the debug kernel), with the debug
# kernel's modules replaced by the DKMS-built ones and Debian's
# /boot/vmlinuz-VERSION as its kernel. Debian's kernels have no KUnit, so
# only the selftests run. Ends with make check's "N passed, N failed,
# N skipped" line, where a skip not in tools/qemu/expected-skips' [stock]
# section is a failure; logs in $CASK_CACHE/run-check-stock-VERSION.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
export CASK_CACHE=${CASK_CACHE:-$HOME/.cache/cask}
cache=$CASK_CACHE
meta=${1:-linux-headers-6.12-amd64}
say() { printf '[stock-check] %s\n' "$*"; }
die() { printf '[stock-check] error: %s\n' "$*" >&2; exit 1; }

# The DKMS-built modules for that kernel, made if missing.
pkg=$(dpkg-query -W -f='${Depends}' "$meta" 2>/dev/null | tr ',' '\n' |
	sed -n 's/^ *\(linux-headers-[0-9][^ ]*\).*/\1/p' | head -n 1) || true
kver=${pkg#linux-headers-}
dkms_mods=$cache/dkms${CASK_TAG:+-$CASK_TAG}/install/$kver/updates/dkms
if [ -z "$pkg" ] || [ ! -d "$dkms_mods" ]; then
	say "no DKMS-built modules for ${kver:-$meta} yet: running tools/dkms-check.sh $meta"
	"$top/tools/dkms-check.sh" "$meta"
	pkg=$(dpkg-query -W -f='${Depends}' "$meta" | tr ',' '\n' |
		sed -n 's/^ *\(linux-headers-[0-9][^ ]*\).*/\1/p' | head -n 1)
	kver=${pkg#linux-headers-}
	dkms_mods=$cache/dkms${CASK_TAG:+-$CASK_TAG}/install/$kver/updates/dkms
fi
[ -d "$dkms_mods" ] || die "DKMS built nothing for $kver (see tools/dkms-check.sh's output)"
vmlinuz=/boot/vmlinuz-$kver
[ -r "$vmlinuz" ] || die "$vmlinuz missing (package linux-image-$kver)"

# make check's guest, built against the debug kernel.
tag=stock${CASK_TAG:+-$CASK_TAG}
say "building the guest image (tools/cask-test image, CASK_TAG=$tag)"
CASK_TAG=$tag CASK_ONLY_PATCHED=1 "$top/tools/cask-test" image >/dev/null
base=$cache/initramfs-debug-$tag
[ -x "$base/init" ] || die "no guest root in $base"

root=$cache/initramfs-stock-$kver${CASK_TAG:+-$CASK_TAG}
rm -rf "$root"
cp -a "$base" "$root"
rm -f "$root"/lib/modules/cask/*.ko "$root"/lib/modules/cask/kunit/*.ko \
	"$root"/lib/modules/upstream/*.ko
n=0
for ko in "$dkms_mods"/*.ko*; do
	name=$(basename "$ko")
	case $name in
	*.ko.xz) xz -dc "$ko" > "$root/lib/modules/cask/${name%.xz}" ;;
	*.ko) cp "$ko" "$root/lib/modules/cask/" ;;
	*) continue ;;
	esac
	n=$((n + 1))
done
[ $n -gt 0 ] || die "no modules in $dkms_mods"
# The kernel's own binder, for binder_test's differential variant.
up=$(find "/lib/modules/$kver/kernel/drivers/android" -name 'binder_linux.ko*' 2>/dev/null | head -n 1)
if [ -n "$up" ]; then
	case $up in
	*.xz) xz -dc "$up" > "$root/lib/modules/upstream/binder_linux.ko" ;;
	*) cp "$up" "$root/lib/modules/upstream/binder_linux.ko" ;;
	esac
fi
image=$root.cpio
(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet > "$image")
say "$kver: $n DKMS-built modules, $(du -h "$image" | cut -f1) image"

out=$cache/run-check-stock-$kver${CASK_TAG:+-$CASK_TAG}
fail=0
"$top/tools/qemu/run-qemu.sh" -k "$vmlinuz" -i "$image" -d "$out" \
	-a "cask.mode=check${CASK_ONLY:+ cask.only=$CASK_ONLY}${CASK_ARGS:+ cask.args=$CASK_ARGS}" \
	-t "${CASK_TIMEOUT:-$("$top/tools/qemu/guest-limit" "$top/tools/qemu/limits" 1 "${CASK_ONLY:-}")}" ||
	fail=1
ksrc=$(readlink -f "$cache/kernel-debug/source")
# The skips this kernel may have are those of tools/qemu/expected-skips'
# [stock] section (no fault injection, no binderfs...), not make check's.
exec python3 "$top/tools/qemu/results.py" --skips=stock "$ksrc/tools/testing/kunit/kunit.py" \
	"$fail" "stock-$kver:$out/results.log"
