#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make soak's guest side (issue 22): cask loaded, used and unloaded again
# and again, cells made and destroyed by the thousand, and an hour of
# traffic, each checked for what it leaves behind. POSIX sh under
# busybox; the work is done by cask-soak (tools/soak), one long-lived
# process per cell, because a fork costs milliseconds under TCG.
#
# Usage: soak.sh [-c CYCLES] [-C CELLS] [-t SECONDS] [-i INTERVAL] [-p PARTS]
#   -c  load/use/unload cycles (part 1; default 1000)
#   -C  cells made and destroyed (part 2; default 10000)
#   -t  seconds of traffic (part 3; default 3600)
#   -i  seconds between samples of part 3 (default 60, or SECONDS/12 when
#       that is shorter, so that a short run still has 12 samples)
#   -p  which parts to run, e.g. 13 (default 123)
# Output (stdout): KTAP, one case per part, its figures on '# ' lines.
# Exit status 0 only if every part passed.
#
# Needs: the modules in /lib/modules/cask and the BSP init script
# /etc/init.d/cask-modules (the guest's), cgroup v2 with the memory
# controller at /sys/fs/cgroup, debugfs with kmemleak (the guest's kernel
# has it: without it every part fails), cask-soak in PATH.

cycles=1000
cells=10000
secs=3600
interval=
parts=123
while getopts c:C:t:i:p: opt; do
	case $opt in
	c) cycles=$OPTARG ;;
	C) cells=$OPTARG ;;
	t) secs=$OPTARG ;;
	i) interval=$OPTARG ;;
	p) parts=$OPTARG ;;
	*) echo "usage: soak.sh [-c CYCLES] [-C CELLS] [-t SECONDS] [-i INTERVAL] [-p PARTS]" >&2
	   exit 2 ;;
	esac
done
if [ -z "$interval" ]; then
	interval=60
	[ $((secs / 12)) -lt 60 ] && interval=$((secs / 12))
	[ "$interval" -ge 1 ] || interval=1
fi

mods="/etc/init.d/cask-modules -d /lib/modules/cask"
cask=/sys/kernel/cask
cg=/sys/fs/cgroup/soak
kl=/sys/kernel/debug/kmemleak
work=/tmp/soak
mkdir -p "$work" "$cg"
# The cells' cgroups are measured: the memory controller below soak/.
echo +memory > "$cg/cgroup.subtree_control"

# Tolerances, and why they are not zero (Documentation/dev/testing.rst):
# SUnreclaim: KASAN's quarantine holds freed objects back (up to 1 MiB a
# CPU plus batches of the global queue), and SLUB keeps partial slabs
# (pages with free objects); neither depends on what cask leaked. Over 10
# and 20 cycles SUnreclaim grew 4.4 MB while the objects in use of all
# caches grew about 1 MB, none of them cask's (task_struct, sighand,
# names_cache: processes in the quarantine). kmemleak is the exact check.
slab_tol_kb=${SOAK_SLAB_TOL_KB:-8192}
# memory.current of a cell's cgroup: page cache of the binaries its
# processes ran and per-CPU charge batches (64 pages a CPU).
memcg_tol_kb=${SOAK_MEMCG_TOL_KB:-1024}
# MemFree over the traffic run: the above plus the page allocator's
# per-CPU lists.
free_tol_kb=${SOAK_FREE_TOL_KB:-8192}

n=0
all_ok=1
echo "TAP version 13"
echo "1..${#parts}"

fig() { echo "# $*"; }
now() { awk '{ print $1 }' /proc/uptime; }
since() { awk -v t="$1" '{ printf "%.2f", $1 - t }' /proc/uptime; }
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
memcg_kb() { echo $(($(cat "$cg/$1/memory.current") / 1024)); }
# Open file descriptors of every process (file-nr's count is a per-CPU
# counter's approximation, off by its batch).
fds() {
	t=0
	for d in /proc/[0-9]*/fd; do
		t=$((t + $(entries "$d")))
	done
	echo $t
}
# entries DIR: how many files DIR has.
entries() {
	set -- "$1"/*
	if [ -e "$1" ] || [ -L "$1" ]; then echo $#; else echo 0; fi
}
ncells() { entries $cask/cells; }

# Free what is only cached, and fill KASAN's quarantine (freed objects
# it holds back until it has 1/32 of memory; cask-soak fill), so that
# the figures compare what is held.
settle() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	cask-soak fill -m 64
	sleep 2
}

# Leaks found so far are not this part's: scan, then forget them.
kmemleak_mark() {
	[ -w $kl ] || return 0
	echo scan > $kl
	echo clear > $kl
}

# New leaks since kmemleak_mark: their count, nothing without kmemleak.
# Objects freed by RCU need a grace period: scan twice.
kmemleak_new() {
	[ -w $kl ] || return 0
	sleep 1
	echo scan > $kl
	sleep 1
	echo scan > $kl
	cat $kl > "$work/kmemleak"
	grep -c 'unreferenced object' "$work/kmemleak"
}

# slab_top BEFORE AFTER: the caches of /proc/slabinfo whose objects in
# use grew most between the two copies, as '# ' lines: where growth is.
slab_top() {
	awk 'FNR == 1 { f++ } /^#|^slabinfo/ { next }
		f == 1 { a[$1] = $2 }
		f == 2 { d = ($2 - a[$1]) * $4 / 1024; if (d >= 16) printf "%d %s %d %d\n", d, $1, $2 - a[$1], $4 }' \
		"$1" "$2" | sort -rn | head -n 8 |
		while read -r kb name objs size; do
			fig "  $name: $objs more objects of $size bytes ($kb kB)"
		done
}

kmemleak_show() {
	head -n 40 "$work/kmemleak" | sed 's/^/#   /'
}

# check_leaks OK_VAR LEAKS: prints kmemleak_new's figure LEAKS (the first
# reports as '# ' lines) and clears OK_VAR on a leak or no kmemleak.
check_leaks() {
	case $2 in
	'')
		fig "kmemleak: not available"
		eval "$1=0" ;;
	0)
		fig "kmemleak: 0 new unreferenced objects" ;;
	*)
		fig "kmemleak: $2 new unreferenced objects: FAIL"
		kmemleak_show
		eval "$1=0" ;;
	esac
}

# start_cell NAME: a container (its own IPC, mount and PID namespaces) in
# the cgroup soak/NAME that sleeps until stop_cells; sets $cellpid to
# its init (as seen here).
start_cell() {
	mkdir -p "$cg/$1"
	# shellcheck disable=SC2016 # $$ is the inner shell's
	sh -c 'echo $$ > "$1/cgroup.procs"; exec unshare -i -m -p -f sleep 1000000' \
		sh "$cg/$1" &
	cellpid=
	i=0
	while [ -z "$cellpid" ] && [ $i -lt 100 ]; do
		while read -r p; do
			[ "$(readlink "/proc/$p/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] &&
				cellpid=$p
		done < "$cg/$1/cgroup.procs"
		[ -n "$cellpid" ] || sleep 0.1
		i=$((i + 1))
	done
	[ -n "$cellpid" ]
}

# stop_cell NAME: kill what runs in soak/NAME and remove the cgroup.
stop_cell() {
	[ -d "$cg/$1" ] || return 0
	while read -r p; do
		kill -KILL "$p" 2>/dev/null
	done < "$cg/$1/cgroup.procs"
	i=0
	# (cgroup files have no size: test -s cannot tell an empty one.)
	while [ -n "$(cat "$cg/$1/cgroup.procs")" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	rmdir "$cg/$1" 2>/dev/null
}

loaded() { [ -d $cask ]; }

# The kernel stacks of every cask-soak process, as '# ' lines: where a
# hang is.
dump_stacks() {
	for d in /proc/[0-9]*; do
		[ "$(cat "$d/comm" 2>/dev/null)" = cask-soak ] || continue
		fig "${d#/proc/}: $(grep '^State' "$d/status")"
		sed 's/^/#     /' "$d/stack" 2>/dev/null
		for t in "$d"/task/*; do
			[ "$t" = "$d/task/${d#/proc/}" ] && continue
			fig "  thread ${t##*/}: $(grep '^State' "$t/status")"
			sed 's/^/#     /' "$t/stack" 2>/dev/null
		done
	done
}

# limited SECONDS OUT CMD...: CMD with its output to OUT; past SECONDS
# the stacks are printed and CMD is killed. CMD's exit status.
limited() {
	lim=$1
	lout=$2
	lcmd=$3
	shift 2
	"$@" > "$lout" 2>&1 &
	lpid=$!
	waited=0
	while kill -0 $lpid 2>/dev/null && [ $waited -lt "$lim" ]; do
		sleep 1
		waited=$((waited + 1))
	done
	if kill -0 $lpid 2>/dev/null; then
		fig "$lcmd (output $lout) still running after $lim s: FAIL; stacks:"
		dump_stacks
		kill -KILL $lpid
	fi
	wait $lpid
}

result() {
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		all_ok=0
	fi
}

# check OK_VAR WHAT BEFORE AFTER TOLERANCE: prints the figure and clears
# OK_VAR when AFTER exceeds BEFORE by more than TOLERANCE.
check_growth() {
	d=$(($4 - $3))
	if [ $d -gt "$5" ]; then
		fig "$2: $3 -> $4 kB ($d kB, more than $5): FAIL"
		eval "$1=0"
	else
		fig "$2: $3 -> $4 kB ($d kB, within $5)"
	fi
}

# ---- part 1: load, use from three cells, unload -------------------------

part_cycles() {
	ok=1
	fig "part 1: $cycles cycles of load, use from 3 cells, unload"
	if loaded && ! $mods stop > "$work/mods" 2>&1; then
		sed 's/^/#   /' "$work/mods"
		result 0 load_use_unload_cycles
		return
	fi
	list=$($mods list)
	if start_cell c1; then p1=$cellpid; else fig "could not start c1"; ok=0; fi
	if start_cell c2; then p2=$cellpid; else fig "could not start c2"; ok=0; fi
	mkdir -p "$cg/host"
	settle
	kmemleak_mark
	slab0=$(meminfo Slab)
	unrec0=$(meminfo SUnreclaim)
	cp /proc/slabinfo "$work/slabinfo0"
	fd0=$(fds)
	mh0=$(memcg_kb host)
	m10=$(memcg_kb c1)
	m20=$(memcg_kb c2)
	tmin=999999
	tmax=0
	ttot=0
	i=1
	while [ $i -le "$cycles" ] && [ $ok = 1 ]; do
		t0=$(now)
		if ! $mods start > "$work/mods" 2>&1; then
			sed 's/^/#   /' "$work/mods"
			fig "cycle $i: load failed"
			ok=0
			break
		fi
		tl=$(since "$t0")
		for c in "c1 $p1" "c2 $p2"; do
			echo "$c" > $cask/register || { fig "cycle $i: register $c failed"; ok=0; }
		done
		# Each use stops itself after 120 s (alarm); 300 s is a hang.
		limited 300 "$work/use-h" cask-soak -g "$cg/host" use &
		uh=$!
		limited 300 "$work/use-1" cask-soak -n "$p1" -g "$cg/c1" use &
		u1=$!
		limited 300 "$work/use-2" cask-soak -n "$p2" -g "$cg/c2" use &
		u2=$!
		for u in "$uh:h" "$u1:1" "$u2:2"; do
			wait "${u%:*}" && continue
			fig "cycle $i: use in cell ${u#*:} failed:"
			sed 's/^/#   /' "$work/use-${u#*:}"
			ok=0
		done
		tu=$(since "$t0")
		# Every other cycle the cells go by unregister, the others
		# with the module.
		if [ $((i % 2)) = 1 ]; then
			for c in c1 c2; do
				echo $c > $cask/unregister ||
					{ fig "cycle $i: unregister $c failed"; ok=0; }
			done
		fi
		# Nothing may hold a module now but the modules using it.
		for m in $list; do
			r=$(cat "/sys/module/$m/refcnt")
			h=$(entries "/sys/module/$m/holders")
			[ "$r" = "$h" ] && continue
			fig "cycle $i: $m refcnt $r with $h holders: $(ls "/sys/module/$m/holders")"
			ok=0
		done
		if ! $mods stop > "$work/mods" 2>&1 || loaded; then
			sed 's/^/#   /' "$work/mods"
			fig "cycle $i: unload failed"
			ok=0
		fi
		ms=$(awk -v t="$t0" '{ printf "%d", ($1 - t) * 1000 }' /proc/uptime)
		ttot=$((ttot + ms))
		[ "$ms" -lt "$tmin" ] && tmin=$ms
		[ "$ms" -gt "$tmax" ] && tmax=$ms
		# SUnreclaim unsettled: only a trend.
		fig "cycle $i: $ms ms (loaded at $tl s, used at $tu s), SUnreclaim $(meminfo SUnreclaim) kB"
		i=$((i + 1))
	done
	done_cycles=$((i - 1))
	settle
	leaks=$(kmemleak_new)
	slab1=$(meminfo Slab)
	unrec1=$(meminfo SUnreclaim)
	cp /proc/slabinfo "$work/slabinfo1"
	fd1=$(fds)
	mh1=$(memcg_kb host)
	m11=$(memcg_kb c1)
	m21=$(memcg_kb c2)
	[ "$done_cycles" -gt 0 ] &&
		fig "cycles: $done_cycles, per cycle min $tmin ms, mean $((ttot / done_cycles)) ms, max $tmax ms"
	fig "before/after, modules unloaded, caches dropped:"
	fig "Slab: $slab0 -> $slab1 kB ($((slab1 - slab0)) kB)"
	check_growth ok SUnreclaim "$unrec0" "$unrec1" "$slab_tol_kb"
	fig "caches grown most (objects in use):"
	slab_top "$work/slabinfo0" "$work/slabinfo1"
	check_growth ok "memory.current host cgroup" "$mh0" "$mh1" "$memcg_tol_kb"
	check_growth ok "memory.current c1" "$m10" "$m11" "$memcg_tol_kb"
	check_growth ok "memory.current c2" "$m20" "$m21" "$memcg_tol_kb"
	if [ "$fd1" -gt "$fd0" ]; then
		fig "open fds: $fd0 -> $fd1: FAIL"
		ok=0
	else
		fig "open fds: $fd0 -> $fd1"
	fi
	check_leaks ok "$leaks"
	# The cells' cgroups, emptied, must go.
	for c in c1 c2; do
		stop_cell $c || { fig "cgroup soak/$c not removable"; ok=0; }
	done
	rmdir "$cg/host" || { fig "cgroup soak/host not removable"; ok=0; }
	$mods start > "$work/mods" 2>&1 || { sed 's/^/#   /' "$work/mods"; ok=0; }
	result $ok load_use_unload_cycles
}

# ---- part 2: cell churn under traffic ------------------------------------

# traffic_start NAME ARGS...: a registered cell NAME running cask-soak
# traffic ARGS; sets $tpid.
traffic_start() {
	name=$1
	shift
	start_cell "$name" || return 1
	echo "$name $cellpid" > $cask/register || return 1
	cask-soak -n "$cellpid" -g "$cg/$name" traffic "$@" > "$work/traffic-$name" 2>&1 &
	tpid=$!
}

# traffic_end NAME PID: wait for it (it was stopped or its time is up),
# print its counts; fails unless it exited 0.
traffic_end() {
	wait "$2"
	rc=$?
	sed 's/^/# /' "$work/traffic-$1"
	echo "$1" > $cask/unregister 2>/dev/null
	stop_cell "$1"
	return $rc
}

part_churn() {
	ok=1
	fig "part 2: $cells cells made and destroyed while 2 cells run binder and logger traffic"
	loaded || $mods start > /dev/null 2>&1 || { result 0 cell_churn; return; }
	mc=$(cat $cask/max_cells)
	mu=$(cat $cask/max_cells_per_user)
	# A fast loop outruns the release of the cells of ended namespaces
	# (a grace period each): room for that, the loop retries the rest.
	echo 1024 > $cask/max_cells
	echo 1024 > $cask/max_cells_per_user
	# Before the traffic cells start and after they are gone: what the
	# churn left is the difference.
	settle
	kmemleak_mark
	c0=$(ncells)
	unrec0=$(meminfo SUnreclaim)
	cp /proc/slabinfo "$work/slabinfo0"
	free0=$(meminfo MemFree)
	# Paced (50 operations a second a driver): on two CPUs, traffic at
	# full rate would starve the churn (part 3 is the full rate).
	if traffic_start t1 -b -l -r 50; then t1=$tpid; else fig "could not start t1"; ok=0; fi
	if traffic_start t2 -b -l -r 50; then t2=$tpid; else fig "could not start t2"; ok=0; fi
	t0=$(now)
	# 1 s a cell: ten times what a loaded host takes (0.1 to 0.4 s).
	limited $((cells + 300)) "$work/churn" cask-soak churn -n "$cells" || ok=0
	sed 's/^/# /' "$work/churn"
	fig "churn took $(since "$t0") s"
	kill -TERM "$t1" "$t2"
	traffic_end t1 "$t1" || ok=0
	traffic_end t2 "$t2" || ok=0
	# The traffic cells are gone now; the churned ones must be.
	i=0
	while [ "$(ncells)" -gt "$c0" ] && [ $i -lt 60 ]; do
		sleep 1
		i=$((i + 1))
	done
	c1=$(ncells)
	if [ "$c1" != "$c0" ]; then
		fig "cells: $c1 after, $c0 before: FAIL ($(cd $cask/cells && echo *))"
		ok=0
	else
		fig "cells: back to $c0 (after ${i} s)"
	fi
	settle
	leaks=$(kmemleak_new)
	check_growth ok SUnreclaim "$unrec0" "$(meminfo SUnreclaim)" "$slab_tol_kb"
	cp /proc/slabinfo "$work/slabinfo1"
	fig "caches grown most (objects in use):"
	slab_top "$work/slabinfo0" "$work/slabinfo1"
	fig "MemFree: $free0 -> $(meminfo MemFree) kB"
	fig "cells refused: $(cat $cask/cells_refused)"
	check_leaks ok "$leaks"
	echo "$mc" > $cask/max_cells
	echo "$mu" > $cask/max_cells_per_user
	result $ok cell_churn
}

# ---- part 3: traffic ---------------------------------------------------------

# One sample line: seconds, MemFree, Slab, memory.current of t1 and t2
# (kB), open fds of their processes, then each cell's driver counters.
counters="binder/procs binder/threads binder/nodes binder/refs binder/transactions
binder/buffer_bytes binder/transactions_total binder/failed_transactions ashmem/regions
ashmem/bytes logger/main/readers logger/main/bytes_written"
sample() {
	ss=$1
	# One awk for all the files and shell builtins for the rest: the
	# traffic keeps both CPUs busy and each fork waits for one.
	fdn=0
	for c in t1 t2; do
		while read -r p; do
			set -- "/proc/$p/fd"/*
			[ -e "$1" ] || [ -L "$1" ] && fdn=$((fdn + $#))
		done < "$cg/$c/cgroup.procs"
	done
	files=
	for c in t1 t2; do
		for f in $counters; do
			files="$files $cask/cells/$c/$f"
		done
	done
	# shellcheck disable=SC2086 # one word a file
	awk -v s="$ss" -v fdn="$fdn" '
		FILENAME == "/proc/meminfo" {
			if ($1 == "MemFree:") mf = $2
			if ($1 == "Slab:") sl = $2
			next
		}
		FNR == 1 { v[++n] = $1 }
		END {
			printf "%s %s %s %d %d %s", s, mf, sl, v[1] / 1024, v[2] / 1024, fdn
			for (i = 3; i <= n; i++) printf " %s", v[i]
			printf "\n"
		}' /proc/meminfo "$cg/t1/memory.current" "$cg/t2/memory.current" $files
}

part_traffic() {
	ok=1
	fig "part 3: binder, ashmem and logger traffic from 2 cells for $secs s, a sample every $interval s"
	loaded || $mods start > /dev/null 2>&1 || { result 0 traffic; return; }
	# A full quarantine from the start: the slab figures then show what
	# the traffic holds, not the quarantine filling up.
	settle
	kmemleak_mark
	t0=$(now)
	for c in t1 t2; do
		if traffic_start $c -b -a -l -t "$secs"; then
			eval "$c=\$tpid"
		else
			fig "could not start $c"
			ok=0
		fi
	done
	: > "$work/series"
	fig "series: s MemFree Slab memcg_t1 memcg_t2 fds, then for t1 and t2:" \
		"$(echo "$counters" | tr '\n' ' ' | sed 's|binder/||g; s|ashmem/|a_|g; s|logger/main/|l_|g')"
	next=0
	while kill -0 "$t1" 2>/dev/null || kill -0 "$t2" 2>/dev/null; do
		s=$(awk -v t="$t0" '{ printf "%d", $1 - t }' /proc/uptime)
		# The last interval: the traffic may be ending, not running.
		[ "$s" -le $((secs - interval)) ] || break
		if [ "$s" -ge $next ]; then
			sample "$s" >> "$work/series"
			echo "# $(tail -n 1 "$work/series")"
			next=$((next + interval))
		fi
		sleep 1
	done
	traffic_end t1 "$t1" || ok=0
	traffic_end t2 "$t2" || ok=0
	# Flat: after a warm-up of a twelfth of the run, the mean of the
	# first sixth of it (the first 10 minutes of an hour) against that
	# of the last sixth, within the tolerances above; the fds within 2
	# (each cell's ashmem thread has a region open, or not, at a sample).
	# The driver's gauges (what exists at a moment) stay within what
	# one traffic process can hold at once.
	awk -v ft="$free_tol_kb" -v st="$slab_tol_kb" -v mt="$memcg_tol_kb" '
		{ for (i = 1; i <= NF; i++) v[NR, i] = $i; nf = NF }
		END {
			n = NR; w0 = int(n / 12); if (w0 < 1) w0 = 1
			len = int(n / 6); if (len < 1) len = 1
			if (n - w0 < 2 * len) { print "# too few samples (" n ") to judge"; exit 1 }
			split("s MemFree Slab memcg_t1 memcg_t2 fds", name)
			bad = 0
			for (i = 2; i <= 6; i++) {
				a = 0; b = 0
				for (r = w0 + 1; r <= w0 + len; r++) a += v[r, i]
				for (r = n - len + 1; r <= n; r++) b += v[r, i]
				a /= len; b /= len
				tol = i == 2 ? ft : i == 3 ? st : i == 6 ? 2 : mt
				d = i == 2 ? a - b : b - a
				verdict = d > tol ? "FAIL" : "flat"
				if (d > tol) bad = 1
				printf "# %s: first %d samples %.0f, last %d %.0f (%s %.0f, tolerance %d): %s\n",
					name[i], len, a, len, b, i == 2 ? "drop" : "growth", d, tol, verdict
			}
			# gauges per cell: procs<=2 threads<=3 nodes<=1 refs<=1
			# transactions<=2 buffer_bytes<=4096 regions<=1 bytes<=65536 readers<=1
			split("2 3 1 1 2 4096 - - 1 65536 1 -", lim)
			split("procs threads nodes refs transactions buffer_bytes - - regions bytes readers -", gn)
			for (c = 0; c < 2; c++)
				for (k = 1; k <= 12; k++) {
					if (lim[k] == "-") continue
					m = 0
					for (r = 1; r <= n; r++) {
						x = v[r, 6 + c * 12 + k]
						if (x == "-") { m = "missing"; break }
						if (x + 0 > m) m = x + 0
					}
					if (m == "missing" || m > lim[k]) {
						printf "# t%d %s: max %s, more than %s: FAIL\n", c + 1, gn[k], m, lim[k]
						bad = 1
					}
				}
			exit bad
		}' "$work/series" || ok=0
	leaks=$(kmemleak_new)
	check_leaks ok "$leaks"
	result $ok traffic
}

case $parts in *1*) part_cycles ;; *) fig "part 1 not run (-p)" ;; esac
case $parts in *2*) part_churn ;; *) fig "part 2 not run (-p)" ;; esac
case $parts in *3*) part_traffic ;; *) fig "part 3 not run (-p)" ;; esac
[ $all_ok = 1 ]
