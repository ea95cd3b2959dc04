// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder object translation: the binder, handle, fd, PTR and FD array
 * objects of a transaction's data, copied from the sender into the
 * target's receive area and made the target's; and their undoing, when a
 * transaction fails or its buffer is freed.
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
 *
 * Locking: ctx->lock (binder.h) only around the node and reference
 * operations of node.c, never across a user copy, an allocation, an fd
 * operation or an LSM hook; the buffer is the sender's alone until the
 * transaction is queued (txn.c), so its bytes need no lock.
 */
#include <linux/cred.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/list_sort.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <kunit/visibility.h>

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
	int ret;

	spin_lock(&ctx->lock);
	ret = cbinder_inc_ref_for_node_locked(target, node, strong, thread,
					      &new_ref, &ref);
	if (!ret)
		*desc = ref->desc;
	spin_unlock(&ctx->lock);
	if (ret != -EAGAIN)
		return ret;

	new_ref = cask_memcg_kzalloc(target->memcg, sizeof(*new_ref),
				     GFP_KERNEL_ACCOUNT);
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
	int ret;
	u32 desc;

	spin_lock(&ctx->lock);
	node = cbinder_get_node_locked(proc, fp->binder);
	if (!node) {
		spin_unlock(&ctx->lock);
		new_node = cask_memcg_kzalloc(proc->memcg, sizeof(*new_node),
					      GFP_KERNEL_ACCOUNT);
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

/**
 * cbinder_release_objects() - undo the translation of a buffer's objects
 * @proc: the buffer's owner (the receiver)
 * @buffer: the buffer
 * @count: how many of its objects, from the first (SIZE_MAX: all)
 * @is_failure: the buffer was never delivered
 *
 * Undo what translation did for the first @count objects of a buffer of
 * @proc (the receiver), or for all of them when the receiver frees it.
 * FDA files were installed in the receiver only if the buffer was
 * delivered (!@is_failure); then freeing the buffer closes them, as user
 * space (libhwbinder) expects.
 *
 * Context: process context, no locks held (takes ctx->lock).
 */
void cbinder_release_objects(struct cbinder_proc *proc,
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

/**
 * cbinder_translate_objects() - copy a transaction's data into its buffer
 *	and translate the objects in it
 * @tc: the transaction being built, its buffer's offsets copied in
 * @translated: how many objects a failure must undo
 *
 * Copy the data into the buffer and translate its objects, writing no
 * byte of an untranslated object there (top of this file). *@translated
 * is how many objects a failure must undo.
 *
 * Context: process context of the sender, no locks held.
 * Return: 0 or a negative errno.
 */
int cbinder_translate_objects(struct cbinder_txn_ctx *tc,
			      size_t *translated)
{
	int ret = cbinder_copy_translate(tc, translated);

	cbinder_free_sg_lists(tc);
	return ret;
}
