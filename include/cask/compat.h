/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel differences, in one place. The top-level Kbuild probes the target
 * kernel's headers and defines CASK_HAVE_<FEATURE> for each optional
 * feature it finds (one line per feature there); for a feature the kernel
 * lacks, the stubs below make the caller take its fallback path, and the
 * module says so at load time and in a features/ file in sysfs.
 *
 * What cask cannot do without (exports and interfaces every supported
 * kernel has) is checked before the build by tools/kernel-check.sh, not
 * here. Documentation/admin/kernels.rst lists both.
 */
#ifndef _CASK_COMPAT_H
#define _CASK_COMPAT_H

#include <linux/err.h>
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/ipc_namespace.h>
#include <linux/magic.h>
#include <linux/notifier.h>
#include <linux/oom.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/vmstat.h>

#ifdef CASK_HAVE_IPCNS_FREE_NOTIFIER
/* patches/0001-ipc-add-a-notifier-for-the-end-of-an-IPC-namespace.patch */
static inline int cask_ipcns_notifier_register(struct notifier_block *nb)
{
	return register_ipcns_free_notifier(nb);
}

static inline void cask_ipcns_notifier_unregister(struct notifier_block *nb)
{
	unregister_ipcns_free_notifier(nb);
}
#else
static inline int cask_ipcns_notifier_register(struct notifier_block *nb)
{
	return -EOPNOTSUPP;
}

static inline void cask_ipcns_notifier_unregister(struct notifier_block *nb)
{
}
#endif /* CASK_HAVE_IPCNS_FREE_NOTIFIER */

#ifdef CASK_HAVE_OOM_MRELEASE_TASK
/* patches/0002-mm-oom_kill-export-the-body-of-process_mrelease-as-oom_mrelease_task.patch */
#define CASK_OOM_REAP true

static inline int cask_oom_mrelease(struct task_struct *task)
{
	return oom_mrelease_task(task);
}
#else
#define CASK_OOM_REAP false

static inline int cask_oom_mrelease(struct task_struct *task)
{
	return -EOPNOTSUPP;
}
#endif /* CASK_HAVE_OOM_MRELEASE_TASK */

/* The swap cache's pages; the counter exists only with swap. */
static inline unsigned long cask_swapcache_pages(void)
{
#ifdef CONFIG_SWAP
	return global_node_page_state(NR_SWAPCACHE);
#else
	return 0;
#endif /* CONFIG_SWAP */
}

#ifdef PID_FS_MAGIC
/*
 * The struct pid of a pidfd. pidfd_pid() is not exported; since 6.9 a
 * pidfd is a pidfs file whose inode holds its pid (fs/pidfs.c).
 */
static inline struct pid *cask_pidfd_pid(struct file *file)
{
	struct inode *inode = file_inode(file);

	if (inode->i_sb->s_magic != PID_FS_MAGIC || !inode->i_private)
		return ERR_PTR(-EBADF);
	return inode->i_private;
}
#else
/* Before pidfs a pidfd is an anonymous inode we cannot tell from others. */
static inline struct pid *cask_pidfd_pid(struct file *file)
{
	return ERR_PTR(-EOPNOTSUPP);
}
#endif /* PID_FS_MAGIC */

#endif /* _CASK_COMPAT_H */
