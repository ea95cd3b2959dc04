// SPDX-License-Identifier: GPL-2.0
/*
 * cask's modules unloading and loading while user space uses them. Readers
 * of /sys/kernel/cask/self, each in a fresh IPC namespace so that a read may
 * make an auto cell, openers of /dev/log/main and writers of register run in
 * loops while every cask module is removed and loaded again, round after
 * round (registered cells also take a wake lock, a host wakeup source of
 * cask_power): the windows at the ends of module init and exit, where the files
 * exist but the registry does not. Afterwards the modules unload and load
 * cleanly once more and the host's cell is the only one.
 *
 * The modules are taken from /lib/modules/cask (the guest's layout), those
 * loaded when the test starts, cask_core first; they are left loaded, as
 * found. A splat fails the run by itself (panic_on_warn, KASAN, lockdep).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "cask_util.h"

#define MOD_DIR		"/lib/modules/cask"
#define MAX_MODS	16
#define ROUNDS		5
/* Reads of self per IPC namespace: after an unload, each may make a cell again. */
#define NREADS		64
#define NREADERS	2
#define NREGISTRARS	1

struct mods {
	int n;
	char name[MAX_MODS][64];	/* in load order */
};

static bool module_loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	return !access(path, F_OK);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The cask modules loaded now, cask_core first, the others by name. */
static int find_mods(struct mods *m)
{
	struct dirent *d;
	DIR *dir;
	size_t len;

	m->n = 0;
	dir = opendir(MOD_DIR);
	if (!dir)
		return -errno;
	while ((d = readdir(dir)) && m->n < MAX_MODS) {
		len = strlen(d->d_name);
		if (len < 4 || len - 3 >= sizeof(m->name[0]) ||
		    strcmp(d->d_name + len - 3, ".ko"))
			continue;
		snprintf(m->name[m->n], sizeof(m->name[0]), "%.*s", (int)(len - 3), d->d_name);
		if (module_loaded(m->name[m->n]))
			m->n++;
	}
	closedir(dir);
	qsort(m->name, m->n, sizeof(m->name[0]), cmp_names);
	for (len = 0; len < (size_t)m->n; len++) {
		if (strcmp(m->name[len], "cask_core"))
			continue;
		memmove(m->name[1], m->name[0], len * sizeof(m->name[0]));
		snprintf(m->name[0], sizeof(m->name[0]), "cask_core");
		return m->n;
	}
	return -ENOENT;		/* cask_core is not loaded */
}

/* delete_module() as rmmod does it; in use is retried for 10 s. 0 or -errno. */
static int mod_unload(const char *name)
{
	int i, err = 0;

	for (i = 0; i < 1000; i++) {
		if (!syscall(SYS_delete_module, name, O_NONBLOCK))
			return 0;
		err = errno;
		if (err != EWOULDBLOCK && err != EAGAIN && err != EBUSY)
			break;
		usleep(10000);
	}
	return -err;
}

struct race {
	int stop;
	long selfs, opens, regs;	/* successes, for the log */
};

static bool stopped(struct race *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_SEQ_CST);
}

/* Read self and open a log from fresh IPC namespaces until stopped. */
static void self_reader(struct race *r)
{
	char buf[64];
	pid_t pid;
	int i, fd;

	while (!stopped(r)) {
		pid = fork();
		if (pid == 0) {
			if (unshare(CLONE_NEWIPC))
				_exit(1);
			for (i = 0; i < NREADS; i++) {
				if (!read_file(CASK "/self", buf, sizeof(buf)))
					__atomic_add_fetch(&r->selfs, 1, __ATOMIC_RELAXED);
			}
			fd = open("/dev/log/main", O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				__atomic_add_fetch(&r->opens, 1, __ATOMIC_RELAXED);
				close(fd);
			}
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
}

/* Register children in IPC namespaces of their own until stopped. */
static void registrar(struct race *r, int id)
{
	char name[32], path[128], c;
	int ready[2], hold[2], i;
	pid_t pid;

	for (i = 0; !stopped(r); i++) {
		if (pipe(ready) || pipe(hold))
			return;
		pid = fork();
		if (pid == 0) {
			close(ready[0]);
			close(hold[1]);
			if (unshare(CLONE_NEWIPC) || write(ready[1], "r", 1) != 1)
				_exit(1);
			/* Until the registrar is done with us. */
			_exit(read(hold[0], &c, 1) == 0 ? 0 : 2);
		}
		close(ready[1]);
		close(hold[0]);
		if (pid > 0 && read(ready[0], &c, 1) == 1) {
			snprintf(name, sizeof(name), "race%d-%d", id, i % 100);
			if (!cask_register(name, pid)) {
				__atomic_add_fetch(&r->regs, 1, __ATOMIC_RELAXED);
				/* A wake lock: a host wakeup source to release. */
				snprintf(path, sizeof(path), CASK "/cells/%s/power/wake_lock",
					 name);
				write_file(path, "race");
				if (i % 2)
					cask_unregister(name);
			}
		}
		close(ready[0]);
		close(hold[1]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
}

/* Every cell but the host's gone, within 10 s (releases are deferred). */
static bool only_host_cell(void)
{
	char buf[64];
	int i;

	for (i = 0; i < 200; i++) {
		if (count_cells() == 1 && !cell_value("host", "id", buf, sizeof(buf)))
			return true;
		usleep(50000);
	}
	return false;
}

/*
 * In a fresh IPC namespace, first use (an open of a log, or reading self)
 * makes an auto cell, which self names and which ends with us.
 */
static int auto_cell_works(void)
{
	char buf[64], want[64];
	struct stat st;
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (unshare(CLONE_NEWIPC) || stat("/proc/self/ns/ipc", &st))
			_exit(1);
		snprintf(want, sizeof(want), "ipc-%lu", (unsigned long)st.st_ino);
		fd = open("/dev/log/main", O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno != ENOENT)
			_exit(2);
		if (read_file(CASK "/self", buf, sizeof(buf)))
			_exit(3);
		_exit(strcmp(buf, want) ? 4 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

struct workers {
	struct race *race;	/* shared with them */
	pid_t pid[NREADERS + NREGISTRARS];
	int n;
};

FIXTURE(modules) {
	struct mods m;
	struct workers w;
};

FIXTURE_SETUP(modules)
{
	if (geteuid())
		SKIP(return, "needs root");
	if (find_mods(&self->m) < 0)
		SKIP(return, "cask_core is not loaded from " MOD_DIR);
	self->w.race = shared_alloc(sizeof(*self->w.race));
	ASSERT_NE(NULL, self->w.race);
}

static void stop_workers(struct workers *w)
{
	int i;

	if (!w->race)
		return;
	__atomic_store_n(&w->race->stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < w->n; i++)
		waitpid(w->pid[i], NULL, 0);
	w->n = 0;
}

FIXTURE_TEARDOWN(modules)
{
	int i;

	stop_workers(&self->w);
	/* As found: every module that was loaded is loaded again. */
	for (i = 0; i < self->m.n; i++)
		if (!module_loaded(self->m.name[i]))
			cask_module_load(self->m.name[i]);
	shared_free(self->w.race, sizeof(*self->w.race));
}

static pid_t start_worker(struct race *r, int id)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	/* Do not outlive a test that failed an assertion. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (id < NREADERS)
		self_reader(r);
	else
		registrar(r, id);
	_exit(0);
}

TEST_F_TIMEOUT(modules, load_unload_race, 300)
{
	struct mods *m = &self->m;
	const char *name;
	char buf[64];
	int round, i;

	for (i = 0; i < NREADERS + NREGISTRARS; i++) {
		self->w.pid[i] = start_worker(self->w.race, i);
		ASSERT_LT(0, self->w.pid[i]);
		self->w.n++;
	}
	for (round = 0; round < ROUNDS; round++) {
		/* Let the workers make cells; vary where unload finds them. */
		usleep(100000 + round * 70000);
		for (i = m->n - 1; i >= 0; i--) {
			name = m->name[i];
			ASSERT_EQ(0, mod_unload(name)) TH_LOG("round %d: unload %s", round, name);
		}
		usleep(round * 20000);
		for (i = 0; i < m->n; i++) {
			name = m->name[i];
			ASSERT_EQ(0, cask_module_load(name))
				TH_LOG("round %d: load %s", round, name);
		}
	}
	stop_workers(&self->w);
	TH_LOG("%ld reads of self, %ld opens, %ld registrations succeeded",
	       self->w.race->selfs, self->w.race->opens, self->w.race->regs);

	/* Nothing was left behind that keeps a module or its files. */
	EXPECT_TRUE(only_host_cell());
	for (i = m->n - 1; i >= 0; i--) {
		name = m->name[i];
		ASSERT_EQ(0, mod_unload(name)) TH_LOG("unload %s", name);
	}
	EXPECT_NE(0, access(CASK, F_OK));
	for (i = 0; i < m->n; i++) {
		name = m->name[i];
		ASSERT_EQ(0, cask_module_load(name)) TH_LOG("load %s", name);
	}

	/* And all works as after boot. */
	EXPECT_TRUE(only_host_cell());
	ASSERT_EQ(0, read_file(CASK "/self", buf, sizeof(buf)));
	EXPECT_STREQ("host", buf);
	ASSERT_EQ(0, cell_value("host", "id", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
	EXPECT_EQ(0, auto_cell_works());
	EXPECT_TRUE(only_host_cell());
}

TEST_HARNESS_MAIN
