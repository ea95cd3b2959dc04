// SPDX-License-Identifier: GPL-2.0
/*
 * cask_core: the cell, the container a task belongs to, for the cask
 * Android drivers (binder, ashmem, logger, low-memory killer, power).
 */
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/module.h>
#include <cask/cell.h>

#include "core.h"

static struct dentry *cask_debugfs;

/**
 * cask_debugfs_dir() - cask's directory in debugfs
 *
 * /sys/kernel/debug/cask/, where drivers put their host-only debugging
 * files. Debugfs may be missing or have failed: the result may be an
 * error pointer, which the debugfs functions accept as a parent (they then
 * make nothing), so a driver never needs to check it.
 *
 * Context: any, while cask_core is loaded.
 * Return: the directory's dentry or an error pointer.
 */
struct dentry *cask_debugfs_dir(void)
{
	return cask_debugfs;
}
EXPORT_SYMBOL_NS_GPL(cask_debugfs_dir, CASK);

static int __init cask_core_init(void)
{
	int ret;

	/* Debugging is optional: a failure here fails nothing. */
	cask_debugfs = debugfs_create_dir("cask", NULL);
	ret = cask_memcg_init();
	if (ret)
		goto remove_debugfs;
	ret = cask_sysfs_init();
	if (ret)
		goto exit_memcg;
	ret = cask_cells_init();
	if (ret)
		goto remove_sysfs;
	/* Last: these make cells, which needs the registry. */
	ret = cask_sysfs_add_controls();
	if (ret)
		goto exit_cells;
	pr_info("cells ready (auto cells %s)\n", cask_auto_cells ? "on" : "off");
	return 0;

exit_cells:
	cask_cells_exit();
remove_sysfs:
	cask_sysfs_exit();
exit_memcg:
	cask_memcg_exit();
remove_debugfs:
	debugfs_remove(cask_debugfs);
	return ret;
}

static void __exit cask_core_exit(void)
{
	cask_sysfs_remove_controls();
	cask_cells_exit();
	cask_sysfs_exit();
	cask_memcg_exit();
	debugfs_remove(cask_debugfs);
}

module_init(cask_core_init);
module_exit(cask_core_exit);

MODULE_DESCRIPTION("cask: per-container cells for the Android drivers");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The cask developers");
