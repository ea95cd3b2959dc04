// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_power: the wake_lock and wake_unlock formats, the
 * state names, the kernel's timeout rules, deadlines and the cap's budget, the
 * delay of the expire work, and a cell's table on its own (no cell of
 * cask_core): names, limits, the vote, each policy's host sources, and a
 * timeout that expires.
 */
#include <kunit/test.h>
#include <linux/device.h>
#include <linux/jiffies.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pm_wakeup.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>

#include "power.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static void parse_lock_formats(struct kunit *test)
{
	char name[CPOWER_NAME_MAX + 2];
	size_t len;
	u64 t;

	KUNIT_EXPECT_EQ(test, cpower_parse_lock("foo", &len, &t), 0);
	KUNIT_EXPECT_EQ(test, len, 3);
	KUNIT_EXPECT_EQ(test, t, 0);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("foo\n", &len, &t), 0);
	KUNIT_EXPECT_EQ(test, len, 3);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("foo 100\n", &len, &t), 0);
	KUNIT_EXPECT_EQ(test, len, 3);
	KUNIT_EXPECT_EQ(test, t, 100);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("a.b:c/d\t  +7", &len, &t), 0);
	KUNIT_EXPECT_EQ(test, len, 7);
	KUNIT_EXPECT_EQ(test, t, 7);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("x 0", &len, &t), 0);
	KUNIT_EXPECT_EQ(test, t, 0);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("x 18446744073709551615", &len, &t), 0);
	KUNIT_EXPECT_EQ(test, t, U64_MAX);
	/* The kernel's errors: no name, anything but one decimal u64 after it. */
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("", &len, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("\n", &len, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock(" foo", &len, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("foo ", &len, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("foo bar", &len, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("foo -1", &len, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("foo 0x10", &len, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("foo 1 2", &len, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_lock("x 18446744073709551616", &len, &t),
			-EINVAL);
	/* Ours: a bound on names. */
	memset(name, 'n', CPOWER_NAME_MAX);
	name[CPOWER_NAME_MAX] = '\0';
	KUNIT_EXPECT_EQ(test, cpower_parse_lock(name, &len, &t), 0);
	KUNIT_EXPECT_EQ(test, len, CPOWER_NAME_MAX);
	name[CPOWER_NAME_MAX] = 'n';
	name[CPOWER_NAME_MAX + 1] = '\0';
	KUNIT_EXPECT_EQ(test, cpower_parse_lock(name, &len, &t), -ENAMETOOLONG);
}

static void parse_unlock_formats(struct kunit *test)
{
	size_t len;

	KUNIT_EXPECT_EQ(test, cpower_parse_unlock("foo\n", &len), 0);
	KUNIT_EXPECT_EQ(test, len, 3);
	/* The whole write is the name: spaces and all, one newline off. */
	KUNIT_EXPECT_EQ(test, cpower_parse_unlock("foo 100", &len), 0);
	KUNIT_EXPECT_EQ(test, len, 7);
	KUNIT_EXPECT_EQ(test, cpower_parse_unlock("foo\n\n", &len), 0);
	KUNIT_EXPECT_EQ(test, len, 4);
	KUNIT_EXPECT_EQ(test, cpower_parse_unlock("", &len), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_unlock("\n", &len), -EINVAL);
}

/* wakeup_count as the kernel's sscanf("%u") reads it: Android's writes work. */
static void parse_count_formats(struct kunit *test)
{
	unsigned int c = 7;

	KUNIT_EXPECT_EQ(test, cpower_parse_count("12", &c), 0);
	KUNIT_EXPECT_EQ(test, c, 12);
	KUNIT_EXPECT_EQ(test, cpower_parse_count("  3\n", &c), 0);
	KUNIT_EXPECT_EQ(test, c, 3);
	KUNIT_EXPECT_EQ(test, cpower_parse_count("4 and more", &c), 0);
	KUNIT_EXPECT_EQ(test, c, 4);
	KUNIT_EXPECT_EQ(test, cpower_parse_count("4294967295", &c), 0);
	KUNIT_EXPECT_EQ(test, c, U32_MAX);
	KUNIT_EXPECT_EQ(test, cpower_parse_count("", &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_count("x1", &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_count("-1", &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_count("\n", &c), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_count("4294967296", &c), -ERANGE);
	KUNIT_EXPECT_EQ(test, cpower_parse_count("123456789012345", &c), -ERANGE);
}

static void policy_and_state_names(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, cpower_parse_policy("forward"), CPOWER_FORWARD);
	KUNIT_EXPECT_EQ(test, cpower_parse_policy("cap\n"), CPOWER_CAP);
	KUNIT_EXPECT_EQ(test, cpower_parse_policy("deny"), CPOWER_DENY);
	KUNIT_EXPECT_EQ(test, cpower_parse_policy("Deny"), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_policy("forward "), -EINVAL);
	KUNIT_EXPECT_EQ(test, cpower_parse_policy(""), -EINVAL);

	if (!IS_ENABLED(CONFIG_SUSPEND)) {
		KUNIT_EXPECT_EQ(test, cpower_decode_state("mem", 3), CPOWER_STATE_ON);
		return;
	}
	KUNIT_EXPECT_EQ(test, cpower_decode_state("mem", 3), CPOWER_STATE_MEM);
	KUNIT_EXPECT_EQ(test, cpower_decode_state("mem\n", 4), CPOWER_STATE_MEM);
	/* Up to the first newline, as the kernel's decode_state(). */
	KUNIT_EXPECT_EQ(test, cpower_decode_state("mem\nxy", 6), CPOWER_STATE_MEM);
	KUNIT_EXPECT_EQ(test, cpower_decode_state("freeze\n", 7), CPOWER_STATE_FREEZE);
	KUNIT_EXPECT_EQ(test, cpower_decode_state("memx", 4), CPOWER_STATE_ON);
	KUNIT_EXPECT_EQ(test, cpower_decode_state("me", 2), CPOWER_STATE_ON);
	KUNIT_EXPECT_EQ(test, cpower_decode_state("mem ", 4), CPOWER_STATE_ON);
	KUNIT_EXPECT_EQ(test, cpower_decode_state("disk", 4), CPOWER_STATE_ON);
	KUNIT_EXPECT_EQ(test, cpower_decode_state("standby", 7), CPOWER_STATE_ON);
	KUNIT_EXPECT_EQ(test, cpower_decode_state("off", 3), CPOWER_STATE_ON);
}

static void expiry_rules(struct kunit *test)
{
	const u64 now = 1000000;

	/* No timeout: permanent, whatever came before. */
	KUNIT_EXPECT_EQ(test, cpower_expiry(now, true, now + 5, 0), 0);
	KUNIT_EXPECT_EQ(test, cpower_expiry(now, false, 0, 0), 0);
	/* A new or inactive lock takes the timeout. */
	KUNIT_EXPECT_EQ(test, cpower_expiry(now, false, 0, 10), now + 10);
	KUNIT_EXPECT_EQ(test, cpower_expiry(now, false, now + 50, 10), now + 10);
	/* An active timed lock only moves later. */
	KUNIT_EXPECT_EQ(test, cpower_expiry(now, true, now + 50, 10), now + 50);
	KUNIT_EXPECT_EQ(test, cpower_expiry(now, true, now + 50, 90), now + 90);
	/* An active permanent lock takes the timeout (the kernel does too). */
	KUNIT_EXPECT_EQ(test, cpower_expiry(now, true, 0, 10), now + 10);
	/* Saturated, never wrapped into the past. */
	KUNIT_EXPECT_EQ(test, cpower_expiry(now, false, 0, U64_MAX), CPOWER_NEVER);
	KUNIT_EXPECT_EQ(test, cpower_expiry(U64_MAX - 1, true, 0, 2), CPOWER_NEVER);
}

static void deadlines(struct kunit *test)
{
	struct cpower_lock l = { .active = true, .expires = 500 };

	KUNIT_EXPECT_EQ(test, cpower_lock_deadline(&l), 500);
	/* Permanent, or inactive with an old expiry: no deadline. */
	l.expires = 0;
	KUNIT_EXPECT_EQ(test, cpower_lock_deadline(&l), CPOWER_NEVER);
	l.active = false;
	l.expires = 5;
	KUNIT_EXPECT_EQ(test, cpower_lock_deadline(&l), CPOWER_NEVER);
}

/* One cap budget per cell, summed over its holds: more names gain none. */
static void budget_arithmetic(struct kunit *test)
{
	const u64 ms = NSEC_PER_MSEC;

	/* Not holding: what was used so far, whatever the clock says. */
	KUNIT_EXPECT_EQ(test, cpower_budget_used(30 * ms, false, 0, 900 * ms), 30 * ms);
	/* Holding: the current hold counts too. */
	KUNIT_EXPECT_EQ(test, cpower_budget_used(30 * ms, true, 100 * ms, 150 * ms),
			80 * ms);
	KUNIT_EXPECT_EQ(test, cpower_budget_used(0, true, 100 * ms, 100 * ms), 0);
	/* A clock read before the hold began adds nothing. */
	KUNIT_EXPECT_EQ(test, cpower_budget_used(7, true, 100, 50), 7);
	KUNIT_EXPECT_EQ(test, cpower_budget_used(U64_MAX - 1, true, 0, 5), CPOWER_NEVER);
	/* The end: what is left of the budget, from the hold's start. */
	KUNIT_EXPECT_EQ(test, cpower_budget_end(0, 100 * ms, 400), 500 * ms);
	KUNIT_EXPECT_EQ(test, cpower_budget_end(250 * ms, 100 * ms, 400), 250 * ms);
	/* Used up, or more (a lower budget): at once. */
	KUNIT_EXPECT_EQ(test, cpower_budget_end(400 * ms, 100 * ms, 400), 100 * ms);
	KUNIT_EXPECT_EQ(test, cpower_budget_end(900 * ms, 100 * ms, 400), 100 * ms);
	KUNIT_EXPECT_EQ(test, cpower_budget_end(0, U64_MAX - ms, CPOWER_MAX_HOLD_MS_LIMIT),
			CPOWER_NEVER);
	/* Three holds of 150 ms in a 400 ms budget: the third ends after 100. */
	KUNIT_EXPECT_EQ(test, cpower_budget_end(cpower_budget_used(150 * ms, true, 0,
								   150 * ms),
						1000 * ms, 400), 1100 * ms);
}

static void delay_never_early(struct kunit *test)
{
	static const u64 deltas[] = {
		1, TICK_NSEC - 1, TICK_NSEC, TICK_NSEC + 1, 7 * NSEC_PER_MSEC,
		NSEC_PER_SEC, 3599ULL * NSEC_PER_SEC,
	};
	const u64 now = 5 * NSEC_PER_SEC;
	unsigned int i;

	KUNIT_EXPECT_EQ(test, cpower_delay(now, now), 0);
	KUNIT_EXPECT_EQ(test, cpower_delay(now, now - 1), 0);
	for (i = 0; i < ARRAY_SIZE(deltas); i++) {
		unsigned long j = cpower_delay(now, now + deltas[i]);

		KUNIT_EXPECT_GE(test, (u64)j * TICK_NSEC, deltas[i]);
		KUNIT_EXPECT_LE(test, (u64)j * TICK_NSEC, deltas[i] + 2 * TICK_NSEC);
	}
	/* Far deadlines: looked at again within the hour. */
	KUNIT_EXPECT_LE(test, cpower_delay(now, CPOWER_NEVER), 3600UL * HZ + 1);
	KUNIT_EXPECT_GE(test, cpower_delay(now, CPOWER_NEVER), 3600UL * HZ);
}

/* ---- a table of its own ---- */

static void cpower_test_exit(void *arg)
{
	cpower_cell_exit(arg);
	kfree(arg);
}

static struct cpower_cell *cpower_test_cell(struct kunit *test,
					    enum cpower_policy policy)
{
	struct cpower_cell *pc = kzalloc(sizeof(*pc), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pc);
	cpower_cell_init(pc, "kunit");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, cpower_test_exit, pc), 0);
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, cpower_set_policy_locked(pc, policy), 0);
	mutex_unlock(&pc->lock);
	return pc;
}

/*
 * A clock the case steps by hand (cpower_set_clock()): what a case checks of
 * timeouts, leases and budgets then holds however slowly the machine runs
 * between two steps (a loaded TCG guest can sleep for 120 ms and wake
 * 300 ms later). The expire work runs when a step says so, as its timer
 * would at that time; the timer itself, in real time, finds nothing due.
 */
static u64 cpower_test_ns;

static u64 cpower_test_clock(void)
{
	return READ_ONCE(cpower_test_ns);
}

static void cpower_test_real_clock(void *unused)
{
	cpower_set_clock(NULL);
}

static void fake_clock(struct kunit *test)
{
	/* Starting where the real one is: no time in the past is 0. */
	WRITE_ONCE(cpower_test_ns, ktime_get_ns());
	cpower_set_clock(cpower_test_clock);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, cpower_test_real_clock, NULL), 0);
}

/* @ms pass, and the expire work looks at the cell, as its timer would. */
static void step(struct cpower_cell *pc, unsigned int ms)
{
	WRITE_ONCE(cpower_test_ns, cpower_test_ns + (u64)ms * NSEC_PER_MSEC);
	mod_delayed_work(system_wq, &pc->expire, 0);
	flush_delayed_work(&pc->expire);
}

static int lock_str(struct cpower_cell *pc, const char *buf)
{
	struct cpower_lock *spare;
	size_t len;
	u64 t;
	int ret = cpower_parse_lock(buf, &len, &t);

	if (ret)
		return ret;
	/* As wake_lock_store(): the memory of a new name first. */
	spare = cpower_lock_alloc(pc, buf, len);
	if (!spare)
		return -ENOMEM;
	mutex_lock(&pc->lock);
	ret = cpower_lock_locked(pc, buf, len, t, &spare);
	mutex_unlock(&pc->lock);
	cpower_lock_free_spare(spare);
	return ret;
}

static int unlock_str(struct cpower_cell *pc, const char *buf)
{
	size_t len;
	int ret = cpower_parse_unlock(buf, &len);

	if (ret)
		return ret;
	mutex_lock(&pc->lock);
	ret = cpower_unlock_locked(pc, buf, len);
	mutex_unlock(&pc->lock);
	return ret;
}

static const char *names(struct kunit *test, struct cpower_cell *pc, bool active)
{
	char *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

	if (!buf)
		return "";
	mutex_lock(&pc->lock);
	cpower_show_names_locked(pc, buf, active);
	mutex_unlock(&pc->lock);
	return buf;
}

static struct cpower_lock *find(struct cpower_cell *pc, const char *name)
{
	struct cpower_lock *l;

	list_for_each_entry(l, &pc->lru, lru)
		if (!strcmp(l->name, name))
			return l;
	return NULL;
}

static void table_lock_unlock(struct kunit *test)
{
	struct cpower_cell *pc = cpower_test_cell(test, CPOWER_DENY);

	KUNIT_EXPECT_STREQ(test, names(test, pc, true), "\n");
	KUNIT_EXPECT_EQ(test, lock_str(pc, "b\n"), 0);
	KUNIT_EXPECT_EQ(test, lock_str(pc, "a 100000000000"), 0);
	KUNIT_EXPECT_EQ(test, lock_str(pc, "c"), 0);
	/* A prefix of another name is a name of its own. */
	KUNIT_EXPECT_EQ(test, lock_str(pc, "ab"), 0);
	KUNIT_EXPECT_STREQ(test, names(test, pc, true), "a ab b c\n");
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "b\n"), 0);
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "b"), 0);
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "ab"), 0);
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "x"), -EINVAL);
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "a 100000000000"), -EINVAL);
	KUNIT_EXPECT_STREQ(test, names(test, pc, true), "a c\n");
	KUNIT_EXPECT_STREQ(test, names(test, pc, false), "ab b\n");
	KUNIT_EXPECT_EQ(test, pc->nr_active, 2);
	KUNIT_EXPECT_EQ(test, pc->nr_locks, 4);
	/* Two events ended: b, ab (b's second unlock ended nothing). */
	KUNIT_EXPECT_EQ(test, pc->wakeup_count, 2);
	/* Every lock request was a denial under deny, and no source exists. */
	KUNIT_EXPECT_EQ(test, pc->denials, 4);
	KUNIT_EXPECT_NULL(test, find(pc, "a")->ws);
	/* Relocking without a timeout makes a permanent lock. */
	KUNIT_EXPECT_NE(test, find(pc, "a")->expires, 0);
	KUNIT_EXPECT_EQ(test, lock_str(pc, "a"), 0);
	KUNIT_EXPECT_EQ(test, find(pc, "a")->expires, 0);
}

static void table_limits(struct kunit *test)
{
	struct cpower_cell *pc = cpower_test_cell(test, CPOWER_DENY);

	pc->max_locks = 2;
	KUNIT_EXPECT_EQ(test, lock_str(pc, "a"), 0);
	KUNIT_EXPECT_EQ(test, lock_str(pc, "b"), 0);
	KUNIT_EXPECT_EQ(test, lock_str(pc, "c"), -ENOSPC);
	/* Locking an existing name needs no room. */
	KUNIT_EXPECT_EQ(test, lock_str(pc, "a 5000000000"), 0);
	/* An inactive name gives way, the least recently written first. */
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "b"), 0);
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "a"), 0);
	KUNIT_EXPECT_EQ(test, lock_str(pc, "c"), 0);
	KUNIT_EXPECT_STREQ(test, names(test, pc, false), "a\n");
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "b"), -EINVAL);
	KUNIT_EXPECT_EQ(test, pc->nr_locks, 2);
	pc->max_locks = 0;
	KUNIT_EXPECT_EQ(test, lock_str(pc, "a"), 0);
	KUNIT_EXPECT_EQ(test, lock_str(pc, "d"), -ENOSPC);
	KUNIT_EXPECT_EQ(test, pc->nr_locks, 2);
}

static int vote(struct cpower_cell *pc, const char *state)
{
	int ret;

	mutex_lock(&pc->lock);
	ret = cpower_vote_locked(pc, cpower_decode_state(state, strlen(state)));
	mutex_unlock(&pc->lock);
	return ret;
}

static int save_count(struct cpower_cell *pc, const char *buf)
{
	int ret;

	mutex_lock(&pc->lock);
	ret = cpower_save_count_locked(pc, buf);
	mutex_unlock(&pc->lock);
	return ret;
}

static void autosleep(struct cpower_cell *pc, enum cpower_state state)
{
	mutex_lock(&pc->lock);
	cpower_set_autosleep_locked(pc, state);
	mutex_unlock(&pc->lock);
}

static void vote_rules(struct kunit *test)
{
	struct cpower_cell *pc = cpower_test_cell(test, CPOWER_DENY);
	u64 changed;

	if (!IS_ENABLED(CONFIG_SUSPEND))
		kunit_skip(test, "no CONFIG_SUSPEND: no state to vote for");
	KUNIT_EXPECT_FALSE(test, pc->ready);
	KUNIT_EXPECT_EQ(test, pc->ready_changed_ns, 0);
	KUNIT_EXPECT_EQ(test, vote(pc, "disk"), -EINVAL);
	KUNIT_EXPECT_EQ(test, vote(pc, "mem\n"), 0);
	KUNIT_EXPECT_TRUE(test, pc->ready);
	changed = pc->ready_changed_ns;
	KUNIT_EXPECT_NE(test, changed, 0);
	/* A lock withdraws the vote. */
	KUNIT_EXPECT_EQ(test, lock_str(pc, "w"), 0);
	KUNIT_EXPECT_FALSE(test, pc->ready);
	KUNIT_EXPECT_GE(test, pc->ready_changed_ns, changed);
	/* wakeup_count: refused while a lock is active or for another value. */
	KUNIT_EXPECT_EQ(test, save_count(pc, "0"), -EINVAL);
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "w"), 0);
	KUNIT_EXPECT_EQ(test, pc->wakeup_count, 1);
	KUNIT_EXPECT_EQ(test, save_count(pc, "0"), -EINVAL);
	KUNIT_EXPECT_EQ(test, save_count(pc, "x"), -EINVAL);
	KUNIT_EXPECT_EQ(test, save_count(pc, "1\n"), 0);
	/* What holds no number fails and disarms nothing, as the kernel's. */
	KUNIT_EXPECT_EQ(test, save_count(pc, "x"), -EINVAL);
	KUNIT_EXPECT_EQ(test, save_count(pc, "-1"), -EINVAL);
	KUNIT_EXPECT_TRUE(test, pc->armed);
	/* sscanf()'s rules, as the kernel's: spaces before, text after. */
	KUNIT_EXPECT_EQ(test, save_count(pc, " 1 and more"), 0);
	KUNIT_EXPECT_TRUE(test, pc->armed);
	/* An event between the count and the vote aborts the "suspend". */
	KUNIT_EXPECT_EQ(test, lock_str(pc, "w"), 0);
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "w"), 0);
	KUNIT_EXPECT_EQ(test, vote(pc, "mem"), -EBUSY);
	KUNIT_EXPECT_FALSE(test, pc->ready);
	/* The check was used up: a vote without a count goes through. */
	KUNIT_EXPECT_EQ(test, vote(pc, "freeze"), 0);
	KUNIT_EXPECT_TRUE(test, pc->ready);
	KUNIT_EXPECT_EQ(test, save_count(pc, "2"), 0);
	KUNIT_EXPECT_EQ(test, vote(pc, "mem"), 0);

	/* Autosleep votes by itself whenever no lock is active. */
	autosleep(pc, CPOWER_STATE_MEM);
	KUNIT_EXPECT_TRUE(test, pc->ready);
	KUNIT_EXPECT_EQ(test, vote(pc, "mem"), -EBUSY);
	KUNIT_EXPECT_EQ(test, save_count(pc, "2"), -EBUSY);
	KUNIT_EXPECT_EQ(test, lock_str(pc, "a"), 0);
	KUNIT_EXPECT_EQ(test, lock_str(pc, "b"), 0);
	KUNIT_EXPECT_FALSE(test, pc->ready);
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "a"), 0);
	KUNIT_EXPECT_FALSE(test, pc->ready);
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "b"), 0);
	KUNIT_EXPECT_TRUE(test, pc->ready);
	autosleep(pc, CPOWER_STATE_ON);
	KUNIT_EXPECT_FALSE(test, pc->ready);
}

/* A state write's vote is a lease, so a writer that stops lets it lapse. */
static void vote_lease(struct kunit *test)
{
	struct cpower_cell *pc = cpower_test_cell(test, CPOWER_DENY);

	if (!IS_ENABLED(CONFIG_SUSPEND))
		kunit_skip(test, "no CONFIG_SUSPEND: no state to vote for");
	fake_clock(test);
	KUNIT_EXPECT_EQ(test, pc->vote_lease_ms, CPOWER_VOTE_LEASE_MS_DEFAULT);
	pc->vote_lease_ms = 30;
	KUNIT_EXPECT_EQ(test, vote(pc, "mem"), 0);
	KUNIT_EXPECT_TRUE(test, pc->ready);
	KUNIT_EXPECT_NE(test, pc->vote_expires, 0);
	/* It stands for its lease, and not a moment longer. */
	step(pc, 29);
	KUNIT_EXPECT_TRUE(test, pc->ready);
	step(pc, 1);
	KUNIT_EXPECT_FALSE(test, pc->ready);
	KUNIT_EXPECT_EQ(test, pc->vote_expires, 0);
	/* Written again in time, it stands: a lease from the last write. */
	pc->vote_lease_ms = 200;
	KUNIT_EXPECT_EQ(test, vote(pc, "mem"), 0);
	step(pc, 120);
	KUNIT_EXPECT_EQ(test, vote(pc, "mem"), 0);
	step(pc, 199);
	KUNIT_EXPECT_TRUE(test, pc->ready);
	step(pc, 1);
	KUNIT_EXPECT_FALSE(test, pc->ready);
	KUNIT_EXPECT_EQ(test, vote(pc, "mem"), 0);
	/* A lock ends it at once, lease and all. */
	KUNIT_EXPECT_EQ(test, lock_str(pc, "w"), 0);
	KUNIT_EXPECT_FALSE(test, pc->ready);
	KUNIT_EXPECT_EQ(test, pc->vote_expires, 0);
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "w"), 0);
	/* Autosleep's vote stands while it is on: no lease. */
	pc->vote_lease_ms = 1;
	autosleep(pc, CPOWER_STATE_MEM);
	KUNIT_EXPECT_TRUE(test, pc->ready);
	KUNIT_EXPECT_EQ(test, pc->vote_expires, 0);
	step(pc, 30);
	KUNIT_EXPECT_TRUE(test, pc->ready);
}

static bool ws_active(struct cpower_lock *l)
{
	return l->ws && l->ws->active;
}

/* A name cannot forge the host's source list: printable, one ':' per field. */
static void host_source_names(struct kunit *test)
{
	static const struct {
		const char *lock, *host;
	} cases[] = {
		{ "PowerManagerService.Display", "cask:c1:PowerManagerService.Display" },
		{ "a:host:x", "cask:c1:a?host?x" },
		{ "\x1b[31mred\x01", "cask:c1:?[31mred?" },
		{ "caf\xc3\xa9", "cask:c1:caf??" },
		{ "*job*/1", "cask:c1:*job*/1" },
	};
	char *name;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		name = cpower_ws_name("c1", cases[i].lock);
		KUNIT_ASSERT_NOT_NULL(test, name);
		KUNIT_EXPECT_STREQ(test, name, cases[i].host);
		kfree(name);
	}
}

/*
 * Issue 21: a wake_lock write allocates nothing under the cell's lock (a
 * cell's memory cgroup could make it reclaim there, with host paths
 * waiting): a new name without memory made beforehand is refused with
 * EAGAIN, and the memory made beforehand is what goes in the table.
 */
static void lock_allocates_before(struct kunit *test)
{
	struct cpower_cell *pc = cpower_test_cell(test, CPOWER_FORWARD);
	struct cpower_lock *spare, *mine;
	struct wakeup_source *ws;

	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, cpower_lock_locked(pc, "new", 3, 0, NULL), -EAGAIN);
	KUNIT_EXPECT_EQ(test, pc->nr_locks, 0);
	mutex_unlock(&pc->lock);

	mine = cpower_lock_alloc(pc, "new", 3);
	KUNIT_ASSERT_NOT_NULL(test, mine);
	spare = mine;
	ws = mine->ws;
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, cpower_lock_locked(pc, "new", 3, 0, &spare), 0);
	mutex_unlock(&pc->lock);
	KUNIT_EXPECT_NULL(test, spare);
	KUNIT_EXPECT_PTR_EQ(test, find(pc, "new"), mine);
	KUNIT_EXPECT_PTR_EQ(test, find(pc, "new")->ws, ws);
	/* A name that exists needs none and leaves the spare alone. */
	spare = cpower_lock_alloc(pc, "new", 3);
	KUNIT_ASSERT_NOT_NULL(test, spare);
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, cpower_lock_locked(pc, "new", 3, 0, NULL), 0);
	KUNIT_EXPECT_EQ(test, cpower_lock_locked(pc, "new", 3, 0, &spare), 0);
	mutex_unlock(&pc->lock);
	KUNIT_EXPECT_NOT_NULL(test, spare);
	cpower_lock_free_spare(spare);
	/* Deny: the spare's source is dropped, never added (kmemleak: freed). */
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, cpower_set_policy_locked(pc, CPOWER_DENY), 0);
	mutex_unlock(&pc->lock);
	cpower_cell_reap(pc);
	spare = cpower_lock_alloc(pc, "denied", 6);
	KUNIT_ASSERT_NOT_NULL(test, spare);
	mine = spare;
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, cpower_lock_locked(pc, "denied", 6, 0, &spare), 0);
	mutex_unlock(&pc->lock);
	KUNIT_EXPECT_NULL(test, spare);
	KUNIT_EXPECT_PTR_EQ(test, find(pc, "denied"), mine);
	KUNIT_EXPECT_NULL(test, mine->ws);
}

static ssize_t cpower_test_x_show(struct kobject *kobj, struct kobj_attribute *a,
				  char *buf)
{
	return sysfs_emit(buf, "0\n");
}

static struct kobj_attribute cpower_test_x = __ATTR(x, 0400, cpower_test_x_show, NULL);

static void cpower_test_kobj_put(void *kobj)
{
	kobject_put(kobj);
}

/*
 * fuzz_smoke, with cells going underneath, oopsed the unpatched kernel: the
 * first read of suspend_ready ran while sysfs_remove_dir() took the
 * directory away, which clears kobj->sd before it waits for the callbacks
 * running, and the lookup of the file was made in a NULL directory. The
 * node is learnt once while the directory is there; nothing is looked up
 * once it is gone.
 */
static void ready_kn_while_dir_goes(struct kunit *test)
{
	struct kobject *kobj = kobject_create_and_add("cask_power_kunit", kernel_kobj);
	struct cpower_cell *pc, *late;
	struct kernfs_node *kn;

	KUNIT_ASSERT_NOT_NULL(test, kobj);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, cpower_test_kobj_put, kobj), 0);
	KUNIT_ASSERT_EQ(test, sysfs_create_file(kobj, &cpower_test_x.attr), 0);
	/* After the kobject: the cells, and their references on nodes, go first. */
	pc = cpower_test_cell(test, CPOWER_DENY);
	late = cpower_test_cell(test, CPOWER_DENY);
	cpower_learn_ready_kn(pc, kobj, "x");
	kn = pc->ready_kn;
	KUNIT_ASSERT_NOT_NULL(test, kn);
	/* A later read keeps the node learnt. */
	cpower_learn_ready_kn(pc, kobj, "x");
	KUNIT_EXPECT_PTR_EQ(test, pc->ready_kn, kn);
	cpower_learn_ready_kn(late, kobj, "no_such_file");
	KUNIT_EXPECT_NULL(test, late->ready_kn);
	/* What a cell's removal does first. */
	kobject_del(kobj);
	KUNIT_ASSERT_NULL(test, kobj->sd);
	cpower_learn_ready_kn(late, kobj, "x");
	KUNIT_EXPECT_NULL(test, late->ready_kn);
	KUNIT_EXPECT_PTR_EQ(test, pc->ready_kn, kn);
}

/*
 * Issue 21: a cell that flips its vote as fast as it can wakes the host's
 * pollers at most once per CPOWER_NOTIFY_DELAY_MS: 200 flips in a row are
 * one or two notifications of suspend_ready (here a file of our own).
 */
static void notify_coalesced(struct kunit *test)
{
	struct kobject *kobj = kobject_create_and_add("cask_power_kunit", kernel_kobj);
	struct cpower_cell *pc;
	unsigned long start;
	unsigned int ms;
	int i, ret;

	KUNIT_ASSERT_NOT_NULL(test, kobj);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, cpower_test_kobj_put, kobj), 0);
	KUNIT_ASSERT_EQ(test, sysfs_create_file(kobj, &cpower_test_x.attr), 0);
	/* After the kobject: the cell, and its reference on the node, go first. */
	pc = cpower_test_cell(test, CPOWER_DENY);
	mutex_lock(&pc->lock);
	pc->ready_kn = sysfs_get_dirent(kobj->sd, "x");
	mutex_unlock(&pc->lock);
	KUNIT_ASSERT_NOT_NULL(test, pc->ready_kn);
	start = jiffies;
	for (i = 0; i < 100; i++) {
		mutex_lock(&pc->lock);
		ret = cpower_vote_locked(pc, CPOWER_STATE_MEM);
		mutex_unlock(&pc->lock);
		KUNIT_ASSERT_EQ(test, ret, 0);
		KUNIT_ASSERT_EQ(test, lock_str(pc, "f"), 0);
		KUNIT_ASSERT_EQ(test, unlock_str(pc, "f"), 0);
	}
	ms = jiffies_to_msecs(jiffies - start);
	flush_delayed_work(&pc->notify);
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_GE(test, pc->notified, 1);
	KUNIT_EXPECT_LE(test, pc->notified, ms / CPOWER_NOTIFY_DELAY_MS + 2);
	kunit_info(test, "200 flips in %u ms: %llu notifications", ms, pc->notified);
	mutex_unlock(&pc->lock);
}

/* Issue 21: the names a cell's files list cannot drive a terminal. */
static void shown_names_escaped(struct kunit *test)
{
	struct cpower_cell *pc = cpower_test_cell(test, CPOWER_DENY);

	KUNIT_ASSERT_EQ(test, lock_str(pc, "\x1b[31mred\x01"), 0);
	KUNIT_ASSERT_EQ(test, lock_str(pc, "plain"), 0);
	KUNIT_EXPECT_STREQ(test, names(test, pc, true), "\\033[31mred\\001 plain\n");
	KUNIT_ASSERT_EQ(test, unlock_str(pc, "\x1b[31mred\x01"), 0);
	KUNIT_EXPECT_STREQ(test, names(test, pc, false), "\\033[31mred\\001\n");
	/* A backslash is escaped too, or "a\\001" would read as "a" and 0x01. */
	KUNIT_ASSERT_EQ(test, lock_str(pc, "a\\001"), 0);
	KUNIT_EXPECT_STREQ(test, names(test, pc, true), "a\\134001 plain\n");
}

/*
 * suspend_blockers' text is the count, then exactly the names written,
 * whatever else the names buffer (a kmalloc page) holds: no stale kernel
 * memory reaches the reader.
 */
static void blockers_text(struct kunit *test)
{
	char *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	char *names = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, names);
	/* Garbage, as kmalloc may give, but ended: no overrun if it fails. */
	memset(names, 'x', PAGE_SIZE - 1);
	names[PAGE_SIZE - 1] = '\0';
	KUNIT_EXPECT_EQ(test, cpower_emit_blockers(buf, 0, names, 0), 2);
	KUNIT_EXPECT_STREQ(test, buf, "0\n");
	memcpy(names, "c1\nc2\n", 6);
	KUNIT_EXPECT_EQ(test, cpower_emit_blockers(buf, 2, names, 6), 8);
	KUNIT_EXPECT_STREQ(test, buf, "2\nc1\nc2\n");
}

/* A cap cell blocks a suspend only while its budget lasts, not for ever. */
static void blockers_policy_and_budget(struct kunit *test)
{
	struct cpower_cell *pc = cpower_test_cell(test, CPOWER_DENY);

	mutex_lock(&pc->lock);
	KUNIT_EXPECT_FALSE(test, cpower_blocks_suspend_locked(pc));
	KUNIT_EXPECT_EQ(test, cpower_set_policy_locked(pc, CPOWER_FORWARD), 0);
	KUNIT_EXPECT_TRUE(test, cpower_blocks_suspend_locked(pc));
	KUNIT_EXPECT_EQ(test, cpower_vote_locked(pc, CPOWER_STATE_MEM), 0);
	KUNIT_EXPECT_FALSE(test, cpower_blocks_suspend_locked(pc));
	mutex_unlock(&pc->lock);

	pc = cpower_test_cell(test, CPOWER_CAP);
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_TRUE(test, cpower_blocks_suspend_locked(pc));
	/* Spent: its missing vote holds nothing; renewed, it does again. */
	pc->budget_spent = true;
	KUNIT_EXPECT_FALSE(test, cpower_blocks_suspend_locked(pc));
	cpower_renew_budget_locked(pc);
	KUNIT_EXPECT_TRUE(test, cpower_blocks_suspend_locked(pc));
	mutex_unlock(&pc->lock);
}

/* A new cell (any user can make one) does not hold the host awake. */
static void new_cell_denies(struct kunit *test)
{
	struct cpower_cell *pc = kzalloc(sizeof(*pc), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pc);
	cpower_cell_init(pc, "kunit");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, cpower_test_exit, pc), 0);
	KUNIT_EXPECT_EQ(test, pc->policy, CPOWER_DENY);
	KUNIT_EXPECT_EQ(test, lock_str(pc, "k"), 0);
	KUNIT_ASSERT_NOT_NULL(test, find(pc, "k"));
	KUNIT_EXPECT_NULL(test, find(pc, "k")->ws);
}

static void policies_and_sources(struct kunit *test)
{
	struct cpower_cell *pc = cpower_test_cell(test, CPOWER_FORWARD);
	struct cpower_lock *l;

	if (!IS_ENABLED(CONFIG_PM_SLEEP))
		kunit_skip(test, "no CONFIG_PM_SLEEP: no wakeup sources");
	fake_clock(test);
	KUNIT_ASSERT_EQ(test, lock_str(pc, "k"), 0);
	l = find(pc, "k");
	KUNIT_ASSERT_NOT_NULL(test, l);
	KUNIT_ASSERT_NOT_NULL(test, l->ws);
	KUNIT_EXPECT_STREQ(test, l->ws->name, "cask:kunit:k");
	/* Not in /sys/class/wakeup, which anyone reads: names stay the host's. */
	KUNIT_EXPECT_NULL(test, l->ws->dev);
	KUNIT_EXPECT_TRUE(test, ws_active(l));
	KUNIT_EXPECT_EQ(test, unlock_str(pc, "k"), 0);
	KUNIT_EXPECT_FALSE(test, ws_active(l));
	/* An inactive name keeps its source, as the kernel's wakelocks do. */
	KUNIT_EXPECT_NOT_NULL(test, l->ws);
	KUNIT_ASSERT_EQ(test, lock_str(pc, "k"), 0);
	KUNIT_EXPECT_TRUE(test, ws_active(l));

	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, cpower_set_policy_locked(pc, CPOWER_DENY), 0);
	mutex_unlock(&pc->lock);
	KUNIT_EXPECT_NULL(test, l->ws);
	KUNIT_EXPECT_TRUE(test, l->active);
	/* Removed only once pc->lock is dropped: removal waits for SRCU. */
	KUNIT_EXPECT_FALSE(test, list_empty(&pc->reap));
	cpower_cell_reap(pc);
	KUNIT_EXPECT_TRUE(test, list_empty(&pc->reap));
	KUNIT_ASSERT_EQ(test, lock_str(pc, "k"), 0);
	KUNIT_EXPECT_EQ(test, pc->denials, 1);

	/* Cap: held again at once, released once the budget is used up. */
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, cpower_set_policy_locked(pc, CPOWER_CAP), 0);
	mutex_unlock(&pc->lock);
	KUNIT_EXPECT_TRUE(test, ws_active(l));
	step(pc, 20);
	mutex_lock(&pc->lock);
	cpower_set_max_hold_locked(pc, 10);
	mutex_unlock(&pc->lock);
	step(pc, 9);
	KUNIT_EXPECT_TRUE(test, ws_active(l));
	step(pc, 1);
	KUNIT_EXPECT_FALSE(test, ws_active(l));
	KUNIT_EXPECT_TRUE(test, pc->budget_spent);
	KUNIT_EXPECT_EQ(test, pc->caps, 1);
	/* Neither locking again nor a new activation renews it. */
	KUNIT_ASSERT_EQ(test, lock_str(pc, "k"), 0);
	KUNIT_EXPECT_FALSE(test, ws_active(l));
	KUNIT_ASSERT_EQ(test, unlock_str(pc, "k"), 0);
	KUNIT_ASSERT_EQ(test, lock_str(pc, "k"), 0);
	KUNIT_EXPECT_FALSE(test, ws_active(l));
	/* The host's root does, by setting the budget. */
	mutex_lock(&pc->lock);
	cpower_set_max_hold_locked(pc, 60000);
	mutex_unlock(&pc->lock);
	KUNIT_EXPECT_TRUE(test, ws_active(l));
	/* Forward takes back a capped lock. */
	mutex_lock(&pc->lock);
	cpower_set_max_hold_locked(pc, 1);
	mutex_unlock(&pc->lock);
	step(pc, 1);
	KUNIT_EXPECT_FALSE(test, ws_active(l));
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, cpower_set_policy_locked(pc, CPOWER_FORWARD), 0);
	mutex_unlock(&pc->lock);
	KUNIT_EXPECT_TRUE(test, ws_active(l));
}

/*
 * Names and activations share one budget, so neither a new name nor a
 * relock renews the cap; only a renewal (a completed host suspend, the
 * host's root) gives it back.
 */
static void budget_per_cell(struct kunit *test)
{
	struct cpower_cell *pc = cpower_test_cell(test, CPOWER_CAP);
	u64 used;

	if (!IS_ENABLED(CONFIG_PM_SLEEP))
		kunit_skip(test, "no CONFIG_PM_SLEEP: no wakeup sources");
	fake_clock(test);
	mutex_lock(&pc->lock);
	cpower_set_max_hold_locked(pc, 1200);
	mutex_unlock(&pc->lock);
	/* Two names at once: one hold, counted once. */
	KUNIT_ASSERT_EQ(test, lock_str(pc, "a"), 0);
	KUNIT_ASSERT_EQ(test, lock_str(pc, "b"), 0);
	KUNIT_EXPECT_EQ(test, pc->nr_host_held, 2);
	step(pc, 50);
	KUNIT_ASSERT_EQ(test, unlock_str(pc, "a"), 0);
	KUNIT_ASSERT_EQ(test, unlock_str(pc, "b"), 0);
	KUNIT_EXPECT_EQ(test, pc->nr_host_held, 0);
	used = pc->budget_used_ns;
	/* The hold, and the grace that follows it, charged at once. */
	KUNIT_EXPECT_EQ(test, used, (50 + CPOWER_CAP_GRACE_MS) * NSEC_PER_MSEC);
	KUNIT_EXPECT_FALSE(test, pc->budget_spent);
	/* Not holding: nothing more is used, whenever the work looks. */
	step(pc, 30);
	KUNIT_EXPECT_EQ(test, pc->budget_used_ns, used);
	/*
	 * A new name goes on from there, with the rest of the grace given
	 * back (it is held and charged itself), and runs out of it.
	 */
	KUNIT_ASSERT_EQ(test, lock_str(pc, "c"), 0);
	KUNIT_EXPECT_EQ(test, pc->budget_used_ns, (50 + 30) * NSEC_PER_MSEC);
	KUNIT_EXPECT_TRUE(test, ws_active(find(pc, "c")));
	/* 50 + 30 used: the rest of the 1200 ms, to the millisecond. */
	step(pc, 1200 - 80 - 1);
	KUNIT_EXPECT_FALSE(test, pc->budget_spent);
	KUNIT_EXPECT_TRUE(test, ws_active(find(pc, "c")));
	step(pc, 1);
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_TRUE(test, pc->budget_spent);
	KUNIT_EXPECT_EQ(test, pc->nr_host_held, 0);
	KUNIT_EXPECT_EQ(test, pc->caps, 1);
	mutex_unlock(&pc->lock);
	KUNIT_EXPECT_FALSE(test, ws_active(find(pc, "c")));
	/* Cycling locks and names gets nothing back. */
	KUNIT_ASSERT_EQ(test, unlock_str(pc, "c"), 0);
	KUNIT_ASSERT_EQ(test, lock_str(pc, "c"), 0);
	KUNIT_ASSERT_EQ(test, lock_str(pc, "d"), 0);
	KUNIT_EXPECT_EQ(test, pc->nr_host_held, 0);
	KUNIT_EXPECT_EQ(test, pc->caps, 1);
	/* Renewed (as after a host suspend): held again, with a whole budget. */
	mutex_lock(&pc->lock);
	cpower_renew_budget_locked(pc);
	KUNIT_EXPECT_FALSE(test, pc->budget_spent);
	KUNIT_EXPECT_EQ(test, pc->budget_used_ns, 0);
	KUNIT_EXPECT_EQ(test, pc->nr_host_held, 2);
	mutex_unlock(&pc->lock);
	KUNIT_EXPECT_TRUE(test, ws_active(find(pc, "d")));
	/* Time under forward is not the cap's. */
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, cpower_set_policy_locked(pc, CPOWER_FORWARD), 0);
	mutex_unlock(&pc->lock);
	step(pc, 250);
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, cpower_set_policy_locked(pc, CPOWER_CAP), 0);
	KUNIT_EXPECT_FALSE(test, pc->budget_spent);
	KUNIT_EXPECT_EQ(test, pc->budget_used_ns, 0);
	mutex_unlock(&pc->lock);
	KUNIT_EXPECT_TRUE(test, ws_active(find(pc, "d")));
}

/*
 * Issue 21 item 12: every activation is a wakeup event that aborts a host
 * suspend. Under the cap, pulsing a lock costs what holding it would (each
 * release is followed by a charged grace), so it runs out of the budget in
 * the budget's time, and then the source is never activated again.
 */
static void pulses_cost_holding(struct kunit *test)
{
	struct cpower_cell *pc = cpower_test_cell(test, CPOWER_CAP);
	struct cpower_lock *l;
	unsigned long events;
	u64 start;
	int i;

	if (!IS_ENABLED(CONFIG_PM_SLEEP))
		kunit_skip(test, "no CONFIG_PM_SLEEP: no wakeup sources");
	fake_clock(test);
	start = cpower_now();
	mutex_lock(&pc->lock);
	cpower_set_max_hold_locked(pc, 1500);
	mutex_unlock(&pc->lock);
	for (i = 0; i < 400 && !READ_ONCE(pc->budget_spent); i++) {
		KUNIT_ASSERT_EQ(test, lock_str(pc, "pulse"), 0);
		KUNIT_ASSERT_EQ(test, unlock_str(pc, "pulse"), 0);
		step(pc, 20);
	}
	KUNIT_EXPECT_TRUE(test, READ_ONCE(pc->budget_spent));
	/*
	 * 1.5 s of budget: spent within it, give or take the grace (a pulse
	 * costs its 20 ms; the last one's grace is charged at once).
	 */
	KUNIT_EXPECT_LE(test, cpower_now() - start, (1500ULL + 200) * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, pc->caps, 1);
	l = find(pc, "pulse");
	KUNIT_ASSERT_NOT_NULL(test, l);
	KUNIT_EXPECT_FALSE(test, ws_active(l));
	/* Spent: pulses are no wakeup events any more. */
	events = l->ws->event_count;
	for (i = 0; i < 20; i++) {
		KUNIT_ASSERT_EQ(test, lock_str(pc, "pulse"), 0);
		KUNIT_EXPECT_FALSE(test, ws_active(l));
		KUNIT_ASSERT_EQ(test, unlock_str(pc, "pulse"), 0);
	}
	KUNIT_EXPECT_EQ(test, l->ws->event_count, events);
	KUNIT_EXPECT_FALSE(test, ws_active(l));
}

/* The expire work ends timed locks, and capped holds, on its own. */
static void timers_expire(struct kunit *test)
{
	struct cpower_cell *pc = cpower_test_cell(test, CPOWER_CAP);
	struct cpower_lock *l;

	fake_clock(test);
	mutex_lock(&pc->lock);
	cpower_set_max_hold_locked(pc, 30);
	mutex_unlock(&pc->lock);
	KUNIT_ASSERT_EQ(test, lock_str(pc, "short 20000000"), 0);
	KUNIT_ASSERT_EQ(test, lock_str(pc, "long"), 0);
	l = find(pc, "long");
	KUNIT_ASSERT_NOT_NULL(test, l);
	/* Each at its time: the timeout at 20 ms, the budget at 30. */
	step(pc, 19);
	KUNIT_EXPECT_EQ(test, pc->nr_active, 2);
	step(pc, 1);
	KUNIT_EXPECT_EQ(test, pc->nr_active, 1);
	KUNIT_EXPECT_TRUE(test, l->host_held);
	step(pc, 10);
	mutex_lock(&pc->lock);
	KUNIT_EXPECT_EQ(test, pc->nr_active, 1);
	KUNIT_EXPECT_FALSE(test, find(pc, "short")->active);
	KUNIT_EXPECT_TRUE(test, l->active);
	KUNIT_EXPECT_FALSE(test, l->host_held);
	KUNIT_EXPECT_EQ(test, pc->caps, 1);
	KUNIT_EXPECT_EQ(test, pc->wakeup_count, 1);
	KUNIT_EXPECT_EQ(test, cpower_held_ns_locked(pc), (20 + 30) * NSEC_PER_MSEC);
	mutex_unlock(&pc->lock);
	KUNIT_EXPECT_STREQ(test, names(test, pc, true), "long\n");
	KUNIT_EXPECT_STREQ(test, names(test, pc, false), "short\n");
}

static struct kunit_case cask_power_cases[] = {
	KUNIT_CASE(parse_lock_formats),
	KUNIT_CASE(parse_unlock_formats),
	KUNIT_CASE(parse_count_formats),
	KUNIT_CASE(policy_and_state_names),
	KUNIT_CASE(expiry_rules),
	KUNIT_CASE(deadlines),
	KUNIT_CASE(budget_arithmetic),
	KUNIT_CASE(budget_per_cell),
	KUNIT_CASE(pulses_cost_holding),
	KUNIT_CASE(delay_never_early),
	KUNIT_CASE(table_lock_unlock),
	KUNIT_CASE(table_limits),
	KUNIT_CASE(vote_rules),
	KUNIT_CASE(vote_lease),
	KUNIT_CASE(host_source_names),
	KUNIT_CASE(shown_names_escaped),
	KUNIT_CASE(blockers_text),
	KUNIT_CASE(blockers_policy_and_budget),
	KUNIT_CASE(lock_allocates_before),
	KUNIT_CASE(notify_coalesced),
	KUNIT_CASE(ready_kn_while_dir_goes),
	KUNIT_CASE(new_cell_denies),
	KUNIT_CASE(policies_and_sources),
	KUNIT_CASE(timers_expire),
	{}
};

static struct kunit_suite cask_power_suite = {
	.name = "cask_power",
	.test_cases = cask_power_cases,
};

kunit_test_suite(cask_power_suite);

MODULE_DESCRIPTION("KUnit tests for cask_power");
MODULE_LICENSE("GPL");
