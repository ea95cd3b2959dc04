// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder transactions: choosing the target, copying the data into the
 * target's receive area, translating the objects in it, queueing, replies,
 * failures and the release of buffers.
 *
 * The receiver has its area mapped (read-only) while a transaction is
 * copied into it, so nothing untranslated may ever be written there: the
 * sender's binder pointers and cookies would tell it the sender's address
 * layout, its handles and fd numbers what the sender holds. The offsets
 * are copied in first (they are not secret, and only the kernel reads
 * them back). Each object is then read once from the sender into kernel
 * memory, checked, translated and only then written to the buffer; the
 * bytes between objects are copied straight from the sender. Scatter-
 * gather buffers are copied last, once every fix-up into them is known,
 * with the fix-ups' ranges written by the kernel instead of copied: a
 * parent's pointer to its child gets the child's address in the receiver,
 * an FD array zeros until the receiver's fds are written into it.
 *
 * Nothing is read back from the sender after it was checked (no double
 * fetch): later objects that need an earlier one (a parent) read its
 * translated copy from the buffer, or the sender address kept in kernel
 * memory. Objects are translated in order; when one fails, exactly those
 * before it are undone (never "all" for none: the CVE-2023-21255 class).
 */
#include <linux/cred.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/list_sort.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <kunit/visibility.h>
#include <cask/cell.h>

#include "binder.h"

static size_t cbinder_object_size(u32 type)
{
	switch (type) {
	case BINDER_TYPE_BINDER:
	case BINDER_TYPE_WEAK_BINDER:
	case BINDER_TYPE_HANDLE:
	case BINDER_TYPE_WEAK_HANDLE:
		return sizeof(struct flat_binder_object);
	case BINDER_TYPE_FD:
		return sizeof(struct binder_fd_object);
	case BINDER_TYPE_PTR:
		return sizeof(struct binder_buffer_object);
	case BINDER_TYPE_FDA:
		return sizeof(struct binder_fd_array_object);
	}
	return 0;
}

union cbinder_object {
	struct binder_object_header hdr;
	struct flat_binder_object fbo;
	struct binder_fd_object fdo;
	struct binder_buffer_object bbo;
	struct binder_fd_array_object fdao;
};

/**
 * cbinder_object_check() - is an object at this offset acceptable
 * @data_size: bytes of data in the buffer
 * @offset: the object's offset
 * @type: its type, read at @offset
 * @off_min: where the previous object ended
 *
 * Objects are u32-aligned, of a known type, wholly inside the data and
 * in increasing order without overlap.
 *
 * Context: any.
 * Return: the object's size, or 0 if it is not acceptable.
 */
VISIBLE_IF_KUNIT size_t cbinder_object_check(size_t data_size, u64 offset,
					     u32 type, u64 off_min)
{
	size_t size = cbinder_object_size(type);

	if (!size || offset < off_min || !IS_ALIGNED(offset, sizeof(u32)) ||
	    offset > data_size || size > data_size - offset)
		return 0;
	return size;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_object_check);

/* Read and check the object at @offset; returns its size or 0. */
static size_t cbinder_get_object(struct cbinder_alloc *alloc,
				 struct cbinder_buffer *buffer, u64 offset,
				 u64 off_min, union cbinder_object *obj)
{
	size_t size;

	if (offset > buffer->data_size ||
	    buffer->data_size - offset < sizeof(obj->hdr) ||
	    cbinder_alloc_copy_from_buffer(alloc, &obj->hdr, buffer, offset,
					   sizeof(obj->hdr)))
		return 0;
	size = cbinder_object_check(buffer->data_size, offset, obj->hdr.type,
				    off_min);
	if (!size || cbinder_alloc_copy_from_buffer(alloc, obj, buffer, offset,
						    size))
		return 0;
	return size;
}

/*
 * The PTR object a PTR or FDA names as its parent: one of the @num_valid
 * objects translated before it. @num_valid counts objects (offsets / 8),
 * never bytes (the CVE-2020-0041 class).
 */
VISIBLE_IF_KUNIT bool cbinder_validate_ptr(struct cbinder_alloc *alloc,
					   struct cbinder_buffer *buffer,
					   u64 index, size_t off_start,
					   size_t num_valid,
					   struct binder_buffer_object *parent,
					   u64 *parent_offset)
{
	union cbinder_object obj;
	u64 offset;

	if (index >= num_valid)
		return false;
	if (cbinder_alloc_copy_from_buffer(alloc, &offset, buffer,
					   off_start + index * sizeof(u64),
					   sizeof(offset)))
		return false;
	if (!cbinder_get_object(alloc, buffer, offset, 0, &obj) ||
	    obj.hdr.type != BINDER_TYPE_PTR)
		return false;
	*parent = obj.bbo;
	*parent_offset = offset;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_validate_ptr);

/*
 * Fix-ups must go into the last PTR object or one of its ancestors, in
 * increasing order of offset within a buffer, so that an earlier fix-up is
 * never overwritten by a later copy. @last_obj is the object last fixed up
 * (or copied), @last_min the smallest offset still allowed within it.
 */
VISIBLE_IF_KUNIT bool cbinder_validate_fixup(struct cbinder_alloc *alloc,
					     struct cbinder_buffer *buffer,
					     size_t off_start, u64 parent_obj,
					     u64 fixup_offset, u64 last_obj,
					     u64 last_min)
{
	union cbinder_object obj;
	u64 offset = last_obj;
	int depth = 0;

	/*
	 * Offset 0 means "nothing copied yet", as in the kernel's binder, so
	 * a parent at data offset 0 takes no fix-ups there either. User
	 * space is written against that; we keep it.
	 */
	if (!last_obj)
		return false;
	while (offset != parent_obj) {
		if (!cbinder_get_object(alloc, buffer, offset, 0, &obj) ||
		    obj.hdr.type != BINDER_TYPE_PTR ||
		    !(obj.bbo.flags & BINDER_BUFFER_FLAG_HAS_PARENT))
			return false;
		last_min = obj.bbo.parent_offset + sizeof(binder_uintptr_t);
		if (cbinder_alloc_copy_from_buffer(alloc, &offset, buffer,
						   off_start +
						   obj.bbo.parent * sizeof(u64),
						   sizeof(offset)))
			return false;
		/* Parents precede children: a chain is at most that long. */
		if (++depth > buffer->offsets_size / sizeof(u64))
			return false;
	}
	return fixup_offset >= last_min;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_validate_fixup);

/*
 * A scatter-gather buffer to copy from the sender once all objects are
 * translated: @len bytes from @from to @offset in the buffer, around its
 * @fixups (struct cbinder_sg_fixup, in the order they were made: by
 * offset, as cbinder_validate_fixup() makes a parent's come; unless
 * @fixups_unsorted).
 */
struct cbinder_sg_copy {
	struct list_head entry;
	size_t offset;
	const void __user *from;
	size_t len;
	struct list_head fixups;
	bool fixups_unsorted;
};

/*
 * One transaction being built: @udata is the sender's data, @sg_copies
 * (by offset, as they are made, each with its fix-ups) what
 * cbinder_copy_sg() copies and writes at the end. @copy_of gives each
 * object, by index, its copy (PTR objects with a length), so that a child
 * finds its parent's without a search; NULL until the first PTR.
 */
struct cbinder_txn_ctx {
	struct cbinder_proc *proc;
	struct cbinder_thread *thread;
	struct cbinder_proc *target_proc;
	struct cbinder_transaction *t;
	struct cbinder_transaction *in_reply_to;
	struct cbinder_buffer *buffer;
	const void __user *udata;
	unsigned long user_base;
	size_t off_start;
	size_t sg_offset;
	size_t sg_end;
	u64 last_fixup_obj;
	u64 last_fixup_min;
	struct list_head sg_copies;
	struct cbinder_sg_copy **copy_of;
};

/*
 * Read the object at @offset of the sender's data into @obj and check it.
 * One read of at most an object's size: its type and contents are what
 * was checked.
 */
static int cbinder_read_object(struct cbinder_txn_ctx *tc, u64 offset,
			       u64 off_min, union cbinder_object *obj,
			       size_t *size)
{
	size_t data_size = tc->buffer->data_size, len;

	if (offset > data_size || data_size - offset < sizeof(obj->hdr))
		return -EINVAL;
	len = min_t(size_t, sizeof(*obj), data_size - offset);
	if (copy_from_user(obj, tc->udata + offset, len))
		return -EFAULT;
	*size = cbinder_object_check(data_size, offset, obj->hdr.type,
				     off_min);
	return *size ? 0 : -EINVAL;
}

/* The copy of object @index, a PTR object of @len bytes. */
static int cbinder_defer_sg_copy(struct cbinder_txn_ctx *tc, size_t index,
				 size_t offset, const void __user *from,
				 size_t len)
{
	size_t num = tc->buffer->offsets_size / sizeof(u64);
	struct cbinder_sg_copy *sgc;

	/* Nothing to copy, and no FD array can live in it. */
	if (!len)
		return 0;
	if (WARN_ON_ONCE(index >= num))
		return -EINVAL;
	if (!tc->copy_of) {
		tc->copy_of = kvcalloc(num, sizeof(*tc->copy_of),
				       GFP_KERNEL_ACCOUNT);
		if (!tc->copy_of)
			return -ENOMEM;
	}
	sgc = kzalloc(sizeof(*sgc), GFP_KERNEL_ACCOUNT);
	if (!sgc)
		return -ENOMEM;
	sgc->offset = offset;
	sgc->from = from;
	sgc->len = len;
	INIT_LIST_HEAD(&sgc->fixups);
	list_add_tail(&sgc->entry, &tc->sg_copies);
	tc->copy_of[index] = sgc;
	return 0;
}

/*
 * Appended to its parent's copy @sgc, not inserted in place in one list
 * for the transaction: a layout whose fix-ups go back down (a parent's
 * after its children's children) made that a walk of the list per
 * fix-up, quadratic in a 4 MiB buffer's objects. Each parent's come in
 * order already; cbinder_sort_sg_fixups() checks them.
 */
static int cbinder_add_sg_fixup(struct cbinder_sg_copy *sgc, size_t offset,
				size_t len, u64 value, bool fds)
{
	struct cbinder_sg_fixup *fixup, *last;

	if (!len)
		return 0;
	fixup = kzalloc(sizeof(*fixup), GFP_KERNEL_ACCOUNT);
	if (!fixup)
		return -ENOMEM;
	fixup->offset = offset;
	fixup->len = len;
	fixup->value = value;
	fixup->fds = fds;
	if (!list_empty(&sgc->fixups)) {
		last = list_last_entry(&sgc->fixups, struct cbinder_sg_fixup,
				       entry);
		if (last->offset > offset)
			sgc->fixups_unsorted = true;
	}
	list_add_tail(&fixup->entry, &sgc->fixups);
	return 0;
}

static int cbinder_sg_fixup_cmp(void *priv, const struct list_head *a,
				const struct list_head *b)
{
	const struct cbinder_sg_fixup *fa, *fb;

	fa = list_entry(a, struct cbinder_sg_fixup, entry);
	fb = list_entry(b, struct cbinder_sg_fixup, entry);
	return fa->offset > fb->offset;
}

/**
 * cbinder_sort_sg_fixups() - put a buffer's fix-ups in offset order
 * @fixups: list of struct cbinder_sg_fixup
 * @sorted: the list is known to be in order already (always, for lists
 *	cbinder_validate_fixup() let through: then only the check is made)
 *
 * cbinder_validate_fixup() already keeps fix-ups apart; two that
 * overlapped would still make the copy write one over the other, so they
 * are refused here, in one pass over the sorted list.
 *
 * Context: process context; may sleep.
 * Return: 0, or -EINVAL if two fix-ups overlap.
 */
VISIBLE_IF_KUNIT int cbinder_sort_sg_fixups(struct list_head *fixups,
					    bool sorted)
{
	struct cbinder_sg_fixup *fixup, *prev = NULL;

	if (!sorted)
		list_sort(NULL, fixups, cbinder_sg_fixup_cmp);
	list_for_each_entry(fixup, fixups, entry) {
		if (prev && fixup->offset - prev->offset < prev->len)
			return -EINVAL;
		prev = fixup;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_sort_sg_fixups);

static int cbinder_write_sg_fixup(struct cbinder_txn_ctx *tc,
				  struct cbinder_sg_fixup *fixup)
{
	struct cbinder_alloc *alloc = &tc->target_proc->alloc;
	static const u64 zeros[8];
	size_t done, len;
	int ret;

	if (!fixup->fds)
		return cbinder_alloc_copy_to_buffer(alloc, tc->buffer,
						    fixup->offset,
						    &fixup->value,
						    sizeof(fixup->value));
	for (done = 0; done < fixup->len; done += len) {
		len = min(fixup->len - done, sizeof(zeros));
		ret = cbinder_alloc_copy_to_buffer(alloc, tc->buffer,
						   fixup->offset + done,
						   zeros, len);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The scatter-gather buffers, from the sender, around their fix-ups: each
 * buffer's lie inside it, in offset order.
 */
static int cbinder_copy_sg(struct cbinder_txn_ctx *tc)
{
	struct cbinder_alloc *alloc = &tc->target_proc->alloc;
	struct cbinder_sg_fixup *fixup;
	struct cbinder_sg_copy *sgc;
	size_t pos, end, next;
	int ret;

	list_for_each_entry(sgc, &tc->sg_copies, entry) {
		cond_resched();
		ret = cbinder_sort_sg_fixups(&sgc->fixups,
					     !sgc->fixups_unsorted);
		if (ret)
			return ret;
		fixup = list_first_entry_or_null(&sgc->fixups,
						 struct cbinder_sg_fixup,
						 entry);
		pos = sgc->offset;
		end = sgc->offset + sgc->len;
		while (pos < end) {
			if (fixup && fixup->offset < pos)
				return -EINVAL;
			next = fixup && fixup->offset < end ? fixup->offset :
							      end;
			ret = cbinder_alloc_copy_from_user(alloc, tc->buffer,
							   pos,
							   sgc->from +
							   (pos - sgc->offset),
							   next - pos);
			if (ret)
				return ret;
			pos = next;
			if (pos == end)
				break;
			if (fixup->len > end - pos)
				return -EINVAL;
			ret = cbinder_write_sg_fixup(tc, fixup);
			if (ret)
				return ret;
			pos += fixup->len;
			fixup = list_is_last(&fixup->entry, &sgc->fixups) ?
				NULL : list_next_entry(fixup, entry);
		}
		/* Each fix-up was checked to lie in its parent: none is left. */
		if (fixup)
			return -EINVAL;
	}
	return 0;
}

static void cbinder_free_sg_lists(struct cbinder_txn_ctx *tc)
{
	struct cbinder_sg_fixup *fixup, *tmp_fixup;
	struct cbinder_sg_copy *sgc, *tmp_sgc;

	list_for_each_entry_safe(sgc, tmp_sgc, &tc->sg_copies, entry) {
		list_for_each_entry_safe(fixup, tmp_fixup, &sgc->fixups,
					 entry) {
			list_del(&fixup->entry);
			kfree(fixup);
		}
		list_del(&sgc->entry);
		kfree(sgc);
	}
	kvfree(tc->copy_of);
	tc->copy_of = NULL;
}

static int cbinder_new_ref_for(struct cbinder_proc *target,
			       struct cbinder_node *node, bool strong,
			       struct cbinder_thread *thread, u32 *desc)
{
	struct cbinder_context *ctx = target->ctx;
	struct cbinder_ref *new_ref = NULL, *ref;
	struct mem_cgroup *old;
	int ret;

	spin_lock(&ctx->lock);
	ret = cbinder_inc_ref_for_node_locked(target, node, strong, thread,
					      &new_ref, &ref);
	if (!ret)
		*desc = ref->desc;
	spin_unlock(&ctx->lock);
	if (ret != -EAGAIN)
		return ret;

	old = set_active_memcg(target->memcg);
	new_ref = kzalloc(sizeof(*new_ref), GFP_KERNEL_ACCOUNT);
	set_active_memcg(old);
	if (!new_ref)
		return -ENOMEM;
	spin_lock(&ctx->lock);
	ret = cbinder_inc_ref_for_node_locked(target, node, strong, thread,
					      &new_ref, &ref);
	if (!ret)
		*desc = ref->desc;
	spin_unlock(&ctx->lock);
	kfree(new_ref);
	return ret;
}

static int cbinder_translate_binder(struct cbinder_txn_ctx *tc,
				    struct flat_binder_object *fp)
{
	struct cbinder_proc *proc = tc->proc;
	struct cbinder_context *ctx = proc->ctx;
	bool strong = fp->hdr.type == BINDER_TYPE_BINDER;
	struct cbinder_node *node, *new_node = NULL;
	struct mem_cgroup *old;
	int ret;
	u32 desc;

	spin_lock(&ctx->lock);
	node = cbinder_get_node_locked(proc, fp->binder);
	if (!node) {
		spin_unlock(&ctx->lock);
		old = set_active_memcg(proc->memcg);
		new_node = kzalloc(sizeof(*new_node), GFP_KERNEL_ACCOUNT);
		set_active_memcg(old);
		if (!new_node)
			return -ENOMEM;
		spin_lock(&ctx->lock);
		node = cbinder_new_node_locked(proc, new_node, fp->binder,
					       fp->cookie, fp->flags);
		if (node == new_node)
			new_node = NULL;
	}
	if (node->cookie != fp->cookie) {
		spin_unlock(&ctx->lock);
		kfree(new_node);
		return -EINVAL;
	}
	/* Held until the reference exists, so a new node cannot go. */
	cbinder_node_tmpref_locked(node);
	spin_unlock(&ctx->lock);
	kfree(new_node);

	ret = security_binder_transfer_binder(proc->cred, tc->target_proc->cred);
	if (!ret)
		ret = cbinder_new_ref_for(tc->target_proc, node, strong,
					  tc->thread, &desc);

	spin_lock(&ctx->lock);
	cbinder_node_put_tmpref_locked(node);
	spin_unlock(&ctx->lock);
	if (ret)
		return ret;
	fp->hdr.type = strong ? BINDER_TYPE_HANDLE : BINDER_TYPE_WEAK_HANDLE;
	fp->binder = 0;
	fp->handle = desc;
	fp->cookie = 0;
	return 0;
}

static int cbinder_translate_handle(struct cbinder_txn_ctx *tc,
				    struct flat_binder_object *fp)
{
	struct cbinder_proc *proc = tc->proc;
	struct cbinder_context *ctx = proc->ctx;
	bool strong = fp->hdr.type == BINDER_TYPE_HANDLE;
	struct cbinder_node *node;
	struct cbinder_ref *ref;
	int ret;
	u32 desc;

	spin_lock(&ctx->lock);
	ref = cbinder_get_ref_locked(proc, fp->handle, strong);
	if (!ref) {
		spin_unlock(&ctx->lock);
		return -EINVAL;
	}
	node = ref->node;
	cbinder_node_tmpref_locked(node);
	spin_unlock(&ctx->lock);

	ret = security_binder_transfer_binder(proc->cred, tc->target_proc->cred);
	if (ret)
		goto put_node;

	spin_lock(&ctx->lock);
	if (node->proc == tc->target_proc) {
		/* Back home: the owner sees its own object. */
		fp->hdr.type = strong ? BINDER_TYPE_BINDER :
					BINDER_TYPE_WEAK_BINDER;
		fp->binder = node->ptr;
		fp->cookie = node->cookie;
		/* As the kernel's binder, a refusal here is not an error. */
		cbinder_inc_node_locked(node, strong, false, NULL);
		spin_unlock(&ctx->lock);
		goto put_node;
	}
	spin_unlock(&ctx->lock);

	ret = cbinder_new_ref_for(tc->target_proc, node, strong, NULL, &desc);
	if (!ret) {
		fp->binder = 0;
		fp->handle = desc;
		fp->cookie = 0;
	}
put_node:
	spin_lock(&ctx->lock);
	cbinder_node_put_tmpref_locked(node);
	spin_unlock(&ctx->lock);
	return ret;
}

static bool cbinder_target_accepts_fds(struct cbinder_txn_ctx *tc)
{
	if (tc->in_reply_to)
		return tc->in_reply_to->flags & TF_ACCEPT_FDS;
	return tc->buffer->target_node->accept_fds;
}

static int cbinder_translate_fd(struct cbinder_txn_ctx *tc, u32 fd,
				size_t offset)
{
	struct cbinder_fd_fixup *fixup;
	struct file *file;
	int ret;

	if (!cbinder_target_accepts_fds(tc))
		return -EPERM;
	file = fget(fd);
	if (!file)
		return -EBADF;
	/*
	 * Not a binder file: two processes sending each other their own
	 * would keep each other open forever through the undelivered
	 * transactions, and with them their cell and this module.
	 */
	if (file->f_op == &cbinder_fops) {
		ret = -EPERM;
		goto put_file;
	}
	ret = security_binder_transfer_file(tc->proc->cred,
					    tc->target_proc->cred, file);
	if (ret)
		goto put_file;
	fixup = kzalloc(sizeof(*fixup), GFP_KERNEL_ACCOUNT);
	if (!fixup) {
		ret = -ENOMEM;
		goto put_file;
	}
	fixup->file = file;
	fixup->fd = -1;
	fixup->offset = offset;
	list_add_tail(&fixup->entry, &tc->t->fd_fixups);
	return 0;

put_file:
	fput(file);
	return ret;
}

static int cbinder_translate_ptr(struct cbinder_txn_ctx *tc,
				 struct binder_buffer_object *bp,
				 u64 object_offset, size_t num_valid)
{
	struct cbinder_alloc *alloc = &tc->target_proc->alloc;
	struct binder_buffer_object parent;
	u64 parent_obj, uptr, fixup_at = 0;
	size_t len = bp->length;
	int ret;

	if (len > tc->sg_end - tc->sg_offset ||
	    ALIGN(len, sizeof(u64)) > tc->sg_end - tc->sg_offset)
		return -EINVAL;
	if (bp->flags & BINDER_BUFFER_FLAG_HAS_PARENT) {
		if (!cbinder_validate_ptr(alloc, tc->buffer, bp->parent,
					  tc->off_start, num_valid, &parent,
					  &parent_obj))
			return -EINVAL;
		if (!cbinder_validate_fixup(alloc, tc->buffer, tc->off_start,
					    parent_obj, bp->parent_offset,
					    tc->last_fixup_obj,
					    tc->last_fixup_min))
			return -EINVAL;
		if (parent.length < sizeof(u64) ||
		    bp->parent_offset > parent.length - sizeof(u64))
			return -EINVAL;
		/* The parent's buffer field is already its receiver address. */
		fixup_at = parent.buffer - tc->user_base + bp->parent_offset;
	}
	ret = cbinder_defer_sg_copy(tc, num_valid, tc->sg_offset,
				    u64_to_user_ptr(bp->buffer), len);
	if (ret)
		return ret;
	uptr = tc->user_base + tc->sg_offset;
	if (bp->flags & BINDER_BUFFER_FLAG_HAS_PARENT) {
		/* The parent has a length (checked above), so a copy. */
		ret = -EINVAL;
		if (tc->copy_of && tc->copy_of[bp->parent])
			ret = cbinder_add_sg_fixup(tc->copy_of[bp->parent],
						   fixup_at, sizeof(uptr), uptr,
						   false);
		if (ret)
			return ret;
	}
	bp->buffer = uptr;
	tc->sg_offset += ALIGN(len, sizeof(u64));
	tc->last_fixup_obj = object_offset;
	tc->last_fixup_min = 0;
	return 0;
}

static int cbinder_translate_fda(struct cbinder_txn_ctx *tc,
				 struct binder_fd_array_object *fda,
				 size_t num_valid)
{
	struct cbinder_alloc *alloc = &tc->target_proc->alloc;
	struct binder_buffer_object parent;
	u64 parent_obj, fd_size, start, i;
	struct cbinder_sg_copy *sgc;
	const void __user *ufds;
	u32 fd;
	int ret;

	if (!cbinder_validate_ptr(alloc, tc->buffer, fda->parent,
				  tc->off_start, num_valid, &parent,
				  &parent_obj))
		return -EINVAL;
	if (!cbinder_validate_fixup(alloc, tc->buffer, tc->off_start,
				    parent_obj, fda->parent_offset,
				    tc->last_fixup_obj, tc->last_fixup_min))
		return -EINVAL;
	if (fda->num_fds >= SIZE_MAX / sizeof(u32))
		return -EINVAL;
	fd_size = fda->num_fds * sizeof(u32);
	if (fd_size > parent.length ||
	    fda->parent_offset > parent.length - fd_size ||
	    !IS_ALIGNED(fda->parent_offset, sizeof(u32)))
		return -EINVAL;
	start = parent.buffer - tc->user_base + fda->parent_offset;
	if (fd_size) {
		/*
		 * The fds are read where the sender has them: the parent's
		 * copy into the buffer is not made yet, and this range of it
		 * never will be.
		 */
		sgc = tc->copy_of ? tc->copy_of[fda->parent] : NULL;
		if (!sgc)
			return -EINVAL;
		ufds = sgc->from + fda->parent_offset;
		for (i = 0; i < fda->num_fds; i++) {
			if (copy_from_user(&fd, ufds + i * sizeof(u32),
					   sizeof(fd)))
				return -EFAULT;
			ret = cbinder_translate_fd(tc, fd,
						   start + i * sizeof(u32));
			if (ret)
				return ret;
		}
		ret = cbinder_add_sg_fixup(sgc, start, fd_size, 0, true);
		if (ret)
			return ret;
	}
	tc->last_fixup_obj = parent_obj;
	tc->last_fixup_min = fda->parent_offset + fd_size;
	return 0;
}

/*
 * Undo what translation did for the first @count objects of a buffer of
 * @proc (the receiver), or for all of them when the receiver frees it.
 * FDA files were installed in the receiver only if the buffer was
 * delivered (!@is_failure); then freeing the buffer closes them, as user
 * space (libhwbinder) expects.
 */
static void cbinder_release_objects(struct cbinder_proc *proc,
				    struct cbinder_buffer *buffer,
				    size_t count, bool is_failure)
{
	struct cbinder_alloc *alloc = &proc->alloc;
	struct cbinder_context *ctx = proc->ctx;
	size_t off_start = ALIGN(buffer->data_size, sizeof(u64));
	size_t i, num = buffer->offsets_size / sizeof(u64);
	union cbinder_object obj;
	struct cbinder_node *node;
	struct cbinder_ref *unused = NULL;
	u64 offset;

	for (i = 0; i < min(count, num); i++) {
		if (cbinder_alloc_copy_from_buffer(alloc, &offset, buffer,
						   off_start + i * sizeof(u64),
						   sizeof(offset)) ||
		    !cbinder_get_object(alloc, buffer, offset, 0, &obj))
			continue;
		switch (obj.hdr.type) {
		case BINDER_TYPE_BINDER:
		case BINDER_TYPE_WEAK_BINDER:
			spin_lock(&ctx->lock);
			node = cbinder_get_node_locked(proc, obj.fbo.binder);
			if (node)
				cbinder_dec_node_locked(node,
							obj.hdr.type == BINDER_TYPE_BINDER,
							false);
			spin_unlock(&ctx->lock);
			break;
		case BINDER_TYPE_HANDLE:
		case BINDER_TYPE_WEAK_HANDLE:
			spin_lock(&ctx->lock);
			cbinder_update_ref_locked(proc, obj.fbo.handle, false,
						  obj.hdr.type == BINDER_TYPE_HANDLE,
						  &unused);
			spin_unlock(&ctx->lock);
			break;
		case BINDER_TYPE_FDA: {
			struct binder_buffer_object parent;
			u64 parent_obj, start, j;
			u32 fd;
			struct file *file;

			if (is_failure)
				break;
			if (!cbinder_validate_ptr(alloc, buffer,
						  obj.fdao.parent, off_start,
						  i, &parent, &parent_obj))
				break;
			if (obj.fdao.num_fds >= SIZE_MAX / sizeof(u32) ||
			    obj.fdao.num_fds * sizeof(u32) > parent.length ||
			    obj.fdao.parent_offset > parent.length -
			    obj.fdao.num_fds * sizeof(u32))
				break;
			start = parent.buffer -
				cbinder_buffer_user(alloc, buffer) +
				obj.fdao.parent_offset;
			for (j = 0; j < obj.fdao.num_fds; j++) {
				if (cbinder_alloc_copy_from_buffer(alloc, &fd,
								   buffer,
								   start + j * 4,
								   sizeof(fd)))
					break;
				file = file_close_fd(fd);
				if (file)
					filp_close(file, current->files);
			}
			break;
		}
		default:
			break;
		}
	}
}

/**
 * cbinder_put_target_node_locked() - drop a buffer's hold on its target
 * @node: the buffer's target node
 *
 * Context: ctx->lock held; asserted only for a live node: the buffer's
 * hold keeps a node whose owner died, and that one has no owner to reach
 * the lock by.
 */
void cbinder_put_target_node_locked(struct cbinder_node *node)
{
	if (node->proc)
		lockdep_assert_held(&node->proc->ctx->lock);
	cbinder_dec_node_locked(node, true, false);
	cbinder_node_put_tmpref_locked(node);
}

/* What cbinder_reserve_bytes() charged for @buffer. */
static size_t cbinder_buffer_charge(struct cbinder_buffer *buffer)
{
	size_t size = 0;

	/* Cannot overflow: the buffer was allocated with these sizes. */
	cbinder_alloc_buffer_bytes(buffer->data_size, buffer->offsets_size,
				   buffer->extra_size, &size);
	return size;
}

/*
 * Charge @charge bytes to the cell's buffer_bytes if they fit under
 * max_buffer_bytes. Before the allocation, which may sleep: senders that
 * each checked the old total and charged after could all pass at once
 * and overshoot the limit by as many buffers. Compared and added in one
 * step, so that a sender that does not fit never makes another fail.
 */
static bool cbinder_reserve_bytes(struct cbinder_cell *bc, long charge)
{
	long max = READ_ONCE(bc->max_buffer_bytes);
	long cur = atomic_long_read(&bc->buffer_bytes);

	do {
		/* Both are >= 0: the difference cannot overflow. */
		if (charge > max - cur)
			return false;
	} while (!atomic_long_try_cmpxchg(&bc->buffer_bytes, &cur,
					  cur + charge));
	return true;
}

/**
 * cbinder_free_buffer() - release a buffer of a process's receive area
 * @proc: owner
 * @thread: the thread freeing it, or NULL
 * @buffer: the buffer
 * @is_failure: it was never delivered
 *
 * Finishes a one-way transaction (the node's next one-way call may go),
 * drops what its objects hold and returns the space.
 *
 * Context: process context, no locks held.
 */
void cbinder_free_buffer(struct cbinder_proc *proc,
			 struct cbinder_thread *thread,
			 struct cbinder_buffer *buffer, bool is_failure)
{
	struct cbinder_context *ctx = proc->ctx;
	/* No object to release: one hold of the lock does it all. */
	bool no_objects = !buffer->offsets_size;
	struct cbinder_node *node;
	struct cbinder_work *w;

	spin_lock(&ctx->lock);
	if (buffer->transaction) {
		buffer->transaction->buffer = NULL;
		buffer->transaction = NULL;
	}
	node = buffer->target_node;
	if (node && buffer->async) {
		/* The node's next one-way call may go now. */
		w = list_first_entry_or_null(&node->async_todo,
					     struct cbinder_work, entry);
		if (!w) {
			node->has_async_transaction = 0;
		} else {
			list_del_init(&w->entry);
			cbinder_enqueue_proc_work_locked(proc, w, false);
		}
	}
	if (node && no_objects) {
		buffer->target_node = NULL;
		cbinder_put_target_node_locked(node);
		node = NULL;
	}
	spin_unlock(&ctx->lock);

	if (!no_objects)
		cbinder_release_objects(proc, buffer, SIZE_MAX, is_failure);

	if (node) {
		spin_lock(&ctx->lock);
		buffer->target_node = NULL;
		cbinder_put_target_node_locked(node);
		spin_unlock(&ctx->lock);
	}
	atomic_long_sub(cbinder_buffer_charge(buffer), &ctx->bc->buffer_bytes);
	cbinder_alloc_free_buf(&proc->alloc, buffer);
}

/*
 * A buffer that was never queued: undo the first @translated objects and
 * the target node's hold, and return the space. Unlike
 * cbinder_free_buffer() it never starts the node's next one-way call: this
 * buffer was never the one in progress.
 */
static void cbinder_discard_buffer(struct cbinder_proc *proc,
				   struct cbinder_buffer *buffer,
				   size_t translated)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_node *node;

	/* Exactly the objects translated, none if none (CVE-2023-21255). */
	cbinder_release_objects(proc, buffer, translated, true);
	spin_lock(&ctx->lock);
	node = buffer->target_node;
	buffer->target_node = NULL;
	buffer->transaction = NULL;
	if (node)
		cbinder_put_target_node_locked(node);
	spin_unlock(&ctx->lock);
	atomic_long_sub(cbinder_buffer_charge(buffer), &ctx->bc->buffer_bytes);
	/*
	 * The receiver may have these pages mapped: what was copied in,
	 * untranslated (the sender's own addresses among it), must not stay
	 * there for it to read.
	 */
	cbinder_alloc_clear_on_free(&proc->alloc, buffer);
	cbinder_alloc_free_buf(&proc->alloc, buffer);
}

/**
 * cbinder_txn_not_outstanding_locked() - a transaction is no longer its
 *	receiver's
 * @t: the transaction, queued to its receiver or handled by it until now
 *
 * The receiver's count of outstanding transactions drops, and a
 * BINDER_FREEZE waiting for it to reach 0 is woken. Done before @t is
 * freed and when the receiving thread forgets it (the transaction may
 * then outlive the receiver, which must not be touched any more).
 *
 * Context: ctx->lock held; asserted only while @t is outstanding, as its
 * receiver (the only way to the lock) may be gone afterwards.
 */
void cbinder_txn_not_outstanding_locked(struct cbinder_transaction *t)
{
	struct cbinder_proc *proc = t->to_proc;

	if (!t->outstanding)
		return;
	lockdep_assert_held(&proc->ctx->lock);
	t->outstanding = false;
	if (!--proc->outstanding_txns && proc->is_frozen)
		wake_up_interruptible_all(&proc->freeze_wait);
}

/**
 * cbinder_free_transaction_locked() - free a transaction
 * @t: the transaction, off every list and stack
 *
 * Context: ctx->lock held. Not asserted here: @t may have outlived both
 * of its processes, so it may lead to no lock (while its receiver still
 * counts it, cbinder_txn_not_outstanding_locked() asserts).
 */
void cbinder_free_transaction_locked(struct cbinder_transaction *t)
{
	cbinder_txn_not_outstanding_locked(t);
	if (t->buffer)
		t->buffer->transaction = NULL;
	cbinder_drop_fd_fixups(t);
	put_pid(t->sender_pid);
	atomic_long_dec(&t->bc->transactions);
	kfree(t);
}

/**
 * cbinder_send_failed_reply_locked() - fail a sync transaction to its caller
 * @t: the transaction, which is freed
 * @error_code: BR_DEAD_REPLY or BR_FAILED_REPLY
 *
 * If the caller is gone too, the failure goes on to the transaction that
 * caller was handling when it called (its from_parent), and so on: that
 * one's caller still waits for an answer. Every transaction passed is
 * freed; none of them is on a live thread's stack any more.
 *
 * Context: ctx->lock held, no inner lock (takes the caller's). Asserted
 * through the first live caller found: the transactions passed before it
 * may have outlived both of their processes.
 */
void cbinder_send_failed_reply_locked(struct cbinder_transaction *t,
				      u32 error_code)
{
	struct cbinder_transaction *next;
	struct cbinder_thread *from;

	while (t) {
		from = t->from;
		if (from) {
			lockdep_assert_held(&from->proc->ctx->lock);
			/* Only a caller's newest call can fail to it. */
			if (WARN_ON_ONCE(from->transaction_stack != t))
				return;
			/*
			 * One hold: the caller must not see its stack empty
			 * without the error queued (it would take process
			 * work while it waits for this answer).
			 */
			spin_lock(&from->proc->inner_lock);
			from->transaction_stack = t->from_parent;
			if (from->reply_error.cmd == BR_OK) {
				from->reply_error.cmd = error_code;
				cbinder_enqueue_thread_work_ilocked(from,
								    &from->reply_error.work,
								    false);
			}
			spin_unlock(&from->proc->inner_lock);
			cbinder_free_transaction_locked(t);
			return;
		}
		next = t->from_parent;
		cbinder_free_transaction_locked(t);
		t = next;
	}
}

/**
 * cbinder_release_work_locked() - drop the work of a list that nobody will
 *	read
 * @proc: the process the list belongs to
 * @list: the list
 * @max: at most this many items
 *
 * Sync transactions fail to their callers with BR_DEAD_REPLY.
 *
 * Context: ctx->lock held, no inner lock (takes @proc's for each item).
 * Return: true if items are left (the caller drops the lock and goes on).
 */
bool cbinder_release_work_locked(struct cbinder_proc *proc,
				 struct list_head *list, unsigned int max)
{
	struct cbinder_transaction *t;
	struct cbinder_freeze *freeze;
	struct cbinder_death *death;
	struct cbinder_node *node;
	struct cbinder_work *w;

	lockdep_assert_held(&proc->ctx->lock);
	for (;; max--) {
		/* A reader may take from a todo list with the inner lock only. */
		spin_lock(&proc->inner_lock);
		w = list_first_entry_or_null(list, struct cbinder_work, entry);
		if (w && max)
			list_del_init(&w->entry);
		spin_unlock(&proc->inner_lock);
		if (!w)
			return false;
		if (!max)
			return true;
		switch (w->type) {
		case CBINDER_WORK_TRANSACTION:
			t = container_of(w, struct cbinder_transaction, work);
			if (t->need_reply)
				cbinder_send_failed_reply_locked(t,
								 BR_DEAD_REPLY);
			else
				cbinder_free_transaction_locked(t);
			break;
		case CBINDER_WORK_TRANSACTION_COMPLETE:
		case CBINDER_WORK_TRANSACTION_ONEWAY_SPAM_SUSPECT:
		case CBINDER_WORK_TRANSACTION_PENDING:
			kfree(w);
			break;
		case CBINDER_WORK_RETURN_ERROR:
			container_of(w, struct cbinder_error, work)->cmd = BR_OK;
			break;
		case CBINDER_WORK_NODE:
			node = container_of(w, struct cbinder_node, work);
			cbinder_free_node_locked(node);
			break;
		case CBINDER_WORK_DEAD_BINDER:
			/* Still its reference's: that frees it. */
			break;
		case CBINDER_WORK_DEAD_BINDER_AND_CLEAR:
		case CBINDER_WORK_CLEAR_DEATH_NOTIFICATION:
			death = container_of(w, struct cbinder_death, work);
			/* A cleared notice can still be its reference's. */
			if (death->ref)
				death->ref->death = NULL;
			kfree(death);
			break;
		case CBINDER_WORK_FROZEN_BINDER:
			/* Still its reference's: that frees it. */
			break;
		case CBINDER_WORK_CLEAR_FREEZE_NOTIFICATION:
			freeze = container_of(w, struct cbinder_freeze, work);
			if (freeze->ref)
				freeze->ref->freeze = NULL;
			proc->freeze_clearing--;
			kfree(freeze);
			break;
		}
	}
}

/**
 * cbinder_release_work() - cbinder_release_work_locked() for a whole list,
 *	a batch per lock hold
 * @proc: the process the list belongs to
 * @list: the list, which nobody adds to any more
 *
 * A hostile process can queue millions of items: the lock, a spinlock, is
 * dropped between batches.
 *
 * Context: process context, no locks held.
 */
void cbinder_release_work(struct cbinder_proc *proc, struct list_head *list)
{
	bool more;

	do {
		spin_lock(&proc->ctx->lock);
		more = cbinder_release_work_locked(proc, list,
						   CBINDER_RELEASE_BATCH);
		spin_unlock(&proc->ctx->lock);
		cond_resched();
	} while (more);
}

/**
 * cbinder_drop_fd_fixups() - release the files of an undelivered transaction
 * @t: the transaction
 *
 * Context: any (fput() defers the final close).
 */
void cbinder_drop_fd_fixups(struct cbinder_transaction *t)
{
	struct cbinder_fd_fixup *fixup, *tmp;

	list_for_each_entry_safe(fixup, tmp, &t->fd_fixups, entry) {
		list_del(&fixup->entry);
		if (fixup->file)
			fput(fixup->file);
		kfree(fixup);
	}
}

/**
 * cbinder_reserve_fds() - reserve the receiver's fds for a transaction's
 *	files and write their numbers into the buffer
 * @proc: the receiver (current's process)
 * @t: the transaction
 *
 * Nothing is installed yet: cbinder_install_fds() does that once the
 * transaction has reached user space, cbinder_unreserve_fds() undoes this
 * if it cannot, so a failure leaves no fd behind.
 *
 * Context: process context of the receiver, no locks held.
 * Return: 0 or a negative errno (then nothing stays reserved).
 */
int cbinder_reserve_fds(struct cbinder_proc *proc,
			struct cbinder_transaction *t)
{
	struct cbinder_fd_fixup *fixup;
	int ret;
	u32 fd;

	list_for_each_entry(fixup, &t->fd_fixups, entry) {
		ret = get_unused_fd_flags(O_CLOEXEC);
		if (ret < 0)
			goto unreserve;
		fixup->fd = ret;
		fd = ret;
		ret = cbinder_alloc_copy_to_buffer(&proc->alloc, t->buffer,
						   fixup->offset, &fd,
						   sizeof(fd));
		if (ret)
			goto unreserve;
	}
	return 0;

unreserve:
	cbinder_unreserve_fds(t);
	return ret;
}

/**
 * cbinder_unreserve_fds() - give back what cbinder_reserve_fds() reserved
 * @t: the transaction
 *
 * Context: process context of the receiver, no locks held.
 */
void cbinder_unreserve_fds(struct cbinder_transaction *t)
{
	struct cbinder_fd_fixup *fixup;

	list_for_each_entry(fixup, &t->fd_fixups, entry) {
		if (fixup->fd >= 0)
			put_unused_fd(fixup->fd);
		fixup->fd = -1;
	}
}

/**
 * cbinder_install_fds() - install the reserved fds, now that user space
 *	has the transaction
 * @t: the transaction
 *
 * Context: process context of the receiver, no locks held.
 */
void cbinder_install_fds(struct cbinder_transaction *t)
{
	struct cbinder_fd_fixup *fixup;

	list_for_each_entry(fixup, &t->fd_fixups, entry) {
		fd_install(fixup->fd, fixup->file);
		fixup->file = NULL;
		fixup->fd = -1;
	}
	cbinder_drop_fd_fixups(t);
}

/* Bytes [@from, @to) of the data, as the sender has them. */
static int cbinder_copy_data(struct cbinder_txn_ctx *tc, u64 from, u64 to)
{
	return cbinder_alloc_copy_from_user(&tc->target_proc->alloc,
					    tc->buffer, from, tc->udata + from,
					    to - from);
}

static int cbinder_translate_one(struct cbinder_txn_ctx *tc,
				 union cbinder_object *obj, u64 offset,
				 size_t index)
{
	int ret;

	switch (obj->hdr.type) {
	case BINDER_TYPE_BINDER:
	case BINDER_TYPE_WEAK_BINDER:
		return cbinder_translate_binder(tc, &obj->fbo);
	case BINDER_TYPE_HANDLE:
	case BINDER_TYPE_WEAK_HANDLE:
		return cbinder_translate_handle(tc, &obj->fbo);
	case BINDER_TYPE_FD:
		ret = cbinder_translate_fd(tc, obj->fdo.fd,
					   offset +
					   offsetof(struct binder_fd_object,
						    fd));
		/* The receiver's fd goes there later; the sender's never. */
		obj->fdo.pad_binder = 0;
		return ret;
	case BINDER_TYPE_PTR:
		return cbinder_translate_ptr(tc, &obj->bbo, offset, index);
	case BINDER_TYPE_FDA:
		return cbinder_translate_fda(tc, &obj->fdao, index);
	}
	return -EINVAL;
}

static int cbinder_copy_translate(struct cbinder_txn_ctx *tc,
				  size_t *translated)
{
	struct cbinder_alloc *alloc = &tc->target_proc->alloc;
	struct cbinder_buffer *buffer = tc->buffer;
	size_t i, num = buffer->offsets_size / sizeof(u64);
	union cbinder_object obj;
	u64 offset, off_min = 0;
	size_t size;
	int ret;

	for (i = 0; i < num; i++) {
		/* A 4 MiB buffer holds some 100000 objects. */
		cond_resched();
		if (cbinder_alloc_copy_from_buffer(alloc, &offset, buffer,
						   tc->off_start +
						   i * sizeof(u64),
						   sizeof(offset)))
			return -EINVAL;
		ret = cbinder_read_object(tc, offset, off_min, &obj, &size);
		if (ret)
			return ret;
		ret = cbinder_copy_data(tc, off_min, offset);
		if (ret)
			return ret;
		ret = cbinder_translate_one(tc, &obj, offset, i);
		if (ret)
			return ret;
		/* Counted before the write-back, which cannot fail here. */
		*translated = i + 1;
		if (cbinder_alloc_copy_to_buffer(alloc, buffer, offset, &obj,
						 size))
			return -EINVAL;
		off_min = offset + size;
	}
	ret = cbinder_copy_data(tc, off_min, buffer->data_size);
	if (ret)
		return ret;
	return cbinder_copy_sg(tc);
}

/*
 * Copy the data into the buffer and translate its objects, writing no
 * byte of an untranslated object there (top of this file). *@translated
 * is how many objects a failure must undo.
 */
static int cbinder_translate_objects(struct cbinder_txn_ctx *tc,
				     size_t *translated)
{
	int ret = cbinder_copy_translate(tc, translated);

	cbinder_free_sg_lists(tc);
	return ret;
}

static int cbinder_add_secctx(struct cbinder_txn_ctx *tc, char *secctx,
			      u32 secctx_len)
{
	size_t off = tc->sg_end;

	if (cbinder_alloc_copy_to_buffer(&tc->target_proc->alloc, tc->buffer,
					 off, secctx, secctx_len))
		return -EINVAL;
	tc->t->security_ctx = tc->user_base + off;
	return 0;
}

/*
 * The target of a new transaction and, for a sync call made while the
 * thread handles another, the thread of the target already waiting in
 * that chain (nested calls go back to it).
 */
static u32 cbinder_find_target_locked(struct cbinder_proc *proc,
				      struct cbinder_thread *thread,
				      struct binder_transaction_data *tr,
				      struct cbinder_node **nodep,
				      struct cbinder_thread **threadp,
				      int *param)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_transaction *tmp;
	struct cbinder_node *node;
	struct cbinder_work *w;
	struct cbinder_ref *ref;

	lockdep_assert_held(&ctx->lock);
	*param = -EINVAL;
	if (tr->target.handle) {
		ref = cbinder_get_ref_locked(proc, tr->target.handle, true);
		if (!ref)
			return BR_FAILED_REPLY;
		node = ref->node;
	} else {
		node = ctx->mgr_node;
		if (!node)
			return BR_DEAD_REPLY;
		/* Not from the manager's process, whichever of its files. */
		if (node->proc && node->proc->pid == proc->pid)
			return BR_FAILED_REPLY;
	}
	if (!node->proc)
		return BR_DEAD_REPLY;
	if (node->proc == proc)
		return BR_FAILED_REPLY;
	*nodep = node;
	*threadp = NULL;
	*param = -EPROTO;
	/*
	 * A sync call may not start while a transaction waits at the head
	 * of the thread's own list: that one would wait for this forever.
	 * Its own list, under ctx->lock only: every other writer of it
	 * holds ctx->lock too, and its reader is this thread.
	 */
	w = list_first_entry_or_null(&thread->todo, struct cbinder_work, entry);
	if (!(tr->flags & TF_ONE_WAY) && w &&
	    w->type == CBINDER_WORK_TRANSACTION)
		return BR_FAILED_REPLY;
	*param = 0;
	if (tr->flags & TF_ONE_WAY || !thread->transaction_stack)
		return BR_OK;
	tmp = thread->transaction_stack;
	if (tmp->to_thread != thread) {
		*param = -EPROTO;
		return BR_FAILED_REPLY;
	}
	for (; tmp; tmp = tmp->from_parent) {
		if (tmp->from && tmp->from->proc == node->proc) {
			*threadp = tmp->from;
			break;
		}
	}
	return BR_OK;
}

/*
 * TF_UPDATE_TXN: a queued one-way call that @t makes outdated, as in the
 * kernel's binder: both ask for it, to the same node (@list is its
 * one-way queue), with the same code and flags, from the same sender
 * (thread group).
 */
static struct cbinder_transaction *
cbinder_find_outdated_locked(struct cbinder_transaction *t,
			     struct list_head *list)
{
	struct cbinder_transaction *old;
	struct cbinder_work *w;

	lockdep_assert_held(&t->to_proc->ctx->lock);
	list_for_each_entry(w, list, entry) {
		if (w->type != CBINDER_WORK_TRANSACTION)
			continue;
		old = container_of(w, struct cbinder_transaction, work);
		if (old->code == t->code && old->flags == t->flags &&
		    old->buffer && old->buffer->pid == t->buffer->pid)
			return old;
	}
	return NULL;
}

/**
 * cbinder_transaction() - BC_TRANSACTION, BC_REPLY and their _SG forms
 * @proc: the sender
 * @thread: the sending thread
 * @tr: what user space wrote
 * @reply: a reply
 * @extra_buffers_size: room for scatter-gather buffers (_SG forms)
 *
 * Errors are returned to the thread as BR_FAILED_REPLY, BR_DEAD_REPLY or
 * BR_FROZEN_REPLY (a failed reply: to the caller, and
 * BR_TRANSACTION_COMPLETE to the replier), as the kernel's binder does.
 *
 * Context: process context, no locks held.
 */
void cbinder_transaction(struct cbinder_proc *proc,
			 struct cbinder_thread *thread,
			 struct binder_transaction_data *tr, bool reply,
			 binder_size_t extra_buffers_size)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_cell *bc = ctx->bc;
	struct cbinder_txn_ctx tc = {
		.proc = proc,
		.thread = thread,
		.sg_copies = LIST_HEAD_INIT(tc.sg_copies),
	};
	struct cbinder_thread *target_thread = NULL;
	struct cbinder_node *target_node = NULL;
	struct cbinder_transaction *t = NULL, *in_reply_to = NULL;
	struct cbinder_transaction *outdated = NULL;
	struct cbinder_buffer *buffer = NULL, *outdated_buffer = NULL;
	struct cbinder_work *tcomplete = NULL;
	size_t translated = 0, secctx_size = 0, bytes;
	long saved_priority = 0, charge;
	u32 return_error = BR_OK, secctx_len = 0;
	int return_error_param = 0, debug_id = cbinder_next_debug_id(bc);
	struct cbinder_log_entry log;
	char *secctx = NULL;
	bool frozen;
	u64 extra;
	int ret;

	atomic_long_inc(&bc->transactions_total);
	cbinder_log_begin(&log, proc, thread, tr, reply, debug_id);

	/*
	 * The target first, the memory after, as the kernel's binder: a
	 * reply that cannot be made still ends the replier's part (it gets
	 * BR_TRANSACTION_COMPLETE, its caller the failure).
	 */
	spin_lock(&ctx->lock);
	thread->ee.id = debug_id;
	thread->ee.command = BR_OK;
	thread->ee.param = 0;
	if (reply) {
		in_reply_to = thread->transaction_stack;
		if (!in_reply_to || in_reply_to->to_thread != thread) {
			spin_unlock(&ctx->lock);
			in_reply_to = NULL;
			return_error = BR_FAILED_REPLY;
			return_error_param = -EPROTO;
			goto free_t;
		}
		spin_lock(&proc->inner_lock);
		thread->transaction_stack = in_reply_to->to_parent;
		spin_unlock(&proc->inner_lock);
		in_reply_to->to_thread = NULL;
		in_reply_to->to_parent = NULL;
		saved_priority = in_reply_to->saved_priority;
		target_thread = in_reply_to->from;
		if (!target_thread) {
			return_error = BR_DEAD_REPLY;
		} else if (target_thread->transaction_stack != in_reply_to) {
			/*
			 * Still linked below the caller's newer calls: it is
			 * failed or freed when those unwind, not here.
			 */
			return_error = BR_FAILED_REPLY;
			return_error_param = -EPROTO;
			in_reply_to = NULL;
			target_thread = NULL;
		} else {
			tc.target_proc = target_thread->proc;
			refcount_inc(&tc.target_proc->refcount);
			refcount_inc(&target_thread->refcount);
		}
		spin_unlock(&ctx->lock);
		cbinder_set_nice(proc, saved_priority);
		if (return_error != BR_OK)
			goto fail_reply;
	} else {
		return_error = cbinder_find_target_locked(proc, thread, tr,
							  &target_node,
							  &target_thread,
							  &return_error_param);
		if (return_error != BR_OK) {
			spin_unlock(&ctx->lock);
			goto free_t;
		}
		tc.target_proc = target_node->proc;
		refcount_inc(&tc.target_proc->refcount);
		if (target_thread)
			refcount_inc(&target_thread->refcount);
		/*
		 * The buffer holds the node, strong and in memory, until it
		 * is freed, even if the owner dies meanwhile.
		 */
		cbinder_inc_node_locked(target_node, true, false, NULL);
		cbinder_node_tmpref_locked(target_node);
		spin_unlock(&ctx->lock);
		ret = security_binder_transaction(proc->cred,
						  tc.target_proc->cred);
		if (ret) {
			return_error = BR_FAILED_REPLY;
			return_error_param = -EPERM;
			goto put_target;
		}
	}
	cbinder_log_target(&log, tc.target_proc, target_thread, target_node);
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	tcomplete = kzalloc(sizeof(*tcomplete), GFP_KERNEL_ACCOUNT);
	if (!t || !tcomplete) {
		return_error = BR_FAILED_REPLY;
		return_error_param = -ENOMEM;
		goto put_target;
	}
	INIT_LIST_HEAD(&t->fd_fixups);
	INIT_LIST_HEAD(&t->work.entry);
	t->work.type = CBINDER_WORK_TRANSACTION;
	INIT_LIST_HEAD(&tcomplete->entry);
	tcomplete->type = CBINDER_WORK_TRANSACTION_COMPLETE;
	atomic_long_inc(&bc->transactions);
	t->bc = bc;
	t->to_proc = tc.target_proc;
	t->code = tr->code;
	t->flags = tr->flags;
	t->is_reply = reply;
	t->priority = task_nice(current);
	/*
	 * The opener's euid now, as the kernel's binder reports it: a
	 * process that drops privileges after opening the device is seen
	 * with its new identity.
	 */
	t->sender_euid = task_euid(proc->tsk);
	if (!reply && !(tr->flags & TF_ONE_WAY))
		t->sender_pid = get_pid(proc->pid);
	t->debug_id = debug_id;
	tc.t = t;
	tc.in_reply_to = in_reply_to;

	if (target_node && target_node->txn_security_ctx) {
		u32 secid;

		security_cred_getsecid(proc->cred, &secid);
		ret = security_secid_to_secctx(secid, &secctx, &secctx_len);
		if (ret) {
			return_error = BR_FAILED_REPLY;
			return_error_param = ret;
			goto put_target;
		}
		secctx_size = ALIGN(secctx_len, sizeof(u64));
	}

	if (!IS_ALIGNED(tr->offsets_size, sizeof(binder_size_t)) ||
	    !IS_ALIGNED(extra_buffers_size, sizeof(u64)) ||
	    check_add_overflow((u64)extra_buffers_size, (u64)secctx_size,
			       &extra)) {
		return_error = BR_FAILED_REPLY;
		return_error_param = -EINVAL;
		goto put_target;
	}
	/*
	 * Sizes that overflow reserve nothing: the allocation fails on them
	 * (-EINVAL). Otherwise the buffer carries exactly this charge, which
	 * cbinder_free_buffer(), cbinder_discard_buffer() or the process's
	 * release gives back.
	 */
	charge = 0;
	if (cbinder_alloc_buffer_bytes(tr->data_size, tr->offsets_size, extra,
				       &bytes))
		charge = min_t(size_t, bytes, LONG_MAX);
	if (charge && !cbinder_reserve_bytes(bc, charge)) {
		/* The cell's binder memory is used up (max_buffer_bytes). */
		return_error = BR_FAILED_REPLY;
		return_error_param = -ENOSPC;
		goto put_target;
	}
	buffer = cbinder_alloc_new_buf(&tc.target_proc->alloc, tr->data_size,
				       tr->offsets_size, extra,
				       !reply && (tr->flags & TF_ONE_WAY));
	if (IS_ERR(buffer)) {
		atomic_long_sub(charge, &bc->buffer_bytes);
		return_error_param = PTR_ERR(buffer);
		return_error = return_error_param == -ESRCH ? BR_DEAD_REPLY :
							      BR_FAILED_REPLY;
		buffer = NULL;
		goto put_target;
	}
	buffer->debug_id = t->debug_id;
	if (buffer->oneway_spam_suspect)
		tcomplete->type = CBINDER_WORK_TRANSACTION_ONEWAY_SPAM_SUSPECT;
	if (tr->flags & TF_CLEAR_BUF)
		cbinder_alloc_clear_on_free(&tc.target_proc->alloc, buffer);
	buffer->target_node = target_node;
	target_node = NULL;
	tc.buffer = buffer;
	tc.user_base = cbinder_buffer_user(&tc.target_proc->alloc, buffer);
	tc.off_start = ALIGN(tr->data_size, sizeof(u64));
	tc.sg_offset = tc.off_start + ALIGN(tr->offsets_size, sizeof(u64));
	tc.sg_end = tc.sg_offset + extra_buffers_size;
	t->buffer = buffer;

	tc.udata = u64_to_user_ptr(tr->data.ptr.buffer);
	/* The offsets only: the data follows object by object. */
	if (cbinder_alloc_copy_from_user(&tc.target_proc->alloc, buffer,
					 tc.off_start,
					 u64_to_user_ptr(tr->data.ptr.offsets),
					 tr->offsets_size)) {
		return_error = BR_FAILED_REPLY;
		return_error_param = -EFAULT;
		goto release_buffer;
	}
	ret = cbinder_translate_objects(&tc, &translated);
	if (ret) {
		return_error = BR_FAILED_REPLY;
		return_error_param = ret;
		goto release_buffer;
	}
	if (secctx) {
		if (cbinder_add_secctx(&tc, secctx, secctx_len)) {
			return_error = BR_FAILED_REPLY;
			return_error_param = -EINVAL;
			goto release_buffer;
		}
		security_release_secctx(secctx, secctx_len);
		secctx = NULL;
	}

	spin_lock(&ctx->lock);
	/*
	 * A frozen process takes no new sync call; one-way calls are queued
	 * for when it is thawed, and their senders told so. Replies and
	 * calls already queued go through, as in the kernel's binder.
	 */
	frozen = !reply && tc.target_proc->is_frozen;
	if (frozen) {
		if (t->flags & TF_ONE_WAY)
			tc.target_proc->async_recv = true;
		else
			tc.target_proc->sync_recv = true;
	}
	/* Unlinked: its queues were emptied and must stay so. */
	if ((frozen && !(t->flags & TF_ONE_WAY)) || ctx->unlinked ||
	    tc.target_proc->is_dead ||
	    (target_thread && target_thread->is_dead)) {
		spin_unlock(&ctx->lock);
		return_error = frozen ? BR_FROZEN_REPLY : BR_DEAD_REPLY;
		goto release_buffer;
	}
	buffer->transaction = t;
	t->outstanding = true;
	tc.target_proc->outstanding_txns++;
	if (reply) {
		cbinder_enqueue_thread_work_locked(thread, tcomplete);
		/* One hold, as in cbinder_send_failed_reply_locked(). */
		spin_lock(&tc.target_proc->inner_lock);
		target_thread->transaction_stack = in_reply_to->from_parent;
		cbinder_enqueue_thread_work_ilocked(target_thread, &t->work,
						    true);
		spin_unlock(&tc.target_proc->inner_lock);
		in_reply_to->from = NULL;
		cbinder_free_transaction_locked(in_reply_to);
	} else if (!(t->flags & TF_ONE_WAY)) {
		t->need_reply = true;
		t->from = thread;
		t->from_parent = thread->transaction_stack;
		spin_lock(&proc->inner_lock);
		thread->transaction_stack = t;
		list_add_tail(&tcomplete->entry, &thread->todo);
		spin_unlock(&proc->inner_lock);
		if (target_thread) {
			spin_lock(&tc.target_proc->inner_lock);
			cbinder_enqueue_thread_work_ilocked(target_thread,
							    &t->work, true);
			spin_unlock(&tc.target_proc->inner_lock);
		} else {
			cbinder_enqueue_proc_work_locked(tc.target_proc,
							 &t->work, true);
		}
	} else {
		struct cbinder_node *node = buffer->target_node;

		if (frozen)
			tcomplete->type = CBINDER_WORK_TRANSACTION_PENDING;
		cbinder_enqueue_thread_work_locked(thread, tcomplete);
		if (node->has_async_transaction) {
			/*
			 * Only while frozen, as the kernel's binder: the
			 * queue is not moving then, and the receiver wants
			 * only the newest state on thaw.
			 */
			if ((t->flags & TF_UPDATE_TXN) && frozen)
				outdated = cbinder_find_outdated_locked(t,
									&node->async_todo);
			if (outdated) {
				list_del_init(&outdated->work.entry);
				outdated_buffer = outdated->buffer;
				outdated_buffer->transaction = NULL;
				outdated->buffer = NULL;
				cbinder_free_transaction_locked(outdated);
			}
			list_add_tail(&t->work.entry, &node->async_todo);
		} else {
			node->has_async_transaction = 1;
			cbinder_enqueue_proc_work_locked(tc.target_proc,
							 &t->work, false);
		}
	}
	spin_unlock(&ctx->lock);
	/* Never delivered: what its objects hold goes, as for a failure. */
	if (outdated_buffer)
		cbinder_discard_buffer(tc.target_proc, outdated_buffer,
				       SIZE_MAX);
	cbinder_log_end(bc, &log, BR_OK, 0);
	if (target_thread)
		cbinder_thread_dec_tmpref(target_thread);
	cbinder_proc_dec_tmpref(tc.target_proc);
	return;

release_buffer:
	if (secctx)
		security_release_secctx(secctx, secctx_len);
	secctx = NULL;
	cbinder_drop_fd_fixups(t);
	t->buffer = NULL;
	cbinder_discard_buffer(tc.target_proc, buffer, translated);
	atomic_long_dec(&bc->transactions);
	goto put_thread;
put_target:
	if (secctx)
		security_release_secctx(secctx, secctx_len);
	if (t && t->to_proc)
		atomic_long_dec(&bc->transactions);
	if (target_node) {
		spin_lock(&ctx->lock);
		cbinder_put_target_node_locked(target_node);
		spin_unlock(&ctx->lock);
	}
put_thread:
	if (t)
		put_pid(t->sender_pid);
	if (target_thread)
		cbinder_thread_dec_tmpref(target_thread);
	cbinder_proc_dec_tmpref(tc.target_proc);
fail_reply:
free_t:
	kfree(t);
	atomic_long_inc(&bc->failed_transactions);
	spin_lock(&ctx->lock);
	if (in_reply_to) {
		/* The replier is done; its caller learns of the failure. */
		if (in_reply_to->from) {
			in_reply_to->from->ee.id = debug_id;
			in_reply_to->from->ee.command = return_error;
			in_reply_to->from->ee.param = return_error_param;
		}
		thread->return_error.cmd = BR_TRANSACTION_COMPLETE;
		cbinder_enqueue_thread_work_locked(thread,
						   &thread->return_error.work);
		cbinder_send_failed_reply_locked(in_reply_to, return_error);
	} else {
		thread->ee.id = debug_id;
		thread->ee.command = return_error;
		thread->ee.param = return_error_param;
		thread->return_error.cmd = return_error;
		cbinder_enqueue_thread_work_locked(thread,
						   &thread->return_error.work);
	}
	spin_unlock(&ctx->lock);
	kfree(tcomplete);
	cbinder_log_end(bc, &log, return_error, return_error_param);
}
