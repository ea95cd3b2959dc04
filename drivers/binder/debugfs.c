// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/cask/binder/ID/{state,stats}: one cell's binder
 * worlds (ID as in /sys/kernel/cask/cells/NAME/id) in the text format of
 * the kernel binder's debugfs files, for the host's root only. User
 * addresses are shown as the kernel's binder shows them; kernel addresses
 * never (the CVE-2018-20510 class). Pids are the host's.
 */
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/pid.h>
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

static void cbinder_print_node_locked(struct seq_file *m,
				      struct cbinder_node *node)
{
	struct cbinder_ref *ref;

	seq_printf(m, "  node %d: u%016llx c%016llx pri %d hs %d hw %d ls %d lw %d is %d iw %d tr %d",
		   node->debug_id, (u64)node->ptr, (u64)node->cookie,
		   node->min_priority, node->has_strong_ref,
		   node->has_weak_ref, node->local_strong_refs,
		   node->local_weak_refs, node->internal_strong_refs,
		   hlist_empty(&node->refs) ? 0 : 1, node->tmp_refs);
	if (!hlist_empty(&node->refs)) {
		seq_puts(m, " proc");
		hlist_for_each_entry(ref, &node->refs, node_entry)
			seq_printf(m, " %d", pid_nr(ref->proc->pid));
	}
	seq_putc(m, '\n');
}

static void cbinder_print_transaction_locked(struct seq_file *m,
					     const char *prefix,
					     struct cbinder_transaction *t)
{
	seq_printf(m, "%s %d: from %d to %d:%d code %x flags %x need_reply %d\n",
		   prefix, t->debug_id, t->from ? t->from->pid : 0,
		   t->to_thread ? pid_nr(t->to_thread->proc->pid) : 0,
		   t->to_thread ? t->to_thread->pid : 0, t->code, t->flags,
		   t->need_reply);
}

static void cbinder_print_work_locked(struct seq_file *m, const char *prefix,
				      struct list_head *list)
{
	struct cbinder_work *w;

	list_for_each_entry(w, list, entry) {
		switch (w->type) {
		case CBINDER_WORK_TRANSACTION:
			cbinder_print_transaction_locked(m, prefix,
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

static void cbinder_print_proc_locked(struct seq_file *m,
				      struct cbinder_proc *proc)
{
	struct cbinder_transaction *t;
	struct cbinder_thread *thread;
	struct cbinder_ref *ref;
	struct rb_node *n;

	seq_printf(m, "proc %d\ncontext %s\n", pid_nr(proc->pid),
		   cask_cell_name(proc->cell));
	for (n = rb_first(&proc->threads); n; n = rb_next(n)) {
		thread = rb_entry(n, struct cbinder_thread, rb_node);
		seq_printf(m, "  thread %d: l %02x need_return %d tr %d\n",
			   thread->pid, thread->looper, thread->need_return,
			   refcount_read(&thread->refcount) - 1);
		for (t = thread->transaction_stack; t;
		     t = t->from == thread ? t->from_parent : t->to_parent)
			cbinder_print_transaction_locked(m, t->from == thread ?
							 "    outgoing transaction" :
							 "    incoming transaction", t);
		cbinder_print_work_locked(m, "    pending", &thread->todo);
	}
	for (n = rb_first(&proc->nodes); n; n = rb_next(n))
		cbinder_print_node_locked(m, rb_entry(n, struct cbinder_node,
						      rb_node));
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
	cbinder_print_work_locked(m, "  pending", &proc->todo);
}

static int cbinder_state_show(struct seq_file *m, void *unused)
{
	struct cbinder_cell *bc = m->private;
	struct cbinder_context *ctx;
	struct cbinder_proc *proc;
	struct cbinder_node *node;
	unsigned int i;

	seq_puts(m, "binder state:\n");
	for (i = 0; i < CBINDER_MAX_DEVICES; i++) {
		ctx = &bc->ctx[i];
		spin_lock(&ctx->lock);
		if (list_empty(&ctx->procs) && list_empty(&ctx->dead_nodes)) {
			spin_unlock(&ctx->lock);
			continue;
		}
		seq_printf(m, "device %u:\n", i);
		if (!list_empty(&ctx->dead_nodes))
			seq_puts(m, "dead nodes:\n");
		list_for_each_entry(node, &ctx->dead_nodes, dead_entry)
			cbinder_print_node_locked(m, node);
		list_for_each_entry(proc, &ctx->procs, entry)
			cbinder_print_proc_locked(m, proc);
		spin_unlock(&ctx->lock);
	}
	return 0;
}

static int cbinder_stats_show(struct seq_file *m, void *unused)
{
	struct cbinder_cell *bc = m->private;
	long val;
	size_t i;

	seq_puts(m, "binder stats:\n");
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
