// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for cask_core's memcg kit (include/cask/memcg.h): where a
 * charged allocation is charged, that scopes nest, which memcg the host
 * cell pays to, and a memcg watch's arm, disarm and teardown, driven
 * through the shrinker's own callbacks (shrink_slab() is not exported).
 *
 * A test case runs in a kernel thread of the root cgroup: its own
 * charges go nowhere, so a page that is charged somewhere was charged by
 * the scope under test. Charging to a limited memcg needs one: the test
 * borrows that of some task outside the root cgroup, and skips without.
 */
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/shrinker.h>
#include <cask/cell.h>
#include <cask/memcg.h>

MODULE_IMPORT_NS(CASK);

/* The memcg of a task outside the root memcg, a reference; or NULL. */
static struct mem_cgroup *memcg_test_find_limited(void)
{
	struct mem_cgroup *memcg, *found = NULL;
	struct task_struct *p;

	rcu_read_lock();
	for_each_process(p) {
		memcg = mem_cgroup_from_task(p);
		if (memcg && parent_mem_cgroup(memcg) &&
		    css_tryget(&memcg->css)) {
			found = memcg;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/* The memcg a page was charged to, NULL for none (the root's). */
static struct mem_cgroup *memcg_test_page_memcg(struct page *page)
{
	struct mem_cgroup *memcg;

	rcu_read_lock();
	memcg = folio_memcg(page_folio(page));
	rcu_read_unlock();
	return memcg;
}

static struct page *memcg_test_page_in(struct mem_cgroup *memcg)
{
	struct mem_cgroup *old;
	struct page *page;

	old = cask_memcg_begin(memcg);
	page = alloc_page(GFP_KERNEL_ACCOUNT);
	cask_memcg_end(memcg, old);
	return page;
}

/*
 * The scope charges the memcg given, not the task's (the root), and
 * stops at its end: the page after it is the kernel thread's again.
 */
static void memcg_charges_given_memcg(struct kunit *test)
{
	struct mem_cgroup *memcg, *old;
	struct page *page;

	if (mem_cgroup_disabled())
		kunit_skip(test, "no memory controller");
	memcg = memcg_test_find_limited();
	if (!memcg)
		kunit_skip(test, "no task outside the root memcg");
	page = memcg_test_page_in(memcg);
	if (!page) {
		mem_cgroup_put(memcg);
		KUNIT_FAIL(test, "no page");
		return;
	}
	KUNIT_EXPECT_PTR_EQ(test, memcg_test_page_memcg(page), memcg);
	__free_page(page);

	page = alloc_page(GFP_KERNEL_ACCOUNT);
	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_EXPECT_NULL(test, memcg_test_page_memcg(page));
	__free_page(page);

	/* The begin/end pair, for functions with goto, does the same. */
	old = cask_memcg_begin(memcg);
	page = alloc_page(GFP_KERNEL_ACCOUNT);
	cask_memcg_end(memcg, old);
	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_EXPECT_PTR_EQ(test, memcg_test_page_memcg(page), memcg);
	__free_page(page);
	mem_cgroup_put(memcg);
}

/*
 * The kzalloc helper charges the memcg given: seen by the memcg's usage
 * growing while a batch of objects lives, beyond the per-CPU stock.
 */
static void memcg_kzalloc_charges(struct kunit *test)
{
	const int n = 64;
	unsigned long before, after;
	struct mem_cgroup *memcg;
	void **objs;
	int i;

	if (mem_cgroup_disabled())
		kunit_skip(test, "no memory controller");
	memcg = memcg_test_find_limited();
	if (!memcg)
		kunit_skip(test, "no task outside the root memcg");
	objs = kunit_kcalloc(test, n, sizeof(*objs), GFP_KERNEL);
	if (!objs) {
		mem_cgroup_put(memcg);
		KUNIT_FAIL(test, "no array");
		return;
	}
	before = page_counter_read(&memcg->memory);
	for (i = 0; i < n; i++)
		objs[i] = cask_memcg_kzalloc(memcg, PAGE_SIZE,
					     GFP_KERNEL_ACCOUNT);
	after = page_counter_read(&memcg->memory);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_NOT_NULL(test, objs[i]);
		kfree(objs[i]);
	}
	/* 64 pages' worth; the memcg's own tasks may free some meanwhile. */
	KUNIT_EXPECT_GE(test, after + 32, before + n);
	mem_cgroup_put(memcg);
}

/*
 * Scopes nest: each end restores what its begin found, and a NULL memcg
 * changes nothing. Seen on the task's active memcg, so that any two
 * memcgs do (the host cell's root and a limited one, or the root twice).
 */
static void memcg_scopes_nest(struct kunit *test)
{
	struct mem_cgroup *outer, *inner, *saved, *o1, *o2;
	struct cask_cell *host;

	if (mem_cgroup_disabled())
		kunit_skip(test, "no memory controller");
	host = cask_cell_get_host();
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, host);
	outer = cask_cell_memcg(host);
	cask_cell_put(host);
	KUNIT_ASSERT_NOT_NULL(test, outer);
	inner = memcg_test_find_limited();
	if (!inner) {
		css_get(&outer->css);
		inner = outer;
	}
	saved = current->active_memcg;
	o1 = cask_memcg_begin(outer);
	KUNIT_EXPECT_PTR_EQ(test, current->active_memcg, outer);
	o2 = cask_memcg_begin(inner);
	KUNIT_EXPECT_PTR_EQ(test, current->active_memcg, inner);
	cask_memcg_end(inner, o2);
	KUNIT_EXPECT_PTR_EQ(test, current->active_memcg, outer);
	/* NULL inside a scope changes nothing, and its end restores nothing. */
	o2 = cask_memcg_begin(NULL);
	KUNIT_EXPECT_PTR_EQ(test, current->active_memcg, outer);
	cask_memcg_end(NULL, o2);
	KUNIT_EXPECT_PTR_EQ(test, current->active_memcg, outer);
	cask_memcg_end(outer, o1);
	KUNIT_EXPECT_PTR_EQ(test, current->active_memcg, saved);
	/* NULL outside any scope: still the task's own. */
	KUNIT_EXPECT_PTR_EQ(test, cask_memcg_begin(NULL), NULL);
	KUNIT_EXPECT_PTR_EQ(test, current->active_memcg, saved);
	cask_memcg_end(NULL, outer);
	KUNIT_EXPECT_PTR_EQ(test, current->active_memcg, saved);
	mem_cgroup_put(inner);
	mem_cgroup_put(outer);
}

/*
 * The host cell pays to the root memcg (its cgroup is the root's):
 * non-NULL, so that its watch is filed where global reclaim looks, and
 * without a parent, which charging callers test for. A page charged
 * under the root is charged to nobody: why they pass NULL instead.
 */
static void memcg_host_cell_is_root(struct kunit *test)
{
	struct cask_cell *host;
	struct mem_cgroup *memcg;
	struct page *page;

	host = cask_cell_get_host();
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, host);
	memcg = cask_cell_memcg(host);
	cask_cell_put(host);
	if (mem_cgroup_disabled()) {
		KUNIT_EXPECT_NULL(test, memcg);
		return;
	}
	KUNIT_ASSERT_NOT_NULL(test, memcg);
	KUNIT_EXPECT_NULL(test, parent_mem_cgroup(memcg));
	page = memcg_test_page_in(memcg);
	if (page) {
		KUNIT_EXPECT_NULL(test, memcg_test_page_memcg(page));
		__free_page(page);
	}
	mem_cgroup_put(memcg);
}

struct memcg_test_watch {
	struct cask_memcg_watch watch;
	int seen;
};

static struct memcg_test_watch *memcg_test_expected;
static int memcg_test_counts;

static enum lru_status memcg_test_seen(struct cask_memcg_watch *watch,
				       void *arg)
{
	struct memcg_test_watch *tw = container_of(watch, typeof(*tw), watch);

	/* Another cell's watch cannot be on a watcher of this test. */
	if (tw == memcg_test_expected)
		tw->seen++;
	else
		memcg_test_counts = -1000;
	return LRU_SKIP;
}

static unsigned long memcg_test_count(struct cask_memcg_watcher *watcher,
				      struct shrink_control *sc)
{
	memcg_test_counts++;
	return cask_memcg_watcher_walk(watcher, sc, memcg_test_seen, NULL);
}

static const struct cask_memcg_watcher_ops memcg_test_ops = {
	.count = memcg_test_count,
};

/*
 * Arm files the watch in the memcg given: the shrinker's count, as
 * reclaim calls it for that memcg and node, walks it; disarm unfiles it
 * (the count says SHRINK_EMPTY without calling the driver), twice is
 * fine, and arming again works. A watcher without scan stops a scan.
 */
static void memcg_watch_arm_disarm(struct kunit *test)
{
	struct memcg_test_watch *tw;
	struct cask_memcg_watcher *w;
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	struct cask_cell *host;
	struct mem_cgroup *memcg;
	int ret;

	tw = kunit_kzalloc(test, sizeof(*tw), GFP_KERNEL);
	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tw);
	KUNIT_ASSERT_NOT_NULL(test, w);
	host = cask_cell_get_host();
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, host);
	memcg = cask_cell_memcg(host);
	cask_cell_put(host);
	ret = cask_memcg_watcher_init(w, "cask-kunit", &memcg_test_ops);
	if (ret) {
		mem_cgroup_put(memcg);
		KUNIT_FAIL(test, "cask_memcg_watcher_init: %d", ret);
		return;
	}
	memcg_test_expected = tw;
	memcg_test_counts = 0;
	KUNIT_EXPECT_EQ(test, cask_memcg_watch_nid(&tw->watch), NUMA_NO_NODE);
	KUNIT_EXPECT_EQ(test, cask_memcg_watch_arm(w, &tw->watch, memcg), 0);
	sc.nid = cask_memcg_watch_nid(&tw->watch);
	sc.memcg = memcg;
	/* Not filed: no node to count on (NUMA_NO_NODE indexes nothing). */
	if (sc.nid == NUMA_NO_NODE) {
		KUNIT_FAIL(test, "the armed watch is on no node");
		goto free_watcher;
	}
	KUNIT_EXPECT_EQ(test, list_lru_count_one(&w->lru, sc.nid, memcg), 1);
	KUNIT_EXPECT_EQ(test, w->shrinker->count_objects(w->shrinker, &sc), 1);
	KUNIT_EXPECT_EQ(test, tw->seen, 1);
	KUNIT_EXPECT_EQ(test, memcg_test_counts, 1);
	KUNIT_EXPECT_EQ(test, w->shrinker->scan_objects(w->shrinker, &sc),
			SHRINK_STOP);

	cask_memcg_watch_disarm(w, &tw->watch);
	KUNIT_EXPECT_EQ(test, cask_memcg_watch_nid(&tw->watch), NUMA_NO_NODE);
	KUNIT_EXPECT_EQ(test, w->shrinker->count_objects(w->shrinker, &sc),
			SHRINK_EMPTY);
	KUNIT_EXPECT_EQ(test, tw->seen, 1);
	KUNIT_EXPECT_EQ(test, memcg_test_counts, 1);
	cask_memcg_watch_disarm(w, &tw->watch);

	KUNIT_EXPECT_EQ(test, cask_memcg_watch_arm(w, &tw->watch, memcg), 0);
	KUNIT_EXPECT_EQ(test, cask_memcg_watch_nid(&tw->watch), sc.nid);
	if (cask_memcg_watch_nid(&tw->watch) == sc.nid) {
		KUNIT_EXPECT_EQ(test, w->shrinker->count_objects(w->shrinker, &sc), 1);
		KUNIT_EXPECT_EQ(test, tw->seen, 2);
	}
free_watcher:
	cask_memcg_watch_disarm(w, &tw->watch);
	cask_memcg_watcher_free(w);
	memcg_test_expected = NULL;
	mem_cgroup_put(memcg);
}

/*
 * Module exit's order with a watch still armed: the watcher is
 * registered and then unregistered (its shrinker freed, waiting for any
 * running call), the armed watch stays filed until disarmed, a watch
 * armed after that files nothing and succeeds, and the watcher frees.
 */
static void memcg_watch_teardown_armed(struct kunit *test)
{
	struct memcg_test_watch *a, *b;
	struct cask_memcg_watcher *w;
	struct cask_cell *host;
	struct mem_cgroup *memcg;
	int nid, ret;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, w);
	host = cask_cell_get_host();
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, host);
	memcg = cask_cell_memcg(host);
	cask_cell_put(host);
	ret = cask_memcg_watcher_init(w, "cask-kunit", &memcg_test_ops);
	if (ret) {
		mem_cgroup_put(memcg);
		KUNIT_FAIL(test, "cask_memcg_watcher_init: %d", ret);
		return;
	}
	/* Real reclaim may walk @a while registered; never @b. */
	memcg_test_expected = a;
	memcg_test_counts = 0;
	KUNIT_EXPECT_EQ(test, cask_memcg_watch_arm(w, &a->watch, memcg), 0);
	nid = cask_memcg_watch_nid(&a->watch);
	cask_memcg_watcher_register(w);
	cask_memcg_watcher_unregister(w);
	KUNIT_EXPECT_NULL(test, w->shrinker);
	KUNIT_EXPECT_EQ(test, list_lru_count_one(&w->lru, nid, memcg), 1);

	KUNIT_EXPECT_EQ(test, cask_memcg_watch_arm(w, &b->watch, memcg), 0);
	KUNIT_EXPECT_EQ(test, cask_memcg_watch_nid(&b->watch), NUMA_NO_NODE);
	KUNIT_EXPECT_EQ(test, list_lru_count_one(&w->lru, nid, memcg), 1);

	cask_memcg_watch_disarm(w, &b->watch);
	cask_memcg_watch_disarm(w, &a->watch);
	KUNIT_EXPECT_EQ(test, list_lru_count_one(&w->lru, nid, memcg), 0);
	cask_memcg_watcher_free(w);
	KUNIT_EXPECT_GE(test, memcg_test_counts, 0);
	memcg_test_expected = NULL;
	mem_cgroup_put(memcg);
}

static struct kunit_case cask_core_memcg_cases[] = {
	KUNIT_CASE(memcg_charges_given_memcg),
	KUNIT_CASE(memcg_kzalloc_charges),
	KUNIT_CASE(memcg_scopes_nest),
	KUNIT_CASE(memcg_host_cell_is_root),
	KUNIT_CASE(memcg_watch_arm_disarm),
	KUNIT_CASE(memcg_watch_teardown_armed),
	{}
};

static struct kunit_suite cask_core_memcg_suite = {
	.name = "cask_core_memcg",
	.test_cases = cask_core_memcg_cases,
};

kunit_test_suite(cask_core_memcg_suite);

MODULE_DESCRIPTION("KUnit tests for cask_core's memcg kit");
MODULE_LICENSE("GPL");
