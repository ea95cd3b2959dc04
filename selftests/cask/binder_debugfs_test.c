// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder's debugfs files, /sys/kernel/debug/cask/binder/NAME/{state,
 * stats}: the host's root reads a cell's binder world in the kernel
 * binder's format, without kernel addresses; nobody in a container can
 * open them; they go with the cell.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
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
	char cell[64], path[256], want[64], *buf;
	int stop, status;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	buf = malloc(65536);
	ASSERT_NE(NULL, buf);
	pid = start_manager(&stop);
	ASSERT_LT(0, pid);
	snprintf(cell, sizeof(cell), "ipc-%lu", ns_inode(pid, "ipc"));

	snprintf(path, sizeof(path), DBG "/%s/state", cell);
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

	snprintf(path, sizeof(path), DBG "/%s/stats", cell);
	ASSERT_EQ(0, read_all(path, buf, 65536));
	EXPECT_NE(NULL, strstr(buf, "BC_ENTER_LOOPER: 1\n")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "proc: active 1\n")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "node: active 1\n")) TH_LOG("%s", buf);

	/*
	 * Another container's root may not open them: without a user
	 * namespace it passes the file's mode and is refused by the driver;
	 * with one, the mode already stops it.
	 */
	snprintf(path, sizeof(path), DBG "/%s/state", cell);
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
	snprintf(path, sizeof(path), DBG "/%s", cell);
	EXPECT_NE(0, access(path, F_OK));
	free(buf);
}

/* The cells' directories sit under one root that lists them. */
TEST(host_directory)
{
	char path[256];

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	EXPECT_EQ(0, access(DBG, F_OK));
	snprintf(path, sizeof(path), DBG "/host/stats");
	EXPECT_EQ(0, access(path, R_OK));
}

TEST_HARNESS_MAIN
