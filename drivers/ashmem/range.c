// SPDX-License-Identifier: GPL-2.0
/*
 * The unpinned ranges of a region: what ASHMEM_PIN, ASHMEM_UNPIN and
 * ASHMEM_GET_PIN_STATUS do to them.
 *
 * A region starts pinned. Its unpinned pages are kept as a sorted list of
 * disjoint ranges; each unpurged range also sits on its cell's LRU, where
 * the purge code finds it (purge.c). As in Android's driver, unpinning
 * pages that overlap unpinned ranges merges them into one range, which
 * counts as purged if any part was: PIN may then report ASHMEM_WAS_PURGED
 * for pages that kept their contents, never the other way round.
 *
 * Every _locked function here runs with area->lock held and, but for the
 * release of all of a region's ranges, never sleeps, so the callers
 * allocate the one spare range a call may need beforehand.
 */
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "ashmem.h"

static struct kmem_cache *cashmem_range_cache;

/**
 * cashmem_range_alloc() - a spare range for a pin or unpin
 *
 * Charged to the caller, not to the region's creator: whoever holds the
 * region's fd can split it into a range for every other page, and that
 * is the holder's memory to pay for (the holder may be another cell's
 * process the fd was passed to).
 *
 * Context: process context, may sleep; no lock of ours held.
 * Return: a zeroed range, or NULL without memory.
 */
struct cashmem_range *cashmem_range_alloc(void)
{
	struct cashmem_range *range;

	range = kmem_cache_zalloc(cashmem_range_cache, GFP_KERNEL_ACCOUNT);
	if (range)
		INIT_LIST_HEAD(&range->lru);
	return range;
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_range_alloc);

/**
 * cashmem_range_free() - free a range that is on no list
 * @range: the range, or NULL
 *
 * Context: any.
 */
void cashmem_range_free(struct cashmem_range *range)
{
	if (range)
		kmem_cache_free(cashmem_range_cache, range);
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_range_free);

/**
 * cashmem_pin_pages() - the pages an &struct ashmem_pin names
 * @size: the region's size
 * @offset: its offset, page-aligned
 * @len: its length, page-aligned; 0 for "to the end"
 * @pgstart: set to the first page
 * @pgend: set to the last page
 *
 * Context: any.
 * Return: 0, or -EINVAL for a range that is unaligned, empty or not
 * inside the region (rounded up to whole pages).
 */
int cashmem_pin_pages(size_t size, u32 offset, u32 len, pgoff_t *pgstart,
		      pgoff_t *pgend)
{
	u64 end = PAGE_ALIGN((u64)size), first = offset, bytes = len;

	if (!bytes)
		bytes = first < end ? end - first : 0;
	if (!bytes || !PAGE_ALIGNED(first) || !PAGE_ALIGNED(bytes) ||
	    first + bytes > end)
		return -EINVAL;
	*pgstart = first >> PAGE_SHIFT;
	*pgend = (first + bytes - 1) >> PAGE_SHIFT;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_pin_pages);

/* Take @range off the region and the cell's books, and free it. */
static void cashmem_range_destroy_locked(struct cashmem_range *range)
{
	lockdep_assert_held(&range->area->lock);
	cashmem_lru_del_locked(range);
	list_del(&range->unpinned);
	cashmem_range_free(range);
}

/**
 * cashmem_range_unpin_locked() - unpin pages [@pgstart, @pgend] of a region
 * @area: the region
 * @pgstart: first page
 * @pgend: last page, >= @pgstart
 * @spare: a range from cashmem_range_alloc(); taken (set to NULL) if used
 *
 * Context: area->lock held.
 * Return: 0.
 */
int cashmem_range_unpin_locked(struct cashmem_area *area, pgoff_t pgstart,
			       pgoff_t pgend, struct cashmem_range **spare)
{
	struct cashmem_range *range, *next, *new;
	struct list_head *pos = &area->unpinned;
	bool purged = false;

	lockdep_assert_held(&area->lock);
	list_for_each_entry_safe(range, next, &area->unpinned, unpinned) {
		if (range->pgend < pgstart)
			continue;
		if (range->pgstart > pgend) {
			pos = &range->unpinned;
			break;
		}
		/* Already unpinned as a whole: nothing changes, not even age. */
		if (range->pgstart <= pgstart && range->pgend >= pgend)
			return 0;
		pgstart = min(pgstart, range->pgstart);
		pgend = max(pgend, range->pgend);
		purged |= range->purged;
		cashmem_range_destroy_locked(range);
	}
	new = *spare;
	*spare = NULL;
	new->area = area;
	new->pgstart = pgstart;
	new->pgend = pgend;
	new->purged = purged;
	/* Before the first range past it: the list stays sorted. */
	list_add_tail(&new->unpinned, pos);
	cashmem_lru_add_locked(new, NULL);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_range_unpin_locked);

/**
 * cashmem_range_pin_locked() - pin pages [@pgstart, @pgend] of a region again
 * @area: the region
 * @pgstart: first page
 * @pgend: last page, >= @pgstart
 * @spare: a range from cashmem_range_alloc(), taken (set to NULL) if a
 *	range has to be split in two
 *
 * Context: area->lock held.
 * Return: ASHMEM_WAS_PURGED if any page of the range was purged while
 * unpinned, else ASHMEM_NOT_PURGED.
 */
int cashmem_range_pin_locked(struct cashmem_area *area, pgoff_t pgstart,
			     pgoff_t pgend, struct cashmem_range **spare)
{
	struct cashmem_range *range, *next, *tail;
	int ret = ASHMEM_NOT_PURGED;

	lockdep_assert_held(&area->lock);
	list_for_each_entry_safe(range, next, &area->unpinned, unpinned) {
		if (range->pgend < pgstart)
			continue;
		if (range->pgstart > pgend)
			break;
		if (range->purged)
			ret = ASHMEM_WAS_PURGED;
		if (range->pgstart >= pgstart && range->pgend <= pgend) {
			cashmem_range_destroy_locked(range);
		} else if (range->pgstart < pgstart && range->pgend > pgend) {
			/* A hole in the middle: the part after it is new. */
			tail = *spare;
			*spare = NULL;
			tail->area = area;
			tail->pgstart = pgend + 1;
			tail->pgend = range->pgend;
			tail->purged = range->purged;
			list_add(&tail->unpinned, &range->unpinned);
			cashmem_lru_resize_locked(range, range->pgstart, pgstart - 1);
			/* It was unpinned as long ago as the front. */
			cashmem_lru_add_locked(tail, range);
			break;
		} else if (range->pgstart < pgstart) {
			cashmem_lru_resize_locked(range, range->pgstart, pgstart - 1);
		} else {
			cashmem_lru_resize_locked(range, pgend + 1, range->pgend);
		}
	}
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_range_pin_locked);

/**
 * cashmem_range_status_locked() - whether pages [@pgstart, @pgend] are pinned
 * @area: the region
 * @pgstart: first page
 * @pgend: last page, >= @pgstart
 *
 * Context: area->lock held.
 * Return: ASHMEM_IS_UNPINNED if any of the pages is unpinned, else
 * ASHMEM_IS_PINNED.
 */
int cashmem_range_status_locked(struct cashmem_area *area, pgoff_t pgstart,
				pgoff_t pgend)
{
	struct cashmem_range *range;

	lockdep_assert_held(&area->lock);
	list_for_each_entry(range, &area->unpinned, unpinned) {
		if (range->pgstart > pgend)
			break;
		if (range->pgend >= pgstart)
			return ASHMEM_IS_UNPINNED;
	}
	return ASHMEM_IS_PINNED;
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_range_status_locked);

/**
 * cashmem_range_release_all_locked() - forget every unpinned range of a region
 * @area: the region, whose ashmem file is going
 *
 * Nobody can pin the pages again, so there is nothing left to purge for:
 * the mappings that remain keep them as they are. A region can have a
 * range for every other page, hundreds of thousands: rescheduled between
 * them.
 *
 * Context: area->lock held, may sleep.
 */
void cashmem_range_release_all_locked(struct cashmem_area *area)
{
	struct cashmem_range *range, *next;

	lockdep_assert_held(&area->lock);
	list_for_each_entry_safe(range, next, &area->unpinned, unpinned) {
		cashmem_range_destroy_locked(range);
		cond_resched();
	}
}
EXPORT_SYMBOL_IF_KUNIT(cashmem_range_release_all_locked);

/**
 * cashmem_range_init() - make the cache ranges come from
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int cashmem_range_init(void)
{
	cashmem_range_cache = KMEM_CACHE(cashmem_range, SLAB_ACCOUNT);
	return cashmem_range_cache ? 0 : -ENOMEM;
}

/**
 * cashmem_range_exit() - destroy the cache, every range being freed
 *
 * Context: module exit.
 */
void cashmem_range_exit(void)
{
	kmem_cache_destroy(cashmem_range_cache);
}
