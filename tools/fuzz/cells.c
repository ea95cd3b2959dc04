// SPDX-License-Identifier: GPL-2.0
/*
 * cask-fuzz "cells" and "reload": cask_core's cells churned, and the
 * cask modules unloaded and loaded again, underneath whatever else runs.
 *
 * cells: four worker processes, each in an IPC namespace of its own (two
 * of them also in user namespaces, mapped to unprivileged host uids),
 * are registered and unregistered under a pool of names, with valid and
 * bogus names, pids and pidfds, duplicates, the host's name; they read
 * /sys/kernel/cask/self and open cask devices (auto cells), and unshare
 * a new IPC namespace, which ends their cell at once without a fork.
 * Now and then a process is registered while it dies, a worker exits,
 * and the root of a user namespace and an unprivileged user try to
 * register. The host reads the cells' files while they are removed, and
 * holds some open across the removal; a thread reads every file under
 * /sys/kernel/cask/cells for the whole run.
 *
 * Checks: every register/unregister answer is the one a model of the
 * names, the pids and the cells that exist gives (EINVAL, EEXIST,
 * ENOENT, ESRCH, EBADF, EBUSY, EACCES/EPERM); self names the cell the
 * model expects; a cell whose namespace ended (or whose process died,
 * mid-registration too) leaves sysfs within a timeout. Only cells named
 * fzc* and the auto cells of its own workers are ever touched: other
 * generators' cells and processes are left alone. A reload of cask_core
 * by another process (the reload driver) resets the model instead of
 * failing.
 *
 * reload: delete_module() of a cask module (O_NONBLOCK) and, when it
 * went, finit_module() again with its options from modprobe.d; rarely
 * all of them, drivers first, then cask_core, then all loaded again in
 * the order of modules-load.d. EBUSY/EAGAIN while in use is expected; a
 * module that does not load again is a failure.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#define NSLOTS		4
#define NNAMES		6
#define NHELD		8
#define WAIT_MS		10000

/* ---- workers ---- */

enum { W_WRITE, W_READ, W_UNSHARE, W_OPEN, W_DROP };

struct wreq {
	int op;
	char path[160];
	unsigned int len;
	char data[256];
};

struct wans {
	int ret;
	unsigned int len;
	char data[512];
};

struct worker {
	pid_t pid;
	int sock;
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

static void __attribute__((noreturn)) worker_serve(int sock)
{
	static struct wreq req;
	static struct wans ans;
	int held[8], nheld = 0;
	ssize_t n;

	/* Its own KCOV: the kernel work of the requests is done here. */
	fz_cov_thread_start();
	for (;;) {
		n = recv(sock, &req, sizeof(req), 0);
		if (n <= 0)
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
		case W_UNSHARE:
			ans.ret = unshare(CLONE_NEWIPC) ? -errno : 0;
			break;
		case W_OPEN:
			/* Held: a cell's driver state lives while files are open. */
			n = open(req.path, O_RDWR | O_CLOEXEC);
			ans.ret = n < 0 ? -errno : 0;
			if (n >= 0 && nheld < 8)
				held[nheld++] = n;
			else if (n >= 0)
				close(n);
			break;
		case W_DROP:
			while (nheld)
				close(held[--nheld]);
			break;
		}
		/* Before the answer: the sequence is over when it has them. */
		fz_cov_collect();
		if (send(sock, &ans, offsetof(struct wans, data) + ans.len,
			 MSG_NOSIGNAL) < 0)
			_exit(1);
	}
}

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

/*
 * A worker in a new IPC namespace (@ipc), and a user namespace mapped at
 * @uid_base if not 0; or, with @host_uid, a plain host user.
 */
static int worker_start(struct worker *w, bool ipc, unsigned int uid_base,
			uid_t host_uid)
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
	w->pid = fork();
	if (w->pid < 0) {
		w->pid = 0;
		return -errno;
	}
	if (w->pid == 0) {
		close(sv[0]);
		close(sync[0]);
		if (unshare((ipc ? CLONE_NEWIPC : 0) | (uid_base ? CLONE_NEWUSER : 0)))
			_exit(2);
		if (write(sync[1], "u", 1) != 1 || read(sv[1], &c, 1) != 1)
			_exit(3);
		if (uid_base && (setresgid(0, 0, 0) || setresuid(0, 0, 0)))
			_exit(4);
		if (host_uid && (setresgid(host_uid, host_uid, host_uid) ||
				 setresuid(host_uid, host_uid, host_uid)))
			_exit(5);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(6);
		if (sv[1] != 3) {
			dup2(sv[1], 3);
			close(sv[1]);
		}
		syscall(SYS_close_range, 4, ~0U, 0);
		worker_serve(3);
	}
	close(sv[1]);
	close(sync[1]);
	w->sock = sv[0];
	if (read(sync[0], &c, 1) != 1 ||
	    (uid_base && write_maps(w->pid, uid_base)) ||
	    write(w->sock, "g", 1) != 1) {
		close(sync[0]);
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
		close(w->sock);
		w->pid = 0;
		return -ECHILD;
	}
	close(sync[0]);
	return 0;
}

static void worker_stop(struct worker *w)
{
	if (w->pid <= 0)
		return;
	kill(w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
	close(w->sock);
	w->pid = 0;
}

/* A request and its answer: 0, or -1 (failed: no answer, or died). */
static int worker_call(struct fz *fz, struct worker *w, int op, const char *path,
		       const char *data, size_t len, struct wans *ans)
{
	static struct wreq req;
	struct pollfd p = { .fd = w->sock, .events = POLLIN };

	req.op = op;
	snprintf(req.path, sizeof(req.path), "%s", path);
	if (len > sizeof(req.data))
		len = sizeof(req.data);
	memcpy(req.data, data, len);
	req.len = len;
	if (send(w->sock, &req, offsetof(struct wreq, data) + len, MSG_NOSIGNAL) < 0)
		return fz_fail(fz, "worker %d: gone", w->pid);
	if (poll(&p, 1, WAIT_MS) == 0)
		return fz_fail(fz, "worker %d: no answer in %d ms", w->pid, WAIT_MS);
	if (recv(w->sock, ans, sizeof(*ans), 0) <= 0)
		return fz_fail(fz, "worker %d: died", w->pid);
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- the model ---- */

enum { N_FREE, N_SLOT, N_DYING };

struct slot {
	struct worker w;
	unsigned int uid_base;
	int name;		/* index of its registered name, or -1 */
	bool autocell;		/* its namespace has an auto cell */
	unsigned long ino;	/* of its IPC namespace */
	char auto_name[48];
};

/* A cell that must go: its directory, while it is still that cell's. */
struct gone {
	char name[48];
	unsigned long ino;
};

struct cstate {
	struct slot slot[NSLOTS];
	int names[NNAMES];	/* N_* */
	int name_slot[NNAMES];
	/*
	 * Without the notifier: the slot whose process ends an N_DYING name's
	 * cell (it unshared its namespace), or -1. Set at every change to
	 * N_DYING, so it is never left over from an earlier life of the name.
	 */
	int stale_slot[NNAMES];
	struct gone dying[32];	/* directories that must go */
	unsigned int ndying;
	int held[NHELD];	/* sysfs files held open by the host */
	struct worker unpriv;
	unsigned long core_ino;	/* /sys/kernel/cask's: a new one on reload */
	bool notifier;		/* features/ipc_ns_free_notifier */
	pthread_t reader;
	pthread_t racer[3];
	int nracers;
	bool stop;		/* under race_mu, or __atomic */
	bool reading;
	unsigned long reads;
};

static const char *const pool[NNAMES] = {
	"fzc0", "fzc1", "fzc-2", "fzc.3", "fzc_4",
	"fzc56789012345678901234567890123",	/* 32: the longest */
};

static unsigned long ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

static unsigned long ns_ino(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", pid);
	return ino_of(path);
}

static void dying_add(struct cstate *st, const char *name)
{
	char path[128];
	struct gone *g;

	if (st->ndying >= ARRAY_SIZE(st->dying))
		return;
	g = &st->dying[st->ndying];
	snprintf(path, sizeof(path), CASK "/cells/%s", name);
	/* Its kernfs inode: a cell made later under the name has another. */
	g->ino = ino_of(path);
	if (!g->ino)
		return;
	snprintf(g->name, sizeof(g->name), "%s", name);
	st->ndying++;
}

/* A slot's cell is ending (its namespace or process): the model follows. */
static void slot_cell_ends(struct cstate *st, struct slot *s)
{
	int i;

	if (s->name >= 0) {
		st->names[s->name] = N_DYING;
		st->stale_slot[s->name] = -1;
		dying_add(st, pool[s->name]);
	}
	if (s->autocell)
		dying_add(st, s->auto_name);
	/* Without the notifier: the cells it kept after an unshare end too. */
	for (i = 0; i < NNAMES; i++) {
		if (st->names[i] != N_DYING || st->stale_slot[i] != s - st->slot)
			continue;
		st->stale_slot[i] = -1;
		dying_add(st, pool[i]);
	}
	s->name = -1;
	s->autocell = false;
}

/*
 * Which load of cask_core this is: /sys/kernel/cask's kernfs inode, 0
 * while the module is going (its unload removes the cells first).
 */
static unsigned long core_ino(void)
{
	char state[16];

	if (do_read("/sys/module/cask_core/initstate", state, sizeof(state)) <= 0 ||
	    strcmp(state, "live\n"))
		return 0;
	return ino_of(CASK);
}

/*
 * cask_core went away and came back (the reload driver, or another
 * process): every cell is gone. Forget what the model knew. True if so.
 */
static bool core_changed(struct cstate *st)
{
	unsigned long ino = core_ino();
	int i;

	/*
	 * Asked on a failure: an unload under way removes the cells before
	 * /sys/kernel/cask itself; give it the time to show.
	 */
	for (i = 0; i < 500 && ino == st->core_ino; i++) {
		usleep(10000);
		ino = core_ino();
	}
	if (ino == st->core_ino)
		return false;
	st->core_ino = ino;
	for (i = 0; i < NNAMES; i++) {
		st->names[i] = N_DYING;
		st->stale_slot[i] = -1;
	}
	for (i = 0; i < NSLOTS; i++) {
		st->slot[i].name = -1;
		st->slot[i].autocell = false;
	}
	st->ndying = 0;
	return true;
}

/* At a sequence's start: no waiting, the model follows a reload. */
static void core_changed_now(struct cstate *st)
{
	unsigned long ino = core_ino();

	if (ino != st->core_ino)
		core_changed(st);
}

/* Wait for the cells that must go: 0, or a failure. */
static int settle(struct fz *fz, struct cstate *st)
{
	char path[128];
	double t0 = now_ms();
	unsigned int i;
	int j;

	for (i = 0; i < st->ndying; i++) {
		snprintf(path, sizeof(path), CASK "/cells/%s", st->dying[i].name);
		while (ino_of(path) == st->dying[i].ino) {
			if (now_ms() - t0 > WAIT_MS) {
				if (core_changed(st))
					return 0;
				return fz_fail(fz, "cell %s stays after its end",
					       st->dying[i].name);
			}
			usleep(2000);
		}
	}
	st->ndying = 0;
	for (j = 0; j < NNAMES; j++)
		if (st->names[j] == N_DYING) {
			snprintf(path, sizeof(path), CASK "/cells/%s", pool[j]);
			if (access(path, F_OK))
				st->names[j] = N_FREE;
		}
	return 0;
}

/* ---- the reader thread ---- */

static void read_tree(const char *dir, int depth, unsigned long *reads)
{
	char path[512], buf[4096];
	struct dirent *d;
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (d->d_type == DT_DIR && depth < 2) {
			read_tree(path, depth + 1, reads);
		} else if (d->d_type == DT_REG) {
			do_read(path, buf, sizeof(buf));
			(*reads)++;
		}
	}
	closedir(dp);
}

static void *reader_fn(void *arg)
{
	struct cstate *st = arg;

	fz_cov_thread_start();
	while (!__atomic_load_n(&st->stop, __ATOMIC_RELAXED)) {
		read_tree(CASK "/cells", 0, &st->reads);
		fz_cov_collect();
		/* Racing, not hogging the guest's two CPUs. */
		usleep(20000);
	}
	return NULL;
}

static int reg_write(const char *file, const char *cmd, size_t len);

/* ---- races: several register, unregister, unshare, self at once ---- */

enum { R_REG, R_UNREG, R_UNREG_AUTO, R_UNSHARE, R_SELF, R_NKINDS };

struct race_act {
	int kind;
	int name;
	int slot;
	int ret;
	char out[64];
};

static pthread_mutex_t race_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t race_go = PTHREAD_COND_INITIALIZER;
static pthread_cond_t race_done = PTHREAD_COND_INITIALIZER;
static unsigned int race_gen, race_left, race_nacts;
static struct race_act race_acts[3];

/* A worker's request without fz (from a racer thread): 0 or -errno. */
static int raw_call(struct worker *w, int op, const char *path, char *out, size_t len)
{
	static __thread struct wreq req;
	static __thread struct wans ans;
	struct pollfd p = { .fd = w->sock, .events = POLLIN };

	memset(&req, 0, offsetof(struct wreq, data));
	req.op = op;
	snprintf(req.path, sizeof(req.path), "%s", path);
	if (send(w->sock, &req, offsetof(struct wreq, data), MSG_NOSIGNAL) < 0)
		return -EPIPE;
	if (poll(&p, 1, WAIT_MS) != 1)
		return -ETIMEDOUT;
	if (recv(w->sock, &ans, sizeof(ans), 0) <= 0)
		return -EPIPE;
	if (out && ans.ret > 0)
		snprintf(out, len, "%.63s", ans.data);
	return ans.ret;
}

static void race_act_run(struct cstate *st, struct race_act *a)
{
	struct slot *s = &st->slot[a->slot];
	char cmd[96];

	switch (a->kind) {
	case R_REG:
		snprintf(cmd, sizeof(cmd), "%s %d\n", pool[a->name], s->w.pid);
		a->ret = reg_write(CASK "/register", cmd, strlen(cmd));
		break;
	case R_UNREG:
		snprintf(cmd, sizeof(cmd), "%s\n", pool[a->name]);
		a->ret = reg_write(CASK "/unregister", cmd, strlen(cmd));
		break;
	case R_UNREG_AUTO:
		snprintf(cmd, sizeof(cmd), "ipc-%lu\n", s->ino);
		a->ret = reg_write(CASK "/unregister", cmd, strlen(cmd));
		break;
	case R_UNSHARE:
		a->ret = raw_call(&s->w, W_UNSHARE, "", NULL, 0);
		break;
	default:
		a->ret = raw_call(&s->w, W_READ, CASK "/self", a->out, sizeof(a->out));
		break;
	}
}

static void *racer_fn(void *arg)
{
	struct cstate *st = arg;
	unsigned int seen = 0, idx;

	fz_cov_thread_start();
	pthread_mutex_lock(&race_mu);
	/* Which racer this is: the order they came in. */
	idx = st->nracers++;
	for (;;) {
		while (race_gen == seen && !st->stop)
			pthread_cond_wait(&race_go, &race_mu);
		if (st->stop)
			break;
		seen = race_gen;
		pthread_mutex_unlock(&race_mu);
		if (idx < race_nacts)
			race_act_run(st, &race_acts[idx]);
		fz_cov_collect();
		pthread_mutex_lock(&race_mu);
		if (!--race_left)
			pthread_cond_broadcast(&race_done);
	}
	pthread_mutex_unlock(&race_mu);
	return NULL;
}

static const char *const race_kinds[] = {
	"register", "unregister", "unregister auto", "unshare", "self",
};

/* A cell of ours in sysfs: its namespace's inode, or 0 if there is none. */
static unsigned long cell_ns(const char *name)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), CASK "/cells/%s/ipc_ns", name);
	if (do_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoul(buf, NULL, 10);
}

/*
 * After a race the model is what sysfs shows, which must be possible: at
 * most one cell per namespace among ours, a slot's registered name its
 * only one.
 */
static int race_resync(struct fz *fz, struct cstate *st)
{
	unsigned long ns[NNAMES];
	int i, j, k;

	for (i = 0; i < NSLOTS; i++) {
		st->slot[i].name = -1;
		st->slot[i].ino = ns_ino(st->slot[i].w.pid);
	}
	for (i = 0; i < NNAMES; i++) {
		ns[i] = cell_ns(pool[i]);
		st->names[i] = N_FREE;
		if (!ns[i])
			continue;
		for (j = 0; j < i; j++)
			if (ns[j] == ns[i])
				return fz_fail(fz, "cells %s and %s of one namespace (%lu)",
					       pool[j], pool[i], ns[i]);
		st->names[i] = N_DYING;
		st->stale_slot[i] = -1;
		for (k = 0; k < NSLOTS; k++) {
			if (st->slot[k].ino != ns[i])
				continue;
			st->names[i] = N_SLOT;
			st->name_slot[i] = k;
			st->slot[k].name = i;
		}
		/*
		 * A cell of no slot's namespace ends, with the notifier. Without
		 * it a slot that unshared during the race still holds it (its
		 * process is what ends it), and which slot that was is not known
		 * here: it is left alone, to be freed when it is seen gone.
		 */
		if (st->names[i] == N_DYING && st->notifier)
			dying_add(st, pool[i]);
	}
	for (k = 0; k < NSLOTS; k++) {
		struct slot *s = &st->slot[k];
		char name[48];

		snprintf(name, sizeof(name), "ipc-%lu", s->ino);
		s->autocell = cell_ns(name) == s->ino;
		if (s->autocell)
			snprintf(s->auto_name, sizeof(s->auto_name), "%s", name);
		if (s->autocell && s->name >= 0)
			return fz_fail(fz, "slot %d's namespace has cells %s and %s", k,
				       pool[s->name], name);
	}
	return 0;
}

static int op_race(struct fz *fz, struct cstate *st)
{
	static const int ok[R_NKINDS][3] = {
		[R_REG] = { 0, -EEXIST, 1 },
		[R_UNREG] = { 0, -ENOENT, 1 },
		[R_UNREG_AUTO] = { 0, -ENOENT, 1 },
		[R_UNSHARE] = { 0, 0, 1 },
		[R_SELF] = { 0, -ENOSPC, 1 },
	};
	unsigned int n = 2 + fz_below(fz, 2), i, j;
	bool used[NSLOTS] = { false };
	struct timespec until;
	int r = 0, k;

	if (st->nracers < 3)
		return 0;
	/* The slots' old cells end as the race may end them: followed after. */
	for (i = 0; i < n; i++) {
		struct race_act *a = &race_acts[i];

		a->kind = fz_below(fz, R_NKINDS);
		a->name = fz_below(fz, 3);	/* few names: they collide */
		a->slot = fz_below(fz, NSLOTS);
		a->out[0] = '\0';
		/* One request at a time on a worker's socket. */
		if (a->kind >= R_UNSHARE) {
			if (used[a->slot])
				a->kind = R_REG;
			used[a->slot] = true;
		}
		fz_trace(fz, "race %u: %s %s slot %d", i, race_kinds[a->kind],
			 pool[a->name], a->slot);
	}
	/* Cells that an unshare ends must go: noted before, checked later. */
	for (i = 0; i < n; i++)
		if (race_acts[i].kind == R_UNSHARE && st->notifier)
			slot_cell_ends(st, &st->slot[race_acts[i].slot]);
	pthread_mutex_lock(&race_mu);
	race_nacts = n;
	race_left = st->nracers;
	race_gen++;
	pthread_cond_broadcast(&race_go);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_MS / 1000 * 2;
	while (race_left && !r)
		r = pthread_cond_timedwait(&race_done, &race_mu, &until);
	pthread_mutex_unlock(&race_mu);
	if (r)
		return fz_fail(fz, "a race's requests did not come back in %d s",
			       WAIT_MS / 500);
	for (i = 0; i < n; i++) {
		struct race_act *a = &race_acts[i];

		for (j = 0; j < 2; j++)
			if (a->ret == ok[a->kind][j] ||
			    (a->kind == R_SELF && a->ret > 0))
				break;
		if (j == 2) {
			if (core_changed(st))
				return 0;
			return fz_fail(fz, "race: %s %s slot %d: %d (%s)",
				       race_kinds[a->kind], pool[a->name], a->slot,
				       a->ret, a->ret < 0 ? strerror(-a->ret) : "");
		}
	}
	k = race_resync(fz, st);
	if (k && core_changed(st))
		return 0;
	return k;
}

/* ---- setup ---- */

static int slot_start(struct fz *fz, struct cstate *st, int i)
{
	struct slot *s = &st->slot[i];
	int ret = worker_start(&s->w, true, s->uid_base, 0);

	if (ret)
		return fz_fail(fz, "slot %d: %s", i, strerror(-ret));
	s->name = -1;
	s->autocell = false;
	s->ino = ns_ino(s->w.pid);
	return 0;
}

static int cells_setup(struct fz *fz)
{
	struct cstate *st;
	char buf[16], cmd[48];
	int i, ret;

	if (access(CASK "/register", F_OK))
		return fz_fail(fz, "cask_core is not loaded");
	st = calloc(1, sizeof(*st));
	if (!st)
		return fz_fail(fz, "out of memory");
	fz->priv = st;
	st->core_ino = core_ino();
	st->notifier = do_read(CASK "/features/ipc_ns_free_notifier", buf,
			       sizeof(buf)) > 0 && buf[0] == '1';
	for (i = 0; i < NNAMES; i++) {
		snprintf(cmd, sizeof(cmd), "%s\n", pool[i]);
		write_str(CASK "/unregister", cmd);
	}
	write_str(CASK "/unregister", "fzcdie\n");
	for (i = 0; i < NSLOTS; i++) {
		st->slot[i].uid_base = i & 1 ? 480000 + 65536 * i : 0;
		if (slot_start(fz, st, i))
			return -1;
	}
	for (i = 0; i < NHELD; i++)
		st->held[i] = -1;
	for (i = 0; i < NNAMES; i++)
		st->stale_slot[i] = -1;
	ret = worker_start(&st->unpriv, false, 0, 65534);
	if (ret)
		return fz_fail(fz, "unprivileged worker: %s", strerror(-ret));
	st->reading = !pthread_create(&st->reader, NULL, reader_fn, st);
	for (i = 0; i < 3; i++)
		pthread_create(&st->racer[i], NULL, racer_fn, st);
	return 0;
}

static void cells_teardown(struct fz *fz)
{
	struct cstate *st = fz->priv;
	char cmd[48];
	int i;

	if (!st)
		return;
	pthread_mutex_lock(&race_mu);
	st->stop = true;
	pthread_cond_broadcast(&race_go);
	pthread_mutex_unlock(&race_mu);
	if (st->reading)
		pthread_join(st->reader, NULL);
	for (i = 0; i < 3; i++)
		if (st->racer[i])
			pthread_join(st->racer[i], NULL);
	for (i = 0; i < NHELD; i++)
		if (st->held[i] >= 0)
			close(st->held[i]);
	for (i = 0; i < NSLOTS; i++)
		worker_stop(&st->slot[i].w);
	worker_stop(&st->unpriv);
	for (i = 0; i < NNAMES; i++) {
		snprintf(cmd, sizeof(cmd), "%s\n", pool[i]);
		write_str(CASK "/unregister", cmd);
	}
	printf("# cells: the reader thread read %lu files\n", st->reads);
	free(st);
	fz->priv = NULL;
}

/* ---- generation ---- */

static const char *const bad_names[] = {
	"", ".", "..", "a/b", "fzc\xc3\xa9", "fzc*", "fzc567890123456789012345678901234",
	"-", "fzc:0", "host",
};

static bool name_valid(const char *n)
{
	size_t len = strlen(n), i;

	if (!len || len > 32 || !strcmp(n, ".") || !strcmp(n, ".."))
		return false;
	for (i = 0; i < len; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= 'A' && n[i] <= 'Z') ||
		      (n[i] >= '0' && n[i] <= '9') || n[i] == '_' || n[i] == '.' ||
		      n[i] == '-'))
			return false;
	return true;
}

static bool one_of(int ret, const int *want, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (ret == want[i])
			return true;
	return false;
}

/* Answer of a register write: bytes written become 0. */
static int reg_write(const char *file, const char *cmd, size_t len)
{
	int n = do_write(file, cmd, len);

	return n < 0 ? n : 0;
}

/* Register a pool name for a slot, by pid or pidfd; model checked. */
static int op_register(struct fz *fz, struct cstate *st)
{
	int ni = fz_below(fz, NNAMES), si = fz_below(fz, NSLOTS);
	struct slot *s = &st->slot[si];
	bool by_pidfd = fz_chance(fz, 1, 4);
	static const char *const seps[] = { " ", "\t", "  ", " " };
	const char *sep = seps[fz_below(fz, 4)];
	bool nl = fz_chance(fz, 1, 2);
	char cmd[96];
	int want[2], nw = 1, ret, pfd = -1;

	if (by_pidfd) {
		pfd = syscall(SYS_pidfd_open, s->w.pid, 0);
		snprintf(cmd, sizeof(cmd), "%s%spidfd:%d%s", pool[ni], sep, pfd, nl ? "\n" : "");
	} else {
		snprintf(cmd, sizeof(cmd), "%s%s%d%s", pool[ni], sep, s->w.pid, nl ? "\n" : "");
	}
	if (st->names[ni] == N_SLOT || s->name >= 0 || s->autocell) {
		want[0] = -EEXIST;
	} else if (st->names[ni] == N_DYING) {
		want[0] = 0;
		want[1] = -EEXIST;
		nw = 2;
	} else {
		want[0] = 0;
	}
	fz_trace(fz, "register '%s' (slot %d)", cmd, si);
	ret = reg_write(CASK "/register", cmd, strlen(cmd));
	if (pfd >= 0)
		close(pfd);
	if (!one_of(ret, want, nw)) {
		if (core_changed(st))
			return 0;
		return fz_fail(fz, "register '%s': %d (%s), expected %d", cmd, ret,
			       strerror(-ret), want[0]);
	}
	if (!ret) {
		st->names[ni] = N_SLOT;
		st->name_slot[ni] = si;
		s->name = ni;
	}
	return 0;
}

/* Bogus register lines: bad names, pids, pidfds, forms. */
static int op_register_bogus(struct fz *fz, struct cstate *st)
{
	char cmd[128], tmp[128], *rest = tmp, *nm;
	int ret, want = -EINVAL, fd = -1;
	const char *name = fz_chance(fz, 1, 2) ? "fzcbogus" :
		bad_names[fz_below(fz, ARRAY_SIZE(bad_names))];
	unsigned int kind = fz_below(fz, 12);
	size_t len;

	/* want: the answer when the name and the line's form are good. */
	switch (kind) {
	case 0:
		snprintf(cmd, sizeof(cmd), "%s", name);
		break;
	case 1:
		snprintf(cmd, sizeof(cmd), "%s 0", name);
		break;
	case 2:
		snprintf(cmd, sizeof(cmd), "%s -%u", name, (unsigned int)fz_below(fz, 100));
		break;
	case 3:
		snprintf(cmd, sizeof(cmd), "%s 99999999", name);
		want = -ESRCH;
		break;
	case 4:
		snprintf(cmd, sizeof(cmd), "%s %d", name, getpid());
		want = -EEXIST;	/* the host's namespace has its cell */
		break;
	case 5:
		snprintf(cmd, sizeof(cmd), "%s 1x", name);
		break;
	case 6: {
		static const char *const fds[] = { "", "-1", "x", "99999", "5x" };
		const char *f = fds[fz_below(fz, 5)];

		snprintf(cmd, sizeof(cmd), "%s pidfd:%s", name, f);
		if (!strcmp(f, "99999"))
			want = -EBADF;
		break;
	}
	case 7:
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		snprintf(cmd, sizeof(cmd), "%s pidfd:%d", name, fd);
		want = -EBADF;	/* not a pidfd */
		break;
	case 8:
		fd = syscall(SYS_pidfd_open, 1, 0);
		snprintf(cmd, sizeof(cmd), "%s pidfd:%d", name, fd);
		want = -EEXIST;
		break;
	case 9:
		/* 64 bytes and more: too long a command. */
		memset(cmd, 'x', 70);
		cmd[64 + fz_below(fz, 6)] = '\0';
		break;
	case 10:
		snprintf(cmd, sizeof(cmd), "%s %d junk", name, getpid());
		break;
	default:
		snprintf(cmd, sizeof(cmd), "%s 1", name);
		want = -EEXIST;
		break;
	}
	len = strlen(cmd);
	/* As register_write() splits it: strim, then the name up to a blank. */
	snprintf(tmp, sizeof(tmp), "%s", cmd);
	while (*rest == ' ' || *rest == '\t')
		rest++;
	nm = strsep(&rest, " \t");
	if (len >= 64 || !rest || !name_valid(nm))
		want = -EINVAL;
	fz_trace(fz, "register '%s'", cmd);
	ret = reg_write(CASK "/register", cmd, len);
	if (fd >= 0)
		close(fd);
	if (ret != want && !(!len && ret == 0)) {
		if (core_changed(st))
			return 0;
		return fz_fail(fz, "register '%s': %d (%s), expected %d", cmd, ret,
			       strerror(-ret), want);
	}
	return 0;
}

static int op_unregister(struct fz *fz, struct cstate *st)
{
	unsigned int kind = fz_below(fz, 8);
	int ni = -1, want[2], nw = 1, ret, si = -1;
	char cmd[96], name[64];

	if (kind < 5) {
		ni = fz_below(fz, NNAMES);
		snprintf(name, sizeof(name), "%s", pool[ni]);
		if (st->names[ni] == N_SLOT) {
			want[0] = 0;
		} else if (st->names[ni] == N_DYING) {
			want[0] = 0;
			want[1] = -ENOENT;
			nw = 2;
		} else {
			want[0] = -ENOENT;
		}
	} else if (kind == 5) {
		si = fz_below(fz, NSLOTS);
		snprintf(name, sizeof(name), "ipc-%lu", st->slot[si].ino);
		/* Its auto cell, if it is not "ipc-INO.N" (a name in use). */
		want[0] = st->slot[si].autocell ? 0 : -ENOENT;
		want[1] = -ENOENT;
		nw = 2;
	} else if (kind == 6) {
		snprintf(name, sizeof(name), "host");
		want[0] = -EBUSY;
	} else {
		snprintf(name, sizeof(name), "%s",
			 bad_names[fz_below(fz, 7)]);
		want[0] = -EINVAL;
	}
	snprintf(cmd, sizeof(cmd), "%s%s", name, fz_chance(fz, 1, 2) ? "\n" : "");
	fz_trace(fz, "unregister '%s'", name);
	ret = reg_write(CASK "/unregister", cmd, strlen(cmd));
	if (!one_of(ret, want, nw) && !(!*cmd && !ret)) {
		if (core_changed(st))
			return 0;
		return fz_fail(fz, "unregister '%s': %d (%s), expected %d", name, ret,
			       strerror(-ret), want[0]);
	}
	if (!ret && ni >= 0) {
		if (st->names[ni] == N_SLOT)
			st->slot[st->name_slot[ni]].name = -1;
		st->names[ni] = N_FREE;
	}
	if (!ret && si >= 0)
		st->slot[si].autocell = false;
	return 0;
}

/* A slot reads self: its registered name, or its auto cell's. */
static int op_self(struct fz *fz, struct cstate *st)
{
	int si = fz_below(fz, NSLOTS);
	struct slot *s = &st->slot[si];
	struct wans ans;
	char want[64];

	fz_trace(fz, "slot %d reads self", si);
	if (worker_call(fz, &s->w, W_READ, CASK "/self", "", 0, &ans))
		return -1;
	if (s->name >= 0)
		snprintf(want, sizeof(want), "%s\n", pool[s->name]);
	else
		snprintf(want, sizeof(want), "ipc-%lu", s->ino);
	if (ans.ret == -ENOSPC && s->name < 0)
		return 0;	/* max_cells: other generators' cells count */
	if (ans.ret < 0 || strncmp(ans.data, want, strlen(want)) ||
	    (s->name < 0 && ans.data[strlen(want)] != '\n' &&
	     ans.data[strlen(want)] != '.')) {
		if (core_changed(st))
			return 0;
		return fz_fail(fz, "slot %d: self %d '%.40s', expected '%s'", si,
			       ans.ret, ans.ret > 0 ? ans.data : "", want);
	}
	if (s->name < 0) {
		s->autocell = true;
		ans.data[strcspn(ans.data, "\n")] = '\0';
		snprintf(s->auto_name, sizeof(s->auto_name), "%.47s", ans.data);
	}
	return 0;
}

static const char *const devices[] = {
	"/dev/ashmem", "/dev/binder", "/dev/log/main", "/dev/hwbinder",
};

static int op_device(struct fz *fz, struct cstate *st)
{
	int si = fz_below(fz, NSLOTS);
	struct slot *s = &st->slot[si];
	const char *dev = devices[fz_below(fz, 4)];
	bool drop = fz_chance(fz, 1, 3);
	struct wans ans;

	fz_trace(fz, "slot %d %s", si, drop ? "closes its devices" : dev);
	if (worker_call(fz, &s->w, drop ? W_DROP : W_OPEN, dev, "", 0, &ans))
		return -1;
	if (!drop && !ans.ret && s->name < 0 && !s->autocell) {
		s->autocell = true;
		snprintf(s->auto_name, sizeof(s->auto_name), "ipc-%lu", s->ino);
	}
	/* ENXIO, ENODEV: the driver is being reloaded under its node. */
	if (!drop && ans.ret && ans.ret != -ENOENT && ans.ret != -ENOSPC &&
	    ans.ret != -EACCES && ans.ret != -ENXIO && ans.ret != -ENODEV &&
	    !core_changed(st))
		return fz_fail(fz, "slot %d: open %s: %s", si, dev, strerror(-ans.ret));
	return 0;
}

static int op_unshare(struct fz *fz, struct cstate *st)
{
	int si = fz_below(fz, NSLOTS);
	struct slot *s = &st->slot[si];
	struct wans ans;

	fz_trace(fz, "slot %d unshares its IPC namespace", si);
	if (worker_call(fz, &s->w, W_UNSHARE, "", "", 0, &ans))
		return -1;
	if (ans.ret)
		return fz_fail(fz, "slot %d: unshare: %s", si, strerror(-ans.ret));
	/*
	 * Without the notifier, cells end with their process: a registered
	 * one stays until this slot's process exits (op_slot_exit() waits
	 * for it then), which settle() must not wait for now.
	 */
	if (st->notifier) {
		slot_cell_ends(st, s);
	} else {
		if (s->name >= 0) {
			st->names[s->name] = N_DYING;
			st->stale_slot[s->name] = si;
		}
		s->name = -1;
		s->autocell = false;
	}
	/* Open devices keep the old namespace's cell state, not its link. */
	s->ino = ns_ino(s->w.pid);
	return 0;
}

/* The host reads a cell's files; or holds one open across its removal. */
static int op_host_files(struct fz *fz, struct cstate *st)
{
	static const char *const files[] = {
		"", "lmk/minfree", "power/wake_lock", "ashmem/bytes", "binder/procs",
		"logger", "cgroup", "pid",
	};
	char path[160], buf[4096];
	int ni = fz_below(fz, NNAMES), h = fz_below(fz, NHELD), ret;
	const char *f = files[fz_below(fz, ARRAY_SIZE(files))];

	switch (fz_below(fz, 3)) {
	case 0:
		snprintf(path, sizeof(path), CASK "/cells/%s", pool[ni]);
		fz_trace(fz, "host: read every file of %s", pool[ni]);
		{
			unsigned long n = 0;

			read_tree(path, 1, &n);
		}
		break;
	case 1:
		snprintf(path, sizeof(path), CASK "/cells/%s/%s", pool[ni], f);
		fz_trace(fz, "host: hold %s as %d", path, h);
		if (st->held[h] >= 0)
			close(st->held[h]);
		st->held[h] = open(path, O_RDONLY | O_CLOEXEC);
		break;
	default:
		fz_trace(fz, "host: read held %d", h);
		if (st->held[h] < 0)
			break;
		ret = pread(st->held[h], buf, sizeof(buf), 0);
		if (ret < 0 && errno != ENODEV && errno != ENOENT && errno != EISDIR &&
		    errno != EACCES && errno != EPERM)
			return fz_fail(fz, "read of a held file: %s", strerror(errno));
		if (fz_chance(fz, 1, 2)) {
			close(st->held[h]);
			st->held[h] = -1;
		}
		break;
	}
	return 0;
}

/* A process registered as it dies: the cell (if made) must go. */
static int op_dying_init(struct fz *fz, struct cstate *st)
{
	int p[2], ret, how = fz_below(fz, 3);
	char c, cmd[64], path[64];
	double t0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return fz_fail(fz, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (unshare(CLONE_NEWIPC) || write(p[1], "u", 1) != 1)
			_exit(1);
		if (how == 2)
			_exit(0);	/* exits on its own, racing */
		pause();
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1) {
		close(p[0]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return fz_fail(fz, "dying init: no start");
	}
	close(p[0]);
	fz_trace(fz, "register fzcdie for %d as it %s", pid,
		 how == 0 ? "is killed" : how == 1 ? "is killed after" : "exits");
	if (how == 0)
		kill(pid, SIGKILL);
	snprintf(cmd, sizeof(cmd), "fzcdie %d\n", pid);
	ret = reg_write(CASK "/register", cmd, strlen(cmd));
	if (how == 1)
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (ret && ret != -ESRCH && ret != -EEXIST) {
		if (core_changed(st))
			return 0;
		return fz_fail(fz, "register of a dying process: %s", strerror(-ret));
	}
	/* Made or not, it goes: its namespace and process ended. */
	snprintf(path, sizeof(path), CASK "/cells/fzcdie");
	t0 = now_ms();
	while (!access(path, F_OK)) {
		if (now_ms() - t0 > WAIT_MS) {
			if (core_changed(st))
				return 0;
			return fz_fail(fz, "fzcdie stays after its process died (%s)",
				       ret ? strerror(-ret) : "registered");
		}
		usleep(2000);
	}
	return 0;
}

/* Those who may not: a user namespace's root, an unprivileged user. */
static int op_not_allowed(struct fz *fz, struct cstate *st)
{
	bool unreg = fz_chance(fz, 1, 2);
	int si = 1 + 2 * fz_below(fz, NSLOTS / 2);	/* a userns slot */
	struct worker *w = fz_chance(fz, 1, 2) ? &st->unpriv : &st->slot[si].w;
	char cmd[64];
	struct wans ans;

	snprintf(cmd, sizeof(cmd), unreg ? "%s\n" : "%s %d\n", pool[0], w->pid);
	fz_trace(fz, "%s: %s '%s'", w == &st->unpriv ? "unprivileged" : "userns root",
		 unreg ? "unregister" : "register", cmd);
	if (worker_call(fz, w, W_WRITE, unreg ? CASK "/unregister" : CASK "/register",
			cmd, strlen(cmd), &ans))
		return -1;
	if (ans.ret != -EACCES && ans.ret != -EPERM)
		return fz_fail(fz, "%s by the unprivileged: %d", unreg ? "unregister" :
			       "register", ans.ret);
	return 0;
}

static int op_slot_exit(struct fz *fz, struct cstate *st)
{
	int si = fz_below(fz, NSLOTS);
	struct slot *s = &st->slot[si];

	fz_trace(fz, "slot %d exits, another takes its place", si);
	worker_stop(&s->w);
	slot_cell_ends(st, s);
	return slot_start(fz, st, si);
}

static int cells_sequence(struct fz *fz)
{
	static const unsigned int weights[] = {
		100,	/* 0 register */
		40,	/* 1 register bogus */
		75,	/* 2 unregister */
		50,	/* 3 self */
		30,	/* 4 devices */
		25,	/* 5 unshare */
		50,	/* 6 host reads */
		2,	/* 7 registered while dying */
		15,	/* 8 not allowed */
		10,	/* 9 settle */
		1,	/* 10 a slot exits */
		25,	/* 11 a race */
	};
	struct cstate *st = fz->priv;
	unsigned int len = 1 + fz_below(fz, 24);
	int err = 0;

	core_changed_now(st);
	while (!err && fz_next(fz, len)) {
		switch (fz_pick(fz, weights, ARRAY_SIZE(weights))) {
		case 0:
			err = op_register(fz, st);
			break;
		case 1:
			err = op_register_bogus(fz, st);
			break;
		case 2:
			err = op_unregister(fz, st);
			break;
		case 3:
			err = op_self(fz, st);
			break;
		case 4:
			err = op_device(fz, st);
			break;
		case 5:
			err = op_unshare(fz, st);
			break;
		case 6:
			err = op_host_files(fz, st);
			break;
		case 7:
			err = op_dying_init(fz, st);
			break;
		case 8:
			err = op_not_allowed(fz, st);
			break;
		case 9:
			fz_trace(fz, "settle");
			err = settle(fz, st);
			break;
		case 10:
			err = op_slot_exit(fz, st);
			break;
		default:
			err = op_race(fz, st);
			break;
		}
	}
	if (!err && st->ndying > 16)
		err = settle(fz, st);
	return err ? -1 : 0;
}

static struct fz_driver cells_driver = {
	.name = "cells",
	.help = "cask_core: cells registered, auto, ended, read while removed",
	.setup = cells_setup,
	.sequence = cells_sequence,
	.teardown = cells_teardown,
};

FZ_DRIVER(cells_driver);

/* ---- reload ---- */

#define NMODS	8

struct rstate {
	char mod[NMODS][32];
	char opts[NMODS][128];
	int nmods;
	unsigned long unloads, busy;
};

static void rstrip(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

static int reload_setup(struct fz *fz)
{
	struct rstate *st = calloc(1, sizeof(*st));
	char line[256], path[128];
	FILE *f;
	int i;

	if (!st)
		return fz_fail(fz, "out of memory");
	fz->priv = st;
	f = fopen("/etc/modules-load.d/cask.conf", "r");
	if (!f)
		return fz_fail(fz, "no /etc/modules-load.d/cask.conf");
	while (fgets(line, sizeof(line), f) && st->nmods < NMODS) {
		line[strcspn(line, "#;")] = '\0';
		rstrip(line);
		if (!*line)
			continue;
		snprintf(st->mod[st->nmods++], sizeof(st->mod[0]), "%s", line);
	}
	fclose(f);
	f = fopen("/etc/modprobe.d/cask.conf", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char name[64], rest[160];

		if (sscanf(line, "options %63s %159[^\n#]", name, rest) != 2)
			continue;
		rstrip(rest);
		for (i = 0; i < st->nmods; i++)
			if (!strcmp(st->mod[i], name))
				snprintf(st->opts[i], sizeof(st->opts[i]), "%s", rest);
	}
	if (f)
		fclose(f);
	if (!st->nmods || strcmp(st->mod[0], "cask_core"))
		return fz_fail(fz, "cask_core is not the first module listed");
	for (i = 0; i < st->nmods; i++) {
		snprintf(path, sizeof(path), "/lib/modules/cask/%s.ko", st->mod[i]);
		if (access(path, R_OK))
			return fz_fail(fz, "no %s", path);
	}
	return 0;
}

static void reload_teardown(struct fz *fz)
{
	struct rstate *st = fz->priv;

	if (!st)
		return;
	printf("# reload: %lu unloads, %lu refused as busy\n", st->unloads, st->busy);
	free(st);
	fz->priv = NULL;
}

static bool mod_loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return !access(path, F_OK);
}

static int mod_load(struct fz *fz, struct rstate *st, int i)
{
	char path[128];
	int fd, ret;

	if (mod_loaded(st->mod[i]))
		return 0;
	snprintf(path, sizeof(path), "/lib/modules/cask/%s.ko", st->mod[i]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fz_fail(fz, "open %s: %s", path, strerror(errno));
	ret = syscall(SYS_finit_module, fd, st->opts[i], 0) ? -errno : 0;
	close(fd);
	if (ret && ret != -EEXIST)
		return fz_fail(fz, "%s does not load again: %s", st->mod[i],
			       strerror(-ret));
	return 0;
}

/* 0 unloaded, 1 busy, -1 failed. */
static int mod_unload(struct fz *fz, struct rstate *st, int i)
{
	int ret = syscall(SYS_delete_module, st->mod[i], O_NONBLOCK) ? -errno : 0;

	if (!ret) {
		st->unloads++;
		return 0;
	}
	if (ret == -EBUSY || ret == -EAGAIN || ret == -ENOENT) {
		st->busy += ret != -ENOENT;
		return 1;
	}
	return fz_fail(fz, "rmmod %s: %s", st->mod[i], strerror(-ret));
}

static int reload_sequence(struct fz *fz)
{
	struct rstate *st = fz->priv;
	unsigned int len = 1 + fz_below(fz, 3);
	int i, r;

	while (fz_next(fz, len)) {
		if (fz_chance(fz, 1, 8)) {
			fz_trace(fz, "every module out, then in again");
			for (i = st->nmods - 1; i >= 0; i--)
				if (mod_unload(fz, st, i) < 0)
					return -1;
		} else {
			i = 1 + fz_below(fz, st->nmods - 1);
			fz_trace(fz, "rmmod %s", st->mod[i]);
			r = mod_unload(fz, st, i);
			if (r < 0)
				return -1;
			if (!r && fz_chance(fz, 1, 4)) {
				fz_trace(fz, "a moment without it");
				usleep(fz_below(fz, 20000));
			}
		}
		for (i = 0; i < st->nmods; i++)
			if (mod_load(fz, st, i))
				return -1;
	}
	return 0;
}

static struct fz_driver reload_driver = {
	.name = "reload",
	.help = "rmmod and insmod of each cask module while others fuzz",
	.setup = reload_setup,
	.sequence = reload_sequence,
	.teardown = reload_teardown,
};

FZ_DRIVER(reload_driver);
