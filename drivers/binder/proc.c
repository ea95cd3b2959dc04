// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder processes and threads: open, release, mmap, poll, the
 * ioctls (BINDER_WRITE_READ hands its halves to write.c and read.c), and
 * the draining of an unlinked cell's contexts.
 *
 * Locking: ctx->lock and, inside it, one process's inner lock (see
 * binder.h) are the locks of the protocol. They are spinlocks, never held
 * across a user copy, an allocation that may sleep, an fd operation or the
 * allocator (alloc->lock, a mutex, is taken only without them). A process
 * is bound to its opener's cell and context for its life.
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

	spin_lock(&proc->inner_lock);
	thread = cbinder_get_thread_ilocked(proc, NULL);
	spin_unlock(&proc->inner_lock);
	if (thread)
		return thread;
	new_thread = cask_memcg_kzalloc(proc->memcg, sizeof(*new_thread),
					GFP_KERNEL_ACCOUNT);
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
		busy = cbinder_work_queued_locked(proc, &thread->todo);
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

/**
 * cbinder_fs_unlink_cell() - drain the cell's binderfs contexts
 * @bc: the binder state of a cell being unlinked
 *
 * As cbinder_context_unlink() for the embedded contexts: nothing queued
 * in them will be read. Contexts made from here on are made unlinked.
 *
 * Context: process context, cask_core's unlink callback; takes
 * bc->fs_lock, never across cbinder_context_unlink() (which may free
 * processes, whose last put may free their context under bc->fs_lock).
 */
void cbinder_fs_unlink_cell(struct cbinder_cell *bc)
{
	struct cbinder_context *ctx, *prev = NULL;

	mutex_lock(&bc->fs_lock);
	bc->fs_unlinked = true;
	/* The reference held on @ctx keeps it, hence the walk, on the list. */
	list_for_each_entry(ctx, &bc->fs_contexts, fs_entry) {
		if (!refcount_inc_not_zero(&ctx->refcount))
			continue;
		mutex_unlock(&bc->fs_lock);
		if (prev)
			cbinder_context_put(prev);
		cbinder_context_unlink(ctx);
		prev = ctx;
		mutex_lock(&bc->fs_lock);
	}
	mutex_unlock(&bc->fs_lock);
	if (prev)
		cbinder_context_put(prev);
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
	kuid_t euid = current_euid();
	int ret;

	ret = security_binder_set_context_mgr(proc->cred);
	if (ret < 0)
		return ret;
	new_node = cask_memcg_kzalloc(proc->memcg, sizeof(*new_node),
				      GFP_KERNEL_ACCOUNT);
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

	if (copy_from_user(&info, ubuf, sizeof(info)))
		return -EFAULT;
	after = info.ptr;
	memset(&info, 0, sizeof(info));
	spin_lock(&ctx->lock);
	/*
	 * Found down the tree, not by a walk from its first node: a process
	 * with millions of nodes asking for the last would hold the lock,
	 * with preemption off, for the whole walk.
	 */
	node = after == (binder_uintptr_t)-1 ? NULL :
	       cbinder_node_from_locked(proc, after + 1);
	if (node) {
		info.ptr = node->ptr;
		info.cookie = node->cookie;
		info.has_strong_ref = node->has_strong_ref;
		info.has_weak_ref = node->has_weak_ref;
	}
	spin_unlock(&ctx->lock);
	if (copy_to_user(ubuf, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

/*
 * Whether @proc is a file a freeze request (BINDER_FREEZE,
 * BINDER_GET_FROZEN_INFO) from @cell names by @pid: one rule for both.
 */
static bool cbinder_freeze_names(const struct cbinder_proc *proc,
				 const struct pid *pid,
				 const struct cask_cell *cell)
{
	return proc->pid == pid && proc->cell == cell;
}

/*
 * The processes a freeze request names: the binder files of one cell
 * opened by one thread group. @procs NULL: only count them (@n); else
 * take a reference on up to @max of them.
 */
struct cbinder_pid_procs {
	struct pid *pid;
	struct cask_cell *cell;
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
		if (!cbinder_freeze_names(proc, pp->pid, pp->cell))
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
 * alone freeze, a process outside its cell by guessing a number. The
 * contexts walked are those of the caller's context's cell, and of them
 * only the files opened from the caller's cell count: a context of the
 * host's binderfs bound into a container (Waydroid's) holds the
 * container's processes, which the host's own must not freeze there.
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
	pp.cell = proc->cell;
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
	struct cask_cell *cell;
	struct binder_frozen_status_info *info;
	bool found;
};

static int cbinder_frozen_info(struct cbinder_context *ctx, void *arg)
{
	struct cbinder_frozen_query *q = arg;
	struct cbinder_proc *proc;

	spin_lock(&ctx->lock);
	list_for_each_entry(proc, &ctx->procs, entry) {
		if (!cbinder_freeze_names(proc, q->pid, q->cell))
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
	struct cbinder_frozen_query q = { .cell = proc->cell, .info = &info };

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
