#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build cask against Debian's stock linux-headers-6.12 package, as a
# distribution or DKMS user would (build only: nothing is loaded).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=kernel/base
. "$top/tools/kernel/base"
cache=${CASK_CACHE:-$HOME/.cache/cask}

"$top/tools/install-deps.sh" headers
kdir=/usr/src/linux-headers-${HEADERS_PACKAGE#linux-headers-}
[ -f "$kdir/Makefile" ] || { echo "build-stock: $kdir missing" >&2; exit 1; }

out=$cache/modules-stock${CASK_TAG:+-$CASK_TAG}
mkdir -p "$out/tools"
rsync -a --delete --exclude .git --exclude '*.o' --exclude '*.ko' \
	"$top/Kbuild" "$top/Makefile" "$top/drivers" "$top/include" "$out/"
cp "$top/tools/kernel-check.sh" "$out/tools/"
echo "[stock] building against $kdir"
make -s -C "$out" KERNEL_SRC="$kdir" W=1 KCFLAGS=-Werror modules
find "$out" -name '*.ko' -printf '[stock] built %P\n'
