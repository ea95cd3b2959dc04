// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder work queues: putting work on a thread's or a process's todo
 * list, taking it off, and waking the thread that is to read it (a thread
 * asleep in read, else a poller), and whether a thread has work to read.
 *
 * Locking: the todo lists, the threads waiting for process work and what
 * decides whether a thread may sleep are under its process's inner lock
 * (binder.h). Functions ending in _ilocked are called with it held, those
 * ending in _locked with ctx->lock held and no inner lock: they take the
 * process's inner lock themselves, inside ctx->lock. Nothing here sleeps.
 */
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "binder.h"

static void cbinder_wakeup_poll_threads_ilocked(struct cbinder_proc *proc,
						bool sync);

/**
 * cbinder_available_for_proc_work_ilocked() - may a thread take work queued
 *	to its process
 * @thread: the thread
 *
 * Context: @thread's process's inner lock held.
 * Return: true if it handles no transaction, has no work of its own and
 * is a looper (registered or entered).
 */
bool cbinder_available_for_proc_work_ilocked(struct cbinder_thread *thread)
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
 * there: the read loop would go round without sleeping.
 *
 * Context: @thread's process's inner lock held.
 * Return: true if a read would not sleep.
 */
bool cbinder_has_work_ilocked(struct cbinder_thread *thread,
			      bool do_proc_work)
{
	lockdep_assert_held(&thread->proc->inner_lock);
	return (thread->process_todo && !list_empty(&thread->todo)) ||
	       thread->need_return ||
	       (do_proc_work && !list_empty(&thread->proc->todo));
}

/**
 * cbinder_enqueue_thread_work_ilocked() - queue work for one thread and
 *	wake it
 * @thread: the thread
 * @work: the work
 * @sync: the waker will sleep soon (a sync call or its reply)
 *
 * Context: @thread's process's inner lock held.
 */
void cbinder_enqueue_thread_work_ilocked(struct cbinder_thread *thread,
					 struct cbinder_work *work, bool sync)
{
	lockdep_assert_held(&thread->proc->inner_lock);
	list_add_tail(&work->entry, &thread->todo);
	thread->process_todo = true;
	if (sync)
		wake_up_interruptible_sync(&thread->wait);
	else
		wake_up_interruptible(&thread->wait);
}

/**
 * cbinder_enqueue_thread_work_locked() - queue work for one thread and wake it
 * @thread: the thread
 * @work: the work
 *
 * Context: ctx->lock held, no inner lock (takes @thread's process's).
 */
void cbinder_enqueue_thread_work_locked(struct cbinder_thread *thread,
					struct cbinder_work *work)
{
	struct cbinder_proc *proc = thread->proc;

	lockdep_assert_held(&proc->ctx->lock);
	spin_lock(&proc->inner_lock);
	cbinder_enqueue_thread_work_ilocked(thread, work, false);
	spin_unlock(&proc->inner_lock);
}

/**
 * cbinder_enqueue_deferred_thread_work_locked() - queue work a thread sees
 *	only with the next work that wakes it
 * @thread: the thread
 * @work: the work
 *
 * BR_TRANSACTION_COMPLETE of a sync call: the caller then goes on waiting
 * for the reply instead of returning to user space only to come back.
 *
 * Context: ctx->lock held, no inner lock (takes @thread's process's).
 */
void cbinder_enqueue_deferred_thread_work_locked(struct cbinder_thread *thread,
						 struct cbinder_work *work)
{
	struct cbinder_proc *proc = thread->proc;

	lockdep_assert_held(&proc->ctx->lock);
	spin_lock(&proc->inner_lock);
	list_add_tail(&work->entry, &thread->todo);
	spin_unlock(&proc->inner_lock);
}

/**
 * cbinder_wakeup_proc_ilocked() - wake a thread for process work
 * @proc: the process
 * @sync: as for cbinder_enqueue_thread_work_ilocked()
 *
 * A thread asleep in read for process work, else every poller that could
 * take it.
 *
 * Context: @proc's inner lock held.
 */
void cbinder_wakeup_proc_ilocked(struct cbinder_proc *proc, bool sync)
{
	struct cbinder_thread *thread;

	lockdep_assert_held(&proc->inner_lock);
	thread = list_first_entry_or_null(&proc->waiting_threads,
					  struct cbinder_thread, waiting_entry);
	if (thread) {
		list_del_init(&thread->waiting_entry);
		if (sync)
			wake_up_interruptible_sync(&thread->wait);
		else
			wake_up_interruptible(&thread->wait);
		return;
	}
	/* Nobody sleeps in read(): maybe somebody polls. */
	cbinder_wakeup_poll_threads_ilocked(proc, sync);
}

/**
 * cbinder_enqueue_proc_work_locked() - queue work for any thread of a process
 * @proc: the process
 * @work: the work
 * @sync: as for cbinder_enqueue_thread_work_ilocked()
 *
 * Context: ctx->lock held, no inner lock (takes @proc's).
 */
void cbinder_enqueue_proc_work_locked(struct cbinder_proc *proc,
				      struct cbinder_work *work, bool sync)
{
	lockdep_assert_held(&proc->ctx->lock);
	spin_lock(&proc->inner_lock);
	list_add_tail(&work->entry, &proc->todo);
	cbinder_wakeup_proc_ilocked(proc, sync);
	spin_unlock(&proc->inner_lock);
}

/**
 * cbinder_dequeue_work_locked() - take work off the list it is on, if any
 * @proc: the process whose (or whose thread's) todo list it may be on
 * @work: the work
 *
 * A reader takes transactions off the todo lists with only the inner lock
 * held, so their neighbours' links change under it.
 *
 * Context: ctx->lock held, no inner lock (takes @proc's).
 */
void cbinder_dequeue_work_locked(struct cbinder_proc *proc,
				 struct cbinder_work *work)
{
	lockdep_assert_held(&proc->ctx->lock);
	spin_lock(&proc->inner_lock);
	list_del_init(&work->entry);
	spin_unlock(&proc->inner_lock);
}

/*
 * The thread tree is written with both locks held, so the inner lock is
 * enough to walk it.
 */
static void cbinder_wakeup_poll_threads_ilocked(struct cbinder_proc *proc,
						bool sync)
{
	struct cbinder_thread *thread;
	struct rb_node *n;

	lockdep_assert_held(&proc->inner_lock);
	for (n = rb_first(&proc->threads); n; n = rb_next(n)) {
		thread = rb_entry(n, struct cbinder_thread, rb_node);
		if (!(thread->looper & CBINDER_LOOPER_POLL) ||
		    !cbinder_available_for_proc_work_ilocked(thread))
			continue;
		if (sync)
			wake_up_interruptible_sync(&thread->wait);
		else
			wake_up_interruptible(&thread->wait);
	}
}
