// SPDX-License-Identifier: GPL-2.0
/*
 * The reaper: freeing a victim's memory right after SIGKILL (patches/0002),
 * and its "reap" param.
 *
 * The reaper is one kthread for all cells, which the cells never wait for:
 * reaping needs the victim's mmap_lock, which a stalled victim thread
 * (FUSE, userfaultfd, a long mmap_lock-held syscall) may hold for long.
 * Each reap gets LMK_REAP_SLICE_MS for the lock, then goes to the back of
 * the queue: one cell's stalled victim never holds up another cell's reap.
 * One that had the lock but could not free (-EAGAIN: an mmu notifier that
 * would block) waits LMK_REAP_STEP_MS there before its next turn.
 * A reap's last wait ends at the kill's timeout or at unload, both of
 * which SIGKILL the reaper. kill.c queues, interrupts and cancels reaps;
 * trigger.c starts and stops the reaper with the module
 * (lmk_reaper_start(), lmk_reaper_stop()).
 *
 * Locking: Documentation/dev/architecture.rst ("The low-memory killer")
 * gives the order. lmk_reap_lock guards the queue and is taken under
 * lc->lock by kill.c, alone by the reaper, which reaps with no lock of
 * ours held.
 */
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/refcount.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <cask/attr.h>
#include <cask/cell.h>
#include <cask/compat.h>

#include "lmk.h"
#include "trace.h"

/**
 * struct lmk_reap - a victim whose memory the reaper is to free
 * @node: on lmk_reap_list while queued (protected by lmk_reap_lock)
 * @ref: the cell's, until it is done with the victim, and the queue's or
 *	the reaper's
 * @task: the victim (a reference)
 * @mm: its address space (mmgrab()), whose mmap_lock a reap needs
 * @queued_ns: when the kill asked for it
 * @done_ns: when its memory was reaped, 0 until then
 * @not_before: jiffies before which the reaper does not take it up
 *	(protected by lmk_reap_lock)
 * @cancelled: the cell is done with it: not queued again (protected by
 *	lmk_reap_lock)
 *
 * The reaper never sees the cell: a cell goes (and the module's tick with
 * it) without waiting for a reap, which can wait long on the victim's
 * mmap_lock (a thread of the victim stalled on FUSE or userfaultfd while
 * holding it, a writer queued behind that).
 */
struct lmk_reap {
	struct list_head node;
	refcount_t ref;
	struct task_struct *task;
	struct mm_struct *mm;
	u64 queued_ns;
	atomic64_t done_ns;
	unsigned long not_before;	/* lmk_reap_lock */
	bool cancelled;			/* lmk_reap_lock */
};

static DEFINE_SPINLOCK(lmk_reap_lock);
static LIST_HEAD(lmk_reap_list);		/* lmk_reap_lock */
static struct lmk_reap *lmk_reap_current;	/* lmk_reap_lock */
static struct task_struct *lmk_reaper;
static bool lmk_reaper_stopping;
/* Ends the reaper's wait for a mmap_lock at the end of a reap's slice. */
static struct timer_list lmk_reap_timer;

/*
 * The "reap" param: N leaves a victim's memory to its exit, as on a kernel
 * without patches/0002, so that the reaper's gain can be measured in one
 * boot (tools/bench/lmk_bench), and so that an administrator can turn the
 * reaper off should a reap ever misbehave. Read with READ_ONCE() at each
 * kill, under no lock of ours (the kernel's param lock serializes only
 * the writers).
 */
static bool lmk_reap_param = true;

/*
 * Host-wide, so the host's root's alone. The file's mode is not enough:
 * runtimes bind-mount the params directory into containers for lmkd's
 * adj and minfree, and the root of a container without a user namespace
 * is root on the host as far as the file can tell.
 */
static int lmk_reap_set(const char *val, const struct kernel_param *kp)
{
	if (!cask_host_may_admin())
		return -EPERM;
	return param_set_bool(val, kp);
}

static const struct kernel_param_ops lmk_reap_ops = {
	.flags = KERNEL_PARAM_OPS_FL_NOARG,
	.set = lmk_reap_set,
	.get = param_get_bool,
};

module_param_cb(reap, &lmk_reap_ops, &lmk_reap_param, 0644);
MODULE_PARM_DESC(reap, "reap a victim's memory right after SIGKILL (with patches/0002; default Y)");

static void lmk_reap_put(struct lmk_reap *r)
{
	if (r && refcount_dec_and_test(&r->ref)) {
		mmdrop(r->mm);
		put_task_struct(r->task);
		kfree(r);
	}
}

/**
 * lmk_reap_start() - ask the reaper to free a victim's memory
 * @p: the victim, just sent SIGKILL
 * @mm: its address space
 *
 * Context: process context (a kill), lc->lock held; takes lmk_reap_lock.
 * Return: the request, with a reference for the cell; NULL without
 * patches/0002, with the reap param off, or without memory.
 */
struct lmk_reap *lmk_reap_start(struct task_struct *p,
				struct mm_struct *mm)
{
	struct lmk_reap *r;

	if (!CASK_OOM_REAP || !lmk_reaper || !READ_ONCE(lmk_reap_param))
		return NULL;
	/* No reclaim: memory is short. Without it the victim's exit frees. */
	r = kzalloc(sizeof(*r), GFP_NOWAIT | __GFP_NOWARN);
	if (!r)
		return NULL;
	refcount_set(&r->ref, 2);
	r->task = get_task_struct(p);
	mmgrab(mm);
	r->mm = mm;
	r->queued_ns = ktime_get_ns();
	spin_lock(&lmk_reap_lock);
	/* Not 0: jiffies start 5 minutes before wrapping to 0. */
	r->not_before = jiffies;
	list_add_tail(&r->node, &lmk_reap_list);
	spin_unlock(&lmk_reap_lock);
	wake_up_process(lmk_reaper);
	return r;
}

/**
 * lmk_reap_done() - when a reap freed the victim's memory
 * @r: the request, or NULL
 *
 * Context: any.
 * Return: ktime_get_ns() at the end of the reap, 0 if not (yet).
 */
u64 lmk_reap_done(struct lmk_reap *r)
{
	return r ? atomic64_read(&r->done_ns) : 0;
}

/**
 * lmk_reap_interrupt() - end a reap's wait for the victim's mmap_lock
 * @r: the request, or NULL
 *
 * A reap in progress gives up waiting for the victim's mmap_lock: the
 * kill timed out, and the next victim's reap should not queue behind it.
 *
 * Context: process context, lc->lock held; takes lmk_reap_lock.
 */
void lmk_reap_interrupt(struct lmk_reap *r)
{
	spin_lock(&lmk_reap_lock);
	/* The reaper flushes signals before it takes the next request. */
	if (r && lmk_reap_current == r)
		send_sig(SIGKILL, lmk_reaper, 1);
	spin_unlock(&lmk_reap_lock);
}

/**
 * lmk_reap_cancel() - the cell is done with a reap
 * @r: the request, or NULL
 *
 * Takes @r off the queue if it is still there and drops the cell's
 * reference; the reaper, if it has @r, does not queue it again.
 *
 * Context: process context, lc->lock held; takes lmk_reap_lock.
 */
void lmk_reap_cancel(struct lmk_reap *r)
{
	bool queued;

	if (!r)
		return;
	spin_lock(&lmk_reap_lock);
	queued = !list_empty(&r->node);
	list_del_init(&r->node);
	/* The reaper, if it has it, does not queue it again. */
	r->cancelled = true;
	spin_unlock(&lmk_reap_lock);
	if (queued)
		lmk_reap_put(r);
	lmk_reap_put(r);
}

/**
 * lmk_reap_timeout() - end the reaper's slice for a mmap_lock
 * @t: lmk_reap_timer
 *
 * Context: timer (softirq): only signals the reaper.
 */
static void lmk_reap_timeout(struct timer_list *t)
{
	send_sig(SIGKILL, lmk_reaper, 1);
}

/*
 * One turn of @r: LMK_REAP_SLICE_MS at most for the victim's mmap_lock,
 * which another cell's victim's thread may hold for long (a FUSE fault in
 * its own user namespace, a long syscall that holds it for writing, which
 * SIGKILL does not cut short). Tried without waiting, every
 * LMK_REAP_STEP_MS; once free, oom_mrelease_task() takes it, and a writer
 * that comes between is waited for until the slice ends (the timer's
 * SIGKILL ends that wait).
 *
 * Return: oom_mrelease_task()'s, or -ETIMEDOUT if the slice ended (or
 * the kill's timeout came) before the reap had the lock.
 */
static int lmk_reap_one(struct lmk_reap *r)
{
	unsigned long end = jiffies + msecs_to_jiffies(LMK_REAP_SLICE_MS);
	int ret;

	while (!mmap_read_trylock(r->mm)) {
		if (time_after_eq(jiffies, end) || signal_pending(current))
			return -ETIMEDOUT;
		schedule_timeout_interruptible(msecs_to_jiffies(LMK_REAP_STEP_MS));
	}
	mmap_read_unlock(r->mm);
	mod_timer(&lmk_reap_timer, time_after(end, jiffies) ? end : jiffies + 1);
	ret = cask_oom_mrelease(r->task);
	timer_delete_sync(&lmk_reap_timer);
	return ret == -EINTR ? -ETIMEDOUT : ret;
}

/**
 * lmk_reap_again() - whether, and from when, a reap is to be tried again
 * @ret: its turn's result: lmk_reap_one()'s
 * @now: jiffies at the turn's end
 * @not_before: set to the jiffies from which the next turn may start
 *
 * A slice that ended (-ETIMEDOUT) goes to the back of the queue, ready at
 * once: the victim's mmap_lock was another's, and another cell's reap may
 * be waiting for its turn. -EAGAIN is a reap that had the lock but could
 * not free: an mmu notifier (a GPU driver's userptr, Xen's gntdev)
 * refused to invalidate without blocking. At once, the next turn would
 * have the lock at once and fail again, without a sleep until the kill
 * times out; it waits LMK_REAP_STEP_MS, as a wait for the lock does.
 *
 * Context: any.
 * Return: true if the reap is to be queued again.
 */
bool lmk_reap_again(int ret, unsigned long now, unsigned long *not_before)
{
	switch (ret) {
	case -ETIMEDOUT:
		*not_before = now;
		return true;
	case -EAGAIN:
		*not_before = now + msecs_to_jiffies(LMK_REAP_STEP_MS);
		return true;
	default:
		return false;
	}
}
EXPORT_SYMBOL_IF_KUNIT(lmk_reap_again);

/*
 * The first request whose turn may start at @now, or NULL; @wait is set
 * to the jiffies until the first that will be, MAX_SCHEDULE_TIMEOUT if
 * none. Unloading takes them all at once (and does not reap).
 */
static struct lmk_reap *lmk_reap_next_locked(unsigned long now, long *wait)
{
	bool stopping = READ_ONCE(lmk_reaper_stopping);
	struct lmk_reap *r;

	lockdep_assert_held(&lmk_reap_lock);
	*wait = MAX_SCHEDULE_TIMEOUT;
	list_for_each_entry(r, &lmk_reap_list, node) {
		if (stopping || !time_before(now, r->not_before))
			return r;
		*wait = min_t(long, *wait, r->not_before - now);
	}
	return NULL;
}

/**
 * lmk_reaper_fn() - the reaper's loop
 * @unused: no data
 *
 * A kthread, not a work item, so that nothing waits for it. It lets
 * SIGKILL in, which a reap's slice, a kill's timeout and unloading send
 * to stop a wait for a mmap_lock. A reap that gave up goes to the back of
 * the queue until the cell is done with it (its memory freed by the exit,
 * or the kill's timeout); one that could not free waits LMK_REAP_STEP_MS
 * there (lmk_reap_again()), and the reaper sleeps when only such are
 * left.
 *
 * Context: the lmk_reaper kthread (lmk_reaper_start() starts it); takes
 * lmk_reap_lock, and reaps with no lock of ours held.
 * Return: 0, once stopped.
 */
static int lmk_reaper_fn(void *unused)
{
	unsigned long not_before;
	struct lmk_reap *r;
	bool again;
	long wait;
	int ret;

	allow_signal(SIGKILL);
	for (;;) {
		/*
		 * Before lmk_reaper_stopping is read: unloading sets it, then
		 * signals, so a signal flushed here is seen as stopping below.
		 */
		if (signal_pending(current))
			flush_signals(current);
		set_current_state(TASK_INTERRUPTIBLE);
		spin_lock(&lmk_reap_lock);
		r = lmk_reap_next_locked(jiffies, &wait);
		if (r)
			list_del_init(&r->node);
		lmk_reap_current = r;
		spin_unlock(&lmk_reap_lock);
		if (!r) {
			/* Only with an empty queue: unloading takes them all. */
			if (kthread_should_stop())
				break;
			schedule_timeout(wait);
			continue;
		}
		__set_current_state(TASK_RUNNING);
		/*
		 * 0: reaped, or freed by the exit already. Not -ESRCH: the
		 * victim's threads let go of the mm, which another user may
		 * keep; its exit_mmap() says when it is freed.
		 */
		ret = 0;
		if (!READ_ONCE(lmk_reaper_stopping)) {
			u64 start = ktime_get_ns(), end;

			ret = lmk_reap_one(r);
			end = ktime_get_ns();
			if (!ret)
				atomic64_set(&r->done_ns, end);
			trace_lmk_reap(task_pid_nr(r->task), ret,
				       div_u64(start - r->queued_ns,
					       NSEC_PER_USEC),
				       div_u64(end - start, NSEC_PER_USEC));
		}
		spin_lock(&lmk_reap_lock);
		lmk_reap_current = NULL;
		/* The queue's reference goes back with it. */
		again = !r->cancelled && !READ_ONCE(lmk_reaper_stopping) &&
			lmk_reap_again(ret, jiffies, &not_before);
		if (again) {
			r->not_before = not_before;
			list_add_tail(&r->node, &lmk_reap_list);
		}
		spin_unlock(&lmk_reap_lock);
		if (!again)
			lmk_reap_put(r);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/**
 * lmk_reaper_start() - start the reaper, where the kernel can reap
 *
 * Without patches/0002 (CASK_OOM_REAP 0) there is no reaper: a kill
 * queues no reap then (lmk_reap_start()).
 *
 * Context: module init (lmk_kill_init()).
 * Return: 0 or a negative errno (then no reaper runs).
 */
int lmk_reaper_start(void)
{
	struct task_struct *reaper;

	if (!CASK_OOM_REAP)
		return 0;
	timer_setup(&lmk_reap_timer, lmk_reap_timeout, 0);
	reaper = kthread_run(lmk_reaper_fn, NULL, "lmk_reaper");
	if (IS_ERR(reaper))
		return PTR_ERR(reaper);
	lmk_reaper = reaper;
	return 0;
}

/**
 * lmk_reaper_stop() - stop the reaper, if it runs
 *
 * After the cells: nothing queues a reap any more.
 *
 * Context: module exit (lmk_kill_free()).
 */
void lmk_reaper_stop(void)
{
	if (!lmk_reaper)
		return;
	WRITE_ONCE(lmk_reaper_stopping, true);
	/* Ends a wait for a stalled victim's mmap_lock. */
	send_sig(SIGKILL, lmk_reaper, 1);
	kthread_stop(lmk_reaper);
	lmk_reaper = NULL;
}
