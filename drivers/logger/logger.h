/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask_logger internals, shared by its files and its KUnit suite.
 */
#ifndef _CASK_LOGGER_H
#define _CASK_LOGGER_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/android_logger.h>

struct cask_cell;

enum cask_log_id {
	CASK_LOG_MAIN,
	CASK_LOG_EVENTS,
	CASK_LOG_RADIO,
	CASK_LOG_SYSTEM,
	CASK_LOG_CRASH,
	CASK_LOG_NR,
};

#define CASK_LOG_SIZE_DEFAULT	(256 * 1024)
#define CASK_LOG_SIZE_MIN	(64 * 1024)
#define CASK_LOG_SIZE_MAX	(16 * 1024 * 1024)

/**
 * struct cask_log_hdr - an entry's header as stored in a ring
 * @len: payload length
 * @__pad: zero
 * @sec: CLOCK_REALTIME seconds
 * @nsec: nanoseconds
 * @pid: writer's thread group id in the initial PID namespace
 * @tid: writer's thread id in the initial PID namespace
 * @cell_pid: writer's thread group id in the cell's PID namespace
 * @cell_tid: writer's thread id in the cell's PID namespace
 * @kuid: writer's effective uid, __kuid_val()
 *
 * Both pid pairs are kept so that the two readers there usually are, the
 * cell's own and the host's, need no lookup; others translate @pid.
 */
struct cask_log_hdr {
	u16 len;
	u16 __pad;
	s32 sec;
	s32 nsec;
	s32 pid;
	s32 tid;
	s32 cell_pid;
	s32 cell_tid;
	u32 kuid;
};

#define CASK_LOG_HDR_LEN	sizeof(struct cask_log_hdr)
#define CASK_LOG_ENTRY_MAX	(CASK_LOG_HDR_LEN + LOGGER_ENTRY_MAX_PAYLOAD)

/**
 * struct cask_log_ring - one log buffer of one cell
 * @lock: protects everything below but @readers and @wq
 * @buf: @size bytes; NULL until the first write, so that a cell that never
 *	logs costs nothing, and so that the memory is charged to the memory
 *	cgroup of the cell's first writer
 * @size: a power of two; offsets are logical and never wrap, the position
 *	in @buf is offset & (@size - 1)
 * @head: logical offset of the oldest entry
 * @tail: logical offset of the next entry; @tail - @head <= @size
 * @bytes_written: payload bytes stored since the cell was made
 * @dropped: entries overwritten because the ring was full
 * @readers: files open for reading on this ring
 * @wq: readers waiting for an entry
 */
struct cask_log_ring {
	spinlock_t lock;	/* see above */
	char *buf;
	u32 size;
	u64 head;
	u64 tail;
	u64 bytes_written;
	u64 dropped;
	atomic_t readers;
	wait_queue_head_t wq;
};

/**
 * struct cask_logger_cell - the logger's state in one cell
 * @cell: the cell; no reference, this state lives inside the cell's life
 * @node: in cask_logger_cells (protected by cask_logger_lock)
 * @rings: one ring per log buffer
 */
struct cask_logger_cell {
	struct cask_cell *cell;
	struct list_head node;
	struct cask_log_ring rings[CASK_LOG_NR];
};

/* ring.c: the ring arithmetic, no knowledge of cells or files */
void cask_ring_init(struct cask_log_ring *ring, u32 size);
void cask_ring_copy_out(const struct cask_log_ring *ring, u64 off, void *dst,
			size_t len);
void cask_ring_write_locked(struct cask_log_ring *ring,
			    const struct cask_log_hdr *hdr, const void *payload);
u64 cask_ring_catch_up_locked(const struct cask_log_ring *ring, u64 off);
void cask_ring_flush_locked(struct cask_log_ring *ring);
char *cask_ring_replace_buf_locked(struct cask_log_ring *ring, char *buf,
				   u32 size);

/* logger.c */
extern const char *const cask_log_names[CASK_LOG_NR];
int cask_logger_set_size(struct cask_log_ring *ring, u32 size);

/* sysfs.c */
extern const struct attribute_group *cask_logger_groups[CASK_LOG_NR + 1];
void cask_logger_sysfs_init(void);

#endif /* _CASK_LOGGER_H */
