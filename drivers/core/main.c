// SPDX-License-Identifier: GPL-2.0
/*
 * cask_core: the cell, the container a task belongs to, for the cask
 * Android drivers (binder, ashmem, logger, low-memory killer).
 */
#include <linux/init.h>
#include <linux/module.h>

#include "core.h"

static int __init cask_core_init(void)
{
	int ret;

	ret = cask_sysfs_init();
	if (ret)
		return ret;
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
	return ret;
}

static void __exit cask_core_exit(void)
{
	cask_sysfs_remove_controls();
	cask_cells_exit();
	cask_sysfs_exit();
}

module_init(cask_core_init);
module_exit(cask_core_exit);

MODULE_DESCRIPTION("cask: per-container cells for the Android drivers");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The cask developers");
