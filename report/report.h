/* The dpusim-report/1 document: one in-memory report shared by the
 * simulator and dpusim-hw, its deterministic JSON writer, its reader
 * (libfyaml, JSON mode) and its validator. Schema: docs/report-schema.md. */
#ifndef DPUSIM_REPORT_REPORT_H
#define DPUSIM_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/workload.h"

#define REP_SCHEMA "dpusim-report/1"

typedef struct rep_report rep_report;
typedef struct rep_variant rep_variant;

typedef enum rep_source { REP_SIM, REP_HW } rep_source;

/* What was run. Strings are copied by rep_set_scenario; NULL means absent
 * (name is required by the validator; file, sha256 and point are optional). */
typedef struct rep_scenario {
	const char *name;    /* scenario name */
	const char *file;    /* path the scenario was read from */
	const char *sha256;  /* hex SHA-256 of the scenario text (64 lowercase hex digits) */
	uint64_t seed;
	const char *point;   /* sweep point, "key=value,key=value" in sweep order, or NULL */
} rep_scenario;

/* A metric with a distribution (iteration_s). p50, p99 and ci95 may be NAN:
 * absent. mean is required. All in the metric's unit. */
typedef struct rep_stat {
	double mean;
	double p50;
	double p99;
	double ci95;  /* half-width of the 95% confidence interval of the mean */
} rep_stat;

/* One collective as nccl-tests reports it. Strings copied on add. */
typedef struct rep_collective {
	const char *op;    /* allreduce|reduce_scatter|allgather|alltoall|broadcast|reduce|sendrecv */
	const char *algo;  /* ring, tree, hierarchical, nvls, ... (free text, non-empty) */
	uint32_t ranks;
	uint64_t bytes;    /* message size per rank, as nccl-tests' "size" */
	double time_s;
	double algbw_GBps; /* bytes / time_s / 1e9 */
	double busbw_GBps; /* algbw times the op's bus factor (nccl-tests PERFORMANCE.md) */
	/* Optional, written by dpusim-hw replay: time_s is then the median of
	 * `calls` timed calls (0: absent) and these their spread (NAN: absent),
	 * so one call descheduled on a busy machine does not decide the row. */
	uint64_t calls;
	double time_min_s, time_p10_s, time_p90_s;
} rep_collective;

/* One microbenchmark measurement (dpusim-hw bench). `dpusim calibrate` fits
 * a profile from these, keyed by (name, transport, memory) and swept over
 * bytes. Strings copied on add; optional doubles are NAN when absent,
 * optional strings NULL. See docs/report-schema.md for names and units. */
typedef struct rep_benchmark {
	const char *name;      /* what was measured: "rdma_write_bw", "tcp_lat", "gemm", ... */
	const char *transport; /* verbs|tcp|cuda|cpu|storage|crypto */
	const char *memory;    /* host|cuda, or NULL */
	const char *device;    /* e.g. "mlx5_0", "NVIDIA H100", or NULL */
	uint64_t bytes;        /* message / operation size in bytes (0: not sized) */
	uint32_t ranks;        /* processes involved (>= 1) */
	uint64_t iters;        /* timed repetitions (>= 1) */
	double value;          /* the figure, in `unit` */
	const char *unit;      /* s | B/s | op/s | FLOP/s | cycles/B */
	double p50;            /* optional, in `unit` */
	double p99;            /* optional, in `unit` */
	double stddev;         /* optional, in `unit` */
} rep_benchmark;

/* The fields of a collective row and of a benchmark, in the order the
 * report writes them, the reader takes them and the database stores them:
 * one list, so that the three cannot disagree. */
typedef enum rep_ftype {
	REP_F_STR,  /* const char *; NULL: absent */
	REP_F_U32,  /* uint32_t */
	REP_F_U64,  /* uint64_t */
	REP_F_NUM,  /* double; NaN: absent */
} rep_ftype;

typedef struct rep_field {
	const char *key;
	rep_ftype type;
	size_t off;         /* offsetof in its record */
	bool required;      /* the reader refuses a record without it; an optional
			       count (REP_F_U64) is absent when 0 */
} rep_field;

enum { REP_COLLECTIVE_NFIELDS = 11, REP_BENCHMARK_NFIELDS = 12, REP_RECORD_MAXFIELDS = 12 };
extern const rep_field rep_collective_fields[REP_COLLECTIVE_NFIELDS];
extern const rep_field rep_benchmark_fields[REP_BENCHMARK_NFIELDS];

/* Field f of record rec (a rep_collective or rep_benchmark as f says):
 * its string, its count (REP_F_U32 or REP_F_U64), its number. */
const char *rep_field_str(const rep_field *f, const void *rec);
uint64_t rep_field_u64(const rep_field *f, const void *rec);
double rep_field_num(const rep_field *f, const void *rec);
/* Sets them (strings are borrowed until the record is added). */
void rep_field_set_str(const rep_field *f, void *rec, const char *s);
void rep_field_set_u64(const rep_field *f, void *rec, uint64_t x);
void rep_field_set_num(const rep_field *f, void *rec, double x);

/* A known metric: the validator and the reader reject any other name. */
typedef enum rep_kind { REP_SCALAR, REP_STAT } rep_kind;
typedef struct rep_metric_def {
	const char *name;
	const char *unit;     /* "s", "1/s", "TFLOP/s", "fraction", "kWh", "USD" */
	rep_kind kind;
	double max;           /* largest valid value (fractions: 1), or INFINITY */
	const char *label;    /* for people: its row in dpusim run's table */
} rep_metric_def;

/* The metric table in canonical (output) order; *n gets its length. Static. */
const rep_metric_def *rep_metric_defs(size_t *n);
/* The definition of metric `name`, or NULL when unknown. */
const rep_metric_def *rep_metric_find(const char *name);
/* Breakdown component names in canonical order; *n gets the count. Static. */
const char *const *rep_breakdown_names(size_t *n);
/* binding_s's kinds of transfer (tensor_parallel, pipeline, data_parallel,
 * storage) and the classes of limit under each (fab_class_name's words),
 * in canonical order; *n gets the count. Static. */
const char *const *rep_binding_kinds(size_t *n);
const char *const *rep_binding_classes(size_t *n);
/* Offload keys (network, storage, crypto, vswitch) in canonical order. */
const char *const *rep_offload_keys(size_t *n);

/* ---- building ---------------------------------------------------------- */

/* A new empty report (version dpusim_version, no scenario, no variants),
 * or NULL when out of memory. Free with rep_free (NULL is a no-op). */
rep_report *rep_new(rep_source source);
void rep_free(rep_report *r);

/* Replace the source (a reader learns it where the file says it). 0 or
 * SIM_EINVAL. */
int rep_set_source(rep_report *r, rep_source source);
/* Replace the version string (copied). 0, SIM_EINVAL (NULL/empty), SIM_ENOMEM. */
int rep_set_version(rep_report *r, const char *version);
/* Set the scenario block; strings copied. 0, SIM_EINVAL, SIM_ENOMEM. */
int rep_set_scenario(rep_report *r, const rep_scenario *sc);
/* Add a free-form "info" entry (host name, driver, device list...): string
 * key and value, copied, kept in insertion order; a repeated key replaces
 * the value. 0, SIM_EINVAL, SIM_ENOMEM. */
int rep_set_info(rep_report *r, const char *key, const char *value);
/* The same with the value formatted as printf does (whole, never cut). */
int rep_set_infof(rep_report *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same under the key "VARIANT.KEY", the form a variant's own info
 * entries take (docs/report-schema.md). */
int rep_set_variant_infof(rep_report *r, const char *variant, const char *key,
			  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Add a variant named `name` (copied; names are unique: a repeat gives NULL
 * too). Returns the variant, owned by r and valid until rep_free, or NULL
 * (duplicate name, empty name or out of memory). */
rep_variant *rep_add_variant(rep_report *r, const char *name);

/* Renames v (a reader meets a variant's keys in any order, its name
 * perhaps last). 0, SIM_EINVAL (empty, or another variant's name),
 * SIM_ENOMEM. */
int rep_variant_rename(rep_report *r, rep_variant *v, const char *name);
/* offload[key] = value. Keys network, storage, crypto, vswitch; values the
 * scenario words of each (models/offload_list.h). SIM_EINVAL for an unknown
 * key or value, SIM_ENOMEM. */
int rep_variant_set_offload(rep_variant *v, const char *key, const char *value);
/* A scalar metric (see rep_metric_defs). SIM_EINVAL for an unknown or
 * REP_STAT metric; SIM_ERANGE for a non-finite, negative or above-max value. */
int rep_variant_set_metric(rep_variant *v, const char *name, double value);
/* The throughput metrics (samples_per_s, tokens_per_s, tflops_per_gpu, mfu)
 * from r, each that r has (not NaN); errors as rep_variant_set_metric. */
int rep_variant_set_rates(rep_variant *v, const wl_rates *r);
/* A distribution metric (iteration_s). p50/p99/ci95 may be NAN (absent).
 * SIM_EINVAL for an unknown or scalar metric; SIM_ERANGE as above. */
int rep_variant_set_stat(rep_variant *v, const char *name, double mean, double p50,
			 double p99, double ci95);
/* breakdown_s[name] = seconds (name from rep_breakdown_names).
 * SIM_EINVAL for an unknown name, SIM_ERANGE for negative or non-finite. */
int rep_variant_set_breakdown(rep_variant *v, const char *name, double seconds);
/* binding_s[kind][cls] = seconds of an iteration that transfers of `kind`
 * were exposed while held by a limit of class `cls`. SIM_EINVAL for an
 * unknown name, SIM_ERANGE for negative or non-finite. */
int rep_variant_set_binding(rep_variant *v, const char *kind, const char *cls, double seconds);
/* Append a collective (copied). SIM_EINVAL for missing strings or zero
 * ranks; SIM_ERANGE for negative or non-finite figures; SIM_ENOMEM. */
int rep_variant_add_collective(rep_variant *v, const rep_collective *c);
/* Everything src holds (offloads, metrics, breakdown, binding, collectives,
 * speedup) into dst, a variant with nothing set yet: one copy beside the
 * struct, so a field added to the report is copied too (run --jobs merges
 * its workers' reports with it). SIM_ENOMEM. */
int rep_variant_copy(rep_variant *dst, const rep_variant *src);
/* Append a microbenchmark result to the report's "benchmarks" list (copied).
 * SIM_EINVAL / SIM_ERANGE as the validator would report; SIM_ENOMEM. */
int rep_add_benchmark(rep_report *r, const rep_benchmark *b);

/* speedup[v] = throughput(v) / throughput(first variant) for every variant
 * (the first gets exactly 1). Throughput is samples_per_s when both have it,
 * else tokens_per_s, else 1 / iteration_s.mean. Variants where neither basis
 * exists get no speedup. SIM_ENOENT when there are no variants or the first
 * has no throughput at all. */
int rep_compute_speedup(rep_report *r);
/* speedup[name] = ratio, set directly (used by the reader). SIM_ENOENT when
 * no variant has that name; SIM_ERANGE for non-finite or <= 0. */
int rep_set_speedup(rep_report *r, const char *name, double ratio);

/* ---- reading back ------------------------------------------------------ */

rep_source rep_get_source(const rep_report *r);
const char *rep_source_name(rep_source s);          /* "sim" | "hw" */
const char *rep_get_version(const rep_report *r);
/* The scenario (strings owned by r; name NULL when never set). Valid until
 * the next rep_set_scenario or rep_free: copy what must outlive them. */
const rep_scenario *rep_get_scenario(const rep_report *r);
size_t rep_ninfo(const rep_report *r);
/* Entry i of "info" (0 <= i < rep_ninfo); strings owned by r. */
void rep_info_at(const rep_report *r, size_t i, const char **key, const char **value);
/* The value of info entry `key` (keys are unique), or NULL; owned by r. */
const char *rep_info(const rep_report *r, const char *key);

size_t rep_nvariants(const rep_report *r);
/* Variant i in insertion order (i < rep_nvariants), owned by r. */
rep_variant *rep_variant_at(const rep_report *r, size_t i);
/* The variant named `name`, or NULL. */
rep_variant *rep_find_variant(const rep_report *r, const char *name);
const char *rep_variant_name(const rep_variant *v);
/* offload value for `key`, or NULL when absent. */
const char *rep_variant_offload(const rep_variant *v, const char *key);
/* True and *out set when scalar metric `name` is present. */
bool rep_variant_metric(const rep_variant *v, const char *name, double *out);
/* True and *out set when stat metric `name` is present. */
bool rep_variant_stat(const rep_variant *v, const char *name, rep_stat *out);
/* True and *out set when breakdown component `name` is present. */
bool rep_variant_breakdown(const rep_variant *v, const char *name, double *out);
/* True and *out set when binding_s[kind][cls] is present. */
bool rep_variant_binding(const rep_variant *v, const char *kind, const char *cls, double *out);
size_t rep_variant_ncollectives(const rep_variant *v);
/* Collective i (strings owned by the report). */
const rep_collective *rep_variant_collective(const rep_variant *v, size_t i);
/* True and *out set when the report has a speedup for variant `name`. */
bool rep_speedup(const rep_report *r, const char *name, double *out);
size_t rep_nbenchmarks(const rep_report *r);
const rep_benchmark *rep_benchmark_at(const rep_report *r, size_t i);

/* x in the shortest %.Ng (N <= 17) that reads back to exactly x; len >= 32. */
void rep_format_double(char *buf, size_t len, double x);

/* ---- files ------------------------------------------------------------- */

/* Write r as JSON to f. Deterministic: keys in canonical order, numbers
 * in the shortest form that reads back to the same double (up to %.17g),
 * integers as integers; same report => byte-identical output. 0 or SIM_EIO. */
int rep_write_json(const rep_report *r, FILE *f);
/* Write atomically: PATH.tmp.PID, fsync, rename over path; on any failure
 * the temporary is removed and path is untouched. 0, SIM_EIO, SIM_ENOMEM;
 * errbuf (may be NULL) gets "path: reason". */
int rep_write_file(const rep_report *r, const char *path, char *errbuf, size_t errlen);
/* Parse and validate the report at path. On success *out owns a new report
 * (free with rep_free). On failure *out is NULL, the return is SIM_EIO,
 * SIM_EPARSE or SIM_ENOMEM and errbuf gets "path:line:col: what is wrong". */
int rep_read_file(const char *path, rep_report **out, char *errbuf, size_t errlen);
/* Same from f, its current position to its end (a worker's result file,
 * tools/forks.h); `name` stands for the path in messages. */
int rep_read_stream(FILE *f, const char *name, rep_report **out, char *errbuf, size_t errlen);
/* Same from a string of `len` bytes; `name` stands for the path in messages. */
int rep_read_string(const char *name, const char *text, size_t len, rep_report **out,
		    char *errbuf, size_t errlen);

/* Check the rules the setters cannot check alone: a scenario, at least one
 * variant or benchmark, all four offload keys, breakdown summing to
 * iteration_s.mean (relative 1e-6), p50 <= p99, and each speedup equal to
 * what rep_compute_speedup gives (relative 1e-9). 0 or SIM_EINVAL with errbuf set to
 * "what: why" (JSON path style, e.g. "variants[1].breakdown_s: ..."). */
int rep_validate(const rep_report *r, char *errbuf, size_t errlen);

/* Test hook: after n more allocations, every allocation by this module
 * (and by the others that allocate through sim/alloc.h) fails (the fault
 * paths return SIM_ENOMEM or NULL and leak nothing); n < 0 removes the
 * limit. Not for production use; not thread-safe. */
void rep_test_fail_alloc_after(long n);

#endif
