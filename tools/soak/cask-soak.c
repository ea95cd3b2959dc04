// SPDX-License-Identifier: GPL-2.0
/*
 * cask-soak: the guest-side worker of `make soak` (tools/qemu/soak.sh).
 * Processes are expensive under TCG (a fork costs milliseconds), so each
 * mode does its work in one long-lived process.
 *
 * Common options, before the mode: -n PID enters PID's IPC and mount
 * namespaces (a container's: its cell; for use its PID namespace too), -g CGROUP moves us into that
 * cgroup directory first, so that the cell's memory is charged where the
 * soak measures it.
 *
 *   cask-soak [-n PID] [-g CGROUP] use
 *	Use every driver once from the cell we are in: a binder ping-pong
 *	with a context manager (a child),
 *	ashmem map/pin/unpin, a logger write read back, a wake lock taken
 *	and dropped, the lmk levels written and read back. Exit 0 if every
 *	step worked.
 *
 *   cask-soak churn -n CELLS
 *	Make and destroy CELLS cells one after another, alternately auto (a
 *	child in an IPC namespace of its own opens a device, by turns the
 *	logger, binder and ashmem, and exits) and registered (a child in a
 *	new IPC namespace is registered, opens a device, is unregistered
 *	with the file still open, closes and exits). An auto cell refused
 *	with ENOSPC (the cells of exited namespaces are released after an
 *	RCU grace period, so the limits can be reached by a fast loop) is
 *	retried after 10 ms and counted. Prints the counts; exit 0 if no
 *	cell failed.
 *
 *   cask-soak [-n PID] [-g CGROUP] traffic [-b] [-a] [-l] [-t SECONDS] [-r RATE]
 *	Traffic at full rate in the current cell, one thread per driver:
 *	binder calls to a context manager (a child), ashmem regions
 *	made/mapped/written/unpinned/pinned/closed, logger writes read back
 *	by a reader; at most RATE operations a second each (about: a sleep
 *	of 1/RATE s after each), else as fast as they go. For SECONDS (0:
 *	until SIGTERM or SIGINT). Prints the
 *	operations and errors per driver; exit 0 if no operation failed and
 *	every driver made some.
 *
 *   cask-soak fill [-m MIB]
 *	Pass MIB (128) MiB of kmalloc'ed objects through KASAN's quarantine,
 *	so that it is full when the soak reads the slab figures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/android/binder.h>
#include <linux/android_logger.h>
#include <linux/ashmem.h>

#define BINDER_DEV	"/dev/binder"
#define ASHMEM_DEV	"/dev/ashmem"
#define LOG_DEV		"/dev/log/main"
#define CASK		"/sys/kernel/cask"
#define MAP_BYTES	(128 * 1024)
#define CALL_CODE	0x736f616b	/* "soak" */
#define PAYLOAD		64
#define ASHMEM_BYTES	(64 * 1024)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *me = "cask-soak";
static atomic_bool stop;

static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", me);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	return 0;
}

/* ---- binder ------------------------------------------------------------ */

struct cmdbuf {
	size_t len;
	unsigned char b[256];
};

static void put_cmd(struct cmdbuf *w, uint32_t cmd, const void *arg, size_t n)
{
	memcpy(w->b + w->len, &cmd, sizeof(cmd));
	w->len += sizeof(cmd);
	if (n)
		memcpy(w->b + w->len, arg, n);
	w->len += n;
}

static int bwr(int fd, struct cmdbuf *w, void *rbuf, size_t rsize, size_t *rdone)
{
	struct binder_write_read b = {
		.write_size = w ? w->len : 0,
		.write_buffer = w ? (uintptr_t)w->b : 0,
		.read_size = rsize,
		.read_buffer = (uintptr_t)rbuf,
	};

	/* The driver resumes at write_consumed and read_consumed. */
	while (ioctl(fd, BINDER_WRITE_READ, &b) < 0)
		if (errno != EINTR || atomic_load(&stop))
			return -errno;
	if (b.write_consumed != b.write_size)
		return -EPROTO;
	if (w)
		w->len = 0;
	if (rdone)
		*rdone = b.read_consumed;
	return 0;
}

static int binder_open(void)
{
	int fd = open(BINDER_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (mmap(NULL, MAP_BYTES, PROT_READ, MAP_PRIVATE | MAP_NORESERVE, fd, 0) ==
	    MAP_FAILED) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * The context manager, in a child: answers every call until its parent
 * dies or kills it. Writes one byte to @ready once it can be called.
 */
static void __attribute__((noreturn)) binder_server(int ready)
{
	static unsigned char reply[PAYLOAD];
	binder_uintptr_t free_after = 0;
	struct binder_transaction_data tr, rtr;
	struct cmdbuf w = { 0 };
	uint32_t rb[64], cmd;
	size_t off, got;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = binder_open();
	if (fd < 0) {
		say("binder server: open/mmap %s: %s", BINDER_DEV, strerror(-fd));
		_exit(1);
	}
	if (ioctl(fd, BINDER_SET_CONTEXT_MGR, 0) < 0) {
		say("binder server: BINDER_SET_CONTEXT_MGR: %s", strerror(errno));
		_exit(1);
	}
	put_cmd(&w, BC_ENTER_LOOPER, NULL, 0);
	if (bwr(fd, &w, NULL, 0, NULL) || write(ready, "K", 1) != 1)
		_exit(1);
	close(ready);
	for (;;) {
		if (bwr(fd, &w, rb, sizeof(rb), &got)) {
			say("binder server: BINDER_WRITE_READ: %s", strerror(errno));
			_exit(1);
		}
		for (off = 0; off + sizeof(cmd) <= got; off += sizeof(cmd) + _IOC_SIZE(cmd)) {
			memcpy(&cmd, (char *)rb + off, sizeof(cmd));
			switch (cmd) {
			case BR_NOOP:
			case BR_SPAWN_LOOPER:
			case BR_FAILED_REPLY:
			case BR_DEAD_REPLY:
				break;
			case BR_TRANSACTION_COMPLETE:
				/* Of our reply: free the request with the next read. */
				if (free_after)
					put_cmd(&w, BC_FREE_BUFFER, &free_after,
						sizeof(free_after));
				free_after = 0;
				break;
			case BR_TRANSACTION:
				memcpy(&tr, (char *)rb + off + sizeof(cmd), sizeof(tr));
				if (tr.flags & TF_ONE_WAY) {
					put_cmd(&w, BC_FREE_BUFFER, &tr.data.ptr.buffer,
						sizeof(tr.data.ptr.buffer));
					break;
				}
				memset(&rtr, 0, sizeof(rtr));
				rtr.code = tr.code;
				rtr.data_size = tr.data_size;
				rtr.data.ptr.buffer = (uintptr_t)reply;
				put_cmd(&w, BC_REPLY, &rtr, sizeof(rtr));
				free_after = tr.data.ptr.buffer;
				break;
			default:
				say("binder server: unexpected return %#x", cmd);
				_exit(1);
			}
		}
	}
}

/* Fork the context manager; its pid, or -1. */
static pid_t binder_server_start(void)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		binder_server(p[1]);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1) {
		close(p[0]);
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return -1;
	}
	close(p[0]);
	return pid;
}

struct client {
	int fd;
	binder_uintptr_t pending_free;
};

/* One call to handle 0 and its reply: 0 or -errno. */
static int binder_call(struct client *cl)
{
	static const unsigned char payload[PAYLOAD] = { 's', 'o', 'a', 'k' };
	struct binder_transaction_data tr = {
		.target.handle = 0,
		.code = CALL_CODE,
		.data_size = sizeof(payload),
		.data.ptr.buffer = (uintptr_t)payload,
	};
	struct cmdbuf w = { 0 }, *wp = &w;
	uint32_t rb[64], cmd;
	size_t n, off;
	int ret;

	if (cl->pending_free) {
		put_cmd(&w, BC_FREE_BUFFER, &cl->pending_free, sizeof(cl->pending_free));
		cl->pending_free = 0;
	}
	put_cmd(&w, BC_TRANSACTION, &tr, sizeof(tr));
	for (;;) {
		ret = bwr(cl->fd, wp, rb, sizeof(rb), &n);
		wp = NULL;
		if (ret)
			return ret;
		for (off = 0; off + sizeof(cmd) <= n; off += sizeof(cmd) + _IOC_SIZE(cmd)) {
			memcpy(&cmd, (char *)rb + off, sizeof(cmd));
			switch (cmd) {
			case BR_NOOP:
			case BR_TRANSACTION_COMPLETE:
				break;
			case BR_DEAD_REPLY:
			case BR_FAILED_REPLY:
				return -EPIPE;
			case BR_REPLY:
				memcpy(&tr, (char *)rb + off + sizeof(cmd), sizeof(tr));
				cl->pending_free = tr.data.ptr.buffer;
				if (tr.flags & TF_STATUS_CODE || tr.data_size != PAYLOAD)
					return -EPROTO;
				return 0;
			default:
				say("binder: unexpected return %#x", cmd);
				return -EPROTO;
			}
		}
	}
}

static void binder_release(struct client *cl)
{
	struct cmdbuf w = { 0 };

	if (!cl->pending_free)
		return;
	put_cmd(&w, BC_FREE_BUFFER, &cl->pending_free, sizeof(cl->pending_free));
	cl->pending_free = 0;
	bwr(cl->fd, &w, NULL, 0, NULL);
}

/* ---- ashmem ------------------------------------------------------------ */

/* One region's life: 0 or -errno (@what says which step failed). */
static int ashmem_cycle(const char **what)
{
	struct ashmem_pin pin = { .offset = 0, .len = 0 };
	char name[ASHMEM_NAME_LEN] = "cask-soak";
	unsigned char *p;
	int fd, ret = 0;
	size_t i;

	*what = "open";
	fd = open(ASHMEM_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*what = "ASHMEM_SET_NAME";
	if (ioctl(fd, ASHMEM_SET_NAME, name) < 0)
		goto err;
	*what = "ASHMEM_SET_SIZE";
	if (ioctl(fd, ASHMEM_SET_SIZE, (size_t)ASHMEM_BYTES) < 0)
		goto err;
	*what = "mmap";
	p = mmap(NULL, ASHMEM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto err;
	for (i = 0; i < ASHMEM_BYTES; i += 4096)
		p[i] = (unsigned char)i | 1;
	*what = "ASHMEM_UNPIN";
	if (ioctl(fd, ASHMEM_UNPIN, &pin) < 0)
		goto unmap;
	*what = "ASHMEM_PIN";
	ret = ioctl(fd, ASHMEM_PIN, &pin);
	if (ret < 0)
		goto unmap;
	/* Purged under pressure is legal; else the data must be there. */
	*what = "data after PIN";
	if (ret == ASHMEM_NOT_PURGED && p[4096] != 1) {
		munmap(p, ASHMEM_BYTES);
		close(fd);
		return -EIO;
	}
	*what = "munmap";
	if (munmap(p, ASHMEM_BYTES))
		goto err;
	close(fd);
	return 0;
unmap:
	ret = -errno;
	munmap(p, ASHMEM_BYTES);
	close(fd);
	return ret;
err:
	ret = -errno;
	close(fd);
	return ret;
}

/* ---- logger ------------------------------------------------------------ */

static int log_write(int fd, const char *tag, const char *msg)
{
	unsigned char prio = 4;
	struct iovec iov[3] = {
		{ &prio, 1 },
		{ (void *)tag, strlen(tag) + 1 },
		{ (void *)msg, strlen(msg) + 1 },
	};

	return writev(fd, iov, 3) < 0 ? -errno : 0;
}

/*
 * Read entries from the non-blocking reader @fd until one carries @msg:
 * 0, -ENOENT if the ring ran dry first, or -errno.
 */
static int log_find(int fd, const char *msg)
{
	static char buf[LOGGER_ENTRY_MAX_LEN + 1];
	struct logger_entry *e = (void *)buf;
	size_t ml = strlen(msg) + 1;
	ssize_t n;

	for (;;) {
		n = read(fd, buf, LOGGER_ENTRY_MAX_LEN);
		if (n < 0)
			return errno == EAGAIN ? -ENOENT : -errno;
		if ((size_t)n < sizeof(*e) || e->hdr_size != sizeof(*e))
			return -EPROTO;
		if (e->len >= ml && !memcmp(buf + e->hdr_size + e->len - ml, msg, ml))
			return 0;
	}
}

static int log_reader(void)
{
	int v = 2, fd = open(LOG_DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, LOGGER_SET_VERSION, &v) < 0) {
		v = -errno;
		close(fd);
		return v;
	}
	return fd;
}

/* ---- use --------------------------------------------------------------- */

static int step(const char *what, int err)
{
	if (err)
		say("use: %s: %s", what, strerror(err < 0 ? -err : err));
	return err ? 1 : 0;
}

static int cell_file(char *path, size_t len, const char *rel)
{
	char self[64];
	int err = read_str(CASK "/self", self, sizeof(self));

	if (err)
		return err;
	snprintf(path, len, CASK "/cells/%s/%s", self, rel);
	return 0;
}

static int write_cell(const char *rel, const char *val, bool check)
{
	char path[256], got[128];
	int err = cell_file(path, sizeof(path), rel);

	if (!err)
		err = write_str(path, val);
	if (!err && check) {
		err = read_str(path, got, sizeof(got));
		if (!err && strcmp(got, val))
			err = -EIO;
	}
	return err;
}

static int do_use(void)
{
	struct client cl = { 0 };
	char msg[64], path[256], buf[512];
	const char *what;
	int fails = 0, i, rfd, wfd, err;
	pid_t srv;

	/* binder: a context manager and ten calls to it */
	srv = binder_server_start();
	fails += step("binder context manager", srv < 0 ? -EIO : 0);
	if (srv > 0) {
		cl.fd = binder_open();
		fails += step("binder open", cl.fd < 0 ? cl.fd : 0);
		for (i = 0; cl.fd >= 0 && i < 10; i++)
			if (step("binder call", binder_call(&cl))) {
				fails++;
				break;
			}
		if (cl.fd >= 0) {
			binder_release(&cl);
			close(cl.fd);
		}
		kill(srv, SIGKILL);
		waitpid(srv, NULL, 0);
	}

	/* ashmem */
	err = ashmem_cycle(&what);
	if (err) {
		say("use: ashmem %s", what);
		fails += step("ashmem", err);
	}

	/* logger: a write, read back */
	snprintf(msg, sizeof(msg), "soak %d %.0f", getpid(), now_s() * 1e6);
	rfd = log_reader();
	fails += step("logger reader", rfd < 0 ? rfd : 0);
	wfd = open(LOG_DEV, O_WRONLY | O_CLOEXEC);
	fails += step("logger writer", wfd < 0 ? -errno : 0);
	if (rfd >= 0 && wfd >= 0) {
		fails += step("logger write", log_write(wfd, "cask-soak", msg));
		fails += step("logger read back", log_find(rfd, msg));
	}
	if (rfd >= 0)
		close(rfd);
	if (wfd >= 0)
		close(wfd);

	/* power: a wake lock taken, seen, dropped */
	fails += step("wake_lock", write_cell("power/wake_lock", "cask-soak", false));
	err = cell_file(path, sizeof(path), "power/wake_lock");
	if (!err)
		err = read_str(path, buf, sizeof(buf));
	if (!err && !strstr(buf, "cask-soak"))
		err = -ENOENT;
	fails += step("wake_lock listed", err);
	fails += step("wake_unlock", write_cell("power/wake_unlock", "cask-soak", false));

	/* lmk: the cell's levels written and read back */
	fails += step("lmk minfree", write_cell("lmk/minfree", "1024,2048,4096", true));
	fails += step("lmk adj", write_cell("lmk/adj", "0,100,900", true));
	return fails ? 1 : 0;
}

/*
 * Enter PID's IPC and mount namespaces, and with @pidns its PID namespace
 * (for our children: a thread cannot be made then, clone() refuses
 * CLONE_THREAD across PID namespaces).
 */
static int enter_ns(pid_t pid, bool pidns)
{
	static const char *const ns[] = { "ipc", "mnt", "pid" };
	char path[64];
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(ns) - !pidns; i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, 0)) {
			say("setns %s: %s", path, strerror(errno));
			return -1;
		}
		close(fd);
	}
	return 0;
}

static int cmd_use(void)
{
	pid_t child;
	int st;

	alarm(120);
	/* A child, so that it is in the PID namespace of -n's process too. */
	child = fork();
	if (child == 0)
		_exit(do_use());
	if (child < 0 || waitpid(child, &st, 0) != child)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* ---- churn ------------------------------------------------------------- */

/* Open the device of turn @i and use it a little: the cell's first use. */
static int use_device(int i)
{
	const char *what;
	int fd;

	switch (i % 3) {
	case 0:
		fd = open(LOG_DEV, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (log_write(fd, "cask-soak", "churn")) {
			close(fd);
			return -errno;
		}
		return fd;
	case 1:
		return binder_open();
	default:
		fd = ashmem_cycle(&what);
		if (fd)
			return fd;
		fd = open(ASHMEM_DEV, O_RDWR | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
}

static long auto_refused, auto_made, reg_made, failed;

static int churn_auto(int i)
{
	pid_t pid;
	int st;

	for (;;) {
		pid = fork();
		if (pid == 0) {
			int fd;

			if (unshare(CLONE_NEWIPC))
				_exit(3);
			fd = use_device(i);
			_exit(fd == -ENOSPC ? 4 : fd < 0 ? 5 : 0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
			return -1;
		if (WEXITSTATUS(st) != 4)
			break;
		auto_refused++;
		usleep(10000);
	}
	if (WEXITSTATUS(st)) {
		say("churn: auto cell %d: %s", i,
		    WEXITSTATUS(st) == 3 ? "unshare" : "device failed");
		return -1;
	}
	auto_made++;
	return 0;
}

static int churn_registered(int i)
{
	int go[2], done[2], err = 0;
	char line[96], name[48], c;
	pid_t pid;
	int st;

	if (pipe2(go, O_CLOEXEC) || pipe2(done, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		close(done[0]);
		if (unshare(CLONE_NEWIPC))
			_exit(3);
		/* ready to be registered */
		if (write(done[1], "R", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(6);
		fd = use_device(i);
		if (fd < 0)
			_exit(5);
		/* used; wait for the unregister with the file open */
		if (write(done[1], "U", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(6);
		close(fd);
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	snprintf(name, sizeof(name), "soak-r%d", i);
	if (pid < 0 || read(done[0], &c, 1) != 1) {
		err = -1;
		goto out;
	}
	snprintf(line, sizeof(line), "%s %d", name, pid);
	err = write_str(CASK "/register", line);
	if (err) {
		say("churn: register %s: %s", line, strerror(-err));
		goto out;
	}
	if (write(go[1], "G", 1) != 1 || read(done[0], &c, 1) != 1) {
		err = -1;
		goto out;
	}
	err = write_str(CASK "/unregister", name);
	if (err)
		say("churn: unregister %s: %s", name, strerror(-err));
	if (write(go[1], "G", 1) != 1)
		err = -1;
out:
	close(go[1]);
	close(done[0]);
	if (pid > 0) {
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			if (!err)
				say("churn: registered cell %d: child failed", i);
			err = -1;
		}
	}
	if (!err)
		reg_made++;
	return err;
}

static int cmd_churn(int argc, char **argv)
{
	long n = 10000, i;
	int opt, kmsg;
	double t0;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		switch (opt) {
		case 'n':
			n = atol(optarg);
			break;
		default:
			return 2;
		}
	}
	t0 = now_s();
	kmsg = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	for (i = 0; i < n; i++) {
		int err = (i / 3) % 2 ? churn_registered(i) : churn_auto(i);

		/* Progress on the console: where a hang happened. */
		if (kmsg >= 0 && n >= 10 && (i + 1) % (n / 10) == 0)
			dprintf(kmsg, "cask-soak: churn: %ld of %ld cells\n", i + 1, n);

		if (err && ++failed >= 10) {
			say("churn: stopping after 10 failures");
			break;
		}
	}
	if (kmsg >= 0)
		close(kmsg);
	printf("churn: %ld cells in %.1f s (%.2f ms each): %ld auto, %ld registered, "
	       "%ld failed, %ld auto refused with ENOSPC and retried\n",
	       auto_made + reg_made, now_s() - t0, (now_s() - t0) * 1e3 / (i ? i : 1),
	       auto_made, reg_made, failed, auto_refused);
	return failed ? 1 : 0;
}

/* ---- fill ------------------------------------------------------------- */

/*
 * Pass @mb MiB of datagrams through KASAN's quarantine: 2000 bytes each
 * (their skb heads are kmalloc'ed from kmalloc-4k with the skb's shared
 * info, freed on receipt, so the quarantine counts twice @mb) over a unix
 * socket pair. The quarantine holds freed objects back until it is
 * full (1/32 of memory); filling it before each measurement makes the
 * slab figures compare what is held rather than how full it was.
 */
static int cmd_fill(int argc, char **argv)
{
	static char buf[2000];
	long mb = 128, i, n;
	int sv[2], opt;

	while ((opt = getopt(argc, argv, "m:")) != -1) {
		switch (opt) {
		case 'm':
			mb = atol(optarg);
			break;
		default:
			return 2;
		}
	}
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return 1;
	n = mb * 1024 * 1024 / sizeof(buf);
	for (i = 0; i < n; i++) {
		if (send(sv[0], buf, sizeof(buf), 0) != sizeof(buf) ||
		    recv(sv[1], buf, sizeof(buf), 0) != sizeof(buf)) {
			say("fill: %s", strerror(errno));
			return 1;
		}
	}
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* ---- traffic ------------------------------------------------------------ */

struct counter {
	const char *name;
	atomic_long ops, errors;
	char first_error[128];
};

static struct counter c_binder = { .name = "binder" };
static struct counter c_ashmem = { .name = "ashmem" };
static struct counter c_logger = { .name = "logger" };

static void count_error(struct counter *c, const char *what, int err)
{
	if (atomic_fetch_add(&c->errors, 1) == 0)
		snprintf(c->first_error, sizeof(c->first_error), "%s: %s", what,
			 strerror(err < 0 ? -err : err));
}

static long rate;	/* -r: operations a second per driver, 0 for no limit */

/* After each operation: a thread's share of -r's rate. */
static void pace(void)
{
	if (rate)
		usleep(1000000 / rate);
}

static void *binder_thread(void *arg)
{
	struct client cl = { 0 };
	int err;

	(void)arg;
	cl.fd = binder_open();
	if (cl.fd < 0) {
		count_error(&c_binder, "open", cl.fd);
		return NULL;
	}
	while (!atomic_load(&stop)) {
		err = binder_call(&cl);
		if (err) {
			if (atomic_load(&stop))
				break;
			count_error(&c_binder, "call", err);
			usleep(100000);
			continue;
		}
		atomic_fetch_add(&c_binder.ops, 1);
		pace();
	}
	binder_release(&cl);
	close(cl.fd);
	return NULL;
}

static void *ashmem_thread(void *arg)
{
	const char *what;
	int err;

	(void)arg;
	while (!atomic_load(&stop)) {
		err = ashmem_cycle(&what);
		if (err) {
			count_error(&c_ashmem, what, err);
			usleep(100000);
			continue;
		}
		atomic_fetch_add(&c_ashmem.ops, 1);
		pace();
	}
	return NULL;
}

/*
 * One writer, one reader, long-lived: each write is read back before the
 * next (the reader sees every entry: the ring never overruns it).
 */
static void *logger_thread(void *arg)
{
	char msg[64];
	int rfd, wfd, err;
	long seq = 0;

	(void)arg;
	rfd = log_reader();
	wfd = open(LOG_DEV, O_WRONLY | O_CLOEXEC);
	if (rfd < 0 || wfd < 0) {
		count_error(&c_logger, "open", rfd < 0 ? rfd : -errno);
		return NULL;
	}
	while (!atomic_load(&stop)) {
		snprintf(msg, sizeof(msg), "traffic %d %ld", getpid(), seq++);
		err = log_write(wfd, "cask-soak", msg);
		if (!err)
			err = log_find(rfd, msg);
		if (err) {
			count_error(&c_logger, "write/read back", err);
			usleep(100000);
			continue;
		}
		atomic_fetch_add(&c_logger.ops, 1);
		pace();
	}
	close(rfd);
	close(wfd);
	return NULL;
}

static void on_stop(int sig)
{
	(void)sig;
	atomic_store(&stop, true);
}

static int cmd_traffic(int argc, char **argv)
{
	static void *(*const fns[])(void *) = { binder_thread, ashmem_thread, logger_thread };
	struct counter *cs[] = { &c_binder, &c_ashmem, &c_logger };
	bool on[3] = { false, false, false };
	struct sigaction sa = { .sa_handler = on_stop };
	pthread_t th[3];
	double secs = 0, t0, dt;
	pid_t srv = 0;
	char cell[64] = "?";
	long errors = 0;
	int opt, i;

	while ((opt = getopt(argc, argv, "balt:r:")) != -1) {
		switch (opt) {
		case 'b':
			on[0] = true;
			break;
		case 'a':
			on[1] = true;
			break;
		case 'l':
			on[2] = true;
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'r':
			rate = atol(optarg);
			break;
		default:
			return 2;
		}
	}
	read_str(CASK "/self", cell, sizeof(cell));
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* Forked before any thread: its death signal follows this thread. */
	if (on[0]) {
		srv = binder_server_start();
		if (srv < 0) {
			say("traffic: no binder context manager");
			return 1;
		}
	}
	t0 = now_s();
	for (i = 0; i < 3; i++)
		if (on[i] && pthread_create(&th[i], NULL, fns[i], NULL)) {
			say("traffic: pthread_create");
			return 1;
		}
	while (!atomic_load(&stop) && (!secs || now_s() - t0 < secs))
		usleep(100000);
	atomic_store(&stop, true);
	/* The server answers the last call; then it may go. */
	for (i = 0; i < 3; i++)
		if (on[i])
			pthread_join(th[i], NULL);
	if (srv > 0) {
		kill(srv, SIGKILL);
		waitpid(srv, NULL, 0);
	}
	dt = now_s() - t0;
	for (i = 0; i < 3; i++) {
		if (!on[i])
			continue;
		errors += atomic_load(&cs[i]->errors);
		/* Traffic that did nothing did not work either. */
		if (!atomic_load(&cs[i]->ops))
			errors++;
		printf("traffic %s %s: %ld ops in %.0f s (%.0f/s), %ld errors%s%s\n", cell,
		       cs[i]->name, atomic_load(&cs[i]->ops), dt,
		       atomic_load(&cs[i]->ops) / (dt > 0 ? dt : 1),
		       atomic_load(&cs[i]->errors), cs[i]->first_error[0] ? ", first: " : "",
		       cs[i]->first_error);
	}
	return errors ? 1 : 0;
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr, "usage: cask-soak [-n PID] [-g CGROUP] use\n"
		"       cask-soak churn -n CELLS\n"
		"       cask-soak [-n PID] [-g CGROUP] traffic [-b] [-a] [-l] [-t SECONDS] [-r RATE]\n"
		"       cask-soak fill [-m MIB]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *cg = NULL;
	char path[512];
	pid_t pid = 0;
	int opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* "+": stop at the mode; its options are its own. */
	while ((opt = getopt(argc, argv, "+n:g:")) != -1) {
		switch (opt) {
		case 'n':
			pid = atoi(optarg);
			break;
		case 'g':
			cg = optarg;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage();
	if (cg) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
		if (write_str(path, "0")) {
			say("cannot join the cgroup %s", cg);
			return 1;
		}
	}
	/* use forks its work; traffic makes threads. */
	if (pid && enter_ns(pid, !strcmp(argv[0], "use")))
		return 1;
	optind = 1;
	if (!strcmp(argv[0], "use"))
		return cmd_use();
	if (!strcmp(argv[0], "churn"))
		return cmd_churn(argc, argv);
	if (!strcmp(argv[0], "traffic"))
		return cmd_traffic(argc, argv);
	if (!strcmp(argv[0], "fill"))
		return cmd_fill(argc, argv);
	usage();
}
