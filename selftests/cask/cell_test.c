// SPDX-License-Identifier: GPL-2.0
/*
 * cask cells from user space: /sys/kernel/cask/{register,unregister,
 * auto_cells,self,cells/NAME/...} with real containers made of namespaces
 * and cgroup v2 directories (cask_util.h), and what a container may not do.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "cask_util.h"

TEST(host_cell)
{
	char buf[256], want[32];

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	ASSERT_EQ(0, cell_value("host", "id", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
	ASSERT_EQ(0, cell_value("host", "auto", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
	ASSERT_EQ(0, cell_value("host", "ipc_ns", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%lu", ns_inode(1, "ipc"));
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, cell_value("host", "user_ns", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%lu", ns_inode(1, "user"));
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, cell_value("host", "pid_ns", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%lu", ns_inode(1, "pid"));
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, cell_value("host", "cgroup", buf, sizeof(buf)));
	EXPECT_STREQ("/", buf);
	/* The host's own cell, as the host sees it. */
	ASSERT_EQ(0, read_file(CASK "/self", buf, sizeof(buf)));
	EXPECT_STREQ("host", buf);
	/* The host cell cannot go. */
	EXPECT_EQ(-EBUSY, cask_unregister("host"));
	EXPECT_TRUE(cell_exists("host"));
}

FIXTURE(two) {
	struct container a, b;
};

FIXTURE_SETUP(two)
{
	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	ASSERT_EQ(0, container_start(&self->a, "cask-test-a", 100000));
	ASSERT_EQ(0, container_start(&self->b, "cask-test-b", 200000));
}

FIXTURE_TEARDOWN(two)
{
	cask_unregister("cella");
	cask_unregister("cellb");
	container_stop(&self->a);
	container_stop(&self->b);
}

static void check_cell(struct __test_metadata *_metadata, const char *name,
		       const struct container *c, const char *is_auto)
{
	char buf[256], want[256];

	ASSERT_EQ(0, cell_value(name, "ipc_ns", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%lu", ns_inode(c->init, "ipc"));
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, cell_value(name, "user_ns", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%lu", ns_inode(c->init, "user"));
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, cell_value(name, "pid_ns", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%lu", ns_inode(c->init, "pid"));
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, cell_value(name, "cgroup", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "/%s", c->cgroup);
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, cell_value(name, "auto", buf, sizeof(buf)));
	EXPECT_STREQ(is_auto, buf);
}

TEST_F(two, register_and_read)
{
	char ida[32], idb[32];

	ASSERT_EQ(0, cask_register("cella", self->a.init));
	ASSERT_EQ(0, cask_register("cellb", self->b.init));
	check_cell(_metadata, "cella", &self->a, "0");
	check_cell(_metadata, "cellb", &self->b, "0");
	ASSERT_EQ(0, cell_value("cella", "id", ida, sizeof(ida)));
	ASSERT_EQ(0, cell_value("cellb", "id", idb, sizeof(idb)));
	EXPECT_NE(0, strcmp(ida, idb));
	EXPECT_NE(0, strcmp(ida, "0"));

	EXPECT_EQ(0, cask_unregister("cella"));
	EXPECT_FALSE(cell_exists("cella"));
	EXPECT_TRUE(cell_exists("cellb"));
	EXPECT_EQ(-ENOENT, cask_unregister("cella"));
	/* The name is free again, and so is the namespace. */
	EXPECT_EQ(0, cask_register("cella", self->a.init));
	EXPECT_EQ(0, cask_unregister("cella"));
	EXPECT_EQ(0, cask_unregister("cellb"));
}

TEST_F(two, register_errors)
{
	static const char *const bad_names[] = {
		"", "a/b", ".", "..", "caf\xc3\xa9",
		"012345678901234567890123456789012",
	};
	static const char *const bad_cmds[] = {
		"cella\n", "cella 0\n", "cella -1\n", "cella abc\n",
		"cella 12 13\n", "   ", "cella 99999999999999999999\n",
	};
	char long_cmd[200];
	size_t i;
	pid_t dead;

	for (i = 0; i < ARRAY_SIZE(bad_names); i++) {
		const char *name = bad_names[i];

		EXPECT_EQ(-EINVAL, cask_register(name, self->a.init))
			TH_LOG("name '%s'", name);
	}
	for (i = 0; i < ARRAY_SIZE(bad_cmds); i++) {
		const char *cmd = bad_cmds[i];

		EXPECT_EQ(-EINVAL, write_file(CASK "/register", cmd))
			TH_LOG("command '%s'", cmd);
	}
	memset(long_cmd, 'a', sizeof(long_cmd) - 1);
	long_cmd[sizeof(long_cmd) - 1] = '\0';
	EXPECT_EQ(-EINVAL, write_file(CASK "/register", long_cmd));

	/* A pid that no longer exists. */
	dead = fork();
	ASSERT_LE(0, dead);
	if (dead == 0)
		_exit(0);
	ASSERT_EQ(dead, waitpid(dead, NULL, 0));
	EXPECT_EQ(-ESRCH, cask_register("cella", dead));

	/* The host's namespaces already have the host cell. */
	EXPECT_EQ(-EEXIST, cask_register("cella", getpid()));
	EXPECT_EQ(-EEXIST, cask_register("host", self->a.init));

	ASSERT_EQ(0, cask_register("cella", self->a.init));
	EXPECT_EQ(-EEXIST, cask_register("cella", self->b.init));
	EXPECT_EQ(-EEXIST, cask_register("cellz", self->a.init));

	EXPECT_EQ(-EINVAL, cask_unregister("a/b"));
	EXPECT_EQ(-EINVAL, cask_unregister(""));
	EXPECT_EQ(-ENOENT, cask_unregister("nosuchcell"));
	EXPECT_EQ(0, cask_unregister("cella"));
}

/* Inside a container (root mapped to an unprivileged host uid). */
static int try_register(void *arg)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "evil %d\n", getpid());
	return -write_file(CASK "/register", cmd);
}

static int try_unregister(void *arg)
{
	return -write_file(CASK "/unregister", (const char *)arg);
}

static int try_auto_cells(void *arg)
{
	return -write_file(CASK "/auto_cells", "0\n");
}

static int try_read(void *arg)
{
	char buf[256];

	return -read_file((const char *)arg, buf, sizeof(buf));
}

TEST_F(two, container_cannot_register)
{
	ASSERT_EQ(0, cask_register("cella", self->a.init));
	ASSERT_EQ(0, cask_register("cellb", self->b.init));
	/* The files are the host root's; the container root is not. */
	EXPECT_EQ(EACCES, container_run(&self->b, try_register, NULL));
	EXPECT_EQ(EACCES, container_run(&self->b, try_unregister, "cella\n"));
	EXPECT_EQ(EACCES, container_run(&self->b, try_unregister, "cellb\n"));
	EXPECT_EQ(EACCES, container_run(&self->b, try_unregister, "host\n"));
	EXPECT_EQ(EACCES, container_run(&self->b, try_auto_cells, NULL));
	EXPECT_TRUE(cell_exists("cella"));
	EXPECT_TRUE(cell_exists("cellb"));
	EXPECT_FALSE(cell_exists("evil"));
}

TEST_F(two, cells_private)
{
	ASSERT_EQ(0, cask_register("cella", self->a.init));
	ASSERT_EQ(0, cask_register("cellb", self->b.init));
	/* A's root reads A's files; B's root reads none of A's, nor the host's. */
	EXPECT_EQ(0, container_run(&self->a, try_read, CASK "/cells/cella/ipc_ns"));
	EXPECT_EQ(0, container_run(&self->a, try_read, CASK "/cells/cella/cgroup"));
	EXPECT_EQ(EACCES, container_run(&self->b, try_read, CASK "/cells/cella/ipc_ns"));
	EXPECT_EQ(EACCES, container_run(&self->b, try_read, CASK "/cells/cella/cgroup"));
	EXPECT_EQ(EACCES, container_run(&self->b, try_read, CASK "/cells/host/cgroup"));
	EXPECT_EQ(EACCES, container_run(&self->a, try_read, CASK "/cells/cellb/pid_ns"));
}

static int read_self(void *arg)
{
	char buf[64], want[64];
	struct stat st;

	if (read_file(CASK "/self", buf, sizeof(buf)))
		return 1;
	if (stat("/proc/self/ns/ipc", &st))
		return 2;
	snprintf(want, sizeof(want), "%s", arg ? (const char *)arg : "");
	if (!arg)
		snprintf(want, sizeof(want), "ipc-%lu", (unsigned long)st.st_ino);
	return strcmp(buf, want) ? 3 : 0;
}

static int read_self_errno(void *arg)
{
	char buf[64];

	return -read_file(CASK "/self", buf, sizeof(buf));
}

TEST_F(two, self_is_own_cell)
{
	ASSERT_EQ(0, cask_register("cella", self->a.init));
	ASSERT_EQ(0, cask_register("cellb", self->b.init));
	EXPECT_EQ(0, container_run(&self->a, read_self, "cella"));
	EXPECT_EQ(0, container_run(&self->b, read_self, "cellb"));
}

TEST_F(two, auto_cell_on_first_use)
{
	char name[64], nameb[64], buf[64];

	snprintf(name, sizeof(name), "ipc-%lu", ns_inode(self->a.init, "ipc"));
	snprintf(nameb, sizeof(nameb), "ipc-%lu", ns_inode(self->b.init, "ipc"));
	EXPECT_FALSE(cell_exists(name));

	/* Off: no cell is made, the container is told there is none. */
	ASSERT_EQ(0, write_file(CASK "/auto_cells", "0\n"));
	ASSERT_EQ(0, read_file(CASK "/auto_cells", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
	EXPECT_EQ(ENODEV, container_run(&self->a, read_self_errno, NULL));
	EXPECT_FALSE(cell_exists(name));

	ASSERT_EQ(0, write_file(CASK "/auto_cells", "1\n"));
	EXPECT_EQ(0, container_run(&self->a, read_self, NULL));
	ASSERT_TRUE(cell_exists(name));
	check_cell(_metadata, name, &self->a, "1");
	/* Its namespace has a cell now: registering it is refused. */
	EXPECT_EQ(-EEXIST, cask_register("cella", self->a.init));
	/* B's first use makes B's own cell, not A's. */
	EXPECT_EQ(0, container_run(&self->b, read_self, NULL));
	EXPECT_TRUE(cell_exists(nameb));

	/* A container's end ends its auto cell, and only its own. */
	container_stop(&self->a);
	EXPECT_TRUE(cell_gone(name));
	EXPECT_TRUE(cell_exists(nameb));
	container_stop(&self->b);
	EXPECT_TRUE(cell_gone(nameb));
}

/*
 * A's own auto name taken by B's registered cell (as a dead namespace's
 * cell may hold a reused number): A still gets a cell, under a suffixed
 * name.
 */
TEST_F(two, auto_name_taken)
{
	char name[64], want[72];

	snprintf(name, sizeof(name), "ipc-%lu", ns_inode(self->a.init, "ipc"));
	snprintf(want, sizeof(want), "%s.1", name);
	ASSERT_EQ(0, cask_register(name, self->b.init));
	/* A's first use: its self is not the plain name (3). */
	EXPECT_EQ(3, container_run(&self->a, read_self, NULL));
	EXPECT_TRUE(cell_exists(want));
	check_cell(_metadata, want, &self->a, "1");
	EXPECT_EQ(0, cask_unregister(name));
}

TEST_F(two, exit_unregisters)
{
	ASSERT_EQ(0, cask_register("cella", self->a.init));
	ASSERT_EQ(0, cask_register("cellb", self->b.init));
	container_stop(&self->a);
	EXPECT_TRUE(cell_gone("cella"));
	EXPECT_TRUE(cell_exists("cellb"));
	EXPECT_EQ(-ENOENT, cask_unregister("cella"));
}

/*
 * A cell ends with its IPC namespace: a process that joined the namespace
 * keeps the cell after the container's init is gone. On a kernel without
 * the IPC namespace free notifier the cell ends with the init instead.
 */
TEST_F(two, lifetime_follows_ipc_ns)
{
	char path[64], feature[8], c;
	int go[2], ready[2];
	bool tracked;
	pid_t pid;

	ASSERT_EQ(0, read_file(CASK "/features/ipc_ns_free_notifier", feature,
			       sizeof(feature)));
	tracked = !strcmp(feature, "1");
	ASSERT_EQ(0, cask_register("cella", self->a.init));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", self->a.init);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		/* The containers' command pipes must see EOF when they stop. */
		close(self->a.cmd);
		close(self->a.res);
		close(self->b.cmd);
		close(self->b.res);
		close(go[1]);
		close(ready[0]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWIPC))
			_exit(1);
		close(fd);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		/* Hold the namespace until told. */
		_exit(read(go[0], &c, 1) == 0 ? 0 : 3);
	}
	close(go[0]);
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));

	container_stop(&self->a);
	if (tracked) {
		usleep(500000);
		EXPECT_TRUE(cell_exists("cella"));
	} else {
		EXPECT_TRUE(cell_gone("cella"));
	}
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	EXPECT_TRUE(cell_gone("cella"));
	close(ready[0]);
}

TEST(register_unregister_loop)
{
	struct container c;
	int i;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, container_start(&c, "cask-test-loop", 300000));
		ASSERT_EQ(0, cask_register("loop", c.init));
		if (i % 2)
			ASSERT_EQ(0, cask_unregister("loop"));
		container_stop(&c);
		ASSERT_TRUE(cell_gone("loop"));
	}
}

/*
 * In a user namespace whose root is the host's root (uid 0 mapped to 0),
 * write @cmd to @file; the errno, 0 on success, or -1.
 */
static int in_root_mapped_userns(const char *file, const char *cmd)
{
	int up[2], go[2], status;
	char path[64], c;
	pid_t pid;

	if (pipe(up) || pipe(go))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(up[0]);
		close(go[1]);
		if (unshare(CLONE_NEWUSER) || write(up[1], "u", 1) != 1 ||
		    read(go[0], &c, 1) != 1)
			_exit(100);
		if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
			_exit(101);
		_exit(-write_file(file, cmd));
	}
	close(up[1]);
	close(go[0]);
	if (read(up[0], &c, 1) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
		write_file(path, "0 0 1\n");
		snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
		write_file(path, "deny\n");
		snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
		write_file(path, "0 0 1\n");
		if (write(go[1], "g", 1) != 1)
			kill(pid, SIGKILL);
	}
	close(up[0]);
	close(go[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Root with every capability in a new IPC namespace of its own, no user
 * namespace: a privileged container. Writes @cmd to @file; the errno or 0.
 */
static int in_privileged_ipcns(const char *file, const char *cmd)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (unshare(CLONE_NEWIPC))
			_exit(100);
		_exit(-write_file(file, cmd));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(userns_root_cannot_register)
{
	char cmd[64];

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	/*
	 * It owns the files by uid, so open succeeds; it lacks CAP_SYS_ADMIN
	 * in the initial user namespace, so the write does not.
	 */
	snprintf(cmd, sizeof(cmd), "evil %d\n", getpid());
	EXPECT_EQ(EPERM, in_root_mapped_userns(CASK "/register", cmd));
	EXPECT_EQ(EPERM, in_root_mapped_userns(CASK "/unregister", "host\n"));
	EXPECT_EQ(EPERM, in_root_mapped_userns(CASK "/auto_cells", "0\n"));
	EXPECT_FALSE(cell_exists("evil"));
}

/*
 * Two containers that the file owners cannot tell apart: both map their root
 * to the same host uid (docker's userns-remap, rootless podman), or neither
 * has a user namespace (plain root in new IPC, mount and PID namespaces).
 * Each reads its own cell's files, not the other's: being in the cell (or
 * the host) is what counts, not owning the file.
 */
FIXTURE(same_root) {
	struct container a, b;
};

FIXTURE_VARIANT(same_root) {
	unsigned int uid_base;
};

FIXTURE_VARIANT_ADD(same_root, shared_mapping) { .uid_base = 400000 };
FIXTURE_VARIANT_ADD(same_root, no_userns) { .uid_base = CONTAINER_NO_USERNS };

FIXTURE_SETUP(same_root)
{
	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	ASSERT_EQ(0, container_start(&self->a, "cask-same-a", variant->uid_base));
	ASSERT_EQ(0, container_start(&self->b, "cask-same-b", variant->uid_base));
	ASSERT_EQ(0, cask_register("samea", self->a.init));
	ASSERT_EQ(0, cask_register("sameb", self->b.init));
}

FIXTURE_TEARDOWN(same_root)
{
	cask_unregister("samea");
	cask_unregister("sameb");
	container_stop(&self->a);
	container_stop(&self->b);
}

/* Literals: a container sees the test's memory as it was when it started. */
#define SAMEA	CASK "/cells/samea/"
static const char *const samea_files[] = {
	SAMEA "id", SAMEA "ipc_ns", SAMEA "user_ns", SAMEA "pid_ns", SAMEA "cgroup",
	SAMEA "auto",
};

static const char *const samea_logger_files[] = {
	SAMEA "logger/main/size", SAMEA "logger/main/bytes_written",
	SAMEA "logger/main/entries_dropped", SAMEA "logger/main/readers",
	SAMEA "logger/crash/size",
};

static int try_write_size(void *arg)
{
	return -write_file(arg, "65536\n");
}

TEST_F(same_root, cells_private)
{
	bool logger = !access("/dev/log/main", F_OK);
	char buf[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(samea_files); i++) {
		const char *file = samea_files[i];

		EXPECT_EQ(0, container_run(&self->a, try_read, (void *)file)) TH_LOG("%s", file);
		EXPECT_EQ(EACCES, container_run(&self->b, try_read, (void *)file))
			TH_LOG("%s", file);
		/* The host reads every cell. */
		EXPECT_EQ(0, read_file(file, buf, sizeof(buf))) TH_LOG("%s", file);
	}
	EXPECT_EQ(0, container_run(&self->b, try_read, CASK "/cells/sameb/cgroup"));
	EXPECT_EQ(EACCES, container_run(&self->a, try_read, CASK "/cells/sameb/ipc_ns"));
	/* Nor the host's cell, which a plain root's file permissions let it read. */
	EXPECT_EQ(EACCES, container_run(&self->b, try_read, CASK "/cells/host/cgroup"));
	EXPECT_EQ(EACCES, container_run(&self->b, try_read, CASK "/cells/host/id"));
	if (!logger)
		return;
	for (i = 0; i < ARRAY_SIZE(samea_logger_files); i++) {
		const char *file = samea_logger_files[i];

		EXPECT_EQ(0, container_run(&self->a, try_read, (void *)file)) TH_LOG("%s", file);
		EXPECT_EQ(EACCES, container_run(&self->b, try_read, (void *)file))
			TH_LOG("%s", file);
	}
	EXPECT_EQ(EACCES, container_run(&self->b, try_write_size, SAMEA "logger/main/size"));
	ASSERT_EQ(0, read_file(SAMEA "logger/main/size", buf, sizeof(buf)));
	EXPECT_STREQ("262144", buf);
	EXPECT_EQ(0, container_run(&self->a, try_write_size, SAMEA "logger/main/size"));
	ASSERT_EQ(0, read_file(SAMEA "logger/main/size", buf, sizeof(buf)));
	EXPECT_STREQ("65536", buf);
}

/* samea's cgroup as the caller sees it is @arg: 0, 1, or the read's errno. */
static int cgroup_is(void *arg)
{
	char buf[PATH_MAX];
	int ret;

	ret = read_file(CASK "/cells/samea/cgroup", buf, sizeof(buf));
	if (ret)
		return -ret;
	return strcmp(buf, arg) ? 1 : 0;
}

/* The same from a new cgroup namespace; 100 if there is none to be had. */
static int cgroup_in_own_ns_is(void *arg)
{
	if (unshare(CLONE_NEWCGROUP))
		return 100;
	return cgroup_is(arg);
}

/* A cell's cgroup path is relative to the reader's cgroup namespace. */
TEST_F(same_root, cgroup_relative)
{
	char buf[PATH_MAX];

	/* A's functions run in A's cgroup: a new cgroup namespace is rooted there. */
	EXPECT_EQ(0, container_run(&self->a, cgroup_in_own_ns_is, "/"));
	/* In the host's cgroup namespace, A sees the host's path, as the host does. */
	EXPECT_EQ(0, container_run(&self->a, cgroup_is, "/cask-same-a"));
	ASSERT_EQ(0, read_file(CASK "/cells/samea/cgroup", buf, sizeof(buf)));
	EXPECT_STREQ("/cask-same-a", buf);
}

/* The limit on cells, for which user space without privilege can ask. */
#define MAX_CELLS	CASK "/max_cells"
#define CELLS_REFUSED	CASK "/cells_refused"

static long read_number(const char *path)
{
	char buf[32], *end;
	long v;

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	v = strtol(buf, &end, 10);
	return end == buf || *end ? -1 : v;
}

static int write_number(const char *path, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld\n", v);
	return write_file(path, buf);
}

TEST(max_cells_file)
{
	static const char *const bad[] = { "0\n", "-1\n", "abc\n", "\n", "1x\n" };
	struct stat st;
	char buf[32];
	size_t i;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	ASSERT_EQ(0, stat(MAX_CELLS, &st));
	EXPECT_EQ(0644, st.st_mode & 07777);
	ASSERT_EQ(0, stat(CELLS_REFUSED, &st));
	EXPECT_EQ(0444, st.st_mode & 07777);
	ASSERT_EQ(0, read_file(MAX_CELLS, buf, sizeof(buf)));
	EXPECT_STREQ("256", buf);
	EXPECT_LE(0, read_number(CELLS_REFUSED));

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *value = bad[i];

		EXPECT_EQ(-EINVAL, write_file(MAX_CELLS, value)) TH_LOG("'%s'", value);
	}
	EXPECT_EQ(-EACCES, write_file(CELLS_REFUSED, "0\n"));
	/* Root of a user namespace, even mapped to the host's root: no. */
	EXPECT_EQ(EPERM, in_root_mapped_userns(MAX_CELLS, "1000\n"));
	/* Nor a privileged container's root: the host's limits, not its own. */
	EXPECT_EQ(EPERM, in_privileged_ipcns(MAX_CELLS, "1000\n"));
	EXPECT_EQ(EPERM, in_privileged_ipcns(CASK "/max_cells_per_user", "1000\n"));
	EXPECT_EQ(EPERM, in_privileged_ipcns(CASK "/auto_cells", "0\n"));
	EXPECT_EQ(1, read_number(CASK "/auto_cells"));
	EXPECT_EQ(256, read_number(MAX_CELLS));
	EXPECT_EQ(0, write_file(MAX_CELLS, "1\n"));
	EXPECT_EQ(1, read_number(MAX_CELLS));
	EXPECT_EQ(0, write_file(MAX_CELLS, "256\n"));
	EXPECT_EQ(256, read_number(MAX_CELLS));
}

#define MAKE_TRIES	8

/*
 * Without privilege on the host: a user namespace of its own (unshare -Ur as
 * @uid), then a new IPC namespace and an open of /dev/log/main, which makes
 * an auto cell, @MAKE_TRIES times; the files stay open, so the cells stay
 * too, until @hold (if not -1) reads end of file. Each open's errno, or 0,
 * into @res; 0, or where it failed.
 */
static int make_cells(int *res, uid_t uid, int hold)
{
	char map[32], c;
	int i, fd;

	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return 100;
	/* Our /proc/self files are root's otherwise, since the uid changed. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) || unshare(CLONE_NEWUSER))
		return 101;
	snprintf(map, sizeof(map), "0 %u 1\n", uid);
	if (write_file("/proc/self/uid_map", map) ||
	    write_file("/proc/self/setgroups", "deny\n") ||
	    write_file("/proc/self/gid_map", map))
		return 102;
	for (i = 0; i < MAKE_TRIES; i++) {
		if (unshare(CLONE_NEWIPC))
			return 103;
		fd = open("/dev/log/main", O_WRONLY | O_CLOEXEC);
		res[i] = fd < 0 ? errno : 0;
	}
	if (hold >= 0 && read(hold, &c, 1) < 0)
		return 104;
	return 0;
}

TEST(max_cells_limit)
{
	long refused0, refused, max0;
	int *res, n, i, ok = 0, nospc = 0, first_fail = -1, status;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access("/dev/log/main", F_OK))
		SKIP(return, "cask_logger is not loaded");
	res = shared_alloc(sizeof(int) * MAKE_TRIES);
	ASSERT_NE(NULL, res);
	max0 = read_number(MAX_CELLS);
	ASSERT_LT(0, max0);
	refused0 = read_number(CELLS_REFUSED);
	ASSERT_LE(0, refused0);
	/* Cells of earlier tests are released after they leave the list. */
	usleep(500000);
	n = count_cells();
	ASSERT_LT(0, n);

	/* Room for two more. */
	ASSERT_EQ(0, write_number(MAX_CELLS, n + 2));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(make_cells(res, 65534, -1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, write_number(MAX_CELLS, max0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	for (i = 0; i < MAKE_TRIES; i++) {
		if (!res[i]) {
			ok++;
			/* Once refused, refused until a cell goes. */
			EXPECT_EQ(-1, first_fail) TH_LOG("open %d succeeded after a refusal", i);
			continue;
		}
		EXPECT_EQ(ENOSPC, res[i]) TH_LOG("open %d", i);
		nospc += res[i] == ENOSPC;
		if (first_fail < 0)
			first_fail = i;
	}
	/* Two, unless a cell of an earlier test was not released yet. */
	EXPECT_LE(1, ok);
	EXPECT_GE(2, ok);
	EXPECT_LT(0, nospc);
	refused = read_number(CELLS_REFUSED);
	EXPECT_EQ(refused0 + nospc, refused);

	/* The cells go with the child's namespaces; the count is back. */
	for (i = 0; i < 200 && count_cells() > n; i++)
		usleep(50000);
	EXPECT_EQ(n, count_cells());
	shared_free(res, sizeof(int) * MAKE_TRIES);
}

/* A zombie has no namespaces left to make a cell of. */
/*
 * max_cells refuses auto cells only: once containers have used it up, the
 * host's admin can still register the next container.
 */
static int try_auto_cell(void *arg)
{
	char buf[64];

	if (unshare(CLONE_NEWIPC))
		return 100;
	return -read_file(CASK "/self", buf, sizeof(buf));
}

TEST(max_cells_spares_register)
{
	long max0, n;
	int go, status;
	char cmd[64];
	pid_t task, pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	max0 = read_number(MAX_CELLS);
	ASSERT_LT(0, max0);
	usleep(500000);
	n = count_cells();
	ASSERT_LT(0, n);
	task = start_ipc_task(&go);
	ASSERT_LT(0, task);
	usleep(100000);

	ASSERT_EQ(0, write_number(MAX_CELLS, n));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(try_auto_cell(NULL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == ENOSPC);
	snprintf(cmd, sizeof(cmd), "maxreg %d\n", task);
	EXPECT_EQ(0, write_file(CASK "/register", cmd));
	EXPECT_EQ(0, write_number(MAX_CELLS, max0));
	EXPECT_EQ(0, write_file(CASK "/unregister", "maxreg\n"));
	close(go);
	waitpid(task, NULL, 0);
}

#define MAX_PER_USER	CASK "/max_cells_per_user"

static int count_ok(const int *res)
{
	int i, ok = 0;

	for (i = 0; i < MAKE_TRIES; i++)
		ok += !res[i];
	return ok;
}

/*
 * Each user has a share of the auto cells: one that used up its share
 * (max_cells_per_user) is refused with ENOSPC, another still gets cells.
 */
TEST(max_cells_per_user)
{
	int *res, *res2, p[2], status, i;
	long per0, refused0;
	pid_t hog, other;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access("/dev/log/main", F_OK))
		SKIP(return, "cask_logger is not loaded");
	per0 = read_number(MAX_PER_USER);
	ASSERT_EQ(64, per0);
	refused0 = read_number(CELLS_REFUSED);
	res = shared_alloc(sizeof(int) * MAKE_TRIES);
	res2 = shared_alloc(sizeof(int) * MAKE_TRIES);
	ASSERT_NE(NULL, res);
	ASSERT_NE(NULL, res2);
	for (i = 0; i < MAKE_TRIES; i++)
		res[i] = -1;
	usleep(500000);
	ASSERT_EQ(0, write_number(MAX_PER_USER, 2));
	ASSERT_EQ(0, pipe(p));

	/* The hog keeps its cells while the other user makes some. */
	hog = fork();
	ASSERT_LE(0, hog);
	if (hog == 0) {
		close(p[1]);
		_exit(make_cells(res, 65534, p[0]));
	}
	close(p[0]);
	for (i = 0; i < 400 && __atomic_load_n(&res[MAKE_TRIES - 1], __ATOMIC_ACQUIRE) < 0; i++)
		usleep(25000);
	other = fork();
	ASSERT_LE(0, other);
	if (other == 0)
		_exit(make_cells(res2, 65533, -1));
	ASSERT_EQ(other, waitpid(other, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(p[1]);
	ASSERT_EQ(hog, waitpid(hog, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, write_number(MAX_PER_USER, per0));

	EXPECT_EQ(2, count_ok(res));
	for (i = 2; i < MAKE_TRIES; i++)
		EXPECT_EQ(ENOSPC, res[i]) TH_LOG("hog open %d", i);
	/* Not refused for the hog's sake: two of its own, then ENOSPC. */
	EXPECT_EQ(2, count_ok(res2));
	EXPECT_EQ(ENOSPC, res2[2]);
	EXPECT_EQ(refused0 + 2 * (MAKE_TRIES - 2), read_number(CELLS_REFUSED));
	/* Only host root may change it. */
	EXPECT_EQ(-EINVAL, write_file(MAX_PER_USER, "0\n"));
	shared_free(res, sizeof(int) * MAKE_TRIES);
	shared_free(res2, sizeof(int) * MAKE_TRIES);
}

/*
 * A rootful runtime makes every container's user namespace as the host's
 * root: each such namespace is a share of its own, so one container that
 * used up its share leaves the next container's first open working. A
 * user's namespaces still share that user's budget.
 */
TEST(max_cells_per_container)
{
	int *a, *b, *u1, *u2, pa[2], pu[2], status, i;
	pid_t ca, cb, h1, h2;
	long per0;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access("/dev/log/main", F_OK))
		SKIP(return, "cask_logger is not loaded");
	per0 = read_number(MAX_PER_USER);
	ASSERT_LT(0, per0);
	a = shared_alloc(sizeof(int) * MAKE_TRIES);
	b = shared_alloc(sizeof(int) * MAKE_TRIES);
	u1 = shared_alloc(sizeof(int) * MAKE_TRIES);
	u2 = shared_alloc(sizeof(int) * MAKE_TRIES);
	ASSERT_TRUE(a && b && u1 && u2);
	for (i = 0; i < MAKE_TRIES; i++) {
		a[i] = -1;
		u1[i] = -1;
	}
	usleep(500000);
	ASSERT_EQ(0, write_number(MAX_PER_USER, 2));
	ASSERT_EQ(0, pipe(pa));
	ASSERT_EQ(0, pipe(pu));

	/* Container A, a user namespace root made, keeps its cells... */
	ca = fork();
	ASSERT_LE(0, ca);
	if (ca == 0) {
		/* Only the parent may hold a write end: EOF is the release. */
		close(pa[1]);
		close(pu[0]);
		close(pu[1]);
		_exit(make_cells(a, 0, pa[0]));
	}
	close(pa[0]);
	/* ...and so does a user's first namespace. */
	h1 = fork();
	ASSERT_LE(0, h1);
	if (h1 == 0) {
		close(pu[1]);
		close(pa[1]);
		_exit(make_cells(u1, 65534, pu[0]));
	}
	close(pu[0]);
	for (i = 0; i < 400 && (__atomic_load_n(&a[MAKE_TRIES - 1], __ATOMIC_ACQUIRE) < 0 ||
				__atomic_load_n(&u1[MAKE_TRIES - 1], __ATOMIC_ACQUIRE) < 0); i++)
		usleep(25000);
	/* Container B, another of root's namespaces: a share of its own. */
	cb = fork();
	ASSERT_LE(0, cb);
	if (cb == 0)
		_exit(make_cells(b, 0, -1));
	ASSERT_EQ(cb, waitpid(cb, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The same user's second namespace: the user's share is used up. */
	h2 = fork();
	ASSERT_LE(0, h2);
	if (h2 == 0)
		_exit(make_cells(u2, 65534, -1));
	ASSERT_EQ(h2, waitpid(h2, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(pa[1]);
	close(pu[1]);
	ASSERT_EQ(ca, waitpid(ca, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(h1, waitpid(h1, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, write_number(MAX_PER_USER, per0));

	EXPECT_EQ(2, count_ok(a));
	EXPECT_EQ(ENOSPC, a[2]);
	EXPECT_EQ(2, count_ok(b)) TH_LOG("container B refused for A's cells");
	EXPECT_EQ(ENOSPC, b[2]);
	EXPECT_EQ(2, count_ok(u1));
	EXPECT_EQ(0, count_ok(u2)) TH_LOG("a user's second namespace got a share of its own");
	EXPECT_EQ(ENOSPC, u2[0]);
	shared_free(a, sizeof(int) * MAKE_TRIES);
	shared_free(b, sizeof(int) * MAKE_TRIES);
	shared_free(u1, sizeof(int) * MAKE_TRIES);
	shared_free(u2, sizeof(int) * MAKE_TRIES);
}

/*
 * Tasks of a container make auto cells while the container's init exits:
 * without the IPC namespace notifier each new cell looks the init up to
 * watch it, and must not touch it once it is gone (no splat).
 */
static int init_exits_round(int round)
{
	int i, fd;
	pid_t init, w;

	if (unshare(CLONE_NEWPID | CLONE_NEWIPC))
		return 100;
	init = fork();
	if (init < 0)
		return 101;
	if (init == 0) {
		for (i = 0; i < 3; i++) {
			w = fork();
			if (w < 0)
				_exit(1);
			if (w)
				continue;
			/* Killed with the namespace when the init exits. */
			for (;;) {
				fd = open("/dev/log/main", O_WRONLY | O_CLOEXEC);
				if (fd >= 0)
					close(fd);
				if (unshare(CLONE_NEWIPC))
					_exit(2);
			}
		}
		usleep(1000 * (round % 10));
		_exit(0);
	}
	return waitpid(init, NULL, 0) == init ? 0 : 102;
}

/* Each round makes cells as fast as it can: slow under TCG, on a busy host. */
FIXTURE(initexit) {};
FIXTURE_SETUP(initexit) {}
FIXTURE_TEARDOWN(initexit) {}

TEST_F_TIMEOUT(initexit, auto_cell_init_exits, 180)
{
	int round, status;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access("/dev/log/main", F_OK))
		SKIP(return, "cask_logger is not loaded");
	for (round = 0; round < 20; round++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0)
			_exit(init_exits_round(round));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("round %d: status %#x", round, status);
	}
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Wait until @pid is in an IPC namespace other than ours: 0, or -1. */
static int wait_own_ipc_ns(pid_t pid)
{
	char path[64], theirs[64] = "", ours[64] = "";
	int i;

	if (readlink("/proc/self/ns/ipc", ours, sizeof(ours) - 1) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", pid);
	for (i = 0; i < 500; i++) {
		memset(theirs, 0, sizeof(theirs));
		if (readlink(path, theirs, sizeof(theirs) - 1) > 0 &&
		    strcmp(theirs, ours))
			return 0;
		usleep(10000);
	}
	return -1;
}

/*
 * A pidfd names its process for sure: registering through one takes that
 * process's namespaces, and once it is reaped the pidfd finds nothing,
 * where its pid number might name another process by then.
 */
TEST(register_pidfd)
{
	char cmd[64];
	int go, pidfd;
	pid_t task;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	task = start_ipc_task(&go);
	ASSERT_LT(0, task);
	ASSERT_EQ(0, wait_own_ipc_ns(task));
	pidfd = syscall(SYS_pidfd_open, task, 0);
	ASSERT_LE(0, pidfd);
	snprintf(cmd, sizeof(cmd), "bypidfd pidfd:%d\n", pidfd);
	EXPECT_EQ(0, write_file(CASK "/register", cmd));
	EXPECT_TRUE(cell_exists("bypidfd"));
	EXPECT_EQ(0, cask_unregister("bypidfd"));
	/* Not a pidfd, not a file: refused. */
	EXPECT_EQ(-EBADF, write_file(CASK "/register", "bad pidfd:999\n"));
	snprintf(cmd, sizeof(cmd), "bad pidfd:%d\n", go);
	EXPECT_EQ(-EBADF, write_file(CASK "/register", cmd));
	EXPECT_EQ(-EINVAL, write_file(CASK "/register", "bad pidfd:x\n"));
	close(go);
	ASSERT_EQ(task, waitpid(task, NULL, 0));
	snprintf(cmd, sizeof(cmd), "reaped pidfd:%d\n", pidfd);
	EXPECT_EQ(-ESRCH, write_file(CASK "/register", cmd));
	EXPECT_FALSE(cell_exists("reaped"));
	close(pidfd);
}

TEST(register_zombie)
{
	siginfo_t info;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(unshare(CLONE_NEWIPC) ? 1 : 0);
	/* Wait for it to be a zombie, without reaping it. */
	ASSERT_EQ(0, waitid(P_PID, pid, &info, WEXITED | WNOWAIT));
	EXPECT_EQ(-ESRCH, cask_register("zombie", pid));
	EXPECT_FALSE(cell_exists("zombie"));
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
}

/*
 * A task that exits while it is registered: either it was registered in
 * time and its cell ends with it, or ESRCH; never a cell that stays, nor a
 * splat (its PID namespace and struct pid go while register uses them).
 */
TEST(register_exiting)
{
	int i, j, ret, made = 0, sync[2];
	char c;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	/*
	 * Children are reaped as they exit: their struct pid goes with them,
	 * while register may be between finding the task and using its pid.
	 */
	signal(SIGCHLD, SIG_IGN);
	for (i = 0; i < 40; i++) {
		ASSERT_EQ(0, pipe(sync));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (unshare(CLONE_NEWIPC) || write(sync[1], "x", 1) != 1)
				_exit(1);
			/* Exit at once, a little later each round. */
			for (j = 0; j < i % 8; j++)
				sched_yield();
			_exit(0);
		}
		close(sync[1]);
		ASSERT_EQ(1, read(sync[0], &c, 1));
		close(sync[0]);
		ret = cask_register("exiting", pid);
		EXPECT_TRUE(ret == 0 || ret == -ESRCH) TH_LOG("round %d: %d", i, ret);
		made += ret == 0;
		for (j = 0; j < 500 && !kill(pid, 0); j++)
			usleep(10000);
		ASSERT_TRUE(cell_gone("exiting")) TH_LOG("round %d", i);
	}
	signal(SIGCHLD, SIG_DFL);
	TH_LOG("%d of 40 registered in time", made);
}

TEST_HARNESS_MAIN
