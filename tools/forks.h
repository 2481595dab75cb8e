/* Independent tasks in forked worker processes, at most `jobs` at once
 * (run --jobs, plan --jobs). A worker writes its result into a temporary
 * file the parent made before the fork; the parent reads the files in task
 * order, so what it builds from them does not depend on which worker
 * finished first. */
#ifndef DPUSIM_TOOLS_FORKS_H
#define DPUSIM_TOOLS_FORKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct forks_ops {
	/* In the parent, just before task i's worker is forked (NULL: none). */
	void (*started)(void *ctx, size_t i);
	/* In the worker: task i's result into out. The worker then exits,
	 * status 0, or 3 when out could not be written. */
	void (*work)(void *ctx, size_t i, FILE *out);
	/* In the parent as each worker ends, in any order: task i's file,
	 * rewound, and its wait status (NULL: none). */
	void (*ended)(void *ctx, size_t i, FILE *in, int status);
	/* In the parent, in task order: task i's file, rewound, and its wait
	 * status. 0, or a SIM_E* code that stops the run. */
	int (*collect)(void *ctx, size_t i, FILE *in, int status);
} forks_ops;

/* Runs tasks 0 .. n-1. 0, or the first collect's error, or SIM_EIO /
 * SIM_ENOMEM when a worker could not be started or waited for; on an
 * error the workers still running are stopped (SIGTERM: each removes its
 * own temporaries, none of its parent's) and reaped. A worker inherits the
 * parent's signal handlers and ends when its parent does
 * (atomic_worker_init). The test hook
 * DPUSIM_TEST_FORKS_STOP=N: task N's worker says "dpusim: test hook: process
 * PID stops at task N" on stderr and stops itself (SIGSTOP) before its
 * work, so tests/e2e/run-jobs.sh holds a worker at a known place. */
int forks_run(size_t n, unsigned jobs, const forks_ops *ops, void *ctx);

/* A worker's wait status in words, into buf (n bytes): "exit status 3",
 * "killed by signal 9 (Killed)". Returns buf. */
const char *forks_status_text(int status, char *buf, size_t n);

#endif
