// SPDX-License-Identifier: GPL-2.0
/*
 * Where a reader is in the rings: the next entry it may see in one ring,
 * the earliest one over every cell for a merged reader, and keeping a merged
 * reader's cursors in step with the cells that exist. Nothing here knows
 * about files or takes cell references; logger.c does, around these.
 *
 * Suffixes: _locked runs under the ring's spinlock, _rlocked under the
 * reader's mutex (see main.c for the order, logger.c for the files).
 *
 * Readers that may see only their own uid skip other uids' entries. The
 * skip is kept (the position is stored back), since those entries never
 * become visible to that reader, and it is done at most
 * %CASK_LOG_SCAN_BATCH entries per hold of the spinlock: a 16 MiB ring of
 * small entries would otherwise be scanned with preemption off, on every
 * poll.
 */
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "logger.h"

/**
 * cask_log_scan_locked() - find the next entry a reader may see, a batch
 * @r: the reader, for its uid filter
 * @ring: the ring
 * @off: the position, moved to the entry found or past those looked at
 * @hdr: the entry's header, if one is found
 *
 * Context: under @ring->lock.
 * Return: whether an entry was found, none is left, or the batch ended.
 */
enum cask_log_scan cask_log_scan_locked(const struct cask_log_reader *r,
					const struct cask_log_ring *ring,
					u64 *off, struct cask_log_hdr *hdr)
{
	unsigned int n = 0;

	lockdep_assert_held(&ring->lock);
	*off = cask_ring_catch_up_locked(ring, *off);
	while (*off < ring->tail) {
		if (n++ == CASK_LOG_SCAN_BATCH)
			return CASK_LOG_SCAN_MORE;
		cask_ring_copy_out(ring, *off, hdr, CASK_LOG_HDR_LEN);
		if (r->sees_all || hdr->kuid == __kuid_val(r->euid))
			return CASK_LOG_SCAN_FOUND;
		*off += CASK_LOG_HDR_LEN + hdr->len;
	}
	return CASK_LOG_SCAN_NONE;
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_scan_locked);

/**
 * cask_log_seek() - move to the next entry a reader may see
 * @r: the reader
 * @ring: the ring
 * @off: the position, moved to the entry found or to the ring's tail
 * @hdr: the entry's header, if one is found
 *
 * The spinlock is dropped between batches. *@off always stays a valid
 * position: an entry overwritten meanwhile is caught up with by the next
 * batch, and the caller of a found entry checks again when taking it.
 *
 * Context: process context, may sleep; the caller owns *@off.
 * Return: true if an entry was found; false if none is left, or if the
 * task is being killed (the next call goes on from *@off).
 */
bool cask_log_seek(const struct cask_log_reader *r, struct cask_log_ring *ring,
		   u64 *off, struct cask_log_hdr *hdr)
{
	enum cask_log_scan res;

	for (;;) {
		spin_lock(&ring->lock);
		res = cask_log_scan_locked(r, ring, off, hdr);
		spin_unlock(&ring->lock);
		if (res != CASK_LOG_SCAN_MORE)
			return res == CASK_LOG_SCAN_FOUND;
		/*
		 * Writers may outrun the scan; let the caller be killed. Only
		 * a fatal signal: poll() must not call a ring empty because
		 * of some other pending signal.
		 */
		if (fatal_signal_pending(current))
			return false;
		cond_resched();
	}
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_seek);

/**
 * cask_log_peek_rlocked() - the next entry of a one-ring reader
 * @r: the reader, not merged
 * @hdr: the entry's header, if there is one
 *
 * Used by poll() and GET_NEXT_ENTRY_LEN. The position moves past entries
 * of other uids and past overwritten ones, as a read would: neither can
 * ever be read by @r.
 *
 * Context: process context, under @r->lock.
 * Return: whether there is an entry.
 */
bool cask_log_peek_rlocked(struct cask_log_reader *r, struct cask_log_hdr *hdr)
{
	lockdep_assert_held(&r->lock);
	return cask_log_seek(r, &r->rlc->rings[r->log], &r->off, hdr);
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_peek_rlocked);

/**
 * cask_log_earlier() - the merge order of two entries of different cells
 * @a: one entry's header
 * @a_id: the id of its cell
 * @b: the other entry's header
 * @b_id: the id of its cell
 *
 * Earlier write time first; at the same time the older cell first, so that
 * the order does not depend on the order of the cursors.
 *
 * Context: any.
 * Return: true if @a comes before @b.
 */
bool cask_log_earlier(const struct cask_log_hdr *a, u64 a_id,
		      const struct cask_log_hdr *b, u64 b_id)
{
	if (a->sec != b->sec)
		return a->sec < b->sec;
	if (a->nsec != b->nsec)
		return a->nsec < b->nsec;
	return a_id < b_id;
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_earlier);

/**
 * cask_log_merged_next_rlocked() - the cursor with the earliest next entry
 * @r: a merged reader whose cursors have their cells (logger.c)
 * @hdr: the entry's header, if there is one
 *
 * Every cursor is moved to its own next entry on the way.
 *
 * Context: process context, under @r->lock.
 * Return: the cursor, or NULL if no cell has an entry for @r.
 */
struct cask_log_cursor *cask_log_merged_next_rlocked(struct cask_log_reader *r,
						     struct cask_log_hdr *hdr)
{
	struct cask_log_cursor *cur, *best = NULL;
	struct cask_log_hdr h;

	lockdep_assert_held(&r->lock);
	list_for_each_entry(cur, &r->cursors, node) {
		if (!cask_log_seek(r, &cur->lc->rings[r->log], &cur->off, &h))
			continue;
		if (!best || cask_log_earlier(&h, cur->id, hdr, best->id)) {
			best = cur;
			*hdr = h;
		}
	}
	return best;
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_merged_next_rlocked);

/**
 * cask_log_sync_start() - begin matching cursors to cells
 * @s: the walk
 * @cursors: the reader's cursors, ascending by cell id
 *
 * Feed every cell that exists to cask_log_sync_cell() in ascending id
 * order, then call cask_log_sync_end(): one pass over both lists.
 *
 * Context: under the lock of the reader owning @cursors.
 */
void cask_log_sync_start(struct cask_log_sync *s, struct list_head *cursors)
{
	s->cursors = cursors;
	s->pos = cursors->next;
	s->err = 0;
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_sync_start);

static void cask_log_cursor_free(struct cask_log_cursor *cur)
{
	list_del(&cur->node);
	kfree(cur);
}

/**
 * cask_log_sync_cell() - match the next cell to its cursor
 * @s: the walk
 * @id: the cell's id, larger than that of the cell before
 * @linked: whether the cell can still be looked up
 *
 * Cursors of smaller ids are passed over: ids only grow and the walk
 * includes every cell not yet released, so their cells are gone and they
 * are freed. A linked cell without a cursor gets one at the ring's oldest
 * entry; an unlinked cell gets none (it is on its way out, as it was when
 * the reader chose to merge), but keeps the one it has until released.
 *
 * Context: process context, under the lock of the reader owning the
 * cursors.
 * Return: the cell's cursor, or NULL if it has none (-ENOMEM is then kept
 * for cask_log_sync_end() if one could not be made).
 */
struct cask_log_cursor *cask_log_sync_cell(struct cask_log_sync *s, u64 id,
					   bool linked)
{
	struct cask_log_cursor *cur;

	while (s->pos != s->cursors) {
		cur = list_entry(s->pos, struct cask_log_cursor, node);
		if (cur->id > id)
			break;
		s->pos = s->pos->next;
		if (cur->id == id)
			return cur;
		cask_log_cursor_free(cur);
	}
	if (!linked)
		return NULL;
	/* Each cell a merged reader reads costs it a cursor: its memcg pays. */
	cur = kzalloc(sizeof(*cur), GFP_KERNEL_ACCOUNT);
	if (!cur) {
		s->err = -ENOMEM;
		return NULL;
	}
	cur->id = id;
	/* Before the first cursor of a larger id: the list stays sorted. */
	list_add_tail(&cur->node, s->pos);
	return cur;
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_sync_cell);

/**
 * cask_log_sync_end() - finish matching cursors to cells
 * @s: the walk
 *
 * The cursors after the last cell seen belong to released cells: freed.
 *
 * Context: under the lock of the reader owning the cursors.
 * Return: 0, or -ENOMEM if a cell got no cursor.
 */
int cask_log_sync_end(struct cask_log_sync *s)
{
	struct cask_log_cursor *cur;

	while (s->pos != s->cursors) {
		cur = list_entry(s->pos, struct cask_log_cursor, node);
		s->pos = s->pos->next;
		cask_log_cursor_free(cur);
	}
	return s->err;
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_sync_end);

/**
 * cask_log_cursors_free() - free every cursor
 * @cursors: the list, whose cursors hold no cell (between calls)
 *
 * Context: under the lock of the reader owning @cursors.
 */
void cask_log_cursors_free(struct list_head *cursors)
{
	struct cask_log_cursor *cur, *tmp;

	list_for_each_entry_safe(cur, tmp, cursors, node) {
		WARN_ON_ONCE(cur->lc);
		cask_log_cursor_free(cur);
	}
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_cursors_free);
