// SPDX-License-Identifier: GPL-2.0
/*
 * Binder from user space, differentially: every test runs on the kernel's
 * own binder (variant "upstream": binder_linux.ko, a fresh binderfs mount
 * and device per test, so a fresh context) and on cask_binder (variant
 * "cask": the test unshares its IPC namespace, which gives it a fresh auto
 * cell and so a fresh context behind /dev/binder). The same body must see
 * the same errnos and BR_* codes on both.
 *
 * Raw ioctls only (cask_binder.h). Forked helpers (context managers,
 * services, clients) open the device themselves and report failures
 * through shared memory; the test process waits for them. Ordering comes
 * from pipes and from binder itself, never from sleeping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "cask_binder.h"

/* Transaction codes the helpers understand. */
#define CODE_PING	0x50494e47
#define CODE_ADD	1
#define CODE_GET	2
#define CODE_QUIT	3
#define CODE_NESTED	4
#define CODE_RELEASE	5

FIXTURE(binder) {
	char dev[PATH_MAX];
	char mnt[64];
	bool mounted;
	int hold;	/* keeps the cask cell of the test process */
};

FIXTURE_VARIANT(binder) {
	bool upstream;
};

FIXTURE_VARIANT_ADD(binder, upstream) {
	.upstream = true,
};

FIXTURE_VARIANT_ADD(binder, cask) {
	.upstream = false,
};

FIXTURE_SETUP(binder)
{
	if (variant->upstream) {
		struct binderfs_device bd = { .name = "binder" };
		char ctl[PATH_MAX];
		int fd;

		ASSERT_EQ(0, load_upstream()) TH_LOG("cannot load " UPSTREAM_KO);
		snprintf(self->mnt, sizeof(self->mnt), "/tmp/binderfs-XXXXXX");
		ASSERT_NE(NULL, mkdtemp(self->mnt));
		if (mount("binder", self->mnt, "binder", 0, NULL)) {
			int err = errno;

			rmdir(self->mnt);
			/* Debian's binder_linux, for one, has no binderfs. */
			if (err == ENODEV)
				SKIP(return, "the kernel's binder has no binderfs");
			ASSERT_EQ(0, err) TH_LOG("mount binderfs: %s", strerror(err));
		}
		self->mounted = true;
		snprintf(ctl, sizeof(ctl), "%s/binder-control", self->mnt);
		fd = open(ctl, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd) TH_LOG("open %s: %s", ctl, strerror(errno));
		ASSERT_EQ(0, ioctl(fd, BINDER_CTL_ADD, &bd))
			TH_LOG("BINDER_CTL_ADD: %s", strerror(errno));
		close(fd);
		snprintf(self->dev, sizeof(self->dev), "%s/binder", self->mnt);
	} else {
		/* A fresh auto cell, hence a fresh binder context. */
		ASSERT_EQ(0, unshare(CLONE_NEWIPC));
		snprintf(self->dev, sizeof(self->dev), "/dev/binder");
		ASSERT_EQ(0, access(self->dev, F_OK))
			TH_LOG("cask_binder is not loaded: no /dev/binder");
		/*
		 * Made by the test process itself: without patch 0001 an auto
		 * cell lasts as long as the process that made it, and the
		 * context (its manager's euid) must last the whole test.
		 */
		self->hold = open(self->dev, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, self->hold);
	}
}

FIXTURE_TEARDOWN(binder)
{
	if (self->hold > 0)
		close(self->hold);
	if (self->mounted) {
		umount2(self->mnt, MNT_DETACH);
		rmdir(self->mnt);
	}
}

/* ---- helpers ------------------------------------------------------------ */

/* What forked helpers get: all of it shared with the test process. */
struct tctx {
	const char *dev;
	struct bchild *sh;
	struct bevent ready, go;
	uint32_t mgr_flags;	/* SET_CONTEXT_MGR_EXT flags */
	bool mgr_ext;		/* use SET_CONTEXT_MGR_EXT */
	bool no_mmap;
	size_t map_size;	/* the manager's mapping; 0: BMAP_SIZE */
	bserve_fn serve;
	void *arg;
	pid_t client;		/* the test process */
};

static struct tctx *tctx_new(const char *dev)
{
	struct tctx *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->dev = dev;
	c->sh = bchild_alloc();
	if (!c->sh || bevent_init(&c->ready) || bevent_init(&c->go))
		return NULL;
	c->client = getpid();
	return c;
}

typedef int (*child_fn)(struct tctx *c);

static pid_t spawn(struct tctx *c, child_fn fn)
{
	pid_t pid = fork();

	if (pid == 0) {
		/* Never outlive the test: no open binder fds left behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(25);
		_exit(fn(c));
	}
	return pid;
}

#define EXPECT_CHILD_OK(c, child) do {						\
	pid_t __pid = (child);							\
	int __st = child_status(__pid);						\
	EXPECT_EQ(0, __st) TH_LOG("child %d: status %d: %s", (int)__pid, __st,	\
				  (c)->sh->err);				\
} while (0)

/* A context manager that serves c->serve until it says stop. */
static int mgr_main(struct tctx *c)
{
	struct bchild *s = c->sh;
	struct bdev b;
	struct brd r;
	int ret;

	ret = bdev_open(&b, c->dev, 0, c->no_mmap ? 0 : c->map_size ?: BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open %s: %d", c->dev, ret);
	if (c->mgr_ext) {
		struct flat_binder_object fbo = {
			.hdr.type = BINDER_TYPE_BINDER,
			.flags = c->mgr_flags,
			.binder = 0x1000,
			.cookie = 0x2000,
		};

		ret = ioctl(b.fd, BINDER_SET_CONTEXT_MGR_EXT, &fbo);
	} else {
		ret = ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0);
	}
	CHILD_CHECK(s, !ret, "SET_CONTEXT_MGR: %s", strerror(errno));
	ret = bc_plain(b.fd, BC_ENTER_LOOPER);
	CHILD_CHECK(s, !ret, "BC_ENTER_LOOPER: %d", ret);
	s->val[15] = (uintptr_t)b.map;
	bevent_post(&c->ready);
	if (!c->serve) {
		bevent_wait(&c->go);
		return 0;
	}
	brd_init(&r, b.fd);
	ret = bserve(&r, c->serve, c);
	CHILD_CHECK(s, !ret, "serve: %d", ret);
	bdev_close(&b);
	return 0;
}

/* Start a context manager serving @fn and wait until it is set. */
static pid_t start_mgr(struct tctx *c, bserve_fn fn)
{
	pid_t pid;

	c->serve = fn;
	pid = spawn(c, mgr_main);
	if (pid > 0 && bevent_wait(&c->ready))
		return -1;
	return pid;
}

/* Serve: answer pings with "pong", stop on CODE_QUIT. */
static int srv_ping(struct brd *r, const struct binder_transaction_data *tr,
		    struct txn *reply, void *arg)
{
	struct tctx *c = arg;

	c->sh->val[0]++;
	c->sh->val[1] = tr->code;
	if (tr->code == CODE_QUIT)
		return 1;
	txn_put(reply, "pong", 5);
	return 0;
}

/* Ping handle @h and expect BR_REPLY "pong"; 0 or a negative code. */
static int ping(struct brd *r, uint32_t h, uint32_t *br)
{
	struct binder_transaction_data reply;
	struct txn t;
	int ret;

	txn_init(&t);
	txn_put(&t, "ping", 5);
	ret = txn_call(r, h, CODE_PING, &t, br, &reply);
	if (ret)
		return ret;
	if (*br != BR_REPLY)
		return -EPROTO;
	ret = reply.data_size == 5 &&
	      !memcmp((void *)(uintptr_t)reply.data.ptr.buffer, "pong", 5) ? 0 : -EBADMSG;
	txn_free(r->fd, &reply);
	return ret;
}

/* Stop a ping server. */
static int quit(struct brd *r, uint32_t h)
{
	struct binder_transaction_data reply;
	uint32_t br;
	int ret;

	ret = txn_call(r, h, CODE_QUIT, NULL, &br, &reply);
	if (ret)
		return ret;
	if (br != BR_REPLY)
		return -EPROTO;
	return txn_free(r->fd, &reply);
}

/* Non-blocking read of what is queued: the codes, NOOPs included. */
static int drain(int fd, uint32_t *codes, int max)
{
	uint8_t buf[256] __attribute__((aligned(8)));
	size_t got = 0, pos = 0;
	int fl = fcntl(fd, F_GETFL), ret, n = 0;

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	ret = binder_wr(fd, NULL, 0, buf, sizeof(buf), NULL, &got);
	fcntl(fd, F_SETFL, fl);
	if (ret)
		return ret;
	while (pos + 4 <= got && n < max) {
		memcpy(&codes[n], buf + pos, 4);
		pos += 4 + _IOC_SIZE(codes[n]);
		n++;
	}
	return n;
}

/* ---- basic ioctls --------------------------------------------------------- */

TEST_F(binder, version)
{
	struct binder_version v = { 0 };
	struct bdev b;

	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, 0));
	ASSERT_EQ(0, ioctl(b.fd, BINDER_VERSION, &v));
	EXPECT_EQ(BINDER_CURRENT_PROTOCOL_VERSION, v.protocol_version);
	EXPECT_EQ(8, v.protocol_version);
	/* A bad pointer is EINVAL here, not EFAULT (upstream maps it so). */
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_VERSION, NULL));
	EXPECT_EQ(EINVAL, errno);
	bdev_close(&b);
}

TEST_F(binder, open_without_mmap)
{
	struct binder_version v = { 0 };
	uint32_t max = 4;
	struct bdev b;
	char buf[64];
	size_t done = 1;

	ASSERT_EQ(0, bdev_open(&b, self->dev, O_NONBLOCK, 0));
	EXPECT_EQ(0, ioctl(b.fd, BINDER_VERSION, &v));
	EXPECT_EQ(0, ioctl(b.fd, BINDER_SET_MAX_THREADS, &max));
	EXPECT_EQ(0, binder_wr(b.fd, NULL, 0, NULL, 0, NULL, NULL));
	EXPECT_EQ(-EAGAIN, binder_wr(b.fd, NULL, 0, buf, sizeof(buf), NULL, &done));
	EXPECT_EQ(0, bc_plain(b.fd, BC_ENTER_LOOPER));
	EXPECT_EQ(0, ioctl(b.fd, BINDER_THREAD_EXIT, 0));
	EXPECT_EQ(0, ioctl(b.fd, BINDER_VERSION, &v));
	bdev_close(&b);
}

TEST_F(binder, mmap_rules)
{
	struct bdev b;
	void *p, *q;
	pid_t pid;

	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, 0));
	p = mmap(NULL, BMAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, b.fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	p = mmap(NULL, BMAP_SIZE, PROT_WRITE, MAP_PRIVATE, b.fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	/* What libbinder and libgbinder use. */
	p = mmap(NULL, BMAP_SIZE, PROT_READ, MAP_PRIVATE | MAP_NORESERVE, b.fd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
	q = mmap(NULL, BMAP_SIZE, PROT_READ, MAP_SHARED, b.fd, 0);
	EXPECT_EQ(MAP_FAILED, q);
	EXPECT_EQ(EBUSY, errno);
	/* Read-only for good: VM_MAYWRITE is gone. */
	EXPECT_EQ(-1, mprotect(p, 4096, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		*(char *)p = 1;
		_exit(0);
	}
	EXPECT_EQ(128 + SIGSEGV, child_status(pid));
	munmap(p, BMAP_SIZE);
	bdev_close(&b);
}

TEST_F(binder, mmap_shared_readonly)
{
	struct bdev b;
	void *p;

	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, 0));
	p = mmap(NULL, BMAP_SIZE, PROT_READ, MAP_SHARED, b.fd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
	munmap(p, BMAP_SIZE);
	bdev_close(&b);
}

/* The mapping belongs to the process that opened the device. */
TEST_F(binder, mmap_from_other_process)
{
	struct bdev b;
	pid_t pid;

	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		void *p = mmap(NULL, BMAP_SIZE, PROT_READ, MAP_PRIVATE, b.fd, 0);

		_exit(p == MAP_FAILED ? errno : 0);
	}
	EXPECT_EQ(EINVAL, child_status(pid));
	bdev_close(&b);
}

TEST_F(binder, write_read_empty)
{
	struct binder_write_read bwr = { 0 };
	struct bdev b;

	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	EXPECT_EQ(0, ioctl(b.fd, BINDER_WRITE_READ, &bwr));
	EXPECT_EQ(0, bwr.write_consumed);
	EXPECT_EQ(0, bwr.read_consumed);
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_WRITE_READ, NULL));
	EXPECT_EQ(EFAULT, errno);
	bdev_close(&b);
}

/*
 * A thread's first read returns at once with just BR_NOOP (a new thread
 * is told to return to user space once); after that, a non-blocking read
 * with nothing queued is EAGAIN.
 */
TEST_F(binder, read_nonblock_empty)
{
	struct bdev b;
	uint32_t buf[32];
	size_t got = 99;

	ASSERT_EQ(0, bdev_open(&b, self->dev, O_NONBLOCK, BMAP_SIZE));
	EXPECT_EQ(0, binder_wr(b.fd, NULL, 0, buf, sizeof(buf), NULL, &got));
	EXPECT_EQ(4, got);
	EXPECT_EQ(BR_NOOP, buf[0]);
	got = 99;
	EXPECT_EQ(-EAGAIN, binder_wr(b.fd, NULL, 0, buf, sizeof(buf), NULL, &got));
	EXPECT_EQ(0, got);
	bdev_close(&b);
}

/*
 * Work queued on the thread (a call to a missing context manager) is
 * read behind a BR_NOOP when read_consumed starts at 0, and after the
 * bytes already there, without a NOOP, when it does not. A read buffer
 * without room for a whole transaction (a BR_ code and
 * binder_transaction_data_secctx) gets nothing but the NOOP. While an
 * error waits to be read, further commands are not consumed.
 */
TEST_F(binder, read_noop_first)
{
	struct binder_write_read bwr = { 0 };
	struct binder_transaction_data tr;
	size_t wdone = 99, rdone = 99;
	struct bcbuf cmd;
	uint32_t buf[32];
	struct txn t;
	struct bdev b;

	ASSERT_EQ(0, bdev_open(&b, self->dev, O_NONBLOCK, BMAP_SIZE));
	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_PING, 0, NULL));
	memset(buf, 0xa5, sizeof(buf));
	bwr.read_size = sizeof(buf);
	bwr.read_buffer = (uintptr_t)buf;
	ASSERT_EQ(0, ioctl(b.fd, BINDER_WRITE_READ, &bwr));
	EXPECT_EQ(8, bwr.read_consumed);
	EXPECT_EQ(BR_NOOP, buf[0]);
	EXPECT_EQ(BR_DEAD_REPLY, buf[1]) TH_LOG("got %s", br_name(buf[1]));

	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_PING, 0, NULL));
	memset(buf, 0xa5, sizeof(buf));
	bwr.read_consumed = 4;
	ASSERT_EQ(0, ioctl(b.fd, BINDER_WRITE_READ, &bwr));
	EXPECT_EQ(8, bwr.read_consumed);
	EXPECT_EQ(0xa5a5a5a5, buf[0]);
	EXPECT_EQ(BR_DEAD_REPLY, buf[1]) TH_LOG("got %s", br_name(buf[1]));

	/* 64 bytes: too small for a transaction, so only the NOOP. */
	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_PING, 0, NULL));
	ASSERT_EQ(0, binder_wr(b.fd, NULL, 0, buf, 64, NULL, &rdone));
	EXPECT_EQ(4, rdone);
	EXPECT_EQ(BR_NOOP, buf[0]);
	/* The error still waits, and holds up the next command. */
	txn_init(&t);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	bc_init(&cmd);
	bc_add(&cmd, BC_TRANSACTION, &tr, sizeof(tr));
	EXPECT_EQ(0, binder_wr(b.fd, cmd.buf, cmd.len, NULL, 0, &wdone, NULL));
	EXPECT_EQ(0, wdone);
	ASSERT_EQ(0, binder_wr(b.fd, NULL, 0, buf, sizeof(buf), NULL, &rdone));
	EXPECT_EQ(8, rdone);
	EXPECT_EQ(BR_DEAD_REPLY, buf[1]) TH_LOG("got %s", br_name(buf[1]));

	bwr.read_consumed = 0;
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_WRITE_READ, &bwr));
	EXPECT_EQ(EAGAIN, errno);
	bdev_close(&b);
}

TEST_F(binder, unknown_ioctl)
{
	int64_t timeout = 1;
	int32_t prio = 0;
	struct bdev b;

	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, 0));
	EXPECT_EQ(-1, ioctl(b.fd, _IOWR('b', 99, int), &prio));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_SET_IDLE_TIMEOUT, &timeout));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_SET_IDLE_PRIORITY, &prio));
	EXPECT_EQ(EINVAL, errno);
	bdev_close(&b);
}

TEST_F(binder, max_threads_and_thread_exit)
{
	uint32_t max = 8;
	struct bdev b;

	ASSERT_EQ(0, bdev_open(&b, self->dev, O_NONBLOCK, BMAP_SIZE));
	EXPECT_EQ(0, ioctl(b.fd, BINDER_SET_MAX_THREADS, &max));
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_SET_MAX_THREADS, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ioctl(b.fd, BINDER_THREAD_EXIT, 0));
	/* The next ioctl makes a new thread. */
	EXPECT_EQ(0, bc_plain(b.fd, BC_ENTER_LOOPER));
	EXPECT_EQ(0, ioctl(b.fd, BINDER_THREAD_EXIT, 0));
	EXPECT_EQ(0, ioctl(b.fd, BINDER_THREAD_EXIT, 0));
	bdev_close(&b);
}

/* ---- context manager ------------------------------------------------------ */

static int try_set_mgr(struct tctx *c)
{
	struct bdev b;
	int ret;

	if (bdev_open(&b, c->dev, 0, 0))
		return 100;
	ret = ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0) ? errno : 0;
	bdev_close(&b);
	return ret;
}

TEST_F(binder, context_mgr)
{
	struct flat_binder_object fbo = { .hdr.type = BINDER_TYPE_BINDER };
	struct tctx *c = tctx_new(self->dev);
	struct bdev b;
	pid_t pid;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	ASSERT_EQ(0, ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0));
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_SET_CONTEXT_MGR_EXT, &fbo));
	EXPECT_EQ(EBUSY, errno);
	/* Another process of the same context. */
	pid = spawn(c, try_set_mgr);
	EXPECT_EQ(EBUSY, child_status(pid));
	/* The context manager may not take references on itself. */
	EXPECT_EQ(-EINVAL, bc_u32(b.fd, BC_INCREFS, 0));
	EXPECT_EQ(-EINVAL, bc_u32(b.fd, BC_ACQUIRE, 0));
	bdev_close(&b);
}

/* SET_CONTEXT_MGR_EXT: its binder and cookie are what handle 0 reaches. */
static int srv_check_target(struct brd *r, const struct binder_transaction_data *tr,
			    struct txn *reply, void *arg)
{
	struct tctx *c = arg;

	c->sh->val[0] = tr->target.ptr;
	c->sh->val[1] = tr->cookie;
	return 1;
}

TEST_F(binder, context_mgr_ext)
{
	struct tctx *c = tctx_new(self->dev);
	struct brd r;
	struct bdev b;
	uint32_t br;
	pid_t pid;

	ASSERT_NE(NULL, c);
	c->mgr_ext = true;
	pid = start_mgr(c, srv_check_target);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	EXPECT_EQ(-EBADMSG, ping(&r, 0, &br));
	EXPECT_EQ(BR_REPLY, br);
	EXPECT_CHILD_OK(c, pid);
	EXPECT_EQ(0x1000, c->sh->val[0]);
	EXPECT_EQ(0x2000, c->sh->val[1]);
	bdev_close(&b);
}

/* As uid 1000, with the device opened as root. */
static int try_set_mgr_as_1000(struct tctx *c)
{
	struct bdev b;
	int ret;

	if (bdev_open(&b, c->dev, 0, 0))
		return 100;
	if (setresuid(1000, 1000, 1000))
		return 101;
	ret = ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0) ? errno : 0;
	bdev_close(&b);
	return ret;
}

/*
 * Once a context manager was set, only its euid may set one again, even
 * after it went away; the test sees it go through a death notification.
 */
TEST_F(binder, context_mgr_euid)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_ptr_cookie dead;
	struct bcbuf cmd;
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr, pid;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, NULL);
	ASSERT_LT(0, mgr);
	pid = spawn(c, try_set_mgr_as_1000);
	EXPECT_EQ(EBUSY, child_status(pid));

	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	bc_init(&cmd);
	bc_add(&cmd, BC_ENTER_LOOPER, NULL, 0);
	bc_add_u32(&cmd, BC_INCREFS, 0);
	bc_add_handle_cookie(&cmd, BC_REQUEST_DEATH_NOTIFICATION, 0, 0xdead0);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	bevent_post(&c->go);
	EXPECT_CHILD_OK(c, mgr);
	ASSERT_EQ(0, br_wait(&r, &br, &dead, sizeof(dead), NULL));
	ASSERT_EQ(BR_DEAD_BINDER, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xdead0, dead.ptr);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_DEAD_BINDER_DONE, 0xdead0));

	pid = spawn(c, try_set_mgr_as_1000);
	EXPECT_EQ(EPERM, child_status(pid));
	pid = spawn(c, try_set_mgr);
	EXPECT_EQ(0, child_status(pid));
	bdev_close(&b);
}

/*
 * The manager restarts while a client still holds its reference on the old
 * one: handle 0 stays that reference's, and the client's reference on the
 * new manager gets the next free handle, 1. Two references sharing handle
 * 0 would make every command on it hit one of them at random.
 */
static void handle0_restart(struct __test_metadata *_metadata,
			    struct _test_data_binder *self, bool strong_old)
{
	struct tctx *c1 = tctx_new(self->dev), *c2 = tctx_new(self->dev);
	struct binder_ptr_cookie dead;
	struct bcbuf cmd;
	struct pollfd p;
	struct bdev b;
	struct brd r;
	uint32_t br, codes[4];
	pid_t m1, m2;

	ASSERT_NE(NULL, c1);
	ASSERT_NE(NULL, c2);
	m1 = start_mgr(c1, NULL);
	ASSERT_LT(0, m1);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	bc_init(&cmd);
	bc_add(&cmd, BC_ENTER_LOOPER, NULL, 0);
	bc_add_u32(&cmd, BC_INCREFS, 0);
	if (strong_old)
		bc_add_u32(&cmd, BC_ACQUIRE, 0);
	bc_add_handle_cookie(&cmd, BC_REQUEST_DEATH_NOTIFICATION, 0, 0xdead0);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	bevent_post(&c1->go);
	EXPECT_CHILD_OK(c1, m1);
	/* The old manager is gone for good once its death is told. */
	ASSERT_EQ(0, br_wait(&r, &br, &dead, sizeof(dead), NULL));
	ASSERT_EQ(BR_DEAD_BINDER, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xdead0, dead.ptr);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_DEAD_BINDER_DONE, 0xdead0));

	m2 = start_mgr(c2, NULL);
	ASSERT_LT(0, m2);
	bc_init(&cmd);
	bc_add_u32(&cmd, BC_ACQUIRE, 0);
	bc_add_handle_cookie(&cmd, BC_REQUEST_DEATH_NOTIFICATION, 1, 0xdead1);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	/* Handle 1 is the live manager: no death yet. */
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));
	bevent_post(&c2->go);
	EXPECT_CHILD_OK(c2, m2);
	p.fd = b.fd;
	p.events = POLLIN;
	p.revents = 0;
	ASSERT_EQ(1, poll(&p, 1, 5000)) TH_LOG("no death notice: handle 1 is not the new manager");
	ASSERT_EQ(0, br_wait(&r, &br, &dead, sizeof(dead), NULL));
	ASSERT_EQ(BR_DEAD_BINDER, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xdead1, dead.ptr);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_DEAD_BINDER_DONE, 0xdead1));
	bdev_close(&b);
}

TEST_F(binder, handle0_after_manager_restart)
{
	handle0_restart(_metadata, self, false);
}

/*
 * The same with a strong reference left on handle 0: BC_ACQUIRE 0 still
 * names the manager of now, whose reference is handle 1, not the dead one
 * that kept handle 0.
 */
TEST_F(binder, handle0_acquire_names_current_manager)
{
	handle0_restart(_metadata, self, true);
}

static int try_node_info(struct tctx *c)
{
	struct binder_node_info_for_ref info = { 0 };
	struct bdev b;
	int ret;

	if (bdev_open(&b, c->dev, 0, 0))
		return 100;
	ret = ioctl(b.fd, BINDER_GET_NODE_INFO_FOR_REF, &info) ? errno : 0;
	bdev_close(&b);
	return ret;
}

TEST_F(binder, node_info_for_ref)
{
	struct binder_node_info_for_ref info = { 0 };
	struct tctx *c = tctx_new(self->dev);
	struct bdev b;
	pid_t pid;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	/* Only the context manager may ask. */
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_GET_NODE_INFO_FOR_REF, &info));
	EXPECT_EQ(EPERM, errno);
	ASSERT_EQ(0, ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0));
	pid = spawn(c, try_node_info);
	EXPECT_EQ(EPERM, child_status(pid));
	/* A handle it does not have. */
	info.handle = 1;
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_GET_NODE_INFO_FOR_REF, &info));
	EXPECT_EQ(EINVAL, errno);
	info.handle = 0;
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_GET_NODE_INFO_FOR_REF, &info));
	EXPECT_EQ(EINVAL, errno);
	/* Only the handle may be set. */
	info.reserved2 = 1;
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_GET_NODE_INFO_FOR_REF, &info));
	EXPECT_EQ(EINVAL, errno);
	bdev_close(&b);
}

/* ---- transactions ---------------------------------------------------------- */

static int srv_ping_check(struct brd *r, const struct binder_transaction_data *tr,
			  struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;
	const char *data = (const char *)(uintptr_t)tr->data.ptr.buffer;

	CHILD_CHECK(s, tr->code == CODE_PING, "code %#x", tr->code);
	CHILD_CHECK(s, tr->flags == 0, "flags %#x", tr->flags);
	CHILD_CHECK(s, tr->target.ptr == 0 && tr->cookie == 0, "target %#llx cookie %#llx",
		    (unsigned long long)tr->target.ptr, (unsigned long long)tr->cookie);
	CHILD_CHECK(s, tr->sender_pid == c->client, "sender_pid %d, want %d",
		    tr->sender_pid, c->client);
	CHILD_CHECK(s, tr->sender_euid == 0, "sender_euid %u", tr->sender_euid);
	CHILD_CHECK(s, tr->data_size == 16, "data_size %llu",
		    (unsigned long long)tr->data_size);
	CHILD_CHECK(s, tr->offsets_size == 0, "offsets_size %llu",
		    (unsigned long long)tr->offsets_size);
	CHILD_CHECK(s, tr->data.ptr.buffer >= s->val[15] &&
		    tr->data.ptr.buffer + 16 <= s->val[15] + BMAP_SIZE,
		    "data %#llx outside the mapping", (unsigned long long)tr->data.ptr.buffer);
	CHILD_CHECK(s, !memcmp(data, "ping-0123456789", 16), "data '%.16s'", data);
	txn_put(reply, "pong-9876543210", 16);
	return 1;
}

TEST_F(binder, ping)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_transaction_data rep;
	uint32_t br, codes[8];
	struct txn t;
	struct bdev b;
	struct brd r;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_ping_check);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_put(&t, "ping-0123456789", 16);
	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_PING, 0, &t));
	/*
	 * NOOP, TRANSACTION_COMPLETE, REPLY in one read: the completion of a
	 * synchronous call is held back until the reply is there.
	 */
	ASSERT_EQ(0, br_next(&r, &br, NULL, 0));
	EXPECT_EQ(BR_NOOP, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, br_next(&r, &br, NULL, 0));
	EXPECT_EQ(BR_TRANSACTION_COMPLETE, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, br_next(&r, &br, &rep, sizeof(rep)));
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, rep.code);
	EXPECT_EQ(0, rep.flags);
	EXPECT_EQ(0, rep.sender_pid);
	EXPECT_EQ(0, rep.sender_euid);
	EXPECT_EQ(16, rep.data_size);
	EXPECT_EQ(0, rep.offsets_size);
	EXPECT_TRUE(bdev_owns(&b, rep.data.ptr.buffer, 16));
	EXPECT_EQ(0, memcmp((void *)(uintptr_t)rep.data.ptr.buffer, "pong-9876543210", 16));
	EXPECT_EQ(r.pos, r.len);
	EXPECT_EQ(1, r.reads);
	EXPECT_CHILD_OK(c, mgr);

	EXPECT_EQ(0, txn_free(b.fd, &rep));
	/* A second free of the same buffer: logged, nothing returned. */
	EXPECT_EQ(0, txn_free(b.fd, &rep));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 8));
	bdev_close(&b);
}

static int srv_oneway(struct brd *r, const struct binder_transaction_data *tr,
		      struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;
	uint32_t v;

	CHILD_CHECK(s, tr->flags == TF_ONE_WAY, "flags %#x", tr->flags);
	CHILD_CHECK(s, tr->sender_pid == 0, "one-way sender_pid %d", tr->sender_pid);
	CHILD_CHECK(s, tr->sender_euid == 0, "sender_euid %u", tr->sender_euid);
	CHILD_CHECK(s, tr->data_size == 4, "data_size %llu", (unsigned long long)tr->data_size);
	memcpy(&v, (void *)(uintptr_t)tr->data.ptr.buffer, 4);
	CHILD_CHECK(s, tr->code == 100 + s->val[0], "code %u after %llu", tr->code,
		    (unsigned long long)s->val[0]);
	CHILD_CHECK(s, v == tr->code * 3, "data %u for code %u", v, tr->code);
	s->val[0]++;
	/*
	 * Stop after the last: a synchronous call to stop us could overtake
	 * one-way calls still queued on the node.
	 */
	return s->val[0] == 8;
}

TEST_F(binder, oneway_order)
{
	struct tctx *c = tctx_new(self->dev);
	uint32_t codes[4];
	struct bdev b;
	struct brd r;
	pid_t mgr;
	int i;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	mgr = start_mgr(c, srv_oneway);
	ASSERT_LT(0, mgr);
	for (i = 0; i < 8; i++) {
		struct txn t;

		txn_init(&t);
		txn_put_u32(&t, (100 + i) * 3);
		ASSERT_EQ(0, txn_send(b.fd, 0, 100 + i, TF_ONE_WAY, &t));
		/* Complete at once: nothing to wait for. */
		ASSERT_EQ(2, drain(b.fd, codes, 4));
		EXPECT_EQ(BR_NOOP, codes[0]);
		EXPECT_EQ(BR_TRANSACTION_COMPLETE, codes[1]) TH_LOG("got %s", br_name(codes[1]));
	}
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(8, c->sh->val[0]);
	bdev_close(&b);
}

/* ---- one-way spam detection ------------------------------------------------- */

/*
 * One-way calls of 1 KiB to a manager that never reads them, from a
 * client that asked (or not) to be told of spam: the manager's 128 KiB
 * area has 64 KiB for them; the 52nd leaves less than a tenth of the area
 * free, with more than 50 buffers of this client: suspect, once.
 */
static void spam_run(struct __test_metadata *_metadata, const char *dev, uint32_t enable)
{
	struct tctx *c = tctx_new(dev);
	uint32_t codes[4];
	struct bdev b;
	struct txn t;
	pid_t mgr;
	int i;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, NULL);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, dev, 0, BMAP_SIZE));
	ASSERT_EQ(0, ioctl(b.fd, BINDER_ENABLE_ONEWAY_SPAM_DETECTION, &enable));
	txn_init(&t);
	txn_put(&t, NULL, 1024);
	for (i = 1; i <= 53; i++) {
		uint32_t want = BR_TRANSACTION_COMPLETE;

		if (i == 52 && enable)
			want = BR_ONEWAY_SPAM_SUSPECT;
		ASSERT_EQ(0, txn_send(b.fd, 0, 100, TF_ONE_WAY, &t));
		ASSERT_EQ(2, drain(b.fd, codes, 4));
		EXPECT_EQ(want, codes[1]) TH_LOG("call %d: got %s", i, br_name(codes[1]));
	}
	bevent_post(&c->go);
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

TEST_F(binder, oneway_spam_suspect)
{
	spam_run(_metadata, self->dev, 1);
}

TEST_F(binder, oneway_spam_not_enabled)
{
	spam_run(_metadata, self->dev, 0);
}

/* ---- the freezer ---------------------------------------------------------- */

#define CODE_HOLD	6	/* srv_hold: reply only after c->go */

static int freeze(int fd, pid_t pid, uint32_t enable, uint32_t timeout_ms)
{
	struct binder_freeze_info info = {
		.pid = pid,
		.enable = enable,
		.timeout_ms = timeout_ms,
	};

	return ioctl(fd, BINDER_FREEZE, &info) ? -errno : 0;
}

static int frozen_info(int fd, pid_t pid, struct binder_frozen_status_info *info)
{
	memset(info, 0, sizeof(*info));
	info->pid = pid;
	return ioctl(fd, BINDER_GET_FROZEN_INFO, info) ? -errno : 0;
}

/* sync_recv's bits in @mask are @sync; async_recv is @async. */
static void __attribute__((noinline))
check_frozen_info(struct __test_metadata *_metadata, int line, int fd, pid_t pid,
		  uint32_t sync, uint32_t mask, uint32_t async)
{
	struct binder_frozen_status_info fi;

	EXPECT_EQ(0, frozen_info(fd, pid, &fi)) TH_LOG("line %d", line);
	EXPECT_EQ(sync, fi.sync_recv & mask) TH_LOG("line %d: %u", line, fi.sync_recv);
	EXPECT_EQ(async, fi.async_recv) TH_LOG("line %d", line);
}

#define EXPECT_FROZEN_INFO(fd, pid, sync, async) \
	check_frozen_info(_metadata, __LINE__, (fd), (pid), (sync), ~0u, (async))

TEST_F(binder, freeze_frozen_reply_and_pending_oneway)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_extended_error ee;
	uint32_t br, codes[4];
	struct bdev b;
	struct brd r;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	mgr = start_mgr(c, srv_ping);
	ASSERT_LT(0, mgr);
	EXPECT_EQ(0, ping(&r, 0, &br));
	/* Idle: frozen at once, even with a timeout. */
	ASSERT_EQ(0, freeze(b.fd, mgr, 1, 100));
	EXPECT_FROZEN_INFO(b.fd, mgr, 0, 0);
	/* A new sync call fails, and says why. */
	EXPECT_EQ(-EPROTO, ping(&r, 0, &br));
	EXPECT_EQ(BR_FROZEN_REPLY, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, ioctl(b.fd, BINDER_GET_EXTENDED_ERROR, &ee));
	EXPECT_EQ(BR_FROZEN_REPLY, ee.command);
	EXPECT_EQ(0, ee.param);
	EXPECT_FROZEN_INFO(b.fd, mgr, 1, 0);
	/* A one-way call is queued, and its sender told so. */
	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_PING, TF_ONE_WAY, NULL));
	ASSERT_EQ(2, drain(b.fd, codes, 4));
	EXPECT_EQ(BR_TRANSACTION_PENDING_FROZEN, codes[1]) TH_LOG("got %s", br_name(codes[1]));
	/*
	 * Bit 1 (pending) only until the manager, which reads even frozen
	 * (the cgroup freezer is what stops it), has taken the call.
	 */
	check_frozen_info(_metadata, __LINE__, b.fd, mgr, 1, 1, 1);
	/* Thawed: everything as before (the one-way call was taken first). */
	ASSERT_EQ(0, freeze(b.fd, mgr, 0, 0));
	EXPECT_EQ(0, ping(&r, 0, &br));
	EXPECT_FROZEN_INFO(b.fd, mgr, 0, 0);
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	/* Two pings, the one-way call and the quit. */
	EXPECT_EQ(4, c->sh->val[0]);
	bdev_close(&b);
}

TEST_F(binder, freeze_unknown_pid)
{
	struct binder_frozen_status_info fi;
	struct bdev b;
	pid_t child;

	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	/* No such process. */
	EXPECT_EQ(-EINVAL, freeze(b.fd, INT_MAX, 1, 0));
	EXPECT_EQ(-EINVAL, frozen_info(b.fd, INT_MAX, &fi));
	EXPECT_EQ(-EINVAL, freeze(b.fd, 0, 1, 0));
	/* A process that has no binder file. */
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		pause();
		_exit(0);
	}
	EXPECT_EQ(-EINVAL, freeze(b.fd, child, 1, 0));
	EXPECT_EQ(-EINVAL, frozen_info(b.fd, child, &fi));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* A bad pointer. */
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_FREEZE, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_GET_FROZEN_INFO, NULL));
	EXPECT_EQ(EFAULT, errno);
	/* The caller itself is a binder process: it may freeze itself. */
	EXPECT_EQ(0, freeze(b.fd, getpid(), 1, 0));
	EXPECT_FROZEN_INFO(b.fd, getpid(), 0, 0);
	EXPECT_EQ(0, freeze(b.fd, getpid(), 0, 0));
	bdev_close(&b);
}

/* Serve: CODE_HOLD answers only after c->go, telling c->ready it holds. */
static int srv_hold(struct brd *r, const struct binder_transaction_data *tr,
		    struct txn *reply, void *arg)
{
	struct tctx *c = arg;

	c->sh->val[0]++;
	if (tr->code == CODE_HOLD) {
		bevent_post(&c->ready);
		bevent_wait(&c->go);
	}
	txn_put(reply, "pong", 5);
	return tr->code == CODE_QUIT;
}

/* A client calling CODE_HOLD on handle 0; done when it is answered. */
static int hold_caller(struct tctx *c)
{
	struct binder_transaction_data reply;
	struct bdev b;
	struct brd r;
	uint32_t br = 0;
	int ret;

	ret = bdev_open(&b, c->dev, 0, BMAP_SIZE);
	CHILD_CHECK(c->sh, !ret, "open: %d", ret);
	brd_init(&r, b.fd);
	ret = txn_call(&r, 0, CODE_HOLD, NULL, &br, &reply);
	CHILD_CHECK(c->sh, !ret && br == BR_REPLY, "call: %d %s", ret, br_name(br));
	txn_free(b.fd, &reply);
	bdev_close(&b);
	return 0;
}

/*
 * A process handling a sync call cannot be frozen: EAGAIN, at once
 * without a timeout, after it with one, and the freeze is undone. Its
 * caller, asleep meanwhile, is answered as if nothing happened.
 */
TEST_F(binder, freeze_pending_sync_eagain)
{
	struct tctx *c = tctx_new(self->dev);
	struct timespec t0, t1;
	struct bdev b;
	struct brd r;
	pid_t mgr, caller;
	uint32_t br;
	long ms;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	mgr = start_mgr(c, srv_hold);
	ASSERT_LT(0, mgr);
	caller = spawn(c, hold_caller);
	ASSERT_LT(0, caller);
	ASSERT_EQ(0, bevent_wait(&c->ready));

	EXPECT_EQ(-EAGAIN, freeze(b.fd, mgr, 1, 0));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(-EAGAIN, freeze(b.fd, mgr, 1, 200));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	EXPECT_LE(190, ms) TH_LOG("waited %ld ms of 200", ms);
	/* Not frozen (bit 0 clear); a call is pending (bit 1). */
	EXPECT_FROZEN_INFO(b.fd, mgr, 2, 0);
	/* The caller is in a sync call too: the same for it. */
	EXPECT_EQ(-EAGAIN, freeze(b.fd, caller, 1, 0));
	EXPECT_FROZEN_INFO(b.fd, caller, 2, 0);

	bevent_post(&c->go);
	EXPECT_CHILD_OK(c, caller);
	/* Done: it freezes now. */
	EXPECT_EQ(0, freeze(b.fd, mgr, 1, 200));
	EXPECT_FROZEN_INFO(b.fd, mgr, 0, 0);
	EXPECT_EQ(0, freeze(b.fd, mgr, 0, 0));
	EXPECT_EQ(0, ping(&r, 0, &br));
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

/* ---- freeze notifications -------------------------------------------------- */

/* Expect BR_FROZEN_BINDER {@cookie, @frozen} next. */
static void expect_frozen_binder(struct __test_metadata *_metadata, int line,
				 struct brd *r, uint64_t cookie, uint32_t frozen)
{
	struct binder_frozen_state_info info;
	uint32_t br;

	memset(&info, 0xff, sizeof(info));
	ASSERT_EQ(0, br_wait(r, &br, &info, sizeof(info), NULL)) TH_LOG("line %d", line);
	ASSERT_EQ(BR_FROZEN_BINDER, br) TH_LOG("line %d: got %s", line, br_name(br));
	EXPECT_EQ(cookie, info.cookie) TH_LOG("line %d", line);
	EXPECT_EQ(frozen, info.is_frozen) TH_LOG("line %d", line);
	EXPECT_EQ(0, info.reserved) TH_LOG("line %d", line);
}

#define EXPECT_FROZEN_BINDER(r, cookie, frozen) \
	expect_frozen_binder(_metadata, __LINE__, (r), (cookie), (frozen))

static int bc_handle_cookie(int fd, uint32_t cmd, uint32_t h, uint64_t cookie)
{
	struct bcbuf c;

	bc_init(&c);
	bc_add_handle_cookie(&c, cmd, h, cookie);
	return bc_flush(fd, &c);
}

/*
 * A freeze notification: the state at once, then each change, one at a
 * time (the next only after BC_FREEZE_NOTIFICATION_DONE, with the newest
 * state), and the clear; misuse stops the write with EINVAL.
 */
TEST_F(binder, freeze_notification)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_ptr_cookie pc;
	struct bcbuf cmd;
	uint32_t br, codes[4];
	struct bdev b;
	struct brd r;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, NULL);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	/* No reference yet. */
	EXPECT_EQ(-EINVAL, bc_handle_cookie(b.fd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf1));
	bc_init(&cmd);
	bc_add(&cmd, BC_ENTER_LOOPER, NULL, 0);
	bc_add_u32(&cmd, BC_INCREFS, 0);
	bc_add_handle_cookie(&cmd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf1);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	EXPECT_FROZEN_BINDER(&r, 0xf1, 0);
	/* One request a reference. */
	EXPECT_EQ(-EINVAL, bc_handle_cookie(b.fd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf2));

	/* Not acknowledged: the change waits for DONE. */
	ASSERT_EQ(0, freeze(b.fd, mgr, 1, 0));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));
	EXPECT_EQ(-EINVAL, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf2));
	EXPECT_EQ(0, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf1));
	EXPECT_FROZEN_BINDER(&r, 0xf1, 1);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf1));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));
	/* Thawed and frozen again before it is read: the newest state. */
	ASSERT_EQ(0, freeze(b.fd, mgr, 0, 0));
	ASSERT_EQ(0, freeze(b.fd, mgr, 1, 0));
	EXPECT_FROZEN_BINDER(&r, 0xf1, 1);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf1));
	ASSERT_EQ(0, freeze(b.fd, mgr, 0, 0));
	EXPECT_FROZEN_BINDER(&r, 0xf1, 0);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf1));
	/* Acknowledged twice: nothing to acknowledge. */
	EXPECT_EQ(-EINVAL, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf1));

	/* The clear: the cookie must match. */
	EXPECT_EQ(-EINVAL, bc_handle_cookie(b.fd, BC_CLEAR_FREEZE_NOTIFICATION, 0, 0xf2));
	EXPECT_EQ(-EINVAL, bc_handle_cookie(b.fd, BC_CLEAR_FREEZE_NOTIFICATION, 7, 0xf1));
	ASSERT_EQ(0, bc_handle_cookie(b.fd, BC_CLEAR_FREEZE_NOTIFICATION, 0, 0xf1));
	ASSERT_EQ(0, br_wait(&r, &br, &pc, sizeof(pc), NULL));
	ASSERT_EQ(BR_CLEAR_FREEZE_NOTIFICATION_DONE, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xf1, pc.ptr);
	EXPECT_EQ(-EINVAL, bc_handle_cookie(b.fd, BC_CLEAR_FREEZE_NOTIFICATION, 0, 0xf1));
	/* Cleared: no notice of a change. */
	ASSERT_EQ(0, freeze(b.fd, mgr, 1, 0));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));

	/* A new request; the manager dies with it set, then the client. */
	ASSERT_EQ(0, bc_handle_cookie(b.fd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf3));
	EXPECT_FROZEN_BINDER(&r, 0xf3, 1);
	bevent_post(&c->go);
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));
	bdev_close(&b);
}

/* A clear queued while a notice waits to be read: told as cleared. */
TEST_F(binder, freeze_notification_clear_queued)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_ptr_cookie pc;
	struct bcbuf cmd;
	uint32_t br, codes[4];
	struct bdev b;
	struct brd r;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, NULL);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	bc_init(&cmd);
	bc_add(&cmd, BC_ENTER_LOOPER, NULL, 0);
	bc_add_u32(&cmd, BC_INCREFS, 0);
	bc_add_handle_cookie(&cmd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf1);
	bc_add_handle_cookie(&cmd, BC_CLEAR_FREEZE_NOTIFICATION, 0, 0xf1);
	/* The reference is free again at once. */
	bc_add_handle_cookie(&cmd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf2);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	ASSERT_EQ(0, br_wait(&r, &br, &pc, sizeof(pc), NULL));
	ASSERT_EQ(BR_CLEAR_FREEZE_NOTIFICATION_DONE, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xf1, pc.ptr);
	EXPECT_FROZEN_BINDER(&r, 0xf2, 0);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf2));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));
	bevent_post(&c->go);
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

/*
 * Cleared while told and not acknowledged: the clear is told after DONE,
 * and the handle takes a new request at once, as in the kernel's binder.
 * libbinder does this when a callback is removed and another added before
 * its binder thread sent DONE for the notice it is handling (the DONE
 * waits in its queue behind the callbacks): a write failing there would
 * fail for ever, and abort a looper.
 */
TEST_F(binder, freeze_notification_clear_told_then_request)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_ptr_cookie pc;
	struct bcbuf cmd;
	uint32_t br, codes[4];
	struct bdev b;
	struct brd r;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, NULL);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	bc_init(&cmd);
	bc_add(&cmd, BC_ENTER_LOOPER, NULL, 0);
	bc_add_u32(&cmd, BC_INCREFS, 0);
	bc_add_handle_cookie(&cmd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf1);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	EXPECT_FROZEN_BINDER(&r, 0xf1, 0);
	ASSERT_EQ(0, bc_handle_cookie(b.fd, BC_CLEAR_FREEZE_NOTIFICATION, 0, 0xf1));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));
	EXPECT_EQ(-EINVAL, bc_handle_cookie(b.fd, BC_CLEAR_FREEZE_NOTIFICATION, 0, 0xf1));
	/* libbinder's order: the same cookie (the proxy), DONE still queued. */
	bc_init(&cmd);
	bc_add_handle_cookie(&cmd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf1);
	bc_add_ptr(&cmd, BC_FREEZE_NOTIFICATION_DONE, 0xf1);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	EXPECT_FROZEN_BINDER(&r, 0xf1, 0);
	ASSERT_EQ(0, br_wait(&r, &br, &pc, sizeof(pc), NULL));
	ASSERT_EQ(BR_CLEAR_FREEZE_NOTIFICATION_DONE, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xf1, pc.ptr);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf1));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));

	/* Again with another cookie, and the new notice told meanwhile. */
	ASSERT_EQ(0, freeze(b.fd, mgr, 1, 0));
	EXPECT_FROZEN_BINDER(&r, 0xf1, 1);
	ASSERT_EQ(0, bc_handle_cookie(b.fd, BC_CLEAR_FREEZE_NOTIFICATION, 0, 0xf1));
	ASSERT_EQ(0, bc_handle_cookie(b.fd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf2));
	EXPECT_FROZEN_BINDER(&r, 0xf2, 1);
	/* The new one is the handle's: a clear of the old cookie misses. */
	EXPECT_EQ(-EINVAL, bc_handle_cookie(b.fd, BC_CLEAR_FREEZE_NOTIFICATION, 0, 0xf1));
	EXPECT_EQ(0, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf1));
	ASSERT_EQ(0, br_wait(&r, &br, &pc, sizeof(pc), NULL));
	ASSERT_EQ(BR_CLEAR_FREEZE_NOTIFICATION_DONE, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xf1, pc.ptr);
	/* f2 cleared while told too; the process ends before either DONE. */
	ASSERT_EQ(0, bc_handle_cookie(b.fd, BC_CLEAR_FREEZE_NOTIFICATION, 0, 0xf2));
	ASSERT_EQ(0, bc_handle_cookie(b.fd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf3));
	EXPECT_FROZEN_BINDER(&r, 0xf3, 1);
	bevent_post(&c->go);
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

/*
 * Cleared notices awaiting DONE after a new request are capped a process
 * (CBINDER_MAX_FREEZE_CLEARING, 1024): DONE searches them under the
 * context's lock. The kernel's binder has no cap.
 */
TEST_F(binder, freeze_notification_clearing_capped)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_ptr_cookie pc;
	struct bcbuf cmd;
	uint32_t br, codes[4];
	struct bdev b;
	struct brd r;
	pid_t mgr;
	int i;

	if (variant->upstream)
		SKIP(return, "the kernel's binder has no cap");
	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, NULL);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	bc_init(&cmd);
	bc_add(&cmd, BC_ENTER_LOOPER, NULL, 0);
	bc_add_u32(&cmd, BC_INCREFS, 0);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	for (i = 0; i < 1024; i++) {
		ASSERT_EQ(0, bc_handle_cookie(b.fd, BC_REQUEST_FREEZE_NOTIFICATION,
					      0, 0x1000 + i)) TH_LOG("request %d", i);
		EXPECT_FROZEN_BINDER(&r, 0x1000 + i, 0);
		ASSERT_EQ(0, bc_handle_cookie(b.fd, BC_CLEAR_FREEZE_NOTIFICATION,
					      0, 0x1000 + i));
	}
	EXPECT_EQ(-EBUSY, bc_handle_cookie(b.fd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf1));
	/* One DONE, one clear told: room for one more. */
	EXPECT_EQ(0, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0x1000));
	ASSERT_EQ(0, br_wait(&r, &br, &pc, sizeof(pc), NULL));
	ASSERT_EQ(BR_CLEAR_FREEZE_NOTIFICATION_DONE, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0x1000, pc.ptr);
	EXPECT_EQ(0, bc_handle_cookie(b.fd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf1));
	EXPECT_FROZEN_BINDER(&r, 0xf1, 0);
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));
	/* The process ends with 1023 awaiting DONE: freed with it. */
	bevent_post(&c->go);
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

static pid_t freeze_target;

/* BINDER_FREEZE of freeze_target with a 3 s wait, which fails. */
static int freeze_waiter(struct tctx *c)
{
	struct bdev b;
	int ret;

	ret = bdev_open(&b, c->dev, 0, BMAP_SIZE);
	CHILD_CHECK(c->sh, !ret, "open: %d", ret);
	ret = freeze(b.fd, freeze_target, 1, 3000);
	CHILD_CHECK(c->sh, ret == -EAGAIN, "freeze: %d", ret);
	bdev_close(&b);
	return 0;
}

/*
 * A freeze still waiting for the process's calls to end is not one yet:
 * a notice asked for meanwhile tells thawed, and the freeze, when it
 * fails, has nothing to take back. The kernel's binder tells frozen at
 * once and never corrects it.
 */
TEST_F(binder, freeze_notification_not_while_freezing)
{
	struct tctx *c = tctx_new(self->dev);
	pid_t mgr, caller, freezer;
	uint32_t codes[4];
	struct bcbuf cmd;
	struct bdev b;
	struct brd r;
	int n;

	if (variant->upstream)
		SKIP(return, "the kernel's binder tells frozen while it waits");
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	mgr = start_mgr(c, srv_hold);
	ASSERT_LT(0, mgr);
	caller = spawn(c, hold_caller);
	ASSERT_LT(0, caller);
	ASSERT_EQ(0, bevent_wait(&c->ready));
	freeze_target = mgr;
	freezer = spawn(c, freeze_waiter);
	ASSERT_LT(0, freezer);
	/* Well inside its 3 s wait. */
	usleep(1000 * 1000);
	bc_init(&cmd);
	bc_add(&cmd, BC_ENTER_LOOPER, NULL, 0);
	bc_add_u32(&cmd, BC_INCREFS, 0);
	bc_add_handle_cookie(&cmd, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf1);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	EXPECT_FROZEN_BINDER(&r, 0xf1, 0);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf1));
	EXPECT_CHILD_OK(c, freezer);
	/* Its exit closed its copy of b.fd: that flush is a lone BR_NOOP. */
	n = drain(b.fd, codes, 4);
	EXPECT_TRUE(n == -EAGAIN || (n == 1 && codes[0] == BR_NOOP)) TH_LOG("%d", n);
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));

	bevent_post(&c->go);
	EXPECT_CHILD_OK(c, caller);
	/* A freeze that completes is told, and the thaw. */
	EXPECT_EQ(0, freeze(b.fd, mgr, 1, 200));
	EXPECT_FROZEN_BINDER(&r, 0xf1, 1);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf1));
	EXPECT_EQ(0, freeze(b.fd, mgr, 0, 0));
	EXPECT_FROZEN_BINDER(&r, 0xf1, 0);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_FREEZE_NOTIFICATION_DONE, 0xf1));
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

/* ---- TF_UPDATE_TXN ------------------------------------------------------- */

/*
 * Serve one-way calls, recording code * 100 + first data word in val[1..]
 * (val[0] counts); hold the first in the handler until c->go, so that the
 * node's one-way queue fills meanwhile. Stop at data word 99.
 */
static int srv_update(struct brd *r, const struct binder_transaction_data *tr,
		      struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;
	uint32_t v = 0;
	uint64_t n;

	if (tr->data_size >= 4)
		memcpy(&v, (void *)(uintptr_t)tr->data.ptr.buffer, 4);
	n = s->val[0]++;
	if (n < 15)
		s->val[1 + n] = tr->code * 100 + v;
	if (n == 0) {
		bevent_post(&c->ready);
		bevent_wait(&c->go);
	}
	return v == 99;
}

static void oneway_u32(struct __test_metadata *_metadata, int fd, uint32_t code,
		       uint32_t flags, uint32_t v, uint32_t want)
{
	uint32_t codes[4];
	struct txn t;

	txn_init(&t);
	txn_put_u32(&t, v);
	ASSERT_EQ(0, txn_send(fd, 0, code, TF_ONE_WAY | flags, &t));
	ASSERT_EQ(2, drain(fd, codes, 4));
	EXPECT_EQ(want, codes[1]) TH_LOG("%u/%u: got %s", code, v, br_name(codes[1]));
}

/*
 * While the manager handles a first one-way call, more queue on its
 * node. With the manager frozen, a TF_UPDATE_TXN call replaces the queued
 * one of the same code and flags from the same sender; not frozen, it is
 * an ordinary one-way call.
 */
static void update_run(struct __test_metadata *_metadata, const char *dev, bool frozen)
{
	static const uint64_t want_frozen[] = { 20000, 20203, 20104, 20105, 20399 };
	static const uint64_t want_thawed[] = { 20000, 20101, 20102, 20203, 20104, 20105, 20399 };
	const uint64_t *want = frozen ? want_frozen : want_thawed;
	int i, n = frozen ? 5 : 7;
	uint32_t br = frozen ? BR_TRANSACTION_PENDING_FROZEN : BR_TRANSACTION_COMPLETE;
	struct tctx *c = tctx_new(dev);
	struct bdev b;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, bdev_open(&b, dev, 0, BMAP_SIZE));
	mgr = start_mgr(c, srv_update);
	ASSERT_LT(0, mgr);
	oneway_u32(_metadata, b.fd, 200, 0, 0, BR_TRANSACTION_COMPLETE);
	ASSERT_EQ(0, bevent_wait(&c->ready));
	if (frozen)
		ASSERT_EQ(0, freeze(b.fd, mgr, 1, 0));
	oneway_u32(_metadata, b.fd, 201, TF_UPDATE_TXN, 1, br);
	oneway_u32(_metadata, b.fd, 201, TF_UPDATE_TXN, 2, br);
	/* Another code; then the same code without the flag. */
	oneway_u32(_metadata, b.fd, 202, TF_UPDATE_TXN, 3, br);
	oneway_u32(_metadata, b.fd, 201, 0, 4, br);
	oneway_u32(_metadata, b.fd, 201, TF_UPDATE_TXN, 5, br);
	if (frozen)
		ASSERT_EQ(0, freeze(b.fd, mgr, 0, 0));
	oneway_u32(_metadata, b.fd, 203, 0, 99, BR_TRANSACTION_COMPLETE);
	bevent_post(&c->go);
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(n, c->sh->val[0]);
	for (i = 0; i < n; i++)
		EXPECT_EQ(want[i], c->sh->val[1 + i]) TH_LOG("call %d", i);
	bdev_close(&b);
}

TEST_F(binder, update_txn_replaces_queued_when_frozen)
{
	update_run(_metadata, self->dev, true);
}

TEST_F(binder, update_txn_not_frozen_is_plain_oneway)
{
	update_run(_metadata, self->dev, false);
}

/* The context manager calls back into the client during the client's call. */
static int srv_nested(struct brd *r, const struct binder_transaction_data *tr,
		      struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;
	struct binder_transaction_data rep;
	struct flat_binder_object *o = txn_rx_obj(tr, 0);
	struct txn t;
	uint32_t br;
	int ret;

	CHILD_CHECK(s, tr->code == CODE_NESTED, "code %#x", tr->code);
	CHILD_CHECK(s, o && o->hdr.type == BINDER_TYPE_HANDLE, "type %#x",
		    o ? o->hdr.type : 0);
	CHILD_CHECK(s, o->handle != 0, "handle 0");
	s->val[0] = o->handle;
	txn_init(&t);
	txn_put(&t, "call-back", 10);
	ret = txn_call(r, o->handle, CODE_PING, &t, &br, &rep);
	CHILD_CHECK(s, !ret, "nested call: %d", ret);
	CHILD_CHECK(s, br == BR_REPLY, "nested call: %s", br_name(br));
	CHILD_CHECK(s, rep.data_size == 13 &&
		    !memcmp((void *)(uintptr_t)rep.data.ptr.buffer, "nested-reply", 13),
		    "nested reply data");
	txn_free(r->fd, &rep);
	txn_put(reply, "outer-reply", 12);
	return 1;
}

TEST_F(binder, nested_call)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_transaction_data tr;
	struct brefs refs = { 0 };
	struct txn t, rt;
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_nested);
	ASSERT_LT(0, mgr);
	/* Not a looper: what reaches us can only come to this thread. */
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_binder(&t, 0xa0, 0xa1, 0);
	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_NESTED, 0, &t));
	ASSERT_EQ(0, br_wait(&r, &br, &tr, sizeof(tr), &refs));
	EXPECT_EQ(BR_TRANSACTION_COMPLETE, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, br_wait(&r, &br, &tr, sizeof(tr), &refs));
	ASSERT_EQ(BR_TRANSACTION, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(CODE_PING, tr.code);
	EXPECT_EQ(0xa0, tr.target.ptr);
	EXPECT_EQ(0xa1, tr.cookie);
	EXPECT_EQ(mgr, tr.sender_pid);
	EXPECT_EQ(10, tr.data_size);
	EXPECT_EQ(0, memcmp((void *)(uintptr_t)tr.data.ptr.buffer, "call-back", 10));
	EXPECT_EQ(0, txn_free(b.fd, &tr));
	txn_init(&rt);
	txn_put(&rt, "nested-reply", 13);
	ASSERT_EQ(0, txn_reply(b.fd, 0, &rt));
	ASSERT_EQ(0, br_wait(&r, &br, &tr, sizeof(tr), &refs));
	EXPECT_EQ(BR_TRANSACTION_COMPLETE, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, br_wait(&r, &br, &tr, sizeof(tr), &refs));
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(12, tr.data_size);
	EXPECT_EQ(0, memcmp((void *)(uintptr_t)tr.data.ptr.buffer, "outer-reply", 12));
	EXPECT_EQ(0, txn_free(b.fd, &tr));
	/* The node we sent was made strong for the manager's reference. */
	EXPECT_EQ(1, refs.increfs);
	EXPECT_EQ(1, refs.acquire);
	EXPECT_EQ(0xa0, refs.last_ptr);
	EXPECT_EQ(0xa1, refs.last_cookie);
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

/*
 * The manager, called by the client, calls back into it (t2, while the
 * client waits on t1) and then its thread goes (c->arg == 1: THREAD_EXIT,
 * the process stays; else the process exits). Regression test for a
 * use-after-free: the older transaction t1, still linked in the client's
 * stack, was freed with the manager's thread.
 */
static int srv_callback_then_exit(struct brd *r, const struct binder_transaction_data *tr,
				  struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;
	struct flat_binder_object *o = txn_rx_obj(tr, 0);
	struct txn t;

	CHILD_CHECK(s, o && o->hdr.type == BINDER_TYPE_HANDLE, "no handle");
	txn_init(&t);
	txn_put(&t, "call-back", 10);
	CHILD_CHECK(s, !txn_send(r->fd, o->handle, CODE_PING, 0, &t), "send t2");
	/* t2 is queued to the client: only then does this thread go. */
	CHILD_CHECK(s, !bevent_wait(&c->go), "go");
	if (c->arg) {
		CHILD_CHECK(s, !ioctl(r->fd, BINDER_THREAD_EXIT, 0), "THREAD_EXIT");
		bevent_post(&c->ready);
		/* Keep the process and its node until the test is done. */
		bevent_wait(&c->go);
		_exit(0);
	}
	_exit(0);
}

static void callback_caller_gone(struct __test_metadata *_metadata,
				 const char *dev, bool thread_only)
{
	struct tctx *c = tctx_new(dev);
	struct binder_transaction_data tr;
	struct txn t, rt;
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	c->arg = thread_only ? (void *)1 : NULL;
	mgr = start_mgr(c, srv_callback_then_exit);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_binder(&t, 0xb0, 0xb1, 0);
	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_NESTED, 0, &t));
	ASSERT_EQ(0, br_wait(&r, &br, &tr, sizeof(tr), NULL));
	EXPECT_EQ(BR_TRANSACTION_COMPLETE, br) TH_LOG("got %s", br_name(br));
	/* t2, the call back; the client's stack is now t2 over t1. */
	ASSERT_EQ(0, br_wait(&r, &br, &tr, sizeof(tr), NULL));
	ASSERT_EQ(BR_TRANSACTION, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, txn_free(b.fd, &tr));
	ASSERT_EQ(0, bevent_post(&c->go));
	/* The manager's thread (or process) is gone. */
	ASSERT_EQ(0, thread_only ? bevent_wait(&c->ready) : child_status(mgr));
	/*
	 * Answering t2 finds its caller gone: the replier is done
	 * (TRANSACTION_COMPLETE) and t1, the call the gone thread was
	 * handling, fails to us with DEAD_REPLY.
	 */
	txn_init(&rt);
	txn_put(&rt, "late", 5);
	ASSERT_EQ(0, txn_reply(b.fd, 0, &rt));
	ASSERT_EQ(0, br_wait(&r, &br, &tr, sizeof(tr), NULL));
	EXPECT_EQ(BR_TRANSACTION_COMPLETE, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, br_wait(&r, &br, &tr, sizeof(tr), NULL));
	EXPECT_EQ(BR_DEAD_REPLY, br) TH_LOG("got %s", br_name(br));
	/*
	 * The stack is empty and sound: a new call and a thread exit work
	 * (one-way: the manager's process may live on without a thread).
	 */
	EXPECT_EQ(0, txn_send(b.fd, 0, CODE_PING, TF_ONE_WAY, NULL));
	ASSERT_EQ(0, br_wait(&r, &br, &tr, sizeof(tr), NULL));
	if (thread_only) {
		/* The manager's process lives, without a thread to answer. */
		EXPECT_EQ(BR_TRANSACTION_COMPLETE, br) TH_LOG("got %s", br_name(br));
	} else {
		EXPECT_EQ(BR_DEAD_REPLY, br) TH_LOG("got %s", br_name(br));
	}
	EXPECT_EQ(0, ioctl(b.fd, BINDER_THREAD_EXIT, 0));
	bdev_close(&b);
	if (thread_only) {
		bevent_post(&c->go);
		EXPECT_EQ(0, child_status(mgr));
	}
}

TEST_F(binder, callback_caller_thread_exits)
{
	callback_caller_gone(_metadata, self->dev, true);
}

TEST_F(binder, callback_caller_process_exits)
{
	callback_caller_gone(_metadata, self->dev, false);
}

static int srv_registry(struct brd *r, const struct binder_transaction_data *tr,
			struct txn *reply, void *arg);

/* A weak handle can be neither called nor passed on as a strong one. */
static int srv_weak_check(struct brd *r, const struct binder_transaction_data *tr,
			  struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;
	struct flat_binder_object *o = txn_rx_obj(tr, 0);
	struct binder_transaction_data rep;
	uint32_t br;
	int ret;

	CHILD_CHECK(s, o && o->hdr.type == BINDER_TYPE_WEAK_HANDLE, "type %#x",
		    o ? o->hdr.type : 0);
	ret = txn_call(r, o->handle, CODE_PING, NULL, &br, &rep);
	CHILD_CHECK(s, !ret && br == BR_FAILED_REPLY, "call weak: %d %s", ret,
		    br_name(br));
	s->val[0] = 1;
	/* Handed back as a strong handle: the reply fails to the caller. */
	txn_handle(reply, o->handle);
	return BSERVE_STOP;
}

TEST_F(binder, weak_handle_is_not_strong)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_transaction_data tr;
	struct txn t;
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_weak_check);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_obj(&t, &(struct flat_binder_object){
		.hdr.type = BINDER_TYPE_WEAK_BINDER, .binder = 0xc0, .cookie = 0xc1,
	}, sizeof(struct flat_binder_object));
	ASSERT_EQ(0, txn_call(&r, 0, CODE_PING, &t, &br, &tr));
	EXPECT_EQ(BR_FAILED_REPLY, br) TH_LOG("got %s", br_name(br));
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(1, c->sh->val[0]);
	bdev_close(&b);
}

/*
 * Two binder files of one process are two processes to binder: one may
 * call a node of the other; only handle 0 is refused from the manager's
 * process, whichever of its files.
 */
TEST_F(binder, two_files_of_one_process)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_transaction_data tr;
	struct flat_binder_object *o;
	struct brd ra, rb;
	struct bdev a, b;
	struct txn t;
	uint32_t br, h;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_registry);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&a, self->dev, 0, BMAP_SIZE));
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&ra, a.fd);
	brd_init(&rb, b.fd);
	/* File a registers a node; file b gets a handle on it. */
	txn_init(&t);
	txn_binder(&t, 0x5000, 0x5001, 0);
	ASSERT_EQ(0, txn_call(&ra, 0, CODE_ADD, &t, &br, &tr));
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, txn_free(a.fd, &tr));
	ASSERT_EQ(0, txn_call(&rb, 0, CODE_GET, NULL, &br, &tr));
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s", br_name(br));
	o = txn_rx_obj(&tr, 0);
	ASSERT_NE(NULL, o);
	ASSERT_EQ(BINDER_TYPE_HANDLE, o->hdr.type);
	h = o->handle;
	ASSERT_EQ(0, bc_u32(b.fd, BC_ACQUIRE, h));
	EXPECT_EQ(0, txn_free(b.fd, &tr));
	/* b calls a's node (one-way: this thread then serves it on a). */
	ASSERT_EQ(0, bc_plain(a.fd, BC_ENTER_LOOPER));
	ASSERT_EQ(0, txn_send(b.fd, h, CODE_PING, TF_ONE_WAY, NULL));
	ASSERT_EQ(0, br_wait(&rb, &br, &tr, sizeof(tr), NULL));
	EXPECT_EQ(BR_TRANSACTION_COMPLETE, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, br_wait(&ra, &br, &tr, sizeof(tr), NULL));
	ASSERT_EQ(BR_TRANSACTION, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0x5000, tr.target.ptr);
	EXPECT_EQ(0, txn_free(a.fd, &tr));
	EXPECT_EQ(0, quit(&rb, 0));
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&a);
	bdev_close(&b);
}

/*
 * Three processes: a service registers its binder with the context
 * manager, which hands the test a handle to it; the test calls the
 * service through that handle.
 */
static int srv_registry(struct brd *r, const struct binder_transaction_data *tr,
			struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;
	struct flat_binder_object *o;

	switch (tr->code) {
	case CODE_ADD:
		o = txn_rx_obj(tr, 0);
		CHILD_CHECK(s, o && o->hdr.type == BINDER_TYPE_HANDLE, "ADD: type %#x",
			    o ? o->hdr.type : 0);
		CHILD_CHECK(s, o->handle, "ADD: handle 0");
		CHILD_CHECK(s, !bc_u32(r->fd, BC_ACQUIRE, o->handle), "BC_ACQUIRE");
		s->val[0] = o->handle;
		return 0;
	case CODE_GET:
		CHILD_CHECK(s, s->val[0], "GET before ADD");
		txn_handle(reply, s->val[0]);
		return 0;
	case CODE_RELEASE:
		CHILD_CHECK(s, !bc_u32(r->fd, BC_RELEASE, s->val[0]), "BC_RELEASE");
		s->val[0] = 0;
		return 0;
	case CODE_PING:
		txn_put(reply, "pong", 5);
		return 0;
	case CODE_QUIT:
		return 1;
	}
	child_fail(s, __LINE__, "code %#x", tr->code);
}

static int srv_service(struct brd *r, const struct binder_transaction_data *tr,
		       struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;

	CHILD_CHECK(s, tr->code == CODE_PING, "code %#x", tr->code);
	CHILD_CHECK(s, tr->target.ptr == 0x5000 && tr->cookie == 0x5001,
		    "target %#llx cookie %#llx", (unsigned long long)tr->target.ptr,
		    (unsigned long long)tr->cookie);
	CHILD_CHECK(s, tr->sender_pid == c->client, "sender_pid %d", tr->sender_pid);
	CHILD_CHECK(s, tr->data_size == 5 &&
		    !memcmp((void *)(uintptr_t)tr->data.ptr.buffer, "ping", 5), "data");
	s->val[8]++;
	txn_put(reply, "pong", 5);
	return 0;
}

/* Registers with the manager, then serves srv_service (until killed). */
static int service_main(struct tctx *c)
{
	struct binder_transaction_data rep;
	struct bchild *s = c->sh;
	struct txn t;
	struct bdev b;
	struct brd r;
	uint32_t br;
	int ret;

	ret = bdev_open(&b, c->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open: %d", ret);
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_binder(&t, 0x5000, 0x5001, 0);
	ret = txn_call(&r, 0, CODE_ADD, &t, &br, &rep);
	CHILD_CHECK(s, !ret && br == BR_REPLY, "ADD: %d %s", ret, br_name(br));
	txn_free(b.fd, &rep);
	CHILD_CHECK(s, !bc_plain(b.fd, BC_ENTER_LOOPER), "ENTER_LOOPER");
	bevent_post(&c->ready);
	ret = bserve(&r, srv_service, c);
	CHILD_CHECK(s, !ret, "serve: %d", ret);
	return 0;
}

/* The manager and the service; *@h a strong handle to the service. */
static int three_setup(struct tctx *c, struct brd *r, pid_t *mgr, pid_t *svc, uint32_t *h)
{
	struct binder_transaction_data rep;
	struct flat_binder_object *o;
	uint32_t br;
	int ret;

	*mgr = start_mgr(c, srv_registry);
	if (*mgr < 0)
		return -ECHILD;
	*svc = spawn(c, service_main);
	if (*svc < 0 || bevent_wait(&c->ready))
		return -ECHILD;
	ret = txn_call(r, 0, CODE_GET, NULL, &br, &rep);
	if (ret)
		return ret;
	if (br != BR_REPLY)
		return -EPROTO;
	o = txn_rx_obj(&rep, 0);
	if (!o || rep.offsets_size != 8 || o->hdr.type != BINDER_TYPE_HANDLE || !o->handle)
		return -EBADMSG;
	*h = o->handle;
	ret = bc_u32(r->fd, BC_ACQUIRE, *h);
	if (!ret)
		ret = txn_free(r->fd, &rep);
	return ret;
}

TEST_F(binder, handle_passing)
{
	struct tctx *c = tctx_new(self->dev);
	pid_t mgr, svc;
	struct bdev b;
	struct brd r;
	uint32_t h, br;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	ASSERT_EQ(0, three_setup(c, &r, &mgr, &svc, &h)) TH_LOG("%s", c->sh->err);
	EXPECT_EQ(0, ping(&r, h, &br)) TH_LOG("%s", br_name(br));
	EXPECT_EQ(0, ping(&r, h, &br)) TH_LOG("%s", br_name(br));
	EXPECT_EQ(2, c->sh->val[8]);
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	kill(svc, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, child_status(svc)) TH_LOG("%s", c->sh->err);
	bdev_close(&b);
}

/*
 * Many threads of one context at once, as Android runs them: a service's
 * pool of loopers takes sync and one-way calls from a client while the
 * service's own threads, loopers too, call the context manager. A thread
 * waiting for its reply must never be handed a call queued to its process
 * (cask takes work under a lock of the process, and a reply pops its
 * caller's stack and queues the answer in one hold of it), every call is
 * answered and every one-way call arrives: nothing is lost or misrouted.
 */
#define POOL_LOOPERS	2
#define POOL_CALLERS	2
#define POOL_CALLS	200

/* val[9]: one-way calls served; val[10]: callers done. */
static int srv_pool(struct brd *r, const struct binder_transaction_data *tr,
		    struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;

	CHILD_CHECK(s, tr->code == CODE_PING, "code %#x", tr->code);
	CHILD_CHECK(s, tr->target.ptr == 0x5000, "target %#llx",
		    (unsigned long long)tr->target.ptr);
	if (tr->flags & TF_ONE_WAY)
		__atomic_add_fetch(&s->val[9], 1, __ATOMIC_SEQ_CST);
	else
		txn_put(reply, "pong", 5);
	return BSERVE_NEXT;
}

struct pool_thread {
	struct tctx *c;
	int fd;
};

static void *pool_looper(void *arg)
{
	struct pool_thread *pt = arg;
	struct bchild *s = pt->c->sh;
	struct brd r;
	int ret;

	brd_init(&r, pt->fd);
	CHILD_CHECK(s, !bc_plain(pt->fd, BC_ENTER_LOOPER), "ENTER_LOOPER");
	ret = bserve(&r, srv_pool, pt->c);
	child_fail(s, __LINE__, "looper: serve: %d", ret);
}

static void *pool_caller(void *arg)
{
	struct pool_thread *pt = arg;
	struct binder_transaction_data rep;
	struct bchild *s = pt->c->sh;
	struct txn t;
	struct brd r;
	uint32_t br;
	int i, ret;

	brd_init(&r, pt->fd);
	/* A looper too: it could take process work whenever its stack is empty. */
	CHILD_CHECK(s, !bc_plain(pt->fd, BC_ENTER_LOOPER), "ENTER_LOOPER");
	for (i = 0; i < POOL_CALLS; i++) {
		txn_init(&t);
		txn_put(&t, "ping", 5);
		ret = txn_call(&r, 0, CODE_PING, &t, &br, &rep);
		CHILD_CHECK(s, !ret && br == BR_REPLY, "call %d: %d %s", i, ret,
			    br_name(br));
		CHILD_CHECK(s, rep.data_size == 5 &&
			    !memcmp((void *)(uintptr_t)rep.data.ptr.buffer, "pong", 5),
			    "call %d: reply", i);
		CHILD_CHECK(s, !txn_free(pt->fd, &rep), "free");
	}
	__atomic_add_fetch(&s->val[10], 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int pool_main(struct tctx *c)
{
	struct pool_thread pt = { .c = c };
	struct binder_transaction_data rep;
	struct bchild *s = c->sh;
	pthread_t th;
	struct txn t;
	struct bdev b;
	struct brd r;
	uint32_t br;
	int i, ret;

	ret = bdev_open(&b, c->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open: %d", ret);
	pt.fd = b.fd;
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_binder(&t, 0x5000, 0x5001, 0);
	ret = txn_call(&r, 0, CODE_ADD, &t, &br, &rep);
	CHILD_CHECK(s, !ret && br == BR_REPLY, "ADD: %d %s", ret, br_name(br));
	txn_free(b.fd, &rep);
	for (i = 0; i < POOL_LOOPERS; i++)
		CHILD_CHECK(s, !pthread_create(&th, NULL, pool_looper, &pt), "looper");
	bevent_post(&c->ready);
	/* The client's traffic starts now: the callers run into it. */
	bevent_wait(&c->go);
	for (i = 0; i < POOL_CALLERS; i++)
		CHILD_CHECK(s, !pthread_create(&th, NULL, pool_caller, &pt), "caller");
	for (;;)
		pause();
}

TEST_F(binder, pool_threads_of_one_context)
{
	struct binder_transaction_data rep;
	struct tctx *c = tctx_new(self->dev);
	struct flat_binder_object *o;
	uint32_t h, br, sent = 0;
	pid_t mgr, svc;
	struct bdev b;
	struct brd r;
	int i;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	mgr = start_mgr(c, srv_registry);
	ASSERT_LT(0, mgr);
	svc = spawn(c, pool_main);
	ASSERT_LT(0, svc);
	ASSERT_EQ(0, bevent_wait(&c->ready)) TH_LOG("%s", c->sh->err);
	ASSERT_EQ(0, txn_call(&r, 0, CODE_GET, NULL, &br, &rep));
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s", br_name(br));
	o = txn_rx_obj(&rep, 0);
	ASSERT_NE(NULL, o);
	h = o->handle;
	ASSERT_EQ(0, bc_u32(b.fd, BC_ACQUIRE, h));
	ASSERT_EQ(0, txn_free(b.fd, &rep));

	ASSERT_EQ(0, bevent_post(&c->go));
	/* Until the service's callers are done, and at least 50 rounds. */
	for (i = 0; i < 2000; i++) {
		struct binder_transaction_data tr;

		if (i >= 50 && __atomic_load_n(&c->sh->val[10], __ATOMIC_SEQ_CST) == POOL_CALLERS)
			break;

		ASSERT_EQ(0, txn_send(b.fd, h, CODE_PING, TF_ONE_WAY, NULL));
		ASSERT_EQ(0, br_wait(&r, &br, &tr, sizeof(tr), NULL));
		ASSERT_EQ(BR_TRANSACTION_COMPLETE, br) TH_LOG("got %s", br_name(br));
		sent++;
		ASSERT_EQ(0, ping(&r, h, &br)) TH_LOG("round %d: %s; %s", i, br_name(br),
						      c->sh->err);
	}
	EXPECT_EQ(POOL_CALLERS, __atomic_load_n(&c->sh->val[10], __ATOMIC_SEQ_CST))
		TH_LOG("%s", c->sh->err);
	/* One-way calls may still be on their way: up to 5 s more. */
	for (i = 0; i < 500 && __atomic_load_n(&c->sh->val[9], __ATOMIC_SEQ_CST) < sent; i++)
		usleep(10000);
	EXPECT_EQ(sent, __atomic_load_n(&c->sh->val[9], __ATOMIC_SEQ_CST));
	EXPECT_EQ(0, waitpid(svc, NULL, WNOHANG)) TH_LOG("%s", c->sh->err);
	EXPECT_EQ('\0', c->sh->err[0]) TH_LOG("%s", c->sh->err);
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	kill(svc, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, child_status(svc)) TH_LOG("%s", c->sh->err);
	bdev_close(&b);
}

/*
 * A read that fails (the call it took cannot be written where user space
 * said) asks for no looper: user space never sees that read's codes, so a
 * BR_SPAWN_LOOPER in it would never be answered, and no thread would ever
 * be asked for again. The next read asks, as in the kernel's binder.
 */
static int spawn_after_fault_main(struct tctx *c)
{
	struct binder_transaction_data tr;
	struct binder_write_read bwr = {};
	long pg = sysconf(_SC_PAGESIZE);
	struct bchild *s = c->sh;
	uint32_t max = 1, br;
	struct txn reply;
	struct bdev b;
	struct brd r;
	char *p;
	int ret;

	ret = bdev_open(&b, c->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open: %d", ret);
	CHILD_CHECK(s, !ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0), "SET_CONTEXT_MGR: %s",
		    strerror(errno));
	CHILD_CHECK(s, !ioctl(b.fd, BINDER_SET_MAX_THREADS, &max), "SET_MAX_THREADS");
	CHILD_CHECK(s, !bc_plain(b.fd, BC_ENTER_LOOPER), "ENTER_LOOPER");
	p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(s, p != MAP_FAILED && !mprotect(p + pg, pg, PROT_NONE), "mmap");
	bevent_post(&c->ready);
	/* Room for BR_NOOP only: the call that comes cannot be written. */
	bwr.read_buffer = (uintptr_t)(p + pg - 4);
	bwr.read_size = 256;
	ret = ioctl(b.fd, BINDER_WRITE_READ, &bwr);
	CHILD_CHECK(s, ret == -1 && errno == EFAULT, "faulting read: %d %s", ret,
		    strerror(errno));
	bevent_post(&c->ready);
	brd_init(&r, b.fd);
	ret = br_next(&r, &br, NULL, 0);
	CHILD_CHECK(s, !ret, "read: %d", ret);
	s->val[0] = r.first;
	ret = br_wait(&r, &br, &tr, sizeof(tr), NULL);
	CHILD_CHECK(s, !ret && br == BR_TRANSACTION, "%d %s", ret, br_name(br));
	txn_free(b.fd, &tr);
	txn_init(&reply);
	CHILD_CHECK(s, !txn_reply(b.fd, 0, &reply), "reply");
	ret = br_wait(&r, &br, NULL, 0, NULL);
	CHILD_CHECK(s, !ret && br == BR_TRANSACTION_COMPLETE, "%d %s", ret, br_name(br));
	bdev_close(&b);
	return 0;
}

TEST_F(binder, no_spawn_request_in_failed_read)
{
	struct binder_transaction_data rep;
	struct tctx *c = tctx_new(self->dev);
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = spawn(c, spawn_after_fault_main);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bevent_wait(&c->ready)) TH_LOG("%s", c->sh->err);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	/* Taken by the read that faults: the call fails. */
	ASSERT_EQ(0, txn_call(&r, 0, CODE_PING, NULL, &br, &rep));
	EXPECT_EQ(BR_FAILED_REPLY, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, bevent_wait(&c->ready)) TH_LOG("%s", c->sh->err);
	ASSERT_EQ(0, txn_call(&r, 0, CODE_PING, NULL, &br, &rep));
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s; %s", br_name(br), c->sh->err);
	EXPECT_EQ(0, txn_free(b.fd, &rep));
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(BR_SPAWN_LOOPER, c->sh->val[0]) TH_LOG("first code %s",
							 br_name(c->sh->val[0]));
	bdev_close(&b);
}

/* A service dies: BR_DEAD_BINDER with our cookie, then calls get BR_DEAD_REPLY. */
TEST_F(binder, death_of_service)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_ptr_cookie dead;
	struct bcbuf cmd;
	pid_t mgr, svc;
	struct bdev b;
	struct brd r;
	uint32_t h, br, codes[4];

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	ASSERT_EQ(0, three_setup(c, &r, &mgr, &svc, &h)) TH_LOG("%s", c->sh->err);
	bc_init(&cmd);
	bc_add(&cmd, BC_ENTER_LOOPER, NULL, 0);
	bc_add_handle_cookie(&cmd, BC_REQUEST_DEATH_NOTIFICATION, h, 0xd1e);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));
	kill(svc, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, child_status(svc));
	ASSERT_EQ(0, br_wait(&r, &br, &dead, sizeof(dead), NULL));
	ASSERT_EQ(BR_DEAD_BINDER, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xd1e, dead.ptr);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_DEAD_BINDER_DONE, 0xd1e));
	/* A sync call to the dead service. */
	EXPECT_EQ(-EPROTO, ping(&r, h, &br));
	EXPECT_EQ(BR_DEAD_REPLY, br) TH_LOG("got %s", br_name(br));
	/* One-way too. */
	ASSERT_EQ(0, txn_send(b.fd, h, CODE_PING, TF_ONE_WAY, NULL));
	ASSERT_EQ(0, br_wait(&r, &br, NULL, 0, NULL));
	EXPECT_EQ(BR_DEAD_REPLY, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

TEST_F(binder, death_request_and_clear)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_ptr_cookie pc;
	struct bcbuf cmd;
	struct bdev b;
	struct brd r;
	uint32_t br, codes[4];
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, NULL);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	bc_init(&cmd);
	bc_add(&cmd, BC_ENTER_LOOPER, NULL, 0);
	bc_add_u32(&cmd, BC_INCREFS, 0);
	bc_add_handle_cookie(&cmd, BC_REQUEST_DEATH_NOTIFICATION, 0, 0xc1ea);
	bc_add_handle_cookie(&cmd, BC_CLEAR_DEATH_NOTIFICATION, 0, 0xc1ea);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	ASSERT_EQ(0, br_next(&r, &br, NULL, 0));
	EXPECT_EQ(BR_NOOP, br);
	ASSERT_EQ(0, br_next(&r, &br, &pc, sizeof(pc)));
	ASSERT_EQ(BR_CLEAR_DEATH_NOTIFICATION_DONE, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xc1ea, pc.ptr);
	/* No BR_DEAD_BINDER when the manager goes now. */
	bevent_post(&c->go);
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));
	/* The manager is gone: handle 0 is dead. */
	EXPECT_EQ(-EPROTO, ping(&r, 0, &br));
	EXPECT_EQ(BR_DEAD_REPLY, br) TH_LOG("got %s", br_name(br));
	bdev_close(&b);
}

TEST_F(binder, call_without_context_mgr)
{
	struct bdev b;
	struct brd r;
	uint32_t br;

	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	EXPECT_EQ(-EPROTO, ping(&r, 0, &br));
	EXPECT_EQ(BR_DEAD_REPLY, br) TH_LOG("got %s", br_name(br));
	bdev_close(&b);
}

TEST_F(binder, call_unknown_handle)
{
	struct binder_extended_error ee = { 0 };
	struct tctx *c = tctx_new(self->dev);
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_ping);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	EXPECT_EQ(-EPROTO, ping(&r, 7, &br));
	EXPECT_EQ(BR_FAILED_REPLY, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, ioctl(b.fd, BINDER_GET_EXTENDED_ERROR, &ee));
	EXPECT_EQ(BR_FAILED_REPLY, ee.command);
	EXPECT_EQ(-EINVAL, ee.param);
	ASSERT_EQ(0, ioctl(b.fd, BINDER_GET_EXTENDED_ERROR, &ee));
	EXPECT_EQ(BR_OK, ee.command);
	EXPECT_EQ(0, ee.param);
	EXPECT_EQ(0, ee.id);
	EXPECT_EQ(0, ping(&r, 0, &br));
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(2, c->sh->val[0]);
	bdev_close(&b);
}

/* A context manager that did not map anything cannot receive. */
TEST_F(binder, call_unmapped_target)
{
	struct tctx *c = tctx_new(self->dev);
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	c->no_mmap = true;
	mgr = start_mgr(c, NULL);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	EXPECT_EQ(-EPROTO, ping(&r, 0, &br));
	EXPECT_EQ(BR_DEAD_REPLY, br) TH_LOG("got %s", br_name(br));
	bevent_post(&c->go);
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

/* ---- identity ---------------------------------------------------------------- */

static int srv_ident(struct brd *r, const struct binder_transaction_data *tr,
		     struct txn *reply, void *arg)
{
	struct tctx *c = arg;

	c->sh->val[0] = tr->sender_pid;
	c->sh->val[1] = tr->sender_euid;
	c->sh->val[2] = getpid();
	return tr->code == CODE_QUIT;
}

static int client_as_1000(struct tctx *c)
{
	struct bchild *s = c->sh;
	struct bdev b;
	struct brd r;
	uint32_t br;
	int ret;

	ret = bdev_open(&b, c->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open: %d", ret);
	CHILD_CHECK(s, !setresuid(1000, 1000, 1000), "setresuid");
	brd_init(&r, b.fd);
	s->val[4] = getpid();
	ret = ping(&r, 0, &br);
	CHILD_CHECK(s, ret == -EBADMSG && br == BR_REPLY, "ping: %d %s", ret, br_name(br));
	return 0;
}

/* The sender's euid at the time of the call, the sender's pid as the receiver sees it. */
TEST_F(binder, sender_euid)
{
	struct tctx *c = tctx_new(self->dev);
	struct bdev b;
	struct brd r;
	pid_t mgr, pid;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_ident);
	ASSERT_LT(0, mgr);
	pid = spawn(c, client_as_1000);
	EXPECT_CHILD_OK(c, pid);
	EXPECT_EQ(pid, c->sh->val[0]);
	EXPECT_EQ(1000, c->sh->val[1]);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(getpid(), c->sh->val[0]);
	EXPECT_EQ(0, c->sh->val[1]);
	bdev_close(&b);
}

/* Runs mgr_main as pid 1 of a new PID namespace. */
static int mgr_in_pidns(struct tctx *c)
{
	pid_t pid;

	if (unshare(CLONE_NEWPID))
		child_fail(c->sh, __LINE__, "unshare(CLONE_NEWPID): %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(mgr_main(c));
	}
	return child_status(pid);
}

static int client_in_pidns(struct tctx *c)
{
	pid_t pid;

	if (unshare(CLONE_NEWPID))
		child_fail(c->sh, __LINE__, "unshare(CLONE_NEWPID): %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		struct bdev b;
		struct brd r;
		int ret;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		CHILD_CHECK(c->sh, getpid() == 1, "pid %d", getpid());
		ret = bdev_open(&b, c->dev, 0, BMAP_SIZE);
		CHILD_CHECK(c->sh, !ret, "open: %d", ret);
		brd_init(&r, b.fd);
		ret = quit(&r, 0);
		CHILD_CHECK(c->sh, !ret, "quit: %d", ret);
		_exit(0);
	}
	c->sh->val[5] = pid;
	return child_status(pid);
}

TEST_F(binder, sender_pid_namespaces)
{
	struct tctx *c = tctx_new(self->dev);
	struct bdev b;
	struct brd r;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	c->serve = srv_ident;
	/* Manager inside, caller outside: the caller has no pid there. */
	mgr = spawn(c, mgr_in_pidns);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bevent_wait(&c->ready));
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(0, c->sh->val[0]);
	EXPECT_EQ(1, c->sh->val[2]);
	bdev_close(&b);
}

TEST_F(binder, sender_pid_from_child_namespace)
{
	struct tctx *c = tctx_new(self->dev);
	pid_t mgr, pid;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_ident);
	ASSERT_LT(0, mgr);
	/* Caller inside (pid 1 there), manager outside: its host pid. */
	pid = spawn(c, client_in_pidns);
	EXPECT_CHILD_OK(c, pid);
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_NE(0, c->sh->val[5]);
	EXPECT_EQ(c->sh->val[5], c->sh->val[0]);
}

/* ---- references -------------------------------------------------------------- */

/* Refcount commands on handle 0 from a client: the manager hears nothing. */
TEST_F(binder, refcounts_handle0)
{
	struct tctx *c = tctx_new(self->dev);
	struct bcbuf cmd;
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_ping);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	bc_init(&cmd);
	bc_add_u32(&cmd, BC_INCREFS, 0);
	bc_add_u32(&cmd, BC_ACQUIRE, 0);
	bc_add_u32(&cmd, BC_RELEASE, 0);
	bc_add_u32(&cmd, BC_DECREFS, 0);
	bc_add_u32(&cmd, BC_INCREFS, 0);
	bc_add_u32(&cmd, BC_ACQUIRE, 0);
	EXPECT_EQ(0, bc_flush(b.fd, &cmd));
	EXPECT_EQ(0, ping(&r, 0, &br));
	bc_add_u32(&cmd, BC_RELEASE, 0);
	bc_add_u32(&cmd, BC_DECREFS, 0);
	EXPECT_EQ(0, bc_flush(b.fd, &cmd));
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	/* bserve fails on anything but transactions: it saw just our two. */
	EXPECT_EQ(2, c->sh->val[0]);
	bdev_close(&b);
}

/*
 * A node's owner is asked for (BR_INCREFS, BR_ACQUIRE) and told to drop
 * (BR_RELEASE, BR_DECREFS) its references as other processes' handles
 * come and go.
 */
static int srv_holder(struct brd *r, const struct binder_transaction_data *tr,
		      struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;
	struct flat_binder_object *o;
	struct binder_node_info_for_ref info = { 0 };
	struct bcbuf cmd;

	switch (tr->code) {
	case CODE_ADD:
		o = txn_rx_obj(tr, 0);
		CHILD_CHECK(s, o && o->hdr.type == BINDER_TYPE_HANDLE, "type %#x",
			    o ? o->hdr.type : 0);
		s->val[0] = o->handle;
		bc_init(&cmd);
		bc_add_u32(&cmd, BC_INCREFS, o->handle);
		bc_add_u32(&cmd, BC_ACQUIRE, o->handle);
		CHILD_CHECK(s, !bc_flush(r->fd, &cmd), "acquire");
		info.handle = o->handle;
		CHILD_CHECK(s, !ioctl(r->fd, BINDER_GET_NODE_INFO_FOR_REF, &info),
			    "NODE_INFO_FOR_REF: %s", strerror(errno));
		s->val[1] = info.strong_count;
		s->val[2] = info.weak_count;
		return 0;
	case CODE_RELEASE:
		bc_init(&cmd);
		bc_add_u32(&cmd, BC_RELEASE, s->val[0]);
		bc_add_u32(&cmd, BC_DECREFS, s->val[0]);
		CHILD_CHECK(s, !bc_flush(r->fd, &cmd), "release");
		info.handle = s->val[0];
		s->val[3] = ioctl(r->fd, BINDER_GET_NODE_INFO_FOR_REF, &info) ? errno : 0;
		return 1;
	}
	child_fail(s, __LINE__, "code %#x", tr->code);
}

TEST_F(binder, node_refcounts)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_transaction_data rep;
	struct binder_node_debug_info dbg = { 0 };
	struct brefs refs = { 0 };
	struct txn t;
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_holder);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_binder(&t, 0x7000, 0x7001, 0);
	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_ADD, 0, &t));
	for (;;) {
		ASSERT_EQ(0, br_wait(&r, &br, &rep, sizeof(rep), &refs));
		if (br != BR_TRANSACTION_COMPLETE)
			break;
	}
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, txn_free(b.fd, &rep));
	EXPECT_EQ(1, refs.increfs);
	EXPECT_EQ(1, refs.acquire);
	EXPECT_EQ(0, refs.release);
	EXPECT_EQ(0, refs.decrefs);
	EXPECT_EQ(0x7000, refs.last_ptr);
	EXPECT_EQ(0x7001, refs.last_cookie);
	/* The node as we see it. */
	ASSERT_EQ(0, ioctl(b.fd, BINDER_GET_NODE_DEBUG_INFO, &dbg));
	EXPECT_EQ(0x7000, dbg.ptr);
	EXPECT_EQ(0x7001, dbg.cookie);
	EXPECT_EQ(1, dbg.has_strong_ref);
	EXPECT_EQ(1, dbg.has_weak_ref);
	dbg.ptr = 0x7000;
	ASSERT_EQ(0, ioctl(b.fd, BINDER_GET_NODE_DEBUG_INFO, &dbg));
	EXPECT_EQ(0, dbg.ptr);
	/* Just below it, and from the top: the node, then none. */
	dbg.ptr = 0x6fff;
	ASSERT_EQ(0, ioctl(b.fd, BINDER_GET_NODE_DEBUG_INFO, &dbg));
	EXPECT_EQ(0x7000, dbg.ptr);
	dbg.ptr = ~(binder_uintptr_t)0;
	ASSERT_EQ(0, ioctl(b.fd, BINDER_GET_NODE_DEBUG_INFO, &dbg));
	EXPECT_EQ(0, dbg.ptr);

	/* The manager lets go: the node's owner hears it once we loop. */
	ASSERT_EQ(0, bc_plain(b.fd, BC_ENTER_LOOPER));
	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_RELEASE, 0, NULL));
	for (;;) {
		ASSERT_EQ(0, br_wait(&r, &br, &rep, sizeof(rep), &refs));
		if (br != BR_TRANSACTION_COMPLETE)
			break;
	}
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, txn_free(b.fd, &rep));
	EXPECT_CHILD_OK(c, mgr);
	/* Strong: its ref and our pending BR_ACQUIRE are both done. */
	EXPECT_EQ(1, c->sh->val[1]);
	/* The ref was gone after BC_RELEASE + BC_DECREFS. */
	EXPECT_EQ(EINVAL, c->sh->val[3]);
	if (refs.release == 0) {
		uint32_t codes[8];
		int n = drain(b.fd, codes, 8), i;

		for (i = 0; i < n; i++) {
			refs.release += codes[i] == BR_RELEASE;
			refs.decrefs += codes[i] == BR_DECREFS;
		}
	}
	EXPECT_EQ(1, refs.release);
	EXPECT_EQ(1, refs.decrefs);
	bdev_close(&b);
}

/* Misuse of references is logged and ignored: no error, no BR_ code. */
TEST_F(binder, refcount_misuse)
{
	struct tctx *c = tctx_new(self->dev);
	struct bcbuf cmd;
	struct bdev b;
	struct brd r;
	uint32_t br, codes[4];
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_ping);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	bc_init(&cmd);
	bc_add_u32(&cmd, BC_DECREFS, 0);
	bc_add_u32(&cmd, BC_RELEASE, 0);
	bc_add_u32(&cmd, BC_RELEASE, 42);
	bc_add_u32(&cmd, BC_DECREFS, 42);
	bc_add_u32(&cmd, BC_INCREFS, 42);
	bc_add_u32(&cmd, BC_ACQUIRE, 42);
	bc_add_u32(&cmd, BC_INCREFS, 0);
	bc_add_u32(&cmd, BC_DECREFS, 0);
	bc_add_u32(&cmd, BC_DECREFS, 0);
	bc_add_handle_cookie(&cmd, BC_REQUEST_DEATH_NOTIFICATION, 42, 1);
	bc_add_handle_cookie(&cmd, BC_CLEAR_DEATH_NOTIFICATION, 42, 1);
	bc_add_ptr(&cmd, BC_DEAD_BINDER_DONE, 0x1234);
	bc_add_ptr_cookie(&cmd, BC_INCREFS_DONE, 0x1234, 0x5678);
	bc_add_ptr_cookie(&cmd, BC_ACQUIRE_DONE, 0x1234, 0x5678);
	EXPECT_EQ(0, bc_flush(b.fd, &cmd));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));
	/* Still works. */
	EXPECT_EQ(0, ping(&r, 0, &br));
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

TEST_F(binder, free_bogus_buffer)
{
	struct tctx *c = tctx_new(self->dev);
	struct bcbuf cmd;
	struct bdev b;
	struct brd r;
	uint32_t br, codes[4];
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_ping);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	bc_init(&cmd);
	bc_add_ptr(&cmd, BC_FREE_BUFFER, 0);
	bc_add_ptr(&cmd, BC_FREE_BUFFER, 0xdeadbeef000);
	bc_add_ptr(&cmd, BC_FREE_BUFFER, (uintptr_t)b.map);
	bc_add_ptr(&cmd, BC_FREE_BUFFER, (uintptr_t)b.map + 8);
	bc_add_ptr(&cmd, BC_FREE_BUFFER, (uintptr_t)b.map + BMAP_SIZE);
	EXPECT_EQ(0, bc_flush(b.fd, &cmd));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));
	EXPECT_EQ(0, ping(&r, 0, &br));
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

/* ---- file descriptors ----------------------------------------------------------- */

static int srv_fd(struct brd *r, const struct binder_transaction_data *tr,
		  struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;
	struct binder_fd_object *o = txn_rx_obj(tr, 0);
	char buf[16] = "";
	int fl;

	CHILD_CHECK(s, o && o->hdr.type == BINDER_TYPE_FD, "type %#x", o ? o->hdr.type : 0);
	CHILD_CHECK(s, o->cookie == 0xfdc, "cookie %#llx", (unsigned long long)o->cookie);
	fl = fcntl(o->fd, F_GETFD);
	CHILD_CHECK(s, fl >= 0, "fd %d: %s", o->fd, strerror(errno));
	CHILD_CHECK(s, fl & FD_CLOEXEC, "fd %d not close-on-exec", o->fd);
	CHILD_CHECK(s, read(o->fd, buf, sizeof(buf)) == 7, "read");
	CHILD_CHECK(s, !strcmp(buf, "fdpass"), "read '%s'", buf);
	close(o->fd);
	s->val[0]++;
	return 1;
}

TEST_F(binder, fd_passing)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_transaction_data rep;
	struct txn t;
	struct bdev b;
	struct brd r;
	uint32_t br;
	int p[2];
	pid_t mgr;

	ASSERT_NE(NULL, c);
	c->mgr_ext = true;
	c->mgr_flags = FLAT_BINDER_FLAG_ACCEPTS_FDS;
	mgr = start_mgr(c, srv_fd);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(7, write(p[1], "fdpass", 7));
	close(p[1]);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_fd(&t, p[0], 0xfdc);
	ASSERT_EQ(0, txn_call(&r, 0, CODE_PING, &t, &br, &rep));
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, txn_free(b.fd, &rep));
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(1, c->sh->val[0]);
	close(p[0]);
	bdev_close(&b);
}

/* A node that does not accept fds (plain SET_CONTEXT_MGR makes one). */
TEST_F(binder, fd_rejected)
{
	struct binder_extended_error ee = { 0 };
	struct tctx *c = tctx_new(self->dev);
	struct binder_transaction_data rep;
	struct txn t;
	struct bdev b;
	struct brd r;
	uint32_t br;
	int p[2];
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_ping);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_fd(&t, p[0], 0);
	ASSERT_EQ(0, txn_call(&r, 0, CODE_PING, &t, &br, &rep));
	EXPECT_EQ(BR_FAILED_REPLY, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, ioctl(b.fd, BINDER_GET_EXTENDED_ERROR, &ee));
	EXPECT_EQ(BR_FAILED_REPLY, ee.command);
	EXPECT_EQ(-EPERM, ee.param);
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(1, c->sh->val[0]);
	close(p[0]);
	close(p[1]);
	bdev_close(&b);
}

/*
 * Scatter-gather: a parent buffer holding two fds (an FDA) and a pointer
 * to a child buffer (a PTR with a parent): the receiver gets both buffers
 * copied into its mapping, the pointer fixed up and fds of its own.
 */
struct sg_parent {
	char tag[8];
	uint32_t fds[2];
	uint64_t child;
};

static int srv_sg(struct brd *r, const struct binder_transaction_data *tr,
		  struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;
	struct binder_buffer_object *pa = txn_rx_obj(tr, 0), *ch = txn_rx_obj(tr, 2);
	struct binder_fd_array_object *fda = txn_rx_obj(tr, 1);
	uint64_t map = s->val[15];
	struct sg_parent *par;
	char buf[8];
	int i;

	CHILD_CHECK(s, tr->offsets_size == 24, "offsets_size %llu",
		    (unsigned long long)tr->offsets_size);
	CHILD_CHECK(s, pa->hdr.type == BINDER_TYPE_PTR && ch->hdr.type == BINDER_TYPE_PTR &&
		    fda->hdr.type == BINDER_TYPE_FDA, "types");
	CHILD_CHECK(s, pa->length == sizeof(*par) && ch->length == 20, "lengths");
	CHILD_CHECK(s, pa->buffer >= map && pa->buffer + pa->length <= map + BMAP_SIZE,
		    "parent %#llx not in the mapping", (unsigned long long)pa->buffer);
	CHILD_CHECK(s, ch->buffer >= map && ch->buffer + ch->length <= map + BMAP_SIZE,
		    "child %#llx not in the mapping", (unsigned long long)ch->buffer);
	CHILD_CHECK(s, fda->num_fds == 2 && fda->parent == 0 && fda->parent_offset == 8,
		    "fda");
	par = (void *)(uintptr_t)pa->buffer;
	CHILD_CHECK(s, !memcmp(par->tag, "parent!", 8), "tag '%.8s'", par->tag);
	CHILD_CHECK(s, par->child == ch->buffer, "child pointer %#llx, copy at %#llx",
		    (unsigned long long)par->child, (unsigned long long)ch->buffer);
	CHILD_CHECK(s, !memcmp((void *)(uintptr_t)ch->buffer, "child-buffer-data!!", 20),
		    "child data");
	for (i = 0; i < 2; i++) {
		CHILD_CHECK(s, read(par->fds[i], buf, 2) == 2, "read fd %d (%u)", i,
			    par->fds[i]);
		CHILD_CHECK(s, buf[0] == 'A' + i, "fd %d read '%c'", i, buf[0]);
		close(par->fds[i]);
	}
	s->val[0]++;
	return 1;
}

TEST_F(binder, scatter_gather_fda)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_transaction_data rep;
	struct sg_parent par = { .tag = "parent!" };
	char child[20] = "child-buffer-data!!";
	int pa[2], pb[2];
	struct txn t;
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	c->mgr_ext = true;
	c->mgr_flags = FLAT_BINDER_FLAG_ACCEPTS_FDS;
	mgr = start_mgr(c, srv_sg);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, pipe(pa));
	ASSERT_EQ(0, pipe(pb));
	ASSERT_EQ(2, write(pa[1], "A", 2));
	ASSERT_EQ(2, write(pb[1], "B", 2));
	par.fds[0] = pa[0];
	par.fds[1] = pb[0];
	par.child = 0xbad;	/* overwritten by the fix-up */
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_put(&t, "sg-head", 8);
	txn_ptr(&t, &par, sizeof(par), 0, 0, 0);
	txn_fda(&t, 2, 0, offsetof(struct sg_parent, fds));
	txn_ptr(&t, child, sizeof(child), BINDER_BUFFER_FLAG_HAS_PARENT, 0,
		offsetof(struct sg_parent, child));
	EXPECT_EQ(24 + 24, t.buffers_size);
	ASSERT_EQ(0, txn_call(&r, 0, CODE_PING, &t, &br, &rep));
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, txn_free(b.fd, &rep));
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(1, c->sh->val[0]);
	/* Our copy is untouched. */
	EXPECT_EQ(0xbad, par.child);
	bdev_close(&b);
}

/* ---- malformed transactions ------------------------------------------------------ */

/*
 * Send @tr (with @buffers_size for _SG) to a context manager that accepts
 * fds and expect BR_FAILED_REPLY; then a ping must still work and the
 * manager must have seen only that ping.
 */
static void expect_rejected(struct __test_metadata *_metadata, const char *dev,
			    struct binder_transaction_data *tr, uint64_t buffers_size,
			    int want_param)
{
	struct binder_extended_error ee = { 0 };
	struct binder_node_debug_info dbg = { 0 };
	struct tctx *c = tctx_new(dev);
	struct brefs refs = { 0 };
	struct bdev b;
	struct brd r;
	uint32_t br, codes[8];
	pid_t mgr;
	int n;

	ASSERT_NE(NULL, c);
	c->mgr_ext = true;
	c->mgr_flags = FLAT_BINDER_FLAG_ACCEPTS_FDS;
	mgr = start_mgr(c, srv_ping);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	ASSERT_EQ(0, bc_tr(b.fd, buffers_size ? BC_TRANSACTION_SG : BC_TRANSACTION, tr,
			   buffers_size));
	ASSERT_EQ(0, br_next(&r, &br, NULL, 0));
	EXPECT_EQ(BR_NOOP, br);
	ASSERT_EQ(0, br_wait(&r, &br, NULL, 0, &refs));
	EXPECT_EQ(BR_FAILED_REPLY, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, ioctl(b.fd, BINDER_GET_EXTENDED_ERROR, &ee));
	EXPECT_EQ(BR_FAILED_REPLY, ee.command);
	EXPECT_TRUE(want_param ? ee.param == want_param : ee.param < 0)
		TH_LOG("extended error param %d, want %d", ee.param, want_param);
	/* Nothing more, and no node or reference left behind. */
	n = drain(b.fd, codes, 8);
	EXPECT_EQ(-EAGAIN, n) TH_LOG("left: %s", n > 1 ? br_name(codes[1]) : "");
	EXPECT_EQ(0, refs.increfs + refs.acquire);
	ASSERT_EQ(0, ioctl(b.fd, BINDER_GET_NODE_DEBUG_INFO, &dbg));
	EXPECT_EQ(0, dbg.ptr) TH_LOG("a node is left");
	EXPECT_EQ(0, ping(&r, 0, &br)) TH_LOG("%s", br_name(br));
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(2, c->sh->val[0]);
	bdev_close(&b);
}

TEST_F(binder, bad_offsets_size)
{
	struct binder_transaction_data tr;
	struct txn t;

	txn_init(&t);
	txn_binder(&t, 0xb0, 0xb1, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	tr.offsets_size = 4;
	expect_rejected(_metadata, self->dev, &tr, 0, -EINVAL);
}

TEST_F(binder, bad_offset_misaligned)
{
	struct binder_transaction_data tr;
	struct txn t;

	txn_init(&t);
	txn_put(&t, NULL, 8);
	txn_binder(&t, 0xb0, 0xb1, 0);
	t.offs[0] = 2;
	memmove(t.data + 2, t.data + 8, sizeof(struct flat_binder_object));
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, 0, -EINVAL);
}

TEST_F(binder, bad_offset_past_data)
{
	struct binder_transaction_data tr;
	struct txn t;

	txn_init(&t);
	txn_binder(&t, 0xb0, 0xb1, 0);
	t.offs[0] = t.len;
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, 0, 0);
	t.offs[0] = ~(binder_size_t)0 - 8;
	expect_rejected(_metadata, self->dev, &tr, 0, 0);
}

TEST_F(binder, bad_object_straddles_end)
{
	struct binder_transaction_data tr;
	struct txn t;

	txn_init(&t);
	txn_put(&t, NULL, 16);
	txn_binder(&t, 0xb0, 0xb1, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	tr.data_size = 16 + 16;		/* the object needs 24 */
	expect_rejected(_metadata, self->dev, &tr, 0, -EINVAL);
}

TEST_F(binder, bad_objects_overlap)
{
	struct binder_transaction_data tr;
	struct txn t;

	txn_init(&t);
	txn_binder(&t, 0xb0, 0xb1, 0);
	txn_binder(&t, 0xc0, 0xc1, 0);
	/* The second object starts inside the first. */
	t.offs[1] = 8;
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, 0, 0);
	/* Offsets going backwards. */
	t.offs[1] = 0;
	t.offs[0] = 24;
	expect_rejected(_metadata, self->dev, &tr, 0, 0);
}

TEST_F(binder, bad_object_type)
{
	struct binder_transaction_data tr;
	struct txn t;
	uint32_t junk[6] = { 0x12345678 };

	txn_init(&t);
	txn_obj(&t, junk, sizeof(junk));
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, 0, -EINVAL);
}

/*
 * An error half-way through: a binder object translated, then a bad one.
 * The reference made for the first is dropped again (CVE-2023-21255,
 * CVE-2023-20938 class): no BR_INCREFS, no node left (expect_rejected()).
 */
TEST_F(binder, bad_second_object)
{
	struct binder_transaction_data tr;
	uint32_t junk[6] = { 0x12345678 };
	struct txn t;

	txn_init(&t);
	txn_binder(&t, 0xb0, 0xb1, 0);
	txn_obj(&t, junk, sizeof(junk));
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, 0, -EINVAL);
	/* A handle we do not have, after a good binder. */
	txn_init(&t);
	txn_binder(&t, 0xb0, 0xb1, 0);
	txn_handle(&t, 42);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, 0, 0);
	/* A bad fd after a good binder. */
	txn_init(&t);
	txn_binder(&t, 0xb0, 0xb1, 0);
	txn_fd(&t, 1000, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, 0, 0);
}

/* A PTR's parent must be an earlier PTR (CVE-2020-0041 class). */
TEST_F(binder, bad_ptr_parent_index)
{
	struct binder_transaction_data tr;
	char a[16] = "aaaa", bb[16] = "bbbb";
	struct txn t;

	/* Out of range. */
	txn_init(&t);
	txn_put(&t, "sg-head", 8);
	txn_ptr(&t, a, sizeof(a), 0, 0, 0);
	txn_ptr(&t, bb, sizeof(bb), BINDER_BUFFER_FLAG_HAS_PARENT, 5, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, t.buffers_size, -EINVAL);
	/* Itself. */
	txn_init(&t);
	txn_put(&t, "sg-head", 8);
	txn_ptr(&t, a, sizeof(a), 0, 0, 0);
	txn_ptr(&t, bb, sizeof(bb), BINDER_BUFFER_FLAG_HAS_PARENT, 1, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, t.buffers_size, -EINVAL);
	/* Not a PTR. */
	txn_init(&t);
	txn_put(&t, "sg-head", 8);
	txn_binder(&t, 0xb0, 0xb1, 0);
	txn_ptr(&t, bb, sizeof(bb), BINDER_BUFFER_FLAG_HAS_PARENT, 0, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, t.buffers_size, -EINVAL);
	/* An FDA whose parent is itself. */
	txn_init(&t);
	txn_put(&t, "sg-head", 8);
	txn_ptr(&t, a, sizeof(a), 0, 0, 0);
	txn_fda(&t, 1, 1, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, t.buffers_size, -EINVAL);
}

TEST_F(binder, bad_ptr_parent_offset)
{
	struct binder_transaction_data tr;
	char a[16] = "aaaa", bb[16] = "bbbb";
	struct txn t;

	/* The pointer would not fit in the parent. */
	txn_init(&t);
	txn_put(&t, "sg-head", 8);
	txn_ptr(&t, a, sizeof(a), 0, 0, 0);
	txn_ptr(&t, bb, sizeof(bb), BINDER_BUFFER_FLAG_HAS_PARENT, 0, 12);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, t.buffers_size, -EINVAL);
	txn_init(&t);
	txn_put(&t, "sg-head", 8);
	txn_ptr(&t, a, sizeof(a), 0, 0, 0);
	txn_ptr(&t, bb, sizeof(bb), BINDER_BUFFER_FLAG_HAS_PARENT, 0, 1ULL << 40);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, t.buffers_size, -EINVAL);
	/* An FDA larger than its parent. */
	txn_init(&t);
	txn_put(&t, "sg-head", 8);
	txn_ptr(&t, a, sizeof(a), 0, 0, 0);
	txn_fda(&t, 4, 0, 4);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, t.buffers_size, -EINVAL);
	/* Fix-ups must go forward: a second child before the first one. */
	txn_init(&t);
	txn_put(&t, "sg-head", 8);
	txn_ptr(&t, a, sizeof(a), 0, 0, 0);
	txn_ptr(&t, bb, sizeof(bb), BINDER_BUFFER_FLAG_HAS_PARENT, 0, 8);
	txn_ptr(&t, bb, sizeof(bb), BINDER_BUFFER_FLAG_HAS_PARENT, 0, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, t.buffers_size, -EINVAL);
}

/*
 * Upstream refuses a fix-up (PTR child or FDA) into a parent buffer
 * object that sits at offset 0 of the data: its "nothing to fix up in"
 * test takes offset 0 for "no parent yet". Real parcels start with a
 * header, so nothing depends on it; cask matches it.
 */
TEST_F(binder, sg_parent_at_offset_zero)
{
	struct binder_transaction_data tr;
	char a[16] = "aaaa", bb[16] = "bbbb";
	struct txn t;

	txn_init(&t);
	txn_ptr(&t, a, sizeof(a), 0, 0, 0);
	txn_ptr(&t, bb, sizeof(bb), BINDER_BUFFER_FLAG_HAS_PARENT, 0, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, t.buffers_size, -EINVAL);
	txn_init(&t);
	txn_ptr(&t, a, sizeof(a), 0, 0, 0);
	txn_fda(&t, 1, 0, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, t.buffers_size, -EINVAL);
}

/* An FDA of no fds is fine (CVE-2023-20938 / CVE-2026-23194 class), even last. */
static int srv_fda_empty(struct brd *r, const struct binder_transaction_data *tr,
			 struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct binder_fd_array_object *fda = txn_rx_obj(tr, 1);

	CHILD_CHECK(c->sh, fda && fda->hdr.type == BINDER_TYPE_FDA && fda->num_fds == 0,
		    "fda");
	c->sh->val[0]++;
	return 1;
}

TEST_F(binder, sg_fda_no_fds)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_transaction_data rep;
	char a[16] = "aaaa";
	struct txn t;
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	c->mgr_ext = true;
	c->mgr_flags = FLAT_BINDER_FLAG_ACCEPTS_FDS;
	mgr = start_mgr(c, srv_fda_empty);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_put(&t, "sg-head", 8);
	txn_ptr(&t, a, sizeof(a), 0, 0, 0);
	txn_fda(&t, 0, 0, 16);
	ASSERT_EQ(0, txn_call(&r, 0, CODE_PING, &t, &br, &rep));
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, txn_free(b.fd, &rep));
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(1, c->sh->val[0]);
	bdev_close(&b);
}

TEST_F(binder, bad_sg_buffers_size)
{
	struct binder_transaction_data tr;
	char a[64] = "aaaa";
	struct txn t;

	txn_init(&t);
	txn_put(&t, "sg-head", 8);
	txn_ptr(&t, a, sizeof(a), 0, 0, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	expect_rejected(_metadata, self->dev, &tr, 32, -EINVAL);
	/* A PTR in a plain BC_TRANSACTION: no room for it at all. */
	expect_rejected(_metadata, self->dev, &tr, 0, -EINVAL);
}

TEST_F(binder, bad_user_pointers)
{
	struct binder_transaction_data tr;
	struct txn t;

	txn_init(&t);
	txn_put(&t, "data", 5);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	tr.data.ptr.buffer = 0x10;
	expect_rejected(_metadata, self->dev, &tr, 0, -EFAULT);
	txn_init(&t);
	txn_binder(&t, 0xb0, 0xb1, 0);
	txn_tr(&t, &tr, 0, CODE_PING, 0);
	tr.data.ptr.offsets = 0x10;
	expect_rejected(_metadata, self->dev, &tr, 0, -EFAULT);
}

/* ---- thread exit and epoll (CVE-2019-2215 class) -------------------------------- */

TEST_F(binder, thread_exit_with_epoll)
{
	struct epoll_event ev = { .events = EPOLLIN }, out[2];
	struct binder_version ver;
	struct bdev b;
	uint32_t codes[4];
	int ep;

	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	/* A new thread polls readable (it must return once): make it first. */
	ASSERT_EQ(0, ioctl(b.fd, BINDER_VERSION, &ver));
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, b.fd, &ev));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 0));
	/* Work on the thread: a call without a context manager. */
	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_PING, 0, NULL));
	EXPECT_EQ(1, epoll_wait(ep, out, 2, 0));
	EXPECT_EQ(EPOLLIN, out[0].events & EPOLLIN);
	/* The thread, its queue and its wait queue go while epoll watches. */
	EXPECT_EQ(0, ioctl(b.fd, BINDER_THREAD_EXIT, 0));
	EXPECT_LE(0, epoll_wait(ep, out, 2, 0));
	EXPECT_EQ(0, close(ep));
	/* The pending BR_DEAD_REPLY went with the thread. */
	ASSERT_EQ(0, ioctl(b.fd, BINDER_VERSION, &ver));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4));

	/* Again, closing the binder fd first. */
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, b.fd, &ev));
	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_PING, 0, NULL));
	EXPECT_EQ(0, ioctl(b.fd, BINDER_THREAD_EXIT, 0));
	EXPECT_EQ(0, epoll_ctl(ep, EPOLL_CTL_DEL, b.fd, &ev));
	bdev_close(&b);
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 0));
	EXPECT_EQ(0, close(ep));
}

/* Closing with everything in flight: a caller blocked on a manager that exits. */
static int srv_exit_midcall(struct brd *r, const struct binder_transaction_data *tr,
			    struct txn *reply, void *arg)
{
	_exit(0);
}

TEST_F(binder, target_exits_during_call)
{
	struct tctx *c = tctx_new(self->dev);
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_exit_midcall);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	EXPECT_EQ(-EPROTO, ping(&r, 0, &br));
	EXPECT_EQ(BR_DEAD_REPLY, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, child_status(mgr));
	bdev_close(&b);
}

/* Runs mgr_main in a new user namespace that maps host uids 100000+. */
static int mgr_in_userns(struct tctx *c)
{
	char path[64], map[] = "0 100000 65536\n";
	struct bevent mapped;
	int fd, pid;
	char x;

	if (bevent_init(&mapped))
		return 100;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (unshare(CLONE_NEWUSER))
			child_fail(c->sh, __LINE__, "unshare(CLONE_NEWUSER): %s", strerror(errno));
		bevent_post(&c->go);
		if (read(mapped.fd[0], &x, 1) != 1)
			_exit(101);
		_exit(mgr_main(c));
	}
	if (pid < 0 || bevent_wait(&c->go))
		return 102;
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t)strlen(map))
		child_fail(c->sh, __LINE__, "uid_map: %s", strerror(errno));
	close(fd);
	bevent_post(&mapped);
	return child_status(pid);
}

/* The receiver sees the sender's euid in its own user namespace. */
TEST_F(binder, sender_euid_user_namespace)
{
	struct tctx *c = tctx_new(self->dev);
	struct bdev b;
	struct brd r;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	c->serve = srv_ident;
	mgr = spawn(c, mgr_in_userns);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bevent_wait(&c->ready)) TH_LOG("%s", c->sh->err);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	/*
	 * Root of the host is not mapped there: upstream gives (uid_t)-1
	 * (from_kuid(), not the overflow uid 65534 of from_kuid_munged()).
	 */
	EXPECT_EQ(0xffffffff, c->sh->val[1]);
	EXPECT_EQ(getpid(), c->sh->val[0]);
	bdev_close(&b);
}

/* A reply may carry an fd only if the call said TF_ACCEPT_FDS. */
static int srv_reply_fd(struct brd *r, const struct binder_transaction_data *tr,
			struct txn *reply, void *arg)
{
	struct tctx *c = arg;
	struct bchild *s = c->sh;
	struct binder_transaction_data rtr;
	struct txn t;
	uint32_t br;
	int p[2], ret;

	CHILD_CHECK(s, !pipe(p), "pipe");
	CHILD_CHECK(s, write(p[1], "reply-fd", 9) == 9, "write");
	txn_init(&t);
	txn_fd(&t, p[0], 0);
	/* Reply here, to see what the replier gets. */
	ret = txn_reply(r->fd, 0, &t);
	CHILD_CHECK(s, !ret, "reply: %d", ret);
	ret = br_wait(r, &br, &rtr, sizeof(rtr), NULL);
	CHILD_CHECK(s, !ret, "read: %d", ret);
	s->val[tr->code & 1] = br;
	close(p[0]);
	close(p[1]);
	return tr->code == 1 ? BSERVE_REPLIED_STOP : BSERVE_REPLIED;
}

TEST_F(binder, reply_fd_needs_accept_fds)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_transaction_data rep;
	struct binder_fd_object *o;
	char buf[16] = "";
	struct bdev b;
	struct brd r;
	uint32_t br;
	pid_t mgr;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_reply_fd);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	/* Without TF_ACCEPT_FDS: the caller gets BR_FAILED_REPLY. */
	ASSERT_EQ(0, txn_send(b.fd, 0, 0, 0, NULL));
	ASSERT_EQ(0, br_wait(&r, &br, NULL, 0, NULL));
	EXPECT_EQ(BR_TRANSACTION_COMPLETE, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, br_wait(&r, &br, NULL, 0, NULL));
	EXPECT_EQ(BR_FAILED_REPLY, br) TH_LOG("got %s", br_name(br));
	/* With it: a working fd. */
	ASSERT_EQ(0, txn_send(b.fd, 0, 1, TF_ACCEPT_FDS, NULL));
	ASSERT_EQ(0, br_wait(&r, &br, NULL, 0, NULL));
	EXPECT_EQ(BR_TRANSACTION_COMPLETE, br) TH_LOG("got %s", br_name(br));
	ASSERT_EQ(0, br_wait(&r, &br, &rep, sizeof(rep), NULL));
	ASSERT_EQ(BR_REPLY, br) TH_LOG("got %s", br_name(br));
	o = txn_rx_obj(&rep, 0);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(BINDER_TYPE_FD, o->hdr.type);
	EXPECT_EQ(9, read(o->fd, buf, sizeof(buf)));
	EXPECT_STREQ("reply-fd", buf);
	close(o->fd);
	EXPECT_EQ(0, txn_free(b.fd, &rep));
	EXPECT_CHILD_OK(c, mgr);
	/*
	 * What the replier read after each reply: TRANSACTION_COMPLETE even
	 * for the reply that failed (only the caller hears of the failure).
	 */
	EXPECT_EQ(BR_TRANSACTION_COMPLETE, c->sh->val[0]) TH_LOG("got %s",
								 br_name(c->sh->val[0]));
	EXPECT_EQ(BR_TRANSACTION_COMPLETE, c->sh->val[1]) TH_LOG("got %s",
								 br_name(c->sh->val[1]));
	bdev_close(&b);
}

/* The original "Bad Binder" pattern: a thread polled, exits its binder thread, dies. */
static void *epoll_thread(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int *fds = arg;

	if (epoll_ctl(fds[1], EPOLL_CTL_ADD, fds[0], &ev))
		return (void *)(long)errno;
	if (ioctl(fds[0], BINDER_THREAD_EXIT, 0))
		return (void *)(long)errno;
	return NULL;
}

TEST_F(binder, thread_exit_epoll_other_thread)
{
	struct epoll_event out[2];
	pthread_t th;
	struct bdev b;
	void *ret;
	int fds[2];

	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	fds[0] = b.fd;
	fds[1] = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, fds[1]);
	ASSERT_EQ(0, pthread_create(&th, NULL, epoll_thread, fds));
	ASSERT_EQ(0, pthread_join(th, &ret));
	EXPECT_EQ(NULL, ret);
	EXPECT_LE(0, epoll_wait(fds[1], out, 2, 0));
	EXPECT_EQ(0, close(fds[1]));
	bdev_close(&b);
}

/* ---- scatter-gather fix-ups: linear in the objects ------------------------ */

#define SG_BIG_MAP	(4 << 20)
#define SG_N		16000	/* parent pointers, each with one grandchild */

/* Answer every call with an empty reply; the calls are slow under TCG. */
static int srv_big(struct brd *r, const struct binder_transaction_data *tr,
		   struct txn *reply, void *arg)
{
	alarm(120);
	return tr->code == CODE_QUIT ? BSERVE_STOP : BSERVE_NEXT;
}

/*
 * One call whose objects are a parent P of 16 * SG_N bytes and SG_N pairs
 * of 8-byte buffers C and G. @worst: C_i points from P at 8 * i and G_i
 * from C_i, so every fix-up into P comes after all the C ones, which lie
 * above it (the order goes down again, object after object). Plain: C_i
 * and G_i both from P, in order. Same objects, fix-ups and bytes.
 * Returns the call's time in ms, or -1.
 */
static long sg_call(int fd, bool worst)
{
	size_t nobj = 1 + 2 * SG_N, i;
	/* From data offset 8: a parent at offset 0 takes no fix-ups. */
	struct binder_buffer_object *o = calloc(nobj + 1, sizeof(*o));
	binder_size_t *offs = calloc(nobj, sizeof(*offs));
	uint64_t *pbuf = calloc(2 * SG_N, sizeof(uint64_t));
	static uint64_t leaf[2];
	struct binder_transaction_data tr = { 0 }, reply;
	struct binder_buffer_object *obj;
	struct timespec t0, t1;
	struct brd r;
	uint32_t br;
	long ms = -1;
	int ret;

	if (!o || !offs || !pbuf)
		goto out;
	obj = (void *)((char *)o + 8);
	obj[0] = (struct binder_buffer_object){
		.hdr.type = BINDER_TYPE_PTR,
		.buffer = (uintptr_t)pbuf,
		.length = 2 * SG_N * sizeof(uint64_t),
	};
	for (i = 0; i < SG_N; i++) {
		struct binder_buffer_object *c = &obj[1 + 2 * i], *g = c + 1;

		*c = (struct binder_buffer_object){
			.hdr.type = BINDER_TYPE_PTR,
			.flags = BINDER_BUFFER_FLAG_HAS_PARENT,
			.buffer = (uintptr_t)&leaf[0],
			.length = 8,
			.parent = 0,
			.parent_offset = (worst ? 8 : 16) * i,
		};
		*g = (struct binder_buffer_object){
			.hdr.type = BINDER_TYPE_PTR,
			.flags = BINDER_BUFFER_FLAG_HAS_PARENT,
			.buffer = (uintptr_t)&leaf[1],
			.length = 8,
			.parent = worst ? 1 + 2 * i : 0,
			.parent_offset = worst ? 0 : 16 * i + 8,
		};
	}
	for (i = 0; i < nobj; i++)
		offs[i] = 8 + i * sizeof(*o);
	tr.target.handle = 0;
	tr.code = CODE_PING;
	tr.data_size = 8 + nobj * sizeof(*o);
	tr.offsets_size = nobj * sizeof(*offs);
	tr.data.ptr.buffer = (uintptr_t)o;
	tr.data.ptr.offsets = (uintptr_t)offs;
	brd_init(&r, fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = bc_tr(fd, BC_TRANSACTION_SG, &tr, (2 * SG_N + 2 * SG_N) * sizeof(uint64_t));
	if (ret)
		goto out;
	do
		ret = br_wait(&r, &br, &reply, sizeof(reply), NULL);
	while (!ret && br == BR_TRANSACTION_COMPLETE);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret || br != BR_REPLY)
		goto out;
	txn_free(fd, &reply);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
out:
	free(o);
	free(offs);
	free(pbuf);
	return ms;
}

/*
 * Fix-ups that go back down in offset used to be inserted in place, a
 * walk of all those made so far for each: seconds of kernel time, with
 * no reschedule point, for a 4 MiB buffer. The worst layout must cost
 * at most half as much again as the plain one of the same size (best of
 * three each, in the same run, so that a slow host is slow for both);
 * before the fix it cost 2.2 times as much with 12000 pairs under TCG.
 */
TEST_F_TIMEOUT(binder, sg_fixups_worst_layout_linear, 240)
{
	struct tctx *c;
	long plain = LONG_MAX, worst = LONG_MAX, ms;
	struct bdev b;
	struct brd r;
	pid_t mgr;
	int i;

	/* The kernel's binder inserts in place too. */
	if (variant->upstream)
		SKIP(return, "the kernel's binder has the quadratic insertion");
	c = tctx_new(self->dev);
	ASSERT_NE(NULL, c);
	c->map_size = SG_BIG_MAP;
	mgr = start_mgr(c, srv_big);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	/* Taken in turns: a host that slows down does so for both. */
	for (i = 0; i < 3; i++) {
		ms = sg_call(b.fd, false);
		ASSERT_LE(0, ms) TH_LOG("plain layout call failed");
		plain = ms < plain ? ms : plain;
		ms = sg_call(b.fd, true);
		ASSERT_LE(0, ms) TH_LOG("worst layout call failed");
		worst = ms < worst ? ms : worst;
	}
	TH_LOG("%d objects: plain %ld ms, worst %ld ms", 1 + 2 * SG_N, plain, worst);
	EXPECT_GE(plain + plain / 2 + 250, worst);
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

/* ---- every read ends: work queued, then dropped unread ------------------ */

/* How the looper's death notice on a dead node loses its reference. */
enum dropped_how {
	DROP_FREE_BUFFER,	/* the buffer held the only count */
	DROP_RELEASE,		/* BC_RELEASE of that count */
	DROP_NONE,		/* kept: the read gets BR_DEAD_BINDER */
	DROP_NR,
};

/* How the reader waits once the notice is gone. */
enum dropped_read {
	READ_NONBLOCK,		/* O_NONBLOCK: -EAGAIN at once */
	READ_SIGNAL,		/* blocking, ended by a signal: -EINTR */
	READ_KILL,		/* blocking, in one ioctl with the writes, SIGKILLed */
};

static void dropped_alarm(int sig)
{
}

/*
 * In a child: a manager file (the looper) gets a one-way call carrying a
 * BINDER object from a second file, of a process that then exits: the
 * manager holds a handle on a dead node (at once on cask_binder; the
 * kernel's binder releases the file from a work queue). It asks for that
 * handle's death notice, drops the handle at once, and reads. Exits 0 when
 * the read ended as @mode expects; must never spin.
 */
static int dropped_main(struct tctx *c)
{
	enum dropped_how how = c->sh->val[0];
	enum dropped_read mode = c->sh->val[1];
	struct binder_transaction_data tr;
	struct flat_binder_object *fbo;
	uint8_t rbuf[256] __attribute__((aligned(8)));
	struct bchild *s = c->sh;
	struct bdev a, b;
	struct bcbuf cmd;
	struct brd r;
	struct txn t;
	uint32_t br, h;
	pid_t pid;
	int ret;

	/*
	 * The sender: another process (the manager's may not call it), made
	 * before the manager's file: its exit must not close (flush) a copy
	 * of it, which sends the looper back to user space.
	 */
	pid = fork();
	CHILD_CHECK(s, pid >= 0, "fork");
	if (pid == 0) {
		ret = bdev_open(&b, c->dev, 0, BMAP_SIZE);
		CHILD_CHECK(s, !ret, "open sender: %d", ret);
		CHILD_CHECK(s, !bevent_wait(&c->go), "wait for the manager");
		txn_init(&t);
		txn_binder(&t, 0xb0b, 0xc0c, 0);
		ret = txn_send(b.fd, 0, CODE_PING, TF_ONE_WAY, &t);
		CHILD_CHECK(s, !ret, "one-way call: %d", ret);
		_exit(0);
	}
	ret = bdev_open(&a, c->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open manager: %d", ret);
	CHILD_CHECK(s, !ioctl(a.fd, BINDER_SET_CONTEXT_MGR, 0), "%s", strerror(errno));
	CHILD_CHECK(s, !bc_plain(a.fd, BC_ENTER_LOOPER), "BC_ENTER_LOOPER");
	bevent_post(&c->go);
	CHILD_CHECK(s, child_status(pid) == 0, "sender failed");
	brd_init(&r, a.fd);
	ret = br_wait(&r, &br, &tr, sizeof(tr), NULL);
	CHILD_CHECK(s, !ret && br == BR_TRANSACTION, "%d %s", ret, br_name(br));
	fbo = txn_rx_obj(&tr, 0);
	CHILD_CHECK(s, fbo && fbo->hdr.type == BINDER_TYPE_HANDLE, "no handle");
	h = fbo->handle;

	bc_init(&cmd);
	bc_add_handle_cookie(&cmd, BC_REQUEST_DEATH_NOTIFICATION, h, 0xdead);
	if (how == DROP_RELEASE)
		bc_add_u32(&cmd, BC_RELEASE, h);
	else if (how == DROP_FREE_BUFFER)
		bc_add_ptr(&cmd, BC_FREE_BUFFER, tr.data.ptr.buffer);
	if (mode == READ_KILL) {
		bevent_post(&c->ready);
		/* Blocks for ever (the test kills it); must not spin. */
		ret = binder_wr(a.fd, cmd.buf, cmd.len, rbuf, sizeof(rbuf), NULL, NULL);
		child_fail(s, __LINE__, "read returned %d", ret);
	}
	CHILD_CHECK(s, !bc_flush(a.fd, &cmd), "request + drop");
	if (how == DROP_NONE) {
		struct binder_ptr_cookie pc = { 0 };

		/*
		 * Kept: delivered to the looper (a blocking read: the kernel's
		 * binder releases the sender's file from a work queue).
		 */
		ret = br_wait(&r, &br, &pc, sizeof(pc), NULL);
		CHILD_CHECK(s, !ret && br == BR_DEAD_BINDER && pc.ptr == 0xdead,
			    "%d %s %llx", ret, br_name(br), (unsigned long long)pc.ptr);
		return 0;
	}
	if (mode == READ_NONBLOCK) {
		fcntl(a.fd, F_SETFL, fcntl(a.fd, F_GETFL) | O_NONBLOCK);
		ret = binder_wr(a.fd, NULL, 0, rbuf, sizeof(rbuf), NULL, NULL);
		CHILD_CHECK(s, ret == -EAGAIN, "non-blocking read: %d", ret);
	} else {
		struct sigaction sa = { .sa_handler = dropped_alarm };
		struct itimerval it = { .it_value.tv_usec = 300000 };

		sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART */
		setitimer(ITIMER_REAL, &it, NULL);
		ret = binder_wr(a.fd, NULL, 0, rbuf, sizeof(rbuf), NULL, NULL);
		CHILD_CHECK(s, ret == -EINTR, "blocking read: %d", ret);
	}
	return 0;
}

/* Reap @pid within @ms milliseconds: its status, or -1 if it is still there. */
static int reap_within(pid_t pid, int ms)
{
	int status;

	for (; ms > 0; ms -= 10) {
		pid_t got = waitpid(pid, &status, WNOHANG);

		if (got == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		if (got < 0)
			return -1;
		usleep(10000);
	}
	return -1;
}

/* The state letter of /proc/@pid/stat, or 0. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static void dropped_run(struct __test_metadata *_metadata, const char *dev,
			enum dropped_how how, enum dropped_read mode)
{
	struct tctx *c = tctx_new(dev);
	pid_t pid;
	int st, i;

	ASSERT_NE(NULL, c);
	c->sh->val[0] = how;
	c->sh->val[1] = mode;
	pid = spawn(c, dropped_main);
	ASSERT_LT(0, pid);
	if (mode == READ_KILL) {
		struct pollfd p = { .fd = c->ready.fd[0], .events = POLLIN };
		char state = 0;

		/* Ready within 10 s, or the child failed before its read. */
		for (i = 0; i < 100 && poll(&p, 1, 100) == 0; i++)
			if (waitpid(pid, &st, WNOHANG) == pid)
				break;
		if (!(p.revents & POLLIN)) {
			kill(pid, SIGKILL);
			reap_within(pid, 2000);
			ASSERT_TRUE(false) TH_LOG("how %d: no read: %s", how, c->sh->err);
		}
		ASSERT_EQ(0, bevent_wait(&c->ready));
		/* Asleep in the read within 3 s, not running (spinning). */
		for (i = 0; i < 300; i++) {
			state = proc_state(pid);
			if (state != 'R')
				break;
			usleep(10000);
		}
		EXPECT_EQ('S', state) TH_LOG("how %d: the reader is in state %c", how, state);
		kill(pid, SIGKILL);
		st = reap_within(pid, 3000);
		EXPECT_EQ(128 + SIGKILL, st)
			TH_LOG("how %d: the reader %s: %s", how,
			       st < 0 ? "survives SIGKILL" : "ended otherwise", c->sh->err);
		return;
	}
	st = reap_within(pid, 5000);
	if (st < 0) {
		kill(pid, SIGKILL);
		st = reap_within(pid, 2000);
		EXPECT_LE(0, st) TH_LOG("how %d mode %d: the reader survives SIGKILL", how, mode);
	}
	EXPECT_EQ(0, st) TH_LOG("how %d mode %d: %s%s", how, mode, c->sh->err,
				st == 128 + SIGKILL ? "the read did not end" : "");
}

/*
 * A looper asks for the death notice of a node that is already dead and
 * drops its handle at once, then reads: the read must sleep and die with
 * SIGKILL. cask_binder used to queue the notice on the looper itself,
 * freed it with the handle and left the thread's "has work" flag set: the
 * read went round for ever, with no sleep and no signal check.
 */
TEST_F(binder, dead_node_notice_free_buffer_killable)
{
	dropped_run(_metadata, self->dev, DROP_FREE_BUFFER, READ_KILL);
}

TEST_F(binder, dead_node_notice_release_killable)
{
	dropped_run(_metadata, self->dev, DROP_RELEASE, READ_KILL);
}

/* Every way of losing the queued notice: a read returns or sleeps. */
TEST_F(binder, dropped_work_read_nonblock)
{
	int how;

	for (how = 0; how < DROP_NR; how++)
		dropped_run(_metadata, self->dev, how, READ_NONBLOCK);
}

TEST_F(binder, dropped_work_read_interruptible)
{
	int how;

	for (how = 0; how < DROP_NR; how++)
		dropped_run(_metadata, self->dev, how, READ_SIGNAL);
}

/*
 * In a child: call the manager (srv_reply_fd, code 1) accepting fds, with
 * no fd free to take the one its reply carries. The reply cannot be
 * delivered: the call must fail with BR_FAILED_REPLY, not wait for ever.
 */
static int reply_fd_no_room_main(struct tctx *c)
{
	struct bchild *s = c->sh;
	struct rlimit rl = { .rlim_cur = 64, .rlim_max = 64 };
	struct bdev b;
	struct brd r;
	uint32_t br;
	int fd, ret;

	ret = bdev_open(&b, c->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open: %d", ret);
	brd_init(&r, b.fd);
	/* Every fd below the limit taken: the next allocation is EMFILE. */
	for (fd = 0; fd < 64; fd++)
		if (fcntl(fd, F_GETFD) < 0)
			CHILD_CHECK(s, dup2(b.fd, fd) == fd, "dup2 %d", fd);
	CHILD_CHECK(s, !setrlimit(RLIMIT_NOFILE, &rl), "%s", strerror(errno));
	ret = txn_send(b.fd, 0, 1, TF_ACCEPT_FDS, NULL);
	CHILD_CHECK(s, !ret, "call: %d", ret);
	ret = br_wait(&r, &br, NULL, 0, NULL);
	CHILD_CHECK(s, !ret && br == BR_TRANSACTION_COMPLETE, "%d %s", ret, br_name(br));
	ret = br_wait(&r, &br, NULL, 0, NULL);
	CHILD_CHECK(s, !ret && br == BR_FAILED_REPLY, "%d %s", ret, br_name(br));
	return 0;
}

TEST_F(binder, reply_fd_no_room_fails)
{
	struct tctx *c = tctx_new(self->dev);
	pid_t mgr, pid;
	int st;

	ASSERT_NE(NULL, c);
	mgr = start_mgr(c, srv_reply_fd);
	ASSERT_LT(0, mgr);
	pid = spawn(c, reply_fd_no_room_main);
	ASSERT_LT(0, pid);
	st = reap_within(pid, 5000);
	if (st < 0) {
		kill(pid, SIGKILL);
		reap_within(pid, 2000);
	}
	EXPECT_EQ(0, st) TH_LOG("caller: %s", st < 0 ? "still waiting for its reply" :
				c->sh->err);
	/* The replier heard of no failure: only its caller does. */
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(BR_TRANSACTION_COMPLETE, c->sh->val[1]) TH_LOG("got %s",
								 br_name(c->sh->val[1]));
}

/* ---- a write or a read of many commands or items ends on SIGKILL -------- */

#define HUGE_CHUNK	(1024UL * 1024)	/* one memfd of commands ... */
#define HUGE_WRITE	(1024 * HUGE_CHUNK)	/* ... mapped over and over */

/*
 * In a child: one write of a gigabyte of BC_ENTER_LOOPER (256 Mi commands,
 * a megabyte of memfd mapped 1024 times). It takes minutes; the test kills
 * it. Exits 0 if it ever returns (too fast for the test to mean anything).
 */
static int huge_write_main(struct tctx *c)
{
	struct bchild *s = c->sh;
	uint32_t *cmds;
	uint8_t *area;
	struct bdev b;
	size_t off, i;
	int mfd, ret;

	ret = bdev_open(&b, c->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open: %d", ret);
	mfd = memfd_create("bc", MFD_CLOEXEC);
	CHILD_CHECK(s, mfd >= 0 && !ftruncate(mfd, HUGE_CHUNK), "memfd: %s", strerror(errno));
	cmds = mmap(NULL, HUGE_CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	CHILD_CHECK(s, cmds != MAP_FAILED, "mmap: %s", strerror(errno));
	for (i = 0; i < HUGE_CHUNK / sizeof(*cmds); i++)
		cmds[i] = BC_ENTER_LOOPER;
	area = mmap(NULL, HUGE_WRITE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(s, area != MAP_FAILED, "reserve: %s", strerror(errno));
	for (off = 0; off < HUGE_WRITE; off += HUGE_CHUNK)
		CHILD_CHECK(s, mmap(area + off, HUGE_CHUNK, PROT_READ, MAP_SHARED | MAP_FIXED,
				    mfd, 0) != MAP_FAILED, "map %zu: %s", off, strerror(errno));
	bevent_post(&c->ready);
	ret = binder_wr(b.fd, area, HUGE_WRITE, NULL, 0, NULL, NULL);
	CHILD_CHECK(s, !ret, "write: %d", ret);
	return 0;
}

/*
 * The write loop of BINDER_WRITE_READ had no cond_resched() and no signal
 * check: the child above could not be killed for minutes (and stalled a
 * CPU: soft lockup). Killed after a second, it must be gone within 3 s.
 */
TEST_F(binder, huge_write_killable)
{
	struct tctx *c;
	pid_t pid;
	int st;

	if (variant->upstream)
		SKIP(return, "the kernel's binder does not check for signals either");
	c = tctx_new(self->dev);
	ASSERT_NE(NULL, c);
	pid = spawn(c, huge_write_main);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bevent_wait(&c->ready)) TH_LOG("%s", c->sh->err);
	sleep(1);
	ASSERT_EQ(0, waitpid(pid, &st, WNOHANG))
		TH_LOG("the write ended within a second: %s", c->sh->err);
	kill(pid, SIGKILL);
	st = reap_within(pid, 3000);
	EXPECT_EQ(128 + SIGKILL, st) TH_LOG("the writer %s",
					    st < 0 ? "survives SIGKILL" : c->sh->err);
}

/*
 * Request, read (BR_DEAD_BINDER), clear a dead node's notice, over and
 * over: each clear left the delivered notice waiting for its
 * BC_DEAD_BINDER_DONE and let the handle take a new request, so the list
 * BC_DEAD_BINDER_DONE walks under the context's spinlock grew without
 * bound. A handle now takes no new request before DONE of the last one
 * (the kernel's binder takes it: not tested there).
 */
TEST_F(binder, death_rerequest_waits_for_done)
{
	struct tctx *c = tctx_new(self->dev);
	struct binder_ptr_cookie pc;
	struct bcbuf cmd;
	pid_t mgr, svc;
	struct bdev b;
	struct brd r;
	uint32_t h, br, codes[4];

	if (variant->upstream)
		SKIP(return, "the kernel's binder takes the new request at once");
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	brd_init(&r, b.fd);
	ASSERT_EQ(0, three_setup(c, &r, &mgr, &svc, &h)) TH_LOG("%s", c->sh->err);
	bc_init(&cmd);
	bc_add(&cmd, BC_ENTER_LOOPER, NULL, 0);
	bc_add_handle_cookie(&cmd, BC_REQUEST_DEATH_NOTIFICATION, h, 0xd1);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	kill(svc, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, child_status(svc));
	ASSERT_EQ(0, br_wait(&r, &br, &pc, sizeof(pc), NULL));
	ASSERT_EQ(BR_DEAD_BINDER, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xd1, pc.ptr);
	/* Cleared, not acknowledged: a new request is ignored. */
	bc_init(&cmd);
	bc_add_handle_cookie(&cmd, BC_CLEAR_DEATH_NOTIFICATION, h, 0xd1);
	bc_add_handle_cookie(&cmd, BC_REQUEST_DEATH_NOTIFICATION, h, 0xd2);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	EXPECT_EQ(-EAGAIN, drain(b.fd, codes, 4)) TH_LOG("a second notice before DONE");
	/* DONE ends the first one: its clear is told, a request is taken. */
	ASSERT_EQ(0, bc_ptr(b.fd, BC_DEAD_BINDER_DONE, 0xd1));
	ASSERT_EQ(0, br_wait(&r, &br, &pc, sizeof(pc), NULL));
	ASSERT_EQ(BR_CLEAR_DEATH_NOTIFICATION_DONE, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xd1, pc.ptr);
	bc_init(&cmd);
	bc_add_handle_cookie(&cmd, BC_REQUEST_DEATH_NOTIFICATION, h, 0xd3);
	ASSERT_EQ(0, bc_flush(b.fd, &cmd));
	ASSERT_EQ(0, br_wait(&r, &br, &pc, sizeof(pc), NULL));
	ASSERT_EQ(BR_DEAD_BINDER, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0xd3, pc.ptr);
	EXPECT_EQ(0, bc_ptr(b.fd, BC_DEAD_BINDER_DONE, 0xd3));
	EXPECT_EQ(0, quit(&r, 0));
	EXPECT_CHILD_OK(c, mgr);
	bdev_close(&b);
}

/*
 * In a child: a manager at nice 10 takes a sync call from a caller at
 * nice 0 into a read buffer with room for BR_NOOP only (the next byte is
 * not mapped): the call is undeliverable (-EFAULT). Its nice must be 10
 * again, not the caller's.
 */
static int nice_trap_main(struct tctx *c)
{
	struct bchild *s = c->sh;
	uint8_t buf[64] __attribute__((aligned(8)));
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *map;
	struct bdev b;
	int ret;

	/* Before the open: a looper waiting for work goes back to this nice. */
	CHILD_CHECK(s, !setpriority(PRIO_PROCESS, 0, 10), "%s", strerror(errno));
	ret = bdev_open(&b, c->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open: %d", ret);
	CHILD_CHECK(s, !ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0), "%s", strerror(errno));
	CHILD_CHECK(s, !bc_plain(b.fd, BC_ENTER_LOOPER), "BC_ENTER_LOOPER");
	/* Whatever the first read of a thread returns at once, taken. */
	fcntl(b.fd, F_SETFL, fcntl(b.fd, F_GETFL) | O_NONBLOCK);
	ret = binder_wr(b.fd, NULL, 0, buf, sizeof(buf), NULL, NULL);
	CHILD_CHECK(s, !ret || ret == -EAGAIN, "first read: %d", ret);
	fcntl(b.fd, F_SETFL, fcntl(b.fd, F_GETFL) & ~O_NONBLOCK);
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(s, map != MAP_FAILED && !mprotect(map + page, page, PROT_NONE), "mmap");
	bevent_post(&c->ready);
	ret = binder_wr(b.fd, NULL, 0, map + page - 4, 256, NULL, NULL);
	CHILD_CHECK(s, ret == -EFAULT, "read: %d", ret);
	errno = 0;
	s->val[0] = getpriority(PRIO_PROCESS, 0);
	CHILD_CHECK(s, !errno, "%s", strerror(errno));
	return 0;
}

/*
 * The reader took the caller's priority before it knew it could take the
 * call, and kept it when it could not.
 */
TEST_F(binder, undeliverable_call_restores_nice)
{
	struct tctx *c;
	struct bdev b;
	pid_t mgr;

	if (variant->upstream)
		SKIP(return, "the kernel's binder keeps the caller's priority too");
	c = tctx_new(self->dev);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, setpriority(PRIO_PROCESS, 0, 0));
	mgr = spawn(c, nice_trap_main);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, bevent_wait(&c->ready)) TH_LOG("%s", c->sh->err);
	ASSERT_EQ(0, bdev_open(&b, self->dev, 0, BMAP_SIZE));
	ASSERT_EQ(0, txn_send(b.fd, 0, CODE_PING, 0, NULL));
	EXPECT_CHILD_OK(c, mgr);
	EXPECT_EQ(10, (long)c->sh->val[0]) TH_LOG("the reader kept nice %ld",
						  (long)c->sh->val[0]);
	bdev_close(&b);
}

TEST_HARNESS_MAIN
