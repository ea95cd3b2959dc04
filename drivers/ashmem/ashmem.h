/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask_ashmem internals: regions (areas), their unpinned ranges and the
 * per-cell state that pays for and purges them.
 */
#ifndef _CASK_ASHMEM_H
#define _CASK_ASHMEM_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>
#include <linux/ashmem.h>
#include <cask/memcg.h>

struct cask_cell;
struct cask_driver;
struct file;
struct mem_cgroup;

/* What /proc/PID/maps shows before a region's name. */
#define CASHMEM_NAME_PREFIX	"dev/ashmem/"
#define CASHMEM_NAME_PREFIX_LEN	(sizeof(CASHMEM_NAME_PREFIX) - 1)
#define CASHMEM_FULL_NAME_LEN	(CASHMEM_NAME_PREFIX_LEN + ASHMEM_NAME_LEN)

/* The staging driver's default: everything allowed until taken away. */
#define CASHMEM_PROT_ALL	(PROT_READ | PROT_WRITE | PROT_EXEC)

/**
 * struct cashmem_cell - a cell's ashmem state
 * @cell: the cell (no reference: the cell owns this)
 * @memcg: the cell's memory cgroup (a reference), where its sentinel is
 *	and hence whose reclaim purges the cell's ranges; NULL without memcg.
 *	The regions' pages are charged to their creators' (&cashmem_area)
 * @watch: our sentinel in that memcg, which makes reclaim of the memcg
 *	call our shrinker; left disarmed for a cell made while the module
 *	goes, after the shrinker did
 * @lock: protects @lru, @lru_pages and @purged_pages
 * @lru: unpinned, not yet purged ranges, least recently unpinned first
 * @lru_pages: pages of the ranges on @lru (read locklessly by the shrinker)
 * @purged_pages: pages of ranges purged and not yet pinned again
 * @regions: regions alive (open or still mapped)
 * @bytes: page-rounded sizes of those regions, what @max_bytes limits
 * @purged_total: pages of ranges purged since the cell was made (their
 *	length, which is what user space sees)
 * @freed_total: pages those purges really freed, in memory or swap (what
 *	reclaim got)
 * @size_denied: ASHMEM_SET_SIZE calls refused for @max_bytes
 * @max_bytes: the cell's budget, LONG_MAX for none
 * @purge_work: purges what reclaim asked for (the shrinker never purges
 *	itself); queued with a reference on the cell, which it drops last
 * @purge_want: pages reclaim asked for, not yet taken by @purge_work
 * @purging: @purge_work is purging (written by it only)
 * @purge_fruitless: the last run of @purge_work freed nothing (written by
 *	it only): reclaim does not wait for the next
 */
struct cashmem_cell {
	struct cask_cell *cell;
	struct mem_cgroup *memcg;
	struct cask_memcg_watch watch;

	spinlock_t lock;		/* the LRU and its page counts */
	struct list_head lru;		/* lock */
	unsigned long lru_pages;	/* lock; READ_ONCE() outside it */
	unsigned long purged_pages;	/* lock */

	atomic_long_t regions;
	atomic_long_t bytes;
	atomic_long_t purged_total;
	atomic_long_t freed_total;
	atomic_long_t size_denied;
	long max_bytes;

	struct work_struct purge_work;
	atomic_long_t purge_want;
	bool purging;
	bool purge_fruitless;
};

/**
 * struct cashmem_area - one ashmem region
 * @ref: held by the ashmem file, by the backing file once it exists (so
 *	by every mapping) and briefly by a purge
 * @lock: protects everything below it
 * @cc: the state of the cell that made the region; its budget and LRU
 * @cell: that cell (a reference)
 * @memcg: the memory cgroup that pays for the region's pages, whoever
 *	touches them first, and for the region and its backing file: the
 *	creator's (the task that opened /dev/ashmem), a reference; NULL if
 *	that is the root or without memcg. NULL charges as if we did
 *	nothing (cask_memcg_begin()): to the current task's memcg. A host
 *	process in a limited cgroup (a systemd service, docker --ipc=host)
 *	that touches such a region pays for it; charging the root for it
 *	would let it allocate past its memory.max. Ranges are charged to
 *	whoever pins or unpins.
 * @name: CASHMEM_NAME_PREFIX and the name set by user space, or an empty
 *	name after the prefix
 * @size: the size set by user space
 * @charged: what @cc->bytes holds for this region
 * @prot_mask: the protections mappings may have
 * @file: the shmem backing file, made by the first mmap; from then on
 *	name and size are fixed
 * @unpinned: unpinned ranges, sorted by page, never overlapping
 * @released: the ashmem file is gone; nothing can pin or unpin any more
 */
struct cashmem_area {
	struct kref ref;
	struct mutex lock;		/* the fields below */
	struct cashmem_cell *cc;
	struct cask_cell *cell;
	struct mem_cgroup *memcg;

	char name[CASHMEM_FULL_NAME_LEN];	/* lock */
	size_t size;				/* lock */
	unsigned long charged;			/* lock */
	unsigned long prot_mask;		/* lock */
	struct file *file;			/* lock */
	struct list_head unpinned;		/* lock */
	bool released;				/* lock */
};

/**
 * struct cashmem_range - pages [@pgstart, @pgend] of a region, unpinned
 * @unpinned: in the area's list (area->lock)
 * @lru: in the cell's LRU (cc->lock), empty once purged
 * @area: the region (no reference: the region frees its ranges first)
 * @pgstart: first page
 * @pgend: last page, inclusive
 * @purged: the pages were thrown away
 */
struct cashmem_range {
	struct list_head unpinned;
	struct list_head lru;
	struct cashmem_area *area;
	pgoff_t pgstart;
	pgoff_t pgend;
	bool purged;
};

extern struct cask_driver cashmem_driver;

/* range.c: the _locked ones are called with area->lock held */
int cashmem_pin_pages(size_t size, u32 offset, u32 len, pgoff_t *pgstart,
		      pgoff_t *pgend);
int cashmem_range_unpin_locked(struct cashmem_area *area, pgoff_t pgstart,
			       pgoff_t pgend, struct cashmem_range **spare);
int cashmem_range_pin_locked(struct cashmem_area *area, pgoff_t pgstart,
			     pgoff_t pgend, struct cashmem_range **spare);
int cashmem_range_status_locked(struct cashmem_area *area, pgoff_t pgstart,
				pgoff_t pgend);
void cashmem_range_release_all_locked(struct cashmem_area *area);
struct cashmem_range *cashmem_range_alloc(void);
void cashmem_range_free(struct cashmem_range *range);
int cashmem_range_init(void);
void cashmem_range_exit(void);

/* purge.c */
extern struct kmem_cache *cashmem_area_cache;
void cashmem_area_put(struct cashmem_area *area);
void cashmem_lru_add_locked(struct cashmem_range *range,
			    struct cashmem_range *after);
void cashmem_lru_del_locked(struct cashmem_range *range);
void cashmem_lru_resize_locked(struct cashmem_range *range, pgoff_t pgstart,
			       pgoff_t pgend);
unsigned long cashmem_purge_cell(struct cashmem_cell *cc, unsigned long nr,
				 bool may_block);
int cashmem_cell_init(struct cashmem_cell *cc, struct cask_cell *cell);
void cashmem_cell_exit(struct cashmem_cell *cc);
int cashmem_purge_init(void);
void cashmem_purge_register(void);
void cashmem_purge_unregister(void);
void cashmem_purge_flush(void);
void cashmem_purge_free(void);

#if IS_ENABLED(CONFIG_KUNIT)
void cashmem_range_purged_locked(struct cashmem_range *range);
void cashmem_share(unsigned long nr, const unsigned long *weight,
		   unsigned int n, unsigned long *out);
struct shrink_control;
unsigned long cashmem_shrink_count(struct cask_memcg_watcher *watcher,
				   struct shrink_control *sc);
unsigned long cashmem_shrink_scan(struct cask_memcg_watcher *watcher,
				  struct shrink_control *sc);
#endif /* CONFIG_KUNIT */

/* area.c */
extern const struct file_operations cashmem_fops;
int cashmem_backing_init(void);
void cashmem_backing_exit(void);

/*
 * Is the cell's memcg one that is charged (not the root memcg, which no
 * limit binds: the host's cell has it, and so does any cell whose cgroup
 * is the root or has no memory controller above it)?
 */
static inline bool cashmem_cell_pays(const struct cashmem_cell *cc)
{
	return cc->memcg && parent_mem_cgroup(cc->memcg);
}

static inline unsigned long cashmem_range_pages(const struct cashmem_range *r)
{
	return r->pgend - r->pgstart + 1;
}

#endif /* _CASK_ASHMEM_H */
