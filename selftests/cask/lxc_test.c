// SPDX-License-Identifier: GPL-2.0
/*
 * cask in real LXC containers: Debian's lxc-start starts two containers
 * with tools/lxc/cask-hook as their start-host and stop hook, each on a
 * busybox root file system made here, with cgroup v2 and, for the second
 * one, a user namespace of its own (lxc.idmap). Inside each, the drivers
 * work through the device nodes the configuration bind-mounts
 * (Documentation/runtimes.rst) and see only their own cell: a log line
 * stays in its container's logs, each container's /dev/binder has its own
 * context manager, an ashmem region is charged to the container's cgroup.
 * The cells exist while the containers run and are gone after lxc-stop.
 *
 * Checks inside a container run this same program, statically linked and
 * bind-mounted read-only at /cask, through lxc-attach: "lxc_test
 * --in-cell OP ..." (in_cell() below); its output and exit status are
 * what the test sees.
 *
 * Skips where lxc is not installed (the guest image has it when the
 * machine that built it had Debian's lxc: tools/cask-test) or the hook is
 * not at /usr/share/cask/lxc/cask-hook (CASK_LXC_HOOK names another).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <linux/ashmem.h>

#include "../kselftest_harness.h"
#include "cask_util.h"
#include "cask_log.h"
#include "cask_binder.h"

#define LXC_BIN		"/usr/bin/"
#define HOOK_PATH	"/usr/share/cask/lxc/cask-hook"
#define UNSHARE_PATH	"/usr/share/cask/runtime/cask-unshare.sh"
#define OCI_HOOK_PATH	"/usr/share/cask/runtime/cask-oci-hook"
/* A container id as podman makes them: too long for a cell name. */
#define OCI_LONG_ID	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define NAME_A		"lxct-a"
#define NAME_B		"lxct-b"
#define NAME_X		"lxct-x"
#define UID_BASE	500000
#define CODE_PING	1
#define CODE_QUIT	2
#define ASH_SIZE	(8 << 20)
#define OUT_MAX		8192
/* The host's cgroup for psi_own_pressure_only()'s hog, and the hogs' size. */
#define HOG_CG		"lxc_test-hog"
#define HOG_KIB		32768
#define HOG_MS		1500
#define STR_(x)		#x
#define STR(x)		STR_(x)

/* ---- inside a container ------------------------------------------------ */

/* Scan the logger file @fd (non-blocking) for an entry whose message is @msg. */
static int log_scan(int fd, const char *msg)
{
	unsigned long long buf[1024];
	struct rec r;
	int n;

	for (;;) {
		n = log_read(fd, buf, sizeof(buf));
		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return n;
		if (parse_rec(buf, n, 1, &r))
			return -EBADMSG;
		if (!strcmp(r.msg, msg))
			return 1;
	}
}

static int serve_token(struct brd *r, const struct binder_transaction_data *tr,
		       struct txn *reply, void *arg)
{
	const char *token = arg;

	txn_put(reply, token, strlen(token) + 1);
	return tr->code == CODE_QUIT ? BSERVE_STOP : BSERVE_NEXT;
}

/* Become @dev's context manager, say "ready", answer calls with @token. */
static int binder_mgr(const char *dev, char *token)
{
	struct bdev b;
	struct brd r;
	int ret;

	ret = bdev_open(&b, dev, 0, BMAP_SIZE);
	if (ret) {
		printf("open %s: %s\n", dev, strerror(-ret));
		return 2;
	}
	if (ioctl(b.fd, BINDER_SET_CONTEXT_MGR, 0)) {
		printf("SET_CONTEXT_MGR: %s\n", strerror(errno));
		return 2;
	}
	ret = bc_plain(b.fd, BC_ENTER_LOOPER);
	if (ret) {
		printf("BC_ENTER_LOOPER: %s\n", strerror(-ret));
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	brd_init(&r, b.fd);
	ret = bserve(&r, serve_token, token);
	if (ret) {
		printf("serve: %s\n", strerror(-ret));
		return 2;
	}
	bdev_close(&b);
	return 0;
}

/* Call handle 0 of @dev with @code; print its reply (a string) or "dead". */
static int binder_call(const char *dev, uint32_t code)
{
	struct binder_transaction_data reply;
	const char *data;
	struct txn t;
	struct bdev b;
	struct brd r;
	uint32_t br = 0;
	int ret;

	ret = bdev_open(&b, dev, 0, BMAP_SIZE);
	if (ret) {
		printf("open %s: %s\n", dev, strerror(-ret));
		return 2;
	}
	brd_init(&r, b.fd);
	txn_init(&t);
	txn_put_u32(&t, 0);
	ret = txn_call(&r, 0, code, &t, &br, &reply);
	if (ret) {
		printf("call: %s\n", strerror(-ret));
		return 2;
	}
	if (br == BR_DEAD_REPLY) {
		printf("dead\n");
		return 3;
	}
	if (br != BR_REPLY) {
		printf("call: %s\n", br_name(br));
		return 2;
	}
	data = (const char *)(uintptr_t)reply.data.ptr.buffer;
	printf("%.*s\n", (int)strnlen(data, reply.data_size), data);
	txn_free(b.fd, &reply);
	bdev_close(&b);
	return 0;
}

/* An ashmem region of @size bytes, every page written; held until stdin ends. */
static int ashmem_hold(size_t size)
{
	char c, *p;
	int fd;

	fd = open("/dev/ashmem", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, ASHMEM_SET_NAME, "lxc_test") ||
	    ioctl(fd, ASHMEM_SET_SIZE, size)) {
		printf("ashmem: %s\n", strerror(errno));
		return 2;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		printf("mmap: %s\n", strerror(errno));
		return 2;
	}
	memset(p, 0x5a, size);
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	munmap(p, size);
	close(fd);
	return 0;
}

/* What lmkd writes in its in-kernel mode (cmd_target(): "%d" joined by ","). */
#define LMKD_MINFREE	"18432,23040,27648,32256,55296,80640"
#define LMKD_ADJ	"0,100,200,250,900,950"
#define LMK_PARAMS	"/sys/module/lowmemorykiller/parameters/"
/* lmkd's default PSI trigger, written with its NUL as lmkd does. */
#define PSI_TRIGGER	"some 70000 1000000"

static void probe(int *bad, const char *what, bool ok, const char *why)
{
	if (ok) {
		printf("ok %s\n", what);
	} else {
		printf("FAIL %s: %s\n", what, why);
		(*bad)++;
	}
}

/*
 * Every probe of an Android container wired by android.conf, as its
 * daemons would use the files: "ok WHAT" or "FAIL WHAT: why" for each.
 * @mark goes to /dev/log/main and, unless "-", to /dev/kmsg; @lock is
 * the wake lock taken (and kept: the host looks for it).
 */
static int android_probe(const char *mark, const char *lock)
{
	struct binder_version ver = { 0 };
	char buf[256], msg[128];
	int fd, bad = 0, ret;
	struct stat st;
	void *p;

	fd = open("/dev/binder", O_RDWR | O_CLOEXEC);
	ret = fd >= 0 && !ioctl(fd, BINDER_VERSION, &ver);
	probe(&bad, "binder", ret && ver.protocol_version == BINDER_CURRENT_PROTOCOL_VERSION,
	      strerror(errno));
	if (fd >= 0)
		close(fd);

	fd = open("/dev/ashmem", O_RDWR | O_CLOEXEC);
	ret = fd >= 0 && !ioctl(fd, ASHMEM_SET_SIZE, 4096);
	p = ret ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (p != MAP_FAILED) {
		memset(p, 1, 4096);
		munmap(p, 4096);
	}
	probe(&bad, "ashmem", p != MAP_FAILED, strerror(errno));
	if (fd >= 0)
		close(fd);

	fd = log_open("main", O_WRONLY);
	ret = fd < 0 ? -errno : log_write(fd, 4, "lxc_test", mark);
	probe(&bad, "log", ret >= 0, strerror(-ret));
	if (fd >= 0)
		close(fd);

	/* lmkd: access(W_OK) picks its in-kernel mode; no newline in its writes. */
	ret = access(LMK_PARAMS "minfree", W_OK) ? -errno : 0;
	probe(&bad, "lmk W_OK", !ret, strerror(-ret));
	ret = write_file(LMK_PARAMS "minfree", LMKD_MINFREE);
	if (!ret)
		ret = write_file(LMK_PARAMS "adj", LMKD_ADJ);
	probe(&bad, "lmk write", !ret, strerror(-ret));
	ret = read_file(LMK_PARAMS "minfree", buf, sizeof(buf));
	probe(&bad, "lmk minfree", !ret && !strcmp(buf, LMKD_MINFREE), ret ? strerror(-ret) : buf);
	ret = read_file(LMK_PARAMS "adj", buf, sizeof(buf));
	probe(&bad, "lmk adj", !ret && !strcmp(buf, LMKD_ADJ), ret ? strerror(-ret) : buf);

	/* lmkd's PSI monitor: a trigger on /proc/pressure/memory. */
	fd = open("/proc/pressure/memory", O_WRONLY | O_CLOEXEC);
	ret = fd < 0 ? -errno :
	      write(fd, PSI_TRIGGER, sizeof(PSI_TRIGGER)) == sizeof(PSI_TRIGGER) ? 0 : -errno;
	probe(&bad, "psi trigger", !ret, strerror(-ret));
	if (fd >= 0)
		close(fd);
	/* Its inode, which the host compares with its cgroup's memory.pressure. */
	if (!stat("/proc/pressure/memory", &st))
		printf("psi-ino %llu\n", (unsigned long long)st.st_ino);

	ret = write_file("/sys/power/wake_lock", lock);
	if (!ret)
		ret = read_file("/sys/power/wake_lock", buf, sizeof(buf));
	probe(&bad, "wake_lock", !ret && strstr(buf, lock), ret ? strerror(-ret) : buf);

	if (strcmp(mark, "-")) {
		snprintf(msg, sizeof(msg), "<6>%s\n", mark);
		ret = write_file("/dev/kmsg", msg);
		probe(&bad, "kmsg", !ret, strerror(-ret));
	}
	return bad ? 2 : 0;
}

/* Milliseconds since @t0 (CLOCK_MONOTONIC). */
static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Touch up to @kib KiB of new memory, a page at a time, for at most @ms
 * ms: over its cgroup's memory.high the kernel reclaims and then throttles
 * it (up to 2 s per return to user space), stalls that PSI counts as
 * memory pressure of that cgroup and its ancestors only.
 */
static int mem_hog(unsigned long kib, long ms)
{
	size_t size = kib * 1024, page = sysconf(_SC_PAGESIZE), done;
	struct timespec t0;
	char *p;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		printf("memhog: mmap: %s\n", strerror(errno));
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (done = 0; done < size && ms_since(&t0) < ms; done += page)
		p[done] = 1;
	printf("hog: touched %zu of %zu KiB in %ld ms\n", done / 1024, kib, ms_since(&t0));
	munmap(p, size);
	return 0;
}

/*
 * lmkd's PSI monitor: its trigger on /proc/pressure/memory, opened and
 * written as lmkd does, then "ready" and poll() for @secs s at most. Prints
 * "event after N ms" and exits 0 at the first event; "no event" and 1 when
 * the time is up or stdin ends first (the host's "is it still silent").
 */
static int psi_wait(long secs)
{
	struct pollfd p[2] = { { .events = POLLPRI }, { .fd = 0, .events = POLLIN } };
	struct timespec t0;
	long left;
	int ret;

	p[0].fd = open("/proc/pressure/memory", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (p[0].fd < 0 ||
	    write(p[0].fd, PSI_TRIGGER, sizeof(PSI_TRIGGER)) != sizeof(PSI_TRIGGER)) {
		printf("psi trigger: %s\n", strerror(errno));
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((left = secs * 1000 - ms_since(&t0)) > 0) {
		ret = poll(p, 2, left);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0 || (p[0].revents & (POLLERR | POLLNVAL))) {
			printf("psi poll: %s\n", ret < 0 ? strerror(errno) : "POLLERR");
			return 2;
		}
		if (p[0].revents & POLLPRI) {
			printf("event after %ld ms\n", ms_since(&t0));
			return 0;
		}
		if (p[1].revents)
			break;
	}
	printf("no event in %ld ms\n", ms_since(&t0));
	return 1;
}

/*
 * What the test asks of a container:
 *   android MARK LOCK     every probe of an android.conf container
 *   self                  print /sys/kernel/cask/self (the cell's name)
 *   rdev PATH             print "char MAJOR:MINOR" of a character device
 *   read PATH             print a file's first line (exit 13 for EACCES)
 *   log-write MSG         write MSG to /dev/log/main
 *   log-find MSG          exit 0 if /dev/log/main has MSG, 1 if not
 *   binder-mgr DEV TOKEN  context manager of DEV answering TOKEN
 *   binder-call DEV CODE  call handle 0 of DEV, print the reply
 *   ashmem SIZE           hold a written region of SIZE bytes
 *   psi-wait SECS         lmkd's PSI trigger: wait for an event (psi_wait())
 *   memhog KIB MS         touch KIB KiB of new memory for MS ms at most
 * Exit 0 on success, 2 on an error (printed).
 */
static int in_cell(int argc, char **argv)
{
	const char *op = argv[0];
	char buf[256];
	int fd, ret;

	if (!strcmp(op, "self")) {
		ret = read_file(CASK "/self", buf, sizeof(buf));
		if (ret) {
			printf("self: %s\n", strerror(-ret));
			return 2;
		}
		printf("%s\n", buf);
		return 0;
	}
	if (!strcmp(op, "rdev") && argc == 2) {
		struct stat st;

		if (stat(argv[1], &st)) {
			printf("stat %s: %s\n", argv[1], strerror(errno));
			return 2;
		}
		printf("%s %u:%u\n", S_ISCHR(st.st_mode) ? "char" : "other",
		       major(st.st_rdev), minor(st.st_rdev));
		return 0;
	}
	if (!strcmp(op, "read") && argc == 2) {
		ret = read_file(argv[1], buf, sizeof(buf));
		if (ret) {
			printf("read %s: %s\n", argv[1], strerror(-ret));
			return -ret == EACCES ? 13 : 2;
		}
		printf("%s\n", buf);
		return 0;
	}
	if (!strcmp(op, "log-write") && argc == 2) {
		fd = log_open("main", O_WRONLY);
		ret = fd < 0 ? -errno : log_write(fd, 4, "lxc_test", argv[1]);
		if (ret < 0) {
			printf("log-write: %s\n", strerror(-ret));
			return 2;
		}
		return 0;
	}
	if (!strcmp(op, "log-find") && argc == 2) {
		fd = log_open("main", O_RDONLY | O_NONBLOCK);
		ret = fd < 0 ? -errno : log_scan(fd, argv[1]);
		if (ret < 0) {
			printf("log-find: %s\n", strerror(-ret));
			return 2;
		}
		return ret ? 0 : 1;
	}
	if (!strcmp(op, "binder-mgr") && argc == 3)
		return binder_mgr(argv[1], argv[2]);
	if (!strcmp(op, "binder-call") && argc == 3)
		return binder_call(argv[1], strtoul(argv[2], NULL, 0));
	if (!strcmp(op, "ashmem") && argc == 2)
		return ashmem_hold(strtoul(argv[1], NULL, 0));
	if (!strcmp(op, "android") && argc == 3)
		return android_probe(argv[1], argv[2]);
	if (!strcmp(op, "psi-wait") && argc == 2)
		return psi_wait(strtol(argv[1], NULL, 10));
	if (!strcmp(op, "memhog") && argc == 3)
		return mem_hog(strtoul(argv[1], NULL, 10), strtol(argv[2], NULL, 10));
	printf("unknown request %s\n", op);
	return 2;
}

/* ---- the host's side --------------------------------------------------- */

struct proc {
	pid_t pid;
	int in, out;
};

/* Start @argv with pipes to its stdin and from its stdout and stderr. */
static int proc_start(struct proc *p, const char *const argv[])
{
	int in[2], out[2];

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -errno;
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in = in[1];
	p->out = out[0];
	return 0;
}

/* Read one line (without '\n') within @ms; 0, or -ETIMEDOUT / -EIO at EOF. */
static int proc_line(struct proc *p, char *buf, size_t len, int ms)
{
	struct pollfd pfd = { .fd = p->out, .events = POLLIN };
	size_t n = 0;
	char c;

	while (n + 1 < len) {
		if (poll(&pfd, 1, ms) != 1)
			return -ETIMEDOUT;
		if (read(p->out, &c, 1) != 1)
			return -EIO;
		if (c == '\n')
			break;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return 0;
}

/* Close its stdin, collect what it prints until it exits: its status. */
static int proc_end(struct proc *p, char *out, size_t len)
{
	size_t n = 0;
	ssize_t got;
	char sink[256];

	close(p->in);
	for (;;) {
		if (out && n + 1 < len)
			got = read(p->out, out + n, len - 1 - n);
		else
			got = read(p->out, sink, sizeof(sink));
		if (got <= 0)
			break;
		if (out && n + 1 < len)
			n += got;
	}
	if (out)
		out[n] = '\0';
	close(p->out);
	return child_status(p->pid);
}

/* Run the NULL-terminated @arg0, ...: its exit status, its output in @out. */
static int run(char *out, size_t len, const char *arg0, ...)
{
	const char *argv[24];
	struct proc p;
	va_list ap;
	int n = 0;

	argv[n++] = arg0;
	va_start(ap, arg0);
	while (n < 23 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	if (proc_start(&p, argv))
		return -1;
	return proc_end(&p, out, len);
}

/* The last line of @out, without its newline (which is cut off). */
static const char *last_line(char *out)
{
	char *end = out + strlen(out), *p;

	while (end > out && end[-1] == '\n')
		*--end = '\0';
	p = strrchr(out, '\n');
	return p ? p + 1 : out;
}

static char hook[PATH_MAX];
static char android_conf[PATH_MAX];	/* beside the hook */
static char helper[PATH_MAX];	/* this program inside the containers */
static char selfdir[PATH_MAX];	/* its directory on the host */

static const char *lxc_missing(void)
{
	const char *env = getenv("CASK_LXC_HOOK");
	char exe[PATH_MAX];
	ssize_t n;

	if (cask_missing())
		return cask_missing();
	if (access(LXC_BIN "lxc-start", X_OK) || access(LXC_BIN "lxc-attach", X_OK))
		return "lxc is not installed (no " LXC_BIN "lxc-start, lxc-attach)";
	snprintf(hook, sizeof(hook), "%s", env ? env : HOOK_PATH);
	if (access(hook, X_OK))
		return "no cask-hook (install tools/lxc/cask-hook as " HOOK_PATH
		       " or set CASK_LXC_HOOK)";
	if (access("/bin/busybox", X_OK))
		return "no /bin/busybox for the containers' root file system";
	if (access("/dev/log/main", F_OK))
		return "cask_logger is not loaded";
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return "no /proc/self/exe";
	exe[n] = '\0';
	snprintf(helper, sizeof(helper), "/cask/%s", basename(exe));
	snprintf(selfdir, sizeof(selfdir), "%s", dirname(exe));
	snprintf(exe, sizeof(exe), "%s", hook);
	snprintf(android_conf, sizeof(android_conf), "%s/android.conf", dirname(exe));
	return NULL;
}

struct ct {
	const char *name;
	bool userns;
	bool android;	/* only lxc.include = android.conf for cask */
	bool running;
	pid_t init;
};

/* The container's LXC configuration, as Documentation/runtimes.rst has it. */
static int write_config(const char *path, const struct ct *c)
{
	static const char *const devs[] = { "binder", "hwbinder", "vndbinder", "ashmem", "log" };
	char file[PATH_MAX];
	size_t i;
	FILE *f;

	snprintf(file, sizeof(file), "%s/%s/config", path, c->name);
	f = fopen(file, "we");
	if (!f)
		return -errno;
	fprintf(f, "lxc.uts.name = %s\n", c->name);
	fprintf(f, "lxc.rootfs.path = dir:%s/%s/rootfs\n", path, c->name);
	fprintf(f, "lxc.net.0.type = empty\n");
	/*
	 * The guest loads no AppArmor policy; on a kernel with AppArmor
	 * (Debian's) LXC refuses to start a confined container without one.
	 */
	fprintf(f, "lxc.apparmor.profile = unconfined\n");
	fprintf(f, "lxc.autodev = 1\n");
	fprintf(f, "lxc.pty.max = 4\n");
	fprintf(f, "lxc.tty.max = 0\n");
	fprintf(f, "lxc.console.path = none\n");
	fprintf(f, "lxc.mount.auto = proc:mixed sys:ro\n");
	fprintf(f, "lxc.mount.entry = /bin bin none ro,bind 0 0\n");
	fprintf(f, "lxc.mount.entry = %s cask none ro,bind 0 0\n", selfdir);
	fprintf(f, "lxc.init.cmd = /bin/sleep 3600\n");
	if (c->userns) {
		fprintf(f, "lxc.idmap = u 0 %u 65536\n", UID_BASE);
		fprintf(f, "lxc.idmap = g 0 %u 65536\n", UID_BASE);
	}
	if (c->android) {
		/* Everything of cask's: the one line the guides give. */
		fprintf(f, "lxc.include = %s\n", android_conf);
		return fclose(f) ? -errno : 0;
	}
	/* cask's devices, from the host's devtmpfs. */
	for (i = 0; i < ARRAY_SIZE(devs); i++)
		fprintf(f, "lxc.mount.entry = /dev/%s dev/%s none bind,create=%s,optional 0 0\n",
			devs[i], devs[i], strcmp(devs[i], "log") ? "file" : "dir");
	/* libcutils opens /dev/ashmem<boot_id> first (Documentation/ashmem.rst). */
	fprintf(f, "lxc.hook.mount = /bin/sh -c 'ln -sf ashmem \"$LXC_ROOTFS_MOUNT/dev/ashmem"
		"$(cat /proc/sys/kernel/random/boot_id)\"'\n");
	/* Both hook conventions: environment (1) for A, arguments (0) for B. */
	fprintf(f, "lxc.hook.version = %d\n", c->userns ? 0 : 1);
	fprintf(f, "lxc.hook.start-host = %s\n", hook);
	fprintf(f, "lxc.hook.stop = %s\n", hook);
	return fclose(f) ? -errno : 0;
}

/* The root file system: mount points only; /bin and /cask are bind mounts. */
static int make_rootfs(const char *path, const char *name)
{
	static const char *const dirs[] = { "", "/rootfs", "/rootfs/bin", "/rootfs/dev",
		"/rootfs/proc", "/rootfs/sys", "/rootfs/tmp", "/rootfs/cask" };
	char dir[PATH_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(dir, sizeof(dir), "%s/%s%s", path, name, dirs[i]);
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

/* The end of container @name's LXC log, to stderr. */
static void show_log(const char *path, const char *name)
{
	char file[PATH_MAX], buf[4096];
	off_t size;
	ssize_t n;
	int fd;

	snprintf(file, sizeof(file), "%s/%s.log", path, name);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		fprintf(stderr, "# --- end of %s\n%s# ---\n", file, buf);
	}
}

/* lxc-start @c; 0, or the failure logged and -1. */
static int ct_start(struct __test_metadata *_metadata, const char *path, struct ct *c)
{
	char config[PATH_MAX], log[PATH_MAX], out[OUT_MAX];
	int st;

	snprintf(config, sizeof(config), "%s/%s/config", path, c->name);
	snprintf(log, sizeof(log), "%s/%s.log", path, c->name);
	if (make_rootfs(path, c->name) || write_config(path, c)) {
		TH_LOG("%s: cannot write its rootfs or config", c->name);
		return -1;
	}
	/* A cell of an earlier, interrupted run. */
	cask_unregister(c->name);
	st = run(out, sizeof(out), LXC_BIN "lxc-start", "-n", c->name, "-P", path,
		 "-f", config, "-o", log, "-l", "INFO", NULL);
	if (st) {
		TH_LOG("lxc-start %s: status %d: %s", c->name, st, out);
		show_log(path, c->name);
		return -1;
	}
	/* lxc-start returns once the container runs (or has failed). */
	c->running = true;
	st = run(out, sizeof(out), LXC_BIN "lxc-info", "-n", c->name, "-P", path,
		 "-p", "-H", NULL);
	c->init = atoi(out);
	if (st || c->init <= 0) {
		TH_LOG("lxc-info %s: status %d: %s", c->name, st, out);
		return -1;
	}
	return 0;
}

static int ct_stop(const char *path, struct ct *c, char *out, size_t len)
{
	int st;

	if (!c->running)
		return 0;
	st = run(out, len, LXC_BIN "lxc-stop", "-n", c->name, "-P", path, "-k", NULL);
	c->running = false;
	return st;
}

/*
 * Run "lxc_test --in-cell OP A1 A2" in @c: its exit status; in @out what it
 * printed, after whatever LXC printed (last_line() is the answer).
 */
static int in_ct(const char *path, const struct ct *c, char *out, size_t len,
		 const char *op, const char *a1, const char *a2)
{
	return run(out, len, LXC_BIN "lxc-attach", "-n", c->name, "-P", path, "--clear-env",
		   "--", helper, "--in-cell", op, a1, a2, NULL);
}

/* Start "lxc_test --in-cell OP A1 A2" in @c and wait for its "ready". */
static int in_ct_start(struct __test_metadata *_metadata, const char *path,
		       const struct ct *c, struct proc *p, const char *op,
		       const char *a1, const char *a2)
{
	const char *argv[13];
	char line[512];
	int ret, i;

	/* lxc-attach -n NAME -P PATH --clear-env -- lxc_test --in-cell OP A1 A2 */
	argv[0] = LXC_BIN "lxc-attach";
	argv[1] = "-n";
	argv[2] = c->name;
	argv[3] = "-P";
	argv[4] = path;
	argv[5] = "--clear-env";
	argv[6] = "--";
	argv[7] = helper;
	argv[8] = "--in-cell";
	argv[9] = op;
	argv[10] = a1;
	argv[11] = a2;
	argv[12] = NULL;

	ret = proc_start(p, argv);
	if (ret)
		return ret;
	/* LXC's warnings may come first. */
	for (i = 0; i < 20; i++) {
		ret = proc_line(p, line, sizeof(line), 60000);
		if (ret || !strcmp(line, "ready"))
			break;
	}
	if (ret || strcmp(line, "ready")) {
		TH_LOG("%s in %s: %s (%s)", op, c->name, ret ? strerror(-ret) : "not ready",
		       line);
		kill(p->pid, SIGKILL);
		proc_end(p, NULL, 0);
		return -1;
	}
	return 0;
}

static void lxc_cleanup(const char *path, struct ct *ct, char *out, size_t len)
{
	int i;

	for (i = 0; i < 2; i++)
		ct_stop(path, &ct[i], out, len);
	if (path[0])
		run(out, len, "/bin/rm", "-rf", path, NULL);
}

FIXTURE(lxc) {
	char path[64];
	struct ct ct[2];
	char out[OUT_MAX];
};

FIXTURE_SETUP(lxc)
{
	const char *why = lxc_missing();

	self->ct[0] = (struct ct){ .name = NAME_A };
	self->ct[1] = (struct ct){ .name = NAME_B, .userns = true };
	if (why)
		SKIP(return, "%s", why);
	snprintf(self->path, sizeof(self->path), "/tmp/lxc_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->path));
	/* The mapped root of B walks through it to its rootfs. */
	ASSERT_EQ(0, chmod(self->path, 0755));
	/* The harness runs no teardown after a failed setup: clean up here. */
	if (ct_start(_metadata, self->path, &self->ct[0]) ||
	    ct_start(_metadata, self->path, &self->ct[1])) {
		lxc_cleanup(self->path, self->ct, self->out, sizeof(self->out));
		ASSERT_TRUE(false) TH_LOG("the containers did not start");
	}
}

FIXTURE_TEARDOWN(lxc)
{
	lxc_cleanup(self->path, self->ct, self->out, sizeof(self->out));
}

/* A number from /sys/kernel/cask/cells/@cell/@file, or -1. */
static long long cell_num(const char *cell, const char *file)
{
	char buf[64];

	if (cell_value(cell, file, buf, sizeof(buf)))
		return -1;
	return atoll(buf);
}

TEST_F_TIMEOUT(lxc, cells_registered, 300)
{
	char want[256], buf[256], path[64];
	int i;

	for (i = 0; i < 2; i++) {
		const struct ct *c = &self->ct[i];

		ASSERT_TRUE(cell_exists(c->name)) TH_LOG("no cell %s", c->name);
		/* Registered by the hook, from the container's init. */
		EXPECT_EQ(0, cell_num(c->name, "auto"));
		EXPECT_EQ(ns_inode(c->init, "ipc"), cell_num(c->name, "ipc_ns"));
		EXPECT_EQ(ns_inode(c->init, "pid"), cell_num(c->name, "pid_ns"));
		EXPECT_EQ(ns_inode(c->init, "user"), cell_num(c->name, "user_ns"));
		EXPECT_EQ(!c->userns, ns_inode(getpid(), "user") == ns_inode(c->init, "user"));
		/* Its cgroup is the one LXC made for the container. */
		snprintf(path, sizeof(path), "/proc/%d/cgroup", c->init);
		ASSERT_EQ(0, read_file(path, want, sizeof(want)));
		ASSERT_EQ(0, strncmp(want, "0::", 3)) TH_LOG("%s", want);
		ASSERT_EQ(0, cell_value(c->name, "cgroup", buf, sizeof(buf)));
		EXPECT_STREQ(want + 3, buf);
		EXPECT_STRNE("/", buf);
		EXPECT_NE(-1, memory_current(buf + 1)) TH_LOG("no memory.current in %s", buf);
		/* Inside, the container's tasks are in that cell. */
		EXPECT_EQ(0, in_ct(self->path, c, self->out, sizeof(self->out), "self",
				   NULL, NULL)) TH_LOG("%s", self->out);
		EXPECT_STREQ(c->name, last_line(self->out));
	}
}

TEST_F_TIMEOUT(lxc, logs_isolated, 300)
{
	char msg[2][64];
	int i, fd;

	for (i = 0; i < 2; i++) {
		snprintf(msg[i], sizeof(msg[i]), "lxc_test in %s, %d", self->ct[i].name, getpid());
		ASSERT_EQ(0, in_ct(self->path, &self->ct[i], self->out, sizeof(self->out),
				   "log-write", msg[i], NULL)) TH_LOG("%s", self->out);
	}
	for (i = 0; i < 2; i++) {
		const struct ct *own = &self->ct[i], *other = &self->ct[1 - i];
		struct rec *recs;
		int n;

		/* Read in its own container, not in the other one. */
		EXPECT_EQ(0, in_ct(self->path, own, self->out, sizeof(self->out), "log-find",
				   msg[i], NULL)) TH_LOG("%s: %s", own->name, self->out);
		EXPECT_EQ(1, in_ct(self->path, other, self->out, sizeof(self->out), "log-find",
				   msg[i], NULL)) TH_LOG("%s: %s", other->name, self->out);
		/* Not in the host's logs either... */
		fd = log_open("main", O_RDONLY | O_NONBLOCK);
		ASSERT_LE(0, fd);
		EXPECT_EQ(0, log_scan(fd, msg[i]));
		close(fd);
		/* ...but where the host looks at the container's cell. */
		recs = calloc(MAX_RECS, sizeof(*recs));
		ASSERT_NE(NULL, recs);
		n = host_read_cell(own->name, "main", 1, recs);
		ASSERT_LE(0, n) TH_LOG("host read of %s: %s", own->name, strerror(-n));
		EXPECT_LE(0, find_msg(recs, n, msg[i]));
		n = host_read_cell(other->name, "main", 1, recs);
		ASSERT_LE(0, n);
		EXPECT_EQ(-1, find_msg(recs, n, msg[i]));
		free(recs);
	}
}

TEST_F_TIMEOUT(lxc, binder_context_managers, 300)
{
	const struct ct *a = &self->ct[0], *b = &self->ct[1];
	char *out = self->out;
	size_t len = sizeof(self->out);
	struct proc ma, mb;

	if (access("/dev/binder", F_OK) || access("/dev/hwbinder", F_OK))
		SKIP(return, "cask_binder is not loaded");
	/* No manager anywhere yet: a call to handle 0 dies. */
	EXPECT_EQ(3, in_ct(self->path, a, out, len, "binder-call", "/dev/binder", "1"))
		TH_LOG("%s", out);

	ASSERT_EQ(0, in_ct_start(_metadata, self->path, a, &ma, "binder-mgr", "/dev/binder",
				 "manager of A"));
	EXPECT_EQ(0, in_ct(self->path, a, out, len, "binder-call", "/dev/binder", "1"))
		TH_LOG("%s", out);
	EXPECT_STREQ("manager of A", last_line(out));
	/* A's manager is not B's, nor that of A's other devices. */
	EXPECT_EQ(3, in_ct(self->path, b, out, len, "binder-call", "/dev/binder", "1"))
		TH_LOG("%s", out);
	EXPECT_EQ(3, in_ct(self->path, a, out, len, "binder-call", "/dev/hwbinder", "1"))
		TH_LOG("%s", out);

	/* B (a user namespace of its own) gets its own manager. */
	ASSERT_EQ(0, in_ct_start(_metadata, self->path, b, &mb, "binder-mgr", "/dev/binder",
				 "manager of B"));
	EXPECT_EQ(0, in_ct(self->path, b, out, len, "binder-call", "/dev/binder", "1"))
		TH_LOG("%s", out);
	EXPECT_STREQ("manager of B", last_line(out));
	EXPECT_EQ(0, in_ct(self->path, a, out, len, "binder-call", "/dev/binder", "1"))
		TH_LOG("%s", out);
	EXPECT_STREQ("manager of A", last_line(out));
	EXPECT_EQ(1, cell_num(a->name, "binder/nodes"));
	EXPECT_EQ(1, cell_num(b->name, "binder/nodes"));

	EXPECT_EQ(0, in_ct(self->path, b, out, len, "binder-call", "/dev/binder", "2"))
		TH_LOG("%s", out);
	EXPECT_EQ(0, proc_end(&mb, out, len)) TH_LOG("B's manager: %s", out);
	EXPECT_EQ(0, in_ct(self->path, a, out, len, "binder-call", "/dev/binder", "2"))
		TH_LOG("%s", out);
	EXPECT_EQ(0, proc_end(&ma, out, len)) TH_LOG("A's manager: %s", out);
}

TEST_F_TIMEOUT(lxc, ashmem_charged, 300)
{
	char cg[2][256], size[32], want[64], boot[64], alias[96];
	long before[2], held[2];
	struct stat st;
	struct proc p;
	int i, j;

	if (access("/dev/ashmem", F_OK))
		SKIP(return, "cask_ashmem is not loaded");
	snprintf(size, sizeof(size), "%d", ASH_SIZE);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, cell_value(self->ct[i].name, "cgroup", cg[i], sizeof(cg[i])));
	/* /dev/ashmem and /dev/ashmem<boot_id> are the host's device. */
	ASSERT_EQ(0, stat("/dev/ashmem", &st));
	snprintf(want, sizeof(want), "char %u:%u", major(st.st_rdev), minor(st.st_rdev));
	ASSERT_EQ(0, read_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)));
	snprintf(alias, sizeof(alias), "/dev/ashmem%s", boot);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, in_ct(self->path, &self->ct[i], self->out, sizeof(self->out), "rdev",
				   "/dev/ashmem", NULL)) TH_LOG("%s", self->out);
		EXPECT_STREQ(want, last_line(self->out));
		EXPECT_EQ(0, in_ct(self->path, &self->ct[i], self->out, sizeof(self->out), "rdev",
				   alias, NULL)) TH_LOG("%s", self->out);
		EXPECT_STREQ(want, last_line(self->out));
	}

	for (i = 0; i < 2; i++) {
		const struct ct *c = &self->ct[i];

		for (j = 0; j < 2; j++)
			before[j] = memory_current(cg[j] + 1);
		EXPECT_EQ(0, cell_num(c->name, "ashmem/bytes"));
		ASSERT_EQ(0, in_ct_start(_metadata, self->path, c, &p, "ashmem", size, NULL));
		for (j = 0; j < 2; j++)
			held[j] = memory_current(cg[j] + 1);
		/* The region is the cell's and charged to its cgroup... */
		EXPECT_EQ(ASH_SIZE, cell_num(c->name, "ashmem/bytes"));
		EXPECT_EQ(0, cell_num(self->ct[1 - i].name, "ashmem/bytes"));
		EXPECT_LE(before[i] + ASH_SIZE - ASH_SIZE / 16, held[i])
			TH_LOG("%s: memory.current %ld before, %ld with the region", cg[i],
			       before[i], held[i]);
		/* ...not to the other container's. */
		EXPECT_GT(before[1 - i] + ASH_SIZE / 2, held[1 - i])
			TH_LOG("%s: memory.current %ld before, %ld", cg[1 - i],
			       before[1 - i], held[1 - i]);
		EXPECT_EQ(0, proc_end(&p, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
		EXPECT_EQ(0, cell_num(c->name, "ashmem/bytes"));
		EXPECT_GT(before[i] + ASH_SIZE / 2, memory_current(cg[i] + 1));
	}
}

/*
 * The low-memory killer's levels are per cell: what the host (the runtime)
 * writes for one container is what that container's lmkd reads from the
 * legacy parameters, and the other container sees neither.
 */
TEST_F_TIMEOUT(lxc, lmk_levels_per_cell, 300)
{
	static const char *const minfree[] = { "1536,2048,4096", "1024" };
	static const char *const adj[] = { "0,100,900", "0" };
	const char *param = "/sys/module/lowmemorykiller/parameters/minfree";
	char path[PATH_MAX], buf[256];
	int i;

	snprintf(path, sizeof(path), CASK "/cells/%s/lmk/minfree", self->ct[0].name);
	if (access(path, F_OK))
		SKIP(return, "lowmemorykiller is not loaded");
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), CASK "/cells/%s/lmk/minfree", self->ct[i].name);
		ASSERT_EQ(0, write_file(path, minfree[i]));
		snprintf(path, sizeof(path), CASK "/cells/%s/lmk/adj", self->ct[i].name);
		ASSERT_EQ(0, write_file(path, adj[i]));
	}
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, in_ct(self->path, &self->ct[i], self->out, sizeof(self->out), "read",
				   param, NULL)) TH_LOG("%s", self->out);
		EXPECT_STREQ(minfree[i], last_line(self->out));
		/* The other container's cell is out of reach. */
		snprintf(path, sizeof(path), CASK "/cells/%s/lmk/minfree", self->ct[1 - i].name);
		EXPECT_EQ(13, in_ct(self->path, &self->ct[i], self->out, sizeof(self->out), "read",
				    path, NULL)) TH_LOG("%s", self->out);
	}
	/* The host's own levels are not a container's. */
	if (!read_file(param, buf, sizeof(buf))) {
		EXPECT_STRNE(minfree[0], buf);
		EXPECT_STRNE(minfree[1], buf);
	}
}

TEST_F_TIMEOUT(lxc, cells_gone_after_stop, 300)
{
	long long id = cell_num(self->ct[0].name, "id");
	int i;

	ASSERT_LT(0, id);
	for (i = 0; i < 2; i++) {
		ASSERT_TRUE(cell_exists(self->ct[i].name));
		EXPECT_EQ(0, ct_stop(self->path, &self->ct[i], self->out, sizeof(self->out)))
			TH_LOG("lxc-stop %s: %s", self->ct[i].name, self->out);
		EXPECT_TRUE(cell_gone(self->ct[i].name)) TH_LOG("%s", self->ct[i].name);
	}
	/* The name is free again: the same container starts once more. */
	ASSERT_EQ(0, ct_start(_metadata, self->path, &self->ct[0]));
	EXPECT_TRUE(cell_exists(self->ct[0].name));
	EXPECT_EQ(ns_inode(self->ct[0].init, "ipc"), cell_num(self->ct[0].name, "ipc_ns"));
	/* A new cell (the kernel may give the new namespace the old number). */
	EXPECT_LT(id, cell_num(self->ct[0].name, "id"));
	EXPECT_EQ(0, ct_stop(self->path, &self->ct[0], self->out, sizeof(self->out)));
	EXPECT_TRUE(cell_gone(self->ct[0].name));
}

/* lxc-execute: the command runs in a cell of its own, gone when it ends. */
TEST_F_TIMEOUT(lxc, execute, 300)
{
	struct ct x = { .name = NAME_X };
	char config[PATH_MAX], log[PATH_MAX];
	int st;

	if (access(LXC_BIN "lxc-execute", X_OK))
		SKIP(return, "no lxc-execute");
	ASSERT_EQ(0, make_rootfs(self->path, x.name));
	ASSERT_EQ(0, write_config(self->path, &x));
	snprintf(config, sizeof(config), "%s/%s/config", self->path, x.name);
	snprintf(log, sizeof(log), "%s/%s.log", self->path, x.name);
	cask_unregister(x.name);
	st = run(self->out, sizeof(self->out), LXC_BIN "lxc-execute", "-n", x.name,
		 "-P", self->path, "-f", config, "-o", log, "-l", "INFO", "--",
		 helper, "--in-cell", "self", NULL);
	EXPECT_EQ(0, st) TH_LOG("lxc-execute: %s", self->out);
	if (st)
		show_log(self->path, x.name);
	EXPECT_STREQ(x.name, last_line(self->out));
	EXPECT_TRUE(cell_gone(x.name));
	/* The other containers' cells are untouched. */
	EXPECT_TRUE(cell_exists(NAME_A));
	EXPECT_TRUE(cell_exists(NAME_B));
}

/*
 * tools/runtime/cask-unshare.sh, the plain-unshare runtime of
 * Documentation/runtimes.rst: its command runs in the cell it registered,
 * which is gone when the command has ended.
 */
/*
 * Android-shaped containers configured with only lxc.include =
 * android.conf (besides the test's root file system, console and init),
 * one privileged and one with a user namespace: every probe works inside,
 * the host's own files show nothing of it, and lmkd's PSI trigger inside
 * fires on the container's memory pressure only.
 */
FIXTURE(android) {
	char path[64];
	struct ct ct[2];
	char out[OUT_MAX];
	char host_minfree[256];
	char host_lock[1024];
	/* What psi_own_pressure_only() changed, for the teardown to undo. */
	struct proc psi[2];		/* lmkd's trigger in each container */
	bool psi_on[2];
	char high[2][PATH_MAX];		/* a container's cgroup's memory.high... */
	char high_old[2][64];		/* ...and its value before */
	bool high_set[2];
	pid_t hog;			/* the host's hog */
	bool hog_cg;
};

FIXTURE_SETUP(android)
{
	const char *why = lxc_missing();

	self->ct[0] = (struct ct){ .name = "lxca-p", .android = true };
	self->ct[1] = (struct ct){ .name = "lxca-u", .userns = true, .android = true };
	if (why)
		SKIP(return, "%s", why);
	if (access(android_conf, R_OK))
		SKIP(return, "no android.conf beside the hook (install tools/lxc/android.conf)");
	if (access("/sys/module/lowmemorykiller", F_OK) || access("/sys/module/cask_power", F_OK))
		SKIP(return, "lowmemorykiller or cask_power is not loaded");
	if (read_file(LMK_PARAMS "minfree", self->host_minfree, sizeof(self->host_minfree)))
		self->host_minfree[0] = '\0';
	if (read_file("/sys/power/wake_lock", self->host_lock, sizeof(self->host_lock)))
		self->host_lock[0] = '\0';
	snprintf(self->path, sizeof(self->path), "/tmp/lxc_test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->path));
	ASSERT_EQ(0, chmod(self->path, 0755));
	if (ct_start(_metadata, self->path, &self->ct[0]) ||
	    ct_start(_metadata, self->path, &self->ct[1])) {
		lxc_cleanup(self->path, self->ct, self->out, sizeof(self->out));
		ASSERT_TRUE(false) TH_LOG("the android.conf containers did not start");
	}
}

FIXTURE_TEARDOWN(android)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (self->high_set[i])
			write_file(self->high[i], self->high_old[i]);
		/* Its stdin closed, the helper says "no event" and exits. */
		if (self->psi_on[i]) {
			kill(self->psi[i].pid, SIGKILL);
			proc_end(&self->psi[i], NULL, 0);
		}
	}
	if (self->hog > 0) {
		kill(self->hog, SIGKILL);
		child_status(self->hog);
	}
	if (self->hog_cg)
		rmdir(CGROOT "/" HOG_CG);
	lxc_cleanup(self->path, self->ct, self->out, sizeof(self->out));
}

TEST_F_TIMEOUT(android, probes_in_own_world, 300)
{
	bool kmsg = !access("/dev/cask/kmsg", F_OK);
	char mark[64], lock[64], buf[1024], path[PATH_MAX];
	struct stat st;
	int i;

	for (i = 0; i < 2; i++) {
		const struct ct *c = &self->ct[i];
		const char *ino;

		snprintf(mark, sizeof(mark), "lxc_test-android-%s-%d", c->name, getpid());
		snprintf(lock, sizeof(lock), "lxc_test_%s", c->name);
		EXPECT_EQ(0, in_ct(self->path, c, self->out, sizeof(self->out), "android",
				   kmsg ? mark : "-", lock)) TH_LOG("%s: %s", c->name, self->out);
		/* lmkd's strings configured this cell, and only it. */
		EXPECT_EQ(0, cell_value(c->name, "lmk/minfree", buf, sizeof(buf)));
		EXPECT_STREQ(LMKD_MINFREE, buf);
		EXPECT_EQ(0, cell_value(c->name, "lmk/adj", buf, sizeof(buf)));
		EXPECT_STREQ(LMKD_ADJ, buf);
		/* The lock is the cell's, not the host's. */
		EXPECT_EQ(0, cell_value(c->name, "power/wake_lock", buf, sizeof(buf)));
		EXPECT_NE(NULL, strstr(buf, lock)) TH_LOG("%s: cell's locks '%s'", c->name, buf);
		if (!read_file("/sys/power/wake_lock", buf, sizeof(buf)))
			EXPECT_EQ(NULL, strstr(buf, lock));
		/* Its /proc/pressure/memory is its cgroup's memory.pressure. */
		ino = strstr(self->out, "psi-ino ");
		EXPECT_NE(NULL, ino) TH_LOG("%s", self->out);
		EXPECT_EQ(0, cell_value(c->name, "cgroup", buf, sizeof(buf)));
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.pressure", buf);
		if (ino && !stat(path, &st))
			EXPECT_EQ((unsigned long long)st.st_ino, strtoull(ino + 8, NULL, 10))
				TH_LOG("%s: /proc/pressure/memory is not %s", c->name, path);
		/* The hook lifted the cell's kmsg rate limit, where it has one. */
		if (!cell_value(c->name, "logger/kmsg/devkmsg", buf, sizeof(buf)))
			EXPECT_STREQ("on", buf);
		/* The log line stays in the container's logs. */
		EXPECT_EQ(0, in_ct(self->path, c, self->out, sizeof(self->out), "log-find",
				   mark, NULL)) TH_LOG("%s", self->out);
		/* The container's kernel log lines are not the host's. */
		if (kmsg) {
			run(self->out, sizeof(self->out), "/bin/dmesg", NULL);
			EXPECT_EQ(NULL, strstr(self->out, mark));
		}
	}
	/* The host's levels and wake locks are as they were. */
	if (!read_file(LMK_PARAMS "minfree", buf, sizeof(buf)))
		EXPECT_STREQ(self->host_minfree, buf);
	if (!read_file("/sys/power/wake_lock", buf, sizeof(buf)))
		EXPECT_STREQ(self->host_lock, buf);
}

/* The other container's cell files stay out of reach through the binds. */
TEST_F_TIMEOUT(android, lmk_bound_is_own_cell, 300)
{
	char path[PATH_MAX];
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), CASK "/cells/%s/lmk/minfree", self->ct[1 - i].name);
		EXPECT_EQ(13, in_ct(self->path, &self->ct[i], self->out, sizeof(self->out),
				    "read", path, NULL)) TH_LOG("%s", self->out);
	}
}

/*
 * The line psi_wait() in a container prints next, within @ms: 0, or
 * -ETIMEDOUT (its trigger is silent), or -EIO (it has exited). A line cut
 * off by the timeout stays terminated for the log.
 */
static int psi_line(struct proc *p, char *buf, size_t len, int ms)
{
	memset(buf, 0, len);
	return proc_line(p, buf, len, ms);
}

/* The host's hog in cgroup HOG_CG; what it prints is not TAP. */
static pid_t host_hog(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || dup2(fd, 1) < 0 || join_cgroup(HOG_CG))
			_exit(2);
		_exit(mem_hog(HOG_KIB, HOG_MS));
	}
	return pid;
}

/*
 * lmkd's PSI monitor in each container (its default trigger on the
 * /proc/pressure/memory that android.conf binds: the container's cgroup's
 * memory.pressure) sees the container's memory pressure and not the
 * host's, nor the other container's: a hog in a host cgroup over its
 * memory.high stalls enough to fire the same trigger on that cgroup, and
 * neither container's fires; a hog in a container over the container's
 * memory.high fires that container's trigger, and the other's stays
 * silent. The hogs throttle for 2 s at most after their 1.5 s.
 */
TEST_F_TIMEOUT(android, psi_own_pressure_only, 300)
{
	char line[256], cg[256], buf[64];
	struct pollfd hp = { .events = POLLPRI };
	long cur;
	int i;

	if (access("/proc/pressure/memory", F_OK))
		SKIP(return, "no PSI in this kernel (CONFIG_PSI, or psi=0 on its command line)");
	if (mkdir(CGROOT "/" HOG_CG, 0755) && errno != EEXIST)
		ASSERT_EQ(0, -errno) TH_LOG("mkdir " CGROOT "/" HOG_CG);
	self->hog_cg = true;
	if (access(CGROOT "/" HOG_CG "/memory.high", F_OK))
		SKIP(return, "no memory controller in " CGROOT "/cgroup.subtree_control");
	ASSERT_EQ(0, write_file(CGROOT "/" HOG_CG "/memory.high", "4M"));

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, in_ct_start(_metadata, self->path, &self->ct[i], &self->psi[i],
					 "psi-wait", "60", NULL));
		self->psi_on[i] = true;
	}

	/* The host's pressure: it fires the trigger of the hog's cgroup... */
	hp.fd = open(CGROOT "/" HOG_CG "/memory.pressure", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, hp.fd);
	ASSERT_EQ(sizeof(PSI_TRIGGER), write(hp.fd, PSI_TRIGGER, sizeof(PSI_TRIGGER)));
	self->hog = host_hog();
	ASSERT_LT(0, self->hog);
	EXPECT_EQ(0, child_status(self->hog));
	self->hog = 0;
	EXPECT_EQ(1, poll(&hp, 1, 2000));
	EXPECT_TRUE(hp.revents & POLLPRI)
		TH_LOG("the host's hog made no PSI event on its own cgroup");
	close(hp.fd);
	/* ...and, a window (1 s) later, neither container's. */
	EXPECT_EQ(-ETIMEDOUT, psi_line(&self->psi[0], line, sizeof(line), 1000))
		TH_LOG("%s under the host's pressure: %s", self->ct[0].name, line);
	EXPECT_EQ(-ETIMEDOUT, psi_line(&self->psi[1], line, sizeof(line), 100))
		TH_LOG("%s under the host's pressure: %s", self->ct[1].name, line);

	/* Each container's own pressure, in turn. */
	for (i = 0; i < 2; i++) {
		const struct ct *c = &self->ct[i];

		ASSERT_EQ(0, cell_value(c->name, "cgroup", cg, sizeof(cg)));
		snprintf(self->high[i], sizeof(self->high[i]), CGROOT "%s/memory.high", cg);
		ASSERT_EQ(0, read_file(self->high[i], self->high_old[i],
				       sizeof(self->high_old[i])));
		cur = memory_current(cg + 1);
		ASSERT_LT(0, cur);
		snprintf(buf, sizeof(buf), "%ld", cur + (4L << 20));
		self->high_set[i] = true;
		ASSERT_EQ(0, write_file(self->high[i], buf));
		EXPECT_EQ(0, in_ct(self->path, c, self->out, sizeof(self->out), "memhog",
				   STR(HOG_KIB), STR(HOG_MS))) TH_LOG("%s", self->out);
		EXPECT_EQ(0, write_file(self->high[i], self->high_old[i]));
		self->high_set[i] = false;

		EXPECT_EQ(0, psi_line(&self->psi[i], line, sizeof(line), 10000));
		EXPECT_EQ(0, strncmp(line, "event after", 11))
			TH_LOG("%s under its own pressure: %s", c->name, line);
		/* The other one has not ended yet: it stays silent. */
		if (!i)
			EXPECT_EQ(-ETIMEDOUT, psi_line(&self->psi[1], line, sizeof(line), 100))
				TH_LOG("%s under %s's pressure: %s", self->ct[1].name, c->name,
				       line);
		self->psi_on[i] = false;
		EXPECT_EQ(0, proc_end(&self->psi[i], self->out, sizeof(self->out)))
			TH_LOG("%s", self->out);
	}
}

static void run_unshare_script(struct __test_metadata *_metadata, const char *name,
			       bool userns)
{
	const char *script = UNSHARE_PATH;
	char exe[PATH_MAX], out[OUT_MAX];
	ssize_t n;
	int st;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(script, X_OK))
		SKIP(return, "no %s", script);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = '\0';
	cask_unregister(name);
	if (userns)
		st = run(out, sizeof(out), "/bin/sh", script, "-U", name, exe, "--in-cell", "self",
			 NULL);
	else
		st = run(out, sizeof(out), "/bin/sh", script, name, exe, "--in-cell", "self",
			 NULL);
	EXPECT_EQ(0, st) TH_LOG("%s: %s", script, out);
	EXPECT_STREQ(name, last_line(out));
	EXPECT_TRUE(cell_gone(name));
	/* The command's exit status is the script's. */
	st = run(out, sizeof(out), "/bin/sh", script, name, "/bin/sh", "-c", "exit 7", NULL);
	EXPECT_EQ(7, st) TH_LOG("%s", out);
	EXPECT_TRUE(cell_gone(name));
}

/*
 * The hooks' records (CASK_RUN) go to a directory of each test's own, so
 * that the cases see only what they wrote.
 */
FIXTURE(runtime) {
	char run[64];
	char out[OUT_MAX];
};

FIXTURE_SETUP(runtime)
{
	snprintf(self->run, sizeof(self->run), "/tmp/lxc_test.run.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->run));
	ASSERT_EQ(0, setenv("CASK_RUN", self->run, 1));
}

FIXTURE_TEARDOWN(runtime)
{
	run(self->out, sizeof(self->out), "/bin/rm", "-rf", self->run, NULL);
}

TEST_F_TIMEOUT(runtime, unshare_script, 120)
{
	run_unshare_script(_metadata, "lxct-u", false);
}

TEST_F_TIMEOUT(runtime, unshare_script_userns, 120)
{
	run_unshare_script(_metadata, "lxct-v", true);
}

/*
 * The unshare script refuses a name that is no cell name and a cgroup
 * outside its directory or with another's processes in it, which its end
 * would kill and remove; an existing empty cgroup is used and left there.
 */
TEST_F_TIMEOUT(runtime, unshare_script_refuses, 120)
{
	const char *script = UNSHARE_PATH;
	char *out = self->out;
	size_t len = sizeof(self->out);
	char cg[PATH_MAX], procs[PATH_MAX], buf[64] = "", c;
	char fake[64], link[PATH_MAX];
	int p[2], st;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(script, X_OK))
		SKIP(return, "no %s", script);
	cask_unregister("lxct-w");
	st = run(out, len, "/bin/sh", script, "../x", "/bin/true", NULL);
	EXPECT_EQ(2, st) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "cannot name a cask cell")) TH_LOG("%s", out);
	EXPECT_NE(0, access(CGROOT "/cask-../x", F_OK));
	st = run(out, len, "/bin/sh", script, "lxct-0123456789012345678901234567", "/bin/true",
		 NULL);
	EXPECT_EQ(2, st) TH_LOG("%s", out);
	st = run(out, len, "/bin/sh", script, "-c", "lxct-d/../../lxct-esc", "lxct-w",
		 "/bin/true", NULL);
	EXPECT_EQ(2, st) TH_LOG("%s", out);
	EXPECT_NE(0, access(CGROOT "/lxct-d", F_OK));
	EXPECT_FALSE(cell_exists("lxct-w"));

	/* A cgroup with a process of another's. */
	snprintf(cg, sizeof(cg), CGROOT "/lxct-busy");
	rmdir(cg);
	ASSERT_EQ(0, mkdir(cg, 0755));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(p[1]);
		if (join_cgroup("lxct-busy"))
			_exit(1);
		_exit(read(p[0], &c, 1) < 0 ? 2 : 0);
	}
	close(p[0]);
	/* Wait until it is in there. */
	snprintf(procs, sizeof(procs), CGROOT "/lxct-busy/cgroup.procs");
	for (st = 0; st < 100; st++) {
		if (!read_file(procs, buf, sizeof(buf)) && buf[0])
			break;
		usleep(20000);
	}
	ASSERT_NE(0, buf[0]);
	st = run(out, len, "/bin/sh", script, "-c", "lxct-busy", "lxct-w", "/bin/true", NULL);
	EXPECT_EQ(1, st) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "has processes")) TH_LOG("%s", out);
	EXPECT_EQ(0, kill(pid, 0));
	EXPECT_EQ(0, access(cg, F_OK));
	EXPECT_FALSE(cell_exists("lxct-w"));

	/*
	 * cgroup.procs alone tells (size 0, as every cgroupfs file): a tree
	 * (CASK_CGROOT) whose lxct-busy has the real one, no cgroup.events.
	 */
	snprintf(fake, sizeof(fake), "/tmp/lxct-cg.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(fake));
	snprintf(link, sizeof(link), "%s/lxct-busy", fake);
	ASSERT_EQ(0, mkdir(link, 0755));
	snprintf(link, sizeof(link), "%s/lxct-busy/cgroup.procs", fake);
	ASSERT_EQ(0, symlink(procs, link));
	setenv("CASK_CGROOT", fake, 1);
	st = run(out, len, "/bin/sh", script, "-c", "lxct-busy", "lxct-w", "/bin/true", NULL);
	unsetenv("CASK_CGROOT");
	EXPECT_EQ(1, st) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "has processes")) TH_LOG("%s", out);
	EXPECT_EQ(0, kill(pid, 0));
	EXPECT_FALSE(cell_exists("lxct-w"));
	unlink(link);
	run(out, len, "/bin/rm", "-rf", fake, NULL);
	close(p[1]);
	EXPECT_EQ(0, child_status(pid));

	/* Empty now: the script runs in it and leaves it. */
	st = run(out, len, "/bin/sh", script, "-c", "lxct-busy", "lxct-w", "/bin/true", NULL);
	EXPECT_EQ(0, st) TH_LOG("%s", out);
	EXPECT_EQ(0, access(cg, F_OK));
	EXPECT_TRUE(cell_gone("lxct-w"));
	EXPECT_EQ(0, rmdir(cg));

	/* A cgroup whose parent is missing: both are made, both removed. */
	rmdir(CGROOT "/lxct-p/lxct-q");
	rmdir(CGROOT "/lxct-p");
	st = run(out, len, "/bin/sh", script, "-c", "lxct-p/lxct-q", "lxct-w", "/bin/true", NULL);
	EXPECT_EQ(0, st) TH_LOG("%s", out);
	EXPECT_TRUE(cell_gone("lxct-w"));
	EXPECT_NE(0, access(CGROOT "/lxct-p", F_OK));
	rmdir(CGROOT "/lxct-p/lxct-q");
	rmdir(CGROOT "/lxct-p");
	/* An empty component: refused. */
	st = run(out, len, "/bin/sh", script, "-c", "lxct-p//lxct-q", "lxct-w", "/bin/true", NULL);
	EXPECT_EQ(2, st) TH_LOG("%s", out);
	EXPECT_NE(0, access(CGROOT "/lxct-p", F_OK));
}

/*
 * start_ipc_task(), returning once the child is in its own IPC namespace
 * (it unshares after fork() has returned here): its pid, or -1.
 */
static pid_t ipc_task(int *go)
{
	unsigned long host = ns_inode(getpid(), "ipc");
	pid_t pid = start_ipc_task(go);
	unsigned long ino;
	int i;

	for (i = 0; pid > 0 && i < 500; i++) {
		ino = ns_inode(pid, "ipc");
		if (ino && ino != host)
			return pid;
		usleep(10000);
	}
	return -1;
}

/* Files in @dir (the hooks' records), or -1. */
static int count_files(const char *dir)
{
	struct dirent *d;
	int n = 0;
	DIR *dp;

	dp = opendir(dir);
	if (!dp)
		return -1;
	while ((d = readdir(dp)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dp);
	return n;
}

/*
 * Run the LXC hook as LXC does: @type, the container @name and @config in
 * the environment of hook version 1 (LXC_PID @pid, LXC_IPC_NS that of
 * @ns_of, each left out where 0); with @v0_ipc_of, as version 0 (the type
 * and "ipc:PATH" as arguments). Its exit status, its output in @out.
 */
static int lxc_hook(char *out, size_t len, const char *type, const char *name,
		    const char *config, pid_t pid, pid_t ns_of, pid_t v0_ipc_of)
{
	const char *h = getenv("CASK_LXC_HOOK") ?: HOOK_PATH;
	char buf[64], ipc[64];

	setenv("LXC_NAME", name, 1);
	setenv("LXC_CONFIG_FILE", config, 1);
	unsetenv("LXC_HOOK_TYPE");
	unsetenv("LXC_PID");
	unsetenv("LXC_IPC_NS");
	if (pid) {
		snprintf(buf, sizeof(buf), "%d", pid);
		setenv("LXC_PID", buf, 1);
	}
	if (ns_of) {
		snprintf(buf, sizeof(buf), "/proc/%d/ns/ipc", ns_of);
		setenv("LXC_IPC_NS", buf, 1);
	}
	if (v0_ipc_of) {
		snprintf(ipc, sizeof(ipc), "ipc:/proc/%d/ns/ipc", v0_ipc_of);
		return run(out, len, "/bin/sh", h, name, "lxc", type, "uts:/proc/1/ns/uts", ipc,
			   NULL);
	}
	setenv("LXC_HOOK_TYPE", type, 1);
	return run(out, len, "/bin/sh", h, NULL);
}

#define HCELL	"lxct-h"
#define CONF_A	"/var/lib/lxc/" HCELL "/config"
#define CONF_B	"/srv/lxc/" HCELL "/config"

/*
 * LXC runs the stop and post-stop hooks also after a start that failed:
 * a container whose start-host could not register (a running container
 * has the cell's name, under another lxcpath or with the same
 * configuration) must leave that container's cell alone. Only the
 * container that registered the cell unregisters it.
 */
TEST_F_TIMEOUT(runtime, lxc_hook_foreign_stop, 120)
{
	const char *h = getenv("CASK_LXC_HOOK") ?: HOOK_PATH;
	char *out = self->out;
	size_t len = sizeof(self->out);
	char records[96];
	unsigned long ino;
	int go_a, go_b;
	pid_t a, b;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(h, R_OK))
		SKIP(return, "no %s", h);
	snprintf(records, sizeof(records), "%s/lxc", self->run);
	cask_unregister(HCELL);
	a = ipc_task(&go_a);
	ASSERT_LT(0, a);
	b = ipc_task(&go_b);
	ASSERT_LT(0, b);
	ino = ns_inode(a, "ipc");

	EXPECT_EQ(0, lxc_hook(out, len, "start-host", HCELL, CONF_A, a, 0, 0)) TH_LOG("%s", out);
	ASSERT_TRUE(cell_exists(HCELL));
	EXPECT_EQ(ino, cell_num(HCELL, "ipc_ns"));
	EXPECT_EQ(1, count_files(records));

	/* The same name under another lxcpath: registering fails... */
	EXPECT_EQ(1, lxc_hook(out, len, "start-host", HCELL, CONF_B, b, 0, 0));
	EXPECT_NE(NULL, strstr(out, "exists already")) TH_LOG("%s", out);
	/* ...and its stop hooks do nothing. */
	EXPECT_EQ(0, lxc_hook(out, len, "stop", HCELL, CONF_B, b, b, 0)) TH_LOG("%s", out);
	EXPECT_EQ(0, lxc_hook(out, len, "post-stop", HCELL, CONF_B, b, 0, 0)) TH_LOG("%s", out);
	EXPECT_EQ(0, lxc_hook(out, len, "stop", HCELL, CONF_B, 0, 0, b)) TH_LOG("%s", out);
	EXPECT_EQ(ino, cell_num(HCELL, "ipc_ns"));

	/* A's configuration started once more: its namespace is not the cell's. */
	EXPECT_EQ(1, lxc_hook(out, len, "start-host", HCELL, CONF_A, b, 0, 0));
	EXPECT_EQ(0, lxc_hook(out, len, "stop", HCELL, CONF_A, b, b, 0)) TH_LOG("%s", out);
	EXPECT_EQ(0, lxc_hook(out, len, "stop", HCELL, CONF_A, 0, 0, b)) TH_LOG("%s", out);
	EXPECT_EQ(0, lxc_hook(out, len, "post-stop", HCELL, CONF_A, b, 0, 0)) TH_LOG("%s", out);
	EXPECT_EQ(ino, cell_num(HCELL, "ipc_ns"));
	EXPECT_EQ(1, count_files(records));

	/* A's own stop (version 0 here) unregisters, and its record goes. */
	EXPECT_EQ(0, lxc_hook(out, len, "stop", HCELL, CONF_A, a, 0, a)) TH_LOG("%s", out);
	EXPECT_TRUE(cell_gone(HCELL));
	EXPECT_EQ(0, count_files(records));
	EXPECT_EQ(0, lxc_hook(out, len, "post-stop", HCELL, CONF_A, a, 0, 0)) TH_LOG("%s", out);

	/* B now registers the free name; its post-stop alone unregisters. */
	EXPECT_EQ(0, lxc_hook(out, len, "start-host", HCELL, CONF_B, b, 0, 0)) TH_LOG("%s", out);
	EXPECT_EQ(ns_inode(b, "ipc"), cell_num(HCELL, "ipc_ns"));
	EXPECT_EQ(0, lxc_hook(out, len, "post-stop", HCELL, CONF_A, a, 0, 0)) TH_LOG("%s", out);
	EXPECT_TRUE(cell_exists(HCELL));
	EXPECT_EQ(0, lxc_hook(out, len, "post-stop", HCELL, CONF_B, b, 0, 0)) TH_LOG("%s", out);
	EXPECT_TRUE(cell_gone(HCELL));
	EXPECT_EQ(0, count_files(records));
	close(go_a);
	close(go_b);
	EXPECT_EQ(0, child_status(a));
	EXPECT_EQ(0, child_status(b));
}

/*
 * A stale record (LXC's monitor killed: no stop hooks ran) whose cell name
 * another container registered since, here with the same IPC namespace
 * inode (inodes are reused): the stop hooks of a start of the old
 * container that failed (no LXC_PID: LXC sets it after clone) leave the
 * newcomer's cell alone. The cell's id tells the two apart.
 */
TEST_F_TIMEOUT(runtime, lxc_hook_stale_record, 120)
{
	const char *h = getenv("CASK_LXC_HOOK") ?: HOOK_PATH;
	char *out = self->out;
	size_t len = sizeof(self->out);
	char records[96];
	unsigned long ino;
	int go;
	pid_t a;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(h, R_OK))
		SKIP(return, "no %s", h);
	snprintf(records, sizeof(records), "%s/lxc", self->run);
	cask_unregister(HCELL);
	ASSERT_TRUE(cell_gone(HCELL));
	a = ipc_task(&go);
	ASSERT_LT(0, a);
	ino = ns_inode(a, "ipc");
	EXPECT_EQ(0, lxc_hook(out, len, "start-host", HCELL, CONF_A, a, 0, 0)) TH_LOG("%s", out);
	EXPECT_EQ(1, count_files(records));
	/* Gone without the hooks; the newcomer has the same inode. */
	EXPECT_EQ(0, cask_unregister(HCELL));
	ASSERT_TRUE(cell_gone(HCELL));
	ASSERT_EQ(0, cask_register(HCELL, a));
	EXPECT_EQ(ino, cell_num(HCELL, "ipc_ns"));
	EXPECT_EQ(0, lxc_hook(out, len, "stop", HCELL, CONF_A, 0, 0, 0)) TH_LOG("%s", out);
	EXPECT_EQ(0, lxc_hook(out, len, "post-stop", HCELL, CONF_A, 0, 0, 0)) TH_LOG("%s", out);
	EXPECT_TRUE(cell_exists(HCELL));
	EXPECT_EQ(ino, cell_num(HCELL, "ipc_ns"));
	/* The stale record is gone. */
	EXPECT_EQ(0, count_files(records));
	EXPECT_EQ(0, cask_unregister(HCELL));
	EXPECT_TRUE(cell_gone(HCELL));
	close(go);
	EXPECT_EQ(0, child_status(a));
}

/* Run the OCI hook with @state on its standard input; its exit status. */
static int oci_hook(const char *op, const char *state, char *out, size_t len)
{
	const char *argv[4];
	struct proc p;
	size_t n = strlen(state);

	argv[0] = "/bin/sh";
	argv[1] = OCI_HOOK_PATH;
	argv[2] = op;
	argv[3] = NULL;
	if (proc_start(&p, argv))
		return -1;
	if (write(p.in, state, n) != (ssize_t)n)
		return -1;
	return proc_end(&p, out, len);
}

/*
 * tools/runtime/cask-oci-hook with the state an OCI runtime gives it (no
 * OCI runtime in the guest): createRuntime's registers the process, also
 * under the annotation org.cask.cell; poststop's unregisters.
 */
TEST_F_TIMEOUT(runtime, oci_hook, 120)
{
	char state[512], out[OUT_MAX];
	int go;
	pid_t pid;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(OCI_HOOK_PATH, R_OK))
		SKIP(return, "no %s", OCI_HOOK_PATH);
	cask_unregister("lxct-oci");
	cask_unregister("lxct-oci2");
	pid = ipc_task(&go);
	ASSERT_LT(0, pid);
	snprintf(state, sizeof(state),
		 "{\"ociVersion\": \"1.0.2\", \"id\": \"lxct-oci\", \"status\": \"created\",\n"
		 " \"pid\": %d, \"bundle\": \"/tmp/b\", \"annotations\": {\"x\": \"y\"}}\n", pid);
	EXPECT_EQ(0, oci_hook("register", state, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_TRUE(cell_exists("lxct-oci"));
	EXPECT_EQ(ns_inode(pid, "ipc"), cell_num("lxct-oci", "ipc_ns"));
	/* A second registration of the namespace fails, and says so. */
	snprintf(state, sizeof(state),
		 "{\"id\":\"" OCI_LONG_ID "\",\"pid\":%d,"
		 "\"annotations\":{\"org.cask.cell\":\"lxct-oci2\"}}", pid);
	EXPECT_EQ(1, oci_hook("register", state, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "lxct-oci2")) TH_LOG("%s", out);
	EXPECT_FALSE(cell_exists("lxct-oci2"));
	EXPECT_EQ(0, oci_hook("unregister", "{\"id\":\"lxct-oci\",\"status\":\"stopped\","
			      "\"bundle\":\"/tmp/b\"}", out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_TRUE(cell_gone("lxct-oci"));
	/* Now under the annotation's name. */
	EXPECT_EQ(0, oci_hook("register", state, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_TRUE(cell_exists("lxct-oci2"));
	/* Unregistering what is gone is no error. */
	EXPECT_EQ(0, oci_hook("unregister", state, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_TRUE(cell_gone("lxct-oci2"));
	EXPECT_EQ(0, oci_hook("unregister", state, out, sizeof(out))) TH_LOG("%s", out);
	close(go);
	EXPECT_EQ(0, child_status(pid));
}

/*
 * A runtime runs poststop also for a container whose createRuntime hook
 * failed: one whose annotation names another container's cell must not
 * unregister that cell.
 */
TEST_F_TIMEOUT(runtime, oci_hook_foreign_poststop, 120)
{
	char state[512], *out = self->out;
	size_t len = sizeof(self->out);
	int go_a, go_b;
	pid_t a, b;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(OCI_HOOK_PATH, R_OK))
		SKIP(return, "no %s", OCI_HOOK_PATH);
	cask_unregister("lxct-oc");
	a = ipc_task(&go_a);
	ASSERT_LT(0, a);
	b = ipc_task(&go_b);
	ASSERT_LT(0, b);
	snprintf(state, sizeof(state), "{\"id\":\"lxct-oa\",\"pid\":%d,"
		 "\"annotations\":{\"org.cask.cell\":\"lxct-oc\"}}", a);
	EXPECT_EQ(0, oci_hook("register", state, out, len)) TH_LOG("%s", out);
	EXPECT_EQ(ns_inode(a, "ipc"), cell_num("lxct-oc", "ipc_ns"));
	snprintf(state, sizeof(state), "{\"id\":\"lxct-ob\",\"pid\":%d,"
		 "\"annotations\":{\"org.cask.cell\":\"lxct-oc\"}}", b);
	EXPECT_EQ(1, oci_hook("register", state, out, len)) TH_LOG("%s", out);
	EXPECT_EQ(0, oci_hook("unregister", "{\"id\":\"lxct-ob\",\"status\":\"stopped\","
			      "\"annotations\":{\"org.cask.cell\":\"lxct-oc\"}}", out, len))
		TH_LOG("%s", out);
	EXPECT_EQ(ns_inode(a, "ipc"), cell_num("lxct-oc", "ipc_ns"));
	/* The container that registered it unregisters it. */
	EXPECT_EQ(0, oci_hook("unregister", "{\"id\":\"lxct-oa\",\"status\":\"stopped\","
			      "\"annotations\":{\"org.cask.cell\":\"lxct-oc\"}}", out, len))
		TH_LOG("%s", out);
	EXPECT_TRUE(cell_gone("lxct-oc"));
	close(go_a);
	close(go_b);
	EXPECT_EQ(0, child_status(a));
	EXPECT_EQ(0, child_status(b));
}

/*
 * Two containers of the same id under two runtime roots (two bundles):
 * the second's createRuntime fails (the first holds the cell), and its
 * poststop, which the runtime runs anyway, leaves the first's cell.
 */
TEST_F_TIMEOUT(runtime, oci_hook_same_id, 120)
{
	char state[512], *out = self->out;
	size_t len = sizeof(self->out);
	int go_a, go_b;
	pid_t a, b;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(OCI_HOOK_PATH, R_OK))
		SKIP(return, "no %s", OCI_HOOK_PATH);
	cask_unregister("lxct-oi");
	ASSERT_TRUE(cell_gone("lxct-oi"));
	a = ipc_task(&go_a);
	ASSERT_LT(0, a);
	b = ipc_task(&go_b);
	ASSERT_LT(0, b);
	snprintf(state, sizeof(state), "{\"id\":\"lxct-oi\",\"pid\":%d,\"bundle\":\"/r1/b\"}", a);
	EXPECT_EQ(0, oci_hook("register", state, out, len)) TH_LOG("%s", out);
	snprintf(state, sizeof(state), "{\"id\":\"lxct-oi\",\"pid\":%d,\"bundle\":\"/r2/b\"}", b);
	EXPECT_EQ(1, oci_hook("register", state, out, len)) TH_LOG("%s", out);
	EXPECT_EQ(0, oci_hook("unregister", "{\"id\":\"lxct-oi\",\"bundle\":\"/r2/b\"}", out, len))
		TH_LOG("%s", out);
	EXPECT_TRUE(cell_exists("lxct-oi"));
	EXPECT_EQ(ns_inode(a, "ipc"), cell_num("lxct-oi", "ipc_ns"));
	EXPECT_EQ(0, oci_hook("unregister", "{\"id\":\"lxct-oi\",\"bundle\":\"/r1/b\"}", out, len))
		TH_LOG("%s", out);
	EXPECT_TRUE(cell_gone("lxct-oi"));
	close(go_a);
	close(go_b);
	EXPECT_EQ(0, child_status(a));
	EXPECT_EQ(0, child_status(b));
}

/*
 * A stale record (the runtime killed before poststop) whose cell name
 * another container registered since, with the same IPC namespace inode:
 * the poststop of a later failed start of that id leaves the newcomer.
 */
TEST_F_TIMEOUT(runtime, oci_hook_stale_record, 120)
{
	char state[512], *out = self->out;
	size_t len = sizeof(self->out);
	unsigned long ino;
	int go;
	pid_t a;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(OCI_HOOK_PATH, R_OK))
		SKIP(return, "no %s", OCI_HOOK_PATH);
	cask_unregister("lxct-os");
	ASSERT_TRUE(cell_gone("lxct-os"));
	a = ipc_task(&go);
	ASSERT_LT(0, a);
	ino = ns_inode(a, "ipc");
	snprintf(state, sizeof(state), "{\"id\":\"lxct-os\",\"pid\":%d,\"bundle\":\"/b\"}", a);
	EXPECT_EQ(0, oci_hook("register", state, out, len)) TH_LOG("%s", out);
	EXPECT_EQ(0, cask_unregister("lxct-os"));
	ASSERT_TRUE(cell_gone("lxct-os"));
	ASSERT_EQ(0, cask_register("lxct-os", a));
	EXPECT_EQ(ino, cell_num("lxct-os", "ipc_ns"));
	EXPECT_EQ(0, oci_hook("unregister", "{\"id\":\"lxct-os\",\"bundle\":\"/b\"}", out, len))
		TH_LOG("%s", out);
	EXPECT_TRUE(cell_exists("lxct-os"));
	EXPECT_EQ(0, cask_unregister("lxct-os"));
	EXPECT_TRUE(cell_gone("lxct-os"));
	close(go);
	EXPECT_EQ(0, child_status(a));
}

/*
 * The id "X.new" is a container's as well: registering the id X (which
 * once wrote its record through the temporary file "X.new") keeps it.
 */
TEST_F_TIMEOUT(runtime, oci_hook_record_names, 120)
{
	char state[512], records[96], *out = self->out;
	size_t len = sizeof(self->out);
	int go_a, go_b;
	pid_t a, b;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(OCI_HOOK_PATH, R_OK))
		SKIP(return, "no %s", OCI_HOOK_PATH);
	snprintf(records, sizeof(records), "%s/oci", self->run);
	cask_unregister("lxct-fa");
	cask_unregister("lxct-fb");
	a = ipc_task(&go_a);
	ASSERT_LT(0, a);
	b = ipc_task(&go_b);
	ASSERT_LT(0, b);
	snprintf(state, sizeof(state), "{\"id\":\"lxct-f.new\",\"pid\":%d,"
		 "\"annotations\":{\"org.cask.cell\":\"lxct-fa\"}}", a);
	EXPECT_EQ(0, oci_hook("register", state, out, len)) TH_LOG("%s", out);
	snprintf(state, sizeof(state), "{\"id\":\"lxct-f\",\"pid\":%d,"
		 "\"annotations\":{\"org.cask.cell\":\"lxct-fb\"}}", b);
	EXPECT_EQ(0, oci_hook("register", state, out, len)) TH_LOG("%s", out);
	EXPECT_EQ(2, count_files(records));
	EXPECT_EQ(0, oci_hook("unregister", "{\"id\":\"lxct-f.new\"}", out, len)) TH_LOG("%s", out);
	EXPECT_TRUE(cell_gone("lxct-fa"));
	EXPECT_EQ(0, oci_hook("unregister", "{\"id\":\"lxct-f\"}", out, len)) TH_LOG("%s", out);
	EXPECT_TRUE(cell_gone("lxct-fb"));
	close(go_a);
	close(go_b);
	EXPECT_EQ(0, child_status(a));
	EXPECT_EQ(0, child_status(b));
}

/*
 * Kubernetes allows annotations of 256 KiB: such a state registers within
 * seconds (the hook's scanner is linear under busybox awk); a state over
 * 1 MiB is refused.
 */
TEST_F_TIMEOUT(runtime, oci_hook_big_state, 120)
{
	size_t big = 256 * 1024, cap = 1024 * 1024 + 4096;
	char *state, *out = self->out;
	size_t len = sizeof(self->out), n;
	struct timespec t0, t1;
	int go;
	pid_t a;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(OCI_HOOK_PATH, R_OK))
		SKIP(return, "no %s", OCI_HOOK_PATH);
	cask_unregister("lxct-obig");
	a = ipc_task(&go);
	ASSERT_LT(0, a);
	state = malloc(cap + 256);
	ASSERT_NE(NULL, state);
	n = snprintf(state, 256, "{\"id\":\"lxct-obig\",\"pid\":%d,\"annotations\":{\"big\":\"", a);
	memset(state + n, 'a', big);
	n += big;
	n += snprintf(state + n, 256, "\",\"org.cask.cell\":\"lxct-obig\"}}\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(0, oci_hook("register", state, out, len)) TH_LOG("%s", out);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_GT(15, t1.tv_sec - t0.tv_sec) TH_LOG("%ld s", (long)(t1.tv_sec - t0.tv_sec));
	EXPECT_TRUE(cell_exists("lxct-obig"));
	EXPECT_EQ(0, oci_hook("unregister", state, out, len)) TH_LOG("%s", out);
	EXPECT_TRUE(cell_gone("lxct-obig"));
	/* Over 1 MiB. */
	n = snprintf(state, 256, "{\"id\":\"lxct-obig\",\"pid\":%d,\"annotations\":{\"big\":\"", a);
	memset(state + n, 'a', cap);
	n += cap;
	snprintf(state + n, 256, "\"}}\n");
	EXPECT_EQ(1, oci_hook("register", state, out, len));
	EXPECT_NE(NULL, strstr(out, "larger than 1 MiB")) TH_LOG("%s", out);
	EXPECT_FALSE(cell_exists("lxct-obig"));
	free(state);
	close(go);
	EXPECT_EQ(0, child_status(a));
}

/*
 * "id" and "pid" come from the state's top level, never from its
 * annotations (the container's creator writes those), in either order;
 * a pid in the host's IPC namespace is refused.
 */
TEST_F_TIMEOUT(runtime, oci_hook_top_level, 120)
{
	static const char *const fmt[] = {
		"{\"annotations\":{\"pid\":\"1\",\"id\":\"x\"},\"id\":\"lxct-op\",\"pid\":%d}",
		"{\"id\":\"lxct-op\",\"pid\":%d,\"annotations\":{\"pid\":\"1\",\"id\":\"x\"}}",
		"{\"id\":\"lxct-op\",\"pid\":%d,\"annotations\":{\"a\":{\"pid\":1},"
		"\"b\":\"\\\"pid\\\": 1, \\\"id\\\": \\\"x\\\"\"}}",
	};
	char state[512], *out = self->out;
	size_t len = sizeof(self->out);
	unsigned int i;
	int go;
	pid_t a;

	if (cask_missing())
		SKIP(return, "%s", cask_missing());
	if (access(OCI_HOOK_PATH, R_OK))
		SKIP(return, "no %s", OCI_HOOK_PATH);
	cask_unregister("lxct-op");
	cask_unregister("x");
	a = ipc_task(&go);
	ASSERT_LT(0, a);
	for (i = 0; i < ARRAY_SIZE(fmt); i++) {
		snprintf(state, sizeof(state), fmt[i], a);
		EXPECT_EQ(0, oci_hook("register", state, out, len)) TH_LOG("%s: %s", state, out);
		EXPECT_EQ(ns_inode(a, "ipc"), cell_num("lxct-op", "ipc_ns")) TH_LOG("%s", state);
		EXPECT_FALSE(cell_exists("x"));
		EXPECT_EQ(0, oci_hook("unregister", state, out, len)) TH_LOG("%s", out);
		EXPECT_TRUE(cell_gone("lxct-op"));
	}
	/* The host's processes: pid 1, the hook's caller. */
	snprintf(state, sizeof(state), "{\"id\":\"lxct-op\",\"pid\":1}");
	EXPECT_EQ(1, oci_hook("register", state, out, len));
	EXPECT_NE(NULL, strstr(out, "host's IPC namespace")) TH_LOG("%s", out);
	snprintf(state, sizeof(state), "{\"id\":\"lxct-op\",\"pid\":%d}", getpid());
	EXPECT_EQ(1, oci_hook("register", state, out, len));
	EXPECT_NE(NULL, strstr(out, "host's IPC namespace")) TH_LOG("%s", out);
	EXPECT_FALSE(cell_exists("lxct-op"));
	close(go);
	EXPECT_EQ(0, child_status(a));
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "--in-cell"))
		return in_cell(argc - 2, argv + 2);
	return test_harness_run(argc, argv);
}
