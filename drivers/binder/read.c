// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder's read loop, the read half of BINDER_WRITE_READ: a thread
 * waits for work, takes it off its own or its process's todo list and
 * writes it to user space as BR_ returns (a transaction delivered with its
 * files, a completion, an error, a node's count changes, death and freeze
 * notices), and asks for a new looper when the process runs short.
 *
 * Locking: a reader takes only its own process's inner lock (binder.h) to
 * look for work, sleep, be woken and take a transaction or a completion
 * off its list; ctx->lock, with the inner lock inside it, for work that
 * touches nodes and references and to push a sync call on its stack.
 * Neither is held across a user copy, an fd operation or a sleep.
 */
#include <linux/file.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "binder.h"

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
						   &thread->reply_error.work,
						   false);
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
		cbinder_set_stack_locked(thread, t, NULL, false);
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

/**
 * cbinder_thread_read() - the read half of BINDER_WRITE_READ
 * @proc: the reader's process
 * @thread: the reading thread (current's)
 * @binder_buffer: user address of the read buffer
 * @size: its size
 * @consumed: bytes of it already written; updated
 * @non_block: O_NONBLOCK: fail with -EAGAIN rather than sleep
 *
 * Context: process context of @thread, no locks held; may sleep.
 * Return: 0, or a negative errno (-EFAULT, -EAGAIN, -EINTR; -EPERM once
 * the cell is unlinked).
 */
int cbinder_thread_read(struct cbinder_proc *proc,
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
