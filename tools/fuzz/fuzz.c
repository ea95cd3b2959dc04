// SPDX-License-Identifier: GPL-2.0
/*
 * cask-fuzz: the framework around the drivers' generators (fuzz.h): the
 * seeded random streams, KCOV edge counting and the corpus it steers
 * with, the sequence marker on QEMU's debug console, the run loop and its
 * report.
 *
 * Usage: cask-fuzz [-s SEED[:MUT:AT]] [-n COUNT] [-t SECONDS] [-o OPS]
 *                  [-v] [-T] [-l] DRIVER...|all
 *   -s  first sequence's seed (default: from the clock, printed); a name
 *       SEED:MUT:AT runs that derived sequence
 *   -n  sequences per driver (default 1000; 0 with -t: until the time)
 *   -t  at most this many seconds per driver, counted from the end of
 *       its setup (0: no limit)
 *   -o  at most this many operations per sequence (to shorten a
 *       reproducer; 0: no limit)
 *   -v  print every operation (with -n 1: the reproducer's trace)
 *   -T  KTAP output, one case per driver (the guest's harness)
 *   -l  list the drivers
 * Exit status: 0 when every driver ran its sequences, 1 when a sequence
 * failed, a driver could not start or ran no sequence.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/kcov.h>
#ifdef FZ_HAVE_DEBUGCON		/* x86: set by the Makefile */
#include <sys/io.h>
#endif

#include "fuzz.h"

static struct fz_driver *drivers;

void fz_register(struct fz_driver *drv)
{
	struct fz_driver **p = &drivers;

	/* Kept in name order, so "all" and -l are stable. */
	while (*p && strcmp((*p)->name, drv->name) < 0)
		p = &(*p)->next;
	drv->next = *p;
	*p = drv;
}

/* splitmix64: a full-period 64-bit stream from any seed. */
static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t fz_rand(struct fz *fz)
{
	return mix(&fz->state);
}

uint64_t fz_below(struct fz *fz, uint64_t n)
{
	return n ? fz_rand(fz) % n : 0;
}

bool fz_chance(struct fz *fz, unsigned int num, unsigned int den)
{
	return fz_below(fz, den) < num;
}

uint64_t fz_size(struct fz *fz, uint64_t max)
{
	unsigned int bits = 0;
	uint64_t v;

	while (bits < 63 && (1ULL << (bits + 1)) <= max)
		bits++;
	switch (fz_below(fz, 8)) {
	case 0:
		return fz_below(fz, 2);
	case 1:
		return max;
	case 2:
	case 3:
		v = 1ULL << fz_below(fz, bits + 1);
		v += (int64_t)fz_below(fz, 3) - 1;
		return v > max ? max : v;
	default:
		return fz_below(fz, max + 1 ? max + 1 : max);
	}
}

unsigned int fz_pick(struct fz *fz, const unsigned int *weights, unsigned int n)
{
	uint64_t total = 0, r;
	unsigned int i;

	for (i = 0; i < n; i++)
		total += weights[i];
	r = fz_below(fz, total);
	for (i = 0; i < n; i++) {
		if (r < weights[i])
			return i;
		r -= weights[i];
	}
	return n - 1;
}

bool fz_next(struct fz *fz, unsigned int len)
{
	if (fz->op >= len || (fz->max_ops && fz->op >= fz->max_ops))
		return false;
	/* A derived sequence: the kept one's first operations, then new. */
	if (fz->id.mut && fz->op == fz->id.at)
		fz->state = fz->id.mut ^ 0x5851f42d4c957f2dULL;
	fz->op++;
	return true;
}

void fz_trace(struct fz *fz, const char *fmt, ...)
{
	va_list ap;

	if (!fz->verbose)
		return;
	printf("  op %u: ", fz->op);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int fz_fail(struct fz *fz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fz->fail, sizeof(fz->fail), fmt, ap);
	va_end(ap);
	return -1;
}

const char *fz_name(const struct fz_id *id)
{
	static char buf[80];

	if (id->mut)
		snprintf(buf, sizeof(buf), "%llu:%llu:%u",
			 (unsigned long long)id->seed,
			 (unsigned long long)id->mut, id->at);
	else
		snprintf(buf, sizeof(buf), "%llu",
			 (unsigned long long)id->seed);
	return buf;
}

/* ---- KCOV ---------------------------------------------------------- */

#define COVER_WORDS	(256 << 10)
#define EDGE_BITS	BIT(22)

/* Shared with every process the drivers fork: the edges seen so far. */
static uint64_t *edge_map;
static uint64_t *edge_count;
/* This thread's KCOV buffer, if KCOV is there. */
static __thread unsigned long *cover;

static void cov_map_init(void)
{
	size_t len = EDGE_BITS / 8 + 64;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	edge_count = p;
	edge_map = (uint64_t *)((char *)p + 64);
}

void fz_cov_thread_start(void)
{
	int fd;
	void *p;

	cover = NULL;
	if (!edge_map)
		return;
	fd = open("/sys/kernel/debug/kcov", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	if (ioctl(fd, KCOV_INIT_TRACE, COVER_WORDS))
		goto close_fd;
	p = mmap(NULL, COVER_WORDS * sizeof(unsigned long),
		 PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto close_fd;
	if (ioctl(fd, KCOV_ENABLE, KCOV_TRACE_PC)) {
		munmap(p, COVER_WORDS * sizeof(unsigned long));
		goto close_fd;
	}
	cover = p;
	__atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
	/* The mapping keeps KCOV's state; the descriptor is not needed. */
close_fd:
	close(fd);
}

void fz_cov_collect(void)
{
	unsigned long n, i, prev = 0;

	if (!cover)
		return;
	n = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
	if (n >= COVER_WORDS)
		n = COVER_WORDS - 1;
	for (i = 1; i <= n; i++) {
		/* An edge is a pair of consecutive PCs (AFL's scheme). */
		uint64_t h = (cover[i] ^ (prev >> 1)) * 0x9e3779b97f4a7c15ULL;
		uint64_t bit = (h >> 20) % EDGE_BITS;
		uint64_t mask = 1ULL << (bit & 63);

		prev = cover[i];
		if (!(__atomic_fetch_or(&edge_map[bit / 64], mask,
					__ATOMIC_RELAXED) & mask))
			__atomic_fetch_add(edge_count, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
}

/* ---- the sequence marker --------------------------------------------- */

static bool debugcon;

static void mark_init(void)
{
#ifdef FZ_HAVE_DEBUGCON
	debugcon = ioperm(0xe9, 1, 1) == 0;
#endif
}

static void mark(const char *driver, const struct fz_id *id)
{
#ifdef FZ_HAVE_DEBUGCON
	char line[128];
	int n, i;

	if (!debugcon)
		return;
	n = snprintf(line, sizeof(line), "%s %s\n", driver, fz_name(id));
	for (i = 0; i < n; i++)
		outb(line[i], 0xe9);
#else
	(void)driver;
	(void)id;
#endif
}

/* ---- the run ------------------------------------------------------- */

#define CORPUS_MAX 8192

struct run {
	uint64_t seed;
	uint64_t count;
	unsigned int secs;
	unsigned int max_ops;
	bool verbose;
	bool tap;
	struct fz_id fixed;	/* -s SEED:MUT:AT */
	bool derived;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run_driver(struct fz_driver *drv, const struct run *r, unsigned int num)
{
	static struct fz_id corpus[CORPUS_MAX];
	unsigned int ncorpus = 0;
	uint64_t steer = r->seed ^ 0xa0761d6478bd642fULL, i;
	double t0, last;
	uint64_t edges0 = edge_count ? *edge_count : 0;
	struct fz fz = { .max_ops = r->max_ops, .verbose = r->verbose };
	const char *how = cover ? "kcov" : "no kcov";
	int rc = 0;

	printf("# cask-fuzz: %s from seed %llu, %s\n",
	       drv->name, (unsigned long long)r->seed, how);
	fflush(stdout);
	if (drv->setup && drv->setup(&fz)) {
		printf("%snot ok %u %s: setup: %s\n", r->tap ? "" : "cask-fuzz: ",
		       num, drv->name, fz.fail);
		return 1;
	}
	/* The budget is the sequences': a slow setup does not eat it. */
	t0 = now();
	last = t0;
	for (i = 0; !r->count || i < r->count; i++) {
		if (r->secs && now() - t0 >= r->secs)
			break;
		memset(&fz.id, 0, sizeof(fz.id));
		if (r->derived) {
			fz.id = r->fixed;
		} else if (ncorpus && mix(&steer) % 2) {
			/* Steer: a kept sequence, new from one of its ops. */
			fz.id.seed = corpus[mix(&steer) % ncorpus].seed;
			fz.id.mut = mix(&steer) | 1;
			fz.id.at = mix(&steer) % 16;
		} else {
			fz.id.seed = r->seed + i;
		}
		fz.state = fz.id.seed;
		fz.op = 0;
		fz.fail[0] = '\0';
		mark(drv->name, &fz.id);
		if (r->verbose)
			printf("# sequence %s\n", fz_name(&fz.id));
		uint64_t before = edge_count ? *edge_count : 0;

		if (drv->sequence(&fz)) {
			printf("# %s: sequence %s failed: %s\n", drv->name,
			       fz_name(&fz.id), fz.fail);
			printf("# reproduce: cask-fuzz -s %s -n 1 -v %s\n",
			       fz_name(&fz.id), drv->name);
			rc = 1;
			i++;
			break;
		}
		fz_cov_collect();
		if (edge_count && *edge_count > before && ncorpus < CORPUS_MAX)
			corpus[ncorpus++] = fz.id;
		if (now() - last >= 10) {
			last = now();
			printf("# %s: %llu sequences, %.0f s, %llu edges, corpus %u\n",
			       drv->name, (unsigned long long)(i + 1), last - t0,
			       (unsigned long long)(edge_count ? *edge_count - edges0 : 0),
			       ncorpus);
			fflush(stdout);
		}
	}
	if (drv->teardown)
		drv->teardown(&fz);
	printf("# %s: %llu sequences in %.0f s, %llu new edges (%s), corpus %u\n",
	       drv->name, (unsigned long long)i, now() - t0,
	       (unsigned long long)(edge_count ? *edge_count - edges0 : 0),
	       how, ncorpus);
	if (!i) {
		printf("%snot ok %u %s: no sequence ran\n",
		       r->tap ? "" : "cask-fuzz: ", num, drv->name);
		fflush(stdout);
		return 1;
	}
	printf("%s%s %u %s\n", r->tap ? "" : "cask-fuzz: ",
	       rc ? "not ok" : "ok", num, drv->name);
	fflush(stdout);
	return rc;
}

static int parse_seed(struct run *r, const char *arg)
{
	char *end;

	r->seed = strtoull(arg, &end, 0);
	if (*end == ':') {
		r->fixed.seed = r->seed;
		r->fixed.mut = strtoull(end + 1, &end, 0);
		if (*end != ':')
			return -1;
		r->fixed.at = strtoul(end + 1, &end, 0);
		r->derived = true;
	}
	return *end ? -1 : 0;
}

static void die_usage(void)
{
	struct fz_driver *d;

	fprintf(stderr, "usage: cask-fuzz [-s SEED[:MUT:AT]] [-n COUNT] [-t SECONDS] [-o OPS] "
		"[-v] [-T] [-l] DRIVER...|all\n");
	for (d = drivers; d; d = d->next)
		fprintf(stderr, "  %-8s %s\n", d->name, d->help);
	exit(2);
}

int main(int argc, char **argv)
{
	struct run r = { .count = 1000 };
	struct fz_driver *sel[32], *d;
	unsigned int nsel = 0, i;
	bool seeded = false;
	int opt, rc = 0;

	while ((opt = getopt(argc, argv, "s:n:t:o:vTl")) != -1) {
		switch (opt) {
		case 's':
			if (parse_seed(&r, optarg))
				die_usage();
			seeded = true;
			break;
		case 'n':
			r.count = strtoull(optarg, NULL, 0);
			break;
		case 't':
			r.secs = strtoul(optarg, NULL, 0);
			break;
		case 'o':
			r.max_ops = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			r.verbose = true;
			break;
		case 'T':
			r.tap = true;
			break;
		case 'l':
			for (d = drivers; d; d = d->next)
				printf("%-8s %s\n", d->name, d->help);
			return 0;
		default:
			die_usage();
		}
	}
	if (optind == argc || (!r.count && !r.secs))
		die_usage();
	for (i = optind; i < (unsigned int)argc; i++) {
		bool all = !strcmp(argv[i], "all"), found = false;

		for (d = drivers; d; d = d->next) {
			if (!all && strcmp(argv[i], d->name))
				continue;
			if (nsel < ARRAY_SIZE(sel))
				sel[nsel++] = d;
			found = true;
		}
		if (!found) {
			fprintf(stderr, "cask-fuzz: no driver '%s'\n", argv[i]);
			die_usage();
		}
	}
	if (!seeded)
		r.seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
	/* Derived sequences reproduce alone. */
	if (r.derived)
		r.count = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cov_map_init();
	fz_cov_thread_start();
	mark_init();
	if (r.tap)
		printf("TAP version 13\n1..%u\n", nsel);
	for (i = 0; i < nsel; i++)
		rc |= run_driver(sel[i], &r, i + 1);
	return rc;
}
