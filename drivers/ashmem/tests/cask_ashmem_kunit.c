// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_ashmem: the pin/unpin bookkeeping of a region
 * (split, merge, overlap, whole region, page rounding), its cell's LRU
 * and page counts, and the proportional split of a purge among cells.
 *
 * Regions here are bare areas with a made-up cell state: no file, no
 * cell, nothing purged for real (cashmem_range_purged_locked() books a purge).
 * The random case checks every step against a page bitmap.
 */
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/shmem_fs.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/vmstat.h>
#include <cask/cell.h>

#include "ashmem.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_IMPORT_NS(CASK);

#define REGION_PAGES	64

struct fixture {
	struct cashmem_cell cc;
	struct cashmem_area area;
};

static int ashmem_test_init(struct kunit *test)
{
	struct fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	spin_lock_init(&f->cc.lock);
	INIT_LIST_HEAD(&f->cc.lru);
	mutex_init(&f->area.lock);
	INIT_LIST_HEAD(&f->area.unpinned);
	f->area.cc = &f->cc;
	f->area.size = REGION_PAGES * PAGE_SIZE;
	test->priv = f;
	return 0;
}

static void ashmem_test_exit(struct kunit *test)
{
	struct fixture *f = test->priv;

	mutex_lock(&f->area.lock);
	cashmem_range_release_all_locked(&f->area);
	mutex_unlock(&f->area.lock);
	KUNIT_EXPECT_EQ(test, f->cc.lru_pages, 0);
	KUNIT_EXPECT_EQ(test, f->cc.purged_pages, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->cc.lru));
}

static int unpin(struct kunit *test, pgoff_t first, pgoff_t last)
{
	struct fixture *f = test->priv;
	struct cashmem_range *spare = cashmem_range_alloc();
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, spare);
	mutex_lock(&f->area.lock);
	ret = cashmem_range_unpin_locked(&f->area, first, last, &spare);
	mutex_unlock(&f->area.lock);
	cashmem_range_free(spare);
	return ret;
}

static int pin(struct kunit *test, pgoff_t first, pgoff_t last)
{
	struct fixture *f = test->priv;
	struct cashmem_range *spare = cashmem_range_alloc();
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, spare);
	mutex_lock(&f->area.lock);
	ret = cashmem_range_pin_locked(&f->area, first, last, &spare);
	mutex_unlock(&f->area.lock);
	cashmem_range_free(spare);
	return ret;
}

static int status(struct kunit *test, pgoff_t first, pgoff_t last)
{
	struct fixture *f = test->priv;
	int ret;

	mutex_lock(&f->area.lock);
	ret = cashmem_range_status_locked(&f->area, first, last);
	mutex_unlock(&f->area.lock);
	return ret;
}

/* Check the ranges are exactly @want (pairs of first and last page). */
static void expect_ranges(struct kunit *test, const pgoff_t *want,
			  unsigned int n)
{
	struct fixture *f = test->priv;
	struct cashmem_range *range;
	unsigned int i = 0;

	list_for_each_entry(range, &f->area.unpinned, unpinned) {
		KUNIT_ASSERT_LT(test, i, n);
		KUNIT_EXPECT_EQ(test, range->pgstart, want[2 * i]);
		KUNIT_EXPECT_EQ(test, range->pgend, want[2 * i + 1]);
		i++;
	}
	KUNIT_EXPECT_EQ(test, i, n);
}

/* The ranges of the cell's LRU in order, as pairs of first and last. */
static void expect_lru(struct kunit *test, const pgoff_t *want, unsigned int n)
{
	struct fixture *f = test->priv;
	struct cashmem_range *range;
	unsigned long pages = 0;
	unsigned int i = 0;

	list_for_each_entry(range, &f->cc.lru, lru) {
		KUNIT_ASSERT_LT(test, i, n);
		KUNIT_EXPECT_EQ(test, range->pgstart, want[2 * i]);
		KUNIT_EXPECT_EQ(test, range->pgend, want[2 * i + 1]);
		pages += cashmem_range_pages(range);
		i++;
	}
	KUNIT_EXPECT_EQ(test, i, n);
	KUNIT_EXPECT_EQ(test, f->cc.lru_pages, pages);
}

static void ashmem_pin_basic(struct kunit *test)
{
	static const pgoff_t one[] = { 2, 5 };

	KUNIT_EXPECT_EQ(test, status(test, 0, 63),
			ASHMEM_IS_PINNED);
	KUNIT_EXPECT_EQ(test, unpin(test, 2, 5), 0);
	expect_ranges(test, one, 1);
	expect_lru(test, one, 1);
	KUNIT_EXPECT_EQ(test, status(test, 0, 1),
			ASHMEM_IS_PINNED);
	KUNIT_EXPECT_EQ(test, status(test, 6, 63),
			ASHMEM_IS_PINNED);
	KUNIT_EXPECT_EQ(test, status(test, 5, 7),
			ASHMEM_IS_UNPINNED);
	KUNIT_EXPECT_EQ(test, status(test, 0, 2),
			ASHMEM_IS_UNPINNED);
	KUNIT_EXPECT_EQ(test, pin(test, 0, 63), ASHMEM_NOT_PURGED);
	expect_ranges(test, NULL, 0);
	expect_lru(test, NULL, 0);
}

static void ashmem_unpin_merge(struct kunit *test)
{
	struct fixture *f = test->priv;
	static const pgoff_t merged[] = { 2, 8 };
	static const pgoff_t two[] = { 0, 1, 2, 8 };
	static const pgoff_t lru_two[] = { 2, 8, 0, 1 };
	static const pgoff_t all[] = { 0, 20 };
	struct cashmem_range *spare;

	unpin(test, 2, 4);
	unpin(test, 4, 8);
	expect_ranges(test, merged, 1);
	/* Touching but not overlapping: kept apart, as Android's driver. */
	unpin(test, 0, 1);
	expect_ranges(test, two, 2);
	expect_lru(test, lru_two, 2);
	/* Inside an unpinned range: nothing changes, the spare is unused. */
	spare = cashmem_range_alloc();
	KUNIT_ASSERT_NOT_NULL(test, spare);
	mutex_lock(&f->area.lock);
	KUNIT_EXPECT_EQ(test, cashmem_range_unpin_locked(&f->area, 3, 5, &spare), 0);
	mutex_unlock(&f->area.lock);
	KUNIT_EXPECT_NOT_NULL(test, spare);
	cashmem_range_free(spare);
	expect_lru(test, lru_two, 2);
	/* Over both and more: one range, the newest. */
	unpin(test, 1, 20);
	expect_ranges(test, all, 1);
	expect_lru(test, all, 1);
}

static void ashmem_pin_split(struct kunit *test)
{
	struct fixture *f = test->priv;
	static const pgoff_t split[] = { 0, 2, 5, 9, 20, 21 };
	static const pgoff_t lru_split[] = { 20, 21, 0, 2, 5, 9 };
	static const pgoff_t trimmed[] = { 1, 2, 5, 7 };
	struct cashmem_range *spare;

	unpin(test, 20, 21);
	unpin(test, 0, 9);
	spare = cashmem_range_alloc();
	KUNIT_ASSERT_NOT_NULL(test, spare);
	mutex_lock(&f->area.lock);
	KUNIT_EXPECT_EQ(test, cashmem_range_pin_locked(&f->area, 3, 4, &spare),
			ASHMEM_NOT_PURGED);
	mutex_unlock(&f->area.lock);
	/* The split took the spare. */
	KUNIT_EXPECT_NULL(test, spare);
	expect_ranges(test, split, 3);
	/* The back half is as old as the front: right after it. */
	expect_lru(test, lru_split, 3);
	/* Trim both ends; then pin across several ranges at once. */
	pin(test, 0, 0);
	pin(test, 8, 21);
	expect_ranges(test, trimmed, 2);
	KUNIT_EXPECT_EQ(test, pin(test, 2, 5), ASHMEM_NOT_PURGED);
	KUNIT_EXPECT_EQ(test, status(test, 2, 5),
			ASHMEM_IS_PINNED);
	KUNIT_EXPECT_EQ(test, status(test, 1, 1),
			ASHMEM_IS_UNPINNED);
	KUNIT_EXPECT_EQ(test, status(test, 6, 6),
			ASHMEM_IS_UNPINNED);
	KUNIT_EXPECT_EQ(test, f->cc.lru_pages, 3);
}

static void ashmem_purged(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct cashmem_range *range;

	unpin(test, 10, 19);
	range = list_first_entry(&f->area.unpinned, struct cashmem_range,
				 unpinned);
	mutex_lock(&f->area.lock);
	cashmem_range_purged_locked(range);
	mutex_unlock(&f->area.lock);
	expect_lru(test, NULL, 0);
	KUNIT_EXPECT_EQ(test, f->cc.purged_pages, 10);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&f->cc.purged_total), 10);
	/* Still unpinned; pinning part of it reports the purge. */
	KUNIT_EXPECT_EQ(test, status(test, 12, 12),
			ASHMEM_IS_UNPINNED);
	KUNIT_EXPECT_EQ(test, pin(test, 0, 10), ASHMEM_WAS_PURGED);
	KUNIT_EXPECT_EQ(test, f->cc.purged_pages, 9);
	/* Merged with new pages, the whole range counts as purged. */
	unpin(test, 15, 30);
	expect_lru(test, NULL, 0);
	KUNIT_EXPECT_EQ(test, f->cc.purged_pages, 20);
	KUNIT_EXPECT_EQ(test, pin(test, 25, 30), ASHMEM_WAS_PURGED);
	/* Pages unpinned apart from it are not purged. */
	unpin(test, 40, 41);
	expect_lru(test, (const pgoff_t[]){ 40, 41 }, 1);
	KUNIT_EXPECT_EQ(test, pin(test, 40, 63), ASHMEM_NOT_PURGED);
	KUNIT_EXPECT_EQ(test, pin(test, 0, 63), ASHMEM_WAS_PURGED);
	KUNIT_EXPECT_EQ(test, f->cc.purged_pages, 0);
	expect_ranges(test, NULL, 0);
}

/* Random pins and unpins, checked page by page against a bitmap. */
static void ashmem_random(struct kunit *test)
{
	struct fixture *f = test->priv;
	DECLARE_BITMAP(model, REGION_PAGES);
	struct cashmem_range *range;
	struct rnd_state rnd;
	unsigned int step, p;

	bitmap_zero(model, REGION_PAGES);
	prandom_seed_state(&rnd, 42);
	for (step = 0; step < 4000; step++) {
		pgoff_t a = prandom_u32_state(&rnd) % REGION_PAGES;
		pgoff_t b = prandom_u32_state(&rnd) % REGION_PAGES;
		pgoff_t first = min(a, b), last = max(a, b);
		unsigned long pages = 0;
		pgoff_t prev_end = 0;
		bool any = false;

		if (prandom_u32_state(&rnd) & 1) {
			unpin(test, first, last);
			bitmap_set(model, first, last - first + 1);
		} else {
			pin(test, first, last);
			bitmap_clear(model, first, last - first + 1);
		}
		/* Sorted, disjoint, and exactly the model's pages. */
		list_for_each_entry(range, &f->area.unpinned, unpinned) {
			KUNIT_ASSERT_LE(test, range->pgstart, range->pgend);
			if (any)
				KUNIT_ASSERT_GT(test, range->pgstart, prev_end);
			any = true;
			prev_end = range->pgend;
			for (p = range->pgstart; p <= range->pgend; p++)
				KUNIT_ASSERT_TRUE(test, test_bit(p, model));
			pages += cashmem_range_pages(range);
		}
		KUNIT_ASSERT_EQ(test, pages, bitmap_weight(model, REGION_PAGES));
		KUNIT_ASSERT_EQ(test, f->cc.lru_pages, pages);
		p = prandom_u32_state(&rnd) % REGION_PAGES;
		KUNIT_ASSERT_EQ(test, status(test, p, p),
				test_bit(p, model) ? ASHMEM_IS_UNPINNED :
						     ASHMEM_IS_PINNED);
	}
}

static void ashmem_pin_pages(struct kunit *test)
{
	const size_t size = 10 * PAGE_SIZE + 1;	/* rounds up to 11 pages */
	pgoff_t first, last;

	KUNIT_EXPECT_EQ(test, cashmem_pin_pages(size, 0, 0, &first, &last), 0);
	KUNIT_EXPECT_EQ(test, first, 0);
	KUNIT_EXPECT_EQ(test, last, 10);
	KUNIT_EXPECT_EQ(test, cashmem_pin_pages(size, 2 * PAGE_SIZE, 0, &first,
						&last), 0);
	KUNIT_EXPECT_EQ(test, first, 2);
	KUNIT_EXPECT_EQ(test, last, 10);
	KUNIT_EXPECT_EQ(test, cashmem_pin_pages(size, 10 * PAGE_SIZE,
						PAGE_SIZE, &first, &last), 0);
	KUNIT_EXPECT_EQ(test, first, 10);
	KUNIT_EXPECT_EQ(test, last, 10);
	/* Unaligned, past the end, empty, overflowing: all refused. */
	KUNIT_EXPECT_EQ(test, cashmem_pin_pages(size, 1, PAGE_SIZE, &first,
						&last), -EINVAL);
	KUNIT_EXPECT_EQ(test, cashmem_pin_pages(size, 0, PAGE_SIZE + 1, &first,
						&last), -EINVAL);
	KUNIT_EXPECT_EQ(test, cashmem_pin_pages(size, 10 * PAGE_SIZE,
						2 * PAGE_SIZE, &first, &last),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, cashmem_pin_pages(size, 11 * PAGE_SIZE, 0, &first,
						&last), -EINVAL);
	KUNIT_EXPECT_EQ(test, cashmem_pin_pages(size, U32_MAX & PAGE_MASK, PAGE_SIZE,
						&first, &last), -EINVAL);
	KUNIT_EXPECT_EQ(test, cashmem_pin_pages(0, 0, 0, &first, &last),
			-EINVAL);
	/* Regions past 4 GiB: "to the end" is not cut to 32 bits. */
	KUNIT_EXPECT_EQ(test, cashmem_pin_pages(5ULL << 30, 0, 0, &first,
						&last), 0);
	KUNIT_EXPECT_EQ(test, last, ((5ULL << 30) >> PAGE_SHIFT) - 1);
}

static void ashmem_share(struct kunit *test)
{
	static const unsigned long w[] = { 100, 300, 0, 600 };
	unsigned long out[5], sum, total;
	struct rnd_state rnd;
	unsigned int i, round;

	cashmem_share(100, w, 4, out);
	KUNIT_EXPECT_EQ(test, out[0], 10);
	KUNIT_EXPECT_EQ(test, out[1], 30);
	KUNIT_EXPECT_EQ(test, out[2], 0);
	KUNIT_EXPECT_EQ(test, out[3], 60);
	/* More than there is: everything. */
	cashmem_share(5000, w, 4, out);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, out[i], w[i]);
	cashmem_share(0, w, 4, out);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, out[i], 0);
	/* Random weights: the sum is exact, each share within one. */
	prandom_seed_state(&rnd, 7);
	for (round = 0; round < 1000; round++) {
		unsigned long wr[5], nr;

		total = 0;
		for (i = 0; i < 5; i++) {
			wr[i] = prandom_u32_state(&rnd) % 1000;
			total += wr[i];
		}
		nr = prandom_u32_state(&rnd) % (total + 10);
		cashmem_share(nr, wr, 5, out);
		sum = 0;
		for (i = 0; i < 5; i++) {
			u64 exact_lo = total ? (u64)min(nr, total) * wr[i] / total : 0;

			KUNIT_ASSERT_LE(test, out[i], wr[i]);
			KUNIT_ASSERT_GE(test, out[i], exact_lo);
			KUNIT_ASSERT_LE(test, out[i], exact_lo + 1);
			sum += out[i];
		}
		KUNIT_ASSERT_EQ(test, sum, min(nr, total));
	}
	/* Huge weights do not overflow. */
	{
		unsigned long big[2] = { ULONG_MAX / 2, ULONG_MAX / 2 };

		cashmem_share(ULONG_MAX / 2, big, 2, out);
		KUNIT_EXPECT_EQ(test, out[0] + out[1], ULONG_MAX / 2);
	}
}

static struct kunit_case ashmem_cases[] = {
	KUNIT_CASE(ashmem_pin_basic),
	KUNIT_CASE(ashmem_unpin_merge),
	KUNIT_CASE(ashmem_pin_split),
	KUNIT_CASE(ashmem_purged),
	KUNIT_CASE(ashmem_random),
	KUNIT_CASE(ashmem_pin_pages),
	KUNIT_CASE(ashmem_share),
	{}
};

static struct kunit_suite ashmem_suite = {
	.name = "cask_ashmem",
	.init = ashmem_test_init,
	.exit = ashmem_test_exit,
	.test_cases = ashmem_cases,
};

/* Stands for cashmem_purge_cell() in the test's own task only. */
static unsigned long purge_in_reclaimer(struct cashmem_cell *cc,
					unsigned long nr, bool may_block)
{
	KUNIT_FAIL(kunit_get_current_test(),
		   "the shrinker purged in the reclaiming task");
	return 0;
}

/*
 * The shrinker never purges (truncates) in the task that reclaims: that
 * task may hold the locks of the very folios a purge would lock (page
 * migration). It asks for the purge, and the pages go all the same. A
 * cell state of our own, with a real shmem file, beside the host's, in
 * the host cell's memcg.
 */
static void ashmem_shrinker_only_asks(struct kunit *test)
{
	struct cashmem_range *spare;
	struct cashmem_area *area;
	struct cashmem_cell *cc;
	struct cask_cell *cell;
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	unsigned long deadline;
	struct folio *folio;
	struct file *file;
	int ret, i;

	cc = kunit_kzalloc(test, sizeof(*cc), GFP_KERNEL);
	area = kunit_kzalloc(test, sizeof(*area), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cc);
	KUNIT_ASSERT_NOT_NULL(test, area);
	cell = cask_cell_get_host();
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	ret = cashmem_cell_init(cc, cell);
	if (ret) {
		cask_cell_put(cell);
		KUNIT_FAIL(test, "cashmem_cell_init: %d", ret);
		return;
	}
	file = shmem_file_setup("cask-kunit", 16 * PAGE_SIZE, VM_NORESERVE);
	if (IS_ERR(file)) {
		KUNIT_FAIL(test, "shmem_file_setup: %ld", PTR_ERR(file));
		goto exit_cell;
	}
	kref_init(&area->ref);
	mutex_init(&area->lock);
	INIT_LIST_HEAD(&area->unpinned);
	area->cc = cc;
	area->cell = cell;
	area->size = 16 * PAGE_SIZE;
	area->file = file;
	/* Pages in memory: what reclaim is told there is to get. */
	for (i = 0; i < 16; i++) {
		folio = shmem_read_folio(file->f_mapping, i);
		if (IS_ERR(folio)) {
			KUNIT_FAIL(test, "shmem_read_folio: %ld", PTR_ERR(folio));
			goto put_file;
		}
		folio_put(folio);
	}
	spare = cashmem_range_alloc();
	if (!spare) {
		KUNIT_FAIL(test, "no range");
		goto put_file;
	}
	mutex_lock(&area->lock);
	ret = cashmem_range_unpin_locked(area, 0, 15, &spare);
	mutex_unlock(&area->lock);
	cashmem_range_free(spare);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(cc->lru_pages), 16);

	sc.nid = cask_memcg_watch_nid(&cc->watch);
	sc.memcg = cc->memcg;
	sc.nr_to_scan = 16;
	kunit_activate_static_stub(test, cashmem_purge_cell,
				   purge_in_reclaimer);
	cashmem_shrink_scan(NULL, &sc);
	kunit_deactivate_static_stub(test, cashmem_purge_cell);

	/* Done elsewhere, soon. */
	deadline = jiffies + 10 * HZ;
	while (atomic_long_read(&cc->purged_total) < 16 &&
	       time_before(jiffies, deadline))
		msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&cc->purged_total), 16);
	KUNIT_EXPECT_EQ(test, READ_ONCE(cc->lru_pages), 0);
	cashmem_purge_flush();
	KUNIT_EXPECT_EQ(test, atomic_long_read(&cc->freed_total), 16);
	KUNIT_EXPECT_EQ(test, file->f_mapping->nrpages, 0);

	mutex_lock(&area->lock);
	cashmem_range_release_all_locked(area);
	mutex_unlock(&area->lock);
put_file:
	fput(file);
exit_cell:
	cashmem_cell_exit(cc);
	cask_cell_put(cell);
}

/*
 * An unpinned range counts for the pages it really holds, not for its
 * length: a huge region, unpinned to the end and never touched, holds
 * nothing. Counted or "freed" as its length, reclaim would call the
 * shrinker again and again (each call a wait) for pages that never were.
 */
static void ashmem_untouched_frees_nothing(struct kunit *test)
{
	const loff_t size = IS_ENABLED(CONFIG_64BIT) ? 1LL << 40 : 1LL << 31;
	const pgoff_t pages = size >> PAGE_SHIFT;
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	struct cashmem_range *spare;
	struct cashmem_area *area;
	struct cashmem_cell *cc;
	struct cask_cell *cell;
	unsigned long count, ret, shmem;
	struct file *file;
	int err;

	cc = kunit_kzalloc(test, sizeof(*cc), GFP_KERNEL);
	area = kunit_kzalloc(test, sizeof(*area), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cc);
	KUNIT_ASSERT_NOT_NULL(test, area);
	cell = cask_cell_get_host();
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	err = cashmem_cell_init(cc, cell);
	if (err) {
		cask_cell_put(cell);
		KUNIT_FAIL(test, "cashmem_cell_init: %d", err);
		return;
	}
	file = shmem_file_setup("cask-kunit-huge", size, VM_NORESERVE);
	if (IS_ERR(file)) {
		KUNIT_FAIL(test, "shmem_file_setup: %ld", PTR_ERR(file));
		goto exit_cell;
	}
	kref_init(&area->ref);
	mutex_init(&area->lock);
	INIT_LIST_HEAD(&area->unpinned);
	area->cc = cc;
	area->cell = cell;
	area->size = size;
	area->file = file;

	sc.nid = cask_memcg_watch_nid(&cc->watch);
	sc.memcg = cc->memcg;
	sc.nr_to_scan = 128;
	spare = cashmem_range_alloc();
	if (!spare) {
		KUNIT_FAIL(test, "no range");
		goto put_file;
	}
	mutex_lock(&area->lock);
	cashmem_range_unpin_locked(area, 0, pages - 1, &spare);
	mutex_unlock(&area->lock);
	cashmem_range_free(spare);
	KUNIT_EXPECT_EQ(test, READ_ONCE(cc->lru_pages), pages);

	/* At most the shmem pages there are (with some slack for others). */
	count = cashmem_shrink_count(NULL, &sc);
	shmem = global_node_page_state(NR_SHMEM);
	KUNIT_EXPECT_LE(test, count, shmem + 4096);
	ret = cashmem_shrink_scan(NULL, &sc);
	KUNIT_EXPECT_EQ_MSG(test, ret, SHRINK_STOP,
			    "a scan freed %lu pages of an untouched region",
			    ret);
	cashmem_purge_flush();

	/* Purged directly: still nothing freed, whatever the length. */
	spare = cashmem_range_alloc();
	if (!spare) {
		KUNIT_FAIL(test, "no range");
		goto release;
	}
	mutex_lock(&area->lock);
	cashmem_range_pin_locked(area, 0, pages - 1, &spare);
	cashmem_range_unpin_locked(area, 0, pages - 1, &spare);
	mutex_unlock(&area->lock);
	cashmem_range_free(spare);
	KUNIT_EXPECT_EQ(test, cashmem_purge_cell(cc, 128, true), 0);
	/* ...but the range counts as purged all the same. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(cc->lru_pages), 0);

release:
	mutex_lock(&area->lock);
	cashmem_range_release_all_locked(area);
	mutex_unlock(&area->lock);
put_file:
	fput(file);
exit_cell:
	cashmem_cell_exit(cc);
	cask_cell_put(cell);
}

static struct kunit_case ashmem_shrinker_cases[] = {
	KUNIT_CASE(ashmem_shrinker_only_asks),
	KUNIT_CASE(ashmem_untouched_frees_nothing),
	{}
};

static struct kunit_suite ashmem_shrinker_suite = {
	.name = "cask_ashmem_shrinker",
	.test_cases = ashmem_shrinker_cases,
};

kunit_test_suites(&ashmem_suite, &ashmem_shrinker_suite);

MODULE_DESCRIPTION("KUnit tests for cask_ashmem");
MODULE_LICENSE("GPL");
