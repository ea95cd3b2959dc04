/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Android logger devices (/dev/log/main, events, radio, system, crash) as
 * provided by cask_logger, one set of rings per cask cell.
 *
 * The Android ABI (entry versions 1 and 2, ioctls 0xAE01-0xAE06) is that of
 * the former staging logger driver. The cask extension at the end is used
 * only by host tools; an Android client never issues it and never sees it.
 */
#ifndef _UAPI_LINUX_ANDROID_LOGGER_H
#define _UAPI_LINUX_ANDROID_LOGGER_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * struct user_logger_entry_compat - entry header, version 1 (20 bytes)
 * @len: length of the payload
 * @__pad: zero
 * @pid: writer's thread group id, as seen in the reader's PID namespace
 * @tid: writer's thread id, likewise
 * @sec: CLOCK_REALTIME seconds of the write
 * @nsec: nanoseconds
 * @msg: the payload
 */
struct user_logger_entry_compat {
	__u16	len;
	__u16	__pad;
	__s32	pid;
	__s32	tid;
	__s32	sec;
	__s32	nsec;
	char	msg[];
};

/**
 * struct logger_entry - entry header, version 2 (24 bytes)
 * @len: length of the payload
 * @hdr_size: sizeof(struct logger_entry)
 * @pid: writer's thread group id, as seen in the reader's PID namespace
 * @tid: writer's thread id, likewise
 * @sec: CLOCK_REALTIME seconds of the write
 * @nsec: nanoseconds
 * @euid: writer's effective uid, as seen in the reader's user namespace
 * @msg: the payload
 */
struct logger_entry {
	__u16	len;
	__u16	hdr_size;
	__s32	pid;
	__s32	tid;
	__s32	sec;
	__s32	nsec;
	__u32	euid;
	char	msg[];
};

#define LOGGER_LOG_RADIO	"log_radio"
#define LOGGER_LOG_EVENTS	"log_events"
#define LOGGER_LOG_SYSTEM	"log_system"
#define LOGGER_LOG_MAIN		"log_main"
#define LOGGER_LOG_CRASH	"log_crash"

/* Longest payload; longer writes are truncated. */
#define LOGGER_ENTRY_MAX_PAYLOAD	4076
/* A read buffer this large always holds one entry. */
#define LOGGER_ENTRY_MAX_LEN		(5 * 1024)

#define __LOGGERIO	0xAE

#define LOGGER_GET_LOG_BUF_SIZE		_IO(__LOGGERIO, 1) /* ring size */
#define LOGGER_GET_LOG_LEN		_IO(__LOGGERIO, 2) /* unread bytes */
#define LOGGER_GET_NEXT_ENTRY_LEN	_IO(__LOGGERIO, 3) /* next entry, with header */
#define LOGGER_FLUSH_LOG		_IO(__LOGGERIO, 4) /* clear the ring read */
#define LOGGER_GET_VERSION		_IO(__LOGGERIO, 5) /* reader's entry version */
#define LOGGER_SET_VERSION		_IO(__LOGGERIO, 6) /* arg: int *, 1 or 2 */

/* --- cask extension: host readers only --------------------------------- */

/* Longest cell name, as in /sys/kernel/cask/cells/NAME. */
#define CASK_LOGGER_CELL_NAME_MAX	32

/**
 * struct cask_logger_entry - entry header, version CASK_LOGGER_VERSION_CELL
 * @len: length of the payload
 * @hdr_size: sizeof(struct cask_logger_entry)
 * @pid: writer's thread group id, as seen in the reader's PID namespace
 * @tid: writer's thread id, likewise
 * @sec: CLOCK_REALTIME seconds of the write
 * @nsec: nanoseconds
 * @euid: writer's effective uid, as seen in the reader's user namespace
 * @cell_id: id of the writer's cell (/sys/kernel/cask/cells/NAME/id)
 * @cell: NUL-terminated name of that cell
 * @__pad: zero
 * @msg: the payload
 */
struct cask_logger_entry {
	__u16	len;
	__u16	hdr_size;
	__s32	pid;
	__s32	tid;
	__s32	sec;
	__s32	nsec;
	__u32	euid;
	__u64	cell_id;
	char	cell[CASK_LOGGER_CELL_NAME_MAX + 1];
	char	__pad[7];
	char	msg[];
};

/* LOGGER_SET_VERSION value for struct cask_logger_entry headers. */
#define CASK_LOGGER_VERSION_CELL	0xCA5C

/**
 * struct cask_logger_select - which cell(s) a host reader reads
 * @flags: 0, or CASK_LOGGER_ALL_CELLS
 * @cell: with flags 0, NUL-terminated name of the cell to read
 * @__pad: must be zero, else EINVAL
 *
 * After CASK_LOGGER_SELECT the reader reads the chosen cell's ring (or every
 * cell's, merged in time order, cells made later joining at their next
 * read) from its oldest entry on. ioctls that act on one ring (size, length,
 * flush) act on the chosen cell; with CASK_LOGGER_ALL_CELLS,
 * GET_LOG_BUF_SIZE and FLUSH_LOG fail with EINVAL and GET_LOG_LEN is the sum
 * over the cells, capped at INT_MAX. Needs CAP_SYSLOG in the initial user
 * namespace when the file was opened (EPERM), a file opened for reading
 * (EBADF); ENOENT for an unknown cell, EINVAL for bad flags or a non-zero
 * @__pad.
 */
struct cask_logger_select {
	__u32	flags;
	char	cell[CASK_LOGGER_CELL_NAME_MAX + 1];
	char	__pad[3];
};

#define CASK_LOGGER_ALL_CELLS	0x1

#define CASK_LOGGER_SELECT	_IOW(__LOGGERIO, 0x80, struct cask_logger_select)

#endif /* _UAPI_LINUX_ANDROID_LOGGER_H */
