// SPDX-License-Identifier: GPL-2.0
/*
 * The drivers' sysfs helpers (include/cask/attr.h): who may change a
 * limit, the "max"-or-decimal format of limits, the files of limits and
 * of per-cell counters.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/compiler.h>
#include <linux/kstrtox.h>
#include <linux/limits.h>
#include <linux/sysfs.h>
#include <cask/attr.h>
#include <cask/cell.h>

#include "core.h"

/**
 * cask_counter_show() - show of a CASK_ATTR_COUNTER() file
 * @kobj: the driver's directory in a cell
 * @kattr: the file
 * @buf: sysfs's page
 *
 * Context: a show callback of the driver's @groups or @host_groups.
 * Return: the length of the decimal written to @buf.
 */
ssize_t cask_counter_show(struct kobject *kobj, struct kobj_attribute *kattr,
			  char *buf)
{
	char *data = cask_driver_data_from_kobj(kobj);
	atomic_long_t *counter = (atomic_long_t *)(data + cask_ext_attr_var(kattr));

	return sysfs_emit(buf, "%ld\n", atomic_long_read(counter));
}
EXPORT_SYMBOL_NS_GPL(cask_counter_show, CASK);

/**
 * cask_cell_may_admin() - may the current task change the cell's own limits
 * @cell: the cell
 *
 * The rule for the files a cell's root sets for itself (attr.h): its
 * root, or the host's, which is capable in every user namespace. Checked
 * in the store rather than by the mode alone: a cell's files reach every
 * task of the cell that Android's init hands them to.
 *
 * Context: task context; audits a refusal.
 * Return: whether current has CAP_SYS_ADMIN in @cell's user namespace.
 */
bool cask_cell_may_admin(const struct cask_cell *cell)
{
	return ns_capable(cell->user_ns, CAP_SYS_ADMIN);
}
EXPORT_SYMBOL_NS_GPL(cask_cell_may_admin, CASK);

/**
 * cask_host_may_admin() - may the current task change the host's limits
 *
 * The rule for the files the host sets for a cell (attr.h): the host's
 * root only. Capability alone is not enough: the root of a container
 * without a user namespace has every capability and the host's uid.
 *
 * Context: task context; audits a refusal.
 * Return: whether current is a task of the host with CAP_SYS_ADMIN.
 */
bool cask_host_may_admin(void)
{
	return cask_current_in_host() && capable(CAP_SYS_ADMIN);
}
EXPORT_SYMBOL_NS_GPL(cask_host_may_admin, CASK);

/**
 * cask_limit_emit() - show a limit
 * @buf: sysfs's page
 * @val: the limit, LONG_MAX for none
 *
 * Context: any.
 * Return: the length written to @buf: "max" or the decimal, and a newline.
 */
ssize_t cask_limit_emit(char *buf, long val)
{
	if (val == LONG_MAX)
		return sysfs_emit(buf, "max\n");
	return sysfs_emit(buf, "%ld\n", val);
}
EXPORT_SYMBOL_NS_GPL(cask_limit_emit, CASK);

/**
 * cask_limit_parse() - parse what was written to a limit
 * @buf: what was written, with or without a trailing newline
 * @val: set to the limit, LONG_MAX for "max"; left alone on error
 *
 * As the cgroup v2 limits: "max" for none, else a decimal >= 0.
 *
 * Context: any.
 * Return: 0 or -EINVAL.
 */
int cask_limit_parse(const char *buf, long *val)
{
	long v;

	if (sysfs_streq(buf, "max")) {
		*val = LONG_MAX;
		return 0;
	}
	if (kstrtol(buf, 10, &v) || v < 0)
		return -EINVAL;
	*val = v;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(cask_limit_parse, CASK);

/* The long a CASK_ATTR_*_LIMIT() file shows and stores. */
static long *cask_limit_of(struct kobject *kobj, struct kobj_attribute *kattr)
{
	char *data = cask_driver_data_from_kobj(kobj);

	return (long *)(data + cask_ext_attr_var(kattr));
}

/**
 * cask_limit_show() - show of a CASK_ATTR_HOST_LIMIT() or
 *	CASK_ATTR_CELL_LIMIT() file
 * @kobj: the driver's directory in a cell
 * @kattr: the file
 * @buf: sysfs's page
 *
 * Context: a show callback of the driver's @groups or @host_groups.
 * Return: the length written to @buf, as cask_limit_emit().
 */
ssize_t cask_limit_show(struct kobject *kobj, struct kobj_attribute *kattr,
			char *buf)
{
	return cask_limit_emit(buf, READ_ONCE(*cask_limit_of(kobj, kattr)));
}
EXPORT_SYMBOL_NS_GPL(cask_limit_show, CASK);

/*
 * Once the owner's rule has let the writer through. What the limit
 * already bounds (a charge, a region's size) is not taken back: the next
 * one is held to it.
 */
static ssize_t cask_limit_set(struct kobject *kobj,
			      struct kobj_attribute *kattr, const char *buf,
			      size_t count)
{
	long val;
	int ret;

	ret = cask_limit_parse(buf, &val);
	if (ret)
		return ret;
	WRITE_ONCE(*cask_limit_of(kobj, kattr), val);
	return count;
}

/**
 * cask_host_limit_store() - store of a CASK_ATTR_HOST_LIMIT() file
 * @kobj: the driver's directory in a cell
 * @kattr: the file
 * @buf: what was written
 * @count: its length
 *
 * The host's rule (cask_host_may_admin()) before the value is read: from
 * inside the cell nothing changes the limit, not even to lower it.
 *
 * Context: a store callback of the driver's @host_groups; task context.
 * Return: @count, -EPERM, or -EINVAL (the limit is left alone).
 */
ssize_t cask_host_limit_store(struct kobject *kobj,
			      struct kobj_attribute *kattr, const char *buf,
			      size_t count)
{
	if (!cask_host_may_admin())
		return -EPERM;
	return cask_limit_set(kobj, kattr, buf, count);
}
EXPORT_SYMBOL_NS_GPL(cask_host_limit_store, CASK);

/**
 * cask_cell_limit_store() - store of a CASK_ATTR_CELL_LIMIT() file
 * @kobj: the driver's directory in a cell
 * @kattr: the file
 * @buf: what was written
 * @count: its length
 *
 * The cell's rule (cask_cell_may_admin() on the directory's cell) before
 * the value is read.
 *
 * Context: a store callback of the driver's @groups; task context.
 * Return: @count, -EPERM, or -EINVAL (the limit is left alone).
 */
ssize_t cask_cell_limit_store(struct kobject *kobj,
			      struct kobj_attribute *kattr, const char *buf,
			      size_t count)
{
	if (!cask_cell_may_admin(cask_cell_from_kobj(kobj)))
		return -EPERM;
	return cask_limit_set(kobj, kattr, buf, count);
}
EXPORT_SYMBOL_NS_GPL(cask_cell_limit_store, CASK);
