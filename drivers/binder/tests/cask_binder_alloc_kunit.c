// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_binder's allocator (suite cask_binder_alloc).
 *
 * Most cases use an area set up at a made-up user address with no mm, so
 * that every page and buffer state is reachable without a process: the
 * exhaustive case allocates five buffers laid out over page boundaries
 * and frees them in all 120 orders, checking every page after every step.
 * One case maps a real vma (an anonymous-inode file in the test thread's
 * mm) to check faults, unmapping by cbinder_alloc_shrink() and by the
 * shrinker itself.
 */
#include <kunit/test.h>
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/list_lru.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "alloc.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define AREA_PAGES	8
#define AREA_SIZE	(AREA_PAGES * PAGE_SIZE)
/* Never dereferenced: the area has no mm. */
#define FAKE_BASE	(256UL * 1024 * 1024)
#define NBUF		5

static void alloc_release_action(void *alloc)
{
	cbinder_alloc_release(alloc);
	/*
	 * kunit frees @alloc next. The driver frees it only after a grace
	 * period (cbinder_proc_free()): a shrinker scan may still be
	 * unlocking alloc->lock, inside an RCU read-side section, after
	 * release took the lock from it.
	 */
	synchronize_rcu();
}

static struct cbinder_alloc *alloc_test_new(struct kunit *test, size_t size)
{
	struct cbinder_alloc *alloc;

	alloc = kunit_kzalloc(test, sizeof(*alloc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, alloc);
	cbinder_alloc_init(alloc, NULL);
	/* Release is safe twice: cases that test it run it themselves too. */
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   alloc_release_action,
							   alloc));
	if (size)
		KUNIT_ASSERT_EQ(test, 0,
				cbinder_alloc_setup(alloc, FAKE_BASE, size));
	return alloc;
}

static int alloc_test_init(struct kunit *test)
{
	test->priv = alloc_test_new(test, AREA_SIZE);
	return 0;
}

static struct cbinder_buffer *new_buf(struct kunit *test,
				      struct cbinder_alloc *alloc,
				      size_t size, bool is_async)
{
	struct cbinder_buffer *buffer;

	buffer = cbinder_alloc_new_buf(alloc, size, 0, 0, is_async);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buffer);
	return buffer;
}

/* Page states the exhaustive case expects. */
enum { PG_NONE, PG_LRU, PG_USED };

struct layout {
	const char *name;
	size_t size[NBUF];	/* in 1/8 pages, then bytes added */
	int bytes[NBUF];
};

/*
 * Buffer ends before, at and after a page end, buffers spanning pages and
 * several sharing one; sizes in eighths of a page plus a few bytes.
 */
static const struct layout layouts[] = {
	{ "mid/end/after/before/tiny-end",
	  { 4, 4, 8, 16, 0 }, { 0, 0, 8, -16, 8 } },
	{ "tiny/before/span/tiny/end",
	  { 0, 8, 8, 0, 16 }, { 8, -16, 16, 24, -32 } },
	{ "aligned",
	  { 8, 8, 16, 8, 0 }, { 0, 0, 0, 0, 8 } },
};

static size_t layout_size(const struct layout *l, int i)
{
	return l->size[i] * (PAGE_SIZE / 8) + l->bytes[i];
}

struct exhaustive {
	struct kunit *test;
	struct cbinder_alloc *alloc;
	struct cbinder_buffer *buf[NBUF];
	size_t start[NBUF], end[NBUF];
	bool live[NBUF];
	u8 state[AREA_PAGES];
	u8 *pattern, *readback;
	size_t async_used, allocated;
};

/* The state each page must be in after an allocation or free. */
static void expect_update(struct exhaustive *e)
{
	bool covered[AREA_PAGES] = { };
	int i, p;

	for (i = 0; i < NBUF; i++) {
		if (!e->live[i])
			continue;
		for (p = e->start[i] >> PAGE_SHIFT;
		     p <= (e->end[i] - 1) >> PAGE_SHIFT; p++)
			covered[p] = true;
	}
	for (p = 0; p < AREA_PAGES; p++) {
		if (covered[p])
			e->state[p] = PG_USED;
		else if (e->state[p] == PG_USED)
			e->state[p] = PG_LRU;
	}
}

static bool check_state(struct exhaustive *e, const char *what, int step)
{
	struct cbinder_alloc *alloc = e->alloc;
	size_t populated = 0;
	int p;

	for (p = 0; p < AREA_PAGES; p++) {
		struct cbinder_lru_page *lp = alloc->pages[p];
		bool ok;

		switch (e->state[p]) {
		case PG_USED:
			/* It may still be on the LRU (see alloc.c). */
			ok = lp && lp->users;
			break;
		case PG_LRU:
			ok = lp && !lp->users && !list_empty(&lp->lru);
			break;
		default:
			ok = !lp;
		}
		if (!ok) {
			KUNIT_FAIL(e->test, "%s step %d: page %d expected %s",
				   what, step, p,
				   e->state[p] == PG_USED ? "used" :
				   e->state[p] == PG_LRU ? "on the LRU" :
				   "absent");
			return false;
		}
		populated += e->state[p] != PG_NONE;
	}
	if (alloc->pages_populated != populated ||
	    alloc->allocated_bytes != e->allocated ||
	    alloc->free_async_space != AREA_SIZE / 2 - e->async_used) {
		KUNIT_FAIL(e->test,
			   "%s step %d: populated %zu/%zu allocated %zu/%zu async %zu/%zu",
			   what, step, alloc->pages_populated, populated,
			   alloc->allocated_bytes, e->allocated,
			   alloc->free_async_space,
			   AREA_SIZE / 2 - e->async_used);
		return false;
	}
	return true;
}

static bool shrink_and_check(struct exhaustive *e, const char *what, int step)
{
	unsigned long expected = 0, freed;
	int p;

	for (p = 0; p < AREA_PAGES; p++) {
		if (e->state[p] == PG_LRU) {
			e->state[p] = PG_NONE;
			expected++;
		}
	}
	freed = cbinder_alloc_shrink(e->alloc);
	if (freed != expected) {
		KUNIT_FAIL(e->test, "%s step %d: shrink freed %lu, not %lu",
			   what, step, freed, expected);
		return false;
	}
	return check_state(e, what, step);
}

/* One free order of one layout; false after the first failure. */
static bool exhaustive_round(struct exhaustive *e, const struct layout *l,
			     const int *order, int round)
{
	struct cbinder_alloc *alloc = e->alloc;
	struct cbinder_buffer *buffer;
	size_t size;
	int i;

	for (i = 0; i < NBUF; i++) {
		bool async = i & 1;

		size = layout_size(l, i);
		/* Unaligned parts that add up to @size once aligned. */
		buffer = cbinder_alloc_new_buf(alloc, size >= 16 ? size - 13 : 1,
					       size >= 16 ? 5 : 0, 0, async);
		if (IS_ERR(buffer)) {
			KUNIT_FAIL(e->test, "%s alloc %d: %ld", l->name, i,
				   PTR_ERR(buffer));
			return false;
		}
		e->buf[i] = buffer;
		e->start[i] = buffer->offset;
		e->end[i] = buffer->offset + cbinder_buffer_size(alloc, buffer);
		if (e->start[i] != (i ? e->end[i - 1] : 0) ||
		    e->end[i] - e->start[i] != size) {
			KUNIT_FAIL(e->test, "%s alloc %d at [%zu, %zu)", l->name,
				   i, e->start[i], e->end[i]);
			return false;
		}
		e->live[i] = true;
		e->allocated += size;
		if (async)
			e->async_used += size;
		memset(e->pattern, round * NBUF + i + 1, size);
		if (cbinder_alloc_copy_to_buffer(alloc, buffer, 0, e->pattern,
						 size)) {
			KUNIT_FAIL(e->test, "%s copy %d", l->name, i);
			return false;
		}
		expect_update(e);
		if (!check_state(e, l->name, i))
			return false;
	}

	for (i = 0; i < NBUF; i++) {
		int b = order[i];

		size = e->end[b] - e->start[b];
		/* A neighbour's page sharing must not have touched the data. */
		memset(e->pattern, round * NBUF + b + 1, size);
		if (cbinder_alloc_copy_from_buffer(alloc, e->readback, e->buf[b],
						   0, size) ||
		    memcmp(e->readback, e->pattern, size)) {
			KUNIT_FAIL(e->test, "%s free step %d: buffer %d corrupt",
				   l->name, i, b);
			return false;
		}
		cbinder_alloc_free_buf(alloc, e->buf[b]);
		e->live[b] = false;
		e->allocated -= size;
		if (b & 1)
			e->async_used -= size;
		expect_update(e);
		if (!check_state(e, l->name, NBUF + i))
			return false;
		/* Shrink at varying points, with pages used on either side. */
		if ((round + i) % 3 == 0 &&
		    !shrink_and_check(e, l->name, NBUF + i))
			return false;
	}

	/* Everything merged back into one free buffer. */
	buffer = list_first_entry(&alloc->buffers, struct cbinder_buffer,
				  entry);
	if (!list_is_singular(&alloc->buffers) || !buffer->free ||
	    buffer->offset || cbinder_buffer_size(alloc, buffer) != AREA_SIZE ||
	    !RB_EMPTY_ROOT(&alloc->allocated_buffers) ||
	    alloc->free_buffers.rb_node != &buffer->rb_node) {
		KUNIT_FAIL(e->test, "%s round %d: not merged", l->name, round);
		return false;
	}
	return shrink_and_check(e, l->name, 2 * NBUF);
}

static void alloc_test_exhaustive(struct kunit *test)
{
	struct exhaustive *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	int n, i, l;

	KUNIT_ASSERT_NOT_NULL(test, e);
	e->test = test;
	e->alloc = test->priv;
	e->pattern = kunit_kmalloc(test, 3 * PAGE_SIZE, GFP_KERNEL);
	e->readback = kunit_kmalloc(test, 3 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e->pattern);
	KUNIT_ASSERT_NOT_NULL(test, e->readback);

	for (l = 0; l < ARRAY_SIZE(layouts); l++) {
		/* n in the factorial base: the n-th permutation of 0..4. */
		for (n = 0; n < 120; n++) {
			int left[NBUF] = { 0, 1, 2, 3, 4 }, order[NBUF];
			int rest = n, k = NBUF, j;

			for (i = 0; i < NBUF; i++) {
				int f = 1, idx;

				for (j = 2; j < k; j++)
					f *= j;
				idx = rest / f;
				rest %= f;
				order[i] = left[idx];
				for (j = idx; j < k - 1; j++)
					left[j] = left[j + 1];
				k--;
			}
			if (!exhaustive_round(e, &layouts[l], order, n))
				return;
		}
	}
}

static void alloc_test_size_overflow(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;

	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(cbinder_alloc_new_buf(alloc, SIZE_MAX, 0, 0,
						      false)));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(cbinder_alloc_new_buf(alloc, SIZE_MAX - 6, 0, 0,
						      false)));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(cbinder_alloc_new_buf(alloc, SIZE_MAX / 2 + 8,
						      SIZE_MAX / 2 + 8, 0,
						      false)));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			PTR_ERR(cbinder_alloc_new_buf(alloc, 8, 8,
						      SIZE_MAX - 15, true)));
	/* Nothing was allocated on the way. */
	KUNIT_EXPECT_EQ(test, 0, alloc->pages_populated);
	KUNIT_EXPECT_EQ(test, 0, alloc->allocated_bytes);
}

static void alloc_test_too_big(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_buffer *buffer;

	KUNIT_EXPECT_EQ(test, -ENOSPC,
			PTR_ERR(cbinder_alloc_new_buf(alloc, AREA_SIZE + 1, 0,
						      0, false)));
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			PTR_ERR(cbinder_alloc_new_buf(alloc, AREA_SIZE - 8, 8,
						      8, false)));
	buffer = new_buf(test, alloc, AREA_SIZE, false);
	KUNIT_EXPECT_EQ(test, AREA_SIZE, cbinder_buffer_size(alloc, buffer));
	KUNIT_EXPECT_EQ(test, AREA_PAGES, alloc->pages_populated);
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			PTR_ERR(cbinder_alloc_new_buf(alloc, 0, 0, 0, false)));
	cbinder_alloc_free_buf(alloc, buffer);
	KUNIT_EXPECT_EQ(test, 0, alloc->allocated_bytes);
}

static void alloc_test_async_limit(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_buffer *half, *sync;

	KUNIT_EXPECT_EQ(test, AREA_SIZE / 2, alloc->free_async_space);
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			PTR_ERR(cbinder_alloc_new_buf(alloc, AREA_SIZE / 2 + 8,
						      0, 0, true)));
	half = new_buf(test, alloc, AREA_SIZE / 2, true);
	KUNIT_EXPECT_EQ(test, 0, alloc->free_async_space);
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			PTR_ERR(cbinder_alloc_new_buf(alloc, 0, 0, 0, true)));
	/* Synchronous buffers use the other half. */
	sync = new_buf(test, alloc, AREA_SIZE / 4, false);
	KUNIT_EXPECT_EQ(test, 0, alloc->free_async_space);
	cbinder_alloc_free_buf(alloc, half);
	KUNIT_EXPECT_EQ(test, AREA_SIZE / 2, alloc->free_async_space);
	cbinder_alloc_free_buf(alloc, sync);
	KUNIT_EXPECT_EQ(test, AREA_SIZE / 2, alloc->free_async_space);
}

/*
 * One-way spam: suspect only once less than a tenth of the area is left
 * for one-way buffers, and then only a sender with more than a quarter of
 * the area; told once until the space recovers.
 */
static void alloc_test_spam_by_size(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_buffer *big, *b;

	/* 4 KiB left of 16: above the tenth (3276 bytes). */
	big = new_buf(test, alloc, AREA_SIZE / 2 - PAGE_SIZE, true);
	KUNIT_EXPECT_FALSE(test, big->oneway_spam_suspect);
	/* Now 3 KiB: below, and this sender holds 13 KiB > 8 KiB. */
	b = new_buf(test, alloc, 1024, true);
	KUNIT_EXPECT_TRUE(test, b->oneway_spam_suspect);
	/* Told already. */
	b = new_buf(test, alloc, 8, true);
	KUNIT_EXPECT_FALSE(test, b->oneway_spam_suspect);
	/* Synchronous buffers are never suspect. */
	b = new_buf(test, alloc, 8, false);
	KUNIT_EXPECT_FALSE(test, b->oneway_spam_suspect);
	/* Recovered: the next time below is told again. */
	cbinder_alloc_free_buf(alloc, big);
	b = new_buf(test, alloc, 8, true);
	KUNIT_EXPECT_FALSE(test, b->oneway_spam_suspect);
	KUNIT_EXPECT_FALSE(test, alloc->oneway_spam_detected);
	big = new_buf(test, alloc, AREA_SIZE / 2 - PAGE_SIZE, true);
	KUNIT_EXPECT_TRUE(test, big->oneway_spam_suspect);
}

/* Exactly a quarter of the area is not yet too much; a byte more is. */
static void alloc_test_spam_size_boundary(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_buffer *b;

	/* Another sender's: counted in the space, not for this sender. */
	b = new_buf(test, alloc, 6000, true);
	b->pid = current->tgid + 1;
	b = new_buf(test, alloc, AREA_SIZE / 4, true);
	KUNIT_EXPECT_LT(test, alloc->free_async_space, AREA_SIZE / 10);
	KUNIT_EXPECT_FALSE(test, b->oneway_spam_suspect);
	b = new_buf(test, alloc, 8, true);
	KUNIT_EXPECT_TRUE(test, b->oneway_spam_suspect);
}

/* More than 50 one-way buffers, however small, is suspect too. */
static void alloc_test_spam_by_count(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_buffer *b;
	int i;

	/* Other senders' take the space below the tenth. */
	b = new_buf(test, alloc, AREA_SIZE / 2 - PAGE_SIZE, true);
	b->pid = current->tgid + 1;
	b = new_buf(test, alloc, PAGE_SIZE / 4, true);
	KUNIT_EXPECT_FALSE(test, b->oneway_spam_suspect);
	b->pid = current->tgid + 1;
	KUNIT_EXPECT_LT(test, alloc->free_async_space, AREA_SIZE / 10);
	for (i = 1; i <= 50; i++) {
		b = new_buf(test, alloc, 8, true);
		KUNIT_EXPECT_FALSE(test, b->oneway_spam_suspect);
	}
	b = new_buf(test, alloc, 8, true);
	KUNIT_EXPECT_TRUE(test, b->oneway_spam_suspect);
	KUNIT_EXPECT_TRUE(test, alloc->oneway_spam_detected);
}

static void alloc_test_zero_size(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_buffer *a, *b, *c;

	a = new_buf(test, alloc, 0, false);
	b = new_buf(test, alloc, 0, true);
	c = new_buf(test, alloc, 1, false);
	KUNIT_EXPECT_NE(test, cbinder_buffer_user(alloc, a),
			cbinder_buffer_user(alloc, b));
	KUNIT_EXPECT_NE(test, cbinder_buffer_user(alloc, b),
			cbinder_buffer_user(alloc, c));
	KUNIT_EXPECT_EQ(test, sizeof(void *), cbinder_buffer_size(alloc, a));
	KUNIT_EXPECT_EQ(test, sizeof(void *), cbinder_buffer_size(alloc, b));
	KUNIT_EXPECT_EQ(test, 8, cbinder_buffer_size(alloc, c));
	KUNIT_EXPECT_EQ(test, FAKE_BASE, cbinder_buffer_user(alloc, a));
	KUNIT_EXPECT_EQ(test, 3 * sizeof(void *), alloc->allocated_bytes);
	/* Nothing to copy into a buffer without contents. */
	KUNIT_EXPECT_EQ(test, -EINVAL,
			cbinder_alloc_copy_to_buffer(alloc, a, 0, "x", 1));
	KUNIT_EXPECT_EQ(test, 0,
			cbinder_alloc_copy_to_buffer(alloc, a, 0, "x", 0));
	cbinder_alloc_free_buf(alloc, b);
	cbinder_alloc_free_buf(alloc, a);
	cbinder_alloc_free_buf(alloc, c);
	KUNIT_EXPECT_TRUE(test, list_is_singular(&alloc->buffers));
}

static void alloc_test_best_fit(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_buffer *hole[4], *sep[4], *b;
	const size_t sizes[4] = { PAGE_SIZE, 2 * PAGE_SIZE, PAGE_SIZE / 2,
				  PAGE_SIZE / 2 };
	int i;

	/* Holes of 1, 2, 1/2 and 1/2 pages, kept apart by 8-byte buffers. */
	for (i = 0; i < 4; i++) {
		hole[i] = new_buf(test, alloc, sizes[i], false);
		sep[i] = new_buf(test, alloc, 8, false);
	}
	for (i = 0; i < 4; i++)
		cbinder_alloc_free_buf(alloc, hole[i]);

	/* Smallest that fits; of two equal holes, the lower one. */
	b = new_buf(test, alloc, PAGE_SIZE / 4, false);
	KUNIT_EXPECT_EQ(test, b->offset, PAGE_SIZE * 3 + 16);
	cbinder_alloc_free_buf(alloc, b);
	b = new_buf(test, alloc, PAGE_SIZE / 2, false);
	KUNIT_EXPECT_EQ(test, b->offset, PAGE_SIZE * 3 + 16);
	cbinder_alloc_free_buf(alloc, b);
	b = new_buf(test, alloc, PAGE_SIZE, false);
	KUNIT_EXPECT_EQ(test, b->offset, 0);
	cbinder_alloc_free_buf(alloc, b);
	b = new_buf(test, alloc, PAGE_SIZE + 8, false);
	KUNIT_EXPECT_EQ(test, b->offset, PAGE_SIZE + 8);
	cbinder_alloc_free_buf(alloc, b);
	/* Larger than every hole but the tail of the area. */
	b = new_buf(test, alloc, 2 * PAGE_SIZE + 8, false);
	KUNIT_EXPECT_EQ(test, b->offset, 4 * PAGE_SIZE + 32);
	cbinder_alloc_free_buf(alloc, b);

	for (i = 0; i < 4; i++)
		cbinder_alloc_free_buf(alloc, sep[i]);
	KUNIT_EXPECT_TRUE(test, list_is_singular(&alloc->buffers));
}

static void alloc_test_prepare_to_free(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_buffer *a, *b;
	unsigned long ua, ub;

	a = new_buf(test, alloc, 64, false);
	b = new_buf(test, alloc, 64, false);
	ua = cbinder_buffer_user(alloc, a);
	ub = cbinder_buffer_user(alloc, b);

	/* Nothing starts there. */
	KUNIT_EXPECT_EQ(test, -ENOENT,
			PTR_ERR(cbinder_alloc_prepare_to_free(alloc, 0)));
	KUNIT_EXPECT_EQ(test, -ENOENT,
			PTR_ERR(cbinder_alloc_prepare_to_free(alloc, ua - 8)));
	KUNIT_EXPECT_EQ(test, -ENOENT,
			PTR_ERR(cbinder_alloc_prepare_to_free(alloc, ua + 8)));
	KUNIT_EXPECT_EQ(test, -ENOENT,
			PTR_ERR(cbinder_alloc_prepare_to_free(alloc, ub + 64)));
	KUNIT_EXPECT_EQ(test, -ENOENT,
			PTR_ERR(cbinder_alloc_prepare_to_free(alloc,
							      FAKE_BASE + AREA_SIZE)));
	/* Not delivered yet. */
	KUNIT_EXPECT_EQ(test, -EPERM,
			PTR_ERR(cbinder_alloc_prepare_to_free(alloc, ua)));

	cbinder_alloc_allow_user_free(alloc, a);
	cbinder_alloc_allow_user_free(alloc, b);
	KUNIT_EXPECT_PTR_EQ(test, a, cbinder_alloc_prepare_to_free(alloc, ua));
	/* A second BC_FREE_BUFFER racing with the free finds nothing. */
	KUNIT_EXPECT_EQ(test, -EPERM,
			PTR_ERR(cbinder_alloc_prepare_to_free(alloc, ua)));
	cbinder_alloc_free_buf(alloc, a);
	KUNIT_EXPECT_EQ(test, -ENOENT,
			PTR_ERR(cbinder_alloc_prepare_to_free(alloc, ua)));

	KUNIT_EXPECT_PTR_EQ(test, b, cbinder_alloc_prepare_to_free(alloc, ub));
	cbinder_alloc_free_buf(alloc, b);
	KUNIT_EXPECT_EQ(test, -ENOENT,
			PTR_ERR(cbinder_alloc_prepare_to_free(alloc, ub)));
	KUNIT_EXPECT_EQ(test, 0, alloc->allocated_bytes);
}

static void alloc_test_copy(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_buffer *pad, *b;
	u8 in[128], out[128];
	u8 *kaddr;
	int i;

	for (i = 0; i < sizeof(in); i++)
		in[i] = i + 1;
	/* b starts 16 bytes before a page end: data 100, offsets 16, extra 3. */
	pad = new_buf(test, alloc, PAGE_SIZE - 16, false);
	b = cbinder_alloc_new_buf(alloc, 100, 16, 3, false);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b);
	KUNIT_EXPECT_EQ(test, 104 + 16 + 8, cbinder_buffer_size(alloc, b));

	KUNIT_EXPECT_EQ(test, 0,
			cbinder_alloc_copy_to_buffer(alloc, b, 0, in, 128));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			cbinder_alloc_copy_to_buffer(alloc, b, 1, in, 128));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			cbinder_alloc_copy_to_buffer(alloc, b, 128, in, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			cbinder_alloc_copy_to_buffer(alloc, b, SIZE_MAX, in, 2));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			cbinder_alloc_copy_from_buffer(alloc, out, b, 2,
						       SIZE_MAX));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			cbinder_alloc_copy_from_buffer(alloc, out, b, 127, 2));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			cbinder_alloc_copy_from_user(alloc, b, 120, NULL, 9));

	/* The bytes are where the user sees them, on both pages. */
	kaddr = kmap_local_page(alloc->pages[0]->page);
	KUNIT_EXPECT_EQ(test, 0, memcmp(kaddr + PAGE_SIZE - 16, in, 16));
	kunmap_local(kaddr);
	kaddr = kmap_local_page(alloc->pages[1]->page);
	KUNIT_EXPECT_EQ(test, 0, memcmp(kaddr, in + 16, 112));
	kunmap_local(kaddr);

	memset(out, 0, sizeof(out));
	KUNIT_EXPECT_EQ(test, 0,
			cbinder_alloc_copy_from_buffer(alloc, out, b, 0, 128));
	KUNIT_EXPECT_EQ(test, 0, memcmp(in, out, 128));
	memset(out, 0, sizeof(out));
	KUNIT_EXPECT_EQ(test, 0,
			cbinder_alloc_copy_from_buffer(alloc, out, b, 10, 20));
	KUNIT_EXPECT_EQ(test, 0, memcmp(in + 10, out, 20));

	cbinder_alloc_free_buf(alloc, b);
	cbinder_alloc_free_buf(alloc, pad);
}

static void alloc_test_clear_on_free(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_buffer *pad, *b;
	u8 in[64], out[64], zero[64] = { };
	size_t offset;

	memset(in, 0xa5, sizeof(in));
	pad = new_buf(test, alloc, PAGE_SIZE - 24, false);

	/* Without TF_CLEAR_BUF the next buffer there sees the old bytes. */
	b = new_buf(test, alloc, sizeof(in), false);
	offset = b->offset;
	KUNIT_EXPECT_EQ(test, 0, cbinder_alloc_copy_to_buffer(alloc, b, 0, in,
							      sizeof(in)));
	cbinder_alloc_free_buf(alloc, b);
	b = new_buf(test, alloc, sizeof(in), false);
	KUNIT_EXPECT_EQ(test, offset, b->offset);
	KUNIT_EXPECT_EQ(test, 0, cbinder_alloc_copy_from_buffer(alloc, out, b,
								0, sizeof(out)));
	KUNIT_EXPECT_EQ(test, 0, memcmp(in, out, sizeof(in)));

	/* With it, they are gone, on both pages the buffer spans. */
	b->clear_on_free = 1;
	cbinder_alloc_free_buf(alloc, b);
	b = new_buf(test, alloc, sizeof(in), false);
	KUNIT_EXPECT_EQ(test, offset, b->offset);
	KUNIT_EXPECT_EQ(test, 0, cbinder_alloc_copy_from_buffer(alloc, out, b,
								0, sizeof(out)));
	KUNIT_EXPECT_EQ(test, 0, memcmp(zero, out, sizeof(out)));
	cbinder_alloc_free_buf(alloc, b);
	cbinder_alloc_free_buf(alloc, pad);
}

static void alloc_test_setup_once(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_alloc *other = alloc_test_new(test, 0);
	struct cbinder_buffer *b;

	KUNIT_EXPECT_EQ(test, -EBUSY,
			cbinder_alloc_setup(alloc, FAKE_BASE, AREA_SIZE));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			cbinder_alloc_setup(other, FAKE_BASE + 1, AREA_SIZE));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			cbinder_alloc_setup(other, FAKE_BASE, PAGE_SIZE - 1));
	KUNIT_EXPECT_EQ(test, -ESRCH,
			PTR_ERR(cbinder_alloc_new_buf(other, 8, 0, 0, false)));
	/* Only the first CBINDER_ALLOC_MAX_SIZE bytes are used. */
	KUNIT_EXPECT_EQ(test, 0, cbinder_alloc_setup(other, FAKE_BASE,
						     2 * CBINDER_ALLOC_MAX_SIZE));
	KUNIT_EXPECT_EQ(test, CBINDER_ALLOC_MAX_SIZE, other->size);
	KUNIT_EXPECT_EQ(test, CBINDER_ALLOC_MAX_SIZE / 2,
			other->free_async_space);

	/* After close: no new buffer, old ones still free, no new mapping. */
	b = new_buf(test, alloc, 100, false);
	cbinder_alloc_vma_close(alloc);
	KUNIT_EXPECT_EQ(test, -ESRCH,
			PTR_ERR(cbinder_alloc_new_buf(alloc, 8, 0, 0, false)));
	KUNIT_EXPECT_EQ(test, -EBUSY,
			cbinder_alloc_setup(alloc, FAKE_BASE, AREA_SIZE));
	cbinder_alloc_free_buf(alloc, b);
	KUNIT_EXPECT_TRUE(test, list_is_singular(&alloc->buffers));
	KUNIT_EXPECT_EQ(test, 1, cbinder_alloc_shrink(alloc));
}

static void alloc_test_release(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct cbinder_buffer *b[4];
	int i;

	for (i = 0; i < 4; i++)
		b[i] = new_buf(test, alloc, PAGE_SIZE + 8 * i, i & 1);
	/* Some pages on the LRU, some used, some never populated. */
	cbinder_alloc_free_buf(alloc, b[1]);
	cbinder_alloc_vma_close(alloc);
	cbinder_alloc_release(alloc);
	/* kmemleak checks the buffers and pages really went. */
	KUNIT_EXPECT_NULL(test, alloc->pages);
	KUNIT_EXPECT_EQ(test, 0, alloc->pages_populated);
	KUNIT_EXPECT_TRUE(test, list_empty(&alloc->buffers));
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_ROOT(&alloc->allocated_buffers));
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_ROOT(&alloc->free_buffers));
	KUNIT_EXPECT_EQ(test, -ESRCH,
			PTR_ERR(cbinder_alloc_new_buf(alloc, 8, 0, 0, false)));
	KUNIT_EXPECT_EQ(test, 0, cbinder_alloc_shrink(alloc));
}

/*
 * A page used again while on the LRU (its users went from 0 back to 1)
 * stays there (see the top of alloc.c). Released with that buffer still
 * allocated, the area must take the page off the LRU before freeing it:
 * the shrinker's walk would otherwise meet a freed descriptor (KASAN).
 */
static void alloc_test_release_used_on_lru(struct kunit *test)
{
	struct cbinder_alloc *alloc = test->priv;
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	struct cbinder_buffer *a, *b;

	a = new_buf(test, alloc, 64, false);
	KUNIT_ASSERT_EQ(test, 0, a->offset);
	cbinder_alloc_free_buf(alloc, a);
	b = new_buf(test, alloc, 64, false);
	KUNIT_ASSERT_EQ(test, 0, b->offset);
	KUNIT_ASSERT_NOT_NULL(test, alloc->pages[0]);
	KUNIT_ASSERT_EQ(test, 1, alloc->pages[0]->users);
	KUNIT_ASSERT_FALSE(test, list_empty(&alloc->pages[0]->lru));
	sc.nid = page_to_nid(virt_to_page(alloc->pages[0]));

	/* b is never freed: the area goes with its page in use. */
	cbinder_alloc_release(alloc);
	KUNIT_EXPECT_NULL(test, alloc->pages);
	KUNIT_EXPECT_EQ(test, 0, alloc->pages_populated);
	/* The whole list of that node: a stale entry would be walked. */
	sc.nr_to_scan = ULONG_MAX;
	cbinder_shrink_scan(NULL, &sc);
}

/* A stand-in for the driver's file: what its mmap and vm_ops do. */
static vm_fault_t fake_fault(struct vm_fault *vmf)
{
	return cbinder_alloc_fault(vmf->vma->vm_file->private_data, vmf);
}

static void fake_close(struct vm_area_struct *vma)
{
	cbinder_alloc_vma_close(vma->vm_file->private_data);
}

static const struct vm_operations_struct fake_vm_ops = {
	.fault = fake_fault,
	.close = fake_close,
};

static int fake_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct cbinder_alloc *alloc = file->private_data;
	int ret;

	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	ret = cbinder_alloc_mmap(alloc, vma);
	if (ret)
		return ret;
	vm_flags_mod(vma, VM_DONTCOPY | VM_MIXEDMAP, VM_MAYWRITE);
	vma->vm_ops = &fake_vm_ops;
	vma->vm_private_data = alloc;
	return 0;
}

static const struct file_operations fake_fops = {
	.owner = THIS_MODULE,
	.mmap = fake_mmap,
};

static bool user_reads(struct kunit *test, unsigned long addr, u8 *out,
		       size_t len)
{
	return !copy_from_user(out, (const void __user *)addr, len);
}

/*
 * Only EXPECTs between mmap and munmap: the vma must be gone before the
 * case returns, because the thread's mm outlives the case and its close
 * would find @alloc freed.
 */
static void alloc_test_mapped(struct kunit *test)
{
	struct cbinder_alloc *alloc = alloc_test_new(test, 0);
	const size_t len = CBINDER_ALLOC_MAX_SIZE + PAGE_SIZE;
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	struct cbinder_buffer *a, *b, *c;
	unsigned long addr, second;
	u8 *in, *out;
	struct file *file;

	in = kunit_kmalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	out = kunit_kzalloc(test, 2 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, out);
	memset(in, 0x3c, 2 * PAGE_SIZE);
	file = anon_inode_getfile("[cbinder_alloc_test]", &fake_fops, alloc,
				  O_RDONLY);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	alloc->vma_private = alloc;

	addr = kunit_vm_mmap(test, file, 0, len, PROT_READ, MAP_SHARED, 0);
	fput(file);
	KUNIT_ASSERT_TRUE(test, addr && !IS_ERR_VALUE(addr));

	KUNIT_EXPECT_EQ(test, addr, alloc->user_base);
	KUNIT_EXPECT_EQ(test, CBINDER_ALLOC_MAX_SIZE, alloc->size);
	KUNIT_EXPECT_PTR_EQ(test, current->mm, alloc->mm);
	second = kunit_vm_mmap(test, file, 0, PAGE_SIZE, PROT_READ,
			       MAP_SHARED, 0);
	KUNIT_EXPECT_EQ(test, (unsigned long)-EBUSY, second);

	/* Nothing populated yet, nor past the used part: SIGBUS. */
	KUNIT_EXPECT_FALSE(test, user_reads(test, addr, out, 1));
	KUNIT_EXPECT_FALSE(test, user_reads(test, addr + alloc->size, out, 1));

	a = cbinder_alloc_new_buf(alloc, 2 * PAGE_SIZE, 0, 0, false);
	b = cbinder_alloc_new_buf(alloc, PAGE_SIZE, 0, 0, false);
	KUNIT_EXPECT_FALSE(test, IS_ERR(a) || IS_ERR(b));
	if (!IS_ERR(a) && !IS_ERR(b)) {
		KUNIT_EXPECT_EQ(test, 0,
				cbinder_alloc_copy_to_buffer(alloc, a, 0, in,
							     2 * PAGE_SIZE));
		KUNIT_EXPECT_TRUE(test, user_reads(test, addr, out,
						   2 * PAGE_SIZE));
		KUNIT_EXPECT_EQ(test, 0, memcmp(in, out, 2 * PAGE_SIZE));

		/* Freed but on the LRU: still mapped, then unmapped. */
		cbinder_alloc_free_buf(alloc, a);
		KUNIT_EXPECT_TRUE(test, user_reads(test, addr, out, 1));

		/*
		 * Page 0 used again stays on the LRU; the shrinker takes it
		 * off without freeing it and frees page 1; its last user
		 * puts it back.
		 */
		c = cbinder_alloc_new_buf(alloc, PAGE_SIZE, 0, 0, false);
		KUNIT_EXPECT_FALSE(test, IS_ERR(c));
		if (!IS_ERR(c) && !c->offset && alloc->pages[0]) {
			KUNIT_EXPECT_FALSE(test,
					   list_empty(&alloc->pages[0]->lru));
			sc.nid = page_to_nid(virt_to_page(alloc->pages[0]));
			sc.nr_to_scan = 1024;
			KUNIT_EXPECT_GE(test, cbinder_shrink_scan(NULL, &sc),
					1);
			KUNIT_EXPECT_NOT_NULL(test, alloc->pages[0]);
			KUNIT_EXPECT_NULL(test, alloc->pages[1]);
			KUNIT_EXPECT_TRUE(test,
					  list_empty(&alloc->pages[0]->lru));
			KUNIT_EXPECT_TRUE(test, user_reads(test, addr, out, 1));
			KUNIT_EXPECT_EQ(test, 0, memcmp(in, out, 1));
			cbinder_alloc_free_buf(alloc, c);
			KUNIT_EXPECT_FALSE(test,
					   list_empty(&alloc->pages[0]->lru));
			KUNIT_EXPECT_EQ(test, 1, cbinder_alloc_shrink(alloc));
		} else {
			KUNIT_FAIL(test, "c not at offset 0 over page 0");
			if (!IS_ERR(c))
				cbinder_alloc_free_buf(alloc, c);
			KUNIT_EXPECT_EQ(test, 2, cbinder_alloc_shrink(alloc));
		}
		KUNIT_EXPECT_FALSE(test, user_reads(test, addr, out, 1));
		KUNIT_EXPECT_FALSE(test, user_reads(test, addr + PAGE_SIZE,
						    out, 1));
		/* The page b uses stays. */
		KUNIT_EXPECT_TRUE(test, user_reads(test, addr + 2 * PAGE_SIZE,
						   out, 1));

		/* Now the shrinker's own path, with its trylocks. */
		cbinder_alloc_free_buf(alloc, b);
		KUNIT_EXPECT_TRUE(test, user_reads(test, addr + 2 * PAGE_SIZE,
						   out, 1));
		if (alloc->pages[2]) {
			sc.nid = page_to_nid(virt_to_page(alloc->pages[2]));
			sc.nr_to_scan = 1024;
			KUNIT_EXPECT_GE(test, cbinder_shrink_scan(NULL, &sc),
					1);
		}
		KUNIT_EXPECT_NULL(test, alloc->pages[2]);
		KUNIT_EXPECT_EQ(test, 0, alloc->pages_populated);
		KUNIT_EXPECT_FALSE(test, user_reads(test, addr + 2 * PAGE_SIZE,
						    out, 1));
	}

	vm_munmap(addr, len);
	KUNIT_EXPECT_FALSE(test, alloc->mapped);
	KUNIT_EXPECT_EQ(test, -ESRCH,
			PTR_ERR(cbinder_alloc_new_buf(alloc, 8, 0, 0, false)));
}

static struct kunit_case alloc_test_cases[] = {
	KUNIT_CASE(alloc_test_exhaustive),
	KUNIT_CASE(alloc_test_size_overflow),
	KUNIT_CASE(alloc_test_too_big),
	KUNIT_CASE(alloc_test_async_limit),
	KUNIT_CASE(alloc_test_spam_by_size),
	KUNIT_CASE(alloc_test_spam_size_boundary),
	KUNIT_CASE(alloc_test_spam_by_count),
	KUNIT_CASE(alloc_test_zero_size),
	KUNIT_CASE(alloc_test_best_fit),
	KUNIT_CASE(alloc_test_prepare_to_free),
	KUNIT_CASE(alloc_test_copy),
	KUNIT_CASE(alloc_test_clear_on_free),
	KUNIT_CASE(alloc_test_setup_once),
	KUNIT_CASE(alloc_test_release),
	KUNIT_CASE(alloc_test_release_used_on_lru),
	KUNIT_CASE(alloc_test_mapped),
	{}
};

static struct kunit_suite alloc_test_suite = {
	.name = "cask_binder_alloc",
	.init = alloc_test_init,
	.test_cases = alloc_test_cases,
};

kunit_test_suite(alloc_test_suite);

MODULE_DESCRIPTION("KUnit tests for cask_binder's allocator");
MODULE_LICENSE("GPL");
