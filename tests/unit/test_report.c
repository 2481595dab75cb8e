/* tools/report: build, write, read back, byte-identical output, absent
 * metrics, setter ranges, reader errors with line:col, the validator. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/err.h"
#include "report/report.h"
#include "tests/unit/check_main.h"

static void set_offload(rep_variant *v, const char *net, const char *sto, const char *cry,
			const char *vsw)
{
	ck_assert_int_eq(rep_variant_set_offload(v, "network", net), 0);
	ck_assert_int_eq(rep_variant_set_offload(v, "storage", sto), 0);
	ck_assert_int_eq(rep_variant_set_offload(v, "crypto", cry), 0);
	ck_assert_int_eq(rep_variant_set_offload(v, "vswitch", vsw), 0);
}

/* A report using every section; figures are arbitrary but awkward
 * (thirds, tiny and huge magnitudes) to exercise number formatting. */
static rep_report *sample(void)
{
	rep_report *r = rep_new(REP_SIM);
	rep_variant *b, *d;
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(rep_set_scenario(r, &(rep_scenario){
		.name = "demo", .file = "scenarios/demo.yaml", .seed = 18446744073709551615ull,
		.sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		.point = "cluster.gpus=64" }), 0);
	ck_assert_int_eq(rep_set_info(r, "host", "node\"1\"\n"), 0);
	b = rep_add_variant(r, "baseline");
	d = rep_add_variant(r, "dpu");
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(d);
	set_offload(b, "host-tcp", "host", "host", "none");
	set_offload(d, "rdma-gdr", "dpu-snap", "dpu-inline", "dpu");
	ck_assert_int_eq(rep_variant_set_stat(b, "iteration_s", 0.3, 0.29, 0.41, 1e-3), 0);
	ck_assert_int_eq(rep_variant_set_metric(b, "samples_per_s", 1000.0 / 3.0), 0);
	ck_assert_int_eq(rep_variant_set_metric(b, "mfu", 0.41), 0);
	ck_assert_int_eq(rep_variant_set_breakdown(b, "compute", 0.1), 0);
	ck_assert_int_eq(rep_variant_set_breakdown(b, "exposed_comm", 0.2), 0);
	ck_assert_int_eq(rep_variant_set_binding(b, "data_parallel", "conn_core", 0.15), 0);
	ck_assert_int_eq(rep_variant_set_binding(b, "pipeline", "nic", 0.05), 0);
	ck_assert_int_eq(rep_variant_add_collective(b, &(rep_collective){
		.op = "allreduce", .algo = "ring", .ranks = 8, .bytes = 1ull << 40,
		.time_s = 1.25e-7, .algbw_GBps = 123.456, .busbw_GBps = 216.048, .calls = 20,
		.time_min_s = 1.0e-7, .time_p10_s = 1.1e-7, .time_p90_s = 1.5e-7 }), 0);
	ck_assert_int_eq(rep_variant_set_stat(d, "iteration_s", 0.2, NAN, NAN, NAN), 0);
	ck_assert_int_eq(rep_variant_set_metric(d, "samples_per_s", 500), 0);
	ck_assert_int_eq(rep_add_benchmark(r, &(rep_benchmark){
		.name = "rdma_write_bw", .transport = "verbs", .memory = "cuda", .bytes = 65536,
		.ranks = 2, .iters = 1000, .value = 2.3e10, .unit = "B/s",
		.p50 = NAN, .p99 = NAN, .stddev = 1.5e8 }), 0);
	ck_assert_int_eq(rep_compute_speedup(r), 0);
	return r;
}

/* The JSON of r as a malloc'd string. */
static char *to_json(const rep_report *r, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(rep_write_json(r, f), 0);
	fclose(f);
	return buf;
}

static rep_report *from_json(const char *text, char *err, size_t errlen)
{
	rep_report *r = NULL;
	int rc = rep_read_string("t.json", text, strlen(text), &r, err, errlen);
	ck_assert(rc == 0 ? r != NULL : r == NULL);
	return r;
}

START_TEST(round_trip_is_identical)
{
	rep_report *r = sample(), *back;
	size_t n1, n2;
	char err[256] = "", *a = to_json(r, &n1), *b;
	back = from_json(a, err, sizeof err);
	ck_assert_msg(back != NULL, "read back failed: %s", err);
	b = to_json(back, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_str_eq(a, b);
	/* spot-check values through the accessors */
	rep_stat st;
	double x;
	ck_assert(rep_variant_stat(rep_find_variant(back, "baseline"), "iteration_s", &st));
	ck_assert(st.mean == 0.3 && st.p99 == 0.41 && st.ci95 == 1e-3);
	ck_assert(rep_variant_metric(rep_variant_at(back, 0), "samples_per_s", &x));
	ck_assert(x == 1000.0 / 3.0);
	ck_assert(rep_speedup(back, "dpu", &x) && x == 1.5);
	ck_assert_uint_eq(rep_get_scenario(back)->seed, 18446744073709551615ull);
	ck_assert_uint_eq(rep_variant_collective(rep_variant_at(back, 0), 0)->bytes, 1ull << 40);
	ck_assert_str_eq(rep_benchmark_at(back, 0)->memory, "cuda");
	ck_assert(isnan(rep_benchmark_at(back, 0)->p50));
	ck_assert(rep_variant_binding(rep_variant_at(back, 0), "data_parallel", "conn_core", &x) &&
		  x == 0.15);
	ck_assert(!rep_variant_binding(rep_variant_at(back, 0), "data_parallel", "nic", &x));
	ck_assert_str_eq(rep_info(back, "host"), "node\"1\"\n");
	ck_assert_ptr_null(rep_info(back, "hos"));
	free(a);
	free(b);
	rep_free(back);
	rep_free(r);
}
END_TEST

/* run --jobs merges its workers' reports with rep_variant_copy: every
 * variant copied into a fresh report writes the same "variants" section
 * (binding_s once went missing when a copy listed the fields itself). */
START_TEST(variant_copy_is_whole)
{
	rep_report *r = sample(), *c = rep_new(REP_SIM);
	size_t n1, n2;
	ck_assert_ptr_nonnull(c);
	for (size_t i = 0; i < rep_nvariants(r); i++) {
		const rep_variant *src = rep_variant_at(r, i);
		rep_variant *dst = rep_add_variant(c, rep_variant_name(src));
		ck_assert_ptr_nonnull(dst);
		ck_assert_int_eq(rep_variant_copy(dst, src), 0);
	}
	ck_assert_int_eq(rep_add_benchmark(c, rep_benchmark_at(r, 0)), 0); /* written after */
	char *a = to_json(r, &n1), *b = to_json(c, &n2);
	const char *va = strstr(a, "\"variants\""), *vb = strstr(b, "\"variants\"");
	ck_assert_ptr_nonnull(va);
	ck_assert_ptr_nonnull(vb);
	ck_assert_ptr_nonnull(strstr(va, "binding_s"));
	ck_assert_str_eq(va, vb);
	free(a);
	free(b);
	rep_free(c);
	rep_free(r);
}
END_TEST

START_TEST(byte_identical_twice)
{
	rep_report *r1 = sample(), *r2 = sample();
	size_t n1, n2;
	char *a = to_json(r1, &n1), *b = to_json(r2, &n2);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(a, "\"samples_per_s\": 333.3333333333333,"));
	ck_assert_ptr_nonnull(strstr(a, "\"samples_per_s\": 500\n"));
	ck_assert_ptr_nonnull(strstr(a, "\"host\": \"node\\\"1\\\"\\u000a\""));
	free(a);
	free(b);
	rep_free(r1);
	rep_free(r2);
}
END_TEST

START_TEST(numbers_round_trip)
{
	static const double xs[] = { 0.1, 1.0 / 3.0, 1e-300, 4.9e-324, 1.7976931348623157e308,
				     123456789012345678.0, 2.5e16, 0.0, 299792458.0 };
	char buf[40];
	for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		rep_format_double(buf, sizeof buf, xs[i]);
		ck_assert_msg(strtod(buf, NULL) == xs[i], "%s != %.17g", buf, xs[i]);
	}
	rep_format_double(buf, sizeof buf, 500);
	ck_assert_str_eq(buf, "500");
	rep_format_double(buf, sizeof buf, 0.1);
	ck_assert_str_eq(buf, "0.1");
}
END_TEST

START_TEST(absent_metrics_stay_absent)
{
	rep_report *r = rep_new(REP_HW), *back;
	rep_variant *v;
	size_t n;
	char err[256], *json;
	double x;
	rep_set_scenario(r, &(rep_scenario){ .name = "s", .seed = 1 });
	v = rep_add_variant(r, "only");
	set_offload(v, "rdma", "gds", "none", "none");
	ck_assert_int_eq(rep_variant_set_metric(v, "tokens_per_s", 1e6), 0);
	json = to_json(r, &n);
	ck_assert_ptr_null(strstr(json, "mfu"));
	ck_assert_ptr_null(strstr(json, "iteration_s"));
	back = from_json(json, err, sizeof err);
	ck_assert_msg(back != NULL, "%s", err);
	v = rep_variant_at(back, 0);
	ck_assert(!rep_variant_metric(v, "mfu", &x));
	ck_assert(!rep_variant_metric(v, "samples_per_s", &x));
	ck_assert(rep_variant_metric(v, "tokens_per_s", &x) && x == 1e6);
	ck_assert_int_eq(rep_get_source(back), REP_HW);
	/* a formatted info value is kept whole, however long */
	{
		char want[3001];
		const char *k, *val;
		memset(want, 'x', 3000);
		want[3000] = '\0';
		ck_assert_int_eq(rep_set_infof(back, "long", "%s-%d", want, 7), 0);
		rep_info_at(back, rep_ninfo(back) - 1, &k, &val);
		ck_assert_str_eq(k, "long");
		ck_assert_uint_eq(strlen(val), 3002);
		ck_assert_str_eq(val + 3000, "-7");
		ck_assert_int_eq(rep_set_infof(back, "", "%d", 1), SIM_EINVAL);
		/* a variant's entry: key VARIANT.KEY, value whole (the two
		 * replays cut theirs at 512 and 1024 bytes before) */
		ck_assert_int_eq(rep_set_variant_infof(back, "rdma-gdr", "why", "%s-%d", want, 8), 0);
		ck_assert_ptr_nonnull(val = rep_info(back, "rdma-gdr.why"));
		ck_assert_uint_eq(strlen(val), 3002);
		ck_assert_str_eq(val + 3000, "-8");
	}
	/* the rates a vision model without a peak has: no tokens, no MFU */
	ck_assert_int_eq(rep_variant_set_rates(v, &(wl_rates){ .samples_per_s = 5,
		.tokens_per_s = NAN, .tflops_per_gpu = 1, .mfu = NAN }), 0);
	ck_assert(!rep_variant_metric(v, "mfu", &x));
	ck_assert(rep_variant_metric(v, "samples_per_s", &x) && x == 5);
	ck_assert(rep_variant_metric(v, "tokens_per_s", &x) && x == 1e6);
	/* speedup of a single variant over itself, on tokens */
	ck_assert_int_eq(rep_compute_speedup(back), 0);
	ck_assert(rep_speedup(back, "only", &x) && x == 1.0);
	free(json);
	rep_free(back);
	rep_free(r);
}
END_TEST

/* Multi-job reports ("JOB/VARIANT"): each job's variants are compared with
 * that job's first, never with another tenant; the validator agrees. */
START_TEST(speedup_is_per_job)
{
	rep_report *r = rep_new(REP_SIM);
	static const struct { const char *name; double sps; } vs[] = {
		{ "a/base", 100 }, { "a/dpu", 150 }, { "b/base", 10 }, { "b/dpu", 12 },
	};
	double x;
	char err[256];
	rep_set_version(r, "test");
	rep_set_scenario(r, &(rep_scenario){ .name = "tenants" });
	for (int i = 0; i < 4; i++) {
		rep_variant *v = rep_add_variant(r, vs[i].name);
		ck_assert_int_eq(rep_variant_set_offload(v, "network", "rdma"), 0);
		ck_assert_int_eq(rep_variant_set_offload(v, "storage", "host"), 0);
		ck_assert_int_eq(rep_variant_set_offload(v, "crypto", "none"), 0);
		ck_assert_int_eq(rep_variant_set_offload(v, "vswitch", "none"), 0);
		ck_assert_int_eq(rep_variant_set_metric(v, "samples_per_s", vs[i].sps), 0);
	}
	ck_assert_int_eq(rep_compute_speedup(r), 0);
	ck_assert(rep_speedup(r, "a/base", &x) && x == 1.0);
	ck_assert(rep_speedup(r, "a/dpu", &x) && fabs(x - 1.5) < 1e-12);
	ck_assert(rep_speedup(r, "b/base", &x) && x == 1.0);
	ck_assert(rep_speedup(r, "b/dpu", &x) && fabs(x - 1.2) < 1e-12);
	ck_assert_msg(rep_validate(r, err, sizeof err) == 0, "%s", err);
	rep_set_speedup(r, "b/dpu", 0.12); /* as if over a/base */
	ck_assert_int_ne(rep_validate(r, err, sizeof err), 0);
	rep_free(r);
}
END_TEST

START_TEST(setters_reject_bad_values)
{
	rep_report *r = rep_new(REP_SIM);
	rep_variant *v = rep_add_variant(r, "a");
	ck_assert_ptr_null(rep_add_variant(r, "a"));
	ck_assert_ptr_null(rep_add_variant(r, ""));
	ck_assert_int_eq(rep_variant_set_metric(v, "mfu", 1.5), SIM_ERANGE);
	ck_assert_int_eq(rep_variant_set_metric(v, "samples_per_s", -1), SIM_ERANGE);
	ck_assert_int_eq(rep_variant_set_metric(v, "samples_per_s", NAN), SIM_ERANGE);
	ck_assert_int_eq(rep_variant_set_metric(v, "samples_per_s", INFINITY), SIM_ERANGE);
	ck_assert_int_eq(rep_variant_set_metric(v, "sample_per_s", 1), SIM_EINVAL);
	ck_assert_int_eq(rep_variant_set_metric(v, "iteration_s", 1), SIM_EINVAL);
	ck_assert_int_eq(rep_variant_set_stat(v, "mfu", 1, NAN, NAN, NAN), SIM_EINVAL);
	ck_assert_int_eq(rep_variant_set_offload(v, "network", "tcp"), SIM_EINVAL);
	ck_assert_int_eq(rep_variant_set_offload(v, "netwrk", "rdma"), SIM_EINVAL);
	ck_assert_int_eq(rep_variant_set_breakdown(v, "idle", 1), SIM_EINVAL);
	ck_assert_int_eq(rep_variant_set_binding(v, "gradients", "nic", 1), SIM_EINVAL);
	ck_assert_int_eq(rep_variant_set_binding(v, "pipeline", "nics", 1), SIM_EINVAL);
	ck_assert_int_eq(rep_variant_set_binding(v, "pipeline", "nic", -1), SIM_ERANGE);
	ck_assert_int_eq(rep_variant_set_binding(v, "pipeline", "nic", NAN), SIM_ERANGE);
	ck_assert_int_eq(rep_variant_add_collective(v, &(rep_collective){
		.op = "allreduce", .algo = "ring", .ranks = 0 }), SIM_EINVAL);
	ck_assert_int_eq(rep_add_benchmark(r, &(rep_benchmark){
		.name = "x", .transport = "verbs", .ranks = 1, .iters = 1, .value = 1,
		.unit = "GB/s", .p50 = NAN, .p99 = NAN, .stddev = NAN }), SIM_EINVAL);
	ck_assert_int_eq(rep_set_scenario(r, &(rep_scenario){ .name = "x", .sha256 = "abc" }),
			 SIM_EINVAL);
	ck_assert_int_eq(rep_set_speedup(r, "nosuch", 1), SIM_ENOENT);
	ck_assert_int_eq(rep_compute_speedup(r), SIM_ENOENT); /* no throughput at all */
	rep_free(r);
	rep_free(NULL);
}
END_TEST

/* Expect reading `text` to fail with a message containing `want`. */
static void expect_error(const char *text, const char *want)
{
	char err[512] = "";
	rep_report *r = from_json(text, err, sizeof err);
	ck_assert_msg(r == NULL, "accepted: %s", text);
	ck_assert_msg(strstr(err, want) != NULL, "error '%s' lacks '%s'", err, want);
}

#define HEAD "{\"schema\": \"dpusim-report/1\", \"source\": \"sim\", \"version\": \"1\",\n" \
	     " \"scenario\": {\"name\": \"s\", \"seed\": 1},\n"
#define OFFL "\"offload\": {\"network\": \"rdma\", \"storage\": \"host\", " \
	     "\"crypto\": \"none\", \"vswitch\": \"none\"}"

START_TEST(reader_errors_have_line_and_column)
{
	expect_error("{\"schema\": \"dpusim-report/1\",\n  \"source\": \"sim\"\n  \"x\": 1}",
		     "t.json:3:");
	expect_error("", "t.json:1:1: empty, expected a dpusim-report/1 JSON object");
	expect_error(" \n", "t.json:1:1: only whitespace, expected a dpusim-report/1 JSON object");
	expect_error("[1, 2", "invalid JSON: flow sequence without a closing bracket");
	expect_error(HEAD " \"variants\": [],\n \"bogus\": 1}", "t.json:4:2: unknown key 'bogus'");
	expect_error(HEAD " \"variants\": [{\"name\": \"a\", " OFFL ",\n  \"metrics\": "
		     "{\"mfu\": 2}}]}", "t.json:4:22: 'mfu' = 2 is out of range");
	expect_error(HEAD " \"variants\": [{\"name\": \"a\", " OFFL ",\n  \"metrics\": "
		     "{\"samples_per_s\": \"9\"}}]}", "t.json:4:32: 'samples_per_s' must be a number");
	expect_error(HEAD " \"variants\": [{\"name\": \"a\", " OFFL ",\n  \"metrics\": "
		     "{\"mfu\": 0.1, \"mfu\": 0.2}}]}", "t.json:4:");
	expect_error(HEAD " \"variants\": [{\"name\": \"a\", " OFFL ",\n  \"metrics\": "
		     "{\"flops\": 1}}]}", "unknown metric 'flops'");
	expect_error(HEAD " \"variants\": [{\"name\": \"a\", \"offload\": {\"network\": \"tcp\"},"
		     " \"metrics\": {}}]}", "unknown network offload 'tcp'");
	expect_error(HEAD " \"variants\": [], \"speedup\": {\"x\": 1}}",
		     "speedup for unknown variant 'x'");
	expect_error("{\"schema\": \"dpusim-report/9\", \"source\": \"sim\", \"version\": \"1\","
		     " \"scenario\": {\"name\": \"s\", \"seed\": 1}, \"variants\": []}",
		     "t.json:1:12: unsupported schema 'dpusim-report/9'");
}
END_TEST

/* A measured collective row (dpusim-hw replay) carries its calls and their
 * spread around time_s, the median; a simulated row carries none and
 * writes none; a spread not ordered around the median, or a count of 0
 * given, is refused. */
START_TEST(collective_spread)
{
	rep_report *r = sample(), *back;
	size_t n;
	char err[256] = "", *a = to_json(r, &n);
	const rep_collective *c;
	rep_variant *v = rep_add_variant(r, "sim");
	ck_assert_ptr_nonnull(strstr(a, "\"calls\": 20"));
	ck_assert_ptr_nonnull(strstr(a, "\"time_p10_s\": 1.1e-07"));
	back = from_json(a, err, sizeof err);
	ck_assert_msg(back != NULL, "%s", err);
	c = rep_variant_collective(rep_variant_at(back, 0), 0);
	ck_assert(c->calls == 20 && c->time_min_s == 1.0e-7 && c->time_p10_s == 1.1e-7 &&
		  c->time_p90_s == 1.5e-7 && c->time_s == 1.25e-7);
	free(a);
	rep_free(back);
	/* a row without them writes none of the four keys */
	ck_assert_int_eq(rep_variant_add_collective(v, &(rep_collective){
		.op = "allreduce", .algo = "ring", .ranks = 2, .bytes = 4, .time_s = 1,
		.algbw_GBps = 4e-9, .busbw_GBps = 4e-9, .time_min_s = NAN, .time_p10_s = NAN,
		.time_p90_s = NAN }), 0);
	a = to_json(r, &n);
	ck_assert_ptr_null(strstr(strstr(a, "\"name\": \"sim\""), "calls"));
	ck_assert_ptr_null(strstr(strstr(a, "\"name\": \"sim\""), "time_p"));
	free(a);
	/* p10 above the median, p90 below it, min above p10, a negative min */
	double bad[][3] = { { NAN, 2, NAN }, { NAN, NAN, 0.5 }, { 0.9, 0.8, 2 }, { -1, NAN, NAN } };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_int_eq(rep_variant_add_collective(v, &(rep_collective){
			.op = "allreduce", .algo = "ring", .ranks = 2, .bytes = 4, .time_s = 1,
			.algbw_GBps = 4e-9, .busbw_GBps = 4e-9, .calls = 3, .time_min_s = bad[i][0],
			.time_p10_s = bad[i][1], .time_p90_s = bad[i][2] }), SIM_ERANGE);
	rep_free(r);
	expect_error(HEAD " \"variants\": [{\"name\": \"a\", " OFFL ", \"metrics\": {},\n"
		     "  \"collectives\": [{\"op\": \"allreduce\", \"algo\": \"ring\", \"ranks\": 2, "
		     "\"bytes\": 4, \"time_s\": 1, \"algbw_GBps\": 1, \"busbw_GBps\": 1, "
		     "\"calls\": 0}]}]}", "t.json:4:135: 'calls' must be at least 1 when given");
	expect_error(HEAD " \"variants\": [{\"name\": \"a\", " OFFL ", \"metrics\": {},\n"
		     "  \"collectives\": [{\"op\": \"allreduce\", \"algo\": \"ring\", \"ranks\": 2, "
		     "\"bytes\": 4, \"time_s\": 1, \"algbw_GBps\": 1, \"busbw_GBps\": 1, "
		     "\"time_p10_s\": 2}]}]}", "a spread not ordered time_min_s <= time_p10_s");
}
END_TEST

START_TEST(validator_catches_missing_keys)
{
	rep_report *r = rep_new(REP_SIM);
	rep_variant *v;
	char err[256];
	expect_error("{\"schema\": \"dpusim-report/1\", \"source\": \"sim\", \"version\": \"1\","
		     " \"variants\": []}", "lacks required key 'scenario'");
	expect_error(HEAD " \"variants\": [{\"name\": \"a\", \"metrics\": {}}]}",
		     "lacks required key 'offload'");
	expect_error(HEAD " \"variants\": [{\"name\": \"a\", \"offload\": {}, \"metrics\": {}}]}",
		     "variants[0].offload: missing 'network'");
	expect_error(HEAD " \"variants\": []}", "variants: no variant and no benchmark");
	ck_assert_int_eq(rep_validate(r, err, sizeof err), SIM_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "scenario: missing"));
	rep_set_scenario(r, &(rep_scenario){ .name = "s" });
	v = rep_add_variant(r, "a");
	set_offload(v, "rdma", "host", "none", "none");
	ck_assert_int_eq(rep_validate(r, err, sizeof err), 0);
	rep_variant_set_breakdown(v, "compute", 0.5);
	ck_assert_int_eq(rep_validate(r, err, sizeof err), SIM_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "without metrics.iteration_s"));
	rep_variant_set_stat(v, "iteration_s", 0.6, 0.7, 0.65, NAN);
	ck_assert_int_eq(rep_validate(r, err, sizeof err), SIM_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "p50 0.7 > p99 0.65"));
	rep_variant_set_stat(v, "iteration_s", 0.6, NAN, NAN, NAN);
	ck_assert_int_eq(rep_validate(r, err, sizeof err), SIM_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "variants[0].breakdown_s: components sum to 0.5 s"));
	rep_variant_set_breakdown(v, "other", 0.1);
	ck_assert_int_eq(rep_validate(r, err, sizeof err), 0);
	/* a speedup that is not the throughput ratio */
	v = rep_add_variant(r, "b");
	set_offload(v, "rdma", "host", "none", "none");
	rep_variant_set_stat(v, "iteration_s", 0.3, NAN, NAN, NAN);
	ck_assert_int_eq(rep_set_speedup(r, "b", 1.5), 0);
	ck_assert_int_eq(rep_validate(r, err, sizeof err), SIM_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "speedup.b: 1.5, but the throughput ratio over 'a' is 2"));
	ck_assert_int_eq(rep_compute_speedup(r), 0);
	ck_assert_int_eq(rep_validate(r, err, sizeof err), 0);
	rep_free(r);
}
END_TEST

START_TEST(file_write_is_atomic)
{
	char dir[] = "/tmp/test_report.XXXXXX", path[256], err[256];
	rep_report *r = sample(), *back = NULL;
	struct stat st;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/r.json", dir);
	ck_assert_int_eq(rep_write_file(r, path, err, sizeof err), 0);
	ck_assert_int_eq(rep_read_file(path, &back, err, sizeof err), 0);
	rep_free(back);
	/* a missing folder: error, nothing created */
	snprintf(path, sizeof path, "%s/no/r.json", dir);
	ck_assert_int_eq(rep_write_file(r, path, err, sizeof err), SIM_EIO);
	ck_assert_ptr_nonnull(strstr(err, "cannot create"));
	/* a folder in the way of the rename: error, and no temporary left */
	snprintf(path, sizeof path, "%s/d", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(rep_write_file(r, path, err, sizeof err), SIM_EIO);
	ck_assert_int_eq(rmdir(path), 0);
	snprintf(path, sizeof path, "%s/r.json", dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(dir), 0); /* fails if a temporary was left behind */
	ck_assert_int_eq(rep_read_file(path, &back, err, sizeof err), SIM_EIO);
	ck_assert_ptr_null(back);
	ck_assert(stat(path, &st) != 0);
	rep_free(r);
}
END_TEST

START_TEST(fixtures_are_valid)
{
	static const char *const files[] = { "tests/data/report-sim.json",
					     "tests/data/report-hw.json",
					     "tests/data/report-bench.json" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		rep_report *r = NULL;
		char err[512] = "";
		ck_assert_msg(rep_read_file(files[i], &r, err, sizeof err) == 0, "%s", err);
		ck_assert_int_eq(rep_validate(r, err, sizeof err), 0);
		rep_free(r);
	}
}
END_TEST

/* sample() without assertions: the first error, or 0 with *out set. */
static int build_all(rep_report **out)
{
	rep_report *r = rep_new(REP_SIM);
	rep_variant *v;
	int err;
	*out = NULL;
	if (!r)
		return SIM_ENOMEM;
	if ((err = rep_set_scenario(r, &(rep_scenario){ .name = "s", .file = "f", .seed = 1,
							.point = "a=1" })) ||
	    (err = rep_set_info(r, "host", "h")) || (err = rep_set_version(r, "9")))
		goto out;
	for (int i = 0; i < 6; i++) {
		char name[16];
		snprintf(name, sizeof name, "v%d", i);
		if (!(v = rep_add_variant(r, name))) {
			err = SIM_ENOMEM;
			goto out;
		}
		if ((err = rep_variant_set_offload(v, "network", "rdma")) ||
		    (err = rep_variant_set_offload(v, "storage", "gds")) ||
		    (err = rep_variant_set_offload(v, "crypto", "none")) ||
		    (err = rep_variant_set_offload(v, "vswitch", "none")) ||
		    (err = rep_variant_set_metric(v, "samples_per_s", 100.0 + i)) ||
		    (err = rep_variant_add_collective(v, &(rep_collective){
			     .op = "allgather", .algo = "ring", .ranks = 4, .bytes = 8,
			     .time_s = 1, .algbw_GBps = 1, .busbw_GBps = 1, .time_min_s = NAN,
			     .time_p10_s = NAN, .time_p90_s = NAN })))
			goto out;
	}
	for (int i = 0; i < 6 && !err; i++)
		err = rep_add_benchmark(r, &(rep_benchmark){
			.name = "tcp_bw", .transport = "tcp", .device = "eth0", .bytes = 64,
			.ranks = 2, .iters = 1, .value = 1, .unit = "B/s", .p50 = NAN, .p99 = NAN,
			.stddev = NAN });
	if (!err)
		err = rep_compute_speedup(r);
out:
	if (err)
		rep_free(r);
	else
		*out = r;
	return err;
}

/* Every allocation of building and of reading back fails in turn: each
 * failure is SIM_ENOMEM (or NULL), never a crash or a leak (LeakSanitizer
 * checks the forked test at exit in the sanitizer build). */
START_TEST(allocation_failures_are_clean)
{
	rep_report *full, *r;
	size_t n;
	char *json, err[256];
	long k;
	ck_assert_int_eq(build_all(&full), 0);
	json = to_json(full, &n);
	for (k = 0;; k++) {
		int rc;
		rep_test_fail_alloc_after(k);
		rc = build_all(&r);
		rep_test_fail_alloc_after(-1);
		ck_assert_msg(rc == 0 || rc == SIM_ENOMEM, "budget %ld: %s", k, sim_errname(rc));
		rep_free(r);
		if (rc == 0)
			break;
	}
	ck_assert_int_gt(k, 30); /* every allocation site was reached */
	for (k = 0;; k++) {
		char *again;
		size_t m;
		int rc;
		rep_test_fail_alloc_after(k);
		rc = rep_read_string("t.json", json, n, &r, err, sizeof err);
		rep_test_fail_alloc_after(-1);
		ck_assert_msg(rc == 0 || rc == SIM_ENOMEM, "budget %ld: %s %s", k,
			      sim_errname(rc), err);
		if (rc)
			continue;
		again = to_json(r, &m);
		ck_assert_str_eq(again, json);
		free(again);
		rep_free(r);
		break;
	}
	free(json);
	rep_free(full);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, round_trip_is_identical);
	tcase_add_test(tc, byte_identical_twice);
	tcase_add_test(tc, variant_copy_is_whole);
	tcase_add_test(tc, numbers_round_trip);
	tcase_add_test(tc, absent_metrics_stay_absent);
	tcase_add_test(tc, speedup_is_per_job);
	tcase_add_test(tc, setters_reject_bad_values);
	tcase_add_test(tc, reader_errors_have_line_and_column);
	tcase_add_test(tc, collective_spread);
	tcase_add_test(tc, validator_catches_missing_keys);
	tcase_add_test(tc, file_write_is_atomic);
	tcase_add_test(tc, fixtures_are_valid);
	tcase_add_test(tc, allocation_failures_are_clean);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
