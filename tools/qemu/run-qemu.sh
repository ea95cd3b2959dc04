#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a cask guest under QEMU and judge the kernel's console.
#
# Usage: run-qemu.sh [-A ARCH] -k KERNEL -i INITRAMFS -d OUTDIR [-a APPEND] [-t SECS] [-I] [-K]
#   -A  x86_64 (default; q35, bzImage) or arm64 (virt, Image, always TCG)
#   -a  extra kernel command line (cask.mode=..., cask.only=...)
#   -t  hard timeout in seconds (default 900)
#   -I  interactive: the console is this terminal
#   -K  a KCSAN kernel: no panic_on_warn (KCSAN panics on every report
#       with it, the core kernel's too); a report whose stacks are all
#       outside cask and that tools/qemu/kcsan-core-races lists is listed
#       as not cask's instead of failing the run
# Writes OUTDIR/console.log (ttyS0; arm64 ttyAMA0) and OUTDIR/results.log
# (ttyS1; arm64 hvc0, a virtio console: the virt board has one UART). On
# x86_64 also OUTDIR/data.log (ttyS2: bulk data such as make coverage's
# gcov archive) and OUTDIR/debugcon.log (QEMU's debug console, I/O port
# 0xe9: cask-fuzz writes each sequence's name there before running it).
# Exit status: 0 clean; 1 the guest did not finish or the console shows a
# kernel BUG, WARNING, KASAN or KCSAN report, lockdep splat, hung task,
# RCU stall or kmemleak report.
set -uo pipefail

timeout_s=900
append=
interactive=0
kcsan=0
arch=x86_64
while getopts A:k:i:d:a:t:IK opt; do
	case $opt in
	A) arch=$OPTARG ;;
	k) kernel=$OPTARG ;;
	i) initrd=$OPTARG ;;
	d) outdir=$OPTARG ;;
	a) append=$OPTARG ;;
	t) timeout_s=$OPTARG ;;
	I) interactive=1 ;;
	K) kcsan=1 ;;
	*) exit 2 ;;
	esac
done
: "${kernel:?-k BZIMAGE required}" "${initrd:?-i INITRAMFS required}" "${outdir:?-d OUTDIR required}"
mkdir -p "$outdir"
console=$outdir/console.log
results=$outdir/results.log
data=$outdir/data.log
debugcon=$outdir/debugcon.log
: > "$console"
: > "$results"
rm -f "$data" "$debugcon" "$outdir/kcsan-core.txt" "$outdir/kcsan-unlisted.txt"

# Kernel options that turn every class of splat into a stopped run, and
# the pieces our init needs.
cmdline="panic_on_warn=1 panic=-1 oops=panic hung_task_panic=1 softlockup_panic=1 no_hash_pointers printk.devkmsg=on $append"
[ $kcsan = 0 ] || cmdline=${cmdline/panic_on_warn=1 /}

# Each board's console and results port: the first -serial below is the
# console, the second (x86) the results; on arm64 the results go to a
# virtio console the init script finds as /dev/hvc0 (cask.out=).
results_port=()
case $arch in
x86_64)
	qemu_base=(qemu-system-x86_64 -machine q35 -cpu max)
	cmdline="console=ttyS0 $cmdline"
	: > "$data"
	: > "$debugcon"
	results_port=(-serial "file:$results" -serial "file:$data"
		      -debugcon "file:$debugcon")
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

# After a failed run of cask-fuzz: the sequence each generator had begun
# last (the debug console gets "DRIVER NAME" before every sequence; the
# cells generator runs underneath the others, so its lines interleave)
# and the command that runs the last one again.
fuzz_reproducer() {
	local seqs last drv name
	[ -s "$debugcon" ] || return 0
	seqs=$(tr -c 'a-z0-9_: \n' '?' < "$debugcon" | grep -E '^[a-z0-9_]+ [0-9]+(:[0-9]+:[0-9]+)?$')
	[ -n "$seqs" ] || return 0
	last=$(tail -n 1 <<< "$seqs")
	drv=${last%% *}
	name=${last#* }
	echo "[qemu] cask-fuzz's last sequence: $drv $name ($(wc -l <<< "$seqs") sequences begun)"
	tail -n 50 <<< "$seqs" | awk -v d="$drv" '$1 != d { last[$1] = $2 }
		END { for (o in last) print "[qemu]   and underneath it: " o " " last[o] }'
	# fuzz.sh says on the console which phase begins.
	if grep -E 'cask-guest: (fuzz|trinity) ' "$console" | tail -n 1 | grep -q trinity; then
		echo "[qemu] (trinity was running at the end, not cask-fuzz: its seeds are on the console)"
	fi
	echo "[qemu] run it again: make fuzz FUZZ=$drv FUZZ_SEED=$name FUZZ_COUNT=1 FUZZ_ARGS=-v TRINITY_TIME=0"
	echo "[qemu]   (FUZZ_ARGS='-v -o OPS' stops it after OPS operations: the shortest OPS that still fails is the reproducer)"
}

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
# dump included; any other OOM report is. Only the report's own lines
# are excused: a splat's line in the middle of it (a "BUG: KASAN:" of
# another CPU, say) stays in; its stack's "Call Trace:" may not.
scanned=$(awk -v other="${splats%|Call Trace:}" '/cask-test: oom expected/ { win = 1 }
	/cask-test: oom done/ { win = 0 }
	win && /invoked oom-killer/ { oom = 1 }
	!oom || $0 ~ other { print }
	oom && /Out of memory and no killable processes|Killed process/ { oom = 0 }' "$console")
# KCSAN: a report whose stacks (and title) name nothing of cask's -- no
# frame of a cask module ("[cask_core]", "[lowmemorykiller]") and no
# cask_ function -- and whose title matches a line of
# tools/qemu/kcsan-core-races is a known race of the core kernel: listed,
# not failed. Every other report stays in and fails the run like any
# splat.
if [ $kcsan = 1 ]; then
	races=$outdir/kcsan-core.txt
	unlisted=$outdir/kcsan-unlisted.txt
	allow=$(dirname "$0")/kcsan-core-races
	if grep -Ev '^[[:space:]]*(#|$)' "$allow" | grep -Ev '^[^|]*[^ |] \| +[^ ]'; then
		echo "[qemu] FAIL: lines of $allow above are not \"TITLE-GLOB | REASON\""
		status=1
	fi
	scanned=$(awk -v core="$races" -v unlisted="$unlisted" -v allow="$allow" -v splats="$splats" '
		function ours(   i) {
			for (i = 0; i < n; i++)
				if (buf[i] ~ /\[(cask_[a-z0-9_]+|lowmemorykiller[a-z0-9_]*)\]/ ||
				    buf[i] ~ /(^|[ (])cask_[a-z0-9_]+\+0x/ ||
				    buf[i] ~ /BUG: KCSAN: .*[ \/]cask_[a-z0-9_]/)
					return 1
			return 0
		}
		function glob2re(g,   i, c, r) {
			r = "^"
			for (i = 1; i <= length(g); i++) {
				c = substr(g, i, 1)
				if (c == "*")
					r = r ".*"
				else if (c == "?")
					r = r "."
				else if (c == "\\" || c == "^")
					r = r "\\" c
				else if (index(".[]$()|+{}", c))
					r = r "[" c "]"
				else
					r = r c
			}
			return r "$"
		}
		function known(   i) {
			for (i = 0; i < nknown; i++)
				if (title ~ known_re[i])
					return 1
			return 0
		}
		BEGIN {
			while ((getline line < allow) > 0)
				if (line !~ /^[ \t]*(#|$)/ && match(line, / \| /))
					known_re[nknown++] = glob2re(substr(line, 1, RSTART - 1))
			close(allow)
		}
		/BUG: KCSAN: / {
			# one still open (no footer yet) is kept: it fails the run
			for (i = 0; inrep && i < n; i++)
				print buf[i]
			inrep = 1; footer = n = 0; title = $0
			sub(/.*BUG: KCSAN: /, "", title)
			sub(/[ \t\r]+$/, "", title)
		}
		# a splat of another CPU inside a report: kept, whatever the report
		inrep && $0 ~ splats && !/KCSAN/ { print; next }
		inrep { buf[n++] = $0 }
		inrep && /Reported by Kernel Concurrency Sanitizer/ { footer = 1 }
		inrep && footer && /====================/ {
			if (!ours() && known()) {
				print title > core
			} else {
				if (!ours())
					print title > unlisted
				for (i = 0; i < n; i++)
					print buf[i]
			}
			inrep = footer = 0
			next
		}
		!inrep { print }
		END { for (i = 0; inrep && i < n; i++) print buf[i] }' <<< "$scanned")
	if [ -s "$races" ]; then
		echo "[qemu] KCSAN reports in the core kernel (not cask's; not counted):"
		sort "$races" | uniq -c | sed 's/^/[qemu]   /'
	fi
	if [ -s "$unlisted" ]; then
		echo "[qemu] KCSAN reports with no cask frame, not in $allow (failed until reviewed):"
		sort "$unlisted" | uniq -c | sed 's/^/[qemu]   /'
	fi
fi
if grep -Eq "$splats" <<< "$scanned"; then
	echo "[qemu] FAIL: kernel splat on the console:"
	grep -En -m 5 "$splats" <<< "$scanned" | sed 's/^/[qemu]   /'
	status=1
fi
if [ $status != 0 ]; then
	echo "[qemu] last 60 console lines:"
	tail -n 60 "$console" | sed 's/^/  | /'
	fuzz_reproducer
fi
exit $status
