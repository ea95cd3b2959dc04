/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask_core internals, shared by its files and its KUnit suite.
 */
#ifndef _CASK_CORE_H
#define _CASK_CORE_H

#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/rhashtable-types.h>
#include <linux/rwsem.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <cask/cell.h>

struct notifier_block;
struct pid;

/**
 * struct cask_cell_drv - one driver's directory and state in one cell
 * @kobj: /sys/kernel/cask/cells/NAME/<driver>/ if the driver has files;
 *	holds a reference on the cell's kobject, its parent
 * @cell: the cell, for the driver's show/store callbacks
 * @data: what the driver's attach callback returned; freed by its detach
 * @host_owned: the driver's host_groups are being made: their files belong
 *	to the host's root (set and read under cask_drivers_rwsem, by the
 *	one attach of this cell and driver)
 */
struct cask_cell_drv {
	struct kobject kobj;
	struct cask_cell *cell;
	void *data;
	bool host_owned;
};

/**
 * enum cask_cell_state - where a cell is in its life
 * @CASK_CELL_NEW: being made: its name and IPC namespace are taken, but
 *	lookups and the iterator pass it by while drivers attach
 * @CASK_CELL_LINKED: found by lookups, in sysfs
 * @CASK_CELL_UNLINKED: unregistered; lives on while referenced
 */
enum cask_cell_state {
	CASK_CELL_NEW,
	CASK_CELL_LINKED,
	CASK_CELL_UNLINKED,
};

/**
 * struct cask_cell - one container
 * @ref: driver and lookup references, plus one while linked. At zero the
 *	cell is released from @release_work; the memory itself lives until
 *	@kobj's release, after an RCU grace period, so that lookups and
 *	iterators racing with the last put can still try
 *	refcount_inc_not_zero().
 * @id: unique for the life of the module, the host cell is 0; immutable
 *	once the cell is visible
 * @name: zero-padded, the key of the name table; immutable
 * @is_auto: made on first use rather than by /sys/kernel/cask/register
 * @owner: for an auto cell, the host uid it counts against in
 *	max_cells_per_user unless @owner_ns is set; immutable
 * @owner_ns: for an auto cell below a user namespace the host's root made,
 *	the outermost such namespace, which it counts against instead of
 *	@owner; pinned through @user_ns, immutable
 * @state: (protected by cask_table_lock; read locklessly, with acquire
 *	semantics, by lookups and the iterator)
 * @ipc_ns: the key of the cell; immutable. Pinned when @ipc_pinned, else
 *	only valid as a key while the cell is linked: the kernel's IPC
 *	namespace free notifier unlinks the cell before the namespace goes
 * @ipc_inum: inode number of @ipc_ns
 * @ipc_pinned: whether the cell holds a reference on @ipc_ns
 * @user_ns: owner of @ipc_ns, for capability checks; pinned, immutable
 * @pid_ns: PID namespace of the task the cell was made from; pinned
 * @cgrp: cgroup v2 directory of that task, at creation; pinned
 * @watch: thread group whose exit unregisters the cell, or NULL; pinned
 * @exit_wait: on @watch's wait_pidfd queue while linked
 * @exit_work: queued by @exit_wait's callback, runs the unregister
 * @release_work: queued when @ref drops to zero
 * @ns_node: in the IPC namespace table from creation until unlinked
 *	(protected by cask_table_lock, read under RCU)
 * @name_node: in the name table from creation until its sysfs directory
 *	is gone (protected by cask_table_lock, read under RCU)
 * @node: in the list of every cell, in id order, from creation until
 *	release (protected by cask_table_lock, read under RCU)
 * @kobj: /sys/kernel/cask/cells/NAME; its release frees the cell
 * @drv: per-driver state, indexed by &cask_driver.slot (protected by
 *	cask_drivers_rwsem: written by this cell's creation and release
 *	with it held for reading, by driver registration with it held for
 *	writing; stable for a holder of a cell reference while the driver
 *	stays registered)
 * @rcu: for the deferred free
 */
struct cask_cell {
	refcount_t ref;
	u64 id;
	char name[CASK_NAME_MAX + 1];
	bool is_auto;
	kuid_t owner;
	struct user_namespace *owner_ns;
	enum cask_cell_state state;
	struct ipc_namespace *ipc_ns;
	unsigned int ipc_inum;
	bool ipc_pinned;
	struct user_namespace *user_ns;
	struct pid_namespace *pid_ns;
	struct cgroup *cgrp;
	struct pid *watch;
	struct wait_queue_entry exit_wait;
	struct work_struct exit_work;
	struct work_struct release_work;
	struct rhash_head ns_node;
	struct rhash_head name_node;
	struct list_head node;
	struct kobject kobj;
	struct cask_cell_drv *drv[CASK_MAX_DRIVERS];
	struct rcu_head rcu;
};

/**
 * struct cask_cell_spec - what a new cell is made of; borrowed references,
 * cask_cell_create() takes its own
 * @name: cell name
 * @ipc_ns: key
 * @user_ns: owner of @ipc_ns
 * @pid_ns: PID namespace
 * @cgrp: cgroup v2 directory
 * @watch: thread group whose exit removes the cell, or NULL
 * @is_auto: made on first use
 */
struct cask_cell_spec {
	const char *name;
	struct ipc_namespace *ipc_ns;
	struct user_namespace *user_ns;
	struct pid_namespace *pid_ns;
	struct cgroup *cgrp;
	struct pid *watch;
	bool is_auto;
};

/* Defaults of /sys/kernel/cask/max_cells and max_cells_per_user. */
#define CASK_MAX_CELLS_DEFAULT 256
#define CASK_MAX_CELLS_PER_USER_DEFAULT 64

extern struct rw_semaphore cask_drivers_rwsem;
extern struct mutex cask_table_lock;
extern struct list_head cask_cells;
extern bool cask_auto_cells;
extern unsigned int cask_max_cells;
extern unsigned int cask_max_cells_per_user;

/* cell.c */
bool cask_name_valid(const char *name);
struct cask_cell *cask_cell_create(const struct cask_cell_spec *spec);
struct cask_cell *cask_cell_create_or_find(const struct cask_cell_spec *spec);
int cask_cell_unregister(struct cask_cell *cell);
struct cask_cell *cask_cell_find_ns(struct ipc_namespace *ns);
void cask_cell_flush(void);
void cask_cell_free(struct cask_cell *cell);
unsigned int cask_cells_count(void);
unsigned int cask_cells_count_owner(kuid_t owner);
kuid_t cask_cell_owner(struct user_namespace *ns);
struct user_namespace *cask_cell_owner_ns(struct user_namespace *ns);
unsigned long cask_cells_refused(void);
bool cask_cells_track_ipc_ns(void);
int cask_ipcns_free(struct notifier_block *nb, unsigned long action, void *data);
int cask_memcg_init(void);
void cask_memcg_exit(void);
int cask_cells_init(void);
void cask_cells_exit(void);

#if IS_ENABLED(CONFIG_KUNIT)
extern struct wait_queue_head cask_settle_wq;
#endif

/* driver.c */
bool cask_driver_name_valid(const char *name);
int cask_attach_locked(struct cask_cell *cell, struct cask_driver *drv);
void cask_detach_locked(struct cask_cell *cell, struct cask_driver *drv);
int cask_cell_attach_all_locked(struct cask_cell *cell);
void cask_cell_detach_all_locked(struct cask_cell *cell);
void cask_cell_del_dirs_locked(struct cask_cell *cell);
void cask_cell_unlink_all_locked(struct cask_cell *cell);

/* sysfs.c */
extern struct kobject *cask_kobj;
extern struct kobject *cask_cells_kobj;
extern const struct kobj_type cask_cell_ktype;
extern const struct sysfs_ops cask_cell_drv_sysfs_ops;
void cask_cell_drv_kobj_release(struct kobject *kobj);
void cask_cell_drv_kobj_ownership(const struct kobject *kobj, kuid_t *uid,
				  kgid_t *gid);
int cask_register_task(const char *name, struct pid *pid);
int cask_sysfs_init(void);
int cask_sysfs_add_controls(void);
void cask_sysfs_remove_controls(void);
void cask_sysfs_exit(void);

#endif /* _CASK_CORE_H */
