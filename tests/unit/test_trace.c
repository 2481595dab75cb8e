/* tools/trace: tracks and spans written as Chrome trace-event JSON, parsed
 * back with libfyaml (names, pids/tids, times in microseconds, escaping),
 * bad spans refused, atomic writes, deterministic output. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libfyaml.h>

#include "sim/err.h"
#include "tools/trace.h"
#include "tests/unit/check_main.h"
#include "tests/unit/fixture.h"

static char dir[64], path[128];

static void setup(void)
{
	fx_tmpdir(dir, sizeof dir, "test_trace");
	snprintf(path, sizeof path, "%s/t.json", dir);
}

static void teardown(void)
{
	fx_rmdir(dir);
}

/* Writes t to path and parses it back as JSON; returns the document. */
static struct fy_document *write_and_parse(const trace *t)
{
	char err[256] = "";
	struct fy_parse_cfg cfg = { .flags = FYPCF_QUIET | FYPCF_JSON_FORCE };
	struct fy_document *doc;
	ck_assert_msg(trace_write_file(t, path, err, sizeof err) == 0, "%s", err);
	doc = fy_document_build_from_file(&cfg, path);
	ck_assert_msg(doc != NULL, "%s does not parse as JSON", path);
	return doc;
}

static struct fy_node *events(struct fy_document *doc)
{
	struct fy_node *ev = fy_node_by_path(fy_document_root(doc), "/traceEvents", (size_t)-1,
					     FYNWF_DONT_FOLLOW);
	ck_assert_ptr_nonnull(ev);
	ck_assert(fy_node_is_sequence(ev));
	return ev;
}

static const char *str(struct fy_node *ev, const char *key)
{
	struct fy_node *n = fy_node_mapping_lookup_by_string(ev, key, strlen(key));
	return n && fy_node_is_scalar(n) ? fy_node_get_scalar0(n) : NULL;
}

static double num(struct fy_node *ev, const char *key)
{
	const char *s = str(ev, key);
	ck_assert_msg(s != NULL, "event lacks '%s'", key);
	return strtod(s, NULL);
}

/* The metadata event `what` for (pid, tid) (tid -1: any): its args value. */
static const char *meta(struct fy_document *doc, const char *what, int pid, int tid)
{
	void *it = NULL;
	struct fy_node *ev;
	while ((ev = fy_node_sequence_iterate(events(doc), &it))) {
		if (strcmp(str(ev, "ph"), "M") || strcmp(str(ev, "name"), what) ||
		    (int)num(ev, "pid") != pid || (tid >= 0 && (int)num(ev, "tid") != tid))
			continue;
		struct fy_node *args = fy_node_mapping_lookup_by_string(ev, "args", 4);
		struct fy_node_pair *p = fy_node_mapping_get_by_index(args, 0);
		return fy_node_get_scalar0(fy_node_pair_value(p));
	}
	return NULL;
}

static int count_ph(struct fy_document *doc, const char *ph)
{
	void *it = NULL;
	struct fy_node *ev;
	int n = 0;
	while ((ev = fy_node_sequence_iterate(events(doc), &it)))
		n += !strcmp(str(ev, "ph"), ph);
	return n;
}

START_TEST(empty_trace_is_valid_json)
{
	trace *t = trace_new();
	struct fy_document *doc = write_and_parse(t);
	ck_assert_int_eq(fy_node_sequence_item_count(events(doc)), 0);
	fy_document_destroy(doc);
	trace_free(t);
	trace_free(NULL);
}
END_TEST

START_TEST(tracks_are_named_and_grouped)
{
	trace *t = trace_new();
	int gpu3, host1, dpu1, link;
	ck_assert_int_eq(trace_host(t, 0), 0);
	ck_assert_int_eq(trace_gpu(t, 0, 0), 1);
	gpu3 = trace_gpu(t, 1, 3);
	host1 = trace_host(t, 1);
	dpu1 = trace_dpu(t, 1);
	link = trace_link(t, "leaf 0 uplinks");
	ck_assert_int_eq(gpu3, 2);
	ck_assert_int_eq(link, 5);
	ck_assert_int_eq(trace_gpu(t, 1, 3), gpu3);         /* idempotent */
	ck_assert_int_eq(trace_link(t, "leaf 0 uplinks"), link);
	ck_assert_int_eq(trace_gpu(t, 0, 3), SIM_EEXIST);   /* GPU 3 lives in node 1 */
	ck_assert_int_eq(trace_gpu(t, -1, 0), SIM_EINVAL);
	ck_assert_int_eq(trace_link(t, ""), SIM_EINVAL);
	ck_assert_uint_eq(trace_ntracks(t), 6);

	struct fy_document *doc = write_and_parse(t);
	ck_assert_str_eq(meta(doc, "process_name", 1, -1), "node 0");
	ck_assert_str_eq(meta(doc, "process_name", 2, -1), "node 1");
	ck_assert_str_eq(meta(doc, "process_name", 0, -1), "fabric");
	ck_assert_str_eq(meta(doc, "process_sort_index", 0, -1), "2");  /* after the nodes */
	ck_assert_str_eq(meta(doc, "thread_name", 1, 1), "host CPU");
	ck_assert_str_eq(meta(doc, "thread_name", 1, 2), "GPU 0");
	ck_assert_str_eq(meta(doc, "thread_name", 2, gpu3 + 1), "GPU 3");
	ck_assert_str_eq(meta(doc, "thread_name", 2, host1 + 1), "host CPU");
	ck_assert_str_eq(meta(doc, "thread_name", 2, dpu1 + 1), "DPU");
	ck_assert_str_eq(meta(doc, "thread_name", 0, link + 1), "leaf 0 uplinks");
	/* inside a node: host CPU, DPU, then GPUs by number */
	ck_assert_str_eq(meta(doc, "thread_sort_index", 2, host1 + 1), "0");
	ck_assert_str_eq(meta(doc, "thread_sort_index", 2, dpu1 + 1), "1");
	ck_assert_str_eq(meta(doc, "thread_sort_index", 2, gpu3 + 1), "5");
	ck_assert_int_eq(count_ph(doc, "M"), 3 * 2 + 6 * 2);
	ck_assert_int_eq(count_ph(doc, "X"), 0);
	fy_document_destroy(doc);
	trace_free(t);
}
END_TEST

/* The spans come back with their track's pid/tid, category, name and
 * times in microseconds. */
START_TEST(spans_round_trip)
{
	trace *t = trace_new();
	int g = trace_gpu(t, 0, 0), l = trace_link(t, "rail 0");
	const char *odd = "all-reduce \"grads\" \\ bucket\t3";
	ck_assert_int_eq(trace_span(t, g, 0, 1.5e-3, TRACE_COMPUTE, "forward"), 0);
	ck_assert_int_eq(trace_span(t, g, 1.5e-3, 2.5e-6, TRACE_STALL, "data wait"), 0);
	ck_assert_int_eq(trace_span(t, l, 2e-3, 1e-12, TRACE_COMM, odd), 0);
	ck_assert_int_eq(trace_span(t, g, 12.25, 0, TRACE_DATA, "h2d copy"), 0);
	ck_assert_uint_eq(trace_nspans(t), 4);

	struct fy_document *doc = write_and_parse(t);
	struct fy_node *ev = events(doc), *x[4];
	void *it = NULL;
	int n = 0;
	struct fy_node *e;
	while ((e = fy_node_sequence_iterate(ev, &it)))
		if (!strcmp(str(e, "ph"), "X"))
			x[n++] = e;
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(str(x[0], "name"), "forward");
	ck_assert_str_eq(str(x[0], "cat"), "compute");
	ck_assert_double_eq_tol(num(x[0], "ts"), 0, 1e-9);
	ck_assert_double_eq_tol(num(x[0], "dur"), 1500, 1e-9);
	ck_assert_int_eq((int)num(x[0], "pid"), 1);
	ck_assert_int_eq((int)num(x[0], "tid"), g + 1);
	ck_assert_str_eq(str(x[1], "cat"), "stall");
	ck_assert_double_eq_tol(num(x[1], "ts"), 1500, 1e-9);
	ck_assert_double_eq_tol(num(x[1], "dur"), 2.5, 1e-9);
	ck_assert_str_eq(str(x[2], "name"), odd);
	ck_assert_str_eq(str(x[2], "cat"), "comm");
	ck_assert_double_eq_tol(num(x[2], "dur"), 1e-6, 1e-12);      /* a picosecond */
	ck_assert_int_eq((int)num(x[2], "pid"), 0);
	ck_assert_int_eq((int)num(x[2], "tid"), l + 1);
	ck_assert_str_eq(str(x[3], "cat"), "data");
	ck_assert_double_eq_tol(num(x[3], "ts"), 12.25e6, 1e-6);
	fy_document_destroy(doc);
	trace_free(t);
}
END_TEST

START_TEST(bad_spans_are_refused)
{
	trace *t = trace_new();
	int g = trace_gpu(t, 0, 0);
	ck_assert_int_eq(trace_span(t, g + 1, 0, 1, TRACE_COMPUTE, "x"), SIM_ENOENT);
	ck_assert_int_eq(trace_span(t, -1, 0, 1, TRACE_COMPUTE, "x"), SIM_ENOENT);
	ck_assert_int_eq(trace_span(t, g, -1e-9, 1, TRACE_COMPUTE, "x"), SIM_ERANGE);
	ck_assert_int_eq(trace_span(t, g, 0, -1, TRACE_COMPUTE, "x"), SIM_ERANGE);
	ck_assert_int_eq(trace_span(t, g, NAN, 1, TRACE_COMPUTE, "x"), SIM_ERANGE);
	ck_assert_int_eq(trace_span(t, g, 0, INFINITY, TRACE_COMPUTE, "x"), SIM_ERANGE);
	ck_assert_int_eq(trace_span(t, g, 0, 1, (trace_cat)7, "x"), SIM_EINVAL);
	ck_assert_int_eq(trace_span(t, g, 0, 1, TRACE_COMPUTE, ""), SIM_EINVAL);
	ck_assert_int_eq(trace_span(t, g, 0, 1, TRACE_COMPUTE, NULL), SIM_EINVAL);
	ck_assert_uint_eq(trace_nspans(t), 0);
	ck_assert_ptr_null(trace_cat_name((trace_cat)4));
	trace_free(t);
}
END_TEST

/* Thousands of tracks (the table grows many times) keep distinct ids, and
 * re-declaring finds each again. */
START_TEST(many_tracks)
{
	trace *t = trace_new();
	for (int g = 0; g < 4096; g++)
		ck_assert_int_eq(trace_gpu(t, g / 8, g), g);
	for (int g = 4095; g >= 0; g--)
		ck_assert_int_eq(trace_gpu(t, g / 8, g), g);
	for (int n = 0; n < 512; n++)
		ck_assert_int_eq(trace_host(t, n), 4096 + n);
	ck_assert_int_eq(trace_host(t, 7), 4096 + 7);
	ck_assert_uint_eq(trace_ntracks(t), 4096 + 512);
	for (int i = 0; i < 20000; i++)
		ck_assert_int_eq(trace_span(t, i % 4096, i * 1e-6, 1e-6, TRACE_COMPUTE, "k"), 0);
	struct fy_document *doc = write_and_parse(t);
	ck_assert_int_eq(count_ph(doc, "X"), 20000);
	ck_assert_int_eq(count_ph(doc, "M"), 2 * 512 + 2 * (4096 + 512));
	fy_document_destroy(doc);
	trace_free(t);
}
END_TEST

static char *slurp(const char *p)
{
	FILE *f = fopen(p, "r");
	char *buf = calloc(1, 1 << 16);
	ck_assert_ptr_nonnull(f);
	ck_assert(fread(buf, 1, (1 << 16) - 1, f) < (1 << 16) - 1);
	fclose(f);
	return buf;
}

START_TEST(output_is_deterministic)
{
	trace *t = trace_new();
	int h = trace_host(t, 2), d = trace_dpu(t, 2);
	char err[256];
	ck_assert_int_eq(trace_span(t, h, 0.1, 0.2, TRACE_DATA, "decode"), 0);
	ck_assert_int_eq(trace_span(t, d, 0.3, 1.0 / 3.0, TRACE_COMM, "ipsec"), 0);
	ck_assert_int_eq(trace_write_file(t, path, err, sizeof err), 0);
	char *a = slurp(path);
	ck_assert_int_eq(trace_write_file(t, path, err, sizeof err), 0);
	char *b = slurp(path);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(a, "\"ts\":300000,\"dur\":333333.333333,"));
	free(a);
	free(b);
	trace_free(t);
}
END_TEST

/* A write that cannot be renamed into place (the target is a folder)
 * fails, names the path and leaves no temporary behind. */
START_TEST(failed_write_leaves_nothing)
{
	trace *t = trace_new();
	char err[256] = "", bad[160];
	DIR *dd;
	struct dirent *de;
	int entries = 0;
	ck_assert_int_eq(trace_span(t, trace_gpu(t, 0, 0), 0, 1, TRACE_COMPUTE, "k"), 0);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(trace_write_file(t, path, err, sizeof err), SIM_EIO);
	ck_assert_msg(strstr(err, path) != NULL, "error '%s' does not name the path", err);
	ck_assert_ptr_nonnull(dd = opendir(dir));
	while ((de = readdir(dd)))
		entries += de->d_name[0] != '.';
	closedir(dd);
	ck_assert_int_eq(entries, 1);   /* only the folder itself */
	snprintf(bad, sizeof bad, "%s/no/such/dir/t.json", dir);
	ck_assert_int_eq(trace_write_file(t, bad, err, sizeof err), SIM_EIO);
	ck_assert_ptr_nonnull(strstr(err, "cannot create"));
	trace_free(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, empty_trace_is_valid_json);
	tcase_add_test(tc, tracks_are_named_and_grouped);
	tcase_add_test(tc, spans_round_trip);
	tcase_add_test(tc, bad_spans_are_refused);
	tcase_add_test(tc, many_tracks);
	tcase_add_test(tc, output_is_deterministic);
	tcase_add_test(tc, failed_write_leaves_nothing);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
