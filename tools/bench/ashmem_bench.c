// SPDX-License-Identifier: GPL-2.0
/*
 * ashmem_bench: the life of a region of cask_ashmem (/dev/ashmem) against
 * the same with memfd_create(), and ashmem's pin/unpin, in the same boot.
 *
 * Method
 * ------
 * A cycle makes a region, maps it, writes one byte to every page, unmaps
 * it and closes it, as Android's users of shared memory do:
 *
 *  - ashmem: open("/dev/ashmem"), ASHMEM_SET_NAME, ASHMEM_SET_SIZE (what
 *    libcutils' ashmem_create_region() does), mmap(MAP_SHARED), touch,
 *    munmap(), close();
 *  - memfd: memfd_create(), ftruncate(), mmap(MAP_SHARED), touch,
 *    munmap(), close().
 *
 * Regions of 4 KiB, 64 KiB and 1 MiB. Both sides write-fault every page
 * of every region, and both free the region's pages at close(): the cost
 * of cask's charging (our fault handler brings the page in with
 * shmem_get_folio() inside the cell's memcg, then shmem's fault maps it)
 * is counted, and so are ashmem's extra open, ioctls and backing file.
 *
 * Interleaving. One process calls both sides in alternating slices (-s,
 * 20 ms) until each had -t seconds (0.3) per size, after one slice each
 * of warm-up; each cycle is charged to the side it was made on, cycles/s
 * of a side = its cycles / the time spent in them. The side of the first
 * slice alternates between rounds. -r rounds (7) repeat every measurement;
 * every number printed is the median over the rounds, and ratios are
 * ashmem/memfd of those medians. The ratio printed for cycles is of the
 * time per cycle (memfd's rate / ashmem's): the target is <= 1.25 at
 * 4 KiB, where the ABI's own fixed costs (an open, an ioctl, a device
 * file) are about 1.13 of memfd's cycle, and <= 1.10 at 64 KiB and above,
 * in every cell. The spread of the per-round ratios is printed next to it.
 * Every ratio is printed once more as one line, "bench ratio ashmem WHAT =
 * X (target <= Y)", as the other benches do.
 *
 * Pin/unpin: ASHMEM_UNPIN then ASHMEM_PIN of the whole of a 64-page region
 * that is mapped and touched, pairs/s for -t seconds per round. memfd has
 * no equivalent, so this is ashmem's absolute rate, with no ratio. A PIN
 * that returns ASHMEM_WAS_PURGED (memory pressure purged the region while
 * unpinned) is counted and printed.
 *
 * Cells. Everything runs twice: in the host cell (the bench's own, the
 * initial IPC namespace), then in an auto cell: a child process moves to
 * a cgroup of its own (/sys/fs/cgroup/cask-ashmem-bench, unless -C: a
 * container has one) and unshares its IPC namespace; its first open of
 * /dev/ashmem makes the cell, whose memcg is that cgroup's. Both sides
 * charge the same memcg in each run: memfd the process's, ashmem the
 * cell's. -A skips the auto cell.
 *
 * Diagnostics, printed after the results: a separate interleaved pass
 * (same slices, same rounds) timestamps each phase of every cycle (the
 * clock reads add to both sides alike); and minor faults per cycle of
 * the untimed pass (getrusage(), per slice).
 *
 * Nothing is pinned: the scheduler places the process (2 vCPUs in the
 * test guest). The targets are printed next to the ratios; nothing is
 * asserted.
 *
 * Exit status: 0, 4 if /dev/ashmem cannot be opened (skip), 1 on errors,
 * 2 on usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/ashmem.h>

#define ASHMEM_DEV	"/dev/ashmem"
#define SELF_CELL	"/sys/kernel/cask/self"
#define CELLS_DIR	"/sys/kernel/cask/cells"
#define BENCH_CGROUP	"/sys/fs/cgroup/cask-ashmem-bench"
#define REGION_NAME	"ashmem_bench"
#define PIN_PAGES	64
#define MAX_ROUNDS	31
#define CHILD_ALARM	600		/* seconds: a stuck auto-cell run dies */
#define EXIT_SKIP	4
#define MSG_LEN		200
#define NAME_LEN	128
/* ashmem/memfd time per cycle, at most: below 64 KiB, and from 64 KiB. */
#define TARGET_SMALL	1.25
#define TARGET		1.10

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum side { ASHMEM, MEMFD, NSIDES };
static const char *const side_names[] = { "ashmem", "memfd" };

static const size_t sizes[] = { 4096, 65536, 1048576 };
#define NSIZES		ARRAY_SIZE(sizes)

enum phase { PH_CREATE, PH_MMAP, PH_TOUCH, PH_MUNMAP, PH_CLOSE, NPHASES };
static const char *const phase_names[] = {
	"create+size", "mmap", "touch", "munmap", "close"
};

enum cell_kind { HOST, AUTO, NCELLS };
static const char *const cell_kinds[] = { "host", "auto" };

/* What one run (one cell) found; in shared memory for the auto cell's. */
struct cell_res {
	bool ok;
	char cell[NAME_LEN];	/* /sys/kernel/cask/self */
	char cgroup[NAME_LEN];	/* the cell's cgroup, as sysfs shows it */
	double rate[NSIZES][NSIDES][MAX_ROUNDS];	/* cycles/s */
	double flt[NSIZES][NSIDES][MAX_ROUNDS];		/* minor faults/cycle */
	double phase_us[NSIZES][NSIDES][NPHASES][MAX_ROUNDS];
	double pin_rate[MAX_ROUNDS];			/* pairs/s */
	long pin_purged;
	char msg[MSG_LEN];	/* why it failed */
};

static struct {
	int rounds;
	double seconds;
	double slice;
	bool auto_cell;
	bool cgroup;
} opt = { .rounds = 7, .seconds = 0.3, .slice = 0.02, .auto_cell = true, .cgroup = true };

static size_t page_size;
static char region_name[ASHMEM_NAME_LEN] = REGION_NAME;
static struct cell_res *cur;	/* the run in progress, for fail() */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cur->msg, MSG_LEN, fmt, ap);
	va_end(ap);
}

/* Read the first line of @path into @buf; "?" if it cannot be read. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	snprintf(buf, len, "?");
	if (!f)
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* A region of @size: open and size it. Returns its fd, or -1 (fail()). */
static int region_create(enum side s, size_t size)
{
	int fd;

	if (s == MEMFD) {
		fd = memfd_create(REGION_NAME, MFD_CLOEXEC);
		if (fd < 0) {
			fail("memfd_create: %s", strerror(errno));
			return -1;
		}
		if (ftruncate(fd, size)) {
			fail("ftruncate %zu: %s", size, strerror(errno));
			close(fd);
			return -1;
		}
		return fd;
	}
	fd = open(ASHMEM_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fail("open %s: %s", ASHMEM_DEV, strerror(errno));
		return -1;
	}
	if (ioctl(fd, ASHMEM_SET_NAME, region_name) < 0 ||
	    ioctl(fd, ASHMEM_SET_SIZE, size) < 0) {
		fail("ASHMEM_SET_NAME/SET_SIZE %zu: %s", size, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void touch(char *p, size_t size)
{
	size_t off;

	for (off = 0; off < size; off += page_size)
		p[off] = 1;
}

/*
 * One cycle of side @s: create, size, map, touch, unmap, close a region
 * of @size. If @ph, add the time of each phase to it (ns). Returns 0 or
 * -1 (fail()).
 */
static int cycle(enum side s, size_t size, uint64_t *ph)
{
	uint64_t t[NPHASES + 1];
	char *p;
	int fd, i;

	if (ph)
		t[0] = now_ns();
	fd = region_create(s, size);
	if (fd < 0)
		return -1;
	if (ph)
		t[1] = now_ns();
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		fail("%s: mmap %zu: %s", side_names[s], size, strerror(errno));
		close(fd);
		return -1;
	}
	if (ph)
		t[2] = now_ns();
	touch(p, size);
	if (ph)
		t[3] = now_ns();
	if (munmap(p, size)) {
		fail("%s: munmap: %s", side_names[s], strerror(errno));
		close(fd);
		return -1;
	}
	if (ph)
		t[4] = now_ns();
	if (close(fd)) {
		fail("%s: close: %s", side_names[s], strerror(errno));
		return -1;
	}
	if (ph) {
		t[5] = now_ns();
		for (i = 0; i < NPHASES; i++)
			ph[i] += t[i + 1] - t[i];
	}
	return 0;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* What one side accumulates over the slices of one measurement. */
struct acc {
	uint64_t ns;		/* time in its slices */
	uint64_t cycles;
	long flt;		/* minor faults in its slices */
	uint64_t ph[NPHASES];	/* ns per phase, if timed */
};

/* One slice of side @s: cycles until @len ns have passed. */
static int slice(enum side s, size_t size, uint64_t len, bool timed, struct acc *a)
{
	uint64_t t0 = now_ns(), t;
	long f0 = minflt();

	do {
		if (cycle(s, size, timed ? a->ph : NULL))
			return -1;
		a->cycles++;
		t = now_ns();
	} while (t - t0 < len);
	a->ns += t - t0;
	a->flt += minflt() - f0;
	return 0;
}

/*
 * One measurement: cycles of @size, the sides alternating in slices from
 * @first, until each had opt.seconds. @a gets what each side did.
 */
static int measure_cycles(size_t size, enum side first, bool timed, struct acc a[NSIDES])
{
	uint64_t budget = opt.seconds * 1e9, len = opt.slice * 1e9;
	struct acc warm = { 0 };
	int i;

	memset(a, 0, NSIDES * sizeof(*a));
	for (i = 0; i < NSIDES; i++)
		if (slice((first + i) % NSIDES, size, len, timed, &warm))
			return -1;
	while (a[ASHMEM].ns < budget || a[MEMFD].ns < budget) {
		for (i = 0; i < NSIDES; i++) {
			enum side s = (first + i) % NSIDES;
			uint64_t left = budget - a[s].ns;

			if (a[s].ns >= budget)
				continue;
			if (slice(s, size, left < len ? left : len, timed, &a[s]))
				return -1;
		}
	}
	return 0;
}

/* One UNPIN + PIN of the whole region: 1 if PIN found it purged, or -1. */
static int pin_pair(int fd)
{
	struct ashmem_pin pin = { .offset = 0, .len = 0 };
	int ret;

	if (ioctl(fd, ASHMEM_UNPIN, &pin) < 0) {
		fail("ASHMEM_UNPIN: %s", strerror(errno));
		return -1;
	}
	ret = ioctl(fd, ASHMEM_PIN, &pin);
	if (ret < 0) {
		fail("ASHMEM_PIN: %s", strerror(errno));
		return -1;
	}
	return ret == ASHMEM_WAS_PURGED;
}

/* UNPIN + PIN of a whole 64-page region, mapped and touched: pairs/s. */
static int measure_pin(double *rate, long *purged)
{
	size_t size = PIN_PAGES * page_size;
	uint64_t budget = opt.seconds * 1e9, t0, t, n = 0;
	int fd, ret = 0, i;
	char *p;

	fd = region_create(ASHMEM, size);
	if (fd < 0)
		return -1;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		fail("pin: mmap: %s", strerror(errno));
		close(fd);
		return -1;
	}
	touch(p, size);
	for (i = 0; i < 100 && ret >= 0; i++)
		ret = pin_pair(fd);
	t0 = now_ns();
	do {
		ret = pin_pair(fd);
		if (ret < 0)
			break;
		*purged += ret;
		n++;
		t = now_ns();
	} while (t - t0 < budget);
	if (ret >= 0)
		*rate = n / ((t - t0) / 1e9);
	munmap(p, size);
	close(fd);
	return ret < 0 ? -1 : 0;
}

static int run_rounds(struct cell_res *res, enum cell_kind k)
{
	uint64_t t_start = now_ns();
	struct acc a[NSIDES];
	size_t z;
	int r, s, ph;

	for (r = 0; r < opt.rounds; r++) {
		enum side first = r % 2 ? MEMFD : ASHMEM;

		for (z = 0; z < NSIZES; z++) {
			if (measure_cycles(sizes[z], first, false, a))
				return -1;
			for (s = 0; s < NSIDES; s++) {
				res->rate[z][s][r] = a[s].cycles / (a[s].ns / 1e9);
				res->flt[z][s][r] = (double)a[s].flt / a[s].cycles;
			}
		}
		for (z = 0; z < NSIZES; z++) {
			if (measure_cycles(sizes[z], first, true, a))
				return -1;
			for (s = 0; s < NSIDES; s++)
				for (ph = 0; ph < NPHASES; ph++)
					res->phase_us[z][s][ph][r] =
						a[s].ph[ph] / 1e3 / a[s].cycles;
		}
		if (measure_pin(&res->pin_rate[r], &res->pin_purged))
			return -1;
		printf("bench round %d/%d (%s cell) done at %.1f s\n", r + 1, opt.rounds,
		       cell_kinds[k], (now_ns() - t_start) / 1e9);
	}
	return 0;
}

/* Fill in the cell's name and cgroup; the cell exists once we opened. */
static void name_cell(struct cell_res *res)
{
	char path[NAME_LEN + 64];

	read_line(SELF_CELL, res->cell, sizeof(res->cell));
	snprintf(path, sizeof(path), "%s/%s/cgroup", CELLS_DIR, res->cell);
	read_line(path, res->cgroup, sizeof(res->cgroup));
}

static int run_host(struct cell_res *res)
{
	cur = res;
	if (cycle(ASHMEM, page_size, NULL))
		return -1;
	name_cell(res);
	if (run_rounds(res, HOST))
		return -1;
	res->ok = true;
	return 0;
}

/* The auto cell: a child in a cgroup and an IPC namespace of its own. */
static void __attribute__((noreturn)) auto_child(struct cell_res *res)
{
	cur = res;
	alarm(CHILD_ALARM);
	if (opt.cgroup && write_str(BENCH_CGROUP "/cgroup.procs", "0")) {
		fail("cannot join %s: %s", BENCH_CGROUP, strerror(errno));
		_exit(1);
	}
	if (unshare(CLONE_NEWIPC)) {
		fail("unshare(CLONE_NEWIPC): %s", strerror(errno));
		_exit(1);
	}
	if (cycle(ASHMEM, page_size, NULL))
		_exit(1);
	name_cell(res);
	if (!strcmp(res->cell, "host") || !strcmp(res->cell, "?")) {
		fail("no auto cell: %s says '%s' (auto_cells 0?)", SELF_CELL, res->cell);
		_exit(1);
	}
	if (run_rounds(res, AUTO))
		_exit(1);
	res->ok = true;
	_exit(0);
}

static int run_auto(struct cell_res *res)
{
	int status, i;
	pid_t pid;

	if (opt.cgroup && mkdir(BENCH_CGROUP, 0755) && errno != EEXIST) {
		printf("bench warning: mkdir %s: %s; the auto cell stays in our cgroup\n",
		       BENCH_CGROUP, strerror(errno));
		opt.cgroup = false;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(res->msg, MSG_LEN, "fork: %s", strerror(errno));
		return -1;
	}
	if (!pid)
		auto_child(res);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status))
		snprintf(res->msg, MSG_LEN, "killed by signal %d", WTERMSIG(status));
	/* The cgroup empties a moment after its last task is reaped. */
	for (i = 0; opt.cgroup && i < 100 && rmdir(BENCH_CGROUP) && errno == EBUSY; i++)
		usleep(10000);
	return res->ok ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The target for the time per cycle of a region of @size. */
static double size_target(size_t size)
{
	return size < 65536 ? TARGET_SMALL : TARGET;
}

static const char *verdict(double ratio, double target)
{
	return ratio <= target ? "ok" : "MISS";
}

static void print_table(struct cell_res res[NCELLS])
{
	double ra, rm, lo, hi, x, t;
	int k, r, s, ph;
	size_t z;

	printf("\n== ashmem_bench: medians over %d rounds; in each, ashmem and memfd alternate"
	       " in %.0f ms slices, %.2f s each; ratios ashmem/memfd ==\n", opt.rounds,
	       opt.slice * 1e3, opt.seconds);
	printf("\ncreate + size + mmap + touch every page + munmap + close, one region per"
	       " cycle\n");
	printf("%-5s %8s | %10s %8s | %10s %8s | %-18s | %s\n", "cell", "size", "ashmem/s",
	       "us", "memfd/s", "us", "time ratio", "per round min..max");
	for (k = 0; k < NCELLS; k++) {
		if (!res[k].ok)
			continue;
		for (z = 0; z < NSIZES; z++) {
			ra = median(res[k].rate[z][ASHMEM], opt.rounds);
			rm = median(res[k].rate[z][MEMFD], opt.rounds);
			t = size_target(sizes[z]);
			lo = 1e9;
			hi = 0;
			for (r = 0; r < opt.rounds; r++) {
				x = res[k].rate[z][MEMFD][r] / res[k].rate[z][ASHMEM][r];
				lo = x < lo ? x : lo;
				hi = x > hi ? x : hi;
			}
			printf("%-5s %8zu | %10.0f %8.2f | %10.0f %8.2f | %5.3f <=%.2f %-4s |"
			       " %5.3f..%5.3f\n", cell_kinds[k], sizes[z], ra, 1e6 / ra, rm,
			       1e6 / rm, rm / ra, t, verdict(rm / ra, t), lo, hi);
		}
	}

	printf("\nASHMEM_UNPIN + ASHMEM_PIN of a whole %d-page region (ashmem only: memfd has"
	       " no equivalent; absolute rate, no target)\n", PIN_PAGES);
	printf("%-5s | %10s %8s | %s\n", "cell", "pairs/s", "us", "PINs that found it purged");
	for (k = 0; k < NCELLS; k++) {
		if (!res[k].ok)
			continue;
		ra = median(res[k].pin_rate, opt.rounds);
		printf("%-5s | %10.0f %8.2f | %ld\n", cell_kinds[k], ra, 1e6 / ra,
		       res[k].pin_purged);
	}

	printf("\nper cycle, by phase (us; medians over rounds of a separate pass that reads"
	       " the clock between phases), and minor faults per cycle (untimed pass)\n");
	printf("%-5s %8s %-6s |", "cell", "size", "side");
	for (ph = 0; ph < NPHASES; ph++)
		printf(" %11s", phase_names[ph]);
	printf(" | %8s | %7s\n", "sum", "faults");
	for (k = 0; k < NCELLS; k++) {
		if (!res[k].ok)
			continue;
		for (z = 0; z < NSIZES; z++) {
			for (s = 0; s < NSIDES; s++) {
				double sum = 0;

				printf("%-5s %8zu %-6s |", s ? "" : cell_kinds[k], sizes[z],
				       side_names[s]);
				for (ph = 0; ph < NPHASES; ph++) {
					x = median(res[k].phase_us[z][s][ph], opt.rounds);
					sum += x;
					printf(" %11.2f", x);
				}
				printf(" | %8.2f | %7.2f\n", sum,
				       median(res[k].flt[z][s], opt.rounds));
			}
		}
	}
}

static void ratio_line(const char *what, double x, double target, bool at_most)
{
	printf("bench ratio ashmem %s = %.3f (target %s %.2f)\n", what, x,
	       at_most ? "<=" : ">=", target);
}

/* Every ratio of the table again, one line each, as the other benches. */
static void print_ratios(struct cell_res res[NCELLS])
{
	char what[64];
	double ra, rm;
	size_t z;
	int k;

	printf("\n");
	for (k = 0; k < NCELLS; k++) {
		if (!res[k].ok)
			continue;
		for (z = 0; z < NSIZES; z++) {
			ra = median(res[k].rate[z][ASHMEM], opt.rounds);
			rm = median(res[k].rate[z][MEMFD], opt.rounds);
			snprintf(what, sizeof(what), "time per cycle %zu B, %s cell", sizes[z],
				 cell_kinds[k]);
			ratio_line(what, rm / ra, size_target(sizes[z]), true);
		}
	}
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: ashmem_bench [-r ROUNDS] [-t SECS] [-s SECS] [-A] [-C]\n"
		"\n"
		"Compares the life of a cask_ashmem region (open /dev/ashmem, set name\n"
		"and size, mmap, touch every page, munmap, close) with a memfd's\n"
		"(memfd_create, ftruncate, the same), 4 KiB, 64 KiB and 1 MiB, and\n"
		"measures ashmem's UNPIN + PIN of a %d-page region; in the host\n"
		"cell, then in an auto cell.\n"
		"\n"
		"  -r ROUNDS  interleaved rounds, medians over them (default 7, at most %d)\n"
		"  -t SECS    time per side in each measurement (default 0.3)\n"
		"  -s SECS    length of one slice: the sides alternate (default 0.02)\n"
		"  -A         no auto-cell run\n"
		"  -C         the auto cell stays in our cgroup (default: one of its own)\n"
		"\n"
		"Exits 4 (skip) if %s cannot be opened.\n", PIN_PAGES, MAX_ROUNDS, ASHMEM_DEV);
}

static int parse_options(int argc, char **argv)
{
	int ch;

	while ((ch = getopt(argc, argv, "r:t:s:ACh")) != -1) {
		switch (ch) {
		case 'r':
			opt.rounds = atoi(optarg);
			if (opt.rounds < 1 || opt.rounds > MAX_ROUNDS) {
				fprintf(stderr, "ashmem_bench: -r wants 1 to %d\n", MAX_ROUNDS);
				return -1;
			}
			break;
		case 't':
			opt.seconds = atof(optarg);
			if (!(opt.seconds > 0 && opt.seconds <= 60)) {
				fprintf(stderr, "ashmem_bench: -t wants 0 < SECS <= 60\n");
				return -1;
			}
			break;
		case 's':
			opt.slice = atof(optarg);
			if (!(opt.slice >= 0.001 && opt.slice <= 10)) {
				fprintf(stderr, "ashmem_bench: -s wants 0.001 <= SECS <= 10\n");
				return -1;
			}
			break;
		case 'A':
			opt.auto_cell = false;
			break;
		case 'C':
			opt.cgroup = false;
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ashmem_bench: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t t_start = now_ns();
	struct cell_res *res;
	int ret, fd, k;

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
	page_size = sysconf(_SC_PAGESIZE);
	fd = open(ASHMEM_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("bench skip: %s: %s\n", ASHMEM_DEV, strerror(errno));
		return EXIT_SKIP;
	}
	close(fd);
	res = mmap(NULL, NCELLS * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		perror("ashmem_bench: mmap");
		return 1;
	}
	printf("bench config: rounds=%d seconds=%.2f slice=%.3f sizes=%zu,%zu,%zu pin_pages=%d"
	       " page=%zu auto_cell=%s\n", opt.rounds, opt.seconds, opt.slice, sizes[0],
	       sizes[1], sizes[2], PIN_PAGES, page_size,
	       !opt.auto_cell ? "no" : opt.cgroup ? BENCH_CGROUP : "our cgroup");

	ret = 0;
	if (run_host(&res[HOST])) {
		fprintf(stderr, "ashmem_bench: host cell: %s\n", res[HOST].msg);
		ret = 1;
	} else {
		printf("bench cell host: %s, cgroup %s\n", res[HOST].cell, res[HOST].cgroup);
	}
	if (opt.auto_cell) {
		if (run_auto(&res[AUTO])) {
			fprintf(stderr, "ashmem_bench: auto cell: %s\n",
				res[AUTO].msg[0] ? res[AUTO].msg : "failed");
			ret = 1;
		} else {
			printf("bench cell auto: %s, cgroup %s\n", res[AUTO].cell,
			       res[AUTO].cgroup);
		}
	}
	for (k = 0; k < NCELLS; k++)
		if (res[k].ok)
			break;
	if (k < NCELLS) {
		print_table(res);
		print_ratios(res);
	}
	printf("\nbench total %.1f s\n", (now_ns() - t_start) / 1e9);
	return ret;
}
