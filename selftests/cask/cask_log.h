/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for selftests of cask_logger's /dev/log devices: open, read,
 * write and ioctl wrappers that return -errno, entries taken apart into
 * struct rec, the per-cell sysfs files under cells/NAME/logger/, the host's
 * reads of a cell, and waiting for children. The next driver's selftest
 * starts from these. Define _GNU_SOURCE before including it.
 *
 * Every function returns a value or -errno, so that a check is one
 * EXPECT_EQ() and a function run in a container (container_run()) can
 * pass the errno on as its exit status.
 */
#ifndef CASK_LOG_H
#define CASK_LOG_H

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/android_logger.h>

#include "cask_util.h"

#define LOG_DIR		"/dev/log/"
#define LOG_DEFAULT_SIZE	262144
#define LOG_DEFAULT_SIZE_STR	"262144\n"
#define V1_HDR		((int)sizeof(struct user_logger_entry_compat))
#define V2_HDR		((int)sizeof(struct logger_entry))
#define CELL_HDR	((int)sizeof(struct cask_logger_entry))
/* What an entry costs in LOGGER_GET_LOG_LEN besides its payload. */
#define STORED_HDR	32
#define MAX_PAYLOAD	LOGGER_ENTRY_MAX_PAYLOAD
/* The entry time may lag the caller's clock by a tick (coarse clocks). */
#define TIME_SLACK_NS	20000000LL

static_assert(sizeof(struct user_logger_entry_compat) == 20, "v1 header");
static_assert(sizeof(struct logger_entry) == 24, "v2 header");
static_assert(sizeof(struct cask_logger_entry) == 72, "cell header");

/* One entry as read, taken apart. */
struct rec {
	int n;			/* what read() returned */
	int len;		/* header: payload length */
	int hdr_size;		/* v1: 20; else the header's hdr_size */
	int pad;		/* v1: __pad */
	pid_t pid, tid;
	unsigned int euid;
	struct timespec ts;
	unsigned long long cell_id;
	char cell[CASK_LOGGER_CELL_NAME_MAX + 1];
	int prio;
	char tag[32];
	char msg[80];		/* the message, cut to fit */
	unsigned char raw[64];	/* the payload's first bytes */
};

#define MAX_RECS	256

/* Why the logger tests cannot run here, or NULL. */
static inline const char *logger_missing(void)
{
	const char *why = cask_missing();

	if (why)
		return why;
	if (access(LOG_DIR "main", F_OK))
		return "cask_logger is not loaded";
	return NULL;
}

static inline int log_open(const char *buffer, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), LOG_DIR "%s", buffer);
	return open(path, flags | O_CLOEXEC);
}

/* An ioctl's return value, or -errno. */
static inline int log_ioctl(int fd, unsigned long req, void *arg)
{
	int ret = ioctl(fd, req, arg);

	return ret < 0 ? -errno : ret;
}

static inline int set_version(int fd, int version)
{
	return log_ioctl(fd, LOGGER_SET_VERSION, &version);
}

static inline int select_cell(int fd, unsigned int flags, const char *cell)
{
	struct cask_logger_select sel;

	memset(&sel, 0, sizeof(sel));
	sel.flags = flags;
	snprintf(sel.cell, sizeof(sel.cell), "%s", cell);
	return log_ioctl(fd, CASK_LOGGER_SELECT, &sel);
}

/* [prio][tag\0][msg\0] into @buf; its length. */
static inline int make_payload(char *buf, size_t size, int prio, const char *tag,
			       const char *msg)
{
	size_t tl = strlen(tag) + 1, ml = strlen(msg) + 1;

	if (1 + tl + ml > size)
		return 0;
	buf[0] = prio;
	memcpy(buf + 1, tag, tl);
	memcpy(buf + 1 + tl, msg, ml);
	return 1 + tl + ml;
}

static inline int payload_len(const char *tag, const char *msg)
{
	return 1 + strlen(tag) + 1 + strlen(msg) + 1;
}

/* writev() of [prio], [tag\0], [msg\0]: bytes stored, or -errno. */
static inline int log_write(int fd, int prio, const char *tag, const char *msg)
{
	unsigned char p = prio;
	struct iovec iov[3] = {
		{ .iov_base = &p, .iov_len = 1 },
		{ .iov_base = (void *)tag, .iov_len = strlen(tag) + 1 },
		{ .iov_base = (void *)msg, .iov_len = strlen(msg) + 1 },
	};
	ssize_t n = writev(fd, iov, 3);

	return n < 0 ? -errno : n;
}

/* One read(): bytes, or -errno. */
static inline int log_read(int fd, void *buf, size_t size)
{
	ssize_t n = read(fd, buf, size);

	return n < 0 ? -errno : n;
}

static inline int hdr_len(int version)
{
	if (version == CASK_LOGGER_VERSION_CELL)
		return CELL_HDR;
	return version == 2 ? V2_HDR : V1_HDR;
}

static inline void copy_str(char *dst, size_t size, const unsigned char *src, size_t max)
{
	size_t n = strnlen((const char *)src, max);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Take apart an entry of @n bytes; 0, or -1 if it is not consistent. */
static inline int parse_rec(const void *buf, int n, int version, struct rec *r)
{
	const struct user_logger_entry_compat *v1 = buf;
	const struct logger_entry *v2 = buf;
	const struct cask_logger_entry *ce = buf;
	int hdr = hdr_len(version), tl, left;
	const unsigned char *p;

	memset(r, 0, sizeof(*r));
	r->n = n;
	if (n < hdr)
		return -1;
	r->len = v1->len;
	r->pid = v1->pid;
	r->tid = v1->tid;
	r->ts.tv_sec = v1->sec;
	r->ts.tv_nsec = v1->nsec;
	if (version == 1) {
		r->hdr_size = V1_HDR;
		r->pad = v1->__pad;
	} else {
		r->hdr_size = v2->hdr_size;
		r->euid = v2->euid;
	}
	if (version == CASK_LOGGER_VERSION_CELL) {
		r->cell_id = ce->cell_id;
		copy_str(r->cell, sizeof(r->cell), (const unsigned char *)ce->cell,
			 sizeof(ce->cell));
	}
	if (r->hdr_size != hdr || n != hdr + r->len)
		return -1;
	p = (const unsigned char *)buf + hdr;
	memcpy(r->raw, p, r->len < (int)sizeof(r->raw) ? r->len : sizeof(r->raw));
	if (r->len < 1)
		return 0;
	r->prio = p[0];
	left = r->len - 1;
	tl = strnlen((const char *)p + 1, left);
	copy_str(r->tag, sizeof(r->tag), p + 1, left);
	if (tl + 1 < left)
		copy_str(r->msg, sizeof(r->msg), p + 2 + tl, left - tl - 1);
	return 0;
}

/*
 * Read entries until EAGAIN (@fd is non-blocking): how many, or -errno of
 * a failed read, -EBADMSG for an inconsistent entry, -E2BIG for too many.
 */
static inline int read_recs(int fd, int version, struct rec *recs, int max)
{
	unsigned long long buf[1024];
	int n = 0, got;

	for (;;) {
		got = log_read(fd, buf, sizeof(buf));
		if (got == -EAGAIN)
			return n;
		if (got < 0)
			return got;
		if (n == max)
			return -E2BIG;
		if (parse_rec(buf, got, version, &recs[n]))
			return -EBADMSG;
		n++;
	}
}

static inline int find_msg(const struct rec *recs, int n, const char *msg)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(recs[i].msg, msg))
			return i;
	return -1;
}

static inline long long ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* @t in [@lo - slack, @hi + 1 ms] and a valid timespec. */
static inline bool ts_between(const struct timespec *t, const struct timespec *lo,
			      const struct timespec *hi)
{
	if (t->tv_nsec < 0 || t->tv_nsec >= 1000000000L)
		return false;
	return ts_ns(t) >= ts_ns(lo) - TIME_SLACK_NS &&
	       ts_ns(t) <= ts_ns(hi) + 1000000LL;
}

static inline long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A number from /sys/kernel/cask/cells/@cell/logger/@buffer/@attr, or -errno. */
static inline long long logger_attr(const char *cell, const char *buffer, const char *attr)
{
	char file[96], buf[64], *end;
	long long v;
	int ret;

	snprintf(file, sizeof(file), "logger/%s/%s", buffer, attr);
	ret = cell_value(cell, file, buf, sizeof(buf));
	if (ret)
		return ret;
	v = strtoll(buf, &end, 10);
	if (end == buf || *end)
		return -EBADMSG;
	return v;
}

static inline int logger_set_size(const char *cell, const char *buffer, const char *value)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), CASK "/cells/%s/logger/%s/size", cell, buffer);
	return write_file(path, value);
}

static inline long long cell_id(const char *cell)
{
	char buf[32];

	if (cell_value(cell, "id", buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

/* The host's @buffer at its default size and empty; 0 or -errno. */
static inline int host_reset(const char *buffer)
{
	long long size = logger_attr("host", buffer, "size");
	int fd, ret;

	if (size < 0)
		return size;
	if (size != LOG_DEFAULT_SIZE) {
		ret = logger_set_size("host", buffer, LOG_DEFAULT_SIZE_STR);
		if (ret)
			return ret;
	}
	fd = log_open(buffer, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = log_ioctl(fd, LOGGER_FLUSH_LOG, NULL);
	close(fd);
	return ret;
}

static inline void host_restore(const char *buffer)
{
	if (logger_attr("host", buffer, "size") != LOG_DEFAULT_SIZE)
		logger_set_size("host", buffer, LOG_DEFAULT_SIZE_STR);
}

/* All entries of cell @cell's @buffer, read by the host; count or -errno. */
static inline int host_read_cell(const char *cell, const char *buffer, int version,
				 struct rec *recs)
{
	int fd, ret;

	fd = log_open(buffer, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	ret = select_cell(fd, 0, cell);
	if (!ret && version != 1)
		ret = set_version(fd, version);
	if (!ret)
		ret = read_recs(fd, version, recs, MAX_RECS);
	close(fd);
	return ret;
}

/* Run @fn(@arg) in a child; its pid, or -1. Its exit status is @fn's. */
static inline pid_t start_child(container_fn fn, void *arg)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

/* Wait up to @ms for child @pid: its exit code (128 + signal), or -1. */
static inline int wait_child(pid_t pid, int ms)
{
	long long end = now_ms() + ms;
	int status;
	pid_t ret;

	if (pid <= 0)
		return -1;
	do {
		ret = waitpid(pid, &status, WNOHANG);
		if (ret == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) :
			       128 + WTERMSIG(status);
		if (ret < 0)
			return -1;
		usleep(10000);
	} while (now_ms() < end);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/* Binary payload of @size bytes for entry @seq; @size >= 16. */
static inline void fill_binary(unsigned char *buf, int size, int seq)
{
	int i;

	buf[0] = 4;
	memcpy(buf + 1, "bin", 4);
	memcpy(buf + 5, &seq, sizeof(seq));
	for (i = 9; i < size; i++)
		buf[i] = (unsigned char)(seq * 13 + i);
}

/* Inside a container: the caller's ids in the host's PID namespace. */
static inline int host_ids(pid_t *pid, pid_t *tid)
{
	char link[64], path[64], line[128];
	bool ok = false;
	ssize_t n;
	FILE *f;

	/* /proc is the host's: its thread-self names host ids. */
	n = readlink("/proc/thread-self", link, sizeof(link) - 1);
	if (n < 0)
		return -1;
	link[n] = '\0';
	if (sscanf(link, "%d/task/%d", pid, tid) != 2)
		return -1;
	/* Check: NSpid of that process ends with our own pid. */
	snprintf(path, sizeof(path), "/proc/%d/status", *pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *last;

		if (strncmp(line, "NSpid:", 6))
			continue;
		line[strcspn(line, "\n")] = '\0';
		last = strrchr(line, '\t');
		ok = last && atoi(last + 1) == getpid();
	}
	fclose(f);
	return ok ? 0 : -1;
}

#endif /* CASK_LOG_H */
