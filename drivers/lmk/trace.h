/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The low-memory killer's tracepoints, in tracefs as
 * events/lowmemorykiller/: lmk_kill, one per kill; lmk_reap, one per
 * attempt of the reaper to free a victim's memory.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM lowmemorykiller

#if !defined(_LMK_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _LMK_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(lmk_kill,
	    TP_PROTO(const char *cell, pid_t pid, const char *comm, short adj,
		     unsigned long rss, short min_adj, u64 reaction_us),
	    TP_ARGS(cell, pid, comm, adj, rss, min_adj, reaction_us),
	    TP_STRUCT__entry(__string(cell, cell)
			     __field(pid_t, pid)
			     __array(char, comm, TASK_COMM_LEN)
			     __field(short, adj)
			     __field(unsigned long, rss)
			     __field(short, min_adj)
			     __field(u64, reaction_us)),
	    TP_fast_assign(__assign_str(cell);
			   __entry->pid = pid;
			   strscpy(__entry->comm, comm, TASK_COMM_LEN);
			   __entry->adj = adj;
			   __entry->rss = rss;
			   __entry->min_adj = min_adj;
			   __entry->reaction_us = reaction_us;),
	    TP_printk("cell=%s pid=%d comm=%s adj=%d rss=%lu level_adj=%d reaction_us=%llu",
		      __get_str(cell), __entry->pid, __entry->comm,
		      __entry->adj, __entry->rss, __entry->min_adj,
		      __entry->reaction_us)
);

/*
 * @ret: oom_mrelease_task()'s, or -EAGAIN when the attempt gave up on the
 * victim's mmap_lock; @queued_us: from the kill's request to the start of
 * this attempt; @took_us: the attempt.
 */
TRACE_EVENT(lmk_reap,
	    TP_PROTO(pid_t pid, int ret, u64 queued_us, u64 took_us),
	    TP_ARGS(pid, ret, queued_us, took_us),
	    TP_STRUCT__entry(__field(pid_t, pid)
			     __field(int, ret)
			     __field(u64, queued_us)
			     __field(u64, took_us)),
	    TP_fast_assign(__entry->pid = pid;
			   __entry->ret = ret;
			   __entry->queued_us = queued_us;
			   __entry->took_us = took_us;),
	    TP_printk("pid=%d ret=%d queued_us=%llu took_us=%llu",
		      __entry->pid, __entry->ret, __entry->queued_us,
		      __entry->took_us)
);

#endif /* _LMK_TRACE_H */

/* A module's trace header is found by its directory (Kbuild adds it). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
