/* dpusim calibrate: fits hardware profiles to `dpusim-hw bench` reports.
 * Groups the reports' benchmarks into series (same name, transport,
 * memory, device, ranks; swept over bytes), fits each with tools/calib.c,
 * prints every fit with its residual at each size, and writes one profile
 * per kind (host-costs, nic, storage, cpu, gpu) whose every value names
 * the measurement it came from and its uncertainty. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "models/profile.h"
#include "models/units.h"
#include "sim/err.h"
#include "tools/calib.h"
#include "report/atomic.h"
#include "tools/calib_out.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/calib_run.h"
#include "report/report.h"


/* ---- human-readable figures for messages and sources ---- */

const char *cal_fmt_time(double s, char *b, size_t n)
{
	double a = fabs(s);
	if (!isfinite(s))
		snprintf(b, n, "n/a");
	else if (a < 1e-6)
		snprintf(b, n, "%.3g ns", s * 1e9);
	else if (a < 1e-3)
		snprintf(b, n, "%.4g us", s * 1e6);
	else if (a < 1)
		snprintf(b, n, "%.4g ms", s * 1e3);
	else
		snprintf(b, n, "%.4g s", s);
	return b;
}

const char *cal_fmt_bytes(double x, char *b, size_t n)
{
	if (x >= 1048576 && fmod(x, 1048576) == 0)
		snprintf(b, n, "%.0f MiB", x / 1048576);
	else if (x >= 1024 && fmod(x, 1024) == 0)
		snprintf(b, n, "%.0f KiB", x / 1024);
	else if (x >= 1024)
		snprintf(b, n, "%.4g KiB", x / 1024);
	else
		snprintf(b, n, "%.4g B", x);
	return b;
}

/* "x +- se" in the same format, or "x (no error estimate: N points)". */
const char *cal_fmt_pm(double x, double se, size_t npts,
			  const char *(*f)(double, char *, size_t), char *b, size_t n)
{
	char v[32], e[32];
	if (isnan(se))
		snprintf(b, n, "%s (+- n/a: %zu point%s)", f(x, v, sizeof v), npts,
			 npts == 1 ? "" : "s");
	else
		snprintf(b, n, "%s +- %s", f(x, v, sizeof v), f(se, e, sizeof e));
	return b;
}

const char *cal_fmt_rate(double bps, char *b, size_t n)
{
	snprintf(b, n, "%.4g GB/s", bps / 1e9);
	return b;
}

const char *cal_fmt_num(double x, char *b, size_t n)
{
	snprintf(b, n, "%.4g", x);
	return b;
}

/* "5 sizes 8 B..32 KiB" */
const char *cal_fmt_span(const series *s, char *b, size_t n)
{
	char lo[24], hi[24];
	snprintf(b, n, "%zu size%s %s..%s", s->n, s->n == 1 ? "" : "s",
		 cal_fmt_bytes(s->bytes[0], lo, sizeof lo), cal_fmt_bytes(s->bytes[s->n - 1], hi, sizeof hi));
	return b;
}

/* ---- reading the bench reports ---- */

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_series(const rep_benchmark *a, const rep_benchmark *b)
{
	return !strcmp(a->name, b->name) && !strcmp(a->transport, b->transport) &&
	       same_str(a->memory, b->memory) && same_str(a->device, b->device) &&
	       a->ranks == b->ranks && !strcmp(a->unit, b->unit);
}

/* Adds b to its series, keeping each series sorted by bytes. */
static int add_point(cal_run *r, size_t file, const rep_benchmark *b)
{
	series *s = NULL;
	size_t i;
	for (i = 0; i < r->ns && !s; i++)
		if (r->s[i].file == file && same_series(r->s[i].b0, b))
			s = &r->s[i];
	if (!s) {
		if (r->ns == MAX_SERIES)
			return cli_usage_error("%s: more than %d benchmark series", r->files[file].path,
					       MAX_SERIES);
		s = &r->s[r->ns++];
		*s = (series){ .b0 = b, .file = file };
	}
	if (s->n == CAL_MAX_POINTS)
		return cli_usage_error("%s: series '%s' has more than %d points", r->files[file].path,
				       b->name, CAL_MAX_POINTS);
	for (i = s->n; i > 0 && s->bytes[i - 1] > (double)b->bytes; i--)
		s->bytes[i] = s->bytes[i - 1], s->typ[i] = s->typ[i - 1];
	s->bytes[i] = (double)b->bytes;
	s->typ[i] = !strcmp(b->unit, "s") && !isnan(b->p50) ? b->p50 : b->value;
	s->n++;
	return CLI_OK;
}

static void describe_file(bench_file *f)
{
	const char *t = rep_info(f->rep, "transport"), *n = rep_info(f->rep, "ranks");
	const char *h = rep_info(f->rep, "host"), *hz = rep_info(f->rep, "cpu_hz");
	char day[16] = "unknown date";
	struct stat st;
	struct tm tm;
	if (!stat(f->path, &st) && gmtime_r(&st.st_mtime, &tm))
		strftime(day, sizeof day, "%Y-%m-%d", &tm);
	snprintf(f->origin, sizeof f->origin, "%s (%s%s%s ranks, host '%s', file of %s)", f->path,
		 t ? t : "", t ? ", " : "", n ? n : "?", h ? h : "?", day);
	f->hz = hz && cli_parse_double(hz, &f->hz) && f->hz > 0 ? f->hz : NAN;
	f->hz_src = rep_info(f->rep, "cpu_hz_source");
}

static int read_files(cal_run *r)
{
	char why[1024];
	size_t npoints = 0;
	for (size_t f = 0; f < r->nfiles; f++) {
		bench_file *bf = &r->files[f];
		if (atomic_protect_input(bf->path)) /* no profile written over a bench file */
			return cli_usage_error("out of memory");
		if (rep_read_file(bf->path, &bf->rep, why, sizeof why))
			return cli_usage_error("%s", why);
		describe_file(bf);
		for (size_t i = 0; i < rep_nbenchmarks(bf->rep); i++, npoints++)
			if (add_point(r, f, rep_benchmark_at(bf->rep, i)))
				return CLI_USAGE;
	}
	if (!npoints)
		return cli_usage_error("%s: no benchmarks in the report (write one with "
				       "'mpirun -np N dpusim-hw bench -o FILE')", r->files[0].path);
	return CLI_OK;
}

/* The first series called `name` on `transport` (NULL: any) in unit `unit`. */
series *cal_find_series(cal_run *r, const char *name, const char *transport,
			   const char *unit)
{
	for (size_t i = 0; i < r->ns; i++) {
		const rep_benchmark *b = r->s[i].b0;
		if (!strcmp(b->name, name) && (!transport || !strcmp(b->transport, transport)) &&
		    !strcmp(b->unit, unit))
			return &r->s[i];
	}
	return NULL;
}

/* ---- output documents ---- */

cal_doc *cal_doc_of(cal_run *r, profile_kind k)
{
	char name[200], summary[400];
	if (r->doc[k])
		return r->doc[k];
	snprintf(name, sizeof name, "%s-%s", r->name, profile_kind_name(k));
	snprintf(summary, sizeof summary, "%s fitted by dpusim calibrate from %s%s",
		 profile_kind_name(k), r->files[0].path, r->nfiles > 1 ? " and others" : "");
	r->doc[k] = cal_doc_new(k, name, summary);
	if (!r->doc[k]) {
		cli_error("out of memory");
		exit(CLI_USAGE);
	}
	return r->doc[k];
}

/* Gives a field, or lists it as missing when the fitted value is not
 * physical (negative, out of the loader's range), saying why on stderr. */
void cal_give_or_miss(cal_run *r, profile_kind k, const char *field, double v,
			 const char *source)
{
	int rc = cal_doc_give(cal_doc_of(r, k), field, v, "%s", source);
	if (rc == SIM_ERANGE) {
		fprintf(stderr, "dpusim: warning: %s.%s: fitted value %g is not physical; listed "
			"as missing\n", profile_kind_name(k), field, v);
		rc = cal_doc_miss(cal_doc_of(r, k), field, "the fit gave %g, outside the accepted range "
				  "(not physical: see the residuals); %s", v, source);
	}
	SIM_ASSERT(rc == SIM_OK, "calibrate: field '%s' of %s: %s", field, profile_kind_name(k),
		   sim_strerror(rc));
}

void cal_miss(cal_run *r, profile_kind k, const char *field, const char *why)
{
	int rc = cal_doc_miss(cal_doc_of(r, k), field, "%s", why);
	SIM_ASSERT(rc == SIM_OK, "calibrate: field '%s': %s", field, sim_strerror(rc));
}

/* ---- printing a fit ---- */

void cal_print_residuals(const series *s, const double *rel, const cal_lin *fit)
{
	char b[24];
	printf("    residual (fit - measured) / measured:");
	for (size_t i = 0; i < s->n; i++)
		printf("%s %s %+.1f%%", i ? "," : "", cal_fmt_bytes(s->bytes[i], b, sizeof b),
		       rel[i] * 100);
	printf("\n    rms %.1f%%, max %.1f%%, %zu degree%s of freedom\n", fit->rms_rel * 100,
	       fit->max_rel * 100, fit->dof, fit->dof == 1 ? "" : "s");
	if (fit->rms_rel > CAL_POOR_RMS)
		fprintf(stderr, "dpusim: warning: %s: poor fit (rms residual %.0f%% > %.0f%%): the "
			"points do not follow the model; see docs/calibration.md\n", s->b0->name,
			fit->rms_rel * 100, CAL_POOR_RMS * 100);
}

void cal_run_plot(cal_run *r, const series *s, const char *suffix, const char *title,
		 const char *ylabel, const double *y, const char *curve)
{
	char stem[256], why[600] = "";
	bool gemm = !strncmp(s->b0->name, "gemm", 4);
	cal_plot p = { .file_stem = stem, .title = title,
		       .xlabel = gemm ? "FLOP per GEMM" : "bytes", .ylabel = ylabel,
		       .x = s->bytes, .y = y, .n = s->n, .curve = curve };
	if (!r->plot_dir)
		return;
	snprintf(stem, sizeof stem, "%s-%s%s%s", r->name, s->b0->name, suffix[0] ? "-" : "",
		 suffix);
	if (cal_plot_png(r->plot_dir, &p, why, sizeof why)) {
		cli_error("%s", why);
		r->plot_failures++;
	} else {
		printf("    plot: %s/%s.png\n", r->plot_dir, stem);
	}
}


/* ---- output ---- */

static void list_unused(const cal_run *r)
{
	bool any = false;
	for (size_t i = 0; i < r->ns; i++) {
		if (r->s[i].used)
			continue;
		printf("%s%s (%s)", any ? ", " : "not used: ",
		       r->s[i].b0->name, r->s[i].b0->transport);
		any = true;
	}
	if (any)
		putchar('\n');
}

/* The bench reports read, for a message about what they hold: the first's
 * path, and how many more. */
static const char *inputs_named(const cal_run *r, char *buf, size_t n)
{
	if (r->nfiles > 1)
		snprintf(buf, n, "%s and %zu other report%s", r->files[0].path, r->nfiles - 1,
			 r->nfiles > 2 ? "s" : "");
	else
		snprintf(buf, n, "%s", r->files[0].path);
	return buf;
}

/* Renders every document that gives at least one field, then writes them:
 * nothing is written when any rendering fails. */
static int write_docs(cal_run *r)
{
	static const profile_kind order[] = { PROFILE_HOST_COSTS, PROFILE_NIC, PROFILE_STORAGE,
					      PROFILE_CPU, PROFILE_GPU };
	char *text[5] = { 0 }, path[5][4200], why[600];
	int rc = CLI_OK, written = 0;
	for (size_t i = 0; i < 5; i++) {
		cal_doc *d = r->doc[order[i]];
		if (!d || !cal_doc_ngiven(d))
			continue;
		snprintf(path[i], sizeof path[i], "%s-%s.yaml", r->base, profile_kind_name(order[i]));
		if (!(text[i] = cal_doc_render(d, "not measured by dpusim-hw bench")))
			rc = cli_usage_error("out of memory");
	}
	for (size_t i = 0; i < 5 && !rc; i++) {
		if (!text[i])
			continue;
		if (cal_write_atomic(path[i], text[i], why, sizeof why))
			rc = cli_usage_error("cannot write the profile: %s", why);
		else
			printf("wrote %s (profile '%s', %zu field%s measured)\n", path[i],
			       cal_doc_name(r->doc[order[i]]), cal_doc_ngiven(r->doc[order[i]]),
			       cal_doc_ngiven(r->doc[order[i]]) == 1 ? "" : "s"), written++;
	}
	for (size_t i = 0; i < 5; i++)
		free(text[i]);
	if (!rc && !written) {
		char in[4200];
		rc = cli_usage_error("nothing in %s could be fitted: no profile written",
				     inputs_named(r, in, sizeof in));
	}
	return rc;
}

/* ---- options ---- */

/* A profile name as the loader takes it, and one that stays in -o's folder
 * (no '/': --name ../x wrote DIR/../x-KIND.yaml). */
#define NAME_RULE "1 to 40 letters, digits, '-', '_' or '.'"
static bool name_ok(const char *name)
{
	size_t n = strlen(name);
	return n >= 1 && n <= 40 && strspn(name, "abcdefghijklmnopqrstuvwxyz"
				       "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == n;
}

static int set_output(cal_run *r, const char *out)
{
	size_t len = strlen(out);
	const char *slash, *name;
	if (len < 6 || strcmp(out + len - 5, ".yaml"))
		return cli_usage_error("-o '%s': expected a path ending in .yaml "
				       "(e.g. models/calibrated/mylab.yaml)", out);
	if (len - 5 >= sizeof r->base)
		return cli_usage_error("-o '%s': past the path limit (%zu bytes)", out,
				       sizeof r->base - 1);
	memcpy(r->base, out, len - 5);
	r->base[len - 5] = '\0';
	slash = strrchr(r->base, '/');
	name = slash ? slash + 1 : r->base;
	if (!name_ok(name))
		return cli_usage_error("-o '%s': the name must be " NAME_RULE, out);
	memcpy(r->name, name, strlen(name) + 1); /* at most 40 + 1 bytes, checked above */
	return CLI_OK;
}

static int take_option(cal_run *r, const char *a, const char *v)
{
	struct stat st;
	unit_err ue;
	if (!strcmp(a, "-o")) {
		r->out_opt = v;
	} else if (!strcmp(a, "--name")) {
		r->name_opt = v;
	} else if (!strcmp(a, "--plot")) {
		if (stat(v, &st) || !S_ISDIR(st.st_mode))
			return cli_usage_error("--plot '%s': not a directory", v);
		r->plot_dir = v;
	} else if (!strcmp(a, "--mtu")) {
		if (!cli_parse_double(v, &r->mtu_bytes) || r->mtu_bytes < 576 ||
		    r->mtu_bytes > 65536 || r->mtu_bytes != floor(r->mtu_bytes))
			return cli_usage_error("--mtu '%s': expected whole bytes in [576, 65536]", v);
	} else if (!strcmp(a, "--peak-flops")) {
		if (unit_parse(v, UNIT_FLOP_PER_S, &r->peak_flops, &ue) || !(r->peak_flops > 0))
			return cli_usage_error("--peak-flops '%s': %s", v,
					       r->peak_flops > 0 ? ue.msg : "expected a positive rate "
					       "such as 989TFLOP/s");
	} else {
		return cli_usage_error("unknown option '%s' (see 'dpusim calibrate --help')", a);
	}
	return CLI_OK;
}

/* -o is a folder, as for every command that writes several files: the
 * profiles go to DIR/NAME-KIND.yaml, NAME from --name or the first bench
 * file's name. The older -o DIR/NAME.yaml still works. */
static int resolve_output(cal_run *r)
{
	const char *o = r->out_opt, *file, *dot;
	size_t len = o ? strlen(o) : 0;
	char out[4096 + 64], name[64];
	struct stat st;
	if (!o)
		return cli_usage_error("no output given: -o DIR (e.g. -o models/calibrated "
				       "--name mylab)");
	if (len > 5 && !strcmp(o + len - 5, ".yaml")) {
		if (r->name_opt)
			return cli_usage_error("-o '%s' names the profiles already; give -o DIR "
					       "with --name, or -o DIR/NAME.yaml alone", o);
		return set_output(r, o);
	}
	if (len && (stat(o, &st) || !S_ISDIR(st.st_mode)))
		return cli_usage_error("-o '%s': not a folder (the profiles go to "
				       "DIR/NAME-KIND.yaml; create it first)", o);
	file = strrchr(r->files[0].path, '/');
	file = file ? file + 1 : r->files[0].path;
	dot = strrchr(file, '.');
	if (r->name_opt && !name_ok(r->name_opt))
		return cli_usage_error("--name '%s': the name must be " NAME_RULE, r->name_opt);
	snprintf(name, sizeof name, "%.*s", (int)(dot && dot != file ? dot - file : 41), file);
	if (r->name_opt)
		snprintf(name, sizeof name, "%s", r->name_opt);
	else if (!name_ok(name))
		return cli_usage_error("'%s': the bench file's name is no profile name (" NAME_RULE
				       "): give --name NAME", r->files[0].path);
	if (cli_path(out, sizeof out, "%.*s%s%s.yaml", (int)(len && o[len - 1] == '/' ? len - 1 : len),
		     o, len ? "/" : "", name))
		return CLI_USAGE;
	return set_output(r, out);
}

static int parse_args(cal_run *r, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1]) {
			if (r->nfiles == MAX_FILES)
				return cli_usage_error("at most %d bench reports", MAX_FILES);
			r->files[r->nfiles++].path = a;
			continue;
		}
		if (!strcmp(a, "--effective-ring")) {
			r->effective_ring = true;
			continue;
		}
		if (i + 1 >= argc)
			return cli_usage_error("option '%s' needs a value", a);
		if (take_option(r, a, argv[++i]))
			return CLI_USAGE;
	}
	if (!r->nfiles)
		return cli_usage_error("no bench report given (usage: dpusim calibrate BENCH.json "
				       "-o PROFILE.yaml)");
	return resolve_output(r);
}

static void free_run(cal_run *r)
{
	for (size_t i = 0; i < r->nfiles; i++)
		rep_free(r->files[i].rep);
	for (size_t k = 0; k < PROFILE_NKINDS; k++)
		cal_doc_free(r->doc[k]);
}

int cmd_calibrate(int argc, char **argv)
{
	cal_run *r = calloc(1, sizeof *r);
	int rc;
	if (!r)
		return cli_usage_error("out of memory");
	r->peak_flops = NAN;
	rc = parse_args(r, argc, argv);
	if (!rc)
		rc = read_files(r);
	if (!rc) {
		cal_kind_network(r);
		cal_kind_tcp_cpu(r);
		cal_kind_crypto(r);
		cal_kind_ring(r);
		cal_kind_storage(r);
		cal_kind_cpu(r);
		cal_kind_gpu(r);
		list_unused(r);
		if (r->effective_ring && !r->effective_done) {
			char in[4200];
			rc = cli_usage_error("--effective-ring: no tcp ring all-reduce series "
					     "(allreduce_ring_busbw) in %s to take the costs from",
					     inputs_named(r, in, sizeof in));
		}
		if (!rc)
			rc = write_docs(r);
	}
	if (!rc && r->plot_failures)
		rc = cli_usage_error("%d plot%s failed", r->plot_failures,
				     r->plot_failures == 1 ? "" : "s");
	free_run(r);
	free(r);
	return rc;
}

