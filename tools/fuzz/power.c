// SPDX-License-Identifier: GPL-2.0
/*
 * cask-fuzz "power": the wake lock files of cask_power from several
 * cells and the host at once.
 *
 * Three registered cells live for the whole run, each with two worker
 * processes inside it (its registered process and a second one that
 * entered its namespaces): cell a has a user namespace and policy
 * forward, b a user namespace and cap, c none (its root is the host's)
 * and deny. Each cell has its own max_locks. The host (this process)
 * and an unprivileged host user are actors too. A sequence sends lock,
 * unlock, read, vote and setting writes to the actors, several in flight
 * at once (races between processes and cells), with valid names, names
 * with timeouts, and bad ones (empty, too long, spaces, non-ASCII,
 * backslashes, a bad timeout); now and then a cell dies with its locks
 * held (its processes killed, or unregistered under them) and is made
 * again.
 *
 * Checks: every answer is one the interface documents for that input
 * and actor (a model of cpower_parse_lock() and the permission rules);
 * a cell's wake_lock and wake_unlock list only its own names (each
 * cell's names start with its own letter); a cell never has more names
 * than its max_locks; once a cell has died its directory and its host
 * wakeup sources go (within a timeout), and the cell made again in its
 * place starts with no locks.
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
#define WS_FILE		"/sys/kernel/debug/wakeup_sources"
#define NCELLS		3
#define NWORKERS	2		/* per cell */
#define NAME_MAX_K	255		/* CPOWER_NAME_MAX */
#define NPOOL		10		/* lock names per cell: <letter>0..9 */
#define WAIT_MS		10000		/* every answer comes within this */
#define RELOAD_WAIT_MS	60000		/* a module reloaded underneath, back */

/* ---- workers: processes that run file operations on request ---- */

enum { W_WRITE, W_READ, W_EXIT };

struct wreq {
	int op;
	char path[160];
	unsigned int len;
	char data[1024];
};

struct wans {
	int ret;		/* bytes, or -errno */
	unsigned int len;
	char data[4096];
};

struct worker {
	pid_t pid;
	int sock;
	bool busy;		/* a request without its answer yet */
	struct wreq req;	/* the request in flight */
	int want[4];		/* its acceptable answers (0 or -errno) */
	int nwant;
};

/* A file's first @len bytes written at once; bytes or -errno. */
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

/* One read() of a file into @buf (NUL-terminated); bytes or -errno. */
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

static void __attribute__((noreturn)) worker_serve(int sock)
{
	static struct wreq req;
	static struct wans ans;
	ssize_t n;

	/* Its own KCOV: the kernel work of the requests is done here. */
	fz_cov_thread_start();
	for (;;) {
		n = recv(sock, &req, sizeof(req), 0);
		if (n <= 0 || req.op == W_EXIT)
			_exit(0);
		ans.len = 0;
		switch (req.op) {
		case W_WRITE:
			ans.ret = do_write(req.path, req.data, req.len);
			break;
		case W_READ:
			ans.ret = do_read(req.path, ans.data, sizeof(ans.data));
			if (ans.ret > 0)
				ans.len = ans.ret + 1;
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

/* Close every descriptor but @keep, which becomes 3. */
static void only_fd(int keep)
{
	if (keep != 3) {
		dup2(keep, 3);
		close(keep);
	}
	syscall(SYS_close_range, 4, ~0U, 0);
}

static int write_str(const char *path, const char *s)
{
	int n = do_write(path, s, strlen(s));

	return n < 0 ? n : 0;
}

/* Wait for the answer of @w's request: 0, or -1 when it has none (died). */
static int worker_wait(struct fz *fz, struct worker *w, struct wans *ans)
{
	struct pollfd p = { .fd = w->sock, .events = POLLIN };
	ssize_t n;
	int r;

	w->busy = false;
	r = poll(&p, 1, WAIT_MS);
	if (r == 0) {
		fz_fail(fz, "worker %d: no answer in %d ms", w->pid, WAIT_MS);
		return -2;
	}
	n = recv(w->sock, ans, sizeof(*ans), 0);
	if (n <= 0)
		return -1;
	return 0;
}

static void worker_send(struct worker *w, int op, const char *path,
			const char *data, size_t len)
{
	w->req.op = op;
	snprintf(w->req.path, sizeof(w->req.path), "%s", path);
	if (len > sizeof(w->req.data))
		len = sizeof(w->req.data);
	memcpy(w->req.data, data, len);
	w->req.len = len;
	w->busy = send(w->sock, &w->req, offsetof(struct wreq, data) + len, MSG_NOSIGNAL) > 0;
}

static void worker_stop(struct worker *w)
{
	if (w->pid <= 0)
		return;
	kill(w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
	close(w->sock);
	w->pid = 0;
	w->busy = false;
}

/* ---- cells ---- */

struct pcell {
	char name[32];
	char letter;
	unsigned int uid_base;	/* 0: no user namespace */
	const char *policy;
	unsigned int max_locks;
	struct worker w[NWORKERS];
	bool alive;
};

struct pstate {
	struct pcell cell[NCELLS];
	struct worker unpriv;	/* uid 65534 on the host */
	bool host_locks;	/* /sys/power/wake_lock written: clean up */
	bool ws_readable;
	unsigned long seq;
	unsigned long long gen;	/* of the modules: see power_gen() */
	int ready[4];		/* suspend_ready files the host holds */
};

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
 * A worker: in new IPC (and user) namespaces when @init, else in those of
 * process @enter. 0 or -errno.
 */
static int worker_start(struct worker *w, bool init, pid_t enter,
			unsigned int uid_base, uid_t host_uid)
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
		char path[64];
		int ufd = -1, ifd;

		close(sv[0]);
		close(sync[0]);
		if (init) {
			if (unshare(CLONE_NEWIPC | (uid_base ? CLONE_NEWUSER : 0)))
				_exit(2);
			if (write(sync[1], "u", 1) != 1 || read(sv[1], &c, 1) != 1)
				_exit(3);
		} else if (enter) {
			snprintf(path, sizeof(path), "/proc/%d/ns/ipc", enter);
			ifd = open(path, O_RDONLY);
			if (uid_base) {
				snprintf(path, sizeof(path), "/proc/%d/ns/user", enter);
				ufd = open(path, O_RDONLY);
				if (ufd < 0 || setns(ufd, CLONE_NEWUSER))
					_exit(4);
			}
			if (ifd < 0 || setns(ifd, CLONE_NEWIPC))
				_exit(5);
		}
		if (host_uid && (setresgid(host_uid, host_uid, host_uid) ||
				 setresuid(host_uid, host_uid, host_uid)))
			_exit(6);
		if (uid_base && (setresgid(0, 0, 0) || setresuid(0, 0, 0)))
			_exit(7);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(8);
		only_fd(sv[1]);
		worker_serve(3);
	}
	close(sv[1]);
	close(sync[1]);
	w->sock = sv[0];
	w->busy = false;
	if (init) {
		if (read(sync[0], &c, 1) != 1 ||
		    (uid_base && write_maps(w->pid, uid_base)) ||
		    write(w->sock, "g", 1) != 1) {
			close(sync[0]);
			worker_stop(w);
			return -ECHILD;
		}
	}
	close(sync[0]);
	return 0;
}

static void cell_path(const struct pcell *c, char *buf, size_t len,
		      const char *file)
{
	snprintf(buf, len, CASK "/cells/%s/power/%s", c->name, file);
}

/* The host's settings of a (new) cell. */
static int cell_settings(const struct pcell *c)
{
	char path[160], val[16];
	int ret;

	cell_path(c, path, sizeof(path), "policy");
	ret = write_str(path, c->policy);
	cell_path(c, path, sizeof(path), "max_locks");
	snprintf(val, sizeof(val), "%u", c->max_locks);
	ret = ret ?: write_str(path, val);
	cell_path(c, path, sizeof(path), "max_hold_ms");
	ret = ret ?: write_str(path, "300");
	return ret;
}

static void cell_stop(struct pcell *c)
{
	char cmd[48];
	int i;

	for (i = 0; i < NWORKERS; i++)
		worker_stop(&c->w[i]);
	snprintf(cmd, sizeof(cmd), "%s\n", c->name);
	write_str(CASK "/unregister", cmd);
	c->alive = false;
}

static int cell_start(struct fz *fz, struct pcell *c)
{
	char cmd[64];
	int i, ret;

	ret = worker_start(&c->w[0], true, 0, c->uid_base, 0);
	if (ret)
		return fz_fail(fz, "cell %s: worker: %s", c->name, strerror(-ret));
	snprintf(cmd, sizeof(cmd), "%s %d\n", c->name, c->w[0].pid);
	ret = write_str(CASK "/register", cmd);
	if (ret) {
		worker_stop(&c->w[0]);
		return fz_fail(fz, "register %s: %s", c->name, strerror(-ret));
	}
	for (i = 1; i < NWORKERS; i++) {
		ret = worker_start(&c->w[i], false, c->w[0].pid, c->uid_base, 0);
		if (ret) {
			cell_stop(c);
			return fz_fail(fz, "cell %s: worker %d: %s", c->name, i,
				       strerror(-ret));
		}
	}
	ret = cell_settings(c);
	if (ret) {
		cell_stop(c);
		return fz_fail(fz, "cell %s: settings: %s", c->name, strerror(-ret));
	}
	c->alive = true;
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Which load of cask_core and cask_power this is (their directories'
 * kernfs inodes), 0 while one is out: the reload driver may unload and
 * load them under this one, which then starts its cells again instead
 * of failing.
 */
static unsigned long long power_gen(void)
{
	struct stat core, mod;

	char state[16];

	/* "going" while an unload removes the cells' files, for long. */
	if (stat(CASK, &core) || stat("/sys/module/cask_power", &mod) ||
	    access(CASK "/cells/host/power", F_OK) ||
	    do_read("/sys/module/cask_power/initstate", state, sizeof(state)) <= 0 ||
	    strcmp(state, "live\n"))
		return 0;
	return (unsigned long long)core.st_ino << 32 ^ mod.st_ino;
}

/* Wait for the modules after a reload, and make the cells again. */
static int power_resync(struct fz *fz, struct pstate *st)
{
	double t0 = now_ms();
	int i;

	while (!(st->gen = power_gen())) {
		if (now_ms() - t0 > RELOAD_WAIT_MS)
			return fz_fail(fz, "cask_power does not come back");
		usleep(10000);
	}
	for (i = 0; i < NCELLS; i++) {
		cell_stop(&st->cell[i]);
		if (cell_start(fz, &st->cell[i]))
			return -1;
	}
	/* Gone again meanwhile: power_sequence() sees it and tries again. */
	if (power_gen() != st->gen)
		return fz_fail(fz, "reloaded again");
	return 0;
}

/* ---- the model of the answers ---- */

/* The kernel's isspace(): its ctype marks 0xa0 as space too. */
static bool kspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

/* kstrtou64(s, 10): 0, -EINVAL or -ERANGE. */
static int kstrtou64_model(const char *s)
{
	unsigned long long v = 0;
	bool digits = false;

	if (*s == '+')
		s++;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (~0ULL - (*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*s - '0');
		digits = true;
	}
	if (!digits)
		return -EINVAL;
	if (*s == '\n')
		s++;
	return *s ? -EINVAL : 0;
}

/* What cpower_parse_lock() says of @buf (what sysfs passes: to a NUL). */
static int parse_lock_model(const char *buf)
{
	const char *s = buf;
	size_t len;

	while (*s && !kspace(*s))
		s++;
	len = s - buf;
	if (!len)
		return -EINVAL;
	if (*s && *s != '\n') {
		while (kspace(*s))
			s++;
		if (kstrtou64_model(s))
			return -EINVAL;
	}
	return len > NAME_MAX_K ? -ENAMETOOLONG : 0;
}

static int parse_unlock_model(const char *buf)
{
	size_t len = strlen(buf);

	if (len && buf[len - 1] == '\n')
		len--;
	return !len || len > NAME_MAX_K ? -EINVAL : 0;
}

/* ---- generation ---- */

static const char *const timeouts[] = {
	"0", "1", "1000000", "50000000", "300000000", "+7000000",
	"18446744073709551615", "18446744073709551616", "-5", "1x", "",
	"0x10", "5 6", "99999999999",
};

/*
 * A wake_lock or wake_unlock write for the cell of @letter: its bytes in
 * @buf, the length returned. Every name that can be accepted starts with
 * @letter.
 */
static size_t gen_name(struct fz *fz, char letter, char *buf, size_t max,
		       bool lock)
{
	size_t len = 0, n, i;
	unsigned int kind = fz_below(fz, 12);

	switch (kind) {
	case 0: case 1: case 2: case 3:	/* a name of the pool */
		len = snprintf(buf, max, "%c%u", letter,
			       (unsigned int)fz_below(fz, NPOOL));
		break;
	case 4:				/* long: 250..300 bytes */
		n = 250 + fz_below(fz, 51);
		buf[0] = letter;
		memset(buf + 1, 'L', n - 1);
		len = n;
		break;
	case 5:				/* bytes that need escaping */
		buf[0] = letter;
		n = 1 + fz_below(fz, 8);
		for (i = 1; i <= n; i++) {
			unsigned char b = fz_below(fz, 256);

			if (!b || kspace(b))
				b = '\\';
			buf[i] = b;
		}
		len = n + 1;
		break;
	case 6:				/* empty, white space alone */
		len = fz_below(fz, 3);
		memcpy(buf, "\n \t", len);
		if (len == 2)
			buf[0] = ' ';
		break;
	case 7:				/* leading space, inner space */
		len = snprintf(buf, max, fz_chance(fz, 1, 2) ? " %c%u" : "%c%u x",
			       letter, (unsigned int)fz_below(fz, NPOOL));
		break;
	case 8:				/* an embedded NUL */
		len = snprintf(buf, max, "%c%u", letter,
			       (unsigned int)fz_below(fz, NPOOL));
		buf[len++] = '\0';
		buf[len++] = 'z';
		break;
	default:			/* a pool name with a timeout */
		len = snprintf(buf, max, "%c%u%s%s", letter,
			       (unsigned int)fz_below(fz, NPOOL),
			       fz_chance(fz, 1, 4) ? "\t " : " ",
			       timeouts[fz_below(fz, ARRAY_SIZE(timeouts))]);
		break;
	}
	if (fz_chance(fz, 1, 3) && len < max)
		buf[len++] = '\n';
	if (!lock && kind >= 9)
		len = snprintf(buf, max, "%c%u", letter,
			       (unsigned int)fz_below(fz, NPOOL));
	return len;
}

/* Expected answers of a lock/unlock write of @buf[0..len) by an owner. */
static int want_name(const char *data, size_t len, bool lock, int *want)
{
	char tmp[1100];
	int e;

	if (!len) {
		want[0] = 0;	/* sysfs: an empty write stores nothing */
		return 1;
	}
	memcpy(tmp, data, len);
	tmp[len] = '\0';
	e = lock ? parse_lock_model(tmp) : parse_unlock_model(tmp);
	if (e) {
		want[0] = e;
		return 1;
	}
	want[0] = 0;
	want[1] = lock ? -ENOSPC : -EINVAL;
	want[2] = -ENOMEM;
	return 3;
}

static bool wanted(int ret, const int *want, int n, size_t len)
{
	int i;

	if (ret >= 0)
		ret = (size_t)ret == len ? 0 : -EIO;
	for (i = 0; i < n; i++)
		if (want[i] == ret)
			return true;
	return false;
}

static int check_answer(struct fz *fz, struct worker *w, const char *who)
{
	struct wans ans;
	int r = worker_wait(fz, w, &ans);

	if (r == -2)
		return -1;
	if (r == -1)		/* killed meanwhile */
		return 0;
	if (!wanted(ans.ret, w->want, w->nwant, w->req.len))
		return fz_fail(fz, "%s: %s of %u bytes to %s: %d (%s)", who,
			       w->req.op == W_WRITE ? "write" : "read",
			       w->req.len, w->req.path, ans.ret,
			       ans.ret < 0 ? strerror(-ans.ret) : "short");
	return 0;
}

/* Names of a wake_lock/wake_unlock read, all starting with @letter. */
static int check_names(struct fz *fz, const char *what, const char *buf,
		       char letter, char names[][1100], int *nr, int max)
{
	const char *s = buf;

	while (*s && *s != '\n') {
		size_t n = strcspn(s, "\n ");

		if (*s != letter)
			return fz_fail(fz, "%s lists '%.*s', not its cell's (%c)",
				       what, (int)(n > 40 ? 40 : n), s, letter);
		if (names && *nr < max) {
			int i;

			for (i = 0; i < *nr; i++)
				if (strlen(names[i]) == n && !memcmp(names[i], s, n))
					break;
			if (i == *nr && n < 1100) {
				memcpy(names[i], s, n);
				names[i][n] = '\0';
				(*nr)++;
			}
		}
		s += n;
		if (*s == ' ')
			s++;
	}
	return 0;
}

static int collect(struct fz *fz, struct pstate *st)
{
	int i, j;

	for (i = 0; i < NCELLS; i++)
		for (j = 0; j < NWORKERS; j++)
			if (st->cell[i].w[j].busy &&
			    check_answer(fz, &st->cell[i].w[j], st->cell[i].name))
				return -1;
	if (st->unpriv.busy && check_answer(fz, &st->unpriv, "unprivileged"))
		return -1;
	return 0;
}

/* The quiescent checks of one live cell, by the host. */
static int check_cell(struct fz *fz, struct pcell *c)
{
	static char names[80][1100];
	static char buf[4096];
	char path[160], what[64];
	int nr = 0, n, k;
	bool cut = false;

	for (k = 0; k < 2; k++) {
		cell_path(c, path, sizeof(path), k ? "wake_unlock" : "wake_lock");
		n = do_read(path, buf, sizeof(buf));
		if (n < 0)
			return fz_fail(fz, "host: read %s: %s", path, strerror(-n));
		cut |= n > 3000;
		snprintf(what, sizeof(what), "%s's %s", c->name,
			 k ? "wake_unlock" : "wake_lock");
		if (check_names(fz, what, buf, c->letter, names, &nr, 80))
			return -1;
	}
	if (!cut && (unsigned int)nr > c->max_locks)
		return fz_fail(fz, "%s has %d lock names, max_locks %u", c->name,
			       nr, c->max_locks);
	return 0;
}

/* Unlock whatever a cell holds, so that a sequence starts alike. */
static void cell_reset(struct pcell *c)
{
	static char buf[4096];
	char path[160], upath[160];
	char *s, *tok;

	cell_path(c, path, sizeof(path), "wake_lock");
	cell_path(c, upath, sizeof(upath), "wake_unlock");
	if (do_read(path, buf, sizeof(buf)) <= 0)
		return;
	buf[strcspn(buf, "\n")] = '\0';
	for (s = buf; (tok = strsep(&s, " "));) {
		char name[300];
		size_t n = 0;

		/* Undo the \ooo escapes of the listing. */
		while (*tok && n < sizeof(name)) {
			if (tok[0] == '\\' && tok[1] && tok[2] && tok[3]) {
				name[n++] = (tok[1] - '0') * 64 + (tok[2] - '0') * 8 +
					    (tok[3] - '0');
				tok += 4;
			} else {
				name[n++] = *tok++;
			}
		}
		if (n)
			do_write(upath, name, n);
	}
}

/* The cell's host wakeup sources, "cask:NAME:", still listed? */
static bool ws_listed(const char *name)
{
	char key[48], line[512];
	bool found = false;
	FILE *f = fopen(WS_FILE, "r");

	if (!f)
		return false;
	snprintf(key, sizeof(key), "cask:%s:", name);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, key))
			found = true;
	fclose(f);
	return found;
}

/* After a cell's death: its directory and sources go; made again, empty. */
static int check_gone_and_remake(struct fz *fz, struct pstate *st, struct pcell *c)
{
	char path[160], buf[256];
	double t0 = now_ms();
	int n;

	snprintf(path, sizeof(path), CASK "/cells/%s", c->name);
	while (!access(path, F_OK) || (st->ws_readable && ws_listed(c->name))) {
		if (now_ms() - t0 > WAIT_MS)
			return fz_fail(fz, "%s: %s after its death", c->name,
				       access(path, F_OK) ? "host wakeup sources left" :
				       "directory left");
		usleep(2000);
	}
	if (cell_start(fz, c))
		return -1;
	cell_path(c, path, sizeof(path), "wake_lock");
	n = do_read(path, buf, sizeof(buf));
	if (n != 1)
		return fz_fail(fz, "%s made again: wake_lock reads %d '%.40s'",
			       c->name, n, n > 0 ? buf : "");
	cell_path(c, path, sizeof(path), "wake_unlock");
	n = do_read(path, buf, sizeof(buf));
	if (n != 1)
		return fz_fail(fz, "%s made again: wake_unlock reads %d '%.40s'",
			       c->name, n, n > 0 ? buf : "");
	return 0;
}

static const char *const cell_files[] = {
	"wake_lock", "wake_unlock", "state", "wakeup_count", "autosleep",
};

static const char *const votes[] = {
	"mem", "freeze", "mem\n", "disk", "standby", "", "off", "freeze\nx",
	"on",
};

static int power_setup(struct fz *fz)
{
	static const char *const policies[NCELLS] = { "forward", "cap", "deny" };
	static const unsigned int max_locks[NCELLS] = { 6, 64, 3 };
	static const unsigned int uid_base[NCELLS] = { 440000, 450000, 0 };
	struct pstate *st;
	char cmd[48];
	int i, ret;

	double t0 = now_ms();

	/* Being reloaded underneath (the reload driver): wait for it. */
	while (!power_gen()) {
		if (now_ms() - t0 > RELOAD_WAIT_MS)
			return fz_fail(fz, "cask_power is not loaded");
		usleep(10000);
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return fz_fail(fz, "out of memory");
	fz->priv = st;
	st->ws_readable = !access(WS_FILE, R_OK);
	/* The first sequence makes the cells (power_resync()). */
	st->gen = 0;
	for (i = 0; i < NCELLS; i++) {
		struct pcell *c = &st->cell[i];

		c->letter = 'a' + i;
		snprintf(c->name, sizeof(c->name), "fzpower-%c", c->letter);
		c->policy = policies[i];
		c->max_locks = max_locks[i];
		c->uid_base = uid_base[i];
		/* A leftover of an earlier run. */
		snprintf(cmd, sizeof(cmd), "%s\n", c->name);
		write_str(CASK "/unregister", cmd);
	}
	ret = worker_start(&st->unpriv, false, 0, 0, 65534);
	if (ret)
		return fz_fail(fz, "unprivileged worker: %s", strerror(-ret));
	return 0;
}

static void power_teardown(struct fz *fz)
{
	struct pstate *st = fz->priv;
	char name[16];
	int i;

	if (!st)
		return;
	for (i = 0; i < 4; i++)
		if (st->ready[i] > 0)
			close(st->ready[i]);
	for (i = 0; i < NCELLS; i++)
		cell_stop(&st->cell[i]);
	worker_stop(&st->unpriv);
	if (st->host_locks) {
		for (i = 0; i < NPOOL; i++) {
			snprintf(name, sizeof(name), "fzh%d", i);
			write_str("/sys/power/wake_unlock", name);
			write_str(CASK "/cells/host/power/wake_unlock", name);
		}
	}
	free(st);
	fz->priv = NULL;
}

/* A free worker of the cell (waiting for a busy one's answer first). */
static struct worker *pick_worker(struct fz *fz, struct pcell *c, int *err)
{
	struct worker *w = &c->w[fz_below(fz, NWORKERS)];

	*err = w->busy ? check_answer(fz, w, c->name) : 0;
	return w;
}

static int power_sequence_once(struct fz *fz)
{
	static const unsigned int weights[] = {
		150,	/* 0 lock in a cell */
		70,	/* 1 unlock in a cell */
		40,	/* 2 a cell reads its names */
		20,	/* 3 another cell's file */
		30,	/* 4 the host locks in a cell / in its own */
		20,	/* 5 host reads: suspend_blockers, names */
		25,	/* 6 votes: state, autosleep, wakeup_count */
		15,	/* 7 the host's settings */
		10,	/* 8 unprivileged user */
		15,	/* 9 /sys/power/wake_lock of the host */
		20,	/* 10 wait for the answers */
		1,	/* 11 a cell dies: about 1 sequence in 30 */
	};
	struct pstate *st = fz->priv;
	unsigned int len = 1 + fz_below(fz, 24);
	static char data[1100], buf[4096];
	char path[160];
	int i, err = 0;

	st->seq++;
	/* st->gen 0: made again at the next sequence (not "module out"). */
	if ((!st->gen || power_gen() != st->gen) && power_resync(fz, st))
		return -1;
	for (i = 0; i < NCELLS; i++) {
		if (!st->cell[i].alive && cell_start(fz, &st->cell[i]))
			return -1;
		cell_reset(&st->cell[i]);
	}
	while (!err && fz_next(fz, len)) {
		unsigned int op = fz_pick(fz, weights, ARRAY_SIZE(weights));
		struct pcell *c = &st->cell[fz_below(fz, NCELLS)];
		struct worker *w;
		size_t n;
		bool lock;
		int ret;

		switch (op) {
		case 0:
		case 1:
			lock = op == 0;
			w = pick_worker(fz, c, &err);
			if (err)
				break;
			n = gen_name(fz, c->letter, data, sizeof(data) - 2, lock);
			cell_path(c, path, sizeof(path), lock ? "wake_lock" : "wake_unlock");
			w->nwant = want_name(data, n, lock, w->want);
			fz_trace(fz, "%s w%ld: %s '%.*s'%s (%zu bytes)", c->name,
				 (long)(w - c->w), lock ? "lock" : "unlock",
				 (int)(n > 40 ? 40 : n), data, n > 40 ? "..." : "", n);
			worker_send(w, W_WRITE, path, data, n);
			break;
		case 2:
			w = pick_worker(fz, c, &err);
			if (err)
				break;
			lock = fz_chance(fz, 1, 2);
			fz_trace(fz, "%s w%ld: read %s", c->name, (long)(w - c->w),
				 lock ? "wake_lock" : "wake_unlock");
			cell_path(c, path, sizeof(path), lock ? "wake_lock" : "wake_unlock");
			worker_send(w, W_READ, path, "", 0);
			{
				struct wans ans;
				int r = worker_wait(fz, w, &ans);

				if (r == -2)
					return -1;
				if (r == 0 && ans.ret < 0)
					err = fz_fail(fz, "%s reads its %s: %s", c->name,
						      path, strerror(-ans.ret));
				else if (r == 0 && ans.len)
					err = check_names(fz, path, ans.data, c->letter,
							  NULL, NULL, 0);
			}
			break;
		case 3: {
			struct pcell *o = &st->cell[(c - st->cell + 1 +
						     fz_below(fz, NCELLS - 1)) % NCELLS];
			const char *f = cell_files[fz_below(fz, 5)];

			w = pick_worker(fz, c, &err);
			if (err)
				break;
			lock = fz_chance(fz, 1, 2);
			cell_path(o, path, sizeof(path), f);
			fz_trace(fz, "%s w%ld: %s %s's %s", c->name, (long)(w - c->w),
				 lock ? "write" : "read", o->name, f);
			w->want[0] = -EACCES;
			w->nwant = 1;
			if (lock) {
				n = snprintf(data, sizeof(data), "%c1", o->letter);
				worker_send(w, W_WRITE, path, data, n);
			} else {
				worker_send(w, W_READ, path, "", 0);
			}
			break;
		}
		case 4: {
			int want[4], nw;
			bool host_cell = fz_chance(fz, 1, 3);
			char letter = host_cell ? 'h' : c->letter;

			lock = fz_chance(fz, 2, 3);
			n = gen_name(fz, letter, data, sizeof(data) - 2, lock);
			if (host_cell) {
				snprintf(path, sizeof(path), CASK "/cells/host/power/%s",
					 lock ? "wake_lock" : "wake_unlock");
				/* Names the host cell keeps: h + digit, to clean up. */
				if (n && data[0] == 'h')
					st->host_locks = true;
			} else {
				cell_path(c, path, sizeof(path),
					  lock ? "wake_lock" : "wake_unlock");
			}
			nw = want_name(data, n, lock, want);
			fz_trace(fz, "host: %s '%.*s' in %s", lock ? "lock" : "unlock",
				 (int)(n > 40 ? 40 : n), data, host_cell ? "host" : c->name);
			ret = do_write(path, data, n);
			if (!wanted(ret, want, nw, n))
				err = fz_fail(fz, "host: %s '%.*s' in %s: %d",
					      lock ? "lock" : "unlock",
					      (int)(n > 40 ? 40 : n), data, path, ret);
			break;
		}
		case 5:
			switch (fz_below(fz, 5)) {
			case 3: {
				/*
				 * A host power manager's suspend_ready, read
				 * (which arms POLLPRI) and held: across the
				 * cell's death too.
				 */
				int h = fz_below(fz, 4);

				cell_path(c, path, sizeof(path), "suspend_ready");
				fz_trace(fz, "host: hold %s's suspend_ready as %d", c->name, h);
				if (st->ready[h] > 0)
					close(st->ready[h]);
				st->ready[h] = open(path, O_RDONLY | O_CLOEXEC);
				if (st->ready[h] < 0)
					err = fz_fail(fz, "open %s: %s", path, strerror(errno));
				else if (pread(st->ready[h], buf, sizeof(buf), 0) < 0)
					err = fz_fail(fz, "read %s: %s", path, strerror(errno));
				break;
			}
			case 4: {
				struct pollfd p[4];
				int k;

				fz_trace(fz, "host: poll and read the suspend_ready held");
				for (k = 0; k < 4; k++) {
					p[k].fd = st->ready[k] > 0 ? st->ready[k] : -1;
					p[k].events = POLLPRI;
				}
				poll(p, 4, 0);
				for (k = 0; k < 4; k++) {
					if (p[k].fd < 0)
						continue;
					/* Gone with its cell: ENODEV; else 0 or 1. */
					ret = pread(p[k].fd, buf, sizeof(buf), 0);
					if (ret < 0 && errno != ENODEV)
						err = fz_fail(fz, "read a held suspend_ready: %s",
							      strerror(errno));
					else if (ret >= 0 && (ret != 2 ||
							      (buf[0] != '0' && buf[0] != '1')))
						err = fz_fail(fz, "a held suspend_ready: %d bytes",
							      ret);
				}
				break;
			}
			case 0:
				fz_trace(fz, "host: read suspend_blockers");
				ret = do_read(CASK "/power/suspend_blockers", buf, sizeof(buf));
				if (ret <= 0)
					err = fz_fail(fz, "suspend_blockers: %d", ret);
				break;
			case 1:
				fz_trace(fz, "host: check %s", c->name);
				err = check_cell(fz, c);
				break;
			default:
				fz_trace(fz, "host: read the host cell's names");
				ret = do_read(CASK "/cells/host/power/wake_lock", buf, sizeof(buf));
				if (ret > 0)
					err = check_names(fz, "host's wake_lock", buf, 'h',
							  NULL, NULL, 0);
				else
					err = fz_fail(fz, "host's wake_lock: %d", ret);
				break;
			}
			break;
		case 6: {
			const char *f = cell_files[2 + fz_below(fz, 3)];

			w = pick_worker(fz, c, &err);
			if (err)
				break;
			cell_path(c, path, sizeof(path), f);
			if (!strcmp(f, "wakeup_count")) {
				n = snprintf(data, sizeof(data), "%u",
					     (unsigned int)fz_size(fz, 64));
			} else {
				const char *v = votes[fz_below(fz, ARRAY_SIZE(votes))];

				n = strlen(v);
				memcpy(data, v, n);
			}
			fz_trace(fz, "%s w%ld: %s '%.*s'", c->name, (long)(w - c->w), f,
				 (int)n, data);
			w->want[0] = 0;
			w->want[1] = -EINVAL;
			w->want[2] = -EBUSY;
			w->nwant = 3;
			worker_send(w, W_WRITE, path, data, n);
			break;
		}
		case 7: {
			static const char *const bad[] = {
				"1025", "-1", "x", "", "4294967296", "max",
			};
			static const char *const policies[] = {
				"forward", "cap", "deny", "denyx", "", "cap\n",
			};
			unsigned int which = fz_below(fz, 4);

			switch (which) {
			case 0:
				cell_path(c, path, sizeof(path), "policy");
				snprintf(data, sizeof(data), "%s",
					 policies[fz_below(fz, ARRAY_SIZE(policies))]);
				break;
			case 1:
				cell_path(c, path, sizeof(path), "max_hold_ms");
				snprintf(data, sizeof(data), "%u",
					 (unsigned int)fz_size(fz, 100000000));
				break;
			case 2:
				cell_path(c, path, sizeof(path), "max_locks");
				/* The same value, or a bad one: the cap stays. */
				if (fz_chance(fz, 1, 2))
					snprintf(data, sizeof(data), "%u", c->max_locks);
				else
					snprintf(data, sizeof(data), "%s",
						 bad[fz_below(fz, ARRAY_SIZE(bad))]);
				break;
			default:
				cell_path(c, path, sizeof(path), "vote_lease_ms");
				snprintf(data, sizeof(data), "%u",
					 (unsigned int)fz_size(fz, 4000000));
				break;
			}
			n = strlen(data);
			fz_trace(fz, "host: %s '%s'", path, data);
			ret = do_write(path, data, n);
			if (ret < 0 && ret != -EINVAL)
				err = fz_fail(fz, "host: %s '%s': %s", path, data,
					      strerror(-ret));
			else if (ret < 0 && which == 2 && data[0] >= '0' && data[0] <= '9' &&
				 strtoul(data, NULL, 10) <= 1024)
				err = fz_fail(fz, "host: %s '%s': %s", path, data,
					      strerror(-ret));
			/* policy writes change what the cell's sources do. */
			if (which == 0 && ret > 0)
				c->policy = strcmp(data, "forward") ? strcmp(data, "cap") ?
					"deny" : "cap" : "forward";
			break;
		}
		case 8: {
			const char *f = cell_files[fz_below(fz, 5)];
			bool host_file = fz_chance(fz, 1, 3);

			w = &st->unpriv;
			if (w->busy && check_answer(fz, w, "unprivileged")) {
				err = -1;
				break;
			}
			if (host_file)
				snprintf(path, sizeof(path), "/sys/power/%s",
					 fz_chance(fz, 1, 2) ? "wake_lock" : "wake_unlock");
			else
				cell_path(c, path, sizeof(path), f);
			fz_trace(fz, "unprivileged: write %s", path);
			w->want[0] = -EACCES;
			w->want[1] = -EPERM;
			w->nwant = 2;
			worker_send(w, W_WRITE, path, "u1", 2);
			break;
		}
		case 9:
			lock = fz_chance(fz, 2, 3);
			n = snprintf(data, sizeof(data), "fzh%u%s",
				     (unsigned int)fz_below(fz, NPOOL),
				     lock && fz_chance(fz, 1, 3) ? " 20000000" : "");
			if (access("/sys/power/wake_lock", F_OK))
				break;
			fz_trace(fz, "host: /sys/power/%s '%s'",
				 lock ? "wake_lock" : "wake_unlock", data);
			st->host_locks = true;
			ret = do_write(lock ? "/sys/power/wake_lock" : "/sys/power/wake_unlock",
				       data, n);
			if (ret < 0 && ret != -EINVAL && ret != -ENOSPC)
				err = fz_fail(fz, "host: /sys/power: %s", strerror(-ret));
			if (fz_chance(fz, 1, 2)) {
				ret = do_read("/sys/power/wake_lock", buf, sizeof(buf));
				if (ret < 0)
					err = fz_fail(fz, "host: read /sys/power/wake_lock: %s",
						      strerror(-ret));
			}
			break;
		case 10:
			fz_trace(fz, "wait for the answers");
			err = collect(fz, st);
			break;
		case 11: {
			bool unreg = fz_chance(fz, 1, 2);

			fz_trace(fz, "%s dies (%s)", c->name,
				 unreg ? "unregistered" : "its processes killed");
			if (unreg) {
				char cmd[48];

				err = collect(fz, st);
				if (err)
					break;
				snprintf(cmd, sizeof(cmd), "%s\n", c->name);
				ret = write_str(CASK "/unregister", cmd);
				if (ret) {
					err = fz_fail(fz, "unregister %s: %s", c->name,
						      strerror(-ret));
					break;
				}
			}
			/* In flight or not: the answers may never come. */
			for (i = 0; i < NWORKERS; i++)
				worker_stop(&c->w[i]);
			c->alive = false;
			err = check_gone_and_remake(fz, st, c);
			break;
		}
		}
	}
	if (!err)
		err = collect(fz, st);
	for (i = 0; !err && i < NCELLS; i++)
		err = check_cell(fz, &st->cell[i]);
	return err ? -1 : 0;
}

static int power_sequence(struct fz *fz)
{
	struct pstate *st = fz->priv;

	double t0;

	if (!power_sequence_once(fz))
		return 0;
	/*
	 * A module reloaded underneath: nothing this sequence saw counts,
	 * and the next one starts the cells again. An unload removes the
	 * cells' directories before the module's own: give one that is
	 * under way the time to show.
	 */
	for (t0 = now_ms(); now_ms() - t0 < 5000; usleep(10000)) {
		if (power_gen() != st->gen) {
			collect(fz, st);
			st->gen = 0;
			return 0;
		}
	}
	{
		/* What the failure met: the cells' directories, the module. */
		char state[16] = "", more[160];
		int i, o = 0;

		do_read("/sys/module/cask_power/initstate", state, sizeof(state));
		state[strcspn(state, "\n")] = '\0';
		for (i = 0; i < NCELLS; i++) {
			char path[128];

			snprintf(path, sizeof(path), CASK "/cells/%s/power", st->cell[i].name);
			o += snprintf(more + o, sizeof(more) - o, " %s:%s", st->cell[i].name,
				      !access(path, F_OK) ? "power" : "-");
			path[strlen(path) - 6] = '\0';
			o += snprintf(more + o, sizeof(more) - o, "%s",
				      access(path, F_OK) ? "(no cell)" : "");
		}
		printf("# power: after the failure: cask_power %s, gen %s,%s\n", state,
		       power_gen() == st->gen ? "same" : "other", more);
	}
	return -1;
}

static struct fz_driver power_driver = {
	.name = "power",
	.help = "cask_power: wake locks, votes and settings of 3 cells, cell deaths",
	.setup = power_setup,
	.sequence = power_sequence,
	.teardown = power_teardown,
};

FZ_DRIVER(power_driver);
