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
init=$(pgrep -n sleep)
caskctl register android0 "$init"
caskctl list
caskctl show android0
caskctl register android0 "$init"
caskctl unregister host
kill "$init"
sleep 1
caskctl list
set +x
echo "cask-guest: demo end"
