// SPDX-License-Identifier: GPL-2.0
/*
 * cask_ashmem: the Android ABI of /dev/ashmem, and its per-cell rules.
 *
 * The first tests run in the host's cell and check each ioctl, mmap, read
 * and seek against what Android's driver did (and libcutils relies on),
 * with the bug classes of CVE-2017-13216 (SET_SIZE racing mmap) and
 * CVE-2020-0009 (mapping the backing file anew). The "cells" fixture runs
 * two containers, A and B, each in its own cgroup, and checks that a
 * cell's counters, budget, purges and memory charges are its own. The
 * same source is built with -m32 as ashmem32_test, which exercises the
 * compat ioctls.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <linux/ashmem.h>

#include "../kselftest_harness.h"
#include "cask_util.h"
#include "cask_fault.h"

#define DEV		"/dev/ashmem"
#define CELLS		CASK "/cells/"
#define CELL_A		"ash-a"
#define CELL_B		"ash-b"
#define CG_A		"cask-ash-a"
#define CG_B		"cask-ash-b"
#define CG_H		"cask-ash-h"
#define UID_BASE	410000
#define MIB		(1024L * 1024)

static long pg;

static void __attribute__((constructor)) init_pg(void)
{
	pg = sysconf(_SC_PAGESIZE);
}

/* A region of @size named @name: its fd, or -errno. */
static int ash_create(const char *name, size_t size)
{
	char buf[ASHMEM_NAME_LEN] = "";
	int fd, err;

	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* As libcutils does: the whole buffer. */
	snprintf(buf, sizeof(buf), "%s", name);
	if ((name && ioctl(fd, ASHMEM_SET_NAME, buf) < 0) ||
	    ioctl(fd, ASHMEM_SET_SIZE, size) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

static void *ash_map(int fd, size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int pin_ioctl(int fd, unsigned long cmd, unsigned int off, unsigned int len)
{
	struct ashmem_pin pin = { .offset = off, .len = len };

	return ioctl(fd, cmd, &pin);
}

/* A counter of cells/@cell/ashmem/, or LONG_MIN. */
static long acount(const char *cell, const char *file)
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), CELLS "%s/ashmem/%s", cell, file);
	if (read_file(path, buf, sizeof(buf)))
		return LONG_MIN;
	if (!strncmp(buf, "max", 3))
		return LONG_MAX;
	return atol(buf);
}

static const char *ashmem_missing(void)
{
	if (cask_missing())
		return cask_missing();
	if (access(DEV, F_OK))
		return "cask_ashmem is not loaded";
	return NULL;
}

static bool all_bytes(const char *p, size_t len, char c)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != c)
			return false;
	return true;
}

/* ---- the ABI, in the host's cell -------------------------------------------- */

TEST(defaults)
{
	char name[ASHMEM_NAME_LEN];
	struct stat st, dev;
	int fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ioctl(fd, ASHMEM_GET_SIZE));
	EXPECT_EQ(PROT_READ | PROT_WRITE | PROT_EXEC, ioctl(fd, ASHMEM_GET_PROT_MASK));
	ASSERT_EQ(0, ioctl(fd, ASHMEM_GET_NAME, name));
	EXPECT_STREQ(ASHMEM_NAME_DEF, name);
	/* libcutils: a character device whose rdev every region shares. */
	ASSERT_EQ(0, fstat(fd, &st));
	ASSERT_EQ(0, stat(DEV, &dev));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_NE(0, st.st_rdev);
	EXPECT_EQ(dev.st_rdev, st.st_rdev);
	EXPECT_EQ(0666, dev.st_mode & 0777);
	/* Unknown commands: ENOTTY, which libcutils treats as "not ashmem". */
	EXPECT_EQ(-1, ioctl(fd, _IO(__ASHMEMIOC, 99)));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, _IOW('b', 1, int), 0));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

/* A region's id: its memory's inode, once it has memory. */
TEST(file_id)
{
	unsigned long id = 0, id2 = 0, id3 = 0;
	void *p, *q;
	int fd, fd2, dup_fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = ash_create("cask-test-id", pg);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, ASHMEM_GET_FILE_ID, &id));
	EXPECT_EQ(EINVAL, errno);
	p = ash_map(fd, pg, PROT_READ);
	ASSERT_FALSE(!p);
	ASSERT_EQ(0, ioctl(fd, ASHMEM_GET_FILE_ID, &id));
	EXPECT_NE(0, id);
	EXPECT_EQ(-1, ioctl(fd, ASHMEM_GET_FILE_ID, NULL));
	EXPECT_EQ(EFAULT, errno);
	/* The same for every fd of the region, another for another region. */
	dup_fd = dup(fd);
	ASSERT_EQ(0, ioctl(dup_fd, ASHMEM_GET_FILE_ID, &id2));
	EXPECT_EQ(id, id2);
	fd2 = ash_create("cask-test-id2", pg);
	ASSERT_LE(0, fd2);
	q = ash_map(fd2, pg, PROT_READ);
	ASSERT_FALSE(!q);
	ASSERT_EQ(0, ioctl(fd2, ASHMEM_GET_FILE_ID, &id3));
	EXPECT_NE(id, id3);
	munmap(p, pg);
	munmap(q, pg);
	close(dup_fd);
	close(fd2);
	close(fd);
}

TEST(compat_numbers)
{
	/* The 32-bit build really uses the 32-bit ioctl numbers. */
	if (sizeof(long) == 4) {
		EXPECT_EQ(0x40047703u, (unsigned int)ASHMEM_SET_SIZE);
		EXPECT_EQ(0x40047705u, (unsigned int)ASHMEM_SET_PROT_MASK);
		EXPECT_EQ(0x8004770bu, (unsigned int)ASHMEM_GET_FILE_ID);
	} else {
		EXPECT_EQ(0x40087703u, (unsigned int)ASHMEM_SET_SIZE);
		EXPECT_EQ(0x40087705u, (unsigned int)ASHMEM_SET_PROT_MASK);
		EXPECT_EQ(0x8008770bu, (unsigned int)ASHMEM_GET_FILE_ID);
	}
	EXPECT_EQ(0x41007701u, (unsigned int)ASHMEM_SET_NAME);
	EXPECT_EQ(0x81007702u, (unsigned int)ASHMEM_GET_NAME);
	EXPECT_EQ(0x40087707u, (unsigned int)ASHMEM_PIN);
	EXPECT_EQ(0x0000770au, (unsigned int)ASHMEM_PURGE_ALL_CACHES);
}

TEST(name)
{
	char name[ASHMEM_NAME_LEN], line[512];
	bool found = false;
	FILE *maps;
	void *p;
	int fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = ash_create("cask-test-name", pg);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, ASHMEM_GET_NAME, name));
	EXPECT_STREQ("cask-test-name", name);
	/* A name that fills the buffer is cut to 255 characters. */
	memset(name, 'x', sizeof(name));
	ASSERT_EQ(0, ioctl(fd, ASHMEM_SET_NAME, name));
	memset(name, 0, sizeof(name));
	ASSERT_EQ(0, ioctl(fd, ASHMEM_GET_NAME, name));
	EXPECT_EQ(ASHMEM_NAME_LEN - 1, strlen(name));
	EXPECT_EQ(-1, ioctl(fd, ASHMEM_SET_NAME, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(fd, ASHMEM_GET_NAME, NULL));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, ioctl(fd, ASHMEM_SET_NAME, "cask-test-maps"));
	/* Mapped: the name is fixed, and /proc/PID/maps shows it. */
	p = ash_map(fd, pg, PROT_READ);
	ASSERT_FALSE(!p);
	EXPECT_EQ(-1, ioctl(fd, ASHMEM_SET_NAME, "other"));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, ioctl(fd, ASHMEM_GET_NAME, name));
	EXPECT_STREQ("cask-test-maps", name);
	maps = fopen("/proc/self/maps", "r");
	ASSERT_FALSE(!maps);
	while (fgets(line, sizeof(line), maps))
		if (strtoul(line, NULL, 16) == (unsigned long)p)
			found = strstr(line, "/dev/ashmem/cask-test-maps");
	fclose(maps);
	EXPECT_TRUE(found) TH_LOG("no /dev/ashmem/cask-test-maps at %p", p);
	munmap(p, pg);
	close(fd);
}

TEST(size_and_mmap)
{
	char *p, *q;
	int fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	/* No size, no mapping. */
	EXPECT_TRUE(mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED);
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, ioctl(fd, ASHMEM_SET_SIZE, 3 * pg + 100));
	EXPECT_EQ(3 * pg + 100, ioctl(fd, ASHMEM_GET_SIZE));
	/* Up to the size rounded to pages, not beyond. */
	EXPECT_TRUE(mmap(NULL, 5 * pg, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED);
	EXPECT_EQ(EINVAL, errno);
	p = ash_map(fd, 4 * pg, PROT_READ | PROT_WRITE);
	ASSERT_FALSE(!p);
	q = ash_map(fd, 4 * pg, PROT_READ | PROT_WRITE);
	ASSERT_FALSE(!q);
	memset(p, 'a', 4 * pg);
	EXPECT_TRUE(all_bytes(q, 4 * pg, 'a'));
	/* Mapped: the size is fixed. */
	EXPECT_EQ(-1, ioctl(fd, ASHMEM_SET_SIZE, pg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(3 * pg + 100, ioctl(fd, ASHMEM_GET_SIZE));
	/* The mappings outlive the file. */
	close(fd);
	q[1] = 'b';
	EXPECT_EQ('b', p[1]);
	munmap(p, 4 * pg);
	munmap(q, 4 * pg);

	/* Past what a file can hold (only a 64-bit size_t gets there). */
	if (sizeof(size_t) == 8) {
		fd = open(DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		EXPECT_EQ(-1, ioctl(fd, ASHMEM_SET_SIZE, (size_t)-1));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(0, ioctl(fd, ASHMEM_GET_SIZE));
		close(fd);
	}
}

TEST(prot_mask)
{
	void *p;
	int fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = ash_create("cask-test-prot", 2 * pg);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, ASHMEM_SET_PROT_MASK, PROT_READ | PROT_WRITE));
	EXPECT_EQ(PROT_READ | PROT_WRITE, ioctl(fd, ASHMEM_GET_PROT_MASK));
	EXPECT_TRUE(mmap(NULL, pg, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0) == MAP_FAILED);
	EXPECT_EQ(EPERM, errno);
	ASSERT_EQ(0, ioctl(fd, ASHMEM_SET_PROT_MASK, PROT_READ));
	/* Bits can only be taken away. */
	EXPECT_EQ(-1, ioctl(fd, ASHMEM_SET_PROT_MASK, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(PROT_READ, ioctl(fd, ASHMEM_GET_PROT_MASK));
	EXPECT_TRUE(mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	EXPECT_EQ(EPERM, errno);
	EXPECT_TRUE(mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) == MAP_FAILED);
	EXPECT_EQ(EPERM, errno);
	p = ash_map(fd, pg, PROT_READ);
	ASSERT_FALSE(!p);
	/* The mapping can never gain write access. */
	EXPECT_EQ(-1, mprotect(p, pg, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(p, pg);
	/* The mask still changes after the first mapping, downwards. */
	ASSERT_EQ(0, ioctl(fd, ASHMEM_SET_PROT_MASK, 0));
	EXPECT_TRUE(mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED);
	EXPECT_EQ(EPERM, errno);
	close(fd);
}

/*
 * READ_IMPLIES_EXEC makes PROT_READ mean PROT_EXEC too, but never gives
 * back an execute permission the mask lost: masks only narrow. Android's
 * driver gave it back.
 */
TEST(prot_mask_read_implies_exec)
{
	pid_t pid;
	int fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = ash_create("cask-test-prot-x", pg);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, ASHMEM_SET_PROT_MASK, PROT_READ));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (personality(READ_IMPLIES_EXEC) < 0)
			_exit(2);
		if (ioctl(fd, ASHMEM_SET_PROT_MASK, PROT_READ))
			_exit(3);
		_exit(ioctl(fd, ASHMEM_GET_PROT_MASK) == PROT_READ ? 0 : 1);
	}
	EXPECT_EQ(0, child_status(pid));
	EXPECT_EQ(PROT_READ, ioctl(fd, ASHMEM_GET_PROT_MASK));
	/* With the execute bit still in the mask, it is added as before. */
	close(fd);
	fd = ash_create("cask-test-prot-x", pg);
	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (personality(READ_IMPLIES_EXEC) < 0)
			_exit(2);
		if (ioctl(fd, ASHMEM_SET_PROT_MASK, PROT_READ))
			_exit(3);
		_exit(ioctl(fd, ASHMEM_GET_PROT_MASK) == (PROT_READ | PROT_EXEC) ? 0 : 1);
	}
	EXPECT_EQ(0, child_status(pid));
	close(fd);
}

TEST(map_private)
{
	char *shared, *priv;
	int fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = ash_create("cask-test-private", pg);
	ASSERT_LE(0, fd);
	shared = ash_map(fd, pg, PROT_READ | PROT_WRITE);
	ASSERT_FALSE(!shared);
	memset(shared, 's', pg);
	/* Private anonymous memory, not a copy of the region. */
	priv = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_TRUE(priv != MAP_FAILED);
	EXPECT_TRUE(all_bytes(priv, pg, 0));
	memset(priv, 'p', pg);
	EXPECT_TRUE(all_bytes(shared, pg, 's'));
	munmap(priv, pg);
	munmap(shared, pg);
	close(fd);
}

TEST(pin_errors)
{
	void *p;
	int fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = ash_create("cask-test-pin", 4 * pg);
	ASSERT_LE(0, fd);
	/* Nothing to pin before the first mapping. */
	EXPECT_EQ(-1, pin_ioctl(fd, ASHMEM_PIN, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, pin_ioctl(fd, ASHMEM_GET_PIN_STATUS, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	p = ash_map(fd, 4 * pg, PROT_READ | PROT_WRITE);
	ASSERT_FALSE(!p);
	EXPECT_EQ(-1, pin_ioctl(fd, ASHMEM_UNPIN, 1, pg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, pin_ioctl(fd, ASHMEM_UNPIN, 0, pg + 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, pin_ioctl(fd, ASHMEM_UNPIN, 4 * pg, pg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, pin_ioctl(fd, ASHMEM_UNPIN, 3 * pg, 2 * pg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, pin_ioctl(fd, ASHMEM_UNPIN, -pg, 2 * pg));
	EXPECT_EQ(EINVAL, errno);
	/* "To the end" from the end is empty. */
	EXPECT_EQ(-1, pin_ioctl(fd, ASHMEM_UNPIN, 4 * pg, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, ASHMEM_UNPIN, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(fd, ASHMEM_GET_PIN_STATUS, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(ASHMEM_IS_PINNED, pin_ioctl(fd, ASHMEM_GET_PIN_STATUS, 0, 0));
	EXPECT_EQ(0, pin_ioctl(fd, ASHMEM_UNPIN, 2 * pg, 0));
	EXPECT_EQ(ASHMEM_IS_UNPINNED, pin_ioctl(fd, ASHMEM_GET_PIN_STATUS, 3 * pg, pg));
	EXPECT_EQ(ASHMEM_IS_PINNED, pin_ioctl(fd, ASHMEM_GET_PIN_STATUS, 0, 2 * pg));
	EXPECT_EQ(ASHMEM_NOT_PURGED, pin_ioctl(fd, ASHMEM_PIN, 0, 0));
	EXPECT_EQ(ASHMEM_IS_PINNED, pin_ioctl(fd, ASHMEM_GET_PIN_STATUS, 0, 0));
	munmap(p, 4 * pg);
	close(fd);
}

/* The host's root purges the host cell's unpinned pages. */
TEST(purge_all_caches)
{
	long purged0;
	char *p;
	int fd, ret;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = ash_create("cask-test-purge", 4 * pg);
	ASSERT_LE(0, fd);
	p = ash_map(fd, 4 * pg, PROT_READ | PROT_WRITE);
	ASSERT_FALSE(!p);
	memset(p, 'A', 4 * pg);
	ASSERT_EQ(0, pin_ioctl(fd, ASHMEM_UNPIN, pg, 2 * pg));
	EXPECT_EQ(ASHMEM_IS_UNPINNED, pin_ioctl(fd, ASHMEM_GET_PIN_STATUS, 0, 0));
	/* Pinned again before a purge: nothing lost. */
	EXPECT_EQ(ASHMEM_NOT_PURGED, pin_ioctl(fd, ASHMEM_PIN, pg, pg));
	EXPECT_LE(pg, acount("host", "purgeable_bytes"));
	purged0 = acount("host", "purged_bytes");
	ret = ioctl(fd, ASHMEM_PURGE_ALL_CACHES);
	EXPECT_LE(1, ret);
	EXPECT_EQ(ASHMEM_IS_UNPINNED, pin_ioctl(fd, ASHMEM_GET_PIN_STATUS, 2 * pg, pg));
	EXPECT_EQ(ASHMEM_WAS_PURGED, pin_ioctl(fd, ASHMEM_PIN, 0, 0));
	/* The purged page reads as zero; the pinned ones kept their data. */
	EXPECT_TRUE(all_bytes(p + 2 * pg, pg, 0));
	EXPECT_TRUE(all_bytes(p, 2 * pg, 'A'));
	EXPECT_TRUE(all_bytes(p + 3 * pg, pg, 'A'));
	EXPECT_LE(purged0 + pg, acount("host", "purged_bytes"));
	/* A hole punched by the mapper itself. */
	EXPECT_EQ(0, madvise(p + 3 * pg, pg, MADV_REMOVE));
	EXPECT_TRUE(all_bytes(p + 3 * pg, pg, 0));
	munmap(p, 4 * pg);
	close(fd);
}

/*
 * PURGE_ALL_CACHES's count comes back through ioctl()'s int. A region of
 * the largest size, unpinned to its end, puts 2^51 - 1 pages on the LRU:
 * cut to an int that is -1, which the caller took for a failure (EPERM).
 * Found by cask-fuzz ashmem (seed 100186).
 */
TEST(purge_all_caches_count_fits_int)
{
	size_t size = (size_t)LLONG_MAX & ~(size_t)(pg - 1);
	char *p;
	int fd, ret;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	if (sizeof(size_t) < 8)
		SKIP(return, "no region past 4 GiB here");
	fd = ash_create("cask-test-purge-huge", size);
	ASSERT_LE(0, fd);
	p = ash_map(fd, pg, PROT_READ | PROT_WRITE);
	ASSERT_FALSE(!p);
	p[0] = 'A';
	ASSERT_EQ(0, pin_ioctl(fd, ASHMEM_UNPIN, 0, 0));
	ret = ioctl(fd, ASHMEM_PURGE_ALL_CACHES);
	EXPECT_EQ(INT_MAX, ret) TH_LOG("errno %d", errno);
	EXPECT_EQ(ASHMEM_WAS_PURGED, pin_ioctl(fd, ASHMEM_PIN, 0, 0));
	EXPECT_EQ(0, p[0]);
	munmap(p, pg);
	close(fd);
}

TEST(read_and_seek)
{
	char buf[8] = "";
	char *p;
	int fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	/* No size: end of file at once, and nowhere to seek. */
	EXPECT_EQ(0, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(-1, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, ioctl(fd, ASHMEM_SET_SIZE, 3 * pg));
	/* A size but no memory yet. */
	EXPECT_EQ(-1, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(-1, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(EBADF, errno);
	p = ash_map(fd, 3 * pg, PROT_READ | PROT_WRITE);
	ASSERT_FALSE(!p);
	memcpy(p + pg, "hello", 5);
	EXPECT_EQ(pg, lseek(fd, pg, SEEK_SET));
	EXPECT_EQ(5, read(fd, buf, 5));
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	EXPECT_EQ(pg + 5, lseek(fd, 0, SEEK_CUR));
	EXPECT_EQ(3 * pg, lseek(fd, 0, SEEK_END));
	/* Only page 1 was ever touched: shmem knows the holes. */
	EXPECT_EQ(pg, lseek(fd, 0, SEEK_DATA));
	EXPECT_EQ(2 * pg, lseek(fd, pg, SEEK_HOLE));
	munmap(p, 3 * pg);
	close(fd);
}

/*
 * CVE-2017-13216: SET_SIZE racing the first mmap must never change the
 * size once the backing file exists: what the region says is its size
 * and the backing file's size (lseek SEEK_END) always agree. The racer
 * is a process sharing the open file (no threads: see wait_for()).
 */
TEST(set_size_races_mmap)
{
	int i, late = 0, *go, status;
	struct timespec t0, t;
	void *map;
	pid_t pid;
	int fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	go = shared_alloc(sizeof(*go));
	ASSERT_FALSE(!go);
	/*
	 * 300 rounds, or as many as fit in 15 s: on a loaded TCG host a round
	 * can take 100 ms, and the harness gives a test 30 s.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 300; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (i >= 30 && t.tv_sec - t0.tv_sec >= 15)
			break;
		fd = ash_create(NULL, pg);
		ASSERT_LE(0, fd);
		__atomic_store_n(go, 0, __ATOMIC_RELAXED);
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			__atomic_add_fetch(go, 1, __ATOMIC_ACQ_REL);
			while (__atomic_load_n(go, __ATOMIC_ACQUIRE) < 2)
				sched_yield();
			_exit(ioctl(fd, ASHMEM_SET_SIZE, 64 * pg) ? 1 : 0);
		}
		__atomic_add_fetch(go, 1, __ATOMIC_ACQ_REL);
		while (__atomic_load_n(go, __ATOMIC_ACQUIRE) < 2)
			sched_yield();
		map = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(map != MAP_FAILED);
		if (WEXITSTATUS(status))
			late++;
		EXPECT_EQ(ioctl(fd, ASHMEM_GET_SIZE), lseek(fd, 0, SEEK_END))
			TH_LOG("round %d: SET_SIZE %s", i, WEXITSTATUS(status) ? "failed" : "done");
		/* Pin ranges are checked against the size the file has. */
		EXPECT_EQ(0, pin_ioctl(fd, ASHMEM_UNPIN, 0, 0));
		munmap(map, pg);
		close(fd);
	}
	shared_free(go, sizeof(*go));
	TH_LOG("SET_SIZE lost the race %d of %d times", late, i);
}

/*
 * CVE-2020-0009: a mapping limited by the protection mask must not be
 * mapped anew, with more rights, through the file it maps: not through
 * /proc/self/map_files (even for the host's root), not with
 * remap_file_pages(), not by re-opening /proc/self/fd.
 */
TEST(no_remap_through_backing)
{
	char path[PATH_MAX], line[512], perms[8] = "";
	unsigned long start, end;
	FILE *maps;
	void *p;
	int fd, fd2;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = ash_create("cask-test-remap", 2 * pg);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, ASHMEM_SET_PROT_MASK, PROT_READ));
	p = ash_map(fd, 2 * pg, PROT_READ);
	ASSERT_FALSE(!p);

	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)p, (unsigned long)p + 2 * pg);
	EXPECT_EQ(-1, open(path, O_RDWR | O_CLOEXEC));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, open(path, O_RDONLY | O_CLOEXEC));
	EXPECT_EQ(EPERM, errno);

	/*
	 * The kernel emulates remap_file_pages() with a new mmap of the
	 * mapped file: refused, the range may be left unmapped, but it must
	 * never become writable.
	 */
	syscall(SYS_remap_file_pages, p, 2 * pg, 0, 1, 0);
	EXPECT_EQ(-1, mprotect(p, 2 * pg, PROT_READ | PROT_WRITE));
	maps = fopen("/proc/self/maps", "r");
	ASSERT_FALSE(!maps);
	while (fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3 &&
		    (unsigned long)p >= start && (unsigned long)p < end)
			EXPECT_EQ(0, strncmp(perms, "r-", 2)) TH_LOG("mapping is %s", perms);
	}
	fclose(maps);

	/* A re-open of the ashmem fd is a new, empty region. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	fd2 = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(0, ioctl(fd2, ASHMEM_GET_SIZE));
	EXPECT_TRUE(mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 0) == MAP_FAILED);
	EXPECT_EQ(EINVAL, errno);
	close(fd2);
	munmap(p, 2 * pg);
	close(fd);
}

#define THP_SHMEM	"/sys/kernel/mm/transparent_hugepage/shmem_enabled"

/* The kB of @field in /proc/self/smaps for the mapping at @addr, or -1. */
static long smaps_kb(void *addr, const char *field)
{
	unsigned long start = (unsigned long)addr, lo, hi;
	char line[512];
	bool in = false;
	long kb = -1;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* A mapping's first line; no field's name parses so. */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = lo == start;
			continue;
		}
		if (in && !strncmp(line, field, strlen(field)) &&
		    line[strlen(field)] == ':') {
			kb = atol(line + strlen(field) + 1);
			break;
		}
	}
	fclose(f);
	return kb;
}

/*
 * No transparent huge pages, even after MADV_HUGEPAGE and with shmem's
 * "advise" mode: ashmem.rst, "Transparent huge pages".
 */
TEST(no_huge_pages)
{
	size_t huge = 2 * MIB, len = 2 * huge;
	char saved[64] = "";
	char *resv, *at, *p;
	int fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	if (read_file(THP_SHMEM, saved, sizeof(saved)))
		SKIP(return, "no transparent huge pages in this kernel");
	ASSERT_EQ(0, write_file(THP_SHMEM, "advise"));
	fd = ash_create("cask-test-thp", len);
	ASSERT_LE(0, fd);
	/* Room for a 2 MiB aligned mapping of 4 MiB. */
	resv = mmap(NULL, len + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* Pointers compared as such: ashmem32_test builds this file with -m32. */
	ASSERT_TRUE(resv != MAP_FAILED);
	at = (char *)(((unsigned long)resv + huge - 1) & ~(huge - 1));
	p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	ASSERT_TRUE(p == at);
	EXPECT_EQ(0, madvise(p, len, MADV_HUGEPAGE));
	memset(p, 't', len);
	EXPECT_EQ(0, smaps_kb(p, "ShmemPmdMapped"));
	EXPECT_EQ(0, smaps_kb(p, "FilePmdMapped"));
	munmap(resv, len + huge);
	close(fd);
	/* "[never] always ..." back to what was chosen. */
	if (strchr(saved, '[')) {
		char *end = strchr(saved, ']');

		if (end) {
			*end = '\0';
			write_file(THP_SHMEM, strchr(saved, '[') + 1);
		}
	}
}

/* The fd keeps its region over a unix socket. */
TEST(fd_over_unix_socket)
{
	char name[ASHMEM_NAME_LEN];
	struct stat a, b;
	int sk[2], fd, got;
	char *p, *q;
	pid_t pid;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sk));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		got = recv_fd(sk[1]);
		if (got < 0)
			_exit(1);
		if (ioctl(got, ASHMEM_GET_SIZE) != 2 * pg ||
		    ioctl(got, ASHMEM_GET_NAME, name) || strcmp(name, "cask-test-pass"))
			_exit(2);
		q = ash_map(got, 2 * pg, PROT_READ | PROT_WRITE);
		if (!q || memcmp(q, "hello", 5))
			_exit(3);
		memcpy(q + pg, "world", 5);
		_exit(0);
	}
	fd = ash_create("cask-test-pass", 2 * pg);
	ASSERT_LE(0, fd);
	p = ash_map(fd, 2 * pg, PROT_READ | PROT_WRITE);
	ASSERT_FALSE(!p);
	memcpy(p, "hello", 5);
	ASSERT_EQ(0, send_fd(sk[0], fd));
	EXPECT_EQ(0, child_status(pid));
	EXPECT_EQ(0, memcmp(p + pg, "world", 5));
	/* Every region reports the device's rdev, whoever holds it. */
	ASSERT_EQ(0, fstat(fd, &a));
	ASSERT_EQ(0, stat(DEV, &b));
	EXPECT_EQ(b.st_rdev, a.st_rdev);
	munmap(p, 2 * pg);
	close(fd);
	close(sk[0]);
	close(sk[1]);
}

/* An open region, or one only mapped, holds the module. */
TEST(unload_refused)
{
	void *p;
	int fd;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	fd = ash_create("cask-test-unload", pg);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, syscall(SYS_delete_module, "cask_ashmem", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	p = ash_map(fd, pg, PROT_READ);
	ASSERT_FALSE(!p);
	close(fd);
	EXPECT_EQ(-1, syscall(SYS_delete_module, "cask_ashmem", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	munmap(p, pg);
	EXPECT_EQ(0, access(DEV, F_OK));
}

/* ---- two cells --------------------------------------------------------------- */

/* What actors share with the test: a step to wait for, results. */
struct stage {
	int step;		/* the test's: go on to step N */
	int ready[4];		/* actor N's: done with its step N */
	long val[16];		/* results, written before a ready or step */
	char err[256];
};

/* Steps publish what was written before them. */
static void post(int *flag, int n)
{
	__atomic_store_n(flag, n, __ATOMIC_RELEASE);
}

/*
 * No sleeping system call: a 32-bit glibc makes the 32-bit-time ones,
 * which the test kernel lacks (Documentation/dev/testing.rst). The clock
 * is read through the vDSO.
 */
static bool wait_for(int *flag, int want)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < want) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 120)
			return false;
		sched_yield();
	}
	return true;
}

/* An actor's check: on failure, say why and end the actor. */
static void __attribute__((noreturn, format(printf, 3, 4)))
actor_fail(struct stage *s, int line, const char *fmt, ...)
{
	int len = snprintf(s->err, sizeof(s->err), "line %d: ", line);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err + len, sizeof(s->err) - len, fmt, ap);
	va_end(ap);
	_exit(1);
}

#define ACHECK(s, cond, fmt, ...) do {					\
		if (!(cond))						\
			actor_fail((s), __LINE__, fmt, ##__VA_ARGS__);	\
	} while (0)

struct cell {
	const char *name;
	bool userns;
	bool started;
	struct container c;
};

static int cell_make(struct cell *cell, const char *name, const char *cg, bool userns)
{
	int ret;

	cell->name = name;
	cell->userns = userns;
	cask_unregister(name);
	ret = container_start(&cell->c, cg, userns ? UID_BASE : CONTAINER_NO_USERNS);
	if (ret)
		return ret;
	cell->started = true;
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

typedef int (*actor_fn)(struct stage *s, int id);

/* Fork @fn in @cell's namespaces and in cgroup @cg (if not NULL). */
static pid_t actor(struct cell *cell, const char *cg, actor_fn fn, struct stage *s, int id)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (cg && join_cgroup(cg))
			_exit(98);
		if (cell && container_enter(&cell->c, cell->userns))
			_exit(99);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(200);
		_exit(fn(s, id));
	}
	return pid;
}

FIXTURE(cells) {
	struct cell a, b;
	struct stage *s;
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
	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	self->s = shared_alloc(sizeof(*self->s));
	ASSERT_FALSE(!self->s);
	ASSERT_EQ(0, cell_make(&self->a, CELL_A, CG_A, variant->a_userns));
	ASSERT_EQ(0, cell_make(&self->b, CELL_B, CG_B, true));
}

FIXTURE_TEARDOWN(cells)
{
	cell_end(&self->a);
	cell_end(&self->b);
	shared_free(self->s, sizeof(*self->s));
}

/* A region of @size pages, touched and unpinned; waits for step 1. */
static int unpinned_region(struct stage *s, int id, long pages, char fill)
{
	int fd, ret;
	char *p;

	fd = ash_create("cask-test-cell", pages * pg);
	ACHECK(s, fd >= 0, "create: %d", fd);
	p = ash_map(fd, pages * pg, PROT_READ | PROT_WRITE);
	ACHECK(s, p, "mmap: %s", strerror(errno));
	memset(p, fill, pages * pg);
	ACHECK(s, !pin_ioctl(fd, ASHMEM_UNPIN, 0, 0), "unpin: %s", strerror(errno));
	post(&s->ready[id], 1);
	ACHECK(s, wait_for(&s->step, 1), "no step 1");
	/* Step 1 may have purged it; report and check the data. */
	ret = pin_ioctl(fd, ASHMEM_PIN, 0, 0);
	s->val[id] = ret;
	if (ret == ASHMEM_NOT_PURGED)
		ACHECK(s, all_bytes(p, pages * pg, fill), "data lost, not purged");
	else
		ACHECK(s, ret == ASHMEM_WAS_PURGED, "pin: %d %s", ret, strerror(errno));
	post(&s->ready[id], 2);
	ACHECK(s, wait_for(&s->step, 2), "no step 2");
	return 0;
}

static int region_small(struct stage *s, int id)
{
	return unpinned_region(s, id, 4, 'a' + id);
}

/* As region_small(), but first purge the own cell's caches. */
static int region_and_purge(struct stage *s, int id)
{
	int fd, ret;
	pid_t pid;

	fd = open(DEV, O_RDWR | O_CLOEXEC);
	ACHECK(s, fd >= 0, "open: %s", strerror(errno));
	ACHECK(s, wait_for(&s->ready[1], 1) && wait_for(&s->ready[2], 1), "others not ready");
	/* Not for an unprivileged user of the cell. */
	pid = fork();
	if (pid == 0) {
		if (setresuid(1000, 1000, 1000))
			_exit(2);
		_exit(ioctl(fd, ASHMEM_PURGE_ALL_CACHES) == -1 && errno == EPERM ? 0 : 1);
	}
	ACHECK(s, child_status(pid) == 0, "an unprivileged user purged");
	ret = ioctl(fd, ASHMEM_PURGE_ALL_CACHES);
	s->val[8] = ret;
	ACHECK(s, ret >= 0, "purge: %s", strerror(errno));
	close(fd);
	post(&s->ready[id], 1);
	return 0;
}

TEST_F(cells, counters_and_access)
{
	struct stage *s = self->s;
	char path[PATH_MAX];
	struct stat st;
	long host0;
	pid_t pid;

	host0 = acount("host", "regions");
	pid = actor(&self->a, NULL, region_small, s, 0);
	ASSERT_LT(0, pid);
	ASSERT_TRUE(wait_for(&s->ready[0], 1)) TH_LOG("%s", s->err);
	EXPECT_EQ(1, acount(CELL_A, "regions"));
	EXPECT_EQ(4 * pg, acount(CELL_A, "bytes"));
	EXPECT_EQ(4 * pg, acount(CELL_A, "unpinned_bytes"));
	EXPECT_EQ(4 * pg, acount(CELL_A, "purgeable_bytes"));
	EXPECT_EQ(0, acount(CELL_A, "pinned_bytes"));
	EXPECT_EQ(0, acount(CELL_B, "regions"));
	EXPECT_EQ(0, acount(CELL_B, "bytes"));
	EXPECT_EQ(host0, acount("host", "regions"));
	post(&s->step, 1);
	ASSERT_TRUE(wait_for(&s->ready[0], 2)) TH_LOG("%s", s->err);
	EXPECT_EQ(4 * pg, acount(CELL_A, "pinned_bytes"));
	EXPECT_EQ(0, acount(CELL_A, "unpinned_bytes"));
	post(&s->step, 2);
	EXPECT_EQ(0, child_status(pid)) TH_LOG("%s", s->err);
	/* Gone with its last file and mapping. */
	EXPECT_EQ(0, acount(CELL_A, "regions"));
	EXPECT_EQ(0, acount(CELL_A, "bytes"));

	/* Owned by the cell's root, 0400 but max_bytes 0600. */
	snprintf(path, sizeof(path), CELLS CELL_A "/ashmem/regions");
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0400, st.st_mode & 07777);
	EXPECT_EQ(variant->a_userns ? UID_BASE : 0, st.st_uid);
	snprintf(path, sizeof(path), CELLS CELL_A "/ashmem/max_bytes");
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0600, st.st_mode & 07777);
	EXPECT_EQ(LONG_MAX, acount(CELL_A, "max_bytes"));
}

static int try_read(void *arg)
{
	char buf[64];

	return -read_file(arg, buf, sizeof(buf));
}

struct fwrite {
	const char *path;
	const char *val;
};

static int try_write(void *arg)
{
	const struct fwrite *w = arg;

	return -write_file(w->path, w->val);
}

TEST_F(cells, other_cell_files)
{
	static const struct fwrite a_max = { CELLS CELL_A "/ashmem/max_bytes", "4096" };
	static const struct fwrite host_max = { CELLS "host/ashmem/max_bytes", "4096" };

	/* B reads its own files, not A's nor the host's; A not B's. */
	EXPECT_EQ(0, container_run(&self->b.c, try_read, CELLS CELL_B "/ashmem/bytes"));
	EXPECT_EQ(EACCES, container_run(&self->b.c, try_read, CELLS CELL_A "/ashmem/bytes"));
	EXPECT_EQ(EACCES, container_run(&self->b.c, try_read, CELLS "host/ashmem/bytes"));
	EXPECT_EQ(EACCES, container_run(&self->a.c, try_read, CELLS CELL_B "/ashmem/regions"));
	/* Nor changes their budget. */
	EXPECT_EQ(EACCES, container_run(&self->b.c, try_write, (void *)&a_max));
	EXPECT_EQ(EACCES, container_run(&self->b.c, try_write, (void *)&host_max));
	EXPECT_EQ(LONG_MAX, acount(CELL_A, "max_bytes"));
	EXPECT_EQ(LONG_MAX, acount("host", "max_bytes"));
}

static int own_limit(struct stage *s, int id)
{
	int fd, fd2, ret;
	char buf[32];
	pid_t pid;

	ret = write_file(CELLS CELL_B "/ashmem/max_bytes", "bogus");
	ACHECK(s, ret == -EINVAL, "bogus limit: %d", ret);
	ret = write_file(CELLS CELL_B "/ashmem/max_bytes", "-1");
	ACHECK(s, ret == -EINVAL, "negative limit: %d", ret);
	snprintf(buf, sizeof(buf), "%ld", 16 * pg);
	ret = write_file(CELLS CELL_B "/ashmem/max_bytes", buf);
	ACHECK(s, !ret, "own limit: %d", ret);
	fd = ash_create("a", 16 * pg);
	ACHECK(s, fd >= 0, "within max_bytes: %d", fd);
	fd2 = ash_create("b", 1);
	ACHECK(s, fd2 == -ENOMEM, "past max_bytes: %d", fd2);
	/* Sizes can shrink before the first mapping, which frees budget. */
	ACHECK(s, !ioctl(fd, ASHMEM_SET_SIZE, 15 * pg), "shrink: %s", strerror(errno));
	fd2 = ash_create("b", pg);
	ACHECK(s, fd2 >= 0, "after shrinking: %d", fd2);
	s->val[0] = 1;
	/* A user of the cell who is not its root cannot lift the limit. */
	pid = fork();
	if (pid == 0) {
		if (setresuid(1000, 1000, 1000))
			_exit(2);
		_exit(write_file(CELLS CELL_B "/ashmem/max_bytes", "max") ? 0 : 1);
	}
	ACHECK(s, child_status(pid) == 0, "an unprivileged user lifted the limit");
	ret = write_file(CELLS CELL_B "/ashmem/max_bytes", "max");
	ACHECK(s, !ret, "max: %d", ret);
	close(fd);
	close(fd2);
	return 0;
}

TEST_F(cells, max_bytes)
{
	struct stage *s = self->s;
	pid_t pid;

	pid = actor(&self->b, NULL, own_limit, s, 0);
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, child_status(pid)) TH_LOG("%s", s->err);
	EXPECT_EQ(1, s->val[0]);
	EXPECT_EQ(1, acount(CELL_B, "size_denied"));
	EXPECT_EQ(LONG_MAX, acount(CELL_B, "max_bytes"));
	EXPECT_EQ(0, acount(CELL_A, "size_denied"));
	EXPECT_EQ(0, acount(CELL_B, "bytes"));
}

/* A's root purges A's caches; B's and the host's stay. */
TEST_F(cells, purge_all_is_per_cell)
{
	struct stage *s = self->s;
	pid_t a, b, h, purger;

	a = actor(&self->a, NULL, region_small, s, 0);
	b = actor(&self->b, NULL, region_small, s, 1);
	h = actor(NULL, NULL, region_small, s, 2);
	ASSERT_LT(0, a);
	ASSERT_LT(0, b);
	ASSERT_LT(0, h);
	ASSERT_TRUE(wait_for(&s->ready[0], 1)) TH_LOG("%s", s->err);
	purger = actor(&self->a, NULL, region_and_purge, s, 3);
	ASSERT_LT(0, purger);
	EXPECT_EQ(0, child_status(purger)) TH_LOG("%s", s->err);
	EXPECT_EQ(4, s->val[8]);
	EXPECT_EQ(4 * pg, acount(CELL_A, "purged_bytes"));
	EXPECT_EQ(0, acount(CELL_A, "purgeable_bytes"));
	EXPECT_EQ(0, acount(CELL_B, "purged_bytes"));
	EXPECT_EQ(4 * pg, acount(CELL_B, "purgeable_bytes"));
	post(&s->step, 1);
	ASSERT_TRUE(wait_for(&s->ready[0], 2) && wait_for(&s->ready[1], 2) &&
		    wait_for(&s->ready[2], 2)) TH_LOG("%s", s->err);
	EXPECT_EQ(ASHMEM_WAS_PURGED, s->val[0]);
	EXPECT_EQ(ASHMEM_NOT_PURGED, s->val[1]);
	EXPECT_EQ(ASHMEM_NOT_PURGED, s->val[2]);
	post(&s->step, 2);
	EXPECT_EQ(0, child_status(a)) TH_LOG("%s", s->err);
	EXPECT_EQ(0, child_status(b)) TH_LOG("%s", s->err);
	EXPECT_EQ(0, child_status(h)) TH_LOG("%s", s->err);
}

static int region_big(struct stage *s, int id)
{
	return unpinned_region(s, id, 16 * MIB / pg, 'a' + id);
}

/* Anonymous memory in the caller's cgroup, touched: over its limit. */
static int eat_memory(struct stage *s, int id)
{
	size_t len = s->val[9];
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ACHECK(s, p != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(p, 1, len);
	post(&s->ready[id], 1);
	return 0;
}

/* Wait up to 20 s for A's purges to reach @bytes; what they reached. */
static long wait_purged(long bytes)
{
	struct timespec t0, t;
	long purged;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		purged = acount(CELL_A, "purged_bytes");
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (purged >= bytes || t.tv_sec - t0.tv_sec > 20)
			return purged;
		sched_yield();
	}
}

/*
 * Reclaim in A's cgroup purges A's unpinned region, and only that: B's
 * and the host's unpinned regions keep their pages. The shrinker only
 * asks A's purge work, which purges soon after: the purge is awaited,
 * and the pressure is memory.high, which throttles the hog meanwhile
 * rather than kill it.
 */
TEST_F(cells, pressure_purges_own_cell)
{
	struct stage *s = self->s;
	pid_t a, b, h, hg;
	char buf[64];
	long cur;

	a = actor(&self->a, CG_A, region_big, s, 0);
	b = actor(&self->b, CG_B, region_small, s, 1);
	h = actor(NULL, NULL, region_small, s, 2);
	ASSERT_TRUE(wait_for(&s->ready[0], 1) && wait_for(&s->ready[1], 1) &&
		    wait_for(&s->ready[2], 1)) TH_LOG("%s", s->err);
	/* A's 16 MiB are charged to A whoever touched them. */
	cur = memory_current(CG_A);
	EXPECT_LE(16 * MIB, cur);
	/* 8 MiB of room, a 16 MiB hog: only a purge makes it fit. */
	snprintf(buf, sizeof(buf), "%ld", cur + 8 * MIB);
	ASSERT_EQ(0, write_file(CGROOT "/" CG_A "/memory.high", buf));
	s->val[9] = 16 * MIB;
	hg = actor(NULL, CG_A, eat_memory, s, 3);
	EXPECT_EQ(0, child_status(hg)) TH_LOG("the hog failed: %s", s->err);
	EXPECT_LE(8 * MIB, wait_purged(8 * MIB));
	EXPECT_EQ(0, acount(CELL_B, "purged_bytes"));
	EXPECT_EQ(4 * pg, acount(CELL_B, "purgeable_bytes"));
	post(&s->step, 1);
	ASSERT_TRUE(wait_for(&s->ready[0], 2) && wait_for(&s->ready[1], 2) &&
		    wait_for(&s->ready[2], 2)) TH_LOG("%s", s->err);
	EXPECT_EQ(ASHMEM_WAS_PURGED, s->val[0]);
	EXPECT_EQ(ASHMEM_NOT_PURGED, s->val[1]);
	EXPECT_EQ(ASHMEM_NOT_PURGED, s->val[2]);
	post(&s->step, 2);
	EXPECT_EQ(0, child_status(a)) TH_LOG("%s", s->err);
	EXPECT_EQ(0, child_status(b)) TH_LOG("%s", s->err);
	EXPECT_EQ(0, child_status(h)) TH_LOG("%s", s->err);
	write_file(CGROOT "/" CG_A "/memory.high", "max");
}

#define EMPTY_REGIONS	256

/*
 * Huge regions, one page of each mapped and none touched, pinned and
 * unpinned to the end over and over until step 1: unpinned, they hold
 * nothing, but each range is 2^34 pages long (2^20 on 32 bits).
 */
static int unpin_loop(struct stage *s, int id)
{
	size_t size = sizeof(size_t) > 4 ? (size_t)1 << 46 : (size_t)-pg;
	int fd[EMPTY_REGIONS], i;

	for (i = 0; i < EMPTY_REGIONS; i++) {
		fd[i] = ash_create("cask-test-huge", size);
		ACHECK(s, fd[i] >= 0, "create: %d", fd[i]);
		ACHECK(s, ash_map(fd[i], pg, PROT_READ), "mmap: %s", strerror(errno));
		ACHECK(s, pin_ioctl(fd[i], ASHMEM_UNPIN, 0, 0) == 0, "unpin: %s",
		       strerror(errno));
	}
	post(&s->ready[id], 1);
	for (i = 0; __atomic_load_n(&s->step, __ATOMIC_ACQUIRE) < 1;
	     i = (i + 1) % EMPTY_REGIONS) {
		ACHECK(s, pin_ioctl(fd[i], ASHMEM_PIN, 0, 0) >= 0, "pin: %s",
		       strerror(errno));
		ACHECK(s, pin_ioctl(fd[i], ASHMEM_UNPIN, 0, 0) == 0, "unpin: %s",
		       strerror(errno));
	}
	return 0;
}

/*
 * Reclaim of A's cgroup is not held up by A's unpinned ranges that hold
 * nothing: they are counted, and a purge of them reported, as the pages
 * they hold, not their length, which made reclaim call the shrinker
 * again and again (up to twice the count), waiting for a purge each time.
 */
TEST_F(cells, reclaim_not_held_by_empty_ranges)
{
	struct stage *s = self->s;
	struct timespec t0, t;
	long secs;
	pid_t a;

	a = actor(&self->a, CG_A, unpin_loop, s, 0);
	ASSERT_LT(0, a);
	ASSERT_TRUE(wait_for(&s->ready[0], 1)) TH_LOG("%s", s->err);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Nothing much to reclaim: EAGAIN is fine, only the time counts. */
	write_file(CGROOT "/" CG_A "/memory.reclaim", "16M");
	clock_gettime(CLOCK_MONOTONIC, &t);
	post(&s->step, 1);
	secs = t.tv_sec - t0.tv_sec;
	TH_LOG("memory.reclaim took %ld s", secs);
	EXPECT_GT(10, secs);
	EXPECT_EQ(0, child_status(a)) TH_LOG("%s", s->err);
}

/* In A: make an 8 MiB region, never touch it, hand it to the test. */
static int make_and_send(struct stage *s, int id)
{
	int fd, ret;

	fd = ash_create("cask-test-charge", 8 * MIB);
	ACHECK(s, fd >= 0, "create: %d", fd);
	/* The first mmap makes the memory; still nothing touched. */
	ACHECK(s, ash_map(fd, 8 * MIB, PROT_READ), "mmap: %s", strerror(errno));
	ret = send_fd((int)s->val[10], fd);
	ACHECK(s, !ret, "send: %d", ret);
	ACHECK(s, wait_for(&s->step, 1), "no step 1");
	return 0;
}

/* Touch all of the region passed in val[11] from cgroup CG_H. */
static int touch_region(struct stage *s, int id)
{
	char *p = ash_map((int)s->val[11], 8 * MIB, PROT_READ | PROT_WRITE);

	ACHECK(s, p, "mmap: %s", strerror(errno));
	memset(p, 'h', 8 * MIB);
	return 0;
}

/* A region made in A is charged to A, even when the host touches it. */
TEST_F(cells, charged_to_creator)
{
	struct stage *s = self->s;
	long a0, h0, a1, h1;
	int sk[2], fd;
	pid_t a, t;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sk));
	mkdir(CGROOT "/" CG_H, 0755);
	s->val[10] = sk[0];
	a = actor(&self->a, CG_A, make_and_send, s, 0);
	ASSERT_LT(0, a);
	fd = recv_fd(sk[1]);
	ASSERT_LE(0, fd) TH_LOG("%s", s->err);
	a0 = memory_current(CG_A);
	h0 = memory_current(CG_H);
	s->val[11] = fd;
	t = actor(NULL, CG_H, touch_region, s, 1);
	EXPECT_EQ(0, child_status(t)) TH_LOG("%s", s->err);
	a1 = memory_current(CG_A);
	h1 = memory_current(CG_H);
	TH_LOG("A: %ld -> %ld, the toucher's cgroup: %ld -> %ld", a0, a1, h0, h1);
	/* A's other memory may shrink a little meanwhile. */
	EXPECT_LE(a0 + 7 * MIB, a1);
	EXPECT_GT(h0 + 2 * MIB, h1);
	post(&s->step, 1);
	EXPECT_EQ(0, child_status(a)) TH_LOG("%s", s->err);
	close(fd);
	close(sk[0]);
	close(sk[1]);
	rmdir(CGROOT "/" CG_H);
}

/* Make a 16 MiB region in the current cgroup and touch it; wait for step 1. */
static int region_touched(struct stage *s, int id)
{
	int fd;
	char *p;

	fd = ash_create("cask-test-own", 16 * MIB);
	ACHECK(s, fd >= 0, "create: %d", fd);
	p = ash_map(fd, 16 * MIB, PROT_READ | PROT_WRITE);
	ACHECK(s, p, "mmap: %s", strerror(errno));
	memset(p, 'o', 16 * MIB);
	post(&s->ready[id], 1);
	ACHECK(s, wait_for(&s->step, 1), "no step 1");
	return 0;
}

/*
 * A task of cell A in a cgroup of its own (a second container sharing
 * A's IPC namespace: a Kubernetes pod, docker --ipc=container:) pays for
 * the regions it makes, within its own limits, not A's cgroup.
 */
TEST_F(cells, charged_to_creator_cgroup)
{
	struct stage *s = self->s;
	long a0, h0, a1, h1;
	pid_t t;

	mkdir(CGROOT "/" CG_H, 0755);
	a0 = memory_current(CG_A);
	h0 = memory_current(CG_H);
	t = actor(&self->a, CG_H, region_touched, s, 0);
	ASSERT_LT(0, t);
	ASSERT_TRUE(wait_for(&s->ready[0], 1)) TH_LOG("%s", s->err);
	a1 = memory_current(CG_A);
	h1 = memory_current(CG_H);
	post(&s->step, 1);
	TH_LOG("A: %ld -> %ld, the creator's cgroup: %ld -> %ld", a0, a1, h0, h1);
	EXPECT_LE(h0 + 15 * MIB, h1);
	EXPECT_GT(a0 + 2 * MIB, a1);
	EXPECT_EQ(0, child_status(t)) TH_LOG("%s", s->err);
	rmdir(CGROOT "/" CG_H);
}

/* In A: make a 256 MiB region, map one page, hand it to the test. */
static int make_big_and_send(struct stage *s, int id)
{
	int fd, ret;

	fd = ash_create("cask-test-ranges", 256 * MIB);
	ACHECK(s, fd >= 0, "create: %d", fd);
	ACHECK(s, ash_map(fd, pg, PROT_READ), "mmap: %s", strerror(errno));
	ret = send_fd((int)s->val[10], fd);
	ACHECK(s, !ret, "send: %d", ret);
	ACHECK(s, wait_for(&s->step, 1), "no step 1");
	return 0;
}

/* Unpin every other page of the region passed in val[11], top down. */
static int split_region(struct stage *s, int id)
{
	long i;

	for (i = 256 * MIB / pg - 2; i >= 0; i -= 2)
		ACHECK(s, !pin_ioctl((int)s->val[11], ASHMEM_UNPIN, i * pg, pg),
		       "unpin %ld: %s", i, strerror(errno));
	return 0;
}

/*
 * The fd of A's region, passed to a process in another cgroup, which
 * splits it into 32768 unpinned ranges: that process pays for them,
 * not A.
 */
TEST_F_TIMEOUT(cells, ranges_charged_to_caller, 120)
{
	struct stage *s = self->s;
	long a0, h0, a1, h1;
	int sk[2], fd;
	pid_t a, t;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sk));
	mkdir(CGROOT "/" CG_H, 0755);
	s->val[10] = sk[0];
	a = actor(&self->a, CG_A, make_big_and_send, s, 0);
	ASSERT_LT(0, a);
	fd = recv_fd(sk[1]);
	ASSERT_LE(0, fd) TH_LOG("%s", s->err);
	a0 = memory_current(CG_A);
	h0 = memory_current(CG_H);
	s->val[11] = fd;
	t = actor(NULL, CG_H, split_region, s, 1);
	EXPECT_EQ(0, child_status(t)) TH_LOG("%s", s->err);
	/* The ranges live on with the region, charged to the splitter. */
	a1 = memory_current(CG_A);
	h1 = memory_current(CG_H);
	TH_LOG("A: %ld -> %ld, the splitter's cgroup: %ld -> %ld", a0, a1, h0, h1);
	EXPECT_LE(h0 + 2 * MIB, h1);
	EXPECT_GT(a0 + MIB, a1);
	post(&s->step, 1);
	EXPECT_EQ(0, child_status(a)) TH_LOG("%s", s->err);
	close(fd);
	close(sk[0]);
	close(sk[1]);
	rmdir(CGROOT "/" CG_H);
}

/* Make every task of cgroup @cg unkillable (-1000) or normal again (0). */
static void set_oom_adj(const char *cg, const char *adj)
{
	char path[PATH_MAX], line[32];
	FILE *procs;

	snprintf(path, sizeof(path), CGROOT "/%s/cgroup.procs", cg);
	procs = fopen(path, "r");
	if (!procs)
		return;
	while (fgets(line, sizeof(line), procs)) {
		snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", atoi(line));
		write_file(path, adj);
	}
	fclose(procs);
}

/*
 * A cell at its memory limit, with nothing its OOM killer may kill: the
 * host touching the cell's region gets a bus error, and pays nothing.
 */
TEST_F(cells, full_cell_never_charges_mapper)
{
	struct stage *s = self->s;
	int sk[2], fd, status;
	pid_t a, t, waited;
	long a0, h0, h1;
	char buf[64];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sk));
	mkdir(CGROOT "/" CG_H, 0755);
	s->val[10] = sk[0];
	a = actor(&self->a, CG_A, make_and_send, s, 0);
	ASSERT_LT(0, a);
	fd = recv_fd(sk[1]);
	ASSERT_LE(0, fd) TH_LOG("%s", s->err);
	set_oom_adj(CG_A, "-1000");
	a0 = memory_current(CG_A);
	snprintf(buf, sizeof(buf), "%ld", a0 + MIB);
	ASSERT_EQ(0, write_file(CGROOT "/" CG_A "/memory.max", buf));
	h0 = memory_current(CG_H);
	s->val[11] = fd;
	/* The cell's OOM killer runs, finds nothing: its report is expected. */
	write_file("/dev/kmsg", "cask-test: oom expected\n");
	t = actor(NULL, CG_H, touch_region, s, 1);
	waited = waitpid(t, &status, 0);
	write_file("/dev/kmsg", "cask-test: oom done\n");
	ASSERT_EQ(t, waited);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS)
		TH_LOG("the toucher ended with status %#x: %s", status, s->err);
	h1 = memory_current(CG_H);
	TH_LOG("the toucher's cgroup: %ld -> %ld", h0, h1);
	EXPECT_GT(h0 + MIB, h1);
	EXPECT_GE(a0 + MIB, memory_current(CG_A));
	write_file(CGROOT "/" CG_A "/memory.max", "max");
	set_oom_adj(CG_A, "0");
	post(&s->step, 1);
	EXPECT_EQ(0, child_status(a)) TH_LOG("%s", s->err);
	close(fd);
	close(sk[0]);
	close(sk[1]);
	rmdir(CGROOT "/" CG_H);
}

/* ---- the host cell's regions: charged as shmem charges ---------------------- */

#define CG_LIM		"cask-ash-lim"

/*
 * In cgroup CG_LIM: make a region of @bytes in the host's cell, touch it
 * all, write a byte to @done, then wait for @go to close. Exits 0 if the
 * whole region could be touched.
 */
static void host_toucher(size_t bytes, int done, int go)
{
	char *p, c = 0;
	int fd;

	if (join_cgroup(CG_LIM))
		_exit(98);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(200);
	fd = ash_create("cask-test-host-limit", bytes);
	if (fd < 0)
		_exit(2);
	p = ash_map(fd, bytes, PROT_READ | PROT_WRITE);
	if (!p)
		_exit(3);
	memset(p, 'h', bytes);
	if (write(done, &c, 1) != 1)
		_exit(4);
	if (read(go, &c, 1) < 0)
		_exit(5);
	_exit(0);
}

static pid_t host_toucher_start(size_t bytes, int *done, int *go)
{
	int d[2], g[2];
	pid_t pid;

	if (pipe(d))
		return -1;
	if (pipe(g)) {
		close(d[0]);
		close(d[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(d[0]);
		close(g[1]);
		host_toucher(bytes, d[1], g[0]);
	}
	close(d[1]);
	close(g[0]);
	*done = d[0];
	*go = g[1];
	return pid;
}

/*
 * The host's cell has the root cgroup, which no limit binds: a region of
 * the host's cell is charged to whoever touches its pages, as shmem does,
 * so a host process in a limited cgroup (a systemd service, docker
 * --ipc=host) cannot use ashmem to get past its memory.max.
 */
TEST(host_cell_charges_toucher)
{
	int done, go, status;
	long cur0, cur;
	pid_t pid;
	char c;

	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	rmdir(CGROOT "/" CG_LIM);
	ASSERT_EQ(0, mkdir(CGROOT "/" CG_LIM, 0755));
	ASSERT_EQ(0, write_file(CGROOT "/" CG_LIM "/memory.max", "33554432"));
	/* No swap in the guest; where there is, the pages must stay put. */
	write_file(CGROOT "/" CG_LIM "/memory.swap.max", "0");

	/* Less than the limit: there, in memory.current. */
	cur0 = memory_current(CG_LIM);
	pid = host_toucher_start(16 * MIB, &done, &go);
	ASSERT_LT(0, pid);
	EXPECT_EQ(1, read(done, &c, 1));
	cur = memory_current(CG_LIM);
	TH_LOG("memory.current with 16 MiB touched: %ld -> %ld", cur0, cur);
	EXPECT_LE(cur0 + 15 * MIB, cur);
	close(go);
	close(done);
	EXPECT_EQ(0, child_status(pid));

	/* Twice the limit: the cgroup's OOM killer (or a bus error) stops it. */
	write_file("/dev/kmsg", "cask-test: oom expected\n");
	pid = host_toucher_start(64 * MIB, &done, &go);
	ASSERT_LT(0, pid);
	if (read(done, &c, 1) == 1)
		TH_LOG("64 MiB of ashmem touched under a memory.max of 32 MiB");
	close(go);
	close(done);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	write_file("/dev/kmsg", "cask-test: oom done\n");
	EXPECT_TRUE(WIFSIGNALED(status) &&
		    (WTERMSIG(status) == SIGKILL || WTERMSIG(status) == SIGBUS))
		TH_LOG("the toucher ended with status %#x", status);
	EXPECT_EQ(0, rmdir(CGROOT "/" CG_LIM));
}

/* ---- allocation failures -------------------------------------------------- */

/*
 * One attempt of each operation with its @n-th allocation failing (none
 * for 0): 0 or the errno it failed with; *@reached tells whether the
 * failure was reached, that is whether a larger @n is worth a try.
 */
static void arm(int nth_fd, int n)
{
	if (n)
		fail_nth_set(nth_fd, n);
}

static void disarm(int nth_fd, int n, bool *reached)
{
	*reached = n && !fail_nth_unused(nth_fd);
	fail_nth_set(nth_fd, 0);
}

static int fault_open(int nth_fd, int n, bool *reached)
{
	int fd, err = 0;

	arm(nth_fd, n);
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		err = errno;
	disarm(nth_fd, n, reached);
	if (fd >= 0)
		close(fd);
	return err;
}

static int fault_size_map(int nth_fd, int n, bool *reached)
{
	char *p = MAP_FAILED;
	int fd, err = 0;

	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 255;
	arm(nth_fd, n);
	if (ioctl(fd, ASHMEM_SET_NAME, "fault") || ioctl(fd, ASHMEM_SET_SIZE, 4 * pg))
		err = errno;
	if (!err) {
		p = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			err = errno;
	}
	disarm(nth_fd, n, reached);
	/* Touched with nothing failing: a page fault cannot fail softly. */
	if (p != MAP_FAILED) {
		memset(p, 'f', 4 * pg);
		munmap(p, 4 * pg);
	}
	close(fd);
	return err;
}

static int fault_pin(int nth_fd, int n, bool *reached)
{
	int fd, err = 0;
	char *p;

	fd = ash_create("fault", 4 * pg);
	if (fd < 0)
		return 255;
	p = ash_map(fd, 4 * pg, PROT_READ | PROT_WRITE);
	if (!p) {
		close(fd);
		return 254;
	}
	memset(p, 'f', 4 * pg);
	arm(nth_fd, n);
	if (pin_ioctl(fd, ASHMEM_UNPIN, pg, 2 * pg) ||
	    pin_ioctl(fd, ASHMEM_PIN, 2 * pg, pg) < 0 ||
	    pin_ioctl(fd, ASHMEM_UNPIN, 0, 0) ||
	    pin_ioctl(fd, ASHMEM_GET_PIN_STATUS, 0, 0) < 0 ||
	    ioctl(fd, ASHMEM_PURGE_ALL_CACHES) < 0)
		err = errno;
	disarm(nth_fd, n, reached);
	munmap(p, 4 * pg);
	close(fd);
	return err;
}

typedef int (*fault_op)(int nth_fd, int n, bool *reached);

static void fault_run(struct __test_metadata *_metadata, fault_op op, const char *what)
{
	int nth_fd, n, ret, failed = 0;
	bool reached, unused;

	nth_fd = fail_nth_fd();
	ASSERT_LE(0, nth_fd);
	for (n = 1; n <= MAX_NTH; n++) {
		ret = op(nth_fd, n, &reached);
		if (!reached) {
			EXPECT_EQ(0, ret) TH_LOG("%s, fail-nth %d not reached: %d", what, n, ret);
			break;
		}
		if (ret) {
			failed++;
			/* shmem says ENOSPC when it cannot make an inode. */
			EXPECT_TRUE(ret == ENOMEM || ret == ENOSPC)
				TH_LOG("%s, fail-nth %d: %s", what, n, strerror(ret));
		}
		/* A failed attempt leaves nothing broken. */
		EXPECT_EQ(0, op(nth_fd, 0, &unused))
			TH_LOG("%s, fail-nth %d: no recovery", what, n);
	}
	close(nth_fd);
	EXPECT_GE(MAX_NTH, n) TH_LOG("%s: more than %d allocations", what, MAX_NTH);
	EXPECT_LT(0, failed) TH_LOG("%s: no attempt failed", what);
	TH_LOG("%s: %d of %d attempts failed cleanly", what, failed, n - 1);
}

FIXTURE(afault) {
	long regions0;
};

FIXTURE_SETUP(afault)
{
	if (ashmem_missing())
		SKIP(return, "%s", ashmem_missing());
	if (fault_missing())
		SKIP(return, "%s", fault_missing());
	ASSERT_EQ(0, fault_setup());
	/* An auto cell of this test alone. */
	ASSERT_EQ(0, unshare(CLONE_NEWIPC));
}

FIXTURE_TEARDOWN(afault)
{
}

static void expect_no_regions(struct __test_metadata *_metadata)
{
	char self[64] = "", path[PATH_MAX];

	ASSERT_EQ(0, read_file(CASK "/self", self, sizeof(self)));
	self[strcspn(self, "\n")] = '\0';
	snprintf(path, sizeof(path), "%s", self);
	EXPECT_EQ(0, acount(path, "regions"));
	EXPECT_EQ(0, acount(path, "bytes"));
	EXPECT_EQ(0, acount(path, "unpinned_bytes"));
}

TEST_F_TIMEOUT(afault, open, 300)
{
	fault_run(_metadata, fault_open, "open");
	expect_no_regions(_metadata);
}

TEST_F_TIMEOUT(afault, size_and_mmap, 300)
{
	fault_run(_metadata, fault_size_map, "size and mmap");
	expect_no_regions(_metadata);
}

TEST_F_TIMEOUT(afault, pin_unpin, 300)
{
	fault_run(_metadata, fault_pin, "pin and unpin");
	expect_no_regions(_metadata);
}

TEST_HARNESS_MAIN
