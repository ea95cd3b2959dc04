// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_core: name validation, lookup, references and the
 * orderings of a cell's end (unregister, exit of the watched task, driver
 * detach, last reference).
 *
 * Cells made here are keyed by stand-in IPC namespaces that the test owns:
 * only their address and reference count are used by cask_core, so the
 * test can check that every pin taken is given back.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/ipc_namespace.h>
#include <linux/jiffies.h>
#include <linux/kernfs.h>
#include <linux/kobject.h>
#include <linux/kthread.h>
#include <linux/notifier.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "core.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_IMPORT_NS(CASK);

static void cask_test_name_valid(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, cask_name_valid("a"));
	KUNIT_EXPECT_TRUE(test, cask_name_valid("android-0.car_1"));
	KUNIT_EXPECT_TRUE(test, cask_name_valid("01234567890123456789012345678901"));
	KUNIT_EXPECT_TRUE(test, cask_name_valid("..."));
}

static void cask_test_name_invalid(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, cask_name_valid(""));
	KUNIT_EXPECT_FALSE(test, cask_name_valid("012345678901234567890123456789012"));
	KUNIT_EXPECT_FALSE(test, cask_name_valid("."));
	KUNIT_EXPECT_FALSE(test, cask_name_valid(".."));
	KUNIT_EXPECT_FALSE(test, cask_name_valid("a/b"));
	KUNIT_EXPECT_FALSE(test, cask_name_valid("a b"));
	KUNIT_EXPECT_FALSE(test, cask_name_valid("a\n"));
	KUNIT_EXPECT_FALSE(test, cask_name_valid("caf\xc3\xa9"));
	/* Latin-1 letters, which the kernel's isalnum() accepts. */
	KUNIT_EXPECT_FALSE(test, cask_name_valid("\xc0"));
	KUNIT_EXPECT_FALSE(test, cask_name_valid("a\xe9"));
	KUNIT_EXPECT_FALSE(test, cask_name_valid("\xff\xfe"));
	KUNIT_EXPECT_FALSE(test, cask_name_valid("\xaa"));
}

static void cask_test_driver_names(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, cask_driver_name_valid("binder"));
	KUNIT_EXPECT_TRUE(test, cask_driver_name_valid("lmk_2"));
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid(NULL));
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid(""));
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid("Logger"));
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid("a-b"));
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid("a/b"));
	/* A cell's files and the top directory's. */
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid("id"));
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid("cgroup"));
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid("auto"));
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid("self"));
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid("features"));
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid("cells"));
	KUNIT_EXPECT_FALSE(test, cask_driver_name_valid("max_cells"));
}

/* A stand-in IPC namespace with a reference held by the test. */
static struct ipc_namespace *cask_test_ns(struct kunit *test)
{
	struct ipc_namespace *ns = kunit_kzalloc(test, sizeof(*ns), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ns);
	refcount_set(&ns->ns.count, 1);
	ns->user_ns = &init_user_ns;
	return ns;
}

/*
 * Cells and driver registrations are undone by KUnit actions, so that a
 * failed assertion stays one failure: nothing is left registered and no
 * cell stays keyed by a stand-in namespace that KUnit frees. Tests that
 * check the order of a cell's end do the steps themselves first; the
 * action then finds them done.
 */
static void cask_test_cell_action(void *arg)
{
	struct cask_cell *cell = arg;

	cask_cell_unregister(cell);
	cask_cell_put(cell);
	cask_cell_flush();
}

static struct cask_cell *cask_test_cell_spec(struct kunit *test,
					     const struct cask_cell_spec *spec)
{
	struct cask_cell *cell = cask_cell_create(spec);

	if (!IS_ERR(cell) &&
	    kunit_add_action_or_reset(test, cask_test_cell_action, cell))
		return ERR_PTR(-ENOMEM);
	return cell;
}

static struct cask_cell *cask_test_cell(struct kunit *test, const char *name,
					struct ipc_namespace *ns,
					struct pid *watch)
{
	struct cask_cell_spec spec = {
		.name = name,
		.ipc_ns = ns,
		.user_ns = &init_user_ns,
		.pid_ns = &init_pid_ns,
		.watch = watch,
	};

	return cask_test_cell_spec(test, &spec);
}

/* An auto cell, as the first use of cask in a container makes one. */
static struct cask_cell *cask_test_auto_cell(struct kunit *test, const char *name,
					     struct ipc_namespace *ns)
{
	struct cask_cell_spec spec = {
		.name = name,
		.ipc_ns = ns,
		.user_ns = &init_user_ns,
		.pid_ns = &init_pid_ns,
		.is_auto = true,
	};

	return cask_test_cell_spec(test, &spec);
}

/* Drop the test's reference on a cell made by cask_test_cell() now. */
static void cask_test_put(struct kunit *test, struct cask_cell *cell)
{
	kunit_release_action(test, cask_test_cell_action, cell);
}

static void cask_test_unregister_action(void *drv)
{
	cask_driver_unregister(drv);
}

static int cask_test_register(struct kunit *test, struct cask_driver *drv)
{
	int ret = cask_driver_register(drv);

	if (ret)
		return ret;
	return kunit_add_action_or_reset(test, cask_test_unregister_action, drv);
}

static void cask_test_unregister(struct kunit *test, struct cask_driver *drv)
{
	kunit_release_action(test, cask_test_unregister_action, drv);
}

/* Every pin the cell took on the stand-in namespace must be back. */
static void cask_test_expect_unpinned(struct kunit *test, struct ipc_namespace *ns)
{
	cask_cell_flush();
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, refcount_read(&ns->ns.count), 1);
}

static void cask_test_lookup(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test), *other = cask_test_ns(test);
	struct cask_cell *cell, *found;

	cell = cask_test_cell(test, "kunit-lookup", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	/* A cell pins its namespace only if the kernel cannot tell its end. */
	KUNIT_EXPECT_EQ(test, refcount_read(&ns->ns.count),
			cask_cells_track_ipc_ns() ? 1 : 2);

	found = cask_cell_find_ns(ns);
	KUNIT_EXPECT_PTR_EQ(test, found, cell);
	cask_cell_put(found);
	KUNIT_EXPECT_NULL(test, cask_cell_find_ns(other));

	found = cask_cell_get_by_name("kunit-lookup");
	KUNIT_EXPECT_PTR_EQ(test, found, cell);
	cask_cell_put(found);
	KUNIT_EXPECT_NULL(test, cask_cell_get_by_name("kunit-nothere"));

	KUNIT_EXPECT_STREQ(test, cask_cell_name(cell), "kunit-lookup");
	KUNIT_EXPECT_PTR_EQ(test, cask_cell_ipc_ns(cell), ns);
	KUNIT_EXPECT_FALSE(test, cask_cell_is_host(cell));
	KUNIT_EXPECT_TRUE(test, cask_cell_registered(cell));
	KUNIT_EXPECT_GT(test, cask_cell_id(cell), 0ULL);

	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), 0);
	/* Gone from lookups at once, though we still hold a reference. */
	KUNIT_EXPECT_NULL(test, cask_cell_find_ns(ns));
	KUNIT_EXPECT_NULL(test, cask_cell_get_by_name("kunit-lookup"));
	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), -ENOENT);
	cask_test_put(test, cell);
	cask_test_expect_unpinned(test, ns);
}

static void cask_test_host(struct kunit *test)
{
	struct cask_cell *host = cask_cell_get_host(), *found;

	KUNIT_EXPECT_TRUE(test, cask_cell_is_host(host));
	KUNIT_EXPECT_FALSE(test, cask_cell_registered(host));
	KUNIT_EXPECT_EQ(test, cask_cell_id(host), 0ULL);
	KUNIT_EXPECT_STREQ(test, cask_cell_name(host), "host");
	KUNIT_EXPECT_EQ(test, cask_cell_unregister(host), -EBUSY);
	/* The KUnit thread runs in the initial namespaces. */
	found = cask_cell_find_current();
	KUNIT_EXPECT_PTR_EQ(test, found, host);
	cask_cell_put(found);
	found = cask_cell_get_or_create();
	KUNIT_EXPECT_PTR_EQ(test, found, host);
	cask_cell_put(found);
	cask_cell_put(host);
}

static void cask_test_exists(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test), *ns2 = cask_test_ns(test);
	struct cask_cell *cell;

	cell = cask_test_cell(test, "kunit-exists", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	/* Same name, other namespace; other name, same namespace. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(cask_test_cell(test, "kunit-exists", ns2, NULL)), -EEXIST);
	KUNIT_EXPECT_EQ(test, PTR_ERR(cask_test_cell(test, "kunit-exists2", ns, NULL)), -EEXIST);
	KUNIT_EXPECT_EQ(test, PTR_ERR(cask_test_cell(test, "host", ns2, NULL)), -EEXIST);
	KUNIT_EXPECT_EQ(test, PTR_ERR(cask_test_cell(test, "bad/name", ns2, NULL)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(cask_test_cell(test, "kunit-init", &init_ipc_ns, NULL)),
			-EEXIST);

	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), 0);
	cask_test_put(test, cell);
	/* The name and the namespace are free again at once. */
	cell = cask_test_cell(test, "kunit-exists", ns2, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), 0);
	cask_test_put(test, cell);
	cask_test_expect_unpinned(test, ns);
	cask_test_expect_unpinned(test, ns2);
}

/* A driver that counts its calls and records the cells it saw. */
struct cask_test_drv_state {
	struct cask_cell *cell;
	int *detached;
};

static int cask_test_attached;
static int cask_test_detached;
static int cask_test_fail_attach;

static void *cask_test_attach(struct cask_cell *cell)
{
	struct cask_test_drv_state *st;

	if (cask_test_fail_attach && !--cask_test_fail_attach)
		return ERR_PTR(-ENOMEM);
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return ERR_PTR(-ENOMEM);
	st->cell = cell;
	cask_test_attached++;
	return st;
}

static void cask_test_detach(struct cask_cell *cell, void *data)
{
	struct cask_test_drv_state *st = data;

	/* Called with the cell it was attached to, exactly once. */
	WARN_ON(st->cell != cell);
	cask_test_detached++;
	kfree(st);
}

static struct cask_driver cask_test_driver = {
	.name = "kunit",
	.attach = cask_test_attach,
	.detach = cask_test_detach,
};

static int cask_test_init(struct kunit *test)
{
	cask_test_attached = 0;
	cask_test_detached = 0;
	cask_test_fail_attach = 0;
	return 0;
}

/* Unregister first, last reference later: state lives until the put. */
static void cask_test_unregister_then_put(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test);
	struct cask_test_drv_state *st;
	struct cask_cell *cell;

	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver), 0);
	/* At least the host cell existed before the driver. */
	KUNIT_EXPECT_GE(test, cask_test_attached, 1);
	cask_test_attached = 0;

	cell = cask_test_cell(test, "kunit-order1", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	KUNIT_EXPECT_EQ(test, cask_test_attached, 1);
	st = cask_cell_data(cell, &cask_test_driver);
	KUNIT_EXPECT_PTR_EQ(test, st->cell, cell);

	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), 0);
	cask_cell_flush();
	KUNIT_EXPECT_EQ(test, cask_test_detached, 0);
	KUNIT_EXPECT_PTR_EQ(test, cask_cell_data(cell, &cask_test_driver), (void *)st);

	cask_test_put(test, cell);
	cask_cell_flush();
	KUNIT_EXPECT_EQ(test, cask_test_detached, 1);

	cask_test_unregister(test, &cask_test_driver);
	cask_test_expect_unpinned(test, ns);
}

/* The driver goes first: its state goes, the cell stays and works. */
static void cask_test_driver_detach_first(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test);
	struct cask_cell *cell, *found;
	int attached;

	cell = cask_test_cell(test, "kunit-order2", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver), 0);
	attached = cask_test_attached;
	KUNIT_EXPECT_GE(test, attached, 2);

	cask_test_unregister(test, &cask_test_driver);
	KUNIT_EXPECT_EQ(test, cask_test_detached, attached);

	found = cask_cell_find_ns(ns);
	KUNIT_EXPECT_PTR_EQ(test, found, cell);
	cask_cell_put(found);

	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), 0);
	cask_test_put(test, cell);
	cask_cell_flush();
	/* No second detach from the cell's release. */
	KUNIT_EXPECT_EQ(test, cask_test_detached, attached);
	cask_test_expect_unpinned(test, ns);
}

/* A driver that loads while a dead cell is still referenced attaches to it. */
static void cask_test_driver_after_unregister(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test);
	struct cask_test_drv_state *st;
	struct cask_cell *cell;

	cell = cask_test_cell(test, "kunit-order3", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), 0);

	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver), 0);
	st = cask_cell_data(cell, &cask_test_driver);
	KUNIT_ASSERT_NOT_NULL(test, st);
	KUNIT_EXPECT_PTR_EQ(test, st->cell, cell);

	cask_test_put(test, cell);
	cask_cell_flush();
	KUNIT_EXPECT_EQ(test, cask_test_detached, 1);
	cask_test_unregister(test, &cask_test_driver);
	cask_test_expect_unpinned(test, ns);
}

/* An attach that fails unwinds the cell and the driver registration. */
static void cask_test_attach_fails(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test);
	struct cask_cell *cell;

	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver), 0);
	cask_test_attached = 0;
	cask_test_fail_attach = 1;
	cell = cask_test_cell(test, "kunit-fail", ns, NULL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(cell), -ENOMEM);
	KUNIT_EXPECT_NULL(test, cask_cell_find_ns(ns));
	KUNIT_EXPECT_NULL(test, cask_cell_get_by_name("kunit-fail"));
	cask_test_unregister(test, &cask_test_driver);
	cask_test_expect_unpinned(test, ns);

	/* Fail on the second cell: the first one's attach is undone. */
	cell = cask_test_cell(test, "kunit-fail", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	cask_test_attached = 0;
	cask_test_detached = 0;
	cask_test_fail_attach = 2;
	KUNIT_EXPECT_EQ(test, cask_test_register(test, &cask_test_driver), -ENOMEM);
	KUNIT_EXPECT_EQ(test, cask_test_attached, 1);
	KUNIT_EXPECT_EQ(test, cask_test_detached, 1);
	/* The slot was not taken: registering again works. */
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver), 0);
	cask_test_unregister(test, &cask_test_driver);

	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), 0);
	cask_test_put(test, cell);
	cask_test_expect_unpinned(test, ns);
}

static int cask_test_thread(void *arg)
{
	struct completion *go = arg;

	wait_for_completion(go);
	return 0;
}

/*
 * The watched task's exit unregisters the cell, with or without driver
 * references outstanding; unregistering first and the exit later is a
 * no-op for the exit.
 */
static void cask_test_watch_exit(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test);
	struct task_struct *task;
	struct cask_cell *cell;
	struct completion go;
	struct pid *pid;
	int i;

	init_completion(&go);
	task = kthread_run(cask_test_thread, &go, "cask-kunit-watch");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, task);
	get_task_struct(task);
	pid = get_task_pid(task, PIDTYPE_TGID);

	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver), 0);
	cell = cask_test_cell(test, "kunit-watch", ns, pid);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	cask_cell_flush();
	KUNIT_EXPECT_TRUE(test, cask_cell_linked(cell));

	complete(&go);
	kthread_stop(task);
	put_task_struct(task);
	/* The exit notification and the reap both queue the exit work. */
	for (i = 0; i < 100 && cask_cell_linked(cell); i++) {
		cask_cell_flush();
		msleep(20);
	}
	KUNIT_EXPECT_FALSE(test, cask_cell_linked(cell));
	KUNIT_EXPECT_NULL(test, cask_cell_find_ns(ns));
	/* Our reference keeps the driver state. */
	KUNIT_EXPECT_EQ(test, cask_test_detached, 0);
	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), -ENOENT);
	cask_test_put(test, cell);
	cask_cell_flush();
	cask_test_unregister(test, &cask_test_driver);
	KUNIT_EXPECT_EQ(test, cask_test_detached, cask_test_attached);
	put_pid(pid);
	cask_test_expect_unpinned(test, ns);
}

/*
 * The end of the IPC namespace (the kernel's notifier) unregisters its
 * cell and no other; driver state stays while references remain.
 */
static void cask_test_ipc_ns_end(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test), *other = cask_test_ns(test);
	struct cask_cell *cell, *cell2, *found;

	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver), 0);
	cell = cask_test_cell(test, "kunit-nsend", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	cell2 = cask_test_cell(test, "kunit-nsend2", other, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell2);
	cask_test_detached = 0;

	KUNIT_EXPECT_EQ(test, cask_ipcns_free(NULL, 0, ns), NOTIFY_OK);
	KUNIT_EXPECT_FALSE(test, cask_cell_linked(cell));
	KUNIT_EXPECT_NULL(test, cask_cell_find_ns(ns));
	KUNIT_EXPECT_NULL(test, cask_cell_get_by_name("kunit-nsend"));
	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), -ENOENT);
	/* Told twice, or about a namespace without a cell: nothing happens. */
	KUNIT_EXPECT_EQ(test, cask_ipcns_free(NULL, 0, ns), NOTIFY_OK);
	found = cask_cell_find_ns(other);
	KUNIT_EXPECT_PTR_EQ(test, found, cell2);
	cask_cell_put(found);

	cask_cell_flush();
	KUNIT_EXPECT_EQ(test, cask_test_detached, 0);
	cask_test_put(test, cell);
	cask_cell_flush();
	KUNIT_EXPECT_EQ(test, cask_test_detached, 1);

	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell2), 0);
	cask_test_put(test, cell2);
	cask_test_unregister(test, &cask_test_driver);
	cask_test_expect_unpinned(test, ns);
	cask_test_expect_unpinned(test, other);
}

/* A cell made for a task that is already dead is unregistered at once. */
static void cask_test_watch_dead(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test);
	struct task_struct *task;
	struct cask_cell *cell;
	struct completion go;
	struct pid *pid;

	init_completion(&go);
	task = kthread_run(cask_test_thread, &go, "cask-kunit-dead");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, task);
	get_task_struct(task);
	pid = get_task_pid(task, PIDTYPE_TGID);
	complete(&go);
	kthread_stop(task);
	put_task_struct(task);

	cell = cask_test_cell(test, "kunit-dead", ns, pid);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	cask_cell_flush();
	KUNIT_EXPECT_FALSE(test, cask_cell_linked(cell));
	cask_test_put(test, cell);
	put_pid(pid);
	cask_test_expect_unpinned(test, ns);
}

/* Unregister races with lookups from another thread: no UAF, no leak. */
struct cask_test_race {
	struct ipc_namespace *ns;
	atomic_t stop;
	atomic_long_t hits;
};

static int cask_test_lookup_thread(void *arg)
{
	struct cask_test_race *race = arg;
	struct cask_cell *cell;

	while (!atomic_read(&race->stop)) {
		cell = cask_cell_find_ns(race->ns);
		if (cell) {
			atomic_long_inc(&race->hits);
			cask_cell_put(cell);
		}
		cond_resched();
	}
	return 0;
}

static void cask_test_lookup_race(struct kunit *test)
{
	struct cask_test_race race = { .ns = cask_test_ns(test) };
	unsigned long deadline = jiffies + 5 * HZ;
	struct task_struct *task;
	struct cask_cell *cell;
	int i;

	task = kthread_run(cask_test_lookup_thread, &race, "cask-kunit-race");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, task);
	get_task_struct(task);
	for (i = 0; i < 500 && time_before(jiffies, deadline); i++) {
		cell = cask_test_cell(test, "kunit-race", race.ns, NULL);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
		cond_resched();
		KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), 0);
		cask_test_put(test, cell);
	}
	atomic_set(&race.stop, 1);
	kthread_stop(task);
	put_task_struct(task);
	kunit_info(test, "%d cells, %ld lookups found one\n", i,
		   atomic_long_read(&race.hits));
	KUNIT_EXPECT_GT(test, atomic_long_read(&race.hits), 0L);
	cask_test_expect_unpinned(test, race.ns);
}

/*
 * Two drivers where "kunit_b" depends on "kunit_a": every attach, unlink
 * and detach is logged, per cell, so that the order can be checked on each
 * path. A third driver, "kunit_x", only takes a slot.
 */
#define CASK_TEST_LOG 32

struct cask_test_order {
	struct cask_cell *cell;		/* the cell whose events are logged */
	char log[CASK_TEST_LOG][4];
	int n;
	int fail_b;			/* kunit_b's attach fails */
};

static struct cask_test_order cask_test_order;

static void cask_test_log(struct cask_cell *cell, const char *ev)
{
	struct cask_test_order *o = &cask_test_order;

	if (cell == o->cell && o->n < CASK_TEST_LOG)
		strscpy(o->log[o->n++], ev);
}

static void *cask_test_attach_a(struct cask_cell *cell)
{
	cask_test_log(cell, "A+");
	return cell;
}

static void cask_test_unlink_a(struct cask_cell *cell, void *data)
{
	/* Unlinked before the drivers hear of it. */
	if (cask_cell_linked(cell))
		cask_test_log(cell, "!L");
	cask_test_log(cell, "A~");
}

static void cask_test_detach_a(struct cask_cell *cell, void *data)
{
	cask_test_log(cell, "A-");
}

static struct cask_driver cask_test_driver_a;

static void *cask_test_attach_b(struct cask_cell *cell)
{
	/* B uses A's state: it must be there already. */
	if (cask_cell_data(cell, &cask_test_driver_a) != cell)
		cask_test_log(cell, "!A");
	if (cell == cask_test_order.cell && cask_test_order.fail_b)
		return ERR_PTR(-EIO);
	cask_test_log(cell, "B+");
	return cell;
}

static void cask_test_unlink_b(struct cask_cell *cell, void *data)
{
	if (cask_cell_data(cell, &cask_test_driver_a) != cell)
		cask_test_log(cell, "!A");
	cask_test_log(cell, "B~");
}

static void cask_test_detach_b(struct cask_cell *cell, void *data)
{
	/* ... and still there when B goes. */
	if (cask_cell_data(cell, &cask_test_driver_a) != cell)
		cask_test_log(cell, "!A");
	cask_test_log(cell, "B-");
}

static struct cask_driver cask_test_driver_a = {
	.name = "kunit_a",
	.attach = cask_test_attach_a,
	.unlink = cask_test_unlink_a,
	.detach = cask_test_detach_a,
};

static struct cask_driver cask_test_driver_b = {
	.name = "kunit_b",
	.attach = cask_test_attach_b,
	.unlink = cask_test_unlink_b,
	.detach = cask_test_detach_b,
};

static struct cask_driver cask_test_driver_x = {
	.name = "kunit_x",
};

static void cask_test_order_expect(struct kunit *test, const char *const *want,
				   int n)
{
	struct cask_test_order *o = &cask_test_order;
	int i;

	KUNIT_EXPECT_EQ(test, o->n, n);
	for (i = 0; i < n && i < o->n; i++)
		KUNIT_EXPECT_STREQ(test, o->log[i], want[i]);
	o->n = 0;
}

static void cask_test_order_reset(void)
{
	memset(&cask_test_order, 0, sizeof(cask_test_order));
}

/*
 * Registered first, the spy starts the log of a cell made during the test
 * before any other driver attaches to it.
 */
static void *cask_test_attach_spy(struct cask_cell *cell)
{
	if (!strncmp(cask_cell_name(cell), "kunit-order-", 12))
		cask_test_order.cell = cell;
	return NULL;
}

static struct cask_driver cask_test_driver_spy = {
	.name = "kunit_spy",
	.attach = cask_test_attach_spy,
};

/*
 * Unregistration and release of a cell: attach A then B, unlink and
 * detach B then A, although B took a slot that A's registration found
 * taken (order is not slot order).
 */
static void cask_test_order_release(struct kunit *test)
{
	static const char *const want[] = { "A+", "B+", "B~", "A~", "B-", "A-" };
	struct ipc_namespace *ns = cask_test_ns(test);
	struct cask_cell *cell;

	cask_test_order_reset();
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_spy), 0);
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_x), 0);
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_a), 0);
	cask_test_unregister(test, &cask_test_driver_x);
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_b), 0);
	KUNIT_EXPECT_LT(test, cask_test_driver_b.slot, cask_test_driver_a.slot);

	cell = cask_test_cell(test, "kunit-order-a", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	KUNIT_EXPECT_PTR_EQ(test, cask_cell_data(cell, &cask_test_driver_a), (void *)cell);
	KUNIT_EXPECT_PTR_EQ(test, cask_cell_data(cell, &cask_test_driver_b), (void *)cell);
	cask_test_put(test, cell);
	cask_test_order_expect(test, want, ARRAY_SIZE(want));
}

/* Creation and the unwind of a failed attach, with a spy ahead of A. */
static void cask_test_order_create(struct kunit *test)
{
	static const char *const want_ok[] = { "A+", "B+" };
	static const char *const want_fail[] = { "A+", "A-" };
	static const char *const want_end[] = { "B-", "A-" };
	struct ipc_namespace *ns = cask_test_ns(test);
	struct cask_cell *cell;

	cask_test_order_reset();
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_spy), 0);
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_a), 0);
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_b), 0);

	cask_test_order.fail_b = 1;
	cell = cask_test_cell(test, "kunit-order-b", ns, NULL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(cell), -EIO);
	cask_test_order_expect(test, want_fail, ARRAY_SIZE(want_fail));
	KUNIT_EXPECT_NULL(test, cask_cell_get_by_name("kunit-order-b"));

	cask_test_order.fail_b = 0;
	cell = cask_test_cell(test, "kunit-order-b", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	cask_test_order_expect(test, want_ok, ARRAY_SIZE(want_ok));

	/*
	 * Unregistration, in reverse dependency order, detaches B then A,
	 * without an unlink: the cell stays linked.
	 */
	cask_test_unregister(test, &cask_test_driver_b);
	cask_test_unregister(test, &cask_test_driver_a);
	cask_test_order_expect(test, want_end, ARRAY_SIZE(want_end));
	cask_test_put(test, cell);
	/* Nothing more from the release. */
	KUNIT_EXPECT_EQ(test, cask_test_order.n, 0);
}

/* Registration attaches to existing cells; its failure unwinds. */
static void cask_test_order_register(struct kunit *test)
{
	static const char *const want_fail[] = { "A+", "A-" };
	static const char *const want_ok[] = { "A+", "B+", "B~", "A~", "B-", "A-" };
	struct ipc_namespace *ns = cask_test_ns(test);
	struct cask_cell *cell;

	cask_test_order_reset();
	cell = cask_test_cell(test, "kunit-order-c", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	cask_test_order.cell = cell;

	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_a), 0);
	cask_test_order.fail_b = 1;
	KUNIT_EXPECT_EQ(test, cask_test_register(test, &cask_test_driver_b), -EIO);
	cask_test_unregister(test, &cask_test_driver_a);
	cask_test_order_expect(test, want_fail, ARRAY_SIZE(want_fail));

	cask_test_order.fail_b = 0;
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_a), 0);
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_b), 0);
	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), 0);
	cask_test_put(test, cell);
	cask_test_order_expect(test, want_ok, ARRAY_SIZE(want_ok));
}

/* Both callbacks are optional; a NULL state is allowed. */
static int cask_test_null_detached;

static void *cask_test_attach_null(struct cask_cell *cell)
{
	return NULL;
}

static void cask_test_detach_null(struct cask_cell *cell, void *data)
{
	if (!data)
		cask_test_null_detached++;
}

static void cask_test_optional_callbacks(struct kunit *test)
{
	/* Static: KUnit's cleanup may run them after we return. */
	static struct cask_driver none = { .name = "kunit_none" };
	static struct cask_driver null = {
		.name = "kunit_null",
		.attach = cask_test_attach_null,
		.detach = cask_test_detach_null,
	};
	static struct cask_driver dup = { .name = "kunit_none" };
	static struct cask_driver bad = { .name = "cgroup" };
	struct ipc_namespace *ns = cask_test_ns(test);
	struct cask_cell *cell;

	cask_test_null_detached = 0;
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &none), 0);
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &null), 0);
	KUNIT_EXPECT_EQ(test, cask_test_register(test, &dup), -EEXIST);
	KUNIT_EXPECT_EQ(test, cask_test_register(test, &bad), -EINVAL);
	cell = cask_test_cell(test, "kunit-optional", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	KUNIT_EXPECT_NULL(test, cask_cell_data(cell, &none));
	KUNIT_EXPECT_NULL(test, cask_cell_data(cell, &null));
	/* No files: no directory. */
	KUNIT_EXPECT_FALSE(test, cell->drv[none.slot]->kobj.state_in_sysfs);
	cask_test_put(test, cell);
	KUNIT_EXPECT_EQ(test, cask_test_null_detached, 1);
	cask_test_unregister(test, &null);
	/* Host and the other cells too, each exactly once. */
	KUNIT_EXPECT_GE(test, cask_test_null_detached, 2);
	cask_test_unregister(test, &none);
}

/*
 * The iterator runs in atomic context (under RCU, with preemption off)
 * while another thread makes and releases cells: each walk sees ids in
 * ascending order, the host cell first, and never a cell being made.
 */
struct cask_test_iter {
	struct ipc_namespace *ns[4];
	atomic_t stop;
	atomic_t made;
};

static int cask_test_iter_thread(void *arg)
{
	struct cask_test_iter *it = arg;
	struct cask_cell_spec spec = {
		.user_ns = &init_user_ns,
		.pid_ns = &init_pid_ns,
	};
	char name[CASK_NAME_MAX + 1];
	struct cask_cell *cell;
	unsigned int i = 0;

	while (!atomic_read(&it->stop)) {
		snprintf(name, sizeof(name), "kunit-iter%u", i % 4);
		spec.name = name;
		spec.ipc_ns = it->ns[i % 4];
		cell = cask_cell_create(&spec);
		if (!IS_ERR(cell)) {
			atomic_inc(&it->made);
			cask_cell_unregister(cell);
			cask_cell_put(cell);
		}
		i++;
		cond_resched();
	}
	return 0;
}

static void cask_test_iterator_race(struct kunit *test)
{
	struct cask_test_iter it = {};
	unsigned long deadline = jiffies + 3 * HZ;
	struct task_struct *task;
	struct cask_cell *cell;
	long walks = 0, others = 0;
	bool sorted = true, host_first = true;
	unsigned int i;
	u64 last = 0;
	int n;

	for (i = 0; i < ARRAY_SIZE(it.ns); i++)
		it.ns[i] = cask_test_ns(test);
	task = kthread_run(cask_test_iter_thread, &it, "cask-kunit-iter");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, task);
	get_task_struct(task);
	while (time_before(jiffies, deadline)) {
		n = 0;
		rcu_read_lock();
		preempt_disable();
		for (cell = cask_cell_next(NULL); cell; cell = cask_cell_next(cell)) {
			if (n == 0 && !cask_cell_is_host(cell))
				host_first = false;
			if (n > 0 && cask_cell_id(cell) <= last)
				sorted = false;
			if (cell->state == CASK_CELL_NEW)
				sorted = false;
			last = cask_cell_id(cell);
			n++;
		}
		preempt_enable();
		rcu_read_unlock();
		walks++;
		others += n - 1;
		cond_resched();
	}
	atomic_set(&it.stop, 1);
	kthread_stop(task);
	put_task_struct(task);
	cask_cell_flush();
	kunit_info(test, "%ld walks, %d cells made, %ld seen besides the host\n",
		   walks, atomic_read(&it.made), others);
	KUNIT_EXPECT_TRUE(test, host_first);
	KUNIT_EXPECT_TRUE(test, sorted);
	KUNIT_EXPECT_GT(test, atomic_read(&it.made), 0);
	for (i = 0; i < ARRAY_SIZE(it.ns); i++)
		cask_test_expect_unpinned(test, it.ns[i]);
}

/* A walk left with break keeps its reference; the iterator skips nothing. */
static void cask_test_iterator_break(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test);
	struct cask_cell *cell, *mine, *found = NULL;

	mine = cask_test_cell(test, "kunit-iter-brk", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mine);
	KUNIT_EXPECT_EQ(test, cask_cell_unregister(mine), 0);
	/* Unlinked but held: still walked. */
	for (cell = cask_cell_next(NULL); cell; cell = cask_cell_next(cell)) {
		if (cell == mine) {
			found = cell;
			break;
		}
	}
	KUNIT_EXPECT_PTR_EQ(test, found, mine);
	KUNIT_EXPECT_FALSE(test, cask_cell_linked(found));
	cask_cell_put(found);
	cask_test_put(test, mine);
	for (cell = cask_cell_next(NULL); cell; cell = cask_cell_next(cell))
		KUNIT_EXPECT_PTR_NE(test, cell, mine);
}

/* max_cells refuses new auto cells with ENOSPC and counts them. */
static void cask_test_max_cells_action(void *arg)
{
	WRITE_ONCE(cask_max_cells, (unsigned long)arg);
}

static void cask_test_max_cells(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test), *ns2 = cask_test_ns(test);
	struct ipc_namespace *ns3 = cask_test_ns(test);
	unsigned long refused = cask_cells_refused();
	struct cask_cell *cell, *cell2;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, cask_test_max_cells_action,
							(void *)(unsigned long)cask_max_cells), 0);
	cask_cell_flush();
	WRITE_ONCE(cask_max_cells, cask_cells_count() + 1);
	cell = cask_test_auto_cell(test, "kunit-max1", ns);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	KUNIT_EXPECT_FALSE(test, cask_cell_registered(cell));
	cell2 = cask_test_auto_cell(test, "kunit-max2", ns2);
	KUNIT_EXPECT_EQ(test, PTR_ERR(cell2), -ENOSPC);
	KUNIT_EXPECT_EQ(test, cask_cells_refused(), refused + 1);
	KUNIT_EXPECT_NULL(test, cask_cell_get_by_name("kunit-max2"));
	/* The host's admin is never refused: a registered cell is made. */
	cell2 = cask_test_cell(test, "kunit-max3", ns3, NULL);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, cell2);
	if (!IS_ERR(cell2))
		cask_test_put(test, cell2);
	/* An unlinked cell still counts until it is released. */
	KUNIT_EXPECT_EQ(test, cask_cell_unregister(cell), 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(cask_test_auto_cell(test, "kunit-max2", ns2)),
			-ENOSPC);
	cask_test_put(test, cell);
	cell2 = cask_test_auto_cell(test, "kunit-max2", ns2);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, cell2);
}

/*
 * A reservation that fails after the cell was in the tables wakes the
 * makers waiting for cells to settle: one may have seen it there and gone
 * to sleep, and nothing else would wake it.
 */
static int cask_test_settle_wake(struct wait_queue_entry *wait, unsigned int mode,
				 int flags, void *key)
{
	atomic_inc((atomic_t *)wait->private);
	return 0;
}

static void cask_test_refused_wakes(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test);
	struct wait_queue_entry wait;
	atomic_t wakes = ATOMIC_INIT(0);

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, cask_test_max_cells_action,
							(void *)(unsigned long)cask_max_cells), 0);
	cask_cell_flush();
	WRITE_ONCE(cask_max_cells, cask_cells_count());
	init_waitqueue_func_entry(&wait, cask_test_settle_wake);
	wait.private = &wakes;
	add_wait_queue(&cask_settle_wq, &wait);
	KUNIT_EXPECT_EQ(test, PTR_ERR(cask_test_auto_cell(test, "kunit-refwake", ns)),
			-ENOSPC);
	remove_wait_queue(&cask_settle_wq, &wait);
	KUNIT_EXPECT_GT(test, atomic_read(&wakes), 0);
}

/* max_cells_per_user: an owner's share of auto cells; others unaffected. */
static void cask_test_max_per_user_action(void *arg)
{
	WRITE_ONCE(cask_max_cells_per_user, (unsigned long)arg);
}

static void cask_test_max_cells_per_user(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test), *ns2 = cask_test_ns(test);
	struct ipc_namespace *ns3 = cask_test_ns(test);
	unsigned long old = cask_max_cells_per_user;
	kuid_t me = current_euid();
	unsigned int mine;
	struct cask_cell *cell;

	/* Without a user namespace, the maker's uid owns the cell. */
	KUNIT_EXPECT_TRUE(test, uid_eq(cask_cell_owner(&init_user_ns), me));
	KUNIT_EXPECT_NULL(test, cask_cell_owner_ns(&init_user_ns));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, cask_test_max_per_user_action,
							(void *)old), 0);
	cask_cell_flush();
	mine = cask_cells_count_owner(me);
	WRITE_ONCE(cask_max_cells_per_user, mine + 1);
	cell = cask_test_auto_cell(test, "kunit-user1", ns);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	KUNIT_EXPECT_EQ(test, cask_cells_count_owner(me), mine + 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(cask_test_auto_cell(test, "kunit-user2", ns2)),
			-ENOSPC);
	/* Registered cells are not the owner's to count. */
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, cask_test_cell(test, "kunit-user3", ns3, NULL));
	KUNIT_EXPECT_EQ(test, cask_cells_count_owner(me), mine + 1);
	cask_test_put(test, cell);
	KUNIT_EXPECT_EQ(test, cask_cells_count_owner(me), mine);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, cask_test_auto_cell(test, "kunit-user2", ns2));
}

/*
 * Two tasks of a new container make its cell at once: while the first one
 * is in a driver's attach, the second waits for it instead of failing with
 * EEXIST, and both end up with the same cell.
 */
struct cask_test_slow {
	struct completion in_attach;
	struct completion go_on;
	struct cask_cell_spec spec;
	struct cask_cell *cell[2];
	struct completion done[2];
	atomic_t next;
};

static struct cask_test_slow *cask_test_slow;

static void *cask_test_attach_slow(struct cask_cell *cell)
{
	struct cask_test_slow *slow = cask_test_slow;

	if (slow && !strcmp(cask_cell_name(cell), "kunit-slow")) {
		complete(&slow->in_attach);
		wait_for_completion(&slow->go_on);
	}
	return NULL;
}

static struct cask_driver cask_test_driver_slow = {
	.name = "kunit_slow",
	.attach = cask_test_attach_slow,
};

static int cask_test_slow_thread(void *arg)
{
	struct cask_test_slow *slow = arg;
	int i = atomic_inc_return(&slow->next) - 1;

	slow->cell[i] = cask_cell_create_or_find(&slow->spec);
	complete(&slow->done[i]);
	return 0;
}

static void cask_test_create_race(struct kunit *test)
{
	struct ipc_namespace *ns = cask_test_ns(test);
	struct cask_test_slow *slow;
	struct task_struct *task;
	int i;

	slow = kunit_kzalloc(test, sizeof(*slow), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, slow);
	init_completion(&slow->in_attach);
	init_completion(&slow->go_on);
	init_completion(&slow->done[0]);
	init_completion(&slow->done[1]);
	slow->spec = (struct cask_cell_spec) {
		.name = "kunit-slow",
		.ipc_ns = ns,
		.user_ns = &init_user_ns,
		.pid_ns = &init_pid_ns,
		.is_auto = true,
	};
	cask_test_slow = slow;
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_slow), 0);

	task = kthread_run(cask_test_slow_thread, slow, "cask-kunit-slow0");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, task);
	wait_for_completion(&slow->in_attach);
	/* The first maker is inside attach: a plain create collides. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(cask_cell_create(&slow->spec)), -EEXIST);
	KUNIT_EXPECT_NULL(test, cask_cell_find_ns(ns));
	/* A second maker waits for the first one rather than failing. */
	task = kthread_run(cask_test_slow_thread, slow, "cask-kunit-slow1");
	if (IS_ERR(task))
		complete(&slow->done[1]);
	/*
	 * It sleeps on the settle queue, or has returned (a failure): either
	 * shows within the bound; no time slept proves it waits.
	 */
	for (i = 0; i < 500 && !wq_has_sleeper(&cask_settle_wq) &&
	     !completion_done(&slow->done[1]); i++)
		msleep(20);
	KUNIT_EXPECT_TRUE(test, wq_has_sleeper(&cask_settle_wq));
	KUNIT_EXPECT_FALSE(test, completion_done(&slow->done[1]));
	complete(&slow->go_on);
	wait_for_completion(&slow->done[0]);
	wait_for_completion(&slow->done[1]);
	cask_test_slow = NULL;
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, slow->cell[0]);
	KUNIT_EXPECT_PTR_EQ(test, slow->cell[1], slow->cell[0]);
	KUNIT_EXPECT_EQ(test, cask_cell_unregister(slow->cell[0]), 0);
	for (i = 0; i < 2; i++)
		if (!IS_ERR_OR_NULL(slow->cell[i]))
			cask_cell_put(slow->cell[i]);
	cask_cell_flush();
	cask_test_unregister(test, &cask_test_driver_slow);
	cask_test_expect_unpinned(test, ns);
}

/*
 * A driver's global file whose show uses the driver's state in the host
 * cell: unregistration waits for a running show before it detaches any
 * state, and the driver's features/ file comes and goes with it.
 */
struct cask_test_glob {
	struct completion in_show;
	struct completion go_on;
	struct completion read_done;
	struct completion unregistered;
	bool detached;
	bool detached_in_show;
	char buf[16];
	ssize_t len;
};

static struct cask_test_glob *cask_test_glob;
static struct cask_driver cask_test_driver_glob;

static void *cask_test_attach_glob(struct cask_cell *cell)
{
	return kzalloc(sizeof(int), GFP_KERNEL) ?: ERR_PTR(-ENOMEM);
}

static void cask_test_detach_glob(struct cask_cell *cell, void *data)
{
	if (cask_test_glob && cask_cell_is_host(cell))
		cask_test_glob->detached = true;
	kfree(data);
}

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct cask_test_glob *g = cask_test_glob;
	struct cask_cell *host = cask_cell_get_host();
	bool attached;

	if (g) {
		complete(&g->in_show);
		wait_for_completion(&g->go_on);
		g->detached_in_show = g->detached;
	}
	attached = cask_cell_data(host, &cask_test_driver_glob);
	cask_cell_put(host);
	return sysfs_emit(buf, "%d\n", attached);
}

static struct kobj_attribute cask_test_attr_state = __ATTR_RO(state);

static struct attribute *cask_test_glob_attrs[] = {
	&cask_test_attr_state.attr,
	NULL
};
ATTRIBUTE_GROUPS(cask_test_glob);

static ssize_t kunit_glob_flag_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "1\n");
}

static struct kobj_attribute cask_test_attr_flag = __ATTR_RO(kunit_glob_flag);

static struct attribute *cask_test_glob_features[] = {
	&cask_test_attr_flag.attr,
	NULL
};

static struct cask_driver cask_test_driver_glob = {
	.name = "kunit_glob",
	.attach = cask_test_attach_glob,
	.detach = cask_test_detach_glob,
	.global_groups = cask_test_glob_groups,
	.features = cask_test_glob_features,
};

/* Read a sysfs file as user space would: through kernfs. */
static ssize_t cask_test_read(const char *path, char *buf, size_t len)
{
	struct file *f = filp_open(path, O_RDONLY, 0);
	loff_t pos = 0;
	ssize_t n;

	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, len - 1, &pos);
	if (n >= 0)
		buf[n] = '\0';
	filp_close(f, NULL);
	return n;
}

static int cask_test_glob_reader(void *arg)
{
	struct cask_test_glob *g = arg;

	g->len = cask_test_read("/sys/kernel/cask/kunit_glob/state", g->buf,
				sizeof(g->buf));
	complete(&g->read_done);
	return 0;
}

static int cask_test_glob_unregister(void *arg)
{
	struct cask_test_glob *g = arg;

	cask_driver_unregister(&cask_test_driver_glob);
	complete(&g->unregistered);
	return 0;
}

/* The kernfs node of /sys/kernel/cask/@dir/@name, with a reference, or NULL. */
static struct kernfs_node *cask_test_kn(const char *dir, const char *name)
{
	struct kernfs_node *cask, *d, *kn = NULL;

	cask = kernfs_find_and_get(kernel_kobj->sd, "cask");
	if (!cask)
		return NULL;
	d = kernfs_find_and_get(cask, dir);
	if (d) {
		kn = kernfs_find_and_get(d, name);
		kernfs_put(d);
	}
	kernfs_put(cask);
	return kn;
}

static void cask_test_global_files(struct kunit *test)
{
	struct cask_test_glob *g;
	struct task_struct *task;
	struct kernfs_node *kn;
	char buf[16];
	int i;

	g = kunit_kzalloc(test, sizeof(*g), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, g);
	init_completion(&g->in_show);
	init_completion(&g->go_on);
	init_completion(&g->read_done);
	init_completion(&g->unregistered);
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &cask_test_driver_glob), 0);
	KUNIT_EXPECT_EQ(test, cask_test_read("/sys/kernel/cask/features/kunit_glob_flag",
					     buf, sizeof(buf)), 2L);
	KUNIT_EXPECT_EQ(test, cask_test_read("/sys/kernel/cask/kunit_glob/state",
					     buf, sizeof(buf)), 2L);
	KUNIT_EXPECT_STREQ(test, buf, "1\n");
	kn = cask_test_kn("kunit_glob", "state");
	KUNIT_ASSERT_NOT_NULL(test, kn);

	cask_test_glob = g;
	task = kthread_run(cask_test_glob_reader, g, "cask-kunit-glob");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, task);
	wait_for_completion(&g->in_show);
	/* From here on the unregistration is the thread's, not KUnit's. */
	kunit_remove_action(test, cask_test_unregister_action, &cask_test_driver_glob);
	task = kthread_run(cask_test_glob_unregister, g, "cask-kunit-unreg");
	if (IS_ERR(task)) {
		complete(&g->go_on);
		wait_for_completion(&g->read_done);
		cask_test_glob = NULL;
		cask_driver_unregister(&cask_test_driver_glob);
		kernfs_put(kn);
		KUNIT_FAIL(test, "no thread");
		return;
	}
	/*
	 * The unregistration has begun removing the file (kernfs made its
	 * active count negative) and waits for the show, which holds it
	 * active: no time slept proves that it waits.
	 */
	for (i = 0; i < 500 && atomic_read(&kn->active) >= 0; i++)
		msleep(20);
	KUNIT_EXPECT_LT(test, atomic_read(&kn->active), 0);
	kernfs_put(kn);
	/* The show is running: nothing is detached, unregister waits. */
	KUNIT_EXPECT_FALSE(test, READ_ONCE(g->detached));
	KUNIT_EXPECT_FALSE(test, completion_done(&g->unregistered));
	complete(&g->go_on);
	wait_for_completion(&g->read_done);
	wait_for_completion(&g->unregistered);
	cask_test_glob = NULL;
	KUNIT_EXPECT_FALSE(test, g->detached_in_show);
	KUNIT_EXPECT_TRUE(test, g->detached);
	KUNIT_EXPECT_EQ(test, g->len, 2L);
	KUNIT_EXPECT_STREQ(test, g->buf, "1\n");
	KUNIT_EXPECT_EQ(test, cask_test_read("/sys/kernel/cask/kunit_glob/state",
					     buf, sizeof(buf)), (ssize_t)-ENOENT);
	KUNIT_EXPECT_EQ(test, cask_test_read("/sys/kernel/cask/features/kunit_glob_flag",
					     buf, sizeof(buf)), (ssize_t)-ENOENT);
}

/* A driver's files: one the cell's root may own, one only the host's. */
static ssize_t kunit_cell_file_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "cell\n");
}

static ssize_t kunit_host_file_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "host\n");
}

static struct kobj_attribute cask_test_attr_cell_file = __ATTR_RO(kunit_cell_file);
static struct kobj_attribute cask_test_attr_host_file = __ATTR_RO(kunit_host_file);
/* The same name as the cell's file: the host's group cannot be made. */
static struct kobj_attribute cask_test_attr_clash = {
	.attr = { .name = "kunit_cell_file", .mode = 0444 },
	.show = kunit_host_file_show,
};

static struct attribute *cask_test_cell_file_attrs[] = {
	&cask_test_attr_cell_file.attr,
	NULL
};
ATTRIBUTE_GROUPS(cask_test_cell_file);

static struct attribute *cask_test_host_file_attrs[] = {
	&cask_test_attr_host_file.attr,
	NULL
};
ATTRIBUTE_GROUPS(cask_test_host_file);

static struct attribute *cask_test_clash_attrs[] = {
	&cask_test_attr_clash.attr,
	NULL
};
ATTRIBUTE_GROUPS(cask_test_clash);

/* One file twice in one list. */
static const struct attribute_group *cask_test_twice_groups[] = {
	&cask_test_host_file_group,
	&cask_test_host_file_group,
	NULL
};

/* A subdirectory named as one of the cell's files. */
static const struct attribute_group cask_test_dir_group = {
	.name = "kunit_cell_file",
	.attrs = cask_test_host_file_attrs,
};

static const struct attribute_group *cask_test_dir_groups[] = {
	&cask_test_dir_group,
	NULL
};

/* The same file name in a subdirectory is another file. */
static const struct attribute_group cask_test_sub_group = {
	.name = "sub",
	.attrs = cask_test_cell_file_attrs,
};

static const struct attribute_group *cask_test_sub_groups[] = {
	&cask_test_sub_group,
	NULL
};

static struct bin_attribute cask_test_bin_attr = {
	.attr = { .name = "kunit_bin", .mode = 0444 },
};

static struct bin_attribute *cask_test_bin_attrs[] = {
	&cask_test_bin_attr,
	NULL
};

static const struct attribute_group cask_test_bin_group = {
	.bin_attrs = cask_test_bin_attrs,
};

static const struct attribute_group *cask_test_bin_groups[] = {
	&cask_test_bin_group,
	NULL
};

#define CASK_TEST_HG_DIR "/sys/kernel/cask/cells/kunit-hostgrp/"

static int cask_test_host_attaches;

static void *cask_test_attach_count(struct cask_cell *cell)
{
	cask_test_host_attaches++;
	return NULL;
}

static void cask_test_detach_count(struct cask_cell *cell, void *data)
{
	cask_test_host_attaches--;
}

static void cask_test_host_groups(struct kunit *test)
{
	/* Static: KUnit's cleanup may run them after we return. */
	static struct cask_driver host_only = {
		.name = "kunit_host",
		.host_groups = cask_test_host_file_groups,
	};
	static struct cask_driver both = {
		.name = "kunit_both",
		.groups = cask_test_cell_file_groups,
		.host_groups = cask_test_host_file_groups,
	};
	static struct cask_driver bin = {
		.name = "kunit_bin",
		.host_groups = cask_test_bin_groups,
	};
	static struct cask_driver clash = {
		.name = "kunit_clash",
		.attach = cask_test_attach_count,
		.detach = cask_test_detach_count,
		.groups = cask_test_cell_file_groups,
		.host_groups = cask_test_clash_groups,
	};
	static struct cask_driver clash_twice = {
		.name = "kunit_clash2",
		.attach = cask_test_attach_count,
		.detach = cask_test_detach_count,
		.host_groups = cask_test_twice_groups,
	};
	static struct cask_driver clash_dir = {
		.name = "kunit_clash3",
		.attach = cask_test_attach_count,
		.detach = cask_test_detach_count,
		.groups = cask_test_cell_file_groups,
		.host_groups = cask_test_dir_groups,
	};
	static struct cask_driver sub = {
		.name = "kunit_sub",
		.groups = cask_test_cell_file_groups,
		.host_groups = cask_test_sub_groups,
	};
	struct ipc_namespace *ns = cask_test_ns(test);
	struct cask_cell *cell;
	char buf[16];

	/* Only kobj_attribute files, as for groups. */
	KUNIT_EXPECT_EQ(test, cask_test_register(test, &bin), -EINVAL);
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &host_only), 0);
	KUNIT_ASSERT_EQ(test, cask_test_register(test, &both), 0);
	cell = cask_test_cell(test, "kunit-hostgrp", ns, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cell);
	/* host_groups alone make the directory. */
	KUNIT_EXPECT_TRUE(test, cell->drv[host_only.slot]->kobj.state_in_sysfs);
	KUNIT_EXPECT_EQ(test, cask_test_read(CASK_TEST_HG_DIR "kunit_host/kunit_host_file",
					     buf, sizeof(buf)), 5L);
	KUNIT_EXPECT_STREQ(test, buf, "host\n");
	KUNIT_EXPECT_EQ(test, cask_test_read(CASK_TEST_HG_DIR "kunit_both/kunit_cell_file",
					     buf, sizeof(buf)), 5L);
	KUNIT_EXPECT_STREQ(test, buf, "cell\n");
	KUNIT_EXPECT_EQ(test, cask_test_read(CASK_TEST_HG_DIR "kunit_both/kunit_host_file",
					     buf, sizeof(buf)), 5L);
	KUNIT_EXPECT_STREQ(test, buf, "host\n");
	/* Made, and back to the cell's owner for what follows. */
	KUNIT_EXPECT_FALSE(test, cell->drv[both.slot]->host_owned);

	/*
	 * A host file named as one of the cell's files (or twice in any
	 * list) could not be made in any cell: the driver is refused before
	 * it is attached anywhere, and no directory is made.
	 */
	cask_test_host_attaches = 0;
	KUNIT_EXPECT_EQ(test, cask_test_register(test, &clash), -EINVAL);
	KUNIT_EXPECT_EQ(test, cask_test_register(test, &clash_twice), -EINVAL);
	KUNIT_EXPECT_EQ(test, cask_test_register(test, &clash_dir), -EINVAL);
	KUNIT_EXPECT_EQ(test, cask_test_register(test, &sub), 0);
	KUNIT_EXPECT_EQ(test, cask_test_read(CASK_TEST_HG_DIR "kunit_sub/sub/kunit_cell_file",
					     buf, sizeof(buf)), 5L);
	KUNIT_EXPECT_STREQ(test, buf, "cell\n");
	cask_test_unregister(test, &sub);
	KUNIT_EXPECT_EQ(test, cask_test_host_attaches, 0);
	KUNIT_EXPECT_EQ(test, cask_test_read(CASK_TEST_HG_DIR "kunit_clash/kunit_cell_file",
					     buf, sizeof(buf)), (ssize_t)-ENOENT);
	cask_test_put(test, cell);
	cask_test_unregister(test, &both);
	cask_test_unregister(test, &host_only);
}

static struct kunit_case cask_core_test_cases[] = {
	KUNIT_CASE(cask_test_name_valid),
	KUNIT_CASE(cask_test_name_invalid),
	KUNIT_CASE(cask_test_lookup),
	KUNIT_CASE(cask_test_host),
	KUNIT_CASE(cask_test_exists),
	KUNIT_CASE(cask_test_unregister_then_put),
	KUNIT_CASE(cask_test_driver_detach_first),
	KUNIT_CASE(cask_test_driver_after_unregister),
	KUNIT_CASE(cask_test_attach_fails),
	KUNIT_CASE(cask_test_watch_exit),
	KUNIT_CASE(cask_test_watch_dead),
	KUNIT_CASE(cask_test_ipc_ns_end),
	KUNIT_CASE(cask_test_lookup_race),
	KUNIT_CASE(cask_test_driver_names),
	KUNIT_CASE(cask_test_order_release),
	KUNIT_CASE(cask_test_order_create),
	KUNIT_CASE(cask_test_order_register),
	KUNIT_CASE(cask_test_optional_callbacks),
	KUNIT_CASE(cask_test_host_groups),
	KUNIT_CASE(cask_test_iterator_race),
	KUNIT_CASE(cask_test_iterator_break),
	KUNIT_CASE(cask_test_max_cells),
	KUNIT_CASE(cask_test_max_cells_per_user),
	KUNIT_CASE(cask_test_refused_wakes),
	KUNIT_CASE(cask_test_create_race),
	KUNIT_CASE(cask_test_global_files),
	{}
};

static struct kunit_suite cask_core_test_suite = {
	.name = "cask_core",
	.init = cask_test_init,
	.test_cases = cask_core_test_cases,
};

kunit_test_suite(cask_core_test_suite);

MODULE_DESCRIPTION("KUnit tests for cask_core");
MODULE_LICENSE("GPL");
