// SPDX-License-Identifier: GPL-2.0
/*
 * binderfs from user space. The UAPI cases run differentially: on the
 * kernel's binderfs (variant "upstream": binder_linux.ko, filesystem type
 * "binder") and on cask's (variant "cask": the type cask_binder registered,
 * "binder" or its fstype=), and must see the same answers. The cask-only
 * cases check what has no upstream counterpart: the cell a mount belongs
 * to, the per-cell bound, the device names that are the cell's own
 * contexts (Documentation/binder.rst, "binderfs").
 *
 * Each case runs in its own mount namespace. Children that must fail or
 * succeed on their own report the line of their first failed check as
 * their exit status.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "cask_binder.h"
#include "cask_fault.h"

#define CASK_FSTYPE	"/sys/module/cask_binder/parameters/fstype"

/*
 * What features/ must hold: upstream's three; cask's, what it implements
 * (binderfs.c's cbinderfs_features[], one line each).
 */
static const char *const upstream_features[] = {
	"extended_error", "freeze_notification", "oneway_spam_detection",
};

static const char *const cask_features[] = {
	"extended_error", "freeze_notification", "oneway_spam_detection",
};

/* The filesystem type cask's binderfs has in this boot. */
static const char *cask_fstype(void)
{
	static char name[64];
	char line[128];
	FILE *f;

	if (!read_file(CASK_FSTYPE, name, sizeof(name)) && name[0])
		return name;
	f = fopen("/proc/filesystems", "re");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (!strcmp(line, "nodev\tcask_binder\n")) {
				fclose(f);
				return "cask_binder";
			}
		}
		fclose(f);
	}
	return "binder";
}

/* BINDER_CTL_ADD of @name in @mnt: 0 or -errno. */
static int ctl_add(const char *mnt, const char *name,
		   struct binderfs_device *dev)
{
	struct binderfs_device local;
	char path[PATH_MAX];
	int fd, ret = 0;

	if (!dev)
		dev = &local;
	memset(dev, 0, sizeof(*dev));
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	snprintf(path, sizeof(path), "%s/binder-control", mnt);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, BINDER_CTL_ADD, dev))
		ret = -errno;
	close(fd);
	return ret;
}

/* Open @mnt/@name and check BINDER_VERSION: 0 or -errno. */
static int dev_version(const char *mnt, const char *name)
{
	struct binder_version v = { 0 };
	char path[PATH_MAX];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", mnt, name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, BINDER_VERSION, &v))
		ret = -errno;
	else if (v.protocol_version != BINDER_CURRENT_PROTOCOL_VERSION)
		ret = -EPROTO;
	close(fd);
	return ret;
}

static int mount_bfs(const char *type, const char *mnt, const char *opts)
{
	return mount(type, mnt, type, 0, opts) ? -errno : 0;
}

/* A fresh private mount namespace for the calling process. */
static int private_mounts(void)
{
	if (unshare(CLONE_NEWNS))
		return -errno;
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ? -errno : 0;
}

/* In a child: become root of a new user namespace (and @more namespaces). */
static int become_userns_root(int more)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];

	if (unshare(CLONE_NEWUSER | more))
		return -errno;
	if (write_file("/proc/self/setgroups", "deny"))
		return -1;
	snprintf(map, sizeof(map), "0 %u 1\n", uid);
	if (write_file("/proc/self/uid_map", map))
		return -1;
	snprintf(map, sizeof(map), "0 %u 1\n", gid);
	if (write_file("/proc/self/gid_map", map))
		return -1;
	return 0;
}

/* Join @pid's namespace of type @type: 0 or -errno. */
static int setns_pid(pid_t pid, int type)
{
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid,
		 type == CLONE_NEWIPC ? "ipc" : "mnt");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, type))
		ret = -errno;
	close(fd);
	return ret;
}

#define CHILD_OK(cond) do { if (!(cond)) _exit(__LINE__ & 0xff ?: 1); } while (0)

/* Two mount points, the first with a binderfs mount of @type. */
struct mounts {
	char mnt[64];
	char mnt2[64];
	const char *type;
	bool mounted;
};

FIXTURE(bfs) {
	struct mounts m;
};

FIXTURE_VARIANT(bfs) {
	bool upstream;
};

FIXTURE_VARIANT_ADD(bfs, upstream) {
	.upstream = true,
};

FIXTURE_VARIANT_ADD(bfs, cask) {
	.upstream = false,
};

/* A private mount namespace, two mount points and a mount of @type. */
static int mounts_setup(struct __test_metadata *_metadata,
			struct mounts *self, bool upstream)
{
	int ret;

	ASSERT_EQ(0, private_mounts());
	if (upstream) {
		if (!strcmp(cask_fstype(), "binder"))
			return -ENODEV;
		ret = load_upstream();
		if (ret == -ENOENT)
			return -ENODEV;
		ASSERT_EQ(0, ret) TH_LOG("cannot load " UPSTREAM_KO ": %s",
					 strerror(-ret));
		self->type = "binder";
	} else {
		ASSERT_EQ(0, access("/sys/module/cask_binder", F_OK))
			TH_LOG("cask_binder is not loaded");
		self->type = cask_fstype();
	}
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/binderfs-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->mnt));
	snprintf(self->mnt2, sizeof(self->mnt2), "/tmp/binderfs-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->mnt2));
	ret = mount_bfs(self->type, self->mnt, NULL);
	if (ret == -ENODEV && upstream)
		return -ENODEV;
	ASSERT_EQ(0, ret) TH_LOG("mount -t %s: %s", self->type, strerror(-ret));
	self->mounted = true;
	return 0;
}

static void mounts_teardown(struct mounts *self)
{
	if (self->mounted)
		umount2(self->mnt, MNT_DETACH);
	umount2(self->mnt2, MNT_DETACH);
	rmdir(self->mnt);
	rmdir(self->mnt2);
}

FIXTURE_SETUP(bfs)
{
	/* Where the kernel's binderfs cannot be had, its variant skips. */
	if (mounts_setup(_metadata, &self->m, variant->upstream))
		SKIP(return, "no binderfs of the kernel's binder_linux.ko in this boot");
}

FIXTURE_TEARDOWN(bfs)
{
	mounts_teardown(&self->m);
}

/* ---- the UAPI, on both ------------------------------------------------- */

TEST_F(bfs, control_and_features)
{
	const char *const *want = variant->upstream ? upstream_features : cask_features;
	size_t nwant = variant->upstream ? ARRAY_SIZE(upstream_features) :
					   ARRAY_SIZE(cask_features);
	char path[PATH_MAX], buf[16];
	struct dirent *de;
	size_t n = 0, i;
	struct stat st;
	DIR *d;

	snprintf(path, sizeof(path), "%s/binder-control", self->m.mnt);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0600, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
	ASSERT_EQ(0, stat(self->m.mnt, &st));
	EXPECT_EQ(0755, st.st_mode & 07777);

	/* Exactly the features implemented, each reading 1. */
	snprintf(path, sizeof(path), "%s/features", self->m.mnt);
	d = opendir(path);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		for (i = 0; i < nwant; i++)
			if (!strcmp(de->d_name, want[i]))
				break;
		EXPECT_LT(i, nwant) TH_LOG("unexpected feature %s", de->d_name);
		snprintf(path, sizeof(path), "%s/features/%s", self->m.mnt, de->d_name);
		ASSERT_EQ(0, read_file(path, buf, sizeof(buf)));
		EXPECT_STREQ("1", buf);
		n++;
	}
	closedir(d);
	EXPECT_EQ(nwant, n);

	/* No file can be made but by BINDER_CTL_ADD. */
	snprintf(path, sizeof(path), "%s/file", self->m.mnt);
	EXPECT_GT(0, open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600));
	EXPECT_GT(0, mknod(path, S_IFCHR | 0600, makedev(1, 3)));
	EXPECT_GT(0, mkdir(path, 0700));
}

TEST_F(bfs, add_open_unlink)
{
	struct binderfs_device dev, dev2;
	struct binder_version v;
	char path[PATH_MAX];
	struct stat st, cst;
	int fd;

	ASSERT_EQ(0, ctl_add(self->m.mnt, "my-binder", &dev));
	EXPECT_STREQ("my-binder", dev.name);
	snprintf(path, sizeof(path), "%s/my-binder", self->m.mnt);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0600, st.st_mode & 07777);
	EXPECT_EQ(dev.major, major(st.st_rdev));
	EXPECT_EQ(dev.minor, minor(st.st_rdev));
	snprintf(path, sizeof(path), "%s/binder-control", self->m.mnt);
	ASSERT_EQ(0, stat(path, &cst));
	EXPECT_EQ(major(cst.st_rdev), dev.major);
	EXPECT_NE(minor(cst.st_rdev), dev.minor);
	EXPECT_EQ(0, dev_version(self->m.mnt, "my-binder"));

	/* A second device: the same major, another minor. */
	ASSERT_EQ(0, ctl_add(self->m.mnt, "my-binder2", &dev2));
	EXPECT_EQ(dev.major, dev2.major);
	EXPECT_NE(dev.minor, dev2.minor);

	/* Unlinked, it is gone; an open file of it still works. */
	snprintf(path, sizeof(path), "%s/my-binder", self->m.mnt);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, unlink(path));
	EXPECT_EQ(-ENOENT, dev_version(self->m.mnt, "my-binder"));
	EXPECT_EQ(0, ioctl(fd, BINDER_VERSION, &v));
	close(fd);
	/* And the name can be made again. */
	EXPECT_EQ(0, ctl_add(self->m.mnt, "my-binder", NULL));
	EXPECT_EQ(0, dev_version(self->m.mnt, "my-binder"));
}

TEST_F(bfs, duplicate_names)
{
	ASSERT_EQ(0, ctl_add(self->m.mnt, "dup", NULL));
	EXPECT_EQ(-EEXIST, ctl_add(self->m.mnt, "dup", NULL));
	EXPECT_EQ(-EEXIST, ctl_add(self->m.mnt, "binder-control", NULL));
	EXPECT_EQ(-EEXIST, ctl_add(self->m.mnt, "features", NULL));
	/* A failed add leaves the mount as it was. */
	EXPECT_EQ(0, dev_version(self->m.mnt, "dup"));
	EXPECT_EQ(0, ctl_add(self->m.mnt, "dup2", NULL));
}

TEST_F(bfs, bad_names)
{
	struct binderfs_device dev;
	char path[PATH_MAX];
	int fd;

	/* What the VFS refuses as one name: upstream answers EACCES. */
	EXPECT_EQ(-EACCES, ctl_add(self->m.mnt, "", NULL));
	EXPECT_EQ(-EACCES, ctl_add(self->m.mnt, ".", NULL));
	EXPECT_EQ(-EACCES, ctl_add(self->m.mnt, "..", NULL));
	EXPECT_EQ(-EACCES, ctl_add(self->m.mnt, "a/b", NULL));

	/* A name without its NUL is cut at BINDERFS_MAX_NAME. */
	memset(&dev, 'x', sizeof(dev));
	snprintf(path, sizeof(path), "%s/binder-control", self->m.mnt);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ioctl(fd, BINDER_CTL_ADD, &dev));
	dev.name[BINDERFS_MAX_NAME] = '\0';
	EXPECT_EQ(BINDERFS_MAX_NAME, strlen(dev.name));
	EXPECT_EQ(0, dev_version(self->m.mnt, dev.name));

	/* Other requests and bad pointers. */
	EXPECT_EQ(-1, ioctl(fd, BINDER_VERSION, &dev));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, BINDER_CTL_ADD, NULL));
	EXPECT_EQ(EFAULT, errno);
	close(fd);
}

TEST_F(bfs, control_cannot_go)
{
	char path[PATH_MAX], other[PATH_MAX];

	snprintf(path, sizeof(path), "%s/binder-control", self->m.mnt);
	snprintf(other, sizeof(other), "%s/dev", self->m.mnt);
	ASSERT_EQ(0, ctl_add(self->m.mnt, "dev", NULL));
	EXPECT_EQ(-1, unlink(path));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, rename(path, other));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, rename(other, path));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(0, access(path, F_OK));
	/* Other devices may be renamed. */
	snprintf(path, sizeof(path), "%s/dev2", self->m.mnt);
	EXPECT_EQ(0, rename(other, path));
	EXPECT_EQ(0, dev_version(self->m.mnt, "dev2"));
}

TEST_F(bfs, max_option)
{
	char path[PATH_MAX];

	ASSERT_EQ(0, mount_bfs(self->m.type, self->m.mnt2, "max=2"));
	EXPECT_EQ(0, ctl_add(self->m.mnt2, "a", NULL));
	EXPECT_EQ(0, ctl_add(self->m.mnt2, "b", NULL));
	EXPECT_EQ(-ENOSPC, ctl_add(self->m.mnt2, "c", NULL));
	/* A device unlinked (and not open) no longer counts. */
	snprintf(path, sizeof(path), "%s/a", self->m.mnt2);
	ASSERT_EQ(0, unlink(path));
	EXPECT_EQ(0, ctl_add(self->m.mnt2, "c", NULL));
	EXPECT_EQ(-ENOSPC, ctl_add(self->m.mnt2, "d", NULL));
	/* Remounting changes it. */
	ASSERT_EQ(0, mount(NULL, self->m.mnt2, NULL, MS_REMOUNT, "max=3"));
	EXPECT_EQ(0, ctl_add(self->m.mnt2, "d", NULL));
	EXPECT_EQ(-ENOSPC, ctl_add(self->m.mnt2, "e", NULL));
	/* Other mounts are not bound by it. */
	EXPECT_EQ(0, ctl_add(self->m.mnt, "e", NULL));
	EXPECT_EQ(0, umount2(self->m.mnt2, MNT_DETACH));

	/* Above the minors there are, or an unknown option: refused. */
	EXPECT_EQ(-EINVAL, mount_bfs(self->m.type, self->m.mnt2, "max=1048577"));
	EXPECT_EQ(-EINVAL, mount_bfs(self->m.type, self->m.mnt2, "nosuch=1"));
	EXPECT_EQ(0, mount_bfs(self->m.type, self->m.mnt2, "max=1048576"));
}

TEST_F(bfs, stats_mode)
{
	pid_t pid;

	/* The stats mode cannot change on a remount. */
	ASSERT_EQ(0, mount_bfs(self->m.type, self->m.mnt2, "stats=global"));
	EXPECT_EQ(-1, mount(NULL, self->m.mnt, NULL, MS_REMOUNT, "stats=global"));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mount(NULL, self->m.mnt2, NULL, MS_REMOUNT, ""));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, mount_bfs(self->m.type, self->m.mnt, "stats=nosuch"));

	/* A user namespace's root may not ask for it. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_OK(!become_userns_root(CLONE_NEWNS));
		CHILD_OK(mount_bfs(self->m.type, self->m.mnt2, "stats=global") == -EPERM);
		CHILD_OK(!mount_bfs(self->m.type, self->m.mnt2, NULL));
		_exit(0);
	}
	EXPECT_EQ(0, child_status(pid));
}

/* A user namespace's root mounts, makes devices and uses them. */
TEST_F(bfs, userns_mount)
{
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct binderfs_device dev;
		char path[PATH_MAX];
		struct stat st;

		CHILD_OK(!become_userns_root(CLONE_NEWNS | CLONE_NEWIPC));
		CHILD_OK(!mount_bfs(self->m.type, self->m.mnt2, NULL));
		CHILD_OK(!ctl_add(self->m.mnt2, "mine", &dev));
		CHILD_OK(!dev_version(self->m.mnt2, "mine"));
		snprintf(path, sizeof(path), "%s/mine", self->m.mnt2);
		CHILD_OK(!stat(path, &st) && st.st_uid == 0 && st.st_gid == 0);
		CHILD_OK(!unlink(path));
		snprintf(path, sizeof(path), "%s/binder-control", self->m.mnt2);
		CHILD_OK(unlink(path) && errno == EPERM);
		_exit(0);
	}
	EXPECT_EQ(0, child_status(pid));
}

/* ---- cask's rules ------------------------------------------------------ */

/* The same setting, on cask only. */
FIXTURE(cask) {
	struct mounts m;
};

FIXTURE_SETUP(cask)
{
	ASSERT_EQ(0, mounts_setup(_metadata, &self->m, false));
}

FIXTURE_TEARDOWN(cask)
{
	mounts_teardown(&self->m);
}

/*
 * A device named as one of the module's devices is the cell's context of
 * that name; another name is a context of its own.
 */
TEST_F(cask, cell_device_names)
{
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct bdev dev, fsdev, own;
		char path[PATH_MAX];

		/* A fresh cell, with a fresh /dev/binder context. */
		CHILD_OK(!unshare(CLONE_NEWIPC));
		CHILD_OK(!mount_bfs(self->m.type, self->m.mnt2, NULL));
		CHILD_OK(!ctl_add(self->m.mnt2, "binder", NULL));
		CHILD_OK(!ctl_add(self->m.mnt2, "anbox-binder", NULL));
		CHILD_OK(!bdev_open(&dev, "/dev/binder", 0, BMAP_SIZE));
		CHILD_OK(!ioctl(dev.fd, BINDER_SET_CONTEXT_MGR, 0));
		snprintf(path, sizeof(path), "%s/binder", self->m.mnt2);
		CHILD_OK(!bdev_open(&fsdev, path, 0, BMAP_SIZE));
		CHILD_OK(ioctl(fsdev.fd, BINDER_SET_CONTEXT_MGR, 0) && errno == EBUSY);
		snprintf(path, sizeof(path), "%s/anbox-binder", self->m.mnt2);
		CHILD_OK(!bdev_open(&own, path, 0, BMAP_SIZE));
		CHILD_OK(!ioctl(own.fd, BINDER_SET_CONTEXT_MGR, 0));
		_exit(0);
	}
	EXPECT_EQ(0, child_status(pid));
}

/*
 * The cell's max_binderfs_devices bounds all its mounts together. The
 * limit is the host's: the test, in the host, sets it for the child's
 * cell, which reads it but may not write it even to lower it.
 */
TEST_F(cask, cell_bound)
{
	char cell[64], path[PATH_MAX];
	int up[2], down[2];
	ssize_t n;
	pid_t pid;

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char val[32];

		CHILD_OK(!unshare(CLONE_NEWIPC));
		CHILD_OK(!mount_bfs(self->m.type, self->m.mnt2, NULL));
		CHILD_OK(!read_file(CASK "/self", cell, sizeof(cell)));
		snprintf(path, sizeof(path), CASK "/cells/%s/binder/max_binderfs_devices", cell);
		CHILD_OK(!read_file(path, val, sizeof(val)) && !strcmp(val, "4096"));
		CHILD_OK(write_file(path, "2") == -EPERM);
		CHILD_OK(write(up[1], cell, strlen(cell)) == (ssize_t)strlen(cell));
		/* The host has set it. */
		CHILD_OK(read(down[0], val, 1) == 1);
		CHILD_OK(!read_file(path, val, sizeof(val)) && !strcmp(val, "2"));
		CHILD_OK(!ctl_add(self->m.mnt2, "a", NULL));
		/* The mount of the test's own cell is not this cell's. */
		CHILD_OK(!ctl_add(self->m.mnt, "a", NULL));
		CHILD_OK(!ctl_add(self->m.mnt2, "binder", NULL));
		CHILD_OK(ctl_add(self->m.mnt2, "c", NULL) == -ENOSPC);
		CHILD_OK(!umount2(self->m.mnt2, MNT_DETACH));
		CHILD_OK(!mount_bfs(self->m.type, self->m.mnt2, NULL));
		CHILD_OK(!ctl_add(self->m.mnt2, "a", NULL));
		CHILD_OK(!ctl_add(self->m.mnt2, "b", NULL));
		CHILD_OK(ctl_add(self->m.mnt2, "c", NULL) == -ENOSPC);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	n = read(up[0], cell, sizeof(cell) - 1);
	if (n > 0) {
		cell[n] = '\0';
		snprintf(path, sizeof(path), CASK "/cells/%s/binder/max_binderfs_devices", cell);
		EXPECT_EQ(0, write_file(path, "2")) TH_LOG("%s", path);
		EXPECT_EQ(1, write(down[1], "", 1));
	}
	close(up[0]);
	close(down[1]);
	EXPECT_EQ(0, child_status(pid));
}

/*
 * A mount holds the module, as every filesystem's; after a lazy umount an
 * open device still does, and works.
 */
TEST_F(cask, mount_holds_module)
{
	struct binder_version v;
	char path[PATH_MAX];
	struct stat st;
	int fd;

	ASSERT_EQ(0, ctl_add(self->m.mnt, "held", NULL));
	EXPECT_EQ(-1, syscall(SYS_delete_module, "cask_binder", O_NONBLOCK));
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("%s", strerror(errno));
	snprintf(path, sizeof(path), "%s/held", self->m.mnt);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, umount2(self->m.mnt, MNT_DETACH));
	self->m.mounted = false;
	EXPECT_EQ(-1, syscall(SYS_delete_module, "cask_binder", O_NONBLOCK));
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, ioctl(fd, BINDER_VERSION, &v));
	EXPECT_EQ(0, stat("/sys/module/cask_binder", &st));
	close(fd);
}

/* ---- allocation failures ------------------------------------------------ */

static struct mounts *fault_mounts;

/* A stats=global mount with a device of each kind, used and removed. */
static int fault_op(void)
{
	struct mounts *m = fault_mounts;
	char path[PATH_MAX];
	int ret;

	ret = mount_bfs(m->type, m->mnt2, "stats=global");
	if (ret)
		return ret;
	ret = ctl_add(m->mnt2, "binder", NULL) ?: ctl_add(m->mnt2, "own", NULL) ?:
	      dev_version(m->mnt2, "own") ?: dev_version(m->mnt2, "binder");
	if (!ret) {
		snprintf(path, sizeof(path), "%s/own", m->mnt2);
		ret = unlink(path) ? -errno : 0;
	}
	if (!ret) {
		snprintf(path, sizeof(path), "%s/binder_logs/state", m->mnt2);
		ret = read_file(path, path, sizeof(path));
	}
	umount2(m->mnt2, MNT_DETACH);
	return ret;
}

/*
 * Every allocation of mounting, adding, opening and reading, failed in
 * turn: a clean error (nothing leaked, the debug kernel's kmemleak and
 * KASAN check), and the next attempt works.
 */
TEST_F_TIMEOUT(cask, alloc_failures, 240)
{
	int fd, n, ret, failures = 0;
	bool done = false;

	if (fault_missing())
		SKIP(return, "%s", fault_missing());
	ASSERT_EQ(0, fault_setup());
	fault_mounts = &self->m;
	fd = fail_nth_fd();
	ASSERT_LE(0, fd);
	for (n = 1; n <= MAX_NTH && !done; n++) {
		fail_nth_set(fd, n);
		ret = fault_op();
		done = fail_nth_unused(fd);
		fail_nth_set(fd, 0);
		if (!ret)
			continue;
		failures++;
		EXPECT_TRUE(ret == -ENOMEM || ret == -ENOSPC)
			TH_LOG("fail-nth %d: %s", n, strerror(-ret));
		EXPECT_EQ(0, fault_op()) TH_LOG("fail-nth %d: no recovery", n);
	}
	close(fd);
	EXPECT_TRUE(done) TH_LOG("more than %d allocations", MAX_NTH);
	EXPECT_LT(0, failures);
	TH_LOG("%d of %d attempts failed cleanly", failures, n - 1);
}

/* ---- binder_logs ------------------------------------------------------- */

/* Read all of @path into @buf (NUL-terminated): 0 or -errno. */
static int read_all(const char *path, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (n < len - 1 && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += r;
	close(fd);
	buf[n] = '\0';
	return r < 0 ? -errno : 0;
}

/*
 * A process of a fresh cell that is its /dev/binder's context manager and
 * has sent one (failed) transaction to itself: it shows in every log.
 * Runs until @stop closes; posts @ready first.
 */
static void __attribute__((noreturn)) logged_proc(int ready, int stop, int newns)
{
	struct bdev dev;
	char c;

	if (newns)
		CHILD_OK(!unshare(newns));
	CHILD_OK(!bdev_open(&dev, "/dev/binder", 0, BMAP_SIZE));
	CHILD_OK(!ioctl(dev.fd, BINDER_SET_CONTEXT_MGR, 0));
	/* To itself: BR_FAILED_REPLY, logged as failed too. */
	CHILD_OK(!txn_send(dev.fd, 0, 1, 0, NULL));
	CHILD_OK(write(ready, "r", 1) == 1);
	CHILD_OK(read(stop, &c, 1) == 0);
	_exit(0);
}

struct logged {
	pid_t pid;
	int stop;
};

static int logged_start(struct logged *l, int newns)
{
	int ready[2], stop[2];
	char c;

	if (pipe2(ready, O_CLOEXEC) || pipe2(stop, O_CLOEXEC))
		return -errno;
	l->pid = fork();
	if (l->pid < 0)
		return -errno;
	if (l->pid == 0) {
		close(ready[0]);
		close(stop[1]);
		logged_proc(ready[1], stop[0], newns);
	}
	close(ready[1]);
	close(stop[0]);
	l->stop = stop[1];
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		return -ECHILD;
	}
	close(ready[0]);
	return 0;
}

static int logged_stop(struct logged *l)
{
	close(l->stop);
	return child_status(l->pid);
}

/*
 * Check the logs of the binderfs mount @mnt (stats=global): they show
 * @own (a process of the mount's cell) and never @other.
 */
static int check_logs(const char *mnt, pid_t own, pid_t other)
{
	static char buf[65536];
	char path[PATH_MAX], want[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/binder_logs/state", mnt);
	if (read_all(path, buf, sizeof(buf)) || strncmp(buf, "binder state:\n", 14))
		return __LINE__;
	snprintf(want, sizeof(want), "proc %d\ncontext binder\n", own);
	if (!strstr(buf, want))
		return __LINE__;
	snprintf(want, sizeof(want), "proc %d\n", other);
	if (strstr(buf, want))
		return __LINE__;

	snprintf(path, sizeof(path), "%s/binder_logs/stats", mnt);
	if (read_all(path, buf, sizeof(buf)) || !strstr(buf, "BC_TRANSACTION: 1\n"))
		return __LINE__;

	snprintf(path, sizeof(path), "%s/binder_logs/transactions", mnt);
	if (read_all(path, buf, sizeof(buf)) ||
	    strncmp(buf, "binder transactions:\n", 21))
		return __LINE__;
	snprintf(want, sizeof(want), "proc %d\n", other);
	if (strstr(buf, want))
		return __LINE__;

	snprintf(path, sizeof(path), "%s/binder_logs/transaction_log", mnt);
	if (read_all(path, buf, sizeof(buf)))
		return __LINE__;
	snprintf(want, sizeof(want), "from %d:%d to 0:0 context binder", own, own);
	if (!strstr(buf, want))
		return __LINE__;
	snprintf(want, sizeof(want), "from %d:", other);
	if (strstr(buf, want))
		return __LINE__;
	snprintf(path, sizeof(path), "%s/binder_logs/failed_transaction_log", mnt);
	if (read_all(path, buf, sizeof(buf)))
		return __LINE__;
	snprintf(want, sizeof(want), "from %d:%d", own, own);
	if (!strstr(buf, want) || strstr(buf, "ret 0/0"))
		return __LINE__;

	/* proc/: the cell's processes only. */
	snprintf(path, sizeof(path), "%s/binder_logs/proc", mnt);
	d = opendir(path);
	if (!d)
		return __LINE__;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (atoi(de->d_name) != own) {
			closedir(d);
			return __LINE__;
		}
		n++;
	}
	closedir(d);
	if (n != 1)
		return __LINE__;
	snprintf(path, sizeof(path), "%s/binder_logs/proc/%d", mnt, other);
	if (!access(path, F_OK) || errno != ENOENT)
		return __LINE__;
	snprintf(path, sizeof(path), "%s/binder_logs/proc/%d", mnt, own);
	if (read_all(path, buf, sizeof(buf)) ||
	    strncmp(buf, "binder proc state:\n", 19))
		return __LINE__;
	snprintf(want, sizeof(want), "proc %d\ncontext binder\n", own);
	if (!strstr(buf, want))
		return __LINE__;
	return 0;
}

/* stats=global makes binder_logs/, which shows the mount's cell only. */
TEST_F(cask, logs_of_own_cell)
{
	struct logged a, b;
	char path[PATH_MAX];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/binder_logs", self->m.mnt);
	EXPECT_EQ(-1, access(path, F_OK));

	ASSERT_EQ(0, logged_start(&b, CLONE_NEWIPC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int ret;

		CHILD_OK(!logged_start(&a, CLONE_NEWIPC));
		/* Mounted in a's cell (its IPC namespace). */
		CHILD_OK(!setns_pid(a.pid, CLONE_NEWIPC));
		CHILD_OK(!mount_bfs(self->m.type, self->m.mnt2, "stats=global"));
		ret = check_logs(self->m.mnt2, a.pid, b.pid);
		logged_stop(&a);
		_exit(ret & 0xff ?: !!ret);
	}
	EXPECT_EQ(0, child_status(pid));
	EXPECT_EQ(0, logged_stop(&b));
}

/*
 * proc/ lists every process of the cell that the mount's pid namespace
 * can name, past one it cannot: the cell's first process stays outside
 * the pid namespace that its child, pid 1 there, mounts from.
 */
TEST_F(cask, logs_list_past_hidden)
{
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct bdev outer;
		pid_t inner;

		CHILD_OK(!unshare(CLONE_NEWIPC));
		/* The oldest file of the context: the last one walked. */
		CHILD_OK(!bdev_open(&outer, "/dev/binder", 0, BMAP_SIZE));
		CHILD_OK(!unshare(CLONE_NEWPID));
		inner = fork();
		CHILD_OK(inner >= 0);
		if (inner == 0) {
			char path[PATH_MAX];
			struct dirent *de;
			struct bdev dev;
			int n = 0;
			DIR *d;

			CHILD_OK(!bdev_open(&dev, "/dev/binder", 0, BMAP_SIZE));
			CHILD_OK(!mount_bfs(self->m.type, self->m.mnt2, "stats=global"));
			snprintf(path, sizeof(path), "%s/binder_logs/proc", self->m.mnt2);
			d = opendir(path);
			CHILD_OK(d);
			while ((de = readdir(d)))
				if (de->d_name[0] != '.')
					n += atoi(de->d_name) == 1 ? 1 : 100;
			closedir(d);
			/* pid 1, itself, and nothing else. */
			_exit(n == 1 ? 0 : 50);
		}
		_exit(child_status(inner));
	}
	EXPECT_EQ(0, child_status(pid));
}

/*
 * A user namespace's root reads the logs of its cell that the host
 * mounted for it (stats=global is the initial namespace's to ask for,
 * as upstream), and sees nothing of the host's.
 */
TEST_F(cask, userns_reads_own_logs)
{
	int ready[2], go[2];
	struct bdev host;
	pid_t pid, helper;
	char c;

	/* A process of the test's own cell, in its /dev/binder. */
	ASSERT_EQ(0, bdev_open(&host, "/dev/binder", 0, BMAP_SIZE));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct bdev dev;
		int ret;

		close(ready[0]);
		close(go[1]);
		CHILD_OK(!become_userns_root(CLONE_NEWIPC));
		CHILD_OK(!bdev_open(&dev, "/dev/binder", 0, BMAP_SIZE));
		CHILD_OK(!ioctl(dev.fd, BINDER_SET_CONTEXT_MGR, 0));
		CHILD_OK(!txn_send(dev.fd, 0, 1, 0, NULL));
		CHILD_OK(write(ready[1], "r", 1) == 1);
		CHILD_OK(read(go[0], &c, 1) == 1);
		ret = check_logs(self->m.mnt2, getpid(), getppid());
		_exit(ret & 0xff ?: !!ret);
	}
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	helper = fork();
	ASSERT_LE(0, helper);
	if (helper == 0) {
		CHILD_OK(!setns_pid(pid, CLONE_NEWIPC));
		CHILD_OK(!mount_bfs(self->m.type, self->m.mnt2, "stats=global"));
		_exit(0);
	}
	ASSERT_EQ(0, child_status(helper));
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(0, child_status(pid));
	bdev_close(&host);
}

/* ---- runtimes' flows ---------------------------------------------------- */

#define CODE_PING	0x50494e47
#define PING_ANSWER	42

static int ping_fn(struct brd *r, const struct binder_transaction_data *tr,
		   struct txn *reply, void *arg)
{
	txn_put_u32(reply, PING_ANSWER);
	return BSERVE_STOP;
}

/* Become the context manager of @path, post @ready, answer one call. */
static int serve_one(const char *path, int ready)
{
	struct bdev d;
	struct brd r;

	if (bdev_open(&d, path, 0, BMAP_SIZE))
		return 10;
	if (ioctl(d.fd, BINDER_SET_CONTEXT_MGR, 0))
		return 11;
	if (bc_plain(d.fd, BC_ENTER_LOOPER))
		return 12;
	if (write(ready, "r", 1) != 1)
		return 13;
	brd_init(&r, d.fd);
	if (bserve(&r, ping_fn, NULL))
		return 14;
	bdev_close(&d);
	return 0;
}

/* Call handle 0 of @path: the BR_ code answered, or -errno. */
static int ping_mgr(const char *path)
{
	struct binder_transaction_data reply;
	struct bdev d;
	struct brd r;
	uint32_t br;
	int ret;

	ret = bdev_open(&d, path, 0, BMAP_SIZE);
	if (ret)
		return ret;
	brd_init(&r, d.fd);
	ret = txn_call(&r, 0, CODE_PING, NULL, &br, &reply);
	if (!ret && br == BR_REPLY) {
		if (reply.data_size != 4 ||
		    *(uint32_t *)(uintptr_t)reply.data.ptr.buffer != PING_ANSWER)
			br = BR_ERROR;
		txn_free(d.fd, &reply);
	}
	bdev_close(&d);
	return ret ?: (int)br;
}

/* A context manager on @mgr and a client on @client talk: 0 if they do. */
static int talk(const char *mgr, const char *client)
{
	int ready[2], ret, st;
	pid_t pid;
	char c;

	if (pipe2(ready, O_CLOEXEC))
		return 30;
	pid = fork();
	if (pid < 0)
		return 31;
	if (pid == 0) {
		close(ready[0]);
		_exit(serve_one(mgr, ready[1]));
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		st = child_status(pid);
		return st ? st : 32;
	}
	close(ready[0]);
	ret = ping_mgr(client);
	st = child_status(pid);
	if (ret != BR_REPLY)
		return 33;
	return st;
}

/* What the flows' containers use, set before they start (they fork). */
static struct {
	char mnt[PATH_MAX];
	char mgr[PATH_MAX];
	char client[PATH_MAX];
	char other[PATH_MAX];
	const char *type;
} flow;

/* In the container: its manager and client talk on flow.mgr/flow.client. */
static int flow_talk(void *arg)
{
	int hold, ret;

	/*
	 * The container's cell, made here: without patch 0001 an auto cell
	 * lasts as long as the process that made it, which must not be the
	 * manager that exits below.
	 */
	hold = open("/dev/binder", O_RDWR | O_CLOEXEC);
	if (hold < 0)
		return 42;
	ret = talk(flow.mgr, flow.client);
	if (ret)
		return ret;
	/* Another device is another context, with no manager. */
	if (ping_mgr(flow.other) != BR_DEAD_REPLY)
		return 40;
	/* And so is the container's cell's own /dev/binder. */
	if (ping_mgr("/dev/binder") != BR_DEAD_REPLY)
		return 41;
	close(hold);
	return 0;
}

/*
 * Waydroid: the host mounts binderfs, adds the anbox devices and binds
 * them into a container (its own user, IPC, mount and PID namespaces),
 * whose context manager and client talk there.
 */
TEST_F(cask, waydroid_flow)
{
	static const char *const names[] = {
		"anbox-binder", "anbox-hwbinder", "anbox-vndbinder",
	};
	struct container c;
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		ASSERT_EQ(0, ctl_add(self->m.mnt, names[i], NULL));
		snprintf(path, sizeof(path), "%s/%s", self->m.mnt, names[i]);
		/* As Waydroid does: the container's root is not the host's. */
		ASSERT_EQ(0, chmod(path, 0666));
	}
	ASSERT_EQ(0, mount(self->m.mnt, self->m.mnt2, NULL, MS_BIND, NULL));
	snprintf(flow.mgr, sizeof(flow.mgr), "%s/anbox-binder", self->m.mnt2);
	snprintf(flow.client, sizeof(flow.client), "%s/anbox-binder", self->m.mnt2);
	snprintf(flow.other, sizeof(flow.other), "%s/anbox-hwbinder", self->m.mnt2);
	ASSERT_EQ(0, container_start(&c, "", 200000));
	EXPECT_EQ(0, container_run(&c, flow_talk, NULL));
	container_stop(&c);
	/* The host's processes are in the host's /dev/binder, not there. */
	EXPECT_EQ(BR_DEAD_REPLY, ping_mgr(flow.other));
}

/* A process of its own cell (a new IPC namespace) with @path open. */
static pid_t open_in_new_cell(const char *path, int *stop)
{
	int ready[2], st[2];
	pid_t pid;
	char c;

	if (pipe2(ready, O_CLOEXEC) || pipe2(st, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct bdev dev;

		close(ready[0]);
		close(st[1]);
		CHILD_OK(!unshare(CLONE_NEWIPC));
		CHILD_OK(!bdev_open(&dev, path, 0, BMAP_SIZE));
		CHILD_OK(write(ready[1], "r", 1) == 1);
		CHILD_OK(read(st[0], &c, 1) == 0);
		_exit(0);
	}
	close(ready[1]);
	close(st[0]);
	*stop = st[1];
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		close(*stop);
		child_status(pid);
		return -1;
	}
	close(ready[0]);
	return pid;
}

/*
 * BINDER_FREEZE in a context of the host's binderfs that a container
 * uses (Waydroid's anbox-binder): the host's process, with the same
 * device open, finds only the host cell's processes there, never the
 * container's; a host process there it freezes and thaws.
 */
TEST_F(cask, freeze_in_host_device)
{
	struct binder_freeze_info fi = { .enable = 1 };
	struct binder_frozen_status_info si = {};
	struct bdev own, other;
	char path[PATH_MAX];
	pid_t cont, host;
	int stop, i;

	ASSERT_EQ(0, ctl_add(self->m.mnt, "anbox-binder", NULL));
	snprintf(path, sizeof(path), "%s/anbox-binder", self->m.mnt);
	ASSERT_EQ(0, chmod(path, 0666));
	cont = open_in_new_cell(path, &stop);
	ASSERT_LT(0, cont);
	ASSERT_EQ(0, bdev_open(&own, path, 0, BMAP_SIZE));

	fi.pid = cont;
	EXPECT_EQ(-1, ioctl(own.fd, BINDER_FREEZE, &fi));
	EXPECT_EQ(EINVAL, errno);
	si.pid = cont;
	EXPECT_EQ(-1, ioctl(own.fd, BINDER_GET_FROZEN_INFO, &si));
	EXPECT_EQ(EINVAL, errno);

	/* A host process in the same context: found, frozen, thawed. */
	host = fork();
	ASSERT_LE(0, host);
	if (host == 0) {
		CHILD_OK(!bdev_open(&other, path, 0, BMAP_SIZE));
		pause();
		_exit(0);
	}
	/* Until its open is done, the pid has no binder file: retry. */
	fi.pid = host;
	fi.enable = 1;
	for (i = 0; i < 500 && ioctl(own.fd, BINDER_FREEZE, &fi); i++)
		usleep(10000);
	EXPECT_LT(i, 500);
	si.pid = host;
	EXPECT_EQ(0, ioctl(own.fd, BINDER_GET_FROZEN_INFO, &si));
	fi.enable = 0;
	EXPECT_EQ(0, ioctl(own.fd, BINDER_FREEZE, &fi));
	kill(host, SIGKILL);
	waitpid(host, NULL, 0);

	bdev_close(&own);
	close(stop);
	EXPECT_EQ(0, child_status(cont));
}

/*
 * redroid: a container in its own user namespace mounts binderfs itself
 * and adds binder, hwbinder, vndbinder; its binderfs "binder" is its
 * cell's /dev/binder context, and reaches nothing of another cell's.
 */
static int redroid_fn(void *arg)
{
	static const char *const names[] = { "binder", "hwbinder", "vndbinder" };
	size_t i;

	if (mount_bfs(flow.type, flow.mnt, NULL))
		return 20;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (ctl_add(flow.mnt, names[i], NULL))
			return 21;
	/* Another cell's manager (the test's) is not reached. */
	if (ping_mgr(flow.mgr) != BR_DEAD_REPLY)
		return 22;
	/* The manager on binderfs, the client on /dev/binder: one world. */
	return talk(flow.mgr, "/dev/binder") ?:
	       (ping_mgr(flow.other) == BR_DEAD_REPLY ? 0 : 23);
}

TEST_F(cask, redroid_flow)
{
	int ready[2], stop[2];
	struct container c;
	pid_t other;
	char ch;

	/* A manager in another cell's /dev/binder, up for the whole test. */
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(stop, O_CLOEXEC));
	other = fork();
	ASSERT_LE(0, other);
	if (other == 0) {
		struct bdev d;

		CHILD_OK(!unshare(CLONE_NEWIPC));
		CHILD_OK(!bdev_open(&d, "/dev/binder", 0, BMAP_SIZE));
		CHILD_OK(!ioctl(d.fd, BINDER_SET_CONTEXT_MGR, 0));
		CHILD_OK(write(ready[1], "r", 1) == 1);
		close(stop[1]);
		CHILD_OK(read(stop[0], &ch, 1) == 0);
		_exit(0);
	}
	close(stop[0]);
	ASSERT_EQ(1, read(ready[0], &ch, 1));

	flow.type = self->m.type;
	snprintf(flow.mnt, sizeof(flow.mnt), "%s", self->m.mnt2);
	snprintf(flow.mgr, sizeof(flow.mgr), "%s/binder", self->m.mnt2);
	snprintf(flow.other, sizeof(flow.other), "%s/hwbinder", self->m.mnt2);
	ASSERT_EQ(0, container_start(&c, "", 200000));
	EXPECT_EQ(0, container_run(&c, redroid_fn, NULL));
	container_stop(&c);
	close(stop[1]);
	EXPECT_EQ(0, child_status(other));
}

TEST_HARNESS_MAIN
