/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask_binder's allocator for a process's receive area: the read-only
 * mapping user space makes of /dev/binder, into which the driver copies
 * every transaction the process receives.
 *
 * Buffers are carved from the area best fit, split on allocation and
 * merged with free neighbours on release.  Their descriptors live in
 * kernel memory, never in the area.  Pages are allocated when a buffer
 * first needs them, charged to the owning process's memory cgroup, and
 * mapped into user space by the fault handler; a page that no allocated
 * buffer covers any more stays populated (the next buffer reuses it) on a
 * memcg-aware LRU until the shrinker takes it back.
 */
#ifndef _CASK_BINDER_ALLOC_H
#define _CASK_BINDER_ALLOC_H

#include <linux/list.h>
#include <linux/list_lru.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/types.h>
#include <cask/memcg.h>

struct mem_cgroup;
struct vm_area_struct;
struct vm_fault;
struct cbinder_transaction;
struct cbinder_node;

/* The most of a mapping that is used, as the kernel's binder does. */
#define CBINDER_ALLOC_MAX_SIZE	(4UL * 1024 * 1024)

/**
 * struct cbinder_buffer - one buffer of a receive area
 * @entry: in cbinder_alloc.buffers, address order
 * @rb_node: in cbinder_alloc.free_buffers (by size) while free, else in
 *	cbinder_alloc.allocated_buffers (by address)
 * @offset: start, in bytes from the start of the area
 * @free: on the free tree
 * @allow_user_free: BC_FREE_BUFFER may free it (set once delivered)
 * @async: counted against the async space
 * @clear_on_free: zero the contents when freed (TF_CLEAR_BUF)
 * @oneway_spam_suspect: its allocation found its sender hoarding the async
 *	space (cbinder_alloc_low_async_space_locked())
 * @data_size: bytes of data
 * @offsets_size: bytes of the offsets array, after the data
 * @extra_size: bytes of scatter-gather buffers and security context,
 *	after the offsets
 * @transaction: the transaction being delivered in it, or NULL
 * @target_node: node it was sent to, for async queue release, or NULL
 * @debug_id: shown in debugfs
 * @pid: thread group (global) of the task that allocated it, the sender
 *
 * All fields are protected by cbinder_alloc.lock except @transaction and
 * @target_node, which belong to the driver's per-context lock.
 */
struct cbinder_buffer {
	struct list_head entry;
	struct rb_node rb_node;
	size_t offset;
	unsigned int free:1;
	unsigned int allow_user_free:1;
	unsigned int async:1;
	unsigned int clear_on_free:1;
	unsigned int oneway_spam_suspect:1;
	pid_t pid;
	size_t data_size;
	size_t offsets_size;
	size_t extra_size;
	struct cbinder_transaction *transaction;
	struct cbinder_node *target_node;
	int debug_id;
};

/**
 * struct cbinder_lru_page - a populated page of a receive area
 * @lru: on cbinder_lru whenever no allocated buffer covers the page, and
 *	possibly while one does, until the shrinker meets it (changed only
 *	under cbinder_alloc.lock)
 * @alloc: owner
 * @page: the page
 * @index: page index in the area
 * @users: allocated buffers with a byte in the page; when 0 the page is
 *	on @lru (protected by cbinder_alloc.lock)
 *
 * Allocated from an accounted cache with kmem_cache_alloc_lru() inside the
 * owner's memcg, so that list_lru_add_obj() files it under that memcg and
 * the memcg-aware shrinker finds it when that cgroup is under pressure.
 */
struct cbinder_lru_page {
	struct list_head lru;
	struct cbinder_alloc *alloc;
	struct page *page;
	pgoff_t index;
	unsigned int users;
};

/**
 * struct cbinder_alloc - the receive area of one binder process
 * @lock: protects every field below and the buffers' allocator fields
 * @mm: mm of the process that mapped the area (mmgrab'ed), or NULL
 * @user_base: user address of the area, 0 before mmap
 * @size: bytes used, a page multiple, at most CBINDER_ALLOC_MAX_SIZE
 * @pages: @size / PAGE_SIZE slots, NULL where not populated
 * @buffers: every buffer, free or not, address order
 * @free_buffers: free buffers by size (then address)
 * @allocated_buffers: allocated buffers by offset
 * @free_async_space: bytes left for one-way buffers (half the area at
 *	first)
 * @allocated_bytes: sum of the allocated buffers' sizes
 * @oneway_spam_detected: a sender was reported hoarding the async space,
 *	and the space has not recovered since
 * @pages_populated: how many @pages are non-NULL
 * @mapped: the vma exists (cleared by close)
 * @memcg: charged for pages and descriptors (reference held by the caller)
 * @vma_private: what the driver stores in its vma's vm_private_data; the
 *	shrinker unmaps pages only from a vma that carries it.  Set by the
 *	driver after cbinder_alloc_init() and before cbinder_alloc_mmap().
 */
struct cbinder_alloc {
	struct mutex lock;	/* lock order: top of alloc.c */
	struct mm_struct *mm;
	unsigned long user_base;
	size_t size;
	struct cbinder_lru_page **pages;
	struct list_head buffers;
	struct rb_root free_buffers;
	struct rb_root allocated_buffers;
	size_t free_async_space;
	size_t allocated_bytes;
	bool oneway_spam_detected;
	size_t pages_populated;
	bool mapped;
	struct mem_cgroup *memcg;
	void *vma_private;
};

int cbinder_alloc_global_init(void);
void cbinder_alloc_global_exit(void);

void cbinder_alloc_init(struct cbinder_alloc *alloc, struct mem_cgroup *memcg);
int cbinder_alloc_mmap(struct cbinder_alloc *alloc, struct vm_area_struct *vma);
int cbinder_alloc_setup(struct cbinder_alloc *alloc, unsigned long user_base,
			size_t size);
void cbinder_alloc_vma_close(struct cbinder_alloc *alloc);
vm_fault_t cbinder_alloc_fault(struct cbinder_alloc *alloc,
			       struct vm_fault *vmf);
void cbinder_alloc_release(struct cbinder_alloc *alloc);

bool cbinder_alloc_buffer_bytes(size_t data_size, size_t offsets_size,
				size_t extra_size, size_t *size);
struct cbinder_buffer *cbinder_alloc_new_buf(struct cbinder_alloc *alloc,
					     size_t data_size,
					     size_t offsets_size,
					     size_t extra_size, bool is_async);
void cbinder_alloc_free_buf(struct cbinder_alloc *alloc,
			    struct cbinder_buffer *buffer);
void cbinder_alloc_clear_on_free(struct cbinder_alloc *alloc,
				 struct cbinder_buffer *buffer);
void cbinder_alloc_allow_user_free(struct cbinder_alloc *alloc,
				   struct cbinder_buffer *buffer);
struct cbinder_buffer *
cbinder_alloc_prepare_to_free(struct cbinder_alloc *alloc,
			      unsigned long user_ptr);
size_t cbinder_buffer_size(struct cbinder_alloc *alloc,
			   struct cbinder_buffer *buffer);
unsigned long cbinder_buffer_user(struct cbinder_alloc *alloc,
				  struct cbinder_buffer *buffer);

int cbinder_alloc_copy_from_user(struct cbinder_alloc *alloc,
				 struct cbinder_buffer *buffer,
				 size_t offset, const void __user *from,
				 size_t bytes);
int cbinder_alloc_copy_to_buffer(struct cbinder_alloc *alloc,
				 struct cbinder_buffer *buffer,
				 size_t offset, const void *from,
				 size_t bytes);
int cbinder_alloc_copy_from_buffer(struct cbinder_alloc *alloc, void *to,
				   struct cbinder_buffer *buffer,
				   size_t offset, size_t bytes);

unsigned long cbinder_alloc_shrink(struct cbinder_alloc *alloc);

#if IS_ENABLED(CONFIG_KUNIT)
bool cbinder_alloc_low_async_space_locked(struct cbinder_alloc *alloc,
					  pid_t pid);
struct shrinker;
struct shrink_control;
unsigned long cbinder_shrink_scan(struct shrinker *shrinker,
				  struct shrink_control *sc);
#endif /* CONFIG_KUNIT */

#endif /* _CASK_BINDER_ALLOC_H */
