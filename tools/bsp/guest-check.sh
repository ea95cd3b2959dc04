#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# By hand: the paths of tools/bsp/etc/init.d/cask-modules the test guest's
# boot does not take. Builds the usual guest image (tools/cask-test image;
# CASK_TAG defaults to bsp), appends guest-check-guest.sh as
# /interop/run.sh and boots it once with cask.mode=interop (about two
# minutes under TCG). The guest checks, after its boot loaded cask with
# insmod from /lib/modules/cask:
#   - status, the modprobe.d parameters, /dev/log/*'s group
#   - stop: every module unloaded, last first
#   - modprobe mode on a depmod'ed /lib/modules/$(uname -r), with the
#     parameters of modprobe.d
#   - the failure reports: a bad parameter value (the module and the
#     kernel's line), a missing cask_core (the drivers after it)
# Prints the guest's lines; exit status non-zero on a failed check or a
# kernel splat.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
export CASK_TAG=${CASK_TAG:-bsp}
export CASK_CACHE=${CASK_CACHE:-$HOME/.cache/cask}

paths=$("$top/tools/cask-test" image | tee /dev/stderr | tail -n 2)
kernel=$(sed -n 's/^kernel //p' <<< "$paths")
image=$(sed -n 's/^initramfs //p' <<< "$paths")
if [ ! -f "$kernel" ] || [ ! -f "$image" ]; then
	echo "guest-check.sh: no guest image" >&2
	exit 1
fi

overlay=$(mktemp -d)
trap 'rm -rf "$overlay"' EXIT
mkdir -p "$overlay/interop"
cp "$top/tools/bsp/guest-check-guest.sh" "$overlay/interop/run.sh"
chmod +x "$overlay/interop/run.sh"
full=${image%.cpio}-bspcheck.cpio
cp "$image" "$full"
(cd "$overlay" && find interop | cpio -o -H newc -R 0:0 --quiet) >> "$full"

out=$CASK_CACHE/run-interop-bsp-$CASK_TAG
status=0
"$top/tools/qemu/run-qemu.sh" -k "$kernel" -i "$full" -d "$out" -a cask.mode=interop \
	-t "${CASK_TIMEOUT:-600}" || status=1
tr -d '\r' < "$out/results.log"
# The serial port ends lines with \r\n.
tr -d '\r' < "$out/results.log" | grep -q '^ok all$' || status=1
exit $status
