// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests of /dev/cask/kmsg, each cell's own /dev/kmsg (cask_logger,
 * Documentation/logger.rst "kmsg"). Where the ABI is meant to match
 * /dev/kmsg the same input goes to both in the same boot and the answers
 * are compared: the record format, "<N>" prefixes good and bad, NUL bytes,
 * the largest write, short buffers, seeks, poll. Then what /dev/kmsg has
 * not: overruns of a ring of our own, the rate limit's note kept in the
 * cell, nothing reaching the host's printk buffer, and the cells kept
 * apart (another cell, an unprivileged user namespace).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "cask_log.h"

#define KMSG		"/dev/cask/kmsg"
#define HOST_KMSG	"/dev/kmsg"
#define KMSG_ATTR	CASK "/cells/%s/logger/kmsg/%s"
#define KMSG_DEFAULT_SIZE	"131072"
#define WRITE_MAX	1024
#define LINE_MAX_	8192

/* One record as read, taken apart. */
struct krec {
	unsigned int prio;
	unsigned long long seq, usec;
	char flag;
	char text[LINE_MAX_];	/* escaped, as read, without the newline */
};

static int kmsg_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int kwrite(int fd, const void *buf, size_t len)
{
	ssize_t n = write(fd, buf, len);

	return n < 0 ? -errno : n;
}

static int kread(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size);

	return n < 0 ? -errno : n;
}

/* "prio,seq,usec,flag[,caller=..];text\n" into @r; 0 or -1. */
static int kparse(const char *buf, int n, struct krec *r)
{
	const char *semi = memchr(buf, ';', n);
	char flags[64];
	int len;

	if (!semi || n < 2 || buf[n - 1] != '\n' || semi - buf >= (int)sizeof(flags))
		return -1;
	memcpy(flags, buf, semi - buf);
	flags[semi - buf] = '\0';
	if (sscanf(flags, "%u,%llu,%llu,%c", &r->prio, &r->seq, &r->usec, &r->flag) != 4)
		return -1;
	len = n - (semi + 1 - buf) - 1;
	memcpy(r->text, semi + 1, len);
	r->text[len] = '\0';
	return 0;
}

/*
 * The record whose text contains @marker, reading @fd from its oldest
 * record until EAGAIN: 0, -ENOENT, or -errno of a read.
 */
static int kfind(int fd, const char *marker, struct krec *r)
{
	static char buf[LINE_MAX_];
	int n;

	if (lseek(fd, 0, SEEK_SET))
		return -errno;
	for (;;) {
		n = kread(fd, buf, sizeof(buf));
		if (n == -EPIPE)
			continue;
		if (n == -EAGAIN)
			return -ENOENT;
		if (n < 0)
			return n;
		if (kparse(buf, n, r))
			return -EBADMSG;
		if (strstr(r->text, marker))
			return 0;
	}
}

/*
 * Write @buf to a fresh open of @path: a fresh rate limit each time. On
 * the host's /dev/kmsg a record without a trailing newline stays open for
 * a continuation, unseen by readers, until the next record comes: so one
 * more, a newline-terminated record, follows it there. (A cell's kmsg has
 * no continuations: its records are readable at once.)
 */
static int kwrite_path(const char *path, const void *buf, size_t len)
{
	static const char flush[] = "<7>kmsg_test: flush\n";
	int fd = kmsg_open(path, O_WRONLY), ret;

	if (fd < 0)
		return fd;
	ret = kwrite(fd, buf, len);
	if (ret >= 0 && !strcmp(path, HOST_KMSG))
		kwrite(fd, flush, sizeof(flush) - 1);
	close(fd);
	return ret;
}

static int kmsg_attr_set(const char *cell, const char *attr, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), KMSG_ATTR, cell, attr);
	return write_file(path, val);
}

static long long kmsg_attr(const char *cell, const char *attr)
{
	return logger_attr(cell, "kmsg", attr);
}

static const char *kmsg_missing(void)
{
	if (cask_missing())
		return cask_missing();
	if (access(KMSG, F_OK))
		return "cask_logger has no " KMSG;
	return NULL;
}

/* Whether the host's /dev/kmsg takes writes here (printk.devkmsg). */
static bool host_kmsg_usable(void)
{
	int fd = kmsg_open(HOST_KMSG, O_RDONLY | O_NONBLOCK);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int seq_marker(char *buf, size_t size, const char *what)
{
	static int n;

	return snprintf(buf, size, "kt%d-%s-%d", getpid(), what, n++);
}

/* ------------------------------------------------------------------ */
/* The host cell, side by side with the host's /dev/kmsg. */

FIXTURE(kmsg) {
	int r;
};

FIXTURE_SETUP(kmsg)
{
	self->r = -1;
	if (kmsg_missing())
		SKIP(return, "%s", kmsg_missing());
	ASSERT_EQ(0, kmsg_attr_set("host", "devkmsg", "on"));
	ASSERT_EQ(0, kmsg_attr_set("host", "size", KMSG_DEFAULT_SIZE));
	self->r = kmsg_open(KMSG, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, self->r);
}

FIXTURE_TEARDOWN(kmsg)
{
	if (self->r >= 0)
		close(self->r);
	kmsg_attr_set("host", "devkmsg", "ratelimit");
	kmsg_attr_set("host", "size", KMSG_DEFAULT_SIZE);
}

TEST_F(kmsg, format_and_seq)
{
	long long before = kmsg_attr("host", "entries_written");
	char m[64], line[128];
	struct krec a, b, h;
	int fd;

	seq_marker(m, sizeof(m), "fmt");
	snprintf(line, sizeof(line), "<13>%s one\n", m);
	ASSERT_EQ((int)strlen(line), kwrite_path(KMSG, line, strlen(line)));
	snprintf(line, sizeof(line), "<13>%s two", m);
	ASSERT_EQ((int)strlen(line), kwrite_path(KMSG, line, strlen(line)));
	ASSERT_EQ(before + 2, kmsg_attr("host", "entries_written"));
	snprintf(line, sizeof(line), "%s one", m);
	ASSERT_EQ(0, kfind(self->r, line, &a));
	snprintf(line, sizeof(line), "%s two", m);
	ASSERT_EQ(0, kfind(self->r, line, &b));
	EXPECT_EQ(13, a.prio);
	EXPECT_EQ('-', a.flag);
	EXPECT_EQ(a.seq + 1, b.seq);
	EXPECT_EQ((unsigned long long)before, a.seq);
	EXPECT_LE(a.usec, b.usec);
	EXPECT_STREQ(line, b.text);

	if (!host_kmsg_usable())
		SKIP(return, "the host's /dev/kmsg is not readable here");
	/* The same write to /dev/kmsg reads back the same but for seq and time. */
	snprintf(line, sizeof(line), "<13>%s one\n", m);
	ASSERT_EQ((int)strlen(line), kwrite_path(HOST_KMSG, line, strlen(line)));
	fd = kmsg_open(HOST_KMSG, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	snprintf(line, sizeof(line), "%s one", m);
	ASSERT_EQ(0, kfind(fd, line, &h));
	close(fd);
	EXPECT_EQ(h.prio, a.prio);
	EXPECT_EQ(h.flag, a.flag);
	EXPECT_STREQ(h.text, a.text);
	/* Both stamped with the same clock: the host's is no earlier. */
	EXPECT_LE(a.usec, h.usec);
}

/* Writes and what /dev/kmsg makes of them; %s is the marker. */
static const struct {
	const char *fmt;
	int nul_at;	/* > 0: a NUL byte replaces this byte of the write */
} prefix_cases[] = {
	{ "%s plain" }, { "%s newline\n" }, { "%s two newlines\n\n" },
	{ "<3>%s level" }, { "<13>%s user" }, { "<30>%s daemon" },
	{ "<0>%s kernel" }, { "<7>%s kernel debug" }, { "<>%s empty" },
	{ "<5%s unclosed" }, { "<ab>%s letters" }, { "<-3>%s sign" },
	{ "< 3>%s space" }, { "<2047>%s facility 255" }, { "<2048>%s wraps" },
	{ "<4294967304>%s 32 bits" }, { "<99999999999999999999999>%s overflow" },
	{ " <3>%s not first" }, { "<6>%s\ttab\x7f\xff\\" },
	{ "<6>%s nul-tail", 4 },
};

TEST_F(kmsg, prefixes_match_devkmsg)
{
	char m[64], buf[256], find[80];
	struct krec ours, host;
	unsigned int i;
	int hr, len, nul;

	if (!host_kmsg_usable())
		SKIP(return, "the host's /dev/kmsg is not readable here");
	hr = kmsg_open(HOST_KMSG, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, hr);
	for (i = 0; i < ARRAY_SIZE(prefix_cases); i++) {
		seq_marker(m, sizeof(m), "pfx");
		len = snprintf(buf, sizeof(buf), prefix_cases[i].fmt, m);
		nul = prefix_cases[i].nul_at;
		if (nul) {
			/* After the marker: "<6>" m " nul-tail", NUL in the tail. */
			nul += 3 + strlen(m);
			buf[nul] = '\0';
		}
		ASSERT_EQ(len, kwrite_path(KMSG, buf, len));
		ASSERT_EQ(len, kwrite_path(HOST_KMSG, buf, len));
		snprintf(find, sizeof(find), "%s", m);
		ASSERT_EQ(0, kfind(self->r, find, &ours)) TH_LOG("case %u", i);
		ASSERT_EQ(0, kfind(hr, find, &host)) TH_LOG("case %u", i);
		EXPECT_EQ(host.prio, ours.prio) TH_LOG("case %u: %s", i, prefix_cases[i].fmt);
		EXPECT_EQ(host.flag, ours.flag) TH_LOG("case %u", i);
		EXPECT_STREQ(host.text, ours.text) TH_LOG("case %u", i);
	}
	close(hr);
}

TEST_F(kmsg, write_limits)
{
	static char buf[WRITE_MAX + 2];
	void *bad;
	struct krec r, h;
	char m[64];
	int n, fd;

	/* Empty writes: 0, and a record of no text, as /dev/kmsg. */
	EXPECT_EQ(0, kwrite_path(KMSG, "", 0));
	/* Larger than 1024: EINVAL, nothing stored. */
	n = seq_marker(m, sizeof(m), "big");
	memset(buf, 'x', sizeof(buf));
	memcpy(buf, m, n);
	EXPECT_EQ(-EINVAL, kwrite_path(KMSG, buf, WRITE_MAX + 1));
	EXPECT_EQ(-ENOENT, kfind(self->r, m, &r));
	/* 1024 bytes: 1023 of them kept. */
	EXPECT_EQ(WRITE_MAX, kwrite_path(KMSG, buf, WRITE_MAX));
	ASSERT_EQ(0, kfind(self->r, m, &r));
	EXPECT_EQ(WRITE_MAX - 1, (int)strlen(r.text));
	/* A bad pointer: EFAULT (an inaccessible page the compiler cannot see). */
	bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bad);
	fd = kmsg_open(KMSG, O_WRONLY);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EFAULT, kwrite(fd, bad, 10));
	close(fd);

	if (!host_kmsg_usable())
		return;
	EXPECT_EQ(-EINVAL, kwrite_path(HOST_KMSG, buf, WRITE_MAX + 1));
	fd = kmsg_open(HOST_KMSG, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	EXPECT_EQ(WRITE_MAX, kwrite_path(HOST_KMSG, buf, WRITE_MAX));
	ASSERT_EQ(0, kfind(fd, m, &h));
	EXPECT_STREQ(h.text, r.text);
	close(fd);
}

TEST_F(kmsg, short_buffer_loses_record)
{
	char m[64], line[96], buf[LINE_MAX_];
	struct krec r;
	int n;

	ASSERT_EQ(0, lseek(self->r, 0, SEEK_END));
	seq_marker(m, sizeof(m), "short");
	snprintf(line, sizeof(line), "%s first", m);
	ASSERT_LT(0, kwrite_path(KMSG, line, strlen(line)));
	snprintf(line, sizeof(line), "%s second", m);
	ASSERT_LT(0, kwrite_path(KMSG, line, strlen(line)));
	EXPECT_EQ(-EINVAL, kread(self->r, buf, 8));
	/* As /dev/kmsg: the record was used up. */
	n = kread(self->r, buf, sizeof(buf));
	ASSERT_LT(0, n);
	ASSERT_EQ(0, kparse(buf, n, &r));
	EXPECT_STREQ(line, r.text);
	EXPECT_EQ(-EAGAIN, kread(self->r, buf, sizeof(buf)));

	if (host_kmsg_usable()) {
		int hr = kmsg_open(HOST_KMSG, O_RDONLY | O_NONBLOCK);

		ASSERT_LE(0, hr);
		EXPECT_EQ(-EINVAL, kread(hr, buf, 8));
		close(hr);
	}
}

TEST_F(kmsg, seek)
{
	static const char * const paths[] = { KMSG, HOST_KMSG };
	char m[64], buf[LINE_MAX_];
	struct krec r, first;
	unsigned int i;
	int fd, n;

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		if (i && !host_kmsg_usable())
			break;
		fd = kmsg_open(paths[i], O_RDONLY | O_NONBLOCK);
		ASSERT_LE(0, fd);
		errno = 0;
		EXPECT_EQ(-1, lseek(fd, 1, SEEK_SET));
		EXPECT_EQ(ESPIPE, errno);
		EXPECT_EQ(-1, lseek(fd, 0, SEEK_CUR));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(-1, lseek(fd, -1, SEEK_END));
		EXPECT_EQ(ESPIPE, errno);
		EXPECT_EQ(0, lseek(fd, 0, SEEK_END)) TH_LOG("%s", paths[i]);
		seq_marker(m, sizeof(m), "seek");
		ASSERT_LT(0, kwrite_path(paths[i], m, strlen(m)));
		/* The host's kernel may log in between: read up to ours. */
		do {
			n = kread(fd, buf, sizeof(buf));
			ASSERT_LT(0, n) TH_LOG("%s", paths[i]);
			ASSERT_EQ(0, kparse(buf, n, &r));
		} while (i && strcmp(m, r.text));
		EXPECT_STREQ(m, r.text) TH_LOG("%s", paths[i]);
		EXPECT_EQ(0, lseek(fd, 0, SEEK_SET));
		n = kread(fd, buf, sizeof(buf));
		ASSERT_LT(0, n);
		ASSERT_EQ(0, kparse(buf, n, &first));
		EXPECT_LE(first.seq, r.seq);
		if (!i) {
			/* No clear in a cell: SEEK_DATA is the oldest too. */
			EXPECT_EQ(0, lseek(fd, 0, SEEK_DATA));
			n = kread(fd, buf, sizeof(buf));
			ASSERT_LT(0, n);
			ASSERT_EQ(0, kparse(buf, n, &r));
			EXPECT_EQ(first.seq, r.seq);
		} else {
			EXPECT_EQ(0, lseek(fd, 0, SEEK_DATA));
		}
		close(fd);
	}
}

TEST_F(kmsg, poll_and_nonblock)
{
	struct pollfd p = {
		.fd = self->r,
		.events = POLLIN | POLLRDNORM | POLLOUT | POLLPRI,
	};
	char m[64], buf[LINE_MAX_];

	ASSERT_EQ(0, lseek(self->r, 0, SEEK_END));
	EXPECT_EQ(0, poll(&p, 1, 0));
	EXPECT_EQ(-EAGAIN, kread(self->r, buf, sizeof(buf)));
	seq_marker(m, sizeof(m), "poll");
	ASSERT_LT(0, kwrite_path(KMSG, m, strlen(m)));
	EXPECT_EQ(1, poll(&p, 1, 0));
	/* As /dev/kmsg: never POLLOUT. */
	EXPECT_EQ(POLLIN | POLLRDNORM, p.revents);
	EXPECT_LT(0, kread(self->r, buf, sizeof(buf)));
	EXPECT_EQ(0, poll(&p, 1, 0));

	if (host_kmsg_usable()) {
		int hr = kmsg_open(HOST_KMSG, O_RDONLY | O_NONBLOCK);

		ASSERT_LE(0, hr);
		p.fd = hr;
		ASSERT_EQ(0, lseek(hr, 0, SEEK_SET));
		/* The host has records: readable, and no POLLOUT there either. */
		EXPECT_EQ(1, poll(&p, 1, 0));
		EXPECT_EQ(0, p.revents & POLLOUT);
		close(hr);
	}
}

static void *write_later(void *arg)
{
	usleep(200000);
	kwrite_path(KMSG, arg, strlen(arg));
	return NULL;
}

TEST_F(kmsg, blocking_read)
{
	char m[64], buf[LINE_MAX_];
	pthread_t t;
	struct krec r;
	int fd, n;

	fd = kmsg_open(KMSG, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, lseek(fd, 0, SEEK_END));
	seq_marker(m, sizeof(m), "block");
	ASSERT_EQ(0, pthread_create(&t, NULL, write_later, m));
	n = kread(fd, buf, sizeof(buf));
	pthread_join(t, NULL);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, kparse(buf, n, &r));
	EXPECT_STREQ(m, r.text);
	close(fd);
}

TEST_F(kmsg, overrun_epipe_once)
{
	struct pollfd p = { .fd = self->r, .events = POLLIN | POLLRDNORM | POLLPRI };
	char line[200], buf[LINE_MAX_];
	long long dropped;
	struct krec r;
	int fd, i, n;

	ASSERT_EQ(0, kmsg_attr_set("host", "size", "65536"));
	ASSERT_EQ(0, lseek(self->r, 0, SEEK_SET));
	fd = kmsg_open(KMSG, O_WRONLY);
	ASSERT_LE(0, fd);
	memset(line, 'o', sizeof(line));
	for (i = 0; i < 600; i++) {
		n = snprintf(line, 16, "ov%06d", i);
		line[n] = 'o';
		ASSERT_EQ(150, kwrite(fd, line, 150));
	}
	close(fd);
	dropped = kmsg_attr("host", "entries_dropped");
	EXPECT_LT(0, dropped);
	ASSERT_EQ(1, poll(&p, 1, 0));
	EXPECT_EQ(POLLIN | POLLRDNORM | POLLERR | POLLPRI, p.revents);
	EXPECT_EQ(-EPIPE, kread(self->r, buf, sizeof(buf)));
	/* Once: then the oldest record left. */
	n = kread(self->r, buf, sizeof(buf));
	ASSERT_LT(0, n);
	ASSERT_EQ(0, kparse(buf, n, &r));
	EXPECT_EQ(0, strncmp(r.text, "ov", 2));
	EXPECT_NE(0, strncmp(r.text, "ov000000", 8));
	ASSERT_EQ(1, poll(&p, 1, 0));
	EXPECT_EQ(POLLIN | POLLRDNORM, p.revents);
}

TEST_F(kmsg, not_in_host_printk)
{
	char m[64];
	struct krec r;
	int hr;

	if (!host_kmsg_usable())
		SKIP(return, "the host's /dev/kmsg is not readable here");
	seq_marker(m, sizeof(m), "private");
	ASSERT_LT(0, kwrite_path(KMSG, m, strlen(m)));
	ASSERT_EQ(0, kfind(self->r, m, &r));
	hr = kmsg_open(HOST_KMSG, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, hr);
	EXPECT_EQ(-ENOENT, kfind(hr, m, &r));
	close(hr);
}

TEST_F(kmsg, ratelimit_per_open)
{
	long long before;
	char m[64], want[96];
	struct krec r;
	int fd, i;

	ASSERT_EQ(0, kmsg_attr_set("host", "devkmsg", "ratelimit"));
	before = kmsg_attr("host", "entries_written");
	fd = kmsg_open(KMSG, O_WRONLY);
	ASSERT_LE(0, fd);
	seq_marker(m, sizeof(m), "rl");
	/* printk's default burst is 10 per 5 s; the rest still "succeed". */
	for (i = 0; i < 15; i++)
		EXPECT_EQ((int)strlen(m), kwrite(fd, m, strlen(m)));
	EXPECT_EQ(before + 10, kmsg_attr("host", "entries_written"));
	close(fd);
	/* The note ratelimit_state_exit() would print, in the cell's kmsg. */
	snprintf(want, sizeof(want), "5 output lines suppressed due to ratelimiting");
	ASSERT_EQ(0, kfind(self->r, want, &r));
	EXPECT_EQ(4, r.prio);

	/* off: writes vanish, opens fail, as printk.devkmsg=off. */
	fd = kmsg_open(KMSG, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kmsg_attr_set("host", "devkmsg", "off"));
	before = kmsg_attr("host", "entries_written");
	EXPECT_EQ(3, kwrite(fd, "off", 3));
	EXPECT_EQ(before, kmsg_attr("host", "entries_written"));
	EXPECT_EQ(-EPERM, kmsg_open(KMSG, O_WRONLY));
	close(fd);
	EXPECT_EQ(-EINVAL, kmsg_attr_set("host", "devkmsg", "maybe"));
	ASSERT_EQ(0, kmsg_attr_set("host", "devkmsg", "on"));
}

/*
 * The note of suppressed lines is written at the last close, which may run
 * in any task: it never allocates the ring's memory. A resize leaves the
 * ring without any; the note is then dropped rather than charged to the
 * closer.
 */
TEST_F(kmsg, note_never_allocates)
{
	long long before;
	char m[64];
	int fd, i;

	ASSERT_EQ(0, kmsg_attr_set("host", "devkmsg", "ratelimit"));
	fd = kmsg_open(KMSG, O_WRONLY);
	ASSERT_LE(0, fd);
	seq_marker(m, sizeof(m), "note");
	for (i = 0; i < 12; i++)
		EXPECT_EQ((int)strlen(m), kwrite(fd, m, strlen(m)));
	/* Emptied, and its memory given back until the next write. */
	ASSERT_EQ(0, kmsg_attr_set("host", "size", KMSG_DEFAULT_SIZE));
	before = kmsg_attr("host", "entries_written");
	close(fd);
	EXPECT_EQ(before, kmsg_attr("host", "entries_written"));
	ASSERT_EQ(0, kmsg_attr_set("host", "devkmsg", "on"));
}

/*
 * Group root is no right to read: the node is root's, but the kernel log
 * needs CAP_SYSLOG (dmesg_restrict=1), as a task of a container without a
 * user namespace that runs with gid 0 and an app's uid must not read it.
 */
TEST_F(kmsg, group_root_cannot_read)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(0, 0, 0) ||
		    setresuid(10002, 10002, 10002))
			_exit(90);
		_exit(kmsg_open(KMSG, O_RDONLY | O_NONBLOCK) == -EPERM ? 0 : 1);
	}
	EXPECT_EQ(0, child_status(pid));
}

TEST_F(kmsg, sysfs_files)
{
	static const char *const files[] = {
		"size", "bytes_written", "entries_dropped", "readers",
		"entries_written", "devkmsg",
	};
	static const int modes[] = { 0600, 0400, 0400, 0400, 0400, 0600 };
	char path[256];
	struct stat st;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), KMSG_ATTR, "host", files[i]);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s", path);
		EXPECT_EQ(modes[i], st.st_mode & 0777) TH_LOG("%s", path);
	}
	EXPECT_EQ(131072, kmsg_attr("host", "size"));
	EXPECT_LE(1, kmsg_attr("host", "readers"));
	EXPECT_EQ(-EINVAL, kmsg_attr_set("host", "size", "1000"));
	EXPECT_EQ(-EINVAL, kmsg_attr_set("host", "size", "32768"));
	EXPECT_EQ(0, kmsg_attr_set("host", "size", "262144"));
	EXPECT_EQ(262144, kmsg_attr("host", "size"));
}

TEST_F(kmsg, no_ioctls)
{
	EXPECT_EQ(-ENOTTY, log_ioctl(self->r, LOGGER_GET_LOG_BUF_SIZE, NULL));
	EXPECT_EQ(-ENOTTY, log_ioctl(self->r, LOGGER_FLUSH_LOG, NULL));
	EXPECT_EQ(-EINVAL, select_cell(self->r, CASK_LOGGER_ALL_CELLS, ""));
	EXPECT_EQ(-ENOENT, select_cell(self->r, 0, "nosuchcell"));
	EXPECT_EQ(0, select_cell(self->r, 0, "host"));
}

/* ------------------------------------------------------------------ */
/* Cells. */

#define A_UID	310000U
#define B_UID	320000U

struct kshared {
	char marker[64];
	int found;		/* kfind()'s answer in the cell */
	int open_err;
	int select_err;
};

FIXTURE(cells) {
	struct container a, b;
	struct kshared *sh;
};

static void kcells_cleanup(struct container *a, struct container *b,
			   struct kshared **sh)
{
	cask_unregister("kmsga");
	cask_unregister("kmsgb");
	container_stop(a);
	container_stop(b);
	if (*sh)
		shared_free(*sh, sizeof(**sh));
	*sh = NULL;
}

FIXTURE_SETUP(cells)
{
	int ret;

	memset(self, 0, sizeof(*self));
	if (kmsg_missing())
		SKIP(return, "%s", kmsg_missing());
	self->sh = shared_alloc(sizeof(*self->sh));
	ASSERT_NE(NULL, self->sh);
	ret = container_start(&self->a, "cask-kmsg-a", A_UID);
	if (!ret)
		ret = container_start(&self->b, "cask-kmsg-b", B_UID);
	if (!ret)
		ret = cask_register("kmsga", self->a.init);
	if (!ret)
		ret = cask_register("kmsgb", self->b.init);
	if (ret)
		kcells_cleanup(&self->a, &self->b, &self->sh);
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(cells)
{
	kcells_cleanup(&self->a, &self->b, &self->sh);
}

static int cell_write(void *arg)
{
	struct kshared *sh = arg;
	char line[96];
	int n = snprintf(line, sizeof(line), "<14>%s\n", sh->marker);

	return kwrite_path(KMSG, line, n) == n ? 0 : 1;
}

/* Look for the marker in the cell's own kmsg; try to select another cell. */
static int cell_read(void *arg)
{
	struct kshared *sh = arg;
	struct krec r;
	int fd;

	fd = kmsg_open(KMSG, O_RDONLY | O_NONBLOCK);
	sh->open_err = fd < 0 ? fd : 0;
	if (fd < 0)
		return 0;
	sh->found = kfind(fd, sh->marker, &r);
	sh->select_err = select_cell(fd, 0, "kmsga");
	close(fd);
	return 0;
}

static void set_marker(struct kshared *sh, const char *what)
{
	seq_marker(sh->marker, sizeof(sh->marker), what);
	sh->found = 1;
	sh->open_err = 1;
	sh->select_err = 1;
}

TEST_F(cells, own_cell_only)
{
	struct kshared *sh = self->sh;
	struct krec r;
	int fd;

	set_marker(sh, "cella");
	ASSERT_EQ(0, container_run(&self->a, cell_write, sh));
	EXPECT_EQ(1, kmsg_attr("kmsga", "entries_written"));

	/* A reads it back: its root has CAP_SYSLOG over its cell. */
	ASSERT_EQ(0, container_run(&self->a, cell_read, sh));
	EXPECT_EQ(0, sh->open_err);
	EXPECT_EQ(0, sh->found);
	EXPECT_EQ(-EPERM, sh->select_err);

	/* B does not see it, nor may it choose A. */
	sh->found = 1;
	ASSERT_EQ(0, container_run(&self->b, cell_read, sh));
	EXPECT_EQ(0, sh->open_err);
	EXPECT_EQ(-ENOENT, sh->found);
	EXPECT_EQ(-EPERM, sh->select_err);

	/* The host's cell has it not; the host selecting A has. */
	fd = kmsg_open(KMSG, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOENT, kfind(fd, sh->marker, &r));
	ASSERT_EQ(0, select_cell(fd, 0, "kmsga"));
	ASSERT_EQ(0, kfind(fd, sh->marker, &r));
	EXPECT_EQ(14, r.prio);
	EXPECT_EQ(0ULL, r.seq);
	ASSERT_EQ(0, select_cell(fd, 0, "kmsgb"));
	EXPECT_EQ(-ENOENT, kfind(fd, sh->marker, &r));
	close(fd);

	/* Nor did it reach the host's printk buffer. */
	fd = kmsg_open(HOST_KMSG, O_RDONLY | O_NONBLOCK);
	if (fd >= 0) {
		EXPECT_EQ(-ENOENT, kfind(fd, sh->marker, &r));
		close(fd);
	}
}

/* Host reader waiting in read() is woken by the selected cell's write. */
TEST_F(cells, host_select_wakes)
{
	struct kshared *sh = self->sh;
	char buf[LINE_MAX_];
	struct krec r;
	pid_t pid;
	int fd, n;

	set_marker(sh, "wake");
	fd = kmsg_open(KMSG, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, select_cell(fd, 0, "kmsgb"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		usleep(200000);
		_exit(container_run(&self->b, cell_write, sh));
	}
	n = kread(fd, buf, sizeof(buf));
	EXPECT_EQ(0, child_status(pid));
	ASSERT_LT(0, n);
	ASSERT_EQ(0, kparse(buf, n, &r));
	EXPECT_STREQ(sh->marker, r.text);
	close(fd);
}

static long ctxt_switches(pid_t pid)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

static int cell_write_many(void *arg)
{
	int fd = kmsg_open(KMSG, O_WRONLY), i;

	(void)arg;
	if (fd < 0)
		return 1;
	for (i = 0; i < 200; i++)
		if (kwrite(fd, "busy", 4) != 4)
			return 2;
	close(fd);
	return 0;
}

/*
 * A host reader that chose cell B sleeps through cell A's writes: host
 * readers share one wait queue, which only the writes of a chosen cell
 * (and of the host's own) wake.
 */
TEST_F(cells, idle_selection_sleeps)
{
	char path[256], buf[LINE_MAX_];
	long before, after;
	pid_t pid;
	int fd;

	snprintf(path, sizeof(path), KMSG_ATTR, "kmsga", "devkmsg");
	ASSERT_EQ(0, write_file(path, "on"));
	fd = kmsg_open(KMSG, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, select_cell(fd, 0, "kmsgb"));
	ASSERT_EQ(0, lseek(fd, 0, SEEK_END));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(kread(fd, buf, sizeof(buf)) > 0 ? 0 : 1);
	usleep(300000);
	before = ctxt_switches(pid);
	ASSERT_LE(0, before);
	ASSERT_EQ(0, container_run(&self->a, cell_write_many, NULL));
	usleep(100000);
	after = ctxt_switches(pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
	EXPECT_GT(before + 20, after)
		TH_LOG("%ld wakeups for 200 records of another cell", after - before);
}

/*
 * A task in an unprivileged user namespace, in the host's IPC namespace:
 * no CAP_SYSLOG over the host cell, so no reading, and so no selecting;
 * not the host cell's root, so no writing either.
 */
static int unpriv_userns(void *arg)
{
	int fd;

	(void)arg;
	if (setresgid(65534, 65534, 65534) || setgroups(0, NULL) ||
	    setresuid(65534, 65534, 65534))
		return 90;
	if (unshare(CLONE_NEWUSER))
		return 91;
	fd = kmsg_open(KMSG, O_RDONLY | O_NONBLOCK);
	if (fd != -EPERM)
		return 92;
	/* Nor writing: the host cell's root only, as the host's 0644 kmsg. */
	fd = kmsg_open(KMSG, O_WRONLY);
	if (fd != -EACCES)
		return 93;
	return 0;
}

TEST_F(cells, unprivileged_userns)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(unpriv_userns(NULL));
	status = child_status(pid);
	if (status == 91)
		SKIP(return, "no unprivileged user namespaces here");
	EXPECT_EQ(0, status);
}

/*
 * Who may write a cell's kmsg: its root and, in a registered container,
 * Android's system group (its /dev/kmsg is 0620 root system); an app's uid
 * may not. arg: the supplementary group, or -1 for none.
 */
static int cell_write_as(void *arg)
{
	long group = (long)arg;
	gid_t g = group;
	int fd;

	if (setgroups(group < 0 ? 0 : 1, &g) || setresgid(10001, 10001, 10001) ||
	    setresuid(10001, 10001, 10001))
		return 90;
	fd = kmsg_open(KMSG, O_WRONLY);
	if (fd < 0)
		return fd == -EACCES ? 1 : 91;
	close(fd);
	return 0;
}

TEST_F(cells, writers)
{
	EXPECT_EQ(1, container_run(&self->a, cell_write_as, (void *)-1L));
	EXPECT_EQ(0, container_run(&self->a, cell_write_as, (void *)1000L));
	/* An app's own group is no key. */
	EXPECT_EQ(1, container_run(&self->a, cell_write_as, (void *)1007L));
}

/* The cell's own knobs: its root may write them, the other cell cannot see them. */
static int cell_sysfs(void *arg)
{
	char path[256];

	(void)arg;
	snprintf(path, sizeof(path), KMSG_ATTR, "kmsga", "devkmsg");
	if (write_file(path, "on"))
		return 1;
	return write_file(path, "ratelimit") ? 2 : 0;
}

TEST_F(cells, sysfs_per_cell)
{
	char path[256];

	EXPECT_EQ(0, container_run(&self->a, cell_sysfs, NULL));
	EXPECT_NE(0, container_run(&self->b, cell_sysfs, NULL));
	snprintf(path, sizeof(path), KMSG_ATTR, "kmsgb", "size");
	EXPECT_EQ(0, write_file(path, "65536"));
	EXPECT_EQ(65536, kmsg_attr("kmsgb", "size"));
	EXPECT_EQ(131072, kmsg_attr("kmsga", "size"));
}

TEST_HARNESS_MAIN
