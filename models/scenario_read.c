/* Typed readers for scenario mappings: each value is checked for type, unit
 * and range, and every problem becomes one positioned message. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "models/scenario_int.h"
#include "sim/err.h"

static void verr(scn_rd *r, const yt_node *at, bool key, const char *fmt, va_list ap)
{
	/* a path at PATH_MAX whole; past that a long value loses its middle,
	 * never the end that says what was expected (sim_vfit) */
	char msg[PATH_MAX + 512];
	sim_vfit(msg, sizeof msg, fmt, ap);
	r->errs++;
	if (!at)
		diag_add(r->d, NULL, 0, 0, "%s", msg);
	else
		diag_add(r->d, at->file, key ? at->key_line : at->line, key ? at->key_col : at->col,
			 "%s", msg);
}

void scn_err(scn_rd *r, const yt_node *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verr(r, at, false, fmt, ap);
	va_end(ap);
}

void scn_err_key(scn_rd *r, const yt_node *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verr(r, at, at && at->key_line > 0, fmt, ap);
	va_end(ap);
}

void scn_err_missing(scn_rd *r, const yt_node *m, const char *key, const char *what)
{
	const yt_node *null = yt_removed(m, key);
	const char *open = what ? " (" : "", *shut = what ? ")" : "";
	if (!what)
		what = "";
	if (null)
		scn_err(r, null, "missing '%s'%s%s%s: this null removes it from the extended scenario", key,
			open, what, shut);
	else
		scn_err(r, m, "missing '%s'%s%s%s", key, open, what, shut);
}

char *scn_words(const char *const *words, char *buf, size_t n)
{
	size_t len = 0, count = 0;
	while (words[count])
		count++;
	buf[0] = '\0';
	for (size_t i = 0; i < count && len < n; i++) {
		const char *sep = i == 0 ? "" : i + 1 == count ? " or " : ", ";
		len += (size_t)snprintf(buf + len, n - len, "%s%s", sep, words[i]);
	}
	return buf;
}

void scn_only_keys(scn_rd *r, const yt_node *m, const char *const *keys, const char *where)
{
	size_t nkeys = 0;
	while (keys[nkeys])
		nkeys++;
	for (size_t i = 0; m && m->type == YT_MAP && i < m->nkids; i++) {
		const yt_node *k = m->kids[i];
		bool known = false;
		for (size_t j = 0; j < nkeys && !known; j++)
			known = !strcmp(k->key, keys[j]);
		if (known)
			continue;
		const char *best = diag_suggest(k->key, keys, nkeys);
		if (best)
			scn_err_key(r, k, "unknown key '%s' in %s (did you mean '%s'?)", k->key, where, best);
		else
			scn_err_key(r, k, "unknown key '%s' in %s", k->key, where);
	}
}

/* The node of type `type` under key, or NULL (absent: an error if
 * required, describing the value as `missing` when not NULL; another type:
 * an error saying it must be `must_be`). */
static const yt_node *typed(scn_rd *r, const yt_node *m, const char *key, bool required,
			    yt_type type, const char *must_be, const char *missing)
{
	const yt_node *n = yt_get(m, key);
	if (!n) {
		if (required)
			scn_err_missing(r, m, key, missing);
		return NULL;
	}
	if (n->type != type) {
		scn_err(r, n, "'%s' must be %s, not %s", key, must_be, yt_type_name(n->type));
		return NULL;
	}
	return n;
}

const yt_node *scn_section(scn_rd *r, const yt_node *m, const char *key, bool required)
{
	return typed(r, m, key, required, YT_MAP, "a mapping", NULL);
}

/* The scalar under key, or NULL (absent: error if required; wrong type:
 * error). */
static const yt_node *scalar(scn_rd *r, const yt_node *m, const char *key, bool required,
			     const char *what)
{
	return typed(r, m, key, required, YT_SCALAR, what, what);
}

static void range_error(scn_rd *r, const yt_node *n, const char *key, unit_dim dim, double v,
			double lo, double hi, bool lo_open)
{
	char a[48], b[48];
	unit_format(lo, dim, a, sizeof a);
	unit_format(hi, dim, b, sizeof b);
	if (lo == 0 && lo_open && v <= 0)
		scn_err(r, n, "'%s' must be positive (got '%s')", key, n->text);
	else if (v > hi && !isinf(hi) && lo != 0)
		scn_err(r, n, "'%s' must be between %s and %s (got '%s')", key, a, b, n->text);
	else if (v > hi)
		scn_err(r, n, "'%s' must be at most %s (got '%s')", key, b, n->text);
	else if (!isinf(hi))
		scn_err(r, n, "'%s' must be between %s and %s (got '%s')", key, a, b, n->text);
	else
		scn_err(r, n, "'%s' must be at least %s (got '%s')", key, a, n->text);
}

bool scn_get_q(scn_rd *r, const yt_node *m, const char *key, bool required, unit_dim dim,
	       double lo, double hi, bool lo_open, double *out)
{
	char what[128];
	unit_err e;
	double v;
	snprintf(what, sizeof what, "%s such as %s", unit_dim_name(dim), unit_dim_example(dim));
	const yt_node *n = scalar(r, m, key, required, what);
	int rc;
	if (!n)
		return false;
	rc = unit_parse(n->text, dim, &v, &e);
	if (rc && !(rc == SIM_ERANGE && (v < lo || v > hi))) { /* else the range says more */
		scn_err(r, n, "%s in '%s'%s%s%s", e.msg, key, e.hint[0] ? " (" : "", e.hint,
			e.hint[0] ? ")" : "");
		return false;
	}
	if (v < lo || v > hi || (lo_open && v == lo)) {
		range_error(r, n, key, dim, v, lo, hi, lo_open);
		return false;
	}
	*out = v;
	return true;
}

bool scn_get_int(scn_rd *r, const yt_node *m, const char *key, bool required, long lo, long hi,
		 int *out)
{
	double v;
	if (!scn_get_q(r, m, key, required, UNIT_COUNT, (double)lo, (double)hi, false, &v))
		return false;
	*out = (int)v;
	return true;
}

bool scn_get_u64(scn_rd *r, const yt_node *m, const char *key, unsigned long long *out)
{
	const yt_node *n = scalar(r, m, key, false, "a whole number from 0 to 2^64-1");
	unsigned long long v;
	unit_err e;
	if (!n)
		return false;
	if (unit_parse_u64(n->text, &v, &e)) {
		scn_err(r, n, "%s in '%s'", e.msg, key);
		return false;
	}
	*out = v;
	return true;
}

bool scn_get_bool(scn_rd *r, const yt_node *m, const char *key, bool *out)
{
	const yt_node *n = scalar(r, m, key, false, "true or false");
	unit_err e;
	if (!n)
		return false;
	if (unit_parse_bool(n->text, out, &e)) {
		scn_err(r, n, "%s in '%s'", e.msg, key);
		return false;
	}
	return true;
}

bool scn_get_str(scn_rd *r, const yt_node *m, const char *key, bool required, char *out, size_t n)
{
	const yt_node *v = scalar(r, m, key, required, "a name");
	if (!v)
		return false;
	if (!v->text[0] || strlen(v->text) >= n) {
		scn_err(r, v, "'%s' must be a non-empty name of at most %zu characters", key, n - 1);
		return false;
	}
	/* Names become parts of file names (sweep -o DIR/NAME.pI.json): a '/'
	 * once wrote outside DIR (name: ../../x), a newline split lines. */
	for (const char *c = v->text; *c; c++)
		if (*c == '/' || (unsigned char)*c < 0x20 || *c == 0x7f) {
			scn_err(r, v, "'%s' must be a name without '/' or control characters", key);
			return false;
		}
	snprintf(out, n, "%s", v->text);
	return true;
}

bool scn_get_enum(scn_rd *r, const yt_node *m, const char *key, bool required,
		  const char *const *words, int *out)
{
	char list[256];
	const yt_node *n;
	size_t nw = 0;
	scn_words(words, list, sizeof list);
	if (!(n = scalar(r, m, key, required, list)))
		return false;
	for (; words[nw]; nw++)
		if (!strcmp(n->text, words[nw]))
			return *out = (int)nw, true;
	const char *best = diag_suggest(n->text, words, nw);
	if (best)
		scn_err(r, n, "unknown %s '%s' (expected %s; did you mean '%s'?)", key, n->text, list, best);
	else
		scn_err(r, n, "unknown %s '%s' (expected %s)", key, n->text, list);
	return false;
}
