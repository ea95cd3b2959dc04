// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder contexts and the lifetime of what lives in them: the
 * devices (devices=, their nodes, which device an inode is), where a
 * cell's contexts are (one per device, then its binderfs contexts), the
 * last reference on a context, and the last references on a process and
 * on a thread, which free them. Below the transactions, which hold a
 * target process and thread across a call, and below binderfs.c and
 * debugfs.c, which walk a cell's contexts.
 *
 * Locking: bc->fs_lock (a mutex) for a cell's binderfs contexts; a
 * process is freed with no lock held, taking ctx->lock per buffer that
 * still holds a node, then the allocator's.
 */
#include <linux/cleanup.h>
#include <linux/cred.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <cask/cell.h>
#include <cask/chardev.h>

#include "binder.h"

static char *devices = "binder,hwbinder,vndbinder";
module_param(devices, charp, 0444);
MODULE_PARM_DESC(devices, "comma-separated binder device names (at most 8)");

static char *cbinder_names;
static const char *cbinder_dev_names[CBINDER_MAX_DEVICES];
static unsigned int cbinder_ndevices;

/*
 * Minor i is device i of devices=, 0666 like every cask node: every app
 * talks binder. All CBINDER_MAX_DEVICES minors are reserved whatever
 * devices= names; .nr_nodes is set when it is parsed, and .fops (the
 * files' operations, proc.c's, above this file) handed in with it.
 * main.c adds and removes it.
 */
struct cask_chardev cbinder_chardev = {
	.name = "cask_binder",
	.owner = THIS_MODULE,
	.minors = CBINDER_MAX_DEVICES,
	.nodes = cbinder_dev_names,
};

/**
 * cbinder_device_name() - the name of one of our devices
 * @index: its index
 *
 * Context: any, once the module is initialised.
 * Return: the name, or NULL if there is no such device.
 */
const char *cbinder_device_name(unsigned int index)
{
	return index < CBINDER_MAX_DEVICES ? cbinder_dev_names[index] : NULL;
}

/**
 * cbinder_device_lookup() - which of our devices has a name
 * @name: the name (binderfs: a device of that name is the cell's context)
 *
 * Context: any, once the module is initialised.
 * Return: the device's index, or -ENOENT.
 */
int cbinder_device_lookup(const char *name)
{
	unsigned int i;

	for (i = 0; i < cbinder_ndevices; i++)
		if (!strcmp(cbinder_dev_names[i], name))
			return i;
	return -ENOENT;
}

/**
 * cbinder_device_index() - which of our devices an inode is
 * @inode: a device node of ours
 *
 * Context: any.
 * Return: its index, below CBINDER_MAX_DEVICES.
 */
unsigned int cbinder_device_index(const struct inode *inode)
{
	return cask_chardev_index(&cbinder_chardev, inode);
}

/* The names of devices=, before any cell is attached (ctx->name). */
static int __init cbinder_devices_parse(void)
{
	char *name, *rest = cbinder_names;
	unsigned int n = 0;

	while ((name = strsep(&rest, ","))) {
		if (!*name)
			continue;
		if (n == CBINDER_MAX_DEVICES) {
			pr_err("more than %d devices\n", CBINDER_MAX_DEVICES);
			return -EINVAL;
		}
		if (cbinder_device_lookup(name) >= 0) {
			pr_err("device %s named twice\n", name);
			return -EINVAL;
		}
		cbinder_dev_names[n++] = name;
		cbinder_ndevices = n;
	}
	cbinder_chardev.nr_nodes = cbinder_ndevices;
	return 0;
}

/**
 * cbinder_devices_init() - read devices=
 * @fops: the file operations of every device
 *
 * Context: module init, before any cell is attached.
 * Return: 0 or a negative errno; on success cbinder_devices_exit() undoes it.
 */
int __init cbinder_devices_init(const struct file_operations *fops)
{
	int ret;

	cbinder_names = kstrdup(devices, GFP_KERNEL);
	if (!cbinder_names)
		return -ENOMEM;
	ret = cbinder_devices_parse();
	if (ret) {
		kfree(cbinder_names);
		return ret;
	}
	cbinder_chardev.fops = fops;
	return 0;
}

/**
 * cbinder_devices_exit() - forget devices=
 *
 * Context: module init's unwind or module exit, the devices removed.
 */
void cbinder_devices_exit(void)
{
	kfree(cbinder_names);
}

/**
 * cbinder_context_put() - drop a reference on a context
 * @ctx: the context
 *
 * A binderfs context of its own goes with its last reference (its device
 * inode and every process in it are gone, so it holds nothing more); an
 * embedded one lives with its cell, whose reference this drops.
 *
 * Context: process context, no locks held.
 */
void cbinder_context_put(struct cbinder_context *ctx)
{
	struct cbinder_cell *bc = ctx->bc;
	struct cask_cell *cell = bc->cell;

	if (ctx->index != CBINDER_FS_INDEX) {
		cask_cell_put(cell);
		return;
	}
	if (!refcount_dec_and_test(&ctx->refcount))
		return;
	mutex_lock(&bc->fs_lock);
	list_del(&ctx->fs_entry);
	mutex_unlock(&bc->fs_lock);
	WARN_ON_ONCE(!list_empty(&ctx->procs) || !list_empty(&ctx->dead_nodes));
	kfree(ctx->name);
	kfree(ctx);
	cask_cell_put(cell);
}

/**
 * cbinder_cell_walk_contexts() - call @fn for every context of a cell
 * @bc: the cell's binder state
 * @fn: called without ctx->lock (it takes it if it needs it); a non-zero
 *	return stops the walk
 * @arg: its argument
 *
 * The one place that knows where a cell's contexts are: the embedded
 * contexts (one per device), then the cell's binderfs contexts, under
 * bc->fs_lock, which keeps each of them alive across its call: @fn must
 * not drop a context's reference nor make one.
 *
 * Context: process context; takes bc->fs_lock.
 * Return: 0, or the first non-zero return of @fn.
 */
int cbinder_cell_walk_contexts(struct cbinder_cell *bc, cbinder_context_fn fn,
			       void *arg)
{
	struct cbinder_context *ctx;
	unsigned int i;
	int ret;

	for (i = 0; i < CBINDER_MAX_DEVICES; i++) {
		ret = fn(&bc->ctx[i], arg);
		if (ret)
			return ret;
	}
	guard(mutex)(&bc->fs_lock);
	list_for_each_entry(ctx, &bc->fs_contexts, fs_entry) {
		ret = fn(ctx, arg);
		if (ret)
			return ret;
	}
	return 0;
}

static void cbinder_proc_free(struct cbinder_proc *proc)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_cell *bc = ctx->bc;
	/* The opener's: a binderfs context may be another cell's. */
	struct cbinder_cell *own = cask_cell_data(proc->cell, &cbinder_driver);
	struct cbinder_buffer *buffer;

	/*
	 * Buffers never freed by user space still hold their target nodes
	 * (this process's, now dead): let those go. Nobody else uses the
	 * area any more.
	 */
	list_for_each_entry(buffer, &proc->alloc.buffers, entry) {
		if (buffer->free || !buffer->target_node)
			continue;
		spin_lock(&ctx->lock);
		cbinder_put_target_node_locked(buffer->target_node);
		buffer->target_node = NULL;
		spin_unlock(&ctx->lock);
	}

	atomic_long_sub(proc->alloc.allocated_bytes, &bc->buffer_bytes);
	cbinder_alloc_release(&proc->alloc);
	mem_cgroup_put(proc->memcg);
	put_cred(proc->cred);
	put_pid(proc->pid);
	put_task_struct(proc->tsk);
	atomic_long_dec(&own->procs);
	cbinder_context_put(ctx);
	cask_cell_put(proc->cell);
	/*
	 * After a grace period: the shrinker may still be returning from
	 * mutex_unlock(&proc->alloc.lock), with preemption off.
	 */
	kfree_rcu(proc, rcu);
}

/**
 * cbinder_proc_dec_tmpref() - drop a reference on a process
 * @proc: the process
 *
 * The last reference frees the receive area, so a sender copying into a
 * buffer of @proc holds one until it is done.
 *
 * Context: process context, no locks held.
 */
void cbinder_proc_dec_tmpref(struct cbinder_proc *proc)
{
	if (refcount_dec_and_test(&proc->refcount))
		cbinder_proc_free(proc);
}

/**
 * cbinder_thread_dec_tmpref() - drop a reference on a thread
 * @thread: the thread
 *
 * The memory goes after a grace period: a poller's wait entry may be
 * removed from @thread->wait under RCU (wake_up_pollfree()).
 *
 * Context: any.
 */
void cbinder_thread_dec_tmpref(struct cbinder_thread *thread)
{
	/* kfree_rcu(): no callback of ours runs after the module went. */
	if (refcount_dec_and_test(&thread->refcount))
		kfree_rcu(thread, rcu);
}
