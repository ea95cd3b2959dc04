// SPDX-License-Identifier: GPL-2.0
/*
 * The walks of every process on the host that the cells of one memory
 * cgroup may make in a second, together.
 *
 * Each search for a victim, each check of a candidate's mm sharers and
 * each kill of a victim's sharers walks every process under RCU, in a
 * WQ_HIGHPRI kworker whose time nobody is charged for. A cell's own
 * budget (LMK_SEARCHES_PER_SEC) and its idle backoff bound one cell; an
 * unprivileged user may make up to max_cells_per_user cells, all in one
 * limited cgroup, each with a level it is always within and no victim.
 * So the cells of one memory cgroup share one budget of
 * LMK_WALKS_PER_SEC walks, counted at every walk: however many cells a
 * container is cut into, it walks the host no more often than one.
 * Cells of different cgroups (containers) do not share, so that one
 * container's cells cannot starve another's killer; a user with a
 * delegated cgroup subtree gets a budget per memory cgroup it makes.
 *
 * The budgets live in a small hash keyed by the memcg's address, which
 * each user's reference keeps from being reused: made with the first
 * cell of a memcg, freed with its last.
 *
 * Locking: lmk_walks_lock (a mutex) protects the hash and the users
 * counts, taken at attach and detach only; each budget's own spinlock
 * protects its count, taken under lc->lock by the tick.
 */
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "lmk.h"

#define LMK_WALKS_HASH_BITS	6

static DEFINE_HASHTABLE(lmk_walks_hash, LMK_WALKS_HASH_BITS);
static DEFINE_MUTEX(lmk_walks_lock);	/* lmk_walks_hash, lmk_walks.users */

/**
 * lmk_walks_get() - the walk budget of a memory cgroup's cells
 * @key: the cells' memory cgroup (NULL for the host cell and cells
 *	without one), which the caller holds a reference on
 *
 * Context: process context, may sleep.
 * Return: the budget, shared with the other cells of @key, or NULL
 * without memory.
 */
struct lmk_walks *lmk_walks_get(const void *key)
{
	unsigned long k = (unsigned long)key;
	struct lmk_walks *w;

	mutex_lock(&lmk_walks_lock);
	hash_for_each_possible(lmk_walks_hash, w, node, k) {
		if (w->key == key) {
			w->users++;
			goto unlock;
		}
	}
	/* Charged to the cell that makes it, as the cell's own state is. */
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (w) {
		w->key = key;
		w->users = 1;
		spin_lock_init(&w->lock);
		hash_add(lmk_walks_hash, &w->node, k);
	}
unlock:
	mutex_unlock(&lmk_walks_lock);
	return w;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_walks_get);

/**
 * lmk_walks_put() - a cell lets go of its walk budget
 * @w: what lmk_walks_get() returned
 *
 * Context: process context, may sleep.
 */
void lmk_walks_put(struct lmk_walks *w)
{
	mutex_lock(&lmk_walks_lock);
	if (!--w->users) {
		hash_del(&w->node);
		kfree(w);
	}
	mutex_unlock(&lmk_walks_lock);
}
EXPORT_SYMBOL_IF_KUNIT(lmk_walks_put);

/**
 * lmk_walk_allowed() - may a cell walk every process now
 * @w: its memory cgroup's budget
 * @now: the time, in jiffies
 * @must: the walk is made anyway (it kills a victim's sharers, whose
 *	memory would otherwise stay): count it, refuse nothing
 *
 * Context: any; takes @w's spinlock.
 * Return: true if the walk may be made, and then it is counted.
 */
bool lmk_walk_allowed(struct lmk_walks *w, unsigned long now, bool must)
{
	bool ok;

	spin_lock(&w->lock);
	ok = lmk_budget_take(&w->budget, now,
			     must ? UINT_MAX : LMK_WALKS_PER_SEC);
	spin_unlock(&w->lock);
	return ok;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_walk_allowed);
