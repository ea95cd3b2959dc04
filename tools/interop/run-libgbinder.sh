#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Interop check, by hand (it needs programs built from sources that CI
# cannot fetch): libgbinder's test programs and AOSP's servicemanager
# against cask_binder and the kernel's binder in one boot of the debug
# guest. See Documentation/dev/testing.rst, "libgbinder".
#
# Usage: tools/interop/run-libgbinder.sh DIR
#   DIR  the programs tools/interop/build-libgbinder.sh made
#
# Builds the guest image as tools/cask-test does (CASK_TAG, default
# "gbinder"; CASK_CACHE as there), appends DIR's programs and
# libgbinder-guest.sh, boots it with cask.mode=interop and prints the
# guest's results. Exit status 0 when every check passed and the kernel
# console is clean.
set -euo pipefail

dir=$(cd "${1:?usage: run-libgbinder.sh DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export CASK_TAG=${CASK_TAG:-gbinder}
export CASK_CACHE=${CASK_CACHE:-$HOME/.cache/cask}

progs="servicemanager binder-service binder-client binder-list binder-ping binder-call binder-dump"
for p in $progs; do
	[ -x "$dir/$p" ] || { echo "run-libgbinder.sh: no $dir/$p (build-libgbinder.sh)" >&2; exit 1; }
done

paths=$("$top/tools/cask-test" image | tee /dev/stderr | tail -n 2)
kernel=$(sed -n 's/^kernel //p' <<< "$paths")
image=$(sed -n 's/^initramfs //p' <<< "$paths")
if [ ! -f "$kernel" ] || [ ! -f "$image" ]; then
	echo "run-libgbinder.sh: no guest image" >&2
	exit 1
fi

overlay=$(mktemp -d)
trap 'rm -rf "$overlay"' EXIT
mkdir -p "$overlay/interop/bin"
for p in $progs; do
	cp "$dir/$p" "$overlay/interop/bin/"
done
gcc -static -O2 -Wall -Wextra "$here/binderfs-add.c" -o "$overlay/interop/bin/binderfs-add"
cp "$here/libgbinder-guest.sh" "$overlay/interop/run.sh"
# The kernel unpacks concatenated cpio archives one after the other.
full=${image%.cpio}-libgbinder.cpio
cp "$image" "$full"
(cd "$overlay" && find interop | cpio -o -H newc -R 0:0 --quiet) >> "$full"

out=$CASK_CACHE/run-interop-libgbinder-$CASK_TAG
status=0
"$top/tools/qemu/run-qemu.sh" -k "$kernel" -i "$full" -d "$out" -a cask.mode=interop \
	-t "${CASK_TIMEOUT:-900}" || status=1
tr -d '\r' < "$out/results.log"
echo "logs: $out/{console,results}.log"
tr -d '\r' < "$out/results.log" | grep -q '^[0-9]* passed, 0 failed$' || status=1
exit $status
