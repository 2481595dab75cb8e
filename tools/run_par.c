/* `dpusim run --jobs N`: a scenario's variants simulated in forked worker
 * processes, their reports merged in variant order, so the report is the
 * one a run one variant after another writes (each variant builds its own
 * engine, fabric and random streams from the seed: they share nothing).
 *
 * A worker writes its result into a temporary file the parent made before
 * the fork: its status, its messages, then its one-variant report as JSON
 * (numbers with 17 significant digits, so reading them back is exact). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "sim/err.h"
#include "tools/cli.h"
#include "tools/forks.h"
#include "tools/human.h"
#include "tools/progress.h"
#include "tools/run.h"
#include "tools/sweep_eta.h"

/* The run: its tasks (job, variant) in order, the report they merge into,
 * and how long each took. */
typedef struct par_run {
	const scn_scenario *s;
	const run_opts *o;
	rep_report *rep;
	diag *d;
	sweep_eta eta;
	double t0;
} par_run;

static void task_of(const scn_scenario *s, size_t i, size_t *job, size_t *variant)
{
	*job = i / s->nvariants, *variant = i % s->nvariants;
}

/* In the worker: one variant into its own report, then the result. */
static void work(void *ctx, size_t i, FILE *out)
{
	const par_run *pr = ctx;
	const scn_scenario *s = pr->s, *vs;
	const scn_variant *vv;
	rep_report *rep = rep_new(REP_SIM);
	diag *d = diag_new();
	size_t job, variant;
	int rc = rep && d ? SIM_OK : SIM_ENOMEM;
	task_of(s, i, &job, &variant);
	if (!rc) /* what the reader needs; the parent's report has its own */
		rc = rep_set_scenario(rep, &(rep_scenario){ .name = s->name, .file = s->file });
	if (!rc) {
		scn_variant_view(s, variant, &vs, &vv);
		progress_parts(s->njobs * s->nvariants, "variant", true); /* "(variant K/N)", its own time left */
		progress_worker();
		progress_part(i);
		rc = run_one_variant(vs, &vs->jobs[job], vv, pr->o, rep, d);
	}
	fprintf(out, "%d %zu\n", rc, d ? diag_count(d) : 0);
	for (size_t k = 0; d && k < diag_count(d); k++)
		fprintf(out, "%zu\n%s", strlen(diag_msg(d, k)), diag_msg(d, k));
	if (!rc)
		rep_write_json(rep, out);
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
static int collect(void *ctx, size_t i, FILE *in, int status)
{
	par_run *pr = ctx;
	rep_report *rep = pr->rep, *w = NULL;
	diag *d = pr->d;
	int rc = SIM_EIO, wrc;
	size_t nmsg, len;
	char err[256];
	(void)i;
	if (!WIFEXITED(status) || WEXITSTATUS(status) || fscanf(in, "%d %zu\n", &wrc, &nmsg) != 2)
		goto out;
	for (size_t k = 0; k < nmsg; k++) {
		char *m;
		if (fscanf(in, "%zu\n", &len) != 1 || !(m = malloc(len + 1)))
			goto out;
		m[fread(m, 1, len, in)] = '\0';
		diag_add(d, NULL, 0, 0, "%s", m);
		free(m);
	}
	if ((rc = wrc))
		goto out;
	if ((rc = rep_read_stream(in, "(run worker)", &w, err, sizeof err)) && rc != SIM_ENOMEM)
		rc = SIM_EIO;
	if (rc == SIM_EIO)
		diag_add(d, NULL, 0, 0, "run --jobs: a worker's report does not read back: %s", err);
	else
		rc = copy_variant(rep, w);
out:
	if (rc == SIM_EIO && !diag_count(d))
		diag_add(d, NULL, 0, 0, "run --jobs: a worker process failed (%s)",
			 forks_status_text(status, err, sizeof err));
	rep_free(w);
	return rc;
}

static void started(void *ctx, size_t i)
{
	par_run *pr = ctx;
	sweep_eta_start(&pr->eta, i, cli_wall_s());
}

/* When a line is due, variant k's end: its wall time, the run's, and the
 * time left (tools/sweep_eta.h: variants of equal work, o->jobs at once;
 * a worker says its own variant's). */
static void ended(void *ctx, size_t k, FILE *in, int status)
{
	par_run *pr = ctx;
	const sweep_eta *eta = &pr->eta;
	char took[32], el[128];
	double now = cli_wall_s();
	size_t done = 0;
	const scn_scenario *vs;
	const scn_variant *vv;
	sweep_eta_end(&pr->eta, k, now, true);
	(void)in, (void)status;
	if (!progress_due())
		return;
	for (size_t i = 0; i < eta->n; i++)
		done += eta->over[i];
	scn_variant_view(pr->s, k % pr->s->nvariants, &vs, &vv);
	sweep_eta_text(eta, now - pr->t0, now, el, sizeof el);
	progress_say("run: variant %zu/%zu (%s) done in %s; %zu/%zu done, %s", k + 1, eta->n,
		     vv->name, hum_duration(took, sizeof took, eta->took_s[k]), done, eta->n, el);
}

int run_variants_jobs(const scn_scenario *s, const run_opts *o, rep_report *rep, diag *d)
{
	size_t n = s->njobs * s->nvariants;
	par_run pr = { .s = s, .o = o, .rep = rep, .d = d, .t0 = cli_wall_s() };
	const forks_ops ops = { .started = started, .work = work, .ended = ended,
				.collect = collect };
	int rc = sweep_eta_init(&pr.eta, n, (unsigned)o->jobs);
	for (size_t i = 0; !rc && i < n; i++)
		pr.eta.work[i] = 1;
	if (!rc)
		rc = forks_run(n, (unsigned)o->jobs, &ops, &pr);
	sweep_eta_free(&pr.eta);
	return rc;
}
