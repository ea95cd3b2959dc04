// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder's write loop, the write half of BINDER_WRITE_READ: the BC_
 * commands user space writes, each read once and handed to the file that
 * does it (reference counts and notices to node.c, transactions and
 * buffers to txn.c), the looper states kept here.
 *
 * Locking: ctx->lock (binder.h) around the node and reference operations,
 * the inner lock for a thread's looper state; neither is held across a
 * user copy or an allocation that may sleep.
 */
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "binder.h"

/**
 * cbinder_thread_write() - the write half of BINDER_WRITE_READ
 * @proc: the writer's process
 * @thread: the writing thread (current's)
 * @binder_buffer: user address of the commands
 * @size: their size
 * @consumed: bytes of them already done; updated after each command
 *
 * Context: process context of @thread, no locks held; may sleep.
 * Return: 0, or the negative errno of the command that stopped the write
 * (*@consumed says how far it went).
 */
int cbinder_thread_write(struct cbinder_proc *proc,
			 struct cbinder_thread *thread,
			 binder_uintptr_t binder_buffer, size_t size,
			 binder_size_t *consumed)
{
	void __user *buffer = u64_to_user_ptr(binder_buffer);
	void __user *ptr = buffer + *consumed;
	void __user *end = buffer + size;
	struct cbinder_context *ctx = proc->ctx;
	u32 cmd;

	while (ptr < end && READ_ONCE(thread->return_error.cmd) == BR_OK) {
		if (get_user(cmd, (u32 __user *)ptr))
			return -EFAULT;
		ptr += sizeof(u32);
		if (_IOC_NR(cmd) < ARRAY_SIZE(proc->ctx->bc->stats_bc))
			atomic_long_inc(&proc->ctx->bc->stats_bc[_IOC_NR(cmd)]);

		switch (cmd) {
		case BC_INCREFS:
		case BC_ACQUIRE:
		case BC_RELEASE:
		case BC_DECREFS: {
			struct cbinder_ref *new_ref = NULL;
			bool strong = cmd == BC_ACQUIRE || cmd == BC_RELEASE;
			bool inc = cmd == BC_INCREFS || cmd == BC_ACQUIRE;
			u32 target;
			int err;

			if (get_user(target, (u32 __user *)ptr))
				return -EFAULT;
			ptr += sizeof(u32);
			spin_lock(&ctx->lock);
			err = cbinder_update_ref_locked(proc, target, inc,
							strong, &new_ref);
			spin_unlock(&ctx->lock);
			if (err == -EAGAIN) {
				new_ref = cask_memcg_kzalloc(proc->memcg, sizeof(*new_ref),
							     GFP_KERNEL_ACCOUNT);
				if (!new_ref)
					break;
				spin_lock(&ctx->lock);
				err = cbinder_update_ref_locked(proc, target,
								inc, strong,
								&new_ref);
				spin_unlock(&ctx->lock);
				kfree(new_ref);
			}
			/* As the kernel's binder: this one stops the write. */
			if (err == -EPERM)
				return -EINVAL;
			if (err)
				pr_debug("%d: refcount %#x on handle %u: %d\n",
					 current->pid, cmd, target, err);
			break;
		}
		case BC_INCREFS_DONE:
		case BC_ACQUIRE_DONE: {
			struct binder_ptr_cookie pc;
			struct cbinder_node *node;
			bool strong = cmd == BC_ACQUIRE_DONE;

			if (copy_from_user(&pc, ptr, sizeof(pc)))
				return -EFAULT;
			ptr += sizeof(pc);
			spin_lock(&ctx->lock);
			node = cbinder_get_node_locked(proc, pc.ptr);
			if (node && node->cookie == pc.cookie &&
			    (strong ? node->pending_strong_ref :
				      node->pending_weak_ref)) {
				if (strong)
					node->pending_strong_ref = 0;
				else
					node->pending_weak_ref = 0;
				cbinder_dec_node_locked(node, strong, false);
			}
			spin_unlock(&ctx->lock);
			break;
		}
		case BC_ATTEMPT_ACQUIRE:
		case BC_ACQUIRE_RESULT:
			pr_debug("%d: unsupported command %#x\n",
				 current->pid, cmd);
			return -EINVAL;
		case BC_FREE_BUFFER: {
			struct cbinder_buffer *buf;
			binder_uintptr_t data_ptr;

			if (get_user(data_ptr, (binder_uintptr_t __user *)ptr))
				return -EFAULT;
			ptr += sizeof(data_ptr);
			buf = cbinder_alloc_prepare_to_free(&proc->alloc,
							    data_ptr);
			if (IS_ERR(buf))
				break;
			cbinder_free_buffer(proc, thread, buf, false);
			break;
		}
		case BC_TRANSACTION_SG:
		case BC_REPLY_SG: {
			struct binder_transaction_data_sg tr;

			if (copy_from_user(&tr, ptr, sizeof(tr)))
				return -EFAULT;
			ptr += sizeof(tr);
			cbinder_transaction(proc, thread, &tr.transaction_data,
					    cmd == BC_REPLY_SG, tr.buffers_size);
			break;
		}
		case BC_TRANSACTION:
		case BC_REPLY: {
			struct binder_transaction_data tr;

			if (copy_from_user(&tr, ptr, sizeof(tr)))
				return -EFAULT;
			ptr += sizeof(tr);
			cbinder_transaction(proc, thread, &tr,
					    cmd == BC_REPLY, 0);
			break;
		}
		case BC_REGISTER_LOOPER:
			spin_lock(&proc->inner_lock);
			if (thread->looper & CBINDER_LOOPER_ENTERED) {
				thread->looper |= CBINDER_LOOPER_INVALID;
			} else if (proc->requested_threads == 0) {
				thread->looper |= CBINDER_LOOPER_INVALID;
			} else {
				proc->requested_threads--;
				proc->requested_threads_started++;
			}
			thread->looper |= CBINDER_LOOPER_REGISTERED;
			spin_unlock(&proc->inner_lock);
			break;
		case BC_ENTER_LOOPER:
			spin_lock(&proc->inner_lock);
			if (thread->looper & CBINDER_LOOPER_REGISTERED)
				thread->looper |= CBINDER_LOOPER_INVALID;
			thread->looper |= CBINDER_LOOPER_ENTERED;
			spin_unlock(&proc->inner_lock);
			break;
		case BC_EXIT_LOOPER:
			spin_lock(&proc->inner_lock);
			thread->looper |= CBINDER_LOOPER_EXITED;
			spin_unlock(&proc->inner_lock);
			break;
		case BC_REQUEST_DEATH_NOTIFICATION:
		case BC_CLEAR_DEATH_NOTIFICATION: {
			u32 target;
			binder_uintptr_t cookie;

			if (get_user(target, (u32 __user *)ptr))
				return -EFAULT;
			ptr += sizeof(u32);
			if (get_user(cookie, (binder_uintptr_t __user *)ptr))
				return -EFAULT;
			ptr += sizeof(cookie);
			if (cbinder_request_death(proc, thread, cmd, target,
						  cookie) == -ENOMEM)
				return -ENOMEM;
			break;
		}
		case BC_DEAD_BINDER_DONE: {
			binder_uintptr_t cookie;

			if (get_user(cookie, (binder_uintptr_t __user *)ptr))
				return -EFAULT;
			ptr += sizeof(cookie);
			cbinder_dead_binder_done(proc, thread, cookie);
			break;
		}
		case BC_REQUEST_FREEZE_NOTIFICATION:
		case BC_CLEAR_FREEZE_NOTIFICATION: {
			struct binder_handle_cookie hc;
			int err;

			if (copy_from_user(&hc, ptr, sizeof(hc)))
				return -EFAULT;
			ptr += sizeof(hc);
			/* Misuse stops the write, as in the kernel's binder. */
			err = cbinder_request_freeze(proc, cmd, hc.handle,
						     hc.cookie);
			if (err)
				return err;
			break;
		}
		case BC_FREEZE_NOTIFICATION_DONE: {
			binder_uintptr_t cookie;
			int err;

			if (get_user(cookie, (binder_uintptr_t __user *)ptr))
				return -EFAULT;
			ptr += sizeof(cookie);
			err = cbinder_freeze_done(proc, cookie);
			if (err)
				return err;
			break;
		}
		default:
			pr_debug("%d: unknown command %#x\n", current->pid, cmd);
			return -EINVAL;
		}
		*consumed = ptr - buffer;
		/*
		 * The buffer may be gigabytes of commands (one page mapped
		 * many times): let others run, and let SIGKILL end the write,
		 * whose consumed part is told as for any other error.
		 */
		cond_resched();
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	return 0;
}
