/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the cask selftests: small file I/O, the cells in
 * /sys/kernel/cask, and "containers".
 *
 * A "container" here is a child that unshares user, IPC, mount and PID
 * namespaces, is mapped to an unprivileged range of host uids (or, with
 * CONTAINER_NO_USERNS, stays the host's root without a user namespace),
 * and forks its init. The init runs test functions on request, each in a
 * fresh child, so a check can be made from inside any container.
 *
 * The functions run in forks of the test process: pointers into memory
 * that existed when the container was started stay valid, but what the
 * test writes after container_start() is not seen by the container, and
 * what a function writes is not seen by the test, except through memory
 * shared before the start (shared_alloc()). The exit status of the
 * function (0-255) is what container_run() returns.
 */
#ifndef CASK_UTIL_H
#define CASK_UTIL_H

/*
 * kselftest_harness.h stops a case after 30 s. On a loaded two-core host
 * under TCG, cases that take 5 s on their own took more than that
 * (Documentation/dev/testing.rst, "Time limits"), so a slow host turned
 * them red. A hung program is caught by its own limit in the guest
 * (tools/qemu/limits); a case here gets 120 s unless it names its own
 * (TEST_F_TIMEOUT). The harness's cases pick the value up where they are
 * defined, after this header.
 */
#ifdef TEST_TIMEOUT_DEFAULT
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 120
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

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

/*
 * A child in an IPC namespace of its own, to register as a cell; it exits
 * when *@go is closed. Its pid, or -1.
 */
static inline pid_t start_ipc_task(int *go)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (unshare(CLONE_NEWIPC))
			_exit(1);
		if (read(p[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(p[0]);
	if (pid < 0)
		close(p[1]);
	else
		*go = p[1];
	return pid;
}

/* Write a whole string to a file; 0 or -errno (of open or of write). */
static inline int write_file(const char *path, const char *s)
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

/*
 * finit_module() of /lib/modules/cask/NAME.ko (the guest's copy) with the
 * parameters @args ("name=value ..."): 0 or -errno.
 */
static inline int cask_module_load_args(const char *name, const char *args)
{
	char path[PATH_MAX];
	int fd, ret;

	snprintf(path, sizeof(path), "/lib/modules/cask/%s.ko", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, args, 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* The same without parameters. */
static inline int cask_module_load(const char *name)
{
	return cask_module_load_args(name, "");
}

/* Read a file's first line without the newline; 0 or -errno. */
static inline int read_file(const char *path, char *buf, size_t len)
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

static inline int cell_value(const char *cell, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), CASK "/cells/%s/%s", cell, file);
	return read_file(path, buf, len);
}

static inline bool cell_exists(const char *cell)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), CASK "/cells/%s", cell);
	return access(path, F_OK) == 0;
}

/* Cells go away from a workqueue: wait up to 10 s. */
static inline bool cell_gone(const char *cell)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (!cell_exists(cell))
			return true;
		usleep(50000);
	}
	return false;
}

static inline int cask_register(const char *name, pid_t pid)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "%s %d\n", name, pid);
	return write_file(CASK "/register", cmd);
}

static inline int cask_unregister(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "%s\n", name);
	return write_file(CASK "/unregister", cmd);
}

static inline unsigned long ns_inode(pid_t pid, const char *ns)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns);
	if (stat(path, &st))
		return 0;
	return st.st_ino;
}

static inline int write_id_maps(pid_t pid, unsigned int base)
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
static inline void __attribute__((noreturn)) container_init(int cmd, int res)
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

/* container_start()'s @uid_base for a container without a user namespace. */
#define CONTAINER_NO_USERNS	(~0U)

/*
 * Start a container in cgroup CGROOT/@cgroup (made here; "" for the
 * caller's), with root mapped to host uid @uid_base; or, for
 * CONTAINER_NO_USERNS, in the host's user namespace: plain root in new
 * IPC, mount and PID namespaces.
 */
static inline int container_start(struct container *c, const char *cgroup,
				  unsigned int uid_base)
{
	bool userns = uid_base != CONTAINER_NO_USERNS;
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
		if (unshare((userns ? CLONE_NEWUSER : 0) | CLONE_NEWIPC | CLONE_NEWNS |
			    CLONE_NEWPID))
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
	if (read(sync[0], buf, 1) != 1 ||
	    (userns && write_id_maps(c->middle, uid_base)) ||
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
static inline int container_run(struct container *c, container_fn fn, void *arg)
{
	struct container_req req = { .fn = fn, .arg = arg };
	int status;

	if (write(c->cmd, &req, sizeof(req)) != sizeof(req))
		return -1;
	if (read(c->res, &status, sizeof(status)) != sizeof(status))
		return -1;
	return status;
}

static inline void container_stop(struct container *c)
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

/*
 * Make the calling process a task of container @c: its IPC namespace and,
 * for a container with a user namespace (@userns), that namespace as its
 * root, which leaves no capability in the host's. Both are opened before
 * either is entered: once inside the user namespace, the init's /proc
 * files are out of reach. 0 or -errno.
 */
static inline int container_enter(const struct container *c, bool userns)
{
	char path[64];
	int ipc, user = -1, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", c->init);
	ipc = open(path, O_RDONLY | O_CLOEXEC);
	if (ipc < 0)
		return -errno;
	if (userns) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", c->init);
		user = open(path, O_RDONLY | O_CLOEXEC);
		if (user < 0 || setns(user, CLONE_NEWUSER))
			ret = -errno;
	}
	if (!ret && setns(ipc, CLONE_NEWIPC))
		ret = -errno;
	if (!ret && userns &&
	    (setresgid(0, 0, 0) || setgroups(0, NULL) || setresuid(0, 0, 0)))
		ret = -errno;
	if (user >= 0)
		close(user);
	close(ipc);
	return ret;
}

/* Exit status of @pid as a small int: exit code, or 128 + signal. */
static inline int child_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* Send @fd over the unix socket @sock (SCM_RIGHTS). 0 or -errno. */
static inline int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = "f", .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

/* An fd sent with send_fd(), or -errno. */
static inline int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -errno ?: -EIO;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EBADMSG;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* memory.current of cgroup CGROOT/@cg, or -1. */
static inline long memory_current(const char *cg)
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), CGROOT "/%s/memory.current", cg);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

/* Move the calling process into cgroup CGROOT/@cg. 0 or -errno. */
static inline int join_cgroup(const char *cg)
{
	char path[PATH_MAX], buf[32];

	snprintf(path, sizeof(path), CGROOT "/%s/cgroup.procs", cg);
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	return write_file(path, buf);
}

/* How many cells /sys/kernel/cask/cells lists, or -errno. */
static inline int count_cells(void)
{
	struct dirent *d;
	int n = 0;
	DIR *dir;

	dir = opendir(CASK "/cells");
	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/* Why these tests cannot run here, or NULL. */
static inline const char *cask_missing(void)
{
	if (geteuid() != 0)
		return "needs root";
	if (access(CASK "/register", F_OK))
		return "cask_core is not loaded";
	return NULL;
}

/*
 * Zeroed memory shared with every process forked after this call, the
 * containers' functions included; NULL on failure.
 */
static inline void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static inline void shared_free(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

#endif /* CASK_UTIL_H */
