// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_binder's transaction logs (suite cask_binder_log):
 * the ring that binder_logs/transaction_log and failed_transaction_log
 * print, written without a lock (log.c).
 *
 * The cases add entries through cbinder_log_end() to a zeroed cell, which
 * is all the logs need, and read them through cbinder_print_log() into a
 * seq_file buffer, as the files do. States a racing writer leaves behind
 * (a slot being filled, a number claimed but not yet written, a slot
 * already holding a newer entry) are made by hand in the ring; the last
 * case races two writer threads against the reader for real.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "binder.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* Room for a whole log of the longest lines. */
#define LOG_BUF		(16 * 1024)

struct log_test {
	struct cbinder_cell *bc;
	struct seq_file m;
};

static int log_test_init(struct kunit *test)
{
	struct log_test *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->bc = kunit_kzalloc(test, sizeof(*t->bc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->bc);
	t->m.buf = kunit_kzalloc(test, LOG_BUF, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->m.buf);
	t->m.size = LOG_BUF;
	test->priv = t;
	return 0;
}

/* An entry whose every field is made from @id, so a torn one shows. */
static void log_entry(struct cbinder_log_entry *e, int id)
{
	memset(e, 0, sizeof(*e));
	e->debug_id = id;
	e->call_type = id % 3;
	e->from_proc = id;
	e->from_thread = id;
	e->to_proc = id;
	e->to_thread = id;
	e->to_node = id;
	e->handle = id;
	e->data_size = id;
	e->offsets_size = id;
	e->return_error = BR_OK;
	snprintf(e->context, sizeof(e->context), "ctx-%d", id);
}

static void log_add(struct log_test *t, int id, u32 return_error)
{
	struct cbinder_log_entry e;

	log_entry(&e, id);
	cbinder_log_end(t->bc, &e, return_error, return_error == BR_OK ? 0 : -EINVAL);
}

/* Print @log into t->m, NUL-terminated; false if it did not fit. */
static bool log_print(struct log_test *t, struct cbinder_txn_log *log)
{
	struct cbinder_printer p = {
		.m = &t->m,
		.ns = &init_pid_ns,
		.binderfs = true,
		.all = true,
	};

	t->m.count = 0;
	cbinder_print_log(&p, log);
	if (t->m.count >= t->m.size)
		return false;
	t->m.buf[t->m.count] = '\0';
	return true;
}

/*
 * Parse the line at *@pos, advance past it: 0 with its debug id in @id,
 * 1 at the end, -EINVAL for a line that is not a whole entry of
 * log_entry() (another format, or fields of two entries).
 */
static int log_next(char **pos, int *id)
{
	static const char *const types[] = { "call", "async", "reply" };
	char *line = strsep(pos, "\n");
	char type[8], context[CBINDER_LOG_CONTEXT], want[CBINDER_LOG_CONTEXT];
	int from, from_thread, to, to_thread, node, err, l, n;
	unsigned long long size, offsets;
	u32 handle, ret;

	if (!line || !*line)
		return 1;
	n = sscanf(line,
		   "%d: %7s from %d:%d to %d:%d context %31s node %d handle %u size %llu:%llu ret %u/%d l=%d",
		   id, type, &from, &from_thread, &to, &to_thread, context,
		   &node, &handle, &size, &offsets, &ret, &err, &l);
	if (n != 14)
		return -EINVAL;
	snprintf(want, sizeof(want), "ctx-%d", *id);
	if (strcmp(type, types[*id % 3]) ||
	    from != *id || from_thread != *id || to != *id || to_thread != *id ||
	    node != *id || handle != *id || size != *id || offsets != *id ||
	    strcmp(context, want) || ret != BR_OK || err || l)
		return -EINVAL;
	return 0;
}

/* Expect @log to show exactly the debug ids @ids, in that order. */
static void log_expect(struct kunit *test, struct cbinder_txn_log *log,
		       const int *ids, int n)
{
	struct log_test *t = test->priv;
	char *line, *pos = t->m.buf;
	int i, id;

	KUNIT_ASSERT_TRUE(test, log_print(t, log));
	for (i = 0; i < n; i++) {
		/* log_next() ends the line it parses: @line is that line. */
		line = pos;
		KUNIT_ASSERT_EQ_MSG(test, 0, log_next(&pos, &id), "line %d: %s",
				    i, line ?: "(none)");
		KUNIT_EXPECT_EQ_MSG(test, ids[i], id, "line %d", i);
	}
	line = pos;
	KUNIT_EXPECT_EQ_MSG(test, 1, log_next(&pos, &id), "line %d: %s", n,
			    line ?: "(none)");
}

static void log_test_empty(struct kunit *test)
{
	struct log_test *t = test->priv;

	KUNIT_ASSERT_TRUE(test, log_print(t, &t->bc->txn_log));
	KUNIT_EXPECT_EQ(test, 0, (int)t->m.count);
}

/* The exact text of a line: upstream's format, which tools parse. */
static void log_test_format(struct kunit *test)
{
	struct log_test *t = test->priv;
	struct cbinder_log_entry e = {
		.debug_id = 42,
		.call_type = 1,
		.from_proc = 100,
		.from_thread = 101,
		.to_proc = 200,
		.to_thread = 201,
		.to_node = 7,
		.handle = 3,
		.data_size = 16,
		.offsets_size = 8,
		.context = "binder",
	};

	cbinder_log_end(t->bc, &e, BR_FAILED_REPLY, -ENOSPC);
	KUNIT_ASSERT_TRUE(test, log_print(t, &t->bc->txn_log));
	/* BR_FAILED_REPLY is _IO('r', 17). */
	KUNIT_EXPECT_STREQ(test, t->m.buf,
			   "42: async from 100:101 to 200:201 context binder node 7 handle 3 size 16:8 ret 29201/-28 l=0\n");
	/* A failure is in both logs. */
	KUNIT_ASSERT_TRUE(test, log_print(t, &t->bc->failed_log));
	KUNIT_EXPECT_STREQ(test, t->m.buf,
			   "42: async from 100:101 to 200:201 context binder node 7 handle 3 size 16:8 ret 29201/-28 l=0\n");
}

static void log_test_order(struct kunit *test)
{
	struct log_test *t = test->priv;
	int i;

	for (i = 1; i <= 3; i++)
		log_add(t, i, BR_OK);
	log_expect(test, &t->bc->txn_log, (const int[]){ 1, 2, 3 }, 3);
	/* Successes stay out of the failed log. */
	log_expect(test, &t->bc->failed_log, NULL, 0);
}

/* Past the end: the last CBINDER_LOG_SIZE, oldest first. */
static void log_test_wrap(struct kunit *test)
{
	struct log_test *t = test->priv;
	int ids[CBINDER_LOG_SIZE];
	int i;

	for (i = 1; i <= 2 * CBINDER_LOG_SIZE + 5; i++)
		log_add(t, i, BR_OK);
	for (i = 0; i < CBINDER_LOG_SIZE; i++)
		ids[i] = CBINDER_LOG_SIZE + 6 + i;
	log_expect(test, &t->bc->txn_log, ids, CBINDER_LOG_SIZE);
}

/*
 * The entry counter wrapping: order holds across it, and the two numbers
 * a slot cannot hold (0 and CBINDER_LOG_BUSY) are given up.
 */
static void log_test_counter_wrap(struct kunit *test)
{
	struct log_test *t = test->priv;
	int i;

	atomic_long_set(&t->bc->txn_log.head, (long)(ULONG_MAX - 3));
	/* Numbers ULONG_MAX - 2 and - 1, then ULONG_MAX and 0, then 1... */
	for (i = 1; i <= 8; i++)
		log_add(t, i, BR_OK);
	log_expect(test, &t->bc->txn_log, (const int[]){ 1, 2, 5, 6, 7, 8 }, 6);
}

/* A slot a writer is still filling is not shown; the others are. */
static void log_test_busy_skipped(struct kunit *test)
{
	struct log_test *t = test->priv;
	struct cbinder_txn_log *log = &t->bc->txn_log;
	int i;

	for (i = 1; i <= 4; i++)
		log_add(t, i, BR_OK);
	/* Entry 3's slot, retaken by a writer a ring ahead. */
	WRITE_ONCE(log->ring[3 % CBINDER_LOG_SIZE].seq, CBINDER_LOG_BUSY);
	log_expect(test, log, (const int[]){ 1, 2, 4 }, 3);
}

/*
 * A number claimed but not yet written: neither it nor the older entry
 * still in its slot is shown, until its writer publishes it.
 */
static void log_test_claimed_skipped(struct kunit *test)
{
	struct log_test *t = test->priv;
	struct cbinder_txn_log *log = &t->bc->txn_log;
	struct cbinder_log_slot *slot;
	int ids[CBINDER_LOG_SIZE];
	int i;

	for (i = 1; i <= CBINDER_LOG_SIZE; i++)
		log_add(t, i, BR_OK);
	atomic_long_inc(&log->head);
	for (i = 0; i < CBINDER_LOG_SIZE; i++)
		ids[i] = i + 2;
	log_expect(test, log, ids, CBINDER_LOG_SIZE - 1);
	/* Its writer takes the slot, fills it, publishes it. */
	slot = &log->ring[(CBINDER_LOG_SIZE + 1) % CBINDER_LOG_SIZE];
	WRITE_ONCE(slot->seq, CBINDER_LOG_BUSY);
	log_expect(test, log, ids, CBINDER_LOG_SIZE - 1);
	log_entry(&slot->entry, CBINDER_LOG_SIZE + 1);
	/* As cbinder_log_add() publishes it. */
	smp_store_release(&slot->seq, CBINDER_LOG_SIZE + 1);
	log_expect(test, log, ids, CBINDER_LOG_SIZE);
}

/*
 * A writer never waits for a slot and never puts its entry over a newer
 * one: it gives it up, and the slot keeps what it had.
 */
static void log_test_writer_gives_up(struct kunit *test)
{
	struct log_test *t = test->priv;
	struct cbinder_txn_log *log = &t->bc->txn_log;
	struct cbinder_log_slot *slot = &log->ring[3 % CBINDER_LOG_SIZE];

	log_add(t, 1, BR_OK);
	log_add(t, 2, BR_OK);
	/* Entry 3's slot, being filled by a writer a ring behind. */
	WRITE_ONCE(slot->seq, CBINDER_LOG_BUSY);
	log_add(t, 3, BR_OK);
	KUNIT_EXPECT_EQ(test, CBINDER_LOG_BUSY, READ_ONCE(slot->seq));
	KUNIT_EXPECT_EQ(test, 0, slot->entry.debug_id);
	log_expect(test, log, (const int[]){ 1, 2 }, 2);

	/* Entry 4's slot, taken by a writer a ring ahead that passed it. */
	slot = &log->ring[4 % CBINDER_LOG_SIZE];
	log_entry(&slot->entry, 99);
	WRITE_ONCE(slot->seq, 4 + CBINDER_LOG_SIZE);
	log_add(t, 4, BR_OK);
	KUNIT_EXPECT_EQ(test, 4UL + CBINDER_LOG_SIZE, READ_ONCE(slot->seq));
	KUNIT_EXPECT_EQ(test, 99, slot->entry.debug_id);
	log_expect(test, log, (const int[]){ 1, 2 }, 2);
}

struct log_writer {
	struct log_test *t;
	struct task_struct *task;
	int first;
};

/* Entries first, first + 2, ... until stopped: each writer's in order. */
static int log_writer_fn(void *arg)
{
	struct log_writer *w = arg;
	int id;

	for (id = w->first; !kthread_should_stop(); id += 2) {
		log_add(w->t, id, BR_OK);
		cond_resched();
	}
	return 0;
}

/*
 * Two writers against the reader for a second: every line shown is one
 * whole entry, each writer's entries in its order, never more than the
 * ring holds.
 */
static void log_test_race(struct kunit *test)
{
	struct log_test *t = test->priv;
	struct log_writer w[2] = { { .t = t, .first = 1 }, { .t = t, .first = 2 } };
	int last[2], lines, total = 0, reads, id, i, ret;
	unsigned long end;
	bool ok = true;
	char *line, *pos;

	for (i = 0; i < 2; i++) {
		w[i].task = kthread_run(log_writer_fn, &w[i], "cbinder-log-%d", i);
		if (IS_ERR(w[i].task)) {
			while (i--)
				kthread_stop(w[i].task);
			KUNIT_FAIL(test, "kthread_run failed");
			return;
		}
	}
	end = jiffies + HZ;
	for (reads = 0; ok && (!reads || time_before(jiffies, end)); reads++) {
		if (!log_print(t, &t->bc->txn_log)) {
			KUNIT_FAIL(test, "a log did not fit %d bytes", LOG_BUF);
			break;
		}
		pos = t->m.buf;
		last[0] = 0;
		last[1] = 0;
		for (lines = 0;; lines++) {
			line = pos;
			ret = log_next(&pos, &id);
			if (ret)
				break;
			if (id <= last[id % 2]) {
				KUNIT_FAIL(test, "%d after %d", id, last[id % 2]);
				ok = false;
			}
			last[id % 2] = id;
		}
		if (ret < 0) {
			KUNIT_FAIL(test, "torn or bad line %d: %s", lines, line);
			ok = false;
		}
		if (lines > CBINDER_LOG_SIZE) {
			KUNIT_FAIL(test, "%d lines", lines);
			ok = false;
		}
		total += lines;
		cond_resched();
	}
	for (i = 0; i < 2; i++)
		kthread_stop(w[i].task);
	kunit_info(test, "%d reads, %d of their %d entries shown", reads, total,
		   reads * CBINDER_LOG_SIZE);
}

static struct kunit_case log_test_cases[] = {
	KUNIT_CASE(log_test_empty),
	KUNIT_CASE(log_test_format),
	KUNIT_CASE(log_test_order),
	KUNIT_CASE(log_test_wrap),
	KUNIT_CASE(log_test_counter_wrap),
	KUNIT_CASE(log_test_busy_skipped),
	KUNIT_CASE(log_test_claimed_skipped),
	KUNIT_CASE(log_test_writer_gives_up),
	KUNIT_CASE(log_test_race),
	{}
};

static struct kunit_suite log_test_suite = {
	.name = "cask_binder_log",
	.init = log_test_init,
	.test_cases = log_test_cases,
};

kunit_test_suite(log_test_suite);
