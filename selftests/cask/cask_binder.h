/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw binder protocol helpers for the cask selftests: open and map a
 * device, load the kernel's own binder to compare with, BINDER_WRITE_READ
 * wrappers, a command-buffer builder, a reader that returns one BR_* code
 * with its payload at a time, a transaction builder (data, objects and
 * their offsets, scatter-gather buffers) and a small service loop for
 * forked children.
 *
 * Everything returns 0 or -errno (a short write_consumed is -EPROTO); no
 * function asserts, so they can run in forked children, which report what
 * went wrong through shared memory (struct bchild) and their exit status.
 *
 * The UAPI comes from the installed kernel headers (KHDR_INCLUDES).
 */
#ifndef CASK_BINDER_H
#define CASK_BINDER_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/android/binder.h>
#include <linux/android/binderfs.h>

#include "cask_util.h"

#define BMAP_SIZE	(128 * 1024)

/* ---- devices ---------------------------------------------------------- */

struct bdev {
	int fd;
	void *map;
	size_t map_size;
};

/* Open @path (O_RDWR|O_CLOEXEC|@flags) and map @map_size bytes (0: none). */
static inline int bdev_open(struct bdev *b, const char *path, int flags, size_t map_size)
{
	memset(b, 0, sizeof(*b));
	b->fd = open(path, O_RDWR | O_CLOEXEC | flags);
	if (b->fd < 0)
		return -errno;
	if (!map_size)
		return 0;
	b->map = mmap(NULL, map_size, PROT_READ, MAP_PRIVATE | MAP_NORESERVE, b->fd, 0);
	if (b->map == MAP_FAILED) {
		int err = -errno;

		close(b->fd);
		b->fd = -1;
		b->map = NULL;
		return err;
	}
	b->map_size = map_size;
	return 0;
}

static inline void bdev_close(struct bdev *b)
{
	if (b->map)
		munmap(b->map, b->map_size);
	if (b->fd >= 0)
		close(b->fd);
	b->map = NULL;
	b->fd = -1;
}

/* Is [@p, @p + @len) inside the mapping? */
static inline bool bdev_owns(const struct bdev *b, uint64_t p, uint64_t len)
{
	uint64_t start = (uintptr_t)b->map;

	return b->map && p >= start && p + len <= start + b->map_size && p + len >= p;
}

/* ---- the kernel's binder ------------------------------------------------ */

/*
 * The kernel's own binder, which the differential tests compare with: the
 * harness builds it as a module and puts it in the guest, but nothing
 * loads it at boot (Documentation/dev/testing.rst).
 */
#define UPSTREAM_KO	"/lib/modules/upstream/binder_linux.ko"

/*
 * Load UPSTREAM_KO unless binder_linux is there already: 0 or -errno
 * (-ENOENT: this image has no such module). EEXIST is success: another
 * program may load it between the check and finit_module().
 */
static inline int load_upstream(void)
{
	int fd, ret = 0;

	if (access("/sys/module/binder_linux", F_OK) == 0)
		return 0;
	fd = open(UPSTREAM_KO, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, "", 0) && errno != EEXIST)
		ret = -errno;
	close(fd);
	return ret;
}

/* ---- BINDER_WRITE_READ ------------------------------------------------- */

/*
 * One BINDER_WRITE_READ. On success @wdone and @rdone (either may be NULL)
 * are write_consumed and read_consumed.
 */
static inline int binder_wr(int fd, const void *wbuf, size_t wlen, void *rbuf, size_t rlen,
			    size_t *wdone, size_t *rdone)
{
	struct binder_write_read bwr = {
		.write_size = wlen,
		.write_buffer = (uintptr_t)wbuf,
		.read_size = rlen,
		.read_buffer = (uintptr_t)rbuf,
	};
	int ret = ioctl(fd, BINDER_WRITE_READ, &bwr);

	if (wdone)
		*wdone = bwr.write_consumed;
	if (rdone)
		*rdone = bwr.read_consumed;
	return ret < 0 ? -errno : 0;
}

/* Write @len bytes of commands; all of them must be consumed. */
static inline int binder_write(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	int ret = binder_wr(fd, buf, len, NULL, 0, &done, NULL);

	if (ret)
		return ret;
	return done == len ? 0 : -EPROTO;
}

/* ---- command buffers --------------------------------------------------- */

struct bcbuf {
	size_t len;
	uint8_t buf[1024] __attribute__((aligned(8)));
};

static inline void bc_init(struct bcbuf *c)
{
	c->len = 0;
}

/* Append @cmd and @size bytes of payload (its size is in @cmd itself). */
static inline void bc_add(struct bcbuf *c, uint32_t cmd, const void *payload, size_t size)
{
	if (c->len + 4 + size > sizeof(c->buf))
		abort();
	memcpy(c->buf + c->len, &cmd, 4);
	c->len += 4;
	if (size)
		memcpy(c->buf + c->len, payload, size);
	c->len += size;
}

static inline void bc_add_u32(struct bcbuf *c, uint32_t cmd, uint32_t v)
{
	bc_add(c, cmd, &v, sizeof(v));
}

static inline void bc_add_ptr(struct bcbuf *c, uint32_t cmd, uint64_t v)
{
	bc_add(c, cmd, &v, sizeof(v));
}

static inline void bc_add_ptr_cookie(struct bcbuf *c, uint32_t cmd, uint64_t ptr, uint64_t cookie)
{
	struct binder_ptr_cookie pc = { .ptr = ptr, .cookie = cookie };

	bc_add(c, cmd, &pc, sizeof(pc));
}

static inline void bc_add_handle_cookie(struct bcbuf *c, uint32_t cmd, uint32_t handle,
					uint64_t cookie)
{
	struct binder_handle_cookie hc = { .handle = handle, .cookie = cookie };

	bc_add(c, cmd, &hc, sizeof(hc));
}

static inline int bc_flush(int fd, struct bcbuf *c)
{
	int ret = binder_write(fd, c->buf, c->len);

	c->len = 0;
	return ret;
}

/* A single command with a u32 / u64 / no payload. */
static inline int bc_u32(int fd, uint32_t cmd, uint32_t v)
{
	struct bcbuf c = { 0 };

	bc_add_u32(&c, cmd, v);
	return bc_flush(fd, &c);
}

static inline int bc_ptr(int fd, uint32_t cmd, uint64_t v)
{
	struct bcbuf c = { 0 };

	bc_add_ptr(&c, cmd, v);
	return bc_flush(fd, &c);
}

static inline int bc_plain(int fd, uint32_t cmd)
{
	struct bcbuf c = { 0 };

	bc_add(&c, cmd, NULL, 0);
	return bc_flush(fd, &c);
}

/* ---- reading BR_* codes ------------------------------------------------ */

struct brd {
	int fd;
	size_t len, pos;
	int reads;		/* refills done */
	bool batch_start;	/* the code just returned opened a read batch */
	uint32_t first;		/* first code of the last batch */
	size_t first_consumed;	/* read_consumed before that batch: always 0 */
	uint8_t buf[512] __attribute__((aligned(8)));
};

static inline void brd_init(struct brd *r, int fd)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
}

static inline const char *br_name(uint32_t cmd)
{
	switch (cmd) {
	case BR_ERROR: return "BR_ERROR";
	case BR_OK: return "BR_OK";
	case BR_TRANSACTION_SEC_CTX: return "BR_TRANSACTION_SEC_CTX";
	case BR_TRANSACTION: return "BR_TRANSACTION";
	case BR_REPLY: return "BR_REPLY";
	case BR_DEAD_REPLY: return "BR_DEAD_REPLY";
	case BR_TRANSACTION_COMPLETE: return "BR_TRANSACTION_COMPLETE";
	case BR_INCREFS: return "BR_INCREFS";
	case BR_ACQUIRE: return "BR_ACQUIRE";
	case BR_RELEASE: return "BR_RELEASE";
	case BR_DECREFS: return "BR_DECREFS";
	case BR_NOOP: return "BR_NOOP";
	case BR_SPAWN_LOOPER: return "BR_SPAWN_LOOPER";
	case BR_FINISHED: return "BR_FINISHED";
	case BR_DEAD_BINDER: return "BR_DEAD_BINDER";
	case BR_CLEAR_DEATH_NOTIFICATION_DONE: return "BR_CLEAR_DEATH_NOTIFICATION_DONE";
	case BR_FAILED_REPLY: return "BR_FAILED_REPLY";
	case BR_FROZEN_REPLY: return "BR_FROZEN_REPLY";
	case BR_ONEWAY_SPAM_SUSPECT: return "BR_ONEWAY_SPAM_SUSPECT";
	case BR_TRANSACTION_PENDING_FROZEN: return "BR_TRANSACTION_PENDING_FROZEN";
	case BR_FROZEN_BINDER: return "BR_FROZEN_BINDER";
	case BR_CLEAR_FREEZE_NOTIFICATION_DONE: return "BR_CLEAR_FREEZE_NOTIFICATION_DONE";
	default: return "BR_?";
	}
}

/*
 * The next code, and its payload into @payload (at most @max bytes; the
 * rest is skipped). Reads (blocking unless the fd is O_NONBLOCK) when the
 * buffer is used up: -EAGAIN and friends come from there.
 */
static inline int br_next(struct brd *r, uint32_t *cmd, void *payload, size_t max)
{
	size_t size;

	r->batch_start = false;
	if (r->pos >= r->len) {
		size_t got = 0;
		int ret;

		r->len = 0;
		r->pos = 0;
		ret = binder_wr(r->fd, NULL, 0, r->buf, sizeof(r->buf), NULL, &got);
		if (ret)
			return ret;
		if (got < 4)
			return -ENODATA;
		r->len = got;
		r->reads++;
		r->batch_start = true;
		memcpy(&r->first, r->buf, 4);
	}
	if (r->len - r->pos < 4)
		return -EPROTO;
	memcpy(cmd, r->buf + r->pos, 4);
	r->pos += 4;
	size = _IOC_SIZE(*cmd);
	if (r->len - r->pos < size)
		return -EPROTO;
	if (payload && max)
		memcpy(payload, r->buf + r->pos, size < max ? size : max);
	r->pos += size;
	return 0;
}

/* Whatever is left of the current batch is dropped. */
static inline void br_drop(struct brd *r)
{
	r->pos = 0;
	r->len = 0;
}

/* Counts of the refcount BR_* codes br_wait() answered or saw. */
struct brefs {
	int increfs, acquire, release, decrefs;
	uint64_t last_ptr, last_cookie;
};

/*
 * The next code that is not BR_NOOP, BR_SPAWN_LOOPER or a refcount
 * request: BR_INCREFS and BR_ACQUIRE are answered at once with their
 * _DONE, and all four are counted in @refs (may be NULL).
 */
static inline int br_wait(struct brd *r, uint32_t *cmd, void *payload, size_t max,
			  struct brefs *refs)
{
	for (;;) {
		struct binder_ptr_cookie pc;
		int ret;

		ret = br_next(r, cmd, &pc, sizeof(pc));
		if (ret)
			return ret;
		switch (*cmd) {
		case BR_NOOP:
		case BR_SPAWN_LOOPER:
			continue;
		case BR_INCREFS:
		case BR_ACQUIRE:
		case BR_RELEASE:
		case BR_DECREFS:
			if (*cmd == BR_INCREFS || *cmd == BR_ACQUIRE) {
				struct bcbuf c = { 0 };

				bc_add_ptr_cookie(&c, *cmd == BR_INCREFS ? BC_INCREFS_DONE :
						  BC_ACQUIRE_DONE, pc.ptr, pc.cookie);
				ret = bc_flush(r->fd, &c);
				if (ret)
					return ret;
			}
			if (refs) {
				refs->increfs += *cmd == BR_INCREFS;
				refs->acquire += *cmd == BR_ACQUIRE;
				refs->release += *cmd == BR_RELEASE;
				refs->decrefs += *cmd == BR_DECREFS;
				refs->last_ptr = pc.ptr;
				refs->last_cookie = pc.cookie;
			}
			continue;
		default:
			/* The payload was read into pc: copy it out again. */
			if (payload && max) {
				size_t size = _IOC_SIZE(*cmd);

				memcpy(payload, r->buf + r->pos - size, size < max ? size : max);
			}
			return 0;
		}
	}
}

/* ---- transactions ------------------------------------------------------ */

#define TXN_MAX_DATA	1024
#define TXN_MAX_OBJS	16

struct txn {
	size_t len;
	size_t nobjs;
	uint64_t buffers_size;	/* scatter-gather bytes, for BC_*_SG */
	binder_size_t offs[TXN_MAX_OBJS];
	uint8_t data[TXN_MAX_DATA] __attribute__((aligned(8)));
};

static inline void txn_init(struct txn *t)
{
	memset(t, 0, sizeof(*t));
}

/* Append @len bytes of data (NULL: zeros). */
static inline void *txn_put(struct txn *t, const void *p, size_t len)
{
	void *at = t->data + t->len;

	if (t->len + len > TXN_MAX_DATA)
		abort();
	if (p)
		memcpy(at, p, len);
	else
		memset(at, 0, len);
	t->len += len;
	return at;
}

static inline void txn_put_u32(struct txn *t, uint32_t v)
{
	txn_put(t, &v, sizeof(v));
}

/* Append an object and record its offset; returns its index. */
static inline size_t txn_obj(struct txn *t, const void *obj, size_t size)
{
	if (t->nobjs >= TXN_MAX_OBJS)
		abort();
	/* Objects start 8-aligned. */
	txn_put(t, NULL, ((t->len + 7) & ~(size_t)7) - t->len);
	t->offs[t->nobjs] = t->len;
	txn_put(t, obj, size);
	return t->nobjs++;
}

static inline size_t txn_binder(struct txn *t, uint64_t ptr, uint64_t cookie, uint32_t flags)
{
	struct flat_binder_object o = {
		.hdr.type = BINDER_TYPE_BINDER,
		.flags = flags,
		.binder = ptr,
		.cookie = cookie,
	};

	return txn_obj(t, &o, sizeof(o));
}

static inline size_t txn_handle(struct txn *t, uint32_t handle)
{
	struct flat_binder_object o = {
		.hdr.type = BINDER_TYPE_HANDLE,
		.handle = handle,
	};

	return txn_obj(t, &o, sizeof(o));
}

static inline size_t txn_fd(struct txn *t, int fd, uint64_t cookie)
{
	struct binder_fd_object o = {
		.hdr.type = BINDER_TYPE_FD,
		.fd = fd,
		.cookie = cookie,
	};

	return txn_obj(t, &o, sizeof(o));
}

/* A scatter-gather buffer; counts its aligned length in buffers_size. */
static inline size_t txn_ptr(struct txn *t, const void *buf, uint64_t len, uint32_t flags,
			     uint64_t parent, uint64_t parent_offset)
{
	struct binder_buffer_object o = {
		.hdr.type = BINDER_TYPE_PTR,
		.flags = flags,
		.buffer = (uintptr_t)buf,
		.length = len,
		.parent = parent,
		.parent_offset = parent_offset,
	};

	t->buffers_size += (len + 7) & ~(uint64_t)7;
	return txn_obj(t, &o, sizeof(o));
}

static inline size_t txn_fda(struct txn *t, uint64_t num_fds, uint64_t parent,
			     uint64_t parent_offset)
{
	struct binder_fd_array_object o = {
		.hdr.type = BINDER_TYPE_FDA,
		.num_fds = num_fds,
		.parent = parent,
		.parent_offset = parent_offset,
	};

	return txn_obj(t, &o, sizeof(o));
}

/* The binder_transaction_data for @t (raw: tests may still spoil it). */
static inline void txn_tr(const struct txn *t, struct binder_transaction_data *tr,
			  uint32_t handle, uint32_t code, uint32_t flags)
{
	memset(tr, 0, sizeof(*tr));
	tr->target.handle = handle;
	tr->code = code;
	tr->flags = flags;
	tr->data_size = t->len;
	tr->offsets_size = t->nobjs * sizeof(binder_size_t);
	tr->data.ptr.buffer = (uintptr_t)t->data;
	tr->data.ptr.offsets = (uintptr_t)t->offs;
}

/* Write @cmd (BC_TRANSACTION, BC_REPLY or their _SG) with @tr. */
static inline int bc_tr(int fd, uint32_t cmd, const struct binder_transaction_data *tr,
			uint64_t buffers_size)
{
	struct binder_transaction_data_sg sg = { .transaction_data = *tr,
						 .buffers_size = buffers_size };
	struct bcbuf c = { 0 };

	if (cmd == BC_TRANSACTION_SG || cmd == BC_REPLY_SG)
		bc_add(&c, cmd, &sg, sizeof(sg));
	else
		bc_add(&c, cmd, tr, sizeof(*tr));
	return bc_flush(fd, &c);
}

/* Send @t (NULL: empty) to @handle; BC_TRANSACTION_SG when it has PTRs. */
static inline int txn_send(int fd, uint32_t handle, uint32_t code, uint32_t flags,
			   const struct txn *t)
{
	struct binder_transaction_data tr;
	struct txn empty;

	if (!t) {
		txn_init(&empty);
		t = &empty;
	}
	txn_tr(t, &tr, handle, code, flags);
	return bc_tr(fd, t->buffers_size ? BC_TRANSACTION_SG : BC_TRANSACTION, &tr,
		     t->buffers_size);
}

static inline int txn_reply(int fd, uint32_t flags, const struct txn *t)
{
	struct binder_transaction_data tr;
	struct txn empty;

	if (!t) {
		txn_init(&empty);
		t = &empty;
	}
	txn_tr(t, &tr, 0, 0, flags);
	return bc_tr(fd, t->buffers_size ? BC_REPLY_SG : BC_REPLY, &tr, t->buffers_size);
}

/* BC_FREE_BUFFER of a received transaction's data. */
static inline int txn_free(int fd, const struct binder_transaction_data *tr)
{
	return bc_ptr(fd, BC_FREE_BUFFER, tr->data.ptr.buffer);
}

/* The @i-th object of a received transaction, or NULL if out of range. */
static inline void *txn_rx_obj(const struct binder_transaction_data *tr, size_t i)
{
	const binder_size_t *offs = (const void *)(uintptr_t)tr->data.ptr.offsets;

	if (i >= tr->offsets_size / sizeof(binder_size_t))
		return NULL;
	return (void *)(uintptr_t)(tr->data.ptr.buffer + offs[i]);
}

/*
 * A call: send, then wait for the reply, answering refcount requests on
 * the way. *@reply gets the reply (free it with txn_free()); the return is
 * 0 or -errno, and *@code the first BR_ other than TRANSACTION_COMPLETE
 * (BR_REPLY on success).
 */
static inline int txn_call(struct brd *r, uint32_t handle, uint32_t code, const struct txn *t,
			   uint32_t *br, struct binder_transaction_data *reply)
{
	bool complete = false;
	int ret;

	ret = txn_send(r->fd, handle, code, 0, t);
	if (ret)
		return ret;
	for (;;) {
		ret = br_wait(r, br, reply, sizeof(*reply), NULL);
		if (ret)
			return ret;
		if (*br == BR_TRANSACTION_COMPLETE && !complete) {
			complete = true;
			continue;
		}
		return 0;
	}
}

/* ---- children ---------------------------------------------------------- */

/*
 * What a forked child reports: shared memory (MAP_SHARED) so the test
 * process can log why a child failed.
 */
struct bchild {
	char err[512];
	uint64_t val[16];	/* free use by a test */
	int ready;
};

static inline struct bchild *bchild_alloc(void)
{
	void *p = mmap(NULL, sizeof(struct bchild), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* In a child: record why it fails, and exit 1 (first failure wins). */
static inline void __attribute__((noreturn, format(printf, 3, 4)))
child_fail(struct bchild *s, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!s->err[0]) {
		n = snprintf(s->err, sizeof(s->err), "pid %d line %d: ", getpid(), line);
		va_start(ap, fmt);
		vsnprintf(s->err + n, sizeof(s->err) - n, fmt, ap);
		va_end(ap);
	}
	_exit(1);
}

#define CHILD_CHECK(s, cond, fmt, ...) do {					\
	if (!(cond))								\
		child_fail((s), __LINE__, "%s: " fmt, #cond, ##__VA_ARGS__);	\
} while (0)

/* A pipe used as a one-shot event: post() writes a byte, wait() reads it. */
struct bevent {
	int fd[2];
};

static inline int bevent_init(struct bevent *e)
{
	return pipe2(e->fd, O_CLOEXEC) ? -errno : 0;
}

static inline int bevent_post(struct bevent *e)
{
	return write(e->fd[1], "x", 1) == 1 ? 0 : -EIO;
}

static inline int bevent_wait(struct bevent *e)
{
	char c;

	return read(e->fd[0], &c, 1) == 1 ? 0 : -EIO;
}

/*
 * A service loop: read transactions and hand each to @fn, which fills
 * @reply (ignored for one-way calls) and returns one of BSERVE_*, or a
 * negative value to stop at once. Buffers are freed after @fn returns.
 * Refcount requests are answered on the way.
 */
#define BSERVE_NEXT		0	/* reply, go on */
#define BSERVE_STOP		1	/* reply, stop */
#define BSERVE_REPLIED		2	/* @fn replied itself, go on */
#define BSERVE_REPLIED_STOP	3	/* @fn replied itself, stop */

typedef int (*bserve_fn)(struct brd *r, const struct binder_transaction_data *tr,
			 struct txn *reply, void *arg);

static inline int bserve(struct brd *r, bserve_fn fn, void *arg)
{
	for (;;) {
		struct binder_transaction_data tr;
		struct txn reply;
		uint32_t cmd;
		int ret, how;

		ret = br_wait(r, &cmd, &tr, sizeof(tr), NULL);
		if (ret)
			return ret;
		if (cmd == BR_TRANSACTION_COMPLETE)
			continue;
		if (cmd != BR_TRANSACTION)
			return -EPROTO;
		txn_init(&reply);
		how = fn(r, &tr, &reply, arg);
		ret = txn_free(r->fd, &tr);
		if (ret)
			return ret;
		if (how < 0)
			return how;
		if (!(tr.flags & TF_ONE_WAY) && how < BSERVE_REPLIED) {
			ret = txn_reply(r->fd, 0, &reply);
			if (ret)
				return ret;
		}
		if (how == BSERVE_STOP || how == BSERVE_REPLIED_STOP)
			return 0;
	}
}

#endif /* CASK_BINDER_H */
