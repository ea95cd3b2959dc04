/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection for cask's selftests: /proc/thread-self/fail-nth with
 * failslab and fail_page_alloc, shared by fault_test and binder_cell_test.
 * Include after kselftest_harness.h (ARRAY_SIZE).
 */
#ifndef CASK_FAULT_H
#define CASK_FAULT_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cask_util.h"

#define FAULT_DIR	"/sys/kernel/debug"
#define MAX_NTH		1000

static inline const char *fault_missing(void)
{
	if (cask_missing())
		return cask_missing();
	if (access(FAULT_DIR "/failslab/ignore-gfp-wait", W_OK) ||
	    access("/proc/thread-self/fail-nth", W_OK))
		return "needs CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS";
	return NULL;
}

/* Make sleeping allocations, and order-0 pages, eligible to fail. */
static inline int fault_setup(void)
{
	static const char *const settings[][2] = {
		{ FAULT_DIR "/failslab/ignore-gfp-wait", "N" },
		{ FAULT_DIR "/failslab/verbose", "0" },
		{ FAULT_DIR "/fail_page_alloc/ignore-gfp-wait", "N" },
		{ FAULT_DIR "/fail_page_alloc/ignore-gfp-highmem", "N" },
		{ FAULT_DIR "/fail_page_alloc/min-order", "0" },
		{ FAULT_DIR "/fail_page_alloc/verbose", "0" },
	};
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(settings); i++) {
		ret = write_file(settings[i][0], settings[i][1]);
		if (ret)
			return ret;
	}
	return 0;
}

static inline int fail_nth_fd(void)
{
	return open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
}

static inline void fail_nth_set(int fd, int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", n);

	if (pwrite(fd, buf, len, 0) != len)
		abort();
}

/* Whether the armed failure was not reached: the operation is done. */
static inline bool fail_nth_unused(int fd)
{
	char buf[16] = "";

	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		abort();
	return atoi(buf) != 0;
}

#endif /* CASK_FAULT_H */
