// SPDX-License-Identifier: GPL-2.0
/*
 * The memory cgroup kit (include/cask/memcg.h): a cell's memcg, a
 * memcg-aware shrinker's setup, and the memcg watch, one sentinel per
 * cell on a driver's list_lru.
 *
 * Lifetimes, in short (each is said again where it is kept):
 *  - a cell's memcg: cask_cell_memcg() hands out a css reference, which
 *    the driver keeps as long as it charges to the memcg or reads its
 *    counters, and drops after disarming the watch;
 *  - a watch's sentinel: filed on the list under the memcg it was
 *    allocated in, unfiled by disarm under the list's lock, which every
 *    walk holds: once disarmed, no callback sees the watch;
 *  - the shrinker: unregistered (freed, which waits for running count and
 *    scan calls) before the state its callbacks walk goes, and closed to
 *    new sentinels at the same time;
 *  - the sentinels' cache belongs to cask_core, which every watching
 *    driver depends on: it outlives their sentinels.
 */
#include <linux/cgroup.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <cask/cell.h>
#include <cask/memcg.h>

#include "core.h"

/*
 * What a memcg's list holds for a watch. An object of its own rather
 * than the watch itself: it must be a slab object allocated inside the
 * memcg, for list_lru to file it under that memcg.
 */
struct cask_memcg_sentinel {
	struct list_head lru;
	struct cask_memcg_watch *watch;
};

static struct kmem_cache *cask_memcg_sentinel_cache;

/**
 * cask_cell_memcg() - the memory cgroup a cell pays to
 * @cell: the cell
 *
 * The memcg of the cell's cgroup (its nearest ancestor with the memory
 * controller): for the host cell and any cell made in the root cgroup,
 * the root memcg, which no limit binds. Callers that charge to it check
 * for the root themselves (charging the root is charging nobody).
 *
 * Context: process context.
 * Return: the memcg with a css reference (drop it with mem_cgroup_put()),
 * or NULL without the memory controller.
 */
struct mem_cgroup *cask_cell_memcg(const struct cask_cell *cell)
{
#ifdef CONFIG_MEMCG
	struct cgroup *cgrp = cask_cell_cgroup(cell);
	struct cgroup_subsys_state *css;

	if (!cgrp || mem_cgroup_disabled())
		return NULL;
	/* The cell pins its cgroup, so its effective css is there to get. */
	css = cgroup_get_e_css(cgrp, &memory_cgrp_subsys);
	return css ? mem_cgroup_from_css(css) : NULL;
#else
	return NULL;
#endif
}
EXPORT_SYMBOL_NS_GPL(cask_cell_memcg, CASK);

/**
 * cask_memcg_shrinker_alloc() - make a memcg- and NUMA-aware shrinker and
 *	its per-memcg list
 * @lru: the list to set up, per memcg, with the shrinker's id
 * @name: the shrinker's name (debugfs)
 * @count: its count_objects
 * @scan: its scan_objects
 * @private: its private_data
 *
 * Not registered: the caller does that with shrinker_register() once what
 * the callbacks use exists. Undo with shrinker_free() and
 * list_lru_destroy().
 *
 * Context: process context, may sleep.
 * Return: the shrinker, or NULL (nothing left to undo).
 */
struct shrinker *cask_memcg_shrinker_alloc(struct list_lru *lru,
					   const char *name,
	unsigned long (*count)(struct shrinker *, struct shrink_control *),
	unsigned long (*scan)(struct shrinker *, struct shrink_control *),
	void *private)
{
	struct shrinker *shrinker;

	/* NONSLAB: our objects are not slab caches' to shrink. */
	shrinker = shrinker_alloc(SHRINKER_MEMCG_AWARE | SHRINKER_NUMA_AWARE |
				  SHRINKER_NONSLAB, "%s", name);
	if (!shrinker)
		return NULL;
	if (list_lru_init_memcg(lru, shrinker)) {
		shrinker_free(shrinker);
		return NULL;
	}
	shrinker->count_objects = count;
	shrinker->scan_objects = scan;
	shrinker->private_data = private;
	return shrinker;
}
EXPORT_SYMBOL_NS_GPL(cask_memcg_shrinker_alloc, CASK);

static unsigned long cask_memcg_watcher_count(struct shrinker *shrinker,
					      struct shrink_control *sc)
{
	struct cask_memcg_watcher *watcher = shrinker->private_data;

	/* No watch here: SHRINK_EMPTY, and the memcg's bit is cleared. */
	if (!list_lru_count_one(&watcher->lru, sc->nid, sc->memcg))
		return SHRINK_EMPTY;
	return watcher->ops->count(watcher, sc);
}

static unsigned long cask_memcg_watcher_scan(struct shrinker *shrinker,
					     struct shrink_control *sc)
{
	struct cask_memcg_watcher *watcher = shrinker->private_data;

	if (!watcher->ops->scan)
		return SHRINK_STOP;
	return watcher->ops->scan(watcher, sc);
}

/**
 * cask_memcg_watcher_init() - set up a watcher, not yet registered
 * @watcher: the watcher, uninitialized
 * @name: its shrinker's name
 * @ops: its callbacks (@ops->count at least)
 *
 * Register it with cask_memcg_watcher_register() once its callbacks may
 * run; watches may be armed before.
 *
 * Context: process context, may sleep (module init).
 * Return: 0 or -ENOMEM.
 */
int cask_memcg_watcher_init(struct cask_memcg_watcher *watcher,
			    const char *name,
			    const struct cask_memcg_watcher_ops *ops)
{
	watcher->ops = ops;
	mutex_init(&watcher->lock);
	watcher->closed = false;
	watcher->shrinker = cask_memcg_shrinker_alloc(&watcher->lru, name,
						      cask_memcg_watcher_count,
						      cask_memcg_watcher_scan,
						      watcher);
	return watcher->shrinker ? 0 : -ENOMEM;
}
EXPORT_SYMBOL_NS_GPL(cask_memcg_watcher_init, CASK);

/**
 * cask_memcg_watcher_register() - let reclaim call the watcher
 * @watcher: the watcher
 *
 * Context: process context (module init).
 */
void cask_memcg_watcher_register(struct cask_memcg_watcher *watcher)
{
	shrinker_register(watcher->shrinker);
}
EXPORT_SYMBOL_NS_GPL(cask_memcg_watcher_register, CASK);

/**
 * cask_memcg_watcher_unregister() - stop the watcher, wait for its
 *	callbacks
 * @watcher: the watcher
 *
 * Called before the state the callbacks walk goes (the cells' state, at
 * module exit before the driver's cells are detached). A shrinker cannot
 * be unregistered without being freed, so this frees it; shrinker_free()
 * returns once no count or scan runs, and none can start. Watches armed
 * from now on file nothing: their sentinels would set the bit of a
 * shrinker id that may be someone else's by then. Watches already armed
 * stay on the list until disarmed, which needs no shrinker.
 *
 * Context: process context, may sleep (module exit).
 */
void cask_memcg_watcher_unregister(struct cask_memcg_watcher *watcher)
{
	mutex_lock(&watcher->lock);
	watcher->closed = true;
	mutex_unlock(&watcher->lock);
	shrinker_free(watcher->shrinker);
	watcher->shrinker = NULL;
}
EXPORT_SYMBOL_NS_GPL(cask_memcg_watcher_unregister, CASK);

/**
 * cask_memcg_watcher_free() - undo cask_memcg_watcher_init()
 * @watcher: the watcher, every watch disarmed
 *
 * Frees the shrinker too if cask_memcg_watcher_unregister() did not.
 *
 * Context: process context, may sleep (module exit).
 */
void cask_memcg_watcher_free(struct cask_memcg_watcher *watcher)
{
	shrinker_free(watcher->shrinker);
	watcher->shrinker = NULL;
	list_lru_destroy(&watcher->lru);
}
EXPORT_SYMBOL_NS_GPL(cask_memcg_watcher_free, CASK);

struct cask_memcg_walk {
	enum lru_status (*fn)(struct cask_memcg_watch *watch, void *arg);
	void *arg;
};

static enum lru_status cask_memcg_walk_one(struct list_head *item,
					   struct list_lru_one *list,
					   spinlock_t *lock, void *arg)
{
	struct cask_memcg_sentinel *s = container_of(item, typeof(*s), lru);
	struct cask_memcg_walk *walk = arg;

	/* Listed, so armed: disarm unlists under this lock first. */
	return walk->fn(s->watch, walk->arg);
}

/**
 * cask_memcg_watcher_walk() - call @fn for each watch filed in sc->memcg
 * @watcher: the watcher
 * @sc: the shrinker's control: its memcg and node
 * @fn: called with each watch, under the list's spinlock (no sleeping):
 *	LRU_SKIP goes on, LRU_ROTATE goes on and moves the watch to the end
 *	(the next walk starts with the others), LRU_STOP stops
 * @arg: passed to @fn
 *
 * Each watch filed when the walk starts is seen once at most (a rotated
 * one does not come round again). The watch and what it is embedded in
 * are alive in @fn; to use them after it, take a reference there.
 *
 * Context: the watcher's count or scan (reclaim).
 * Return: the watches filed there when the walk started.
 */
unsigned long cask_memcg_watcher_walk(struct cask_memcg_watcher *watcher,
				      struct shrink_control *sc,
	enum lru_status (*fn)(struct cask_memcg_watch *watch, void *arg),
	void *arg)
{
	struct cask_memcg_walk walk = { .fn = fn, .arg = arg };
	unsigned long nr, left;

	nr = list_lru_count_one(&watcher->lru, sc->nid, sc->memcg);
	left = nr;
	if (nr)
		list_lru_walk_one(&watcher->lru, sc->nid, sc->memcg,
				  cask_memcg_walk_one, &walk, &left);
	return nr;
}
EXPORT_SYMBOL_NS_GPL(cask_memcg_watcher_walk, CASK);

/**
 * cask_memcg_watch_arm() - file a watch in a memcg
 * @watcher: the watcher
 * @watch: the watch, disarmed (zeroed, or disarmed since)
 * @memcg: the memcg whose reclaim calls the watcher for @watch; NULL
 *	(no memory controller) files it where the current task is charged
 *
 * The sentinel is allocated inside @memcg so that kmem_cache_alloc_lru()
 * makes the memcg's list before list_lru_add_obj() files it there. For
 * the root memcg too: the sentinel must be on the root's list for global
 * reclaim to find it; the root charges nothing, and it is one fixed-size
 * object per cell, never memory a container sizes. Once the watcher is
 * unregistered this files nothing and still succeeds: such a watch is
 * never called, and the cell goes a moment later.
 *
 * Context: process context, may sleep; not under the watcher's lock.
 * Return: 0 or -ENOMEM.
 */
int cask_memcg_watch_arm(struct cask_memcg_watcher *watcher,
			 struct cask_memcg_watch *watch,
			 struct mem_cgroup *memcg)
{
	struct cask_memcg_sentinel *s;
	struct mem_cgroup *old;

	/*
	 * Allocated before the lock is taken: charged to @memcg, it may
	 * reclaim in that memcg for long, and every other cell's arm and
	 * disarm (attach and release) takes the lock.
	 */
	old = cask_memcg_begin(memcg);
	s = kmem_cache_alloc_lru(cask_memcg_sentinel_cache, &watcher->lru,
				 GFP_KERNEL);
	cask_memcg_end(memcg, old);
	if (!s)
		return -ENOMEM;
	s->watch = watch;
	/* list_lru_add_obj() adds only an item whose list_head is empty. */
	INIT_LIST_HEAD(&s->lru);

	mutex_lock(&watcher->lock);
	if (WARN_ON_ONCE(watch->sentinel) || watcher->closed) {
		mutex_unlock(&watcher->lock);
		kmem_cache_free(cask_memcg_sentinel_cache, s);
		return 0;
	}
	WARN_ON_ONCE(!list_lru_add_obj(&watcher->lru, &s->lru));
	watch->sentinel = s;
	mutex_unlock(&watcher->lock);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(cask_memcg_watch_arm, CASK);

/**
 * cask_memcg_watch_disarm() - take a watch out of its memcg
 * @watcher: the watcher
 * @watch: the watch; disarmed or never armed is fine
 *
 * Unfiled under the list's lock, which walks hold: when this returns no
 * callback runs with @watch, nor will, and what it is embedded in may go
 * (subject to whatever references callbacks took on it). Call it before
 * dropping the memcg reference the cell holds.
 *
 * Context: process context, may sleep.
 */
void cask_memcg_watch_disarm(struct cask_memcg_watcher *watcher,
			     struct cask_memcg_watch *watch)
{
	struct cask_memcg_sentinel *s;

	mutex_lock(&watcher->lock);
	s = watch->sentinel;
	watch->sentinel = NULL;
	mutex_unlock(&watcher->lock);
	if (!s)
		return;
	list_lru_del_obj(&watcher->lru, &s->lru);
	kmem_cache_free(cask_memcg_sentinel_cache, s);
}
EXPORT_SYMBOL_NS_GPL(cask_memcg_watch_disarm, CASK);

/**
 * cask_memcg_watch_nid() - the NUMA node a watch is filed on
 * @watch: the watch
 *
 * Reclaim calls the watcher with sc->nid of this node (for tests, which
 * build a &struct shrink_control of their own).
 *
 * Context: any; the watch's owner keeps it from being disarmed.
 * Return: the node, or NUMA_NO_NODE while disarmed.
 */
int cask_memcg_watch_nid(const struct cask_memcg_watch *watch)
{
	const struct cask_memcg_sentinel *s = READ_ONCE(watch->sentinel);

	return s ? page_to_nid(virt_to_page(s)) : NUMA_NO_NODE;
}
EXPORT_SYMBOL_NS_GPL(cask_memcg_watch_nid, CASK);

/**
 * cask_memcg_init() - make the sentinels' cache
 *
 * Context: cask_core's init.
 * Return: 0 or -ENOMEM.
 */
int cask_memcg_init(void)
{
	/* Charged where allocated: the cell's memcg (nothing for the root). */
	cask_memcg_sentinel_cache = KMEM_CACHE(cask_memcg_sentinel,
					       SLAB_ACCOUNT);
	return cask_memcg_sentinel_cache ? 0 : -ENOMEM;
}

/**
 * cask_memcg_exit() - destroy the sentinels' cache
 *
 * Context: cask_core's exit: every driver, hence every sentinel, is gone.
 */
void cask_memcg_exit(void)
{
	kmem_cache_destroy(cask_memcg_sentinel_cache);
}
