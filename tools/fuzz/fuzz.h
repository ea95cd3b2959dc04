/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cask-fuzz: structure-aware generators for cask's devices.
 *
 * A run executes sequences; each sequence is a short program of
 * operations on one driver, generated from a 64-bit seed alone, so that
 * "cask-fuzz -s SEED -n 1 -v DRIVER" runs (and prints) exactly the same
 * operations again. A generator never decides what to do from what the
 * kernel answered: it picks abstract slots ("the 2nd handle a reply gave
 * us", "region 3") that the executor resolves, so the same seed is the
 * same program on every kernel.
 *
 * With KCOV (the debug-cov kernel), the framework counts the edges of
 * cask's modules each sequence reaches, keeps the seeds that found new
 * ones, and derives later sequences from them: the first part of a kept
 * sequence, then fresh choices from a given operation on. Such a
 * sequence is named SEED:MUT:AT and reproduces the same way.
 *
 * Before each sequence, its name goes to QEMU's debug console (I/O port
 * 0xe9, -debugcon in tools/qemu/run-qemu.sh) when the port can be
 * reached: a guest that panics or hangs in the middle of a sequence
 * still leaves the sequence's name on the host.
 */
#ifndef CASK_FUZZ_H
#define CASK_FUZZ_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#ifndef BIT
#define BIT(nr)		(1UL << (nr))
#endif

/* The identity of one sequence (see above). */
struct fz_id {
	uint64_t seed;
	uint64_t mut;		/* 0: not derived */
	unsigned int at;	/* operation index where mut takes over */
};

struct fz {
	struct fz_id id;
	uint64_t state;		/* the current random stream */
	unsigned int op;	/* operations begun in this sequence */
	unsigned int max_ops;	/* -o: at most this many operations */
	bool verbose;		/* -v: print every operation */
	void *priv;		/* the driver's run-long state */
	char fail[256];		/* fz_fail()'s message */
};

/*
 * One driver's generator.
 * @setup:    once per run, before the first sequence (workers, cells);
 *            returns 0, or -1 with fz_fail() to skip the driver (its
 *            module is not loaded: a failure of the run).
 * @sequence: one sequence: begins each operation with fz_next(), which
 *            returns false when the sequence is over. Returns 0, or -1
 *            with fz_fail() when the kernel broke a rule it must keep
 *            (an answer Android's original never gives, a lost wakeup
 *            caught by a timeout, memory that changed under a pin).
 * @teardown: once per run; must leave nothing behind (cells, workers).
 */
struct fz_driver {
	const char *name;
	const char *help;	/* one line: what the generator covers */
	int (*setup)(struct fz *fz);
	int (*sequence)(struct fz *fz);
	void (*teardown)(struct fz *fz);
	struct fz_driver *next;
};

void fz_register(struct fz_driver *drv);
#define FZ_DRIVER(var)							\
	static void __attribute__((constructor)) fz_register_##var(void)	\
	{ fz_register(&(var)); }

/* Random choices of the current sequence. */
uint64_t fz_rand(struct fz *fz);
/* Uniform in [0, n); n > 0. */
uint64_t fz_below(struct fz *fz, uint64_t n);
/* True with probability num/den. */
bool fz_chance(struct fz *fz, unsigned int num, unsigned int den);
/*
 * A size or count biased toward the edges that break code: 0, 1, powers
 * of two and their neighbours, the maximum, and uniform values below max.
 */
uint64_t fz_size(struct fz *fz, uint64_t max);
/* An index into weights[0..n): picked with the given relative weights. */
unsigned int fz_pick(struct fz *fz, const unsigned int *weights, unsigned int n);

/*
 * Begin the next operation: false once the sequence has its operations
 * (the generator decides the length with fz_below() at its start and
 * passes it here), or at -o's limit. Switches to the derived stream at
 * the derived sequence's operation.
 */
bool fz_next(struct fz *fz, unsigned int len);

/* printf() of one operation when -v is given (the reproducer's trace). */
void fz_trace(struct fz *fz, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Record why the sequence failed; returns -1. */
int fz_fail(struct fz *fz, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * KCOV around code that runs in another process or thread of the driver
 * (binder's workers): fz_cov_thread_start() once in that thread; its
 * edges land in the run's shared edge map at fz_cov_collect(). The main
 * thread's are collected by the framework after each sequence.
 */
void fz_cov_thread_start(void);
void fz_cov_collect(void);

/* Name of a sequence as "SEED" or "SEED:MUT:AT" (static buffer). */
const char *fz_name(const struct fz_id *id);

#endif
