// SPDX-License-Identifier: GPL-2.0
/*
 * cask_power: Android's /sys/power wake locks and suspend requests per
 * container. Each cell has its own wake_lock, wake_unlock, state,
 * wakeup_count and autosleep files in /sys/kernel/cask/cells/NAME/power/,
 * which a runtime bind-mounts over the container's /sys/power/ entries.
 * A cell's locks become host wakeup sources only as the host's policy for
 * the cell says, and a write to its state file records a vote, read by the
 * host's power manager: a cell never suspends the machine. See
 * Documentation/power.rst.
 *
 * Files: main.c (module, per-cell state, sysfs), parse.c (parsing what
 * cells write, and the text helpers: pure functions), lock.c (the lock
 * table, timeouts, the cap, the vote; deadlines as pure functions).
 *
 * Locking overview, outermost first:
 *
 *   system_transition_mutex  (the PM core's) around the PM notifier,
 *                        which renews every cell's cap budget after a
 *                        suspend and resume
 *   cask_drivers_rwsem   (cask_core's) around attach, unlink and detach
 *   kernfs active refs   of our files, around show and store; the cell's
 *                        directory is removed, waiting for them, before
 *                        unlink and detach
 *   pc->lock             a cell's lock table, policy, counters and vote (a
 *                        mutex); taken by show/store, the expire work and
 *                        the PM notifier
 *   cpower_reap_lock     (a spinlock) the sources of stopped cells, which
 *                        the reap work removes and frees
 *   the kernel's locks   of wakeup sources (added, held and released under
 *                        pc->lock: events_lock, ws->lock, spinlocks) and of
 *                        kernfs (kernfs_notify(), sysfs_get_dirent())
 *
 * pc->lock is never held while taking a cask_core lock, nor while waiting
 * for the expire work, which takes it: unlink and detach cancel the work
 * first (cpower_cell_stop()). Removing a wakeup source waits for an SRCU
 * grace period: that happens with no lock held, in the store that let the
 * source go (cpower_cell_reap()) or in the reap work for a stopped cell,
 * never under pc->lock or cask_drivers_rwsem; module exit flushes the work.
 */
#include <linux/capability.h>
#include <linux/kernfs.h>
#include <linux/kobject.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/suspend.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>
#include <cask/attr.h>
#include <cask/cell.h>

#include "power.h"

static void *cpower_attach(struct cask_cell *cell)
{
	/* Charged to whoever makes the cell: see drivers.rst, "Memory". */
	struct cpower_cell *pc = kzalloc(sizeof(*pc), GFP_KERNEL_ACCOUNT);

	if (!pc)
		return ERR_PTR(-ENOMEM);
	cpower_cell_init(pc, cask_cell_name(cell));
	/* The host's own locks keep the host awake, as /sys/power's do. */
	if (cask_cell_is_host(cell))
		pc->policy = CPOWER_FORWARD;
	return pc;
}

/* Its tasks can no longer reach its files: let the host go at once. */
static void cpower_unlink(struct cask_cell *cell, void *data)
{
	cpower_cell_stop(data);
}

static void cpower_detach(struct cask_cell *cell, void *data)
{
	cpower_cell_exit(data);
	kfree(data);
}

static struct cask_driver cpower_driver;

/* ---- /sys/kernel/cask/cells/NAME/power/ ---- */

/*
 * wake_lock and wake_unlock: cask_core let in a task of the cell or the
 * host. The kernel asks for CAP_BLOCK_SUSPEND to lock and unlock; we ask
 * for it in the cell's user namespace (Android's suspend service has it,
 * and not necessarily root's uid). state, wakeup_count and autosleep
 * need only the file's permissions, as the kernel's do.
 */
static bool cpower_cell_may_write(struct kobject *kobj)
{
	return ns_capable(cask_cell_user_ns(cask_cell_from_kobj(kobj)),
			  CAP_BLOCK_SUSPEND);
}

static struct cpower_cell *cpower_from_kobj(struct kobject *kobj)
{
	return cask_driver_data_from_kobj(kobj);
}

static ssize_t cpower_show_names(struct kobject *kobj, char *buf, bool active)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	ssize_t n;

	mutex_lock(&pc->lock);
	n = cpower_show_names_locked(pc, buf, active);
	mutex_unlock(&pc->lock);
	return n;
}

static ssize_t wake_lock_show(struct kobject *kobj, struct kobj_attribute *a,
			      char *buf)
{
	return cpower_show_names(kobj, buf, true);
}

static ssize_t wake_lock_store(struct kobject *kobj, struct kobj_attribute *a,
			       const char *buf, size_t count)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	struct cpower_lock *spare = NULL;
	u64 timeout_ns;
	size_t len;
	int ret;

	if (!cpower_cell_may_write(kobj))
		return -EPERM;
	ret = cpower_parse_lock(buf, &len, &timeout_ns);
	if (ret)
		return ret;
	mutex_lock(&pc->lock);
	ret = cpower_lock_locked(pc, buf, len, timeout_ns, NULL);
	mutex_unlock(&pc->lock);
	/*
	 * A new name: its memory is allocated without pc->lock, so that a
	 * cell whose memory cgroup must reclaim holds up no host path.
	 */
	if (ret == -EAGAIN) {
		spare = cpower_lock_alloc(pc, buf, len);
		if (!spare)
			return -ENOMEM;
		mutex_lock(&pc->lock);
		ret = cpower_lock_locked(pc, buf, len, timeout_ns, &spare);
		mutex_unlock(&pc->lock);
		/* Made by another writer meanwhile: ours is not needed. */
		cpower_lock_free_spare(spare);
	}
	/* A name evicted to make room: its source goes now, unlocked. */
	cpower_cell_reap(pc);
	return ret ?: count;
}

static ssize_t wake_unlock_show(struct kobject *kobj, struct kobj_attribute *a,
				char *buf)
{
	return cpower_show_names(kobj, buf, false);
}

static ssize_t wake_unlock_store(struct kobject *kobj,
				 struct kobj_attribute *a, const char *buf,
				 size_t count)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	size_t len;
	int ret;

	if (!cpower_cell_may_write(kobj))
		return -EPERM;
	ret = cpower_parse_unlock(buf, &len);
	if (ret)
		return ret;
	mutex_lock(&pc->lock);
	ret = cpower_unlock_locked(pc, buf, len);
	mutex_unlock(&pc->lock);
	return ret ?: count;
}

/* What /sys/power/state lists on every kernel with CONFIG_SUSPEND. */
static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *a,
			  char *buf)
{
	if (!IS_ENABLED(CONFIG_SUSPEND))
		return 0;
	return sysfs_emit(buf, "%s %s\n", cpower_state_names[CPOWER_STATE_FREEZE],
			  cpower_state_names[CPOWER_STATE_MEM]);
}

/*
 * A vote, returning as a completed suspend would. The kernel's write
 * blocks for the whole suspend; ours returns at once, so that nothing a
 * cell does can hold up the removal of its files.
 */
static ssize_t state_store(struct kobject *kobj, struct kobj_attribute *a,
			   const char *buf, size_t count)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	int ret;

	mutex_lock(&pc->lock);
	ret = cpower_vote_locked(pc, cpower_decode_state(buf, count));
	mutex_unlock(&pc->lock);
	return ret ?: count;
}

/*
 * The kernel's read waits while wakeup events are in progress; ours never
 * waits, for the same reason as state_store(): a write of the value then
 * fails while a lock is active, and the suspend loop tries again.
 */
static ssize_t wakeup_count_show(struct kobject *kobj,
				 struct kobj_attribute *a, char *buf)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	unsigned int count;

	mutex_lock(&pc->lock);
	count = pc->wakeup_count;
	mutex_unlock(&pc->lock);
	return sysfs_emit(buf, "%u\n", count);
}

static ssize_t wakeup_count_store(struct kobject *kobj,
				  struct kobj_attribute *a, const char *buf,
				  size_t count)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	int ret;

	mutex_lock(&pc->lock);
	ret = cpower_save_count_locked(pc, buf);
	mutex_unlock(&pc->lock);
	return ret ?: count;
}

static ssize_t autosleep_show(struct kobject *kobj, struct kobj_attribute *a,
			      char *buf)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	enum cpower_state state;

	mutex_lock(&pc->lock);
	state = pc->autosleep;
	mutex_unlock(&pc->lock);
	return sysfs_emit(buf, "%s\n", cpower_state_names[state]);
}

static ssize_t autosleep_store(struct kobject *kobj, struct kobj_attribute *a,
			       const char *buf, size_t count)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	enum cpower_state state;

	/* "off" exactly, or a state: the kernel's rule. */
	state = cpower_decode_state(buf, count);
	if (state == CPOWER_STATE_ON && strcmp(buf, "off") &&
	    strcmp(buf, "off\n"))
		return -EINVAL;
	mutex_lock(&pc->lock);
	cpower_set_autosleep_locked(pc, state);
	mutex_unlock(&pc->lock);
	return count;
}

static ssize_t policy_show(struct kobject *kobj, struct kobj_attribute *a,
			   char *buf)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	enum cpower_policy policy;

	mutex_lock(&pc->lock);
	policy = pc->policy;
	mutex_unlock(&pc->lock);
	return sysfs_emit(buf, "%s\n", cpower_policy_names[policy]);
}

static ssize_t policy_store(struct kobject *kobj, struct kobj_attribute *a,
			    const char *buf, size_t count)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	int policy, ret;

	if (!cask_host_may_admin())
		return -EPERM;
	policy = cpower_parse_policy(buf);
	if (policy < 0)
		return policy;
	mutex_lock(&pc->lock);
	ret = cpower_set_policy_locked(pc, policy);
	mutex_unlock(&pc->lock);
	/* Deny (or a failed change) let sources go: they go now, unlocked. */
	cpower_cell_reap(pc);
	return ret ?: count;
}

/* A value of the cell's settings, read under the lock that protects it. */
static ssize_t cpower_uint_show(struct cpower_cell *pc, const unsigned int *val,
				char *buf)
{
	unsigned int v;

	mutex_lock(&pc->lock);
	v = *val;
	mutex_unlock(&pc->lock);
	return sysfs_emit(buf, "%u\n", v);
}

/* A host-only setting: host root, a decimal in [@min, @max]. */
static int cpower_host_uint_parse(const char *buf, unsigned int min,
				  unsigned int max, unsigned int *val)
{
	if (!cask_host_may_admin())
		return -EPERM;
	if (kstrtouint(buf, 10, val) || *val < min || *val > max)
		return -EINVAL;
	return 0;
}

static ssize_t max_locks_show(struct kobject *kobj, struct kobj_attribute *a,
			      char *buf)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);

	return cpower_uint_show(pc, &pc->max_locks, buf);
}

/* Fewer than the cell has: inactive names go as new ones need room. */
static ssize_t max_locks_store(struct kobject *kobj, struct kobj_attribute *a,
			       const char *buf, size_t count)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	unsigned int max;
	int ret;

	ret = cpower_host_uint_parse(buf, 0, CPOWER_MAX_LOCKS_LIMIT, &max);
	if (ret)
		return ret;
	mutex_lock(&pc->lock);
	pc->max_locks = max;
	mutex_unlock(&pc->lock);
	return count;
}

static ssize_t max_hold_ms_show(struct kobject *kobj, struct kobj_attribute *a,
				char *buf)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);

	return cpower_uint_show(pc, &pc->max_hold_ms, buf);
}

static ssize_t max_hold_ms_store(struct kobject *kobj,
				 struct kobj_attribute *a, const char *buf,
				 size_t count)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	unsigned int ms;
	int ret;

	ret = cpower_host_uint_parse(buf, 1, CPOWER_MAX_HOLD_MS_LIMIT, &ms);
	if (ret)
		return ret;
	mutex_lock(&pc->lock);
	cpower_set_max_hold_locked(pc, ms);
	mutex_unlock(&pc->lock);
	return count;
}

static ssize_t vote_lease_ms_show(struct kobject *kobj,
				  struct kobj_attribute *a, char *buf)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);

	return cpower_uint_show(pc, &pc->vote_lease_ms, buf);
}

/* Applies from the next vote: the one standing keeps its lease. */
static ssize_t vote_lease_ms_store(struct kobject *kobj,
				   struct kobj_attribute *a, const char *buf,
				   size_t count)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	unsigned int ms;
	int ret;

	ret = cpower_host_uint_parse(buf, 1, CPOWER_VOTE_LEASE_MS_LIMIT, &ms);
	if (ret)
		return ret;
	mutex_lock(&pc->lock);
	pc->vote_lease_ms = ms;
	mutex_unlock(&pc->lock);
	return count;
}

/* The counters, read under the lock that protects them. */
enum cpower_stat {
	CPOWER_STAT_ACTIVE,
	CPOWER_STAT_HELD_MS,
	CPOWER_STAT_DENIALS,
	CPOWER_STAT_CAPS,
	CPOWER_STAT_READY,
	CPOWER_STAT_READY_CHANGED,
};

static u64 cpower_stat(struct kobject *kobj, enum cpower_stat stat)
{
	struct cpower_cell *pc = cpower_from_kobj(kobj);
	u64 val = 0;

	mutex_lock(&pc->lock);
	switch (stat) {
	case CPOWER_STAT_ACTIVE:
		val = pc->nr_active;
		break;
	case CPOWER_STAT_HELD_MS:
		val = div_u64(cpower_held_ns_locked(pc), NSEC_PER_MSEC);
		break;
	case CPOWER_STAT_DENIALS:
		val = pc->denials;
		break;
	case CPOWER_STAT_CAPS:
		val = pc->caps;
		break;
	case CPOWER_STAT_READY:
		val = pc->ready;
		break;
	case CPOWER_STAT_READY_CHANGED:
		val = pc->ready_changed_ns;
		break;
	}
	mutex_unlock(&pc->lock);
	return val;
}

static ssize_t active_locks_show(struct kobject *kobj,
				 struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", cpower_stat(kobj, CPOWER_STAT_ACTIVE));
}

static ssize_t total_held_ms_show(struct kobject *kobj,
				  struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", cpower_stat(kobj, CPOWER_STAT_HELD_MS));
}

static ssize_t denials_show(struct kobject *kobj, struct kobj_attribute *a,
			    char *buf)
{
	return sysfs_emit(buf, "%llu\n", cpower_stat(kobj, CPOWER_STAT_DENIALS));
}

static ssize_t caps_show(struct kobject *kobj, struct kobj_attribute *a,
			 char *buf)
{
	return sysfs_emit(buf, "%llu\n", cpower_stat(kobj, CPOWER_STAT_CAPS));
}

static ssize_t suspend_ready_show(struct kobject *kobj,
				  struct kobj_attribute *a, char *buf)
{
	cpower_learn_ready_kn(cpower_from_kobj(kobj), kobj, a->attr.name);
	return sysfs_emit(buf, "%llu\n", cpower_stat(kobj, CPOWER_STAT_READY));
}

static ssize_t suspend_ready_changed_ns_show(struct kobject *kobj,
					     struct kobj_attribute *a,
					     char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  cpower_stat(kobj, CPOWER_STAT_READY_CHANGED));
}

/*
 * The cell's files: owned by the cell's root (cask_core), 0600 as cask's
 * other files (the 0400 ones are the host's, in cpower_host_attrs):
 * Android's init chowns and chmods the mirrored ones for its system user,
 * as it does /sys/power's. Writes check more than the mode (see the
 * store functions).
 */
static CASK_ATTR_RW(wake_lock);
static CASK_ATTR_RW(wake_unlock);
static CASK_ATTR_RW(state);
static CASK_ATTR_RW(wakeup_count);
static CASK_ATTR_RW(autosleep);

static struct attribute *cpower_cell_attrs[] = {
	&cask_attr_wake_lock.attr,
	&cask_attr_wake_unlock.attr,
	&cask_attr_state.attr,
	&cask_attr_wakeup_count.attr,
	&cask_attr_autosleep.attr,
	NULL
};
ATTRIBUTE_GROUPS(cpower_cell);

/*
 * The host's settings for the cell, its limits among them: owned by the
 * host's root from their creation (cask_core's host_groups), so that the
 * cell's root can neither open them for writing nor chmod them; 0644 so
 * that the cell may read what the host decided. Their stores check
 * cask_host_may_admin() as well.
 */
static CASK_ATTR_HOST_RW(policy);
static CASK_ATTR_HOST_RW(max_locks);
static CASK_ATTR_HOST_RW(max_hold_ms);
static CASK_ATTR_HOST_RW(vote_lease_ms);

/*
 * What the host reads of the cell (counters and the vote), also owned by
 * the host's root, 0400: owned by the cell's root, they could be opened
 * and polled by every container whose root maps to the same host uid
 * (docker's userns-remap, rootless podman), which learns when another
 * container votes and locks.
 */
static CASK_ATTR_RO(active_locks);
static CASK_ATTR_RO(total_held_ms);
static CASK_ATTR_RO(denials);
static CASK_ATTR_RO(caps);
static CASK_ATTR_RO(suspend_ready);
static CASK_ATTR_RO(suspend_ready_changed_ns);

static struct attribute *cpower_host_attrs[] = {
	&cask_attr_policy.attr,
	&cask_attr_max_locks.attr,
	&cask_attr_max_hold_ms.attr,
	&cask_attr_vote_lease_ms.attr,
	&cask_attr_active_locks.attr,
	&cask_attr_total_held_ms.attr,
	&cask_attr_denials.attr,
	&cask_attr_caps.attr,
	&cask_attr_suspend_ready.attr,
	&cask_attr_suspend_ready_changed_ns.attr,
	NULL
};
ATTRIBUTE_GROUPS(cpower_host);

/*
 * /sys/kernel/cask/power/suspend_blockers: the cells whose vote a host
 * power manager should wait for. Any user can make a cell (an auto cell)
 * and keep its vote at 0 for ever; a deny cell, which every auto cell is
 * until the host's root says otherwise, is documented never to keep the
 * host awake, so its vote must not either. A cell counts when its policy
 * is forward, or cap with budget left, and it does not vote for sleep;
 * the host's own cell is the power manager's, not listed. The count
 * first, then the names, one a line, as many as the page holds.
 */
static ssize_t suspend_blockers_show(struct kobject *kobj,
				     struct kobj_attribute *a, char *buf)
{
	struct cask_cell *cell;
	struct cpower_cell *pc;
	unsigned int n = 0;
	char *names;
	int nlen = 0;
	ssize_t len;
	bool blocks;

	if (!cask_current_in_host())
		return -EPERM;
	/* The names after the count, which is known only at the end. */
	names = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!names)
		return -ENOMEM;
	for (cell = cask_cell_next(NULL); cell; cell = cask_cell_next(cell)) {
		pc = cask_cell_data(cell, &cpower_driver);
		if (!pc || cask_cell_is_host(cell) || !cask_cell_linked(cell))
			continue;
		mutex_lock(&pc->lock);
		blocks = cpower_blocks_suspend_locked(pc);
		mutex_unlock(&pc->lock);
		if (!blocks)
			continue;
		n++;
		nlen += scnprintf(names + nlen, PAGE_SIZE - nlen, "%s\n",
				  cask_cell_name(cell));
	}
	len = cpower_emit_blockers(buf, n, names, nlen);
	kfree(names);
	return len;
}

static CASK_ATTR_RO(suspend_blockers);

static struct attribute *cpower_global_attrs[] = {
	&cask_attr_suspend_blockers.attr,
	NULL
};
ATTRIBUTE_GROUPS(cpower_global);

/* Forward and cap make host wakeup sources (CONFIG_PM_SLEEP). */
static ssize_t power_wakeup_sources_show(struct kobject *kobj,
					 struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", IS_ENABLED(CONFIG_PM_SLEEP));
}

/* The state files offer "freeze mem" (CONFIG_SUSPEND), else nothing. */
static ssize_t power_suspend_show(struct kobject *kobj,
				  struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", IS_ENABLED(CONFIG_SUSPEND));
}

static CASK_ATTR_PUBLIC_RO(power_wakeup_sources);
static CASK_ATTR_PUBLIC_RO(power_suspend);

static struct attribute *cpower_features[] = {
	&cask_attr_power_wakeup_sources.attr,
	&cask_attr_power_suspend.attr,
	NULL
};

static struct cask_driver cpower_driver = {
	.name = "power",
	.attach = cpower_attach,
	.unlink = cpower_unlink,
	.detach = cpower_detach,
	.groups = cpower_cell_groups,
	.host_groups = cpower_host_groups,
	.global_groups = cpower_global_groups,
	.features = cpower_features,
};

/* CLOCK_BOOTTIME's lead on CLOCK_MONOTONIC when a host suspend began. */
static ktime_t cpower_slept_before;

/*
 * The host completed a suspend and resume: every cell's cap budget starts
 * again. A guest can so delay each host suspend by at most its budget,
 * and never renew the budget by itself. Only a suspend in which the host
 * slept counts (CLOCK_BOOTTIME gained on CLOCK_MONOTONIC): an attempt
 * that the cell's own wakeup sources aborted must not renew it.
 */
static int cpower_pm_notify(struct notifier_block *nb, unsigned long action,
			    void *data)
{
	struct cpower_cell *pc;
	struct cask_cell *cell;

	if (action == PM_SUSPEND_PREPARE) {
		cpower_slept_before = ktime_mono_to_any(0, TK_OFFS_BOOT);
		return NOTIFY_OK;
	}
	if (action != PM_POST_SUSPEND ||
	    ktime_mono_to_any(0, TK_OFFS_BOOT) <= cpower_slept_before)
		return NOTIFY_DONE;
	for (cell = cask_cell_next(NULL); cell; cell = cask_cell_next(cell)) {
		pc = cask_cell_data(cell, &cpower_driver);
		if (!pc)
			continue;
		mutex_lock(&pc->lock);
		cpower_renew_budget_locked(pc);
		mutex_unlock(&pc->lock);
	}
	return NOTIFY_OK;
}

static struct notifier_block cpower_pm_nb = {
	.notifier_call = cpower_pm_notify,
};

static int __init cpower_init(void)
{
	int ret;

	ret = cask_driver_register(&cpower_driver);
	if (ret)
		return ret;
	/* After: the notifier finds the driver's state in every cell. */
	ret = register_pm_notifier(&cpower_pm_nb);
	if (ret)
		goto unregister_driver;
	pr_info("per-cell wake locks and suspend votes, host wakeup sources %s\n",
		IS_ENABLED(CONFIG_PM_SLEEP) ? "on" : "off (no CONFIG_PM_SLEEP)");
	return 0;

unregister_driver:
	cask_driver_unregister(&cpower_driver);
	return ret;
}

/*
 * The notifier goes first: unregistering waits for a call in progress,
 * which uses the state that detaching frees. Detaching every cell then
 * releases its locks and hands its sources to the reap work.
 */
static void __exit cpower_exit(void)
{
	unregister_pm_notifier(&cpower_pm_nb);
	cask_driver_unregister(&cpower_driver);
	/* The sources the detached cells let go, removed by the reap work. */
	cpower_reap_flush();
}

module_init(cpower_init);
module_exit(cpower_exit);

MODULE_IMPORT_NS(CASK);
MODULE_DESCRIPTION("cask: Android's wake locks and suspend requests, per container");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The cask developers");
