// SPDX-License-Identifier: GPL-2.0
/*
 * Watching a cell's free memory and killing inside it.
 *
 * A cell's free memory is its memory cgroup's limit (memory.max, or
 * memory.high where lower; its own, not its ancestors') minus its usage,
 * in pages. The host cell measures the whole system as the legacy
 * driver did: free pages, and file pages that are not shmem.
 *
 * Two triggers queue the cell's tick:
 *  - reclaim: each cell puts one sentinel object on lmk_lru, a memcg-aware
 *    list_lru, allocated inside the cell's memcg, which makes reclaim of
 *    that memcg (at its memory.high or memory.max, an ancestor's, or
 *    global reclaim) call our shrinker with sc->memcg set to it. The
 *    count callback reads a few counters of each cell whose sentinel is
 *    there and, if one is within its top level, queues its tick. It never
 *    sleeps, allocates or takes a lock of ours: reclaim calls it tens of
 *    thousands of times an episode. It reports nothing to scan.
 *  - the tick itself: while a cell has levels it re-checks at the pace
 *    lmk_tick_pace() gives (every 10 ms within its top level or following
 *    a victim, 20 ms within another top level's worth of it, 100 ms
 *    further away). The tick is what notices a cell sliding into its
 *    levels before any reclaim (a cell with only memory.max is not
 *    reclaimed until it hits it), and the near pace is what bounds how
 *    late it does: one counter read per cell with levels.
 *
 * The tick picks the crossed level, the victim (the highest oom_score_adj
 * at or above the level's, then the largest RSS, among the processes of
 * the cell's cgroup subtree: a walk of every process under RCU, since
 * css_task_iter is not exported, at kill time only), and sends SIGKILL to
 * it and to the other processes sharing its mm, as the OOM killer does (a
 * process whose mm is shared with one the cell may not kill is not a
 * victim). One kill is in flight per cell: the next waits until the
 * victim's memory is freed (reaped by patches/0002, or unmapped by the
 * exit of its last user) or LMK_KILL_TIMEOUT.
 *
 * The reaper is one kthread for all cells, which the cells never wait for:
 * reaping needs the victim's mmap_lock, which a stalled victim thread
 * (FUSE, userfaultfd, a long mmap_lock-held syscall) may hold for long.
 * Each reap gets LMK_REAP_SLICE_MS for the lock, then goes to the back of
 * the queue: one cell's stalled victim never holds up another cell's reap.
 * One that had the lock but could not free (-EAGAIN: an mmu notifier that
 * would block) waits LMK_REAP_STEP_MS there before its next turn.
 * A reap's last wait ends at the kill's timeout or at unload, both of
 * which SIGKILL the reaper.
 *
 * Locking: Documentation/dev/architecture.rst ("The low-memory killer")
 * gives the order; in short, no lock of ours in reclaim, and the reaper
 * reaps with none held. Detach takes the sentinel off the list under the
 * list_lru lock, so no walk can find the cell's state after it.
 */
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/refcount.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/user_namespace.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/vmstat.h>
#include <cask/cell.h>
#include <cask/compat.h>

#include "lmk.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/* The legacy driver's wait for a victim before it chose another. */
#define LMK_KILL_TIMEOUT	HZ

struct lmk_sentinel {
	struct list_head lru;
	struct lmk_cell *lc;
};

static struct workqueue_struct *lmk_wq;
static struct kmem_cache *lmk_sentinel_cache;
static struct list_lru lmk_lru;
static struct shrinker *lmk_shrinker;

/*
 * The limit of the cell's own memcg minus its usage. Not its ancestors':
 * a sibling filling a shared parent would make this cell kill its own
 * processes for memory it does not use. Runtimes give each container its
 * own memory.max; a parent's limit is the memcg OOM killer's business.
 */
static unsigned long lmk_memcg_free(struct mem_cgroup *memcg)
{
	unsigned long limit, usage;

	/* The root (no parent) has no limits; root_mem_cgroup is not exported. */
	if (!memcg || !parent_mem_cgroup(memcg))
		return ULONG_MAX;
	limit = min(READ_ONCE(memcg->memory.max), READ_ONCE(memcg->memory.high));
	usage = page_counter_read(&memcg->memory);
	return limit > usage ? limit - usage : 0;
}

/*
 * What the legacy driver measured, less totalreserve_pages, which is not
 * exported: free pages, and file pages that are not shmem or swap cache.
 */
static unsigned long lmk_host_free(unsigned long *file)
{
	long f = global_node_page_state(NR_FILE_PAGES) -
		 global_node_page_state(NR_SHMEM) -
		 cask_swapcache_pages();

	*file = max(f, 0L);
	return global_zone_page_state(NR_FREE_PAGES);
}

/* Any context: counters only. */
static unsigned long lmk_cell_free(struct lmk_cell *lc, unsigned long *file)
{
	if (cask_cell_is_host(lc->cell))
		return lmk_host_free(file);
	*file = 0;
	return lmk_memcg_free(lc->memcg);
}

/*
 * Queue the tick now if the cell is within its top level. Any context,
 * reclaim included: no sleep, no allocation, no lock of ours.
 */
static void lmk_kick(struct lmk_cell *lc)
{
	unsigned long top = READ_ONCE(lc->top), free, file;

	if (!top)
		return;
	free = lmk_cell_free(lc, &file);
	if (free >= top || file >= top)
		return;
	atomic64_cmpxchg(&lc->since_ns, 0, ktime_get_ns());
	/*
	 * A full barrier after the reads above: if the bit is still set,
	 * the tick's clear_bit() and smp_mb__after_atomic() come after it,
	 * and the tick's own read sees what this one saw, or newer.
	 */
	if (!test_and_set_bit(LMK_KICKED, &lc->flags))
		mod_delayed_work(lmk_wq, &lc->tick, 0);
}

/* What tells whether a process is the cell's to kill. */
struct lmk_scope {
	struct cgroup *cgrp;
	const struct user_namespace *userns;
	struct pid_namespace *pid_ns;
};

/*
 * RCU held. The cell's PID namespace (the cell holds a reference), not its
 * child_reaper: that pointer holds no reference, and once the namespace's
 * init has exited while the cell lives on (its IPC namespace kept by
 * processes that entered it) it points to a freed task.
 */
static bool lmk_scope_init(struct lmk_cell *lc, struct lmk_scope *s)
{
	s->cgrp = cask_cell_cgroup(lc->cell);
	s->userns = cask_cell_user_ns(lc->cell);
	s->pid_ns = cask_cell_pid_ns(lc->cell);
	return s->cgrp;
}

/*
 * Is @p the init of the cell's PID namespace (pid 1 there: its thread
 * group, whichever thread is the reaper now)? Reads only @p's own pids.
 * RCU held.
 */
static bool lmk_task_is_init(const struct lmk_scope *s, struct task_struct *p)
{
	return is_global_init(p) ||
	       (s->pid_ns && task_tgid_nr_ns(p, s->pid_ns) == 1);
}

/*
 * Whether @p runs with credentials of @ns or a namespace below it. A cell's
 * killer may kill only those: a cell made by an unprivileged user (its own
 * user namespace, in a cgroup it shares with others) must not SIGKILL
 * processes that user could not signal. The host cell's is the initial
 * namespace, which holds everybody. Called under RCU.
 */
static bool lmk_task_in_userns(struct task_struct *p,
			       const struct user_namespace *ns)
{
	const struct user_namespace *t = __task_cred(p)->user_ns;

	while (t->level > ns->level)
		t = t->parent;
	return t == ns;
}

/* All but the memory: lmk_task_mm() finds that. RCU held. */
static void lmk_candidate_fill(const struct lmk_scope *s, struct task_struct *p,
			       struct lmk_candidate *c)
{
	*c = (struct lmk_candidate) {
		.adj = READ_ONCE(p->signal->oom_score_adj),
		.kthread = p->flags & PF_KTHREAD,
		.init = lmk_task_is_init(s, p),
		/*
		 * The process's state, not its leader's PF_EXITING: a leader
		 * that called pthread_exit() is exiting while its process
		 * runs on. Exiting threads are passed over by lmk_task_mm().
		 */
		.dying = fatal_signal_pending(p) ||
			 (p->signal->flags & SIGNAL_GROUP_EXIT),
		.in_cell = task_under_cgroup_hierarchy(p, s->cgrp) &&
			   lmk_task_in_userns(p, s->userns),
	};
}

/* Threads of @p using @mm. RCU held. */
static int lmk_mm_threads(struct task_struct *p, struct mm_struct *mm)
{
	struct task_struct *t;
	int n = 0;

	for_each_thread(p, t)
		n += READ_ONCE(t->mm) == mm;
	return n;
}

/*
 * @p's address space, through a thread that still has it and is not
 * exiting, with its resident pages and whether other processes may use it
 * too; NULL when there is none: every thread with it is exiting, or its
 * memory is already freed or reaped (MMF_OOM_SKIP), which the OOM killer
 * takes as the process dying. With @grab it is referenced (mmgrab());
 * else the pointer is only to be compared, under RCU. RCU held.
 */
static struct mm_struct *lmk_task_mm(struct task_struct *p,
				     unsigned long *rss, bool *shared,
				     bool grab)
{
	struct mm_struct *mm;
	struct task_struct *t;

	for_each_thread(p, t) {
		if (READ_ONCE(t->flags) & PF_EXITING)
			continue;
		task_lock(t);
		mm = t->mm;
		if (mm && !test_bit(MMF_OOM_SKIP, &mm->flags)) {
			*rss = get_mm_rss(mm);
			/*
			 * CLONE_VM sharers mark the mm; a vfork child does
			 * not, but holds a user more than @p's threads.
			 * Others holding it briefly (/proc readers) cost a
			 * needless walk only.
			 */
			*shared = test_bit(MMF_MULTIPROCESS, &mm->flags) ||
				  atomic_read(&mm->mm_users) >
				  lmk_mm_threads(p, mm);
			if (grab)
				mmgrab(mm);
			task_unlock(t);
			return mm;
		}
		task_unlock(t);
	}
	return NULL;
}

/* Does process @q use @mm? Its first thread with an mm says. RCU held. */
static bool lmk_process_uses_mm(struct task_struct *q, struct mm_struct *mm)
{
	struct mm_struct *t_mm;
	struct task_struct *t;

	for_each_thread(q, t) {
		t_mm = READ_ONCE(t->mm);
		if (t_mm)
			return t_mm == mm;
	}
	return false;
}

/*
 * The other processes using @mm, @p's address space (CLONE_VM without
 * CLONE_THREAD, vfork): while one of them lives, killing @p frees
 * nothing. Whether each is the cell's to kill, as a victim would be at
 * any level; with @kill, SIGKILL those that are, as the OOM killer kills
 * a victim's sharers. Kernel threads borrowing the mm are not processes
 * that keep it. RCU held.
 *
 * Return: true if every sharer is the cell's to kill.
 */
static bool lmk_sharers(const struct lmk_scope *s, struct task_struct *p,
			struct mm_struct *mm, bool kill)
{
	struct lmk_candidate c;
	struct task_struct *q;
	bool all = true;

	for_each_process(q) {
		if (same_thread_group(q, p) || (q->flags & PF_KTHREAD) ||
		    !lmk_process_uses_mm(q, mm))
			continue;
		lmk_candidate_fill(s, q, &c);
		/* Its memory is the victim's; dying is no reason to spare it. */
		c.rss = 1;
		c.dying = false;
		if (!lmk_candidate_eligible(&c, 0)) {
			all = false;
			if (!kill)
				break;
		} else if (kill) {
			kill_pid(task_tgid(q), SIGKILL, 1);
		}
	}
	return all;
}

/* Sharer walks per search, at most: each is a walk of every process. */
#define LMK_SHARED_CHECKS	4

/*
 * The best victim at @min_adj among the cell's processes, referenced, with
 * its mm (referenced, mmgrab()) and whether that may be shared.
 */
static struct task_struct *lmk_select_locked(struct lmk_cell *lc,
					     short min_adj,
					     struct lmk_candidate *best_c,
					     struct mm_struct **best_mm,
					     bool *best_shared)
{
	int checks = LMK_SHARED_CHECKS;
	struct task_struct *p, *best = NULL;
	struct lmk_candidate c;
	struct lmk_scope s;
	struct mm_struct *mm;
	bool shared;

	lockdep_assert_held(&lc->lock);
	rcu_read_lock();
	if (!lmk_scope_init(lc, &s))
		goto unlock;
	for_each_process(p) {
		lmk_candidate_fill(&s, p, &c);
		/* Everything but the memory first: task_lock() for few. */
		c.rss = 1;
		if (!lmk_candidate_eligible(&c, min_adj))
			continue;
		mm = lmk_task_mm(p, &c.rss, &shared, false);
		if (!mm || !lmk_candidate_eligible(&c, min_adj) ||
		    !lmk_candidate_better(&c, best ? best_c : NULL))
			continue;
		/*
		 * Not a process whose memory another keeps that the cell may
		 * not kill (another cell's, the container's init): the OOM
		 * killer spares such sharers, and the kill frees nothing.
		 */
		if (shared) {
			if (!checks || !lmk_walk_allowed(lc->walks, jiffies,
							 false))
				continue;
			checks--;
			if (!lmk_sharers(&s, p, mm, false))
				continue;
		}
		best = p;
		*best_c = c;
	}
	/* Its mm again, referenced: the one compared may have gone since. */
	if (best) {
		*best_mm = lmk_task_mm(best, &best_c->rss, best_shared, true);
		if (*best_mm)
			get_task_struct(best);
		else
			best = NULL;
	}
unlock:
	rcu_read_unlock();
	return best;
}

/* SIGKILL the other users of the victim's mm that are the cell's. */
static void lmk_kill_sharers_locked(struct lmk_cell *lc,
				    struct task_struct *p,
				    struct mm_struct *mm)
{
	struct lmk_scope s;

	lockdep_assert_held(&lc->lock);
	rcu_read_lock();
	/* One that appeared since the search is spared, and waited for. */
	if (lmk_scope_init(lc, &s)) {
		/* Counted, never refused: the kill frees nothing without it. */
		lmk_walk_allowed(lc->walks, jiffies, true);
		lmk_sharers(&s, p, mm, true);
	}
	rcu_read_unlock();
}

static void lmk_event_fill(struct lmk_event *ev, struct task_struct *p,
			   const struct lmk_candidate *c, short min_adj,
			   int level)
{
	ev->pid = get_task_pid(p, PIDTYPE_PID);
	ev->tgid = get_task_pid(p, PIDTYPE_TGID);
	ev->uid = task_uid(p);
	ev->min_flt = p->min_flt;
	ev->maj_flt = p->maj_flt;
	ev->rss = c->rss;
	ev->adj = c->adj;
	ev->min_adj = min_adj;
	ev->level = level;
	ev->start_ns = p->start_boottime;
	get_task_comm(ev->comm, p);
}

static void lmk_record(u64 *last, u64 *max, u64 from_ns, u64 to_ns)
{
	*last = div_u64(to_ns - from_ns, NSEC_PER_USEC);
	*max = max(*max, *last);
}

/**
 * struct lmk_reap - a victim whose memory the reaper is to free
 * @node: on lmk_reap_list while queued (protected by lmk_reap_lock)
 * @ref: the cell's, until it is done with the victim, and the queue's or
 *	the reaper's
 * @task: the victim (a reference)
 * @mm: its address space (mmgrab()), whose mmap_lock a reap needs
 * @queued_ns: when the kill asked for it
 * @done_ns: when its memory was reaped, 0 until then
 * @not_before: jiffies before which the reaper does not take it up
 *	(protected by lmk_reap_lock)
 * @cancelled: the cell is done with it: not queued again (protected by
 *	lmk_reap_lock)
 *
 * The reaper never sees the cell: a cell goes (and the module's tick with
 * it) without waiting for a reap, which can wait long on the victim's
 * mmap_lock (a thread of the victim stalled on FUSE or userfaultfd while
 * holding it, a writer queued behind that).
 */
struct lmk_reap {
	struct list_head node;
	refcount_t ref;
	struct task_struct *task;
	struct mm_struct *mm;
	u64 queued_ns;
	atomic64_t done_ns;
	unsigned long not_before;	/* lmk_reap_lock */
	bool cancelled;			/* lmk_reap_lock */
};

static DEFINE_SPINLOCK(lmk_reap_lock);
static LIST_HEAD(lmk_reap_list);		/* lmk_reap_lock */
static struct lmk_reap *lmk_reap_current;	/* lmk_reap_lock */
static struct task_struct *lmk_reaper;
static bool lmk_reaper_stopping;
/* Ends the reaper's wait for a mmap_lock at the end of a reap's slice. */
static struct timer_list lmk_reap_timer;

/*
 * The "reap" param: N leaves a victim's memory to its exit, as on a kernel
 * without patches/0002, so that the reaper's gain can be measured in one
 * boot (tools/bench/lmk_bench), and so that an administrator can turn the
 * reaper off should a reap ever misbehave. Read with READ_ONCE() at each
 * kill, under no lock of ours (the kernel's param lock serializes only
 * the writers).
 */
static bool lmk_reap_param = true;

/*
 * Host-wide, so the host's root's alone. The file's mode is not enough:
 * runtimes bind-mount the params directory into containers for lmkd's
 * adj and minfree, and the root of a container without a user namespace
 * is root on the host as far as the file can tell.
 */
static int lmk_reap_set(const char *val, const struct kernel_param *kp)
{
	if (!cask_current_in_host() || !capable(CAP_SYS_ADMIN))
		return -EPERM;
	return param_set_bool(val, kp);
}

static const struct kernel_param_ops lmk_reap_ops = {
	.flags = KERNEL_PARAM_OPS_FL_NOARG,
	.set = lmk_reap_set,
	.get = param_get_bool,
};

module_param_cb(reap, &lmk_reap_ops, &lmk_reap_param, 0644);
MODULE_PARM_DESC(reap, "reap a victim's memory right after SIGKILL (with patches/0002; default Y)");

static void lmk_reap_put(struct lmk_reap *r)
{
	if (r && refcount_dec_and_test(&r->ref)) {
		mmdrop(r->mm);
		put_task_struct(r->task);
		kfree(r);
	}
}

/*
 * Ask the reaper to free @p's memory, @mm; NULL without patches/0002, with
 * the reap param off, or without memory.
 */
static struct lmk_reap *lmk_reap_start(struct task_struct *p,
				       struct mm_struct *mm)
{
	struct lmk_reap *r;

	if (!CASK_OOM_REAP || !lmk_reaper || !READ_ONCE(lmk_reap_param))
		return NULL;
	/* No reclaim: memory is short. Without it the victim's exit frees. */
	r = kzalloc(sizeof(*r), GFP_NOWAIT | __GFP_NOWARN);
	if (!r)
		return NULL;
	refcount_set(&r->ref, 2);
	r->task = get_task_struct(p);
	mmgrab(mm);
	r->mm = mm;
	r->queued_ns = ktime_get_ns();
	spin_lock(&lmk_reap_lock);
	/* Not 0: jiffies start 5 minutes before wrapping to 0. */
	r->not_before = jiffies;
	list_add_tail(&r->node, &lmk_reap_list);
	spin_unlock(&lmk_reap_lock);
	wake_up_process(lmk_reaper);
	return r;
}

/* When @r's memory was reaped, 0 if not (yet). */
static u64 lmk_reap_done(struct lmk_reap *r)
{
	return r ? atomic64_read(&r->done_ns) : 0;
}

/*
 * A reap in progress gives up waiting for the victim's mmap_lock: the
 * kill timed out, and the next victim's reap should not queue behind it.
 */
static void lmk_reap_interrupt(struct lmk_reap *r)
{
	spin_lock(&lmk_reap_lock);
	/* The reaper flushes signals before it takes the next request. */
	if (r && lmk_reap_current == r)
		send_sig(SIGKILL, lmk_reaper, 1);
	spin_unlock(&lmk_reap_lock);
}

/* The cell is done with @r: off the queue if still there, and let go. */
static void lmk_reap_cancel(struct lmk_reap *r)
{
	bool queued;

	if (!r)
		return;
	spin_lock(&lmk_reap_lock);
	queued = !list_empty(&r->node);
	list_del_init(&r->node);
	/* The reaper, if it has it, does not queue it again. */
	r->cancelled = true;
	spin_unlock(&lmk_reap_lock);
	if (queued)
		lmk_reap_put(r);
	lmk_reap_put(r);
}

static void lmk_reap_timeout(struct timer_list *t)
{
	send_sig(SIGKILL, lmk_reaper, 1);
}

/*
 * One turn of @r: LMK_REAP_SLICE_MS at most for the victim's mmap_lock,
 * which another cell's victim's thread may hold for long (a FUSE fault in
 * its own user namespace, a long syscall that holds it for writing, which
 * SIGKILL does not cut short). Tried without waiting, every
 * LMK_REAP_STEP_MS; once free, oom_mrelease_task() takes it, and a writer
 * that comes between is waited for until the slice ends (the timer's
 * SIGKILL ends that wait).
 *
 * Return: oom_mrelease_task()'s, or -ETIMEDOUT if the slice ended (or
 * the kill's timeout came) before the reap had the lock.
 */
static int lmk_reap_one(struct lmk_reap *r)
{
	unsigned long end = jiffies + msecs_to_jiffies(LMK_REAP_SLICE_MS);
	int ret;

	while (!mmap_read_trylock(r->mm)) {
		if (time_after_eq(jiffies, end) || signal_pending(current))
			return -ETIMEDOUT;
		schedule_timeout_interruptible(msecs_to_jiffies(LMK_REAP_STEP_MS));
	}
	mmap_read_unlock(r->mm);
	mod_timer(&lmk_reap_timer, time_after(end, jiffies) ? end : jiffies + 1);
	ret = cask_oom_mrelease(r->task);
	timer_delete_sync(&lmk_reap_timer);
	return ret == -EINTR ? -ETIMEDOUT : ret;
}

/**
 * lmk_reap_again() - whether, and from when, a reap is to be tried again
 * @ret: its turn's result: lmk_reap_one()'s
 * @now: jiffies at the turn's end
 * @not_before: set to the jiffies from which the next turn may start
 *
 * A slice that ended (-ETIMEDOUT) goes to the back of the queue, ready at
 * once: the victim's mmap_lock was another's, and another cell's reap may
 * be waiting for its turn. -EAGAIN is a reap that had the lock but could
 * not free: an mmu notifier (a GPU driver's userptr, Xen's gntdev)
 * refused to invalidate without blocking. At once, the next turn would
 * have the lock at once and fail again, without a sleep until the kill
 * times out; it waits LMK_REAP_STEP_MS, as a wait for the lock does.
 *
 * Context: any.
 * Return: true if the reap is to be queued again.
 */
bool lmk_reap_again(int ret, unsigned long now, unsigned long *not_before)
{
	switch (ret) {
	case -ETIMEDOUT:
		*not_before = now;
		return true;
	case -EAGAIN:
		*not_before = now + msecs_to_jiffies(LMK_REAP_STEP_MS);
		return true;
	default:
		return false;
	}
}
EXPORT_SYMBOL_IF_KUNIT(lmk_reap_again);

/*
 * The first request whose turn may start at @now, or NULL; @wait is set
 * to the jiffies until the first that will be, MAX_SCHEDULE_TIMEOUT if
 * none. Unloading takes them all at once (and does not reap).
 */
static struct lmk_reap *lmk_reap_next_locked(unsigned long now, long *wait)
{
	bool stopping = READ_ONCE(lmk_reaper_stopping);
	struct lmk_reap *r;

	lockdep_assert_held(&lmk_reap_lock);
	*wait = MAX_SCHEDULE_TIMEOUT;
	list_for_each_entry(r, &lmk_reap_list, node) {
		if (stopping || !time_before(now, r->not_before))
			return r;
		*wait = min_t(long, *wait, r->not_before - now);
	}
	return NULL;
}

/*
 * The reaper: a kthread, not a work item, so that nothing waits for it.
 * It lets SIGKILL in, which a reap's slice, a kill's timeout and unloading
 * send to stop a wait for a mmap_lock. A reap that gave up goes to the
 * back of the queue until the cell is done with it (its memory freed by
 * the exit, or the kill's timeout); one that could not free waits
 * LMK_REAP_STEP_MS there (lmk_reap_again()), and the reaper sleeps when
 * only such are left.
 */
static int lmk_reaper_fn(void *unused)
{
	unsigned long not_before;
	struct lmk_reap *r;
	bool again;
	long wait;
	int ret;

	allow_signal(SIGKILL);
	for (;;) {
		/*
		 * Before lmk_reaper_stopping is read: unloading sets it, then
		 * signals, so a signal flushed here is seen as stopping below.
		 */
		if (signal_pending(current))
			flush_signals(current);
		set_current_state(TASK_INTERRUPTIBLE);
		spin_lock(&lmk_reap_lock);
		r = lmk_reap_next_locked(jiffies, &wait);
		if (r)
			list_del_init(&r->node);
		lmk_reap_current = r;
		spin_unlock(&lmk_reap_lock);
		if (!r) {
			/* Only with an empty queue: unloading takes them all. */
			if (kthread_should_stop())
				break;
			schedule_timeout(wait);
			continue;
		}
		__set_current_state(TASK_RUNNING);
		/*
		 * 0: reaped, or freed by the exit already. Not -ESRCH: the
		 * victim's threads let go of the mm, which another user may
		 * keep; its exit_mmap() says when it is freed.
		 */
		ret = 0;
		if (!READ_ONCE(lmk_reaper_stopping)) {
			u64 start = ktime_get_ns(), end;

			ret = lmk_reap_one(r);
			end = ktime_get_ns();
			if (!ret)
				atomic64_set(&r->done_ns, end);
			trace_lmk_reap(task_pid_nr(r->task), ret,
				       div_u64(start - r->queued_ns,
					       NSEC_PER_USEC),
				       div_u64(end - start, NSEC_PER_USEC));
		}
		spin_lock(&lmk_reap_lock);
		lmk_reap_current = NULL;
		/* The queue's reference goes back with it. */
		again = !r->cancelled && !READ_ONCE(lmk_reaper_stopping) &&
			lmk_reap_again(ret, jiffies, &not_before);
		if (again) {
			r->not_before = not_before;
			list_add_tail(&r->node, &lmk_reap_list);
		}
		spin_unlock(&lmk_reap_lock);
		if (!again)
			lmk_reap_put(r);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* Kill the best victim at @level, if there is one; false if none. */
static bool lmk_kill_locked(struct lmk_cell *lc, int level)
{
	short min_adj = lc->levels.adj[level];
	struct lmk_candidate c = { };
	struct lmk_event ev = { };
	struct mm_struct *mm = NULL;
	struct task_struct *p;
	bool shared = false;
	struct pid *tgid;
	u64 now, since;

	lockdep_assert_held(&lc->lock);
	/* A walk of every process: not again soon after one found nobody. */
	if (time_before(jiffies, lc->idle_until))
		return false;
	/* Nor more often than the budget, however fast victims go. */
	if (!lmk_search_allowed(&lc->budget, jiffies)) {
		pr_warn_ratelimited("cell %s: %d searches for a victim in a second, waiting\n",
				    cask_cell_name(lc->cell),
				    LMK_SEARCHES_PER_SEC);
		return false;
	}
	/* Nor more often than its memcg's cells may walk, together. */
	if (!lmk_walk_allowed(lc->walks, jiffies, false)) {
		pr_warn_ratelimited("cell %s: its memory cgroup's cells made %d walks of every process in a second, waiting\n",
				    cask_cell_name(lc->cell),
				    LMK_WALKS_PER_SEC);
		return false;
	}
	p = lmk_select_locked(lc, min_adj, &c, &mm, &shared);
	if (!p) {
		lc->idle_until = jiffies + msecs_to_jiffies(LMK_TICK_SLOW_MS);
		return false;
	}
	lmk_event_fill(&ev, p, &c, min_adj, level);
	lmk_event_release(&lc->last);
	lmk_event_fill(&lc->last, p, &c, min_adj, level);

	/*
	 * To the thread group, not to @p: a leader that called
	 * pthread_exit() takes no signal, and one sent to it alone is never
	 * acted on. Through a reference to its struct pid, taken under RCU
	 * by get_task_pid(): task_tgid() outside RCU may return a pid
	 * already freed (the victim reaped since the search), and a struct
	 * pid, unlike a number, is never reused; NULL (gone) signals nobody.
	 */
	tgid = get_task_pid(p, PIDTYPE_TGID);
	kill_pid(tgid, SIGKILL, 1);
	put_pid(tgid);
	/* Its memory goes with the last of its users. */
	if (shared)
		lmk_kill_sharers_locked(lc, p, mm);
	now = ktime_get_ns();
	/* From the crossing of this kill's level, not of the episode's first. */
	since = lc->crossed_ns[level] ?: now;
	lc->victim = p;
	lc->victim_mm = mm;
	lc->kill_ns = now;
	lc->deadline = jiffies + LMK_KILL_TIMEOUT;
	lc->kills++;
	lmk_record(&lc->reaction_last, &lc->reaction_max, since, now);

	trace_lmk_kill(cask_cell_name(lc->cell), task_pid_nr(p), lc->last.comm,
		       c.adj, c.rss, min_adj, lc->reaction_last);
	pr_info_ratelimited("cell %s: killed '%s' (%d), adj %d, rss %lu pages, level %d (adj %d), %llu us\n",
			    cask_cell_name(lc->cell), lc->last.comm,
			    task_pid_nr(p), c.adj, c.rss, level, min_adj,
			    lc->reaction_last);
	lmk_event_queue(lc, &ev);
	/* After the sharers' signals: a reap needs every user dying. */
	lc->reap = lmk_reap_start(p, mm);
	return true;
}

static void lmk_victim_done_locked(struct lmk_cell *lc)
{
	lockdep_assert_held(&lc->lock);
	lmk_reap_cancel(lc->reap);
	lc->reap = NULL;
	mmdrop(lc->victim_mm);
	lc->victim_mm = NULL;
	put_task_struct(lc->victim);
	lc->victim = NULL;
	/* What remains crossed after this is a new crossing. */
	atomic64_set(&lc->since_ns, 0);
	memset(lc->crossed_ns, 0, sizeof(lc->crossed_ns));
}

/*
 * Is a kill still in flight? It is until the victim's memory is freed:
 * reaped (patches/0002), or unmapped by exit_mmap() once its last user,
 * sharers included, has let go of it (MMF_OOM_SKIP, which the OOM killer
 * reads the same way); or until LMK_KILL_TIMEOUT. Not when the victim's
 * threads have let go of the mm: another user may keep it.
 */
static bool lmk_victim_pending_locked(struct lmk_cell *lc)
{
	u64 freed;

	lockdep_assert_held(&lc->lock);
	if (!lc->victim)
		return false;
	freed = lmk_reap_done(lc->reap);
	if (!freed && test_bit(MMF_OOM_SKIP, &lc->victim_mm->flags))
		freed = ktime_get_ns();
	if (freed) {
		lmk_record(&lc->freed_last, &lc->freed_max, lc->kill_ns, freed);
		lmk_victim_done_locked(lc);
		return false;
	}
	if (time_after(jiffies, lc->deadline)) {
		pr_warn_ratelimited("cell %s: pid %d's memory not freed %u ms after SIGKILL\n",
				    cask_cell_name(lc->cell),
				    task_pid_nr(lc->victim),
				    jiffies_to_msecs(LMK_KILL_TIMEOUT));
		lmk_reap_interrupt(lc->reap);
		lmk_victim_done_locked(lc);
		return false;
	}
	return true;
}

static void lmk_tick(struct work_struct *work)
{
	struct lmk_cell *lc = container_of(to_delayed_work(work),
					   struct lmk_cell, tick);
	unsigned long top, free, file;
	unsigned int pace;
	bool pending;
	int level = -1;

	clear_bit(LMK_KICKED, &lc->flags);
	/*
	 * Pairs with the full barrier of test_and_set_bit() in lmk_kick(),
	 * which reads the counters before it: a kick that finds the bit
	 * still set leaves the crossing it saw to this run, so the counters
	 * must be read after the clear is visible, else a kick between the
	 * read and the clear is lost until the next pace. clear_bit() orders
	 * nothing, and the mutex's acquire does not order this store before
	 * the loads after it.
	 */
	smp_mb__after_atomic();
	mutex_lock(&lc->lock);
	/*
	 * An unlinked cell has no files left to see or stop its killer by,
	 * and a new cell may already watch the same cgroup: it kills no
	 * more. lmk_cell_unlink() cleared its levels; this covers a tick
	 * that was queued before and a cell attached after its unlink.
	 */
	if (!cask_cell_linked(lc->cell)) {
		mutex_unlock(&lc->lock);
		return;
	}
	top = lc->enabled ? lmk_levels_top(&lc->levels) : 0;
	pending = lmk_victim_pending_locked(lc);
	free = lmk_cell_free(lc, &file);
	pace = lmk_tick_pace(top, free, file);
	if (top)
		level = lmk_level_select(&lc->levels, free, file);
	lmk_levels_crossed(&lc->levels, lc->crossed_ns, top ? free : ULONG_MAX,
			   file, atomic64_read(&lc->since_ns), ktime_get_ns());
	if (level < 0) {
		atomic64_set(&lc->since_ns, 0);
	} else {
		atomic64_cmpxchg(&lc->since_ns, 0, ktime_get_ns());
		/* Nobody to kill: look again at the slow pace. */
		if (!pending && !lmk_kill_locked(lc, level))
			pace = LMK_TICK_SLOW_MS;
		pending = !!lc->victim;
	}
	if (pending)
		pace = LMK_TICK_FAST_MS;
	/* No levels and nothing to follow: the tick stops until set again. */
	if (top || pending)
		queue_delayed_work(lmk_wq, &lc->tick, msecs_to_jiffies(pace));
	mutex_unlock(&lc->lock);
}

/**
 * lmk_cell_set_levels_locked() - change a cell's levels and (re)start it
 * @lc: the cell's state
 * @lv: the new levels
 * @enabled: whether the killer acts on them
 *
 * Context: process context, lc->lock held.
 * Return: 0, or -ENODEV if the cell was unlinked: a param write that
 * found the cell before its unlink must not start its killer again.
 */
int lmk_cell_set_levels_locked(struct lmk_cell *lc,
			       const struct lmk_levels *lv, bool enabled)
{
	lockdep_assert_held(&lc->lock);
	/* False before lmk_cell_unlink() takes lc->lock: no store slips by. */
	if (!cask_cell_linked(lc->cell))
		return -ENODEV;
	lc->levels = *lv;
	lc->enabled = enabled;
	/* The indices may name other levels now: crossed anew. */
	memset(lc->crossed_ns, 0, sizeof(lc->crossed_ns));
	WRITE_ONCE(lc->top, enabled ? lmk_levels_top(lv) : 0);
	/* The tick runs at once and then keeps its own pace. */
	mod_delayed_work(lmk_wq, &lc->tick, 0);
	return 0;
}

/**
 * lmk_cell_unlink() - stop an unlinked cell's killer for good
 * @lc: the cell's state
 *
 * The cell has left sysfs and lookups, but an open /proc/lowmemorykiller
 * (or another driver's file) may keep it for long: without this its
 * levels and tick would go on killing in its cgroup with nothing left to
 * see or disable them by, next to the new cell that the same IPC
 * namespace gets on its next use. The killer is disabled and its levels
 * dropped, a victim in flight is let go (its SIGKILL stands), and the
 * cell's readers get EPOLLHUP and then end of file, so that lmkd reopens
 * the file in its new cell.
 *
 * Context: process context (cask_core's unlink, under its registry lock;
 * the tick takes no cask_core lock); lc->lock not held.
 */
void lmk_cell_unlink(struct lmk_cell *lc)
{
	mutex_lock(&lc->lock);
	lc->levels = (struct lmk_levels) { };
	lc->enabled = false;
	WRITE_ONCE(lc->top, 0);
	if (lc->victim)
		lmk_victim_done_locked(lc);
	mutex_unlock(&lc->lock);
	/* A queued tick would find the cell unlinked; no need to wait. */
	cancel_delayed_work(&lc->tick);
	lmk_events_hangup(lc);
}

static enum lru_status lmk_count_one(struct list_head *item,
				     struct list_lru_one *list,
				     spinlock_t *lock, void *arg)
{
	struct lmk_sentinel *s = container_of(item, typeof(*s), lru);

	/* Listed, so its cell's state is attached: detach unlists first. */
	lmk_kick(s->lc);
	return LRU_SKIP;
}

static unsigned long lmk_shrink_count(struct shrinker *shrinker,
				      struct shrink_control *sc)
{
	unsigned long nr = ULONG_MAX;

	if (!list_lru_count_one(&lmk_lru, sc->nid, sc->memcg))
		return SHRINK_EMPTY;
	list_lru_walk_one(&lmk_lru, sc->nid, sc->memcg, lmk_count_one, NULL,
			  &nr);
	/* Nothing to scan; 0, not SHRINK_EMPTY, keeps the memcg's bit. */
	return 0;
}

static unsigned long lmk_shrink_scan(struct shrinker *shrinker,
				     struct shrink_control *sc)
{
	return SHRINK_STOP;
}

/**
 * lmk_cell_init() - set up a new cell's killer: no levels, enabled
 * @lc: zeroed state
 * @cell: its cell
 *
 * Files the cell's sentinel in the memcg of its cgroup.
 *
 * Context: process context, may sleep (cask_core's attach).
 * Return: 0 or -ENOMEM.
 */
int lmk_cell_init(struct lmk_cell *lc, struct cask_cell *cell)
{
	struct cgroup_subsys_state *css = NULL;
	struct cgroup *cgrp = cask_cell_cgroup(cell);
	struct mem_cgroup *old;

	lc->cell = cell;
	lc->enabled = true;
	mutex_init(&lc->lock);
	spin_lock_init(&lc->ev_lock);
	init_waitqueue_head(&lc->wait);
	INIT_DELAYED_WORK(&lc->tick, lmk_tick);
	if (cgrp && !mem_cgroup_disabled())
		css = cgroup_get_e_css(cgrp, &memory_cgrp_subsys);
	lc->memcg = css ? mem_cgroup_from_css(css) : NULL;
	lc->walks = lmk_walks_get(lc->memcg);
	if (!lc->walks)
		goto put_memcg;

	/*
	 * Allocated inside the memcg so that kmem_cache_alloc_lru() makes the
	 * memcg's list before list_lru_add_obj() files the sentinel there.
	 * Where that is the root memcg (the host cell, a cell made for a
	 * process of the root cgroup), the sentinel is charged to nobody:
	 * it must be on the root's list for global reclaim to kick the host
	 * cell, and it is one fixed-size object per cell, made by the host
	 * or by a process of the root cgroup (whose own charges go there
	 * anyway), never memory a container sizes.
	 */
	old = set_active_memcg(lc->memcg);
	lc->sentinel = kmem_cache_alloc_lru(lmk_sentinel_cache, &lmk_lru,
					    GFP_KERNEL);
	set_active_memcg(old);
	if (!lc->sentinel)
		goto put_walks;
	lc->sentinel->lc = lc;
	/* list_lru_add_obj() adds only an item whose list_head is empty. */
	INIT_LIST_HEAD(&lc->sentinel->lru);
	list_lru_add_obj(&lmk_lru, &lc->sentinel->lru);
	return 0;

put_walks:
	lmk_walks_put(lc->walks);
put_memcg:
	mem_cgroup_put(lc->memcg);
	return -ENOMEM;
}

/**
 * lmk_cell_exit() - undo lmk_cell_init(): stop the cell's killer
 * @lc: the state
 *
 * The caller frees @lc after an RCU grace period (wake_up_pollfree()).
 *
 * Context: process context (cask_core's detach).
 */
void lmk_cell_exit(struct lmk_cell *lc)
{
	/* Under the list's lock: no walk can find the cell after this. */
	list_lru_del_obj(&lmk_lru, &lc->sentinel->lru);
	kmem_cache_free(lmk_sentinel_cache, lc->sentinel);
	cancel_delayed_work_sync(&lc->tick);
	/* Not waiting for a reap in progress: it does not use the cell. */
	mutex_lock(&lc->lock);
	if (lc->victim)
		lmk_victim_done_locked(lc);
	mutex_unlock(&lc->lock);
	lmk_event_release(&lc->last);
	lmk_events_flush(lc);
	/* Before the memcg's reference: that keeps the key from reuse. */
	lmk_walks_put(lc->walks);
	mem_cgroup_put(lc->memcg);
}

/**
 * lmk_kill_init() - make the workqueue, the sentinel cache, the shrinker
 * and its list, and start the reaper (with patches/0002)
 *
 * The shrinker is registered by lmk_kill_register() once cells exist.
 *
 * Context: module init.
 * Return: 0 or a negative errno.
 */
int lmk_kill_init(void)
{
	int ret = -ENOMEM;

	/* Kills must make progress when memory is short: a rescuer. */
	lmk_wq = alloc_workqueue("lowmemorykiller", WQ_MEM_RECLAIM | WQ_HIGHPRI,
				 0);
	if (!lmk_wq)
		return -ENOMEM;
	lmk_sentinel_cache = KMEM_CACHE(lmk_sentinel, SLAB_ACCOUNT);
	if (!lmk_sentinel_cache)
		goto destroy_wq;
	lmk_shrinker = shrinker_alloc(SHRINKER_MEMCG_AWARE |
				      SHRINKER_NUMA_AWARE |
				      SHRINKER_NONSLAB, "lowmemorykiller");
	if (!lmk_shrinker)
		goto destroy_cache;
	ret = list_lru_init_memcg(&lmk_lru, lmk_shrinker);
	if (ret)
		goto free_shrinker;
	lmk_shrinker->count_objects = lmk_shrink_count;
	lmk_shrinker->scan_objects = lmk_shrink_scan;
	if (CASK_OOM_REAP) {
		timer_setup(&lmk_reap_timer, lmk_reap_timeout, 0);
		lmk_reaper = kthread_run(lmk_reaper_fn, NULL, "lmk_reaper");
		if (IS_ERR(lmk_reaper)) {
			ret = PTR_ERR(lmk_reaper);
			lmk_reaper = NULL;
			goto destroy_lru;
		}
	}
	return 0;

destroy_lru:
	list_lru_destroy(&lmk_lru);
free_shrinker:
	shrinker_free(lmk_shrinker);
	lmk_shrinker = NULL;
destroy_cache:
	kmem_cache_destroy(lmk_sentinel_cache);
destroy_wq:
	destroy_workqueue(lmk_wq);
	return ret;
}

/**
 * lmk_kill_register() - let reclaim call the shrinker
 *
 * Context: module init, after lmk_kill_init() and the driver's
 * registration (every cell has its sentinel).
 */
void lmk_kill_register(void)
{
	shrinker_register(lmk_shrinker);
}

/**
 * lmk_kill_unregister() - stop the shrinker, wait for running counts
 *
 * Called before the cells' state goes, which counts use. A shrinker
 * cannot be unregistered without being freed, so this frees it too.
 *
 * Context: module exit.
 */
void lmk_kill_unregister(void)
{
	shrinker_free(lmk_shrinker);
	lmk_shrinker = NULL;
}

/* After the cells: nothing queues a reap any more. */
static void lmk_reaper_stop(void)
{
	if (!lmk_reaper)
		return;
	WRITE_ONCE(lmk_reaper_stopping, true);
	/* Ends a wait for a stalled victim's mmap_lock. */
	send_sig(SIGKILL, lmk_reaper, 1);
	kthread_stop(lmk_reaper);
	lmk_reaper = NULL;
}

/**
 * lmk_kill_free() - stop the reaper, free the shrinker (unless
 * unregistered), the list, the sentinel cache and the workqueue
 *
 * Context: module exit, after every cell's state is gone.
 */
void lmk_kill_free(void)
{
	lmk_reaper_stop();
	shrinker_free(lmk_shrinker);
	list_lru_destroy(&lmk_lru);
	kmem_cache_destroy(lmk_sentinel_cache);
	destroy_workqueue(lmk_wq);
}
