#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# cask-unshare.sh: run a command as a container made with unshare(1),
# registered as the cask cell NAME for its life (Documentation/runtimes.rst).
# POSIX sh; runs under busybox as well as with util-linux.
#
# Usage: cask-unshare.sh [-U] [-c CGROUP] NAME CMD [ARG...]
#   -U         a user namespace too, its root mapped to the host's uid 0
#              (unshare -r). This isolates nothing on the host's files: they
#              are shared, and the container's root writes them as the
#              host's root. It only makes the cell's files the container's
#              (Documentation/cells.rst). Isolation needs a range of
#              unprivileged host ids (newuidmap, /etc/subuid) or a runtime
#              such as LXC with lxc.idmap, and a root of the container's own
#   -c CGROUP  cgroup v2 directory below /sys/fs/cgroup (default cask-NAME),
#              a relative path without ".", ".." or empty components; made
#              (with its missing parents) if missing, and what was made is
#              removed at the end. An existing cgroup with processes in it
#              is refused
#
# The container: new IPC, mount, UTS and PID namespaces (its own /proc), in
# CGROUP. Its init waits until the cell is registered ("NAME PID" to
# /sys/kernel/cask/register) before it runs CMD, so that nothing in it
# uses a cask driver first and gets an auto cell. When CMD ends, the cell
# is unregistered if it is still the cell registered (the same ipc_ns and
# id: the name may be another's by then); the exit status is CMD's. SIGINT and SIGTERM kill the container.
# It shares the host's file systems, /dev included: the cask devices are
# there as on the host. A container with a root of its own bind-mounts
# them (Documentation/runtimes.rst).
# CASK_SYSFS and CASK_CGROOT override /sys/kernel/cask and /sys/fs/cgroup.
set -eu

cask=${CASK_SYSFS:-/sys/kernel/cask}
cgroot=${CASK_CGROOT:-/sys/fs/cgroup}
userns=
cgroup=

usage() {
	echo "usage: cask-unshare.sh [-U] [-c CGROUP] NAME CMD [ARG...]" >&2
	exit 2
}

while getopts Uc: opt; do
	case $opt in
	U) userns=-r ;;
	c) cgroup=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
name=$1
shift
say() { echo "cask-unshare.sh: $*" >&2; }
case $name in
*[!A-Za-z0-9_.-]* | . | .. | '')
	say "'$name' cannot name a cask cell (1 to 32 characters of [A-Za-z0-9_.-])"
	exit 2
	;;
esac
if [ ${#name} -gt 32 ]; then
	say "'$name' is longer than a cell name may be (32)"
	exit 2
fi
cgroup=${cgroup:-cask-$name}
case /$cgroup/ in
*/../* | */./* | *//*)
	say "cgroup '$cgroup': a path below $cgroot without '.', '..' or empty components"
	exit 2
	;;
esac
[ -e "$cask/register" ] || { say "cask_core is not loaded"; exit 1; }
[ -d "$cgroot" ] || { say "no cgroup v2 hierarchy at $cgroot"; exit 1; }

cg=$cgroot/$cgroup
# The shallowest directory made here, removed with those below it at the end.
made=
if [ -d "$cg" ]; then
	# Another's: the container's end would kill its processes. Files of
	# cgroupfs have size 0: their content tells.
	if grep -q '^populated 1' "$cg/cgroup.events" 2>/dev/null ||
		[ -n "$(cat "$cg/cgroup.procs" 2>/dev/null || true)" ]; then
		say "cgroup $cg has processes: not the container's"
		exit 1
	fi
else
	made=$cg
	while [ "${made%/*}" != "$cgroot" ] && [ ! -d "${made%/*}" ]; do
		made=${made%/*}
	done
	mkdir -p "$cg"
fi
tmp=$(mktemp -d)
mkfifo -m 600 "$tmp/go"
# Open read-write: writing "go" never blocks, even if the init has died.
exec 3<> "$tmp/go"
init=

cleanup() {
	exec 3>&-
	rm -rf "$tmp"
	d=$cg
	while [ -n "$made" ] && rmdir "$d" 2>/dev/null && [ "$d" != "$made" ]; do
		d=${d%/*}
	done
}

# Kill every process of the container: its cgroup's.
kill_all() {
	if [ -e "$cg/cgroup.kill" ]; then
		echo 1 > "$cg/cgroup.kill" 2>/dev/null || true
	else
		# shellcheck disable=SC2046 # one pid a word
		kill -KILL $(cat "$cg/cgroup.procs" 2>/dev/null) 2>/dev/null || true
	fi
}

# The child of process $1 (without pgrep: busybox may lack it).
child_of() {
	for f in /proc/[0-9]*/status; do
		if grep -q "^PPid:[[:space:]]*$1\$" "$f" 2>/dev/null; then
			f=${f%/status}
			echo "${f#/proc/}"
			return 0
		fi
	done
}

# Into the cgroup, then unshare; the init (unshare's child) waits for "go".
# shellcheck disable=SC2016 # expanded by the inner shells
sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" \
	unshare $userns --ipc --mount --uts --pid --fork --mount-proc \
	sh -c 'read -r _ < "$0" && exec "$@"' "$tmp/go" "$@" 3>&- &
upid=$!
trap kill_all INT TERM

# unshare's child is the container's init.
tries=0
while [ -z "$init" ]; do
	init=$(child_of "$upid")
	tries=$((tries + 1))
	if [ -z "$init" ] && { [ $tries -gt 100 ] || ! kill -0 "$upid" 2>/dev/null; }; then
		say "the container did not start"
		kill_all
		wait "$upid" || true
		cleanup
		exit 1
	fi
	[ -n "$init" ] || sleep 0.1
done

if ! err=$({ printf '%s %s\n' "$name" "$init" > "$cask/register"; } 2>&1); then
	say "registering cell $name (pid $init) failed: ${err##*: }"
	kill_all
	wait "$upid" || true
	cleanup
	exit 1
fi
# The cell's ipc_ns and id (inodes are reused; ids are not).
cell_of() {
	i=$(cat "$cask/cells/$1/ipc_ns" 2>/dev/null) &&
		n=$(cat "$cask/cells/$1/id" 2>/dev/null) &&
		[ -n "$i" ] && [ -n "$n" ] && echo "$i $n"
}
this=$(cell_of "$name" || true)
echo go >&3

status=0
wait "$upid" || status=$?
# A signal interrupts wait: wait again for the container's end.
while kill -0 "$upid" 2>/dev/null; do
	wait "$upid" || status=$?
done
# Only the cell registered above: the name may be another's by now.
if [ -n "$this" ] && [ "$(cell_of "$name" || true)" = "$this" ]; then
	printf '%s\n' "$name" > "$cask/unregister" 2>/dev/null || true
fi
cleanup
exit $status
