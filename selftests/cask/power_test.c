// SPDX-License-Identifier: GPL-2.0
/*
 * cask_power: /sys/power's wake_lock, wake_unlock, state, wakeup_count and
 * autosleep per cell, in /sys/kernel/cask/cells/NAME/power/, under the
 * host's policy.
 *
 * The host tests compare the host cell's files with the kernel's own
 * /sys/power/wake_lock and wake_unlock, write for write. The "cells"
 * fixture runs two containers, A (with a user namespace, or plain root in
 * its own IPC namespace) and B (always with one), registered as cells:
 * their locks must not collide, neither may touch the other's files, a
 * container's root may not change its policy, each policy must show in
 * the host's wakeup sources (debugfs' wakeup_sources, not /sys/class/wakeup,
 * which every user can read), a write to state must
 * record a vote and suspend nothing, suspend_ready must wake a poller,
 * and a cell's end must release every host source it had. Allocation
 * failures (fail-nth) must leave nothing behind: kmemleak checks at the
 * end of the run.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "cask_util.h"
#include "cask_fault.h"

#define CELLS		CASK "/cells/"
#define MOD_DIR		"/lib/modules/cask"
#define CELL_A		"pwr-a"
#define CELL_B		"pwr-b"
#define PA		CELLS CELL_A "/power/"
#define PB		CELLS CELL_B "/power/"
#define PHOST		CELLS "host/power/"
#define SYS_POWER	"/sys/power/"
#define WAKEUP_CLASS	"/sys/class/wakeup"
#define WAKEUP_SOURCES	"/sys/kernel/debug/wakeup_sources"
#define UID_A		440000
#define UID_B		450000

static const char *power_missing(void)
{
	if (cask_missing())
		return cask_missing();
	if (access(PHOST "wake_lock", F_OK))
		return "cask_power is not loaded";
	return NULL;
}

static bool feature(const char *name)
{
	char path[PATH_MAX], buf[16];

	snprintf(path, sizeof(path), CASK "/features/%s", name);
	return !read_file(path, buf, sizeof(buf)) && !strcmp(buf, "1");
}

/* A file's whole content, newline included; its length or -errno. */
static int read_raw(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

static long read_long(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

static int pw(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", dir, file);
	return write_file(path, val);
}

static long pl(const char *dir, const char *file)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", dir, file);
	return read_long(path);
}

static const char *ps(const char *dir, const char *file)
{
	static char buf[4096];
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", dir, file);
	if (read_file(path, buf, sizeof(buf)))
		return "(error)";
	return buf;
}

/* ---- host wakeup sources ---- */

struct ws {
	bool found;
	long active_count;
	long active_ms;
};

/*
 * Calls @fn for each source of debugfs' wakeup_sources (the host's root
 * only): a line is the name, padded with spaces, a tab, then the counts;
 * the fifth is how long it has been active now, in ms. Returns the sum
 * of what @fn returned, or -1 without the file.
 */
static int ws_walk(int (*fn)(const char *name, long active_count,
			     long active_ms, void *arg), void *arg)
{
	char line[512], *tab, *end;
	long c[5];
	int n = 0;
	FILE *f;

	f = fopen(WAKEUP_SOURCES, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		for (end = tab; end > line && end[-1] == ' '; end--)
			end[-1] = '\0';
		if (sscanf(tab + 1, "%ld %ld %ld %ld %ld", &c[0], &c[1], &c[2],
			   &c[3], &c[4]) != 5)
			continue;
		n += fn(line, c[0], c[4], arg);
	}
	fclose(f);
	return n;
}

struct ws_query {
	const char *name;
	struct ws ws;
};

static int ws_get_one(const char *name, long active_count, long active_ms,
		      void *arg)
{
	struct ws_query *q = arg;

	if (q->ws.found || strcmp(name, q->name))
		return 0;
	q->ws.found = true;
	q->ws.active_count = active_count;
	q->ws.active_ms = active_ms;
	return 1;
}

/* The source called @name. */
static struct ws ws_get(const char *name)
{
	struct ws_query q = { .name = name };

	ws_walk(ws_get_one, &q);
	return q.ws;
}

static int ws_prefix_one(const char *name, long active_count, long active_ms,
			 void *arg)
{
	(void)active_count;
	(void)active_ms;
	return !strncmp(name, arg, strlen(arg));
}

/* Sources whose name starts with @prefix. */
static int ws_count(const char *prefix)
{
	return ws_walk(ws_prefix_one, (void *)prefix);
}

/* Wait up to 5 s for the sources starting with @prefix to be @n. */
static int ws_wait_count(const char *prefix, int n)
{
	int i, c = ws_count(prefix);

	for (i = 0; i < 100 && c != n; i++) {
		usleep(50000);
		c = ws_count(prefix);
	}
	return c;
}

/* Active: held for the 30 ms this waits, so its active time shows. */
static bool ws_active(const char *name)
{
	usleep(30000);
	return ws_get(name).active_ms > 0;
}

static const char *sources_missing(void)
{
	if (power_missing())
		return power_missing();
	if (!feature("power_wakeup_sources"))
		return "no host wakeup sources (CONFIG_PM_SLEEP)";
	if (access(WAKEUP_SOURCES, R_OK))
		return "no " WAKEUP_SOURCES " (debugfs not mounted)";
	return NULL;
}

/* ---- the host cell against /sys/power ---- */

/* Set by the host's root for a cell and owned by it: the cell's root cannot. */
static const char * const host_files[] = {
	"policy", "max_locks", "max_hold_ms", "vote_lease_ms",
};

TEST(interfaces)
{
	static const char * const rw[] = {
		"wake_lock", "wake_unlock", "state", "wakeup_count", "autosleep",
	};
	static const char * const ro[] = {
		"active_locks", "total_held_ms", "denials", "caps", "suspend_ready",
		"suspend_ready_changed_ns",
	};
	char path[PATH_MAX], buf[64];
	struct stat st;
	unsigned int i;

	if (power_missing())
		SKIP(return, "%s", power_missing());
	for (i = 0; i < ARRAY_SIZE(rw); i++) {
		snprintf(path, sizeof(path), PHOST "%s", rw[i]);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s", path);
		EXPECT_EQ(0600, st.st_mode & 07777) TH_LOG("%s", path);
	}
	for (i = 0; i < ARRAY_SIZE(ro); i++) {
		snprintf(path, sizeof(path), PHOST "%s", ro[i]);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s", path);
		EXPECT_EQ(0400, st.st_mode & 07777) TH_LOG("%s", path);
	}
	/* The host's settings: readable by the cell, see host_files_owned. */
	for (i = 0; i < ARRAY_SIZE(host_files); i++) {
		snprintf(path, sizeof(path), PHOST "%s", host_files[i]);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s", path);
		EXPECT_EQ(0644, st.st_mode & 07777) TH_LOG("%s", path);
	}
	ASSERT_EQ(0, read_file(CASK "/features/power_wakeup_sources", buf, sizeof(buf)));
	EXPECT_TRUE(!strcmp(buf, "0") || !strcmp(buf, "1"));
	ASSERT_EQ(0, read_file(CASK "/features/power_suspend", buf, sizeof(buf)));
	EXPECT_TRUE(!strcmp(buf, "0") || !strcmp(buf, "1"));
	/* The host's own locks hold the host, as /sys/power's do. */
	EXPECT_STREQ("forward", ps(PHOST, "policy"));
	EXPECT_STREQ("off", ps(PHOST, "autosleep"));
	EXPECT_EQ(64, pl(PHOST, "max_locks"));
	EXPECT_EQ(60000, pl(PHOST, "max_hold_ms"));
	EXPECT_EQ(5000, pl(PHOST, "vote_lease_ms"));
}

/*
 * The names of a wake_lock or wake_unlock file that start with @prefix,
 * without it, in the file's order and format (one space apart, a newline
 * after the last), or "(error)" or "(format)".
 */
static const char *ours(const char *path, const char *prefix, char *out, size_t len)
{
	char buf[4096], *tok, *save = NULL;
	size_t n = 0, plen = strlen(prefix);
	int r = read_raw(path, buf, sizeof(buf));

	if (r <= 0)
		return "(error)";
	if (buf[r - 1] != '\n' || strstr(buf, "  ") || buf[0] == ' ')
		return "(format)";
	out[0] = '\0';
	for (tok = strtok_r(buf, "\n ", &save); tok; tok = strtok_r(NULL, "\n ", &save))
		if (!strncmp(tok, prefix, plen))
			n += snprintf(out + n, len - n, "%s%s", n ? " " : "", tok + plen);
	snprintf(out + n, len - n, "\n");
	return out;
}

/*
 * The same writes to /sys/power/wake_lock and to the host cell's file: the
 * same errors, then the same names listed, active and not, in the same
 * order. Names carry this run's prefix: the kernel keeps inactive ones.
 */
TEST(same_as_sys_power)
{
	static const struct {
		bool lock;
		const char *fmt;
	} ops[] = {
		{ true, "%sD1" },
		{ true, "%sD2 5000000000\n" },
		{ true, "%sD10\n" },
		{ true, "%sD3\t 7000000000" },
		{ false, "%sD2\n" },
		{ false, "%sD2" },
		{ false, "%sX" },
		{ true, " %sD4" },
		{ true, "%sD5 x" },
		{ true, "%sD5 " },
		{ true, "%sD5 -1" },
		{ true, "%sD5 0x10" },
		{ true, "%sD5 1 2" },
		{ true, "\n" },
		{ false, "\n" },
		{ false, "%sD1 1000" },
		{ true, "%sD6 0" },
		{ true, "%sD1 1000" },
		{ true, "%sD3 1000" },
		{ true, "%sD10" },
		{ true, "%sD10 2000000" },
	};
	char prefix[32], val[128], kbuf[4096], cbuf[4096];
	const char *kfile, *cfile;
	unsigned int i;
	int k, c;

	if (power_missing())
		SKIP(return, "%s", power_missing());
	if (access(SYS_POWER "wake_lock", W_OK))
		SKIP(return, "no /sys/power/wake_lock (CONFIG_PM_WAKELOCKS)");
	snprintf(prefix, sizeof(prefix), "cpt%d_", getpid());
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		snprintf(val, sizeof(val), ops[i].fmt, prefix);
		kfile = ops[i].lock ? SYS_POWER "wake_lock" : SYS_POWER "wake_unlock";
		cfile = ops[i].lock ? PHOST "wake_lock" : PHOST "wake_unlock";
		k = write_file(kfile, val);
		c = write_file(cfile, val);
		EXPECT_EQ(k, c) TH_LOG("op %u '%s': kernel %d, cask %d", i, val, k, c);
	}
	/* D1 1 us, D10 2 ms: expired by now. */
	usleep(200000);
	EXPECT_STREQ("D3 D6\n", ours(SYS_POWER "wake_lock", prefix, kbuf, sizeof(kbuf)));
	EXPECT_STREQ("D3 D6\n", ours(PHOST "wake_lock", prefix, cbuf, sizeof(cbuf)));
	EXPECT_STREQ("D1 D10 D2\n", ours(SYS_POWER "wake_unlock", prefix, kbuf, sizeof(kbuf)));
	EXPECT_STREQ("D1 D10 D2\n", ours(PHOST "wake_unlock", prefix, cbuf, sizeof(cbuf)));
	for (i = 1; i <= 10; i++) {
		snprintf(val, sizeof(val), "%sD%u", prefix, i);
		write_file(SYS_POWER "wake_unlock", val);
		write_file(PHOST "wake_unlock", val);
	}
	EXPECT_EQ(0, pl(PHOST, "active_locks"));
}

/* ---- two containers ---- */

FIXTURE(cells) {
	struct container a, b;
};

FIXTURE_VARIANT(cells) {
	bool a_userns;
};

FIXTURE_VARIANT_ADD(cells, userns) {
	.a_userns = true,
};

FIXTURE_VARIANT_ADD(cells, plain) {
	.a_userns = false,
};

FIXTURE_SETUP(cells)
{
	if (power_missing())
		SKIP(return, "%s", power_missing());
	cask_unregister(CELL_A);
	cask_unregister(CELL_B);
	ASSERT_TRUE(cell_gone(CELL_A));
	ASSERT_TRUE(cell_gone(CELL_B));
	ASSERT_EQ(0, container_start(&self->a, "",
				     variant->a_userns ? UID_A : CONTAINER_NO_USERNS));
	ASSERT_EQ(0, container_start(&self->b, "", UID_B));
	ASSERT_EQ(0, cask_register(CELL_A, self->a.init));
	ASSERT_EQ(0, cask_register(CELL_B, self->b.init));
	/* What a runtime does (power.rst): containers start with deny. */
	ASSERT_STREQ("deny", ps(PA, "policy"));
	ASSERT_EQ(0, pw(PA, "policy", "cap"));
	ASSERT_EQ(0, pw(PB, "policy", "cap"));
}

FIXTURE_TEARDOWN(cells)
{
	cask_unregister(CELL_A);
	cask_unregister(CELL_B);
	container_stop(&self->a);
	container_stop(&self->b);
}

/* What a container function writes, and where: file-scope, seen by forks. */
struct wr {
	const char *path;
	const char *val;
};

/* Write from inside a container: 0 or errno. */
static int try_write(void *arg)
{
	const struct wr *w = arg;

	return -write_file(w->path, w->val);
}

/* Read from inside a container: 0 if it reads as expected, else errno or 200. */
static int try_read_is(void *arg)
{
	const struct wr *w = arg;
	char buf[4096];
	int ret = read_file(w->path, buf, sizeof(buf));

	if (ret)
		return -ret;
	return strcmp(buf, w->val) ? 200 : 0;
}

static const struct wr a_lock_shared = { PA "wake_lock", "shared" };
static const struct wr b_lock_shared = { PB "wake_lock", "shared" };
static const struct wr a_unlock_shared = { PA "wake_unlock", "shared" };
static const struct wr a_lock_own = { PA "wake_lock", "own 60000000000\n" };
static const struct wr a_reads_three = { PA "wake_lock", "alpha beta own" };
static const struct wr a_state_mem = { PA "state", "mem" };
static const struct wr a_policy_fwd = { PA "policy", "forward" };
static const struct wr a_max_locks = { PA "max_locks", "1000" };
static const struct wr a_max_hold = { PA "max_hold_ms", "100000" };
static const struct wr host_lock = { PHOST "wake_lock", "fromcell" };
static const struct wr b_reads_a = { PA "wake_lock", "" };
static const struct wr a_policy_is_cap = { PA "policy", "cap" };

TEST_F(cells, lock_unlock_lists)
{
	char buf[256];

	EXPECT_EQ(1, read_raw(PA "wake_lock", buf, sizeof(buf)));
	EXPECT_STREQ("\n", buf);
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_own));
	EXPECT_EQ(0, pw(PA, "wake_lock", "beta\n"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "alpha 60000000000"));
	EXPECT_EQ(0, container_run(&self->a, try_read_is, (void *)&a_reads_three));
	ASSERT_LT(0, read_raw(PA "wake_lock", buf, sizeof(buf)));
	EXPECT_STREQ("alpha beta own\n", buf);
	EXPECT_EQ(0, pw(PA, "wake_unlock", "beta"));
	EXPECT_EQ(0, pw(PA, "wake_unlock", "own\n"));
	ASSERT_LT(0, read_raw(PA "wake_lock", buf, sizeof(buf)));
	EXPECT_STREQ("alpha\n", buf);
	ASSERT_LT(0, read_raw(PA "wake_unlock", buf, sizeof(buf)));
	EXPECT_STREQ("beta own\n", buf);
	EXPECT_EQ(1, pl(PA, "active_locks"));
	EXPECT_EQ(2, pl(PA, "wakeup_count"));
	/* Unlocking an inactive name is fine, an unknown one is not. */
	EXPECT_EQ(0, pw(PA, "wake_unlock", "beta"));
	EXPECT_EQ(-EINVAL, pw(PA, "wake_unlock", "gamma"));
	EXPECT_EQ(2, pl(PA, "wakeup_count"));
}

TEST_F(cells, bad_writes)
{
	char name[300];

	EXPECT_EQ(-EINVAL, pw(PA, "wake_lock", "\n"));
	EXPECT_EQ(-EINVAL, pw(PA, "wake_lock", " x"));
	EXPECT_EQ(-EINVAL, pw(PA, "wake_lock", "x y"));
	EXPECT_EQ(-EINVAL, pw(PA, "wake_lock", "x -5"));
	EXPECT_EQ(-EINVAL, pw(PA, "wake_unlock", "\n"));
	EXPECT_EQ(-EINVAL, pw(PA, "wake_unlock", "never"));
	memset(name, 'n', 256);
	name[256] = '\0';
	EXPECT_EQ(-ENAMETOOLONG, pw(PA, "wake_lock", name));
	name[255] = '\0';
	EXPECT_EQ(0, pw(PA, "wake_lock", name));
	EXPECT_EQ(0, pw(PA, "wake_unlock", name));
	EXPECT_EQ(-EINVAL, pw(PA, "policy", "none"));
	EXPECT_EQ(-EINVAL, pw(PA, "policy", "forward cap"));
	EXPECT_EQ(-EINVAL, pw(PA, "max_locks", "1025"));
	EXPECT_EQ(-EINVAL, pw(PA, "max_locks", "-1"));
	EXPECT_EQ(-EINVAL, pw(PA, "max_locks", "x"));
	EXPECT_EQ(-EINVAL, pw(PA, "max_hold_ms", "0"));
	EXPECT_EQ(-EINVAL, pw(PA, "max_hold_ms", "86400001"));
	EXPECT_EQ(-EINVAL, pw(PA, "autosleep", "on"));
	EXPECT_EQ(-EINVAL, pw(PA, "autosleep", "off "));
	EXPECT_EQ(-EINVAL, pw(PA, "wakeup_count", "x"));
	EXPECT_EQ(0, pl(PA, "active_locks"));
	EXPECT_STREQ("cap", ps(PA, "policy"));
}

/*
 * Up to 10 s for the cell's wakeup_count to reach @n: each lock that ends
 * counts one, so this is the sign that a timeout was acted on, where a
 * sleep would only give it the time to.
 */
static bool wakeups_reach(long n)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (pl(PA, "wakeup_count") >= n)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * The timeouts are seconds apart: a loaded, emulated guest can take a
 * second between two writes, and the checks must not depend on that.
 */
TEST_F(cells, timeouts)
{
	EXPECT_EQ(0, pw(PA, "wake_lock", "t1 2000000000"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "t2 2000000000"));
	/* Only ever later: t1 is kept 20 s; a lock without timeout is permanent. */
	EXPECT_EQ(0, pw(PA, "wake_lock", "t1 20000000000"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "t1 1000"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "t3 5000000000"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "t3"));
	EXPECT_STREQ("t1 t2 t3", ps(PA, "wake_lock"));
	/* t2 ends at 2 s. */
	EXPECT_TRUE(wakeups_reach(1));
	EXPECT_STREQ("t1 t3", ps(PA, "wake_lock"));
	EXPECT_STREQ("t2", ps(PA, "wake_unlock"));
	EXPECT_EQ(1, pl(PA, "wakeup_count"));
	EXPECT_LE(2000, pl(PA, "total_held_ms"));
	/* A permanent lock takes a timeout, as the kernel's does. */
	EXPECT_EQ(0, pw(PA, "wake_lock", "t3 1000000"));
	EXPECT_TRUE(wakeups_reach(2));
	EXPECT_STREQ("t1", ps(PA, "wake_lock"));
	EXPECT_EQ(2, pl(PA, "wakeup_count"));
}

TEST_F(cells, same_names_two_cells)
{
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_shared));
	EXPECT_EQ(0, container_run(&self->b, try_write, (void *)&b_lock_shared));
	EXPECT_EQ(0, pw(PHOST, "wake_lock", "shared"));
	EXPECT_STREQ("shared", ps(PA, "wake_lock"));
	EXPECT_STREQ("shared", ps(PB, "wake_lock"));
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_unlock_shared));
	EXPECT_STREQ("", ps(PA, "wake_lock"));
	EXPECT_STREQ("shared", ps(PB, "wake_lock"));
	EXPECT_STREQ("shared", ps(PHOST, "wake_lock"));
	EXPECT_EQ(0, pw(PHOST, "wake_unlock", "shared"));
	EXPECT_STREQ("shared", ps(PB, "wake_lock"));
	/* Never in the kernel's own list. */
	EXPECT_EQ(NULL, strstr(ps(SYS_POWER, "wake_lock"), "shared"));
}

static const struct wr b_unlock_a = { PA "wake_unlock", "own" };
static const struct wr b_lock_a = { PA "wake_lock", "fromb" };
static const struct wr b_state_a = { PA "state", "mem" };
static const struct wr b_policy_a = { PA "policy", "forward" };
static const struct wr b_count_a = { PA "wakeup_count", "0" };
static const struct wr b_autosleep_a = { PA "autosleep", "mem" };
static const struct wr b_reads_ready_a = { PA "suspend_ready", "0" };

TEST_F(cells, other_cell_cannot_touch)
{
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_own));
	EXPECT_EQ(EACCES, container_run(&self->b, try_write, (void *)&b_unlock_a));
	EXPECT_EQ(EACCES, container_run(&self->b, try_write, (void *)&b_lock_a));
	EXPECT_EQ(EACCES, container_run(&self->b, try_write, (void *)&b_state_a));
	EXPECT_EQ(EACCES, container_run(&self->b, try_write, (void *)&b_policy_a));
	EXPECT_EQ(EACCES, container_run(&self->b, try_write, (void *)&b_count_a));
	EXPECT_EQ(EACCES, container_run(&self->b, try_write, (void *)&b_autosleep_a));
	EXPECT_EQ(EACCES, container_run(&self->b, try_read_is, (void *)&b_reads_ready_a));
	EXPECT_EQ(EACCES, container_run(&self->b, try_read_is, (void *)&b_reads_a));
	/* Nor the host's. */
	EXPECT_EQ(EACCES, container_run(&self->b, try_write, (void *)&host_lock));
	EXPECT_EQ(EACCES, container_run(&self->a, try_write, (void *)&host_lock));
	EXPECT_STREQ("own", ps(PA, "wake_lock"));
	EXPECT_EQ(0, pl(PA, "suspend_ready"));
	EXPECT_STREQ("off", ps(PA, "autosleep"));
	EXPECT_STREQ("cap", ps(PA, "policy"));
	EXPECT_STREQ("", ps(PHOST, "wake_lock"));
}

TEST_F(cells, container_root_cannot_set_policy)
{
	/*
	 * Its root in a user namespace cannot even open them for writing
	 * (the host's root owns them); plain root in a container can, and
	 * the store refuses it.
	 */
	int err = variant->a_userns ? EACCES : EPERM;

	EXPECT_EQ(err, container_run(&self->a, try_write, (void *)&a_policy_fwd));
	EXPECT_EQ(err, container_run(&self->a, try_write, (void *)&a_max_locks));
	EXPECT_EQ(err, container_run(&self->a, try_write, (void *)&a_max_hold));
	EXPECT_STREQ("cap", ps(PA, "policy"));
	EXPECT_EQ(64, pl(PA, "max_locks"));
	EXPECT_EQ(60000, pl(PA, "max_hold_ms"));
	/* It may read them. */
	EXPECT_EQ(0, container_run(&self->a, try_read_is, (void *)&a_policy_is_cap));
	EXPECT_EQ(0, pw(PA, "policy", "deny\n"));
	EXPECT_STREQ("deny", ps(PA, "policy"));
}

/*
 * A cell's root cannot take over the host's limits: the host's files are
 * the host's root's, and the cell's root can neither chmod them nor open
 * them for writing. 0 if so, else
 * the step (and errno) that got through or failed otherwise.
 */
static int try_chmod_host_files(void *arg)
{
	char path[PATH_MAX];
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(host_files); i++) {
		snprintf(path, sizeof(path), "%s%s", (const char *)arg, host_files[i]);
		if (!chmod(path, 0666))
			return 10 + i;
		if (errno != EPERM)
			return 20 + i;
		if (!chown(path, 0, 0))
			return 30 + i;
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return 40 + i;
		}
		if (errno != EACCES)
			return 50 + i;
		/* It may still read them. */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 60 + i;
		close(fd);
	}
	return 0;
}

/*
 * What container B tries to read: file-scope and constant, since its task
 * was forked before the test ran and sees the data as it was then.
 */
static const struct wr b_reads_host_files[] = {
	{ PB "active_locks", "" }, { PB "total_held_ms", "" },
	{ PB "denials", "" }, { PB "caps", "" }, { PB "suspend_ready", "" },
	{ PB "suspend_ready_changed_ns", "" },
};

TEST_F(cells, host_files_owned_by_host)
{
	char path[PATH_MAX];
	struct stat st, own;
	unsigned int i;

	/* B always has a user namespace: its root is not the host's. */
	EXPECT_EQ(0, container_run(&self->b, try_chmod_host_files, PB));
	ASSERT_EQ(0, stat(PB "wake_lock", &own));
	for (i = 0; i < ARRAY_SIZE(host_files); i++) {
		snprintf(path, sizeof(path), PB "%s", host_files[i]);
		ASSERT_EQ(0, stat(path, &st));
		EXPECT_EQ(0, st.st_uid) TH_LOG("%s", path);
		EXPECT_EQ(0, st.st_gid) TH_LOG("%s", path);
		EXPECT_EQ(0644, st.st_mode & 07777) TH_LOG("%s", path);
	}
	/*
	 * What the host reads: the host root's, 0400, so that a container
	 * whose root maps to the same uid cannot open (or poll) them.
	 */
	for (i = 0; i < ARRAY_SIZE(b_reads_host_files); i++) {
		const char *rpath = b_reads_host_files[i].path;

		ASSERT_EQ(0, stat(rpath, &st));
		EXPECT_EQ(0, st.st_uid) TH_LOG("%s", rpath);
		EXPECT_EQ(0400, st.st_mode & 07777) TH_LOG("%s", rpath);
		EXPECT_EQ(EACCES, container_run(&self->b, try_read_is,
						(void *)&b_reads_host_files[i]))
			TH_LOG("%s", rpath);
	}
	/* The cell's own files stay its root's. */
	EXPECT_EQ(UID_B, own.st_uid);
	/* The host's root still sets them. */
	EXPECT_EQ(0, pw(PB, "policy", "forward"));
	EXPECT_EQ(0, pw(PB, "max_locks", "10"));
	EXPECT_EQ(0, pw(PB, "max_hold_ms", "5000"));
	EXPECT_STREQ("forward", ps(PB, "policy"));
	EXPECT_EQ(10, pl(PB, "max_locks"));
	EXPECT_EQ(5000, pl(PB, "max_hold_ms"));
}

/*
 * The store's own check: a user of the cell without CAP_BLOCK_SUSPEND, on
 * a file its root opened to everyone, as Android's init may.
 */
static int try_unprivileged_in_cell(void *arg)
{
	if (chmod(PA "wake_lock", 0666))
		return 90;
	if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
		return 91;
	return -write_file(arg, "nocap");
}

/*
 * The same permission rules as the kernel's, so Android's suspend service
 * works unchanged: state and wakeup_count need only the file's
 * permissions; wake_unlock needs CAP_BLOCK_SUSPEND like wake_lock.
 * 0 if so, else the step that went otherwise.
 */
static int try_vote_without_cap(void *arg)
{
	char count[32];

	(void)arg;
	if (chmod(PA "state", 0666) || chmod(PA "wakeup_count", 0666) ||
	    chmod(PA "wake_unlock", 0666))
		return 90;
	if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
		return 91;
	if (read_file(PA "wakeup_count", count, sizeof(count)))
		return 1;
	if (write_file(PA "wakeup_count", count))
		return 2;
	if (write_file(PA "state", "mem"))
		return 3;
	if (write_file(PA "wake_unlock", "held") != -EPERM)
		return 4;
	return 0;
}

TEST_F(cells, lock_needs_cap_block_suspend)
{
	EXPECT_EQ(EPERM, container_run(&self->a, try_unprivileged_in_cell, PA "wake_lock"));
	EXPECT_STREQ("", ps(PA, "wake_lock"));
	if (!feature("power_suspend"))
		SKIP(return, "no CONFIG_SUSPEND: no states");
	EXPECT_EQ(0, pw(PA, "wake_lock", "held"));
	EXPECT_EQ(0, pw(PA, "wake_unlock", "held"));
	EXPECT_EQ(0, container_run(&self->a, try_vote_without_cap, NULL));
	EXPECT_EQ(1, pl(PA, "suspend_ready"));
}

/* An unprivileged user, root of a user namespace of its own, on the host. */
static int try_unpriv_userns(const char *path, bool wr)
{
	char buf[64];
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(98);
		if (unshare(CLONE_NEWUSER))
			_exit(97);
		_exit(wr ? -write_file(path, "unpriv") : -read_file(path, buf, sizeof(buf)));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F(cells, unprivileged_userns)
{
	EXPECT_EQ(EACCES, try_unpriv_userns(PA "wake_lock", true));
	EXPECT_EQ(EACCES, try_unpriv_userns(PA "wake_unlock", true));
	EXPECT_EQ(EACCES, try_unpriv_userns(PA "state", true));
	EXPECT_EQ(EACCES, try_unpriv_userns(PA "policy", true));
	EXPECT_EQ(EACCES, try_unpriv_userns(PA "wakeup_count", true));
	EXPECT_EQ(EACCES, try_unpriv_userns(PA "autosleep", true));
	EXPECT_EQ(EACCES, try_unpriv_userns(PHOST "wake_lock", true));
	EXPECT_EQ(EACCES, try_unpriv_userns(PA "wake_lock", false));
	EXPECT_EQ(EACCES, try_unpriv_userns(PA "suspend_ready", false));
	EXPECT_STREQ("", ps(PA, "wake_lock"));
	EXPECT_STREQ("", ps(PHOST, "wake_lock"));
}

TEST_F(cells, policy_forward)
{
	struct ws ws;

	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	ASSERT_EQ(0, pw(PA, "policy", "forward"));
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_own));
	ws = ws_get("cask:" CELL_A ":own");
	ASSERT_TRUE(ws.found);
	EXPECT_EQ(1, ws.active_count);
	EXPECT_TRUE(ws_active("cask:" CELL_A ":own"));
	EXPECT_EQ(0, pw(PA, "wake_unlock", "own"));
	EXPECT_FALSE(ws_active("cask:" CELL_A ":own"));
	/* Kept while the name is, like the kernel's wakelocks. */
	EXPECT_TRUE(ws_get("cask:" CELL_A ":own").found);
	EXPECT_EQ(0, ws_count("cask:" CELL_B ":"));
	EXPECT_EQ(0, pl(PA, "denials"));
	EXPECT_EQ(NULL, strstr(ps(SYS_POWER, "wake_lock"), "own"));
}

TEST_F(cells, policy_deny)
{
	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	ASSERT_EQ(0, pw(PA, "policy", "deny"));
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_own));
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_own));
	EXPECT_EQ(0, ws_count("cask:" CELL_A ":"));
	EXPECT_STREQ("own", ps(PA, "wake_lock"));
	EXPECT_EQ(2, pl(PA, "denials"));
	EXPECT_EQ(1, pl(PA, "active_locks"));
}

/* Wait up to 3 s for @name to be released (the expire work may lag). */
static bool ws_released(const char *name)
{
	int i;

	for (i = 0; i < 100; i++)
		if (!ws_active(name))
			return true;
	return false;
}

/*
 * The cap cannot be dodged: a budget for the whole cell, over all its names
 * and activations: neither relocking, unlocking and locking again, nor a
 * new name renews it. The host's root renews it by writing max_hold_ms
 * (and a completed host suspend does, which a test cannot make here).
 */
TEST_F(cells, policy_cap)
{
	static const struct wr a_unlock_own = { PA "wake_unlock", "own" };
	static const struct wr a_lock_other = { PA "wake_lock", "other" };
	int i;

	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	/* Long enough that the hold is seen before a slow guest spends it. */
	ASSERT_EQ(0, pw(PA, "max_hold_ms", "3000"));
	EXPECT_STREQ("cap", ps(PA, "policy"));
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_own));
	EXPECT_TRUE(ws_active("cask:" CELL_A ":own"));
	/* Spent at 3 s: the cap counts it. */
	for (i = 0; i < 1000 && pl(PA, "caps") < 1; i++)
		usleep(10000);
	/* The host goes free; the cell still holds its lock. */
	EXPECT_TRUE(ws_released("cask:" CELL_A ":own"));
	EXPECT_STREQ("own", ps(PA, "wake_lock"));
	EXPECT_EQ(1, pl(PA, "caps"));
	/* Writing the lock again does not renew the budget... */
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_own));
	EXPECT_FALSE(ws_active("cask:" CELL_A ":own"));
	/* ...nor does a new activation... */
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_unlock_own));
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_own));
	EXPECT_FALSE(ws_active("cask:" CELL_A ":own"));
	/* ...nor another name. */
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_other));
	EXPECT_FALSE(ws_active("cask:" CELL_A ":other"));
	EXPECT_STREQ("other own", ps(PA, "wake_lock"));
	EXPECT_EQ(1, pl(PA, "caps"));
	/* Another cell's budget is its own. */
	EXPECT_EQ(0, pw(PB, "wake_lock", "own"));
	EXPECT_TRUE(ws_active("cask:" CELL_B ":own"));
	/* The host's root renews it. */
	EXPECT_EQ(0, pw(PA, "max_hold_ms", "60000"));
	EXPECT_TRUE(ws_active("cask:" CELL_A ":own"));
	EXPECT_TRUE(ws_active("cask:" CELL_A ":other"));
	/* A budget already used up ends the hold at once. */
	EXPECT_EQ(0, pw(PA, "max_hold_ms", "1"));
	EXPECT_TRUE(ws_released("cask:" CELL_A ":own"));
	EXPECT_TRUE(ws_released("cask:" CELL_A ":other"));
	EXPECT_EQ(2, pl(PA, "caps"));
}

static long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000L + (b->tv_nsec - a->tv_nsec) / 1000000;
}

/*
 * The budget is spent over names in turn: n1 uses about 800 ms of 4000
 * and its release's grace 1000 more, n2 gets what is left, at most
 * 4000 - 1000 - the time n1 was seen held; with a budget per name (or
 * per activation) it would get 4000. The hold is measured, not assumed:
 * a loaded guest may sleep much longer than 800 ms.
 */
TEST_F(cells, policy_cap_budget_spans_names)
{
	struct timespec t0, t1;
	long held, left;
	int i;

	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	ASSERT_EQ(0, pw(PA, "max_hold_ms", "4000"));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(0, pw(PA, "wake_lock", "n1"));
	usleep(800000);
	EXPECT_EQ(0, pw(PA, "wake_unlock", "n1"));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	held = ms_between(&t0, &t1);
	ASSERT_GT(2500, held) TH_LOG("n1 held %ld ms: too slow to tell", held);
	EXPECT_EQ(0, pl(PA, "caps"));
	/* The release's grace (1000 ms, power.rst) is charged too: let it end. */
	usleep(1100000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(0, pw(PA, "wake_lock", "n2"));
	/* Released when the budget is used up: the cap counts it. */
	for (i = 0; i < 1000 && pl(PA, "caps") < 1; i++)
		usleep(10000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	left = ms_between(&t0, &t1);
	EXPECT_EQ(1, pl(PA, "caps"));
	EXPECT_FALSE(ws_active("cask:" CELL_A ":n2"));
	EXPECT_GT(4000 - 500, left) TH_LOG("n2 held %ld ms after n1's %ld", left, held);
	TH_LOG("n1 held %ld ms, n2 %ld ms of the 4000", held, left);
	EXPECT_STREQ("n2", ps(PA, "wake_lock"));
}

/* Read /sys/power/wakeup_count, which waits while events are in progress. */
static void on_alarm(int sig)
{
	(void)sig;
}

static long sys_wakeup_count(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	long n;

	sigaction(SIGALRM, &sa, NULL);
	alarm(5);
	n = read_long(SYS_POWER "wakeup_count");
	alarm(0);
	return n;
}

/*
 * Issue 21 item 12: each lock and unlock is a wakeup event, which aborts
 * a host suspend; under the cap, pulsing costs what holding would. A
 * pulsing cell runs out of its budget within the budget's time, and from
 * then on its pulses are no wakeup events: /sys/power/wakeup_count stays
 * and a write of the value read succeeds (a suspend would go ahead).
 */
TEST_F(cells, policy_cap_pulses)
{
	struct timespec t0, t1;
	long count, ms;
	char val[32];
	int i;

	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	ASSERT_EQ(0, pw(PA, "max_hold_ms", "1500"));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 400 && pl(PA, "caps") < 1; i++) {
		ASSERT_EQ(0, pw(PA, "wake_lock", "pulse"));
		ASSERT_EQ(0, pw(PA, "wake_unlock", "pulse"));
		usleep(10000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	EXPECT_EQ(1, pl(PA, "caps"));
	EXPECT_GE(2500, ms) TH_LOG("%d pulses took %ld ms to spend 1500 ms", i, ms);
	EXPECT_TRUE(ws_released("cask:" CELL_A ":pulse"));
	count = sys_wakeup_count();
	ASSERT_LE(0, count);
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, pw(PA, "wake_lock", "pulse"));
		ASSERT_EQ(0, pw(PA, "wake_unlock", "pulse"));
	}
	EXPECT_EQ(count, sys_wakeup_count());
	snprintf(val, sizeof(val), "%ld", count);
	EXPECT_EQ(0, write_file(SYS_POWER "wakeup_count", val));
}

#define BLOCKERS	CASK "/power/suspend_blockers"

/* Whether suspend_blockers lists @name; -1 if it cannot be read. */
static int blocker_listed(const char *name, long *count)
{
	char buf[4096], *line, *save;

	if (read_raw(BLOCKERS, buf, sizeof(buf)) < 0)
		return -1;
	line = strtok_r(buf, "\n", &save);
	if (!line)
		return -1;
	*count = atol(line);
	while ((line = strtok_r(NULL, "\n", &save)))
		if (!strcmp(line, name))
			return 1;
	return 0;
}

/*
 * With no cell blocking (the normal case) the file is the count and
 * nothing else: no stale kernel memory (it used to print a kmalloc buffer
 * never written). Cells of earlier tests may still be going: wait for the
 * count to drop to 0, then the text must be exactly "0\n".
 */
TEST_F(cells, suspend_blockers_none)
{
	char buf[4096];
	int i, n = -1;

	ASSERT_EQ(0, pw(PA, "policy", "deny"));
	ASSERT_EQ(0, pw(PB, "policy", "deny"));
	for (i = 0; i < 50; i++) {
		n = read_raw(BLOCKERS, buf, sizeof(buf));
		ASSERT_LT(0, n);
		if (!strncmp(buf, "0\n", 2))
			break;
		usleep(100000);
	}
	EXPECT_STREQ("0\n", buf);
	EXPECT_EQ(2, n);
}

/* Make an auto cell, tell its name on @up, keep it until killed. */
static int make_auto_cell(int up)
{
	char buf[64];

	if (unshare(CLONE_NEWIPC))
		return 100;
	if (read_file(CASK "/self", buf, sizeof(buf)))
		return 101;
	buf[strcspn(buf, "\n")] = '\0';
	if (write(up, buf, strlen(buf) + 1) < 0)
		return 102;
	/* Keep it, voting nothing, until the parent has looked. */
	pause();
	return 0;
}

/*
 * Issue 21 item 13: only cells whose policy lets them keep the host awake
 * block a suspend by not voting; a deny cell, and an auto cell (deny
 * until the host's root opts it in), never do.
 */
TEST_F(cells, suspend_blockers)
{
	char self_name[64], path[PATH_MAX];
	static const struct wr a_reads_blockers = { BLOCKERS, "" };
	long n = -1;
	int up[2], ret;
	pid_t pid;

	ASSERT_EQ(1, blocker_listed(CELL_A, &n));
	EXPECT_EQ(1, blocker_listed(CELL_B, &n));
	EXPECT_EQ(0, blocker_listed("host", &n));
	/* A votes (for longer than the test): no longer blocking. */
	EXPECT_EQ(0, pw(PA, "vote_lease_ms", "3600000"));
	EXPECT_EQ(0, pw(PA, "state", "mem"));
	EXPECT_EQ(0, blocker_listed(CELL_A, &n));
	/* B denied: its missing vote keeps nothing awake. */
	EXPECT_EQ(0, pw(PB, "policy", "deny"));
	EXPECT_EQ(0, blocker_listed(CELL_B, &n));
	EXPECT_EQ(0, pw(PB, "policy", "cap"));
	EXPECT_EQ(1, blocker_listed(CELL_B, &n));

	/* An auto cell voting nothing: not a blocker. */
	ASSERT_EQ(0, pipe(up));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(up[0]);
		_exit(make_auto_cell(up[1]));
	}
	close(up[1]);
	memset(self_name, 0, sizeof(self_name));
	ASSERT_LT(0, read(up[0], self_name, sizeof(self_name) - 1));
	close(up[0]);
	ASSERT_TRUE(cell_exists(self_name)) TH_LOG("%s", self_name);
	snprintf(path, sizeof(path), CELLS "%s/power/suspend_ready", self_name);
	EXPECT_EQ(0, read_long(path));
	EXPECT_EQ(0, blocker_listed(self_name, &n));
	/* Opted in by the host's root, it counts. */
	snprintf(path, sizeof(path), CELLS "%s/power/", self_name);
	EXPECT_EQ(0, pw(path, "policy", "forward"));
	EXPECT_EQ(1, blocker_listed(self_name, &n));
	EXPECT_LE(2, n);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* The host's file: a container's root cannot read it. */
	ret = container_run(&self->a, try_read_is, (void *)&a_reads_blockers);
	EXPECT_TRUE(ret == EPERM || ret == EACCES) TH_LOG("container read: %d", ret);
}

TEST_F(cells, policy_changes_apply_to_held_locks)
{
	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	ASSERT_EQ(0, pw(PA, "policy", "forward"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "p1"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "p2"));
	EXPECT_EQ(0, pw(PA, "wake_unlock", "p2"));
	EXPECT_EQ(2, ws_count("cask:" CELL_A ":"));
	EXPECT_EQ(0, pw(PA, "policy", "deny"));
	EXPECT_EQ(0, ws_count("cask:" CELL_A ":"));
	EXPECT_STREQ("p1", ps(PA, "wake_lock"));
	EXPECT_EQ(0, pw(PA, "policy", "forward"));
	EXPECT_EQ(2, ws_count("cask:" CELL_A ":"));
	EXPECT_TRUE(ws_active("cask:" CELL_A ":p1"));
	EXPECT_FALSE(ws_active("cask:" CELL_A ":p2"));
}

TEST_F(cells, max_locks)
{
	EXPECT_EQ(0, pw(PA, "max_locks", "3"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "m1"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "m2"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "m3"));
	EXPECT_EQ(-ENOSPC, pw(PA, "wake_lock", "m4"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "m3 100000000000"));
	/* An inactive name gives way to a new one. */
	EXPECT_EQ(0, pw(PA, "wake_unlock", "m2"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "m4"));
	EXPECT_STREQ("m1 m3 m4", ps(PA, "wake_lock"));
	EXPECT_STREQ("", ps(PA, "wake_unlock"));
	EXPECT_EQ(-EINVAL, pw(PA, "wake_unlock", "m2"));
	/* Another cell's limit is its own. */
	EXPECT_EQ(0, pw(PB, "wake_lock", "m1"));
	EXPECT_EQ(0, pw(PB, "wake_lock", "m5"));
	EXPECT_EQ(0, pw(PB, "wake_lock", "m6"));
	EXPECT_EQ(0, pw(PB, "wake_lock", "m7"));
	EXPECT_EQ(0, pw(PA, "max_locks", "0"));
	EXPECT_EQ(-ENOSPC, pw(PA, "wake_lock", "m8"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "m1"));
}

/* Time asleep: CLOCK_BOOTTIME runs on in suspend, CLOCK_MONOTONIC not. */
static long long suspended_ns(void)
{
	struct timespec b, m;

	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return (b.tv_sec - m.tv_sec) * 1000000000LL + (b.tv_nsec - m.tv_nsec);
}

TEST_F(cells, state_votes_and_never_suspends)
{
	long success, fail;
	long long asleep;
	struct timespec now;
	char buf[64];

	if (!feature("power_suspend"))
		SKIP(return, "no CONFIG_SUSPEND: no states");
	ASSERT_LT(0, read_raw(PA "state", buf, sizeof(buf)));
	EXPECT_STREQ("freeze mem\n", buf);
	success = read_long(SYS_POWER "suspend_stats/success");
	fail = read_long(SYS_POWER "suspend_stats/fail");
	asleep = suspended_ns();
	EXPECT_EQ(0, pl(PA, "suspend_ready"));
	EXPECT_EQ(0, pl(PA, "suspend_ready_changed_ns"));
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_state_mem));
	EXPECT_EQ(1, pl(PA, "suspend_ready"));
	clock_gettime(CLOCK_BOOTTIME, &now);
	EXPECT_LT(0, pl(PA, "suspend_ready_changed_ns"));
	EXPECT_GE(now.tv_sec * 1000000000LL + now.tv_nsec, pl(PA, "suspend_ready_changed_ns"));
	EXPECT_EQ(0, pl(PB, "suspend_ready"));
	EXPECT_EQ(0, pl(PHOST, "suspend_ready"));
	/* Nothing was suspended, nor tried. */
	EXPECT_EQ(success, read_long(SYS_POWER "suspend_stats/success"));
	EXPECT_EQ(fail, read_long(SYS_POWER "suspend_stats/fail"));
	EXPECT_GT(50000000LL, suspended_ns() - asleep);
	/* Only what /sys/power/state would take. */
	EXPECT_EQ(-EINVAL, pw(PB, "state", "disk"));
	EXPECT_EQ(-EINVAL, pw(PB, "state", "standby"));
	EXPECT_EQ(-EINVAL, pw(PB, "state", "memx"));
	EXPECT_EQ(-EINVAL, pw(PB, "state", "mem "));
	EXPECT_EQ(0, pl(PB, "suspend_ready"));
	EXPECT_EQ(0, pw(PB, "state", "freeze\n"));
	EXPECT_EQ(1, pl(PB, "suspend_ready"));
	/* A lock withdraws the vote. */
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_own));
	EXPECT_EQ(0, pl(PA, "suspend_ready"));
}

/*
 * A vote is a lease. Android's suspend service writes state
 * over and over while the container is idle; once it stops, the vote
 * must lapse rather than stand for ever.
 */
TEST_F(cells, vote_is_a_lease)
{
	static const struct wr a_lease = { PA "vote_lease_ms", "100" };
	struct timespec t0, t1;
	long long ms;
	int i;

	if (!feature("power_suspend"))
		SKIP(return, "no CONFIG_SUSPEND: no states");
	EXPECT_EQ(5000, pl(PA, "vote_lease_ms"));
	/* The host's to set: the cell's root may not. */
	EXPECT_NE(0, container_run(&self->a, try_write, (void *)&a_lease));
	EXPECT_EQ(5000, pl(PA, "vote_lease_ms"));
	EXPECT_EQ(-EINVAL, pw(PA, "vote_lease_ms", "0"));
	EXPECT_EQ(-EINVAL, pw(PA, "vote_lease_ms", "3600001"));
	ASSERT_EQ(0, pw(PA, "vote_lease_ms", "400"));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_state_mem));
	EXPECT_EQ(1, pl(PA, "suspend_ready"));
	for (i = 0; i < 100 && pl(PA, "suspend_ready") == 1; i++)
		usleep(20000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_EQ(0, pl(PA, "suspend_ready"));
	ms = (t1.tv_sec - t0.tv_sec) * 1000LL + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	EXPECT_LE(400, ms);
	/*
	 * Renewed by each write: it stands while they come, 4 s of writes
	 * 400 ms apart against a lease of 3 s (2.6 s of slack for a slow,
	 * loaded guest between two writes).
	 */
	ASSERT_EQ(0, pw(PA, "vote_lease_ms", "3000"));
	for (i = 0; i < 10; i++) {
		EXPECT_EQ(0, pw(PA, "state", "mem"));
		usleep(400000);
		EXPECT_EQ(1, pl(PA, "suspend_ready"));
	}
	/* Another cell's vote has a lease of its own. */
	EXPECT_EQ(5000, pl(PB, "vote_lease_ms"));
}

TEST_F(cells, wakeup_count_protocol)
{
	char count[32];

	if (!feature("power_suspend"))
		SKIP(return, "no CONFIG_SUSPEND: no states");
	ASSERT_EQ(0, read_file(PA "wakeup_count", count, sizeof(count)));
	EXPECT_STREQ("0", count);
	EXPECT_EQ(0, pw(PA, "wakeup_count", count));
	/* An event between the count and the vote: an aborted suspend. */
	EXPECT_EQ(0, pw(PA, "wake_lock", "w"));
	EXPECT_EQ(0, pw(PA, "wake_unlock", "w"));
	EXPECT_EQ(-EBUSY, pw(PA, "state", "mem"));
	EXPECT_EQ(0, pl(PA, "suspend_ready"));
	/* A stale count is refused; so is any while a lock is active. */
	EXPECT_EQ(-EINVAL, pw(PA, "wakeup_count", count));
	ASSERT_EQ(0, read_file(PA "wakeup_count", count, sizeof(count)));
	EXPECT_STREQ("1", count);
	EXPECT_EQ(0, pw(PA, "wake_lock", "w"));
	EXPECT_EQ(-EINVAL, pw(PA, "wakeup_count", count));
	EXPECT_EQ(0, pw(PA, "wake_unlock", "w"));
	ASSERT_EQ(0, read_file(PA "wakeup_count", count, sizeof(count)));
	EXPECT_EQ(0, pw(PA, "wakeup_count", count));
	EXPECT_EQ(0, pw(PA, "state", "mem"));
	EXPECT_EQ(1, pl(PA, "suspend_ready"));
	/* A write that holds no number disarms nothing, as the kernel's. */
	ASSERT_EQ(0, read_file(PA "wakeup_count", count, sizeof(count)));
	EXPECT_EQ(0, pw(PA, "wakeup_count", count));
	EXPECT_EQ(-EINVAL, pw(PA, "wakeup_count", "x"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "w"));
	EXPECT_EQ(0, pw(PA, "wake_unlock", "w"));
	EXPECT_EQ(-EBUSY, pw(PA, "state", "mem"));
	/* Android's loop, again: read, write back, vote. */
	ASSERT_EQ(0, read_file(PA "wakeup_count", count, sizeof(count)));
	EXPECT_EQ(0, pw(PA, "wakeup_count", count));
	EXPECT_EQ(0, pw(PA, "state", "mem"));
	EXPECT_EQ(1, pl(PA, "suspend_ready"));
}

TEST_F(cells, autosleep)
{
	char buf[32];

	if (!feature("power_suspend"))
		SKIP(return, "no CONFIG_SUSPEND: no states");
	ASSERT_LT(0, read_raw(PA "autosleep", buf, sizeof(buf)));
	EXPECT_STREQ("off\n", buf);
	EXPECT_EQ(0, pw(PA, "wake_lock", "busy"));
	EXPECT_EQ(0, pw(PA, "autosleep", "mem\n"));
	EXPECT_STREQ("mem", ps(PA, "autosleep"));
	EXPECT_EQ(0, pl(PA, "suspend_ready"));
	EXPECT_EQ(0, pw(PA, "wake_unlock", "busy"));
	EXPECT_EQ(1, pl(PA, "suspend_ready"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "busy"));
	EXPECT_EQ(0, pl(PA, "suspend_ready"));
	EXPECT_EQ(0, pw(PA, "wake_unlock", "busy"));
	EXPECT_EQ(1, pl(PA, "suspend_ready"));
	/* While it is on, the kernel refuses state and wakeup_count writes. */
	EXPECT_EQ(-EBUSY, pw(PA, "state", "mem"));
	EXPECT_EQ(-EBUSY, pw(PA, "wakeup_count", "2"));
	EXPECT_EQ(0, pw(PA, "autosleep", "off"));
	EXPECT_EQ(0, pl(PA, "suspend_ready"));
	EXPECT_EQ(0, pw(PA, "wakeup_count", "2"));
	EXPECT_EQ(0, pl(PB, "suspend_ready"));
}

/* Wait for sysfs_notify() on an open, read file: 1 woken, 0 timed out. */
static int wait_notify(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLPRI };
	int n = poll(&pfd, 1, ms);

	return n == 1 && (pfd.revents & (POLLPRI | POLLERR)) ? 1 : n;
}

static int reread(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

TEST_F(cells, poll_suspend_ready)
{
	char buf[16];
	pid_t pid;
	int fd;

	if (!feature("power_suspend"))
		SKIP(return, "no CONFIG_SUSPEND: no states");
	fd = open(PA "suspend_ready", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, reread(fd, buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
	EXPECT_EQ(0, wait_notify(fd, 100));
	/* The cell votes a little later: the poller wakes. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		usleep(200000);
		_exit(container_run(&self->a, try_write, (void *)&a_state_mem));
	}
	EXPECT_EQ(1, wait_notify(fd, 10000));
	ASSERT_EQ(0, reread(fd, buf, sizeof(buf)));
	EXPECT_STREQ("1\n", buf);
	EXPECT_EQ(0, child_status(pid));
	/* No change, no wakeup: a second vote, another cell's lock. */
	EXPECT_EQ(0, pw(PA, "state", "mem"));
	EXPECT_EQ(0, pw(PB, "wake_lock", "b"));
	EXPECT_EQ(0, wait_notify(fd, 100));
	/* Autosleep: a timed lock that ends by itself brings the vote back. */
	EXPECT_EQ(0, pw(PA, "autosleep", "mem"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "t 300000000"));
	EXPECT_EQ(1, wait_notify(fd, 1000));
	ASSERT_EQ(0, reread(fd, buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
	EXPECT_EQ(1, wait_notify(fd, 10000));
	ASSERT_EQ(0, reread(fd, buf, sizeof(buf)));
	EXPECT_STREQ("1\n", buf);
	close(fd);
}

/*
 * A cap cell delays a suspend by at most its budget. Once
 * the budget is spent (here at once: an unlock charges the grace) its
 * missing vote holds nothing, so it is no blocker; B, budget unspent, is.
 * A budget that runs out while held wakes suspend_ready's pollers, so
 * that a power manager waiting there (power.rst) looks at the list again.
 */
TEST_F(cells, suspend_blockers_spent_cap)
{
	char buf[16];
	long n = -1;
	int fd;

	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	ASSERT_EQ(1, blocker_listed(CELL_A, &n));
	ASSERT_EQ(0, pw(PA, "max_hold_ms", "50"));
	ASSERT_EQ(0, pw(PA, "wake_lock", "spend"));
	ASSERT_EQ(0, pw(PA, "wake_unlock", "spend"));
	EXPECT_EQ(1, pl(PA, "caps"));
	EXPECT_EQ(0, pl(PA, "suspend_ready"));
	EXPECT_EQ(0, blocker_listed(CELL_A, &n));
	EXPECT_EQ(1, blocker_listed(CELL_B, &n));
	/* A renewed budget makes it a blocker again. */
	ASSERT_EQ(0, pw(PA, "max_hold_ms", "60000"));
	EXPECT_EQ(1, blocker_listed(CELL_A, &n));
	fd = open(PA "suspend_ready", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, reread(fd, buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
	ASSERT_EQ(0, pw(PA, "max_hold_ms", "300"));
	ASSERT_EQ(0, pw(PA, "wake_lock", "hold"));
	EXPECT_EQ(1, wait_notify(fd, 10000));
	ASSERT_EQ(0, reread(fd, buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
	EXPECT_EQ(2, pl(PA, "caps"));
	EXPECT_EQ(0, blocker_listed(CELL_A, &n));
	close(fd);
}

/*
 * Issue 21: a cell that flips its vote as fast as it can must not wake the
 * host's poller as often: the notifications are coalesced, at most one per
 * 10 ms (CPOWER_NOTIFY_DELAY_MS), and the poller still sees the last vote.
 */
TEST_F(cells, poll_suspend_ready_coalesced)
{
	struct timespec t0, t;
	int fd, wakes = 0, *flips, status = 0;
	long ms = 0, done_ms = 0;
	bool done = false;
	char buf[16];
	pid_t pid;

	if (!feature("power_suspend"))
		SKIP(return, "no CONFIG_SUSPEND: no states");
	flips = shared_alloc(sizeof(int));
	ASSERT_NE(NULL, flips);
	fd = open(PA "suspend_ready", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, reread(fd, buf, sizeof(buf)));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Open once: each flip is then a write, as fast as can be. */
		int st = open(PA "state", O_WRONLY | O_CLOEXEC);
		int lk = open(PA "wake_lock", O_WRONLY | O_CLOEXEC);
		int ul = open(PA "wake_unlock", O_WRONLY | O_CLOEXEC);

		if (st < 0 || lk < 0 || ul < 0)
			_exit(2);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		/*
		 * At least a second and 200 flips: a slow guest (TCG, a
		 * loaded host) takes longer for them rather than failing,
		 * up to 10 s.
		 */
		do {
			if (write(st, "mem", 3) != 3 || write(lk, "f", 1) != 1 ||
			    write(ul, "f", 1) != 1)
				_exit(1);
			__atomic_add_fetch(flips, 2, __ATOMIC_RELAXED);
			clock_gettime(CLOCK_MONOTONIC, &t);
			ms = (t.tv_sec - t0.tv_sec) * 1000 +
			     (t.tv_nsec - t0.tv_nsec) / 1000000;
		} while ((ms < 1000 || *flips < 200) && ms < 10000);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Poll while the child flips, and 300 ms after it is done. */
	while (!done || ms < done_ms + 300) {
		if (wait_notify(fd, 100) == 1) {
			wakes++;
			ASSERT_EQ(0, reread(fd, buf, sizeof(buf)));
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (!done && waitpid(pid, &status, WNOHANG) == pid) {
			done = true;
			done_ms = ms;
		}
		ASSERT_GT(15000, ms);
	}
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	TH_LOG("%d flips, %d wakeups in %ld ms", *flips, wakes, ms);
	EXPECT_LE(200, *flips);
	EXPECT_LT(0, wakes);
	/* At most one per 10 ms, and a few more for the edges. */
	EXPECT_GE(ms / 10 + 10, wakes);
	/* The last vote is what the poller reads. */
	usleep(100000);
	ASSERT_EQ(0, reread(fd, buf, sizeof(buf)));
	EXPECT_EQ(pl(PA, "suspend_ready"), atol(buf));
	close(fd);
	shared_free(flips, sizeof(int));
}

/* The runtime's way in: the cell's files over the container's /sys/power. */
static int try_bind_mounted(void *arg)
{
	static const char * const files[] = {
		"wake_lock", "wake_unlock", "state", "wakeup_count", "autosleep",
	};
	char src[PATH_MAX], dst[PATH_MAX], buf[4096], count[32];
	bool made = false;
	unsigned int i;
	int fd;

	(void)arg;
	/* As a runtime does: nothing of ours propagates to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 99;
	/*
	 * A kernel without PM_WAKELOCKS (Debian's) has no wake_lock to
	 * cover: a tmpfs over /sys/power gives the files to bind onto.
	 */
	if (access(SYS_POWER "wake_lock", F_OK)) {
		if (mount("tmpfs", SYS_POWER, "tmpfs", 0, "mode=0755"))
			return 98;
		made = true;
	}
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(src, sizeof(src), PA "%s", files[i]);
		snprintf(dst, sizeof(dst), SYS_POWER "%s", files[i]);
		if (made) {
			fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd < 0)
				return 97;
			close(fd);
		}
		/* A kernel without PM_AUTOSLEEP has no file to cover. */
		if (access(dst, F_OK))
			continue;
		if (mount(src, dst, NULL, MS_BIND, NULL))
			return 100 + i;
	}
	/* What Android's suspend service and its clients do. */
	if (write_file(SYS_POWER "wake_lock", "PowerManagerService.Display") ||
	    read_file(SYS_POWER "wake_lock", buf, sizeof(buf)) ||
	    strcmp(buf, "PowerManagerService.Display"))
		return 110;
	if (write_file(SYS_POWER "wake_unlock", "PowerManagerService.Display\n"))
		return 111;
	if (read_file(SYS_POWER "wakeup_count", count, sizeof(count)) ||
	    write_file(SYS_POWER "wakeup_count", count))
		return 112;
	if (read_file(SYS_POWER "state", buf, sizeof(buf)) || strcmp(buf, "freeze mem"))
		return 113;
	if (write_file(SYS_POWER "state", "mem"))
		return 114;
	return 0;
}

TEST_F(cells, bind_mounted_over_sys_power)
{
	bool host_locks = !access(SYS_POWER "wake_lock", F_OK);

	if (!feature("power_suspend"))
		SKIP(return, "no CONFIG_SUSPEND: no states");
	EXPECT_EQ(0, container_run(&self->a, try_bind_mounted, NULL));
	EXPECT_STREQ("PowerManagerService.Display", ps(PA, "wake_unlock"));
	EXPECT_EQ(1, pl(PA, "suspend_ready"));
	EXPECT_EQ(1, pl(PA, "wakeup_count"));
	/* The host's files were not touched, nor made. */
	if (host_locks) {
		EXPECT_EQ(NULL, strstr(ps(SYS_POWER, "wake_unlock"),
				       "PowerManagerService.Display"));
	} else {
		EXPECT_NE(0, access(SYS_POWER "wake_lock", F_OK));
	}
}

TEST_F(cells, stats)
{
	EXPECT_EQ(0, pl(PA, "active_locks"));
	EXPECT_EQ(0, pl(PA, "total_held_ms"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "s1"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "s2"));
	EXPECT_EQ(2, pl(PA, "active_locks"));
	usleep(200000);
	EXPECT_LE(400, pl(PA, "total_held_ms"));
	EXPECT_EQ(0, pw(PA, "wake_unlock", "s1"));
	EXPECT_EQ(1, pl(PA, "active_locks"));
	EXPECT_EQ(0, pw(PA, "policy", "deny"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "s1"));
	EXPECT_EQ(1, pl(PA, "denials"));
	EXPECT_EQ(0, pl(PB, "active_locks"));
	EXPECT_EQ(0, pl(PB, "denials"));
	EXPECT_EQ(0, pl(PB, "total_held_ms"));
}

TEST_F(cells, unregister_releases_everything)
{
	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	ASSERT_EQ(0, pw(PA, "policy", "forward"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "r1"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "r2 60000000000"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "r3"));
	EXPECT_EQ(0, pw(PA, "wake_unlock", "r3"));
	EXPECT_EQ(3, ws_count("cask:" CELL_A ":"));
	ASSERT_EQ(0, cask_unregister(CELL_A));
	ASSERT_TRUE(cell_gone(CELL_A));
	EXPECT_EQ(0, ws_wait_count("cask:" CELL_A ":", 0));
	/* A new cell of the name starts empty. */
	ASSERT_EQ(0, cask_register(CELL_A, self->a.init));
	EXPECT_STREQ("", ps(PA, "wake_lock"));
	EXPECT_STREQ("", ps(PA, "wake_unlock"));
	EXPECT_STREQ("deny", ps(PA, "policy"));
}

TEST_F(cells, container_exit_releases_everything)
{
	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	ASSERT_EQ(0, pw(PB, "policy", "forward"));
	EXPECT_EQ(0, pw(PB, "wake_lock", "e1"));
	EXPECT_EQ(0, pw(PB, "wake_lock", "e2"));
	EXPECT_EQ(2, ws_count("cask:" CELL_B ":"));
	/* Its IPC namespace ends with its last task. */
	container_stop(&self->b);
	EXPECT_TRUE(cell_gone(CELL_B));
	/* The cell's unlink follows the removal of its directory. */
	EXPECT_EQ(0, ws_wait_count("cask:" CELL_B ":", 0));
	EXPECT_TRUE(cell_exists(CELL_A));
}

TEST_F(cells, module_unload_releases_everything)
{
	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	if (access(MOD_DIR "/cask_power.ko", F_OK))
		SKIP(return, "no " MOD_DIR "/cask_power.ko to load again");
	ASSERT_EQ(0, pw(PA, "policy", "forward"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "u1"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "u2 60000000000"));
	EXPECT_EQ(0, pw(PHOST, "wake_lock", "u3"));
	EXPECT_EQ(2, ws_count("cask:" CELL_A ":"));
	ASSERT_EQ(0, syscall(SYS_delete_module, "cask_power", O_NONBLOCK));
	EXPECT_EQ(0, ws_count("cask:"));
	EXPECT_NE(0, access(PA "wake_lock", F_OK));
	ASSERT_EQ(0, cask_module_load("cask_power"));
	EXPECT_STREQ("", ps(PA, "wake_lock"));
	EXPECT_STREQ("", ps(PHOST, "wake_lock"));
}

/* ---- allocation failures ---- */

static int fault_n;
static char fault_locked[32];

/*
 * A new name each time, in a table of one: evicts, allocates, registers.
 * A name left locked by a failed unlock is unlocked first.
 */
static int lock_new_op(void *arg)
{
	char name[32];
	int ret;

	(void)arg;
	if (fault_locked[0]) {
		ret = -pw(PA, "wake_unlock", fault_locked);
		if (ret)
			return ret;
		fault_locked[0] = '\0';
	}
	snprintf(name, sizeof(name), "f%d", fault_n++);
	ret = -pw(PA, "wake_lock", name);
	if (ret)
		return ret;
	snprintf(fault_locked, sizeof(fault_locked), "%s", name);
	ret = -pw(PA, "wake_unlock", name);
	if (!ret)
		fault_locked[0] = '\0';
	return ret;
}

/* Leaving deny makes a source per name: all or none. */
static int policy_op(void *arg)
{
	int ret = -pw(PA, "policy", "forward");

	(void)arg;
	if (ret && (strcmp(ps(PA, "policy"), "deny") || ws_count("cask:" CELL_A ":")))
		return 255;
	if (!ret)
		ret = -pw(PA, "policy", "deny");
	return ret;
}

static int fault_run(struct __test_metadata *_metadata, int (*op)(void *))
{
	int fd, n, ret, failed = 0;
	bool done = false;

	fd = fail_nth_fd();
	if (fd < 0)
		return -1;
	for (n = 1; n <= MAX_NTH && !done; n++) {
		fail_nth_set(fd, n);
		ret = op(NULL);
		done = fail_nth_unused(fd);
		fail_nth_set(fd, 0);
		if (!ret)
			continue;
		failed++;
		EXPECT_EQ(ENOMEM, ret) TH_LOG("fail-nth %d: %d", n, ret);
		EXPECT_EQ(0, op(NULL)) TH_LOG("fail-nth %d: no recovery", n);
	}
	close(fd);
	EXPECT_TRUE(done);
	TH_LOG("%d of %d attempts failed cleanly", failed, n - 1);
	return failed;
}

TEST_F_TIMEOUT(cells, alloc_failures, 240)
{
	if (fault_missing())
		SKIP(return, "%s", fault_missing());
	ASSERT_EQ(0, fault_setup());
	ASSERT_EQ(0, pw(PA, "max_locks", "1"));
	ASSERT_EQ(0, pw(PA, "policy", "forward"));
	EXPECT_LT(0, fault_run(_metadata, lock_new_op));
	EXPECT_GE(1, ws_count("cask:" CELL_A ":"));
	ASSERT_EQ(0, pw(PA, "policy", "deny"));
	ASSERT_EQ(0, pw(PA, "max_locks", "3"));
	ASSERT_EQ(0, pw(PA, "wake_lock", "x1"));
	ASSERT_EQ(0, pw(PA, "wake_lock", "x2"));
	ASSERT_EQ(0, pw(PA, "wake_unlock", "x2"));
	EXPECT_LT(0, fault_run(_metadata, policy_op));
	EXPECT_EQ(0, pw(PA, "policy", "forward"));
	if (!sources_missing()) {
		EXPECT_TRUE(ws_active("cask:" CELL_A ":x1"));
		EXPECT_FALSE(ws_active("cask:" CELL_A ":x2"));
	}
}

/*
 * Any user may make a cell, by unsharing a user and an IPC namespace (an
 * auto cell), and is its root. Its locks must not hold the host awake:
 * /sys/power/wake_lock is only for CAP_BLOCK_SUSPEND in the host's user
 * namespace. Nor may a lock name's odd bytes reach the host's source list.
 */
TEST(unprivileged_auto_cell_never_holds_host)
{
	char cell[64] = "", prefix[128];
	int status, up[2], down[2];
	ssize_t n;
	pid_t pid;

	if (power_missing())
		SKIP(return, "%s", power_missing());
	ASSERT_EQ(0, pipe2(up, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(down, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char dir[PATH_MAX], c;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(90);
		/* setresuid() made us non-dumpable: /proc/self is root's. */
		if (prctl(PR_SET_DUMPABLE, 1))
			_exit(91);
		if (unshare(CLONE_NEWUSER | CLONE_NEWIPC))
			_exit(92);
		if (write_file("/proc/self/setgroups", "deny") ||
		    write_file("/proc/self/uid_map", "0 65534 1") ||
		    write_file("/proc/self/gid_map", "0 65534 1"))
			_exit(93);
		if (read_file(CASK "/self", cell, sizeof(cell)))
			_exit(94);
		cell[strcspn(cell, "\n")] = 0;
		snprintf(dir, sizeof(dir), CELLS "%s/power/", cell);
		if (strcmp(ps(dir, "policy"), "deny"))
			_exit(1);
		/* Its own root may lock, as in any container... */
		if (pw(dir, "wake_lock", "x"))
			_exit(2);
		if (strcmp(ps(dir, "wake_lock"), "x"))
			_exit(3);
		/* Nor may it let itself in: the host's root owns policy. */
		if (pw(dir, "policy", "forward") != -EACCES)
			_exit(5);
		if (pw(dir, "wake_lock", "a:host:\x1b[31mred\x01"))
			_exit(6);
		/* The host's counters are not the cell's to read. */
		if (pl(dir, "denials") != -1)
			_exit(7);
		/* ...but the host knows nothing of it: the parent looks. */
		if (write(up[1], cell, strlen(cell) + 1) < 0 || read(down[0], &c, 1) != 1)
			_exit(8);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	n = read(up[0], cell, sizeof(cell) - 1);
	if (n > 0) {
		snprintf(prefix, sizeof(prefix), CELLS "%s/power/", cell);
		EXPECT_EQ(2, pl(prefix, "denials"));
	}
	if (n > 0 && !sources_missing()) {
		snprintf(prefix, sizeof(prefix), "cask:%s:", cell);
		EXPECT_EQ(0, ws_count(prefix));
	}
	EXPECT_EQ(1, write(down[1], "x", 1));
	close(up[0]);
	close(down[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_LT(0, n);
}

/* The host's side: a forwarded name cannot forge its source list. */
TEST_F(cells, host_source_name_escaped)
{
	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	ASSERT_EQ(0, pw(PA, "policy", "forward"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "a:host:\x1b[31mred\x01"));
	EXPECT_TRUE(ws_active("cask:" CELL_A ":a?host??[31mred?"));
	EXPECT_EQ(1, ws_count("cask:" CELL_A ":"));
	/* The cell's own file lists it escaped: the host's root reads it too. */
	EXPECT_STREQ("a:host:\\033[31mred\\001", ps(PA, "wake_lock"));
	/* A literal backslash is escaped too: "a\\001" is not "a" and 0x01. */
	EXPECT_EQ(0, pw(PA, "wake_unlock", "a:host:\x1b[31mred\x01"));
	EXPECT_EQ(0, pw(PA, "wake_lock", "b\\001"));
	EXPECT_STREQ("b\\134001", ps(PA, "wake_lock"));
}

/*
 * A cell's lock names are the host's business. Forwarded, they
 * show in debugfs' wakeup_sources (the host's root) and nowhere in
 * /sys/class/wakeup, which any user of any container may read.
 */
static int class_wakeup_names_cask(void *arg)
{
	char path[PATH_MAX], buf[256];
	struct dirent *d;
	int found = 0;
	DIR *dir;

	(void)arg;
	dir = opendir(WAKEUP_CLASS);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), WAKEUP_CLASS "/%s/name", d->d_name);
		if (!read_file(path, buf, sizeof(buf)) && strstr(buf, "cask:"))
			found = 1;
	}
	closedir(dir);
	return found;
}

static int try_read_sources(void *arg)
{
	char buf[64];

	(void)arg;
	return -read_file(WAKEUP_SOURCES, buf, sizeof(buf));
}

TEST_F(cells, lock_names_hidden_from_others)
{
	int status;
	pid_t pid;

	if (sources_missing())
		SKIP(return, "%s", sources_missing());
	ASSERT_EQ(0, pw(PA, "policy", "forward"));
	EXPECT_EQ(0, container_run(&self->a, try_write, (void *)&a_lock_own));
	EXPECT_TRUE(ws_active("cask:" CELL_A ":own"));
	/* No device: not in the class, for the host's root either. */
	EXPECT_EQ(0, class_wakeup_names_cask(NULL));
	/* Another container sees neither the class entry nor debugfs. */
	EXPECT_EQ(0, container_run(&self->b, class_wakeup_names_cask, NULL));
	EXPECT_NE(0, container_run(&self->b, try_read_sources, NULL));
	/* Nor does an unprivileged user of the host. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(90);
		if (!try_read_sources(NULL))
			_exit(91);
		_exit(class_wakeup_names_cask(NULL));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
