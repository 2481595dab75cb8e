/* Drawing one picture with gnuplot, safely: the script, data and gnuplot's
 * messages live in a private temporary folder; gnuplot draws into a
 * temporary beside the picture's place; the picture is renamed into place
 * only when gnuplot exited 0, said nothing but warnings, and the file is
 * whole (a PNG ends with its IEND chunk, an SVG with </svg>): a full disk
 * truncates the file while gnuplot still exits 0. An interrupted command
 * leaves none of it behind (report/atomic.h). `dpusim plot` and
 * `dpusim calibrate --plot` draw through here. */
#ifndef DPUSIM_TOOLS_GNUPLOT_H
#define DPUSIM_TOOLS_GNUPLOT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct gp_job {
	char dir[256];           /* private temporary folder ($TMPDIR, else /tmp) */
	char script[288], data[288], log[288];
	char tmp[PATH_MAX];      /* the picture before the rename */
	FILE *f;                 /* the script, open until gp_finish */
} gp_job;

/* Starts a picture that goes to out (.svg: SVG, else PNG): makes the
 * private folder, opens the script and creates the temporary picture
 * (refusing an out that is an input of the command). The caller writes
 * the terminal, then gp_set_output, then the plot. 0, or SIM_EIO /
 * SIM_EEXIST with errbuf set (call gp_finish to clean up all the same). */
int gp_begin(gp_job *g, const char *out, char *errbuf, size_t errlen);
/* "set output '<temporary>'" into the script. */
void gp_set_output(gp_job *g);
/* Opens g->data for writing: NULL (errbuf set) on failure. */
FILE *gp_open_data(gp_job *g, char *errbuf, size_t errlen);
/* When draw: runs gnuplot on the script, checks it and the picture, and
 * renames the picture to out. Always removes every temporary. 0, or
 * SIM_EIO / SIM_EEXIST with errbuf set (gnuplot's own message included). */
int gp_finish(gp_job *g, const char *out, bool draw, char *errbuf, size_t errlen);

/* Writes s as a gnuplot single-quoted string (' doubled, newlines as
 * spaces). */
void gp_put_str(FILE *f, const char *s);

/* Whether the file at path is a whole PNG (svg false) or SVG (svg true). */
bool gp_picture_whole(const char *path, bool svg);

#endif
