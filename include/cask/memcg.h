/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask_core's memory cgroup kit: which memcg a cell pays to, charging an
 * allocation to a memcg other than the current task's, and watching a
 * cell's memcg for reclaim (the "sentinel and shrinker" trigger).
 *
 * Charging. Every allocation a driver makes on behalf of someone else
 * (a binder process, a region's creator, a cell) is made inside
 * cask_memcg_begin()/cask_memcg_end() of that memcg (a pair in plain sight:
 * no guard class, since scoped_guard() of a NULL "lock" skips its body on
 * the first 6.12 releases, and NULL is how callers say "no change"),
 * never with set_active_memcg() by hand. A NULL memcg changes nothing:
 * the allocation is charged as it would be without us (to the current
 * task's memcg). Callers pass NULL rather than the root memcg where the
 * root would be charged, since charging the root is charging nobody.
 *
 * Watching. A driver that wants to hear when a cell's memcg is reclaimed
 * keeps one &struct cask_memcg_watcher (a memcg-aware shrinker and its
 * list_lru) and one &struct cask_memcg_watch per cell. Arming a watch
 * files a small sentinel object, allocated inside the memcg, on the
 * watcher's list_lru: the list_lru then sets the shrinker's bit for that
 * memcg, and reclaim of the memcg (its own limits, an ancestor's, global
 * reclaim) calls the watcher's count and scan with sc->memcg set to it.
 * Those walk the watches filed there with cask_memcg_watcher_walk().
 */
#ifndef _CASK_MEMCG_H
#define _CASK_MEMCG_H

#include <linux/list_lru.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/types.h>

struct cask_cell;
struct mem_cgroup;
struct shrinker;
struct shrink_control;

struct mem_cgroup *cask_cell_memcg(const struct cask_cell *cell);

/**
 * cask_memcg_begin() - start charging __GFP_ACCOUNT allocations to @memcg
 * @memcg: the memcg to charge (the caller holds a reference until
 *	cask_memcg_end()), or NULL to leave charging as it is
 *
 * Pairs nest: each end restores what its begin found.
 *
 * Context: process context (or any context, with its own scope: see
 * set_active_memcg()).
 * Return: what to give cask_memcg_end().
 */
static inline struct mem_cgroup *cask_memcg_begin(struct mem_cgroup *memcg)
{
	return memcg ? set_active_memcg(memcg) : NULL;
}

/**
 * cask_memcg_end() - undo cask_memcg_begin()
 * @memcg: what was given to it
 * @old: what it returned
 *
 * Context: the context of the matching cask_memcg_begin().
 */
static inline void cask_memcg_end(struct mem_cgroup *memcg,
				  struct mem_cgroup *old)
{
	if (memcg)
		set_active_memcg(old);
}

/**
 * cask_memcg_kzalloc() - kzalloc() charged to @memcg
 * @memcg: the memcg to charge, or NULL (see cask_memcg_begin())
 * @size: bytes
 * @gfp: flags, with __GFP_ACCOUNT for the charge to happen
 *
 * Inline so that allocation profiling still names the caller.
 *
 * Context: as kzalloc() with @gfp.
 * Return: the zeroed memory or NULL.
 */
static inline void *cask_memcg_kzalloc(struct mem_cgroup *memcg, size_t size,
				       gfp_t gfp)
{
	struct mem_cgroup *old = cask_memcg_begin(memcg);
	void *p = kzalloc(size, gfp);

	cask_memcg_end(memcg, old);
	return p;
}

struct shrinker *cask_memcg_shrinker_alloc(struct list_lru *lru,
					   const char *name,
	unsigned long (*count)(struct shrinker *, struct shrink_control *),
	unsigned long (*scan)(struct shrinker *, struct shrink_control *),
	void *private);

struct cask_memcg_watcher;
struct cask_memcg_sentinel;

/**
 * struct cask_memcg_watch - one cell's watch of its memcg
 * @sentinel: the object filed on the watcher's list under the memcg; NULL
 *	while disarmed (set and cleared under the watcher's lock)
 *
 * Embed it in the cell's state and find that with container_of() in the
 * walk's callback.
 */
struct cask_memcg_watch {
	struct cask_memcg_sentinel *sentinel;
};

/**
 * struct cask_memcg_watcher_ops - what reclaim of a watched memcg calls
 * @count: the shrinker's count_objects for sc->memcg; only called when a
 *	watch is filed there. Return 0 rather than SHRINK_EMPTY to keep
 *	being called (SHRINK_EMPTY clears the memcg's bit until the next
 *	watch is filed)
 * @scan: the shrinker's scan_objects; NULL for a watcher that only counts
 *	(its scan returns SHRINK_STOP)
 *
 * Both run in whatever task reclaims: no sleeping driver locks, no folio
 * locks (see Documentation/dev/architecture.rst).
 */
struct cask_memcg_watcher_ops {
	unsigned long (*count)(struct cask_memcg_watcher *watcher,
			       struct shrink_control *sc);
	unsigned long (*scan)(struct cask_memcg_watcher *watcher,
			      struct shrink_control *sc);
};

/**
 * struct cask_memcg_watcher - a driver's watch of its cells' memcgs
 * @ops: its callbacks
 * @shrinker: the memcg-aware shrinker, NULL once unregistered
 * @lru: the memcg-aware list of armed watches' sentinels
 * @lock: serializes arming with the shrinker's end
 * @closed: no more arming: the shrinker is gone, and a sentinel filed now
 *	would set the bit of a shrinker id that may be another's (@lock)
 */
struct cask_memcg_watcher {
	const struct cask_memcg_watcher_ops *ops;
	struct shrinker *shrinker;
	struct list_lru lru;
	struct mutex lock;	/* arming against unregistering */
	bool closed;		/* lock */
};

int cask_memcg_watcher_init(struct cask_memcg_watcher *watcher,
			    const char *name,
			    const struct cask_memcg_watcher_ops *ops);
void cask_memcg_watcher_register(struct cask_memcg_watcher *watcher);
void cask_memcg_watcher_unregister(struct cask_memcg_watcher *watcher);
void cask_memcg_watcher_free(struct cask_memcg_watcher *watcher);
unsigned long cask_memcg_watcher_walk(struct cask_memcg_watcher *watcher,
				      struct shrink_control *sc,
	enum lru_status (*fn)(struct cask_memcg_watch *watch, void *arg),
	void *arg);

int cask_memcg_watch_arm(struct cask_memcg_watcher *watcher,
			 struct cask_memcg_watch *watch,
			 struct mem_cgroup *memcg);
void cask_memcg_watch_disarm(struct cask_memcg_watcher *watcher,
			     struct cask_memcg_watch *watch);
int cask_memcg_watch_nid(const struct cask_memcg_watch *watch);

#endif /* _CASK_MEMCG_H */
