/* dpusim plot --kind scaling from a file of `dpusim bench scale` output:
 * wall time of one training iteration against GPUs, one line per case,
 * with the linear-in-work line that issue 14 asks the cost to stay under. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/cli.h"
#include "tools/plot.h"

#define MAX_CASES 16
#define MAX_SIZES 16 /* --train-gpus takes at most 16 */

struct bench_series {
	char net[32], routing[32], steps[16];
	char label[128];     /* from the case's "scale LABEL:" line, else built */
	double gpus[MAX_SIZES], wall_s[MAX_SIZES], work[MAX_SIZES];
	unsigned long mb[MAX_SIZES];
	size_t n;
	bool named;          /* a "scale" line named it */
};

struct bench_file {
	struct bench_series s[MAX_CASES];
	size_t ns;
};

/* The value of "key=" among a line's blank-separated fields, copied. */
static bool field(const char *line, const char *key, char *out, size_t n)
{
	size_t kl = strlen(key);
	for (const char *p = line; (p = strstr(p, key)); p += kl)
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t len = strcspn(p + kl + 1, " \n");
			if (len == 0 || len >= n)
				return false;
			memcpy(out, p + kl + 1, len);
			out[len] = '\0';
			return true;
		}
	return false;
}

static bool num_field(const char *line, const char *key, double *v)
{
	char buf[32], *end;
	if (!field(line, key, buf, sizeof buf))
		return false;
	*v = strtod(buf, &end);
	return !*end && *v >= 0 && isfinite(*v);
}

/* A count (gpus, microbatches): a whole number that fits 32 bits, so the
 * cast of microbatches below is defined (1e308 was not). */
static bool count_field(const char *line, const char *key, double *v)
{
	return num_field(line, key, v) && *v == floor(*v) && *v <= UINT32_MAX;
}

/* A train line into the current series, or a new one when its case
 * differs or its sizes stop growing (the next case's first size). */
static int add_train(struct bench_file *f, const char *line, const char *path, size_t lineno)
{
	char net[32], rt[32], steps[16];
	double gpus, wall, mb;
	struct bench_series *s = f->ns ? &f->s[f->ns - 1] : NULL;
	if (!field(line, "network", net, sizeof net) || !field(line, "routing", rt, sizeof rt) ||
	    !field(line, "ring_steps", steps, sizeof steps) || !count_field(line, "gpus", &gpus) ||
	    !num_field(line, "wall_s", &wall) || !count_field(line, "microbatches", &mb) || gpus < 1)
		return cli_error("%s:%zu: a 'train' line without gpus, network, routing, microbatches, "
				 "wall_s and ring_steps as dpusim bench scale writes them (whole gpus "
				 "and microbatches, a finite wall_s)", path, lineno), CLI_USAGE;
	if (!s || s->named || strcmp(s->net, net) || strcmp(s->routing, rt) ||
	    strcmp(s->steps, steps) || s->gpus[s->n - 1] >= gpus) {
		if (f->ns == MAX_CASES)
			return cli_error("%s:%zu: more than %d cases to plot", path, lineno, MAX_CASES),
			       CLI_USAGE;
		s = &f->s[f->ns++];
		snprintf(s->net, sizeof s->net, "%s", net);
		snprintf(s->routing, sizeof s->routing, "%s", rt);
		snprintf(s->steps, sizeof s->steps, "%s", steps);
	}
	if (s->n == MAX_SIZES)
		return cli_error("%s:%zu: more than %d sizes in one case", path, lineno, MAX_SIZES),
		       CLI_USAGE;
	s->gpus[s->n] = gpus, s->wall_s[s->n] = wall, s->work[s->n] = gpus * mb;
	s->mb[s->n++] = (unsigned long)mb;
	return 0;
}

/* "scale LABEL: ..." names the series its train lines just made. */
static void name_series(struct bench_file *f, const char *line)
{
	struct bench_series *s = f->ns ? &f->s[f->ns - 1] : NULL;
	size_t len = strcspn(line + 6, ":");
	if (s && !s->named && line[6 + len] == ':' && len < sizeof s->label) {
		memcpy(s->label, line + 6, len);
		s->label[len] = '\0';
		s->named = true;
	}
}

static int read_bench(const char *path, struct bench_file *f)
{
	FILE *in = fopen(path, "r");
	char line[4096];
	size_t lineno = 0;
	int rc = 0;
	struct stat st;
	if (!in)
		return cli_error("cannot read '%s': %s", path, strerror(errno)), CLI_USAGE;
	/* /dev/zero was read without end (and a pipe's start went to the
	 * SQLite check, cmd_plot.c is_sqlite) */
	if (fstat(fileno(in), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		fclose(in);
		return cli_usage_error("'%s' is not a regular file: plot --kind scaling reads a results "
				       "database or the output of 'dpusim bench scale' saved to a file",
				       path);
	}
	while (!rc && fgets(line, sizeof line, in)) {
		lineno++;
		if (!strncmp(line, "train ", 6))
			rc = add_train(f, line, path, lineno);
		else if (!strncmp(line, "scale ", 6))
			name_series(f, line);
	}
	if (!rc && ferror(in))
		rc = (cli_error("cannot read '%s': %s", path, strerror(errno)), CLI_USAGE);
	fclose(in);
	if (!rc && f->ns == 0)
		rc = cli_usage_error("plot --kind scaling reads a results database or the output of "
				     "'dpusim bench scale', and '%s' is neither (no 'train' lines)",
				     path);
	return rc;
}

/* A series without a "scale" line (one size, or an older bench's output):
 * its case as --train-cases spells it, the microbatches when they held. */
static void build_label(struct bench_series *s)
{
	bool same_mb = true;
	for (size_t i = 1; i < s->n; i++)
		same_mb &= s->mb[i] == s->mb[0];
	if (same_mb)
		snprintf(s->label, sizeof s->label, "%s/%s/%lu %s", s->net, s->routing, s->mb[0],
			 s->steps);
	else
		snprintf(s->label, sizeof s->label, "%s/%s %s", s->net, s->routing, s->steps);
}

/* Whether two series are the exact and lumped runs of one case. */
static bool pair(const struct bench_series *a, const struct bench_series *b)
{
	return !strcmp(a->net, b->net) && !strcmp(a->routing, b->routing) && a->mb[0] == b->mb[0] &&
	       strcmp(a->steps, b->steps);
}

/* Each series' colour: the exact and lumped runs of a case share one (the
 * dash tells them apart), so the pair reads as one case twice. */
static void colours_of(const struct bench_file *f, size_t *colour)
{
	size_t next = 0;
	for (size_t i = 0; i < f->ns; i++) {
		colour[i] = SIZE_MAX;
		for (size_t j = 0; j < i && colour[i] == SIZE_MAX; j++)
			if (pair(&f->s[j], &f->s[i]))
				colour[i] = colour[j];
		if (colour[i] == SIZE_MAX)
			colour[i] = next++;
	}
}

static int write_data(gp_job *p, struct bench_file *f)
{
	FILE *d = plot_open_data(p);
	if (!d)
		return CLI_USAGE;
	for (size_t i = 0; i < f->ns; i++) {
		for (size_t j = 0; j < f->s[i].n; j++)
			fprintf(d, "%.17g %.17g\n", f->s[i].gpus[j], f->s[i].wall_s[j]);
		fputs("\n\n", d);
	}
	/* linear in GPUs x microbatches from the first case's first size */
	for (size_t j = 0; j < f->s[0].n; j++)
		fprintf(d, "%.17g %.17g\n", f->s[0].gpus[j],
			f->s[0].wall_s[0] * f->s[0].work[j] / f->s[0].work[0]);
	return plot_close_data(d);
}

static void write_script(gp_job *p, const struct bench_file *f)
{
	static const char *const colours[] = { "#4477aa", "#ee6677", "#228833", "#ccbb44",
					       "#66ccee", "#aa3377", "#bbbbbb", "#000000" };
	fputs("set title 'dpusim bench scale: wall time of one GPT-3 175B iteration against "
	      "GPUs'\nset xlabel 'GPUs'\nset ylabel 'wall time (s)'\nset logscale x 2\nset logscale y 10\n"
	      "set format y '%g'\nset key inside left top reverse Left\nplot ", p->f);
	size_t colour[MAX_CASES];
	colours_of(f, colour);
	for (size_t i = 0; i < f->ns; i++) {
		bool lumped = !strcmp(f->s[i].steps, "lumped");
		size_t c = colour[i];
		fprintf(p->f, "%s'%s' index %zu using 1:2 with linespoints lw 2 lc rgb '%s' dt %d "
			"pt %zu title ", i ? ", " : "", p->data, i,
			colours[c % (sizeof colours / sizeof colours[0])], lumped ? 2 : 1,
			lumped ? c * 2 % 14 + 4 : c * 2 % 14 + 5);
		gp_put_str(p->f, f->s[i].label);
	}
	fprintf(p->f, ", '%s' index %zu using 1:2 with lines lw 1 dt 3 lc rgb '#808080' title ",
		p->data, f->ns);
	gp_put_str(p->f, f->s[0].n > 1 ? "linear in GPUs x microbatches (from the first case)"
				       : "linear (one size: no curve)");
	fputc('\n', p->f);
}

int plot_bench_scaling(const struct plot_opts *o)
{
	struct bench_file *f = calloc(1, sizeof *f);
	gp_job p = { .f = NULL };
	int rc;
	if (!f)
		return cli_error("out of memory"), CLI_USAGE;
	rc = read_bench(o->src[0], f);
	for (size_t i = 0; !rc && i < f->ns; i++)
		if (!f->s[i].named)
			build_label(&f->s[i]);
	if (!rc && !(rc = plot_begin(&p, o)) && !(rc = write_data(&p, f)))
		write_script(&p, f);
	free(f);
	return p.dir[0] ? plot_finish(&p, o->out, rc) : rc;
}
