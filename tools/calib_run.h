/* Internals shared by dpusim calibrate's files (cmd_calibrate.c: the
 * command, reading the bench reports into series, the output documents;
 * calib_fits.c: the fit of each kind of profile, beside tools/calib.c's
 * fitting functions). */
#ifndef DPUSIM_TOOLS_CALIB_RUN_H
#define DPUSIM_TOOLS_CALIB_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "models/profile.h"
#include "tools/calib.h"
#include "tools/calib_out.h"
#include "report/report.h"

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
	const char *plot_dir;
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


/* Figures for messages and sources, each into b. */
const char *cal_fmt_time(double s, char *b, size_t n);
const char *cal_fmt_bytes(double x, char *b, size_t n);
const char *cal_fmt_pm(double x, double se, size_t npts,
			  const char *(*f)(double, char *, size_t), char *b, size_t n);
const char *cal_fmt_rate(double bps, char *b, size_t n);
const char *cal_fmt_num(double x, char *b, size_t n);
const char *cal_fmt_span(const series *s, char *b, size_t n);

/* Series, documents, printing (cmd_calibrate.c). */
series *cal_find_series(cal_run *r, const char *name, const char *transport,
			   const char *unit);
cal_doc *cal_doc_of(cal_run *r, profile_kind k);
void cal_give_or_miss(cal_run *r, profile_kind k, const char *field, double v,
			 const char *source);
void cal_miss(cal_run *r, profile_kind k, const char *field, const char *why);
void cal_print_residuals(const series *s, const double *rel, const cal_lin *fit);
void cal_run_plot(cal_run *r, const series *s, const char *suffix, const char *title,
		 const char *ylabel, const double *y, const char *curve);

/* The fit of each kind (calib_fits.c): what the series give, into the
 * documents, or what is missing and why. */
void cal_kind_network(cal_run *r);
void cal_kind_tcp_cpu(cal_run *r);
void cal_kind_crypto(cal_run *r);
void cal_kind_ring(cal_run *r);
void cal_kind_storage(cal_run *r);
void cal_kind_cpu(cal_run *r);
void cal_kind_gpu(cal_run *r);

#endif
