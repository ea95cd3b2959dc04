// SPDX-License-Identifier: GPL-2.0
/*
 * Watching a cell's free memory and queueing its tick.
 *
 * A cell's free memory is its memory cgroup's limit (memory.max, or
 * memory.high where lower; its own, not its ancestors') minus its usage,
 * in pages. The host cell measures the whole system as the legacy
 * driver did: free pages, and file pages that are not shmem.
 *
 * Two triggers queue the cell's tick:
 *  - reclaim: each cell arms a memcg watch (cask_core's kit,
 *    <cask/memcg.h>): one sentinel object on a memcg-aware list_lru,
 *    allocated inside the cell's memcg, which makes reclaim of that
 *    memcg (at its memory.high or memory.max, an ancestor's, or global
 *    reclaim) call our shrinker with sc->memcg set to it. The
 *    count callback reads a few counters of each cell whose sentinel is
 *    there and, if one is within its top level, queues its tick. It never
 *    sleeps, allocates or takes a lock of ours: reclaim calls it tens of
 *    thousands of times an episode. It reports nothing to scan.
 *  - the tick itself: while a cell has levels it re-checks at the pace
 *    lmk_tick_pace() gives (every 10 ms within its top level or following
 *    a victim, 20 ms within another top level's worth of it, 100 ms
 *    further away). The tick is what notices a cell sliding into its
 *    levels before any reclaim (a cell with only memory.max is not
 *    reclaimed until it hits it), and the near pace is what bounds how
 *    late it does: one counter read per cell with levels.
 *
 * The tick follows a victim in flight and, at a crossed level, has kill.c
 * search for one and kill it. This file also sets up and tears down a
 * cell's killer (its watch and tick) and the module's workqueue and
 * watcher, and starts and stops the reaper (reap.c).
 *
 * Locking: Documentation/dev/architecture.rst ("The low-memory killer")
 * gives the order; in short, no lock of ours in reclaim: the shrinker's
 * count only reads counters and queues the tick, which takes lc->lock.
 * Detach disarms the watch under the list_lru lock, so no walk can find
 * the cell's state after it.
 */
#include <linux/cgroup.h>
#include <linux/ktime.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/vmstat.h>
#include <cask/cell.h>
#include <cask/compat.h>
#include <cask/memcg.h>

#include "lmk.h"

static struct workqueue_struct *lmk_wq;
static struct cask_memcg_watcher lmk_watcher;

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
		 cask_swapcache_pages();

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
	/*
	 * A full barrier after the reads above: if the bit is still set,
	 * the tick's clear_bit() and smp_mb__after_atomic() come after it,
	 * and the tick's own read sees what this one saw, or newer.
	 */
	if (!test_and_set_bit(LMK_KICKED, &lc->flags))
		mod_delayed_work(lmk_wq, &lc->tick, 0);
}

static void lmk_tick(struct work_struct *work)
{
	struct lmk_cell *lc = container_of(to_delayed_work(work),
					   struct lmk_cell, tick);
	unsigned long top, free, file;
	unsigned int pace;
	bool pending;
	int level = -1;

	clear_bit(LMK_KICKED, &lc->flags);
	/*
	 * Pairs with the full barrier of test_and_set_bit() in lmk_kick(),
	 * which reads the counters before it: a kick that finds the bit
	 * still set leaves the crossing it saw to this run, so the counters
	 * must be read after the clear is visible, else a kick between the
	 * read and the clear is lost until the next pace. clear_bit() orders
	 * nothing, and the mutex's acquire does not order this store before
	 * the loads after it.
	 */
	smp_mb__after_atomic();
	mutex_lock(&lc->lock);
	/*
	 * An unlinked cell has no files left to see or stop its killer by,
	 * and a new cell may already watch the same cgroup: it kills no
	 * more. lmk_cell_unlink() cleared its levels; this covers a tick
	 * that was queued before and a cell attached after its unlink.
	 */
	if (!cask_cell_linked(lc->cell)) {
		mutex_unlock(&lc->lock);
		return;
	}
	top = lc->enabled ? lmk_levels_top(&lc->levels) : 0;
	pending = lmk_victim_pending_locked(lc);
	free = lmk_cell_free(lc, &file);
	pace = lmk_tick_pace(top, free, file);
	if (top)
		level = lmk_level_select(&lc->levels, free, file);
	lmk_levels_crossed(&lc->levels, lc->crossed_ns, top ? free : ULONG_MAX,
			   file, atomic64_read(&lc->since_ns), ktime_get_ns());
	if (level < 0) {
		atomic64_set(&lc->since_ns, 0);
	} else {
		atomic64_cmpxchg(&lc->since_ns, 0, ktime_get_ns());
		/* Nobody to kill: look again at the slow pace. */
		if (!pending && !lmk_kill_locked(lc, level))
			pace = LMK_TICK_SLOW_MS;
		pending = !!lc->victim;
	}
	if (pending)
		pace = LMK_TICK_FAST_MS;
	/* No levels and nothing to follow: the tick stops until set again. */
	if (top || pending)
		queue_delayed_work(lmk_wq, &lc->tick, msecs_to_jiffies(pace));
	mutex_unlock(&lc->lock);
}

/**
 * lmk_cell_set_levels_locked() - change a cell's levels and (re)start it
 * @lc: the cell's state
 * @lv: the new levels
 * @enabled: whether the killer acts on them
 *
 * Context: process context, lc->lock held.
 * Return: 0, or -ENODEV if the cell was unlinked: a param write that
 * found the cell before its unlink must not start its killer again.
 */
int lmk_cell_set_levels_locked(struct lmk_cell *lc,
			       const struct lmk_levels *lv, bool enabled)
{
	lockdep_assert_held(&lc->lock);
	/* False before lmk_cell_unlink() takes lc->lock: no store slips by. */
	if (!cask_cell_linked(lc->cell))
		return -ENODEV;
	lc->levels = *lv;
	lc->enabled = enabled;
	/* The indices may name other levels now: crossed anew. */
	memset(lc->crossed_ns, 0, sizeof(lc->crossed_ns));
	WRITE_ONCE(lc->top, enabled ? lmk_levels_top(lv) : 0);
	/* The tick runs at once and then keeps its own pace. */
	mod_delayed_work(lmk_wq, &lc->tick, 0);
	return 0;
}

/**
 * lmk_cell_unlink() - stop an unlinked cell's killer for good
 * @lc: the cell's state
 *
 * The cell has left sysfs and lookups, but an open /proc/lowmemorykiller
 * (or another driver's file) may keep it for long: without this its
 * levels and tick would go on killing in its cgroup with nothing left to
 * see or disable them by, next to the new cell that the same IPC
 * namespace gets on its next use. The killer is disabled and its levels
 * dropped, a victim in flight is let go (its SIGKILL stands), and the
 * cell's readers get EPOLLHUP and then end of file, so that lmkd reopens
 * the file in its new cell.
 *
 * Context: process context (cask_core's unlink, under its registry lock;
 * the tick takes no cask_core lock); lc->lock not held.
 */
void lmk_cell_unlink(struct lmk_cell *lc)
{
	mutex_lock(&lc->lock);
	lc->levels = (struct lmk_levels) { };
	lc->enabled = false;
	WRITE_ONCE(lc->top, 0);
	if (lc->victim)
		lmk_victim_done_locked(lc);
	mutex_unlock(&lc->lock);
	/* A queued tick would find the cell unlinked; no need to wait. */
	cancel_delayed_work(&lc->tick);
	lmk_events_hangup(lc);
}

static enum lru_status lmk_count_one(struct cask_memcg_watch *watch,
				     void *arg)
{
	struct lmk_cell *lc = container_of(watch, struct lmk_cell, watch);

	/* Armed, so its cell's state is attached: detach disarms first. */
	lmk_kick(lc);
	return LRU_SKIP;
}

/* The kit calls this only when a sentinel is filed in sc->memcg. */
static unsigned long lmk_shrink_count(struct cask_memcg_watcher *watcher,
				      struct shrink_control *sc)
{
	cask_memcg_watcher_walk(watcher, sc, lmk_count_one, NULL);
	/* Nothing to scan; 0, not SHRINK_EMPTY, keeps the memcg's bit. */
	return 0;
}

/* The count only kicks: no scan, which the kit answers SHRINK_STOP. */
static const struct cask_memcg_watcher_ops lmk_watcher_ops = {
	.count = lmk_shrink_count,
};

/**
 * lmk_cell_init() - set up a new cell's killer: no levels, enabled
 * @lc: zeroed state
 * @cell: its cell
 *
 * Arms the cell's watch in the memcg of its cgroup.
 *
 * Context: process context, may sleep (cask_core's attach).
 * Return: 0 or -ENOMEM.
 */
int lmk_cell_init(struct lmk_cell *lc, struct cask_cell *cell)
{
	int ret = -ENOMEM;

	lc->cell = cell;
	lc->enabled = true;
	mutex_init(&lc->lock);
	spin_lock_init(&lc->ev_lock);
	init_waitqueue_head(&lc->wait);
	INIT_DELAYED_WORK(&lc->tick, lmk_tick);
	/* Held until lmk_cell_exit(): the counters, the walks' key, the watch. */
	lc->memcg = cask_cell_memcg(cell);
	lc->walks = lmk_walks_get(lc->memcg);
	if (!lc->walks)
		goto put_memcg;
	/*
	 * The root memcg too (the host cell, a cell made for a process of
	 * the root cgroup): global reclaim must kick the host cell.
	 */
	ret = cask_memcg_watch_arm(&lmk_watcher, &lc->watch, lc->memcg);
	if (ret)
		goto put_walks;
	return 0;

put_walks:
	lmk_walks_put(lc->walks);
put_memcg:
	mem_cgroup_put(lc->memcg);
	return ret;
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
	/*
	 * Under the list's lock: no walk can find the cell after this, so
	 * no kick queues the tick again once it is cancelled.
	 */
	cask_memcg_watch_disarm(&lmk_watcher, &lc->watch);
	cancel_delayed_work_sync(&lc->tick);
	/* Not waiting for a reap in progress: it does not use the cell. */
	mutex_lock(&lc->lock);
	if (lc->victim)
		lmk_victim_done_locked(lc);
	mutex_unlock(&lc->lock);
	lmk_event_release(&lc->last);
	lmk_events_flush(lc);
	/* Before the memcg's reference: that keeps the key from reuse. */
	lmk_walks_put(lc->walks);
	mem_cgroup_put(lc->memcg);
}

/**
 * lmk_kill_init() - make the workqueue and the memcg watcher, and start
 * the reaper (with patches/0002)
 *
 * The shrinker is registered by lmk_kill_register() once cells exist.
 *
 * Context: module init.
 * Return: 0 or a negative errno.
 */
int lmk_kill_init(void)
{
	int ret;

	/* Kills must make progress when memory is short: a rescuer. */
	lmk_wq = alloc_workqueue("lowmemorykiller", WQ_MEM_RECLAIM | WQ_HIGHPRI,
				 0);
	if (!lmk_wq)
		return -ENOMEM;
	ret = cask_memcg_watcher_init(&lmk_watcher, "lowmemorykiller",
				      &lmk_watcher_ops);
	if (ret)
		goto destroy_wq;
	ret = lmk_reaper_start();
	if (ret)
		goto free_watcher;
	return 0;

free_watcher:
	cask_memcg_watcher_free(&lmk_watcher);
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
	cask_memcg_watcher_register(&lmk_watcher);
}

/**
 * lmk_kill_unregister() - stop the shrinker, wait for running counts
 *
 * Called before the cells' state goes, which counts use; cells made from
 * now on arm no watch (cask_memcg_watcher_unregister()).
 *
 * Context: module exit.
 */
void lmk_kill_unregister(void)
{
	cask_memcg_watcher_unregister(&lmk_watcher);
}

/**
 * lmk_kill_free() - stop the reaper, free the watcher (and its shrinker,
 * unless unregistered) and the workqueue
 *
 * Context: module exit, after every cell's state is gone.
 */
void lmk_kill_free(void)
{
	lmk_reaper_stop();
	cask_memcg_watcher_free(&lmk_watcher);
	destroy_workqueue(lmk_wq);
}
