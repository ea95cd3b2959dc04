// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/cask/cells/NAME/logger/BUFFER/{size,bytes_written,
 * entries_dropped,readers}, and the same four with entries_written and
 * devkmsg in logger/kmsg/; see Documentation/ABI/testing/sysfs-kernel-cask.
 * cask_core lets only tasks of the cell and of the host reach these files,
 * and makes them with the directory (the groups below are its ktype's
 * default groups).
 */
#include <linux/ipc_namespace.h>
#include <linux/kobject.h>
#include <linux/kstrtox.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <cask/attr.h>
#include <cask/cell.h>

#include "logger.h"

/* The files of kmsg/ carry this in place of a buffer's index. */
#define CASK_LOG_KMSG	CASK_LOG_NR

/* The ring of the buffer, or of kmsg, whose directory the file is in. */
static struct cask_log_ring *cask_log_attr_ring(struct kobject *kobj,
						struct kobj_attribute *kattr)
{
	struct cask_logger_cell *lc = cask_driver_data_from_kobj(kobj);
	unsigned long i = cask_ext_attr_var(kattr);

	return i == CASK_LOG_KMSG ? &lc->kmsg.ring : &lc->rings[i];
}

static ssize_t size_show(struct kobject *kobj, struct kobj_attribute *kattr,
			 char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(cask_log_attr_ring(kobj, kattr)->size));
}

/*
 * The cell's own limit: the ring's memory is charged to the writer's
 * memory cgroup, which is what bounds the container.
 */
static ssize_t size_store(struct kobject *kobj, struct kobj_attribute *kattr,
			  const char *buf, size_t count)
{
	u32 size;
	int ret;

	if (!cask_cell_may_admin(cask_cell_from_kobj(kobj)))
		return -EPERM;
	ret = kstrtou32(buf, 0, &size);
	if (ret)
		return -EINVAL;
	ret = cask_logger_set_size(cask_log_attr_ring(kobj, kattr), size);
	return ret ?: count;
}

/* The lock, not READ_ONCE(): a u64 tears on 32-bit. */
static ssize_t cask_log_u64_show(struct cask_log_ring *ring, const u64 *field,
				 char *buf)
{
	u64 val;

	spin_lock(&ring->lock);
	val = *field;
	spin_unlock(&ring->lock);
	return sysfs_emit(buf, "%llu\n", val);
}

static ssize_t bytes_written_show(struct kobject *kobj,
				  struct kobj_attribute *kattr, char *buf)
{
	struct cask_log_ring *ring = cask_log_attr_ring(kobj, kattr);

	return cask_log_u64_show(ring, &ring->bytes_written, buf);
}

static ssize_t entries_dropped_show(struct kobject *kobj,
				    struct kobj_attribute *kattr, char *buf)
{
	struct cask_log_ring *ring = cask_log_attr_ring(kobj, kattr);

	return cask_log_u64_show(ring, &ring->dropped, buf);
}

static ssize_t readers_show(struct kobject *kobj, struct kobj_attribute *kattr,
			    char *buf)
{
	struct cask_log_ring *ring = cask_log_attr_ring(kobj, kattr);
	int n = atomic_read(&ring->readers);

	/*
	 * A container must not learn that the host watches it: only a reader
	 * in the host (cask_current_in_host(), as cask_core decides who may
	 * read cell files) sees the host tools that selected this ring.
	 */
	if (cask_current_in_host())
		n += atomic_read(&ring->host_readers);
	return sysfs_emit(buf, "%d\n", n);
}

static ssize_t entries_written_show(struct kobject *kobj,
				    struct kobj_attribute *kattr, char *buf)
{
	struct cask_logger_cell *lc = cask_driver_data_from_kobj(kobj);

	return cask_log_u64_show(&lc->kmsg.ring, &lc->kmsg.next_seq, buf);
}

static ssize_t devkmsg_show(struct kobject *kobj, struct kobj_attribute *kattr,
			    char *buf)
{
	struct cask_logger_cell *lc = cask_driver_data_from_kobj(kobj);

	return sysfs_emit(buf, "%s\n",
			  cask_kmsg_mode_names[READ_ONCE(lc->kmsg.mode)]);
}

/*
 * The cell's printk.devkmsg=: a guard the container keeps for itself, as
 * the host's command line is for the host's /dev/kmsg.
 */
static ssize_t devkmsg_store(struct kobject *kobj, struct kobj_attribute *kattr,
			     const char *buf, size_t count)
{
	struct cask_logger_cell *lc = cask_driver_data_from_kobj(kobj);
	int mode;

	if (!cask_cell_may_admin(cask_cell_from_kobj(kobj)))
		return -EPERM;
	mode = sysfs_match_string(cask_kmsg_mode_names, buf);
	if (mode < 0)
		return -EINVAL;
	WRITE_ONCE(lc->kmsg.mode, mode);
	return count;
}

/*
 * The directory BUFFER/ with its four files, for buffer CASK_LOG_<_id>:
 * the same four names in every buffer, told apart by the ring's index.
 */
#define CASK_LOG_BUFFER_ATTRS(_name, _id)				\
static CASK_EXT_ATTR_RW(cask_log_##_name##_size, size, CASK_LOG_##_id);	\
static CASK_EXT_ATTR_RO(cask_log_##_name##_bytes_written, bytes_written,	\
			CASK_LOG_##_id);				\
static CASK_EXT_ATTR_RO(cask_log_##_name##_entries_dropped,		\
			entries_dropped, CASK_LOG_##_id);		\
static CASK_EXT_ATTR_RO(cask_log_##_name##_readers, readers,		\
			CASK_LOG_##_id);				\
static struct attribute *cask_log_##_name##_attrs[] = {		\
	&cask_log_##_name##_size.kattr.attr,				\
	&cask_log_##_name##_bytes_written.kattr.attr,			\
	&cask_log_##_name##_entries_dropped.kattr.attr,			\
	&cask_log_##_name##_readers.kattr.attr,				\
	NULL,								\
};									\
static const struct attribute_group cask_log_##_name##_group = {	\
	.name = #_name,							\
	.attrs = cask_log_##_name##_attrs,				\
}

CASK_LOG_BUFFER_ATTRS(main, MAIN);
CASK_LOG_BUFFER_ATTRS(events, EVENTS);
CASK_LOG_BUFFER_ATTRS(radio, RADIO);
CASK_LOG_BUFFER_ATTRS(system, SYSTEM);
CASK_LOG_BUFFER_ATTRS(crash, CRASH);

/* kmsg/: a log buffer's four files, entries_written and devkmsg. */
static CASK_EXT_ATTR_RW(cask_log_kmsg_size, size, CASK_LOG_KMSG);
static CASK_EXT_ATTR_RO(cask_log_kmsg_bytes_written, bytes_written,
			CASK_LOG_KMSG);
static CASK_EXT_ATTR_RO(cask_log_kmsg_entries_dropped, entries_dropped,
			CASK_LOG_KMSG);
static CASK_EXT_ATTR_RO(cask_log_kmsg_readers, readers, CASK_LOG_KMSG);
static CASK_ATTR_RO(entries_written);
static CASK_ATTR_RW(devkmsg);

static struct attribute *cask_log_kmsg_attrs[] = {
	&cask_log_kmsg_size.kattr.attr,
	&cask_log_kmsg_bytes_written.kattr.attr,
	&cask_log_kmsg_entries_dropped.kattr.attr,
	&cask_log_kmsg_readers.kattr.attr,
	&cask_attr_entries_written.attr,
	&cask_attr_devkmsg.attr,
	NULL,
};

static const struct attribute_group cask_log_kmsg_group = {
	.name = "kmsg",
	.attrs = cask_log_kmsg_attrs,
};

const struct attribute_group *cask_logger_groups[CASK_LOG_NR + 2] = {
	[CASK_LOG_MAIN] = &cask_log_main_group,
	[CASK_LOG_EVENTS] = &cask_log_events_group,
	[CASK_LOG_RADIO] = &cask_log_radio_group,
	[CASK_LOG_SYSTEM] = &cask_log_system_group,
	[CASK_LOG_CRASH] = &cask_log_crash_group,
	[CASK_LOG_KMSG] = &cask_log_kmsg_group,
};
