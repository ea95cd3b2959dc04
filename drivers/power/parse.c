// SPDX-License-Identifier: GPL-2.0
/*
 * cask_power's text: the parsing of what a cell writes to its files, and
 * the few pure helpers that write text (a host wakeup source's name, the
 * suspend_blockers file). Pure functions, which the KUnit suite checks:
 * no state, no lock, nothing kept between calls.
 *
 * The formats and the errors are those of the kernel's /sys/power files
 * (kernel/power/wakelock.c, kernel/power/main.c): a wake_lock write is
 * "name [timeout_ns]", a wake_unlock write a name, a state or autosleep
 * write a sleep state's name, a wakeup_count write a number. The rules
 * for what the lock table does with them are in lock.c.
 *
 * Locking: none; callable in any context that may read the caller's
 * buffer (cpower_ws_name() allocates, so may sleep).
 */
#include <linux/ctype.h>
#include <linux/kstrtox.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <kunit/visibility.h>

#include "power.h"

const char * const cpower_policy_names[CPOWER_NR_POLICIES] = {
	[CPOWER_FORWARD] = "forward",
	[CPOWER_CAP] = "cap",
	[CPOWER_DENY] = "deny",
};

/* As the kernel's /sys/power/state and autosleep spell them. */
const char * const cpower_state_names[CPOWER_NR_STATES] = {
	[CPOWER_STATE_ON] = "off",
	[CPOWER_STATE_FREEZE] = "freeze",
	[CPOWER_STATE_MEM] = "mem",
};

/**
 * cpower_parse_lock() - split a wake_lock write into a name and a timeout
 * @buf: what was written, NUL-terminated
 * @len: set to the length of the name at the start of @buf
 * @timeout_ns: set to the timeout, 0 for none
 *
 * The name runs up to the first white space; a number may follow after
 * white space, and a newline may end the write, as the kernel's wake_lock
 * takes them.
 *
 * Context: any.
 * Return: 0, -EINVAL (no name, a timeout that is not a decimal u64) or
 * -ENAMETOOLONG.
 */
int cpower_parse_lock(const char *buf, size_t *len, u64 *timeout_ns)
{
	const char *str = buf;

	*timeout_ns = 0;
	while (*str && !isspace(*str))
		str++;
	*len = str - buf;
	if (!*len)
		return -EINVAL;
	if (*str && *str != '\n' &&
	    kstrtou64(skip_spaces(str), 10, timeout_ns))
		return -EINVAL;
	if (*len > CPOWER_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_parse_lock);

/**
 * cpower_parse_unlock() - the name a wake_unlock write names
 * @buf: what was written, NUL-terminated
 * @len: set to the length of the name: all of @buf but a final newline
 *
 * Context: any.
 * Return: 0 or -EINVAL (empty, or longer than any lock can be: unknown).
 */
int cpower_parse_unlock(const char *buf, size_t *len)
{
	*len = strlen(buf);
	if (*len && buf[*len - 1] == '\n')
		(*len)--;
	if (!*len || *len > CPOWER_NAME_MAX)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_parse_unlock);

/**
 * cpower_parse_policy() - a policy by name
 * @buf: "forward", "cap" or "deny", a newline allowed
 *
 * Context: any.
 * Return: the &enum cpower_policy, or -EINVAL.
 */
int cpower_parse_policy(const char *buf)
{
	int i;

	for (i = 0; i < CPOWER_NR_POLICIES; i++)
		if (sysfs_streq(buf, cpower_policy_names[i]))
			return i;
	return -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_parse_policy);

/**
 * cpower_decode_state() - the sleep state a state or autosleep write names
 * @buf: what was written
 * @n: its length
 *
 * As the kernel decodes it: the text up to the first newline, exactly.
 *
 * Context: any.
 * Return: the state, CPOWER_STATE_ON if @buf names none we offer (all of
 * them on a kernel without CONFIG_SUSPEND).
 */
enum cpower_state cpower_decode_state(const char *buf, size_t n)
{
	const char *p = memchr(buf, '\n', n);
	size_t len = p ? p - buf : n;
	int s;

	if (!IS_ENABLED(CONFIG_SUSPEND))
		return CPOWER_STATE_ON;
	for (s = CPOWER_STATE_FREEZE; s < CPOWER_NR_STATES; s++)
		if (len == strlen(cpower_state_names[s]) &&
		    !strncmp(buf, cpower_state_names[s], len))
			return s;
	return CPOWER_STATE_ON;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_decode_state);

/**
 * cpower_parse_count() - the number a wakeup_count write holds
 * @buf: what was written, NUL-terminated
 * @count: set to the number
 *
 * As the kernel reads it (sscanf()'s "%u"): white space, then decimal
 * digits; whatever follows them is ignored.
 *
 * Context: any.
 * Return: 0, -EINVAL if there is no number, -ERANGE if it does not fit
 * an unsigned int (the kernel would truncate it; it cannot be a count
 * read from the file either way).
 */
int cpower_parse_count(const char *buf, unsigned int *count)
{
	char digits[12];
	size_t n = 0;

	buf = skip_spaces(buf);
	while (isdigit(buf[n]))
		n++;
	if (!n)
		return -EINVAL;
	if (n >= sizeof(digits))
		return -ERANGE;
	memcpy(digits, buf, n);
	digits[n] = '\0';
	return kstrtouint(digits, 10, count);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_parse_count);

/**
 * cpower_ws_name() - the host source name of a cell's lock
 * @cell: the cell's name ([a-z0-9_.-], no ':')
 * @lock: the lock's name as the cell wrote it (any bytes but whitespace)
 *
 * "cask:<cell>:<lock>", with every byte of @lock that is not printable
 * ASCII, or is ':', written as '?': the name reaches the host's terminals
 * (debugfs' wakeup_sources) and tools that split it at its colons.
 *
 * Context: any that may sleep.
 * Return: the name (kfree() it), or NULL without memory.
 */
char *cpower_ws_name(const char *cell, const char *lock)
{
	char *name, *c;

	name = kasprintf(GFP_KERNEL_ACCOUNT, "cask:%s:%s", cell, lock);
	if (!name)
		return NULL;
	for (c = name + strlen("cask:") + strlen(cell) + 1; *c; c++)
		if (!isascii(*c) || !isgraph(*c) || *c == ':')
			*c = '?';
	return name;
}
EXPORT_SYMBOL_IF_KUNIT(cpower_ws_name);

/**
 * cpower_emit_blockers() - the text of suspend_blockers
 * @buf: the sysfs page
 * @n: how many cells block
 * @names: their names, one a line; only the first @nlen bytes are
 *	written, the rest of the buffer may be anything
 * @nlen: the length of @names
 *
 * Context: any.
 * Return: bytes in @buf.
 */
ssize_t cpower_emit_blockers(char *buf, unsigned int n, const char *names,
			     int nlen)
{
	int len = sysfs_emit(buf, "%u\n", n);

	/* Only what was written: the buffer is not zeroed, nor ended if empty. */
	return len + scnprintf(buf + len, PAGE_SIZE - len, "%.*s", nlen, names);
}
EXPORT_SYMBOL_IF_KUNIT(cpower_emit_blockers);
