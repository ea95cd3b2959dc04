// SPDX-License-Identifier: GPL-2.0
/*
 * logcat: read the Android logger devices of cask_logger (/dev/log/main,
 * events, radio, system and crash; see Documentation/logger.rst).
 *
 * It follows (default) or dumps (-d) one or more buffers, merged in time
 * order, clears them (-c) or prints their sizes (-g). On the host,
 * --cell NAME reads one cell's rings and --all-cells every cell's; each
 * line then starts with "[CELL] ", the writer's cell.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/android_logger.h>

enum { BUF_MAIN, BUF_EVENTS, BUF_RADIO, BUF_SYSTEM, BUF_CRASH, NR_BUFFERS };

static const char *const buffer_names[NR_BUFFERS] = {
	"main", "events", "radio", "system", "crash"
};

#define ALL_BUFFERS	((1u << NR_BUFFERS) - 1)
#define DEFAULT_BUFFERS	((1u << BUF_MAIN) | (1u << BUF_SYSTEM) | (1u << BUF_CRASH))

/* Decoded text of one events entry: hex of 4076 bytes is the longest. */
#define EVENT_TEXT_MAX	(3 * LOGGER_ENTRY_MAX_PAYLOAD + 64)
/* Nesting limit for event lists. */
#define EVENT_MAX_DEPTH	8

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Event value types, as in Android's liblog. */
enum { EVENT_INT, EVENT_LONG, EVENT_STRING, EVENT_LIST, EVENT_FLOAT };

enum format { FMT_BRIEF, FMT_THREADTIME };
enum mode { MODE_FOLLOW, MODE_DUMP, MODE_CLEAR, MODE_SIZE, MODE_SELFTEST };

struct options {
	unsigned int buffers;	/* mask of 1 << BUF_* */
	enum mode mode;
	enum format format;
	const char *cell;	/* --cell NAME, or NULL */
	bool all_cells;		/* --all-cells */
	bool kernel;		/* -b kernel: the cell's kmsg */
	const char *dev_dir;	/* $LOGCAT_DEV_DIR or default_dev_dir() */
};

/* One entry as read: the header fields and where its payload is. */
struct entry {
	int32_t pid;
	int32_t tid;
	int32_t sec;
	int32_t nsec;
	uint32_t euid;
	bool has_cell;
	char cell[CASK_LOGGER_CELL_NAME_MAX + 1];
	const unsigned char *msg;
	size_t len;
};

/* One open device and the entry read from it but not yet printed. */
struct logdev {
	const char *name;
	char path[PATH_MAX];
	int fd;
	int version;		/* 1, 2 or CASK_LOGGER_VERSION_CELL */
	bool binary;		/* events: [u32 tag][typed value] */
	bool drained;		/* read() said EAGAIN in this pass */
	bool pending;		/* ent holds an entry not yet printed */
	struct entry ent;
	unsigned char buf[LOGGER_ENTRY_MAX_LEN];
};

/* The prefix of every output line of one entry. */
struct line {
	enum format format;
	const char *cell;	/* "[cell] " prefix, or NULL */
	char time[32];		/* MM-DD HH:MM:SS */
	long msec;
	int pid;
	int tid;
	char prio;
	const char *tag;
	int tag_len;
};

/* A bounded string builder: output that does not fit is dropped. */
struct sbuf {
	char *buf;
	size_t size;
	size_t len;
};

/* A bounded reader over a payload. */
struct cursor {
	const unsigned char *p;
	size_t left;
};

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: logcat [-b BUF[,BUF...]]... [-d | -c | -g] [-v brief|threadtime]\n"
		"              [--cell NAME | --all-cells]\n"
		"\n"
		"Reads the Android logger devices of cask_logger.\n"
		"\n"
		"  -b BUF        buffer: main, events, radio, system, crash or all;\n"
		"                repeatable, comma separated (default main,system,crash);\n"
		"                kernel: the cell's kmsg (/dev/cask/kmsg), read alone\n"
		"  -d            print what is in the buffers and exit (default: follow)\n"
		"  -c            clear the buffers and exit\n"
		"  -g            print the ring size and unread bytes of the buffers and exit\n"
		"  -v FORMAT     brief or threadtime (default threadtime)\n"
		"  --cell NAME   host only: read the rings of cask cell NAME\n"
		"  --all-cells   host only: read the rings of every cell, merged\n"
		"  -h, --help    this help\n"
		"\n"
		"With --cell or --all-cells each line starts with the writer's cell\n"
		"as \"[CELL] \"; both need CAP_SYSLOG on the host. The devices are in\n"
		"$LOGCAT_DEV_DIR, default /dev/log, or where cask_logger's devdir\n"
		"parameter put them when /dev/log is not a directory.\n");
}

/*
 * /dev/log if it is a directory (Android's place, and a container's, where
 * the runtime binds the nodes); else where cask_logger put them on this
 * host (its devdir parameter, for a host whose /dev/log is syslog's).
 */
static const char *default_dev_dir(void)
{
	static char dir[128];
	char param[80];
	struct stat st;
	size_t n;
	FILE *f;

	if (!stat("/dev/log", &st) && S_ISDIR(st.st_mode))
		return "/dev/log";
	f = fopen("/sys/module/cask_logger/parameters/devdir", "re");
	if (!f)
		return "/dev/log";
	n = fgets(param, sizeof(param), f) ? strcspn(param, "\n") : 0;
	fclose(f);
	if (!n)
		return "/dev/log";
	snprintf(dir, sizeof(dir), "/dev/%.*s", (int)n, param);
	return dir;
}

/* --- output ---------------------------------------------------------- */

static char prio_letter(unsigned char prio)
{
	static const char letters[] = "??VDIWEFS";

	return prio < sizeof(letters) - 1 ? letters[prio] : '?';
}

static void sb_printf(struct sbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	size_t room = sb->size - sb->len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->len, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb->len += (size_t)n < room ? (size_t)n : room - 1;
}

static void sb_putmem(struct sbuf *sb, const unsigned char *p, size_t n)
{
	size_t room = sb->size - sb->len - 1;

	if (n > room)
		n = room;
	memcpy(sb->buf + sb->len, p, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

static void sb_reset(struct sbuf *sb)
{
	sb->len = 0;
	sb->buf[0] = '\0';
}

static void sb_hex(struct sbuf *sb, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sb_printf(sb, i ? " %02x" : "%02x", p[i]);
}

static void print_line(FILE *out, const struct line *l, const char *msg, int len)
{
	if (l->cell)
		fprintf(out, "[%s] ", l->cell);
	if (l->format == FMT_BRIEF)
		fprintf(out, "%c/%-8.*s(%5d): %.*s\n",
			l->prio, l->tag_len, l->tag, l->pid, len, msg);
	else
		fprintf(out, "%s.%03ld %5d %5d %c %-8.*s: %.*s\n",
			l->time, l->msec, l->pid, l->tid, l->prio, l->tag_len, l->tag, len, msg);
}

/* One output line per line of the message; a final newline adds none. */
static void print_lines(FILE *out, const struct line *l, const char *msg, size_t len)
{
	const char *end = msg + len;
	const char *nl, *stop;

	do {
		nl = memchr(msg, '\n', end - msg);
		stop = nl ? nl : end;
		print_line(out, l, msg, (int)(stop - msg));
		msg = nl ? nl + 1 : end;
	} while (msg < end);
}

/* --- payload decoders ------------------------------------------------ */

/*
 * A text payload is [u8 priority][tag NUL][message NUL]. Missing NULs end
 * the tag or message at the end of the payload; nothing past @len is read.
 */
static void decode_text(const unsigned char *p, size_t len, struct line *l,
			const char **msg, size_t *msg_len)
{
	const char *s = (const char *)p;
	const char *end = s + len;
	const char *tag, *nul;

	l->prio = len ? prio_letter(p[0]) : '?';
	tag = len ? s + 1 : end;
	nul = memchr(tag, '\0', end - tag);
	l->tag = tag;
	l->tag_len = (int)((nul ? nul : end) - tag);
	*msg = nul ? nul + 1 : end;
	nul = memchr(*msg, '\0', end - *msg);
	*msg_len = (nul ? nul : end) - *msg;
}

static bool get_bytes(struct cursor *c, size_t n, const unsigned char **p)
{
	if (c->left < n)
		return false;
	*p = c->p;
	c->p += n;
	c->left -= n;
	return true;
}

static bool get_u8(struct cursor *c, uint8_t *v)
{
	const unsigned char *p;

	if (!get_bytes(c, 1, &p))
		return false;
	*v = p[0];
	return true;
}

static bool get_le32(struct cursor *c, uint32_t *v)
{
	const unsigned char *p;

	if (!get_bytes(c, 4, &p))
		return false;
	*v = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
	return true;
}

static bool get_le64(struct cursor *c, uint64_t *v)
{
	uint32_t lo, hi;

	if (!get_le32(c, &lo) || !get_le32(c, &hi))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

/* Decode one typed event value at @c into @sb; false if it is invalid. */
static bool decode_event_value(struct cursor *c, struct sbuf *sb, int depth)
{
	const unsigned char *bytes;
	uint8_t type, count, i;
	uint32_t v32;
	uint64_t v64;
	float f;

	if (!get_u8(c, &type))
		return false;
	switch (type) {
	case EVENT_INT:
		if (!get_le32(c, &v32))
			return false;
		sb_printf(sb, "%d", (int32_t)v32);
		return true;
	case EVENT_LONG:
		if (!get_le64(c, &v64))
			return false;
		sb_printf(sb, "%lld", (long long)(int64_t)v64);
		return true;
	case EVENT_STRING:
		if (!get_le32(c, &v32) || !get_bytes(c, v32, &bytes))
			return false;
		sb_putmem(sb, bytes, v32);
		return true;
	case EVENT_LIST:
		if (depth >= EVENT_MAX_DEPTH || !get_u8(c, &count))
			return false;
		sb_printf(sb, "[");
		for (i = 0; i < count; i++) {
			if (i)
				sb_printf(sb, ",");
			if (!decode_event_value(c, sb, depth + 1))
				return false;
		}
		sb_printf(sb, "]");
		return true;
	case EVENT_FLOAT:
		if (!get_le32(c, &v32))
			return false;
		memcpy(&f, &v32, sizeof(f));
		sb_printf(sb, "%f", f);
		return true;
	}
	return false;
}

/*
 * An events payload is [u32 tag, little endian][one typed value]. The tag
 * number goes to @tag, the value to @sb; a payload that is not exactly one
 * valid value is shown as hex bytes.
 */
static void decode_event(const unsigned char *p, size_t len, char *tag, size_t tag_size,
			 struct sbuf *sb)
{
	struct cursor c = { p, len };
	uint32_t num;

	sb_reset(sb);
	if (!get_le32(&c, &num)) {
		snprintf(tag, tag_size, "?");
		sb_hex(sb, p, len);
		return;
	}
	snprintf(tag, tag_size, "%u", num);
	if (!c.left)
		return;
	if (!decode_event_value(&c, sb, 0) || c.left) {
		sb_reset(sb);
		sb_hex(sb, p + 4, len - 4);
	}
}

static void format_time(const struct entry *e, struct line *l)
{
	time_t sec = e->sec;
	struct tm tm;

	if (!localtime_r(&sec, &tm) ||
	    !strftime(l->time, sizeof(l->time), "%m-%d %H:%M:%S", &tm))
		snprintf(l->time, sizeof(l->time), "00-00 00:00:00");
	l->msec = e->nsec >= 0 && e->nsec < 1000000000 ? e->nsec / 1000000 : 0;
}

/* Print @e, from an events buffer if @binary, as one or more lines. */
static void print_entry(FILE *out, enum format format, bool binary, const struct entry *e)
{
	char text[EVENT_TEXT_MAX], tag[16];
	struct sbuf sb = { text, sizeof(text), 0 };
	struct line l = {
		.format = format,
		.cell = e->has_cell ? e->cell : NULL,
		.pid = e->pid,
		.tid = e->tid,
	};
	const char *msg;
	size_t len;

	if (format == FMT_THREADTIME)
		format_time(e, &l);
	if (binary) {
		decode_event(e->msg, e->len, tag, sizeof(tag), &sb);
		l.prio = 'I';
		l.tag = tag;
		l.tag_len = (int)strlen(tag);
		msg = sb.buf;
		len = sb.len;
	} else {
		decode_text(e->msg, e->len, &l, &msg, &len);
	}
	print_lines(out, &l, msg, len);
}

/* --- reading --------------------------------------------------------- */

/*
 * Parse what one read() returned: @n bytes at @buf with headers of
 * @version. The payload is bounded by the header's len and by @n.
 * Returns 0, or -1 for a malformed header.
 */
static int parse_entry(const unsigned char *buf, size_t n, int version, struct entry *e)
{
	struct user_logger_entry_compat v1;
	struct cask_logger_entry cell;
	struct logger_entry v2;
	size_t hdr, len;

	memset(e, 0, sizeof(*e));
	if (version == 1) {
		if (n < sizeof(v1))
			return -1;
		memcpy(&v1, buf, sizeof(v1));
		hdr = sizeof(v1);
		len = v1.len;
		e->pid = v1.pid;
		e->tid = v1.tid;
		e->sec = v1.sec;
		e->nsec = v1.nsec;
	} else {
		if (n < sizeof(v2))
			return -1;
		memcpy(&v2, buf, sizeof(v2));
		hdr = v2.hdr_size;
		if (hdr < sizeof(v2) || hdr > n)
			return -1;
		len = v2.len;
		e->pid = v2.pid;
		e->tid = v2.tid;
		e->sec = v2.sec;
		e->nsec = v2.nsec;
		e->euid = v2.euid;
		if (version == CASK_LOGGER_VERSION_CELL) {
			if (hdr < sizeof(cell))
				return -1;
			memcpy(&cell, buf, sizeof(cell));
			memcpy(e->cell, cell.cell, sizeof(e->cell) - 1);
			e->cell[sizeof(e->cell) - 1] = '\0';
			e->has_cell = true;
		}
	}
	e->msg = buf + hdr;
	e->len = len < n - hdr ? len : n - hdr;
	return 0;
}

/* Read the next entry of @d: 1 if read, 0 if there is none now, -1 on error. */
static int fetch_entry(struct logdev *d)
{
	ssize_t n;

	for (;;) {
		n = read(d->fd, d->buf, sizeof(d->buf));
		if (n == 0 || (n < 0 && errno == EAGAIN))
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "logcat: cannot read %s: %s\n", d->path, strerror(errno));
			return -1;
		}
		if (!parse_entry(d->buf, n, d->version, &d->ent))
			return 1;
		fprintf(stderr, "logcat: %s: skipping a malformed entry (%zd bytes)\n",
			d->path, n);
	}
}

static bool entry_before(const struct entry *a, const struct entry *b)
{
	return a->sec < b->sec || (a->sec == b->sec && a->nsec < b->nsec);
}

/*
 * Print every entry that can be read now from the @n devices without
 * blocking, merged in time order. Returns 0, or -1 on a read error.
 */
static int drain(struct logdev *devs, int n, enum format format)
{
	struct logdev *next, *d;
	int i, ret;

	for (i = 0; i < n; i++) {
		devs[i].drained = false;
		devs[i].pending = false;
	}
	for (;;) {
		next = NULL;
		for (i = 0; i < n; i++) {
			d = &devs[i];
			if (!d->pending && !d->drained) {
				ret = fetch_entry(d);
				if (ret < 0)
					return -1;
				d->pending = ret;
				d->drained = !ret;
			}
			if (d->pending && (!next || entry_before(&d->ent, &next->ent)))
				next = d;
		}
		if (!next)
			return 0;
		print_entry(stdout, format, next->binary, &next->ent);
		next->pending = false;
	}
}

static int follow(struct logdev *devs, int n, enum format format)
{
	struct pollfd pfd[NR_BUFFERS];
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		if (drain(devs, n, format))
			return 1;
		fflush(stdout);
		for (i = 0; i < n; i++) {
			pfd[i].fd = devs[i].fd;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "logcat: poll: %s\n", strerror(errno));
			return 1;
		}
		for (i = 0; i < n; i++) {
			if ((pfd[i].revents & (POLLERR | POLLHUP | POLLNVAL)) &&
			    !(pfd[i].revents & POLLIN)) {
				fprintf(stderr, "logcat: %s: poll error (revents 0x%x)\n",
					devs[i].path, pfd[i].revents);
				return 1;
			}
		}
	}
}

/* --- opening, cells, versions ---------------------------------------- */

static const char *open_hint(int err)
{
	switch (err) {
	case ENOENT:
	case ENXIO:
		return " (is cask_logger loaded?)";
	case ENODEV:
		return " (this process has no cask cell and auto_cells is 0)";
	}
	return "";
}

static int select_cell(const struct logdev *d, const struct options *o)
{
	struct cask_logger_select sel;

	memset(&sel, 0, sizeof(sel));
	if (o->all_cells)
		sel.flags = CASK_LOGGER_ALL_CELLS;
	else
		memcpy(sel.cell, o->cell, strlen(o->cell));
	if (!ioctl(d->fd, CASK_LOGGER_SELECT, &sel))
		return 0;
	switch (errno) {
	case EPERM:
	case EACCES:
		fprintf(stderr, "logcat: %s: %s needs CAP_SYSLOG on the host\n", d->path,
			o->all_cells ? "--all-cells" : "--cell");
		break;
	case ENOENT:
		fprintf(stderr, "logcat: no cell named %s\n", o->cell);
		break;
	case ENOTTY:
	case EINVAL:
		fprintf(stderr, "logcat: %s: CASK_LOGGER_SELECT: %s (not a cask_logger device?)\n",
			d->path, strerror(errno));
		break;
	default:
		fprintf(stderr, "logcat: %s: CASK_LOGGER_SELECT: %s\n", d->path,
			strerror(errno));
	}
	return -1;
}

/* Open @d with @flags and, for --cell or --all-cells, select the cell(s). */
static int open_dev(struct logdev *d, const struct options *o, int flags)
{
	d->fd = open(d->path, flags | O_CLOEXEC);
	if (d->fd < 0) {
		fprintf(stderr, "logcat: cannot open %s: %s%s\n", d->path, strerror(errno),
			open_hint(errno));
		return -1;
	}
	if ((o->cell || o->all_cells) && select_cell(d, o))
		return -1;
	return 0;
}

/*
 * Headers with the cell name for --cell and --all-cells; else version 2,
 * or version 1 if the device does not take LOGGER_SET_VERSION.
 */
static int set_version(struct logdev *d, const struct options *o)
{
	int v;

	if (o->cell || o->all_cells) {
		v = CASK_LOGGER_VERSION_CELL;
		if (ioctl(d->fd, LOGGER_SET_VERSION, &v)) {
			fprintf(stderr, "logcat: %s: cannot get entries with cell names: %s\n",
				d->path, strerror(errno));
			return -1;
		}
		d->version = v;
		return 0;
	}
	v = 2;
	d->version = ioctl(d->fd, LOGGER_SET_VERSION, &v) ? 1 : 2;
	return 0;
}

static void close_devs(struct logdev *devs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (devs[i].fd >= 0)
			close(devs[i].fd);
}

/* --- the modes ------------------------------------------------------- */

static int clear_logs(struct logdev *devs, int n, const struct options *o)
{
	/* CASK_LOGGER_SELECT needs a file opened for reading too. */
	int flags = o->cell ? O_RDWR : O_WRONLY;
	int i, status = 0;

	for (i = 0; i < n; i++) {
		if (open_dev(&devs[i], o, flags)) {
			status = 1;
			continue;
		}
		if (ioctl(devs[i].fd, LOGGER_FLUSH_LOG)) {
			fprintf(stderr, "logcat: cannot clear %s: %s%s\n", devs[i].path,
				strerror(errno),
				errno == EPERM ? " (needs CAP_SYSLOG or the device's group)" : "");
			status = 1;
		}
	}
	return status;
}

static int print_sizes(struct logdev *devs, int n, const struct options *o)
{
	int i, size, len, status = 0;
	struct logdev *d;

	for (i = 0; i < n; i++) {
		d = &devs[i];
		if (open_dev(d, o, O_RDONLY)) {
			status = 1;
			continue;
		}
		len = ioctl(d->fd, LOGGER_GET_LOG_LEN);
		if (len < 0) {
			fprintf(stderr, "logcat: %s: LOGGER_GET_LOG_LEN: %s\n", d->path,
				strerror(errno));
			status = 1;
			continue;
		}
		if (o->all_cells) {
			printf("%s: all cells, %d bytes unread\n", d->name, len);
			continue;
		}
		size = ioctl(d->fd, LOGGER_GET_LOG_BUF_SIZE);
		if (size < 0) {
			fprintf(stderr, "logcat: %s: LOGGER_GET_LOG_BUF_SIZE: %s\n", d->path,
				strerror(errno));
			status = 1;
			continue;
		}
		printf("%s: ring buffer is %d bytes (%d bytes unread), max entry is %db, "
		       "max payload is %db\n", d->name, size, len, LOGGER_ENTRY_MAX_LEN,
		       LOGGER_ENTRY_MAX_PAYLOAD);
	}
	return status;
}

/*
 * -b kernel: the records of /dev/cask/kmsg (or $LOGCAT_KMSG), one per
 * read(), as "prio,seq,usec,flags;text"; printed as dmesg prints them.
 */
static int read_kernel(const struct options *o)
{
	const char *path = getenv("LOGCAT_KMSG");
	struct logdev d = { .name = "kernel", .fd = -1 };
	unsigned long long usec;
	char buf[8192], *text;
	ssize_t n;
	int flags = O_RDONLY | (o->mode == MODE_DUMP ? O_NONBLOCK : 0);

	snprintf(d.path, sizeof(d.path), "%s", path && *path ? path : "/dev/cask/kmsg");
	if (open_dev(&d, o, flags))
		return 1;
	for (;;) {
		n = read(d.fd, buf, sizeof(buf) - 1);
		if (n < 0 && errno == EPIPE) {
			printf("--- records lost\n");
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			fprintf(stderr, "logcat: %s: %s\n", d.path, strerror(errno));
			close(d.fd);
			return 1;
		}
		buf[n] = '\0';
		text = strchr(buf, ';');
		if (!text || sscanf(buf, "%*u,%*u,%llu", &usec) != 1)
			continue;
		if (o->cell)
			printf("[%s] ", o->cell);
		printf("[%5llu.%06llu] %s", usec / 1000000, usec % 1000000, text + 1);
		if (o->mode == MODE_FOLLOW)
			fflush(stdout);
	}
	close(d.fd);
	return fflush(stdout) ? 1 : 0;
}

static int read_logs(struct logdev *devs, int n, const struct options *o)
{
	int i;

	for (i = 0; i < n; i++)
		if (open_dev(&devs[i], o, O_RDONLY | O_NONBLOCK) || set_version(&devs[i], o))
			return 1;
	if (o->mode == MODE_FOLLOW)
		return follow(devs, n, o->format);
	if (drain(devs, n, o->format))
		return 1;
	return fflush(stdout) ? 1 : 0;
}

/* --- self-check of the decoders (hidden option --selftest-format) ---- */

static size_t put_le32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
	return 4;
}

/* Build what read() returns for a header of @version and a payload. */
static size_t make_entry(unsigned char *buf, int version, uint16_t len_field, const char *cell,
			 const void *payload, size_t len)
{
	struct user_logger_entry_compat v1 = {
		.len = len_field, .pid = 123, .tid = 124, .sec = 86400 + 3723, .nsec = 456789000,
	};
	struct cask_logger_entry c = {
		.len = len_field, .hdr_size = sizeof(c), .pid = 123, .tid = 124,
		.sec = 86400 + 3723, .nsec = 456789000, .euid = 1000, .cell_id = 7,
	};
	struct logger_entry v2 = {
		.len = len_field, .hdr_size = sizeof(v2), .pid = 123, .tid = 124,
		.sec = 86400 + 3723, .nsec = 456789000, .euid = 1000,
	};
	size_t hdr;

	if (version == 1) {
		hdr = sizeof(v1);
		memcpy(buf, &v1, hdr);
	} else if (version == 2) {
		hdr = sizeof(v2);
		memcpy(buf, &v2, hdr);
	} else {
		snprintf(c.cell, sizeof(c.cell), "%s", cell);
		hdr = sizeof(c);
		memcpy(buf, &c, hdr);
	}
	memcpy(buf + hdr, payload, len);
	return hdr + len;
}

struct format_case {
	const char *what;
	int version;
	bool binary;
	enum format format;
	int len_field;		/* -1: the payload's length */
	struct {
		const char *p;
		size_t len;
	} payload;
	const char *expect;	/* the output, with '|' for each newline */
};

#define P(s)	{ (s), sizeof(s) - 1 }

static const struct format_case format_cases[] = {
	{ "brief", 2, false, FMT_BRIEF, -1, P("\4tag\0hello\0"),
	  "I/tag     (  123): hello|" },
	{ "threadtime", 2, false, FMT_THREADTIME, -1, P("\6MyTag\0boom\0"),
	  "01-02 01:02:03.456   123   124 E MyTag   : boom|" },
	{ "version 1", 1, false, FMT_BRIEF, -1, P("\3t\0v1\0"),
	  "D/t       (  123): v1|" },
	{ "lines", 2, false, FMT_BRIEF, -1, P("\5t\0a\n\nb\n\0"),
	  "W/t       (  123): a|W/t       (  123): |W/t       (  123): b|" },
	{ "no NULs", 2, false, FMT_BRIEF, -1, P("\7tagonly"),
	  "F/tagonly (  123): |" },
	{ "no message NUL", 2, false, FMT_BRIEF, -1, P("\2t\0msg"),
	  "V/t       (  123): msg|" },
	{ "empty", 2, false, FMT_BRIEF, -1, P(""),
	  "?/        (  123): |" },
	{ "bad priority", 2, false, FMT_BRIEF, -1, P("\11t\0m\0"),
	  "?/t       (  123): m|" },
	{ "len past read", 2, false, FMT_BRIEF, 4000, P("\10t\0silent"),
	  "S/t       (  123): silent|" },
	{ "cell", CASK_LOGGER_VERSION_CELL, false, FMT_BRIEF, -1, P("\4t\0hi\0"),
	  "[android0] I/t       (  123): hi|" },
	{ "cell lines", CASK_LOGGER_VERSION_CELL, false, FMT_THREADTIME, -1, P("\4t\0a\nb\0"),
	  "[android0] 01-02 01:02:03.456   123   124 I t       : a|"
	  "[android0] 01-02 01:02:03.456   123   124 I t       : b|" },
	{ "event int", 2, true, FMT_BRIEF, -1, P("\x39\x30\0\0\0\xff\xff\xff\xff"),
	  "I/12345   (  123): -1|" },
	{ "event long", 2, true, FMT_BRIEF, -1, P("\1\0\0\0\1\0\0\0\0\1\0\0\0"),
	  "I/1       (  123): 4294967296|" },
	{ "event string", 2, true, FMT_BRIEF, -1, P("\2\0\0\0\2\3\0\0\0abc"),
	  "I/2       (  123): abc|" },
	{ "event float", 2, true, FMT_BRIEF, -1, P("\3\0\0\0\4\0\0\xc0\x3f"),
	  "I/3       (  123): 1.500000|" },
	{ "event list", 2, true, FMT_BRIEF, -1,
	  P("\4\0\0\0\3\3\0\7\0\0\0\2\1\0\0\0x\3\2\0\1\0\0\0\0\2\0\0\0"),
	  "I/4       (  123): [7,x,[1,2]]|" },
	{ "event bad type", 2, true, FMT_BRIEF, -1, P("\5\0\0\0\11\1\2"),
	  "I/5       (  123): 09 01 02|" },
	{ "event short string", 2, true, FMT_BRIEF, -1, P("\6\0\0\0\2\xff\0\0\0ab"),
	  "I/6       (  123): 02 ff 00 00 00 61 62|" },
	{ "event trailing", 2, true, FMT_BRIEF, -1, P("\7\0\0\0\0\1\0\0\0\0"),
	  "I/7       (  123): 00 01 00 00 00 00|" },
	{ "event short list", 2, true, FMT_BRIEF, -1, P("\10\0\0\0\3\2\0\1\0\0\0"),
	  "I/8       (  123): 03 02 00 01 00 00 00|" },
	{ "event no tag", 2, true, FMT_BRIEF, -1, P("\1\2"),
	  "I/?       (  123): 01 02|" },
	{ "event tag only", 2, true, FMT_THREADTIME, -1, P("\xff\xff\xff\xff"),
	  "01-02 01:02:03.456   123   124 I 4294967295: |" },
};

static int run_format_case(const struct format_case *fc)
{
	unsigned char buf[LOGGER_ENTRY_MAX_LEN];
	char *out = NULL, *nl;
	struct entry e;
	size_t n, out_len;
	int len_field;
	FILE *f;
	bool ok;

	len_field = fc->len_field < 0 ? (int)fc->payload.len : fc->len_field;
	n = make_entry(buf, fc->version, len_field, "android0", fc->payload.p, fc->payload.len);
	f = open_memstream(&out, &out_len);
	if (!f || parse_entry(buf, n, fc->version, &e))
		return -1;
	print_entry(f, fc->format, fc->binary, &e);
	fclose(f);
	for (nl = strchr(out, '\n'); nl; nl = strchr(nl, '\n'))
		*nl = '|';
	ok = !strcmp(out, fc->expect);
	if (!ok)
		printf("selftest: %s: got \"%s\", expected \"%s\"\n", fc->what, out, fc->expect);
	free(out);
	return ok ? 0 : -1;
}

/* 0 if @ok, else print what failed and return 1. */
static int check(bool ok, const char *what)
{
	if (!ok)
		printf("selftest: not true: %s\n", what);
	return !ok;
}

static int selftest_format(void)
{
	unsigned char buf[LOGGER_ENTRY_MAX_LEN];
	struct logger_entry h = { .len = 1, .hdr_size = 8 };
	size_t i, failed = 0;
	struct entry e;

	setenv("TZ", "UTC0", 1);
	tzset();
	for (i = 0; i < ARRAY_SIZE(format_cases); i++)
		if (run_format_case(&format_cases[i]))
			failed++;

	/* Malformed headers: hdr_size too small, past the read, short reads. */
	memcpy(buf, &h, sizeof(h));
	failed += check(parse_entry(buf, sizeof(h) + 1, 2, &e), "hdr_size 8 rejected");
	h.hdr_size = 200;
	memcpy(buf, &h, sizeof(h));
	failed += check(parse_entry(buf, 100, 2, &e), "hdr_size past the read rejected");
	h.hdr_size = sizeof(h);
	memcpy(buf, &h, sizeof(h));
	failed += check(parse_entry(buf, 100, CASK_LOGGER_VERSION_CELL, &e),
			"short cell header rejected");
	failed += check(parse_entry(buf, 10, 1, &e), "short version 1 read rejected");
	failed += check(parse_entry(buf, 20, 2, &e), "short version 2 read rejected");
	put_le32(buf, 0);
	failed += check(!parse_entry(buf, 20, 1, &e) && !e.len, "empty version 1 entry read");

	printf("selftest-format: %s (%zu failed)\n", failed ? "FAIL" : "ok", failed);
	return failed ? 1 : 0;
}

/* --- options --------------------------------------------------------- */

/* Add the comma separated buffer names of @arg to @mask. */
static int parse_buffers(const char *arg, unsigned int *mask, bool *kernel)
{
	size_t n;
	int i;

	while (*arg) {
		n = strcspn(arg, ",");
		if (n == 6 && !strncmp(arg, "kernel", 6)) {
			*kernel = true;
		} else if (n == 3 && !strncmp(arg, "all", 3)) {
			*mask |= ALL_BUFFERS;
		} else if (n) {
			for (i = 0; i < NR_BUFFERS; i++)
				if (strlen(buffer_names[i]) == n &&
				    !strncmp(arg, buffer_names[i], n))
					break;
			if (i == NR_BUFFERS) {
				fprintf(stderr,
					"logcat: unknown buffer '%.*s' (main, events, radio, system, crash, all, kernel)\n",
					(int)n, arg);
				return -1;
			}
			*mask |= 1u << i;
		}
		arg += n;
		if (*arg == ',')
			arg++;
	}
	return 0;
}

enum { OPT_CELL = 256, OPT_ALL_CELLS, OPT_SELFTEST };

static const struct option long_options[] = {
	{ "cell", required_argument, NULL, OPT_CELL },
	{ "all-cells", no_argument, NULL, OPT_ALL_CELLS },
	{ "help", no_argument, NULL, 'h' },
	{ "selftest-format", no_argument, NULL, OPT_SELFTEST },
	{ NULL, 0, NULL, 0 }
};

/* Returns 0, 1 for --help, or -1 for a usage error. */
static int parse_options(int argc, char **argv, struct options *o)
{
	bool buffers_given = false;
	int c, actions = 0;

	o->buffers = DEFAULT_BUFFERS;
	o->mode = MODE_FOLLOW;
	o->format = FMT_THREADTIME;
	while ((c = getopt_long(argc, argv, "b:cdghv:", long_options, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (!buffers_given)
				o->buffers = 0;
			buffers_given = true;
			if (parse_buffers(optarg, &o->buffers, &o->kernel))
				return -1;
			break;
		case 'c':
			o->mode = MODE_CLEAR;
			actions++;
			break;
		case 'g':
			o->mode = MODE_SIZE;
			actions++;
			break;
		case 'd':
			if (o->mode == MODE_FOLLOW)
				o->mode = MODE_DUMP;
			break;
		case 'v':
			if (!strcmp(optarg, "brief")) {
				o->format = FMT_BRIEF;
			} else if (!strcmp(optarg, "threadtime")) {
				o->format = FMT_THREADTIME;
			} else {
				fprintf(stderr, "logcat: unknown format '%s' (brief, threadtime)\n",
					optarg);
				return -1;
			}
			break;
		case OPT_CELL:
			o->cell = optarg;
			break;
		case OPT_ALL_CELLS:
			o->all_cells = true;
			break;
		case OPT_SELFTEST:
			o->mode = MODE_SELFTEST;
			return 0;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "logcat: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (actions > 1) {
		fprintf(stderr, "logcat: -c and -g exclude each other\n");
		return -1;
	}
	if (o->kernel && (o->buffers || o->all_cells || o->mode == MODE_CLEAR ||
			  o->mode == MODE_SIZE)) {
		fprintf(stderr, "logcat: -b kernel is read alone, of one cell, without -c or -g\n");
		return -1;
	}
	if (!o->buffers && !o->kernel) {
		fprintf(stderr, "logcat: no buffer selected\n");
		return -1;
	}
	if (o->cell && o->all_cells) {
		fprintf(stderr, "logcat: --cell and --all-cells exclude each other\n");
		return -1;
	}
	if (o->cell && (!o->cell[0] || strlen(o->cell) > CASK_LOGGER_CELL_NAME_MAX)) {
		fprintf(stderr, "logcat: a cell name is 1-%d characters\n",
			CASK_LOGGER_CELL_NAME_MAX);
		return -1;
	}
	if (o->all_cells && o->mode == MODE_CLEAR) {
		fprintf(stderr, "logcat: -c clears one cell's rings: use --cell NAME\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct logdev *devs;
	int i, n, ret;

	ret = parse_options(argc, argv, &o);
	if (ret > 0) {
		print_usage(stdout);
		return 0;
	}
	if (ret < 0) {
		fprintf(stderr, "Try 'logcat --help'.\n");
		return 2;
	}
	if (o.mode == MODE_SELFTEST)
		return selftest_format();
	if (o.kernel)
		return read_kernel(&o);
	o.dev_dir = getenv("LOGCAT_DEV_DIR");
	if (!o.dev_dir || !o.dev_dir[0])
		o.dev_dir = default_dev_dir();

	devs = calloc(NR_BUFFERS, sizeof(*devs));
	if (!devs) {
		perror("logcat");
		return 1;
	}
	for (i = 0, n = 0; i < NR_BUFFERS; i++) {
		if (!(o.buffers & (1u << i)))
			continue;
		devs[n].name = buffer_names[i];
		devs[n].fd = -1;
		devs[n].binary = i == BUF_EVENTS;
		snprintf(devs[n].path, sizeof(devs[n].path), "%s/%s", o.dev_dir, buffer_names[i]);
		n++;
	}

	switch (o.mode) {
	case MODE_CLEAR:
		ret = clear_logs(devs, n, &o);
		break;
	case MODE_SIZE:
		ret = print_sizes(devs, n, &o);
		break;
	default:
		ret = read_logs(devs, n, &o);
	}
	close_devs(devs, n);
	free(devs);
	return ret;
}
