/* Shared plumbing of `dpusim plot` (tools/cmd_plot.c) and its kinds that
 * live in their own files (tools/plot_timeline.c). */
#ifndef DPUSIM_TOOLS_PLOT_H
#define DPUSIM_TOOLS_PLOT_H

#include <stdbool.h>
#include <stdio.h>

#include "tools/gnuplot.h"

struct plot_opts {
	const char *src[2];
	int nsrc;
	const char *kind;
	const char *out;
	const char *metric;    /* capacity: default samples_per_s */
	const char *scenario;  /* DB plots: default the newest run's */
	const char *xkey;      /* DB plots: default the first key of the point */
	const char *where[8];  /* DB plots: KEY=VALUE filters on the sweep point */
	size_t nwhere;
	long long run;         /* breakdown from a DB: run id, 0 newest */
	double tol;            /* compare: tolerance band, NAN none */
	unsigned max_tracks;   /* timeline: rows drawn at most */
	unsigned w, h;
	bool size_given;       /* --size: else a timeline grows with its rows */
};

/* Start the picture (tools/gnuplot.h) and its script with the terminal for
 * o->out (pngcairo or svg, o->w x o->h). 0 or CLI_USAGE (message printed;
 * call plot_finish all the same). */
int plot_begin(gp_job *p, const struct plot_opts *o);
/* Open p's data file for writing, or NULL (message printed). */
FILE *plot_open_data(gp_job *p);
/* Closes a data file: 0, or CLI_USAGE (message printed) on a write error. */
int plot_close_data(FILE *d);
/* When rc is 0: run gnuplot and rename the picture to `out`, saying so on
 * stdout. Always removes the temporary files. Returns rc, or CLI_USAGE when
 * the picture could not be drawn. */
int plot_finish(gp_job *p, const char *out, int rc);

/* --kind timeline: a per-track Gantt chart of a Chrome/Perfetto trace file
 * (tools/trace.h writes them). */
int plot_timeline(const struct plot_opts *o);

/* --kind scaling from a file of `dpusim bench scale` output (tools/
 * plot_bench.c): wall time against GPUs, one line per case (named by its
 * "scale" line; exact and lumped runs of a case in one colour, lumped
 * dashed), and the line linear in GPUs x microbatches. 0 or CLI_USAGE. */
int plot_bench_scaling(const struct plot_opts *o);

#endif
