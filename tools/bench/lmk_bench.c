// SPDX-License-Identifier: GPL-2.0
/*
 * lmk_bench: the same memory ramp in a container, with lowmemorykiller
 * enabled for its cell and with only the memory cgroup's OOM killer (the
 * cell's killer disabled), in the same boot.
 *
 * Method
 * ------
 * The container is a cgroup of its own (/sys/fs/cgroup/cask-lmk-bench,
 * memory.max -m MiB, 96) and a cell registered as "lmk-bench" from a
 * keeper process that sits in that cgroup in an IPC namespace of its own
 * (oom_score_adj -1000). The cell has one level: minfree -l MiB (16) in
 * pages, adj 100.
 *
 * A ramp: 4 victims of -v MiB (8) each, touched, with oom_score_adj 900,
 * 800, 700 and 600, wait in the cgroup with a hog (oom_score_adj -1000,
 * so that the memcg OOM killer takes the victims as lowmemorykiller does)
 * of -b MiB (40); then the hog grows by 1 MiB every -s ms (20), on an
 * absolute schedule, to -g MiB (84). Sized so that the hog crosses the
 * level once per victim the killer frees, and reaches memory.max three
 * times without it; the hog alone stays below memory.max. The step is
 * slow enough that the hog does not grow by a victim's size while the
 * killer reacts, so that each kill has a crossing of its own. After each
 * 1 MiB step the hog reads the cgroup's memory.current and keeps it with
 * the step's start time.
 *
 * Modes, interleaved: each round runs an idle window (no ramp, as long as
 * a ramp's nominal length), a ramp with the cell's killer enabled ("lmk"),
 * the same with the module's reap param N ("lmk-noreap": victims' memory
 * freed by their exit, as without patches/0002; only where the kernel has
 * the patch) and one with the cell's killer disabled ("memcg"), in an
 * order that rotates from round to round; -r rounds (20).
 *
 * What is measured:
 *  - reaction, ours: from the start of the hog's step in which
 *    memory.current went above memory.max - minfree (the level's
 *    crossing: this bounds it from below, so the figure may be high by
 *    at most one step's memset) to the lmk_kill tracepoint of the kill
 *    (tracefs, trace_clock mono, the same clock as ours);
 *  - reaction, the driver's: reaction_us of each lmk_kill event (from the
 *    tick's or the shrinker's first sight of the cell within a level to
 *    SIGKILL: it does not count the time before the slow tick looks);
 *  - freed: the driver's freed_us (SIGKILL to the victim's memory freed),
 *    polled every 2 ms during the ramp, one value per change of "LAST";
 *  - for the memcg OOM killer, from the level's crossing to its first
 *    kill of a ramp (oom:mark_victim), for comparison only: the cell
 *    stays past the level after that kill, so later ones have no
 *    crossing of their own;
 *  - the container's stall: the change of "full total" (and "some") in
 *    the cgroup's memory.pressure over the ramp (from the hog's start to
 *    its last step);
 *  - the host: a thread of this process (in the root cgroup) sleeps
 *    1 ms at a time (clock_nanosleep to an absolute time 1 ms from its
 *    last wake-up); its lateness is counted against the window it falls
 *    in: idle, lmk ramp, memcg ramp (nothing between windows). The main
 *    thread polls the same files every 2 ms in every window.
 *
 * The reaping patch (patches/0002, features/lmk_reap): on a kernel with
 * it, the reap param (Y at other times, and restored at the end) gives
 * freed_us with and without the reaper in one boot; on one without it,
 * freed_us is the exit's only.
 *
 * Percentiles are nearest-rank over every sample of every round. The
 * targets are printed with a verdict; nothing is asserted. Every ratio
 * with a target is printed once more as one line, "bench ratio lmk WHAT =
 * X (target >= Y)" (or <= Y), as the other benches do: the host task's
 * lateness lmk/memcg, the noise (idle of even rounds / of odd rounds, at
 * most the same 1.10: a difference within the noise is not a
 * measurement) and the stall memcg/lmk. The host task's "/ idle" column
 * has no target, so no line: the ramp itself slows the host task in
 * every mode, and the target is lmk against memcg. The reaction is a
 * time, not a ratio: its "bench target" line only. The memcg
 * ramps' OOM reports are announced to the console judge with the
 * "cask-test: oom expected" / "cask-test: oom done" marks in /dev/kmsg.
 *
 * Exit status: 0, 4 if lowmemorykiller is not loaded (skip), 1 on
 * errors, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PARAMS		"/sys/module/lowmemorykiller/parameters/"
#define CASK		"/sys/kernel/cask"
#define CELL		"lmk-bench"
#define CELL_LMK	CASK "/cells/" CELL "/lmk/"
#define CGROUP		"/sys/fs/cgroup/cask-lmk-bench"
#define TRACING		"/sys/kernel/tracing"
#define KMSG		"/dev/kmsg"
#define MIB		(1024L * 1024)
#define NVICTIMS	4
#define LEVEL_ADJ	100
#define MAX_STEPS	1024
#define MAX_EVENTS	64		/* kills of one ramp */
#define MAX_ROUNDS	200
#define TICK_NS		1000000ULL	/* the host task's period */
#define POLL_US		2000		/* the main thread's polling */
#define RAMP_TIMEOUT	30		/* seconds */
#define ALARM_S		900
#define EXIT_SKIP	4
#define TARGET_REACT_MS	100.0		/* p99, crossing to SIGKILL, at most */
#define TARGET_STALL	5.0		/* memcg stall / lmk stall, at least */
#define TARGET_HOST	1.10		/* lmk / memcg host lateness, at most */

static const int victim_adj[NVICTIMS] = { 900, 800, 700, 600 };

/* Windows: idle, and ramps with the killer, without its reaper, without it. */
enum mode { IDLE, LMK, NOREAP, MEMCG, NMODES, NONE = NMODES };
static const char *const mode_names[] = { "idle", "lmk", "lmk-noreap", "memcg" };

static struct {
	int rounds;
	long max_mib;
	long level_mib;
	long victim_mib;
	long start_mib;
	long hog_mib;
	double step_ms;
} opt = { .rounds = 20, .max_mib = 96, .level_mib = 16, .victim_mib = 8,
	  .start_mib = 40, .hog_mib = 84, .step_ms = 20 };

/* A growable array of samples. */
struct vec {
	double *v;
	size_t n, cap;
};

static void vec_push(struct vec *s, double x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		double *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return;		/* a sample less; counted in n */
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
}

/* What the hog did, in memory shared with it. */
struct hog_log {
	int steps;
	long usage0;			/* memory.current before its first step */
	uint64_t begin[MAX_STEPS];	/* each step's start, CLOCK_MONOTONIC ns */
	long usage[MAX_STEPS];		/* memory.current after it */
};

/* Everything the rounds collect, per mode where it applies. */
static struct {
	struct vec lat[NMODES];		/* host lateness, us */
	struct vec idle_ab[2];		/* idle lateness of even, odd rounds */
	struct vec react_own[NMODES];	/* crossing to SIGKILL / OOM kill, ms */
	struct vec react_drv[NMODES];	/* the driver's reaction_us, ms */
	struct vec freed[NMODES];	/* freed_us, ms */
	struct vec full[NMODES];	/* stall per ramp, ms */
	struct vec some[NMODES];
	struct vec kills[NMODES];	/* lmk kills per ramp */
	struct vec ooms[NMODES];	/* memcg oom_kill per ramp */
	struct vec ramp_s[NMODES];	/* the hog's ramp, s */
	int unmatched[NMODES];		/* kills without a crossing before them */
	int freed_missing[NMODES];	/* kills without a freed_us change */
} res;

static struct hog_log *hog;
static atomic_int window = NONE;
static atomic_int round_no;
static atomic_bool ticker_stop;
static pid_t keeper;
static bool have_trace, have_oom_trace;
static char reap[8] = "?";		/* features/lmk_reap */
static char reap_param[8];		/* the reap param at our start, "" without */
static bool modes_on[NMODES] = { true, true, false, true };
static long base_usage;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Read the first line of @path into @buf; -1 if it cannot be read. */
static int read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int write_str(const char *path, const char *s)
{
	/* O_TRUNC: what clears tracefs's trace; no other file minds it. */
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static long read_long(const char *path)
{
	char buf[64];

	if (read_line(path, buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

/* A key's value in a flat-keyed cgroup file (memory.events), or -1. */
static long cg_key(const char *file, const char *key)
{
	char path[128], line[256];
	size_t klen = strlen(key);
	long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), CGROUP "/%s", file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			val = atol(line + klen + 1);
	fclose(f);
	return val;
}

/* memory.pressure's "some" and "full" totals, us. */
static int psi_totals(uint64_t *some, uint64_t *full)
{
	char line[256], *t;
	FILE *f = fopen(CGROUP "/memory.pressure", "r");

	*some = *full = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		t = strstr(line, "total=");
		if (!t)
			continue;
		if (!strncmp(line, "some ", 5))
			*some = strtoull(t + 6, NULL, 10);
		else if (!strncmp(line, "full ", 5))
			*full = strtoull(t + 6, NULL, 10);
	}
	fclose(f);
	return 0;
}

static int set_adj(int adj)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", adj);
	return write_str("/proc/self/oom_score_adj", buf);
}

/* A child's way into the container's cgroup. */
static void enter_cgroup(int adj, const char *name)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (write_str(CGROUP "/cgroup.procs", "0") || set_adj(adj))
		_exit(98);
	prctl(PR_SET_NAME, name);
}

/* The host task: 1 ms sleeps, lateness counted against the window. */
static void *ticker(void *unused)
{
	struct timespec ts;
	uint64_t target, t;
	int w;

	(void)unused;
	t = now_ns();
	while (!atomic_load(&ticker_stop)) {
		target = t + TICK_NS;
		ts.tv_sec = target / 1000000000;
		ts.tv_nsec = target % 1000000000;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		t = now_ns();
		w = atomic_load(&window);
		if (w != NONE)
			vec_push(&res.lat[w], (t - target) / 1e3);
		if (w == IDLE)
			vec_push(&res.idle_ab[atomic_load(&round_no) & 1], (t - target) / 1e3);
	}
	return NULL;
}

/* A victim: @mib MiB touched at @adj, in the cgroup; waits to die. */
static pid_t victim(int adj, int ready)
{
	char name[16];
	pid_t pid;
	char *p;

	pid = fork();
	if (pid)
		return pid;
	snprintf(name, sizeof(name), "lmkb-v%d", adj);
	enter_cgroup(adj, name);
	/* Not malloc(): a block never read may be dropped. */
	p = mmap(NULL, opt.victim_mib * MIB, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(97);
	memset(p, 0x5a, opt.victim_mib * MIB);
	if (write(ready, "v", 1) != 1)
		_exit(96);
	for (;;)
		pause();
}

/*
 * The hog: in the cgroup at adj -1000, says "r" on @ready, waits for a
 * byte on @go, then grows 1 MiB per step on an absolute schedule, logs
 * each step in *hog, says "d" and holds on.
 */
static pid_t hog_start(int ready, int go)
{
	uint64_t step_ns = opt.step_ms * 1e6, start;
	struct timespec ts;
	char buf[32], c;
	int fd, i;
	pid_t pid;
	char *p;

	pid = fork();
	if (pid)
		return pid;
	enter_cgroup(-1000, "lmkb-hog");
	fd = open(CGROUP "/memory.current", O_RDONLY | O_CLOEXEC);
	p = mmap(NULL, opt.hog_mib * MIB, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || p == MAP_FAILED)
		_exit(97);
	memset(p, 0x5b, opt.start_mib * MIB);
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(96);
	memset(buf, 0, sizeof(buf));
	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		_exit(95);
	hog->usage0 = atol(buf);
	start = now_ns();
	for (i = 0; i < opt.hog_mib - opt.start_mib; i++) {
		hog->begin[i] = now_ns();
		memset(p + (opt.start_mib + i) * MIB, 0x5b, MIB);
		memset(buf, 0, sizeof(buf));
		if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
			_exit(95);
		hog->usage[i] = atol(buf);
		hog->steps = i + 1;
		ts.tv_sec = (start + (i + 1) * step_ns) / 1000000000;
		ts.tv_nsec = (start + (i + 1) * step_ns) % 1000000000;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	if (write(ready, "d", 1) != 1)
		_exit(96);
	for (;;)
		pause();
}

static void reap_pid(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGKILL);
	waitpid(*pid, NULL, 0);
	*pid = 0;
}

/* The trace's timestamp (ns, trace_clock mono) of the event at @ev. */
static uint64_t trace_ts(const char *line, const char *ev)
{
	const char *q = ev;

	/* "... [001] .....  123.456789: lmk_kill: ..." */
	while (q > line && q[-1] == ' ')
		q--;
	while (q > line && q[-1] != ' ')
		q--;
	return strtod(q, NULL) * 1e9;
}

struct events {
	int nk, no;
	uint64_t kill_ns[MAX_EVENTS];
	double react_us[MAX_EVENTS];
	uint64_t oom_ns[MAX_EVENTS];
};

/* Our cell's lmk_kill events and the OOM killer's kills in the trace. */
static void trace_events(struct events *e)
{
	char line[512], *p;
	FILE *f;

	memset(e, 0, sizeof(*e));
	if (!have_trace)
		return;
	f = fopen(TRACING "/trace", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		p = strstr(line, " lmk_kill: ");
		if (p && strstr(p, "cell=" CELL " ") && e->nk < MAX_EVENTS) {
			e->kill_ns[e->nk] = trace_ts(line, p);
			p = strstr(p, "reaction_us=");
			e->react_us[e->nk++] = p ? atof(p + 12) : -1;
			continue;
		}
		p = strstr(line, " mark_victim: ");
		if (p && e->no < MAX_EVENTS)
			e->oom_ns[e->no++] = trace_ts(line, p);
	}
	fclose(f);
}

/*
 * The times (ms) from the level's crossing to each kill at @kill_ns: the
 * start of the hog's step after which memory.current was above @thr,
 * having been at or below it before, the latest one before the kill that
 * no earlier kill took.
 */
static void crossings(const uint64_t *kill_ns, int n, long thr, enum mode m)
{
	int used = -1, k, i, best;
	long prev;

	for (k = 0; k < n; k++) {
		best = -1;
		prev = hog->usage0;
		for (i = 0; i < hog->steps; i++) {
			if (hog->begin[i] > kill_ns[k])
				break;
			if (prev <= thr && hog->usage[i] > thr && i > used)
				best = i;
			prev = hog->usage[i];
		}
		if (best < 0) {
			res.unmatched[m]++;
			continue;
		}
		used = best;
		vec_push(&res.react_own[m], (kill_ns[k] - hog->begin[best]) / 1e6);
	}
}

/* Wait until the cgroup is back to the keeper alone (3 s at most). */
static void settle(void)
{
	int i;

	for (i = 0; i < 300; i++) {
		if (read_long(CGROUP "/memory.current") <= base_usage + MIB)
			return;
		usleep(10000);
	}
}

/* The "LAST" of freed_us, or -1. */
static long freed_last(char *buf, size_t len)
{
	if (read_line(CELL_LMK "freed_us", buf, len))
		return -1;
	return atol(buf);
}

/* An idle window, as long as a ramp would be, polling as a ramp does. */
static void idle_window(void)
{
	uint64_t end = now_ns() + (opt.hog_mib - opt.start_mib) * opt.step_ms * 1e6;
	char buf[64];

	atomic_store(&window, IDLE);
	while (now_ns() < end) {
		freed_last(buf, sizeof(buf));
		read_long(CELL_LMK "kills");
		usleep(POLL_US);
	}
	atomic_store(&window, NONE);
}

static int run_ramp(enum mode m)
{
	long thr = (opt.max_mib - opt.level_mib) * MIB, kills0, oom0;
	pid_t vp[NVICTIMS] = { 0 }, hp = 0;
	int ready[2], go[2], i, ret = -1, freed_seen = 0;
	uint64_t s0, f0, s1, f1, t0, t1 = 0;
	char last[64], cur[64], c;
	struct events ev;
	struct pollfd pfd;

	if (write_str(CELL_LMK "enabled", m == MEMCG ? "0" : "1")) {
		fprintf(stderr, "lmk_bench: %senabled: %s\n", CELL_LMK, strerror(errno));
		return -1;
	}
	if (*reap_param && write_str(PARAMS "reap", m == NOREAP ? "N" : "Y")) {
		fprintf(stderr, "lmk_bench: %sreap: %s\n", PARAMS, strerror(errno));
		return -1;
	}
	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC)) {
		perror("lmk_bench: pipe");
		return -1;
	}
	for (i = 0; i < NVICTIMS; i++) {
		vp[i] = victim(victim_adj[i], ready[1]);
		if (vp[i] < 0 || read(ready[0], &c, 1) != 1) {
			fprintf(stderr, "lmk_bench: victim %d did not start\n", i);
			goto out;
		}
	}
	memset(hog, 0, sizeof(*hog));
	hp = hog_start(ready[1], go[0]);
	if (hp < 0 || read(ready[0], &c, 1) != 1) {
		fprintf(stderr, "lmk_bench: the hog did not start\n");
		goto out;
	}
	if (have_trace)
		write_str(TRACING "/trace", "");
	if (m == MEMCG)
		write_str(KMSG, "cask-test: oom expected\n");
	kills0 = read_long(CELL_LMK "kills");
	oom0 = cg_key("memory.events", "oom_kill");
	freed_last(last, sizeof(last));
	psi_totals(&s0, &f0);
	atomic_store(&window, m);
	t0 = now_ns();
	if (write(go[1], "g", 1) != 1)
		goto out;
	pfd.fd = ready[0];
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, 0) == 1) {
			if (read(ready[0], &c, 1) == 1 && c == 'd') {
				t1 = now_ns();
				break;
			}
		}
		if (waitpid(hp, NULL, WNOHANG) == hp) {
			hp = 0;
			fprintf(stderr, "lmk_bench: %s: the hog died\n", mode_names[m]);
			goto out;
		}
		if (now_ns() - t0 > RAMP_TIMEOUT * 1000000000ULL) {
			fprintf(stderr, "lmk_bench: %s: not done in %d s (%d steps)\n",
				mode_names[m], RAMP_TIMEOUT, hog->steps);
			goto out;
		}
		if (freed_last(cur, sizeof(cur)) >= 0 && strcmp(cur, last)) {
			vec_push(&res.freed[m], atol(cur) / 1e3);
			freed_seen++;
			snprintf(last, sizeof(last), "%s", cur);
		}
		usleep(POLL_US);
	}
	psi_totals(&s1, &f1);
	atomic_store(&window, NONE);
	/* The last victim's freed_us may come a tick after the hog's end. */
	usleep(50000);
	if (freed_last(cur, sizeof(cur)) >= 0 && strcmp(cur, last)) {
		vec_push(&res.freed[m], atol(cur) / 1e3);
		freed_seen++;
	}
	if (m == MEMCG)
		write_str(KMSG, "cask-test: oom done\n");
	vec_push(&res.full[m], (f1 - f0) / 1e3);
	vec_push(&res.some[m], (s1 - s0) / 1e3);
	vec_push(&res.ramp_s[m], (t1 - t0) / 1e9);
	vec_push(&res.kills[m], read_long(CELL_LMK "kills") - kills0);
	vec_push(&res.ooms[m], cg_key("memory.events", "oom_kill") - oom0);
	trace_events(&ev);
	if (m != MEMCG) {
		crossings(ev.kill_ns, ev.nk, thr, m);
		for (i = 0; i < ev.nk; i++)
			vec_push(&res.react_drv[m], ev.react_us[i] / 1e3);
		if (freed_seen < ev.nk)
			res.freed_missing[m] += ev.nk - freed_seen;
	} else {
		crossings(ev.oom_ns, ev.no, thr, m);
	}
	ret = 0;
out:
	atomic_store(&window, NONE);
	reap_pid(&hp);
	for (i = 0; i < NVICTIMS; i++)
		reap_pid(&vp[i]);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	settle();
	return ret;
}

/* The container: cgroup, keeper, cell, level. */
static int setup(void)
{
	char buf[64];
	int ready[2];
	char c;

	if (mkdir(CGROUP, 0755) && errno != EEXIST) {
		fprintf(stderr, "lmk_bench: mkdir %s: %s\n", CGROUP, strerror(errno));
		return -1;
	}
	snprintf(buf, sizeof(buf), "%ld", opt.max_mib * MIB);
	if (write_str(CGROUP "/memory.max", buf)) {
		fprintf(stderr, "lmk_bench: memory.max: %s\n", strerror(errno));
		return -1;
	}
	if (pipe2(ready, O_CLOEXEC))
		return -1;
	keeper = fork();
	if (keeper < 0)
		return -1;
	if (!keeper) {
		enter_cgroup(-1000, "lmkb-keeper");
		if (unshare(CLONE_NEWIPC) || write(ready[1], "k", 1) != 1)
			_exit(97);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		fprintf(stderr, "lmk_bench: the keeper did not start\n");
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	write_str(CASK "/unregister", CELL "\n");
	snprintf(buf, sizeof(buf), CELL " %d\n", keeper);
	if (write_str(CASK "/register", buf)) {
		fprintf(stderr, "lmk_bench: register %s: %s\n", buf, strerror(errno));
		return -1;
	}
	snprintf(buf, sizeof(buf), "%ld\n", opt.level_mib * MIB / sysconf(_SC_PAGESIZE));
	if (write_str(CELL_LMK "minfree", buf) ||
	    write_str(CELL_LMK "adj", "100\n")) {
		fprintf(stderr, "lmk_bench: the cell's levels: %s\n", strerror(errno));
		return -1;
	}
	base_usage = read_long(CGROUP "/memory.current");
	return 0;
}

static void teardown(void)
{
	if (*reap_param)
		write_str(PARAMS "reap", reap_param);
	write_str(CASK "/unregister", CELL "\n");
	reap_pid(&keeper);
	settle();
	rmdir(CGROUP);
}

static void tracing_setup(void)
{
	if (access(TRACING "/trace", F_OK))
		mount("tracefs", TRACING, "tracefs", 0, NULL);
	have_trace = !write_str(TRACING "/trace_clock", "mono") &&
		     !write_str(TRACING "/events/lowmemorykiller/lmk_kill/enable", "1");
	have_oom_trace = have_trace &&
			 !write_str(TRACING "/events/oom/mark_victim/enable", "1");
}

static void tracing_teardown(void)
{
	if (!have_trace)
		return;
	write_str(TRACING "/events/lowmemorykiller/lmk_kill/enable", "0");
	write_str(TRACING "/events/oom/mark_victim/enable", "0");
	write_str(TRACING "/trace_clock", "local");
	write_str(TRACING "/trace", "");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void vec_sort(struct vec *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_double);
}

/* Nearest rank, of a sorted vector; -1 if empty. */
static double pct(const struct vec *s, double p)
{
	size_t r;

	if (!s->n)
		return -1;
	r = (size_t)(p / 100 * s->n + 0.999999);
	if (r < 1)
		r = 1;
	return s->v[(r > s->n ? s->n : r) - 1];
}

static double sum(const struct vec *s)
{
	double t = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		t += s->v[i];
	return t;
}

static void row(const char *name, struct vec *s)
{
	vec_sort(s);
	if (!s->n) {
		printf("  %-50s | %5d | %8s %8s %8s\n", name, 0, "-", "-", "-");
		return;
	}
	printf("  %-50s | %5zu | %8.2f %8.2f %8.2f\n", name, s->n, pct(s, 50),
	       pct(s, 99), s->v[s->n - 1]);
}

static double mean(const struct vec *s)
{
	return s->n ? sum(s) / s->n : 0;
}

static const char *met(bool ok)
{
	return ok ? "met" : "NOT MET";
}

/* Of the sorted vectors @a and @b: p@p of @a / p@p of @b. */
static double ratio(const struct vec *a, const struct vec *b, double p)
{
	return pct(a, p) / pct(b, p);
}

static void print_table(void)
{
	double fl, fm, r50, r99, p99;
	char name[80];
	int m;

	printf("\n== lmk_bench: %d rounds in one boot; each has an idle window and a ramp per"
	       " mode, in an order that rotates ==\n", opt.rounds);
	printf("modes: lmk = the cell's lowmemorykiller enabled%s; memcg = the cell's killer"
	       " disabled, only the memcg OOM killer\n", modes_on[NOREAP] ?
	       "; lmk-noreap = the same with the reap param N" : "");
	printf("container: memory.max %ld MiB; level minfree %ld MiB (%ld pages) adj %d;"
	       " %d victims x %ld MiB (adj 900,800,700,600); hog (adj -1000) from %ld MiB,"
	       " +1 MiB every %.0f ms to %ld MiB\n", opt.max_mib, opt.level_mib,
	       opt.level_mib * MIB / sysconf(_SC_PAGESIZE), LEVEL_ADJ, NVICTIMS,
	       opt.victim_mib, opt.start_mib, opt.step_ms, opt.hog_mib);
	printf("kernel: features/lmk_reap %s (%s); reap param %s\n", reap,
	       !strcmp(reap, "1") ? "patches/0002: victims reaped at SIGKILL" :
	       "no patches/0002: victims' memory freed at their exit",
	       *reap_param ? reap_param : "absent");

	printf("\nper ramp, medians                 |");
	for (m = LMK; m < NMODES; m++)
		if (modes_on[m])
			printf(" %10s", mode_names[m]);
	printf("\n  lowmemorykiller kills           |");
	for (m = LMK; m < NMODES; m++) {
		vec_sort(&res.kills[m]);
		if (modes_on[m])
			printf(" %10.0f", pct(&res.kills[m], 50));
	}
	printf("\n  memcg oom_kill                  |");
	for (m = LMK; m < NMODES; m++) {
		vec_sort(&res.ooms[m]);
		if (modes_on[m])
			printf(" %10.0f", pct(&res.ooms[m], 50));
	}
	printf("\n  the hog's ramp, s               |");
	for (m = LMK; m < NMODES; m++) {
		vec_sort(&res.ramp_s[m]);
		if (modes_on[m])
			printf(" %10.2f", pct(&res.ramp_s[m], 50));
	}

	printf("\n\ntimes, ms                                            |     n |      p50"
	       "      p99      max\n");
	for (m = LMK; m < MEMCG; m++) {
		if (!modes_on[m])
			continue;
		snprintf(name, sizeof(name), "%s: level crossed -> SIGKILL (ours)", mode_names[m]);
		row(name, &res.react_own[m]);
		snprintf(name, sizeof(name), "%s: reaction_us (driver: seen -> SIGKILL)",
			 mode_names[m]);
		row(name, &res.react_drv[m]);
	}
	for (m = LMK; m < MEMCG; m++) {
		if (!modes_on[m])
			continue;
		snprintf(name, sizeof(name), "%s: freed_us (SIGKILL -> freed, %s)", mode_names[m],
			 m == LMK && !strcmp(reap, "1") ? "reaped" : "by exit");
		row(name, &res.freed[m]);
	}
	row("memcg: level crossed -> 1st OOM kill (ours)", &res.react_own[MEMCG]);
	if (!modes_on[NOREAP])
		printf("  freed_us %s reaping: not measured in this boot (no reap param, or no"
		       " patches/0002): see a kernel %s it\n",
		       !strcmp(reap, "1") ? "without" : "with",
		       !strcmp(reap, "1") ? "without" : "with");
	for (m = LMK; m < MEMCG; m++)
		if (res.unmatched[m] || res.freed_missing[m])
			printf("  (%s: %d kills followed the previous one with the cell still past"
			       " the level, no crossing of their own: in the driver's row only;"
			       " %d kills had no freed_us reading)\n", mode_names[m],
			       res.unmatched[m], res.freed_missing[m]);

	printf("\ncontainer stall in the ramp (memory.pressure total delta), ms per ramp |"
	       "     n |      p50      p99     mean\n");
	for (m = LMK; m < NMODES; m++) {
		if (!modes_on[m])
			continue;
		snprintf(name, sizeof(name), "full, %s", mode_names[m]);
		vec_sort(&res.full[m]);
		printf("  %-50s | %5zu | %8.2f %8.2f %8.2f\n", name, res.full[m].n,
		       pct(&res.full[m], 50), pct(&res.full[m], 99), mean(&res.full[m]));
	}
	for (m = LMK; m < NMODES; m++) {
		if (!modes_on[m])
			continue;
		snprintf(name, sizeof(name), "some, %s", mode_names[m]);
		vec_sort(&res.some[m]);
		printf("  %-50s | %5zu | %8.2f %8.2f %8.2f\n", name, res.some[m].n,
		       pct(&res.some[m], 50), pct(&res.some[m], 99), mean(&res.some[m]));
	}
	fl = sum(&res.full[LMK]);
	fm = sum(&res.full[MEMCG]);

	printf("\nhost task: 1 ms sleeps in the root cgroup, wake-up lateness, us  |     n |"
	       "      p50      p99 | p50, p99 / idle\n");
	for (m = 0; m < NMODES; m++)
		vec_sort(&res.lat[m]);
	for (m = 0; m < NMODES; m++) {
		if (!modes_on[m])
			continue;
		printf("  %-50s | %5zu | %8.1f %8.1f | %5.2f %5.2f\n", mode_names[m],
		       res.lat[m].n, pct(&res.lat[m], 50), pct(&res.lat[m], 99),
		       ratio(&res.lat[m], &res.lat[IDLE], 50),
		       ratio(&res.lat[m], &res.lat[IDLE], 99));
	}
	r50 = ratio(&res.lat[LMK], &res.lat[MEMCG], 50);
	r99 = ratio(&res.lat[LMK], &res.lat[MEMCG], 99);
	printf("  lmk / memcg: p50 %.2f, p99 %.2f\n", r50, r99);
	vec_sort(&res.idle_ab[0]);
	vec_sort(&res.idle_ab[1]);
	printf("  noise: idle of even rounds / idle of odd rounds: p50 %.2f, p99 %.2f\n",
	       ratio(&res.idle_ab[0], &res.idle_ab[1], 50),
	       ratio(&res.idle_ab[0], &res.idle_ab[1], 99));

	printf("\n");
	p99 = pct(&res.react_own[LMK], 99);
	printf("bench target reaction: lmk, level crossed -> SIGKILL p99 %.1f ms (<= %.0f;"
	       " the driver's reaction_us p99 %.1f ms): %s\n", p99, TARGET_REACT_MS,
	       pct(&res.react_drv[LMK], 99),
	       met(res.react_own[LMK].n && p99 <= TARGET_REACT_MS));
	if (fl > 0)
		printf("bench target stall: memcg/lmk full stall %.1fx (%.1f / %.1f ms over all"
		       " ramps; >= %.0fx): %s\n", fm / fl, fm, fl, TARGET_STALL,
		       met(fm / fl >= TARGET_STALL));
	else
		printf("bench target stall: memcg/lmk full stall inf (%.1f / 0 ms over all"
		       " ramps; >= %.0fx): %s\n", fm, TARGET_STALL, met(fm > 0));
	printf("bench target host latency: lmk/memcg p50 %.3f p99 %.3f (<= %.2f): %s\n",
	       r50, r99, TARGET_HOST, met(r50 <= TARGET_HOST && r99 <= TARGET_HOST));
}

static void ratio_line(const char *what, double x, double target, bool at_most)
{
	printf("bench ratio lmk %s = %.3f (target %s %.2f)\n", what, x,
	       at_most ? "<=" : ">=", target);
}

/*
 * The ratios of the table that have a target again, one line each, as
 * the other benches; after print_table(), which sorts the samples.
 */
static void print_ratios(void)
{
	double fl = sum(&res.full[LMK]), fm = sum(&res.full[MEMCG]);

	printf("\n");
	ratio_line("host lateness p50, lmk/memcg ramps",
		   ratio(&res.lat[LMK], &res.lat[MEMCG], 50), TARGET_HOST, true);
	ratio_line("host lateness p99, lmk/memcg ramps",
		   ratio(&res.lat[LMK], &res.lat[MEMCG], 99), TARGET_HOST, true);
	ratio_line("host lateness p50, idle even/odd rounds (noise)",
		   ratio(&res.idle_ab[0], &res.idle_ab[1], 50), TARGET_HOST, true);
	ratio_line("host lateness p99, idle even/odd rounds (noise)",
		   ratio(&res.idle_ab[0], &res.idle_ab[1], 99), TARGET_HOST, true);
	/* No stall with the killer is the best case: inf, met if memcg had one. */
	ratio_line("container full stall, memcg/lmk ramps",
		   fl > 0 ? fm / fl : fm > 0 ? INFINITY : NAN, TARGET_STALL, false);
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: lmk_bench [-r ROUNDS] [-m MiB] [-l MiB] [-v MiB] [-b MiB] [-g MiB] [-s MS]\n"
		"\n"
		"A memory ramp in a container cgroup, with the cell's lowmemorykiller and\n"
		"with only the memcg OOM killer, in the same boot: reaction, freed time,\n"
		"the container's memory stall and a host task's wake-up lateness.\n"
		"\n"
		"  -r ROUNDS  rounds: an idle window and a ramp per mode (default 20, at most %d)\n"
		"  -m MiB     the container's memory.max (default 96)\n"
		"  -l MiB     the level's minfree (default 16)\n"
		"  -v MiB     each of the %d victims (default 8)\n"
		"  -b MiB     the hog's size before the ramp (default 40)\n"
		"  -g MiB     the hog's final size (default 84)\n"
		"  -s MS      the hog's time per MiB (default 20)\n"
		"\n"
		"Exits 4 (skip) if lowmemorykiller is not loaded.\n", MAX_ROUNDS, NVICTIMS);
}

static int parse_options(int argc, char **argv)
{
	int ch;

	while ((ch = getopt(argc, argv, "r:m:l:v:b:g:s:h")) != -1) {
		switch (ch) {
		case 'r':
			opt.rounds = atoi(optarg);
			break;
		case 'm':
			opt.max_mib = atol(optarg);
			break;
		case 'l':
			opt.level_mib = atol(optarg);
			break;
		case 'v':
			opt.victim_mib = atol(optarg);
			break;
		case 'b':
			opt.start_mib = atol(optarg);
			break;
		case 'g':
			opt.hog_mib = atol(optarg);
			break;
		case 's':
			opt.step_ms = atof(optarg);
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "lmk_bench: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (opt.rounds < 1 || opt.rounds > MAX_ROUNDS || opt.max_mib < 8 ||
	    opt.level_mib < 1 || opt.level_mib >= opt.max_mib || opt.victim_mib < 1 ||
	    opt.start_mib < 0 || opt.hog_mib <= opt.start_mib ||
	    opt.hog_mib - opt.start_mib > MAX_STEPS || opt.hog_mib >= opt.max_mib ||
	    !(opt.step_ms >= 1 && opt.step_ms <= 1000)) {
		fprintf(stderr, "lmk_bench: a value out of range\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t t_start = now_ns();
	enum mode order[NMODES];
	int ret, r, i, n = 0;
	pthread_t tick;

	ret = parse_options(argc, argv);
	if (ret > 0) {
		print_usage(stdout);
		return 0;
	}
	if (ret < 0) {
		print_usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access(PARAMS "minfree", F_OK)) {
		printf("bench skip: lowmemorykiller is not loaded\n");
		return EXIT_SKIP;
	}
	alarm(ALARM_S);
	read_line(CASK "/features/lmk_reap", reap, sizeof(reap));
	/* Without the reaper a run has nothing to turn off. */
	if (!read_line(PARAMS "reap", reap_param, sizeof(reap_param)) && !strcmp(reap, "1"))
		modes_on[NOREAP] = true;
	for (i = 0; i < NMODES; i++)
		if (modes_on[i])
			order[n++] = i;
	hog = mmap(NULL, sizeof(*hog), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		   -1, 0);
	if (hog == MAP_FAILED) {
		perror("lmk_bench: mmap");
		return 1;
	}
	memset(hog, 0, sizeof(*hog));
	/* Ours stays in the root cgroup: the host. */
	set_adj(-1000);
	tracing_setup();
	printf("bench config: rounds=%d max=%ldMiB level=%ldMiB victims=%dx%ldMiB hog=%ld..%ldMiB"
	       " step=%.0fms lmk_reap=%s reap_param=%s trace=%s oom_trace=%s\n", opt.rounds,
	       opt.max_mib, opt.level_mib, NVICTIMS, opt.victim_mib, opt.start_mib, opt.hog_mib,
	       opt.step_ms,
	       reap, *reap_param ? reap_param : "-", have_trace ? "yes" : "no",
	       have_oom_trace ? "yes" : "no");
	if (setup()) {
		teardown();
		tracing_teardown();
		return 1;
	}
	if (pthread_create(&tick, NULL, ticker, NULL)) {
		fprintf(stderr, "lmk_bench: pthread_create failed\n");
		teardown();
		tracing_teardown();
		return 1;
	}
	ret = 0;
	for (r = 0; r < opt.rounds && !ret; r++) {
		atomic_store(&round_no, r);
		/* Each mode in each place of the order in turn. */
		for (i = 0; i < n && !ret; i++) {
			enum mode m = order[(r + i) % n];

			if (m == IDLE)
				idle_window();
			else
				ret = run_ramp(m);
		}
		printf("bench round %d/%d done at %.1f s\n", r + 1, opt.rounds,
		       (now_ns() - t_start) / 1e9);
	}
	atomic_store(&ticker_stop, true);
	pthread_join(tick, NULL);
	teardown();
	tracing_teardown();
	if (!ret) {
		print_table();
		print_ratios();
	}
	printf("\nbench total %.1f s\n", (now_ns() - t_start) / 1e9);
	return ret ? 1 : 0;
}
