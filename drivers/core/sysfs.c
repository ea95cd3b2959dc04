// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/cask/: register, unregister, auto_cells, self, max_cells,
 * max_cells_per_user, cells_refused, features/ and cells/NAME/.
 * Every file is described in Documentation/ABI/testing/sysfs-kernel-cask.
 *
 * The files that make or look up cells (the "controls") exist only while
 * the cell registry does: they are added last at module init and removed
 * first at exit, and removing them waits for callbacks in progress.
 */
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/ipc_namespace.h>
#include <linux/kobject.h>
#include <linux/nsproxy.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include <cask/attr.h>
#include <cask/compat.h>
#include "core.h"

struct kobject *cask_kobj;
struct kobject *cask_cells_kobj;

/* Longest "NAME PID\n" worth parsing. */
#define CASK_CMD_MAX 64

static struct cask_cell *cask_kobj_cell(struct kobject *kobj)
{
	return container_of(kobj, struct cask_cell, kobj);
}

/*
 * A cell's files belong to root of the user namespace that owns the cell,
 * so the container's root can use its own driver knobs and nobody else
 * but the host's root can. An unmapped root falls back to the global one.
 */
static void cask_cell_get_ownership(struct cask_cell *cell, kuid_t *uid,
				    kgid_t *gid)
{
	kuid_t u = make_kuid(cell->user_ns, 0);
	kgid_t g = make_kgid(cell->user_ns, 0);

	if (uid_valid(u))
		*uid = u;
	if (gid_valid(g))
		*gid = g;
}

static void cask_cell_kobj_ownership(const struct kobject *kobj, kuid_t *uid,
				     kgid_t *gid)
{
	cask_cell_get_ownership(container_of(kobj, struct cask_cell, kobj), uid, gid);
}

/**
 * cask_cell_drv_kobj_ownership() - owner of a driver's directory in a cell
 * @kobj: the directory
 * @uid: set to the cell's root, if mapped; left as the host's root while
 *	the driver's host_groups are made
 * @gid: set to the cell's root group, if mapped; likewise
 *
 * Context: sysfs, while the directory or its files are created.
 */
void cask_cell_drv_kobj_ownership(const struct kobject *kobj, kuid_t *uid,
				  kgid_t *gid)
{
	const struct cask_cell_drv *cd = container_of(kobj, struct cask_cell_drv, kobj);

	/* sysfs starts from GLOBAL_ROOT_UID/GID: the host's files keep them. */
	if (cd->host_owned)
		return;
	cask_cell_get_ownership(cd->cell, uid, gid);
}

/*
 * Every file of a cell, cask_core's and the drivers', is for the cell's
 * own tasks and the host's only: ownership does not separate containers
 * that share a root mapping. The check is made on each read and write,
 * where the reader is known, rather than on open.
 */
static ssize_t cask_cell_attr_show(struct cask_cell *cell, struct kobject *kobj,
				   struct attribute *attr, char *buf)
{
	struct kobj_attribute *ka = container_of(attr, struct kobj_attribute, attr);

	if (!cask_cell_current_may_see(cell))
		return -EACCES;
	return ka->show ? ka->show(kobj, ka, buf) : -EIO;
}

static ssize_t cask_cell_attr_store(struct cask_cell *cell, struct kobject *kobj,
				    struct attribute *attr, const char *buf,
				    size_t count)
{
	struct kobj_attribute *ka = container_of(attr, struct kobj_attribute, attr);

	if (!cask_cell_current_may_see(cell))
		return -EACCES;
	return ka->store ? ka->store(kobj, ka, buf, count) : -EIO;
}

static ssize_t cask_cell_kobj_show(struct kobject *kobj, struct attribute *attr,
				   char *buf)
{
	return cask_cell_attr_show(cask_kobj_cell(kobj), kobj, attr, buf);
}

static ssize_t cask_cell_kobj_store(struct kobject *kobj, struct attribute *attr,
				    const char *buf, size_t count)
{
	return cask_cell_attr_store(cask_kobj_cell(kobj), kobj, attr, buf, count);
}

static const struct sysfs_ops cask_cell_sysfs_ops = {
	.show = cask_cell_kobj_show,
	.store = cask_cell_kobj_store,
};

static ssize_t cask_cell_drv_kobj_show(struct kobject *kobj,
				       struct attribute *attr, char *buf)
{
	return cask_cell_attr_show(cask_cell_from_kobj(kobj), kobj, attr, buf);
}

static ssize_t cask_cell_drv_kobj_store(struct kobject *kobj,
					struct attribute *attr, const char *buf,
					size_t count)
{
	return cask_cell_attr_store(cask_cell_from_kobj(kobj), kobj, attr, buf,
				    count);
}

const struct sysfs_ops cask_cell_drv_sysfs_ops = {
	.show = cask_cell_drv_kobj_show,
	.store = cask_cell_drv_kobj_store,
};

static ssize_t id_show(struct kobject *kobj, struct kobj_attribute *attr,
		       char *buf)
{
	return sysfs_emit(buf, "%llu\n", cask_kobj_cell(kobj)->id);
}

static CASK_ATTR_RO(id);

static ssize_t ipc_ns_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%u\n", cask_kobj_cell(kobj)->ipc_inum);
}

static CASK_ATTR_RO(ipc_ns);

static ssize_t user_ns_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", cask_kobj_cell(kobj)->user_ns->ns.inum);
}

static CASK_ATTR_RO(user_ns);

static ssize_t pid_ns_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%u\n", cask_kobj_cell(kobj)->pid_ns->ns.inum);
}

static CASK_ATTR_RO(pid_ns);

static ssize_t cgroup_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct cask_cell *cell = cask_kobj_cell(kobj);
	char *path;
	int len;

	path = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	/* As the reader's cgroup namespace sees it: host paths name containers. */
	len = cgroup_path_ns(cell->cgrp, path, PATH_MAX, current->nsproxy->cgroup_ns);
	if (len >= PATH_MAX)
		len = -ENAMETOOLONG;
	if (len >= 0)
		len = sysfs_emit(buf, "%s\n", path);
	kfree(path);
	return len;
}

static CASK_ATTR_RO(cgroup);

static ssize_t cask_auto_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%d\n", cask_kobj_cell(kobj)->is_auto);
}

/* Spelt out: "auto" is a macro for __auto_type in kernel code. */
static struct kobj_attribute cask_attr_auto = {
	.attr = { .name = "auto", .mode = 0400 },
	.show = cask_auto_show,
};

static struct attribute *cask_cell_attrs[] = {
	&cask_attr_id.attr,
	&cask_attr_ipc_ns.attr,
	&cask_attr_user_ns.attr,
	&cask_attr_pid_ns.attr,
	&cask_attr_cgroup.attr,
	&cask_attr_auto.attr,
	NULL
};
ATTRIBUTE_GROUPS(cask_cell);

static void cask_cell_kobj_release(struct kobject *kobj)
{
	cask_cell_free(cask_kobj_cell(kobj));
}

const struct kobj_type cask_cell_ktype = {
	.release = cask_cell_kobj_release,
	.sysfs_ops = &cask_cell_sysfs_ops,
	.default_groups = cask_cell_groups,
	.get_ownership = cask_cell_kobj_ownership,
};

/**
 * cask_cell_drv_kobj_release() - free a driver's state holder in a cell
 * @kobj: its kobject, the last reference gone
 *
 * Context: any.
 */
void cask_cell_drv_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct cask_cell_drv, kobj));
}

/*
 * register and unregister are binary attributes because those get the
 * struct file: the opener's credentials count, not only the writer's, so a
 * privileged program cannot be tricked into writing to an fd that an
 * unprivileged one opened.
 */
static int cask_cmd_copy(struct file *file, char *cmd, const char *buf,
			 loff_t off, size_t count)
{
	if (!file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN) ||
	    !capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (off != 0 || count == 0 || count >= CASK_CMD_MAX)
		return -EINVAL;
	memcpy(cmd, buf, count);
	cmd[count] = '\0';
	return 0;
}

/*
 * The process of a register command: "pidfd:FD", a pidfd in the writer's
 * file table, names it for sure; a pid number may have been reused by the
 * time it is read.
 */
static struct pid *cask_cmd_pid(const char *arg)
{
	struct file *f;
	struct pid *pid;
	int nr, ret;

	if (str_has_prefix(arg, "pidfd:")) {
		ret = kstrtoint(arg + strlen("pidfd:"), 10, &nr);
		if (ret || nr < 0)
			return ERR_PTR(-EINVAL);
		f = fget(nr);
		if (!f)
			return ERR_PTR(-EBADF);
		pid = cask_pidfd_pid(f);
		if (!IS_ERR(pid))
			get_pid(pid);
		fput(f);
		return pid;
	}
	ret = kstrtoint(arg, 10, &nr);
	if (ret || nr <= 0)
		return ERR_PTR(-EINVAL);
	/* The pid pins its PID namespace, the task's, for as long as we hold it. */
	return find_get_pid(nr) ?: ERR_PTR(-ESRCH);
}

static ssize_t register_write(struct file *file, struct kobject *kobj,
			      struct bin_attribute *attr, char *buf,
			      loff_t off, size_t count)
{
	char cmd[CASK_CMD_MAX], *name, *rest;
	struct pid *pid;
	int ret;

	ret = cask_cmd_copy(file, cmd, buf, off, count);
	if (ret)
		return ret;
	rest = strim(cmd);
	name = strsep(&rest, " \t");
	if (!rest || !cask_name_valid(name))
		return -EINVAL;
	pid = cask_cmd_pid(skip_spaces(rest));
	if (IS_ERR(pid))
		return PTR_ERR(pid);
	ret = cask_register_task(name, pid);
	put_pid(pid);
	return ret ?: count;
}

static BIN_ATTR_WO(register, 0);

static ssize_t unregister_write(struct file *file, struct kobject *kobj,
				struct bin_attribute *attr, char *buf,
				loff_t off, size_t count)
{
	char cmd[CASK_CMD_MAX], *name;
	struct cask_cell *cell;
	int ret;

	ret = cask_cmd_copy(file, cmd, buf, off, count);
	if (ret)
		return ret;
	name = strim(cmd);
	if (!cask_name_valid(name))
		return -EINVAL;
	cell = cask_cell_get_by_name(name);
	if (!cell)
		return -ENOENT;
	ret = cask_cell_unregister(cell);
	cask_cell_put(cell);
	return ret ?: count;
}

static BIN_ATTR_WO(unregister, 0);

static ssize_t auto_cells_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(cask_auto_cells));
}

static ssize_t auto_cells_store(struct kobject *kobj,
				struct kobj_attribute *attr, const char *buf,
				size_t count)
{
	bool val;
	int ret;

	/* Not capable() alone: a container without a user namespace has it. */
	if (!cask_host_may_admin())
		return -EPERM;
	ret = kstrtobool(buf, &val);
	if (ret)
		return ret;
	WRITE_ONCE(cask_auto_cells, val);
	return count;
}

static CASK_ATTR_HOST_RW(auto_cells);

/*
 * The reader's own cell. Reading counts as using cask: it makes the auto
 * cell of an unconfigured container, as opening a cask device would.
 */
static ssize_t self_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct cask_cell *cell = cask_cell_get_or_create();
	ssize_t ret;

	if (IS_ERR(cell))
		return PTR_ERR(cell);
	ret = sysfs_emit(buf, "%s\n", cell->name);
	cask_cell_put(cell);
	return ret;
}

static CASK_ATTR_PUBLIC_RO(self);

/*
 * The limits on cells: the host's root only (cask_host_may_admin(): a
 * container's root, with or without a user namespace, may not lift
 * them), a decimal >= 1. Cells cost memory
 * (charged to whoever made them) and slow every walk: the host bounds how
 * many containers may have one, and each user's share of them.
 */
static ssize_t cask_limit_store(unsigned int *limit, const char *buf,
				size_t count)
{
	unsigned int val;
	int ret;

	if (!cask_host_may_admin())
		return -EPERM;
	ret = kstrtouint(buf, 10, &val);
	if (ret)
		return ret;
	if (val < 1)
		return -EINVAL;
	WRITE_ONCE(*limit, val);
	return count;
}

static ssize_t max_cells_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(cask_max_cells));
}

static ssize_t max_cells_store(struct kobject *kobj, struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	return cask_limit_store(&cask_max_cells, buf, count);
}

static CASK_ATTR_HOST_RW(max_cells);

static ssize_t max_cells_per_user_show(struct kobject *kobj,
				       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(cask_max_cells_per_user));
}

static ssize_t max_cells_per_user_store(struct kobject *kobj,
					struct kobj_attribute *attr,
					const char *buf, size_t count)
{
	return cask_limit_store(&cask_max_cells_per_user, buf, count);
}

static CASK_ATTR_HOST_RW(max_cells_per_user);

static ssize_t cells_refused_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", cask_cells_refused());
}

static CASK_ATTR_PUBLIC_RO(cells_refused);

static struct attribute *cask_root_attrs[] = {
	&cask_attr_auto_cells.attr,
	&cask_attr_self.attr,
	&cask_attr_max_cells.attr,
	&cask_attr_max_cells_per_user.attr,
	&cask_attr_cells_refused.attr,
	NULL
};

static struct bin_attribute *cask_root_bin_attrs[] = {
	&bin_attr_register,
	&bin_attr_unregister,
	NULL
};

static const struct attribute_group cask_root_group = {
	.attrs = cask_root_attrs,
	.bin_attrs = cask_root_bin_attrs,
};

/* Which optional kernel features (patches/) this kernel has; one file each. */
static ssize_t ipc_ns_free_notifier_show(struct kobject *kobj,
					 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", cask_cells_track_ipc_ns());
}

static CASK_ATTR_PUBLIC_RO(ipc_ns_free_notifier);

static struct attribute *cask_feature_attrs[] = {
	&cask_attr_ipc_ns_free_notifier.attr,
	NULL
};

static const struct attribute_group cask_feature_group = {
	.name = "features",
	.attrs = cask_feature_attrs,
};

/**
 * cask_sysfs_init() - create /sys/kernel/cask, cells/ and features/
 *
 * Context: module init, before the cell registry.
 * Return: 0 or a negative errno.
 */
int cask_sysfs_init(void)
{
	int ret;

	cask_kobj = kobject_create_and_add("cask", kernel_kobj);
	if (!cask_kobj)
		return -ENOMEM;
	cask_cells_kobj = kobject_create_and_add("cells", cask_kobj);
	if (!cask_cells_kobj) {
		ret = -ENOMEM;
		goto put_cask_kobj;
	}
	ret = sysfs_create_group(cask_kobj, &cask_feature_group);
	if (ret)
		goto put_cells_kobj;
	return 0;

put_cells_kobj:
	kobject_put(cask_cells_kobj);
put_cask_kobj:
	kobject_put(cask_kobj);
	return ret;
}

/**
 * cask_sysfs_add_controls() - add the files that make and look up cells
 *
 * Context: module init, once the cell registry works.
 * Return: 0 or a negative errno.
 */
int cask_sysfs_add_controls(void)
{
	return sysfs_create_group(cask_kobj, &cask_root_group);
}

/**
 * cask_sysfs_remove_controls() - remove them again
 *
 * Context: module exit, before the cell registry goes; waits for their
 * callbacks in progress, so none can make a cell afterwards.
 */
void cask_sysfs_remove_controls(void)
{
	sysfs_remove_group(cask_kobj, &cask_root_group);
}

/**
 * cask_sysfs_exit() - remove /sys/kernel/cask
 *
 * Context: module exit, after every cell is gone.
 */
void cask_sysfs_exit(void)
{
	sysfs_remove_group(cask_kobj, &cask_feature_group);
	kobject_put(cask_cells_kobj);
	kobject_put(cask_kobj);
}
