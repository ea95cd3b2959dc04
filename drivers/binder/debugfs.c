// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/cask/binder/ID/{state,stats}: one cell's binder
 * worlds (ID as in /sys/kernel/cask/cells/NAME/id) in the text format of
 * the kernel binder's debugfs files, for the host's root only. User
 * addresses are shown as the kernel's binder shows them; kernel addresses
 * never (the CVE-2018-20510 class). Pids are the host's.
 *
 * The printers also make binderfs's binder_logs/ (binderfs.c): one cell
 * each, pids as the mount's pid namespace sees them. The transaction logs
 * they print are written and read without a lock by log.c.
 */
#include <kunit/visibility.h>
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rbtree.h>
#include <linux/seq_file.h>
#include <cask/cell.h>

#include "binder.h"

static struct dentry *cbinder_debugfs_root;

static const char *const cbinder_bc_names[] = {
	"BC_TRANSACTION", "BC_REPLY", "BC_ACQUIRE_RESULT", "BC_FREE_BUFFER",
	"BC_INCREFS", "BC_ACQUIRE", "BC_RELEASE", "BC_DECREFS",
	"BC_INCREFS_DONE", "BC_ACQUIRE_DONE", "BC_ATTEMPT_ACQUIRE",
	"BC_REGISTER_LOOPER", "BC_ENTER_LOOPER", "BC_EXIT_LOOPER",
	"BC_REQUEST_DEATH_NOTIFICATION", "BC_CLEAR_DEATH_NOTIFICATION",
	"BC_DEAD_BINDER_DONE", "BC_TRANSACTION_SG", "BC_REPLY_SG",
	"BC_REQUEST_FREEZE_NOTIFICATION", "BC_CLEAR_FREEZE_NOTIFICATION",
	"BC_FREEZE_NOTIFICATION_DONE",
};

static const char *const cbinder_br_names[] = {
	"BR_ERROR", "BR_OK", "BR_TRANSACTION", "BR_REPLY",
	"BR_ACQUIRE_RESULT", "BR_DEAD_REPLY", "BR_TRANSACTION_COMPLETE",
	"BR_INCREFS", "BR_ACQUIRE", "BR_RELEASE", "BR_DECREFS",
	"BR_ATTEMPT_ACQUIRE", "BR_NOOP", "BR_SPAWN_LOOPER", "BR_FINISHED",
	"BR_DEAD_BINDER", "BR_CLEAR_DEATH_NOTIFICATION_DONE",
	"BR_FAILED_REPLY", "BR_FROZEN_REPLY", "BR_ONEWAY_SPAM_SUSPECT",
	"BR_TRANSACTION_PENDING_FROZEN", "BR_FROZEN_BINDER",
	"BR_CLEAR_FREEZE_NOTIFICATION_DONE",
};

static_assert(ARRAY_SIZE(cbinder_bc_names) ==
	      ARRAY_SIZE(((struct cbinder_cell *)0)->stats_bc));
static_assert(ARRAY_SIZE(cbinder_br_names) ==
	      ARRAY_SIZE(((struct cbinder_cell *)0)->stats_br));

/* A process's or thread's number as the reader sees it; 0: not there. */
static pid_t cbinder_pid_nr(struct cbinder_printer *p, struct pid *pid)
{
	return pid_nr_ns(pid, p->ns);
}

static pid_t cbinder_tid_nr(struct cbinder_printer *p, pid_t global)
{
	struct pid *pid;
	pid_t nr;

	if (p->ns == &init_pid_ns || !global)
		return global;
	rcu_read_lock();
	pid = find_pid_ns(global, &init_pid_ns);
	nr = pid ? pid_nr_ns(pid, p->ns) : 0;
	rcu_read_unlock();
	return nr;
}

/* ctx->lock held; asserted only for a live node (a dead one has no owner). */
static void cbinder_print_node_locked(struct cbinder_printer *p,
				      struct cbinder_node *node)
{
	struct seq_file *m = p->m;
	struct cbinder_ref *ref;

	if (node->proc)
		lockdep_assert_held(&node->proc->ctx->lock);
	seq_printf(m, "  node %d: u%016llx c%016llx pri %d hs %d hw %d ls %d lw %d is %d iw %d tr %d",
		   node->debug_id, (u64)node->ptr, (u64)node->cookie,
		   node->min_priority, node->has_strong_ref,
		   node->has_weak_ref, node->local_strong_refs,
		   node->local_weak_refs, node->internal_strong_refs,
		   hlist_empty(&node->refs) ? 0 : 1, node->tmp_refs);
	if (!hlist_empty(&node->refs)) {
		seq_puts(m, " proc");
		hlist_for_each_entry(ref, &node->refs, node_entry)
			seq_printf(m, " %d", cbinder_pid_nr(p, ref->proc->pid));
	}
	seq_putc(m, '\n');
}

/*
 * ctx->lock held, not asserted: a transaction may outlive both of its
 * processes, so it may lead to no lock.
 */
static void cbinder_print_transaction_locked(struct cbinder_printer *p,
					     const char *prefix,
					     struct cbinder_transaction *t)
{
	seq_printf(p->m, "%s %d: from %d to %d:%d code %x flags %x need_reply %d\n",
		   prefix, t->debug_id,
		   t->from ? cbinder_tid_nr(p, t->from->pid) : 0,
		   t->to_thread ? cbinder_pid_nr(p, t->to_thread->proc->pid) : 0,
		   t->to_thread ? cbinder_tid_nr(p, t->to_thread->pid) : 0,
		   t->code, t->flags, t->need_reply);
}

/*
 * ctx->lock held, and the inner lock of the process whose todo list @list
 * is, if it is one. Not asserted: a bare list leads to neither lock.
 */
static void cbinder_print_work_locked(struct cbinder_printer *p,
				      const char *prefix,
				      struct list_head *list)
{
	struct seq_file *m = p->m;
	struct cbinder_work *w;

	list_for_each_entry(w, list, entry) {
		switch (w->type) {
		case CBINDER_WORK_TRANSACTION:
			cbinder_print_transaction_locked(p, prefix,
							 container_of(w, struct cbinder_transaction,
								      work));
			break;
		case CBINDER_WORK_RETURN_ERROR:
			seq_printf(m, "%s transaction error: %u\n", prefix,
				   container_of(w, struct cbinder_error,
						work)->cmd);
			break;
		case CBINDER_WORK_TRANSACTION_COMPLETE:
		case CBINDER_WORK_TRANSACTION_ONEWAY_SPAM_SUSPECT:
		case CBINDER_WORK_TRANSACTION_PENDING:
			seq_printf(m, "%s transaction complete\n", prefix);
			break;
		case CBINDER_WORK_FROZEN_BINDER:
		case CBINDER_WORK_CLEAR_FREEZE_NOTIFICATION:
			seq_printf(m, "%s freeze notification\n", prefix);
			break;
		case CBINDER_WORK_NODE:
			seq_printf(m, "%s node work %d\n", prefix,
				   container_of(w, struct cbinder_node,
						work)->debug_id);
			break;
		default:
			seq_printf(m, "%s death notification\n", prefix);
			break;
		}
	}
}

/*
 * One process: everything (@p->all), or as upstream's "transactions" only
 * what is in flight (transaction stacks, pending work, one-way queues).
 */
static void cbinder_print_proc_locked(struct cbinder_printer *p,
				      struct cbinder_proc *proc, pid_t nr)
{
	struct seq_file *m = p->m;
	struct cbinder_transaction *t;
	struct cbinder_thread *thread;
	struct cbinder_node *node;
	struct cbinder_ref *ref;
	struct rb_node *n;

	lockdep_assert_held(&proc->ctx->lock);
	seq_printf(m, "proc %d\ncontext %s\n", nr,
		   p->binderfs ? proc->ctx->name : cask_cell_name(proc->cell));
	/* The todo lists and the threads' states are the inner lock's. */
	spin_lock(&proc->inner_lock);
	for (n = rb_first(&proc->threads); n; n = rb_next(n)) {
		thread = rb_entry(n, struct cbinder_thread, rb_node);
		if (!p->all && !thread->transaction_stack &&
		    list_empty(&thread->todo))
			continue;
		seq_printf(m, "  thread %d: l %02x need_return %d tr %d\n",
			   cbinder_tid_nr(p, thread->pid), thread->looper,
			   thread->need_return,
			   refcount_read(&thread->refcount) - 1);
		for (t = thread->transaction_stack; t;
		     t = t->from == thread ? t->from_parent : t->to_parent)
			cbinder_print_transaction_locked(p, t->from == thread ?
							 "    outgoing transaction" :
							 "    incoming transaction", t);
		cbinder_print_work_locked(p, "    pending", &thread->todo);
	}
	spin_unlock(&proc->inner_lock);
	for (n = rb_first(&proc->nodes); n; n = rb_next(n)) {
		node = rb_entry(n, struct cbinder_node, rb_node);
		if (!p->all && list_empty(&node->async_todo))
			continue;
		cbinder_print_node_locked(p, node);
		cbinder_print_work_locked(p, "    pending async", &node->async_todo);
	}
	if (p->all) {
		for (n = rb_first(&proc->refs_by_desc); n; n = rb_next(n)) {
			ref = rb_entry(n, struct cbinder_ref, rb_node_desc);
			seq_printf(m, "  ref: desc %u %snode %d s %d w %d d %s\n",
				   ref->desc, ref->node->proc ? "" : "dead ",
				   ref->node->debug_id, ref->strong, ref->weak,
				   ref->death ? "set" : "none");
		}
		/* The buffers are the allocator's, under a mutex: only their sum. */
		seq_printf(m, "  buffers: %zu bytes\n",
			   READ_ONCE(proc->alloc.allocated_bytes));
	}
	spin_lock(&proc->inner_lock);
	cbinder_print_work_locked(p, "  pending", &proc->todo);
	spin_unlock(&proc->inner_lock);
}

static int cbinder_print_context(struct cbinder_context *ctx, void *arg)
{
	struct cbinder_printer *p = arg;
	struct cbinder_proc *proc;
	struct cbinder_node *node;
	pid_t nr;

	spin_lock(&ctx->lock);
	if (list_empty(&ctx->procs) && list_empty(&ctx->dead_nodes))
		goto unlock;
	if (!p->binderfs) {
		if (ctx->index == CBINDER_FS_INDEX)
			seq_printf(p->m, "device %s:\n", ctx->name);
		else
			seq_printf(p->m, "device %u:\n", ctx->index);
	}
	if (p->all && !p->pid && !list_empty(&ctx->dead_nodes)) {
		seq_puts(p->m, "dead nodes:\n");
		list_for_each_entry(node, &ctx->dead_nodes, dead_entry)
			cbinder_print_node_locked(p, node);
	}
	list_for_each_entry(proc, &ctx->procs, entry) {
		/* A process the reader cannot see is not shown. */
		nr = cbinder_pid_nr(p, proc->pid);
		if (!nr || (p->pid && nr != p->pid))
			continue;
		cbinder_print_proc_locked(p, proc, nr);
	}
unlock:
	spin_unlock(&ctx->lock);
	return 0;
}

/**
 * cbinder_print_state() - a cell's binder worlds, as "state",
 *	"transactions" or "proc/PID"
 * @p: where, how, and what of it (@p->all, @p->pid)
 * @bc: the cell's binder state
 *
 * Every context of the cell, the embedded ones and binderfs ones. Pids as
 * @p->ns sees them; processes it does not see are left out.
 *
 * Context: process context; takes bc->fs_lock and each ctx->lock.
 */
void cbinder_print_state(struct cbinder_printer *p, struct cbinder_cell *bc)
{
	cbinder_cell_walk_contexts(bc, cbinder_print_context, p);
}

/**
 * cbinder_print_stats() - a cell's binder counters, as "stats"
 * @m: where
 * @bc: the cell's binder state
 *
 * Context: any process context.
 */
void cbinder_print_stats(struct seq_file *m, struct cbinder_cell *bc)
{
	long val;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bc->stats_bc); i++) {
		val = atomic_long_read(&bc->stats_bc[i]);
		if (val)
			seq_printf(m, "%s: %ld\n", cbinder_bc_names[i], val);
	}
	for (i = 0; i < ARRAY_SIZE(bc->stats_br); i++) {
		val = atomic_long_read(&bc->stats_br[i]);
		if (val)
			seq_printf(m, "%s: %ld\n", cbinder_br_names[i], val);
	}
	seq_printf(m, "proc: active %ld\n", atomic_long_read(&bc->procs));
	seq_printf(m, "thread: active %ld\n", atomic_long_read(&bc->threads));
	seq_printf(m, "node: active %ld\n", atomic_long_read(&bc->nodes));
	seq_printf(m, "ref: active %ld\n", atomic_long_read(&bc->refs));
	seq_printf(m, "transaction: active %ld total %ld failed %ld\n",
		   atomic_long_read(&bc->transactions),
		   atomic_long_read(&bc->transactions_total),
		   atomic_long_read(&bc->failed_transactions));
}

/**
 * cbinder_print_log() - a transaction log, oldest first, as upstream's
 * @p: where; entries of senders @p->ns does not see are left out
 * @log: the log
 *
 * The last CBINDER_LOG_SIZE entries claimed when the read starts, each as
 * it is then; entries still being written are left out (upstream shows
 * them marked "(incomplete)"), as are those overwritten meanwhile.
 *
 * Context: process context; takes no lock.
 */
void cbinder_print_log(struct cbinder_printer *p, struct cbinder_txn_log *log)
{
	static const char *const types[] = { "call ", "async", "reply" };
	unsigned long seq, last = atomic_long_read(&log->head);
	struct cbinder_log_entry e;
	pid_t from;

	/* Modular: right across the counter's wrap, and in a log not yet full. */
	for (seq = last - (CBINDER_LOG_SIZE - 1); seq != last + 1; seq++) {
		if (!cbinder_log_read(log, seq, &e))
			continue;
		from = cbinder_tid_nr(p, e.from_proc);
		if (!from)
			continue;
		seq_printf(p->m, "%d: %s from %d:%d to %d:%d context %s node %d handle %u size %llu:%llu ret %u/%d l=0\n",
			   e.debug_id, types[e.call_type], from,
			   cbinder_tid_nr(p, e.from_thread),
			   cbinder_tid_nr(p, e.to_proc),
			   cbinder_tid_nr(p, e.to_thread), e.context,
			   e.to_node, e.handle, e.data_size,
			   e.offsets_size, e.return_error,
			   e.return_error_param);
	}
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_print_log);

static int cbinder_state_show(struct seq_file *m, void *unused)
{
	struct cbinder_printer p = {
		.m = m,
		.ns = &init_pid_ns,
		.all = true,
	};

	seq_puts(m, "binder state:\n");
	cbinder_print_state(&p, m->private);
	return 0;
}

static int cbinder_stats_show(struct seq_file *m, void *unused)
{
	seq_puts(m, "binder stats:\n");
	cbinder_print_stats(m, m->private);
	return 0;
}

/* Debugfs is the host's; its root may still be inside a container. */
static int cbinder_debugfs_may_open(void)
{
	if (!capable(CAP_SYS_ADMIN) || !cask_current_in_host())
		return -EPERM;
	return 0;
}

static int cbinder_state_open(struct inode *inode, struct file *file)
{
	return cbinder_debugfs_may_open() ?:
	       single_open(file, cbinder_state_show, inode->i_private);
}

static int cbinder_stats_open(struct inode *inode, struct file *file)
{
	return cbinder_debugfs_may_open() ?:
	       single_open(file, cbinder_stats_show, inode->i_private);
}

static const struct file_operations cbinder_state_fops = {
	.owner = THIS_MODULE,
	.open = cbinder_state_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static const struct file_operations cbinder_stats_fops = {
	.owner = THIS_MODULE,
	.open = cbinder_stats_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/**
 * cbinder_debugfs_add_cell() - the cell's debugfs directory
 * @bc: the cell's binder state, being attached
 *
 * Removal (cbinder_debugfs_remove_cell()) waits for running reads, so the
 * files never outlive @bc. Failures make nothing and are not errors.
 *
 * Context: process context (cask_core's attach).
 */
void cbinder_debugfs_add_cell(struct cbinder_cell *bc)
{
	char id[24];

	/*
	 * By id, not by name: the directory lives as long as the cell, which
	 * can outlive its unlink (an open file), and the next cell of the
	 * same name (a container's, an IPC namespace's reused number) would
	 * find the name taken and have none, while the old cell's state
	 * showed under it.
	 */
	snprintf(id, sizeof(id), "%llu", cask_cell_id(bc->cell));
	bc->debugfs = debugfs_create_dir(id, cbinder_debugfs_root);
	debugfs_create_file("state", 0400, bc->debugfs, bc,
			    &cbinder_state_fops);
	debugfs_create_file("stats", 0400, bc->debugfs, bc,
			    &cbinder_stats_fops);
}

/**
 * cbinder_debugfs_remove_cell() - remove the cell's debugfs directory
 * @bc: the cell's binder state, being detached
 *
 * Context: process context (cask_core's detach).
 */
void cbinder_debugfs_remove_cell(struct cbinder_cell *bc)
{
	debugfs_remove(bc->debugfs);
}

/**
 * cbinder_debugfs_init() - make /sys/kernel/debug/cask/binder
 *
 * Context: module init.
 * Return: 0: debugging is optional and never fails the module.
 */
int cbinder_debugfs_init(void)
{
	cbinder_debugfs_root = debugfs_create_dir("binder", cask_debugfs_dir());
	return 0;
}

/**
 * cbinder_debugfs_exit() - remove what cbinder_debugfs_init() made
 *
 * Context: module exit, after every cell's directory has gone.
 */
void cbinder_debugfs_exit(void)
{
	debugfs_remove(cbinder_debugfs_root);
}
