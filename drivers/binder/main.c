// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder: the binder IPC protocol with one world per cask cell.
 * (Skeleton: the allocator only; the protocol lands next.)
 */
#include <linux/module.h>

#include "alloc.h"

static int __init cbinder_init(void)
{
	return cbinder_alloc_global_init();
}

static void __exit cbinder_exit(void)
{
	cbinder_alloc_global_exit();
}

module_init(cbinder_init);
module_exit(cbinder_exit);

MODULE_IMPORT_NS(CASK);
MODULE_DESCRIPTION("cask: binder IPC with one context per container");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The cask developers");
