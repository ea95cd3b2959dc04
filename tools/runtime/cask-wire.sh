# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
#
# cask-wire.sh: what the Android wiring of cask-hook --android (LXC,
# tools/lxc) and cask-oci-hook --android (crun, runc) share. Sourced by
# both, never run; installed beside each hook (/usr/share/cask/lxc/ and
# /usr/share/cask/runtime/). POSIX sh; busybox's too.
#
# The rule it keeps (Documentation/runtimes.rst): a container's image is
# untrusted. Nothing of it runs as the host's root: mounts in the
# container's mount namespace are made with util-linux's mount -N, which
# enters it for mount(2) alone; and no path in the image is followed
# from the host where the image could have put a symbolic link.
#
# The caller defines say() (a message to standard error).

# util-linux's mount(8) and umount(8), which have --namespace (2.33 and
# later), in mount_cmd and umount_cmd: they switch to the container's
# mount namespace around mount(2) and umount(2) only, so nothing of the
# container's runs. -i keeps them from running mount.TYPE helpers.
# CASK_MOUNT names the mount(8) to use (its umount(8) beside it).
mount_cmd=
umount_cmd=
# shellcheck disable=SC2034 # umount_cmd is the hooks'
find_mount() {
	for m in ${CASK_MOUNT:-$(command -v mount) /usr/bin/mount /bin/mount /usr/sbin/mount /sbin/mount}; do
		u=${m%/*}/umount
		if [ -x "$m" ] && [ -x "$u" ] &&
			"$m" --help 2>&1 | grep -q -- --namespace &&
			"$u" --help 2>&1 | grep -q -- --namespace; then
			mount_cmd=$m
			umount_cmd=$u
			return 0
		fi
	done
	say "no mount(8) with --namespace: --android needs util-linux's mount and umount (2.33 or later), not busybox's"
	return 1
}

# $1$2, $2 a path in the container's root file system $1 (LXC_ROOTFS_MOUNT,
# or /proc/PID/root from the host), or nothing and a message: no part of
# $2 may be a symbolic link. The image's links would resolve against the
# host's root there, and mount(2) in the container's namespace would
# follow them. No process of the container runs before the hooks have
# ended, so what is checked is what is used.
beneath() {
	cp_path=$1
	cp_rest=${2#/}
	while [ -n "$cp_rest" ]; do
		cp_path=$cp_path/${cp_rest%%/*}
		case $cp_rest in
		*/*) cp_rest=${cp_rest#*/} ;;
		*) cp_rest= ;;
		esac
		if [ -L "$cp_path" ]; then
			echo "$2 in the container is, or is under, a symbolic link" >&2
			return 1
		fi
	done
	echo "$cp_path"
}

# wire_pressure_owner PID CGROUP: where the container (init PID) has a
# user namespace, give its root the cgroup's memory.pressure: lmkd writes
# its PSI trigger there, and cgroup delegation leaves the file the
# host's. CGROUP is the cell's cgroup file (a path below /sys/fs/cgroup).
# Only the container's own cgroup: never the root cgroup nor one that
# holds a process outside the container's PID namespace (a container left
# in a service's cgroup, a cgroupsPath shared with others), whose
# pressure is not the container's to watch.
wire_pressure_owner() {
	wp_uid=$(awk '$1 == 0 { print $2 }' "/proc/$1/uid_map")
	wp_gid=$(awk '$1 == 0 { print $2 }' "/proc/$1/gid_map")
	wp_dir=/sys/fs/cgroup$2
	if [ -z "$wp_uid" ] || [ "$wp_uid" = 0 ] || [ ! -e "$wp_dir/memory.pressure" ]; then
		return 0
	fi
	wp_ns=$(readlink "/proc/$1/ns/pid") || return 1
	if [ "$2" = / ]; then
		say "not giving the root cgroup's memory.pressure to the container"
		return 0
	fi
	while read -r wp_p; do
		if [ "$(readlink "/proc/$wp_p/ns/pid" 2>/dev/null)" != "$wp_ns" ]; then
			say "not giving $wp_dir/memory.pressure to the container: the cgroup holds pid $wp_p, not the container's"
			return 0
		fi
	done < "$wp_dir/cgroup.procs"
	chown "$wp_uid:${wp_gid:-$wp_uid}" "$wp_dir/memory.pressure"
}

# wire_cell PID ROOT CELLDIR: in the mount namespace of the container
# whose init is PID, bind the cell's power files over ROOT/sys/power (the
# cell's whole power directory where the kernel has no wake_lock: no file
# is made from the host, where a process of the container could turn a
# path into a link between check and use) and its lmk
# directory over ROOT/sys/module/lowmemorykiller/parameters. ROOT is
# where the container's root is in that namespace: "" once it has
# pivoted, its root file system's path before. CELLDIR is the cell's
# sysfs directory as that namespace sees it. A subshell; the reason of a
# failure on standard error. find_mount must have succeeded.
wire_cell() (
	pid=$1
	root=$2
	c=$3
	ns=/proc/$pid/ns/mnt
	ctroot=/proc/$pid/root$root
	ctmount() { "$mount_cmd" -N "$ns" -n -i "$@"; }
	die() {
		[ $# = 0 ] || echo "$*" >&2
		exit 1
	}
	src=$(beneath "/proc/$pid/root" "$c/power") || die
	[ -d "$src" ] || die "no $c/power (cell's power directory)"
	pw=$(beneath "$ctroot" /sys/power) || die
	[ -d "$pw" ] || die "no /sys/power in the container"
	if [ ! -e "$pw/wake_lock" ]; then
		ctmount --bind "$c/power" "$root/sys/power" ||
			die "cannot bind the cell's power directory over /sys/power"
	else
		for f in wake_lock wake_unlock state wakeup_count autosleep; do
			if [ ! -e "$src/$f" ] || [ ! -e "$pw/$f" ]; then
				continue
			fi
			[ ! -L "$pw/$f" ] || die "/sys/power/$f in the container is a symbolic link"
			ctmount --bind "$c/power/$f" "$root/sys/power/$f" ||
				die "cannot bind /sys/power/$f"
		done
	fi
	p=/sys/module/lowmemorykiller/parameters
	pp=$(beneath "$ctroot" $p) || die
	src=$(beneath "/proc/$pid/root" "$c/lmk") || die
	if [ ! -d "$pp" ] || [ ! -d "$src" ]; then
		die "no $p or $c/lmk"
	fi
	ctmount --bind "$c/lmk" "$root$p" || die "cannot bind $p"
)
