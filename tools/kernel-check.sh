#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Can cask be built for this kernel? Checks what cask cannot do without,
# before the build, so that a kernel that lacks it gets one clear sentence
# instead of a compiler or modpost error: the exported symbols (in the
# kernel's Module.symvers), the kernel interfaces (in its headers) and the
# configuration options. Optional features are probed by Kbuild instead
# (include/cask/compat.h). Documentation/admin/kernels.rst explains each.
#
# Usage: kernel-check.sh KERNEL_SRC [KERNEL_BUILD]
#   KERNEL_SRC    a configured and built tree, or a headers package
#                 (/lib/modules/VERSION/build, /usr/src/linux-headers-*)
#   KERNEL_BUILD  its O= build directory, if separate
# Exit status 0 if cask builds, 1 (and one line per missing item on
# stderr) if not, 2 on a usage error. The outer Makefile's modules target
# runs it first; so do DKMS and Yocto builds, which use that target.
set -euo pipefail

say() { printf 'kernel-check: %s\n' "$*" >&2; }

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 KERNEL_SRC [KERNEL_BUILD]" >&2
	exit 2
fi
ksrc=$1
kbuild=${2:-$1}
[ -d "$ksrc" ] || { say "$ksrc: no such directory"; exit 2; }
[ -d "$kbuild" ] || { say "$kbuild: no such directory"; exit 2; }

# The headers: the tree itself, the source of an O= build directory, or
# the -common directory a Debian headers package's Makefile includes.
hdrs=$ksrc
if [ ! -f "$hdrs/include/linux/sched.h" ]; then
	if [ -f "$hdrs/source/include/linux/sched.h" ]; then
		hdrs=$hdrs/source
	elif inc=$(sed -n 's|^include \(/.*\)/Makefile$|\1|p' "$ksrc/Makefile" 2>/dev/null) &&
	     [ -n "$inc" ] && [ -f "$inc/include/linux/sched.h" ]; then
		hdrs=$inc
	else
		say "$ksrc: cannot find the kernel headers (include/linux/sched.h)"
		exit 2
	fi
fi
symvers=$kbuild/Module.symvers
config=$kbuild/.config
for f in "$symvers" "$config"; do
	[ -f "$f" ] || { say "$f missing: configure and build the kernel (or install its headers package) first"; exit 1; }
done

missing=()
# "a, b and c"
modlist() {
	local out=$1
	shift
	while [ $# -gt 1 ]; do out="$out, $1"; shift; done
	[ $# -eq 1 ] && out="$out and $1"
	printf '%s' "$out"
}
# export SYMBOL MODULES...: SYMBOL must be exported to modules.
export_needed() {
	local sym=$1
	shift
	grep -qP "^0x[0-9a-f]+\t\Q$sym\E\t" "$symvers" ||
		missing+=("export $sym (for $(modlist "$@"))")
}
# api WORD HEADER SINCE MODULES...: an interface of that kernel version.
api_needed() {
	local word=$1 header=$2 since=$3
	shift 3
	grep -qw -- "$word" "$hdrs/include/$header" 2>/dev/null ||
		missing+=("$word() of Linux $since (for $(modlist "$@"))")
}
# config OPTION MODULES...: the option must be y.
config_needed() {
	local opt=$1
	shift
	grep -qx "$opt=y" "$config" || missing+=("$opt=y (for $(modlist "$@"))")
}

all="cask_core and every driver"
for opt in CONFIG_IPC_NS CONFIG_USER_NS CONFIG_PID_NS CONFIG_CGROUPS CONFIG_SYSFS; do
	config_needed "$opt" "$all"
done
# Exported by Debian's kernels, not by vanilla ones (kernels.rst).
export_needed init_ipc_ns cask_core
export_needed put_ipc_ns cask_core
export_needed file_close_fd cask_binder
export_needed can_nice cask_binder
export_needed __wake_up_pollfree cask_binder lowmemorykiller
export_needed zap_page_range_single cask_binder
if grep -qx CONFIG_SECURITY=y "$config"; then
	# Without CONFIG_SECURITY these are inline stubs.
	for hook in set_context_mgr transaction transfer_binder transfer_file; do
		export_needed "security_binder_$hook" cask_binder
	done
fi
# Interfaces newer than some kernels cask might meet (6.1 LTS).
api_needed shrinker_alloc linux/shrinker.h 6.7 cask_binder cask_ashmem lowmemorykiller
api_needed list_lru_add_obj linux/list_lru.h 6.8 cask_binder cask_ashmem lowmemorykiller
api_needed file_close_fd linux/fdtable.h 6.8 cask_binder

[ ${#missing[@]} -eq 0 ] && exit 0
say "cask cannot be built for the kernel in $kbuild; it lacks:"
for m in "${missing[@]}"; do
	say "  $m"
done
say "see Documentation/admin/kernels.rst"
exit 1
