/* tools/sweep: message headers, point labels, the plan (resume and shards),
 * a worker's message stored by the coordinator, failed and garbled points
 * stored as nothing, and the --jobs driver storing every point once. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "report/db.h"
#include "tools/sweep.h"
#include "tests/unit/check_main.h"
#include "tests/unit/fixture.h"

#define SCN "tests/data/sweep-small.yaml"

static char dir[64], path[128];
static scn_scenario *scn;
static sweep c;

static void setup(void)
{
	char err[256] = "";
	fx_tmpdir(dir, sizeof dir, "test_sweep");
	snprintf(path, sizeof path, "%s/s.db", dir);
	scn = fx_load_file(SCN);
	c = (sweep){ .file = SCN, .s = scn, .db_path = path };
	ck_assert_int_eq(sweep_hash_file(&c), 0);
	ck_assert_msg(db_open(path, &c.d, err, sizeof err) == 0, "%s", err);
}

static void teardown(void)
{
	db_close(c.d);
	free(c.todo);
	free(c.text);
	scn_free(scn);
	fx_rmdir(dir);
}

START_TEST(headers)
{
	long p;
	int st;
	size_t len;
	ck_assert_int_eq(sweep_parse_header("dpusim-sweep/1 7 0 1234\n", &p, &st, &len), 0);
	ck_assert_int_eq(p, 7);
	ck_assert_int_eq(st, 0);
	ck_assert_uint_eq(len, 1234);
	ck_assert_int_eq(sweep_parse_header("dpusim-sweep/1 -1 -1009 5\n", &p, &st, &len), 0);
	ck_assert_int_eq(p, -1);
	ck_assert_int_eq(sweep_parse_header("dpusim-sweep/1 -2 0 5\n", &p, &st, &len), SIM_EPARSE);
	ck_assert_int_eq(sweep_parse_header("dpusim-sweep/2 1 0 5\n", &p, &st, &len), SIM_EPARSE);
	ck_assert_int_eq(sweep_parse_header("dpusim-sweep/1 1 0 5", &p, &st, &len), SIM_EPARSE);
	ck_assert_int_eq(sweep_parse_header("dpusim-sweep/1 1 0\n", &p, &st, &len), SIM_EPARSE);
	ck_assert_int_eq(sweep_parse_header("dpusim-sweep/1 1 0 5x\n", &p, &st, &len), SIM_EPARSE);
	ck_assert_int_eq(sweep_parse_header("", &p, &st, &len), SIM_EPARSE);
}
END_TEST

START_TEST(labels_and_hash)
{
	char label[256];
	ck_assert_uint_eq(scn->sweep.points, 8);
	sweep_label(&c, 0, label, sizeof label);
	ck_assert_str_eq(label, "cluster.nodes=2,workload.collective.algo=ring");
	sweep_label(&c, 7, label, sizeof label);
	ck_assert_str_eq(label, "cluster.nodes=16,workload.collective.algo=tree");
	ck_assert_uint_eq(strlen(c.sha256), 64);
	ck_assert_uint_eq(strspn(c.sha256, "0123456789abcdef"), 64);
}
END_TEST

/* Parses a worker's message and hands it to the coordinator. */
static int deliver(size_t point, const char *msg, size_t len)
{
	long p;
	int st;
	size_t blen;
	const char *body = strchr(msg, '\n') + 1;
	ck_assert_int_eq(sweep_parse_header(msg, &p, &st, &blen), 0);
	ck_assert_int_eq(p, (long)point);
	ck_assert_uint_eq(blen, len - (size_t)(body - msg));
	return sweep_accept_msg(&c, point, st, body, blen);
}

/* A worker's message is stored as the run of its point, labelled and
 * indexed; a second plan skips it. */
START_TEST(message_stored_and_skipped)
{
	char *msg = NULL, err[256] = "";
	size_t len = 0;
	rep_report *r = NULL;
	ck_assert_int_eq(sweep_compute_msg(&c, 5, &msg, &len), 0);
	ck_assert_int_eq(deliver(5, msg, len), 0);
	free(msg);
	ck_assert_uint_eq(c.done, 1);
	ck_assert_int_eq(db_count(c.d, "runs"), 1);
	ck_assert_int_eq(db_count(c.d, "collectives"), 6);
	ck_assert_int_eq(db_load_report(c.d, 1, &r, err, sizeof err), 0);
	ck_assert_str_eq(rep_get_scenario(r)->point, "cluster.nodes=8,workload.collective.algo=tree");
	ck_assert_str_eq(rep_get_scenario(r)->sha256, c.sha256);
	ck_assert_uint_eq(rep_get_scenario(r)->seed, 7);
	ck_assert_ptr_nonnull(rep_info(r, "sweep_index"));
	ck_assert_str_eq(rep_info(r, "sweep_index"), "5");
	rep_free(r);
	ck_assert_int_eq(sweep_plan(&c, 0, 1), 0);
	ck_assert_uint_eq(c.skipped, 1);
	ck_assert_uint_eq(c.ntodo, 7);
	for (size_t k = 0; k < c.ntodo; k++)
		ck_assert_uint_ne(c.todo[k], 5);
}
END_TEST

START_TEST(shards_partition)
{
	ck_assert_int_eq(sweep_plan(&c, 1, 3), 0);
	ck_assert_uint_eq(c.ntodo, 3);
	ck_assert_uint_eq(c.todo[0], 1);
	ck_assert_uint_eq(c.todo[1], 4);
	ck_assert_uint_eq(c.todo[2], 7);
	c.ro = (run_opts){ .has_seed = true, .seed = 9 };
	free(c.todo);
	c.ntodo = 0;
	ck_assert_int_eq(sweep_plan(&c, 0, 1), 0);
	ck_assert_uint_eq(c.ntodo, 8);
}
END_TEST

/* A failed point's message (the error text) and a garbled report are
 * counted as failed and store nothing. */
START_TEST(failures_store_nothing)
{
	static const char bad[] = "{\"schema\": \"dpusim-report/1\"";
	ck_assert_int_eq(sweep_accept_msg(&c, 2, SIM_EUNSUPPORTED, "no such thing\n", 14), 0);
	ck_assert_int_eq(sweep_accept_msg(&c, 3, 0, bad, sizeof bad - 1), 0);
	ck_assert_uint_eq(c.failed, 2);
	ck_assert_uint_eq(c.done, 0);
	ck_assert_int_eq(db_count(c.d, "runs"), 0);
}
END_TEST

/* Three forked workers store every point exactly once, the same as a
 * serial run of the same points. */
START_TEST(jobs_store_each_point_once)
{
	sweep serial;
	char spath[160], err[256] = "";
	ck_assert_int_eq(sweep_plan(&c, 0, 1), 0);
	ck_assert_int_eq(sweep_run_jobs(&c, 3), 0);
	ck_assert_uint_eq(c.done, 8);
	ck_assert_uint_eq(c.failed, 0);
	ck_assert_int_eq(db_count(c.d, "runs"), 8);
	ck_assert_int_eq(db_count(c.d, "variants"), 16);
	ck_assert_int_eq(db_count(c.d, "collectives"), 48);
	/* the serial driver on the first two points, into another database */
	snprintf(spath, sizeof spath, "%s/serial.db", dir);
	serial = (sweep){ .file = SCN, .s = scn, .db_path = spath, .text = c.text };
	memcpy(serial.sha256, c.sha256, sizeof c.sha256);
	ck_assert_int_eq(db_open(spath, &serial.d, err, sizeof err), 0);
	ck_assert_int_eq(sweep_plan(&serial, 0, 4), 0);
	ck_assert_int_eq(sweep_run_serial(&serial), 0);
	ck_assert_uint_eq(serial.done, 2);
	ck_assert_int_eq(db_count(serial.d, "collectives"), 12);
	db_close(serial.d);
	free(serial.todo);
}
END_TEST

/* Two sweeps of one scenario into one database, both planned before
 * either stored anything (as when two start at once): each point is stored
 * once, and the second sweep counts the points it finds stored as skipped.
 * Once, every point was stored twice. */
START_TEST(two_sweeps_store_each_point_once)
{
	sweep other = { .file = SCN, .s = scn, .db_path = path, .text = c.text };
	char err[256] = "";
	memcpy(other.sha256, c.sha256, sizeof c.sha256);
	ck_assert_int_eq(db_open(path, &other.d, err, sizeof err), 0);
	ck_assert_int_eq(sweep_plan(&c, 0, 4), 0);
	ck_assert_int_eq(sweep_plan(&other, 0, 4), 0);
	ck_assert_uint_eq(other.ntodo, 2);
	ck_assert_int_eq(sweep_run_serial(&c), 0);
	ck_assert_int_eq(sweep_run_serial(&other), 0);
	ck_assert_uint_eq(c.done, 2);
	ck_assert_uint_eq(other.done, 0);
	ck_assert_uint_eq(other.late, 2);
	ck_assert_uint_eq(other.failed, 0);
	ck_assert_int_eq(db_count(c.d, "runs"), 2);
	ck_assert_int_eq(db_count(c.d, "collectives"), 12);
	db_close(other.d);
	free(other.todo);
}
END_TEST

/* Points whose values are lists and mappings get distinct labels, the
 * values' canonical text (sorted keys, "1.0us" as "1us"), and a plan over
 * a database holding one of them skips that one only. They were all
 * "...=a list,...=a mapping": resume skipped points never computed. */
START_TEST(value_labels_distinct)
{
	scn_scenario *v = fx_load_file("tests/data/sweep-values.yaml");
	sweep w = { .file = "tests/data/sweep-values.yaml", .s = v, .db_path = path, .d = c.d };
	char label[4][SWEEP_LABEL_MAX], spaced[SWEEP_LABEL_MAX];
	rep_report *r = NULL;
	diag *d = diag_new();
	ck_assert_uint_eq(v->sweep.points, 4);
	for (size_t i = 0; i < 4; i++) {
		sweep_label(&w, i, label[i], sizeof label[i]);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(label[i], label[j]);
	}
	ck_assert_str_eq(label[0], "cluster.nodes=2,workload.collective.algo=ring,"
			 "workload.collective.sizes=[64KiB],"
			 "cluster.nic={profile: ConnectX-6-HDR, rdma_latency: 1us}");
	ck_assert_str_eq(label[3], "cluster.nodes=2,workload.collective.algo=ring,"
			 "workload.collective.sizes=[64KiB, 1MiB],"
			 "cluster.nic={profile: ConnectX-6-HDR, rdma_latency: 1.5us}");
	/* check's messages name points the same way, joined by spaces */
	ck_assert_str_eq(scn_sweep_label(v, 1, spaced, sizeof spaced),
			 "cluster.nodes=2 workload.collective.algo=ring "
			 "workload.collective.sizes=[64KiB] "
			 "cluster.nic={profile: ConnectX-6-HDR, rdma_latency: 1.5us}");
	ck_assert_int_eq(sweep_hash_file(&w), 0);
	ck_assert_int_eq(sweep_compute(&w, 2, &r, d), 0);
	ck_assert_str_eq(rep_get_scenario(r)->point, label[2]);
	ck_assert_int_eq(db_store_report(c.d, r, NULL, NULL, NULL, NULL, 0), 0);
	ck_assert_int_eq(sweep_plan(&w, 0, 1), 0);
	ck_assert_uint_eq(w.skipped, 1);
	ck_assert_uint_eq(w.ntodo, 3);
	ck_assert(w.todo[0] == 0 && w.todo[1] == 1 && w.todo[2] == 3);
	rep_free(r);
	diag_free(d);
	free(w.todo);
	free(w.text);
	scn_free(v);
}
END_TEST

/* The default point timeout is generous and grows with the slowest point
 * answered; a given one is kept; 0 is none. */
START_TEST(timeout_scales)
{
	c.timeout_s = SWEEP_TIMEOUT_AUTO;
	ck_assert(sweep_timeout_s(&c) == SWEEP_AUTO_MIN_S);
	c.slowest_s = 1000;
	ck_assert(sweep_timeout_s(&c) == SWEEP_AUTO_FACTOR * 1000);
	c.timeout_s = 4;
	ck_assert(sweep_timeout_s(&c) == 4);
	c.timeout_s = 0;
	ck_assert(sweep_timeout_s(&c) == 0);
}
END_TEST

/* The time left (tools/sweep_eta.h): a power law is recovered, clamped,
 * and taken as linear with one size only. */
START_TEST(eta_exponent_fits)
{
	double w[] = { 1e3, 2e3, 4e3, 8e3 }, t[4], flat[] = { 5, 5, 5, 5 };
	for (int i = 0; i < 4; i++)
		t[i] = 3e-4 * pow(w[i], 1.5);
	ck_assert_double_eq_tol(sweep_eta_exponent(w, t, 4), 1.5, 1e-9);
	for (int i = 0; i < 4; i++)
		t[i] = 1e-9 * pow(w[i], 3);
	ck_assert(sweep_eta_exponent(w, t, 4) == ETA_ALPHA_MAX);
	ck_assert(sweep_eta_exponent(flat, t, 4) == 1);
	{ /* sizes within ETA_SPREAD: their noise is not fitted */
		double near[] = { 1000, 1200, 1500, 1900 }, noisy[] = { 1, 3, 1.5, 4 };
		ck_assert(sweep_eta_exponent(near, noisy, 4) == 1);
	}
	t[1] = NAN; /* not stored: passed over */
	t[2] = t[3] = NAN;
	ck_assert(sweep_eta_exponent(w, t, 4) == 1);
}
END_TEST

/* Nothing to scale by until a point is stored; then the rest predicted
 * from its time per work, a running point less what it has run, spread
 * over the points computed at once; a point running past its prediction
 * raises the scale; none left is 0. */
START_TEST(eta_left_predicts)
{
	sweep_eta e;
	ck_assert_int_eq(sweep_eta_init(&e, 3, 1), 0);
	e.work[0] = 100, e.work[1] = 200, e.work[2] = 400;
	sweep_eta_start(&e, 0, 10);
	ck_assert(sweep_eta_left_s(&e, 11) < 0);
	sweep_eta_end(&e, 0, 12, true);        /* 2 s for 100: 0.02 s per unit */
	ck_assert_double_eq_tol(sweep_eta_left_s(&e, 12), 4 + 8, 1e-9);
	sweep_eta_start(&e, 1, 12);
	ck_assert_double_eq_tol(sweep_eta_left_s(&e, 13), 3 + 8, 1e-9);
	/* 6 s into a point of 200: 0.03 s per unit now */
	ck_assert_double_eq_tol(sweep_eta_left_s(&e, 18), 0 + 12, 1e-9);
	e.par = 2;                             /* two points open, two at once */
	ck_assert_double_eq_tol(sweep_eta_left_s(&e, 18), 6, 1e-9);
	sweep_eta_end(&e, 1, 18, false);       /* failed: not fitted */
	ck_assert_double_eq_tol(sweep_eta_left_s(&e, 18), 8, 1e-9);
	sweep_eta_start(&e, 2, 18);
	sweep_eta_end(&e, 2, 20, true);
	ck_assert(sweep_eta_left_s(&e, 20) == 0);
	sweep_eta_free(&e);
}
END_TEST

/* A point's work grows with its GPUs and data-parallel ranks: training
 * at twice the nodes (dp auto), and a collective of more ranks. */
START_TEST(eta_work_grows)
{
	scn_scenario *small = fx_load_file("tests/data/train-small.yaml"), *big = NULL;
	diag *d = diag_new();
	double w1, w2, pw[8];
	size_t np = scn->sweep.points;
	ck_assert_ptr_nonnull(small);
	w1 = sweep_point_work(small);
	ck_assert(w1 >= 1);
	ck_assert_int_eq(scn->sweep.points, 8);
	for (size_t i = 0; i < np; i++) {
		scn_scenario *p = NULL;
		ck_assert_int_eq(scn_sweep_point(scn, i, &p, d), 0);
		pw[i] = sweep_point_work(p);
		scn_free(p);
	}
	/* sweep-small: nodes 2, 4, 8, 16 (outer) x ring, tree: more ranks, more work */
	ck_assert(pw[0] == pw[1] && pw[0] < pw[2] && pw[2] < pw[4] && pw[4] < pw[6]);
	big = fx_load_file("tests/data/train-small.yaml");
	big->jobs[0].wl.gpus *= 2;
	big->jobs[0].wl.train.dp *= 2;
	w2 = sweep_point_work(big);
	ck_assert(w2 > 2 * w1); /* the data-parallel ring counts */
	scn_free(small);
	scn_free(big);
	diag_free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, headers);
	tcase_add_test(tc, timeout_scales);
	tcase_add_test(tc, eta_exponent_fits);
	tcase_add_test(tc, eta_left_predicts);
	tcase_add_test(tc, eta_work_grows);
	tcase_add_test(tc, labels_and_hash);
	tcase_add_test(tc, value_labels_distinct);
	tcase_add_test(tc, message_stored_and_skipped);
	tcase_add_test(tc, shards_partition);
	tcase_add_test(tc, failures_store_nothing);
	tcase_add_test(tc, jobs_store_each_point_once);
	tcase_add_test(tc, two_sweeps_store_each_point_once);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
