/* What `dpusim calibrate` writes: profile documents (one per kind, in the
 * format of docs/profiles.md, every field of the kind given with its
 * measured source or listed under missing with the reason), written
 * atomically, and gnuplot pictures of each fit against its points. */
#ifndef DPUSIM_TOOLS_CALIB_OUT_H
#define DPUSIM_TOOLS_CALIB_OUT_H

#include <stdbool.h>
#include <stddef.h>

#include "models/profile.h"

typedef struct cal_doc cal_doc;

/* A new empty document of kind k named `name` (copied) with a one-line
 * summary (copied). NULL when out of memory. Free with cal_doc_free. */
cal_doc *cal_doc_new(profile_kind k, const char *name, const char *summary);
void cal_doc_free(cal_doc *d);

/* Gives field `field` the value v (SI units of the field's dimension) and a
 * source (printf format). Replaces an earlier give or miss. 0, SIM_ENOENT
 * (no such field of the kind: a bug in the caller), SIM_ERANGE (v outside
 * the field's accepted range: the caller lists it as missing instead),
 * SIM_ENOMEM. */
int cal_doc_give(cal_doc *d, const char *field, double v, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Lists `field` under missing: with the reason (printf format). 0,
 * SIM_ENOENT, SIM_ENOMEM. */
int cal_doc_miss(cal_doc *d, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Appends a comment line (printf format) to the file's header. */
int cal_doc_comment(cal_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* How many fields are given. */
size_t cal_doc_ngiven(const cal_doc *d);
/* The profile name. */
const char *cal_doc_name(const cal_doc *d);

/* The document as YAML text (malloc'd, caller frees): fields not given nor
 * missed are listed as missing with `default_missing`. NULL when out of
 * memory. */
char *cal_doc_render(const cal_doc *d, const char *default_missing);

/* Writes text to path atomically (path.tmp.PID, fsync, rename). 0 or SIM_EIO
 * with errbuf set to "path: reason". */
int cal_write_atomic(const char *path, const char *text, char *errbuf, size_t errlen);

/* One fit to draw: points (x, y) on log-log axes and the fitted curve as a
 * gnuplot expression in x. Strings are borrowed. */
typedef struct cal_plot {
	const char *file_stem;  /* picture name without .png, e.g. "tcp_lat" */
	const char *title;
	const char *xlabel, *ylabel;
	const double *x, *y;
	size_t n;
	const char *curve;      /* e.g. "1.2e-05 + 2.5e-10*x" */
} cal_plot;

/* Draws p into dir/STEM.png with gnuplot (pngcairo). 0, or SIM_EIO with
 * errbuf set (gnuplot missing or failing; nothing half-written is left). */
int cal_plot_png(const char *dir, const cal_plot *p, char *errbuf, size_t errlen);

#endif
