#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch --strict and kernel-doc on every C file and header of ours and
# on patches/, sparse (C=2) and W=1 on the modules, shellcheck on the shell
# scripts. The kernel's own tools decide.
#
# Sparse builds against the cached debug kernel when there is one
# (tools/kernel/build-kernel.sh has built it for these patches and
# configs); otherwise against Debian's stock linux-headers-6.12, so that
# `make lint` never builds a kernel of its own.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${CASK_CACHE:-$HOME/.cache/cask}
say() { printf '[lint] %s\n' "$*"; }
status=0
patch_opts=()

if CASK_CACHED_ONLY=1 "$top/tools/kernel/build-kernel.sh" debug >/dev/null; then
	kb=$(readlink -f "$cache/kernel-debug")
	ksrc=$(readlink -f "$kb/source")
else
	# shellcheck source=kernel/base
	. "$top/tools/kernel/base"
	"$top/tools/install-deps.sh" headers
	kb=/usr/src/${HEADERS_PACKAGE}
	say "no cached debug kernel: sparse against $kb"
	# checkpatch and kernel-doc from the unpacked source if there is one,
	# else from the source package's tarball (once).
	ksrc=
	for ready in "$cache"/src-*/.cask-src-ready; do
		[ -f "$ready" ] && ksrc=$(dirname "$ready") && break
	done
	if [ -z "$ksrc" ]; then
		ksrc=$cache/lint-scripts
		if [ ! -f "$ksrc/.done" ]; then
			"$top/tools/install-deps.sh" kernel-source
			say "extracting checkpatch and kernel-doc from /usr/src/$BASE_PACKAGE.tar.xz"
			rm -rf "$ksrc" && mkdir -p "$ksrc"
			tar -C "$ksrc" --strip-components=1 --wildcards -xJf "/usr/src/$BASE_PACKAGE.tar.xz" \
				'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
				'*/scripts/const_structs.checkpatch' '*/scripts/kernel-doc'
			touch "$ksrc/.done"
		fi
		# Not a whole tree: checkpatch must not look for one.
		patch_opts=(--no-tree)
	fi
fi

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
	(cd "$ksrc" && scripts/checkpatch.pl --strict --quiet "${patch_opts[@]}" "$top/patches/$p") || status=1
done

# Every shell script ('tools/*.sh' is recursive), the BSP init script and
# dkms.conf.
scripts=$(git ls-files 'tools/*.sh' tools/cask-test tools/qemu/guest-limit tools/lxc/cask-hook tools/runtime/cask-oci-hook \
	tools/bsp/etc/init.d/cask-modules \
	.ci/run dkms.conf)
command -v shellcheck >/dev/null || "$top/tools/install-deps.sh" lint
echo "[lint] shellcheck: $(echo "$scripts" | wc -w) scripts"
# shellcheck disable=SC2086
shellcheck -x -P SCRIPTDIR $scripts || status=1
# The harness's own reading of results logs (time limits, stuck programs).
echo "[lint] tools/qemu/results_test.py"
python3 "$top/tools/qemu/results_test.py" -q || status=1

echo "[lint] sparse (C=2) and W=1 against $kb"
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
