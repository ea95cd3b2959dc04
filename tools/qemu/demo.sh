#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What `make run` shows: two containers become cells android0 and
# android1, then each driver's per-cell behaviour (logger, binder, ashmem,
# lowmemorykiller, power), the caskctl and sysfs view, and the cells going
# with their containers. Then an Android-shaped LXC container whose
# configuration has, for cask, only lxc.include = android.conf: its
# probes (binder context manager, service and client, ashmem, a logger
# writer, lmkd's PSI monitor and in-kernel mode, a wake lock, its init's
# /dev/kmsg lines) work in its own world, which the host shows. Every step
# states what it expects; one that does not get it prints "cask-guest:
# demo FAILED: ..." and tools/cask-test run then fails.
#
# A container here is what a runtime makes: user (root mapped to root, as
# unshare -r does), IPC, mount and PID namespaces, in a cgroup of its own
# with a memory limit. "host# " lines run on the host, "androidN# " lines as
# root inside that container (its namespaces and cgroup).

cells="android0 android1"
# The LXC container of the last part, and where it lives.
lxct=android
lxcp=/run/demo-lxc
cgroot=/sys/fs/cgroup
cask=/sys/kernel/cask

echo "cask-guest: demo start"
failed=0
bad() {
	echo "cask-guest: demo FAILED: $*" | tr '\n' ' '
	echo
	failed=1
}
title() { printf '\n--- %s\n' "$*"; }
note() { echo "  ($*)"; }

# cell_run NAME CMD...: run CMD in container NAME: its cgroup, then its
# namespaces.
cell_run() {
	c=$1
	shift
	sh -c 'cg=$0 init=$1; shift
		echo $$ > "$cg/cgroup.procs" && exec nsenter -t "$init" -U -i -m -p -- "$@"' \
		"$cgroot/$c" "$(cat "/run/demo-$c.pid")" "$@"
}

# show WHO CMD [MUST [MUST_NOT]]: show and run a shell command on the host
# (WHO "host") or as root in container WHO, and print its output. It must
# succeed, and its output match the extended regex MUST and not MUST_NOT.
# fails WHO CMD [MUST]: the same for a command that must fail.
run_as() {
	if [ "$1" = host ]; then
		sh -c "$2" 2>&1
	elif [ "$1" = "$lxct" ]; then
		lxc_run "$2" 2>&1
	else
		cell_run "$1" sh -c "$2" 2>&1
	fi
}
check_out() {
	[ -z "$3" ] || echo "$out" | grep -qE "$3" || bad "$1# $2: no \"$3\" in its output"
	[ -z "$4" ] || ! echo "$out" | grep -qE "$4" || bad "$1# $2: \"$4\" in its output"
}
say_cmd() {
	echo "$2" | sed "1s|^|$1# |; 2,\$s|^|    |"
}
show() {
	say_cmd "$1" "$2"
	out=$(run_as "$1" "$2")
	rc=$?
	[ -z "$out" ] || echo "$out"
	[ $rc = 0 ] || bad "$1# $2: exit status $rc"
	check_out "$@"
}
fails() {
	say_cmd "$1" "$2"
	out=$(run_as "$1" "$2")
	rc=$?
	[ -z "$out" ] || echo "$out"
	[ $rc != 0 ] || bad "$1# $2: succeeded, but must fail"
	check_out "$@"
}

# lxc_run CMD: run the shell command CMD in the LXC container, as root
# there, with the container's own PATH.
lxc_run() {
	lxc-attach -n "$lxct" -P "$lxcp" --clear-env -v PATH=/system/bin:/bin -- sh -c "$1"
}

# wait_line FILE REGEX: up to 10 s for a line matching REGEX in FILE.
wait_line() {
	i=0
	until grep -qE "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 100 ] || { bad "no \"$2\" in $1: $(cat "$1" 2>/dev/null)"; return 1; }
		sleep 0.1
	done
}

# wait_file FILE: up to 5 s for FILE to be non-empty.
wait_file() {
	i=0
	while [ ! -s "$1" ]; do
		i=$((i + 1))
		[ $i -le 50 ] || { bad "nothing in $1"; return 1; }
		sleep 0.1
	done
}

title "two containers, registered as cells"
for c in $cells; do
	mkdir -p "$cgroot/$c"
	echo 256M > "$cgroot/$c/memory.max"
	sh -c 'echo $$ > "$0/cgroup.procs"; exec unshare -U -r -i -m -p -f sleep 600' \
		"$cgroot/$c" &
	# Its init: the process of the cgroup in another PID namespace.
	init=
	i=0
	while [ -z "$init" ] && [ $i -lt 50 ]; do
		while read -r p; do
			[ "$(readlink "/proc/$p/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] &&
				init=$p
		done < "$cgroot/$c/cgroup.procs"
		i=$((i + 1))
		[ -n "$init" ] || sleep 0.1
	done
	[ -n "$init" ] || bad "no init in $cgroot/$c"
	echo "$init" > "/run/demo-$c.pid"
	echo "host# unshare -U -r -i -m -p -f sleep 600 &   # cgroup /$c, memory.max 256M: init $init"
	show host "caskctl register $c $init"
	# The runtime's power wiring (Documentation/power.rst): the cell's
	# files over /sys/power in the container's mount namespace.
	for f in wake_lock wake_unlock state wakeup_count; do
		nsenter -t "$init" -m mount --bind "$cask/cells/$c/power/$f" "/sys/power/$f" ||
			bad "bind $c's power/$f over its /sys/power/$f"
	done
done
note "and in each: mount --bind $cask/cells/NAME/power/F /sys/power/F, as a runtime does"
show host "caskctl list" "android0 .* /android0" "auto"
show android1 "cat $cask/self" "^android1$"
fails android1 "cat $cask/cells/android0/id" "Permission denied"
fails host "caskctl register android0 $(cat /run/demo-android0.pid)" "already exists"

title "logger: each cell has its own /dev/log/*; the host can merge them"
show host "printf '\\004host\\000hello from the host\\000' > /dev/log/main"
for c in $cells; do
	show "$c" "printf '\\004app\\000hello from $c\\000' > /dev/log/main"
done
show android1 "logcat -d -b main -v brief" "hello from android1" "android0|the host"
show host "logcat -d -b main --all-cells" "hello from android0"
check_out host "logcat --all-cells" "hello from android1"

title "binder: each cell's /dev/binder has its own context manager"
for c in $cells; do
	cell_run "$c" cask-demo binder-manager > "/run/demo-$c.binder" 2>&1 &
	wait_file "/run/demo-$c.binder" && cat "/run/demo-$c.binder"
	[ "$(cat "$cask/cells/$c/binder/nodes")" = 1 ] || bad "$c's binder has no manager node"
done
for c in $cells; do
	show "$c" "cask-demo binder-ping $c"
done
show host "cask-demo binder-ping none"
note "the host is a cell too, and its binder world has no manager"
show host "cd $cask/cells && grep . */binder/transactions_total" \
	"android1/binder/transactions_total:2"

title "ashmem: a region counts in its cell and shows in maps"
show android0 "cask-demo ashmem demo-frames 64" "regions 1 bytes 65536 pinned_bytes 32768"
fails android1 "cat $cask/cells/android0/ashmem/bytes" "Permission denied"

title "lowmemorykiller: levels and kills per cell"
lmk=$cask/cells/android1/lmk
show host "cd $lmk && grep . enabled adj minfree" "enabled:1"
note "android1's memory.max is 65536 pages: a level at 131072 free pages is crossed"
show host "echo 900 > $lmk/adj && echo 131072 > $lmk/minfree"
# As lmkd does, the reader opens /proc/lowmemorykiller before the kill: an
# open file sees the kills made after its open().
show android1 "exec 3< /proc/lowmemorykiller
cask-demo lmk-victim 4096; echo exit status \$?
dd bs=4096 count=1 <&3 2>/dev/null" "^cask-demo$"
check_out android1 "cask-demo lmk-victim" "exit status 137"
note "PID UID TGID MIN_FLT MAJ_FLT RSS ADJ MIN_ADJ START, COMM: what android1's lmkd reads"
show host "cd $cask/cells && grep . android1/lmk/kills android1/lmk/last_kill android0/lmk/kills" \
	"android1/lmk/kills:1"
show host "echo > $lmk/minfree && echo > $lmk/adj"

title "power: a cell's wake locks and suspend votes; the host decides"
show host "cd $cask/cells && grep . */power/policy" "android0/power/policy:deny"
show host "echo forward > $cask/cells/android0/power/policy"
for c in $cells; do
	show "$c" "echo demo_lock > /sys/power/wake_lock && cat /sys/power/wake_lock" "demo_lock"
done
show host "cat /sys/power/wake_lock" "" "demo_lock"
note "the host's own /sys/power/wake_lock has none of them"
show host "cd $cask/cells && grep . android*/power/active_locks android*/power/denials" \
	"android1/power/denials:1"
show host "grep -o '^cask:[^[:space:]]*' /sys/kernel/debug/wakeup_sources" "^cask:android0:demo_lock$" "android1"
note "forward: android0's lock holds a host wakeup source (root's debugfs only, no /sys/class/wakeup entry); deny: android1's is only counted"
show android0 "echo demo_lock > /sys/power/wake_unlock && echo mem > /sys/power/state"
show host "cd $cask/cells && grep . android*/power/suspend_ready" \
	"android0/power/suspend_ready:1"
note "android0 votes for suspend; the host's power manager decides, nothing was suspended"

title "the sysfs tree and caskctl"
show host "cd $cask && echo * && echo cells/* && cd cells/android0 && echo *"
show host "cd $cask/cells/android0 && for d in */; do echo \$d \$(ls \$d); done" "^power/ .*policy"
show host "caskctl show android1" "cgroup: /android1"

title "the containers end, and so do their cells"
for c in $cells; do
	echo "host# kill -KILL $(cat "/run/demo-$c.pid")   # $c's init"
	kill -KILL "$(cat "/run/demo-$c.pid")"
done
wait
for c in $cells; do
	i=0
	while [ -e "$cask/cells/$c" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -e "$cask/cells/$c" ] && bad "cell $c is still there"
	rmdir "$cgroot/$c" || bad "rmdir $cgroot/$c"
done
show host "caskctl list" "host" "android"

# An Android-shaped container: LXC, configured for cask with the one line
# (Documentation/runtimes.rst), with a user namespace; its root file
# system is busybox (the host's /bin, read-only), cask-demo in
# /system/bin and an /init that logs as Android's init does, to /dev/kmsg.
android_container() {
	root=$lxcp/$lxct/rootfs
	p=/sys/module/lowmemorykiller/parameters
	lmkd_minfree=18432,23040,27648,32256,55296,80640
	lmkd_adj=0,100,200,250,900,950

	title "an Android container from one line: lxc.include = android.conf"
	rm -rf "$lxcp"
	mkdir -p "$root/bin" "$root/system/bin" "$root/dev" "$root/proc" "$root/sys" \
		"$root/tmp" "$root/data"
	cp /usr/bin/cask-demo "$root/system/bin/"
	cat > "$root/init" <<-'EOF'
	#!/bin/sh
	# Android's init logs to /dev/kmsg from its first line on.
	echo "<6>init: init first stage started! (cask demo)" > /dev/kmsg
	echo "<6>init: starting service 'logd'... (cask demo)" > /dev/kmsg
	echo "<3>init: cannot find '/system/bin/surfaceflinger', disabling (cask demo)" > /dev/kmsg
	exec /bin/sleep 3600
	EOF
	chmod 755 "$root/init"
	cat > "$lxcp/$lxct/config" <<-EOF
	lxc.uts.name = $lxct
	lxc.rootfs.path = dir:$root
	lxc.idmap = u 0 500000 65536
	lxc.idmap = g 0 500000 65536
	lxc.net.0.type = empty
	lxc.apparmor.profile = unconfined
	lxc.console.path = none
	lxc.pty.max = 4
	lxc.tty.max = 0
	lxc.mount.auto = proc:mixed sys:ro
	lxc.mount.entry = /bin bin none ro,bind 0 0
	lxc.init.cmd = /init
	lxc.include = /usr/share/cask/lxc/android.conf
	EOF
	show host "cat $lxcp/$lxct/config" "^lxc.include = /usr/share/cask/lxc/android.conf\$"
	note "for cask only the include; the rest is its root file system, ids, console and init"
	hminfree=$(cat "$p/minfree")
	hlocks=$(cat /sys/power/wake_lock)
	show host "lxc-start -n $lxct -P $lxcp -f $lxcp/$lxct/config -o $lxcp/$lxct.log -l INFO"
	if [ $rc != 0 ]; then
		tail -n 20 "$lxcp/$lxct.log"
		return 1
	fi
	show host "caskctl show $lxct" "cgroup: /lxc.payload.$lxct"
	show "$lxct" "cat $cask/self; ls -l /dev/binder /dev/ashmem /dev/kmsg /dev/log/main | sed 's/  */ /g'
grep -E ' /(sys/power/wake_lock|sys/module/lowmemorykiller/parameters|proc/pressure/memory) ' \\
	/proc/self/mountinfo | cut -d' ' -f4,5" \
		"^$lxct\$"
	check_out "$lxct" "the mounts" "memory.pressure /proc/pressure/memory" ""
	check_out "$lxct" "the mounts" "/cells/$lxct/lmk /sys/module/lowmemorykiller/parameters" ""
	note "the hooks bound the cell's files over /sys/power, the lmk parameters and /proc/pressure/memory"

	title "kmsg: the container's init logs to its own kernel log"
	i=0
	until out=$(logcat -d --cell "$lxct" -b kernel 2>&1) &&
		echo "$out" | grep -q surfaceflinger; do
		i=$((i + 1))
		[ $i -le 50 ] || break
		sleep 0.1
	done
	show host "logcat -d --cell $lxct -b kernel" "init: init first stage started! \\(cask demo\\)"
	check_out host "logcat --cell $lxct -b kernel" "disabling \\(cask demo\\)"
	show host "dmesg | grep -c 'cask demo'; true" "^0\$"
	note "the host's dmesg has none of them; the cell's devkmsg: $(cat "$cask/cells/$lxct/logger/kmsg/devkmsg" 2>&1)"
	[ "$(cat "$cask/cells/$lxct/logger/kmsg/devkmsg" 2>&1)" = on ] ||
		bad "$lxct's logger/kmsg/devkmsg is not on"

	title "logger: the container's /dev/log is its cell's"
	show "$lxct" "printf '\\004ActivityManager\\000Start proc com.android.demo (cask demo)\\000' > /dev/log/main"
	show host "logcat -d --cell $lxct -b main -v brief" "ActivityManager.*com.android.demo"
	show host "logcat -d -b main -v brief | grep -c com.android.demo; true" "^0\$"
	note "the host's own log has no such line"

	title "binder: a context manager, a service and a client in the container"
	hb=$(cat "$cask/cells/host/binder/transactions_total")
	lxc_run "cask-demo binder-manager" > /run/demo-lxc.manager 2>&1 &
	wait_line /run/demo-lxc.manager "context manager" && cat /run/demo-lxc.manager
	lxc_run "cask-demo binder-service demo.hello" > /run/demo-lxc.service 2>&1 &
	wait_line /run/demo-lxc.service "added to the context manager" && cat /run/demo-lxc.service
	show "$lxct" "cask-demo binder-client demo.hello" "\"demo.hello in $lxct, pid [0-9]+\" answers"
	show host "cd $cask/cells/$lxct/binder && grep . nodes refs transactions_total" \
		"^nodes:2\$" "transactions_total:0\$"
	show host "grep -E '^(proc|context)|node [0-9]+:' /sys/kernel/debug/cask/binder/\$(cat $cask/cells/$lxct/id)/state | cut -c1-60" \
		"context $lxct"
	[ "$(cat "$cask/cells/host/binder/transactions_total")" = "$hb" ] ||
		bad "the host cell's binder/transactions_total changed"
	note "the nodes and calls are the cell's; the host cell's transactions_total is still $hb"

	title "ashmem: a region of the container's"
	show "$lxct" "cask-demo ashmem android-frames 64" "regions 1 bytes 65536 pinned_bytes 32768"

	title "lmkd's PSI monitor: /proc/pressure/memory is the container's cgroup's"
	cg=$cgroot$(cat "$cask/cells/$lxct/cgroup")
	[ -e "$cg/memory.high" ] || bad "no $cg/memory.high"
	lxc_run "cask-demo psi-monitor 4; echo psi-monitor exit \$?" > /run/demo-lxc.psi 2>&1 &
	psi=$!
	wait_line /run/demo-lxc.psi "armed" && cat /run/demo-lxc.psi
	mkdir -p "$cgroot/demo-hog"
	echo 4M > "$cgroot/demo-hog/memory.high"
	show host "echo \$\$ > $cgroot/demo-hog/cgroup.procs && exec cask-demo memhog 32768 1500" \
		"hog: touched"
	note "a hog on the host, in a cgroup with memory.high 4M"
	show host "head -n 1 $cgroot/demo-hog/memory.pressure" "total=[1-9]"
	wait $psi
	show host "cat /run/demo-lxc.psi" "no memory pressure event" "event after"
	note "the host's pressure is not the container's"
	rmdir "$cgroot/demo-hog" || bad "rmdir $cgroot/demo-hog"
	lxc_run "cask-demo psi-monitor 10; echo psi-monitor exit \$?" > /run/demo-lxc.psi 2>&1 &
	psi=$!
	wait_line /run/demo-lxc.psi "armed" && cat /run/demo-lxc.psi
	show host "echo \$((\$(cat $cg/memory.current) + 4194304)) > $cg/memory.high && cat $cg/memory.high"
	show "$lxct" "cask-demo memhog 32768 1500" "hog: touched"
	show host "echo max > $cg/memory.high"
	wait $psi
	show host "cat /run/demo-lxc.psi" "memory pressure event after [0-9]+ ms" "no memory"
	note "a hog in the container, over its memory.high: lmkd's trigger fires"

	title "lmkd's in-kernel mode: the container's levels are its cell's"
	show "$lxct" "test -w $p/minfree && echo minfree is writable
printf $lmkd_minfree > $p/minfree && printf $lmkd_adj > $p/adj && cat $p/minfree" \
		"^$lmkd_minfree\$"
	show host "cd $cask/cells/$lxct/lmk && grep . minfree adj" \
		"^minfree:$lmkd_minfree\$"
	show host "cat $p/minfree" "" "$lmkd_minfree"
	[ "$(cat "$p/minfree")" = "$hminfree" ] || bad "the host's minfree changed"
	note "the host's levels are as they were (\"$hminfree\")"

	title "power: the container's wake lock is its cell's"
	show "$lxct" "echo demo_android_lock > /sys/power/wake_lock && cat /sys/power/wake_lock" \
		"demo_android_lock"
	show host "cat $cask/cells/$lxct/power/wake_lock" "demo_android_lock"
	show host "cat /sys/power/wake_lock" "" "demo_android_lock"
	[ "$(cat /sys/power/wake_lock)" = "$hlocks" ] || bad "the host's wake locks changed"

	title "the container stops, and its cell goes"
	show host "lxc-stop -n $lxct -P $lxcp -k"
	wait
	i=0
	while [ -e "$cask/cells/$lxct" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -e "$cask/cells/$lxct" ] && bad "cell $lxct is still there"
	show host "caskctl list" "host" "$lxct"
	rm -rf "$lxcp" /run/demo-lxc.*
}

if [ -x /usr/bin/lxc-start ] && [ -x /usr/bin/lxc-attach ]; then
	android_container
else
	title "an Android container from one line: lxc.include = android.conf"
	note "skipped: this guest image has no LXC (tools/cask-test puts Debian's in an x86_64 image where the build machine has it)"
fi

if [ $failed = 0 ]; then
	echo "cask-guest: demo end"
else
	echo "cask-guest: demo end (with failures)"
fi
