// SPDX-License-Identifier: GPL-2.0
/*
 * cask_logger from user space (Documentation/logger.rst): the Android
 * logger ABI on /dev/log/{main,events,radio,system,crash}, the per-cell
 * rings and their sysfs files, pid and uid translation for readers in
 * containers, isolation between cells, the host's cell-selecting reader,
 * and concurrent writers and readers.
 *
 * Containers are those of cask_util.h. They share the host's /dev (their
 * mount namespace is a copy), so they open the same device nodes; opening
 * binds the file to the opener's cell.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "cask_log.h"

/*
 * Orders for the functions run in a container and what they found: shared
 * before the containers start (shared_alloc()), so both sides see it.
 */
struct cshared {
	/* in */
	char buffer[16];	/* which log */
	char msg[64];		/* message to write (count > 1: msg-i) */
	int count;		/* entries to write */
	int size;		/* > 0: binary payloads of this size */
	int version;		/* reader's header version */
	uid_t uid;		/* > 0: become this uid (and gid) first */
	gid_t group;		/* > 0: with this one supplementary group */
	pid_t join;		/* host pid whose IPC namespace to join */
	/* out */
	pid_t pid, tid;		/* the writer, as it sees itself */
	pid_t host_pid, host_tid; /* the same, in the host's PID namespace */
	struct timespec before, after; /* around the writes */
	int buf_size;		/* the reader's LOGGER_GET_LOG_BUF_SIZE */
	int nrecs;
	struct rec recs[MAX_RECS];
};

/* Read by the test process only. */
static struct rec host_recs[MAX_RECS];

/*
 * The try_* functions run inside a container (container_run()) and return
 * 0, or the errno of the step that failed (EIO for a short write), for the
 * test to EXPECT; what they read is left in struct cshared. Their
 * arguments are that shared memory or static data, which the container's
 * forks see too.
 */

/*
 * Become uid and gid @uid, with the one supplementary group @group if not
 * 0, else none; 0 or errno.
 */
static int become(uid_t uid, gid_t group)
{
	if (!uid)
		return 0;
	if (setgroups(group ? 1 : 0, &group) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return errno;
	return 0;
}

/* @n (a write's return or -errno) against @want: 0 or an errno. */
static int written(int n, int want)
{
	if (n < 0)
		return -n;
	return n == want ? 0 : EIO;
}

/* Write sh->count entries of sh->msg (or of sh->size binary bytes). */
static int try_write(void *arg)
{
	struct cshared *sh = arg;
	unsigned char bin[MAX_PAYLOAD];
	char msg[96];
	int fd, i, ret;
	ssize_t n;

	ret = become(sh->uid, sh->group);
	if (ret)
		return ret;
	sh->pid = getpid();
	sh->tid = gettid();
	if (host_ids(&sh->host_pid, &sh->host_tid)) {
		sh->host_pid = -1;
		sh->host_tid = -1;
	}
	fd = log_open(sh->buffer, O_WRONLY);
	if (fd < 0)
		return errno;
	clock_gettime(CLOCK_REALTIME, &sh->before);
	for (i = 0; i < sh->count && !ret; i++) {
		if (sh->size) {
			fill_binary(bin, sh->size, i);
			n = write(fd, bin, sh->size);
			/* Longer payloads are cut to the longest. */
			ret = written(n < 0 ? -errno : n,
				      sh->size > MAX_PAYLOAD ? MAX_PAYLOAD : sh->size);
			continue;
		}
		if (sh->count == 1)
			snprintf(msg, sizeof(msg), "%s", sh->msg);
		else
			snprintf(msg, sizeof(msg), "%s-%d", sh->msg, i);
		ret = written(log_write(fd, 4, "cask_test", msg),
			      payload_len("cask_test", msg));
	}
	clock_gettime(CLOCK_REALTIME, &sh->after);
	close(fd);
	return ret;
}

/* Read sh->buffer (header version sh->version) as it is now. */
static int try_read_log(void *arg)
{
	struct cshared *sh = arg;
	int fd, ret;

	sh->nrecs = 0;
	ret = become(sh->uid, sh->group);
	if (ret)
		return ret;
	fd = log_open(sh->buffer, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return errno;
	sh->buf_size = log_ioctl(fd, LOGGER_GET_LOG_BUF_SIZE, NULL);
	ret = sh->version != 1 ? set_version(fd, sh->version) : 0;
	if (!ret)
		ret = read_recs(fd, sh->version, sh->recs, MAX_RECS);
	close(fd);
	if (ret < 0)
		return -ret;
	sh->nrecs = ret;
	return 0;
}

/* As uid sh->uid, write sh->msg, then read everything. */
static int try_app(void *arg)
{
	struct cshared *sh = arg;
	int ret;

	sh->count = 1;
	ret = try_write(sh);
	if (ret)
		return ret;
	/* Already that uid; capabilities went with uid 0. */
	sh->uid = 0;
	return try_read_log(sh);
}

/*
 * Not in a container: a host process that joins only the IPC namespace of
 * sh->join and writes sh->msg there.
 */
static int try_write_from_ipc_ns(void *arg)
{
	struct cshared *sh = arg;
	char path[64];
	int ns, w, ret;

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", sh->join);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns < 0 || setns(ns, CLONE_NEWIPC))
		return errno;
	close(ns);
	sh->pid = getpid();
	w = log_open(sh->buffer, O_WRONLY);
	if (w < 0)
		return errno;
	ret = written(log_write(w, 4, "outsider", sh->msg), payload_len("outsider", sh->msg));
	close(w);
	return ret;
}

/* As uid sh->uid, LOGGER_FLUSH_LOG on a write-opened sh->buffer. */
static int try_flush(void *arg)
{
	struct cshared *sh = arg;
	int fd, ret;

	ret = become(sh->uid, sh->group);
	if (ret)
		return ret;
	fd = log_open(sh->buffer, O_WRONLY);
	if (fd < 0)
		return errno;
	ret = log_ioctl(fd, LOGGER_FLUSH_LOG, NULL);
	close(fd);
	return -ret;
}

struct file_write {
	const char *path;
	const char *value;
};

static int try_write_file(void *arg)
{
	const struct file_write *fw = arg;

	return -write_file(fw->path, fw->value);
}

/* The number in file @arg, if 0-254; else 255. */
static int number_in(void *arg)
{
	char buf[32], *end;
	long v;

	if (read_file(arg, buf, sizeof(buf)))
		return 255;
	v = strtol(buf, &end, 10);
	return end == buf || *end || v < 0 || v > 254 ? 255 : v;
}

struct select_req {
	unsigned int flags;
	const char *cell;
};

/* CASK_LOGGER_SELECT on a reader of main. */
static int try_select(void *arg)
{
	const struct select_req *req = arg;
	int fd, ret;

	fd = log_open("main", O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return errno;
	ret = select_cell(fd, req->flags, req->cell);
	close(fd);
	return -ret;
}

/* LOGGER_SET_VERSION to *@arg on a reader of main. */
static int try_set_version(void *arg)
{
	int fd, ret;

	fd = log_open("main", O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return errno;
	ret = set_version(fd, *(const int *)arg);
	close(fd);
	return -ret;
}

/* The version a reader of main has after asking for *@arg; 255 on error. */
static int version_after(void *arg)
{
	int fd, ret;

	fd = log_open("main", O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return 255;
	set_version(fd, *(const int *)arg);
	ret = log_ioctl(fd, LOGGER_GET_VERSION, NULL);
	close(fd);
	return ret < 0 ? 255 : ret;
}

/* ------------------------------------------------------------------ */
/* The host cell: the Android ABI. */

FIXTURE(logger) {
	int w, r;
};

FIXTURE_SETUP(logger)
{
	self->w = -1;
	self->r = -1;
	if (logger_missing())
		SKIP(return, "%s", logger_missing());
	ASSERT_EQ(0, host_reset("main"));
	self->w = log_open("main", O_WRONLY);
	ASSERT_LE(0, self->w);
	self->r = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, self->r);
}

FIXTURE_TEARDOWN(logger)
{
	if (self->w >= 0)
		close(self->w);
	if (self->r >= 0)
		close(self->r);
	host_restore("main");
}

TEST_F(logger, write_read_v1)
{
	char msg[64], payload[128], buf[LOGGER_ENTRY_MAX_LEN];
	struct user_logger_entry_compat *e = (void *)buf;
	struct timespec before, after, ts;
	int len;

	snprintf(msg, sizeof(msg), "v1 writev %d", getpid());
	len = make_payload(payload, sizeof(payload), 4, "cask_test", msg);
	clock_gettime(CLOCK_REALTIME, &before);
	ASSERT_EQ(len, log_write(self->w, 4, "cask_test", msg));
	clock_gettime(CLOCK_REALTIME, &after);

	ASSERT_EQ(V1_HDR + len, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(len, e->len);
	EXPECT_EQ(0, e->__pad);
	EXPECT_EQ(getpid(), e->pid);
	EXPECT_EQ(gettid(), e->tid);
	ts.tv_sec = e->sec;
	ts.tv_nsec = e->nsec;
	EXPECT_TRUE(ts_between(&ts, &before, &after))
		TH_LOG("entry time %d.%09d, write between %ld.%09ld and %ld.%09ld",
		       e->sec, e->nsec, before.tv_sec, before.tv_nsec,
		       after.tv_sec, after.tv_nsec);
	EXPECT_EQ(0, memcmp(payload, e->msg, len));

	/* The same with one write(). */
	snprintf(msg, sizeof(msg), "v1 write %d", getpid());
	len = make_payload(payload, sizeof(payload), 6, "other", msg);
	ASSERT_EQ(len, write(self->w, payload, len));
	ASSERT_EQ(V1_HDR + len, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(len, e->len);
	EXPECT_EQ(getpid(), e->pid);
	EXPECT_EQ(0, memcmp(payload, e->msg, len));

	EXPECT_EQ(-EAGAIN, log_read(self->r, buf, sizeof(buf)));
}

struct thread_write {
	int fd, ret;
	pid_t tid;
	const char *msg;
};

static void *thread_writer(void *arg)
{
	struct thread_write *t = arg;

	t->tid = gettid();
	t->ret = log_write(t->fd, 3, "thread", t->msg);
	return NULL;
}

TEST_F(logger, thread_ids)
{
	struct thread_write t = { .fd = self->w, .msg = "from a thread" };
	struct rec *rec = &host_recs[0];
	pthread_t th;

	ASSERT_EQ(0, pthread_create(&th, NULL, thread_writer, &t));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(payload_len("thread", t.msg), t.ret);
	ASSERT_NE(getpid(), t.tid);
	ASSERT_EQ(1, read_recs(self->r, 1, host_recs, MAX_RECS));
	EXPECT_EQ(getpid(), rec->pid);
	EXPECT_EQ(t.tid, rec->tid);
	EXPECT_EQ(3, rec->prio);
	EXPECT_STREQ("thread", rec->tag);
	EXPECT_STREQ(t.msg, rec->msg);
}

TEST_F(logger, version2)
{
	char msg[64], payload[128], buf[LOGGER_ENTRY_MAX_LEN];
	struct logger_entry *e = (void *)buf;
	struct timespec before, after, ts;
	int len, rw;

	EXPECT_EQ(1, log_ioctl(self->r, LOGGER_GET_VERSION, NULL));
	snprintf(msg, sizeof(msg), "v2 %d", getpid());
	len = make_payload(payload, sizeof(payload), 5, "cask_v2", msg);
	clock_gettime(CLOCK_REALTIME, &before);
	ASSERT_EQ(len, log_write(self->w, 5, "cask_v2", msg));
	clock_gettime(CLOCK_REALTIME, &after);
	EXPECT_EQ(V1_HDR + len, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));

	ASSERT_EQ(0, set_version(self->r, 2));
	EXPECT_EQ(2, log_ioctl(self->r, LOGGER_GET_VERSION, NULL));
	EXPECT_EQ(V2_HDR + len, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	ASSERT_EQ(V2_HDR + len, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(len, e->len);
	EXPECT_EQ(24, e->hdr_size);
	EXPECT_EQ(getpid(), e->pid);
	EXPECT_EQ(gettid(), e->tid);
	EXPECT_EQ(geteuid(), e->euid);
	ts.tv_sec = e->sec;
	ts.tv_nsec = e->nsec;
	EXPECT_TRUE(ts_between(&ts, &before, &after));
	EXPECT_EQ(0, memcmp(payload, e->msg, len));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));

	/* Back to 1; and a read-write file is a reader too. */
	EXPECT_EQ(0, set_version(self->r, 1));
	EXPECT_EQ(1, log_ioctl(self->r, LOGGER_GET_VERSION, NULL));
	rw = log_open("main", O_RDWR | O_NONBLOCK);
	ASSERT_LE(0, rw);
	EXPECT_EQ(0, set_version(rw, 2));
	EXPECT_EQ(2, log_ioctl(rw, LOGGER_GET_VERSION, NULL));
	EXPECT_EQ(V2_HDR + len, log_read(rw, buf, sizeof(buf)));
	EXPECT_EQ(24, e->hdr_size);
	close(rw);
}

TEST_F(logger, lengths)
{
	int l1 = payload_len("len", "first"), l2 = payload_len("len", "second entry");
	char buf[LOGGER_ENTRY_MAX_LEN];
	int r2;

	EXPECT_EQ(LOG_DEFAULT_SIZE, log_ioctl(self->r, LOGGER_GET_LOG_BUF_SIZE, NULL));
	EXPECT_EQ(LOG_DEFAULT_SIZE, log_ioctl(self->w, LOGGER_GET_LOG_BUF_SIZE, NULL));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));

	ASSERT_EQ(l1, log_write(self->w, 4, "len", "first"));
	ASSERT_EQ(l2, log_write(self->w, 4, "len", "second entry"));
	EXPECT_EQ(l1 + l2 + 2 * STORED_HDR, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));
	EXPECT_EQ(V1_HDR + l1, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));

	ASSERT_EQ(V1_HDR + l1, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(l2 + STORED_HDR, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));
	EXPECT_EQ(V1_HDR + l2, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));

	/* Another reader has its own position, at the oldest entry. */
	r2 = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, r2);
	EXPECT_EQ(l1 + l2 + 2 * STORED_HDR, log_ioctl(r2, LOGGER_GET_LOG_LEN, NULL));

	ASSERT_EQ(V1_HDR + l2, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	EXPECT_EQ(l1 + l2 + 2 * STORED_HDR, log_ioctl(r2, LOGGER_GET_LOG_LEN, NULL));
	close(r2);
}

TEST_F(logger, short_buffer)
{
	int len = payload_len("short", "one byte too few");
	char buf[LOGGER_ENTRY_MAX_LEN];

	ASSERT_EQ(len, log_write(self->w, 4, "short", "one byte too few"));
	EXPECT_EQ(-EINVAL, log_read(self->r, buf, V1_HDR + len - 1));
	EXPECT_EQ(-EINVAL, log_read(self->r, buf, 1));
	/* Still there, whole. */
	EXPECT_EQ(V1_HDR + len, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	EXPECT_EQ(len + STORED_HDR, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));
	ASSERT_EQ(V1_HDR + len, log_read(self->r, buf, V1_HDR + len));
	EXPECT_STREQ("one byte too few", buf + V1_HDR + 1 + strlen("short") + 1);

	/* What suffices for a version 1 header does not for version 2. */
	ASSERT_EQ(len, log_write(self->w, 4, "short", "one byte too few"));
	ASSERT_EQ(0, set_version(self->r, 2));
	EXPECT_EQ(-EINVAL, log_read(self->r, buf, V2_HDR + len - 1));
	EXPECT_EQ(V2_HDR + len, log_read(self->r, buf, V2_HDR + len));
	EXPECT_EQ(-EAGAIN, log_read(self->r, buf, sizeof(buf)));
}

static void on_alarm(int sig)
{
}

/* From blocking reader *@arg, the entry "wake up" of tag "block": 0 or errno. */
static int try_read_wake_up(void *arg)
{
	int len = payload_len("block", "wake up"), n;
	char buf[LOGGER_ENTRY_MAX_LEN];

	alarm(20);
	n = log_read(*(int *)arg, buf, sizeof(buf));
	if (n < 0)
		return -n;
	/* A positive errno: the exit status. */
	return n == V1_HDR + len &&
	       !strcmp(buf + V1_HDR + 1 + strlen("block") + 1, "wake up") ? 0 : EBADMSG;
}

/*
 * A new reader reads the one entry there (*@arg bytes), then sleeps for the
 * next until SIGALRM: 0 or the errno of the failing step, EINTR expected.
 */
static int try_read_interrupted(void *arg)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	char buf[LOGGER_ENTRY_MAX_LEN];
	int r, n;

	sigaction(SIGALRM, &sa, NULL);
	r = log_open("main", O_RDONLY);
	if (r < 0)
		return errno;
	n = log_read(r, buf, sizeof(buf));
	if (n != *(int *)arg)
		return n < 0 ? -n : EBADMSG;
	alarm(1);
	n = log_read(r, buf, sizeof(buf));
	return n < 0 ? -n : 0;
}

/*
 * Whether task @tid sleeps in a read() of its file descriptor @fd: its
 * state, and the system call /proc/TID/syscall shows it in (the number,
 * then the arguments in hex; "running" for a task on a CPU).
 */
static bool asleep_in_read(pid_t tid, int fd)
{
	char path[64], buf[256], want[64];
	int f, n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return false;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (!strstr(buf, ") S "))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return false;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	snprintf(want, sizeof(want), "%d 0x%x ", (int)SYS_read, fd);
	return !strncmp(buf, want, strlen(want));
}

/*
 * Up to 10 s for @tid to go to sleep in read() of @fd: what shows that a
 * read blocks, where a sleep and "not returned yet" would show only that
 * it had not got there.
 */
static bool wait_asleep_in_read(pid_t tid, int fd)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (asleep_in_read(tid, fd))
			return true;
		usleep(10000);
	}
	return false;
}

TEST_F(logger, blocking_read)
{
	int len = payload_len("block", "wake up"), r, n;
	char buf[LOGGER_ENTRY_MAX_LEN];
	pid_t pid;

	EXPECT_EQ(-EAGAIN, log_read(self->r, buf, sizeof(buf)));

	/* A reader blocked on an empty ring is woken by another's write. */
	r = log_open("main", O_RDONLY);
	ASSERT_LE(0, r);
	pid = start_child(try_read_wake_up, &r);
	ASSERT_LT(0, pid);
	EXPECT_TRUE(wait_asleep_in_read(pid, r));
	EXPECT_EQ(0, waitpid(pid, NULL, WNOHANG));
	ASSERT_EQ(len, log_write(self->w, 4, "block", "wake up"));
	EXPECT_EQ(0, wait_child(pid, 10000));
	close(r);

	/* The sleep is interruptible. */
	n = V1_HDR + len;
	EXPECT_EQ(EINTR, wait_child(start_child(try_read_interrupted, &n), 10000));
}

/* In 200 ms, an entry on main: 0 or errno. */
static int try_write_later(void *arg)
{
	int w = log_open("main", O_WRONLY), ret;

	if (w < 0)
		return errno;
	usleep(200000);
	ret = written(log_write(w, 4, "poll", "wake"), payload_len("poll", "wake"));
	close(w);
	return ret;
}

TEST_F(logger, poll)
{
	struct pollfd p = { .fd = self->r, .events = POLLIN | POLLOUT };
	char buf[LOGGER_ENTRY_MAX_LEN];
	long long start;
	pid_t pid;

	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_EQ(POLLOUT, p.revents & (POLLIN | POLLOUT | POLLERR | POLLHUP));
	p.events = POLLIN;
	EXPECT_EQ(0, poll(&p, 1, 50));
	/* Writable for writers too. */
	p.fd = self->w;
	p.events = POLLOUT;
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_EQ(POLLOUT, p.revents & (POLLOUT | POLLERR | POLLHUP));
	p.fd = self->r;

	ASSERT_LT(0, log_write(self->w, 4, "poll", "readable"));
	p.events = POLLIN | POLLOUT;
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_EQ(POLLIN | POLLOUT, p.revents & (POLLIN | POLLOUT | POLLERR | POLLHUP));
	ASSERT_LT(0, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_EQ(POLLOUT, p.revents & (POLLIN | POLLOUT | POLLERR | POLLHUP));

	/* A poll for input is woken by another process's write. */
	pid = start_child(try_write_later, NULL);
	ASSERT_LT(0, pid);
	p.events = POLLIN;
	start = now_ms();
	EXPECT_EQ(1, poll(&p, 1, 10000));
	EXPECT_EQ(POLLIN, p.revents & (POLLIN | POLLERR | POLLHUP));
	EXPECT_GT(9000, now_ms() - start);
	EXPECT_EQ(0, wait_child(pid, 10000));
	EXPECT_LT(0, log_read(self->r, buf, sizeof(buf)));
}

TEST_F(logger, not_seekable)
{
	ASSERT_LT(0, log_write(self->w, 4, "seek", "x"));
	errno = 0;
	EXPECT_EQ(-1, lseek(self->r, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
	errno = 0;
	EXPECT_EQ(-1, lseek(self->r, 0, SEEK_CUR));
	EXPECT_EQ(ESPIPE, errno);
	errno = 0;
	EXPECT_EQ(-1, lseek(self->w, 0, SEEK_END));
	EXPECT_EQ(ESPIPE, errno);
}

TEST_F(logger, payload_limits)
{
	static unsigned char big[5000], buf[LOGGER_ENTRY_MAX_LEN];
	struct logger_entry *e = (void *)buf;
	long long bytes0 = logger_attr("host", "main", "bytes_written");
	struct iovec iov[3] = {
		{ .iov_base = big, .iov_len = 1 },
		{ .iov_base = big + 1, .iov_len = 1000 },
		{ .iov_base = big + 1001, .iov_len = 3999 },
	};
	int i;

	ASSERT_LE(0, bytes0);
	for (i = 0; i < (int)sizeof(big); i++)
		big[i] = (unsigned char)(i * 7 + 1);
	ASSERT_EQ(0, set_version(self->r, 2));

	/* The largest payload, whole. */
	ASSERT_EQ(MAX_PAYLOAD, write(self->w, big, MAX_PAYLOAD));
	EXPECT_EQ(V2_HDR + MAX_PAYLOAD, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	ASSERT_EQ(V2_HDR + MAX_PAYLOAD, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(MAX_PAYLOAD, e->len);
	EXPECT_EQ(0, memcmp(big, e->msg, MAX_PAYLOAD));

	/* Longer ones are cut to it: one byte more, much more, writev. */
	ASSERT_EQ(MAX_PAYLOAD, write(self->w, big, MAX_PAYLOAD + 1));
	ASSERT_EQ(MAX_PAYLOAD, write(self->w, big, sizeof(big)));
	ASSERT_EQ(MAX_PAYLOAD, writev(self->w, iov, 3));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(V2_HDR + MAX_PAYLOAD, log_read(self->r, buf, sizeof(buf)));
		EXPECT_EQ(MAX_PAYLOAD, e->len);
		EXPECT_EQ(0, memcmp(big, e->msg, MAX_PAYLOAD));
	}
	EXPECT_EQ(-EAGAIN, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(bytes0 + 4 * MAX_PAYLOAD, logger_attr("host", "main", "bytes_written"));
}

TEST_F(logger, empty_write)
{
	long long bytes0 = logger_attr("host", "main", "bytes_written");
	struct iovec iov[2] = {
		{ .iov_base = "", .iov_len = 0 },
		{ .iov_base = "", .iov_len = 0 },
	};
	char buf[LOGGER_ENTRY_MAX_LEN];

	ASSERT_LE(0, bytes0);
	EXPECT_EQ(0, write(self->w, buf, 0));
	EXPECT_EQ(0, writev(self->w, iov, 2));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	EXPECT_EQ(-EAGAIN, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(bytes0, logger_attr("host", "main", "bytes_written"));
}

TEST_F(logger, bad_pointer)
{
	long long bytes0 = logger_attr("host", "main", "bytes_written");
	char buf[LOGGER_ENTRY_MAX_LEN], *bad;
	struct iovec iov[2];
	int len;

	ASSERT_LE(0, bytes0);
	bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bad);
	errno = 0;
	EXPECT_EQ(-1, write(self->w, bad, 100));
	EXPECT_EQ(EFAULT, errno);
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_write, self->w, NULL, 10));
	EXPECT_EQ(EFAULT, errno);
	/* A good first part does not make it in without the rest. */
	iov[0].iov_base = "\4tag";
	iov[0].iov_len = 5;
	iov[1].iov_base = bad;
	iov[1].iov_len = 10;
	errno = 0;
	EXPECT_EQ(-1, writev(self->w, iov, 2));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));
	EXPECT_EQ(-EAGAIN, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(bytes0, logger_attr("host", "main", "bytes_written"));

	/* The ring still works: only the good entry is there. */
	len = payload_len("fault", "after");
	ASSERT_EQ(len, log_write(self->w, 4, "fault", "after"));
	EXPECT_EQ(V1_HDR + len, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(-EAGAIN, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(bytes0 + len, logger_attr("host", "main", "bytes_written"));
	munmap(bad, 4096);
}

TEST_F(logger, readers_independent)
{
	char buf[LOGGER_ENTRY_MAX_LEN], msg[16];
	struct rec rec;
	int r2, r3, i, n;

	for (i = 0; i < 3; i++) {
		snprintf(msg, sizeof(msg), "e%d", i);
		ASSERT_LT(0, log_write(self->w, 4, "ind", msg));
	}
	/* r reads e0; r2 opened after starts at e0 too. */
	n = log_read(self->r, buf, sizeof(buf));
	ASSERT_EQ(0, parse_rec(buf, n, 1, &rec));
	EXPECT_STREQ("e0", rec.msg);
	r2 = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, r2);
	for (i = 0; i < 2; i++) {
		snprintf(msg, sizeof(msg), "e%d", i);
		n = log_read(r2, buf, sizeof(buf));
		ASSERT_EQ(0, parse_rec(buf, n, 1, &rec));
		EXPECT_STREQ(msg, rec.msg);
	}
	for (i = 1; i < 3; i++) {
		snprintf(msg, sizeof(msg), "e%d", i);
		n = log_read(self->r, buf, sizeof(buf));
		ASSERT_EQ(0, parse_rec(buf, n, 1, &rec));
		EXPECT_STREQ(msg, rec.msg);
	}
	EXPECT_EQ(-EAGAIN, log_read(self->r, buf, sizeof(buf)));
	/* Even after r has read everything, a new reader starts at e0. */
	r3 = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, r3);
	EXPECT_EQ(3, read_recs(r3, 1, host_recs, MAX_RECS));
	EXPECT_STREQ("e0", host_recs[0].msg);
	EXPECT_STREQ("e2", host_recs[2].msg);
	n = log_read(r2, buf, sizeof(buf));
	ASSERT_EQ(0, parse_rec(buf, n, 1, &rec));
	EXPECT_STREQ("e2", rec.msg);
	EXPECT_EQ(-EAGAIN, log_read(r2, buf, sizeof(buf)));
	close(r2);
	close(r3);
}

TEST_F(logger, ioctl_errors)
{
	static const unsigned long unknown[] = {
		_IO(__LOGGERIO, 0), _IO(__LOGGERIO, 7), _IO(__LOGGERIO, 0x7f),
		_IO(__LOGGERIO, 0x81), _IOR(__LOGGERIO, 1, int),
		_IOW(__LOGGERIO, 6, int), _IO('T', 1),
	};
	int v = 2, rw;
	size_t i;
	void *bad;

	/* A write-only file is no reader. */
	EXPECT_EQ(-EBADF, log_ioctl(self->w, LOGGER_GET_LOG_LEN, NULL));
	EXPECT_EQ(-EBADF, log_ioctl(self->w, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	EXPECT_EQ(-EBADF, log_ioctl(self->w, LOGGER_GET_VERSION, NULL));
	EXPECT_EQ(-EBADF, log_ioctl(self->w, LOGGER_SET_VERSION, &v));
	EXPECT_EQ(-EBADF, select_cell(self->w, 0, "host"));
	/* A read-only file cannot flush. */
	EXPECT_EQ(-EBADF, log_ioctl(self->r, LOGGER_FLUSH_LOG, NULL));
	rw = log_open("main", O_RDWR);
	ASSERT_LE(0, rw);
	EXPECT_EQ(0, log_ioctl(rw, LOGGER_FLUSH_LOG, NULL));
	EXPECT_EQ(LOG_DEFAULT_SIZE, log_ioctl(rw, LOGGER_GET_LOG_BUF_SIZE, NULL));
	close(rw);

	/* Versions. */
	bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bad);
	EXPECT_EQ(-EINVAL, set_version(self->r, 3));
	EXPECT_EQ(-EINVAL, set_version(self->r, 0));
	EXPECT_EQ(-EINVAL, set_version(self->r, -1));
	EXPECT_EQ(-EINVAL, set_version(self->r, 0x10001));
	EXPECT_EQ(-EFAULT, log_ioctl(self->r, LOGGER_SET_VERSION, NULL));
	EXPECT_EQ(-EFAULT, log_ioctl(self->r, LOGGER_SET_VERSION, bad));
	EXPECT_EQ(1, log_ioctl(self->r, LOGGER_GET_VERSION, NULL));
	munmap(bad, 4096);

	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		EXPECT_EQ(-EINVAL, log_ioctl(self->r, unknown[i], &v))
			TH_LOG("ioctl %#lx", unknown[i]);
		EXPECT_EQ(-EINVAL, log_ioctl(self->w, unknown[i], &v))
			TH_LOG("ioctl %#lx on a write-only file", unknown[i]);
	}
}

TEST_F(logger, flush)
{
	long long bytes0 = logger_attr("host", "main", "bytes_written");
	long long dropped0 = logger_attr("host", "main", "entries_dropped");
	char buf[LOGGER_ENTRY_MAX_LEN];
	int len = payload_len("flush", "x"), r2, r3;

	ASSERT_LE(0, bytes0);
	ASSERT_LE(0, dropped0);
	ASSERT_EQ(len, log_write(self->w, 4, "flush", "x"));
	ASSERT_EQ(len, log_write(self->w, 4, "flush", "x"));
	ASSERT_EQ(V1_HDR + len, log_read(self->r, buf, sizeof(buf)));
	r2 = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, r2);

	ASSERT_EQ(0, log_ioctl(self->w, LOGGER_FLUSH_LOG, NULL));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	EXPECT_EQ(0, log_ioctl(r2, LOGGER_GET_LOG_LEN, NULL));
	EXPECT_EQ(-EAGAIN, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(-EAGAIN, log_read(r2, buf, sizeof(buf)));
	r3 = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, r3);
	EXPECT_EQ(-EAGAIN, log_read(r3, buf, sizeof(buf)));

	/* Every reader gets what comes next. */
	ASSERT_EQ(len, log_write(self->w, 4, "flush", "y"));
	EXPECT_EQ(V1_HDR + len, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(V1_HDR + len, log_read(r2, buf, sizeof(buf)));
	EXPECT_EQ(V1_HDR + len, log_read(r3, buf, sizeof(buf)));
	EXPECT_EQ(-EAGAIN, log_read(r3, buf, sizeof(buf)));
	/* Flushing neither unwrites nor drops. */
	EXPECT_EQ(bytes0 + 3 * len, logger_attr("host", "main", "bytes_written"));
	EXPECT_EQ(dropped0, logger_attr("host", "main", "entries_dropped"));
	close(r2);
	close(r3);
}

/*
 * As uid and gid 65534 with supplementary groups @groups and no
 * capabilities, LOGGER_FLUSH_LOG on a write-opened main: 0 or the errno.
 */
static int flush_as_nobody(const gid_t *groups, int ngroups)
{
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setgroups(ngroups, groups) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		fd = log_open("main", O_WRONLY);
		if (fd < 0)
			_exit(101);
		_exit(-log_ioctl(fd, LOGGER_FLUSH_LOG, NULL));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* A test group for the device node (etc/group of the guest calls it "log"). */
#define LOG_GID		1007

/*
 * Clearing a log takes what reading all of it takes in Android's logger:
 * the node's group or CAP_SYSLOG; a file opened for writing, which every
 * app has, is not enough.
 */
TEST_F(logger, flush_needs_privilege)
{
	int len = payload_len("flush", "keep me");
	gid_t groups[] = { LOG_GID };
	struct stat st;

	ASSERT_EQ(len, log_write(self->w, 4, "flush", "keep me"));
	EXPECT_EQ(EPERM, flush_as_nobody(NULL, 0));
	/* Still there. */
	EXPECT_EQ(V1_HDR + len, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	EXPECT_EQ(len + STORED_HDR, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));

	/* A member of the node's group may. */
	ASSERT_EQ(0, stat(LOG_DIR "main", &st));
	ASSERT_EQ(0, chown(LOG_DIR "main", -1, LOG_GID));
	EXPECT_EQ(EPERM, flush_as_nobody(NULL, 0));
	EXPECT_EQ(0, flush_as_nobody(groups, 1));
	EXPECT_EQ(0, chown(LOG_DIR "main", -1, st.st_gid));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));

	/*
	 * In the host cell Android's AID_LOG is just a host gid: only the
	 * node's group counts there.
	 */
	ASSERT_EQ(0, chown(LOG_DIR "main", -1, LOG_GID + 4242));
	EXPECT_EQ(EPERM, flush_as_nobody(groups, 1));
	EXPECT_EQ(0, chown(LOG_DIR "main", -1, st.st_gid));

	/* And root, with CAP_SYSLOG. */
	ASSERT_EQ(len, log_write(self->w, 4, "flush", "keep me"));
	EXPECT_EQ(0, log_ioctl(self->w, LOGGER_FLUSH_LOG, NULL));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));
}

/*
 * An auto cell (here: root's unshare of the IPC namespace, as a host
 * service's PrivateIPC= makes one) is no Android container: gid 1007 is
 * whatever host group has that number there, and only the node's group or
 * CAP_SYSLOG reads everything or clears. Child exit: 0, or the step that
 * went wrong.
 */
static int aid_log_in_auto_cell(const char *msg)
{
	gid_t group = LOG_GID;
	struct rec recs[4];
	int w, r, n;

	if (unshare(CLONE_NEWIPC))
		return 100;
	w = log_open("main", O_WRONLY);
	if (w < 0)
		return 101;
	if (log_write(w, 4, "auto", msg) != payload_len("auto", msg))
		return 102;
	close(w);
	if (setgroups(1, &group) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return 103;
	r = log_open("main", O_RDONLY | O_NONBLOCK);
	if (r < 0)
		return 104;
	n = read_recs(r, 1, recs, 4);
	if (n != 0)
		return 105;	/* saw root's entry */
	close(r);
	w = log_open("main", O_WRONLY);
	if (w < 0)
		return 106;
	if (log_ioctl(w, LOGGER_FLUSH_LOG, NULL) != -EPERM)
		return 107;
	return 0;
}

TEST_F(logger, aid_log_not_in_auto_cell)
{
	char buf[8], msg[64];
	struct stat st;
	int status;
	pid_t pid;

	if (read_file(CASK "/auto_cells", buf, sizeof(buf)) || strcmp(buf, "1"))
		SKIP(return, "auto cells are off");
	snprintf(msg, sizeof(msg), "auto-root-%d", getpid());
	/* The node's group must not be 1007 itself. */
	ASSERT_EQ(0, stat(LOG_DIR "main", &st));
	ASSERT_EQ(0, chown(LOG_DIR "main", -1, LOG_GID + 4242));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(aid_log_in_auto_cell(msg));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, chown(LOG_DIR "main", -1, st.st_gid));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * The host is the initial IPC and PID namespaces together: a container
 * that shares only the host's IPC namespace (docker --ipc=host) has
 * CAP_SYSLOG as root but must neither select another cell nor read its
 * files. It is in the host cell, whose files it may read.
 */
static int try_as_ipc_host_container(void *arg)
{
	const char *cell = arg;
	char path[256], buf[64];
	int fd, ret;
	pid_t pid;

	if (unshare(CLONE_NEWPID))
		return 100;
	pid = fork();
	if (pid < 0)
		return 101;
	if (pid) {
		int status;

		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			return 102;
		return WEXITSTATUS(status);
	}
	snprintf(path, sizeof(path), CASK "/cells/%s/id", cell);
	if (read_file(path, buf, sizeof(buf)) != -EACCES)
		_exit(103);
	if (read_file(CASK "/cells/host/id", buf, sizeof(buf)))
		_exit(104);
	fd = log_open("main", O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		_exit(105);
	ret = select_cell(fd, 0, cell);
	if (ret != -EPERM)
		_exit(106);
	ret = select_cell(fd, CASK_LOGGER_ALL_CELLS, "");
	_exit(ret == -EPERM ? 0 : 107);
}

TEST_F(logger, ipc_host_container_is_not_host)
{
	char cmd[64];
	pid_t task, pid;
	int go;

	task = start_ipc_task(&go);
	ASSERT_LT(0, task);
	usleep(100000);
	snprintf(cmd, sizeof(cmd), "ipchost-test %d\n", task);
	ASSERT_EQ(0, write_file(CASK "/register", cmd));
	pid = start_child(try_as_ipc_host_container, "ipchost-test");
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, wait_child(pid, 30000));
	/* The real host still may. */
	EXPECT_EQ(0, select_cell(self->r, 0, "ipchost-test"));
	EXPECT_EQ(0, write_file(CASK "/unregister", "ipchost-test\n"));
	close(go);
	waitpid(task, NULL, 0);
}

/* CASK_LOGGER_SELECT with @pad in byte @at of __pad. */
static int select_padded(int fd, unsigned int flags, const char *cell, int at, char pad)
{
	struct cask_logger_select sel;

	memset(&sel, 0, sizeof(sel));
	sel.flags = flags;
	snprintf(sel.cell, sizeof(sel.cell), "%s", cell);
	sel.__pad[at] = pad;
	return log_ioctl(fd, CASK_LOGGER_SELECT, &sel);
}

/* __pad is reserved: non-zero is refused, so that it can gain a meaning. */
TEST_F(logger, select_pad)
{
	int len = payload_len("pad", "host entry");
	size_t i;

	ASSERT_EQ(len, log_write(self->w, 4, "pad", "host entry"));
	for (i = 0; i < sizeof(((struct cask_logger_select *)0)->__pad); i++) {
		EXPECT_EQ(-EINVAL, select_padded(self->r, 0, "host", i, 1)) TH_LOG("byte %zu", i);
		EXPECT_EQ(-EINVAL, select_padded(self->r, CASK_LOGGER_ALL_CELLS, "", i, '\x80'))
			TH_LOG("byte %zu", i);
	}
	/* Nothing changed: still one ring, at its first entry. */
	EXPECT_EQ(LOG_DEFAULT_SIZE, log_ioctl(self->r, LOGGER_GET_LOG_BUF_SIZE, NULL));
	EXPECT_EQ(V1_HDR + len, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	EXPECT_EQ(0, select_padded(self->r, CASK_LOGGER_ALL_CELLS, "", 0, 0));
	EXPECT_EQ(-EINVAL, log_ioctl(self->r, LOGGER_GET_LOG_BUF_SIZE, NULL));
	EXPECT_EQ(0, select_padded(self->r, 0, "host", 2, 0));
	EXPECT_EQ(V1_HDR + len, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
}

TEST_F(logger, cell_header)
{
	char msg[64], buf[LOGGER_ENTRY_MAX_LEN];
	struct cask_logger_entry *e = (void *)buf;
	int len;

	snprintf(msg, sizeof(msg), "cellhdr %d", getpid());
	len = payload_len("cell", msg);
	ASSERT_EQ(len, log_write(self->w, 4, "cell", msg));
	ASSERT_EQ(0, set_version(self->r, CASK_LOGGER_VERSION_CELL));
	EXPECT_EQ(CASK_LOGGER_VERSION_CELL, log_ioctl(self->r, LOGGER_GET_VERSION, NULL));
	EXPECT_EQ(CELL_HDR + len, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	EXPECT_EQ(-EINVAL, log_read(self->r, buf, CELL_HDR + len - 1));
	ASSERT_EQ(CELL_HDR + len, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(len, e->len);
	EXPECT_EQ(CELL_HDR, e->hdr_size);
	EXPECT_EQ(getpid(), e->pid);
	EXPECT_EQ(gettid(), e->tid);
	EXPECT_EQ(0, e->euid);
	EXPECT_EQ(0, e->cell_id);
	EXPECT_STREQ("host", e->cell);
	EXPECT_STREQ(msg, e->msg + 1 + strlen("cell") + 1);
}

TEST_F(logger, select_errors)
{
	int len = payload_len("sel", "still host"), rw, n, i, all_len;
	char buf[LOGGER_ENTRY_MAX_LEN];
	long long sum = 0;

	ASSERT_EQ(len, log_write(self->w, 4, "sel", "still host"));
	EXPECT_EQ(-ENOENT, select_cell(self->r, 0, "nosuchcell"));
	EXPECT_EQ(-EINVAL, select_cell(self->r, 2, "host"));
	EXPECT_EQ(-EINVAL, select_cell(self->r, CASK_LOGGER_ALL_CELLS | 2, ""));
	EXPECT_EQ(-EINVAL, select_cell(self->r, 0xffffffff, "host"));
	/* Failed selects changed nothing. */
	EXPECT_EQ(V1_HDR + len, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	/* The host cell by name: from its oldest entry. */
	ASSERT_EQ(V1_HDR + len, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(0, select_cell(self->r, 0, "host"));
	EXPECT_EQ(V1_HDR + len, log_read(self->r, buf, sizeof(buf)));
	EXPECT_EQ(LOG_DEFAULT_SIZE, log_ioctl(self->r, LOGGER_GET_LOG_BUF_SIZE, NULL));

	/* All cells: no single ring to size or flush; the sum of the lengths. */
	rw = log_open("main", O_RDWR | O_NONBLOCK);
	ASSERT_LE(0, rw);
	ASSERT_EQ(0, select_cell(rw, CASK_LOGGER_ALL_CELLS, ""));
	EXPECT_EQ(-EINVAL, log_ioctl(rw, LOGGER_GET_LOG_BUF_SIZE, NULL));
	EXPECT_EQ(-EINVAL, log_ioctl(rw, LOGGER_FLUSH_LOG, NULL));
	all_len = log_ioctl(rw, LOGGER_GET_LOG_LEN, NULL);
	n = read_recs(rw, 1, host_recs, MAX_RECS);
	ASSERT_LE(1, n);
	for (i = 0; i < n; i++)
		sum += host_recs[i].len + STORED_HDR;
	EXPECT_EQ(sum, all_len);
	EXPECT_LE(0, find_msg(host_recs, n, "still host"));
	EXPECT_EQ(0, log_ioctl(rw, LOGGER_GET_LOG_LEN, NULL));
	close(rw);
	/* The flush was refused: the entry is still in the host's ring. */
	rw = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, rw);
	EXPECT_EQ(V1_HDR + len, log_read(rw, buf, sizeof(buf)));
	close(rw);
}

/* Entry @seq of the overwrite test: 1000 bytes. */
static int ow_payload(char *buf, int seq)
{
	char msg[1000 - 4];

	memset(msg, 'o', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	snprintf(msg, sizeof(msg), "ow-%05d", seq);
	msg[strlen(msg)] = ':';
	return make_payload(buf, 1000, 4, "ow", msg);
}

static int ow_seq(const struct rec *rec)
{
	int seq;

	if (rec->len != 1000 || sscanf(rec->msg, "ow-%05d:", &seq) != 1)
		return -1;
	return seq;
}

TEST_F(logger, overwrite)
{
	const int total = 600;
	long long dropped0, bytes0, readers0, used;
	char buf[LOGGER_ENTRY_MAX_LEN];
	int lapped, fresh, n, i, first;
	struct rec rec;

	dropped0 = logger_attr("host", "main", "entries_dropped");
	bytes0 = logger_attr("host", "main", "bytes_written");
	readers0 = logger_attr("host", "main", "readers");
	ASSERT_LE(0, dropped0);
	ASSERT_LE(0, bytes0);
	ASSERT_LE(1, readers0);		/* self->r */
	lapped = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, lapped);
	EXPECT_EQ(readers0 + 1, logger_attr("host", "main", "readers"));

	/* The lapped reader has read entry 0 when the flood comes. */
	ASSERT_EQ(1000, write(self->w, buf, ow_payload(buf, 0)));
	n = log_read(lapped, buf, sizeof(buf));
	ASSERT_EQ(0, parse_rec(buf, n, 1, &rec));
	ASSERT_EQ(0, ow_seq(&rec));
	for (i = 1; i < total; i++)
		ASSERT_EQ(1000, write(self->w, buf, ow_payload(buf, i)));

	/* A new reader: the newest entries that fit, in order. */
	fresh = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fresh);
	EXPECT_EQ(readers0 + 2, logger_attr("host", "main", "readers"));
	used = log_ioctl(fresh, LOGGER_GET_LOG_LEN, NULL);
	n = read_recs(fresh, 1, host_recs, MAX_RECS);
	ASSERT_LT(0, n);
	EXPECT_EQ(n * (1000 + STORED_HDR), used);
	EXPECT_GE(LOG_DEFAULT_SIZE, used);
	EXPECT_LT(LOG_DEFAULT_SIZE - 2 * (1000 + STORED_HDR), used);
	first = ow_seq(&host_recs[0]);
	EXPECT_EQ(total - n, first);
	for (i = 0; i < n; i++)
		ASSERT_EQ(first + i, ow_seq(&host_recs[i]));

	/* The lapped reader goes on at the oldest remaining entry. */
	for (i = first; i < total; i++) {
		n = log_read(lapped, buf, sizeof(buf));
		ASSERT_EQ(0, parse_rec(buf, n, 1, &rec));
		ASSERT_EQ(i, ow_seq(&rec));
	}
	EXPECT_EQ(-EAGAIN, log_read(lapped, buf, sizeof(buf)));

	EXPECT_EQ(dropped0 + first, logger_attr("host", "main", "entries_dropped"));
	EXPECT_EQ(bytes0 + total * 1000, logger_attr("host", "main", "bytes_written"));
	close(fresh);
	EXPECT_EQ(readers0 + 1, logger_attr("host", "main", "readers"));
	close(lapped);
	EXPECT_EQ(readers0, logger_attr("host", "main", "readers"));
}

TEST_F(logger, readers_count)
{
	long long readers0 = logger_attr("host", "main", "readers");
	int w2, rw;

	ASSERT_LE(1, readers0);
	w2 = log_open("main", O_WRONLY);
	ASSERT_LE(0, w2);
	EXPECT_EQ(readers0, logger_attr("host", "main", "readers"));
	rw = log_open("main", O_RDWR);
	ASSERT_LE(0, rw);
	EXPECT_EQ(readers0 + 1, logger_attr("host", "main", "readers"));
	close(self->r);
	self->r = -1;
	EXPECT_EQ(readers0, logger_attr("host", "main", "readers"));
	close(rw);
	close(w2);
	EXPECT_EQ(readers0 - 1, logger_attr("host", "main", "readers"));
}

TEST_F(logger, sysfs_size)
{
	static const char *const bad[] = {
		"1000\n", "100000\n", "65537\n", "32768\n", "33554432\n",
		"abc\n", "0\n", "-65536\n", "65536abc\n",
	};
	char buf[LOGGER_ENTRY_MAX_LEN], payload[1000];
	long long used;
	int r2, i, n, first;
	size_t j;

	EXPECT_EQ(LOG_DEFAULT_SIZE, logger_attr("host", "main", "size"));
	for (i = 0; i < 3; i++)
		ASSERT_LT(0, log_write(self->w, 4, "size", "before"));

	ASSERT_EQ(0, logger_set_size("host", "main", "65536\n"));
	EXPECT_EQ(65536, logger_attr("host", "main", "size"));
	r2 = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, r2);
	EXPECT_EQ(65536, log_ioctl(r2, LOGGER_GET_LOG_BUF_SIZE, NULL));
	EXPECT_EQ(0, log_ioctl(r2, LOGGER_GET_LOG_LEN, NULL));
	EXPECT_EQ(-EAGAIN, log_read(r2, buf, sizeof(buf)));
	/* Emptied for the reader opened before, too. */
	EXPECT_EQ(65536, log_ioctl(self->r, LOGGER_GET_LOG_BUF_SIZE, NULL));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_LOG_LEN, NULL));
	EXPECT_EQ(0, log_ioctl(self->r, LOGGER_GET_NEXT_ENTRY_LEN, NULL));
	EXPECT_EQ(-EAGAIN, log_read(self->r, buf, sizeof(buf)));

	/* Refused values change nothing, the ring keeps its entry. */
	ASSERT_LT(0, log_write(self->w, 4, "size", "kept"));
	for (j = 0; j < ARRAY_SIZE(bad); j++) {
		const char *value = bad[j];

		EXPECT_EQ(-EINVAL, logger_set_size("host", "main", value))
			TH_LOG("size %s", value);
	}
	EXPECT_EQ(65536, logger_attr("host", "main", "size"));
	EXPECT_EQ(1, read_recs(r2, 1, host_recs, MAX_RECS));
	EXPECT_STREQ("kept", host_recs[0].msg);

	/* The smaller ring wraps at its size. */
	for (i = 0; i < 100; i++) {
		n = ow_payload(payload, i);
		ASSERT_EQ(1000, write(self->w, payload, n));
	}
	close(r2);
	r2 = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, r2);
	used = log_ioctl(r2, LOGGER_GET_LOG_LEN, NULL);
	n = read_recs(r2, 1, host_recs, MAX_RECS);
	ASSERT_LT(0, n);
	EXPECT_EQ(n * (1000 + STORED_HDR), used);
	EXPECT_GE(65536, used);
	EXPECT_LT(65536 - 2 * (1000 + STORED_HDR), used);
	first = ow_seq(&host_recs[0]);
	EXPECT_EQ(100 - n, first);
	EXPECT_EQ(99, ow_seq(&host_recs[n - 1]));
	close(r2);

	/* The limits are allowed. */
	EXPECT_EQ(0, logger_set_size("host", "main", "16777216\n"));
	EXPECT_EQ(16777216, logger_attr("host", "main", "size"));
	EXPECT_EQ(16777216, log_ioctl(self->w, LOGGER_GET_LOG_BUF_SIZE, NULL));
	EXPECT_EQ(0, logger_set_size("host", "main", "65536\n"));
	EXPECT_EQ(0, logger_set_size("host", "main", LOG_DEFAULT_SIZE_STR));
	EXPECT_EQ(LOG_DEFAULT_SIZE, logger_attr("host", "main", "size"));
	EXPECT_EQ(LOG_DEFAULT_SIZE, log_ioctl(self->r, LOGGER_GET_LOG_BUF_SIZE, NULL));
}

/* Concurrent writers and readers. */
#define NWRITERS	8
#define NENTRIES	2000
#define NREADERS	2
#define CONC_SIZE	4194304
#define CONC_WAIT_MS	45000

struct conc_reader {
	int seen[NWRITERS];
	int last[NWRITERS];
	int torn, order, lost, foreign, ids, timeout, error;
};

struct conc {
	pid_t writer[NWRITERS];
	long long bytes[NWRITERS];
	struct conc_reader rd[NREADERS];
};

static uint32_t fnv1a(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

/*
 * [4]["conc\0"][u32 writer][u32 seq][u32 n][n bytes][u32 fnv1a of all
 * before it]: 22 + n bytes.
 */
static int conc_payload(unsigned char *buf, uint32_t writer, uint32_t seq)
{
	uint32_t n = (seq * 7 + writer) % 41, sum, i;

	buf[0] = 4;
	memcpy(buf + 1, "conc", 5);
	memcpy(buf + 6, &writer, 4);
	memcpy(buf + 10, &seq, 4);
	memcpy(buf + 14, &n, 4);
	for (i = 0; i < n; i++)
		buf[18 + i] = (unsigned char)(writer * 31 + seq + i);
	sum = fnv1a(buf, 18 + n);
	memcpy(buf + 18 + n, &sum, 4);
	return 22 + n;
}

static int conc_writer(struct conc *c, int id, int go)
{
	unsigned char buf[64];
	int fd, i, len;
	char x;

	__atomic_store_n(&c->writer[id], getpid(), __ATOMIC_SEQ_CST);
	fd = log_open("main", O_WRONLY);
	if (fd < 0 || read(go, &x, 1) != 0)
		return 1;
	for (i = 0; i < NENTRIES; i++) {
		len = conc_payload(buf, id, i);
		if (write(fd, buf, len) != len)
			return 2;
		c->bytes[id] += len;
	}
	return 0;
}

/* Check one entry read by a concurrent reader; count the writers done. */
static void conc_check(struct conc *c, struct conc_reader *rd, const unsigned char *buf,
		       int n, int *done)
{
	const struct user_logger_entry_compat *e = (const void *)buf;
	const unsigned char *p = buf + V1_HDR;
	uint32_t w, seq, fill, sum;

	if (n < V1_HDR + 22 || n != V1_HDR + e->len) {
		rd->torn++;
		return;
	}
	if (p[0] != 4 || memcmp(p + 1, "conc", 5)) {
		rd->foreign++;
		return;
	}
	memcpy(&w, p + 6, 4);
	memcpy(&seq, p + 10, 4);
	memcpy(&fill, p + 14, 4);
	if (w >= NWRITERS || fill > 40 || e->len != 22 + fill) {
		rd->torn++;
		return;
	}
	memcpy(&sum, p + 18 + fill, 4);
	if (sum != fnv1a(p, 18 + fill)) {
		rd->torn++;
		return;
	}
	if (e->pid != __atomic_load_n(&c->writer[w], __ATOMIC_SEQ_CST) || e->tid != e->pid)
		rd->ids++;
	if ((int)seq <= rd->last[w])
		rd->order++;
	else if ((int)seq != rd->last[w] + 1)
		rd->lost++;
	rd->last[w] = seq;
	rd->seen[w]++;
	if (seq == NENTRIES - 1)
		(*done)++;
}

static int conc_reader(struct conc *c, struct conc_reader *rd, int fd)
{
	unsigned long long buf[LOGGER_ENTRY_MAX_LEN / 8];
	long long end = now_ms() + CONC_WAIT_MS;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int done = 0, n, i;

	for (i = 0; i < NWRITERS; i++)
		rd->last[i] = -1;
	while (done < NWRITERS) {
		n = log_read(fd, buf, sizeof(buf));
		if (n == -EAGAIN) {
			if (now_ms() > end) {
				rd->timeout = 1;
				break;
			}
			poll(&p, 1, 200);
			continue;
		}
		if (n < 0) {
			rd->error = -n;
			break;
		}
		conc_check(c, rd, (const unsigned char *)buf, n, &done);
	}
	return 0;
}

/*
 * The first uses of cask in a new container come at once (Android's init
 * starts logd and services together): every one of them must get the
 * container's cell, none EEXIST while another is still making it.
 */
#define FIRST_THREADS	16
#define FIRST_ROUNDS	20

struct first_open {
	pthread_barrier_t *go;
	int err;
};

static void *first_open_thread(void *arg)
{
	struct first_open *fo = arg;
	int fd;

	pthread_barrier_wait(fo->go);
	fd = log_open("main", O_WRONLY);
	fo->err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* In a new IPC namespace (a new auto cell): the errno of the first failure. */
static int try_first_opens(void *arg)
{
	struct first_open fo[FIRST_THREADS];
	pthread_t th[FIRST_THREADS];
	pthread_barrier_t go;
	int i, err = 0;

	if (unshare(CLONE_NEWIPC))
		return errno;
	if (pthread_barrier_init(&go, NULL, FIRST_THREADS))
		return 255;
	for (i = 0; i < FIRST_THREADS; i++) {
		fo[i].go = &go;
		fo[i].err = 0;
		if (pthread_create(&th[i], NULL, first_open_thread, &fo[i]))
			return 255;
	}
	for (i = 0; i < FIRST_THREADS; i++) {
		pthread_join(th[i], NULL);
		if (fo[i].err && !err)
			err = fo[i].err;
	}
	pthread_barrier_destroy(&go);
	return err;
}

TEST_F_TIMEOUT(logger, concurrent_first_open, 120)
{
	int i, rc = 0;

	for (i = 0; i < FIRST_ROUNDS && !rc; i++) {
		pid_t pid = start_child(try_first_opens, NULL);

		ASSERT_LT(0, pid);
		rc = wait_child(pid, 30000);
		if (rc)
			TH_LOG("round %d: a first open failed: %d", i, rc);
	}
	EXPECT_EQ(0, rc);
}

TEST_F_TIMEOUT(logger, concurrent, 90)
{
	pid_t readers[NREADERS], writers[NWRITERS];
	long long dropped0, bytes0, total = 0;
	int go[2], rfd[NREADERS], i, w, r;
	struct conc *c;

	ASSERT_EQ(0, logger_set_size("host", "main", "4194304\n"));
	EXPECT_EQ(CONC_SIZE, log_ioctl(self->w, LOGGER_GET_LOG_BUF_SIZE, NULL));
	dropped0 = logger_attr("host", "main", "entries_dropped");
	bytes0 = logger_attr("host", "main", "bytes_written");
	ASSERT_LE(0, dropped0);
	ASSERT_LE(0, bytes0);
	c = shared_alloc(sizeof(*c));
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, pipe(go));

	/* Readers open before anything is written: each sees everything. */
	for (i = 0; i < NREADERS; i++) {
		rfd[i] = log_open("main", O_RDONLY | O_NONBLOCK);
		ASSERT_LE(0, rfd[i]);
		readers[i] = fork();
		ASSERT_LE(0, readers[i]);
		if (readers[i] == 0) {
			close(go[1]);
			_exit(conc_reader(c, &c->rd[i], rfd[i]));
		}
	}
	for (w = 0; w < NWRITERS; w++) {
		writers[w] = fork();
		ASSERT_LE(0, writers[w]);
		if (writers[w] == 0) {
			close(go[1]);
			_exit(conc_writer(c, w, go[0]));
		}
	}
	/* All writers start at once. */
	close(go[0]);
	close(go[1]);
	for (w = 0; w < NWRITERS; w++) {
		EXPECT_EQ(0, wait_child(writers[w], CONC_WAIT_MS + 5000))
			TH_LOG("writer %d", w);
		EXPECT_EQ(writers[w], c->writer[w]);
		total += c->bytes[w];
	}
	for (i = 0; i < NREADERS; i++) {
		struct conc_reader *rd = &c->rd[i];

		EXPECT_EQ(0, wait_child(readers[i], CONC_WAIT_MS + 10000));
		EXPECT_EQ(0, rd->timeout) TH_LOG("reader %d", i);
		EXPECT_EQ(0, rd->error) TH_LOG("reader %d", i);
		EXPECT_EQ(0, rd->torn) TH_LOG("reader %d", i);
		EXPECT_EQ(0, rd->foreign) TH_LOG("reader %d", i);
		EXPECT_EQ(0, rd->ids) TH_LOG("reader %d", i);
		EXPECT_EQ(0, rd->order) TH_LOG("reader %d", i);
		EXPECT_EQ(0, rd->lost) TH_LOG("reader %d", i);
		for (w = 0; w < NWRITERS; w++) {
			EXPECT_EQ(NENTRIES, rd->seen[w]) TH_LOG("reader %d writer %d", i, w);
			EXPECT_EQ(NENTRIES - 1, rd->last[w]) TH_LOG("reader %d writer %d", i, w);
		}
		close(rfd[i]);
	}
	EXPECT_EQ(dropped0, logger_attr("host", "main", "entries_dropped"));
	EXPECT_EQ(bytes0 + total, logger_attr("host", "main", "bytes_written"));
	/* All of it is still there. */
	r = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, r);
	EXPECT_EQ(total + NWRITERS * NENTRIES * STORED_HDR,
		  log_ioctl(r, LOGGER_GET_LOG_LEN, NULL));
	close(r);
	shared_free(c, sizeof(*c));
}

/* ------------------------------------------------------------------ */
/* The five buffers. */

FIXTURE(buffers) {
	int dummy;
};

FIXTURE_VARIANT(buffers) {
	const char *name;
	bool binary;		/* events: [u32 tag][binary payload] */
};

FIXTURE_VARIANT_ADD(buffers, main) { .name = "main" };
FIXTURE_VARIANT_ADD(buffers, events) { .name = "events", .binary = true };
FIXTURE_VARIANT_ADD(buffers, radio) { .name = "radio" };
FIXTURE_VARIANT_ADD(buffers, system) { .name = "system" };
FIXTURE_VARIANT_ADD(buffers, crash) { .name = "crash" };

static const char *const all_buffers[] = { "main", "events", "radio", "system", "crash" };

FIXTURE_SETUP(buffers)
{
	size_t i;

	if (logger_missing())
		SKIP(return, "%s", logger_missing());
	for (i = 0; i < ARRAY_SIZE(all_buffers); i++) {
		const char *name = all_buffers[i];

		ASSERT_EQ(0, host_reset(name)) TH_LOG("%s", name);
	}
}

FIXTURE_TEARDOWN(buffers)
{
}

TEST_F(buffers, roundtrip)
{
	unsigned char payload[300], buf[LOGGER_ENTRY_MAX_LEN];
	struct logger_entry *e = (void *)buf;
	uint32_t tag = 0x00c0ffee;
	int w, r, other, len, i;
	size_t j;

	if (variant->binary) {
		memcpy(payload, &tag, 4);
		for (i = 4; i < (int)sizeof(payload); i++)
			payload[i] = (unsigned char)(i * 37);	/* NULs and 0xff too */
		len = sizeof(payload);
	} else {
		len = make_payload((char *)payload, sizeof(payload), 4, variant->name,
				   "to one buffer only");
	}
	w = log_open(variant->name, O_WRONLY);
	ASSERT_LE(0, w);
	r = log_open(variant->name, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, r);
	EXPECT_EQ(LOG_DEFAULT_SIZE, log_ioctl(r, LOGGER_GET_LOG_BUF_SIZE, NULL));
	EXPECT_EQ(LOG_DEFAULT_SIZE, logger_attr("host", variant->name, "size"));
	ASSERT_EQ(0, set_version(r, 2));
	ASSERT_EQ(len, write(w, payload, len));
	ASSERT_EQ(V2_HDR + len, log_read(r, buf, sizeof(buf)));
	EXPECT_EQ(len, e->len);
	EXPECT_EQ(getpid(), e->pid);
	EXPECT_EQ(0, memcmp(payload, e->msg, len));
	EXPECT_EQ(-EAGAIN, log_read(r, buf, sizeof(buf)));

	/* The other buffers did not get it. */
	for (j = 0; j < ARRAY_SIZE(all_buffers); j++) {
		if (!strcmp(all_buffers[j], variant->name))
			continue;
		other = log_open(all_buffers[j], O_RDONLY | O_NONBLOCK);
		ASSERT_LE(0, other);
		EXPECT_EQ(-EAGAIN, log_read(other, buf, sizeof(buf))) TH_LOG("%s", all_buffers[j]);
		close(other);
	}
	close(r);
	close(w);
}

/* ------------------------------------------------------------------ */
/* Two containers, registered as cells loga and logb. */

#define A_UID	100000U
#define B_UID	200000U

FIXTURE(cells) {
	struct container a, b;
	struct cshared *sh;
};

static void cells_cleanup(struct container *a, struct container *b,
			  struct cshared **sh)
{
	cask_unregister("loga");
	cask_unregister("logb");
	container_stop(a);
	container_stop(b);
	shared_free(*sh, sizeof(**sh));
	*sh = NULL;
	host_restore("main");
}

FIXTURE_SETUP(cells)
{
	int ret;

	memset(self, 0, sizeof(*self));
	if (logger_missing())
		SKIP(return, "%s", logger_missing());
	ASSERT_EQ(0, host_reset("main"));
	/* Shared before the containers fork, so they see it. */
	self->sh = shared_alloc(sizeof(*self->sh));
	ASSERT_NE(NULL, self->sh);
	ret = container_start(&self->a, "cask-log-a", A_UID);
	if (!ret)
		ret = container_start(&self->b, "cask-log-b", B_UID);
	if (!ret)
		ret = cask_register("loga", self->a.init);
	if (!ret)
		ret = cask_register("logb", self->b.init);
	if (ret)
		cells_cleanup(&self->a, &self->b, &self->sh);
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(cells)
{
	cells_cleanup(&self->a, &self->b, &self->sh);
}

/* Orders for the next container_run(). */
static struct cshared *order(struct cshared *sh, const char *msg, int count, int version)
{
	snprintf(sh->buffer, sizeof(sh->buffer), "main");
	snprintf(sh->msg, sizeof(sh->msg), "%s", msg);
	sh->count = count;
	sh->size = 0;
	sh->version = version;
	sh->uid = 0;
	sh->group = 0;
	sh->join = 0;
	sh->nrecs = 0;
	sh->buf_size = 0;
	return sh;
}

TEST_F(cells, pid_uid_translation)
{
	struct cshared *sh = self->sh;
	pid_t pid, tid, host_pid, host_tid;
	struct rec *rec;
	char msg[64];
	int i, n;

	snprintf(msg, sizeof(msg), "xlate-%d", getpid());
	ASSERT_EQ(0, container_run(&self->a, try_write, order(sh, msg, 1, 2)));
	pid = sh->pid;
	tid = sh->tid;
	host_pid = sh->host_pid;
	host_tid = sh->host_tid;
	ASSERT_LT(0, host_pid) TH_LOG("no host pid from /proc/thread-self");
	/* The container numbers its own processes. */
	EXPECT_NE(host_pid, pid);
	EXPECT_EQ(pid, tid);
	EXPECT_EQ(host_pid, host_tid);

	/* A reader in the container: the container's view. */
	ASSERT_EQ(0, container_run(&self->a, try_read_log, order(sh, msg, 1, 2)));
	i = find_msg(sh->recs, sh->nrecs, msg);
	ASSERT_LE(0, i);
	rec = &sh->recs[i];
	EXPECT_EQ(pid, rec->pid);
	EXPECT_EQ(tid, rec->tid);
	EXPECT_EQ(0, rec->euid);
	EXPECT_EQ(V2_HDR, rec->hdr_size);

	/* The host reading that cell: the host's view. */
	n = host_read_cell("loga", "main", 2, host_recs);
	ASSERT_LE(0, n);
	i = find_msg(host_recs, n, msg);
	ASSERT_LE(0, i);
	EXPECT_EQ(host_pid, host_recs[i].pid);
	EXPECT_EQ(host_tid, host_recs[i].tid);
	EXPECT_EQ(A_UID, host_recs[i].euid);
}

TEST_F(cells, invisible_writer)
{
	struct cshared *sh = self->sh;
	char msg[64];
	int i, n;
	pid_t pid;

	/* A host process that joins only A's IPC namespace writes to A's cell. */
	snprintf(msg, sizeof(msg), "outsider-%d", getpid());
	order(sh, msg, 1, 2)->join = self->a.init;
	ASSERT_EQ(0, wait_child(start_child(try_write_from_ipc_ns, sh), 10000));
	pid = sh->pid;

	/* A does not see its pid, nor its uid. */
	ASSERT_EQ(0, container_run(&self->a, try_read_log, order(sh, msg, 1, 2)));
	i = find_msg(sh->recs, sh->nrecs, msg);
	ASSERT_LE(0, i);
	EXPECT_EQ(0, sh->recs[i].pid);
	EXPECT_EQ(0, sh->recs[i].tid);
	EXPECT_EQ(65534, sh->recs[i].euid);

	/* The host does. */
	n = host_read_cell("loga", "main", 2, host_recs);
	ASSERT_LE(0, n);
	i = find_msg(host_recs, n, msg);
	ASSERT_LE(0, i);
	EXPECT_EQ(pid, host_recs[i].pid);
	EXPECT_EQ(pid, host_recs[i].tid);
	EXPECT_EQ(0, host_recs[i].euid);
	/* It is not in the host's own ring. */
	n = host_read_cell("host", "main", 1, host_recs);
	ASSERT_LE(0, n);
	EXPECT_EQ(-1, find_msg(host_recs, n, msg));
}

TEST_F(cells, isolation_read)
{
	struct cshared *sh = self->sh;
	char amsg[64], hmsg[64];
	int w, r, n;

	snprintf(amsg, sizeof(amsg), "iso-a-%d", getpid());
	snprintf(hmsg, sizeof(hmsg), "iso-host-%d", getpid());
	ASSERT_EQ(0, container_run(&self->a, try_write, order(sh, amsg, 1, 1)));
	w = log_open("main", O_WRONLY);
	ASSERT_LE(0, w);
	ASSERT_LT(0, log_write(w, 4, "iso", hmsg));
	close(w);

	/* B's ring is empty. */
	ASSERT_EQ(0, container_run(&self->b, try_read_log, order(sh, amsg, 1, 2)));
	EXPECT_EQ(0, sh->nrecs);
	/* A has its entry and only that. */
	ASSERT_EQ(0, container_run(&self->a, try_read_log, order(sh, amsg, 1, 2)));
	ASSERT_EQ(1, sh->nrecs);
	EXPECT_STREQ(amsg, sh->recs[0].msg);
	EXPECT_EQ(-1, find_msg(sh->recs, sh->nrecs, hmsg));
	/* The host's own reader has the host's entry, not A's. */
	r = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, r);
	n = read_recs(r, 1, host_recs, MAX_RECS);
	close(r);
	ASSERT_EQ(1, n);
	EXPECT_STREQ(hmsg, host_recs[0].msg);
}

TEST_F_TIMEOUT(cells, flood, 60)
{
	const int k = 40, flood = 10 * LOG_DEFAULT_SIZE / (MAX_PAYLOAD + STORED_HDR) + 1;
	struct cshared *sh = self->sh;
	long long b_bytes = 0;
	char bmsg[64], msg[96];
	int i, n, seq;

	snprintf(bmsg, sizeof(bmsg), "flood-b-%d", getpid());
	ASSERT_EQ(0, container_run(&self->b, try_write, order(sh, bmsg, k, 1)));
	for (i = 0; i < k; i++) {
		snprintf(msg, sizeof(msg), "%s-%d", bmsg, i);
		b_bytes += payload_len("cask_test", msg);
	}
	EXPECT_EQ(b_bytes, logger_attr("logb", "main", "bytes_written"));

	/* A writes ten times its ring. */
	order(sh, "", flood, 1);
	sh->size = MAX_PAYLOAD;
	ASSERT_EQ(0, container_run(&self->a, try_write, sh));
	EXPECT_EQ((long long)flood * MAX_PAYLOAD, logger_attr("loga", "main", "bytes_written"));
	n = host_read_cell("loga", "main", 1, host_recs);
	ASSERT_LT(0, n);
	EXPECT_GT(flood / 5, n);
	EXPECT_EQ(flood - n, logger_attr("loga", "main", "entries_dropped"));
	for (i = 0; i < n; i++) {
		memcpy(&seq, host_recs[i].raw + 5, sizeof(seq));
		ASSERT_EQ(flood - n + i, seq);
		ASSERT_EQ(MAX_PAYLOAD, host_recs[i].len);
	}

	/* B lost nothing. */
	ASSERT_EQ(0, container_run(&self->b, try_read_log, order(sh, bmsg, k, 1)));
	ASSERT_EQ(k, sh->nrecs);
	for (i = 0; i < k; i++) {
		snprintf(msg, sizeof(msg), "%s-%d", bmsg, i);
		EXPECT_STREQ(msg, sh->recs[i].msg);
	}
	EXPECT_EQ(0, logger_attr("logb", "main", "entries_dropped"));
	EXPECT_EQ(b_bytes, logger_attr("logb", "main", "bytes_written"));
}

TEST_F(cells, flush_is_per_cell)
{
	struct cshared *sh = self->sh;
	char msg[64];
	int w, i, n;

	ASSERT_EQ(0, container_run(&self->a, try_write, order(sh, "fl-a", 3, 1)));
	ASSERT_EQ(0, container_run(&self->b, try_write, order(sh, "fl-b", 3, 1)));
	w = log_open("main", O_WRONLY);
	ASSERT_LE(0, w);
	for (i = 0; i < 3; i++) {
		snprintf(msg, sizeof(msg), "fl-host-%d", i);
		ASSERT_LT(0, log_write(w, 4, "cask_test", msg));
	}
	close(w);

	EXPECT_EQ(0, container_run(&self->a, try_flush, order(sh, "", 0, 1)));

	ASSERT_EQ(0, container_run(&self->a, try_read_log, order(sh, "", 0, 1)));
	EXPECT_EQ(0, sh->nrecs);
	ASSERT_EQ(0, container_run(&self->b, try_read_log, order(sh, "", 0, 1)));
	ASSERT_EQ(3, sh->nrecs);
	for (i = 0; i < 3; i++) {
		snprintf(msg, sizeof(msg), "fl-b-%d", i);
		EXPECT_STREQ(msg, sh->recs[i].msg);
	}
	n = host_read_cell("host", "main", 1, host_recs);
	ASSERT_EQ(3, n);
	for (i = 0; i < 3; i++) {
		snprintf(msg, sizeof(msg), "fl-host-%d", i);
		EXPECT_STREQ(msg, host_recs[i].msg);
	}
	EXPECT_EQ(0, host_read_cell("loga", "main", 1, host_recs));
}

TEST_F(cells, app_uid_sees_own)
{
	struct cshared *sh = self->sh;
	char root_msg[64], app_msg[64];
	int i, n;

	snprintf(root_msg, sizeof(root_msg), "by-root-%d", getpid());
	snprintf(app_msg, sizeof(app_msg), "by-app-%d", getpid());
	ASSERT_EQ(0, container_run(&self->a, try_write, order(sh, root_msg, 1, 2)));

	/* uid 1000 without CAP_SYSLOG: its own entries only. */
	order(sh, app_msg, 1, 2);
	sh->uid = 1000;
	ASSERT_EQ(0, container_run(&self->a, try_app, sh));
	ASSERT_EQ(1, sh->nrecs);
	EXPECT_STREQ(app_msg, sh->recs[0].msg);
	EXPECT_EQ(1000, sh->recs[0].euid);

	/* The container's root sees both. */
	ASSERT_EQ(0, container_run(&self->a, try_read_log, order(sh, "", 0, 2)));
	ASSERT_EQ(2, sh->nrecs);
	EXPECT_STREQ(root_msg, sh->recs[0].msg);
	EXPECT_EQ(0, sh->recs[0].euid);
	EXPECT_STREQ(app_msg, sh->recs[1].msg);
	EXPECT_EQ(1000, sh->recs[1].euid);

	/* And the host, with host uids. */
	n = host_read_cell("loga", "main", 2, host_recs);
	ASSERT_EQ(2, n);
	i = find_msg(host_recs, n, app_msg);
	ASSERT_LE(0, i);
	EXPECT_EQ(A_UID + 1000, host_recs[i].euid);
	i = find_msg(host_recs, n, root_msg);
	ASSERT_LE(0, i);
	EXPECT_EQ(A_UID, host_recs[i].euid);
}

/*
 * In a container Android's log readers are in AID_LOG (1007) of the
 * container's user namespace, not in the group the host gave the node
 * (here 1007 maps to host gid A_UID + 1007): that is the log group of the
 * cell, for reading everything and for clearing. It reaches that cell only.
 */
TEST_F(cells, aid_log_is_log_group)
{
	struct cshared *sh = self->sh;
	char root_msg[64], app_msg[64];

	snprintf(root_msg, sizeof(root_msg), "aid-root-%d", getpid());
	snprintf(app_msg, sizeof(app_msg), "aid-app-%d", getpid());
	ASSERT_EQ(0, container_run(&self->a, try_write, order(sh, root_msg, 1, 2)));
	ASSERT_EQ(0, container_run(&self->b, try_write, order(sh, "aid-in-b", 1, 2)));

	/* uid 1000 in group 1007 sees root's entry and its own. */
	order(sh, app_msg, 1, 2);
	sh->uid = 1000;
	sh->group = LOG_GID;
	ASSERT_EQ(0, container_run(&self->a, try_app, sh));
	ASSERT_EQ(2, sh->nrecs);
	EXPECT_STREQ(root_msg, sh->recs[0].msg);
	EXPECT_STREQ(app_msg, sh->recs[1].msg);

	/* Another group: its own only. */
	order(sh, "aid-other", 1, 2);
	sh->uid = 1001;
	sh->group = LOG_GID + 1;
	ASSERT_EQ(0, container_run(&self->a, try_app, sh));
	ASSERT_EQ(1, sh->nrecs);
	EXPECT_STREQ("aid-other", sh->recs[0].msg);
	order(sh, "", 0, 1);
	sh->uid = 1001;
	sh->group = LOG_GID + 1;
	EXPECT_EQ(EPERM, container_run(&self->a, try_flush, sh));

	/* AID_LOG of container b reads b's ring, not a's. */
	order(sh, "aid-b-app", 1, 2);
	sh->uid = 1000;
	sh->group = LOG_GID;
	ASSERT_EQ(0, container_run(&self->b, try_app, sh));
	ASSERT_EQ(2, sh->nrecs);
	EXPECT_STREQ("aid-in-b", sh->recs[0].msg);
	EXPECT_STREQ("aid-b-app", sh->recs[1].msg);

	/* And AID_LOG clears its cell's ring, only that one. */
	order(sh, "", 0, 1);
	sh->uid = 1000;
	sh->group = LOG_GID;
	EXPECT_EQ(0, container_run(&self->a, try_flush, sh));
	EXPECT_EQ(0, host_read_cell("loga", "main", 2, host_recs));
	EXPECT_EQ(2, host_read_cell("logb", "main", 2, host_recs));
}

static const struct file_write size_loga = {
	CASK "/cells/loga/logger/main/size", "65536\n"
};

static const struct file_write size_logb = {
	CASK "/cells/logb/logger/main/size", "65536\n"
};

TEST_F(cells, size_is_per_cell)
{
	struct cshared *sh = self->sh;

	/* B cannot touch A's ring. */
	EXPECT_EQ(EACCES, container_run(&self->b, try_write_file, (void *)&size_loga));
	EXPECT_EQ(LOG_DEFAULT_SIZE, logger_attr("loga", "main", "size"));

	/* Its own, yes. */
	EXPECT_EQ(0, container_run(&self->b, try_write_file, (void *)&size_logb));
	EXPECT_EQ(65536, logger_attr("logb", "main", "size"));
	EXPECT_EQ(LOG_DEFAULT_SIZE, logger_attr("loga", "main", "size"));
	EXPECT_EQ(LOG_DEFAULT_SIZE, logger_attr("host", "main", "size"));

	ASSERT_EQ(0, container_run(&self->b, try_read_log, order(sh, "", 0, 1)));
	EXPECT_EQ(65536, sh->buf_size);
	ASSERT_EQ(0, container_run(&self->a, try_read_log, order(sh, "", 0, 1)));
	EXPECT_EQ(LOG_DEFAULT_SIZE, sh->buf_size);
}

static const struct select_req select_host = { 0, "host" };
static const struct select_req select_all = { CASK_LOGGER_ALL_CELLS, "" };
static const struct select_req select_loga = { 0, "loga" };
static const int version_cell = CASK_LOGGER_VERSION_CELL;
static const int version_2 = 2;

TEST_F(cells, container_no_host_requests)
{
	EXPECT_EQ(EPERM, container_run(&self->a, try_select, (void *)&select_host));
	EXPECT_EQ(EPERM, container_run(&self->a, try_select, (void *)&select_all));
	EXPECT_EQ(EPERM, container_run(&self->a, try_select, (void *)&select_loga));
	EXPECT_EQ(EINVAL, container_run(&self->a, try_set_version, (void *)&version_cell));
	EXPECT_EQ(1, container_run(&self->a, version_after, (void *)&version_cell));
	EXPECT_EQ(0, container_run(&self->a, try_set_version, (void *)&version_2));
	EXPECT_EQ(2, container_run(&self->a, version_after, (void *)&version_2));
}

#define ROUNDS	5

struct merged_write {
	const char *cell;
	long long id;
	pid_t pid;
	unsigned int euid;
	struct timespec before, after;
	char msg[64];
};

TEST_F_TIMEOUT(cells, host_reads_all_cells, 60)
{
	struct merged_write wr[3 * ROUNDS], *m;
	struct cshared *sh = self->sh;
	struct container *c;
	int r, w, i, j, n;
	long long len, sum = 0;
	char prefix[32];

	/* logb is made after the reader chose all cells: it joins. */
	ASSERT_EQ(0, cask_unregister("logb"));
	r = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, r);
	EXPECT_EQ(-ENOENT, select_cell(r, 0, "logb"));
	ASSERT_EQ(0, select_cell(r, CASK_LOGGER_ALL_CELLS, ""));
	ASSERT_EQ(0, set_version(r, CASK_LOGGER_VERSION_CELL));
	EXPECT_EQ(CASK_LOGGER_VERSION_CELL, log_ioctl(r, LOGGER_GET_VERSION, NULL));
	EXPECT_EQ(-EINVAL, log_ioctl(r, LOGGER_GET_LOG_BUF_SIZE, NULL));
	ASSERT_EQ(0, cask_register("logb", self->b.init));

	w = log_open("main", O_WRONLY);
	ASSERT_LE(0, w);
	snprintf(prefix, sizeof(prefix), "mrg-%d-", getpid());
	for (i = 0; i < 3 * ROUNDS; i++) {
		m = &wr[i];
		memset(m, 0, sizeof(*m));
		m->cell = i % 3 == 0 ? "host" : i % 3 == 1 ? "loga" : "logb";
		m->id = cell_id(m->cell);
		ASSERT_LE(0, m->id);
		snprintf(m->msg, sizeof(m->msg), "%s%s-%d", prefix, m->cell, i / 3);
		if (i % 3 == 0) {
			m->pid = getpid();
			clock_gettime(CLOCK_REALTIME, &m->before);
			ASSERT_LT(0, log_write(w, 4, "cask_test", m->msg));
			clock_gettime(CLOCK_REALTIME, &m->after);
		} else {
			c = i % 3 == 1 ? &self->a : &self->b;
			ASSERT_EQ(0, container_run(c, try_write, order(sh, m->msg, 1, 1)));
			m->pid = sh->host_pid;
			m->euid = i % 3 == 1 ? A_UID : B_UID;
			m->before = sh->before;
			m->after = sh->after;
		}
		/* Well apart, even for a coarse clock. */
		usleep(25000);
	}
	close(w);

	len = log_ioctl(r, LOGGER_GET_LOG_LEN, NULL);
	n = read_recs(r, CASK_LOGGER_VERSION_CELL, host_recs, MAX_RECS);
	ASSERT_LE(3 * ROUNDS, n);
	for (i = 0; i < n; i++)
		sum += host_recs[i].len + STORED_HDR;
	EXPECT_EQ(sum, len);
	EXPECT_EQ(0, log_ioctl(r, LOGGER_GET_LOG_LEN, NULL));

	/* Time order over everything read, and ours in the order written. */
	for (i = 1; i < n; i++)
		EXPECT_LE(ts_ns(&host_recs[i - 1].ts), ts_ns(&host_recs[i].ts))
			TH_LOG("entry %d (%s) is older than entry %d (%s)", i,
			       host_recs[i].msg, i - 1, host_recs[i - 1].msg);
	for (i = 0, j = 0; i < n; i++) {
		struct rec *rec = &host_recs[i];

		if (strncmp(rec->msg, prefix, strlen(prefix)))
			continue;
		ASSERT_GT(3 * ROUNDS, j);
		m = &wr[j++];
		EXPECT_STREQ(m->msg, rec->msg);
		EXPECT_STREQ(m->cell, rec->cell);
		EXPECT_EQ(m->id, rec->cell_id);
		EXPECT_EQ(CELL_HDR, rec->hdr_size);
		EXPECT_EQ(m->pid, rec->pid);
		EXPECT_EQ(m->euid, rec->euid);
		EXPECT_TRUE(ts_between(&rec->ts, &m->before, &m->after))
			TH_LOG("%s: %ld.%09ld not in %ld.%09ld..%ld.%09ld", rec->msg,
			       rec->ts.tv_sec, rec->ts.tv_nsec, m->before.tv_sec,
			       m->before.tv_nsec, m->after.tv_sec, m->after.tv_nsec);
	}
	EXPECT_EQ(3 * ROUNDS, j);
	close(r);
}

/*
 * The wait-queue lifetime class of CVE-2019-2215: epoll entries made on a
 * host reader before and after it selected another cell must stay valid
 * when that cell is unregistered, its container ends and the selection
 * drops the last reference to its rings.
 */
TEST_F(cells, epoll_outlives_selected_cell)
{
	struct epoll_event ev = { .events = EPOLLIN }, out[4];
	char buf[LOGGER_ENTRY_MAX_LEN];
	int fd, fd2, ep, w;

	fd = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	/* On the host ring's queue. */
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	ASSERT_EQ(0, select_cell(fd, 0, "loga"));
	/* The same file again, now on the queue of selected readers. */
	fd2 = dup(fd);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd2, &ev));
	EXPECT_EQ(0, epoll_wait(ep, out, 4, 0));

	/* A's entry wakes the selected reader. */
	EXPECT_EQ(0, container_run(&self->a, try_write, order(self->sh, "epoll-a", 1, 1)));
	EXPECT_LE(1, epoll_wait(ep, out, 4, 1000));
	EXPECT_LT(0, log_read(fd, buf, sizeof(buf)));

	/* A goes away; the selection keeps its rings until it moves on. */
	EXPECT_EQ(0, cask_unregister("loga"));
	container_stop(&self->a);
	EXPECT_TRUE(cell_gone("loga"));
	EXPECT_EQ(0, select_cell(fd, 0, "host"));
	EXPECT_EQ(-ENOENT, select_cell(fd, 0, "loga"));

	/* Both epoll entries still work after A's rings were freed. */
	w = log_open("main", O_WRONLY);
	ASSERT_LE(0, w);
	EXPECT_LT(0, log_write(w, 4, "epoll", "host after a"));
	EXPECT_LE(1, epoll_wait(ep, out, 4, 1000));
	EXPECT_LT(0, log_read(fd, buf, sizeof(buf)));
	close(w);
	close(fd2);
	close(fd);
	close(ep);
}

/* An app (uid 1000, no capabilities) cannot clear its container's logs. */
TEST_F(cells, flush_needs_privilege)
{
	struct cshared *sh = self->sh;

	ASSERT_EQ(0, container_run(&self->a, try_write, order(sh, "fl-keep", 1, 1)));
	order(sh, "", 0, 1);
	sh->uid = 1000;
	EXPECT_EQ(EPERM, container_run(&self->a, try_flush, sh));
	EXPECT_EQ(1, host_read_cell("loga", "main", 1, host_recs));
	/* The container's root has CAP_SYSLOG in the cell's user namespace. */
	EXPECT_EQ(0, container_run(&self->a, try_flush, order(sh, "", 0, 1)));
	EXPECT_EQ(0, host_read_cell("loga", "main", 1, host_recs));
}

/*
 * A host reader of a cell counts as a reader of that cell's ring for the
 * host, but the container is not told that the host reads its logs.
 */
TEST_F(cells, readers_hide_host)
{
	int fd;

	EXPECT_EQ(0, logger_attr("loga", "main", "readers"));
	fd = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, select_cell(fd, 0, "loga"));
	EXPECT_EQ(1, logger_attr("loga", "main", "readers"));
	/* A literal: the container sees the test's memory as it was at its start. */
	EXPECT_EQ(0, container_run(&self->a, number_in, CASK "/cells/loga/logger/main/readers"));
	EXPECT_EQ(0, container_run(&self->b, number_in, CASK "/cells/logb/logger/main/readers"));
	close(fd);
	EXPECT_EQ(0, logger_attr("loga", "main", "readers"));
}

struct blocked_read {
	int fd;
	int n;			/* what read() returned, or -errno */
	int done;
	pid_t tid;		/* the reading thread, once it runs */
};

static void *blocked_reader(void *arg)
{
	struct blocked_read *b = arg;
	char buf[LOGGER_ENTRY_MAX_LEN];

	__atomic_store_n(&b->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	b->n = log_read(b->fd, buf, sizeof(buf));
	__atomic_store_n(&b->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void on_usr1(int sig)
{
}

/* Up to @ms for the blocked read to return. */
static bool read_returned(struct blocked_read *b, int ms)
{
	long long end = now_ms() + ms;

	while (!__atomic_load_n(&b->done, __ATOMIC_SEQ_CST)) {
		if (now_ms() > end)
			return false;
		usleep(10000);
	}
	return true;
}

/*
 * A host reader waiting for entries (an epoll entry, a blocked read) before
 * it selects another cell, or all cells, must be woken by a write in that
 * cell: the wait began on the host ring's queue.
 */
static void wake_after_select(struct __test_metadata *_metadata, struct container *a,
			      struct cshared *sh, unsigned int flags, const char *cell)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct epoll_event ev = { .events = EPOLLIN }, out[2];
	struct blocked_read b = { .fd = -1 };
	char buf[LOGGER_ENTRY_MAX_LEN];
	bool woken;
	pthread_t th;
	int fd, ep, w, i;

	fd = log_open("main", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 0));
	b.fd = log_open("main", O_RDONLY);
	ASSERT_LE(0, b.fd);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, pthread_create(&th, NULL, blocked_reader, &b));
	/* It goes to sleep on the host's empty ring. */
	for (i = 0; i < 1000 && !__atomic_load_n(&b.tid, __ATOMIC_SEQ_CST); i++)
		usleep(10000);
	EXPECT_TRUE(wait_asleep_in_read(__atomic_load_n(&b.tid, __ATOMIC_SEQ_CST), b.fd));
	EXPECT_FALSE(__atomic_load_n(&b.done, __ATOMIC_SEQ_CST));

	ASSERT_EQ(0, select_cell(fd, flags, cell));
	ASSERT_EQ(0, select_cell(b.fd, flags, cell));
	/* What other cells hold already (all cells) is not what we wait for. */
	read_recs(fd, 1, host_recs, MAX_RECS);
	epoll_wait(ep, out, 2, 0);

	ASSERT_EQ(0, container_run(a, try_write, order(sh, "wake-after-select", 1, 1)));
	EXPECT_EQ(1, epoll_wait(ep, out, 2, 2000));
	EXPECT_LT(0, log_read(fd, buf, sizeof(buf)));
	woken = read_returned(&b, 2000);
	EXPECT_TRUE(woken);
	if (!woken) {
		/* Wake it on its old queue, or interrupt it, to end the test. */
		w = log_open("main", O_WRONLY);
		if (w >= 0) {
			log_write(w, 4, "wake", "host");
			close(w);
		}
		if (!read_returned(&b, 1000))
			pthread_kill(th, SIGUSR1);
	}
	pthread_join(th, NULL);
	if (woken)
		EXPECT_LT(0, b.n);
	close(b.fd);
	close(ep);
	close(fd);
}

TEST_F(cells, wake_after_select_cell)
{
	wake_after_select(_metadata, &self->a, self->sh, 0, "loga");
}

TEST_F(cells, wake_after_select_all)
{
	wake_after_select(_metadata, &self->a, self->sh, CASK_LOGGER_ALL_CELLS, "");
}

/* ------------------------------------------------------------------ */
/* The devdir parameter: the nodes under another directory than /dev/log. */

#define LOGGER_KO	"/lib/modules/cask/cask_logger.ko"

/* delete_module("cask_logger"), retried while in use for 10 s: 0 or -errno. */
static int logger_unload(void)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (!syscall(SYS_delete_module, "cask_logger", O_NONBLOCK))
			return 0;
		if (errno == ENOENT)
			return 0;
		if (errno != EWOULDBLOCK && errno != EAGAIN && errno != EBUSY)
			return -errno;
		usleep(10000);
	}
	return -EBUSY;
}

FIXTURE(devdir) {
	int unused;
};

FIXTURE_SETUP(devdir)
{
	if (logger_missing())
		SKIP(return, "%s", logger_missing());
	if (access(LOGGER_KO, R_OK))
		SKIP(return, "no %s to load again", LOGGER_KO);
	ASSERT_EQ(0, logger_unload());
}

/* As found: loaded, with the default directory. */
FIXTURE_TEARDOWN(devdir)
{
	struct stat st;

	if (access(LOGGER_KO, R_OK))
		return;
	EXPECT_EQ(0, logger_unload());
	EXPECT_EQ(0, cask_module_load("cask_logger"));
	EXPECT_EQ(0, stat(LOG_DIR "main", &st));
}

/*
 * Where /dev/log is the host's syslog socket, the nodes go elsewhere
 * (devdir=cask/log) and runtimes bind that directory to the container's
 * /dev/log. A directory that would leave /dev, or is not a plain relative
 * path, is refused at load with EINVAL.
 */
TEST_F(devdir, nodes_in_devdir)
{
	static const char *const bad[] = {
		"devdir=/log", "devdir=../log", "devdir=cask/../log", "devdir=log/",
		"devdir=a//b", "devdir=.", "devdir=", "devdir=log*",
		"devdir=12345678901234567890123456789012345678901234567890123456789012345",
	};
	char buf[96], msg[64];
	struct rec recs[4];
	struct stat st;
	size_t i;
	int w, r;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, cask_module_load_args("cask_logger", bad[i]))
			TH_LOG("%s", bad[i]);
		EXPECT_NE(0, access("/sys/module/cask_logger/initstate", F_OK))
			TH_LOG("%s", bad[i]);
	}

	ASSERT_EQ(0, cask_module_load_args("cask_logger", "devdir=cask/log"));
	ASSERT_EQ(0, read_file("/sys/module/cask_logger/parameters/devdir", buf, sizeof(buf)));
	EXPECT_STREQ("cask/log", buf);
	for (i = 0; i < 5; i++) {
		static const char *const names[] = { "main", "events", "radio", "system", "crash" };

		snprintf(buf, sizeof(buf), "/dev/cask/log/%s", names[i]);
		ASSERT_EQ(0, stat(buf, &st)) TH_LOG("%s", buf);
		EXPECT_TRUE(S_ISCHR(st.st_mode)) TH_LOG("%s", buf);
		snprintf(buf, sizeof(buf), LOG_DIR "%s", names[i]);
		EXPECT_EQ(-1, stat(buf, &st)) TH_LOG("%s", buf);
	}

	/* The same logger, there. */
	snprintf(msg, sizeof(msg), "devdir-%d", getpid());
	w = open("/dev/cask/log/main", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, w);
	r = open("/dev/cask/log/main", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, r);
	EXPECT_EQ(payload_len("devdir", msg), log_write(w, 4, "devdir", msg));
	EXPECT_EQ(1, read_recs(r, 1, recs, 4));
	EXPECT_STREQ(msg, recs[0].msg);
	close(r);
	close(w);

	/* logcat finds them there when /dev/log is not a directory. */
	if (!access("/usr/bin/logcat", X_OK) && access("/dev/log", F_OK)) {
		char cmd[128], out[4096];
		size_t n;
		FILE *p;

		snprintf(cmd, sizeof(cmd), "env -u LOGCAT_DEV_DIR /usr/bin/logcat -d -b main 2>&1");
		p = popen(cmd, "r");
		ASSERT_NE(NULL, p);
		n = fread(out, 1, sizeof(out) - 1, p);
		out[n] = 0;
		EXPECT_EQ(0, pclose(p)) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, msg)) TH_LOG("%s", out);
	}

	/* Gone with the module. */
	ASSERT_EQ(0, logger_unload());
	EXPECT_EQ(-1, stat("/dev/cask/log/main", &st));
	EXPECT_EQ(ENOENT, errno);
}

TEST_HARNESS_MAIN
