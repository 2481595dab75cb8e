/* sim/time: conversions, overflow, formatting. */
#include <check.h>
#include <stdlib.h>

#include "sim/err.h"
#include "sim/time.h"
#include "tests/unit/check_main.h"

START_TEST(from_seconds)
{
	sim_time t;
	ck_assert_int_eq(sim_time_from_s(1.5e-6, &t), SIM_OK);
	ck_assert_int_eq(t, 1500000);
	ck_assert_int_eq(sim_time_from_s(0, &t), SIM_OK);
	ck_assert_int_eq(t, 0);
	ck_assert_int_eq(sim_time_from_s(1e6, &t), SIM_OK); /* 11.6 days */
	ck_assert_int_eq(t, INT64_C(1000000000000000000));
	ck_assert_int_eq(sim_time_from_s(1e7, &t), SIM_EOVERFLOW);
	ck_assert_int_eq(sim_time_from_s(-1e-12, &t), SIM_ERANGE);
	ck_assert_int_eq(sim_time_from_s(1.0 / 0.0, &t), SIM_EOVERFLOW);
	ck_assert_int_eq(sim_time_from_s(0.0 / 0.0, &t), SIM_EOVERFLOW);
}
END_TEST

/* The horizon the messages quote: 2^63 - 1 ps. */
START_TEST(horizon)
{
	ck_assert_double_eq_tol(sim_horizon_days(), 106.751991, 1e-6);
}
END_TEST

START_TEST(to_seconds_keeps_picoseconds)
{
	ck_assert_double_eq(sim_time_to_s(SIM_US), 1e-6);
	/* 1000 s and 1 ps: still resolved (ulp of 1000.0 is 1.1e-13 s). */
	sim_time t = 1000 * SIM_S + 1;
	double s = sim_time_to_s(t);
	ck_assert_double_eq_tol(s - 1000.0, 1e-12, 2e-13);
	ck_assert_double_eq(sim_time_to_s(-SIM_MS), -1e-3);
}
END_TEST

START_TEST(checked_add)
{
	sim_time t;
	ck_assert_int_eq(sim_time_add(SIM_S, SIM_MS, &t), SIM_OK);
	ck_assert_int_eq(t, SIM_S + SIM_MS);
	ck_assert_int_eq(sim_time_add(SIM_TIME_MAX, 1, &t), SIM_EOVERFLOW);
	ck_assert_int_eq(sim_time_add(SIM_TIME_MAX - 5, 5, &t), SIM_OK);
}
END_TEST

START_TEST(format)
{
	char buf[32];
	ck_assert_str_eq(sim_time_format(0, buf, sizeof buf), "0 s");
	ck_assert_str_eq(sim_time_format(1500 * SIM_NS, buf, sizeof buf), "1.5 us");
	ck_assert_str_eq(sim_time_format(12 * SIM_MS, buf, sizeof buf), "12 ms");
	ck_assert_str_eq(sim_time_format(7, buf, sizeof buf), "7 ps");
	ck_assert_str_eq(sim_time_format(-2 * SIM_S, buf, sizeof buf), "-2 s");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("time");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, from_seconds);
	tcase_add_test(tc, to_seconds_keeps_picoseconds);
	tcase_add_test(tc, checked_add);
	tcase_add_test(tc, format);
	tcase_add_test(tc, horizon);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
