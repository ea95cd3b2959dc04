// SPDX-License-Identifier: GPL-2.0
/*
 * The ring of one log buffer: entries of a 32-byte header and a payload,
 * packed back to back, wrapping at the end of the buffer. Offsets are
 * 64-bit and only grow, so that "has this reader been lapped?" is a
 * comparison with the head rather than a walk over every reader (as the
 * staging logger had to do on every write).
 *
 * Locking: the _locked functions run under ring->lock, a spinlock never
 * held across a user copy or an allocation; cask_logger_set_size() takes
 * it itself.
 */
#include <linux/compiler.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "logger.h"

/**
 * cask_ring_init() - set up an empty ring without a buffer
 * @ring: the ring
 * @size: its size, a power of two larger than %CASK_LOG_ENTRY_MAX
 *
 * Context: any; the ring is not yet shared.
 */
void cask_ring_init(struct cask_log_ring *ring, u32 size)
{
	spin_lock_init(&ring->lock);
	ring->buf = NULL;
	ring->size = size;
	ring->head = 0;
	ring->tail = 0;
	ring->bytes_written = 0;
	ring->dropped = 0;
	atomic_set(&ring->readers, 0);
	atomic_set(&ring->host_readers, 0);
	init_waitqueue_head(&ring->wq);
}
EXPORT_SYMBOL_IF_KUNIT(cask_ring_init);

/**
 * cask_ring_copy_out() - copy bytes out of the ring
 * @ring: the ring, with a buffer; lock held by the caller
 * @off: logical offset of the first byte, between head and tail
 * @dst: destination
 * @len: byte count, at most the ring's size
 *
 * Context: under @ring->lock.
 */
void cask_ring_copy_out(const struct cask_log_ring *ring, u64 off, void *dst,
			size_t len)
{
	u32 pos = off & (ring->size - 1);
	size_t first = min_t(size_t, len, ring->size - pos);

	memcpy(dst, ring->buf + pos, first);
	memcpy(dst + first, ring->buf, len - first);
}
EXPORT_SYMBOL_IF_KUNIT(cask_ring_copy_out);

static void cask_ring_copy_in(struct cask_log_ring *ring, u64 off,
			      const void *src, size_t len)
{
	u32 pos = off & (ring->size - 1);
	size_t first = min_t(size_t, len, ring->size - pos);

	memcpy(ring->buf + pos, src, first);
	memcpy(ring->buf, src + first, len - first);
}

/**
 * cask_ring_write_locked() - append an entry, dropping the oldest for room
 * @ring: the ring, with a buffer
 * @hdr: the entry's header; @hdr->len bytes of payload follow it
 * @payload: the payload
 *
 * Readers behind the new head notice on their next read
 * (cask_ring_catch_up_locked()).
 *
 * Context: under @ring->lock.
 */
void cask_ring_write_locked(struct cask_log_ring *ring,
			    const struct cask_log_hdr *hdr, const void *payload)
{
	size_t n = CASK_LOG_HDR_LEN + hdr->len;
	struct cask_log_hdr old;

	lockdep_assert_held(&ring->lock);
	while (ring->tail + n - ring->head > ring->size) {
		cask_ring_copy_out(ring, ring->head, &old, CASK_LOG_HDR_LEN);
		ring->head += CASK_LOG_HDR_LEN + old.len;
		ring->dropped++;
	}
	cask_ring_copy_in(ring, ring->tail, hdr, CASK_LOG_HDR_LEN);
	cask_ring_copy_in(ring, ring->tail + CASK_LOG_HDR_LEN, payload, hdr->len);
	ring->tail += n;
	ring->bytes_written += hdr->len;
}
EXPORT_SYMBOL_IF_KUNIT(cask_ring_write_locked);

/**
 * cask_ring_catch_up_locked() - where a reader continues
 * @ring: the ring
 * @off: the reader's offset
 *
 * Context: under @ring->lock.
 * Return: @off, or the oldest entry if @off was overwritten.
 */
u64 cask_ring_catch_up_locked(const struct cask_log_ring *ring, u64 off)
{
	lockdep_assert_held(&ring->lock);
	return max(off, ring->head);
}
EXPORT_SYMBOL_IF_KUNIT(cask_ring_catch_up_locked);

/**
 * cask_ring_flush_locked() - drop every entry
 * @ring: the ring
 *
 * Context: under @ring->lock.
 */
void cask_ring_flush_locked(struct cask_log_ring *ring)
{
	lockdep_assert_held(&ring->lock);
	ring->head = ring->tail;
}
EXPORT_SYMBOL_IF_KUNIT(cask_ring_flush_locked);

/**
 * cask_ring_replace_buf_locked() - install a new, empty buffer
 * @ring: the ring
 * @buf: the new buffer, or NULL to allocate one on the next write
 * @size: its size, a power of two larger than %CASK_LOG_ENTRY_MAX
 *
 * The ring becomes empty; offsets keep growing from the old tail, so
 * readers need no reset.
 *
 * Context: under @ring->lock.
 * Return: the old buffer, for the caller to free outside the lock.
 */
char *cask_ring_replace_buf_locked(struct cask_log_ring *ring, char *buf,
				   u32 size)
{
	char *old = ring->buf;

	lockdep_assert_held(&ring->lock);
	ring->buf = buf;
	WRITE_ONCE(ring->size, size);
	ring->head = ring->tail;
	return old;
}
EXPORT_SYMBOL_IF_KUNIT(cask_ring_replace_buf_locked);

/**
 * cask_ring_alloc_buf() - give a ring its buffer if it has none
 * @ring: the ring
 *
 * The buffer is allocated on the first write rather than with the cell, so
 * that a cell that never logs costs nothing, and it is charged to the
 * writer's memory cgroup: the cell pays for its own logs. The caller takes
 * the lock afterwards and tries again if a resize took the buffer away
 * meanwhile.
 *
 * Context: process context, may sleep; @ring->lock not held.
 * Return: 0, or -ENOMEM.
 */
int cask_ring_alloc_buf(struct cask_log_ring *ring)
{
	char *buf;
	u32 size;

	spin_lock(&ring->lock);
	buf = ring->buf;
	size = ring->size;
	spin_unlock(&ring->lock);
	if (buf)
		return 0;

	buf = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	spin_lock(&ring->lock);
	/* A resize in between wants a buffer of the new size. */
	if (!ring->buf && ring->size == size) {
		ring->buf = buf;
		buf = NULL;
	}
	spin_unlock(&ring->lock);
	kvfree(buf);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cask_ring_alloc_buf);

/**
 * cask_logger_set_size() - give a ring a new size, emptying it
 * @ring: the ring
 * @size: a power of two from %CASK_LOG_SIZE_MIN to %CASK_LOG_SIZE_MAX
 *
 * The new buffer is allocated on the next write.
 *
 * Context: process context.
 * Return: 0 or -EINVAL.
 */
int cask_logger_set_size(struct cask_log_ring *ring, u32 size)
{
	char *old;

	if (!is_power_of_2(size) || size < CASK_LOG_SIZE_MIN ||
	    size > CASK_LOG_SIZE_MAX)
		return -EINVAL;
	spin_lock(&ring->lock);
	old = cask_ring_replace_buf_locked(ring, NULL, size);
	spin_unlock(&ring->lock);
	kvfree(old);
	return 0;
}
