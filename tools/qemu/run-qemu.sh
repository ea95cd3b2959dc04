#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a cask guest under QEMU and judge the kernel's console.
#
# Usage: run-qemu.sh [-A ARCH] -k KERNEL -i INITRAMFS -d OUTDIR [-a APPEND] [-t SECS] [-I]
#   -A  x86_64 (default; q35, bzImage) or arm64 (virt, Image, always TCG)
#   -a  extra kernel command line (cask.mode=..., cask.only=...)
#   -t  hard timeout in seconds (default 900)
#   -I  interactive: the console is this terminal
# Writes OUTDIR/console.log (ttyS0; arm64 ttyAMA0) and OUTDIR/results.log
# (ttyS1; arm64 hvc0, a virtio console: the virt board has one UART).
# Exit status: 0 clean; 1 the guest did not finish or the console shows a
# kernel BUG, WARNING, KASAN report, lockdep splat, hung task, RCU stall or
# kmemleak report.
set -uo pipefail

timeout_s=900
append=
interactive=0
arch=x86_64
while getopts A:k:i:d:a:t:I opt; do
	case $opt in
	A) arch=$OPTARG ;;
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
cmdline="panic_on_warn=1 panic=-1 oops=panic hung_task_panic=1 softlockup_panic=1 no_hash_pointers printk.devkmsg=on $append"

# Each board's console and results port: the first -serial below is the
# console, the second (x86) the results; on arm64 the results go to a
# virtio console the init script finds as /dev/hvc0 (cask.out=).
results_port=()
case $arch in
x86_64)
	qemu_base=(qemu-system-x86_64 -machine q35 -cpu max)
	cmdline="console=ttyS0 $cmdline"
	results_port=(-serial "file:$results")
	;;
arm64)
	# cortex-a57: TCG emulates it much faster than -cpu max (pointer
	# authentication, SVE), and the tests need nothing newer.
	qemu_base=(qemu-system-aarch64 -machine virt -cpu cortex-a57
		   -device virtio-serial-device
		   -chardev "file,id=results,path=$results"
		   -device "virtconsole,chardev=results")
	cmdline="console=ttyAMA0 cask.out=/dev/hvc0 $cmdline"
	;;
*) echo "[qemu] unknown -A $arch (x86_64 or arm64)" >&2; exit 2 ;;
esac
qemu_base+=(-nodefaults -display none -no-reboot -smp 2 -m 2G
	    -kernel "$kernel" -initrd "$initrd")

# TCG unless KVM demonstrably works here: /dev/kvm can exist and still fail
# (nested virtualisation). The probe boots this guest once with KVM and
# remembers the answer for this host boot.
accel() {
	local stamp
	stamp=/tmp/cask-kvm-probe.$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
	if [ "${CASK_KVM:-auto}" = 0 ] || [ ! -w /dev/kvm ] || [ "$arch" != x86_64 ]; then
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
echo "[qemu] $arch, accel $acc, 2 vCPUs, timeout ${timeout_s}s, console log $console"

if [ $interactive = 1 ]; then
	"${qemu_base[@]}" -accel "$acc" -serial mon:stdio "${results_port[@]}" \
		-append "$cmdline"
	exit 0
fi

start=$(date +%s)
timeout --foreground -k 10 "$timeout_s" "${qemu_base[@]}" -accel "$acc" \
	-serial "file:$console" "${results_port[@]}" -append "$cmdline" \
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
