/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lowmemorykiller internals: a cell's levels, its killer state, the kill
 * events and the pure functions (levels.c) the KUnit suite checks.
 */
#ifndef _LMK_LMK_H
#define _LMK_LMK_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>
#include <cask/memcg.h>

struct cask_cell;
struct cask_driver;
struct mem_cgroup;
struct mm_struct;
struct pid;
struct timer_list;

/* The legacy driver's array size, which lmkd's MAX_TARGETS matches. */
#define LMK_MAX_LEVELS		6
/* Legacy oom_adj values: OOM_DISABLE .. OOM_ADJUST_MAX. */
#define LMK_OOM_ADJ_MIN		(-17)
#define LMK_OOM_ADJ_MAX		15
/*
 * The tick's pace: while following a victim or within the top level;
 * while near it (less than the top level's worth of free memory above
 * it), so that a ramp is seen soon after it crosses; otherwise.
 */
#define LMK_TICK_FAST_MS	10
#define LMK_TICK_NEAR_MS	20
#define LMK_TICK_SLOW_MS	100
/* Kills kept per cell for /proc/lowmemorykiller's readers; older drop. */
#define LMK_EVENTS_MAX		16
/* Longest "a,b,c" list we print or accept (6 x "-1000,"). */
#define LMK_LIST_LEN		64
/*
 * Searches for a victim a cell may start in a second: each walks every
 * process on the host, and a cell's own processes decide how often it
 * searches (victims that die at once, processes spawned to be killed).
 */
#define LMK_SEARCHES_PER_SEC	20
/*
 * Walks of every process (searches, checks of a candidate's sharers,
 * kills of a victim's) the cells of one memory cgroup may make in a
 * second, together (walks.c): one cell's searches and a few sharer
 * checks, however many cells a container is cut into.
 */
#define LMK_WALKS_PER_SEC	40

/**
 * struct lmk_budget - searches (or walks) in the current second
 * @start: jiffies when the second began, valid while @searches
 * @searches: searches started since @start
 */
struct lmk_budget {
	unsigned long start;
	unsigned int searches;
};

/**
 * struct lmk_levels - a cell's kill levels, as the legacy params hold them
 * @nr_adj: values in @adj
 * @nr_minfree: values in @minfree; the levels in use are the first
 *	min(@nr_adj, @nr_minfree), as the legacy driver did
 * @adj: oom_score_adj from which a level kills (legacy values converted)
 * @minfree: free pages below which a level is crossed
 */
struct lmk_levels {
	unsigned int nr_adj;
	unsigned int nr_minfree;
	short adj[LMK_MAX_LEVELS];
	unsigned int minfree[LMK_MAX_LEVELS];
};

/**
 * struct lmk_candidate - what victim selection knows of one process
 * @adj: its oom_score_adj
 * @rss: resident pages of its address space, 0 without one
 * @kthread: a kernel thread
 * @init: the cell's init (its PID namespace's child reaper) or the host's
 * @dying: already exiting or killed
 * @in_cell: in the cell's cgroup subtree
 */
struct lmk_candidate {
	short adj;
	unsigned long rss;
	bool kthread;
	bool init;
	bool dying;
	bool in_cell;
};

/**
 * struct lmk_event - one kill, for /proc/lowmemorykiller and last_kill
 * @pid: the victim's thread (a reference), translated for each reader
 * @tgid: its thread group leader (a reference)
 * @uid: its real uid
 * @min_flt: its minor faults
 * @maj_flt: its major faults
 * @rss: its resident pages when killed
 * @adj: its oom_score_adj
 * @min_adj: the adj of the level that was crossed
 * @level: the index of that level
 * @start_ns: when it started, in boot time
 * @comm: its name
 */
struct lmk_event {
	struct pid *pid;
	struct pid *tgid;
	kuid_t uid;
	unsigned long min_flt;
	unsigned long maj_flt;
	unsigned long rss;
	short adj;
	short min_adj;
	int level;
	u64 start_ns;
	char comm[TASK_COMM_LEN];
};

/**
 * struct lmk_walks - the walks of every process that the cells of one
 *	memory cgroup may make this second, together
 * @node: in lmk_walks_hash (protected by lmk_walks_lock)
 * @key: the memory cgroup, NULL for the host cell (no reference: each
 *	user's holds it)
 * @users: cells sharing this (protected by lmk_walks_lock)
 * @lock: protects @budget
 * @budget: the walks in the current second (protected by @lock)
 */
struct lmk_walks {
	struct hlist_node node;		/* lmk_walks_lock */
	const void *key;
	unsigned int users;		/* lmk_walks_lock */
	spinlock_t lock;		/* budget */
	struct lmk_budget budget;	/* lock */
};

struct lmk_reap;
struct mm_struct;

/**
 * struct lmk_cell - a cell's low-memory killer
 * @cell: the cell (no reference: the cell owns this)
 * @memcg: the cell's memory cgroup (a reference, cask_cell_memcg()): the
 *	root memcg for the host cell, NULL without memcg
 * @watch: our sentinel in @memcg, which makes reclaim of the memcg call
 *	our shrinker
 * @walks: the walk budget shared with the other cells of @memcg
 * @tick: checks the levels, kills, and follows a victim; queued by the
 *	shrinker and by itself while the cell has levels
 * @flags: LMK_KICKED: @tick is queued to run now
 * @top: the largest minfree of the levels in use, 0 when disabled or
 *	without levels (READ_ONCE: the shrinker reads it under no lock)
 * @since_ns: when the cell was first seen within its top level (by the
 *	shrinker's kick or the tick), 0 while it is above every level
 * @lock: protects the fields below it, up to @ev_lock
 * @levels: the levels
 * @enabled: the killer acts on @levels; false for good once the cell is
 *	unlinked (lmk_cell_unlink())
 * @victim: the process killed last, until its memory is freed or the
 *	kill times out (a reference)
 * @victim_mm: its address space when killed (mmgrab()): freed once
 *	MMF_OOM_SKIP is set on it
 * @reap: the reaper's request for @victim (patches/0002), NULL without
 * @kill_ns: when @victim was sent SIGKILL
 * @deadline: jiffies after which another kill may follow @victim's
 * @crossed_ns: per level, when the tick saw it crossed (@since_ns for
 *	the top level), 0 while it is not: a kill's reaction counts from
 *	its own level's crossing (lmk_levels_crossed())
 * @idle_until: jiffies before which no new search for a victim starts,
 *	after one found nobody
 * @budget: the searches for a victim this second, LMK_SEARCHES_PER_SEC
 *	at most
 * @kills: kills since the cell was made
 * @reaction_last: the last kill's time from its level's crossing to
 *	SIGKILL, in us
 * @reaction_max: the largest of those
 * @freed_last: the last victim's time from SIGKILL to its memory freed
 * @freed_max: the largest of those
 * @last: the last kill, valid if @last.pid
 * @ev_lock: protects @ring and @ev_seq
 * @ring: the last LMK_EVENTS_MAX kills, for /proc/lowmemorykiller: kill
 *	number n is at n % LMK_EVENTS_MAX (protected by @ev_lock)
 * @ev_seq: kills ever put in @ring, the number of the next (protected by
 *	@ev_lock)
 * @hungup: the cell was unlinked and its last kill is in @ring: readers
 *	get end of file once they have read it (protected by @ev_lock)
 * @wait: readers of /proc/lowmemorykiller polling for a kill or the
 *	hangup
 * @rcu: frees this after epoll has let go of @wait (wake_up_pollfree())
 */
struct lmk_cell {
	struct cask_cell *cell;
	struct mem_cgroup *memcg;
	struct cask_memcg_watch watch;
	struct lmk_walks *walks;
	struct delayed_work tick;
	unsigned long flags;
	unsigned long top;
	atomic64_t since_ns;

	struct mutex lock;		/* the fields below, up to ev_lock */
	struct lmk_levels levels;	/* lock */
	bool enabled;			/* lock */
	struct task_struct *victim;	/* lock */
	struct mm_struct *victim_mm;	/* lock */
	struct lmk_reap *reap;		/* lock */
	u64 kill_ns;			/* lock */
	unsigned long deadline;		/* lock */
	u64 crossed_ns[LMK_MAX_LEVELS];	/* lock */
	unsigned long idle_until;	/* lock */
	struct lmk_budget budget;	/* lock */
	u64 kills;			/* lock */
	u64 reaction_last;		/* lock */
	u64 reaction_max;		/* lock */
	u64 freed_last;			/* lock */
	u64 freed_max;			/* lock */
	struct lmk_event last;		/* lock */

	spinlock_t ev_lock;		/* the event ring */
	struct lmk_event ring[LMK_EVENTS_MAX];	/* ev_lock */
	u64 ev_seq;			/* ev_lock */
	bool hungup;			/* ev_lock */
	wait_queue_head_t wait;
	struct rcu_head rcu;
};

#define LMK_KICKED	0

extern struct cask_driver lmk_driver;

/* levels.c: pure functions */
short lmk_oom_adj_to_score(int oom_adj);
int lmk_parse_adj(const char *buf, short *adj, unsigned int *nr);
int lmk_parse_minfree(const char *buf, unsigned int *minfree,
		      unsigned int *nr);
int lmk_print_adj(char *buf, size_t len, const struct lmk_levels *lv);
int lmk_print_minfree(char *buf, size_t len, const struct lmk_levels *lv);
unsigned int lmk_levels_nr(const struct lmk_levels *lv);
unsigned long lmk_levels_top(const struct lmk_levels *lv);
int lmk_level_select(const struct lmk_levels *lv, unsigned long free,
		     unsigned long file);
void lmk_levels_crossed(const struct lmk_levels *lv, u64 *crossed_ns,
			unsigned long free, unsigned long file, u64 seen_ns,
			u64 now);
unsigned int lmk_tick_pace(unsigned long top, unsigned long free,
			   unsigned long file);
bool lmk_candidate_eligible(const struct lmk_candidate *c, short min_adj);
bool lmk_candidate_better(const struct lmk_candidate *c,
			  const struct lmk_candidate *best);
int lmk_select_victim(const struct lmk_candidate *c, unsigned int nr,
		      short min_adj);
bool lmk_budget_take(struct lmk_budget *b, unsigned long now,
		     unsigned int max);
bool lmk_search_allowed(struct lmk_budget *b, unsigned long now);

/* walks.c */
struct lmk_walks *lmk_walks_get(const void *key);
void lmk_walks_put(struct lmk_walks *w);
bool lmk_walk_allowed(struct lmk_walks *w, unsigned long now, bool must);

/* trigger.c */
int lmk_cell_set_levels_locked(struct lmk_cell *lc,
			       const struct lmk_levels *lv, bool enabled);
int lmk_cell_init(struct lmk_cell *lc, struct cask_cell *cell);
void lmk_cell_unlink(struct lmk_cell *lc);
void lmk_cell_exit(struct lmk_cell *lc);
int lmk_kill_init(void);
void lmk_kill_register(void);
void lmk_kill_unregister(void);
void lmk_kill_free(void);

/* kill.c: with lc->lock held */
bool lmk_kill_locked(struct lmk_cell *lc, int level);
void lmk_victim_done_locked(struct lmk_cell *lc);
bool lmk_victim_pending_locked(struct lmk_cell *lc);

/* reap.c */
/*
 * A reap's time for the victim's mmap_lock per turn, tried every
 * LMK_REAP_STEP_MS, before the next request's turn (lmk_reap_one()); a
 * reap that had the lock but could not free now waits LMK_REAP_STEP_MS
 * before its next turn (lmk_reap_again()).
 */
#define LMK_REAP_SLICE_MS	20
#define LMK_REAP_STEP_MS	10

struct lmk_reap *lmk_reap_start(struct task_struct *p, struct mm_struct *mm);
u64 lmk_reap_done(struct lmk_reap *r);
void lmk_reap_interrupt(struct lmk_reap *r);
void lmk_reap_cancel(struct lmk_reap *r);
bool lmk_reap_again(int ret, unsigned long now, unsigned long *not_before);
int lmk_reaper_start(void);
void lmk_reaper_stop(void);

/* event.c */
void lmk_event_release(struct lmk_event *ev);
void lmk_event_queue(struct lmk_cell *lc, struct lmk_event *ev);
void lmk_events_hangup(struct lmk_cell *lc);
void lmk_events_flush(struct lmk_cell *lc);
int lmk_proc_init(void);
void lmk_proc_exit(void);

#endif /* _LMK_LMK_H */
