// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder work queues: putting work on a thread's or a process's todo
 * list, taking it off, waking the thread that is to read it (a thread
 * asleep in read, else a poller), and changing a thread's transaction
 * stack in the same hold as its work. Whether a thread has work to read
 * is asked inline (binder.h).
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
#include <kunit/visibility.h>

#include "binder.h"

static void cbinder_wakeup_poll_threads_ilocked(struct cbinder_proc *proc,
						bool sync);

/**
 * cbinder_enqueue_thread_work_ilocked() - queue work for one thread and
 *	wake it
 * @thread: the thread
 * @work: the work
 * @sync: the waker will sleep soon (a sync call or its reply)
 *
 * Context: @thread's process's inner lock held.
 */
static void cbinder_enqueue_thread_work_ilocked(struct cbinder_thread *thread,
						struct cbinder_work *work,
						bool sync)
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
 * @sync: as for cbinder_enqueue_thread_work_ilocked()
 *
 * Context: ctx->lock held, no inner lock (takes @thread's process's).
 */
void cbinder_enqueue_thread_work_locked(struct cbinder_thread *thread,
					struct cbinder_work *work, bool sync)
{
	struct cbinder_proc *proc = thread->proc;

	lockdep_assert_held(&proc->ctx->lock);
	spin_lock(&proc->inner_lock);
	cbinder_enqueue_thread_work_ilocked(thread, work, sync);
	spin_unlock(&proc->inner_lock);
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_enqueue_thread_work_locked);

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
 * cbinder_set_stack_locked() - change a thread's transaction stack and
 *	queue work for it, in one hold
 * @thread: the thread
 * @stack: its newest transaction from now on, or NULL
 * @work: work to queue for it, woken, or NULL
 * @sync: as for cbinder_enqueue_thread_work_ilocked()
 *
 * The stack decides whether the thread may take process work: a caller
 * whose call just ended must not be seen with the call gone and its answer
 * (the reply or the error) not yet queued, or it would take process work
 * while it waits for that answer.
 *
 * Context: ctx->lock held, no inner lock (takes @thread's process's).
 */
void cbinder_set_stack_locked(struct cbinder_thread *thread,
			      struct cbinder_transaction *stack,
			      struct cbinder_work *work, bool sync)
{
	struct cbinder_proc *proc = thread->proc;

	lockdep_assert_held(&proc->ctx->lock);
	spin_lock(&proc->inner_lock);
	thread->transaction_stack = stack;
	if (work)
		cbinder_enqueue_thread_work_ilocked(thread, work, sync);
	spin_unlock(&proc->inner_lock);
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_set_stack_locked);

/**
 * cbinder_set_stack_deferred_locked() - push a sync call on its caller's
 *	stack with the caller's deferred work, in one hold
 * @thread: the calling thread
 * @stack: the call, its newest transaction from now on
 * @work: work it sees only with the next work that wakes it (its
 *	BR_TRANSACTION_COMPLETE, as cbinder_enqueue_deferred_thread_work_locked())
 *
 * Context: ctx->lock held, no inner lock (takes @thread's process's).
 */
void cbinder_set_stack_deferred_locked(struct cbinder_thread *thread,
				       struct cbinder_transaction *stack,
				       struct cbinder_work *work)
{
	struct cbinder_proc *proc = thread->proc;

	lockdep_assert_held(&proc->ctx->lock);
	spin_lock(&proc->inner_lock);
	thread->transaction_stack = stack;
	list_add_tail(&work->entry, &thread->todo);
	spin_unlock(&proc->inner_lock);
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_set_stack_deferred_locked);

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
EXPORT_SYMBOL_IF_KUNIT(cbinder_enqueue_proc_work_locked);

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

/**
 * cbinder_dequeue_first_work_locked() - take the first item off a todo list
 * @proc: the process whose (or whose thread's) todo list it is
 * @list: the list
 *
 * As cbinder_dequeue_work_locked(): a reader may take from the list with
 * only the inner lock held.
 *
 * Context: ctx->lock held, no inner lock (takes @proc's).
 * Return: the item, off the list, or NULL if the list is empty.
 */
struct cbinder_work *cbinder_dequeue_first_work_locked(struct cbinder_proc *proc,
						       struct list_head *list)
{
	struct cbinder_work *w;

	lockdep_assert_held(&proc->ctx->lock);
	spin_lock(&proc->inner_lock);
	w = list_first_entry_or_null(list, struct cbinder_work, entry);
	if (w)
		list_del_init(&w->entry);
	spin_unlock(&proc->inner_lock);
	return w;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_dequeue_first_work_locked);

/**
 * cbinder_work_queued_locked() - is anything on a todo list
 * @proc: the process whose (or whose thread's) todo list it is
 * @list: the list
 *
 * Context: ctx->lock held, no inner lock (takes @proc's).
 * Return: true if the list is not empty.
 */
bool cbinder_work_queued_locked(struct cbinder_proc *proc,
				struct list_head *list)
{
	bool queued;

	lockdep_assert_held(&proc->ctx->lock);
	spin_lock(&proc->inner_lock);
	queued = !list_empty(list);
	spin_unlock(&proc->inner_lock);
	return queued;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_work_queued_locked);

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
