// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder transactions: choosing the target, making the buffer in the
 * target's receive area (the objects in it are translated by translate.c),
 * queueing, replies, failures, the release of buffers and of work nobody
 * will read, the files a transaction carries (reserved, installed or
 * dropped) and the priority a call gives the thread that handles it.
 *
 * Locking: ctx->lock (binder.h) for the target, the stacks and the
 * queueing, with the target's inner lock inside it where a todo list or a
 * stack changes (work.c); never held across a user copy, an allocation
 * that may sleep, an fd operation, an LSM hook or the allocator.
 */
#include <linux/cred.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <kunit/visibility.h>
#include <cask/cell.h>

#include "binder.h"

/**
 * cbinder_clamp_nice() - the nice binder may give a thread of a cell
 * @nice: what the protocol asks for
 * @floor: the cell's nice_floor
 *
 * Context: any.
 * Return: @nice, raised to @floor when it asks for more priority.
 */
long cbinder_clamp_nice(long nice, long floor)
{
	return max(nice, floor);
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_clamp_nice);

/**
 * cbinder_set_nice() - give the current thread a priority for a call
 * @proc: its process
 * @nice: the nice asked for
 *
 * As the kernel's binder: what RLIMIT_NICE allows when @nice is not, and
 * never above the cell's nice_floor, so that a guest cannot lift its
 * threads over the host's through binder.
 *
 * Context: process context, no locks held.
 */
void cbinder_set_nice(struct cbinder_proc *proc, long nice)
{
	struct cbinder_cell *own = cask_cell_data(proc->cell, &cbinder_driver);
	int floor = READ_ONCE(proc->ctx->bc->nice_floor);
	long min_nice;

	/*
	 * A binderfs device may be another cell's context: the floors of
	 * both the opener's cell and the context's cell hold.
	 */
	floor = max(floor, READ_ONCE(own->nice_floor));
	nice = cbinder_clamp_nice(nice, floor);
	if (nice == task_nice(current))
		return;
	if (can_nice(current, nice)) {
		set_user_nice(current, nice);
		return;
	}
	min_nice = rlimit_to_nice(rlimit(RLIMIT_NICE));
	if (min_nice <= MAX_NICE)
		set_user_nice(current, max(min_nice, nice));
}

/* What cbinder_reserve_bytes() charged for @buffer. */
static size_t cbinder_buffer_charge(struct cbinder_buffer *buffer)
{
	size_t size = 0;

	/* Cannot overflow: the buffer was allocated with these sizes. */
	cbinder_alloc_buffer_bytes(buffer->data_size, buffer->offsets_size,
				   buffer->extra_size, &size);
	return size;
}

/*
 * Charge @charge bytes to the cell's buffer_bytes if they fit under
 * max_buffer_bytes. Before the allocation, which may sleep: senders that
 * each checked the old total and charged after could all pass at once
 * and overshoot the limit by as many buffers. Compared and added in one
 * step, so that a sender that does not fit never makes another fail.
 */
static bool cbinder_reserve_bytes(struct cbinder_cell *bc, long charge)
{
	long max = READ_ONCE(bc->max_buffer_bytes);
	long cur = atomic_long_read(&bc->buffer_bytes);

	do {
		/* Both are >= 0: the difference cannot overflow. */
		if (charge > max - cur)
			return false;
	} while (!atomic_long_try_cmpxchg(&bc->buffer_bytes, &cur,
					  cur + charge));
	return true;
}

/**
 * cbinder_free_buffer() - release a buffer of a process's receive area
 * @proc: owner
 * @thread: the thread freeing it, or NULL
 * @buffer: the buffer
 * @is_failure: it was never delivered
 *
 * Finishes a one-way transaction (the node's next one-way call may go),
 * drops what its objects hold and returns the space.
 *
 * Context: process context, no locks held.
 */
void cbinder_free_buffer(struct cbinder_proc *proc,
			 struct cbinder_thread *thread,
			 struct cbinder_buffer *buffer, bool is_failure)
{
	struct cbinder_context *ctx = proc->ctx;
	/* No object to release: one hold of the lock does it all. */
	bool no_objects = !buffer->offsets_size;
	struct cbinder_node *node;
	struct cbinder_work *w;

	spin_lock(&ctx->lock);
	if (buffer->transaction) {
		buffer->transaction->buffer = NULL;
		buffer->transaction = NULL;
	}
	node = buffer->target_node;
	if (node && buffer->async) {
		/* The node's next one-way call may go now. */
		w = list_first_entry_or_null(&node->async_todo,
					     struct cbinder_work, entry);
		if (!w) {
			node->has_async_transaction = 0;
		} else {
			list_del_init(&w->entry);
			cbinder_enqueue_proc_work_locked(proc, w, false);
		}
	}
	if (node && no_objects) {
		buffer->target_node = NULL;
		cbinder_put_target_node_locked(node);
		node = NULL;
	}
	spin_unlock(&ctx->lock);

	if (!no_objects)
		cbinder_release_objects(proc, buffer, SIZE_MAX, is_failure);

	if (node) {
		spin_lock(&ctx->lock);
		buffer->target_node = NULL;
		cbinder_put_target_node_locked(node);
		spin_unlock(&ctx->lock);
	}
	atomic_long_sub(cbinder_buffer_charge(buffer), &ctx->bc->buffer_bytes);
	cbinder_alloc_free_buf(&proc->alloc, buffer);
}

/*
 * A buffer that was never queued: undo the first @translated objects and
 * the target node's hold, and return the space. Unlike
 * cbinder_free_buffer() it never starts the node's next one-way call: this
 * buffer was never the one in progress.
 */
static void cbinder_discard_buffer(struct cbinder_proc *proc,
				   struct cbinder_buffer *buffer,
				   size_t translated)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_node *node;

	/* Exactly the objects translated, none if none (CVE-2023-21255). */
	cbinder_release_objects(proc, buffer, translated, true);
	spin_lock(&ctx->lock);
	node = buffer->target_node;
	buffer->target_node = NULL;
	buffer->transaction = NULL;
	if (node)
		cbinder_put_target_node_locked(node);
	spin_unlock(&ctx->lock);
	atomic_long_sub(cbinder_buffer_charge(buffer), &ctx->bc->buffer_bytes);
	/*
	 * The receiver may have these pages mapped: what was copied in,
	 * untranslated (the sender's own addresses among it), must not stay
	 * there for it to read.
	 */
	cbinder_alloc_clear_on_free(&proc->alloc, buffer);
	cbinder_alloc_free_buf(&proc->alloc, buffer);
}

/**
 * cbinder_txn_not_outstanding_locked() - a transaction is no longer its
 *	receiver's
 * @t: the transaction, queued to its receiver or handled by it until now
 *
 * The receiver's count of outstanding transactions drops, and a
 * BINDER_FREEZE waiting for it to reach 0 is woken. Done before @t is
 * freed and when the receiving thread forgets it (the transaction may
 * then outlive the receiver, which must not be touched any more).
 *
 * Context: ctx->lock held; asserted only while @t is outstanding, as its
 * receiver (the only way to the lock) may be gone afterwards.
 */
void cbinder_txn_not_outstanding_locked(struct cbinder_transaction *t)
{
	struct cbinder_proc *proc = t->to_proc;

	if (!t->outstanding)
		return;
	lockdep_assert_held(&proc->ctx->lock);
	t->outstanding = false;
	if (!--proc->outstanding_txns && proc->is_frozen)
		wake_up_interruptible_all(&proc->freeze_wait);
}

/**
 * cbinder_free_transaction_locked() - free a transaction
 * @t: the transaction, off every list and stack
 *
 * Context: ctx->lock held. Not asserted here: @t may have outlived both
 * of its processes, so it may lead to no lock (while its receiver still
 * counts it, cbinder_txn_not_outstanding_locked() asserts).
 */
void cbinder_free_transaction_locked(struct cbinder_transaction *t)
{
	cbinder_txn_not_outstanding_locked(t);
	if (t->buffer)
		t->buffer->transaction = NULL;
	cbinder_drop_fd_fixups(t);
	put_pid(t->sender_pid);
	atomic_long_dec(&t->bc->transactions);
	kfree(t);
}

/**
 * cbinder_send_failed_reply_locked() - fail a sync transaction to its caller
 * @t: the transaction, which is freed
 * @error_code: BR_DEAD_REPLY or BR_FAILED_REPLY
 *
 * If the caller is gone too, the failure goes on to the transaction that
 * caller was handling when it called (its from_parent), and so on: that
 * one's caller still waits for an answer. Every transaction passed is
 * freed; none of them is on a live thread's stack any more.
 *
 * Context: ctx->lock held, no inner lock (takes the caller's). Asserted
 * through the first live caller found: the transactions passed before it
 * may have outlived both of their processes.
 */
void cbinder_send_failed_reply_locked(struct cbinder_transaction *t,
				      u32 error_code)
{
	struct cbinder_transaction *next;
	struct cbinder_thread *from;
	struct cbinder_work *w;

	while (t) {
		from = t->from;
		if (from) {
			lockdep_assert_held(&from->proc->ctx->lock);
			/* Only a caller's newest call can fail to it. */
			if (WARN_ON_ONCE(from->transaction_stack != t))
				return;
			w = NULL;
			if (from->reply_error.cmd == BR_OK) {
				from->reply_error.cmd = error_code;
				w = &from->reply_error.work;
			}
			/* With the error, if any, in the same hold. */
			cbinder_set_stack_locked(from, t->from_parent, w,
						 false);
			cbinder_free_transaction_locked(t);
			return;
		}
		next = t->from_parent;
		cbinder_free_transaction_locked(t);
		t = next;
	}
}

/**
 * cbinder_release_work_locked() - drop the work of a list that nobody will
 *	read
 * @proc: the process the list belongs to
 * @list: the list
 * @max: at most this many items
 *
 * Sync transactions fail to their callers with BR_DEAD_REPLY.
 *
 * Context: ctx->lock held, no inner lock (takes @proc's for each item).
 * Return: true if items are left (the caller drops the lock and goes on).
 */
bool cbinder_release_work_locked(struct cbinder_proc *proc,
				 struct list_head *list, unsigned int max)
{
	struct cbinder_transaction *t;
	struct cbinder_freeze *freeze;
	struct cbinder_death *death;
	struct cbinder_node *node;
	struct cbinder_work *w;

	lockdep_assert_held(&proc->ctx->lock);
	for (; max; max--) {
		w = cbinder_dequeue_first_work_locked(proc, list);
		if (!w)
			return false;
		switch (w->type) {
		case CBINDER_WORK_TRANSACTION:
			t = container_of(w, struct cbinder_transaction, work);
			if (t->need_reply)
				cbinder_send_failed_reply_locked(t,
								 BR_DEAD_REPLY);
			else
				cbinder_free_transaction_locked(t);
			break;
		case CBINDER_WORK_TRANSACTION_COMPLETE:
		case CBINDER_WORK_TRANSACTION_ONEWAY_SPAM_SUSPECT:
		case CBINDER_WORK_TRANSACTION_PENDING:
			kfree(w);
			break;
		case CBINDER_WORK_RETURN_ERROR:
			container_of(w, struct cbinder_error, work)->cmd = BR_OK;
			break;
		case CBINDER_WORK_NODE:
			node = container_of(w, struct cbinder_node, work);
			cbinder_free_node_locked(node);
			break;
		case CBINDER_WORK_DEAD_BINDER:
			/* Still its reference's: that frees it. */
			break;
		case CBINDER_WORK_DEAD_BINDER_AND_CLEAR:
		case CBINDER_WORK_CLEAR_DEATH_NOTIFICATION:
			death = container_of(w, struct cbinder_death, work);
			/* A cleared notice can still be its reference's. */
			if (death->ref)
				death->ref->death = NULL;
			kfree(death);
			break;
		case CBINDER_WORK_FROZEN_BINDER:
			/* Still its reference's: that frees it. */
			break;
		case CBINDER_WORK_CLEAR_FREEZE_NOTIFICATION:
			freeze = container_of(w, struct cbinder_freeze, work);
			if (freeze->ref)
				freeze->ref->freeze = NULL;
			proc->freeze_clearing--;
			kfree(freeze);
			break;
		}
	}
	return cbinder_work_queued_locked(proc, list);
}

/**
 * cbinder_release_work() - cbinder_release_work_locked() for a whole list,
 *	a batch per lock hold
 * @proc: the process the list belongs to
 * @list: the list, which nobody adds to any more
 *
 * A hostile process can queue millions of items: the lock, a spinlock, is
 * dropped between batches.
 *
 * Context: process context, no locks held.
 */
void cbinder_release_work(struct cbinder_proc *proc, struct list_head *list)
{
	bool more;

	do {
		spin_lock(&proc->ctx->lock);
		more = cbinder_release_work_locked(proc, list,
						   CBINDER_RELEASE_BATCH);
		spin_unlock(&proc->ctx->lock);
		cond_resched();
	} while (more);
}

/**
 * cbinder_drop_fd_fixups() - release the files of an undelivered transaction
 * @t: the transaction
 *
 * Context: any (fput() defers the final close).
 */
void cbinder_drop_fd_fixups(struct cbinder_transaction *t)
{
	struct cbinder_fd_fixup *fixup, *tmp;

	list_for_each_entry_safe(fixup, tmp, &t->fd_fixups, entry) {
		list_del(&fixup->entry);
		if (fixup->file)
			fput(fixup->file);
		kfree(fixup);
	}
}

/**
 * cbinder_reserve_fds() - reserve the receiver's fds for a transaction's
 *	files and write their numbers into the buffer
 * @proc: the receiver (current's process)
 * @t: the transaction
 *
 * Nothing is installed yet: cbinder_install_fds() does that once the
 * transaction has reached user space, cbinder_unreserve_fds() undoes this
 * if it cannot, so a failure leaves no fd behind.
 *
 * Context: process context of the receiver, no locks held.
 * Return: 0 or a negative errno (then nothing stays reserved).
 */
int cbinder_reserve_fds(struct cbinder_proc *proc,
			struct cbinder_transaction *t)
{
	struct cbinder_fd_fixup *fixup;
	int ret;
	u32 fd;

	list_for_each_entry(fixup, &t->fd_fixups, entry) {
		ret = get_unused_fd_flags(O_CLOEXEC);
		if (ret < 0)
			goto unreserve;
		fixup->fd = ret;
		fd = ret;
		ret = cbinder_alloc_copy_to_buffer(&proc->alloc, t->buffer,
						   fixup->offset, &fd,
						   sizeof(fd));
		if (ret)
			goto unreserve;
	}
	return 0;

unreserve:
	cbinder_unreserve_fds(t);
	return ret;
}

/**
 * cbinder_unreserve_fds() - give back what cbinder_reserve_fds() reserved
 * @t: the transaction
 *
 * Context: process context of the receiver, no locks held.
 */
void cbinder_unreserve_fds(struct cbinder_transaction *t)
{
	struct cbinder_fd_fixup *fixup;

	list_for_each_entry(fixup, &t->fd_fixups, entry) {
		if (fixup->fd >= 0)
			put_unused_fd(fixup->fd);
		fixup->fd = -1;
	}
}

/**
 * cbinder_install_fds() - install the reserved fds, now that user space
 *	has the transaction
 * @t: the transaction
 *
 * Context: process context of the receiver, no locks held.
 */
void cbinder_install_fds(struct cbinder_transaction *t)
{
	struct cbinder_fd_fixup *fixup;

	list_for_each_entry(fixup, &t->fd_fixups, entry) {
		fd_install(fixup->fd, fixup->file);
		fixup->file = NULL;
		fixup->fd = -1;
	}
	cbinder_drop_fd_fixups(t);
}

static int cbinder_add_secctx(struct cbinder_txn_ctx *tc, char *secctx,
			      u32 secctx_len)
{
	size_t off = tc->sg_end;

	if (cbinder_alloc_copy_to_buffer(&tc->target_proc->alloc, tc->buffer,
					 off, secctx, secctx_len))
		return -EINVAL;
	tc->t->security_ctx = tc->user_base + off;
	return 0;
}

/*
 * The target of a new transaction and, for a sync call made while the
 * thread handles another, the thread of the target already waiting in
 * that chain (nested calls go back to it).
 */
static u32 cbinder_find_target_locked(struct cbinder_proc *proc,
				      struct cbinder_thread *thread,
				      struct binder_transaction_data *tr,
				      struct cbinder_node **nodep,
				      struct cbinder_thread **threadp,
				      int *param)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_transaction *tmp;
	struct cbinder_node *node;
	struct cbinder_work *w;
	struct cbinder_ref *ref;

	lockdep_assert_held(&ctx->lock);
	*param = -EINVAL;
	if (tr->target.handle) {
		ref = cbinder_get_ref_locked(proc, tr->target.handle, true);
		if (!ref)
			return BR_FAILED_REPLY;
		node = ref->node;
	} else {
		node = ctx->mgr_node;
		if (!node)
			return BR_DEAD_REPLY;
		/* Not from the manager's process, whichever of its files. */
		if (node->proc && node->proc->pid == proc->pid)
			return BR_FAILED_REPLY;
	}
	if (!node->proc)
		return BR_DEAD_REPLY;
	if (node->proc == proc)
		return BR_FAILED_REPLY;
	*nodep = node;
	*threadp = NULL;
	*param = -EPROTO;
	/*
	 * A sync call may not start while a transaction waits at the head
	 * of the thread's own list: that one would wait for this forever.
	 * Its own list, under ctx->lock only: every other writer of it
	 * holds ctx->lock too, and its reader is this thread.
	 */
	w = list_first_entry_or_null(&thread->todo, struct cbinder_work, entry);
	if (!(tr->flags & TF_ONE_WAY) && w &&
	    w->type == CBINDER_WORK_TRANSACTION)
		return BR_FAILED_REPLY;
	*param = 0;
	if (tr->flags & TF_ONE_WAY || !thread->transaction_stack)
		return BR_OK;
	tmp = thread->transaction_stack;
	if (tmp->to_thread != thread) {
		*param = -EPROTO;
		return BR_FAILED_REPLY;
	}
	for (; tmp; tmp = tmp->from_parent) {
		if (tmp->from && tmp->from->proc == node->proc) {
			*threadp = tmp->from;
			break;
		}
	}
	return BR_OK;
}

/*
 * TF_UPDATE_TXN: a queued one-way call that @t makes outdated, as in the
 * kernel's binder: both ask for it, to the same node (@list is its
 * one-way queue), with the same code and flags, from the same sender
 * (thread group).
 */
static struct cbinder_transaction *
cbinder_find_outdated_locked(struct cbinder_transaction *t,
			     struct list_head *list)
{
	struct cbinder_transaction *old;
	struct cbinder_work *w;

	lockdep_assert_held(&t->to_proc->ctx->lock);
	list_for_each_entry(w, list, entry) {
		if (w->type != CBINDER_WORK_TRANSACTION)
			continue;
		old = container_of(w, struct cbinder_transaction, work);
		if (old->code == t->code && old->flags == t->flags &&
		    old->buffer && old->buffer->pid == t->buffer->pid)
			return old;
	}
	return NULL;
}

/**
 * cbinder_transaction() - BC_TRANSACTION, BC_REPLY and their _SG forms
 * @proc: the sender
 * @thread: the sending thread
 * @tr: what user space wrote
 * @reply: a reply
 * @extra_buffers_size: room for scatter-gather buffers (_SG forms)
 *
 * Errors are returned to the thread as BR_FAILED_REPLY, BR_DEAD_REPLY or
 * BR_FROZEN_REPLY (a failed reply: to the caller, and
 * BR_TRANSACTION_COMPLETE to the replier), as the kernel's binder does.
 *
 * Context: process context, no locks held.
 */
void cbinder_transaction(struct cbinder_proc *proc,
			 struct cbinder_thread *thread,
			 struct binder_transaction_data *tr, bool reply,
			 binder_size_t extra_buffers_size)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_cell *bc = ctx->bc;
	struct cbinder_txn_ctx tc = {
		.proc = proc,
		.thread = thread,
		.sg_copies = LIST_HEAD_INIT(tc.sg_copies),
	};
	struct cbinder_thread *target_thread = NULL;
	struct cbinder_node *target_node = NULL;
	struct cbinder_transaction *t = NULL, *in_reply_to = NULL;
	struct cbinder_transaction *outdated = NULL;
	struct cbinder_buffer *buffer = NULL, *outdated_buffer = NULL;
	struct cbinder_work *tcomplete = NULL;
	size_t translated = 0, secctx_size = 0, bytes;
	long saved_priority = 0, charge;
	u32 return_error = BR_OK, secctx_len = 0;
	int return_error_param = 0, debug_id = cbinder_next_debug_id(bc);
	struct cbinder_log_entry log;
	char *secctx = NULL;
	bool frozen;
	u64 extra;
	int ret;

	atomic_long_inc(&bc->transactions_total);
	cbinder_log_begin(&log, proc, thread, tr, reply, debug_id);

	/*
	 * The target first, the memory after, as the kernel's binder: a
	 * reply that cannot be made still ends the replier's part (it gets
	 * BR_TRANSACTION_COMPLETE, its caller the failure).
	 */
	spin_lock(&ctx->lock);
	thread->ee.id = debug_id;
	thread->ee.command = BR_OK;
	thread->ee.param = 0;
	if (reply) {
		in_reply_to = thread->transaction_stack;
		if (!in_reply_to || in_reply_to->to_thread != thread) {
			spin_unlock(&ctx->lock);
			in_reply_to = NULL;
			return_error = BR_FAILED_REPLY;
			return_error_param = -EPROTO;
			goto free_t;
		}
		cbinder_set_stack_locked(thread, in_reply_to->to_parent, NULL,
					 false);
		in_reply_to->to_thread = NULL;
		in_reply_to->to_parent = NULL;
		saved_priority = in_reply_to->saved_priority;
		target_thread = in_reply_to->from;
		if (!target_thread) {
			return_error = BR_DEAD_REPLY;
		} else if (target_thread->transaction_stack != in_reply_to) {
			/*
			 * Still linked below the caller's newer calls: it is
			 * failed or freed when those unwind, not here.
			 */
			return_error = BR_FAILED_REPLY;
			return_error_param = -EPROTO;
			in_reply_to = NULL;
			target_thread = NULL;
		} else {
			tc.target_proc = target_thread->proc;
			refcount_inc(&tc.target_proc->refcount);
			refcount_inc(&target_thread->refcount);
		}
		spin_unlock(&ctx->lock);
		cbinder_set_nice(proc, saved_priority);
		if (return_error != BR_OK)
			goto fail_reply;
	} else {
		return_error = cbinder_find_target_locked(proc, thread, tr,
							  &target_node,
							  &target_thread,
							  &return_error_param);
		if (return_error != BR_OK) {
			spin_unlock(&ctx->lock);
			goto free_t;
		}
		tc.target_proc = target_node->proc;
		refcount_inc(&tc.target_proc->refcount);
		if (target_thread)
			refcount_inc(&target_thread->refcount);
		/*
		 * The buffer holds the node, strong and in memory, until it
		 * is freed, even if the owner dies meanwhile.
		 */
		cbinder_inc_node_locked(target_node, true, false, NULL);
		cbinder_node_tmpref_locked(target_node);
		spin_unlock(&ctx->lock);
		ret = security_binder_transaction(proc->cred,
						  tc.target_proc->cred);
		if (ret) {
			return_error = BR_FAILED_REPLY;
			return_error_param = -EPERM;
			goto put_target;
		}
	}
	cbinder_log_target(&log, tc.target_proc, target_thread, target_node);
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	tcomplete = kzalloc(sizeof(*tcomplete), GFP_KERNEL_ACCOUNT);
	if (!t || !tcomplete) {
		return_error = BR_FAILED_REPLY;
		return_error_param = -ENOMEM;
		goto put_target;
	}
	INIT_LIST_HEAD(&t->fd_fixups);
	INIT_LIST_HEAD(&t->work.entry);
	t->work.type = CBINDER_WORK_TRANSACTION;
	INIT_LIST_HEAD(&tcomplete->entry);
	tcomplete->type = CBINDER_WORK_TRANSACTION_COMPLETE;
	atomic_long_inc(&bc->transactions);
	t->bc = bc;
	t->to_proc = tc.target_proc;
	t->code = tr->code;
	t->flags = tr->flags;
	t->is_reply = reply;
	t->priority = task_nice(current);
	/*
	 * The opener's euid now, as the kernel's binder reports it: a
	 * process that drops privileges after opening the device is seen
	 * with its new identity.
	 */
	t->sender_euid = task_euid(proc->tsk);
	if (!reply && !(tr->flags & TF_ONE_WAY))
		t->sender_pid = get_pid(proc->pid);
	t->debug_id = debug_id;
	tc.t = t;
	tc.in_reply_to = in_reply_to;

	if (target_node && target_node->txn_security_ctx) {
		u32 secid;

		security_cred_getsecid(proc->cred, &secid);
		ret = security_secid_to_secctx(secid, &secctx, &secctx_len);
		if (ret) {
			return_error = BR_FAILED_REPLY;
			return_error_param = ret;
			goto put_target;
		}
		secctx_size = ALIGN(secctx_len, sizeof(u64));
	}

	if (!IS_ALIGNED(tr->offsets_size, sizeof(binder_size_t)) ||
	    !IS_ALIGNED(extra_buffers_size, sizeof(u64)) ||
	    check_add_overflow((u64)extra_buffers_size, (u64)secctx_size,
			       &extra)) {
		return_error = BR_FAILED_REPLY;
		return_error_param = -EINVAL;
		goto put_target;
	}
	/*
	 * Sizes that overflow reserve nothing: the allocation fails on them
	 * (-EINVAL). Otherwise the buffer carries exactly this charge, which
	 * cbinder_free_buffer(), cbinder_discard_buffer() or the process's
	 * release gives back.
	 */
	charge = 0;
	if (cbinder_alloc_buffer_bytes(tr->data_size, tr->offsets_size, extra,
				       &bytes))
		charge = min_t(size_t, bytes, LONG_MAX);
	if (charge && !cbinder_reserve_bytes(bc, charge)) {
		/* The cell's binder memory is used up (max_buffer_bytes). */
		return_error = BR_FAILED_REPLY;
		return_error_param = -ENOSPC;
		goto put_target;
	}
	buffer = cbinder_alloc_new_buf(&tc.target_proc->alloc, tr->data_size,
				       tr->offsets_size, extra,
				       !reply && (tr->flags & TF_ONE_WAY));
	if (IS_ERR(buffer)) {
		atomic_long_sub(charge, &bc->buffer_bytes);
		return_error_param = PTR_ERR(buffer);
		return_error = return_error_param == -ESRCH ? BR_DEAD_REPLY :
							      BR_FAILED_REPLY;
		buffer = NULL;
		goto put_target;
	}
	buffer->debug_id = t->debug_id;
	if (buffer->oneway_spam_suspect)
		tcomplete->type = CBINDER_WORK_TRANSACTION_ONEWAY_SPAM_SUSPECT;
	if (tr->flags & TF_CLEAR_BUF)
		cbinder_alloc_clear_on_free(&tc.target_proc->alloc, buffer);
	buffer->target_node = target_node;
	target_node = NULL;
	tc.buffer = buffer;
	tc.user_base = cbinder_buffer_user(&tc.target_proc->alloc, buffer);
	tc.off_start = ALIGN(tr->data_size, sizeof(u64));
	tc.sg_offset = tc.off_start + ALIGN(tr->offsets_size, sizeof(u64));
	tc.sg_end = tc.sg_offset + extra_buffers_size;
	t->buffer = buffer;

	tc.udata = u64_to_user_ptr(tr->data.ptr.buffer);
	/* The offsets only: the data follows object by object. */
	if (cbinder_alloc_copy_from_user(&tc.target_proc->alloc, buffer,
					 tc.off_start,
					 u64_to_user_ptr(tr->data.ptr.offsets),
					 tr->offsets_size)) {
		return_error = BR_FAILED_REPLY;
		return_error_param = -EFAULT;
		goto release_buffer;
	}
	ret = cbinder_translate_objects(&tc, &translated);
	if (ret) {
		return_error = BR_FAILED_REPLY;
		return_error_param = ret;
		goto release_buffer;
	}
	if (secctx) {
		if (cbinder_add_secctx(&tc, secctx, secctx_len)) {
			return_error = BR_FAILED_REPLY;
			return_error_param = -EINVAL;
			goto release_buffer;
		}
		security_release_secctx(secctx, secctx_len);
		secctx = NULL;
	}

	spin_lock(&ctx->lock);
	/*
	 * A frozen process takes no new sync call; one-way calls are queued
	 * for when it is thawed, and their senders told so. Replies and
	 * calls already queued go through, as in the kernel's binder.
	 */
	frozen = !reply && tc.target_proc->is_frozen;
	if (frozen) {
		if (t->flags & TF_ONE_WAY)
			tc.target_proc->async_recv = true;
		else
			tc.target_proc->sync_recv = true;
	}
	/* Unlinked: its queues were emptied and must stay so. */
	if ((frozen && !(t->flags & TF_ONE_WAY)) || ctx->unlinked ||
	    tc.target_proc->is_dead ||
	    (target_thread && target_thread->is_dead)) {
		spin_unlock(&ctx->lock);
		return_error = frozen ? BR_FROZEN_REPLY : BR_DEAD_REPLY;
		goto release_buffer;
	}
	buffer->transaction = t;
	t->outstanding = true;
	tc.target_proc->outstanding_txns++;
	if (reply) {
		cbinder_enqueue_thread_work_locked(thread, tcomplete, false);
		cbinder_set_stack_locked(target_thread, in_reply_to->from_parent,
					 &t->work, true);
		in_reply_to->from = NULL;
		cbinder_free_transaction_locked(in_reply_to);
	} else if (!(t->flags & TF_ONE_WAY)) {
		t->need_reply = true;
		t->from = thread;
		t->from_parent = thread->transaction_stack;
		cbinder_set_stack_deferred_locked(thread, t, tcomplete);
		if (target_thread) {
			cbinder_enqueue_thread_work_locked(target_thread,
							   &t->work, true);
		} else {
			cbinder_enqueue_proc_work_locked(tc.target_proc,
							 &t->work, true);
		}
	} else {
		struct cbinder_node *node = buffer->target_node;

		if (frozen)
			tcomplete->type = CBINDER_WORK_TRANSACTION_PENDING;
		cbinder_enqueue_thread_work_locked(thread, tcomplete, false);
		if (node->has_async_transaction) {
			/*
			 * Only while frozen, as the kernel's binder: the
			 * queue is not moving then, and the receiver wants
			 * only the newest state on thaw.
			 */
			if ((t->flags & TF_UPDATE_TXN) && frozen)
				outdated = cbinder_find_outdated_locked(t,
									&node->async_todo);
			if (outdated) {
				list_del_init(&outdated->work.entry);
				outdated_buffer = outdated->buffer;
				outdated_buffer->transaction = NULL;
				outdated->buffer = NULL;
				cbinder_free_transaction_locked(outdated);
			}
			list_add_tail(&t->work.entry, &node->async_todo);
		} else {
			node->has_async_transaction = 1;
			cbinder_enqueue_proc_work_locked(tc.target_proc,
							 &t->work, false);
		}
	}
	spin_unlock(&ctx->lock);
	/* Never delivered: what its objects hold goes, as for a failure. */
	if (outdated_buffer)
		cbinder_discard_buffer(tc.target_proc, outdated_buffer,
				       SIZE_MAX);
	cbinder_log_end(bc, &log, BR_OK, 0);
	if (target_thread)
		cbinder_thread_dec_tmpref(target_thread);
	cbinder_proc_dec_tmpref(tc.target_proc);
	return;

release_buffer:
	if (secctx)
		security_release_secctx(secctx, secctx_len);
	secctx = NULL;
	cbinder_drop_fd_fixups(t);
	t->buffer = NULL;
	cbinder_discard_buffer(tc.target_proc, buffer, translated);
	atomic_long_dec(&bc->transactions);
	goto put_thread;
put_target:
	if (secctx)
		security_release_secctx(secctx, secctx_len);
	if (t && t->to_proc)
		atomic_long_dec(&bc->transactions);
	if (target_node) {
		spin_lock(&ctx->lock);
		cbinder_put_target_node_locked(target_node);
		spin_unlock(&ctx->lock);
	}
put_thread:
	if (t)
		put_pid(t->sender_pid);
	if (target_thread)
		cbinder_thread_dec_tmpref(target_thread);
	cbinder_proc_dec_tmpref(tc.target_proc);
fail_reply:
free_t:
	kfree(t);
	atomic_long_inc(&bc->failed_transactions);
	spin_lock(&ctx->lock);
	if (in_reply_to) {
		/* The replier is done; its caller learns of the failure. */
		if (in_reply_to->from) {
			in_reply_to->from->ee.id = debug_id;
			in_reply_to->from->ee.command = return_error;
			in_reply_to->from->ee.param = return_error_param;
		}
		thread->return_error.cmd = BR_TRANSACTION_COMPLETE;
		cbinder_enqueue_thread_work_locked(thread,
						   &thread->return_error.work,
						   false);
		cbinder_send_failed_reply_locked(in_reply_to, return_error);
	} else {
		thread->ee.id = debug_id;
		thread->ee.command = return_error;
		thread->ee.param = return_error_param;
		thread->return_error.cmd = return_error;
		cbinder_enqueue_thread_work_locked(thread,
						   &thread->return_error.work,
						   false);
	}
	spin_unlock(&ctx->lock);
	kfree(tcomplete);
	cbinder_log_end(bc, &log, return_error, return_error_param);
}
