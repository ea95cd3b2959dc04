// SPDX-License-Identifier: GPL-2.0
/*
 * The character devices of cask's drivers (include/cask/chardev.h): region,
 * class, cdev and nodes, made in that order and removed in the reverse.
 *
 * Locking: cask_chardevs_mutex guards the list of added chardevs, held
 * only to claim or give back a name, never across the steps: those take
 * the driver core's locks, and the class's devnode callback, which the
 * driver core and devtmpfs call while a device is added, removed or its
 * uevent read, takes none of ours.
 */
#include <linux/cdev.h>
#include <linux/cleanup.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <cask/chardev.h>

/* Every node's mode; devtmpfs makes them root's. See chardev.h. */
#define CASK_CHARDEV_MODE 0666

static LIST_HEAD(cask_chardevs);
static DEFINE_MUTEX(cask_chardevs_mutex);

static char *cask_chardev_devnode(const struct device *dev, umode_t *mode)
{
	const struct cask_chardev *cd =
		container_of_const(dev->class, struct cask_chardev, class);

	if (mode)
		*mode = CASK_CHARDEV_MODE;
	if (!cd->dir)
		return NULL;
	return kasprintf(GFP_KERNEL, "%s/%s", cd->dir,
			 dev_name(dev) + strlen(cd->prefix ?: ""));
}

/*
 * Two cask chardevs of one name would meet in sysfs, which refuses the
 * second class with a stack dump: refuse it here, before anything is made.
 */
static int cask_chardev_claim(struct cask_chardev *cd)
{
	struct cask_chardev *other;

	guard(mutex)(&cask_chardevs_mutex);
	list_for_each_entry(other, &cask_chardevs, entry)
		if (!strcmp(other->name, cd->name))
			return -EEXIST;
	list_add_tail(&cd->entry, &cask_chardevs);
	return 0;
}

static void cask_chardev_unclaim(struct cask_chardev *cd)
{
	guard(mutex)(&cask_chardevs_mutex);
	list_del(&cd->entry);
}

static void cask_chardev_destroy_nodes(struct cask_chardev *cd)
{
	while (cd->made) {
		cd->made--;
		device_destroy(&cd->class, cd->devt + cd->made);
	}
}

/* On error the nodes made so far stay, counted in cd->made. */
static int cask_chardev_create_nodes(struct cask_chardev *cd)
{
	struct device *dev;
	const char *name;

	for (cd->made = 0; cd->made < cd->nr_nodes; cd->made++) {
		name = cd->nodes[cd->made];
		/* The driver core would take it with a warning. */
		if (!name || !*name) {
			pr_err("%s: node %u has no name\n", cd->name, cd->made);
			return -EINVAL;
		}
		dev = device_create(&cd->class, NULL, cd->devt + cd->made,
				    NULL, "%s%s", cd->prefix ?: "", name);
		if (IS_ERR(dev)) {
			pr_err("%s: cannot create node %s: %ld\n", cd->name,
			       name, PTR_ERR(dev));
			return PTR_ERR(dev);
		}
	}
	return 0;
}

/**
 * cask_chardev_add() - make a driver's region, class, cdev and nodes
 * @cd: the chardev, its driver's fields filled
 *
 * Reserves @cd->minors numbers under @cd->name, registers the class
 * @cd->name, adds one cdev of @cd->fops over the whole region and makes
 * a node for each of the first @cd->nr_nodes minors, in that order: the
 * nodes last, so that an open through them finds everything ready. Call
 * it in module init after cask_driver_register(): an open may make a
 * cell, which needs the driver's attach.
 *
 * Context: process context (module init); sleeps.
 * Return: 0; -EINVAL for a field out of its range or a node without a
 * name; -EEXIST if another cask chardev has @cd->name; or the error of
 * the region, the class, the cdev or a node. On error nothing is left and
 * cask_chardev_remove() does nothing.
 */
int cask_chardev_add(struct cask_chardev *cd)
{
	int ret;

	if (!cd->name || !*cd->name || !cd->fops || !cd->minors ||
	    cd->nr_nodes > cd->minors || (cd->nr_nodes && !cd->nodes))
		return -EINVAL;
	ret = cask_chardev_claim(cd);
	if (ret)
		return ret;
	ret = alloc_chrdev_region(&cd->devt, 0, cd->minors, cd->name);
	if (ret)
		goto unclaim;
	/* Afresh: a module reloaded adds the same chardev again. */
	cd->class = (struct class){
		.name = cd->name,
		.devnode = cask_chardev_devnode,
	};
	ret = class_register(&cd->class);
	if (ret)
		goto unregister_region;
	cdev_init(&cd->cdev, cd->fops);
	cd->cdev.owner = cd->owner;
	ret = cdev_add(&cd->cdev, cd->devt, cd->minors);
	if (ret)
		goto unregister_class;
	/* The nodes last: an open finds everything ready. */
	ret = cask_chardev_create_nodes(cd);
	if (ret)
		goto destroy_nodes;
	cd->live = true;
	return 0;

destroy_nodes:
	cask_chardev_destroy_nodes(cd);
	cdev_del(&cd->cdev);
unregister_class:
	class_unregister(&cd->class);
unregister_region:
	unregister_chrdev_region(cd->devt, cd->minors);
unclaim:
	cask_chardev_unclaim(cd);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(cask_chardev_add, CASK);

/**
 * cask_chardev_remove() - remove what cask_chardev_add() made
 * @cd: the chardev
 *
 * The nodes first, so that no new open finds them; then the cdev (an open
 * of a node kept elsewhere, a bind mount or a mknod, gets ENXIO), the class
 * and the region. Files still open keep working: they pinned the module
 * (@cd->owner), so in module exit there are none. Call it in module exit
 * before cask_driver_unregister(). Does nothing if @cd was not added (its
 * add failed, or it was removed already).
 *
 * Context: process context (module exit); sleeps.
 */
void cask_chardev_remove(struct cask_chardev *cd)
{
	if (!cd->live)
		return;
	cask_chardev_destroy_nodes(cd);
	cdev_del(&cd->cdev);
	class_unregister(&cd->class);
	unregister_chrdev_region(cd->devt, cd->minors);
	cask_chardev_unclaim(cd);
	cd->live = false;
}
EXPORT_SYMBOL_NS_GPL(cask_chardev_remove, CASK);
