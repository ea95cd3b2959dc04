// SPDX-License-Identifier: GPL-2.0
/*
 * cask cells from user space: /sys/kernel/cask/{register,unregister,
 * auto_cells,self,cells/NAME/...} with real containers made of namespaces
 * and cgroup v2 directories, and what a container may not do.
 *
 * A "container" here is a child that unshares user, IPC, mount and PID
 * namespaces, is mapped to an unprivileged range of host uids, and forks
 * its init. The init runs test functions on request, each in a fresh
 * child, so a check can be made from inside any container.
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
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#define CASK "/sys/kernel/cask"
#define CGROOT "/sys/fs/cgroup"

struct container {
	pid_t middle;		/* the unsharing child, host pid */
	pid_t init;		/* the container's pid 1, host pid */
	int cmd;		/* write end: function pointers to run */
	int res;		/* read end: their exit status */
	char cgroup[64];	/* name below CGROOT, or "" */
};

typedef int (*container_fn)(void *arg);

struct container_req {
	container_fn fn;
	void *arg;
};

/* Write a whole string to a file; 0 or -errno (of open or of write). */
static int write_file(const char *path, const char *s)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		err = -errno;
	else if ((size_t)n != strlen(s))
		err = -EIO;
	close(fd);
	return err;
}

/* Read a file's first line without the newline; 0 or -errno. */
static int read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int cell_value(const char *cell, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), CASK "/cells/%s/%s", cell, file);
	return read_file(path, buf, len);
}

static bool cell_exists(const char *cell)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), CASK "/cells/%s", cell);
	return access(path, F_OK) == 0;
}

/* Cells go away from a workqueue: wait up to 10 s. */
static bool cell_gone(const char *cell)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (!cell_exists(cell))
			return true;
		usleep(50000);
	}
	return false;
}

static int cask_register(const char *name, pid_t pid)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "%s %d\n", name, pid);
	return write_file(CASK "/register", cmd);
}

static int cask_unregister(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "%s\n", name);
	return write_file(CASK "/unregister", cmd);
}

static unsigned long ns_inode(pid_t pid, const char *ns)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns);
	if (stat(path, &st))
		return 0;
	return st.st_ino;
}

static int write_id_maps(pid_t pid, unsigned int base)
{
	char path[64], map[64];
	int ret;

	snprintf(map, sizeof(map), "0 %u 65536\n", base);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	ret = write_file(path, map);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	return write_file(path, map);
}

/* The container's init: run each requested function in a fresh child. */
static void __attribute__((noreturn)) container_init(int cmd, int res)
{
	struct container_req req;
	int status;
	pid_t pid;

	while (read(cmd, &req, sizeof(req)) == sizeof(req)) {
		pid = fork();
		if (pid == 0)
			_exit(req.fn(req.arg));
		status = -1;
		if (pid > 0 && waitpid(pid, &status, 0) == pid)
			status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		if (write(res, &status, sizeof(status)) != sizeof(status))
			break;
	}
	_exit(0);
}

/*
 * Start a container in cgroup CGROOT/@cgroup (made here; "" for the
 * caller's), with root mapped to host uid @uid_base.
 */
static int container_start(struct container *c, const char *cgroup,
			   unsigned int uid_base)
{
	int cmd[2], res[2], sync[2];
	char path[PATH_MAX], buf[32];
	pid_t init = 0;

	memset(c, 0, sizeof(*c));
	if (*cgroup) {
		snprintf(c->cgroup, sizeof(c->cgroup), "%s", cgroup);
		snprintf(path, sizeof(path), CGROOT "/%s", cgroup);
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
	}
	if (pipe2(cmd, O_CLOEXEC) || pipe2(res, O_CLOEXEC) || pipe(sync))
		return -errno;

	c->middle = fork();
	if (c->middle < 0)
		return -errno;
	if (c->middle == 0) {
		char go;
		int fd;

		/*
		 * Keep only our ends of our pipes: an inherited write end of
		 * another container's command pipe would keep that one alive.
		 */
		for (fd = 3; fd < 1024; fd++)
			if (fd != cmd[0] && fd != res[1] && fd != sync[1])
				close(fd);
		if (*cgroup) {
			snprintf(path, sizeof(path), CGROOT "/%s/cgroup.procs", cgroup);
			snprintf(buf, sizeof(buf), "%d\n", getpid());
			if (write_file(path, buf))
				_exit(1);
		}
		if (unshare(CLONE_NEWUSER | CLONE_NEWIPC | CLONE_NEWNS | CLONE_NEWPID))
			_exit(2);
		/* Tell the parent to write our id maps, wait until it has. */
		if (write(sync[1], "u", 1) != 1 || read(cmd[0], &go, 1) != 1)
			_exit(3);
		if (setresgid(0, 0, 0) || setgroups(0, NULL) || setresuid(0, 0, 0))
			_exit(4);
		init = fork();
		if (init == 0)
			container_init(cmd[0], res[1]);
		if (init < 0 || write(sync[1], &init, sizeof(init)) != sizeof(init))
			_exit(5);
		close(cmd[0]);
		close(res[1]);
		waitpid(init, NULL, 0);
		_exit(0);
	}

	close(cmd[0]);
	close(res[1]);
	close(sync[1]);
	c->cmd = cmd[1];
	c->res = res[0];
	if (read(sync[0], buf, 1) != 1 || write_id_maps(c->middle, uid_base) ||
	    write(c->cmd, "g", 1) != 1 ||
	    read(sync[0], &init, sizeof(init)) != sizeof(init)) {
		close(sync[0]);
		return -ECHILD;
	}
	close(sync[0]);
	c->init = init;
	return 0;
}

/* Run @fn(@arg) inside the container; its exit status, or -1. */
static int container_run(struct container *c, container_fn fn, void *arg)
{
	struct container_req req = { .fn = fn, .arg = arg };
	int status;

	if (write(c->cmd, &req, sizeof(req)) != sizeof(req))
		return -1;
	if (read(c->res, &status, sizeof(status)) != sizeof(status))
		return -1;
	return status;
}

static void container_stop(struct container *c)
{
	char path[PATH_MAX];

	if (c->middle <= 0)
		return;
	close(c->cmd);
	close(c->res);
	waitpid(c->middle, NULL, 0);
	c->middle = 0;
	if (*c->cgroup) {
		snprintf(path, sizeof(path), CGROOT "/%s", c->cgroup);
		rmdir(path);
	}
}

/* Why these tests cannot run here, or NULL. */
static const char *cask_missing(void)
{
	if (geteuid() != 0)
		return "needs root";
	if (access(CASK "/register", F_OK))
		return "cask_core is not loaded";
	return NULL;
}

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

TEST_F(two, exit_unregisters)
{
	ASSERT_EQ(0, cask_register("cella", self->a.init));
	ASSERT_EQ(0, cask_register("cellb", self->b.init));
	container_stop(&self->a);
	EXPECT_TRUE(cell_gone("cella"));
	EXPECT_TRUE(cell_exists("cellb"));
	EXPECT_EQ(-ENOENT, cask_unregister("cella"));
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

TEST_HARNESS_MAIN
