// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder across cells: isolation of the contexts of two containers,
 * the per-cell sysfs counters and limits, and allocation failures.
 *
 * The cells are containers (cask_util.h), registered under fixed names.
 * Binder processes ("actors") are forks of the test process that enter a
 * container's IPC namespace, and its user namespace as its root when the
 * container has one (setns()): they keep the test's pipes and sockets,
 * so every step is ordered by pipes (struct bevent) or by binder itself,
 * never by sleeping. sysfs checks from inside a container are try_*()
 * functions run there with container_run().
 *
 * Fixture "cells": cell A (no user namespace, or one in "shared_map")
 * and cell B (no user namespace in "plain"; an unprivileged user
 * namespace in "userns" and "shared_map", where both map root to the same
 * host uid). Fixture "bfault": fail-nth over the binder paths of a cell.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "../kselftest_harness.h"
#include "cask_util.h"
#include "cask_binder.h"
#include "cask_fault.h"

#define CELL_A		"bct-a"
#define CELL_B		"bct-b"
#define CELL_F		"bct-f"
#define CELLS		CASK "/cells/"
#define UID_BASE	400000

/* Transaction codes of srv(). */
#define CODE_PING	0x50494e47
#define CODE_QUIT	3
#define CODE_HOLD	4	/* wait in the handler for the test's go */
#define CODE_NICE	5	/* reply with the handler's nice */
#define CODE_FDOBJ	6	/* check the fd object, reply pong */
#define CODE_FREPLY	7	/* reply with fail-nth (u32 in data) armed */

/* Slots of struct bchild.val used by the actors. */
#define V_CALLS		0	/* transactions served */
#define V_REACHED	1	/* CODE_FREPLY: the armed failure was reached */
#define V_FDOK		2	/* CODE_FDOBJ: fds received and read */
#define V_PID		14	/* the actor's pid */

static const char *const counter_names[] = {
	"procs", "threads", "nodes", "refs", "transactions",
	"transactions_total", "failed_transactions", "buffer_bytes",
};

enum { C_PROCS, C_THREADS, C_NODES, C_REFS, C_TXNS, C_TOTAL, C_FAILED, C_BYTES, C_NR };

/* ---- cells ------------------------------------------------------------------ */

struct bcell {
	struct container c;
	const char *name;
	bool userns;
	bool started, registered;
};

static int cell_make(struct bcell *cell, const char *name, bool userns)
{
	int ret;

	cell->name = name;
	cell->userns = userns;
	/* A cell of an earlier, interrupted run. */
	cask_unregister(name);
	ret = container_start(&cell->c, "", userns ? UID_BASE : CONTAINER_NO_USERNS);
	if (ret)
		return ret;
	cell->started = true;
	ret = cask_register(name, cell->c.init);
	if (ret)
		return ret;
	cell->registered = true;
	return 0;
}

static void cell_end(struct bcell *cell)
{
	if (cell->registered)
		cask_unregister(cell->name);
	if (cell->started)
		container_stop(&cell->c);
	cell->registered = false;
	cell->started = false;
}

static int ns_open(pid_t pid, const char *ns)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 * Become a task of @cell: its IPC namespace and, if it has one, its user
 * namespace as its root (no capability in the initial namespace then).
 * Both are opened first: the container's init is not dumpable, and its
 * /proc files are out of reach once we are in its user namespace.
 * RLIMIT_NICE lets binder raise our threads without CAP_SYS_NICE, so that
 * only the cell's nice_floor limits it.
 */
static int enter_cell(const struct bcell *cell)
{
	struct rlimit rl = { 40, 40 };
	int user = -1, ipc, ret = 0;

	if (setrlimit(RLIMIT_NICE, &rl))
		return -errno;
	ipc = ns_open(cell->c.init, "ipc");
	if (ipc < 0)
		return -errno;
	if (cell->userns) {
		user = ns_open(cell->c.init, "user");
		if (user < 0 || setns(user, CLONE_NEWUSER))
			ret = -errno;
	}
	if (!ret && setns(ipc, CLONE_NEWIPC))
		ret = -errno;
	if (!ret && cell->userns &&
	    (setresgid(0, 0, 0) || setgroups(0, NULL) || setresuid(0, 0, 0)))
		ret = -errno;
	if (user >= 0)
		close(user);
	close(ipc);
	if (ret)
		fprintf(stderr, "cannot enter cell %s: %s\n", cell->name, strerror(-ret));
	return ret;
}

typedef int (*actor_fn)(void *arg);

/* Fork an actor running @fn(@arg) in @cell. */
static pid_t cell_spawn(const struct bcell *cell, actor_fn fn, void *arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (enter_cell(cell))
			_exit(99);
		/* After the credential change, which clears it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(280);
		_exit(fn(arg));
	}
	return pid;
}

/* Run @fn(@arg) in @cell and wait: its exit status. */
static int cell_call(const struct bcell *cell, actor_fn fn, void *arg)
{
	pid_t pid = cell_spawn(cell, fn, arg);

	return pid < 0 ? -1 : child_status(pid);
}

/* ---- sysfs ------------------------------------------------------------------ */

static long bcount(const char *cell, const char *file)
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), CELLS "%s/binder/%s", cell, file);
	if (read_file(path, buf, sizeof(buf)))
		return LONG_MIN;
	if (!strcmp(buf, "max"))
		return LONG_MAX;
	return strtol(buf, NULL, 0);
}

static int bset(const char *cell, const char *file, const char *val)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), CELLS "%s/binder/%s", cell, file);
	return write_file(path, val);
}

static void bcounts(const char *cell, long *v)
{
	int i;

	for (i = 0; i < C_NR; i++)
		v[i] = bcount(cell, counter_names[i]);
}

/* Compare all counters of @cell with @want (-1: do not care). */
static void __attribute__((noinline))
check_counters(struct __test_metadata *_metadata, int line, const char *cell,
	       const long *want)
{
	long got[C_NR];
	int i;

	bcounts(cell, got);
	for (i = 0; i < C_NR; i++) {
		if (want[i] < 0)
			continue;
		EXPECT_EQ(want[i], got[i])
			TH_LOG("line %d: %s/binder/%s", line, cell, counter_names[i]);
	}
}

#define EXPECT_COUNTERS(cell, ...) do {						\
	long __want[C_NR] = { __VA_ARGS__ };					\
	check_counters(_metadata, __LINE__, (cell), __want);			\
} while (0)

/* ---- actors ----------------------------------------------------------------- */

/* What an actor gets: all of it shared with the test process. */
struct actor {
	const char *dev;
	struct bchild *sh;
	struct bevent ready, go, paused, step, resume;
	uint32_t mgr_flags;	/* SET_CONTEXT_MGR_EXT flags */
	int nice;		/* a context manager's nice before it opens */
	int sock;		/* fd passing */
	int arg;		/* free use */
	int fail_fd;		/* fail-nth of a manager (CODE_FREPLY) */
};

static struct actor *actor_new(const char *dev)
{
	struct actor *a = shared_alloc(sizeof(*a));

	if (!a)
		return NULL;
	a->dev = dev;
	a->sock = -1;
	a->fail_fd = -1;
	a->sh = bchild_alloc();
	if (!a->sh || bevent_init(&a->ready) || bevent_init(&a->go) ||
	    bevent_init(&a->paused) || bevent_init(&a->step) || bevent_init(&a->resume))
		return NULL;
	memset(a->sh, 0, sizeof(*a->sh));
	return a;
}

/* Wait for @e or for @pid to exit: 0, or -ECHILD if it exited first. */
static int wait_event_or_exit(struct bevent *e, pid_t pid)
{
	struct pollfd p[2] = { { .fd = e->fd[0], .events = POLLIN } };
	int pfd = syscall(SYS_pidfd_open, pid, 0);

	if (pfd < 0)
		return -errno;
	p[1].fd = pfd;
	p[1].events = POLLIN;
	while (poll(p, 2, -1) < 0)
		if (errno != EINTR)
			break;
	close(pfd);
	if (p[0].revents & POLLIN)
		return bevent_wait(e);
	return -ECHILD;
}

/* In an actor: tell the test a step is done and wait until it has looked. */
static void actor_step(struct actor *a)
{
	bevent_post(&a->step);
	bevent_wait(&a->resume);
}

/* Disarm; whether the armed failure was reached. */
static bool fail_nth_done(int fd)
{
	bool reached = !fail_nth_unused(fd);

	fail_nth_set(fd, 0);
	return reached;
}

/* The handler of every context manager here. */
static int srv(struct brd *r, const struct binder_transaction_data *tr,
	       struct txn *reply, void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct binder_fd_object *fo;
	struct txn rep;
	char buf[16] = "";
	uint32_t n, cmd;
	int nice;

	s->val[V_CALLS]++;
	switch (tr->code) {
	case CODE_QUIT:
		return BSERVE_STOP;
	case CODE_HOLD:
		bevent_post(&a->paused);
		bevent_wait(&a->go);
		break;
	case CODE_NICE:
		errno = 0;
		nice = getpriority(PRIO_PROCESS, 0);
		if (errno)
			return -errno;
		txn_put(reply, &nice, sizeof(nice));
		return BSERVE_NEXT;
	case CODE_FDOBJ:
		fo = txn_rx_obj(tr, 1);
		CHILD_CHECK(s, fo && fo->hdr.type == BINDER_TYPE_FD, "no fd object");
		CHILD_CHECK(s, read(fo->fd, buf, sizeof(buf)) == 6 && !strcmp(buf, "fault"),
			    "fd %d: '%s'", fo->fd, buf);
		close(fo->fd);
		s->val[V_FDOK]++;
		break;
	case CODE_FREPLY:
		CHILD_CHECK(s, tr->data_size == sizeof(n), "size %llu",
			    (unsigned long long)tr->data_size);
		memcpy(&n, (void *)(uintptr_t)tr->data.ptr.buffer, sizeof(n));
		txn_init(&rep);
		txn_binder(&rep, 0x8000, 0x8001, 0);
		txn_put(&rep, "pong", 5);
		if (n)
			fail_nth_set(a->fail_fd, n);
		CHILD_CHECK(s, !txn_reply(r->fd, 0, &rep), "BC_REPLY");
		s->val[V_REACHED] = n && fail_nth_done(a->fail_fd);
		/*
		 * Made or failed, the reply completes for the replier. Read
		 * that now: until it is read the driver consumes no further
		 * command, such as the BC_FREE_BUFFER bserve() sends next.
		 */
		CHILD_CHECK(s, !br_wait(r, &cmd, NULL, 0, NULL) &&
			    cmd == BR_TRANSACTION_COMPLETE, "reply: %s", br_name(cmd));
		return BSERVE_REPLIED;
	}
	txn_put(reply, "pong", 5);
	return BSERVE_NEXT;
}

/* A context manager of a->dev serving srv() until CODE_QUIT. */
static int mgr_main(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct flat_binder_object fbo = {
		.hdr.type = BINDER_TYPE_BINDER,
		.flags = a->mgr_flags,
		.binder = 0x1000,
		.cookie = 0x2000,
	};
	struct bdev b;
	struct brd r;
	int ret;

	if (a->nice)
		CHILD_CHECK(s, !setpriority(PRIO_PROCESS, 0, a->nice), "%s", strerror(errno));
	a->fail_fd = fail_nth_fd();
	ret = bdev_open(&b, a->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open %s: %d", a->dev, ret);
	ret = ioctl(b.fd, BINDER_SET_CONTEXT_MGR_EXT, &fbo);
	CHILD_CHECK(s, !ret, "SET_CONTEXT_MGR_EXT: %s", strerror(errno));
	ret = bc_plain(b.fd, BC_ENTER_LOOPER);
	CHILD_CHECK(s, !ret, "BC_ENTER_LOOPER: %d", ret);
	s->val[V_PID] = getpid();
	bevent_post(&a->ready);
	brd_init(&r, b.fd);
	ret = bserve(&r, srv, a);
	CHILD_CHECK(s, !ret, "serve: %d", ret);
	bdev_close(&b);
	return 0;
}

/* Start a context manager in @cell; its pid, or -1 if it did not start. */
static pid_t start_mgr(const struct bcell *cell, struct actor *a)
{
	pid_t pid = cell_spawn(cell, mgr_main, a);

	if (pid < 0)
		return -1;
	if (wait_event_or_exit(&a->ready, pid)) {
		child_status(pid);
		return -1;
	}
	return pid;
}

#define EXPECT_ACTOR_OK(a, pid) do {						\
	pid_t __pid = (pid);							\
	int __st = child_status(__pid);						\
	EXPECT_EQ(0, __st) TH_LOG("actor %d: status %d: %s", (int)__pid, __st,	\
				  (a)->sh->err);				\
} while (0)

/* A call of @code with @len bytes; BR_REPLY's reply is freed. */
static int call(struct brd *r, uint32_t h, uint32_t code, size_t len, uint32_t *br)
{
	struct binder_transaction_data reply;
	struct txn t;
	int ret;

	txn_init(&t);
	txn_put(&t, NULL, len);
	ret = txn_call(r, h, code, &t, br, &reply);
	if (ret)
		return ret;
	if (*br != BR_REPLY)
		return -EPROTO;
	return txn_free(r->fd, &reply);
}

static int ping(struct brd *r, uint32_t h, uint32_t *br)
{
	return call(r, h, CODE_PING, 5, br);
}

/* In a cell: ping handle 0 of a->dev once (a->arg: CODE_QUIT instead). */
static int client_ping(void *arg)
{
	struct actor *a = arg;
	struct bdev b;
	struct brd r;
	uint32_t br = 0;
	int ret;

	ret = bdev_open(&b, a->dev, 0, BMAP_SIZE);
	CHILD_CHECK(a->sh, !ret, "open %s: %d", a->dev, ret);
	brd_init(&r, b.fd);
	ret = call(&r, 0, a->arg ? CODE_QUIT : CODE_PING, 5, &br);
	CHILD_CHECK(a->sh, !ret, "call: %d, %s", ret, br_name(br));
	bdev_close(&b);
	return 0;
}

static int do_ping(const struct bcell *cell, struct actor *a, const char *dev)
{
	a->dev = dev;
	a->arg = 0;
	return cell_call(cell, client_ping, a);
}

static int do_quit(const struct bcell *cell, struct actor *a, const char *dev)
{
	a->dev = dev;
	a->arg = 1;
	return cell_call(cell, client_ping, a);
}

/* In a cell: the errno of becoming a->dev's context manager. */
static int try_set_mgr(void *arg)
{
	struct actor *a = arg;
	int fd, ret = 0;

	fd = open(a->dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 100;
	if (ioctl(fd, BINDER_SET_CONTEXT_MGR, 0))
		ret = errno;
	close(fd);
	return ret;
}

/* In a container (container_run): errnos of reading / writing a file. */
struct fwrite {
	const char *path;
	const char *val;
};

static int try_read(void *arg)
{
	char buf[64];

	return -read_file(arg, buf, sizeof(buf));
}

static int try_write(void *arg)
{
	const struct fwrite *w = arg;

	return -write_file(w->path, w->val);
}

/* ---- fixture: two cells ----------------------------------------------------- */

FIXTURE(cells) {
	struct bcell a, b;
	struct actor *x, *y, *z;
};

FIXTURE_VARIANT(cells) {
	bool a_userns;
	bool b_userns;
};

FIXTURE_VARIANT_ADD(cells, plain) {
	.a_userns = false,
	.b_userns = false,
};

FIXTURE_VARIANT_ADD(cells, userns) {
	.a_userns = false,
	.b_userns = true,
};

/* Both containers map root to the same host uid: ownership alone is equal. */
FIXTURE_VARIANT_ADD(cells, shared_map) {
	.a_userns = true,
	.b_userns = true,
};

FIXTURE_SETUP(cells)
{
	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access("/dev/binder", F_OK))
		SKIP(return, "cask_binder is not loaded");
	ASSERT_EQ(0, cell_make(&self->a, CELL_A, variant->a_userns));
	ASSERT_EQ(0, cell_make(&self->b, CELL_B, variant->b_userns));
	self->x = actor_new("/dev/binder");
	self->y = actor_new("/dev/binder");
	self->z = actor_new("/dev/binder");
	ASSERT_NE(NULL, self->x);
	ASSERT_NE(NULL, self->y);
	ASSERT_NE(NULL, self->z);
}

FIXTURE_TEARDOWN(cells)
{
	cell_end(&self->a);
	cell_end(&self->b);
}

/* ---- cross-cell negatives --------------------------------------------------- */

/* In B: no handle reaches anything; a->arg: how many failed as expected. */
static int scan_handles(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct bdev b;
	struct brd r;
	uint32_t h, br;
	int ret;

	ret = bdev_open(&b, "/dev/binder", 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open: %d", ret);
	brd_init(&r, b.fd);
	for (h = 0; h <= 64; h++) {
		br = 0;
		ret = ping(&r, h, &br);
		CHILD_CHECK(s, ret == -EPROTO, "handle %u: %d %s", h, ret, br_name(br));
		if (h == 0)
			CHILD_CHECK(s, br == BR_DEAD_REPLY, "handle 0: %s", br_name(br));
		else
			CHILD_CHECK(s, br == BR_DEAD_REPLY || br == BR_FAILED_REPLY,
				    "handle %u: %s", h, br_name(br));
		s->val[3]++;
	}
	bdev_close(&b);
	return 0;
}

TEST_F(cells, handles_of_other_cell)
{
	pid_t mgr;

	mgr = start_mgr(&self->a, self->x);
	ASSERT_LT(0, mgr) TH_LOG("%s", self->x->sh->err);
	/* The manager counts what reaches it. */
	EXPECT_EQ(0, do_ping(&self->a, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_EQ(1, self->x->sh->val[V_CALLS]);

	EXPECT_EQ(0, cell_call(&self->b, scan_handles, self->y)) TH_LOG("%s", self->y->sh->err);
	EXPECT_EQ(65, self->y->sh->val[3]);
	EXPECT_EQ(1, self->x->sh->val[V_CALLS]) TH_LOG("A's manager saw B's calls");
	/* B's failures are B's; A counts only its own calls. */
	EXPECT_COUNTERS(CELL_B, 0, 0, 0, 0, 0, 65, 65, 0);
	EXPECT_COUNTERS(CELL_A, 1, 1, 1, 0, 0, 2, 0, 0);

	EXPECT_EQ(0, do_quit(&self->a, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_ACTOR_OK(self->x, mgr);
	EXPECT_EQ(2, self->x->sh->val[V_CALLS]);
}

/*
 * In a cell: BINDER_FREEZE of pid a->arg, then BINDER_GET_FROZEN_INFO;
 * their errnos (0: done) in val[4] and val[5]. What it froze it thaws.
 */
static int try_freeze(void *arg)
{
	struct actor *a = arg;
	struct binder_freeze_info fi = { .pid = a->arg, .enable = 1 };
	struct binder_frozen_status_info si = { .pid = a->arg };
	struct bdev b;
	int ret;

	ret = bdev_open(&b, a->dev, 0, BMAP_SIZE);
	CHILD_CHECK(a->sh, !ret, "open %s: %d", a->dev, ret);
	a->sh->val[4] = ioctl(b.fd, BINDER_FREEZE, &fi) ? errno : 0;
	a->sh->val[5] = ioctl(b.fd, BINDER_GET_FROZEN_INFO, &si) ? errno : 0;
	if (!a->sh->val[4]) {
		fi.enable = 0;
		CHILD_CHECK(a->sh, !ioctl(b.fd, BINDER_FREEZE, &fi), "thaw: %s",
			    strerror(errno));
	}
	bdev_close(&b);
	return 0;
}

/*
 * BINDER_FREEZE finds only processes of the caller's cell: B's root (in
 * its user namespace in "userns") names A's manager by the pid it sees,
 * and finds nothing, as for a pid without a binder file; nor does the
 * host through its own binder file. Only A freezes A's processes.
 */
TEST_F(cells, freeze_other_cell)
{
	struct binder_freeze_info fi = { .enable = 1 };
	struct bdev b;
	pid_t mgr;

	mgr = start_mgr(&self->a, self->x);
	ASSERT_LT(0, mgr) TH_LOG("%s", self->x->sh->err);
	ASSERT_EQ(mgr, self->x->sh->val[V_PID]);

	self->y->arg = mgr;
	EXPECT_EQ(0, cell_call(&self->b, try_freeze, self->y)) TH_LOG("%s", self->y->sh->err);
	EXPECT_EQ(EINVAL, self->y->sh->val[4]);
	EXPECT_EQ(EINVAL, self->y->sh->val[5]);

	ASSERT_EQ(0, bdev_open(&b, "/dev/binder", 0, BMAP_SIZE));
	fi.pid = mgr;
	EXPECT_EQ(-1, ioctl(b.fd, BINDER_FREEZE, &fi));
	EXPECT_EQ(EINVAL, errno);
	bdev_close(&b);

	/* Not frozen by any of that: A's calls are answered. */
	EXPECT_EQ(0, do_ping(&self->a, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);

	self->z->arg = mgr;
	EXPECT_EQ(0, cell_call(&self->a, try_freeze, self->z)) TH_LOG("%s", self->z->sh->err);
	EXPECT_EQ(0, self->z->sh->val[4]);
	EXPECT_EQ(0, self->z->sh->val[5]);

	EXPECT_EQ(0, do_quit(&self->a, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_ACTOR_OK(self->x, mgr);
	EXPECT_EQ(2, self->x->sh->val[V_CALLS]);
}

TEST_F(cells, context_manager_per_cell)
{
	pid_t mgr_a, mgr_b;

	mgr_a = start_mgr(&self->a, self->x);
	ASSERT_LT(0, mgr_a) TH_LOG("%s", self->x->sh->err);
	/* A's context has its manager: A cannot have a second one. */
	self->z->dev = "/dev/binder";
	EXPECT_EQ(EBUSY, cell_call(&self->a, try_set_mgr, self->z));

	/* B can: its context is its own. */
	mgr_b = start_mgr(&self->b, self->y);
	ASSERT_LT(0, mgr_b) TH_LOG("%s", self->y->sh->err);
	EXPECT_EQ(EBUSY, cell_call(&self->b, try_set_mgr, self->z));

	/* Each cell's handle 0 is its own manager, A's not replaced by B's. */
	EXPECT_EQ(0, do_ping(&self->b, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_EQ(1, self->y->sh->val[V_CALLS]);
	EXPECT_EQ(0, self->x->sh->val[V_CALLS]);
	EXPECT_EQ(0, do_ping(&self->a, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_EQ(1, self->x->sh->val[V_CALLS]);
	EXPECT_EQ(1, self->y->sh->val[V_CALLS]);

	/* B's manager gone: B has none, A still has its own. */
	EXPECT_EQ(0, do_quit(&self->b, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_ACTOR_OK(self->y, mgr_b);
	self->z->dev = "/dev/binder";
	EXPECT_EQ(0, cell_call(&self->b, try_set_mgr, self->z));
	EXPECT_EQ(0, do_ping(&self->a, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_EQ(2, self->x->sh->val[V_CALLS]);

	EXPECT_EQ(0, do_quit(&self->a, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_ACTOR_OK(self->x, mgr_a);
}

/* In A: open a->dev, pass the fd twice, then use it once told to. */
static int fd_owner(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct binder_version v = { 0 };
	void *map;
	int fd;

	fd = open(a->dev, O_RDWR | O_CLOEXEC);
	CHILD_CHECK(s, fd >= 0, "open: %s", strerror(errno));
	CHILD_CHECK(s, !send_fd(a->sock, fd), "send");
	CHILD_CHECK(s, !send_fd(a->sock, fd), "send");
	bevent_wait(&a->go);
	/* What the other cell tried did not spoil it for its owner. */
	map = mmap(NULL, BMAP_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	CHILD_CHECK(s, map != MAP_FAILED, "mmap: %s", strerror(errno));
	CHILD_CHECK(s, !ioctl(fd, BINDER_VERSION, &v), "VERSION: %s", strerror(errno));
	CHILD_CHECK(s, v.protocol_version == BINDER_CURRENT_PROTOCOL_VERSION, "version");
	munmap(map, BMAP_SIZE);
	close(fd);
	return 0;
}

/* In B: a passed fd of A's device gives nothing. */
static int fd_foreign(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct binder_version v = { 0 };
	struct pollfd p;
	uint32_t cmd = BC_ENTER_LOOPER;
	void *map;
	int fd;

	fd = recv_fd(a->sock);
	CHILD_CHECK(s, fd >= 0, "recv: %d", fd);
	errno = 0;
	CHILD_CHECK(s, ioctl(fd, BINDER_VERSION, &v) == -1 && errno == EPERM,
		    "VERSION: %s", strerror(errno));
	errno = 0;
	CHILD_CHECK(s, binder_write(fd, &cmd, sizeof(cmd)) == -EPERM, "WRITE_READ");
	errno = 0;
	CHILD_CHECK(s, ioctl(fd, BINDER_SET_CONTEXT_MGR, 0) == -1 && errno == EPERM,
		    "SET_CONTEXT_MGR: %s", strerror(errno));
	map = mmap(NULL, BMAP_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	CHILD_CHECK(s, map == MAP_FAILED && errno == EINVAL, "mmap: %s",
		    map == MAP_FAILED ? strerror(errno) : "mapped");
	p.fd = fd;
	p.events = POLLIN;
	p.revents = 0;
	CHILD_CHECK(s, poll(&p, 1, 0) == 1 && (p.revents & POLLERR), "poll: %#x",
		    p.revents);
	close(fd);
	return 0;
}

/* In A: the same passed fd works for ioctls (not mmap: not the opener). */
static int fd_same_cell(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct binder_version v = { 0 };
	int fd;

	fd = recv_fd(a->sock);
	CHILD_CHECK(s, fd >= 0, "recv: %d", fd);
	CHILD_CHECK(s, !ioctl(fd, BINDER_VERSION, &v), "VERSION: %s", strerror(errno));
	close(fd);
	return 0;
}

TEST_F(cells, fd_passed_to_other_cell)
{
	int sv[2];
	pid_t owner;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	self->x->sock = sv[0];
	self->y->sock = sv[1];
	self->z->sock = sv[1];
	owner = cell_spawn(&self->a, fd_owner, self->x);
	ASSERT_LT(0, owner);
	EXPECT_EQ(0, cell_call(&self->b, fd_foreign, self->y)) TH_LOG("%s", self->y->sh->err);
	/* B's tries made no thread in A's process, and nothing in B. */
	EXPECT_COUNTERS(CELL_A, 1, 0, 0, 0, 0, 0, 0, 0);
	EXPECT_COUNTERS(CELL_B, 0, 0, 0, 0, 0, 0, 0, 0);
	EXPECT_EQ(0, cell_call(&self->a, fd_same_cell, self->z)) TH_LOG("%s", self->z->sh->err);
	EXPECT_COUNTERS(CELL_A, 1, 1, 0, 0, 0, 0, 0, 0);
	bevent_post(&self->x->go);
	EXPECT_ACTOR_OK(self->x, owner);
	EXPECT_COUNTERS(CELL_A, 0, 0, 0, 0, 0, 0, 0, 0);
	close(sv[0]);
	close(sv[1]);
}

static void flush_on_usr1(int sig)
{
}

/*
 * In A: pass the fd, then read with nothing to read until SIGUSR1 ends a
 * read (the test repeats it: one between two reads is missed);
 * a->sh->val[V_CALLS] counts the reads that came back anyway.
 */
static int flush_owner(void *arg)
{
	struct sigaction sa = { .sa_handler = flush_on_usr1 };
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct binder_version v = { 0 };
	uint8_t buf[64] __attribute__((aligned(8)));
	size_t got;
	int fd, ret;

	/* No SA_RESTART: the signal ends the blocking read. */
	CHILD_CHECK(s, !sigaction(SIGUSR1, &sa, NULL), "sigaction: %s", strerror(errno));
	fd = open(a->dev, O_RDWR | O_CLOEXEC);
	CHILD_CHECK(s, fd >= 0, "open: %s", strerror(errno));
	/* The thread's first call: a new thread's first read returns at once. */
	CHILD_CHECK(s, !ioctl(fd, BINDER_VERSION, &v), "VERSION: %s", strerror(errno));
	CHILD_CHECK(s, !send_fd(a->sock, fd), "send");
	bevent_post(&a->ready);
	for (;;) {
		ret = binder_wr(fd, NULL, 0, buf, sizeof(buf), NULL, &got);
		if (ret == -EINTR)
			break;
		CHILD_CHECK(s, !ret, "read: %d", ret);
		s->val[V_CALLS]++;
	}
	close(fd);
	return 0;
}

/* In B: close dups of A's fd, each of which runs the file's flush. */
static int flush_foreign(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	int fd, i;

	fd = recv_fd(a->sock);
	CHILD_CHECK(s, fd >= 0, "recv: %d", fd);
	for (i = 0; i < 1000; i++)
		close(dup(fd));
	close(fd);
	return 0;
}

/* Closing a passed fd in another cell does not wake the owner's threads. */
TEST_F(cells, flush_from_other_cell)
{
	int sv[2], i, st = -1;
	pid_t owner, done = 0;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	self->x->sock = sv[0];
	self->y->sock = sv[1];
	owner = cell_spawn(&self->a, flush_owner, self->x);
	ASSERT_LT(0, owner);
	ASSERT_EQ(0, wait_event_or_exit(&self->x->ready, owner)) TH_LOG("%s", self->x->sh->err);
	EXPECT_EQ(0, cell_call(&self->b, flush_foreign, self->y)) TH_LOG("%s", self->y->sh->err);
	/* Until it stops. */
	for (i = 0; i < 100 && !(done = waitpid(owner, &st, WNOHANG)); i++) {
		kill(owner, SIGUSR1);
		usleep(50000);
	}
	if (!done) {
		kill(owner, SIGKILL);
		waitpid(owner, &st, 0);
	}
	EXPECT_EQ(0, WIFEXITED(st) ? WEXITSTATUS(st) : -1) TH_LOG("%s", self->x->sh->err);
	EXPECT_EQ(0, self->x->sh->val[V_CALLS])
		TH_LOG("the owner's read returned for another cell's close");
	close(sv[0]);
	close(sv[1]);
}

/* In a cell: ping handle 0 of a->dev and expect BR_DEAD_REPLY. */
static int client_dead(void *arg)
{
	struct actor *a = arg;
	struct bdev b;
	struct brd r;
	uint32_t br = 0;
	int ret;

	ret = bdev_open(&b, a->dev, 0, BMAP_SIZE);
	CHILD_CHECK(a->sh, !ret, "open %s: %d", a->dev, ret);
	brd_init(&r, b.fd);
	ret = ping(&r, 0, &br);
	CHILD_CHECK(a->sh, ret == -EPROTO && br == BR_DEAD_REPLY, "%s: %d %s", a->dev, ret,
		    br_name(br));
	bdev_close(&b);
	return 0;
}

TEST_F(cells, devices_are_separate_contexts)
{
	pid_t mgr, hw;

	ASSERT_EQ(0, access("/dev/hwbinder", F_OK));
	ASSERT_EQ(0, access("/dev/vndbinder", F_OK));
	mgr = start_mgr(&self->b, self->x);
	ASSERT_LT(0, mgr) TH_LOG("%s", self->x->sh->err);
	self->z->dev = "/dev/hwbinder";
	EXPECT_EQ(0, cell_call(&self->b, client_dead, self->z)) TH_LOG("%s", self->z->sh->err);
	self->z->dev = "/dev/vndbinder";
	EXPECT_EQ(0, cell_call(&self->b, client_dead, self->z)) TH_LOG("%s", self->z->sh->err);
	EXPECT_EQ(0, self->x->sh->val[V_CALLS]);
	EXPECT_EQ(0, do_ping(&self->b, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_EQ(1, self->x->sh->val[V_CALLS]);

	/* hwbinder gets a manager of its own while binder has one. */
	self->y->dev = "/dev/hwbinder";
	hw = start_mgr(&self->b, self->y);
	ASSERT_LT(0, hw) TH_LOG("%s", self->y->sh->err);
	EXPECT_EQ(0, do_ping(&self->b, self->z, "/dev/hwbinder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_EQ(1, self->y->sh->val[V_CALLS]);
	EXPECT_EQ(1, self->x->sh->val[V_CALLS]);
	self->z->dev = "/dev/vndbinder";
	EXPECT_EQ(0, cell_call(&self->b, client_dead, self->z)) TH_LOG("%s", self->z->sh->err);
	/* A has none of them. */
	self->z->dev = "/dev/hwbinder";
	EXPECT_EQ(0, cell_call(&self->a, client_dead, self->z)) TH_LOG("%s", self->z->sh->err);

	EXPECT_EQ(0, do_quit(&self->b, self->z, "/dev/hwbinder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_EQ(0, do_quit(&self->b, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_ACTOR_OK(self->y, hw);
	EXPECT_ACTOR_OK(self->x, mgr);
	EXPECT_COUNTERS(CELL_B, 0, 0, 0, 0, 0, -1, 3, 0);
}

/* In A: what files of a cell that is gone answer (@round: when). */
static void orphan_check(struct bchild *s, int fd, int unmapped, int round)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct binder_version v = { 0 };
	uint32_t cmd = BC_ENTER_LOOPER;
	void *map;

	errno = 0;
	CHILD_CHECK(s, ioctl(fd, BINDER_VERSION, &v) == -1 && errno == EPERM,
		    "round %d: VERSION: %s", round, strerror(errno));
	CHILD_CHECK(s, binder_write(fd, &cmd, sizeof(cmd)) == -EPERM, "round %d: WRITE_READ",
		    round);
	errno = 0;
	CHILD_CHECK(s, ioctl(fd, BINDER_SET_CONTEXT_MGR, 0) == -1 && errno == EPERM,
		    "round %d: SET_CONTEXT_MGR: %s", round, strerror(errno));
	map = mmap(NULL, BMAP_SIZE, PROT_READ, MAP_PRIVATE, unmapped, 0);
	CHILD_CHECK(s, map == MAP_FAILED && errno == EINVAL, "round %d: mmap: %s", round,
		    map == MAP_FAILED ? strerror(errno) : "mapped");
	CHILD_CHECK(s, poll(&p, 1, 0) == 1 && (p.revents & POLLERR), "round %d: poll: %#x",
		    round, p.revents);
}

/*
 * In A: a context manager (uid 1000) with a second, unmapped file; once
 * the test has unregistered A, neither works, and still not when the
 * namespace has a new cell.
 */
static int fd_orphan(void *arg)
{
	struct flat_binder_object fbo = {
		.hdr.type = BINDER_TYPE_BINDER,
		.binder = 0x1000,
		.cookie = 0x2000,
	};
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct bdev b;
	int fd, ret;

	ret = bdev_open(&b, a->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open %s: %d", a->dev, ret);
	fd = open(a->dev, O_RDWR | O_CLOEXEC);
	CHILD_CHECK(s, fd >= 0, "open: %s", strerror(errno));
	/* A manager's uid is pinned in its context: not in a new cell's. */
	CHILD_CHECK(s, !setresuid(1000, 1000, 1000), "setresuid: %s", strerror(errno));
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	CHILD_CHECK(s, !ioctl(b.fd, BINDER_SET_CONTEXT_MGR_EXT, &fbo),
		    "SET_CONTEXT_MGR_EXT: %s", strerror(errno));
	CHILD_CHECK(s, !bc_plain(b.fd, BC_ENTER_LOOPER), "BC_ENTER_LOOPER");
	bevent_post(&a->ready);
	bevent_wait(&a->go);
	orphan_check(s, b.fd, fd, 1);
	actor_step(a);
	orphan_check(s, b.fd, fd, 2);
	close(fd);
	bdev_close(&b);
	return 0;
}

/*
 * Files outlive their cell's unregistration but work no more (ioctl EPERM,
 * mmap EINVAL, poll EPOLLERR); a new cell of the same namespace and name
 * starts with nothing of the old one: no manager, no pinned manager uid
 * (root may become manager where uid 1000 was), no counts.
 */
TEST_F(cells, unregistered_cell)
{
	pid_t pid;

	pid = cell_spawn(&self->a, fd_orphan, self->x);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, wait_event_or_exit(&self->x->ready, pid)) TH_LOG("%s", self->x->sh->err);
	EXPECT_COUNTERS(CELL_A, 2, 1, 1, 0, 0, 0, 0, 0);
	ASSERT_EQ(0, cask_unregister(CELL_A));
	self->a.registered = false;
	/* Gone from sysfs at once, although its files are open. */
	EXPECT_EQ(LONG_MIN, bcount(CELL_A, "procs"));
	bevent_post(&self->x->go);
	ASSERT_EQ(0, wait_event_or_exit(&self->x->step, pid)) TH_LOG("%s", self->x->sh->err);

	ASSERT_EQ(0, cask_register(CELL_A, self->a.c.init));
	self->a.registered = true;
	EXPECT_COUNTERS(CELL_A, 0, 0, 0, 0, 0, 0, 0, 0);
	/*
	 * The old manager's file is open, but in the old cell; root may
	 * become manager, though uid 1000 was the old cell's.
	 */
	self->z->dev = "/dev/binder";
	EXPECT_EQ(0, cell_call(&self->a, client_dead, self->z)) TH_LOG("%s", self->z->sh->err);
	EXPECT_EQ(0, cell_call(&self->a, try_set_mgr, self->z));
	EXPECT_COUNTERS(CELL_A, 0, 0, 0, 0, 0, 1, 1, 0);
	bevent_post(&self->x->resume);
	EXPECT_ACTOR_OK(self->x, pid);
	EXPECT_COUNTERS(CELL_A, 0, 0, 0, 0, 0, 1, 1, 0);
}

/* Wait up to 2 s for @pid to sleep (state S): whether it did. */
static bool wait_asleep(pid_t pid)
{
	char path[64], buf[512], *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (i = 0; i < 200; i++) {
		if (read_file(path, buf, sizeof(buf)))
			return false;
		p = strrchr(buf, ')');
		if (p && !strncmp(p, ") S", 3))
			return true;
		usleep(10000);
	}
	return false;
}

/* Wait up to @ms for @pid to exit: its status, or -ETIMEDOUT (it is killed). */
static int exit_within(pid_t pid, int ms)
{
	int st, i;

	for (i = 0; i < ms / 10; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	child_status(pid);
	return -ETIMEDOUT;
}

/* In A: the manager takes one call and holds it until the test's go. */
static int hold_mgr(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct binder_transaction_data tr;
	struct bdev b;
	struct brd r;
	uint32_t cmd;
	int ret;

	ret = bdev_open(&b, a->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open %s: %d", a->dev, ret);
	CHILD_CHECK(s, !ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0), "SET_CONTEXT_MGR: %s",
		    strerror(errno));
	CHILD_CHECK(s, !bc_plain(b.fd, BC_ENTER_LOOPER), "BC_ENTER_LOOPER");
	bevent_post(&a->ready);
	brd_init(&r, b.fd);
	ret = br_wait(&r, &cmd, &tr, sizeof(tr), NULL);
	CHILD_CHECK(s, !ret && cmd == BR_TRANSACTION, "%d %s", ret, br_name(cmd));
	bevent_post(&a->paused);
	bevent_wait(&a->go);
	/* The cell is gone: the reply cannot be sent. */
	ret = txn_reply(b.fd, 0, NULL);
	CHILD_CHECK(s, ret == -EPERM, "BC_REPLY: %d", ret);
	bdev_close(&b);
	return 0;
}

/* The errno of a file's next ioctl once its cell is gone: EPERM. */
static void gone_check(struct bchild *s, int fd)
{
	struct binder_version v = { 0 };

	errno = 0;
	CHILD_CHECK(s, ioctl(fd, BINDER_VERSION, &v) == -1 && errno == EPERM,
		    "next ioctl: %s", strerror(errno));
}

/* In A: a looper asleep in a read with nothing to read. */
static int sleep_reader(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	uint8_t buf[64] __attribute__((aligned(8)));
	size_t got = 0;
	struct bdev b;
	int ret;

	ret = bdev_open(&b, a->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open %s: %d", a->dev, ret);
	/* The thread's first read would return at once: not that one. */
	CHILD_CHECK(s, !bc_plain(b.fd, BC_ENTER_LOOPER), "BC_ENTER_LOOPER");
	bevent_post(&a->ready);
	ret = binder_wr(b.fd, NULL, 0, buf, sizeof(buf), NULL, &got);
	CHILD_CHECK(s, ret == -EPERM, "read: %d, %zu bytes", ret, got);
	gone_check(s, b.fd);
	bdev_close(&b);
	return 0;
}

/* In A: a sync call to the manager, which gets it and never answers. */
static int sync_caller(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct bdev b;
	struct brd r;
	uint32_t br = 0;
	int ret;

	ret = bdev_open(&b, a->dev, 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open %s: %d", a->dev, ret);
	brd_init(&r, b.fd);
	ret = ping(&r, 0, &br);
	CHILD_CHECK(s, ret == -EPERM, "call: %d, %s", ret, br_name(br));
	gone_check(s, b.fd);
	bdev_close(&b);
	return 0;
}

/*
 * Threads asleep in BINDER_WRITE_READ when their cell is unregistered
 * wake up: a looper with nothing to read, and a caller whose call was
 * delivered (its reply can no longer come: the receiver's BC_REPLY is
 * refused). Their reads fail with EPERM, as every later ioctl.
 */
TEST_F(cells, unregister_wakes_sleepers)
{
	pid_t mgr, reader, caller;

	mgr = cell_spawn(&self->a, hold_mgr, self->x);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, wait_event_or_exit(&self->x->ready, mgr)) TH_LOG("%s", self->x->sh->err);
	reader = cell_spawn(&self->a, sleep_reader, self->y);
	ASSERT_LT(0, reader);
	ASSERT_EQ(0, wait_event_or_exit(&self->y->ready, reader)) TH_LOG("%s", self->y->sh->err);
	caller = cell_spawn(&self->a, sync_caller, self->z);
	ASSERT_LT(0, caller);
	/* Delivered: the manager has it. */
	ASSERT_EQ(0, wait_event_or_exit(&self->x->paused, mgr)) TH_LOG("%s", self->x->sh->err);
	ASSERT_TRUE(wait_asleep(reader));
	ASSERT_TRUE(wait_asleep(caller));
	EXPECT_COUNTERS(CELL_A, 3, 3, 1, -1, 1, 1, 0, -1);

	ASSERT_EQ(0, cask_unregister(CELL_A));
	self->a.registered = false;
	/* -ETIMEDOUT: still asleep. */
	EXPECT_EQ(0, exit_within(reader, 2000)) TH_LOG("looper: %s", self->y->sh->err);
	EXPECT_EQ(0, exit_within(caller, 2000)) TH_LOG("caller: %s", self->z->sh->err);
	bevent_post(&self->x->go);
	EXPECT_ACTOR_OK(self->x, mgr);
}

/* ---- sysfs access ----------------------------------------------------------- */

#define BFILE(cell, f) CELLS cell "/binder/" f

static const char *const binder_files[] = {
	"procs", "threads", "nodes", "refs", "transactions", "transactions_total",
	"failed_transactions", "buffer_bytes", "max_buffer_bytes", "max_procs",
	"nice_floor",
};

/*
 * The host's limits, nice_floor among them: B's root changes none of
 * them, not even to lower them.
 */
static const struct fwrite own_limits[] = {
	{ BFILE(CELL_B, "max_buffer_bytes"), "4096" },
	{ BFILE(CELL_B, "max_buffer_bytes"), "4097" },
	{ BFILE(CELL_B, "max_buffer_bytes"), "max" },
	{ BFILE(CELL_B, "max_procs"), "8" },
	{ BFILE(CELL_B, "max_procs"), "9" },
	{ BFILE(CELL_B, "max_procs"), "max" },
	{ BFILE(CELL_B, "nice_floor"), "5" },
	{ BFILE(CELL_B, "nice_floor"), "19" },
	{ BFILE(CELL_B, "nice_floor"), "-1" },
	{ BFILE(CELL_B, "nice_floor"), "3" },
};

static const struct fwrite other_cell[] = {
	{ BFILE(CELL_A, "max_buffer_bytes"), "4096" },
	{ BFILE(CELL_A, "max_procs"), "1" },
	{ BFILE(CELL_A, "nice_floor"), "10" },
	{ BFILE("host", "max_procs"), "1" },
	{ BFILE("host", "nice_floor"), "10" },
};

static const char *const a_paths[] = {
	BFILE(CELL_A, "procs"), BFILE(CELL_A, "threads"), BFILE(CELL_A, "nodes"),
	BFILE(CELL_A, "refs"), BFILE(CELL_A, "transactions"),
	BFILE(CELL_A, "transactions_total"), BFILE(CELL_A, "failed_transactions"),
	BFILE(CELL_A, "buffer_bytes"), BFILE(CELL_A, "max_buffer_bytes"),
	BFILE(CELL_A, "max_procs"), BFILE(CELL_A, "nice_floor"),
};

static const char *const b_paths[] = {
	BFILE(CELL_B, "procs"), BFILE(CELL_B, "threads"), BFILE(CELL_B, "nodes"),
	BFILE(CELL_B, "refs"), BFILE(CELL_B, "transactions"),
	BFILE(CELL_B, "transactions_total"), BFILE(CELL_B, "failed_transactions"),
	BFILE(CELL_B, "buffer_bytes"), BFILE(CELL_B, "max_buffer_bytes"),
	BFILE(CELL_B, "max_procs"), BFILE(CELL_B, "nice_floor"),
};

TEST_F(cells, sysfs_access)
{
	char path[PATH_MAX], buf[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(binder_files); i++) {
		/* The host sees both cells. */
		snprintf(path, sizeof(path), CELLS CELL_A "/binder/%s", binder_files[i]);
		EXPECT_EQ(0, read_file(path, buf, sizeof(buf))) TH_LOG("%s", path);
		snprintf(path, sizeof(path), CELLS CELL_B "/binder/%s", binder_files[i]);
		EXPECT_EQ(0, read_file(path, buf, sizeof(buf))) TH_LOG("%s", path);
		/* B sees its own, not A's. */
		EXPECT_EQ(0, container_run(&self->b.c, try_read, (void *)b_paths[i]))
			TH_LOG("%s", b_paths[i]);
		EXPECT_EQ(EACCES, container_run(&self->b.c, try_read, (void *)a_paths[i]))
			TH_LOG("%s", a_paths[i]);
		EXPECT_EQ(EACCES, container_run(&self->a.c, try_read, (void *)b_paths[i]))
			TH_LOG("%s", b_paths[i]);
	}
	/*
	 * The cell's root owns them, 0400; but the limits (the last three)
	 * are the host's: its root's, 0644.
	 */
	for (i = 0; i < ARRAY_SIZE(binder_files); i++) {
		bool host_file = i >= 8;
		struct stat st;

		ASSERT_EQ(0, stat(b_paths[i], &st)) TH_LOG("%s", b_paths[i]);
		EXPECT_EQ(host_file ? 0644 : 0400, st.st_mode & 07777)
			TH_LOG("%s", b_paths[i]);
		EXPECT_EQ(variant->b_userns && !host_file ? UID_BASE : 0, st.st_uid)
			TH_LOG("%s", b_paths[i]);
	}
	/* The defaults. */
	EXPECT_EQ(LONG_MAX, bcount(CELL_B, "max_buffer_bytes"));
	EXPECT_EQ(LONG_MAX, bcount(CELL_B, "max_procs"));
	EXPECT_EQ(0, bcount(CELL_B, "nice_floor"));
	EXPECT_EQ(-20, bcount("host", "nice_floor"));

	/*
	 * B's root changes none of the host's limits: in a user namespace
	 * it cannot open them for writing (EACCES); as the host's own root
	 * (no user namespace) it gets past the mode, not the store (EPERM).
	 */
	ASSERT_EQ(0, bset(CELL_B, "max_buffer_bytes", "4096"));
	ASSERT_EQ(0, bset(CELL_B, "max_procs", "8"));
	ASSERT_EQ(0, bset(CELL_B, "nice_floor", "2"));
	for (i = 0; i < ARRAY_SIZE(own_limits); i++) {
		EXPECT_EQ(variant->b_userns ? EACCES : EPERM,
			  container_run(&self->b.c, try_write, (void *)&own_limits[i]))
			TH_LOG("%s %s", own_limits[i].path, own_limits[i].val);
	}
	EXPECT_EQ(4096, bcount(CELL_B, "max_buffer_bytes"));
	EXPECT_EQ(8, bcount(CELL_B, "max_procs"));
	EXPECT_EQ(2, bcount(CELL_B, "nice_floor"));
	/* The host raises them again, and lifts B's floor as it likes. */
	EXPECT_EQ(0, bset(CELL_B, "max_buffer_bytes", "max"));
	EXPECT_EQ(0, bset(CELL_B, "max_procs", "max"));
	EXPECT_EQ(0, bset(CELL_B, "nice_floor", "-1"));
	EXPECT_EQ(LONG_MAX, bcount(CELL_B, "max_buffer_bytes"));
	EXPECT_EQ(LONG_MAX, bcount(CELL_B, "max_procs"));
	EXPECT_EQ(-1, bcount(CELL_B, "nice_floor"));
	EXPECT_EQ(0, bset(CELL_B, "nice_floor", "0"));
	/* B still reads what the host decided. */
	EXPECT_EQ(0, container_run(&self->b.c, try_read,
				   (void *)BFILE(CELL_B, "nice_floor")));

	/* Not another cell's, nor the host's. */
	for (i = 0; i < ARRAY_SIZE(other_cell); i++) {
		EXPECT_EQ(EACCES, container_run(&self->b.c, try_write, (void *)&other_cell[i]))
			TH_LOG("%s", other_cell[i].path);
	}
	EXPECT_EQ(LONG_MAX, bcount(CELL_A, "max_buffer_bytes"));
	EXPECT_EQ(LONG_MAX, bcount(CELL_A, "max_procs"));
	EXPECT_EQ(0, bcount(CELL_A, "nice_floor"));
	EXPECT_EQ(LONG_MAX, bcount("host", "max_procs"));
	EXPECT_EQ(-20, bcount("host", "nice_floor"));
	/* Read-only files stay read-only, for the cell's root too. */
	EXPECT_NE(0, bset(CELL_B, "procs", "0"));
}

TEST_F(cells, invalid_limits)
{
	static const char *const bad[][2] = {
		{ "max_buffer_bytes", "-1" },
		{ "max_buffer_bytes", "abc" },
		{ "max_buffer_bytes", "12abc" },
		{ "max_buffer_bytes", "maximum" },
		{ "max_buffer_bytes", "0x40" },
		{ "max_procs", "-1" },
		{ "max_procs", "x" },
		{ "max_procs", "99999999999999999999999" },
		{ "nice_floor", "-21" },
		{ "nice_floor", "20" },
		{ "nice_floor", "abc" },
		{ "nice_floor", "max" },
		{ "nice_floor", "1.5" },
	};
	size_t i;

	ASSERT_EQ(0, bset(CELL_B, "max_buffer_bytes", "1000"));
	ASSERT_EQ(0, bset(CELL_B, "max_procs", "10"));
	ASSERT_EQ(0, bset(CELL_B, "nice_floor", "3"));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, bset(CELL_B, bad[i][0], bad[i][1]))
			TH_LOG("%s '%s'", bad[i][0], bad[i][1]);
	}
	EXPECT_EQ(1000, bcount(CELL_B, "max_buffer_bytes"));
	EXPECT_EQ(10, bcount(CELL_B, "max_procs"));
	EXPECT_EQ(3, bcount(CELL_B, "nice_floor"));
	/* The bounds themselves are valid. */
	EXPECT_EQ(0, bset(CELL_B, "nice_floor", "-20"));
	EXPECT_EQ(0, bset(CELL_B, "nice_floor", "19"));
	EXPECT_EQ(0, bset(CELL_B, "max_procs", "0"));
	EXPECT_EQ(0, bset(CELL_B, "max_buffer_bytes", "0"));
	EXPECT_EQ(0, bset(CELL_B, "max_buffer_bytes", "max\n"));
	EXPECT_EQ(LONG_MAX, bcount(CELL_B, "max_buffer_bytes"));
}

/* ---- counters --------------------------------------------------------------- */

/* In B: the client of TEST_F(cells, counters), stepping with the test. */
static int counting_client(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct binder_transaction_data reply;
	struct bdev b;
	struct brd r;
	struct txn t;
	uint32_t br;
	int ret;

	ret = bdev_open(&b, "/dev/binder", 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open: %d", ret);
	brd_init(&r, b.fd);
	actor_step(a);					/* 1: opened */

	txn_init(&t);
	txn_put(&t, "ping", 5);
	ret = txn_call(&r, 0, CODE_PING, &t, &br, &reply);
	CHILD_CHECK(s, !ret && br == BR_REPLY, "ping: %d %s", ret, br_name(br));
	actor_step(a);					/* 2: holding the reply */
	CHILD_CHECK(s, !txn_free(b.fd, &reply), "free");
	actor_step(a);					/* 3: reply freed */

	/* A node of ours to the manager, which holds the call. */
	txn_init(&t);
	txn_binder(&t, 0x5000, 0x6000, 0);
	ret = txn_call(&r, 0, CODE_HOLD, &t, &br, &reply);
	CHILD_CHECK(s, !ret && br == BR_REPLY, "hold: %d %s", ret, br_name(br));
	CHILD_CHECK(s, !txn_free(b.fd, &reply), "free");
	actor_step(a);					/* 4: hold done */

	ret = ping(&r, 7, &br);
	CHILD_CHECK(s, ret == -EPROTO && br == BR_FAILED_REPLY, "handle 7: %d %s", ret,
		    br_name(br));
	actor_step(a);					/* 5: failed call */

	ret = call(&r, 0, CODE_QUIT, 0, &br);
	CHILD_CHECK(s, !ret, "quit: %d %s", ret, br_name(br));
	bdev_close(&b);
	return 0;
}

static int wait_step(struct actor *a, pid_t pid)
{
	return wait_event_or_exit(&a->step, pid);
}

TEST_F(cells, counters)
{
	pid_t mgr, cli;

	EXPECT_COUNTERS(CELL_B, 0, 0, 0, 0, 0, 0, 0, 0);
	mgr = start_mgr(&self->b, self->x);
	ASSERT_LT(0, mgr) TH_LOG("%s", self->x->sh->err);
	/* Open, map, SET_CONTEXT_MGR, ENTER_LOOPER: one thread, one node. */
	EXPECT_COUNTERS(CELL_B, 1, 1, 1, 0, 0, 0, 0, 0);

	cli = cell_spawn(&self->b, counting_client, self->y);
	ASSERT_LT(0, cli);
	ASSERT_EQ(0, wait_step(self->y, cli)) TH_LOG("%s", self->y->sh->err);
	EXPECT_COUNTERS(CELL_B, 2, 1, 1, 0, 0, 0, 0, 0);
	bevent_post(&self->y->resume);

	/* A call and its reply; the reply's 8 bytes are still the client's. */
	ASSERT_EQ(0, wait_step(self->y, cli)) TH_LOG("%s", self->y->sh->err);
	EXPECT_COUNTERS(CELL_B, 2, 2, 1, 0, 0, 2, 0, 8);
	bevent_post(&self->y->resume);
	ASSERT_EQ(0, wait_step(self->y, cli)) TH_LOG("%s", self->y->sh->err);
	EXPECT_COUNTERS(CELL_B, 2, 2, 1, 0, 0, 2, 0, 0);
	bevent_post(&self->y->resume);

	/*
	 * In flight: one transaction, its buffer (a flat_binder_object and
	 * its offset: 24 + 8 bytes), the client's node and the manager's
	 * reference to it.
	 */
	ASSERT_EQ(0, wait_event_or_exit(&self->x->paused, mgr)) TH_LOG("%s", self->x->sh->err);
	EXPECT_COUNTERS(CELL_B, 2, 2, 2, 1, 1, 3, 0, 32);
	bevent_post(&self->x->go);
	ASSERT_EQ(0, wait_step(self->y, cli)) TH_LOG("%s", self->y->sh->err);
	/* The manager freed the buffer, so its reference went with it. */
	EXPECT_COUNTERS(CELL_B, 2, 2, -1, 0, 0, 4, 0, 0);
	bevent_post(&self->y->resume);

	ASSERT_EQ(0, wait_step(self->y, cli)) TH_LOG("%s", self->y->sh->err);
	EXPECT_COUNTERS(CELL_B, 2, 2, -1, 0, 0, 5, 1, 0);
	bevent_post(&self->y->resume);

	EXPECT_ACTOR_OK(self->y, cli);
	EXPECT_ACTOR_OK(self->x, mgr);
	EXPECT_EQ(3, self->x->sh->val[V_CALLS]);
	/* All closed: only the totals remain. */
	EXPECT_COUNTERS(CELL_B, 0, 0, 0, 0, 0, 7, 1, 0);
	/* None of it was A's. */
	EXPECT_COUNTERS(CELL_A, 0, 0, 0, 0, 0, 0, 0, 0);
}

/* ---- limits ----------------------------------------------------------------- */

/* In a cell: a call of a->arg bytes to handle 0; the BR_ code in val[4]. */
static int sized_call(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct binder_extended_error ee = { 0 };
	struct bdev b;
	struct brd r;
	uint32_t br = 0;
	int ret;

	ret = bdev_open(&b, "/dev/binder", 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open: %d", ret);
	brd_init(&r, b.fd);
	ret = call(&r, 0, CODE_PING, a->arg, &br);
	s->val[4] = br;
	if (ret) {
		CHILD_CHECK(s, ret == -EPROTO, "call: %d", ret);
		CHILD_CHECK(s, !ioctl(b.fd, BINDER_GET_EXTENDED_ERROR, &ee), "%s",
			    strerror(errno));
		s->val[5] = ee.command;
		s->val[6] = (uint64_t)(int64_t)ee.param;
	}
	bdev_close(&b);
	return 0;
}

TEST_F(cells, max_buffer_bytes)
{
	struct bchild *s = self->y->sh;
	pid_t mgr;

	mgr = start_mgr(&self->b, self->x);
	ASSERT_LT(0, mgr) TH_LOG("%s", self->x->sh->err);
	ASSERT_EQ(0, bset(CELL_B, "max_buffer_bytes", "64"));

	/* 64 bytes fit, the reply's 8 too. */
	self->y->arg = 64;
	EXPECT_EQ(0, cell_call(&self->b, sized_call, self->y)) TH_LOG("%s", s->err);
	EXPECT_EQ(BR_REPLY, s->val[4]) TH_LOG("%s", br_name(s->val[4]));
	EXPECT_EQ(1, self->x->sh->val[V_CALLS]);

	self->y->arg = 256;
	EXPECT_EQ(0, cell_call(&self->b, sized_call, self->y)) TH_LOG("%s", s->err);
	EXPECT_EQ(BR_FAILED_REPLY, s->val[4]) TH_LOG("%s", br_name(s->val[4]));
	EXPECT_EQ(BR_FAILED_REPLY, s->val[5]) TH_LOG("%s", br_name(s->val[5]));
	EXPECT_EQ(-ENOSPC, (int)s->val[6]);
	EXPECT_EQ(1, self->x->sh->val[V_CALLS]);
	EXPECT_EQ(1, bcount(CELL_B, "failed_transactions"));
	/* 72 bytes do not fit either. */
	self->y->arg = 72;
	EXPECT_EQ(0, cell_call(&self->b, sized_call, self->y)) TH_LOG("%s", s->err);
	EXPECT_EQ(BR_FAILED_REPLY, s->val[4]) TH_LOG("%s", br_name(s->val[4]));
	EXPECT_EQ(2, bcount(CELL_B, "failed_transactions"));

	ASSERT_EQ(0, bset(CELL_B, "max_buffer_bytes", "max"));
	self->y->arg = 256;
	memset(s->val, 0, sizeof(s->val));
	EXPECT_EQ(0, cell_call(&self->b, sized_call, self->y)) TH_LOG("%s", s->err);
	EXPECT_EQ(BR_REPLY, s->val[4]) TH_LOG("%s", br_name(s->val[4]));
	EXPECT_EQ(2, self->x->sh->val[V_CALLS]);
	EXPECT_EQ(2, bcount(CELL_B, "failed_transactions"));

	EXPECT_EQ(0, do_quit(&self->b, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_ACTOR_OK(self->x, mgr);
	EXPECT_COUNTERS(CELL_B, 0, 0, 0, 0, 0, 8, 2, 0);
}

#define BIG_SENDERS	16
#define BIG_SIZE	(256 * 1024)
#define BIG_LIMIT	(1024 * 1024)
#define BIG_MAP		(4 * 1024 * 1024)	/* one-way space: half, 2 MiB */

/* Slots of the senders' shared struct bchild. */
#define V_OPEN		0	/* senders ready */
#define V_SENT		1	/* BR_TRANSACTION_COMPLETE */
#define V_NOSPACE	2	/* BR_FAILED_REPLY, extended error -ENOSPC */

/* In B: the context manager, which never reads, until the test's go. */
static int idle_mgr(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct bdev b;
	int ret;

	ret = bdev_open(&b, a->dev, 0, BIG_MAP);
	CHILD_CHECK(s, !ret, "open %s: %d", a->dev, ret);
	CHILD_CHECK(s, !ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0), "SET_CONTEXT_MGR: %s",
		    strerror(errno));
	bevent_post(&a->ready);
	bevent_wait(&a->go);
	bdev_close(&b);
	return 0;
}

/* In B: one one-way call of BIG_SIZE bytes to handle 0, with all the others. */
static int big_oneway(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct binder_transaction_data tr = {
		.code = CODE_PING,
		.flags = TF_ONE_WAY,
		.data_size = BIG_SIZE,
	};
	struct binder_extended_error ee = { 0 };
	struct pollfd p = { .fd = a->go.fd[0], .events = POLLIN };
	struct bdev b;
	struct brd r;
	uint32_t cmd;
	void *data;
	int ret;

	data = calloc(1, BIG_SIZE);
	CHILD_CHECK(s, data, "calloc");
	tr.data.ptr.buffer = (uintptr_t)data;
	ret = bdev_open(&b, a->dev, 0, 0);
	CHILD_CHECK(s, !ret, "open %s: %d", a->dev, ret);
	__atomic_fetch_add(&s->val[V_OPEN], 1, __ATOMIC_SEQ_CST);
	/* The go is posted once and read by nobody: all senders start. */
	CHILD_CHECK(s, poll(&p, 1, -1) == 1, "poll: %s", strerror(errno));
	ret = bc_tr(b.fd, BC_TRANSACTION, &tr, 0);
	CHILD_CHECK(s, !ret, "BC_TRANSACTION: %d", ret);
	brd_init(&r, b.fd);
	ret = br_wait(&r, &cmd, NULL, 0, NULL);
	CHILD_CHECK(s, !ret, "read: %d", ret);
	if (cmd == BR_TRANSACTION_COMPLETE) {
		__atomic_fetch_add(&s->val[V_SENT], 1, __ATOMIC_SEQ_CST);
	} else {
		CHILD_CHECK(s, cmd == BR_FAILED_REPLY, "%s", br_name(cmd));
		CHILD_CHECK(s, !ioctl(b.fd, BINDER_GET_EXTENDED_ERROR, &ee), "%s",
			    strerror(errno));
		CHILD_CHECK(s, ee.param == -ENOSPC, "extended error %d", ee.param);
		__atomic_fetch_add(&s->val[V_NOSPACE], 1, __ATOMIC_SEQ_CST);
	}
	bdev_close(&b);
	free(data);
	return 0;
}

/*
 * Senders racing for the last of max_buffer_bytes: the allocation sleeps
 * (it populates 64 pages, under the area's mutex), and a limit checked
 * before it and charged after lets every sender that checked meanwhile
 * through. Exactly BIG_LIMIT / BIG_SIZE fit, as they would one by one.
 */
TEST_F(cells, max_buffer_bytes_concurrent)
{
	struct bchild *s = self->y->sh;
	pid_t mgr, senders[BIG_SENDERS];
	char limit[32];
	int i;

	mgr = cell_spawn(&self->b, idle_mgr, self->x);
	ASSERT_LT(0, mgr);
	ASSERT_EQ(0, wait_event_or_exit(&self->x->ready, mgr)) TH_LOG("%s", self->x->sh->err);
	snprintf(limit, sizeof(limit), "%d", BIG_LIMIT);
	ASSERT_EQ(0, bset(CELL_B, "max_buffer_bytes", limit));
	for (i = 0; i < BIG_SENDERS; i++) {
		senders[i] = cell_spawn(&self->b, big_oneway, self->y);
		ASSERT_LT(0, senders[i]);
	}
	for (i = 0; i < 1000 && __atomic_load_n(&s->val[V_OPEN], __ATOMIC_SEQ_CST) <
				BIG_SENDERS && !s->err[0]; i++)
		usleep(10000);
	ASSERT_EQ(BIG_SENDERS, s->val[V_OPEN]) TH_LOG("%s", s->err);
	bevent_post(&self->y->go);
	for (i = 0; i < BIG_SENDERS; i++)
		EXPECT_EQ(0, child_status(senders[i])) TH_LOG("%s", s->err);

	/* Nothing was freed: the most the cell ever had. */
	EXPECT_GE(BIG_LIMIT, bcount(CELL_B, "buffer_bytes"));
	EXPECT_EQ(BIG_LIMIT / BIG_SIZE, s->val[V_SENT]);
	EXPECT_EQ(BIG_SENDERS - BIG_LIMIT / BIG_SIZE, s->val[V_NOSPACE]);
	EXPECT_EQ(s->val[V_SENT] * BIG_SIZE, bcount(CELL_B, "buffer_bytes"));

	/* The manager's end gives it all back. */
	bevent_post(&self->x->go);
	EXPECT_ACTOR_OK(self->x, mgr);
	EXPECT_COUNTERS(CELL_B, 0, 0, 0, 0, 0, BIG_SENDERS, s->val[V_NOSPACE], 0);
	EXPECT_EQ(0, bset(CELL_B, "max_buffer_bytes", "max"));
}

/* In a cell: open limits; a->arg is how many opens are allowed. */
static int open_limit(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	static const char *const devs[] = { "/dev/binder", "/dev/hwbinder", "/dev/vndbinder" };
	int fds[4], i, n = a->arg;

	for (i = 0; i < n; i++) {
		fds[i] = open(devs[i % 3], O_RDWR | O_CLOEXEC);
		CHILD_CHECK(s, fds[i] >= 0, "open %d: %s", i, strerror(errno));
	}
	for (i = 0; i < 3; i++) {
		errno = 0;
		CHILD_CHECK(s, open(devs[i], O_RDWR | O_CLOEXEC) < 0 && errno == ENOSPC,
			    "open %s past %d: %s", devs[i], n, strerror(errno));
	}
	if (n) {
		/* A place freed is a place taken. */
		close(fds[0]);
		fds[0] = open(devs[0], O_RDWR | O_CLOEXEC);
		CHILD_CHECK(s, fds[0] >= 0, "reopen: %s", strerror(errno));
		errno = 0;
		CHILD_CHECK(s, open(devs[1], O_RDWR | O_CLOEXEC) < 0 && errno == ENOSPC,
			    "open past %d again: %s", n, strerror(errno));
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}

/* In a cell: the errno of opening /dev/binder. */
static int try_open(void *arg)
{
	int fd = open("/dev/binder", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

TEST_F(cells, max_procs)
{
	ASSERT_EQ(0, bset(CELL_B, "max_procs", "1"));
	self->y->arg = 1;
	EXPECT_EQ(0, cell_call(&self->b, open_limit, self->y)) TH_LOG("%s", self->y->sh->err);
	EXPECT_EQ(0, bcount(CELL_B, "procs"));
	ASSERT_EQ(0, bset(CELL_B, "max_procs", "2"));
	self->y->arg = 2;
	EXPECT_EQ(0, cell_call(&self->b, open_limit, self->y)) TH_LOG("%s", self->y->sh->err);
	ASSERT_EQ(0, bset(CELL_B, "max_procs", "0"));
	self->y->arg = 0;
	EXPECT_EQ(0, cell_call(&self->b, open_limit, self->y)) TH_LOG("%s", self->y->sh->err);
	/* The limit is B's only. */
	EXPECT_EQ(0, cell_call(&self->a, try_open, NULL));
	/* Refused opens left nothing behind. */
	EXPECT_COUNTERS(CELL_B, 0, 0, 0, 0, 0, 0, 0, 0);
	ASSERT_EQ(0, bset(CELL_B, "max_procs", "max"));
	EXPECT_EQ(0, cell_call(&self->b, try_open, NULL));
	EXPECT_COUNTERS(CELL_B, 0, 0, 0, 0, 0, 0, 0, 0);
}

/* In a cell: call CODE_NICE; val[8] the handler's nice, val[9] it after. */
static int nice_call(void *arg)
{
	struct actor *a = arg;
	struct bchild *s = a->sh;
	struct binder_transaction_data reply;
	struct bdev b;
	struct brd r;
	uint32_t br = 0;
	int ret, nice;

	ret = bdev_open(&b, "/dev/binder", 0, BMAP_SIZE);
	CHILD_CHECK(s, !ret, "open: %d", ret);
	brd_init(&r, b.fd);
	ret = txn_call(&r, 0, CODE_NICE, NULL, &br, &reply);
	CHILD_CHECK(s, !ret && br == BR_REPLY, "call: %d %s", ret, br_name(br));
	CHILD_CHECK(s, reply.data_size == sizeof(nice), "size");
	memcpy(&nice, (void *)(uintptr_t)reply.data.ptr.buffer, sizeof(nice));
	s->val[8] = (uint64_t)(int64_t)nice;
	txn_free(b.fd, &reply);
	/* The handler is back at its own nice once it has replied. */
	errno = 0;
	nice = getpriority(PRIO_PROCESS, a->arg);
	CHILD_CHECK(s, !errno, "getpriority %d: %s", a->arg, strerror(errno));
	s->val[9] = (uint64_t)(int64_t)nice;
	bdev_close(&b);
	return 0;
}

TEST_F(cells, nice_floor)
{
	static const struct { const char *floor; int want; } steps[] = {
		{ NULL, 0 },	/* the default floor of a cell */
		{ "5", 5 },
		{ "-20", -20 },
		{ "-7", -7 },
		{ "0", 0 },
	};
	struct bchild *s = self->y->sh;
	size_t i;
	pid_t mgr;

	/* A manager at nice 10 whose node asks for nice -20. */
	self->x->nice = 10;
	self->x->mgr_flags = (uint8_t)-20 & FLAT_BINDER_FLAG_PRIORITY_MASK;
	mgr = start_mgr(&self->b, self->x);
	ASSERT_LT(0, mgr) TH_LOG("%s", self->x->sh->err);
	self->y->arg = self->x->sh->val[V_PID];
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		if (steps[i].floor)
			ASSERT_EQ(0, bset(CELL_B, "nice_floor", steps[i].floor));
		memset(s->val, 0x55, sizeof(s->val));
		EXPECT_EQ(0, cell_call(&self->b, nice_call, self->y)) TH_LOG("%s", s->err);
		EXPECT_EQ(steps[i].want, (int)s->val[8])
			TH_LOG("floor %s: handler at nice %d", steps[i].floor ?: "default",
			       (int)s->val[8]);
		EXPECT_EQ(10, (int)s->val[9]) TH_LOG("floor %s", steps[i].floor ?: "default");
	}
	EXPECT_EQ(0, do_quit(&self->b, self->z, "/dev/binder")) TH_LOG("%s", self->z->sh->err);
	EXPECT_ACTOR_OK(self->x, mgr);
}

/* ---- allocation failures ------------------------------------------------------ */

static const char *binder_fault_missing(void)
{
	if (access("/dev/binder", F_OK) == 0)
		return fault_missing();
	return cask_missing() ?: "cask_binder is not loaded";
}

/*
 * One binder operation with the @n-th allocation of its step under test
 * failing (0: none); *@reached tells whether it failed. Returns 0 on
 * success, a positive errno, or a BR_ code of a failed call.
 */
typedef uint32_t (*fault_op)(struct actor *a, int failfd, int n, bool *reached);

static uint32_t op_open(struct actor *a, int failfd, int n, bool *reached)
{
	int fd;

	if (n)
		fail_nth_set(failfd, n);
	fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
	*reached = n && fail_nth_done(failfd);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static uint32_t op_mmap(struct actor *a, int failfd, int n, bool *reached)
{
	uint32_t ret = 0;
	void *map;
	int fd;

	fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (n)
		fail_nth_set(failfd, n);
	map = mmap(NULL, BMAP_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	*reached = n && fail_nth_done(failfd);
	if (map == MAP_FAILED)
		ret = errno;
	else
		munmap(map, BMAP_SIZE);
	close(fd);
	return ret;
}

static uint32_t op_first_ioctl(struct actor *a, int failfd, int n, bool *reached)
{
	struct binder_version v;
	uint32_t ret = 0;
	void *map;
	int fd;

	fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	map = mmap(NULL, BMAP_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ret = errno;
		close(fd);
		return ret;
	}
	if (n)
		fail_nth_set(failfd, n);
	if (ioctl(fd, BINDER_VERSION, &v))
		ret = errno;
	*reached = n && fail_nth_done(failfd);
	if (!ret && (ioctl(fd, BINDER_VERSION, &v) ||
		     v.protocol_version != BINDER_CURRENT_PROTOCOL_VERSION))
		ret = EPROTO;
	munmap(map, BMAP_SIZE);
	close(fd);
	return ret;
}

/* Wait for the outcome of a call sent: BR_REPLY (freed) or the failure. */
static uint32_t call_result(struct brd *r)
{
	struct binder_transaction_data reply;
	uint32_t br;
	int ret;

	for (;;) {
		ret = br_wait(r, &br, &reply, sizeof(reply), NULL);
		if (ret)
			return -ret;
		if (br != BR_TRANSACTION_COMPLETE)
			break;
	}
	if (br != BR_REPLY)
		return br;
	ret = txn_free(r->fd, &reply);
	return ret ? -ret : 0;
}

/* A call carrying a BINDER and an FD object, with the send under test. */
static uint32_t op_objects(struct actor *a, int failfd, int n, bool *reached)
{
	struct binder_version v;
	struct bdev b;
	struct brd r;
	struct txn t;
	uint32_t ret;
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return errno;
	if (write(p[1], "fault", 6) != 6) {
		ret = errno;
		goto out_pipe;
	}
	ret = -bdev_open(&b, "/dev/binder", 0, BMAP_SIZE);
	if (ret)
		goto out_pipe;
	if (ioctl(b.fd, BINDER_VERSION, &v)) {
		ret = errno;
		goto out_dev;
	}
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_binder(&t, 0x7000, 0x7001, 0);
	txn_fd(&t, p[0], 0xfdc);
	if (n)
		fail_nth_set(failfd, n);
	ret = -txn_send(b.fd, 0, CODE_FDOBJ, 0, &t);
	*reached = n && fail_nth_done(failfd);
	if (!ret)
		ret = call_result(&r);
out_dev:
	bdev_close(&b);
out_pipe:
	close(p[0]);
	close(p[1]);
	return ret;
}

/* A call whose reply (with a BINDER object) is made under test. */
static uint32_t op_reply(struct actor *a, int failfd, int n, bool *reached)
{
	struct bdev b;
	struct brd r;
	struct txn t;
	uint32_t ret, br;
	uint32_t un = n;

	ret = -bdev_open(&b, "/dev/binder", 0, BMAP_SIZE);
	if (ret)
		return ret;
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_put(&t, &un, sizeof(un));
	ret = -txn_send(b.fd, 0, CODE_FREPLY, 0, &t);
	if (!ret)
		ret = call_result(&r);
	/* The manager has recorded whether it failed once it answers this. */
	if (ping(&r, 0, &br) && !ret)
		ret = EIO;
	*reached = n && a->sh->val[V_REACHED];
	bdev_close(&b);
	return ret;
}

/*
 * BINDER_FREEZE of the manager and a freeze notification on it, with the
 * allocations of both under test; thawed and cleared afterwards.
 */
static uint32_t op_freeze(struct actor *a, int failfd, int n, bool *reached)
{
	struct binder_freeze_info fi = { .pid = a->sh->val[V_PID], .enable = 1 };
	struct binder_frozen_state_info info;
	struct binder_ptr_cookie pc;
	struct bcbuf c;
	struct bdev b;
	struct brd r;
	uint32_t ret = 0, br;

	ret = -bdev_open(&b, "/dev/binder", 0, BMAP_SIZE);
	if (ret)
		return ret;
	brd_init(&r, b.fd);
	bc_init(&c);
	bc_add(&c, BC_ENTER_LOOPER, NULL, 0);
	bc_add_u32(&c, BC_INCREFS, 0);
	ret = -bc_flush(b.fd, &c);
	if (ret)
		goto out;
	if (n)
		fail_nth_set(failfd, n);
	if (ioctl(b.fd, BINDER_FREEZE, &fi))
		ret = errno;
	if (!ret) {
		bc_add_handle_cookie(&c, BC_REQUEST_FREEZE_NOTIFICATION, 0, 0xf1);
		ret = -bc_flush(b.fd, &c);
	}
	*reached = n && fail_nth_done(failfd);
	if (ret)
		goto thaw;
	if (br_wait(&r, &br, &info, sizeof(info), NULL) || br != BR_FROZEN_BINDER ||
	    info.cookie != 0xf1 || info.is_frozen != 1) {
		ret = EPROTO;
		goto thaw;
	}
	bc_add_ptr(&c, BC_FREEZE_NOTIFICATION_DONE, 0xf1);
	bc_add_handle_cookie(&c, BC_CLEAR_FREEZE_NOTIFICATION, 0, 0xf1);
	if (bc_flush(b.fd, &c) || br_wait(&r, &br, &pc, sizeof(pc), NULL) ||
	    br != BR_CLEAR_FREEZE_NOTIFICATION_DONE || pc.ptr != 0xf1)
		ret = EPROTO;
thaw:
	fi.enable = 0;
	if (ioctl(b.fd, BINDER_FREEZE, &fi) && !ret)
		ret = EIO;
out:
	bdev_close(&b);
	return ret;
}

/*
 * In the cell: @op for n = 1, 2, ... until its n-th allocation is not
 * reached. val[10]: attempts, val[11]: attempts that failed.
 */
static int fault_loop(struct actor *a, fault_op op)
{
	struct bchild *s = a->sh;
	bool reached = false;
	uint32_t ret;
	int fd, n;

	fd = fail_nth_fd();
	CHILD_CHECK(s, fd >= 0, "fail-nth: %s", strerror(errno));
	for (n = 1; n <= MAX_NTH; n++) {
		reached = false;
		ret = op(a, fd, n, &reached);
		if (!reached) {
			CHILD_CHECK(s, !ret, "fail-nth %d not reached, but %#x", n, ret);
			break;
		}
		s->val[10]++;
		if (!ret)
			continue;
		s->val[11]++;
		CHILD_CHECK(s, ret == ENOMEM || ret == BR_FAILED_REPLY || ret == BR_DEAD_REPLY,
			    "fail-nth %d: %#x (%s)", n, ret,
			    ret < 4096 ? strerror(ret) : br_name(ret));
		/* Nothing broken: the same without a failure works. */
		ret = op(a, fd, 0, &reached);
		CHILD_CHECK(s, !ret, "fail-nth %d: no recovery: %#x", n, ret);
	}
	CHILD_CHECK(s, n <= MAX_NTH, "more than %d allocations", MAX_NTH);
	close(fd);
	return 0;
}

struct fault_case {
	struct actor *a;
	fault_op op;
};

static int fault_case_main(void *arg)
{
	struct fault_case *fc = arg;

	return fault_loop(fc->a, fc->op);
}

FIXTURE(bfault) {
	struct bcell f;
	struct actor *mgr, *cli;
	pid_t mgr_pid;
};

FIXTURE_SETUP(bfault)
{
	if (binder_fault_missing())
		SKIP(return, "%s", binder_fault_missing());
	ASSERT_EQ(0, fault_setup());
	ASSERT_EQ(0, cell_make(&self->f, CELL_F, false));
	self->mgr = actor_new("/dev/binder");
	self->cli = actor_new("/dev/binder");
	ASSERT_NE(NULL, self->mgr);
	ASSERT_NE(NULL, self->cli);
	/* The client's fail-nth outcome of CODE_FREPLY is read here. */
	self->cli->sh = self->mgr->sh;
	self->mgr->mgr_flags = FLAT_BINDER_FLAG_ACCEPTS_FDS;
	self->mgr_pid = start_mgr(&self->f, self->mgr);
	ASSERT_LT(0, self->mgr_pid) TH_LOG("%s", self->mgr->sh->err);
}

FIXTURE_TEARDOWN(bfault)
{
	if (self->mgr_pid > 0) {
		kill(self->mgr_pid, SIGKILL);
		child_status(self->mgr_pid);
	}
	cell_end(&self->f);
}

static void run_fault(struct __test_metadata *_metadata, struct _test_data_bfault *self,
		      fault_op op, const char *what)
{
	struct fault_case fc = { .a = self->cli, .op = op };
	struct bchild *s = self->cli->sh;
	int st;

	s->val[10] = 0;
	s->val[11] = 0;
	st = cell_call(&self->f, fault_case_main, &fc);
	EXPECT_EQ(0, st) TH_LOG("%s: %s", what, s->err);
	EXPECT_LT(0, s->val[11]) TH_LOG("%s: no attempt failed", what);
	TH_LOG("%s: %llu of %llu attempts failed cleanly", what,
	       (unsigned long long)s->val[11], (unsigned long long)s->val[10]);
	/* A normal ping works afterwards. */
	self->cli->arg = 0;
	EXPECT_EQ(0, cell_call(&self->f, client_ping, self->cli)) TH_LOG("%s", s->err);
}

static void end_fault(struct __test_metadata *_metadata, struct _test_data_bfault *self)
{
	self->cli->arg = 1;
	EXPECT_EQ(0, cell_call(&self->f, client_ping, self->cli)) TH_LOG("%s", self->cli->sh->err);
	EXPECT_ACTOR_OK(self->mgr, self->mgr_pid);
	self->mgr_pid = 0;
	/* Everything closed: nothing left but the totals. */
	EXPECT_COUNTERS(CELL_F, 0, 0, 0, 0, 0, -1, -1, 0);
}

TEST_F_TIMEOUT(bfault, open_mmap_ioctl, 600)
{
	run_fault(_metadata, self, op_open, "open");
	run_fault(_metadata, self, op_mmap, "mmap");
	run_fault(_metadata, self, op_first_ioctl, "first ioctl");
	end_fault(_metadata, self);
}

TEST_F_TIMEOUT(bfault, transaction_with_objects, 600)
{
	run_fault(_metadata, self, op_objects, "BINDER+FD call");
	EXPECT_LT(0, self->mgr->sh->val[V_FDOK]);
	end_fault(_metadata, self);
}

TEST_F_TIMEOUT(bfault, reply, 600)
{
	run_fault(_metadata, self, op_reply, "reply");
	end_fault(_metadata, self);
}

TEST_F_TIMEOUT(bfault, freeze, 600)
{
	run_fault(_metadata, self, op_freeze, "freeze and its notification");
	end_fault(_metadata, self);
}

TEST_HARNESS_MAIN
