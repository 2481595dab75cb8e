/* Independent tasks in forked workers (tools/forks.h). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/atomic.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tools/forks.h"

typedef struct task {
	FILE *tmp;     /* the worker's result */
	pid_t pid;     /* 0: not started or reaped */
	int status;
	bool over;
} task;

static int start(const forks_ops *ops, void *ctx, task *t, size_t i)
{
	pid_t parent;
	if (!(t->tmp = tmpfile()))
		return SIM_EIO;
	if (ops->started)
		ops->started(ctx, i);
	fflush(NULL); /* nothing buffered is written twice */
	parent = getpid();
	t->pid = fork();
	if (t->pid < 0) {
		t->pid = 0;
		return SIM_EIO;
	}
	if (t->pid == 0) {
		atomic_worker_init(parent);
		cli_test_stop_at("DPUSIM_TEST_FORKS_STOP", "task", i); /* tools/forks.h */
		ops->work(ctx, i, t->tmp);
		fflush(NULL);
		_exit(ferror(t->tmp) ? 3 : 0);
	}
	return SIM_OK;
}

/* Waits for one of the running workers; its task index into *k. */
static int reap(task *t, size_t n, size_t *k)
{
	int status;
	pid_t pid = wait(&status);
	for (size_t i = 0; i < n; i++)
		if (t[i].pid && t[i].pid == pid) {
			t[i].pid = 0, t[i].status = status, t[i].over = true;
			*k = i;
			return SIM_OK;
		}
	return SIM_EIO;
}

int forks_run(size_t n, unsigned jobs, const forks_ops *ops, void *ctx)
{
	task *t = calloc(n ? n : 1, sizeof *t);
	size_t next = 0, merged = 0, running = 0;
	int rc = t ? SIM_OK : SIM_ENOMEM;
	if (!jobs)
		jobs = 1;
	while (!rc && merged < n) {
		size_t k = 0;
		if (next < n && running < jobs) {
			if (!(rc = start(ops, ctx, &t[next], next)))
				next++, running++;
			continue;
		}
		if ((rc = reap(t, n, &k)))
			break;
		running--;
		if (ops->ended) {
			rewind(t[k].tmp);
			ops->ended(ctx, k, t[k].tmp, t[k].status);
		}
		while (!rc && merged < n && t[merged].over) {
			rewind(t[merged].tmp);
			rc = ops->collect(ctx, merged, t[merged].tmp, t[merged].status);
			fclose(t[merged].tmp);
			t[merged].tmp = NULL;
			merged++;
		}
	}
	for (size_t i = 0; t && i < n; i++) { /* on failure: stop and reap the others */
		if (t[i].pid) {
			kill(t[i].pid, SIGTERM);
			waitpid(t[i].pid, NULL, 0);
		}
		if (t[i].tmp)
			fclose(t[i].tmp);
	}
	free(t);
	return rc;
}

const char *forks_status_text(int status, char *buf, size_t n)
{
	if (WIFSIGNALED(status))
		snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status))
		snprintf(buf, n, "exit status %d", WEXITSTATUS(status));
	else
		snprintf(buf, n, "wait status %d", status);
	return buf;
}
