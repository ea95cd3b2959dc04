/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask_binder internals, shared by its files and its KUnit suites.
 *
 * One binder world ("context") exists per (cell, device). Two spinlocks
 * protect a context:
 *
 * - ctx->lock, the context's lock: its processes, nodes, references,
 *   transactions (their links and stacks) and everything that crosses
 *   processes. Marked [ctx].
 * - proc->inner_lock, one per process: the work lists of the process and
 *   its threads (an item's links while it is queued on one of them), the
 *   threads waiting for work, what decides whether a thread may sleep, and
 *   the looper counts. Marked [inner]. A reader takes only its own
 *   process's inner lock to look for work, sleep, wake and take a
 *   transaction off its list, so that the threads of one container's many
 *   processes do not all wait on ctx->lock (Documentation/binder.rst,
 *   "Same-context scale").
 *
 * Lock order: ctx->lock, then one proc->inner_lock; never two inner locks
 * at once, never ctx->lock under an inner lock. Fields marked [ctx+inner]
 * are written with both held and read with either. Functions that need
 * ctx->lock end in _locked, those that need the inner lock in _ilocked,
 * and each asserts it where it can reach the lock: not through a
 * transaction, which may outlive both of its processes, nor through a
 * dead node (node->proc NULL: its owner is gone) or a bare list; their
 * comments say so. A _locked function may take an inner lock itself:
 * none is called with one held. Work is queued, its reader woken and a
 * thread's transaction stack changed through work.c's helpers (_locked:
 * they take the inner lock inside ctx->lock; _ilocked: called with it).
 * main.c's top comment lists the files.
 * Contexts never share objects, so no lock is ever taken for two contexts
 * and a hostile cell can contend only on its own.
 */
#ifndef _CASK_BINDER_H
#define _CASK_BINDER_H

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <uapi/linux/android/binder.h>

#include "alloc.h"

struct cask_cell;
struct cred;
struct dentry;
struct file;
struct ipc_namespace;
struct pid;
struct task_struct;

#define CBINDER_MAX_DEVICES	8
/* Default per-cell bound of binderfs devices (max_binderfs_devices). */
#define CBINDER_FS_DEFAULT_MAX_DEVICES	4096
/* ctx->index of a binderfs context that is not one of bc->ctx[]. */
#define CBINDER_FS_INDEX	UINT_MAX
/* Items torn down per hold of ctx->lock. */
#define CBINDER_RELEASE_BATCH	64
/* Cleared freeze notices of a process not yet told as cleared (DONE). */
#define CBINDER_MAX_FREEZE_CLEARING	1024

/* What ctx->lock protects is marked [ctx], proc->inner_lock [inner]. */

enum cbinder_work_type {
	CBINDER_WORK_TRANSACTION = 1,
	CBINDER_WORK_TRANSACTION_COMPLETE,
	CBINDER_WORK_TRANSACTION_ONEWAY_SPAM_SUSPECT,
	CBINDER_WORK_TRANSACTION_PENDING,
	CBINDER_WORK_RETURN_ERROR,
	CBINDER_WORK_NODE,
	CBINDER_WORK_DEAD_BINDER,
	CBINDER_WORK_DEAD_BINDER_AND_CLEAR,
	CBINDER_WORK_CLEAR_DEATH_NOTIFICATION,
	CBINDER_WORK_FROZEN_BINDER,
	CBINDER_WORK_CLEAR_FREEZE_NOTIFICATION,
};

/**
 * struct cbinder_work - an item of a todo list
 * @entry: in a thread's or process's todo list [inner], or in another
 *	list [ctx]; empty when not queued. Unlinked from a todo list only
 *	with the inner lock held, and, except for a transaction or a
 *	TRANSACTION_COMPLETE, with ctx->lock too (list_empty() of such an
 *	item under ctx->lock is exact)
 * @type: what the item is
 */
struct cbinder_work {
	struct list_head entry;
	enum cbinder_work_type type;
};

/**
 * struct cbinder_error - an error return queued to a thread
 * @work: CBINDER_WORK_RETURN_ERROR
 * @cmd: BR_ code to deliver, BR_OK when none [ctx]
 */
struct cbinder_error {
	struct cbinder_work work;
	u32 cmd;
};

struct cbinder_cell;

/* Entries of each transaction log of a cell, as upstream's. */
#define CBINDER_LOG_SIZE	32
#define CBINDER_LOG_CONTEXT	32

/**
 * struct cbinder_log_entry - one transaction, for binder_logs/
 * @debug_id: the transaction's
 * @call_type: 0 call, 1 one-way, 2 reply (upstream's numbers)
 * @from_proc: sender's thread group (global pid)
 * @from_thread: sending thread (global)
 * @to_proc: target's thread group, 0 if not found (global)
 * @to_thread: target thread, 0 if none chosen (global)
 * @to_node: target node's debug id, 0 if none
 * @handle: the handle called
 * @data_size: data bytes
 * @offsets_size: offsets bytes
 * @return_error: BR_ code of the outcome (BR_OK)
 * @return_error_param: its errno
 * @context: the context's name, cut
 */
struct cbinder_log_entry {
	int debug_id;
	int call_type;
	pid_t from_proc;
	pid_t from_thread;
	pid_t to_proc;
	pid_t to_thread;
	int to_node;
	u32 handle;
	u64 data_size;
	u64 offsets_size;
	u32 return_error;
	int return_error_param;
	char context[CBINDER_LOG_CONTEXT];
};

/* cbinder_log_slot.seq of a slot a writer is filling. */
#define CBINDER_LOG_BUSY	ULONG_MAX

/**
 * struct cbinder_log_slot - one place of a transaction log's ring
 * @seq: the number of the entry it holds (its writer's claim on
 *	cbinder_txn_log.head), 0 before the first, CBINDER_LOG_BUSY while a
 *	writer fills it. Taken with a cmpxchg, published with a release.
 * @entry: the entry; written only by the writer that set CBINDER_LOG_BUSY,
 *	read (racily) only under @seq's check (log.c)
 */
struct cbinder_log_slot {
	unsigned long seq;
	struct cbinder_log_entry entry;
};

/**
 * struct cbinder_txn_log - the last transactions of a cell, without a lock
 * @head: the number of the last entry claimed (entry N goes to slot
 *	N % CBINDER_LOG_SIZE); zeroed memory is an empty log
 * @ring: the slots
 */
struct cbinder_txn_log {
	atomic_long_t head;
	struct cbinder_log_slot ring[CBINDER_LOG_SIZE];
};

/**
 * struct cbinder_context - the binder world of one cell on one device
 * @lock: protects every object of the context (see the top of the file)
 * @bc: the cell's binder state, which embeds this context or (binderfs)
 *	whose @fs_contexts list holds it
 * @index: device index; CBINDER_FS_INDEX for a context of its own made by
 *	binderfs
 * @name: the device's name, for logs
 * @refcount: of a binderfs context of its own: its device inode and every
 *	process in it; unused (0) in the contexts embedded in the cell
 * @fs_entry: in bc->fs_contexts [bc->fs_lock]
 * @mgr_node: the context manager's node, or NULL [ctx]
 * @mgr_uid: euid of the first context manager, INVALID_UID before [ctx]
 * @unlinked: the cell was unlinked: no transaction is queued and no thread
 *	sleeps any more [ctx]; a thread about to sleep reads it under its
 *	inner lock (cbinder_proc_drain() takes that lock to wake it)
 * @procs: open processes [ctx]
 * @dead_nodes: nodes whose process has gone but that references keep [ctx]
 */
struct cbinder_context {
	spinlock_t lock;	/* the context's one lock, see above */
	struct cbinder_cell *bc;
	unsigned int index;
	const char *name;
	refcount_t refcount;
	struct list_head fs_entry;
	struct cbinder_node *mgr_node;
	kuid_t mgr_uid;
	bool unlinked;
	struct list_head procs;
	struct list_head dead_nodes;
};

/**
 * struct cbinder_cell - cask_binder's state of one cell
 * @cell: the cell (no reference: each process holds one)
 * @ctx: one context per device
 * @procs: open binder files of the cell
 * @threads: their threads
 * @nodes: live nodes
 * @refs: references
 * @transactions: transactions in flight
 * @transactions_total: transactions ever sent
 * @failed_transactions: transactions that failed
 * @buffer_bytes: bytes of receive buffers allocated
 * @max_buffer_bytes: limit of @buffer_bytes, LONG_MAX = none
 * @max_procs: limit of @procs, LONG_MAX = none
 * @nice_floor: binder never raises a thread of the cell above this nice
 * @debug_id: last id given to a node or transaction of the cell
 * @stats_bc: BC_ commands written, by number, for debugfs
 * @stats_br: BR_ returns read, by number, for debugfs
 * @debugfs: the cell's directory in debugfs, or an error pointer
 * @fs_lock: protects @fs_contexts and @fs_unlinked
 * @fs_contexts: binderfs contexts of the cell's mounts that are not one of
 *	@ctx (binderfs.c) [fs_lock]
 * @fs_unlinked: the cell was unlinked: binderfs contexts are made
 *	unlinked [fs_lock]
 * @fs_devices: binderfs devices of the cell's mounts
 * @max_fs_devices: limit of @fs_devices
 * @txn_log: the last transactions (binder_logs/transaction_log)
 * @failed_log: the last failed ones (failed_transaction_log)
 */
struct cbinder_cell {
	struct cask_cell *cell;
	struct cbinder_context ctx[CBINDER_MAX_DEVICES];
	atomic_long_t procs;
	atomic_long_t threads;
	atomic_long_t nodes;
	atomic_long_t refs;
	atomic_long_t transactions;
	atomic_long_t transactions_total;
	atomic_long_t failed_transactions;
	atomic_long_t buffer_bytes;
	long max_buffer_bytes;
	long max_procs;
	int nice_floor;
	atomic_t debug_id;
	atomic_long_t stats_bc[_IOC_NR(BC_FREEZE_NOTIFICATION_DONE) + 1];
	atomic_long_t stats_br[_IOC_NR(BR_CLEAR_FREEZE_NOTIFICATION_DONE) + 1];
	struct dentry *debugfs;
	struct mutex fs_lock;	/* see above */
	struct list_head fs_contexts;
	bool fs_unlinked;
	atomic_long_t fs_devices;
	long max_fs_devices;
	struct cbinder_txn_log txn_log;
	struct cbinder_txn_log failed_log;
};

/**
 * struct cbinder_proc - one open binder file
 * @ctx: its context
 * @cell: the opener's cell (reference held)
 * @ipc_ns: the cell's IPC namespace; only its tasks may use the file
 * @entry: in ctx->procs [ctx]
 * @refcount: the file and every temporary user
 * @pid: opener's thread group (reference held)
 * @tsk: opener's thread group leader (reference held), for sender_euid
 * @cred: opener's credentials (reference held)
 * @inner_lock: the process's work lists, see the top of the file
 * @threads: threads by pid [ctx+inner]
 * @nodes: nodes by ptr [ctx]
 * @refs_by_desc: references by handle [ctx]
 * @refs_by_node: references by node address [ctx]
 * @todo: work for any thread [inner]
 * @waiting_threads: threads sleeping for process work [inner]
 * @delivered_death: death notices delivered, awaiting DEAD_BINDER_DONE [ctx]
 * @delivered_freeze: freeze notices delivered, awaiting
 *	FREEZE_NOTIFICATION_DONE [ctx]
 * @freeze_clearing: freeze notices cleared, not yet told so [ctx]
 * @desc_hint: every handle from 1 below it is in use [ctx]
 * @max_threads: from SET_MAX_THREADS [inner]
 * @requested_threads: BR_SPAWN_LOOPER sent, not yet registered [inner]
 * @requested_threads_started: threads registered after a request [inner]
 * @default_priority: opener's nice at open
 * @oneway_spam_detection: BINDER_ENABLE_ONEWAY_SPAM_DETECTION; written
 *	under ctx->lock, read once without a lock by the reader
 * @is_frozen: BINDER_FREEZE: new sync calls fail with BR_FROZEN_REPLY [ctx]
 * @notified_frozen: the state freeze notices give: frozen only once a
 *	BINDER_FREEZE completed, until thawed [ctx]
 * @sync_recv: a sync call came while frozen [ctx]
 * @async_recv: a one-way call came while frozen [ctx]
 * @outstanding_txns: transactions queued to the process or being handled
 *	by it, whose end BINDER_FREEZE waits for [ctx]
 * @freeze_wait: where BINDER_FREEZE waits for @outstanding_txns to drop
 *	to 0
 * @is_dead: released [ctx]
 * @alloc: receive area
 * @memcg: charged for everything made for the process (reference held)
 * @rcu: frees the memory (see cbinder_proc_free())
 */
struct cbinder_proc {
	struct cbinder_context *ctx;
	struct cask_cell *cell;
	struct ipc_namespace *ipc_ns;
	struct list_head entry;
	refcount_t refcount;
	struct pid *pid;
	struct task_struct *tsk;
	const struct cred *cred;
	spinlock_t inner_lock;	/* see the top of the file */
	struct rb_root threads;
	struct rb_root nodes;
	struct rb_root refs_by_desc;
	struct rb_root refs_by_node;
	struct list_head todo;
	struct list_head waiting_threads;
	struct list_head delivered_death;
	struct list_head delivered_freeze;
	unsigned int freeze_clearing;
	u32 desc_hint;
	u32 max_threads;
	u32 requested_threads;
	u32 requested_threads_started;
	long default_priority;
	bool oneway_spam_detection;
	bool is_frozen;
	bool notified_frozen;
	bool sync_recv;
	bool async_recv;
	int outstanding_txns;
	wait_queue_head_t freeze_wait;
	bool is_dead;
	struct cbinder_alloc alloc;
	struct mem_cgroup *memcg;
	struct rcu_head rcu;
};

enum {
	CBINDER_LOOPER_REGISTERED	= 0x01,
	CBINDER_LOOPER_ENTERED		= 0x02,
	CBINDER_LOOPER_EXITED		= 0x04,
	CBINDER_LOOPER_INVALID		= 0x08,
	CBINDER_LOOPER_WAITING		= 0x10,
	CBINDER_LOOPER_POLL		= 0x20,
};

/**
 * struct cbinder_thread - a thread of a binder process
 * @proc: owner; the thread is released before its process
 * @rb_node: in proc->threads [ctx+inner]
 * @waiting_entry: in proc->waiting_threads while waiting for process
 *	work [inner]
 * @refcount: proc->threads and every temporary user; freed after an RCU
 *	grace period (wake_up_pollfree())
 * @rcu: for that
 * @pid: thread id (global)
 * @looper: CBINDER_LOOPER_*; written only by the thread itself, under
 *	the inner lock [inner]
 * @need_return: return from the next read even with nothing to say [inner]
 * @transaction_stack: newest sync transaction sent or being handled
 *	[ctx+inner]: the thread decides under its inner lock whether it may
 *	take process work, so a reply pops its caller's stack and queues the
 *	reply in one hold of the caller's inner lock
 * @todo: work for this thread [inner]
 * @process_todo: what @todo holds may wake the thread (not only deferred
 *	work); only with @todo not empty, see cbinder_has_work_ilocked()
 *	[inner]
 * @return_error: error for the thread itself [ctx]
 * @reply_error: error for a transaction it waits on [ctx]
 * @wait: where it sleeps, reads and polls
 * @is_dead: exited [ctx]
 * @ee: the last transaction's outcome, BINDER_GET_EXTENDED_ERROR [ctx]
 */
struct cbinder_thread {
	struct cbinder_proc *proc;
	struct rb_node rb_node;
	struct list_head waiting_entry;
	refcount_t refcount;
	struct rcu_head rcu;
	pid_t pid;
	u32 looper;
	bool need_return;
	struct cbinder_transaction *transaction_stack;
	struct list_head todo;
	bool process_todo;
	struct cbinder_error return_error;
	struct cbinder_error reply_error;
	wait_queue_head_t wait;
	bool is_dead;
	struct binder_extended_error ee;
};

/**
 * struct cbinder_node - a binder object owned by a process
 * @work: CBINDER_WORK_NODE, queued when user space's counts must change
 * @rb_node: in proc->nodes while the owner lives [ctx]
 * @dead_entry: in ctx->dead_nodes after the owner died [ctx]
 * @proc: owner, NULL once it died [ctx]
 * @refs: references to the node, across processes [ctx]
 * @ptr: user space's address of the object
 * @cookie: user space's cookie
 * @internal_strong_refs: references with a strong count [ctx]
 * @local_strong_refs: strong counts held by the driver (buffers, the
 *	BR_ACQUIRE handshake) [ctx]
 * @local_weak_refs: weak counts held by the driver [ctx]
 * @tmp_refs: short-lived users [ctx]
 * @has_strong_ref: user space holds a strong count for us [ctx]
 * @pending_strong_ref: BR_ACQUIRE sent, ACQUIRE_DONE not yet [ctx]
 * @has_weak_ref: user space holds a weak count for us [ctx]
 * @pending_weak_ref: BR_INCREFS sent, INCREFS_DONE not yet [ctx]
 * @has_async_transaction: a one-way transaction is being handled [ctx]
 * @accept_fds: FLAT_BINDER_FLAG_ACCEPTS_FDS
 * @txn_security_ctx: FLAT_BINDER_FLAG_TXN_SECURITY_CTX
 * @min_priority: FLAT_BINDER_FLAG_PRIORITY_MASK as a nice value
 * @async_todo: one-way transactions waiting for the current one [ctx]
 * @debug_id: for debugfs
 */
struct cbinder_node {
	struct cbinder_work work;
	union {
		struct rb_node rb_node;
		struct list_head dead_entry;
	};
	struct cbinder_proc *proc;
	struct hlist_head refs;
	binder_uintptr_t ptr;
	binder_uintptr_t cookie;
	int internal_strong_refs;
	int local_strong_refs;
	int local_weak_refs;
	int tmp_refs;
	u8 has_strong_ref:1;
	u8 pending_strong_ref:1;
	u8 has_weak_ref:1;
	u8 pending_weak_ref:1;
	u8 has_async_transaction:1;
	u8 accept_fds:1;
	u8 txn_security_ctx:1;
	s8 min_priority;
	struct list_head async_todo;
	int debug_id;
};

/**
 * struct cbinder_death - a death notification
 * @work: DEAD_BINDER, DEAD_BINDER_AND_CLEAR or CLEAR_DEATH_NOTIFICATION
 * @cookie: user space's cookie
 * @ref: the reference whose @ref->death this is, NULL once it is not [ctx]
 *
 * A cleared notice already told (DEAD_BINDER_AND_CLEAR) stays its
 * reference's until BC_DEAD_BINDER_DONE: the reference takes no new request
 * meanwhile, which keeps proc->delivered_death to one notice a reference.
 */
struct cbinder_death {
	struct cbinder_work work;
	binder_uintptr_t cookie;
	struct cbinder_ref *ref;
};

/**
 * struct cbinder_freeze - a freeze notification
 * @work: FROZEN_BINDER, or CLEAR_FREEZE_NOTIFICATION once cleared; queued
 *	to the process, or on its delivered_freeze once told [ctx]
 * @cookie: user space's cookie
 * @ref: the reference whose @ref->freeze this is, NULL once it is not [ctx]
 * @is_frozen: the state to tell (or told) [ctx]
 * @sent: told, awaiting BC_FREEZE_NOTIFICATION_DONE [ctx]
 * @resend: changed (or cleared) meanwhile: queue it again on DONE [ctx]
 *
 * A notice cleared while told stays its reference's until DONE or a new
 * request on the reference, which then takes it off (as the kernel's
 * binder, up to CBINDER_MAX_FREEZE_CLEARING of them a process).
 */
struct cbinder_freeze {
	struct cbinder_work work;
	binder_uintptr_t cookie;
	struct cbinder_ref *ref;
	bool is_frozen;
	bool sent;
	bool resend;
};

/**
 * struct cbinder_ref - a process's handle on a node
 * @node_entry: in node->refs [ctx]
 * @rb_node_desc: in proc->refs_by_desc [ctx]
 * @rb_node_node: in proc->refs_by_node [ctx]
 * @proc: holder
 * @node: target
 * @desc: the handle
 * @strong: strong count [ctx]
 * @weak: weak count [ctx]
 * @death: requested death notification, or NULL [ctx]
 * @freeze: requested freeze notification, or NULL [ctx]
 */
struct cbinder_ref {
	struct hlist_node node_entry;
	struct rb_node rb_node_desc;
	struct rb_node rb_node_node;
	struct cbinder_proc *proc;
	struct cbinder_node *node;
	u32 desc;
	int strong;
	int weak;
	struct cbinder_death *death;
	struct cbinder_freeze *freeze;
};

/**
 * struct cbinder_fd_fixup - a file to install in the receiver
 * @entry: in the transaction's fixups
 * @file: the file (reference held)
 * @fd: the receiver's fd reserved for it, or -1
 * @offset: where in the buffer its fd number goes
 */
struct cbinder_fd_fixup {
	struct list_head entry;
	struct file *file;
	int fd;
	size_t offset;
};

/**
 * struct cbinder_transaction - a transaction or reply in flight
 * @work: CBINDER_WORK_TRANSACTION
 * @from: sending thread for a sync transaction while it lives [ctx]
 * @from_parent: next older transaction of @from's stack [ctx]
 * @bc: the cell's binder state, for its counters
 * @to_proc: receiving process; never dereferenced once the receiving thread
 *	has gone (the transaction may outlive it, linked in its caller's stack)
 * @to_thread: receiving thread once chosen [ctx]
 * @to_parent: next older transaction of @to_thread's stack [ctx]
 * @buffer: the data in @to_proc's receive area, or NULL once freed [ctx]
 * @code: user space's code
 * @flags: TF_*
 * @need_reply: a sync transaction
 * @is_reply: a reply
 * @outstanding: counted in @to_proc's outstanding_txns; cleared when it no
 *	longer is, before @to_proc may go [ctx]
 * @priority: sender's nice
 * @saved_priority: receiver's nice before it took the transaction
 * @sender_euid: euid of the sending file's opener at the time of the call
 * @sender_pid: sending thread group for sync transactions, or NULL
 * @fd_fixups: files to install on delivery
 * @security_ctx: user address of the security context, or 0
 * @debug_id: for debugfs
 */
struct cbinder_transaction {
	struct cbinder_work work;
	struct cbinder_thread *from;
	struct cbinder_transaction *from_parent;
	struct cbinder_cell *bc;
	struct cbinder_proc *to_proc;
	struct cbinder_thread *to_thread;
	struct cbinder_transaction *to_parent;
	struct cbinder_buffer *buffer;
	u32 code;
	u32 flags;
	bool need_reply;
	bool is_reply;
	bool outstanding;
	long priority;
	long saved_priority;
	kuid_t sender_euid;
	struct pid *sender_pid;
	struct list_head fd_fixups;
	binder_uintptr_t security_ctx;
	int debug_id;
};

/**
 * struct cbinder_sg_fixup - bytes of a scatter-gather buffer not copied
 *	from the sender
 * @entry: in the transaction's fix-ups (only its sender uses them)
 * @offset: where in the buffer
 * @len: how many bytes
 * @value: for a parent's pointer to a child: written there
 * @fds: an FD array instead (zeros until cbinder_reserve_fds())
 */
struct cbinder_sg_fixup {
	struct list_head entry;
	size_t offset;
	size_t len;
	u64 value;
	bool fds;
};

struct cbinder_sg_copy;

/*
 * One transaction being built: @udata is the sender's data, @sg_copies
 * (by offset, as they are made, each with its fix-ups) what
 * cbinder_copy_sg() copies and writes at the end. @copy_of gives each
 * object, by index, its copy (PTR objects with a length), so that a child
 * finds its parent's without a search; NULL until the first PTR.
 */
struct cbinder_txn_ctx {
	struct cbinder_proc *proc;
	struct cbinder_thread *thread;
	struct cbinder_proc *target_proc;
	struct cbinder_transaction *t;
	struct cbinder_transaction *in_reply_to;
	struct cbinder_buffer *buffer;
	const void __user *udata;
	unsigned long user_base;
	size_t off_start;
	size_t sg_offset;
	size_t sg_end;
	u64 last_fixup_obj;
	u64 last_fixup_min;
	struct list_head sg_copies;
	struct cbinder_sg_copy **copy_of;
};

/* main.c */
extern struct cask_driver cbinder_driver;

/* binderfs.c */
struct inode;
int cbinder_fs_init(const struct file_operations *fops);
void cbinder_fs_exit(void);
struct cbinder_context *cbinder_open_context(struct inode *inode,
					     struct cbinder_cell *bc);

/* debugfs.c */
struct seq_file;
struct pid_namespace;

/**
 * struct cbinder_printer - how a cell's state is printed
 * @m: where
 * @ns: pids as seen from there; processes not in it are left out
 * @binderfs: upstream's binder_logs format (contexts by name)
 * @all: everything ("state"), or only what is in flight ("transactions")
 * @pid: only the process of that number in @ns, or 0 for all
 */
struct cbinder_printer {
	struct seq_file *m;
	struct pid_namespace *ns;
	bool binderfs;
	bool all;
	pid_t pid;
};

void cbinder_print_state(struct cbinder_printer *p, struct cbinder_cell *bc);
void cbinder_print_stats(struct seq_file *m, struct cbinder_cell *bc);
void cbinder_print_log(struct cbinder_printer *p, struct cbinder_txn_log *log);
int cbinder_debugfs_init(void);
void cbinder_debugfs_exit(void);
void cbinder_debugfs_add_cell(struct cbinder_cell *bc);
void cbinder_debugfs_remove_cell(struct cbinder_cell *bc);

/* proc.c */
extern const struct file_operations cbinder_fops;
void cbinder_context_unlink(struct cbinder_context *ctx);
void cbinder_fs_unlink_cell(struct cbinder_cell *bc);

/* read.c */
int cbinder_thread_read(struct cbinder_proc *proc,
			struct cbinder_thread *thread,
			binder_uintptr_t binder_buffer, size_t size,
			binder_size_t *consumed, bool non_block);

/* write.c */
int cbinder_thread_write(struct cbinder_proc *proc,
			 struct cbinder_thread *thread,
			 binder_uintptr_t binder_buffer, size_t size,
			 binder_size_t *consumed);

/* context.c */
struct cask_chardev;
extern struct cask_chardev cbinder_chardev;
int cbinder_devices_init(const struct file_operations *fops);
void cbinder_devices_exit(void);
unsigned int cbinder_device_index(const struct inode *inode);
const char *cbinder_device_name(unsigned int index);
int cbinder_device_lookup(const char *name);
void cbinder_context_put(struct cbinder_context *ctx);
typedef int (*cbinder_context_fn)(struct cbinder_context *ctx, void *arg);
int cbinder_cell_walk_contexts(struct cbinder_cell *bc, cbinder_context_fn fn,
			       void *arg);
void cbinder_proc_dec_tmpref(struct cbinder_proc *proc);
void cbinder_thread_dec_tmpref(struct cbinder_thread *thread);

/* work.c */

/**
 * cbinder_available_for_proc_work_ilocked() - may a thread take work queued
 *	to its process
 * @thread: the thread
 *
 * Inline: the read loop and poll ask it at every turn.
 *
 * Context: @thread's process's inner lock held.
 * Return: true if it handles no transaction, has no work of its own and
 * is a looper (registered or entered).
 */
static inline bool
cbinder_available_for_proc_work_ilocked(struct cbinder_thread *thread)
{
	lockdep_assert_held(&thread->proc->inner_lock);
	return !thread->transaction_stack && list_empty(&thread->todo) &&
	       (thread->looper & (CBINDER_LOOPER_ENTERED |
				  CBINDER_LOOPER_REGISTERED));
}

/**
 * cbinder_has_work_ilocked() - has a thread something to read
 * @thread: the thread
 * @do_proc_work: work queued to its process counts too
 *
 * process_todo only says whether what is on thread->todo may wake the
 * thread (deferred work may not): work can leave the list without being
 * read (a node's work moves to another thread), so the list itself says
 * whether there is any. A stale flag must never promise work that is not
 * there: the read loop would go round without sleeping. Inline: the read
 * loop asks it before every sleep.
 *
 * Context: @thread's process's inner lock held.
 * Return: true if a read would not sleep.
 */
static inline bool cbinder_has_work_ilocked(struct cbinder_thread *thread,
					    bool do_proc_work)
{
	lockdep_assert_held(&thread->proc->inner_lock);
	return (thread->process_todo && !list_empty(&thread->todo)) ||
	       thread->need_return ||
	       (do_proc_work && !list_empty(&thread->proc->todo));
}

void cbinder_enqueue_thread_work_locked(struct cbinder_thread *thread,
					struct cbinder_work *work, bool sync);
void cbinder_enqueue_deferred_thread_work_locked(struct cbinder_thread *thread,
						 struct cbinder_work *work);
void cbinder_set_stack_locked(struct cbinder_thread *thread,
			      struct cbinder_transaction *stack,
			      struct cbinder_work *work, bool sync);
void cbinder_set_stack_deferred_locked(struct cbinder_thread *thread,
				       struct cbinder_transaction *stack,
				       struct cbinder_work *work);
void cbinder_wakeup_proc_ilocked(struct cbinder_proc *proc, bool sync);
void cbinder_enqueue_proc_work_locked(struct cbinder_proc *proc,
				      struct cbinder_work *work, bool sync);
void cbinder_dequeue_work_locked(struct cbinder_proc *proc,
				 struct cbinder_work *work);
struct cbinder_work *cbinder_dequeue_first_work_locked(struct cbinder_proc *proc,
						       struct list_head *list);
bool cbinder_work_queued_locked(struct cbinder_proc *proc,
				struct list_head *list);

/* log.c */
void cbinder_log_begin(struct cbinder_log_entry *e, struct cbinder_proc *proc,
		       struct cbinder_thread *thread,
		       const struct binder_transaction_data *tr, bool reply,
		       int debug_id);
void cbinder_log_target(struct cbinder_log_entry *e, struct cbinder_proc *to,
			struct cbinder_thread *to_thread,
			struct cbinder_node *node);
void cbinder_log_end(struct cbinder_cell *bc, struct cbinder_log_entry *e,
		     u32 return_error, int return_error_param);
bool cbinder_log_read(struct cbinder_txn_log *log, unsigned long seq,
		      struct cbinder_log_entry *e);

/* node.c */
int cbinder_next_debug_id(struct cbinder_cell *bc);
struct cbinder_node *cbinder_get_node_locked(struct cbinder_proc *proc,
					     binder_uintptr_t ptr);
struct cbinder_node *cbinder_new_node_locked(struct cbinder_proc *proc,
					     struct cbinder_node *new_node,
					     binder_uintptr_t ptr,
					     binder_uintptr_t cookie,
					     u32 flags);
int cbinder_inc_node_locked(struct cbinder_node *node, bool strong,
			    bool internal, struct cbinder_thread *target);
void cbinder_dec_node_locked(struct cbinder_node *node, bool strong,
			     bool internal);
void cbinder_node_tmpref_locked(struct cbinder_node *node);
void cbinder_node_put_tmpref_locked(struct cbinder_node *node);
void cbinder_put_target_node_locked(struct cbinder_node *node);
bool cbinder_node_process_work_locked(struct cbinder_node *node, u32 *cmds,
				      int *ncmds);
struct cbinder_ref *cbinder_get_ref_locked(struct cbinder_proc *proc, u32 desc,
					   bool need_strong);
int cbinder_inc_ref_for_node_locked(struct cbinder_proc *proc,
				    struct cbinder_node *node, bool strong,
				    struct cbinder_thread *target,
				    struct cbinder_ref **new_ref,
				    struct cbinder_ref **refp);
int cbinder_update_ref_locked(struct cbinder_proc *proc, u32 desc,
			      bool increment, bool strong,
			      struct cbinder_ref **new_ref);
void cbinder_release_node_locked(struct cbinder_node *node,
				 struct list_head *async);
void cbinder_release_ref_locked(struct cbinder_ref *ref);
void cbinder_free_node_locked(struct cbinder_node *node);
int cbinder_request_death(struct cbinder_proc *proc,
			  struct cbinder_thread *thread, u32 cmd,
			  u32 desc, binder_uintptr_t cookie);
int cbinder_dead_binder_done(struct cbinder_proc *proc,
			     struct cbinder_thread *thread,
			     binder_uintptr_t cookie);
int cbinder_request_freeze(struct cbinder_proc *proc, u32 cmd, u32 desc,
			   binder_uintptr_t cookie);
int cbinder_freeze_done(struct cbinder_proc *proc, binder_uintptr_t cookie);
void cbinder_freeze_changed_locked(struct cbinder_ref *ref, bool is_frozen);

/* txn.c */
long cbinder_clamp_nice(long nice, long floor);
void cbinder_set_nice(struct cbinder_proc *proc, long nice);
void cbinder_transaction(struct cbinder_proc *proc,
			 struct cbinder_thread *thread,
			 struct binder_transaction_data *tr, bool reply,
			 binder_size_t extra_buffers_size);
void cbinder_send_failed_reply_locked(struct cbinder_transaction *t,
				      u32 error_code);
void cbinder_free_transaction_locked(struct cbinder_transaction *t);
void cbinder_txn_not_outstanding_locked(struct cbinder_transaction *t);
void cbinder_free_buffer(struct cbinder_proc *proc,
			 struct cbinder_thread *thread,
			 struct cbinder_buffer *buffer, bool is_failure);
bool cbinder_release_work_locked(struct cbinder_proc *proc,
				 struct list_head *list, unsigned int max);
void cbinder_release_work(struct cbinder_proc *proc, struct list_head *list);
int cbinder_reserve_fds(struct cbinder_proc *proc,
			struct cbinder_transaction *t);
void cbinder_unreserve_fds(struct cbinder_transaction *t);
void cbinder_install_fds(struct cbinder_transaction *t);
void cbinder_drop_fd_fixups(struct cbinder_transaction *t);

/* translate.c */
int cbinder_translate_objects(struct cbinder_txn_ctx *tc, size_t *translated);
void cbinder_release_objects(struct cbinder_proc *proc,
			     struct cbinder_buffer *buffer,
			     size_t count, bool is_failure);
#if IS_ENABLED(CONFIG_KUNIT)
size_t cbinder_object_check(size_t data_size, u64 offset, u32 type,
			    u64 off_min);
bool cbinder_validate_ptr(struct cbinder_alloc *alloc,
			  struct cbinder_buffer *buffer, u64 index,
			  size_t off_start, size_t num_valid,
			  struct binder_buffer_object *parent,
			  u64 *parent_offset);
bool cbinder_validate_fixup(struct cbinder_alloc *alloc,
			    struct cbinder_buffer *buffer, size_t off_start,
			    u64 parent_obj, u64 fixup_offset, u64 last_obj,
			    u64 last_min);
int cbinder_sort_sg_fixups(struct list_head *fixups, bool sorted);
#endif

#endif /* _CASK_BINDER_H */
