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

static ssize_t bytes_written_show(struct kobject *kobj,
				  struct kobj_attribute *kattr, char *buf)
{
	struct cask_log_ring *ring = cask_log_attr_ring(kobj, kattr);
	u64 val;

	spin_lock(&ring->lock);
	val = ring->bytes_written;
	spin_unlock(&ring->lock);
	return sysfs_emit(buf, "%llu\n", val);
}

static ssize_t entries_dropped_show(struct kobject *kobj,
				    struct kobj_attribute *kattr, char *buf)
{
	struct cask_log_ring *ring = cask_log_attr_ring(kobj, kattr);
	u64 val;

	spin_lock(&ring->lock);
	val = ring->dropped;
	spin_unlock(&ring->lock);
	return sysfs_emit(buf, "%llu\n", val);
}

static ssize_t readers_show(struct kobject *kobj, struct kobj_attribute *kattr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&cask_log_attr_ring(kobj, kattr)->readers));
}

/* One directory per buffer, four files each. */
#define CASK_LOG_GROUP(_id, _name)						\
static struct cask_log_attr cask_log_##_name##_size = {				\
	.kattr = __ATTR(size, 0600, size_show, size_store), .log = _id };	\
static struct cask_log_attr cask_log_##_name##_written = {			\
	.kattr = __ATTR_RO_MODE(bytes_written, 0400), .log = _id };		\
static struct cask_log_attr cask_log_##_name##_dropped = {			\
	.kattr = __ATTR_RO_MODE(entries_dropped, 0400), .log = _id };		\
static struct cask_log_attr cask_log_##_name##_readers = {			\
	.kattr = __ATTR_RO_MODE(readers, 0400), .log = _id };			\
static struct attribute *cask_log_##_name##_attrs[] = {				\
	&cask_log_##_name##_size.kattr.attr,					\
	&cask_log_##_name##_written.kattr.attr,					\
	&cask_log_##_name##_dropped.kattr.attr,					\
	&cask_log_##_name##_readers.kattr.attr,					\
	NULL									\
};										\
static const struct attribute_group cask_log_##_name##_group = {		\
	.name = #_name,								\
	.attrs = cask_log_##_name##_attrs,					\
}

CASK_LOG_GROUP(CASK_LOG_MAIN, main);
CASK_LOG_GROUP(CASK_LOG_EVENTS, events);
CASK_LOG_GROUP(CASK_LOG_RADIO, radio);
CASK_LOG_GROUP(CASK_LOG_SYSTEM, system);
CASK_LOG_GROUP(CASK_LOG_CRASH, crash);

const struct attribute_group *cask_logger_groups[] = {
	&cask_log_main_group,
	&cask_log_events_group,
	&cask_log_radio_group,
	&cask_log_system_group,
	&cask_log_crash_group,
	NULL
};
