// SPDX-License-Identifier: GPL-2.0
/*
 * logger_bench: the cost of an Android log write through cask_logger
 * (writev() to /dev/log/main) against the logd path (sendmsg() on an
 * AF_UNIX datagram socket to a reader process, like logd's logdw socket).
 *
 * Both paths write the same 100-byte entries as liblog: three iovecs,
 * priority, tag and message. Each write is timed with CLOCK_MONOTONIC;
 * the tool prints throughput and latency percentiles of both paths and
 * their ratios, logger/socket, each as one line "bench ratio logger WHAT,
 * N writers = X (target >= Y)" (or <= Y), as every bench does: throughput
 * at least 2, p99 latency at most 1. It only reports: the harness decides
 * nothing from it.
 *
 * Exit status: 0, 4 if the logger device cannot be opened (skip), 1 on
 * other errors, 2 on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/android_logger.h>

#define PAYLOAD_LEN	100
#define TAG		"bench"
#define MAX_SAMPLES	2000000		/* latency samples, over all writers */
#define MAX_WRITERS	64
#define WARMUP_SECONDS	0.2
#define READER_BUF	(5 * 1024)	/* logd reads its socket into 5 KiB */
#define EXIT_SKIP	4

enum path { PATH_LOGGER, PATH_SOCKET };

static const char *const path_names[] = { "logger_write", "socket_write" };

struct options {
	double seconds;		/* -t: run length, unless -n */
	uint64_t entries;	/* -n: entries per path, over all writers; 0: -t */
	int writers;		/* -w */
	const char *dev;	/* -f */
};

/* What the writers of one run share. */
struct run {
	enum path path;
	int fd;			/* the logger device or the socket */
	uint64_t duration_ns;	/* run length, or 0 for writes counted by limit */
	struct iovec iov[3];
	pthread_barrier_t start;
};

struct writer {
	pthread_t thread;
	struct run *run;
	uint64_t limit;		/* entries to write (UINT64_MAX: until duration_ns) */
	uint32_t *lat;		/* latency samples in ns */
	size_t cap;
	size_t nsamples;
	uint64_t entries;
	int err;		/* errno of a failed write, or 0 */
};

struct result {
	uint64_t entries;
	double seconds;
	size_t nsamples;
	double p50_us;
	double p99_us;
	double p999_us;
};

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: logger_bench [-t SECS | -n ENTRIES] [-w WRITERS] [-f DEVICE]\n"
		"\n"
		"Compares %d-byte Android log writes: writev() to the cask logger\n"
		"device against sendmsg() on an AF_UNIX datagram socketpair to a\n"
		"reader process (the logd path).\n"
		"\n"
		"  -t SECS     measure each path for SECS seconds (default 2)\n"
		"  -n ENTRIES  measure each path for ENTRIES writes instead\n"
		"  -w WRITERS  writer threads per path (default 1, at most %d)\n"
		"  -f DEVICE   the logger device (default /dev/log/main)\n"
		"\n"
		"Exits 4 (skip) if DEVICE cannot be opened.\n", PAYLOAD_LEN, MAX_WRITERS);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The entry as liblog sends it: priority, tag, message, 100 bytes in all. */
static void make_payload(struct iovec *iov, unsigned char *prio, char *msg)
{
	size_t msg_len = PAYLOAD_LEN - 1 - sizeof(TAG);

	*prio = 4;	/* ANDROID_LOG_INFO */
	memset(msg, 'x', msg_len - 1);
	msg[msg_len - 1] = '\0';
	iov[0].iov_base = prio;
	iov[0].iov_len = 1;
	iov[1].iov_base = TAG;
	iov[1].iov_len = sizeof(TAG);
	iov[2].iov_base = msg;
	iov[2].iov_len = msg_len;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct run *r = w->run;
	struct msghdr mh = { .msg_iov = r->iov, .msg_iovlen = 3 };
	uint64_t t0, t1, deadline;
	ssize_t n;

	pthread_barrier_wait(&r->start);
	deadline = now_ns() + r->duration_ns;
	while (w->entries < w->limit) {
		t0 = now_ns();
		if (r->path == PATH_LOGGER)
			n = writev(r->fd, r->iov, 3);
		else
			n = sendmsg(r->fd, &mh, 0);
		t1 = now_ns();
		if (n != PAYLOAD_LEN) {
			if (n < 0 && errno == EINTR)
				continue;
			w->err = n < 0 ? errno : EIO;
			break;
		}
		if (w->nsamples < w->cap)
			w->lat[w->nsamples++] = t1 - t0 > UINT32_MAX ? UINT32_MAX : t1 - t0;
		w->entries++;
		if (r->duration_ns && t1 >= deadline)
			break;
	}
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile @p (0..1) of @n sorted samples, in us. */
static double percentile_us(const uint32_t *sorted, size_t n, double p)
{
	size_t rank;

	if (!n)
		return 0;
	rank = (size_t)(p * n);
	if (rank < p * n)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1] / 1000.0;
}

/*
 * Run @nw writers of @r: for @seconds, or @entries writes over all writers
 * if @entries is not 0. Fills @res; @all (room for MAX_SAMPLES) is scratch
 * space for the percentiles. Returns 0, or -1 if a write failed.
 */
static int run_writers(struct run *r, struct writer *ws, int nw, double seconds,
		       uint64_t entries, uint32_t *all, struct result *res)
{
	uint64_t start, end;
	size_t total = 0;
	int i, ret, err = 0;

	memset(res, 0, sizeof(*res));
	r->duration_ns = entries ? 0 : (uint64_t)(seconds * 1e9);
	if (pthread_barrier_init(&r->start, NULL, nw + 1)) {
		fprintf(stderr, "logger_bench: pthread_barrier_init failed\n");
		return -1;
	}
	for (i = 0; i < nw; i++) {
		ws[i].run = r;
		ws[i].limit = entries ? entries / nw + ((uint64_t)i < entries % nw) : UINT64_MAX;
		ws[i].nsamples = 0;
		ws[i].entries = 0;
		ws[i].err = 0;
		ret = pthread_create(&ws[i].thread, NULL, writer_main, &ws[i]);
		if (ret) {
			/* The barrier cannot be left: nothing sensible remains to do. */
			fprintf(stderr, "logger_bench: pthread_create: %s\n", strerror(ret));
			exit(1);
		}
	}
	pthread_barrier_wait(&r->start);
	start = now_ns();
	for (i = 0; i < nw; i++)
		pthread_join(ws[i].thread, NULL);
	end = now_ns();
	pthread_barrier_destroy(&r->start);

	for (i = 0; i < nw; i++) {
		if (ws[i].err && !err)
			err = ws[i].err;
		res->entries += ws[i].entries;
		memcpy(all + total, ws[i].lat, ws[i].nsamples * sizeof(*all));
		total += ws[i].nsamples;
	}
	if (err) {
		fprintf(stderr, "logger_bench: %s: write failed: %s\n", path_names[r->path],
			strerror(err));
		return -1;
	}
	qsort(all, total, sizeof(*all), cmp_u32);
	res->seconds = (end - start) / 1e9;
	res->nsamples = total;
	res->p50_us = percentile_us(all, total, 0.50);
	res->p99_us = percentile_us(all, total, 0.99);
	res->p999_us = percentile_us(all, total, 0.999);
	return 0;
}

/* --- the logger path ------------------------------------------------- */

static void flush_log(int fd, const char *dev)
{
	if (ioctl(fd, LOGGER_FLUSH_LOG))
		fprintf(stderr, "logger_bench: warning: cannot flush %s: %s\n", dev,
			strerror(errno));
}

static int bench_logger(int fd, const struct options *o, struct writer *ws, uint32_t *all,
			struct result *res)
{
	struct run r = { .path = PATH_LOGGER, .fd = fd };
	unsigned char prio;
	char msg[PAYLOAD_LEN];

	make_payload(r.iov, &prio, msg);
	flush_log(fd, o->dev);
	if (run_writers(&r, ws, o->writers, WARMUP_SECONDS, 0, all, res))
		return -1;
	flush_log(fd, o->dev);
	if (run_writers(&r, ws, o->writers, o->seconds, o->entries, all, res))
		return -1;
	flush_log(fd, o->dev);
	return 0;
}

/* --- the socket path ------------------------------------------------- */

/*
 * The reader process, like logd's logdw reader: receive each datagram into
 * a 5 KiB buffer and count it. An empty datagram ends the run; the count
 * goes back on the same socket.
 */
static void __attribute__((noreturn)) reader_main(int sock)
{
	static char buf[READER_BUF];
	uint64_t count = 0;
	ssize_t n;

	for (;;) {
		n = recv(sock, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			_exit(1);
		if (n == 0)
			break;
		count++;
	}
	_exit(send(sock, &count, sizeof(count), 0) == sizeof(count) ? 0 : 1);
}

/* Start a reader process on a new socketpair; the writers' end goes to @sock. */
static pid_t start_reader(int *sock)
{
	int sv[2];
	pid_t pid;

	/* Default socket buffers: a writer blocks when the reader lags. */
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) {
		fprintf(stderr, "logger_bench: socketpair: %s\n", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "logger_bench: fork: %s\n", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (!pid) {
		close(sv[0]);
		reader_main(sv[1]);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

/* End the reader: returns the entries it received, or -1. */
static int64_t stop_reader(pid_t pid, int sock)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	uint64_t count;
	int64_t ret = -1;
	int status;

	if (send(sock, "", 0, 0) < 0)
		fprintf(stderr, "logger_bench: stopping the reader: %s\n", strerror(errno));
	else if (poll(&pfd, 1, 30000) != 1)
		fprintf(stderr, "logger_bench: the reader does not answer\n");
	else if (recv(sock, &count, sizeof(count), 0) != sizeof(count))
		fprintf(stderr, "logger_bench: no count from the reader\n");
	else
		ret = count;
	if (ret < 0)
		kill(pid, SIGKILL);
	close(sock);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return ret;
}

/* One run of the socket path, with its own reader process. */
static int socket_run(struct run *r, const struct options *o, struct writer *ws, double seconds,
		      uint64_t entries, uint32_t *all, struct result *res)
{
	int64_t received;
	pid_t pid;
	int ret;

	pid = start_reader(&r->fd);
	if (pid < 0)
		return -1;
	ret = run_writers(r, ws, o->writers, seconds, entries, all, res);
	received = stop_reader(pid, r->fd);
	if (received < 0)
		return -1;
	if (!ret && (uint64_t)received != res->entries)
		fprintf(stderr, "logger_bench: warning: the reader got %lld of %llu entries\n",
			(long long)received, (unsigned long long)res->entries);
	return ret;
}

static int bench_socket(const struct options *o, struct writer *ws, uint32_t *all,
			struct result *res)
{
	struct run r = { .path = PATH_SOCKET };
	unsigned char prio;
	char msg[PAYLOAD_LEN];

	make_payload(r.iov, &prio, msg);
	if (socket_run(&r, o, ws, WARMUP_SECONDS, 0, all, res))
		return -1;
	return socket_run(&r, o, ws, o->seconds, o->entries, all, res);
}

/* --- report ---------------------------------------------------------- */

static double per_second(const struct result *res)
{
	return res->seconds > 0 ? res->entries / res->seconds : 0;
}

static void print_result(enum path path, const struct result *res, int writers)
{
	double eps = per_second(res);

	printf("bench %s: entries_per_s=%.0f p50_us=%.2f p99_us=%.2f p999_us=%.2f "
	       "mb_per_s=%.2f entries=%llu samples=%zu seconds=%.3f writers=%d\n",
	       path_names[path], eps, res->p50_us, res->p99_us, res->p999_us,
	       eps * PAYLOAD_LEN / 1e6, (unsigned long long)res->entries, res->nsamples,
	       res->seconds, writers);
	fflush(stdout);
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* One ratio, logger/socket, as every bench prints its ratios. */
static void ratio_line(const char *what, double x, double target, bool at_most)
{
	printf("bench ratio logger %s = %.3f (target %s %.2f)\n", what, x,
	       at_most ? "<=" : ">=", target);
}

/* --- main ------------------------------------------------------------ */

static int parse_options(int argc, char **argv, struct options *o)
{
	char *end;
	int c;

	o->seconds = 2;
	o->writers = 1;
	o->dev = "/dev/log/main";
	while ((c = getopt(argc, argv, "f:hn:t:w:")) != -1) {
		switch (c) {
		case 'f':
			o->dev = optarg;
			break;
		case 'n':
			errno = 0;
			o->entries = strtoull(optarg, &end, 10);
			if (errno || *end || !o->entries || optarg[0] == '-') {
				fprintf(stderr, "logger_bench: -n wants a positive count\n");
				return -1;
			}
			break;
		case 't':
			o->seconds = strtod(optarg, &end);
			if (*end || !(o->seconds > 0) || o->seconds > 3600) {
				fprintf(stderr, "logger_bench: -t wants 0 < SECS <= 3600\n");
				return -1;
			}
			break;
		case 'w':
			o->writers = (int)strtol(optarg, &end, 10);
			if (*end || o->writers < 1 || o->writers > MAX_WRITERS) {
				fprintf(stderr, "logger_bench: -w wants 1 to %d writers\n",
					MAX_WRITERS);
				return -1;
			}
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "logger_bench: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct writer ws[MAX_WRITERS] = { 0 };
	struct result logger, sock;
	struct options o = { 0 };
	uint32_t *samples, *all;
	char what[64];
	size_t per_writer;
	int i, fd, ret;

	ret = parse_options(argc, argv, &o);
	if (ret > 0) {
		print_usage(stdout);
		return 0;
	}
	if (ret < 0) {
		fprintf(stderr, "Try 'logger_bench -h'.\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);

	fd = open(o.dev, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("bench skip: cannot open %s: %s\n", o.dev, strerror(errno));
		return EXIT_SKIP;
	}

	/* Touch the sample arrays now, not in the timed loops. */
	per_writer = MAX_SAMPLES / o.writers;
	samples = malloc(MAX_SAMPLES * sizeof(*samples));
	all = malloc(MAX_SAMPLES * sizeof(*all));
	if (!samples || !all) {
		fprintf(stderr, "logger_bench: no memory for %d samples\n", MAX_SAMPLES);
		return 1;
	}
	memset(samples, 0xff, MAX_SAMPLES * sizeof(*samples));
	memset(all, 0xff, MAX_SAMPLES * sizeof(*all));
	for (i = 0; i < o.writers; i++) {
		ws[i].lat = samples + i * per_writer;
		ws[i].cap = per_writer;
	}

	printf("bench config: payload_bytes=%d writers=%d %s=%llu device=%s\n", PAYLOAD_LEN,
	       o.writers, o.entries ? "entries" : "milliseconds",
	       o.entries ? (unsigned long long)o.entries : (unsigned long long)(o.seconds * 1000),
	       o.dev);
	if (bench_logger(fd, &o, ws, all, &logger))
		return 1;
	print_result(PATH_LOGGER, &logger, o.writers);
	if (bench_socket(&o, ws, all, &sock))
		return 1;
	print_result(PATH_SOCKET, &sock, o.writers);

	snprintf(what, sizeof(what), "throughput, %d writer%s", o.writers,
		 o.writers > 1 ? "s" : "");
	ratio_line(what, ratio(per_second(&logger), per_second(&sock)), 2.00, false);
	snprintf(what, sizeof(what), "p99 latency, %d writer%s", o.writers,
		 o.writers > 1 ? "s" : "");
	ratio_line(what, ratio(logger.p99_us, sock.p99_us), 1.00, true);
	close(fd);
	free(samples);
	free(all);
	return 0;
}
