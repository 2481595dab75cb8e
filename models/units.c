/* Quantity parsing: a number, optional blanks, then a unit from one table of
 * base units, each with the prefixes it accepts. Decimal (k, M, G...) and
 * binary (Ki, Mi, Gi...) prefixes are distinct: 1KB = 1000 B, 1KiB = 1024 B. */
#include "models/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/err.h"

#define TWO_TO_53 9007199254740992.0
#define TWO_TO_64 18446744073709551616.0

enum pfx_class { PFX_NONE, PFX_SUB, PFX_DEC, PFX_DECBIN };

typedef struct prefix {
	const char *sym;
	double scale;
} prefix;

/* Sub-multiples, for times. "u" and "µ" are both micro. */
static const prefix pfx_sub[] = {
	{ "", 1 }, { "m", 1e-3 }, { "u", 1e-6 }, { "µ", 1e-6 }, { "n", 1e-9 }, { "p", 1e-12 },
};
/* Decimal multiples; "k" and "K" are both 1000 (K is common in "KB"). */
static const prefix pfx_dec[] = {
	{ "", 1 }, { "k", 1e3 }, { "K", 1e3 }, { "M", 1e6 }, { "G", 1e9 },
	{ "T", 1e12 }, { "P", 1e15 }, { "E", 1e18 }, { "Z", 1e21 },
};
static const prefix pfx_bin[] = {
	{ "Ki", 1024.0 }, { "Mi", 1048576.0 }, { "Gi", 1073741824.0 },
	{ "Ti", 1099511627776.0 }, { "Pi", 1125899906842624.0 },
};

typedef struct base_unit {
	const char *sym;
	unit_dim dim;
	double scale; /* SI value of one unprefixed unit */
	enum pfx_class pfx;
} base_unit;

/* The first unit of each dimension is the one unit_format writes. */
static const base_unit units[] = {
	{ "B", UNIT_BYTES, 1, PFX_DECBIN },
	{ "B/s", UNIT_BYTES_PER_S, 1, PFX_DECBIN },
	{ "Bps", UNIT_BYTES_PER_S, 1, PFX_DECBIN },
	{ "bps", UNIT_BYTES_PER_S, 0.125, PFX_DECBIN },
	{ "b/s", UNIT_BYTES_PER_S, 0.125, PFX_DECBIN },
	{ "s", UNIT_SECONDS, 1, PFX_SUB },
	{ "min", UNIT_SECONDS, 60, PFX_NONE },
	{ "h", UNIT_SECONDS, 3600, PFX_NONE },
	{ "d", UNIT_SECONDS, 86400, PFX_NONE },
	{ "Hz", UNIT_HZ, 1, PFX_DEC },
	{ "FLOP", UNIT_FLOP, 1, PFX_DEC },
	{ "FLOP/s", UNIT_FLOP_PER_S, 1, PFX_DEC },
	{ "FLOPS", UNIT_FLOP_PER_S, 1, PFX_DEC },
	{ "/s", UNIT_PER_S, 1, PFX_DEC },
	{ "pps", UNIT_PER_S, 1, PFX_DEC },
	{ "IOPS", UNIT_PER_S, 1, PFX_DEC },
	{ "msg/s", UNIT_PER_S, 1, PFX_DEC },
	{ "op/s", UNIT_PER_S, 1, PFX_DEC },
	{ "s/sample", UNIT_S_PER_SAMPLE, 1, PFX_SUB },
	{ "cycles/byte", UNIT_CYCLES_PER_BYTE, 1, PFX_DEC },
	{ "cycles/packet", UNIT_CYCLES_PER_PACKET, 1, PFX_DEC },
	{ "cycles/sample", UNIT_CYCLES_PER_SAMPLE, 1, PFX_DEC },
	{ "W", UNIT_WATTS, 1, PFX_DEC },
	{ "USD", UNIT_USD, 1, PFX_NONE },
	{ "USD/s", UNIT_USD_PER_S, 1, PFX_NONE },
	{ "USD/h", UNIT_USD_PER_S, 1.0 / 3600.0, PFX_NONE },
	{ "USD/J", UNIT_USD_PER_J, 1, PFX_NONE },
	{ "USD/kWh", UNIT_USD_PER_J, 1.0 / 3.6e6, PFX_NONE },
	{ "%", UNIT_FRACTION, 0.01, PFX_NONE },
};
#define NUNITS (sizeof units / sizeof units[0])

typedef struct dim_info {
	const char *name, *example, *si;
} dim_info;

static const dim_info dims[UNIT_NDIMS] = {
	[UNIT_COUNT] = { "a whole number", "8", "" },
	[UNIT_NUMBER] = { "a number", "1.5", "" },
	[UNIT_FRACTION] = { "a fraction", "15% or 0.15", "" },
	[UNIT_BYTES] = { "a size", "64MiB or 4KB", "B" },
	[UNIT_BYTES_PER_S] = { "a data rate", "400Gbps or 25GB/s", "B/s" },
	[UNIT_SECONDS] = { "a time", "1.5us or 3ms", "s" },
	[UNIT_HZ] = { "a frequency", "2.6GHz", "Hz" },
	[UNIT_FLOP] = { "an amount of work", "3.1e23FLOP or 1PFLOP", "FLOP" },
	[UNIT_FLOP_PER_S] = { "a compute rate", "989TFLOP/s", "FLOP/s" },
	[UNIT_PER_S] = { "an event rate", "200Mpps, 1.5MIOPS or 215Mmsg/s", "/s" },
	[UNIT_S_PER_SAMPLE] = { "a time per sample", "0.2ms/sample", "s/sample" },
	[UNIT_CYCLES_PER_BYTE] = { "a cost per byte", "1.2cycles/byte", "cycles/byte" },
	[UNIT_CYCLES_PER_PACKET] = { "a cost per packet", "5000cycles/packet", "cycles/packet" },
	[UNIT_CYCLES_PER_SAMPLE] = { "a cost per sample", "2Mcycles/sample", "cycles/sample" },
	[UNIT_WATTS] = { "a power", "700W", "W" },
	[UNIT_USD] = { "an amount of money", "25000USD", "USD" },
	[UNIT_USD_PER_S] = { "a price per time", "2.5USD/h", "USD/s" },
	[UNIT_USD_PER_J] = { "an energy price", "0.12USD/kWh", "USD/J" },
};

const char *unit_dim_name(unit_dim dim)
{
	return dim < UNIT_NDIMS ? dims[dim].name : "?";
}

const char *unit_dim_example(unit_dim dim)
{
	return dim < UNIT_NDIMS ? dims[dim].example : "?";
}

const char *unit_dim_si(unit_dim dim)
{
	return dim < UNIT_NDIMS ? dims[dim].si : "?";
}

unsigned unit_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64];
	if (la > 62 || lb > 62)
		return 255;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb] > 255 ? 255 : row[lb];
}

/* Calls fn for every spelling (prefix + base) of every unit; stops when fn
 * returns true. Spellings are built into a small buffer, never stored. */
typedef bool (*spelling_fn)(const char *spelling, const base_unit *u, double scale, void *ctx);

static bool each_prefix(const base_unit *u, const prefix *p, size_t np, spelling_fn fn, void *ctx)
{
	char buf[48];
	for (size_t i = 0; i < np; i++) {
		snprintf(buf, sizeof buf, "%s%s", p[i].sym, u->sym);
		if (fn(buf, u, p[i].scale * u->scale, ctx))
			return true;
	}
	return false;
}

static bool each_spelling(spelling_fn fn, void *ctx)
{
	static const prefix none[] = { { "", 1 } };
	for (size_t i = 0; i < NUNITS; i++) {
		const base_unit *u = &units[i];
		bool stop = false;
		switch (u->pfx) {
		case PFX_NONE: stop = each_prefix(u, none, 1, fn, ctx); break;
		case PFX_SUB: stop = each_prefix(u, pfx_sub, sizeof pfx_sub / sizeof *pfx_sub, fn, ctx); break;
		case PFX_DEC: stop = each_prefix(u, pfx_dec, sizeof pfx_dec / sizeof *pfx_dec, fn, ctx); break;
		case PFX_DECBIN:
			stop = each_prefix(u, pfx_dec, sizeof pfx_dec / sizeof *pfx_dec, fn, ctx) ||
			       each_prefix(u, pfx_bin, sizeof pfx_bin / sizeof *pfx_bin, fn, ctx);
			break;
		}
		if (stop)
			return true;
	}
	return false;
}

typedef struct lookup {
	const char *want;
	const base_unit *found;
	double scale;
} lookup;

static bool match_exact(const char *sp, const base_unit *u, double scale, void *ctx)
{
	lookup *l = ctx;
	if (strcmp(sp, l->want))
		return false;
	l->found = u;
	l->scale = scale;
	return true;
}

typedef struct suggest {
	const char *want;
	unit_dim dim;
	unsigned best;
	char spelling[48];
} suggest;

/* Closest spelling of the wanted dimension; a case-only difference wins. */
static bool match_near(const char *sp, const base_unit *u, double scale, void *ctx)
{
	suggest *s = ctx;
	unsigned d;
	(void)scale;
	if (u->dim != s->dim)
		return false;
	d = strcasecmp(sp, s->want) ? 2 * unit_edit_distance(sp, s->want) : 1;
	if (d < s->best) {
		s->best = d;
		snprintf(s->spelling, sizeof s->spelling, "%s", sp);
	}
	return false;
}

static void set_err(unit_err *err, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(unit_err *err, const char *hint, const char *fmt, ...)
{
	va_list ap;
	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	snprintf(err->hint, sizeof err->hint, "%s", hint ? hint : "");
}

/* Length of the number at the start of s ([+-]d+[.d+][e[+-]d+]), 0 if none. */
static size_t number_len(const char *s)
{
	size_t i = 0;
	if (s[i] == '+' || s[i] == '-')
		i++;
	if (!isdigit((unsigned char)s[i]))
		return 0;
	while (isdigit((unsigned char)s[i]))
		i++;
	if (s[i] == '.') {
		if (!isdigit((unsigned char)s[i + 1]))
			return 0;
		i++;
		while (isdigit((unsigned char)s[i]))
			i++;
	}
	if (s[i] == 'e' || s[i] == 'E') {
		size_t j = i + 1;
		if (s[j] == '+' || s[j] == '-')
			j++;
		if (isdigit((unsigned char)s[j])) {
			while (isdigit((unsigned char)s[j]))
				j++;
			i = j;
		}
	}
	return i;
}

/* A unit that failed to match: say whether it belongs to another dimension,
 * else suggest the nearest spelling of the wanted one. */
static int bad_unit(const char *s, const char *unit, unit_dim dim, unit_err *err)
{
	lookup l = { .want = unit };
	suggest sg = { .want = unit, .dim = dim, .best = 255 };
	char hint[96] = "";
	if (each_spelling(match_exact, &l)) {
		set_err(err, NULL, "'%s' is %s, expected %s such as %s", s, dims[l.found->dim].name,
			dims[dim].name, dims[dim].example);
		return SIM_EUNIT;
	}
	each_spelling(match_near, &sg);
	if (sg.best <= 2 * (strlen(unit) < 4 ? 1 : 2))
		snprintf(hint, sizeof hint, "did you mean '%s'?", sg.spelling);
	set_err(err, hint, "unknown unit '%s' in '%s', expected %s such as %s", unit, s,
		dims[dim].name, dims[dim].example);
	return SIM_EUNIT;
}

/* A count must be whole and held exactly. Above 2^53 a double skips
 * integers: 9007199254740993 would silently become ...992. Below 2^64 the
 * long double (64-bit mantissa on x86-64, 113 on aarch64) holds the written
 * integer exactly, so comparing the two tells; larger counts are left to
 * the caller's range check, whose message names the range. */
static int check_count(const char *s, const char *num, double v, unit_err *err)
{
	if (v != floor(v)) {
		set_err(err, NULL, "'%s' is not a whole number", s);
		return SIM_EPARSE;
	}
	if (fabs(v) >= TWO_TO_53 && fabs(v) < TWO_TO_64 && (long double)v != strtold(num, NULL)) {
		set_err(err, NULL, "'%s' cannot be held exactly (whole numbers above 2^53 = 9007199254740992 "
			"are rounded; the nearest is %.0f)", s, v);
		return SIM_ERANGE;
	}
	return SIM_OK;
}

static int parse_plain(const char *s, const char *num, const char *unit, double v, unit_dim dim,
		       double *out, unit_err *err)
{
	int rc;
	if (*unit)
		return bad_unit(s, unit, dim, err);
	rc = dim == UNIT_COUNT ? check_count(s, num, v, err) : SIM_OK;
	if (rc == SIM_OK || rc == SIM_ERANGE)
		*out = v; /* also on SIM_ERANGE: the caller may prefer its range message */
	return rc;
}

int unit_parse(const char *s, unit_dim dim, double *out, unit_err *err)
{
	char num[64];
	size_t n = number_len(s);
	const char *unit = s + n;
	lookup l = { 0 };
	double v;
	if (dim >= UNIT_NDIMS)
		return SIM_EINVAL;
	if (n == 0 || n >= sizeof num) {
		set_err(err, NULL, "'%s' is not a number, expected %s such as %s", s, dims[dim].name,
			dims[dim].example);
		return SIM_EPARSE;
	}
	memcpy(num, s, n);
	num[n] = '\0';
	errno = 0;
	v = strtod(num, NULL);
	if (errno == ERANGE || !isfinite(v)) {
		set_err(err, NULL, "'%s' is out of range", s);
		return SIM_EPARSE;
	}
	while (*unit == ' ')
		unit++;
	if (dim == UNIT_COUNT || dim == UNIT_NUMBER || (dim == UNIT_FRACTION && !*unit))
		return parse_plain(s, num, unit, v, dim, out, err);
	if (!*unit && v == 0) { /* zero is zero in every unit: '0' needs none */
		*out = 0;
		return SIM_OK;
	}
	if (!*unit) {
		set_err(err, NULL, "missing unit in '%s', expected %s such as %s", s, dims[dim].name,
			dims[dim].example);
		return SIM_EUNIT;
	}
	l.want = unit;
	if (!each_spelling(match_exact, &l) || l.found->dim != dim)
		return bad_unit(s, unit, dim, err);
	*out = v * l.scale;
	if (!isfinite(*out)) {
		set_err(err, NULL, "'%s' is out of range", s);
		return SIM_EPARSE;
	}
	return SIM_OK;
}

int unit_parse_u64(const char *s, unsigned long long *out, unit_err *err)
{
	size_t digits = strspn(s, "0123456789");
	double v = 0;
	int rc;
	if (digits && !s[digits]) {
		errno = 0;
		*out = strtoull(s, NULL, 10); /* exactly, never through a double */
		if (errno != ERANGE)
			return SIM_OK;
	} else if ((rc = unit_parse(s, UNIT_COUNT, &v, err))) {
		return rc;
	} else if (v >= 0 && v < TWO_TO_64) {
		*out = (unsigned long long)v;
		return SIM_OK;
	}
	set_err(err, NULL, "'%s' is out of range, expected a whole number from 0 to 18446744073709551615 "
		"(2^64-1)", s);
	return SIM_ERANGE;
}

int unit_parse_bool(const char *s, bool *out, unit_err *err)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	for (size_t i = 0; i < 3; i++) {
		if (!strcmp(s, yes[i]))
			return *out = true, SIM_OK;
		if (!strcmp(s, no[i]))
			return *out = false, SIM_OK;
	}
	set_err(err, NULL, "'%s' is not a boolean, expected true or false", s);
	return SIM_EPARSE;
}

/* Shortest %g form that reads back to exactly v. */
static void format_number(double v, char *buf, size_t n)
{
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

char *unit_format(double v, unit_dim dim, char *buf, size_t n)
{
	char num[40];
	/* Every digit, so that a count above 2^53 reads back exactly (%g's
	 * shortest form may name another integer that rounds to v). */
	if (dim == UNIT_COUNT && v == floor(v) && fabs(v) < TWO_TO_64) {
		snprintf(buf, n, "%.0f", v);
		return buf;
	}
	format_number(v, num, sizeof num);
	snprintf(buf, n, "%s%s", num, unit_dim_si(dim));
	return buf;
}
