// SPDX-License-Identifier: GPL-2.0
/*
 * cask-demo: the steps of `make run` (tools/qemu/demo.sh) that a shell
 * cannot make itself: binder transactions, ashmem ioctls, and a low
 * memory killer victim that is no shell. Each command
 * prints one or a few lines a reader can follow, and exits non-zero with
 * the reason when the step does not do what the demo says it does.
 *
 * The binder protocol helpers are the selftests' (selftests/cask/
 * cask_binder.h), the ioctl numbers the kernel's and ours (UAPI headers).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/android/binder.h>
#include <linux/ashmem.h>

#include "cask_binder.h"

/* The one call the demo's managers answer. */
#define DEMO_PING	B_PACK_CHARS('_', 'P', 'N', 'G')

static int fail(const char *what, int err)
{
	fprintf(stderr, "cask-demo: %s: %s\n", what, strerror(-err));
	return 1;
}

/* The name of the caller's cell, as /sys/kernel/cask/self reads. */
static int self_cell(char *buf, size_t len)
{
	return read_file(CASK "/self", buf, len);
}

/* Reply to a ping with the manager's cell name, NUL included. */
static int serve_ping(struct brd *r, const struct binder_transaction_data *tr,
		      struct txn *reply, void *arg)
{
	const char *cell = arg;

	(void)r;
	if (tr->code != DEMO_PING)
		return -EPROTO;
	txn_put(reply, cell, strlen(cell) + 1);
	return BSERVE_NEXT;
}

/*
 * Become the context manager (handle 0) of /dev/binder in the caller's
 * cell and answer pings with the cell's name until killed.
 */
static int binder_manager(void)
{
	char cell[64];
	struct bdev b;
	struct brd r;
	int ret;

	ret = self_cell(cell, sizeof(cell));
	if (ret)
		return fail(CASK "/self", ret);
	ret = bdev_open(&b, "/dev/binder", 0, BMAP_SIZE);
	if (ret)
		return fail("open /dev/binder", ret);
	if (ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0))
		return fail("BINDER_SET_CONTEXT_MGR", -errno);
	ret = bc_plain(b.fd, BC_ENTER_LOOPER);
	if (ret)
		return fail("BC_ENTER_LOOPER", ret);
	printf("binder: %s's context manager is pid %d, answering pings\n", cell, getpid());
	fflush(stdout);
	brd_init(&r, b.fd);
	ret = bserve(&r, serve_ping, cell);
	return fail("serving", ret ? ret : -EPROTO);
}

/*
 * Ping handle 0 of /dev/binder: the context manager of the caller's cell
 * answers with its cell's name. With "none", the caller's cell must have
 * no manager: the call fails with BR_DEAD_REPLY.
 */
static int binder_ping(const char *expect)
{
	struct binder_transaction_data reply;
	char cell[64], answer[64];
	struct bdev b;
	struct brd r;
	uint32_t br;
	int ret;

	ret = self_cell(cell, sizeof(cell));
	if (ret)
		return fail(CASK "/self", ret);
	ret = bdev_open(&b, "/dev/binder", 0, BMAP_SIZE);
	if (ret)
		return fail("open /dev/binder", ret);
	brd_init(&r, b.fd);
	ret = txn_call(&r, 0, DEMO_PING, NULL, &br, &reply);
	if (ret)
		return fail("ping", ret);
	if (br != BR_REPLY) {
		printf("binder: a client in %s pings handle 0: %s (no context manager)\n",
		       cell, br_name(br));
		return strcmp(expect, "none") ? 1 : 0;
	}
	snprintf(answer, sizeof(answer), "%.*s", (int)reply.data_size,
		 (const char *)(uintptr_t)reply.data.ptr.buffer);
	txn_free(b.fd, &reply);
	bdev_close(&b);
	printf("binder: a client in %s pings handle 0: \"%s\" answers\n", cell, answer);
	if (strcmp(answer, expect)) {
		fprintf(stderr, "cask-demo: expected %s's manager to answer\n", expect);
		return 1;
	}
	return 0;
}

/* Print the caller's cell's ashmem counters on one line. */
static int ashmem_counters(const char *cell, const char *when)
{
	static const char *const files[] = {
		"regions", "bytes", "pinned_bytes", "unpinned_bytes", NULL
	};
	char path[128], val[32];
	int i, ret;

	printf("ashmem: %s/ashmem %s:", cell, when);
	for (i = 0; files[i]; i++) {
		snprintf(path, sizeof(path), "ashmem/%s", files[i]);
		ret = cell_value(cell, path, val, sizeof(val));
		if (ret) {
			printf("\n");
			return fail(path, ret);
		}
		printf(" %s %s", files[i], val);
	}
	printf("\n");
	return 0;
}

/* Print the caller's /proc/self/maps line for /dev/ashmem/@name. */
static int ashmem_maps_line(const char *name)
{
	char line[512], want[300];
	bool found = false;
	FILE *f;

	snprintf(want, sizeof(want), "/dev/ashmem/%s", name);
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return fail("/proc/self/maps", -errno);
	while (fgets(line, sizeof(line), f)) {
		char *from, *to;

		if (!strstr(line, want))
			continue;
		/* The columns without their padding. */
		for (from = line, to = line; *from; from++)
			if (*from != ' ' || to == line || to[-1] != ' ')
				*to++ = *from;
		*to = '\0';
		printf("ashmem: maps: %s", line);
		found = true;
	}
	fclose(f);
	if (!found)
		fprintf(stderr, "cask-demo: no %s in /proc/self/maps\n", want);
	return found ? 0 : 1;
}

/*
 * Make a region @name of @kib KiB, map and fill it, unpin its second half,
 * show it in maps and in the caller's cell's counters, then close it and
 * show the counters again.
 */
static int ashmem_region(const char *name, const char *kib)
{
	struct ashmem_pin pin;
	char cell[64];
	size_t size;
	int fd, ret;
	void *p;

	/* Unpinning works on whole pages: each half must be some. */
	size = strtoul(kib, NULL, 10) * 1024;
	if (!size || size % (2 * sysconf(_SC_PAGESIZE)))
		return fail("size", -EINVAL);
	ret = self_cell(cell, sizeof(cell));
	if (ret)
		return fail(CASK "/self", ret);
	fd = open("/dev/ashmem", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail("open /dev/ashmem", -errno);
	if (ioctl(fd, ASHMEM_SET_NAME, name))
		return fail("ASHMEM_SET_NAME", -errno);
	if (ioctl(fd, ASHMEM_SET_SIZE, size))
		return fail("ASHMEM_SET_SIZE", -errno);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return fail("mmap", -errno);
	memset(p, 0x5a, size);
	pin.offset = size / 2;
	pin.len = size / 2;
	if (ioctl(fd, ASHMEM_UNPIN, &pin) < 0)
		return fail("ASHMEM_UNPIN", -errno);
	printf("ashmem: %s made \"%s\", %zu KiB, and unpinned its second half\n",
	       cell, name, size / 1024);
	if (ashmem_maps_line(name) || ashmem_counters(cell, "now"))
		return 1;
	munmap(p, size);
	close(fd);
	return ashmem_counters(cell, "after close");
}

/*
 * A victim for the cell's low memory killer: with oom_score_adj 900 set by
 * itself once running (so the kill finds this program, not a shell on its
 * way to exec it) and @kib KiB of its own memory, wait to be killed.
 */
static int lmk_victim(const char *kib)
{
	size_t size = strtoul(kib, NULL, 10) * 1024;
	char *p;
	int ret;

	if (!size)
		return fail("size", -EINVAL);
	p = malloc(size);
	if (!p)
		return fail("malloc", -ENOMEM);
	memset(p, 1, size);
	ret = write_file("/proc/self/oom_score_adj", "900");
	if (ret)
		return fail("/proc/self/oom_score_adj", ret);
	printf("lmk: pid %d, oom_score_adj 900, %zu KiB of its own, waits to be killed\n",
	       getpid(), size / 1024);
	sleep(30);
	fprintf(stderr, "cask-demo: not killed within 30 s\n");
	free(p);
	return 1;
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: cask-demo binder-manager\n"
		"       cask-demo binder-ping CELL|none\n"
		"       cask-demo ashmem NAME KIB\n"
		"       cask-demo lmk-victim KIB\n"
		"\n"
		"binder-manager  become /dev/binder's context manager in this cell and\n"
		"                answer pings with the cell's name, until killed\n"
		"binder-ping     ping handle 0 of /dev/binder; CELL's manager must\n"
		"                answer (none: this cell must have no manager)\n"
		"ashmem          make, map and half unpin a region; show it in\n"
		"                /proc/self/maps and in the cell's ashmem counters\n"
		"lmk-victim      take KIB KiB, raise its oom_score_adj to 900 and wait\n"
		"                (30 s at most) for the low memory killer\n");
}

int main(int argc, char **argv)
{
	/* Lines of the background managers and of the shell stay in order. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "binder-manager"))
		return binder_manager();
	if (argc == 3 && !strcmp(argv[1], "binder-ping"))
		return binder_ping(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "ashmem"))
		return ashmem_region(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "lmk-victim"))
		return lmk_victim(argv[2]);
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		print_usage(stdout);
		return 0;
	}
	print_usage(stderr);
	return 2;
}
