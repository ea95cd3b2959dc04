#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a cask guest under QEMU and judge the kernel's console.
#
# Usage: run-qemu.sh -k BZIMAGE -i INITRAMFS -d OUTDIR [-a APPEND] [-t SECS] [-I]
#   -a  extra kernel command line (cask.mode=..., cask.only=...)
#   -t  hard timeout in seconds (default 900)
#   -I  interactive: the console is this terminal
# Writes OUTDIR/console.log (ttyS0) and OUTDIR/results.log (ttyS1).
# Exit status: 0 clean; 1 the guest did not finish or the console shows a
# kernel BUG, WARNING, KASAN report, lockdep splat, hung task, RCU stall or
# kmemleak report.
set -uo pipefail

timeout_s=900
append=
interactive=0
while getopts k:i:d:a:t:I opt; do
	case $opt in
	k) kernel=$OPTARG ;;
	i) initrd=$OPTARG ;;
	d) outdir=$OPTARG ;;
	a) append=$OPTARG ;;
	t) timeout_s=$OPTARG ;;
	I) interactive=1 ;;
	*) exit 2 ;;
	esac
done
: "${kernel:?-k BZIMAGE required}" "${initrd:?-i INITRAMFS required}" "${outdir:?-d OUTDIR required}"
mkdir -p "$outdir"
console=$outdir/console.log
results=$outdir/results.log
: > "$console"
: > "$results"

# Kernel options that turn every class of splat into a stopped run, and
# the pieces our init needs.
cmdline="console=ttyS0 panic_on_warn=1 panic=-1 oops=panic hung_task_panic=1 softlockup_panic=1 no_hash_pointers printk.devkmsg=on $append"

qemu_base=(qemu-system-x86_64 -nodefaults -display none -no-reboot
	   -machine q35 -cpu max -smp 2 -m 2G
	   -kernel "$kernel" -initrd "$initrd")

# TCG unless KVM demonstrably works here: /dev/kvm can exist and still fail
# (nested virtualisation). The probe boots this guest once with KVM and
# remembers the answer for this host boot.
accel() {
	local stamp
	stamp=/tmp/cask-kvm-probe.$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
	if [ "${CASK_KVM:-auto}" = 0 ] || [ ! -w /dev/kvm ]; then
		echo tcg; return
	fi
	if [ ! -f "$stamp" ]; then
		local log
		log=$(mktemp)
		if timeout 60 "${qemu_base[@]}" -accel kvm -serial "file:$log" \
			-append "console=ttyS0 panic=-1 cask.mode=probe" >/dev/null 2>&1 &&
		   grep -q 'cask-guest: done' "$log"; then
			echo kvm > "$stamp"
		else
			echo tcg > "$stamp"
		fi
		rm -f "$log"
	fi
	cat "$stamp"
}

acc=$(accel)
echo "[qemu] accel $acc, 2 vCPUs, timeout ${timeout_s}s, console log $console"

if [ $interactive = 1 ]; then
	"${qemu_base[@]}" -accel "$acc" -serial mon:stdio -serial "file:$results" \
		-append "$cmdline"
	exit 0
fi

start=$(date +%s)
timeout --foreground -k 10 "$timeout_s" "${qemu_base[@]}" -accel "$acc" \
	-serial "file:$console" -serial "file:$results" -append "$cmdline" \
	< /dev/null
qrc=$?
echo "[qemu] guest ran $(( $(date +%s) - start ))s"

status=0
if [ $qrc = 124 ] || [ $qrc = 137 ]; then
	echo "[qemu] FAIL: guest did not finish within ${timeout_s}s"
	status=1
elif ! grep -q 'cask-guest: done' "$console"; then
	echo "[qemu] FAIL: guest stopped before finishing (panic?)"
	status=1
fi

splats='BUG:|WARNING:|Oops|Kernel panic|KASAN:|UBSAN:|general protection fault|possible (recursive|circular) locking|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|rcu: INFO|unreferenced object|watchdog: BUG|Call Trace:'
# An OOM report that a test announced (it writes "cask-test: oom expected"
# and "cask-test: oom done" to /dev/kmsg around it) is not a splat, stack
# dump included; any other OOM report is.
scanned=$(awk '/cask-test: oom expected/ { win = 1 }
	/cask-test: oom done/ { win = 0 }
	win && /invoked oom-killer/ { oom = 1 }
	!oom { print }
	oom && /Out of memory and no killable processes|Killed process/ { oom = 0 }' "$console")
if grep -Eq "$splats" <<< "$scanned"; then
	echo "[qemu] FAIL: kernel splat on the console:"
	grep -En -m 5 "$splats" <<< "$scanned" | sed 's/^/[qemu]   /'
	status=1
fi
if [ $status != 0 ]; then
	echo "[qemu] last 60 console lines:"
	tail -n 60 "$console" | sed 's/^/  | /'
fi
exit $status
