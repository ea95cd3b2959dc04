// SPDX-License-Identifier: GPL-2.0
/*
 * Watching a cell's free memory and killing inside it.
 *
 * A cell's free memory is its memory cgroup's limit (memory.max, or
 * memory.high where lower; its own, not its ancestors') minus its usage,
 * in pages. The host cell measures the whole system as the legacy
 * driver did: free pages, and file pages that are not shmem.
 *
 * Two triggers queue the cell's tick:
 *  - reclaim: each cell puts one sentinel object on lmk_lru, a memcg-aware
 *    list_lru, allocated inside the cell's memcg, which makes reclaim of
 *    that memcg (at its memory.high or memory.max, an ancestor's, or
 *    global reclaim) call our shrinker with sc->memcg set to it. The
 *    count callback reads a few counters of each cell whose sentinel is
 *    there and, if one is within its top level, queues its tick. It never
 *    sleeps, allocates or takes a lock of ours: reclaim calls it tens of
 *    thousands of times an episode. It reports nothing to scan.
 *  - the tick itself: while a cell has levels it re-checks every
 *    LMK_TICK_SLOW, and every LMK_TICK_FAST while within its top level or
 *    following a victim. The slow tick is what notices a cell sliding into
 *    its levels before any reclaim (a cell with only memory.max is not
 *    reclaimed until it hits it): one counter read per cell with levels.
 *
 * The tick picks the crossed level, the victim (the highest oom_score_adj
 * at or above the level's, then the largest RSS, among the processes of
 * the cell's cgroup subtree: a walk of every process under RCU, since
 * css_task_iter is not exported, at kill time only), and sends SIGKILL.
 * One kill is in flight per cell: the next waits until the victim's memory
 * is freed (reaped by patches/0002, or its exit) or LMK_KILL_TIMEOUT.
 *
 * Locking: the list_lru's lock (a walk) > the workqueue's; no lock of ours
 * in reclaim. lc->lock (a mutex) > RCU > task_lock() in the tick and the
 * stores; lc->ev_lock is innermost. Detach takes the sentinel off the
 * list under the list_lru lock, so no walk can find the cell's state
 * after it; then it cancels the tick and the reap, which take lc->lock.
 */
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/ktime.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/user_namespace.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/vmstat.h>
#include <cask/cell.h>

#include "compat.h"
#include "lmk.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

#define LMK_TICK_FAST		msecs_to_jiffies(10)
#define LMK_TICK_SLOW		msecs_to_jiffies(100)
/* The legacy driver's wait for a victim before it chose another. */
#define LMK_KILL_TIMEOUT	HZ

struct lmk_sentinel {
	struct list_head lru;
	struct lmk_cell *lc;
};

static struct workqueue_struct *lmk_wq;
static struct kmem_cache *lmk_sentinel_cache;
static struct list_lru lmk_lru;
static struct shrinker *lmk_shrinker;

/*
 * The limit of the cell's own memcg minus its usage. Not its ancestors':
 * a sibling filling a shared parent would make this cell kill its own
 * processes for memory it does not use. Runtimes give each container its
 * own memory.max; a parent's limit is the memcg OOM killer's business.
 */
static unsigned long lmk_memcg_free(struct mem_cgroup *memcg)
{
	unsigned long limit, usage;

	/* The root (no parent) has no limits; root_mem_cgroup is not exported. */
	if (!memcg || !parent_mem_cgroup(memcg))
		return ULONG_MAX;
	limit = min(READ_ONCE(memcg->memory.max), READ_ONCE(memcg->memory.high));
	usage = page_counter_read(&memcg->memory);
	return limit > usage ? limit - usage : 0;
}

/*
 * What the legacy driver measured, less totalreserve_pages, which is not
 * exported: free pages, and file pages that are not shmem or swap cache.
 */
static unsigned long lmk_host_free(unsigned long *file)
{
	long f = global_node_page_state(NR_FILE_PAGES) -
		 global_node_page_state(NR_SHMEM) -
		 lmk_swapcache_pages();

	*file = max(f, 0L);
	return global_zone_page_state(NR_FREE_PAGES);
}

/* Any context: counters only. */
static unsigned long lmk_cell_free(struct lmk_cell *lc, unsigned long *file)
{
	if (cask_cell_is_host(lc->cell))
		return lmk_host_free(file);
	*file = 0;
	return lmk_memcg_free(lc->memcg);
}

/*
 * Queue the tick now if the cell is within its top level. Any context,
 * reclaim included: no sleep, no allocation, no lock of ours.
 */
static void lmk_kick(struct lmk_cell *lc)
{
	unsigned long top = READ_ONCE(lc->top), free, file;

	if (!top)
		return;
	free = lmk_cell_free(lc, &file);
	if (free >= top || file >= top)
		return;
	atomic64_cmpxchg(&lc->since_ns, 0, ktime_get_ns());
	if (!test_and_set_bit(LMK_KICKED, &lc->flags))
		mod_delayed_work(lmk_wq, &lc->tick, 0);
}

/*
 * The resident pages of @p's address space, found through any of its
 * threads that still has it (with @live, and is not exiting); false once
 * none has (its memory is freed, or being freed by the last mmput(); with
 * @live, or every thread with it is exiting: the process is). RCU held.
 */
static bool lmk_task_rss(struct task_struct *p, unsigned long *rss,
			 bool live)
{
	struct task_struct *t;

	for_each_thread(p, t) {
		if (live && (READ_ONCE(t->flags) & PF_EXITING))
			continue;
		task_lock(t);
		if (likely(t->mm)) {
			*rss = get_mm_rss(t->mm);
			task_unlock(t);
			return true;
		}
		task_unlock(t);
	}
	return false;
}

/*
 * Whether @p runs with credentials of @ns or a namespace below it. A cell's
 * killer may kill only those: a cell made by an unprivileged user (its own
 * user namespace, in a cgroup it shares with others) must not SIGKILL
 * processes that user could not signal. The host cell's is the initial
 * namespace, which holds everybody. Called under RCU.
 */
static bool lmk_task_in_userns(struct task_struct *p,
			       const struct user_namespace *ns)
{
	const struct user_namespace *t = __task_cred(p)->user_ns;

	while (t->level > ns->level)
		t = t->parent;
	return t == ns;
}

/* The best victim at @min_adj among the cell's processes, referenced. */
static struct task_struct *lmk_select_locked(struct lmk_cell *lc,
					     short min_adj,
					     struct lmk_candidate *best_c)
{
	struct user_namespace *userns = cask_cell_user_ns(lc->cell);
	struct cgroup *cgrp = cask_cell_cgroup(lc->cell);
	struct pid_namespace *ns = cask_cell_pid_ns(lc->cell);
	struct task_struct *p, *reaper, *best = NULL;
	struct lmk_candidate c;

	lockdep_assert_held(&lc->lock);
	if (!cgrp)
		return NULL;
	rcu_read_lock();
	reaper = ns ? READ_ONCE(ns->child_reaper) : NULL;
	for_each_process(p) {
		c = (struct lmk_candidate) {
			.adj = READ_ONCE(p->signal->oom_score_adj),
			.kthread = p->flags & PF_KTHREAD,
			.init = is_global_init(p) ||
				(reaper && same_thread_group(p, reaper)),
			/*
			 * The process's state, not its leader's PF_EXITING: a
			 * leader that called pthread_exit() is exiting while
			 * the process runs on. lmk_task_rss() passes over
			 * exiting threads.
			 */
			.dying = fatal_signal_pending(p) ||
				 (p->signal->flags & SIGNAL_GROUP_EXIT),
			.in_cell = task_under_cgroup_hierarchy(p, cgrp),
		};
		/* The cheap tests first: task_lock() only for the few left. */
		if (c.kthread || !c.in_cell || c.adj < max_t(short, min_adj, 0) ||
		    !lmk_task_in_userns(p, userns))
			continue;
		if (!lmk_task_rss(p, &c.rss, true))
			continue;
		if (!lmk_candidate_eligible(&c, min_adj) ||
		    !lmk_candidate_better(&c, best ? best_c : NULL))
			continue;
		best = p;
		*best_c = c;
	}
	if (best)
		get_task_struct(best);
	rcu_read_unlock();
	return best;
}

static void lmk_event_fill(struct lmk_event *ev, struct task_struct *p,
			   const struct lmk_candidate *c, short min_adj,
			   int level)
{
	ev->pid = get_task_pid(p, PIDTYPE_PID);
	ev->tgid = get_task_pid(p, PIDTYPE_TGID);
	ev->uid = task_uid(p);
	ev->min_flt = p->min_flt;
	ev->maj_flt = p->maj_flt;
	ev->rss = c->rss;
	ev->adj = c->adj;
	ev->min_adj = min_adj;
	ev->level = level;
	ev->start_ns = p->start_boottime;
	get_task_comm(ev->comm, p);
}

static void lmk_record(u64 *last, u64 *max, u64 from_ns, u64 to_ns)
{
	*last = div_u64(to_ns - from_ns, NSEC_PER_USEC);
	*max = max(*max, *last);
}

/* Kill the best victim at @level, if there is one; false if none. */
static bool lmk_kill_locked(struct lmk_cell *lc, int level)
{
	short min_adj = lc->levels.adj[level];
	struct lmk_candidate c = { };
	struct lmk_event ev = { };
	struct task_struct *p;
	u64 now, since;

	lockdep_assert_held(&lc->lock);
	/* A walk of every process: not again soon after one found nobody. */
	if (time_before(jiffies, lc->idle_until))
		return false;
	p = lmk_select_locked(lc, min_adj, &c);
	if (!p) {
		lc->idle_until = jiffies + LMK_TICK_SLOW;
		return false;
	}
	lmk_event_fill(&ev, p, &c, min_adj, level);
	lmk_event_release(&lc->last);
	lmk_event_fill(&lc->last, p, &c, min_adj, level);

	/*
	 * To the thread group, not to @p: a leader that called
	 * pthread_exit() takes no signal, and one sent to it alone is never
	 * acted on.
	 */
	kill_pid(task_tgid(p), SIGKILL, 1);
	now = ktime_get_ns();
	since = atomic64_read(&lc->since_ns) ?: now;
	lc->victim = p;
	lc->kill_ns = now;
	lc->deadline = jiffies + LMK_KILL_TIMEOUT;
	lc->reaped = false;
	lc->kills++;
	lmk_record(&lc->reaction_last, &lc->reaction_max, since, now);

	trace_lmk_kill(cask_cell_name(lc->cell), task_pid_nr(p), lc->last.comm,
		       c.adj, c.rss, min_adj, lc->reaction_last);
	pr_info_ratelimited("cell %s: killed '%s' (%d), adj %d, rss %lu pages, level %d (adj %d), %llu us\n",
			    cask_cell_name(lc->cell), lc->last.comm,
			    task_pid_nr(p), c.adj, c.rss, level, min_adj,
			    lc->reaction_last);
	lmk_event_queue(lc, &ev);
	if (LMK_HAVE_REAP)
		queue_work(lmk_wq, &lc->reap);
	return true;
}

static void lmk_victim_done_locked(struct lmk_cell *lc)
{
	put_task_struct(lc->victim);
	lc->victim = NULL;
	/* What remains crossed after this is a new crossing. */
	atomic64_set(&lc->since_ns, 0);
}

/* Is a kill still in flight? Ends it once the victim's memory is freed. */
static bool lmk_victim_pending_locked(struct lmk_cell *lc)
{
	unsigned long rss;
	bool has_mm;

	lockdep_assert_held(&lc->lock);
	if (!lc->victim)
		return false;
	if (lc->reaped) {
		lmk_victim_done_locked(lc);
		return false;
	}
	/* Our reference keeps its signal_struct, so its thread list. */
	rcu_read_lock();
	has_mm = lmk_task_rss(lc->victim, &rss, false);
	rcu_read_unlock();
	if (!has_mm) {
		lmk_record(&lc->freed_last, &lc->freed_max, lc->kill_ns,
			   ktime_get_ns());
		lmk_victim_done_locked(lc);
		return false;
	}
	if (time_after(jiffies, lc->deadline)) {
		pr_warn_ratelimited("cell %s: pid %d still has its memory %u ms after SIGKILL\n",
				    cask_cell_name(lc->cell),
				    task_pid_nr(lc->victim),
				    jiffies_to_msecs(LMK_KILL_TIMEOUT));
		lmk_victim_done_locked(lc);
		return false;
	}
	return true;
}

static void lmk_tick(struct work_struct *work)
{
	struct lmk_cell *lc = container_of(to_delayed_work(work),
					   struct lmk_cell, tick);
	unsigned long top, free, file;
	bool pending, within;
	int level = -1;

	clear_bit(LMK_KICKED, &lc->flags);
	mutex_lock(&lc->lock);
	top = lc->enabled ? lmk_levels_top(&lc->levels) : 0;
	pending = lmk_victim_pending_locked(lc);
	free = lmk_cell_free(lc, &file);
	within = free < top && file < top;
	if (top)
		level = lmk_level_select(&lc->levels, free, file);
	if (level < 0) {
		atomic64_set(&lc->since_ns, 0);
	} else {
		atomic64_cmpxchg(&lc->since_ns, 0, ktime_get_ns());
		/* Nobody to kill: look again at the slow pace. */
		if (!pending && !lmk_kill_locked(lc, level))
			within = false;
		pending = !!lc->victim;
	}
	/* No levels and nothing to follow: the tick stops until set again. */
	if (top || pending)
		queue_delayed_work(lmk_wq, &lc->tick, within || pending ?
				   LMK_TICK_FAST : LMK_TICK_SLOW);
	mutex_unlock(&lc->lock);
}

/* Free the victim's memory now rather than at the end of its exit. */
static void lmk_reap(struct work_struct *work)
{
	struct lmk_cell *lc = container_of(work, struct lmk_cell, reap);
	struct task_struct *p;
	int ret;

	mutex_lock(&lc->lock);
	p = lc->victim;
	if (p)
		get_task_struct(p);
	mutex_unlock(&lc->lock);
	if (!p)
		return;
	/* May sleep on the victim's mmap_lock: not under lc->lock. */
	ret = lmk_mrelease(p);
	mutex_lock(&lc->lock);
	/* Else (its mm shared with a live process) wait for its exit. */
	if (lc->victim == p && (!ret || ret == -ESRCH)) {
		lmk_record(&lc->freed_last, &lc->freed_max, lc->kill_ns,
			   ktime_get_ns());
		lc->reaped = true;
	}
	mutex_unlock(&lc->lock);
	put_task_struct(p);
}

/**
 * lmk_cell_set_levels_locked() - change a cell's levels and (re)start it
 * @lc: the cell's state
 * @lv: the new levels
 * @enabled: whether the killer acts on them
 *
 * Context: process context, lc->lock held.
 */
void lmk_cell_set_levels_locked(struct lmk_cell *lc,
				const struct lmk_levels *lv, bool enabled)
{
	lockdep_assert_held(&lc->lock);
	lc->levels = *lv;
	lc->enabled = enabled;
	WRITE_ONCE(lc->top, enabled ? lmk_levels_top(lv) : 0);
	/* The tick runs at once and then keeps its own pace. */
	mod_delayed_work(lmk_wq, &lc->tick, 0);
}

static enum lru_status lmk_count_one(struct list_head *item,
				     struct list_lru_one *list,
				     spinlock_t *lock, void *arg)
{
	struct lmk_sentinel *s = container_of(item, typeof(*s), lru);

	/* Listed, so its cell's state is attached: detach unlists first. */
	lmk_kick(s->lc);
	return LRU_SKIP;
}

static unsigned long lmk_shrink_count(struct shrinker *shrinker,
				      struct shrink_control *sc)
{
	unsigned long nr = ULONG_MAX;

	if (!list_lru_count_one(&lmk_lru, sc->nid, sc->memcg))
		return SHRINK_EMPTY;
	list_lru_walk_one(&lmk_lru, sc->nid, sc->memcg, lmk_count_one, NULL,
			  &nr);
	/* Nothing to scan; 0, not SHRINK_EMPTY, keeps the memcg's bit. */
	return 0;
}

static unsigned long lmk_shrink_scan(struct shrinker *shrinker,
				     struct shrink_control *sc)
{
	return SHRINK_STOP;
}

/**
 * lmk_cell_init() - set up a new cell's killer: no levels, enabled
 * @lc: zeroed state
 * @cell: its cell
 *
 * Files the cell's sentinel in the memcg of its cgroup.
 *
 * Context: process context, may sleep (cask_core's attach).
 * Return: 0 or -ENOMEM.
 */
int lmk_cell_init(struct lmk_cell *lc, struct cask_cell *cell)
{
	struct cgroup_subsys_state *css = NULL;
	struct cgroup *cgrp = cask_cell_cgroup(cell);
	struct mem_cgroup *old;

	lc->cell = cell;
	lc->enabled = true;
	mutex_init(&lc->lock);
	spin_lock_init(&lc->ev_lock);
	init_waitqueue_head(&lc->wait);
	INIT_DELAYED_WORK(&lc->tick, lmk_tick);
	INIT_WORK(&lc->reap, lmk_reap);
	if (cgrp && !mem_cgroup_disabled())
		css = cgroup_get_e_css(cgrp, &memory_cgrp_subsys);
	lc->memcg = css ? mem_cgroup_from_css(css) : NULL;

	/*
	 * Allocated inside the memcg so that kmem_cache_alloc_lru() makes the
	 * memcg's list before list_lru_add_obj() files the sentinel there.
	 */
	old = set_active_memcg(lc->memcg);
	lc->sentinel = kmem_cache_alloc_lru(lmk_sentinel_cache, &lmk_lru,
					    GFP_KERNEL);
	set_active_memcg(old);
	if (!lc->sentinel) {
		mem_cgroup_put(lc->memcg);
		return -ENOMEM;
	}
	lc->sentinel->lc = lc;
	/* list_lru_add_obj() adds only an item whose list_head is empty. */
	INIT_LIST_HEAD(&lc->sentinel->lru);
	list_lru_add_obj(&lmk_lru, &lc->sentinel->lru);
	return 0;
}

/**
 * lmk_cell_exit() - undo lmk_cell_init(): stop the cell's killer
 * @lc: the state
 *
 * The caller frees @lc after an RCU grace period (wake_up_pollfree()).
 *
 * Context: process context (cask_core's detach).
 */
void lmk_cell_exit(struct lmk_cell *lc)
{
	/* Under the list's lock: no walk can find the cell after this. */
	list_lru_del_obj(&lmk_lru, &lc->sentinel->lru);
	kmem_cache_free(lmk_sentinel_cache, lc->sentinel);
	/* The tick may queue the reap, not the other way round. */
	cancel_delayed_work_sync(&lc->tick);
	cancel_work_sync(&lc->reap);
	if (lc->victim)
		put_task_struct(lc->victim);
	lmk_event_release(&lc->last);
	lmk_events_flush(lc);
	mem_cgroup_put(lc->memcg);
}

/**
 * lmk_kill_init() - make the workqueue, the sentinel cache, the shrinker
 * and its list
 *
 * The shrinker is registered by lmk_kill_register() once cells exist.
 *
 * Context: module init.
 * Return: 0 or a negative errno.
 */
int lmk_kill_init(void)
{
	int ret = -ENOMEM;

	/* Kills must make progress when memory is short: a rescuer. */
	lmk_wq = alloc_workqueue("lowmemorykiller", WQ_MEM_RECLAIM | WQ_HIGHPRI,
				 0);
	if (!lmk_wq)
		return -ENOMEM;
	lmk_sentinel_cache = KMEM_CACHE(lmk_sentinel, SLAB_ACCOUNT);
	if (!lmk_sentinel_cache)
		goto destroy_wq;
	lmk_shrinker = shrinker_alloc(SHRINKER_MEMCG_AWARE |
				      SHRINKER_NUMA_AWARE |
				      SHRINKER_NONSLAB, "lowmemorykiller");
	if (!lmk_shrinker)
		goto destroy_cache;
	ret = list_lru_init_memcg(&lmk_lru, lmk_shrinker);
	if (ret)
		goto free_shrinker;
	lmk_shrinker->count_objects = lmk_shrink_count;
	lmk_shrinker->scan_objects = lmk_shrink_scan;
	return 0;

free_shrinker:
	shrinker_free(lmk_shrinker);
	lmk_shrinker = NULL;
destroy_cache:
	kmem_cache_destroy(lmk_sentinel_cache);
destroy_wq:
	destroy_workqueue(lmk_wq);
	return ret;
}

/**
 * lmk_kill_register() - let reclaim call the shrinker
 *
 * Context: module init, after lmk_kill_init() and the driver's
 * registration (every cell has its sentinel).
 */
void lmk_kill_register(void)
{
	shrinker_register(lmk_shrinker);
}

/**
 * lmk_kill_unregister() - stop the shrinker, wait for running counts
 *
 * Called before the cells' state goes, which counts use. A shrinker
 * cannot be unregistered without being freed, so this frees it too.
 *
 * Context: module exit.
 */
void lmk_kill_unregister(void)
{
	shrinker_free(lmk_shrinker);
	lmk_shrinker = NULL;
}

/**
 * lmk_kill_free() - free the shrinker (unless unregistered), the list,
 * the sentinel cache and the workqueue
 *
 * Context: module exit, after every cell's state is gone.
 */
void lmk_kill_free(void)
{
	shrinker_free(lmk_shrinker);
	list_lru_destroy(&lmk_lru);
	kmem_cache_destroy(lmk_sentinel_cache);
	destroy_workqueue(lmk_wq);
}
