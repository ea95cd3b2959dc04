// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_core's chardev helper: a round trip and a reload,
 * the node names and modes, and that each failure, at the arguments, the
 * name, the region or a node, leaves nothing behind and nothing for
 * cask_chardev_remove() to undo.
 *
 * The chardevs are real: their nodes appear in devtmpfs under
 * /dev/cask_kunit/ while a case runs. What a failed add must have undone
 * is checked from outside: the class is unregistered, the region's numbers
 * can be reserved again, the cdev's last reference is gone, and the same
 * chardev can be added again (a node left over would clash in sysfs).
 */
#include <kunit/test.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/kref.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <cask/chardev.h>

MODULE_IMPORT_NS(CASK);

#define CASK_CHR_TEST_NAME "cask_kunit_chr"
#define CASK_CHR_TEST_MINORS 4

static const struct file_operations cask_chr_test_fops = {
	.owner = THIS_MODULE,
};

/* The third has no name: an add that makes it fails after two nodes. */
static const char *const cask_chr_test_nodes[] = { "a", "b", "" };

static void cask_chr_test_remove(void *cd)
{
	cask_chardev_remove(cd);
}

/* A chardev removed when the case ends, whatever it did. */
static struct cask_chardev *cask_chr_test_new(struct kunit *test,
					      unsigned int nr_nodes)
{
	struct cask_chardev *cd = kunit_kzalloc(test, sizeof(*cd), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, cd);
	cd->name = CASK_CHR_TEST_NAME;
	cd->fops = &cask_chr_test_fops;
	cd->owner = THIS_MODULE;
	cd->minors = CASK_CHR_TEST_MINORS;
	cd->nodes = cask_chr_test_nodes;
	cd->nr_nodes = nr_nodes;
	cd->prefix = "kunit_";
	cd->dir = "cask_kunit";
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, cask_chr_test_remove,
							cd), 0);
	return cd;
}

/* Whether nobody holds any of the numbers: we can reserve them all. */
static bool cask_chr_test_region_free(dev_t devt, unsigned int minors)
{
	if (register_chrdev_region(devt, minors, "cask_kunit_probe"))
		return false;
	unregister_chrdev_region(devt, minors);
	return true;
}

/* Nothing of @cd is left: class, cdev, region (if it had one), nodes. */
static void cask_chr_test_expect_gone(struct kunit *test,
				      struct cask_chardev *cd, dev_t devt)
{
	KUNIT_EXPECT_FALSE(test, cd->live);
	KUNIT_EXPECT_EQ(test, cd->made, 0);
	KUNIT_EXPECT_FALSE(test, class_is_registered(&cd->class));
	KUNIT_EXPECT_EQ(test, kref_read(&cd->cdev.kobj.kref), 0);
	if (devt)
		KUNIT_EXPECT_TRUE(test, cask_chr_test_region_free(devt, cd->minors));
}

/* The node of @index: its device, devt, path below /dev and mode. */
static void cask_chr_test_expect_node(struct kunit *test,
				      struct cask_chardev *cd,
				      unsigned int index, const char *kname,
				      const char *path)
{
	struct device *dev;
	umode_t mode = 0;
	char *node;

	dev = class_find_device_by_name(&cd->class, kname);
	KUNIT_ASSERT_NOT_NULL_MSG(test, dev, "%s", kname);
	KUNIT_EXPECT_EQ(test, dev->devt, cd->devt + index);
	node = cd->class.devnode(dev, &mode);
	KUNIT_EXPECT_EQ(test, mode, 0666);
	if (path)
		KUNIT_EXPECT_STREQ(test, node, path);
	else
		KUNIT_EXPECT_NULL(test, node);
	kfree(node);
	put_device(dev);
}

static void cask_chr_test_round_trip(struct kunit *test)
{
	struct cask_chardev *cd = cask_chr_test_new(test, 2);
	dev_t devt;
	int round;

	/* Twice: a module unloaded and loaded again adds the same one. */
	for (round = 0; round < 2; round++) {
		KUNIT_ASSERT_EQ(test, cask_chardev_add(cd), 0);
		KUNIT_EXPECT_TRUE(test, cd->live);
		KUNIT_EXPECT_NE(test, MAJOR(cd->devt), 0);
		KUNIT_EXPECT_TRUE(test, class_is_registered(&cd->class));
		KUNIT_EXPECT_EQ(test, kref_read(&cd->cdev.kobj.kref), 1);
		KUNIT_EXPECT_EQ(test, cd->cdev.dev, cd->devt);
		KUNIT_EXPECT_EQ(test, cd->cdev.count, CASK_CHR_TEST_MINORS);
		KUNIT_EXPECT_PTR_EQ(test, cd->cdev.ops, &cask_chr_test_fops);
		KUNIT_EXPECT_FALSE(test, cask_chr_test_region_free(cd->devt, 1));
		KUNIT_EXPECT_EQ(test, cd->made, 2);
		cask_chr_test_expect_node(test, cd, 0, "kunit_a", "cask_kunit/a");
		cask_chr_test_expect_node(test, cd, 1, "kunit_b", "cask_kunit/b");
		/* Minors past the nodes have none. */
		KUNIT_EXPECT_NULL(test, class_find_device_by_devt(&cd->class,
								  cd->devt + 2));
		devt = cd->devt;
		cask_chardev_remove(cd);
		cask_chr_test_expect_gone(test, cd, devt);
		/* Twice is once. */
		cask_chardev_remove(cd);
		cask_chr_test_expect_gone(test, cd, devt);
	}
}

/* Without a directory or a prefix, the node is /dev/<kernel name>. */
static void cask_chr_test_plain_names(struct kunit *test)
{
	static const char *const plain[] = { "cask_kunit_plain" };
	struct cask_chardev *cd = cask_chr_test_new(test, 1);

	cd->nodes = plain;
	cd->prefix = NULL;
	cd->dir = NULL;
	KUNIT_ASSERT_EQ(test, cask_chardev_add(cd), 0);
	cask_chr_test_expect_node(test, cd, 0, "cask_kunit_plain", NULL);
	KUNIT_EXPECT_NULL(test, class_find_device_by_name(&cd->class,
							  "kunit_cask_kunit_plain"));
}

static void cask_chr_test_index(struct kunit *test)
{
	struct cask_chardev *cd = cask_chr_test_new(test, 2);
	struct inode *inode = kunit_kzalloc(test, sizeof(*inode), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, inode);
	KUNIT_ASSERT_EQ(test, cask_chardev_add(cd), 0);
	inode->i_rdev = cd->devt;
	KUNIT_EXPECT_EQ(test, cask_chardev_index(cd, inode), 0);
	inode->i_rdev = cd->devt + CASK_CHR_TEST_MINORS - 1;
	KUNIT_EXPECT_EQ(test, cask_chardev_index(cd, inode),
			CASK_CHR_TEST_MINORS - 1);
}

static const char *const cask_chr_test_null_node[] = { NULL };

/* What a case changes in a good chardev. */
struct cask_chr_test_bad {
	const char *name;
	bool no_fops;
	unsigned int minors;
	const char *const *nodes;
	unsigned int nr_nodes;
};

#define N CASK_CHR_TEST_NAME
#define M CASK_CHR_TEST_MINORS

/* Each is refused with EINVAL: before the region, by it, or at a node. */
static const struct cask_chr_test_bad cask_chr_test_bad[] = {
	{ N, false, M, cask_chr_test_nodes, M + 1 },
	{ N, false, 0, cask_chr_test_nodes, 0 },
	{ N, true, M, cask_chr_test_nodes, 1 },
	{ "", false, M, cask_chr_test_nodes, 1 },
	{ NULL, false, M, cask_chr_test_nodes, 1 },
	{ N, false, M, NULL, 1 },
	/* More minors than a major has: the region refuses. */
	{ N, false, MINORMASK + 2, cask_chr_test_nodes, 1 },
	/* The first node fails, after the region, class and cdev. */
	{ N, false, M, cask_chr_test_null_node, 1 },
};

#undef M
#undef N

/* Nothing is left of each, and the name is free again after. */
static void cask_chr_test_invalid(struct kunit *test)
{
	const struct cask_chr_test_bad *bad;
	struct cask_chardev *cd;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cask_chr_test_bad); i++) {
		bad = &cask_chr_test_bad[i];
		cd = cask_chr_test_new(test, bad->nr_nodes);
		cd->name = bad->name;
		if (bad->no_fops)
			cd->fops = NULL;
		cd->minors = bad->minors;
		cd->nodes = bad->nodes;
		KUNIT_EXPECT_EQ_MSG(test, cask_chardev_add(cd), -EINVAL,
				    "case %zu", i);
		/* A region reserved then given back left its number. */
		cask_chr_test_expect_gone(test, cd, cd->devt);
	}
	KUNIT_EXPECT_NE(test, MAJOR(cd->devt), 0);

	cd = cask_chr_test_new(test, 1);
	KUNIT_EXPECT_EQ(test, cask_chardev_add(cd), 0);
}

/* A second chardev of one name is refused; the first is untouched. */
static void cask_chr_test_duplicate(struct kunit *test)
{
	struct cask_chardev *first = cask_chr_test_new(test, 2);
	struct cask_chardev *second = cask_chr_test_new(test, 1);

	KUNIT_ASSERT_EQ(test, cask_chardev_add(first), 0);
	KUNIT_EXPECT_EQ(test, cask_chardev_add(second), -EEXIST);
	cask_chr_test_expect_gone(test, second, 0);
	/* The refused one's remove must not touch the first's. */
	cask_chardev_remove(second);
	KUNIT_EXPECT_TRUE(test, first->live);
	KUNIT_EXPECT_TRUE(test, class_is_registered(&first->class));
	cask_chr_test_expect_node(test, first, 0, "kunit_a", "cask_kunit/a");
	cask_chr_test_expect_node(test, first, 1, "kunit_b", "cask_kunit/b");

	/* Once the first is gone, the name is free. */
	cask_chardev_remove(first);
	KUNIT_EXPECT_EQ(test, cask_chardev_add(second), 0);
	cask_chr_test_expect_node(test, second, 0, "kunit_a", "cask_kunit/a");
}

/*
 * The third node fails after two were made: all is undone, a remove after
 * it does nothing, and the same chardev adds cleanly afterwards (the two
 * nodes of the failed add would clash in sysfs if they had stayed).
 */
static void cask_chr_test_node_fails(struct kunit *test)
{
	struct cask_chardev *cd = cask_chr_test_new(test, 3);
	dev_t devt;

	KUNIT_EXPECT_EQ(test, cask_chardev_add(cd), -EINVAL);
	devt = cd->devt;
	KUNIT_EXPECT_NE(test, MAJOR(devt), 0);
	cask_chr_test_expect_gone(test, cd, devt);
	cask_chardev_remove(cd);
	cask_chr_test_expect_gone(test, cd, devt);

	cd->nr_nodes = 2;
	KUNIT_ASSERT_EQ(test, cask_chardev_add(cd), 0);
	cask_chr_test_expect_node(test, cd, 0, "kunit_a", "cask_kunit/a");
	cask_chr_test_expect_node(test, cd, 1, "kunit_b", "cask_kunit/b");
	devt = cd->devt;
	cask_chardev_remove(cd);
	cask_chr_test_expect_gone(test, cd, devt);
}

static struct kunit_case cask_core_chardev_test_cases[] = {
	KUNIT_CASE(cask_chr_test_round_trip),
	KUNIT_CASE(cask_chr_test_plain_names),
	KUNIT_CASE(cask_chr_test_index),
	KUNIT_CASE(cask_chr_test_invalid),
	KUNIT_CASE(cask_chr_test_duplicate),
	KUNIT_CASE(cask_chr_test_node_fails),
	{}
};

static struct kunit_suite cask_core_chardev_test_suite = {
	.name = "cask_core_chardev",
	.test_cases = cask_core_chardev_test_cases,
};

kunit_test_suite(cask_core_chardev_test_suite);

MODULE_DESCRIPTION("KUnit tests for cask_core's chardev helper");
MODULE_LICENSE("GPL");
