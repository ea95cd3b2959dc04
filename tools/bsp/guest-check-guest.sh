#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest side of tools/bsp/guest-check.sh, run as /interop/run.sh after
# the guest's /init loaded cask through /etc/init.d/cask-modules. Writes
# "ok NAME" or "not ok NAME" per check and "ok all" at the end to
# /dev/ttyS1.

out=/dev/ttyS1
[ -c $out ] || out=/dev/console
exec > $out 2>&1

cm=/etc/init.d/cask-modules
# The drivers: every listed module but cask_core.
drivers=$(($($cm list | wc -l) - 1))
failed=0
check() {
	name=$1
	shift
	if "$@"; then
		echo "ok $name"
	else
		echo "not ok $name"
		failed=1
	fi
}
loaded() { [ -e "/sys/module/$1/initstate" ]; }
none_loaded() {
	for m in $($cm list); do
		loaded "$m" && return 1
	done
	return 0
}
param_is() { [ "$(cat "/sys/module/$1/parameters/$2")" = "$3" ]; }
log_gid() { [ "$(stat -c %g /dev/log/main)" = 1007 ]; }
run() {
	echo "+ $*"
	"$@" > /tmp/out 2>&1
	rc=$?
	sed 's/^/  | /' /tmp/out
	return $rc
}
says() { grep -q "$1" /tmp/out; }

echo "### cask-modules in the guest ($(uname -r))"
check "boot: status says every module is loaded" run $cm status
check "boot: binder devices from modprobe.d" param_is cask_binder devices binder,hwbinder,vndbinder
check "boot: /dev/log/main has the group log" log_gid

check "stop: exit status 0" run $cm stop
check "stop: nothing loaded" none_loaded
check "stop: /sys/kernel/cask is gone" test ! -e /sys/kernel/cask
check "stop: cask_core unloaded last" sh -c "tail -n 1 /tmp/out | grep -q 'unloaded cask_core\$'"
run $cm status
check "status: exit status 3 when not loaded" test $rc = 3

# modprobe mode: a depmod'ed tree for the running kernel, and a later
# modprobe.d file whose value wins.
kdir=/lib/modules/$(uname -r)
mkdir -p "$kdir/extra"
cp /lib/modules/cask/*.ko "$kdir/extra/"
depmod
# busybox's modprobe reads modprobe.d in directory order, not by name:
# the value is changed in cask.conf itself.
cp /etc/modprobe.d/cask.conf /tmp/cask.conf.orig
sed -i 's/devices=binder,hwbinder,vndbinder/devices=binder,vndbinder/' /etc/modprobe.d/cask.conf
check "modprobe: start" run $cm start
check "modprobe: it was modprobe" says "(modprobe)"
check "modprobe: every module loaded" run $cm status
check "modprobe: modprobe.d's options" param_is cask_binder devices binder,vndbinder
check "modprobe: stop" run $cm stop
cp /tmp/cask.conf.orig /etc/modprobe.d/cask.conf
rm -rf "$kdir"

# A modules.dep without cask's modules (a real system's, cask installed
# in /lib/modules/cask only): not modprobe, insmod from /lib/modules/cask.
mkdir -p "$kdir"
: > "$kdir/modules.dep"
check "no cask in modules.dep: start" run $cm start
check "no cask in modules.dep: insmod from /lib/modules/cask" says "loading from /lib/modules/cask"
check "no cask in modules.dep: every module loaded" run $cm status
run $cm stop
rm -rf "$kdir"

# Failures: a parameter value the module refuses.
mkdir -p /tmp/etc/modules-load.d /tmp/etc/modprobe.d
cp /etc/modules-load.d/cask.conf /tmp/etc/modules-load.d/
cp /etc/modprobe.d/cask.conf /tmp/etc/modprobe.d/
echo "options lowmemorykiller adj=bogus" >> /tmp/etc/modprobe.d/cask.conf
run $cm -c /tmp/etc -d /lib/modules/cask start
check "bad parameter: exit status 1" test $rc = 1
check "bad parameter: names the module and the value" says "lowmemorykiller failed to load: insmod .*adj=bogus"
check "bad parameter: quotes the kernel" says "kernel: lowmemorykiller: "
# Every module but lowmemorykiller: as many as there are drivers.
check "bad parameter: the others loaded" test "$($cm status | grep -c ': [a-z_]* loaded$')" = "$drivers"
run $cm stop

# Failures: cask_core missing, so the drivers after it cannot load.
mkdir -p /tmp/nocore
for ko in /lib/modules/cask/*.ko; do
	[ "$(basename "$ko")" = cask_core.ko ] || ln -s "$ko" /tmp/nocore/
done
run $cm -d /tmp/nocore start
check "no cask_core: exit status 1" test $rc = 1
check "no cask_core: says it is missing" says "cask_core failed to load: /tmp/nocore/cask_core.ko does not exist"
check "no cask_core: each driver names its softdep" test "$(grep -c 'needs cask_core first (softdep)' /tmp/out)" = "$drivers"
check "no cask_core: nothing loaded" none_loaded

# As it was.
check "again: start" run $cm -d /lib/modules/cask start
check "again: status" run $cm status

[ $failed = 0 ] && echo "ok all"
echo "### end"
