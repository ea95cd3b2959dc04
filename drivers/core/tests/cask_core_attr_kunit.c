// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the drivers' sysfs helpers (include/cask/attr.h): the
 * two owners' rules for limits, the limit format, the files of limits,
 * counters.
 *
 * The rules are checked with the test thread's own credentials (the
 * host's root: every capability, the initial namespaces) and with a copy
 * that lacks CAP_SYS_ADMIN, installed with override_creds() around the
 * calls only, so that a failed check cannot leave it in place.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/limits.h>
#include <linux/string.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>
#include <cask/attr.h>

#include "core.h"

MODULE_IMPORT_NS(CASK);

/*
 * Our credentials less CAP_SYS_ADMIN, until cask_attr_test_restore().
 * Not a KUnit action: those may run in another thread than the test.
 */
static const struct cred *cask_attr_test_drop_admin(struct kunit *test)
{
	struct cred *cred = prepare_creds();
	const struct cred *old;

	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_SYS_ADMIN);
	old = override_creds(cred);
	/* override_creds() took a reference of its own. */
	put_cred(cred);
	return old;
}

static void cask_attr_test_restore(const struct cred *old)
{
	revert_creds(old);
}

static void cask_attr_test_host_may_admin(struct kunit *test)
{
	struct cask_cell *host = cask_cell_get_host();
	const struct cred *old;
	bool host_ok, cell_ok;

	KUNIT_ASSERT_NOT_NULL(test, host);
	/* The host's root owns both kinds of limits of every cell. */
	KUNIT_EXPECT_TRUE(test, cask_host_may_admin());
	KUNIT_EXPECT_TRUE(test, cask_cell_may_admin(host));
	old = cask_attr_test_drop_admin(test);
	host_ok = cask_host_may_admin();
	cell_ok = cask_cell_may_admin(host);
	cask_attr_test_restore(old);
	KUNIT_EXPECT_FALSE(test, host_ok);
	KUNIT_EXPECT_FALSE(test, cell_ok);
	cask_cell_put(host);
}

/*
 * A cell's own limits are checked in its user namespace. A stand-in cell
 * with a child namespace of the initial one, owned by our uid (as a
 * container's namespace made by the host's root is), shows it: without
 * CAP_SYS_ADMIN, the owner still has every capability in the child, and
 * none in the initial namespace, so the two answers differ only if the
 * helper looks at the cell's namespace. The host's rule is not moved.
 */
static void cask_attr_test_cell_ns(struct kunit *test)
{
	struct user_namespace *child;
	bool child_ok, init_ok, host_ok;
	struct cask_cell *cell;
	const struct cred *old;

	cell = kunit_kzalloc(test, sizeof(*cell), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cell);
	child = kunit_kzalloc(test, sizeof(*child), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, child);
	child->parent = &init_user_ns;
	child->level = init_user_ns.level + 1;
	child->owner = current_euid();
	cell->user_ns = child;
	KUNIT_EXPECT_TRUE(test, cask_cell_may_admin(cell));
	old = cask_attr_test_drop_admin(test);
	child_ok = cask_cell_may_admin(cell);
	cell->user_ns = &init_user_ns;
	init_ok = cask_cell_may_admin(cell);
	host_ok = cask_host_may_admin();
	cask_attr_test_restore(old);
	KUNIT_EXPECT_TRUE(test, child_ok);
	KUNIT_EXPECT_FALSE(test, init_ok);
	KUNIT_EXPECT_FALSE(test, host_ok);
	/* Another owner: only the parent's capability would count. */
	child->owner = KUIDT_INIT(__kuid_val(current_euid()) + 1);
	cell->user_ns = child;
	old = cask_attr_test_drop_admin(test);
	child_ok = cask_cell_may_admin(cell);
	cask_attr_test_restore(old);
	KUNIT_EXPECT_FALSE(test, child_ok);
	KUNIT_EXPECT_TRUE(test, cask_cell_may_admin(cell));
}

static void cask_attr_test_limit_parse(struct kunit *test)
{
	static const char *const bad[] = {
		"", "-1", "abc", "12abc", "maximum", "0x40", "1.5", "max max",
		"99999999999999999999999", " 1",
	};
	long val = 7;
	size_t i;

	KUNIT_EXPECT_EQ(test, cask_limit_parse("max", &val), 0);
	KUNIT_EXPECT_EQ(test, val, LONG_MAX);
	KUNIT_EXPECT_EQ(test, cask_limit_parse("0\n", &val), 0);
	KUNIT_EXPECT_EQ(test, val, 0L);
	KUNIT_EXPECT_EQ(test, cask_limit_parse("max\n", &val), 0);
	KUNIT_EXPECT_EQ(test, val, LONG_MAX);
	KUNIT_EXPECT_EQ(test, cask_limit_parse("4096", &val), 0);
	KUNIT_EXPECT_EQ(test, val, 4096L);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_EQ_MSG(test, cask_limit_parse(bad[i], &val), -EINVAL,
				    "'%s'", bad[i]);
		/* A refused write leaves the limit alone. */
		KUNIT_EXPECT_EQ(test, val, 4096L);
	}
}

static void cask_attr_test_limit_emit(struct kunit *test)
{
	char *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, cask_limit_emit(buf, LONG_MAX), 4L);
	KUNIT_EXPECT_STREQ(test, buf, "max\n");
	KUNIT_EXPECT_EQ(test, cask_limit_emit(buf, 0), 2L);
	KUNIT_EXPECT_STREQ(test, buf, "0\n");
	KUNIT_EXPECT_EQ(test, cask_limit_emit(buf, LONG_MAX - 1), 20L);
	KUNIT_EXPECT_STREQ(test, buf, "9223372036854775806\n");
}

struct cask_attr_test_state {
	int other;
	atomic_long_t first;
	atomic_long_t second;
	long host;
	long cell;
};

static CASK_ATTR_COUNTER(first, struct cask_attr_test_state, first);
static CASK_ATTR_COUNTER(second, struct cask_attr_test_state, second);

/*
 * The show finds the driver's state as cask_driver_data_from_kobj() does
 * for a directory cask_core made: a stand-in directory suffices.
 */
static void cask_attr_test_counter(struct kunit *test)
{
	struct cask_attr_test_state state = {
		.first = ATOMIC_LONG_INIT(-5),
		.second = ATOMIC_LONG_INIT(LONG_MAX),
	};
	struct cask_cell_drv cd = { .data = &state };
	char *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_STREQ(test, cask_attr_first.kattr.attr.name, "first");
	KUNIT_EXPECT_EQ(test, cask_attr_first.kattr.attr.mode, (umode_t)0400);
	KUNIT_EXPECT_NULL(test, cask_attr_first.kattr.store);
	KUNIT_EXPECT_EQ(test, cask_attr_first.kattr.show(&cd.kobj, &cask_attr_first.kattr,
							 buf), 3L);
	KUNIT_EXPECT_STREQ(test, buf, "-5\n");
	KUNIT_EXPECT_EQ(test, cask_attr_second.kattr.show(&cd.kobj, &cask_attr_second.kattr,
							  buf), 20L);
	KUNIT_EXPECT_STREQ(test, buf, "9223372036854775807\n");
	atomic_long_inc(&state.first);
	cask_counter_show(&cd.kobj, &cask_attr_first.kattr, buf);
	KUNIT_EXPECT_STREQ(test, buf, "-4\n");
}

static CASK_ATTR_HOST_LIMIT(host, struct cask_attr_test_state, host);
static CASK_ATTR_CELL_LIMIT(cell, struct cask_attr_test_state, cell);

/* A write to @kattr as root less CAP_SYS_ADMIN. */
static ssize_t cask_attr_test_store_unprivileged(struct kunit *test,
						 struct kobject *kobj,
						 struct kobj_attribute *kattr,
						 const char *buf)
{
	const struct cred *old = cask_attr_test_drop_admin(test);
	ssize_t ret = kattr->store(kobj, kattr, buf, strlen(buf));

	cask_attr_test_restore(old);
	return ret;
}

/*
 * What both kinds of limit files do with what is written, from a writer
 * the owner's rule lets through; the field next to the limit stays put.
 */
static void cask_attr_test_limit_file(struct kunit *test,
				      struct cask_attr_test_state *state,
				      struct kobject *kobj,
				      struct kobj_attribute *kattr, long *limit)
{
	static const char *const bad[] = {
		"-1", "-9223372036854775808", "9223372036854775808",
		"99999999999999999999999", "", "max1", "12abc",
	};
	char *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	size_t i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, kattr->show(kobj, kattr, buf), 4L);
	KUNIT_EXPECT_STREQ(test, buf, "max\n");
	KUNIT_EXPECT_EQ(test, kattr->store(kobj, kattr, "4096\n", 5), 5L);
	KUNIT_EXPECT_EQ(test, *limit, 4096L);
	KUNIT_EXPECT_EQ(test, kattr->show(kobj, kattr, buf), 5L);
	KUNIT_EXPECT_STREQ(test, buf, "4096\n");
	KUNIT_EXPECT_EQ(test, kattr->store(kobj, kattr, "0", 1), 1L);
	KUNIT_EXPECT_EQ(test, *limit, 0L);
	KUNIT_EXPECT_EQ(test, kattr->store(kobj, kattr, "9223372036854775806", 19),
			19L);
	KUNIT_EXPECT_EQ(test, *limit, LONG_MAX - 1);
	KUNIT_EXPECT_EQ(test, kattr->store(kobj, kattr, "max\n", 4), 4L);
	KUNIT_EXPECT_EQ(test, *limit, LONG_MAX);
	KUNIT_EXPECT_EQ(test, kattr->store(kobj, kattr, "7", 1), 1L);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_EQ_MSG(test, kattr->store(kobj, kattr, bad[i],
						       strlen(bad[i])),
				    (ssize_t)-EINVAL, "'%s'", bad[i]);
		KUNIT_EXPECT_EQ(test, *limit, 7L);
	}
	KUNIT_EXPECT_EQ(test, state->other, 3);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&state->first), 5L);
}

/*
 * One kind of limit file, @ext, for the limit at @own: its declaration,
 * its format, and its owner's rule refusing root less CAP_SYS_ADMIN
 * before the value is read. The directory's cell is a stand-in in the
 * initial user namespace, where the test can drop the capability.
 */
static void cask_attr_test_limit_kind(struct kunit *test,
				      struct cask_ext_attr *ext, umode_t mode,
				      ssize_t (*store)(struct kobject *,
						       struct kobj_attribute *,
						       const char *, size_t),
				      size_t own)
{
	static const char *const refused[] = { "max", "1", "-1" };
	struct cask_attr_test_state state = {
		.other = 3,
		.first = ATOMIC_LONG_INIT(5),
		.host = LONG_MAX,
		.cell = LONG_MAX,
	};
	long *limit = (long *)((char *)&state + own);
	struct kobj_attribute *kattr = &ext->kattr;
	struct cask_cell_drv cd = { .data = &state };
	size_t i;

	cd.cell = kunit_kzalloc(test, sizeof(*cd.cell), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cd.cell);
	cd.cell->user_ns = &init_user_ns;
	KUNIT_EXPECT_EQ(test, cask_ext_attr_var(kattr), own);
	KUNIT_EXPECT_EQ(test, kattr->attr.mode, mode);
	KUNIT_EXPECT_TRUE(test, kattr->show == cask_limit_show);
	KUNIT_EXPECT_TRUE(test, kattr->store == store);
	cask_attr_test_limit_file(test, &state, &cd.kobj, kattr, limit);
	for (i = 0; i < ARRAY_SIZE(refused); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    cask_attr_test_store_unprivileged(test, &cd.kobj,
								      kattr,
								      refused[i]),
				    (ssize_t)-EPERM, "'%s'", refused[i]);
	KUNIT_EXPECT_EQ(test, *limit, 7L);
	/* Only the file's own field moved. */
	KUNIT_EXPECT_EQ(test, state.host == 7 ? state.cell : state.host, LONG_MAX);
}

static void cask_attr_test_host_limit(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, cask_attr_host.kattr.attr.name, "host");
	cask_attr_test_limit_kind(test, &cask_attr_host, 0644,
				  cask_host_limit_store,
				  offsetof(struct cask_attr_test_state, host));
}

static void cask_attr_test_cell_limit(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, cask_attr_cell.kattr.attr.name, "cell");
	cask_attr_test_limit_kind(test, &cask_attr_cell, 0600,
				  cask_cell_limit_store,
				  offsetof(struct cask_attr_test_state, cell));
}

/* The modes attr.h promises: what the ABI documents for every file. */
static ssize_t mode_show(struct kobject *kobj, struct kobj_attribute *kattr,
			 char *buf)
{
	return 0;
}

static ssize_t mode_store(struct kobject *kobj, struct kobj_attribute *kattr,
			  const char *buf, size_t count)
{
	return count;
}

static CASK_EXT_ATTR_RO(cask_attr_test_ext_ro, mode, 3);
static CASK_EXT_ATTR_RW(cask_attr_test_ext_rw, mode, ULONG_MAX);

static void cask_attr_test_modes(struct kunit *test)
{
	{
		static CASK_ATTR_RO(mode);

		KUNIT_EXPECT_EQ(test, cask_attr_mode.attr.mode, (umode_t)0400);
		KUNIT_EXPECT_TRUE(test, cask_attr_mode.show == mode_show);
		KUNIT_EXPECT_NULL(test, cask_attr_mode.store);
	}
	{
		static CASK_ATTR_RW(mode);

		KUNIT_EXPECT_EQ(test, cask_attr_mode.attr.mode, (umode_t)0600);
		KUNIT_EXPECT_TRUE(test, cask_attr_mode.store == mode_store);
	}
	{
		static CASK_ATTR_HOST_RW(mode);

		KUNIT_EXPECT_EQ(test, cask_attr_mode.attr.mode, (umode_t)0644);
		KUNIT_EXPECT_TRUE(test, cask_attr_mode.store == mode_store);
	}
	{
		static CASK_ATTR_PUBLIC_RO(mode);

		KUNIT_EXPECT_EQ(test, cask_attr_mode.attr.mode, (umode_t)0444);
		KUNIT_EXPECT_NULL(test, cask_attr_mode.store);
		KUNIT_EXPECT_STREQ(test, cask_attr_mode.attr.name, "mode");
	}
	/* Files told apart by their number, not their name. */
	KUNIT_EXPECT_EQ(test, cask_ext_attr_var(&cask_attr_test_ext_ro.kattr), 3UL);
	KUNIT_EXPECT_EQ(test, cask_attr_test_ext_ro.kattr.attr.mode, (umode_t)0400);
	KUNIT_EXPECT_NULL(test, cask_attr_test_ext_ro.kattr.store);
	KUNIT_EXPECT_EQ(test, cask_ext_attr_var(&cask_attr_test_ext_rw.kattr), ULONG_MAX);
	KUNIT_EXPECT_EQ(test, cask_attr_test_ext_rw.kattr.attr.mode, (umode_t)0600);
	KUNIT_EXPECT_TRUE(test, cask_attr_test_ext_rw.kattr.store == mode_store);
}

static struct kunit_case cask_core_attr_test_cases[] = {
	KUNIT_CASE(cask_attr_test_host_may_admin),
	KUNIT_CASE(cask_attr_test_cell_ns),
	KUNIT_CASE(cask_attr_test_limit_parse),
	KUNIT_CASE(cask_attr_test_limit_emit),
	KUNIT_CASE(cask_attr_test_counter),
	KUNIT_CASE(cask_attr_test_host_limit),
	KUNIT_CASE(cask_attr_test_cell_limit),
	KUNIT_CASE(cask_attr_test_modes),
	{}
};

static struct kunit_suite cask_core_attr_test_suite = {
	.name = "cask_core_attr",
	.test_cases = cask_core_attr_test_cases,
};

kunit_test_suite(cask_core_attr_test_suite);

MODULE_DESCRIPTION("KUnit tests for cask_core's sysfs helpers");
MODULE_LICENSE("GPL");
