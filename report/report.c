/* dpusim-report/1: the in-memory report, its setters and accessors, the
 * deterministic JSON writer and the validator. The reader is report_read.c. */
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/coll_ops.h"
#include "models/fabric.h"
#include "models/offload.h"
#include "sim/alloc.h"
#include "sim/err.h"
#include "report/atomic.h"
#include "report/json.h"
#include "report/version.h"

#define REP_NMETRICS 14
#define REP_NBREAKDOWN 6
#define REP_NOFFLOAD OFFLOAD_NKINDS
#define REP_NBIND 4

struct rep_kv {
	char *key;
	char *value;
};

struct rep_variant {
	char *name;
	char *offload[REP_NOFFLOAD];
	bool has_metric[REP_NMETRICS];
	rep_stat metric[REP_NMETRICS];  /* scalars use .mean only */
	bool has_bd[REP_NBREAKDOWN];
	double bd[REP_NBREAKDOWN];
	bool has_bind[REP_NBIND][FAB_NCLASSES];
	double bind[REP_NBIND][FAB_NCLASSES];
	rep_collective *coll;           /* strings owned */
	size_t ncoll, capcoll;
	bool has_speedup;
	double speedup;
};

struct rep_report {
	rep_source source;
	char *version;
	bool has_scenario;
	char *sc_name, *sc_file, *sc_sha256, *sc_point;
	uint64_t seed;
	rep_scenario sc_view;           /* what rep_get_scenario returns */
	struct rep_kv *info;
	size_t ninfo, capinfo;
	rep_variant **var;              /* pointers: variants never move */
	size_t nvar, capvar;
	rep_benchmark *bench;           /* strings owned */
	size_t nbench, capbench;
};

static const rep_metric_def metric_defs[REP_NMETRICS] = {
	{ .name = "iteration_s", .unit = "s", .kind = REP_STAT, .max = INFINITY,
	  .label = "iteration" },
	{ .name = "samples_per_s", .unit = "1/s", .kind = REP_SCALAR, .max = INFINITY,
	  .label = "samples/s" },
	{ .name = "tokens_per_s", .unit = "1/s", .kind = REP_SCALAR, .max = INFINITY,
	  .label = "tokens/s" },
	{ .name = "tflops_per_gpu", .unit = "TFLOP/s", .kind = REP_SCALAR, .max = INFINITY,
	  .label = "TFLOP/s per GPU" },
	{ .name = "mfu", .unit = "fraction", .kind = REP_SCALAR, .max = 1.0,
	  .label = "MFU" },
	{ .name = "gpu_util", .unit = "fraction", .kind = REP_SCALAR, .max = 1.0,
	  .label = "GPU utilisation" },
	{ .name = "host_cpu_util", .unit = "fraction", .kind = REP_SCALAR, .max = 1.0,
	  .label = "host CPU utilisation" },
	{ .name = "conn_core_util", .unit = "fraction", .kind = REP_SCALAR, .max = 1.0,
	  .label = "  a connection's cores" },
	{ .name = "dpu_util", .unit = "fraction", .kind = REP_SCALAR, .max = 1.0,
	  .label = "DPU utilisation" },
	{ .name = "time_to_train_s", .unit = "s", .kind = REP_SCALAR, .max = INFINITY,
	  .label = "time to train" },
	{ .name = "goodput", .unit = "fraction", .kind = REP_SCALAR, .max = 1.0,
	  .label = "goodput" },
	{ .name = "energy_kwh", .unit = "kWh", .kind = REP_SCALAR, .max = INFINITY,
	  .label = "energy" },
	{ .name = "cost_usd", .unit = "USD", .kind = REP_SCALAR, .max = INFINITY,
	  .label = "cost" },
	{ .name = "tokens_per_usd", .unit = "1/USD", .kind = REP_SCALAR, .max = INFINITY,
	  .label = "tokens per USD" },
};

static const char *const breakdown_names[REP_NBREAKDOWN] = {
	"compute", "exposed_comm", "data_stall", "cpu_stall", "pipeline_bubble", "other",
};


/* The simulated operations' report words (models/coll_ops.h), and
 * nccl-tests' reduce, which a measured report may carry. */
static const char *const coll_ops[] = { COLL_OPS(COLL_OP_REPORT_WORD_) "reduce", NULL };
static const char *const bench_transports[] = {
	"verbs", "tcp", "cuda", "cpu", "storage", "crypto", NULL,
};
static const char *const bench_memories[] = { "host", "cuda", NULL };
static const char *const bench_units[] = { "s", "B/s", "op/s", "FLOP/s", "cycles/B", NULL };

const rep_metric_def *rep_metric_defs(size_t *n)
{
	*n = REP_NMETRICS;
	return metric_defs;
}

static int metric_index(const char *name)
{
	for (int i = 0; i < REP_NMETRICS; i++)
		if (name && !strcmp(metric_defs[i].name, name))
			return i;
	return -1;
}

const rep_metric_def *rep_metric_find(const char *name)
{
	int i = metric_index(name);
	return i < 0 ? NULL : &metric_defs[i];
}

const char *const *rep_breakdown_names(size_t *n)
{
	*n = REP_NBREAKDOWN;
	return breakdown_names;
}

static const char *const binding_kinds[REP_NBIND] = {
	"tensor_parallel", "pipeline", "data_parallel", "storage",
};

const char *const *rep_binding_kinds(size_t *n)
{
	*n = REP_NBIND;
	return binding_kinds;
}

/* fab_class_name's words, in class order (models/fabric.h). */
const char *const *rep_binding_classes(size_t *n)
{
	static const char *names[FAB_NCLASSES];
	if (!names[0])
		for (int c = 0; c < FAB_NCLASSES; c++)
			names[c] = fab_class_name((fab_class)c);
	*n = FAB_NCLASSES;
	return names;
}

const char *const *rep_offload_keys(size_t *n)
{
	*n = REP_NOFFLOAD;
	return offload_kind_names(); /* and their values: models/offload.h */
}

static int name_index(const char *const *names, int n, const char *name)
{
	for (int i = 0; (n < 0 || i < n) && names[i]; i++)
		if (name && !strcmp(names[i], name))
			return i;
	return -1;
}

/* ---- allocation, with a failure hook for tests (sim/alloc.h) --------- */

void rep_test_fail_alloc_after(long n)
{
	sim_test_fail_alloc_after(n);
}

static void *rep_calloc(size_t n, size_t size)
{
	return sim_calloc(n, size);
}

static char *rep_strdup(const char *s)
{
	return sim_alloc_ok() ? strdup(s) : NULL;
}

/* ---- building ---------------------------------------------------------- */

/* Room in *arr (capacity *cap) for one more than its n elements. */
static int grow(void *arrp, size_t *cap, size_t n, size_t size)
{
	return sim_grow(arrp, cap, n + 1, size, 4);
}

/* Replace *dst with a copy of src (NULL allowed). */
static int set_str(char **dst, const char *src)
{
	char *c = NULL;
	if (src && !(c = rep_strdup(src)))
		return SIM_ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

rep_report *rep_new(rep_source source)
{
	rep_report *r;
	if (source != REP_SIM && source != REP_HW)
		return NULL;
	r = rep_calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->source = source;
	if (set_str(&r->version, dpusim_version)) {
		free(r);
		return NULL;
	}
	return r;
}

/* ---- the collective and benchmark records' fields ---------------------- */

#define FIELD_(rec, name, type, req) { #name, REP_F_##type, offsetof(rec, name), req }
const rep_field rep_collective_fields[REP_COLLECTIVE_NFIELDS] = {
	FIELD_(rep_collective, op, STR, true),
	FIELD_(rep_collective, algo, STR, true),
	FIELD_(rep_collective, ranks, U32, true),
	FIELD_(rep_collective, bytes, U64, true),
	FIELD_(rep_collective, time_s, NUM, true),
	FIELD_(rep_collective, algbw_GBps, NUM, true),
	FIELD_(rep_collective, busbw_GBps, NUM, true),
	FIELD_(rep_collective, calls, U64, false),
	FIELD_(rep_collective, time_min_s, NUM, false),
	FIELD_(rep_collective, time_p10_s, NUM, false),
	FIELD_(rep_collective, time_p90_s, NUM, false),
};
const rep_field rep_benchmark_fields[REP_BENCHMARK_NFIELDS] = {
	FIELD_(rep_benchmark, name, STR, true),
	FIELD_(rep_benchmark, transport, STR, true),
	FIELD_(rep_benchmark, memory, STR, false),
	FIELD_(rep_benchmark, device, STR, false),
	FIELD_(rep_benchmark, bytes, U64, true),
	FIELD_(rep_benchmark, ranks, U32, true),
	FIELD_(rep_benchmark, iters, U64, true),
	FIELD_(rep_benchmark, value, NUM, true),
	FIELD_(rep_benchmark, unit, STR, true),
	FIELD_(rep_benchmark, p50, NUM, false),
	FIELD_(rep_benchmark, p99, NUM, false),
	FIELD_(rep_benchmark, stddev, NUM, false),
};
#undef FIELD_

/* The member f names: rec + f->off holds an object of f's type. */
static const void *field_at(const rep_field *f, const void *rec)
{
	return (const char *)rec + f->off;
}

static void *field_set(const rep_field *f, void *rec)
{
	return (char *)rec + f->off;
}

const char *rep_field_str(const rep_field *f, const void *rec)
{
	return *(const char *const *)field_at(f, rec);
}

uint64_t rep_field_u64(const rep_field *f, const void *rec)
{
	if (f->type == REP_F_U32)
		return *(const uint32_t *)field_at(f, rec);
	return *(const uint64_t *)field_at(f, rec);
}

double rep_field_num(const rep_field *f, const void *rec)
{
	return *(const double *)field_at(f, rec);
}

void rep_field_set_str(const rep_field *f, void *rec, const char *s)
{
	*(const char **)field_set(f, rec) = s;
}

void rep_field_set_u64(const rep_field *f, void *rec, uint64_t x)
{
	if (f->type == REP_F_U32)
		*(uint32_t *)field_set(f, rec) = (uint32_t)x;
	else
		*(uint64_t *)field_set(f, rec) = x;
}

void rep_field_set_num(const rep_field *f, void *rec, double x)
{
	*(double *)field_set(f, rec) = x;
}

/* Frees the strings among rec's first n fields (the record owns them). */
static void release_strings(const rep_field *f, size_t n, void *rec)
{
	for (size_t i = 0; i < n; i++)
		if (f[i].type == REP_F_STR)
			free((char *)rep_field_str(&f[i], rec));
}

/* Replaces rec's borrowed strings by copies it owns; SIM_ENOMEM (none of
 * them owned) when one cannot be made. */
static int own_strings(const rep_field *f, size_t n, void *rec)
{
	for (size_t i = 0; i < n; i++) {
		const char *s = f[i].type == REP_F_STR ? rep_field_str(&f[i], rec) : NULL;
		char *c = s ? rep_strdup(s) : NULL;
		if (s && !c) {
			release_strings(f, i, rec);
			return SIM_ENOMEM;
		}
		if (s)
			rep_field_set_str(&f[i], rec, c);
	}
	return 0;
}

static void variant_free(rep_variant *v)
{
	if (!v)
		return;
	free(v->name);
	for (int i = 0; i < REP_NOFFLOAD; i++)
		free(v->offload[i]);
	for (size_t i = 0; i < v->ncoll; i++)
		release_strings(rep_collective_fields, REP_COLLECTIVE_NFIELDS, &v->coll[i]);
	free(v->coll);
	free(v);
}

void rep_free(rep_report *r)
{
	if (!r)
		return;
	free(r->version);
	free(r->sc_name);
	free(r->sc_file);
	free(r->sc_sha256);
	free(r->sc_point);
	for (size_t i = 0; i < r->ninfo; i++) {
		free(r->info[i].key);
		free(r->info[i].value);
	}
	free(r->info);
	for (size_t i = 0; i < r->nvar; i++)
		variant_free(r->var[i]);
	free(r->var);
	for (size_t i = 0; i < r->nbench; i++)
		release_strings(rep_benchmark_fields, REP_BENCHMARK_NFIELDS, &r->bench[i]);
	free(r->bench);
	free(r);
}

int rep_set_version(rep_report *r, const char *version)
{
	if (!version || !*version)
		return SIM_EINVAL;
	return set_str(&r->version, version);
}

static bool is_sha256(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == 64;
}

int rep_set_scenario(rep_report *r, const rep_scenario *sc)
{
	int err;
	if (!sc || !sc->name || !*sc->name || (sc->sha256 && !is_sha256(sc->sha256)))
		return SIM_EINVAL;
	if ((err = set_str(&r->sc_name, sc->name)) || (err = set_str(&r->sc_file, sc->file)) ||
	    (err = set_str(&r->sc_sha256, sc->sha256)) || (err = set_str(&r->sc_point, sc->point)))
		return err;
	r->seed = sc->seed;
	r->has_scenario = true;
	return 0;
}

int rep_set_source(rep_report *r, rep_source source)
{
	if (source != REP_SIM && source != REP_HW)
		return SIM_EINVAL;
	r->source = source;
	return 0;
}

int rep_set_info(rep_report *r, const char *key, const char *value)
{
	char *k, *v;
	if (!key || !*key || !value)
		return SIM_EINVAL;
	for (size_t i = 0; i < r->ninfo; i++)
		if (!strcmp(r->info[i].key, key))
			return set_str(&r->info[i].value, value);
	if (grow(&r->info, &r->capinfo, r->ninfo, sizeof *r->info))
		return SIM_ENOMEM;
	k = rep_strdup(key);
	v = rep_strdup(value);
	if (!k || !v) {
		free(k);
		free(v);
		return SIM_ENOMEM;
	}
	r->info[r->ninfo++] = (struct rep_kv){ .key = k, .value = v };
	return 0;
}

/* rep_set_info with the value formatted from fmt and ap (consumed). */
static int set_infov(rep_report *r, const char *key, const char *fmt, va_list ap)
{
	va_list again;
	char *v;
	int n, err;
	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0 || !(v = sim_malloc((size_t)n + 1))) {
		va_end(again);
		return n < 0 ? SIM_EINVAL : SIM_ENOMEM;
	}
	vsnprintf(v, (size_t)n + 1, fmt, again);
	va_end(again);
	err = rep_set_info(r, key, v);
	free(v);
	return err;
}

int rep_set_infof(rep_report *r, const char *key, const char *fmt, ...)
{
	va_list ap;
	int err;
	va_start(ap, fmt);
	err = set_infov(r, key, fmt, ap);
	va_end(ap);
	return err;
}

int rep_set_variant_infof(rep_report *r, const char *variant, const char *key,
			  const char *fmt, ...)
{
	size_t n = strlen(variant) + 1 + strlen(key) + 1;
	char *k = sim_malloc(n);
	va_list ap;
	int err;
	if (!k)
		return SIM_ENOMEM;
	snprintf(k, n, "%s.%s", variant, key);
	va_start(ap, fmt);
	err = set_infov(r, k, fmt, ap);
	va_end(ap);
	free(k);
	return err;
}

rep_variant *rep_add_variant(rep_report *r, const char *name)
{
	rep_variant *v;
	if (!name || !*name || rep_find_variant(r, name))
		return NULL;
	if (grow(&r->var, &r->capvar, r->nvar, sizeof *r->var))
		return NULL;
	v = rep_calloc(1, sizeof *v);
	if (!v || !(v->name = rep_strdup(name))) {
		free(v);
		return NULL;
	}
	r->var[r->nvar++] = v;
	return v;
}

int rep_variant_rename(rep_report *r, rep_variant *v, const char *name)
{
	rep_variant *other;
	if (!name || !*name || ((other = rep_find_variant(r, name)) && other != v))
		return SIM_EINVAL;
	return set_str(&v->name, name);
}

int rep_variant_set_offload(rep_variant *v, const char *key, const char *value)
{
	int k = name_index(offload_kind_names(), REP_NOFFLOAD, key);
	if (k < 0 || name_index(offload_words((offload_kind)k), -1, value) < 0)
		return SIM_EINVAL;
	return set_str(&v->offload[k], value);
}

static bool in_range(double x, double max)
{
	return isfinite(x) && x >= 0 && x <= max;
}

static bool opt_in_range(double x, double max)
{
	return isnan(x) || in_range(x, max);
}

int rep_variant_set_metric(rep_variant *v, const char *name, double value)
{
	int i = metric_index(name);
	if (i < 0 || metric_defs[i].kind != REP_SCALAR)
		return SIM_EINVAL;
	if (!in_range(value, metric_defs[i].max))
		return SIM_ERANGE;
	v->metric[i] = (rep_stat){ .mean = value, .p50 = NAN, .p99 = NAN, .ci95 = NAN };
	v->has_metric[i] = true;
	return 0;
}

int rep_variant_set_rates(rep_variant *v, const wl_rates *r)
{
	int rc = rep_variant_set_metric(v, "samples_per_s", r->samples_per_s);
	if (!rc && !isnan(r->tokens_per_s))
		rc = rep_variant_set_metric(v, "tokens_per_s", r->tokens_per_s);
	if (!rc)
		rc = rep_variant_set_metric(v, "tflops_per_gpu", r->tflops_per_gpu);
	if (!rc && !isnan(r->mfu))
		rc = rep_variant_set_metric(v, "mfu", r->mfu);
	return rc;
}

int rep_variant_set_stat(rep_variant *v, const char *name, double mean, double p50,
			 double p99, double ci95)
{
	int i = metric_index(name);
	double max;
	if (i < 0 || metric_defs[i].kind != REP_STAT)
		return SIM_EINVAL;
	max = metric_defs[i].max;
	if (!in_range(mean, max) || !opt_in_range(p50, max) || !opt_in_range(p99, max) ||
	    !opt_in_range(ci95, INFINITY))
		return SIM_ERANGE;
	v->metric[i] = (rep_stat){ .mean = mean, .p50 = p50, .p99 = p99, .ci95 = ci95 };
	v->has_metric[i] = true;
	return 0;
}

int rep_variant_set_breakdown(rep_variant *v, const char *name, double seconds)
{
	int i = name_index(breakdown_names, REP_NBREAKDOWN, name);
	if (i < 0)
		return SIM_EINVAL;
	if (!in_range(seconds, INFINITY))
		return SIM_ERANGE;
	v->bd[i] = seconds;
	v->has_bd[i] = true;
	return 0;
}

int rep_variant_set_binding(rep_variant *v, const char *kind, const char *cls, double seconds)
{
	size_t n;
	const char *const *names = rep_binding_classes(&n);
	int k = name_index(binding_kinds, REP_NBIND, kind);
	int c = name_index(names, (int)n, cls);
	if (k < 0 || c < 0)
		return SIM_EINVAL;
	if (!in_range(seconds, INFINITY))
		return SIM_ERANGE;
	v->bind[k][c] = seconds;
	v->has_bind[k][c] = true;
	return 0;
}

/* A measured row's spread, when given, is ordered around its median:
 * min <= p10 <= time_s <= p90. Absent parts are not compared. */
static bool spread_ok(const rep_collective *c)
{
	double x[] = { c->time_min_s, c->time_p10_s, c->time_s, c->time_p90_s }, last = 0;
	for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
		if (isnan(x[i]))
			continue;
		if (!in_range(x[i], INFINITY) || x[i] < last)
			return false;
		last = x[i];
	}
	return true;
}

int rep_variant_add_collective(rep_variant *v, const rep_collective *c)
{
	rep_collective copy = *c;
	if (name_index(coll_ops, -1, c->op) < 0 || !c->algo || !*c->algo || c->ranks == 0)
		return SIM_EINVAL;
	if (!in_range(c->time_s, INFINITY) || !in_range(c->algbw_GBps, INFINITY) ||
	    !in_range(c->busbw_GBps, INFINITY) || !spread_ok(c))
		return SIM_ERANGE;
	if (grow(&v->coll, &v->capcoll, v->ncoll, sizeof *v->coll) ||
	    own_strings(rep_collective_fields, REP_COLLECTIVE_NFIELDS, &copy))
		return SIM_ENOMEM;
	v->coll[v->ncoll++] = copy;
	return 0;
}

int rep_variant_copy(rep_variant *dst, const rep_variant *src)
{
	int rc = 0;
	for (size_t k = 0; k < REP_NOFFLOAD && !rc; k++)
		if (src->offload[k])
			rc = set_str(&dst->offload[k], src->offload[k]);
	memcpy(dst->has_metric, src->has_metric, sizeof dst->has_metric);
	memcpy(dst->metric, src->metric, sizeof dst->metric);
	memcpy(dst->has_bd, src->has_bd, sizeof dst->has_bd);
	memcpy(dst->bd, src->bd, sizeof dst->bd);
	memcpy(dst->has_bind, src->has_bind, sizeof dst->has_bind);
	memcpy(dst->bind, src->bind, sizeof dst->bind);
	dst->has_speedup = src->has_speedup;
	dst->speedup = src->speedup;
	for (size_t k = 0; k < src->ncoll && !rc; k++)
		rc = rep_variant_add_collective(dst, &src->coll[k]);
	return rc;
}

static int bench_check(const rep_benchmark *b)
{
	if (!b->name || !*b->name || name_index(bench_transports, -1, b->transport) < 0 ||
	    (b->memory && name_index(bench_memories, -1, b->memory) < 0) ||
	    (b->device && !*b->device) || name_index(bench_units, -1, b->unit) < 0 ||
	    b->ranks == 0 || b->iters == 0)
		return SIM_EINVAL;
	if (!in_range(b->value, INFINITY) || !opt_in_range(b->p50, INFINITY) ||
	    !opt_in_range(b->p99, INFINITY) || !opt_in_range(b->stddev, INFINITY))
		return SIM_ERANGE;
	return 0;
}

int rep_add_benchmark(rep_report *r, const rep_benchmark *b)
{
	rep_benchmark copy = *b;
	int err = bench_check(b);
	if (err)
		return err;
	if (grow(&r->bench, &r->capbench, r->nbench, sizeof *r->bench) ||
	    own_strings(rep_benchmark_fields, REP_BENCHMARK_NFIELDS, &copy))
		return SIM_ENOMEM;
	r->bench[r->nbench++] = copy;
	return 0;
}

/* Throughput of v on basis `basis` (0 samples, 1 tokens, 2 1/iteration). */
static bool throughput(const rep_variant *v, int basis, double *out)
{
	static const char *const names[] = { "samples_per_s", "tokens_per_s" };
	rep_stat st;
	if (basis < 2)
		return rep_variant_metric(v, names[basis], out) && *out > 0;
	if (!rep_variant_stat(v, "iteration_s", &st) || st.mean <= 0)
		return false;
	*out = 1.0 / st.mean;
	return true;
}

/* The variant speedups are taken against: the first one of the same job.
 * Multi-job reports name variants "JOB/VARIANT"; a name without '/' is in
 * the one job, whose reference is the report's first variant. */
static size_t reference_of(const rep_report *r, size_t i)
{
	const char *slash = strchr(r->var[i]->name, '/');
	size_t n = slash ? (size_t)(slash - r->var[i]->name) + 1 : 0;
	for (size_t k = 0; k < i; k++)
		if (!strncmp(r->var[k]->name, r->var[i]->name, n) &&
		    (n || !strchr(r->var[k]->name, '/')))
			return k;
	return i;
}

int rep_compute_speedup(rep_report *r)
{
	bool any = false;
	if (r->nvar == 0)
		return SIM_ENOENT;
	for (size_t i = 0; i < r->nvar; i++) {
		double base, x;
		size_t ref = reference_of(r, i);
		r->var[i]->has_speedup = false;
		for (int basis = 0; basis < 3; basis++) {
			if (!throughput(r->var[ref], basis, &base) || !throughput(r->var[i], basis, &x))
				continue;
			r->var[i]->speedup = i == ref ? 1.0 : x / base;
			r->var[i]->has_speedup = true;
			any = true;
			break;
		}
	}
	return any ? 0 : SIM_ENOENT;
}

int rep_set_speedup(rep_report *r, const char *name, double ratio)
{
	rep_variant *v = rep_find_variant(r, name);
	if (!v)
		return SIM_ENOENT;
	if (!isfinite(ratio) || ratio <= 0)
		return SIM_ERANGE;
	v->speedup = ratio;
	v->has_speedup = true;
	return 0;
}

/* ---- accessors --------------------------------------------------------- */

rep_source rep_get_source(const rep_report *r) { return r->source; }

const char *rep_source_name(rep_source s) { return s == REP_HW ? "hw" : "sim"; }

const char *rep_get_version(const rep_report *r) { return r->version; }

const rep_scenario *rep_get_scenario(const rep_report *r)
{
	rep_report *w = (rep_report *)r; /* the view is a cache of owned fields */
	w->sc_view = (rep_scenario){ .name = r->sc_name, .file = r->sc_file,
				     .sha256 = r->sc_sha256, .seed = r->seed,
				     .point = r->sc_point };
	return &w->sc_view;
}

size_t rep_ninfo(const rep_report *r) { return r->ninfo; }

void rep_info_at(const rep_report *r, size_t i, const char **key, const char **value)
{
	*key = r->info[i].key;
	*value = r->info[i].value;
}

const char *rep_info(const rep_report *r, const char *key)
{
	for (size_t i = 0; i < r->ninfo; i++)
		if (!strcmp(r->info[i].key, key))
			return r->info[i].value;
	return NULL;
}

size_t rep_nvariants(const rep_report *r) { return r->nvar; }

rep_variant *rep_variant_at(const rep_report *r, size_t i) { return r->var[i]; }

rep_variant *rep_find_variant(const rep_report *r, const char *name)
{
	for (size_t i = 0; i < r->nvar; i++)
		if (name && !strcmp(r->var[i]->name, name))
			return r->var[i];
	return NULL;
}

const char *rep_variant_name(const rep_variant *v) { return v->name; }

const char *rep_variant_offload(const rep_variant *v, const char *key)
{
	int k = name_index(offload_kind_names(), REP_NOFFLOAD, key);
	return k < 0 ? NULL : v->offload[k];
}

bool rep_variant_metric(const rep_variant *v, const char *name, double *out)
{
	int i = metric_index(name);
	if (i < 0 || !v->has_metric[i] || metric_defs[i].kind != REP_SCALAR)
		return false;
	*out = v->metric[i].mean;
	return true;
}

bool rep_variant_stat(const rep_variant *v, const char *name, rep_stat *out)
{
	int i = metric_index(name);
	if (i < 0 || !v->has_metric[i] || metric_defs[i].kind != REP_STAT)
		return false;
	*out = v->metric[i];
	return true;
}

bool rep_variant_breakdown(const rep_variant *v, const char *name, double *out)
{
	int i = name_index(breakdown_names, REP_NBREAKDOWN, name);
	if (i < 0 || !v->has_bd[i])
		return false;
	*out = v->bd[i];
	return true;
}

bool rep_variant_binding(const rep_variant *v, const char *kind, const char *cls, double *out)
{
	size_t n;
	const char *const *names = rep_binding_classes(&n);
	int k = name_index(binding_kinds, REP_NBIND, kind);
	int c = name_index(names, (int)n, cls);
	if (k < 0 || c < 0 || !v->has_bind[k][c])
		return false;
	*out = v->bind[k][c];
	return true;
}

size_t rep_variant_ncollectives(const rep_variant *v) { return v->ncoll; }

const rep_collective *rep_variant_collective(const rep_variant *v, size_t i) { return &v->coll[i]; }

bool rep_speedup(const rep_report *r, const char *name, double *out)
{
	const rep_variant *v = rep_find_variant(r, name);
	if (!v || !v->has_speedup)
		return false;
	*out = v->speedup;
	return true;
}

size_t rep_nbenchmarks(const rep_report *r) { return r->nbench; }

const rep_benchmark *rep_benchmark_at(const rep_report *r, size_t i) { return &r->bench[i]; }

/* ---- validation -------------------------------------------------------- */

/* binding_s splits breakdown_s's exposed_comm (tensor_parallel, pipeline,
 * data_parallel) and data_stall (storage): never more than they hold. */
static int validate_binding(const rep_variant *v, size_t i, char *errbuf, size_t errlen)
{
	double comm = 0, stor = 0, part;
	bool any = false;
	for (int k = 0; k < REP_NBIND; k++)
		for (int c = 0; c < FAB_NCLASSES; c++) {
			double s = v->has_bind[k][c] ? v->bind[k][c] : 0;
			any |= v->has_bind[k][c];
			if (k == REP_NBIND - 1)
				stor += s;
			else
				comm += s;
		}
	if (!any)
		return 0;
	part = v->has_bd[1] ? v->bd[1] : 0; /* exposed_comm */
	if (comm > part * (1 + 1e-6) + 1e-12)
		return sim_errbuf(errbuf, errlen, SIM_EINVAL, "variants[%zu].binding_s: communication "
				  "held %.9g s, breakdown_s.exposed_comm is %.9g s", i, comm, part);
	part = v->has_bd[2] ? v->bd[2] : 0; /* data_stall */
	if (stor > part * (1 + 1e-6) + 1e-12)
		return sim_errbuf(errbuf, errlen, SIM_EINVAL, "variants[%zu].binding_s: storage held "
				  "%.9g s, breakdown_s.data_stall is %.9g s", i, stor, part);
	return 0;
}

static int validate_variant(const rep_variant *v, size_t i, char *errbuf, size_t errlen)
{
	double sum = 0;
	bool any = false;
	rep_stat it;
	int rc = validate_binding(v, i, errbuf, errlen);
	if (rc)
		return rc;
	for (int k = 0; k < REP_NOFFLOAD; k++)
		if (!v->offload[k])
			return sim_errbuf(errbuf, errlen, SIM_EINVAL, "variants[%zu].offload: missing '%s'", i,
				    offload_kind_name((offload_kind)k));
	if (rep_variant_stat(v, "iteration_s", &it) && !isnan(it.p50) && !isnan(it.p99) &&
	    it.p50 > it.p99)
		return sim_errbuf(errbuf, errlen, SIM_EINVAL, "variants[%zu].metrics.iteration_s: p50 %g > p99 %g",
			    i, it.p50, it.p99);
	for (int k = 0; k < REP_NBREAKDOWN; k++) {
		sum += v->has_bd[k] ? v->bd[k] : 0;
		any |= v->has_bd[k];
	}
	if (!any)
		return 0;
	if (!rep_variant_stat(v, "iteration_s", &it))
		return sim_errbuf(errbuf, errlen, SIM_EINVAL,
			    "variants[%zu].breakdown_s: present without metrics.iteration_s", i);
	if (fabs(sum - it.mean) > 1e-6 * it.mean + 1e-12)
		return sim_errbuf(errbuf, errlen, SIM_EINVAL,
			    "variants[%zu].breakdown_s: components sum to %.9g s, "
			    "iteration_s.mean is %.9g s", i, sum, it.mean);
	return 0;
}

/* A stored speedup must be what rep_compute_speedup would give. */
static int validate_speedup(const rep_report *r, size_t i, char *errbuf, size_t errlen)
{
	const rep_variant *v = r->var[i];
	size_t ref = reference_of(r, i);
	double base, x;
	for (int basis = 0; basis < 3; basis++) {
		double want;
		if (!throughput(r->var[ref], basis, &base) || !throughput(v, basis, &x))
			continue;
		want = i == ref ? 1.0 : x / base;
		if (fabs(v->speedup - want) > 1e-9 * want)
			return sim_errbuf(errbuf, errlen, SIM_EINVAL, "speedup.%s: %.17g, but the throughput ratio "
				    "over '%s' is %.17g", v->name, v->speedup, r->var[ref]->name, want);
		return 0;
	}
	return sim_errbuf(errbuf, errlen, SIM_EINVAL, "speedup.%s: no throughput (samples_per_s, tokens_per_s "
		    "or iteration_s) to base it on", v->name);
}

int rep_validate(const rep_report *r, char *errbuf, size_t errlen)
{
	int err;
	if (!r->version || !*r->version)
		return sim_errbuf(errbuf, errlen, SIM_EINVAL, "version: missing");
	if (!r->has_scenario)
		return sim_errbuf(errbuf, errlen, SIM_EINVAL, "scenario: missing");
	if (r->nvar == 0 && r->nbench == 0)
		return sim_errbuf(errbuf, errlen, SIM_EINVAL, "variants: no variant and no benchmark");
	for (size_t i = 0; i < r->nvar; i++)
		if ((err = validate_variant(r->var[i], i, errbuf, errlen)) ||
		    (r->var[i]->has_speedup && (err = validate_speedup(r, i, errbuf, errlen))))
			return err;
	for (size_t i = 0; i < r->nbench; i++)
		if (bench_check(&r->bench[i]))
			return sim_errbuf(errbuf, errlen, SIM_EINVAL, "benchmarks[%zu]: invalid entry '%s'", i,
				    r->bench[i].name ? r->bench[i].name : "?");
	return 0;
}

/* ---- writer ------------------------------------------------------------ */

/* Shortest %.Ng (N <= 17) that reads back to exactly x; an exponent is
 * spelled out (500, not 5e+02) while the digits fit in 17. */
void rep_format_double(char *buf, size_t len, double x)
{
	int prec = 1;
	char *e;
	for (; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	e = strchr(buf, 'e');
	if (e && e[1] == '+') {
		int exp10 = atoi(e + 2);
		if (exp10 < 17)
			snprintf(buf, len, "%.*g", exp10 + 1 > prec ? exp10 + 1 : prec, x);
	}
}

struct jw {
	FILE *f;
	int depth;
	bool first;  /* next item is the first of its container */
};

/* Start an item: comma, newline, indent, then "key": when key != NULL. */
static void jw_item(struct jw *w, const char *key)
{
	fputs(w->first ? "\n" : ",\n", w->f);
	w->first = false;
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
	if (key) {
		json_put_str(w->f, key);
		fputs(": ", w->f);
	}
}

static void jw_open(struct jw *w, const char *key, char c)
{
	jw_item(w, key);
	fputc(c, w->f);
	w->depth++;
	w->first = true;
}

static void jw_close(struct jw *w, char c)
{
	w->depth--;
	if (!w->first) {
		fputc('\n', w->f);
		for (int i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	fputc(c, w->f);
	w->first = false;
}

static void jw_kstr(struct jw *w, const char *key, const char *s)
{
	if (!s)
		return;
	jw_item(w, key);
	json_put_str(w->f, s);
}

static void jw_knum(struct jw *w, const char *key, double x)
{
	char buf[40];
	if (isnan(x))
		return;
	rep_format_double(buf, sizeof buf, x);
	jw_item(w, key);
	fputs(buf, w->f);
}

static void jw_ku64(struct jw *w, const char *key, uint64_t x)
{
	jw_item(w, key);
	fprintf(w->f, "%llu", (unsigned long long)x);
}

static void write_metrics(struct jw *w, const rep_variant *v)
{
	jw_open(w, "metrics", '{');
	for (int i = 0; i < REP_NMETRICS; i++) {
		const rep_stat *m = &v->metric[i];
		if (!v->has_metric[i])
			continue;
		if (metric_defs[i].kind == REP_SCALAR) {
			jw_knum(w, metric_defs[i].name, m->mean);
			continue;
		}
		jw_open(w, metric_defs[i].name, '{');
		jw_knum(w, "mean", m->mean);
		jw_knum(w, "p50", m->p50);
		jw_knum(w, "p99", m->p99);
		jw_knum(w, "ci95", m->ci95);
		jw_close(w, '}');
	}
	jw_close(w, '}');
}

/* key: [ one object per record of recs (n of them, each `size` bytes) ] */
static void write_records(struct jw *w, const char *key, const rep_field *f, size_t nf,
			  const void *recs, size_t n, size_t size)
{
	jw_open(w, key, '[');
	for (size_t i = 0; i < n; i++) {
		const void *rec = (const char *)recs + i * size;
		jw_open(w, NULL, '{');
		for (size_t k = 0; k < nf; k++)
			if (f[k].type == REP_F_STR)
				jw_kstr(w, f[k].key, rep_field_str(&f[k], rec));
			else if (f[k].type == REP_F_NUM)
				jw_knum(w, f[k].key, rep_field_num(&f[k], rec));
			else if (f[k].required || rep_field_u64(&f[k], rec))
				jw_ku64(w, f[k].key, rep_field_u64(&f[k], rec));
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

/* binding_s, when any entry is present: each kind with entries, each
 * present class under it. */
static void write_binding(struct jw *w, const rep_variant *v)
{
	size_t n;
	const char *const *cls = rep_binding_classes(&n);
	bool any = false;
	for (int k = 0; k < REP_NBIND; k++)
		for (int c = 0; c < FAB_NCLASSES; c++)
			any |= v->has_bind[k][c];
	if (!any)
		return;
	jw_open(w, "binding_s", '{');
	for (int k = 0; k < REP_NBIND; k++) {
		bool some = false;
		for (int c = 0; c < FAB_NCLASSES; c++)
			some |= v->has_bind[k][c];
		if (!some)
			continue;
		jw_open(w, binding_kinds[k], '{');
		for (int c = 0; c < FAB_NCLASSES; c++)
			if (v->has_bind[k][c])
				jw_knum(w, cls[c], v->bind[k][c]);
		jw_close(w, '}');
	}
	jw_close(w, '}');
}

static void write_variant(struct jw *w, const rep_variant *v)
{
	jw_open(w, NULL, '{');
	jw_kstr(w, "name", v->name);
	jw_open(w, "offload", '{');
	for (int k = 0; k < REP_NOFFLOAD; k++)
		jw_kstr(w, offload_kind_name((offload_kind)k), v->offload[k]);
	jw_close(w, '}');
	write_metrics(w, v);
	jw_open(w, "breakdown_s", '{');
	for (int k = 0; k < REP_NBREAKDOWN; k++)
		if (v->has_bd[k])
			jw_knum(w, breakdown_names[k], v->bd[k]);
	jw_close(w, '}');
	write_binding(w, v);
	write_records(w, "collectives", rep_collective_fields, REP_COLLECTIVE_NFIELDS, v->coll,
		      v->ncoll, sizeof *v->coll);
	jw_close(w, '}');
}

static void write_benchmarks(struct jw *w, const rep_report *r)
{
	if (r->nbench)
		write_records(w, "benchmarks", rep_benchmark_fields, REP_BENCHMARK_NFIELDS, r->bench,
			      r->nbench, sizeof *r->bench);
}

static void write_head(struct jw *w, const rep_report *r)
{
	jw_kstr(w, "schema", REP_SCHEMA);
	jw_kstr(w, "source", rep_source_name(r->source));
	jw_kstr(w, "version", r->version);
	jw_open(w, "scenario", '{');
	jw_kstr(w, "name", r->sc_name);
	jw_kstr(w, "file", r->sc_file);
	jw_kstr(w, "sha256", r->sc_sha256);
	jw_ku64(w, "seed", r->seed);
	jw_kstr(w, "point", r->sc_point);
	jw_close(w, '}');
	if (r->ninfo) {
		jw_open(w, "info", '{');
		for (size_t i = 0; i < r->ninfo; i++)
			jw_kstr(w, r->info[i].key, r->info[i].value);
		jw_close(w, '}');
	}
}

int rep_write_json(const rep_report *r, FILE *f)
{
	struct jw w = { .f = f, .first = true };
	jw_open(&w, NULL, '{');
	write_head(&w, r);
	jw_open(&w, "variants", '[');
	for (size_t i = 0; i < r->nvar; i++)
		write_variant(&w, r->var[i]);
	jw_close(&w, ']');
	jw_open(&w, "speedup", '{');
	for (size_t i = 0; i < r->nvar; i++)
		if (r->var[i]->has_speedup)
			jw_knum(&w, r->var[i]->name, r->var[i]->speedup);
	jw_close(&w, '}');
	write_benchmarks(&w, r);
	jw_close(&w, '}');
	fputc('\n', f);
	return ferror(f) ? SIM_EIO : 0;
}

static int write_json_to(FILE *f, const void *r)
{
	return rep_write_json(r, f);
}

int rep_write_file(const rep_report *r, const char *path, char *errbuf, size_t errlen)
{
	int err = atomic_write_file(path, write_json_to, r, errbuf, errlen);
	return err == SIM_ENOMEM ? err : err ? SIM_EIO : 0;
}
