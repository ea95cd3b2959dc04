// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder nodes (objects a process owns), references (handles other
 * processes hold on them), death and freeze notifications, and the debug
 * ids a cell gives its nodes and transactions.
 *
 * A node's counts say who needs it: references with a strong count
 * (internal_strong_refs), the driver's own holds (local_*: buffers in
 * flight, the BR_ACQUIRE/BR_INCREFS handshakes) and short-lived users
 * (tmp_refs). The node tells its owner through BR_INCREFS, BR_ACQUIRE,
 * BR_RELEASE and BR_DECREFS when user space must start or stop holding the
 * object for the driver, and is freed once nobody needs it. Everything here
 * runs under ctx->lock; memory is allocated by the callers beforehand.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <cask/cell.h>

#include "binder.h"

/**
 * cbinder_next_debug_id() - an id for debugging output and extended errors
 * @bc: the cell's binder state
 *
 * Per cell: a global counter would let a container count the binder
 * traffic of the others.
 *
 * Context: any.
 * Return: a new positive id (wraps).
 */
int cbinder_next_debug_id(struct cbinder_cell *bc)
{
	return atomic_inc_return(&bc->debug_id) & INT_MAX;
}

/**
 * cbinder_get_node_locked() - find a process's node by its address
 * @proc: owner
 * @ptr: user space's address of the object
 *
 * Context: ctx->lock held.
 * Return: the node or NULL.
 */
struct cbinder_node *cbinder_get_node_locked(struct cbinder_proc *proc,
					     binder_uintptr_t ptr)
{
	struct rb_node *n = proc->nodes.rb_node;
	struct cbinder_node *node;

	lockdep_assert_held(&proc->ctx->lock);
	while (n) {
		node = rb_entry(n, struct cbinder_node, rb_node);
		if (ptr < node->ptr)
			n = n->rb_left;
		else if (ptr > node->ptr)
			n = n->rb_right;
		else
			return node;
	}
	return NULL;
}

/**
 * cbinder_new_node_locked() - add a node to a process
 * @proc: owner
 * @new_node: zeroed memory for it, allocated by the caller
 * @ptr: user space's address of the object
 * @cookie: user space's cookie
 * @flags: flat_binder_object flags
 *
 * Context: ctx->lock held.
 * Return: @new_node, or the node already at @ptr (then @new_node is not
 * used and the caller frees it).
 */
struct cbinder_node *cbinder_new_node_locked(struct cbinder_proc *proc,
					     struct cbinder_node *new_node,
					     binder_uintptr_t ptr,
					     binder_uintptr_t cookie,
					     u32 flags)
{
	struct rb_node **p = &proc->nodes.rb_node, *parent = NULL;
	struct cbinder_node *node;

	lockdep_assert_held(&proc->ctx->lock);
	while (*p) {
		parent = *p;
		node = rb_entry(parent, struct cbinder_node, rb_node);
		if (ptr < node->ptr)
			p = &parent->rb_left;
		else if (ptr > node->ptr)
			p = &parent->rb_right;
		else
			return node;
	}
	node = new_node;
	node->proc = proc;
	node->ptr = ptr;
	node->cookie = cookie;
	node->work.type = CBINDER_WORK_NODE;
	INIT_LIST_HEAD(&node->work.entry);
	INIT_LIST_HEAD(&node->async_todo);
	INIT_HLIST_HEAD(&node->refs);
	node->min_priority = (s8)(flags & FLAT_BINDER_FLAG_PRIORITY_MASK);
	node->accept_fds = !!(flags & FLAT_BINDER_FLAG_ACCEPTS_FDS);
	node->txn_security_ctx = !!(flags & FLAT_BINDER_FLAG_TXN_SECURITY_CTX);
	node->debug_id = cbinder_next_debug_id(proc->ctx->bc);
	rb_link_node(&node->rb_node, parent, p);
	rb_insert_color(&node->rb_node, &proc->nodes);
	atomic_long_inc(&proc->ctx->bc->nodes);
	return node;
}

static bool cbinder_node_strong(struct cbinder_node *node)
{
	return node->internal_strong_refs || node->local_strong_refs;
}

static bool cbinder_node_weak(struct cbinder_node *node)
{
	return !hlist_empty(&node->refs) || node->local_weak_refs ||
	       node->tmp_refs || cbinder_node_strong(node);
}

/*
 * Queue the node's work if its owner must hear about a change. Context:
 * ctx->lock held (asserted only while the node has an owner to reach it by).
 */
static void cbinder_node_queue_locked(struct cbinder_node *node)
{
	struct cbinder_proc *proc = node->proc;

	if (proc)
		lockdep_assert_held(&proc->ctx->lock);
	if (!proc || !list_empty(&node->work.entry))
		return;
	cbinder_enqueue_proc_work_locked(proc, &node->work, false);
}

/**
 * cbinder_inc_node_locked() - take a count on a node
 * @node: the node
 * @strong: a strong count, else weak
 * @internal: on behalf of a reference, else the driver's own
 * @target: the thread that must tell user space to start holding the
 *	object (the sender of a BINDER object, which owns it), or NULL
 *
 * As the kernel's binder: when user space does not hold the object yet,
 * only a count taken with a @target may make it (BR_INCREFS, BR_ACQUIRE
 * arrive with that thread's next read); a first strong reference without
 * one is refused, except on the context manager, which is always held.
 *
 * Context: ctx->lock held; asserted only for a live node, as a dead one
 * has no owner to reach the lock by.
 * Return: 0 or -EINVAL.
 */
int cbinder_inc_node_locked(struct cbinder_node *node, bool strong,
			    bool internal, struct cbinder_thread *target)
{
	struct cbinder_proc *proc = node->proc;

	if (proc)
		lockdep_assert_held(&proc->ctx->lock);
	if (strong) {
		if (internal) {
			if (!target && !node->internal_strong_refs &&
			    !(proc && node == proc->ctx->mgr_node &&
			      node->has_strong_ref))
				return -EINVAL;
			node->internal_strong_refs++;
		} else {
			node->local_strong_refs++;
		}
		if (!node->has_strong_ref && target) {
			/* The owner's: target sent the node, so owns it. */
			if (proc)
				cbinder_dequeue_work_locked(proc, &node->work);
			cbinder_enqueue_deferred_thread_work_locked(target,
								    &node->work);
		}
	} else {
		if (!internal)
			node->local_weak_refs++;
		if (!node->has_weak_ref && list_empty(&node->work.entry)) {
			if (!target)
				return -EINVAL;
			cbinder_enqueue_deferred_thread_work_locked(target,
								    &node->work);
		}
	}
	return 0;
}

/**
 * cbinder_dec_node_locked() - drop a count on a node
 * @node: the node
 * @strong: a strong count, else weak
 * @internal: on behalf of a reference, else the driver's own
 *
 * The node goes when nothing needs it; for a live owner that happens
 * through its work item (BR_RELEASE and BR_DECREFS first).
 *
 * Context: ctx->lock held; asserted only for a live node, as a dead one
 * has no owner to reach the lock by.
 */
void cbinder_dec_node_locked(struct cbinder_node *node, bool strong,
			     bool internal)
{
	if (node->proc)
		lockdep_assert_held(&node->proc->ctx->lock);
	if (strong) {
		if (internal)
			node->internal_strong_refs--;
		else
			node->local_strong_refs--;
	} else if (!internal) {
		node->local_weak_refs--;
	}
	/* A dead node's counts no longer matter: only who points at it. */
	if (!node->proc) {
		cbinder_free_node_locked(node);
		return;
	}
	if (strong ? cbinder_node_strong(node) : cbinder_node_weak(node))
		return;
	if (node->has_strong_ref || node->has_weak_ref) {
		cbinder_node_queue_locked(node);
		return;
	}
	cbinder_free_node_locked(node);
}

/**
 * cbinder_free_node_locked() - free a node if nothing needs it
 * @node: the node
 *
 * A live node goes when no count, reference or queued work needs it and
 * user space holds nothing for it. A dead node (its owner gone) goes when
 * no reference and no temporary user is left: the buffers that named it
 * as their target hold a temporary reference until they are freed.
 *
 * Context: ctx->lock held; asserted only for a live node, as a dead one
 * has no owner to reach the lock by.
 */
void cbinder_free_node_locked(struct cbinder_node *node)
{
	struct cbinder_proc *proc = node->proc;

	if (proc)
		lockdep_assert_held(&proc->ctx->lock);
	if (!proc) {
		if (!hlist_empty(&node->refs) || node->tmp_refs)
			return;
		list_del(&node->dead_entry);
		kfree(node);
		return;
	}
	if (cbinder_node_weak(node) || !list_empty(&node->async_todo) ||
	    node->has_strong_ref || node->has_weak_ref ||
	    !list_empty(&node->work.entry))
		return;
	rb_erase(&node->rb_node, &proc->nodes);
	atomic_long_dec(&proc->ctx->bc->nodes);
	kfree(node);
}

/**
 * cbinder_node_tmpref_locked() - hold a node for a moment
 * @node: the node
 *
 * Context: ctx->lock held; asserted only for a live node, as a dead one
 * has no owner to reach the lock by.
 */
void cbinder_node_tmpref_locked(struct cbinder_node *node)
{
	if (node->proc)
		lockdep_assert_held(&node->proc->ctx->lock);
	node->tmp_refs++;
}

/**
 * cbinder_node_put_tmpref_locked() - release cbinder_node_tmpref_locked()
 * @node: the node
 *
 * Context: ctx->lock held; asserted only for a live node, as a dead one
 * has no owner to reach the lock by.
 */
void cbinder_node_put_tmpref_locked(struct cbinder_node *node)
{
	if (node->proc)
		lockdep_assert_held(&node->proc->ctx->lock);
	node->tmp_refs--;
	cbinder_free_node_locked(node);
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

/**
 * cbinder_node_process_work_locked() - what to tell a node's owner
 * @node: the node, just taken off its owner's list
 * @cmds: BR_ codes to send with the node's ptr and cookie (at most 4)
 * @ncmds: how many
 *
 * Context: ctx->lock held.
 * Return: true if the node is now unused and was unlinked: the caller
 * frees it after dropping the lock.
 */
bool cbinder_node_process_work_locked(struct cbinder_node *node, u32 *cmds,
				      int *ncmds)
{
	bool strong = cbinder_node_strong(node);
	bool weak = cbinder_node_weak(node);
	int n = 0;

	/* Its work was on its owner's list: the node is live. */
	lockdep_assert_held(&node->proc->ctx->lock);
	if (weak && !node->has_weak_ref) {
		node->has_weak_ref = 1;
		node->pending_weak_ref = 1;
		node->local_weak_refs++;
		cmds[n++] = BR_INCREFS;
	}
	if (strong && !node->has_strong_ref) {
		node->has_strong_ref = 1;
		node->pending_strong_ref = 1;
		node->local_strong_refs++;
		cmds[n++] = BR_ACQUIRE;
	}
	if (!strong && node->has_strong_ref) {
		node->has_strong_ref = 0;
		cmds[n++] = BR_RELEASE;
	}
	if (!weak && node->has_weak_ref) {
		node->has_weak_ref = 0;
		cmds[n++] = BR_DECREFS;
	}
	*ncmds = n;
	if (!weak && !strong && list_empty(&node->async_todo)) {
		rb_erase(&node->rb_node, &node->proc->nodes);
		atomic_long_dec(&node->proc->ctx->bc->nodes);
		return true;
	}
	return false;
}

/**
 * cbinder_release_node_locked() - the owner of a node goes
 * @node: the node, already off its owner's tree
 * @async: gets the node's queued one-way transactions, for the caller to
 *	release with cbinder_release_work() once it has dropped the lock
 *
 * Holders of references keep the node (dead) and get their death
 * notifications.
 *
 * Context: ctx->lock held.
 */
void cbinder_release_node_locked(struct cbinder_node *node,
				 struct list_head *async)
{
	struct cbinder_proc *proc = node->proc;
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_ref *ref;

	lockdep_assert_held(&ctx->lock);
	cbinder_dequeue_work_locked(proc, &node->work);
	/*
	 * Not here: one-way buffers can be 8 bytes, so a node can have a
	 * quarter of a million of them queued, too many for one hold.
	 */
	list_splice_tail_init(&node->async_todo, async);
	atomic_long_dec(&ctx->bc->nodes);
	node->proc = NULL;
	node->has_strong_ref = 0;
	node->has_weak_ref = 0;
	node->pending_strong_ref = 0;
	node->pending_weak_ref = 0;
	if (hlist_empty(&node->refs) && !node->tmp_refs) {
		kfree(node);
		return;
	}
	list_add(&node->dead_entry, &ctx->dead_nodes);
	hlist_for_each_entry(ref, &node->refs, node_entry) {
		struct cbinder_death *death = ref->death;

		if (!death || !list_empty(&death->work.entry))
			continue;
		death->work.type = CBINDER_WORK_DEAD_BINDER;
		cbinder_enqueue_proc_work_locked(ref->proc, &death->work,
						 false);
	}
}

static struct cbinder_ref *cbinder_get_ref_for_node_locked(struct cbinder_proc *proc,
							   struct cbinder_node *node)
{
	struct rb_node *n = proc->refs_by_node.rb_node;
	struct cbinder_ref *ref;

	lockdep_assert_held(&proc->ctx->lock);
	while (n) {
		ref = rb_entry(n, struct cbinder_ref, rb_node_node);
		if (node < ref->node)
			n = n->rb_left;
		else if (node > ref->node)
			n = n->rb_right;
		else
			return ref;
	}
	return NULL;
}

/**
 * cbinder_get_ref_locked() - find a process's reference by handle
 * @proc: holder
 * @desc: the handle
 * @need_strong: only a reference with a strong count will do
 *
 * A weak handle names an object that may already be gone in user space:
 * it may not be called, passed as a strong handle, or counted strongly.
 *
 * Context: ctx->lock held.
 * Return: the reference or NULL.
 */
struct cbinder_ref *cbinder_get_ref_locked(struct cbinder_proc *proc, u32 desc,
					   bool need_strong)
{
	struct rb_node *n = proc->refs_by_desc.rb_node;
	struct cbinder_ref *ref;

	lockdep_assert_held(&proc->ctx->lock);
	while (n) {
		ref = rb_entry(n, struct cbinder_ref, rb_node_desc);
		if (desc < ref->desc)
			n = n->rb_left;
		else if (desc > ref->desc)
			n = n->rb_right;
		else
			return need_strong && !ref->strong ? NULL : ref;
	}
	return NULL;
}

/* The first reference with a handle of at least @desc, or NULL. */
static struct rb_node *cbinder_ref_from_desc_locked(struct cbinder_proc *proc,
						    u32 desc)
{
	struct rb_node *n = proc->refs_by_desc.rb_node, *found = NULL;
	struct cbinder_ref *ref;

	lockdep_assert_held(&proc->ctx->lock);
	while (n) {
		ref = rb_entry(n, struct cbinder_ref, rb_node_desc);
		if (ref->desc >= desc) {
			found = n;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return found;
}

/*
 * Link @ref, with the lowest free handle: 0 for the manager if it is free,
 * as the kernel's binder does. It is not after the manager restarted while
 * the process still holds its reference on the old one; handle 0 stays
 * that reference's.
 */
static void cbinder_insert_ref_locked(struct cbinder_proc *proc,
				      struct cbinder_ref *ref,
				      struct cbinder_node *node)
{
	struct cbinder_context *ctx = proc->ctx;
	struct rb_node **p, *parent = NULL;
	struct cbinder_ref *r;
	struct rb_node *n;
	u32 desc;

	lockdep_assert_held(&ctx->lock);
	/*
	 * Every handle from 1 below proc->desc_hint is taken: look from
	 * there, not from the first handle, so that a process with many
	 * references does not make each new one a walk of all of them under
	 * the spinlock. (Release handle 1 and allocate twice: the second
	 * still walks the handles above; a bitmap as the kernel's would
	 * bound that, at the cost of allocating under the lock.)
	 */
	if (node == ctx->mgr_node && !cbinder_get_ref_locked(proc, 0, false)) {
		desc = 0;
	} else {
		desc = max(proc->desc_hint, 1U);
		for (n = cbinder_ref_from_desc_locked(proc, desc); n;
		     n = rb_next(n)) {
			r = rb_entry(n, struct cbinder_ref, rb_node_desc);
			if (r->desc != desc)
				break;
			desc++;
		}
		proc->desc_hint = desc + 1;
	}
	ref->proc = proc;
	ref->node = node;
	ref->desc = desc;

	p = &proc->refs_by_node.rb_node;
	while (*p) {
		parent = *p;
		r = rb_entry(parent, struct cbinder_ref, rb_node_node);
		p = node < r->node ? &parent->rb_left : &parent->rb_right;
	}
	rb_link_node(&ref->rb_node_node, parent, p);
	rb_insert_color(&ref->rb_node_node, &proc->refs_by_node);

	parent = NULL;
	p = &proc->refs_by_desc.rb_node;
	while (*p) {
		parent = *p;
		r = rb_entry(parent, struct cbinder_ref, rb_node_desc);
		p = desc < r->desc ? &parent->rb_left : &parent->rb_right;
	}
	rb_link_node(&ref->rb_node_desc, parent, p);
	rb_insert_color(&ref->rb_node_desc, &proc->refs_by_desc);

	hlist_add_head(&ref->node_entry, &node->refs);
	atomic_long_inc(&ctx->bc->refs);
}

static int cbinder_ref_inc_locked(struct cbinder_ref *ref, bool strong,
				  struct cbinder_thread *target)
{
	int ret;

	lockdep_assert_held(&ref->proc->ctx->lock);
	if (strong) {
		if (!ref->strong) {
			ret = cbinder_inc_node_locked(ref->node, true, true,
						      target);
			if (ret)
				return ret;
		}
		ref->strong++;
	} else {
		if (!ref->weak) {
			ret = cbinder_inc_node_locked(ref->node, false, true,
						      target);
			if (ret)
				return ret;
		}
		ref->weak++;
	}
	return 0;
}

/* Returns true if the reference is now unused and has been freed. */
static bool cbinder_ref_dec_locked(struct cbinder_ref *ref, bool strong)
{
	lockdep_assert_held(&ref->proc->ctx->lock);
	if (strong) {
		if (!ref->strong)
			return false;
		if (!--ref->strong)
			cbinder_dec_node_locked(ref->node, true, true);
	} else {
		if (!ref->weak)
			return false;
		if (!--ref->weak)
			cbinder_dec_node_locked(ref->node, false, true);
	}
	if (ref->strong || ref->weak)
		return false;
	cbinder_release_ref_locked(ref);
	return true;
}

/**
 * cbinder_inc_ref_for_node_locked() - give a process a count on a node
 * @proc: the process to hold the reference
 * @node: the node
 * @strong: a strong count, else weak
 * @target: as for cbinder_inc_node_locked()
 * @new_ref: zeroed memory for a reference the caller allocated; set to
 *	NULL when used
 * @refp: the reference, on success
 *
 * Context: ctx->lock held.
 * Return: 0, -EAGAIN if a new reference is needed and @new_ref is NULL,
 * or -EINVAL as cbinder_inc_node_locked() (a new reference is then
 * dropped again).
 */
int cbinder_inc_ref_for_node_locked(struct cbinder_proc *proc,
				    struct cbinder_node *node, bool strong,
				    struct cbinder_thread *target,
				    struct cbinder_ref **new_ref,
				    struct cbinder_ref **refp)
{
	struct cbinder_ref *ref;
	int ret;

	lockdep_assert_held(&proc->ctx->lock);
	ref = cbinder_get_ref_for_node_locked(proc, node);
	if (!ref) {
		if (!*new_ref)
			return -EAGAIN;
		ref = *new_ref;
		*new_ref = NULL;
		cbinder_insert_ref_locked(proc, ref, node);
	}
	ret = cbinder_ref_inc_locked(ref, strong, target);
	if (ret) {
		if (!ref->strong && !ref->weak)
			cbinder_release_ref_locked(ref);
		return ret;
	}
	*refp = ref;
	return 0;
}

/**
 * cbinder_update_ref_locked() - BC_INCREFS, BC_ACQUIRE, BC_RELEASE,
 *	BC_DECREFS
 * @proc: the process
 * @desc: handle
 * @increment: increment, else decrement
 * @strong: the strong count, else the weak
 * @new_ref: as for cbinder_inc_ref_for_node_locked()
 *
 * Handle 0 names the context manager even before the process holds a
 * reference on it.
 *
 * Context: ctx->lock held.
 * Return: 0, -EAGAIN (allocate @new_ref and retry), -EPERM when the
 * context manager names itself, or -EINVAL for an unknown handle or a
 * count that is already zero.
 */
int cbinder_update_ref_locked(struct cbinder_proc *proc, u32 desc,
			      bool increment, bool strong,
			      struct cbinder_ref **new_ref)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_ref *ref;
	int ret;

	lockdep_assert_held(&ctx->lock);
	/*
	 * Taking a reference on handle 0 means the manager of now, as in the
	 * kernel's binder: not an older reference that kept handle 0 when
	 * the manager it named died (the new one's is then another handle).
	 */
	if (desc == 0 && increment && ctx->mgr_node) {
		/* The manager may not take references on itself. */
		if (ctx->mgr_node->proc == proc)
			return -EPERM;
		ret = cbinder_inc_ref_for_node_locked(proc, ctx->mgr_node,
						      strong, NULL, new_ref,
						      &ref);
		if (!ret || ret == -EAGAIN)
			return ret;
	}
	ref = cbinder_get_ref_locked(proc, desc, strong);
	if (!ref)
		return -EINVAL;
	if (increment)
		return cbinder_ref_inc_locked(ref, strong, NULL);
	if (strong ? !ref->strong : !ref->weak)
		return -EINVAL;
	cbinder_ref_dec_locked(ref, strong);
	return 0;
}

/**
 * cbinder_release_ref_locked() - drop a reference whatever its counts
 * @ref: the reference
 *
 * Context: ctx->lock held.
 */
void cbinder_release_ref_locked(struct cbinder_ref *ref)
{
	struct cbinder_proc *proc = ref->proc;
	struct cbinder_node *node = ref->node;
	struct cbinder_death *death = ref->death;
	struct cbinder_freeze *freeze = ref->freeze;

	lockdep_assert_held(&proc->ctx->lock);
	rb_erase(&ref->rb_node_desc, &proc->refs_by_desc);
	rb_erase(&ref->rb_node_node, &proc->refs_by_node);
	if (ref->desc && ref->desc < proc->desc_hint)
		proc->desc_hint = ref->desc;
	atomic_long_dec(&proc->ctx->bc->refs);
	if (death && death->work.type == CBINDER_WORK_DEAD_BINDER_AND_CLEAR) {
		/* Cleared: still told, then its DONE gets the clear's. */
		death->ref = NULL;
	} else if (death) {
		cbinder_dequeue_work_locked(proc, &death->work);
		kfree(death);
	}
	if (freeze && freeze->work.type == CBINDER_WORK_CLEAR_FREEZE_NOTIFICATION) {
		/* Cleared while told: DONE gets the clear's, as above. */
		freeze->ref = NULL;
	} else if (freeze) {
		cbinder_dequeue_work_locked(proc, &freeze->work);
		kfree(freeze);
	}
	/* Still linked, the node cannot go before the weak side is done. */
	if (ref->strong)
		cbinder_dec_node_locked(node, true, true);
	hlist_del(&ref->node_entry);
	kfree(ref);
	cbinder_dec_node_locked(node, false, true);
}

/**
 * cbinder_request_death() - BC_REQUEST_DEATH_NOTIFICATION and
 *	BC_CLEAR_DEATH_NOTIFICATION
 * @proc: the process
 * @thread: the calling thread
 * @cmd: which
 * @desc: handle
 * @cookie: user space's cookie
 *
 * Misuse (unknown handle, a second request, a clear that matches nothing)
 * is ignored as the kernel's binder ignores it.
 *
 * Context: process context, no locks held.
 * Return: 0, -EINVAL for ignored misuse, -ENOMEM.
 */
int cbinder_request_death(struct cbinder_proc *proc,
			  struct cbinder_thread *thread, u32 cmd,
			  u32 desc, binder_uintptr_t cookie)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_death *death = NULL;
	struct cbinder_ref *ref;
	int ret = 0;

	if (cmd == BC_REQUEST_DEATH_NOTIFICATION) {
		death = cask_memcg_kzalloc(proc->memcg, sizeof(*death),
					   GFP_KERNEL_ACCOUNT);
		if (!death)
			return -ENOMEM;
		INIT_LIST_HEAD(&death->work.entry);
		death->cookie = cookie;
	}

	spin_lock(&ctx->lock);
	ref = cbinder_get_ref_locked(proc, desc, false);
	if (!ref) {
		ret = -EINVAL;
		goto unlock;
	}
	if (cmd == BC_REQUEST_DEATH_NOTIFICATION) {
		if (ref->death) {
			ret = -EINVAL;
			goto unlock;
		}
		ref->death = death;
		death->ref = ref;
		death = NULL;
		/*
		 * On the process, as the kernel's binder since 2017: a notice
		 * on a thread's own list would be freed from under it when
		 * the reference goes (cbinder_release_ref_locked()), and the
		 * thread was told it had work.
		 */
		if (!ref->node->proc) {
			ref->death->work.type = CBINDER_WORK_DEAD_BINDER;
			cbinder_enqueue_proc_work_locked(proc, &ref->death->work,
							 false);
		}
		goto unlock;
	}
	if (!ref->death || ref->death->cookie != cookie ||
	    ref->death->work.type == CBINDER_WORK_DEAD_BINDER_AND_CLEAR) {
		ret = -EINVAL;
		goto unlock;
	}
	death = ref->death;
	if (list_empty(&death->work.entry)) {
		ref->death = NULL;
		death->ref = NULL;
		death->work.type = CBINDER_WORK_CLEAR_DEATH_NOTIFICATION;
		/* Its own looper state: only it writes that. */
		if (thread->looper & (CBINDER_LOOPER_REGISTERED |
				      CBINDER_LOOPER_ENTERED))
			cbinder_enqueue_thread_work_locked(thread, &death->work,
							   false);
		else
			cbinder_enqueue_proc_work_locked(proc, &death->work,
							 false);
	} else {
		/*
		 * Queued or delivered, not acknowledged: clear after DONE,
		 * and until then the reference keeps it (no new request).
		 * The kernel's binder takes a new one at once, and so lets
		 * request, read and clear grow delivered_death for ever.
		 */
		death->work.type = CBINDER_WORK_DEAD_BINDER_AND_CLEAR;
	}
	death = NULL;
unlock:
	spin_unlock(&ctx->lock);
	kfree(death);
	return ret;
}

/**
 * cbinder_dead_binder_done() - BC_DEAD_BINDER_DONE
 * @proc: the process
 * @thread: the calling thread
 * @cookie: the notification's cookie
 *
 * Context: process context, no locks held.
 * Return: 0, or -EINVAL if no delivered notification has @cookie.
 */
int cbinder_dead_binder_done(struct cbinder_proc *proc,
			     struct cbinder_thread *thread,
			     binder_uintptr_t cookie)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_death *death;
	struct cbinder_work *w;
	int ret = -EINVAL;

	spin_lock(&ctx->lock);
	list_for_each_entry(w, &proc->delivered_death, entry) {
		death = container_of(w, struct cbinder_death, work);
		if (death->cookie != cookie)
			continue;
		list_del_init(&w->entry);
		if (w->type == CBINDER_WORK_DEAD_BINDER_AND_CLEAR) {
			if (death->ref)
				death->ref->death = NULL;
			death->ref = NULL;
			w->type = CBINDER_WORK_CLEAR_DEATH_NOTIFICATION;
			/* As in cbinder_request_death(). */
			if (thread->looper & (CBINDER_LOOPER_REGISTERED |
					      CBINDER_LOOPER_ENTERED))
				cbinder_enqueue_thread_work_locked(thread, w,
								   false);
			else
				cbinder_enqueue_proc_work_locked(proc, w, false);
		}
		ret = 0;
		break;
	}
	spin_unlock(&ctx->lock);
	return ret;
}

/**
 * cbinder_freeze_changed_locked() - tell a reference's holder of its node's
 *	process's new freeze state
 * @ref: a reference to a node of the process just frozen or thawed
 * @is_frozen: the new state
 *
 * One notice at a time, as the kernel's binder: queued if none is, its
 * state updated if one is queued, told again after DONE if one was told
 * with another state.
 *
 * Context: ctx->lock held.
 */
void cbinder_freeze_changed_locked(struct cbinder_ref *ref, bool is_frozen)
{
	struct cbinder_freeze *freeze = ref->freeze;

	lockdep_assert_held(&ref->proc->ctx->lock);
	if (!freeze || freeze->work.type != CBINDER_WORK_FROZEN_BINDER)
		return;
	if (list_empty(&freeze->work.entry)) {
		freeze->is_frozen = is_frozen;
		cbinder_enqueue_proc_work_locked(ref->proc, &freeze->work,
						 false);
		return;
	}
	if (freeze->sent && freeze->is_frozen != is_frozen)
		freeze->resend = true;
	freeze->is_frozen = is_frozen;
}

/**
 * cbinder_request_freeze() - BC_REQUEST_FREEZE_NOTIFICATION and
 *	BC_CLEAR_FREEZE_NOTIFICATION
 * @proc: the process
 * @cmd: which
 * @desc: handle
 * @cookie: user space's cookie
 *
 * A request is answered at once with the node's process's current state
 * (nothing for a dead node), then at every change; a clear with
 * BR_CLEAR_FREEZE_NOTIFICATION_DONE, after DONE for a notice told.
 * The notice is charged to @proc's memory cgroup, as a death notice.
 *
 * A request on a handle whose notice was cleared but awaits DONE is taken
 * at once, as the kernel's binder takes it; the cleared notice is told as
 * cleared after its DONE.
 *
 * Context: process context, no locks held.
 * Return: 0, -EINVAL for misuse (unknown handle, a second request, a
 * clear that matches nothing; the kernel's binder stops the write on
 * them), -EBUSY when CBINDER_MAX_FREEZE_CLEARING cleared notices await
 * their DONE, -ENOMEM.
 */
int cbinder_request_freeze(struct cbinder_proc *proc, u32 cmd, u32 desc,
			   binder_uintptr_t cookie)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_freeze *freeze = NULL, *prev;
	struct cbinder_ref *ref;
	int ret = 0;

	if (cmd == BC_REQUEST_FREEZE_NOTIFICATION) {
		freeze = cask_memcg_kzalloc(proc->memcg, sizeof(*freeze),
					    GFP_KERNEL_ACCOUNT);
		if (!freeze)
			return -ENOMEM;
		INIT_LIST_HEAD(&freeze->work.entry);
		freeze->work.type = CBINDER_WORK_FROZEN_BINDER;
		freeze->cookie = cookie;
	}

	spin_lock(&ctx->lock);
	ref = cbinder_get_ref_locked(proc, desc, false);
	if (!ref) {
		ret = -EINVAL;
		goto unlock;
	}
	if (cmd == BC_REQUEST_FREEZE_NOTIFICATION) {
		prev = ref->freeze;
		if (prev && prev->work.type != CBINDER_WORK_CLEAR_FREEZE_NOTIFICATION) {
			ret = -EINVAL;
			goto unlock;
		}
		if (prev) {
			/*
			 * Cleared while told, awaiting DONE: the kernel's
			 * binder takes a new request at once, and libbinder
			 * relies on it (a callback removed and added again
			 * before its binder thread sent DONE; a failed write
			 * aborts that thread). The old notice leaves the
			 * reference and is told as cleared after its DONE.
			 * How many may wait so is capped: DONE searches them
			 * under the context's lock.
			 */
			if (proc->freeze_clearing >= CBINDER_MAX_FREEZE_CLEARING) {
				ret = -EBUSY;
				goto unlock;
			}
			prev->ref = NULL;
		}
		ref->freeze = freeze;
		freeze->ref = ref;
		if (ref->node->proc) {
			freeze->is_frozen = ref->node->proc->notified_frozen;
			cbinder_enqueue_proc_work_locked(proc, &freeze->work,
							 false);
		}
		freeze = NULL;
		goto unlock;
	}
	freeze = ref->freeze;
	if (!freeze || freeze->cookie != cookie ||
	    freeze->work.type != CBINDER_WORK_FROZEN_BINDER) {
		freeze = NULL;
		ret = -EINVAL;
		goto unlock;
	}
	freeze->work.type = CBINDER_WORK_CLEAR_FREEZE_NOTIFICATION;
	proc->freeze_clearing++;
	if (freeze->sent) {
		/* Told, not acknowledged: cleared on DONE. */
		freeze->resend = true;
	} else {
		/* Queued, it is told as cleared; else queued now. */
		ref->freeze = NULL;
		freeze->ref = NULL;
		if (list_empty(&freeze->work.entry))
			cbinder_enqueue_proc_work_locked(proc, &freeze->work,
							 false);
	}
	freeze = NULL;
unlock:
	spin_unlock(&ctx->lock);
	kfree(freeze);
	return ret;
}

/**
 * cbinder_freeze_done() - BC_FREEZE_NOTIFICATION_DONE
 * @proc: the process
 * @cookie: the notice's cookie
 *
 * Context: process context, no locks held.
 * Return: 0, or -EINVAL if no notice told has @cookie.
 */
int cbinder_freeze_done(struct cbinder_proc *proc, binder_uintptr_t cookie)
{
	struct cbinder_context *ctx = proc->ctx;
	struct cbinder_freeze *freeze;
	struct cbinder_work *w;
	int ret = -EINVAL;

	spin_lock(&ctx->lock);
	list_for_each_entry(w, &proc->delivered_freeze, entry) {
		freeze = container_of(w, struct cbinder_freeze, work);
		if (freeze->cookie != cookie)
			continue;
		list_del_init(&w->entry);
		freeze->sent = false;
		if (freeze->resend) {
			freeze->resend = false;
			if (w->type == CBINDER_WORK_CLEAR_FREEZE_NOTIFICATION) {
				if (freeze->ref)
					freeze->ref->freeze = NULL;
				freeze->ref = NULL;
			}
			cbinder_enqueue_proc_work_locked(proc, w, false);
		}
		ret = 0;
		break;
	}
	spin_unlock(&ctx->lock);
	return ret;
}
