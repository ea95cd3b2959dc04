// SPDX-License-Identifier: GPL-2.0
/*
 * The pure part of the low-memory killer: the legacy comma lists, the
 * choice of a level from free memory, the choice of a victim among
 * candidates and the budget of searches. No locks, no state of their
 * own; the KUnit suite drives each directly.
 */
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/oom.h>
#include <linux/string.h>

#include "lmk.h"

/**
 * lmk_oom_adj_to_score() - convert a legacy oom_adj to oom_score_adj
 * @oom_adj: -17 (OOM_DISABLE) .. 15 (OOM_ADJUST_MAX)
 *
 * As Android's kernels converted the adj param: linear in 17ths, except
 * that the largest legacy value maps to the largest score.
 *
 * Context: any.
 * Return: the oom_score_adj.
 */
short lmk_oom_adj_to_score(int oom_adj)
{
	if (oom_adj == LMK_OOM_ADJ_MAX)
		return OOM_SCORE_ADJ_MAX;
	return oom_adj * OOM_SCORE_ADJ_MAX / -LMK_OOM_ADJ_MIN;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_oom_adj_to_score);

/*
 * Split "a,b,c" (one trailing newline allowed) into at most
 * LMK_MAX_LEVELS integers. An empty list is valid: no levels.
 */
static int lmk_parse_list(const char *buf, int *val, unsigned int *nr)
{
	char tmp[LMK_LIST_LEN + 2], *s = tmp, *tok;
	unsigned int n = 0;
	size_t len = strlen(buf);

	if (len && buf[len - 1] == '\n')
		len--;
	if (len > LMK_LIST_LEN)
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	/* kstrtoint() would take a newline after any value. */
	if (strchr(tmp, '\n'))
		return -EINVAL;
	if (!len) {
		*nr = 0;
		return 0;
	}
	while ((tok = strsep(&s, ","))) {
		if (n == LMK_MAX_LEVELS || kstrtoint(tok, 10, &val[n]))
			return -EINVAL;
		n++;
	}
	*nr = n;
	return 0;
}

/**
 * lmk_parse_adj() - parse the adj list
 * @buf: "a,b,c", at most LMK_MAX_LEVELS values, optional trailing newline
 * @adj: the values, in oom_score_adj
 * @nr: how many
 *
 * When the last value is a legacy oom_adj (<= 15), every value is one and
 * is converted, as Android kernels did for old user space.
 *
 * Context: any.
 * Return: 0, or -EINVAL for a malformed list, too many values or a value
 * out of range (legacy values below -17, scores outside -1000..1000).
 */
int lmk_parse_adj(const char *buf, short *adj, unsigned int *nr)
{
	int val[LMK_MAX_LEVELS];
	unsigned int i, n;
	bool legacy;
	int ret;

	ret = lmk_parse_list(buf, val, &n);
	if (ret)
		return ret;
	legacy = n && val[n - 1] <= LMK_OOM_ADJ_MAX;
	for (i = 0; i < n; i++) {
		if (legacy) {
			if (val[i] < LMK_OOM_ADJ_MIN || val[i] > LMK_OOM_ADJ_MAX)
				return -EINVAL;
			val[i] = lmk_oom_adj_to_score(val[i]);
		}
		if (val[i] < OOM_SCORE_ADJ_MIN || val[i] > OOM_SCORE_ADJ_MAX)
			return -EINVAL;
	}
	for (i = 0; i < n; i++)
		adj[i] = val[i];
	*nr = n;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_parse_adj);

/**
 * lmk_parse_minfree() - parse the minfree list
 * @buf: "a,b,c" in pages, at most LMK_MAX_LEVELS values, optional newline
 * @minfree: the values
 * @nr: how many
 *
 * A minfree of 0 is a level nothing crosses, as in the legacy driver:
 * lmkd writes a list of zeros to switch the kernel's killer off when it
 * kills by itself (its PSI mode) and finds minfree writable.
 *
 * Context: any.
 * Return: 0, or -EINVAL for a malformed list, too many values or a
 * negative value.
 */
int lmk_parse_minfree(const char *buf, unsigned int *minfree,
		      unsigned int *nr)
{
	int val[LMK_MAX_LEVELS];
	unsigned int i, n;
	int ret;

	ret = lmk_parse_list(buf, val, &n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		if (val[i] < 0)
			return -EINVAL;
	}
	for (i = 0; i < n; i++)
		minfree[i] = val[i];
	*nr = n;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_parse_minfree);

/**
 * lmk_print_adj() - format the adj list as the param shows it
 * @buf: where
 * @len: its size, at least LMK_LIST_LEN + 2
 * @lv: the levels
 *
 * Context: any.
 * Return: the length written, newline included.
 */
int lmk_print_adj(char *buf, size_t len, const struct lmk_levels *lv)
{
	unsigned int i;
	int n = 0;

	for (i = 0; i < lv->nr_adj; i++)
		n += scnprintf(buf + n, len - n, "%s%d", i ? "," : "",
			       lv->adj[i]);
	n += scnprintf(buf + n, len - n, "\n");
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_print_adj);

/**
 * lmk_print_minfree() - format the minfree list as the param shows it
 * @buf: where
 * @len: its size, at least LMK_LIST_LEN + 2
 * @lv: the levels
 *
 * Context: any.
 * Return: the length written, newline included.
 */
int lmk_print_minfree(char *buf, size_t len, const struct lmk_levels *lv)
{
	unsigned int i;
	int n = 0;

	for (i = 0; i < lv->nr_minfree; i++)
		n += scnprintf(buf + n, len - n, "%s%u", i ? "," : "",
			       lv->minfree[i]);
	n += scnprintf(buf + n, len - n, "\n");
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_print_minfree);

/**
 * lmk_levels_nr() - the levels in use
 * @lv: the levels
 *
 * Context: any.
 * Return: how many pairs of adj and minfree both lists give.
 */
unsigned int lmk_levels_nr(const struct lmk_levels *lv)
{
	return min(lv->nr_adj, lv->nr_minfree);
}
EXPORT_SYMBOL_IF_KUNIT(lmk_levels_nr);

/**
 * lmk_levels_top() - the free memory below which some level is crossed
 * @lv: the levels
 *
 * Context: any.
 * Return: the largest minfree in use, 0 without levels.
 */
unsigned long lmk_levels_top(const struct lmk_levels *lv)
{
	unsigned int i, nr = lmk_levels_nr(lv);
	unsigned long top = 0;

	for (i = 0; i < nr; i++)
		top = max_t(unsigned long, top, lv->minfree[i]);
	return top;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_levels_top);

/**
 * lmk_level_select() - the level crossed at this much free memory
 * @lv: the levels
 * @free: free pages
 * @file: file pages that are not shmem, which the host cell (as the
 *	legacy driver) also requires below the level; 0 where only @free
 *	counts
 *
 * The first level in list order whose minfree both are below, as the
 * legacy driver chose: with lists in ascending order (as lmkd writes
 * them), the most severe level crossed, which kills from the lowest adj.
 *
 * Context: any.
 * Return: the level's index, or -1 if none is crossed.
 */
int lmk_level_select(const struct lmk_levels *lv, unsigned long free,
		     unsigned long file)
{
	unsigned int i, nr = lmk_levels_nr(lv);

	for (i = 0; i < nr; i++) {
		if (free < lv->minfree[i] && file < lv->minfree[i])
			return i;
	}
	return -1;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_level_select);

/**
 * lmk_levels_crossed() - note when each level was crossed, forget those left
 * @lv: the levels
 * @crossed_ns: per level, when it was crossed, 0 while it is not;
 *	LMK_MAX_LEVELS entries
 * @free: free pages
 * @file: file pages that are not shmem, as for lmk_level_select()
 * @seen_ns: when the cell was first seen within its top level (the
 *	shrinker's kick, before this tick), 0 if not known
 * @now: the time of @free and @file
 *
 * A kill's reaction is measured from the crossing of its own level, not
 * from the first level of the episode: a cell may stay long within a
 * level with nobody to kill at its adj before it crosses the next. A level
 * crossed now that was not gets @now; a level at the top (whose crossing
 * is what the kick saw) gets @seen_ns instead when that is earlier. A
 * level no longer crossed, or no longer in use, is cleared.
 *
 * Context: any.
 */
void lmk_levels_crossed(const struct lmk_levels *lv, u64 *crossed_ns,
			unsigned long free, unsigned long file, u64 seen_ns,
			u64 now)
{
	unsigned int i, nr = lmk_levels_nr(lv);
	unsigned long top = lmk_levels_top(lv);

	for (i = 0; i < LMK_MAX_LEVELS; i++) {
		if (i >= nr || free >= lv->minfree[i] ||
		    file >= lv->minfree[i]) {
			crossed_ns[i] = 0;
		} else if (!crossed_ns[i]) {
			crossed_ns[i] = now;
			if (lv->minfree[i] == top && seen_ns && seen_ns < now)
				crossed_ns[i] = seen_ns;
		}
	}
}
EXPORT_SYMBOL_IF_KUNIT(lmk_levels_crossed);

/**
 * lmk_tick_pace() - how soon the tick looks again at this much free memory
 * @top: the top level's minfree (lmk_levels_top()), 0 without levels
 * @free: free pages
 * @file: file pages that are not shmem; 0 where only @free counts
 *
 * Nothing triggers at a crossing when the cell has only memory.max: its
 * memcg is not reclaimed until it reaches the limit, so the tick is what
 * sees the crossing, and how soon depends on its pace. Near the top
 * level (within another top level's worth of it) the tick looks every
 * LMK_TICK_NEAR_MS, so a crossing is seen that soon after it happens;
 * further away a slower pace costs less, and a ramp from there takes
 * longer than LMK_TICK_SLOW_MS to reach the near band at any rate that
 * the near pace does not already cover. The band is measured as the
 * levels are: a host cell is near only when its file pages are too.
 *
 * Context: any.
 * Return: the delay in milliseconds: LMK_TICK_FAST_MS within the top
 * level, LMK_TICK_NEAR_MS near it, LMK_TICK_SLOW_MS otherwise or
 * without levels.
 */
unsigned int lmk_tick_pace(unsigned long top, unsigned long free,
			   unsigned long file)
{
	/* minfree values are unsigned int: twice one fits an unsigned long. */
	unsigned long near = 2 * top;

	if (!top)
		return LMK_TICK_SLOW_MS;
	if (free < top && file < top)
		return LMK_TICK_FAST_MS;
	if (free < near && file < near)
		return LMK_TICK_NEAR_MS;
	return LMK_TICK_SLOW_MS;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_tick_pace);

/**
 * lmk_candidate_eligible() - may this process be killed at this level
 * @c: the process
 * @min_adj: the crossed level's adj
 *
 * Never a kernel thread, an init, a process outside the cell, one
 * without memory, one already dying, nor one the OOM killer itself is
 * told to spare (adj < 0) whatever the level says.
 *
 * Context: any.
 * Return: true if it may.
 */
bool lmk_candidate_eligible(const struct lmk_candidate *c, short min_adj)
{
	if (c->kthread || c->init || c->dying || !c->in_cell || !c->rss)
		return false;
	return c->adj >= 0 && c->adj >= min_adj;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_candidate_eligible);

/**
 * lmk_candidate_better() - is @c a better victim than @best
 * @c: an eligible candidate
 * @best: the best so far, or NULL
 *
 * The highest oom_score_adj first; among equal ones the largest RSS.
 *
 * Context: any.
 * Return: true if @c should replace @best.
 */
bool lmk_candidate_better(const struct lmk_candidate *c,
			  const struct lmk_candidate *best)
{
	if (!best)
		return true;
	if (c->adj != best->adj)
		return c->adj > best->adj;
	return c->rss > best->rss;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_candidate_better);

/**
 * lmk_select_victim() - choose among candidates
 * @c: the candidates
 * @nr: how many
 * @min_adj: the crossed level's adj
 *
 * Context: any.
 * Return: the index of the victim (the first of equals), or -1 if no
 * candidate is eligible.
 */
int lmk_select_victim(const struct lmk_candidate *c, unsigned int nr,
		      short min_adj)
{
	int best = -1;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!lmk_candidate_eligible(&c[i], min_adj))
			continue;
		if (lmk_candidate_better(&c[i], best < 0 ? NULL : &c[best]))
			best = i;
	}
	return best;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_select_victim);

/**
 * lmk_budget_take() - count one more in a budget of @max a second
 * @b: the budget
 * @now: the time, in jiffies
 * @max: how many the second allows (UINT_MAX: in effect, no limit)
 *
 * At most @max in the second from the first of them. A clock before the
 * second's start (a budget unused for so long that jiffies wrapped)
 * starts a new second. Refusals are not counted.
 *
 * Context: any; the caller serializes the calls for @b.
 * Return: true if allowed, and then it is counted.
 */
bool lmk_budget_take(struct lmk_budget *b, unsigned long now,
		     unsigned int max)
{
	if (!b->searches || time_before(now, b->start) ||
	    time_after_eq(now, b->start + HZ)) {
		b->start = now;
		b->searches = 0;
	}
	if (b->searches >= max)
		return false;
	b->searches++;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(lmk_budget_take);

/**
 * lmk_search_allowed() - may a cell start another search for a victim
 * @b: the cell's budget
 * @now: the time, in jiffies
 *
 * At most LMK_SEARCHES_PER_SEC searches in the second from the first of
 * them; see lmk_budget_take().
 *
 * Context: any; the caller serializes the calls for @b.
 * Return: true if it may, and then the search is counted.
 */
bool lmk_search_allowed(struct lmk_budget *b, unsigned long now)
{
	return lmk_budget_take(b, now, LMK_SEARCHES_PER_SEC);
}
EXPORT_SYMBOL_IF_KUNIT(lmk_search_allowed);
