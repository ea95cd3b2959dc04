// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder's receive-area allocator: buffers carved from a process's
 * read-only mapping of /dev/binder, their pages, and the shrinker that
 * takes back pages no buffer uses.
 *
 * Locking overview, outermost first:
 *
 *   mm->mmap_lock  >  cbinder_alloc.lock  >  the list_lru's node lock
 *
 * The fault handler runs with mmap_lock held and takes alloc->lock;
 * allocation and free take alloc->lock and then the LRU's lock to move
 * pages on and off it.  Only the shrinker goes the other way (it starts
 * inside the LRU's lock), so it uses nothing but trylocks and skips a
 * page whose locks are busy.
 *
 * Lifetime of a page: it is allocated (charged to the area's memcg) when
 * the first buffer needing it is allocated, counts its users, the
 * allocated buffers with a byte in it, and goes onto the LRU when the
 * last of them is freed.  A page that is used again stays on the LRU: the
 * shrinker takes it off when it meets it in use, without freeing it.  So
 * a busy area's pages cost no LRU operation per transaction (two per page
 * and buffer otherwise, each a memcg lookup), and a page with no users is
 * always on the LRU.  Only a page with no users is ever freed before
 * release, and only with alloc->lock held from its unmapping from user
 * space to its free: the fault handler maps pages under the same lock, so
 * user space never gets a page back after it was freed.  Every change to
 * a page's LRU membership happens under alloc->lock (the shrinker
 * trylocks it), so the owner may test list_empty() on it.
 *
 * No vma pointer is ever kept (CVE-2023-20928): whoever needs the vma
 * looks it up in alloc->mm under mmap_lock and checks it is ours by its
 * vm_private_data.
 */
#include <linux/highmem.h>
#include <linux/list_lru.h>
#include <linux/lockdep.h>
#include <linux/memcontrol.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <kunit/visibility.h>

#include "alloc.h"

/* Every part of a buffer (data, offsets, extra) starts 8-byte aligned. */
#define CBINDER_BUFFER_ALIGN	8

static struct kmem_cache *cbinder_lru_page_cache;
static struct list_lru cbinder_lru;
static struct shrinker *cbinder_shrinker;

static struct cbinder_buffer *cbinder_buffer_next(struct cbinder_alloc *alloc,
						  struct cbinder_buffer *buffer)
{
	if (list_is_last(&buffer->entry, &alloc->buffers))
		return NULL;
	return list_next_entry(buffer, entry);
}

static struct cbinder_buffer *cbinder_buffer_prev(struct cbinder_alloc *alloc,
						  struct cbinder_buffer *buffer)
{
	if (list_is_first(&buffer->entry, &alloc->buffers))
		return NULL;
	return list_prev_entry(buffer, entry);
}

/* The bytes a buffer's contents may use, or false if that overflows. */
static bool cbinder_content_size(size_t data_size, size_t offsets_size,
				 size_t extra_size, size_t *size)
{
	size_t parts[] = { data_size, offsets_size, extra_size };
	size_t total = 0, aligned;
	int i;

	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		if (check_add_overflow(parts[i], CBINDER_BUFFER_ALIGN - 1,
				       &aligned))
			return false;
		aligned &= ~(size_t)(CBINDER_BUFFER_ALIGN - 1);
		if (check_add_overflow(total, aligned, &total))
			return false;
	}
	*size = total;
	return true;
}

static void cbinder_insert_free_locked(struct cbinder_alloc *alloc,
				       struct cbinder_buffer *new)
{
	struct rb_node **p = &alloc->free_buffers.rb_node, *parent = NULL;
	size_t size = cbinder_buffer_size(alloc, new);

	lockdep_assert_held(&alloc->lock);
	while (*p) {
		struct cbinder_buffer *buffer;
		size_t buffer_size;

		parent = *p;
		buffer = rb_entry(parent, struct cbinder_buffer, rb_node);
		buffer_size = cbinder_buffer_size(alloc, buffer);
		/* Size, then address: best fit takes the lowest of equals. */
		if (size < buffer_size ||
		    (size == buffer_size && new->offset < buffer->offset))
			p = &parent->rb_left;
		else
			p = &parent->rb_right;
	}
	rb_link_node(&new->rb_node, parent, p);
	rb_insert_color(&new->rb_node, &alloc->free_buffers);
}

static void cbinder_insert_allocated_locked(struct cbinder_alloc *alloc,
					    struct cbinder_buffer *new)
{
	struct rb_node **p = &alloc->allocated_buffers.rb_node, *parent = NULL;

	lockdep_assert_held(&alloc->lock);
	while (*p) {
		struct cbinder_buffer *buffer;

		parent = *p;
		buffer = rb_entry(parent, struct cbinder_buffer, rb_node);
		if (new->offset < buffer->offset)
			p = &parent->rb_left;
		else
			p = &parent->rb_right;
	}
	rb_link_node(&new->rb_node, parent, p);
	rb_insert_color(&new->rb_node, &alloc->allocated_buffers);
}

static struct cbinder_buffer *
cbinder_best_fit_locked(struct cbinder_alloc *alloc, size_t size)
{
	struct rb_node *n = alloc->free_buffers.rb_node;
	struct cbinder_buffer *best = NULL;

	lockdep_assert_held(&alloc->lock);
	while (n) {
		struct cbinder_buffer *buffer;

		buffer = rb_entry(n, struct cbinder_buffer, rb_node);
		if (cbinder_buffer_size(alloc, buffer) >= size) {
			best = buffer;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return best;
}

/* Called inside the area's memcg (cask_memcg_begin()): charged there. */
static struct cbinder_lru_page *cbinder_page_new(struct cbinder_alloc *alloc,
						 pgoff_t index)
{
	struct cbinder_lru_page *lp;

	/*
	 * kmem_cache_alloc_lru() makes the memcg's list of cbinder_lru
	 * before the descriptor exists: list_lru_add_obj() files it under
	 * that memcg later and must find the list there.
	 */
	lp = kmem_cache_alloc_lru(cbinder_lru_page_cache, &cbinder_lru,
				  GFP_KERNEL);
	if (!lp)
		return NULL;
	lp->page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_HIGHMEM | __GFP_ZERO);
	if (!lp->page) {
		kmem_cache_free(cbinder_lru_page_cache, lp);
		return NULL;
	}
	INIT_LIST_HEAD(&lp->lru);
	lp->alloc = alloc;
	lp->index = index;
	lp->users = 0;
	return lp;
}

/* The vma of @mm at @addr if it is the mapping of this area. */
static struct vm_area_struct *cbinder_user_vma(struct cbinder_alloc *alloc,
					       struct mm_struct *mm,
					       unsigned long addr)
{
	struct vm_area_struct *vma;

	mmap_assert_locked(mm);
	vma = vma_lookup(mm, addr);
	/*
	 * Anything else there is not ours to unmap, and cannot hold our
	 * page: pages are only ever inserted at user_base + index, in our
	 * own vma, which the driver keeps from being moved.
	 */
	if (!vma || !alloc->vma_private ||
	    vma->vm_private_data != alloc->vma_private)
		return NULL;
	return vma;
}

/*
 * Unmap a page no buffer uses (already off the LRU) from @mm, if given,
 * and free it.  @mm is NULL when there is no mapping, or when the process
 * is exiting and no one can look at its page tables any more: the
 * mapping holds a page reference of its own (vm_insert_page()), so the
 * page stays until exit_mmap() unmaps it.
 */
static void cbinder_page_free_locked(struct cbinder_alloc *alloc,
				     struct mm_struct *mm,
				     struct cbinder_lru_page *lp)
{
	unsigned long addr = alloc->user_base + (lp->index << PAGE_SHIFT);
	struct vm_area_struct *vma;

	lockdep_assert_held(&alloc->lock);
	if (mm) {
		vma = cbinder_user_vma(alloc, mm, addr);
		if (vma)
			zap_page_range_single(vma, addr, PAGE_SIZE, NULL);
	}
	alloc->pages[lp->index] = NULL;
	alloc->pages_populated--;
	__free_page(lp->page);
	kmem_cache_free(cbinder_lru_page_cache, lp);
}

/*
 * Make every page of [@start, @end) populated and used by one more
 * buffer.  Missing pages are allocated first, on a list of their own, so
 * that a failure leaves the area exactly as it was.
 */
static int cbinder_pages_get_locked(struct cbinder_alloc *alloc,
				    size_t start, size_t end)
{
	pgoff_t first = start >> PAGE_SHIFT, last = (end - 1) >> PAGE_SHIFT;
	struct cbinder_lru_page *lp, *tmp;
	struct mem_cgroup *old;
	LIST_HEAD(fresh);
	pgoff_t i;

	lockdep_assert_held(&alloc->lock);
	old = cask_memcg_begin(alloc->memcg);
	for (i = first; i <= last; i++) {
		if (alloc->pages[i])
			continue;
		lp = cbinder_page_new(alloc, i);
		if (!lp)
			break;
		list_add_tail(&lp->lru, &fresh);
	}
	cask_memcg_end(alloc->memcg, old);

	if (i <= last) {
		list_for_each_entry_safe(lp, tmp, &fresh, lru) {
			__free_page(lp->page);
			kmem_cache_free(cbinder_lru_page_cache, lp);
		}
		return -ENOMEM;
	}

	list_for_each_entry_safe(lp, tmp, &fresh, lru) {
		list_del_init(&lp->lru);
		alloc->pages[lp->index] = lp;
		alloc->pages_populated++;
	}
	/* A page on the LRU stays there: see the top of this file. */
	for (i = first; i <= last; i++)
		alloc->pages[i]->users++;
	return 0;
}

/* One buffer fewer uses each page of [@start, @end): the unused go on the LRU. */
static void cbinder_pages_put_locked(struct cbinder_alloc *alloc,
				     size_t start, size_t end)
{
	pgoff_t first = start >> PAGE_SHIFT, last = (end - 1) >> PAGE_SHIFT;
	struct cbinder_lru_page *lp;
	pgoff_t i;

	lockdep_assert_held(&alloc->lock);
	for (i = first; i <= last; i++) {
		lp = alloc->pages[i];
		if (!--lp->users && list_empty(&lp->lru))
			list_lru_add_obj(&cbinder_lru, &lp->lru);
	}
}

/*
 * Runs under the LRU's node lock @lock, the wrong way round for every
 * other lock here: trylocks only.  A page in use again is only taken off
 * the LRU (its last user puts it back).  Unmapping may sleep, so a page to
 * free is isolated first and @lock dropped for the rest.  alloc->lock
 * stays held from before the page leaves pages[] until it is freed.
 * @cb_arg counts the pages freed.
 */
static enum lru_status cbinder_lru_isolate(struct list_head *item,
					   struct list_lru_one *list,
					   spinlock_t *lock, void *cb_arg)
	__must_hold(lock)
{
	struct cbinder_lru_page *lp = container_of(item, typeof(*lp), lru);
	/* lp is on the LRU, so release has not run: alloc is alive. */
	struct cbinder_alloc *alloc = lp->alloc;
	unsigned long *freed = cb_arg;
	struct mm_struct *mm;

	if (!mutex_trylock(&alloc->lock))
		return LRU_SKIP;
	if (lp->users) {
		list_lru_isolate(list, item);
		/* Safe under @lock for the reason given at the end. */
		mutex_unlock(&alloc->lock);
		return LRU_REMOVED;
	}
	mm = alloc->mm;
	if (mm && mmget_not_zero(mm)) {
		if (!mmap_read_trylock(mm)) {
			mmput_async(mm);
			mutex_unlock(&alloc->lock);
			return LRU_SKIP;
		}
	} else {
		mm = NULL;
	}

	list_lru_isolate(list, item);
	spin_unlock(lock);

	cbinder_page_free_locked(alloc, mm, lp);
	(*freed)++;
	if (mm) {
		mmap_read_unlock(mm);
		mmput_async(mm);
	}

	spin_lock(lock);
	/*
	 * Unlocked last and under @lock: release, waiting for the lock, may
	 * run as soon as it gets it, while mutex_unlock() may still touch
	 * the mutex. The owner frees alloc's memory only after an RCU grace
	 * period (cbinder_proc_free()), and a spinlock section is an RCU
	 * read-side section (also on PREEMPT_RT), so that touch is safe.
	 */
	mutex_unlock(&alloc->lock);
	return LRU_REMOVED_RETRY;
}

static unsigned long cbinder_shrink_count(struct shrinker *shrinker,
					  struct shrink_control *sc)
{
	unsigned long count = list_lru_shrink_count(&cbinder_lru, sc);

	/* SHRINK_EMPTY clears the memcg's bit; list_lru_add sets it again. */
	return count ?: SHRINK_EMPTY;
}

/**
 * cbinder_shrink_scan() - the shrinker's scan: free pages on the LRU
 * @shrinker: ours
 * @sc: which memcg and node, how many
 *
 * Context: reclaim; may sleep.
 * Return: the number of pages freed.
 */
VISIBLE_IF_KUNIT unsigned long cbinder_shrink_scan(struct shrinker *shrinker,
						   struct shrink_control *sc)
{
	unsigned long freed = 0;

	/* Not what the walk took off the LRU: pages in use are not freed. */
	list_lru_shrink_walk(&cbinder_lru, sc, cbinder_lru_isolate, &freed);
	return freed;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_shrink_scan);

/**
 * cbinder_alloc_global_init() - set up the page cache, LRU and shrinker
 *
 * Context: module init, process context.
 * Return: 0, or -ENOMEM.
 */
int cbinder_alloc_global_init(void)
{
	cbinder_lru_page_cache = KMEM_CACHE(cbinder_lru_page, SLAB_ACCOUNT);
	if (!cbinder_lru_page_cache)
		return -ENOMEM;

	/* Per-memcg lists, so that reclaim for a cell frees its own pages. */
	cbinder_shrinker = cask_memcg_shrinker_alloc(&cbinder_lru, "cask_binder",
						     cbinder_shrink_count,
						     cbinder_shrink_scan, NULL);
	if (!cbinder_shrinker) {
		kmem_cache_destroy(cbinder_lru_page_cache);
		return -ENOMEM;
	}
	shrinker_register(cbinder_shrinker);
	return 0;
}

/**
 * cbinder_alloc_global_exit() - undo cbinder_alloc_global_init()
 *
 * Every area must have been released: the LRU is empty.
 *
 * Context: module exit, process context.
 * Return: nothing.
 */
void cbinder_alloc_global_exit(void)
{
	/* Unregisters first: no scan is running or can start afterwards. */
	shrinker_free(cbinder_shrinker);
	list_lru_destroy(&cbinder_lru);
	kmem_cache_destroy(cbinder_lru_page_cache);
}

/**
 * cbinder_alloc_init() - initialise an area before mmap
 * @alloc: the area
 * @memcg: charged for everything the area allocates, or NULL for the
 *	current task's; the caller holds the reference for the area's life
 *
 * Context: process context; @alloc is not yet shared.
 * Return: nothing.
 */
void cbinder_alloc_init(struct cbinder_alloc *alloc, struct mem_cgroup *memcg)
{
	mutex_init(&alloc->lock);
	alloc->mm = NULL;
	alloc->user_base = 0;
	alloc->size = 0;
	alloc->pages = NULL;
	INIT_LIST_HEAD(&alloc->buffers);
	alloc->free_buffers = RB_ROOT;
	alloc->allocated_buffers = RB_ROOT;
	alloc->free_async_space = 0;
	alloc->allocated_bytes = 0;
	alloc->oneway_spam_detected = false;
	alloc->pages_populated = 0;
	alloc->mapped = false;
	alloc->memcg = memcg;
	alloc->vma_private = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_init);

static int cbinder_alloc_setup_locked(struct cbinder_alloc *alloc,
				      unsigned long user_base, size_t size)
{
	struct cbinder_lru_page **pages;
	struct cbinder_buffer *buffer;
	struct mem_cgroup *old;
	unsigned long end;

	lockdep_assert_held(&alloc->lock);
	/* Once only, even after the vma is gone: buffers may still live. */
	if (alloc->user_base)
		return -EBUSY;
	size = min(size, CBINDER_ALLOC_MAX_SIZE) & PAGE_MASK;
	if (!user_base || !PAGE_ALIGNED(user_base) || !size ||
	    check_add_overflow(user_base, size, &end))
		return -EINVAL;

	old = cask_memcg_begin(alloc->memcg);
	pages = kvcalloc(size >> PAGE_SHIFT, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	buffer = kzalloc(sizeof(*buffer), GFP_KERNEL_ACCOUNT);
	cask_memcg_end(alloc->memcg, old);
	if (!pages || !buffer) {
		kfree(buffer);
		kvfree(pages);
		return -ENOMEM;
	}

	alloc->user_base = user_base;
	alloc->size = size;
	alloc->pages = pages;
	buffer->free = 1;
	list_add(&buffer->entry, &alloc->buffers);
	cbinder_insert_free_locked(alloc, buffer);
	alloc->free_async_space = size / 2;
	alloc->mapped = true;
	return 0;
}

/**
 * cbinder_alloc_setup() - give an area its user address and size
 * @alloc: the area
 * @user_base: user address of the area, page aligned, not 0
 * @size: bytes; only the first %CBINDER_ALLOC_MAX_SIZE, in whole pages,
 *	are used
 *
 * cbinder_alloc_mmap() without a vma or mm: nothing is ever mapped into
 * user space.  For tests.
 *
 * Context: process context, takes alloc->lock.
 * Return: 0, -EBUSY if the area was set up before, -EINVAL for a bad
 * address or size, -ENOMEM.
 */
int cbinder_alloc_setup(struct cbinder_alloc *alloc, unsigned long user_base,
			size_t size)
{
	guard(mutex)(&alloc->lock);
	return cbinder_alloc_setup_locked(alloc, user_base, size);
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_setup);

/**
 * cbinder_alloc_mmap() - set up an area for a new mapping
 * @alloc: the area
 * @vma: the mapping; the driver sets its flags and operations
 *
 * Context: the driver's mmap, with the mmap lock held for writing; takes
 * alloc->lock.
 * Return: 0, -EBUSY if the area was mapped before (even if that vma is
 * gone), -EINVAL, -ENOMEM.
 */
int cbinder_alloc_mmap(struct cbinder_alloc *alloc, struct vm_area_struct *vma)
{
	int ret;

	mmap_assert_write_locked(vma->vm_mm);
	guard(mutex)(&alloc->lock);
	ret = cbinder_alloc_setup_locked(alloc, vma->vm_start,
					 vma->vm_end - vma->vm_start);
	if (ret)
		return ret;
	/* Only the mm_struct: the shrinker needs its mmap_lock, not its pages. */
	alloc->mm = vma->vm_mm;
	mmgrab(alloc->mm);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_mmap);

/**
 * cbinder_alloc_vma_close() - the area's vma is going away
 * @alloc: the area
 *
 * No buffer can be allocated afterwards; the existing ones can still be
 * used and freed.
 *
 * Context: the driver's vm_ops->close, process context; takes alloc->lock.
 * Return: nothing.
 */
void cbinder_alloc_vma_close(struct cbinder_alloc *alloc)
{
	guard(mutex)(&alloc->lock);
	alloc->mapped = false;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_vma_close);

/**
 * cbinder_alloc_fault() - map a page of the area into user space
 * @alloc: the area
 * @vmf: the fault, in the area's vma (VM_MIXEDMAP)
 *
 * Context: the driver's vm_ops->fault, mmap lock held; takes alloc->lock.
 * Return: %VM_FAULT_NOPAGE when the page is mapped, %VM_FAULT_SIGBUS when
 * it is not populated, %VM_FAULT_OOM.
 */
vm_fault_t cbinder_alloc_fault(struct cbinder_alloc *alloc,
			       struct vm_fault *vmf)
{
	unsigned long addr = vmf->address & PAGE_MASK;
	struct cbinder_lru_page *lp;
	int ret;

	if (WARN_ON_ONCE(!(vmf->vma->vm_flags & VM_MIXEDMAP)))
		return VM_FAULT_SIGBUS;

	/* Under the lock the shrinker frees under: lp->page stays ours. */
	guard(mutex)(&alloc->lock);
	if (!alloc->pages || addr < alloc->user_base ||
	    addr - alloc->user_base >= alloc->size)
		return VM_FAULT_SIGBUS;
	lp = alloc->pages[(addr - alloc->user_base) >> PAGE_SHIFT];
	if (!lp)
		return VM_FAULT_SIGBUS;
	/* Refcounted, unlike a PFN mapping: the page outlives any mistake. */
	ret = vm_insert_page(vmf->vma, addr, lp->page);
	/* -EBUSY: another thread of the process mapped it first. */
	if (!ret || ret == -EBUSY)
		return VM_FAULT_NOPAGE;
	return ret == -ENOMEM ? VM_FAULT_OOM : VM_FAULT_SIGBUS;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_fault);

/**
 * cbinder_alloc_release() - free everything of an area
 * @alloc: the area; no vma maps it any more and no buffer is in use
 *
 * Frees every buffer descriptor and page and drops the mm.  @alloc can be
 * freed afterwards; it cannot be mapped again.
 *
 * Context: process context; takes alloc->lock.
 * Return: nothing.
 */
void cbinder_alloc_release(struct cbinder_alloc *alloc)
{
	struct cbinder_buffer *buffer, *tmp;
	struct cbinder_lru_page *lp;
	struct mm_struct *mm;
	pgoff_t i;

	mutex_lock(&alloc->lock);
	list_for_each_entry_safe(buffer, tmp, &alloc->buffers, entry) {
		list_del(&buffer->entry);
		kfree(buffer);
	}
	alloc->free_buffers = RB_ROOT;
	alloc->allocated_buffers = RB_ROOT;

	for (i = 0; alloc->pages && i < alloc->size >> PAGE_SHIFT; i++) {
		lp = alloc->pages[i];
		if (!lp)
			continue;
		if (!list_empty(&lp->lru))
			list_lru_del_obj(&cbinder_lru, &lp->lru);
		/* No vma is left to unmap from. */
		cbinder_page_free_locked(alloc, NULL, lp);
	}
	kvfree(alloc->pages);
	alloc->pages = NULL;
	alloc->size = 0;
	alloc->free_async_space = 0;
	alloc->allocated_bytes = 0;
	alloc->mapped = false;
	mm = alloc->mm;
	alloc->mm = NULL;
	mutex_unlock(&alloc->lock);

	if (mm)
		mmdrop(mm);
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_release);

/**
 * cbinder_alloc_buffer_bytes() - the bytes a buffer of these sizes takes
 * @data_size: bytes of data
 * @offsets_size: bytes of the offsets array
 * @extra_size: bytes of scatter-gather buffers and security context
 * @size: where the result goes
 *
 * What cbinder_alloc_new_buf() takes from the area and adds to
 * allocated_bytes: the driver charges its limit with the same number
 * before allocating, and returns it when the buffer goes.
 *
 * Context: any.
 * Return: true, or false if the sizes overflow (cbinder_alloc_new_buf()
 * then fails with -EINVAL).
 */
bool cbinder_alloc_buffer_bytes(size_t data_size, size_t offsets_size,
				size_t extra_size, size_t *size)
{
	if (!cbinder_content_size(data_size, offsets_size, extra_size, size))
		return false;
	/* Every buffer has an address of its own. */
	*size = max(*size, sizeof(void *));
	return true;
}

/**
 * cbinder_alloc_low_async_space_locked() - is @pid hoarding the async space
 * @alloc: the area, a one-way buffer of @pid just allocated in it
 * @pid: the sender's thread group
 *
 * The kernel's binder's rule (debug_low_async_space_locked()), so that
 * libbinder's spam detection fires at the same point: once less than a
 * tenth of the area (a fifth of the async half) is left for one-way
 * buffers, a sender holding more than 50 of them, or more than a quarter
 * of the area, is suspect. It is told once; the next report waits until
 * the space has recovered above the tenth. Walking the allocated buffers
 * costs nothing until the space is low, and then is bounded by the area.
 *
 * Context: alloc->lock held.
 * Return: true if the sender is to be told now.
 */
VISIBLE_IF_KUNIT bool cbinder_alloc_low_async_space_locked(struct cbinder_alloc *alloc,
							   pid_t pid)
{
	struct cbinder_buffer *buffer;
	size_t total = 0, num = 0;
	struct rb_node *n;

	lockdep_assert_held(&alloc->lock);
	if (alloc->free_async_space >= alloc->size / 10) {
		alloc->oneway_spam_detected = false;
		return false;
	}
	for (n = rb_first(&alloc->allocated_buffers); n; n = rb_next(n)) {
		buffer = rb_entry(n, struct cbinder_buffer, rb_node);
		if (buffer->pid != pid || !buffer->async)
			continue;
		total += cbinder_buffer_size(alloc, buffer);
		num++;
	}
	if (num <= 50 && total <= alloc->size / 4)
		return false;
	if (alloc->oneway_spam_detected)
		return false;
	alloc->oneway_spam_detected = true;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_low_async_space_locked);

/**
 * cbinder_alloc_new_buf() - allocate a buffer
 * @alloc: the area
 * @data_size: bytes of data
 * @offsets_size: bytes of the offsets array
 * @extra_size: bytes of scatter-gather buffers and security context
 * @is_async: for a one-way transaction: counted against the async space
 *
 * The buffer is the smallest free hole that fits (the lowest of equals)
 * and takes ALIGN(@data_size, 8) + ALIGN(@offsets_size, 8) +
 * ALIGN(@extra_size, 8) bytes, at least sizeof(void *) so that every
 * buffer has an address of its own.  Its pages are populated.  A one-way
 * buffer is marked oneway_spam_suspect when its sender is to be told that
 * it hoards the async space (cbinder_alloc_low_async_space_locked()).
 *
 * Context: process context; takes alloc->lock, allocates.
 * Return: the buffer, not yet freeable by user space, or ERR_PTR()
 * -EINVAL (the sizes overflow), -ESRCH (the area is not mapped),
 * -ENOSPC (no hole, or no async space), -ENOMEM.
 */
struct cbinder_buffer *cbinder_alloc_new_buf(struct cbinder_alloc *alloc,
					     size_t data_size,
					     size_t offsets_size,
					     size_t extra_size, bool is_async)
{
	struct cbinder_buffer *buffer, *rest;
	size_t size, buffer_size;
	int ret;

	if (!cbinder_alloc_buffer_bytes(data_size, offsets_size, extra_size,
					&size))
		return ERR_PTR(-EINVAL);

	/* The remainder's descriptor, allocated before the lock is taken. */
	rest = cask_memcg_kzalloc(alloc->memcg, sizeof(*rest),
				  GFP_KERNEL_ACCOUNT);
	if (!rest)
		return ERR_PTR(-ENOMEM);

	mutex_lock(&alloc->lock);
	if (!alloc->mapped) {
		buffer = ERR_PTR(-ESRCH);
		goto out_unlock;
	}
	if (is_async && size > alloc->free_async_space) {
		buffer = ERR_PTR(-ENOSPC);
		goto out_unlock;
	}
	buffer = cbinder_best_fit_locked(alloc, size);
	if (!buffer) {
		buffer = ERR_PTR(-ENOSPC);
		goto out_unlock;
	}
	ret = cbinder_pages_get_locked(alloc, buffer->offset,
				       buffer->offset + size);
	if (ret) {
		buffer = ERR_PTR(ret);
		goto out_unlock;
	}

	buffer_size = cbinder_buffer_size(alloc, buffer);
	rb_erase(&buffer->rb_node, &alloc->free_buffers);
	if (buffer_size > size) {
		rest->offset = buffer->offset + size;
		rest->free = 1;
		list_add(&rest->entry, &buffer->entry);
		cbinder_insert_free_locked(alloc, rest);
		rest = NULL;
	}
	buffer->free = 0;
	buffer->allow_user_free = 0;
	buffer->async = is_async;
	buffer->clear_on_free = 0;
	buffer->oneway_spam_suspect = 0;
	buffer->pid = current->tgid;
	buffer->data_size = data_size;
	buffer->offsets_size = offsets_size;
	buffer->extra_size = extra_size;
	buffer->transaction = NULL;
	buffer->target_node = NULL;
	cbinder_insert_allocated_locked(alloc, buffer);
	alloc->allocated_bytes += size;
	if (is_async) {
		alloc->free_async_space -= size;
		buffer->oneway_spam_suspect =
			cbinder_alloc_low_async_space_locked(alloc,
							     buffer->pid);
	}

out_unlock:
	mutex_unlock(&alloc->lock);
	kfree(rest);
	return buffer;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_new_buf);

static void cbinder_clear_locked(struct cbinder_alloc *alloc, size_t offset,
				 size_t bytes)
{
	lockdep_assert_held(&alloc->lock);
	while (bytes) {
		size_t pgoff = offset & ~PAGE_MASK;
		size_t len = min(bytes, PAGE_SIZE - pgoff);

		memzero_page(alloc->pages[offset >> PAGE_SHIFT]->page, pgoff,
			     len);
		offset += len;
		bytes -= len;
	}
}

/**
 * cbinder_alloc_free_buf() - free a buffer
 * @alloc: the area
 * @buffer: an allocated buffer of @alloc
 *
 * Merges it with its free neighbours; pages no allocated buffer uses any
 * more go onto the LRU.  Works after the vma is closed.
 *
 * Context: process context; takes alloc->lock.
 * Return: nothing.
 */
void cbinder_alloc_free_buf(struct cbinder_alloc *alloc,
			    struct cbinder_buffer *buffer)
{
	struct cbinder_buffer *prev, *next;
	size_t size;

	guard(mutex)(&alloc->lock);
	if (WARN_ON_ONCE(buffer->free))
		return;
	size = cbinder_buffer_size(alloc, buffer);
	if (buffer->clear_on_free)
		cbinder_clear_locked(alloc, buffer->offset, size);
	if (buffer->async)
		alloc->free_async_space += size;
	alloc->allocated_bytes -= size;
	cbinder_pages_put_locked(alloc, buffer->offset, buffer->offset + size);

	rb_erase(&buffer->rb_node, &alloc->allocated_buffers);
	buffer->free = 1;
	buffer->allow_user_free = 0;
	buffer->async = 0;
	buffer->clear_on_free = 0;

	next = cbinder_buffer_next(alloc, buffer);
	if (next && next->free) {
		rb_erase(&next->rb_node, &alloc->free_buffers);
		list_del(&next->entry);
		kfree(next);
	}
	prev = cbinder_buffer_prev(alloc, buffer);
	if (prev && prev->free) {
		/* prev grows: out of the size-ordered tree first. */
		rb_erase(&prev->rb_node, &alloc->free_buffers);
		list_del(&buffer->entry);
		kfree(buffer);
		buffer = prev;
	}
	cbinder_insert_free_locked(alloc, buffer);
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_free_buf);

/**
 * cbinder_alloc_allow_user_free() - let user space free a buffer
 * @alloc: the area
 * @buffer: an allocated buffer of @alloc, now delivered
 *
 * allow_user_free shares a word with bits that alloc->lock protects, so
 * it is set under that lock too.
 *
 * Context: process context; takes alloc->lock.
 * Return: nothing.
 */
void cbinder_alloc_allow_user_free(struct cbinder_alloc *alloc,
				   struct cbinder_buffer *buffer)
{
	guard(mutex)(&alloc->lock);
	buffer->allow_user_free = 1;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_allow_user_free);

/**
 * cbinder_alloc_clear_on_free() - zero a buffer's contents when it is freed
 * @alloc: the area
 * @buffer: an allocated buffer (TF_CLEAR_BUF)
 *
 * Under alloc->lock, as for cbinder_alloc_allow_user_free(): the bit
 * shares a word with others the lock protects.
 *
 * Context: process context, no locks held.
 */
void cbinder_alloc_clear_on_free(struct cbinder_alloc *alloc,
				 struct cbinder_buffer *buffer)
{
	guard(mutex)(&alloc->lock);
	buffer->clear_on_free = 1;
}

/**
 * cbinder_alloc_prepare_to_free() - find the buffer user space frees
 * @alloc: the area
 * @user_ptr: the user address BC_FREE_BUFFER gave
 *
 * The buffer must start at @user_ptr and be freeable by user space.
 * Clears allow_user_free, so a second BC_FREE_BUFFER of the same pointer,
 * racing with the free, finds nothing to free (CVE-2019-2025).
 *
 * Context: process context; takes alloc->lock.
 * Return: the buffer, for cbinder_alloc_free_buf(), or ERR_PTR() -ENOENT
 * (no allocated buffer starts there), -EPERM (not freeable yet, or
 * already being freed).
 */
struct cbinder_buffer *
cbinder_alloc_prepare_to_free(struct cbinder_alloc *alloc,
			      unsigned long user_ptr)
{
	struct rb_node *n;
	size_t offset;

	guard(mutex)(&alloc->lock);
	if (!alloc->user_base || user_ptr < alloc->user_base)
		return ERR_PTR(-ENOENT);
	offset = user_ptr - alloc->user_base;
	n = alloc->allocated_buffers.rb_node;
	while (n) {
		struct cbinder_buffer *buffer;

		buffer = rb_entry(n, struct cbinder_buffer, rb_node);
		if (offset < buffer->offset) {
			n = n->rb_left;
		} else if (offset > buffer->offset) {
			n = n->rb_right;
		} else {
			if (!buffer->allow_user_free)
				return ERR_PTR(-EPERM);
			buffer->allow_user_free = 0;
			return buffer;
		}
	}
	return ERR_PTR(-ENOENT);
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_prepare_to_free);

/**
 * cbinder_buffer_size() - bytes a buffer spans
 * @alloc: the area
 * @buffer: a buffer of @alloc
 *
 * From its start to the next buffer's, or to the end of the area.
 *
 * Context: alloc->lock held, or @buffer allocated and owned by the
 * caller: then its neighbour's start cannot move.
 * Return: the size in bytes.
 */
size_t cbinder_buffer_size(struct cbinder_alloc *alloc,
			   struct cbinder_buffer *buffer)
{
	struct cbinder_buffer *next = cbinder_buffer_next(alloc, buffer);

	return (next ? next->offset : alloc->size) - buffer->offset;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_buffer_size);

/**
 * cbinder_buffer_user() - the user address of a buffer
 * @alloc: the area
 * @buffer: a buffer of @alloc
 *
 * Context: any.
 * Return: the address of its first byte in the process's mapping.
 */
unsigned long cbinder_buffer_user(struct cbinder_alloc *alloc,
				  struct cbinder_buffer *buffer)
{
	return alloc->user_base + buffer->offset;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_buffer_user);

/*
 * No alloc->lock: the caller owns @buffer, allocated, so its pages have
 * users and neither the shrinker nor a free can take them.
 */
static int cbinder_buffer_check(struct cbinder_buffer *buffer, size_t offset,
				size_t bytes)
{
	size_t end, limit;

	if (WARN_ON_ONCE(buffer->free))
		return -EINVAL;
	if (!cbinder_content_size(buffer->data_size, buffer->offsets_size,
				  buffer->extra_size, &limit) ||
	    check_add_overflow(offset, bytes, &end) || end > limit)
		return -EINVAL;
	return 0;
}

static struct page *cbinder_buffer_page(struct cbinder_alloc *alloc,
					struct cbinder_buffer *buffer,
					size_t offset, size_t *pgoff)
{
	size_t pos = buffer->offset + offset;

	*pgoff = pos & ~PAGE_MASK;
	return alloc->pages[pos >> PAGE_SHIFT]->page;
}

/**
 * cbinder_alloc_copy_from_user() - copy user memory into a buffer
 * @alloc: the area
 * @buffer: an allocated buffer of @alloc, owned by the caller
 * @offset: where in the buffer
 * @from: user source
 * @bytes: how many
 *
 * Context: process context, may fault; does not take alloc->lock (the
 * pages of an allocated buffer stay put).
 * Return: 0, -EINVAL if the range is outside the buffer's contents,
 * -EFAULT.
 */
int cbinder_alloc_copy_from_user(struct cbinder_alloc *alloc,
				 struct cbinder_buffer *buffer,
				 size_t offset, const void __user *from,
				 size_t bytes)
{
	int ret = cbinder_buffer_check(buffer, offset, bytes);

	if (ret)
		return ret;
	while (bytes) {
		size_t pgoff, len;
		struct page *page;
		unsigned long left;
		void *kaddr;

		page = cbinder_buffer_page(alloc, buffer, offset, &pgoff);
		len = min(bytes, PAGE_SIZE - pgoff);
		kaddr = kmap_local_page(page);
		left = copy_from_user(kaddr + pgoff, from, len);
		kunmap_local(kaddr);
		if (left)
			return -EFAULT;
		from += len;
		offset += len;
		bytes -= len;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_copy_from_user);

static int cbinder_buffer_copy(struct cbinder_alloc *alloc,
			       struct cbinder_buffer *buffer, size_t offset,
			       void *ptr, size_t bytes, bool to_buffer)
{
	int ret = cbinder_buffer_check(buffer, offset, bytes);

	if (ret)
		return ret;
	while (bytes) {
		size_t pgoff, len;
		struct page *page;

		page = cbinder_buffer_page(alloc, buffer, offset, &pgoff);
		len = min(bytes, PAGE_SIZE - pgoff);
		if (to_buffer)
			memcpy_to_page(page, pgoff, ptr, len);
		else
			memcpy_from_page(ptr, page, pgoff, len);
		ptr += len;
		offset += len;
		bytes -= len;
	}
	return 0;
}

/**
 * cbinder_alloc_copy_to_buffer() - copy kernel memory into a buffer
 * @alloc: the area
 * @buffer: an allocated buffer of @alloc, owned by the caller
 * @offset: where in the buffer
 * @from: source
 * @bytes: how many
 *
 * Context: any that may map a page; no alloc->lock (see
 * cbinder_alloc_copy_from_user()).
 * Return: 0, or -EINVAL if the range is outside the buffer's contents.
 */
int cbinder_alloc_copy_to_buffer(struct cbinder_alloc *alloc,
				 struct cbinder_buffer *buffer,
				 size_t offset, const void *from,
				 size_t bytes)
{
	return cbinder_buffer_copy(alloc, buffer, offset, (void *)from, bytes,
				   true);
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_copy_to_buffer);

/**
 * cbinder_alloc_copy_from_buffer() - copy from a buffer to kernel memory
 * @alloc: the area
 * @to: destination
 * @buffer: an allocated buffer of @alloc, owned by the caller
 * @offset: where in the buffer
 * @bytes: how many
 *
 * Context: any that may map a page; no alloc->lock (see
 * cbinder_alloc_copy_from_user()).
 * Return: 0, or -EINVAL if the range is outside the buffer's contents.
 */
int cbinder_alloc_copy_from_buffer(struct cbinder_alloc *alloc, void *to,
				   struct cbinder_buffer *buffer,
				   size_t offset, size_t bytes)
{
	return cbinder_buffer_copy(alloc, buffer, offset, to, bytes, false);
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_copy_from_buffer);

/**
 * cbinder_alloc_shrink() - free every page of an area no buffer uses
 * @alloc: the area
 *
 * What the shrinker would do to this area's pages on the LRU, without
 * trylocks; unmaps them from user space first.
 *
 * Context: process context; takes the mmap lock of alloc->mm, then
 * alloc->lock.
 * Return: the number of pages freed.
 */
unsigned long cbinder_alloc_shrink(struct cbinder_alloc *alloc)
{
	struct cbinder_lru_page *lp;
	unsigned long freed = 0;
	struct mm_struct *mm;
	pgoff_t i;

	/* alloc->mm only changes at mmap and release, not during this. */
	scoped_guard(mutex, &alloc->lock) {
		mm = alloc->mm;
		if (mm && !mmget_not_zero(mm))
			mm = NULL;
	}
	if (mm)
		mmap_read_lock(mm);

	mutex_lock(&alloc->lock);
	for (i = 0; alloc->pages && i < alloc->size >> PAGE_SHIFT; i++) {
		lp = alloc->pages[i];
		if (!lp || lp->users)
			continue;
		list_lru_del_obj(&cbinder_lru, &lp->lru);
		cbinder_page_free_locked(alloc, mm, lp);
		freed++;
	}
	mutex_unlock(&alloc->lock);

	if (mm) {
		mmap_read_unlock(mm);
		mmput(mm);
	}
	return freed;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_alloc_shrink);
