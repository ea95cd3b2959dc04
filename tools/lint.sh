#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch --strict on every C file and header of ours, sparse on the
# modules (against the debug kernel), shellcheck-free by design: the
# kernel's own tools decide.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${CASK_CACHE:-$HOME/.cache/cask}
"$top/tools/kernel/build-kernel.sh" debug >/dev/null
kb=$(readlink -f "$cache/kernel-debug")
ksrc=$(readlink -f "$kb/source")
status=0

cd "$top"
files=$(git ls-files '*.c' '*.h' | grep -v '^tools/\|^selftests/' || true)
echo "[lint] checkpatch --strict: $(echo "$files" | wc -w) files"
# shellcheck disable=SC2086
if ! "$ksrc/scripts/checkpatch.pl" --strict --no-tree --quiet --show-types \
	--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f $files; then
	status=1
fi
# User-space tools and tests: kernel style too, minus kernel-only rules.
ufiles=$(git ls-files 'tools/*.c' 'selftests/*.c' 'selftests/*.h')
# shellcheck disable=SC2086
if ! "$ksrc/scripts/checkpatch.pl" --strict --no-tree --quiet --show-types \
	--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG,PREFER_KERNEL_TYPES,SPLIT_STRING,AVOID_EXTERNS,PREFER_DEFINED_ATTRIBUTE_MACRO -f $ufiles; then
	status=1
fi
echo "[lint] kernel-doc"
# shellcheck disable=SC2086
if "$ksrc/scripts/kernel-doc" -none -Wall $files 2>&1 | grep .; then
	status=1
fi
for p in $(grep -v '^#' patches/series | grep . || true); do
	(cd "$ksrc" && scripts/checkpatch.pl --strict --quiet "$top/patches/$p") || status=1
done

echo "[lint] sparse (C=2) and W=1"
mods=$cache/modules-lint${CASK_TAG:+-$CASK_TAG}
mkdir -p "$mods"
rsync -a --delete --exclude .git "$top/Kbuild" "$top/drivers" "$top/include" "$mods/"
out=$(make -s -C "$kb" M="$mods" W=1 C=2 modules 2>&1) || status=1
if [ -n "$out" ]; then
	echo "$out"
	status=1
fi
[ $status = 0 ] && echo "[lint] clean"
exit $status
