// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures in every cask path a user can reach: each operation
 * is repeated with the N-th allocation made for it failing
 * (/proc/thread-self/fail-nth with failslab and fail_page_alloc), for
 * N = 1, 2, ... until the operation completes without reaching its N-th
 * allocation. Every attempt must succeed or fail with a clean errno, and
 * leave cask working; the harness's debug kernel turns a crash, a lockdep
 * report or a leak (kmemleak after the run) into a failure.
 */
#define _GNU_SOURCE
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <linux/android_logger.h>

#include "../kselftest_harness.h"
#include "cask_util.h"
#include "cask_fault.h"

typedef int (*fault_op)(void *arg);

/*
 * Run @op with its N-th allocation failing, for every N it reaches.
 * Return: how many of the failed attempts failed (the rest recovered).
 */
static int fault_loop(struct __test_metadata *_metadata, fault_op op, void *arg,
		      const int *allowed)
{
	int fd, n, ret, failures = 0;
	bool done = false;
	const int *a;

	fd = fail_nth_fd();
	ASSERT_LE(0, fd);
	for (n = 1; n <= MAX_NTH && !done; n++) {
		fail_nth_set(fd, n);
		ret = op(arg);
		done = fail_nth_unused(fd);
		fail_nth_set(fd, 0);
		if (!ret)
			continue;
		failures++;
		for (a = allowed; *a; a++)
			if (ret == *a)
				break;
		EXPECT_NE(0, *a)
			TH_LOG("fail-nth %d: unexpected errno %d (%s)", n, ret, strerror(ret));
		/* A failed attempt must not leave the operation broken. */
		EXPECT_EQ(0, op(arg))
			TH_LOG("fail-nth %d: no recovery", n);
	}
	close(fd);
	EXPECT_TRUE(done)
		TH_LOG("more than %d allocations", MAX_NTH);
	TH_LOG("%d of %d attempts failed cleanly", failures, n - 1);
	/* The last attempt ran with nothing failing and must have worked. */
	EXPECT_EQ(0, op(arg));
	return failures;
}

/* Open, write, read back and close /dev/log/main. */
static int logger_op(void *arg)
{
	static const char payload[] = "\4fault\0allocation failure test";
	char buf[LOGGER_ENTRY_MAX_LEN];
	int fd, v = 2, ret = 0;

	(void)arg;
	fd = open("/dev/log/main", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (write(fd, payload, sizeof(payload)) != sizeof(payload) ||
	    ioctl(fd, LOGGER_SET_VERSION, &v) ||
	    ioctl(fd, LOGGER_FLUSH_LOG) ||
	    write(fd, payload, sizeof(payload)) != sizeof(payload) ||
	    read(fd, buf, sizeof(buf)) != (ssize_t)(24 + sizeof(payload)))
		ret = errno ?: EIO;
	close(fd);
	return ret;
}

/* The same with the ring's buffer to allocate anew (after a resize). */
static int logger_alloc_op(void *arg)
{
	int ret;

	(void)arg;
	ret = -write_file(CASK "/cells/host/logger/main/size", "131072");
	return ret ?: logger_op(NULL);
}

/* A host reader of all cells, merged. */
static int logger_merged_op(void *arg)
{
	struct cask_logger_select sel = { .flags = CASK_LOGGER_ALL_CELLS };
	char buf[LOGGER_ENTRY_MAX_LEN];
	int fd, ret = 0;

	(void)arg;
	fd = open("/dev/log/main", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (ioctl(fd, CASK_LOGGER_SELECT, &sel) ||
	    (read(fd, buf, sizeof(buf)) < 0 && errno != EAGAIN))
		ret = errno;
	close(fd);
	return ret;
}

/*
 * An auto cell: a child in a new IPC namespace reads /sys/kernel/cask/self
 * with the failure armed in itself; its exit ends the cell.
 */
static int auto_cell_op(void *arg)
{
	int *nth = arg, status, fd;
	char buf[64];
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		if (unshare(CLONE_NEWIPC))
			_exit(errno);
		fd = fail_nth_fd();
		if (fd < 0)
			_exit(errno);
		if (*nth)
			fail_nth_set(fd, *nth);
		status = -read_file(CASK "/self", buf, sizeof(buf));
		/* Tell the parent whether the failure was reached. */
		if (*nth && fail_nth_unused(fd))
			status = 255;
		fail_nth_set(fd, 0);
		_exit(status);
	}
	if (waitpid(pid, &status, 0) != pid)
		return errno;
	/* Killed: an exit status no errno has. */
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A registered cell: register and unregister a container's namespaces. */
static int register_op(void *arg)
{
	struct container *c = arg;
	int ret;

	ret = -cask_register("faultcell", c->init);
	if (!ret)
		ret = -cask_unregister("faultcell");
	return ret;
}

/* Open /dev/cask/kmsg, write a record and read it back. */
static int kmsg_op(void *arg)
{
	static const char line[] = "<14>fault: allocation failure test\n";
	char buf[256];
	int fd, ret = 0;

	(void)arg;
	fd = open("/dev/cask/kmsg", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (lseek(fd, 0, SEEK_END) ||
	    write(fd, line, sizeof(line) - 1) != sizeof(line) - 1 ||
	    read(fd, buf, sizeof(buf)) <= 0)
		ret = errno ?: EIO;
	close(fd);
	return ret;
}

/* The same with the ring's buffer to allocate anew (after a resize). */
static int kmsg_alloc_op(void *arg)
{
	int ret;

	(void)arg;
	ret = -write_file(CASK "/cells/host/logger/kmsg/size", "65536");
	return ret ?: kmsg_op(NULL);
}

static const int enomem[] = { ENOMEM, 0 };

TEST(logger_alloc_failures)
{
	if (fault_missing())
		SKIP(return, "%s", fault_missing());
	if (access("/dev/log/main", F_OK))
		SKIP(return, "cask_logger is not loaded");
	ASSERT_EQ(0, fault_setup());
	EXPECT_LT(0, fault_loop(_metadata, logger_op, NULL, enomem));
	EXPECT_LT(0, fault_loop(_metadata, logger_alloc_op, NULL, enomem));
	EXPECT_LT(0, fault_loop(_metadata, logger_merged_op, NULL, enomem));
	EXPECT_EQ(0, write_file(CASK "/cells/host/logger/main/size", "262144"));
}

TEST(kmsg_alloc_failures)
{
	if (fault_missing())
		SKIP(return, "%s", fault_missing());
	if (access("/dev/cask/kmsg", F_OK))
		SKIP(return, "cask_logger has no /dev/cask/kmsg");
	ASSERT_EQ(0, fault_setup());
	ASSERT_EQ(0, write_file(CASK "/cells/host/logger/kmsg/devkmsg", "on"));
	EXPECT_LT(0, fault_loop(_metadata, kmsg_op, NULL, enomem));
	EXPECT_LT(0, fault_loop(_metadata, kmsg_alloc_op, NULL, enomem));
	EXPECT_EQ(0, write_file(CASK "/cells/host/logger/kmsg/size", "131072"));
	EXPECT_EQ(0, write_file(CASK "/cells/host/logger/kmsg/devkmsg", "ratelimit"));
}

/*
 * Every driver attaches to a new cell, so a cell has many allocations to
 * fail: more time than the harness's default 30 s, on TCG.
 */
/* Registering a cell attaches every driver, files and all: more than MAX_NTH. */
#define CELL_MAX_NTH	1000

FIXTURE(cells) {};
FIXTURE_SETUP(cells) {}
FIXTURE_TEARDOWN(cells) {}

TEST_F_TIMEOUT(cells, register_alloc_failures, 240)
{
	struct container c;
	int fd, n, ret, failed = 0;
	bool done = false;

	if (fault_missing())
		SKIP(return, "%s", fault_missing());
	ASSERT_EQ(0, fault_setup());
	ASSERT_EQ(0, container_start(&c, "cask-test-fault", 400000));
	fd = fail_nth_fd();
	ASSERT_LE(0, fd);
	for (n = 1; n <= CELL_MAX_NTH && !done; n++) {
		fail_nth_set(fd, n);
		ret = -cask_register("faultcell", c.init);
		done = fail_nth_unused(fd);
		fail_nth_set(fd, 0);
		if (ret) {
			failed++;
			EXPECT_EQ(ENOMEM, ret);
			EXPECT_FALSE(cell_exists("faultcell"));
		}
		/* Registered or not, the container can be registered now. */
		if (ret)
			ASSERT_EQ(0, cask_register("faultcell", c.init));
		ASSERT_EQ(0, cask_unregister("faultcell"));
	}
	close(fd);
	EXPECT_TRUE(done);
	EXPECT_LT(0, failed);
	TH_LOG("%d of %d attempts failed cleanly", failed, n - 1);
	EXPECT_EQ(0, register_op(&c));
	container_stop(&c);
}

TEST_F_TIMEOUT(cells, auto_cell_alloc_failures, 240)
{
	int n, ret, failed = 0;

	if (fault_missing())
		SKIP(return, "%s", fault_missing());
	ASSERT_EQ(0, fault_setup());
	for (n = 1; n <= MAX_NTH; n++) {
		ret = auto_cell_op(&n);
		if (ret == 255)
			break;
		if (ret) {
			failed++;
			EXPECT_EQ(ENOMEM, ret)
				TH_LOG("fail-nth %d", n);
		}
	}
	EXPECT_GE(MAX_NTH, n);
	EXPECT_LT(0, failed);
	TH_LOG("%d of %d attempts failed cleanly", failed, n - 1);
	n = 0;
	EXPECT_EQ(0, auto_cell_op(&n));
}

TEST_HARNESS_MAIN
