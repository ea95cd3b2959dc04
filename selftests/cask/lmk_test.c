// SPDX-License-Identifier: GPL-2.0
/*
 * lowmemorykiller: the legacy params and /proc/lowmemorykiller of Android
 * kernels, per cell, and a killer that acts only inside its cell.
 *
 * The host tests check the params' format and errors. The "cells" fixture
 * runs two containers, A and B, each in its own cgroup with memory.max;
 * a hog grows in A past A's level while processes of several
 * oom_score_adj wait there: the killer must kill them in order (highest
 * adj, then largest RSS), never the hog below the level's adj, nor A's
 * init, nor anything in B or on the host, and A's memcg OOM killer must
 * never fire. The kills are A's events only. Params written from inside
 * A change A only; container roots change neither another cell nor the
 * host; with A's killer disabled the memcg OOM killer is in charge.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "cask_util.h"

#define PARAMS		"/sys/module/lowmemorykiller/parameters/"
#define REAP		PARAMS "reap"
#define EVENTS		"/proc/lowmemorykiller"
#define CELLS		CASK "/cells/"
#define CELL_A		"lmk-a"
#define CELL_B		"lmk-b"
#define CG_A		"cask-lmk-a"
#define CG_B		"cask-lmk-b"
#define UID_BASE	420000
#define MIB		(1024L * 1024)
#define TRACING		"/sys/kernel/tracing"

/* A's limit and its one level: kill from adj 200 below 32 MiB free. */
#define A_MAX_MIB	64
#define LEVEL_MINFREE	"8192"
#define LEVEL_ADJ	"200"

static const char *lmk_missing(void)
{
	if (cask_missing())
		return cask_missing();
	if (access(PARAMS "minfree", F_OK))
		return "lowmemorykiller is not loaded";
	return NULL;
}

static int lmk_path(char *path, size_t len, const char *cell, const char *file)
{
	return snprintf(path, len, CELLS "%s/lmk/%s", cell, file);
}

static int lmk_set(const char *cell, const char *file, const char *val)
{
	char path[PATH_MAX];

	lmk_path(path, sizeof(path), cell, file);
	return write_file(path, val);
}

static int lmk_get(const char *cell, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];

	lmk_path(path, sizeof(path), cell, file);
	return read_file(path, buf, len);
}

static long lmk_kills(const char *cell)
{
	char buf[64];

	if (lmk_get(cell, "kills", buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

/* A key's value in a cgroup's memory.events, or -1. */
static long memory_event(const char *cg, const char *key)
{
	char path[PATH_MAX], line[128];
	size_t klen = strlen(key);
	long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), CGROOT "/%s/memory.events", cg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			val = atol(line + klen + 1);
	fclose(f);
	return val;
}

static int cg_set(const char *cg, const char *file, const char *val)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), CGROOT "/%s/%s", cg, file);
	return write_file(path, val);
}

static int set_adj(pid_t pid, int adj)
{
	char path[64], buf[16];

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", pid);
	snprintf(buf, sizeof(buf), "%d", adj);
	return write_file(path, buf);
}

/* ---- the params, on the host ----------------------------------------------- */

TEST(interfaces)
{
	struct stat st;
	char buf[64];
	int fd;

	if (lmk_missing())
		SKIP(return, "%s", lmk_missing());
	ASSERT_EQ(0, stat(PARAMS "adj", &st));
	EXPECT_EQ(0644, st.st_mode & 07777);
	ASSERT_EQ(0, stat(PARAMS "minfree", &st));
	EXPECT_EQ(0644, st.st_mode & 07777);
	ASSERT_EQ(0, stat(EVENTS, &st));
	EXPECT_EQ(0444, st.st_mode & 07777);
	ASSERT_EQ(0, read_file(CASK "/features/lmk_reap", buf, sizeof(buf)));
	EXPECT_TRUE(!strcmp(buf, "0") || !strcmp(buf, "1"));
	TH_LOG("victims' memory %s", buf[0] == '1' ? "reaped (patches/0002)" :
	       "freed at their exit");
	ASSERT_EQ(0, access(CELLS "host/lmk/enabled", F_OK));
	ASSERT_EQ(0, read_file(CELLS "host/lmk/enabled", buf, sizeof(buf)));
	EXPECT_STREQ("1", buf);
	/* No kill in the host: an empty queue. */
	fd = open(EVENTS, O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	close(fd);
}

TEST(params_format)
{
	static const char * const bad[] = {
		"a\n", "1,,2\n", "1,2,3,4,5,6,7\n", "1001,2000\n", "-18,1\n",
		"100,12\n", " 1\n", "0x1\n",
	};
	char buf[128];
	unsigned int i;

	if (lmk_missing())
		SKIP(return, "%s", lmk_missing());
	/* Levels the host never reaches: 1 page free and 1 file page. */
	ASSERT_EQ(0, write_file(PARAMS "minfree", "1,1,1,1\n"));
	ASSERT_EQ(0, write_file(PARAMS "adj", "0,1,6,12\n"));
	ASSERT_EQ(0, read_file(PARAMS "adj", buf, sizeof(buf)));
	EXPECT_STREQ("0,58,352,705", buf);
	ASSERT_EQ(0, read_file(CELLS "host/lmk/adj", buf, sizeof(buf)));
	EXPECT_STREQ("0,58,352,705", buf);
	/* 16 and up: scores, as they are. */
	ASSERT_EQ(0, write_file(PARAMS "adj", "0,100,200,300,900,906\n"));
	ASSERT_EQ(0, read_file(PARAMS "adj", buf, sizeof(buf)));
	EXPECT_STREQ("0,100,200,300,900,906", buf);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, write_file(PARAMS "adj", bad[i]))
			TH_LOG("adj '%s'", bad[i]);
	}
	EXPECT_EQ(-EINVAL, write_file(PARAMS "minfree", "-5\n"));
	EXPECT_EQ(-EINVAL, write_file(CELLS "host/lmk/minfree", "1,x\n"));
	EXPECT_EQ(-EINVAL, write_file(CELLS "host/lmk/enabled", "maybe\n"));
	ASSERT_EQ(0, read_file(PARAMS "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("1,1,1,1", buf);
	/* lmkd's "off" (its PSI mode with the module there): levels never crossed. */
	EXPECT_EQ(0, write_file(PARAMS "minfree", "0,0,0,0,0,0"));
	ASSERT_EQ(0, read_file(PARAMS "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("0,0,0,0,0,0", buf);
	/* An empty list: no levels. */
	EXPECT_EQ(0, write_file(PARAMS "minfree", "\n"));
	EXPECT_EQ(0, write_file(PARAMS "adj", "\n"));
	ASSERT_EQ(0, read_file(PARAMS "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	EXPECT_EQ(0, lmk_kills("host"));
}

#define LMK_KO		"/lib/modules/cask/lowmemorykiller.ko"

static bool in_use(int err)
{
	return err == EWOULDBLOCK || err == EAGAIN || err == EBUSY;
}

/* Sleeps in poll() on the events for 3 s, then reads: 0 if it got EAGAIN. */
static int poller(int ready)
{
	struct pollfd pfd = { .events = POLLIN };
	char buf[256];

	pfd.fd = open(EVENTS, O_RDONLY | O_NONBLOCK);
	if (pfd.fd < 0)
		return 1;
	if (write(ready, "p", 1) != 1)
		return 2;
	if (poll(&pfd, 1, 3000) != 0)
		return 3;
	if (read(pfd.fd, buf, sizeof(buf)) != -1 || errno != EAGAIN)
		return 4;
	close(pfd.fd);
	return 0;
}

/*
 * A task sleeping in poll() (not epoll: wake_up_pollfree() does not reach
 * it) on /proc/lowmemorykiller holds the module: unloading is refused, the
 * task goes on undisturbed, and once it has closed the file the module
 * unloads. It is loaded again for what follows.
 */
TEST(unload_refused_while_polled)
{
	int ready[2], i, ret, err = 0;
	struct stat st;
	pid_t pid;
	char c;

	if (lmk_missing())
		SKIP(return, "%s", lmk_missing());
	if (access(LMK_KO, R_OK))
		SKIP(return, "no %s to load again afterwards", LMK_KO);
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(ready[0]);
		_exit(poller(ready[1]));
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	/* Long enough to be asleep in poll(), well within its 3 s. */
	usleep(500000);
	ret = syscall(SYS_delete_module, "lowmemorykiller", O_NONBLOCK);
	err = errno;
	EXPECT_EQ(-1, ret);
	EXPECT_TRUE(in_use(err)) TH_LOG("%s", strerror(err));
	EXPECT_EQ(0, stat(PARAMS "minfree", &st));
	EXPECT_EQ(0, child_status(pid));
	/* Closed: the module goes. */
	for (i = 0; i < 500; i++) {
		ret = syscall(SYS_delete_module, "lowmemorykiller", O_NONBLOCK);
		err = errno;
		if (!ret || !in_use(err))
			break;
		usleep(10000);
	}
	EXPECT_EQ(0, ret) TH_LOG("%s", strerror(err));
	EXPECT_NE(0, stat(PARAMS "minfree", &st));
	ASSERT_EQ(0, cask_module_load("lowmemorykiller"));
	ASSERT_EQ(0, stat(EVENTS, &st));
}

/* ---- two containers ---------------------------------------------------------- */

struct cell {
	const char *name;
	const char *cg;
	bool userns;
	bool started;
	struct container c;
};

static int cell_make(struct cell *cell, const char *name, const char *cg, bool userns)
{
	char buf[32];
	int ret;

	cell->name = name;
	cell->cg = cg;
	cell->userns = userns;
	cask_unregister(name);
	ret = container_start(&cell->c, cg, userns ? UID_BASE : CONTAINER_NO_USERNS);
	if (ret)
		return ret;
	cell->started = true;
	snprintf(buf, sizeof(buf), "%ld", A_MAX_MIB * MIB);
	ret = cg_set(cg, "memory.max", buf);
	if (ret)
		return ret;
	return cask_register(name, cell->c.init);
}

static void cell_end(struct cell *cell)
{
	if (!cell->started)
		return;
	cask_unregister(cell->name);
	container_stop(&cell->c);
	cell->started = false;
}

FIXTURE(cells) {
	struct cell a, b;
};

FIXTURE_VARIANT(cells) {
	bool a_userns;
};

FIXTURE_VARIANT_ADD(cells, plain) {
	.a_userns = false,
};

FIXTURE_VARIANT_ADD(cells, userns) {
	.a_userns = true,
};

FIXTURE_SETUP(cells)
{
	if (lmk_missing())
		SKIP(return, "%s", lmk_missing());
	ASSERT_EQ(0, cell_make(&self->a, CELL_A, CG_A, variant->a_userns));
	ASSERT_EQ(0, cell_make(&self->b, CELL_B, CG_B, true));
}

FIXTURE_TEARDOWN(cells)
{
	/* A test that turned the reaper off and failed before turning it on. */
	write_file(REAP, "Y\n");
	cell_end(&self->a);
	cell_end(&self->b);
}

/* The container whose cgroup @cg is, or NULL. */
static const struct cell *cell_of(struct _test_data_cells *self, const char *cg)
{
	if (!strcmp(cg, CG_A))
		return &self->a;
	if (!strcmp(cg, CG_B))
		return &self->b;
	return NULL;
}

/* Write @val to the legacy param @file; 0 or errno. */
struct param_write {
	const char *file;
	const char *val;
};

/* File-scope: the containers' functions see memory as it was at their start. */
static const struct param_write write_minfree = { "minfree", "100\n" };
static const struct param_write write_reap = { "reap", "N\n" };

static int try_param_write(void *arg)
{
	const struct param_write *w = arg;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), PARAMS "%s", w->file);
	return -write_file(path, w->val);
}

/* In @cell's IPC namespace as the host's root (no user namespace). */
static int as_host_root_in(struct cell *cell, int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (container_enter(&cell->c, false))
			_exit(99);
		_exit(fn(arg));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int param_read_is(void *arg)
{
	char buf[128];

	if (read_file(PARAMS "minfree", buf, sizeof(buf)))
		return 98;
	return strcmp(buf, arg) ? 1 : 0;
}

TEST_F(cells, params_per_cell)
{
	struct param_write minfree = { "minfree", "100,200,300\n" };
	struct param_write adj = { "adj", "0,6,15\n" };
	char buf[128];

	ASSERT_EQ(0, as_host_root_in(&self->a, try_param_write, &minfree));
	ASSERT_EQ(0, as_host_root_in(&self->a, try_param_write, &adj));
	/* A's, seen by A through the param and by the host in sysfs. */
	EXPECT_EQ(0, as_host_root_in(&self->a, param_read_is, "100,200,300"));
	ASSERT_EQ(0, lmk_get(CELL_A, "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("100,200,300", buf);
	ASSERT_EQ(0, lmk_get(CELL_A, "adj", buf, sizeof(buf)));
	EXPECT_STREQ("0,352,1000", buf);
	/* Not B's, not the host's. */
	EXPECT_EQ(0, as_host_root_in(&self->b, param_read_is, ""));
	ASSERT_EQ(0, lmk_get(CELL_B, "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	ASSERT_EQ(0, read_file(PARAMS "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	ASSERT_EQ(0, read_file(CELLS "host/lmk/minfree", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
}

/* As the root of a container with a user namespace: each check's errno. */
static int try_cell_file(void *arg)
{
	return -write_file(arg, "100\n");
}

TEST_F(cells, container_root_confined)
{
	char buf[128];

	/* B's root (unprivileged on the host) reaches nothing but B. */
	EXPECT_EQ(EACCES, container_run(&self->b.c, try_param_write,
					(void *)&write_minfree));
	EXPECT_EQ(EACCES, container_run(&self->b.c, try_param_write,
					(void *)&write_reap));
	EXPECT_EQ(EACCES, container_run(&self->b.c, try_cell_file,
					CELLS CELL_A "/lmk/minfree"));
	EXPECT_EQ(EACCES, container_run(&self->b.c, try_cell_file,
					CELLS "host/lmk/minfree"));
	EXPECT_EQ(0, container_run(&self->b.c, try_cell_file,
				   CELLS CELL_B "/lmk/minfree"));
	ASSERT_EQ(0, lmk_get(CELL_A, "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	ASSERT_EQ(0, read_file(CELLS "host/lmk/minfree", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	ASSERT_EQ(0, lmk_get(CELL_B, "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("100", buf);
	ASSERT_EQ(0, read_file(REAP, buf, sizeof(buf)));
	EXPECT_STREQ("Y", buf);
}

/*
 * The reap param is the host's: a container's root without a user
 * namespace, who is root on the host too and may be given the params
 * directory, gets EPERM (one with a user namespace EACCES from the file's
 * owner), and so does the host's root entered into A's IPC namespace; the
 * value stays. The host's root still sets it.
 */
TEST_F(cells, reap_param_host_only)
{
	int want = variant->a_userns ? EACCES : EPERM;
	char buf[16];

	EXPECT_EQ(want, container_run(&self->a.c, try_param_write,
				      (void *)&write_reap));
	EXPECT_EQ(EPERM, as_host_root_in(&self->a, try_param_write,
					 (void *)&write_reap));
	ASSERT_EQ(0, read_file(REAP, buf, sizeof(buf)));
	EXPECT_STREQ("Y", buf);
	EXPECT_EQ(0, write_file(REAP, "N\n"));
	ASSERT_EQ(0, read_file(REAP, buf, sizeof(buf)));
	EXPECT_STREQ("N", buf);
	EXPECT_EQ(0, write_file(REAP, "Y\n"));
}

/* Android's lmkd: uid lmkd, and these capabilities only (init.rc). */
#define LMKD_UID	1069
#define CAP(c)		(1ULL << (c))
#define LMKD_CAPS	(CAP(CAP_DAC_OVERRIDE) | CAP(CAP_KILL) | CAP(CAP_IPC_LOCK) | \
			 CAP(CAP_SYS_NICE) | CAP(CAP_SYS_RESOURCE))

static int set_caps(unsigned long long caps)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ .effective = (uint32_t)caps, .permitted = (uint32_t)caps },
		{ .effective = caps >> 32, .permitted = caps >> 32 },
	};

	return syscall(SYS_capset, &h, d);
}

/*
 * Write "100" to @path from @cell as uid LMKD_UID with only @caps (in the
 * cell's user namespace): 0 or the errno.
 */
static int try_as_lmkd(const struct cell *cell, unsigned long long caps, const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (container_enter(&cell->c, cell->userns))
			_exit(99);
		if (prctl(PR_SET_KEEPCAPS, 1) ||
		    setresgid(LMKD_UID, LMKD_UID, LMKD_UID) ||
		    setresuid(LMKD_UID, LMKD_UID, LMKD_UID))
			_exit(98);
		if (set_caps(caps))
			_exit(97);
		_exit(-write_file(path, "100\n"));
	}
	return pid < 0 ? -1 : child_status(pid);
}

/*
 * Stock lmkd has CAP_SYS_RESOURCE, not CAP_SYS_ADMIN: with it (over the
 * cell) it sets the levels, through the cell's sysfs file and, in a
 * container without a user namespace, the legacy param; without it the
 * same uid gets EPERM. CAP_DAC_OVERRIDE (lmkd's too) only opens the files.
 */
TEST_F(cells, lmkd_capabilities_set_levels)
{
	const unsigned long long no_resource = LMKD_CAPS & ~CAP(CAP_SYS_RESOURCE);
	char path[PATH_MAX], buf[64];

	lmk_path(path, sizeof(path), CELL_A, "minfree");
	EXPECT_EQ(EPERM, try_as_lmkd(&self->a, no_resource, path));
	ASSERT_EQ(0, lmk_get(CELL_A, "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	EXPECT_EQ(0, try_as_lmkd(&self->a, LMKD_CAPS, path));
	ASSERT_EQ(0, lmk_get(CELL_A, "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("100", buf);
	if (variant->a_userns)
		return;
	ASSERT_EQ(0, lmk_set(CELL_A, "minfree", "\n"));
	EXPECT_EQ(EPERM, try_as_lmkd(&self->a, no_resource, PARAMS "minfree"));
	ASSERT_EQ(0, lmk_get(CELL_A, "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("", buf);
	EXPECT_EQ(0, try_as_lmkd(&self->a, LMKD_CAPS, PARAMS "minfree"));
	ASSERT_EQ(0, lmk_get(CELL_A, "minfree", buf, sizeof(buf)));
	EXPECT_STREQ("100", buf);
}

static int try_unpriv_userns(void *arg)
{
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 98;
	if (unshare(CLONE_NEWUSER))
		return 97;
	return -write_file(arg, "100\n");
}

TEST(unprivileged_userns)
{
	int status;
	pid_t pid;

	if (lmk_missing())
		SKIP(return, "%s", lmk_missing());
	pid = fork();
	if (pid == 0)
		_exit(try_unpriv_userns(PARAMS "minfree"));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(EACCES, WEXITSTATUS(status));
	pid = fork();
	if (pid == 0)
		_exit(try_unpriv_userns(CELLS "host/lmk/minfree"));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(EACCES, WEXITSTATUS(status));
}

/*
 * The reap param: host-wide, Y by default, a bool's syntax, the host's
 * root's only.
 */
TEST(reap_param)
{
	struct stat st;
	char buf[16];
	int status;
	pid_t pid;

	if (lmk_missing())
		SKIP(return, "%s", lmk_missing());
	ASSERT_EQ(0, stat(REAP, &st));
	EXPECT_EQ(0644, st.st_mode & 07777);
	ASSERT_EQ(0, read_file(REAP, buf, sizeof(buf)));
	EXPECT_STREQ("Y", buf);
	EXPECT_EQ(0, write_file(REAP, "N\n"));
	ASSERT_EQ(0, read_file(REAP, buf, sizeof(buf)));
	EXPECT_STREQ("N", buf);
	EXPECT_EQ(-EINVAL, write_file(REAP, "maybe\n"));
	ASSERT_EQ(0, read_file(REAP, buf, sizeof(buf)));
	EXPECT_STREQ("N", buf);
	EXPECT_EQ(0, write_file(REAP, "1\n"));
	ASSERT_EQ(0, read_file(REAP, buf, sizeof(buf)));
	EXPECT_STREQ("Y", buf);
	pid = fork();
	if (pid == 0)
		_exit(try_unpriv_userns(REAP));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(EACCES, WEXITSTATUS(status));
	ASSERT_EQ(0, read_file(REAP, buf, sizeof(buf)));
	EXPECT_STREQ("Y", buf);
}

/* ---- killing ------------------------------------------------------------------ */

struct proc {
	const char *comm;
	int adj;
	long mib;
	const char *cg;
	pid_t pid;
};

/* A process of @mib MiB of touched anonymous memory, waiting to die. */
/*
 * A process in cgroup @cg holding @mib MiB at @adj. With @in, it also
 * enters that container's namespaces: a cell kills only tasks with
 * credentials of its user namespace.
 */
static pid_t holder(const char *cg, const struct cell *in, const char *comm, int adj,
		    long mib, int *ready)
{
	pid_t pid = fork();
	char *p;

	if (pid == 0) {
		if (join_cgroup(cg) || set_adj(getpid(), adj))
			_exit(98);
		if (in && container_enter(&in->c, in->userns))
			_exit(95);
		/* After the credential change, which clears it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, comm);
		/* Not malloc(): the compiler may drop a block never read. */
		p = mmap(NULL, mib * MIB, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(97);
		memset(p, 0x5a, mib * MIB);
		if (write(ready[1], "r", 1) != 1)
			_exit(96);
		for (;;)
			pause();
	}
	return pid;
}

/* Grows by 1 MiB every 20 ms up to @mib, then holds; adj 0. */
static pid_t grower(const char *cg, long mib, int *ready)
{
	pid_t pid = fork();
	long i;

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (join_cgroup(cg) || set_adj(getpid(), 0))
			_exit(98);
		prctl(PR_SET_NAME, "lmk-hog");
		for (i = 0; i < mib; i++) {
			char *p = mmap(NULL, MIB, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				_exit(97);
			memset(p, 0x5b, MIB);
			usleep(20000);
		}
		if (write(ready[1], "h", 1) != 1)
			_exit(96);
		for (;;)
			pause();
	}
	return pid;
}

static bool dead(pid_t pid)
{
	int status;

	return waitpid(pid, &status, WNOHANG) == pid;
}

static void reap_all(struct proc *p, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (p[i].pid > 0) {
			kill(p[i].pid, SIGKILL);
			waitpid(p[i].pid, NULL, 0);
			p[i].pid = 0;
		}
	}
}

struct event {
	long pid, uid, tgid, minflt, majflt, rss;
	int adj, min_adj;
	unsigned long long start;
	char comm[32];
};

/* One event from an open /proc/lowmemorykiller: 0, or -errno. */
static int read_event(int fd, struct event *e)
{
	char buf[512];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (sscanf(buf, "%ld %ld %ld %ld %ld %ld %d %d %llu\n%31s",
		   &e->pid, &e->uid, &e->tgid, &e->minflt, &e->majflt, &e->rss,
		   &e->adj, &e->min_adj, &e->start, e->comm) != 10)
		return -EPROTO;
	return 0;
}

/* The pids of a reader's events, in order (pids of the reading process). */
struct events_out {
	int n;
	long pid[8];
	int adj[8];
	int min_adj[8];
	int polled;
};

/* Read every event @fd has for its reader: 0, or an errno. */
static int events_read(int fd, struct events_out *out)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct event e;
	int ret;

	memset(out, 0, sizeof(*out));
	out->polled = poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
	while (out->n < 8 && !(ret = read_event(fd, &e))) {
		out->pid[out->n] = e.pid;
		out->adj[out->n] = e.adj;
		out->min_adj[out->n] = e.min_adj;
		out->n++;
	}
	return ret == -EAGAIN ? 0 : -ret;
}

/*
 * /proc/lowmemorykiller opened in @cell's IPC namespace (so a reader of
 * that cell's kills, from now on) by a child, and passed to the caller,
 * which reads it with the host's pids. The fd, or -1.
 */
static int events_open_in(struct cell *cell)
{
	int sk[2], fd, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sk))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(sk[0]);
		if (container_enter(&cell->c, false))
			_exit(1);
		fd = open(EVENTS, O_RDONLY | O_NONBLOCK);
		if (fd < 0 || send_fd(sk[1], fd))
			_exit(2);
		_exit(0);
	}
	close(sk[1]);
	fd = pid > 0 ? recv_fd(sk[0]) : -1;
	close(sk[0]);
	if (pid > 0 && (waitpid(pid, &status, 0) != pid || status))
		fd = -1;
	return fd < 0 ? -1 : fd;
}

static bool tracing(const char *file, const char *val)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), TRACING "/%s", file);
	return write_file(path, val) == 0;
}

/* Does the trace buffer hold an lmk_kill of @cell for @pid? */
static bool traced(const char *cell, pid_t pid)
{
	char line[512], want[64];
	bool found = false;
	FILE *f = fopen(TRACING "/trace", "r");

	if (!f)
		return false;
	snprintf(want, sizeof(want), "cell=%s pid=%d ", cell, pid);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "lmk_kill") && strstr(line, want))
			found = true;
	fclose(f);
	return found;
}

TEST_F_TIMEOUT(cells, kills_in_order_only_in_cell, 240)
{
	struct proc victims[] = {
		/* The order the killer must take them in. */
		{ "lmk-v900", 900, 4, CG_A },
		{ "lmk-v800big", 800, 6, CG_A },
		{ "lmk-v800", 800, 3, CG_A },
	};
	struct proc spared[] = {
		{ "lmk-low", 100, 2, CG_A },	/* below the level's adj */
		{ "lmk-neg", -500, 1, CG_A },	/* never */
		{ "lmk-b", 1000, 4, CG_B },	/* another cell */
		{ "lmk-host", 1000, 4, "" },	/* the host */
	};
	int nv = ARRAY_SIZE(victims), ns = ARRAY_SIZE(spared);
	struct events_out ev;
	int ready[2], round, i, k;
	pid_t vp[8] = { 0 };
	bool have_trace;
	pid_t h;
	char c;

	ASSERT_EQ(0, pipe(ready));
	/* A's init is the most attractive process there, and must survive. */
	ASSERT_EQ(0, set_adj(self->a.c.init, 1000));
	ASSERT_EQ(0, lmk_set(CELL_A, "minfree", LEVEL_MINFREE "\n"));
	ASSERT_EQ(0, lmk_set(CELL_A, "adj", LEVEL_ADJ "\n"));
	ASSERT_EQ(0, lmk_set(CELL_B, "minfree", LEVEL_MINFREE "\n"));
	ASSERT_EQ(0, lmk_set(CELL_B, "adj", "0\n"));
	if (access(TRACING "/trace", F_OK))
		mount("tracefs", TRACING, "tracefs", 0, NULL);
	have_trace = tracing("trace", "") &&
		     tracing("events/lowmemorykiller/lmk_kill/enable", "1");
	if (!have_trace)
		TH_LOG("no tracefs event lowmemorykiller/lmk_kill");

	for (round = 0; round < 3; round++) {
		long kills0 = lmk_kills(CELL_A);
		/* Readers see the kills made after they opened. */
		int fa = events_open_in(&self->a), fb = events_open_in(&self->b);

		ASSERT_LE(0, fa);
		ASSERT_LE(0, fb);

		for (i = 0; i < ns; i++) {
			if (!*spared[i].cg)
				spared[i].cg = ".";
			spared[i].pid = holder(spared[i].cg, cell_of(self, spared[i].cg),
					       spared[i].comm, spared[i].adj, spared[i].mib,
					       ready);
			ASSERT_LT(0, spared[i].pid);
			ASSERT_EQ(1, read(ready[0], &c, 1));
		}
		for (i = 0; i < nv; i++) {
			victims[i].pid = holder(victims[i].cg, cell_of(self, victims[i].cg),
						victims[i].comm, victims[i].adj, victims[i].mib,
						ready);
			ASSERT_LT(0, victims[i].pid);
			ASSERT_EQ(1, read(ready[0], &c, 1));
		}
		for (i = 0; i < nv; i++)
			vp[i] = victims[i].pid;
		/* 16 MiB of others; the hog takes A past 32 MiB free. */
		h = grower(CG_A, 36, ready);
		ASSERT_LT(0, h);
		/*
		 * All die; the order of their deaths is not the order of the
		 * kills (the next kill follows once the previous victim's
		 * memory is gone, before it is a zombie): the events say that.
		 */
		k = 0;
		for (i = 0; i < 3000 && k < nv; i++) {
			int j;

			for (j = 0; j < nv; j++) {
				if (victims[j].pid > 0 && dead(victims[j].pid)) {
					victims[j].pid = 0;
					k++;
				}
			}
			usleep(5000);
		}
		ASSERT_EQ(nv, k) TH_LOG("round %d: %d of %d victims killed", round, k, nv);
		/* The hog finishes below its limit; nothing else dies. */
		ASSERT_EQ(1, read(ready[0], &c, 1));
		usleep(300000);
		EXPECT_FALSE(dead(h));
		for (i = 0; i < ns; i++) {
			const char *comm = spared[i].comm;

			EXPECT_FALSE(dead(spared[i].pid)) TH_LOG("%s died", comm);
		}
		EXPECT_EQ(0, kill(self->a.c.init, 0));
		EXPECT_EQ(kills0 + nv, lmk_kills(CELL_A));
		EXPECT_EQ(0, memory_event(CG_A, "oom_kill"));
		EXPECT_EQ(0, lmk_kills(CELL_B));
		EXPECT_EQ(0, lmk_kills("host"));

		/* A's reader sees A's kills, in the killer's order, in its pids. */
		ASSERT_EQ(0, events_read(fa, &ev));
		EXPECT_TRUE(ev.polled);
		ASSERT_EQ(nv, ev.n);
		for (i = 0; i < nv; i++) {
			EXPECT_EQ(vp[i], ev.pid[i]);
			EXPECT_EQ(victims[i].adj, ev.adj[i]);
			EXPECT_EQ(200, ev.min_adj[i]);
		}
		ASSERT_EQ(0, events_read(fb, &ev));
		EXPECT_EQ(0, ev.n);
		EXPECT_FALSE(ev.polled);
		close(fa);
		close(fb);

		kill(h, SIGKILL);
		waitpid(h, NULL, 0);
		reap_all(spared, ns);
		reap_all(victims, nv);
	}
	{
		char buf[128];

		ASSERT_EQ(0, lmk_get(CELL_A, "reaction_us", buf, sizeof(buf)));
		TH_LOG("reaction_us (last max): %s", buf);
		ASSERT_EQ(0, lmk_get(CELL_A, "freed_us", buf, sizeof(buf)));
		TH_LOG("freed_us (last max): %s", buf);
		ASSERT_EQ(0, lmk_get(CELL_A, "last_kill", buf, sizeof(buf)));
		EXPECT_TRUE(strstr(buf, " 800 ") && strstr(buf, "lmk-v800")) TH_LOG("%s", buf);
	}
	if (have_trace) {
		/* The last round's kills, one event each. */
		for (i = 0; i < nv; i++) {
			pid_t pid = vp[i];

			EXPECT_TRUE(traced(CELL_A, pid)) TH_LOG("no trace of %d", pid);
		}
		tracing("events/lowmemorykiller/lmk_kill/enable", "0");
	}
}

/*
 * Reading takes no kill from another reader: two of A's readers both see
 * A's kill, once each; a reader opened after it sees nothing, and neither
 * does B's.
 */
TEST_F_TIMEOUT(cells, two_readers_see_each_kill, 120)
{
	struct events_out e1, e2, e3;
	int ready[2], f1, f2, f3, fb, i;
	bool died = false;
	pid_t v, h;
	char c;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, lmk_set(CELL_A, "minfree", LEVEL_MINFREE "\n"));
	ASSERT_EQ(0, lmk_set(CELL_A, "adj", LEVEL_ADJ "\n"));
	f1 = events_open_in(&self->a);
	f2 = events_open_in(&self->a);
	fb = events_open_in(&self->b);
	ASSERT_LE(0, f1);
	ASSERT_LE(0, f2);
	ASSERT_LE(0, fb);
	v = holder(CG_A, &self->a, "lmk-v900", 900, 4, ready);
	ASSERT_LT(0, v);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	h = grower(CG_A, 36, ready);
	ASSERT_LT(0, h);
	for (i = 0; i < 2000 && !died; i++) {
		died = dead(v);
		usleep(5000);
	}
	ASSERT_TRUE(died);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* The first reader's read leaves the kill to the second. */
	ASSERT_EQ(0, events_read(f1, &e1));
	ASSERT_EQ(0, events_read(f2, &e2));
	EXPECT_TRUE(e1.polled);
	EXPECT_TRUE(e2.polled);
	ASSERT_EQ(1, e1.n);
	ASSERT_EQ(1, e2.n);
	EXPECT_EQ(v, e1.pid[0]);
	EXPECT_EQ(v, e2.pid[0]);
	EXPECT_EQ(900, e2.adj[0]);
	/* Once each. */
	ASSERT_EQ(0, events_read(f1, &e1));
	EXPECT_EQ(0, e1.n);
	EXPECT_FALSE(e1.polled);
	f3 = events_open_in(&self->a);
	ASSERT_LE(0, f3);
	ASSERT_EQ(0, events_read(f3, &e3));
	EXPECT_EQ(0, e3.n);
	ASSERT_EQ(0, events_read(fb, &e3));
	EXPECT_EQ(0, e3.n);
	close(f1);
	close(f2);
	close(f3);
	close(fb);
	kill(h, SIGKILL);
	waitpid(h, NULL, 0);
}

/*
 * A cell unregistered while a reader holds it open (as lmkd's does) stops
 * killing: nothing is left to see or disable its killer by, and its IPC
 * namespace gets a new cell on its next use. Its reader gets POLLHUP and
 * end of file.
 */
TEST_F_TIMEOUT(cells, unregister_stops_killer, 120)
{
	struct pollfd pfd = { .events = POLLIN };
	int ready[2];
	char c, buf[256];
	pid_t v, h;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, lmk_set(CELL_A, "minfree", LEVEL_MINFREE "\n"));
	ASSERT_EQ(0, lmk_set(CELL_A, "adj", LEVEL_ADJ "\n"));
	pfd.fd = events_open_in(&self->a);
	ASSERT_LE(0, pfd.fd);
	ASSERT_EQ(0, poll(&pfd, 1, 0));
	v = holder(CG_A, &self->a, "lmk-v900", 900, 4, ready);
	ASSERT_LT(0, v);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, cask_unregister(CELL_A));
	EXPECT_FALSE(cell_exists(CELL_A));
	/* The reader is told at once, before anything else happens. */
	EXPECT_EQ(1, poll(&pfd, 1, 1000));
	EXPECT_TRUE(pfd.revents & POLLHUP) TH_LOG("revents %#x", pfd.revents);
	EXPECT_FALSE(pfd.revents & POLLIN);
	EXPECT_EQ(0, read(pfd.fd, buf, sizeof(buf)));
	/* Past the level that A had: nobody kills. */
	h = grower(CG_A, 36, ready);
	ASSERT_LT(0, h);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	usleep(2000000);
	EXPECT_FALSE(dead(v)) TH_LOG("the unregistered cell's killer killed");
	EXPECT_EQ(0, read(pfd.fd, buf, sizeof(buf)));
	close(pfd.fd);
	kill(h, SIGKILL);
	waitpid(h, NULL, 0);
	kill(v, SIGKILL);
	waitpid(v, NULL, 0);
}

/* ---- processes the killer must not pass over, memory it must wait for ---------- */

/* Is @pid gone or a zombie? For processes that are not our children. */
static bool gone(pid_t pid)
{
	char path[64], buf[256], *state;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)))
		return true;
	state = strrchr(buf, ')');
	return !state || state[1] != ' ' || state[2] == 'Z' || state[2] == 'X';
}

/* A holder's way into its container, and its memory. */
static void holder_enter(const struct cell *in, const char *comm, int adj, long mib)
{
	char *p;

	if (join_cgroup(in->cg) || set_adj(getpid(), adj))
		_exit(98);
	if (container_enter(&in->c, in->userns))
		_exit(95);
	prctl(PR_SET_NAME, comm);
	p = mmap(NULL, mib * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(97);
	memset(p, 0x5a, mib * MIB);
}

static void *hold_thread(void *arg)
{
	if (write((int)(intptr_t)arg, "t", 1) != 1)
		_exit(96);
	for (;;)
		pause();
	return NULL;
}

/* A holder whose main thread leaves with pthread_exit(); another holds on. */
static pid_t leaderless_holder(const struct cell *in, int adj, long mib, int *ready)
{
	pid_t pid = fork();
	pthread_t th;

	if (pid == 0) {
		holder_enter(in, "lmk-leaderless", adj, mib);
		if (pthread_create(&th, NULL, hold_thread, (void *)(intptr_t)ready[1]))
			_exit(94);
		pthread_exit(NULL);
	}
	return pid;
}

/* Wait up to @ms for @pid, our child, to die. */
static bool dies_within(pid_t pid, int ms)
{
	int i;

	for (i = 0; i < ms / 5; i++) {
		if (dead(pid))
			return true;
		usleep(5000);
	}
	return false;
}

/*
 * A cell outlives its init where the IPC namespace's end is tracked
 * (features/ipc_ns_free_notifier): processes that entered the container's
 * IPC namespace keep it. The PID namespace's child_reaper then points to
 * the init's freed task, which the search must not use: before the fix
 * the search read it (KASAN: use-after-free in lmk_candidate_fill, the
 * guest's panic_on_warn failed the run). The kill still happens, in the
 * cell only.
 */
TEST_F_TIMEOUT(cells, kills_after_init_exit, 120)
{
	char feature[8], path[PATH_MAX];
	int ready[2];
	bool died;
	pid_t v, h;
	char c;

	ASSERT_EQ(0, read_file(CASK "/features/ipc_ns_free_notifier", feature,
			       sizeof(feature)));
	if (feature[0] != '1')
		SKIP(return, "a cell ends with its init without the IPC namespace free notifier");
	ASSERT_EQ(0, pipe(ready));
	v = holder(CG_A, &self->a, "lmk-v900", 900, 4, ready);
	ASSERT_LT(0, v);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	h = holder(CG_A, &self->a, "lmk-hog", -100, 36, ready);
	ASSERT_LT(0, h);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* SIGKILL from the parent namespace ends it; its parent reaps it. */
	ASSERT_EQ(0, kill(self->a.c.init, SIGKILL));
	container_stop(&self->a.c);
	EXPECT_NE(0, kill(self->a.c.init, 0));
	/* Past an RCU grace period: the init's task is freed. */
	usleep(200000);
	lmk_path(path, sizeof(path), CELL_A, "minfree");
	ASSERT_EQ(0, access(path, F_OK)) TH_LOG("cell %s ended with its init", CELL_A);
	ASSERT_EQ(0, lmk_set(CELL_A, "minfree", LEVEL_MINFREE "\n"));
	ASSERT_EQ(0, lmk_set(CELL_A, "adj", LEVEL_ADJ "\n"));
	died = dies_within(v, 10000);
	EXPECT_TRUE(died);
	EXPECT_EQ(1, lmk_kills(CELL_A));
	EXPECT_FALSE(dead(h));
	EXPECT_EQ(0, lmk_kills(CELL_B));
	kill(h, SIGKILL);
	waitpid(h, NULL, 0);
	if (!died) {
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
	}
	/* container_stop() could not remove the cgroup while they lived. */
	snprintf(path, sizeof(path), CGROOT "/%s", CG_A);
	rmdir(path);
}

/*
 * A kill's reaction counts from the crossing of its own level: A stays
 * 3 s within its top level (adj 900, nobody to kill there), then crosses
 * the next (adj 0), where the victim is. Before the fix reaction_us
 * counted from the top level's crossing and read more than 3 s.
 */
TEST_F_TIMEOUT(cells, reaction_from_own_level, 120)
{
	unsigned long long last = 0, max = 0;
	int ready[2];
	pid_t v, h1, h2;
	char buf[64], c;
	bool died;

	ASSERT_EQ(0, pipe(ready));
	/*
	 * Levels: below 16 MiB free, adj 100 (not the container's middle
	 * process, at 0); below 32 MiB free, adj 900.
	 */
	ASSERT_EQ(0, lmk_set(CELL_A, "minfree", "4096,8192\n"));
	ASSERT_EQ(0, lmk_set(CELL_A, "adj", "100,900\n"));
	v = holder(CG_A, &self->a, "lmk-v500", 500, 8, ready);
	ASSERT_LT(0, v);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* About 40 of A's 64 MiB: within the top level only. */
	h1 = holder(CG_A, &self->a, "lmk-hog1", -100, 32, ready);
	ASSERT_LT(0, h1);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	sleep(3);
	EXPECT_FALSE(dead(v));
	EXPECT_EQ(0, lmk_kills(CELL_A));
	/* Past the next level: the victim goes, in about a tick. */
	h2 = holder(CG_A, &self->a, "lmk-hog2", -100, 12, ready);
	ASSERT_LT(0, h2);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	died = dies_within(v, 10000);
	EXPECT_TRUE(died);
	EXPECT_EQ(1, lmk_kills(CELL_A));
	ASSERT_EQ(0, lmk_get(CELL_A, "reaction_us", buf, sizeof(buf)));
	if (sscanf(buf, "%llu %llu", &last, &max) != 2)
		max = ULLONG_MAX;
	TH_LOG("reaction_us (last max): %llu %llu", last, max);
	/* The only kill. Generous for a slow guest; the stay above it was 3 s. */
	EXPECT_GT(1000000, max);
	kill(h1, SIGKILL);
	kill(h2, SIGKILL);
	waitpid(h1, NULL, 0);
	waitpid(h2, NULL, 0);
	if (!died) {
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
	}
}

/* ---- the shared reaper ------------------------------------------------------ */

#define MAP_COUNT	"/proc/sys/vm/max_map_count"
#define VMAS_MAX	(128 * 1024)
#define WALK_MS		2000

/* Make pages [@from, @to) of @base one-page VMAs, alternately writable and not. */
static void vmas_build(char *base, long pg, long from, long to)
{
	long i;

	if (mprotect(base + from * pg, (to - from) * pg, PROT_READ | PROT_WRITE))
		_exit(94);
	for (i = from + 1; i < to; i += 2)
		if (mprotect(base + i * pg, pg, PROT_READ))
			_exit(93);
}

/* One madvise() walk of the first @n pages, changing every VMA; its ms. */
static long vmas_walk(char *base, long pg, long n, bool dump)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (madvise(base, n * pg, dump ? MADV_DODUMP : MADV_DONTDUMP))
		_exit(92);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
}

/*
 * A process of cell @in whose address space has up to VMAS_MAX one-page
 * VMAs, alternately writable and read-only so that none merge, about
 * enough that one madvise() walk of them takes WALK_MS (measured on 8192,
 * then scaled). Then it walks them over and over, setting and clearing
 * VM_DONTDUMP, counting the walks it starts in *@walks: madvise() holds
 * the mmap_lock for writing for a whole walk, which SIGKILL does not cut
 * short, as a thread stalled in a FUSE fault would hold it. Writes the
 * last walk's length in ms to @ready.
 */
static pid_t lock_holder(const struct cell *in, int adj, int *ready, int *walks)
{
	long pg = sysconf(_SC_PAGESIZE), n = 8192, ms, want;
	pid_t pid = fork();
	bool dump = false;
	char *base;
	int fd;

	if (pid)
		return pid;
	/* Not the containers' command pipes: a failed test must end them. */
	for (fd = 3; fd < 1024; fd++)
		if (fd != ready[1])
			close(fd);
	holder_enter(in, "lmk-locked", adj, 1);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	base = mmap(NULL, VMAS_MAX * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		    -1, 0);
	if (base == MAP_FAILED)
		_exit(97);
	vmas_build(base, pg, 0, n);
	ms = vmas_walk(base, pg, n, dump = !dump);
	want = ms ? n * WALK_MS / ms : VMAS_MAX;
	want = want < VMAS_MAX ? want & ~1L : VMAS_MAX;
	if (want > n) {
		vmas_build(base, pg, n, want);
		n = want;
		ms = vmas_walk(base, pg, n, dump = !dump);
	}
	if (write(ready[1], &ms, sizeof(ms)) != sizeof(ms))
		_exit(96);
	for (;;) {
		__atomic_add_fetch(walks, 1, __ATOMIC_SEQ_CST);
		vmas_walk(base, pg, n, dump = !dump);
	}
}

/*
 * The first lmk_reap of @pid in the trace buffer: its queued_us, or -1;
 * @gave_up counts its turns that ended without the mmap_lock.
 */
static long reap_queued_us(pid_t pid, int *gave_up)
{
	char line[512], want[32], *at;
	long queued = -1, q;
	int ret;
	FILE *f = fopen(TRACING "/trace", "r");

	*gave_up = 0;
	if (!f)
		return -1;
	snprintf(want, sizeof(want), "lmk_reap: pid=%d ", pid);
	while (fgets(line, sizeof(line), f)) {
		at = strstr(line, want);
		if (!at || sscanf(at + strlen(want), "ret=%d queued_us=%ld", &ret, &q) != 2)
			continue;
		if (queued < 0)
			queued = q;
		*gave_up += ret == -ETIMEDOUT;
	}
	fclose(f);
	return queued;
}

static bool wait_kills(const char *cell, long n, int ms)
{
	int i;

	for (i = 0; i < ms / 5; i++) {
		if (lmk_kills(cell) >= n)
			return true;
		usleep(5000);
	}
	return false;
}

/*
 * The reaper is shared: cell A's victim's mmap_lock held for long (here
 * by a long madvise() walk; in life a FUSE fault served in A's own user
 * namespace) must not hold up the reap of B's victim. B's reap starts
 * within a few of A's slices of 20 ms. Before the fix the reaper waited
 * for A's lock until A's kill timed out (1 s), and B's reap waited behind
 * it or never ran, and B's memory was not freed within its own kill's
 * 1 s (freed_us not set). B's victim's exit may still beat the reaper to
 * it (it did, now and then, on the plain variant): what must hold is that
 * B's memory is freed within its kill's time, and that a reap of B that
 * ran was not queued behind A's.
 */
TEST_F_TIMEOUT(cells, stalled_reap_holds_up_no_other_cell, 300)
{
	char buf[64], old_count[32] = "", b_freed[64] = "", b_freed0[64] = "";
	long walk_ms = 0, q;
	int *walks;
	int ready[2], gave_up = 0, w, i;
	bool va_died, vb_died;
	pid_t va, vb;
	char c;

	ASSERT_EQ(0, read_file(CASK "/features/lmk_reap", buf, sizeof(buf)));
	if (buf[0] != '1')
		SKIP(return, "no reaper without patches/0002");
	if (access(TRACING "/trace", F_OK))
		mount("tracefs", TRACING, "tracefs", 0, NULL);
	if (!tracing("trace", "") || !tracing("events/lowmemorykiller/lmk_reap/enable", "1"))
		SKIP(return, "no tracefs event lowmemorykiller/lmk_reap");
	walks = mmap(NULL, sizeof(*walks), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	ASSERT_NE(MAP_FAILED, (void *)walks);
	read_file(MAP_COUNT, old_count, sizeof(old_count));
	ASSERT_EQ(0, write_file(MAP_COUNT, "1000000\n"));
	/* Room for the VMAs, which are charged to each cell. */
	ASSERT_EQ(0, cg_set(CG_A, "memory.max", "268435456"));
	ASSERT_EQ(0, pipe(ready));
	/* B's victim's exit takes a while: a reap, not its exit, frees it. */
	ASSERT_EQ(0, cg_set(CG_B, "memory.max", "268435456"));
	vb = holder(CG_B, &self->b, "lmk-vb", 900, 96, ready);
	ASSERT_LT(0, vb);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	va = lock_holder(&self->a, 900, ready, walks);
	ASSERT_LT(0, va);
	ASSERT_EQ(sizeof(walk_ms), read(ready[0], &walk_ms, sizeof(walk_ms)));
	TH_LOG("one madvise() walk of A's victim: %ld ms", walk_ms);
	if (walk_ms < 1000) {
		kill(va, SIGKILL);
		kill(vb, SIGKILL);
		waitpid(va, NULL, 0);
		waitpid(vb, NULL, 0);
		write_file(MAP_COUNT, old_count);
		SKIP(return, "the walk holds the mmap_lock only %ld ms here", walk_ms);
	}
	ASSERT_EQ(0, lmk_set(CELL_A, "adj", LEVEL_ADJ "\n"));
	ASSERT_EQ(0, lmk_set(CELL_B, "adj", LEVEL_ADJ "\n"));
	ASSERT_TRUE(tracing("trace", ""));
	ASSERT_EQ(0, lmk_get(CELL_B, "freed_us", b_freed0, sizeof(b_freed0)));
	/*
	 * Levels above all the memory of each cell, so that setting them
	 * kills at once (no hog to wait for, which the walks slow down).
	 * A's kill early in a walk: the reaper meets the lock held.
	 */
	w = __atomic_load_n(walks, __ATOMIC_SEQ_CST);
	for (i = 0; i < 1000 && __atomic_load_n(walks, __ATOMIC_SEQ_CST) == w; i++)
		usleep(2000);
	ASSERT_EQ(0, lmk_set(CELL_A, "minfree", "65536\n"));
	ASSERT_TRUE(wait_kills(CELL_A, 1, 2000));
	usleep(20000);
	ASSERT_EQ(0, lmk_set(CELL_B, "minfree", "65536\n"));
	ASSERT_TRUE(wait_kills(CELL_B, 1, 2000));
	vb_died = dies_within(vb, 20000);
	/*
	 * A's victim dies as slowly as its tens of thousands of VMAs are torn
	 * down, which costs many of its walks on a loaded debug guest (it
	 * took over 20 s there, with the reap done): its bound scales with
	 * the walk it measured, and a victim that does not die still fails.
	 */
	va_died = dies_within(va, 20000 + 30 * walk_ms);
	EXPECT_TRUE(vb_died);
	EXPECT_TRUE(va_died);
	/* Every reap's turns are over by the kills' timeouts. */
	usleep(1500000);
	tracing("events/lowmemorykiller/lmk_reap/enable", "0");
	q = reap_queued_us(vb, &gave_up);
	ASSERT_EQ(0, lmk_get(CELL_B, "freed_us", b_freed, sizeof(b_freed)));
	TH_LOG("B's reap queued %ld us (-1: its exit freed it first)", q);
	TH_LOG("B's freed_us (last max): %s -> %s", b_freed0, b_freed);
	reap_queued_us(va, &gave_up);
	TH_LOG("A's reap gave up its turn %d times", gave_up);
	EXPECT_LT(0, atol(b_freed)) TH_LOG("B's memory not freed within its kill's time");
	EXPECT_STRNE(b_freed0, b_freed);
	if (q >= 0)
		EXPECT_GT(300000, q);
	write_file(MAP_COUNT, old_count);
	if (!va_died) {
		kill(va, SIGKILL);
		waitpid(va, NULL, 0);
	}
	if (!vb_died) {
		kill(vb, SIGKILL);
		waitpid(vb, NULL, 0);
	}
}

/*
 * A process whose main thread called pthread_exit() runs on in its other
 * threads: it is a victim like any other, not one "already exiting".
 */
TEST_F_TIMEOUT(cells, leaderless_process_is_killed, 120)
{
	int ready[2];
	bool died;
	pid_t v, h;
	char c;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, lmk_set(CELL_A, "minfree", LEVEL_MINFREE "\n"));
	ASSERT_EQ(0, lmk_set(CELL_A, "adj", LEVEL_ADJ "\n"));
	v = leaderless_holder(&self->a, 900, 4, ready);
	ASSERT_LT(0, v);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* Time for the main thread to finish its exit. */
	usleep(100000);
	h = grower(CG_A, 36, ready);
	ASSERT_LT(0, h);
	died = dies_within(v, 10000);
	EXPECT_TRUE(died) TH_LOG("a process without its main thread was passed over");
	EXPECT_EQ(1, lmk_kills(CELL_A));
	kill(h, SIGKILL);
	waitpid(h, NULL, 0);
	if (!died) {
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
	}
}

static int sharer_fn(void *arg)
{
	for (;;)
		pause();
	return 0;
}

/*
 * A holder with a CLONE_VM child: another process on the same memory. No
 * PR_SET_PDEATHSIG on the child: only the killer is to end it. Its pid
 * goes to *@sharer.
 */
static pid_t sharing_holder(const struct cell *in, int adj, long mib, int *ready,
			    pid_t *sharer)
{
	pid_t pid = fork();
	char *stack;

	if (pid == 0) {
		holder_enter(in, "lmk-sharing", adj, mib);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		stack = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (stack == MAP_FAILED)
			_exit(93);
		*sharer = clone(sharer_fn, stack + 65536, CLONE_VM | SIGCHLD, NULL);
		if (*sharer < 0 || write(ready[1], "s", 1) != 1)
			_exit(94);
		for (;;)
			pause();
	}
	return pid;
}

/*
 * Killing a process frees nothing while another process shares its
 * memory: the sharer is killed with it, in the same kill, and the memory
 * is then freed (the next kill waits for that, not for the victim's
 * threads to let go of it).
 */
TEST_F_TIMEOUT(cells, clone_vm_sharer_dies_with_victim, 120)
{
	pid_t *sharer = shared_alloc(sizeof(*sharer));
	bool died, sharer_gone = false;
	int ready[2], i;
	pid_t v, h, s;
	char c;

	ASSERT_FALSE(!sharer);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, lmk_set(CELL_A, "minfree", LEVEL_MINFREE "\n"));
	ASSERT_EQ(0, lmk_set(CELL_A, "adj", LEVEL_ADJ "\n"));
	v = sharing_holder(&self->a, 900, 4, ready, sharer);
	ASSERT_LT(0, v);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	s = *sharer;
	ASSERT_LT(0, s);
	h = grower(CG_A, 36, ready);
	ASSERT_LT(0, h);
	died = dies_within(v, 10000);
	for (i = 0; i < 400 && !sharer_gone; i++) {
		sharer_gone = gone(s);
		usleep(5000);
	}
	EXPECT_TRUE(died);
	EXPECT_TRUE(sharer_gone) TH_LOG("the CLONE_VM sharer lives on");
	/* One kill: the sharer went with the victim, not as the next one. */
	EXPECT_EQ(1, lmk_kills(CELL_A));
	kill(h, SIGKILL);
	waitpid(h, NULL, 0);
	if (!sharer_gone)
		kill(s, SIGKILL);
	if (!died) {
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
	}
	shared_free(sharer, sizeof(*sharer));
}

/* Tell the harness that OOM reports until the next mark are ours. */
static void oom_mark(const char *msg)
{
	write_file("/dev/kmsg", msg);
}

TEST_F_TIMEOUT(cells, disabled_leaves_memcg_oom, 120)
{
	int ready[2], i, status = 0;
	long oom0 = memory_event(CG_A, "oom_kill");
	pid_t v, h;
	char c;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, lmk_set(CELL_A, "minfree", LEVEL_MINFREE "\n"));
	ASSERT_EQ(0, lmk_set(CELL_A, "adj", LEVEL_ADJ "\n"));
	ASSERT_EQ(0, lmk_set(CELL_A, "enabled", "0\n"));
	v = holder(CG_A, &self->a, "lmk-v900", 900, 4, ready);
	ASSERT_LT(0, v);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* Past memory.max: only the memcg OOM killer can make room. */
	oom_mark("cask-test: oom expected\n");
	h = grower(CG_A, A_MAX_MIB + 16, ready);
	ASSERT_LT(0, h);
	for (i = 0; i < 2000 && !dead(h); i++)
		usleep(10000);
	oom_mark("cask-test: oom done\n");
	EXPECT_LT(oom0, memory_event(CG_A, "oom_kill"));
	EXPECT_EQ(0, lmk_kills(CELL_A));
	kill(h, SIGKILL);
	waitpid(h, &status, 0);
	kill(v, SIGKILL);
	waitpid(v, NULL, 0);
}

/*
 * With the reap param off the killer still kills, and sees the victim's
 * memory freed by its exit (freed_us set, well before the kill's 1 s
 * timeout, which would leave it unset); on both kernels.
 */
TEST_F_TIMEOUT(cells, kills_without_reap, 120)
{
	char freed[64];
	int ready[2];
	bool died;
	pid_t v, h;
	char c;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, write_file(REAP, "N\n"));
	ASSERT_EQ(0, lmk_set(CELL_A, "minfree", LEVEL_MINFREE "\n"));
	ASSERT_EQ(0, lmk_set(CELL_A, "adj", LEVEL_ADJ "\n"));
	ASSERT_EQ(0, lmk_get(CELL_A, "freed_us", freed, sizeof(freed)));
	ASSERT_STREQ("0 0", freed);
	v = holder(CG_A, &self->a, "lmk-v900", 900, 4, ready);
	ASSERT_LT(0, v);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	h = grower(CG_A, 36, ready);
	ASSERT_LT(0, h);
	died = dies_within(v, 10000);
	/* The tick sees the memory freed within 10 ms of the exit. */
	usleep(200000);
	EXPECT_TRUE(died);
	EXPECT_EQ(1, lmk_kills(CELL_A));
	ASSERT_EQ(0, lmk_get(CELL_A, "freed_us", freed, sizeof(freed)));
	EXPECT_STRNE("0 0", freed);
	EXPECT_LT(atol(freed), 1000000) TH_LOG("freed_us %s", freed);
	EXPECT_EQ(0, memory_event(CG_A, "oom_kill"));
	kill(h, SIGKILL);
	waitpid(h, NULL, 0);
	if (!died) {
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
	}
}

/* ---- siblings under a parent with a limit ---------------------------------------- */

#define CG_PARENT	"cask-lmk-p"
#define CG_PA		CG_PARENT "/a"
#define CG_PB		CG_PARENT "/b"

/*
 * Two containers share a parent whose memory.max is below the sum of
 * theirs. A filling the parent must not make B kill: a cell's free memory
 * is its own cgroup's limit minus its usage, not the tightest over its
 * ancestors (B's own 60 MiB free stay far above its 32 MiB level, while
 * the parent's drop below it).
 */
TEST(sibling_fill_kills_nothing_in_other)
{
	struct cell a = { 0 }, b = { 0 };
	bool died = false;
	int ready[2], i;
	pid_t v, h;
	char c;

	if (lmk_missing())
		SKIP(return, "%s", lmk_missing());
	ASSERT_EQ(0, pipe(ready));
	if (mkdir(CGROOT "/" CG_PARENT, 0755))
		ASSERT_EQ(EEXIST, errno);
	ASSERT_EQ(0, cg_set(CG_PARENT, "cgroup.subtree_control", "+memory"));
	ASSERT_EQ(0, cg_set(CG_PARENT, "memory.max", "83886080"));	/* 80 MiB */
	ASSERT_EQ(0, cell_make(&a, "lmk-pa", CG_PA, false));
	ASSERT_EQ(0, cell_make(&b, "lmk-pb", CG_PB, true));
	ASSERT_EQ(0, lmk_set("lmk-pb", "minfree", LEVEL_MINFREE "\n"));
	ASSERT_EQ(0, lmk_set("lmk-pb", "adj", LEVEL_ADJ "\n"));
	v = holder(CG_PB, &b, "lmk-pb-v900", 900, 4, ready);
	ASSERT_LT(0, v);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* A takes the parent to under 32 MiB free; A itself has no levels. */
	h = grower(CG_PA, 50, ready);
	ASSERT_LT(0, h);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	/* Time for several ticks of B (every 100 ms, 10 ms within a level). */
	for (i = 0; i < 50 && !died; i++) {
		died = dead(v);
		usleep(10000);
	}
	EXPECT_FALSE(died) TH_LOG("B killed its process for A's memory");
	EXPECT_EQ(0, lmk_kills("lmk-pb"));
	EXPECT_EQ(0, lmk_kills("lmk-pa"));
	kill(h, SIGKILL);
	waitpid(h, NULL, 0);
	if (!died) {
		kill(v, SIGKILL);
		waitpid(v, NULL, 0);
	}
	cell_end(&a);
	cell_end(&b);
	rmdir(CGROOT "/" CG_PARENT);
}

/* ---- an unprivileged user's own cell ------------------------------------------ */

/*
 * An unprivileged user's own cell (a user and IPC namespace of its own, in
 * a cgroup it shares with root) kills its own processes, never root's: a
 * cell's killer kills only tasks with credentials of its user namespace.
 */
#define CG_SHARED	"cask-lmk-shared"
#define NOBODY		65534

/* Wait up to @ms for @pid's end: its child_status(), or -1 if it lives on. */
static int status_within(pid_t pid, int ms)
{
	int status, i;

	for (i = 0; i < ms / 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) :
						   128 + WTERMSIG(status);
		usleep(10000);
	}
	return -1;
}

/* As nobody, in a user and IPC namespace of its own: a step number on failure. */
static int unpriv_cell(int ready)
{
	char map[32], cell[64], path[256];
	pid_t kid;
	int st;

	if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
		return 1;
	/*
	 * Changing ids made the process non-dumpable, which gives its /proc
	 * files (uid_map, oom_score_adj) to the host's root: take them back.
	 */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 2;
	if (unshare(CLONE_NEWUSER | CLONE_NEWIPC))
		return 3;
	snprintf(map, sizeof(map), "0 %d 1\n", NOBODY);
	if (write_file("/proc/self/setgroups", "deny") ||
	    write_file("/proc/self/uid_map", map) ||
	    write_file("/proc/self/gid_map", map))
		return 4;
	/* Its cell, made at the first use of a driver's file. */
	if (read_file(CASK "/self", cell, sizeof(cell)))
		return 5;
	kid = fork();
	if (kid == 0) {
		/* Its own process: less attractive than root's. */
		if (set_adj(getpid(), 900))
			_exit(1);
		for (;;)
			pause();
	}
	if (kid < 0)
		return 6;
	snprintf(path, sizeof(path), CELLS "%s/lmk/adj", cell);
	if (write_file(path, "500"))
		return 7;
	/* More than any free memory: the level is crossed at once. */
	snprintf(path, sizeof(path), CELLS "%s/lmk/minfree", cell);
	if (write_file(path, "2147483647"))
		return 8;
	if (write(ready, "u", 1) != 1)
		return 9;
	st = status_within(kid, 10000);
	if (st < 0)
		kill(kid, SIGKILL);
	return st == 128 + SIGKILL ? 0 : 10;
}

TEST(unprivileged_cell_kills_only_its_own)
{
	pid_t root_victim, user;
	int ready[2], st;
	char c;

	if (lmk_missing())
		SKIP(return, "%s", lmk_missing());
	ASSERT_EQ(0, pipe(ready));
	mkdir(CGROOT "/" CG_SHARED, 0755);
	ASSERT_EQ(0, write_file(CGROOT "/" CG_SHARED "/memory.max", "512M"));
	root_victim = fork();
	ASSERT_LE(0, root_victim);
	if (root_victim == 0) {
		/* The best victim there, were it the cell's to kill. */
		close(ready[0]);
		close(ready[1]);
		if (join_cgroup(CG_SHARED) || set_adj(getpid(), 1000))
			_exit(1);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	user = fork();
	ASSERT_LE(0, user);
	if (user == 0) {
		close(ready[0]);
		/* Not a victim itself, whatever adj the runner has. */
		if (join_cgroup(CG_SHARED) || set_adj(getpid(), 0))
			_exit(20);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(unpriv_cell(ready[1]));
	}
	/* A child that fails before its write ends the read. */
	close(ready[1]);
	EXPECT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	/* The user's own process goes; root's stays. */
	st = child_status(user);
	EXPECT_EQ(0, st) TH_LOG("the user's cell: step %d", st);
	EXPECT_EQ(0, kill(root_victim, 0)) TH_LOG("root's process was killed");
	kill(root_victim, SIGKILL);
	waitpid(root_victim, NULL, 0);
	rmdir(CGROOT "/" CG_SHARED);
}

/* ---- many cells in one memory cgroup ---------------------------------------- */

#define CG_MANY		"cask-lmk-many"
#define NR_MANY		6
#define WALKS_WAIT	"walks of every process in a second, waiting"

/* Does the kernel log after @fd's position hold @what? */
static bool kmsg_has(int fd, const char *what)
{
	char rec[1024];
	ssize_t n;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		rec[n] = '\0';
		if (strstr(rec, what))
			return true;
	}
	return false;
}

/*
 * Cells cut from one container (one memory cgroup) share one budget of
 * walks of every process: six cells always within a level and without a
 * victim search ten times a second each (their idle backoff), within
 * their own budgets but past the memcg's 40 walks a second together,
 * which the killer says it waits for.
 */
TEST(walks_shared_by_memcg_cells)
{
	static char names[NR_MANY][16];
	struct cell cells[NR_MANY] = { };
	bool waited;
	int i, fd;

	if (lmk_missing())
		SKIP(return, "%s", lmk_missing());
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, lseek(fd, 0, SEEK_END));
	for (i = 0; i < NR_MANY; i++) {
		snprintf(names[i], sizeof(names[i]), "lmk-m%d", i);
		ASSERT_EQ(0, cell_make(&cells[i], names[i], CG_MANY, false));
	}
	/* Within the level for ever; adj 1000: nobody there to kill. */
	for (i = 0; i < NR_MANY; i++) {
		ASSERT_EQ(0, lmk_set(names[i], "adj", "1000\n"));
		ASSERT_EQ(0, lmk_set(names[i], "minfree", "2147483647\n"));
	}
	usleep(2000000);
	for (i = 0; i < NR_MANY; i++)
		ASSERT_EQ(0, lmk_set(names[i], "minfree", "\n"));
	waited = kmsg_has(fd, WALKS_WAIT);
	EXPECT_TRUE(waited) TH_LOG("%d cells of one memcg walked unbounded", NR_MANY);
	for (i = 0; i < NR_MANY; i++)
		EXPECT_EQ(0, lmk_kills(names[i]));
	for (i = NR_MANY - 1; i >= 0; i--)
		cell_end(&cells[i]);
	close(fd);
}

TEST_HARNESS_MAIN
