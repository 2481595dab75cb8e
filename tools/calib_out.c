/* Profile documents, atomic files and gnuplot pictures for `dpusim
 * calibrate`. The profile loader's schema table (models/profile_schema.c)
 * decides which fields a kind has, so a written profile is complete by
 * construction: each field is given, or listed as missing with a reason. */
#include "tools/calib_out.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/units.h"
#include "sim/err.h"
#include "report/atomic.h"
#include "tools/gnuplot.h"

struct cal_doc {
	profile_kind kind;
	char *name, *summary;
	char **value;   /* per schema row: value text, or NULL */
	char **source;  /* per schema row, with value */
	char **missing; /* per schema row: reason, or NULL */
	char *comments; /* "# ..." lines, or NULL */
};

/* printf into a new string (malloc'd), or NULL. */
static char *vfmt(const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s)
		vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

cal_doc *cal_doc_new(profile_kind k, const char *name, const char *summary)
{
	cal_doc *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->kind = k;
	d->name = strdup(name);
	d->summary = strdup(summary);
	d->value = calloc(profile_nfields, sizeof *d->value);
	d->source = calloc(profile_nfields, sizeof *d->source);
	d->missing = calloc(profile_nfields, sizeof *d->missing);
	if (!d->name || !d->summary || !d->value || !d->source || !d->missing)
		return cal_doc_free(d), NULL;
	return d;
}

static void clear_row(cal_doc *d, size_t i)
{
	free(d->value[i]), free(d->source[i]), free(d->missing[i]);
	d->value[i] = d->source[i] = d->missing[i] = NULL;
}

void cal_doc_free(cal_doc *d)
{
	if (!d)
		return;
	for (size_t i = 0; d->value && d->source && d->missing && i < profile_nfields; i++)
		clear_row(d, i);
	free(d->value), free(d->source), free(d->missing);
	free(d->name), free(d->summary), free(d->comments);
	free(d);
}

const char *cal_doc_name(const cal_doc *d)
{
	return d->name;
}

size_t cal_doc_ngiven(const cal_doc *d)
{
	size_t n = 0;
	for (size_t i = 0; i < profile_nfields; i++)
		n += d->value[i] != NULL;
	return n;
}

/* A readable quantity for the field's dimension ("12.34us", "3.5GB/s"),
 * checked to read back through unit_parse; the exact SI form otherwise. */
static void format_value(const profile_field *f, double v, char *buf, size_t n)
{
	double back;
	switch (f->dim) {
	case UNIT_SECONDS: snprintf(buf, n, "%.5gus", v * 1e6); break;
	case UNIT_BYTES_PER_S: snprintf(buf, n, "%.5gGB/s", v / 1e9); break;
	case UNIT_HZ: snprintf(buf, n, "%.6gGHz", v / 1e9); break;
	case UNIT_FLOP: snprintf(buf, n, "%.5gGFLOP", v / 1e9); break;
	case UNIT_FLOP_PER_S: snprintf(buf, n, "%.5gTFLOP/s", v / 1e12); break;
	case UNIT_CYCLES_PER_BYTE: snprintf(buf, n, "%.5gcycles/byte", v); break;
	case UNIT_CYCLES_PER_PACKET: snprintf(buf, n, "%.5gcycles/packet", v); break;
	case UNIT_FRACTION: snprintf(buf, n, "%.4g%%", v * 100); break;
	case UNIT_BYTES: snprintf(buf, n, "%.0fB", v); break;
	default: unit_format(v, f->dim, buf, n); return;
	}
	if (unit_parse(buf, f->dim, &back, NULL) || fabs(back - v) > 1e-4 * fabs(v))
		unit_format(v, f->dim, buf, n);
}

static int find_row(const cal_doc *d, const char *field, size_t *row)
{
	const profile_field *f = profile_field_find(d->kind, field);
	if (!f)
		return SIM_ENOENT;
	*row = profile_field_index(f);
	return SIM_OK;
}

int cal_doc_give(cal_doc *d, const char *field, double v, const char *fmt, ...)
{
	const profile_field *f = profile_field_find(d->kind, field);
	char buf[64];
	size_t i;
	va_list ap;
	if (!f)
		return SIM_ENOENT;
	if (!isfinite(v) || v < f->lo || v > f->hi || (f->lo_open && v == f->lo))
		return SIM_ERANGE;
	i = profile_field_index(f);
	clear_row(d, i);
	format_value(f, v, buf, sizeof buf);
	va_start(ap, fmt);
	d->source[i] = vfmt(fmt, ap);
	va_end(ap);
	d->value[i] = strdup(buf);
	if (!d->value[i] || !d->source[i])
		return clear_row(d, i), SIM_ENOMEM;
	return SIM_OK;
}

int cal_doc_miss(cal_doc *d, const char *field, const char *fmt, ...)
{
	size_t i;
	va_list ap;
	if (find_row(d, field, &i))
		return SIM_ENOENT;
	clear_row(d, i);
	va_start(ap, fmt);
	d->missing[i] = vfmt(fmt, ap);
	va_end(ap);
	return d->missing[i] ? SIM_OK : SIM_ENOMEM;
}

int cal_doc_comment(cal_doc *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = vfmt(fmt, ap), *all;
	va_end(ap);
	if (!line)
		return SIM_ENOMEM;
	size_t old = d->comments ? strlen(d->comments) : 0;
	all = realloc(d->comments, old + strlen(line) + 4);
	if (!all)
		return free(line), SIM_ENOMEM;
	sprintf(all + old, "# %s\n", line);
	d->comments = all;
	free(line);
	return SIM_OK;
}

/* s as a YAML double-quoted string: \ and " escaped, control characters
 * turned into blanks (sources are one line). */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f), fputc(*s, f);
		else
			fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
	fputc('"', f);
}

char *cal_doc_render(const cal_doc *d, const char *default_missing)
{
	char *text = NULL;
	size_t len = 0;
	bool any_missing = false;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fputs(d->comments ? d->comments : "", f);
	fprintf(f, "kind: %s\nname: %s\nsummary: ", profile_kind_name(d->kind), d->name);
	put_quoted(f, d->summary);
	fputs(cal_doc_ngiven(d) ? "\nfields:\n" : "\nfields: {}\n", f);
	for (size_t i = 0; i < profile_nfields; i++) {
		if (profile_fields[i].kind != d->kind || !d->value[i])
			continue;
		fprintf(f, "  %s: { value: %s, source: ", profile_fields[i].name, d->value[i]);
		put_quoted(f, d->source[i]);
		fputs(" }\n", f);
	}
	for (size_t i = 0; i < profile_nfields; i++) {
		char *line;
		if (profile_fields[i].kind != d->kind || d->value[i])
			continue;
		if (!any_missing)
			fputs("missing:\n", f), any_missing = true;
		fputs("  - ", f);
		line = malloc(strlen(profile_fields[i].name) +
			      strlen(d->missing[i] ? d->missing[i] : default_missing) + 3);
		if (line) {
			sprintf(line, "%s: %s", profile_fields[i].name,
				d->missing[i] ? d->missing[i] : default_missing);
			put_quoted(f, line);
		}
		free(line);
		fputc('\n', f);
	}
	if (fclose(f))
		return free(text), NULL;
	return text;
}

static int put_text(FILE *f, const void *text)
{
	return fputs(text, f) < 0 ? SIM_EIO : 0;
}

int cal_write_atomic(const char *path, const char *text, char *errbuf, size_t errlen)
{
	return atomic_write_file(path, put_text, text, errbuf, errlen);
}

/* ---- pictures ---- */

static void write_script(gp_job *g, const cal_plot *p)
{
	FILE *f = g->f;
	fputs("set terminal pngcairo size 900,600 noenhanced font 'sans,11'\n", f);
	gp_set_output(g);
	fputs("set logscale xy\nset grid\nset key top left\nset title ", f);
	gp_put_str(f, p->title);
	fputs("\nset xlabel ", f);
	gp_put_str(f, p->xlabel);
	fputs("\nset ylabel ", f);
	gp_put_str(f, p->ylabel);
	fputs("\n$points << EOD\n", f);
	for (size_t i = 0; i < p->n; i++)
		fprintf(f, "%.17g %.17g\n", p->x[i], p->y[i]);
	fputs("EOD\n", f);
	fprintf(f, "fit_curve(x) = %s\nset samples 400\n", p->curve);
	fputs("plot $points using 1:2 with points pt 7 ps 1.3 title 'measured', "
	      "fit_curve(x) with lines lw 2 title 'fit'\n", f);
}

int cal_plot_png(const char *dir, const cal_plot *p, char *errbuf, size_t errlen)
{
	char png[4200];
	gp_job g;
	int rc;
	snprintf(png, sizeof png, "%s/%s.png", dir, p->file_stem);
	if (!(rc = gp_begin(&g, png, errbuf, errlen)))
		write_script(&g, p);
	rc = gp_finish(&g, png, rc == 0, errbuf, errlen) || rc ? SIM_EIO : 0;
	return rc;
}
