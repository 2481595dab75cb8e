/* dpusim validate: predictions against published measurements. Each case of
 * the shipped tests/validation/cases.yaml (found by datadir_path, so an
 * installed or out-of-tree binary runs them too) runs a scenario and compares one figure with
 * its published value; the table shows the error, exit 1 when a case is
 * outside its tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/datadir.h"
#include "models/diag.h"
#include "models/scenario.h"
#include "models/units.h"
#include "models/ytree.h"
#include "report/report.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/run.h"

typedef struct vcase {
	const char *name, *scenario, *variant, *metric, *group, *source;
	double published, tolerance;
	double per;   /* the published figure is per one of `per` (per NIC): the prediction over it */
	const yt_node *at;
} vcase;

static const char *const case_keys[] = { "name", "scenario", "variant", "metric", "published",
					  "tolerance", "group", "source", "per" };
#define NCASE_KEYS (sizeof case_keys / sizeof *case_keys)

static const char *field(const yt_node *m, const char *key, const char *file, diag *d)
{
	const yt_node *n = yt_get(m, key);
	if (!n || n->type != YT_SCALAR) {
		const yt_node *at = n ? n : m;
		diag_add(d, file, at->line, at->col, "validation case needs '%s' (text)", key);
		return NULL;
	}
	return n->text;
}

/* A misspelt key ('pre: 8' for 'per') would otherwise be ignored and the
 * case compared with the wrong figure. */
static void only_case_keys(const yt_node *m, const char *file, diag *d)
{
	for (size_t i = 0; i < m->nkids; i++) {
		const yt_node *k = m->kids[i];
		const char *best;
		bool known = false;
		for (size_t j = 0; j < NCASE_KEYS && !known; j++)
			known = !strcmp(k->key, case_keys[j]);
		if (known)
			continue;
		best = diag_suggest(k->key, case_keys, NCASE_KEYS);
		diag_add(d, file, k->key_line, k->key_col, "unknown key '%s' in a validation case%s%s%s",
			 k->key, best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "");
	}
}

/* The row figures a metric NAME@SIZE may name, in figure_of's order. */
enum { ROW_BUSBW, ROW_TIME, ROW_MBPS, ROW_GBPS, NROW_METRICS };
static const char *const row_metrics[NROW_METRICS] = { "busbw_GBps", "time_us", "MBps", "Gbps" };

/* Which row figure metric (NAME@...) names, or NROW_METRICS. */
static int row_metric(const char *metric, const char *sep)
{
	int i = 0;
	for (; i < NROW_METRICS; i++)
		if ((size_t)(sep - metric) == strlen(row_metrics[i]) &&
		    !strncmp(metric, row_metrics[i], strlen(row_metrics[i])))
			break;
	return i;
}

/* A metric figure_of can read: a report metric, or ROW@SIZE with a size.
 * Checked with the file, so that a misspelt one is an error at its line,
 * not a case that 'could not run' after its scenario ran. */
static void check_metric(const yt_node *at, const char *metric, const char *file, diag *d)
{
	const char *sep = strchr(metric, '@');
	const char **names, *best;
	size_t nm;
	const rep_metric_def *defs = rep_metric_defs(&nm);
	if (sep) {
		double bytes;
		unit_err ue;
		if (row_metric(metric, sep) < NROW_METRICS) {
			if (unit_parse(sep + 1, UNIT_BYTES, &bytes, &ue) || !(bytes > 0))
				diag_add(d, file, at->line, at->col,
					 "metric '%s': expected a size in bytes after '@', such as 8MiB",
					 metric);
			return;
		}
		diag_add(d, file, at->line, at->col,
			 "metric '%s': a row's figure is busbw_GBps@SIZE, time_us@SIZE, MBps@SIZE or "
			 "Gbps@SIZE", metric);
		return;
	}
	if (rep_metric_find(metric))
		return;
	if ((names = malloc(nm * sizeof *names))) {
		for (size_t i = 0; i < nm; i++)
			names[i] = defs[i].name;
	}
	best = names ? diag_suggest(metric, names, nm) : NULL;
	free(names);
	diag_add(d, file, at->line, at->col,
		 "unknown metric '%s'%s%s%s: a report metric (iteration_s, tflops_per_gpu, "
		 "tokens_per_s, ...) or a row's busbw_GBps@SIZE, time_us@SIZE, MBps@SIZE, Gbps@SIZE",
		 metric, best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "");
}

/* Where the value of key sits (the case's mapping when it is absent). */
static const yt_node *at_of(const yt_node *m, const char *key)
{
	const yt_node *n = yt_get(m, key);
	return n ? n : m;
}

static int parse_case(const yt_node *m, const char *file, vcase *c, diag *d)
{
	size_t before = diag_count(d);
	const char *pub, *tol;
	unit_err ue;
	if (m->type != YT_MAP) {
		diag_add(d, file, m->line, m->col, "expected a mapping for a validation case");
		return SIM_EPARSE;
	}
	only_case_keys(m, file, d);
	*c = (vcase){ .at = m, .name = field(m, "name", file, d),
		      .scenario = field(m, "scenario", file, d),
		      .variant = field(m, "variant", file, d), .metric = field(m, "metric", file, d),
		      .source = field(m, "source", file, d) };
	if (c->metric)
		check_metric(at_of(m, "metric"), c->metric, file, d);
	c->group = yt_get(m, "group") ? field(m, "group", file, d) : NULL;
	c->per = 1;
	if (yt_get(m, "per")) {
		const char *per = field(m, "per", file, d);
		if (per && (!cli_parse_double(per, &c->per) || !(c->per >= 1 && isfinite(c->per))))
			diag_add(d, file, at_of(m, "per")->line, at_of(m, "per")->col,
				 "'per' must be a finite number of at least 1, not '%s'", per);
	}
	pub = field(m, "published", file, d);
	tol = field(m, "tolerance", file, d);
	if (pub && unit_parse(pub, UNIT_COUNT, &c->published, &ue) &&
	    !cli_parse_double(pub, &c->published))
		diag_add(d, file, at_of(m, "published")->line, at_of(m, "published")->col,
			 "'published' must be a number, not '%s'", pub);
	/* The error is relative to the published figure: zero, negative or not
	 * finite gives an error of inf or nan, never a comparison. */
	else if (pub && !(isfinite(c->published) && c->published > 0))
		diag_add(d, file, at_of(m, "published")->line, at_of(m, "published")->col,
			 "'published' must be a finite number above 0, not '%s'", pub);
	if (tol && (unit_parse(tol, UNIT_FRACTION, &c->tolerance, &ue) ||
		    !(c->tolerance > 0 && c->tolerance <= 1)))
		diag_add(d, file, at_of(m, "tolerance")->line, at_of(m, "tolerance")->col,
			 "'tolerance' must be a fraction above 0%% and at most 100%%, such as 15%%, not '%s'",
			 tol);
	return diag_count(d) > before ? SIM_EPARSE : SIM_OK;
}

/* "busbw_GBps@1MiB", "time_us@8B", "MBps@8MiB" and "Gbps@8MiB" read a
 * collective row (a p2p benchmark's rows are such rows); anything else is
 * a report metric (iteration_s means its mean). */
static int figure_of(const rep_report *rep, const vcase *c, double *out, char *why, size_t n)
{
	const rep_variant *v = rep_find_variant(rep, c->variant);
	const char *at = strchr(c->metric, '@');
	rep_stat st;
	if (!v)
		return snprintf(why, n, "no variant '%s' in the report", c->variant), SIM_ENOENT;
	if (at) {
		double bytes;
		unit_err ue;
		if (unit_parse(at + 1, UNIT_BYTES, &bytes, &ue))
			return snprintf(why, n, "bad size in metric '%s'", c->metric), SIM_EINVAL;
		for (size_t i = 0; i < rep_variant_ncollectives(v); i++) {
			const rep_collective *rc = rep_variant_collective(v, i);
			if ((double)rc->bytes != bytes)
				continue;
			switch (row_metric(c->metric, at)) {
			case ROW_BUSBW:
				return *out = rc->busbw_GBps, SIM_OK;
			case ROW_TIME:
				return *out = rc->time_s * 1e6, SIM_OK;
			/* perftest's units (src/perftest_parameters.c,
			 * print_report_bw): MB/s of 2^20 bytes, and
			 * --report_gbits' 10^9 bits/s */
			case ROW_MBPS:
				return *out = rc->algbw_GBps * 1e9 / 1048576, SIM_OK;
			case ROW_GBPS:
				return *out = rc->algbw_GBps * 8, SIM_OK;
			default:
				break;
			}
		}
		return snprintf(why, n, "no collective row for '%s'", c->metric), SIM_ENOENT;
	}
	if (rep_variant_metric(v, c->metric, out))
		return SIM_OK;
	if (rep_variant_stat(v, c->metric, &st))
		return *out = st.mean, SIM_OK;
	return snprintf(why, n, "the report has no metric '%s'", c->metric), SIM_ENOENT;
}

/* Runs one case; *err is the relative error of the prediction. */
static int run_case(const vcase *c, const char *dir, const char *profile_dir, double *pred,
		    char *why, size_t n)
{
	char path[8192];
	scn_scenario *s = NULL;
	rep_report *rep = NULL;
	diag *d = diag_new();
	scn_opts opts = { .profile_dir = profile_dir };
	int rc = d ? SIM_OK : SIM_ENOMEM;
	int k = c->scenario[0] == '/' /* an absolute path is itself */
			? snprintf(path, sizeof path, "%s", c->scenario)
			: snprintf(path, sizeof path, "%s/%s", dir, c->scenario);
	if (!rc && (k < 0 || (size_t)k >= sizeof path)) { /* a cut name is another file */
		diag_add(d, NULL, 0, 0, "scenario '%s': past the path limit", c->scenario);
		rc = SIM_ERANGE;
	}
	if (!rc && (rc = scn_load(path, &opts, &s, d)) == 0)
		rc = run_scenario(s, &(run_opts){ 0 }, &rep, d);
	if (rc && d && diag_count(d)) {
		sim_fit(why, n, "%s", diag_msg(d, 0));
		diag_print(d, stderr); /* where in the scenario */
	}
	else if (rc)
		snprintf(why, n, "%s", sim_strerror(rc));
	else
		rc = figure_of(rep, c, pred, why, n);
	rep_free(rep);
	scn_free(s);
	diag_free(d);
	return rc;
}

static void dir_of(const char *file, char *dir, size_t n)
{
	const char *slash = strrchr(file, '/');
	if (!slash)
		snprintf(dir, n, ".");
	else
		snprintf(dir, n, "%.*s", (int)(slash - file), file);
}

static int load_cases(const char *file, yt_node **root, vcase **cases, size_t *ncases)
{
	diag *d = diag_new();
	char *buf = NULL;
	size_t len = 0;
	const yt_node *list;
	int rc = d ? yt_read_file(file, &buf, &len, d) : SIM_ENOMEM;
	if (!rc)
		rc = yt_parse(file, buf, len, root, d);
	list = rc ? NULL : yt_get(*root, "cases");
	if (!rc && (!list || list->type != YT_SEQ || !list->nkids)) {
		diag_add(d, file, 1, 1, "expected a non-empty 'cases' list");
		rc = SIM_EPARSE;
	}
	if (!rc && !(*cases = calloc(list->nkids, sizeof **cases)))
		rc = SIM_ENOMEM;
	for (size_t i = 0; !rc && i < list->nkids; i++)
		parse_case(list->kids[i], file, &(*cases)[i], d);
	if (!rc && diag_count(d))
		rc = SIM_EPARSE;
	if (!rc)
		*ncases = list->nkids;
	if (rc && d)
		diag_print(d, stderr);
	free(buf);
	diag_free(d);
	return rc;
}

/* True when name is a case's name or group: --only that matches nothing
 * would otherwise print an empty table and pass. */
static bool names_case(const vcase *cases, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, cases[i].name) || (cases[i].group && !strcmp(name, cases[i].group)))
			return true;
	return false;
}

/* One line per group, in the order groups first appear, then all rows
 * together when there are several groups: the mean absolute error of the
 * cases that ran (err[i] NaN: case i did not). */
static void print_group_errors(const vcase *cases, const double *err, size_t n)
{
	double all = 0;
	size_t nall = 0, ngroups = 0;
	for (size_t i = 0; i < n; i++) {
		double sum = 0;
		size_t k = 0;
		bool first = true;
		for (size_t j = 0; j < i && first; j++)
			first = !cases[j].group || !cases[i].group || strcmp(cases[j].group, cases[i].group);
		if (!cases[i].group || !first)
			continue;
		for (size_t j = i; j < n; j++)
			if (cases[j].group && !strcmp(cases[j].group, cases[i].group) && !isnan(err[j]))
				sum += fabs(err[j]), k++;
		if (k)
			printf("%s rows: mean absolute error %.1f%% over %zu cases\n", cases[i].group,
			       100 * sum / (double)k, k), ngroups++;
	}
	for (size_t i = 0; i < n; i++)
		if (!isnan(err[i]))
			all += fabs(err[i]), nall++;
	if (ngroups > 1)
		printf("all rows: mean absolute error %.1f%% over %zu cases\n", 100 * all / (double)nall,
		       nall);
}

int cmd_validate(int argc, char **argv)
{
	const char *file = NULL, *only = NULL, *profile_dir = NULL;
	char shipped[4096];
	yt_node *root = NULL;
	vcase *cases = NULL;
	size_t ncases = 0, bad = 0, failed = 0;
	double *errs = NULL;
	char dir[4096];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cases") && i + 1 < argc)
			file = argv[++i];
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--profile-dir") && i + 1 < argc)
			profile_dir = argv[++i];
		else
			return cli_usage_error("validate: unexpected '%s' (see 'dpusim validate --help')",
					       argv[i]);
	}
	if (!file) {
		if (datadir_path("tests/validation/cases.yaml", shipped, sizeof shipped))
			return cli_usage_error("validate: no validation cases: " DATADIR_TOO_LONG);
		file = shipped;
	}
	if (load_cases(file, &root, &cases, &ncases)) {
		yt_free(root);
		free(cases);
		return cli_usage_error("'%s' is not a valid list of validation cases", file);
	}
	if (only && !names_case(cases, ncases, only)) {
		yt_free(root);
		free(cases);
		return cli_usage_error("validate: no case or group named '%s' in '%s'", only, file);
	}
	if (!(errs = malloc((ncases ? ncases : 1) * sizeof *errs))) {
		yt_free(root);
		free(cases);
		return cli_usage_error("out of memory");
	}
	for (size_t i = 0; i < ncases; i++)
		errs[i] = NAN;
	dir_of(file, dir, sizeof dir);
	printf("%-20s %-16s %12s %12s %9s %6s  %s\n", "case", "metric", "predicted", "published",
	       "error", "tol", "result");
	for (size_t i = 0; i < ncases; i++) {
		const vcase *c = &cases[i];
		double pred = NAN, err;
		char why[512] = "";
		if (only && strcmp(only, c->name) && (!c->group || strcmp(only, c->group)))
			continue;
		fflush(stdout);
		if (run_case(c, dir, profile_dir, &pred, why, sizeof why)) {
			printf("%-20s %-16s %12s %12.4g %9s %5.0f%%  failed: %s\n", c->name, c->metric,
			       "-", c->published, "-", 100 * c->tolerance, why);
			fprintf(stderr, "%s:%d:%d: validation case '%s' could not run: %s\n", file,
				c->at->line, c->at->col, c->name, why);
			failed++;
			continue;
		}
		pred /= c->per;
		err = (pred - c->published) / c->published;
		bool ok = fabs(err) <= c->tolerance;
		bad += !ok;
		errs[i] = err;
		printf("%-20s %-16s %12.4g %12.4g %+8.1f%% %5.0f%%  %s\n", c->name, c->metric, pred,
		       c->published, 100 * err, 100 * c->tolerance, ok ? "ok" : "OUTSIDE");
	}
	print_group_errors(cases, errs, ncases);
	printf("%zu cases outside tolerance, %zu could not run\n", bad, failed);
	yt_free(root);
	free(cases);
	free(errs);
	if (failed)
		return CLI_USAGE;
	return bad ? CLI_FINDING : CLI_OK;
}
