// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/lowmemorykiller: the kill events of Android common kernels, per
 * cell. Each read returns the reader's next kill, formatted for it (pids
 * in its PID namespace, the uid in its user namespace); -EAGAIN when there
 * is none; poll() says when there is. Once the cell is unlinked its
 * killer stops: a reader gets the kills it has not read, then end of
 * file, and poll() says EPOLLHUP, so that lmkd reopens the file.
 *
 * The file is 0444, and any task of the cell (or the host) may open it,
 * so reading must not take events away from lmkd: a cell keeps its last
 * LMK_EVENTS_MAX kills in a ring numbered by a 64-bit sequence, and each
 * open file has its own cursor into it. A reader sees every kill made
 * after its open() once; one that falls more than LMK_EVENTS_MAX behind
 * skips to the oldest kept. Readers cost the killer nothing, whatever
 * their number.
 *
 * An open file holds its cell and the module, so the cell's state and
 * its wait queue outlive the file's poll and epoll entries; the module
 * cannot be unloaded while a file is open.
 *
 * Locking: lmk_reader.lock (a mutex) makes one file's reads one at a time
 * (one cursor), outside lc->ev_lock (a spinlock), which protects the ring
 * and its sequence; the killer takes lc->ev_lock under lc->lock.
 */
#include <linux/cred.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/poll.h>
#include <linux/proc_fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <cask/cell.h>

#include "lmk.h"

/* Enough for the line and a full comm. */
#define LMK_EVENT_LEN	(10 * 21 + TASK_COMM_LEN + 4)

static struct proc_dir_entry *lmk_proc;

/**
 * lmk_event_release() - drop an event's pid references
 * @ev: the event, maybe never filled (no pids)
 *
 * Context: any.
 */
void lmk_event_release(struct lmk_event *ev)
{
	put_pid(ev->pid);
	put_pid(ev->tgid);
	ev->pid = NULL;
	ev->tgid = NULL;
}

/**
 * lmk_event_queue() - add a kill to the cell's ring, wake its readers
 * @lc: the cell's state
 * @ev: the kill; the ring takes over its pid references
 *
 * The ring keeps the newest LMK_EVENTS_MAX kills; the oldest is dropped.
 *
 * Context: process context.
 */
void lmk_event_queue(struct lmk_cell *lc, struct lmk_event *ev)
{
	struct lmk_event *slot, old;

	spin_lock(&lc->ev_lock);
	slot = &lc->ring[lc->ev_seq % LMK_EVENTS_MAX];
	old = *slot;
	*slot = *ev;
	lc->ev_seq++;
	spin_unlock(&lc->ev_lock);
	wake_up_interruptible(&lc->wait);
	lmk_event_release(&old);
}

/**
 * lmk_events_hangup() - tell the cell's readers that it is gone
 * @lc: the state of a cell whose killer lmk_cell_unlink() stopped
 *
 * After the killer's last kill is in the ring: a reader reads what it
 * has not yet read, then gets end of file, and poll() reports EPOLLHUP.
 *
 * Context: process context.
 */
void lmk_events_hangup(struct lmk_cell *lc)
{
	spin_lock(&lc->ev_lock);
	lc->hungup = true;
	spin_unlock(&lc->ev_lock);
	wake_up_interruptible_poll(&lc->wait, EPOLLHUP);
}

/**
 * lmk_events_flush() - drop the kills kept; let go of pollers
 * @lc: the state of a cell being detached
 *
 * Context: process context; the caller frees @lc after an RCU grace
 * period, as wake_up_pollfree() requires.
 */
void lmk_events_flush(struct lmk_cell *lc)
{
	unsigned int i;

	/* No file is open (each holds the cell): for safety only. */
	wake_up_pollfree(&lc->wait);
	for (i = 0; i < LMK_EVENTS_MAX; i++)
		lmk_event_release(&lc->ring[i]);
}

/* Android's line: pid uid tgid min_flt maj_flt rss adj min_adj start\ncomm */
static int lmk_event_format(char *buf, size_t len, const struct lmk_event *ev)
{
	struct pid_namespace *ns = task_active_pid_ns(current);

	return scnprintf(buf, len, "%lu %lu %lu %lu %lu %lu %hd %hd %llu\n%s\n",
			 (unsigned long)pid_nr_ns(ev->pid, ns),
			 (unsigned long)from_kuid_munged(current_user_ns(),
							 ev->uid),
			 (unsigned long)pid_nr_ns(ev->tgid, ns),
			 ev->min_flt, ev->maj_flt, ev->rss, ev->adj,
			 ev->min_adj,
			 div_u64(ev->start_ns, NSEC_PER_SEC / USER_HZ),
			 ev->comm);
}

/**
 * struct lmk_reader - an open /proc/lowmemorykiller
 * @cell: the opener's cell (a reference)
 * @lc: its state, which lives as long as @cell is attached
 * @lock: one read at a time, so the cursor moves once per kill returned
 * @next: the sequence number of the next kill to return (protected by
 *	@lock)
 */
struct lmk_reader {
	struct cask_cell *cell;
	struct lmk_cell *lc;
	struct mutex lock;	/* reads of this file, one at a time */
	u64 next;		/* lock */
};

/*
 * proc_ops has no owner, so procfs takes no module reference for an open
 * file. Without one, rmmod would free a cell's wait queue under a task
 * sleeping in poll() or select(), which wake_up_pollfree() does not reach
 * (it serves epoll, aio and io_uring only): each open file holds the
 * module, and unloading is refused until the last is closed.
 */
static int lmk_proc_open(struct inode *inode, struct file *file)
{
	struct lmk_reader *r;
	int ret = -ENOMEM;

	/* Fails only while the module is going. */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		goto put_module;
	/*
	 * The reader's cell, bound for the file's life. Reading makes no
	 * cell: a task without one has seen no kill (the host always has
	 * its cell).
	 */
	r->cell = cask_cell_find_current();
	if (!r->cell) {
		ret = -ENOENT;
		goto free_reader;
	}
	r->lc = cask_cell_data(r->cell, &lmk_driver);
	mutex_init(&r->lock);
	/* Kills from now on: those before were others' to read. */
	spin_lock(&r->lc->ev_lock);
	r->next = r->lc->ev_seq;
	spin_unlock(&r->lc->ev_lock);
	file->private_data = r;
	return 0;

free_reader:
	kfree(r);
put_module:
	module_put(THIS_MODULE);
	return ret;
}

static int lmk_proc_release(struct inode *inode, struct file *file)
{
	struct lmk_reader *r = file->private_data;

	cask_cell_put(r->cell);
	mutex_destroy(&r->lock);
	kfree(r);
	/*
	 * This code may run on after the put: proc_remove() at unload waits
	 * for a ->proc_release() in progress to return.
	 */
	module_put(THIS_MODULE);
	return 0;
}

/*
 * Format the reader's next kill into @buf; its sequence, or -EAGAIN, or
 * -ENODEV when there will be none (the cell was unlinked).
 */
static s64 lmk_reader_format(struct lmk_reader *r, char *buf, size_t len,
			     int *n)
{
	struct lmk_cell *lc = r->lc;
	u64 seq, oldest;
	bool hungup;

	lockdep_assert_held(&r->lock);
	spin_lock(&lc->ev_lock);
	if (r->next == lc->ev_seq) {
		hungup = lc->hungup;
		spin_unlock(&lc->ev_lock);
		return hungup ? -ENODEV : -EAGAIN;
	}
	/* Fell behind the ring: the oldest kept is next. */
	oldest = lc->ev_seq > LMK_EVENTS_MAX ? lc->ev_seq - LMK_EVENTS_MAX : 0;
	seq = max(r->next, oldest);
	*n = lmk_event_format(buf, len, &lc->ring[seq % LMK_EVENTS_MAX]);
	spin_unlock(&lc->ev_lock);
	return seq;
}

static ssize_t lmk_proc_read(struct file *file, char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	struct lmk_reader *r = file->private_data;
	char buf[LMK_EVENT_LEN];
	ssize_t ret;
	int len = 0;
	s64 seq;

	if (mutex_lock_interruptible(&r->lock))
		return -EINTR;
	seq = lmk_reader_format(r, buf, sizeof(buf), &len);
	if (seq == -ENODEV) {
		/* End of file: lmkd reopens the file, in its new cell. */
		ret = 0;
	} else if (seq < 0) {
		ret = seq;
	} else if (len > count) {
		/* Not returned: the next read gets it. */
		ret = -EINVAL;
	} else if (copy_to_user(ubuf, buf, len)) {
		ret = -EFAULT;
	} else {
		WRITE_ONCE(r->next, seq + 1);
		ret = len;
	}
	mutex_unlock(&r->lock);
	return ret;
}

static __poll_t lmk_proc_poll(struct file *file, poll_table *wait)
{
	struct lmk_reader *r = file->private_data;
	struct lmk_cell *lc = r->lc;
	__poll_t mask = 0;

	poll_wait(file, &lc->wait, wait);
	/* r->next unlocked: a read racing with poll() may make this stale. */
	spin_lock(&lc->ev_lock);
	if (READ_ONCE(r->next) != lc->ev_seq)
		mask |= EPOLLIN | EPOLLRDNORM;
	if (lc->hungup)
		mask |= EPOLLHUP;
	spin_unlock(&lc->ev_lock);
	return mask;
}

static const struct proc_ops lmk_proc_ops = {
	.proc_open = lmk_proc_open,
	.proc_release = lmk_proc_release,
	.proc_read = lmk_proc_read,
	.proc_poll = lmk_proc_poll,
	.proc_lseek = noop_llseek,
};

/**
 * lmk_proc_init() - create /proc/lowmemorykiller
 *
 * Mode 0444, as Android's: each cell's readers see only their own kills.
 *
 * Context: module init, after the driver's registration.
 * Return: 0 or -ENOMEM.
 */
int lmk_proc_init(void)
{
	lmk_proc = proc_create("lowmemorykiller", 0444, NULL, &lmk_proc_ops);
	return lmk_proc ? 0 : -ENOMEM;
}

/**
 * lmk_proc_exit() - remove /proc/lowmemorykiller
 *
 * Waits for running calls. No file is open: each holds the module.
 *
 * Context: module exit, before the driver unregisters.
 */
void lmk_proc_exit(void)
{
	proc_remove(lmk_proc);
}
