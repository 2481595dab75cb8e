/* Check suite for sim/stats: known values computed by hand, the case where
 * the textbook formula fails, merging, quantiles and t intervals. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>

#include "sim/err.h"
#include "sim/stats.h"
#include "tests/unit/check_main.h"

static stats_acc acc_of(const double *x, size_t n)
{
	stats_acc a;
	stats_acc_init(&a);
	for (size_t i = 0; i < n; i++)
		stats_acc_add(&a, x[i]);
	return a;
}

START_TEST(known_values)
{
	/* Sum 40, n 8: mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32. */
	static const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	stats_acc a = acc_of(x, 8);
	ck_assert_uint_eq(stats_acc_count(&a), 8);
	ck_assert_double_eq_tol(stats_acc_mean(&a), 5.0, 1e-15);
	ck_assert_double_eq_tol(stats_acc_variance(&a), 32.0 / 7.0, 1e-14);
	ck_assert_double_eq_tol(stats_acc_stddev(&a), sqrt(32.0 / 7.0), 1e-14);
	ck_assert_double_eq(stats_acc_min(&a), 2.0);
	ck_assert_double_eq(stats_acc_max(&a), 9.0);
}
END_TEST

START_TEST(empty_and_single)
{
	stats_acc a;
	double half = -1;
	stats_acc_init(&a);
	ck_assert(isnan(stats_acc_mean(&a)));
	ck_assert(isnan(stats_acc_variance(&a)));
	ck_assert(isnan(stats_acc_min(&a)));
	ck_assert(isnan(stats_acc_max(&a)));
	stats_acc_add(&a, -3.5);
	ck_assert_double_eq(stats_acc_mean(&a), -3.5);
	ck_assert_double_eq(stats_acc_min(&a), -3.5);
	ck_assert_double_eq(stats_acc_max(&a), -3.5);
	ck_assert(isnan(stats_acc_variance(&a)));
	ck_assert_int_eq(stats_acc_ci95(&a, &half), SIM_ERANGE);
	ck_assert_double_eq(half, -1);
}
END_TEST

/* 1e9 + {4, 7, 13, 16}: mean 1e9 + 10, deviations -6 -3 3 6, sample
 * variance 90 / 3 = 30. The textbook (sum x^2 - n mean^2) / (n - 1) works on
 * numbers near 4e18 whose spacing is 512, so it cannot get 30 right; the
 * test checks that it indeed fails, so the case really exercises stability. */
START_TEST(stable_with_large_offset)
{
	static const double x[] = { 1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16 };
	stats_acc a = acc_of(x, 4);
	double s = 0, s2 = 0, naive;
	for (int i = 0; i < 4; i++) {
		s += x[i];
		s2 += x[i] * x[i];
	}
	naive = (s2 - s * s / 4) / 3;
	ck_assert_double_gt(fabs(naive - 30.0), 1.0);
	ck_assert_double_eq_tol(stats_acc_mean(&a), 1e9 + 10, 1e-6);
	ck_assert_double_eq_tol(stats_acc_variance(&a), 30.0, 1e-6);
}
END_TEST

/* A long series at 1e9 with noise of 1e-3: compared with a two-pass
 * computation (mean first, then squared deviations), which is accurate.
 * Doubles near 1e9 are 1.2e-7 apart, so the mean is good to a few of those
 * steps; the variance (about 3e-7) must still come out to 0.1%. */
START_TEST(stable_long_series)
{
	enum { N = 100000 };
	double *x = malloc(N * sizeof *x), mean = 0, m2 = 0;
	stats_acc a;
	ck_assert_ptr_nonnull(x);
	for (int i = 0; i < N; i++)
		x[i] = 1e9 + 1e-3 * (double)((i * 7919) % 1001 - 500) / 500.0;
	a = acc_of(x, N);
	for (int i = 0; i < N; i++)
		mean += (x[i] - 1e9) / N;
	for (int i = 0; i < N; i++)
		m2 += (x[i] - 1e9 - mean) * (x[i] - 1e9 - mean);
	ck_assert_double_eq_tol(stats_acc_mean(&a) - 1e9, mean, 1e-6);
	ck_assert_double_eq_tol(stats_acc_variance(&a) / (m2 / (N - 1)), 1.0, 1e-3);
	free(x);
}
END_TEST

START_TEST(merge_matches_single_pass)
{
	static const double x[] = { 3.5, -1, 8, 2.25, 1e3, 7, 7, -40, 0.125, 12 };
	stats_acc all = acc_of(x, 10), lo = acc_of(x, 3), hi = acc_of(x + 3, 7), e;
	stats_acc_merge(&lo, &hi);
	ck_assert_uint_eq(stats_acc_count(&lo), 10);
	ck_assert_double_eq_tol(stats_acc_mean(&lo), stats_acc_mean(&all), 1e-12);
	ck_assert_double_eq_tol(stats_acc_variance(&lo), stats_acc_variance(&all), 1e-9);
	ck_assert_double_eq(stats_acc_min(&lo), -40);
	ck_assert_double_eq(stats_acc_max(&lo), 1e3);
	/* Empty on either side changes nothing. */
	stats_acc_init(&e);
	stats_acc_merge(&lo, &e);
	ck_assert_uint_eq(stats_acc_count(&lo), 10);
	stats_acc_merge(&e, &all);
	ck_assert_double_eq(stats_acc_mean(&e), stats_acc_mean(&all));
	ck_assert_double_eq(stats_acc_variance(&e), stats_acc_variance(&all));
}
END_TEST

START_TEST(merge_stable_with_large_offset)
{
	static const double x[] = { 1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16 };
	stats_acc a = acc_of(x, 2), b = acc_of(x + 2, 2);
	stats_acc_merge(&a, &b);
	ck_assert_double_eq_tol(stats_acc_variance(&a), 30.0, 1e-6);
}
END_TEST

/* {1..5}: mean 3, s^2 = 10/4 = 2.5. From a t table (4 degrees of freedom):
 * t_0.975 = 2.776, t_0.95 = 2.132. Half-widths 2.776 * sqrt(2.5 / 5) =
 * 1.9630 and 2.132 * sqrt(0.5) = 1.5075, to the table's three digits. */
START_TEST(ci_from_t_table)
{
	static const double x[] = { 4, 1, 5, 2, 3 };
	stats_acc a = acc_of(x, 5);
	double h;
	ck_assert_int_eq(stats_acc_ci95(&a, &h), 0);
	ck_assert_double_eq_tol(h, 1.9630, 1e-3);
	ck_assert_int_eq(stats_acc_ci_halfwidth(&a, 0.90, &h), 0);
	ck_assert_double_eq_tol(h, 1.5075, 1e-3);
	/* Two replications: 1 df, t_0.975 = 12.706; {10, 12}: s = sqrt 2,
	 * half = 12.706 * sqrt(2) / sqrt(2) = 12.706. */
	a = acc_of((const double[]){ 10, 12 }, 2);
	ck_assert_int_eq(stats_acc_ci95(&a, &h), 0);
	ck_assert_double_eq_tol(h, 12.706, 1e-3);
}
END_TEST

START_TEST(ci_bad_level)
{
	stats_acc a = acc_of((const double[]){ 1, 2, 3 }, 3);
	double h;
	ck_assert_int_eq(stats_acc_ci_halfwidth(&a, 0.0, &h), SIM_EINVAL);
	ck_assert_int_eq(stats_acc_ci_halfwidth(&a, 1.0, &h), SIM_EINVAL);
	ck_assert_int_eq(stats_acc_ci_halfwidth(&a, NAN, &h), SIM_EINVAL);
}
END_TEST

START_TEST(nan_observation_aborts)
{
	stats_acc a;
	stats_acc_init(&a);
	stats_acc_add(&a, NAN);
}
END_TEST

/* {1..10} in shuffled order: sorted index k holds k + 1; quantile q sits at
 * position 9q. p50: 4.5 -> 5.5; p99: 8.91 -> 9 + 0.91 = 9.91. */
START_TEST(quantiles_known)
{
	static const double x[] = { 7, 3, 10, 1, 9, 2, 8, 5, 6, 4 };
	stats_samples *s = stats_samples_new(STATS_KEEP_ALL);
	double v;
	ck_assert_ptr_nonnull(s);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(stats_samples_add(s, x[i]), 0);
	ck_assert(stats_samples_exact(s));
	ck_assert_int_eq(stats_samples_quantile(s, 0.5, &v), 0);
	ck_assert_double_eq_tol(v, 5.5, 1e-12);
	ck_assert_int_eq(stats_samples_quantile(s, 0.99, &v), 0);
	ck_assert_double_eq_tol(v, 9.91, 1e-12);
	ck_assert_int_eq(stats_samples_quantile(s, 0.0, &v), 0);
	ck_assert_double_eq(v, 1);
	ck_assert_int_eq(stats_samples_quantile(s, 1.0, &v), 0);
	ck_assert_double_eq(v, 10);
	/* Adding after a query re-sorts: 0 becomes the minimum. */
	ck_assert_int_eq(stats_samples_add(s, 0), 0);
	ck_assert_int_eq(stats_samples_quantile(s, 0.0, &v), 0);
	ck_assert_double_eq(v, 0);
	ck_assert_int_eq(stats_samples_quantile(s, 0.5, &v), 0);
	ck_assert_double_eq_tol(v, 5.0, 1e-12);
	stats_samples_free(s);
}
END_TEST

/* Equal neighbours give their value exactly, and quantiles never fall as q
 * rises: five equal iterations of 27.2677 s (steady-state copies) had a
 * p99 above their p50 under GSL's (1 - d) lo + d hi, and the sweep point's
 * report was refused. Also within one ulp of each other, and mixed. */
START_TEST(quantiles_monotone)
{
	double same[5], near[5], mixed[7] = { 1, 2, 2, 2.0000000000000004, 3, 3, 1e9 };
	for (int i = 0; i < 5; i++)
		same[i] = 27.2677, near[i] = nextafter(27.2677, 30) * (i >= 3) + 27.2677 * (i < 3);
	ck_assert_double_eq(stats_quantile_sorted(same, 5, 0.99), 27.2677);
	ck_assert_double_eq(stats_quantile_sorted(same, 5, 0.5), 27.2677);
	ck_assert_double_eq(stats_quantile_sorted(same, 1, 0.99), 27.2677);
	for (int k = 0; k < 3; k++) {
		const double *v = k == 0 ? same : k == 1 ? near : mixed;
		size_t n = k == 2 ? 7 : 5;
		double prev = -INFINITY;
		for (int i = 0; i <= 1000; i++) {
			double x = stats_quantile_sorted(v, n, i / 1000.0);
			ck_assert_msg(x >= prev && x >= v[0] && x <= v[n - 1], "set %d, q %g", k, i / 1000.0);
			prev = x;
		}
	}
	ck_assert_double_eq(stats_quantile_sorted(mixed, 7, 1.0), 1e9);
	ck_assert_double_eq(stats_quantile_sorted(mixed, 7, 0.0), 1);
}
END_TEST

START_TEST(quantile_errors)
{
	stats_samples *s = stats_samples_new(4);
	double v = 42;
	ck_assert_ptr_null(stats_samples_new(0));
	ck_assert_int_eq(stats_samples_quantile(s, 0.5, &v), SIM_ENOENT);
	ck_assert_int_eq(stats_samples_add(s, NAN), SIM_EINVAL);
	ck_assert_int_eq(stats_samples_add(s, INFINITY), SIM_EINVAL);
	ck_assert_uint_eq(stats_samples_seen(s), 0);
	ck_assert_int_eq(stats_samples_add(s, 1), 0);
	ck_assert_int_eq(stats_samples_quantile(s, -0.1, &v), SIM_EINVAL);
	ck_assert_int_eq(stats_samples_quantile(s, 1.1, &v), SIM_EINVAL);
	ck_assert_double_eq(v, 42);
	stats_samples_free(s);
	stats_samples_free(NULL);
}
END_TEST

/* Beyond cap the store is a uniform sample: memory stays at cap, quantiles
 * are flagged as estimates, and are close to the truth. 0..99999 has median
 * 49999.5; a uniform sample of 2000 has a median whose standard deviation
 * is about 0.5 / sqrt(2000) * 1e5 = 1118, so 5000 is over four of them. */
START_TEST(reservoir_bounded)
{
	stats_samples *s = stats_samples_new(2000), *t = stats_samples_new(2000);
	double v, w;
	/* A passing ck_assert costs Check a pipe write: test with `if` here. */
	for (int i = 0; i < 100000; i++) {
		if (stats_samples_add(s, i) || stats_samples_add(t, i))
			ck_abort_msg("stats_samples_add failed at %d", i);
		if (i == 1999)
			ck_assert(stats_samples_exact(s));
	}
	ck_assert_uint_eq(stats_samples_seen(s), 100000);
	ck_assert_uint_eq(stats_samples_kept(s), 2000);
	ck_assert(!stats_samples_exact(s));
	ck_assert_int_eq(stats_samples_quantile(s, 0.5, &v), 0);
	ck_assert_double_eq_tol(v, 49999.5, 5000);
	ck_assert_int_eq(stats_samples_quantile(s, 0.9, &v), 0);
	ck_assert_double_eq_tol(v, 89999.1, 5000);
	/* Reproducible: a second store fed the same values agrees exactly. */
	ck_assert_int_eq(stats_samples_quantile(t, 0.9, &w), 0);
	ck_assert_double_eq(v, w);
	stats_samples_free(s);
	stats_samples_free(t);
}
END_TEST

static Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, known_values);
	tcase_add_test(tc, empty_and_single);
	tcase_add_test(tc, stable_with_large_offset);
	tcase_add_test(tc, stable_long_series);
	tcase_add_test(tc, merge_matches_single_pass);
	tcase_add_test(tc, merge_stable_with_large_offset);
	tcase_add_test(tc, ci_from_t_table);
	tcase_add_test(tc, ci_bad_level);
	tcase_add_test_raise_signal(tc, nan_observation_aborts, SIGABRT);
	tcase_add_test(tc, quantiles_known);
	tcase_add_test(tc, quantiles_monotone);
	tcase_add_test(tc, quantile_errors);
	tcase_add_test(tc, reservoir_bounded);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN_FORKED(stats_suite)
