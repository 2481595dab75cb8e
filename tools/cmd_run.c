/* dpusim run: simulate every variant of a scenario and show them side by
 * side (or the report as JSON, or the resolved scenario with --dump). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/err.h"
#include "report/atomic.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "report/db.h"
#include "tools/human.h"
#include "tools/progress.h"
#include "tools/run.h"
#include "tools/scn_cli.h"
#include "tools/sweep.h"

typedef struct run_args {
	scn_cli c;
	bool dump, json;
	const char *out_dir, *db_path;
	run_opts ro;
} run_args;

static int parse_args(int argc, char **argv, run_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned long long n;
		int taken = scn_cli_option(&a->c, argc, argv, &i);
		if (taken < 0)
			return CLI_USAGE;
		if (taken)
			continue;
		if (!strcmp(argv[i], "--dump"))
			a->dump = true;
		else if (!strcmp(argv[i], "--json"))
			a->json = true;
		else if (!strcmp(argv[i], "-o") && v)
			a->out_dir = argv[++i];
		else if (!strcmp(argv[i], "--db") && v)
			a->db_path = argv[++i];
		else if (!strcmp(argv[i], "--trace") && v)
			a->ro.trace_path = argv[++i];
		else if (!strcmp(argv[i], "--seed") && cli_parse_u64(v, &n))
			a->ro.has_seed = true, a->ro.seed = n, i++;
		else if (!strcmp(argv[i], "--replications") && cli_parse_u64(v, &n) && n > 0 &&
			 n <= 10000)
			a->ro.replications = (int)n, i++;
		else if (!strcmp(argv[i], "--jobs") && cli_parse_u64(v, &n) && n > 0 && n <= 1024)
			a->ro.jobs = (int)n, i++;
		else if (!strcmp(argv[i], "--jobs"))
			return cli_usage_error("run: --jobs wants a count from 1 to 1024, not '%s'",
					       v ? v : "(nothing)");
		else if (!strcmp(argv[i], "--seed"))
			return cli_usage_error("run: --seed wants a whole number >= 0, not '%s'",
					       v ? v : "(nothing)");
		else if (!strcmp(argv[i], "--replications"))
			return cli_usage_error("run: --replications wants a count from 1 to 10000 (as "
					       "in a scenario), not '%s'", v ? v : "(nothing)");
		else if (!v && (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--db") ||
				!strcmp(argv[i], "--trace")))
			return cli_usage_error("run: %s needs a value (see 'dpusim run --help')",
					       argv[i]);
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("run: unknown option '%s' (see 'dpusim run --help')",
					       argv[i]);
		else if (a->c.file)
			return cli_usage_error("run: one scenario file at a time ('%s' and '%s')",
					       a->c.file, argv[i]);
		else
			a->c.file = argv[i];
	}
	if (!a->c.file)
		return cli_usage_error("run: no scenario file given (usage: dpusim run FILE)");
	return CLI_OK;
}

/* ---- the side-by-side table ---- */

/* Text for one value: tools/human.h's formatters and the two below. */
typedef char *(*fmt_fn)(char *buf, size_t n, double x);

static char *fmt_kwh(char *buf, size_t n, double x)
{
	char num[48];
	snprintf(buf, n, "%s kWh", hum_number(num, sizeof num, x));
	return buf;
}

static char *fmt_speedup(char *buf, size_t n, double x)
{
	snprintf(buf, n, "%.3fx", x);
	return buf;
}

static void cell(char *buf, size_t n, const rep_variant *v, const char *metric, fmt_fn fmt)
{
	double x;
	rep_stat st;
	if (rep_variant_metric(v, metric, &x))
		fmt(buf, n, x);
	else if (rep_variant_stat(v, metric, &st))
		fmt(buf, n, st.mean);
	else
		snprintf(buf, n, "-");
}

static void row(const rep_report *r, const char *label, const char *metric, fmt_fn fmt)
{
	char buf[64];
	bool any = false;
	for (size_t i = 0; i < rep_nvariants(r); i++) {
		double x;
		rep_stat st;
		any |= rep_variant_metric(rep_variant_at(r, i), metric, &x) ||
		       rep_variant_stat(rep_variant_at(r, i), metric, &st);
	}
	if (!any)
		return;
	printf("%-26s", label);
	for (size_t i = 0; i < rep_nvariants(r); i++) {
		cell(buf, sizeof buf, rep_variant_at(r, i), metric, fmt);
		printf(" %18s", buf);
	}
	putchar('\n');
}

static void stat_rows(const rep_report *r)
{
	static const struct { const char *label; int which; } rows[] = {
		{ "iteration (mean)", 0 }, { "  95% CI (+-)", 1 },
		{ "  p50", 2 }, { "  p99", 3 },
	};
	for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
		printf("%-26s", rows[k].label);
		for (size_t i = 0; i < rep_nvariants(r); i++) {
			rep_stat st;
			double x = NAN;
			char buf[32];
			if (rep_variant_stat(rep_variant_at(r, i), "iteration_s", &st))
				x = rows[k].which == 0 ? st.mean : rows[k].which == 1 ? st.ci95
				    : rows[k].which == 2 ? st.p50 : st.p99;
			printf(" %18s", hum_duration(buf, sizeof buf, x));
		}
		putchar('\n');
	}
}

/* Said once under the iteration rows: without noise every replication
 * simulates the same thing, so a zero interval is no measurement of spread.
 * Only when the replications did come out identical (every variant's
 * interval zero), never assumed from the scenario alone. */
static void replication_note(const rep_report *r, const scn_scenario *s, int reps)
{
	const scn_noise *nz = &s->noise;
	if (reps < 2 || nz->gpu_cv > 0 || nz->slow_node_fraction > 0 || nz->os_jitter > 0 ||
	    nz->os_jitter_delay_s > 0)
		return;
	for (size_t i = 0; i < rep_nvariants(r); i++) {
		rep_stat st;
		if (!rep_variant_stat(rep_variant_at(r, i), "iteration_s", &st) || st.ci95 != 0)
			return;
	}
	printf("  (no noise configured: the %d replications are identical)\n", reps);
}

/* Whether any variant has part `name` of the breakdown. */
static bool has_part(const rep_report *r, const char *name)
{
	double x;
	for (size_t i = 0; i < rep_nvariants(r); i++)
		if (rep_variant_breakdown(rep_variant_at(r, i), name, &x))
			return true;
	return false;
}

/* The breakdown's rows under their heading; nothing where no variant has
 * one (a collective or p2p benchmark: its times are its own rows). */
static void breakdown_rows(const rep_report *r)
{
	size_t n;
	const char *const *names = rep_breakdown_names(&n);
	bool any = false;
	for (size_t k = 0; k < n && !any; k++)
		any = has_part(r, names[k]);
	if (any)
		printf("breakdown of an iteration\n");
	for (size_t k = 0; k < n; k++) {
		char label[40];
		if (!has_part(r, names[k]))
			continue;
		snprintf(label, sizeof label, "  %s", names[k]);
		printf("%-26s", label);
		for (size_t i = 0; i < rep_nvariants(r); i++) {
			double x;
			char buf[32] = "-";
			if (rep_variant_breakdown(rep_variant_at(r, i), names[k], &x))
				hum_duration(buf, sizeof buf, x);
			printf(" %18s", buf);
		}
		putchar('\n');
	}
}

/* A p2p benchmark's row (tools/run_p2p.c): op sendrecv, algo perftest's
 * program. Printed in perftest's units by p2p_rows, not with the
 * collectives' bus bandwidth. */
static bool is_p2p_row(const rep_collective *c)
{
	return !strcmp(c->op, "sendrecv") && !strncmp(c->algo, "ib_", 3);
}

/* The k-th collective of v with this op and size, counting repeats, or NULL. */
static const rep_collective *coll_match(const rep_variant *v, const char *op, uint64_t bytes,
					size_t occ)
{
	for (size_t j = 0; j < rep_variant_ncollectives(v); j++) {
		const rep_collective *c = rep_variant_collective(v, j);
		if (c->bytes == bytes && !strcmp(c->op, op) && !is_p2p_row(c) && occ-- == 0)
			return c;
	}
	return NULL;
}

/* How many collectives before index k of v share its op and size. */
static size_t coll_occurrence(const rep_variant *v, size_t k)
{
	const rep_collective *c = rep_variant_collective(v, k);
	size_t occ = 0;
	for (size_t j = 0; j < k; j++) {
		const rep_collective *p = rep_variant_collective(v, j);
		occ += p->bytes == c->bytes && !strcmp(p->op, c->op) && !is_p2p_row(p);
	}
	return occ;
}

/* Widest variant name, for the collective table's variant column. */
static int variant_width(const rep_report *r)
{
	size_t w = strlen("variant");
	for (size_t i = 0; i < rep_nvariants(r); i++) {
		size_t l = strlen(rep_variant_name(rep_variant_at(r, i)));
		w = l > w ? l : w;
	}
	return (int)(w > 40 ? 40 : w);
}

/* The variants that ran collective c0 (op, size, repeat occ), one line each
 * with the algorithm that variant chose: variants may choose differently. */
static void collective_group(const rep_report *r, const rep_collective *c0, size_t occ, int w)
{
	char size[32], bw[48], num[32], t[32];
	hum_bytes(size, sizeof size, c0->bytes);
	for (size_t j = 0; j < rep_nvariants(r); j++) {
		const rep_variant *v = rep_variant_at(r, j);
		const rep_collective *c = coll_match(v, c0->op, c0->bytes, occ);
		if (!c)
			continue;
		snprintf(bw, sizeof bw, "%s GB/s", hum_number(num, sizeof num, c->busbw_GBps));
		printf("%-12s %10s  %-*s  %-8s %14s %12s\n", c->op, size, w, rep_variant_name(v),
		       c->algo, bw, hum_duration(t, sizeof t, c->time_s));
	}
}

/* One line per collective and variant, grouped by (op, size, repeat) in the
 * order first seen: columns of different jobs list different collectives.
 * One algorithm column says what each variant ran. */
static void collective_rows(const rep_report *r)
{
	size_t nv = rep_nvariants(r);
	bool any = false;
	int w = variant_width(r);
	for (size_t i = 0; i < nv; i++)
		for (size_t k = 0; k < rep_variant_ncollectives(rep_variant_at(r, i)); k++)
			any |= !is_p2p_row(rep_variant_collective(rep_variant_at(r, i), k));
	if (!any)
		return;
	printf("\n%-12s %10s  %-*s  %-8s %14s %12s\n", "collective", "size", w, "variant", "algo",
	       "busbw", "time");
	for (size_t i = 0; i < nv; i++) {
		const rep_variant *vi = rep_variant_at(r, i);
		for (size_t k = 0; k < rep_variant_ncollectives(vi); k++) {
			const rep_collective *c0 = rep_variant_collective(vi, k);
			size_t occ = coll_occurrence(vi, k);
			bool seen = is_p2p_row(c0);
			for (size_t e = 0; e < i && !seen; e++)
				seen = coll_match(rep_variant_at(r, e), c0->op, c0->bytes, occ) != NULL;
			if (!seen)
				collective_group(r, c0, occ, w);
		}
	}
}

/* A p2p benchmark's rows as perftest prints them: bandwidth in MB/s of
 * 2^20 bytes and in Gb/s (--report_gbits, 10^9 bits), and the time: a
 * latency test's typical latency, a bandwidth test's time per message. */
static void p2p_rows(const rep_report *r)
{
	int w = variant_width(r);
	bool head = false;
	char size[32], mb[32], gb[32], t[32];
	for (size_t i = 0; i < rep_nvariants(r); i++) {
		const rep_variant *v = rep_variant_at(r, i);
		for (size_t k = 0; k < rep_variant_ncollectives(v); k++) {
			const rep_collective *c = rep_variant_collective(v, k);
			if (!is_p2p_row(c))
				continue;
			if (!head)
				printf("\n%-12s %10s  %-*s  %12s %10s %12s\n", "perftest", "size", w,
				       "variant", "BW (MB/s)", "Gb/s", "time"), head = true;
			hum_bytes(size, sizeof size, c->bytes);
			printf("%-12s %10s  %-*s  %12s %10s %12s\n", c->algo, size, w,
			       rep_variant_name(v),
			       hum_number(mb, sizeof mb, c->algbw_GBps * 1e9 / 1048576),
			       hum_number(gb, sizeof gb, c->algbw_GBps * 8),
			       hum_duration(t, sizeof t, c->time_s));
		}
	}
}

/* How the table writes a metric of this unit (the report's metric list):
 * rates and counts as numbers. */
static fmt_fn fmt_of(const char *unit)
{
	if (!strcmp(unit, "fraction"))
		return hum_percent;
	if (!strcmp(unit, "s"))
		return hum_duration;
	if (!strcmp(unit, "kWh"))
		return fmt_kwh;
	if (!strcmp(unit, "USD"))
		return hum_usd;
	return hum_number;
}

/* A row per scalar metric, in the report's order, each under its label; a
 * row no variant has is left out. */
static void metric_rows(const rep_report *r)
{
	size_t n;
	const rep_metric_def *defs = rep_metric_defs(&n);
	for (size_t k = 0; k < n; k++)
		if (defs[k].kind == REP_SCALAR)
			row(r, defs[k].label, defs[k].name, fmt_of(defs[k].unit));
}

static void print_table(const rep_report *r, const scn_scenario *s, int reps)
{
	const rep_scenario *sc = rep_get_scenario(r);
	printf("scenario %s (seed %llu)\n\n%-26s", sc->name, (unsigned long long)sc->seed, "");
	for (size_t i = 0; i < rep_nvariants(r); i++)
		printf(" %18s", rep_variant_name(rep_variant_at(r, i)));
	putchar('\n');
	size_t nkeys;
	const char *const *keys = rep_offload_keys(&nkeys);
	for (size_t j = 0; j < nkeys; j++) {
		const char *k = keys[j];
		printf("%-26s", k);
		for (size_t i = 0; i < rep_nvariants(r); i++) {
			const char *o = rep_variant_offload(rep_variant_at(r, i), k);
			printf(" %18s", o ? o : "-");
		}
		putchar('\n');
	}
	stat_rows(r);
	replication_note(r, s, reps);
	metric_rows(r);
	breakdown_rows(r);
	printf("%-26s", "speedup over first");
	for (size_t i = 0; i < rep_nvariants(r); i++) {
		double x;
		char buf[32] = "-";
		if (rep_speedup(r, rep_variant_name(rep_variant_at(r, i)), &x))
			fmt_speedup(buf, sizeof buf, x);
		printf(" %18s", buf);
	}
	putchar('\n');
	collective_rows(r);
	p2p_rows(r);
	if (rep_ninfo(r))
		putchar('\n');
	for (size_t i = 0; i < rep_ninfo(r); i++) {
		const char *k, *v;
		rep_info_at(r, i, &k, &v);
		printf("%s: %s\n", k, v);
	}
}

/* ---- outputs ---- */

static int write_outputs(const run_args *a, rep_report *rep)
{
	char err[512], path[4096];
	sweep sw = { .file = a->c.file };
	int rc = sweep_hash_file(&sw);
	if (rc)
		return CLI_USAGE;
	rep_scenario sc = *rep_get_scenario(rep);
	sc.sha256 = sw.sha256;
	rc = rep_set_scenario(rep, &sc);
	if (!rc && a->out_dir) {
		if (mkdir(a->out_dir, 0777) && errno != EEXIST) {
			cli_error("cannot create '%s': %s", a->out_dir, strerror(errno));
			rc = SIM_EIO;
		} else if (!(rc = cli_path(path, sizeof path, "%s/report.json", a->out_dir))) {
			/* (a name too long was refused by check_outputs, before the run) */
			bool existed = access(path, F_OK) == 0;
			if ((rc = rep_write_file(rep, path, err, sizeof err)))
				cli_error("%s", err);
			else
				fprintf(stderr, "dpusim: wrote report %s%s\n", path,
					existed ? " (replaced the file there)" : "");
		}
	}
	if (!rc && a->db_path) {
		db *d = NULL;
		int64_t id;
		bool added = true;
		if ((rc = db_make_parent(a->db_path, err, sizeof err)) ||
		    (rc = db_open(a->db_path, &d, err, sizeof err)) ||
		    (rc = db_store_report(d, rep, sw.text, &id, &added, err, sizeof err)))
			cli_error("%s", err);
		else if (!added)  /* said: with --profile the figures may differ from the stored */
			fprintf(stderr, "dpusim: note: %s already holds this run as run %lld (same "
				"scenario file, seed and source); not stored again\n", a->db_path,
				(long long)id);
		db_close(d);
	}
	free(sw.text);
	return rc ? CLI_USAGE : CLI_OK;
}

/* Before the simulation: the outputs can be written and none would
 * replace an input (the scenario, a profile, the database). */
static int check_outputs(const run_args *a, const scn_scenario *s, diag *d)
{
	char path[4096], err[512];
	if (atomic_protect_input(a->db_path))
		return cli_usage_error("out of memory");
	/* --db is opened after the run: whether it can be, said before it */
	if (a->db_path && db_check_target(a->db_path, err, sizeof err))
		return cli_usage_error("%s", err);
	if (a->out_dir && cli_path(path, sizeof path, "%s/report.json", a->out_dir))
		return CLI_USAGE;
	if (!run_check_outputs(s, &a->ro, a->out_dir ? path : NULL, d))
		return CLI_OK;
	for (size_t i = 0; i < diag_count(d) && i < DIAG_MAX; i++)
		cli_error("%s", diag_msg(d, i));
	return CLI_USAGE;
}

int cmd_run(int argc, char **argv)
{
	run_args a = { .c = { 0 } };
	scn_scenario *s = NULL;
	rep_report *rep = NULL;
	diag *d;
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	if ((rc = scn_cli_load(&a.c, &s)))
		return rc;
	if (a.dump) {
		scn_dump(s, stdout);
		scn_free(s);
		return CLI_OK;
	}
	if (!(d = diag_new())) {
		scn_free(s);
		return cli_usage_error("out of memory");
	}
	if (s->sweep.naxes) /* a newcomer's `run capacity.yaml` is one point, said */
		fprintf(stderr, "dpusim: note: '%s' has a sweep of %zu points; run simulates the "
			"file as written, 'dpusim sweep %s --db FILE' runs the points\n", a.c.file,
			s->sweep.points, a.c.file);
	a.ro.progress = !a.json && isatty(STDERR_FILENO) ? stderr : NULL;
	progress_start();
	a.ro.written = stderr;
	if ((rc = check_outputs(&a, s, d))) {
		/* messages printed */
	} else if (run_scenario(s, &a.ro, &rep, d)) {
		for (size_t i = 0; i < diag_count(d) && i < DIAG_MAX; i++) /* placed: as check says it */
			if (diag_placed(diag_msg(d, i)))
				fprintf(stderr, "%s\n", diag_msg(d, i));
			else
				cli_error("%s: %s", a.c.file, diag_msg(d, i));
		rc = CLI_USAGE;
	} else if (!(rc = write_outputs(&a, rep))) {
		if (a.json)
			rep_write_json(rep, stdout);
		else
			print_table(rep, s, a.ro.replications > 0 ? a.ro.replications
							 : s->replications > 0 ? s->replications : 1);
	}
	rep_free(rep);
	diag_free(d);
	scn_free(s);
	return rc;
}
