/* Reading dpusim-report/1 files: libfyaml in forced-JSON mode builds the
 * tree, then every key is checked and fed through the report setters, so a
 * report read back obeys the same rules as one built in memory. Errors say
 * file:line:column (1-based) and what was expected. */
#include "tools/report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libfyaml.h>

#include "sim/err.h"

struct rd {
	const char *name;     /* file name for messages */
	struct fy_diag *diag; /* collects libfyaml's errors and node positions */
	char *errbuf;
	size_t errlen;
	rep_report *r;
};

/* Position (1-based) of node n: libfyaml reports positions through its
 * diagnostics, so report into the collecting diag and take the newest. */
static void node_pos(struct rd *rd, struct fy_node *n, int *line, int *col)
{
	struct fy_diag_error *e, *last = NULL;
	void *it = NULL;
	*line = *col = 0;
	if (!n)
		return;
	fy_diag_node_report(rd->diag, n, FYET_ERROR, "position");
	while ((e = fy_diag_errors_iterate(rd->diag, &it)))
		last = e;
	if (last) {
		*line = last->line;
		/* libfyaml points inside a quoted scalar; editors point at the quote */
		*col = last->column - (fy_node_is_scalar(n) &&
				       fy_node_get_style(n) == FYNS_DOUBLE_QUOTED && last->column > 1);
	}
}

static int rd_fail(struct rd *rd, struct fy_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int rd_fail(struct rd *rd, struct fy_node *n, const char *fmt, ...)
{
	va_list ap;
	int line, col, k;
	node_pos(rd, n, &line, &col);
	if (!rd->errbuf || !rd->errlen)
		return SIM_EPARSE;
	k = snprintf(rd->errbuf, rd->errlen, "%s:%d:%d: ", rd->name, line, col);
	if (k >= 0 && (size_t)k < rd->errlen) {
		va_start(ap, fmt);
		vsnprintf(rd->errbuf + k, rd->errlen - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return SIM_EPARSE;
}

/* ---- typed scalars ------------------------------------------------------ */

/* A string with \u0000 inside would be cut there by every C string that
 * carries it on (the database, the report written back): refused whole,
 * with its JSON path, rather than stored as something else. */
static int nul_inside(struct rd *rd, struct fy_node *n, const char *what)
{
	char *path = fy_node_get_path(n);
	int err = rd_fail(rd, n, "'%s' at %s holds a NUL character (\\u0000), which cannot be "
			  "stored", what, path ? path : "?");
	free(path);
	return err;
}

static int get_str(struct rd *rd, struct fy_node *n, const char *what, const char **out)
{
	size_t len;
	if (!fy_node_is_scalar(n) || fy_node_get_style(n) != FYNS_DOUBLE_QUOTED)
		return rd_fail(rd, n, "'%s' must be a string", what);
	if (!fy_node_get_scalar(n, &len) || !(*out = fy_node_get_scalar0(n)))
		return SIM_ENOMEM;
	if (strlen(*out) != len)
		return nul_inside(rd, n, what);
	return 0;
}

static int get_num(struct rd *rd, struct fy_node *n, const char *what, double *out)
{
	const char *s;
	char *end;
	if (!fy_node_is_scalar(n) || fy_node_get_style(n) != FYNS_PLAIN ||
	    !(s = fy_node_get_scalar0(n)))
		return rd_fail(rd, n, "'%s' must be a number", what);
	errno = 0;
	*out = strtod(s, &end);
	if (*end || end == s || errno || !isfinite(*out) || s[0] == 'n' || s[0] == 't' ||
	    s[0] == 'f')
		return rd_fail(rd, n, "'%s' must be a finite number, not '%s'", what, s);
	return 0;
}

static int get_u64(struct rd *rd, struct fy_node *n, const char *what, uint64_t max,
		   uint64_t *out)
{
	const char *s;
	char *end;
	unsigned long long v;
	if (!fy_node_is_scalar(n) || fy_node_get_style(n) != FYNS_PLAIN ||
	    !(s = fy_node_get_scalar0(n)) || s[0] < '0' || s[0] > '9')
		return rd_fail(rd, n, "'%s' must be a non-negative integer", what);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno || v > max)
		return rd_fail(rd, n, "'%s' must be an integer in 0..%llu, not '%s'", what,
			       (unsigned long long)max, s);
	*out = v;
	return 0;
}

/* ---- objects ------------------------------------------------------------ */

/* Fill vals[i] with the value of keys[i] in mapping n (NULL when absent);
 * an unknown key is an error. `what` names the object in messages. */
static int collect(struct rd *rd, struct fy_node *n, const char *what,
		   const char *const *keys, int nkeys, struct fy_node **vals)
{
	struct fy_node_pair *p;
	void *it = NULL;
	if (!fy_node_is_mapping(n))
		return rd_fail(rd, n, "'%s' must be an object", what);
	for (int i = 0; i < nkeys; i++)
		vals[i] = NULL;
	while ((p = fy_node_mapping_iterate(n, &it))) {
		struct fy_node *k = fy_node_pair_key(p);
		const char *ks = fy_node_is_scalar(k) ? fy_node_get_scalar0(k) : NULL;
		int i = 0;
		while (i < nkeys && (!ks || strcmp(keys[i], ks)))
			i++;
		if (i == nkeys)
			return rd_fail(rd, k, "unknown key '%s' in '%s'", ks ? ks : "?", what);
		vals[i] = fy_node_pair_value(p);
	}
	return 0;
}

static int need(struct rd *rd, struct fy_node *obj, struct fy_node *val, const char *obj_name,
		const char *key)
{
	if (val)
		return 0;
	return rd_fail(rd, obj, "'%s' lacks required key '%s'", obj_name, key);
}

static int read_scenario(struct rd *rd, struct fy_node *n)
{
	static const char *const keys[] = { "name", "file", "sha256", "seed", "point" };
	struct fy_node *v[5];
	rep_scenario sc = { 0 };
	int err;
	if ((err = collect(rd, n, "scenario", keys, 5, v)) ||
	    (err = need(rd, n, v[0], "scenario", "name")) ||
	    (err = need(rd, n, v[3], "scenario", "seed")) ||
	    (err = get_str(rd, v[0], "name", &sc.name)) ||
	    (v[1] && (err = get_str(rd, v[1], "file", &sc.file))) ||
	    (v[2] && (err = get_str(rd, v[2], "sha256", &sc.sha256))) ||
	    (err = get_u64(rd, v[3], "seed", UINT64_MAX, &sc.seed)) ||
	    (v[4] && (err = get_str(rd, v[4], "point", &sc.point))))
		return err;
	err = rep_set_scenario(rd->r, &sc);
	if (err == SIM_EINVAL)
		return rd_fail(rd, v[2] ? v[2] : v[0],
			       "scenario: empty name or sha256 not 64 lowercase hex digits");
	return err;
}

static int read_info(struct rd *rd, struct fy_node *n)
{
	struct fy_node_pair *p;
	void *it = NULL;
	int err;
	if (!fy_node_is_mapping(n))
		return rd_fail(rd, n, "'info' must be an object");
	while ((p = fy_node_mapping_iterate(n, &it))) {
		const char *k, *val;
		if ((err = get_str(rd, fy_node_pair_key(p), "info key", &k)) ||
		    (err = get_str(rd, fy_node_pair_value(p), k, &val)))
			return err;
		if ((err = rep_set_info(rd->r, k, val)))
			return err == SIM_EINVAL ? rd_fail(rd, fy_node_pair_key(p), "empty info key")
						 : err;
	}
	return 0;
}

static int read_offload(struct rd *rd, rep_variant *var, struct fy_node *n)
{
	size_t nk;
	const char *const *keys = rep_offload_keys(&nk);
	struct fy_node *v[8];
	int err;
	if ((err = collect(rd, n, "offload", keys, (int)nk, v)))
		return err;
	for (size_t i = 0; i < nk; i++) {
		const char *s;
		if (!v[i])
			continue;
		if ((err = get_str(rd, v[i], keys[i], &s)))
			return err;
		if ((err = rep_variant_set_offload(var, keys[i], s)))
			return err == SIM_EINVAL
				       ? rd_fail(rd, v[i], "unknown %s offload '%s'", keys[i], s)
				       : err;
	}
	return 0;
}

static int read_stat(struct rd *rd, rep_variant *var, const char *name, struct fy_node *n)
{
	static const char *const keys[] = { "mean", "p50", "p99", "ci95" };
	struct fy_node *v[4];
	double x[4] = { NAN, NAN, NAN, NAN };
	int err;
	if ((err = collect(rd, n, name, keys, 4, v)) || (err = need(rd, n, v[0], name, "mean")))
		return err;
	for (int i = 0; i < 4; i++)
		if (v[i] && (err = get_num(rd, v[i], keys[i], &x[i])))
			return err;
	err = rep_variant_set_stat(var, name, x[0], x[1], x[2], x[3]);
	if (err == SIM_ERANGE)
		return rd_fail(rd, n, "'%s' has a negative or out-of-range value", name);
	return err;
}

static int read_metric(struct rd *rd, rep_variant *var, struct fy_node *k, struct fy_node *n)
{
	const char *name = fy_node_is_scalar(k) ? fy_node_get_scalar0(k) : NULL;
	const rep_metric_def *def = rep_metric_find(name);
	double x;
	int err;
	if (!def)
		return rd_fail(rd, k, "unknown metric '%s'", name ? name : "?");
	if (def->kind == REP_STAT)
		return read_stat(rd, var, def->name, n);
	if ((err = get_num(rd, n, def->name, &x)))
		return err;
	err = rep_variant_set_metric(var, def->name, x);
	if (err == SIM_ERANGE)
		return rd_fail(rd, n, "'%s' = %g is out of range (0..%g %s)", def->name, x,
			       def->max, def->unit);
	return err;
}

static int read_metrics(struct rd *rd, rep_variant *var, struct fy_node *n)
{
	struct fy_node_pair *p;
	void *it = NULL;
	int err;
	if (!fy_node_is_mapping(n))
		return rd_fail(rd, n, "'metrics' must be an object");
	while ((p = fy_node_mapping_iterate(n, &it)))
		if ((err = read_metric(rd, var, fy_node_pair_key(p), fy_node_pair_value(p))))
			return err;
	return 0;
}

static int read_breakdown(struct rd *rd, rep_variant *var, struct fy_node *n)
{
	size_t nk;
	const char *const *keys = rep_breakdown_names(&nk);
	struct fy_node *v[8];
	int err;
	if ((err = collect(rd, n, "breakdown_s", keys, (int)nk, v)))
		return err;
	for (size_t i = 0; i < nk; i++) {
		double x;
		if (!v[i])
			continue;
		if ((err = get_num(rd, v[i], keys[i], &x)))
			return err;
		if ((err = rep_variant_set_breakdown(var, keys[i], x)))
			return rd_fail(rd, v[i], "breakdown '%s' must be >= 0", keys[i]);
	}
	return 0;
}

static int read_collective(struct rd *rd, rep_variant *var, struct fy_node *n)
{
	static const char *const keys[] = { "op", "algo", "ranks", "bytes",
					     "time_s", "algbw_GBps", "busbw_GBps" };
	struct fy_node *v[7];
	rep_collective c = { 0 };
	uint64_t ranks = 0;
	int err = collect(rd, n, "collective", keys, 7, v);
	for (int i = 0; !err && i < 7; i++)
		err = need(rd, n, v[i], "collective", keys[i]);
	if (err || (err = get_str(rd, v[0], "op", &c.op)) ||
	    (err = get_str(rd, v[1], "algo", &c.algo)) ||
	    (err = get_u64(rd, v[2], "ranks", UINT32_MAX, &ranks)) ||
	    (err = get_u64(rd, v[3], "bytes", UINT64_MAX, &c.bytes)) ||
	    (err = get_num(rd, v[4], "time_s", &c.time_s)) ||
	    (err = get_num(rd, v[5], "algbw_GBps", &c.algbw_GBps)) ||
	    (err = get_num(rd, v[6], "busbw_GBps", &c.busbw_GBps)))
		return err;
	c.ranks = (uint32_t)ranks;
	err = rep_variant_add_collective(var, &c);
	if (err == SIM_EINVAL || err == SIM_ERANGE)
		return rd_fail(rd, n, "invalid collective (unknown op '%s', zero ranks or a "
				      "negative figure)", c.op);
	return err;
}

static int read_collectives(struct rd *rd, rep_variant *var, struct fy_node *n)
{
	struct fy_node *e;
	void *it = NULL;
	int err;
	if (!fy_node_is_sequence(n))
		return rd_fail(rd, n, "'collectives' must be a list");
	while ((e = fy_node_sequence_iterate(n, &it)))
		if ((err = read_collective(rd, var, e)))
			return err;
	return 0;
}

static int read_variant(struct rd *rd, struct fy_node *n)
{
	static const char *const keys[] = { "name", "offload", "metrics", "breakdown_s",
					     "collectives" };
	struct fy_node *v[5];
	const char *name;
	rep_variant *var;
	int err;
	if ((err = collect(rd, n, "variant", keys, 5, v)) ||
	    (err = need(rd, n, v[0], "variant", "name")) ||
	    (err = need(rd, n, v[1], "variant", "offload")) ||
	    (err = need(rd, n, v[2], "variant", "metrics")) ||
	    (err = get_str(rd, v[0], "name", &name)))
		return err;
	if (!(var = rep_add_variant(rd->r, name)))
		return *name && !rep_find_variant(rd->r, name)
			       ? SIM_ENOMEM
			       : rd_fail(rd, v[0], "variant name '%s' is empty or repeated", name);
	if ((err = read_offload(rd, var, v[1])) || (err = read_metrics(rd, var, v[2])) ||
	    (v[3] && (err = read_breakdown(rd, var, v[3]))) ||
	    (v[4] && (err = read_collectives(rd, var, v[4]))))
		return err;
	return 0;
}

static int read_speedup(struct rd *rd, struct fy_node *n)
{
	struct fy_node_pair *p;
	void *it = NULL;
	int err;
	if (!fy_node_is_mapping(n))
		return rd_fail(rd, n, "'speedup' must be an object");
	while ((p = fy_node_mapping_iterate(n, &it))) {
		const char *k;
		double x;
		if ((err = get_str(rd, fy_node_pair_key(p), "speedup key", &k)) ||
		    (err = get_num(rd, fy_node_pair_value(p), k, &x)))
			return err;
		err = rep_set_speedup(rd->r, k, x);
		if (err == SIM_ENOENT)
			return rd_fail(rd, fy_node_pair_key(p), "speedup for unknown variant '%s'", k);
		if (err)
			return rd_fail(rd, fy_node_pair_value(p), "speedup must be > 0");
	}
	return 0;
}

/* The optional string and number fields of a benchmark (indices from 2). */
static int read_bench_fields(struct rd *rd, struct fy_node **v, rep_benchmark *b)
{
	uint64_t ranks = 0;
	int err;
	if ((err = get_str(rd, v[0], "name", &b->name)) ||
	    (err = get_str(rd, v[1], "transport", &b->transport)) ||
	    (v[2] && (err = get_str(rd, v[2], "memory", &b->memory))) ||
	    (v[3] && (err = get_str(rd, v[3], "device", &b->device))) ||
	    (err = get_u64(rd, v[4], "bytes", UINT64_MAX, &b->bytes)) ||
	    (err = get_u64(rd, v[5], "ranks", UINT32_MAX, &ranks)) ||
	    (err = get_u64(rd, v[6], "iters", UINT64_MAX, &b->iters)) ||
	    (err = get_num(rd, v[7], "value", &b->value)) ||
	    (err = get_str(rd, v[8], "unit", &b->unit)) ||
	    (v[9] && (err = get_num(rd, v[9], "p50", &b->p50))) ||
	    (v[10] && (err = get_num(rd, v[10], "p99", &b->p99))) ||
	    (v[11] && (err = get_num(rd, v[11], "stddev", &b->stddev))))
		return err;
	b->ranks = (uint32_t)ranks;
	return 0;
}

static int read_benchmark(struct rd *rd, struct fy_node *n)
{
	static const char *const keys[] = { "name", "transport", "memory", "device", "bytes",
					     "ranks", "iters", "value", "unit", "p50", "p99",
					     "stddev" };
	static const int required[] = { 0, 1, 4, 5, 6, 7, 8 };
	struct fy_node *v[12];
	rep_benchmark b = { .p50 = NAN, .p99 = NAN, .stddev = NAN };
	int err = collect(rd, n, "benchmark", keys, 12, v);
	for (int i = 0; !err && i < 7; i++)
		err = need(rd, n, v[required[i]], "benchmark", keys[required[i]]);
	if (err || (err = read_bench_fields(rd, v, &b)))
		return err;
	err = rep_add_benchmark(rd->r, &b);
	if (err == SIM_EINVAL || err == SIM_ERANGE)
		return rd_fail(rd, n, "invalid benchmark '%s' (transport, memory, unit, zero "
				      "ranks/iters or a negative figure; see docs/report-schema.md)",
			       b.name);
	return err;
}

static int read_list(struct rd *rd, struct fy_node *n, const char *what,
		     int (*each)(struct rd *, struct fy_node *))
{
	struct fy_node *e;
	void *it = NULL;
	int err;
	if (!fy_node_is_sequence(n))
		return rd_fail(rd, n, "'%s' must be a list", what);
	while ((e = fy_node_sequence_iterate(n, &it)))
		if ((err = each(rd, e)))
			return err;
	return 0;
}

/* ---- document ----------------------------------------------------------- */

enum { K_SCHEMA, K_SOURCE, K_VERSION, K_SCENARIO, K_INFO, K_VARIANTS, K_SPEEDUP, K_BENCH, K_N };

static int read_head(struct rd *rd, struct fy_node *root, struct fy_node **v)
{
	static const char *const keys[K_N] = { "schema", "source", "version", "scenario",
					       "info", "variants", "speedup", "benchmarks" };
	const char *schema, *source, *version;
	int err;
	if ((err = collect(rd, root, "report", keys, K_N, v)))
		return err;
	for (int k = K_SCHEMA; k <= K_VARIANTS; k++)
		if (k != K_INFO && (err = need(rd, root, v[k], "report", keys[k])))
			return err;
	if ((err = get_str(rd, v[K_SCHEMA], "schema", &schema)))
		return err;
	if (strcmp(schema, REP_SCHEMA))
		return rd_fail(rd, v[K_SCHEMA], "unsupported schema '%s' (expected '%s')", schema,
			       REP_SCHEMA);
	if ((err = get_str(rd, v[K_SOURCE], "source", &source)) ||
	    (err = get_str(rd, v[K_VERSION], "version", &version)))
		return err;
	if (strcmp(source, "sim") && strcmp(source, "hw"))
		return rd_fail(rd, v[K_SOURCE], "source must be 'sim' or 'hw', not '%s'", source);
	if (!(rd->r = rep_new(strcmp(source, "hw") ? REP_SIM : REP_HW)))
		return SIM_ENOMEM;
	if (rep_set_version(rd->r, version))
		return *version ? SIM_ENOMEM : rd_fail(rd, v[K_VERSION], "empty version");
	return 0;
}

static int read_doc(struct rd *rd, struct fy_node *root)
{
	struct fy_node *v[K_N];
	char why[256];
	int err;
	if (!root || !fy_node_is_mapping(root))
		return rd_fail(rd, root, "a report must be a JSON object");
	if ((err = read_head(rd, root, v)) || (err = read_scenario(rd, v[K_SCENARIO])) ||
	    (v[K_INFO] && (err = read_info(rd, v[K_INFO]))) ||
	    (err = read_list(rd, v[K_VARIANTS], "variants", read_variant)) ||
	    (v[K_SPEEDUP] && (err = read_speedup(rd, v[K_SPEEDUP]))) ||
	    (v[K_BENCH] && (err = read_list(rd, v[K_BENCH], "benchmarks", read_benchmark))))
		return err;
	if (rep_validate(rd->r, why, sizeof why))
		return rd_fail(rd, root, "%s", why);
	return 0;
}

/* The first error libfyaml collected, as our message. */
static int syntax_error(struct rd *rd)
{
	void *it = NULL;
	struct fy_diag_error *e = fy_diag_errors_iterate(rd->diag, &it);
	if (rd->errbuf && rd->errlen)
		snprintf(rd->errbuf, rd->errlen, "%s:%d:%d: invalid JSON: %s", rd->name,
			 e ? e->line : 0, e ? e->column : 0, e ? e->msg : "parse failed");
	return SIM_EPARSE;
}

int rep_read_string(const char *name, const char *text, size_t len, rep_report **out,
		    char *errbuf, size_t errlen)
{
	struct rd rd = { .name = name, .errbuf = errbuf, .errlen = errlen };
	struct fy_diag_cfg dcfg;
	struct fy_parse_cfg pcfg;
	struct fy_document *doc;
	size_t blank = 0;
	int err;
	*out = NULL;
	while (blank < len && text[blank] && strchr(" \t\r\n", text[blank]))
		blank++;
	if (blank == len) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: empty, expected a %s JSON object", name,
				 REP_SCHEMA);
		return SIM_EPARSE;
	}
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	if (!(rd.diag = fy_diag_create(&dcfg)))
		return SIM_ENOMEM;
	fy_diag_set_collect_errors(rd.diag, true);
	pcfg = (struct fy_parse_cfg){ .flags = FYPCF_QUIET | FYPCF_JSON_FORCE, .diag = rd.diag };
	doc = fy_document_build_from_string(&pcfg, text, len);
	err = doc ? read_doc(&rd, fy_document_root(doc)) : syntax_error(&rd);
	fy_document_destroy(doc);
	fy_diag_destroy(rd.diag);
	if (err)
		rep_free(rd.r);
	else
		*out = rd.r;
	return err;
}

/* Reports are kilobytes; the cap keeps /dev/zero or a stray huge file from
 * eating memory until the allocator fails. */
#define REP_MAX_FILE_BYTES ((size_t)64 << 20)

static int read_fail(char *errbuf, size_t errlen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int read_fail(char *errbuf, size_t errlen, int err, const char *fmt, ...)
{
	va_list ap;
	if (errbuf && errlen) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* The whole of f into *text (malloc'd, *len bytes), or an error in errbuf. */
static int slurp(FILE *f, const char *path, char **text, size_t *len, char *errbuf, size_t errlen)
{
	size_t cap = 0, n;
	struct stat st;
	*text = NULL;
	*len = 0;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
		return read_fail(errbuf, errlen, SIM_EIO, "%s: is a directory, expected a %s JSON file",
				 path, REP_SCHEMA);
	for (;;) {
		if (*len == cap) {
			char *p;
			if (cap >= REP_MAX_FILE_BYTES)
				return read_fail(errbuf, errlen, SIM_EIO, "%s: file too large (more than "
						 "%zu bytes)", path, REP_MAX_FILE_BYTES);
			if (!(p = realloc(*text, cap = cap ? cap * 2 : 8192)))
				return read_fail(errbuf, errlen, SIM_ENOMEM, "%s: out of memory", path);
			*text = p;
		}
		n = fread(*text + *len, 1, cap - *len, f);
		*len += n;
		if (n == 0)
			break;
	}
	if (ferror(f))
		return read_fail(errbuf, errlen, SIM_EIO, "%s: read error: %s", path, strerror(errno));
	return 0;
}

int rep_read_file(const char *path, rep_report **out, char *errbuf, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *text;
	size_t len;
	int err;
	*out = NULL;
	if (!f)
		return read_fail(errbuf, errlen, SIM_EIO, "%s: cannot open: %s", path, strerror(errno));
	err = slurp(f, path, &text, &len, errbuf, errlen);
	fclose(f);
	if (!err)
		err = rep_read_string(path, text, len, out, errbuf, errlen);
	free(text);
	return err;
}
