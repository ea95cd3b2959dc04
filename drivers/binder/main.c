// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder: the binder IPC protocol (version 8) with one world per cask
 * cell and device. See Documentation/binder.rst.
 *
 * Files, from the top; each calls only files below it:
 *
 *   main.c       module init and exit, per-cell state and sysfs
 *   proc.c       files and threads: open, release, mmap, poll, ioctls,
 *                the draining of an unlinked cell and of its binderfs
 *                contexts
 *   binderfs.c   binderfs mounts, the contexts they make, the context
 *                an open joins
 *   debugfs.c    debugfs and binder_logs printers
 *   read.c       the read loop of BINDER_WRITE_READ
 *   write.c      the write loop of BINDER_WRITE_READ
 *   txn.c        transactions, their buffers and files, a call's priority
 *   translate.c  the objects in a transaction, and their undoing
 *   context.c    the devices (devices=, their nodes, which one an inode
 *                is), a cell's contexts, the last references on
 *                contexts, processes and threads
 *   node.c       nodes, references, death and freeze notices, debug ids
 *   work.c       work queues, wake-ups, a thread's transaction stack
 *   log.c        the transaction logs
 *   alloc.c      receive areas
 *
 * No file calls one above it. The files' operations (cbinder_fops, proc.c)
 * are handed down at init to what makes nodes with them: the devices
 * (cbinder_devices_init()) and binderfs (cbinder_fs_init()). Two names
 * are still named below their files, as keys only, never called:
 * cbinder_driver (here: a cell's binder state) and cbinder_fops ("is
 * this a binder file").
 *
 * Locking overview, outermost first:
 *
 *   mmap_lock        (the kernel's) around our fault handler
 *   alloc->lock      a process's receive area (alloc.c); never taken with
 *                    ctx->lock held
 *   ctx->lock        one context's protocol state (binder.h); a spinlock,
 *                    never held across a user copy, a sleeping
 *                    allocation, an fd operation or an LSM hook
 *   proc->inner_lock one process's work lists and the states of its
 *                    threads that decide whether they sleep (binder.h);
 *                    a spinlock, innermost of ours, one at a time, taken
 *                    alone by a thread reading its work (read.c); the
 *                    queueing and waking helpers (work.c) take it inside
 *                    ctx->lock
 *
 * Our attach and detach run under cask_core's registry lock and take none
 * of these; our unlink takes ctx->lock (and alloc->lock when it frees a
 * process) under it. A process holds a reference on its cell, so the
 * cell's binder state outlives every file; the module cannot go while a
 * file is open.
 */
#include <linux/kobject.h>
#include <linux/kstrtox.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <cask/attr.h>
#include <cask/cell.h>
#include <cask/chardev.h>

#include "binder.h"

static void *cbinder_attach(struct cask_cell *cell)
{
	struct cbinder_cell *bc;
	unsigned int i;

	bc = kzalloc(sizeof(*bc), GFP_KERNEL_ACCOUNT);
	if (!bc)
		return ERR_PTR(-ENOMEM);
	bc->cell = cell;
	for (i = 0; i < CBINDER_MAX_DEVICES; i++) {
		spin_lock_init(&bc->ctx[i].lock);
		bc->ctx[i].bc = bc;
		bc->ctx[i].index = i;
		bc->ctx[i].mgr_uid = INVALID_UID;
		INIT_LIST_HEAD(&bc->ctx[i].procs);
		INIT_LIST_HEAD(&bc->ctx[i].dead_nodes);
		INIT_LIST_HEAD(&bc->ctx[i].fs_entry);
		bc->ctx[i].name = cbinder_device_name(i);
	}
	mutex_init(&bc->fs_lock);
	INIT_LIST_HEAD(&bc->fs_contexts);
	bc->max_buffer_bytes = LONG_MAX;
	bc->max_procs = LONG_MAX;
	bc->max_fs_devices = CBINDER_FS_DEFAULT_MAX_DEVICES;
	/* A guest is never lifted above the host's ordinary work. */
	bc->nice_floor = cask_cell_is_host(cell) ? MIN_NICE : 0;
	cbinder_debugfs_add_cell(bc);
	return bc;
}

/* Nothing queued to the cell's files can be read any more: drop it. */
static void cbinder_unlink(struct cask_cell *cell, void *data)
{
	struct cbinder_cell *bc = data;
	unsigned int i;

	for (i = 0; i < CBINDER_MAX_DEVICES; i++)
		cbinder_context_unlink(&bc->ctx[i]);
	cbinder_fs_unlink_cell(bc);
}

static void cbinder_detach(struct cask_cell *cell, void *data)
{
	struct cbinder_cell *bc = data;
	unsigned int i;

	cbinder_debugfs_remove_cell(bc);
	/* Every file held the cell: all processes are gone. */
	for (i = 0; i < CBINDER_MAX_DEVICES; i++)
		WARN_ON_ONCE(!list_empty(&bc->ctx[i].procs) ||
			     !list_empty(&bc->ctx[i].dead_nodes));
	/* Each binderfs context held the cell. */
	WARN_ON_ONCE(!list_empty(&bc->fs_contexts));
	mutex_destroy(&bc->fs_lock);
	kfree(bc);
}

static CASK_ATTR_COUNTER(procs, struct cbinder_cell, procs);
static CASK_ATTR_COUNTER(threads, struct cbinder_cell, threads);
static CASK_ATTR_COUNTER(nodes, struct cbinder_cell, nodes);
static CASK_ATTR_COUNTER(refs, struct cbinder_cell, refs);
static CASK_ATTR_COUNTER(transactions, struct cbinder_cell, transactions);
static CASK_ATTR_COUNTER(transactions_total, struct cbinder_cell,
			 transactions_total);
static CASK_ATTR_COUNTER(failed_transactions, struct cbinder_cell,
			 failed_transactions);
static CASK_ATTR_COUNTER(buffer_bytes, struct cbinder_cell, buffer_bytes);

static struct attribute *cbinder_cell_attrs[] = {
	&cask_attr_procs.kattr.attr,
	&cask_attr_threads.kattr.attr,
	&cask_attr_nodes.kattr.attr,
	&cask_attr_refs.kattr.attr,
	&cask_attr_transactions.kattr.attr,
	&cask_attr_transactions_total.kattr.attr,
	&cask_attr_failed_transactions.kattr.attr,
	&cask_attr_buffer_bytes.kattr.attr,
	NULL
};
ATTRIBUTE_GROUPS(cbinder_cell);

static ssize_t nice_floor_show(struct kobject *kobj,
			       struct kobj_attribute *kattr, char *buf)
{
	struct cbinder_cell *bc = cask_driver_data_from_kobj(kobj);

	return sysfs_emit(buf, "%d\n", READ_ONCE(bc->nice_floor));
}

/*
 * The floor bounds the priority a cell's threads may take from binder,
 * and so the CPU they may take from the host's ordinary work: a limit,
 * the host's like the others.
 */
static ssize_t nice_floor_store(struct kobject *kobj,
				struct kobj_attribute *kattr, const char *buf,
				size_t count)
{
	struct cbinder_cell *bc = cask_driver_data_from_kobj(kobj);
	int val;

	if (!cask_host_may_admin())
		return -EPERM;
	if (kstrtoint(buf, 10, &val) || val < MIN_NICE || val > MAX_NICE)
		return -EINVAL;
	WRITE_ONCE(bc->nice_floor, val);
	return count;
}

/*
 * The limits are the host's (host_groups): a limit the container's root
 * could raise would bound nothing against a hostile container. Nothing
 * from inside the cell changes them, not even to lower them, so that
 * one rule (cask_host_may_admin()) holds for every host file.
 */
static CASK_ATTR_HOST_LIMIT(max_buffer_bytes, struct cbinder_cell,
			    max_buffer_bytes);
static CASK_ATTR_HOST_LIMIT(max_procs, struct cbinder_cell, max_procs);
static CASK_ATTR_HOST_LIMIT(max_binderfs_devices, struct cbinder_cell,
			    max_fs_devices);
static CASK_ATTR_HOST_RW(nice_floor);

static struct attribute *cbinder_host_attrs[] = {
	&cask_attr_max_buffer_bytes.kattr.attr,
	&cask_attr_max_procs.kattr.attr,
	&cask_attr_max_binderfs_devices.kattr.attr,
	&cask_attr_nice_floor.attr,
	NULL
};
ATTRIBUTE_GROUPS(cbinder_host);

struct cask_driver cbinder_driver = {
	.name = "binder",
	.attach = cbinder_attach,
	.unlink = cbinder_unlink,
	.detach = cbinder_detach,
	.groups = cbinder_cell_groups,
	.host_groups = cbinder_host_groups,
};

static int __init cbinder_init(void)
{
	int ret;

	ret = cbinder_devices_init(&cbinder_fops);
	if (ret)
		return ret;
	ret = cbinder_alloc_global_init();
	if (ret)
		goto exit_devices;
	ret = cbinder_debugfs_init();
	if (ret)
		goto exit_alloc;
	ret = cask_driver_register(&cbinder_driver);
	if (ret)
		goto exit_debugfs;
	/* The devices after the driver: an open finds everything ready. */
	ret = cask_chardev_add(&cbinder_chardev);
	if (ret)
		goto unregister_driver;
	/* binderfs last: a mount pins the module from here on. */
	ret = cbinder_fs_init(&cbinder_fops);
	if (ret)
		goto remove_chardev;
	return 0;

remove_chardev:
	cask_chardev_remove(&cbinder_chardev);
unregister_driver:
	cask_driver_unregister(&cbinder_driver);
exit_debugfs:
	cbinder_debugfs_exit();
exit_alloc:
	cbinder_alloc_global_exit();
exit_devices:
	cbinder_devices_exit();
	return ret;
}

static void __exit cbinder_exit(void)
{
	cbinder_fs_exit();
	cask_chardev_remove(&cbinder_chardev);
	cask_driver_unregister(&cbinder_driver);
	cbinder_debugfs_exit();
	cbinder_alloc_global_exit();
	cbinder_devices_exit();
}

module_init(cbinder_init);
module_exit(cbinder_exit);

MODULE_IMPORT_NS(CASK);
MODULE_DESCRIPTION("cask: binder IPC with one context per container");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The cask developers");
