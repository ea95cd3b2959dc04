/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask_power internals: a cell's lock table, its host policy and its
 * suspend vote, and the pure functions (parse.c, lock.c) the KUnit suite
 * checks.
 */
#ifndef _CPOWER_POWER_H
#define _CPOWER_POWER_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct kernfs_node;
struct kobject;
struct wakeup_source;

/**
 * enum cpower_policy - what a cell's locks do to the host
 * @CPOWER_FORWARD: an active lock holds a host wakeup source
 *	"cask:<cell>:<name>" active, as /sys/power/wake_lock would
 * @CPOWER_CAP: as @CPOWER_FORWARD, but within a budget: the cell as a
 *	whole may hold the host for max_hold_ms, summed over all its locks
 *	and activations, until the budget is renewed (a completed host
 *	suspend, or the host's root writing max_hold_ms)
 * @CPOWER_DENY: locks work inside the cell only; each request is counted
 *	as a denial and never keeps the host awake
 * @CPOWER_NR_POLICIES: how many there are
 */
enum cpower_policy {
	CPOWER_FORWARD,
	CPOWER_CAP,
	CPOWER_DENY,
	CPOWER_NR_POLICIES,
};

/**
 * enum cpower_state - a sleep state a cell may vote for
 * @CPOWER_STATE_ON: none (autosleep "off", an unknown label)
 * @CPOWER_STATE_FREEZE: "freeze", suspend to idle
 * @CPOWER_STATE_MEM: "mem", Android's choice
 * @CPOWER_NR_STATES: how many there are
 *
 * "standby" and "disk" (hibernation) are not offered to cells: a module
 * cannot tell whether the host supports them, and a container has no
 * business asking the host to hibernate.
 */
enum cpower_state {
	CPOWER_STATE_ON,
	CPOWER_STATE_FREEZE,
	CPOWER_STATE_MEM,
	CPOWER_NR_STATES,
};

/* Longest lock name; /sys/power/wake_lock has no limit but the page. */
#define CPOWER_NAME_MAX			255
#define CPOWER_MAX_LOCKS_DEFAULT	64
/* The most a host may allow one cell: bounds a scan of the table. */
#define CPOWER_MAX_LOCKS_LIMIT		1024
#define CPOWER_MAX_HOLD_MS_DEFAULT	60000U
#define CPOWER_MAX_HOLD_MS_LIMIT	(24U * 3600 * 1000)
/*
 * How long a capped cell's host source stays active, charged to its budget,
 * after its last lock lets go: every activation is a wakeup event that
 * aborts a host suspend in progress, so pulsing must cost what holding
 * would. Longer than a suspend takes from reading wakeup_count to freezing
 * the cell's tasks, after which the cell cannot pulse.
 */
#define CPOWER_CAP_GRACE_MS		1000U
/* The most often a cell's vote flips wake the host's pollers. */
#define CPOWER_NOTIFY_DELAY_MS		10
/* How long a state write's vote stands unless written again. */
#define CPOWER_VOTE_LEASE_MS_DEFAULT	5000U
#define CPOWER_VOTE_LEASE_MS_LIMIT	(3600U * 1000)
/* A deadline that never comes, in ktime_get() nanoseconds. */
#define CPOWER_NEVER			U64_MAX

/*
 * The clock of every timeout, lease and budget: ktime_get_ns(). With
 * KUnit, a test sets a clock it steps by hand (cpower_set_clock()), so
 * that the cases do not depend on how fast a slow or loaded (emulated)
 * machine runs between two steps. The clock is the module's: a test
 * replaces it only while no other cell uses cask_power.
 */
#if IS_ENABLED(CONFIG_KUNIT)
u64 cpower_now(void);
void cpower_set_clock(u64 (*clock)(void));
#else
static inline u64 cpower_now(void)
{
	return ktime_get_ns();
}
#endif

/**
 * struct cpower_lock - one of a cell's wake locks, active or not
 * @node: in the cell's table, sorted by name
 * @lru: in the cell's list of locks, least recently written first
 * @ws: the host wakeup source, while the policy is not deny (NULL on a
 *	kernel without CONFIG_PM_SLEEP); in a struct cpower_src of lock.c
 * @since: when it was activated, ktime_get() ns
 * @expires: when it deactivates by itself, 0 for never
 * @active: the cell holds it
 * @host_held: @ws is active on its behalf
 * @name: NUL-terminated
 *
 * Every field is protected by the cell's &cpower_cell.lock.
 */
struct cpower_lock {
	struct rb_node node;
	struct list_head lru;
	struct wakeup_source *ws;
	u64 since;
	u64 expires;
	bool active;
	bool host_held;
	char name[];
};

/**
 * struct cpower_cell - a cell's wake locks and suspend vote
 * @cell_name: the cell's name, for the host sources; immutable
 * @expire: deactivates timed-out locks and ends the host hold when the
 *	cap's budget runs out; queued for the earliest deadline
 * @notify: tells suspend_ready's pollers that the vote changed, at most
 *	once per CPOWER_NOTIFY_DELAY_MS however often it flips
 * @lock: protects every field below
 * @locks: the table, by name
 * @lru: every lock, least recently written first
 * @reap: host sources out of the table, to be removed by
 *	cpower_cell_reap() once @lock is dropped
 * @nr_locks: entries in @locks
 * @nr_active: active entries
 * @policy: the host's policy for this cell
 * @max_locks: entries the cell may have
 * @max_hold_ms: the cap's budget
 * @nr_host_held: locks whose host source is active: the cell holds the
 *	host while this is not 0
 * @host_since: since when the current hold (@nr_host_held not 0) is not
 *	yet counted in @budget_used_ns
 * @budget_used_ns: time the cell held the host under the cap policy since
 *	the budget was last renewed, the current hold not included
 * @budget_spent: the budget ran out: no lock holds the host under the cap
 *	policy until it is renewed
 * @grace_until: the end of the grace (CPOWER_CAP_GRACE_MS) that the last
 *	capped hold was charged for when it ended, or 0; a hold that begins
 *	before it gets the rest back, since it is charged itself
 * @held_ns: time locks were active, those active now not included
 * @denials: lock requests made while the policy was deny
 * @caps: times the cap's budget ran out
 * @wakeup_count: locks deactivated so far (the cell's wakeup_count)
 * @saved_count: the value last written to wakeup_count, if @armed
 * @armed: a vote is refused if wakeup events happened since @saved_count
 * @autosleep: the state autosleep votes for, CPOWER_STATE_ON if off
 * @ready: the cell's vote: it would sleep now
 * @vote_expires: when @ready, set by a state write, lapses (ktime_get()
 *	ns); 0 while there is no such vote (autosleep's has no lease)
 * @vote_lease_ms: how long a state write's vote stands (the host's)
 * @ready_state: the state it voted for
 * @ready_changed_ns: when @ready last changed, CLOCK_BOOTTIME ns, or 0
 * @ready_kn: suspend_ready's sysfs node once read, for kernfs_notify()
 *	(a reference)
 * @notified: kernfs_notify() calls made for it (for the KUnit suite)
 * @dead: the cell was unlinked or is going: no new lock, no timer
 */
struct cpower_cell {
	const char *cell_name;
	struct delayed_work expire;
	struct delayed_work notify;

	struct mutex lock;		/* every field below */
	struct rb_root locks;
	struct list_head lru;
	struct list_head reap;
	unsigned int nr_locks;
	unsigned int nr_active;
	enum cpower_policy policy;
	unsigned int max_locks;
	unsigned int max_hold_ms;
	unsigned int nr_host_held;
	u64 host_since;
	u64 budget_used_ns;
	bool budget_spent;
	u64 grace_until;
	u64 held_ns;
	u64 denials;
	u64 caps;
	unsigned int wakeup_count;
	unsigned int saved_count;
	bool armed;
	enum cpower_state autosleep;
	bool ready;
	u64 vote_expires;
	unsigned int vote_lease_ms;
	enum cpower_state ready_state;
	u64 ready_changed_ns;
	struct kernfs_node *ready_kn;
	u64 notified;
	bool dead;
};

/* parse.c: the names files spell, and pure functions */
extern const char * const cpower_policy_names[CPOWER_NR_POLICIES];
extern const char * const cpower_state_names[CPOWER_NR_STATES];

int cpower_parse_lock(const char *buf, size_t *len, u64 *timeout_ns);
char *cpower_ws_name(const char *cell, const char *lock);
int cpower_parse_unlock(const char *buf, size_t *len);
int cpower_parse_policy(const char *buf);
int cpower_parse_count(const char *buf, unsigned int *count);
enum cpower_state cpower_decode_state(const char *buf, size_t n);
ssize_t cpower_emit_blockers(char *buf, unsigned int n, const char *names,
			     int nlen);

/* lock.c: pure functions */
u64 cpower_expiry(u64 now, bool active, u64 expires, u64 timeout_ns);
u64 cpower_lock_deadline(const struct cpower_lock *l);
u64 cpower_budget_used(u64 used_ns, bool holding, u64 since, u64 now);
u64 cpower_budget_end(u64 used_ns, u64 since, unsigned int max_hold_ms);
unsigned long cpower_delay(u64 now, u64 deadline);

/* lock.c: a cell's table, with @pc->lock held (_locked) or not */
void cpower_cell_init(struct cpower_cell *pc, const char *cell_name);
void cpower_cell_stop(struct cpower_cell *pc);
void cpower_cell_exit(struct cpower_cell *pc);
void cpower_learn_ready_kn(struct cpower_cell *pc, struct kobject *kobj,
			   const char *name);
void cpower_cell_reap(struct cpower_cell *pc);
void cpower_reap_flush(void);
struct cpower_lock *cpower_lock_alloc(struct cpower_cell *pc, const char *name,
				      size_t len);
void cpower_lock_free_spare(struct cpower_lock *l);
int cpower_lock_locked(struct cpower_cell *pc, const char *name, size_t len,
		       u64 timeout_ns, struct cpower_lock **spare);
int cpower_unlock_locked(struct cpower_cell *pc, const char *name,
			 size_t len);
bool cpower_blocks_suspend_locked(struct cpower_cell *pc);
ssize_t cpower_show_names_locked(struct cpower_cell *pc, char *buf,
				 bool active);
int cpower_set_policy_locked(struct cpower_cell *pc,
			     enum cpower_policy policy);
void cpower_set_max_hold_locked(struct cpower_cell *pc, unsigned int ms);
void cpower_renew_budget_locked(struct cpower_cell *pc);
void cpower_release_all_locked(struct cpower_cell *pc);
u64 cpower_held_ns_locked(struct cpower_cell *pc);
int cpower_vote_locked(struct cpower_cell *pc, enum cpower_state state);
int cpower_save_count_locked(struct cpower_cell *pc, const char *buf);
void cpower_set_autosleep_locked(struct cpower_cell *pc,
				 enum cpower_state state);

#endif /* _CPOWER_POWER_H */
