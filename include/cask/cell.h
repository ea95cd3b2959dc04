/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask cells: the container a task belongs to, as seen by the cask drivers.
 *
 * A cell is keyed by an IPC namespace. It pins the user namespace that owns
 * that namespace, the PID namespace of the task it was made from and that
 * task's cgroup v2 directory. Drivers (binder, ashmem, logger, lmk, power)
 * register a &struct cask_driver to hang per-cell state off every cell and
 * to get sysfs files below /sys/kernel/cask/. Documentation/dev/drivers.rst
 * is the guide; the rules below are the contract.
 *
 * Lifetime: a cell reference (cask_cell_get(), a lookup, the iterator)
 * keeps the cell's memory and every registered driver's state in it. A cell
 * is "linked" from its registration until it is unregistered (by name, when
 * its IPC namespace ends, at module exit); lookups find only linked cells,
 * the iterator also returns unlinked cells that someone still holds.
 *
 * Driver callbacks, @attach, @unlink and @detach:
 *  - run in process context and may sleep and allocate (GFP_KERNEL_ACCOUNT
 *    for what the cell should pay for: the caller is a task of the cell
 *    when the cell is made on first use);
 *  - must not take a reference on the cell itself (it would never be
 *    released: detach runs once the last one is gone), and must drop in
 *    @detach the references on other cells they took in @attach;
 *  - run with the driver registry lock held (for reading when one cell is
 *    made, unlinked or released, for writing when a driver registers or
 *    unregisters), so they must not register or unregister a driver nor
 *    make a cell (cask_cell_get_or_create()); lockdep catches both. They
 *    may look cells up, iterate and take or drop references;
 *  - are called in registration order for @attach and in exactly the
 *    reverse order for @unlink and @detach, on every path (release,
 *    unregistration, the unwind of a failed attach). A driver that uses
 *    another's state registers after it, which a module dependency
 *    guarantees.
 *
 * @unlink is where a driver lets go of what the cell's tasks can no longer
 * reach but that may hold the cell, or the driver's module, alive: files
 * queued for delivery to the cell, whose own references may lead back to
 * the cell's files (a reference cycle no task can break any more). It is
 * called once per attached driver when the cell is unlinked, whoever
 * unlinks it (unregistration by name, the end of its IPC namespace or of
 * its watched task, cask_core's unload), after the cell has left lookups
 * and sysfs and with cask_core's reference still held; cask_cell_linked()
 * is false from before the call. A driver that registers after the unlink
 * is not called for the cell, nor is @unlink called when a driver
 * unregisters (@detach follows directly). It must bound its work per lock
 * hold, and must not wait for the cell's release.
 *
 * Sysfs show/store callbacks of @groups run only for tasks of the cell and
 * of the host (cask_core checks before calling them; others get -EACCES)
 * and must not make cells or register drivers either: the directory's
 * removal waits for them with the registry lock held. Files of
 * @global_groups and @features may make cells, not register drivers.
 *
 * Device opens may make cells (cask_cell_get_or_create()). The drivers'
 * devices are therefore no misc devices, whose open runs under the
 * kernel-wide misc_mtx (a cell made there allocates in the container's
 * memory cgroup, which may reclaim: one container could slow every misc
 * open of the host). Each driver with devices (binder, ashmem, logger;
 * lmk has a /proc file, power only sysfs files) has a character device
 * region, class and nodes of its own, one &struct cask_chardev
 * (<cask/chardev.h>: cask_chardev_add() makes them with the same node
 * rules for all), added at module init after cask_driver_register() and
 * removed before cask_driver_unregister(), never in @attach or @detach:
 * a /dev node serves every cell, and an open finds its cell from the
 * opener.
 *
 * Exported in the CASK symbol namespace; users need MODULE_IMPORT_NS(CASK).
 */
#ifndef _CASK_CELL_H
#define _CASK_CELL_H

#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/types.h>

struct cask_cell;
struct attribute;
struct attribute_group;
struct ipc_namespace;
struct user_namespace;
struct pid_namespace;
struct cgroup;
struct dentry;

/* Longest cell name, without the terminating NUL. */
#define CASK_NAME_MAX 32

/* How many drivers can be registered at once. */
#define CASK_MAX_DRIVERS 16

/**
 * struct cask_driver - a cask driver's per-cell hooks and sysfs files
 * @name: [a-z0-9_]+, the driver's directory in each cell and in
 *	/sys/kernel/cask/; must not collide with a file of cask_core there
 * @attach: optional; make the driver's state for a cell. Called for every
 *	cell, those that exist when the driver registers and those made
 *	later, before a new cell can be found. Returns the state (NULL is
 *	allowed: the driver keeps nothing per cell) or an ERR_PTR(), which
 *	fails the registration or the cell's creation with that error.
 * @unlink: optional; the cell was unlinked (see above): drop what only
 *	the cell's tasks could have consumed. @data is what @attach returned.
 * @detach: optional; free what @attach returned, once the cell is released
 *	(no reference left) or the driver unregisters.
 * @groups: optional; files of /sys/kernel/cask/cells/NAME/<@name>/, which
 *	exists only if this or @host_groups is set. &struct kobj_attribute files only (no
 *	binary ones: cask_core checks the reader before calling them). Show
 *	and store find their state with cask_cell_from_kobj() and
 *	cask_driver_data_from_kobj().
 * @host_groups: optional; more files of the same per-cell directory, but
 *	owned by the host's root (GLOBAL_ROOT_UID/GID) from their creation,
 *	not by the cell's: what the host sets for the cell, which the cell's
 *	root may read (if the mode lets it) but neither open for writing nor
 *	chmod. Same rules as @groups; a store still checks its writer.
 * @global_groups: optional; files of /sys/kernel/cask/<@name>/, present
 *	while the driver is registered.
 * @features: optional, NULL-terminated; read-only flags added to
 *	/sys/kernel/cask/features/ while the driver is registered. Name them
 *	<@name>_<feature>.
 * @node: private to cask_core, in the registration-ordered driver list
 * @ktype: private to cask_core, of the per-cell directories
 * @kobj: private to cask_core, /sys/kernel/cask/<@name>/
 * @feature_group: private to cask_core
 * @slot: private to cask_core
 */
struct cask_driver {
	const char *name;
	void *(*attach)(struct cask_cell *cell);
	void (*unlink)(struct cask_cell *cell, void *data);
	void (*detach)(struct cask_cell *cell, void *data);
	const struct attribute_group **groups;
	const struct attribute_group **host_groups;
	const struct attribute_group **global_groups;
	struct attribute **features;

	struct list_head node;
	const struct kobj_type *ktype;
	struct kobject *kobj;
	struct attribute_group feature_group;
	int slot;
};

int cask_driver_register(struct cask_driver *drv);
void cask_driver_unregister(struct cask_driver *drv);

struct cask_cell *cask_cell_get_or_create(void);
struct cask_cell *cask_cell_find_current(void);
struct cask_cell *cask_cell_get_by_name(const char *name);
struct cask_cell *cask_cell_get_host(void);
struct cask_cell *cask_cell_get(struct cask_cell *cell);
bool cask_cell_tryget(struct cask_cell *cell);
bool cask_cell_linked(const struct cask_cell *cell);
void cask_cell_put(struct cask_cell *cell);

/*
 * Walking every cell not yet released, from any context (atomic and
 * reclaim included: RCU only, no sleep, the last put defers the release):
 *
 *	for (cell = cask_cell_next(NULL); cell; cell = cask_cell_next(cell))
 *		...;
 *
 * Cells come in the order they were made (ascending cask_cell_id()); a cell
 * made or released during the walk may or may not be seen, one that exists
 * throughout is seen. Each step holds a reference on the cell, dropped by
 * the next; a loop left with break must cask_cell_put() it. Unlinked cells
 * are included: check cask_cell_linked() where that matters.
 */
struct cask_cell *cask_cell_next(struct cask_cell *prev);

void *cask_cell_data(struct cask_cell *cell, const struct cask_driver *drv);
struct cask_cell *cask_cell_from_kobj(struct kobject *kobj);
void *cask_driver_data_from_kobj(struct kobject *kobj);

const char *cask_cell_name(const struct cask_cell *cell);
u64 cask_cell_id(const struct cask_cell *cell);
bool cask_cell_is_host(const struct cask_cell *cell);
bool cask_cell_registered(const struct cask_cell *cell);
bool cask_cell_current_may_see(const struct cask_cell *cell);
bool cask_current_in_host(void);
struct dentry *cask_debugfs_dir(void);
struct ipc_namespace *cask_cell_ipc_ns(const struct cask_cell *cell);
struct user_namespace *cask_cell_user_ns(const struct cask_cell *cell);
struct pid_namespace *cask_cell_pid_ns(const struct cask_cell *cell);
struct cgroup *cask_cell_cgroup(const struct cask_cell *cell);

#endif /* _CASK_CELL_H */
