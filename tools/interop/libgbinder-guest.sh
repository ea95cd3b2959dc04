#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of tools/interop/run-libgbinder.sh, installed as
# /interop/run.sh and run by /init for cask.mode=interop (cask is loaded).
# libgbinder's test programs and AOSP's servicemanager (/interop/bin)
# against cask_binder and, in the same boot, the kernel's binder on a
# binderfs mount whose devices are bind-mounted over the same names in a
# mount namespace of their own; then in a container cell. Output on
# /dev/ttyS1, ending with "N passed, N failed".
#
#   run.sh                  everything
#   run.sh side NAME        the scenario, on whatever /dev/binder is here
#   run.sh container        the container half of the cell scenario

export PATH="/interop/bin:$PATH"
me=/interop/run.sh
tmo=30

say() { echo "$*"; }
ok() { say "ok - $*"; }
nok() { say "not ok - $*"; }

# expect NAME PATTERN CMD...: run CMD ($tmo s at most) and show its output;
# it must match the grep -E PATTERN, or with a leading ! must not; =N: CMD
# must exit with N.
expect() {
	name=$1 pat=$2
	shift 2
	say "\$ $*"
	timeout "$tmo" "$@" > /tmp/expect.out 2>&1
	rc=$?
	sed 's/^/    /' /tmp/expect.out
	case $pat in
	=*) [ "$rc" = "${pat#=}" ] ;;
	!*) ! grep -Eq -- "${pat#!}" /tmp/expect.out ;;
	*) grep -Eq -- "$pat" /tmp/expect.out ;;
	esac
	# shellcheck disable=SC2181
	if [ $? = 0 ]; then
		ok "$name (exit $rc)"
	else
		nok "$name (exit $rc)"
	fi
}

# wait_service DEV NAME: until the service manager of DEV knows NAME.
wait_service() {
	i=0
	until binder-list -q -d "$1" "$2" > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt $tmo ] || return 1
		sleep 1
	done
}

# start_sm DEV LOG and start_svc DEV NAME LOG [binder-service options]
# leave their pid in $!.
start_sm() {
	servicemanager "$1" > "$2" 2>&1 &
	sleep 2
}

start_svc() {
	sdev=$1 sname=$2 slog=$3
	shift 3
	binder-service -v -d "$sdev" "$@" "$sname" > "$slog" 2>&1 &
	svc_pid=$!
	if wait_service "$sdev" "$sname"; then
		ok "binder-service registers $sname on $sdev"
	else
		nok "binder-service registers $sname on $sdev"
	fi
}

stop() {
	kill "$@" 2> /dev/null
	wait "$@" 2> /dev/null
}

big=$(printf '%03000d' 7)

# The scenario, the same for cask and the kernel's binder.
side() {
	s=$1
	dev=/dev/binder
	say "# $s: $dev is $(stat -c '%t:%T' "$dev") on $(stat -f -c %T "$dev")"
	start_sm "$dev" /tmp/sm."$s".log
	sm=$!
	start_svc "$dev" test /tmp/svc."$s".log
	svc=$svc_pid
	start_svc "$dev" test2 /tmp/svc2."$s".log -a -i test2@1.0
	svc2=$svc_pid
	expect "binder-list lists both services" '^test2$' binder-list -d "$dev"
	expect "binder-list finds test" '^test$' binder-list -d "$dev" test
	expect "binder-list misses nosuch" 'No such service' binder-list -d "$dev" nosuch
	expect "binder-ping test" 'OK' binder-ping -d "$dev" test
	expect "binder-ping nosuch fails" 'not found' binder-ping -d "$dev" nosuch
	expect "binder-call string16 round trip" '"hello"U' \
		binder-call -a -d "$dev" test 1 '"hello"u' reply s16
	expect "binder-call async reply (binder-service -a)" '"async"U' \
		binder-call -a -d "$dev" test2 1 '"async"u' reply s16
	expect "binder-call 3000 characters" "\"$big\"U" \
		binder-call -a -d "$dev" test 1 "\"$big\"u" reply s16
	# binder-call exits 2 whatever happens; the service logs what it got.
	expect "binder-call one-way" 'NO REPLY' binder-call -a -o -d "$dev" test 1 '"oneway"u'
	expect "binder-call unknown code fails" '!"x"U' \
		binder-call -a -d "$dev" test 99 '"x"u' reply s16
	# binder-client calls once per line of input and stops on SIGINT.
	expect "binder-client call" 'Reply: "hello client"' sh -c \
		"(echo 'hello client'; sleep 4) | timeout -s INT 10 binder-client -v -d $dev -n test"
	expect "binder-dump (an fd in a transaction)" "nothing to dump" binder-dump -d "$dev" test
	# A second device with its own context manager (vndservicemanager's
	# place); no hwservicemanager exists here, so hwbinder is not served.
	start_sm /dev/vndbinder /tmp/vsm."$s".log
	vsm=$!
	start_svc /dev/vndbinder vtest /tmp/vsvc."$s".log
	vsvc=$svc_pid
	expect "vndbinder: binder-list" '^vtest$' binder-list -d /dev/vndbinder
	expect "vndbinder: binder-call" '"vnd"U' \
		binder-call -a -d /dev/vndbinder vtest 1 '"vnd"u' reply s16
	expect "vndbinder: its service is not on binder" 'No such service' \
		binder-list -d /dev/binder vtest
	expect "vndbinder: binder's service is not on it" 'No such service' \
		binder-list -d /dev/vndbinder test
	stop "$vsvc" "$vsm"
	# The service manager goes: the services see it die (death
	# notification on handle 0) and register again with a new one.
	stop $sm
	start_sm "$dev" /tmp/sm2."$s".log
	sm=$!
	expect "services register again with a new service manager" '^test$' \
		sh -c "sleep 3; binder-list -d $dev test"
	# A service goes: the service manager forgets its handle (death
	# notification; Android 9's keeps the name in its list).
	stop $svc
	sleep 2
	expect "a dead service is not found" 'No such service' binder-list -d "$dev" test
	expect "binder-service survived its peer" '^test2$' binder-list -d "$dev" test2
	# A service that outlives its service manager still exits cleanly.
	start_svc "$dev" test3 /tmp/svc3."$s".log
	svc3=$svc_pid
	stop $sm
	sleep 3
	stop $svc2 $svc3
	expect "services exit cleanly without a service manager" '!ERROR' \
		cat /tmp/svc2."$s".log /tmp/svc3."$s".log
	expect "the one-way call arrived" '"oneway"' grep -h oneway /tmp/svc."$s".log
	say "# $s: service logs"
	grep -h -E 'died|reappeared|Added|Failed|ERR' /tmp/svc."$s".log /tmp/svc2."$s".log |
		sed 's/^/    /'
	say "# $s: service manager logs"
	cat /tmp/sm."$s".log /tmp/sm2."$s".log | sed 's/^/    /'
}

# The cell scenario (cask only): a service in the host cell and one in a
# container (new IPC, mount and PID namespaces: a new cell), each with
# its own service manager on /dev/binder.
container() {
	mount -t proc proc /proc
	say "# container: cell $(cat /sys/kernel/cask/self 2> /dev/null)"
	start_sm /dev/binder /tmp/sm.ct.log
	sm=$!
	start_svc /dev/binder ctsvc /tmp/svc.ct.log
	svc=$svc_pid
	expect "container: lists its own service only" '!hostsvc' binder-list -d /dev/binder
	expect "container: calls its own service" '"in"U' \
		binder-call -a -d /dev/binder ctsvc 1 '"in"u' reply s16
	expect "container: the host's service is not found" 'not found' \
		binder-ping -d /dev/binder hostsvc
	touch /tmp/ct-ready
	i=0
	while [ ! -e /tmp/host-done ] && [ $i -lt 60 ]; do
		sleep 1
		i=$((i + 1))
	done
	stop $svc $sm
}

cells() {
	say "# host: cell $(cat /sys/kernel/cask/self 2> /dev/null)"
	start_sm /dev/binder /tmp/sm.host.log
	sm=$!
	start_svc /dev/binder hostsvc /tmp/svc.host.log
	svc=$svc_pid
	rm -f /tmp/ct-ready /tmp/host-done
	unshare -i -m -p -f $me container > /tmp/out.ct 2>&1 &
	ct=$!
	i=0
	while [ ! -e /tmp/ct-ready ] && [ $i -lt 60 ]; do
		sleep 1
		i=$((i + 1))
	done
	say "# cells: $(cd /sys/kernel/cask/cells && echo *)"
	expect "host: lists its own service only" '!ctsvc' binder-list -d /dev/binder
	expect "host: calls its own service" '"out"U' \
		binder-call -a -d /dev/binder hostsvc 1 '"out"u' reply s16
	expect "host: the container's service is not found" 'not found' \
		binder-ping -d /dev/binder ctsvc
	touch /tmp/host-done
	wait $ct
	cat /tmp/out.ct
	stop $svc $sm
}

case ${1:-} in
side) side "$2"; exit ;;
container) container; exit ;;
esac

out=/dev/ttyS1
[ -c $out ] || out=/dev/console
exec > $out 2>&1
say "### libgbinder interop: $(uname -r)"
[ -c /dev/binder ] || say "# no /dev/binder: cask_binder not loaded"
# Android 9's servicemanager speaks libgbinder's "aidl2" service manager
# protocol (with dump priorities), which is API level 28's.
printf '[General]\nApiLevel = 28\n' > /etc/gbinder.conf
insmod /lib/modules/upstream/binder_linux.ko
mkdir -p /dev/binderfs
mount -t binder binder /dev/binderfs
binderfs-add /dev/binderfs/binder-control binder vndbinder hwbinder | sed 's/^/# binderfs: /'

$me side cask > /tmp/out.cask 2>&1
# shellcheck disable=SC2016
unshare -m sh -c 'for d in binder vndbinder hwbinder; do
		mount --bind "/dev/binderfs/$d" "/dev/$d" || exit 1
	done
	exec "$0" side upstream' "$me" > /tmp/out.upstream 2>&1
cells > /tmp/out.cells 2>&1

for s in cask upstream cells; do
	say "### $s"
	cat /tmp/out.$s
done
say "### cask vs upstream (diff of the two transcripts)"
# Only the device line differs by design; how libgbinder's looper thread
# ends (done, requested to exit, abandoned) is a race in libgbinder.
sed 's/cask/SIDE/g' /tmp/out.cask > /tmp/cmp.cask
sed 's/upstream/SIDE/g' /tmp/out.upstream > /tmp/cmp.upstream
if diff -u /tmp/cmp.cask /tmp/cmp.upstream | grep -v -e '^[-+]# SIDE: /dev/binder is' \
	-e '^[-+]    \[gbinder\] Looper binder#[0-9]* ' \
	-e '^---' -e '^+++' | grep -q '^[-+]'; then
	diff -u /tmp/cmp.cask /tmp/cmp.upstream
else
	say "same results"
fi
say "### kernel log (binder)"
dmesg | grep -i binder | tail -n 40
pass=$(cat /tmp/out.cask /tmp/out.upstream /tmp/out.cells | grep -c '^ok ')
fail=$(cat /tmp/out.cask /tmp/out.upstream /tmp/out.cells | grep -c '^not ok ')
say "### end"
say "$pass passed, $fail failed"
