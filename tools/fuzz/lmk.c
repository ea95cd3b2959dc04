// SPDX-License-Identifier: GPL-2.0
/*
 * cask-fuzz "lmk": the low-memory killer's level files written while
 * its cells are killing.
 *
 * Two registered cells live for the run, each in a cgroup of its own
 * with a memory limit (a: a user namespace and memory.max; b: no user
 * namespace, memory.high below memory.max): in each, its registered
 * process (oom_score_adj -1000, never a victim, which writes the cell's
 * files and reads its /proc/lowmemorykiller), a canary (adj 1000, the
 * best victim there is) and two hogs that allocate memory on request.
 * The host has a canary of its own, and an unprivileged user in a user
 * namespace of its own is an actor too.
 *
 * A sequence writes valid and malformed minfree, adj and enabled values
 * (the legacy params and the cells' files, as the host's root, as a
 * cell's root and unprivileged), makes the hogs allocate and free so
 * that the killers fire, reads the kill counters, last_kill, the event
 * files and the lmk_kill trace while kills are in flight, and now and
 * then ends a cell (its processes killed, or unregistered) while its
 * hogs allocate.
 *
 * Checks: every write's answer is the one a model of the lists' format
 * (lmkd's: at most 6 comma-separated decimal values, legacy oom_adj
 * converted) gives, and a list accepted reads back as the model prints
 * it; every process of ours that died unasked was killed by its own
 * cell's killer or its own cgroup's OOM killer (the counters say so), a
 * canary of another cell or of the host never dies for a cell's level;
 * last_kill, the events and the trace name only processes of the cell;
 * the host's levels, which stay harmless, never kill.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define CASK		"/sys/kernel/cask"
#define PARAMS		"/sys/module/lowmemorykiller/parameters/"
#define EVENTS		"/proc/lowmemorykiller"
#define CGROOT		"/sys/fs/cgroup"
#define TRACING		"/sys/kernel/tracing"
#define NCELLS		2
#define NHOGS		2
#define LIMIT_MIB	24
#define MIB		(1024L * 1024)
#define WAIT_MS		15000
#define RELOAD_WAIT_MS	60000		/* a module reloaded underneath, back */
#define HISTORY		64
#define LIST_LEN	64		/* LMK_LIST_LEN */
#define CG_CTL		"fzlmk-ctl"	/* no limit: the cells' inits */

/* ---- workers (as in power.c, plus memory and events) ---- */

enum { W_WRITE, W_READ, W_EXIT, W_ALLOC, W_FREE, W_EVENTS };

struct wreq {
	int op;
	long arg;
	char path[160];
	unsigned int len;
	char data[512];
};

struct wans {
	int ret;
	unsigned int len;
	char data[4096];
};

struct worker {
	pid_t pid;
	int sock;
	bool busy;
	struct wreq req;
	bool killed;		/* by us: its death needs no explanation */
};

static int do_write(const char *path, const char *data, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, data, len);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

static int do_read(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

static int write_str(const char *path, const char *s)
{
	int n = do_write(path, s, strlen(s));

	return n < 0 ? n : 0;
}

/* Every event an open /proc/lowmemorykiller has: "PID PID ..." in @out. */
static int read_events(int fd, char *out, size_t len)
{
	char buf[512], *end;
	size_t o = 0;
	ssize_t n;
	long pid;

	out[0] = '\0';
	if (fd < 0)
		return -EBADF;
	for (;;) {
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			return errno == EAGAIN ? (int)o : -errno;
		if (n == 0)
			return o;	/* the cell was unlinked */
		buf[n] = '\0';
		pid = strtol(buf, &end, 10);
		if (end == buf)
			return -EPROTO;
		if (o + 24 < len)
			o += snprintf(out + o, len - o, "%ld ", pid);
	}
}

/*
 * @events: open /proc/lowmemorykiller at the first W_EVENTS (once the
 * cell is registered: a task without a cell cannot open it).
 */
static void __attribute__((noreturn)) worker_serve(int sock, bool events)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int efd = -1, epfd = -1;
	static struct wreq req;
	static struct wans ans;
	char *mem = NULL;
	size_t mem_len = 0;
	ssize_t n;

	/* Its own KCOV: the kernel work of the requests is done here. */
	fz_cov_thread_start();
	for (;;) {
		n = recv(sock, &req, sizeof(req), 0);
		if (n <= 0 || req.op == W_EXIT)
			_exit(0);
		ans.len = 0;
		ans.ret = 0;
		switch (req.op) {
		case W_WRITE:
			ans.ret = do_write(req.path, req.data, req.len);
			break;
		case W_READ:
			ans.ret = do_read(req.path, ans.data, sizeof(ans.data));
			if (ans.ret > 0)
				ans.len = ans.ret + 1;
			break;
		case W_ALLOC:
			if (mem)
				munmap(mem, mem_len);
			mem_len = req.arg * MIB;
			/* Not malloc(): a block never read may be dropped. */
			mem = mmap(NULL, mem_len, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (mem == MAP_FAILED) {
				mem = NULL;
				ans.ret = -ENOMEM;
				break;
			}
			memset(mem, 0x5a, mem_len);
			break;
		case W_FREE:
			if (mem)
				munmap(mem, mem_len);
			mem = NULL;
			break;
		case W_EVENTS:
			if (efd < 0 && events) {
				efd = open(EVENTS, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
				/*
				 * Watched by epoll too, as lmkd does: the
				 * cell's end wakes it with POLLFREE semantics.
				 */
				if (efd >= 0) {
					epfd = epoll_create1(EPOLL_CLOEXEC);
					ev.data.fd = efd;
					if (epfd >= 0)
						epoll_ctl(epfd, EPOLL_CTL_ADD, efd, &ev);
				}
			}
			if (epfd >= 0)
				epoll_wait(epfd, &ev, 1, 0);
			ans.ret = efd < 0 ? -errno : read_events(efd, ans.data, sizeof(ans.data));
			/* lmkd holds it open; closed now and then, rmmod can go. */
			if (req.arg && efd >= 0) {
				if (req.arg > 1 && epfd >= 0)
					close(epfd);	/* epoll first */
				close(efd);
				if (epfd >= 0 && req.arg == 1)
					close(epfd);	/* the file first */
				efd = -1;
				epfd = -1;
			}
			if (ans.ret >= 0)
				ans.len = strlen(ans.data) + 1;
			break;
		default:
			ans.ret = -EOPNOTSUPP;
		}
		/* Before the answer: the sequence is over when it has them. */
		fz_cov_collect();
		if (send(sock, &ans, offsetof(struct wans, data) + ans.len, MSG_NOSIGNAL) < 0)
			_exit(1);
	}
}

static void worker_stop(struct worker *w);

/*
 * The answer of @w's request: 0, -1 if the worker died, -2 (failed) if
 * it did not answer in time. A hog may stay in reclaim for long (its
 * cgroup at memory.high with nothing to reclaim but what the killer
 * frees): one that does not answer is killed, which is no failure.
 */
static int worker_wait(struct fz *fz, struct worker *w, struct wans *ans)
{
	struct pollfd p = { .fd = w->sock, .events = POLLIN };
	ssize_t n;

	w->busy = false;
	if (poll(&p, 1, WAIT_MS) == 0) {
		if (w->req.op == W_ALLOC) {
			worker_stop(w);
			return -1;
		}
		return fz_fail(fz, "worker %d: no answer in %d ms", w->pid, WAIT_MS) - 1;
	}
	n = recv(w->sock, ans, sizeof(*ans), 0);
	return n <= 0 ? -1 : 0;
}

static void worker_send(struct worker *w, int op, long arg, const char *path,
			const char *data, size_t len)
{
	w->req.op = op;
	w->req.arg = arg;
	snprintf(w->req.path, sizeof(w->req.path), "%s", path);
	if (len > sizeof(w->req.data))
		len = sizeof(w->req.data);
	memcpy(w->req.data, data, len);
	w->req.len = len;
	w->busy = send(w->sock, &w->req, offsetof(struct wreq, data) + len, MSG_NOSIGNAL) > 0;
}

/* A synchronous request: 0 with the answer, -1 if the worker is gone, -2. */
static int worker_call(struct fz *fz, struct worker *w, int op, long arg,
		       const char *path, const char *data, size_t len,
		       struct wans *ans)
{
	struct wans tmp;

	if (w->pid <= 0)
		return -1;
	if (w->busy && worker_wait(fz, w, &tmp) == -2)
		return -2;
	worker_send(w, op, arg, path, data, len);
	if (!w->busy)
		return -1;
	return worker_wait(fz, w, ans);
}

/* ---- processes of the cells ---- */

enum { R_INIT, R_CANARY, R_HOG0, R_NROLES = R_HOG0 + NHOGS };

struct lcell {
	char name[32];
	char cg[48];
	unsigned int uid_base;	/* 0: no user namespace */
	bool high;		/* memory.high below memory.max */
	struct worker w[R_NROLES];
	pid_t history[HISTORY];	/* every pid the cell had */
	unsigned int nhist;
	unsigned long kills, ooms;	/* counters at the last look */
	unsigned int unexplained;	/* our deaths not yet accounted */
	long credit;		/* kills counted before their deaths were seen */
	bool alive;
	/* The model of the levels: what adj and minfree read. */
	char adj[80], minfree[80];
};

struct lstate {
	struct lcell cell[NCELLS];
	struct worker host_canary;
	struct worker unpriv;
	char host_adj[80], host_minfree[80];
	unsigned long host_kills;
	unsigned long global_ooms;
	bool trace;
	unsigned long long gen;	/* of the modules: see lmk_gen() */
};

/*
 * Which load of cask_core and lowmemorykiller this is (their
 * directories' kernfs inodes), 0 while one is out: the reload driver may
 * unload and load them under this one, which then starts its cells
 * again instead of failing.
 */
static unsigned long long lmk_gen(void)
{
	struct stat core, mod;

	char state[16];

	/* "going" while an unload removes the cells' files, for long. */
	if (stat(CASK, &core) || stat("/sys/module/lowmemorykiller", &mod) ||
	    access(CASK "/cells/host/lmk", F_OK) ||
	    do_read("/sys/module/lowmemorykiller/initstate", state, sizeof(state)) <= 0 ||
	    strcmp(state, "live\n"))
		return 0;
	return (unsigned long long)core.st_ino << 32 ^ mod.st_ino;
}

static const int role_adj[R_NROLES] = { -1000, 1000, 300, 900 };

static int write_maps(pid_t pid, unsigned int base)
{
	char path[64], map[64];
	int ret;

	snprintf(map, sizeof(map), "0 %u 65536\n", base);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	ret = write_str(path, map);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	return write_str(path, map);
}

struct wspec {
	const char *cg;		/* cgroup to join, or NULL */
	int adj;
	bool init;		/* new IPC (and user) namespaces */
	pid_t enter;		/* else enter those of this process, if > 0 */
	unsigned int uid_base;
	uid_t host_uid;		/* setuid on the host first */
	bool userns_alone;	/* an unprivileged user namespace of its own */
	bool events;		/* open /proc/lowmemorykiller */
	const char *comm;
};

static int worker_start(struct worker *w, const struct wspec *s)
{
	int sv[2], sync[2];
	char c = 0;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	if (pipe2(sync, O_CLOEXEC)) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	memset(w, 0, sizeof(*w));
	w->pid = fork();
	if (w->pid < 0) {
		w->pid = 0;
		return -errno;
	}
	if (w->pid == 0) {
		char path[64], buf[32];
		int ufd = -1, ifd;

		close(sv[0]);
		close(sync[0]);
		if (s->cg) {
			snprintf(path, sizeof(path), CGROOT "/%s/cgroup.procs", s->cg);
			snprintf(buf, sizeof(buf), "%d\n", getpid());
			if (write_str(path, buf))
				_exit(1);
		}
		snprintf(buf, sizeof(buf), "%d", s->adj);
		if (write_str("/proc/self/oom_score_adj", buf))
			_exit(1);
		if (s->init) {
			if (unshare(CLONE_NEWIPC | (s->uid_base ? CLONE_NEWUSER : 0)))
				_exit(2);
			if (write(sync[1], "u", 1) != 1 || read(sv[1], &c, 1) != 1)
				_exit(3);
		} else if (s->enter > 0) {
			snprintf(path, sizeof(path), "/proc/%d/ns/ipc", s->enter);
			ifd = open(path, O_RDONLY);
			if (s->uid_base) {
				snprintf(path, sizeof(path), "/proc/%d/ns/user", s->enter);
				ufd = open(path, O_RDONLY);
				if (ufd < 0 || setns(ufd, CLONE_NEWUSER))
					_exit(4);
			}
			if (ifd < 0 || setns(ifd, CLONE_NEWIPC))
				_exit(5);
		}
		if (s->host_uid && (setresgid(s->host_uid, s->host_uid, s->host_uid) ||
				    setresuid(s->host_uid, s->host_uid, s->host_uid)))
			_exit(6);
		if (s->userns_alone && unshare(CLONE_NEWUSER))
			_exit(6);
		if (s->uid_base && (setresgid(0, 0, 0) || setresuid(0, 0, 0)))
			_exit(7);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(8);
		if (s->comm)
			prctl(PR_SET_NAME, s->comm);
		/* The socket as 3, the events as 4, nothing else. */
		if (sv[1] != 3) {
			dup2(sv[1], 3);
			close(sv[1]);
		}
		syscall(SYS_close_range, 4, ~0U, 0);
		worker_serve(3, s->events);
	}
	close(sv[1]);
	close(sync[1]);
	w->sock = sv[0];
	if (s->init) {
		if (read(sync[0], &c, 1) != 1 ||
		    (s->uid_base && write_maps(w->pid, s->uid_base)) ||
		    write(w->sock, "g", 1) != 1) {
			close(sync[0]);
			kill(w->pid, SIGKILL);
			waitpid(w->pid, NULL, 0);
			close(w->sock);
			w->pid = 0;
			return -ECHILD;
		}
	}
	close(sync[0]);
	return 0;
}

static void worker_stop(struct worker *w)
{
	if (w->pid <= 0)
		return;
	w->killed = true;
	kill(w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
	close(w->sock);
	w->pid = 0;
	w->busy = false;
}

static void history_add(struct lcell *c, pid_t pid)
{
	c->history[c->nhist++ % HISTORY] = pid;
}

static bool history_has(const struct lcell *c, long pid)
{
	unsigned int i, n = c->nhist < HISTORY ? c->nhist : HISTORY;

	for (i = 0; i < n; i++)
		if (c->history[i] == pid)
			return true;
	return false;
}

static unsigned long read_ulong(const char *path)
{
	char buf[64];

	if (do_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoul(buf, NULL, 10);
}

/* A key of a flat-keyed file ("key value" lines), 0 without it. */
static unsigned long read_key(const char *path, const char *key)
{
	char line[128];
	size_t klen = strlen(key);
	unsigned long v = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			v = strtoul(line + klen + 1, NULL, 10);
	fclose(f);
	return v;
}

static void cell_file(const struct lcell *c, char *buf, size_t len, const char *f)
{
	snprintf(buf, len, CASK "/cells/%s/lmk/%s", c->name, f);
}

static unsigned long cell_kills(const struct lcell *c)
{
	char path[128];

	cell_file(c, path, sizeof(path), "kills");
	return read_ulong(path);
}

static unsigned long cell_ooms(const struct lcell *c)
{
	char path[128];

	snprintf(path, sizeof(path), CGROOT "/%s/memory.events", c->cg);
	return read_key(path, "oom_kill");
}

/* A cell's processes' role slot started (a canary or a hog killed earlier). */
static int role_start(struct lcell *c, int role)
{
	static const char *const comms[R_NROLES] = {
		"fzlmk-init", "fzlmk-canary", "fzlmk-hog0", "fzlmk-hog1",
	};
	struct wspec s = {
		.cg = c->cg, .adj = role_adj[role], .init = role == R_INIT,
		.enter = role == R_INIT ? 0 : c->w[R_INIT].pid,
		.uid_base = c->uid_base, .events = role == R_INIT,
		.comm = comms[role],
	};
	int ret = worker_start(&c->w[role], &s);

	if (!ret)
		history_add(c, c->w[role].pid);
	return ret;
}

static void cell_stop(struct lcell *c)
{
	char cmd[48];
	int i;

	for (i = R_NROLES - 1; i >= 0; i--)
		worker_stop(&c->w[i]);
	snprintf(cmd, sizeof(cmd), "%s\n", c->name);
	write_str(CASK "/unregister", cmd);
	c->alive = false;
}

static int cell_start(struct fz *fz, struct lcell *c)
{
	char cmd[64];
	int i, ret;

	ret = role_start(c, R_INIT);
	if (ret)
		return fz_fail(fz, "%s: init: %s", c->name, strerror(-ret));
	snprintf(cmd, sizeof(cmd), "%s %d\n", c->name, c->w[R_INIT].pid);
	ret = write_str(CASK "/register", cmd);
	if (ret) {
		worker_stop(&c->w[R_INIT]);
		return fz_fail(fz, "register %s: %s", c->name, strerror(-ret));
	}
	/*
	 * The cell's cgroup is the one its process had at registration; the
	 * process itself then leaves it, so that the cgroup's reclaim and
	 * memory.high throttling do not slow down every write it makes.
	 */
	snprintf(cmd, sizeof(cmd), "%d\n", c->w[R_INIT].pid);
	ret = write_str(CGROOT "/" CG_CTL "/cgroup.procs", cmd);
	if (ret) {
		cell_stop(c);
		return fz_fail(fz, "%s: init out of its cgroup: %s", c->name,
			       strerror(-ret));
	}
	for (i = 1; i < R_NROLES; i++) {
		ret = role_start(c, i);
		if (ret) {
			cell_stop(c);
			return fz_fail(fz, "%s: role %d: %s", c->name, i, strerror(-ret));
		}
	}
	c->adj[0] = '\0';
	c->minfree[0] = '\0';
	c->kills = cell_kills(c);
	c->ooms = cell_ooms(c);
	c->credit = 0;
	c->unexplained = 0;
	c->alive = true;
	return 0;
}

/* ---- the model of the lists ---- */

/* kstrtoint(s, 10): 0 and *v, or -EINVAL / -ERANGE. */
static int kstrtoint_model(const char *s, int *v)
{
	unsigned long long u = 0;
	bool neg = false, digits = false;

	if (*s == '-') {
		neg = true;
		s++;
	} else if (*s == '+') {
		s++;
	}
	for (; *s >= '0' && *s <= '9'; s++) {
		if (u > (~0ULL - (*s - '0')) / 10)
			return -ERANGE;
		u = u * 10 + (*s - '0');
		digits = true;
	}
	if (!digits)
		return -EINVAL;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	if (neg ? u > 2147483648ULL : u > 2147483647ULL)
		return -ERANGE;
	*v = neg ? -(long long)u : (long long)u;
	return 0;
}

/* lmk_parse_list(): 0 with the values, or -EINVAL. */
static int parse_list_model(const char *buf, int *val, unsigned int *nr)
{
	char tmp[LIST_LEN + 2], *s = tmp, *tok;
	size_t len = strlen(buf);
	unsigned int n = 0;

	if (len && buf[len - 1] == '\n')
		len--;
	if (len > LIST_LEN)
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	if (strchr(tmp, '\n'))
		return -EINVAL;
	*nr = 0;
	if (!len)
		return 0;
	while ((tok = strsep(&s, ","))) {
		if (n == 6 || kstrtoint_model(tok, &val[n]))
			return -EINVAL;
		n++;
	}
	*nr = n;
	return 0;
}

/* What a write of @buf to adj or minfree does: 0 and the list read back. */
static int list_model(const char *buf, bool adj, char *out, size_t len)
{
	int val[6];
	unsigned int i, n;
	size_t o = 0;
	bool legacy;

	if (parse_list_model(buf, val, &n))
		return -EINVAL;
	legacy = adj && n && val[n - 1] <= 15;
	for (i = 0; i < n; i++) {
		if (!adj) {
			if (val[i] <= 0)
				return -EINVAL;
			continue;
		}
		if (legacy) {
			if (val[i] < -17 || val[i] > 15)
				return -EINVAL;
			val[i] = val[i] == 15 ? 1000 : val[i] * 1000 / 17;
		}
		if (val[i] < -1000 || val[i] > 1000)
			return -EINVAL;
	}
	for (i = 0; i < n; i++)
		o += snprintf(out + o, len - o, "%s%d", i ? "," : "", val[i]);
	out[o] = '\0';
	return 0;
}

static const char *const bad_items[] = {
	"", " 1", "1 ", "0x10", "1e3", "+", "-", "--1", "-+1", "99999999999",
	"2147483648", "-2147483649", "1\n2", "a", "1001", "-1001", "-18", "16",
	"0", "+07", "\t5",
};

/* A list for adj (@adj) or minfree; @harmless: one that never kills. */
static size_t gen_list(struct fz *fz, bool adj, bool harmless, char *buf, size_t max)
{
	unsigned int n = fz_below(fz, 8), i;
	bool legacy = adj && fz_chance(fz, 1, 3);
	size_t o = 0;

	if (harmless) {
		/* The host's: minfree of a few pages, adj high. */
		for (i = 0; i < n && i < 6; i++)
			o += snprintf(buf + o, max - o, "%s%u", i ? "," : "",
				      adj ? 900 + (unsigned int)fz_below(fz, 101) :
				      1 + (unsigned int)fz_below(fz, 16));
		if (fz_chance(fz, 1, 2))
			buf[o++] = '\n';
		buf[o] = '\0';
		return o;
	}
	for (i = 0; i < n; i++) {
		if (i)
			buf[o++] = ',';
		if (fz_chance(fz, 1, 12)) {
			o += snprintf(buf + o, max - o, "%s",
				      bad_items[fz_below(fz, sizeof(bad_items) /
							     sizeof(bad_items[0]))]);
		} else if (!adj) {
			/* Pages: up to twice the cell's limit. */
			o += snprintf(buf + o, max - o, "%u",
				      1 + (unsigned int)fz_size(fz, LIMIT_MIB * 512));
		} else if (legacy) {
			o += snprintf(buf + o, max - o, "%d",
				      -17 + (int)fz_below(fz, 33));
		} else {
			o += snprintf(buf + o, max - o, "%d",
				      fz_chance(fz, 1, 8) ? -1000 + (int)fz_below(fz, 1017) :
				      (int)fz_below(fz, 1001));
		}
		if (o > max - 24)
			break;
	}
	switch (fz_below(fz, 8)) {
	case 0:
		break;
	case 1:
		buf[o++] = '\n';
		buf[o++] = '\n';
		break;
	case 2:
		buf[o++] = ',';
		break;
	default:
		buf[o++] = '\n';
		break;
	}
	buf[o] = '\0';
	return o;
}

/* ---- checks ---- */

/* Reap our children that died; charge the deaths to their cells. */
static int reap(struct fz *fz, struct lstate *st)
{
	int status, i, r;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (st->host_canary.pid == pid) {
			st->host_canary.pid = 0;
			close(st->host_canary.sock);
			if (read_key("/proc/vmstat", "oom_kill") == st->global_ooms)
				return fz_fail(fz, "the host's canary %d died (status %#x)",
					       pid, status);
			continue;
		}
		for (i = 0; i < NCELLS; i++) {
			struct lcell *c = &st->cell[i];

			for (r = 0; r < R_NROLES; r++) {
				if (c->w[r].pid != pid)
					continue;
				c->w[r].pid = 0;
				c->w[r].busy = false;
				close(c->w[r].sock);
				if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
					return fz_fail(fz, "%s: role %d (%d) ended: status %#x",
						       c->name, r, pid, status);
				if (r == R_INIT)
					return fz_fail(fz, "%s: its init (adj -1000) was killed",
						       c->name);
				c->unexplained++;
			}
		}
	}
	return 0;
}

/* The cell's kills and OOM kills explain its deaths; last_kill is its own. */
static int account(struct fz *fz, struct lstate *st)
{
	char path[128], buf[256];
	unsigned long kills, ooms, hk;
	long pid;
	int i;

	if (reap(fz, st))
		return -1;
	for (i = 0; i < NCELLS; i++) {
		struct lcell *c = &st->cell[i];

		if (!c->alive)
			continue;
		kills = cell_kills(c);
		ooms = cell_ooms(c);
		if (kills != c->kills) {
			cell_file(c, path, sizeof(path), "last_kill");
			if (do_read(path, buf, sizeof(buf)) > 0 &&
			    sscanf(buf, "%ld", &pid) == 1 && !history_has(c, pid))
				return fz_fail(fz, "%s's last_kill is %ld, not its process: %s",
					       c->name, pid, buf);
		}
		/*
		 * A kill is counted when its SIGKILL is sent, and its victim
		 * is reaped here later: what the counters count beyond the
		 * deaths seen so far pays for the deaths seen next.
		 */
		if ((long)c->unexplained > c->credit + (long)(kills - c->kills) +
					   (long)(ooms - c->ooms)) {
			usleep(20000);
			kills = cell_kills(c);
			ooms = cell_ooms(c);
		}
		c->credit += (long)(kills - c->kills) + (long)(ooms - c->ooms) -
			     (long)c->unexplained;
		if (c->credit < 0)
			return fz_fail(fz, "%s: %u processes killed, %lu kills, %lu OOM kills",
				       c->name, c->unexplained, kills - c->kills,
				       ooms - c->ooms);
		c->kills = kills;
		c->ooms = ooms;
		c->unexplained = 0;
	}
	hk = read_ulong(CASK "/cells/host/lmk/kills");
	if (hk != st->host_kills)
		return fz_fail(fz, "the host's killer killed (%lu kills), with levels %s / %s",
			       hk - st->host_kills, st->host_minfree, st->host_adj);
	return 0;
}

/* The events a cell's init reads: its own processes only. */
static int check_events(struct fz *fz, struct lcell *c, unsigned int close_after)
{
	struct wans ans;
	char *s, *end;
	long pid;
	int r;

	r = worker_call(fz, &c->w[R_INIT], W_EVENTS, close_after, "", "", 0, &ans);
	if (r == -2)
		return -1;
	if (r)
		return 0;
	if (ans.ret < 0)
		return fz_fail(fz, "%s: events: %s", c->name, strerror(-ans.ret));
	for (s = ans.data; *s; s = end) {
		pid = strtol(s, &end, 10);
		if (end == s)
			break;
		if (!history_has(c, pid))
			return fz_fail(fz, "%s: an event of pid %ld, not its process",
				       c->name, pid);
	}
	return 0;
}

/* Every lmk_kill of one of our cells in the trace is of its processes. */
static int check_trace(struct fz *fz, struct lstate *st)
{
	char line[512], key[48];
	FILE *f = fopen(TRACING "/trace", "r");
	int i, ret = 0;
	char *p;

	if (!f)
		return 0;
	while (!ret && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "lmk_kill:"))
			continue;
		for (i = 0; i < NCELLS; i++) {
			snprintf(key, sizeof(key), "cell=%s pid=", st->cell[i].name);
			p = strstr(line, key);
			if (p && !history_has(&st->cell[i], strtol(p + strlen(key), NULL, 10)))
				ret = fz_fail(fz, "trace: %s", line);
		}
	}
	fclose(f);
	write_str(TRACING "/trace", "");
	return ret;
}

/* ---- setup ---- */

static int cg_make(const char *cg, const char *max, const char *high)
{
	char path[128];
	int ret;

	snprintf(path, sizeof(path), CGROOT "/%s", cg);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), CGROOT "/%s/memory.max", cg);
	ret = write_str(path, max);
	if (!ret && high) {
		snprintf(path, sizeof(path), CGROOT "/%s/memory.high", cg);
		ret = write_str(path, high);
	}
	return ret;
}

static int lmk_setup(struct fz *fz)
{
	struct lstate *st;
	char cmd[48], max[32], high[32];
	struct wspec hc = { .adj = 1000, .comm = "fzlmk-hostcanary" };
	struct wspec up = { .adj = 0, .host_uid = 65534, .userns_alone = true };
	int i, ret;

	struct timespec t0, t1;

	/* Being reloaded underneath (the reload driver): wait for it. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!lmk_gen()) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec > RELOAD_WAIT_MS / 1000)
			return fz_fail(fz, "lowmemorykiller is not loaded");
		usleep(10000);
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return fz_fail(fz, "out of memory");
	fz->priv = st;
	/* The host's levels, restored at the end. */
	if (do_read(PARAMS "adj", st->host_adj, sizeof(st->host_adj)) < 0)
		st->host_adj[0] = '\0';
	st->host_adj[strcspn(st->host_adj, "\n")] = '\0';
	if (do_read(PARAMS "minfree", st->host_minfree, sizeof(st->host_minfree)) < 0)
		st->host_minfree[0] = '\0';
	st->host_minfree[strcspn(st->host_minfree, "\n")] = '\0';
	snprintf(max, sizeof(max), "%ld", LIMIT_MIB * MIB);
	ret = cg_make(CG_CTL, "max", NULL);
	if (ret)
		return fz_fail(fz, "cgroup %s: %s", CG_CTL, strerror(-ret));
	/* The memcg OOM killer is in charge too: its reports are expected. */
	write_str("/dev/kmsg", "cask-test: oom expected\n");
	snprintf(high, sizeof(high), "%ld", (LIMIT_MIB - 4) * MIB);
	for (i = 0; i < NCELLS; i++) {
		struct lcell *c = &st->cell[i];

		snprintf(c->name, sizeof(c->name), "fzlmk-%c", 'a' + i);
		snprintf(c->cg, sizeof(c->cg), "fzlmk-%c", 'a' + i);
		c->uid_base = i ? 0 : 460000;
		c->high = i == 1;
		snprintf(cmd, sizeof(cmd), "%s\n", c->name);
		write_str(CASK "/unregister", cmd);
		ret = cg_make(c->cg, max, c->high ? high : NULL);
		if (ret) {
			/* No teardown after a failed setup: close the window. */
			write_str("/dev/kmsg", "cask-test: oom done\n");
			return fz_fail(fz, "cgroup %s: %s", c->cg, strerror(-ret));
		}
	}
	ret = worker_start(&st->host_canary, &hc);
	ret = ret ?: worker_start(&st->unpriv, &up);
	if (ret) {
		/* No teardown after a failed setup: close the window. */
		write_str("/dev/kmsg", "cask-test: oom done\n");
		return fz_fail(fz, "host workers: %s", strerror(-ret));
	}
	st->host_kills = read_ulong(CASK "/cells/host/lmk/kills");
	st->global_ooms = read_key("/proc/vmstat", "oom_kill");
	/* The first sequence makes the cells, once the modules are there. */
	st->gen = 0;
	if (access(TRACING "/trace", F_OK))
		mount("tracefs", TRACING, "tracefs", 0, NULL);
	st->trace = !write_str(TRACING "/events/lowmemorykiller/lmk_kill/enable", "1");
	return 0;
}

static void lmk_teardown(struct fz *fz)
{
	struct lstate *st = fz->priv;
	char path[128];
	int i;

	if (!st)
		return;
	for (i = 0; i < NCELLS; i++) {
		cell_stop(&st->cell[i]);
		snprintf(path, sizeof(path), CGROOT "/%s", st->cell[i].cg);
		rmdir(path);
	}
	worker_stop(&st->host_canary);
	worker_stop(&st->unpriv);
	rmdir(CGROOT "/" CG_CTL);
	write_str("/dev/kmsg", "cask-test: oom done\n");
	write_str(PARAMS "minfree", st->host_minfree);
	write_str(PARAMS "adj", st->host_adj);
	write_str(CASK "/cells/host/lmk/enabled", "1");
	if (st->trace)
		write_str(TRACING "/events/lowmemorykiller/lmk_kill/enable", "0");
	free(st);
	fz->priv = NULL;
}

/* ---- the sequence ---- */

/* A write of a level file by an actor, checked against the model. */
static int level_write(struct fz *fz, struct lstate *st, struct lcell *c,
		       unsigned int actor, const char *file, bool param)
{
	static const char *const bools[] = {
		"1", "0", "y", "N", "on", "off", "maybe", "", "2", "1\n", "yes",
	};
	char path[160], data[160], want_out[80];
	bool adj = !strcmp(file, "adj"), enabled = !strcmp(file, "enabled");
	/* actor: 0 the host, 1 the cell's init, 2 unprivileged. */
	bool harmless = actor == 0 && (param || !c);
	struct wans ans;
	int want, ret, r;
	size_t n;

	if (enabled) {
		n = snprintf(data, sizeof(data), "%s",
			     bools[fz_below(fz, ARRAY_SIZE(bools))]);
		/* The host's killer stays on: its levels are harmless anyway. */
	} else {
		n = gen_list(fz, adj, harmless, data, sizeof(data));
	}
	if (param)
		snprintf(path, sizeof(path), PARAMS "%s", file);
	else if (c)
		cell_file(c, path, sizeof(path), file);
	else
		snprintf(path, sizeof(path), CASK "/cells/host/lmk/%s", file);
	want_out[0] = '\0';
	if (enabled) {
		want = (!strcmp(data, "maybe") || !strcmp(data, "2") || !*data) ? -EINVAL : 0;
		if (!n)
			want = 0;
	} else {
		want = n ? list_model(data, adj, want_out, sizeof(want_out)) : 0;
	}
	/* Who may: the host and a cell's root; the params need DAC too. */
	if (actor == 2)
		want = -EACCES;
	else if (actor == 1 && param && c->uid_base)
		want = -EACCES;
	fz_trace(fz, "%s: %s '%.*s'", actor == 0 ? "host" : actor == 1 ? c->name :
		 "unprivileged", path, (int)strcspn(data, "\n"), data);
	if (actor == 0) {
		ret = do_write(path, data, n);
	} else {
		struct worker *w = actor == 1 ? &c->w[R_INIT] : &st->unpriv;

		r = worker_call(fz, w, W_WRITE, 0, path, data, n, &ans);
		if (r == -2)
			return -1;
		if (r)
			return 0;
		ret = ans.ret;
	}
	if (ret >= 0)
		ret = (size_t)ret == n ? 0 : -EIO;
	if (ret != want && !(actor == 2 && ret == -EPERM) &&
	    !(want == 0 && ret == -ENODEV))
		return fz_fail(fz, "%s '%s': %d, expected %d", path, data, ret, want);
	if (ret || !n || enabled)
		return 0;
	/* Accepted: reads back as the model prints it. */
	if (actor == 0 && (param || !c)) {
		snprintf(adj ? st->host_adj : st->host_minfree, 80, "%s", want_out);
		ret = do_read(path, data, sizeof(data));
	} else {
		struct lcell *t = c;

		snprintf(adj ? t->adj : t->minfree, 80, "%s", want_out);
		cell_file(t, path, sizeof(path), file);
		ret = do_read(path, data, sizeof(data));
	}
	if (ret < 0)
		return fz_fail(fz, "read back %s: %s", path, strerror(-ret));
	data[strcspn(data, "\n")] = '\0';
	if (strcmp(data, want_out))
		return fz_fail(fz, "%s reads '%s' after '%s' was written", path, data,
			       want_out);
	return 0;
}

static int lmk_sequence_once(struct fz *fz)
{
	static const unsigned int weights[] = {
		150,	/* 0 a level file written */
		40,	/* 1 a hog allocates (async) */
		25,	/* 2 a hog frees */
		30,	/* 3 counters and last_kill read */
		25,	/* 4 the events read */
		10,	/* 5 the trace read */
		30,	/* 6 wait for the hogs */
		1,	/* 7 a cell dies */
		15,	/* 8 a cell's file from another cell */
	};
	static const char *const files[] = { "minfree", "adj", "enabled" };
	struct lstate *st = fz->priv;
	unsigned int len = 1 + fz_below(fz, 16);
	char path[160], buf[512];
	unsigned int lock_close;
	int i, r, err = 0;

	/* st->gen 0: made again at this sequence (not "module out"). */
	if (!st->gen || lmk_gen() != st->gen) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (!(st->gen = lmk_gen())) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if (t1.tv_sec - t0.tv_sec > RELOAD_WAIT_MS / 1000)
				return fz_fail(fz, "lowmemorykiller does not come back");
			usleep(10000);
		}
		for (i = 0; i < NCELLS; i++)
			cell_stop(&st->cell[i]);
		st->host_kills = read_ulong(CASK "/cells/host/lmk/kills");
	}
	if (reap(fz, st))
		return -1;
	for (i = 0; i < NCELLS; i++) {
		struct lcell *c = &st->cell[i];

		if (!c->alive && cell_start(fz, c))
			return -1;
		/* Canaries and hogs the killers took, back. */
		for (r = R_CANARY; r < R_NROLES; r++)
			if (!c->w[r].pid && role_start(c, r))
				return fz_fail(fz, "%s: role %d", c->name, r);
	}
	if (!st->host_canary.pid) {
		struct wspec hc = { .adj = 1000, .comm = "fzlmk-hostcanary" };

		st->global_ooms = read_key("/proc/vmstat", "oom_kill");
		if (worker_start(&st->host_canary, &hc))
			return fz_fail(fz, "host canary");
	}
	while (!err && fz_next(fz, len)) {
		unsigned int op = fz_pick(fz, weights, ARRAY_SIZE(weights));
		struct lcell *c = &st->cell[fz_below(fz, NCELLS)];
		int role = R_HOG0 + fz_below(fz, NHOGS);
		struct worker *w = &c->w[role];
		struct wans ans;

		switch (op) {
		case 0: {
			unsigned int actor = fz_pick(fz, (const unsigned int[]){ 4, 6, 1 }, 3);
			const char *f = files[fz_below(fz, 3)];
			bool param = !strcmp(f, "enabled") ? false : fz_chance(fz, 1, 3);
			bool host_cell = actor != 1 && fz_chance(fz, 1, 4);

			/* The host's enabled stays 1: never written. */
			if (host_cell && !strcmp(f, "enabled"))
				f = "minfree";
			if (actor == 0 && param)
				host_cell = true;
			err = level_write(fz, st, host_cell ? NULL : c, actor, f, param);
			break;
		}
		case 1: {
			long mib = 1 + fz_below(fz, LIMIT_MIB);

			if (w->busy && worker_wait(fz, w, &ans) == -2)
				return -1;
			fz_trace(fz, "%s hog%d: allocate %ld MiB", c->name, role - R_HOG0, mib);
			if (w->pid)
				worker_send(w, W_ALLOC, mib, "", "", 0);
			break;
		}
		case 2:
			fz_trace(fz, "%s hog%d: free", c->name, role - R_HOG0);
			if (w->pid && worker_call(fz, w, W_FREE, 0, "", "", 0, &ans) == -2)
				return -1;
			break;
		case 3:
			fz_trace(fz, "host: account the deaths");
			err = account(fz, st);
			for (i = 0; !err && i < 3; i++) {
				static const char *const ro[] = {
					"last_kill", "reaction_us", "freed_us",
				};

				cell_file(c, path, sizeof(path), ro[i]);
				r = do_read(path, buf, sizeof(buf));
				if (r < 0 && r != -ENOENT)
					err = fz_fail(fz, "read %s: %s", path, strerror(-r));
			}
			break;
		case 4:
			lock_close = fz_below(fz, 6);
			if (lock_close > 2)
				lock_close = 0;
			fz_trace(fz, "%s: read the events%s", c->name,
				 lock_close == 1 ? ", close them, then epoll" :
				 lock_close == 2 ? ", close epoll, then them" : "");
			err = check_events(fz, c, lock_close);
			break;
		case 5:
			fz_trace(fz, "host: read the trace");
			if (st->trace)
				err = check_trace(fz, st);
			break;
		case 6:
			fz_trace(fz, "wait for the hogs");
			for (i = 0; i < NCELLS * NHOGS && !err; i++) {
				w = &st->cell[i / NHOGS].w[R_HOG0 + i % NHOGS];
				if (w->busy && worker_wait(fz, w, &ans) == -2)
					return -1;
			}
			break;
		case 7: {
			bool unreg = fz_chance(fz, 1, 2);
			char cmd[48];

			fz_trace(fz, "%s dies (%s)", c->name, unreg ? "unregistered" : "killed");
			err = account(fz, st);
			if (!err && unreg) {
				snprintf(cmd, sizeof(cmd), "%s\n", c->name);
				r = write_str(CASK "/unregister", cmd);
				if (r)
					err = fz_fail(fz, "unregister %s: %s", c->name,
						      strerror(-r));
			}
			for (i = R_NROLES - 1; i >= 0; i--)
				worker_stop(&c->w[i]);
			c->alive = false;
			snprintf(path, sizeof(path), CASK "/cells/%s", c->name);
			for (i = 0; !err && !access(path, F_OK); i++) {
				if (i > WAIT_MS / 2) {
					err = fz_fail(fz, "%s: its directory stays", c->name);
					break;
				}
				usleep(2000);
			}
			if (!err)
				err = cell_start(fz, c);
			if (!err) {
				/* A new cell: no levels, nothing of the old one. */
				cell_file(c, path, sizeof(path), "minfree");
				r = do_read(path, buf, sizeof(buf));
				if (r != 1)
					err = fz_fail(fz, "%s made again: minfree '%s'", c->name,
						      r > 0 ? buf : "");
			}
			break;
		}
		case 8: {
			struct lcell *o = &st->cell[(c - st->cell + 1) % NCELLS];
			const char *f = files[fz_below(fz, 3)];

			cell_file(o, path, sizeof(path), f);
			fz_trace(fz, "%s: write %s", c->name, path);
			r = worker_call(fz, &c->w[R_INIT], W_WRITE, 0, path, "1", 1, &ans);
			if (r == -2)
				return -1;
			if (!r && ans.ret != -EACCES)
				err = fz_fail(fz, "%s writes %s: %d, expected EACCES", c->name,
					      path, ans.ret);
			break;
		}
		}
	}
	for (i = 0; !err && i < NCELLS * NHOGS; i++) {
		struct worker *w = &st->cell[i / NHOGS].w[R_HOG0 + i % NHOGS];
		struct wans ans;

		if (w->busy && worker_wait(fz, w, &ans) == -2)
			return -1;
	}
	if (!err)
		err = account(fz, st);
	return err ? -1 : 0;
}

static int lmk_sequence(struct fz *fz)
{
	struct lstate *st = fz->priv;

	int i;

	if (!lmk_sequence_once(fz))
		return 0;
	/*
	 * A module reloaded underneath: nothing this sequence saw counts,
	 * and the next one starts the cells again. An unload removes the
	 * cells' directories before the module's own: give one that is
	 * under way the time to show.
	 */
	for (i = 0; i < 500; i++, usleep(10000)) {
		if (lmk_gen() != st->gen) {
			st->gen = 0;
			return 0;
		}
	}
	return -1;
}

static struct fz_driver lmk_driver = {
	.name = "lmk",
	.help = "lowmemorykiller: level writes racing kills in 2 cells, canaries",
	.setup = lmk_setup,
	.sequence = lmk_sequence,
	.teardown = lmk_teardown,
};

FZ_DRIVER(lmk_driver);
