#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cask's module list lives in drivers/Kbuild alone: its "obj-m += DIR/"
# lines in load order, each naming the directory whose Kbuild builds one
# module ("obj-m += NAME.o"; KUnit modules are in DIR/tests/ and in no
# list). Packaging needs copies of it that a build cannot make for it,
# and this script writes them:
#
#   dkms.conf                                cask_module NAME drivers/DIR
#   tools/bsp/etc/modules-load.d/cask.conf   NAME, in load order
#   tools/bsp/etc/modprobe.d/cask.conf       softdep NAME pre: cask_core
#   meta-cask/recipes-kernel/cask/cask-modules_git.bb   CASK_MODULES
#
# The copies stay files of the tree, not made at install time: bitbake
# needs CASK_MODULES (KERNEL_MODULE_AUTOLOAD) when it parses the recipe,
# before the source is fetched; DKMS reads dkms.conf from the source as
# it is; and tools/bsp/etc is copied as it is by make bsp_install, the
# recipe and the test guest, so a board's integrator reads there what
# gets installed. The lines it owns are the last of dkms.conf and of
# modprobe.d/cask.conf, every line of modules-load.d/cask.conf after its
# comments, and the recipe's CASK_MODULES line; the rest is kept.
#
# Usage: tools/module-list.sh [list|write|check]
#   list   "NAME drivers/DIR" per module, in load order (the default)
#   write  rewrite the copies from drivers/Kbuild
#   check  print a diff and exit 1 if a copy is not what write would make
#          (make yocto-check runs it)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
die() { printf 'module-list: %s\n' "$*" >&2; exit 1; }

mods=$(
	sed -n 's|^obj-m += \([A-Za-z0-9_]*\)/$|\1|p' "$top/drivers/Kbuild" | while read -r dir; do
		name=$(sed -n 's/^obj-m += \([A-Za-z0-9_]*\)\.o$/\1/p' "$top/drivers/$dir/Kbuild")
		[ "$(echo "$name" | wc -w)" = 1 ] ||
			die "drivers/$dir/Kbuild has not exactly one 'obj-m += NAME.o' line"
		echo "$name drivers/$dir"
	done
)
names=$(cut -d' ' -f1 <<< "$mods")
# Every driver uses cask_core's symbols: it loads first and is each
# driver's softdep.
[ "$(head -n 1 <<< "$names")" = cask_core ] ||
	die "drivers/Kbuild does not start with core/ (cask_core loads first)"

files=(dkms.conf tools/bsp/etc/modules-load.d/cask.conf tools/bsp/etc/modprobe.d/cask.conf
	meta-cask/recipes-kernel/cask/cask-modules_git.bb)

# What FILE should be: its own lines, with those of the list replaced.
render() {
	case $1 in
	dkms.conf)
		grep -v '^cask_module ' "$top/$1"
		awk '{ print "cask_module " $0 }' <<< "$mods" ;;
	*/modules-load.d/*)
		awk '!/^(#|$)/ { exit } { print }' "$top/$1"
		echo "$names" ;;
	*/modprobe.d/*)
		grep -v '^softdep [^ ]* pre: cask_core$' "$top/$1"
		sed -n '2,$s/.*/softdep & pre: cask_core/p' <<< "$names" ;;
	*.bb)
		sed "s/^CASK_MODULES = .*/CASK_MODULES = \"${names//$'\n'/ }\"/" "$top/$1" ;;
	esac
}

case ${1:-list} in
list)
	echo "$mods" ;;
write)
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' EXIT
	for f in "${files[@]}"; do
		render "$f" > "$tmp"
		# cat, not mv: the file keeps its mode.
		cmp -s "$tmp" "$top/$f" || { cat "$tmp" > "$top/$f"; echo "module-list: wrote $f"; }
	done ;;
check)
	stale=0
	for f in "${files[@]}"; do
		diff -u --label "$f" --label "$f from drivers/Kbuild" "$top/$f" <(render "$f") || stale=1
	done
	[ $stale = 0 ] || die "the module list is drivers/Kbuild: run tools/module-list.sh write" ;;
*)
	echo "usage: $0 [list|write|check]" >&2
	exit 2 ;;
esac
