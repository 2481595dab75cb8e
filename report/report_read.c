/* Reading dpusim-report/1 files: libfyaml's parser in forced-JSON mode
 * hands over one event at a time, and every key is checked and fed
 * through the report setters as it comes, so a report read back obeys the
 * same rules as one built in memory. No document tree is built: a tree
 * costs about 25 times the file (a 28 MB report took 2 GB in compare),
 * events cost nothing that outlives them. Errors say file:line:column
 * (1-based) and what was expected. */
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libfyaml.h>

#include "sim/err.h"

struct mark {
	int line, col;  /* 1-based; 0 unknown */
};

/* A speedup entry, kept until every variant is known (JSON objects have
 * no order: "speedup" may come before "variants"). */
struct pending_speedup {
	char *name;
	double x;
	struct mark key_at, val_at;
};

struct rd {
	const char *name;     /* file name for messages */
	struct fy_diag *diag; /* collects libfyaml's syntax errors */
	struct fy_parser *p;
	struct fy_event *ev;  /* the current event; NULL before the first */
	char *errbuf;
	size_t errlen;
	rep_report *r;
	struct pending_speedup *sp;
	size_t nsp;
	char path[512];       /* JSON path of the current value: /variants/0/name */
	size_t plen;
	const char *text;     /* the input, len bytes */
	size_t len;
};

/* Appends a step to rd->path; returns the length to restore. */
static size_t path_push(struct rd *rd, const char *key, size_t klen, size_t idx)
{
	size_t old = rd->plen, room = sizeof rd->path - old;
	int n = key ? snprintf(rd->path + old, room, "/%.*s", (int)klen, key)
		    : snprintf(rd->path + old, room, "/%zu", idx);
	rd->plen = n < 0 || (size_t)n >= room ? sizeof rd->path - 1 : old + (size_t)n;
	return old;
}

static void path_pop(struct rd *rd, size_t len)
{
	rd->plen = len;
	rd->path[len] = '\0';
}

/* ---- events ------------------------------------------------------------ */

/* Whether (line, col), 1-based, lies after the input's last byte that is
 * not whitespace: an error there means the file ends before its JSON does. */
static bool past_text(const struct rd *rd, int line, int col)
{
	int l = 1, c = 0, last_l = 1, last_c = 0;
	for (size_t i = 0; i < rd->len; i++) {
		if (rd->text[i] == '\n') {
			l++, c = 0;
			continue;
		}
		c++;
		if (!strchr(" \t\r", rd->text[i]) || !rd->text[i])
			last_l = l, last_c = c;
	}
	return line > last_l || (line == last_l && col > last_c);
}

/* The first error libfyaml collected, as our message. */
static int syntax_error(struct rd *rd)
{
	void *it = NULL;
	struct fy_diag_error *e = fy_diag_errors_iterate(rd->diag, &it);
	bool cut = e && past_text(rd, e->line, e->column);
	if (rd->errbuf && rd->errlen)
		snprintf(rd->errbuf, rd->errlen, "%s:%d:%d: invalid JSON: %s%s", rd->name,
			 e ? e->line : 0, e ? e->column : 0, e ? e->msg : "parse failed",
			 cut ? " (the file ends here, before its JSON does: cut short?)" : "");
	return SIM_EPARSE;
}

/* Moves to the next event; a syntax error (or the end of the input where
 * more was due) is SIM_EPARSE with the message set. */
static int next(struct rd *rd)
{
	if (rd->ev)
		fy_parser_event_free(rd->p, rd->ev);
	rd->ev = fy_parser_parse(rd->p);
	return rd->ev ? 0 : syntax_error(rd);
}

static enum fy_event_type type(const struct rd *rd)
{
	return rd->ev->type;
}

static struct mark here(const struct rd *rd)
{
	const struct fy_mark *m = fy_event_start_mark(rd->ev);
	/* libfyaml marks a quoted string inside its quote; editors point at it */
	bool quoted = type(rd) == FYET_SCALAR && rd->ev->scalar.value &&
		      fy_token_scalar_style(rd->ev->scalar.value) == FYSS_DOUBLE_QUOTED;
	if (!m)
		return (struct mark){ 0 };
	return (struct mark){ .line = m->line + 1, .col = m->column + 1 - (quoted && m->column > 0) };
}

static int fail_at(struct rd *rd, struct mark at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_at(struct rd *rd, struct mark at, const char *fmt, ...)
{
	va_list ap;
	char said[1024];
	if (!rd->errbuf || !rd->errlen)
		return SIM_EPARSE;
	va_start(ap, fmt);
	sim_vfit(said, sizeof said, fmt, ap);
	va_end(ap);
	/* a long file name loses its middle, never what was wrong */
	sim_fit(rd->errbuf, rd->errlen, "%s:%d:%d: %s", rd->name, at.line, at.col, said);
	return SIM_EPARSE;
}

/* The current event's scalar text (NUL-terminated by libfyaml's token
 * text, valid until the next event) and its length, or NULL. */
static const char *scalar(const struct rd *rd, size_t *len, enum fy_scalar_style *style)
{
	struct fy_token *tok;
	if (type(rd) != FYET_SCALAR || !(tok = rd->ev->scalar.value))
		return NULL;
	*style = fy_token_scalar_style(tok);
	return fy_token_get_text(tok, len);
}

/* ---- typed scalars (each consumes its value) ------------------------------ */

/* A string with \u0000 inside would be cut there by every C string that
 * carries it on (the database, the report written back): refused whole
 * rather than stored as something else. out: malloc'd copy. */
static int get_str(struct rd *rd, const char *what, char **out)
{
	enum fy_scalar_style style;
	size_t len;
	struct mark at = here(rd);
	const char *s = scalar(rd, &len, &style);
	int err;
	*out = NULL;
	if (!s || style != FYSS_DOUBLE_QUOTED)
		return fail_at(rd, at, "'%s' must be a string", what);
	if (memchr(s, '\0', len))
		return fail_at(rd, at, "'%s' at %s holds a NUL character (\\u0000), which cannot "
			       "be stored", what, rd->plen ? rd->path : "/");
	if (!(*out = strndup(s, len)))
		return SIM_ENOMEM;
	if ((err = next(rd))) { /* the caller owns *out only on success */
		free(*out);
		*out = NULL;
	}
	return err;
}

static int get_num(struct rd *rd, const char *what, double *out)
{
	enum fy_scalar_style style;
	size_t len;
	struct mark at = here(rd);
	const char *t = scalar(rd, &len, &style);
	char s[64], *end;
	if (!t || style != FYSS_PLAIN)
		return fail_at(rd, at, "'%s' must be a number", what);
	snprintf(s, sizeof s, "%.*s", (int)(len < sizeof s ? len : sizeof s - 1), t);
	errno = 0;
	*out = strtod(s, &end);
	if (len >= sizeof s || *end || end == s || errno || !isfinite(*out) || s[0] == 'n' ||
	    s[0] == 't' || s[0] == 'f')
		return fail_at(rd, at, "'%s' must be a finite number, not '%s'", what, s);
	return next(rd);
}

static int get_u64(struct rd *rd, const char *what, uint64_t max, uint64_t *out)
{
	enum fy_scalar_style style;
	size_t len;
	struct mark at = here(rd);
	const char *t = scalar(rd, &len, &style);
	char s[64], *end;
	unsigned long long v;
	if (!t || style != FYSS_PLAIN || t[0] < '0' || t[0] > '9')
		return fail_at(rd, at, "'%s' must be a non-negative integer", what);
	snprintf(s, sizeof s, "%.*s", (int)(len < sizeof s ? len : sizeof s - 1), t);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (len >= sizeof s || *end || errno || v > max)
		return fail_at(rd, at, "'%s' must be an integer in 0..%llu, not '%s'", what,
			       (unsigned long long)max, s);
	*out = v;
	return next(rd);
}

/* ---- objects ------------------------------------------------------------ */

/* Steps into the object or list (as start says: `is` in the message) that
 * `what` must be. */
static int enter(struct rd *rd, const char *what, enum fy_event_type start, const char *is)
{
	if (type(rd) != start)
		return fail_at(rd, here(rd), "'%s' must be %s", what, is);
	return next(rd);
}

/* Reads an object whose keys are among keys[] (nkeys <= 32): for each
 * key, each(rd, index, arg) is called at the value's first event and must
 * consume the value. *start (may be NULL) gets the object's position;
 * *seen the keys present. Unknown and repeated keys are errors. */
static int object(struct rd *rd, const char *what, const char *const *keys, int nkeys,
		  int (*each)(struct rd *, int, void *), void *arg, struct mark *start,
		  unsigned *seen)
{
	int err;
	*seen = 0;
	if (start)
		*start = here(rd);
	if ((err = enter(rd, what, FYET_MAPPING_START, "an object")))
		return err;
	while (type(rd) != FYET_MAPPING_END) {
		enum fy_scalar_style style;
		size_t len;
		const char *k = scalar(rd, &len, &style);
		struct mark kat = here(rd);
		int i = 0;
		while (k && i < nkeys && (strlen(keys[i]) != len || memcmp(keys[i], k, len)))
			i++;
		if (!k || i == nkeys)
			return fail_at(rd, kat, "unknown key '%.*s' in '%s'", k ? (int)len : 1,
				       k ? k : "?", what);
		size_t old;
		if (*seen & (1u << i))
			return fail_at(rd, kat, "duplicate key '%s' in '%s'", keys[i], what);
		*seen |= 1u << i;
		old = path_push(rd, keys[i], strlen(keys[i]), 0);
		if ((err = next(rd)) || (err = each(rd, i, arg)))
			return err;
		path_pop(rd, old);
	}
	return next(rd);
}

static int need(struct rd *rd, unsigned seen, int i, struct mark at, const char *obj,
		const char *key)
{
	return seen & (1u << i) ? 0 : fail_at(rd, at, "'%s' lacks required key '%s'", obj, key);
}

/* An object with keys of our choosing (info, metrics, speedup): each(rd,
 * key, key position, arg) at the value. */
static int open_object(struct rd *rd, const char *what,
		       int (*each)(struct rd *, const char *, struct mark, void *), void *arg)
{
	int err = enter(rd, what, FYET_MAPPING_START, "an object");
	if (err)
		return err;
	while (type(rd) != FYET_MAPPING_END) {
		struct mark kat = here(rd);
		size_t old;
		char *k;
		if ((err = get_str(rd, what, &k)))
			return err;
		old = path_push(rd, k, strlen(k), 0);
		err = each(rd, k, kat, arg);
		free(k);
		if (err)
			return err;
		path_pop(rd, old);
	}
	return next(rd);
}

/* A list: each(rd, arg) at every element's first event. */
static int list(struct rd *rd, const char *what, int (*each)(struct rd *, void *), void *arg)
{
	size_t i = 0;
	int err = enter(rd, what, FYET_SEQUENCE_START, "a list");
	if (err)
		return err;
	while (type(rd) != FYET_SEQUENCE_END) {
		size_t old = path_push(rd, NULL, 0, i++);
		if ((err = each(rd, arg)))
			return err;
		path_pop(rd, old);
	}
	return next(rd);
}

/* ---- scenario and info --------------------------------------------------- */

struct scn_rd {
	char *s[5];          /* name, file, sha256, -, point */
	uint64_t seed;
	struct mark at[5];
};

static int scenario_key(struct rd *rd, int i, void *arg)
{
	static const char *const what[] = { "name", "file", "sha256", "seed", "point" };
	struct scn_rd *sc = arg;
	sc->at[i] = here(rd);
	if (i == 3)
		return get_u64(rd, "seed", UINT64_MAX, &sc->seed);
	return get_str(rd, what[i], &sc->s[i]);
}

static int read_scenario(struct rd *rd)
{
	static const char *const keys[] = { "name", "file", "sha256", "seed", "point" };
	struct scn_rd sc = { .s = { NULL } };
	struct mark at;
	unsigned seen;
	int err = object(rd, "scenario", keys, 5, scenario_key, &sc, &at, &seen);
	if (!err && !(err = need(rd, seen, 0, at, "scenario", "name")) &&
	    !(err = need(rd, seen, 3, at, "scenario", "seed"))) {
		err = rep_set_scenario(rd->r, &(rep_scenario){ .name = sc.s[0], .file = sc.s[1],
							       .sha256 = sc.s[2], .seed = sc.seed,
							       .point = sc.s[4] });
		if (err == SIM_EINVAL)
			err = fail_at(rd, seen & 4 ? sc.at[2] : sc.at[0],
				      "scenario: empty name or sha256 not 64 lowercase hex digits");
	}
	for (int i = 0; i < 5; i++)
		free(sc.s[i]);
	return err;
}

static int info_entry(struct rd *rd, const char *k, struct mark kat, void *arg)
{
	char *val;
	int err;
	(void)arg;
	if ((err = get_str(rd, k, &val)))
		return err;
	for (size_t i = 0; !err && i < rep_ninfo(rd->r); i++) {
		const char *ik, *iv;
		rep_info_at(rd->r, i, &ik, &iv);
		if (!strcmp(ik, k))
			err = fail_at(rd, kat, "duplicate key '%s' in 'info'", k);
	}
	if (!err && (err = rep_set_info(rd->r, k, val)) == SIM_EINVAL)
		err = fail_at(rd, kat, "empty info key");
	free(val);
	return err;
}

/* ---- variants ------------------------------------------------------------ */

static int offload_key(struct rd *rd, int i, void *arg)
{
	size_t nk;
	const char *const *keys = rep_offload_keys(&nk);
	struct mark at = here(rd);
	char *s;
	int err = get_str(rd, keys[i], &s);
	if (!err && (err = rep_variant_set_offload(arg, keys[i], s)) == SIM_EINVAL)
		err = fail_at(rd, at, "unknown %s offload '%s'", keys[i], s);
	free(s);
	return err;
}

struct stat_rd {
	double x[4];
};

static int stat_key(struct rd *rd, int i, void *arg)
{
	static const char *const keys[] = { "mean", "p50", "p99", "ci95" };
	struct stat_rd *st = arg;
	return get_num(rd, keys[i], &st->x[i]);
}

static int read_stat(struct rd *rd, rep_variant *var, const char *name)
{
	static const char *const keys[] = { "mean", "p50", "p99", "ci95" };
	struct stat_rd st = { .x = { NAN, NAN, NAN, NAN } };
	struct mark at;
	unsigned seen;
	int err = object(rd, name, keys, 4, stat_key, &st, &at, &seen);
	if (err || (err = need(rd, seen, 0, at, name, "mean")))
		return err;
	err = rep_variant_set_stat(var, name, st.x[0], st.x[1], st.x[2], st.x[3]);
	if (err == SIM_ERANGE)
		return fail_at(rd, at, "'%s' has a negative or out-of-range value", name);
	return err;
}

struct metrics_rd {
	rep_variant *var;
	unsigned long long seen;  /* by metric index */
};

static int metric_entry(struct rd *rd, const char *k, struct mark kat, void *arg)
{
	struct metrics_rd *m = arg;
	size_t nm;
	const rep_metric_def *defs = rep_metric_defs(&nm), *def = rep_metric_find(k);
	size_t idx = def ? (size_t)(def - defs) : 0;
	struct mark at = here(rd);
	double x;
	int err;
	if (!def)
		return fail_at(rd, kat, "unknown metric '%s'", k);
	if (idx < 64 && (m->seen & (1ull << idx)))
		return fail_at(rd, kat, "duplicate key '%s' in 'metrics'", k);
	m->seen |= idx < 64 ? 1ull << idx : 0;
	if (def->kind == REP_STAT)
		return read_stat(rd, m->var, def->name);
	if ((err = get_num(rd, def->name, &x)))
		return err;
	err = rep_variant_set_metric(m->var, def->name, x);
	if (err == SIM_ERANGE)
		return fail_at(rd, at, "'%s' = %g is out of range (0..%g %s)", def->name, x,
			       def->max, def->unit);
	return err;
}

static int breakdown_key(struct rd *rd, int i, void *arg)
{
	size_t nk;
	const char *const *keys = rep_breakdown_names(&nk);
	struct mark at = here(rd);
	double x;
	int err = get_num(rd, keys[i], &x);
	if (!err && rep_variant_set_breakdown(arg, keys[i], x))
		err = fail_at(rd, at, "breakdown '%s' must be >= 0", keys[i]);
	return err;
}

/* binding_s: kinds of transfer, each an object of classes of limit. */
struct binding_rd {
	rep_variant *var;
	const char *kind;
};

static int binding_class_key(struct rd *rd, int i, void *arg)
{
	struct binding_rd *b = arg;
	size_t nc;
	const char *const *cls = rep_binding_classes(&nc);
	struct mark at = here(rd);
	double x;
	int err = get_num(rd, cls[i], &x);
	if (!err && rep_variant_set_binding(b->var, b->kind, cls[i], x))
		err = fail_at(rd, at, "binding '%s.%s' must be >= 0", b->kind, cls[i]);
	return err;
}

static int binding_key(struct rd *rd, int i, void *arg)
{
	size_t nk, nc;
	const char *const *kinds = rep_binding_kinds(&nk);
	const char *const *cls = rep_binding_classes(&nc);
	struct binding_rd b = { .var = arg, .kind = kinds[i] };
	unsigned seen;
	return object(rd, kinds[i], cls, (int)nc, binding_class_key, &b, NULL, &seen);
}

/* A collective row or a benchmark being read: its fields (report.h's
 * list) straight into the record, the strings it read owned here. */
struct rec_rd {
	const rep_field *f;
	int nf;
	void *rec;
	char *str[REP_RECORD_MAXFIELDS];
};

static int record_key(struct rd *rd, int i, void *arg)
{
	struct rec_rd *x = arg;
	const rep_field *f = &x->f[i];
	uint64_t u;
	double v;
	int err;
	struct mark at = here(rd);
	if (f->type == REP_F_STR) {
		if (!(err = get_str(rd, f->key, &x->str[i])))
			rep_field_set_str(f, x->rec, x->str[i]);
	} else if (f->type == REP_F_NUM) {
		if (!(err = get_num(rd, f->key, &v)))
			rep_field_set_num(f, x->rec, v);
	} else if (!(err = get_u64(rd, f->key, f->type == REP_F_U32 ? UINT32_MAX : UINT64_MAX,
				   &u))) {
		rep_field_set_u64(f, x->rec, u);
		/* an optional count is absent when 0 (report.h): given, it counts */
		if (!f->required && u == 0)
			err = fail_at(rd, at, "'%s' must be at least 1 when given", f->key);
	}
	return err;
}

/* Reads one record (what: its name in messages) into rec, whose absent
 * fields stay as the caller set them; every required field must be there.
 * Free x->str with free_record after use. */
static int read_record(struct rd *rd, const char *what, struct rec_rd *x, struct mark *at)
{
	const char *keys[REP_RECORD_MAXFIELDS];
	unsigned seen;
	int err;
	for (int i = 0; i < x->nf; i++)
		keys[i] = x->f[i].key;
	err = object(rd, what, keys, x->nf, record_key, x, at, &seen);
	for (int i = 0; !err && i < x->nf; i++)
		if (x->f[i].required)
			err = need(rd, seen, i, *at, what, keys[i]);
	return err;
}

static void free_record(struct rec_rd *x)
{
	for (int i = 0; i < x->nf; i++)
		free(x->str[i]);
}

static int read_collective(struct rd *rd, void *var)
{
	rep_collective c = { .op = NULL, .time_min_s = NAN, .time_p10_s = NAN, .time_p90_s = NAN };
	struct rec_rd x = { .f = rep_collective_fields, .nf = REP_COLLECTIVE_NFIELDS, .rec = &c };
	struct mark at;
	int err = read_record(rd, "collective", &x, &at);
	if (!err) {
		err = rep_variant_add_collective(var, &c);
		if (err == SIM_EINVAL || err == SIM_ERANGE)
			err = fail_at(rd, at, "invalid collective (unknown op '%s', zero ranks, a "
				      "negative figure, or a spread not ordered time_min_s <= "
				      "time_p10_s <= time_s <= time_p90_s)", c.op);
	}
	free_record(&x);
	return err;
}

struct variant_rd {
	rep_variant *var;
	struct mark name_at;
};

/* The variant whose keys are being read: made at its first key, under a
 * stand-in name when "name" is not that key (JSON keys have no order;
 * `jq -S` sorts "name" after "metrics"), renamed when "name" comes. */
static int variant_of(struct rd *rd, struct variant_rd *v, const char *name)
{
	char stand_in[32];
	if (!name) {
		snprintf(stand_in, sizeof stand_in, "\001unnamed %zu", rep_nvariants(rd->r));
		name = stand_in;
	}
	if (!v->var && (v->var = rep_add_variant(rd->r, name)))
		return 0;
	if (v->var && !rep_variant_rename(rd->r, v->var, name))
		return 0;
	if (*name && !rep_find_variant(rd->r, name))
		return SIM_ENOMEM;
	return fail_at(rd, v->name_at, "variant name '%s' is empty or repeated", name);
}

static int variant_key(struct rd *rd, int i, void *arg)
{
	struct variant_rd *v = arg;
	struct metrics_rd m;
	char *name;
	int err;
	if (i == 0) {
		v->name_at = here(rd);
		if ((err = get_str(rd, "name", &name)))
			return err;
		err = variant_of(rd, v, name);
		free(name);
		return err;
	}
	if (!v->var && (err = variant_of(rd, v, NULL)))
		return err;
	m = (struct metrics_rd){ .var = v->var };
	switch (i) {
	case 1: {
		size_t nk;
		const char *const *keys = rep_offload_keys(&nk);
		unsigned seen;
		return object(rd, "offload", keys, (int)nk, offload_key, v->var, NULL, &seen);
	}
	case 2: return open_object(rd, "metrics", metric_entry, &m);
	case 3: {
		size_t nk;
		const char *const *keys = rep_breakdown_names(&nk);
		unsigned seen;
		return object(rd, "breakdown_s", keys, (int)nk, breakdown_key, v->var, NULL, &seen);
	}
	case 4: {
		size_t nk;
		const char *const *keys = rep_binding_kinds(&nk);
		unsigned seen;
		return object(rd, "binding_s", keys, (int)nk, binding_key, v->var, NULL, &seen);
	}
	default: return list(rd, "collectives", read_collective, v->var);
	}
}

static int read_variant(struct rd *rd, void *arg)
{
	static const char *const keys[] = { "name", "offload", "metrics", "breakdown_s",
					     "binding_s", "collectives" };
	struct variant_rd v = { .var = NULL };
	struct mark at;
	unsigned seen;
	int err = object(rd, "variant", keys, 6, variant_key, &v, &at, &seen);
	(void)arg;
	if (!err && !(err = need(rd, seen, 0, at, "variant", "name")) &&
	    !(err = need(rd, seen, 1, at, "variant", "offload")))
		err = need(rd, seen, 2, at, "variant", "metrics");
	return err;
}

/* ---- speedup and benchmarks ------------------------------------------------ */

static int speedup_entry(struct rd *rd, const char *k, struct mark kat, void *arg)
{
	struct pending_speedup *p;
	struct mark at = here(rd);
	double x;
	int err;
	(void)arg;
	if ((err = get_num(rd, k, &x)))
		return err;
	for (size_t i = 0; i < rd->nsp; i++)
		if (!strcmp(rd->sp[i].name, k))
			return fail_at(rd, kat, "duplicate key '%s' in 'speedup'", k);
	if (!(p = realloc(rd->sp, (rd->nsp + 1) * sizeof *p)))
		return SIM_ENOMEM;
	rd->sp = p;
	if (!(p[rd->nsp].name = strdup(k)))
		return SIM_ENOMEM;
	p[rd->nsp].x = x;
	p[rd->nsp].key_at = kat;
	p[rd->nsp++].val_at = at;
	return 0;
}

static int apply_speedups(struct rd *rd)
{
	for (size_t i = 0; i < rd->nsp; i++) {
		int err = rep_set_speedup(rd->r, rd->sp[i].name, rd->sp[i].x);
		if (err == SIM_ENOENT)
			return fail_at(rd, rd->sp[i].key_at, "speedup for unknown variant '%s'",
				       rd->sp[i].name);
		if (err)
			return fail_at(rd, rd->sp[i].val_at, "speedup must be > 0");
	}
	return 0;
}

static int read_benchmark(struct rd *rd, void *arg)
{
	rep_benchmark b = { .p50 = NAN, .p99 = NAN, .stddev = NAN };
	struct rec_rd x = { .f = rep_benchmark_fields, .nf = REP_BENCHMARK_NFIELDS, .rec = &b };
	struct mark at;
	int err = read_record(rd, "benchmark", &x, &at);
	(void)arg;
	if (!err) {
		err = rep_add_benchmark(rd->r, &b);
		if (err == SIM_EINVAL || err == SIM_ERANGE)
			err = fail_at(rd, at, "invalid benchmark '%s' (transport, memory, unit, zero "
				      "ranks/iters or a negative figure; see docs/report-schema.md)",
				      b.name);
	}
	free_record(&x);
	return err;
}

/* ---- document ----------------------------------------------------------- */

enum { K_SCHEMA, K_SOURCE, K_VERSION, K_SCENARIO, K_INFO, K_VARIANTS, K_SPEEDUP, K_BENCH, K_N };

static int head_str(struct rd *rd, int i)
{
	static const char *const what[] = { "schema", "source", "version" };
	struct mark at = here(rd);
	char *s;
	int err = get_str(rd, what[i], &s);
	if (err)
		return err;
	if (i == K_SCHEMA && strcmp(s, REP_SCHEMA))
		err = fail_at(rd, at, "unsupported schema '%s' (expected '%s')", s, REP_SCHEMA);
	else if (i == K_SOURCE && strcmp(s, "sim") && strcmp(s, "hw"))
		err = fail_at(rd, at, "source must be 'sim' or 'hw', not '%s'", s);
	else if (i == K_SOURCE)
		err = rep_set_source(rd->r, strcmp(s, "hw") ? REP_SIM : REP_HW);
	else if (i == K_VERSION && rep_set_version(rd->r, s))
		err = *s ? SIM_ENOMEM : fail_at(rd, at, "empty version");
	free(s);
	return err;
}

static int report_key(struct rd *rd, int i, void *arg)
{
	(void)arg;
	switch (i) {
	case K_SCHEMA: case K_SOURCE: case K_VERSION: return head_str(rd, i);
	case K_SCENARIO: return read_scenario(rd);
	case K_INFO: return open_object(rd, "info", info_entry, NULL);
	case K_VARIANTS: return list(rd, "variants", read_variant, NULL);
	case K_SPEEDUP: return open_object(rd, "speedup", speedup_entry, NULL);
	default: return list(rd, "benchmarks", read_benchmark, NULL);
	}
}

static int read_doc(struct rd *rd)
{
	static const char *const keys[K_N] = { "schema", "source", "version", "scenario",
					       "info", "variants", "speedup", "benchmarks" };
	struct mark at;
	unsigned seen;
	char why[256];
	int err;
	if ((err = next(rd)) || (type(rd) == FYET_STREAM_START && (err = next(rd))) ||
	    (type(rd) == FYET_DOCUMENT_START && (err = next(rd))))
		return err;
	if (type(rd) != FYET_MAPPING_START) {
		struct mark root = here(rd);
		/* broken JSON is said as such, not as the wrong kind of value */
		while (type(rd) != FYET_STREAM_END)
			if ((err = next(rd)))
				return err;
		return fail_at(rd, root, "a report must be a JSON object");
	}
	if ((err = object(rd, "report", keys, K_N, report_key, NULL, &at, &seen)))
		return err;
	for (int k = K_SCHEMA; k <= K_VARIANTS; k++)
		if (k != K_INFO && (err = need(rd, seen, k, at, "report", keys[k])))
			return err;
	if ((err = apply_speedups(rd)))
		return err;
	if (type(rd) == FYET_DOCUMENT_END && (err = next(rd)))
		return err;
	if (type(rd) != FYET_STREAM_END)
		return fail_at(rd, here(rd), "more after the report's closing brace");
	if (rep_validate(rd->r, why, sizeof why))
		return fail_at(rd, at, "%s", why);
	return 0;
}

int rep_read_string(const char *name, const char *text, size_t len, rep_report **out,
		    char *errbuf, size_t errlen)
{
	struct rd rd = { .name = name, .errbuf = errbuf, .errlen = errlen, .text = text, .len = len };
	struct fy_diag_cfg dcfg;
	struct fy_parse_cfg pcfg;
	size_t blank = 0;
	int err;
	*out = NULL;
	while (blank < len && text[blank] && strchr(" \t\r\n", text[blank]))
		blank++;
	if (blank == len) { /* placed at 1:1, as every other reading error is placed */
		if (errbuf && errlen)
			sim_fit(errbuf, errlen, "%s:1:1: %s, expected a %s JSON object", name,
				 len ? "only whitespace" : "empty", REP_SCHEMA);
		return SIM_EPARSE;
	}
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	if (!(rd.diag = fy_diag_create(&dcfg)))
		return SIM_ENOMEM;
	fy_diag_set_collect_errors(rd.diag, true);
	pcfg = (struct fy_parse_cfg){ .flags = FYPCF_QUIET | FYPCF_JSON_FORCE, .diag = rd.diag };
	rd.p = fy_parser_create(&pcfg);
	rd.r = rep_new(REP_SIM);
	if (!rd.p || !rd.r || fy_parser_set_string(rd.p, text, len))
		err = SIM_ENOMEM;
	else
		err = read_doc(&rd);
	if (rd.ev)
		fy_parser_event_free(rd.p, rd.ev);
	fy_parser_destroy(rd.p);
	fy_diag_destroy(rd.diag);
	for (size_t i = 0; i < rd.nsp; i++)
		free(rd.sp[i].name);
	free(rd.sp);
	if (err)
		rep_free(rd.r);
	else
		*out = rd.r;
	return err;
}

/* Reports are kilobytes; the cap keeps /dev/zero or a stray huge file from
 * eating memory until the allocator fails. */
#define REP_MAX_FILE_BYTES ((size_t)64 << 20)

/* The whole of f into *text (malloc'd, *len bytes), or an error in errbuf. */
static int slurp(FILE *f, const char *path, char **text, size_t *len, char *errbuf, size_t errlen)
{
	size_t cap = 0, n;
	struct stat st;
	*text = NULL;
	*len = 0;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
		return sim_errbuf(errbuf, errlen, SIM_EIO, "%s: is a directory, expected a %s JSON file",
				 path, REP_SCHEMA);
	for (;;) {
		if (*len == cap) {
			char *p;
			if (cap >= REP_MAX_FILE_BYTES)
				return sim_errbuf(errbuf, errlen, SIM_EIO, "%s: file too large (more than "
						 "%zu bytes)", path, REP_MAX_FILE_BYTES);
			if (!(p = realloc(*text, cap = cap ? cap * 2 : 8192)))
				return sim_errbuf(errbuf, errlen, SIM_ENOMEM, "%s: out of memory", path);
			*text = p;
		}
		n = fread(*text + *len, 1, cap - *len, f);
		*len += n;
		if (n == 0)
			break;
	}
	if (ferror(f))
		return sim_errbuf(errbuf, errlen, SIM_EIO, "%s: read error: %s", path, strerror(errno));
	return 0;
}

int rep_read_stream(FILE *f, const char *name, rep_report **out, char *errbuf, size_t errlen)
{
	char *text;
	size_t len;
	int err = slurp(f, name, &text, &len, errbuf, errlen);
	*out = NULL;
	if (!err)
		err = rep_read_string(name, text, len, out, errbuf, errlen);
	free(text);
	return err;
}

int rep_read_file(const char *path, rep_report **out, char *errbuf, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	int err;
	*out = NULL;
	if (!f)
		return sim_errbuf(errbuf, errlen, SIM_EIO, "%s: cannot open: %s", path, strerror(errno));
	err = rep_read_stream(f, path, out, errbuf, errlen);
	fclose(f);
	return err;
}
