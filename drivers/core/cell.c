// SPDX-License-Identifier: GPL-2.0
/*
 * cask cells: registry, lookup and lifetime.
 *
 * Locking overview, outermost first:
 *
 *   cask_mutex      the registry: the IPC-namespace hash and the cell list,
 *                   cell->linked, cell->drv[], the driver table. Held
 *                   across driver attach/detach callbacks and sysfs
 *                   directory creation and removal, so those callbacks
 *                   must not call back into cask_core.
 *   RCU             lookups in the hash (cask_cell_find_ns()), which pair
 *                   with refcount_inc_not_zero(); the cell's memory is
 *                   freed after a grace period.
 *   wait_pidfd lock the exit callback runs under the waitqueue spinlock of
 *                   the watched pid and only queues exit_work.
 *
 * Lifetime: a linked cell holds one reference on itself. Unregistering
 * (by name, when its IPC namespace ends, or at module exit) unlinks it
 * and drops that reference. On a kernel without the IPC namespace free
 * notifier (patches/0001) cells pin their namespace instead and end when
 * a watched task exits: the container's init. Drivers and lookups hold further references;
 * when the last one goes, release_work detaches every driver, then the
 * kobject release unpins the namespaces and frees the cell after RCU.
 */
#include <linux/cgroup.h>
#include <linux/hashtable.h>
#include <linux/ipc_namespace.h>
#include <linux/nsproxy.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/user_namespace.h>
#include <kunit/visibility.h>

#include "compat.h"
#include "core.h"

/* The registry lock: see the locking overview above. */
DEFINE_MUTEX(cask_mutex);
/* /sys/kernel/cask/auto_cells; read locklessly on the lookup slow path. */
bool cask_auto_cells = true;

/* The registry: linked cells by IPC namespace, and every unreleased cell. */
static DEFINE_HASHTABLE(cask_cells_by_ns, 6);
static LIST_HEAD(cask_cells);
static struct cask_driver *cask_drivers[CASK_MAX_DRIVERS];
static struct cask_cell *cask_host;
static u64 cask_next_id;
static struct workqueue_struct *cask_wq;
/* The kernel tells us when an IPC namespace ends: cells need not pin it. */
static bool cask_ipcns_tracked;
static struct notifier_block cask_ipcns_nb = {
	.notifier_call = cask_ipcns_free,
};

/**
 * cask_name_valid() - check a cell name
 * @name: NUL-terminated candidate
 *
 * A name is 1 to %CASK_NAME_MAX characters from [A-Za-z0-9_.-]; it becomes
 * a sysfs directory name, so "." and ".." are refused too.
 *
 * Context: any.
 * Return: true if @name may name a cell.
 */
bool cask_name_valid(const char *name)
{
	size_t len = strnlen(name, CASK_NAME_MAX + 1);
	size_t i;

	if (len == 0 || len > CASK_NAME_MAX)
		return false;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!isalnum(c) && c != '_' && c != '.' && c != '-')
			return false;
	}
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(cask_name_valid);

static struct cask_cell *cask_find_name_locked(const char *name)
{
	struct cask_cell *cell;

	lockdep_assert_held(&cask_mutex);
	list_for_each_entry(cell, &cask_cells, node)
		if (cell->linked && !strcmp(cell->name, name))
			return cell;
	return NULL;
}

/**
 * cask_cell_find_ns() - look up the cell of an IPC namespace
 * @ns: the namespace; the caller keeps it alive
 *
 * Context: any; takes and drops the RCU read lock.
 * Return: a new reference to the cell, or NULL if @ns has none.
 */
struct cask_cell *cask_cell_find_ns(struct ipc_namespace *ns)
{
	struct cask_cell *cell;

	rcu_read_lock();
	hash_for_each_possible_rcu(cask_cells_by_ns, cell, hnode, (unsigned long)ns) {
		if (cell->ipc_ns == ns && refcount_inc_not_zero(&cell->ref)) {
			rcu_read_unlock();
			return cell;
		}
	}
	rcu_read_unlock();
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(cask_cell_find_ns);

static int cask_attach_locked(struct cask_cell *cell, struct cask_driver *drv)
{
	struct cask_cell_drv *cd;
	void *data;
	int ret;

	lockdep_assert_held(&cask_mutex);
	data = drv->attach(cell);
	if (IS_ERR(data))
		return PTR_ERR(data);

	cd = kzalloc(sizeof(*cd), GFP_KERNEL);
	if (!cd) {
		ret = -ENOMEM;
		goto err_detach;
	}
	cd->cell = cell;
	cd->data = data;
	/*
	 * The directory exists only while the cell is visible; a cell made
	 * for a driver that loads after it was unlinked gets no directory.
	 */
	kobject_init(&cd->kobj, &cask_cell_drv_ktype);
	if (cell->kobj.state_in_sysfs) {
		ret = kobject_add(&cd->kobj, &cell->kobj, "%s", drv->name);
		if (ret)
			goto err_put_kobj;
		if (drv->groups) {
			ret = sysfs_create_groups(&cd->kobj, drv->groups);
			if (ret)
				goto err_put_kobj;
		}
	}
	cell->drv[drv->slot] = cd;
	return 0;

err_put_kobj:
	kobject_put(&cd->kobj);
err_detach:
	drv->detach(cell, data);
	return ret;
}

static void cask_detach_locked(struct cask_cell *cell, struct cask_driver *drv)
{
	struct cask_cell_drv *cd = cell->drv[drv->slot];

	lockdep_assert_held(&cask_mutex);
	if (!cd)
		return;
	cell->drv[drv->slot] = NULL;
	/* Removing the directory waits for its show/store callbacks. */
	kobject_del(&cd->kobj);
	drv->detach(cell, cd->data);
	kobject_put(&cd->kobj);
}

static int cask_exit_wake(struct wait_queue_entry *wait, unsigned int mode,
			  int flags, void *key)
{
	struct cask_cell *cell = container_of(wait, struct cask_cell, exit_wait);

	/* Under the waitqueue lock of the pid: only queue the work. */
	queue_work(cask_wq, &cell->exit_work);
	return 0;
}

static bool cask_watch_dead(struct pid *pid)
{
	struct task_struct *task;
	bool dead;

	rcu_read_lock();
	task = pid_task(pid, PIDTYPE_TGID);
	/*
	 * A leader that exits before its threads stays a zombie until they
	 * are gone: the group is alive until then.
	 */
	dead = !task || (READ_ONCE(task->exit_state) && thread_group_empty(task));
	rcu_read_unlock();
	return dead;
}

static void cask_unlink_locked(struct cask_cell *cell)
{
	int i;

	lockdep_assert_held(&cask_mutex);
	WRITE_ONCE(cell->linked, false);
	hash_del_rcu(&cell->hnode);
	if (cell->watch)
		remove_wait_queue(&cell->watch->wait_pidfd, &cell->exit_wait);
	/* Children first: the cell's directory must be empty of kobjects. */
	for (i = 0; i < CASK_MAX_DRIVERS; i++)
		if (cell->drv[i])
			kobject_del(&cell->drv[i]->kobj);
	kobject_uevent(&cell->kobj, KOBJ_REMOVE);
	kobject_del(&cell->kobj);
	pr_debug("cell %s (id %llu) unregistered\n", cell->name, cell->id);
}

static void cask_exit_workfn(struct work_struct *work)
{
	struct cask_cell *cell = container_of(work, struct cask_cell, exit_work);
	bool unlinked = false;

	/*
	 * No reference is held here: the release work cancels this work
	 * before the cell can be freed, and only a linked cell is watched.
	 */
	mutex_lock(&cask_mutex);
	if (cell->linked && cask_watch_dead(cell->watch)) {
		cask_unlink_locked(cell);
		unlinked = true;
	}
	mutex_unlock(&cask_mutex);
	if (unlinked)
		cask_cell_put(cell);
}

static void cask_release_workfn(struct work_struct *work)
{
	struct cask_cell *cell = container_of(work, struct cask_cell, release_work);
	int i;

	cancel_work_sync(&cell->exit_work);
	mutex_lock(&cask_mutex);
	for (i = 0; i < CASK_MAX_DRIVERS; i++)
		if (cask_drivers[i])
			cask_detach_locked(cell, cask_drivers[i]);
	list_del(&cell->node);
	mutex_unlock(&cask_mutex);
	pr_debug("cell %s (id %llu) released\n", cell->name, cell->id);
	/* The kobject release unpins the namespaces and frees the cell. */
	kobject_put(&cell->kobj);
}

/**
 * cask_cell_put() - drop a cell reference
 * @cell: the cell, or NULL
 *
 * Context: any; the release itself runs from a workqueue.
 */
void cask_cell_put(struct cask_cell *cell)
{
	if (cell && refcount_dec_and_test(&cell->ref))
		queue_work(cask_wq, &cell->release_work);
}
EXPORT_SYMBOL_NS_GPL(cask_cell_put, CASK);

/**
 * cask_cell_get() - take another reference on a cell
 * @cell: a cell the caller holds a reference on
 *
 * Context: any.
 * Return: @cell.
 */
struct cask_cell *cask_cell_get(struct cask_cell *cell)
{
	refcount_inc(&cell->ref);
	return cell;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_get, CASK);

/**
 * cask_cell_tryget() - take a reference unless the cell is being released
 * @cell: a cell whose memory the caller knows to be valid (e.g. its driver
 *	state is still attached, or under RCU)
 *
 * Context: any.
 * Return: true if a reference was taken.
 */
bool cask_cell_tryget(struct cask_cell *cell)
{
	return refcount_inc_not_zero(&cell->ref);
}
EXPORT_SYMBOL_NS_GPL(cask_cell_tryget, CASK);

/**
 * cask_cell_linked() - whether a cell can still be found
 * @cell: the cell
 *
 * Context: any; the answer may change right after.
 * Return: false once the cell was unregistered.
 */
bool cask_cell_linked(const struct cask_cell *cell)
{
	return READ_ONCE(cell->linked);
}
EXPORT_SYMBOL_NS_GPL(cask_cell_linked, CASK);

/**
 * cask_cell_free() - unpin what a cell pinned and free it after RCU
 * @cell: the cell, whose kobject is being released
 *
 * Context: any.
 */
void cask_cell_free(struct cask_cell *cell)
{
	put_pid(cell->watch);
	if (cell->cgrp)
		cgroup_put(cell->cgrp);
	put_pid_ns(cell->pid_ns);
	put_user_ns(cell->user_ns);
	if (cell->ipc_pinned)
		put_ipc_ns(cell->ipc_ns);
	kfree_rcu(cell, rcu);
}

/**
 * cask_cell_create() - make and link a cell
 * @spec: what it is made of; the cell takes its own references
 *
 * Context: process context; takes cask_mutex and calls every registered
 * driver's attach callback.
 * Return: the cell, with a reference for the caller, or an ERR_PTR():
 * -EINVAL for a bad name, -EEXIST if the name or the IPC namespace already
 * has a cell, -ENOMEM, or what a driver's attach returned.
 */
struct cask_cell *cask_cell_create(const struct cask_cell_spec *spec)
{
	struct cask_cell *cell, *other;
	int ret, i;

	if (!cask_name_valid(spec->name))
		return ERR_PTR(-EINVAL);

	cell = kzalloc(sizeof(*cell), GFP_KERNEL);
	if (!cell)
		return ERR_PTR(-ENOMEM);
	/* The registry's reference and the caller's. */
	refcount_set(&cell->ref, 2);
	strscpy(cell->name, spec->name);
	cell->is_auto = spec->is_auto;
	cell->ipc_ns = spec->ipc_ns;
	cell->ipc_inum = spec->ipc_ns->ns.inum;
	cell->ipc_pinned = !cask_ipcns_tracked;
	if (cell->ipc_pinned)
		get_ipc_ns(cell->ipc_ns);
	cell->user_ns = get_user_ns(spec->user_ns);
	cell->pid_ns = get_pid_ns(spec->pid_ns);
	if (spec->cgrp) {
		cgroup_get(spec->cgrp);
		cell->cgrp = spec->cgrp;
	}
	cell->watch = get_pid(spec->watch);
	init_waitqueue_func_entry(&cell->exit_wait, cask_exit_wake);
	INIT_WORK(&cell->exit_work, cask_exit_workfn);
	INIT_WORK(&cell->release_work, cask_release_workfn);
	INIT_LIST_HEAD(&cell->node);
	/* From here on, kobject_put() undoes everything above. */
	kobject_init(&cell->kobj, &cask_cell_ktype);

	mutex_lock(&cask_mutex);
	other = cask_find_name_locked(spec->name);
	if (!other) {
		hash_for_each_possible(cask_cells_by_ns, other, hnode,
				       (unsigned long)spec->ipc_ns)
			if (other->ipc_ns == spec->ipc_ns)
				break;
	}
	if (other) {
		ret = -EEXIST;
		goto err_unlock;
	}

	ret = kobject_add(&cell->kobj, cask_cells_kobj, "%s", cell->name);
	if (ret)
		goto err_unlock;
	cell->id = cask_next_id++;
	list_add_tail(&cell->node, &cask_cells);

	for (i = 0; i < CASK_MAX_DRIVERS; i++) {
		if (!cask_drivers[i])
			continue;
		ret = cask_attach_locked(cell, cask_drivers[i]);
		if (ret)
			goto err_detach;
	}

	WRITE_ONCE(cell->linked, true);
	hash_add_rcu(cask_cells_by_ns, &cell->hnode, (unsigned long)cell->ipc_ns);
	if (cell->watch) {
		add_wait_queue(&cell->watch->wait_pidfd, &cell->exit_wait);
		/* It may have died before the entry was on the queue. */
		if (cask_watch_dead(cell->watch))
			queue_work(cask_wq, &cell->exit_work);
	}
	mutex_unlock(&cask_mutex);
	kobject_uevent(&cell->kobj, KOBJ_ADD);
	pr_debug("cell %s (id %llu) registered\n", cell->name, cell->id);
	return cell;

err_detach:
	while (--i >= 0)
		if (cask_drivers[i])
			cask_detach_locked(cell, cask_drivers[i]);
	list_del(&cell->node);
	kobject_del(&cell->kobj);
err_unlock:
	mutex_unlock(&cask_mutex);
	kobject_put(&cell->kobj);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(cask_cell_create);

/**
 * cask_cell_unregister() - unlink a cell and drop the registry's reference
 * @cell: the cell; the caller holds a reference
 *
 * The cell disappears from lookups and sysfs at once; drivers' state stays
 * until their last reference is dropped.
 *
 * Context: process context; takes cask_mutex; must not be called from the
 * cell's exit work.
 * Return: 0, -EBUSY for the host cell, -ENOENT if already unregistered.
 */
int cask_cell_unregister(struct cask_cell *cell)
{
	if (cell == cask_host)
		return -EBUSY;

	mutex_lock(&cask_mutex);
	if (!cell->linked) {
		mutex_unlock(&cask_mutex);
		return -ENOENT;
	}
	cask_unlink_locked(cell);
	mutex_unlock(&cask_mutex);
	/* An exit work that raced with us finds the cell unlinked. */
	cancel_work_sync(&cell->exit_work);
	cask_cell_put(cell);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cask_cell_unregister);

/**
 * cask_ipcns_free() - an IPC namespace ends: unregister its cell
 * @nb: cask_ipcns_nb
 * @action: unused
 * @data: the struct ipc_namespace, still valid as a key
 *
 * Context: the kernel's IPC namespace free work; may sleep.
 * Return: NOTIFY_OK.
 */
int cask_ipcns_free(struct notifier_block *nb, unsigned long action, void *data)
{
	struct cask_cell *cell = NULL, *c;

	mutex_lock(&cask_mutex);
	hash_for_each_possible(cask_cells_by_ns, c, hnode, (unsigned long)data) {
		if (c->ipc_ns == data) {
			cell = c;
			cask_unlink_locked(cell);
			break;
		}
	}
	mutex_unlock(&cask_mutex);
	if (cell) {
		cancel_work_sync(&cell->exit_work);
		cask_cell_put(cell);
	}
	return NOTIFY_OK;
}
EXPORT_SYMBOL_IF_KUNIT(cask_ipcns_free);

/**
 * cask_cells_track_ipc_ns() - whether cells end with their IPC namespace
 *
 * Context: any.
 * Return: true if the kernel has the IPC namespace free notifier.
 */
bool cask_cells_track_ipc_ns(void)
{
	return cask_ipcns_tracked;
}
EXPORT_SYMBOL_IF_KUNIT(cask_cells_track_ipc_ns);

/**
 * cask_cell_flush() - wait for pending cell exits and releases
 *
 * Context: process context, no cask locks held.
 */
void cask_cell_flush(void)
{
	/* An exit work's put can queue a release: flush twice. */
	flush_workqueue(cask_wq);
	flush_workqueue(cask_wq);
}
EXPORT_SYMBOL_IF_KUNIT(cask_cell_flush);

/**
 * cask_cell_get_by_name() - look up a linked cell by name
 * @name: cell name
 *
 * Context: process context; takes cask_mutex.
 * Return: a new reference, or NULL if no linked cell has that name.
 */
struct cask_cell *cask_cell_get_by_name(const char *name)
{
	struct cask_cell *cell;

	mutex_lock(&cask_mutex);
	cell = cask_find_name_locked(name);
	if (cell)
		cask_cell_get(cell);
	mutex_unlock(&cask_mutex);
	return cell;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_get_by_name, CASK);

/**
 * cask_cell_get_host() - the host cell
 *
 * Context: any.
 * Return: a new reference to the cell of the initial namespaces.
 */
struct cask_cell *cask_cell_get_host(void)
{
	return cask_cell_get(cask_host);
}
EXPORT_SYMBOL_NS_GPL(cask_cell_get_host, CASK);

/**
 * cask_cell_find_current() - the current task's cell, if it has one
 *
 * The cheap lookup for hot paths: an RCU hash lookup by IPC namespace.
 *
 * Context: any task context (not an exiting task past exit_task_namespaces()).
 * Return: a new reference, or NULL if the task's IPC namespace has no cell.
 */
struct cask_cell *cask_cell_find_current(void)
{
	struct nsproxy *nsp = current->nsproxy;

	if (!nsp)
		return NULL;
	return cask_cell_find_ns(nsp->ipc_ns);
}
EXPORT_SYMBOL_NS_GPL(cask_cell_find_current, CASK);

/*
 * The thread group whose exit ends an auto cell: the init of the task's PID
 * namespace if it shares the IPC namespace (a container), else the task's
 * own thread group (e.g. "unshare -i" on the host). Without an IPC
 * namespace free hook in the kernel this is the best available proxy for
 * "the namespace died"; see Documentation/cells.rst.
 */
static struct pid *cask_auto_watch(struct pid_namespace *pid_ns,
				   struct ipc_namespace *ipc_ns)
{
	struct task_struct *reaper;
	struct pid *pid = NULL;

	rcu_read_lock();
	reaper = READ_ONCE(pid_ns->child_reaper);
	if (pid_ns != &init_pid_ns && reaper) {
		task_lock(reaper);
		if (reaper->nsproxy && reaper->nsproxy->ipc_ns == ipc_ns)
			pid = get_pid(task_tgid(reaper));
		task_unlock(reaper);
	}
	rcu_read_unlock();
	return pid ?: get_pid(task_tgid(current));
}

static struct cgroup *cask_task_cgroup(struct task_struct *task)
{
	struct cgroup *cgrp;

	rcu_read_lock();
	do {
		cgrp = task_dfl_cgroup(task);
	} while (!cgroup_tryget(cgrp));
	rcu_read_unlock();
	return cgrp;
}

/**
 * cask_cell_get_current() - the current task's cell, made on first use
 *
 * When the task's IPC namespace has no cell and auto cells are enabled
 * (/sys/kernel/cask/auto_cells), a cell "ipc-<inode>" is made from the
 * current task's namespaces and cgroup.
 *
 * Context: process context; may sleep when it makes a cell.
 * Return: a new reference, or ERR_PTR(-ENODEV) if there is no cell and
 * auto cells are off, or another ERR_PTR() if making one failed.
 */
struct cask_cell *cask_cell_get_current(void)
{
	struct cask_cell_spec spec = { .is_auto = true };
	char name[CASK_NAME_MAX + 1];
	struct cask_cell *cell;
	struct nsproxy *nsp;

	cell = cask_cell_find_current();
	if (likely(cell))
		return cell;
	if (!READ_ONCE(cask_auto_cells))
		return ERR_PTR(-ENODEV);
	nsp = current->nsproxy;
	if (!nsp)
		return ERR_PTR(-ESRCH);

	spec.ipc_ns = nsp->ipc_ns;
	spec.user_ns = nsp->ipc_ns->user_ns;
	spec.pid_ns = task_active_pid_ns(current);
	snprintf(name, sizeof(name), "ipc-%u", spec.ipc_ns->ns.inum);
	spec.name = name;
	spec.cgrp = cask_task_cgroup(current);
	if (!cask_ipcns_tracked)
		spec.watch = cask_auto_watch(spec.pid_ns, spec.ipc_ns);

	cell = cask_cell_create(&spec);
	/* Another task of the namespace may have won the race. */
	if (IS_ERR(cell) && PTR_ERR(cell) == -EEXIST)
		cell = cask_cell_find_current() ?: ERR_PTR(-EEXIST);
	put_pid(spec.watch);
	cgroup_put(spec.cgrp);
	return cell;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_get_current, CASK);

/**
 * cask_register_task() - make cell @name from a task's namespaces
 * @name: cell name
 * @nr: the task's pid, in the caller's PID namespace
 *
 * The cell is unregistered again when its IPC namespace ends, or, on a
 * kernel without the IPC namespace free notifier, when the task's thread
 * group exits.
 *
 * Context: process context.
 * Return: 0, or -EINVAL, -ESRCH, -EEXIST, -ENOMEM as for cask_cell_create().
 */
int cask_register_task(const char *name, pid_t nr)
{
	struct cask_cell_spec spec = { .name = name };
	struct task_struct *task;
	struct cask_cell *cell;
	struct pid *pid;
	int ret = -ESRCH;

	if (!cask_name_valid(name) || nr <= 0)
		return -EINVAL;
	pid = find_get_pid(nr);
	task = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
	put_pid(pid);
	if (!task)
		return -ESRCH;

	task_lock(task);
	if (task->nsproxy) {
		spec.ipc_ns = get_ipc_ns(task->nsproxy->ipc_ns);
		ret = 0;
	}
	task_unlock(task);
	if (ret)
		goto put_task;

	spec.user_ns = spec.ipc_ns->user_ns;
	spec.pid_ns = task_active_pid_ns(task);
	if (!spec.pid_ns) {
		ret = -ESRCH;
		goto put_ipc;
	}
	spec.cgrp = cask_task_cgroup(task);
	if (!cask_ipcns_tracked)
		spec.watch = get_task_pid(task, PIDTYPE_TGID);

	cell = cask_cell_create(&spec);
	if (IS_ERR(cell))
		ret = PTR_ERR(cell);
	else
		cask_cell_put(cell);

	put_pid(spec.watch);
	cgroup_put(spec.cgrp);
put_ipc:
	put_ipc_ns(spec.ipc_ns);
put_task:
	put_task_struct(task);
	return ret;
}

/**
 * cask_driver_register() - add a driver's per-cell state to every cell
 * @drv: the driver; stays in use until cask_driver_unregister()
 *
 * @drv->attach is called for each existing cell, including unlinked cells
 * that drivers still hold, and later for each new cell.
 *
 * Context: process context; takes cask_mutex.
 * Return: 0, -ENOSPC if %CASK_MAX_DRIVERS are registered, or the first
 * error an attach returned (nothing stays attached then).
 */
int cask_driver_register(struct cask_driver *drv)
{
	struct cask_cell *cell;
	int slot, ret = 0;

	mutex_lock(&cask_mutex);
	for (slot = 0; slot < CASK_MAX_DRIVERS; slot++)
		if (!cask_drivers[slot])
			break;
	if (slot == CASK_MAX_DRIVERS) {
		ret = -ENOSPC;
		goto unlock;
	}
	drv->slot = slot;
	list_for_each_entry(cell, &cask_cells, node) {
		ret = cask_attach_locked(cell, drv);
		if (ret)
			break;
	}
	if (ret) {
		list_for_each_entry_continue_reverse(cell, &cask_cells, node)
			cask_detach_locked(cell, drv);
		goto unlock;
	}
	cask_drivers[slot] = drv;
unlock:
	mutex_unlock(&cask_mutex);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(cask_driver_register, CASK);

/**
 * cask_driver_unregister() - remove a driver's state from every cell
 * @drv: a registered driver
 *
 * The caller guarantees that nothing uses the driver's per-cell state any
 * more (its files are closed: module unload).
 *
 * Context: process context; takes cask_mutex.
 */
void cask_driver_unregister(struct cask_driver *drv)
{
	struct cask_cell *cell;

	mutex_lock(&cask_mutex);
	cask_drivers[drv->slot] = NULL;
	list_for_each_entry(cell, &cask_cells, node)
		cask_detach_locked(cell, drv);
	mutex_unlock(&cask_mutex);
}
EXPORT_SYMBOL_NS_GPL(cask_driver_unregister, CASK);

/**
 * cask_cell_data() - a driver's state in a cell
 * @cell: a cell the caller holds a reference on
 * @drv: the registered driver
 *
 * Context: any.
 * Return: what @drv->attach returned for @cell.
 */
void *cask_cell_data(struct cask_cell *cell, const struct cask_driver *drv)
{
	return cell->drv[drv->slot]->data;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_data, CASK);

/**
 * cask_cell_from_kobj() - the cell of a driver's sysfs directory
 * @kobj: the kobject passed to a show or store callback of @drv->groups
 *
 * Context: inside that callback.
 * Return: the cell; valid for the duration of the callback.
 */
struct cask_cell *cask_cell_from_kobj(struct kobject *kobj)
{
	return container_of(kobj, struct cask_cell_drv, kobj)->cell;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_from_kobj, CASK);

/**
 * cask_driver_data_from_kobj() - the driver state of a sysfs directory
 * @kobj: the kobject passed to a show or store callback of @drv->groups
 *
 * Context: inside that callback.
 * Return: the driver's state in that cell.
 */
void *cask_driver_data_from_kobj(struct kobject *kobj)
{
	return container_of(kobj, struct cask_cell_drv, kobj)->data;
}
EXPORT_SYMBOL_NS_GPL(cask_driver_data_from_kobj, CASK);

/**
 * cask_cell_name() - a cell's name
 * @cell: the cell
 *
 * Context: any.
 * Return: the name; immutable for the life of the cell.
 */
const char *cask_cell_name(const struct cask_cell *cell)
{
	return cell->name;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_name, CASK);

/**
 * cask_cell_id() - a cell's id
 * @cell: the cell
 *
 * Context: any.
 * Return: the id, unique while cask_core is loaded; 0 for the host.
 */
u64 cask_cell_id(const struct cask_cell *cell)
{
	return cell->id;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_id, CASK);

/**
 * cask_cell_is_host() - whether a cell is the host's
 * @cell: the cell
 *
 * Context: any.
 * Return: true for the cell of the initial namespaces.
 */
bool cask_cell_is_host(const struct cask_cell *cell)
{
	return cell == cask_host;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_is_host, CASK);

/**
 * cask_cell_ipc_ns() - a cell's IPC namespace
 * @cell: the cell
 *
 * Context: any.
 * Return: the namespace; alive while the cell is linked (pinned for the
 * cell's life on a kernel without the IPC namespace free notifier).
 */
struct ipc_namespace *cask_cell_ipc_ns(const struct cask_cell *cell)
{
	return cell->ipc_ns;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_ipc_ns, CASK);

/**
 * cask_cell_user_ns() - the user namespace owning a cell
 * @cell: the cell
 *
 * Context: any.
 * Return: the owner of the cell's IPC namespace, pinned.
 */
struct user_namespace *cask_cell_user_ns(const struct cask_cell *cell)
{
	return cell->user_ns;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_user_ns, CASK);

/**
 * cask_cell_pid_ns() - a cell's PID namespace
 * @cell: the cell
 *
 * Context: any.
 * Return: the PID namespace of the task the cell was made from, pinned.
 */
struct pid_namespace *cask_cell_pid_ns(const struct cask_cell *cell)
{
	return cell->pid_ns;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_pid_ns, CASK);

/**
 * cask_cell_cgroup() - a cell's cgroup v2 directory
 * @cell: the cell
 *
 * Context: any.
 * Return: the cgroup the cell was made in, pinned.
 */
struct cgroup *cask_cell_cgroup(const struct cask_cell *cell)
{
	return cell->cgrp;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_cgroup, CASK);

/**
 * cask_cells_init() - make the host cell
 *
 * Context: module init, after cask_sysfs_init().
 * Return: 0 or -ENOMEM.
 */
int cask_cells_init(void)
{
	struct cask_cell_spec spec = {
		.name = "host",
		.ipc_ns = &init_ipc_ns,
		.user_ns = &init_user_ns,
		.pid_ns = &init_pid_ns,
	};
	struct cask_cell *host;

	int ret;

	/* Releases may sleep on driver teardown; not ordered, see exit work. */
	cask_wq = alloc_workqueue("cask", 0, 0);
	if (!cask_wq)
		return -ENOMEM;
	ret = cask_ipcns_notifier_register(&cask_ipcns_nb);
	cask_ipcns_tracked = !ret;
	if (ret)
		pr_info("no IPC namespace free notifier (patches/0001): cells end with their container's init\n");

	spec.cgrp = cask_task_cgroup(&init_task);
	host = cask_cell_create(&spec);
	cgroup_put(spec.cgrp);
	if (IS_ERR(host)) {
		ret = PTR_ERR(host);
		goto unregister_notifier;
	}
	/* Keep the caller's reference: the host cell lives as long as we do. */
	cask_host = host;
	return 0;

unregister_notifier:
	if (cask_ipcns_tracked)
		cask_ipcns_notifier_unregister(&cask_ipcns_nb);
	destroy_workqueue(cask_wq);
	return ret;
}

static struct cask_cell *cask_get_any_linked(void)
{
	struct cask_cell *cell;

	guard(mutex)(&cask_mutex);
	list_for_each_entry(cell, &cask_cells, node)
		if (cell->linked)
			return cask_cell_get(cell);
	return NULL;
}

/**
 * cask_cells_exit() - unregister every cell and wait for their release
 *
 * Context: module exit; no driver is registered any more (they depend on
 * us), so nothing else holds a cell reference.
 */
void cask_cells_exit(void)
{
	struct cask_cell *cell, *host = cask_host;

	/* The host becomes an ordinary cell so that the loop below takes it. */
	cask_host = NULL;
	while ((cell = cask_get_any_linked())) {
		cask_cell_unregister(cell);
		cask_cell_put(cell);
	}
	cask_cell_put(host);
	cask_cell_flush();
	WARN_ON(!list_empty(&cask_cells));
	/* Waits for a notifier call in progress, which found nothing linked. */
	if (cask_ipcns_tracked)
		cask_ipcns_notifier_unregister(&cask_ipcns_nb);
	destroy_workqueue(cask_wq);
}
