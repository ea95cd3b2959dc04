// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/cask/cells/NAME/logger/BUFFER/{size,bytes_written,
 * entries_dropped,readers}; see Documentation/ABI/testing/sysfs-kernel-cask.
 * The directories belong to the cell's root (cask_core sets the owner);
 * modes 0600/0400 keep one cell's activity hidden from the others.
 */
#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/kstrtox.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>
#include <cask/cell.h>

#include "logger.h"

struct cask_log_attr {
	struct kobj_attribute kattr;
	enum cask_log_id log;
};

static struct cask_log_ring *cask_log_attr_ring(struct kobject *kobj,
						struct kobj_attribute *kattr)
{
	struct cask_logger_cell *lc = cask_driver_data_from_kobj(kobj);

	return &lc->rings[container_of(kattr, struct cask_log_attr, kattr)->log];
}

static ssize_t size_show(struct kobject *kobj, struct kobj_attribute *kattr,
			 char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(cask_log_attr_ring(kobj, kattr)->size));
}

static ssize_t size_store(struct kobject *kobj, struct kobj_attribute *kattr,
			  const char *buf, size_t count)
{
	struct cask_cell *cell = cask_cell_from_kobj(kobj);
	u32 size;
	int ret;

	/* File modes let the cell's root in; the writer must be it too. */
	if (!ns_capable(cask_cell_user_ns(cell), CAP_SYS_ADMIN))
		return -EPERM;
	ret = kstrtou32(buf, 0, &size);
	if (ret)
		return -EINVAL;
	ret = cask_logger_set_size(cask_log_attr_ring(kobj, kattr), size);
	return ret ?: count;
}

/* A counter that the ring's lock protects. */
static ssize_t cask_log_show_counter(struct kobject *kobj,
				     struct kobj_attribute *kattr, char *buf,
				     size_t offset)
{
	struct cask_log_ring *ring = cask_log_attr_ring(kobj, kattr);
	u64 val;

	spin_lock(&ring->lock);
	val = *(u64 *)((char *)ring + offset);
	spin_unlock(&ring->lock);
	return sysfs_emit(buf, "%llu\n", val);
}

static ssize_t bytes_written_show(struct kobject *kobj,
				  struct kobj_attribute *kattr, char *buf)
{
	return cask_log_show_counter(kobj, kattr, buf,
				     offsetof(struct cask_log_ring, bytes_written));
}

static ssize_t entries_dropped_show(struct kobject *kobj,
				    struct kobj_attribute *kattr, char *buf)
{
	return cask_log_show_counter(kobj, kattr, buf,
				     offsetof(struct cask_log_ring, dropped));
}

static ssize_t readers_show(struct kobject *kobj, struct kobj_attribute *kattr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&cask_log_attr_ring(kobj, kattr)->readers));
}

/*
 * One directory per buffer, four files each; built once at module init
 * from one template, since the files of different buffers differ only in
 * the buffer they show.
 */
static const struct kobj_attribute cask_log_attr_templates[] = {
	__ATTR(size, 0600, size_show, size_store),
	__ATTR_RO_MODE(bytes_written, 0400),
	__ATTR_RO_MODE(entries_dropped, 0400),
	__ATTR_RO_MODE(readers, 0400),
};

#define CASK_LOG_NR_ATTRS ARRAY_SIZE(cask_log_attr_templates)

static struct cask_log_attr cask_log_attrs[CASK_LOG_NR][CASK_LOG_NR_ATTRS];
static struct attribute *cask_log_attr_ptrs[CASK_LOG_NR][CASK_LOG_NR_ATTRS + 1];
static struct attribute_group cask_log_groups[CASK_LOG_NR];
const struct attribute_group *cask_logger_groups[CASK_LOG_NR + 1];

/**
 * cask_logger_sysfs_init() - build the attribute groups of the buffers
 *
 * Context: module init, before the driver registers with cask_core.
 */
void cask_logger_sysfs_init(void)
{
	struct cask_log_attr *a;
	int log, i;

	for (log = 0; log < CASK_LOG_NR; log++) {
		for (i = 0; i < CASK_LOG_NR_ATTRS; i++) {
			a = &cask_log_attrs[log][i];
			a->kattr = cask_log_attr_templates[i];
			sysfs_attr_init(&a->kattr.attr);
			a->log = log;
			cask_log_attr_ptrs[log][i] = &a->kattr.attr;
		}
		cask_log_groups[log].name = cask_log_names[log];
		cask_log_groups[log].attrs = cask_log_attr_ptrs[log];
		cask_logger_groups[log] = &cask_log_groups[log];
	}
}
