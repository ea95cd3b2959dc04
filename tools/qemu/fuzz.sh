# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest's side of make fuzz (cask.mode=fuzz) and of make check's
# fuzz_smoke and trinity_smoke. /init (tools/qemu/init) sources this file
# from /usr/share/cask/fuzz.sh and calls fuzz_main, fuzz_smoke or
# trinity_smoke; they use its res, limited and $out, and write their
# results as "### selftest NAME" sections of KTAP, as every test program
# does (tools/qemu/results.py counts them).
#
# fuzz_main reads its parameters from the kernel command line, which
# tools/cask-test fills from make's variables:
#   cask.fuzz=a,b          the drivers, one after the other (FUZZ)
#   cask.fuzz_count=N      sequences per driver (FUZZ_COUNT)
#   cask.fuzz_time=S       at most S seconds per driver, 0: no limit (FUZZ_TIME)
#   cask.fuzz_seed=SEED    first seed, or a sequence name (FUZZ_SEED)
#   cask.fuzz_args=a,b     more cask-fuzz arguments (FUZZ_ARGS)
#   cask.fuzz_limit=S      each driver's time limit (computed by cask-test)
#   cask.trinity_time=S    seconds of trinity after the drivers (TRINITY_TIME)
#   cask.fuzz_under=a,b    generators underneath (FUZZ_UNDER; default cells
#                          and reload, those cask-fuzz has; none: nothing)
#
# Each driver runs as "cask-fuzz -T ... DRIVER" (section fuzz_DRIVER) with
# the cells generator (and reload, if cask-fuzz has it) running underneath
# in short runs from an IPC namespace of its own: cells registered and
# unregistered, auto cells made and ended, while the driver's sequences
# run (section fuzz_DRIVER_under). A reproducer (FUZZ_COUNT below 100, or
# a sequence name as the seed) runs alone. Then trinity (section trinity),
# then the modules are unloaded and kmemleak scans (/init's end).
#
# shellcheck disable=SC2154 # out, cask_modules and kmemleak are /init's

# cask.NAME= of the kernel command line, else $2.
fz_arg() {
	fz_v=$(tr ' ' '\n' < /proc/cmdline | sed -n "s/^cask\.$1=//p" | tail -n 1)
	echo "${fz_v:-$2}"
}

# Standard input as KTAP diagnostics, each line "# "-prefixed once.
fz_diag() {
	sed -e 's/^# //' -e 's/^/# /'
}

# Short runs of the generators $3... one after the other, from an IPC
# namespace of their own (a cell of their own), until file $1 exists;
# their output goes to $2, a failed run adds "not ok underneath".
fz_under() {
	fz_stop=$1
	fz_log=$2
	shift 2
	while [ ! -e "$fz_stop" ]; do
		for fz_g in "$@"; do
			[ ! -e "$fz_stop" ] || break
			unshare -i cask-fuzz -n 2000 -t 30 "$fz_g" >> "$fz_log" 2>&1 ||
				echo "not ok underneath: cask-fuzz $fz_g exited with status $?" >> "$fz_log"
		done
	done
}

# The section of the runs underneath driver $1 (log $2).
fz_under_result() {
	res "### selftest fuzz_${1}_under"
	res "TAP version 13"
	res "1..1"
	# Progress lines (every 10 s) are noise here; the end lines stay.
	grep -v ' sequences, [0-9]* s, ' "$2" | fz_diag > "$out"
	if grep -q 'not ok' "$2"; then
		res "not ok 1 generators underneath $1"
		res "### rc 1"
	else
		res "ok 1 generators underneath $1"
		res "### rc 0"
	fi
}

fuzz_main() {
	fz_drivers=$(fz_arg fuzz "" | tr , ' ')
	fz_count=$(fz_arg fuzz_count 1000000)
	fz_time=$(fz_arg fuzz_time 0)
	fz_seed=$(fz_arg fuzz_seed "")
	fz_args=$(fz_arg fuzz_args "" | tr , ' ')
	fz_limit=$(fz_arg fuzz_limit 3600)
	fz_trinity=$(fz_arg trinity_time 3600)
	fz_gens=$(cask-fuzz -l | awk '{ print $1 }')
	[ -n "$fz_drivers" ] || fz_drivers=$(echo "$fz_gens" | grep -vxE 'cells|reload')
	fz_under_gens=
	for fz_g in $(fz_arg fuzz_under cells,reload | tr , ' '); do
		echo "$fz_gens" | grep -qx "$fz_g" && fz_under_gens="$fz_under_gens $fz_g"
	done
	case $fz_seed in *:*) fz_under_gens= ;; esac
	[ "$fz_count" = 0 ] || [ "$fz_count" -ge 100 ] || fz_under_gens=
	echo "cask-guest: fuzz: drivers $fz_drivers; $fz_count sequences, ${fz_time}s each" \
		"(0: no limit); underneath:${fz_under_gens:- nothing}; trinity ${fz_trinity}s" > /dev/console
	for fz_d in $fz_drivers; do
		# limited reads each program's limit from /etc/cask-limits.
		echo "fuzz_$fz_d $fz_limit" >> /etc/cask-limits
		fz_u=
		case " $fz_under_gens " in *" $fz_d "*) ;; *) fz_u=$fz_under_gens ;; esac
		rm -f /tmp/fz-stop
		: > /tmp/fz-under.log
		if [ -n "$fz_u" ]; then
			# shellcheck disable=SC2086 # a list of names
			fz_under /tmp/fz-stop /tmp/fz-under.log $fz_u &
			fz_upid=$!
		fi
		echo "cask-guest: fuzz $fz_d start" > /dev/console
		res "### selftest fuzz_$fz_d"
		# shellcheck disable=SC2086 # FUZZ_ARGS are words
		limited "fuzz_$fz_d" "$out" cask-fuzz -T -n "$fz_count" -t "$fz_time" \
			${fz_seed:+-s "$fz_seed"} $fz_args "$fz_d"
		res "### rc $?"
		[ -n "$fz_u" ] || continue
		# The run underneath ends within its 30 s; a stuck one is
		# killed after two minutes and fails.
		touch /tmp/fz-stop
		fz_i=0
		while alive "$fz_upid" && [ $fz_i -lt 120 ]; do
			sleep 1
			fz_i=$((fz_i + 1))
		done
		if alive "$fz_upid"; then
			echo "not ok underneath: still running 120 s after the driver ended; killed" >> /tmp/fz-under.log
			for fz_p in $(pgrep -P "$fz_upid") "$fz_upid"; do
				kill -KILL "$fz_p" 2>/dev/null
			done
		fi
		wait "$fz_upid" 2>/dev/null
		fz_under_result "$fz_d" /tmp/fz-under.log
	done
	if [ "$fz_trinity" -gt 0 ]; then
		echo "trinity $((fz_trinity + 300))" >> /etc/cask-limits
		res "### selftest trinity"
		limited trinity "$out" sh -c ". /usr/share/cask/fuzz.sh; trinity_run $fz_trinity full"
		res "### rc $?"
	fi
	fuzz_end
}

# The modules unload (the cells the generators left included), then
# kmemleak scans: a leak is a splat on the console and fails the run.
fuzz_end() {
	echo "cask-guest: fuzz end: unloading, kmemleak" > /dev/console
	res "### selftest fuzz_unload"
	res "TAP version 13"
	res "1..1"
	res "# cells: $(cd /sys/kernel/cask/cells 2>/dev/null && echo ./*)"
	if fz_msg=$("$cask_modules" stop 2>&1) && [ ! -e /sys/kernel/cask ]; then
		res "ok 1 unload after fuzzing"
		res "### rc 0"
	else
		echo "$fz_msg" | while read -r fz_l; do res "# $fz_l"; done
		res "not ok 1 unload after fuzzing"
		res "### rc 1"
	fi
	if [ -w "$kmemleak" ]; then
		sleep 1
		echo scan > "$kmemleak"
		sleep 1
		echo scan > "$kmemleak"
		cat "$kmemleak" > /dev/console
	fi
	res "### end"
}

# make check's smoke: a few seconds of every generator (6 s each, checked
# between sequences, so that both smoke entries add about 2 minutes per
# kernel; cells underneath the others is make fuzz's, not here).
fuzz_smoke() {
	res "### selftest fuzz_smoke"
	if [ -z "$(cask-fuzz -l)" ]; then
		res "1..0 # SKIP cask-fuzz has no generators"
		res "### rc 4"
		return
	fi
	# CASK_ARGS (cask.args) replaces the arguments: a reproducer's
	# "-s SEED -n 1 -v DRIVER" on make check's kernels.
	# shellcheck disable=SC2086
	limited fuzz_smoke "$out" cask-fuzz ${targs:--T -t 6 -n 2000 all}
	res "### rc $?"
}

# Past findings of cask-fuzz that make check replays, one per line:
# driver, first seed and number of sequences of the run that failed (the
# sequences before the failed one left the state it needed), then what
# was found and where it was fixed.
fz_regressions="
binder 1796676868025814 43 a looper's answer outlived its sequence (913c996)
"

# One TAP line per finding: cask-fuzz's exit status, its output as
# comments. Runs in its own session under limited (fuzz_regress).
fz_regress_run() {
	echo "TAP version 13"
	echo "1..$(echo "$fz_regressions" | grep -c .)"
	fr_i=0
	echo "$fz_regressions" | while read -r fr_drv fr_seed fr_n fr_what; do
		[ -n "$fr_drv" ] || continue
		fr_i=$((fr_i + 1))
		if cask-fuzz -s "$fr_seed" -n "$fr_n" "$fr_drv" > /tmp/fuzz_regress.log 2>&1; then
			fr_ok=ok
		else
			fr_ok="not ok"
		fi
		sed '/^#/!s/^/# /' /tmp/fuzz_regress.log
		echo "$fr_ok $fr_i $fr_drv $fr_seed: $fr_what"
	done
}

# make check's replay of past findings (fz_regressions).
fuzz_regress() {
	res "### selftest fuzz_regress"
	limited fuzz_regress "$out" sh -c ". /usr/share/cask/fuzz.sh; fz_regress_run"
	res "### rc $?"
}

# make check's trinity: 30 s on the devices, from the host (as nobody)
# and one cell, when the image has trinity (install-deps.sh all installs
# it; the arm64 guest has none).
trinity_smoke() {
	if ! command -v trinity > /dev/null; then
		echo "cask-guest: no trinity in this image: no trinity_smoke" > /dev/console
		# A skip tools/qemu/expected-skips must list for this kernel.
		res "### selftest trinity_smoke"
		res "1..0 # SKIP no trinity in this image"
		res "### rc 4"
		return
	fi
	res "### selftest trinity_smoke"
	limited trinity_smoke "$out" sh -c ". /usr/share/cask/fuzz.sh; trinity_run 30 smoke"
	res "### rc $?"
}

# ---- trinity -----------------------------------------------------------

# Device nodes of every cask device, in a tmpfs directory of their own:
# trinity takes one victim path (-V) and does not follow its files across
# file systems, so /dev's nodes are made again here.
tr_victims() {
	mkdir -p /tmp/trinity/dev
	for tr_f in /dev/binder /dev/hwbinder /dev/vndbinder /dev/ashmem /dev/log/*; do
		[ -c "$tr_f" ] || continue
		tr_n=$(echo "${tr_f#/dev/}" | tr / _)
		tr_mm=$(stat -c '%t %T' "$tr_f")
		mknod "/tmp/trinity/dev/$tr_n" c $((0x${tr_mm% *})) $((0x${tr_mm#* }))
	done
	chmod 0666 /tmp/trinity/dev/*
}

# One trinity of instance $1 on victim set $2 (dev: the devices; sysfs:
# /sys/kernel/cask, every cell's files included) for $3 seconds, seed $4,
# as the caller is (the caller drops privileges). Only system calls on
# file descriptors, ioctl and mmap's family first; file descriptors only
# of the victims (pseudo), pipes and eventfds (for poll).
tr_once() {
	tr_v=/tmp/trinity/dev
	[ "$2" = dev ] || tr_v=/sys/kernel/cask
	tr_extra=
	# Container root: trinity runs as uid 0 only when told to.
	[ "$(id -u)" != 0 ] || tr_extra="--dangerous --clowntown"
	echo "cask-guest: trinity $1 $2 seed $4 for $3 s" 2>/dev/null > /dev/kmsg
	# shellcheck disable=SC2086
	(cd "/tmp/trinity/$1" && exec timeout -s INT "$3" trinity $tr_extra -q -l off -C 4 \
		-s "$4" -V "$tr_v" --enable-fds=pseudo,pipes,eventfd \
		-c ioctl -c mmap -c munmap -c mremap -c madvise -c mprotect -c msync \
		-c read -c write -c readv -c writev -c poll -c lseek -c fcntl -c dup \
		-c openat -c splice)
	echo "exit $? $2"
}

# The slices of instance $1 (number $2 of 3), $3 seconds in all, seeds
# from $4: slices of 300 s; in every fourth slice, shifted per instance,
# the sysfs files instead of the devices (not in a smoke run).
tr_slices() {
	tr_left=$3
	tr_k=0
	while [ "$tr_left" -gt 0 ]; do
		tr_s=300
		[ "$tr_left" -ge 300 ] || tr_s=$tr_left
		tr_set=dev
		[ "$tr_smoke" = smoke ] || [ $(((tr_k + $2) % 4)) != 3 ] || tr_set=sysfs
		tr_once "$1" "$tr_set" "$tr_s" $(($4 + tr_k))
		tr_left=$((tr_left - tr_s))
		tr_k=$((tr_k + 1))
	done
}

# trinity_run SECONDS full|smoke: trinity from the host as nobody and from
# cells registered through /sys/kernel/cask/register (two, or one in a
# smoke run), each a user namespace whose root is the host's (container
# root: the host's uid 0 without the host's capabilities) and an IPC
# namespace of its own, all at once. KTAP: one case per instance with its
# figures; a case fails when trinity stopped on its own (tainted kernel,
# no victims) rather than at the end of its time.
trinity_run() {
	tr_secs=$1
	tr_smoke=$2
	tr_seed=$(fz_arg fuzz_seed "")
	tr_seed=${tr_seed%%:*}
	[ -n "$tr_seed" ] || tr_seed=$(( $(date +%s) % 100000 * 1000 ))
	tr_seed=$((tr_seed % 1000000000))
	tr_who="host cella cellb"
	[ "$tr_smoke" != smoke ] || tr_who="host cella"
	echo "TAP version 13"
	echo "1..$(echo "$tr_who" | wc -w)"
	tr_victims
	echo "# victims: $(cd /tmp/trinity/dev && echo ./*)"
	tr_i=0
	tr_pids=
	for tr_w in $tr_who; do
		mkdir -p "/tmp/trinity/$tr_w"
		chmod 0777 "/tmp/trinity/$tr_w"
		tr_log=/tmp/trinity/$tr_w.log
		tr_sd=$((tr_seed + tr_i * 1000))
		echo "cask-guest: trinity $tr_w seeds from $tr_sd" > /dev/console
		if [ "$tr_w" = host ]; then
			# As nobody: trinity refuses the host's root.
			su -s /bin/sh nobody -c ". /usr/share/cask/fuzz.sh; tr_smoke=$tr_smoke; tr_slices $tr_w $tr_i $tr_secs $tr_sd" \
				> "$tr_log" 2>&1 &
		else
			# Registered before trinity opens anything: it waits
			# for the go file.
			unshare -U -r -i sh -c "while [ ! -e /tmp/trinity/go-$tr_w ]; do sleep 1; done;
				. /usr/share/cask/fuzz.sh; tr_smoke=$tr_smoke; tr_slices $tr_w $tr_i $tr_secs $tr_sd" \
				> "$tr_log" 2>&1 &
			tr_p=$!
			sleep 1
			if echo "fz-$tr_w $tr_p" > /sys/kernel/cask/register; then
				echo "# $tr_w: cell fz-$tr_w, process $tr_p"
			else
				echo "# $tr_w: registering process $tr_p failed"
				echo "register failed" >> "$tr_log"
			fi
			touch "/tmp/trinity/go-$tr_w"
		fi
		tr_pids="$tr_pids $!"
		tr_i=$((tr_i + 1))
	done
	for tr_p in $tr_pids; do
		wait "$tr_p"
	done
	tr_i=0
	tr_rc=0
	for tr_w in $tr_who; do
		tr_i=$((tr_i + 1))
		tr_log=/tmp/trinity/$tr_w.log
		# "Ran N syscalls. Successes: S  Failures: F" per slice.
		tr_fig=$(sed -n 's/.*Ran \([0-9]*\) syscalls\. Successes: \([0-9]*\) *Failures: \([0-9]*\).*/\1 \2 \3/p' "$tr_log" |
			awk '{ n++; r += $1; s += $2; f += $3 }
			END { printf "%d syscalls (%d succeeded, %d failed) in %d runs", r, s, f, n }')
		echo "# trinity $tr_w: $tr_fig, $tr_secs s, seeds from $((tr_seed + (tr_i - 1) * 1000))"
		# No "Ran" line, or only "Ran 0 syscalls": the instance did nothing.
		if grep -q 'register failed' "$tr_log" || grep -q '^exit [1-9]' "$tr_log" ||
		   [ "${tr_fig%% *}" -eq 0 ]; then
			tail -n 20 "$tr_log" | fz_diag
			[ "${tr_fig%% *}" -ne 0 ] || echo "# trinity $tr_w: no syscall ran"
			echo "not ok $tr_i trinity $tr_w"
			tr_rc=1
		else
			echo "ok $tr_i trinity $tr_w"
		fi
	done
	# The cells end with their namespaces; unregister what is left.
	for tr_w in $tr_who; do
		[ ! -e "/sys/kernel/cask/cells/fz-$tr_w" ] ||
			echo "fz-$tr_w" > /sys/kernel/cask/unregister 2>/dev/null
	done
	return $tr_rc
}
