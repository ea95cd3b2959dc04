#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What CI can check of meta-cask without bitbake (none is packaged for
# Debian). Each check prints OK or FAIL with the reason:
#
#   patches    the bbappend's patches are patches/series, same files, same
#              order, besides patches for vanilla kernels only (vanilla-*)
#   kconfig    every option of tools/kernel/base.config is classified in
#              tools/kernel/driver-options, and cask.cfg is exactly the
#              "driver" ones, as base.config sets them, and keeps a
#              built-in kernel binder off /dev/binder (ANDROID_BINDER_DEVICES="")
#   files      every file a recipe names exists (require, file://, ${S}/...,
#              the kernel's selftest files, LIC_FILES_CHKSUM and its md5);
#              S is ${UNPACKDIR}/ and SRC_URI's destsuffix
#   modules    the copies of drivers/Kbuild's module list (CASK_MODULES,
#              dkms.conf, modules-load.d, softdeps) are what
#              tools/module-list.sh writes; the recipe's binder devices
#              are modprobe.d's
#   build      module.bbclass's two make calls, against the cached test
#              kernel (KERNEL_SRC its source, O= its build directory, as
#              STAGING_KERNEL_DIR and STAGING_KERNEL_BUILDDIR) or else
#              Debian's linux-headers-6.12, run tools/kernel-check.sh,
#              build the modules and install every listed one into a
#              staging directory
#
# Usage: tools/yocto-check.sh [--write-cfg] [--no-build]
#   --write-cfg  rewrite meta-cask's cask.cfg from base.config and
#                driver-options, then check
#   --no-build   skip the build check
# Exit status: 0 all OK, 1 a check failed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${CASK_CACHE:-$HOME/.cache/cask}
layer=$top/meta-cask
bbappend=$layer/recipes-kernel/linux/linux-yocto_6.12.bbappend
cfg=$layer/recipes-kernel/linux/files/cask.cfg
modrecipe=$layer/recipes-kernel/cask/cask-modules_git.bb
base=$top/tools/kernel/base.config
classes=$top/tools/kernel/driver-options
bsp=$top/tools/bsp/etc

write_cfg=0
build=1
for arg in "$@"; do
	case $arg in
	--write-cfg) write_cfg=1 ;;
	--no-build) build=0 ;;
	*) echo "usage: $0 [--write-cfg] [--no-build]" >&2; exit 2 ;;
	esac
done

t0=$(date +%s)
say() { printf '[yocto-check] %s\n' "$*"; }
failures=0
ok() { printf '[yocto-check] OK   %-8s %s\n' "$1" "$2"; }
fail() {
	printf '[yocto-check] FAIL %-8s %s\n' "$1" "$2"
	failures=$((failures + 1))
}
# A recipe's text with continuation lines joined.
joined() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1"; }
# Lines as one line of words.
words() { tr '\n' ' ' | sed 's/ *$//'; }
# The entries of a list file: comments and blank lines dropped.
entries() { sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//' -e '/^$/d' "$1"; }

# --- patches ----------------------------------------------------------
# The bbappend's patches: exactly those of patches/series, in its order;
# besides them only patches for vanilla kernels (vanilla-* in the layer's
# files/, or patches/vanilla/), which Debian's source must not get.
series=$(entries "$top/patches/series")
appended=$(joined "$bbappend" | grep -o 'file://[^ ";]*\.patch' | sed 's|file://||' || true)
from_series=
own=
while read -r p; do
	case $p in
	'') ;;
	vanilla-*|vanilla/*) own+="$p"$'\n' ;;
	*) from_series+="$p"$'\n' ;;
	esac
done <<< "$appended"
from_series=${from_series%$'\n'}
own=${own%$'\n'}
if [ "$series" = "$from_series" ]; then
	ok patches "$(echo "$series" | grep -c .) patches of patches/series in order, and $(echo "$own" | grep -c .) for vanilla kernels"
elif [ "$(sort <<< "$series")" = "$(sort <<< "$from_series")" ]; then
	fail patches "$(basename "$bbappend") has the patches of patches/series in another order:
  series:   $(words <<< "$series")
  bbappend: $(words <<< "$from_series")"
else
	fail patches "$(basename "$bbappend") does not list the patches of patches/series:
$(diff <(sort <<< "$series") <(sort <<< "$from_series") | sed -n 's/^</  only in series:   /p; s/^>/  only in bbappend: /p')"
fi

# --- kconfig ----------------------------------------------------------
# base.config's assignments (CONFIG_X=..., "# CONFIG_X is not set").
assignments() {
	sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*=.*\)$/\1/p' \
		-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/&/p' "$1"
}
option_of() { sed -e 's/^# //' -e 's/[= ].*//'; }
base_opts=$(assignments "$base" | option_of)
kconfig_ok=1
unclassified=$(comm -23 <(echo "$base_opts" | sort) <(entries "$classes" | awk '{print $1}' | sort))
stale=$(comm -13 <(echo "$base_opts" | sort) <(entries "$classes" | awk '{print $1}' | sort))
dup=$(entries "$classes" | awk '{print $1}' | sort | uniq -d)
bad=$(entries "$classes" | awk '$2 != "driver" && $2 != "harness" {print $1}')
if [ -n "$unclassified$stale$dup$bad" ]; then
	kconfig_ok=0
	fail kconfig "tools/kernel/driver-options does not classify base.config exactly:${unclassified:+
  in base.config, not classified (add a driver or harness line): $(words <<< "$unclassified")}${stale:+
  classified, not in base.config (remove the line): $(words <<< "$stale")}${dup:+
  classified twice: $(words <<< "$dup")}${bad:+
  neither driver nor harness: $(words <<< "$bad")}"
fi
driver_opts=" $(entries "$classes" | awk '$2 == "driver" {print $1}' | tr '\n' ' ') "
wanted_cfg=$(assignments "$base" | awk -v want="$driver_opts" '{
	o = $0; sub(/^# /, "", o); sub(/[= ].*/, "", o)
	if (index(want, " " o " ")) print }')
if [ $write_cfg = 1 ]; then
	{
		echo "# SPDX-License-Identifier: GPL-2.0"
		echo "#"
		echo "# What cask's modules need of the kernel: the \"driver\" options of"
		echo "# tools/kernel/driver-options, as tools/kernel/base.config sets them."
		echo "# Written by tools/yocto-check.sh --write-cfg; do not edit by hand."
		echo "$wanted_cfg"
	} > "$cfg"
	say "wrote ${cfg#"$top"/}"
fi
if [ ! -f "$cfg" ]; then
	fail kconfig "${cfg#"$top"/} is missing (tools/yocto-check.sh --write-cfg makes it)"
elif [ "$(assignments "$cfg")" != "$wanted_cfg" ]; then
	fail kconfig "${cfg#"$top"/} differs from the driver options of base.config (tools/yocto-check.sh --write-cfg):
$(diff <(echo "$wanted_cfg") <(assignments "$cfg") | sed -n 's/^</  wanted:  /p; s/^>/  in cfg:  /p')"
elif ! grep -qx 'CONFIG_ANDROID_BINDER_DEVICES=""' "$cfg"; then
	# linux-yocto's binder is bool: built in with its default devices it
	# takes /dev/binder, hwbinder and vndbinder before cask_binder loads.
	fail kconfig "${cfg#"$top"/} does not set CONFIG_ANDROID_BINDER_DEVICES=\"\" (a built-in kernel binder would take /dev/binder; classify it driver, with \"\" in base.config)"
elif [ $kconfig_ok = 1 ]; then
	ok kconfig "cask.cfg is the $(echo "$wanted_cfg" | wc -l) driver options of base.config's $(echo "$base_opts" | wc -l), CONFIG_ANDROID_BINDER_DEVICES=\"\" among them"
fi

# --- the kernel the build check and the selftest recipe use ------------
kdir=
ksrc=
if [ -f "$cache/kernel-debug/.cask-built" ]; then
	kdir=$(readlink -f "$cache/kernel-debug")
	ksrc=$(readlink -f "$kdir/source")
	kfrom="the cached test kernel"
elif [ $build = 1 ]; then
	say "no cached test kernel in $cache; using Debian's linux-headers-6.12"
	"$top/tools/install-deps.sh" all
	"$top/tools/install-deps.sh" headers
	# shellcheck source=kernel/base
	. "$top/tools/kernel/base"
	kdir=/usr/src/linux-headers-${HEADERS_PACKAGE#linux-headers-}
	kfrom="Debian's ${HEADERS_PACKAGE}"
fi

# --- files ------------------------------------------------------------
# file:// entries are looked up as bitbake does: FILESEXTRAPATHS, then
# the recipe's directory's ${BPN}/ and files/.
files_missing=()
nfiles=0
for recipe in $(find "$layer" -name '*.bb' -o -name '*.bbappend' -o -name '*.inc' | sort); do
	rdir=$(dirname "$recipe")
	rname=$(basename "$recipe")
	bpn=${rname%%_*}
	bpn=${bpn%.bb}
	bpn=${bpn%.inc}
	text=$(joined "$recipe")
	search=()
	extra=$(echo "$text" | sed -n 's/^FILESEXTRAPATHS[^=]*= *"\(.*\)"/\1/p')
	IFS=: read -r -a dirs <<< "$extra"
	for d in "${dirs[@]}"; do
		d=${d//\$\{THISDIR\}/$rdir}
		d=${d//\$\{CASK_TOPDIR\}/$top}
		[ -n "$d" ] && search+=("$d")
	done
	search+=("$rdir/$bpn" "$rdir/files" "$rdir")
	where() { echo "${recipe#"$top"/}: $1"; }
	# Paths below bitbake's ${S} (this tree) and ${STAGING_KERNEL_DIR}.
	# shellcheck disable=SC2016 # bitbake's variables, matched literally
	in_tree=$(echo "$text" | grep -v '^ *#' | grep -o '\${S}/[^ "'"'"';]*' |
		sed 's|^\${S}/||; s|/\.$||; s|/$||' || true)
	# shellcheck disable=SC2016
	in_kernel=$(echo "$text" | grep -v '^ *#' | grep -o '\${STAGING_KERNEL_DIR}/[^ "'"'"';]*' |
		sed 's|^\${STAGING_KERNEL_DIR}/||' || true)
	while read -r req; do
		[ -n "$req" ] || continue
		nfiles=$((nfiles + 1))
		[ -f "$rdir/$req" ] || files_missing+=("$(where "require $req")")
	done < <(echo "$text" | sed -n 's/^\(require\|include\) \+\([^ ]*\)/\2/p')
	while read -r f; do
		[ -n "$f" ] || continue
		nfiles=$((nfiles + 1))
		found=0
		for d in "${search[@]}"; do
			[ -e "$d/$f" ] && { found=1; break; }
		done
		[ $found = 1 ] || files_missing+=("$(where "file://$f (looked in ${search[*]#"$top"/})")")
	done < <(echo "$text" | grep -v '^ *#' | grep -v LIC_FILES_CHKSUM | grep -o 'file://[^ ";]*' | sed 's|file://||')
	while read -r p; do
		[ -n "$p" ] || continue
		nfiles=$((nfiles + 1))
		[ -e "$top/$p" ] || files_missing+=("$(where "\${S}/$p")")
	done <<< "$in_tree"
	while read -r p; do
		[ -n "$p" ] || continue
		if [ -z "$ksrc" ]; then
			say "files: not checked without a kernel source: \${STAGING_KERNEL_DIR}/$p"
			continue
		fi
		nfiles=$((nfiles + 1))
		[ -e "$ksrc/$p" ] || files_missing+=("$(where "\${STAGING_KERNEL_DIR}/$p (not in $ksrc)")")
	done <<< "$in_kernel"
	lic=$(echo "$text" | sed -n 's/^LIC_FILES_CHKSUM = "file:\/\/\([^"]*\)"/\1/p')
	if [ -n "$lic" ]; then
		nfiles=$((nfiles + 1))
		lfile=${lic%%;*}
		begin=$(echo "$lic" | sed -n 's/.*beginline=\([0-9]*\).*/\1/p')
		end=$(echo "$lic" | sed -n 's/.*endline=\([0-9]*\).*/\1/p')
		md5=$(echo "$lic" | sed -n 's/.*md5=\([0-9a-f]*\).*/\1/p')
		if [ ! -f "$top/$lfile" ]; then
			files_missing+=("$(where "LIC_FILES_CHKSUM names $lfile, which does not exist")")
		else
			have=$(sed -n "${begin:-1},${end:-\$}p" "$top/$lfile" | md5sum | cut -d' ' -f1)
			[ "$have" = "$md5" ] ||
				files_missing+=("$(where "LIC_FILES_CHKSUM md5 of $lfile lines ${begin:-1}-${end:-end} is $have, the recipe says $md5")")
		fi
	fi
done
# The source directory: S is below UNPACKDIR, where the git fetcher
# unpacks on every release layer.conf claims, at SRC_URI's destsuffix.
inc=$layer/recipes-kernel/cask/cask.inc
# shellcheck disable=SC2016 # bitbake's variables, matched literally
src_s=$(sed -n 's/^S = "\(.*\)"$/\1/p' "$inc")
src_dest=$(sed -n 's/^SRC_URI = ".*;destsuffix=\([^;"]*\).*"$/\1/p' "$inc")
# shellcheck disable=SC2016
if [ -z "$src_dest" ] || [ "$src_s" != "\${UNPACKDIR}/$src_dest" ]; then
	files_missing+=("${inc#"$top"/}: S is \"$src_s\", not \"\${UNPACKDIR}/<SRC_URI's destsuffix>\" (destsuffix: ${src_dest:-none})")
fi
if [ ${#files_missing[@]} = 0 ]; then
	ok files "$nfiles files named by the recipes exist (license checksum matches), S is \${UNPACKDIR}/$src_dest"
else
	fail files "missing or wrong:$(printf '\n  %s' "${files_missing[@]}")"
fi

# --- modules ----------------------------------------------------------
# drivers/Kbuild is the list; tools/module-list.sh writes its copies.
problems=()
stale=$("$top/tools/module-list.sh" check 2>&1) || problems+=("$stale")
listed=$("$top/tools/module-list.sh" list 2>/dev/null | cut -d' ' -f1) || listed=
conf_devices=$(sed -n 's/^options cask_binder .*devices=\([^ ]*\).*/\1/p' "$bsp/modprobe.d/cask.conf")
recipe_devices=$(sed -n 's/^CASK_BINDER_DEVICES ?= "\(.*\)"/\1/p' "$modrecipe")
[ "$conf_devices" = "$recipe_devices" ] ||
	problems+=("CASK_BINDER_DEVICES ($recipe_devices) is not modprobe.d/cask.conf's devices= ($conf_devices)")
if [ ${#problems[@]} = 0 ]; then
	ok modules "$(words <<< "$listed") (drivers/Kbuild; CASK_MODULES, dkms.conf, modules-load.d, softdeps as written from it)"
else
	fail modules "the module list's copies or the binder devices disagree:
$(printf '%s\n' "${problems[@]}" | sed 's/^/  /')"
fi

# --- build ------------------------------------------------------------
if [ $build = 0 ]; then
	say "build: skipped (--no-build)"
elif [ ! -f "$kdir/Makefile" ]; then
	fail build "no kernel build directory ($kdir has no Makefile)"
else
	work=$cache/modules-yocto${CASK_TAG:+-$CASK_TAG}
	staging=$work.staging
	# module.bbclass's layout: KERNEL_SRC is STAGING_KERNEL_DIR (the
	# source), O is STAGING_KERNEL_BUILDDIR (the build output). The
	# cached kernel is an O= build, so the two differ as they do there;
	# Debian's headers are one directory.
	ksrc_make=${ksrc:-$kdir}
	say "build: module.bbclass's make calls against $kfrom (KERNEL_SRC=$ksrc_make O=$kdir), in $work"
	mkdir -p "$work/tools"
	rm -rf "$staging"
	rsync -a --delete --exclude .git "$top/Makefile" "$top/Kbuild" "$top/drivers" "$top/include" "$work/"
	# The recipe's source is the whole tree: the Makefile runs
	# tools/kernel-check.sh first when it is there, so the copy has it.
	cp "$top/tools/kernel-check.sh" "$work/tools/"
	kver=$(make -s -C "$kdir" kernelrelease)
	log=$work.log
	# That the modules target runs it here, with both directories
	# (MAKE=true: the Makefile's commands only, not the kernel's make;
	# -n prints the command whether or not the file is there).
	kcheck="tools/kernel-check.sh $ksrc_make $kdir"
	if [ ! -x "$work/tools/kernel-check.sh" ]; then
		fail build "$work/tools/kernel-check.sh is missing: the build would not check the kernel"
	elif ! make -n -C "$work" KERNEL_SRC="$ksrc_make" O="$kdir" MAKE=true modules > "$log" 2>&1 ||
	   ! grep -qF "$kcheck" "$log"; then
		fail build "make modules would not run $kcheck; make -n printed:
$(tail -n 15 "$log" | sed 's/^/  /')"
	# As module.bbclass: do_compile, then do_install (MODLIB, DEPMOD=echo:
	# the image's depmod runs later).
	elif ! make -C "$work" -j"$(nproc)" KERNEL_SRC="$ksrc_make" O="$kdir" > "$log" 2>&1; then
		fail build "make KERNEL_SRC=$ksrc_make O=$kdir failed; last lines of $log:
$(tail -n 15 "$log" | sed 's/^/  /')"
	elif ! make -C "$work" KERNEL_SRC="$ksrc_make" O="$kdir" DEPMOD=echo \
		MODLIB="$staging/lib/modules/$kver" INSTALL_FW_PATH="$staging/lib/firmware" \
		modules_install >> "$log" 2>&1; then
		fail build "make modules_install failed; last lines of $log:
$(tail -n 15 "$log" | sed 's/^/  /')"
	else
		missing=()
		for m in $listed; do
			[ -n "$(find "$staging/lib/modules/$kver" -name "$m.ko*" -print -quit)" ] ||
				missing+=("$m")
		done
		if [ ${#missing[@]} != 0 ]; then
			fail build "not installed into $staging/lib/modules/$kver: ${missing[*]}"
		elif [ ! -f "$work/Module.symvers" ]; then
			fail build "no Module.symvers in the top directory (module.bbclass installs it)"
		else
			where=$(cd "$staging/lib/modules/$kver" && find . -name 'cask_core.ko*' -printf '%h' -quit)
			ok build "KERNEL_SRC=$ksrc_make O=$kdir, kernel-check.sh run: $(echo "$listed" | wc -l) modules built for $kver, installed as $staging/lib/modules/$kver/$(dirname "${where#./}")/*/NAME.ko*"
		fi
	fi
fi

say "$failures failed, $(( $(date +%s) - t0 ))s"
[ $failures = 0 ]
