/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel features lowmemorykiller uses when the kernel has them. Kbuild
 * probes the kernel's headers and defines CASK_HAVE_*; without one the
 * stubs below make the caller take its fallback path.
 */
#ifndef _LMK_COMPAT_H
#define _LMK_COMPAT_H

#include <linux/errno.h>
#include <linux/oom.h>
#include <linux/sched.h>
#include <linux/vmstat.h>

#ifdef CASK_HAVE_OOM_MRELEASE_TASK
/* patches/0002-mm-oom_kill-export-the-body-of-process_mrelease-as-oom_mrelease_task.patch */
#define LMK_HAVE_REAP true

static inline int lmk_mrelease(struct task_struct *task)
{
	return oom_mrelease_task(task);
}
#else
#define LMK_HAVE_REAP false

static inline int lmk_mrelease(struct task_struct *task)
{
	return -EOPNOTSUPP;
}
#endif /* CASK_HAVE_OOM_MRELEASE_TASK */

/* The swap cache's pages; the counter exists only with swap. */
static inline unsigned long lmk_swapcache_pages(void)
{
#ifdef CONFIG_SWAP
	return global_node_page_state(NR_SWAPCACHE);
#else
	return 0;
#endif /* CONFIG_SWAP */
}

#endif /* _LMK_COMPAT_H */
