// SPDX-License-Identifier: GPL-2.0
/*
 * cask-fuzz logger: sequences of operations on /dev/log/main etc. against a model
 * of the rings (Documentation/logger.rst).
 *
 * The generator runs in the host cell and owns its rings while it runs
 * (set to 64 KiB, so that readers fall behind and are overrun, and
 * flushed after each sequence). A second cell is made once in setup: a
 * peer process in an unprivileged user namespace (root inside, a host
 * uid outside) with its own IPC and PID namespaces, which writes and
 * reads its own rings on request.
 *
 * A sequence opens up to FILES files (readers, writers, both; some as an
 * unprivileged uid, which sees only its own entries), writes valid and
 * malformed entries through write() and writev() (empty, one byte, the
 * largest payload and more, split anywhere, with a bad pointer), reads
 * with buffers of every size, polls, blocks in read() and poll() while a
 * waker thread writes (always with a timeout: a lost wakeup fails the
 * sequence), issues every ioctl with good and bad arguments, selects the
 * peer's cell or all cells as the host may, resizes rings through sysfs,
 * and has the peer write, read and flush.
 *
 * Every ring is modelled entry by entry: each read must return exactly
 * the entry the model says (header length, payload length and bytes,
 * pid and tid as the reader's namespace sees them, euid as its user
 * namespace sees it, a time within the write's), every ioctl its value,
 * every refusal its errno. The peer checks that it never reads an entry
 * of the host (its reads must be exactly its own writes), and the host's
 * readers never see the peer's unless they select its cell.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/android_logger.h>

#include "fuzz.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define CELLS		"/sys/kernel/cask/cells/"
#define NBUF		5
#define FILES		8
#define ENTS		4096	/* entries a 128 KiB ring can hold */
#define STORED_HDR	32	/* what an entry costs besides its payload */
#define MAX_PAYLOAD	LOGGER_ENTRY_MAX_PAYLOAD
#define RING_SIZE	65536
#define PARAMS		6
#define PEER_UID	200000	/* host uid of the peer's root */
#define UNPRIV		1000	/* the host uid some files are opened as */
#define SLACK_NS	20000000LL	/* coarse clocks: cask_log.h */
#define WAIT_MS		10000	/* a wakeup later than this is lost */

static const char *const bufs[NBUF] = { "main", "events", "radio", "system", "crash" };

struct ent {
	uint64_t off;
	uint16_t len;
	uint32_t serial;	/* the payload is gen(serial, total) */
	uint32_t total;		/* bytes written, before truncation */
	uint32_t kuid;		/* host uid of the writer */
	int pid, tid;		/* as the host sees them */
	int64_t t0, t1;		/* CLOCK_REALTIME around the write */
};

struct ring {
	uint32_t size;
	uint64_t head, tail;
	struct ent e[ENTS];
	unsigned int first, n;
	bool dirty;		/* to flush after the sequence */
};

enum { SEL_OWN, SEL_PEER, SEL_ALL };

struct file {
	bool used;
	int fd;
	int buf;
	int acc;		/* O_RDONLY, O_WRONLY, O_RDWR */
	bool nonblock;
	bool unpriv;		/* opened as UNPRIV: sees its uid only */
	int version;
	int sel;
	uint64_t off;		/* model position in the ring it reads */
	/* merged readers: where each cell's entries were found last */
	uint64_t moff[2];
	int64_t mlast;		/* time of the last merged entry */
};

static struct {
	int wfd[NBUF];		/* host writers, for flushes */
	uint32_t orig_size[NBUF];
	char peer_cell[64];
	long long peer_id;
	pid_t peer_pid;		/* the peer as the host sees it */
	pid_t peer_middle;
	int peer_sock;
	pthread_t waker;
	int wake_cmd[2], wake_done[2];
	bool waker_up;
	char *guard;		/* a PROT_NONE page */
	bool ready;
} lg = { .peer_sock = -1, .wake_cmd = { -1, -1 }, .wake_done = { -1, -1 } };

static struct {
	struct ring host[NBUF], peer[NBUF];
	uint64_t peer_off[NBUF];	/* the peer's own readers */
	struct file f[FILES];
	uint32_t serial;
	bool host_resized[NBUF];
} m;

static long pg;

/* ---- helpers -------------------------------------------------------- */

static const char *err_name(long r)
{
	static const struct { int err; const char *name; } names[] = {
		{ EINVAL, "EINVAL" }, { EFAULT, "EFAULT" }, { EPERM, "EPERM" },
		{ EACCES, "EACCES" }, { EBADF, "EBADF" }, { ENOENT, "ENOENT" },
		{ EAGAIN, "EAGAIN" }, { EINTR, "EINTR" }, { ESPIPE, "ESPIPE" },
		{ ENOTTY, "ENOTTY" },
	};
	static char buf[32];
	unsigned int i;

	for (i = 0; r < 0 && i < ARRAY_SIZE(names); i++)
		if (-r == names[i].err)
			return names[i].name;
	if (r >= 0)
		snprintf(buf, sizeof(buf), "%ld", r);
	else
		snprintf(buf, sizeof(buf), "errno %ld", -r);
	return buf;
}

static int check(struct fz *fz, long got, long want, const char *what)
{
	char w[32];

	if (got == want)
		return 0;
	snprintf(w, sizeof(w), "%s", err_name(want));
	return fz_fail(fz, "op %u: %s: %s, expected %s", fz->op, what,
		       err_name(got), w);
}

static long xioctl(int fd, unsigned long cmd, unsigned long arg)
{
	long r = syscall(SYS_ioctl, fd, cmd, arg);

	return r < 0 ? -errno : r;
}

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static long read_long(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return atol(buf);
}

static int sysfs_size(const char *cell, int b, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), CELLS "%s/logger/%s/size", cell, bufs[b]);
	return write_str(path, val);
}

/*
 * Byte @j of the payload of entry @serial, @total bytes long: Android's
 * [prio][tag\0][message\0] for most, raw bytes for every fourth.
 */
static unsigned char gen(uint32_t serial, uint32_t j, uint32_t total)
{
	if (serial % 4 == 0)
		return (unsigned char)(serial * 131 + j * 7);
	if (j == 0)
		return serial % 9;
	if (j == total - 1 || j == 9)
		return 0;
	if (j < 9)
		return "0123456789abcdef"[(serial >> (4 * (j - 1))) & 15];
	return 'a' + (serial + j) % 26;
}

/* The first @len bytes of that payload. */
static void gen_fill(unsigned char *p, uint32_t serial, uint32_t len, uint32_t total)
{
	uint32_t j;

	for (j = 0; j < len; j++)
		p[j] = gen(serial, j, total);
}

/* ---- the ring model ---------------------------------------------- */

static struct ent *ent_at(struct ring *r, unsigned int i)
{
	return &r->e[(r->first + i) % ENTS];
}

static void ring_reset(struct ring *r, uint32_t size)
{
	r->size = size;
	r->head = r->tail;
	r->first = 0;
	r->n = 0;
}

static void ring_write(struct ring *r, const struct ent *e)
{
	uint64_t need = STORED_HDR + e->len;
	struct ent *ne;

	while (r->tail + need - r->head > r->size && r->n) {
		r->head += STORED_HDR + ent_at(r, 0)->len;
		r->first = (r->first + 1) % ENTS;
		r->n--;
	}
	if (r->n == ENTS) {	/* never with a 128 KiB ring */
		r->head += STORED_HDR + ent_at(r, 0)->len;
		r->first = (r->first + 1) % ENTS;
		r->n--;
	}
	ne = ent_at(r, r->n++);
	*ne = *e;
	ne->off = r->tail;
	r->tail += need;
	r->dirty = true;
}

static void ring_flush(struct ring *r)
{
	r->head = r->tail;
	r->first = 0;
	r->n = 0;
}

/* The entry at offset @off, or NULL. */
static struct ent *ring_find(struct ring *r, uint64_t off)
{
	unsigned int i;

	for (i = 0; i < r->n; i++) {
		struct ent *e = ent_at(r, i);

		if (e->off == off)
			return e;
		if (e->off > off)
			break;
	}
	return NULL;
}

static bool visible(const struct file *f, const struct ent *e)
{
	return !f->unpriv || e->kuid == UNPRIV;
}

static struct ring *file_ring(struct file *f)
{
	return f->sel == SEL_PEER ? &m.peer[f->buf] : &m.host[f->buf];
}

/* cask_log_seek(): the next entry @f may see, moving past the others. */
static struct ent *seek(struct file *f)
{
	struct ring *r = file_ring(f);
	struct ent *e;

	if (f->off < r->head)
		f->off = r->head;
	while (f->off < r->tail) {
		e = ring_find(r, f->off);
		if (!e)
			return NULL;	/* the model lost its way: caught later */
		if (visible(f, e))
			return e;
		f->off += STORED_HDR + e->len;
	}
	return NULL;
}

static int hdr_len(int version)
{
	if (version == CASK_LOGGER_VERSION_CELL)
		return sizeof(struct cask_logger_entry);
	return version == 2 ? sizeof(struct logger_entry) :
	       sizeof(struct user_logger_entry_compat);
}

/* ---- checking an entry read -------------------------------------- */

/*
 * What @buf (@n bytes, a reader of @version) must hold for entry @e of
 * the host (@peer false) or the peer's cell, read by the host.
 */
static int check_entry(struct fz *fz, const unsigned char *buf, long n,
		       int version, const struct ent *e, bool peer,
		       const char *what)
{
	const struct logger_entry *h = (const void *)buf;
	const struct cask_logger_entry *ce = (const void *)buf;
	int hl = hdr_len(version);
	unsigned char want[MAX_PAYLOAD];
	int64_t t;

	if (n != hl + e->len)
		return fz_fail(fz, "op %u: %s: read %ld bytes, expected %d + %u (serial %u)",
			       fz->op, what, n, hl, e->len, e->serial);
	if (h->len != e->len)
		return fz_fail(fz, "op %u: %s: header len %u, expected %u",
			       fz->op, what, h->len, e->len);
	if (version == 1 && h->hdr_size != 0)
		return fz_fail(fz, "op %u: %s: v1 __pad %u", fz->op, what, h->hdr_size);
	if (version != 1 && h->hdr_size != hl)
		return fz_fail(fz, "op %u: %s: hdr_size %u, expected %d",
			       fz->op, what, h->hdr_size, hl);
	if (h->pid != e->pid || h->tid != e->tid)
		return fz_fail(fz, "op %u: %s: pid/tid %d/%d, expected %d/%d",
			       fz->op, what, h->pid, h->tid, e->pid, e->tid);
	t = h->sec * 1000000000LL + h->nsec;
	if (h->nsec < 0 || h->nsec >= 1000000000 || t < e->t0 - SLACK_NS ||
	    t > e->t1 + 1000000)
		return fz_fail(fz, "op %u: %s: time %d.%09d outside the write's",
			       fz->op, what, h->sec, h->nsec);
	if (version != 1 && h->euid != e->kuid)
		return fz_fail(fz, "op %u: %s: euid %u, expected %u",
			       fz->op, what, h->euid, e->kuid);
	if (version == CASK_LOGGER_VERSION_CELL) {
		long long id = peer ? lg.peer_id : 0;
		const char *name = peer ? lg.peer_cell : "host";

		if ((long long)ce->cell_id != id || strcmp(ce->cell, name))
			return fz_fail(fz, "op %u: %s: cell %llu \"%.33s\", expected %lld \"%s\"",
				       fz->op, what, (unsigned long long)ce->cell_id,
				       ce->cell, id, name);
	}
	gen_fill(want, e->serial, e->len, e->total);
	if (memcmp(buf + hl, want, e->len))
		return fz_fail(fz, "op %u: %s: payload of serial %u differs",
			       fz->op, what, e->serial);
	return 0;
}

/* ---- the waker: a thread that writes while we wait ----------------- */

struct wake_cmd {
	int fd;
	uint32_t serial, total;
};

struct wake_done {
	long ret;
	int tid;
	int64_t t0, t1;
};

static void *waker_main(void *arg)
{
	static unsigned char payload[16384];
	struct wake_cmd c;
	struct wake_done d;

	(void)arg;
	fz_cov_thread_start();
	while (read(lg.wake_cmd[0], &c, sizeof(c)) == sizeof(c)) {
		gen_fill(payload, c.serial, c.total, c.total);
		d.tid = gettid();
		d.t0 = realtime_ns();
		d.ret = write(c.fd, payload, c.total);
		if (d.ret < 0)
			d.ret = -errno;
		d.t1 = realtime_ns();
		fz_cov_collect();
		if (write(lg.wake_done[1], &d, sizeof(d)) != sizeof(d))
			break;
	}
	return NULL;
}

/* ---- the peer: a cell in an unprivileged user namespace ------------ */

enum { P_WRITE, P_READ, P_FLUSH, P_FLUSH_SOME, P_SIZE, P_QUIT };

struct preq {
	int op, buf;
	uint32_t serial, total;
};

struct prep {
	long ret;
	uint32_t count;		/* entries read */
	uint64_t hash;		/* of their headers (but times) and payloads */
	int64_t t0, t1;
	char msg[128];
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

/* Hash of one entry as the peer reads it: v2, its own namespaces. */
static uint64_t peer_hash(uint64_t h, uint16_t len, const unsigned char *payload)
{
	struct logger_entry e = { .len = len, .hdr_size = sizeof(e),
				  .pid = 1, .tid = 1, .euid = 0 };

	h = fnv(h, &e, sizeof(e));
	return fnv(h, payload, len);
}

static void __attribute__((noreturn)) peer_main(int sock)
{
	static unsigned char payload[16384], rbuf[LOGGER_ENTRY_MAX_LEN];
	int rfd[NBUF], wfd[NBUF], b, v = 2;
	struct preq q;
	struct prep rep;

	for (b = 0; b < NBUF; b++) {
		char path[64];

		snprintf(path, sizeof(path), "/dev/log/%s", bufs[b]);
		rfd[b] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		wfd[b] = open(path, O_WRONLY | O_CLOEXEC);
		if (rfd[b] < 0 || wfd[b] < 0 || ioctl(rfd[b], LOGGER_SET_VERSION, &v))
			_exit(3);
	}
	while (read(sock, &q, sizeof(q)) == sizeof(q)) {
		memset(&rep, 0, sizeof(rep));
		b = q.buf % NBUF;
		switch (q.op) {
		case P_WRITE:
			gen_fill(payload, q.serial, q.total, q.total);
			rep.t0 = realtime_ns();
			rep.ret = write(wfd[b], payload, q.total);
			rep.t1 = realtime_ns();
			if (rep.ret < 0)
				rep.ret = -errno;
			break;
		case P_READ:
			rep.hash = 0xcbf29ce484222325ULL;
			for (;;) {
				const struct logger_entry *e = (const void *)rbuf;
				ssize_t n = read(rfd[b], rbuf, sizeof(rbuf));

				if (n < 0) {
					rep.ret = errno == EAGAIN ? 0 : -errno;
					break;
				}
				if (n < (ssize_t)sizeof(*e) || n != (ssize_t)sizeof(*e) + e->len) {
					snprintf(rep.msg, sizeof(rep.msg),
						 "peer read %zd bytes for an entry of %u",
						 n, e->len);
					break;
				}
				/* Only its own entries: pid 1 of its namespace, its root. */
				if (e->pid != 1 || e->tid != 1 || e->euid != 0)
					snprintf(rep.msg, sizeof(rep.msg),
						 "peer read an entry of pid %d tid %d euid %u",
						 e->pid, e->tid, e->euid);
				rep.hash = peer_hash(rep.hash, e->len, rbuf + sizeof(*e));
				rep.count++;
			}
			break;
		case P_FLUSH:
			rep.ret = ioctl(wfd[b], LOGGER_FLUSH_LOG) ? -errno : 0;
			break;
		case P_FLUSH_SOME:	/* the buffers of mask q.serial */
			for (b = 0; b < NBUF; b++)
				if ((q.serial & (1U << b)) && ioctl(wfd[b], LOGGER_FLUSH_LOG))
					rep.ret = -errno;
			break;
		case P_SIZE:
			rep.ret = ioctl(wfd[b], LOGGER_GET_LOG_BUF_SIZE);
			break;
		case P_QUIT:
			_exit(0);
		}
		if (write(sock, &rep, sizeof(rep)) != sizeof(rep))
			break;
	}
	_exit(0);
}

static int peer_call(const struct preq *q, struct prep *rep)
{
	if (write(lg.peer_sock, q, sizeof(*q)) != sizeof(*q) ||
	    read(lg.peer_sock, rep, sizeof(*rep)) != sizeof(*rep))
		return -1;
	return 0;
}

/* Fork the peer: user, IPC and PID namespaces; report its cell. */
static int peer_start(struct fz *fz)
{
	int sp[2], sync[2], go[2];
	char c, buf[64], path[64], link[64];
	pid_t init;
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) ||
	    pipe2(sync, O_CLOEXEC) || pipe2(go, O_CLOEXEC))
		return fz_fail(fz, "pipes: %s", strerror(errno));
	lg.peer_middle = fork();
	if (lg.peer_middle < 0)
		return fz_fail(fz, "fork: %s", strerror(errno));
	if (!lg.peer_middle) {
		close(sp[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWIPC | CLONE_NEWPID) ||
		    write(sync[1], "u", 1) != 1 || read(go[0], &c, 1) != 1 ||
		    setresgid(0, 0, 0) || setresuid(0, 0, 0))
			_exit(1);
		init = fork();
		if (!init) {
			/* Our host pid, from the host's /proc. */
			n = readlink("/proc/self", link, sizeof(link) - 1);
			link[n > 0 ? n : 0] = '\0';
			if (write(sp[1], link, sizeof(link)) != sizeof(link))
				_exit(2);
			peer_main(sp[1]);
		}
		waitpid(init, NULL, 0);
		_exit(0);
	}
	close(sp[1]);
	close(sync[1]);
	close(go[0]);
	lg.peer_sock = sp[0];
	if (read(sync[0], &c, 1) != 1)
		return fz_fail(fz, "the peer did not start");
	snprintf(buf, sizeof(buf), "0 %d 65536\n", PEER_UID);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", lg.peer_middle);
	if (write_str(path, buf))
		return fz_fail(fz, "%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/gid_map", lg.peer_middle);
	if (write_str(path, buf))
		return fz_fail(fz, "%s: %s", path, strerror(errno));
	if (write(go[1], "g", 1) != 1)
		return fz_fail(fz, "the peer did not start");
	close(go[1]);
	close(sync[0]);
	if (read(lg.peer_sock, link, sizeof(link)) != sizeof(link))
		return fz_fail(fz, "the peer did not report");
	lg.peer_pid = atoi(link);
	return 0;
}

/* The peer's cell: the one whose pid_ns is not ours and has the peer. */
static int peer_find_cell(struct fz *fz)
{
	char path[128], self[64];
	struct stat st;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", lg.peer_pid);
	if (stat(path, &st))
		return fz_fail(fz, "%s: %s", path, strerror(errno));
	snprintf(self, sizeof(self), "ipc-%lu", (unsigned long)st.st_ino);
	snprintf(path, sizeof(path), CELLS "%s/id", self);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fz_fail(fz, "no cell %s for the peer: %s", self, strerror(errno));
	n = read(fd, path, sizeof(path) - 1);
	close(fd);
	path[n > 0 ? n : 0] = '\0';
	lg.peer_id = atoll(path);
	snprintf(lg.peer_cell, sizeof(lg.peer_cell), "%s", self);
	return 0;
}

/* ---- operations ---------------------------------------------------- */

static int pick_file(uint64_t r, bool (*ok)(const struct file *f))
{
	int idx[FILES], n = 0, i;

	for (i = 0; i < FILES; i++)
		if (m.f[i].used && (!ok || ok(&m.f[i])))
			idx[n++] = i;
	return n ? idx[r % n] : -1;
}

static bool can_read(const struct file *f)
{
	return f->acc != O_WRONLY;
}

static bool can_write(const struct file *f)
{
	return f->acc != O_RDONLY;
}

/*
 * As UNPRIV (egid and euid), or back to root: this thread only, with
 * the raw system calls (glibc's would change the waker thread too, and
 * signal it to do so, which costs milliseconds under TCG).
 */
static void become(bool unpriv)
{
	long id = unpriv ? UNPRIV : 0;

	if (unpriv) {
		if (syscall(SYS_setresgid, -1, id, -1) || syscall(SYS_setresuid, -1, id, -1))
			abort();
	} else {
		if (syscall(SYS_setresuid, -1, id, -1) || syscall(SYS_setresgid, -1, id, -1))
			abort();
	}
}

static int op_open(struct fz *fz, const uint64_t *p)
{
	static const int accs[] = { O_RDONLY, O_RDONLY, O_RDONLY, O_WRONLY, O_RDWR, O_RDWR };
	int i, acc = accs[p[1] % ARRAY_SIZE(accs)], b = p[0] % NBUF;
	bool nonblock = p[2] % 3 != 0, unpriv = p[3] % 4 == 0;
	struct file *f = NULL;
	char path[64];
	int fd;

	for (i = 0; i < FILES; i++)
		if (!m.f[i].used) {
			f = &m.f[i];
			break;
		}
	if (!f) {
		fz_trace(fz, "open: no free slot");
		return 0;
	}
	snprintf(path, sizeof(path), "/dev/log/%s", bufs[b]);
	if (unpriv)
		become(true);
	fd = open(path, acc | (nonblock ? O_NONBLOCK : 0) | O_CLOEXEC);
	if (unpriv)
		become(false);
	fz_trace(fz, "open(%s, %s%s%s) = f%d fd %d", bufs[b],
		 acc == O_RDONLY ? "r" : acc == O_WRONLY ? "w" : "rw",
		 nonblock ? ", nonblock" : "", unpriv ? ", unprivileged" : "", i, fd);
	if (fd < 0)
		return fz_fail(fz, "op %u: open %s: %s", fz->op, path, strerror(errno));
	memset(f, 0, sizeof(*f));
	f->used = true;
	f->fd = fd;
	f->buf = b;
	f->acc = acc;
	f->nonblock = nonblock;
	f->unpriv = unpriv;
	f->version = 1;
	f->off = m.host[b].head;
	m.host[b].dirty = true;
	return 0;
}

static int op_close(struct fz *fz, const uint64_t *p)
{
	int i = pick_file(p[0], NULL);

	if (i < 0) {
		fz_trace(fz, "close: none");
		return 0;
	}
	fz_trace(fz, "close(f%d)", i);
	close(m.f[i].fd);
	m.f[i].used = false;
	return 0;
}

/* A payload length biased to the edges. */
static uint32_t pick_len(uint64_t r)
{
	static const uint32_t edges[] = {
		0, 1, 2, 3, 11, 12, MAX_PAYLOAD - 1, MAX_PAYLOAD, MAX_PAYLOAD + 1,
		LOGGER_ENTRY_MAX_LEN, 8192,
	};

	if (r % 3 == 0)
		return edges[(r >> 8) % ARRAY_SIZE(edges)];
	return 1 + (r >> 8) % (r % 5 == 1 ? MAX_PAYLOAD : 200);
}

/*
 * Write entry @serial of @total bytes through @fd, split into iovecs by
 * @split; @bad puts a PROT_NONE or kernel pointer into one of them.
 * Returns what write()/writev() returned (or -errno), and the expected.
 */
static long do_write(int fd, uint32_t serial, uint32_t total, uint64_t split,
		     int bad, long *exp, int64_t *t0, int64_t *t1)
{
	static unsigned char payload[16384];
	struct iovec iov[8];
	unsigned int n = 0, k;
	uint32_t at = 0, stored = total < MAX_PAYLOAD ? total : MAX_PAYLOAD;
	long r;

	gen_fill(payload, serial, total, total);
	if (split % 3 == 0 && total > 10) {
		/* liblog: [prio], [tag\0], [message\0] */
		iov[0] = (struct iovec){ payload, 1 };
		iov[1] = (struct iovec){ payload + 1, 9 };
		iov[2] = (struct iovec){ payload + 10, total - 10 };
		n = 3;
	} else {
		unsigned int parts = 1 + (split >> 4) % 6;

		for (k = 0; k < parts; k++) {
			uint32_t l = k == parts - 1 ? total - at :
				     (uint32_t)((split >> (8 + 3 * k)) % (total - at + 1));

			iov[n++] = (struct iovec){ payload + at, l };
			at += l;
		}
	}
	*exp = stored;
	if (bad) {
		/* The iovec: a PROT_NONE page, or a kernel address. */
		k = (split >> 40) % n;
		if (!iov[k].iov_len)
			iov[k].iov_len = 1;
		at = 0;
		for (unsigned int j = 0; j < k; j++)
			at += iov[j].iov_len;
		if (bad == 1) {
			iov[k].iov_base = lg.guard;
			if (iov[k].iov_len > (size_t)pg)
				iov[k].iov_len = pg;
			if (at < MAX_PAYLOAD)
				*exp = -EFAULT;
			else
				*exp = MAX_PAYLOAD;
		} else {
			iov[k].iov_base = (void *)0xffff888000000000ULL;
			*exp = -EFAULT;
		}
		total = 0;
		for (unsigned int j = 0; j < n; j++)
			total += iov[j].iov_len;
		if (*exp >= 0)
			*exp = total < MAX_PAYLOAD ? total : MAX_PAYLOAD;
	}
	if (!total && *exp >= 0)
		*exp = 0;
	*t0 = realtime_ns();
	if (n == 1 && !bad)
		r = write(fd, iov[0].iov_base, iov[0].iov_len);
	else
		r = writev(fd, iov, n);
	*t1 = realtime_ns();
	return r < 0 ? -errno : r;
}

static int op_write(struct fz *fz, const uint64_t *p)
{
	int i = pick_file(p[0], NULL), bad = 0;
	bool unpriv = p[4] % 4 == 0;
	uint32_t total = pick_len(p[1]);
	struct file *f;
	struct ent e;
	long r, exp;

	if (i < 0) {
		fz_trace(fz, "write: none");
		return 0;
	}
	f = &m.f[i];
	if (p[3] % 16 == 0)
		bad = 1 + (p[3] >> 8) % 2;
	e.serial = ++m.serial;
	if (unpriv)
		become(true);
	r = do_write(f->fd, e.serial, total, p[2], bad, &exp, &e.t0, &e.t1);
	if (unpriv)
		become(false);
	if (!can_write(f))
		exp = -EBADF;
	fz_trace(fz, "write(f%d %s, serial %u, %u bytes, split %#llx%s%s) = %s",
		 i, bufs[f->buf], e.serial, total,
		 (unsigned long long)(p[2] & 0xffffff),
		 bad ? ", bad pointer" : "", unpriv ? ", unprivileged" : "",
		 err_name(r));
	if (check(fz, r, exp, "write"))
		return -1;
	if (r <= 0)
		return 0;
	/* A bad pointer past the payload: the payload is still ours. */
	e.total = total;
	e.len = r;
	e.kuid = unpriv ? UNPRIV : 0;
	e.pid = getpid();
	e.tid = gettid();
	ring_write(&m.host[f->buf], &e);
	return 0;
}

/* Many entries at once: readers fall behind and are overrun. */
static int op_flood(struct fz *fz, const uint64_t *p)
{
	int b = p[0] % NBUF, k, n = 4 + p[1] % 60;
	uint32_t total = p[2] % 2 ? MAX_PAYLOAD : 1 + p[3] % 300;
	struct ent e;
	long r, exp;

	for (k = 0; k < n; k++) {
		e.serial = ++m.serial;
		r = do_write(lg.wfd[b], e.serial, total, 1, 0, &exp, &e.t0, &e.t1);
		if (check(fz, r, exp, "flood write"))
			return -1;
		e.total = total;
		e.len = r;
		e.kuid = 0;
		e.pid = getpid();
		e.tid = gettid();
		ring_write(&m.host[b], &e);
	}
	fz_trace(fz, "flood(%s, %d entries of %u bytes, serials to %u)",
		 bufs[b], n, total, m.serial);
	return 0;
}

/* Read one entry from @f with a buffer of @size; check it all. */
static int read_one(struct fz *fz, int i, size_t size, bool may_block, long *got,
		    bool bad)
{
	static unsigned char buf[LOGGER_ENTRY_MAX_LEN + 64];
	struct file *f = &m.f[i];
	uint64_t off0 = f->off;
	struct ent *e = NULL;
	long r, exp;

	if (size > sizeof(buf))
		size = sizeof(buf);
	if (!can_read(f)) {
		exp = -EBADF;
	} else if (f->sel == SEL_ALL) {
		exp = 1;	/* checked below */
	} else {
		e = seek(f);
		if (!e)
			exp = -EAGAIN;
		else if (size < (size_t)hdr_len(f->version) + e->len)
			exp = -EINVAL;
		else if (bad)
			exp = -EFAULT;	/* and the entry stays unread */
		else
			exp = hdr_len(f->version) + e->len;
	}
	if (exp == -EAGAIN && !f->nonblock && !may_block) {
		/* Would block for ever: not read, so the kernel did not seek. */
		f->off = off0;
		*got = -EAGAIN;
		return 0;
	}
	if (f->sel == SEL_ALL && can_read(f) && !f->nonblock && !may_block) {
		/* Other cells' entries are not modelled: read only if any. */
		struct pollfd pfd = { .fd = f->fd, .events = POLLIN };

		if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLIN)) {
			*got = -EAGAIN;
			return 0;
		}
	}
	/* A model that expects an entry the kernel lacks must not hang. */
	if (!f->nonblock)
		setitimer(ITIMER_REAL, &(struct itimerval){ .it_value = { WAIT_MS / 1000, 0 } },
			  NULL);
	r = read(f->fd, bad ? (void *)lg.guard : buf, size);
	r = r < 0 ? -errno : r;
	if (!f->nonblock)
		setitimer(ITIMER_REAL, &(struct itimerval){ 0 }, NULL);
	*got = r;
	if (f->sel == SEL_ALL && can_read(f)) {
		/* Merged: the earliest entry of some cell. */
		unsigned int c, k;

		if (r == -EAGAIN || r == -EINVAL || (bad && r == -EFAULT))
			return 0;
		if (r < 0)
			return check(fz, r, 0, "merged read");
		for (c = 0; c < 2; c++) {
			struct ring *ring = c ? &m.peer[f->buf] : &m.host[f->buf];
			const struct logger_entry *h = (const void *)buf;
			unsigned char want[MAX_PAYLOAD];

			for (k = 0; k < ring->n; k++) {
				struct ent *ce = ent_at(ring, k);
				int64_t t = h->sec * 1000000000LL + h->nsec;

				if (ce->off < f->moff[c] || ce->len != h->len)
					continue;
				if (r != hdr_len(f->version) + ce->len || h->pid != ce->pid)
					continue;
				gen_fill(want, ce->serial, ce->len, ce->total);
				if (memcmp(buf + hdr_len(f->version), want, ce->len))
					continue;
				if (check_entry(fz, buf, r, f->version, ce, c, "merged read"))
					return -1;
				if (t < f->mlast)
					return fz_fail(fz, "op %u: merged read: time went back",
						       fz->op);
				f->mlast = t;
				f->moff[c] = ce->off + STORED_HDR + ce->len;
				return 0;
			}
		}
		/* Not ours: another cell's (another generator's) entry. */
		return 0;
	}
	if (check(fz, r, exp, "read"))
		return -1;
	if (r <= 0)
		return 0;
	if (check_entry(fz, buf, r, f->version, e, f->sel == SEL_PEER, "read"))
		return -1;
	f->off = e->off + STORED_HDR + e->len;
	return 0;
}

static int op_read(struct fz *fz, const uint64_t *p)
{
	int i = pick_file(p[0], NULL);
	size_t size;
	bool bad;
	long got;
	int hl;

	if (i < 0) {
		fz_trace(fz, "read: none");
		return 0;
	}
	hl = hdr_len(m.f[i].version);
	bad = p[3] % 16 == 0;
	switch (p[1] % 6) {
	case 0:
		size = hl + p[2] % 64;	/* maybe too small */
		break;
	case 1:
		size = p[2] % (hl + 1);
		break;
	case 2:
		size = hl + MAX_PAYLOAD;
		break;
	default:
		size = LOGGER_ENTRY_MAX_LEN;
		break;
	}
	if (read_one(fz, i, size, false, &got, bad))
		return -1;
	fz_trace(fz, "read(f%d %s, %zu%s) = %s", i, bufs[m.f[i].buf], size,
		 bad ? ", bad buffer" : "", err_name(got));
	return 0;
}

/* Read until there is nothing (or a few hundred). */
static int op_drain(struct fz *fz, const uint64_t *p)
{
	int i = pick_file(p[0], can_read), k;
	long got = 0;

	if (i < 0) {
		fz_trace(fz, "drain: none");
		return 0;
	}
	for (k = 0; k < 300; k++) {
		if (read_one(fz, i, LOGGER_ENTRY_MAX_LEN, false, &got, false))
			return -1;
		if (got < 0)
			break;
	}
	fz_trace(fz, "drain(f%d %s): %d entries, then %s", i, bufs[m.f[i].buf], k,
		 err_name(got));
	return 0;
}

static int op_poll(struct fz *fz, const uint64_t *p)
{
	int i = pick_file(p[0], NULL), r;
	struct pollfd pfd;
	struct file *f;
	short want;

	if (i < 0) {
		fz_trace(fz, "poll: none");
		return 0;
	}
	f = &m.f[i];
	pfd = (struct pollfd){
		.fd = f->fd,
		.events = POLLIN | POLLOUT | (p[1] & 1 ? POLLRDNORM : 0),
	};
	r = poll(&pfd, 1, 0);
	fz_trace(fz, "poll(f%d %s) = %d, %#x", i, bufs[f->buf], r, pfd.revents);
	if (r != 1)
		return fz_fail(fz, "op %u: poll: %d (%s)", fz->op, r, strerror(errno));
	want = POLLOUT;
	if (can_read(f) && f->sel != SEL_ALL && seek(f))
		want |= POLLIN | (p[1] & 1 ? POLLRDNORM : 0);
	if (f->sel == SEL_ALL)
		pfd.revents &= ~(POLLIN | POLLRDNORM);
	if ((pfd.revents & ~POLLWRNORM) != want)
		return fz_fail(fz, "op %u: poll revents %#x, expected %#x", fz->op,
			       pfd.revents, want);
	return 0;
}

static void alarm_handler(int sig)
{
	(void)sig;
}

/*
 * Block in poll() or read() of a reader with nothing to read while the
 * waker thread writes one entry it can see: a lost wakeup times out.
 */
static int op_wait(struct fz *fz, const uint64_t *p)
{
	static unsigned char rbuf[LOGGER_ENTRY_MAX_LEN];
	int i = pick_file(p[0], can_read), r;
	uint64_t off0;
	bool use_read = p[1] % 2;
	struct wake_cmd c;
	struct wake_done d;
	struct file *f;
	struct pollfd pfd;
	long got = 0;
	struct ent e;

	if (i < 0 || !lg.waker_up) {
		fz_trace(fz, "wait: none");
		return 0;
	}
	f = &m.f[i];
	off0 = f->off;
	if (f->sel != SEL_OWN || f->unpriv || seek(f)) {
		/* Only looked: the kernel's position did not move. */
		f->off = off0;
		fz_trace(fz, "wait(f%d): not an empty reader of its own cell", i);
		return 0;
	}
	c.fd = lg.wfd[f->buf];
	c.serial = ++m.serial;
	c.total = 1 + p[2] % 100;
	if (write(lg.wake_cmd[1], &c, sizeof(c)) != sizeof(c))
		return fz_fail(fz, "op %u: the waker is gone", fz->op);
	if (use_read) {
		struct itimerval it = { .it_value = { WAIT_MS / 1000, 0 } };

		/* Blocking, even if the file is not. */
		if (f->nonblock)
			fcntl(f->fd, F_SETFL, fcntl(f->fd, F_GETFL) & ~O_NONBLOCK);
		f->nonblock = false;
		setitimer(ITIMER_REAL, &it, NULL);
		got = read(f->fd, rbuf, sizeof(rbuf));
		got = got < 0 ? -errno : got;
		setitimer(ITIMER_REAL, &(struct itimerval){ 0 }, NULL);
		r = 0;
	} else {
		pfd = (struct pollfd){ .fd = f->fd, .events = POLLIN };
		r = poll(&pfd, 1, WAIT_MS);
	}
	if (read(lg.wake_done[0], &d, sizeof(d)) != sizeof(d))
		return fz_fail(fz, "op %u: the waker is gone", fz->op);
	if (d.ret != c.total)
		return fz_fail(fz, "op %u: the waker's write: %s", fz->op, err_name(d.ret));
	e.serial = c.serial;
	e.total = c.total;
	e.len = c.total;
	e.kuid = 0;
	e.pid = getpid();
	e.tid = d.tid;
	e.t0 = d.t0;
	e.t1 = d.t1;
	ring_write(&m.host[f->buf], &e);
	if (use_read) {
		struct ent *me = seek(f);

		fz_trace(fz, "blocking read(f%d %s) while the waker writes serial %u = %s",
			 i, bufs[f->buf], c.serial, err_name(got));
		if (got < 0)
			return fz_fail(fz, "op %u: blocking read: %s (a lost wakeup?)",
				       fz->op, err_name(got));
		if (!me)
			return fz_fail(fz, "op %u: the model lost the waker's entry", fz->op);
		if (check_entry(fz, rbuf, got, f->version, me, false, "blocking read"))
			return -1;
		f->off = me->off + STORED_HDR + me->len;
		if (!(p[3] % 2)) {
			fcntl(f->fd, F_SETFL, fcntl(f->fd, F_GETFL) | O_NONBLOCK);
			f->nonblock = true;
		}
		return 0;
	}
	fz_trace(fz, "poll(f%d %s) while the waker writes serial %u = %d",
		 i, bufs[f->buf], c.serial, r);
	if (r != 1 || !(pfd.revents & POLLIN))
		return fz_fail(fz, "op %u: poll: %d, revents %#x: a lost wakeup",
			       fz->op, r, pfd.revents);
	return 0;
}

static int op_ioctl(struct fz *fz, const uint64_t *p)
{
	int i = pick_file(p[0], NULL), kind = p[1] % 9, v;
	bool rd, wr, unpriv = p[3] % 4 == 0;
	struct ring *ring;
	struct file *f;
	struct ent *e;
	long r, exp;
	const char *what;

	if (i < 0) {
		fz_trace(fz, "ioctl: none");
		return 0;
	}
	f = &m.f[i];
	rd = can_read(f);
	wr = can_write(f);
	ring = file_ring(f);
	switch (kind) {
	case 0:
		what = "LOGGER_GET_LOG_BUF_SIZE";
		exp = f->sel == SEL_ALL ? -EINVAL : (long)ring->size;
		r = xioctl(f->fd, LOGGER_GET_LOG_BUF_SIZE, 0);
		break;
	case 1:
		what = "LOGGER_GET_LOG_LEN";
		exp = !rd ? -EBADF :
		      (long)(ring->tail - (f->off > ring->head ? f->off : ring->head));
		r = xioctl(f->fd, LOGGER_GET_LOG_LEN, 0);
		if (rd && f->sel == SEL_ALL)
			exp = r < 0 ? 0 : r;	/* every cell's: not modelled */
		break;
	case 2:
		what = "LOGGER_GET_NEXT_ENTRY_LEN";
		e = rd && f->sel != SEL_ALL ? seek(f) : NULL;
		exp = !rd ? -EBADF : e ? hdr_len(f->version) + e->len : 0;
		r = xioctl(f->fd, LOGGER_GET_NEXT_ENTRY_LEN, 0);
		if (rd && f->sel == SEL_ALL)
			exp = r < 0 ? 0 : r;
		break;
	case 3:
		what = "LOGGER_FLUSH_LOG";
		if (unpriv)
			become(true);
		r = xioctl(f->fd, LOGGER_FLUSH_LOG, 0);
		if (unpriv)
			become(false);
		exp = !wr ? -EBADF : unpriv ? -EPERM : f->sel == SEL_ALL ? -EINVAL : 0;
		if (!r)
			ring_flush(ring);
		break;
	case 4:
		what = "LOGGER_GET_VERSION";
		exp = rd ? f->version : -EBADF;
		r = xioctl(f->fd, LOGGER_GET_VERSION, 0);
		break;
	case 5:
	case 6: {
		static const int versions[] = { 1, 2, 2, 1, 0, 3, -1, CASK_LOGGER_VERSION_CELL,
						CASK_LOGGER_VERSION_CELL };

		what = "LOGGER_SET_VERSION";
		v = versions[p[2] % ARRAY_SIZE(versions)];
		if (p[2] % 32 == 31) {
			r = xioctl(f->fd, LOGGER_SET_VERSION, (unsigned long)lg.guard);
			exp = rd ? -EFAULT : -EBADF;
			break;
		}
		r = xioctl(f->fd, LOGGER_SET_VERSION, (unsigned long)&v);
		if (!rd)
			exp = -EBADF;
		else if (v == 1 || v == 2 || (v == CASK_LOGGER_VERSION_CELL && !f->unpriv))
			exp = 0;
		else
			exp = -EINVAL;
		if (!r && !exp)
			f->version = v;
		break;
	}
	case 7:
		what = "unknown ioctl";
		r = xioctl(f->fd, _IO(__LOGGERIO, 7 + p[2] % 100), 0);
		exp = -EINVAL;
		break;
	default: {
		/* The host extension. */
		struct cask_logger_select sel;
		int how = p[2] % 8;

		what = "CASK_LOGGER_SELECT";
		memset(&sel, 0, sizeof(sel));
		switch (how) {
		case 0:
		case 1:
			snprintf(sel.cell, sizeof(sel.cell), "%.32s", lg.peer_cell);
			break;
		case 2:
			snprintf(sel.cell, sizeof(sel.cell), "host");
			break;
		case 3:
			sel.flags = CASK_LOGGER_ALL_CELLS;
			break;
		case 4:
			snprintf(sel.cell, sizeof(sel.cell), "no-such-cell");
			break;
		case 5:
			sel.flags = 2 << (p[3] % 30);
			break;
		case 6:
			memset(sel.cell, 'x', sizeof(sel.cell));
			break;
		default:
			sel.__pad[p[3] % 3] = 1;
			break;
		}
		r = xioctl(f->fd, CASK_LOGGER_SELECT, (unsigned long)&sel);
		if (!rd)
			exp = -EBADF;
		else if (f->unpriv)
			exp = -EPERM;
		else if (how >= 5)
			exp = -EINVAL;
		else if (how == 4)
			exp = -ENOENT;
		else
			exp = 0;
		if (!r && !exp) {
			f->sel = how == 3 ? SEL_ALL : how == 2 ? SEL_OWN : SEL_PEER;
			ring = file_ring(f);
			f->off = ring->head;
			f->moff[0] = m.host[f->buf].head;
			f->moff[1] = m.peer[f->buf].head;
			f->mlast = 0;
			ring->dirty = true;
		}
		break;
	}
	}
	fz_trace(fz, "ioctl(f%d %s, %s, kind %d) = %s", i, bufs[f->buf], what, kind,
		 err_name(r));
	return check(fz, r, exp, what);
}

static int op_seek(struct fz *fz, const uint64_t *p)
{
	int i = pick_file(p[0], NULL);
	char c;
	long r;

	if (i < 0) {
		fz_trace(fz, "lseek: none");
		return 0;
	}
	if (p[1] % 2) {
		r = lseek(m.f[i].fd, p[2] % 100, SEEK_SET);
		r = r < 0 ? -errno : r;
		fz_trace(fz, "lseek(f%d) = %s", i, err_name(r));
		return check(fz, r, -ESPIPE, "lseek");
	}
	r = pread(m.f[i].fd, &c, 1, 0);
	r = r < 0 ? -errno : r;
	fz_trace(fz, "pread(f%d) = %s", i, err_name(r));
	return check(fz, r, -ESPIPE, "pread");
}

/* A ring's size through sysfs: empties it. */
static int op_resize(struct fz *fz, const uint64_t *p)
{
	static const char *const sizes[] = { "65536", "131072", "65536\n", "1000",
					     "0", "262145", "33554432", "abc" };
	int b = p[0] % NBUF, k = p[1] % ARRAY_SIZE(sizes), r;
	long exp = k < 3 ? 0 : -EINVAL;

	r = sysfs_size("host", b, sizes[k]);
	fz_trace(fz, "size of host %s = \"%s\": %s", bufs[b], sizes[k], err_name(r));
	if (check(fz, r, exp, "sysfs size"))
		return -1;
	if (!r) {
		ring_reset(&m.host[b], atoi(sizes[k]));
		m.host_resized[b] = true;
	}
	return 0;
}

static int op_peer_write(struct fz *fz, const uint64_t *p)
{
	struct preq q = { .op = P_WRITE, .buf = p[0] % NBUF };
	struct prep rep;
	struct ent e;
	long exp;

	if (lg.peer_sock < 0)
		return 0;
	q.serial = ++m.serial;
	q.total = pick_len(p[1]);
	if (peer_call(&q, &rep))
		return fz_fail(fz, "op %u: the peer is gone", fz->op);
	exp = q.total < MAX_PAYLOAD ? q.total : MAX_PAYLOAD;
	fz_trace(fz, "peer write(%s, serial %u, %u bytes) = %s", bufs[q.buf],
		 q.serial, q.total, err_name(rep.ret));
	if (check(fz, rep.ret, exp, "the peer's write"))
		return -1;
	if (!rep.ret)
		return 0;
	e.serial = q.serial;
	e.total = q.total;
	e.len = rep.ret;
	e.kuid = PEER_UID;
	e.pid = lg.peer_pid;
	e.tid = lg.peer_pid;
	e.t0 = rep.t0;
	e.t1 = rep.t1;
	ring_write(&m.peer[q.buf], &e);
	return 0;
}

/* The peer reads everything new in its ring: exactly its own entries. */
static int op_peer_read(struct fz *fz, const uint64_t *p)
{
	struct preq q = { .op = P_READ, .buf = p[0] % NBUF };
	struct ring *r = &m.peer[q.buf];
	uint64_t hash = 0xcbf29ce484222325ULL;
	unsigned char want[MAX_PAYLOAD];
	uint32_t count = 0;
	struct prep rep;
	unsigned int k;

	if (lg.peer_sock < 0)
		return 0;
	for (k = 0; k < r->n; k++) {
		struct ent *e = ent_at(r, k);

		if (e->off < m.peer_off[q.buf])
			continue;
		gen_fill(want, e->serial, e->len, e->total);
		hash = peer_hash(hash, e->len, want);
		count++;
	}
	if (peer_call(&q, &rep))
		return fz_fail(fz, "op %u: the peer is gone", fz->op);
	fz_trace(fz, "peer read(%s) = %s, %u entries (model %u)", bufs[q.buf],
		 err_name(rep.ret), rep.count, count);
	if (rep.msg[0])
		return fz_fail(fz, "op %u: %s", fz->op, rep.msg);
	if (rep.ret)
		return check(fz, rep.ret, 0, "the peer's read");
	if (rep.count != count || rep.hash != hash)
		return fz_fail(fz, "op %u: the peer read %u entries, expected %u%s",
			       fz->op, rep.count, count,
			       rep.count == count ? " (not the same)" : "");
	m.peer_off[q.buf] = r->tail;
	return 0;
}

static int op_peer_flush(struct fz *fz, const uint64_t *p)
{
	struct preq q = { .op = P_FLUSH, .buf = p[0] % NBUF };
	struct prep rep;

	if (lg.peer_sock < 0)
		return 0;
	if (peer_call(&q, &rep))
		return fz_fail(fz, "op %u: the peer is gone", fz->op);
	fz_trace(fz, "peer flush(%s) = %s", bufs[q.buf], err_name(rep.ret));
	if (check(fz, rep.ret, 0, "the peer's LOGGER_FLUSH_LOG"))
		return -1;
	ring_flush(&m.peer[q.buf]);
	return 0;
}

/* A child of ours writes (another pid and tid) and exits. */
static int op_fork_write(struct fz *fz, const uint64_t *p)
{
	int b = p[0] % NBUF, status, pfd[2];
	struct ent e;
	pid_t pid;
	long exp, r;

	if (p[5] % 8) {
		fz_trace(fz, "fork: not this time");
		return 0;
	}
	if (pipe2(pfd, O_CLOEXEC))
		return fz_fail(fz, "op %u: pipe: %s", fz->op, strerror(errno));
	e.serial = ++m.serial;
	e.total = pick_len(p[1]);
	pid = fork();
	if (!pid) {
		int64_t t[3];

		fz_cov_thread_start();
		t[2] = do_write(lg.wfd[b], e.serial, e.total, p[2], 0, &exp, &t[0], &t[1]);
		fz_cov_collect();
		_exit(write(pfd[1], t, sizeof(t)) == sizeof(t) ? 0 : 1);
	}
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return fz_fail(fz, "op %u: fork: %s", fz->op, strerror(errno));
	}
	{
		int64_t t[3] = { 0, 0, 0 };

		r = read(pfd[0], t, sizeof(t)) == sizeof(t) ? t[2] : -EPIPE;
		e.t0 = t[0];
		e.t1 = t[1];
	}
	close(pfd[0]);
	waitpid(pid, &status, 0);
	exp = e.total < MAX_PAYLOAD ? e.total : MAX_PAYLOAD;
	fz_trace(fz, "child %d writes %s serial %u, %u bytes = %s", pid, bufs[b],
		 e.serial, e.total, err_name(r));
	if (check(fz, r, exp, "a child's write"))
		return -1;
	if (r > 0) {
		e.len = r;
		e.kuid = 0;
		e.pid = pid;
		e.tid = pid;
		ring_write(&m.host[b], &e);
	}
	return 0;
}

static const struct {
	int (*fn)(struct fz *fz, const uint64_t *p);
	unsigned int weight;
} ops[] = {
	{ op_open, 10 }, { op_close, 3 }, { op_write, 20 }, { op_flood, 2 },
	{ op_read, 16 }, { op_drain, 4 }, { op_poll, 5 }, { op_wait, 3 },
	{ op_ioctl, 14 }, { op_seek, 1 }, { op_resize, 1 },
	{ op_peer_write, 2 }, { op_peer_read, 2 }, { op_peer_flush, 1 },
	{ op_fork_write, 1 },
};

#define O_NR	ARRAY_SIZE(ops)

static unsigned int weights[O_NR];
static double prof_ns[O_NR + 2];
static unsigned long prof_n[O_NR + 2];

static double ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ---- sequence ------------------------------------------------------ */

static int seq_cleanup(struct fz *fz)
{
	struct preq q = { .op = P_FLUSH_SOME };
	struct prep rep;
	int i, b;

	for (i = 0; i < FILES; i++)
		if (m.f[i].used)
			close(m.f[i].fd);
	for (b = 0; b < NBUF; b++) {
		if (m.host_resized[b] && sysfs_size("host", b, "65536"))
			return fz_fail(fz, "cannot set the host's %s back to 64 KiB", bufs[b]);
		if (m.host[b].dirty && xioctl(lg.wfd[b], LOGGER_FLUSH_LOG, 0))
			return fz_fail(fz, "cannot flush the host's %s", bufs[b]);
		if (m.peer[b].dirty)
			q.serial |= 1U << b;
	}
	if (q.serial && (peer_call(&q, &rep) || rep.ret))
		return fz_fail(fz, "the peer cannot flush its buffers %#x", q.serial);
	return 0;
}

static int logger_sequence(struct fz *fz)
{
	unsigned int len = 4 + fz_below(fz, 40), op;
	double t0 = ns_now(), t;
	uint64_t p[PARAMS];
	int ret = 0, i, b;

	memset(&m, 0, sizeof(m));
	for (b = 0; b < NBUF; b++) {
		m.host[b].size = RING_SIZE;
		m.peer[b].size = RING_SIZE;
	}
	while (!ret && fz_next(fz, len)) {
		op = fz_pick(fz, weights, O_NR);
		for (i = 0; i < PARAMS; i++)
			p[i] = fz_rand(fz);
		t = ns_now();
		ret = ops[op].fn(fz, p);
		prof_ns[op] += ns_now() - t;
		prof_n[op]++;
	}
	t = ns_now();
	if (seq_cleanup(fz))
		ret = -1;
	prof_ns[O_NR] += ns_now() - t;
	prof_n[O_NR]++;
	prof_ns[O_NR + 1] += ns_now() - t0;
	prof_n[O_NR + 1]++;
	return ret;
}

/* ---- setup and teardown ------------------------------------------- */

static int logger_setup(struct fz *fz)
{
	struct sigaction sa = { .sa_handler = alarm_handler };
	struct preq q = { .op = P_FLUSH };
	struct prep rep;
	char path[256], *g;
	unsigned int i;
	int b;

	pg = sysconf(_SC_PAGESIZE);
	for (i = 0; i < O_NR; i++)
		weights[i] = ops[i].weight;
	if (access("/dev/log/main", W_OK))
		return fz_fail(fz, "/dev/log/main: %s", strerror(errno));
	/* No supplementary group: the unprivileged files see their uid only. */
	if (setgroups(0, NULL))
		return fz_fail(fz, "setgroups: %s", strerror(errno));
	g = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED)
		return fz_fail(fz, "mmap: %s", strerror(errno));
	lg.guard = g;
	/* No SA_RESTART: a blocking read() ends with EINTR at the timeout. */
	sigaction(SIGALRM, &sa, NULL);
	for (b = 0; b < NBUF; b++) {
		snprintf(path, sizeof(path), CELLS "host/logger/%s/size", bufs[b]);
		lg.orig_size[b] = read_long(path);
		snprintf(path, sizeof(path), "/dev/log/%s", bufs[b]);
		lg.wfd[b] = open(path, O_WRONLY | O_CLOEXEC);
		if (lg.wfd[b] < 0)
			return fz_fail(fz, "%s: %s", path, strerror(errno));
		if (sysfs_size("host", b, "65536"))
			return fz_fail(fz, "cannot size the host's %s", bufs[b]);
	}
	lg.ready = true;
	if (pipe2(lg.wake_cmd, O_CLOEXEC) || pipe2(lg.wake_done, O_CLOEXEC))
		return fz_fail(fz, "pipe: %s", strerror(errno));
	if (pthread_create(&lg.waker, NULL, waker_main, NULL))
		return fz_fail(fz, "the waker thread did not start");
	lg.waker_up = true;
	if (peer_start(fz))
		return -1;
	/* One answer: its files are open, its cell is made. */
	q.op = P_SIZE;
	if (peer_call(&q, &rep) || rep.ret <= 0)
		return fz_fail(fz, "the peer cannot open its log devices");
	q.op = P_FLUSH;
	if (peer_find_cell(fz))
		return -1;
	for (b = 0; b < NBUF; b++) {
		if (sysfs_size(lg.peer_cell, b, "65536"))
			return fz_fail(fz, "cannot size the peer's %s", bufs[b]);
		q.buf = b;
		if (peer_call(&q, &rep) || rep.ret)
			return fz_fail(fz, "the peer cannot flush");
	}
	if (fz->verbose)
		printf("# logger: peer %d in cell %s (id %lld)\n", lg.peer_pid,
		       lg.peer_cell, lg.peer_id);
	return 0;
}

static void logger_teardown(struct fz *fz)
{
	struct preq q = { .op = P_QUIT };
	char val[32];
	unsigned int i;
	int b;

	(void)fz;
	if (getenv("LOGGER_PROF"))
		for (i = 0; i < O_NR + 2; i++)
			if (prof_n[i])
				printf("# logger prof: op %2u: %7lu calls, "
				       "%8.1f us each, %6.2f s\n",
				       i, prof_n[i], prof_ns[i] / prof_n[i] / 1e3,
				       prof_ns[i] / 1e9);
	if (lg.peer_sock >= 0) {
		if (write(lg.peer_sock, &q, sizeof(q)) < 0)
			kill(lg.peer_middle, SIGKILL);
		close(lg.peer_sock);
		lg.peer_sock = -1;
		waitpid(lg.peer_middle, NULL, 0);
	}
	if (lg.waker_up) {
		close(lg.wake_cmd[1]);
		pthread_join(lg.waker, NULL);
		close(lg.wake_cmd[0]);
		close(lg.wake_done[0]);
		close(lg.wake_done[1]);
		lg.waker_up = false;
	}
	for (b = 0; lg.ready && b < NBUF; b++) {
		snprintf(val, sizeof(val), "%u", lg.orig_size[b] ? lg.orig_size[b] : 262144);
		sysfs_size("host", b, val);
		close(lg.wfd[b]);
	}
	lg.ready = false;
	signal(SIGALRM, SIG_DFL);
	if (lg.guard)
		munmap(lg.guard, pg);
	lg.guard = NULL;
}

static struct fz_driver logger_driver = {
	.name = "logger",
	.help = "log devices: writes, reads, polls, ioctls, overruns, a second cell",
	.setup = logger_setup,
	.sequence = logger_sequence,
	.teardown = logger_teardown,
};

FZ_DRIVER(logger_driver);
