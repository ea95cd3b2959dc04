#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the kernel cask is tested on: Debian's linux-source-6.12, our
# patches/ applied, allnoconfig plus tools/kernel/*.config fragments.
#
# Usage: build-kernel.sh debug|debug-unpatched|debug-rt|debug-arm64|debug-cov|
#                        debug-kcsan|bench
# With CASK_CACHED_ONLY=1 it only finds a finished build: exit status 3,
# and nothing built, if there is none (tools/lint.sh).
#
# debug-unpatched is the debug kernel without patches/: the modules must
# load and degrade gracefully there, and the tests run on both.
# debug-rt is the debug kernel with PREEMPT_RT (make check RT=1).
# debug-arm64 is the debug kernel cross-built for arm64 with
# gcc-aarch64-linux-gnu (make check ARCH=arm64).
# debug-cov is the debug kernel with gcov and KCOV for cask's modules only
# (make coverage, make fuzz). debug-kcsan is the debug kernel with KCSAN
# instead of KASAN, which cannot be combined with it (make check KCSAN=1).
#
# Trees live outside the work tree, in $CASK_CACHE (default ~/.cache/cask):
#   src-<hash>/            base source with patches applied; hash of base
#                          version and patches
#   build-<variant>-<hash>/  O= build directory; hash of the source hash,
#                          the fragments and the recipe version below
#   kernel-<variant>       symlink to the current build directory
# A build directory that finished is reused as is, so a second run with
# nothing changed costs seconds.
set -euo pipefail

variant=${1:-debug}
top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$top/tools/kernel
cache=${CASK_CACHE:-$HOME/.cache/cask}
jobs=${JOBS:-$(nproc)}

say() { printf '[kernel] %s\n' "$*"; }
die() { printf '[kernel] error: %s\n' "$*" >&2; exit 1; }

apply_patches=1
# Cross builds: the make arguments every call into this tree needs, and
# the image QEMU boots.
kmake=()
image=arch/x86/boot/bzImage
case $variant in
debug) frags="$kdir/base.config $kdir/debug.config" ;;
debug-unpatched) frags="$kdir/base.config $kdir/debug.config"; apply_patches=0 ;;
debug-rt) frags="$kdir/base.config $kdir/debug.config $kdir/rt.config" ;;
debug-arm64)
	command -v aarch64-linux-gnu-gcc > /dev/null ||
		"$top/tools/install-deps.sh" arm64
	# base.config less what exists only on x86, as a fragment of its own
	# (its contents are part of the build's hash like any fragment's).
	mkdir -p "$cache/fragments"
	grep -vE '^CONFIG_(ACPI|SERIAL_8250|SERIAL_8250_CONSOLE|IA32_EMULATION)=' \
		"$kdir/base.config" > "$cache/fragments/base-arm64.config"
	frags="$cache/fragments/base-arm64.config $kdir/debug.config $kdir/arm64.config"
	kmake=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	image=arch/arm64/boot/Image
	;;
debug-cov) frags="$kdir/base.config $kdir/debug.config $kdir/cov.config" ;;
debug-kcsan)
	# debug.config less KASAN, as a fragment of its own.
	mkdir -p "$cache/fragments"
	grep -vE '^CONFIG_KASAN' "$kdir/debug.config" > "$cache/fragments/debug-nokasan.config"
	frags="$kdir/base.config $cache/fragments/debug-nokasan.config $kdir/kcsan.config"
	;;
bench) frags="$kdir/base.config $kdir/bench.config" ;;
*) die "unknown variant '$variant' (want debug, debug-unpatched, debug-rt, debug-arm64, debug-cov, debug-kcsan or bench)" ;;
esac

# shellcheck source=base
. "$kdir/base"
tarball=/usr/src/${BASE_PACKAGE}.tar.xz

installed=$(dpkg-query -W -f='${Version}' "$BASE_PACKAGE" 2>/dev/null || true)
if [ "$installed" != "$BASE_VERSION" ]; then
	"$top/tools/install-deps.sh" kernel-source
	installed=$(dpkg-query -W -f='${Version}' "$BASE_PACKAGE" 2>/dev/null || true)
fi
[ -f "$tarball" ] || die "$tarball missing after installing $BASE_PACKAGE"
[ "$installed" = "$BASE_VERSION" ] ||
	say "warning: wanted $BASE_PACKAGE $BASE_VERSION, using $installed"

series=$top/patches/series
[ $apply_patches = 1 ] || series=/dev/null
patch_files=()
while read -r p; do
	case $p in ''|'#'*) continue ;; esac
	[ -f "$top/patches/$p" ] || die "patches/series names $p, which does not exist"
	patch_files+=("$top/patches/$p")
done < "$series"

src_key=$( (echo "$BASE_PACKAGE $installed"; cat "$series" "${patch_files[@]}") | sha256sum | cut -c1-16)
src=$cache/src-$src_key

# Bump when a change to this script changes what it builds.
recipe=1
# shellcheck disable=SC2086
build_key=$( (echo "$src_key $variant $recipe"; cat $frags) | sha256sum | cut -c1-16)
out=$cache/build-$variant-$build_key
link=$cache/kernel-$variant

# A finished build is used without waiting for another one in progress.
cached() {
	[ -f "$out/.cask-built" ] || return 1
	say "cached: Linux $(make -s -C "$src" kernelversion) ($BASE_PACKAGE $installed), $variant, $out"
	ln -sfn "$out" "$link"
}
cached && exit 0
if [ -n "${CASK_CACHED_ONLY:-}" ]; then
	say "no finished $variant build of these inputs in $cache"
	exit 3
fi

mkdir -p "$cache"
# One build at a time per cache: a second caller waits, then finds the
# tree built.
exec 9> "$cache/.build-lock"
if ! flock -n 9; then
	say "another kernel build is running in $cache; waiting for it"
	flock 9
fi
cached && exit 0

if [ ! -f "$src/.cask-src-ready" ]; then
	say "unpacking $BASE_PACKAGE $installed into $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" --strip-components=1 -xf "$tarball"
	for p in "${patch_files[@]}"; do
		name=$(basename "$p")
		say "applying $name"
		if ! patch -d "$src.tmp" -p1 --forward --batch --quiet < "$p"; then
			rm -rf "$src.tmp"
			die "patch $name does not apply to $BASE_PACKAGE $installed"
		fi
	done
	touch "$src.tmp/.cask-src-ready"
	mv "$src.tmp" "$src"
fi

kver=$(make -s -C "$src" kernelversion)

say "building Linux $kver ($BASE_PACKAGE $installed), $variant config, $jobs jobs"
say "build directory $out; full log in $out/build.log"
log=$out/build.log
# allnoconfig plus the fragments, in a fresh $out; any wish Kconfig drops
# is fatal.
configure() {
	rm -rf "$out"
	mkdir -p "$out"

	make -s -C "$src" O="$out" "${kmake[@]}" allnoconfig > "$log" 2>&1
	# shellcheck disable=SC2086
	(cd "$out" && env "${kmake[@]}" "$src/scripts/kconfig/merge_config.sh" -m -O "$out" .config $frags) >> "$log" 2>&1
	make -s -C "$src" O="$out" "${kmake[@]}" olddefconfig >> "$log" 2>&1

	# merge_config.sh only warns when Kconfig drops a wish: make it fatal, so
	# the tests never run on a kernel that lacks something they rely on.
	missing=0
	# shellcheck disable=SC2086
	while IFS= read -r line; do
		case $line in
		CONFIG_*=n) sym=${line%%=*}
			if grep -q "^$sym=" "$out/.config"; then
				say "config: $sym should be off but is $(grep "^$sym=" "$out/.config")"
				missing=1
			fi ;;
		CONFIG_*) if ! grep -qxF "$line" "$out/.config"; then
				say "config: wanted $line, got: $(grep -E "^(# )?${line%%=*}[= ]" "$out/.config" || echo unset)"
				missing=1
			fi ;;
		esac
	done < <(cat $frags)
	[ $missing = 0 ] || die "config fragments do not hold on this tree (see above)"
	touch "$out/.cask-configured"
}

# The directory's name is the hash of everything that goes into it, so an
# interrupted build (^C, a CI timeout) of the same inputs goes on where it
# stopped: Kbuild remakes any object whose .cmd file was not written.
if [ -f "$out/.cask-configured" ]; then
	say "resuming an interrupted build"
else
	configure
fi

start=$(date +%s)
make -C "$src" O="$out" "${kmake[@]}" -j"$jobs" "$(basename "$image")" modules >> "$log" 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null; do
	sleep 20
	kill -0 $pid 2>/dev/null || break
	n=$(grep -c '^  CC' "$log" || true)
	say "$(( $(date +%s) - start ))s: $n objects compiled, last: $(tail -n 1 "$log" | cut -c1-70)"
done
if ! wait $pid; then
	tail -n 40 "$log" >&2
	die "kernel build failed; see $log"
fi
touch "$out/.cask-built"
ln -sfn "$out" "$link"
say "built in $(( $(date +%s) - start ))s: $out/$image"
