/* `dpusim run --jobs N`: a scenario's variants simulated in forked worker
 * processes, their reports merged in variant order, so the report is the
 * one a run one variant after another writes (each variant builds its own
 * engine, fabric and random streams from the seed: they share nothing).
 *
 * A worker writes its result into a temporary file the parent made before
 * the fork: its status, its messages, then its one-variant report as JSON
 * (numbers with 17 significant digits, so reading them back is exact). */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/err.h"
#include "tools/cli.h"
#include "tools/human.h"
#include "tools/progress.h"
#include "tools/run.h"
#include "tools/sweep_eta.h"

typedef struct task {
	size_t job, variant;
	FILE *tmp;     /* the worker's result */
	pid_t pid;     /* 0: not started or reaped */
} task;

/* In the worker: one variant into its own report, then the result. */
static void work(const scn_scenario *s, const run_opts *o, const task *t)
{
	const scn_scenario *vs;
	const scn_variant *vv;
	rep_report *rep = rep_new(REP_SIM);
	diag *d = diag_new();
	int rc = rep && d ? SIM_OK : SIM_ENOMEM;
	if (!rc) /* what the reader needs; the parent's report has its own */
		rc = rep_set_scenario(rep, &(rep_scenario){ .name = s->name, .file = s->file });
	if (!rc) {
		scn_variant_view(s, t->variant, &vs, &vv);
		progress_parts(s->njobs * s->nvariants, "variant", true); /* "(variant K/N)", its own time left */
		progress_worker();
		progress_part(t->job * s->nvariants + t->variant);
		rc = run_one_variant(vs, &vs->jobs[t->job], vv, o, rep, d);
	}
	fprintf(t->tmp, "%d %zu\n", rc, d ? diag_count(d) : 0);
	for (size_t i = 0; d && i < diag_count(d); i++)
		fprintf(t->tmp, "%zu\n%s", strlen(diag_msg(d, i)), diag_msg(d, i));
	if (!rc)
		rep_write_json(rep, t->tmp);
	fflush(NULL);
	_exit(ferror(t->tmp) ? 3 : 0);
}

static int start(const scn_scenario *s, const run_opts *o, task *t)
{
	if (!(t->tmp = tmpfile()))
		return SIM_EIO;
	fflush(NULL); /* nothing buffered is written twice */
	t->pid = fork();
	if (t->pid < 0) {
		t->pid = 0;
		return SIM_EIO;
	}
	if (t->pid == 0)
		work(s, o, t);
	return SIM_OK;
}

/* Every variant of the worker's report (one), and the report's info, into
 * rep as the worker made them. */
static int copy_variant(rep_report *rep, const rep_report *w)
{
	int rc = 0;
	for (size_t i = 0; i < rep_ninfo(w) && !rc; i++) {
		const char *k, *v;
		rep_info_at(w, i, &k, &v);
		rc = rep_set_info(rep, k, v);
	}
	for (size_t i = 0; i < rep_nvariants(w) && !rc; i++) {
		const rep_variant *src = rep_variant_at(w, i);
		rep_variant *dst = rep_add_variant(rep, rep_variant_name(src));
		rc = dst ? rep_variant_copy(dst, src) : SIM_ENOMEM;
	}
	return rc;
}

/* Reads a finished worker's file: its messages into d, its report into
 * rep. Returns the worker's status, or SIM_EIO for a file it did not
 * finish. */
static int collect(rep_report *rep, task *t, int status, diag *d)
{
	int rc = SIM_EIO, wrc;
	size_t nmsg, len;
	char *text = NULL, err[256];
	long at, end;
	rep_report *w = NULL;
	rewind(t->tmp);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || fscanf(t->tmp, "%d %zu\n", &wrc, &nmsg) != 2)
		goto out;
	for (size_t i = 0; i < nmsg; i++) {
		char *m;
		if (fscanf(t->tmp, "%zu\n", &len) != 1 || !(m = malloc(len + 1)))
			goto out;
		m[fread(m, 1, len, t->tmp)] = '\0';
		diag_add(d, NULL, 0, 0, "%s", m);
		free(m);
	}
	if ((rc = wrc))
		goto out;
	at = ftell(t->tmp);
	fseek(t->tmp, 0, SEEK_END);
	end = ftell(t->tmp);
	fseek(t->tmp, at, SEEK_SET);
	rc = SIM_ENOMEM;
	if (at < 0 || end < at || !(text = malloc((size_t)(end - at) + 1)))
		goto out;
	len = fread(text, 1, (size_t)(end - at), t->tmp);
	rc = rep_read_string("(run worker)", text, len, &w, err, sizeof err) ? SIM_EIO : SIM_OK;
	if (rc)
		diag_add(d, NULL, 0, 0, "run --jobs: a worker's report does not read back: %s", err);
	else
		rc = copy_variant(rep, w);
out:
	if (rc == SIM_EIO && !diag_count(d))
		diag_add(d, NULL, 0, 0, "run --jobs: a worker process failed (status %d)", status);
	rep_free(w);
	free(text);
	fclose(t->tmp);
	t->tmp = NULL;
	return rc;
}

/* Waits for one of the running workers; its task index into *k. */
static int reap(task *t, size_t n, size_t *k, int *status)
{
	pid_t pid = wait(status);
	for (size_t i = 0; i < n; i++)
		if (t[i].pid && t[i].pid == pid) {
			t[i].pid = 0;
			*k = i;
			return SIM_OK;
		}
	return SIM_EIO;
}

/* When a line is due, variant k's end: its wall time, the run's, and the
 * time left (tools/sweep_eta.h: variants of equal work, o->jobs at once;
 * a worker says its own variant's). */
static void say_done(const scn_scenario *s, const sweep_eta *eta, double t0, size_t k)
{
	char took[32], el[128];
	double now = cli_wall_s();
	size_t done = 0;
	const scn_scenario *vs;
	const scn_variant *vv;
	if (!progress_due())
		return;
	for (size_t i = 0; i < eta->n; i++)
		done += eta->over[i];
	scn_variant_view(s, k % s->nvariants, &vs, &vv);
	sweep_eta_text(eta, now - t0, now, el, sizeof el);
	progress_say("run: variant %zu/%zu (%s) done in %s; %zu/%zu done, %s", k + 1, eta->n,
		     vv->name, hum_duration(took, sizeof took, eta->took_s[k]), done, eta->n, el);
}

/* Starts workers as slots free up, and merges finished ones in order
 * (a finished one waits for those before it); eta says which have
 * finished, and when each began and took. */
static int drive(const scn_scenario *s, const run_opts *o, task *t, size_t n, rep_report *rep,
		 diag *d)
{
	int *st = calloc(n, sizeof *st), rc = st ? SIM_OK : SIM_ENOMEM;
	size_t next = 0, merged = 0, running = 0;
	double t0 = cli_wall_s();
	sweep_eta eta = { 0 };
	if (!rc && (rc = sweep_eta_init(&eta, n, (unsigned)o->jobs)) == SIM_OK)
		for (size_t i = 0; i < n; i++)
			eta.work[i] = 1;
	while (!rc && merged < n) {
		size_t k = 0;
		if (next < n && running < (size_t)o->jobs) {
			sweep_eta_start(&eta, next, cli_wall_s());
			if (!(rc = start(s, o, &t[next])))
				next++, running++;
			continue;
		}
		if ((rc = reap(t, n, &k, &st[k])))
			break;
		running--;
		sweep_eta_end(&eta, k, cli_wall_s(), true);
		say_done(s, &eta, t0, k);
		while (!rc && merged < n && eta.over[merged])
			rc = collect(rep, &t[merged], st[merged], d), merged++;
	}
	for (size_t i = 0; i < n; i++) { /* on failure: stop and reap the others */
		if (t[i].pid) {
			kill(t[i].pid, SIGTERM);
			waitpid(t[i].pid, NULL, 0);
		}
		if (t[i].tmp)
			fclose(t[i].tmp);
	}
	free(st);
	sweep_eta_free(&eta);
	return rc;
}

int run_variants_jobs(const scn_scenario *s, const run_opts *o, rep_report *rep, diag *d)
{
	size_t n = s->njobs * s->nvariants;
	task *t = calloc(n ? n : 1, sizeof *t);
	int rc;
	if (!t)
		return SIM_ENOMEM;
	for (size_t i = 0; i < n; i++)
		t[i] = (task){ .job = i / s->nvariants, .variant = i % s->nvariants };
	rc = drive(s, o, t, n, rep, d);
	free(t);
	return rc;
}
