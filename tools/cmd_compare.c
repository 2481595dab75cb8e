/* dpusim compare A B: two reports side by side, per variant and metric,
 * with the relative error of B against A; one-sided entries are listed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/json.h"
#include "tools/report.h"

struct row {
	const char *variant;
	char metric[48];
	bool has_a, has_b;
	double a, b;
};

struct table {
	struct row *rows;
	size_t n, cap;
	double tol;        /* fraction; NAN: no tolerance given */
};

static int add_row(struct table *t, const char *variant, const char *metric, bool has_a,
		   double a, bool has_b, double b)
{
	if (!has_a && !has_b)
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct row *p = realloc(t->rows, cap * sizeof *p);
		if (!p)
			return SIM_ENOMEM;
		t->rows = p;
		t->cap = cap;
	}
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

static void print_text(const struct table *t, const char *fa, const char *fb,
		       const rep_report *a, const rep_report *b)
{
	size_t shared = 0, over = 0, only_a = 0, only_b = 0, worst = 0;
	double worst_err = -1;
	printf("A: %s (%s)\nB: %s (%s)\n", fa, rep_source_name(rep_get_source(a)), fb,
	       rep_source_name(rep_get_source(b)));
	if (strcmp(rep_get_scenario(a)->name, rep_get_scenario(b)->name))
		printf("note: different scenarios ('%s' vs '%s')\n", rep_get_scenario(a)->name,
		       rep_get_scenario(b)->name);
	printf("%-16s %-28s %14s %14s %10s\n", "variant", "metric", "A", "B", "rel_err");
	for (size_t i = 0; i < t->n; i++) {
		const struct row *r = &t->rows[i];
		char sa[32], sb[32], se[32];
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
		printf("%-16s %-28s %14s %14s %10s%s\n", r->variant, r->metric, sa, sb, se,
		       beyond(t, r) ? "  beyond tolerance" : "");
	}
	printf("summary: %zu shared", shared);
	if (shared)
		printf(", max |rel_err| %.2f%% (%s %s)", 100 * worst_err, t->rows[worst].variant,
		       t->rows[worst].metric);
	if (!isnan(t->tol))
		printf(", %zu beyond tolerance %g%%", over, 100 * t->tol);
	printf(", %zu only in A, %zu only in B\n", only_a, only_b);
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

static void print_json(const struct table *t, const char *fa, const char *fb)
{
	fputs("{\n  \"a\": ", stdout);
	json_put_str(stdout, fa);
	fputs(",\n  \"b\": ", stdout);
	json_put_str(stdout, fb);
	fputs(",\n  \"tolerance\": ", stdout);
	json_num(!isnan(t->tol), t->tol);
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
		printf(", \"beyond_tolerance\": %s}", beyond(t, r) ? "true" : "false");
	}
	fputs(t->n ? "\n  ]\n}\n" : "]\n}\n", stdout);
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

static int load(const char *path, rep_report **r)
{
	char err[1024];
	if (rep_read_file(path, r, err, sizeof err)) {
		cli_error("%s", err);
		return CLI_USAGE;
	}
	return 0;
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
	if ((rc = load(files[0], &a)) || (rc = load(files[1], &b)) ||
	    (build_table(&t, a, b) && (cli_error("out of memory"), rc = CLI_USAGE))) {
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
