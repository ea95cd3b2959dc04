// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/ashmem files: one region each, its ioctls, and its mappings.
 *
 * A region's memory is a shmem file (the backing file) made by the first
 * mmap, named so that /proc/PID/maps shows "/dev/ashmem/<name>". Shared
 * mappings map it with shmem's own vm_ops, except for the fault handler:
 * ours first brings the page into the file inside the memcg of the
 * region's creator (the task that opened /dev/ashmem for it), so that the
 * creator pays for it whoever touches it first (shmem would charge the
 * faulting process), then lets shmem map it. Not the cell's memcg: tasks
 * in different cgroups share a cell when they share an IPC namespace.
 * When the faulting process is in the creator's memcg, shmem's charge is
 * that anyway, and shmem's fault does it all. So it does when the
 * creator's memcg is the root: the root has no limit, and charging it
 * would let a host process in a limited cgroup escape its limit, so such
 * a region's pages are charged to whoever faults them in, as shmem's are.
 *
 * Backing files live on an internal tmpfs instance of our own, huge=never:
 * no transparent huge page at fault time or from khugepaged, whatever
 * shmem_enabled says and even after MADV_HUGEPAGE, which lifts the
 * VM_NOHUGEPAGE our mappings start with and which a module cannot refuse.
 * A huge page brought in by a mapper would be charged to the mapper, and
 * one collapsed by khugepaged to the process whose mm it scanned.
 *
 * The backing file gets a copy of shmem's file operations in which mmap
 * fails: a mapping, /proc/PID/map_files or remap_file_pages() reaches that
 * file, and mapping it anew would escape the region's protection mask
 * (CVE-2020-0009). The copy belongs to this module, so every backing file,
 * hence every mapping, holds the module.
 *
 * A region's last reference (cashmem_area_put()) and the cache regions
 * come from are purge.c's, which drops references too: calls go from here
 * to range.c and purge.c, never back.
 *
 * Locking: see main.c for the order. area->lock (the region's mutex) is
 * taken here around a region's ioctls, mmap and release; range.c's
 * _locked functions run under it and purge.c takes cc->lock inside it.
 */
#include <linux/compat.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/personality.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <cask/attr.h>
#include <cask/cell.h>

#include "ashmem.h"

#define COMPAT_ASHMEM_SET_SIZE		_IOW(__ASHMEMIOC, 3, compat_size_t)
#define COMPAT_ASHMEM_SET_PROT_MASK	_IOW(__ASHMEMIOC, 5, unsigned int)
#define COMPAT_ASHMEM_GET_FILE_ID	_IOR(__ASHMEMIOC, 11, unsigned int)

/*
 * shmem's file and vm operations, found at load time and at the first
 * shared mapping (shmem sets its vm_ops only in its mmap). Ours are const
 * tables that call through to these where they keep shmem's behaviour.
 */
static const struct file_operations *cashmem_shmem_fops;
static const struct vm_operations_struct *cashmem_shmem_vm_ops;

/* Our internal tmpfs instance, without huge pages; where backing files are made. */
static struct vfsmount *cashmem_mnt;

static int cashmem_open(struct inode *inode, struct file *file)
{
	struct cashmem_area *area;
	struct cashmem_cell *cc;
	struct cask_cell *cell;
	struct mem_cgroup *memcg;
	int ret;

	ret = generic_file_open(inode, file);
	if (ret)
		return ret;
	cell = cask_cell_get_or_create();
	if (IS_ERR(cell))
		return PTR_ERR(cell);
	cc = cask_cell_data(cell, &cashmem_driver);
	if (!cc) {
		cask_cell_put(cell);
		return -ENODEV;
	}
	/* Charged to the creator, as everything of the region will be. */
	area = kmem_cache_alloc(cashmem_area_cache, GFP_KERNEL_ACCOUNT);
	if (!area) {
		cask_cell_put(cell);
		return -ENOMEM;
	}
	/*
	 * The creator pays, not the cell's cgroup: tasks in other cgroups
	 * share a cell when they share an IPC namespace (a Kubernetes pod,
	 * docker --ipc=container:), and each pays for its own regions,
	 * within its own memory.max. Never the root, which no limit binds.
	 */
	memcg = get_mem_cgroup_from_mm(current->mm);
	if (memcg && !parent_mem_cgroup(memcg)) {
		mem_cgroup_put(memcg);
		memcg = NULL;
	}
	kref_init(&area->ref);
	mutex_init(&area->lock);
	area->cc = cc;
	area->cell = cell;
	area->memcg = memcg;
	/* No name yet: the prefix and an empty string after it. */
	memcpy(area->name, CASHMEM_NAME_PREFIX, CASHMEM_NAME_PREFIX_LEN);
	area->name[CASHMEM_NAME_PREFIX_LEN] = '\0';
	area->size = 0;
	area->charged = 0;
	area->prot_mask = CASHMEM_PROT_ALL;
	area->file = NULL;
	INIT_LIST_HEAD(&area->unpinned);
	area->released = false;
	atomic_long_inc(&cc->regions);
	file->private_data = area;
	return 0;
}

static int cashmem_release(struct inode *inode, struct file *file)
{
	struct cashmem_area *area = file->private_data;
	struct file *backing;

	mutex_lock(&area->lock);
	cashmem_range_release_all_locked(area);
	area->released = true;
	backing = area->file;
	area->file = NULL;
	mutex_unlock(&area->lock);
	/*
	 * Mappings hold their own references on the backing file; ours is
	 * the last once they are gone. Release it right here, as close()
	 * does ours, rather than in one more round of task work: we run
	 * from __fput(), without locks, and the file lives on shmem's
	 * internal mount, which no umount waits for.
	 */
	if (backing)
		__fput_sync(backing);
	cashmem_area_put(area);
	return 0;
}

/*
 * Would shmem's fault charge @memcg anyway? It charges the memcg of the
 * mm's owner. That the owner moves to another memcg right after we
 * looked is the same as its moving right after the fault.
 */
static bool cashmem_mm_charges(struct mm_struct *mm, struct mem_cgroup *memcg)
{
#ifdef CONFIG_MEMCG
	bool same;

	rcu_read_lock();
	same = mem_cgroup_from_task(rcu_dereference(mm->owner)) == memcg;
	rcu_read_unlock();
	return same;
#else
	return true;
#endif
}

static vm_fault_t cashmem_fault(struct vm_fault *vmf)
{
	struct file *file = vmf->vma->vm_file;
	struct cashmem_area *area = file->private_data;
	struct mem_cgroup *old;
	struct folio *folio;
	int err;

	/*
	 * Bring the page in without a vma, so that shmem charges the active
	 * memcg, the region's creator's. On other errors shmem's fault says
	 * what it is. Not needed when the faulting process is in that memcg
	 * (the usual case): its own fault charges it, without a second
	 * lookup of the page. Nor when the creator's memcg is the root:
	 * shmem's fault charges the faulting process.
	 */
	if (area->memcg && !cashmem_mm_charges(vmf->vma->vm_mm, area->memcg)) {
		old = cask_memcg_begin(area->memcg);
		err = shmem_get_folio(file_inode(file), vmf->pgoff, 0, &folio,
				      SGP_CACHE);
		cask_memcg_end(area->memcg, old);
		/*
		 * The cell is out of memory and its OOM killer found nothing
		 * to kill. shmem would charge the faulting process instead,
		 * or (for its own) retry the fault for ever: a bus error.
		 */
		if (err == -ENOMEM)
			return VM_FAULT_SIGBUS;
		if (!err && folio) {
			folio_unlock(folio);
			folio_put(folio);
		}
	}
	/* Set before any vma got our vm_ops. */
	return READ_ONCE(cashmem_shmem_vm_ops)->fault(vmf);
}

#ifdef CONFIG_NUMA
static int cashmem_set_policy(struct vm_area_struct *vma,
			      struct mempolicy *mpol)
{
	return READ_ONCE(cashmem_shmem_vm_ops)->set_policy(vma, mpol);
}

static struct mempolicy *cashmem_get_policy(struct vm_area_struct *vma,
					    unsigned long addr, pgoff_t *ilx)
{
	return READ_ONCE(cashmem_shmem_vm_ops)->get_policy(vma, addr, ilx);
}
#endif

/* shmem's vm_ops for unlinked files, but our fault handler. */
static const struct vm_operations_struct cashmem_vm_ops = {
	.fault = cashmem_fault,
	.map_pages = filemap_map_pages,
#ifdef CONFIG_NUMA
	.set_policy = cashmem_set_policy,
	.get_policy = cashmem_get_policy,
#endif
};

/* Give a fresh shared mapping, set up by shmem, our vm_ops. */
static int cashmem_set_vm_ops(struct vm_area_struct *vma)
{
	const struct vm_operations_struct *ops = vma->vm_ops;
	const struct vm_operations_struct *first;

	/* shmem gives every unlinked file the same vm_ops: keep the first. */
	first = READ_ONCE(cashmem_shmem_vm_ops);
	if (unlikely(!first)) {
		if (!ops || !ops->fault || ops->map_pages != filemap_map_pages)
			return -ENODEV;
#ifdef CONFIG_NUMA
		if (!ops->set_policy || !ops->get_policy)
			return -ENODEV;
#endif
		first = cmpxchg(&cashmem_shmem_vm_ops, NULL, ops) ?: ops;
	}
	if (WARN_ON_ONCE(first != ops))
		return -ENODEV;
	vma->vm_ops = &cashmem_vm_ops;
	return 0;
}

/*
 * The backing file's operations: what our read, seek and purge need from
 * shmem, nothing that could map or re-open it.
 */
static int cashmem_backing_open(struct inode *inode, struct file *file)
{
	return -EPERM;
}

static int cashmem_backing_mmap(struct file *file, struct vm_area_struct *vma)
{
	return -EPERM;
}

static int cashmem_backing_release(struct inode *inode, struct file *file)
{
	struct cashmem_area *area = file->private_data;

	cashmem_area_put(area);
	return 0;
}

static loff_t cashmem_backing_llseek(struct file *file, loff_t offset,
				     int whence)
{
	return cashmem_shmem_fops->llseek(file, offset, whence);
}

static ssize_t cashmem_backing_read_iter(struct kiocb *iocb,
					 struct iov_iter *iter)
{
	return cashmem_shmem_fops->read_iter(iocb, iter);
}

static long cashmem_backing_fallocate(struct file *file, int mode,
				      loff_t offset, loff_t len)
{
	return cashmem_shmem_fops->fallocate(file, mode, offset, len);
}

static const struct file_operations cashmem_backing_fops = {
	.owner = THIS_MODULE,
	.open = cashmem_backing_open,
	.release = cashmem_backing_release,
	.mmap = cashmem_backing_mmap,
	.llseek = cashmem_backing_llseek,
	.read_iter = cashmem_backing_read_iter,
	.fallocate = cashmem_backing_fallocate,
	/* msync(MS_SYNC) of a mapping: nothing to write back. */
	.fsync = noop_fsync,
};

/* The first mmap fixes name and size: make the backing file. */
static int cashmem_make_backing_locked(struct cashmem_area *area)
{
	const char *name = area->name;
	struct mem_cgroup *old;
	struct file *file;

	lockdep_assert_held(&area->lock);
	if (!area->name[CASHMEM_NAME_PREFIX_LEN])
		name = ASHMEM_NAME_DEF;
	/* Its inode, dentry and file are the cell's too. */
	old = cask_memcg_begin(area->memcg);
	file = shmem_file_setup_with_mnt(cashmem_mnt, name, area->size,
					 VM_NORESERVE);
	cask_memcg_end(area->memcg, old);
	if (IS_ERR(file))
		return PTR_ERR(file);
	/* We hold the module through our open file: this cannot fail. */
	if (WARN_ON_ONCE(!fops_get(&cashmem_backing_fops))) {
		fput(file);
		return -ENODEV;
	}
	replace_fops(file, &cashmem_backing_fops);
	/* An open through /proc/PID/map_files gets them as well: it fails. */
	file_inode(file)->i_fop = &cashmem_backing_fops;
	kref_get(&area->ref);
	file->private_data = area;
	area->file = file;
	return 0;
}

/* What mappings of a region may never gain, given its protection mask. */
static unsigned long cashmem_may_clear(unsigned long prot_mask)
{
	unsigned long flags = 0;

	if (!(prot_mask & PROT_READ))
		flags |= VM_MAYREAD;
	if (!(prot_mask & PROT_WRITE))
		flags |= VM_MAYWRITE;
	if (!(prot_mask & PROT_EXEC))
		flags |= VM_MAYEXEC;
	return flags;
}

static int cashmem_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct cashmem_area *area = file->private_data;
	unsigned long allowed;
	int ret = 0;

	mutex_lock(&area->lock);
	if (!area->size || vma->vm_end - vma->vm_start > PAGE_ALIGN(area->size)) {
		ret = -EINVAL;
		goto unlock;
	}
	allowed = calc_vm_prot_bits(area->prot_mask, 0);
	if (vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC) & ~allowed) {
		ret = -EPERM;
		goto unlock;
	}
	/*
	 * No huge pages (see the top): the mount refuses them at fault time
	 * and to khugepaged; VM_NOHUGEPAGE also refuses MADV_COLLAPSE, until
	 * MADV_HUGEPAGE lifts it.
	 */
	vm_flags_mod(vma, VM_NOHUGEPAGE, cashmem_may_clear(area->prot_mask));
	if (!area->file) {
		ret = cashmem_make_backing_locked(area);
		if (ret)
			goto unlock;
	}
	if (vma->vm_flags & VM_SHARED) {
		vma_set_file(vma, area->file);
		ret = cashmem_shmem_fops->mmap(area->file, vma);
		if (!ret)
			ret = cashmem_set_vm_ops(vma);
	} else {
		/* Private memory of the mapper, as MAP_PRIVATE of /dev/zero. */
		vma_set_anonymous(vma);
	}
unlock:
	mutex_unlock(&area->lock);
	return ret;
}

/*
 * Mount our tmpfs instance with kern_mount(), an internal mount like
 * shmem's own: the last fput() of a backing file drops its reference with
 * a per-CPU decrement. A mount from vfs_kern_mount() is in no namespace,
 * and each of its mntput()s takes the global mount_lock for writing,
 * which also sends every RCU path walk in progress on the machine back
 * to reference walking: every region a container closed slowed every
 * other container's path lookups. kern_mount() takes no options, but a
 * fresh tmpfs never uses huge pages (huge=never is its default); should
 * this kernel's default differ, ask for huge=never on a mount of the
 * slower kind.
 */
static int cashmem_mount(void)
{
	/* Parsed in place. */
	char opts[] = "huge=never";
	struct file_system_type *type;
	struct vfsmount *mnt;

	/* Built in, as shmem is (no owner): the reference is nothing to put. */
	type = get_fs_type("tmpfs");
	if (!type) {
		pr_err("no tmpfs (CONFIG_SHMEM=n?)\n");
		return -ENODEV;
	}
	mnt = kern_mount(type);
	/* shmem's SHMEM_SB(); its SHMEM_HUGE_NEVER is 0 (mm/shmem.c). */
	if (!IS_ERR(mnt) &&
	    ((struct shmem_sb_info *)mnt->mnt_sb->s_fs_info)->huge) {
		kern_unmount(mnt);
		pr_info("tmpfs defaults to huge pages: backing files on a huge=never mount of the slower kind\n");
		mnt = vfs_kern_mount(type, SB_KERNMOUNT, type->name, opts);
	}
	if (IS_ERR(mnt)) {
		pr_err("cannot mount tmpfs: %ld\n", PTR_ERR(mnt));
		return PTR_ERR(mnt);
	}
	cashmem_mnt = mnt;
	return 0;
}

/**
 * cashmem_backing_init() - make the region cache and our tmpfs instance,
 * find shmem's file operations
 *
 * Context: module init.
 * Return: 0, -ENOMEM, or a negative errno if shmem lacks what regions need.
 */
int cashmem_backing_init(void)
{
	const struct file_operations *fops;
	struct file *probe;
	int ret;

	cashmem_area_cache = KMEM_CACHE(cashmem_area, SLAB_ACCOUNT);
	if (!cashmem_area_cache)
		return -ENOMEM;
	ret = cashmem_mount();
	if (ret)
		goto destroy_cache;
	probe = shmem_file_setup_with_mnt(cashmem_mnt, "cask_ashmem", 0,
					  VM_NORESERVE);
	if (IS_ERR(probe)) {
		ret = PTR_ERR(probe);
		goto unmount;
	}
	/* shmem's table is built in: it outlives the probe file. */
	fops = probe->f_op;
	fput(probe);
	if (!fops->mmap || !fops->llseek || !fops->read_iter ||
	    !fops->fallocate) {
		pr_err("shmem without mmap, seek, read or fallocate (CONFIG_TMPFS=n?)\n");
		ret = -ENODEV;
		goto unmount;
	}
	cashmem_shmem_fops = fops;
	return 0;

unmount:
	kern_unmount(cashmem_mnt);
destroy_cache:
	kmem_cache_destroy(cashmem_area_cache);
	return ret;
}

/**
 * cashmem_backing_exit() - unmount our tmpfs, destroy the region cache
 *
 * Every region is gone: each held the module through its files.
 *
 * Context: module exit or failed init.
 */
void cashmem_backing_exit(void)
{
	kern_unmount(cashmem_mnt);
	kmem_cache_destroy(cashmem_area_cache);
}

static long cashmem_set_name(struct cashmem_area *area, const char __user *arg)
{
	char name[ASHMEM_NAME_LEN];
	long len;
	int ret = 0;

	len = strncpy_from_user(name, arg, sizeof(name));
	if (len < 0)
		return len;
	/* Longer names are cut, as Android's driver did. */
	name[sizeof(name) - 1] = '\0';
	mutex_lock(&area->lock);
	if (area->file)
		ret = -EINVAL;
	else
		strscpy(area->name + CASHMEM_NAME_PREFIX_LEN, name,
			ASHMEM_NAME_LEN);
	mutex_unlock(&area->lock);
	return ret;
}

static long cashmem_get_name(struct cashmem_area *area, char __user *arg)
{
	char name[ASHMEM_NAME_LEN];
	size_t len;

	mutex_lock(&area->lock);
	if (area->name[CASHMEM_NAME_PREFIX_LEN])
		strscpy(name, area->name + CASHMEM_NAME_PREFIX_LEN, sizeof(name));
	else
		strscpy(name, ASHMEM_NAME_DEF, sizeof(name));
	mutex_unlock(&area->lock);
	len = strlen(name) + 1;
	return copy_to_user(arg, name, len) ? -EFAULT : 0;
}

/* Move @delta bytes of the cell's budget; refuse to pass max_bytes. */
static int cashmem_charge(struct cashmem_cell *cc, long delta)
{
	long old = atomic_long_read(&cc->bytes), new;

	do {
		if (check_add_overflow(old, delta, &new) ||
		    (delta > 0 && new > READ_ONCE(cc->max_bytes))) {
			atomic_long_inc(&cc->size_denied);
			return -ENOMEM;
		}
	} while (!atomic_long_try_cmpxchg(&cc->bytes, &old, new));
	return 0;
}

static long cashmem_set_size(struct cashmem_area *area, unsigned long size)
{
	unsigned long charge;
	int ret;

	/* Past what a file can hold; the page-rounded size must fit a long. */
	if (size > (MAX_LFS_FILESIZE & PAGE_MASK))
		return -EINVAL;
	charge = PAGE_ALIGN(size);
	mutex_lock(&area->lock);
	if (area->file) {
		ret = -EINVAL;
		goto unlock;
	}
	ret = cashmem_charge(area->cc, (long)charge - (long)area->charged);
	if (ret)
		goto unlock;
	area->charged = charge;
	area->size = size;
unlock:
	mutex_unlock(&area->lock);
	return ret;
}

static long cashmem_set_prot_mask(struct cashmem_area *area,
				  unsigned long prot)
{
	int ret = 0;

	mutex_lock(&area->lock);
	/* Protections can only be taken away. */
	if ((area->prot_mask & prot) != prot) {
		ret = -EINVAL;
		goto unlock;
	}
	/*
	 * As Android's driver, READ_IMPLIES_EXEC makes PROT_READ mean
	 * PROT_EXEC too, but only while the mask still has it: Android's
	 * added it back once taken away, and masks only ever narrow.
	 */
	if ((prot & PROT_READ) && (current->personality & READ_IMPLIES_EXEC))
		prot |= area->prot_mask & PROT_EXEC;
	area->prot_mask = prot;
unlock:
	mutex_unlock(&area->lock);
	return ret;
}

static long cashmem_pin_cmd(struct cashmem_area *area, unsigned int cmd,
			    struct ashmem_pin __user *arg)
{
	struct cashmem_range *spare = NULL;
	struct ashmem_pin pin;
	pgoff_t pgstart, pgend;
	long ret;

	if (copy_from_user(&pin, arg, sizeof(pin)))
		return -EFAULT;
	if (cmd != ASHMEM_GET_PIN_STATUS) {
		spare = cashmem_range_alloc();
		if (!spare)
			return -ENOMEM;
	}
	mutex_lock(&area->lock);
	if (!area->file) {
		ret = -EINVAL;
		goto unlock;
	}
	ret = cashmem_pin_pages(area->size, pin.offset, pin.len, &pgstart,
				&pgend);
	if (ret)
		goto unlock;
	switch (cmd) {
	case ASHMEM_PIN:
		ret = cashmem_range_pin_locked(area, pgstart, pgend, &spare);
		break;
	case ASHMEM_UNPIN:
		ret = cashmem_range_unpin_locked(area, pgstart, pgend, &spare);
		break;
	default:
		ret = cashmem_range_status_locked(area, pgstart, pgend);
		break;
	}
unlock:
	mutex_unlock(&area->lock);
	cashmem_range_free(spare);
	return ret;
}

/*
 * A region's id, as Android's kernels give it: its memory's inode number,
 * the same for every fd of the region; EINVAL before the first mmap.
 */
static long cashmem_file_id(struct cashmem_area *area)
{
	long id = -EINVAL;

	mutex_lock(&area->lock);
	if (area->file)
		id = file_inode(area->file)->i_ino & LONG_MAX;
	mutex_unlock(&area->lock);
	return id;
}

/* Only the caller's own cell, and only for its root. */
static long cashmem_purge_all(void)
{
	struct cashmem_cell *cc;
	struct cask_cell *cell;
	long ret;

	cell = cask_cell_find_current();
	if (!cell)
		return ns_capable(current_user_ns(), CAP_SYS_ADMIN) ? 0 : -EPERM;
	cc = cask_cell_data(cell, &cashmem_driver);
	if (!cask_cell_may_admin(cell)) {
		ret = -EPERM;
	} else if (!cc) {
		ret = 0;
	} else {
		/*
		 * As Android's driver: the pages there were to purge. At most
		 * INT_MAX: ioctl() returns an int, and a range unpinned to the
		 * end of a huge region would come back cut, even as an errno.
		 */
		ret = min_t(unsigned long, READ_ONCE(cc->lru_pages), INT_MAX);
		cashmem_purge_cell(cc, ULONG_MAX, true);
	}
	cask_cell_put(cell);
	return ret;
}

static long cashmem_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct cashmem_area *area = file->private_data;
	long ret;

	switch (cmd) {
	case ASHMEM_SET_NAME:
		return cashmem_set_name(area, (const char __user *)arg);
	case ASHMEM_GET_NAME:
		return cashmem_get_name(area, (char __user *)arg);
	case ASHMEM_SET_SIZE:
		return cashmem_set_size(area, arg);
	case ASHMEM_GET_SIZE:
		mutex_lock(&area->lock);
		ret = area->size;
		mutex_unlock(&area->lock);
		return ret;
	case ASHMEM_SET_PROT_MASK:
		return cashmem_set_prot_mask(area, arg);
	case ASHMEM_GET_PROT_MASK:
		mutex_lock(&area->lock);
		ret = area->prot_mask;
		mutex_unlock(&area->lock);
		return ret;
	case ASHMEM_PIN:
	case ASHMEM_UNPIN:
	case ASHMEM_GET_PIN_STATUS:
		return cashmem_pin_cmd(area, cmd, (void __user *)arg);
	case ASHMEM_PURGE_ALL_CACHES:
		return cashmem_purge_all();
	case ASHMEM_GET_FILE_ID:
		ret = cashmem_file_id(area);
		if (ret < 0)
			return ret;
		return put_user(ret, (unsigned long __user *)arg);
	}
	return -ENOTTY;
}

#ifdef CONFIG_COMPAT
static long cashmem_compat_ioctl(struct file *file, unsigned int cmd,
				 unsigned long arg)
{
	switch (cmd) {
	case COMPAT_ASHMEM_SET_SIZE:
		return cashmem_ioctl(file, ASHMEM_SET_SIZE, arg);
	case COMPAT_ASHMEM_SET_PROT_MASK:
		return cashmem_ioctl(file, ASHMEM_SET_PROT_MASK, arg);
	case COMPAT_ASHMEM_GET_FILE_ID: {
		long id = cashmem_file_id(file->private_data);

		if (id < 0)
			return id;
		return put_user(id, (compat_ulong_t __user *)compat_ptr(arg));
	}
	}
	return cashmem_ioctl(file, cmd, (unsigned long)compat_ptr(arg));
}
#endif

/* The backing file for read and seek: -EBADF before the first mmap. */
static struct file *cashmem_get_backing(struct cashmem_area *area,
					size_t *size)
{
	struct file *backing;

	mutex_lock(&area->lock);
	*size = area->size;
	backing = area->file ? get_file(area->file) : NULL;
	mutex_unlock(&area->lock);
	return backing;
}

static ssize_t cashmem_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct cashmem_area *area = iocb->ki_filp->private_data;
	struct file *backing;
	ssize_t ret;
	size_t size;

	backing = cashmem_get_backing(area, &size);
	if (!size)
		ret = 0;
	else if (!backing)
		ret = -EBADF;
	else
		ret = vfs_iter_read(backing, iter, &iocb->ki_pos, 0);
	if (backing)
		fput(backing);
	return ret;
}

static loff_t cashmem_llseek(struct file *file, loff_t offset, int whence)
{
	struct cashmem_area *area = file->private_data;
	struct file *backing;
	loff_t ret;
	size_t size;

	backing = cashmem_get_backing(area, &size);
	if (!size) {
		ret = -EINVAL;
	} else if (!backing) {
		ret = -EBADF;
	} else {
		/* shmem knows where the data and the holes are. */
		mutex_lock(&area->lock);
		backing->f_pos = file->f_pos;
		ret = vfs_llseek(backing, offset, whence);
		if (ret >= 0)
			file->f_pos = ret;
		mutex_unlock(&area->lock);
	}
	if (backing)
		fput(backing);
	return ret;
}

const struct file_operations cashmem_fops = {
	.owner = THIS_MODULE,
	.open = cashmem_open,
	.release = cashmem_release,
	.read_iter = cashmem_read_iter,
	.llseek = cashmem_llseek,
	.mmap = cashmem_mmap,
	.unlocked_ioctl = cashmem_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl = cashmem_compat_ioctl,
#endif
};
