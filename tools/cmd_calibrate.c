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
#include "tools/atomic.h"
#include "tools/calib_out.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/report.h"

#define MAX_FILES 8
#define MAX_SERIES 64
/* rms relative residual above which a fit is called poor (a warning): on a
 * quiet machine latency and bandwidth sweeps fit within a few percent. */
#define CAL_POOR_RMS 0.25

typedef struct series {
	const rep_benchmark *b0;  /* first point: the series' name, transport, unit... */
	size_t file;              /* index into cal_run.files */
	double bytes[CAL_MAX_POINTS];
	double typ[CAL_MAX_POINTS]; /* p50 for latencies when given (robust to the
				     * scheduler's outliers), else the mean */
	size_t n;
	bool used;
} series;

typedef struct bench_file {
	const char *path;
	rep_report *rep;
	char origin[600];  /* "PATH (tcp, 4 ranks, host 'x', file of 2026-12-02)" */
	double hz;         /* info cpu_hz, or NAN */
	const char *hz_src;
} bench_file;

typedef struct cal_run {
	bench_file files[MAX_FILES];
	size_t nfiles;
	series s[MAX_SERIES];
	size_t ns;
	const char *out, *plot_dir;
	const char *out_opt, *name_opt; /* -o and --name as given */
	double mtu_bytes;    /* --mtu, 0 when not given */
	double peak_flops;   /* --peak-flops, NAN when not given */
	char base[4096];     /* -o without .yaml */
	char name[128];      /* basename of base */
	cal_doc *doc[PROFILE_NKINDS];
	int plot_failures;
	bool effective_ring;  /* --effective-ring */
	bool effective_done;  /* and a tcp ring series was there to apply it */
} cal_run;

/* ---- human-readable figures for messages and sources ---- */

static const char *fmt_time(double s, char *b, size_t n)
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

static const char *fmt_bytes(double x, char *b, size_t n)
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
static const char *fmt_pm(double x, double se, size_t npts,
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

static const char *fmt_rate(double bps, char *b, size_t n)
{
	snprintf(b, n, "%.4g GB/s", bps / 1e9);
	return b;
}

static const char *fmt_num(double x, char *b, size_t n)
{
	snprintf(b, n, "%.4g", x);
	return b;
}

/* "5 sizes 8 B..32 KiB" */
static const char *fmt_span(const series *s, char *b, size_t n)
{
	char lo[24], hi[24];
	snprintf(b, n, "%zu size%s %s..%s", s->n, s->n == 1 ? "" : "s",
		 fmt_bytes(s->bytes[0], lo, sizeof lo), fmt_bytes(s->bytes[s->n - 1], hi, sizeof hi));
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

static const char *info_of(const rep_report *rep, const char *key)
{
	for (size_t i = 0; i < rep_ninfo(rep); i++) {
		const char *k, *v;
		rep_info_at(rep, i, &k, &v);
		if (!strcmp(k, key))
			return v;
	}
	return NULL;
}

static void describe_file(bench_file *f)
{
	const char *t = info_of(f->rep, "transport"), *n = info_of(f->rep, "ranks");
	const char *h = info_of(f->rep, "host"), *hz = info_of(f->rep, "cpu_hz");
	char day[16] = "unknown date";
	struct stat st;
	struct tm tm;
	if (!stat(f->path, &st) && gmtime_r(&st.st_mtime, &tm))
		strftime(day, sizeof day, "%Y-%m-%d", &tm);
	snprintf(f->origin, sizeof f->origin, "%s (%s%s%s ranks, host '%s', file of %s)", f->path,
		 t ? t : "", t ? ", " : "", n ? n : "?", h ? h : "?", day);
	f->hz = hz && cli_parse_double(hz, &f->hz) && f->hz > 0 ? f->hz : NAN;
	f->hz_src = info_of(f->rep, "cpu_hz_source");
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
static series *find_series(cal_run *r, const char *name, const char *transport,
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

static cal_doc *doc(cal_run *r, profile_kind k)
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
static void give_or_miss(cal_run *r, profile_kind k, const char *field, double v,
			 const char *source)
{
	int rc = cal_doc_give(doc(r, k), field, v, "%s", source);
	if (rc == SIM_ERANGE) {
		fprintf(stderr, "dpusim: warning: %s.%s: fitted value %g is not physical; listed "
			"as missing\n", profile_kind_name(k), field, v);
		rc = cal_doc_miss(doc(r, k), field, "the fit gave %g, outside the accepted range "
				  "(not physical: see the residuals); %s", v, source);
	}
	SIM_ASSERT(rc == SIM_OK, "calibrate: field '%s' of %s: %s", field, profile_kind_name(k),
		   sim_strerror(rc));
}

static void miss(cal_run *r, profile_kind k, const char *field, const char *why)
{
	int rc = cal_doc_miss(doc(r, k), field, "%s", why);
	SIM_ASSERT(rc == SIM_OK, "calibrate: field '%s': %s", field, sim_strerror(rc));
}

/* ---- printing a fit ---- */

static void print_residuals(const series *s, const double *rel, const cal_lin *fit)
{
	char b[24];
	printf("    residual (fit - measured) / measured:");
	for (size_t i = 0; i < s->n; i++)
		printf("%s %s %+.1f%%", i ? "," : "", fmt_bytes(s->bytes[i], b, sizeof b),
		       rel[i] * 100);
	printf("\n    rms %.1f%%, max %.1f%%, %zu degree%s of freedom\n", fit->rms_rel * 100,
	       fit->max_rel * 100, fit->dof, fit->dof == 1 ? "" : "s");
	if (fit->rms_rel > CAL_POOR_RMS)
		fprintf(stderr, "dpusim: warning: %s: poor fit (rms residual %.0f%% > %.0f%%): the "
			"points do not follow the model; see docs/calibration.md\n", s->b0->name,
			fit->rms_rel * 100, CAL_POOR_RMS * 100);
}

static void plot(cal_run *r, const series *s, const char *suffix, const char *title,
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


/* ---- network: alpha-beta per transport ---- */

/* Fits time = alpha + beta * bytes to a latency series (ping-pong half
 * round trips). Returns true with *ab set when the fit ran. */
static bool fit_latency(cal_run *r, series *s, const char *what, cal_ab *ab, char *src,
			size_t srclen)
{
	double rel[CAL_MAX_POINTS];
	char a[96], be[96], span[64], curve[96], bw[32], half[32];
	int rc = cal_fit_alpha_beta(s->bytes, s->typ, s->n, ab, rel);
	s->used = true;
	printf("%s (%s, %u rank%s, %s), %s:\n", s->b0->name, s->b0->transport, s->b0->ranks,
	       s->b0->ranks == 1 ? "" : "s", what, fmt_span(s, span, sizeof span));
	if (rc) {
		printf("    no fit: %s\n", s->n < 2 ? "fewer than 2 sizes" : "degenerate points");
		snprintf(src, srclen, "%s: %s cannot be fitted (%s)", r->files[s->file].origin,
			 s->b0->name, s->n < 2 ? "fewer than 2 sizes" : "degenerate points");
		return false;
	}
	fmt_pm(ab->alpha_s, ab->se_alpha_s, s->n, fmt_time, a, sizeof a);
	fmt_pm(ab->beta_s_per_B * 1e9, ab->se_beta_s_per_B * 1e9, s->n, fmt_num, be, sizeof be);
	printf("    alpha = %s, beta = %s ns/B (1/beta = %s)\n", a, be,
	       isnan(ab->bw_Bps) ? "n/a: beta <= 0" : fmt_rate(ab->bw_Bps, bw, sizeof bw));
	if (!isnan(ab->half_bytes))
		printf("    latency regime below %s (alpha = beta * S), bandwidth regime above\n",
		       fmt_bytes(round(ab->half_bytes), half, sizeof half));
	print_residuals(s, rel, &ab->fit);
	snprintf(src, srclen, "dpusim calibrate of %s: alpha + beta*S fitted by weighted least "
		 "squares (relative) to %s (%s) over %s: alpha = %s, beta = %s ns/B; residual "
		 "rms %.1f%%, max %.1f%%", r->files[s->file].origin, s->b0->name, what, span, a, be,
		 ab->fit.rms_rel * 100,
		 ab->fit.max_rel * 100);
	snprintf(curve, sizeof curve, "%.17g + %.17g*x", ab->alpha_s, ab->beta_s_per_B);
	plot(r, s, "", s->b0->name, "one-way time (s)", s->typ, curve);
	return true;
}

/* Streaming bandwidth: time per message = bytes / rate = gap + bytes / B. */
static bool fit_stream(cal_run *r, series *s, cal_ab *ab, char *src, size_t srclen)
{
	double t[CAL_MAX_POINTS], rel[CAL_MAX_POINTS];
	char g[96], bw[96], span[64], curve[96];
	for (size_t i = 0; i < s->n; i++)
		t[i] = s->typ[i] > 0 ? s->bytes[i] / s->typ[i] : 0;
	s->used = true;
	printf("%s (%s, streamed, time per message = bytes / rate), %s:\n", s->b0->name,
	       s->b0->transport, fmt_span(s, span, sizeof span));
	if (cal_fit_alpha_beta(s->bytes, t, s->n, ab, rel)) {
		printf("    no fit: %s\n", s->n < 2 ? "fewer than 2 sizes" : "degenerate points");
		snprintf(src, srclen, "%s: %s cannot be fitted", r->files[s->file].origin, s->b0->name);
		return false;
	}
	fmt_pm(ab->alpha_s, ab->se_alpha_s, s->n, fmt_time, g, sizeof g);
	fmt_pm(ab->bw_Bps, ab->se_bw_Bps, s->n, fmt_rate, bw, sizeof bw);
	printf("    per-message gap = %s, asymptotic bandwidth 1/beta = %s\n", g,
	       isnan(ab->bw_Bps) ? "n/a: beta <= 0" : bw);
	print_residuals(s, rel, &ab->fit);
	snprintf(src, srclen, "dpusim calibrate of %s: gap + S/B fitted by weighted least squares "
		 "(relative) to %s over %s (time per message = S / rate): B = %s, gap = %s; "
		 "residual rms %.1f%%, max %.1f%%; an achieved rate, not the line rate",
		 r->files[s->file].origin, s->b0->name, span, bw, g, ab->fit.rms_rel * 100,
		 ab->fit.max_rel * 100);
	snprintf(curve, sizeof curve, "%.17g + %.17g*x", ab->alpha_s, ab->beta_s_per_B);
	plot(r, s, "", s->b0->name, "time per message (s)", t, curve);
	return true;
}

static const char *lat_what(const series *s)
{
	return !isnan(s->b0->p50) ? "half round trip, p50 at each size"
				  : "half round trip, mean at each size";
}

/* host-costs.tcp_latency is the host stack's latency on top of the path
 * (docs/profiles.md). With a verbs bench of the same path, that is the
 * difference of the two alphas; with tcp alone (loopback: no wire), the
 * whole tcp alpha, and the source says which. */
static void tcp_latency(cal_run *r, const cal_ab *tcp, const char *tcp_src, const cal_ab *rdma)
{
	char src[3000], d[96];
	if (!rdma) {
		snprintf(src, sizeof src, "%s; the whole one-way time of the tcp path (no verbs bench "
			 "of the same path was given to subtract the wire and NIC)", tcp_src);
		give_or_miss(r, PROFILE_HOST_COSTS, "tcp_latency", tcp->alpha_s, src);
		return;
	}
	double v = tcp->alpha_s - rdma->alpha_s;
	double se = sqrt(tcp->se_alpha_s * tcp->se_alpha_s + rdma->se_alpha_s * rdma->se_alpha_s);
	fmt_pm(v, se, tcp->fit.n + rdma->fit.n, fmt_time, d, sizeof d);
	snprintf(src, sizeof src, "tcp alpha minus rdma_write alpha of the same path = %s; tcp: %s",
		 d, tcp_src);
	give_or_miss(r, PROFILE_HOST_COSTS, "tcp_latency", v, src);
}

static void network(cal_run *r)
{
	char src[1400], tsrc[1400];
	cal_ab ab, tcp, rdma;
	bool have_tcp = false, have_rdma = false;
	series *s, *ts = find_series(r, "tcp_lat", "tcp", "s");
	if ((s = find_series(r, "rdma_write_lat", "verbs", "s"))) {
		if ((have_rdma = fit_latency(r, s, lat_what(s), &rdma, src, sizeof src)))
			give_or_miss(r, PROFILE_NIC, "rdma_latency", rdma.alpha_s, src);
		else
			miss(r, PROFILE_NIC, "rdma_latency", src);
	}
	if ((s = find_series(r, "rdma_write_bw", "verbs", "B/s"))) {
		if (fit_stream(r, s, &ab, src, sizeof src))
			give_or_miss(r, PROFILE_NIC, "port_rate", ab.bw_Bps, src);
		else
			miss(r, PROFILE_NIC, "port_rate", src);
	}
	/* SEND/RECV (perftest's ib_send_*): fitted and noted; the profile's
	 * rdma_latency and port_rate are the RDMA WRITE figures above. */
	if ((s = find_series(r, "rdma_send_lat", "verbs", "s")) &&
	    fit_latency(r, s, lat_what(s), &ab, src, sizeof src))
		cal_doc_comment(doc(r, PROFILE_NIC), "send/recv latency: %s", src);
	if ((s = find_series(r, "rdma_send_bw", "verbs", "B/s")) &&
	    fit_stream(r, s, &ab, src, sizeof src))
		cal_doc_comment(doc(r, PROFILE_NIC), "send/recv stream: %s", src);
	if (ts && (have_tcp = fit_latency(r, ts, lat_what(ts), &tcp, tsrc, sizeof tsrc)))
		tcp_latency(r, &tcp, tsrc, have_rdma && rdma.alpha_s > 0 ? &rdma : NULL);
	else if (ts)
		miss(r, PROFILE_HOST_COSTS, "tcp_latency", tsrc);
	if ((s = find_series(r, "tcp_bw", "tcp", "B/s")) && fit_stream(r, s, &ab, src, sizeof src))
		cal_doc_comment(doc(r, PROFILE_HOST_COSTS), "tcp stream: %s", src);
}

/* ---- host CPU: the TCP path and AES-GCM ---- */

/* Fits cycles per message of a tcp_cpu_tx|rx series; *c_pkt and *c_byte. */
static bool fit_tcp_cpu(cal_run *r, series *s, cal_lin *f, char *src, size_t srclen)
{
	double y[CAL_MAX_POINTS], rel[CAL_MAX_POINTS];
	char p0[96], p1[96], span[64], curve[160];
	const char *unit0 = r->mtu_bytes > 0 ? "cycles/packet" : "cycles/message";
	for (size_t i = 0; i < s->n; i++)
		y[i] = s->typ[i] * s->bytes[i];
	s->used = true;
	printf("%s (cycles per message = c0 * %s + c1 * bytes), %s:\n", s->b0->name,
	       r->mtu_bytes > 0 ? "ceil(bytes / mtu)" : "1", fmt_span(s, span, sizeof span));
	if (cal_fit_cost(s->bytes, y, s->n, r->mtu_bytes, f, rel)) {
		printf("    no fit: %s\n", s->n < 2 ? "fewer than 2 sizes" : "degenerate points");
		snprintf(src, srclen, "%s: %s cannot be fitted", r->files[s->file].origin, s->b0->name);
		return false;
	}
	fmt_pm(f->p0, f->se0, s->n, fmt_num, p0, sizeof p0);
	fmt_pm(f->p1, f->se1, s->n, fmt_num, p1, sizeof p1);
	printf("    c0 = %s %s, c1 = %s cycles/byte\n", p0, unit0, p1);
	print_residuals(s, rel, f);
	snprintf(src, srclen, "dpusim calibrate of %s: CPU time (getrusage) x cpu_hz per message "
		 "of %s over %s, fitted as c0 %s + c1 x bytes by weighted least squares "
		 "(relative): c1 = %s cycles/byte, c0 = %s %s%s%.0f B; residual rms %.1f%%, "
		 "max %.1f%%", r->files[s->file].origin, s->b0->name, span,
		 r->mtu_bytes > 0 ? "x packets" : "per message", p1, p0, unit0,
		 r->mtu_bytes > 0 ? ", mtu " : "", r->mtu_bytes > 0 ? r->mtu_bytes : 0.0,
		 f->rms_rel * 100, f->max_rel * 100);
	if (r->mtu_bytes > 0)
		snprintf(curve, sizeof curve, "%.17g*ceil(x/%.17g) + %.17g*x", f->p0, r->mtu_bytes,
			 f->p1);
	else
		snprintf(curve, sizeof curve, "%.17g + %.17g*x", f->p0, f->p1);
	plot(r, s, "", s->b0->name, "CPU cycles per message", y, curve);
	return true;
}

static void per_packet(cal_run *r, const cal_lin *tx, const cal_lin *rx, bool both)
{
	char why[1400], pm[96];
	if (!both) {
		miss(r, PROFILE_HOST_COSTS, "tcp_cycles_per_packet",
		     "needs both tcp_cpu_tx and tcp_cpu_rx fitted");
		return;
	}
	double c = (tx->p0 + rx->p0) / 2, se = sqrt(tx->se0 * tx->se0 + rx->se0 * rx->se0) / 2;
	fmt_pm(c, se, tx->n + rx->n, fmt_num, pm, sizeof pm);
	if (r->mtu_bytes <= 0) {
		snprintf(why, sizeof why, "dpusim calibrate measured %s cycles per message (mean of "
			 "send and receive sides); a per-packet cost needs the path's MTU: rerun with "
			 "--mtu BYTES", pm);
		miss(r, PROFILE_HOST_COSTS, "tcp_cycles_per_packet", why);
		miss(r, PROFILE_HOST_COSTS, "mtu", "not in the bench report; give --mtu BYTES");
		return;
	}
	snprintf(why, sizeof why, "dpusim calibrate of %s: mean of the send and receive sides' "
		 "per-packet coefficients (fits of tcp_cpu_tx and tcp_cpu_rx, mtu %.0f B): %s "
		 "cycles/packet", r->files[0].origin, r->mtu_bytes, pm);
	give_or_miss(r, PROFILE_HOST_COSTS, "tcp_cycles_per_packet", c, why);
	snprintf(why, sizeof why, "--mtu %.0f given to dpusim calibrate: the MTU of the path the "
		 "bench in %s ran over", r->mtu_bytes, r->files[0].path);
	give_or_miss(r, PROFILE_HOST_COSTS, "mtu", r->mtu_bytes, why);
}

static void tcp_cpu(cal_run *r)
{
	char src[1400];
	cal_lin tx, rx;
	bool have_tx = false, have_rx = false;
	series *s;
	if ((s = find_series(r, "tcp_cpu_tx", "tcp", "cycles/B"))) {
		if ((have_tx = fit_tcp_cpu(r, s, &tx, src, sizeof src)))
			give_or_miss(r, PROFILE_HOST_COSTS, "tcp_tx_cycles_per_byte", tx.p1, src);
		else
			miss(r, PROFILE_HOST_COSTS, "tcp_tx_cycles_per_byte", src);
	}
	if ((s = find_series(r, "tcp_cpu_rx", "tcp", "cycles/B"))) {
		if ((have_rx = fit_tcp_cpu(r, s, &rx, src, sizeof src)))
			give_or_miss(r, PROFILE_HOST_COSTS, "tcp_rx_cycles_per_byte", rx.p1, src);
		else
			miss(r, PROFILE_HOST_COSTS, "tcp_rx_cycles_per_byte", src);
		miss(r, PROFILE_HOST_COSTS, "tcp_rx_bw_per_core", "the CPU clock is known, so the "
		     "cost is given as tcp_rx_cycles_per_byte");
	}
	if (have_tx || have_rx)
		per_packet(r, &tx, &rx, have_tx && have_rx);
}

/* AES-GCM: cycles per call = cpu_hz * bytes / rate = c_call + c_byte * bytes. */
static void crypto(cal_run *r)
{
	series *s = find_series(r, "aes_gcm_encrypt_bw", "crypto", "B/s");
	const bench_file *f;
	double y[CAL_MAX_POINTS], rel[CAL_MAX_POINTS];
	char src[1400], pm[96], call[96], span[64], curve[96];
	cal_lin fit;
	if (!s)
		return;
	s->used = true;
	f = &r->files[s->file];
	if (isnan(f->hz)) {
		miss(r, PROFILE_HOST_COSTS, "aes_gcm_cycles_per_byte",
		     "the bench report gives no cpu_hz to turn AES-GCM throughput into cycles");
		return;
	}
	for (size_t i = 0; i < s->n; i++)
		y[i] = f->hz * s->bytes[i] / s->typ[i];
	printf("%s (one core, cycles per call = cpu_hz x bytes / rate), %s:\n", s->b0->name,
	       fmt_span(s, span, sizeof span));
	if (cal_fit_line(s->bytes, y, s->n, &fit, rel)) {
		printf("    no fit: fewer than 2 sizes\n");
		miss(r, PROFILE_HOST_COSTS, "aes_gcm_cycles_per_byte", "fewer than 2 AES-GCM sizes "
		     "in the bench report: per-call and per-byte costs cannot be separated");
		return;
	}
	fmt_pm(fit.p1, fit.se1, s->n, fmt_num, pm, sizeof pm);
	fmt_pm(fit.p0, fit.se0, s->n, fmt_num, call, sizeof call);
	printf("    %s cycles/byte, %s cycles per call\n", pm, call);
	print_residuals(s, rel, &fit);
	snprintf(src, sizeof src, "dpusim calibrate of %s: AES-256-GCM encryption (OpenSSL EVP, one "
		 "core) over %s at cpu_hz %.4g GHz (%s), cycles per call fitted as c_call + c_byte x "
		 "bytes: c_byte = %s cycles/byte, c_call = %s cycles", f->origin, span, f->hz / 1e9,
		 f->hz_src ? f->hz_src : "source not stated", pm, call);
	give_or_miss(r, PROFILE_HOST_COSTS, "aes_gcm_cycles_per_byte", fit.p1, src);
	snprintf(curve, sizeof curve, "%.17g + %.17g*x", fit.p0, fit.p1);
	plot(r, s, "", s->b0->name, "cycles per call", y, curve);
}

/* ---- the ring all-reduce ---- */

/* --effective-ring: the host-tcp costs that make the simulator's ring
 * reproduce the measured ring, contention and all: tcp_latency = the ring's
 * per-step alpha, tcp_rx_cycles_per_byte = cpu_hz / B (the model charges the
 * per-byte cost on the receiving side). The send-side and per-packet costs
 * are then inside B, so they are listed as missing rather than counted
 * twice. Sources say these are effective figures, not the stack's costs. */
static void effective_ring(cal_run *r, const series *s, const cal_ring *rg, const char *a,
			   const char *bw)
{
	const bench_file *f = &r->files[s->file];
	char src[1600], why[400];
	r->effective_done = true;
	snprintf(why, sizeof why, "--effective-ring: the ring all-reduce's B (%s per link) "
		 "already holds the whole per-byte cost", bw);
	snprintf(src, sizeof src, "EFFECTIVE (dpusim calibrate --effective-ring) from the ring "
		 "all-reduce of %s over %u ranks: per-step alpha = %s, fitted to T(S) = 2(n-1) alpha "
		 "+ 2(n-1)/n S/B; includes the ranks' synchronisation and any sharing of cores, so "
		 "it predicts collectives on this setup, not the host stack's own latency",
		 f->origin, rg->ranks, a);
	give_or_miss(r, PROFILE_HOST_COSTS, "tcp_latency", rg->alpha_s, src);
	if (isnan(f->hz)) {
		miss(r, PROFILE_HOST_COSTS, "tcp_rx_cycles_per_byte", "--effective-ring needs the "
		     "bench report's cpu_hz to turn B into cycles");
		return;
	}
	snprintf(src, sizeof src, "EFFECTIVE (dpusim calibrate --effective-ring) from the ring "
		 "all-reduce of %s over %u ranks: cpu_hz %.4g GHz / B (%s per link); every per-byte "
		 "cost of a ring step on this setup, not the receive copy path alone", f->origin,
		 rg->ranks, f->hz / 1e9, bw);
	give_or_miss(r, PROFILE_HOST_COSTS, "tcp_rx_cycles_per_byte", f->hz * rg->beta_s_per_B, src);
	miss(r, PROFILE_HOST_COSTS, "tcp_tx_cycles_per_byte", why);
	miss(r, PROFILE_HOST_COSTS, "tcp_cycles_per_packet", why);
}

static void ring(cal_run *r)
{
	for (size_t i = 0; i < r->ns; i++) {
		series *s = &r->s[i];
		double rel[CAL_MAX_POINTS], t[CAL_MAX_POINTS];
		char a[96], bw[96], span[64], curve[96], title[96];
		cal_ring rg;
		if (strcmp(s->b0->name, "allreduce_ring_busbw") || strcmp(s->b0->unit, "B/s"))
			continue;
		s->used = true;
		printf("%s (%s, %u ranks), %s:\n", s->b0->name, s->b0->transport, s->b0->ranks,
		       fmt_span(s, span, sizeof span));
		if (cal_fit_ring(s->bytes, s->typ, s->n, s->b0->ranks, &rg, rel)) {
			printf("    no fit: %s\n", s->n < 2 ? "fewer than 2 sizes" : "degenerate points");
			continue;
		}
		fmt_pm(rg.alpha_s, rg.se_alpha_s, s->n, fmt_time, a, sizeof a);
		fmt_pm(rg.bw_Bps, rg.se_bw_Bps, s->n, fmt_rate, bw, sizeof bw);
		printf("    T(S) = 2(n-1) alpha + 2(n-1)/n S/B: alpha = %s per step, B = %s per link\n",
		       a, bw);
		print_residuals(s, rel, &rg.fit);
		cal_doc_comment(doc(r, strcmp(s->b0->transport, "tcp") ? PROFILE_NIC : PROFILE_HOST_COSTS),
				"ring all-reduce over %s, %u ranks, %s: effective alpha = %s per step, "
				"B = %s per link (residual rms %.1f%%, max %.1f%%)",
				s->b0->transport, s->b0->ranks, span, a, bw, rg.fit.rms_rel * 100,
				rg.fit.max_rel * 100);
		for (size_t k = 0; k < s->n; k++)
			t[k] = s->bytes[k] / s->typ[k] * 2.0 * (s->b0->ranks - 1) / s->b0->ranks;
		snprintf(curve, sizeof curve, "%.17g + %.17g*x", rg.fit.p0, rg.fit.p1);
		snprintf(title, sizeof title, "ring all-reduce over %s, %u ranks", s->b0->transport,
			 s->b0->ranks);
		plot(r, s, s->b0->transport, title, "time (s)", t, curve);
		if (r->effective_ring && !strcmp(s->b0->transport, "tcp"))
			effective_ring(r, s, &rg, a, bw);
	}
}

/* ---- storage: alpha-beta over read sizes ---- */

/* Points (bytes, seconds per read): 4 KiB random reads (p50 latency) and
 * sequential reads (bytes / rate). */
static size_t storage_points(cal_run *r, series *st, rep_benchmark *b0)
{
	series *lat = find_series(r, "storage_read_lat", "storage", "s");
	series *bw = find_series(r, "storage_read_bw", "storage", "B/s");
	*st = (series){ .b0 = b0, .file = lat ? lat->file : bw ? bw->file : 0 };
	*b0 = (rep_benchmark){ .name = "storage_read", .transport = "storage", .unit = "s",
			       .p50 = NAN, .ranks = 1 };
	for (size_t i = 0; lat && i < lat->n && st->n < CAL_MAX_POINTS; i++, st->n++)
		st->bytes[st->n] = lat->bytes[i], st->typ[st->n] = lat->typ[i];
	for (size_t i = 0; bw && i < bw->n && st->n < CAL_MAX_POINTS; i++, st->n++)
		st->bytes[st->n] = bw->bytes[i], st->typ[st->n] = bw->bytes[i] / bw->typ[i];
	if (lat)
		lat->used = true;
	if (bw)
		bw->used = true;
	return st->n;
}

static void storage(cal_run *r)
{
	series st, *iops = find_series(r, "storage_read_iops_qd16", "storage", "op/s");
	rep_benchmark b0;
	char src[1400];
	cal_ab ab;
	if (storage_points(r, &st, &b0)) {
		if (fit_latency(r, &st, "p50 of 4 KiB random reads, time per sequential read", &ab,
				src, sizeof src)) {
			give_or_miss(r, PROFILE_STORAGE, "io_latency", ab.alpha_s, src);
			give_or_miss(r, PROFILE_STORAGE, "bw", ab.bw_Bps, src);
		} else {
			miss(r, PROFILE_STORAGE, "io_latency", src);
			miss(r, PROFILE_STORAGE, "bw", src);
		}
	}
	if (iops) {
		iops->used = true;
		snprintf(src, sizeof src, "dpusim-hw bench in %s: random %.0f B O_DIRECT reads through "
			 "io_uring at queue depth 16, %llu reads: %.4g IOPS (one measurement, no error "
			 "estimate)", r->files[iops->file].origin, iops->bytes[0],
			 (unsigned long long)iops->b0->iters, iops->typ[iops->n - 1]);
		give_or_miss(r, PROFILE_STORAGE, "iops", iops->typ[iops->n - 1], src);
	}
	if (r->doc[PROFILE_STORAGE])
		cal_doc_comment(r->doc[PROFILE_STORAGE], "one local device read by dpusim-hw bench "
				"(--dir), not a storage server: use it for a node-local data set");
}

/* ---- CPU clock ---- */

static void cpu(cal_run *r)
{
	const bench_file *f = &r->files[0];
	series *mc = find_series(r, "memcpy_bw", "cpu", "B/s");
	char src[1000];
	if (isnan(f->hz))
		return;
	snprintf(src, sizeof src, "cpu_hz reported by dpusim-hw bench in %s, read from %s (one reading "
		 "at the bench's start, no error estimate); every cycles figure of the companion "
		 "host-costs profile was converted with it",
		 f->origin, f->hz_src ? f->hz_src : "a source it does not state");
	give_or_miss(r, PROFILE_CPU, "freq", f->hz, src);
	if (mc) {
		mc->used = true;
		snprintf(src, sizeof src, "dpusim-hw bench measures one core's memcpy (%.4g GB/s over "
			 "%.0f MiB), not the socket's memory bandwidth", mc->typ[mc->n - 1] / 1e9,
			 mc->bytes[mc->n - 1] / 1048576);
		miss(r, PROFILE_CPU, "mem_bw", src);
	}
}

/* ---- GPU: saturating GEMM throughput ---- */

/* GEMM benchmarks give bytes = n*n*element size; the work is 2 n^3. */
static void gemm_flops(const series *s, double *F)
{
	double elt = strstr(s->b0->name, "bf16") || strstr(s->b0->name, "fp16") ? 2 : 4;
	for (size_t i = 0; i < s->n; i++) {
		double n = round(sqrt(s->bytes[i] / elt));
		F[i] = 2 * n * n * n;
	}
}

static void gpu_profile(cal_run *r, const series *s, const cal_sat *sat, const char *fit)
{
	char src[1600], pk[32];
	if (strcmp(s->b0->name, "gemm_bf16"))
		return;
	if (isnan(r->peak_flops)) {
		printf("    (no gpu profile: eff_max = ymax / peak needs --peak-flops RATE)\n");
		return;
	}
	snprintf(pk, sizeof pk, "%.4g TFLOP/s", r->peak_flops / 1e12);
	snprintf(src, sizeof src, "--peak-flops %s given to dpusim calibrate (the device's "
		 "published dense BF16 peak)", pk);
	give_or_miss(r, PROFILE_GPU, "peak_bf16_flops", r->peak_flops, src);
	snprintf(src, sizeof src, "%s; eff_max = ymax / %s = %.4g +- %.2g", fit, pk,
		 sat->ymax / r->peak_flops, sat->se_ymax / r->peak_flops);
	give_or_miss(r, PROFILE_GPU, "eff_max", sat->ymax / r->peak_flops, src);
	give_or_miss(r, PROFILE_GPU, "eff_half_flops", sat->f_half, fit);
}

static void gpu(cal_run *r)
{
	for (size_t i = 0; i < r->ns; i++) {
		series *s = &r->s[i];
		double F[CAL_MAX_POINTS], rel[CAL_MAX_POINTS];
		char span[64], ym[96], fh[96], fit[1200], curve[128];
		cal_sat sat;
		if (strncmp(s->b0->name, "gemm", 4) || strcmp(s->b0->unit, "FLOP/s"))
			continue;
		s->used = true;
		gemm_flops(s, F);
		snprintf(span, sizeof span, "%zu sizes n = %.0f..%.0f", s->n, cbrt(F[0] / 2),
			 cbrt(F[s->n - 1] / 2));
		printf("%s (%s, square GEMMs, F = 2 n^3), %s:\n", s->b0->name,
		       s->b0->device ? s->b0->device : "GPU", span);
		if (cal_fit_saturating(F, s->typ, s->n, &sat, rel)) {
			printf("    no fit: %s\n", s->n < 2 ? "fewer than 2 sizes" : "the solver did not "
			       "converge (the points do not saturate)");
			continue;
		}
		snprintf(ym, sizeof ym, "%.4g TFLOP/s +- %.2g", sat.ymax / 1e12, sat.se_ymax / 1e12);
		snprintf(fh, sizeof fh, "%.4g GFLOP +- %.2g", sat.f_half / 1e9, sat.se_f_half / 1e9);
		printf("    y = ymax F / (F + F_half): ymax = %s, F_half = %s (%zu iterations)\n", ym,
		       fh, sat.iters);
		print_residuals(s, rel, &(cal_lin){ .n = sat.n, .dof = sat.dof,
						    .rms_rel = sat.rms_rel, .max_rel = sat.max_rel });
		snprintf(fit, sizeof fit, "dpusim calibrate of %s: %s on %s over %s, ymax F / (F + "
			 "F_half) fitted by nonlinear least squares (GSL multifit_nlinear, relative "
			 "weights): ymax = %s, F_half = %s; residual rms %.1f%%, max %.1f%%",
			 r->files[s->file].origin, s->b0->name, s->b0->device ? s->b0->device : "GPU",
			 span, ym, fh, sat.rms_rel * 100, sat.max_rel * 100);
		gpu_profile(r, s, &sat, fit);
		snprintf(curve, sizeof curve, "%.17g*x/(x+%.17g)", sat.ymax, sat.f_half);
		if (r->plot_dir) {
			series fs = *s;
			memcpy(fs.bytes, F, s->n * sizeof *F);
			plot(r, &fs, "", s->b0->name, "FLOP/s", s->typ, curve);
		}
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
	if (!rc && !written)
		rc = cli_usage_error("nothing in %s could be fitted: no profile written",
				     r->files[0].path);
	return rc;
}

/* ---- options ---- */

static int set_output(cal_run *r, const char *out)
{
	size_t len = strlen(out);
	const char *slash, *name;
	if (len < 6 || strcmp(out + len - 5, ".yaml") || len - 5 >= sizeof r->base)
		return cli_usage_error("-o '%s': expected a path ending in .yaml "
				       "(e.g. models/calibrated/mylab.yaml)", out);
	memcpy(r->base, out, len - 5);
	r->base[len - 5] = '\0';
	slash = strrchr(r->base, '/');
	name = slash ? slash + 1 : r->base;
	if (!*name || strlen(name) > 40 || strspn(name, "abcdefghijklmnopqrstuvwxyz"
						  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != strlen(name))
		return cli_usage_error("-o '%s': the name must be 1 to 40 letters, digits, '-', '_' "
				       "or '.'", out);
	memcpy(r->name, name, strlen(name) + 1); /* at most 40 + 1 bytes, checked above */
	r->out = out;
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
	snprintf(name, sizeof name, "%.*s", (int)(dot && dot != file ? dot - file : 40), file);
	if (r->name_opt)
		snprintf(name, sizeof name, "%.63s", r->name_opt);
	snprintf(out, sizeof out, "%.*s%s%s.yaml", (int)(len && o[len - 1] == '/' ? len - 1 : len),
		 o, len ? "/" : "", name);
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
		network(r);
		tcp_cpu(r);
		crypto(r);
		ring(r);
		storage(r);
		cpu(r);
		gpu(r);
		list_unused(r);
		if (r->effective_ring && !r->effective_done)
			rc = cli_usage_error("--effective-ring: no tcp ring all-reduce series "
					     "(allreduce_ring_busbw) to take the costs from");
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
