// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_logger.
 *
 * cask_logger_ring: framing, wrap-around, overwriting the oldest entries,
 * lapped readers, flush and resize. A 256-byte ring makes every boundary
 * reachable with a few small entries.
 *
 * cask_logger_reader: what readers see in the rings. The merge order of a
 * merged reader, its cursors kept in step with the cells, the position of
 * readers that see only their own uid, the bounded scan and who may clear a
 * ring. The rings here belong to stand-in cells the test owns (reader.c
 * never looks at the cell); one case walks the real cells.
 */
#include <kunit/test.h>
#include <linux/sched/signal.h>
#include <linux/cred.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>
#include <cask/cell.h>

#include "logger.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_IMPORT_NS(CASK);

#define RING_SIZE 256

struct ring_test {
	struct cask_log_ring ring;
	u32 seq;
};

static int ring_test_init(struct kunit *test)
{
	struct ring_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	cask_ring_init(&t->ring, RING_SIZE);
	t->ring.buf = kunit_kzalloc(test, RING_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->ring.buf);
	test->priv = t;
	return 0;
}

/* Append an entry of @len payload bytes: a sequence number, then a pattern. */
static u32 ring_put(struct kunit *test, u16 len)
{
	struct ring_test *t = test->priv;
	struct cask_log_hdr hdr = { .len = len, .pid = 1, .kuid = 0 };
	u8 payload[128];
	u32 seq = t->seq++;
	int i;

	KUNIT_ASSERT_GE(test, len, (u16)sizeof(seq));
	KUNIT_ASSERT_LE(test, len, (u16)sizeof(payload));
	memcpy(payload, &seq, sizeof(seq));
	for (i = sizeof(seq); i < len; i++)
		payload[i] = seq + i;
	hdr.tid = seq;
	spin_lock(&t->ring.lock);
	cask_ring_write_locked(&t->ring, &hdr, payload);
	spin_unlock(&t->ring.lock);
	return seq;
}

/*
 * Read the entry at *@off and check it is whole: its header's tid and
 * payload's first word are its sequence number, the rest the pattern.
 * Return: the sequence number; *@off moves past the entry.
 */
static u32 ring_get(struct kunit *test, u64 *off)
{
	struct ring_test *t = test->priv;
	struct cask_log_hdr hdr;
	u8 payload[128];
	u32 seq;
	int i;

	spin_lock(&t->ring.lock);
	cask_ring_copy_out(&t->ring, *off, &hdr, CASK_LOG_HDR_LEN);
	if (hdr.len <= sizeof(payload))
		cask_ring_copy_out(&t->ring, *off + CASK_LOG_HDR_LEN, payload, hdr.len);
	spin_unlock(&t->ring.lock);
	KUNIT_ASSERT_LE(test, hdr.len, (u16)sizeof(payload));
	memcpy(&seq, payload, sizeof(seq));
	KUNIT_EXPECT_EQ(test, (u32)hdr.tid, seq);
	for (i = sizeof(seq); i < hdr.len; i++)
		KUNIT_EXPECT_EQ(test, payload[i], (u8)(seq + i));
	*off += CASK_LOG_HDR_LEN + hdr.len;
	return seq;
}

/* Walk head to tail: entries are consecutive and end exactly at tail. */
static void ring_check_framing(struct kunit *test, u32 first, u32 last)
{
	struct ring_test *t = test->priv;
	u64 off = t->ring.head;
	u32 want = first;

	KUNIT_EXPECT_LE(test, t->ring.tail - t->ring.head, (u64)t->ring.size);
	while (off < t->ring.tail)
		KUNIT_EXPECT_EQ(test, ring_get(test, &off), want++);
	KUNIT_EXPECT_EQ(test, off, t->ring.tail);
	KUNIT_EXPECT_EQ(test, want, last + 1);
}

static void ring_test_write_read(struct kunit *test)
{
	struct ring_test *t = test->priv;
	u64 off = 0;

	ring_put(test, 10);
	ring_put(test, 20);
	KUNIT_EXPECT_EQ(test, t->ring.head, 0ULL);
	KUNIT_EXPECT_EQ(test, t->ring.tail, (u64)(2 * CASK_LOG_HDR_LEN + 30));
	KUNIT_EXPECT_EQ(test, t->ring.bytes_written, 30ULL);
	KUNIT_EXPECT_EQ(test, t->ring.dropped, 0ULL);
	KUNIT_EXPECT_EQ(test, ring_get(test, &off), 0U);
	KUNIT_EXPECT_EQ(test, ring_get(test, &off), 1U);
	KUNIT_EXPECT_EQ(test, off, t->ring.tail);
}

/* Entries whose payload, then whose header, straddle the end. */
static void ring_test_wrap(struct kunit *test)
{
	struct ring_test *t = test->priv;
	int i;

	/* 3 x 72 = 216; the next 72-byte entry runs from 216 to 288. */
	for (i = 0; i < 3; i++)
		ring_put(test, 40);
	ring_put(test, 40);
	KUNIT_EXPECT_EQ(test, t->ring.dropped, 1ULL);
	ring_check_framing(test, 1, 3);
	/* Header from 248 to 280: split after 8 bytes. */
	t->seq = 10;
	cask_ring_init(&t->ring, RING_SIZE);
	t->ring.buf = kunit_kzalloc(test, RING_SIZE, GFP_KERNEL);
	ring_put(test, 100);
	ring_put(test, 84);
	ring_put(test, 40);
	KUNIT_EXPECT_EQ(test, t->ring.tail, 132ULL + 116 + 72);
	ring_check_framing(test, 11, 12);
}

/* An entry that ends exactly at the end of the buffer, and the next one. */
static void ring_test_exact_end(struct kunit *test)
{
	struct ring_test *t = test->priv;

	ring_put(test, 96);	/* 0..128 */
	ring_put(test, 96);	/* 128..256: ends exactly at the end */
	KUNIT_EXPECT_EQ(test, t->ring.tail, (u64)RING_SIZE);
	KUNIT_EXPECT_EQ(test, t->ring.dropped, 0ULL);
	ring_check_framing(test, 0, 1);
	ring_put(test, 4);	/* needs 36 bytes: drops entry 0 */
	KUNIT_EXPECT_EQ(test, t->ring.dropped, 1ULL);
	KUNIT_EXPECT_EQ(test, t->ring.head, 128ULL);
	ring_check_framing(test, 1, 2);
}

/* An entry as large as the ring drops everything before it. */
static void ring_test_whole_ring(struct kunit *test)
{
	struct ring_test *t = test->priv;
	struct cask_log_hdr hdr = { .len = RING_SIZE - CASK_LOG_HDR_LEN, .tid = 99 };
	u8 *payload = kunit_kzalloc(test, hdr.len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, payload);
	ring_put(test, 10);
	ring_put(test, 10);
	spin_lock(&t->ring.lock);
	cask_ring_write_locked(&t->ring, &hdr, payload);
	spin_unlock(&t->ring.lock);
	KUNIT_EXPECT_EQ(test, t->ring.dropped, 2ULL);
	KUNIT_EXPECT_EQ(test, t->ring.tail - t->ring.head, (u64)RING_SIZE);
}

/* Many laps: the ring keeps whole entries, newest last, oldest dropped. */
static void ring_test_overwrite(struct kunit *test)
{
	struct ring_test *t = test->priv;
	u64 off;
	u32 first, last = 0;
	int i;

	for (i = 0; i < 1000; i++)
		last = ring_put(test, 4 + i % 61);
	off = t->ring.head;
	first = ring_get(test, &off);
	KUNIT_EXPECT_EQ(test, t->ring.dropped, (u64)first);
	ring_check_framing(test, first, last);
	/* Only what a new entry needed was dropped: at most two entries' worth is free. */
	KUNIT_EXPECT_GT(test, t->ring.tail - t->ring.head,
			(u64)RING_SIZE - 2 * (CASK_LOG_HDR_LEN + 64));
}

/* A reader whose entry was overwritten continues at the oldest entry. */
static void ring_test_lapped_reader(struct kunit *test)
{
	struct ring_test *t = test->priv;
	u64 slow = 0, fast;
	int i;

	ring_put(test, 20);
	ring_put(test, 20);
	fast = t->ring.tail;
	spin_lock(&t->ring.lock);
	KUNIT_EXPECT_EQ(test, cask_ring_catch_up_locked(&t->ring, slow), 0ULL);
	spin_unlock(&t->ring.lock);
	for (i = 0; i < 10; i++)
		ring_put(test, 20);
	spin_lock(&t->ring.lock);
	slow = cask_ring_catch_up_locked(&t->ring, slow);
	KUNIT_EXPECT_EQ(test, slow, t->ring.head);
	/* A reader still inside the ring is left where it is. */
	fast = cask_ring_catch_up_locked(&t->ring, t->ring.tail - 52);
	KUNIT_EXPECT_EQ(test, fast, t->ring.tail - 52);
	spin_unlock(&t->ring.lock);
	KUNIT_EXPECT_EQ(test, ring_get(test, &slow), (u32)t->ring.dropped);
	KUNIT_EXPECT_EQ(test, ring_get(test, &fast), 11U);
}

static void ring_test_flush_resize(struct kunit *test)
{
	struct ring_test *t = test->priv;
	char *old, *buf;
	u64 off = 0, tail;

	ring_put(test, 10);
	ring_put(test, 10);
	spin_lock(&t->ring.lock);
	cask_ring_flush_locked(&t->ring);
	KUNIT_EXPECT_EQ(test, t->ring.head, t->ring.tail);
	off = cask_ring_catch_up_locked(&t->ring, off);
	spin_unlock(&t->ring.lock);
	KUNIT_EXPECT_EQ(test, off, t->ring.tail);
	ring_put(test, 10);
	KUNIT_EXPECT_EQ(test, ring_get(test, &off), 2U);

	buf = kunit_kzalloc(test, 2 * RING_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	tail = t->ring.tail;
	spin_lock(&t->ring.lock);
	old = cask_ring_replace_buf_locked(&t->ring, buf, 2 * RING_SIZE);
	spin_unlock(&t->ring.lock);
	KUNIT_EXPECT_NOT_NULL(test, old);
	/* Empty, offsets carry on. */
	KUNIT_EXPECT_EQ(test, t->ring.head, tail);
	KUNIT_EXPECT_EQ(test, t->ring.tail, tail);
	KUNIT_EXPECT_EQ(test, t->ring.size, 2U * RING_SIZE);
	ring_put(test, 100);
	ring_put(test, 100);
	ring_put(test, 100);
	KUNIT_EXPECT_EQ(test, t->ring.dropped, 0ULL);
	ring_check_framing(test, 3, 5);
}

/* --- readers -------------------------------------------------------- */

#define READER_RING_SIZE	CASK_LOG_SIZE_MIN
#define UID_OTHER		1000
#define UID_SELF		2000

/* A stand-in cell's logger state, with a buffer for the main ring. */
static struct cask_logger_cell *reader_lc(struct kunit *test)
{
	struct cask_logger_cell *lc = kunit_kzalloc(test, sizeof(*lc), GFP_KERNEL);
	struct cask_log_ring *ring;

	KUNIT_ASSERT_NOT_NULL(test, lc);
	ring = &lc->rings[CASK_LOG_MAIN];
	cask_ring_init(ring, READER_RING_SIZE);
	ring->buf = kunit_kzalloc(test, READER_RING_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ring->buf);
	return lc;
}

/* What logger.c does at the end of a call, without cells to put. */
static void reader_uncursor(struct cask_log_reader *r)
{
	struct cask_log_cursor *cur;

	list_for_each_entry(cur, &r->cursors, node)
		cur->lc = NULL;
}

static void reader_free_cursors(void *r)
{
	reader_uncursor(r);
	cask_log_cursors_free(&((struct cask_log_reader *)r)->cursors);
}

/* A reader of main; only @uid's entries unless it sees all. */
static struct cask_log_reader *reader_new(struct kunit *test, bool sees_all,
					  u32 uid)
{
	struct cask_log_reader *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	mutex_init(&r->lock);
	INIT_LIST_HEAD(&r->cursors);
	r->log = CASK_LOG_MAIN;
	r->sees_all = sees_all;
	r->euid = KUIDT_INIT(uid);
	/* Cursors left by a failed assertion are freed all the same. */
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, reader_free_cursors, r));
	return r;
}

/* Append an entry of @uid at @sec.@nsec whose payload is @tag. */
static void reader_put(struct kunit *test, struct cask_logger_cell *lc,
		       s32 sec, s32 nsec, u32 uid, u32 tag)
{
	struct cask_log_hdr hdr = {
		.len = sizeof(tag), .sec = sec, .nsec = nsec, .kuid = uid,
	};
	struct cask_log_ring *ring = &lc->rings[CASK_LOG_MAIN];

	spin_lock(&ring->lock);
	cask_ring_write_locked(ring, &hdr, &tag);
	spin_unlock(&ring->lock);
}

/* The tag of the entry at @off. */
static u32 reader_tag(struct cask_logger_cell *lc, u64 off)
{
	struct cask_log_ring *ring = &lc->rings[CASK_LOG_MAIN];
	u32 tag;

	spin_lock(&ring->lock);
	cask_ring_copy_out(ring, off + CASK_LOG_HDR_LEN, &tag, sizeof(tag));
	spin_unlock(&ring->lock);
	return tag;
}

#define ENTRY_LEN	(CASK_LOG_HDR_LEN + sizeof(u32))

/* Give @r cursors for cells @ids, each with its stand-in state @lcs. */
static void reader_cursors(struct kunit *test, struct cask_log_reader *r,
			   const u64 *ids, struct cask_logger_cell **lcs, int n)
{
	struct cask_log_cursor *cur;
	struct cask_log_sync s;
	int i;

	cask_log_sync_start(&s, &r->cursors);
	for (i = 0; i < n; i++) {
		cur = cask_log_sync_cell(&s, ids[i], true);
		KUNIT_ASSERT_NOT_NULL(test, cur);
		cur->lc = lcs[i];
	}
	KUNIT_ASSERT_EQ(test, 0, cask_log_sync_end(&s));
}

static void reader_test_earlier(struct kunit *test)
{
	struct cask_log_hdr a = { .sec = 10, .nsec = 999999999 };
	struct cask_log_hdr b = { .sec = 11, .nsec = 0 };
	struct cask_log_hdr c = { .sec = 11, .nsec = 1 };

	/* Seconds first, then nanoseconds, then the older cell. */
	KUNIT_EXPECT_TRUE(test, cask_log_earlier(&a, 9, &b, 1));
	KUNIT_EXPECT_FALSE(test, cask_log_earlier(&b, 1, &a, 9));
	KUNIT_EXPECT_TRUE(test, cask_log_earlier(&b, 9, &c, 1));
	KUNIT_EXPECT_FALSE(test, cask_log_earlier(&c, 1, &b, 9));
	KUNIT_EXPECT_TRUE(test, cask_log_earlier(&b, 1, &b, 2));
	KUNIT_EXPECT_FALSE(test, cask_log_earlier(&b, 2, &b, 1));
	/* A strict order: an entry is not before itself. */
	KUNIT_EXPECT_FALSE(test, cask_log_earlier(&b, 1, &b, 1));
}

/* Earliest write first over every cell; at the same time, the older cell. */
static void reader_test_merge_order(struct kunit *test)
{
	static const u64 ids[] = { 3, 5, 9 };
	static const u32 want[] = { 1, 2, 3, 4, 5, 6, 7 };
	struct cask_log_reader *r = reader_new(test, true, 0);
	struct cask_logger_cell *lcs[3];
	struct cask_log_cursor *cur;
	struct cask_log_hdr hdr;
	int i;

	for (i = 0; i < 3; i++)
		lcs[i] = reader_lc(test);
	/* Tags give the expected order; cells written out of order. */
	reader_put(test, lcs[1], 10, 0, 0, 1);		/* cell 5 */
	reader_put(test, lcs[1], 12, 0, 0, 6);
	reader_put(test, lcs[0], 11, 0, 0, 3);		/* cell 3 */
	reader_put(test, lcs[0], 12, 0, 0, 5);		/* tie: cell 3 first */
	reader_put(test, lcs[0], 13, 0, 0, 7);
	reader_put(test, lcs[2], 10, 0, 0, 2);		/* cell 9, tie with 5 */
	reader_put(test, lcs[2], 11, 5, 0, 4);		/* nsec after cell 3's */
	reader_cursors(test, r, ids, lcs, 3);

	mutex_lock(&r->lock);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		cur = cask_log_merged_next_rlocked(r, &hdr);
		if (!cur)
			break;
		KUNIT_EXPECT_EQ_MSG(test, want[i], reader_tag(cur->lc, cur->off),
				    "entry %d", i);
		cur->off += CASK_LOG_HDR_LEN + hdr.len;
	}
	KUNIT_EXPECT_EQ(test, i, (int)ARRAY_SIZE(want));
	KUNIT_EXPECT_NULL(test, cask_log_merged_next_rlocked(r, &hdr));
	mutex_unlock(&r->lock);
	reader_uncursor(r);
}

/* The ids of @r's cursors, in list order; how many in *@n. */
static void reader_ids(struct cask_log_reader *r, u64 *ids, int max, int *n)
{
	struct cask_log_cursor *cur;

	*n = 0;
	list_for_each_entry(cur, &r->cursors, node)
		if (*n < max)
			ids[(*n)++] = cur->id;
}

static struct cask_log_cursor *reader_find(struct cask_log_reader *r, u64 id)
{
	struct cask_log_cursor *cur;

	list_for_each_entry(cur, &r->cursors, node)
		if (cur->id == id)
			return cur;
	return NULL;
}

/* One walk: cells @ids, @linked[i] for each. */
static void reader_sync(struct kunit *test, struct cask_log_reader *r,
			const u64 *ids, const bool *linked, int n)
{
	struct cask_log_sync s;
	int i;

	mutex_lock(&r->lock);
	cask_log_sync_start(&s, &r->cursors);
	for (i = 0; i < n; i++)
		cask_log_sync_cell(&s, ids[i], linked[i]);
	KUNIT_EXPECT_EQ(test, 0, cask_log_sync_end(&s));
	mutex_unlock(&r->lock);
}

/*
 * New linked cells get a cursor at the oldest entry, in id order; cursors of
 * released cells (absent from the walk) go; a cell already known keeps its
 * cursor and position, linked or not.
 */
static void reader_test_cursor_sync(struct kunit *test)
{
	static const u64 ids1[] = { 1, 4, 7 };
	static const bool linked1[] = { true, true, false };
	static const u64 ids2[] = { 1, 2, 4, 6, 8 };
	static const bool linked2[] = { true, true, false, false, true };
	static const u64 ids3[] = { 2, 8 };
	static const bool linked3[] = { true, true };
	struct cask_log_reader *r = reader_new(test, true, 0);
	struct cask_log_cursor *c1, *c4;
	u64 got[8];
	int n;

	reader_sync(test, r, ids1, linked1, 3);
	reader_ids(r, got, ARRAY_SIZE(got), &n);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, got[0], 1ULL);
	KUNIT_EXPECT_EQ(test, got[1], 4ULL);
	c1 = reader_find(r, 1);
	c4 = reader_find(r, 4);
	KUNIT_ASSERT_NOT_NULL(test, c1);
	KUNIT_ASSERT_NOT_NULL(test, c4);
	KUNIT_EXPECT_EQ(test, c1->off, 0ULL);
	KUNIT_EXPECT_NULL(test, c1->lc);
	c1->off = 100;
	c4->off = 400;

	/* 2 and 8 are new (8 after 4, 2 between 1 and 4); 7 is gone. */
	reader_sync(test, r, ids2, linked2, 5);
	reader_ids(r, got, ARRAY_SIZE(got), &n);
	KUNIT_ASSERT_EQ(test, n, 4);
	KUNIT_EXPECT_EQ(test, got[0], 1ULL);
	KUNIT_EXPECT_EQ(test, got[1], 2ULL);
	KUNIT_EXPECT_EQ(test, got[2], 4ULL);
	KUNIT_EXPECT_EQ(test, got[3], 8ULL);
	KUNIT_EXPECT_PTR_EQ(test, reader_find(r, 1), c1);
	KUNIT_EXPECT_PTR_EQ(test, reader_find(r, 4), c4);
	KUNIT_EXPECT_EQ(test, c1->off, 100ULL);
	KUNIT_EXPECT_EQ(test, c4->off, 400ULL);
	KUNIT_EXPECT_EQ(test, reader_find(r, 2)->off, 0ULL);

	/* 1 and 4 released: their cursors are freed, KASAN checks how. */
	reader_sync(test, r, ids3, linked3, 2);
	reader_ids(r, got, ARRAY_SIZE(got), &n);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, got[0], 2ULL);
	KUNIT_EXPECT_EQ(test, got[1], 8ULL);

	/* Every cell gone. */
	reader_sync(test, r, NULL, NULL, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&r->cursors));
}

static void reader_put_cell(void *cell)
{
	cask_cell_put(cell);
}

/*
 * The real walk: the host cell gets a cursor, cursors are in ascending id
 * order and hold their cell during the call, and none is held after it.
 */
static void reader_test_cursors_real_cells(struct kunit *test)
{
	struct cask_log_reader *r = reader_new(test, true, 0);
	struct cask_log_cursor *cur;
	struct cask_cell *host;
	bool found = false;
	u64 last = 0;
	int ret, i;

	host = cask_cell_get_host();
	if (!host)
		kunit_skip(test, "cask_core has no host cell");
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, reader_put_cell, host));

	/* Twice: the second walk finds the cursors of the first. */
	for (i = 0; i < 2; i++) {
		found = false;
		mutex_lock(&r->lock);
		ret = cask_log_cursors_get_rlocked(r);
		KUNIT_EXPECT_EQ(test, ret, 0);
		list_for_each_entry(cur, &r->cursors, node) {
			KUNIT_EXPECT_NOT_NULL(test, cur->lc);
			if (cur->lc)
				KUNIT_EXPECT_EQ(test, cur->id, cask_cell_id(cur->lc->cell));
			if (cur != list_first_entry(&r->cursors, typeof(*cur), node))
				KUNIT_EXPECT_GT(test, cur->id, last);
			last = cur->id;
			if (cur->id == cask_cell_id(host))
				found = true;
		}
		cask_log_cursors_put_rlocked(r);
		list_for_each_entry(cur, &r->cursors, node)
			KUNIT_EXPECT_NULL(test, cur->lc);
		mutex_unlock(&r->lock);
		KUNIT_EXPECT_TRUE(test, found);
	}
}

/*
 * A reader of its own uid only: poll() and GET_NEXT_ENTRY_LEN leave it at
 * its next entry, past the others' entries, and at the tail when it has
 * read everything, so that the next call starts there.
 */
static void reader_test_own_uid_position(struct kunit *test)
{
	struct cask_log_reader *r = reader_new(test, false, UID_SELF);
	struct cask_logger_cell *lc = reader_lc(test);
	struct cask_log_ring *ring = &lc->rings[CASK_LOG_MAIN];
	struct cask_log_hdr hdr;
	int i;

	for (i = 0; i < 5; i++)
		reader_put(test, lc, 1, i, UID_OTHER, i);
	reader_put(test, lc, 2, 0, UID_SELF, 5);
	for (i = 6; i < 9; i++)
		reader_put(test, lc, 3, i, UID_OTHER, i);
	r->lc = lc;
	r->rlc = lc;

	mutex_lock(&r->lock);
	KUNIT_EXPECT_TRUE(test, cask_log_peek_rlocked(r, &hdr));
	KUNIT_EXPECT_EQ(test, r->off, 5 * (u64)ENTRY_LEN);
	KUNIT_EXPECT_EQ(test, hdr.kuid, (u32)UID_SELF);
	/* Again: still there, not past it. */
	KUNIT_EXPECT_TRUE(test, cask_log_peek_rlocked(r, &hdr));
	KUNIT_EXPECT_EQ(test, r->off, 5 * (u64)ENTRY_LEN);
	KUNIT_EXPECT_EQ(test, reader_tag(lc, r->off), 5U);

	/* Read it: nothing more for this reader, which stays at the tail. */
	r->off += ENTRY_LEN;
	KUNIT_EXPECT_FALSE(test, cask_log_peek_rlocked(r, &hdr));
	KUNIT_EXPECT_EQ(test, r->off, ring->tail);
	reader_put(test, lc, 4, 0, UID_OTHER, 9);
	KUNIT_EXPECT_FALSE(test, cask_log_peek_rlocked(r, &hdr));
	KUNIT_EXPECT_EQ(test, r->off, ring->tail);
	reader_put(test, lc, 4, 1, UID_SELF, 10);
	KUNIT_EXPECT_TRUE(test, cask_log_peek_rlocked(r, &hdr));
	KUNIT_EXPECT_EQ(test, reader_tag(lc, r->off), 10U);
	mutex_unlock(&r->lock);
}

/* No more than CASK_LOG_SCAN_BATCH entries per hold of the ring's lock. */
static void reader_test_bounded_scan(struct kunit *test)
{
	struct cask_log_reader *own = reader_new(test, false, UID_SELF);
	struct cask_log_reader *all = reader_new(test, true, 0);
	struct cask_logger_cell *lc = reader_lc(test);
	struct cask_log_ring *ring = &lc->rings[CASK_LOG_MAIN];
	const int skip = 2 * CASK_LOG_SCAN_BATCH + 10;
	enum cask_log_scan res;
	struct cask_log_hdr hdr;
	u64 off = 0;
	int i;

	KUNIT_ASSERT_LT(test, (skip + 1) * ENTRY_LEN, (size_t)READER_RING_SIZE);
	for (i = 0; i < skip; i++)
		reader_put(test, lc, 1, i, UID_OTHER, i);
	reader_put(test, lc, 2, 0, UID_SELF, skip);

	for (i = 1; i <= 2; i++) {
		spin_lock(&ring->lock);
		res = cask_log_scan_locked(own, ring, &off, &hdr);
		spin_unlock(&ring->lock);
		KUNIT_EXPECT_EQ(test, res, CASK_LOG_SCAN_MORE);
		KUNIT_EXPECT_EQ(test, off, i * CASK_LOG_SCAN_BATCH * (u64)ENTRY_LEN);
	}
	spin_lock(&ring->lock);
	res = cask_log_scan_locked(own, ring, &off, &hdr);
	spin_unlock(&ring->lock);
	KUNIT_EXPECT_EQ(test, res, CASK_LOG_SCAN_FOUND);
	KUNIT_EXPECT_EQ(test, off, skip * (u64)ENTRY_LEN);

	/* cask_log_seek() goes on across batches. */
	off = 0;
	KUNIT_EXPECT_TRUE(test, cask_log_seek(own, ring, &off, &hdr));
	KUNIT_EXPECT_EQ(test, off, skip * (u64)ENTRY_LEN);
	off += ENTRY_LEN;
	KUNIT_EXPECT_FALSE(test, cask_log_seek(own, ring, &off, &hdr));
	KUNIT_EXPECT_EQ(test, off, ring->tail);

	/*
	 * ... also with a signal pending that is not fatal: poll() and
	 * epoll_ctl() must not call the ring empty because of it. (The KUnit
	 * thread takes no signals: the flag alone is set, and cleared.)
	 */
	off = 0;
	set_thread_flag(TIF_SIGPENDING);
	KUNIT_EXPECT_TRUE(test, signal_pending(current));
	KUNIT_EXPECT_TRUE(test, cask_log_seek(own, ring, &off, &hdr));
	clear_thread_flag(TIF_SIGPENDING);
	KUNIT_EXPECT_EQ(test, off, skip * (u64)ENTRY_LEN);

	/* A reader of every uid stops at the first entry. */
	off = 0;
	spin_lock(&ring->lock);
	res = cask_log_scan_locked(all, ring, &off, &hdr);
	spin_unlock(&ring->lock);
	KUNIT_EXPECT_EQ(test, res, CASK_LOG_SCAN_FOUND);
	KUNIT_EXPECT_EQ(test, off, 0ULL);
}

/*
 * Run cask_log_may_flush() for a cell of init_user_ns (@aid_log: a
 * registered container's without a user namespace; else the host's or an
 * auto cell) as a task without capabilities, of group @egid.
 */
static bool reader_may_flush_as(struct kunit *test, kgid_t node_gid,
				bool syslog, kgid_t egid, bool aid_log)
{
	const struct cred *old;
	struct cred *new;
	bool ret;

	new = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, new);
	cap_clear(new->cap_effective);
	if (syslog)
		cap_raise(new->cap_effective, CAP_SYSLOG);
	new->egid = egid;
	old = override_creds(new);
	ret = cask_log_may_flush(node_gid, &init_user_ns, aid_log);
	revert_creds(old);
	put_cred(new);
	return ret;
}

/* As Android's logger: the node's group, or CAP_SYSLOG. */
static void reader_test_flush_permission(struct kunit *test)
{
	kgid_t g = KGIDT_INIT(1234);

	KUNIT_EXPECT_FALSE(test, reader_may_flush_as(test, KGIDT_INIT(4321), false, g, false));
	KUNIT_EXPECT_TRUE(test, reader_may_flush_as(test, KGIDT_INIT(1234), false, g, false));
	KUNIT_EXPECT_TRUE(test, reader_may_flush_as(test, KGIDT_INIT(4321), true, g, false));
	KUNIT_EXPECT_FALSE(test, reader_may_flush_as(test, KGIDT_INIT(4321), false, g, true));
}

/*
 * Android's AID_LOG (1007) of the cell's user namespace is the log group
 * in a registered container's cell, whatever the node's group; in the
 * host's and in auto cells only the node's group is.
 */
static void reader_test_aid_log_in_container(struct kunit *test)
{
	kgid_t node = KGIDT_INIT(4321), aid_log = KGIDT_INIT(1007);

	KUNIT_EXPECT_TRUE(test, reader_may_flush_as(test, node, false, aid_log, true));
	KUNIT_EXPECT_FALSE(test, reader_may_flush_as(test, node, false, aid_log, false));
	KUNIT_EXPECT_FALSE(test, reader_may_flush_as(test, node, false, KGIDT_INIT(1008), true));
	KUNIT_EXPECT_TRUE(test, reader_may_flush_as(test, aid_log, false, aid_log, false));
}

/* The devdir parameter: a relative path that stays below /dev. */
static void reader_test_devdir_valid(struct kunit *test)
{
	static const char *const good[] = {
		"log", "cask/log", "a", "android-0/log_1", "x.y", "..a", "a..",
		"1234567890123456789012345678901234567890123456789012345678901234",
	};
	static const char *const bad[] = {
		"", "/log", "log/", "a//b", ".", "..", "./log", "log/.", "a/../b",
		"../log", "log/..", "with space", "a\\b", "log*", "a\nb", "\xe9t\xe9",
		"12345678901234567890123456789012345678901234567890123456789012345",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		KUNIT_EXPECT_TRUE_MSG(test, cask_log_devdir_valid(good[i]), "%s", good[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_FALSE_MSG(test, cask_log_devdir_valid(bad[i]), "%s", bad[i]);
}

static struct kunit_case cask_logger_ring_cases[] = {
	KUNIT_CASE(ring_test_write_read),
	KUNIT_CASE(ring_test_wrap),
	KUNIT_CASE(ring_test_exact_end),
	KUNIT_CASE(ring_test_whole_ring),
	KUNIT_CASE(ring_test_overwrite),
	KUNIT_CASE(ring_test_lapped_reader),
	KUNIT_CASE(ring_test_flush_resize),
	{}
};

static struct kunit_suite cask_logger_ring_suite = {
	.name = "cask_logger_ring",
	.init = ring_test_init,
	.test_cases = cask_logger_ring_cases,
};

static struct kunit_case cask_logger_reader_cases[] = {
	KUNIT_CASE(reader_test_earlier),
	KUNIT_CASE(reader_test_merge_order),
	KUNIT_CASE(reader_test_cursor_sync),
	KUNIT_CASE(reader_test_cursors_real_cells),
	KUNIT_CASE(reader_test_own_uid_position),
	KUNIT_CASE(reader_test_bounded_scan),
	KUNIT_CASE(reader_test_flush_permission),
	KUNIT_CASE(reader_test_aid_log_in_container),
	KUNIT_CASE(reader_test_devdir_valid),
	{}
};

static struct kunit_suite cask_logger_reader_suite = {
	.name = "cask_logger_reader",
	.test_cases = cask_logger_reader_cases,
};

kunit_test_suites(&cask_logger_ring_suite, &cask_logger_reader_suite);

MODULE_DESCRIPTION("KUnit tests for cask_logger");
MODULE_LICENSE("GPL");
