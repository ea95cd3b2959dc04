// SPDX-License-Identifier: GPL-2.0
/*
 * Searching a cell for a victim and killing it.
 *
 * At the crossed level the tick (trigger.c) has lmk_kill_locked() pick the
 * victim (the highest oom_score_adj at or above the level's, then the
 * largest RSS, among the processes of the cell's cgroup subtree: a walk of
 * every process under RCU, since css_task_iter is not exported, at kill
 * time only), and send SIGKILL to it and to the other processes sharing
 * its mm, as the OOM killer does (a process whose mm is shared with one
 * the cell may not kill is not a victim). One kill is in flight per cell:
 * the next waits until the victim's memory is freed (reaped by
 * patches/0002 through reap.c, or unmapped by the exit of its last user)
 * or LMK_KILL_TIMEOUT, which lmk_victim_pending_locked() tells the tick.
 *
 * Locking: Documentation/dev/architecture.rst ("The low-memory killer")
 * gives the order. Everything here runs with lc->lock held; the walks of
 * the processes take RCU and task_lock() under it, and the walk budget's
 * lock (walks.c); queueing or cancelling a reap takes lmk_reap_lock
 * (reap.c) under lc->lock.
 */
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/user_namespace.h>
#include <cask/cell.h>

#include "lmk.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/* The legacy driver's wait for a victim before it chose another. */
#define LMK_KILL_TIMEOUT	HZ

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
 * lmk_kill_locked() - kill the best victim at a level, if there is one
 * @lc: the cell's state
 * @level: the crossed level, an index into @lc->levels
 *
 * Searches the cell's processes for a victim at @level's oom_score_adj
 * (within the search and walk budgets, and not soon after a search that
 * found nobody), sends it and the other users of its mm that are the
 * cell's SIGKILL, records the kill and asks the reaper for its memory.
 *
 * Context: process context (the tick), lc->lock held.
 * Return: true if a victim was killed, false if none.
 */
bool lmk_kill_locked(struct lmk_cell *lc, int level)
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

/**
 * lmk_victim_done_locked() - let go of the victim in flight
 * @lc: the cell's state, with a victim
 *
 * Cancels its reap and drops the references to it and its mm; what stays
 * crossed after this is a new crossing.
 *
 * Context: process context, lc->lock held.
 */
void lmk_victim_done_locked(struct lmk_cell *lc)
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

/**
 * lmk_victim_pending_locked() - whether a kill is still in flight
 * @lc: the cell's state
 *
 * It is until the victim's memory is freed: reaped (patches/0002), or
 * unmapped by exit_mmap() once its last user, sharers included, has let
 * go of it (MMF_OOM_SKIP, which the OOM killer reads the same way); or
 * until LMK_KILL_TIMEOUT. Not when the victim's threads have let go of
 * the mm: another user may keep it. A victim found freed or timed out is
 * let go (lmk_victim_done_locked()).
 *
 * Context: process context (the tick), lc->lock held.
 * Return: true while the kill is in flight.
 */
bool lmk_victim_pending_locked(struct lmk_cell *lc)
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
