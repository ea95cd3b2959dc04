/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Character devices of the cask drivers: one region, one class, one cdev
 * over the region and one node per device, made and removed in one call.
 *
 * Our own region rather than misc devices: an open may make a cell
 * (cask_cell_get_or_create()), allocating in the container's memory cgroup,
 * which may reclaim; under the kernel-wide misc_mtx a misc device's open
 * holds, one container could slow every misc open of the host.
 *
 * Every node is 0666 and root's, as Android's ueventd makes binder, ashmem
 * and the logs: a driver decides at open and in each call what a file may
 * do, from its cell and its opener's credentials, never from the node's
 * mode (which a runtime's bind mount into a container keeps anyway).
 *
 * Exported in the CASK symbol namespace; users need MODULE_IMPORT_NS(CASK).
 */
#ifndef _CASK_CHARDEV_H
#define _CASK_CHARDEV_H

#include <linux/cdev.h>
#include <linux/device/class.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/list.h>
#include <linux/types.h>

/**
 * struct cask_chardev - a driver's character devices
 * @name: the region's name (/proc/devices) and the class's (/sys/class/,
 *	udev's SUBSYSTEM, which udev rules match on); not empty
 * @fops: the file operations of every minor
 * @owner: THIS_MODULE, the cdev's owner: an open file pins the module
 * @minors: how many minors to reserve from 0; the cdev covers them all,
 *	with a node or not
 * @nodes: the nodes' names in minor order from 0, none empty
 * @nr_nodes: how many of @nodes to make, at most @minors
 * @prefix: optional; put before each name in the device's kernel name
 *	(sysfs, uevents), and only there (the logger's log_main is
 *	/dev/log/main)
 * @dir: optional; the nodes' directory below /dev, where they go without
 *	@prefix; without it a node is /dev/<@prefix><name>
 * @devt: cask_core's: the region's first number, valid from a successful
 *	cask_chardev_add() until cask_chardev_remove()
 * @cdev: cask_core's
 * @class: cask_core's
 * @made: cask_core's: how many nodes exist
 * @live: cask_core's: added and not removed yet; the driver serializes
 *	its add and remove, as module init and exit are
 * @entry: cask_core's, in the list of added chardevs (protected by
 *	cask_chardevs_mutex)
 *
 * Declare it static and fill the fields above @devt; the rest must be
 * zero before the first add and is cask_core's until the last remove.
 */
struct cask_chardev {
	const char *name;
	const struct file_operations *fops;
	struct module *owner;
	unsigned int minors;
	const char *const *nodes;
	unsigned int nr_nodes;
	const char *prefix;
	const char *dir;

	dev_t devt;
	struct cdev cdev;
	struct class class;
	unsigned int made;
	bool live;
	struct list_head entry;
};

int cask_chardev_add(struct cask_chardev *cd);
void cask_chardev_remove(struct cask_chardev *cd);

/**
 * cask_chardev_index() - which minor of a chardev an inode opens
 * @cd: the chardev, added
 * @inode: an inode of one of its devices (the cdev's open was called)
 *
 * Context: any.
 * Return: the index, below @cd->minors: the node of @cd->nodes[index] if
 * that one has a node.
 */
static inline unsigned int cask_chardev_index(const struct cask_chardev *cd,
					      const struct inode *inode)
{
	return iminor(inode) - MINOR(cd->devt);
}

#endif /* _CASK_CHARDEV_H */
