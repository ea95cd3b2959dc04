// SPDX-License-Identifier: GPL-2.0
/*
 * cask_logger: Android's /dev/log/{main,events,radio,system,crash} with
 * one set of rings per cask cell. The ABI is the staging logger's; see
 * Documentation/logger.rst.
 *
 * Files: main.c (module, devices and their directory, per-cell state),
 * logger.c (the file operations: write, read, poll, the ioctls, and who
 * may read or clear what), reader.c (a reader's cursors in the rings),
 * ring.c (the rings and their sizes), sysfs.c (the per-buffer sysfs
 * files), kmsg.c (/dev/cask/kmsg, each cell's own /dev/kmsg, in a ring of
 * ring.c's).
 *
 * Locking overview, outermost first:
 *
 *   reader->lock        one open file's read position, selection and
 *                       cursors; held across copy_to_user(), never while
 *                       sleeping for data. Functions that need it end in
 *                       _rlocked. Under it, host selection looks a cell up
 *                       (cask_core's lookup) and merged readers walk the
 *                       cells (cask_cell_next(), RCU only).
 *   ring->lock          one ring; a spinlock, never held across a user
 *                       copy or an allocation, never two at once, never for
 *                       more than %CASK_LOG_SCAN_BATCH entries of a scan.
 *                       Functions that need it end in _locked.
 *
 * Our attach and detach run under cask_core's driver registry lock and take
 * neither: nothing of ours is ordered against it.
 *
 * Lifetimes and wait queues: see logger.c.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <cask/cell.h>
#include <cask/chardev.h>
#include <kunit/visibility.h>

#include "logger.h"

const char *const cask_log_names[CASK_LOG_NR] = {
	[CASK_LOG_MAIN] = "main",
	[CASK_LOG_EVENTS] = "events",
	[CASK_LOG_RADIO] = "radio",
	[CASK_LOG_SYSTEM] = "system",
	[CASK_LOG_CRASH] = "crash",
};

/*
 * Where the nodes go under /dev: "log" gives Android's /dev/log/main etc.
 * A host with a syslog socket at /dev/log (systemd-journald, syslogd)
 * needs another directory, which runtimes bind-mount to the container's
 * /dev/log (Documentation/logger.rst, "Device nodes").
 */
static char *cask_log_devdir = "log";
module_param_named(devdir, cask_log_devdir, charp, 0444);
MODULE_PARM_DESC(devdir, "directory under /dev for main, events, radio, system, crash (default log)");

/**
 * cask_log_devdir_valid() - whether @dir may name the nodes' directory
 * @dir: the devdir parameter
 *
 * A relative path of at most %CASK_LOG_DEVDIR_MAX characters: components
 * of [A-Za-z0-9_.-], none empty, "." or "..", so that the nodes stay below
 * /dev and the path means the same to devtmpfs, udev and the runtimes.
 *
 * Context: any.
 * Return: true if valid.
 */
bool cask_log_devdir_valid(const char *dir)
{
	size_t len = strlen(dir), comp = 0, i;

	if (!len || len > CASK_LOG_DEVDIR_MAX)
		return false;
	for (i = 0; i <= len; i++) {
		char c = dir[i];

		if (c == '/' || !c) {
			if (!comp || (comp == 1 && dir[i - 1] == '.') ||
			    (comp == 2 && dir[i - 1] == '.' && dir[i - 2] == '.'))
				return false;
			comp = 0;
			continue;
		}
		/* ASCII only: isalnum() takes Latin-1 letters too. */
		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
		    !(c >= '0' && c <= '9') && c != '_' && c != '.' && c != '-')
			return false;
		comp++;
	}
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_devdir_valid);

/*
 * Devices log_main etc. (the staging driver's names, which udev rules
 * match), as /dev/log/main etc.; minor i is buffer i. .dir is devdir=,
 * set once it is checked.
 */
/* See cask_logger_live(). */
bool cask_logger_ready;

struct cask_chardev cask_log_chardev = {
	.name = "cask_log",
	.fops = &cask_log_fops,
	.owner = THIS_MODULE,
	.minors = CASK_LOG_NR,
	.nodes = cask_log_names,
	.nr_nodes = CASK_LOG_NR,
	.prefix = "log_",
};

static void *cask_logger_attach(struct cask_cell *cell)
{
	struct cask_logger_cell *lc;
	int i;

	/* Made by a task of the cell on first use: the cell's memcg pays. */
	lc = kzalloc(sizeof(*lc), GFP_KERNEL_ACCOUNT);
	if (!lc)
		return ERR_PTR(-ENOMEM);
	lc->cell = cell;
	for (i = 0; i < CASK_LOG_NR; i++)
		cask_ring_init(&lc->rings[i], CASK_LOG_SIZE_DEFAULT);
	cask_kmsg_init(&lc->kmsg);
	return lc;
}

static void cask_logger_detach(struct cask_cell *cell, void *data)
{
	struct cask_logger_cell *lc = data;
	int i;

	for (i = 0; i < CASK_LOG_NR; i++)
		kvfree(lc->rings[i].buf);
	kvfree(lc->kmsg.ring.buf);
	kfree(lc);
}

struct cask_driver cask_logger_driver = {
	.name = "logger",
	.attach = cask_logger_attach,
	.detach = cask_logger_detach,
	.groups = cask_logger_groups,
};

static int __init cask_logger_init(void)
{
	int i, ret;

	if (!cask_log_devdir_valid(cask_log_devdir)) {
		pr_err("devdir=%s: a relative path below /dev of [A-Za-z0-9_.-] components, no \".\" or \"..\", at most %d characters\n",
		       cask_log_devdir, CASK_LOG_DEVDIR_MAX);
		return -EINVAL;
	}
	cask_log_chardev.dir = cask_log_devdir;
	for (i = 0; i < CASK_LOG_NR; i++)
		init_waitqueue_head(&cask_logger_host_wq[i]);
	init_waitqueue_head(&cask_kmsg_host_wq);
	ret = cask_driver_register(&cask_logger_driver);
	if (ret)
		return ret;
	/* The devices after the driver: an open finds everything ready. */
	ret = cask_chardev_add(&cask_log_chardev);
	if (ret)
		goto unregister_driver;
	ret = cask_chardev_add(&cask_kmsg_chardev);
	if (ret)
		goto remove_log_chardev;
	/* Pairs with cask_logger_live(): opens see everything set up. */
	smp_store_release(&cask_logger_ready, true);
	return 0;

remove_log_chardev:
	cask_chardev_remove(&cask_log_chardev);
unregister_driver:
	cask_driver_unregister(&cask_logger_driver);
	return ret;
}

static void __exit cask_logger_exit(void)
{
	cask_chardev_remove(&cask_kmsg_chardev);
	cask_chardev_remove(&cask_log_chardev);
	cask_driver_unregister(&cask_logger_driver);
}

module_init(cask_logger_init);
module_exit(cask_logger_exit);

MODULE_IMPORT_NS(CASK);
MODULE_DESCRIPTION("cask: Android logger devices with per-container rings");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The cask developers");
