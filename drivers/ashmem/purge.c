// SPDX-License-Identifier: GPL-2.0
/*
 * Purging unpinned ashmem, cell by cell.
 *
 * Each cell keeps its own LRU of unpinned ranges; its regions' pages are
 * charged to their creators' memory cgroups (area.c), usually the cell's.
 * To be asked for those pages exactly when the cell's memcg is reclaimed,
 * each cell arms a memcg watch (cask_core's kit, <cask/memcg.h>): one
 * sentinel object on a memcg-aware list_lru, allocated inside the memcg:
 * the list_lru then sets our shrinker's bit for the memcg, and reclaim
 * calls us with sc->memcg = the
 * cell's memcg (for its own limits, an ancestor's, or global reclaim,
 * which visits every memcg in proportion to what its shrinkers report).
 * Our count is the unpinned pages of the cells whose sentinel is in that
 * memcg, each cell's capped by the memory that could hold them (a range
 * is as long as user space likes, and may hold nothing); our scan splits
 * the work among them in proportion to those pages (cells can share a
 * memcg: the host and every cell left in the root cgroup do) and purges
 * each one's least recently unpinned ranges first. Nothing outside those
 * cells is touched.
 *
 * The shrinker only asks: it adds to each cell's wanted pages and queues
 * the cell's purge work on our workqueue, and never punches a hole itself.
 * A purge locks the folios it truncates, and the reclaiming task may hold
 * some of them: page migration (move_pages(), a long-term pin of movable
 * memory) allocates, hence reclaims, with its source folios locked, and a
 * purge of those folios in that task would wait for itself for ever, with
 * the region's lock held. A direct reclaimer then waits a little for the
 * work (CASHMEM_RECLAIM_WAIT_MS at most), so that it usually finds the
 * pages gone; if the work waits for a folio the reclaimer holds, the
 * reclaimer goes on after that time and the work after it.
 *
 * A region's last reference is dropped here too (cashmem_area_put(), with
 * the regions' cache it frees to, which area.c allocates from): a purge
 * holds one on the region it purges, and this file, the bottom of the
 * driver's, calls nothing of area.c or range.c.
 *
 * Locking: the list_lru's lock (in a walk) > cask_cell_tryget(); a purge
 * takes area->lock (a mutex; only a trylock from the purge work, which
 * the reclaimer it serves may be holding it up with) > cc->lock. A purge
 * holds a reference on the cell: the scan's, taken under the list_lru
 * lock while the sentinel is listed (detach takes it off first), and one
 * more for the queued work; and one on the area, taken under cc->lock
 * while one of its ranges is on the LRU (a release empties the LRU first).
 */
#include <linux/cgroup.h>
#include <linux/fs.h>
#include <linux/list_lru.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/memcontrol.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/vmstat.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <kunit/static_stub.h>
#include <cask/cell.h>
#include <cask/memcg.h>

#include "ashmem.h"

/* Cells handled by one scan of one memcg; more wait for the next. */
#define CASHMEM_SCAN_CELLS	16

/* How long a direct reclaimer waits for the purges it asked for. */
#define CASHMEM_RECLAIM_WAIT_MS	20

/*
 * The cells' sentinels and our shrinker (cask_core's memcg kit): once it
 * is unregistered (module exit, before the cells are detached), cells
 * made meanwhile file no sentinel.
 */
static struct cask_memcg_watcher cashmem_watcher;
static struct workqueue_struct *cashmem_wq;
/* Woken when a cell's purge work has done what was asked. */
static DECLARE_WAIT_QUEUE_HEAD(cashmem_purge_waitq);

/*
 * Regions, charged to their creator. A cache of their own rather than
 * kzalloc(): every field is set at open, so the name buffer, most of a
 * region, need not be cleared for every region made. area.c makes it
 * (cashmem_backing_init()) and allocates from it.
 */
struct kmem_cache *cashmem_area_cache;

static void cashmem_area_free(struct kref *ref)
{
	struct cashmem_area *area = container_of(ref, typeof(*area), ref);
	struct cashmem_cell *cc = area->cc;

	atomic_long_sub(area->charged, &cc->bytes);
	atomic_long_dec(&cc->regions);
	mem_cgroup_put(area->memcg);
	cask_cell_put(area->cell);
	kmem_cache_free(cashmem_area_cache, area);
}

/**
 * cashmem_area_put() - drop a reference on a region
 * @area: the region
 *
 * Context: any context that may drop a cell reference (reclaim included).
 */
void cashmem_area_put(struct cashmem_area *area)
{
	kref_put(&area->ref, cashmem_area_free);
}

/*
 * Bookkeeping of a range's pages: on the LRU while unpurged, counted as
 * purged while purged, nowhere once pinned or released. Context: cc->lock
 * held (under area->lock).
 */
static void cashmem_account_locked(struct cashmem_cell *cc,
				   const struct cashmem_range *range, long sign)
{
	long pages = sign * (long)cashmem_range_pages(range);

	lockdep_assert_held(&cc->lock);
	if (range->purged)
		cc->purged_pages += pages;
	else
		WRITE_ONCE(cc->lru_pages, cc->lru_pages + pages);
}

/**
 * cashmem_lru_add_locked() - put a new unpinned range on its cell's books
 * @range: the range, with its area, pages and purged state set
 * @after: a range of the same cell as old as @range, or NULL for the
 *	most recently unpinned
 *
 * Context: area->lock held.
 */
void cashmem_lru_add_locked(struct cashmem_range *range,
			    struct cashmem_range *after)
{
	struct cashmem_cell *cc = range->area->cc;

	lockdep_assert_held(&range->area->lock);
	spin_lock(&cc->lock);
	cashmem_account_locked(cc, range, 1);
	if (!range->purged) {
		if (after && !list_empty(&after->lru))
			list_add(&range->lru, &after->lru);
		else
			list_add_tail(&range->lru, &cc->lru);
	}
	spin_unlock(&cc->lock);
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_lru_add_locked);

/**
 * cashmem_lru_del_locked() - take a range off its cell's books
 * @range: the range, pinned again or released
 *
 * Context: area->lock held.
 */
void cashmem_lru_del_locked(struct cashmem_range *range)
{
	struct cashmem_cell *cc = range->area->cc;

	lockdep_assert_held(&range->area->lock);
	spin_lock(&cc->lock);
	cashmem_account_locked(cc, range, -1);
	list_del_init(&range->lru);
	spin_unlock(&cc->lock);
}

/**
 * cashmem_lru_resize_locked() - change the pages of a range, keeping its age
 * @range: the range
 * @pgstart: new first page
 * @pgend: new last page
 *
 * Context: area->lock held.
 */
void cashmem_lru_resize_locked(struct cashmem_range *range, pgoff_t pgstart,
			       pgoff_t pgend)
{
	struct cashmem_cell *cc = range->area->cc;

	lockdep_assert_held(&range->area->lock);
	spin_lock(&cc->lock);
	cashmem_account_locked(cc, range, -1);
	range->pgstart = pgstart;
	range->pgend = pgend;
	cashmem_account_locked(cc, range, 1);
	spin_unlock(&cc->lock);
}

/**
 * cashmem_range_purged_locked() - book a range's pages as purged
 * @range: an unpurged range whose pages were punched out
 *
 * Context: area->lock held.
 */
VISIBLE_IF_KUNIT void cashmem_range_purged_locked(struct cashmem_range *range)
{
	struct cashmem_cell *cc = range->area->cc;

	lockdep_assert_held(&range->area->lock);
	spin_lock(&cc->lock);
	cashmem_account_locked(cc, range, -1);
	list_del_init(&range->lru);
	range->purged = true;
	cashmem_account_locked(cc, range, 1);
	spin_unlock(&cc->lock);
	atomic_long_add(cashmem_range_pages(range), &cc->purged_total);
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_range_purged_locked);

/* Pages @inode holds in memory or in swap; read without its locks. */
static unsigned long cashmem_inode_pages(struct inode *inode)
{
	return READ_ONCE(inode->i_mapping->nrpages) +
	       READ_ONCE(SHMEM_I(inode)->swapped);
}

/*
 * Purge @range of @area if it is still the head of the cell's LRU: it was
 * found there before area->lock was taken and may have been pinned (and
 * freed) since, so it is compared, never read, until found there again.
 * The hole is punched with the backing inode's lock only tried by the
 * purge work: the reclaimer it serves may be waiting for it inside a hole
 * punch of this very file (MADV_REMOVE), which holds it. Returns the
 * pages the hole punch really freed, in memory or swap: not the range's
 * length, which user space sets (up to the whole region, untouched).
 * Faults elsewhere in the file meanwhile can only make this less.
 */
static unsigned long cashmem_purge_one_locked(struct cashmem_cell *cc,
					      struct cashmem_area *area,
					      struct cashmem_range *range,
					      bool may_block, bool *purged)
{
	unsigned long pages, before, after;
	struct inode *inode;
	loff_t start, len;
	bool head;

	lockdep_assert_held(&area->lock);
	*purged = false;
	if (area->released || !area->file)
		return 0;
	/*
	 * Both compared under cc->lock: the head of the LRU cannot be freed
	 * while it is held, but once it is dropped, a range of another
	 * region (whose lock we do not hold) can be, and range->area read.
	 */
	spin_lock(&cc->lock);
	head = list_first_entry_or_null(&cc->lru, struct cashmem_range,
					lru) == range && range->area == area;
	spin_unlock(&cc->lock);
	/* On the LRU and under area->lock: ours, unpurged, and staying. */
	if (!head)
		return 0;
	inode = file_inode(area->file);
	if (may_block)
		inode_lock(inode);
	else if (!inode_trylock(inode))
		return 0;
	pages = cashmem_range_pages(range);
	start = (loff_t)range->pgstart << PAGE_SHIFT;
	len = (loff_t)pages << PAGE_SHIFT;
	before = cashmem_inode_pages(inode);
	unmap_mapping_range(inode->i_mapping, start, len, 0);
	shmem_truncate_range(inode, start, start + len - 1);
	after = cashmem_inode_pages(inode);
	inode_unlock(inode);
	cashmem_range_purged_locked(range);
	*purged = true;
	pages = before > after ? before - after : 0;
	atomic_long_add(pages, &cc->freed_total);
	return pages;
}

/*
 * Move @range, if still the LRU's head, to its tail: it was busy. Returns
 * its pages then, else 0. @range is only compared unless found there.
 */
static unsigned long cashmem_rotate(struct cashmem_cell *cc,
				    struct cashmem_range *range)
{
	unsigned long pages = 0;

	spin_lock(&cc->lock);
	if (list_first_entry_or_null(&cc->lru, struct cashmem_range,
				     lru) == range) {
		list_move_tail(&range->lru, &cc->lru);
		pages = cashmem_range_pages(range);
	}
	spin_unlock(&cc->lock);
	return pages;
}

/**
 * cashmem_purge_cell() - purge a cell's least recently unpinned ranges
 * @cc: the cell
 * @nr: pages wanted; whole ranges are purged, so a little more may go
 * @may_block: wait for busy regions (ASHMEM_PURGE_ALL_CACHES); the purge
 *	work skips them instead, since the reclaimer it serves may hold
 *	their lock while it waits
 *
 * Ranges that hold no pages are purged too, and cost nothing of @nr.
 *
 * Context: process context, may sleep; no area lock held.
 * Return: the pages freed (in memory or swap).
 */
unsigned long cashmem_purge_cell(struct cashmem_cell *cc, unsigned long nr,
				 bool may_block)
{
	unsigned long done = 0, busy = 0, seen = 0, pages, len, limit;
	struct cashmem_range *range;
	struct cashmem_area *area;
	bool purged;

	/* A test checks that the shrinker never gets here. */
	KUNIT_STATIC_STUB_REDIRECT(cashmem_purge_cell, cc, nr, may_block);
	/*
	 * Ranges that hold nothing free nothing: at most what is on the LRU
	 * now is looked at, or a task that unpins an empty range again and
	 * again would keep us here.
	 */
	limit = READ_ONCE(cc->lru_pages);
	while (done < nr && seen < limit) {
		spin_lock(&cc->lock);
		range = list_first_entry_or_null(&cc->lru, struct cashmem_range,
						 lru);
		if (!range || busy >= cc->lru_pages) {
			spin_unlock(&cc->lock);
			break;
		}
		len = cashmem_range_pages(range);
		area = range->area;
		kref_get(&area->ref);
		spin_unlock(&cc->lock);

		if (may_block) {
			mutex_lock(&area->lock);
		} else if (!mutex_trylock(&area->lock)) {
			/*
			 * Try the others; stop once every page on the LRU
			 * was found busy, rather than spin on one region.
			 */
			busy += cashmem_rotate(cc, range);
			cashmem_area_put(area);
			continue;
		}
		pages = cashmem_purge_one_locked(cc, area, range, may_block, &purged);
		mutex_unlock(&area->lock);
		cashmem_area_put(area);
		/* Not purged if busy or gone meanwhile: rotated if still head. */
		if (!purged)
			busy += cashmem_rotate(cc, range);
		else
			seen += len;
		done += pages;
		cond_resched();
	}
	return done;
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_purge_cell);

/**
 * cashmem_share() - split @nr among entries in proportion to weights
 * @nr: what to split; more than the weights' sum is cut to it
 * @weight: each entry's weight
 * @n: entries
 * @out: each entry's share: out[i] <= weight[i], the shares add up to
 *	min(@nr, sum of weights), each within one of its exact proportion
 *
 * Context: any.
 */
VISIBLE_IF_KUNIT void cashmem_share(unsigned long nr,
				    const unsigned long *weight,
				    unsigned int n, unsigned long *out)
{
	unsigned long total = 0, given = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		total += weight[i];
	nr = min(nr, total);
	if (!nr) {
		for (i = 0; i < n; i++)
			out[i] = 0;
		return;
	}
	for (i = 0; i < n; i++) {
		out[i] = mul_u64_u64_div_u64(nr, weight[i], total);
		given += out[i];
	}
	/* Rounding down left fewer than n; one more each, in order. */
	for (i = 0; i < n && given < nr; i++) {
		if (out[i] < weight[i]) {
			out[i]++;
			given++;
		}
	}
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_share);

/*
 * What reclaim can get from @cc: its unpinned pages, as ranges count them,
 * but no more than the memory that could hold them. A range's length is
 * set by user space (an untouched region of terabytes unpinned to its
 * end), so it is capped by the shmem pages in memory, and for a cell that
 * pays, by all that its memcg is charged with. Reported as such, reclaim
 * asks us for no more than there can be.
 */
static unsigned long cashmem_cell_reclaimable(const struct cashmem_cell *cc)
{
	unsigned long cap = global_node_page_state(NR_SHMEM);

	if (cashmem_cell_pays(cc))
		cap = min(cap, page_counter_read(&cc->memcg->memory));
	return min(READ_ONCE(cc->lru_pages), cap);
}

struct cashmem_walk {
	unsigned long pages;
	unsigned int n;
	struct cashmem_cell *cc[CASHMEM_SCAN_CELLS];
};

static enum lru_status cashmem_count_one(struct cask_memcg_watch *watch,
					 void *arg)
{
	struct cashmem_cell *cc = container_of(watch, typeof(*cc), watch);
	struct cashmem_walk *walk = arg;

	walk->pages += cashmem_cell_reclaimable(cc);
	return LRU_SKIP;
}

/* The kit calls this only when a sentinel is filed in sc->memcg. */
VISIBLE_IF_KUNIT unsigned long
cashmem_shrink_count(struct cask_memcg_watcher *watcher,
		     struct shrink_control *sc)
{
	struct cashmem_walk walk = { };

	cask_memcg_watcher_walk(&cashmem_watcher, sc, cashmem_count_one,
				&walk);
	/* Not SHRINK_EMPTY: that would clear the bit our sentinels set. */
	return min(walk.pages, global_node_page_state(NR_SHMEM));
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_shrink_count);

static enum lru_status cashmem_collect_one(struct cask_memcg_watch *watch,
					   void *arg)
{
	struct cashmem_cell *cc = container_of(watch, typeof(*cc), watch);
	struct cashmem_walk *walk = arg;

	if (walk->n == CASHMEM_SCAN_CELLS)
		return LRU_STOP;
	/*
	 * An armed watch's cell is not freed yet (detach disarms it under
	 * the lock this runs under), maybe released: a reference of its own
	 * keeps it past the walk.
	 */
	if (!READ_ONCE(cc->lru_pages) || !cask_cell_tryget(cc->cell))
		return LRU_SKIP;
	walk->cc[walk->n++] = cc;
	/* Taken this time: the next scan starts with the others. */
	return LRU_ROTATE;
}

/* A cell's purge work: purge what reclaim asked for, in process context. */
static void cashmem_purge_work(struct work_struct *work)
{
	struct cashmem_cell *cc = container_of(work, typeof(*cc), purge_work);
	struct cask_cell *cell = cc->cell;
	unsigned long nr;

	WRITE_ONCE(cc->purging, true);
	/* Fully ordered: who sees nothing wanted any more sees us purging. */
	nr = atomic_long_xchg(&cc->purge_want, 0);
	if (nr)
		WRITE_ONCE(cc->purge_fruitless,
			   !cashmem_purge_cell(cc, nr, false));
	/* Our purge before "done": pairs with the waiter's acquire. */
	smp_store_release(&cc->purging, false);
	wake_up_all(&cashmem_purge_waitq);
	/* The queuer's reference, last: @cc may go with it. */
	cask_cell_put(cell);
}

/* Ask @cc's purge work for @nr pages; the caller holds a cell reference. */
static void cashmem_purge_ask(struct cashmem_cell *cc, unsigned long nr)
{
	atomic_long_add(nr, &cc->purge_want);
	cask_cell_get(cc->cell);
	/* Already queued: that work holds its own reference, and sees @nr. */
	if (!queue_work(cashmem_wq, &cc->purge_work))
		cask_cell_put(cc->cell);
}

/* Has the purge work of every cell of @walk asked (@share) done it? */
static bool cashmem_purges_done(const struct cashmem_walk *walk,
				const unsigned long *share)
{
	unsigned int i;

	for (i = 0; i < walk->n; i++) {
		if (!share[i])
			continue;
		/* Nothing wanted, then not purging: cashmem_purge_work(). */
		if (atomic_long_read_acquire(&walk->cc[i]->purge_want))
			return false;
		/* Its purge is ordered before its release of this. */
		if (smp_load_acquire(&walk->cc[i]->purging))
			return false;
	}
	return true;
}

VISIBLE_IF_KUNIT unsigned long
cashmem_shrink_scan(struct cask_memcg_watcher *watcher,
		    struct shrink_control *sc)
{
	unsigned long weight[CASHMEM_SCAN_CELLS], share[CASHMEM_SCAN_CELLS];
	long before[CASHMEM_SCAN_CELLS];
	struct cashmem_walk walk = { };
	unsigned long freed = 0;
	bool wait = false;
	unsigned int i;

	/* Each cell once: a rotated one comes round again at the end. */
	cask_memcg_watcher_walk(&cashmem_watcher, sc, cashmem_collect_one,
				&walk);
	/* Shares of what each cell can really give, not of its ranges. */
	for (i = 0; i < walk.n; i++)
		weight[i] = cashmem_cell_reclaimable(walk.cc[i]);
	cashmem_share(sc->nr_to_scan, weight, walk.n, share);
	for (i = 0; i < walk.n; i++) {
		before[i] = atomic_long_read(&walk.cc[i]->freed_total);
		if (share[i]) {
			cashmem_purge_ask(walk.cc[i], share[i]);
			/*
			 * Waited for only if its last purge freed something:
			 * reclaim calls us again and again, and a cell whose
			 * ranges hold nothing would make each call wait.
			 */
			if (!READ_ONCE(walk.cc[i]->purge_fruitless))
				wait = true;
		}
	}
	/*
	 * A direct reclaimer that may wait for filesystem work (a purge is)
	 * waits a little for the purges it asked for, no others; kswapd
	 * comes back anyway. Never for long: the work may be waiting for a
	 * folio this task holds locked.
	 */
	if (wait && (sc->gfp_mask & __GFP_FS) &&
	    (sc->gfp_mask & __GFP_DIRECT_RECLAIM) && !current_is_kswapd())
		wait_event_timeout(cashmem_purge_waitq,
				   cashmem_purges_done(&walk, share),
				   msecs_to_jiffies(CASHMEM_RECLAIM_WAIT_MS));
	for (i = 0; i < walk.n; i++) {
		/* Freed meanwhile, by the work or anyone: what reclaim got. */
		freed += atomic_long_read(&walk.cc[i]->freed_total) - before[i];
		cask_cell_put(walk.cc[i]->cell);
	}
	return freed ? freed : SHRINK_STOP;
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_shrink_scan);

static const struct cask_memcg_watcher_ops cashmem_watcher_ops = {
	.count = cashmem_shrink_count,
	.scan = cashmem_shrink_scan,
};

/**
 * cashmem_purge_flush() - wait for every purge work queued so far
 *
 * Context: process context, may sleep.
 */
void cashmem_purge_flush(void)
{
	flush_workqueue(cashmem_wq);
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_purge_flush);

/**
 * cashmem_cell_init() - set up a new cell's ashmem state
 * @cc: zeroed state
 * @cell: its cell
 *
 * Finds the memcg the cell pays with and arms the cell's watch there;
 * once the module is going (the shrinker is gone then) the watch files
 * nothing: such a cell is never purged by reclaim, and is detached a
 * moment later.
 *
 * Context: process context, may sleep (cask_core's attach).
 * Return: 0 or -ENOMEM.
 */
int cashmem_cell_init(struct cashmem_cell *cc, struct cask_cell *cell)
{
	int ret;

	cc->cell = cell;
	spin_lock_init(&cc->lock);
	INIT_LIST_HEAD(&cc->lru);
	cc->max_bytes = LONG_MAX;
	INIT_WORK(&cc->purge_work, cashmem_purge_work);
	atomic_long_set(&cc->purge_want, 0);
	/* Held until cashmem_cell_exit(): regions' caps and the watch. */
	cc->memcg = cask_cell_memcg(cell);
	/*
	 * The root memcg too (the host cell, cells of the root cgroup): its
	 * reclaim is global reclaim, which must find those cells' ranges.
	 */
	ret = cask_memcg_watch_arm(&cashmem_watcher, &cc->watch, cc->memcg);
	if (ret)
		mem_cgroup_put(cc->memcg);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_cell_init);

/**
 * cashmem_cell_exit() - undo cashmem_cell_init()
 * @cc: the state, of a cell without regions
 *
 * No purge work is queued: each holds a reference on the cell, and the
 * shrinker's are flushed before a driver's unregistration detaches cells.
 *
 * Context: process context (cask_core's detach).
 */
void cashmem_cell_exit(struct cashmem_cell *cc)
{
	/*
	 * Under the list's lock: no walk can find the cell after this, and
	 * a scan that found it before holds a cell reference. Before the
	 * memcg's reference, which the count reads through.
	 */
	cask_memcg_watch_disarm(&cashmem_watcher, &cc->watch);
	mem_cgroup_put(cc->memcg);
	WARN_ON_ONCE(!list_empty(&cc->lru) || cc->lru_pages ||
		     cc->purged_pages);
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_cell_exit);

/**
 * cashmem_purge_init() - make the purge workqueue and the memcg watcher
 *
 * The shrinker is registered by cashmem_purge_register() once cells exist.
 *
 * Context: module init.
 * Return: 0 or a negative errno.
 */
int cashmem_purge_init(void)
{
	int ret;

	/* Purges free memory: they must make progress under pressure. */
	cashmem_wq = alloc_workqueue("cask_ashmem", WQ_UNBOUND | WQ_MEM_RECLAIM,
				     0);
	if (!cashmem_wq)
		return -ENOMEM;
	ret = cask_memcg_watcher_init(&cashmem_watcher, "cask-ashmem",
				      &cashmem_watcher_ops);
	if (ret)
		destroy_workqueue(cashmem_wq);
	return ret;
}

/**
 * cashmem_purge_register() - let reclaim call the shrinker
 *
 * Context: module init, after cashmem_purge_init().
 */
void cashmem_purge_register(void)
{
	cask_memcg_watcher_register(&cashmem_watcher);
}

/**
 * cashmem_purge_unregister() - stop the shrinker, wait for running scans
 * and the purges they asked for
 *
 * Called before the cells' state goes, which scans and purges use; cells
 * made from now on arm no watch (cask_memcg_watcher_unregister()). The
 * purges the last scans asked for hold cell references: flushed here so
 * that none outlives the driver's unregistration.
 *
 * Context: module exit.
 */
void cashmem_purge_unregister(void)
{
	cask_memcg_watcher_unregister(&cashmem_watcher);
	cashmem_purge_flush();
}

/**
 * cashmem_purge_free() - free the watcher (and its shrinker, unless
 * unregistered) and the workqueue
 *
 * Context: module exit, after every cell's state is gone.
 */
void cashmem_purge_free(void)
{
	cask_memcg_watcher_free(&cashmem_watcher);
	destroy_workqueue(cashmem_wq);
}
