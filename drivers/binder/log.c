// SPDX-License-Identifier: GPL-2.0
/*
 * cask_binder's transaction logs: the last CBINDER_LOG_SIZE transactions
 * of a cell, and its last failed ones, that binderfs's binder_logs/
 * prints (debugfs.c).
 *
 * Every transaction of a cell adds an entry to the cell's log (and a
 * failed one to its failed log), so a lock on the log would be one that
 * every process of every context of the cell meets.
 * Instead a writer claims the entry's number with one atomic increment,
 * owns the slot it lands in by a cmpxchg of the slot's seq to
 * CBINDER_LOG_BUSY, fills it and publishes the number with a release. A
 * reader shows a slot only when its seq (read with acquire) is the number
 * it expects there, both before and after copying it out, as a seqcount's
 * reader does: an entry still being written, or rewritten by a newer
 * writer while copied, is left out rather than shown torn. Two writers
 * meet on one slot only when one is CBINDER_LOG_SIZE entries behind the
 * other; one of them then gives its entry up instead of waiting. The log
 * is for debugging: it may lose an entry under such load, but never shows
 * a wrong one or one out of order.
 */
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/pid.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "binder.h"

/**
 * cbinder_log_begin() - start the log entry of a transaction
 * @e: the entry, on the sender's stack
 * @proc: the sender
 * @thread: its thread
 * @tr: what it sent
 * @reply: a reply
 * @debug_id: the transaction's
 *
 * Context: any.
 */
void cbinder_log_begin(struct cbinder_log_entry *e, struct cbinder_proc *proc,
		       struct cbinder_thread *thread,
		       const struct binder_transaction_data *tr, bool reply,
		       int debug_id)
{
	memset(e, 0, sizeof(*e));
	e->debug_id = debug_id;
	e->call_type = reply ? 2 : !!(tr->flags & TF_ONE_WAY);
	e->from_proc = pid_nr(proc->pid);
	e->from_thread = thread->pid;
	e->handle = tr->target.handle;
	e->data_size = tr->data_size;
	e->offsets_size = tr->offsets_size;
	strscpy(e->context, proc->ctx->name ?: "", sizeof(e->context));
}

/**
 * cbinder_log_target() - note the target of a logged transaction
 * @e: the entry
 * @to: the target process (held by the caller)
 * @to_thread: the target thread, or NULL
 * @node: the target node (held), or NULL for a reply
 *
 * Context: any.
 */
void cbinder_log_target(struct cbinder_log_entry *e, struct cbinder_proc *to,
			struct cbinder_thread *to_thread,
			struct cbinder_node *node)
{
	e->to_proc = to ? pid_nr(to->pid) : 0;
	e->to_thread = to_thread ? to_thread->pid : 0;
	e->to_node = node ? node->debug_id : 0;
}

/* The slot numbers wrap with the claims: ULONG_MAX + 1 is a multiple. */
static_assert((CBINDER_LOG_SIZE & (CBINDER_LOG_SIZE - 1)) == 0);

/* 0 means "never written" and CBINDER_LOG_BUSY "being written". */
static bool cbinder_log_seq_valid(unsigned long seq)
{
	return seq && seq != CBINDER_LOG_BUSY;
}

static struct cbinder_log_slot *cbinder_log_slot(struct cbinder_txn_log *log,
						 unsigned long seq)
{
	return &log->ring[seq % CBINDER_LOG_SIZE];
}

/*
 * May the writer of entry @seq take a slot whose seq is @old? Not while
 * another writer fills it: one a whole ring behind, or ahead if this one
 * was preempted since its claim. Nor when such a writer has passed it and
 * left a newer entry there: an older one must not replace it.
 */
static bool cbinder_log_may_take(unsigned long old, unsigned long seq)
{
	if (old == CBINDER_LOG_BUSY)
		return false;
	return !old || (long)(old - seq) < 0;
}

static void cbinder_log_add(struct cbinder_txn_log *log,
			    const struct cbinder_log_entry *e)
{
	unsigned long seq = atomic_long_inc_return(&log->head);
	struct cbinder_log_slot *slot = cbinder_log_slot(log, seq);
	unsigned long old = READ_ONCE(slot->seq);

	/*
	 * A writer that may not take its slot gives its entry up rather than
	 * wait: this runs for every transaction. So does one whose number
	 * cannot be told from a slot's states (two numbers per wrap of the
	 * counter).
	 */
	if (!cbinder_log_seq_valid(seq) || !cbinder_log_may_take(old, seq) ||
	    !try_cmpxchg(&slot->seq, &old, CBINDER_LOG_BUSY))
		return;
	/*
	 * The successful cmpxchg is fully ordered: a reader that sees any of
	 * the stores below sees BUSY on its second look at the slot's seq.
	 */
	slot->entry = *e;
	/* The whole entry before its number, for cbinder_log_read()'s acquire. */
	smp_store_release(&slot->seq, seq);
}

/**
 * cbinder_log_end() - log a transaction's outcome
 * @bc: the cell of its context
 * @e: the entry
 * @return_error: BR_OK or the BR_ code it failed with
 * @return_error_param: the errno of a failure
 *
 * Context: any; takes no lock and never waits.
 */
void cbinder_log_end(struct cbinder_cell *bc, struct cbinder_log_entry *e,
		     u32 return_error, int return_error_param)
{
	e->return_error = return_error;
	e->return_error_param = return_error_param;
	cbinder_log_add(&bc->txn_log, e);
	if (return_error != BR_OK)
		cbinder_log_add(&bc->failed_log, e);
}
EXPORT_SYMBOL_IF_KUNIT(cbinder_log_end);

/**
 * cbinder_log_read() - copy out one entry of a transaction log
 * @log: the log
 * @seq: the entry's number
 * @e: where to
 *
 * Context: any; takes no lock and never waits.
 * Return: true if @seq's slot held it, complete and unchanged while
 * copied; false if not (never written, being written, or overwritten).
 */
bool cbinder_log_read(struct cbinder_txn_log *log, unsigned long seq,
		      struct cbinder_log_entry *e)
{
	struct cbinder_log_slot *slot = cbinder_log_slot(log, seq);

	if (!cbinder_log_seq_valid(seq))
		return false;
	/* Pairs with cbinder_log_add()'s release: the entry, then its number. */
	if (smp_load_acquire(&slot->seq) != seq)
		return false;
	/*
	 * A writer a ring ahead may be filling the slot while it is copied
	 * (it took it after the check above): the copy may be torn, and the
	 * check below, which that writer's BUSY fails, throws it away.
	 */
	data_race(memcpy(e, &slot->entry, sizeof(*e)));
	smp_rmb();	/* the copy, then the second look at the slot's seq */
	return READ_ONCE(slot->seq) == seq;
}
