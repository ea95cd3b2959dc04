// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/lowmemorykiller: the kill events of Android common kernels, per
 * cell. Each read takes one kill off the reader's cell's queue, formatted
 * for the reader (pids in its PID namespace, the uid in its user
 * namespace); -EAGAIN when there is none; poll() says when there is.
 *
 * An open file holds its cell and the module, so the cell's state and
 * its wait queue outlive the file's poll and epoll entries; the module
 * cannot be unloaded while a file is open.
 *
 * Locking: lc->ev_lock (a spinlock) protects the queue; it is taken under
 * lc->lock by the killer and alone by readers.
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
 * lmk_event_free() - free a queued event
 * @ev: the event
 *
 * Context: any.
 */
void lmk_event_free(struct lmk_event *ev)
{
	lmk_event_release(ev);
	kfree(ev);
}

/**
 * lmk_event_queue() - add a kill to the cell's queue, wake its readers
 * @lc: the cell's state
 * @ev: the event; the queue owns it
 *
 * The queue keeps the newest LMK_EVENTS_MAX kills: a reader that stopped
 * reading loses the oldest, and costs no more memory than that.
 *
 * Context: process context.
 */
void lmk_event_queue(struct lmk_cell *lc, struct lmk_event *ev)
{
	struct lmk_event *old = NULL;

	spin_lock(&lc->ev_lock);
	/* At most LMK_EVENTS_MAX, whatever a racing read put back. */
	if (lc->nr_events >= LMK_EVENTS_MAX) {
		old = list_first_entry(&lc->events, struct lmk_event, node);
		list_del(&old->node);
		lc->nr_events--;
	}
	list_add_tail(&ev->node, &lc->events);
	lc->nr_events++;
	spin_unlock(&lc->ev_lock);
	wake_up_interruptible(&lc->wait);
	if (old)
		lmk_event_free(old);
}

/**
 * lmk_events_flush() - free every queued event; let go of pollers
 * @lc: the state of a cell being detached
 *
 * Context: process context; the caller frees @lc after an RCU grace
 * period, as wake_up_pollfree() requires.
 */
void lmk_events_flush(struct lmk_cell *lc)
{
	struct lmk_event *ev, *tmp;

	wake_up_pollfree(&lc->wait);
	list_for_each_entry_safe(ev, tmp, &lc->events, node)
		lmk_event_free(ev);
	INIT_LIST_HEAD(&lc->events);
	lc->nr_events = 0;
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

static struct lmk_cell *lmk_file_cell(struct file *file)
{
	return cask_cell_data(file->private_data, &lmk_driver);
}

/*
 * proc_ops has no owner, so procfs takes no module reference for an open
 * file. Without one, rmmod would free a cell's wait queue under a task
 * sleeping in poll() or select(), which wake_up_pollfree() does not reach
 * (it serves epoll, aio and io_uring only): each open file holds the
 * module, and unloading is refused until the last is closed.
 */
static int lmk_proc_open(struct inode *inode, struct file *file)
{
	struct cask_cell *cell;

	/* Fails only while the module is going. */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	/*
	 * The reader's cell, bound for the file's life. Reading makes no
	 * cell: a task without one has seen no kill (the host always has
	 * its cell).
	 */
	cell = cask_cell_find_current();
	if (!cell) {
		module_put(THIS_MODULE);
		return -ENOENT;
	}
	file->private_data = cell;
	return 0;
}

static int lmk_proc_release(struct inode *inode, struct file *file)
{
	cask_cell_put(file->private_data);
	/*
	 * This code may run on after the put: proc_remove() at unload waits
	 * for a ->proc_release() in progress to return.
	 */
	module_put(THIS_MODULE);
	return 0;
}

static ssize_t lmk_proc_read(struct file *file, char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	struct lmk_cell *lc = lmk_file_cell(file);
	char buf[LMK_EVENT_LEN];
	struct lmk_event *ev;
	int len;

	spin_lock(&lc->ev_lock);
	ev = list_first_entry_or_null(&lc->events, struct lmk_event, node);
	if (ev) {
		list_del(&ev->node);
		lc->nr_events--;
	}
	spin_unlock(&lc->ev_lock);
	if (!ev)
		return -EAGAIN;
	len = lmk_event_format(buf, sizeof(buf), ev);
	if (len > count || copy_to_user(ubuf, buf, len)) {
		/* Not consumed: the next read gets it (at most one over). */
		spin_lock(&lc->ev_lock);
		list_add(&ev->node, &lc->events);
		lc->nr_events++;
		spin_unlock(&lc->ev_lock);
		return len > count ? -EINVAL : -EFAULT;
	}
	lmk_event_free(ev);
	return len;
}

static __poll_t lmk_proc_poll(struct file *file, poll_table *wait)
{
	struct lmk_cell *lc = lmk_file_cell(file);

	poll_wait(file, &lc->wait, wait);
	return READ_ONCE(lc->nr_events) ? EPOLLIN | EPOLLRDNORM : 0;
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
