// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder contexts and the lifetime of what lives in them: where a
 * cell's contexts are (one per device, then its binderfs contexts), the
 * last reference on a context, and the last references on a process and
 * on a thread, which free them. Below the transactions, which hold a
 * target process and thread across a call, and below binderfs.c and
 * debugfs.c, which walk a cell's contexts.
 *
 * Locking: bc->fs_lock (a mutex) for a cell's binderfs contexts; a
 * process is freed with no lock held, taking ctx->lock per buffer that
 * still holds a node, then the allocator's.
 */
#include <linux/cleanup.h>
#include <linux/cred.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <cask/cell.h>

#include "binder.h"

/**
 * cbinder_context_put() - drop a reference on a context
 * @ctx: the context
 *
 * A binderfs context of its own goes with its last reference (its device
 * inode and every process in it are gone, so it holds nothing more); an
 * embedded one lives with its cell, whose reference this drops.
 *
 * Context: process context, no locks held.
 */
void cbinder_context_put(struct cbinder_context *ctx)
{
	struct cbinder_cell *bc = ctx->bc;
	struct cask_cell *cell = bc->cell;

	if (ctx->index != CBINDER_FS_INDEX) {
		cask_cell_put(cell);
		return;
	}
	if (!refcount_dec_and_test(&ctx->refcount))
		return;
	mutex_lock(&bc->fs_lock);
	list_del(&ctx->fs_entry);
	mutex_unlock(&bc->fs_lock);
	WARN_ON_ONCE(!list_empty(&ctx->procs) || !list_empty(&ctx->dead_nodes));
	kfree(ctx->name);
	kfree(ctx);
	cask_cell_put(cell);
}

/**
 * cbinder_cell_walk_contexts() - call @fn for every context of a cell
 * @bc: the cell's binder state
 * @fn: called without ctx->lock (it takes it if it needs it); a non-zero
 *	return stops the walk
 * @arg: its argument
 *
 * The one place that knows where a cell's contexts are: the embedded
 * contexts (one per device), then the cell's binderfs contexts, under
 * bc->fs_lock, which keeps each of them alive across its call: @fn must
 * not drop a context's reference nor make one.
 *
 * Context: process context; takes bc->fs_lock.
 * Return: 0, or the first non-zero return of @fn.
 */
int cbinder_cell_walk_contexts(struct cbinder_cell *bc, cbinder_context_fn fn,
			       void *arg)
{
	struct cbinder_context *ctx;
	unsigned int i;
	int ret;

	for (i = 0; i < CBINDER_MAX_DEVICES; i++) {
		ret = fn(&bc->ctx[i], arg);
		if (ret)
			return ret;
	}
	guard(mutex)(&bc->fs_lock);
	list_for_each_entry(ctx, &bc->fs_contexts, fs_entry) {
		ret = fn(ctx, arg);
		if (ret)
			return ret;
	}
	return 0;
}

static void cbinder_proc_free(struct cbinder_proc *proc)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_cell *bc = ctx->bc;
	/* The opener's: a binderfs context may be another cell's. */
	struct cbinder_cell *own = cask_cell_data(proc->cell, &cbinder_driver);
	struct cbinder_buffer *buffer;

	/*
	 * Buffers never freed by user space still hold their target nodes
	 * (this process's, now dead): let those go. Nobody else uses the
	 * area any more.
	 */
	list_for_each_entry(buffer, &proc->alloc.buffers, entry) {
		if (buffer->free || !buffer->target_node)
			continue;
		spin_lock(&ctx->lock);
		cbinder_put_target_node_locked(buffer->target_node);
		buffer->target_node = NULL;
		spin_unlock(&ctx->lock);
	}

	atomic_long_sub(proc->alloc.allocated_bytes, &bc->buffer_bytes);
	cbinder_alloc_release(&proc->alloc);
	mem_cgroup_put(proc->memcg);
	put_cred(proc->cred);
	put_pid(proc->pid);
	put_task_struct(proc->tsk);
	atomic_long_dec(&own->procs);
	cbinder_context_put(ctx);
	cask_cell_put(proc->cell);
	/*
	 * After a grace period: the shrinker may still be returning from
	 * mutex_unlock(&proc->alloc.lock), with preemption off.
	 */
	kfree_rcu(proc, rcu);
}

/**
 * cbinder_proc_dec_tmpref() - drop a reference on a process
 * @proc: the process
 *
 * The last reference frees the receive area, so a sender copying into a
 * buffer of @proc holds one until it is done.
 *
 * Context: process context, no locks held.
 */
void cbinder_proc_dec_tmpref(struct cbinder_proc *proc)
{
	if (refcount_dec_and_test(&proc->refcount))
		cbinder_proc_free(proc);
}

/**
 * cbinder_thread_dec_tmpref() - drop a reference on a thread
 * @thread: the thread
 *
 * The memory goes after a grace period: a poller's wait entry may be
 * removed from @thread->wait under RCU (wake_up_pollfree()).
 *
 * Context: any.
 */
void cbinder_thread_dec_tmpref(struct cbinder_thread *thread)
{
	/* kfree_rcu(): no callback of ours runs after the module went. */
	if (refcount_dec_and_test(&thread->refcount))
		kfree_rcu(thread, rcu);
}
