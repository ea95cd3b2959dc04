// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_binder's work queues (suite cask_binder_work): what
 * a queued item promises its reader (woken, deferred), that the waker's
 * sync hint reaches the wake-up, a transaction stack changed in the hold
 * that queues the thread's answer, and taking items off a todo list.
 *
 * One context, one process and one thread are made by hand with only what
 * the helpers touch; the helpers are called as the driver calls them, with
 * ctx->lock held. A wait entry of our own on the thread's wait queue sees
 * each wake-up and its flags, as a reader asleep in read would be woken.
 */
#include <kunit/test.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "binder.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

struct work_test {
	struct cbinder_context ctx;
	struct cbinder_proc proc;
	struct cbinder_thread thread;
	struct cbinder_transaction t;
	struct cbinder_work w[2];
	struct wait_queue_entry waiter;
	int wakes;
	int wake_flags;
};

/* Counts the thread's wake-ups, and keeps the last one's flags. */
static int work_test_wake(struct wait_queue_entry *wq_entry,
			  unsigned int mode, int flags, void *key)
{
	struct work_test *wt = wq_entry->private;

	wt->wakes++;
	wt->wake_flags = flags;
	return 0;
}

static void work_test_remove_waiter(void *data)
{
	struct work_test *wt = data;

	remove_wait_queue(&wt->thread.wait, &wt->waiter);
}

static int work_test_init(struct kunit *test)
{
	struct work_test *wt;
	unsigned int i;

	wt = kunit_kzalloc(test, sizeof(*wt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wt);
	spin_lock_init(&wt->ctx.lock);
	wt->proc.ctx = &wt->ctx;
	spin_lock_init(&wt->proc.inner_lock);
	wt->proc.threads = RB_ROOT;
	INIT_LIST_HEAD(&wt->proc.todo);
	INIT_LIST_HEAD(&wt->proc.waiting_threads);
	wt->thread.proc = &wt->proc;
	INIT_LIST_HEAD(&wt->thread.todo);
	INIT_LIST_HEAD(&wt->thread.waiting_entry);
	init_waitqueue_head(&wt->thread.wait);
	for (i = 0; i < ARRAY_SIZE(wt->w); i++) {
		INIT_LIST_HEAD(&wt->w[i].entry);
		wt->w[i].type = CBINDER_WORK_TRANSACTION_COMPLETE;
	}
	init_waitqueue_func_entry(&wt->waiter, work_test_wake);
	wt->waiter.private = wt;
	add_wait_queue(&wt->thread.wait, &wt->waiter);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, work_test_remove_waiter,
						  wt));
	test->priv = wt;
	return 0;
}

/* Whether the thread would find work to read now. */
static bool work_test_has_work(struct work_test *wt)
{
	bool has;

	spin_lock(&wt->proc.inner_lock);
	has = cbinder_has_work_ilocked(&wt->thread, false);
	spin_unlock(&wt->proc.inner_lock);
	return has;
}

/* Queued work wakes the thread; only a sync waker says it will sleep. */
static void work_test_enqueue_sync(struct kunit *test)
{
	struct work_test *wt = test->priv;

	spin_lock(&wt->ctx.lock);
	cbinder_enqueue_thread_work_locked(&wt->thread, &wt->w[0], false);
	spin_unlock(&wt->ctx.lock);
	KUNIT_EXPECT_EQ(test, 1, wt->wakes);
	KUNIT_EXPECT_EQ(test, 0, wt->wake_flags);
	KUNIT_EXPECT_TRUE(test, wt->thread.process_todo);
	KUNIT_EXPECT_TRUE(test, work_test_has_work(wt));

	spin_lock(&wt->ctx.lock);
	cbinder_enqueue_thread_work_locked(&wt->thread, &wt->w[1], true);
	spin_unlock(&wt->ctx.lock);
	KUNIT_EXPECT_EQ(test, 2, wt->wakes);
	KUNIT_EXPECT_NE(test, 0, wt->wake_flags);
	KUNIT_EXPECT_PTR_EQ(test, &wt->w[0],
			    list_first_entry(&wt->thread.todo,
					     struct cbinder_work, entry));
	KUNIT_EXPECT_PTR_EQ(test, &wt->w[1],
			    list_last_entry(&wt->thread.todo,
					    struct cbinder_work, entry));
}

/* A stack changed with an answer: both at once, the thread woken. */
static void work_test_set_stack_with_work(struct kunit *test)
{
	struct work_test *wt = test->priv;

	spin_lock(&wt->ctx.lock);
	cbinder_set_stack_locked(&wt->thread, &wt->t, &wt->w[0], true);
	spin_unlock(&wt->ctx.lock);
	KUNIT_EXPECT_PTR_EQ(test, &wt->t, wt->thread.transaction_stack);
	KUNIT_EXPECT_FALSE(test, list_empty(&wt->w[0].entry));
	KUNIT_EXPECT_TRUE(test, work_test_has_work(wt));
	KUNIT_EXPECT_EQ(test, 1, wt->wakes);
	KUNIT_EXPECT_NE(test, 0, wt->wake_flags);

	/* A failed reply's error: not a sync waker. */
	spin_lock(&wt->ctx.lock);
	cbinder_set_stack_locked(&wt->thread, NULL, &wt->w[1], false);
	spin_unlock(&wt->ctx.lock);
	KUNIT_EXPECT_NULL(test, wt->thread.transaction_stack);
	KUNIT_EXPECT_EQ(test, 2, wt->wakes);
	KUNIT_EXPECT_EQ(test, 0, wt->wake_flags);
}

/* A stack changed alone: nothing queued, nobody woken. */
static void work_test_set_stack_alone(struct kunit *test)
{
	struct work_test *wt = test->priv;

	spin_lock(&wt->ctx.lock);
	cbinder_set_stack_locked(&wt->thread, &wt->t, NULL, true);
	spin_unlock(&wt->ctx.lock);
	KUNIT_EXPECT_PTR_EQ(test, &wt->t, wt->thread.transaction_stack);
	KUNIT_EXPECT_TRUE(test, list_empty(&wt->thread.todo));
	KUNIT_EXPECT_FALSE(test, wt->thread.process_todo);
	KUNIT_EXPECT_EQ(test, 0, wt->wakes);

	spin_lock(&wt->ctx.lock);
	cbinder_set_stack_locked(&wt->thread, NULL, NULL, false);
	spin_unlock(&wt->ctx.lock);
	KUNIT_EXPECT_NULL(test, wt->thread.transaction_stack);
	KUNIT_EXPECT_EQ(test, 0, wt->wakes);
}

/*
 * A sync call's push: its TRANSACTION_COMPLETE is queued but promises no
 * work and wakes nobody, so the caller waits on for the reply; the reply
 * then brings both.
 */
static void work_test_set_stack_deferred(struct kunit *test)
{
	struct work_test *wt = test->priv;

	spin_lock(&wt->ctx.lock);
	cbinder_set_stack_deferred_locked(&wt->thread, &wt->t, &wt->w[0]);
	spin_unlock(&wt->ctx.lock);
	KUNIT_EXPECT_PTR_EQ(test, &wt->t, wt->thread.transaction_stack);
	KUNIT_EXPECT_FALSE(test, list_empty(&wt->w[0].entry));
	KUNIT_EXPECT_FALSE(test, wt->thread.process_todo);
	KUNIT_EXPECT_FALSE(test, work_test_has_work(wt));
	KUNIT_EXPECT_EQ(test, 0, wt->wakes);

	spin_lock(&wt->ctx.lock);
	cbinder_set_stack_locked(&wt->thread, NULL, &wt->w[1], true);
	spin_unlock(&wt->ctx.lock);
	KUNIT_EXPECT_TRUE(test, work_test_has_work(wt));
	KUNIT_EXPECT_EQ(test, 1, wt->wakes);
}

/* The head comes off first, unlinked; an empty list gives NULL. */
static void work_test_dequeue_first(struct kunit *test)
{
	struct work_test *wt = test->priv;
	struct cbinder_work *first, *second, *none;
	bool before, between, after;

	spin_lock(&wt->ctx.lock);
	before = cbinder_work_queued_locked(&wt->proc, &wt->proc.todo);
	cbinder_enqueue_proc_work_locked(&wt->proc, &wt->w[0], false);
	cbinder_enqueue_proc_work_locked(&wt->proc, &wt->w[1], false);
	first = cbinder_dequeue_first_work_locked(&wt->proc, &wt->proc.todo);
	between = cbinder_work_queued_locked(&wt->proc, &wt->proc.todo);
	second = cbinder_dequeue_first_work_locked(&wt->proc, &wt->proc.todo);
	after = cbinder_work_queued_locked(&wt->proc, &wt->proc.todo);
	none = cbinder_dequeue_first_work_locked(&wt->proc, &wt->proc.todo);
	spin_unlock(&wt->ctx.lock);

	KUNIT_EXPECT_FALSE(test, before);
	KUNIT_EXPECT_PTR_EQ(test, &wt->w[0], first);
	KUNIT_EXPECT_TRUE(test, between);
	KUNIT_EXPECT_PTR_EQ(test, &wt->w[1], second);
	KUNIT_EXPECT_FALSE(test, after);
	KUNIT_EXPECT_NULL(test, none);
	/* Unlinked with list_del_init(): a later dequeue of it is harmless. */
	KUNIT_EXPECT_TRUE(test, list_empty(&wt->w[0].entry));
	KUNIT_EXPECT_TRUE(test, list_empty(&wt->w[1].entry));
}

/* Process work: a looper with nothing of its own may take it. */
static void work_test_available(struct kunit *test)
{
	struct work_test *wt = test->priv;
	struct cbinder_thread *thread = &wt->thread;
	bool idle, looper, busy, stacked;

	spin_lock(&wt->proc.inner_lock);
	idle = cbinder_available_for_proc_work_ilocked(thread);
	thread->looper = CBINDER_LOOPER_ENTERED;
	looper = cbinder_available_for_proc_work_ilocked(thread);
	list_add_tail(&wt->w[0].entry, &thread->todo);
	busy = cbinder_available_for_proc_work_ilocked(thread);
	list_del_init(&wt->w[0].entry);
	thread->transaction_stack = &wt->t;
	stacked = cbinder_available_for_proc_work_ilocked(thread);
	thread->transaction_stack = NULL;
	spin_unlock(&wt->proc.inner_lock);

	KUNIT_EXPECT_FALSE(test, idle);
	KUNIT_EXPECT_TRUE(test, looper);
	KUNIT_EXPECT_FALSE(test, busy);
	KUNIT_EXPECT_FALSE(test, stacked);
}

static struct kunit_case work_test_cases[] = {
	KUNIT_CASE(work_test_enqueue_sync),
	KUNIT_CASE(work_test_set_stack_with_work),
	KUNIT_CASE(work_test_set_stack_alone),
	KUNIT_CASE(work_test_set_stack_deferred),
	KUNIT_CASE(work_test_dequeue_first),
	KUNIT_CASE(work_test_available),
	{}
};

static struct kunit_suite work_test_suite = {
	.name = "cask_binder_work",
	.init = work_test_init,
	.test_cases = work_test_cases,
};

kunit_test_suite(work_test_suite);
