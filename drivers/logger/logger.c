// SPDX-License-Identifier: GPL-2.0
/*
 * cask_logger: Android's /dev/log/{main,events,radio,system,crash} with
 * one set of rings per cask cell. The ABI is the staging logger's; see
 * Documentation/logger.rst.
 *
 * Locking overview, outermost first:
 *
 *   reader->lock        one open file's read position and mode; held
 *                       across copy_to_user(), never while sleeping for
 *                       data. Host selection looks cells up under it
 *                       (cask_mutex) and merged reads walk the cells
 *                       under it (cask_logger_lock).
 *   cask_mutex          (cask_core) held around our attach and detach
 *   cask_logger_lock    the list of every cell's logger state, for host
 *                       readers that merge all cells
 *   ring->lock          one ring; a spinlock, never held across a user
 *                       copy or an allocation, never two at once
 *
 * A file is bound to its opener's cell for its whole life and holds a
 * reference on it, so the cell's rings (and their wait queues, which
 * poll() and epoll hang entries on) outlive the file. Host readers that
 * switch to another cell or to all cells wait on a static per-buffer
 * queue instead, so that no wait entry can outlive the ring it is on.
 */
#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/user_namespace.h>
#include <cask/cell.h>

#include "logger.h"

/* Payloads up to this size are copied in on the stack. */
#define CASK_LOG_SMALL	256

const char *const cask_log_names[CASK_LOG_NR] = {
	[CASK_LOG_MAIN] = "main",
	[CASK_LOG_EVENTS] = "events",
	[CASK_LOG_RADIO] = "radio",
	[CASK_LOG_SYSTEM] = "system",
	[CASK_LOG_CRASH] = "crash",
};

static DEFINE_MUTEX(cask_logger_lock);
/* Every cell's logger state (protected by cask_logger_lock). */
static LIST_HEAD(cask_logger_cells);
/* Bumped when a cell is added, so that merged readers look again. */
static unsigned long cask_logger_gen = 1;
/* Host readers of another cell or of all cells wait here. */
static wait_queue_head_t cask_logger_host_wq[CASK_LOG_NR];
static struct cask_driver cask_logger_driver;

/**
 * struct cask_log_cursor - a merged reader's position in one cell
 * @node: in &cask_log_reader.cursors
 * @lc: the cell's logger state; the cursor holds a reference on the cell
 * @off: position in the cell's ring
 */
struct cask_log_cursor {
	struct list_head node;
	struct cask_logger_cell *lc;
	u64 off;
};

/**
 * struct cask_log_reader - one open file
 * @lock: protects the fields marked (lock)
 * @log: which buffer
 * @lc: logger state of the opener's cell; writes and FLUSH_LOG of an
 *	Android client go here; the file holds a reference on its cell
 * @rlc: the ring read, @lc unless a host reader selected another cell,
 *	whose reference is then held as well (lock)
 * @off: position in @rlc's ring (lock; read locklessly by poll)
 * @version: header version returned by reads (lock)
 * @merged: reading every cell through @cursors (lock)
 * @gen: cask_logger_gen when @cursors was last brought up to date, 0 for
 *	never (lock)
 * @cursors: one &struct cask_log_cursor per cell when @merged (lock)
 * @sees_all: may read every uid's entries; else only @euid's
 * @euid: opener's effective uid
 * @pid_ns: opener's PID namespace, for pid translation; pinned
 * @user_ns: opener's user namespace, for uid translation; pinned by the
 *	file's credentials
 * @bounce: one entry's payload between the ring and user space
 */
struct cask_log_reader {
	struct mutex lock;	/* see above */
	enum cask_log_id log;
	struct cask_logger_cell *lc;
	struct cask_logger_cell *rlc;
	u64 off;
	int version;
	bool merged;
	unsigned long gen;
	struct list_head cursors;
	bool sees_all;
	kuid_t euid;
	struct pid_namespace *pid_ns;
	struct user_namespace *user_ns;
	char *bounce;
};

/* Storage for the header returned to user space, of any version. */
union cask_log_user_hdr {
	struct user_logger_entry_compat v1;
	struct logger_entry v2;
	struct cask_logger_entry cell;
};

static size_t cask_log_user_hdr_len(int version)
{
	switch (version) {
	case 1:
		return sizeof(struct user_logger_entry_compat);
	case 2:
		return sizeof(struct logger_entry);
	default:
		return sizeof(struct cask_logger_entry);
	}
}

static bool cask_log_selected(const struct cask_log_reader *r)
{
	return r->merged || r->rlc != r->lc;
}

static wait_queue_head_t *cask_log_wq(const struct cask_log_reader *r)
{
	return cask_log_selected(r) ? &cask_logger_host_wq[r->log] :
				      &r->lc->rings[r->log].wq;
}

/*
 * Store one entry, allocating the ring's buffer on first use. The buffer is
 * charged to the writer's memory cgroup: the cell pays for its own logs.
 */
static int cask_log_store(struct cask_log_ring *ring,
			  const struct cask_log_hdr *hdr, const void *payload)
{
	char *buf;
	u32 size;

	for (;;) {
		spin_lock(&ring->lock);
		if (ring->buf) {
			cask_ring_write_locked(ring, hdr, payload);
			spin_unlock(&ring->lock);
			return 0;
		}
		size = ring->size;
		spin_unlock(&ring->lock);

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
	}
}

static ssize_t cask_log_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct cask_log_reader *r = iocb->ki_filp->private_data;
	size_t len = min_t(size_t, iov_iter_count(from), LOGGER_ENTRY_MAX_PAYLOAD);
	struct cask_log_ring *ring = &r->lc->rings[r->log];
	struct pid_namespace *ns = cask_cell_pid_ns(r->lc->cell);
	char small[CASK_LOG_SMALL], *payload = small;
	struct cask_log_hdr hdr = { .len = len };
	struct timespec64 now;
	ssize_t ret;

	if (!len)
		return 0;
	if (len > sizeof(small)) {
		payload = kmalloc(len, GFP_KERNEL);
		if (!payload)
			return -ENOMEM;
	}
	/* A fault stores nothing: the entry is whole or absent. */
	if (!copy_from_iter_full(payload, len, from)) {
		ret = -EFAULT;
		goto out;
	}

	ktime_get_real_ts64(&now);
	hdr.sec = now.tv_sec;
	hdr.nsec = now.tv_nsec;
	hdr.pid = current->tgid;
	hdr.tid = current->pid;
	hdr.cell_pid = task_tgid_nr_ns(current, ns);
	hdr.cell_tid = task_pid_nr_ns(current, ns);
	hdr.kuid = __kuid_val(current_euid());

	ret = cask_log_store(ring, &hdr, payload);
	if (ret)
		goto out;
	ret = len;
	if (wq_has_sleeper(&ring->wq))
		wake_up_interruptible(&ring->wq);
	if (wq_has_sleeper(&cask_logger_host_wq[r->log]))
		wake_up_interruptible(&cask_logger_host_wq[r->log]);
out:
	if (payload != small)
		kfree(payload);
	return ret;
}

/*
 * Move *@off to the next entry this reader may see and read its header.
 * Return: false if there is none (*@off is then the ring's tail).
 */
static bool cask_log_next_locked(const struct cask_log_reader *r,
				 const struct cask_log_ring *ring, u64 *off,
				 struct cask_log_hdr *hdr)
{
	lockdep_assert_held(&ring->lock);
	*off = cask_ring_catch_up_locked(ring, *off);
	while (*off < ring->tail) {
		cask_ring_copy_out(ring, *off, hdr, CASK_LOG_HDR_LEN);
		if (r->sees_all || hdr->kuid == __kuid_val(r->euid))
			return true;
		*off += CASK_LOG_HDR_LEN + hdr->len;
	}
	return false;
}

/* The writer's pid and tid as the reader's PID namespace sees them. */
static void cask_log_pids(const struct cask_log_reader *r,
			  const struct cask_logger_cell *lc,
			  const struct cask_log_hdr *hdr, s32 *pid, s32 *tid)
{
	struct pid *p;

	if (r->pid_ns == &init_pid_ns) {
		*pid = hdr->pid;
		*tid = hdr->tid;
		return;
	}
	if (r->pid_ns == cask_cell_pid_ns(lc->cell)) {
		*pid = hdr->cell_pid;
		*tid = hdr->cell_tid;
		return;
	}
	/* A third namespace: best effort, as long as the writer is alive. */
	rcu_read_lock();
	p = find_pid_ns(hdr->pid, &init_pid_ns);
	*pid = p ? pid_nr_ns(p, r->pid_ns) : 0;
	p = find_pid_ns(hdr->tid, &init_pid_ns);
	*tid = p ? pid_nr_ns(p, r->pid_ns) : 0;
	rcu_read_unlock();
}

/* Copy the header of @r's version and the bounce buffer to user space. */
static ssize_t cask_log_copy_entry(const struct cask_log_reader *r,
				   const struct cask_logger_cell *lc,
				   const struct cask_log_hdr *hdr,
				   char __user *buf)
{
	size_t hlen = cask_log_user_hdr_len(r->version);
	union cask_log_user_hdr u;
	s32 pid, tid;

	memset(&u, 0, hlen);
	cask_log_pids(r, lc, hdr, &pid, &tid);
	/* The fields up to nsec sit at the same place in every version. */
	u.v2.len = hdr->len;
	u.v2.pid = pid;
	u.v2.tid = tid;
	u.v2.sec = hdr->sec;
	u.v2.nsec = hdr->nsec;
	if (r->version != 1) {
		u.v2.hdr_size = hlen;
		u.v2.euid = from_kuid_munged(r->user_ns, KUIDT_INIT(hdr->kuid));
	}
	if (r->version == CASK_LOGGER_VERSION_CELL) {
		u.cell.cell_id = cask_cell_id(lc->cell);
		strscpy(u.cell.cell, cask_cell_name(lc->cell));
	}
	if (copy_to_user(buf, &u, hlen) ||
	    copy_to_user(buf + hlen, r->bounce, hdr->len))
		return -EFAULT;
	return hlen + hdr->len;
}

/*
 * Take the entry at *@off out of @lc's ring into the bounce buffer and on
 * to user space. An entry too big for @count stays unread (-EINVAL); so
 * does one that could not be copied out (-EFAULT).
 */
static ssize_t cask_log_take_locked(struct cask_log_reader *r,
				    struct cask_logger_cell *lc, u64 *off,
				    const struct cask_log_hdr *hdr,
				    char __user *buf, size_t count)
{
	struct cask_log_ring *ring = &lc->rings[r->log];
	u64 start = *off;
	ssize_t ret;

	lockdep_assert_held(&r->lock);
	if (count < cask_log_user_hdr_len(r->version) + hdr->len)
		return -EINVAL;
	spin_lock(&ring->lock);
	/* Overwritten since the caller looked: let it look again. */
	if (cask_ring_catch_up_locked(ring, start) != start) {
		spin_unlock(&ring->lock);
		return -EAGAIN;
	}
	cask_ring_copy_out(ring, start + CASK_LOG_HDR_LEN, r->bounce, hdr->len);
	spin_unlock(&ring->lock);
	WRITE_ONCE(*off, start + CASK_LOG_HDR_LEN + hdr->len);

	ret = cask_log_copy_entry(r, lc, hdr, buf);
	if (ret < 0)
		WRITE_ONCE(*off, start);
	return ret;
}

static ssize_t cask_log_read_one_locked(struct cask_log_reader *r,
					char __user *buf, size_t count)
{
	struct cask_log_ring *ring = &r->rlc->rings[r->log];
	struct cask_log_hdr hdr;
	ssize_t ret;
	bool found;
	u64 off;

	do {
		spin_lock(&ring->lock);
		off = r->off;
		found = cask_log_next_locked(r, ring, &off, &hdr);
		spin_unlock(&ring->lock);
		WRITE_ONCE(r->off, off);
		if (!found)
			return -EAGAIN;
		ret = cask_log_take_locked(r, r->rlc, &r->off, &hdr, buf, count);
	} while (ret == -EAGAIN);
	return ret;
}

static void cask_log_drop_cursor(struct cask_log_cursor *cur)
{
	list_del(&cur->node);
	cask_cell_put(cur->lc->cell);
	kfree(cur);
}

/*
 * Give a merged reader a cursor for every linked cell it lacks one for,
 * and drop those of unregistered cells it has read to the end.
 */
static int cask_log_sync_cursors_locked(struct cask_log_reader *r)
{
	struct cask_log_cursor *cur, *tmp;
	struct cask_logger_cell *lc;
	bool known;
	int ret = 0;

	lockdep_assert_held(&r->lock);
	list_for_each_entry_safe(cur, tmp, &r->cursors, node) {
		struct cask_log_ring *ring = &cur->lc->rings[r->log];

		if (!cask_cell_linked(cur->lc->cell) &&
		    READ_ONCE(ring->tail) <= cur->off)
			cask_log_drop_cursor(cur);
	}

	mutex_lock(&cask_logger_lock);
	if (r->gen == cask_logger_gen)
		goto unlock;
	list_for_each_entry(lc, &cask_logger_cells, node) {
		known = false;
		list_for_each_entry(cur, &r->cursors, node)
			if (cur->lc == lc)
				known = true;
		if (known || !cask_cell_linked(lc->cell))
			continue;
		cur = kzalloc(sizeof(*cur), GFP_KERNEL);
		if (!cur) {
			ret = -ENOMEM;
			goto unlock;
		}
		/* A cell on its way out may have no reference left to take. */
		if (!cask_cell_tryget(lc->cell)) {
			kfree(cur);
			continue;
		}
		cur->lc = lc;
		list_add_tail(&cur->node, &r->cursors);
	}
	r->gen = cask_logger_gen;
unlock:
	mutex_unlock(&cask_logger_lock);
	return ret;
}

static bool cask_log_earlier(const struct cask_log_hdr *a,
			     const struct cask_logger_cell *alc,
			     const struct cask_log_hdr *b,
			     const struct cask_logger_cell *blc)
{
	if (a->sec != b->sec)
		return a->sec < b->sec;
	if (a->nsec != b->nsec)
		return a->nsec < b->nsec;
	return cask_cell_id(alc->cell) < cask_cell_id(blc->cell);
}

/* The cursor with the earliest next entry, or NULL; its header in @hdr. */
static struct cask_log_cursor *
cask_log_merged_next_locked(struct cask_log_reader *r, struct cask_log_hdr *hdr)
{
	struct cask_log_cursor *cur, *best = NULL;
	struct cask_log_hdr h;
	bool found;
	u64 off;

	lockdep_assert_held(&r->lock);
	list_for_each_entry(cur, &r->cursors, node) {
		struct cask_log_ring *ring = &cur->lc->rings[r->log];

		spin_lock(&ring->lock);
		off = cur->off;
		found = cask_log_next_locked(r, ring, &off, &h);
		spin_unlock(&ring->lock);
		cur->off = off;
		if (found && (!best || cask_log_earlier(&h, cur->lc, hdr, best->lc))) {
			best = cur;
			*hdr = h;
		}
	}
	return best;
}

static ssize_t cask_log_read_merged_locked(struct cask_log_reader *r,
					   char __user *buf, size_t count)
{
	struct cask_log_cursor *cur;
	struct cask_log_hdr hdr;
	ssize_t ret;

	do {
		ret = cask_log_sync_cursors_locked(r);
		if (ret)
			return ret;
		cur = cask_log_merged_next_locked(r, &hdr);
		if (!cur)
			return -EAGAIN;
		ret = cask_log_take_locked(r, cur->lc, &cur->off, &hdr, buf, count);
	} while (ret == -EAGAIN);
	return ret;
}

static ssize_t cask_log_read(struct file *file, char __user *buf,
			     size_t count, loff_t *pos)
{
	struct cask_log_reader *r = file->private_data;
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	wait_queue_head_t *wq = NULL;
	ssize_t ret;

	for (;;) {
		if (mutex_lock_interruptible(&r->lock)) {
			ret = -ERESTARTSYS;
			break;
		}
		if (r->merged)
			ret = cask_log_read_merged_locked(r, buf, count);
		else
			ret = cask_log_read_one_locked(r, buf, count);
		if (ret != -EAGAIN || (file->f_flags & O_NONBLOCK)) {
			mutex_unlock(&r->lock);
			break;
		}
		/*
		 * Get on the queue, then look once more: a write in between
		 * marks the entry woken and wait_woken() returns at once.
		 */
		if (!wq) {
			wq = cask_log_wq(r);
			add_wait_queue(wq, &wait);
			mutex_unlock(&r->lock);
			continue;
		}
		mutex_unlock(&r->lock);
		wait_woken(&wait, TASK_INTERRUPTIBLE, MAX_SCHEDULE_TIMEOUT);
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
	}
	if (wq)
		remove_wait_queue(wq, &wait);
	return ret;
}

static __poll_t cask_log_poll(struct file *file, poll_table *wait)
{
	struct cask_log_reader *r = file->private_data;
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;
	struct cask_log_ring *ring;
	struct cask_log_hdr hdr;
	bool found;
	u64 off;

	if (!(file->f_mode & FMODE_READ))
		return mask;
	mutex_lock(&r->lock);
	poll_wait(file, cask_log_wq(r), wait);
	if (r->merged) {
		found = !cask_log_sync_cursors_locked(r) &&
			cask_log_merged_next_locked(r, &hdr);
	} else {
		ring = &r->rlc->rings[r->log];
		spin_lock(&ring->lock);
		off = r->off;
		found = cask_log_next_locked(r, ring, &off, &hdr);
		spin_unlock(&ring->lock);
	}
	mutex_unlock(&r->lock);
	if (found)
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

static long cask_log_next_len(struct cask_log_reader *r)
{
	struct cask_log_ring *ring = &r->rlc->rings[r->log];
	struct cask_log_hdr hdr;
	bool found;
	u64 off;

	lockdep_assert_held(&r->lock);
	if (r->merged) {
		if (cask_log_sync_cursors_locked(r))
			return -ENOMEM;
		found = cask_log_merged_next_locked(r, &hdr);
	} else {
		spin_lock(&ring->lock);
		off = r->off;
		found = cask_log_next_locked(r, ring, &off, &hdr);
		spin_unlock(&ring->lock);
	}
	return found ? cask_log_user_hdr_len(r->version) + hdr.len : 0;
}

static long cask_log_len(struct cask_log_reader *r)
{
	struct cask_log_cursor *cur;
	struct cask_log_ring *ring;
	long len = 0;

	lockdep_assert_held(&r->lock);
	if (!r->merged) {
		ring = &r->rlc->rings[r->log];
		spin_lock(&ring->lock);
		len = ring->tail - cask_ring_catch_up_locked(ring, r->off);
		spin_unlock(&ring->lock);
		return len;
	}
	if (cask_log_sync_cursors_locked(r))
		return -ENOMEM;
	list_for_each_entry(cur, &r->cursors, node) {
		ring = &cur->lc->rings[r->log];
		spin_lock(&ring->lock);
		len += ring->tail - cask_ring_catch_up_locked(ring, cur->off);
		spin_unlock(&ring->lock);
	}
	return len;
}

static void cask_log_drop_selection_locked(struct cask_log_reader *r)
{
	struct cask_log_cursor *cur, *tmp;

	lockdep_assert_held(&r->lock);
	list_for_each_entry_safe(cur, tmp, &r->cursors, node)
		cask_log_drop_cursor(cur);
	/* Merged readers are not counted as readers of any one ring. */
	if (!r->merged)
		atomic_dec(&r->rlc->rings[r->log].readers);
	r->merged = false;
	if (r->rlc != r->lc)
		cask_cell_put(r->rlc->cell);
	r->rlc = r->lc;
}

/* The host extension: read another cell, or all of them merged. */
static long cask_log_select(struct cask_log_reader *r, struct file *file,
			    void __user *argp)
{
	struct cask_logger_select sel;
	struct cask_log_ring *ring;
	struct cask_cell *cell;

	if (!(file->f_mode & FMODE_READ))
		return -EBADF;
	if (!file_ns_capable(file, &init_user_ns, CAP_SYSLOG))
		return -EPERM;
	if (copy_from_user(&sel, argp, sizeof(sel)))
		return -EFAULT;
	if (sel.flags & ~CASK_LOGGER_ALL_CELLS)
		return -EINVAL;

	if (sel.flags & CASK_LOGGER_ALL_CELLS) {
		cask_log_drop_selection_locked(r);
		r->merged = true;
		r->gen = 0;
		return cask_log_sync_cursors_locked(r);
	}

	if (!memchr(sel.cell, '\0', sizeof(sel.cell)))
		return -EINVAL;
	cell = cask_cell_get_by_name(sel.cell);
	if (!cell)
		return -ENOENT;
	cask_log_drop_selection_locked(r);
	if (cell == r->lc->cell)
		cask_cell_put(cell);
	else
		r->rlc = cask_cell_data(cell, &cask_logger_driver);
	ring = &r->rlc->rings[r->log];
	atomic_inc(&ring->readers);
	spin_lock(&ring->lock);
	r->off = ring->head;
	spin_unlock(&ring->lock);
	return 0;
}

static long cask_log_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct cask_log_reader *r = file->private_data;
	struct cask_log_ring *ring;
	int version;
	long ret;

	/* A reader stuck in copy_to_user() must not make ioctls unkillable. */
	if (mutex_lock_interruptible(&r->lock))
		return -ERESTARTSYS;
	ring = &r->rlc->rings[r->log];
	switch (cmd) {
	case LOGGER_GET_LOG_BUF_SIZE:
		ret = r->merged ? -EINVAL : READ_ONCE(ring->size);
		break;
	case LOGGER_GET_LOG_LEN:
		ret = (file->f_mode & FMODE_READ) ? cask_log_len(r) : -EBADF;
		break;
	case LOGGER_GET_NEXT_ENTRY_LEN:
		ret = (file->f_mode & FMODE_READ) ? cask_log_next_len(r) : -EBADF;
		break;
	case LOGGER_FLUSH_LOG:
		if (!(file->f_mode & FMODE_WRITE)) {
			ret = -EBADF;
		} else if (r->merged) {
			ret = -EINVAL;
		} else {
			spin_lock(&ring->lock);
			cask_ring_flush_locked(ring);
			spin_unlock(&ring->lock);
			ret = 0;
		}
		break;
	case LOGGER_GET_VERSION:
		ret = (file->f_mode & FMODE_READ) ? r->version : -EBADF;
		break;
	case LOGGER_SET_VERSION:
		if (!(file->f_mode & FMODE_READ)) {
			ret = -EBADF;
			break;
		}
		ret = get_user(version, (int __user *)arg);
		if (ret)
			break;
		if (version == 1 || version == 2 ||
		    (version == CASK_LOGGER_VERSION_CELL &&
		     file_ns_capable(file, &init_user_ns, CAP_SYSLOG)))
			r->version = version;
		else
			ret = -EINVAL;
		break;
	case CASK_LOGGER_SELECT:
		ret = cask_log_select(r, file, (void __user *)arg);
		break;
	default:
		/* What the last staging logger answered. */
		ret = -EINVAL;
	}
	mutex_unlock(&r->lock);
	return ret;
}

static struct miscdevice cask_log_misc[CASK_LOG_NR];

static int cask_log_open(struct inode *inode, struct file *file)
{
	enum cask_log_id log = (struct miscdevice *)file->private_data - cask_log_misc;
	struct cask_log_reader *r;
	struct cask_log_ring *ring;
	struct cask_cell *cell;
	int ret;

	ret = nonseekable_open(inode, file);
	if (ret)
		return ret;
	cell = cask_cell_get_current();
	if (IS_ERR(cell))
		return PTR_ERR(cell);
	/* Per-open memory is the opener's to pay for, like the file itself. */
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r) {
		ret = -ENOMEM;
		goto put_cell;
	}
	mutex_init(&r->lock);
	INIT_LIST_HEAD(&r->cursors);
	r->log = log;
	r->lc = cask_cell_data(cell, &cask_logger_driver);
	r->rlc = r->lc;
	r->version = 1;
	r->euid = file->f_cred->euid;
	r->user_ns = file->f_cred->user_ns;

	if (file->f_mode & FMODE_READ) {
		r->bounce = kmalloc(LOGGER_ENTRY_MAX_PAYLOAD, GFP_KERNEL_ACCOUNT);
		if (!r->bounce) {
			ret = -ENOMEM;
			goto free_reader;
		}
		/* As the staging logger: the log group, or CAP_SYSLOG in the cell. */
		r->sees_all = in_egroup_p(inode->i_gid) ||
			      file_ns_capable(file, cask_cell_user_ns(cell), CAP_SYSLOG);
		r->pid_ns = get_pid_ns(task_active_pid_ns(current));
		ring = &r->lc->rings[log];
		spin_lock(&ring->lock);
		r->off = ring->head;
		spin_unlock(&ring->lock);
		atomic_inc(&ring->readers);
	}
	file->private_data = r;
	return 0;

free_reader:
	kfree(r);
put_cell:
	cask_cell_put(cell);
	return ret;
}

static int cask_log_release(struct inode *inode, struct file *file)
{
	struct cask_log_reader *r = file->private_data;
	struct cask_cell *cell = r->lc->cell;

	if (file->f_mode & FMODE_READ) {
		mutex_lock(&r->lock);
		cask_log_drop_selection_locked(r);
		mutex_unlock(&r->lock);
		put_pid_ns(r->pid_ns);
		kfree(r->bounce);
	}
	kfree(r);
	/* Last: the cell's release frees the rings this file used. */
	cask_cell_put(cell);
	return 0;
}

static const struct file_operations cask_log_fops = {
	.owner = THIS_MODULE,
	.open = cask_log_open,
	.release = cask_log_release,
	.read = cask_log_read,
	.write_iter = cask_log_write_iter,
	.poll = cask_log_poll,
	.unlocked_ioctl = cask_log_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/* log_main etc. (Android's ueventd names), as /dev/log/main etc. */
static char cask_log_misc_name[CASK_LOG_NR][16];
static char cask_log_misc_node[CASK_LOG_NR][16];

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

static void *cask_logger_attach(struct cask_cell *cell)
{
	struct cask_logger_cell *lc;
	int i;

	lc = kzalloc(sizeof(*lc), GFP_KERNEL);
	if (!lc)
		return ERR_PTR(-ENOMEM);
	lc->cell = cell;
	for (i = 0; i < CASK_LOG_NR; i++)
		cask_ring_init(&lc->rings[i], CASK_LOG_SIZE_DEFAULT);
	mutex_lock(&cask_logger_lock);
	list_add_tail(&lc->node, &cask_logger_cells);
	cask_logger_gen++;
	mutex_unlock(&cask_logger_lock);
	return lc;
}

static void cask_logger_detach(struct cask_cell *cell, void *data)
{
	struct cask_logger_cell *lc = data;
	int i;

	mutex_lock(&cask_logger_lock);
	list_del(&lc->node);
	mutex_unlock(&cask_logger_lock);
	for (i = 0; i < CASK_LOG_NR; i++)
		kvfree(lc->rings[i].buf);
	kfree(lc);
}

static struct cask_driver cask_logger_driver = {
	.name = "logger",
	.attach = cask_logger_attach,
	.detach = cask_logger_detach,
	.groups = cask_logger_groups,
};

static int __init cask_logger_init(void)
{
	int i, ret;

	for (i = 0; i < CASK_LOG_NR; i++)
		init_waitqueue_head(&cask_logger_host_wq[i]);
	cask_logger_sysfs_init();
	ret = cask_driver_register(&cask_logger_driver);
	if (ret)
		return ret;
	for (i = 0; i < CASK_LOG_NR; i++) {
		snprintf(cask_log_misc_name[i], sizeof(cask_log_misc_name[i]),
			 "log_%s", cask_log_names[i]);
		snprintf(cask_log_misc_node[i], sizeof(cask_log_misc_node[i]),
			 "log/%s", cask_log_names[i]);
		cask_log_misc[i] = (struct miscdevice) {
			.minor = MISC_DYNAMIC_MINOR,
			.name = cask_log_misc_name[i],
			.nodename = cask_log_misc_node[i],
			.fops = &cask_log_fops,
			.mode = 0666,
		};
		ret = misc_register(&cask_log_misc[i]);
		if (ret)
			goto deregister_misc;
	}
	return 0;

deregister_misc:
	while (--i >= 0)
		misc_deregister(&cask_log_misc[i]);
	cask_driver_unregister(&cask_logger_driver);
	return ret;
}

static void __exit cask_logger_exit(void)
{
	int i;

	for (i = CASK_LOG_NR - 1; i >= 0; i--)
		misc_deregister(&cask_log_misc[i]);
	cask_driver_unregister(&cask_logger_driver);
}

module_init(cask_logger_init);
module_exit(cask_logger_exit);

MODULE_IMPORT_NS(CASK);
MODULE_DESCRIPTION("cask: Android logger devices with per-container rings");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The cask developers");
