/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask sysfs files: each declared once, in tables, and one rule for who
 * may change a limit.
 *
 * A file is declared as the kernel's __ATTR_RO()/__ATTR_RW() declare one:
 * its show and store are <name>_show and <name>_store, and the declaration
 * names the variable cask_attr_<name>, whose .attr goes into an attribute
 * table made into groups with ATTRIBUTE_GROUPS() (or __ATTRIBUTE_GROUPS()
 * for a table of hand-made groups):
 *
 *	static CASK_ATTR_RO(procs);
 *	static CASK_ATTR_HOST_RW(max_procs);
 *
 *	static struct attribute *cbinder_cell_attrs[] = {
 *		&cask_attr_procs.attr,
 *		NULL
 *	};
 *	ATTRIBUTE_GROUPS(cbinder_cell);
 *
 * The mode says whose the file is, the list it is in (&struct cask_driver)
 * who owns it:
 *
 *  - CASK_ATTR_RO (0400) and CASK_ATTR_RW (0600), in @groups: the cell's
 *    own files, owned by the cell's root. Nobody else in the cell reads
 *    them; Android's init chowns what its services need.
 *  - CASK_ATTR_HOST_RW (0644), in @host_groups: what the host decides for
 *    the cell, owned by the host's root, readable by the cell. CASK_ATTR_RO
 *    in @host_groups is what only the host reads.
 *  - CASK_ATTR_PUBLIC_RO (0444): features and files of /sys/kernel/cask/
 *    that every task may read.
 *
 * Limits, files that bound what a cell may use, follow one rule, chosen
 * per file and written in Documentation/ABI/testing/sysfs-kernel-cask:
 *
 *  - the host's limit: CASK_ATTR_HOST_RW in @host_groups, and its store
 *    begins with cask_host_may_admin(). The mode keeps out a cell's root
 *    in a user namespace; the check keeps out one that is the host's root
 *    without one (a container without a user namespace), which gets past
 *    the mode. Nothing from inside the cell changes the value.
 *  - the cell's own limit, a guard the container keeps for itself:
 *    CASK_ATTR_RW in @groups, and its store begins with
 *    cask_cell_may_admin(). The host's root, which has every capability
 *    in every user namespace, may write it too.
 *
 * No store mixes the two.
 *
 * A limit that is a long of the driver's per-cell state, in the
 * "max"-or-decimal format, needs no show or store of its own:
 * CASK_ATTR_HOST_LIMIT() and CASK_ATTR_CELL_LIMIT() make the file with the
 * owner's mode, and a store that applies the owner's rule before it
 * parses (cask_host_limit_store(), cask_cell_limit_store()).
 *
 * Per-cell counters, an atomic_long_t in the driver's state each, need no
 * show of their own: CASK_ATTR_COUNTER() makes a 0400 file that shows the
 * field with cask_counter_show(). Files that differ only in what they
 * show (one ring of several, one counter of many) carry a number with
 * CASK_EXT_ATTR_RO()/CASK_EXT_ATTR_RW(), read back with cask_ext_attr_var().
 */
#ifndef _CASK_ATTR_H
#define _CASK_ATTR_H

#include <linux/container_of.h>
#include <linux/kobject.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>
#include <linux/types.h>

struct cask_cell;

#define CASK_ATTR_RO(_name)						\
	struct kobj_attribute cask_attr_##_name = __ATTR_RO_MODE(_name, 0400)

#define CASK_ATTR_RW(_name)						\
	struct kobj_attribute cask_attr_##_name = __ATTR_RW_MODE(_name, 0600)

#define CASK_ATTR_HOST_RW(_name)					\
	struct kobj_attribute cask_attr_##_name = __ATTR_RW_MODE(_name, 0644)

#define CASK_ATTR_PUBLIC_RO(_name)					\
	struct kobj_attribute cask_attr_##_name = __ATTR_RO_MODE(_name, 0444)

/**
 * struct cask_ext_attr - a file with a number of its own
 * @kattr: the file; its .attr goes into the attribute table
 * @var: what the file's show and store tell it apart by (an index, an
 *	offset); read with cask_ext_attr_var()
 */
struct cask_ext_attr {
	struct kobj_attribute kattr;
	unsigned long var;
};

/* @_var names the variable: several files may share one @_name. */
#define CASK_EXT_ATTR_RO(_var, _name, _arg)				\
	struct cask_ext_attr _var = {					\
		.kattr = __ATTR_RO_MODE(_name, 0400),			\
		.var = (_arg),						\
	}

#define CASK_EXT_ATTR_RW(_var, _name, _arg)				\
	struct cask_ext_attr _var = {					\
		.kattr = __ATTR_RW_MODE(_name, 0600),			\
		.var = (_arg),						\
	}

/*
 * A 0400 file cask_attr_<_name> showing @_field of the driver's per-cell
 * state, a @_type; @_field must be an atomic_long_t. Its table entry is
 * &cask_attr_<_name>.kattr.attr.
 */
#define CASK_ATTR_COUNTER(_name, _type, _field)				\
	struct cask_ext_attr cask_attr_##_name = {			\
		.kattr = __ATTR(_name, 0400, cask_counter_show, NULL),	\
		.var = offsetof(_type, _field),				\
	}

/*
 * A limit cask_attr_<_name>: @_field of the driver's per-cell state, a
 * @_type; @_field must be a long, LONG_MAX for none, read with READ_ONCE()
 * by what it bounds. CASK_ATTR_HOST_LIMIT() is the host's (0644, for
 * @host_groups), CASK_ATTR_CELL_LIMIT() the cell's own (0600, for
 * @groups). Its table entry is &cask_attr_<_name>.kattr.attr.
 */
#define __CASK_ATTR_LIMIT(_name, _mode, _store, _type, _field)		\
	struct cask_ext_attr cask_attr_##_name = {			\
		.kattr = __ATTR(_name, _mode, cask_limit_show, _store),	\
		.var = offsetof(_type, _field),				\
	}

#define CASK_ATTR_HOST_LIMIT(_name, _type, _field)			\
	__CASK_ATTR_LIMIT(_name, 0644, cask_host_limit_store, _type, _field)

#define CASK_ATTR_CELL_LIMIT(_name, _type, _field)			\
	__CASK_ATTR_LIMIT(_name, 0600, cask_cell_limit_store, _type, _field)

/**
 * cask_ext_attr_var() - the number of a CASK_EXT_ATTR_*() file
 * @kattr: what its show or store was called with
 *
 * Context: any.
 * Return: the file's @var.
 */
static inline unsigned long cask_ext_attr_var(const struct kobj_attribute *kattr)
{
	return container_of_const(kattr, struct cask_ext_attr, kattr)->var;
}

ssize_t cask_counter_show(struct kobject *kobj, struct kobj_attribute *kattr,
			  char *buf);

bool cask_cell_may_admin(const struct cask_cell *cell);
bool cask_host_may_admin(void);

ssize_t cask_limit_emit(char *buf, long val);
int cask_limit_parse(const char *buf, long *val);

ssize_t cask_limit_show(struct kobject *kobj, struct kobj_attribute *kattr,
			char *buf);
ssize_t cask_host_limit_store(struct kobject *kobj,
			      struct kobj_attribute *kattr, const char *buf,
			      size_t count);
ssize_t cask_cell_limit_store(struct kobject *kobj,
			      struct kobj_attribute *kattr, const char *buf,
			      size_t count);

#endif /* _CASK_ATTR_H */
