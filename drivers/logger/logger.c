// SPDX-License-Identifier: GPL-2.0
/*
 * cask_logger's file operations: writing an entry, reading one or merging
 * every cell's, poll, the ioctls, and who may read or clear what (the log
 * group, CAP_SYSLOG). open() binds a file to its opener's cell. main.c
 * makes the devices these serve.
 *
 * Locking: reader->lock (an open file's mutex, _rlocked) before
 * ring->lock (a ring's spinlock, _locked); the order and what each
 * guards are at the top of main.c.
 *
 * Lifetimes: a file is bound to its opener's cell for its whole life and
 * holds a reference on it, so that cell's rings outlive the file. A host
 * reader that selects one other cell holds a reference on that cell too. A
 * merged reader holds none between calls: its cursors keep a cell id and an
 * offset, and each read, poll or ioctl walks the cells that still exist,
 * holding references only until it returns (a stalled merged reader must not
 * keep every dead container's logs alive).
 *
 * Wait queues (no wait entry may outlive its queue, the CVE-2019-2215
 * class): a file waits, in read() and through poll()/epoll, on one queue
 * chosen at open and never changed. A file that may select other cells
 * (CAP_SYSLOG in the initial user namespace, from its f_cred, opened by a
 * task of the host: cask_current_in_host()) waits on a
 * static per-buffer host queue that every write wakes, whatever it selects
 * later; any other file waits on its own cell's ring, which it pins. An
 * epoll entry added before CASK_LOGGER_SELECT is thus woken for the cells
 * selected after it.
 */
#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/fs.h>
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
#include <cask/chardev.h>
#include <kunit/visibility.h>

#include "logger.h"

/* Payloads up to this size are copied in on the stack. */
#define CASK_LOG_SMALL	256

/*
 * Where files that may select other cells wait, per buffer; every write
 * wakes it. Of the module, so that it outlives every file (see the top).
 */
wait_queue_head_t cask_logger_host_wq[CASK_LOG_NR];

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

/* Store one entry, allocating the ring's buffer on first use. */
static int cask_log_store(struct cask_log_ring *ring,
			  const struct cask_log_hdr *hdr, const void *payload)
{
	bool stored;
	int ret;

	/* Again if a resize took the new buffer away meanwhile. */
	for (;;) {
		ret = cask_ring_alloc_buf(ring);
		if (ret)
			return ret;
		spin_lock(&ring->lock);
		stored = ring->buf;
		if (stored)
			cask_ring_write_locked(ring, hdr, payload);
		spin_unlock(&ring->lock);
		if (stored)
			return 0;
		/* The cell's root resizing in a loop must not hold us here. */
		if (fatal_signal_pending(current))
			return -EINTR;
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
static ssize_t cask_log_take_rlocked(struct cask_log_reader *r,
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
	*off = start + CASK_LOG_HDR_LEN + hdr->len;

	ret = cask_log_copy_entry(r, lc, hdr, buf);
	if (ret < 0)
		*off = start;
	return ret;
}

static ssize_t cask_log_read_one_rlocked(struct cask_log_reader *r,
					 char __user *buf, size_t count)
{
	struct cask_log_hdr hdr;
	ssize_t ret;

	do {
		if (!cask_log_peek_rlocked(r, &hdr))
			return -EAGAIN;
		ret = cask_log_take_rlocked(r, r->rlc, &r->off, &hdr, buf, count);
	} while (ret == -EAGAIN);
	return ret;
}

/**
 * cask_log_cursors_get_rlocked() - give a merged reader's cursors their cells
 * @r: the reader
 *
 * For one call: a cursor for every linked cell the reader lacks one for (at
 * that ring's oldest entry), none for released cells, and a reference on
 * each cell with a cursor until cask_log_cursors_put_rlocked(). A cell not
 * linked yet (attached, not yet registered) is passed over and looked at
 * again on the next call: nothing records that a walk happened, so a cell
 * cannot be missed for good (as it could with the generation count this
 * replaced). The walk and the cursor list are both in ascending id order,
 * so this is one pass over each.
 *
 * Context: process context, under @r->lock; static unless KUnit is on.
 * Return: 0, or -ENOMEM if a cell got no cursor (the others have theirs).
 */
VISIBLE_IF_KUNIT int cask_log_cursors_get_rlocked(struct cask_log_reader *r)
{
	struct cask_log_cursor *cur;
	struct cask_log_sync s;
	struct cask_cell *cell;

	lockdep_assert_held(&r->lock);
	cask_log_sync_start(&s, &r->cursors);
	for (cell = cask_cell_next(NULL); cell; cell = cask_cell_next(cell)) {
		cur = cask_log_sync_cell(&s, cask_cell_id(cell),
					 cask_cell_linked(cell));
		if (!cur)
			continue;
		/* The walk's reference moves on with it: hold our own. */
		cask_cell_get(cell);
		cur->lc = cask_cell_data(cell, &cask_logger_driver);
	}
	return cask_log_sync_end(&s);
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_cursors_get_rlocked);

/**
 * cask_log_cursors_put_rlocked() - drop the cells of a merged reader's call
 * @r: the reader
 *
 * The end of every call that got them: a merged reader keeps no cell.
 *
 * Context: under @r->lock; static unless KUnit is on.
 */
VISIBLE_IF_KUNIT void cask_log_cursors_put_rlocked(struct cask_log_reader *r)
{
	struct cask_log_cursor *cur;

	lockdep_assert_held(&r->lock);
	list_for_each_entry(cur, &r->cursors, node) {
		if (!cur->lc)
			continue;
		cask_cell_put(cur->lc->cell);
		cur->lc = NULL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_cursors_put_rlocked);

static ssize_t cask_log_read_merged_rlocked(struct cask_log_reader *r,
					    char __user *buf, size_t count)
{
	struct cask_log_cursor *cur;
	struct cask_log_hdr hdr;
	ssize_t ret;

	ret = cask_log_cursors_get_rlocked(r);
	if (!ret) {
		/* -EAGAIN from a take: overwritten meanwhile, look again. */
		do {
			cur = cask_log_merged_next_rlocked(r, &hdr);
			if (!cur)
				break;
			ret = cask_log_take_rlocked(r, cur->lc, &cur->off, &hdr,
						    buf, count);
		} while (ret == -EAGAIN);
		if (!cur)
			ret = -EAGAIN;
	}
	cask_log_cursors_put_rlocked(r);
	return ret;
}

static ssize_t cask_log_read(struct file *file, char __user *buf,
			     size_t count, loff_t *pos)
{
	struct cask_log_reader *r = file->private_data;
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	bool queued = false;
	ssize_t ret;

	for (;;) {
		if (mutex_lock_interruptible(&r->lock)) {
			ret = -ERESTARTSYS;
			break;
		}
		if (r->merged)
			ret = cask_log_read_merged_rlocked(r, buf, count);
		else
			ret = cask_log_read_one_rlocked(r, buf, count);
		mutex_unlock(&r->lock);
		if (ret != -EAGAIN || (file->f_flags & O_NONBLOCK))
			break;
		/*
		 * Get on the queue, then look once more: a write in between
		 * marks the entry woken and wait_woken() returns at once.
		 */
		if (!queued) {
			add_wait_queue(r->wq, &wait);
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
		remove_wait_queue(r->wq, &wait);
	return ret;
}

/* The next entry's header for poll() and GET_NEXT_ENTRY_LEN. */
static int cask_log_peek_any_rlocked(struct cask_log_reader *r,
				     struct cask_log_hdr *hdr)
{
	int ret;

	lockdep_assert_held(&r->lock);
	if (!r->merged)
		return cask_log_peek_rlocked(r, hdr);
	ret = cask_log_cursors_get_rlocked(r);
	if (!ret)
		ret = !!cask_log_merged_next_rlocked(r, hdr);
	cask_log_cursors_put_rlocked(r);
	return ret;
}

static __poll_t cask_log_poll(struct file *file, poll_table *wait)
{
	struct cask_log_reader *r = file->private_data;
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;
	struct cask_log_hdr hdr;
	int found;

	if (!(file->f_mode & FMODE_READ))
		return mask;
	poll_wait(file, r->wq, wait);
	/*
	 * A read may hold the lock across a copy_to_user() that a
	 * userfaultfd stalls: be interruptible. Without EPOLLIN, select()
	 * and poll() see the signal and return.
	 */
	if (mutex_lock_interruptible(&r->lock))
		return mask;
	found = cask_log_peek_any_rlocked(r, &hdr);
	mutex_unlock(&r->lock);
	if (found > 0)
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

static long cask_log_next_len_rlocked(struct cask_log_reader *r)
{
	struct cask_log_hdr hdr;
	int found;

	found = cask_log_peek_any_rlocked(r, &hdr);
	if (found <= 0)
		return found;
	return cask_log_user_hdr_len(r->version) + hdr.len;
}

/* Unread bytes; Android's API returns an int, so the sum is capped. */
static long cask_log_len_rlocked(struct cask_log_reader *r)
{
	struct cask_log_cursor *cur;
	struct cask_log_ring *ring;
	u64 len = 0;
	int ret;

	lockdep_assert_held(&r->lock);
	if (!r->merged) {
		ring = &r->rlc->rings[r->log];
		spin_lock(&ring->lock);
		len = ring->tail - cask_ring_catch_up_locked(ring, r->off);
		spin_unlock(&ring->lock);
		return len;
	}
	ret = cask_log_cursors_get_rlocked(r);
	list_for_each_entry(cur, &r->cursors, node) {
		if (!cur->lc)
			continue;
		ring = &cur->lc->rings[r->log];
		spin_lock(&ring->lock);
		len += ring->tail - cask_ring_catch_up_locked(ring, cur->off);
		spin_unlock(&ring->lock);
	}
	cask_log_cursors_put_rlocked(r);
	return ret ?: min_t(u64, len, INT_MAX);
}

/* Back to reading the opener's cell, from any selection. */
static void cask_log_drop_selection_rlocked(struct cask_log_reader *r)
{
	lockdep_assert_held(&r->lock);
	cask_log_cursors_free(&r->cursors);
	if (r->merged) {
		/* Merged readers are not counted as readers of any ring. */
		r->merged = false;
	} else if (r->rlc != r->lc) {
		atomic_dec(&r->rlc->rings[r->log].host_readers);
		cask_cell_put(r->rlc->cell);
	} else {
		atomic_dec(&r->lc->rings[r->log].readers);
	}
	r->rlc = r->lc;
}

/* The host extension: read another cell, or all of them merged. */
static long cask_log_select_rlocked(struct cask_log_reader *r,
				    struct file *file, void __user *argp)
{
	struct cask_logger_select sel;
	struct cask_log_ring *ring;
	struct cask_cell *cell;

	lockdep_assert_held(&r->lock);
	if (!(file->f_mode & FMODE_READ))
		return -EBADF;
	if (!r->may_select)
		return -EPERM;
	if (copy_from_user(&sel, argp, sizeof(sel)))
		return -EFAULT;
	/* Rejected now, so that the bytes stay free for a later extension. */
	if (sel.flags & ~CASK_LOGGER_ALL_CELLS ||
	    memchr_inv(sel.__pad, 0, sizeof(sel.__pad)))
		return -EINVAL;

	if (sel.flags & CASK_LOGGER_ALL_CELLS) {
		cask_log_drop_selection_rlocked(r);
		/* Cursors are made by the next call, at each ring's oldest entry. */
		r->merged = true;
		return 0;
	}

	if (!memchr(sel.cell, '\0', sizeof(sel.cell)))
		return -EINVAL;
	cell = cask_cell_get_by_name(sel.cell);
	if (!cell)
		return -ENOENT;
	cask_log_drop_selection_rlocked(r);
	if (cell == r->lc->cell) {
		cask_cell_put(cell);
		atomic_inc(&r->lc->rings[r->log].readers);
	} else {
		r->rlc = cask_cell_data(cell, &cask_logger_driver);
		atomic_inc(&r->rlc->rings[r->log].host_readers);
	}
	ring = &r->rlc->rings[r->log];
	spin_lock(&ring->lock);
	r->off = ring->head;
	spin_unlock(&ring->lock);
	return 0;
}

/* Android's AID_LOG: the group of its logd, logcat and "adb shell". */
#define CASK_AID_LOG	1007

/**
 * cask_log_in_log_group() - whether the caller is in the log group
 * @node_gid: group of the device node the file was opened through
 * @cell_ns: user namespace owning the caller's cell
 * @aid_log: whether AID_LOG of @cell_ns counts (a registered container's cell)
 *
 * The staging logger's log group was the device node's group. Inside a
 * container the node is the host's, bind-mounted: its group is a host
 * group, often one the container's user namespace does not even map, while
 * the container's Android puts its log readers in AID_LOG of its own user
 * namespace. So in the cell of a container a runtime registered AID_LOG of
 * the cell's user namespace counts too; it reaches only that cell's rings.
 * Not in the host cell nor in an auto cell (any host service's private IPC
 * namespace makes one), where gid 1007 is whatever host group has that
 * number.
 *
 * Context: process context; current credentials.
 * Return: true if in the log group.
 */
bool cask_log_in_log_group(kgid_t node_gid, struct user_namespace *cell_ns,
			   bool aid_log)
{
	kgid_t gid;

	if (in_egroup_p(node_gid))
		return true;
	if (!aid_log)
		return false;
	gid = make_kgid(cell_ns, CASK_AID_LOG);
	return gid_valid(gid) && in_egroup_p(gid);
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_in_log_group);

/**
 * cask_log_may_flush() - whether the caller may clear a cell's ring
 * @node_gid: group of the device node the file was opened through
 * @cell_ns: user namespace owning the cell whose ring is cleared
 * @aid_log: whether AID_LOG of @cell_ns counts (cask_log_in_log_group())
 *
 * As Android's logger: the log group (cask_log_in_log_group()), or
 * CAP_SYSLOG, here in the cell's user namespace so that a container's root
 * may clear its own logs and the host's root any cell's. Current
 * credentials, not the opener's: clearing is an act of the caller's.
 *
 * Context: process context.
 * Return: true if allowed.
 */
bool cask_log_may_flush(kgid_t node_gid, struct user_namespace *cell_ns,
			bool aid_log)
{
	return cask_log_in_log_group(node_gid, cell_ns, aid_log) ||
	       ns_capable(cell_ns, CAP_SYSLOG);
}
EXPORT_SYMBOL_IF_KUNIT(cask_log_may_flush);

/*
 * FLUSH_LOG clears the ring the file reads: the opener's cell's, or the
 * cell a host reader selected (logcat -c --cell NAME). Files open only for
 * writing never select, so for Android clients that is their own cell.
 */
static long cask_log_flush_rlocked(struct cask_log_reader *r,
				   struct file *file)
{
	struct cask_log_ring *ring = &r->rlc->rings[r->log];

	lockdep_assert_held(&r->lock);
	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (!cask_log_may_flush(file_inode(file)->i_gid,
				cask_cell_user_ns(r->rlc->cell),
				cask_cell_registered(r->rlc->cell)))
		return -EPERM;
	if (r->merged)
		return -EINVAL;
	spin_lock(&ring->lock);
	cask_ring_flush_locked(ring);
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
		ret = (file->f_mode & FMODE_READ) ? cask_log_len_rlocked(r) : -EBADF;
		break;
	case LOGGER_GET_NEXT_ENTRY_LEN:
		ret = (file->f_mode & FMODE_READ) ? cask_log_next_len_rlocked(r) :
						    -EBADF;
		break;
	case LOGGER_FLUSH_LOG:
		ret = cask_log_flush_rlocked(r, file);
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
		    (version == CASK_LOGGER_VERSION_CELL && r->may_select))
			r->version = version;
		else
			ret = -EINVAL;
		break;
	case CASK_LOGGER_SELECT:
		ret = cask_log_select_rlocked(r, file, (void __user *)arg);
		break;
	default:
		/* What the last staging logger answered. */
		ret = -EINVAL;
	}
	mutex_unlock(&r->lock);
	return ret;
}

static int cask_log_open(struct inode *inode, struct file *file)
{
	enum cask_log_id log = cask_chardev_index(&cask_log_chardev, inode);
	struct cask_log_reader *r;
	struct cask_log_ring *ring;
	struct cask_cell *cell;
	int ret;

	if (!cask_logger_live())
		return -ENODEV;
	ret = nonseekable_open(inode, file);
	if (ret)
		return ret;
	cell = cask_cell_get_or_create();
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
	ring = &r->lc->rings[log];
	r->wq = &ring->wq;

	if (file->f_mode & FMODE_READ) {
		r->bounce = kmalloc(LOGGER_ENTRY_MAX_PAYLOAD, GFP_KERNEL_ACCOUNT);
		if (!r->bounce) {
			ret = -ENOMEM;
			goto free_reader;
		}
		/* As the staging logger: the log group, or CAP_SYSLOG in the cell. */
		r->sees_all = cask_log_in_log_group(inode->i_gid,
						    cask_cell_user_ns(cell),
						    cask_cell_registered(cell)) ||
			      file_ns_capable(file, cask_cell_user_ns(cell), CAP_SYSLOG);
		/* Decided once: the queue a file waits on never changes. */
		r->may_select = file_ns_capable(file, &init_user_ns, CAP_SYSLOG) &&
				cask_current_in_host();
		if (r->may_select)
			r->wq = &cask_logger_host_wq[log];
		r->pid_ns = get_pid_ns(task_active_pid_ns(current));
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
		cask_log_drop_selection_rlocked(r);
		mutex_unlock(&r->lock);
		put_pid_ns(r->pid_ns);
		kfree(r->bounce);
	}
	kfree(r);
	/* Last: the cell's release frees the rings this file used. */
	cask_cell_put(cell);
	return 0;
}

const struct file_operations cask_log_fops = {
	.owner = THIS_MODULE,
	.open = cask_log_open,
	.release = cask_log_release,
	.read = cask_log_read,
	.write_iter = cask_log_write_iter,
	.poll = cask_log_poll,
	.unlocked_ioctl = cask_log_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};
