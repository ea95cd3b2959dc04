// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_logger's rings: framing, wrap-around, overwriting
 * the oldest entries, lapped readers, flush and resize. A 256-byte ring
 * makes every boundary reachable with a few small entries.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "logger.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

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

kunit_test_suite(cask_logger_ring_suite);

MODULE_DESCRIPTION("KUnit tests for cask_logger's rings");
MODULE_LICENSE("GPL");
