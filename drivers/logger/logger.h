/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask_logger internals, shared by its files and its KUnit suite.
 */
#ifndef _CASK_LOGGER_H
#define _CASK_LOGGER_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/android_logger.h>

struct cask_cell;
struct cask_driver;
struct cask_chardev;
struct pid_namespace;
struct user_namespace;

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
 * @lock: the ring's spinlock
 * @buf: @size bytes; NULL until the first write, so that a cell that never
 *	logs costs nothing, and so that the memory is charged to the memory
 *	cgroup of the cell's first writer (protected by @lock)
 * @size: a power of two; offsets are logical and never wrap, the position
 *	in @buf is offset & (@size - 1) (protected by @lock; written with
 *	WRITE_ONCE() for GET_LOG_BUF_SIZE and sysfs, which read it without)
 * @head: logical offset of the oldest entry (protected by @lock)
 * @tail: logical offset of the next entry; @tail - @head <= @size
 *	(protected by @lock)
 * @bytes_written: payload bytes stored since the cell was made (protected
 *	by @lock)
 * @dropped: entries overwritten because the ring was full (protected by
 *	@lock)
 * @readers: files of the cell open for reading on this ring (atomic)
 * @host_readers: files of other cells that chose this ring with
 *	CASK_LOGGER_SELECT; counted apart so that the cell cannot see them
 *	(atomic)
 * @wq: the cell's readers waiting for an entry; files that may select
 *	wait on the logger's host queue instead (logger.c)
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
	atomic_t host_readers;
	wait_queue_head_t wq;
};

/*
 * The cell's kmsg (kmsg.c). Its ring holds entries as the log buffers'
 * rings do: a &struct cask_log_hdr, then a &struct cask_kmsg_rec and the
 * record's text as the payload.
 */
#define CASK_KMSG_SIZE_DEFAULT	(128 * 1024)
/* What /dev/kmsg takes in one write, PRINTKRB_RECORD_MAX. */
#define CASK_KMSG_WRITE_MAX	1024
/* The longest text of a record: the write less printk's terminating NUL. */
#define CASK_KMSG_TEXT_MAX	(CASK_KMSG_WRITE_MAX - 1)
/*
 * The longest record as read: "prio,seq,usec,flags,caller=T<tid>;", each
 * text byte escaped as \xNN at worst, and the newline. /dev/kmsg's
 * CONSOLE_EXT_LOG_MAX (8192) is larger; ours need not be.
 */
#define CASK_KMSG_HDR_FMT_MAX	96
#define CASK_KMSG_LINE_MAX	(CASK_KMSG_HDR_FMT_MAX + 4 * CASK_KMSG_TEXT_MAX + 1)

/* struct cask_kmsg_rec.flags, printk's LOG_NEWLINE and LOG_CONT */
#define CASK_KMSG_NEWLINE	0x2
#define CASK_KMSG_CONT		0x8

/**
 * struct cask_kmsg_rec - a kmsg record's fields, before its text
 * @seq: the record's number in its cell, from 0
 * @ts_nsec: local_clock() at the write, as printk stamps its records
 * @caller: the writer's thread id in the cell's PID namespace
 * @facility: syslog facility, 0 (kernel) to 255
 * @level: syslog level, 0 to 7
 * @flags: %CASK_KMSG_NEWLINE, %CASK_KMSG_CONT
 * @__pad: zero
 * @text_len: bytes of text that follow
 * @__pad2: zero
 * @__pad3: zero, so that the text starts 8-byte aligned
 */
struct cask_kmsg_rec {
	u64 seq;
	u64 ts_nsec;
	u32 caller;
	u8 facility;
	u8 level;
	u8 flags;
	u8 __pad;
	u16 text_len;
	u16 __pad2;
	u32 __pad3;
};

#define CASK_KMSG_REC_MAX	(sizeof(struct cask_kmsg_rec) + CASK_KMSG_TEXT_MAX)

/**
 * enum cask_kmsg_mode - printk.devkmsg= of one cell
 * @CASK_KMSG_RATELIMIT: writes rate-limited per open file (the default)
 * @CASK_KMSG_ON: writes not rate-limited
 * @CASK_KMSG_OFF: writes dropped, opens refused
 */
enum cask_kmsg_mode {
	CASK_KMSG_RATELIMIT,
	CASK_KMSG_ON,
	CASK_KMSG_OFF,
};

/**
 * struct cask_kmsg - one cell's kmsg
 * @ring: the records; its lock guards @next_seq too
 * @next_seq: the number of the next record, also how many were written
 *	(protected by @ring.lock)
 * @mode: an &enum cask_kmsg_mode (READ_ONCE()/WRITE_ONCE())
 */
struct cask_kmsg {
	struct cask_log_ring ring;
	u64 next_seq;
	int mode;
};

/**
 * struct cask_logger_cell - the logger's state in one cell
 * @cell: the cell; no reference, this state lives inside the cell's life
 * @rings: one ring per log buffer
 * @kmsg: the cell's /dev/kmsg
 */
struct cask_logger_cell {
	struct cask_cell *cell;
	struct cask_log_ring rings[CASK_LOG_NR];
	struct cask_kmsg kmsg;
};

/**
 * struct cask_log_cursor - a merged reader's position in one cell
 * @node: in &cask_log_reader.cursors, which is sorted by ascending @id
 *	(protected by the reader's lock)
 * @id: cask_cell_id() of the cell
 * @off: position in the cell's ring (protected by the reader's lock)
 * @lc: the cell's logger state while one read, poll or ioctl runs, with a
 *	reference on the cell; NULL between calls, so that a reader that
 *	stops reading keeps no cell alive (protected by the reader's lock)
 */
struct cask_log_cursor {
	struct list_head node;
	u64 id;
	u64 off;
	struct cask_logger_cell *lc;
};

/**
 * struct cask_log_reader - one open file
 * @lock: the file's mutex
 * @log: which buffer
 * @lc: logger state of the opener's cell, where writes go; the file holds
 *	a reference on its cell
 * @rlc: the ring read and flushed: @lc unless a host reader selected
 *	another cell, whose reference is then held as well (protected by
 *	@lock)
 * @wq: where the file waits, chosen at open and never changed: @lc's ring
 *	queue, or the host queue of @log if the file may select (see
 *	logger.c)
 * @off: position in @rlc's ring (protected by @lock)
 * @version: header version returned by reads (protected by @lock)
 * @merged: reading every cell through @cursors (protected by @lock)
 * @cursors: &struct cask_log_cursor of the cells read when @merged,
 *	ascending by cell id (protected by @lock)
 * @may_select: opened by a host reader (CAP_SYSLOG in the initial user
 *	namespace, a task of the host), which may choose other cells
 * @sees_all: may read every uid's entries; else only @euid's
 * @euid: opener's effective uid
 * @pid_ns: opener's PID namespace, for pid translation; pinned
 * @user_ns: opener's user namespace, for uid translation; pinned by the
 *	file's credentials
 * @bounce: one entry's payload between the ring and user space (protected
 *	by @lock)
 */
struct cask_log_reader {
	struct mutex lock;	/* see above */
	enum cask_log_id log;
	struct cask_logger_cell *lc;
	struct cask_logger_cell *rlc;
	wait_queue_head_t *wq;
	u64 off;
	int version;
	bool merged;
	struct list_head cursors;
	bool may_select;
	bool sees_all;
	kuid_t euid;
	struct pid_namespace *pid_ns;
	struct user_namespace *user_ns;
	char *bounce;
};

/**
 * struct cask_log_sync - a walk that matches cursors to the cells that exist
 * @cursors: the reader's cursor list
 * @pos: the first cursor not yet matched to a cell
 * @err: -ENOMEM if a cursor could not be made, else 0
 */
struct cask_log_sync {
	struct list_head *cursors;
	struct list_head *pos;
	int err;
};

/* Most ring entries looked at per hold of a ring's spinlock. */
#define CASK_LOG_SCAN_BATCH	256

/**
 * enum cask_log_scan - result of cask_log_scan_locked()
 * @CASK_LOG_SCAN_NONE: no entry for the reader up to the ring's tail
 * @CASK_LOG_SCAN_FOUND: an entry for the reader
 * @CASK_LOG_SCAN_MORE: %CASK_LOG_SCAN_BATCH entries looked at, none for the
 *	reader, more to look at
 */
enum cask_log_scan {
	CASK_LOG_SCAN_NONE,
	CASK_LOG_SCAN_FOUND,
	CASK_LOG_SCAN_MORE,
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
int cask_ring_alloc_buf(struct cask_log_ring *ring);
int cask_logger_set_size(struct cask_log_ring *ring, u32 size);

/* reader.c: readers' positions in rings, no knowledge of cells or files */
enum cask_log_scan cask_log_scan_locked(const struct cask_log_reader *r,
					const struct cask_log_ring *ring,
					u64 *off, struct cask_log_hdr *hdr);
bool cask_log_seek(const struct cask_log_reader *r, struct cask_log_ring *ring,
		   u64 *off, struct cask_log_hdr *hdr);
bool cask_log_peek_rlocked(struct cask_log_reader *r, struct cask_log_hdr *hdr);
bool cask_log_earlier(const struct cask_log_hdr *a, u64 a_id,
		      const struct cask_log_hdr *b, u64 b_id);
struct cask_log_cursor *cask_log_merged_next_rlocked(struct cask_log_reader *r,
						     struct cask_log_hdr *hdr);
void cask_log_sync_start(struct cask_log_sync *s, struct list_head *cursors);
struct cask_log_cursor *cask_log_sync_cell(struct cask_log_sync *s, u64 id,
					   bool linked);
int cask_log_sync_end(struct cask_log_sync *s);
void cask_log_cursors_free(struct list_head *cursors);

/* main.c */
extern const char *const cask_log_names[CASK_LOG_NR];
extern struct cask_driver cask_logger_driver;
extern struct cask_chardev cask_log_chardev;

/*
 * Set once module init can no longer fail. Until then opens fail: init
 * adds two character devices, and a failure after the first would
 * otherwise free the module under a file opened on it.
 */
extern bool cask_logger_ready;

static inline bool cask_logger_live(void)
{
	/* Pairs with the release at the end of init. */
	return smp_load_acquire(&cask_logger_ready);
}

/* The longest devdir parameter. */
#define CASK_LOG_DEVDIR_MAX	64
bool cask_log_devdir_valid(const char *dir);

/* logger.c */
extern wait_queue_head_t cask_logger_host_wq[CASK_LOG_NR];
extern const struct file_operations cask_log_fops;
bool cask_log_in_log_group(kgid_t node_gid, struct user_namespace *cell_ns,
			   bool aid_log);
bool cask_log_may_flush(kgid_t node_gid, struct user_namespace *cell_ns,
			bool aid_log);
#if IS_ENABLED(CONFIG_KUNIT)
int cask_log_cursors_get_rlocked(struct cask_log_reader *r);
void cask_log_cursors_put_rlocked(struct cask_log_reader *r);
#endif /* CONFIG_KUNIT */

/* kmsg.c */
extern struct cask_chardev cask_kmsg_chardev;
extern wait_queue_head_t cask_kmsg_host_wq;
void cask_kmsg_init(struct cask_kmsg *km);

/**
 * struct cask_kmsg_msg - a write to kmsg, parsed as /dev/kmsg parses it
 * @facility: syslog facility
 * @level: syslog level
 * @flags: %CASK_KMSG_NEWLINE if one trailing newline was taken off
 * @text: the text, in the written buffer
 * @text_len: its length, at most %CASK_KMSG_TEXT_MAX
 */
struct cask_kmsg_msg {
	u8 facility;
	u8 level;
	u8 flags;
	const char *text;
	size_t text_len;
};

void cask_kmsg_parse(const char *buf, size_t len, int default_level,
		     struct cask_kmsg_msg *msg);
size_t cask_kmsg_format(const struct cask_kmsg_rec *rec, const char *text,
			char *out, size_t size);
extern const char *const cask_kmsg_mode_names[3];

/* sysfs.c */
extern const struct attribute_group *cask_logger_groups[CASK_LOG_NR + 2];

#endif /* _CASK_LOGGER_H */
