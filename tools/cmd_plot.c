/* dpusim plot: gnuplot pictures from reports and results databases. Each
 * plot writes a data file and a script into a private temporary folder,
 * runs gnuplot on them, and renames the picture into place only when
 * gnuplot succeeded, so a failed plot leaves nothing half-written. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/alloc.h"
#include "sim/err.h"
#include "report/atomic.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "report/db.h"
#include "tools/plot.h"
#include "report/report.h"

/* ---- gnuplot plumbing ---------------------------------------------------- */

int plot_begin(gp_job *p, const struct plot_opts *o)
{
	char err[1024];
	size_t n = strlen(o->out);
	if (gp_begin(p, o->out, err, sizeof err))
		return cli_error("%s", err), CLI_USAGE;
	if (n > 4 && !strcmp(o->out + n - 4, ".svg"))
		fprintf(p->f, "set terminal svg size %u,%u dynamic noenhanced font 'sans,12'\n",
			o->w, o->h);
	else
		fprintf(p->f, "set terminal pngcairo size %u,%u noenhanced font 'sans,11'\n", o->w,
			o->h);
	gp_set_output(p);
	fputs("set grid ytics lc rgb '#d0d0d0'\nset border 3\nset tics nomirror\n", p->f);
	return 0;
}

int plot_finish(gp_job *p, const char *out, int rc)
{
	char err[1024];
	if (gp_finish(p, out, rc == 0, err, sizeof err) && !rc)
		rc = (cli_error("%s", err), CLI_USAGE);
	if (!rc)
		printf("wrote %s\n", out);
	return rc;
}

FILE *plot_open_data(gp_job *p)
{
	char err[1024];
	FILE *d = gp_open_data(p, err, sizeof err);
	if (!d)
		cli_error("%s", err);
	return d;
}

int plot_close_data(FILE *d)
{
	/* a short data file draws a wrong picture without a word from gnuplot */
	bool bad = ferror(d);
	if (fclose(d) || bad)
		return cli_error("cannot write the plot's data: %s", strerror(errno)), CLI_USAGE;
	return 0;
}

/* A name as one gnuplot data-file token: quoted, with " replaced. */
static void data_label(FILE *d, const char *s)
{
	fputc('"', d);
	for (; *s; s++)
		fputc(*s == '"' ? '\'' : *s, d);
	fputc('"', d);
}

/* ---- sources ------------------------------------------------------------- */

static bool is_sqlite(const char *path)
{
	char magic[16] = { 0 };
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(magic, 1, sizeof magic, f) : 0;
	if (f)
		fclose(f);
	return n == sizeof magic && !memcmp(magic, "SQLite format 3", 16);
}

struct newest {
	int64_t id;
	char *scenario;  /* malloc'd; NULL when out of memory or no run */
};

static int newest_run(const db_run *run, void *arg)
{
	struct newest *keep = arg;
	keep->id = run->id;
	keep->scenario = strdup(run->scenario);
	return 1; /* stop after the first (newest) */
}

/* A report from a JSON file, or from run `o->run` (0: newest) of a DB. */
static int load_report(const struct plot_opts *o, const char *path, rep_report **r)
{
	char err[1024];
	db *d = NULL;
	struct newest newest = { 0 };
	int64_t id = o->run;
	int rc;
	if (!is_sqlite(path))
		return cli_read_report(path, r);
	if ((rc = cli_open_db_ro(path, &d)))
		return rc;
	/* --scenario picks the newest run of that scenario (it was ignored,
	 * and a misspelt name drew another scenario's run) */
	rc = id ? 0 : db_list_runs(d, &(db_filter){ .scenario = o->scenario, .limit = 1 },
				   newest_run, &newest, err, sizeof err);
	free(newest.scenario);
	if (rc < 0) {
		cli_error("%s", err);
		db_close(d);
		return CLI_USAGE;
	}
	id = id ? id : newest.id;
	rc = id ? db_load_report(d, id, r, err, sizeof err) : SIM_ENOENT;
	if (rc && !id && o->scenario)
		cli_error("%s: no run of scenario '%s' (see 'dpusim runs --db %s')", path,
			  o->scenario, path);
	else if (rc)
		cli_error("%s", id ? err : "the database holds no runs");
	db_close(d);
	return rc ? CLI_USAGE : 0;
}

/* ---- breakdown ----------------------------------------------------------- */

static int plot_breakdown(const struct plot_opts *o)
{
	rep_report *r = NULL;
	gp_job p = { .f = NULL };
	size_t nb;
	const char *const *bd = rep_breakdown_names(&nb);
	bool used[16] = { false }, any = false, nonzero = false;
	char title[320];
	FILE *d;
	int rc = load_report(o, o->src[0], &r), col = 2;
	/* A component zero in every variant adds no bar: it stays out of the
	 * legend too, where it would name a colour that is nowhere. */
	for (size_t v = 0; !rc && v < rep_nvariants(r); v++)
		for (size_t i = 0; i < nb; i++) {
			double x;
			if (rep_variant_breakdown(rep_variant_at(r, v), bd[i], &x)) {
				any = true;
				if (x != 0)
					used[i] = nonzero = true;
			}
		}
	if (!rc && !any)
		rc = (cli_error("%s: no variant has a breakdown_s to plot", o->src[0]), CLI_USAGE);
	else if (!rc && !nonzero)
		rc = (cli_error("%s: every breakdown component is zero", o->src[0]), CLI_USAGE);
	if (rc) {
		rep_free(r);
		return rc;
	}
	if ((rc = plot_begin(&p, o)) || !(d = plot_open_data(&p))) {
		rep_free(r);
		return plot_finish(&p, o->out, rc ? rc : CLI_USAGE);
	}
	for (size_t v = 0; v < rep_nvariants(r); v++) {
		const rep_variant *var = rep_variant_at(r, v);
		data_label(d, rep_variant_name(var));
		for (size_t i = 0; i < nb; i++) {
			double x = 0; /* plot data: an absent component adds no height */
			if (used[i])
				rep_variant_breakdown(var, bd[i], &x), fprintf(d, " %.17g", x);
		}
		fputc('\n', d);
	}
	rc = plot_close_data(d);
	/* A run of a sweep names its point: the database holds one per point. */
	snprintf(title, sizeof title, "Iteration time breakdown per variant: %s (%s%s%s)",
		 rep_get_scenario(r)->name, rep_source_name(rep_get_source(r)),
		 rep_get_scenario(r)->point ? ", " : "",
		 rep_get_scenario(r)->point ? rep_get_scenario(r)->point : "");
	fprintf(p.f, "set title ");
	gp_put_str(p.f, title);
	fprintf(p.f, "\nset ylabel 'time per iteration (s)'\nset xlabel 'variant'\n"
		"set yrange [0:*]\nset style data histograms\nset style histogram rowstacked\n"
		"set style fill solid 0.85 border -1\nset boxwidth 0.6\n"
		"set key outside right top vertical\nplot ");
	for (size_t i = 0; i < nb; i++) {
		if (!used[i])
			continue;
		fprintf(p.f, "%s'%s' using %d%s title ", col > 2 ? ", " : "", p.data, col,
			col == 2 ? ":xtic(1)" : "");
		gp_put_str(p.f, bd[i]);
		col++;
	}
	fputc('\n', p.f);
	rep_free(r);
	return plot_finish(&p, o->out, rc);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* ---- compare ------------------------------------------------------------- */

/* One bar per (variant, metric) shared by both reports: (B - A) / |A| in %. */
static int write_compare_data(FILE *d, const rep_report *a, const rep_report *b)
{
	size_t nm, bars = 0;
	const rep_metric_def *defs = rep_metric_defs(&nm);
	for (size_t v = 0; v < rep_nvariants(a); v++) {
		const rep_variant *va = rep_variant_at(a, v);
		const rep_variant *vb = rep_find_variant(b, rep_variant_name(va));
		for (size_t i = 0; vb && i <= nm; i++) {
			const char *name = i < nm ? defs[i].name : "speedup";
			double x, y;
			rep_stat sa, sb;
			const char *vn = rep_variant_name(va);
			bool both = i == nm ? rep_speedup(a, vn, &x) && rep_speedup(b, vn, &y)
				    : defs[i].kind == REP_STAT
					    ? rep_variant_stat(va, name, &sa) &&
						      rep_variant_stat(vb, name, &sb)
					    : rep_variant_metric(va, name, &x) &&
						      rep_variant_metric(vb, name, &y);
			if (!both)
				continue;
			if (i < nm && defs[i].kind == REP_STAT)
				x = sa.mean, y = sb.mean;
			if (x == 0)
				continue; /* no relative error against zero */
			fprintf(d, "\"%s %s\" %.17g\n", rep_variant_name(va), name,
				100 * (y - x) / fabs(x));
			bars++;
		}
	}
	return bars ? 0 : -1;
}

static int plot_compare(const struct plot_opts *o)
{
	rep_report *a = NULL, *b = NULL;
	gp_job p = { .f = NULL };
	FILE *d = NULL;
	char title[256];
	int rc;
	if (o->nsrc != 2)
		return cli_usage_error("plot --kind compare wants two reports: A B");
	if ((rc = load_report(o, o->src[0], &a)) || (rc = load_report(o, o->src[1], &b)) ||
	    (rc = plot_begin(&p, o)) || !(d = plot_open_data(&p)) ||
	    (write_compare_data(d, a, b) &&
	     (cli_error("%s and %s share no metric", o->src[0], o->src[1]), 1))) {
		if (d)
			fclose(d);
		rep_free(a);
		rep_free(b);
		return p.dir[0] ? plot_finish(&p, o->out, rc ? rc : CLI_USAGE) : rc;
	}
	rc = plot_close_data(d);
	snprintf(title, sizeof title, "B = %s (%s) against A = %s (%s): relative error",
		 base_name(o->src[1]), rep_source_name(rep_get_source(b)), base_name(o->src[0]),
		 rep_source_name(rep_get_source(a)));
	fputs("set title ", p.f);
	gp_put_str(p.f, title);
	fputs("\nset ylabel 'relative error of B against A (%)'\nset xlabel 'variant and metric'\n"
	      "set xtics rotate by -40 left\nset style fill solid 0.8 border -1\n"
	      "set boxwidth 0.7\nset xzeroaxis lt -1\nset bmargin 10\nset rmargin 12\n"
	      "set offsets 0.5, 0.5, 0, 0\n", p.f);
	/* Zero, and the tolerance band when given, always inside the y range:
	 * errors all of one sign, or all small, would otherwise leave them out. */
	fprintf(p.f, "set yrange [*<%g:%g<*]\n", isnan(o->tol) ? 0 : -100 * o->tol,
		isnan(o->tol) ? 0 : 100 * o->tol);
	if (!isnan(o->tol))
		fprintf(p.f, "set arrow from graph 0, first %g to graph 1, first %g nohead "
			"dt 2 lc rgb 'red'\nset arrow from graph 0, first %g to graph 1, first "
			"%g nohead dt 2 lc rgb 'red'\n", 100 * o->tol, 100 * o->tol,
			-100 * o->tol, -100 * o->tol);
	fprintf(p.f, "plot '%s' using 0:2:xtic(1) with boxes lc rgb '#4477aa' title "
		"'(B - A) / |A|'%s\n", p.data,
		isnan(o->tol) ? "" : ", NaN dt 2 lc rgb 'red' title 'tolerance'");
	rep_free(a);
	rep_free(b);
	return plot_finish(&p, o->out, rc);
}

/* ---- capacity and scaling (from a database) ------------------------------ */

#define MAX_SERIES 16
#define MAX_POINTS 256
#define MAX_KEYS 16

struct series {
	char name[160];
	double x[MAX_POINTS], y[MAX_POINTS];
	size_t n;
};

/* A sweep point "k=v,k=v" split into its keys and values (in place). */
struct point_kv {
	char buf[1024];
	const char *k[MAX_KEYS], *v[MAX_KEYS];
	size_t n;
};

/* One stored value, kept until every point is seen: which keys vary is known
 * only then. */
struct raw_point {
	char variant[64];
	char point[1024];
	double value;
};

struct collect {
	const struct plot_opts *o;
	char key[64];           /* the x key: --x, else the first key of the first point */
	struct raw_point *raw;
	size_t nraw, capraw;
	bool oversized;         /* a point or variant name too long to keep */
	struct series s[MAX_SERIES];
	size_t ns, skipped, filtered, dropped;
	char varying[512];      /* the other keys that take several values, "a,b" */
	char x_unit[16];        /* the unit the sweep's values were written in ("Gbps") */
};

/* The end of the value starting at p: the next ',' outside brackets and
 * double quotes (a value that is a list or mapping is labelled by its
 * canonical text, "{a: 1, b: 2}", models/canon.h). */
static char *value_end(char *p)
{
	int depth = 0;
	bool quoted = false;
	for (; *p; p++) {
		if (quoted && *p == '\\' && p[1])
			p++;
		else if (*p == '"')
			quoted = !quoted;
		else if (!quoted && (*p == '{' || *p == '['))
			depth++;
		else if (!quoted && (*p == '}' || *p == ']'))
			depth--;
		else if (!quoted && !depth && *p == ',')
			return p;
	}
	return p;
}

static bool split_point(const char *point, struct point_kv *kv)
{
	char *tok = kv->buf;
	if (snprintf(kv->buf, sizeof kv->buf, "%s", point) >= (int)sizeof kv->buf)
		return false;
	kv->n = 0;
	while (*tok) {
		char *eq = strchr(tok, '='), *end;
		if (!eq || memchr(tok, ',', (size_t)(eq - tok)) || kv->n == MAX_KEYS)
			return false;
		end = value_end(eq + 1);
		*eq = '\0';
		kv->k[kv->n] = tok;
		kv->v[kv->n++] = eq + 1;
		if (!*end)
			break;
		*end = '\0';
		tok = end + 1;
	}
	return kv->n > 0;
}

static const char *kv_get(const struct point_kv *kv, const char *key)
{
	for (size_t i = 0; i < kv->n; i++)
		if (!strcmp(kv->k[i], key))
			return kv->v[i];
	return NULL;
}

/* Numeric value of a sweep value as written ("100Gbps" -> 100: the axis is in
 * the unit the sweep was written in). */
static bool value_x(const char *v, double *x)
{
	char *end;
	*x = strtod(v, &end);
	return end != v && isfinite(*x);
}

/* The unit after a sweep value's number, as written ("100Gbps" -> "Gbps"),
 * for the axis label; "" for a bare number. */
static void x_unit_of(const char *v, char *unit, size_t n)
{
	char *end;
	(void)strtod(v, &end);
	while (*end == ' ')
		end++;
	snprintf(unit, n, "%s", end);
}

/* Two sweep values are the same as text, or as numbers with the same unit
 * (2 and 2.0, 100Gbps and 100.0Gbps). */
static bool same_value(const char *a, const char *b)
{
	char *ea, *eb;
	double x = strtod(a, &ea), y = strtod(b, &eb);
	return !strcmp(a, b) || (ea != a && eb != b && x == y && !strcmp(ea, eb));
}

/* Every --where KEY=VALUE holds for this point. */
static bool where_holds(const struct plot_opts *o, const struct point_kv *kv)
{
	for (size_t i = 0; i < o->nwhere; i++) {
		size_t kl = strcspn(o->where[i], "=");
		const char *have = NULL;
		for (size_t j = 0; j < kv->n && !have; j++)
			if (strlen(kv->k[j]) == kl && !strncmp(kv->k[j], o->where[i], kl))
				have = kv->v[j];
		if (!have || !same_value(have, o->where[i] + kl + 1))
			return false;
	}
	return true;
}

static bool in_list(const char *list, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] ? 1 : 0))
		if (!strncmp(p, key, kl) && (p[kl] == ',' || !p[kl]))
			return true;
	return false;
}

static int keep_point(const db_point *pt, void *arg)
{
	struct collect *c = arg;
	struct raw_point *r;
	if (!pt->point)
		return c->skipped++, 0;
	if (sim_grow(&c->raw, &c->capraw, c->nraw + 1, sizeof *c->raw, 64))
		return SIM_ENOMEM;
	r = &c->raw[c->nraw];
	if (snprintf(r->variant, sizeof r->variant, "%s", pt->variant) >= (int)sizeof r->variant ||
	    snprintf(r->point, sizeof r->point, "%s", pt->point) >= (int)sizeof r->point)
		return c->oversized = true, 0;
	r->value = pt->value;
	c->nraw++;
	return 0;
}

/* The keys other than x and those --where pins that take more than one value
 * among the points plotted: each combination of them is a line of its own,
 * so a two-key sweep never joins points that differ in the second key. */
static void find_varying(struct collect *c)
{
	struct point_kv a, b;
	for (size_t i = 0; i < c->nraw; i++) {
		if (!split_point(c->raw[i].point, &a) || !where_holds(c->o, &a))
			continue;
		for (size_t j = i + 1; j < c->nraw; j++) {
			if (!split_point(c->raw[j].point, &b) || !where_holds(c->o, &b))
				continue;
			for (size_t k = 0; k < a.n; k++) {
				const char *v = kv_get(&b, a.k[k]);
				size_t ol = strlen(c->varying);
				if (!strcmp(a.k[k], c->key) || in_list(c->varying, a.k[k]) ||
				    (v && same_value(v, a.v[k])))
					continue;
				snprintf(c->varying + ol, sizeof c->varying - ol, "%s%s",
					 ol ? "," : "", a.k[k]);
			}
		}
	}
}

static void series_name(const struct collect *c, const struct raw_point *r,
			const struct point_kv *kv, char *name, size_t len)
{
	size_t at = (size_t)snprintf(name, len, "%s", r->variant);
	for (size_t i = 0; i < kv->n && at < len; i++) {
		const char *dot = strrchr(kv->k[i], '.');
		if (in_list(c->varying, kv->k[i]))
			at += (size_t)snprintf(name + at, len - at, ", %s=%s",
					       dot ? dot + 1 : kv->k[i], kv->v[i]);
	}
}

static void add_point(struct collect *c, const struct raw_point *r)
{
	struct series *s = NULL;
	struct point_kv kv;
	char name[sizeof c->s[0].name];
	const char *xv;
	double x;
	if (!split_point(r->point, &kv) || !(xv = kv_get(&kv, c->key)) || !value_x(xv, &x))
		return (void)c->skipped++;
	if (!where_holds(c->o, &kv))
		return (void)c->filtered++;
	if (!c->x_unit[0])
		x_unit_of(xv, c->x_unit, sizeof c->x_unit);
	series_name(c, r, &kv, name, sizeof name);
	for (size_t i = 0; i < c->ns && !s; i++)
		if (!strcmp(c->s[i].name, name))
			s = &c->s[i];
	if (!s && c->ns < MAX_SERIES) {
		s = &c->s[c->ns++];
		snprintf(s->name, sizeof s->name, "%s", name);
	}
	if (!s)
		return (void)c->dropped++;
	for (size_t i = 0; i < s->n; i++)
		if (s->x[i] == x)
			return (void)(s->y[i] = r->value); /* a later run of the same point wins */
	if (s->n == MAX_POINTS)
		return (void)c->dropped++;
	s->x[s->n] = x;
	s->y[s->n++] = r->value;
}

static void build_series(struct collect *c)
{
	struct point_kv kv;
	if (!c->key[0] && c->nraw && split_point(c->raw[0].point, &kv))
		snprintf(c->key, sizeof c->key, "%s", kv.k[0]);
	find_varying(c);
	for (size_t i = 0; i < c->nraw; i++)
		add_point(c, &c->raw[i]);
}

static void sort_series(struct series *s)
{
	for (size_t i = 1; i < s->n; i++)
		for (size_t j = i; j > 0 && s->x[j - 1] > s->x[j]; j--) {
			double tx = s->x[j], ty = s->y[j];
			s->x[j] = s->x[j - 1], s->y[j] = s->y[j - 1];
			s->x[j - 1] = tx, s->y[j - 1] = ty;
		}
}

static int load_series(const struct plot_opts *o, const char *what, struct collect *c,
		       char *scenario, size_t slen)
{
	char err[1024];
	db *d = NULL;
	struct newest newest = { 0 };
	int rc;
	if (!is_sqlite(o->src[0]))
		return cli_usage_error("plot --kind %s reads a results database, and %s is not one",
				       o->kind, o->src[0]);
	if ((rc = cli_open_db_ro(o->src[0], &d)))
		return rc;
	if (!o->scenario &&
	    db_list_runs(d, &(db_filter){ .limit = 1 }, newest_run, &newest, err, sizeof err) < 0) {
		free(newest.scenario);
		db_close(d);
		return cli_error("%s", err), CLI_USAGE;
	}
	snprintf(scenario, slen, "%s", o->scenario ? o->scenario
				       : newest.scenario ? newest.scenario : "");
	free(newest.scenario);
	if (o->xkey)
		snprintf(c->key, sizeof c->key, "%s", o->xkey);
	rc = db_series(d, scenario, what, keep_point, c, err, sizeof err);
	db_close(d);
	if (rc)
		return cli_error("%s", rc == SIM_ENOMEM ? "out of memory" : err), CLI_USAGE;
	if (c->oversized)
		return cli_error("%s: a sweep point of scenario '%s' is too long to plot (over %zu "
				 "characters)", o->src[0], scenario, sizeof c->raw->point - 1),
		       CLI_USAGE;
	build_series(c);
	if (c->dropped)
		return cli_error("%s: more than %d series (or %d points in one): the sweep's "
				 "other keys (%s) split '%s' into too many lines; pin some with "
				 "--where KEY=VALUE", o->src[0], MAX_SERIES, MAX_POINTS,
				 c->varying, c->key), CLI_USAGE;
	if (c->ns == 0)
		return cli_error("%s: no sweep points of scenario '%s' with a numeric '%s' and a "
				 "'%s' value%s", o->src[0], scenario, c->key[0] ? c->key : "point",
				 what, c->filtered ? " that match --where" : ""), CLI_USAGE;
	return 0;
}

/* A metric as a reader names it, the unit its axis is drawn in, and the
 * factor from the report's unit to that one (fractions in %, time to
 * train in days). */
static const struct metric_words {
	const char *name, *words, *unit;
	double scale;
} metric_words[] = {
	{ "iteration_s", "time per iteration", "s", 1 },
	{ "samples_per_s", "throughput", "samples/s", 1 },
	{ "tokens_per_s", "throughput", "tokens/s", 1 },
	{ "tflops_per_gpu", "compute per GPU", "TFLOP/s", 1 },
	{ "mfu", "model FLOPs utilisation", "%", 100 },
	{ "gpu_util", "GPU utilisation", "%", 100 },
	{ "host_cpu_util", "host CPU utilisation", "%", 100 },
	{ "conn_core_util", "a connection's cores' utilisation while it sends", "%", 100 },
	{ "dpu_util", "DPU utilisation", "%", 100 },
	{ "time_to_train_s", "time to train", "days", 1.0 / 86400 },
	{ "goodput", "goodput", "%", 100 },
	{ "energy_kwh", "energy", "kWh", 1 },
	{ "cost_usd", "cost", "USD", 1 },
	{ "tokens_per_usd", "tokens per dollar", "tokens/USD", 1 },
	{ "speedup", "speedup over the first variant", "x", 1 },
};

static const struct metric_words *words_of(const char *metric)
{
	for (size_t i = 0; i < sizeof metric_words / sizeof metric_words[0]; i++)
		if (!strcmp(metric_words[i].name, metric))
			return &metric_words[i];
	return NULL;
}

/* A sweep key as words: its last component, '_' as blanks ("link rate"),
 * and the unit its values were written in. */
static void key_words(const struct collect *c, char *buf, size_t n)
{
	const char *last = strrchr(c->key, '.');
	char w[64];
	size_t i;
	for (i = 0, last = last ? last + 1 : c->key; last[i] && i + 1 < sizeof w; i++)
		w[i] = last[i] == '_' ? ' ' : last[i];
	w[i] = '\0';
	if (c->x_unit[0])
		snprintf(buf, n, "%s (%s)", w, c->x_unit);
	else
		snprintf(buf, n, "%s", w);
}

static int plot_lines(const struct plot_opts *o, bool scaling)
{
	const char *what = scaling ? "speedup" : o->metric ? o->metric : "samples_per_s";
	const rep_metric_def *def = rep_metric_find(what);
	struct collect *c = calloc(1, sizeof *c);
	gp_job p = { .f = NULL };
	if (c)
		c->o = o;
	char scenario[256], title[512];
	FILE *d = NULL;
	int rc;
	if (!c)
		return cli_error("out of memory"), CLI_USAGE;
	if (!scaling && !def)
		rc = cli_usage_error("unknown metric '%s' for --metric", what);
	else if (!(rc = load_series(o, what, c, scenario, sizeof scenario)) &&
		 !(rc = plot_begin(&p, o)) && !(d = plot_open_data(&p)))
		rc = CLI_USAGE;
	if (rc) {
		free(c->raw), free(c);
		return p.dir[0] ? plot_finish(&p, o->out, rc) : rc;
	}
	const struct metric_words *mw = words_of(what);
	char xw[96];
	for (size_t i = 0; i < c->ns; i++) {
		sort_series(&c->s[i]);
		for (size_t j = 0; j < c->s[i].n; j++)
			fprintf(d, "%.17g %.17g\n", c->s[i].x[j],
				c->s[i].y[j] * (mw ? mw->scale : 1));
		fputs("\n\n", d);
	}
	rc = plot_close_data(d);
	key_words(c, xw, sizeof xw);
	snprintf(title, sizeof title, "%s%s%s against %s: %s", mw ? mw->words : what,
		 mw && strcmp(mw->unit, "x") && strcmp(mw->unit, "%") ? " in " : "",
		 mw && strcmp(mw->unit, "x") && strcmp(mw->unit, "%") ? mw->unit : "", xw, scenario);
	title[0] = (char)toupper((unsigned char)title[0]);
	fputs("set title ", p.f);
	gp_put_str(p.f, title);
	fputs("\nset xlabel ", p.f);
	gp_put_str(p.f, xw);
	fputs("\nset ylabel ", p.f);
	snprintf(title, sizeof title, "%s (%s)", mw ? mw->words : what,
		 mw ? mw->unit : def ? def->unit : "x");
	gp_put_str(p.f, title);
	fputs("\nset key outside right top vertical\nset yrange [0:*]\nplot ", p.f);
	for (size_t i = 0; i < c->ns; i++) {
		/* Dash and point types cycle so equal series stay visible. */
		fprintf(p.f, "%s'%s' index %zu using 1:2 with linespoints lw 2 dt %zu pt %zu "
			"title ", i ? ", " : "", p.data, i, i % 5 + 1, (i * 2) % 14 + 5);
		gp_put_str(p.f, c->s[i].name);
	}
	fputc('\n', p.f);
	if (c->skipped)
		fprintf(stderr, "dpusim: note: %zu stored values had no numeric '%s' and are not "
			"plotted\n", c->skipped, c->key);
	free(c->raw), free(c);
	return plot_finish(&p, o->out, rc);
}

/* ---- command ------------------------------------------------------------- */

static int parse_size(const char *s, unsigned *w, unsigned *h)
{
	char *end;
	unsigned long a = strtoul(s, &end, 10), b;
	if (end == s || *end != 'x')
		return -1;
	b = strtoul(end + 1, &end, 10);
	if (*end || a < 100 || b < 100 || a > 10000 || b > 10000)
		return -1;
	*w = (unsigned)a, *h = (unsigned)b;
	return 0;
}

/* "10%" -> 0.10; only a percentage, as for compare --tolerance. */
static int parse_percent(const char *s, double *out)
{
	size_t n = strlen(s);
	char buf[64];
	if (n < 2 || n >= sizeof buf || s[n - 1] != '%')
		return -1;
	memcpy(buf, s, n - 1);
	buf[n - 1] = '\0';
	if (!cli_parse_double(buf, out) || !isfinite(*out) || *out < 0)
		return -1;
	*out /= 100;
	return 0;
}

static int parse_opts(int argc, char **argv, struct plot_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned long long id;
		if (a[0] != '-' || !a[1]) {
			if (o->nsrc == 2)
				return cli_usage_error("plot: too many sources ('%s')", a);
			o->src[o->nsrc++] = a;
			continue;
		}
		if (!v)
			return cli_usage_error("plot: %s wants a value", a);
		i++;
		if (!strcmp(a, "--kind"))
			o->kind = v;
		else if (!strcmp(a, "-o"))
			o->out = v;
		else if (!strcmp(a, "--metric"))
			o->metric = v;
		else if (!strcmp(a, "--scenario"))
			o->scenario = v;
		else if (!strcmp(a, "--x"))
			o->xkey = v;
		else if (!strcmp(a, "--where") && strchr(v, '=') && v[0] != '=' &&
			 o->nwhere < sizeof o->where / sizeof o->where[0])
			o->where[o->nwhere++] = v;
		else if (!strcmp(a, "--run") && cli_parse_u64(v, &id) && id > 0 && id < (1ull << 62))
			o->run = (long long)id;
		else if (!strcmp(a, "--tracks") && cli_parse_u64(v, &id) && id > 0 && id <= 4096)
			o->max_tracks = (unsigned)id;
		else if (!strcmp(a, "--size") && !parse_size(v, &o->w, &o->h) && (o->size_given = true))
			continue;
		else if (!strcmp(a, "--tolerance") && !parse_percent(v, &o->tol))
			continue;
		else
			return cli_usage_error("plot: bad option or value '%s %s'", a, v);
	}
	return 0;
}

int cmd_plot(int argc, char **argv)
{
	struct plot_opts o = { .w = 1000, .h = 600, .tol = NAN, .max_tracks = 64 };
	size_t n;
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc;
	if (!o.kind || !o.out || o.nsrc == 0)
		return cli_usage_error("plot wants SOURCE, --kind and -o (see 'dpusim plot --help')");
	n = strlen(o.out);
	if (!(n > 4 && (!strcmp(o.out + n - 4, ".png") || !strcmp(o.out + n - 4, ".svg"))))
		return cli_usage_error("plot: -o must name a .png or .svg file, not '%s'", o.out);
	if (strcmp(o.kind, "compare") && o.nsrc != 1)
		return cli_usage_error("plot --kind %s takes one source", o.kind);
	for (int i = 0; i < o.nsrc; i++) /* -o must not replace a source */
		if (atomic_protect_input(o.src[i]))
			return cli_usage_error("out of memory");
	if (!strcmp(o.kind, "breakdown"))
		return plot_breakdown(&o);
	if (!strcmp(o.kind, "compare"))
		return plot_compare(&o);
	if (!strcmp(o.kind, "capacity"))
		return plot_lines(&o, false);
	if (!strcmp(o.kind, "scaling"))
		return is_sqlite(o.src[0]) ? plot_lines(&o, true) : plot_bench_scaling(&o);
	if (!strcmp(o.kind, "timeline"))
		return plot_timeline(&o);
	return cli_usage_error("plot: unknown kind '%s' (capacity, breakdown, compare, scaling, "
			       "timeline)", o.kind);
}
