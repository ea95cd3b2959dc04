// SPDX-License-Identifier: GPL-2.0
/*
 * cask cells: registry, lookup, iteration and lifetime.
 *
 * Locking overview, outermost first:
 *
 *   kernel_param_lock   (the kernel's, per module) around a param's set:
 *                       lowmemorykiller's make cells. No device open of
 *                       the drivers holds a kernel lock when it makes a
 *                       cell: they have character devices of their own,
 *                       not misc devices (whose misc_mtx would be here).
 *   cask_drivers_mutex  (driver.c) driver (un)registration and drivers'
 *                       global files, whose callbacks may make cells.
 *   cask_drivers_rwsem  (driver.c) the registered drivers and every cell's
 *                       per-driver state and sysfs directories. Held for
 *                       reading while one cell is made, unlinked (from
 *                       sysfs, then the drivers' unlink) or released;
 *                       for writing while a driver registers or
 *                       unregisters. Driver callbacks run under it.
 *   cask_table_lock     the tables: names, IPC namespaces, the cell list
 *                       and count, cell->state. Held only to change them,
 *                       never across a callback, a sysfs operation or a
 *                       wait; lookups and the iterator use RCU instead.
 *   wait_pidfd lock     the exit callback runs under the waitqueue spinlock
 *                       of the watched pid and only queues exit_work.
 *
 * Lifetime: a linked cell holds one reference on itself. Unregistering
 * (by name, when its IPC namespace ends, or at module exit) unlinks it,
 * lets every driver drop what only the cell's tasks could have consumed
 * (its unlink callback: such things may hold references that lead back
 * to the cell) and drops that reference. On a kernel without the IPC namespace free
 * notifier (patches/0001) cells pin their namespace instead and end when
 * a watched task exits: the container's init. Drivers and lookups hold
 * further references; when the last one goes, release_work detaches every
 * driver, then the kobject release unpins the namespaces and frees the
 * cell after RCU.
 */
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/ipc_namespace.h>
#include <linux/nsproxy.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/user_namespace.h>
#include <linux/xarray.h>
#include <kunit/visibility.h>

#include <cask/compat.h>
#include "core.h"

/* The tables: see the locking overview above. */
DEFINE_MUTEX(cask_table_lock);
/* /sys/kernel/cask/auto_cells; read locklessly on the lookup slow path. */
bool cask_auto_cells = true;
/* /sys/kernel/cask/max_cells; read locklessly when a cell is made. */
unsigned int cask_max_cells = CASK_MAX_CELLS_DEFAULT;
EXPORT_SYMBOL_IF_KUNIT(cask_max_cells);
/* /sys/kernel/cask/max_cells_per_user; read locklessly when a cell is made. */
unsigned int cask_max_cells_per_user = CASK_MAX_CELLS_PER_USER_DEFAULT;
EXPORT_SYMBOL_IF_KUNIT(cask_max_cells_per_user);

/* Both tables grow with the number of cells (max_cells can be raised). */
static const struct rhashtable_params cask_ns_params = {
	.head_offset = offsetof(struct cask_cell, ns_node),
	.key_offset = offsetof(struct cask_cell, ipc_ns),
	.key_len = sizeof(struct ipc_namespace *),
	.automatic_shrinking = true,
};

static const struct rhashtable_params cask_name_params = {
	.head_offset = offsetof(struct cask_cell, name_node),
	.key_offset = offsetof(struct cask_cell, name),
	.key_len = CASK_NAME_MAX + 1,
	.automatic_shrinking = true,
};

static struct rhashtable cask_cells_by_ns;
static struct rhashtable cask_cells_by_name;
/*
 * Every cell from creation to release, in id order: changed under
 * cask_table_lock with cask_drivers_rwsem held for reading, so stable for
 * a holder of cask_drivers_rwsem for writing; read under RCU.
 */
LIST_HEAD(cask_cells);
static unsigned int cask_nr_cells;	/* cask_table_lock */
/* Auto cells per owner uid, as xarray values (cask_table_lock). */
static DEFINE_XARRAY(cask_owner_cells);
/*
 * Auto cells per root-owned outermost user namespace, by its inode number,
 * as xarray values (cask_table_lock). Every cell charged here pins the
 * namespace (through its own user namespace's parents), so the number is
 * not reused while it counts.
 */
static DEFINE_XARRAY(cask_userns_cells);
static unsigned long cask_nr_refused;	/* cask_table_lock */
static u64 cask_next_id;		/* cask_table_lock */
static struct cask_cell *cask_host;
static struct workqueue_struct *cask_wq;
/* Makers of a cell that collided with one being made or removed wait here. */
VISIBLE_IF_KUNIT struct wait_queue_head cask_settle_wq =
	__WAIT_QUEUE_HEAD_INITIALIZER(cask_settle_wq);
EXPORT_SYMBOL_IF_KUNIT(cask_settle_wq);
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
 * a sysfs directory name, so "." and ".." are refused too. The ranges are
 * spelt out: the kernel's isalnum() also takes Latin-1 letters.
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

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
		    !(c >= '0' && c <= '9') && c != '_' && c != '.' && c != '-')
			return false;
	}
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(cask_name_valid);

static bool cask_cell_tryget_linked(struct cask_cell *cell)
{
	/* Pairs with the release store of cask_cell_link(). */
	return smp_load_acquire(&cell->state) == CASK_CELL_LINKED &&
	       refcount_inc_not_zero(&cell->ref);
}

/**
 * cask_cell_find_ns() - look up the cell of an IPC namespace
 * @ns: the namespace; the caller keeps it alive
 *
 * Context: any; takes and drops the RCU read lock.
 * Return: a new reference to the linked cell, or NULL if @ns has none.
 */
struct cask_cell *cask_cell_find_ns(struct ipc_namespace *ns)
{
	struct cask_cell *cell;

	rcu_read_lock();
	cell = rhashtable_lookup(&cask_cells_by_ns, &ns, cask_ns_params);
	if (cell && !cask_cell_tryget_linked(cell))
		cell = NULL;
	rcu_read_unlock();
	return cell;
}
EXPORT_SYMBOL_IF_KUNIT(cask_cell_find_ns);

/**
 * cask_cell_get_by_name() - look up a linked cell by name
 * @name: cell name
 *
 * Context: any; takes and drops the RCU read lock.
 * Return: a new reference, or NULL if no linked cell has that name.
 */
struct cask_cell *cask_cell_get_by_name(const char *name)
{
	char key[CASK_NAME_MAX + 1] = {};
	struct cask_cell *cell;

	if (strscpy(key, name) < 0)
		return NULL;
	rcu_read_lock();
	cell = rhashtable_lookup(&cask_cells_by_name, key, cask_name_params);
	if (cell && !cask_cell_tryget_linked(cell))
		cell = NULL;
	rcu_read_unlock();
	return cell;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_get_by_name, CASK);

/**
 * cask_cell_next() - walk every cell not yet released
 * @prev: the cell returned last, referenced, or NULL to start
 *
 * @prev stays on the cell list while it is referenced (cells leave it in
 * their release), so the walk can go on from it; cells being made are
 * passed by, and so are cells whose last reference is gone.
 *
 * Context: any; takes and drops the RCU read lock, never sleeps.
 * Return: the next cell, referenced, or NULL at the end. The reference on
 * @prev is dropped.
 */
struct cask_cell *cask_cell_next(struct cask_cell *prev)
{
	struct cask_cell *cell, *next = NULL;

	rcu_read_lock();
	cell = prev ?: list_entry(&cask_cells, struct cask_cell, node);
	list_for_each_entry_continue_rcu(cell, &cask_cells, node) {
		/* Pairs with cask_cell_link(): drivers' state is attached. */
		if (smp_load_acquire(&cell->state) != CASK_CELL_NEW &&
		    refcount_inc_not_zero(&cell->ref)) {
			next = cell;
			break;
		}
	}
	rcu_read_unlock();
	cask_cell_put(prev);
	return next;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_next, CASK);

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

/* Where an auto cell is counted: its owner's slot in one of the tables. */
static struct xarray *cask_owner_slot(const struct cask_cell *cell,
				      unsigned long *idx)
{
	if (cell->owner_ns) {
		*idx = cell->owner_ns->ns.inum;
		return &cask_userns_cells;
	}
	*idx = __kuid_val(cell->owner);
	return &cask_owner_cells;
}

/*
 * Count an auto cell against its owner. An unprivileged user can make IPC
 * namespaces at will: without a share of their own, one user could take
 * every auto cell max_cells allows and leave other containers none.
 */
static int cask_owner_charge_locked(const struct cask_cell *cell)
{
	unsigned long idx, n;
	struct xarray *xa;

	lockdep_assert_held(&cask_table_lock);
	xa = cask_owner_slot(cell, &idx);
	n = xa_to_value(xa_load(xa, idx) ?: xa_mk_value(0));
	if (n >= READ_ONCE(cask_max_cells_per_user))
		return -ENOSPC;
	return xa_err(xa_store(xa, idx, xa_mk_value(n + 1), GFP_KERNEL_ACCOUNT));
}

static void cask_owner_uncharge_locked(const struct cask_cell *cell)
{
	unsigned long idx, n;
	struct xarray *xa;

	lockdep_assert_held(&cask_table_lock);
	xa = cask_owner_slot(cell, &idx);
	n = xa_to_value(xa_load(xa, idx) ?: xa_mk_value(1));
	if (n <= 1)
		xa_erase(xa, idx);
	else
		xa_store(xa, idx, xa_mk_value(n - 1), GFP_KERNEL);
}

/*
 * Take the cell's name and namespace and give it an id and a place on the
 * list. The limit applies to auto cells, which any user can make with an
 * IPC namespace of their own; the host cell and the cells the host's
 * admin registers are never refused, so a hostile container cannot keep
 * the host from setting up the next one.
 */
static int cask_cell_reserve(struct cask_cell *cell)
{
	int ret;

	mutex_lock(&cask_table_lock);
	ret = rhashtable_lookup_insert_fast(&cask_cells_by_name, &cell->name_node,
					    cask_name_params);
	if (ret)
		goto unlock;
	ret = rhashtable_lookup_insert_fast(&cask_cells_by_ns, &cell->ns_node,
					    cask_ns_params);
	if (ret)
		goto remove_name;
	/* After the collisions: a second maker of one cell waits, not fails. */
	if (cell->is_auto && cask_nr_cells >= READ_ONCE(cask_max_cells)) {
		ret = -ENOSPC;
		goto refuse;
	}
	if (cell->is_auto) {
		ret = cask_owner_charge_locked(cell);
		if (ret)
			goto refuse;
	}
	cell->id = cask_next_id++;
	list_add_tail_rcu(&cell->node, &cask_cells);
	cask_nr_cells++;
	mutex_unlock(&cask_table_lock);
	return 0;

refuse:
	if (ret == -ENOSPC)
		cask_nr_refused++;
	rhashtable_remove_fast(&cask_cells_by_ns, &cell->ns_node, cask_ns_params);
remove_name:
	rhashtable_remove_fast(&cask_cells_by_name, &cell->name_node,
			       cask_name_params);
	mutex_unlock(&cask_table_lock);
	/*
	 * A maker of the same namespace or name may have seen the new cell
	 * in the tables (cask_cell_settled() looks under RCU) and gone to
	 * wait for it to settle: it has, by going away.
	 */
	wake_up_all(&cask_settle_wq);
	return ret;

unlock:
	mutex_unlock(&cask_table_lock);
	return ret;
}

/* Undo cask_cell_reserve() of a cell that never became visible. */
static void cask_cell_unreserve(struct cask_cell *cell)
{
	scoped_guard(mutex, &cask_table_lock) {
		rhashtable_remove_fast(&cask_cells_by_ns, &cell->ns_node,
				       cask_ns_params);
		rhashtable_remove_fast(&cask_cells_by_name, &cell->name_node,
				       cask_name_params);
		list_del_rcu(&cell->node);
		cask_nr_cells--;
		if (cell->is_auto)
			cask_owner_uncharge_locked(cell);
	}
	wake_up_all(&cask_settle_wq);
}

static void cask_cell_link(struct cask_cell *cell)
{
	scoped_guard(mutex, &cask_table_lock) {
		/* On the queue before the cell can be unlinked, which takes it off. */
		if (cell->watch)
			add_wait_queue(&cell->watch->wait_pidfd, &cell->exit_wait);
		/* Drivers' state is attached: lookups may hand the cell out. */
		smp_store_release(&cell->state, CASK_CELL_LINKED);
	}
	wake_up_all(&cask_settle_wq);
	/* The task may have died before the entry was on the queue. */
	if (cell->watch && cask_watch_dead(cell->watch))
		queue_work(cask_wq, &cell->exit_work);
}

/*
 * Make a linked cell unfindable, remove it from sysfs and call the drivers'
 * unlink. Only the caller that moves the cell out of the linked state does
 * it, and then owns the registry's reference, which it drops after us. The
 * name stays taken until the directory is gone, so that a new cell of the
 * same name cannot collide with it in sysfs.
 */
static bool cask_cell_unlink(struct cask_cell *cell)
{
	scoped_guard(mutex, &cask_table_lock) {
		if (cell->state != CASK_CELL_LINKED)
			return false;
		WRITE_ONCE(cell->state, CASK_CELL_UNLINKED);
		rhashtable_remove_fast(&cask_cells_by_ns, &cell->ns_node,
				       cask_ns_params);
		if (cell->watch)
			remove_wait_queue(&cell->watch->wait_pidfd, &cell->exit_wait);
	}
	/* Waits for running show/store callbacks: no table lock held. */
	scoped_guard(rwsem_read, &cask_drivers_rwsem)
		cask_cell_del_dirs_locked(cell);
	scoped_guard(mutex, &cask_table_lock)
		rhashtable_remove_fast(&cask_cells_by_name, &cell->name_node,
				       cask_name_params);
	wake_up_all(&cask_settle_wq);
	/*
	 * After the name is free: a driver may take a while to let go of
	 * what the cell's tasks left queued, and the next cell of that name
	 * (a restarted container) need not wait for it.
	 */
	scoped_guard(rwsem_read, &cask_drivers_rwsem)
		cask_cell_unlink_all_locked(cell);
	pr_debug("cell %s (id %llu) unregistered\n", cell->name, cell->id);
	return true;
}

static void cask_exit_workfn(struct work_struct *work)
{
	struct cask_cell *cell = container_of(work, struct cask_cell, exit_work);

	/*
	 * No reference is held here: the release work cancels this work
	 * before the cell can be freed, and only a linked cell is watched.
	 */
	if (cask_watch_dead(cell->watch) && cask_cell_unlink(cell))
		cask_cell_put(cell);
}

static void cask_release_workfn(struct work_struct *work)
{
	struct cask_cell *cell = container_of(work, struct cask_cell, release_work);

	cancel_work_sync(&cell->exit_work);
	scoped_guard(rwsem_read, &cask_drivers_rwsem) {
		/* Off the list first: nobody can attach to it any more. */
		scoped_guard(mutex, &cask_table_lock) {
			list_del_rcu(&cell->node);
			cask_nr_cells--;
			if (cell->is_auto)
				cask_owner_uncharge_locked(cell);
		}
		cask_cell_detach_all_locked(cell);
	}
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
	return READ_ONCE(cell->state) == CASK_CELL_LINKED;
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
 * The cell's memory is charged to the caller's memory cgroup: for an auto
 * cell that is a task of the container.
 *
 * Context: process context; takes cask_drivers_rwsem for reading and calls
 * every registered driver's attach callback.
 * Return: the cell, with a reference for the caller, or an ERR_PTR():
 * -EINVAL for a bad name, -EEXIST if the name or the IPC namespace already
 * has a cell, -ENOSPC for an auto cell past /sys/kernel/cask/max_cells,
 * -ENOMEM, or what a driver's attach returned.
 */
struct cask_cell *cask_cell_create(const struct cask_cell_spec *spec)
{
	struct cask_cell *cell;
	int ret;

	if (!cask_name_valid(spec->name))
		return ERR_PTR(-EINVAL);

	cell = kzalloc(sizeof(*cell), GFP_KERNEL_ACCOUNT);
	if (!cell)
		return ERR_PTR(-ENOMEM);
	/* The registry's reference and the caller's. */
	refcount_set(&cell->ref, 2);
	strscpy(cell->name, spec->name);
	cell->is_auto = spec->is_auto;
	cell->owner = cask_cell_owner(spec->user_ns);
	cell->owner_ns = cask_cell_owner_ns(spec->user_ns);
	cell->state = CASK_CELL_NEW;
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
	/* From here on, kobject_put() undoes everything above. */
	kobject_init(&cell->kobj, &cask_cell_ktype);

	down_read(&cask_drivers_rwsem);
	ret = cask_cell_reserve(cell);
	if (ret)
		goto err_unlock_drivers;
	ret = kobject_add(&cell->kobj, cask_cells_kobj, "%s", cell->name);
	if (ret)
		goto err_unreserve;
	ret = cask_cell_attach_all_locked(cell);
	if (ret)
		goto err_del_kobj;
	cask_cell_link(cell);
	up_read(&cask_drivers_rwsem);
	pr_debug("cell %s (id %llu) registered\n", cell->name, cell->id);
	return cell;

err_del_kobj:
	kobject_del(&cell->kobj);
err_unreserve:
	cask_cell_unreserve(cell);
err_unlock_drivers:
	up_read(&cask_drivers_rwsem);
	kobject_put(&cell->kobj);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(cask_cell_create);

/*
 * Whether nothing in transition stands in the way of making a cell for @ns
 * named @name: no cell of @ns is being made, and no cell of that name is
 * being removed from sysfs.
 */
static bool cask_cell_settled(struct ipc_namespace *ns, const char *name)
{
	char key[CASK_NAME_MAX + 1] = {};
	struct cask_cell *cell;
	bool settled = true;

	strscpy(key, name);
	rcu_read_lock();
	cell = rhashtable_lookup(&cask_cells_by_ns, &ns, cask_ns_params);
	if (cell && READ_ONCE(cell->state) == CASK_CELL_NEW)
		settled = false;
	cell = rhashtable_lookup(&cask_cells_by_name, key, cask_name_params);
	if (cell && READ_ONCE(cell->state) != CASK_CELL_LINKED)
		settled = false;
	rcu_read_unlock();
	return settled;
}

/**
 * cask_cell_create_or_find() - make a cell, or find the one made meanwhile
 * @spec: as for cask_cell_create()
 *
 * Two tasks of a new container that use cask at once both try to make its
 * cell: the loser waits until the winner's cell is linked (or failed) and
 * returns it, rather than failing with -EEXIST while drivers attach. So
 * does a maker that collides with a cell of the same name on its way out.
 *
 * Context: process context, as cask_cell_create(); the wait is killable.
 * Return: a new reference to the cell of @spec->ipc_ns, or an ERR_PTR() as
 * for cask_cell_create(), -EEXIST only if another linked cell has the
 * name, -EINTR if killed while waiting.
 */
struct cask_cell *cask_cell_create_or_find(const struct cask_cell_spec *spec)
{
	struct cask_cell *cell;

	for (;;) {
		cell = cask_cell_create(spec);
		if (!IS_ERR(cell) || PTR_ERR(cell) != -EEXIST)
			return cell;
		cell = cask_cell_find_ns(spec->ipc_ns);
		if (cell)
			return cell;
		if (cask_cell_settled(spec->ipc_ns, spec->name)) {
			/* Settled since: EEXIST only for a cell really in the way. */
			cell = cask_cell_get_by_name(spec->name);
			if (cell) {
				cask_cell_put(cell);
				return ERR_PTR(-EEXIST);
			}
			cond_resched();
			continue;
		}
		if (wait_event_killable(cask_settle_wq,
					cask_cell_settled(spec->ipc_ns, spec->name)))
			return ERR_PTR(-EINTR);
	}
}
EXPORT_SYMBOL_IF_KUNIT(cask_cell_create_or_find);

/**
 * cask_cell_unregister() - unlink a cell and drop the registry's reference
 * @cell: the cell; the caller holds a reference
 *
 * The cell disappears from lookups and sysfs at once; drivers' state stays
 * until their last reference is dropped.
 *
 * Context: process context; takes cask_table_lock and cask_drivers_rwsem;
 * must not be called from the cell's exit work nor from a driver callback.
 * Return: 0, -EBUSY for the host cell, -ENOENT if already unregistered.
 */
int cask_cell_unregister(struct cask_cell *cell)
{
	if (cell == READ_ONCE(cask_host))
		return -EBUSY;
	if (!cask_cell_unlink(cell))
		return -ENOENT;
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
	struct cask_cell *cell = cask_cell_find_ns(data);

	if (!cell)
		return NOTIFY_OK;
	if (cask_cell_unlink(cell)) {
		cancel_work_sync(&cell->exit_work);
		cask_cell_put(cell);
	}
	cask_cell_put(cell);
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
 * cask_cells_count() - how many cells exist
 *
 * Context: any; the answer may change right after.
 * Return: the number of cells not yet released, the host's included.
 */
unsigned int cask_cells_count(void)
{
	return READ_ONCE(cask_nr_cells);
}
EXPORT_SYMBOL_IF_KUNIT(cask_cells_count);

/**
 * cask_cells_count_owner() - how many auto cells count against a uid
 * @owner: the host uid
 *
 * Context: any; the answer may change right after.
 * Return: the number of auto cells of @owner not yet released.
 */
unsigned int cask_cells_count_owner(kuid_t owner)
{
	return xa_to_value(xa_load(&cask_owner_cells, __kuid_val(owner)) ?:
			   xa_mk_value(0));
}
EXPORT_SYMBOL_IF_KUNIT(cask_cells_count_owner);

/**
 * cask_cell_owner() - the host uid an auto cell counts against
 * @ns: the user namespace owning the cell's IPC namespace
 *
 * The uid that made the outermost user namespace above @ns, so that every
 * namespace an unprivileged user nests counts against that user; without
 * a user namespace of its own, the maker's effective uid (root: making an
 * IPC namespace needs CAP_SYS_ADMIN there).
 *
 * Context: task context, the maker of the cell.
 * Return: the owner.
 */
kuid_t cask_cell_owner(struct user_namespace *ns)
{
	if (ns == &init_user_ns)
		return current_euid();
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	return ns->owner;
}
EXPORT_SYMBOL_IF_KUNIT(cask_cell_owner);

/**
 * cask_cell_owner_ns() - the user namespace an auto cell counts against
 * @ns: the user namespace owning the cell's IPC namespace
 *
 * A rootful runtime (LXC/Incus, docker's userns-remap, Kubernetes user
 * namespaces) makes every container's user namespace as the host's root:
 * counted against uid 0, one container's root could use up the share of
 * every other container, whose first open would then fail. The outermost
 * user namespace above @ns, when the host's root made it, is therefore a
 * share of its own; whatever the container nests below it counts there too.
 * Namespaces of other users stay counted against the user, who can make as
 * many user namespaces as they like.
 *
 * Context: any.
 * Return: that namespace, valid as long as @ns is, or NULL if the cell
 * counts against cask_cell_owner()'s uid.
 */
struct user_namespace *cask_cell_owner_ns(struct user_namespace *ns)
{
	if (ns == &init_user_ns)
		return NULL;
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	return uid_eq(ns->owner, GLOBAL_ROOT_UID) ? ns : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(cask_cell_owner_ns);

/**
 * cask_cells_refused() - how many cells the limits refused
 *
 * Context: any.
 * Return: the count since the module was loaded.
 */
unsigned long cask_cells_refused(void)
{
	return READ_ONCE(cask_nr_refused);
}
EXPORT_SYMBOL_IF_KUNIT(cask_cells_refused);

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
 * The cheap lookup for hot paths: an RCU hash lookup by IPC namespace. It
 * never makes a cell; cask_cell_get_or_create() does.
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
 *
 * The init is found by its pid, 1, with references: pid_ns->child_reaper
 * is a bare pointer that outlives the task it names once the namespace's
 * init has exited and been reaped.
 */
static struct pid *cask_auto_watch(struct pid_namespace *pid_ns,
				   struct ipc_namespace *ipc_ns)
{
	struct task_struct *init;
	struct pid *pid = NULL;
	bool same = false;

	if (pid_ns != &init_pid_ns) {
		rcu_read_lock();
		pid = get_pid(find_pid_ns(1, pid_ns));
		rcu_read_unlock();
	}
	init = get_pid_task(pid, PIDTYPE_TGID);
	if (init) {
		task_lock(init);
		same = init->nsproxy && init->nsproxy->ipc_ns == ipc_ns;
		task_unlock(init);
		put_task_struct(init);
	}
	if (same)
		return pid;
	put_pid(pid);
	return get_pid(task_tgid(current));
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

/* Suffixed names an auto cell tries when its own is taken. */
#define CASK_AUTO_NAME_TRIES	8

/**
 * cask_cell_get_or_create() - the current task's cell, made on first use
 *
 * When the task's IPC namespace has no cell and auto cells are enabled
 * (/sys/kernel/cask/auto_cells), a cell "ipc-<inode>" is made from the
 * current task's namespaces and cgroup, attaching every driver; if that
 * name is taken by another namespace's cell, "ipc-<inode>.<n>".
 *
 * Context: process context, not inside a cask driver callback (lockdep
 * checks); may sleep when it makes a cell.
 * Return: a new reference, or ERR_PTR(-ENODEV) if there is no cell and
 * auto cells are off, or another ERR_PTR() if making one failed (-ENOSPC
 * past max_cells, -EINTR if killed while another task was making it).
 */
struct cask_cell *cask_cell_get_or_create(void)
{
	struct cask_cell_spec spec = { .is_auto = true };
	char name[CASK_NAME_MAX + 1];
	struct cask_cell *cell;
	struct nsproxy *nsp;
	unsigned int seq;

	lockdep_assert_not_held(&cask_drivers_rwsem);
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

	/* Another task of the namespace may be making it right now. */
	cell = cask_cell_create_or_find(&spec);
	/*
	 * The name is taken by a cell of another namespace: an admin's, or,
	 * without the IPC namespace notifier, the cell of a namespace that
	 * died while its watched task lives on, whose number the kernel has
	 * given to this one. The namespace still gets its cell, under a
	 * suffixed name (/sys/kernel/cask/self tells a task its cell).
	 */
	for (seq = 1; IS_ERR(cell) && PTR_ERR(cell) == -EEXIST &&
	     seq <= CASK_AUTO_NAME_TRIES; seq++) {
		snprintf(name, sizeof(name), "ipc-%u.%u",
			 spec.ipc_ns->ns.inum, seq);
		cell = cask_cell_create_or_find(&spec);
	}
	put_pid(spec.watch);
	cgroup_put(spec.cgrp);
	return cell;
}
EXPORT_SYMBOL_NS_GPL(cask_cell_get_or_create, CASK);

/**
 * cask_register_task() - make cell @name from a task's namespaces
 * @name: cell name
 * @pid: the task's pid, referenced by the caller
 *
 * The cell is unregistered again when its IPC namespace ends, or, on a
 * kernel without the IPC namespace free notifier, when the task's thread
 * group exits.
 *
 * Context: process context.
 * Return: 0, or -EINVAL, -ESRCH (also for a task that is exiting),
 * -EEXIST, -ENOSPC, -ENOMEM as for cask_cell_create().
 */
int cask_register_task(const char *name, struct pid *pid)
{
	struct cask_cell_spec spec = { .name = name };
	struct task_struct *task;
	struct cask_cell *cell;
	int ret = -ESRCH;

	if (!cask_name_valid(name))
		return -EINVAL;
	task = get_pid_task(pid, PIDTYPE_PID);
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
	spec.pid_ns = ns_of_pid(pid);
	if (!cask_ipcns_tracked) {
		spec.watch = get_task_pid(task, PIDTYPE_TGID);
		/* Exiting: there is nothing left to watch. */
		if (!spec.watch) {
			ret = -ESRCH;
			goto put_ipc;
		}
	}
	spec.cgrp = cask_task_cgroup(task);

	cell = cask_cell_create(&spec);
	if (IS_ERR(cell))
		ret = PTR_ERR(cell);
	else
		cask_cell_put(cell);

	cgroup_put(spec.cgrp);
	put_pid(spec.watch);
put_ipc:
	put_ipc_ns(spec.ipc_ns);
put_task:
	put_task_struct(task);
	return ret;
}

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
	return cell == READ_ONCE(cask_host);
}
EXPORT_SYMBOL_NS_GPL(cask_cell_is_host, CASK);

/**
 * cask_cell_registered() - whether a cell is a container a runtime set up
 * @cell: the cell
 *
 * A cell made through /sys/kernel/cask/register, which only the host's
 * root may write: not the host's cell, and not an auto cell, which any
 * new IPC namespace may make. Drivers give such a cell's own conventions
 * (Android's ids in its user namespace) a meaning they must not have for
 * an arbitrary host service's namespace.
 *
 * Context: any.
 * Return: true for a registered cell.
 */
bool cask_cell_registered(const struct cask_cell *cell)
{
	return !cell->is_auto && !cask_cell_is_host(cell);
}
EXPORT_SYMBOL_NS_GPL(cask_cell_registered, CASK);

/**
 * cask_cell_current_may_see() - whether the current task may see a cell
 * @cell: the cell
 *
 * A cell's files and state are for its own tasks and the host's: file
 * ownership alone does not separate containers that share a root uid
 * mapping (docker's userns-remap, rootless podman) or have no user
 * namespace at all.
 *
 * Context: task context.
 * Return: true if current is in @cell, which is linked, or in the host
 * (cask_current_in_host()).
 */
bool cask_cell_current_may_see(const struct cask_cell *cell)
{
	struct nsproxy *nsp = current->nsproxy;

	if (!nsp)
		return false;
	/* An unlinked cell's namespace pointer may have been reused. */
	if (cask_cell_linked(cell) && nsp->ipc_ns == cell->ipc_ns)
		return true;
	return cask_current_in_host();
}
EXPORT_SYMBOL_NS_GPL(cask_cell_current_may_see, CASK);

/**
 * cask_current_in_host() - whether the current task sees as the host does
 *
 * The initial IPC namespace alone does not make a host task: containers
 * started with the host's IPC namespace (docker --ipc=host) have it too,
 * but not the initial PID namespace.
 *
 * Context: task context.
 * Return: true if current is in the initial IPC and PID namespaces.
 */
bool cask_current_in_host(void)
{
	struct nsproxy *nsp = current->nsproxy;

	return nsp && nsp->ipc_ns == &init_ipc_ns &&
	       task_active_pid_ns(current) == &init_pid_ns;
}
EXPORT_SYMBOL_NS_GPL(cask_current_in_host, CASK);

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
 * cask_cells_init() - set up the tables and make the host cell
 *
 * Context: module init, after cask_sysfs_init() and before the control
 * files that make cells exist.
 * Return: 0 or a negative errno.
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

	ret = rhashtable_init(&cask_cells_by_ns, &cask_ns_params);
	if (ret)
		return ret;
	ret = rhashtable_init(&cask_cells_by_name, &cask_name_params);
	if (ret)
		goto destroy_ns_table;
	/* Releases may sleep on driver teardown; not ordered, see exit work. */
	cask_wq = alloc_workqueue("cask", 0, 0);
	if (!cask_wq) {
		ret = -ENOMEM;
		goto destroy_name_table;
	}
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
	WRITE_ONCE(cask_host, host);
	return 0;

unregister_notifier:
	if (cask_ipcns_tracked)
		cask_ipcns_notifier_unregister(&cask_ipcns_nb);
	destroy_workqueue(cask_wq);
destroy_name_table:
	rhashtable_destroy(&cask_cells_by_name);
destroy_ns_table:
	rhashtable_destroy(&cask_cells_by_ns);
	return ret;
}

static struct cask_cell *cask_get_any_linked(void)
{
	struct cask_cell *cell;

	for (cell = cask_cell_next(NULL); cell; cell = cask_cell_next(cell))
		if (cask_cell_linked(cell))
			return cell;
	return NULL;
}

/**
 * cask_cells_exit() - unregister every cell and wait for their release
 *
 * Context: module exit, after the control files are gone; no driver is
 * registered any more (they depend on us), so nothing else holds a cell
 * reference.
 */
void cask_cells_exit(void)
{
	struct cask_cell *cell, *host = cask_host;

	/* Waits for a notifier call in progress: none can unlink after this. */
	if (cask_ipcns_tracked)
		cask_ipcns_notifier_unregister(&cask_ipcns_nb);
	/* The host becomes an ordinary cell so that the loop below takes it. */
	WRITE_ONCE(cask_host, NULL);
	while ((cell = cask_get_any_linked())) {
		cask_cell_unregister(cell);
		cask_cell_put(cell);
	}
	cask_cell_put(host);
	cask_cell_flush();
	WARN_ON(!list_empty(&cask_cells));
	destroy_workqueue(cask_wq);
	WARN_ON(!xa_empty(&cask_owner_cells));
	WARN_ON(!xa_empty(&cask_userns_cells));
	rhashtable_destroy(&cask_cells_by_name);
	rhashtable_destroy(&cask_cells_by_ns);
}
