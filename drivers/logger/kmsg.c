// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/cask/kmsg: a /dev/kmsg of its own for every cell. A runtime binds it
 * over the container's /dev/kmsg, so that what a container's init and
 * services write there goes to the container's own ring, not to the host's
 * printk buffer, and what they read back is theirs alone.
 *
 * The ABI is /dev/kmsg's (Documentation/ABI/testing/dev-kmsg): a write is
 * one record, with an optional "<N>" syslog prefix; a read returns one
 * record as "prio,seq,usec,flags;text\n", -EINVAL if the buffer is too
 * small (the record is then lost for this reader, as on /dev/kmsg), -EPIPE
 * once after the reader was overrun; lseek to 0 with SEEK_SET, SEEK_DATA or
 * SEEK_END; poll with EPOLLERR | EPOLLPRI after an overrun. Differences are
 * in Documentation/logger.rst, "kmsg".
 *
 * The records live in a ring of the logger's (ring.c), one per cell in
 * &struct cask_kmsg: same framing, the same lazily allocated buffer charged
 * to the cell's first writer, the same sizes. A record's payload is a
 * &struct cask_kmsg_rec and the text; the text is escaped when read.
 *
 * Locking: file->lock (the open file's mutex, _rlocked) before the ring's
 * spinlock (_locked), as the log devices (main.c).
 *
 * Lifetimes and wait queues follow logger.c: a file holds a reference on
 * its opener's cell, and on the cell a host reader selected; a file waits
 * on one queue chosen at open, its cell's ring queue, or the static host
 * queue every write wakes if it may select other cells. The open file pins
 * the module (the cdev's owner), so neither queue goes away under a
 * sleeping reader.
 */
#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid_namespace.h>
#include <linux/poll.h>
#include <linux/printk.h>
#include <linux/ratelimit.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/user_namespace.h>
#include <cask/cell.h>
#include <cask/chardev.h>
#include <kunit/visibility.h>

#include "logger.h"

/* The values of the devkmsg file, printk.devkmsg='s. */
const char *const cask_kmsg_mode_names[3] = {
	[CASK_KMSG_RATELIMIT] = "ratelimit",
	[CASK_KMSG_ON] = "on",
	[CASK_KMSG_OFF] = "off",
};

/* Where files that may select other cells wait; every write wakes it. */
wait_queue_head_t cask_kmsg_host_wq;

/**
 * struct cask_kmsg_file - one open /dev/cask/kmsg
 * @lock: the file's mutex
 * @lc: logger state of the opener's cell, where writes go; the file holds
 *	a reference on its cell
 * @rlc: the cell read: @lc, or the cell a host reader selected, whose
 *	reference is then held as well (protected by @lock)
 * @wq: where the file waits, chosen at open and never changed
 * @off: the next record's position in @rlc's ring (protected by @lock)
 * @may_select: CAP_SYSLOG in the initial user namespace from a task of the
 *	host: may read other cells (CASK_LOGGER_SELECT)
 * @rs: the opener's write rate limit, as /dev/kmsg's per open file
 * @pid_ns: the opener's PID namespace (a reference), in which readers see
 *	the caller=T<tid> of records
 * @rec: one record out of the ring, %CASK_KMSG_REC_MAX bytes; NULL for a
 *	file not open for reading (protected by @lock)
 * @line: @rec formatted, %CASK_KMSG_LINE_MAX bytes (protected by @lock)
 */
struct cask_kmsg_file {
	struct mutex lock;	/* see above */
	struct cask_logger_cell *lc;
	struct cask_logger_cell *rlc;
	wait_queue_head_t *wq;
	u64 off;
	bool may_select;
	struct ratelimit_state rs;
	struct pid_namespace *pid_ns;
	char *rec;
	char *line;
};

/**
 * cask_kmsg_init() - set up a cell's empty kmsg
 * @km: the cell's kmsg
 *
 * Context: any; @km is not yet shared.
 */
void cask_kmsg_init(struct cask_kmsg *km)
{
	cask_ring_init(&km->ring, CASK_KMSG_SIZE_DEFAULT);
	km->next_seq = 0;
	km->mode = CASK_KMSG_RATELIMIT;
}

/**
 * cask_kmsg_parse() - read a write to kmsg as /dev/kmsg reads it
 * @buf: what was written
 * @len: its length, at most %CASK_KMSG_WRITE_MAX
 * @default_level: the level of a write without a prefix
 * @msg: the record to make
 *
 * A "<N>" prefix of decimal digits (none is 0) gives the level, N & 7, and
 * the facility, N >> 3 & 0xff, unless that is 0: user space cannot write
 * kernel (facility 0) records, they become LOG_USER (1), as do writes
 * without a prefix. A prefix without its '>' is text. N wraps as
 * simple_strtoul() wraps, so that "<4294967304>" means what it means to
 * /dev/kmsg. The text ends at the first NUL byte (printk formats it with
 * "%s") and at %CASK_KMSG_TEXT_MAX bytes; one trailing newline is taken off
 * and noted in @msg->flags.
 *
 * Context: any.
 */
void cask_kmsg_parse(const char *buf, size_t len, int default_level,
		     struct cask_kmsg_msg *msg)
{
	const char *end = buf + len, *p = buf, *q;
	unsigned long n = 0;
	unsigned int u;

	msg->facility = 1;
	msg->level = default_level & 7;
	msg->flags = 0;
	if (len && buf[0] == '<') {
		for (q = buf + 1; q < end && isdigit(*q); q++)
			n = n * 10 + (*q - '0');
		if (q < end && *q == '>') {
			u = n;
			msg->level = u & 7;
			if (u >> 3 & 0xff)
				msg->facility = u >> 3 & 0xff;
			p = q + 1;
		}
	}
	msg->text = p;
	msg->text_len = strnlen(p, min_t(size_t, end - p, CASK_KMSG_TEXT_MAX));
	if (msg->text_len && p[msg->text_len - 1] == '\n') {
		msg->text_len--;
		msg->flags |= CASK_KMSG_NEWLINE;
	}
}
EXPORT_SYMBOL_IF_KUNIT(cask_kmsg_parse);

/**
 * cask_kmsg_format() - a record as a read of /dev/kmsg returns it
 * @rec: the record
 * @text: its @rec->text_len bytes of text
 * @out: where to write
 * @size: room at @out; %CASK_KMSG_LINE_MAX holds any record
 *
 * "prio,seq,usec,flags;text\n" with ",caller=T<tid>" after the flags if
 * the kernel has CONFIG_PRINTK_CALLER, as /dev/kmsg: prio is facility << 3
 * | level, flags 'c' for a continued record and '-' for any other, and
 * every byte of text below ' ', above '~' or a backslash becomes "\xNN".
 * What does not fit in @size is cut off.
 *
 * Context: any.
 * Return: the bytes written.
 */
size_t cask_kmsg_format(const struct cask_kmsg_rec *rec, const char *text,
			char *out, size_t size)
{
	char caller[20] = "";
	size_t len, i;

	if (IS_ENABLED(CONFIG_PRINTK_CALLER))
		snprintf(caller, sizeof(caller), ",caller=T%u", rec->caller);
	len = scnprintf(out, size, "%u,%llu,%llu,%c%s;",
			(rec->facility << 3) | rec->level, rec->seq,
			div_u64(rec->ts_nsec, 1000),
			rec->flags & CASK_KMSG_CONT ? 'c' : '-', caller);
	for (i = 0; i < rec->text_len; i++) {
		unsigned char c = text[i];

		if (c < ' ' || c >= 127 || c == '\\')
			len += scnprintf(out + len, size - len, "\\x%02x", c);
		else if (len < size)
			out[len++] = c;
	}
	if (len < size)
		out[len++] = '\n';
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(cask_kmsg_format);

/*
 * Store @rec and its text as the cell's next record. @may_alloc: allocate
 * the ring's buffer on first use (charged to the writer, as the log
 * buffers', ring.c); without it, a cell whose kmsg has no buffer drops the
 * record. Returns 0, -ENOMEM, -EINTR, or -ENOSPC when dropped.
 */
static int cask_kmsg_store(struct cask_logger_cell *lc,
			   struct cask_kmsg_rec *rec, bool may_alloc)
{
	struct cask_kmsg *km = &lc->kmsg;
	struct cask_log_ring *ring = &km->ring;
	struct cask_log_hdr hdr = {
		.len = sizeof(*rec) + rec->text_len,
		.pid = current->tgid,
		.tid = current->pid,
		.kuid = __kuid_val(current_euid()),
	};
	bool stored;
	int ret;

	rec->ts_nsec = local_clock();
	rec->caller = task_pid_nr_ns(current, cask_cell_pid_ns(lc->cell));
	hdr.cell_pid = task_tgid_nr_ns(current, cask_cell_pid_ns(lc->cell));
	hdr.cell_tid = rec->caller;
	/* Again if a resize took the new buffer away meanwhile. */
	for (;;) {
		if (may_alloc) {
			ret = cask_ring_alloc_buf(ring);
			if (ret)
				return ret;
		}
		spin_lock(&ring->lock);
		stored = ring->buf;
		if (stored) {
			/* Numbered under the lock: ring order is seq order. */
			rec->seq = km->next_seq++;
			cask_ring_write_locked(ring, &hdr, rec);
		}
		spin_unlock(&ring->lock);
		if (stored)
			break;
		if (!may_alloc)
			return -ENOSPC;
		/* The cell's root resizing in a loop must not hold us here. */
		if (fatal_signal_pending(current))
			return -EINTR;
	}

	if (wq_has_sleeper(&ring->wq))
		wake_up_interruptible(&ring->wq);
	/*
	 * Host readers wait on one queue: wake it only for a ring one of
	 * them chose, or for the host's own, so that a container writing in
	 * a loop does not wake every host reader of every other cell.
	 * host_readers is raised before the selecting reader takes
	 * ring->lock to look: either we see it, or it sees our record.
	 */
	if ((atomic_read(&ring->host_readers) || cask_cell_is_host(lc->cell)) &&
	    wq_has_sleeper(&cask_kmsg_host_wq))
		wake_up_interruptible(&cask_kmsg_host_wq);
	return 0;
}

static ssize_t cask_kmsg_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct cask_kmsg_file *f = iocb->ki_filp->private_data;
	size_t len = iov_iter_count(from);
	struct cask_kmsg_msg msg;
	struct cask_kmsg_rec *rec;
	char *buf;
	int ret;

	if (len > CASK_KMSG_WRITE_MAX)
		return -EINVAL;
	switch (READ_ONCE(f->lc->kmsg.mode)) {
	case CASK_KMSG_OFF:
		return len;
	case CASK_KMSG_RATELIMIT:
		/* RATELIMIT_MSG_ON_RELEASE: no message to the host here. */
		if (!___ratelimit(&f->rs, current->comm))
			return len;
		break;
	}

	/* The record's fields, then the text where the write lands. */
	rec = kmalloc(sizeof(*rec) + len, GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	buf = (char *)(rec + 1);
	/* A fault stores nothing: the record is whole or absent. */
	if (!copy_from_iter_full(buf, len, from)) {
		ret = -EFAULT;
		goto free_rec;
	}
	cask_kmsg_parse(buf, len, default_message_loglevel, &msg);
	memset(rec, 0, sizeof(*rec));
	rec->facility = msg.facility;
	rec->level = msg.level;
	rec->flags = msg.flags;
	rec->text_len = msg.text_len;
	memmove(buf, msg.text, msg.text_len);
	ret = cask_kmsg_store(f->lc, rec, true);
free_rec:
	kfree(rec);
	return ret ?: len;
}

/*
 * What ratelimit_state_exit() prints to the host for /dev/kmsg, into the
 * cell's kmsg instead: a kernel record at KERN_WARNING. Best effort, as
 * printk is, and never allocating the ring's buffer: the last close may
 * run in whatever task or kernel thread drops the file's last reference
 * (a file passed over a socket, io_uring), which must not be charged for
 * the cell's ring.
 */
static void cask_kmsg_note_suppressed(struct cask_kmsg_file *f)
{
	struct {
		struct cask_kmsg_rec rec;
		char text[TASK_COMM_LEN + 64];
	} m = {};

	m.rec.level = LOGLEVEL_WARNING;
	m.rec.flags = CASK_KMSG_NEWLINE;
	m.rec.text_len = scnprintf(m.text, sizeof(m.text),
				   "%s: %d output lines suppressed due to ratelimiting",
				   current->comm, f->rs.missed);
	cask_kmsg_store(f->lc, &m.rec, false);
}

/*
 * The next record for @f into @f->line. Overwritten records are reported
 * once with -EPIPE, as /dev/kmsg does, and only when there is a record to
 * go on with; the reader then goes on at the oldest.
 */
static ssize_t cask_kmsg_next_rlocked(struct cask_kmsg_file *f)
{
	struct cask_log_ring *ring = &f->rlc->kmsg.ring;
	struct cask_kmsg_rec *rec = (struct cask_kmsg_rec *)f->rec;
	struct cask_log_hdr hdr;
	u64 off;

	lockdep_assert_held(&f->lock);
	spin_lock(&ring->lock);
	off = cask_ring_catch_up_locked(ring, f->off);
	if (off == ring->tail) {
		spin_unlock(&ring->lock);
		return -EAGAIN;
	}
	if (off != f->off) {
		f->off = off;
		spin_unlock(&ring->lock);
		return -EPIPE;
	}
	cask_ring_copy_out(ring, off, &hdr, CASK_LOG_HDR_LEN);
	cask_ring_copy_out(ring, off + CASK_LOG_HDR_LEN, rec, hdr.len);
	f->off = off + CASK_LOG_HDR_LEN + hdr.len;
	spin_unlock(&ring->lock);

	/*
	 * The writer's thread id as the reader's PID namespace numbers it:
	 * the cell's number for a reader in the cell's namespace, the
	 * kernel's for one in the initial namespace (the host, as
	 * /dev/kmsg), none for others, which may not see the writer.
	 */
	if (f->pid_ns == cask_cell_pid_ns(f->rlc->cell))
		rec->caller = hdr.cell_tid;
	else if (f->pid_ns == &init_pid_ns)
		rec->caller = hdr.tid;
	else
		rec->caller = 0;

	return cask_kmsg_format(rec, (char *)(rec + 1), f->line,
				CASK_KMSG_LINE_MAX);
}

static ssize_t cask_kmsg_read_rlocked(struct cask_kmsg_file *f,
				      char __user *buf, size_t count)
{
	ssize_t len;

	len = cask_kmsg_next_rlocked(f);
	if (len < 0)
		return len;
	/* The record is used up either way, as on /dev/kmsg. */
	if (len > count)
		return -EINVAL;
	if (copy_to_user(buf, f->line, len))
		return -EFAULT;
	return len;
}

static ssize_t cask_kmsg_read(struct file *file, char __user *buf,
			      size_t count, loff_t *pos)
{
	struct cask_kmsg_file *f = file->private_data;
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	bool queued = false;
	ssize_t ret;

	for (;;) {
		if (mutex_lock_interruptible(&f->lock)) {
			ret = -ERESTARTSYS;
			break;
		}
		ret = cask_kmsg_read_rlocked(f, buf, count);
		mutex_unlock(&f->lock);
		if (ret != -EAGAIN || (file->f_flags & O_NONBLOCK))
			break;
		/* As logger.c: on the queue, then look once more. */
		if (!queued) {
			add_wait_queue(f->wq, &wait);
			queued = true;
			continue;
		}
		wait_woken(&wait, TASK_INTERRUPTIBLE, MAX_SCHEDULE_TIMEOUT);
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
	}
	if (queued)
		remove_wait_queue(f->wq, &wait);
	return ret;
}

static __poll_t cask_kmsg_poll(struct file *file, poll_table *wait)
{
	struct cask_kmsg_file *f = file->private_data;
	struct cask_log_ring *ring;
	__poll_t mask = 0;

	poll_wait(file, f->wq, wait);
	if (mutex_lock_interruptible(&f->lock))
		return 0;
	ring = &f->rlc->kmsg.ring;
	spin_lock(&ring->lock);
	/* As /dev/kmsg: never EPOLLOUT; an overrun only with a record. */
	if (cask_ring_catch_up_locked(ring, f->off) != ring->tail) {
		mask = EPOLLIN | EPOLLRDNORM;
		if (f->off < ring->head)
			mask |= EPOLLERR | EPOLLPRI;
	}
	spin_unlock(&ring->lock);
	mutex_unlock(&f->lock);
	return mask;
}

/*
 * /dev/kmsg's three seeks, to offset 0 only. SEEK_DATA is the first record
 * after the last clear; a cell's kmsg has no clear (syslog(2) clears the
 * host's), so that is the oldest record, as for SEEK_SET.
 */
static loff_t cask_kmsg_llseek(struct file *file, loff_t offset, int whence)
{
	struct cask_kmsg_file *f = file->private_data;
	struct cask_log_ring *ring;
	loff_t ret = 0;

	if (offset)
		return -ESPIPE;
	if (whence != SEEK_SET && whence != SEEK_DATA && whence != SEEK_END)
		return -EINVAL;
	if (mutex_lock_interruptible(&f->lock))
		return -ERESTARTSYS;
	ring = &f->rlc->kmsg.ring;
	spin_lock(&ring->lock);
	f->off = whence == SEEK_END ? ring->tail : ring->head;
	spin_unlock(&ring->lock);
	mutex_unlock(&f->lock);
	return ret;
}

/* Back to the opener's cell, from a selected one. */
static void cask_kmsg_drop_selection_rlocked(struct cask_kmsg_file *f)
{
	lockdep_assert_held(&f->lock);
	if (f->rlc != f->lc) {
		atomic_dec(&f->rlc->kmsg.ring.host_readers);
		cask_cell_put(f->rlc->cell);
	} else {
		atomic_dec(&f->lc->kmsg.ring.readers);
	}
	f->rlc = f->lc;
}

/*
 * The host's logcat --cell NAME -b kernel: CASK_LOGGER_SELECT as on the
 * log devices, with the same rule (logger.c). One cell at a time: the
 * records of several cells have no common order a reader could rely on,
 * so CASK_LOGGER_ALL_CELLS is -EINVAL here.
 */
static long cask_kmsg_select_rlocked(struct cask_kmsg_file *f,
				     struct file *file, void __user *argp)
{
	struct cask_logger_select sel;
	struct cask_log_ring *ring;
	struct cask_cell *cell;

	lockdep_assert_held(&f->lock);
	if (!(file->f_mode & FMODE_READ))
		return -EBADF;
	if (!f->may_select)
		return -EPERM;
	if (copy_from_user(&sel, argp, sizeof(sel)))
		return -EFAULT;
	if (sel.flags || memchr_inv(sel.__pad, 0, sizeof(sel.__pad)) ||
	    !memchr(sel.cell, '\0', sizeof(sel.cell)))
		return -EINVAL;
	cell = cask_cell_get_by_name(sel.cell);
	if (!cell)
		return -ENOENT;
	if (!cask_cell_data(cell, &cask_logger_driver)) {
		cask_cell_put(cell);
		return -ENOENT;
	}
	cask_kmsg_drop_selection_rlocked(f);
	if (cell == f->lc->cell) {
		cask_cell_put(cell);
		atomic_inc(&f->lc->kmsg.ring.readers);
	} else {
		f->rlc = cask_cell_data(cell, &cask_logger_driver);
		atomic_inc(&f->rlc->kmsg.ring.host_readers);
	}
	ring = &f->rlc->kmsg.ring;
	spin_lock(&ring->lock);
	f->off = ring->head;
	spin_unlock(&ring->lock);
	return 0;
}

static long cask_kmsg_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	struct cask_kmsg_file *f = file->private_data;
	long ret;

	/* /dev/kmsg has no ioctls. */
	if (cmd != CASK_LOGGER_SELECT)
		return -ENOTTY;
	if (mutex_lock_interruptible(&f->lock))
		return -ERESTARTSYS;
	ret = cask_kmsg_select_rlocked(f, file, (void __user *)arg);
	mutex_unlock(&f->lock);
	return ret;
}

/*
 * Reading a cell's kmsg is dmesg_restrict=1's rule in the cell: CAP_SYSLOG
 * over the cell, from the opener's credentials. In a registered
 * container's cell, its AID_LOG may read it too, as it reads the cell's
 * log buffers (cask_log_in_log_group()): Android's log readers run with
 * it. Not the device node's group, which the log devices also honour:
 * every cask node is root's, and gid 0 alone (any task of a container
 * without a user namespace running with group root) is no right to read
 * the kernel log.
 */
static bool cask_kmsg_may_read(struct file *file, struct cask_cell *cell)
{
	return cask_log_in_log_group(INVALID_GID, cask_cell_user_ns(cell),
				     cask_cell_registered(cell)) ||
	       file_ns_capable(file, cask_cell_user_ns(cell), CAP_SYSLOG);
}

/* Android's AID_SYSTEM, the group of its /dev/kmsg (0620 root system). */
#define CASK_AID_SYSTEM	1000

/*
 * Who may write: the DAC check of the node a cell's own /dev/kmsg would
 * have, evaluated in the cell. The host's /dev/kmsg is 0644 root:root and
 * Android's 0620 root:system, but ours is the host's 0666 node bound into
 * every container (a container's root, a host uid, could not pass the
 * host's DAC on a 0644 node): so the cell's root, or whoever may override
 * DAC over the cell, and in a registered container's cell its AID_SYSTEM
 * (as for AID_LOG, cask_log_in_log_group(): only there is gid 1000 Android's).
 * Without this, any unprivileged task could flood its cell's ring with
 * records that look like the init's.
 */
static bool cask_kmsg_may_write(struct file *file, struct cask_cell *cell)
{
	struct user_namespace *ns = cask_cell_user_ns(cell);
	kuid_t root = make_kuid(ns, 0);
	kgid_t sys;

	if (uid_valid(root) && uid_eq(file->f_cred->fsuid, root))
		return true;
	if (file_ns_capable(file, ns, CAP_DAC_OVERRIDE))
		return true;
	if (!cask_cell_registered(cell))
		return false;
	sys = make_kgid(ns, CASK_AID_SYSTEM);
	return gid_valid(sys) && in_egroup_p(sys);
}

static int cask_kmsg_open(struct inode *inode, struct file *file)
{
	struct cask_logger_cell *lc;
	struct cask_kmsg_file *f;
	struct cask_log_ring *ring;
	struct cask_cell *cell;
	int ret;

	if (!cask_logger_live())
		return -ENODEV;
	cell = cask_cell_get_or_create();
	if (IS_ERR(cell))
		return PTR_ERR(cell);
	lc = cask_cell_data(cell, &cask_logger_driver);
	if (!lc) {
		ret = -ENODEV;
		goto put_cell;
	}
	ring = &lc->kmsg.ring;
	/* As /dev/kmsg with printk.devkmsg=off. */
	if (READ_ONCE(lc->kmsg.mode) == CASK_KMSG_OFF) {
		ret = -EPERM;
		goto put_cell;
	}
	if ((file->f_mode & FMODE_WRITE) && !cask_kmsg_may_write(file, cell)) {
		ret = -EACCES;
		goto put_cell;
	}
	/* Per-open memory is the opener's to pay for, like the file itself. */
	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f) {
		ret = -ENOMEM;
		goto put_cell;
	}
	mutex_init(&f->lock);
	f->lc = lc;
	f->rlc = lc;
	f->wq = &ring->wq;
	ratelimit_default_init(&f->rs);
	/* Else ___ratelimit() would print to the host's log. */
	ratelimit_set_flags(&f->rs, RATELIMIT_MSG_ON_RELEASE);

	/* As /dev/kmsg: only a write-only open needs no right to read. */
	if ((file->f_flags & O_ACCMODE) != O_WRONLY) {
		if (!cask_kmsg_may_read(file, cell)) {
			ret = -EPERM;
			goto free_file;
		}
		f->rec = kmalloc(CASK_KMSG_REC_MAX + CASK_KMSG_LINE_MAX,
				 GFP_KERNEL_ACCOUNT);
		if (!f->rec) {
			ret = -ENOMEM;
			goto free_file;
		}
		f->line = f->rec + CASK_KMSG_REC_MAX;
		/* Decided once: the queue a file waits on never changes. */
		f->may_select = file_ns_capable(file, &init_user_ns, CAP_SYSLOG) &&
				cask_current_in_host();
		if (f->may_select)
			f->wq = &cask_kmsg_host_wq;
		atomic_inc(&ring->readers);
	}
	spin_lock(&ring->lock);
	f->off = ring->head;
	spin_unlock(&ring->lock);
	f->pid_ns = get_pid_ns(task_active_pid_ns(current));
	file->private_data = f;
	return 0;

free_file:
	kfree(f);
put_cell:
	cask_cell_put(cell);
	return ret;
}

static int cask_kmsg_release(struct inode *inode, struct file *file)
{
	struct cask_kmsg_file *f = file->private_data;
	struct cask_cell *cell = f->lc->cell;

	if (f->rs.missed)
		cask_kmsg_note_suppressed(f);
	if (f->rec) {
		mutex_lock(&f->lock);
		cask_kmsg_drop_selection_rlocked(f);
		mutex_unlock(&f->lock);
		kfree(f->rec);
	}
	put_pid_ns(f->pid_ns);
	kfree(f);
	/* Last: the cell's release frees the ring this file used. */
	cask_cell_put(cell);
	return 0;
}

static const struct file_operations cask_kmsg_fops = {
	.owner = THIS_MODULE,
	.open = cask_kmsg_open,
	.release = cask_kmsg_release,
	.read = cask_kmsg_read,
	.write_iter = cask_kmsg_write_iter,
	.poll = cask_kmsg_poll,
	.llseek = cask_kmsg_llseek,
	.unlocked_ioctl = cask_kmsg_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static const char *const cask_kmsg_nodes[] = { "kmsg" };

/*
 * /dev/cask/kmsg; the device is cask_kmsg (sysfs, uevents), so that no
 * udev rule for the kernel's kmsg matches it.
 */
struct cask_chardev cask_kmsg_chardev = {
	.name = "cask_kmsg",
	.fops = &cask_kmsg_fops,
	.owner = THIS_MODULE,
	.minors = 1,
	.nodes = cask_kmsg_nodes,
	.nr_nodes = 1,
	.prefix = "cask_",
	.dir = "cask",
};
