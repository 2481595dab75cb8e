/* dpusim compare A B: two reports side by side, per variant and metric,
 * with the relative error of B against A; one-sided entries are listed.
 * Collective rows are matched per size (op, algo, ranks, bytes) and each
 * size is classed latency- or bandwidth-bound, so a calibration sees which
 * model parameter a disagreement points to. A measured row's time_s is the
 * median of its calls (dpusim-hw replay); their p10..p90 is shown beside it,
 * and whether the other report's time falls inside. Replays at different
 * --scale are refused: scale changes every training figure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/alloc.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "report/json.h"
#include "report/report.h"

/* Regime of a collective size, from the reference report's own algbw. */
enum regime { REG_NONE, REG_LAT, REG_BW, NREG };

struct row {
	const char *variant;
	char metric[64];
	bool has_a, has_b;
	double a, b;
	const rep_collective *coll; /* collective rows: A's (else B's) row */
	const rep_collective *side[2]; /* time_s rows: A's and B's (NULL: none) */
	bool is_time;               /* the collective's time_s (regime summary) */
	enum regime regime;
};

struct table {
	struct row *rows;
	size_t n, cap;
	double tol;        /* fraction; NAN: no tolerance given */
	bool colls_only;   /* --collectives-only: skip the scale-dependent metrics */
	bool ref_is_b;     /* regimes classed by B's rows (B simulated, A not) */
	double scale[2];   /* each report's replay scale (1: full size) */
};

static int add_row(struct table *t, const char *variant, const char *metric, bool has_a,
		   double a, bool has_b, double b)
{
	if (!has_a && !has_b)
		return 0;
	if (sim_grow(&t->rows, &t->cap, t->n + 1, sizeof *t->rows, 64))
		return SIM_ENOMEM;
	t->rows[t->n] = (struct row){ .variant = variant, .has_a = has_a, .has_b = has_b,
				      .a = a, .b = b };
	snprintf(t->rows[t->n].metric, sizeof t->rows[t->n].metric, "%s", metric);
	t->n++;
	return 0;
}

/* Relative error of b against a; both zero: 0; a zero alone: infinite. */
static double rel_err(double a, double b)
{
	if (a == b)
		return 0;
	return a == 0 ? INFINITY : (b - a) / fabs(a);
}

static bool beyond(const struct table *t, const struct row *r)
{
	return r->has_a && r->has_b && !isnan(t->tol) && fabs(rel_err(r->a, r->b)) > t->tol;
}

/* A value of variant v (NULL: absent) for metric index i of the row list:
 * scalar metrics, iteration_s mean/p50/p99, breakdown components, speedup. */
static bool stat_part(const rep_variant *v, const char *name, int part, double *out)
{
	rep_stat s;
	double x[3];
	if (!v || !rep_variant_stat(v, name, &s))
		return false;
	x[0] = s.mean, x[1] = s.p50, x[2] = s.p99;
	*out = x[part];
	return !isnan(*out);
}

/* A size is bandwidth-bound when its algbw is at least half the largest
 * size's of the same (op, algo, ranks) in the same report. With
 * t = alpha + n / beta, algbw reaches beta / 2 where the latency term equals
 * the transfer term: below that size latency dominates. The largest size
 * stands for beta; a group with one size has none to compare with.
 * One pass per group (reg[] starts REG_NONE, seen[] false), so a report of
 * thousands of sizes in a few groups costs linear time. */
static bool same_group(const rep_collective *x, const rep_collective *y)
{
	return !strcmp(x->op, y->op) && !strcmp(x->algo, y->algo) && x->ranks == y->ranks;
}

static void classify_all(const rep_variant *v, enum regime *reg, bool *seen)
{
	size_t n = rep_variant_ncollectives(v);
	for (size_t i = 0; i < n; i++) {
		const rep_collective *c = rep_variant_collective(v, i), *big = c;
		size_t members = 0;
		if (seen[i])
			continue;
		for (size_t j = i; j < n; j++) {
			const rep_collective *o = rep_variant_collective(v, j);
			if (!seen[j] && same_group(o, c) && (members++, o->bytes > big->bytes))
				big = o;
		}
		for (size_t j = i; j < n; j++) {
			const rep_collective *o = rep_variant_collective(v, j);
			if (seen[j] || !same_group(o, c))
				continue;
			seen[j] = true;
			if (members > 1 && big->algbw_GBps > 0)
				reg[j] = o->algbw_GBps >= 0.5 * big->algbw_GBps ? REG_BW : REG_LAT;
		}
	}
}

static bool same_size(const rep_collective *x, const rep_collective *y)
{
	return same_group(x, y) && x->bytes == y->bytes;
}

/* Rows time_s and busbw_GBps of one size; ca or cb NULL: one-sided. */
static int add_coll_pair(struct table *t, const char *name, const rep_collective *ca,
			 const rep_collective *cb, enum regime reg)
{
	const rep_collective *c = ca ? ca : cb;
	char key[64];
	int err = 0;
	for (int q = 0; !err && q < 2; q++) {
		snprintf(key, sizeof key, "%s.%s.%ur.%lluB.%s", c->op, c->algo, c->ranks,
			 (unsigned long long)c->bytes, q ? "busbw_GBps" : "time_s");
		double a = ca ? (q ? ca->busbw_GBps : ca->time_s) : 0;
		double b = cb ? (q ? cb->busbw_GBps : cb->time_s) : 0;
		err = add_row(t, name, key, ca != NULL, a, cb != NULL, b);
		if (!err) {
			t->rows[t->n - 1].coll = c;
			t->rows[t->n - 1].side[0] = q ? NULL : ca;
			t->rows[t->n - 1].side[1] = q ? NULL : cb;
			t->rows[t->n - 1].is_time = !q;
			t->rows[t->n - 1].regime = ca && cb ? reg : REG_NONE;
		}
	}
	return err;
}

/* The row of vb matching ca and not used yet, searched from *hint on (the
 * row after the last match: two reports usually list sizes in one order). */
static const rep_collective *match(const rep_collective *ca, const rep_variant *vb, bool *used,
				   size_t *hint, size_t *at)
{
	size_t nb = rep_variant_ncollectives(vb);
	for (size_t k = 0; k < nb; k++) {
		size_t j = (*hint + k) % nb;
		if (!used[j] && same_size(ca, rep_variant_collective(vb, j))) {
			used[j] = true;
			*hint = j + 1;
			*at = j;
			return rep_variant_collective(vb, j);
		}
	}
	return NULL;
}

/* Collective rows of a variant both reports hold, matched per size. */
static int add_coll_rows(struct table *t, const char *name, const rep_variant *va,
			 const rep_variant *vb)
{
	size_t na = rep_variant_ncollectives(va), nb = rep_variant_ncollectives(vb);
	size_t nr = t->ref_is_b ? nb : na, hint = 0, at = 0;
	bool *used = calloc(nb + 1, sizeof *used), *seen = calloc(nr + 1, sizeof *seen);
	enum regime *reg = calloc(nr + 1, sizeof *reg);
	int err = used && seen && reg ? 0 : SIM_ENOMEM;
	if (!err)
		classify_all(t->ref_is_b ? vb : va, reg, seen);
	for (size_t i = 0; !err && i < na; i++) {
		const rep_collective *ca = rep_variant_collective(va, i);
		const rep_collective *cb = match(ca, vb, used, &hint, &at);
		enum regime g = !cb ? REG_NONE : reg[t->ref_is_b ? at : i];
		err = add_coll_pair(t, name, ca, cb, g);
	}
	for (size_t j = 0; !err && j < nb; j++)
		if (!used[j])
			err = add_coll_pair(t, name, NULL, rep_variant_collective(vb, j), REG_NONE);
	free(used);
	free(seen);
	free(reg);
	return err;
}

static int add_variant_rows(struct table *t, const char *name, const rep_report *ra,
			    const rep_report *rb)
{
	const rep_variant *va = rep_find_variant(ra, name), *vb = rep_find_variant(rb, name);
	static const char *const parts[] = { "", ".p50", ".p99" };
	size_t nm, nb;
	const rep_metric_def *defs = rep_metric_defs(&nm);
	const char *const *bd = rep_breakdown_names(&nb);
	double a = 0, b = 0;
	char key[48];
	int err = 0;
	if (t->colls_only)
		return va && vb ? add_coll_rows(t, name, va, vb) : 0;
	for (size_t i = 0; !err && i < nm; i++) {
		if (defs[i].kind == REP_SCALAR) {
			bool ha = va && rep_variant_metric(va, defs[i].name, &a);
			bool hb = vb && rep_variant_metric(vb, defs[i].name, &b);
			err = add_row(t, name, defs[i].name, ha, a, hb, b);
			continue;
		}
		for (int p = 0; !err && p < 3; p++) {
			bool ha = stat_part(va, defs[i].name, p, &a);
			bool hb = stat_part(vb, defs[i].name, p, &b);
			snprintf(key, sizeof key, "%s%s", defs[i].name, parts[p]);
			err = add_row(t, name, key, ha, a, hb, b);
		}
	}
	for (size_t i = 0; !err && i < nb; i++) {
		bool ha = va && rep_variant_breakdown(va, bd[i], &a);
		bool hb = vb && rep_variant_breakdown(vb, bd[i], &b);
		snprintf(key, sizeof key, "breakdown_s.%s", bd[i]);
		err = add_row(t, name, key, ha, a, hb, b);
	}
	if (!err) {
		bool ha = va && rep_speedup(ra, name, &a), hb = vb && rep_speedup(rb, name, &b);
		err = add_row(t, name, "speedup", ha, a, hb, b);
	}
	if (!err && va && vb)
		err = add_coll_rows(t, name, va, vb);
	return err;
}

static int build_table(struct table *t, const rep_report *a, const rep_report *b)
{
	int err = 0;
	for (size_t i = 0; !err && i < rep_nvariants(a); i++)
		err = add_variant_rows(t, rep_variant_name(rep_variant_at(a, i)), a, b);
	for (size_t i = 0; !err && i < rep_nvariants(b); i++) {
		const char *name = rep_variant_name(rep_variant_at(b, i));
		if (!rep_find_variant(a, name))
			err = add_variant_rows(t, name, a, b);
	}
	return err;
}

static void fmt_num(char *buf, size_t len, bool has, double x)
{
	if (has)
		snprintf(buf, len, "%.6g", x);
	else
		snprintf(buf, len, "-");
}

static const char *const regime_name[NREG] = { "-", "latency-bound", "bandwidth-bound" };
/* The model parameters each regime's error points to (docs/calibration.md). */
static const char *const regime_hint[NREG] = {
	"", "per-step latency: nic.rdma_latency, host-costs.tcp_latency, kernel launch",
	"link rate: fabric.link_rate, nic.port_rate, per-connection caps"
};

struct regime_sum {
	size_t n[NREG];
	double sum[NREG], abs_sum[NREG];
};

/* Time errors of the matched collective sizes, per regime. */
static struct regime_sum sum_regimes(const struct table *t)
{
	struct regime_sum s = { { 0 }, { 0 }, { 0 } };
	for (size_t i = 0; i < t->n; i++) {
		const struct row *r = &t->rows[i];
		if (!r->is_time || !r->has_a || !r->has_b)
			continue;
		double e = rel_err(r->a, r->b);
		s.n[r->regime]++;
		s.sum[r->regime] += e;
		s.abs_sum[r->regime] += fabs(e);
	}
	return s;
}

static void print_regimes(const struct table *t)
{
	struct regime_sum s = sum_regimes(t);
	for (int g = REG_LAT; g < NREG; g++)
		if (s.n[g])
			printf("regime %s: %zu sizes, mean time_s rel_err %+.2f%%, mean |rel_err| "
			       "%.2f%%; points to %s\n", regime_name[g], s.n[g],
			       100 * s.sum[g] / (double)s.n[g], 100 * s.abs_sum[g] / (double)s.n[g],
			       regime_hint[g]);
	if (s.n[REG_NONE])
		printf("regime unclassified: %zu sizes (the only size of their op, algo and ranks "
		       "in %s: no largest size to compare algbw with)\n", s.n[REG_NONE],
		       t->ref_is_b ? "B" : "A");
	if (s.n[REG_LAT] + s.n[REG_BW])
		printf("regimes from %s's algbw: bandwidth-bound at >= 50%% of the largest size's\n",
		       t->ref_is_b ? "B" : "A");
}

/* Whether side k (0: A, 1: B) of r is a measured row with its spread. */
static bool has_spread(const struct row *r, int k)
{
	const rep_collective *c = r->side[k];
	return c && c->calls && !isnan(c->time_p10_s) && !isnan(c->time_p90_s);
}

static bool any_spread(const struct table *t, int k)
{
	for (size_t i = 0; i < t->n; i++)
		if (has_spread(&t->rows[i], k))
			return true;
	return false;
}

/* "  [B: 20 calls, p10..p90 1.2e-05..1.6e-05, A inside]" for the measured
 * side(s) of a time_s row, into buf ("" when neither has a spread). */
static void spread_text(const struct row *r, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int k = 0; k < 2 && len < n; k++) {
		const rep_collective *c = r->side[k];
		double other = k ? r->a : r->b;
		bool has_other = k ? r->has_a : r->has_b;
		int w;
		if (!has_spread(r, k))
			continue;
		w = snprintf(buf + len, n - len, "  [%c: %llu calls, p10..p90 %.4g..%.4g%s]",
			     k ? 'B' : 'A', (unsigned long long)c->calls, c->time_p10_s,
			     c->time_p90_s, !has_other ? ""
			     : other >= c->time_p10_s && other <= c->time_p90_s
			     ? (k ? ", A inside" : ", B inside") : (k ? ", A outside" : ", B outside"));
		len += w > 0 ? (size_t)w : 0;
	}
}

static void print_text(const struct table *t, const char *fa, const char *fb,
		       const rep_report *a, const rep_report *b)
{
	size_t shared = 0, over = 0, only_a = 0, only_b = 0, worst = 0;
	double worst_err = -1;
	printf("A: %s (%s)\nB: %s (%s)\n", fa, rep_source_name(rep_get_source(a)), fb,
	       rep_source_name(rep_get_source(b)));
	if (t->colls_only)
		printf("note: --collectives-only: per-size collective rows only (scale %g vs %g); "
		       "training metrics, breakdown and speedup are not compared\n", t->scale[0],
		       t->scale[1]);
	if (strcmp(rep_get_scenario(a)->name, rep_get_scenario(b)->name))
		printf("note: different scenarios ('%s' vs '%s')\n", rep_get_scenario(a)->name,
		       rep_get_scenario(b)->name);
	for (int k = 0; k < 2; k++)
		if (any_spread(t, k))
			printf("note: %s's collective time_s is the median of its calls (dpusim-hw "
			       "replay); [p10..p90] is their spread, and the relative error is "
			       "against the median\n", k ? "B" : "A");
	printf("%-16s %-40s %14s %14s %10s\n", "variant", "metric", "A", "B", "rel_err");
	for (size_t i = 0; i < t->n; i++) {
		const struct row *r = &t->rows[i];
		char sa[32], sb[32], se[32], sp[160];
		fmt_num(sa, sizeof sa, r->has_a, r->a);
		fmt_num(sb, sizeof sb, r->has_b, r->b);
		if (r->has_a && r->has_b) {
			double e = rel_err(r->a, r->b);
			snprintf(se, sizeof se, "%+.2f%%", 100 * e);
			shared++;
			over += beyond(t, r);
			if (fabs(e) > worst_err)
				worst_err = fabs(e), worst = i;
		} else {
			snprintf(se, sizeof se, "only in %s", r->has_a ? "A" : "B");
			only_a += r->has_a;
			only_b += r->has_b;
		}
		spread_text(r, sp, sizeof sp);
		printf("%-16s %-40s %14s %14s %10s%s%s%s%s\n", r->variant, r->metric, sa, sb, se,
		       beyond(t, r) ? "  beyond tolerance" : "", r->regime ? "  " : "",
		       r->regime ? regime_name[r->regime] : "", sp);
	}
	printf("summary: %zu shared", shared);
	if (shared)
		printf(", max |rel_err| %.2f%% (%s %s)", 100 * worst_err, t->rows[worst].variant,
		       t->rows[worst].metric);
	if (!isnan(t->tol))
		printf(", %zu beyond tolerance %g%%", over, 100 * t->tol);
	printf(", %zu only in A, %zu only in B\n", only_a, only_b);
	print_regimes(t);
}

static void json_num(bool has, double x)
{
	char buf[40];
	if (!has || !isfinite(x)) {
		fputs("null", stdout);
		return;
	}
	rep_format_double(buf, sizeof buf, x);
	fputs(buf, stdout);
}

/* , "b_calls": 20, "b_p10": ..., "b_p90": ... for each measured side. */
static void json_spread(const struct row *r)
{
	for (int k = 0; k < 2; k++) {
		const rep_collective *c = r->side[k];
		if (!has_spread(r, k))
			continue;
		printf(", \"%c_calls\": %llu, \"%c_p10\": ", k ? 'b' : 'a',
		       (unsigned long long)c->calls, k ? 'b' : 'a');
		json_num(true, c->time_p10_s);
		printf(", \"%c_p90\": ", k ? 'b' : 'a');
		json_num(true, c->time_p90_s);
	}
}

static void json_coll(const struct row *r)
{
	if (!r->coll)
		return;
	json_spread(r);
	fputs(", \"op\": ", stdout);
	json_put_str(stdout, r->coll->op);
	fputs(", \"algo\": ", stdout);
	json_put_str(stdout, r->coll->algo);
	printf(", \"ranks\": %u, \"bytes\": %llu, \"regime\": ", r->coll->ranks,
	       (unsigned long long)r->coll->bytes);
	if (r->regime)
		json_put_str(stdout, regime_name[r->regime]);
	else
		fputs("null", stdout);
}

static void json_regimes(const struct table *t)
{
	struct regime_sum s = sum_regimes(t);
	bool first = true;
	fputs(",\n  \"regimes\": [", stdout);
	for (int g = REG_LAT; g < NREG; g++) {
		if (!s.n[g])
			continue;
		fputs(first ? "\n    {\"regime\": " : ",\n    {\"regime\": ", stdout);
		first = false;
		json_put_str(stdout, regime_name[g]);
		printf(", \"sizes\": %zu, \"mean_rel_err\": ", s.n[g]);
		json_num(true, s.sum[g] / (double)s.n[g]);
		fputs(", \"mean_abs_rel_err\": ", stdout);
		json_num(true, s.abs_sum[g] / (double)s.n[g]);
		fputs(", \"points_to\": ", stdout);
		json_put_str(stdout, regime_hint[g]);
		fputs("}", stdout);
	}
	fputs(first ? "]" : "\n  ]", stdout);
}

static void print_json(const struct table *t, const char *fa, const char *fb)
{
	fputs("{\n  \"a\": ", stdout);
	json_put_str(stdout, fa);
	fputs(",\n  \"b\": ", stdout);
	json_put_str(stdout, fb);
	fputs(",\n  \"tolerance\": ", stdout);
	json_num(!isnan(t->tol), t->tol);
	fputs(",\n  \"scale_a\": ", stdout);
	json_num(true, t->scale[0]);
	fputs(",\n  \"scale_b\": ", stdout);
	json_num(true, t->scale[1]);
	printf(",\n  \"collectives_only\": %s", t->colls_only ? "true" : "false");
	fputs(",\n  \"rows\": [", stdout);
	for (size_t i = 0; i < t->n; i++) {
		const struct row *r = &t->rows[i];
		fputs(i ? ",\n    {\"variant\": " : "\n    {\"variant\": ", stdout);
		json_put_str(stdout, r->variant);
		fputs(", \"metric\": ", stdout);
		json_put_str(stdout, r->metric);
		fputs(", \"a\": ", stdout);
		json_num(r->has_a, r->a);
		fputs(", \"b\": ", stdout);
		json_num(r->has_b, r->b);
		fputs(", \"rel_err\": ", stdout);
		json_num(r->has_a && r->has_b, rel_err(r->a, r->b));
		printf(", \"beyond_tolerance\": %s", beyond(t, r) ? "true" : "false");
		json_coll(r);
		fputs("}", stdout);
	}
	fputs(t->n ? "\n  ]" : "]", stdout);
	json_regimes(t);
	fputs("\n}\n", stdout);
}

/* "10%" -> 0.10. Only a percentage is accepted, so 10 and 0.1 cannot be
 * confused. */
static bool parse_percent(const char *s, double *out)
{
	size_t n = strlen(s);
	char buf[64];
	if (n < 2 || n >= sizeof buf || s[n - 1] != '%')
		return false;
	memcpy(buf, s, n - 1);
	buf[n - 1] = '\0';
	if (!cli_parse_double(buf, out) || !isfinite(*out) || *out < 0)
		return false;
	*out /= 100;
	return true;
}

/* The replay scale a report records (dpusim-hw replay --scale S writes the
 * info entry replay.scale); a report without it is full size. */
static int report_scale(const char *path, const rep_report *r, double *out)
{
	const char *v = rep_info(r, "replay.scale");
	*out = 1;
	if (v && (!cli_parse_double(v, out) || !(*out > 0) || *out > 1)) {
		cli_error("%s: info replay.scale '%s' is not a fraction 0 < S <= 1", path, v);
		return CLI_USAGE;
	}
	return 0;
}

/* Scale changes every training figure and the gradient all-reduce's size:
 * reports of different scales compare only per-size collective rows, and
 * only when asked to. */
static int check_scales(struct table *t, const char *const files[2], const rep_report *a,
			const rep_report *b)
{
	int rc = report_scale(files[0], a, &t->scale[0]);
	if (rc || (rc = report_scale(files[1], b, &t->scale[1])))
		return rc;
	if (t->scale[0] == t->scale[1] || t->colls_only)
		return 0;
	cli_error("%s is at scale %g, %s at scale %g (replay.scale; 1 is full size): "
		  "iteration time, throughput, breakdown and the gradient all-reduce's size "
		  "change with scale, so these do not compare; compare reports of one scale, "
		  "or pass --collectives-only to compare only the per-size collective rows",
		  files[0], t->scale[0], files[1], t->scale[1]);
	return CLI_USAGE;
}

int cmd_compare(int argc, char **argv)
{
	const char *files[2] = { NULL, NULL };
	struct table t = { .tol = NAN };
	rep_report *a = NULL, *b = NULL;
	bool json = false;
	int nfiles = 0, rc;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--collectives-only"))
			t.colls_only = true;
		else if (!strcmp(argv[i], "--tolerance")) {
			if (++i == argc || !parse_percent(argv[i], &t.tol))
				return cli_usage_error("--tolerance wants a percentage such as 10%%");
		} else if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("compare: unknown option '%s'", argv[i]);
		else if (nfiles == 2)
			return cli_usage_error("compare takes two reports, got a third: '%s'", argv[i]);
		else
			files[nfiles++] = argv[i];
	}
	if (nfiles != 2)
		return cli_usage_error("compare wants two reports (see 'dpusim compare --help')");
	if ((rc = cli_read_report(files[0], &a)) || (rc = cli_read_report(files[1], &b)) ||
	    (rc = check_scales(&t, files, a, b)) ||
	    (t.ref_is_b = rep_get_source(a) != REP_SIM && rep_get_source(b) == REP_SIM,
	     build_table(&t, a, b) && (cli_error("out of memory"), rc = CLI_USAGE))) {
		rep_free(a);
		rep_free(b);
		free(t.rows);
		return rc;
	}
	if (json)
		print_json(&t, files[0], files[1]);
	else
		print_text(&t, files[0], files[1], a, b);
	rc = CLI_OK;
	for (size_t i = 0; i < t.n; i++)
		if (beyond(&t, &t.rows[i]))
			rc = CLI_FINDING;
	rep_free(a);
	rep_free(b);
	free(t.rows);
	return rc;
}
