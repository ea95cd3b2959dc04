#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build and install cask through DKMS (dkms.conf) for Debian's stock
# kernels, as a distribution user would: 6.12 LTS, its PREEMPT_RT flavour
# and bookworm's default 6.1 LTS. W=1 and warnings as errors; installed
# with "dkms autoinstall", as a new kernel's postinst does. A kernel cask
# cannot be built for is skipped with the reason tools/kernel-check.sh
# gives (missing exports or interfaces), not failed, but "dkms
# autoinstall" for it must succeed without building anything.
#
# Usage: dkms-check.sh [HEADERS-METAPACKAGE...]
#   default: linux-headers-6.12-amd64 linux-headers-6.12-rt-amd64
#            linux-headers-amd64 (bookworm: 6.1)
# Everything DKMS writes stays below $CASK_CACHE/dkms[-$CASK_TAG] (its own
# dkms, source and install trees): nothing is registered with the system's
# DKMS, nothing is installed into /lib/modules.
# Prints one line per kernel, "[dkms] VERSION: OK|FAILED|SKIPPED ...", and
# exits non-zero if any kernel failed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${CASK_CACHE:-$HOME/.cache/cask}
work=$cache/dkms${CASK_TAG:+-$CASK_TAG}
say() { printf '[dkms] %s\n' "$*"; }
die() { printf '[dkms] error: %s\n' "$*" >&2; exit 1; }

# dkms.conf sets AUTOINSTALL for the kernel "dkms autoinstall" builds for:
# the first of several -k (${kernelver[0]} in dkms), read from its
# /proc/$$/cmdline, here that of a bash given the same arguments.
autoinstall_for() {
	(cd "$top" && bash -c '. ./dkms.conf && echo "${AUTOINSTALL:-no}"' dkms autoinstall "$@")
}
if [ "$(autoinstall_for -k 6.1.0-0-amd64 -k 6.12.0-0-amd64)" != no ] ||
	[ "$(autoinstall_for -k 6.12.0-0-amd64 -k 6.1.0-0-amd64)" != yes ] ||
	[ "$(autoinstall_for --kernelver=6.1.0-0-amd64/x86_64)" != no ]; then
	die "dkms.conf: AUTOINSTALL does not follow the first -k of dkms autoinstall"
fi

if [ $# -gt 0 ]; then
	metas=("$@")
else
	metas=(linux-headers-6.12-amd64 linux-headers-6.12-rt-amd64 linux-headers-amd64)
fi

# Packages: dkms and the headers metapackages, each of which depends on
# one versioned headers package (and, in Debian, its kernel image).
need=()
command -v dkms >/dev/null || need+=(dkms)
for m in "${metas[@]}"; do
	dpkg-query -W -f='${Status}' "$m" 2>/dev/null | grep -q 'ok installed' || need+=("$m")
done
if [ ${#need[@]} -gt 0 ]; then
	say "installing ${need[*]} (apt-get; a kernel image comes with each headers package)"
	export DEBIAN_FRONTEND=noninteractive
	# Those images are not booted from this machine's /boot: no initramfs
	# for them (minutes each).
	export INITRD=No
	apt-get update -qq || die "apt-get update failed"
	apt-get install -y -qq --no-install-recommends "${need[@]}" > /tmp/cask-dkms-apt.log 2>&1 || {
		tail -n 20 /tmp/cask-dkms-apt.log >&2
		die "apt-get install ${need[*]} failed (log: /tmp/cask-dkms-apt.log)"
	}
fi

# A private DKMS: its own trees, fresh each run.
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
[ -n "$ver" ] || die "no PACKAGE_VERSION in $top/dkms.conf"
rm -rf "$work"
src=$work/source/cask-$ver
mkdir -p "$src/tools" "$work/tree" "$work/install"
cp -r "$top/dkms.conf" "$top/Makefile" "$top/Kbuild" "$top/drivers" "$top/include" "$src/"
cp "$top/tools/kernel-check.sh" "$src/tools/"
find "$src" \( -name '*.o' -o -name '*.ko' -o -name '*.cmd' -o -name '*.mod*' \) -delete
dkms_opts=(--dkmstree "$work/tree" --sourcetree "$work/source" --installtree "$work/install")
dkms add -m cask -v "$ver" "${dkms_opts[@]}" > "$work/add.log" 2>&1 || {
	cat "$work/add.log" >&2
	die "dkms add failed"
}
# What dkms.conf builds, by its own reading.
mapfile -t mods < <(cd "$src" && bash -c '. ./dkms.conf && printf "%s\n" "${BUILT_MODULE_NAME[@]}"')
say "cask $ver through $(dkms --version): ${mods[*]}"

failed=0
results=()
for m in "${metas[@]}"; do
	pkg=$(dpkg-query -W -f='${Depends}' "$m" | tr ',' '\n' | sed -n 's/^ *\(linux-headers-[0-9][^ ]*\).*/\1/p' | head -n 1)
	kver=${pkg#linux-headers-}
	kdir=/usr/src/$pkg
	if [ -z "$pkg" ] || [ ! -f "$kdir/Module.symvers" ]; then
		die "$m: cannot find the headers package it depends on (${pkg:-none})"
	fi
	start=$(date +%s)
	log=$work/$kver.log
	mkdir -p "$work/install/$kver"
	if ! why=$("$top/tools/kernel-check.sh" "$kdir" 2>&1); then
		why=$(echo "$why" | sed -n 's/^kernel-check:   //p' | paste -sd ';' | sed 's/;/; /g')
		# What a kernel package's postinst runs (/etc/kernel/postinst.d/dkms):
		# it must succeed and build nothing (dkms.conf's BUILD_EXCLUSIVE_KERNEL
		# and AUTOINSTALL), or installing that kernel fails.
		if dkms autoinstall -k "$kver" --kernelsourcedir "$kdir" --no-depmod \
			"${dkms_opts[@]}" > "$log" 2>&1 &&
		   ! dkms status -m cask -v "$ver" -k "$kver" "${dkms_opts[@]}" | grep -q "$kver"; then
			results+=("$kver: SKIPPED (dkms autoinstall skips it), the kernel lacks: $why")
		else
			failed=1
			tail -n 10 "$log" >&2
			results+=("$kver: FAILED, dkms autoinstall for a kernel cask does not support failed or built (see $log); the kernel lacks: $why")
		fi
		say "${results[-1]}"
		continue
	fi
	# Built with W=1 first, then installed by "dkms autoinstall", as for a
	# new kernel: that also checks that dkms.conf autoinstalls on it.
	say "$kver: dkms build (W=1, -Werror) and autoinstall"
	if KBUILD_EXTRA_WARN=1 KCFLAGS=-Werror dkms build -m cask -v "$ver" -k "$kver" -j 1 \
		--kernelsourcedir "$kdir" "${dkms_opts[@]}" > "$log" 2>&1 &&
	   dkms autoinstall -k "$kver" --kernelsourcedir "$kdir" \
		--no-depmod "${dkms_opts[@]}" >> "$log" 2>&1; then
		mklog=$work/tree/cask/$ver/$kver/x86_64/log/make.log
		warnings=$(grep -c 'warning:' "$mklog" 2>/dev/null || true)
		bad=()
		for mod in "${mods[@]}"; do
			ko=$(find "$work/install/$kver" -name "$mod.ko*" | head -n 1)
			if [ -z "$ko" ]; then
				bad+=("$mod.ko not installed")
			elif [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" != "$kver" ]; then
				bad+=("$mod.ko is for $(modinfo -F vermagic "$ko" | cut -d' ' -f1)")
			fi
		done
		if [ ${#bad[@]} -gt 0 ] || [ "${warnings:-0}" != 0 ]; then
			failed=1
			results+=("$kver: FAILED, ${bad[*]:-}${warnings:+ $warnings warnings (see $mklog)}")
		else
			results+=("$kver: OK, ${#mods[@]} modules, no warnings, $(( $(date +%s) - start ))s")
		fi
	else
		failed=1
		tail -n 30 "$log" >&2
		mklog=$(find "$work/tree" -name make.log -path "*/$kver/*" | head -n 1)
		[ -z "$mklog" ] || grep -E 'error|warning' "$mklog" | head -n 20 >&2 || true
		results+=("$kver: FAILED, see $log${mklog:+ and $mklog}")
	fi
	say "${results[-1]}"
done

say "summary:"
for r in "${results[@]}"; do
	say "  $r"
done
exit $failed
