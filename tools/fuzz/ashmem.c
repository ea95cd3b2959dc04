// SPDX-License-Identifier: GPL-2.0
/*
 * cask-fuzz ashmem: sequences of /dev/ashmem operations against a model
 * of Android's driver (Documentation/ashmem.rst).
 *
 * A sequence opens up to REGIONS regions and works on them: names,
 * sizes and protection masks set and read back, mappings made (shared
 * and private, at offsets, beyond the size), split by munmap() and
 * mprotect(), moved by mremap(), pages read and written through them and
 * with pread(), ranges unpinned and pinned again, the cell purged,
 * regions closed while mapped, fds duplicated and passed to a peer
 * process in another cell and cgroup, and now and then a forked child
 * or a squeeze of our cgroup (memory.reclaim).
 *
 * Every operation draws the same number of random values whatever the
 * kernel answered, so a seed is the same program on every kernel; what
 * "region 2" or "mapping 5" means is resolved against the model when
 * the operation runs.
 *
 * What is checked, from Android's guarantees:
 *  - every answer is the one the model predicts: values, and the errno
 *    of every refused request (EINVAL, EFAULT, EPERM, EACCES, EBADF,
 *    ENOTTY, ENOMEM for the cell's budget);
 *  - pinned pages keep their contents; unpinned ones read as their last
 *    contents or zero, never anything else;
 *  - PIN answers ASHMEM_WAS_PURGED for a range the model knows was
 *    purged, never ASHMEM_NOT_PURGED then, and ASHMEM_WAS_PURGED only if
 *    the cell's purged_bytes moved; after ASHMEM_NOT_PURGED the pages
 *    are intact;
 *  - GET_PIN_STATUS is exact; PURGE_ALL_CACHES returns the unpinned,
 *    unpurged pages of the cell (never more than the model has) and
 *    purges every one of them; a purge in the peer's cell purges none
 *    of ours;
 *  - the prot mask only shrinks, and mappings never exceed it;
 *  - at the end of every sequence the cell has no region and no bytes.
 *
 * The generator runs in a cell of its own (an auto cell: a new IPC
 * namespace) in a cgroup of its own, so that the cell's books are ours
 * alone; teardown returns to the namespace and cgroup it came from.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/ashmem.h>

#include "fuzz.h"

#define DEV		"/dev/ashmem"
#define CGROOT		"/sys/fs/cgroup"
#define CG_MAIN		"cask-fuzz-ashmem"
#define CG_PEER		"cask-fuzz-ashmem-peer"

#define REGIONS		4
#define FDS		3	/* our fds of one region */
#define MAPS		10
#define MAP_PAGES	24	/* longest mapping we make */
#define TRACK		64	/* pages of a region whose contents are modelled */
#define RANGES		64	/* unpinned ranges a region may have */
#define PARAMS		6	/* random values every operation draws */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define MAX_SIZE	(0x7fffffffffffffffULL & ~(uint64_t)(pg - 1))

static long pg;

struct range {
	uint64_t s, e;		/* pages, inclusive */
	bool purged;
};

struct region {
	bool used;		/* the area exists (fd, peer fd or mapping) */
	bool released;		/* its ashmem file is gone */
	int fd[FDS];
	int nfd;
	bool peer;		/* the peer holds an fd */
	int acc;		/* O_RDWR, O_RDONLY or O_WRONLY */
	uint64_t size;
	uint64_t charged;	/* PAGE_ALIGN(size), what the cell books */
	bool backed;		/* first mmap done: name and size fixed */
	unsigned long mask;
	char name[ASHMEM_NAME_LEN];
	long file_id;		/* -1 until read once */
	struct range r[RANGES];
	int nr;
	uint64_t val[TRACK];	/* contents of each page: two words */
	bool alt0[TRACK];	/* zero is fine too (maybe purged) */
};

struct map {
	bool used;
	char *addr;
	unsigned int npages;
	uint64_t pgoff;		/* file page of addr */
	int reg;
	bool shared;
	bool split;		/* mprotect()ed in part once */
	unsigned long maxprot;	/* what mprotect may give */
	unsigned char prot[MAP_PAGES];
	uint64_t pv[MAP_PAGES];	/* private mappings: page contents */
};

/* The run-long state. */
static struct {
	int peer_sock;
	pid_t peer;
	int orig_ipc;
	char orig_cg[256];
	char cell[64];
	int sys_regions, sys_bytes, sys_purged;
	char *guard;		/* a PROT_NONE page, the one before readable */
	bool noexec;
	char *shared_msg;	/* a child's failure message */
	struct sigaction old_segv, old_bus;
	bool ready;
} as = { .peer_sock = -1, .orig_ipc = -1, .sys_regions = -1,
	 .sys_bytes = -1, .sys_purged = -1 };

/* One sequence's model. */
static struct {
	struct region reg[REGIONS];
	struct map map[MAPS];
	long purged_base;	/* the cell's purged_bytes at the start */
	bool squeezed;		/* a reclaim of our cgroup may purge still */
} m;

/* ---- small helpers ------------------------------------------------- */

static long sys_ioctl(int fd, unsigned long cmd, unsigned long arg)
{
	long r = syscall(SYS_ioctl, fd, cmd, arg);

	/* ioctl() returns an int: a cut size may look negative, not -1. */
	return r == -1 ? -errno : r;
}

static const char *err_name(long r)
{
	static const struct { int err; const char *name; } names[] = {
		{ EINVAL, "EINVAL" }, { EFAULT, "EFAULT" }, { EPERM, "EPERM" },
		{ EACCES, "EACCES" }, { EBADF, "EBADF" }, { ENOTTY, "ENOTTY" },
		{ ENOMEM, "ENOMEM" }, { ENXIO, "ENXIO" }, { EAGAIN, "EAGAIN" },
		{ EFBIG, "EFBIG" },
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

static long sysfs_long(int fd)
{
	char buf[32];
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return atol(buf);
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

static int join_cg(const char *cg)
{
	char path[512], buf[32];

	snprintf(path, sizeof(path), CGROOT "%s%s/cgroup.procs",
		 *cg == '/' ? "" : "/", cg);
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	return write_str(path, buf);
}

/* ---- touching memory that may fault ------------------------------ */

static sigjmp_buf touch_env;
static int touch_armed;		/* __atomic: read by the signal handler */

static void touch_handler(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (__atomic_exchange_n(&touch_armed, 0, __ATOMIC_SEQ_CST))
		siglongjmp(touch_env, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Read (or write) the two words of the page at @p, the first and the
 * last: 0, or the signal the access raised. Atomic accesses, so that
 * the compiler makes exactly these loads and stores.
 */
static int touch(char *p, bool write, uint64_t val, uint64_t out[2])
{
	uint64_t *a = (uint64_t *)p, *b = (uint64_t *)(p + pg - 8);
	int sig;

	__atomic_store_n(&touch_armed, 1, __ATOMIC_SEQ_CST);
	sig = sigsetjmp(touch_env, 1);
	if (!sig) {
		if (write) {
			__atomic_store_n(a, val, __ATOMIC_RELAXED);
			__atomic_store_n(b, val, __ATOMIC_RELAXED);
		} else {
			out[0] = __atomic_load_n(a, __ATOMIC_RELAXED);
			out[1] = __atomic_load_n(b, __ATOMIC_RELAXED);
		}
	}
	__atomic_store_n(&touch_armed, 0, __ATOMIC_SEQ_CST);
	return sig;
}

/* ---- the model ----------------------------------------------------- */

static uint64_t npages_of(uint64_t size)
{
	return size / pg + (size % pg != 0);
}

static bool page_maybe_purged(const struct region *rg, uint64_t p)
{
	int i;

	for (i = 0; i < rg->nr; i++)
		if (rg->r[i].s <= p && p <= rg->r[i].e)
			return !rg->r[i].purged;
	return false;
}

static bool page_unpinned(const struct region *rg, uint64_t p)
{
	int i;

	for (i = 0; i < rg->nr; i++)
		if (rg->r[i].s <= p && p <= rg->r[i].e)
			return true;
	return false;
}

/* Is @v what page @p of @rg may hold? */
static bool content_ok(const struct region *rg, uint64_t p, uint64_t v)
{
	if (p >= TRACK)
		return true;
	if (v == rg->val[p])
		return true;
	return !v && (rg->alt0[p] || page_maybe_purged(rg, p));
}

/* cashmem_pin_pages()'s rules, as documented. */
static long pin_range(uint64_t size, uint32_t off, uint32_t len,
		      uint64_t *s, uint64_t *e)
{
	uint64_t end = npages_of(size) * pg, first = off, bytes = len;

	if (!bytes)
		bytes = first < end ? end - first : 0;
	if (!bytes || first % pg || bytes % pg || first + bytes > end)
		return -EINVAL;
	*s = first / pg;
	*e = (first + bytes - 1) / pg;
	return 0;
}

static void range_del(struct region *rg, int i)
{
	memmove(&rg->r[i], &rg->r[i + 1], (rg->nr - i - 1) * sizeof(rg->r[0]));
	rg->nr--;
}

static void range_ins(struct region *rg, int i, uint64_t s, uint64_t e, bool purged)
{
	if (rg->nr == RANGES)
		return;		/* never: ops are fewer */
	memmove(&rg->r[i + 1], &rg->r[i], (rg->nr - i) * sizeof(rg->r[0]));
	rg->r[i] = (struct range){ s, e, purged };
	rg->nr++;
}

static void model_unpin(struct region *rg, uint64_t s, uint64_t e)
{
	bool purged = false;
	int i = 0;

	while (i < rg->nr) {
		struct range *r = &rg->r[i];

		if (r->e < s) {
			i++;
			continue;
		}
		if (r->s > e)
			break;
		if (r->s <= s && r->e >= e)
			return;
		s = r->s < s ? r->s : s;
		e = r->e > e ? r->e : e;
		purged |= r->purged;
		range_del(rg, i);
	}
	range_ins(rg, i, s, e, purged);
}

/* Returns ASHMEM_WAS_PURGED if the model knows of a purge in [s, e]. */
static int model_pin(struct region *rg, uint64_t s, uint64_t e)
{
	int ret = ASHMEM_NOT_PURGED, i = 0;

	while (i < rg->nr) {
		struct range *r = &rg->r[i];

		if (r->e < s) {
			i++;
			continue;
		}
		if (r->s > e)
			break;
		if (r->purged)
			ret = ASHMEM_WAS_PURGED;
		if (r->s >= s && r->e <= e) {
			range_del(rg, i);
		} else if (r->s < s && r->e > e) {
			uint64_t tail_e = r->e;
			bool p = r->purged;

			r->e = s - 1;
			range_ins(rg, i + 1, e + 1, tail_e, p);
			break;
		} else if (r->s < s) {
			r->e = s - 1;
			i++;
		} else {
			r->s = e + 1;
			i++;
		}
	}
	return ret;
}

static uint64_t model_lru_pages(void)
{
	uint64_t n = 0;
	int i, j;

	for (i = 0; i < REGIONS; i++) {
		struct region *rg = &m.reg[i];

		if (!rg->used || rg->released)
			continue;
		for (j = 0; j < rg->nr; j++)
			if (!rg->r[j].purged)
				n += rg->r[j].e - rg->r[j].s + 1;
	}
	return n;
}

/* Every unpurged range purged; @exact: the pages surely read zero. */
static void model_purge_all(bool exact)
{
	int i, j;
	uint64_t p;

	for (i = 0; i < REGIONS; i++) {
		struct region *rg = &m.reg[i];

		if (!rg->used || rg->released)
			continue;
		for (j = 0; j < rg->nr; j++) {
			struct range *r = &rg->r[j];

			if (r->purged)
				continue;
			for (p = r->s; p <= r->e && p < TRACK; p++) {
				if (exact) {
					rg->val[p] = 0;
					rg->alt0[p] = false;
				} else {
					rg->alt0[p] = true;
				}
			}
			r->purged = true;
		}
	}
}

static uint64_t cell_bytes(void)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < REGIONS; i++)
		if (m.reg[i].used)
			n += m.reg[i].charged;
	return n;
}

/* The ashmem file may be gone: no fd anywhere, no private mapping. */
static void region_check_release(int ri)
{
	struct region *rg = &m.reg[ri];
	bool shared = false, priv = false;
	uint64_t p;
	int i;

	if (!rg->used)
		return;
	for (i = 0; i < MAPS; i++) {
		if (!m.map[i].used || m.map[i].reg != ri)
			continue;
		if (m.map[i].shared)
			shared = true;
		else
			priv = true;
	}
	if (!rg->released && !rg->nfd && !rg->peer && !priv) {
		/* Unpinned pages stay as a purge may have left them. */
		for (p = 0; p < TRACK; p++)
			if (page_maybe_purged(rg, p))
				rg->alt0[p] = true;
		rg->nr = 0;
		rg->released = true;
	}
	if (rg->released && !shared)
		rg->used = false;
}

/* ---- the peer: another process in another cell and cgroup ---------- */

enum { P_GIVE, P_CLOSE, P_IOCTL, P_PIN, P_TOUCH, P_PURGE, P_QUIT };

struct preq {
	int op, slot;
	unsigned long cmd;
	uint64_t a, b, c;
};

struct prep {
	long ret;
	uint64_t v[2];
};

static int peer_send(const struct preq *q, int fd, struct prep *rep)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)q, .iov_len = sizeof(*q) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (fd >= 0) {
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	if (sendmsg(as.peer_sock, &msg, 0) != sizeof(*q))
		return -1;
	if (read(as.peer_sock, rep, sizeof(*rep)) != sizeof(*rep))
		return -1;
	return 0;
}

static void peer_main(int sock)
{
	int fds[REGIONS], own, i;
	struct preq q;
	struct prep rep;

	for (i = 0; i < REGIONS; i++)
		fds[i] = -1;
	fz_cov_thread_start();
	/* Our own region, for PURGE_ALL_CACHES in our cell. */
	own = open(DEV, O_RDWR | O_CLOEXEC);
	for (;;) {
		char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
		struct iovec iov = { .iov_base = &q, .iov_len = sizeof(q) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *cm;
		struct ashmem_pin pin;
		int fd = -1, sig;
		char *p;

		if (recvmsg(sock, &msg, 0) != sizeof(q))
			break;
		cm = CMSG_FIRSTHDR(&msg);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		memset(&rep, 0, sizeof(rep));
		if (q.slot < 0 || q.slot >= REGIONS)
			q.slot = 0;
		switch (q.op) {
		case P_GIVE:
			if (fds[q.slot] >= 0)
				close(fds[q.slot]);
			fds[q.slot] = fd;
			fd = -1;
			break;
		case P_CLOSE:
			if (fds[q.slot] >= 0)
				close(fds[q.slot]);
			fds[q.slot] = -1;
			break;
		case P_IOCTL:
			rep.ret = sys_ioctl(fds[q.slot], q.cmd, q.a);
			break;
		case P_PIN:
			pin.offset = q.a;
			pin.len = q.b;
			rep.ret = sys_ioctl(fds[q.slot], q.cmd, (unsigned long)&pin);
			break;
		case P_TOUCH:
			/* Map page q.a, write q.b there if non-zero, read it. */
			p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED,
				 fds[q.slot], q.a * pg);
			if (p == MAP_FAILED) {
				rep.ret = -errno;
				break;
			}
			sig = 0;
			if (q.b)
				sig = touch(p, true, q.b, rep.v);
			if (!sig)
				sig = touch(p, false, 0, rep.v);
			rep.ret = sig;
			munmap(p, pg);
			break;
		case P_PURGE:
			rep.ret = sys_ioctl(own, ASHMEM_PURGE_ALL_CACHES, 0);
			break;
		case P_QUIT:
			for (i = 0; i < REGIONS; i++)
				if (fds[i] >= 0)
					close(fds[i]);
			break;
		}
		if (fd >= 0)
			close(fd);
		fz_cov_collect();
		if (write(sock, &rep, sizeof(rep)) != sizeof(rep))
			break;
		if (q.op == P_QUIT)
			break;
	}
	_exit(0);
}

/* ---- operations ---------------------------------------------------- */

/* Slot @r of used regions (any, if none used: -1). */
static int pick_region(uint64_t r)
{
	int used[REGIONS], n = 0, i;

	for (i = 0; i < REGIONS; i++)
		if (m.reg[i].used)
			used[n++] = i;
	return n ? used[r % n] : -1;
}

/* A region with one of our fds, and that fd. */
static int pick_fd(uint64_t r, int *fd)
{
	int ok[REGIONS], n = 0, i;
	struct region *rg;

	for (i = 0; i < REGIONS; i++)
		if (m.reg[i].used && m.reg[i].nfd)
			ok[n++] = i;
	if (!n)
		return -1;
	i = ok[r % n];
	rg = &m.reg[i];
	*fd = rg->fd[(r >> 8) % rg->nfd];
	return i;
}

static int pick_map(uint64_t r)
{
	int used[MAPS], n = 0, i;

	for (i = 0; i < MAPS; i++)
		if (m.map[i].used)
			used[n++] = i;
	return n ? used[r % n] : -1;
}

static int free_map(void)
{
	int i;

	for (i = 0; i < MAPS; i++)
		if (!m.map[i].used)
			return i;
	return -1;
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

static int op_open(struct fz *fz, const uint64_t *p)
{
	static const int accs[] = { O_RDWR, O_RDWR, O_RDWR, O_RDWR, O_RDWR,
				    O_RDWR, O_RDONLY, O_RDONLY, O_WRONLY };
	int acc = accs[p[0] % 9], i, fd;
	struct region *rg = NULL;

	for (i = 0; i < REGIONS; i++)
		if (!m.reg[i].used) {
			rg = &m.reg[i];
			break;
		}
	if (!rg) {
		fz_trace(fz, "open: no free slot");
		return 0;
	}
	fd = open(DEV, acc | O_CLOEXEC);
	fz_trace(fz, "open(%s) = r%d fd %d", acc == O_RDWR ? "rw" :
		 acc == O_RDONLY ? "ro" : "wo", i, fd);
	if (fd < 0)
		return fz_fail(fz, "op %u: open " DEV ": %s", fz->op, strerror(errno));
	memset(rg, 0, sizeof(*rg));
	rg->used = true;
	rg->fd[0] = fd;
	rg->nfd = 1;
	rg->acc = acc;
	rg->mask = PROT_READ | PROT_WRITE | PROT_EXEC;
	rg->file_id = -1;
	return 0;
}

static void close_fd(struct region *rg, int k)
{
	close(rg->fd[k]);
	rg->fd[k] = rg->fd[--rg->nfd];
}

static int op_close(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd), k;
	struct region *rg;

	if (ri < 0) {
		fz_trace(fz, "close: nothing open");
		return 0;
	}
	rg = &m.reg[ri];
	for (k = 0; rg->fd[k] != fd; k++)
		;
	fz_trace(fz, "close(r%d fd %d)", ri, fd);
	close_fd(rg, k);
	region_check_release(ri);
	return 0;
}

static int op_dup(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd), nfd;
	struct region *rg;

	if (ri < 0 || m.reg[ri].nfd == FDS) {
		fz_trace(fz, "dup: none");
		return 0;
	}
	rg = &m.reg[ri];
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	fz_trace(fz, "dup(r%d fd %d) = %d", ri, fd, nfd);
	if (nfd < 0)
		return fz_fail(fz, "op %u: dup: %s", fz->op, strerror(errno));
	rg->fd[rg->nfd++] = nfd;
	return 0;
}

/*
 * Names: short, empty, 255 and 256 characters (the last unterminated),
 * one that runs into a PROT_NONE page, NULL.
 */
static int op_setname(struct fz *fz, const uint64_t *p)
{
	char buf[ASHMEM_NAME_LEN + 8], *arg = buf, want[ASHMEM_NAME_LEN];
	int fd, ri = pick_fd(p[0], &fd), kind = p[1] % 7;
	size_t len = 0, i;
	long r, exp = 0;
	struct region *rg;

	if (ri < 0) {
		fz_trace(fz, "set_name: nothing open");
		return 0;
	}
	rg = &m.reg[ri];
	switch (kind) {
	case 0:
	case 1:
		len = 1 + p[2] % 24;
		break;
	case 2:
		len = 0;
		break;
	case 3:
		len = ASHMEM_NAME_LEN - 1;
		break;
	case 4:
		len = ASHMEM_NAME_LEN + 4;	/* unterminated within 256 */
		break;
	case 5:
		/* Up to the guard page: terminated in time or not. */
		len = p[2] % ASHMEM_NAME_LEN;
		break;
	case 6:
		arg = NULL;
		break;
	}
	for (i = 0; i < len && i < sizeof(buf) - 1; i++)
		buf[i] = 'a' + (p[3] + i * 7) % 26;
	buf[len < sizeof(buf) ? len : sizeof(buf) - 1] = '\0';
	if (kind == 5) {
		bool term = p[3] & 1;

		arg = as.guard - len - term;
		memcpy(arg, buf, len);
		if (term)
			arg[len] = '\0';
		else if (len < ASHMEM_NAME_LEN)
			exp = -EFAULT;
	}
	if (!arg)
		exp = -EFAULT;
	if (!exp && rg->backed)
		exp = -EINVAL;
	r = sys_ioctl(fd, ASHMEM_SET_NAME, (unsigned long)arg);
	fz_trace(fz, "set_name(r%d, kind %d, len %zu) = %s", ri, kind, len,
		 err_name(r));
	if (check(fz, r, exp, "ASHMEM_SET_NAME"))
		return -1;
	if (!r) {
		snprintf(want, sizeof(want), "%.*s", ASHMEM_NAME_LEN - 1,
			 kind == 5 ? arg : buf);
		memcpy(rg->name, want, sizeof(want));
	}
	return 0;
}

static int op_getname(struct fz *fz, const uint64_t *p)
{
	char buf[ASHMEM_NAME_LEN], *arg = buf;
	const char *want;
	int fd, ri = pick_fd(p[0], &fd), kind = p[1] % 6;
	size_t room = 0;
	long r, exp = 0;
	struct region *rg;

	if (ri < 0) {
		fz_trace(fz, "get_name: nothing open");
		return 0;
	}
	rg = &m.reg[ri];
	want = rg->name[0] ? rg->name : ASHMEM_NAME_DEF;
	if (kind == 4) {
		/* Room for the name or one byte less, before the guard. */
		room = strlen(want) + 1 - (p[2] & 1);
		arg = as.guard - room;
		if (room < strlen(want) + 1)
			exp = -EFAULT;
	} else if (kind == 5) {
		arg = NULL;
		exp = -EFAULT;
	}
	memset(buf, 0x5a, sizeof(buf));
	r = sys_ioctl(fd, ASHMEM_GET_NAME, (unsigned long)arg);
	fz_trace(fz, "get_name(r%d, kind %d) = %s", ri, kind, err_name(r));
	if (check(fz, r, exp, "ASHMEM_GET_NAME"))
		return -1;
	if (!r && strncmp(arg, want, room ? room : sizeof(buf)))
		return fz_fail(fz, "op %u: ASHMEM_GET_NAME: \"%.40s\", expected \"%.40s\"",
			       fz->op, arg, want);
	return 0;
}

static int op_setsize(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd);
	uint64_t size, charge;
	struct region *rg;
	long r, exp = 0;

	if (ri < 0) {
		fz_trace(fz, "set_size: nothing open");
		return 0;
	}
	rg = &m.reg[ri];
	switch (p[1] % 10) {
	case 0:
		size = 0;
		break;
	case 1:
		size = 1 + p[2] % (3 * pg);	/* odd sizes */
		break;
	case 2:
		size = (1ULL << 40) + (p[2] & 0xfff);	/* huge, never touched whole */
		break;
	case 3:
		size = MAX_SIZE - ((p[2] & 1) ? 0 : pg);
		break;
	case 4:
		size = MAX_SIZE + 1 + (p[2] % 4096);	/* past a file */
		break;
	case 5:
		size = UINT64_MAX - (p[2] & 7);
		break;
	default:
		size = (1 + p[2] % 16) * pg;
		break;
	}
	charge = npages_of(size) * pg;
	if (size > MAX_SIZE)
		exp = -EINVAL;
	else if (rg->backed)
		exp = -EINVAL;
	else if (charge > rg->charged &&
		 cell_bytes() - rg->charged + charge > (uint64_t)INT64_MAX)
		exp = -ENOMEM;
	r = sys_ioctl(fd, ASHMEM_SET_SIZE, size);
	fz_trace(fz, "set_size(r%d, %#llx) = %s", ri, (unsigned long long)size,
		 err_name(r));
	if (check(fz, r, exp, "ASHMEM_SET_SIZE"))
		return -1;
	if (!r) {
		rg->size = size;
		rg->charged = charge;
	}
	return 0;
}

static int op_getsize(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd);
	long r;

	if (ri < 0) {
		fz_trace(fz, "get_size: nothing open");
		return 0;
	}
	r = sys_ioctl(fd, ASHMEM_GET_SIZE, 0);
	fz_trace(fz, "get_size(r%d) = %#lx", ri, r);
	/* ioctl() returns an int: larger sizes come back cut, as on Android. */
	return check(fz, r, (int)m.reg[ri].size, "ASHMEM_GET_SIZE");
}

static int op_setprot(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd);
	unsigned long prot;
	struct region *rg;
	long r, exp;

	if (ri < 0) {
		fz_trace(fz, "set_prot: nothing open");
		return 0;
	}
	rg = &m.reg[ri];
	if (p[1] % 8 == 0)
		prot = p[2] & 0xff;		/* unknown bits too */
	else if (p[1] % 8 == 1)
		prot = p[2];
	else
		prot = p[2] % 8;
	exp = (rg->mask & prot) == prot ? 0 : -EINVAL;
	r = sys_ioctl(fd, ASHMEM_SET_PROT_MASK, prot);
	fz_trace(fz, "set_prot_mask(r%d, %#lx) = %s", ri, prot, err_name(r));
	if (check(fz, r, exp, "ASHMEM_SET_PROT_MASK"))
		return -1;
	if (!r)
		rg->mask = prot;
	return 0;
}

static int op_getprot(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd);
	long r;

	if (ri < 0) {
		fz_trace(fz, "get_prot: nothing open");
		return 0;
	}
	r = sys_ioctl(fd, ASHMEM_GET_PROT_MASK, 0);
	fz_trace(fz, "get_prot_mask(r%d) = %s", ri, err_name(r));
	return check(fz, r, m.reg[ri].mask, "ASHMEM_GET_PROT_MASK");
}

static const int prots[] = {
	PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE,
	PROT_READ, PROT_NONE, PROT_WRITE, PROT_READ | PROT_EXEC,
	PROT_READ | PROT_WRITE | PROT_EXEC, PROT_EXEC,
};

static int op_mmap(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd), mi = free_map(), prot;
	uint64_t npages, pgoff, len, rp;
	bool shared = p[1] % 4 != 0;
	struct region *rg;
	long exp = 0, r;
	struct map *mp;
	char *addr;

	if (ri < 0 || mi < 0) {
		fz_trace(fz, "mmap: none");
		return 0;
	}
	rg = &m.reg[ri];
	rp = npages_of(rg->size);
	prot = prots[p[2] % ARRAY_SIZE(prots)];
	/* Length: within the region mostly, one page over now and then. */
	switch (p[3] % 8) {
	case 0:
		len = rp + 1;
		break;
	case 1:
		len = rp;
		break;
	default:
		len = 1 + p[4] % (rp < MAP_PAGES ? (rp ? rp : 1) : MAP_PAGES);
		break;
	}
	if (len > MAP_PAGES)
		len = MAP_PAGES;
	/* Offset: 0 mostly, inside, at the end, past it. */
	switch ((p[3] >> 8) % 8) {
	case 0:
	case 1:
	case 2:
	case 3:
		pgoff = 0;
		break;
	case 4:
		pgoff = rp > len ? (p[5] % (rp - len + 1)) : 0;
		break;
	case 5:
		pgoff = rp > len ? rp - len : 0;
		break;
	case 6:
		pgoff = rp + p[5] % 3;
		break;
	default:
		pgoff = p[5] % TRACK;
		break;
	}
	npages = len;
	if (!npages)
		exp = -EINVAL;
	else if (rg->acc == O_WRONLY)
		exp = -EACCES;
	else if (shared && (prot & PROT_WRITE) && rg->acc != O_RDWR)
		exp = -EACCES;
	else if ((prot & PROT_EXEC) && as.noexec)
		exp = -EPERM;
	else if (!rg->size || npages > rp)
		exp = -EINVAL;
	else if (prot & ~rg->mask)
		exp = -EPERM;
	addr = mmap(NULL, npages * pg, prot, shared ? MAP_SHARED : MAP_PRIVATE,
		    fd, pgoff * pg);
	r = addr == MAP_FAILED ? -errno : 0;
	fz_trace(fz, "mmap(r%d, %llu pages at page %llu, prot %d, %s) = m%d %s",
		 ri, (unsigned long long)npages, (unsigned long long)pgoff, prot,
		 shared ? "shared" : "private", mi, err_name(r));
	if (check(fz, r, exp, "mmap"))
		return -1;
	if (r)
		return 0;
	rg->backed = true;
	mp = &m.map[mi];
	memset(mp, 0, sizeof(*mp));
	mp->used = true;
	mp->addr = addr;
	mp->npages = npages;
	mp->pgoff = pgoff;
	mp->reg = ri;
	/*
	 * MAP_SHARED of a file not open for writing is not VM_SHARED: the
	 * driver gives private memory then, as Android's did.
	 */
	mp->shared = shared && rg->acc == O_RDWR;
	mp->maxprot = rg->mask & (PROT_READ | PROT_WRITE | PROT_EXEC);
	if (shared && rg->acc != O_RDWR)
		mp->maxprot &= ~PROT_WRITE;
	if (as.noexec)
		mp->maxprot &= ~PROT_EXEC;
	memset(mp->prot, prot, sizeof(mp->prot));
	return 0;
}

static int op_munmap(struct fz *fz, const uint64_t *p)
{
	int mi = pick_map(p[0]), ri, ni;
	unsigned int a, b;
	struct map *mp;

	if (mi < 0) {
		fz_trace(fz, "munmap: none");
		return 0;
	}
	mp = &m.map[mi];
	ri = mp->reg;
	/* Whole, or pages [a, b): head, tail or middle. */
	a = p[1] % 2 ? 0 : p[2] % mp->npages;
	b = p[1] % 3 ? mp->npages : a + 1 + p[3] % (mp->npages - a);
	ni = free_map();
	if (a && b < mp->npages && ni < 0)
		b = mp->npages;
	fz_trace(fz, "munmap(m%d pages %u..%u of %u)", mi, a, b, mp->npages);
	if (munmap(mp->addr + (size_t)a * pg, (size_t)(b - a) * pg))
		return fz_fail(fz, "op %u: munmap: %s", fz->op, strerror(errno));
	if (a && b < mp->npages) {
		struct map *nm = &m.map[ni];

		*nm = *mp;
		nm->addr = mp->addr + (size_t)b * pg;
		nm->npages = mp->npages - b;
		nm->pgoff = mp->pgoff + b;
		memmove(nm->prot, mp->prot + b, nm->npages);
		memmove(nm->pv, mp->pv + b, nm->npages * sizeof(nm->pv[0]));
		mp->npages = a;
	} else if (a) {
		mp->npages = a;
	} else if (b < mp->npages) {
		mp->addr += (size_t)b * pg;
		mp->pgoff += b;
		mp->npages -= b;
		memmove(mp->prot, mp->prot + b, mp->npages);
		memmove(mp->pv, mp->pv + b, mp->npages * sizeof(mp->pv[0]));
	} else {
		mp->used = false;
	}
	region_check_release(ri);
	return 0;
}

static int op_mprotect(struct fz *fz, const uint64_t *p)
{
	int mi = pick_map(p[0]), prot;
	unsigned int a, b, i;
	struct map *mp;
	long r, exp;

	if (mi < 0) {
		fz_trace(fz, "mprotect: none");
		return 0;
	}
	mp = &m.map[mi];
	prot = prots[p[1] % ARRAY_SIZE(prots)];
	a = p[2] % 2 ? 0 : p[3] % mp->npages;
	b = p[2] % 3 ? mp->npages : a + 1 + p[4] % (mp->npages - a);
	exp = prot & ~mp->maxprot ? -EACCES : 0;
	r = mprotect(mp->addr + (size_t)a * pg, (size_t)(b - a) * pg, prot) ? -errno : 0;
	fz_trace(fz, "mprotect(m%d pages %u..%u, %d) = %s", mi, a, b, prot,
		 err_name(r));
	if (check(fz, r, exp, "mprotect"))
		return -1;
	if (!r) {
		for (i = a; i < b; i++)
			mp->prot[i] = prot;
		if (a || b < mp->npages)
			mp->split = true;
	}
	return 0;
}

static int op_mremap(struct fz *fz, const uint64_t *p)
{
	int mi = pick_map(p[0]);
	unsigned int n, i;
	bool uniform = true;
	struct map *mp;
	char *addr;
	long r;

	if (mi < 0) {
		fz_trace(fz, "mremap: none");
		return 0;
	}
	mp = &m.map[mi];
	n = 1 + p[1] % MAP_PAGES;
	for (i = 1; i < mp->npages; i++)
		if (mp->prot[i] != mp->prot[0])
			uniform = false;
	addr = mremap(mp->addr, (size_t)mp->npages * pg, (size_t)n * pg,
		      MREMAP_MAYMOVE);
	r = addr == MAP_FAILED ? -errno : 0;
	fz_trace(fz, "mremap(m%d, %u -> %u pages) = %s", mi, mp->npages, n,
		 err_name(r));
	/*
	 * Shrinking only unmaps the tail. Growing needs one VMA: EFAULT
	 * across VMAs that mprotect() split (they may have merged back).
	 */
	if (n <= mp->npages)
		uniform = true;
	if (r && !(r == -EFAULT && (!uniform || mp->split)))
		return check(fz, r, 0, "mremap");
	if (!uniform && !r)
		return fz_fail(fz, "op %u: mremap grew across VMAs of different protections",
			       fz->op);
	if (r)
		return 0;
	mp->addr = addr;
	for (i = mp->npages; i < n; i++) {
		mp->prot[i] = mp->prot[0];
		mp->pv[i] = 0;
	}
	mp->npages = n;
	return 0;
}

static int op_madvise(struct fz *fz, const uint64_t *p)
{
	int mi = pick_map(p[0]), adv;
	unsigned int a, b, i;
	struct region *rg;
	struct map *mp;
	long r, exp = 0;

	if (mi < 0) {
		fz_trace(fz, "madvise: none");
		return 0;
	}
	mp = &m.map[mi];
	rg = &m.reg[mp->reg];
	a = p[2] % mp->npages;
	b = a + 1 + p[3] % (mp->npages - a);
	adv = p[1] % 3 == 0 ? MADV_REMOVE : MADV_DONTNEED;
	/* Shared mappings that may be made writable (VM_MAYWRITE) only. */
	if (adv == MADV_REMOVE && (!mp->shared || !(mp->maxprot & PROT_WRITE))) {
		exp = -EACCES;
	} else if (adv == MADV_REMOVE) {
		/* The hole punch takes a loff_t: past it, EINVAL or EFBIG. */
		uint64_t fo = (mp->pgoff + a) * pg, fl = (uint64_t)(b - a) * pg;

		if (fo > (uint64_t)INT64_MAX)
			exp = -EINVAL;
		else if (fo + fl > (uint64_t)INT64_MAX)
			exp = -EFBIG;
	}
	r = madvise(mp->addr + (size_t)a * pg, (size_t)(b - a) * pg, adv) ? -errno : 0;
	fz_trace(fz, "madvise(m%d pages %u..%u, %s) = %s", mi, a, b,
		 adv == MADV_REMOVE ? "REMOVE" : "DONTNEED", err_name(r));
	if (check(fz, r, exp, "madvise"))
		return -1;
	if (r)
		return 0;
	for (i = a; i < b; i++) {
		uint64_t fp = mp->pgoff + i;

		if (!mp->shared) {
			mp->pv[i] = 0;	/* private pages dropped: zero again */
		} else if (adv == MADV_REMOVE && fp < TRACK) {
			rg->val[fp] = 0;
			rg->alt0[fp] = false;
		}
	}
	return 0;
}

/* PIN, UNPIN, GET_PIN_STATUS arguments: aligned, zero, odd, outside. */
static void pin_args(const struct region *rg, const uint64_t *p, uint32_t *off,
		     uint32_t *len)
{
	uint64_t rp = npages_of(rg->size), o, l;

	if (rp > TRACK)
		rp = TRACK + 4;
	o = p[0] % 4 == 0 ? 0 : p[1] % (rp + 2);
	l = p[0] % 5 == 0 ? 0 : 1 + p[2] % (rp + 1);
	*off = o * pg;
	*len = l * pg;
	switch (p[3] % 16) {
	case 0:
		*off += 1 + p[4] % (pg - 1);
		break;
	case 1:
		*len += 1 + p[4] % (pg - 1);
		break;
	case 2:
		*off = 0xffffffff - (p[4] & 0xfff);
		break;
	case 3:
		*len = 0xffffffff & ~(pg - 1);
		break;
	case 4:
		*off = npages_of(rg->size) * pg;
		*len = 0;
		break;
	}
}

/* @how: ASHMEM_PIN, ASHMEM_UNPIN, ASHMEM_GET_PIN_STATUS; @peer: from it. */
static int do_pin(struct fz *fz, const uint64_t *p, unsigned long how, bool peer)
{
	static const char *const names[] = { "pin", "unpin", "pin_status" };
	int fd = -1, ri, bad = p[5] % 24 == 0;
	const char *name = names[how == ASHMEM_PIN ? 0 : how == ASHMEM_UNPIN ? 1 : 2];
	struct ashmem_pin pin, *arg = &pin;
	uint64_t s = 0, e = 0, q;
	bool known[TRACK] = { false };
	struct region *rg;
	long r, exp;
	int i;

	if (peer) {
		ri = pick_region(p[0]);
		if (ri >= 0 && !m.reg[ri].peer)
			ri = -1;
		bad = 0;
	} else {
		ri = pick_fd(p[0], &fd);
	}
	if (ri < 0) {
		fz_trace(fz, "%s%s: nothing open", peer ? "peer " : "", name);
		return 0;
	}
	rg = &m.reg[ri];
	pin_args(rg, p + 1, &pin.offset, &pin.len);
	if (bad)
		arg = (struct ashmem_pin *)(p[5] % 2 ? NULL : as.guard - 4);
	if (bad)
		exp = -EFAULT;
	else if (!rg->backed)
		exp = -EINVAL;
	else
		exp = pin_range(rg->size, pin.offset, pin.len, &s, &e);
	if (peer) {
		struct preq rq = { .op = P_PIN, .slot = ri, .cmd = how,
				   .a = pin.offset, .b = pin.len };
		struct prep rep;

		if (peer_send(&rq, -1, &rep))
			return fz_fail(fz, "op %u: the peer is gone", fz->op);
		r = rep.ret;
	} else {
		r = sys_ioctl(fd, how, (unsigned long)arg);
	}
	fz_trace(fz, "%s%s(r%d, %#x, %#x%s) = %s", peer ? "peer " : "", name,
		 ri, pin.offset, pin.len, bad ? ", bad pointer" : "", err_name(r));
	if (exp)
		return check(fz, r, exp, name);
	if (how == ASHMEM_UNPIN) {
		if (check(fz, r, 0, "ASHMEM_UNPIN"))
			return -1;
		model_unpin(rg, s, e);
		return 0;
	}
	if (how == ASHMEM_GET_PIN_STATUS) {
		exp = ASHMEM_IS_PINNED;
		for (i = 0; i < rg->nr; i++)
			if (rg->r[i].s <= e && rg->r[i].e >= s)
				exp = ASHMEM_IS_UNPINNED;
		return check(fz, r, exp, "ASHMEM_GET_PIN_STATUS");
	}
	for (q = s; q <= e && q < TRACK; q++)
		known[q] = page_unpinned(rg, q) && page_maybe_purged(rg, q);
	exp = model_pin(rg, s, e);
	if (r != ASHMEM_WAS_PURGED && r != ASHMEM_NOT_PURGED)
		return check(fz, r, exp, "ASHMEM_PIN");
	if (exp == ASHMEM_WAS_PURGED && r != exp)
		return fz_fail(fz, "op %u: ASHMEM_PIN: NOT_PURGED for a range "
			       "purged by PURGE_ALL_CACHES", fz->op);
	if (r == ASHMEM_WAS_PURGED && exp != r && !m.squeezed) {
		long now = sysfs_long(as.sys_purged);

		if (now >= 0 && now == m.purged_base)
			return fz_fail(fz, "op %u: ASHMEM_PIN: WAS_PURGED, but the "
				       "cell's purged_bytes did not move", fz->op);
	}
	/* Intact after NOT_PURGED; zero or intact after WAS_PURGED. */
	for (q = s; q <= e && q < TRACK; q++)
		if (known[q] && r == ASHMEM_WAS_PURGED)
			rg->alt0[q] = true;
	return 0;
}

static int op_purge(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd);
	uint64_t exp;
	long r;

	if (ri < 0) {
		fz_trace(fz, "purge_all: nothing open");
		return 0;
	}
	exp = model_lru_pages();
	r = sys_ioctl(fd, ASHMEM_PURGE_ALL_CACHES, 0);
	fz_trace(fz, "purge_all_caches() = %s (model %llu)", err_name(r),
		 (unsigned long long)exp);
	/*
	 * The count comes back through ioctl()'s int, as on Android: past
	 * INT_MAX pages (a huge region unpinned) it is cut, and may even
	 * look like an errno. Not checked then.
	 */
	if (exp > INT32_MAX) {
		model_purge_all(false);
		return 0;
	}
	if (r < 0)
		return check(fz, r, exp, "ASHMEM_PURGE_ALL_CACHES");
	if ((uint64_t)r > exp)
		return fz_fail(fz, "op %u: ASHMEM_PURGE_ALL_CACHES: %ld pages on the LRU, "
			       "the cell has %llu unpinned",
			       fz->op, r, (unsigned long long)exp);
	model_purge_all((uint64_t)r == exp);
	return 0;
}

/* Only the cell's root may purge: not an unprivileged euid (EPERM). */
static int op_purge_unpriv(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd);
	long r;

	if (ri < 0) {
		fz_trace(fz, "unprivileged purge_all: nothing open");
		return 0;
	}
	/* This thread's euid only; back at once. */
	if (syscall(SYS_setresuid, -1, 1000 + p[1] % 1000, -1))
		return fz_fail(fz, "op %u: setresuid: %s", fz->op, strerror(errno));
	r = sys_ioctl(fd, ASHMEM_PURGE_ALL_CACHES, 0);
	if (syscall(SYS_setresuid, -1, 0, -1))
		abort();
	fz_trace(fz, "purge_all_caches() unprivileged = %s", err_name(r));
	return check(fz, r, -EPERM, "unprivileged ASHMEM_PURGE_ALL_CACHES");
}

/* /proc/self/maps names a shared mapping after its region. */
static int op_maps(struct fz *fz, const uint64_t *p)
{
	int mi = pick_map(p[0]);
	char line[512], want[ASHMEM_NAME_LEN + 16], *path = NULL;
	struct region *rg;
	struct map *mp;
	FILE *f;

	if (mi < 0) {
		fz_trace(fz, "maps: none");
		return 0;
	}
	mp = &m.map[mi];
	rg = &m.reg[mp->reg];
	if (mp->shared)
		snprintf(want, sizeof(want), "/dev/ashmem%s%s", rg->name[0] ? "/" : "",
			 rg->name);
	else
		snprintf(want, sizeof(want), "/dev/ashmem");
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return fz_fail(fz, "op %u: /proc/self/maps: %s", fz->op, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (strtoul(line, NULL, 16) != (unsigned long)mp->addr)
			continue;
		line[strcspn(line, "\n")] = '\0';
		path = strchr(line, '/');
		break;
	}
	fclose(f);
	fz_trace(fz, "maps(m%d): %s", mi, path ? path : "(none)");
	if (!path)
		return fz_fail(fz, "op %u: mapping %p not in /proc/self/maps", fz->op,
			       mp->addr);
	/* shmem's files are unlinked: " (deleted)" may follow. */
	if (strncmp(path, want, strlen(want)) ||
	    (path[strlen(want)] && strcmp(path + strlen(want), " (deleted)")))
		return fz_fail(fz, "op %u: /proc/self/maps shows \"%.60s\", expected \"%.60s\"",
			       fz->op, path, want);
	return 0;
}

/* Check what page @i of mapping @mp read. */
static int check_read(struct fz *fz, struct map *mp, unsigned int i,
		      const uint64_t v[2], const char *how)
{
	struct region *rg = &m.reg[mp->reg];
	uint64_t fp = mp->pgoff + i;
	int k;

	for (k = 0; k < 2; k++) {
		bool ok = mp->shared ? content_ok(rg, fp, v[k]) : v[k] == mp->pv[i];

		if (!ok)
			return fz_fail(fz, "op %u: %s of region %d page %llu word %d: "
				       "%#llx, expected %#llx%s",
				       fz->op, how, mp->reg, (unsigned long long)fp, k,
				       (unsigned long long)v[k],
				       (unsigned long long)(mp->shared ? rg->val[fp] : mp->pv[i]),
				       mp->shared && (rg->alt0[fp] || page_maybe_purged(rg, fp)) ?
				       " or 0" : "");
	}
	return 0;
}

/* The signal a touch of page @i of @mp must raise: 0, SIGSEGV, SIGBUS. */
static int expect_sig(const struct map *mp, unsigned int i, bool write)
{
	const struct region *rg = &m.reg[mp->reg];
	int prot = mp->prot[i];

	if (write ? !(prot & PROT_WRITE) : prot == PROT_NONE)
		return SIGSEGV;
	if (mp->shared && (mp->pgoff + i) * pg >= rg->size)
		return SIGBUS;
	return 0;
}

static uint64_t tag(const struct fz *fz, int ri, uint64_t page)
{
	return 1ULL << 63 | (uint64_t)fz->op << 24 | (page & 0xffff) << 4 | ri;
}

static int op_touch(struct fz *fz, const uint64_t *p, bool write)
{
	int mi = pick_map(p[0]), sig, want;
	unsigned int i;
	uint64_t v[2], fp, val;
	struct region *rg;
	struct map *mp;

	if (mi < 0) {
		fz_trace(fz, "%s: none", write ? "write" : "read");
		return 0;
	}
	mp = &m.map[mi];
	rg = &m.reg[mp->reg];
	i = p[1] % mp->npages;
	fp = mp->pgoff + i;
	want = expect_sig(mp, i, write);
	/*
	 * Without PROT_READ a page may be readable or not (write implies
	 * read on x86, exec-only may be a protection key): not read.
	 */
	if (!write && mp->prot[i] != PROT_NONE && !(mp->prot[i] & PROT_READ)) {
		fz_trace(fz, "read(m%d page %u): not readable for sure", mi, i);
		return 0;
	}
	val = tag(fz, mp->reg, fp);
	sig = touch(mp->addr + (size_t)i * pg, write, val, v);
	fz_trace(fz, "%s(m%d page %u = region %d page %llu) = %s",
		 write ? "write" : "read", mi, i, mp->reg, (unsigned long long)fp,
		 sig ? strsignal(sig) : "ok");
	if (sig != want)
		return fz_fail(fz, "op %u: %s of mapping page %u (file page %llu, "
			       "size %#llx, prot %d): %s, expected %s",
			       fz->op, write ? "write" : "read", i, (unsigned long long)fp,
			       (unsigned long long)rg->size, mp->prot[i],
			       sig ? strsignal(sig) : "no signal",
			       want ? strsignal(want) : "none");
	if (sig)
		return 0;
	if (!write)
		return check_read(fz, mp, i, v, "read");
	if (!mp->shared) {
		mp->pv[i] = val;
	} else if (fp < TRACK) {
		rg->val[fp] = val;
		rg->alt0[fp] = false;
	}
	return 0;
}

static int op_pread(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd);
	uint64_t page, v[2] = { 0, 0 };
	struct region *rg;
	long r, exp;
	off_t off;

	if (ri < 0) {
		fz_trace(fz, "pread: nothing open");
		return 0;
	}
	rg = &m.reg[ri];
	page = p[1] % (TRACK + 2);
	off = page * pg;
	if (rg->acc == O_WRONLY)
		exp = -EBADF;
	else if (!rg->size)
		exp = 0;
	else if (!rg->backed)
		exp = -EBADF;
	else if ((uint64_t)off >= rg->size)
		exp = 0;
	else
		exp = rg->size - off < 8 ? (long)(rg->size - off) : 8;
	r = pread(fd, v, 8, off);
	r = r < 0 ? -errno : r;
	fz_trace(fz, "pread(r%d, page %llu) = %s", ri, (unsigned long long)page,
		 err_name(r));
	if (check(fz, r, exp, "pread"))
		return -1;
	if (r == 8 && !content_ok(rg, page, v[0]))
		return fz_fail(fz, "op %u: pread of region %d page %llu: %#llx, "
			       "expected %#llx",
			       fz->op, ri, (unsigned long long)page, (unsigned long long)v[0],
			       (unsigned long long)(page < TRACK ? rg->val[page] : 0));
	return 0;
}

static int op_lseek(struct fz *fz, const uint64_t *p)
{
	static const int whences[] = { SEEK_SET, SEEK_END, SEEK_CUR, SEEK_DATA, SEEK_HOLE };
	int fd, ri = pick_fd(p[0], &fd), whence = whences[p[1] % 5];
	int64_t off = (int64_t)(p[2] % (4 * pg)) - (p[2] & 1 ? pg : 0);
	struct region *rg;
	long r, exp = 0;

	if (ri < 0) {
		fz_trace(fz, "lseek: nothing open");
		return 0;
	}
	rg = &m.reg[ri];
	r = lseek(fd, off, whence);
	r = r < 0 ? -errno : r;
	fz_trace(fz, "lseek(r%d, %lld, %d) = %s", ri, (long long)off, whence,
		 err_name(r));
	if (!rg->size)
		return check(fz, r, -EINVAL, "lseek");
	if (!rg->backed)
		return check(fz, r, -EBADF, "lseek");
	if (whence == SEEK_SET)
		exp = off < 0 ? -EINVAL : off;
	else if (whence == SEEK_END)
		exp = (int64_t)rg->size + off < 0 ? -EINVAL : (int64_t)rg->size + off;
	else
		return 0;	/* shared position, holes: not modelled */
	if (exp > (int64_t)MAX_SIZE)
		return 0;
	return check(fz, r, exp, "lseek");
}

static int op_fileid(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd);
	unsigned long id = 0;
	struct region *rg;
	long r;

	if (ri < 0) {
		fz_trace(fz, "get_file_id: nothing open");
		return 0;
	}
	rg = &m.reg[ri];
	r = sys_ioctl(fd, ASHMEM_GET_FILE_ID, p[1] % 8 ? (unsigned long)&id : 0);
	fz_trace(fz, "get_file_id(r%d) = %s, %lu", ri, err_name(r), id);
	if (!rg->backed)
		return check(fz, r, -EINVAL, "ASHMEM_GET_FILE_ID");
	if (!(p[1] % 8))
		return check(fz, r, -EFAULT, "ASHMEM_GET_FILE_ID");
	if (check(fz, r, 0, "ASHMEM_GET_FILE_ID"))
		return -1;
	if (rg->file_id >= 0 && (long)id != rg->file_id)
		return fz_fail(fz, "op %u: ASHMEM_GET_FILE_ID: %lu, before %ld",
			       fz->op, id, rg->file_id);
	rg->file_id = id;
	return 0;
}

static int op_badioctl(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd);
	unsigned long cmd;
	long r;

	if (ri < 0) {
		fz_trace(fz, "bad ioctl: nothing open");
		return 0;
	}
	switch (p[1] % 3) {
	case 0:
		cmd = _IO(__ASHMEMIOC, 12 + p[2] % 200);
		break;
	case 1:	/* a known number with another size or direction */
		cmd = _IOC(_IOC_READ | _IOC_WRITE, __ASHMEMIOC, 1 + p[2] % 11,
			   p[3] % 64);
		if (cmd == ASHMEM_SET_NAME || cmd == ASHMEM_GET_NAME)
			cmd ^= 1U << 16;
		break;
	default:
		cmd = (unsigned int)p[2];
		break;
	}
	/* Numbers the driver knows are not bad. */
	switch (cmd) {
	case ASHMEM_SET_NAME:
	case ASHMEM_GET_NAME:
	case ASHMEM_SET_SIZE:
	case ASHMEM_GET_SIZE:
	case ASHMEM_SET_PROT_MASK:
	case ASHMEM_GET_PROT_MASK:
	case ASHMEM_PIN:
	case ASHMEM_UNPIN:
	case ASHMEM_GET_PIN_STATUS:
	case ASHMEM_PURGE_ALL_CACHES:
	case ASHMEM_GET_FILE_ID:
		fz_trace(fz, "bad ioctl: %#lx is known", cmd);
		return 0;
	}
	/* The VFS's own (FIONBIO, FIOCLEX...) are not the driver's. */
	if (_IOC_TYPE(cmd) != __ASHMEMIOC) {
		fz_trace(fz, "bad ioctl: %#lx is not ours", cmd);
		return 0;
	}
	r = sys_ioctl(fd, cmd, 0);
	fz_trace(fz, "ioctl(r%d, %#lx) = %s", ri, cmd, err_name(r));
	return check(fz, r, -ENOTTY, "unknown ioctl");
}

static int op_peer_give(struct fz *fz, const uint64_t *p)
{
	int fd, ri = pick_fd(p[0], &fd);
	struct preq q = { .op = P_GIVE };
	struct prep rep;

	if (ri < 0 || as.peer <= 0) {
		fz_trace(fz, "peer give: nothing open");
		return 0;
	}
	q.slot = ri;
	fz_trace(fz, "peer give(r%d fd %d)", ri, fd);
	if (peer_send(&q, fd, &rep))
		return fz_fail(fz, "op %u: the peer is gone", fz->op);
	m.reg[ri].peer = true;
	return 0;
}

static int op_peer_close(struct fz *fz, const uint64_t *p)
{
	int ri = pick_region(p[0]);
	struct preq q = { .op = P_CLOSE };
	struct prep rep;

	if (ri < 0 || !m.reg[ri].peer) {
		fz_trace(fz, "peer close: none");
		return 0;
	}
	q.slot = ri;
	fz_trace(fz, "peer close(r%d)", ri);
	if (peer_send(&q, -1, &rep))
		return fz_fail(fz, "op %u: the peer is gone", fz->op);
	m.reg[ri].peer = false;
	region_check_release(ri);
	return 0;
}

/* The peer maps page @page, writes to it (maybe) and reads it. */
static int op_peer_touch(struct fz *fz, const uint64_t *p)
{
	int ri = pick_region(p[0]);
	struct preq q = { .op = P_TOUCH };
	struct region *rg;
	struct prep rep;
	uint64_t page;
	long exp = 0;
	int k;

	if (ri < 0 || !m.reg[ri].peer) {
		fz_trace(fz, "peer touch: none");
		return 0;
	}
	rg = &m.reg[ri];
	page = p[1] % (npages_of(rg->size) + 1);
	if (page >= TRACK)
		page = p[1] % TRACK;
	q.slot = ri;
	q.a = page;
	q.b = p[2] % 2 ? tag(fz, ri, page) : 0;
	if (rg->acc != O_RDWR)
		exp = -EACCES;
	else if (!rg->size)
		exp = -EINVAL;
	else if (PROT_READ & ~rg->mask || PROT_WRITE & ~rg->mask)
		exp = -EPERM;
	else if (page * pg >= rg->size)
		exp = SIGBUS;
	if (peer_send(&q, -1, &rep))
		return fz_fail(fz, "op %u: the peer is gone", fz->op);
	fz_trace(fz, "peer touch(r%d page %llu, write %#llx) = %s",
		 ri, (unsigned long long)page, (unsigned long long)q.b,
		 err_name(rep.ret));
	if (check(fz, rep.ret, exp, "peer mmap and touch"))
		return -1;
	if (rep.ret < 0)
		return 0;
	rg->backed = true;
	if (rep.ret)
		return 0;
	if (q.b) {
		rg->val[page] = q.b;
		rg->alt0[page] = false;
	}
	for (k = 0; k < 2; k++)
		if (!content_ok(rg, page, rep.v[k]))
			return fz_fail(fz, "op %u: the peer read region %d page %llu: "
				       "%#llx, expected %#llx",
				       fz->op, ri, (unsigned long long)page,
				       (unsigned long long)rep.v[k],
				       (unsigned long long)rg->val[page]);
	return 0;
}

static int op_peer_purge(struct fz *fz, const uint64_t *p)
{
	struct preq q = { .op = P_PURGE };
	long before = sysfs_long(as.sys_purged), after;
	struct prep rep;

	(void)p;
	if (as.peer <= 0)
		return 0;
	if (peer_send(&q, -1, &rep))
		return fz_fail(fz, "op %u: the peer is gone", fz->op);
	after = sysfs_long(as.sys_purged);
	fz_trace(fz, "peer purge_all_caches() = %s; our purged_bytes %ld -> %ld",
		 err_name(rep.ret), before, after);
	/* Its cell has one region, never unpinned. */
	if (check(fz, rep.ret, 0, "peer's ASHMEM_PURGE_ALL_CACHES"))
		return -1;
	if (!m.squeezed && before != after)
		return fz_fail(fz, "op %u: a purge of the peer's cell purged ours "
			       "(%ld -> %ld bytes)", fz->op, before, after);
	return 0;
}

/* Reclaim in our cgroup: the shrinker may purge any unpinned range. */
static int op_squeeze(struct fz *fz, const uint64_t *p)
{
	char amount[32];
	int r;

	snprintf(amount, sizeof(amount), "%lluK",
		 (unsigned long long)(64 + p[0] % 4096));
	r = write_str(CGROOT "/" CG_MAIN "/memory.reclaim", amount);
	fz_trace(fz, "memory.reclaim %s = %s", amount, err_name(r));
	m.squeezed = true;
	return 0;
}

/*
 * A child touches the shared mappings, unpins a range, maybe purges,
 * and exits; the parent waits. Its writes and unpin are in the model.
 */
static int op_fork(struct fz *fz, const uint64_t *p)
{
	int mi = pick_map(p[0]), ri = -1, fd = -1, status;
	uint64_t s = 0, e = 0, val = 0, fp = 0;
	struct ashmem_pin pin = { 0, 0 };
	bool do_write = false, do_unpin = false, do_purge = p[3] % 4 == 0;
	struct map *mp = mi >= 0 ? &m.map[mi] : NULL;
	unsigned int i = 0;
	pid_t pid;

	if (mp && mp->shared) {
		i = p[1] % mp->npages;
		fp = mp->pgoff + i;
		do_write = !expect_sig(mp, i, true);
		val = tag(fz, mp->reg, fp);
	}
	ri = pick_fd(p[2], &fd);
	if (ri >= 0 && m.reg[ri].backed) {
		pin_args(&m.reg[ri], p + 2, &pin.offset, &pin.len);
		do_unpin = !pin_range(m.reg[ri].size, pin.offset, pin.len, &s, &e);
	}
	if (!do_unpin)
		do_purge &= ri >= 0;
	as.shared_msg[0] = '\0';
	pid = fork();
	if (pid < 0)
		return fz_fail(fz, "op %u: fork: %s", fz->op, strerror(errno));
	if (!pid) {
		long r;

		fz_cov_thread_start();
		if (do_write && touch(mp->addr + (size_t)i * pg, true, val, NULL))
			snprintf(as.shared_msg, 256, "child: write faulted");
		r = do_unpin ? sys_ioctl(fd, ASHMEM_UNPIN, (unsigned long)&pin) : 0;
		if (r)
			snprintf(as.shared_msg, 256, "child: ASHMEM_UNPIN: %s", err_name(r));
		r = do_purge ? sys_ioctl(fd, ASHMEM_PURGE_ALL_CACHES, 0) : 0;
		if (r < 0)
			snprintf(as.shared_msg, 256, "child: PURGE_ALL_CACHES: %s", err_name(r));
		fz_cov_collect();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return fz_fail(fz, "op %u: the forked child died (%#x)", fz->op, status);
	fz_trace(fz, "fork: child writes m%d page %u (%d), unpins r%d %#x+%#x (%d), purges (%d)",
		 mi, i, do_write, ri, pin.offset, pin.len, do_unpin, do_purge);
	if (as.shared_msg[0])
		return fz_fail(fz, "op %u: %s", fz->op, as.shared_msg);
	if (do_write && fp < TRACK) {
		m.reg[mp->reg].val[fp] = val;
		m.reg[mp->reg].alt0[fp] = false;
	}
	if (do_unpin)
		model_unpin(&m.reg[ri], s, e);
	if (do_purge)	/* its answer is the child's; contents: maybe */
		model_purge_all(false);
	return 0;
}

/* ---- the operation table ----------------------------------------- */

static int op_pin(struct fz *fz, const uint64_t *p)
{
	return do_pin(fz, p, ASHMEM_PIN, false);
}

static int op_unpin(struct fz *fz, const uint64_t *p)
{
	return do_pin(fz, p, ASHMEM_UNPIN, false);
}

static int op_status(struct fz *fz, const uint64_t *p)
{
	return do_pin(fz, p, ASHMEM_GET_PIN_STATUS, false);
}

static int op_peer_pin(struct fz *fz, const uint64_t *p)
{
	static const unsigned long how[] = {
		ASHMEM_PIN, ASHMEM_UNPIN, ASHMEM_GET_PIN_STATUS
	};

	return do_pin(fz, p, how[p[5] % 3], true);
}

static int op_read(struct fz *fz, const uint64_t *p)
{
	return op_touch(fz, p, false);
}

static int op_write(struct fz *fz, const uint64_t *p)
{
	return op_touch(fz, p, true);
}

/* A few percent of sequences: forks cost milliseconds under TCG. */
static int op_fork_some(struct fz *fz, const uint64_t *p)
{
	if (p[5] % 8) {
		fz_trace(fz, "fork: not this time");
		return 0;
	}
	return op_fork(fz, p);
}

static int op_squeeze_some(struct fz *fz, const uint64_t *p)
{
	if (p[5] % 4) {
		fz_trace(fz, "squeeze: not this time");
		return 0;
	}
	return op_squeeze(fz, p);
}

static const struct {
	int (*fn)(struct fz *fz, const uint64_t *p);
	unsigned int weight;
} ops[] = {
	{ op_open, 8 }, { op_close, 4 }, { op_dup, 2 }, { op_setname, 4 },
	{ op_getname, 3 }, { op_setsize, 8 }, { op_getsize, 2 },
	{ op_setprot, 3 }, { op_getprot, 2 }, { op_mmap, 12 },
	{ op_munmap, 4 }, { op_mprotect, 4 }, { op_mremap, 3 },
	{ op_madvise, 2 }, { op_pin, 10 }, { op_unpin, 12 },
	{ op_status, 5 }, { op_purge, 4 }, { op_read, 10 }, { op_write, 12 },
	{ op_pread, 4 }, { op_lseek, 2 }, { op_fileid, 2 },
	{ op_badioctl, 1 }, { op_peer_give, 3 }, { op_peer_close, 1 },
	{ op_peer_pin, 3 }, { op_peer_touch, 2 }, { op_peer_purge, 1 },
	{ op_fork_some, 1 }, { op_squeeze_some, 1 }, { op_purge_unpriv, 1 },
	{ op_maps, 1 },
};

#define O_NR	ARRAY_SIZE(ops)

static unsigned int weights[O_NR];

/* ---- sequence ------------------------------------------------------ */

static void seq_cleanup(void)
{
	struct preq q = { .op = P_CLOSE };
	struct prep rep;
	int i, k;

	for (i = 0; i < MAPS; i++)
		if (m.map[i].used)
			munmap(m.map[i].addr, (size_t)m.map[i].npages * pg);
	for (i = 0; i < REGIONS; i++) {
		for (k = 0; k < m.reg[i].nfd; k++)
			close(m.reg[i].fd[k]);
		if (m.reg[i].peer) {
			q.slot = i;
			peer_send(&q, -1, &rep);
		}
	}
	memset(&m, 0, sizeof(m));
}

/* Where the time goes, per operation (ASHMEM_PROF=1 in the environment). */
static double prof_ns[O_NR + 2];
static unsigned long prof_n[O_NR + 2];

static double ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int ashmem_sequence(struct fz *fz)
{
	double t0 = ns_now(), t;
	unsigned int len = 4 + fz_below(fz, 48);
	uint64_t p[PARAMS];
	long regions, bytes;
	int ret = 0, op, i;

	memset(&m, 0, sizeof(m));
	m.purged_base = sysfs_long(as.sys_purged);
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
	seq_cleanup();
	prof_ns[O_NR] += ns_now() - t;
	prof_n[O_NR]++;
	prof_ns[O_NR + 1] += ns_now() - t0;
	prof_n[O_NR + 1]++;
	if (ret)
		return ret;
	/* Everything closed and unmapped: the cell's books are empty. */
	regions = sysfs_long(as.sys_regions);
	bytes = sysfs_long(as.sys_bytes);
	if (regions != 0 || bytes != 0)
		return fz_fail(fz, "after the sequence the cell still has %ld regions, %ld bytes",
			       regions, bytes);
	return 0;
}

/* ---- setup and teardown ------------------------------------------- */

static int sysfs_open(const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/cask/cells/%s/ashmem/%s",
		 as.cell, file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static int ashmem_setup(struct fz *fz)
{
	struct sigaction sa;
	struct statvfs sv;
	int sv_pair[2], fd;
	char line[300], *cg;
	unsigned int i;
	FILE *f;
	char *g;

	pg = sysconf(_SC_PAGESIZE);
	for (i = 0; i < O_NR; i++)
		weights[i] = ops[i].weight;
	if (access(DEV, R_OK | W_OK))
		return fz_fail(fz, DEV ": %s", strerror(errno));
	as.noexec = !statvfs(DEV, &sv) && (sv.f_flag & ST_NOEXEC);
	g = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	as.shared_msg = mmap(NULL, pg, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED || as.shared_msg == MAP_FAILED)
		return fz_fail(fz, "mmap: %s", strerror(errno));
	mprotect(g + pg, pg, PROT_NONE);
	as.guard = g + pg;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = touch_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, &as.old_segv);
	sigaction(SIGBUS, &sa, &as.old_bus);

	/* Where we came from: our cgroup and IPC namespace. */
	f = fopen("/proc/self/cgroup", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "0::", 3)) {
				cg = line + 3;
				cg[strcspn(cg, "\n")] = '\0';
				snprintf(as.orig_cg, sizeof(as.orig_cg), "%.200s", cg);
			}
		fclose(f);
	}
	as.orig_ipc = open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC);
	if (as.orig_ipc < 0)
		return fz_fail(fz, "/proc/self/ns/ipc: %s", strerror(errno));
	mkdir(CGROOT "/" CG_MAIN, 0755);
	mkdir(CGROOT "/" CG_PEER, 0755);

	/* The peer: another cgroup, another cell. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv_pair))
		return fz_fail(fz, "socketpair: %s", strerror(errno));
	as.peer = fork();
	if (as.peer < 0)
		return fz_fail(fz, "fork: %s", strerror(errno));
	if (!as.peer) {
		close(sv_pair[0]);
		if (join_cg(CG_PEER) || unshare(CLONE_NEWIPC))
			_exit(1);
		peer_main(sv_pair[1]);
	}
	close(sv_pair[1]);
	as.peer_sock = sv_pair[0];

	if (join_cg(CG_MAIN))
		return fz_fail(fz, "cannot join cgroup " CG_MAIN);
	if (unshare(CLONE_NEWIPC))
		return fz_fail(fz, "unshare(CLONE_NEWIPC): %s", strerror(errno));
	as.ready = true;
	/* The first use makes our auto cell. */
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fz_fail(fz, DEV " in a new IPC namespace: %s", strerror(errno));
	close(fd);
	fd = open("/sys/kernel/cask/self", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, as.cell, sizeof(as.cell) - 1) <= 0)
		return fz_fail(fz, "/sys/kernel/cask/self: %s", strerror(errno));
	close(fd);
	as.cell[strcspn(as.cell, "\n")] = '\0';
	as.sys_regions = sysfs_open("regions");
	as.sys_bytes = sysfs_open("bytes");
	as.sys_purged = sysfs_open("purged_bytes");
	if (as.sys_regions < 0 || as.sys_bytes < 0 || as.sys_purged < 0)
		return fz_fail(fz, "cells/%s/ashmem: %s", as.cell, strerror(errno));
	if (fz->verbose)
		printf("# ashmem: cell %s, peer %d\n", as.cell, as.peer);
	return 0;
}

static void ashmem_teardown(struct fz *fz)
{
	struct preq q = { .op = P_QUIT };
	struct prep rep;

	(void)fz;
	if (getenv("ASHMEM_PROF")) {
		unsigned int i;

		for (i = 0; i < O_NR + 2; i++)
			if (prof_n[i])
				printf("# ashmem prof: op %2d: %7lu calls, "
				       "%8.1f us each, %6.2f s\n",
				       i, prof_n[i], prof_ns[i] / prof_n[i] / 1e3,
				       prof_ns[i] / 1e9);
	}
	if (as.peer > 0) {
		peer_send(&q, -1, &rep);
		close(as.peer_sock);
		waitpid(as.peer, NULL, 0);
		as.peer = 0;
	}
	if (as.sys_regions >= 0)
		close(as.sys_regions);
	if (as.sys_bytes >= 0)
		close(as.sys_bytes);
	if (as.sys_purged >= 0)
		close(as.sys_purged);
	as.sys_regions = -1;
	as.sys_bytes = -1;
	as.sys_purged = -1;
	if (as.orig_ipc >= 0) {
		if (as.ready)
			setns(as.orig_ipc, CLONE_NEWIPC);
		close(as.orig_ipc);
		as.orig_ipc = -1;
	}
	if (as.orig_cg[0])
		join_cg(as.orig_cg);
	rmdir(CGROOT "/" CG_MAIN);
	rmdir(CGROOT "/" CG_PEER);
	sigaction(SIGSEGV, &as.old_segv, NULL);
	sigaction(SIGBUS, &as.old_bus, NULL);
	if (as.guard)
		munmap(as.guard - pg, 2 * pg);
	if (as.shared_msg)
		munmap(as.shared_msg, pg);
	as.guard = NULL;
	as.shared_msg = NULL;
	as.ready = false;
}

static struct fz_driver ashmem_driver = {
	.name = "ashmem",
	.help = "regions: names, sizes, masks, mappings, pins, purges, forks, a peer cell",
	.setup = ashmem_setup,
	.sequence = ashmem_sequence,
	.teardown = ashmem_teardown,
};

FZ_DRIVER(ashmem_driver);
