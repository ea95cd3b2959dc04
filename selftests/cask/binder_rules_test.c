// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder's own rules, where it differs from the kernel's binder on
 * purpose (Documentation/binder.rst), and its debugfs files:
 *
 * - /sys/kernel/debug/cask/binder/ID/{state,stats}: the host's root reads
 *   a cell's binder world in the kernel binder's format, without kernel
 *   addresses; nobody in a container can open them; they go with the cell,
 *   and a new cell of the same name has its own;
 * - a binder file cannot travel through binder (two processes sending each
 *   other their own would pin each other, their cell and the module);
 * - nor can a cycle through a unix socket outlive the cell: when the cell
 *   ends, what was queued to its files is dropped, and the module is free;
 * - a copy of the receive area made by fork() after MADV_DOFORK is not the
 *   area: the child's exit leaves the parent's working;
 * - a receive area's pages are paid for by the receiver's memory cgroup,
 *   whoever sends (the kernel's binder charges nobody);
 * - the module cannot go while a binder file is open, and goes as soon as
 *   the last one is released, whatever the files had pending;
 * - a transaction that fails translation leaves nothing of its data in the
 *   receiver's area (the kernel's binder leaves it there);
 * - no untranslated object is ever visible in the receiver's area, not even
 *   while the transaction is being copied (as the kernel's binder since
 *   "binder: avoid potential data leakage when copying txn").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/android/binder.h>

#include "../kselftest_harness.h"
#include "cask_util.h"
#include "cask_binder.h"

#define DBG "/sys/kernel/debug/cask/binder"

static int read_all(const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return n < 0 ? -errno : 0;
}

/* A cell's debugfs directory: DBG/<its id>. */
static int dbg_dir(const char *cell, char *path, size_t len)
{
	char id[32];
	int ret = cell_value(cell, "id", id, sizeof(id));

	if (ret)
		return ret;
	snprintf(path, len, DBG "/%s", id);
	return 0;
}

/* Directories go at the cell's release, from a workqueue: wait up to 10 s. */
static bool path_gone(const char *path)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (access(path, F_OK))
			return true;
		usleep(50000);
	}
	return false;
}

/*
 * A context manager in a new IPC namespace (so a cell of its own) that
 * entered its looper, then waits for @stop to close.
 */
static pid_t start_manager(int *stop_wr)
{
	int ready[2], stop[2];
	struct bdev b;
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(stop))
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[0]);
		close(stop[1]);
		if (unshare(CLONE_NEWIPC) ||
		    bdev_open(&b, "/dev/binder", 0, 128 * 1024) ||
		    ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0) ||
		    bc_plain(b.fd, BC_ENTER_LOOPER))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		/* Until the test closes its end. */
		if (read(stop[0], &c, 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(ready[1]);
	close(stop[0]);
	if (pid < 0 || read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		close(stop[1]);
		return -1;
	}
	close(ready[0]);
	*stop_wr = stop[1];
	return pid;
}

static int try_open_state(void *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

TEST(state_and_stats)
{
	char cell[64], dir[128], path[256], want[128], *buf;
	int stop, status;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	buf = malloc(65536);
	ASSERT_NE(NULL, buf);
	pid = start_manager(&stop);
	ASSERT_LT(0, pid);
	snprintf(cell, sizeof(cell), "ipc-%lu", ns_inode(pid, "ipc"));
	ASSERT_EQ(0, dbg_dir(cell, dir, sizeof(dir)));

	snprintf(path, sizeof(path), "%s/state", dir);
	ASSERT_EQ(0, read_all(path, buf, 65536)) TH_LOG("%s", path);
	EXPECT_EQ(0, strncmp(buf, "binder state:\n", 14)) TH_LOG("%s", buf);
	snprintf(want, sizeof(want), "proc %d\ncontext %s\n", pid, cell);
	EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("%s", buf);
	/* The manager's node, its ptr and cookie 0, held by user space. */
	EXPECT_NE(NULL, strstr(buf, "u0000000000000000 c0000000000000000"))
		TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "hs 1 hw 1")) TH_LOG("%s", buf);
	/* Looper entered (0x02). */
	snprintf(want, sizeof(want), "thread %d: l 02", pid);
	EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("%s", buf);
	/* No kernel address: x86-64 kernel pointers start with ffff. */
	EXPECT_EQ(NULL, strstr(buf, "ffff")) TH_LOG("%s", buf);

	snprintf(path, sizeof(path), "%s/stats", dir);
	ASSERT_EQ(0, read_all(path, buf, 65536));
	EXPECT_NE(NULL, strstr(buf, "BC_ENTER_LOOPER: 1\n")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "proc: active 1\n")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "node: active 1\n")) TH_LOG("%s", buf);

	/*
	 * Another container's root may not open them: without a user
	 * namespace it passes the file's mode and is refused by the driver;
	 * with one, the mode already stops it.
	 */
	snprintf(path, sizeof(path), "%s/state", dir);
	{
		struct container other;

		ASSERT_EQ(0, container_start(&other, "", CONTAINER_NO_USERNS));
		EXPECT_EQ(EPERM, container_run(&other, try_open_state, path));
		container_stop(&other);
		ASSERT_EQ(0, container_start(&other, "", 200000));
		EXPECT_EQ(EACCES, container_run(&other, try_open_state, path));
		container_stop(&other);
	}

	close(stop);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	/* The directory goes with the cell. */
	EXPECT_TRUE(cell_gone(cell));
	EXPECT_TRUE(path_gone(dir));
	free(buf);
}

/* The cells' directories sit under one root that lists them. */
TEST(host_directory)
{
	char dir[128], path[256];

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	EXPECT_EQ(0, access(DBG, F_OK));
	ASSERT_EQ(0, dbg_dir("host", dir, sizeof(dir)));
	snprintf(path, sizeof(path), "%s/stats", dir);
	EXPECT_EQ(0, access(path, R_OK));
}

/* start_ipc_task(), returning once the task is in its namespace. */
static pid_t start_own_ipc_task(int *go)
{
	unsigned long mine = ns_inode(getpid(), "ipc");
	pid_t pid = start_ipc_task(go);
	int i;

	for (i = 0; pid > 0 && i < 500 && ns_inode(pid, "ipc") == mine; i++)
		usleep(10000);
	return pid;
}

/*
 * A task that opens binder in the IPC namespace of @nspid and keeps the
 * file until *@stop is closed; its pid, or -1.
 */
static pid_t start_holder(pid_t nspid, int *stop)
{
	int p[2], q[2];
	pid_t pid;
	char c;

	if (pipe(p) || pipe(q))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct bdev b;
		char path[64];
		int ns;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[1]);
		snprintf(path, sizeof(path), "/proc/%d/ns/ipc", nspid);
		ns = open(path, O_RDONLY | O_CLOEXEC);
		if (ns < 0 || setns(ns, CLONE_NEWIPC) ||
		    bdev_open(&b, "/dev/binder", 0, 0) ||
		    write(q[1], "r", 1) != 1 || read(p[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[0]);
	close(q[1]);
	if (pid < 0 || read(q[0], &c, 1) != 1) {
		close(p[1]);
		close(q[0]);
		return -1;
	}
	close(q[0]);
	*stop = p[1];
	return pid;
}

/*
 * A cell unregistered while a file still holds it keeps its directory,
 * and a new cell of the same name gets one of its own: by name, the new
 * cell would have none and the old one's state would show in its place.
 */
TEST(debugfs_name_reused)
{
	char old_dir[128], new_dir[128], path[256], want[64], *buf;
	int go1, go2, stop1, stop2;
	pid_t t1, t2, h1, h2;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	buf = malloc(65536);
	ASSERT_NE(NULL, buf);
	cask_unregister("brt-dbg");
	t1 = start_own_ipc_task(&go1);
	ASSERT_LT(0, t1);
	ASSERT_EQ(0, cask_register("brt-dbg", t1));
	ASSERT_EQ(0, dbg_dir("brt-dbg", old_dir, sizeof(old_dir)));
	h1 = start_holder(t1, &stop1);
	ASSERT_LT(0, h1);
	ASSERT_EQ(0, cask_unregister("brt-dbg"));
	ASSERT_TRUE(cell_gone("brt-dbg"));

	t2 = start_own_ipc_task(&go2);
	ASSERT_LT(0, t2);
	ASSERT_EQ(0, cask_register("brt-dbg", t2));
	ASSERT_EQ(0, dbg_dir("brt-dbg", new_dir, sizeof(new_dir)));
	EXPECT_STRNE(old_dir, new_dir);
	h2 = start_holder(t2, &stop2);
	ASSERT_LT(0, h2);

	snprintf(path, sizeof(path), "%s/state", new_dir);
	ASSERT_EQ(0, read_all(path, buf, 65536)) TH_LOG("%s", path);
	snprintf(want, sizeof(want), "proc %d\n", h2);
	EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("%s", buf);
	snprintf(want, sizeof(want), "proc %d\n", h1);
	EXPECT_EQ(NULL, strstr(buf, want)) TH_LOG("%s", buf);
	/* The old cell's state is still there, under its own id. */
	snprintf(path, sizeof(path), "%s/state", old_dir);
	ASSERT_EQ(0, read_all(path, buf, 65536)) TH_LOG("%s", path);
	EXPECT_NE(NULL, strstr(buf, want)) TH_LOG("%s", buf);

	/* All at once: each child holds the pipes made before it. */
	close(stop1);
	close(stop2);
	close(go1);
	close(go2);
	EXPECT_EQ(0, child_status(h1));
	EXPECT_EQ(0, child_status(h2));
	waitpid(t1, NULL, 0);
	waitpid(t2, NULL, 0);
	cask_unregister("brt-dbg");
	EXPECT_TRUE(path_gone(old_dir));
	EXPECT_TRUE(path_gone(new_dir));
	free(buf);
}

/* A manager in a fresh cell: the fd, its mapping, its reader. */
struct mgr {
	struct bdev b;
	struct brd r;
};

static int mgr_open(struct mgr *m)
{
	struct flat_binder_object fbo = {
		.hdr.type = BINDER_TYPE_BINDER,
		.flags = FLAT_BINDER_FLAG_ACCEPTS_FDS,
	};
	int ret;

	if (unshare(CLONE_NEWIPC))
		return -errno;
	ret = bdev_open(&m->b, "/dev/binder", 0, 128 * 1024);
	if (ret)
		return ret;
	if (ioctl(m->b.fd, BINDER_SET_CONTEXT_MGR_EXT, &fbo) ||
	    bc_plain(m->b.fd, BC_ENTER_LOOPER))
		return -errno;
	brd_init(&m->r, m->b.fd);
	return 0;
}

/*
 * A client process of the cell: one call to handle 0, carrying the file
 * @path as an FD object if @path is set; exits with the BR_ code's number
 * (BR_TRANSACTION_COMPLETE or BR_FAILED_REPLY), 1 on a setup failure.
 */
static pid_t client_call(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct binder_transaction_data tr;
		struct txn t;
		struct bdev b;
		struct brd r;
		uint32_t br;
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(20);
		if (bdev_open(&b, "/dev/binder", 0, 128 * 1024))
			_exit(1);
		brd_init(&r, b.fd);
		txn_init(&t);
		if (path) {
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				_exit(1);
			txn_fd(&t, fd, 0);
		}
		if (txn_send(b.fd, 0, 1, TF_ONE_WAY, &t) ||
		    br_wait(&r, &br, &tr, sizeof(tr), NULL))
			_exit(1);
		_exit(_IOC_NR(br));
	}
	return pid;
}

static int exit_code(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(no_binder_file_through_binder)
{
	struct binder_transaction_data tr;
	struct mgr m;
	uint32_t br;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	ASSERT_EQ(0, mgr_open(&m));
	/* Any other file goes to a manager that accepts fds... */
	pid = client_call("/dev/null");
	ASSERT_LT(0, pid);
	EXPECT_EQ(_IOC_NR(BR_TRANSACTION_COMPLETE), exit_code(pid));
	ASSERT_EQ(0, br_wait(&m.r, &br, &tr, sizeof(tr), NULL));
	ASSERT_EQ(BR_TRANSACTION, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, txn_free(m.b.fd, &tr));
	/* ...a binder file does not. */
	pid = client_call("/dev/binder");
	ASSERT_LT(0, pid);
	EXPECT_EQ(_IOC_NR(BR_FAILED_REPLY), exit_code(pid));
	bdev_close(&m.b);
}

static long module_refs(void)
{
	char buf[32];

	if (read_file("/sys/module/cask_binder/refcnt", buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

/* Wait up to 10 s for the module's count to come down to @want. */
static long module_refs_back(long want)
{
	long n = -1;
	int i;

	for (i = 0; i < 200; i++) {
		n = module_refs();
		if (n <= want)
			break;
		usleep(50000);
	}
	return n;
}

/*
 * In the caller's cell: a manager that accepts fds puts its own binder
 * file in flight on a socketpair (with @cycle) and a client sends it the
 * other end in a one-way call that nobody reads. Then everybody exits:
 * the manager's file is kept by the socket, the socket by the
 * transaction queued to the manager's file. 0, or where it failed.
 */
static int make_cycle(bool cycle)
{
	struct mgr m;
	int sv[2];
	pid_t pid;

	if (bdev_open(&m.b, "/dev/binder", 0, 128 * 1024))
		return 10;
	{
		struct flat_binder_object fbo = {
			.hdr.type = BINDER_TYPE_BINDER,
			.flags = FLAT_BINDER_FLAG_ACCEPTS_FDS,
		};

		if (ioctl(m.b.fd, BINDER_SET_CONTEXT_MGR_EXT, &fbo))
			return 11;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 12;
	if (cycle && send_fd(sv[0], m.b.fd))
		return 13;
	pid = fork();
	if (pid == 0) {
		struct bdev b;
		struct brd r;
		struct txn t;
		uint32_t br;

		if (bdev_open(&b, "/dev/binder", 0, 128 * 1024))
			_exit(20);
		brd_init(&r, b.fd);
		txn_init(&t);
		txn_fd(&t, sv[1], 0);
		if (txn_send(b.fd, 0, 1, TF_ONE_WAY, &t) ||
		    br_wait(&r, &br, NULL, 0, NULL))
			_exit(21);
		_exit(br == BR_TRANSACTION_COMPLETE ? 0 : 22);
	}
	if (pid < 0)
		return 14;
	return child_status(pid);
}

FIXTURE(fd_cycle) {
	long refs0;
};

FIXTURE_VARIANT(fd_cycle) {
	bool cycle;
};

/* The same without the binder file in flight: nothing to break. */
FIXTURE_VARIANT_ADD(fd_cycle, control) {
	.cycle = false,
};

FIXTURE_VARIANT_ADD(fd_cycle, through_unix_socket) {
	.cycle = true,
};

FIXTURE_SETUP(fd_cycle)
{
	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	self->refs0 = module_refs();
	ASSERT_LE(0, self->refs0);
}

FIXTURE_TEARDOWN(fd_cycle)
{
}

/* The container ends: its IPC namespace (or its only process) goes. */
TEST_F(fd_cycle, container_exits)
{
	char cell[64], dir[128];
	int res[2], go[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(res));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	if (pid == 0) {
		int ret;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(res[0]);
		close(go[1]);
		if (unshare(CLONE_NEWIPC))
			_exit(1);
		ret = make_cycle(variant->cycle);
		snprintf(cell, sizeof(cell), "ipc-%lu", ns_inode(getpid(), "ipc"));
		if (write(res[1], cell, sizeof(cell)) != sizeof(cell) ||
		    read(go[0], &c, 1) < 0)
			_exit(2);
		_exit(ret);
	}
	ASSERT_LT(0, pid);
	close(res[1]);
	close(go[0]);
	ASSERT_EQ(sizeof(cell), read(res[0], cell, sizeof(cell)));
	ASSERT_EQ(0, dbg_dir(cell, dir, sizeof(dir))) TH_LOG("%s", cell);
	close(go[1]);
	ASSERT_EQ(0, child_status(pid));
	EXPECT_TRUE(cell_gone(cell));
	EXPECT_EQ(self->refs0, module_refs_back(self->refs0))
		TH_LOG("a binder file of the ended cell is still open");
	/* Released: its last process went. */
	EXPECT_TRUE(path_gone(dir));
}

/* In the cell of task @nspid: make_cycle(). */
static int cycle_in(pid_t nspid, bool cycle)
{
	char path[64];
	int ns;

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", nspid);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns < 0 || setns(ns, CLONE_NEWIPC))
		return 1;
	return make_cycle(cycle);
}

/*
 * A registered cell whose container lives on: the cycle stays until the
 * cell is unregistered (as it stays with the kernel's binder for good).
 */
TEST_F(fd_cycle, cell_unregistered)
{
	char dir[128];
	pid_t task, pid;
	long refs;
	int go;

	cask_unregister("brt-cycle");
	task = start_own_ipc_task(&go);
	ASSERT_LT(0, task);
	ASSERT_EQ(0, cask_register("brt-cycle", task));
	ASSERT_EQ(0, dbg_dir("brt-cycle", dir, sizeof(dir)));
	pid = fork();
	if (pid == 0)
		_exit(cycle_in(task, variant->cycle));
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, child_status(pid));
	/* The manager's file, in flight, stays open while the cell lives. */
	refs = variant->cycle ? module_refs() : module_refs_back(self->refs0);
	EXPECT_EQ(variant->cycle, refs > self->refs0) TH_LOG("%ld, was %ld", refs, self->refs0);
	EXPECT_EQ(0, cask_unregister("brt-cycle"));
	EXPECT_EQ(self->refs0, module_refs_back(self->refs0))
		TH_LOG("a binder file of the unregistered cell is still open");
	EXPECT_TRUE(path_gone(dir));
	close(go);
	waitpid(task, NULL, 0);
}

TEST(fork_copy_of_the_area)
{
	struct binder_transaction_data tr;
	struct mgr m;
	uint32_t br;
	int status;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	ASSERT_EQ(0, mgr_open(&m));
	ASSERT_EQ(0, madvise(m.b.map, 128 * 1024, MADV_DOFORK));
	pid = fork();
	if (pid == 0)
		_exit(0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* The child's copy is gone; the manager still receives calls. */
	pid = client_call(NULL);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, br_wait(&m.r, &br, &tr, sizeof(tr), NULL));
	ASSERT_EQ(BR_TRANSACTION, br) TH_LOG("got %s", br_name(br));
	EXPECT_EQ(0, txn_free(m.b.fd, &tr));
	EXPECT_EQ(_IOC_NR(BR_TRANSACTION_COMPLETE), exit_code(pid));
	bdev_close(&m.b);
}

/*
 * 48 one-way calls of 8 KiB to a manager that never reads them: their
 * buffers (and pages) sit in the manager's area. The manager's cgroup
 * pays for them; the sender's pays only for its own small bookkeeping.
 */
TEST(receiver_pays)
{
	const char *rcv = "cask-binder-rcv", *snd = "cask-binder-snd";
	long rcv0, snd0, rcv1, snd1, sent, slack;
	static char data[8192];
	int ready[2], done[2];
	struct mgr m;
	pid_t pid;
	char c;
	int i;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	ASSERT_EQ(0, unshare(CLONE_NEWIPC));
	mkdir(CGROOT "/cask-binder-rcv", 0755);
	mkdir(CGROOT "/cask-binder-snd", 0755);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	if (pid == 0) {
		struct flat_binder_object fbo = { .hdr.type = BINDER_TYPE_BINDER };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (join_cgroup(rcv) ||
		    bdev_open(&m.b, "/dev/binder", 0, 4 * 1024 * 1024) ||
		    ioctl(m.b.fd, BINDER_SET_CONTEXT_MGR_EXT, &fbo))
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(done[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, join_cgroup(snd));
	ASSERT_EQ(0, bdev_open(&m.b, "/dev/binder", 0, 128 * 1024));
	brd_init(&m.r, m.b.fd);
	memset(data, 0x5a, sizeof(data));
	rcv0 = memory_current(rcv);
	snd0 = memory_current(snd);
	ASSERT_LE(0, rcv0);
	ASSERT_LE(0, snd0);
	/*
	 * memory.current counts each CPU's charge stock (up to 64 pages per
	 * CPU, MEMCG_CHARGE_BATCH) as used: a stock made before the first
	 * reading and used or drained after it hides that much.  Send far
	 * more than that noise, 1.25 MiB into a 2 MiB one-way space, and
	 * allow it on both sides.
	 */
	slack = 64L * 4096 * sysconf(_SC_NPROCESSORS_ONLN);
	sent = 160L * sizeof(data);
	if (2 * slack >= sent)
		SKIP(goto out, "%ld CPUs of charge stock hide the signal",
		     slack / (64L * 4096));
	for (i = 0; i < 160; i++) {
		/* 8 KiB of data: two pages per call in the manager's area. */
		struct binder_transaction_data d = {
			.target.handle = 0,
			.flags = TF_ONE_WAY,
			.data_size = sizeof(data),
			.data.ptr.buffer = (uintptr_t)data,
		};
		struct binder_transaction_data tr;
		struct bcbuf cb = { 0 };
		uint32_t br;

		bc_add(&cb, BC_TRANSACTION, &d, sizeof(d));
		ASSERT_EQ(0, bc_flush(m.b.fd, &cb));
		ASSERT_EQ(0, br_wait(&m.r, &br, &tr, sizeof(tr), NULL));
		ASSERT_EQ(BR_TRANSACTION_COMPLETE, br) TH_LOG("call %d: %s", i, br_name(br));
	}
	rcv1 = memory_current(rcv);
	snd1 = memory_current(snd);
	TH_LOG("receiver +%ld bytes, sender +%ld bytes", rcv1 - rcv0, snd1 - snd0);
	/* Charged to the sender, these checks fail both. */
	EXPECT_LE(sent - slack, rcv1 - rcv0);
	EXPECT_GT(sent / 2, snd1 - snd0);
out:
	ASSERT_EQ(1, write(done[1], "d", 1));
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	bdev_close(&m.b);
	ASSERT_EQ(0, join_cgroup(""));
	rmdir(CGROOT "/cask-binder-rcv");
	rmdir(CGROOT "/cask-binder-snd");
}

TEST(failed_translation_leaves_nothing)
{
	static const char secret[32] = "SECRET-of-the-sender-0123456789";
	static const char zero[32];
	struct mgr m;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	ASSERT_EQ(0, mgr_open(&m));
	pid = fork();
	if (pid == 0) {
		struct binder_transaction_data tr;
		struct txn t;
		struct bdev b;
		struct brd r;
		uint32_t br;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(20);
		if (bdev_open(&b, "/dev/binder", 0, 128 * 1024))
			_exit(1);
		brd_init(&r, b.fd);
		/* The data, then an object offset past it: translation fails. */
		txn_init(&t);
		txn_put(&t, secret, sizeof(secret));
		t.offs[t.nobjs++] = 4096;
		if (txn_send(b.fd, 0, 1, TF_ONE_WAY, &t) ||
		    br_wait(&r, &br, &tr, sizeof(tr), NULL))
			_exit(1);
		_exit(_IOC_NR(br));
	}
	ASSERT_LT(0, pid);
	ASSERT_EQ(_IOC_NR(BR_FAILED_REPLY), exit_code(pid));
	/* The first buffer of a fresh area starts at its first byte. */
	EXPECT_EQ(0, memcmp(m.b.map, zero, sizeof(zero)))
		TH_LOG("left: '%.31s'", (const char *)m.b.map);
	bdev_close(&m.b);
}

/*
 * What the sender puts where translation must replace it: its binder
 * pointers and cookies, its pointer to a child buffer inside the parent
 * buffer, its own buffers' addresses, and its fd number (an odd one, so
 * that no 8-aligned offset or length of ours equals it).
 */
#define LEAK_PTR	0x5ca1ab1e00000000ULL
#define LEAK_COOKIE	0xc0ffee0000000000ULL
#define LEAK_FIXUP	0xf1c5f1c5f1c5f1c5ULL
#define LEAK_FD		777
#define LEAK_BINDERS	12
#define LEAK_CALLS	3000
#define LEAK_SECONDS	8
#define LEAK_SCAN	1024

struct leak_bufs {
	uint64_t child_ptr;	/* fixed up to the child's address */
	uint32_t fds[2];	/* an FD array of two */
};

static struct leak_bufs leak_parent;
static uint8_t leak_child[16];

enum { LEAK_BINDER, LEAK_PARENT, LEAK_ADDR, LEAK_FDNUM, LEAK_KINDS };

static const char *const leak_kinds[] = {
	"binder ptr/cookie", "parent's child pointer", "sender buffer address",
	"fd number",
};

struct leak_scan {
	const uint64_t *area;
	atomic_int stop;
	long passes, hits[LEAK_KINDS];
	size_t first_off;
	uint64_t first_val;
};

static int leak_kind(uint64_t w)
{
	uint32_t hi = w >> 32;

	if (hi == LEAK_PTR >> 32 || hi == LEAK_COOKIE >> 32)
		return LEAK_BINDER;
	if (w == LEAK_FIXUP)
		return LEAK_PARENT;
	if (w == (uintptr_t)&leak_parent || w == (uintptr_t)leak_child)
		return LEAK_ADDR;
	if (hi == LEAK_FD || (uint32_t)w == LEAK_FD)
		return LEAK_FDNUM;
	return -1;
}

/* The receiver's other thread: reads its area as fast as it can. */
static void *leak_scanner(void *arg)
{
	struct leak_scan *s = arg;
	long total = 0;
	size_t i;
	int kind;

	while (!atomic_load(&s->stop)) {
		for (i = 0; i < LEAK_SCAN / 8; i++) {
			/* Relaxed atomics: a real load every pass. */
			uint64_t w = __atomic_load_n(&s->area[i], __ATOMIC_RELAXED);

			kind = leak_kind(w);
			if (kind < 0)
				continue;
			s->hits[kind]++;
			if (!total++) {
				s->first_off = i * 8;
				s->first_val = w;
			}
		}
		s->passes++;
	}
	return NULL;
}

/* The sender: LEAK_CALLS calls (or LEAK_SECONDS), then code 2 to stop. */
static void leak_sender(struct bchild *sh)
{
	struct binder_transaction_data rep;
	time_t end = time(NULL) + LEAK_SECONDS;
	size_t parent, i;
	struct txn t;
	struct bdev b;
	struct brd r;
	uint32_t br;
	int n, fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(60);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHILD_CHECK(sh, fd >= 0 && dup2(fd, LEAK_FD) == LEAK_FD, "%m");
	CHILD_CHECK(sh, !bdev_open(&b, "/dev/binder", 0, 128 * 1024), "%m");
	brd_init(&r, b.fd);
	txn_init(&t);
	for (i = 0; i < LEAK_BINDERS; i++)
		txn_binder(&t, LEAK_PTR + i * 16, LEAK_COOKIE + i * 16, 0);
	leak_parent.child_ptr = LEAK_FIXUP;
	leak_parent.fds[0] = LEAK_FD;
	leak_parent.fds[1] = LEAK_FD;
	memset(leak_child, 0x11, sizeof(leak_child));
	parent = txn_ptr(&t, &leak_parent, sizeof(leak_parent), 0, 0, 0);
	txn_ptr(&t, leak_child, sizeof(leak_child), BINDER_BUFFER_FLAG_HAS_PARENT,
		parent, offsetof(struct leak_bufs, child_ptr));
	txn_fda(&t, 2, parent, offsetof(struct leak_bufs, fds));
	txn_fd(&t, LEAK_FD, 0);
	for (n = 0; n < LEAK_CALLS && time(NULL) < end; n++) {
		CHILD_CHECK(sh, !txn_call(&r, 0, 1, &t, &br, &rep), "call %d", n);
		CHILD_CHECK(sh, br == BR_REPLY, "call %d: %s", n, br_name(br));
		CHILD_CHECK(sh, !txn_free(b.fd, &rep), "call %d", n);
	}
	sh->val[0] = n;
	CHILD_CHECK(sh, !txn_send(b.fd, 0, 2, TF_ONE_WAY, NULL), "stop");
	_exit(0);
}

/*
 * A sender sends calls full of objects while the receiver reads its area
 * all the time: not one word of what the sender wrote in an object may
 * ever be there. Copying the data first and translating in place (what
 * cask did, and the kernel's binder before 5.19) shows the raw objects
 * for as long as translation takes, and FD numbers until the receiver
 * reads the call.
 */
TEST(no_untranslated_object_visible)
{
	struct binder_transaction_data tr;
	struct leak_scan scan = { 0 };
	struct bchild *sh = bchild_alloc();
	bool scanning = false;
	pthread_t th;
	int calls = 0, i;
	long seen = 0;
	struct mgr m;
	uint32_t br;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	ASSERT_NE(NULL, sh);
	ASSERT_EQ(0, mgr_open(&m));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		leak_sender(sh);
	scan.area = m.b.map;
	for (;;) {
		struct binder_fd_object *fdo;

		ASSERT_EQ(0, br_wait(&m.r, &br, &tr, sizeof(tr), NULL));
		if (br == BR_TRANSACTION_COMPLETE)
			continue;
		ASSERT_EQ(BR_TRANSACTION, br) TH_LOG("got %s", br_name(br));
		if (tr.code == 2) {
			EXPECT_EQ(0, txn_free(m.b.fd, &tr));
			break;
		}
		calls++;
		/* The buffer's page exists now: the scan may start. */
		if (!scanning) {
			ASSERT_EQ((uintptr_t)m.b.map, tr.data.ptr.buffer);
			ASSERT_EQ(0, pthread_create(&th, NULL, leak_scanner, &scan));
			scanning = true;
		}
		fdo = txn_rx_obj(&tr, LEAK_BINDERS + 3);
		ASSERT_NE(NULL, fdo);
		ASSERT_EQ(BINDER_TYPE_FD, fdo->hdr.type);
		close(fdo->fd);
		/* Freeing the buffer closes the FD array's two. */
		ASSERT_EQ(0, txn_free(m.b.fd, &tr));
		ASSERT_EQ(0, txn_reply(m.b.fd, 0, NULL));
	}
	if (scanning) {
		atomic_store(&scan.stop, 1);
		pthread_join(th, NULL);
	}
	EXPECT_EQ(0, child_status(pid)) TH_LOG("%s", sh->err);
	EXPECT_EQ(sh->val[0], calls);
	TH_LOG("%d calls, %ld scans of the area", calls, scan.passes);
	EXPECT_LE(20, calls);
	for (i = 0; i < LEAK_KINDS; i++) {
		if (scan.hits[i])
			TH_LOG("%s seen %ld times", leak_kinds[i], scan.hits[i]);
		seen += scan.hits[i];
	}
	EXPECT_EQ(0, seen) TH_LOG("first at offset %zu: 0x%016llx", scan.first_off,
				  (unsigned long long)scan.first_val);
	bdev_close(&m.b);
	munmap(sh, sizeof(*sh));
}

/* An open binder file holds the module. */
TEST(unload_refused_while_open)
{
	struct stat st;
	int fd;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, syscall(SYS_delete_module, "cask_binder", O_NONBLOCK));
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, stat("/sys/module/cask_binder", &st));
	close(fd);
}

#define STRESS_CLIENTS	16
#define STRESS_ROUNDS	2
#define CASK_BINDER_KO	"/lib/modules/cask/cask_binder.ko"

/* A context manager that never reads: everything sent to it stays queued. */
static void stress_manager(int ready)
{
	struct bdev b;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(60);
	if (bdev_open(&b, "/dev/binder", 0, 128 * 1024) ||
	    ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0) ||
	    bc_plain(b.fd, BC_ENTER_LOOPER) || write(ready, "m", 1) != 1)
		_exit(1);
	pause();
	_exit(0);
}

/*
 * A client holding everything a file can hold: a reference to the
 * manager with a death notification on it, a node of its own that the
 * manager has references to, a queued one-way call and a sync call
 * waiting for a reply that never comes.
 */
static void stress_client(int ready)
{
	struct bcbuf c = { 0 };
	struct bdev b;
	struct txn t;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(60);
	if (bdev_open(&b, "/dev/binder", 0, 128 * 1024))
		_exit(1);
	bc_add_u32(&c, BC_INCREFS, 0);
	bc_add_u32(&c, BC_ACQUIRE, 0);
	bc_add_handle_cookie(&c, BC_REQUEST_DEATH_NOTIFICATION, 0, 0xdead);
	txn_init(&t);
	txn_binder(&t, 0x1000, 0x2000, 0);
	txn_put(&t, NULL, 512);
	if (bc_flush(b.fd, &c) || txn_send(b.fd, 0, 1, TF_ONE_WAY, &t) ||
	    txn_send(b.fd, 0, 1, TF_ONE_WAY, &t) || txn_send(b.fd, 0, 2, 0, &t) ||
	    write(ready, "c", 1) != 1)
		_exit(2);
	pause();
	_exit(0);
}

/*
 * Many processes with open files, queued calls, references and death
 * notifications are killed at once; the module is refused while any file
 * is left and unloads once the last is released (the guest's console is
 * checked for splats and kmemleak). It is loaded again for what follows.
 */
TEST(close_then_unload)
{
	pid_t pids[STRESS_CLIENTS + 1];
	int round, i, tries, ret, ready[2];
	struct stat st;
	char c;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(CASK_BINDER_KO, R_OK))
		SKIP(return, "no %s to load again afterwards", CASK_BINDER_KO);
	ASSERT_EQ(0, unshare(CLONE_NEWIPC));
	for (round = 0; round < STRESS_ROUNDS; round++) {
		ASSERT_EQ(0, pipe(ready));
		for (i = 0; i <= STRESS_CLIENTS; i++) {
			pids[i] = fork();
			ASSERT_LE(0, pids[i]);
			if (pids[i] == 0) {
				close(ready[0]);
				if (i == 0)
					stress_manager(ready[1]);
				stress_client(ready[1]);
			}
			/* The manager first: the clients call it. */
			if (i == 0)
				ASSERT_EQ(1, read(ready[0], &c, 1));
		}
		close(ready[1]);
		for (i = 1; i <= STRESS_CLIENTS; i++)
			ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("client %d", i);
		close(ready[0]);

		EXPECT_EQ(-1, syscall(SYS_delete_module, "cask_binder", O_NONBLOCK));
		EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("%s", strerror(errno));
		for (i = 0; i <= STRESS_CLIENTS; i++)
			kill(pids[i], SIGKILL);
		/* Racing with their exits: refused until the last release. */
		for (tries = 1; tries <= 1000; tries++) {
			ret = syscall(SYS_delete_module, "cask_binder", O_NONBLOCK);
			if (!ret || (errno != EWOULDBLOCK && errno != EBUSY))
				break;
			usleep(10000);
		}
		EXPECT_EQ(0, ret) TH_LOG("round %d, try %d: %s", round, tries, strerror(errno));
		for (i = 0; i <= STRESS_CLIENTS; i++)
			EXPECT_EQ(128 + SIGKILL, child_status(pids[i]));
		TH_LOG("round %d: unloaded at try %d", round, tries);
		ASSERT_NE(0, stat("/sys/module/cask_binder", &st));
		ASSERT_EQ(0, cask_module_load("cask_binder"));
		ASSERT_EQ(0, stat("/dev/binder", &st));
	}
}

TEST_HARNESS_MAIN
