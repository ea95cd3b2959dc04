// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder processes and threads: open, release, mmap, poll, the
 * ioctls, and the read and write halves of BINDER_WRITE_READ.
 *
 * Locking: ctx->lock (see binder.h) is the only lock of the protocol. It
 * is a spinlock, never held across a user copy, an allocation that may
 * sleep, an fd operation or the allocator (alloc->lock, a mutex, is taken
 * only without it). A process is bound to its opener's cell and context
 * for its life.
 */
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/ipc_namespace.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/nsproxy.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <cask/cell.h>

#include "binder.h"

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

/*
 * The calling thread's, or @new_thread made it if there is none and given;
 * the tree changes only with ctx->lock held too.
 */
static struct cbinder_thread *
cbinder_get_thread_ilocked(struct cbinder_proc *proc,
			   struct cbinder_thread *new_thread)
{
	struct rb_node **p = &proc->threads.rb_node, *parent = NULL;
	struct cbinder_thread *thread;

	lockdep_assert_held(&proc->inner_lock);
	while (*p) {
		parent = *p;
		thread = rb_entry(parent, struct cbinder_thread, rb_node);
		if (current->pid < thread->pid)
			p = &parent->rb_left;
		else if (current->pid > thread->pid)
			p = &parent->rb_right;
		else
			return thread;
	}
	if (!new_thread)
		return NULL;
	lockdep_assert_held(&proc->ctx->lock);
	thread = new_thread;
	thread->proc = proc;
	thread->pid = current->pid;
	refcount_set(&thread->refcount, 1);
	init_waitqueue_head(&thread->wait);
	INIT_LIST_HEAD(&thread->todo);
	INIT_LIST_HEAD(&thread->waiting_entry);
	thread->return_error.work.type = CBINDER_WORK_RETURN_ERROR;
	thread->return_error.cmd = BR_OK;
	INIT_LIST_HEAD(&thread->return_error.work.entry);
	thread->reply_error.work.type = CBINDER_WORK_RETURN_ERROR;
	thread->reply_error.cmd = BR_OK;
	INIT_LIST_HEAD(&thread->reply_error.work.entry);
	thread->need_return = true;
	thread->ee.command = BR_OK;
	rb_link_node(&thread->rb_node, parent, p);
	rb_insert_color(&thread->rb_node, &proc->threads);
	atomic_long_inc(&proc->ctx->bc->threads);
	return thread;
}

static struct cbinder_thread *cbinder_get_thread(struct cbinder_proc *proc)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_thread *thread, *new_thread;
	struct mem_cgroup *old;

	spin_lock(&proc->inner_lock);
	thread = cbinder_get_thread_ilocked(proc, NULL);
	spin_unlock(&proc->inner_lock);
	if (thread)
		return thread;
	old = set_active_memcg(proc->memcg);
	new_thread = kzalloc(sizeof(*new_thread), GFP_KERNEL_ACCOUNT);
	set_active_memcg(old);
	if (!new_thread)
		return NULL;
	spin_lock(&ctx->lock);
	spin_lock(&proc->inner_lock);
	thread = cbinder_get_thread_ilocked(proc, new_thread);
	spin_unlock(&proc->inner_lock);
	spin_unlock(&ctx->lock);
	if (thread != new_thread)
		kfree(new_thread);
	return thread;
}

/*
 * A thread goes (THREAD_EXIT or release): every transaction it was to
 * answer fails with BR_DEAD_REPLY to its caller, every call it made
 * forgets it, its queued work is released, and pollers are detached from
 * its wait queue before the memory goes (the CVE-2019-2215 class).
 */
static void cbinder_thread_release_locked(struct cbinder_proc *proc,
					  struct cbinder_thread *thread)
{
	struct cbinder_transaction *t, *next, *send_reply;

	lockdep_assert_held(&proc->ctx->lock);
	spin_lock(&proc->inner_lock);
	rb_erase(&thread->rb_node, &proc->threads);
	list_del_init(&thread->waiting_entry);
	t = thread->transaction_stack;
	thread->transaction_stack = NULL;
	spin_unlock(&proc->inner_lock);
	thread->is_dead = true;
	atomic_long_dec(&proc->ctx->bc->threads);

	/*
	 * Only the newest transaction, if it was to be answered here, fails
	 * now. Older ones stay linked into their callers' stacks, detached
	 * from this thread: each fails, or is freed, when the chain above it
	 * unwinds to it (cbinder_send_failed_reply_locked() walks past dead
	 * callers), so no stack ever points at a freed transaction.
	 */
	send_reply = t && t->to_thread == thread ? t : NULL;
	while (t) {
		if (t->to_thread == thread) {
			next = t->to_parent;
			cbinder_txn_not_outstanding_locked(t);
			t->to_thread = NULL;
			if (t->buffer) {
				t->buffer->transaction = NULL;
				t->buffer = NULL;
			}
		} else {
			WARN_ON_ONCE(t->from != thread);
			next = t->from_parent;
			t->from = NULL;
		}
		t = next;
	}
	if (send_reply)
		cbinder_send_failed_reply_locked(send_reply, BR_DEAD_REPLY);
	if (thread->looper & CBINDER_LOOPER_POLL)
		wake_up_pollfree(&thread->wait);
	/* Nobody queues to it any more: the caller empties ->todo. */
}

static int cbinder_open(struct inode *inode, struct file *file)
{
	struct cbinder_context *ctx;
	struct cbinder_proc *proc;
	struct cbinder_cell *bc;
	struct cask_cell *cell;
	int ret;

	cell = cask_cell_get_or_create();
	if (IS_ERR(cell))
		return PTR_ERR(cell);
	bc = cask_cell_data(cell, &cbinder_driver);
	if (!bc) {
		ret = -ENODEV;
		goto put_cell;
	}
	if (atomic_long_inc_return(&bc->procs) > READ_ONCE(bc->max_procs)) {
		ret = -ENOSPC;
		goto dec_procs;
	}
	proc = kzalloc(sizeof(*proc), GFP_KERNEL_ACCOUNT);
	if (!proc) {
		ret = -ENOMEM;
		goto dec_procs;
	}
	/* The cell's own device, or a binderfs device (any cell's). */
	ctx = cbinder_open_context(inode, bc);
	proc->ctx = ctx;
	proc->cell = cell;
	proc->ipc_ns = current->nsproxy->ipc_ns;
	refcount_set(&proc->refcount, 1);
	proc->pid = get_pid(task_tgid(current));
	proc->tsk = get_task_struct(current->group_leader);
	proc->cred = get_cred(file->f_cred);
	proc->threads = RB_ROOT;
	proc->nodes = RB_ROOT;
	proc->refs_by_desc = RB_ROOT;
	proc->refs_by_node = RB_ROOT;
	spin_lock_init(&proc->inner_lock);
	INIT_LIST_HEAD(&proc->todo);
	INIT_LIST_HEAD(&proc->waiting_threads);
	INIT_LIST_HEAD(&proc->delivered_death);
	INIT_LIST_HEAD(&proc->delivered_freeze);
	init_waitqueue_head(&proc->freeze_wait);
	proc->default_priority = task_nice(current);
	proc->memcg = get_mem_cgroup_from_mm(current->mm);
	cbinder_alloc_init(&proc->alloc, proc->memcg);

	spin_lock(&ctx->lock);
	list_add(&proc->entry, &ctx->procs);
	spin_unlock(&ctx->lock);
	file->private_data = proc;
	return 0;

dec_procs:
	atomic_long_dec(&bc->procs);
put_cell:
	cask_cell_put(cell);
	return ret;
}

static int cbinder_release(struct inode *inode, struct file *file)
{
	struct cbinder_proc *proc = file->private_data;
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_thread *thread;
	struct cbinder_node *node;
	struct cbinder_ref *ref;
	struct rb_node *n;
	unsigned int batch;
	LIST_HEAD(async);

	/*
	 * Dead first: from here on no transaction is queued to the process.
	 * Then everything it holds, a batch per hold of the lock, a spinlock
	 * a hostile process could otherwise keep for seconds.
	 */
	spin_lock(&ctx->lock);
	list_del(&proc->entry);
	proc->is_dead = true;
	if (ctx->mgr_node && ctx->mgr_node->proc == proc)
		ctx->mgr_node = NULL;
	spin_unlock(&ctx->lock);

	for (;;) {
		spin_lock(&ctx->lock);
		n = rb_first(&proc->threads);
		thread = n ? rb_entry(n, struct cbinder_thread, rb_node) : NULL;
		if (thread)
			cbinder_thread_release_locked(proc, thread);
		spin_unlock(&ctx->lock);
		if (!thread)
			break;
		cbinder_release_work(proc, &thread->todo);
		cbinder_thread_dec_tmpref(thread);
	}
	do {
		spin_lock(&ctx->lock);
		for (batch = 0; batch < CBINDER_RELEASE_BATCH &&
		     (n = rb_first(&proc->nodes)); batch++) {
			node = rb_entry(n, struct cbinder_node, rb_node);
			rb_erase(n, &proc->nodes);
			cbinder_release_node_locked(node, &async);
		}
		spin_unlock(&ctx->lock);
		cbinder_release_work(proc, &async);
		cond_resched();
	} while (n);
	do {
		spin_lock(&ctx->lock);
		for (batch = 0; batch < CBINDER_RELEASE_BATCH &&
		     (n = rb_first(&proc->refs_by_desc)); batch++) {
			ref = rb_entry(n, struct cbinder_ref, rb_node_desc);
			cbinder_release_ref_locked(ref);
		}
		spin_unlock(&ctx->lock);
		cond_resched();
	} while (n);
	cbinder_release_work(proc, &proc->todo);
	cbinder_release_work(proc, &proc->delivered_death);
	cbinder_release_work(proc, &proc->delivered_freeze);

	cbinder_proc_dec_tmpref(proc);
	return 0;
}

/* The thread of @proc with the lowest pid not below @pid, or NULL. */
static struct cbinder_thread *
cbinder_thread_from_locked(struct cbinder_proc *proc, pid_t pid)
{
	struct rb_node *n = proc->threads.rb_node;
	struct cbinder_thread *thread, *found = NULL;

	lockdep_assert_held(&proc->ctx->lock);
	while (n) {
		thread = rb_entry(n, struct cbinder_thread, rb_node);
		if (thread->pid >= pid) {
			found = thread;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return found;
}

/* The node of @proc with the lowest ptr not below @ptr, or NULL. */
static struct cbinder_node *
cbinder_node_from_locked(struct cbinder_proc *proc, binder_uintptr_t ptr)
{
	struct rb_node *n = proc->nodes.rb_node;
	struct cbinder_node *node, *found = NULL;

	lockdep_assert_held(&proc->ctx->lock);
	while (n) {
		node = rb_entry(n, struct cbinder_node, rb_node);
		if (node->ptr >= ptr) {
			found = node;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return found;
}

/*
 * Count @cost steps of a drain and drop the lock for a moment once a batch
 * is full: a list released counts as a whole batch, a list found empty as
 * one step.
 */
static void cbinder_drain_step_locked(struct cbinder_context *ctx,
				      unsigned int *steps, unsigned int cost)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	*steps += cost;
	if (*steps < CBINDER_RELEASE_BATCH)
		return;
	*steps = 0;
	spin_unlock(&ctx->lock);
	cond_resched();
	spin_lock(&ctx->lock);
}

/*
 * Release the work queued to a process of an unlinked cell, which no
 * thread of it will read (see cbinder_context_unlink()). The nodes'
 * one-way queues go first: freeing a buffer moves the node's next call to
 * @proc->todo, which goes last. Threads and nodes may go whenever the
 * lock is dropped, so the walks find them again by key.
 */
static void cbinder_proc_drain(struct cbinder_proc *proc)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_thread *thread;
	struct cbinder_node *node;
	binder_uintptr_t ptr = 0;
	unsigned int steps = 0;
	bool busy, more;
	pid_t pid = 0;

	spin_lock(&ctx->lock);
	while ((node = cbinder_node_from_locked(proc, ptr))) {
		ptr = node->ptr;
		busy = !list_empty(&node->async_todo);
		more = busy && cbinder_release_work_locked(proc, &node->async_todo,
							    CBINDER_RELEASE_BATCH);
		if (!more && ptr++ == U64_MAX)
			break;
		cbinder_drain_step_locked(ctx, &steps,
					  busy ? CBINDER_RELEASE_BATCH : 1);
	}
	while ((thread = cbinder_thread_from_locked(proc, pid))) {
		pid = thread->pid;
		spin_lock(&proc->inner_lock);
		busy = !list_empty(&thread->todo);
		spin_unlock(&proc->inner_lock);
		more = busy && cbinder_release_work_locked(proc, &thread->todo,
							    CBINDER_RELEASE_BATCH);
		/*
		 * A reader would otherwise spin on the work it was promised.
		 * One asleep (a looper, a caller waiting for its reply, a
		 * poller) would wait for ever: nothing is queued here any more
		 * and cbinder_flush() no longer kicks it. Woken, it finds
		 * ctx->unlinked and fails as its next ioctl would: it reads
		 * that under the inner lock taken here.
		 */
		if (!more) {
			spin_lock(&proc->inner_lock);
			thread->process_todo = false;
			wake_up_interruptible(&thread->wait);
			spin_unlock(&proc->inner_lock);
			pid++;
		}
		cbinder_drain_step_locked(ctx, &steps,
					  busy ? CBINDER_RELEASE_BATCH : 1);
	}
	spin_unlock(&ctx->lock);
	cbinder_release_work(proc, &proc->todo);
}

/**
 * cbinder_context_unlink() - drop what is queued in a context of an
 *	unlinked cell
 * @ctx: the context
 *
 * Once the cell is unlinked no task can use its binder files
 * (cbinder_proc_may_use()), so nothing queued to them will be read. It
 * must not stay queued either: the files that undelivered transactions
 * carry may hold the cell's own binder files (a socket with one in
 * flight), and such a cycle would keep the processes, the cell and the
 * module until reboot. From here on no transaction is queued in @ctx, so
 * what is drained stays drained.
 *
 * Context: process context, cask_core's unlink callback (under its
 * registry lock held for reading); takes ctx->lock, a batch per hold, and
 * may free processes.
 */
void cbinder_context_unlink(struct cbinder_context *ctx)
{
	struct cbinder_proc *proc;
	LIST_HEAD(drained);

	spin_lock(&ctx->lock);
	/* Read by threads about to sleep under their inner lock only. */
	WRITE_ONCE(ctx->unlinked, true);
	/*
	 * Drained processes wait on a list of ours, so that each is done
	 * once however the list changes meanwhile (a release unlinks the
	 * process from whichever list it is on). debugfs misses them until
	 * they are back.
	 */
	while ((proc = list_first_entry_or_null(&ctx->procs,
						struct cbinder_proc, entry))) {
		list_move_tail(&proc->entry, &drained);
		refcount_inc(&proc->refcount);
		spin_unlock(&ctx->lock);
		cbinder_proc_drain(proc);
		cbinder_proc_dec_tmpref(proc);
		spin_lock(&ctx->lock);
	}
	list_splice(&drained, &ctx->procs);
	spin_unlock(&ctx->lock);
}

static bool cbinder_proc_may_use(struct cbinder_proc *proc)
{
	/*
	 * A binder file works only for tasks of its opener's IPC namespace:
	 * one passed to another container over a socket gives it nothing.
	 */
	/*
	 * The namespace's address is compared, not held: once the cell is
	 * unlinked (its namespace died) a new namespace may have the same
	 * address, so the file then works for nobody.
	 */
	return current->nsproxy && current->nsproxy->ipc_ns == proc->ipc_ns &&
	       cask_cell_linked(proc->cell);
}

/*
 * A copy of the vma in a child (madvise(MADV_DOFORK), then fork()) is not
 * the area: its close must not end the parent's, nor may its faults map
 * the parent's pages (the shrinker would never unmap them there).
 */
static void cbinder_vma_close(struct vm_area_struct *vma)
{
	struct cbinder_proc *proc = vma->vm_private_data;

	if (vma->vm_mm == READ_ONCE(proc->alloc.mm))
		cbinder_alloc_vma_close(&proc->alloc);
}

static vm_fault_t cbinder_vm_fault(struct vm_fault *vmf)
{
	struct cbinder_proc *proc = vmf->vma->vm_private_data;

	if (vmf->vma->vm_mm != READ_ONCE(proc->alloc.mm))
		return VM_FAULT_SIGBUS;
	return cbinder_alloc_fault(&proc->alloc, vmf);
}

/*
 * The area stays where it was mapped: buffers' user addresses and the
 * shrinker's unmapping are computed from that address.
 */
static int cbinder_vm_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static const struct vm_operations_struct cbinder_vm_ops = {
	.close = cbinder_vma_close,
	.fault = cbinder_vm_fault,
	.mremap = cbinder_vm_mremap,
};

static int cbinder_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct cbinder_proc *proc = file->private_data;
	int ret;

	if (proc->pid != task_tgid(current) || !cbinder_proc_may_use(proc))
		return -EINVAL;
	/* The area is written only by the driver. */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	vm_flags_mod(vma, VM_DONTCOPY | VM_MIXEDMAP | VM_DONTEXPAND,
		     VM_MAYWRITE);
	proc->alloc.vma_private = proc;
	ret = cbinder_alloc_mmap(&proc->alloc, vma);
	if (ret)
		return ret;
	/* Only now: a failed mmap calls ->close, which would unmap us. */
	vma->vm_private_data = proc;
	vma->vm_ops = &cbinder_vm_ops;
	return 0;
}

static __poll_t cbinder_poll(struct file *file, struct poll_table_struct *wait)
{
	struct cbinder_proc *proc = file->private_data;
	struct cbinder_thread *thread;
	bool proc_work;
	__poll_t mask = 0;

	if (!cbinder_proc_may_use(proc))
		return EPOLLERR;
	thread = cbinder_get_thread(proc);
	if (!thread)
		return EPOLLERR;
	spin_lock(&proc->inner_lock);
	thread->looper |= CBINDER_LOOPER_POLL;
	proc_work = cbinder_available_for_proc_work_ilocked(thread);
	spin_unlock(&proc->inner_lock);

	poll_wait(file, &thread->wait, wait);

	spin_lock(&proc->inner_lock);
	if (cbinder_has_work_ilocked(thread, proc_work))
		mask = EPOLLIN;
	spin_unlock(&proc->inner_lock);
	return mask;
}

static int cbinder_wait_for_work(struct cbinder_thread *thread,
				 bool do_proc_work)
{
	struct cbinder_proc *proc = thread->proc;
	struct cbinder_context *ctx = proc->ctx;
	DEFINE_WAIT(wait);
	int ret = 0;

	spin_lock(&proc->inner_lock);
	/* For cbinder_flush(): this thread sleeps in read. */
	thread->looper |= CBINDER_LOOPER_WAITING;
	for (;;) {
		prepare_to_wait(&thread->wait, &wait,
				TASK_INTERRUPTIBLE | TASK_FREEZABLE);
		/*
		 * Unlinked: nothing will come, and the read fails as the
		 * next ioctl would (cbinder_proc_may_use()). Before the
		 * work, of which a drain may have left a failed reply that
		 * nobody can use now.
		 */
		if (READ_ONCE(ctx->unlinked)) {
			ret = -EPERM;
			break;
		}
		if (cbinder_has_work_ilocked(thread, do_proc_work))
			break;
		if (do_proc_work)
			list_add(&thread->waiting_entry, &proc->waiting_threads);
		spin_unlock(&proc->inner_lock);
		schedule();
		spin_lock(&proc->inner_lock);
		list_del_init(&thread->waiting_entry);
		if (signal_pending(current)) {
			ret = -EINTR;
			break;
		}
	}
	finish_wait(&thread->wait, &wait);
	thread->looper &= ~CBINDER_LOOPER_WAITING;
	spin_unlock(&proc->inner_lock);
	return ret;
}

static void cbinder_count_br(struct cbinder_proc *proc, u32 cmd)
{
	struct cbinder_cell *bc = proc->ctx->bc;

	if (_IOC_NR(cmd) < ARRAY_SIZE(bc->stats_br))
		atomic_long_inc(&bc->stats_br[_IOC_NR(cmd)]);
}

static int cbinder_put_cmd(struct cbinder_proc *proc, void __user **ptr,
			   u32 cmd)
{
	cbinder_count_br(proc, cmd);
	if (put_user(cmd, (u32 __user *)*ptr))
		return -EFAULT;
	*ptr += sizeof(u32);
	return 0;
}

static int cbinder_put_ptr_cookie(struct cbinder_proc *proc,
				  void __user **ptr, u32 cmd,
				  binder_uintptr_t p, binder_uintptr_t cookie)
{
	struct binder_ptr_cookie pc = { .ptr = p, .cookie = cookie };

	if (cbinder_put_cmd(proc, ptr, cmd))
		return -EFAULT;
	if (copy_to_user(*ptr, &pc, sizeof(pc)))
		return -EFAULT;
	*ptr += sizeof(pc);
	return 0;
}

/*
 * A transaction taken off a list that cannot reach user space: a sync
 * caller gets BR_FAILED_REPLY, and the buffer goes, with nothing of its
 * FDAs to close (no fd was installed). A reply that cannot reach its
 * caller (@thread: no fd free for the files it carries) fails to @thread
 * itself, as in the kernel's binder: nothing else would ever answer it.
 */
static void cbinder_undeliverable(struct cbinder_thread *thread,
				  struct cbinder_transaction *t,
				  struct cbinder_buffer *buffer)
{
	struct cbinder_proc *proc = thread->proc;
	bool is_reply = t->is_reply;

	spin_lock(&proc->ctx->lock);
	if (t->need_reply)
		cbinder_send_failed_reply_locked(t, BR_FAILED_REPLY);
	else
		cbinder_free_transaction_locked(t);
	if (is_reply && thread->reply_error.cmd == BR_OK) {
		thread->reply_error.cmd = BR_FAILED_REPLY;
		cbinder_enqueue_thread_work_locked(thread,
						   &thread->reply_error.work);
	}
	spin_unlock(&proc->ctx->lock);
	cbinder_free_buffer(proc, thread, buffer, true);
}

/*
 * Deliver a transaction to the reading thread: install its files, fill
 * the user's binder_transaction_data, push a sync call on the thread's
 * stack. Called with no lock held, t just taken off its list. Until the
 * push, what may change of it is t->from (its caller exits), which is not
 * read here; and t->buffer, which a BC_FREE_BUFFER of another thread may
 * clear as soon as cbinder_alloc_allow_user_free() let it: from there on
 * t is read only under ctx->lock, and @buffer not at all. Returns the
 * bytes written, 0 if the transaction was dropped (its caller got a
 * failed reply), or -EFAULT.
 */
static int cbinder_deliver_transaction(struct cbinder_thread *thread,
				       struct cbinder_transaction *t,
				       void __user *ptr)
{
	struct cbinder_proc *proc = thread->proc;
	struct cbinder_context *ctx = proc->ctx;
	struct binder_transaction_data_secctx tr = {};
	struct binder_transaction_data *trd = &tr.transaction_data;
	struct cbinder_buffer *buffer = t->buffer;
	struct cbinder_node *target = buffer->target_node;
	size_t trsize = sizeof(*trd);
	u32 cmd;
	int ret;

	if (target) {
		trd->target.ptr = target->ptr;
		trd->cookie = target->cookie;
		t->saved_priority = task_nice(current);
		cmd = BR_TRANSACTION;
	} else {
		cmd = BR_REPLY;
	}
	trd->code = t->code;
	trd->flags = t->flags;
	trd->sender_euid = from_kuid(current_user_ns(), t->sender_euid);
	if (t->sender_pid)
		trd->sender_pid = pid_nr_ns(t->sender_pid,
					    task_active_pid_ns(current));
	trd->data_size = buffer->data_size;
	trd->offsets_size = buffer->offsets_size;
	trd->data.ptr.buffer = cbinder_buffer_user(&proc->alloc, buffer);
	trd->data.ptr.offsets = trd->data.ptr.buffer +
				ALIGN(buffer->data_size, sizeof(void *));
	if (t->security_ctx) {
		tr.secctx = t->security_ctx;
		cmd = BR_TRANSACTION_SEC_CTX;
		trsize = sizeof(tr);
	}

	if (target) {
		long nice = target->min_priority;

		if (!(t->flags & TF_ONE_WAY) && t->priority < nice)
			nice = t->priority;
		if (!(t->flags & TF_ONE_WAY) || t->saved_priority > nice)
			cbinder_set_nice(proc, nice);
	}

	/* Files the reader cannot take: the call fails, the read goes on. */
	ret = cbinder_reserve_fds(proc, t);
	if (ret) {
		ret = 0;
		goto undeliverable;
	}

	cbinder_count_br(proc, cmd);
	if (put_user(cmd, (u32 __user *)ptr) ||
	    copy_to_user(ptr + sizeof(u32), &tr, trsize)) {
		cbinder_unreserve_fds(t);
		ret = -EFAULT;
		goto undeliverable;
	}
	cbinder_install_fds(t);

	/* User space has the address now: it may free the buffer at once. */
	cbinder_alloc_allow_user_free(&proc->alloc, buffer);
	spin_lock(&ctx->lock);
	if (cmd != BR_REPLY && !(t->flags & TF_ONE_WAY)) {
		t->to_parent = thread->transaction_stack;
		t->to_thread = thread;
		spin_lock(&proc->inner_lock);
		thread->transaction_stack = t;
		spin_unlock(&proc->inner_lock);
	} else {
		/* Not @buffer: another thread may have freed it by now. */
		cbinder_free_transaction_locked(t);
	}
	spin_unlock(&ctx->lock);
	return sizeof(u32) + trsize;

undeliverable:
	/* Not taken: the reader goes back to its own priority. */
	if (target)
		cbinder_set_nice(proc, t->saved_priority);
	cbinder_undeliverable(thread, t, buffer);
	return ret;
}

/* The reader's next work item, still queued, or NULL. */
static struct cbinder_work *
cbinder_next_work_ilocked(struct cbinder_thread *thread, bool proc_work)
{
	lockdep_assert_held(&thread->proc->inner_lock);
	if (!list_empty(&thread->todo))
		return list_first_entry(&thread->todo, struct cbinder_work,
					entry);
	if (proc_work)
		return list_first_entry_or_null(&thread->proc->todo,
						struct cbinder_work, entry);
	return NULL;
}

/* Take @w, the reader's next item, off its list. */
static void cbinder_take_work_ilocked(struct cbinder_thread *thread,
				      struct cbinder_work *w)
{
	lockdep_assert_held(&thread->proc->inner_lock);
	list_del_init(&w->entry);
	if (list_empty(&thread->todo))
		thread->process_todo = false;
}

/*
 * Work a reader takes and handles with only its inner lock: nothing of it
 * but its links changes while it is queued (cbinder_deliver_transaction()),
 * and nobody but the reader and a drain takes it off a list, both with the
 * inner lock. Every other item is handled under ctx->lock as well.
 */
static bool cbinder_inner_work(const struct cbinder_work *w)
{
	switch (w->type) {
	case CBINDER_WORK_TRANSACTION:
	case CBINDER_WORK_TRANSACTION_COMPLETE:
	case CBINDER_WORK_TRANSACTION_ONEWAY_SPAM_SUSPECT:
	case CBINDER_WORK_TRANSACTION_PENDING:
		return true;
	default:
		return false;
	}
}

/*
 * Take the reader's next item if it is one handled under ctx->lock (see
 * cbinder_inner_work()), and write it at *@ptr. Returns -EFAULT, 1 if
 * the read must stop after it, or 0 (also when the item is no longer
 * first: the caller looks again).
 */
static int cbinder_read_ctx_work(struct cbinder_thread *thread,
				 bool proc_work, void __user **ptrp)
{
	struct cbinder_proc *proc = thread->proc;
	struct cbinder_context *ctx = proc->ctx;
	void __user *ptr = *ptrp;
	struct cbinder_death *death;
	struct cbinder_node *node;
	struct cbinder_error *e;
	struct cbinder_work *w;
	u32 cmds[4];
	int n, i, ret = 0;

	spin_lock(&ctx->lock);
	spin_lock(&proc->inner_lock);
	w = cbinder_next_work_ilocked(thread, proc_work);
	if (!w || cbinder_inner_work(w)) {
		spin_unlock(&proc->inner_lock);
		spin_unlock(&ctx->lock);
		return 0;
	}
	cbinder_take_work_ilocked(thread, w);
	spin_unlock(&proc->inner_lock);

	switch (w->type) {
	case CBINDER_WORK_RETURN_ERROR:
		e = container_of(w, struct cbinder_error, work);
		i = e->cmd;
		e->cmd = BR_OK;
		spin_unlock(&ctx->lock);
		if (cbinder_put_cmd(proc, &ptr, i))
			return -EFAULT;
		break;
	case CBINDER_WORK_NODE: {
		binder_uintptr_t nptr, ncookie;
		bool gone;

		node = container_of(w, struct cbinder_node, work);
		nptr = node->ptr;
		ncookie = node->cookie;
		n = 0;
		gone = cbinder_node_process_work_locked(node, cmds, &n);
		spin_unlock(&ctx->lock);
		if (gone)
			kfree(node);
		for (i = 0; i < n; i++)
			if (cbinder_put_ptr_cookie(proc, &ptr, cmds[i], nptr,
						   ncookie))
				return -EFAULT;
		break;
	}
	case CBINDER_WORK_DEAD_BINDER:
	case CBINDER_WORK_DEAD_BINDER_AND_CLEAR:
	case CBINDER_WORK_CLEAR_DEATH_NOTIFICATION: {
		binder_uintptr_t cookie;
		u32 cmd;

		death = container_of(w, struct cbinder_death, work);
		cookie = death->cookie;
		if (w->type == CBINDER_WORK_CLEAR_DEATH_NOTIFICATION) {
			cmd = BR_CLEAR_DEATH_NOTIFICATION_DONE;
			spin_unlock(&ctx->lock);
			kfree(death);
		} else {
			cmd = BR_DEAD_BINDER;
			list_add_tail(&w->entry, &proc->delivered_death);
			spin_unlock(&ctx->lock);
		}
		if (cbinder_put_cmd(proc, &ptr, cmd) ||
		    put_user(cookie, (binder_uintptr_t __user *)ptr))
			return -EFAULT;
		ptr += sizeof(binder_uintptr_t);
		/* Stop at a death, as the kernel's binder does. */
		if (cmd == BR_DEAD_BINDER)
			ret = 1;
		break;
	}
	case CBINDER_WORK_FROZEN_BINDER: {
		struct binder_frozen_state_info info = {};
		struct cbinder_freeze *freeze;

		freeze = container_of(w, struct cbinder_freeze, work);
		info.cookie = freeze->cookie;
		info.is_frozen = freeze->is_frozen;
		freeze->sent = true;
		list_add_tail(&w->entry, &proc->delivered_freeze);
		spin_unlock(&ctx->lock);
		if (cbinder_put_cmd(proc, &ptr, BR_FROZEN_BINDER) ||
		    copy_to_user(ptr, &info, sizeof(info)))
			return -EFAULT;
		ptr += sizeof(info);
		/* It may make user space call: stop, as for a death. */
		ret = 1;
		break;
	}
	case CBINDER_WORK_CLEAR_FREEZE_NOTIFICATION: {
		binder_uintptr_t cookie;

		cookie = container_of(w, struct cbinder_freeze, work)->cookie;
		proc->freeze_clearing--;
		spin_unlock(&ctx->lock);
		kfree(container_of(w, struct cbinder_freeze, work));
		if (cbinder_put_cmd(proc, &ptr,
				    BR_CLEAR_FREEZE_NOTIFICATION_DONE) ||
		    put_user(cookie, (binder_uintptr_t __user *)ptr))
			return -EFAULT;
		ptr += sizeof(binder_uintptr_t);
		break;
	}
	default:
		spin_unlock(&ctx->lock);
		WARN_ONCE(1, "cask_binder: work type %d\n", w->type);
		break;
	}
	*ptrp = ptr;
	return ret;
}

static int cbinder_thread_read(struct cbinder_proc *proc,
			       struct cbinder_thread *thread,
			       binder_uintptr_t binder_buffer, size_t size,
			       binder_size_t *consumed, bool non_block)
{
	void __user *buffer = u64_to_user_ptr(binder_buffer);
	void __user *ptr = buffer + *consumed;
	void __user *end = buffer + size;
	bool wait_for_proc_work, has_work;
	int ret = 0;

	if (*consumed == 0 && cbinder_put_cmd(proc, &ptr, BR_NOOP))
		return -EFAULT;

retry:
	spin_lock(&proc->inner_lock);
	wait_for_proc_work = cbinder_available_for_proc_work_ilocked(thread);
	has_work = cbinder_has_work_ilocked(thread, wait_for_proc_work);
	spin_unlock(&proc->inner_lock);

	if (wait_for_proc_work)
		cbinder_set_nice(proc, proc->default_priority);
	if (!has_work) {
		if (non_block)
			return -EAGAIN;
		ret = cbinder_wait_for_work(thread, wait_for_proc_work);
		if (ret)
			return ret;
	}

	for (;;) {
		struct cbinder_transaction *t;
		struct cbinder_work *w;
		int i;

		spin_lock(&proc->inner_lock);
		w = cbinder_next_work_ilocked(thread, wait_for_proc_work);
		if (!w) {
			bool again = ptr - buffer == sizeof(u32) &&
				     !thread->need_return;

			thread->process_todo = false;
			spin_unlock(&proc->inner_lock);
			if (!again)
				break;
			/*
			 * The work we were woken for went to another thread
			 * or was dropped: wait again. Never go round without
			 * a way out: a signal ends the read (SIGKILL, the
			 * freezer), and we let others run.
			 */
			if (signal_pending(current))
				return -EINTR;
			cond_resched();
			goto retry;
		}
		if (end - ptr < sizeof(struct binder_transaction_data_secctx) +
				sizeof(u32)) {
			spin_unlock(&proc->inner_lock);
			break;
		}
		if (!cbinder_inner_work(w)) {
			/* ctx->lock first: taken again there. */
			spin_unlock(&proc->inner_lock);
			ret = cbinder_read_ctx_work(thread, wait_for_proc_work,
						    &ptr);
			if (ret < 0)
				return ret;
			if (ret) {
				ret = 0;
				goto out;
			}
			goto next;
		}
		cbinder_take_work_ilocked(thread, w);
		spin_unlock(&proc->inner_lock);

		switch (w->type) {
		case CBINDER_WORK_TRANSACTION:
			t = container_of(w, struct cbinder_transaction, work);
			ret = cbinder_deliver_transaction(thread, t, ptr);
			if (ret < 0)
				goto out;
			if (!ret)
				break;
			ptr += ret;
			ret = 0;
			/* One transaction per read, as user space expects. */
			goto out;
		case CBINDER_WORK_TRANSACTION_COMPLETE:
		case CBINDER_WORK_TRANSACTION_ONEWAY_SPAM_SUSPECT:
		case CBINDER_WORK_TRANSACTION_PENDING:
			/*
			 * Suspected whether or not the sender asked to be
			 * told, as the kernel's binder: the report it did not
			 * take is not made again.
			 */
			i = BR_TRANSACTION_COMPLETE;
			if (w->type == CBINDER_WORK_TRANSACTION_ONEWAY_SPAM_SUSPECT &&
			    READ_ONCE(proc->oneway_spam_detection))
				i = BR_ONEWAY_SPAM_SUSPECT;
			else if (w->type == CBINDER_WORK_TRANSACTION_PENDING)
				i = BR_TRANSACTION_PENDING_FROZEN;
			kfree(w);
			if (cbinder_put_cmd(proc, &ptr, i))
				return -EFAULT;
			break;
		default:
			/* cbinder_inner_work() and this switch disagree. */
			WARN_ONCE(1, "cask_binder: work type %d\n", w->type);
			break;
		}
next:
		/*
		 * Work that gives the reader nothing (undeliverable calls) or
		 * little (clear notices) can pile up without bound: one read
		 * must not keep the CPU or outlive SIGKILL over it.
		 */
		cond_resched();
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto out;
		}
	}
out:
	*consumed = ptr - buffer;
	/*
	 * A read that fails returns nothing user space will look at: a
	 * request for a thread made in it would never be answered, and no
	 * other would ever be made (requested_threads stays up).
	 */
	if (ret < 0)
		return ret;
	spin_lock(&proc->inner_lock);
	if (proc->requested_threads == 0 &&
	    list_empty(&proc->waiting_threads) &&
	    proc->requested_threads_started < proc->max_threads &&
	    (thread->looper & (CBINDER_LOOPER_REGISTERED |
			       CBINDER_LOOPER_ENTERED))) {
		proc->requested_threads++;
		spin_unlock(&proc->inner_lock);
		/* In the place of the first BR_NOOP. */
		cbinder_count_br(proc, BR_SPAWN_LOOPER);
		if (put_user(BR_SPAWN_LOOPER, (u32 __user *)buffer)) {
			spin_lock(&proc->inner_lock);
			proc->requested_threads--;
			spin_unlock(&proc->inner_lock);
			return -EFAULT;
		}
	} else {
		spin_unlock(&proc->inner_lock);
	}
	return ret;
}

static int cbinder_thread_write(struct cbinder_proc *proc,
				struct cbinder_thread *thread,
				binder_uintptr_t binder_buffer, size_t size,
				binder_size_t *consumed)
{
	void __user *buffer = u64_to_user_ptr(binder_buffer);
	void __user *ptr = buffer + *consumed;
	void __user *end = buffer + size;
	struct cbinder_context *ctx = proc->ctx;
	u32 cmd;

	while (ptr < end && READ_ONCE(thread->return_error.cmd) == BR_OK) {
		if (get_user(cmd, (u32 __user *)ptr))
			return -EFAULT;
		ptr += sizeof(u32);
		if (_IOC_NR(cmd) < ARRAY_SIZE(proc->ctx->bc->stats_bc))
			atomic_long_inc(&proc->ctx->bc->stats_bc[_IOC_NR(cmd)]);

		switch (cmd) {
		case BC_INCREFS:
		case BC_ACQUIRE:
		case BC_RELEASE:
		case BC_DECREFS: {
			struct cbinder_ref *new_ref = NULL;
			bool strong = cmd == BC_ACQUIRE || cmd == BC_RELEASE;
			bool inc = cmd == BC_INCREFS || cmd == BC_ACQUIRE;
			struct mem_cgroup *old;
			u32 target;
			int err;

			if (get_user(target, (u32 __user *)ptr))
				return -EFAULT;
			ptr += sizeof(u32);
			spin_lock(&ctx->lock);
			err = cbinder_update_ref_locked(proc, target, inc,
							strong, &new_ref);
			spin_unlock(&ctx->lock);
			if (err == -EAGAIN) {
				old = set_active_memcg(proc->memcg);
				new_ref = kzalloc(sizeof(*new_ref),
						  GFP_KERNEL_ACCOUNT);
				set_active_memcg(old);
				if (!new_ref)
					break;
				spin_lock(&ctx->lock);
				err = cbinder_update_ref_locked(proc, target,
								inc, strong,
								&new_ref);
				spin_unlock(&ctx->lock);
				kfree(new_ref);
			}
			/* As the kernel's binder: this one stops the write. */
			if (err == -EPERM)
				return -EINVAL;
			if (err)
				pr_debug("%d: refcount %#x on handle %u: %d\n",
					 current->pid, cmd, target, err);
			break;
		}
		case BC_INCREFS_DONE:
		case BC_ACQUIRE_DONE: {
			struct binder_ptr_cookie pc;
			struct cbinder_node *node;
			bool strong = cmd == BC_ACQUIRE_DONE;

			if (copy_from_user(&pc, ptr, sizeof(pc)))
				return -EFAULT;
			ptr += sizeof(pc);
			spin_lock(&ctx->lock);
			node = cbinder_get_node_locked(proc, pc.ptr);
			if (node && node->cookie == pc.cookie &&
			    (strong ? node->pending_strong_ref :
				      node->pending_weak_ref)) {
				if (strong)
					node->pending_strong_ref = 0;
				else
					node->pending_weak_ref = 0;
				cbinder_dec_node_locked(node, strong, false);
			}
			spin_unlock(&ctx->lock);
			break;
		}
		case BC_ATTEMPT_ACQUIRE:
		case BC_ACQUIRE_RESULT:
			pr_debug("%d: unsupported command %#x\n",
				 current->pid, cmd);
			return -EINVAL;
		case BC_FREE_BUFFER: {
			struct cbinder_buffer *buf;
			binder_uintptr_t data_ptr;

			if (get_user(data_ptr, (binder_uintptr_t __user *)ptr))
				return -EFAULT;
			ptr += sizeof(data_ptr);
			buf = cbinder_alloc_prepare_to_free(&proc->alloc,
							    data_ptr);
			if (IS_ERR(buf))
				break;
			cbinder_free_buffer(proc, thread, buf, false);
			break;
		}
		case BC_TRANSACTION_SG:
		case BC_REPLY_SG: {
			struct binder_transaction_data_sg tr;

			if (copy_from_user(&tr, ptr, sizeof(tr)))
				return -EFAULT;
			ptr += sizeof(tr);
			cbinder_transaction(proc, thread, &tr.transaction_data,
					    cmd == BC_REPLY_SG, tr.buffers_size);
			break;
		}
		case BC_TRANSACTION:
		case BC_REPLY: {
			struct binder_transaction_data tr;

			if (copy_from_user(&tr, ptr, sizeof(tr)))
				return -EFAULT;
			ptr += sizeof(tr);
			cbinder_transaction(proc, thread, &tr,
					    cmd == BC_REPLY, 0);
			break;
		}
		case BC_REGISTER_LOOPER:
			spin_lock(&proc->inner_lock);
			if (thread->looper & CBINDER_LOOPER_ENTERED) {
				thread->looper |= CBINDER_LOOPER_INVALID;
			} else if (proc->requested_threads == 0) {
				thread->looper |= CBINDER_LOOPER_INVALID;
			} else {
				proc->requested_threads--;
				proc->requested_threads_started++;
			}
			thread->looper |= CBINDER_LOOPER_REGISTERED;
			spin_unlock(&proc->inner_lock);
			break;
		case BC_ENTER_LOOPER:
			spin_lock(&proc->inner_lock);
			if (thread->looper & CBINDER_LOOPER_REGISTERED)
				thread->looper |= CBINDER_LOOPER_INVALID;
			thread->looper |= CBINDER_LOOPER_ENTERED;
			spin_unlock(&proc->inner_lock);
			break;
		case BC_EXIT_LOOPER:
			spin_lock(&proc->inner_lock);
			thread->looper |= CBINDER_LOOPER_EXITED;
			spin_unlock(&proc->inner_lock);
			break;
		case BC_REQUEST_DEATH_NOTIFICATION:
		case BC_CLEAR_DEATH_NOTIFICATION: {
			u32 target;
			binder_uintptr_t cookie;

			if (get_user(target, (u32 __user *)ptr))
				return -EFAULT;
			ptr += sizeof(u32);
			if (get_user(cookie, (binder_uintptr_t __user *)ptr))
				return -EFAULT;
			ptr += sizeof(cookie);
			if (cbinder_request_death(proc, thread, cmd, target,
						  cookie) == -ENOMEM)
				return -ENOMEM;
			break;
		}
		case BC_DEAD_BINDER_DONE: {
			binder_uintptr_t cookie;

			if (get_user(cookie, (binder_uintptr_t __user *)ptr))
				return -EFAULT;
			ptr += sizeof(cookie);
			cbinder_dead_binder_done(proc, thread, cookie);
			break;
		}
		case BC_REQUEST_FREEZE_NOTIFICATION:
		case BC_CLEAR_FREEZE_NOTIFICATION: {
			struct binder_handle_cookie hc;
			int err;

			if (copy_from_user(&hc, ptr, sizeof(hc)))
				return -EFAULT;
			ptr += sizeof(hc);
			/* Misuse stops the write, as in the kernel's binder. */
			err = cbinder_request_freeze(proc, cmd, hc.handle,
						     hc.cookie);
			if (err)
				return err;
			break;
		}
		case BC_FREEZE_NOTIFICATION_DONE: {
			binder_uintptr_t cookie;
			int err;

			if (get_user(cookie, (binder_uintptr_t __user *)ptr))
				return -EFAULT;
			ptr += sizeof(cookie);
			err = cbinder_freeze_done(proc, cookie);
			if (err)
				return err;
			break;
		}
		default:
			pr_debug("%d: unknown command %#x\n", current->pid, cmd);
			return -EINVAL;
		}
		*consumed = ptr - buffer;
		/*
		 * The buffer may be gigabytes of commands (one page mapped
		 * many times): let others run, and let SIGKILL end the write,
		 * whose consumed part is told as for any other error.
		 */
		cond_resched();
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}

static int cbinder_ioctl_write_read(struct file *file, unsigned int cmd,
				    unsigned long arg,
				    struct cbinder_thread *thread)
{
	struct cbinder_proc *proc = file->private_data;
	void __user *ubuf = (void __user *)arg;
	struct binder_write_read bwr;
	int ret = 0;

	if (_IOC_SIZE(cmd) != sizeof(bwr))
		return -EINVAL;
	if (copy_from_user(&bwr, ubuf, sizeof(bwr)))
		return -EFAULT;
	if (bwr.write_size > 0) {
		ret = cbinder_thread_write(proc, thread, bwr.write_buffer,
					   bwr.write_size, &bwr.write_consumed);
		if (ret < 0) {
			bwr.read_consumed = 0;
			if (copy_to_user(ubuf, &bwr, sizeof(bwr)))
				ret = -EFAULT;
			return ret;
		}
	}
	if (bwr.read_size > 0) {
		ret = cbinder_thread_read(proc, thread, bwr.read_buffer,
					  bwr.read_size, &bwr.read_consumed,
					  file->f_flags & O_NONBLOCK);
		/*
		 * Work this thread left for others: wake one. Looked at
		 * without the lock first, the common case being none.
		 */
		if (!list_empty_careful(&proc->todo)) {
			spin_lock(&proc->inner_lock);
			if (!list_empty(&proc->todo))
				cbinder_wakeup_proc_ilocked(proc, false);
			spin_unlock(&proc->inner_lock);
		}
		if (ret < 0) {
			if (copy_to_user(ubuf, &bwr, sizeof(bwr)))
				ret = -EFAULT;
			return ret;
		}
	}
	if (copy_to_user(ubuf, &bwr, sizeof(bwr)))
		return -EFAULT;
	return 0;
}

static int cbinder_ioctl_set_ctx_mgr(struct cbinder_proc *proc,
				     struct flat_binder_object *fbo)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_node *new_node, *node;
	struct mem_cgroup *old;
	kuid_t euid = current_euid();
	int ret;

	ret = security_binder_set_context_mgr(proc->cred);
	if (ret < 0)
		return ret;
	old = set_active_memcg(proc->memcg);
	new_node = kzalloc(sizeof(*new_node), GFP_KERNEL_ACCOUNT);
	set_active_memcg(old);
	if (!new_node)
		return -ENOMEM;

	spin_lock(&ctx->lock);
	if (ctx->mgr_node) {
		ret = -EBUSY;
		goto unlock;
	}
	if (uid_valid(ctx->mgr_uid) && !uid_eq(ctx->mgr_uid, euid)) {
		ret = -EPERM;
		goto unlock;
	}
	ctx->mgr_uid = euid;
	node = cbinder_new_node_locked(proc, new_node,
				       fbo ? fbo->binder : 0,
				       fbo ? fbo->cookie : 0,
				       fbo ? fbo->flags : 0);
	if (node != new_node) {
		/* A node at that address exists: make it the manager. */
		kfree(new_node);
		new_node = NULL;
	} else {
		new_node = NULL;
	}
	node->local_weak_refs++;
	node->local_strong_refs++;
	node->has_strong_ref = 1;
	node->has_weak_ref = 1;
	ctx->mgr_node = node;
unlock:
	spin_unlock(&ctx->lock);
	kfree(new_node);
	return ret;
}

static int cbinder_ioctl_node_info_for_ref(struct cbinder_proc *proc,
					   void __user *ubuf)
{
	struct cbinder_context *ctx = proc->ctx;
	struct binder_node_info_for_ref info;
	struct cbinder_ref *ref;
	int ret = 0;

	if (copy_from_user(&info, ubuf, sizeof(info)))
		return -EFAULT;
	if (info.strong_count || info.weak_count || info.reserved1 ||
	    info.reserved2 || info.reserved3)
		return -EINVAL;
	spin_lock(&ctx->lock);
	if (!ctx->mgr_node || ctx->mgr_node->proc != proc) {
		ret = -EPERM;
		goto unlock;
	}
	ref = cbinder_get_ref_locked(proc, info.handle, false);
	if (!ref) {
		ret = -EINVAL;
		goto unlock;
	}
	info.strong_count = ref->node->local_strong_refs +
			    ref->node->internal_strong_refs;
	info.weak_count = ref->node->local_weak_refs;
unlock:
	spin_unlock(&ctx->lock);
	if (!ret && copy_to_user(ubuf, &info, sizeof(info)))
		ret = -EFAULT;
	return ret;
}

static int cbinder_ioctl_node_debug_info(struct cbinder_proc *proc,
					 void __user *ubuf)
{
	struct cbinder_context *ctx = proc->ctx;
	struct binder_node_debug_info info;
	struct cbinder_node *node;
	binder_uintptr_t after;
	struct rb_node *n;

	if (copy_from_user(&info, ubuf, sizeof(info)))
		return -EFAULT;
	after = info.ptr;
	memset(&info, 0, sizeof(info));
	spin_lock(&ctx->lock);
	for (n = rb_first(&proc->nodes); n; n = rb_next(n)) {
		node = rb_entry(n, struct cbinder_node, rb_node);
		if (node->ptr > after) {
			info.ptr = node->ptr;
			info.cookie = node->cookie;
			info.has_strong_ref = node->has_strong_ref;
			info.has_weak_ref = node->has_weak_ref;
			break;
		}
	}
	spin_unlock(&ctx->lock);
	if (copy_to_user(ubuf, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

/*
 * The processes a freeze request names: the binder files of one cell
 * opened by one thread group. @procs NULL: only count them (@n); else
 * take a reference on up to @max of them.
 */
struct cbinder_pid_procs {
	struct pid *pid;
	struct cbinder_proc **procs;
	unsigned int n;
	unsigned int max;
};

static int cbinder_collect_procs(struct cbinder_context *ctx, void *arg)
{
	struct cbinder_pid_procs *pp = arg;
	struct cbinder_proc *proc;

	spin_lock(&ctx->lock);
	list_for_each_entry(proc, &ctx->procs, entry) {
		if (proc->pid != pp->pid)
			continue;
		if (pp->procs) {
			if (pp->n == pp->max)
				break;
			refcount_inc(&proc->refcount);
			pp->procs[pp->n] = proc;
		}
		pp->n++;
	}
	spin_unlock(&ctx->lock);
	return 0;
}

/*
 * The binder processes of the caller's cell whose thread group has @nr
 * as its pid in the caller's pid namespace, each with a reference held.
 * Deliberately not the kernel's binder's rule (every binder process of
 * the machine whose global pid is @nr): a container must not find, let
 * alone freeze, a process outside its cell by guessing a number.
 * Returns how many (a kcalloc()ed array in *@procsp), or -EINVAL when
 * none, as the kernel's binder answers an unknown pid.
 */
static int cbinder_find_procs(struct cbinder_proc *proc, pid_t nr,
			      struct cbinder_proc ***procsp)
{
	struct cbinder_cell *bc = proc->ctx->bc;
	struct cbinder_pid_procs pp = {};
	int ret = -EINVAL;

	pp.pid = find_get_pid(nr);
	if (!pp.pid)
		return -EINVAL;
	cbinder_cell_walk_contexts(bc, cbinder_collect_procs, &pp);
	if (!pp.n)
		goto put_pid;
	pp.max = pp.n;
	pp.n = 0;
	pp.procs = kcalloc(pp.max, sizeof(*pp.procs), GFP_KERNEL);
	if (!pp.procs) {
		ret = -ENOMEM;
		goto put_pid;
	}
	cbinder_cell_walk_contexts(bc, cbinder_collect_procs, &pp);
	if (!pp.n) {
		kfree(pp.procs);
		goto put_pid;
	}
	*procsp = pp.procs;
	ret = pp.n;
put_pid:
	put_pid(pp.pid);
	return ret;
}

/*
 * Transactions are queued to @proc or handled by it, or a thread of it is
 * in a sync call (either side of it), as the kernel's binder counts them.
 */
static bool cbinder_txns_pending_locked(struct cbinder_proc *proc)
{
	struct cbinder_thread *thread;
	struct rb_node *n;

	lockdep_assert_held(&proc->ctx->lock);
	if (proc->outstanding_txns)
		return true;
	for (n = rb_first(&proc->threads); n; n = rb_next(n)) {
		thread = rb_entry(n, struct cbinder_thread, rb_node);
		if (thread->transaction_stack)
			return true;
	}
	return false;
}

/*
 * Tell the holders of references to @proc's nodes that it was frozen or
 * thawed (those that asked, BC_REQUEST_FREEZE_NOTIFICATION): a node per
 * step, found again by its address after the lock was dropped. The state
 * told is read at each step, so that of a freeze and a thaw racing, the
 * one done last is what every holder is told last.
 */
static void cbinder_notify_freeze(struct cbinder_proc *proc)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_node *node;
	struct cbinder_ref *ref;
	binder_uintptr_t ptr = 0;
	unsigned int steps = 0;

	spin_lock(&ctx->lock);
	while ((node = cbinder_node_from_locked(proc, ptr))) {
		hlist_for_each_entry(ref, &node->refs, node_entry)
			cbinder_freeze_changed_locked(ref,
						      proc->notified_frozen);
		if (node->ptr == U64_MAX)
			break;
		ptr = node->ptr + 1;
		cbinder_drain_step_locked(ctx, &steps, 1);
	}
	spin_unlock(&ctx->lock);
}

/* Nothing is queued to a process being frozen, nor handled by it. */
static bool cbinder_freeze_drained(struct cbinder_proc *proc)
{
	bool drained;

	spin_lock(&proc->ctx->lock);
	drained = !proc->outstanding_txns;
	spin_unlock(&proc->ctx->lock);
	return drained;
}

/*
 * Freeze or thaw one process, as the kernel's binder: frozen at once (new
 * sync calls fail from here on), then, with a timeout, wait without the
 * lock for what it was sent to end; a transaction still outstanding, or
 * a thread still in a sync call, then makes the freeze fail with EAGAIN
 * and be undone. Callers already asleep in a sync call to it are not
 * disturbed: they are answered as before.
 */
static int cbinder_freeze_proc(struct cbinder_proc *proc,
			       const struct binder_freeze_info *info)
{
	struct cbinder_context *ctx = proc->ctx;
	long ret = 0;
	bool told;

	spin_lock(&ctx->lock);
	proc->sync_recv = false;
	proc->async_recv = false;
	proc->is_frozen = info->enable;
	if (!info->enable)
		proc->notified_frozen = false;
	spin_unlock(&ctx->lock);
	if (!info->enable) {
		cbinder_notify_freeze(proc);
		return 0;
	}

	if (info->timeout_ms > 0)
		ret = wait_event_interruptible_timeout(proc->freeze_wait,
						       cbinder_freeze_drained(proc),
						       msecs_to_jiffies(info->timeout_ms));
	spin_lock(&ctx->lock);
	if (ret >= 0 && cbinder_txns_pending_locked(proc))
		ret = -EAGAIN;
	/*
	 * Frozen only now: a notice asked for while the freeze waited told
	 * thawed, which a failed freeze could never take back. A failed
	 * freeze of a process frozen before thaws it: that is told.
	 */
	told = proc->notified_frozen;
	if (ret < 0) {
		proc->is_frozen = false;
		proc->notified_frozen = false;
	} else {
		proc->notified_frozen = proc->is_frozen;
	}
	spin_unlock(&ctx->lock);
	if (ret >= 0 || told)
		cbinder_notify_freeze(proc);
	return ret < 0 ? ret : 0;
}

static int cbinder_ioctl_freeze(struct cbinder_proc *proc, void __user *ubuf)
{
	struct binder_freeze_info info;
	struct cbinder_proc **procs;
	int i, n, ret = 0;

	if (copy_from_user(&info, ubuf, sizeof(info)))
		return -EFAULT;
	n = cbinder_find_procs(proc, info.pid, &procs);
	if (n < 0)
		return n;
	/* As the kernel's binder: the first failure leaves the rest. */
	for (i = 0; i < n; i++) {
		if (!ret)
			ret = cbinder_freeze_proc(procs[i], &info);
		cbinder_proc_dec_tmpref(procs[i]);
	}
	kfree(procs);
	return ret;
}

struct cbinder_frozen_query {
	struct pid *pid;
	struct binder_frozen_status_info *info;
	bool found;
};

static int cbinder_frozen_info(struct cbinder_context *ctx, void *arg)
{
	struct cbinder_frozen_query *q = arg;
	struct cbinder_proc *proc;

	spin_lock(&ctx->lock);
	list_for_each_entry(proc, &ctx->procs, entry) {
		if (proc->pid != q->pid)
			continue;
		q->found = true;
		q->info->sync_recv |= proc->sync_recv |
				      cbinder_txns_pending_locked(proc) << 1;
		q->info->async_recv |= proc->async_recv;
	}
	spin_unlock(&ctx->lock);
	return 0;
}

/* The same processes as BINDER_FREEZE finds (cbinder_find_procs()). */
static int cbinder_ioctl_frozen_info(struct cbinder_proc *proc,
				     void __user *ubuf)
{
	struct binder_frozen_status_info info;
	struct cbinder_frozen_query q = { .info = &info };

	if (copy_from_user(&info, ubuf, sizeof(info)))
		return -EFAULT;
	info.sync_recv = 0;
	info.async_recv = 0;
	q.pid = find_get_pid(info.pid);
	if (!q.pid)
		return -EINVAL;
	cbinder_cell_walk_contexts(proc->ctx->bc, cbinder_frozen_info, &q);
	put_pid(q.pid);
	if (!q.found)
		return -EINVAL;
	if (copy_to_user(ubuf, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

static long cbinder_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct cbinder_proc *proc = file->private_data;
	struct cbinder_context *ctx = proc->ctx;
	void __user *ubuf = (void __user *)arg;
	struct cbinder_thread *thread;
	long ret;

	if (!cbinder_proc_may_use(proc))
		return -EPERM;
	thread = cbinder_get_thread(proc);
	if (!thread)
		return -ENOMEM;

	switch (cmd) {
	case BINDER_WRITE_READ:
		ret = cbinder_ioctl_write_read(file, cmd, arg, thread);
		break;
	case BINDER_SET_MAX_THREADS: {
		u32 max_threads;

		if (copy_from_user(&max_threads, ubuf, sizeof(max_threads))) {
			ret = -EINVAL;
			break;
		}
		spin_lock(&proc->inner_lock);
		proc->max_threads = max_threads;
		spin_unlock(&proc->inner_lock);
		ret = 0;
		break;
	}
	case BINDER_SET_CONTEXT_MGR_EXT: {
		struct flat_binder_object fbo;

		if (copy_from_user(&fbo, ubuf, sizeof(fbo))) {
			ret = -EINVAL;
			break;
		}
		ret = cbinder_ioctl_set_ctx_mgr(proc, &fbo);
		break;
	}
	case BINDER_SET_CONTEXT_MGR:
		ret = cbinder_ioctl_set_ctx_mgr(proc, NULL);
		break;
	case BINDER_THREAD_EXIT:
		spin_lock(&ctx->lock);
		cbinder_thread_release_locked(proc, thread);
		spin_unlock(&ctx->lock);
		cbinder_release_work(proc, &thread->todo);
		cbinder_thread_dec_tmpref(thread);
		thread = NULL;
		ret = 0;
		break;
	case BINDER_VERSION: {
		struct binder_version __user *ver = ubuf;

		if (_IOC_SIZE(cmd) != sizeof(*ver) ||
		    put_user(BINDER_CURRENT_PROTOCOL_VERSION,
			     &ver->protocol_version))
			ret = -EINVAL;
		else
			ret = 0;
		break;
	}
	case BINDER_GET_NODE_INFO_FOR_REF:
		ret = cbinder_ioctl_node_info_for_ref(proc, ubuf);
		break;
	case BINDER_GET_NODE_DEBUG_INFO:
		ret = cbinder_ioctl_node_debug_info(proc, ubuf);
		break;
	case BINDER_GET_EXTENDED_ERROR: {
		struct binder_extended_error ee;

		/* Read once, as the kernel's binder: even if the copy fails. */
		spin_lock(&ctx->lock);
		ee = thread->ee;
		thread->ee.id = 0;
		thread->ee.command = BR_OK;
		thread->ee.param = 0;
		spin_unlock(&ctx->lock);
		ret = copy_to_user(ubuf, &ee, sizeof(ee)) ? -EFAULT : 0;
		break;
	}
	case BINDER_ENABLE_ONEWAY_SPAM_DETECTION: {
		u32 enable;

		if (copy_from_user(&enable, ubuf, sizeof(enable))) {
			ret = -EFAULT;
			break;
		}
		spin_lock(&ctx->lock);
		WRITE_ONCE(proc->oneway_spam_detection, enable);
		spin_unlock(&ctx->lock);
		ret = 0;
		break;
	}
	case BINDER_FREEZE:
		ret = cbinder_ioctl_freeze(proc, ubuf);
		break;
	case BINDER_GET_FROZEN_INFO:
		ret = cbinder_ioctl_frozen_info(proc, ubuf);
		break;
	default:
		ret = -EINVAL;
		break;
	}
	/* Set only for a new thread and by flush: rarely worth the lock. */
	if (thread && READ_ONCE(thread->need_return)) {
		spin_lock(&proc->inner_lock);
		thread->need_return = false;
		spin_unlock(&proc->inner_lock);
	}
	return ret;
}

static int cbinder_flush(struct file *file, fl_owner_t id)
{
	struct cbinder_proc *proc = file->private_data;
	struct cbinder_thread *thread;
	struct rb_node *n;

	/*
	 * Every close of every dup runs this: a task of another cell that
	 * was passed the file could otherwise keep the owner's threads
	 * spinning and its locks busy. Once the cell is unlinked no
	 * thread sleeps here (cbinder_proc_drain() woke them, and
	 * cbinder_wait_for_work() sleeps no more), so nobody needs a kick.
	 */
	if (!cbinder_proc_may_use(proc))
		return 0;
	/* Send every thread of the process back to user space. */
	spin_lock(&proc->inner_lock);
	for (n = rb_first(&proc->threads); n; n = rb_next(n)) {
		thread = rb_entry(n, struct cbinder_thread, rb_node);
		thread->need_return = true;
		if (thread->looper & CBINDER_LOOPER_WAITING)
			wake_up_interruptible(&thread->wait);
	}
	spin_unlock(&proc->inner_lock);
	return 0;
}

const struct file_operations cbinder_fops = {
	.owner = THIS_MODULE,
	.open = cbinder_open,
	.release = cbinder_release,
	.mmap = cbinder_mmap,
	.poll = cbinder_poll,
	.unlocked_ioctl = cbinder_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.flush = cbinder_flush,
};
