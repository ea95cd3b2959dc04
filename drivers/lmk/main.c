// SPDX-License-Identifier: GPL-2.0
/*
 * lowmemorykiller: Android's low-memory killer per container. Each cell
 * has its own kill levels, watches its own memory cgroup and kills only
 * its own processes. See Documentation/lowmemorykiller.rst.
 *
 * Files: main.c (module, per-cell state, sysfs and the legacy params),
 * levels.c (parsing, level and victim choice: pure functions), trigger.c
 * (measuring, the triggers, the tick, the shrinker), kill.c (the victim
 * search and the kill), reap.c (the reaper and its param), walks.c (the
 * walk budget a memory cgroup's cells share), event.c
 * (/proc/lowmemorykiller).
 *
 * Locking: the order of every lock here, and what the shrinker, the
 * reaper, attach, unlink, detach and module exit take, is written once,
 * in Documentation/dev/architecture.rst ("The low-memory killer"). Keep
 * it true there when a lock changes.
 */
#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <cask/attr.h>
#include <cask/cell.h>
#include <cask/compat.h>

#include "lmk.h"

/*
 * Params written while the module loads, before any cell has our state:
 * the host's levels once we are registered. Both under kernel_param_lock.
 */
static struct lmk_levels lmk_boot_levels;
static bool lmk_registered;

static void *lmk_attach(struct cask_cell *cell)
{
	struct lmk_cell *lc;
	int ret;

	lc = kzalloc(sizeof(*lc), GFP_KERNEL_ACCOUNT);
	if (!lc)
		return ERR_PTR(-ENOMEM);
	ret = lmk_cell_init(lc, cell);
	if (ret) {
		kfree(lc);
		return ERR_PTR(ret);
	}
	return lc;
}

/* Nothing may see or disable it any more: it kills no more. */
static void lmk_unlink(struct cask_cell *cell, void *data)
{
	lmk_cell_unlink(data);
}

static void lmk_detach(struct cask_cell *cell, void *data)
{
	struct lmk_cell *lc = data;

	lmk_cell_exit(lc);
	/* After wake_up_pollfree(): epoll may still look at lc->wait. */
	kfree_rcu(lc, rcu);
}

/* Set adj or minfree of @lc from @buf; the caller checked the writer. */
static int lmk_store_list(struct lmk_cell *lc, const char *buf, bool adj)
{
	struct lmk_levels lv;
	int ret;

	mutex_lock(&lc->lock);
	lv = lc->levels;
	if (adj)
		ret = lmk_parse_adj(buf, lv.adj, &lv.nr_adj);
	else
		ret = lmk_parse_minfree(buf, lv.minfree, &lv.nr_minfree);
	if (!ret)
		ret = lmk_cell_set_levels_locked(lc, &lv, lc->enabled);
	mutex_unlock(&lc->lock);
	return ret;
}

static int lmk_show_list(struct lmk_cell *lc, char *buf, bool adj)
{
	int n;

	mutex_lock(&lc->lock);
	if (adj)
		n = lmk_print_adj(buf, PAGE_SIZE, &lc->levels);
	else
		n = lmk_print_minfree(buf, PAGE_SIZE, &lc->levels);
	mutex_unlock(&lc->lock);
	return n;
}

/* ---- /sys/kernel/cask/cells/NAME/lmk/ ---- */

/*
 * Who may set a cell's levels: a task with CAP_SYS_RESOURCE or
 * CAP_SYS_ADMIN over the cell's user namespace. Android's lmkd runs as
 * uid lmkd with CAP_SYS_RESOURCE (and DAC_OVERRIDE, KILL, IPC_LOCK,
 * SYS_NICE) but not CAP_SYS_ADMIN, and must work unchanged; killing by
 * levels is a use of the cell's resources, which SYS_RESOURCE governs.
 * SYS_RESOURCE first: a check that fails is audited.
 */
static bool lmk_may_set_levels(struct cask_cell *cell)
{
	return ns_capable(cask_cell_user_ns(cell), CAP_SYS_RESOURCE) ||
	       cask_cell_may_admin(cell);
}

/* cask_core let in a task of the cell or the host. */
static bool lmk_may_change(struct kobject *kobj)
{
	return lmk_may_set_levels(cask_cell_from_kobj(kobj));
}

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *a,
			    char *buf)
{
	struct lmk_cell *lc = cask_driver_data_from_kobj(kobj);
	bool enabled;

	mutex_lock(&lc->lock);
	enabled = lc->enabled;
	mutex_unlock(&lc->lock);
	return sysfs_emit(buf, "%d\n", enabled);
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *a,
			     const char *buf, size_t count)
{
	struct lmk_cell *lc = cask_driver_data_from_kobj(kobj);
	bool enabled;
	int ret;

	if (!lmk_may_change(kobj))
		return -EPERM;
	if (kstrtobool(buf, &enabled))
		return -EINVAL;
	mutex_lock(&lc->lock);
	ret = lmk_cell_set_levels_locked(lc, &lc->levels, enabled);
	mutex_unlock(&lc->lock);
	return ret ?: count;
}

/* The store of adj or minfree. */
static ssize_t lmk_list_store(struct kobject *kobj, const char *buf,
			      size_t count, bool adj)
{
	int ret;

	if (!lmk_may_change(kobj))
		return -EPERM;
	ret = lmk_store_list(cask_driver_data_from_kobj(kobj), buf, adj);
	return ret ?: count;
}

static ssize_t adj_show(struct kobject *kobj, struct kobj_attribute *a,
			char *buf)
{
	return lmk_show_list(cask_driver_data_from_kobj(kobj), buf, true);
}

static ssize_t adj_store(struct kobject *kobj, struct kobj_attribute *a,
			 const char *buf, size_t count)
{
	return lmk_list_store(kobj, buf, count, true);
}

static ssize_t minfree_show(struct kobject *kobj, struct kobj_attribute *a,
			    char *buf)
{
	return lmk_show_list(cask_driver_data_from_kobj(kobj), buf, false);
}

static ssize_t minfree_store(struct kobject *kobj, struct kobj_attribute *a,
			     const char *buf, size_t count)
{
	return lmk_list_store(kobj, buf, count, false);
}

static ssize_t kills_show(struct kobject *kobj, struct kobj_attribute *a,
			  char *buf)
{
	struct lmk_cell *lc = cask_driver_data_from_kobj(kobj);
	u64 kills;

	mutex_lock(&lc->lock);
	kills = lc->kills;
	mutex_unlock(&lc->lock);
	return sysfs_emit(buf, "%llu\n", kills);
}

/* "pid adj rss level comm", the pid as the reader sees it (0: not). */
static ssize_t last_kill_show(struct kobject *kobj, struct kobj_attribute *a,
			      char *buf)
{
	struct lmk_cell *lc = cask_driver_data_from_kobj(kobj);
	struct pid_namespace *ns = task_active_pid_ns(current);
	ssize_t n = 0;

	mutex_lock(&lc->lock);
	if (lc->last.pid)
		n = sysfs_emit(buf, "%d %d %lu %d %s\n",
			       pid_nr_ns(lc->last.pid, ns), lc->last.adj,
			       lc->last.rss, lc->last.level, lc->last.comm);
	mutex_unlock(&lc->lock);
	return n;
}

static ssize_t reaction_us_show(struct kobject *kobj,
				struct kobj_attribute *a, char *buf)
{
	struct lmk_cell *lc = cask_driver_data_from_kobj(kobj);
	u64 last, max;

	mutex_lock(&lc->lock);
	last = lc->reaction_last;
	max = lc->reaction_max;
	mutex_unlock(&lc->lock);
	return sysfs_emit(buf, "%llu %llu\n", last, max);
}

static ssize_t freed_us_show(struct kobject *kobj, struct kobj_attribute *a,
			     char *buf)
{
	struct lmk_cell *lc = cask_driver_data_from_kobj(kobj);
	u64 last, max;

	mutex_lock(&lc->lock);
	last = lc->freed_last;
	max = lc->freed_max;
	mutex_unlock(&lc->lock);
	return sysfs_emit(buf, "%llu %llu\n", last, max);
}

static CASK_ATTR_RW(enabled);
static CASK_ATTR_RW(adj);
static CASK_ATTR_RW(minfree);
static CASK_ATTR_RO(kills);
static CASK_ATTR_RO(last_kill);
static CASK_ATTR_RO(reaction_us);
static CASK_ATTR_RO(freed_us);

static struct attribute *lmk_cell_attrs[] = {
	&cask_attr_enabled.attr,
	&cask_attr_adj.attr,
	&cask_attr_minfree.attr,
	&cask_attr_kills.attr,
	&cask_attr_last_kill.attr,
	&cask_attr_reaction_us.attr,
	&cask_attr_freed_us.attr,
	NULL
};
ATTRIBUTE_GROUPS(lmk_cell);

/* Whether a victim's memory is reaped at once (patches/0002). */
static ssize_t lmk_reap_show(struct kobject *kobj, struct kobj_attribute *a,
			     char *buf)
{
	return sysfs_emit(buf, "%d\n", CASK_OOM_REAP);
}

static CASK_ATTR_PUBLIC_RO(lmk_reap);

static struct attribute *lmk_features[] = {
	&cask_attr_lmk_reap.attr,
	NULL
};

struct cask_driver lmk_driver = {
	.name = "lmk",
	.attach = lmk_attach,
	.unlink = lmk_unlink,
	.detach = lmk_detach,
	.groups = lmk_cell_groups,
	.features = lmk_features,
};

/* ---- /sys/module/lowmemorykiller/parameters/{adj,minfree} ---- */

/*
 * The legacy files act on the caller's cell. They are 0644 and owned by
 * the host's root, so only callers that are root on the host get to open
 * them for writing (a runtime bind-mounts them into its container for
 * lmkd, which runs as root there, or as uid lmkd with DAC_OVERRIDE); the
 * store checks, as sysfs does, lmk_may_set_levels() over the writer's
 * cell. kernel_param_lock is held.
 */
static int lmk_param_set(const char *val, bool adj)
{
	struct cask_cell *cell;
	int ret;

	if (!lmk_registered) {
		/* Load time: the host's levels, applied by lmk_init(). */
		if (adj)
			return lmk_parse_adj(val, lmk_boot_levels.adj,
					     &lmk_boot_levels.nr_adj);
		return lmk_parse_minfree(val, lmk_boot_levels.minfree,
					 &lmk_boot_levels.nr_minfree);
	}
	cell = cask_cell_get_or_create();
	if (IS_ERR(cell))
		return PTR_ERR(cell);
	if (lmk_may_set_levels(cell))
		ret = lmk_store_list(cask_cell_data(cell, &lmk_driver), val,
				     adj);
	else
		ret = -EPERM;
	cask_cell_put(cell);
	return ret;
}

/* Reading makes no cell: a caller without one has no levels. */
static int lmk_param_get(char *buf, bool adj)
{
	struct cask_cell *cell;
	int n;

	if (!lmk_registered)
		return adj ? lmk_print_adj(buf, PAGE_SIZE, &lmk_boot_levels) :
			     lmk_print_minfree(buf, PAGE_SIZE, &lmk_boot_levels);
	cell = cask_cell_find_current();
	if (!cell)
		return scnprintf(buf, PAGE_SIZE, "\n");
	n = lmk_show_list(cask_cell_data(cell, &lmk_driver), buf, adj);
	cask_cell_put(cell);
	return n;
}

static int lmk_adj_set(const char *val, const struct kernel_param *kp)
{
	return lmk_param_set(val, true);
}

static int lmk_adj_get(char *buf, const struct kernel_param *kp)
{
	return lmk_param_get(buf, true);
}

static int lmk_minfree_set(const char *val, const struct kernel_param *kp)
{
	return lmk_param_set(val, false);
}

static int lmk_minfree_get(char *buf, const struct kernel_param *kp)
{
	return lmk_param_get(buf, false);
}

static const struct kernel_param_ops lmk_adj_ops = {
	.set = lmk_adj_set,
	.get = lmk_adj_get,
};

static const struct kernel_param_ops lmk_minfree_ops = {
	.set = lmk_minfree_set,
	.get = lmk_minfree_get,
};

module_param_cb(adj, &lmk_adj_ops, NULL, 0644);
MODULE_PARM_DESC(adj, "the caller's cell's kill levels: oom_score_adj list (legacy oom_adj converted)");
module_param_cb(minfree, &lmk_minfree_ops, NULL, 0644);
MODULE_PARM_DESC(minfree, "the caller's cell's kill levels: free pages list");

/* Params from now on act on the caller's cell; load-time ones on the host. */
static void lmk_params_start(void)
{
	struct cask_cell *host = cask_cell_get_host();
	struct lmk_cell *lc = cask_cell_data(host, &lmk_driver);

	kernel_param_lock(THIS_MODULE);
	mutex_lock(&lc->lock);
	lmk_cell_set_levels_locked(lc, &lmk_boot_levels, true);
	mutex_unlock(&lc->lock);
	lmk_registered = true;
	kernel_param_unlock(THIS_MODULE);
	cask_cell_put(host);
}

static void lmk_params_stop(void)
{
	kernel_param_lock(THIS_MODULE);
	lmk_registered = false;
	kernel_param_unlock(THIS_MODULE);
}

static int __init lmk_init(void)
{
	int ret;

	ret = lmk_kill_init();
	if (ret)
		return ret;
	ret = cask_driver_register(&lmk_driver);
	if (ret)
		goto free_kill;
	/* Cells have their sentinels: reclaim may call us from now on. */
	lmk_kill_register();
	lmk_params_start();
	ret = lmk_proc_init();
	if (ret)
		goto stop_params;
	pr_info("per-cell low-memory killer, victims' memory %s\n",
		CASK_OOM_REAP ? "reaped at once" : "freed at their exit");
	return 0;

stop_params:
	lmk_params_stop();
	/* Before the cells' state goes: counts use it. */
	lmk_kill_unregister();
	cask_driver_unregister(&lmk_driver);
free_kill:
	lmk_kill_free();
	return ret;
}

static void __exit lmk_exit(void)
{
	lmk_proc_exit();
	lmk_params_stop();
	lmk_kill_unregister();
	cask_driver_unregister(&lmk_driver);
	lmk_kill_free();
}

module_init(lmk_init);
module_exit(lmk_exit);

MODULE_IMPORT_NS(CASK);
MODULE_DESCRIPTION("cask: Android's low-memory killer, per container");
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The cask developers");
