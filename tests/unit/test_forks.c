/* tools/forks: independent tasks in forked workers, read back in task
 * order whatever order they end in; a worker's end said in words. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report/atomic.h"
#include "sim/err.h"
#include "tools/forks.h"
#include "tests/unit/check_main.h"

enum { NTASKS = 4 };

typedef struct seen {
	size_t collected[NTASKS], ncollected;
	int ended[NTASKS], nended;
	int status[NTASKS];
	int kill_task;          /* the task whose worker kills itself; -1: none */
	long sleep_ms[NTASKS];  /* how long each task's worker sleeps first */
	const char *chain;      /* non-NULL: a folder of marks, one for each task
				   the parent has reaped, that the workers wait for */
} seen;

/* Task 2 ends at once; tasks 0 and 1 wait (at most 20 s) until the parent
 * has reaped task i + 1 (its mark in dir, made in ended), task 3 until it
 * has reaped task 0: they end in the order 2, 1, 0, 3, whatever the load. */
static void chained(const char *dir, size_t i)
{
	char mark[256];
	struct timespec ts = { 0, 1000000L };
	snprintf(mark, sizeof mark, "%s/%zu", dir, i == 3 ? 0 : i + 1);
	for (int k = 0; i != 2 && k < 20000 && access(mark, F_OK); k++)
		nanosleep(&ts, NULL);
}

static void work(void *ctx, size_t i, FILE *out)
{
	const seen *s = ctx;
	struct timespec ts = { s->sleep_ms[i] / 1000, s->sleep_ms[i] % 1000 * 1000000L };
	nanosleep(&ts, NULL);
	if (s->chain)
		chained(s->chain, i);
	if ((int)i == s->kill_task)
		raise(SIGKILL);
	fprintf(out, "task %zu\n", i);
}

static void ended(void *ctx, size_t i, FILE *in, int status)
{
	seen *s = ctx;
	(void)in;
	s->ended[s->nended++] = (int)i;
	s->status[i] = status;
	if (s->chain) {
		char mark[256];
		snprintf(mark, sizeof mark, "%s/%zu", s->chain, i);
		fclose(fopen(mark, "w"));
	}
}

static int collect(void *ctx, size_t i, FILE *in, int status)
{
	seen *s = ctx;
	size_t got;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return SIM_EIO;
	ck_assert_int_eq(fscanf(in, "task %zu", &got), 1);
	ck_assert_uint_eq(got, i);
	s->collected[s->ncollected++] = i;
	return SIM_OK;
}

static const forks_ops ops = { .work = work, .ended = ended, .collect = collect };

/* Tasks 0-2 run at once, 3 in the first slot free; they end in the
 * order 2, 1, 0, 3 (chained) and are collected 0, 1, 2, 3 all the same. */
START_TEST(collected_in_task_order)
{
	char dir[] = "/tmp/dpusim-test-forks-XXXXXX";
	seen s = { .kill_task = -1, .chain = mkdtemp(dir) };
	int rc, gone;
	ck_assert_ptr_nonnull(s.chain);
	rc = forks_run(NTASKS, 3, &ops, &s);
	for (int k = 0; k < NTASKS; k++) { /* the marks go first, whatever follows */
		char mark[64];
		snprintf(mark, sizeof mark, "%s/%d", dir, k);
		unlink(mark);
	}
	gone = rmdir(dir);
	ck_assert_int_eq(rc, SIM_OK);
	ck_assert_int_eq(gone, 0);
	ck_assert_uint_eq(s.ncollected, NTASKS);
	for (size_t i = 0; i < NTASKS; i++)
		ck_assert_uint_eq(s.collected[i], i);
	ck_assert_int_eq(s.nended, NTASKS);
	ck_assert_int_eq(s.ended[0], 2);
	ck_assert_int_eq(s.ended[1], 1);
	ck_assert_int_eq(s.ended[2], 0);
	ck_assert_int_eq(s.ended[3], 3);
}
END_TEST

START_TEST(a_killed_worker_stops_the_run)
{
	char buf[64];
	seen s = { .kill_task = 1, .sleep_ms = { 120, 90, 60, 30 } };
	/* The run stops the worker still running with SIGTERM, and a worker
	 * inherits this process's handlers: Check's answers SIGTERM by ending
	 * its whole process group, this test with it, so the default here. */
	signal(SIGTERM, SIG_DFL);
	ck_assert_int_eq(forks_run(NTASKS, 2, &ops, &s), SIM_EIO);
	ck_assert_uint_eq(s.ncollected, 1); /* task 0's, then task 1 failed */
	ck_assert(WIFSIGNALED(s.status[1]));
	ck_assert_str_eq(forks_status_text(s.status[1], buf, sizeof buf),
			 "killed by signal 9 (Killed)");
	/* every worker was reaped: none is left to wait for */
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
}
END_TEST

/* A worker stopped because another failed removes none of the
 * temporaries its parent registered (a worker inherits the registry and
 * the handler that empties it on SIGTERM): task 1 dies, task 2 sleeps 10 s
 * and is stopped, the parent's temporary is still there. */
START_TEST(a_stopped_worker_leaves_the_parents_temporaries)
{
	char tmp[] = "/tmp/dpusim-test-forks-XXXXXX";
	seen s = { .kill_task = 1, .sleep_ms = { 100, 50, 10000, 0 } };
	int fd;
	signal(SIGTERM, SIG_DFL); /* not Check's (above); atomic's then */
	ck_assert_int_ge(fd = mkstemp(tmp), 0);
	close(fd);
	ck_assert_int_eq(atomic_temp_register(tmp, false), 0);
	ck_assert_int_eq(forks_run(NTASKS, 2, &ops, &s), SIM_EIO);
	ck_assert_int_eq(s.nended, 2); /* tasks 0 and 1; 2 was stopped, 3 never ran */
	ck_assert_int_eq(access(tmp, F_OK), 0);
	atomic_temp_drop(tmp);
	ck_assert_int_ne(access(tmp, F_OK), 0);
}
END_TEST

START_TEST(status_in_words)
{
	char buf[64];
	ck_assert_str_eq(forks_status_text(3 << 8, buf, sizeof buf), "exit status 3");
	ck_assert_str_eq(forks_status_text(0, buf, sizeof buf), "exit status 0");
	ck_assert_str_eq(forks_status_text(SIGTERM, buf, sizeof buf),
			 "killed by signal 15 (Terminated)");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("forks");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, collected_in_task_order);
	tcase_add_test(tc, a_killed_worker_stops_the_run);
	tcase_add_test(tc, a_stopped_worker_leaves_the_parents_temporaries);
	tcase_add_test(tc, status_in_words);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN_FORKED(suite)
