// SPDX-License-Identifier: GPL-2.0
/*
 * cask-demo: the steps of `make run` (tools/qemu/demo.sh) that a shell
 * cannot make itself: binder transactions (a context manager, a service
 * added to it and a client that finds the service there, as Android's
 * servicemanager, services and apps do), ashmem ioctls, a low memory
 * killer victim that is no shell, and lmkd's PSI monitor with a memory
 * hog to set it off. Each command
 * prints one or a few lines a reader can follow, and exits non-zero with
 * the reason when the step does not do what the demo says it does.
 *
 * The binder protocol helpers are the selftests' (selftests/cask/
 * cask_binder.h), the ioctl numbers the kernel's and ours (UAPI headers).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/android/binder.h>
#include <linux/ashmem.h>

#include "cask_binder.h"

/* The calls the demo's managers answer, and its services. */
#define DEMO_PING	B_PACK_CHARS('_', 'P', 'N', 'G')
#define DEMO_ADD	B_PACK_CHARS('_', 'A', 'D', 'D')
#define DEMO_GET	B_PACK_CHARS('_', 'G', 'E', 'T')
#define DEMO_HELLO	B_PACK_CHARS('_', 'H', 'L', 'O')

#define DEMO_SERVICES	8

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

/* What a manager knows: its cell's name and the services added to it. */
struct manager {
	const char *cell;
	int n;
	struct {
		char name[32];
		uint32_t handle;
	} svc[DEMO_SERVICES];
};

/* The NUL-terminated name at the start of a call's data, or NULL. */
static const char *call_name(const struct binder_transaction_data *tr)
{
	const char *data = (const char *)(uintptr_t)tr->data.ptr.buffer;
	size_t len = tr->data_size ? strnlen(data, tr->data_size) : 0;

	return len && len < tr->data_size && len < 32 ? data : NULL;
}

/*
 * A ping: reply with the manager's cell name, NUL included. An add: keep
 * a strong reference to the service's handle (the call's buffer holds one
 * only until it is freed), as servicemanager does. A get: reply with the
 * service's handle, or with nothing.
 */
static int serve_manager(struct brd *r, const struct binder_transaction_data *tr,
			 struct txn *reply, void *arg)
{
	const struct flat_binder_object *obj;
	struct manager *m = arg;
	const char *name;
	int i;

	if (tr->code == DEMO_PING) {
		txn_put(reply, m->cell, strlen(m->cell) + 1);
		return BSERVE_NEXT;
	}
	name = call_name(tr);
	if (!name || (tr->code != DEMO_ADD && tr->code != DEMO_GET))
		return -EPROTO;
	for (i = 0; i < m->n && strcmp(m->svc[i].name, name); i++)
		;
	if (tr->code == DEMO_GET) {
		if (i < m->n)
			txn_handle(reply, m->svc[i].handle);
		return BSERVE_NEXT;
	}
	obj = txn_rx_obj(tr, 0);
	if (!obj || obj->hdr.type != BINDER_TYPE_HANDLE || i == DEMO_SERVICES)
		return -EPROTO;
	if (bc_u32(r->fd, BC_ACQUIRE, obj->handle))
		return -EPROTO;
	snprintf(m->svc[i].name, sizeof(m->svc[i].name), "%s", name);
	m->svc[i].handle = obj->handle;
	if (i == m->n)
		m->n++;
	printf("binder: %s's context manager: service \"%s\" added, handle %u\n",
	       m->cell, name, obj->handle);
	return BSERVE_NEXT;
}

/*
 * Become the context manager (handle 0) of /dev/binder in the caller's
 * cell, answer pings with the cell's name and keep a directory of
 * services, until killed.
 */
static int binder_manager(void)
{
	struct manager m = { .n = 0 };
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
	m.cell = cell;
	ret = bserve(&r, serve_manager, &m);
	return fail("serving", ret ? ret : -EPROTO);
}

/* A hello: reply with who answers, the service's name, cell and pid. */
static int serve_hello(struct brd *r, const struct binder_transaction_data *tr,
		       struct txn *reply, void *arg)
{
	char answer[128];

	(void)r;
	if (tr->code != DEMO_HELLO)
		return -EPROTO;
	snprintf(answer, sizeof(answer), "%s, pid %d", (const char *)arg, getpid());
	txn_put(reply, answer, strlen(answer) + 1);
	return BSERVE_NEXT;
}

/*
 * A service: add a binder object of this process to the context manager
 * of the caller's cell under @name, then answer hellos until killed.
 */
static int binder_service(const char *name)
{
	struct binder_transaction_data reply;
	char cell[64], who[128];
	static int node;
	struct txn t;
	struct bdev b;
	struct brd r;
	uint32_t br;
	int ret;

	if (!*name || strlen(name) >= 32)
		return fail("name", -EINVAL);
	ret = self_cell(cell, sizeof(cell));
	if (ret)
		return fail(CASK "/self", ret);
	ret = bdev_open(&b, "/dev/binder", 0, BMAP_SIZE);
	if (ret)
		return fail("open /dev/binder", ret);
	ret = bc_plain(b.fd, BC_ENTER_LOOPER);
	if (ret)
		return fail("BC_ENTER_LOOPER", ret);
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_put(&t, name, strlen(name) + 1);
	txn_binder(&t, (uintptr_t)&node, 0, 0);
	ret = txn_call(&r, 0, DEMO_ADD, &t, &br, &reply);
	if (ret)
		return fail("add", ret);
	if (br != BR_REPLY) {
		fprintf(stderr, "cask-demo: adding %s: %s\n", name, br_name(br));
		return 1;
	}
	txn_free(b.fd, &reply);
	printf("binder: service \"%s\" in %s, pid %d, added to the context manager\n",
	       name, cell, getpid());
	snprintf(who, sizeof(who), "%s in %s", name, cell);
	ret = bserve(&r, serve_hello, who);
	return fail("serving", ret ? ret : -EPROTO);
}

/*
 * A client: get service @name's handle from the context manager of the
 * caller's cell and call it. Its answer must name the caller's cell.
 */
static int binder_client(const char *name)
{
	struct binder_transaction_data got, reply;
	const struct flat_binder_object *obj;
	char cell[64], answer[128];
	uint32_t handle, br;
	struct txn t;
	struct bdev b;
	struct brd r;
	int ret;

	ret = self_cell(cell, sizeof(cell));
	if (ret)
		return fail(CASK "/self", ret);
	ret = bdev_open(&b, "/dev/binder", 0, BMAP_SIZE);
	if (ret)
		return fail("open /dev/binder", ret);
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_put(&t, name, strlen(name) + 1);
	ret = txn_call(&r, 0, DEMO_GET, &t, &br, &got);
	if (ret)
		return fail("get", ret);
	if (br != BR_REPLY) {
		fprintf(stderr, "cask-demo: getting %s: %s\n", name, br_name(br));
		return 1;
	}
	obj = txn_rx_obj(&got, 0);
	if (!obj || obj->hdr.type != BINDER_TYPE_HANDLE) {
		fprintf(stderr, "cask-demo: %s's context manager has no service %s\n", cell, name);
		return 1;
	}
	handle = obj->handle;
	/* The reply's buffer holds the reference until it is freed. */
	ret = txn_call(&r, handle, DEMO_HELLO, NULL, &br, &reply);
	if (ret)
		return fail("call", ret);
	if (br != BR_REPLY) {
		fprintf(stderr, "cask-demo: calling %s: %s\n", name, br_name(br));
		return 1;
	}
	snprintf(answer, sizeof(answer), "%.*s", (int)reply.data_size,
		 (const char *)(uintptr_t)reply.data.ptr.buffer);
	txn_free(b.fd, &reply);
	txn_free(b.fd, &got);
	bdev_close(&b);
	printf("binder: a client in %s gets \"%s\" from the context manager, handle %u\n",
	       cell, name, handle);
	printf("binder: it calls the service: \"%s\" answers\n", answer);
	if (!strstr(answer, cell)) {
		fprintf(stderr, "cask-demo: the service is not in %s\n", cell);
		return 1;
	}
	return 0;
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

/* Milliseconds since @t0. */
static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * lmkd's PSI monitor: its default trigger on /proc/pressure/memory,
 * written as lmkd writes it (NUL included), then poll() for @secs
 * seconds. Exit 0 on an event, 1 without.
 */
static int psi_monitor(const char *secs)
{
	static const char trigger[] = "some 70000 1000000";
	struct pollfd p = { .events = POLLPRI };
	struct timespec t0;
	long timeout;
	int ret;

	timeout = strtol(secs, NULL, 10) * 1000;
	if (timeout <= 0)
		return fail("seconds", -EINVAL);
	p.fd = open("/proc/pressure/memory", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (p.fd < 0)
		return fail("open /proc/pressure/memory", -errno);
	if (write(p.fd, trigger, sizeof(trigger)) != sizeof(trigger))
		return fail("writing the trigger", -errno);
	printf("psi: lmkd's trigger \"%s\" armed on /proc/pressure/memory, pid %d\n",
	       trigger, getpid());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ret = poll(&p, 1, timeout - ms_since(&t0));
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return fail("poll", -errno);
	if (p.revents & (POLLERR | POLLNVAL))
		return fail("poll", -EIO);
	if (!ret) {
		printf("psi: no memory pressure event in %s s\n", secs);
		return 1;
	}
	printf("psi: memory pressure event after %ld ms\n", ms_since(&t0));
	return 0;
}

/*
 * Touch up to @kib KiB of new memory, page after page, for at most @msecs
 * ms (and the last throttling sleep, 2 s at most): over its cgroup's
 * memory.high the kernel makes it stall, which is memory pressure.
 */
static int mem_hog(const char *kib, const char *msecs)
{
	size_t size = strtoul(kib, NULL, 10) * 1024, done;
	long limit = strtol(msecs, NULL, 10), page = sysconf(_SC_PAGESIZE);
	struct timespec t0;
	char *p;

	if (!size || limit <= 0)
		return fail("size or time", -EINVAL);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return fail("mmap", -errno);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (done = 0; done < size && ms_since(&t0) < limit; done += page)
		p[done] = 1;
	printf("hog: touched %zu of %zu KiB in %ld ms\n", done / 1024, size / 1024,
	       ms_since(&t0));
	munmap(p, size);
	return 0;
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: cask-demo binder-manager\n"
		"       cask-demo binder-ping CELL|none\n"
		"       cask-demo binder-service NAME\n"
		"       cask-demo binder-client NAME\n"
		"       cask-demo ashmem NAME KIB\n"
		"       cask-demo lmk-victim KIB\n"
		"       cask-demo psi-monitor SECONDS\n"
		"       cask-demo memhog KIB MS\n"
		"\n"
		"binder-manager  become /dev/binder's context manager in this cell,\n"
		"                answer pings with the cell's name and keep the\n"
		"                services added to it, until killed\n"
		"binder-ping     ping handle 0 of /dev/binder; CELL's manager must\n"
		"                answer (none: this cell must have no manager)\n"
		"binder-service  add a service NAME to the context manager and answer\n"
		"                its calls, until killed\n"
		"binder-client   get NAME from the context manager and call it; it\n"
		"                must be a service of this cell\n"
		"ashmem          make, map and half unpin a region; show it in\n"
		"                /proc/self/maps and in the cell's ashmem counters\n"
		"lmk-victim      take KIB KiB, raise its oom_score_adj to 900 and wait\n"
		"                (30 s at most) for the low memory killer\n"
		"psi-monitor     write lmkd's trigger \"some 70000 1000000\" to\n"
		"                /proc/pressure/memory and poll it for SECONDS\n"
		"                (exit 0: an event, 1: none)\n"
		"memhog          touch up to KIB KiB of new memory for at most MS ms\n");
}

int main(int argc, char **argv)
{
	/* Lines of the background managers and of the shell stay in order. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "binder-manager"))
		return binder_manager();
	if (argc == 3 && !strcmp(argv[1], "binder-ping"))
		return binder_ping(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "binder-service"))
		return binder_service(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "binder-client"))
		return binder_client(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "psi-monitor"))
		return psi_monitor(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "memhog"))
		return mem_hog(argv[2], argv[3]);
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
