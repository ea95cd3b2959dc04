/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask cells: the container a task belongs to, as seen by the cask drivers.
 *
 * A cell is keyed by an IPC namespace. It pins that namespace, the user
 * namespace that owns it, the PID namespace of the task it was made from
 * and that task's cgroup v2 directory. Drivers (binder, ashmem, logger,
 * lmk) register a &struct cask_driver to hang per-cell state off every cell
 * and to get a sysfs directory below /sys/kernel/cask/cells/NAME/.
 *
 * Exported in the CASK symbol namespace; users need MODULE_IMPORT_NS(CASK).
 */
#ifndef _CASK_CELL_H
#define _CASK_CELL_H

#include <linux/types.h>

struct cask_cell;
struct kobject;
struct attribute_group;
struct ipc_namespace;
struct user_namespace;
struct pid_namespace;
struct cgroup;

/* Longest cell name, without the terminating NUL. */
#define CASK_NAME_MAX 32

/* How many drivers can be registered at once. */
#define CASK_MAX_DRIVERS 8

/**
 * struct cask_driver - a cask driver's per-cell hooks
 * @name: name of the driver's directory in each cell's sysfs directory
 * @attach: allocate the driver's state for @cell. Called for every cell,
 *	those that exist when the driver registers and those made later,
 *	before the cell can be found by lookups. Process context, may sleep,
 *	cask's registry mutex is held: must not call back into cask_core.
 *	Returns the state (never NULL) or an ERR_PTR().
 * @detach: free what @attach returned. Called once the cell is gone and
 *	no driver reference to it is left, or when the driver unregisters.
 *	Same context as @attach.
 * @groups: attribute groups of the driver's sysfs directory, or NULL. Their
 *	show/store callbacks find their cell and state with
 *	cask_cell_from_kobj() and cask_driver_data_from_kobj().
 * @slot: private to cask_core
 */
struct cask_driver {
	const char *name;
	void *(*attach)(struct cask_cell *cell);
	void (*detach)(struct cask_cell *cell, void *data);
	const struct attribute_group **groups;
	int slot;
};

int cask_driver_register(struct cask_driver *drv);
void cask_driver_unregister(struct cask_driver *drv);

struct cask_cell *cask_cell_get_current(void);
struct cask_cell *cask_cell_find_current(void);
struct cask_cell *cask_cell_get_by_name(const char *name);
struct cask_cell *cask_cell_get_host(void);
struct cask_cell *cask_cell_get(struct cask_cell *cell);
bool cask_cell_tryget(struct cask_cell *cell);
bool cask_cell_linked(const struct cask_cell *cell);
void cask_cell_put(struct cask_cell *cell);

void *cask_cell_data(struct cask_cell *cell, const struct cask_driver *drv);
struct cask_cell *cask_cell_from_kobj(struct kobject *kobj);
void *cask_driver_data_from_kobj(struct kobject *kobj);

const char *cask_cell_name(const struct cask_cell *cell);
u64 cask_cell_id(const struct cask_cell *cell);
bool cask_cell_is_host(const struct cask_cell *cell);
struct ipc_namespace *cask_cell_ipc_ns(const struct cask_cell *cell);
struct user_namespace *cask_cell_user_ns(const struct cask_cell *cell);
struct pid_namespace *cask_cell_pid_ns(const struct cask_cell *cell);
struct cgroup *cask_cell_cgroup(const struct cask_cell *cell);

#endif /* _CASK_CELL_H */
