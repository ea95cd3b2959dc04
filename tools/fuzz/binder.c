// SPDX-License-Identifier: GPL-2.0
/*
 * cask-fuzz binder: structure-aware sequences for cask_binder.
 *
 * Actors. Setup forks, once, the workers: in the fuzzer's own cell a
 * context manager and four processes, and, in a second cell (an IPC
 * namespace of its own, hence an auto cell, made by a "leader" process
 * that forks them), a manager and two more. Each worker has a control
 * thread, which executes the operations the parent sends it over a
 * SOCK_SEQPACKET channel and answers each, and two looper threads that
 * block in BINDER_WRITE_READ and serve what comes, as libbinder's pool
 * does. Forking per sequence is too slow under TCG; instead every
 * sequence begins by opening and mapping /dev/binder afresh in each
 * worker it uses and ends by closing it (loopers parked meanwhile), so
 * that sequences do not depend on each other and a seed replays alone.
 *
 * Determinism. The parent draws every decision from fz_rand(): which
 * worker, which operation, and a 64-bit word that the worker expands with
 * a private stream into the transaction (objects, their breakage) or the
 * BC stream. Abstract slots ("the 3rd handle this process received",
 * "held buffer 2") are resolved by the worker from what it has: the same
 * seed is the same program on every kernel. What a receiver does with a
 * transaction (reply, reply with objects or handles, call back inside the
 * call, exit its thread, take references, sleep, hold the buffer) is in
 * the transaction's first data word, chosen by the sender's generator.
 *
 * Checks, only where Android's binder ABI is certain: a sync call to a
 * live target is answered (BR_REPLY, BR_DEAD_REPLY, BR_FAILED_REPLY or
 * BR_FROZEN_REPLY) within a timeout; BINDER_VERSION answers 8;
 * BINDER_ENABLE_ONEWAY_SPAM_DETECTION takes any value; a worker finds
 * itself with BINDER_GET_FROZEN_INFO (sane bits) and BINDER_FREEZE (or
 * EAGAIN while a thread of it is in a sync call); the read
 * stream consists of whole known BR_ codes; a delivered transaction names
 * a node of the receiving process, comes from the receiver's own cell, its
 * fds are open files and never binder files, its PTR buffers lie in the
 * receiver's area; a binder file of the other cell answers EPERM to
 * ioctl() and fails mmap(); a worker does not die unless killed; a
 * write the driver stopped consuming leaves its error to read.
 *
 * Environment (for reproducers): FZB_SKIP=3,5 generates operations 3 and
 * 5 but does not run them (the rest of the sequence stays the same: how
 * a reproducer is cut down); FZB_WTRACE=1 prints every BINDER_WRITE_READ
 * of the workers on stderr; FZB_PROF=1 prints the time spent opening,
 * running and closing. Operations pipeline (the parent waits only for
 * some), so a race seen once may need a few runs of its seed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cask_binder.h"
#include "fuzz.h"

#define DEV		"/dev/binder"
#define NW		8	/* workers: 0-4 cell A, 5-7 cell B */
#define CELLB		5	/* first worker of cell B, its manager */
#define NLOOPERS	2
#define MAXH		32	/* handles a worker remembers */
#define MAXB		32	/* buffers a worker holds */
#define NPOOL		4	/* fds a worker sends */
#define RDBUF		2048
#define MAGIC		0xca5c0de0ULL
/* Seconds: a reply, an answer of a worker. Generous for TCG with KASAN. */
#define CALL_TIMEOUT	15
#define CHAN_TIMEOUT	30

static bool is_mgr(int w)
{
	return w == 0 || w == CELLB;
}

static int cell_of(int w)
{
	return w >= CELLB;
}

/* A node this worker publishes: its index and cell are in the pointer. */
#define NODE_PTR(w, k)	(0x10000000ULL | ((uint64_t)(w) << 16) | ((uint64_t)((k) + 1) << 4))
#define MGR_PTR(w)	NODE_PTR(w, 15)

/* ---- the requests ------------------------------------------------------ */

enum {
	W_BEGIN, W_END, W_CALL, W_WRITE, W_READ, W_IOCTL, W_MAP, W_TEXIT,
	W_XFD, W_QUIT,
};

static const char *const wop_name[] = {
	"begin", "end", "call", "write", "read", "ioctl", "map", "thread_exit",
	"cross_fd", "quit",
};

struct req {
	uint32_t op;
	uint32_t flags;		/* call: TF_*; begin: mmap variant */
	uint64_t r;		/* the op's own stream seed */
	uint64_t instr;		/* call: what the receiver does */
	uint32_t slot;		/* call: handle slot */
	uint32_t pad;
};

struct rsp {
	int32_t err;
	uint32_t answer;	/* call: the BR_ that ended it */
	char fail[200];		/* a broken rule, or "" */
};

/* What the receiver of a transaction does: the first data word. */
enum {
	A_REPLY, A_REPLY_OBJ, A_REPLY_HANDLES, A_NESTED, A_EXIT, A_STATUS,
	A_REFS, A_SLEEP, A_HOLD, A_NACT
};

#define INSTR(act, slot, depth, sub) \
	((uint64_t)(act) | ((uint64_t)(slot) & 15) << 4 | \
	 ((uint64_t)(depth) & 3) << 8 | (uint64_t)(sub) << 16)
#define I_ACT(i)	((unsigned int)((i) & 15) % A_NACT)
#define I_SLOT(i)	((unsigned int)((i) >> 4) & 15)
#define I_DEPTH(i)	((unsigned int)((i) >> 8) & 3)
#define I_SUB(i)	((i) >> 16)
/* Second data word: a marker, the sender's cell, "well-formed". */
#define META(cell, clean) ((MAGIC << 32) | (uint64_t)(cell) << 8 | (clean))

/* ---- worker side ------------------------------------------------------- */

struct worker {
	int idx, cell;
	int chan;
	int fd;			/* this sequence's binder file, or -1 */
	void *map;
	size_t map_size;
	bool mapped;		/* the area is mapped (not munmap'ed) */
	/* Readers of the area (read) against munmap (write). */
	pthread_rwlock_t maplock;
	dev_t rdev;		/* /dev/binder's device number */
	pthread_mutex_t mu;
	uint32_t handles[MAXH];
	unsigned int nhandles;
	uint64_t bufs[MAXB];
	unsigned int nbufs;
	int pool[NPOOL];
	char *fail;		/* shared with the parent */
	/* loopers */
	pthread_t lt[NLOOPERS];
	int quiesce;		/* loopers: park (__atomic) */
	sem_t parked;
	sem_t go[NLOOPERS];
};

static struct worker W;

static bool quiescing(void)
{
	return __atomic_load_n(&W.quiesce, __ATOMIC_SEQ_CST);
}

/* Per-thread state of one binder thread of the worker. */
struct bt {
	bool looper;		/* a pool thread: serves everything */
	int id;
	int entered;
	timer_t timer;
	bool has_timer;
	uint64_t pend_ref[8][2];	/* BR_INCREFS/ACQUIRE not acked (control) */
	uint32_t pend_ref_cmd[8];
	unsigned int npend_ref;
	uint64_t pend_death[8];
	unsigned int npend_death;
	int depth;
	bool exited;		/* THREAD_EXIT: the calls it waited for are gone */
	uint32_t stash;		/* an answer write_all() read */
};

/* A private stream for the worker's expansion of one op. */
struct rng {
	uint64_t s;
};

static uint64_t rnext(struct rng *g)
{
	uint64_t z = (g->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rbelow(struct rng *g, uint64_t n)
{
	return n ? rnext(g) % n : 0;
}

static bool rchance(struct rng *g, unsigned int num, unsigned int den)
{
	return rbelow(g, den) < num;
}

static void __attribute__((format(printf, 1, 2))) wfail(const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	int n;

	n = snprintf(msg, sizeof(msg), "worker %d (pid %d, tid %ld): ", W.idx,
		     getpid(), (long)syscall(SYS_gettid));
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&W.mu);
	if (!W.fail[0])
		snprintf(W.fail, 200, "%s", msg);
	pthread_mutex_unlock(&W.mu);
}

static void add_handle(uint32_t h)
{
	unsigned int i;

	pthread_mutex_lock(&W.mu);
	for (i = 0; i < W.nhandles; i++)
		if (W.handles[i] == h)
			goto out;
	if (W.nhandles < MAXH)
		W.handles[W.nhandles++] = h;
out:
	pthread_mutex_unlock(&W.mu);
}

/* Handle slot @k: one this process received, or a made-up number. */
static uint32_t slot_handle(uint32_t k)
{
	uint32_t h;

	pthread_mutex_lock(&W.mu);
	if (k == 15 || !W.nhandles)
		h = k == 15 ? 0x7fff : 0;
	else if (k == 14)
		h = 0;
	else
		h = W.handles[k % W.nhandles];
	pthread_mutex_unlock(&W.mu);
	return h;
}

static void hold_buf(uint64_t p)
{
	pthread_mutex_lock(&W.mu);
	if (W.nbufs < MAXB)
		W.bufs[W.nbufs++] = p;
	else
		p = 0;
	pthread_mutex_unlock(&W.mu);
	if (!p)
		return;
}

/* Take held buffer slot @k out of the list (0 if there is none). */
static uint64_t take_buf(uint32_t k)
{
	uint64_t p = 0;

	pthread_mutex_lock(&W.mu);
	if (W.nbufs) {
		k %= W.nbufs;
		p = W.bufs[k];
		W.bufs[k] = W.bufs[--W.nbufs];
	}
	pthread_mutex_unlock(&W.mu);
	return p;
}

static bool wtrace;	/* FZB_WTRACE: every BINDER_WRITE_READ on stderr */

static void dump_codes(char *out, size_t n, const uint8_t *p, size_t len)
{
	size_t pos = 0, o = 0;

	while (pos + 4 <= len && o + 12 < n) {
		uint32_t cmd;

		memcpy(&cmd, p + pos, 4);
		o += snprintf(out + o, n - o, " %x", cmd);
		if (cmd == BR_TRANSACTION || cmd == BR_REPLY || cmd == BC_TRANSACTION ||
		    cmd == BC_REPLY || cmd == BC_TRANSACTION_SG || cmd == BC_REPLY_SG) {
			const struct binder_transaction_data *tr = (const void *)(p + pos + 4);

			if (pos + 4 + sizeof(*tr) <= len && o + 40 < n)
				o += snprintf(out + o, n - o, "(h%llx f%x)",
					      (unsigned long long)tr->target.ptr, tr->flags);
		}
		pos += 4 + _IOC_SIZE(cmd);
	}
}

static int wr(int fd, const void *w, size_t wl, void *r, size_t rl,
	      size_t *wdone, size_t *rdone)
{
	size_t wd = 0, rd = 0;
	char a[256] = "", b[256] = "";
	int ret;

	if (!wtrace)
		return binder_wr(fd, w, wl, r, rl, wdone, rdone);
	if (wl)
		dump_codes(a, sizeof(a), w, wl);
	fprintf(stderr, "w%d/%ld: write%s, read %zu\n", W.idx, (long)syscall(SYS_gettid), a, rl);
	ret = binder_wr(fd, w, wl, r, rl, &wd, &rd);
	if (rd)
		dump_codes(b, sizeof(b), r, rd);
	fprintf(stderr, "w%d/%ld: -> %d wd %zu rd%s\n", W.idx, (long)syscall(SYS_gettid), ret,
		wd, b);
	if (wdone)
		*wdone = wd;
	if (rdone)
		*rdone = rd;
	return ret;
}

static uint32_t walk(struct bt *t, const uint8_t *buf, size_t len, bool act);
static void timer_arm(struct bt *t, int secs);
static void timer_disarm(struct bt *t);

/* The binder thread state of the calling thread. */
static __thread struct bt *cur_bt;

/*
 * A read after poll() said there is work: that work may be proc work
 * another thread takes first, and then the read would wait for ever. So
 * a second at most (the control thread's timer; a looper's read ends at
 * the latest when the sequence ends). EINTR counts as nothing read.
 */
static int read_some(struct bt *t, void *rb, size_t rl, size_t *rd)
{
	int ret;

	*rd = 0;
	timer_arm(t, 1);
	ret = wr(W.fd, NULL, 0, rb, rl, NULL, rd);
	timer_disarm(t);
	return ret == -EINTR ? 0 : ret;
}

/*
 * Write commands until all are consumed. After a failed command the
 * driver queues its error (BR_FAILED_REPLY of a one-way call that could
 * not be sent, say) and consumes nothing more until the thread has read
 * it, as the kernel's binder does: read (with room for a transaction:
 * the driver hands out nothing into less, the error included; what else
 * comes is served) and go on, as libbinder's talkWithDriver() keeps the
 * rest of its output. 0 or -errno.
 */
static int write_all(const void *buf, size_t len)
{
	static __thread struct bt dummy;
	struct bt *t = cur_bt ?: &dummy;
	size_t pos = 0;
	int i, ret = 0;

	for (i = 0; i < 8 && pos < len; i++) {
		struct pollfd pf = { .fd = W.fd, .events = POLLIN };
		uint8_t rb[RDBUF] __attribute__((aligned(8)));
		size_t wd = 0, rd = 0;

		ret = wr(W.fd, (const uint8_t *)buf + pos, len - pos, NULL, 0, &wd, NULL);
		pos += wd;
		if (ret || pos >= len)
			break;
		/* Only what is there: a read must not block here. */
		if (poll(&pf, 1, 0) != 1 || !(pf.revents & POLLIN)) {
			char codes[64] = "";
			uint32_t cmd;

			/* A looper's file closed under it: the sequence ended. */
			if (quiescing() || (pf.revents & POLLNVAL))
				break;
			/* What is there after all (a read that may block: 1 s). */
			memcpy(&cmd, (const uint8_t *)buf + pos, 4);
			timer_arm(t, 1);
			ret = wr(W.fd, NULL, 0, rb, sizeof(rb), NULL, &rd);
			timer_disarm(t);
			dump_codes(codes, sizeof(codes), rb, rd);
			wfail("write stuck at %zu of %zu (%#x), poll %#x, read %d:%s",
			      pos, len, cmd, pf.revents, ret, codes);
			break;
		}
		ret = read_some(t, rb, sizeof(rb), &rd);
		if (ret)
			break;
		/* An answer read here is the one a wait_answer() is after. */
		t->stash = walk(t, rb, rd, true) ?: t->stash;
	}
	return ret ?: pos == len ? 0 : -EPROTO;
}

static void bc_simple(int fd, uint32_t cmd, const void *p, size_t n)
{
	struct bcbuf c;

	(void)fd;
	bc_init(&c);
	bc_add(&c, cmd, p, n);
	write_all(c.buf, c.len);
}

/* BC_TRANSACTION, BC_REPLY or their _SG with @tr: 0 or -errno. */
static int send_tr(uint32_t cmd, const struct binder_transaction_data *tr, uint64_t bufsize)
{
	struct binder_transaction_data_sg sg = { .transaction_data = *tr,
						 .buffers_size = bufsize };
	struct bcbuf c;

	bc_init(&c);
	if (cmd == BC_TRANSACTION_SG || cmd == BC_REPLY_SG)
		bc_add(&c, cmd, &sg, sizeof(sg));
	else
		bc_add(&c, cmd, tr, sizeof(*tr));
	return write_all(c.buf, c.len);
}

/* ---- building transactions ---------------------------------------------- */

struct tx {
	struct txn t;
	uint64_t bufsize;
	bool sg;
	bool clean;
	uint8_t sgbuf[4][128] __attribute__((aligned(8)));
	struct binder_transaction_data tr;
};

static int pool_fd(struct rng *g)
{
	switch (rbelow(g, 12)) {
	case 0:
		return -1;
	case 1:
		return 1000 + (int)rbelow(g, 100);
	case 2:
		return W.fd;	/* a binder file: must not cross */
	default:
		return W.pool[rbelow(g, NPOOL)];
	}
}

/*
 * Expand @sub into a transaction: data words, up to six objects of every
 * type (PTRs with parents, FDAs inside them), well-formed unless the
 * stream decides on one breakage.
 */
static void build_tx(struct tx *x, uint64_t instr, uint64_t sub, bool handles_only)
{
	struct rng g = { sub ^ 0x243f6a8885a308d3ULL };
	unsigned int n, i, nptr = 0;
	int ptridx[4];
	uint64_t meta;
	size_t metaoff;

	txn_init(&x->t);
	x->bufsize = 0;
	x->clean = true;
	txn_put(&x->t, &instr, 8);
	metaoff = x->t.len;
	meta = 0;
	txn_put(&x->t, &meta, 8);
	n = handles_only ? 1 + rbelow(&g, 3) : rbelow(&g, 7);
	for (i = 0; i < n; i++) {
		unsigned int type = handles_only ? 2 : rbelow(&g, 9);

		switch (type) {
		case 0: case 1: {
			struct flat_binder_object o = {
				.hdr.type = type ? BINDER_TYPE_WEAK_BINDER : BINDER_TYPE_BINDER,
				.flags = rchance(&g, 3, 4) ? FLAT_BINDER_FLAG_ACCEPTS_FDS : 0,
				.binder = NODE_PTR(W.idx, rbelow(&g, 4)),
			};

			if (rchance(&g, 1, 8))
				o.flags |= FLAT_BINDER_FLAG_TXN_SECURITY_CTX | rbelow(&g, 0x100);
			o.cookie = o.binder + 1;
			txn_obj(&x->t, &o, sizeof(o));
			break;
		}
		case 2: case 3: {
			struct flat_binder_object o = {
				.hdr.type = type == 3 ? BINDER_TYPE_WEAK_HANDLE :
							BINDER_TYPE_HANDLE,
				.handle = slot_handle(rbelow(&g, 16)),
			};

			txn_obj(&x->t, &o, sizeof(o));
			break;
		}
		case 4: case 5:
			txn_fd(&x->t, pool_fd(&g), rnext(&g) & 0xff);
			break;
		case 6: case 7: {
			/* A PTR, with its parent an earlier PTR now and then. */
			uint64_t len = 8 + 8 * rbelow(&g, 15);
			uint64_t parent = 0, poff = 0;
			uint32_t flags = 0;
			uint8_t *b;

			if (nptr >= 4)
				break;
			b = x->sgbuf[nptr];
			memset(b, 0, 128);
			if (nptr && rchance(&g, 1, 2)) {
				unsigned int p = rbelow(&g, nptr);

				flags = BINDER_BUFFER_FLAG_HAS_PARENT;
				parent = x->t.nobjs ? (uint64_t)ptridx[p] : 0;
				poff = 8 * rbelow(&g, 8);
			}
			ptridx[nptr] = x->t.nobjs;
			txn_ptr(&x->t, b, len, flags, parent, poff);
			nptr++;
			break;
		}
		case 8: {
			/* An FDA: fds written into the last PTR's buffer. */
			uint64_t num = 1 + rbelow(&g, 4), off, k;
			uint32_t *fds;

			if (!nptr)
				break;
			off = 4 * rbelow(&g, 8);
			fds = (uint32_t *)(x->sgbuf[nptr - 1] + off);
			for (k = 0; k < num && off + 4 * (k + 1) <= 128; k++)
				fds[k] = pool_fd(&g);
			txn_fda(&x->t, num, ptridx[nptr - 1], off);
			break;
		}
		}
	}
	/* Some trailing bytes, not always a multiple of 8. */
	txn_put(&x->t, NULL, rbelow(&g, 24));
	x->bufsize = x->t.buffers_size;
	x->sg = nptr || rchance(&g, 1, 8);
	txn_tr(&x->t, &x->tr, 0, (uint32_t)rnext(&g), 0);

	/* One breakage in four. */
	if (!handles_only && rchance(&g, 1, 4)) {
		binder_size_t *offs = x->t.offs;
		unsigned int j = x->t.nobjs ? rbelow(&g, x->t.nobjs) : 0;
		void *o = x->t.nobjs ? x->t.data + offs[j] : NULL;
		uint32_t type = o ? ((struct binder_object_header *)o)->type : 0;
		struct binder_buffer_object *bo = type == BINDER_TYPE_PTR ? o : NULL;
		struct binder_fd_array_object *fa = type == BINDER_TYPE_FDA ? o : NULL;

		x->clean = false;
		switch (rbelow(&g, 14)) {
		case 0:
			if (o)
				offs[j] += 1 + rbelow(&g, 7);
			break;
		case 1:
			if (o)
				offs[j] = x->t.len - 4 * rbelow(&g, 4);
			break;
		case 2:
			x->tr.offsets_size -= 4;
			break;
		case 3:
			x->tr.data_size = x->tr.data_size > 20 ?
					  x->tr.data_size - 1 - rbelow(&g, 20) : 0;
			break;
		case 4:
			x->bufsize = rchance(&g, 1, 2) ? (x->bufsize > 8 ? x->bufsize - 8 : 0)
						      : x->bufsize + 8 * rbelow(&g, 1024);
			x->sg = true;
			break;
		case 5:
			if (bo)
				bo->length = rchance(&g, 1, 2) ? (1ULL << 30) : rbelow(&g, 9);
			else if (o)
				((struct binder_object_header *)o)->type = (uint32_t)rnext(&g);
			break;
		case 6:
			if (bo) {
				bo->flags |= BINDER_BUFFER_FLAG_HAS_PARENT;
				bo->parent = rchance(&g, 1, 2) ? j : rbelow(&g, 20);
			} else if (fa) {
				fa->parent = rbelow(&g, 20);
			}
			break;
		case 7:
			if (bo)
				bo->parent_offset = rchance(&g, 1, 2) ? ~0ULL - rbelow(&g, 16) :
						    8 * rbelow(&g, 64);
			else if (fa)
				fa->parent_offset = rbelow(&g, 256);
			break;
		case 8:
			if (fa)
				fa->num_fds = rchance(&g, 1, 2) ? 0 : (1ULL << rbelow(&g, 40));
			break;
		case 9:
			/* Overlapping objects. */
			if (j)
				offs[j] = offs[j - 1] + 8 * rbelow(&g, 3);
			break;
		case 10:
			/* Out of order. */
			if (x->t.nobjs > 1) {
				binder_size_t t = offs[0];

				offs[0] = offs[x->t.nobjs - 1];
				offs[x->t.nobjs - 1] = t;
			}
			break;
		case 11:
			x->tr.data.ptr.buffer = rchance(&g, 1, 2) ? 0 : 0x10;
			break;
		case 12:
			x->tr.data.ptr.offsets = 8;
			break;
		case 13:
			x->tr.offsets_size = 8 * (rbelow(&g, 40));
			break;
		}
	}
	meta = META(W.cell, x->clean);
	memcpy(x->t.data + metaoff, &meta, 8);
}

/* ---- reading ------------------------------------------------------------ */

static bool in_area(uint64_t p, uint64_t len)
{
	uint64_t s = (uintptr_t)W.map;

	return p >= s && p + len >= p && p + len <= s + W.map_size;
}

static void check_fd(int fd, bool strict)
{
	struct stat st;

	if (fstat(fd, &st)) {
		if (strict)
			wfail("received fd %d is not open", fd);
		return;
	}
	if (S_ISCHR(st.st_mode) && st.st_rdev == W.rdev)
		wfail("received fd %d is a binder file", fd);
	close(fd);
}

/*
 * Look at a delivered transaction: the node is ours, the sender is of our
 * cell, handles are remembered, fds checked and closed, PTRs in our area.
 * Returns its instruction word (A_REPLY when it has none).
 */
static uint64_t inspect_locked(const struct binder_transaction_data *tr, bool reply);

static uint64_t inspect_tr(const struct binder_transaction_data *tr, bool reply)
{
	uint64_t instr;

	pthread_rwlock_rdlock(&W.maplock);
	instr = inspect_locked(tr, reply);
	pthread_rwlock_unlock(&W.maplock);
	return instr;
}

static uint64_t inspect_locked(const struct binder_transaction_data *tr, bool reply)
{
	uint64_t instr = 0, meta = 0, nobj, i;
	const binder_size_t *offs;
	const uint8_t *data;
	bool clean;

	if (!reply && tr->target.ptr != MGR_PTR(W.idx) &&
	    ((tr->target.ptr >> 16) & 0xffff) != (uint64_t)(0x1000 | W.idx) &&
	    tr->target.ptr != 0)
		wfail("transaction for node %#llx, not ours", (unsigned long long)tr->target.ptr);
	if (!W.mapped)
		return 0;
	if (!in_area(tr->data.ptr.buffer, tr->data_size) ||
	    !in_area(tr->data.ptr.offsets, tr->offsets_size)) {
		wfail("transaction data %#llx+%llu offsets %#llx+%llu outside the area",
		      (unsigned long long)tr->data.ptr.buffer, (unsigned long long)tr->data_size,
		      (unsigned long long)tr->data.ptr.offsets,
		      (unsigned long long)tr->offsets_size);
		return 0;
	}
	data = (const void *)(uintptr_t)tr->data.ptr.buffer;
	offs = (const void *)(uintptr_t)tr->data.ptr.offsets;
	if (tr->data_size >= 16) {
		memcpy(&instr, data, 8);
		memcpy(&meta, data + 8, 8);
	}
	if (tr->flags & TF_STATUS_CODE)
		return 0;
	if ((meta >> 32) != MAGIC) {
		/* Not from our builder (the manager's tests): no checks. */
		meta = 0;
	} else if (((meta >> 8) & 0xff) != (uint64_t)W.cell) {
		wfail("transaction from cell %llu reached cell %d",
		      (unsigned long long)((meta >> 8) & 0xff), W.cell);
	}
	clean = meta & 1;
	nobj = tr->offsets_size / sizeof(binder_size_t);
	for (i = 0; i < nobj; i++) {
		const struct binder_object_header *h;
		uint64_t off = offs[i];

		if (off + 8 > tr->data_size || off % 4)
			continue;
		h = (const void *)(data + off);
		switch (h->type) {
		case BINDER_TYPE_HANDLE:
		case BINDER_TYPE_WEAK_HANDLE:
			if (off + sizeof(struct flat_binder_object) <= tr->data_size)
				add_handle(((const struct flat_binder_object *)h)->handle);
			break;
		case BINDER_TYPE_FD:
			if (off + sizeof(struct binder_fd_object) <= tr->data_size)
				check_fd(((const struct binder_fd_object *)h)->fd, clean);
			break;
		case BINDER_TYPE_PTR: {
			const struct binder_buffer_object *b = (const void *)h;

			if (off + sizeof(*b) <= tr->data_size && !in_area(b->buffer, b->length))
				wfail("PTR object %llu: buffer %#llx+%llu outside the area",
				      (unsigned long long)i, (unsigned long long)b->buffer,
				      (unsigned long long)b->length);
			break;
		}
		case BINDER_TYPE_FDA: {
			const struct binder_fd_array_object *a = (const void *)h;
			const struct binder_buffer_object *p;
			uint64_t k;

			if (off + sizeof(*a) > tr->data_size || a->parent >= nobj ||
			    offs[a->parent] + sizeof(*p) > tr->data_size)
				break;
			p = (const void *)(data + offs[a->parent]);
			if (p->hdr.type != BINDER_TYPE_PTR || a->num_fds > 64 ||
			    !in_area(p->buffer + a->parent_offset, 4 * a->num_fds))
				break;
			for (k = 0; k < a->num_fds; k++) {
				uint32_t fd;

				memcpy(&fd, (const void *)(uintptr_t)(p->buffer + a->parent_offset +
								      4 * k), 4);
				check_fd(fd, clean);
			}
			break;
		}
		}
	}
	return instr;
}

static void timer_arm(struct bt *t, int secs)
{
	struct itimerspec its = { .it_value.tv_sec = secs };

	if (t->has_timer)
		timer_settime(t->timer, 0, &its, NULL);
}

static void timer_disarm(struct bt *t)
{
	struct itimerspec its = { 0 };

	if (t->has_timer)
		timer_settime(t->timer, 0, &its, NULL);
}

static void serve_tr(struct bt *t, const struct binder_transaction_data *tr, bool sec);
static uint32_t wait_answer(struct bt *t, int secs);

/* Free a buffer now (most of the time) or keep it for later ops. */
static void release_buf(uint64_t p, bool hold)
{
	if (hold)
		hold_buf(p);
	else
		bc_simple(W.fd, BC_FREE_BUFFER, &p, 8);
}

/*
 * Walk a read's BR stream. A looper (and the control thread waiting for
 * a reply) acts: serves transactions, acks refcount requests and deaths.
 * The control thread in a raw read only records. Returns the last
 * terminal code of a call (BR_REPLY, ...) or 0.
 */
static uint32_t walk(struct bt *t, const uint8_t *buf, size_t len, bool act)
{
	uint32_t answer = 0;
	size_t pos = 0;

	while (pos < len) {
		uint32_t cmd;
		size_t sz;

		if (len - pos < 4) {
			wfail("read stream ends in a code (%zu of %zu bytes)", pos, len);
			return answer;
		}
		memcpy(&cmd, buf + pos, 4);
		pos += 4;
		sz = _IOC_SIZE(cmd);
		if (len - pos < sz) {
			wfail("%s (%#x) cut at %zu of %zu bytes", br_name(cmd), cmd, len - pos, sz);
			return answer;
		}
		switch (cmd) {
		case BR_NOOP:
		case BR_SPAWN_LOOPER:
		case BR_OK:
		case BR_FINISHED:
		case BR_TRANSACTION_COMPLETE:
		case BR_ONEWAY_SPAM_SUSPECT:
		case BR_TRANSACTION_PENDING_FROZEN:
		case BR_CLEAR_DEATH_NOTIFICATION_DONE:
		case BR_RELEASE:
		case BR_DECREFS:
		case BR_ERROR:
			break;
		case BR_REPLY:
		case BR_DEAD_REPLY:
		case BR_FAILED_REPLY:
		case BR_FROZEN_REPLY:
			answer = cmd;
			if (cmd == BR_REPLY) {
				struct binder_transaction_data tr;

				memcpy(&tr, buf + pos, sizeof(tr));
				inspect_tr(&tr, true);
				release_buf(tr.data.ptr.buffer, !act && W.nbufs < MAXB);
			}
			break;
		case BR_INCREFS:
		case BR_ACQUIRE: {
			struct binder_ptr_cookie pc;

			memcpy(&pc, buf + pos, sizeof(pc));
			if (act || t->npend_ref >= 8) {
				uint32_t done = BC_ACQUIRE_DONE;

				if (cmd == BR_INCREFS)
					done = BC_INCREFS_DONE;
				bc_simple(W.fd, done, &pc, sizeof(pc));
			} else {
				t->pend_ref[t->npend_ref][0] = pc.ptr;
				t->pend_ref[t->npend_ref][1] = pc.cookie;
				t->pend_ref_cmd[t->npend_ref++] = cmd;
			}
			break;
		}
		case BR_DEAD_BINDER: {
			uint64_t cookie;

			memcpy(&cookie, buf + pos, 8);
			if (act || t->npend_death >= 8)
				bc_simple(W.fd, BC_DEAD_BINDER_DONE, &cookie, 8);
			else
				t->pend_death[t->npend_death++] = cookie;
			break;
		}
		case BR_TRANSACTION:
		case BR_TRANSACTION_SEC_CTX: {
			struct binder_transaction_data_secctx s;

			memset(&s, 0, sizeof(s));
			memcpy(&s, buf + pos, sz);
			/*
			 * Always served: a call left unanswered here would
			 * leave its caller waiting for ever.
			 */
			serve_tr(t, &s.transaction_data, cmd == BR_TRANSACTION_SEC_CTX);
			if (t->exited && t->depth)
				return 1;
			break;
		}
		case BR_FROZEN_BINDER: {
			struct binder_frozen_state_info fi;

			memcpy(&fi, buf + pos, sizeof(fi));
			if (fi.is_frozen > 1 || fi.reserved)
				wfail("BR_FROZEN_BINDER: is_frozen %u reserved %u",
				      fi.is_frozen, fi.reserved);
			/* Acknowledged at once, as libbinder does. */
			bc_simple(W.fd, BC_FREEZE_NOTIFICATION_DONE, &fi.cookie, 8);
			break;
		}
		case BR_CLEAR_FREEZE_NOTIFICATION_DONE:
			break;
		default:
			wfail("unknown code %#x in the read stream", cmd);
			return answer;
		}
		pos += sz;
	}
	return answer;
}

/* Answer a transaction as its instruction says. */
static __thread struct tx serve_x;

static void serve_tr(struct bt *t, const struct binder_transaction_data *tr, bool sec)
{
	struct tx *xp = &serve_x;
	uint64_t instr = inspect_tr(tr, false);
	bool oneway = tr->flags & TF_ONE_WAY;
	struct rng g = { I_SUB(instr) ^ 0x13198a2e03707344ULL };
	unsigned int act = I_ACT(instr);
	uint64_t buf = tr->data.ptr.buffer;
	bool hold = act == A_HOLD && rchance(&g, 1, 2);
	struct bcbuf c;

	(void)sec;
	if (rchance(&g, 1, 4)) {
		/* Free before replying, as libbinder does for most calls. */
		release_buf(buf, hold);
		buf = 0;
	}
	switch (act) {
	case A_EXIT:
		ioctl(W.fd, BINDER_THREAD_EXIT, 0);
		t->entered = 0;
		t->exited = true;
		if (buf)
			release_buf(buf, false);
		return;
	case A_SLEEP:
		usleep(100 + rbelow(&g, 2000));
		break;
	case A_REFS: {
		uint32_t h = slot_handle(I_SLOT(instr));
		int k;

		bc_init(&c);
		for (k = rbelow(&g, 4); k >= 0; k--) {
			static const uint32_t cmds[] = {
				BC_INCREFS, BC_ACQUIRE, BC_RELEASE, BC_DECREFS,
			};

			bc_add_u32(&c, cmds[rbelow(&g, 4)], h);
		}
		if (rchance(&g, 1, 2))
			bc_add_handle_cookie(&c, BC_REQUEST_DEATH_NOTIFICATION, h, 0xd0 + h);
		if (rchance(&g, 1, 3))
			bc_add_handle_cookie(&c, BC_CLEAR_DEATH_NOTIFICATION, h, 0xd0 + h);
		if (rchance(&g, 1, 3))
			bc_add_handle_cookie(&c, BC_REQUEST_FREEZE_NOTIFICATION, h, 0xf0 + h);
		if (rchance(&g, 1, 4))
			bc_add_handle_cookie(&c, BC_CLEAR_FREEZE_NOTIFICATION, h, 0xf0 + h);
		write_all(c.buf, c.len);
		break;
	}
	case A_NESTED:
		if (!oneway && I_DEPTH(instr) && t->depth < 4) {
			uint64_t sub = rnext(&g);
			uint64_t ni = INSTR(rbelow(&g, A_NACT), rbelow(&g, 16),
					    I_DEPTH(instr) - 1, sub);

			build_tx(xp, ni, sub, false);
			xp->tr.target.handle = slot_handle(I_SLOT(instr));
			xp->tr.flags = TF_ACCEPT_FDS | (rchance(&g, 1, 4) ? TF_ONE_WAY : 0);
			t->depth++;
			if (!send_tr(xp->sg ? BC_TRANSACTION_SG : BC_TRANSACTION, &xp->tr,
				     xp->bufsize) && !(xp->tr.flags & TF_ONE_WAY) &&
			    wait_answer(t, t->looper ? 0 : CALL_TIMEOUT) == ~0U)
				wfail("nested call to handle %u got no answer in %d s",
				      xp->tr.target.handle, CALL_TIMEOUT);
			t->depth--;
			if (t->exited)
				return;
		}
		break;
	}
	if (!oneway) {
		uint32_t flags = rchance(&g, 1, 8) ? TF_CLEAR_BUF : 0;

		if (act == A_STATUS) {
			struct txn st;
			int32_t code = -(int32_t)rbelow(&g, 200);

			txn_init(&st);
			txn_put(&st, &code, 4);
			txn_tr(&st, &xp->tr, 0, 0, TF_STATUS_CODE | flags);
			send_tr(BC_REPLY, &xp->tr, 0);
		} else if (act == A_REPLY_OBJ || act == A_REPLY_HANDLES) {
			build_tx(xp, 0, rnext(&g), act == A_REPLY_HANDLES);
			xp->tr.flags = flags;
			if (rchance(&g, 1, 16))
				xp->tr.flags |= rnext(&g) & 0xff;
			send_tr(xp->sg ? BC_REPLY_SG : BC_REPLY, &xp->tr, xp->bufsize);
		} else {
			struct txn e;

			txn_init(&e);
			txn_put(&e, NULL, rbelow(&g, 3) * 8);
			txn_tr(&e, &xp->tr, 0, 0, flags);
			send_tr(BC_REPLY, &xp->tr, 0);
		}
	}
	if (buf)
		release_buf(buf, hold);
}

/*
 * Read until a call ends: BR_REPLY, BR_DEAD_REPLY, BR_FAILED_REPLY or
 * BR_FROZEN_REPLY; serving whatever else comes (nested calls). @secs: give
 * up after that long (0: no limit, a looper's, which quiesce interrupts).
 * Returns the code, 0 on error, ~0U on timeout.
 */
static uint32_t wait_answer(struct bt *t, int secs)
{
	static __thread uint8_t rb[RDBUF] __attribute__((aligned(8)));
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		size_t got = 0;
		uint32_t a;
		int ret;

		if (t->stash) {
			a = t->stash;
			t->stash = 0;
			return a;
		}
		if (secs) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if (t1.tv_sec - t0.tv_sec >= secs)
				return ~0U;
			timer_arm(t, secs - (t1.tv_sec - t0.tv_sec));
		}
		ret = wr(W.fd, NULL, 0, rb, sizeof(rb), NULL, &got);
		if (secs)
			timer_disarm(t);
		if (ret == -EINTR) {
			if (t->looper && quiescing())
				return 0;
			continue;
		}
		if (ret)
			return 0;
		a = walk(t, rb, got, true);
		if (a)
			return a;
		if (t->looper && quiescing())
			return 0;
	}
}

static void sigusr(int sig)
{
	(void)sig;
}

static void *looper(void *arg)
{
	static __thread uint8_t rb[RDBUF] __attribute__((aligned(8)));
	struct bt t = { .looper = true, .id = (int)(intptr_t)arg };

	cur_bt = &t;
	fz_cov_thread_start();
	for (;;) {
		size_t got = 0;
		int ret;

		if (quiescing()) {
			fz_cov_collect();
			sem_post(&W.parked);
			while (sem_wait(&W.go[t.id]))
				;
			t.entered = 0;
			t.depth = 0;
			/*
			 * An answer a write read and no wait took belongs to
			 * the sequence that ended: kept, the next call's wait
			 * would return it at once, and the looper reply to a
			 * call before its own nested call was answered.
			 */
			t.stash = 0;
			t.exited = false;
			/* Ended again before we ran: park again (at the top). */
			continue;
		}
		if (!t.entered) {
			uint32_t cmd = t.id ? BC_REGISTER_LOOPER : BC_ENTER_LOOPER;

			write_all(&cmd, 4);
			t.entered = 1;
		}
		ret = wr(W.fd, NULL, 0, rb, sizeof(rb), NULL, &got);
		if (ret == -EINTR || quiescing())
			continue;
		if (ret) {
			/* EPERM, EINVAL, ENOMEM: nothing to serve here. */
			usleep(1000);
			continue;
		}
		walk(&t, rb, got, true);
		t.exited = false;
	}
	return NULL;	/* not reached: W_QUIT ends the process */
}

/*
 * Stop the loopers: closing the file runs the driver's flush, which sends
 * every thread of the process back to user space, where they see
 * quiesce. A signal is only the fallback (a looper between two reads).
 */
static void loopers_park(void)
{
	int i, n = 0;

	__atomic_store_n(&W.quiesce, 1, __ATOMIC_SEQ_CST);
	if (W.fd >= 0)
		close(W.fd);
	W.fd = -1;
	while (n < NLOOPERS) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (sem_timedwait(&W.parked, &ts) == 0) {
			n++;
			continue;
		}
		for (i = 0; i < NLOOPERS; i++)
			pthread_kill(W.lt[i], SIGUSR1);
	}
}

static void loopers_go(void)
{
	int i;

	__atomic_store_n(&W.quiesce, 0, __ATOMIC_SEQ_CST);
	for (i = 0; i < NLOOPERS; i++)
		sem_post(&W.go[i]);
}

/* ---- the control thread's operations ---------------------------------- */

static const size_t map_sizes[] = {
	128 * 1024, 1024 * 1024 - 8192, 64 * 1024, 4096, 8192 + 4096, 4 << 20, 5 << 20,
};

static int w_begin(const struct req *q)
{
	struct rng g = { q->r };
	int prot = PROT_READ, flags = MAP_PRIVATE | MAP_NORESERVE;
	size_t sz;

	W.fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (W.fd < 0)
		return -errno;
	sz = map_sizes[rchance(&g, 3, 4) ? 0 : rbelow(&g, 7)];
	if (rchance(&g, 1, 16))
		prot |= rchance(&g, 1, 2) ? PROT_WRITE : PROT_EXEC;
	if (rchance(&g, 1, 8))
		flags = MAP_SHARED;
	W.map = mmap(NULL, sz, prot, flags, W.fd, 0);
	if (W.map == MAP_FAILED) {
		/* Bad variants fail; a plain read-only map must then work. */
		W.map = rchance(&g, 7, 8) ?
			mmap(NULL, 128 * 1024, PROT_READ, MAP_PRIVATE, W.fd, 0) : MAP_FAILED;
		sz = 128 * 1024;
	}
	W.mapped = W.map != MAP_FAILED;
	W.map_size = W.mapped ? sz : 0;
	if (!W.mapped)
		W.map = NULL;
	if (is_mgr(W.idx)) {
		int ret;

		if (rchance(&g, 1, 2)) {
			struct flat_binder_object o = {
				.binder = MGR_PTR(W.idx),
				.cookie = MGR_PTR(W.idx) + 1,
				.flags = rchance(&g, 3, 4) ? FLAT_BINDER_FLAG_ACCEPTS_FDS : 0,
			};

			if (rchance(&g, 1, 4))
				o.flags |= FLAT_BINDER_FLAG_TXN_SECURITY_CTX;
			ret = ioctl(W.fd, BINDER_SET_CONTEXT_MGR_EXT, &o);
		} else {
			ret = ioctl(W.fd, BINDER_SET_CONTEXT_MGR, 0);
		}
		if (ret)
			wfail("SET_CONTEXT_MGR after the last manager closed: %s",
			      strerror(errno));
	}
	if (rchance(&g, 1, 2)) {
		uint32_t m = rbelow(&g, 16);

		ioctl(W.fd, BINDER_SET_MAX_THREADS, &m);
	}
	loopers_go();
	return 0;
}

static void w_end(struct bt *t)
{
	loopers_park();
	fz_cov_collect();
	if (W.map)
		munmap(W.map, W.map_size);
	W.map = NULL;
	W.mapped = false;
	W.nhandles = 0;
	W.nbufs = 0;
	t->npend_ref = 0;
	t->npend_death = 0;
	t->entered = 0;
	/* As the loopers' (looper()): nothing of the sequence that ended. */
	t->stash = 0;
	t->exited = false;
}

/* A registration: the instruction word, then one or two of our nodes. */
static void register_tx(struct tx *x, uint64_t instr)
{
	uint64_t meta = META(W.cell, 1);
	unsigned int k;

	txn_init(&x->t);
	txn_put(&x->t, &instr, 8);
	txn_put(&x->t, &meta, 8);
	for (k = 0; k <= (I_SUB(instr) & 1); k++)
		txn_binder(&x->t, NODE_PTR(W.idx, ((I_SUB(instr) >> 1) + k) & 3),
			   NODE_PTR(W.idx, ((I_SUB(instr) >> 1) + k) & 3) + 1,
			   FLAT_BINDER_FLAG_ACCEPTS_FDS);
	x->sg = false;
	x->bufsize = 0;
	x->clean = true;
	txn_tr(&x->t, &x->tr, 0, 1, 0);
}

static uint32_t w_call(struct bt *t, const struct req *q)
{
	static struct tx x;
	uint32_t a;

	build_tx(&x, q->instr, I_SUB(q->instr), q->pad == 2);
	if (q->pad == 1)
		register_tx(&x, q->instr);
	x.tr.target.handle = slot_handle(q->slot);
	x.tr.flags = q->flags;
	if (send_tr(x.sg ? BC_TRANSACTION_SG : BC_TRANSACTION, &x.tr, x.bufsize))
		return 0;
	if (q->flags & TF_ONE_WAY)
		return 0;
	t->exited = false;
	t->depth++;
	a = wait_answer(t, CALL_TIMEOUT);
	t->depth--;
	if (a == ~0U)
		wfail("call to handle %u (instr %#llx) got no answer in %d s",
		      x.tr.target.handle, (unsigned long long)q->instr, CALL_TIMEOUT);
	return a;
}

/* A raw BC stream of one to five commands, then a read, both partial. */
static int w_write(struct bt *t, const struct req *q)
{
	static uint8_t rb[RDBUF] __attribute__((aligned(8)));
	static struct tx x;
	struct rng g = { q->r };
	struct bcbuf c;
	size_t wl, rl, wd = 0, rd = 0;
	int n, ret;

	bc_init(&c);
	for (n = 1 + rbelow(&g, 5); n > 0; n--) {
		uint32_t h = slot_handle(rbelow(&g, 16));

		switch (rbelow(&g, 18)) {
		case 0: case 1: {
			uint64_t sub = rnext(&g);

			build_tx(&x, INSTR(rbelow(&g, A_NACT), rbelow(&g, 16), rbelow(&g, 3), sub),
				 sub, false);
			x.tr.target.handle = h;
			x.tr.flags = TF_ACCEPT_FDS | (rchance(&g, 1, 2) ? TF_ONE_WAY : 0);
			if (rchance(&g, 1, 4))
				x.tr.flags |= TF_UPDATE_TXN;
			if (x.sg) {
				struct binder_transaction_data_sg sg = {
					.transaction_data = x.tr, .buffers_size = x.bufsize };

				bc_add(&c, BC_TRANSACTION_SG, &sg, sizeof(sg));
			} else {
				bc_add(&c, BC_TRANSACTION, &x.tr, sizeof(x.tr));
			}
			break;
		}
		case 2: {
			struct binder_transaction_data_sg sg = { 0 };
			struct txn e;
			bool plain = rchance(&g, 1, 2);

			txn_init(&e);
			txn_tr(&e, &sg.transaction_data, 0, 0, 0);
			bc_add(&c, plain ? BC_REPLY : BC_REPLY_SG, &sg,
			       plain ? sizeof(sg.transaction_data) : sizeof(sg));
			break;
		}
		case 3:
			bc_add_u32(&c, BC_INCREFS, h);
			break;
		case 4:
			bc_add_u32(&c, BC_ACQUIRE, h);
			break;
		case 5:
			bc_add_u32(&c, BC_RELEASE, h);
			break;
		case 6:
			bc_add_u32(&c, BC_DECREFS, h);
			break;
		case 7: {
			uint64_t ptr = NODE_PTR(W.idx, rbelow(&g, 4)), cookie = ptr + 1;
			uint32_t cmd = rchance(&g, 1, 2) ? BC_INCREFS_DONE : BC_ACQUIRE_DONE;

			if (t->npend_ref && rchance(&g, 3, 4)) {
				t->npend_ref--;
				ptr = t->pend_ref[t->npend_ref][0];
				cookie = t->pend_ref[t->npend_ref][1];
				cmd = t->pend_ref_cmd[t->npend_ref] == BR_INCREFS ?
					BC_INCREFS_DONE : BC_ACQUIRE_DONE;
			}
			bc_add_ptr_cookie(&c, cmd, ptr, cookie);
			break;
		}
		case 8:
			bc_add_handle_cookie(&c, BC_REQUEST_DEATH_NOTIFICATION, h,
					     0xd0 + rbelow(&g, 4));
			break;
		case 9:
			bc_add_handle_cookie(&c, BC_CLEAR_DEATH_NOTIFICATION, h,
					     0xd0 + rbelow(&g, 4));
			break;
		case 10: {
			uint64_t cookie = 0xd0 + rbelow(&g, 4);

			if (t->npend_death && rchance(&g, 3, 4))
				cookie = t->pend_death[--t->npend_death];
			bc_add_ptr(&c, BC_DEAD_BINDER_DONE, cookie);
			break;
		}
		case 11: {
			uint64_t p = take_buf(rbelow(&g, 32));

			if (!p || rchance(&g, 1, 8))
				p = rchance(&g, 1, 2) ? (uintptr_t)W.map + 8 * rbelow(&g, 64) :
					rnext(&g);
			bc_add_ptr(&c, BC_FREE_BUFFER, p);
			break;
		}
		case 12:
			bc_add(&c, BC_ENTER_LOOPER, NULL, 0);
			break;
		case 13:
			bc_add(&c, BC_REGISTER_LOOPER, NULL, 0);
			break;
		case 14:
			bc_add(&c, BC_EXIT_LOOPER, NULL, 0);
			break;
		case 15: {
			static const uint32_t odd[] = {
				BC_ATTEMPT_ACQUIRE, BC_ACQUIRE_RESULT,
				_IO('c', 99), _IOW('c', 1, char[3]),
			};
			uint8_t junk[16] = { 0 };
			uint32_t cmd = odd[rbelow(&g, 4)];

			if (rchance(&g, 1, 2)) {
				static const uint32_t fz[] = {
					BC_REQUEST_FREEZE_NOTIFICATION,
					BC_CLEAR_FREEZE_NOTIFICATION,
				};
				uint64_t cookie = 0xf0 + rbelow(&g, 4);

				if (rchance(&g, 1, 3))
					bc_add_ptr(&c, BC_FREEZE_NOTIFICATION_DONE, cookie);
				else
					bc_add_handle_cookie(&c, fz[rbelow(&g, 2)], h, cookie);
				break;
			}

			bc_add(&c, cmd, junk, _IOC_SIZE(cmd) <= 16 ? _IOC_SIZE(cmd) : 0);
			break;
		}
		case 16:
			bc_add_u32(&c, BC_INCREFS, rnext(&g) & 0xffff);
			break;
		case 17:
			bc_add_u32(&c, BC_ACQUIRE, 0);
			break;
		}
	}
	wl = c.len;
	if (rchance(&g, 1, 8))
		wl = rbelow(&g, c.len + 8);
	rl = rchance(&g, 1, 2) ? 0 : 4 + rbelow(&g, sizeof(rb) - 4);
	if (rchance(&g, 1, 8))
		rl = rbelow(&g, 16);
	/* A read waits: only when something is surely there to read. */
	ret = wr(W.fd, c.buf, wl, NULL, 0, &wd, NULL);
	if (!ret && rl) {
		struct pollfd p = { .fd = W.fd, .events = POLLIN };

		if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
			ret = read_some(t, rb, rl, &rd);
			if (!ret)
				walk(t, rb, rd, false);
		}
	}
	return ret;
}

static int w_read(struct bt *t, const struct req *q)
{
	static uint8_t rb[RDBUF] __attribute__((aligned(8)));
	struct rng g = { q->r };
	struct pollfd p = { .fd = W.fd, .events = POLLIN };
	size_t rl = 4 + rbelow(&g, sizeof(rb) - 4), rd = 0;
	int ret;

	ret = poll(&p, 1, rchance(&g, 3, 4) ? 0 : 1);
	if (ret != 1 || !(p.revents & POLLIN))
		return 0;
	if (rchance(&g, 1, 8))
		rl = rbelow(&g, 80);
	ret = read_some(t, rb, rl, &rd);
	if (!ret)
		walk(t, rb, rd, rchance(&g, 1, 2));
	return ret;
}

static int w_ioctl(const struct req *q)
{
	struct rng g = { q->r };
	union {
		struct binder_version v;
		struct binder_node_debug_info d;
		struct binder_node_info_for_ref r;
		struct binder_extended_error e;
		struct binder_freeze_info f;
		struct binder_frozen_status_info s;
		struct flat_binder_object o;
		uint32_t u;
		uint8_t raw[64];
	} a;
	int ret;

	memset(&a, 0, sizeof(a));
	switch (rbelow(&g, 12)) {
	case 0:
		ret = ioctl(W.fd, BINDER_VERSION, &a.v);
		if (ret)
			wfail("BINDER_VERSION: %s", strerror(errno));
		else if (a.v.protocol_version != BINDER_CURRENT_PROTOCOL_VERSION)
			wfail("BINDER_VERSION answered %d", a.v.protocol_version);
		return ret;
	case 1:
		a.u = rbelow(&g, 3) ? rbelow(&g, 16) : (uint32_t)rnext(&g);
		return ioctl(W.fd, BINDER_SET_MAX_THREADS, &a.u);
	case 2:
		if (rchance(&g, 1, 2))
			return ioctl(W.fd, BINDER_SET_CONTEXT_MGR, 0);
		a.o.binder = NODE_PTR(W.idx, rbelow(&g, 4));
		a.o.flags = (uint32_t)rnext(&g);
		return ioctl(W.fd, BINDER_SET_CONTEXT_MGR_EXT, &a.o);
	case 3:
		a.d.ptr = rchance(&g, 1, 2) ? 0 : NODE_PTR(W.idx, rbelow(&g, 4));
		return ioctl(W.fd, BINDER_GET_NODE_DEBUG_INFO, &a.d);
	case 4:
		a.r.handle = slot_handle(rbelow(&g, 16));
		if (rchance(&g, 1, 8))
			a.r.strong_count = 1;
		return ioctl(W.fd, BINDER_GET_NODE_INFO_FOR_REF, &a.r);
	case 5:
		a.u = rbelow(&g, 2) ? rbelow(&g, 2) : (uint32_t)rnext(&g);
		ret = ioctl(W.fd, BINDER_ENABLE_ONEWAY_SPAM_DETECTION, &a.u);
		/* Any value: 0 is off, anything else on. */
		if (ret)
			wfail("BINDER_ENABLE_ONEWAY_SPAM_DETECTION: %s", strerror(errno));
		return ret;
	case 6:
		return ioctl(W.fd, BINDER_GET_EXTENDED_ERROR, &a.e);
	case 7: {
		bool self = rchance(&g, 1, 2);

		a.f.pid = self ? (uint32_t)getpid() : (uint32_t)rnext(&g);
		a.f.enable = rbelow(&g, 2);
		a.f.timeout_ms = rbelow(&g, 10);
		ret = ioctl(W.fd, BINDER_FREEZE, &a.f);
		/*
		 * Itself, a binder process of its cell: frozen, or EAGAIN
		 * while a thread of it is in a sync call (EINTR: a signal
		 * during the wait).
		 */
		if (self && ret && errno != EAGAIN && errno != EINTR)
			wfail("BINDER_FREEZE of itself: %s", strerror(errno));
		return ret;
	}
	case 8:
		a.s.pid = getpid();
		ret = ioctl(W.fd, BINDER_GET_FROZEN_INFO, &a.s);
		if (ret)
			wfail("BINDER_GET_FROZEN_INFO of itself: %s", strerror(errno));
		else if (a.s.sync_recv > 3 || a.s.async_recv > 1)
			wfail("BINDER_GET_FROZEN_INFO: sync_recv %u async_recv %u",
			      a.s.sync_recv, a.s.async_recv);
		return ret;
	case 9:
		/* Unknown numbers, and known ones of the wrong size or dir. */
		return ioctl(W.fd, rchance(&g, 1, 2) ? _IOWR('b', 20 + rbelow(&g, 40), uint32_t) :
			     _IOW('b', 1, char[8 * rbelow(&g, 8)]), &a);
	case 10:
		/* Bad user pointers. */
		return ioctl(W.fd, rchance(&g, 1, 2) ? BINDER_WRITE_READ : BINDER_VERSION,
			     (void *)(uintptr_t)(rchance(&g, 1, 2) ? 0 : 0x1000));
	default: {
		struct binder_write_read bwr = {
			.write_size = rbelow(&g, 64),
			.write_buffer = rchance(&g, 1, 2) ? 0 : (uintptr_t)W.map,
			.read_size = 0,
			.write_consumed = rbelow(&g, 2) ? 0 : rnext(&g),
		};

		return ioctl(W.fd, BINDER_WRITE_READ, &bwr);
	}
	}
}

static int w_map_locked(const struct req *q);

/* Loopers read the area while this runs: they wait for a munmap. */
static int w_map(const struct req *q)
{
	int ret;

	pthread_rwlock_wrlock(&W.maplock);
	ret = w_map_locked(q);
	pthread_rwlock_unlock(&W.maplock);
	return ret;
}

static int w_map_locked(const struct req *q)
{
	struct rng g = { q->r };
	size_t len;
	void *p;

	switch (rbelow(&g, 5)) {
	case 0:
		/* Unmapped mid-use: senders must now get failures, not oopses. */
		if (W.mapped) {
			W.mapped = false;
			munmap(W.map, W.map_size);
			W.map = NULL;
		}
		return 0;
	case 1:
		if (W.mapped && rchance(&g, 1, 2)) {
			/*
			 * Part of it (the driver may refuse the split). What
			 * comes after may land in the part that is gone: the
			 * area is not read from again.
			 */
			if (munmap((char *)W.map + W.map_size / 2, W.map_size / 2))
				return -errno;
			W.map_size /= 2;
			W.mapped = false;
			return 0;
		}
		len = 4096 * (1 + rbelow(&g, 8));
		p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, W.fd, 0);
		if (p != MAP_FAILED) {
			if (W.mapped)
				wfail("a second mmap of one binder file worked");
			/* All of it: a mapping left behind keeps the file. */
			munmap(p, len);
		}
		return 0;
	case 2:
		if (W.mapped)
			return mprotect(W.map, 4096, PROT_READ | PROT_WRITE) ? -errno : 0;
		return 0;
	case 3:
		if (W.mapped)
			madvise(W.map, W.map_size, rchance(&g, 1, 2) ? MADV_DONTNEED : MADV_DOFORK);
		return 0;
	default:
		if (!W.mapped)
			return 0;
		p = mremap(W.map, W.map_size, W.map_size * 2, MREMAP_MAYMOVE);
		if (p != MAP_FAILED) {
			wfail("mremap of the area worked");
			W.map = p;
			W.map_size *= 2;
		}
		return 0;
	}
}

/* The other cell's binder file: EPERM for ioctl(), mmap() fails. */
static int w_xfd(void)
{
	struct binder_version v;
	void *p;
	int fd = recv_fd(W.chan);

	if (fd < 0)
		return fd;
	if (ioctl(fd, BINDER_VERSION, &v) == 0 || errno != EPERM)
		wfail("the other cell's binder file answered BINDER_VERSION: %s",
		      strerror(errno));
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p != MAP_FAILED) {
		wfail("the other cell's binder file could be mapped");
		munmap(p, 4096);
	}
	close(fd);
	return 0;
}

static void __attribute__((noreturn)) worker_main(int idx, int chan, char *fail)
{
	struct sigaction sa = { .sa_handler = sigusr };
	struct sigevent sev = { 0 };
	struct bt t = { 0 };
	struct stat st;
	int i, p[2];

	W.idx = idx;
	W.cell = cell_of(idx);
	wtrace = getenv("FZB_WTRACE");
	W.chan = chan;
	W.fd = -1;
	W.fail = fail;
	pthread_mutex_init(&W.mu, NULL);
	pthread_rwlock_init(&W.maplock, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	if (pipe2(p, O_CLOEXEC))
		_exit(3);
	W.pool[0] = p[0];
	W.pool[1] = p[1];
	W.pool[2] = open("/dev/null", O_RDWR | O_CLOEXEC);
	W.pool[3] = memfd_create("fz", MFD_CLOEXEC);
	if (stat(DEV, &st) == 0)
		W.rdev = st.st_rdev;
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR2;
	sev._sigev_un._tid = syscall(SYS_gettid);
	t.has_timer = timer_create(CLOCK_MONOTONIC, &sev, &t.timer) == 0;
	cur_bt = &t;
	__atomic_store_n(&W.quiesce, 1, __ATOMIC_SEQ_CST);
	sem_init(&W.parked, 0, 0);
	for (i = 0; i < NLOOPERS; i++) {
		sem_init(&W.go[i], 0, 0);
		pthread_create(&W.lt[i], NULL, looper, (void *)(intptr_t)i);
	}
	for (i = 0; i < NLOOPERS; i++)
		while (sem_wait(&W.parked))
			;
	fz_cov_thread_start();

	for (;;) {
		struct rsp r = { 0 };
		struct req q;
		ssize_t n = recv(chan, &q, sizeof(q), 0);

		if (n != sizeof(q))
			break;
		switch (q.op) {
		case W_BEGIN:
			r.err = w_begin(&q);
			break;
		case W_END:
			w_end(&t);
			break;
		case W_CALL:
			r.answer = w_call(&t, &q);
			break;
		case W_WRITE:
			r.err = w_write(&t, &q);
			break;
		case W_READ:
			r.err = w_read(&t, &q);
			break;
		case W_IOCTL:
			r.err = w_ioctl(&q) ? -errno : 0;
			break;
		case W_MAP:
			r.err = w_map(&q);
			break;
		case W_TEXIT:
			r.err = ioctl(W.fd, BINDER_THREAD_EXIT, 0) ? -errno : 0;
			t.npend_ref = 0;
			t.npend_death = 0;
			break;
		case W_XFD:
			r.err = w_xfd();
			break;
		case W_QUIT:
			goto quit;
		}
		if (send(chan, &r, sizeof(r), 0) != sizeof(r))
			break;
	}
quit:
	if (W.fd >= 0)
		w_end(&t);
	fz_cov_collect();
	_exit(0);
}

/* ---- the parent --------------------------------------------------------- */

struct chan {
	int fd;			/* our end of the worker's channel, or -1 */
	pid_t pid;
	int out;		/* requests whose answers are not read yet */
	uint32_t op;		/* the last one */
};

static double prof[3];	/* FZB_PROF: seconds in begin, ops, end */

struct fzb {
	struct chan w[NW];
	char *fails;		/* NW * 200, shared with the workers */
	int leader;		/* channel to cell B's leader, or -1 */
	pid_t leader_pid;
	int fd_a, fd_b;		/* a binder file of each cell */
	bool cellb;		/* cell B works */
	bool use_b;		/* this sequence uses it */
	bool skip;		/* FZB_SKIP: this op is generated, not run */
	const char *skips;
	int nact;		/* cell A workers this sequence: 0..nact-1 */
};

/* Close every descriptor but @keep (a new worker must hold no others'). */
static void close_others(int keep)
{
	int fd;

	for (fd = 3; fd < 1024; fd++)
		if (fd != keep)
			close(fd);
}

/* Cell B's leader: made the cell, forks and reaps its workers. */
struct lmsg {
	int op;			/* 0: spawn, 1: reap */
	int w;
	pid_t pid;
};

static void __attribute__((noreturn)) leader_main(int chan, char *fails)
{
	struct lmsg m;
	int fd;

	if (unshare(CLONE_NEWIPC))
		_exit(1);
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0 || send_fd(chan, fd))
		_exit(2);
	close(fd);
	while (recv(chan, &m, sizeof(m), 0) == sizeof(m)) {
		int sv[2];

		if (m.op == 1) {
			waitpid(m.pid, NULL, 0);
			continue;
		}
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
			_exit(3);
		m.pid = fork();
		if (m.pid == 0) {
			close_others(sv[1]);
			worker_main(m.w, sv[1], fails + 200 * m.w);
		}
		close(sv[1]);
		if (send(chan, &m, sizeof(m), 0) != sizeof(m) || send_fd(chan, sv[0]))
			_exit(4);
		close(sv[0]);
	}
	/* The fuzzer is done: our workers go with us. */
	kill(0, 0);
	while (wait(NULL) > 0)
		;
	_exit(0);
}

static int spawn(struct fz *fz, struct fzb *b, int w)
{
	struct chan *c = &b->w[w];
	int sv[2];

	c->out = 0;
	if (cell_of(w)) {
		struct lmsg m = { .op = 0, .w = w };

		if (send(b->leader, &m, sizeof(m), 0) != sizeof(m) ||
		    recv(b->leader, &m, sizeof(m), 0) != sizeof(m))
			return fz_fail(fz, "cell B's leader is gone");
		c->pid = m.pid;
		c->fd = recv_fd(b->leader);
		if (c->fd < 0)
			return fz_fail(fz, "cell B's leader sent no channel");
		return 0;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return fz_fail(fz, "socketpair: %s", strerror(errno));
	c->pid = fork();
	if (c->pid < 0)
		return fz_fail(fz, "fork: %s", strerror(errno));
	if (c->pid == 0) {
		close_others(sv[1]);
		worker_main(w, sv[1], b->fails + 200 * w);
	}
	close(sv[1]);
	c->fd = sv[0];
	return 0;
}

/* A worker is gone: reap it (it is ours, or cell B leader's). */
static void reap(struct fzb *b, int w)
{
	struct chan *c = &b->w[w];

	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	if (cell_of(w)) {
		struct lmsg m = { .op = 1, .w = w, .pid = c->pid };

		if (send(b->leader, &m, sizeof(m), 0) != sizeof(m))
			return;
	} else {
		waitpid(c->pid, NULL, 0);
	}
	c->pid = 0;
}

static int check_fails(struct fz *fz, struct fzb *b)
{
	int w;

	for (w = 0; w < NW; w++)
		if (b->fails[200 * w])
			return fz_fail(fz, "%s", b->fails + 200 * w);
	return 0;
}

static int post(struct fz *fz, struct fzb *b, int w, const struct req *q)
{
	struct chan *c = &b->w[w];

	if (b->skip)
		return 0;
	if (send(c->fd, q, sizeof(*q), 0) != sizeof(*q))
		return fz_fail(fz, "worker %d: %s: cannot send: %s", w, wop_name[q->op],
			       strerror(errno));
	c->out++;
	c->op = q->op;
	return 0;
}

static int collect(struct fz *fz, struct fzb *b, int w, struct rsp *r)
{
	struct chan *c = &b->w[w];
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	struct rsp dummy;
	int status = 0;

	if (!c->out)
		return 0;
	if (!r)
		r = &dummy;
	c->out--;
	if (poll(&p, 1, CHAN_TIMEOUT * 1000) != 1) {
		/* What the worker found wrong, if anything, says more. */
		if (check_fails(fz, b))
			return -1;
		return fz_fail(fz, "worker %d (pid %d): no answer to %s (or an op before) in %d s",
			       w, c->pid, wop_name[c->op], CHAN_TIMEOUT);
	}
	if (recv(c->fd, r, sizeof(*r), 0) != sizeof(*r)) {
		if (!cell_of(w) && waitpid(c->pid, &status, 0) == c->pid)
			c->pid = 0;
		return fz_fail(fz, "worker %d died during %s (status %#x)", w,
			       wop_name[c->op], status);
	}
	return check_fails(fz, b);
}

/* Read every answer @w owes; the last one into @r. */
static int collect_all(struct fz *fz, struct fzb *b, int w, struct rsp *r)
{
	while (b->w[w].out)
		if (collect(fz, b, w, r))
			return -1;
	return 0;
}

/*
 * An operation: posted, and waited for when @sync. Unsynchronised ones
 * pipeline: the workers run them while the parent goes on, so operations
 * of different workers overlap (more races, fewer round trips under TCG);
 * each worker still runs its own in order.
 */
static int request(struct fz *fz, struct fzb *b, int w, const struct req *q, bool sync)
{
	return post(fz, b, w, q) ?: sync ? collect_all(fz, b, w, NULL) : 0;
}

static int binder_setup(struct fz *fz)
{
	static struct fzb b;
	int sv[2], w;

	memset(&b, 0, sizeof(b));
	b.leader = -1;
	b.fd_a = -1;
	b.fd_b = -1;
	for (w = 0; w < NW; w++)
		b.w[w].fd = -1;
	fz->priv = &b;
	b.skips = getenv("FZB_SKIP");
	if (access(DEV, F_OK))
		return fz_fail(fz, DEV " is missing: cask_binder is not loaded");
	b.fails = shared_alloc(200 * NW);
	if (!b.fails)
		return fz_fail(fz, "shared memory: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	/* The leader first: it must inherit none of the channels. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return fz_fail(fz, "socketpair: %s", strerror(errno));
	b.leader_pid = fork();
	if (b.leader_pid == 0) {
		close_others(sv[1]);
		leader_main(sv[1], b.fails);
	}
	close(sv[1]);
	b.leader = sv[0];
	b.fd_b = recv_fd(b.leader);
	b.cellb = b.fd_b >= 0;
	if (!b.cellb)
		printf("# binder: no second cell (leader failed); cross-cell ops off\n");
	b.fd_a = open(DEV, O_RDWR | O_CLOEXEC);
	if (b.fd_a < 0)
		return fz_fail(fz, "open " DEV ": %s", strerror(errno));
	for (w = 0; w < NW; w++) {
		if (cell_of(w) && !b.cellb)
			continue;
		if (spawn(fz, &b, w))
			return -1;
	}
	return 0;
}

static void binder_teardown(struct fz *fz)
{
	struct fzb *b = fz->priv;
	int w;

	if (getenv("FZB_PROF"))
		printf("# binder: seconds in begin %.1f, ops %.1f, end %.1f\n",
		       prof[0], prof[1], prof[2]);
	for (w = 0; w < NW; w++) {
		struct req q = { .op = W_QUIT };

		if (b->w[w].fd < 0)
			continue;
		send(b->w[w].fd, &q, sizeof(q), 0);
		reap(b, w);
	}
	if (b->leader >= 0) {
		close(b->leader);
		waitpid(b->leader_pid, NULL, 0);
	}
	b->leader = -1;
	if (b->fd_a >= 0)
		close(b->fd_a);
	if (b->fd_b >= 0)
		close(b->fd_b);
	shared_free(b->fails, 200 * NW);
}

enum {
	K_CALL, K_ONEWAY, K_REGISTER, K_LOOKUP, K_WRITE, K_READ, K_IOCTL, K_MAP,
	K_TEXIT, K_PAIR, K_KILL, K_XFD, K_N
};

static const unsigned int k_weight[K_N] = {
	[K_CALL] = 30, [K_ONEWAY] = 10, [K_REGISTER] = 10, [K_LOOKUP] = 10,
	[K_WRITE] = 20, [K_READ] = 5, [K_IOCTL] = 10, [K_MAP] = 2, [K_TEXIT] = 3,
	[K_PAIR] = 6, [K_KILL] = 1, [K_XFD] = 2,
};

static const char *const act_name[A_NACT] = {
	"reply", "reply_obj", "reply_handles", "nested", "exit", "status", "refs",
	"sleep", "hold",
};

/* A worker of this sequence. */
static int pick_worker(struct fz *fz, struct fzb *b)
{
	int n = b->nact + (b->use_b ? NW - CELLB : 0);
	int i = fz_below(fz, n);

	return i < b->nact ? i : CELLB + i - b->nact;
}

static void make_call(struct fz *fz, struct req *q, int kind)
{
	static const unsigned int aw[A_NACT] = { 8, 5, 4, 4, 1, 1, 3, 1, 2 };
	unsigned int act = fz_pick(fz, aw, A_NACT);
	unsigned int slot = fz_below(fz, 4) ? fz_below(fz, 4) : fz_below(fz, 16);

	memset(q, 0, sizeof(*q));
	q->op = W_CALL;
	q->flags = fz_chance(fz, 7, 8) ? TF_ACCEPT_FDS : 0;
	if (fz_chance(fz, 1, 8))
		q->flags |= TF_CLEAR_BUF;
	if (fz_chance(fz, 1, 32))
		q->flags |= fz_rand(fz) & 0xff;
	q->flags &= ~TF_ONE_WAY;
	if (kind == K_ONEWAY)
		q->flags |= TF_ONE_WAY;
	if (kind == K_REGISTER || kind == K_LOOKUP) {
		slot = 14;
		act = kind == K_LOOKUP ? A_REPLY_HANDLES : A_REPLY;
		q->pad = kind == K_REGISTER ? 1 : 0;
	}
	q->slot = slot;
	q->instr = INSTR(act, fz_below(fz, 16), fz_below(fz, 3), fz_rand(fz) >> 16);
}

static void trace_call(struct fz *fz, int w, const struct req *q, const char *what)
{
	fz_trace(fz, "%s w%d slot %u flags %#x %s(slot %u depth %u sub %#llx)", what, w,
		 q->slot, q->flags, act_name[I_ACT(q->instr)], I_SLOT(q->instr),
		 I_DEPTH(q->instr), (unsigned long long)I_SUB(q->instr));
}

/* Every worker of the sequence: begin (open, map) or end (close). */
static int all(struct fz *fz, struct fzb *b, uint32_t op)
{
	int w, ret = 0;

	for (w = 0; w < NW; w++) {
		struct req q = { .op = op, .r = fz_rand(fz) };

		if ((w >= b->nact && w < CELLB) || (cell_of(w) && !b->use_b))
			continue;
		if (b->w[w].fd < 0 && spawn(fz, b, w))
			return -1;
		if (post(fz, b, w, &q))
			return -1;
	}
	for (w = 0; w < NW; w++) {
		struct rsp r = { 0 };

		if (b->w[w].out && collect_all(fz, b, w, &r) && !ret)
			ret = -1;
		if (!ret && op == W_BEGIN && r.err)
			ret = fz_fail(fz, "worker %d: open " DEV ": %s", w, strerror(-r.err));
	}
	return ret;
}

static int kill_one(struct fz *fz, struct fzb *b)
{
	int v = pick_worker(fz, b), c = pick_worker(fz, b);
	unsigned int delay = fz_below(fz, 3000);
	struct req q;

	make_call(fz, &q, K_CALL);
	q.instr = (q.instr & ~15ULL) | (fz_chance(fz, 1, 2) ? A_SLEEP : A_NESTED);
	trace_call(fz, c, &q, "kill: call");
	fz_trace(fz, "kill: w%d after %u us", v, delay);
	if (b->skip)
		return 0;
	if (v != c && post(fz, b, c, &q))
		return -1;
	usleep(delay);
	reap(b, v);
	if (v != c && collect_all(fz, b, c, NULL))
		return -1;
	if (spawn(fz, b, v))
		return -1;
	q.op = W_BEGIN;
	q.r = fz_rand(fz);
	return request(fz, b, v, &q, true);
}

/*
 * FZB_SKIP=3,5,9: those operations are generated (the stream is the
 * same) but not run: how a reproducer is cut down to what matters.
 */
static bool skipped(struct fzb *b, unsigned int op)
{
	const char *p = b->skips;

	while (p && *p) {
		char *end;

		if (strtoul(p, &end, 10) == op && end != p)
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

static double tnow(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int binder_sequence(struct fz *fz)
{
	struct fzb *b = fz->priv;
	unsigned int len;
	int ret = 0, w;
	double t0 = tnow(), t1 = 0;

	memset(b->fails, 0, 200 * NW);
	b->nact = 3 + fz_below(fz, 3);
	b->use_b = b->cellb && fz_chance(fz, 1, 8);
	len = 5 + fz_below(fz, 36);
	fz_trace(fz, "begin: %d workers in cell A%s, %u ops", b->nact,
		 b->use_b ? ", 3 in cell B" : "", len);
	if (all(fz, b, W_BEGIN))
		goto out;
	t1 = tnow();
	prof[0] += t1 - t0;
	while (!ret && fz_next(fz, len)) {
		unsigned int k = fz_pick(fz, k_weight, K_N);
		struct req q = { .r = fz_rand(fz) };
		int w = pick_worker(fz, b);
		bool sync = fz_chance(fz, 1, 4);

		/* Registrations and lookups first, so there are handles. */
		if (fz->op <= 3 && fz_chance(fz, 2, 3))
			k = fz_chance(fz, 1, 2) ? K_REGISTER : K_LOOKUP;
		b->skip = skipped(b, fz->op);
		if (b->skip)
			fz_trace(fz, "(skipped)");
		switch (k) {
		case K_CALL:
		case K_ONEWAY:
		case K_REGISTER:
		case K_LOOKUP:
			make_call(fz, &q, k);
			trace_call(fz, w, &q, k == K_REGISTER ? "register" :
				   k == K_LOOKUP ? "lookup" : "call");
			ret = request(fz, b, w, &q, sync || k == K_REGISTER || k == K_LOOKUP);
			break;
		case K_PAIR: {
			int w2 = pick_worker(fz, b);
			struct req q2;

			make_call(fz, &q, K_CALL);
			make_call(fz, &q2, fz_chance(fz, 1, 2) ? K_CALL : K_ONEWAY);
			trace_call(fz, w, &q, "pair: call");
			trace_call(fz, w2, &q2, "pair: call");
			ret = post(fz, b, w, &q);
			if (!ret && w2 != w)
				ret = post(fz, b, w2, &q2);
			if (!ret)
				ret = collect_all(fz, b, w, NULL);
			if (!ret && w2 != w)
				ret = collect_all(fz, b, w2, NULL);
			break;
		}
		case K_WRITE:
		case K_READ:
		case K_IOCTL:
		case K_MAP:
		case K_TEXIT: {
			static const uint32_t ops[] = {
				[K_WRITE] = W_WRITE, [K_READ] = W_READ, [K_IOCTL] = W_IOCTL,
				[K_MAP] = W_MAP, [K_TEXIT] = W_TEXIT,
			};

			q.op = ops[k];
			fz_trace(fz, "%s w%d r %#llx", wop_name[q.op], w, (unsigned long long)q.r);
			ret = request(fz, b, w, &q, sync);
			break;
		}
		case K_KILL:
			ret = kill_one(fz, b);
			break;
		case K_XFD:
			if (!b->use_b)
				break;
			q.op = W_XFD;
			fz_trace(fz, "cross_fd w%d", w);
			ret = post(fz, b, w, &q);
			if (!ret && !b->skip && send_fd(b->w[w].fd, cell_of(w) ? b->fd_a : b->fd_b))
				ret = fz_fail(fz, "send_fd: %s", strerror(errno));
			if (!ret)
				ret = collect_all(fz, b, w, NULL);
			break;
		}
	}
out:
	/* Whatever failed, the workers end the sequence (and are reset). */
	for (w = 0; w < NW; w++) {
		if (b->w[w].out) {
			struct rsp r;

			if (collect_all(fz, b, w, &r)) {
				ret = -1;
				reap(b, w);
			}
		}
	}
	fz_trace(fz, "end");
	b->skip = false;
	t0 = tnow();
	if (t1)
		prof[1] += t0 - t1;
	if (all(fz, b, W_END))
		ret = -1;
	prof[2] += tnow() - t0;
	if (!ret && check_fails(fz, b))
		ret = -1;
	return ret;
}

static struct fz_driver binder_driver = {
	.name = "binder",
	.help = "cask_binder: BC streams with objects, nested and one-way calls, deaths, two cells",
	.setup = binder_setup,
	.sequence = binder_sequence,
	.teardown = binder_teardown,
};

FZ_DRIVER(binder_driver);
