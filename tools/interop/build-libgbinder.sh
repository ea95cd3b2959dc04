#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build libgbinder's command line test programs and AOSP's C servicemanager
# statically, for tools/interop/run-libgbinder.sh. Nothing here is patched:
# the libraries are built by their own Makefiles, the programs are compiled
# from their sources as they are and linked with -static against Debian's
# static glib (libglib2.0-dev), the servicemanager against the headers in
# tools/interop/sm-shim (no SELinux, no liblog).
#
# Usage: tools/interop/build-libgbinder.sh LIBGLIBUTIL LIBGBINDER NATIVE OUT
#   LIBGLIBUTIL  a checkout of mer-hybris/libglibutil
#   LIBGBINDER   a checkout of mer-hybris/libgbinder
#   NATIVE       a checkout of AOSP frameworks/native at android-9.0.0_r1
#                (only cmds/servicemanager is used)
#   OUT          where the programs go (made; a build/ below it is scratch)
set -euo pipefail

usage="usage: build-libgbinder.sh LIBGLIBUTIL LIBGBINDER NATIVE OUT"
[ $# = 4 ] || { echo "$usage" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
glibutil=$(cd "$1" && pwd)
gbinder=$(cd "$2" && pwd)
sm=$(cd "$3/cmds/servicemanager" && pwd)
mkdir -p "$4"
out=$(cd "$4" && pwd)
jobs=$(nproc)

for pkg in libglib2.0-dev flex bison; do
	dpkg -s "$pkg" > /dev/null 2>&1 || { echo "install $pkg first (apt-get install $pkg)" >&2; exit 1; }
done

# The sources stay clean: the libraries are built in copies.
build=$out/build
rm -rf "$build"
mkdir -p "$build"
cp -a "$glibutil" "$build/libglibutil"
cp -a "$gbinder" "$build/libgbinder"
make -s -C "$build/libglibutil" -j"$jobs" release
make -s -C "$build/libgbinder" -j"$jobs" LIBGLIBUTIL_PATH="$build/libglibutil" release_lib

# The flags of libgbinder's test/common/Makefile, linked statically.
read -ra glib_cflags <<< "$(pkg-config --cflags glib-2.0)"
read -ra glib_libs <<< "$(pkg-config --static --libs glib-2.0 gobject-2.0)"
cflags=(-O2 -Wall -DGLIB_VERSION_MAX_ALLOWED=GLIB_VERSION_2_32
	-DGLIB_VERSION_MIN_REQUIRED=GLIB_VERSION_MAX_ALLOWED
	-I"$build/libgbinder/include" -I"$build/libglibutil/include" "${glib_cflags[@]}")
libs=("$build/libgbinder/build/release/libgbinder.a"
      "$build/libglibutil/build/release/libglibutil.a" "${glib_libs[@]}")
test=$build/libgbinder/test

# glib's getpwnam() warning for static programs is expected: not used here.
link() {
	local exe=$1
	shift
	gcc -static -s "${cflags[@]}" "$@" -o "$out/$exe" "${libs[@]}" 2>&1 |
		{ grep -v -e 'statically linked applications requires' -e 'in function .g_get_user_database_entry' || true; }
	echo "built $out/$exe"
}

for exe in binder-service binder-client binder-list binder-ping binder-dump; do
	link "$exe" "$test/$exe/$exe.c"
done
# binder-call has a command line grammar (bison and flex), as its Makefile.
bison -pcmdline -bcmdline -d -o "$build/cmdline.tab.c" "$test/binder-call/cmdline.y"
flex -o "$build/lex.cmdline.c" "$test/binder-call/cmdline.l"
link binder-call -I"$test/binder-call" -I"$build" "$test/binder-call/binder-call.c" \
	"$build/cmdline.tab.c" "$build/lex.cmdline.c"

# service_manager.c has an unused variable; its own build ignores nothing
# else, neither does this one.
gcc -static -s -O2 -Wall -Wno-unused-but-set-variable -I"$top/tools/interop/sm-shim" \
	"$sm/service_manager.c" "$sm/binder.c" -o "$out/servicemanager"
echo "built $out/servicemanager"
