/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel features cask_core uses when the kernel has them. Kbuild probes
 * the kernel's headers and defines CASK_HAVE_*; without a feature the
 * stubs below make the caller take its fallback path.
 */
#ifndef _CASK_COMPAT_H
#define _CASK_COMPAT_H

#include <linux/errno.h>
#include <linux/ipc_namespace.h>
#include <linux/notifier.h>

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

#endif /* _CASK_COMPAT_H */
