// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_logger's kmsg: the "<N>" prefix parser and the
 * record formatter, each against what kernel/printk/printk.c makes of the
 * same input for /dev/kmsg, and the lazy ring buffer they are stored in.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "logger.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

struct parse_case {
	const char *name;
	const char *in;
	size_t len;		/* 0: strlen(in) */
	u8 facility;
	u8 level;
	u8 flags;
	const char *text;
	size_t text_len;	/* 0: strlen(text) */
};

#define DEF	6	/* the default level the cases pass */

static const struct parse_case parse_cases[] = {
	{ "no prefix", "hello", 0, 1, DEF, 0, "hello" },
	{ "newline", "hello\n", 0, 1, DEF, CASK_KMSG_NEWLINE, "hello" },
	{ "one newline only", "hi\n\n", 0, 1, DEF, CASK_KMSG_NEWLINE, "hi\n" },
	{ "level", "<3>boom", 0, 1, 3, 0, "boom" },
	{ "facility and level", "<13>x", 0, 1, 5, 0, "x" },
	{ "daemon", "<30>x", 0, 3, 6, 0, "x" },
	{ "kernel facility is user", "<0>x", 0, 1, 0, 0, "x" },
	{ "kernel facility level 7", "<7>x", 0, 1, 7, 0, "x" },
	{ "empty prefix", "<>x", 0, 1, 0, 0, "x" },
	{ "unclosed", "<5x", 0, 1, DEF, 0, "<5x" },
	{ "letters", "<ab>x", 0, 1, DEF, 0, "<ab>x" },
	{ "sign", "<-3>x", 0, 1, DEF, 0, "<-3>x" },
	{ "space", "< 3>x", 0, 1, DEF, 0, "< 3>x" },
	{ "only prefix", "<4>", 0, 1, 4, 0, "" },
	{ "prefix at end", "<4", 0, 1, DEF, 0, "<4" },
	{ "facility 255", "<2047>x", 0, 255, 7, 0, "x" },
	{ "facility wraps at 8 bits", "<2048>x", 0, 1, 0, 0, "x" },
	/* 2^32 + 8: unsigned int 8, level 0, facility 1. */
	{ "32-bit wrap", "<4294967304>x", 0, 1, 0, 0, "x" },
	{ "prefix not first", " <3>x", 0, 1, DEF, 0, " <3>x" },
	{ "NUL ends the text", "ab\0cd", 5, 1, DEF, 0, "ab" },
	{ "NUL first", "<2>\0x", 5, 1, 2, 0, "" },
	{ "empty", "", 0, 1, DEF, 0, "" },
	{ "newline alone", "\n", 0, 1, DEF, CASK_KMSG_NEWLINE, "" },
	{ "NUL before newline", "a\0\n", 3, 1, DEF, 0, "a" },
};

static void kmsg_test_parse(struct kunit *test)
{
	const struct parse_case *c;
	struct cask_kmsg_msg msg;
	size_t len, tlen;

	for (c = parse_cases; c < parse_cases + ARRAY_SIZE(parse_cases); c++) {
		len = c->len ?: strlen(c->in);
		tlen = c->text_len ?: strlen(c->text);
		cask_kmsg_parse(c->in, len, DEF, &msg);
		KUNIT_EXPECT_EQ_MSG(test, msg.facility, c->facility, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, msg.level, c->level, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, msg.flags, c->flags, "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, msg.text_len, tlen, "%s", c->name);
		KUNIT_EXPECT_TRUE_MSG(test, msg.text >= c->in &&
				      msg.text + msg.text_len <= c->in + len,
				      "%s", c->name);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(msg.text, c->text, tlen), 0,
				    "%s", c->name);
	}
}

/* The parser reads @len bytes, no more: a write is not NUL-terminated. */
static void kmsg_test_parse_bounded(struct kunit *test)
{
	struct cask_kmsg_msg msg;

	cask_kmsg_parse("<3>abcdef", 2, DEF, &msg);
	KUNIT_EXPECT_EQ(test, msg.level, DEF);
	KUNIT_EXPECT_EQ(test, msg.text_len, 2);
	cask_kmsg_parse("abc\n", 3, DEF, &msg);
	KUNIT_EXPECT_EQ(test, msg.text_len, 3);
	KUNIT_EXPECT_EQ(test, msg.flags, 0);
	/* The default level is kept to three bits, as printk stores it. */
	cask_kmsg_parse("x", 1, 12, &msg);
	KUNIT_EXPECT_EQ(test, msg.level, 4);
}

/*
 * printk keeps 1023 bytes of a 1024-byte write (the rest of its record is
 * the NUL), then drops a newline that is the last of those.
 */
static void kmsg_test_parse_long(struct kunit *test)
{
	struct cask_kmsg_msg msg;
	char *buf;

	buf = kunit_kmalloc(test, CASK_KMSG_WRITE_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(buf, 'a', CASK_KMSG_WRITE_MAX);
	cask_kmsg_parse(buf, CASK_KMSG_WRITE_MAX, DEF, &msg);
	KUNIT_EXPECT_EQ(test, msg.text_len, CASK_KMSG_TEXT_MAX);
	KUNIT_EXPECT_EQ(test, msg.flags, 0);

	buf[CASK_KMSG_TEXT_MAX - 1] = '\n';
	cask_kmsg_parse(buf, CASK_KMSG_WRITE_MAX, DEF, &msg);
	KUNIT_EXPECT_EQ(test, msg.text_len, CASK_KMSG_TEXT_MAX - 1);
	KUNIT_EXPECT_EQ(test, msg.flags, CASK_KMSG_NEWLINE);

	/* A newline past the 1023 bytes kept is not seen. */
	buf[CASK_KMSG_TEXT_MAX - 1] = 'a';
	buf[CASK_KMSG_TEXT_MAX] = '\n';
	cask_kmsg_parse(buf, CASK_KMSG_WRITE_MAX, DEF, &msg);
	KUNIT_EXPECT_EQ(test, msg.text_len, CASK_KMSG_TEXT_MAX);
	KUNIT_EXPECT_EQ(test, msg.flags, 0);

	/* The prefix is not counted in the 1023. */
	memcpy(buf, "<3>", 3);
	cask_kmsg_parse(buf, CASK_KMSG_WRITE_MAX, DEF, &msg);
	KUNIT_EXPECT_EQ(test, msg.text_len, CASK_KMSG_WRITE_MAX - 4);
	KUNIT_EXPECT_EQ(test, msg.flags, CASK_KMSG_NEWLINE);
}

struct fmt_rec {
	struct cask_kmsg_rec rec;
	char text[CASK_KMSG_TEXT_MAX];
};

static void kmsg_test_format(struct kunit *test)
{
	struct fmt_rec *r;
	char *out, *hdr;
	size_t len;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	out = kunit_kzalloc(test, CASK_KMSG_LINE_MAX + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_NOT_NULL(test, out);
	r->rec.facility = 1;
	r->rec.level = 5;
	r->rec.seq = 42;
	r->rec.ts_nsec = 1234567999;	/* 1234567 us: truncated, not rounded */
	r->rec.caller = 7;
	memcpy(r->text, "a\\b\tc\x7f\xff", 7);
	r->rec.text_len = 7;
	len = cask_kmsg_format(&r->rec, r->text, out, CASK_KMSG_LINE_MAX);
	out[len] = '\0';
	if (IS_ENABLED(CONFIG_PRINTK_CALLER))
		hdr = "13,42,1234567,-,caller=T7;";
	else
		hdr = "13,42,1234567,-;";
	KUNIT_EXPECT_EQ(test, strncmp(out, hdr, strlen(hdr)), 0);
	KUNIT_EXPECT_STREQ(test, out + strlen(hdr),
			   "a\\x5cb\\x09c\\x7f\\xff\n");

	/* Kernel facility, continued record, empty text. */
	r->rec.facility = 0;
	r->rec.level = 4;
	r->rec.flags = CASK_KMSG_CONT;
	r->rec.text_len = 0;
	r->rec.ts_nsec = 999;
	len = cask_kmsg_format(&r->rec, r->text, out, CASK_KMSG_LINE_MAX);
	out[len] = '\0';
	KUNIT_EXPECT_EQ(test, strncmp(out, "4,42,0,c", 8), 0);
	KUNIT_EXPECT_EQ(test, out[len - 2], ';');
	KUNIT_EXPECT_EQ(test, out[len - 1], '\n');
}

/* The worst record fits CASK_KMSG_LINE_MAX; a short buffer cuts, no more. */
static void kmsg_test_format_bounds(struct kunit *test)
{
	struct fmt_rec *r;
	char *out;
	size_t len;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	out = kunit_kzalloc(test, CASK_KMSG_LINE_MAX + 8, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_NOT_NULL(test, out);
	r->rec.facility = 255;
	r->rec.level = 7;
	r->rec.seq = U64_MAX;
	r->rec.ts_nsec = U64_MAX;
	r->rec.caller = U32_MAX;
	r->rec.flags = CASK_KMSG_CONT;
	r->rec.text_len = CASK_KMSG_TEXT_MAX;
	memset(r->text, 0x01, CASK_KMSG_TEXT_MAX);
	memset(out, 0x5a, CASK_KMSG_LINE_MAX + 8);
	len = cask_kmsg_format(&r->rec, r->text, out, CASK_KMSG_LINE_MAX);
	KUNIT_EXPECT_LE(test, len, CASK_KMSG_LINE_MAX);
	KUNIT_EXPECT_EQ(test, out[len - 1], '\n');
	KUNIT_EXPECT_EQ(test, (u8)out[CASK_KMSG_LINE_MAX], 0x5a);

	memset(out, 0x5a, 32);
	len = cask_kmsg_format(&r->rec, r->text, out, 16);
	KUNIT_EXPECT_LE(test, len, 16);
	KUNIT_EXPECT_EQ(test, (u8)out[16], 0x5a);
}

/*
 * cask_ring_alloc_buf(): one buffer, allocated once, kept by a second call,
 * and one of the new size after a resize.
 */
static void kmsg_test_alloc_buf(struct kunit *test)
{
	struct cask_log_ring *ring;
	char *buf;

	ring = kunit_kzalloc(test, sizeof(*ring), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ring);
	cask_ring_init(ring, CASK_LOG_SIZE_MIN);
	KUNIT_EXPECT_NULL(test, ring->buf);
	KUNIT_ASSERT_EQ(test, cask_ring_alloc_buf(ring), 0);
	buf = ring->buf;
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, cask_ring_alloc_buf(ring), 0);
	KUNIT_EXPECT_PTR_EQ(test, ring->buf, buf);

	/* A resize, as cask_logger_set_size() makes it. */
	spin_lock(&ring->lock);
	buf = cask_ring_replace_buf_locked(ring, NULL, 2 * CASK_LOG_SIZE_MIN);
	spin_unlock(&ring->lock);
	kvfree(buf);
	KUNIT_ASSERT_EQ(test, cask_ring_alloc_buf(ring), 0);
	KUNIT_EXPECT_NOT_NULL(test, ring->buf);
	KUNIT_EXPECT_EQ(test, ring->size, 2 * CASK_LOG_SIZE_MIN);
	kvfree(ring->buf);
}

static struct kunit_case cask_logger_kmsg_cases[] = {
	KUNIT_CASE(kmsg_test_parse),
	KUNIT_CASE(kmsg_test_parse_bounded),
	KUNIT_CASE(kmsg_test_parse_long),
	KUNIT_CASE(kmsg_test_format),
	KUNIT_CASE(kmsg_test_format_bounds),
	KUNIT_CASE(kmsg_test_alloc_buf),
	{}
};

static struct kunit_suite cask_logger_kmsg_suite = {
	.name = "cask_logger_kmsg",
	.test_cases = cask_logger_kmsg_cases,
};

kunit_test_suites(&cask_logger_kmsg_suite);

MODULE_DESCRIPTION("KUnit tests for cask_logger's kmsg");
MODULE_LICENSE("GPL");
