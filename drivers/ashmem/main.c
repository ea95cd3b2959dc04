// SPDX-License-Identifier: GPL-2.0
/*
 * cask_ashmem: Android shared memory whose pages the container that made
 * a region pays for, purged only under that container's memory pressure
 * (or the whole machine's). See Documentation/ashmem.rst.
 *
 * Files: main.c (module, device, per-cell state and sysfs), area.c (the
 * files, ioctls and mappings), range.c (pin and unpin bookkeeping),
 * purge.c (per-cell LRU, the shrinker, and a region's last reference).
 * Calls go area.c -> range.c -> purge.c (and area.c -> purge.c), never
 * back.
 *
 * Locking overview, outermost first:
 *
 *   mmap_lock        (the kernel's) around our mmap and fault handler
 *   area->lock       one region (a mutex); the purge work only tries it
 *   the backing inode's lock, taken by shmem inside a purge or a seek
 *   cc->lock         a cell's LRU and page counts (a spinlock)
 *
 * The shrinker's walk holds the list_lru's lock and takes cell references
 * only; the shrinker never purges, it queues each cell's purge work. Our
 * attach and detach run under cask_core's registry lock and take none of
 * these. A region holds a reference on its cell, so the cell's
 * state outlives every region; every open file and every mapping holds the
 * module.
 */
#include <linux/fs.h>
#include <linux/kobject.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <cask/attr.h>
#include <cask/cell.h>
#include <cask/chardev.h>

#include "ashmem.h"

static const char *const cashmem_nodes[] = { "ashmem" };

/* /dev/ashmem, 0666 like every cask node: every app maps ashmem. */
static struct cask_chardev cashmem_chardev = {
	.name = "cask_ashmem",
	.fops = &cashmem_fops,
	.owner = THIS_MODULE,
	.minors = 1,
	.nodes = cashmem_nodes,
	.nr_nodes = ARRAY_SIZE(cashmem_nodes),
};

static void *cashmem_attach(struct cask_cell *cell)
{
	struct cashmem_cell *cc;
	int ret;

	cc = kzalloc(sizeof(*cc), GFP_KERNEL_ACCOUNT);
	if (!cc)
		return ERR_PTR(-ENOMEM);
	ret = cashmem_cell_init(cc, cell);
	if (ret) {
		kfree(cc);
		return ERR_PTR(ret);
	}
	return cc;
}

static void cashmem_detach(struct cask_cell *cell, void *data)
{
	struct cashmem_cell *cc = data;

	/* Every region held the cell: none is left. */
	WARN_ON_ONCE(atomic_long_read(&cc->regions));
	cashmem_cell_exit(cc);
	kfree(cc);
}

static ssize_t cashmem_show_pages(char *buf, long pages)
{
	return sysfs_emit(buf, "%ld\n", pages << PAGE_SHIFT);
}

static ssize_t unpinned_bytes_show(struct kobject *kobj,
				   struct kobj_attribute *a, char *buf)
{
	struct cashmem_cell *cc = cask_driver_data_from_kobj(kobj);
	long pages;

	spin_lock(&cc->lock);
	pages = cc->lru_pages + cc->purged_pages;
	spin_unlock(&cc->lock);
	return cashmem_show_pages(buf, pages);
}

static ssize_t pinned_bytes_show(struct kobject *kobj,
				 struct kobj_attribute *a, char *buf)
{
	struct cashmem_cell *cc = cask_driver_data_from_kobj(kobj);
	long bytes, pages;

	spin_lock(&cc->lock);
	pages = cc->lru_pages + cc->purged_pages;
	bytes = atomic_long_read(&cc->bytes);
	spin_unlock(&cc->lock);
	/* Regions never mapped are pinned; their size counts. */
	return sysfs_emit(buf, "%ld\n", max(bytes - (pages << PAGE_SHIFT), 0L));
}

static ssize_t purgeable_bytes_show(struct kobject *kobj,
				    struct kobj_attribute *a, char *buf)
{
	struct cashmem_cell *cc = cask_driver_data_from_kobj(kobj);

	return cashmem_show_pages(buf, READ_ONCE(cc->lru_pages));
}

static ssize_t purged_bytes_show(struct kobject *kobj,
				 struct kobj_attribute *a, char *buf)
{
	struct cashmem_cell *cc = cask_driver_data_from_kobj(kobj);

	return cashmem_show_pages(buf, atomic_long_read(&cc->purged_total));
}

static CASK_ATTR_COUNTER(regions, struct cashmem_cell, regions);
static CASK_ATTR_COUNTER(bytes, struct cashmem_cell, bytes);
static CASK_ATTR_RO(pinned_bytes);
static CASK_ATTR_RO(unpinned_bytes);
static CASK_ATTR_RO(purgeable_bytes);
static CASK_ATTR_RO(purged_bytes);
static CASK_ATTR_COUNTER(size_denied, struct cashmem_cell, size_denied);
/*
 * The cell's own limit (Documentation/ashmem.rst, "Limits"): a guard the
 * container keeps against its own runaway apps; the host bounds its
 * memory with the memory cgroup. Regions already sized keep their size;
 * new ones must fit.
 */
static CASK_ATTR_CELL_LIMIT(max_bytes, struct cashmem_cell, max_bytes);

static struct attribute *cashmem_cell_attrs[] = {
	&cask_attr_regions.kattr.attr,
	&cask_attr_bytes.kattr.attr,
	&cask_attr_pinned_bytes.attr,
	&cask_attr_unpinned_bytes.attr,
	&cask_attr_purgeable_bytes.attr,
	&cask_attr_purged_bytes.attr,
	&cask_attr_size_denied.kattr.attr,
	&cask_attr_max_bytes.kattr.attr,
	NULL
};
ATTRIBUTE_GROUPS(cashmem_cell);

struct cask_driver cashmem_driver = {
	.name = "ashmem",
	.attach = cashmem_attach,
	.detach = cashmem_detach,
	.groups = cashmem_cell_groups,
};

static int __init cashmem_init(void)
{
	int ret;

	ret = cashmem_range_init();
	if (ret)
		return ret;
	ret = cashmem_purge_init();
	if (ret)
		goto exit_range;
	ret = cashmem_backing_init();
	if (ret)
		goto free_purge;
	ret = cask_driver_register(&cashmem_driver);
	if (ret)
		goto exit_backing;
	/* Cells have their sentinels: reclaim may call us from now on. */
	cashmem_purge_register();
	/* The device last: an open finds everything ready. */
	ret = cask_chardev_add(&cashmem_chardev);
	if (ret)
		goto unregister_purge;
	return 0;

unregister_purge:
	/* Before the cells' state goes: scans use it. */
	cashmem_purge_unregister();
	cask_driver_unregister(&cashmem_driver);
exit_backing:
	cashmem_backing_exit();
free_purge:
	cashmem_purge_free();
exit_range:
	cashmem_range_exit();
	return ret;
}

static void __exit cashmem_exit(void)
{
	cask_chardev_remove(&cashmem_chardev);
	/* The shrinker before the cells' state: its scans use it. */
	cashmem_purge_unregister();
	cask_driver_unregister(&cashmem_driver);
	cashmem_backing_exit();
	cashmem_purge_free();
	cashmem_range_exit();
}

module_init(cashmem_init);
module_exit(cashmem_exit);

MODULE_IMPORT_NS(CASK);
MODULE_DESCRIPTION("cask: Android shared memory paid for and purged per container");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The cask developers");
