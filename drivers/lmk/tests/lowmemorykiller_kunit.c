// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for lowmemorykiller's pure functions: the legacy oom_adj
 * conversion, the comma lists and their errors, the choice of a level
 * from free memory, the choice of a victim among candidates, and the
 * budgets of searches and walks.
 */
#include <kunit/test.h>
#include <linux/jiffies.h>
#include <linux/oom.h>
#include <linux/string.h>

#include "lmk.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* The legacy driver's defaults, as lmkd also writes them. */
static const struct lmk_levels lmk_test_defaults = {
	.nr_adj = 4,
	.nr_minfree = 4,
	.adj = { 0, 58, 352, 705 },
	.minfree = { 1536, 2048, 4096, 16384 },
};

static void oom_adj_conversion(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, lmk_oom_adj_to_score(0), 0);
	KUNIT_EXPECT_EQ(test, lmk_oom_adj_to_score(1), 58);
	KUNIT_EXPECT_EQ(test, lmk_oom_adj_to_score(6), 352);
	KUNIT_EXPECT_EQ(test, lmk_oom_adj_to_score(12), 705);
	KUNIT_EXPECT_EQ(test, lmk_oom_adj_to_score(14), 823);
	/* The largest legacy value is the largest score, not 882. */
	KUNIT_EXPECT_EQ(test, lmk_oom_adj_to_score(15), OOM_SCORE_ADJ_MAX);
	KUNIT_EXPECT_EQ(test, lmk_oom_adj_to_score(-17), OOM_SCORE_ADJ_MIN);
	KUNIT_EXPECT_EQ(test, lmk_oom_adj_to_score(-1), -58);
}

static void parse_adj_legacy(struct kunit *test)
{
	short adj[LMK_MAX_LEVELS];
	unsigned int nr = 99;

	KUNIT_ASSERT_EQ(test, lmk_parse_adj("0,1,6,12\n", adj, &nr), 0);
	KUNIT_ASSERT_EQ(test, nr, 4);
	KUNIT_EXPECT_EQ(test, adj[0], 0);
	KUNIT_EXPECT_EQ(test, adj[1], 58);
	KUNIT_EXPECT_EQ(test, adj[2], 352);
	KUNIT_EXPECT_EQ(test, adj[3], 705);
	/* Legacy mode is decided by the last value only. */
	KUNIT_ASSERT_EQ(test, lmk_parse_adj("-17,15", adj, &nr), 0);
	KUNIT_EXPECT_EQ(test, adj[0], OOM_SCORE_ADJ_MIN);
	KUNIT_EXPECT_EQ(test, adj[1], OOM_SCORE_ADJ_MAX);
	KUNIT_EXPECT_EQ(test, lmk_parse_adj("100,12", adj, &nr), -EINVAL);
	KUNIT_EXPECT_EQ(test, lmk_parse_adj("-18,1", adj, &nr), -EINVAL);
}

static void parse_adj_scores(struct kunit *test)
{
	short adj[LMK_MAX_LEVELS];
	unsigned int nr;

	KUNIT_ASSERT_EQ(test, lmk_parse_adj("0,100,200,300,900,906", adj, &nr),
			0);
	KUNIT_ASSERT_EQ(test, nr, 6);
	KUNIT_EXPECT_EQ(test, adj[0], 0);
	KUNIT_EXPECT_EQ(test, adj[5], 906);
	/* 16 is a score, so 0 and 3 are scores too. */
	KUNIT_ASSERT_EQ(test, lmk_parse_adj("0,3,16", adj, &nr), 0);
	KUNIT_EXPECT_EQ(test, adj[1], 3);
	KUNIT_EXPECT_EQ(test, adj[2], 16);
	KUNIT_ASSERT_EQ(test, lmk_parse_adj("-1000,1000", adj, &nr), 0);
	KUNIT_EXPECT_EQ(test, lmk_parse_adj("1001", adj, &nr), -EINVAL);
	KUNIT_EXPECT_EQ(test, lmk_parse_adj("-1001,500", adj, &nr), -EINVAL);
}

static void parse_errors(struct kunit *test)
{
	static const char * const bad[] = {
		"a", "1,,2", "1,2,", ",1", " 1", "1 ", "1\n\n", "0x10",
		"1,2,3,4,5,6,7", "99999999999", "1;2",
		"1000,1000,1000,1000,1000,1000,1000,1000,1000,1000,1000,1000,1000,1",
	};
	unsigned int minfree[LMK_MAX_LEVELS] = { 7 }, nr = 3, i;
	short adj[LMK_MAX_LEVELS] = { 7 };

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_EQ_MSG(test, lmk_parse_adj(bad[i], adj, &nr),
				    -EINVAL, "adj '%s'", bad[i]);
		KUNIT_EXPECT_EQ_MSG(test,
				    lmk_parse_minfree(bad[i], minfree, &nr),
				    -EINVAL, "minfree '%s'", bad[i]);
	}
	/* A failed parse changes nothing. */
	KUNIT_EXPECT_EQ(test, nr, 3);
	KUNIT_EXPECT_EQ(test, adj[0], 7);
	KUNIT_EXPECT_EQ(test, minfree[0], 7);
}

static void parse_minfree(struct kunit *test)
{
	unsigned int minfree[LMK_MAX_LEVELS], nr;

	KUNIT_ASSERT_EQ(test, lmk_parse_minfree("1536,2048,4096,16384\n",
						minfree, &nr), 0);
	KUNIT_ASSERT_EQ(test, nr, 4);
	KUNIT_EXPECT_EQ(test, minfree[0], 1536);
	KUNIT_EXPECT_EQ(test, minfree[3], 16384);
	KUNIT_EXPECT_EQ(test, lmk_parse_minfree("-1", minfree, &nr), -EINVAL);
	KUNIT_EXPECT_EQ(test, lmk_parse_minfree("5,-1", minfree, &nr),
			-EINVAL);
	/* An empty list clears the levels. */
	KUNIT_ASSERT_EQ(test, lmk_parse_minfree("\n", minfree, &nr), 0);
	KUNIT_EXPECT_EQ(test, nr, 0);
	KUNIT_ASSERT_EQ(test, lmk_parse_minfree("", minfree, &nr), 0);
	KUNIT_EXPECT_EQ(test, nr, 0);
}

/* lmkd's list when it kills by itself: levels that are never crossed. */
static void parse_minfree_zeros(struct kunit *test)
{
	struct lmk_levels lv = { };

	KUNIT_ASSERT_EQ(test, lmk_parse_minfree("0,0,0,0,0,0", lv.minfree,
						&lv.nr_minfree), 0);
	KUNIT_ASSERT_EQ(test, lmk_parse_adj("0,0,0,0,0,0", lv.adj,
					    &lv.nr_adj), 0);
	KUNIT_EXPECT_EQ(test, lv.nr_minfree, 6);
	KUNIT_EXPECT_EQ(test, lmk_levels_nr(&lv), 6);
	KUNIT_EXPECT_EQ(test, lmk_levels_top(&lv), 0);
	KUNIT_EXPECT_EQ(test, lmk_level_select(&lv, 0, 0), -1);
	/* A zero level among others is skipped; the others still count. */
	KUNIT_ASSERT_EQ(test, lmk_parse_minfree("0,4096", lv.minfree,
						&lv.nr_minfree), 0);
	KUNIT_EXPECT_EQ(test, lmk_levels_top(&lv), 4096);
	KUNIT_EXPECT_EQ(test, lmk_level_select(&lv, 100, 0), 1);
}

static void print_round_trip(struct kunit *test)
{
	struct lmk_levels lv = { };
	char buf[LMK_LIST_LEN + 2];

	KUNIT_EXPECT_EQ(test, lmk_print_adj(buf, sizeof(buf), &lv), 1);
	KUNIT_EXPECT_STREQ(test, buf, "\n");
	/* All negative would be legacy oom_adj, and out of its range. */
	KUNIT_EXPECT_EQ(test, lmk_parse_adj("-1000,-1000", lv.adj, &lv.nr_adj),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, lmk_parse_adj("-1000,-1000,-1000,-1000,-1000,1000",
					    lv.adj, &lv.nr_adj), 0);
	lmk_print_adj(buf, sizeof(buf), &lv);
	KUNIT_EXPECT_STREQ(test, buf, "-1000,-1000,-1000,-1000,-1000,1000\n");
	KUNIT_ASSERT_EQ(test, lmk_parse_adj(buf, lv.adj, &lv.nr_adj), 0);
	lmk_print_minfree(buf, sizeof(buf), &lmk_test_defaults);
	KUNIT_EXPECT_STREQ(test, buf, "1536,2048,4096,16384\n");
	KUNIT_ASSERT_EQ(test, lmk_parse_minfree(buf, lv.minfree,
						&lv.nr_minfree), 0);
	KUNIT_EXPECT_EQ(test, lv.nr_minfree, 4);
}

static void level_select(struct kunit *test)
{
	const struct lmk_levels *lv = &lmk_test_defaults;

	KUNIT_EXPECT_EQ(test, lmk_levels_top(lv), 16384);
	KUNIT_EXPECT_EQ(test, lmk_level_select(lv, ULONG_MAX, 0), -1);
	KUNIT_EXPECT_EQ(test, lmk_level_select(lv, 16384, 0), -1);
	KUNIT_EXPECT_EQ(test, lmk_level_select(lv, 16383, 0), 3);
	KUNIT_EXPECT_EQ(test, lmk_level_select(lv, 4095, 0), 2);
	KUNIT_EXPECT_EQ(test, lmk_level_select(lv, 2000, 0), 1);
	KUNIT_EXPECT_EQ(test, lmk_level_select(lv, 0, 0), 0);
}

static void level_select_file(struct kunit *test)
{
	const struct lmk_levels *lv = &lmk_test_defaults;

	/* The host's rule: file pages must be short too. */
	KUNIT_EXPECT_EQ(test, lmk_level_select(lv, 0, 16384), -1);
	KUNIT_EXPECT_EQ(test, lmk_level_select(lv, 0, 4096), 3);
	KUNIT_EXPECT_EQ(test, lmk_level_select(lv, 1000, 2047), 1);
}

static void level_select_partial(struct kunit *test)
{
	struct lmk_levels lv = lmk_test_defaults;

	/* Levels in use: as many as both lists give. */
	lv.nr_adj = 2;
	KUNIT_EXPECT_EQ(test, lmk_levels_nr(&lv), 2);
	KUNIT_EXPECT_EQ(test, lmk_levels_top(&lv), 2048);
	KUNIT_EXPECT_EQ(test, lmk_level_select(&lv, 3000, 0), -1);
	lv.nr_minfree = 0;
	KUNIT_EXPECT_EQ(test, lmk_levels_top(&lv), 0);
	KUNIT_EXPECT_EQ(test, lmk_level_select(&lv, 0, 0), -1);
}

static void level_select_unsorted(struct kunit *test)
{
	struct lmk_levels lv = {
		.nr_adj = 3, .nr_minfree = 3,
		.adj = { 900, 0, 500 }, .minfree = { 8000, 100, 4000 },
	};

	/* The first in list order, as the legacy driver chose. */
	KUNIT_EXPECT_EQ(test, lmk_levels_top(&lv), 8000);
	KUNIT_EXPECT_EQ(test, lmk_level_select(&lv, 50, 0), 0);
	KUNIT_EXPECT_EQ(test, lmk_level_select(&lv, 8000, 0), -1);
}

static void level_crossings(struct kunit *test)
{
	struct lmk_levels lv = {
		.nr_adj = 3, .nr_minfree = 3,
		.adj = { 0, 500, 900 }, .minfree = { 100, 200, 300 },
	};
	u64 x[LMK_MAX_LEVELS] = { };

	/* The top level crossed at 10 and stayed in. */
	lmk_levels_crossed(&lv, x, 250, 0, 0, 10);
	KUNIT_EXPECT_EQ(test, x[0], 0);
	KUNIT_EXPECT_EQ(test, x[1], 0);
	KUNIT_EXPECT_EQ(test, x[2], 10);
	lmk_levels_crossed(&lv, x, 250, 0, 0, 1000);
	KUNIT_EXPECT_EQ(test, x[2], 10);
	/* The next level, much later: its own time, the top's kept. */
	lmk_levels_crossed(&lv, x, 150, 0, 0, 2000);
	KUNIT_EXPECT_EQ(test, x[0], 0);
	KUNIT_EXPECT_EQ(test, x[1], 2000);
	KUNIT_EXPECT_EQ(test, x[2], 10);
	/* Its edge is not within, as for lmk_level_select(). */
	lmk_levels_crossed(&lv, x, 200, 0, 0, 2100);
	KUNIT_EXPECT_EQ(test, x[1], 0);
	KUNIT_EXPECT_EQ(test, x[2], 10);
	/* The host's rule: file pages must be short too. */
	lmk_levels_crossed(&lv, x, 50, 150, 0, 2200);
	KUNIT_EXPECT_EQ(test, x[0], 0);
	KUNIT_EXPECT_EQ(test, x[1], 2200);
	/* Above every level: all cleared. */
	lmk_levels_crossed(&lv, x, 300, 0, 0, 3000);
	KUNIT_EXPECT_EQ(test, x[0], 0);
	KUNIT_EXPECT_EQ(test, x[1], 0);
	KUNIT_EXPECT_EQ(test, x[2], 0);
	/* The kick saw the top level crossed first; only the top takes it. */
	lmk_levels_crossed(&lv, x, 50, 0, 3500, 3600);
	KUNIT_EXPECT_EQ(test, x[0], 3600);
	KUNIT_EXPECT_EQ(test, x[1], 3600);
	KUNIT_EXPECT_EQ(test, x[2], 3500);
	/* A kick time from the future (a later kick) is not a crossing. */
	lmk_levels_crossed(&lv, x, 300, 0, 0, 3700);
	lmk_levels_crossed(&lv, x, 250, 0, 3900, 3800);
	KUNIT_EXPECT_EQ(test, x[2], 3800);
	/* A level no longer in use is cleared. */
	lv.nr_adj = 2;
	lmk_levels_crossed(&lv, x, 50, 0, 0, 4000);
	KUNIT_EXPECT_EQ(test, x[0], 4000);
	KUNIT_EXPECT_EQ(test, x[1], 4000);
	KUNIT_EXPECT_EQ(test, x[2], 0);
}

static void tick_pace(struct kunit *test)
{
	/* No levels: the tick has nothing to be quick about. */
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(0, 0, 0), LMK_TICK_SLOW_MS);
	/* Within the top level; the edge is not within, as for the levels. */
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(4096, 0, 0), LMK_TICK_FAST_MS);
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(4096, 4095, 0), LMK_TICK_FAST_MS);
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(4096, 4096, 0), LMK_TICK_NEAR_MS);
	/* Near: less than another top level's worth above it. */
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(4096, 8191, 0), LMK_TICK_NEAR_MS);
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(4096, 8192, 0), LMK_TICK_SLOW_MS);
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(4096, ULONG_MAX, 0),
			LMK_TICK_SLOW_MS);
	/* The host's rule: file pages count for the band as for the levels. */
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(4096, 100, 5000), LMK_TICK_NEAR_MS);
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(4096, 100, 9000), LMK_TICK_SLOW_MS);
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(4096, 5000, 100), LMK_TICK_NEAR_MS);
	/* The largest minfree does not overflow the band. */
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(UINT_MAX, UINT_MAX, 0),
			LMK_TICK_NEAR_MS);
	KUNIT_EXPECT_EQ(test, lmk_tick_pace(UINT_MAX, 2UL * UINT_MAX, 0),
			LMK_TICK_SLOW_MS);
	/* The paces keep their order. */
	KUNIT_EXPECT_LT(test, LMK_TICK_FAST_MS, LMK_TICK_NEAR_MS);
	KUNIT_EXPECT_LT(test, LMK_TICK_NEAR_MS, LMK_TICK_SLOW_MS);
}

#define CAND(a, r) { .adj = (a), .rss = (r), .in_cell = true }

static void victim_highest_adj(struct kunit *test)
{
	struct lmk_candidate c[] = {
		CAND(0, 5000), CAND(900, 10), CAND(500, 9000), CAND(906, 1),
	};

	KUNIT_EXPECT_EQ(test, lmk_select_victim(c, ARRAY_SIZE(c), 0), 3);
	KUNIT_EXPECT_EQ(test, lmk_select_victim(c, 3, 0), 1);
	/* Below the level's adj: never. */
	KUNIT_EXPECT_EQ(test, lmk_select_victim(c, 1, 1), -1);
	KUNIT_EXPECT_EQ(test, lmk_select_victim(c, ARRAY_SIZE(c), 907), -1);
	KUNIT_EXPECT_EQ(test, lmk_select_victim(c, 0, 0), -1);
}

static void victim_tie_rss(struct kunit *test)
{
	struct lmk_candidate c[] = {
		CAND(900, 10), CAND(900, 3000), CAND(900, 20), CAND(100, 90000),
		CAND(900, 3000),
	};

	/* Largest RSS among the highest adj; the first of equals. */
	KUNIT_EXPECT_EQ(test, lmk_select_victim(c, ARRAY_SIZE(c), 0), 1);
	KUNIT_EXPECT_TRUE(test, lmk_candidate_better(&c[1], &c[0]));
	KUNIT_EXPECT_FALSE(test, lmk_candidate_better(&c[4], &c[1]));
	KUNIT_EXPECT_FALSE(test, lmk_candidate_better(&c[3], &c[0]));
	KUNIT_EXPECT_TRUE(test, lmk_candidate_better(&c[3], NULL));
}

static void victim_never(struct kunit *test)
{
	struct lmk_candidate c[] = {
		{ .adj = 1000, .rss = 100, .in_cell = true, .kthread = true },
		{ .adj = 1000, .rss = 100, .in_cell = true, .init = true },
		{ .adj = 1000, .rss = 100, .in_cell = true, .dying = true },
		{ .adj = 1000, .rss = 100, .in_cell = false },
		{ .adj = 1000, .rss = 0, .in_cell = true },
		{ .adj = -1, .rss = 100, .in_cell = true },
		{ .adj = -1000, .rss = 100, .in_cell = true },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_FALSE_MSG(test,
				       lmk_candidate_eligible(&c[i], -1000),
				       "candidate %u", i);
	/* Even a level that says -1000 kills no adj < 0. */
	KUNIT_EXPECT_EQ(test, lmk_select_victim(c, ARRAY_SIZE(c), -1000), -1);
	c[5].adj = 0;
	KUNIT_EXPECT_EQ(test, lmk_select_victim(c, ARRAY_SIZE(c), -1000), 5);
}

/* LMK_SEARCHES_PER_SEC in a second, then none until the second is over. */
static void search_budget(struct kunit *test)
{
	/* Across the wrap of jiffies. */
	unsigned long t = ULONG_MAX - HZ / 2;
	struct lmk_budget b = { };
	int i;

	for (i = 0; i < LMK_SEARCHES_PER_SEC; i++)
		KUNIT_EXPECT_TRUE(test, lmk_search_allowed(&b, t + i));
	KUNIT_EXPECT_FALSE(test, lmk_search_allowed(&b, t + LMK_SEARCHES_PER_SEC));
	KUNIT_EXPECT_FALSE(test, lmk_search_allowed(&b, t + HZ - 1));
	/* Refusals do not count: a new second has its whole budget. */
	for (i = 0; i < LMK_SEARCHES_PER_SEC; i++)
		KUNIT_EXPECT_TRUE(test, lmk_search_allowed(&b, t + HZ));
	KUNIT_EXPECT_FALSE(test, lmk_search_allowed(&b, t + HZ));
	/* A clock before the second's start is a new second. */
	KUNIT_EXPECT_TRUE(test, lmk_search_allowed(&b, t));
	/* A fresh budget starts its second at its first search. */
	b = (struct lmk_budget) { };
	KUNIT_EXPECT_TRUE(test, lmk_search_allowed(&b, 5));
	KUNIT_EXPECT_EQ(test, b.start, 5UL);
	KUNIT_EXPECT_EQ(test, b.searches, 1U);
}

static void lmk_test_walks_put(void *w)
{
	lmk_walks_put(w);
}

/* A budget of the walks' memcg keys, or the case fails. */
static struct lmk_walks *lmk_test_walks(struct kunit *test, const void *key)
{
	struct lmk_walks *w = lmk_walks_get(key);

	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, lmk_test_walks_put, w));
	return w;
}

/*
 * The cells of one memory cgroup share one budget of walks: 64 cells
 * (max_cells_per_user) of one memcg, each within its own search budget,
 * make LMK_WALKS_PER_SEC walks a second together, not 64 times their
 * own; another memcg's cells have their own. A kill's sharer walk is
 * counted but never refused.
 */
static void walks_shared_per_memcg(struct kunit *test)
{
	static const int key_a, key_b;
	const unsigned int cells = 64;
	struct lmk_budget *searches;
	struct lmk_walks **w, *other;
	unsigned long t = 1000;
	unsigned int i, walks = 0;

	searches = kunit_kcalloc(test, cells, sizeof(*searches), GFP_KERNEL);
	w = kunit_kcalloc(test, cells, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, searches);
	KUNIT_ASSERT_NOT_NULL(test, w);
	for (i = 0; i < cells; i++)
		w[i] = lmk_test_walks(test, &key_a);
	other = lmk_test_walks(test, &key_b);
	KUNIT_EXPECT_PTR_EQ(test, w[0], w[63]);
	KUNIT_EXPECT_PTR_NE(test, w[0], other);
	/* Each cell searches as often as its own budget lets it. */
	for (i = 0; i < cells * LMK_SEARCHES_PER_SEC; i++) {
		unsigned int c = i % cells;

		if (lmk_search_allowed(&searches[c], t + i % HZ) &&
		    lmk_walk_allowed(w[c], t + i % HZ, false))
			walks++;
	}
	KUNIT_EXPECT_EQ(test, walks, LMK_WALKS_PER_SEC);
	/* Another memcg's cells are not held back by them. */
	KUNIT_EXPECT_TRUE(test, lmk_walk_allowed(other, t, false));
	/* A kill's sharers are walked anyway, and counted. */
	KUNIT_EXPECT_TRUE(test, lmk_walk_allowed(w[5], t + 1, true));
	KUNIT_EXPECT_EQ(test, w[5]->budget.searches, LMK_WALKS_PER_SEC + 1);
	/* The next second has the whole budget again. */
	KUNIT_EXPECT_TRUE(test, lmk_walk_allowed(w[7], t + HZ, false));
}

/* The last cell of a memcg frees its budget; the next one starts anew. */
static void walks_freed_with_last_cell(struct kunit *test)
{
	static const int key;
	struct lmk_walks *a, *b;
	int i;

	a = lmk_walks_get(&key);
	KUNIT_ASSERT_NOT_NULL(test, a);
	b = lmk_walks_get(&key);
	KUNIT_EXPECT_PTR_EQ(test, a, b);
	KUNIT_EXPECT_EQ(test, a->users, 2U);
	for (i = 0; i < LMK_WALKS_PER_SEC; i++)
		lmk_walk_allowed(a, 10, false);
	KUNIT_EXPECT_FALSE(test, lmk_walk_allowed(b, 10, false));
	lmk_walks_put(a);
	KUNIT_EXPECT_EQ(test, b->users, 1U);
	lmk_walks_put(b);
	b = lmk_test_walks(test, &key);
	KUNIT_EXPECT_EQ(test, b->users, 1U);
	KUNIT_EXPECT_TRUE(test, lmk_walk_allowed(b, 10, false));
}

/*
 * A reap whose slice ended goes again at once; one that had the lock but
 * could not free (an mmu notifier that would block: -EAGAIN) waits a
 * step first, or the reaper would retake the lock and fail in a loop.
 */
static void reap_again(struct kunit *test)
{
	static const unsigned long nows[] = { 1000, -1UL, INITIAL_JIFFIES };
	static const int done[] = { 0, -ESRCH, -EINVAL, -EOPNOTSUPP };
	unsigned long nb;
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(nows); i++) {
		unsigned long now = nows[i];

		nb = 0;
		KUNIT_EXPECT_TRUE(test, lmk_reap_again(-ETIMEDOUT, now, &nb));
		KUNIT_EXPECT_EQ(test, nb, now);

		nb = now;
		KUNIT_EXPECT_TRUE(test, lmk_reap_again(-EAGAIN, now, &nb));
		/* Not at once, and not for long: one step, wrap or not. */
		KUNIT_EXPECT_TRUE(test, time_after(nb, now));
		KUNIT_EXPECT_EQ(test, nb - now,
				msecs_to_jiffies(LMK_REAP_STEP_MS));
		KUNIT_EXPECT_TRUE(test, time_before_eq(nb, now + HZ / 50));

		for (j = 0; j < ARRAY_SIZE(done); j++) {
			nb = 42;
			KUNIT_EXPECT_FALSE(test,
					   lmk_reap_again(done[j], now, &nb));
			KUNIT_EXPECT_EQ(test, nb, 42UL);
		}
	}
}

static struct kunit_case lmk_test_cases[] = {
	KUNIT_CASE(oom_adj_conversion),
	KUNIT_CASE(parse_adj_legacy),
	KUNIT_CASE(parse_adj_scores),
	KUNIT_CASE(parse_errors),
	KUNIT_CASE(parse_minfree),
	KUNIT_CASE(parse_minfree_zeros),
	KUNIT_CASE(print_round_trip),
	KUNIT_CASE(level_select),
	KUNIT_CASE(level_select_file),
	KUNIT_CASE(level_select_partial),
	KUNIT_CASE(level_select_unsorted),
	KUNIT_CASE(level_crossings),
	KUNIT_CASE(tick_pace),
	KUNIT_CASE(victim_highest_adj),
	KUNIT_CASE(victim_tie_rss),
	KUNIT_CASE(victim_never),
	KUNIT_CASE(search_budget),
	KUNIT_CASE(walks_shared_per_memcg),
	KUNIT_CASE(walks_freed_with_last_cell),
	KUNIT_CASE(reap_again),
	{}
};

static struct kunit_suite lmk_test_suite = {
	.name = "lowmemorykiller",
	.test_cases = lmk_test_cases,
};

kunit_test_suite(lmk_test_suite);

MODULE_DESCRIPTION("KUnit tests for lowmemorykiller");
MODULE_LICENSE("GPL");
