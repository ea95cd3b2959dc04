// SPDX-License-Identifier: GPL-2.0
/*
 * cask drivers: registration, the per-cell state of each driver, and the
 * order in which drivers attach to and detach from a cell.
 *
 * Drivers attach in registration order and detach in exactly the reverse
 * order on every path: a cell's release, a failed attach's unwind and a
 * driver's unregistration (which, modules being unloaded in reverse
 * dependency order, comes in reverse too). A driver that uses another's
 * per-cell state registers after it; its module depends on the other's,
 * so it cannot be loaded earlier nor unloaded later.
 *
 * cask_drivers_mutex (outermost) serialises registrations and the drivers'
 * global files; cask_drivers_rwsem protects the driver list and every
 * cell's ->drv[] and per-driver directories; see cell.c for the order.
 */
#include <linux/lockdep.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <kunit/visibility.h>

#include "core.h"

/*
 * Serialises registrations and their global sysfs files, outside
 * cask_drivers_rwsem: removing a global file waits for its callbacks,
 * which may make cells and so take cask_drivers_rwsem for reading.
 */
static DEFINE_MUTEX(cask_drivers_mutex);
DECLARE_RWSEM(cask_drivers_rwsem);
/* Registered drivers, in registration order (cask_drivers_rwsem). */
static LIST_HEAD(cask_drivers);
/* Which slots of cell->drv[] are taken (cask_drivers_rwsem). */
static unsigned long cask_driver_slots;

/*
 * Names a driver directory may not take: the files of a cell's directory
 * and of /sys/kernel/cask/.
 */
static const char *const cask_reserved_names[] = {
	"id", "ipc_ns", "user_ns", "pid_ns", "cgroup", "auto",
	"register", "unregister", "auto_cells", "self", "max_cells",
	"cells_refused", "max_cells_per_user", "features", "cells",
};

/**
 * cask_driver_name_valid() - check a driver name
 * @name: candidate
 *
 * Context: any.
 * Return: true for [a-z0-9_]+ of at most %CASK_NAME_MAX characters that no
 * file of cask_core uses.
 */
bool cask_driver_name_valid(const char *name)
{
	size_t len, i;

	if (!name)
		return false;
	len = strnlen(name, CASK_NAME_MAX + 1);
	if (len == 0 || len > CASK_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!(name[i] >= 'a' && name[i] <= 'z') &&
		    !(name[i] >= '0' && name[i] <= '9') && name[i] != '_')
			return false;
	return match_string(cask_reserved_names, ARRAY_SIZE(cask_reserved_names),
			    name) < 0;
}
EXPORT_SYMBOL_IF_KUNIT(cask_driver_name_valid);

/**
 * cask_attach_locked() - give a cell a driver's state and directory
 * @cell: a cell being made, or any cell when @drv registers
 * @drv: the driver
 *
 * The directory is made with its files at once (the driver's ktype has
 * them as default groups), then the host's files, and only while the cell
 * itself is in sysfs.
 *
 * Context: process context, cask_drivers_rwsem held.
 * Return: 0 or a negative errno; nothing is left attached on error.
 */
int cask_attach_locked(struct cask_cell *cell, struct cask_driver *drv)
{
	struct cask_cell_drv *cd;
	void *data = NULL;
	int ret;

	lockdep_assert_held(&cask_drivers_rwsem);
	if (drv->attach) {
		data = drv->attach(cell);
		if (IS_ERR(data))
			return PTR_ERR(data);
	}
	cd = kzalloc(sizeof(*cd), GFP_KERNEL_ACCOUNT);
	if (!cd) {
		ret = -ENOMEM;
		goto err_detach;
	}
	cd->cell = cell;
	cd->data = data;
	kobject_init(&cd->kobj, drv->ktype);
	if ((drv->groups || drv->host_groups) && cell->kobj.state_in_sysfs) {
		ret = kobject_add(&cd->kobj, &cell->kobj, "%s", drv->name);
		if (ret)
			goto err_put_kobj;
		/*
		 * Born the host's: changing the owner after creation would
		 * leave a moment in which the cell's root could chmod them.
		 */
		cd->host_owned = true;
		ret = sysfs_create_groups(&cd->kobj, drv->host_groups);
		cd->host_owned = false;
		if (ret)
			goto err_del_kobj;
	}
	/* Pairs with READ_ONCE() in cask_cell_data(): lockless walkers. */
	smp_store_release(&cell->drv[drv->slot], cd);
	return 0;

err_del_kobj:
	/* Takes the host's files that were made, with the directory. */
	kobject_del(&cd->kobj);
err_put_kobj:
	kobject_put(&cd->kobj);
err_detach:
	if (drv->detach)
		drv->detach(cell, data);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(cask_attach_locked);

/**
 * cask_detach_locked() - remove a driver's state and directory from a cell
 * @cell: the cell
 * @drv: the driver; nothing happens if it is not attached to @cell
 *
 * Context: process context, cask_drivers_rwsem held.
 */
void cask_detach_locked(struct cask_cell *cell, struct cask_driver *drv)
{
	struct cask_cell_drv *cd = cell->drv[drv->slot];

	lockdep_assert_held(&cask_drivers_rwsem);
	if (!cd)
		return;
	cell->drv[drv->slot] = NULL;
	/* Removing the directory waits for its show/store callbacks. */
	if (cd->kobj.state_in_sysfs)
		kobject_del(&cd->kobj);
	if (drv->detach)
		drv->detach(cell, cd->data);
	kobject_put(&cd->kobj);
}
EXPORT_SYMBOL_IF_KUNIT(cask_detach_locked);

/**
 * cask_cell_attach_all_locked() - attach every driver to a new cell
 * @cell: the cell being made
 *
 * Context: process context, cask_drivers_rwsem held for reading.
 * Return: 0, or the first error; drivers attached before it are detached
 * again, in reverse order.
 */
int cask_cell_attach_all_locked(struct cask_cell *cell)
{
	struct cask_driver *drv;
	int ret;

	lockdep_assert_held(&cask_drivers_rwsem);
	list_for_each_entry(drv, &cask_drivers, node) {
		ret = cask_attach_locked(cell, drv);
		if (ret)
			goto err_detach;
	}
	return 0;

err_detach:
	list_for_each_entry_continue_reverse(drv, &cask_drivers, node)
		cask_detach_locked(cell, drv);
	return ret;
}

/**
 * cask_cell_detach_all_locked() - detach every driver from a cell
 * @cell: the cell being released
 *
 * Context: process context, cask_drivers_rwsem held for reading.
 */
void cask_cell_detach_all_locked(struct cask_cell *cell)
{
	struct cask_driver *drv;

	lockdep_assert_held(&cask_drivers_rwsem);
	list_for_each_entry_reverse(drv, &cask_drivers, node)
		cask_detach_locked(cell, drv);
}

/**
 * cask_cell_del_dirs_locked() - remove a cell's directory from sysfs
 * @cell: the cell being unlinked
 *
 * The drivers' directories go first, in reverse order, then the cell's;
 * the driver state stays until the release.
 *
 * Context: process context, cask_drivers_rwsem held; waits for running
 * show/store callbacks.
 */
void cask_cell_del_dirs_locked(struct cask_cell *cell)
{
	struct cask_driver *drv;
	struct cask_cell_drv *cd;

	lockdep_assert_held(&cask_drivers_rwsem);
	list_for_each_entry_reverse(drv, &cask_drivers, node) {
		cd = cell->drv[drv->slot];
		if (cd && cd->kobj.state_in_sysfs)
			kobject_del(&cd->kobj);
	}
	kobject_del(&cell->kobj);
}

/**
 * cask_cell_unlink_all_locked() - tell every driver that a cell was unlinked
 * @cell: the cell, unlinked and still referenced by the caller
 *
 * In reverse registration order, as detach: a driver that uses another's
 * state still finds it as it was.
 *
 * Context: process context, cask_drivers_rwsem held for reading.
 */
void cask_cell_unlink_all_locked(struct cask_cell *cell)
{
	struct cask_driver *drv;
	struct cask_cell_drv *cd;

	lockdep_assert_held(&cask_drivers_rwsem);
	list_for_each_entry_reverse(drv, &cask_drivers, node) {
		cd = cell->drv[drv->slot];
		if (cd && drv->unlink)
			drv->unlink(cell, cd->data);
	}
}

/*
 * /sys/kernel/cask/<driver>/: its files come with it, as default groups of
 * a ktype of its own, made at registration like the per-cell one.
 */
struct cask_driver_dir {
	struct kobject kobj;
	const struct kobj_type *ktype;
};

static void cask_driver_dir_release(struct kobject *kobj)
{
	struct cask_driver_dir *dir = container_of(kobj, struct cask_driver_dir, kobj);

	/* kobject_cleanup() is done with the ktype once this is called. */
	kfree(dir->ktype);
	kfree(dir);
}

static int cask_driver_add_sysfs(struct cask_driver *drv)
{
	struct cask_driver_dir *dir;
	int ret;

	lockdep_assert_held(&cask_drivers_mutex);
	if (drv->features) {
		drv->feature_group.name = "features";
		drv->feature_group.attrs = drv->features;
		ret = sysfs_merge_group(cask_kobj, &drv->feature_group);
		if (ret)
			return ret;
	}
	if (!drv->global_groups)
		return 0;
	dir = kzalloc(sizeof(*dir), GFP_KERNEL);
	if (!dir) {
		ret = -ENOMEM;
		goto unmerge_features;
	}
	dir->ktype = kmemdup(&(const struct kobj_type) {
			.release = cask_driver_dir_release,
			.sysfs_ops = &kobj_sysfs_ops,
			.default_groups = drv->global_groups,
		}, sizeof(*dir->ktype), GFP_KERNEL);
	if (!dir->ktype) {
		ret = -ENOMEM;
		goto free_dir;
	}
	ret = kobject_init_and_add(&dir->kobj, dir->ktype, cask_kobj, "%s",
				   drv->name);
	if (ret)
		goto put_dir;
	drv->kobj = &dir->kobj;
	return 0;

put_dir:
	/* The release frees the ktype and the directory. */
	kobject_put(&dir->kobj);
	goto unmerge_features;
free_dir:
	kfree(dir);
unmerge_features:
	if (drv->features)
		sysfs_unmerge_group(cask_kobj, &drv->feature_group);
	return ret;
}

static void cask_driver_remove_sysfs(struct cask_driver *drv)
{
	lockdep_assert_held(&cask_drivers_mutex);
	if (drv->kobj) {
		kobject_del(drv->kobj);
		kobject_put(drv->kobj);
		drv->kobj = NULL;
	}
	if (drv->features)
		sysfs_unmerge_group(cask_kobj, &drv->feature_group);
}

/* Per-cell files are checked by cask_core before they are called. */
static bool cask_driver_groups_valid(const struct attribute_group **groups)
{
	for (; groups && *groups; groups++)
		if ((*groups)->bin_attrs)
			return false;
	return true;
}

/*
 * How often @name is an entry of the directory @dir (NULL: the driver's
 * per-cell directory itself, else its subdirectory of that name) in
 * @groups: a file, or a named group's subdirectory.
 */
static int cask_groups_name_count(const struct attribute_group **groups,
				  const char *dir, const char *name)
{
	const struct attribute_group *grp;
	struct attribute **attr;
	int n = 0;

	for (; groups && *groups; groups++) {
		grp = *groups;
		if (!dir && grp->name && !strcmp(grp->name, name))
			n++;
		if (dir ? !grp->name || strcmp(grp->name, dir) : !!grp->name)
			continue;
		for (attr = grp->attrs; attr && *attr; attr++)
			n += !strcmp((*attr)->name, name);
	}
	return n;
}

static bool cask_driver_name_once(const struct cask_driver *drv,
				  const char *dir, const char *name)
{
	return cask_groups_name_count(drv->groups, dir, name) +
	       cask_groups_name_count(drv->host_groups, dir, name) == 1;
}

/*
 * groups and host_groups share one directory per cell. A name used twice
 * would fail every cell's attach in sysfs, with a warning and a stack
 * dump each time; refuse the driver instead.
 */
static bool cask_driver_names_unique(const struct cask_driver *drv)
{
	const struct attribute_group **lists[] = { drv->groups, drv->host_groups };
	const struct attribute_group **groups;
	struct attribute **attr;
	int i;

	for (i = 0; i < ARRAY_SIZE(lists); i++) {
		for (groups = lists[i]; groups && *groups; groups++) {
			if ((*groups)->name &&
			    !cask_driver_name_once(drv, NULL, (*groups)->name))
				return false;
			for (attr = (*groups)->attrs; attr && *attr; attr++)
				if (!cask_driver_name_once(drv, (*groups)->name,
							   (*attr)->name))
					return false;
		}
	}
	return true;
}

static bool cask_driver_name_taken_locked(const char *name)
{
	struct cask_driver *drv;

	lockdep_assert_held(&cask_drivers_mutex);
	list_for_each_entry(drv, &cask_drivers, node)
		if (!strcmp(drv->name, name))
			return true;
	return false;
}

static int cask_driver_attach_cells(struct cask_driver *drv)
{
	struct cask_cell *cell;
	int ret = 0;

	down_write(&cask_drivers_rwsem);
	/*
	 * No cell is made or released while we hold the lock for writing,
	 * so the list is stable. A cell whose last reference is gone is
	 * passed by: its release, waiting for us, detaches nothing of ours,
	 * and an attach must never see a cell it cannot take a reference on.
	 */
	list_for_each_entry(cell, &cask_cells, node) {
		if (!refcount_read(&cell->ref))
			continue;
		ret = cask_attach_locked(cell, drv);
		if (ret)
			break;
	}
	if (ret) {
		list_for_each_entry_continue_reverse(cell, &cask_cells, node)
			cask_detach_locked(cell, drv);
	} else {
		list_add_tail(&drv->node, &cask_drivers);
	}
	up_write(&cask_drivers_rwsem);
	return ret;
}

static void cask_driver_detach_cells(struct cask_driver *drv)
{
	struct cask_cell *cell;

	guard(rwsem_write)(&cask_drivers_rwsem);
	list_del(&drv->node);
	/* Every cell, those whose release is pending too. */
	list_for_each_entry(cell, &cask_cells, node)
		cask_detach_locked(cell, drv);
}

static int cask_driver_register_locked(struct cask_driver *drv)
{
	int slot, ret;

	lockdep_assert_held(&cask_drivers_mutex);
	if (cask_driver_name_taken_locked(drv->name))
		return -EEXIST;
	slot = find_first_zero_bit(&cask_driver_slots, CASK_MAX_DRIVERS);
	if (slot >= CASK_MAX_DRIVERS)
		return -ENOSPC;
	drv->slot = slot;
	/* Per driver: the files of each cell's directory are the driver's. */
	drv->ktype = kmemdup(&(const struct kobj_type) {
			.release = cask_cell_drv_kobj_release,
			.sysfs_ops = &cask_cell_drv_sysfs_ops,
			.default_groups = drv->groups,
			.get_ownership = cask_cell_drv_kobj_ownership,
		}, sizeof(*drv->ktype), GFP_KERNEL);
	if (!drv->ktype)
		return -ENOMEM;
	ret = cask_driver_attach_cells(drv);
	if (ret)
		goto free_ktype;
	/* Last: global files may walk cells and use the state attached. */
	ret = cask_driver_add_sysfs(drv);
	if (ret)
		goto detach_cells;
	__set_bit(slot, &cask_driver_slots);
	return 0;

detach_cells:
	cask_driver_detach_cells(drv);
free_ktype:
	kfree(drv->ktype);
	drv->ktype = NULL;
	return ret;
}

/**
 * cask_driver_register() - add a driver's per-cell state to every cell
 * @drv: the driver; stays in use until cask_driver_unregister()
 *
 * @drv->attach is called for each existing cell, including unlinked cells
 * that drivers still hold, and later for each new cell, after the drivers
 * registered before @drv.
 *
 * Context: process context, not inside a cask driver callback; takes
 * cask_drivers_mutex, then cask_drivers_rwsem for writing.
 * Return: 0, -EINVAL for a bad or reserved name, binary files in
 * @drv->groups or @drv->host_groups or a file name used twice in them,
 * -EEXIST if a driver of
 * that name is registered, -ENOSPC if %CASK_MAX_DRIVERS are registered, or
 * the first error of an attach or of sysfs (nothing stays attached then).
 */
int cask_driver_register(struct cask_driver *drv)
{
	if (!cask_driver_name_valid(drv->name) ||
	    !cask_driver_groups_valid(drv->groups) ||
	    !cask_driver_groups_valid(drv->host_groups) ||
	    !cask_driver_names_unique(drv))
		return -EINVAL;
	lockdep_assert_not_held(&cask_drivers_rwsem);
	guard(mutex)(&cask_drivers_mutex);
	return cask_driver_register_locked(drv);
}
EXPORT_SYMBOL_NS_GPL(cask_driver_register, CASK);

/**
 * cask_driver_unregister() - remove a driver's state from every cell
 * @drv: a registered driver
 *
 * The caller guarantees that nothing uses the driver's per-cell state any
 * more (its files are closed: module unload), and that drivers that use
 * its state are unregistered already (module dependencies see to it).
 *
 * Context: process context, not inside a cask driver callback; takes
 * cask_drivers_mutex, then cask_drivers_rwsem for writing.
 */
void cask_driver_unregister(struct cask_driver *drv)
{
	lockdep_assert_not_held(&cask_drivers_rwsem);
	guard(mutex)(&cask_drivers_mutex);
	/* First: removing global files waits for callbacks using our state. */
	cask_driver_remove_sysfs(drv);
	cask_driver_detach_cells(drv);
	__clear_bit(drv->slot, &cask_driver_slots);
	/* Every per-cell directory of the driver was released above. */
	kfree(drv->ktype);
	drv->ktype = NULL;
}
EXPORT_SYMBOL_NS_GPL(cask_driver_unregister, CASK);

/**
 * cask_cell_data() - a driver's state in a cell
 * @cell: a cell the caller holds a reference on
 * @drv: the registered driver
 *
 * Context: any.
 * Return: what @drv->attach returned for @cell (NULL without an attach).
 */
void *cask_cell_data(struct cask_cell *cell, const struct cask_driver *drv)
{
	struct cask_cell_drv *cd = READ_ONCE(cell->drv[drv->slot]);

	return cd ? cd->data : NULL;
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
