/* tools/calib_out: a calibrated profile document renders to YAML that the
 * real profile loader accepts, with values, sources and missing reasons
 * intact; unphysical values and unknown fields are refused; files are
 * written atomically. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/diag.h"
#include "models/profile.h"
#include "sim/err.h"
#include "tools/calib_out.h"
#include "tests/unit/check_main.h"

/* Renders d, writes it to a fresh temporary file and loads it back. */
static profile *round_trip(const cal_doc *d, char *path, size_t n)
{
	char why[256];
	char *text = cal_doc_render(d, "not measured");
	profile *p = NULL;
	diag *dg = diag_new();
	snprintf(path, n, "/tmp/test_calib_out.%ld.yaml", (long)getpid());
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(cal_write_atomic(path, text, why, sizeof why), 0);
	if (profile_load(path, &p, dg)) {
		diag_print(dg, stderr);
		fprintf(stderr, "%s", text);
	}
	ck_assert_ptr_nonnull(p);
	free(text);
	diag_free(dg);
	return p;
}

static double value_of(const profile *p, const char *field)
{
	const profile_field *f = profile_field_find(profile_get_kind(p), field);
	ck_assert_ptr_nonnull(f);
	return profile_field_get(profile_get_values(p), f);
}

START_TEST(rendered_profile_loads)
{
	cal_doc *d = cal_doc_new(PROFILE_HOST_COSTS, "lab-host-costs", "fitted: a \"test\"");
	char path[128];
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(cal_doc_give(d, "tcp_latency", 10.3229e-6, "alpha = %.1f us", 10.3), 0);
	ck_assert_int_eq(cal_doc_give(d, "tcp_rx_cycles_per_byte", 0.60241, "rx \"fit\" \\ ok"), 0);
	ck_assert_int_eq(cal_doc_give(d, "mtu", 65536, "--mtu"), 0);
	ck_assert_int_eq(cal_doc_miss(d, "tcp_cycles_per_packet", "needs --mtu: %d", 1), 0);
	ck_assert_int_eq(cal_doc_comment(d, "ring: %s", "alpha 37 us"), 0);
	ck_assert_uint_eq(cal_doc_ngiven(d), 3);
	ck_assert_str_eq(cal_doc_name(d), "lab-host-costs");
	profile *p = round_trip(d, path, sizeof path);
	ck_assert_str_eq(profile_name(p), "lab-host-costs");
	ck_assert_str_eq(profile_summary(p), "fitted: a \"test\"");
	ck_assert_double_eq_tol(value_of(p, "tcp_latency"), 10.3229e-6, 1e-10);
	ck_assert_double_eq_tol(value_of(p, "tcp_rx_cycles_per_byte"), 0.60241, 1e-9);
	ck_assert_double_eq(value_of(p, "mtu"), 65536);
	const profile_field *f = profile_field_find(PROFILE_HOST_COSTS, "tcp_rx_cycles_per_byte");
	ck_assert_str_eq(profile_source(p, f), "rx \"fit\" \\ ok");
	f = profile_field_find(PROFILE_HOST_COSTS, "tcp_cycles_per_packet");
	ck_assert_str_eq(profile_missing(p, f), "needs --mtu: 1");
	f = profile_field_find(PROFILE_HOST_COSTS, "nfs_cycles_per_byte");
	ck_assert_str_eq(profile_missing(p, f), "not measured");
	ck_assert(isnan(value_of(p, "nfs_cycles_per_byte")));
	profile_free(p);
	unlink(path);
	cal_doc_free(d);
}
END_TEST

START_TEST(every_kind_renders_complete)
{
	/* An empty document of every kind still loads: each field explained. */
	for (int k = 0; k < PROFILE_NKINDS; k++) {
		cal_doc *d = cal_doc_new((profile_kind)k, "x", "empty");
		char path[128];
		profile *p = round_trip(d, path, sizeof path);
		ck_assert_int_eq(profile_get_kind(p), k);
		profile_free(p);
		unlink(path);
		cal_doc_free(d);
	}
}
END_TEST

START_TEST(unphysical_and_unknown_refused)
{
	cal_doc *d = cal_doc_new(PROFILE_NIC, "n", "s");
	ck_assert_int_eq(cal_doc_give(d, "rdma_latency", -1e-6, "x"), SIM_ERANGE);
	ck_assert_int_eq(cal_doc_give(d, "rdma_latency", 0, "x"), SIM_ERANGE);
	ck_assert_int_eq(cal_doc_give(d, "rdma_latency", NAN, "x"), SIM_ERANGE);
	ck_assert_int_eq(cal_doc_give(d, "port_rate", INFINITY, "x"), SIM_ERANGE);
	ck_assert_int_eq(cal_doc_give(d, "eff_max", 0.5, "x"), SIM_ENOENT); /* a gpu field */
	ck_assert_int_eq(cal_doc_miss(d, "no_such_field", "x"), SIM_ENOENT);
	ck_assert_uint_eq(cal_doc_ngiven(d), 0);
	/* A later give replaces a miss, and the reverse. */
	ck_assert_int_eq(cal_doc_miss(d, "rdma_latency", "not yet"), 0);
	ck_assert_int_eq(cal_doc_give(d, "rdma_latency", 1.9e-6, "fit"), 0);
	ck_assert_uint_eq(cal_doc_ngiven(d), 1);
	ck_assert_int_eq(cal_doc_miss(d, "rdma_latency", "withdrawn"), 0);
	ck_assert_uint_eq(cal_doc_ngiven(d), 0);
	cal_doc_free(d);
	cal_doc_free(NULL);
}
END_TEST

/* An effective profile gives the send side's cost as 0 (dpusim calibrate
 * --effective-ring: it is inside the receive figure); the loader takes it.
 * A receive cost of 0 is still refused: a byte received is never free. */
START_TEST(a_zero_send_cost_loads)
{
	cal_doc *d = cal_doc_new(PROFILE_HOST_COSTS, "eff-host-costs", "effective");
	char path[128];
	ck_assert_int_eq(cal_doc_give(d, "tcp_rx_cycles_per_byte", 0, "x"), SIM_ERANGE);
	ck_assert_int_eq(cal_doc_give(d, "tcp_tx_cycles_per_byte", -1, "x"), SIM_ERANGE);
	ck_assert_int_eq(cal_doc_give(d, "tcp_rx_cycles_per_byte", 21.9, "ring B"), 0);
	ck_assert_int_eq(cal_doc_give(d, "tcp_tx_cycles_per_byte", 0, "inside rx"), 0);
	profile *p = round_trip(d, path, sizeof path);
	ck_assert_double_eq(value_of(p, "tcp_tx_cycles_per_byte"), 0);
	ck_assert_double_eq_tol(value_of(p, "tcp_rx_cycles_per_byte"), 21.9, 1e-9);
	profile_free(p);
	unlink(path);
	cal_doc_free(d);
}
END_TEST

START_TEST(atomic_write_failure_leaves_nothing)
{
	char why[256] = "";
	ck_assert_int_eq(cal_write_atomic("/nonexistent-dir/x.yaml", "a: 1\n", why, sizeof why),
			 SIM_EIO);
	ck_assert_ptr_nonnull(strstr(why, "/nonexistent-dir/x.yaml"));
	ck_assert_int_eq(access("/nonexistent-dir", F_OK), -1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("calib_out");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, rendered_profile_loads);
	tcase_add_test(tc, every_kind_renders_complete);
	tcase_add_test(tc, unphysical_and_unknown_refused);
	tcase_add_test(tc, a_zero_send_cost_loads);
	tcase_add_test(tc, atomic_write_failure_leaves_nothing);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
