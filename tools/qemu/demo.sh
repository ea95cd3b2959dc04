#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What `make run` shows: a container gets a cell, caskctl lists it, and the
# cell goes when the container does.
echo "cask-guest: demo start"
set -x
mkdir -p /sys/fs/cgroup/demo
caskctl list
# A container: new user, IPC, mount and PID namespaces in cgroup "demo".
sh -c 'echo $$ > /sys/fs/cgroup/demo/cgroup.procs; exec unshare -U -r -i -m -p -f sleep 30' &
sleep 1
# Its init is the process of the cgroup that is in another PID namespace.
set +x
while read -r p; do
	[ "$(readlink "/proc/$p/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] && init=$p
done < /sys/fs/cgroup/demo/cgroup.procs
set -x
caskctl register android0 "$init"
caskctl list
caskctl show android0
# Errors are explained:
caskctl register android0 "$init"
caskctl unregister host
# Inside the container, the cell's own name (and no other cell's files):
nsenter -t "$init" -U -i -m -p cat /sys/kernel/cask/self
# Logs: the host and the container each write to /dev/log/main...
if [ -c /dev/log/main ]; then
	printf '\004host\000hello from the host\000' > /dev/log/main
	nsenter -t "$init" -U -i -m -p sh -c \
		"printf '\\004app\\000hello from android0\\000' > /dev/log/main"
	# ...each sees only its own...
	logcat -d -b main -v brief
	nsenter -t "$init" -U -i -m -p logcat -d -b main -v brief
	# ...and the host can read every cell, merged in time order.
	logcat -d -b main --all-cells
	cat /sys/kernel/cask/cells/android0/logger/main/bytes_written
fi
# The container ends; so does its cell. (An init only takes SIGKILL from
# outside its PID namespace.)
kill -KILL "$init"
sleep 2
caskctl list
set +x
echo "cask-guest: demo end"
