// SPDX-License-Identifier: GPL-2.0
/*
 * cask_power's lock table: a cell's wake locks by name, their timeouts,
 * the host wakeup sources they hold under the cell's policy, the cap on
 * those holds, and the cell's suspend vote, which the locks withdraw.
 *
 * What a cell writes is parsed in parse.c. The formats, the errors and the
 * timeout rules are those of the kernel's /sys/power/wake_lock and
 * wake_unlock (kernel/power/wakelock.c): a lock
 * is "name [timeout_ns]"; a lock written again without a timeout becomes
 * permanent, with one its timeout only ever grows, except that a permanent
 * lock takes the timeout; unlocking a name never locked is EINVAL; unlocked
 * names stay listed in wake_unlock. Differences, all for bounds: names
 * are at most CPOWER_NAME_MAX bytes (ENAMETOOLONG), a cell has at most
 * max_locks names (ENOSPC once all of them are active; otherwise the
 * least recently written inactive name is forgotten to make room, where
 * the kernel forgets idle names after five minutes).
 *
 * Time is ktime_get() (CLOCK_MONOTONIC) nanoseconds, read through
 * cpower_now() (power.h), which KUnit may step by hand. A single delayed work
 * per cell runs at the earliest deadline of its table: a timeout, the
 * moment the cap's budget runs out, or the end of the vote's lease. A
 * cell has at most CPOWER_MAX_LOCKS_LIMIT locks, which bounds every walk
 * of the table made with its lock held.
 *
 * Locking: everything here runs with pc->lock (a mutex) held; see main.c
 * for the order. A host wakeup source is added under it (spinlocks of the
 * PM core only) but removed, which waits for an SRCU grace period, only
 * with no lock held: by the writer once it has let go of pc->lock
 * (cpower_cell_reap()), or by the reap work for a cell that stops.
 */
#include <linux/device.h>
#include <linux/jiffies.h>
#include <linux/kernfs.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/pm_wakeup.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/string_helpers.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>

#include "power.h"

/* The longest wait of the expire work: longer deadlines are looked at again. */
#define CPOWER_DELAY_MAX_NS	(3600ULL * NSEC_PER_SEC)

/* ---- pure functions ---- */

/**
 * cpower_expiry() - a lock's expiry after a wake_lock write
 * @now: the time of the write
 * @active: whether the lock was active before it
 * @expires: its expiry before it, 0 for none
 * @timeout_ns: the write's timeout, 0 for none
 *
 * The kernel's rules: no timeout makes the lock permanent; a timeout sets
 * the expiry of an inactive or permanent lock, and otherwise only moves
 * it later. Far timeouts saturate.
 *
 * Context: any.
 * Return: the new expiry, 0 for none.
 */
u64 cpower_expiry(u64 now, bool active, u64 expires, u64 timeout_ns)
{
	u64 at;

	if (!timeout_ns)
		return 0;
	if (check_add_overflow(now, timeout_ns, &at))
		at = CPOWER_NEVER;
	if (!active || !expires || at > expires)
		return at;
	return expires;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_expiry);

/**
 * cpower_lock_deadline() - when a lock next needs the expire work
 * @l: the lock
 *
 * Context: the cell's lock held.
 * Return: its expiry if it is active and timed, else CPOWER_NEVER.
 */
u64 cpower_lock_deadline(const struct cpower_lock *l)
{
	return l->active && l->expires ? l->expires : CPOWER_NEVER;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_lock_deadline);

/**
 * cpower_budget_used() - how much of the cap's budget a cell has used
 * @used_ns: what its finished holds used since the budget was renewed
 * @holding: whether it holds the host now
 * @since: when its current hold began, if @holding
 * @now: the time
 *
 * Context: any.
 * Return: @used_ns plus the current hold up to @now, saturated.
 */
u64 cpower_budget_used(u64 used_ns, bool holding, u64 since, u64 now)
{
	u64 sum;

	if (!holding || now <= since)
		return used_ns;
	if (check_add_overflow(used_ns, now - since, &sum))
		return CPOWER_NEVER;
	return sum;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_budget_used);

/**
 * cpower_budget_end() - when a hold that began at @since uses up the budget
 * @used_ns: what was used before the hold
 * @since: when the hold began
 * @max_hold_ms: the budget
 *
 * Context: any.
 * Return: @since plus what is left of the budget, saturated; @since if
 * nothing is left.
 */
u64 cpower_budget_end(u64 used_ns, u64 since, unsigned int max_hold_ms)
{
	u64 budget = (u64)max_hold_ms * NSEC_PER_MSEC, end;

	if (used_ns >= budget)
		return since;
	if (check_add_overflow(since, budget - used_ns, &end))
		return CPOWER_NEVER;
	return end;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_budget_end);

/**
 * cpower_delay() - jiffies from @now until the expire work must run
 * @now: the time
 * @deadline: when it must run, later than @now or not
 *
 * Never early: a work item runs at a jiffy's granularity, so the delay is
 * rounded up and one more jiffy is added. Deadlines past an hour are
 * looked at again in an hour.
 *
 * Context: any.
 * Return: the delay for mod_delayed_work(), 0 for at once.
 */
unsigned long cpower_delay(u64 now, u64 deadline)
{
	u64 ns;

	if (deadline <= now)
		return 0;
	ns = min(deadline - now, CPOWER_DELAY_MAX_NS);
	return nsecs_to_jiffies(ns) + 1;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_delay);

#if IS_ENABLED(CONFIG_KUNIT)
static u64 (*cpower_clock)(void) __read_mostly = ktime_get_ns;

/**
 * cpower_now() - the time of timeouts, leases and budgets
 *
 * Context: any.
 * Return: ktime_get_ns(), or the clock a KUnit test set.
 */
u64 cpower_now(void)
{
	return READ_ONCE(cpower_clock)();
}
EXPORT_SYMBOL_IF_KUNIT(cpower_now);

/**
 * cpower_set_clock() - replace cpower_now()'s clock, for KUnit
 * @clock: the clock, or NULL for ktime_get_ns() again
 *
 * Context: any; no cell but the test's may use cask_power meanwhile.
 */
void cpower_set_clock(u64 (*clock)(void))
{
	WRITE_ONCE(cpower_clock, clock ?: ktime_get_ns);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_set_clock);
#endif

/* ---- the table ---- */

/* Wake suspend_ready's pollers, through the notify work (see below). */
static void cpower_queue_notify_locked(struct cpower_cell *pc)
{
	lockdep_assert_held(&pc->lock);
	if (pc->ready_kn)
		queue_delayed_work(system_wq, &pc->notify,
				   msecs_to_jiffies(CPOWER_NOTIFY_DELAY_MS));
}

/*
 * The vote changes: tell suspend_ready's pollers, through the notify work.
 * A cell can flip its vote as fast as it can write: every flip would wake
 * the host's power manager. A notification already queued covers the
 * flips until it runs (queue_delayed_work() does nothing then), so the
 * pollers wake at most once per CPOWER_NOTIFY_DELAY_MS, and see the
 * latest vote.
 */
static void cpower_set_ready_locked(struct cpower_cell *pc, bool ready)
{
	lockdep_assert_held(&pc->lock);
	/* A vote that ends, or one that autosleep makes: no lease. */
	pc->vote_expires = 0;
	if (pc->ready == ready)
		return;
	pc->ready = ready;
	pc->ready_changed_ns = ktime_get_boottime_ns();
	cpower_queue_notify_locked(pc);
}

/* kernfs_notify() is safe under any lock, and on a node out of sysfs. */
static void cpower_notify_work(struct work_struct *work)
{
	struct cpower_cell *pc = container_of(to_delayed_work(work),
					      struct cpower_cell, notify);

	mutex_lock(&pc->lock);
	if (pc->ready_kn) {
		kernfs_notify(pc->ready_kn);
		pc->notified++;
	}
	mutex_unlock(&pc->lock);
}

static void cpower_rearm_locked(struct cpower_cell *pc, u64 now)
{
	u64 next = CPOWER_NEVER;
	struct cpower_lock *l;

	lockdep_assert_held(&pc->lock);
	if (pc->dead)
		return;
	list_for_each_entry(l, &pc->lru, lru)
		next = min(next, cpower_lock_deadline(l));
	if (pc->ready && pc->vote_expires)
		next = min(next, pc->vote_expires);
	if (pc->policy == CPOWER_CAP && pc->nr_host_held)
		next = min(next, cpower_budget_end(pc->budget_used_ns,
						   pc->host_since,
						   pc->max_hold_ms));
	if (next == CPOWER_NEVER)
		cancel_delayed_work(&pc->expire);
	else
		mod_delayed_work(system_wq, &pc->expire, cpower_delay(now, next));
}

/*
 * The cap's budget is the cell's: its holds are counted from the moment
 * the first of its locks holds the host until the last lets go, however
 * many names and activations come and go in between.
 */
static void cpower_host_hold(struct cpower_cell *pc, struct cpower_lock *l,
			     u64 now)
{
	lockdep_assert_held(&pc->lock);
	/* Also ends a grace this source is in: no new wakeup event then. */
	__pm_stay_awake(l->ws);
	l->host_held = true;
	if (pc->nr_host_held++)
		return;
	pc->host_since = now;
	/* Within the last hold's grace: what is left of it is charged now. */
	if (now < pc->grace_until)
		pc->budget_used_ns -= min(pc->budget_used_ns, pc->grace_until - now);
	pc->grace_until = 0;
}

/* Close the current hold's account up to @now, under the current policy. */
static void cpower_budget_fold_locked(struct cpower_cell *pc, u64 now)
{
	lockdep_assert_held(&pc->lock);
	if (!pc->nr_host_held)
		return;
	if (pc->policy == CPOWER_CAP)
		pc->budget_used_ns = cpower_budget_used(pc->budget_used_ns, true,
							pc->host_since, now);
	pc->host_since = now;
}

/*
 * Let the host go for @l. With @grace (a capped lock let go by the cell,
 * budget left) the source stays active for CPOWER_CAP_GRACE_MS, by the PM
 * core's timer; the end of the cell's last hold is charged that grace.
 */
static void cpower_host_relax(struct cpower_cell *pc, struct cpower_lock *l,
			      u64 now, bool grace)
{
	u64 grace_ns = (u64)CPOWER_CAP_GRACE_MS * NSEC_PER_MSEC;

	lockdep_assert_held(&pc->lock);
	if (grace)
		pm_wakeup_ws_event(l->ws, CPOWER_CAP_GRACE_MS, false);
	else
		__pm_relax(l->ws);
	l->host_held = false;
	if (pc->nr_host_held == 1) {
		cpower_budget_fold_locked(pc, now);
		if (grace) {
			pc->budget_used_ns = cpower_budget_used(pc->budget_used_ns,
								true, now,
								now + grace_ns);
			pc->grace_until = now + grace_ns;
		}
	}
	pc->nr_host_held--;
}

/* End every grace at once: the budget is spent, or the policy changed. */
static void cpower_end_graces_locked(struct cpower_cell *pc)
{
	struct cpower_lock *l;

	lockdep_assert_held(&pc->lock);
	list_for_each_entry(l, &pc->lru, lru)
		if (l->ws && !l->host_held)
			__pm_relax(l->ws);
	pc->grace_until = 0;
}

/* Whether the policy and the budget let the cell's locks hold the host. */
static bool cpower_may_hold_locked(struct cpower_cell *pc)
{
	lockdep_assert_held(&pc->lock);
	return pc->policy == CPOWER_FORWARD ||
	       (pc->policy == CPOWER_CAP && !pc->budget_spent);
}

/**
 * struct cpower_src - the host wakeup source of one of a cell's locks
 * @ws: in the kernel's list of sources (wakeup_source_add()), but with no
 *	device: its name shows only in debugfs' wakeup_sources, which only
 *	the host's root reads, not in /sys/class/wakeup, which every user of
 *	every container may read, and it costs no uevent
 * @reap: in a list of sources to remove and free, once out of the table
 */
struct cpower_src {
	struct wakeup_source ws;
	struct list_head reap;
};

/* A source "cask:<cell>:<lock>", not yet in the kernel's list. */
static struct cpower_src *cpower_src_alloc(const char *cell, const char *lock)
{
	struct cpower_src *src;

	/* Charged to the writer, as the lock itself. */
	src = kzalloc(sizeof(*src), GFP_KERNEL_ACCOUNT);
	if (!src)
		return NULL;
	src->ws.name = cpower_ws_name(cell, lock);
	if (!src->ws.name) {
		kfree(src);
		return NULL;
	}
	return src;
}

/* Free a source that never was in the kernel's list. */
static void cpower_src_free(struct wakeup_source *ws)
{
	struct cpower_src *src = container_of(ws, struct cpower_src, ws);

	kfree(src->ws.name);
	kfree(src);
}

/* Give @l its host source, "cask:<cell>:<name>". */
static int cpower_ws_create(struct cpower_cell *pc, struct cpower_lock *l)
{
	struct cpower_src *src;

	/* Without CONFIG_PM_SLEEP there are no sources: NULL, and no error. */
	if (l->ws || !IS_ENABLED(CONFIG_PM_SLEEP))
		return 0;
	src = cpower_src_alloc(pc->cell_name, l->name);
	if (!src)
		return -ENOMEM;
	wakeup_source_add(&src->ws);
	l->ws = &src->ws;
	return 0;
}

/*
 * Take @l's source out of the table; it is removed from the kernel's list
 * later, by cpower_cell_reap() or the reap work: the removal waits for an
 * SRCU grace period, which must not happen under pc->lock nor under the
 * cask_core locks that unlink and detach run under. @l holds nothing of
 * the host's: cpower_host_relax() came first.
 */
static void cpower_ws_destroy(struct cpower_cell *pc, struct cpower_lock *l)
{
	struct cpower_src *src;

	lockdep_assert_held(&pc->lock);
	WARN_ON_ONCE(l->host_held);
	if (!l->ws)
		return;
	/* In a grace: it ends with the source. */
	__pm_relax(l->ws);
	src = container_of(l->ws, struct cpower_src, ws);
	list_add_tail(&src->reap, &pc->reap);
	l->ws = NULL;
}

/* Remove and free the sources on @list. */
static void cpower_reap(struct list_head *list)
{
	struct cpower_src *src, *tmp;

	list_for_each_entry_safe(src, tmp, list, reap) {
		/* Out of the list, readers gone, its timer stopped. */
		wakeup_source_remove(&src->ws);
		kfree(src->ws.name);
		kfree(src);
	}
}

/* Sources of stopped cells, freed by the work (cpower_reap_lock). */
static LIST_HEAD(cpower_reap_list);
static DEFINE_SPINLOCK(cpower_reap_lock);

static void cpower_reap_work_fn(struct work_struct *work)
{
	LIST_HEAD(list);

	spin_lock(&cpower_reap_lock);
	list_splice_init(&cpower_reap_list, &list);
	spin_unlock(&cpower_reap_lock);
	cpower_reap(&list);
}

static DECLARE_WORK(cpower_reap_work, cpower_reap_work_fn);

/**
 * cpower_cell_reap() - free the sources a cell's table let go
 * @pc: the cell
 *
 * What wake_lock (evicting a name) and policy (to deny) took out of the
 * table, removed by the writer once it has dropped the cell's lock, so
 * that a cell pays for its own churn in time, and the sources waiting
 * stay within max_locks.
 *
 * Context: process context, no lock held (waits for SRCU grace periods).
 */
void cpower_cell_reap(struct cpower_cell *pc)
{
	LIST_HEAD(list);

	mutex_lock(&pc->lock);
	list_splice_init(&pc->reap, &list);
	mutex_unlock(&pc->lock);
	cpower_reap(&list);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_cell_reap);

/**
 * cpower_reap_flush() - wait until every stopped cell's sources are freed
 *
 * Context: process context, no lock held; at module exit, once no cell is
 * left to stop.
 */
void cpower_reap_flush(void)
{
	flush_work(&cpower_reap_work);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_reap_flush);

static void cpower_deactivate_locked(struct cpower_cell *pc,
				     struct cpower_lock *l, u64 now)
{
	lockdep_assert_held(&pc->lock);
	l->active = false;
	l->expires = 0;
	if (l->host_held)
		cpower_host_relax(pc, l, now,
				  pc->policy == CPOWER_CAP && !pc->dead);
	pc->nr_active--;
	pc->held_ns += now - l->since;
	/* One more wakeup event done, as the kernel's wakeup_count counts. */
	pc->wakeup_count++;
	if (pc->autosleep != CPOWER_STATE_ON && !pc->nr_active)
		cpower_set_ready_locked(pc, true);
}

static void cpower_free_lock_locked(struct cpower_cell *pc,
				    struct cpower_lock *l)
{
	lockdep_assert_held(&pc->lock);
	rb_erase(&l->node, &pc->locks);
	list_del(&l->lru);
	pc->nr_locks--;
	cpower_ws_destroy(pc, l);
	kfree(l);
}

/* The lock called @name (@len bytes, not NUL-terminated), or NULL. */
static struct cpower_lock *cpower_find_locked(struct cpower_cell *pc,
					      const char *name, size_t len)
{
	struct rb_node *node = pc->locks.rb_node;

	lockdep_assert_held(&pc->lock);
	while (node) {
		struct cpower_lock *l = rb_entry(node, struct cpower_lock, node);
		int diff = strncmp(name, l->name, len);

		/* @name is a prefix of a longer name: it sorts first. */
		if (!diff && l->name[len])
			diff = -1;
		if (!diff)
			return l;
		node = diff < 0 ? node->rb_left : node->rb_right;
	}
	return NULL;
}

static void cpower_insert_locked(struct cpower_cell *pc, struct cpower_lock *new)
{
	struct rb_node **link = &pc->locks.rb_node, *parent = NULL;

	lockdep_assert_held(&pc->lock);
	while (*link) {
		struct cpower_lock *l = rb_entry(*link, struct cpower_lock, node);

		parent = *link;
		link = strcmp(new->name, l->name) < 0 ? &parent->rb_left :
							 &parent->rb_right;
	}
	rb_link_node(&new->node, parent, link);
	rb_insert_color(&new->node, &pc->locks);
	list_add_tail(&new->lru, &pc->lru);
	pc->nr_locks++;
}

/* Make room for one more name: forget the least recently written inactive one. */
static int cpower_make_room_locked(struct cpower_cell *pc)
{
	struct cpower_lock *l, *tmp;

	lockdep_assert_held(&pc->lock);
	list_for_each_entry_safe(l, tmp, &pc->lru, lru) {
		if (pc->nr_locks < pc->max_locks)
			return 0;
		if (!l->active)
			cpower_free_lock_locked(pc, l);
	}
	return pc->nr_locks < pc->max_locks ? 0 : -ENOSPC;
}

/**
 * cpower_lock_alloc() - the memory of a new lock, before the cell's lock
 * @pc: the cell
 * @name: the lock's name, @len bytes
 * @len: its length, at most CPOWER_NAME_MAX
 *
 * The lock, and its host source (not yet in the kernel's list), charged
 * to the writer: a task of the cell, whose memory cgroup may have to
 * reclaim first. That must not happen under @pc->lock, which the host's
 * own paths (the PM notifier, the expire work, the host's reads) take.
 * cpower_lock_locked() uses it, or the caller frees it with
 * cpower_lock_free_spare().
 *
 * Context: process context, @pc->lock not held.
 * Return: the lock, or NULL without memory.
 */
struct cpower_lock *cpower_lock_alloc(struct cpower_cell *pc, const char *name,
				      size_t len)
{
	struct cpower_lock *l;
	struct cpower_src *src;

	l = kzalloc(struct_size(l, name, len + 1), GFP_KERNEL_ACCOUNT);
	if (!l)
		return NULL;
	memcpy(l->name, name, len);
	if (IS_ENABLED(CONFIG_PM_SLEEP)) {
		src = cpower_src_alloc(pc->cell_name, l->name);
		if (!src) {
			kfree(l);
			return NULL;
		}
		l->ws = &src->ws;
	}
	return l;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_lock_alloc);

/**
 * cpower_lock_free_spare() - free what cpower_lock_alloc() made, unused
 * @l: the lock, or NULL
 *
 * Context: any that may sleep.
 */
void cpower_lock_free_spare(struct cpower_lock *l)
{
	if (!l)
		return;
	if (l->ws)
		cpower_src_free(l->ws);
	kfree(l);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_lock_free_spare);

/* Put @l, from cpower_lock_alloc(), in the table: nothing is allocated. */
static int cpower_new_locked(struct cpower_cell *pc, struct cpower_lock *l)
{
	int ret;

	lockdep_assert_held(&pc->lock);
	ret = cpower_make_room_locked(pc);
	if (ret)
		return ret;
	if (l->ws && pc->policy == CPOWER_DENY) {
		/* Deny has no sources; kfree() does not reclaim. */
		cpower_src_free(l->ws);
		l->ws = NULL;
	} else if (l->ws) {
		wakeup_source_add(l->ws);
	}
	cpower_insert_locked(pc, l);
	return 0;
}

/*
 * Bring every lock's host hold in line with the policy and the budget:
 * hold for active locks while the policy forwards and the budget lasts,
 * release all of them when deny comes or the budget runs out. Then wait
 * for the next deadline.
 */
static void cpower_apply_locked(struct cpower_cell *pc, u64 now)
{
	struct cpower_lock *l;
	bool hold;

	lockdep_assert_held(&pc->lock);
	if (pc->policy == CPOWER_CAP && !pc->budget_spent &&
	    cpower_budget_used(pc->budget_used_ns, pc->nr_host_held,
			       pc->host_since, now) >=
	    (u64)pc->max_hold_ms * NSEC_PER_MSEC) {
		pc->budget_spent = true;
		pc->caps++;
		/*
		 * It leaves suspend_blockers, which has no notification of
		 * its own: a power manager waits on the cells' suspend_ready.
		 */
		if (!pc->ready)
			cpower_queue_notify_locked(pc);
	}
	hold = cpower_may_hold_locked(pc);
	list_for_each_entry(l, &pc->lru, lru) {
		if (l->active && hold && !l->host_held)
			cpower_host_hold(pc, l, now);
		else if ((!l->active || !hold) && l->host_held)
			cpower_host_relax(pc, l, now, false);
	}
	if (!hold || pc->policy != CPOWER_CAP)
		cpower_end_graces_locked(pc);
	cpower_rearm_locked(pc, now);
}

/**
 * cpower_lock_locked() - a wake_lock write
 * @pc: the cell
 * @name: the lock's name, @len bytes
 * @len: its length, at most CPOWER_NAME_MAX
 * @timeout_ns: 0, or how long the lock lasts
 *
 * @spare: NULL, or where a lock from cpower_lock_alloc() of that name is;
 *	set to NULL if it was used
 *
 * Activates the lock and, unless the policy denies it or the cell has
 * used up the cap's budget, holds its host source. Any lock withdraws the
 * cell's vote: it is busy. A new name takes *@spare: nothing is allocated
 * here (see cpower_lock_alloc()).
 *
 * Context: process context, @pc->lock held.
 * Return: 0, -EAGAIN for a new name without a spare (drop the lock,
 * allocate one, try again), -ENOSPC (max_locks names, all active), or
 * -ENODEV once the cell is going.
 */
int cpower_lock_locked(struct cpower_cell *pc, const char *name, size_t len,
		       u64 timeout_ns, struct cpower_lock **spare)
{
	u64 now = cpower_now();
	struct cpower_lock *l;
	int ret;

	lockdep_assert_held(&pc->lock);
	if (pc->dead)
		return -ENODEV;
	l = cpower_find_locked(pc, name, len);
	if (!l) {
		if (!spare || !*spare)
			return -EAGAIN;
		ret = cpower_new_locked(pc, *spare);
		if (ret)
			return ret;
		l = *spare;
		*spare = NULL;
	}
	l->expires = cpower_expiry(now, l->active, l->expires, timeout_ns);
	if (!l->active) {
		l->active = true;
		l->since = now;
		pc->nr_active++;
	}
	if (pc->policy == CPOWER_DENY)
		pc->denials++;
	list_move_tail(&l->lru, &pc->lru);
	cpower_set_ready_locked(pc, false);
	cpower_apply_locked(pc, now);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_lock_locked);

/**
 * cpower_unlock_locked() - a wake_unlock write
 * @pc: the cell
 * @name: the lock's name, @len bytes
 * @len: its length
 *
 * Context: process context, @pc->lock held.
 * Return: 0 (also for a lock already inactive), -EINVAL for a name never
 * locked (or forgotten), as the kernel's wake_unlock.
 */
int cpower_unlock_locked(struct cpower_cell *pc, const char *name, size_t len)
{
	u64 now = cpower_now();
	struct cpower_lock *l;

	lockdep_assert_held(&pc->lock);
	l = cpower_find_locked(pc, name, len);
	if (!l)
		return -EINVAL;
	if (l->active)
		cpower_deactivate_locked(pc, l, now);
	list_move_tail(&l->lru, &pc->lru);
	/* The grace may have used up the budget. */
	cpower_apply_locked(pc, now);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_unlock_locked);

/**
 * cpower_blocks_suspend_locked() - whether a cell's missing vote holds suspend
 * @pc: the cell
 *
 * A cell blocks, for suspend_blockers, while its policy and budget let
 * it keep the host awake and it does not vote for sleep: a cap cell whose
 * budget is spent holds nothing until the budget is renewed, by its locks
 * or its vote, so that it delays each suspend by at most its budget.
 *
 * Context: process context, @pc->lock held.
 * Return: true if the cell blocks.
 */
bool cpower_blocks_suspend_locked(struct cpower_cell *pc)
{
	lockdep_assert_held(&pc->lock);
	return cpower_may_hold_locked(pc) && !pc->ready;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_blocks_suspend_locked);

/**
 * cpower_show_names_locked() - what wake_lock or wake_unlock reads
 * @pc: the cell
 * @buf: the sysfs page
 * @active: list the active locks (wake_lock) or the inactive ones
 *
 * The names in order, separated by spaces, and a newline, as the kernel
 * prints them (and like it, cut at the page), but with every byte that is
 * not printable ASCII, and every backslash, as a \ooo octal escape: the
 * host's root reads a cell's files too, a name must not drive its
 * terminal, and "a\001" written must not read as "a" and 0x01.
 *
 * Context: process context, @pc->lock held.
 * Return: bytes in @buf.
 */
ssize_t cpower_show_names_locked(struct cpower_cell *pc, char *buf, bool active)
{
	struct rb_node *node;
	int len = 0, n;

	lockdep_assert_held(&pc->lock);
	for (node = rb_first(&pc->locks); node; node = rb_next(node)) {
		struct cpower_lock *l = rb_entry(node, struct cpower_lock, node);

		if (l->active != active)
			continue;
		n = string_escape_mem(l->name, strlen(l->name), buf + len,
				      PAGE_SIZE - len,
				      ESCAPE_OCTAL | ESCAPE_NAP | ESCAPE_APPEND,
				      "\\");
		/* A name and its space, with room for the newline, or stop. */
		if (len + n + 1 >= PAGE_SIZE)
			break;
		len += n;
		buf[len++] = ' ';
	}
	if (len > 0)
		len--;
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_show_names_locked);

/**
 * cpower_set_policy_locked() - change a cell's policy
 * @pc: the cell
 * @policy: the new one
 *
 * Leaving deny gives every lock its host source, all or none; entering it
 * unregisters them. Active locks are held or released at once.
 *
 * Context: process context, @pc->lock held.
 * Return: 0, or -ENOMEM with nothing changed.
 */
int cpower_set_policy_locked(struct cpower_cell *pc, enum cpower_policy policy)
{
	struct cpower_lock *l;
	u64 now;
	int ret;

	lockdep_assert_held(&pc->lock);
	if (policy == pc->policy)
		return 0;
	if (pc->policy == CPOWER_DENY) {
		list_for_each_entry(l, &pc->lru, lru) {
			ret = cpower_ws_create(pc, l);
			if (ret)
				goto destroy_sources;
		}
	}
	now = cpower_now();
	/* Time held under cap counts against its budget, and only that. */
	cpower_budget_fold_locked(pc, now);
	pc->policy = policy;
	cpower_apply_locked(pc, now);
	if (policy == CPOWER_DENY)
		list_for_each_entry(l, &pc->lru, lru)
			cpower_ws_destroy(pc, l);
	return 0;

destroy_sources:
	list_for_each_entry_continue_reverse(l, &pc->lru, lru)
		cpower_ws_destroy(pc, l);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_set_policy_locked);

/**
 * cpower_renew_budget_locked() - give a cell a whole budget again
 * @pc: the cell
 *
 * After the host has completed a suspend and resume (the guest delayed
 * that suspend by at most its budget), or when the host's root sets the
 * budget. A cell's active locks hold the host again at once.
 *
 * Context: process context, @pc->lock held.
 */
void cpower_renew_budget_locked(struct cpower_cell *pc)
{
	u64 now = cpower_now();

	lockdep_assert_held(&pc->lock);
	pc->budget_used_ns = 0;
	pc->budget_spent = false;
	/* A grace running now was the old budget's. */
	pc->grace_until = 0;
	if (pc->nr_host_held)
		pc->host_since = now;
	cpower_apply_locked(pc, now);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_renew_budget_locked);

/**
 * cpower_set_max_hold_locked() - set a cell's budget, and renew it
 * @pc: the cell
 * @ms: how long, in milliseconds, the cell may hold the host under the cap
 *	policy until the budget is renewed again
 *
 * Context: process context, @pc->lock held.
 */
void cpower_set_max_hold_locked(struct cpower_cell *pc, unsigned int ms)
{
	lockdep_assert_held(&pc->lock);
	pc->max_hold_ms = ms;
	cpower_renew_budget_locked(pc);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_set_max_hold_locked);

/**
 * cpower_held_ns_locked() - how long the cell's locks have been active
 * @pc: the cell
 *
 * Context: process context, @pc->lock held.
 * Return: the sum over every activation, the current ones up to now.
 */
u64 cpower_held_ns_locked(struct cpower_cell *pc)
{
	u64 now = cpower_now(), ns = pc->held_ns;
	struct cpower_lock *l;

	lockdep_assert_held(&pc->lock);
	list_for_each_entry(l, &pc->lru, lru)
		if (l->active)
			ns += now - l->since;
	return ns;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_held_ns_locked);

/**
 * cpower_vote_locked() - a write to the cell's state file
 * @pc: the cell
 * @state: the state it names, CPOWER_STATE_ON if none
 *
 * Records that the cell would sleep; nothing is suspended. The vote is a
 * lease of @pc->vote_lease_ms: it lapses unless another write renews it
 * (Android's suspend loop writes again and again while idle), and a lock
 * ends it at once. The errors are the kernel's: autosleep on, an unknown
 * state, and, after a successful write to wakeup_count, a wakeup event
 * since (an aborted suspend).
 *
 * Context: process context, @pc->lock held.
 * Return: 0, -EBUSY or -EINVAL.
 */
int cpower_vote_locked(struct cpower_cell *pc, enum cpower_state state)
{
	bool armed = pc->armed;
	u64 now;

	lockdep_assert_held(&pc->lock);
	if (pc->autosleep != CPOWER_STATE_ON)
		return -EBUSY;
	if (state == CPOWER_STATE_ON)
		return -EINVAL;
	/* The check applies once, to the suspend that follows the write. */
	pc->armed = false;
	if (armed && (pc->wakeup_count != pc->saved_count || pc->nr_active))
		return -EBUSY;
	cpower_set_ready_locked(pc, true);
	/* A lease, renewed by the next write: a stale vote must not stand. */
	now = cpower_now();
	pc->vote_expires = cpower_expiry(now, false, 0,
					 (u64)pc->vote_lease_ms * NSEC_PER_MSEC);
	cpower_rearm_locked(pc, now);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_vote_locked);

/**
 * cpower_save_count_locked() - a write to the cell's wakeup_count file
 * @pc: the cell
 * @buf: what was written
 *
 * As the kernel's: a number is read as sscanf()'s "%u" reads it
 * (cpower_parse_count()); a write that holds none fails and changes
 * nothing. A number arms the check of the next state write
 * if it is the value read last and no lock is active, and disarms it
 * otherwise.
 *
 * Context: process context, @pc->lock held.
 * Return: 0, -EBUSY (autosleep on) or -EINVAL.
 */
int cpower_save_count_locked(struct cpower_cell *pc, const char *buf)
{
	unsigned int count;
	int ret;

	lockdep_assert_held(&pc->lock);
	if (pc->autosleep != CPOWER_STATE_ON)
		return -EBUSY;
	ret = cpower_parse_count(buf, &count);
	if (ret == -EINVAL)
		return ret;
	pc->armed = !ret && count == pc->wakeup_count && !pc->nr_active;
	if (!pc->armed)
		return -EINVAL;
	pc->saved_count = count;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_save_count_locked);

/**
 * cpower_set_autosleep_locked() - a write to the cell's autosleep file
 * @pc: the cell
 * @state: the state to vote for whenever no lock is active, or
 *	CPOWER_STATE_ON for off (which withdraws the vote)
 *
 * Context: process context, @pc->lock held.
 */
void cpower_set_autosleep_locked(struct cpower_cell *pc,
				 enum cpower_state state)
{
	lockdep_assert_held(&pc->lock);
	pc->autosleep = state;
	pc->armed = false;
	cpower_set_ready_locked(pc, state != CPOWER_STATE_ON && !pc->nr_active);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_set_autosleep_locked);

/**
 * cpower_release_all_locked() - drop every lock and host source of a cell
 * @pc: the cell
 *
 * Context: process context, @pc->lock held.
 */
void cpower_release_all_locked(struct cpower_cell *pc)
{
	u64 now = cpower_now();
	struct cpower_lock *l;

	lockdep_assert_held(&pc->lock);
	while ((l = list_first_entry_or_null(&pc->lru, struct cpower_lock, lru))) {
		if (l->active)
			cpower_deactivate_locked(pc, l, now);
		cpower_free_lock_locked(pc, l);
	}
}
EXPORT_SYMBOL_IF_KUNIT(cpower_release_all_locked);

/*
 * Timeouts, the end of the cap's budget and of the vote's lease, at the
 * earliest deadline.
 */
static void cpower_expire_work(struct work_struct *work)
{
	struct cpower_cell *pc = container_of(to_delayed_work(work),
					      struct cpower_cell, expire);
	struct cpower_lock *l;
	u64 now;

	mutex_lock(&pc->lock);
	now = cpower_now();
	list_for_each_entry(l, &pc->lru, lru)
		if (l->active && l->expires && now >= l->expires)
			cpower_deactivate_locked(pc, l, now);
	if (pc->ready && pc->vote_expires && now >= pc->vote_expires)
		cpower_set_ready_locked(pc, false);
	cpower_apply_locked(pc, now);
	mutex_unlock(&pc->lock);
}

/**
 * cpower_cell_init() - set up a cell's empty table
 * @pc: zeroed memory
 * @cell_name: the cell's name, which outlives @pc
 *
 * Context: any that may sleep.
 */
void cpower_cell_init(struct cpower_cell *pc, const char *cell_name)
{
	pc->cell_name = cell_name;
	INIT_DELAYED_WORK(&pc->expire, cpower_expire_work);
	INIT_DELAYED_WORK(&pc->notify, cpower_notify_work);
	mutex_init(&pc->lock);
	pc->locks = RB_ROOT;
	INIT_LIST_HEAD(&pc->lru);
	INIT_LIST_HEAD(&pc->reap);
	/*
	 * A cell can be made by any user who can make a user namespace (an
	 * auto cell): none of them may hold the host awake, which the host
	 * allows only to CAP_BLOCK_SUSPEND in its own user namespace, until
	 * the host's root says so.
	 */
	pc->policy = CPOWER_DENY;
	pc->max_locks = CPOWER_MAX_LOCKS_DEFAULT;
	pc->max_hold_ms = CPOWER_MAX_HOLD_MS_DEFAULT;
	pc->vote_lease_ms = CPOWER_VOTE_LEASE_MS_DEFAULT;
	pc->autosleep = CPOWER_STATE_ON;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_cell_init);

/**
 * cpower_cell_stop() - release what a cell holds; it takes no more
 * @pc: the cell
 *
 * Called when the cell is unlinked (its tasks can no longer reach its
 * files) and again before it is freed. The timer and the notification
 * are stopped first: their works take @pc->lock. The host sources are
 * released at once and removed from the kernel's list by the reap work:
 * this runs under cask_core's locks, where no SRCU grace period may be
 * waited for.
 *
 * Context: process context, @pc->lock not held.
 */
void cpower_cell_stop(struct cpower_cell *pc)
{
	disable_delayed_work_sync(&pc->expire);
	/* Its pollers are gone with the cell's files; it takes the lock. */
	disable_delayed_work_sync(&pc->notify);
	mutex_lock(&pc->lock);
	pc->dead = true;
	cpower_release_all_locked(pc);
	if (!list_empty(&pc->reap)) {
		spin_lock(&cpower_reap_lock);
		list_splice_tail_init(&pc->reap, &cpower_reap_list);
		spin_unlock(&cpower_reap_lock);
		queue_work(system_unbound_wq, &cpower_reap_work);
	}
	mutex_unlock(&pc->lock);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_cell_stop);

/**
 * cpower_cell_exit() - free everything of a cell but @pc itself
 * @pc: the cell; no sysfs callback of it runs or can start
 *
 * Context: process context, @pc->lock not held.
 */
void cpower_cell_exit(struct cpower_cell *pc)
{
	cpower_cell_stop(pc);
	kernfs_put(pc->ready_kn);
	mutex_destroy(&pc->lock);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_cell_exit);

/**
 * cpower_learn_ready_kn() - keep the node of a cell's suspend_ready file
 * @pc: the cell
 * @kobj: the cell's power directory, from a callback of one of its files
 * @name: the file's name
 *
 * The node to notify is learnt on the first read: a poller reads before
 * it polls (sysfs_notify()'s rule), and a callback is where the directory
 * is known to be in sysfs. Not while the directory goes:
 * sysfs_remove_dir() clears @kobj->sd before it waits for the callbacks
 * running, so the directory may be gone here (its node itself stays until
 * that wait is over): then nothing is learnt, nobody will poll it.
 *
 * Context: process context, @pc->lock not held.
 */
void cpower_learn_ready_kn(struct cpower_cell *pc, struct kobject *kobj,
			   const char *name)
{
	struct kernfs_node *dir = READ_ONCE(kobj->sd);
	struct kernfs_node *kn;
	bool need;

	mutex_lock(&pc->lock);
	need = !pc->ready_kn;
	mutex_unlock(&pc->lock);
	if (!need || !dir)
		return;
	kn = sysfs_get_dirent(dir, name);
	if (!kn)
		return;
	mutex_lock(&pc->lock);
	if (!pc->ready_kn)
		swap(pc->ready_kn, kn);
	mutex_unlock(&pc->lock);
	kernfs_put(kn);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_learn_ready_kn);
