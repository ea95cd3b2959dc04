// SPDX-License-Identifier: GPL-2.0
/*
 * binder_bench: cask_binder (/dev/binder) against the kernel's own binder
 * (binder_linux.ko on a binderfs mount), in the same boot.
 *
 * Method
 * ------
 * Every measurement gets a fresh binder context on both sides: for cask
 * the pair process unshares its IPC namespace before it forks its servers
 * (a fresh auto cell, so a fresh context behind /dev/binder); for
 * upstream it uses a device just added with BINDER_CTL_ADD on our own
 * binderfs mount (removed afterwards). All processes of one pair are in
 * the same IPC namespace. binder_linux.ko is loaded if "binder" is not in
 * /proc/filesystems.
 *
 * A pair is a server, which becomes the context manager, enters the looper
 * and answers every call, and a client, which calls handle 0. The protocol
 * is libbinder's: the client writes BC_FREE_BUFFER of the previous reply
 * and BC_TRANSACTION in one BINDER_WRITE_READ and reads until BR_REPLY;
 * the server writes BC_REPLY (a payload of the size it received), reads
 * its BR_TRANSACTION_COMPLETE, then writes BC_FREE_BUFFER of the request
 * with its next, blocking, read. Each receiver reads one byte of every
 * 4 KiB page of the payload it got (as a real receiver would touch it), so
 * the cost of mapping buffer pages is counted. Buffers are mapped 1 MiB.
 *
 *  - latency: one pair; each call is timed (CLOCK_MONOTONIC) from the
 *    client's write to its BR_REPLY, payload 0, 64, 1024, 4096, 65536
 *    bytes each way; mean, p50 and p99 of the calls of a measurement.
 *  - one-way: one pair, TF_ONE_WAY calls of 64 bytes; the client waits
 *    for BR_TRANSACTION_COMPLETE of each; the server counts what it got in
 *    shared memory and the client keeps at most WINDOW calls outstanding
 *    (a futex, used only when the window is full), so that the async
 *    space never runs out; calls/s counts until the server had them all.
 *  - pairs: 1, 4 and 16 pairs calling synchronously (64 bytes), each pair
 *    its own context (cask: its own IPC namespace; upstream: its own
 *    binderfs device), started together; calls/s summed over pairs.
 *  - one context: 1, 2, 4 and 16 such pairs all in ONE context, as one
 *    container's system_server, surfaceflinger and apps share one (cask:
 *    all in one IPC namespace, so one cell's /dev/binder; upstream: all
 *    on one binderfs device). A context process unshares the IPC
 *    namespace and starts a registry on each side, the context manager,
 *    then the pair processes. Each pair's server hands its node to the
 *    registry (ADD, a BINDER_TYPE_BINDER object and the pair's index) as
 *    a service registers with servicemanager; the registry keeps a strong
 *    reference (BC_ACQUIRE) to the handle it got; the client asks the
 *    registry (GET) for the handle, takes a strong reference on it and
 *    calls it: every pair has its own server node and thread, and all of
 *    them share the context (cask: its ctx->lock). Also one-way calls of
 *    64 bytes from 4 senders to one node (the registry counts each
 *    sender's calls, by the payload's first byte, with the same window
 *    per sender as above).
 *  - floor: a futex ping-pong between two processes (same timing).
 *  - idle cells: cask 64-byte latency while -c (64) sleeping processes
 *    each hold /dev/binder open in their own IPC namespace (64 auto
 *    cells) against the same with no such cells; the cells are counted
 *    in /sys/kernel/cask/cells before each measurement.
 *
 * Interleaving. One pair process holds both sides: it unshares its IPC
 * namespace, starts a cask server and an upstream server (both forked
 * after the unshare) and opens both devices, then calls them in
 * alternating slices (-s, 20 ms) from a common start time, -t seconds
 * (0.3) per side, so that cask and upstream see the same moments of a
 * noisy host; with several pairs every pair process switches at the same
 * slice boundaries. A one-way side is drained before the other side's
 * slice starts. Each call is charged to the side it was made on; calls/s
 * of a side = its calls / the time spent in them. -r rounds (7) repeat
 * every measurement with fresh contexts, the side of the first slice
 * alternating; every number printed is the median over the rounds, and
 * ratios are cask/upstream of those medians.
 *
 * Idle cells: the two conditions cannot be interleaved in slices (the
 * cells live as long as their processes), so they alternate between
 * rounds; both sides run interleaved in each, and the upstream side
 * (which no cask cell can slow down) is the control: the drift-corrected
 * ratio is (cask/upstream with the cells) / (cask/upstream without).
 * Each side runs -T seconds (3) in these measurements, ten times -t: one
 * 0.3 s measurement's cask/upstream ratio moves about 4% from round to
 * round under TCG, which puts a 7-round median ratio of ratios about 2%
 * from the truth, as wide as its target; at 3 s a round moves about 1%.
 * The plain ratio with/without has no target: the host's drift between
 * the two conditions is in it.
 *
 * Every ratio with a target is printed once more as one line, "bench
 * ratio binder WHAT = X (target >= Y)" (or <= Y), as the other benches
 * do. The p50 ratios, the idle cells' p50 and p99 and the upstream side's
 * drift have no target, and no such line.
 *
 * Diagnostics, printed after the results: per call, the CPU time of
 * client and server (CLOCK_PROCESS_CPUTIME_ID and the server's CPU
 * clock), their minor faults and the client's context switches, charged
 * per slice; and, unless -P, a system-wide cpu-clock profile
 * (perf_event_open, every 100 us, kernel call chains) of sync calls
 * (-p bytes, 64 by default) on each side alone, naming the callers of
 * lock slow paths; then the same for 64-byte sync calls by 4 and by 16
 * pairs in one context, each side alone: where the context's lock (cask:
 * ctx->lock) is contended. Each profile ends with the share of samples in
 * lock slow paths, by caller.
 * Under TCG on a busy host a descheduled vCPU counts as CPU time of
 * whatever it was running, and spinning on a lock whose holder's vCPU is
 * descheduled shows as the lock's slow path.
 *
 * Nothing is pinned: the scheduler places the processes (2 vCPUs in the
 * test guest). The targets are printed next to the ratios; nothing is
 * asserted. All cells the bench makes count against root's share of auto
 * cells: /sys/kernel/cask/max_cells_per_user is raised to IDLE_CELLS + 8
 * for the run if it is lower, max_cells to the cells at the start plus
 * as many, and both are restored at the end.
 *
 * Exit status: 0, 4 if /dev/binder or the kernel's binder is missing
 * (skip), 1 on errors, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
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
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/android/binder.h>
#include <linux/android/binderfs.h>

#define CASK_DEV	"/dev/binder"
#define CELLS_DIR	"/sys/kernel/cask/cells"
#define PER_USER	"/sys/kernel/cask/max_cells_per_user"
#define MAX_CELLS	"/sys/kernel/cask/max_cells"
#define UPSTREAM_KO	"/lib/modules/upstream/binder_linux.ko"
#define MAP_BYTES	(1024 * 1024)
#define MAX_PAYLOAD	65536
#define SMALL_PAYLOAD	64
#define CALL_CODE	0x62656e63	/* "benc" */
#define ADD_CODE	0x62616464	/* "badd": publish a pair's server node */
#define GET_CODE	0x62676574	/* "bget": the handle of a pair's server */
#define WARMUP		50
#define WINDOW		128		/* one-way calls outstanding at most */
#define MAX_PAIRS	16
#define MAX_ROUNDS	31
#define MAX_IDLE	256
#define MAX_SAMPLES	(2 * 1024 * 1024)
#define PAGE_STEP	4096
#define CHILD_ALARM	120		/* seconds: a stuck measurement dies */
#define EXIT_SKIP	4
#define MSG_LEN		160

enum impl { CASK, UPSTREAM };

static const size_t payloads[] = { 0, 64, 1024, 4096, 65536 };
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NPAYLOADS	ARRAY_SIZE(payloads)
static const int pair_counts[] = { 1, 4, 16 };
#define NPAIRCOUNTS	ARRAY_SIZE(pair_counts)
static const int ctx_counts[] = { 1, 2, 4, 16 };
#define NCTXCOUNTS	ARRAY_SIZE(ctx_counts)
#define CTX_SENDERS	4	/* one-way senders to one node, one context */

enum mode { M_SYNC_LAT, M_SYNC_TPUT, M_ONEWAY };

/* What a server process is. */
enum role {
	R_MANAGER,	/* the context manager of its pair's own context */
	R_REGISTRY,	/* the context manager of a shared context: ADD, GET */
	R_SERVICE,	/* a pair's server, its node published via the registry */
};

/* What one client reports for one implementation, in shared memory. */
struct pres {
	uint64_t calls;
	uint64_t busy_ns;	/* time in its calls (one-way: and in draining) */
	double mean, p50, p99;
	/* Diagnostics, over the side's slices: client and server. */
	uint64_t c_cpu_ns, c_minflt, c_nvcsw, c_nivcsw;
	uint64_t s_cpu_ns, s_minflt;
};

/* Shared by the processes of one measurement. */
struct shm {
	atomic_uint ready;
	atomic_uint go;
	uint64_t t0;				/* when the first slice starts */
	atomic_uint received[MAX_PAIRS][2];	/* one-way calls a server got */
	atomic_uint want[MAX_PAIRS][2];		/* wake the client at this count */
	atomic_uint ping;			/* futex floor */
	pid_t mgr[2];				/* a shared context's registry */
	int err[MAX_PAIRS];
	char msg[MAX_PAIRS][MSG_LEN];
	struct pres pr[MAX_PAIRS][2];
};

/* One measurement. */
struct mspec {
	enum mode mode;
	int npairs;
	size_t size;
	bool both;		/* cask and upstream, else @first alone */
	enum impl first;	/* the side of the first slice */
	bool shared;		/* all pairs in one context (per side) */
	double seconds;		/* per side; 0: -t */
};

struct lat {
	double mean, p50, p99;
};

/* Per call, summed over pairs: what the clients and servers used. */
struct diag {
	double calls;		/* calls of the side in the measurement */
	double c_cpu_us, s_cpu_us, c_flt, s_flt, c_vcsw, c_ivcsw;
};

#define D_ONEWAY	((int)NPAYLOADS)
#define D_PAIRS		(D_ONEWAY + 1)
#define D_CTX		(D_PAIRS + (int)NPAIRCOUNTS)
#define D_CTX_ONEWAY	(D_CTX + (int)NCTXCOUNTS)
#define NDIAG		(D_CTX_ONEWAY + 1)

struct options {
	int rounds;
	double seconds;		/* per side and measurement */
	double idle_seconds;	/* per side, idle-cells measurements */
	double slice;		/* length of one slice of one side */
	int idle;
	bool idle_only;		/* -i: the idle-cells comparison alone */
	bool profile;
	size_t profile_size;	/* payload of the profiled calls */
};

static struct options opt = { .rounds = 7, .seconds = 0.3, .idle_seconds = 3, .slice = 0.02,
				.idle = 64, .profile = true, .profile_size = SMALL_PAYLOAD };
static struct shm *sh;
static char mnt[64];
static int ctl_fd = -1;
static unsigned int dev_seq;
/* What receivers read, kept so that the reads are not optimised away. */
unsigned char bench_sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static long futex(atomic_uint *word, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, NULL, NULL, 0);
}

static void wait_while(atomic_uint *word, uint32_t val)
{
	while (atomic_load(word) == val)
		futex(word, FUTEX_WAIT, val);
}

static void wake_all(atomic_uint *word)
{
	futex(word, FUTEX_WAKE, INT_MAX);
}

/* ---- the binder protocol, raw ---------------------------------------- */

struct conn {
	int fd;
	void *map;
};

struct cmdbuf {
	size_t len;
	unsigned char b[512];
};

static void put_cmd(struct cmdbuf *w, uint32_t cmd, const void *arg, size_t n)
{
	memcpy(w->b + w->len, &cmd, sizeof(cmd));
	w->len += sizeof(cmd);
	if (n)
		memcpy(w->b + w->len, arg, n);
	w->len += n;
}

static void put_free(struct cmdbuf *w, binder_uintptr_t buf)
{
	put_cmd(w, BC_FREE_BUFFER, &buf, sizeof(buf));
}

static int conn_open(struct conn *c, const char *dev)
{
	c->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	c->map = mmap(NULL, MAP_BYTES, PROT_READ, MAP_PRIVATE | MAP_NORESERVE, c->fd, 0);
	if (c->map == MAP_FAILED) {
		int err = -errno;

		close(c->fd);
		return err;
	}
	return 0;
}

/*
 * One BINDER_WRITE_READ: all of @w (may be NULL) written, then up to
 * @rsize bytes read into @rbuf; *@rdone is what was read. @w is emptied.
 */
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
		if (errno != EINTR)
			return -errno;
	if (b.write_consumed != b.write_size)
		return -EPROTO;
	if (w)
		w->len = 0;
	if (rdone)
		*rdone = b.read_consumed;
	return 0;
}

/* The receiver reads the payload, one byte a page. */
static void touch(const struct binder_transaction_data *tr)
{
	const unsigned char *p = (const unsigned char *)(uintptr_t)tr->data.ptr.buffer;
	unsigned char acc = 0;
	size_t i;

	for (i = 0; i < tr->data_size; i += PAGE_STEP)
		acc ^= p[i];
	if (tr->data_size)
		acc ^= p[tr->data_size - 1];
	bench_sink = acc;
}

struct client {
	struct conn c;
	uint32_t handle;		/* of the server it calls */
	const void *payload;
	size_t size;
	binder_uintptr_t pending_free;	/* the last reply, freed with the next call */
	char *msg;			/* where to say what went wrong */
};

/*
 * Sends @tr (freeing the last reply first, as libbinder does) and reads
 * until its BR_REPLY, copied to @reply, or for a one-way call until
 * BR_TRANSACTION_COMPLETE. 0, or -errno (the reason in cl->msg).
 */
static int call_raw(struct client *cl, const struct binder_transaction_data *tr,
		    struct binder_transaction_data *reply)
{
	bool oneway = tr->flags & TF_ONE_WAY;
	struct cmdbuf w = { 0 };
	struct cmdbuf *wp = &w;
	uint32_t rb[64];
	size_t n, off;
	uint32_t cmd;
	int ret;

	if (cl->pending_free) {
		put_free(&w, cl->pending_free);
		cl->pending_free = 0;
	}
	put_cmd(&w, BC_TRANSACTION, tr, sizeof(*tr));
	for (;;) {
		ret = bwr(cl->c.fd, wp, rb, sizeof(rb), &n);
		wp = NULL;
		if (ret) {
			snprintf(cl->msg, MSG_LEN,
				 "BINDER_WRITE_READ: %s", strerror(-ret));
			return ret;
		}
		for (off = 0; off + sizeof(cmd) <= n; off += sizeof(cmd) + _IOC_SIZE(cmd)) {
			memcpy(&cmd, (char *)rb + off, sizeof(cmd));
			if (off + sizeof(cmd) + _IOC_SIZE(cmd) > n)
				goto proto;
			switch (cmd) {
			case BR_NOOP:
				break;
			case BR_TRANSACTION_COMPLETE:
				if (oneway)
					return 0;
				break;
			case BR_REPLY:
				memcpy(reply, (char *)rb + off + sizeof(cmd), sizeof(*reply));
				cl->pending_free = reply->data.ptr.buffer;
				if (reply->flags & TF_STATUS_CODE) {
					snprintf(cl->msg, MSG_LEN, "bad reply: flags %#x",
						 reply->flags);
					return -EPROTO;
				}
				return 0;
			default:
				goto proto;
			}
		}
	}
proto:
	snprintf(cl->msg, MSG_LEN, "unexpected return %#x", cmd);
	return -EPROTO;
}

/* One call to the server: 0, or -errno (the reason in cl->msg). */
static int client_call(struct client *cl, bool oneway)
{
	struct binder_transaction_data tr = {
		.target.handle = cl->handle,
		.code = CALL_CODE,
		.flags = oneway ? TF_ONE_WAY : 0,
		.data_size = cl->size,
		.data.ptr.buffer = (uintptr_t)cl->payload,
	};
	int ret;

	ret = call_raw(cl, &tr, &tr);
	if (ret || oneway)
		return ret;
	if (tr.data_size != cl->size) {
		snprintf(cl->msg, MSG_LEN, "bad reply: size %llu",
			 (unsigned long long)tr.data_size);
		return -EPROTO;
	}
	touch(&tr);
	return 0;
}

/*
 * Asks the registry (handle 0) for pair @idx's server, as a client asks
 * servicemanager: the reply holds a handle, which we take a strong
 * reference on before the reply is freed. Sets cl->handle.
 */
static int client_lookup(struct client *cl, uint32_t idx)
{
	struct binder_transaction_data tr = {
		.code = GET_CODE,
		.data_size = sizeof(idx),
		.data.ptr.buffer = (uintptr_t)&idx,
	};
	struct flat_binder_object obj;
	struct cmdbuf w = { 0 };
	binder_size_t off;
	int ret;

	ret = call_raw(cl, &tr, &tr);
	if (ret)
		return ret;
	if (tr.data_size < sizeof(obj) || tr.offsets_size < sizeof(off)) {
		snprintf(cl->msg, MSG_LEN, "lookup of %u: no object in the reply", idx);
		return -ENOENT;
	}
	memcpy(&off, (void *)(uintptr_t)tr.data.ptr.offsets, sizeof(off));
	if (off > tr.data_size - sizeof(obj)) {
		snprintf(cl->msg, MSG_LEN, "lookup of %u: object offset %llu", idx,
			 (unsigned long long)off);
		return -EPROTO;
	}
	memcpy(&obj, (char *)(uintptr_t)tr.data.ptr.buffer + off, sizeof(obj));
	if (obj.hdr.type != BINDER_TYPE_HANDLE) {
		snprintf(cl->msg, MSG_LEN, "lookup of %u: object type %#x", idx, obj.hdr.type);
		return -EPROTO;
	}
	cl->handle = obj.handle;
	put_cmd(&w, BC_ACQUIRE, &cl->handle, sizeof(cl->handle));
	put_free(&w, cl->pending_free);
	cl->pending_free = 0;
	ret = bwr(cl->c.fd, &w, NULL, 0, NULL);
	if (ret)
		snprintf(cl->msg, MSG_LEN, "BC_ACQUIRE %u: %s", cl->handle, strerror(-ret));
	return ret;
}

static void release_reply(struct client *cl)
{
	struct cmdbuf w = { 0 };

	if (!cl->pending_free)
		return;
	put_free(&w, cl->pending_free);
	cl->pending_free = 0;
	bwr(cl->c.fd, &w, NULL, 0, NULL);
}

/* What a server publishes through the registry: its node, for pair @idx. */
struct add_msg {
	struct flat_binder_object obj;
	uint32_t idx;
};

/* A server process's state. */
struct server {
	struct conn c;
	enum role role;
	int idx, side;
	struct cmdbuf w;		/* written with the next read */
	binder_uintptr_t free_after;	/* the request, freed after our reply */
	uint32_t handles[MAX_PAIRS];	/* R_REGISTRY: each pair's server */
	struct flat_binder_object robj;	/* R_REGISTRY: a GET reply's object */
	binder_size_t roff;
};

static void __attribute__((noreturn, format(printf, 1, 2)))
server_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "binder_bench: server: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	_exit(1);
}

/*
 * The node's reference handshakes: BR_INCREFS and BR_ACQUIRE answered as
 * libbinder does, BR_RELEASE and BR_DECREFS taken note of (the node lives
 * as long as the process). False if @cmd is none of them.
 */
static bool server_refs(struct server *s, uint32_t cmd, const void *arg)
{
	struct binder_ptr_cookie pc;

	switch (cmd) {
	case BR_INCREFS:
	case BR_ACQUIRE:
		memcpy(&pc, arg, sizeof(pc));
		put_cmd(&s->w, cmd == BR_INCREFS ? BC_INCREFS_DONE : BC_ACQUIRE_DONE, &pc,
			sizeof(pc));
		return true;
	case BR_RELEASE:
	case BR_DECREFS:
		return true;
	}
	return false;
}

/*
 * R_SERVICE: hands our node to the registry (handle 0) with our pair's
 * index, as a service registers with servicemanager, and waits for the
 * answer. The handshakes of the node's first references come meanwhile.
 */
static void server_publish(struct server *s)
{
	static unsigned char node_cookie;	/* only its address matters */
	struct add_msg msg = {
		.obj.hdr.type = BINDER_TYPE_BINDER,
		.obj.binder = (uintptr_t)&node_cookie,
		.obj.cookie = 0,
		.idx = s->idx,
	};
	binder_size_t off = 0;
	struct binder_transaction_data tr = {
		.target.handle = 0,
		.code = ADD_CODE,
		.data_size = sizeof(msg),
		.offsets_size = sizeof(off),
		.data.ptr.buffer = (uintptr_t)&msg,
		.data.ptr.offsets = (uintptr_t)&off,
	};
	uint32_t rb[64], cmd;
	bool done = false;
	size_t n, o;

	put_cmd(&s->w, BC_TRANSACTION, &tr, sizeof(tr));
	while (!done) {
		if (bwr(s->c.fd, &s->w, rb, sizeof(rb), &n))
			server_fail("publish: BINDER_WRITE_READ: %s", strerror(errno));
		for (o = 0; o + sizeof(cmd) <= n; o += sizeof(cmd) + _IOC_SIZE(cmd)) {
			memcpy(&cmd, (char *)rb + o, sizeof(cmd));
			if (cmd == BR_NOOP || cmd == BR_TRANSACTION_COMPLETE ||
			    server_refs(s, cmd, (char *)rb + o + sizeof(cmd)))
				continue;
			if (cmd != BR_REPLY)
				server_fail("publish: unexpected return %#x", cmd);
			memcpy(&tr, (char *)rb + o + sizeof(cmd), sizeof(tr));
			if (tr.flags & TF_STATUS_CODE)
				server_fail("publish: the registry refused");
			put_free(&s->w, tr.data.ptr.buffer);
			done = true;
		}
	}
}

/*
 * R_REGISTRY: ADD keeps a strong reference to the node it got (now a
 * handle of ours) under the pair's index; GET replies with that handle.
 * Fills the reply @rtr.
 */
static void server_registry(struct server *s, const struct binder_transaction_data *tr,
			    struct binder_transaction_data *rtr)
{
	const char *data = (const char *)(uintptr_t)tr->data.ptr.buffer;
	struct add_msg msg;
	uint32_t idx;

	if (tr->code == ADD_CODE) {
		if (tr->data_size < sizeof(msg) || tr->offsets_size < sizeof(binder_size_t))
			server_fail("ADD: no object");
		memcpy(&msg, data, sizeof(msg));
		if (msg.obj.hdr.type != BINDER_TYPE_HANDLE || msg.idx >= MAX_PAIRS)
			server_fail("ADD: object type %#x, index %u", msg.obj.hdr.type, msg.idx);
		s->handles[msg.idx] = msg.obj.handle;
		put_cmd(&s->w, BC_ACQUIRE, &msg.obj.handle, sizeof(msg.obj.handle));
		return;
	}
	if (tr->data_size < sizeof(idx))
		server_fail("GET: no index");
	memcpy(&idx, data, sizeof(idx));
	if (idx >= MAX_PAIRS || !s->handles[idx])
		server_fail("GET: no server %u", idx);
	memset(&s->robj, 0, sizeof(s->robj));
	s->robj.hdr.type = BINDER_TYPE_HANDLE;
	s->robj.handle = s->handles[idx];
	s->roff = 0;
	rtr->data_size = sizeof(s->robj);
	rtr->offsets_size = sizeof(s->roff);
	rtr->data.ptr.buffer = (uintptr_t)&s->robj;
	rtr->data.ptr.offsets = (uintptr_t)&s->roff;
}

/*
 * A server (see enum role): answers every call until killed; counts the
 * one-way calls in sh->received[][@side], of its pair or, for the
 * registry, of the sender whose index is the payload's first byte. Says
 * "K" on @ready_fd once it can be called; exits if it cannot.
 */
static void __attribute__((noreturn))
server_main(const char *dev, int ready_fd, enum role role, int idx, int side)
{
	static unsigned char reply[MAX_PAYLOAD];
	static struct server s;
	struct binder_transaction_data tr, rtr;
	atomic_uint *received, *want;
	uint32_t rb[128], cmd, r, wv;
	size_t off;
	long n;
	int who;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(reply, 0x5a, sizeof(reply));
	s.role = role;
	s.idx = idx;
	s.side = side;
	n = conn_open(&s.c, dev);
	if (n)
		server_fail("open/mmap %s: %s", dev, strerror(-n));
	if (role != R_SERVICE && ioctl(s.c.fd, BINDER_SET_CONTEXT_MGR, 0) < 0)
		server_fail("BINDER_SET_CONTEXT_MGR on %s: %s", dev, strerror(errno));
	put_cmd(&s.w, BC_ENTER_LOOPER, NULL, 0);
	if (role == R_SERVICE)
		server_publish(&s);
	if (bwr(s.c.fd, &s.w, NULL, 0, NULL) || write(ready_fd, "K", 1) != 1)
		_exit(1);
	close(ready_fd);
	for (;;) {
		size_t got;

		if (bwr(s.c.fd, &s.w, rb, sizeof(rb), &got))
			_exit(1);
		n = got;
		for (off = 0; off + sizeof(cmd) <= (size_t)n;
		     off += sizeof(cmd) + _IOC_SIZE(cmd)) {
			memcpy(&cmd, (char *)rb + off, sizeof(cmd));
			if (server_refs(&s, cmd, (char *)rb + off + sizeof(cmd)))
				continue;
			switch (cmd) {
			case BR_NOOP:
			case BR_SPAWN_LOOPER:
				break;
			case BR_TRANSACTION_COMPLETE:
				/* Of our reply: now free the request, with the next read. */
				if (s.free_after)
					put_free(&s.w, s.free_after);
				s.free_after = 0;
				break;
			case BR_TRANSACTION:
				memcpy(&tr, (char *)rb + off + sizeof(cmd), sizeof(tr));
				memset(&rtr, 0, sizeof(rtr));
				rtr.code = tr.code;
				if (tr.code != CALL_CODE) {
					if (role != R_REGISTRY || tr.flags & TF_ONE_WAY)
						server_fail("unexpected call %#x", tr.code);
					server_registry(&s, &tr, &rtr);
					put_cmd(&s.w, BC_REPLY, &rtr, sizeof(rtr));
					s.free_after = tr.data.ptr.buffer;
					break;
				}
				touch(&tr);
				if (tr.flags & TF_ONE_WAY) {
					put_free(&s.w, tr.data.ptr.buffer);
					who = idx;
					if (role == R_REGISTRY && tr.data_size)
						who = *(const unsigned char *)(uintptr_t)
							tr.data.ptr.buffer % MAX_PAIRS;
					received = &sh->received[who][side];
					want = &sh->want[who][side];
					r = atomic_fetch_add(received, 1) + 1;
					wv = atomic_load(want);
					if (wv && (int32_t)(r - wv) >= 0) {
						atomic_store(want, 0);
						wake_all(received);
					}
					break;
				}
				rtr.data_size = tr.data_size;
				rtr.data.ptr.buffer = (uintptr_t)reply;
				put_cmd(&s.w, BC_REPLY, &rtr, sizeof(rtr));
				s.free_after = tr.data.ptr.buffer;
				break;
			case BR_FAILED_REPLY:
			case BR_DEAD_REPLY:
				/* The client went away; it is being killed anyway. */
				break;
			default:
				server_fail("unexpected return %#x", cmd);
			}
		}
	}
}

/* ---- one measurement ------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void lat_stats(uint32_t *s, size_t n, struct pres *pr)
{
	double sum = 0;
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		sum += s[i];
	qsort(s, n, sizeof(*s), cmp_u32);
	pr->mean = sum / n;
	pr->p50 = s[n / 2];
	pr->p99 = s[(size_t)((n - 1) * 0.99)];
}

static void __attribute__((noreturn, format(printf, 2, 3)))
pair_fail(int i, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sh->msg[i], MSG_LEN, fmt, ap);
	va_end(ap);
	sh->err[i] = 1;
	/* Let the coordinator go on: it finds the error afterwards. */
	atomic_fetch_add(&sh->ready, 1);
	wake_all(&sh->ready);
	_exit(1);
}

/* One side of a pair process: a connection and the server it calls. */
struct side {
	bool on;		/* this side is measured */
	struct client cl;
	pid_t server;		/* ours, or 0 (we call the registry) */
	pid_t stat_pid;		/* whose CPU time and faults count as the server's */
	atomic_uint *received, *want;
	uint32_t sent;		/* one-way calls */
	uint32_t *samples;
	size_t ns;
	struct pres *pr;
	clockid_t s_clock;	/* the server's CPU clock */
	uint64_t s_cpu0, s_minflt0;
};

/* CPU time of the calling process, or of @clk. */
static uint64_t cpu_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Minor faults of process @pid so far (field 10 of /proc/PID/stat). */
static uint64_t proc_minflt(pid_t pid)
{
	unsigned long long v = 0;
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* After the command name, which may hold spaces: field 3 on. */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 10; i++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

/* What the pair process used since the last mark, charged to @sd. */
struct usage_mark {
	uint64_t cpu;
	struct rusage ru;
};

static void usage_mark(struct usage_mark *m)
{
	m->cpu = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	getrusage(RUSAGE_SELF, &m->ru);
}

static void usage_charge(struct side *sd, struct usage_mark *m)
{
	struct usage_mark now;

	usage_mark(&now);
	sd->pr->c_cpu_ns += now.cpu - m->cpu;
	sd->pr->c_minflt += now.ru.ru_minflt - m->ru.ru_minflt;
	sd->pr->c_nvcsw += now.ru.ru_nvcsw - m->ru.ru_nvcsw;
	sd->pr->c_nivcsw += now.ru.ru_nivcsw - m->ru.ru_nivcsw;
	*m = now;
}

/*
 * Forks a server (@role, @idx, @side) on @dev and waits until it can be
 * called. Its pid, or -1 with the reason in @msg.
 */
static pid_t server_start(const char *dev, enum role role, int idx, int side, char *msg)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(msg, MSG_LEN, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(msg, MSG_LEN, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		server_main(dev, pfd[1], role, idx, side);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1 || c != 'K') {
		snprintf(msg, MSG_LEN, "the server on %s did not start", dev);
		close(pfd[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	close(pfd[0]);
	return pid;
}

/*
 * Side @k of pair @i: its server (none when the pairs of a shared context
 * send one-way calls to the registry), its connection, warm-up calls.
 */
static void side_start(int i, int k, struct side *sd, const char *dev, const struct mspec *m,
		       bool samples)
{
	char msg[MSG_LEN];
	int n;

	sd->on = true;
	if (m->shared && m->mode == M_ONEWAY) {
		/* Pair 0 reports the registry's CPU time for all. */
		sd->stat_pid = i == 0 ? sh->mgr[k] : 0;
	} else {
		sd->server = server_start(dev, m->shared ? R_SERVICE : R_MANAGER, i, k, msg);
		if (sd->server < 0)
			pair_fail(i, "%s", msg);
		sd->stat_pid = sd->server;
	}
	if (!sd->stat_pid || clock_getcpuclockid(sd->stat_pid, &sd->s_clock))
		sd->s_clock = -1;
	n = conn_open(&sd->cl.c, dev);
	if (n)
		pair_fail(i, "open %s: %s", dev, strerror(-n));
	if (sd->server && m->shared && client_lookup(&sd->cl, i))
		pair_fail(i, "lookup on %s: %s", dev, sd->cl.msg);
	if (samples) {
		sd->samples = malloc(MAX_SAMPLES * sizeof(*sd->samples));
		if (!sd->samples)
			pair_fail(i, "no memory for samples");
	}
	for (n = 0; n < WARMUP; n++)
		if (client_call(&sd->cl, false))
			pair_fail(i, "warm-up on %s: %s", dev, sd->cl.msg);
}

/* Wait until the server has had all one-way calls (or until @target). */
static void oneway_wait(struct side *sd, uint32_t target)
{
	uint32_t r;

	while ((int32_t)((r = atomic_load(sd->received)) - target) < 0) {
		atomic_store(sd->want, target);
		if ((int32_t)(atomic_load(sd->received) - target) >= 0)
			break;
		futex(sd->received, FUTEX_WAIT, r);
	}
}

/*
 * Pair process @i: unshares its IPC namespace (a fresh cell) unless
 * m->shared (then its context process did, for all pairs), starts a
 * server and a connection on /dev/binder and/or on the upstream device
 * @updev (m->both, or only m->first), then calls them in alternating slices of
 * opt.slice from sh->t0 on, the same slices in every pair process.
 * Reports in sh->pr[i][].
 */
static void __attribute__((noreturn))
pair_main(int i, const struct mspec *m, const char *updev)
{
	static unsigned char payload[MAX_PAYLOAD];
	bool lat = m->mode == M_SYNC_LAT, oneway = m->mode == M_ONEWAY;
	uint64_t t0, ta, tb, now, slice_ns, idx, nslices;
	struct side sides[2] = { 0 }, *sd;
	int k, cur = -1, nsides = m->both ? 2 : 1;
	struct usage_mark mark;

	alarm(CHILD_ALARM);
	memset(payload, 0xa5, sizeof(payload));
	/* Who sent it, for a registry counting one-way calls of several. */
	payload[0] = i;
	if (!m->shared && unshare(CLONE_NEWIPC))
		pair_fail(i, "unshare(CLONE_NEWIPC): %s", strerror(errno));
	for (k = 0; k < 2; k++) {
		if (!m->both && k != (int)m->first)
			continue;
		sd = &sides[k];
		sd->cl.payload = payload;
		sd->cl.size = m->size;
		sd->cl.msg = sh->msg[i];
		sd->received = &sh->received[i][k];
		sd->want = &sh->want[i][k];
		sd->pr = &sh->pr[i][k];
		side_start(i, k, sd, k == CASK ? CASK_DEV : updev, m, lat);
	}

	atomic_fetch_add(&sh->ready, 1);
	wake_all(&sh->ready);
	wait_while(&sh->go, 0);

	t0 = sh->t0;
	for (k = 0; k < 2; k++) {
		if (!sides[k].on)
			continue;
		sides[k].s_cpu0 = sides[k].s_clock == -1 ? 0 : cpu_ns(sides[k].s_clock);
		sides[k].s_minflt0 = sides[k].stat_pid ? proc_minflt(sides[k].stat_pid) : 0;
	}
	usage_mark(&mark);
	slice_ns = (uint64_t)(opt.slice * 1e9);
	nslices = nsides * (uint64_t)((m->seconds ? m->seconds : opt.seconds) / opt.slice + 0.5);
	if (nslices < (uint64_t)nsides)
		nslices = nsides;
	for (;;) {
		now = now_ns();
		idx = now < t0 ? 0 : (now - t0) / slice_ns;
		if (idx >= nslices)
			break;
		k = (int)((m->both ? idx + m->first : m->first) % 2);
		sd = &sides[k];
		if (cur >= 0 && cur != k) {
			if (oneway) {
				/* The other side's calls are done before this side's start. */
				ta = now_ns();
				oneway_wait(&sides[cur], sides[cur].sent);
				sides[cur].pr->busy_ns += now_ns() - ta;
			}
			usage_charge(&sides[cur], &mark);
		}
		cur = k;
		ta = now_ns();
		if (oneway) {
			/* At most WINDOW calls in flight. */
			if (sd->sent - atomic_load(sd->received) >= WINDOW)
				oneway_wait(sd, sd->sent - WINDOW / 2);
			if (client_call(&sd->cl, true))
				pair_fail(i, "one-way call: %s", sd->cl.msg);
			sd->sent++;
		} else if (client_call(&sd->cl, false)) {
			pair_fail(i, "call: %s", sd->cl.msg);
		}
		tb = now_ns();
		sd->pr->busy_ns += tb - ta;
		sd->pr->calls++;
		if (sd->samples && sd->ns < MAX_SAMPLES)
			sd->samples[sd->ns++] = tb - ta > UINT32_MAX ? UINT32_MAX : tb - ta;
	}
	if (oneway && cur >= 0) {
		ta = now_ns();
		oneway_wait(&sides[cur], sides[cur].sent);
		sides[cur].pr->busy_ns += now_ns() - ta;
	}
	if (cur >= 0)
		usage_charge(&sides[cur], &mark);
	for (k = 0; k < 2; k++) {
		sd = &sides[k];
		if (!sd->on)
			continue;
		if (sd->s_clock != -1)
			sd->pr->s_cpu_ns = cpu_ns(sd->s_clock) - sd->s_cpu0;
		if (sd->stat_pid)
			sd->pr->s_minflt = proc_minflt(sd->stat_pid) - sd->s_minflt0;
		release_reply(&sd->cl);
		if (sd->samples)
			lat_stats(sd->samples, sd->ns, sd->pr);
		if (!sd->server)
			continue;
		kill(sd->server, SIGKILL);
		waitpid(sd->server, NULL, 0);
	}
	_exit(0);
}

static int reap(pid_t pid, const char *what)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		fprintf(stderr, "binder_bench: %s: killed by signal %d\n", what, WTERMSIG(status));
	return -1;
}

/*
 * The context process of a shared measurement: unshares its IPC namespace
 * (one fresh cell, so one /dev/binder context for all pairs), starts a
 * registry as the context manager of each side's context (cask's, and
 * the upstream device @updev that all pairs share), then the pair
 * processes, and reaps them.
 */
static void __attribute__((noreturn))
ctx_main(const struct mspec *m, const char *updev)
{
	pid_t pids[MAX_PAIRS];
	int i, k, n;

	alarm(CHILD_ALARM);
	if (unshare(CLONE_NEWIPC)) {
		snprintf(sh->msg[0], MSG_LEN, "unshare(CLONE_NEWIPC): %s", strerror(errno));
		goto fail;
	}
	for (k = 0; k < 2; k++) {
		if (!m->both && k != (int)m->first)
			continue;
		sh->mgr[k] = server_start(k == CASK ? CASK_DEV : updev, R_REGISTRY, 0, k,
					  sh->msg[0]);
		if (sh->mgr[k] < 0) {
			sh->mgr[k] = 0;
			goto fail;
		}
	}
	fflush(NULL);
	for (n = 0; n < m->npairs; n++) {
		pids[n] = fork();
		if (pids[n] < 0) {
			snprintf(sh->msg[n], MSG_LEN, "fork: %s", strerror(errno));
			sh->err[n] = 1;
			/* The coordinator waits for every pair to be ready. */
			atomic_fetch_add(&sh->ready, m->npairs - n);
			wake_all(&sh->ready);
			break;
		}
		if (pids[n] == 0)
			pair_main(n, m, updev);
	}
	for (i = 0; i < n; i++)
		if (reap(pids[i], "pair") && !sh->err[i]) {
			snprintf(sh->msg[i], MSG_LEN, "died");
			sh->err[i] = 1;
		}
	for (k = 0; k < 2; k++) {
		if (!sh->mgr[k])
			continue;
		kill(sh->mgr[k], SIGKILL);
		waitpid(sh->mgr[k], NULL, 0);
	}
	_exit(0);
fail:
	sh->err[0] = 1;
	atomic_fetch_add(&sh->ready, m->npairs);
	wake_all(&sh->ready);
	_exit(1);
}

static int add_upstream_dev(char *path, size_t len)
{
	struct binderfs_device bd = { 0 };

	snprintf(bd.name, sizeof(bd.name), "bb%u", dev_seq++);
	if (ioctl(ctl_fd, BINDER_CTL_ADD, &bd) < 0) {
		fprintf(stderr, "binder_bench: BINDER_CTL_ADD %s: %s\n", bd.name, strerror(errno));
		return -1;
	}
	snprintf(path, len, "%s/%s", mnt, bd.name);
	return 0;
}

/*
 * Run measurement @m. Returns 0 with the calls/s summed over the pairs in
 * @rate[] and, for M_SYNC_LAT, pair 0's latencies in @lat[], both indexed
 * by enum impl (only [m->first] without m->both).
 */
static int measure(const struct mspec *m, double rate[2], struct lat lat[2],
		   struct diag dg[2])
{
	struct pres sum[2] = { 0 };
	char devs[MAX_PAIRS][PATH_MAX] = { { 0 } };
	pid_t pids[MAX_PAIRS];
	int i, k, n, npairs, nprocs, ndevs, ret = 0;
	uint32_t r;

	memset(sh, 0, sizeof(*sh));
	/* Shared: one context process, one upstream device for all pairs. */
	nprocs = m->shared ? 1 : m->npairs;
	ndevs = (m->both || m->first == UPSTREAM) ? nprocs : 0;
	for (i = 0; i < ndevs; i++)
		if (add_upstream_dev(devs[i], sizeof(devs[i])))
			goto out;
	fflush(NULL);
	for (n = 0; n < nprocs; n++) {
		pids[n] = fork();
		if (pids[n] < 0) {
			perror("binder_bench: fork");
			ret = -1;
			break;
		}
		if (pids[n] == 0) {
			if (m->shared)
				ctx_main(m, devs[0]);
			pair_main(n, m, devs[n]);
		}
	}
	npairs = m->shared ? (n ? m->npairs : 0) : n;
	/* Start them together once all are warm; a failed one counts as ready. */
	while ((r = atomic_load(&sh->ready)) < (uint32_t)npairs)
		futex(&sh->ready, FUTEX_WAIT, r);
	sh->t0 = now_ns() + 2000000;
	atomic_store(&sh->go, 1);
	wake_all(&sh->go);
	rate[0] = 0;
	rate[1] = 0;
	for (i = 0; i < n; i++)
		if (reap(pids[i], m->shared ? "context" : "pair")) {
			if (m->shared || !sh->err[i])
				fprintf(stderr, "binder_bench: %s %d: %s\n",
					m->shared ? "context" : "pair", i,
					sh->msg[i][0] ? sh->msg[i] : "failed");
			ret = -1;
		}
	for (i = 0; i < npairs; i++) {
		if (sh->err[i]) {
			fprintf(stderr, "binder_bench: pair %d: %s\n", i,
				sh->msg[i][0] ? sh->msg[i] : "failed");
			ret = -1;
			continue;
		}
		for (k = 0; k < 2; k++) {
			struct pres *p = &sh->pr[i][k];

			if (p->busy_ns)
				rate[k] += p->calls * 1e9 / p->busy_ns;
			sum[k].calls += p->calls;
			sum[k].c_cpu_ns += p->c_cpu_ns;
			sum[k].s_cpu_ns += p->s_cpu_ns;
			sum[k].c_minflt += p->c_minflt;
			sum[k].s_minflt += p->s_minflt;
			sum[k].c_nvcsw += p->c_nvcsw;
			sum[k].c_nivcsw += p->c_nivcsw;
		}
	}
	for (k = 0; dg && k < 2; k++) {
		double c = sum[k].calls ? sum[k].calls : 1;

		dg[k].calls = sum[k].calls;
		dg[k].c_cpu_us = sum[k].c_cpu_ns / c / 1e3;
		dg[k].s_cpu_us = sum[k].s_cpu_ns / c / 1e3;
		dg[k].c_flt = sum[k].c_minflt / c;
		dg[k].s_flt = sum[k].s_minflt / c;
		dg[k].c_vcsw = sum[k].c_nvcsw / c;
		dg[k].c_ivcsw = sum[k].c_nivcsw / c;
	}
	for (k = 0; lat && k < 2; k++) {
		lat[k].mean = sh->pr[0][k].mean;
		lat[k].p50 = sh->pr[0][k].p50;
		lat[k].p99 = sh->pr[0][k].p99;
	}
out:
	for (i = 0; i < ndevs; i++)
		if (devs[i][0])
			unlink(devs[i]);
	return ret;
}

/* ---- the floor: a futex ping-pong ------------------------------------ */

static int measure_futex(struct lat *lat)
{
	uint32_t *samples;
	uint64_t t0, t1, deadline;
	size_t ns = 0;
	uint32_t v;
	pid_t pid;
	int i;

	memset(sh, 0, sizeof(*sh));
	samples = malloc(MAX_SAMPLES * sizeof(*samples));
	if (!samples)
		return -1;
	pid = fork();
	if (pid < 0) {
		free(samples);
		return -1;
	}
	if (pid == 0) {
		/* 1: a ping to answer with 0; 2: stop. */
		alarm(CHILD_ALARM);
		for (;;) {
			while ((v = atomic_load(&sh->ping)) == 0)
				futex(&sh->ping, FUTEX_WAIT, 0);
			if (v == 2)
				_exit(0);
			atomic_store(&sh->ping, 0);
			futex(&sh->ping, FUTEX_WAKE, 1);
		}
	}
	for (i = 0; i < WARMUP; i++) {
		atomic_store(&sh->ping, 1);
		futex(&sh->ping, FUTEX_WAKE, 1);
		wait_while(&sh->ping, 1);
	}
	deadline = now_ns() + (uint64_t)(opt.seconds * 1e9);
	t1 = now_ns();
	while (t1 < deadline) {
		t0 = t1;
		atomic_store(&sh->ping, 1);
		futex(&sh->ping, FUTEX_WAKE, 1);
		wait_while(&sh->ping, 1);
		t1 = now_ns();
		if (ns < MAX_SAMPLES)
			samples[ns++] = t1 - t0 > UINT32_MAX ? UINT32_MAX : t1 - t0;
	}
	atomic_store(&sh->ping, 2);
	futex(&sh->ping, FUTEX_WAKE, 1);
	i = reap(pid, "futex");
	lat_stats(samples, ns, &sh->pr[0][0]);
	free(samples);
	lat->mean = sh->pr[0][0].mean;
	lat->p50 = sh->pr[0][0].p50;
	lat->p99 = sh->pr[0][0].p99;
	return i;
}

/* ---- idle cells ------------------------------------------------------ */

static int count_cells(void)
{
	struct dirent *de;
	DIR *d = opendir(CELLS_DIR);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static int baseline = -1;	/* cells when we started */
static uint64_t settle_ns;	/* time spent in settle_cells() */

/*
 * Wait (up to 5 s) for the cells of the processes of the last measurement
 * to go, so that no measurement runs beside a teardown.
 */
static void settle_cells(void)
{
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; baseline >= 0 && i < 500 && count_cells() > baseline; i++)
		usleep(10000);
	settle_ns += now_ns() - t0;
}

/*
 * @n sleeping processes, each with /dev/binder open in its own IPC
 * namespace. Each reports 0 or the errno of its unshare or open.
 */
static int spawn_idle(int n, pid_t *pids)
{
	int pfd[2], i, got = 0, err = 0;

	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	fflush(NULL);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			break;
		if (pids[i] == 0) {
			int fd;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(pfd[0]);
			fd = unshare(CLONE_NEWIPC) ? -1 : open(CASK_DEV, O_RDWR | O_CLOEXEC);
			err = fd < 0 ? errno : 0;
			if (write(pfd[1], &err, sizeof(err)) != sizeof(err))
				_exit(1);
			for (;;)
				pause();
		}
	}
	close(pfd[1]);
	while (got < i && read(pfd[0], &err, sizeof(err)) == sizeof(err) && !err)
		got++;
	close(pfd[0]);
	if (got < n) {
		fprintf(stderr, "binder_bench: %d of %d idle cells started%s%s\n", got, n,
			err ? "; the next one: " : "", err ? strerror(err) : "");
		for (n = 0; n < i; n++)
			kill(pids[n], SIGKILL);
		for (n = 0; n < i; n++)
			waitpid(pids[n], NULL, 0);
		return -1;
	}
	return 0;
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

static void reap_idle(int n, pid_t *pids)
{
	int i;

	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
}

/* ---- a small system-wide profiler (cpu-clock samples) ----------------- */

#define PROF_CPUS	8
#define PROF_PAGES	256		/* ring pages per CPU */
#define PROF_PERIOD_NS	100000
#define PROF_TOP	14

struct ksym {
	uint64_t addr;
	char name[60];
};

static struct ksym *ksyms;
static size_t nksyms;

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The kernel's and the modules' text symbols; false if they are hidden. */
static bool load_kallsyms(void)
{
	char line[256], name[60], type;
	unsigned long long addr;
	size_t cap = 0;
	FILE *f;

	if (ksyms)
		return nksyms > 0;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %59s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (nksyms == cap) {
			struct ksym *n;

			cap = cap ? cap * 2 : 16384;
			n = realloc(ksyms, cap * sizeof(*n));
			if (!n)
				break;
			ksyms = n;
		}
		ksyms[nksyms].addr = addr;
		memcpy(ksyms[nksyms].name, name, sizeof(name));
		nksyms++;
	}
	fclose(f);
	if (ksyms)
		qsort(ksyms, nksyms, sizeof(*ksyms), cmp_ksym);
	return nksyms > 0;
}

static const struct ksym *ksym_find(uint64_t ip)
{
	size_t lo = 0, hi = nksyms;

	if (ip < (1ULL << 63) || !nksyms || ip < ksyms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= ip)
			lo = mid;
		else
			hi = mid;
	}
	return &ksyms[lo];
}

static const char *ksym_name(uint64_t ip)
{
	const struct ksym *k = ksym_find(ip);

	if (k)
		return k->name;
	return ip < (1ULL << 63) ? "[user space]" : "[kernel, unknown]";
}

struct profile {
	int ncpu;
	int fd[PROF_CPUS];
	void *ring[PROF_CPUS];
};

static int prof_start(struct profile *p)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = PROF_PERIOD_NS,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.exclude_callchain_user = 1,
		.sample_max_stack = 16,
		.disabled = 1,
	};
	size_t len = (PROF_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
	int c;

	p->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (p->ncpu > PROF_CPUS)
		p->ncpu = PROF_CPUS;
	for (c = 0; c < p->ncpu; c++) {
		p->fd[c] = syscall(SYS_perf_event_open, &attr, -1, c, -1, PERF_FLAG_FD_CLOEXEC);
		if (p->fd[c] < 0)
			return -errno;
		p->ring[c] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd[c], 0);
		if (p->ring[c] == MAP_FAILED)
			return -errno;
	}
	for (c = 0; c < p->ncpu; c++)
		ioctl(p->fd[c], PERF_EVENT_IOC_ENABLE, 0);
	return 0;
}

struct hit {
	const char *name;
	uint64_t caller;	/* of a lock's slow path: a return address */
	unsigned long n;
};

/* The lock functions whose callers are worth naming. */
static bool is_lock_fn(const char *name)
{
	return strstr(name, "spin_lock") || strstr(name, "_raw_") ||
	       strstr(name, "queued_") || strstr(name, "mutex_") ||
	       strstr(name, "osq_lock");
}

static void hit_add(struct hit *hits, size_t *nh, const char *name, uint64_t caller)
{
	size_t i;

	for (i = 0; i < *nh && (hits[i].name != name || hits[i].caller != caller); i++)
		;
	if (i == *nh) {
		if (*nh == 4096)
			return;
		hits[i].name = name;
		hits[i].caller = caller;
		(*nh)++;
	}
	hits[i].n++;
}

static int cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

/* Stop, and print the @PROF_TOP most sampled functions. */
static void prof_stop(struct profile *p, const char *title)
{
	size_t psz = sysconf(_SC_PAGESIZE), dsz = PROF_PAGES * psz, nh = 0, i, shown;
	unsigned long total = 0, lost = 0, slow = 0;
	struct hit *hits = calloc(4096, sizeof(*hits));
	int c;

	for (c = 0; c < p->ncpu; c++)
		ioctl(p->fd[c], PERF_EVENT_IOC_DISABLE, 0);
	for (c = 0; hits && c < p->ncpu; c++) {
		struct perf_event_mmap_page *mp = p->ring[c];
		unsigned char *data = (unsigned char *)p->ring[c] + psz;
		uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = mp->data_tail;

		if (head - tail > dsz)
			tail = head - dsz;
		while (tail < head) {
			struct perf_event_header h;
			uint64_t rec[3];
			const char *name;
			size_t k;

			for (k = 0; k < sizeof(h); k++)
				((unsigned char *)&h)[k] = data[(tail + k) % dsz];
			if (!h.size)
				break;
			if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 24) {
				uint64_t nr, ip, j, fr;
				uint64_t caller = 0;

				fr = tail + sizeof(h);
				for (k = 0; k < 24; k++)
					((unsigned char *)rec)[k] = data[(fr + k) % dsz];
				/* rec[0]: ip; rec[1]: pid, tid; rec[2]: callchain length */
				name = (uint32_t)rec[1] == 0 ? "[idle task]" : ksym_name(rec[0]);
				nr = rec[2];
				if (nr > (h.size - sizeof(h) - 24) / 8)
					nr = 0;
				/* The first frame that is not a lock function. */
				for (j = 0; is_lock_fn(name) && j < nr && !caller; j++) {
					fr = tail + sizeof(h) + 24 + j * 8;
					for (k = 0; k < 8; k++)
						((unsigned char *)&ip)[k] = data[(fr + k) % dsz];
					if (ip >= (uint64_t)PERF_CONTEXT_MAX)
						continue;
					if (!is_lock_fn(ksym_name(ip)))
						caller = ip;
				}
				hit_add(hits, &nh, name, caller);
				total++;
			} else if (h.type == PERF_RECORD_LOST) {
				lost++;
			}
			tail += h.size;
		}
	}
	for (c = 0; c < p->ncpu; c++) {
		munmap(p->ring[c], (PROF_PAGES + 1) * psz);
		close(p->fd[c]);
	}
	if (!hits)
		return;
	qsort(hits, nh, sizeof(*hits), cmp_hit);
	printf("\nprofile, %s: %lu samples (every %d us of CPU, all CPUs)%s\n", title, total,
	       PROF_PERIOD_NS / 1000, lost ? ", some lost" : "");
	for (i = 0; i < nh && i < PROF_TOP; i++) {
		const struct ksym *k = ksym_find(hits[i].caller);

		printf("  %5.1f%%  %s", 100.0 * hits[i].n / (total ? total : 1), hits[i].name);
		if (k)
			printf("  <- %s+0x%llx", k->name,
			       (unsigned long long)(hits[i].caller - k->addr));
		printf("\n");
	}
	/* Spinning or sleeping on a lock, by caller (hits[] is sorted). */
	for (i = 0; i < nh; i++)
		if (strstr(hits[i].name, "slowpath") || strstr(hits[i].name, "osq_lock"))
			slow += hits[i].n;
	printf("  lock slow paths: %.1f%% of samples%s\n", 100.0 * slow / (total ? total : 1),
	       slow ? ", by caller:" : "");
	for (i = 0, shown = 0; slow && i < nh && shown < PROF_TOP; i++) {
		const struct ksym *k = ksym_find(hits[i].caller);

		if (!strstr(hits[i].name, "slowpath") && !strstr(hits[i].name, "osq_lock"))
			continue;
		shown++;
		printf("    %5.1f%%  %s", 100.0 * hits[i].n / total, k ? k->name : "?");
		if (k)
			printf("+0x%llx", (unsigned long long)(hits[i].caller - k->addr));
		printf("\n");
	}
	free(hits);
}

/* Profile the sync call (-p bytes) of each side alone, for -t seconds. */
static int profile_sides(int round_first)
{
	struct mspec m = { .mode = M_SYNC_LAT, .npairs = 1, .size = opt.profile_size };
	char title[64];
	double rate[2];
	struct profile p;
	int ch, k, ret;

	if (!load_kallsyms())
		printf("\nprofile: no kernel symbols (kptr_restrict?): addresses unresolved\n");
	for (ch = 0; ch < 2; ch++) {
		k = (ch + round_first) % 2;
		m.first = k;
		settle_cells();
		memset(&p, 0, sizeof(p));
		ret = prof_start(&p);
		if (ret) {
			printf("\nprofile: perf_event_open: %s; no profile\n", strerror(-ret));
			return 0;
		}
		ret = measure(&m, rate, NULL, NULL);
		snprintf(title, sizeof(title), "%s, %zu-byte sync calls, 1 pair",
			 k == CASK ? "cask" : "upstream", opt.profile_size);
		prof_stop(&p, title);
		if (ret)
			return ret;
		printf("  (%.0f calls/s)\n", rate[k]);
	}
	return 0;
}

/*
 * Where the context lock is contended: each side alone, sync calls of
 * SMALL_PAYLOAD bytes by 4 and 16 pairs in one context, profiled as
 * above (the callers of lock slow paths are named).
 */
static int profile_ctx(int round_first)
{
	static const int counts[] = { 4, 16 };
	struct mspec m = { .mode = M_SYNC_TPUT, .size = SMALL_PAYLOAD, .shared = true };
	char title[80];
	double rate[2];
	struct profile p;
	size_t c;
	int ch, k, ret;

	for (c = 0; c < ARRAY_SIZE(counts); c++) {
		m.npairs = counts[c];
		for (ch = 0; ch < 2; ch++) {
			k = (ch + round_first) % 2;
			m.first = k;
			settle_cells();
			memset(&p, 0, sizeof(p));
			ret = prof_start(&p);
			if (ret) {
				printf("\nprofile: perf_event_open: %s; no profile\n",
				       strerror(-ret));
				return 0;
			}
			ret = measure(&m, rate, NULL, NULL);
			snprintf(title, sizeof(title),
				 "%s, %d-byte sync calls, %d pairs in one context",
				 k == CASK ? "cask" : "upstream", SMALL_PAYLOAD, counts[c]);
			prof_stop(&p, title);
			if (ret)
				return ret;
			printf("  (%.0f calls/s)\n", rate[k]);
		}
	}
	return 0;
}

/* ---- setup ----------------------------------------------------------- */

static bool have_binderfs(void)
{
	char line[256], *name;
	bool found = false;
	FILE *f = fopen("/proc/filesystems", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		name = strrchr(line, '\t');
		name = name ? name + 1 : line;
		found = strcmp(name, "binder") == 0;
	}
	fclose(f);
	return found;
}

static int setup_upstream(void)
{
	char path[PATH_MAX];
	int fd;

	if (!have_binderfs()) {
		fd = open(UPSTREAM_KO, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || (syscall(SYS_finit_module, fd, "", 0) && errno != EEXIST)) {
			printf("bench skip: cannot load %s: %s\n", UPSTREAM_KO, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	snprintf(mnt, sizeof(mnt), "/tmp/binder-bench-XXXXXX");
	if (!mkdtemp(mnt)) {
		printf("bench skip: mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	if (mount("binder", mnt, "binder", 0, NULL)) {
		printf("bench skip: mount binderfs: %s\n", strerror(errno));
		rmdir(mnt);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/binder-control", mnt);
	ctl_fd = open(path, O_RDWR | O_CLOEXEC);
	if (ctl_fd < 0) {
		printf("bench skip: open %s: %s\n", path, strerror(errno));
		umount2(mnt, MNT_DETACH);
		rmdir(mnt);
		return -1;
	}
	return 0;
}

static void teardown_upstream(void)
{
	close(ctl_fd);
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
}

/* ---- results --------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

struct latrounds {
	double mean[MAX_ROUNDS], p50[MAX_ROUNDS], p99[MAX_ROUNDS];
};

static void lat_put(struct latrounds *lr, int r, const struct lat *l)
{
	lr->mean[r] = l->mean;
	lr->p50[r] = l->p50;
	lr->p99[r] = l->p99;
}

static struct lat lat_median(const struct latrounds *lr, int n)
{
	struct lat l = {
		.mean = median(lr->mean, n),
		.p50 = median(lr->p50, n),
		.p99 = median(lr->p99, n),
	};

	return l;
}

static const char *verdict(double ratio, double target, bool at_most)
{
	return (at_most ? ratio <= target : ratio >= target) ? "ok" : "MISS";
}

static struct latrounds lat_r[NPAYLOADS][2], idle_r[2][2], futex_r;
/* Per round, with/without idle cells: mean of cask over mean of upstream. */
static double idle_rel[2][MAX_ROUNDS];
static double oneway_r[2][MAX_ROUNDS], pairs_r[NPAIRCOUNTS][2][MAX_ROUNDS];
/* One context: sync pairs, and CTX_SENDERS one-way senders to one node. */
static double ctx_r[NCTXCOUNTS][2][MAX_ROUNDS], ctx_oneway_r[2][MAX_ROUNDS];
static int idle_cells[2][MAX_ROUNDS];
static struct diag diag_r[NDIAG][MAX_ROUNDS][2];

/* Medians over the rounds of each diagnostic, for side @k of row @d. */
static struct diag diag_median(int d, int k, int rounds)
{
	double v[7][MAX_ROUNDS];
	struct diag out;
	int r;

	for (r = 0; r < rounds; r++) {
		const struct diag *g = &diag_r[d][r][k];

		v[0][r] = g->calls;
		v[1][r] = g->c_cpu_us;
		v[2][r] = g->s_cpu_us;
		v[3][r] = g->c_flt;
		v[4][r] = g->s_flt;
		v[5][r] = g->c_vcsw;
		v[6][r] = g->c_ivcsw;
	}
	out.calls = median(v[0], rounds);
	out.c_cpu_us = median(v[1], rounds);
	out.s_cpu_us = median(v[2], rounds);
	out.c_flt = median(v[3], rounds);
	out.s_flt = median(v[4], rounds);
	out.c_vcsw = median(v[5], rounds);
	out.c_ivcsw = median(v[6], rounds);
	return out;
}

static void print_diag(int rounds)
{
	struct diag g;
	char label[32];
	int d, k;

	printf("\nper call (medians over rounds): CPU time of client and server (us),"
	       " minor faults,\nclient voluntary/involuntary context switches;"
	       " calls = calls of the side per measurement\n");
	printf("%-16s %-8s | %8s | %8s %8s | %6s %6s | %6s %6s\n", "measurement", "side",
	       "calls", "cli cpu", "srv cpu", "cli pf", "srv pf", "vcsw", "ivcsw");
	for (d = 0; d < NDIAG; d++) {
		if (d < D_ONEWAY)
			snprintf(label, sizeof(label), "latency %zu", payloads[d]);
		else if (d == D_ONEWAY)
			snprintf(label, sizeof(label), "one-way");
		else if (d < D_CTX)
			snprintf(label, sizeof(label), "sync %d pairs", pair_counts[d - D_PAIRS]);
		else if (d < D_CTX_ONEWAY)
			snprintf(label, sizeof(label), "1ctx sync %d", ctx_counts[d - D_CTX]);
		else
			snprintf(label, sizeof(label), "1ctx one-way %d", CTX_SENDERS);
		for (k = 0; k < 2; k++) {
			g = diag_median(d, k, rounds);
			printf("%-16s %-8s | %8.0f | %8.1f %8.1f | %6.3f %6.3f | %6.2f %6.3f\n",
			       k ? "" : label, k ? "upstream" : "cask", g.calls, g.c_cpu_us,
			       g.s_cpu_us, g.c_flt, g.s_flt, g.c_vcsw, g.c_ivcsw);
		}
	}
}

static void print_table(int rounds)
{
	struct lat c, u, f;
	double rc, ru;
	size_t p;

	printf("\nround-trip latency of a synchronous call (ns), reply of the same size\n");
	printf("%7s | %9s %9s %9s | %9s %9s %9s | %-17s | %-17s | %s\n", "payload",
	       "cask mean", "p50", "p99", "upst mean", "p50", "p99", "mean ratio", "p99 ratio",
	       "p50 ratio");
	for (p = 0; p < NPAYLOADS; p++) {
		c = lat_median(&lat_r[p][CASK], rounds);
		u = lat_median(&lat_r[p][UPSTREAM], rounds);
		printf("%7zu | %9.0f %9.0f %9.0f | %9.0f %9.0f %9.0f | %5.3f <=1.05 %-4s |"
		       " %5.3f <=1.10 %-4s | %5.3f\n", payloads[p], c.mean, c.p50, c.p99, u.mean,
		       u.p50, u.p99, c.mean / u.mean, verdict(c.mean / u.mean, 1.05, true),
		       c.p99 / u.p99, verdict(c.p99 / u.p99, 1.10, true), c.p50 / u.p50);
	}
	f = lat_median(&futex_r, rounds);
	printf("%7s | %9.0f %9.0f %9.0f | (floor: futex ping-pong between two processes)\n",
	       "futex", f.mean, f.p50, f.p99);

	printf("\nthroughput (calls/s, %d-byte payload)\n", SMALL_PAYLOAD);
	printf("%-22s | %10s | %10s | %-17s\n", "", "cask", "upstream", "ratio");
	rc = median(oneway_r[CASK], rounds);
	ru = median(oneway_r[UPSTREAM], rounds);
	printf("%-22s | %10.0f | %10.0f | %5.3f >=0.95 %-4s\n", "one-way, 1 pair", rc, ru,
	       rc / ru, verdict(rc / ru, 0.95, false));
	for (p = 0; p < NPAIRCOUNTS; p++) {
		char label[32];

		rc = median(pairs_r[p][CASK], rounds);
		ru = median(pairs_r[p][UPSTREAM], rounds);
		snprintf(label, sizeof(label), "sync, %d pair%s", pair_counts[p],
			 pair_counts[p] > 1 ? "s" : "");
		printf("%-22s | %10.0f | %10.0f | %5.3f >=0.95 %-4s\n", label, rc, ru, rc / ru,
		       verdict(rc / ru, 0.95, false));
	}
	printf("one context for all (cask: one cell's /dev/binder; upstream: one binderfs"
	       " device);\nsync: each pair's server published through a registry\n");
	for (p = 0; p < NCTXCOUNTS; p++) {
		char label[32];

		rc = median(ctx_r[p][CASK], rounds);
		ru = median(ctx_r[p][UPSTREAM], rounds);
		snprintf(label, sizeof(label), "1 ctx: sync, %d pair%s", ctx_counts[p],
			 ctx_counts[p] > 1 ? "s" : "");
		printf("%-22s | %10.0f | %10.0f | %5.3f >=0.95 %-4s\n", label, rc, ru, rc / ru,
		       verdict(rc / ru, 0.95, false));
	}
	{
		char label[32];

		rc = median(ctx_oneway_r[CASK], rounds);
		ru = median(ctx_oneway_r[UPSTREAM], rounds);
		snprintf(label, sizeof(label), "1 ctx: one-way, %d->1", CTX_SENDERS);
		printf("%-22s | %10.0f | %10.0f | %5.3f >=0.95 %-4s\n", label, rc, ru, rc / ru,
		       verdict(rc / ru, 0.95, false));
	}
}

static void print_idle_table(int rounds)
{
	struct lat c, u;
	double ratio;
	int p;

	c = lat_median(&idle_r[1][CASK], rounds);
	u = lat_median(&idle_r[0][CASK], rounds);
	printf("\ncask %d-byte latency (ns) with %d idle cells vs without (upstream"
	       " interleaved as a control)\n", SMALL_PAYLOAD, opt.idle);
	printf("%-22s | %9s %9s %9s | cells seen (min..max over rounds)\n", "", "mean", "p50",
	       "p99");
	for (p = 0; p < 2; p++) {
		const struct lat *l = p ? &c : &u;
		int lo = INT_MAX, hi = INT_MIN, r;

		for (r = 0; r < rounds; r++) {
			lo = idle_cells[p][r] < lo ? idle_cells[p][r] : lo;
			hi = idle_cells[p][r] > hi ? idle_cells[p][r] : hi;
		}
		printf("%-22s | %9.0f %9.0f %9.0f | %d..%d\n",
		       p ? "idle cells" : "no idle cells", l->mean, l->p50, l->p99, lo, hi);
	}
	/*
	 * No target here: the conditions run one after the other, so the
	 * host's drift between them is in this ratio; the target is on the
	 * drift-corrected one below.
	 */
	printf("%-22s | mean %5.3f; p50 %5.3f; p99 %5.3f (host drift included)\n",
	       "ratio idle/none", c.mean / u.mean, c.p50 / u.p50, c.p99 / u.p99);
	c = lat_median(&idle_r[1][UPSTREAM], rounds);
	u = lat_median(&idle_r[0][UPSTREAM], rounds);
	printf("%-22s | mean %5.3f; p50 %5.3f; p99 %5.3f (cask cells cannot matter here:"
	       " drift)\n", "upstream, same runs", c.mean / u.mean, c.p50 / u.p50,
	       c.p99 / u.p99);
	ratio = median(idle_rel[1], rounds) / median(idle_rel[0], rounds);
	printf("%-22s | %5.3f (target 0.98..1.02 %s): (cask/upstream with) / (cask/upstream"
	       " without)\n", "drift-corrected mean", ratio,
	       ratio >= 0.98 && ratio <= 1.02 ? "ok" : "MISS");
	/* The rounds behind it: how far one round's drift reaches. */
	for (p = 1; p >= 0; p--) {
		int r;

		printf("%-22s |", p ? "cask/upstream, with" : "cask/upstream, none");
		for (r = 0; r < rounds; r++)
			printf(" %5.3f", idle_rel[p][r]);
		printf("\n");
	}
}

static void ratio_line(const char *what, double ratio, double target, bool at_most)
{
	printf("bench ratio binder %s = %.3f (target %s %.2f)\n", what, ratio,
	       at_most ? "<=" : ">=", target);
}

/* Every ratio of the tables with a target again, one line each, as the other benches. */
static void print_ratios(int rounds)
{
	struct lat c, u;
	char what[64];
	size_t p;

	printf("\n");
	for (p = 0; p < NPAYLOADS; p++) {
		c = lat_median(&lat_r[p][CASK], rounds);
		u = lat_median(&lat_r[p][UPSTREAM], rounds);
		snprintf(what, sizeof(what), "latency %zu B mean", payloads[p]);
		ratio_line(what, c.mean / u.mean, 1.05, true);
		snprintf(what, sizeof(what), "latency %zu B p99", payloads[p]);
		ratio_line(what, c.p99 / u.p99, 1.10, true);
	}
	ratio_line("one-way 1 pair", median(oneway_r[CASK], rounds) /
		   median(oneway_r[UPSTREAM], rounds), 0.95, false);
	for (p = 0; p < NPAIRCOUNTS; p++) {
		snprintf(what, sizeof(what), "sync %d pair%s, own contexts", pair_counts[p],
			 pair_counts[p] > 1 ? "s" : "");
		ratio_line(what, median(pairs_r[p][CASK], rounds) /
			   median(pairs_r[p][UPSTREAM], rounds), 0.95, false);
	}
	for (p = 0; p < NCTXCOUNTS; p++) {
		snprintf(what, sizeof(what), "sync %d pair%s, one context", ctx_counts[p],
			 ctx_counts[p] > 1 ? "s" : "");
		ratio_line(what, median(ctx_r[p][CASK], rounds) /
			   median(ctx_r[p][UPSTREAM], rounds), 0.95, false);
	}
	snprintf(what, sizeof(what), "one-way %d senders to 1 node, one context", CTX_SENDERS);
	ratio_line(what, median(ctx_oneway_r[CASK], rounds) /
		   median(ctx_oneway_r[UPSTREAM], rounds), 0.95, false);
}

static void print_idle_ratios(int rounds)
{
	ratio_line("idle cells drift-corrected",
		   median(idle_rel[1], rounds) / median(idle_rel[0], rounds), 1.02, true);
}

/* Round @r of everything but the idle cells. */
static int measure_round(int r)
{
	struct mspec m = { .both = true, .first = r % 2 ? UPSTREAM : CASK };
	double rate[2];
	struct lat l2[2], l;
	size_t p;
	int ch;

	m.mode = M_SYNC_LAT;
	m.npairs = 1;
	for (p = 0; p < NPAYLOADS; p++) {
		m.size = payloads[p];
		settle_cells();
		if (measure(&m, rate, l2, diag_r[p][r]))
			return -1;
		for (ch = 0; ch < 2; ch++)
			lat_put(&lat_r[p][ch], r, &l2[ch]);
	}
	m.mode = M_ONEWAY;
	m.size = SMALL_PAYLOAD;
	settle_cells();
	if (measure(&m, rate, NULL, diag_r[D_ONEWAY][r]))
		return -1;
	for (ch = 0; ch < 2; ch++)
		oneway_r[ch][r] = rate[ch];
	m.mode = M_SYNC_TPUT;
	for (p = 0; p < NPAIRCOUNTS; p++) {
		m.npairs = pair_counts[p];
		settle_cells();
		if (measure(&m, rate, NULL, diag_r[D_PAIRS + p][r]))
			return -1;
		for (ch = 0; ch < 2; ch++)
			pairs_r[p][ch][r] = rate[ch];
	}
	m.shared = true;
	for (p = 0; p < NCTXCOUNTS; p++) {
		m.npairs = ctx_counts[p];
		settle_cells();
		if (measure(&m, rate, NULL, diag_r[D_CTX + p][r]))
			return -1;
		for (ch = 0; ch < 2; ch++)
			ctx_r[p][ch][r] = rate[ch];
	}
	m.mode = M_ONEWAY;
	m.npairs = CTX_SENDERS;
	settle_cells();
	if (measure(&m, rate, NULL, diag_r[D_CTX_ONEWAY][r]))
		return -1;
	for (ch = 0; ch < 2; ch++)
		ctx_oneway_r[ch][r] = rate[ch];
	m.shared = false;
	if (measure_futex(&l))
		return -1;
	lat_put(&futex_r, r, &l);
	return 0;
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: binder_bench [-r ROUNDS] [-t SECS] [-T SECS] [-s SECS] [-c IDLE_CELLS] [-i] [-p BYTES] [-P]\n"
		"\n"
		"Compares cask_binder (/dev/binder, a fresh IPC namespace per pair)\n"
		"with the kernel's binder (binder_linux.ko, a fresh binderfs device\n"
		"per pair): sync latency by payload, one-way and multi-pair\n"
		"throughput, the same pairs all in one context, one-way calls of\n"
		"4 senders to one node, and cask latency with idle cells around.\n"
		"\n"
		"  -r ROUNDS      interleaved rounds, medians over them (default 7, at most %d)\n"
		"  -t SECS        time per side in each measurement (default 0.3)\n"
		"  -T SECS        time per side in each idle-cells measurement (default 3)\n"
		"  -s SECS        length of one slice: the sides alternate (default 0.02)\n"
		"  -c IDLE_CELLS  idle cells for the idle-cells latency (default 64, 0: skip)\n"
		"  -i             the idle-cells latency alone (no other measurement, no profile)\n"
		"  -p BYTES       payload of the profiled calls (default 64)\n"
		"  -P             no profile (cpu-clock samples of each side alone) at the end\n",
		MAX_ROUNDS);
}

int main(int argc, char **argv)
{
	pid_t idle_pids[MAX_IDLE];
	int r, ch, ret = 1;
	long per_user, max_cells = -1;
	bool idle_ok;
	uint64_t t_start = now_ns();

	while ((ch = getopt(argc, argv, "r:t:T:s:c:ip:Ph")) != -1) {
		switch (ch) {
		case 'r':
			opt.rounds = atoi(optarg);
			if (opt.rounds < 1 || opt.rounds > MAX_ROUNDS) {
				fprintf(stderr, "binder_bench: -r wants 1 to %d\n", MAX_ROUNDS);
				return 2;
			}
			break;
		case 't':
			opt.seconds = atof(optarg);
			if (!(opt.seconds > 0 && opt.seconds <= 60)) {
				fprintf(stderr, "binder_bench: -t wants 0 < SECS <= 60\n");
				return 2;
			}
			break;
		case 'T':
			opt.idle_seconds = atof(optarg);
			if (!(opt.idle_seconds > 0 && opt.idle_seconds <= 60)) {
				fprintf(stderr, "binder_bench: -T wants 0 < SECS <= 60\n");
				return 2;
			}
			break;
		case 's':
			opt.slice = atof(optarg);
			if (!(opt.slice >= 0.001 && opt.slice <= 10)) {
				fprintf(stderr, "binder_bench: -s wants 0.001 <= SECS <= 10\n");
				return 2;
			}
			break;
		case 'c':
			opt.idle = atoi(optarg);
			if (opt.idle < 0 || opt.idle > MAX_IDLE) {
				fprintf(stderr, "binder_bench: -c wants 0 to %d\n", MAX_IDLE);
				return 2;
			}
			break;
		case 'i':
			opt.idle_only = true;
			break;
		case 'p':
			opt.profile_size = strtoul(optarg, NULL, 0);
			if (opt.profile_size > MAX_PAYLOAD) {
				fprintf(stderr, "binder_bench: -p wants 0 to %d\n", MAX_PAYLOAD);
				return 2;
			}
			break;
		case 'P':
			opt.profile = false;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		print_usage(stderr);
		return 2;
	}
	if (opt.idle_only && !opt.idle) {
		fprintf(stderr, "binder_bench: -i wants idle cells (-c above 0)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access(CASK_DEV, R_OK | W_OK)) {
		printf("bench skip: %s: %s\n", CASK_DEV, strerror(errno));
		return EXIT_SKIP;
	}
	if (setup_upstream())
		return EXIT_SKIP;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("binder_bench: mmap");
		return 1;
	}
	baseline = count_cells();
	idle_ok = opt.idle > 0 && baseline >= 0;
	/*
	 * All our cells count against root's share of auto cells and
	 * against all cells: make room for the idle ones and the measuring
	 * pair's (restored at the end).
	 */
	per_user = read_long(PER_USER);
	if (idle_ok && per_user >= 0 && per_user < opt.idle + 8 &&
	    write_long(PER_USER, opt.idle + 8)) {
		printf("bench warning: cannot raise %s: %s; no idle-cells run\n", PER_USER,
		       strerror(errno));
		idle_ok = false;
	}
	max_cells = read_long(MAX_CELLS);
	if (idle_ok && max_cells >= 0 && max_cells < baseline + opt.idle + 8 &&
	    write_long(MAX_CELLS, baseline + opt.idle + 8)) {
		printf("bench warning: cannot raise %s: %s; no idle-cells run\n", MAX_CELLS,
		       strerror(errno));
		idle_ok = false;
	}
	printf("bench config: rounds=%d seconds=%.2f idle_seconds=%.2f slice=%.3f map=%d"
	       " idle_cells=%d cells_at_start=%d upstream=%s\n", opt.rounds, opt.seconds,
	       opt.idle_seconds, opt.slice, MAP_BYTES, opt.idle, baseline, mnt);

	for (r = 0; r < opt.rounds; r++) {
		/* Who has the first slice: alternates between rounds. */
		struct mspec m = { .both = true, .first = r % 2 ? UPSTREAM : CASK };
		double rate[2];
		struct lat l2[2];

		if (!opt.idle_only && measure_round(r))
			goto fail;
		m.mode = M_SYNC_LAT;
		m.size = SMALL_PAYLOAD;
		m.npairs = 1;
		m.seconds = opt.idle_seconds;
		for (ch = 0; idle_ok && ch < 2; ch++) {
			int with = (ch + r) % 2;

			settle_cells();
			if (with && spawn_idle(opt.idle, idle_pids))
				goto fail;
			idle_cells[with][r] = count_cells();
			if (measure(&m, rate, l2, NULL))
				goto fail;
			lat_put(&idle_r[with][CASK], r, &l2[CASK]);
			lat_put(&idle_r[with][UPSTREAM], r, &l2[UPSTREAM]);
			idle_rel[with][r] = l2[CASK].mean / l2[UPSTREAM].mean;
			if (with)
				reap_idle(opt.idle, idle_pids);
		}
		printf("bench round %d/%d done at %.1f s\n", r + 1, opt.rounds,
		       (now_ns() - t_start) / 1e9);
	}
	printf("\n== binder_bench: medians over %d rounds; in each, cask and upstream alternate"
	       " in %.0f ms slices, %.2f s each; ratios cask/upstream ==\n", opt.rounds,
	       opt.slice * 1e3, opt.seconds);
	if (!opt.idle_only)
		print_table(opt.rounds);
	if (idle_ok)
		print_idle_table(opt.rounds);
	if (!opt.idle_only)
		print_ratios(opt.rounds);
	if (idle_ok)
		print_idle_ratios(opt.rounds);
	if (!opt.idle_only)
		print_diag(opt.rounds);
	if (opt.profile && !opt.idle_only &&
	    (profile_sides(opt.rounds % 2) || profile_ctx(opt.rounds % 2)))
		goto fail;
	printf("\nbench total %.1f s (%.1f s of it waiting for dead cells to go)\n",
	       (now_ns() - t_start) / 1e9, settle_ns / 1e9);
	ret = 0;
out:
	if (per_user >= 0 && read_long(PER_USER) != per_user)
		write_long(PER_USER, per_user);
	if (max_cells >= 0 && read_long(MAX_CELLS) != max_cells)
		write_long(MAX_CELLS, max_cells);
	teardown_upstream();
	return ret;
fail:
	fprintf(stderr, "binder_bench: measurement failed in round %d\n", r + 1);
	goto out;
}
