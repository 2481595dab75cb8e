/* backend-hw/stats: the order statistics dpusim-hw bench and replay report
 * per size. */
#include <check.h>
#include <stdlib.h>

#include "backend-hw/stats.h"
#include "tests/unit/check_main.h"

START_TEST(odd_and_even_medians)
{
	double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 }, one[] = { 7 };
	ck_assert_double_eq(hw_median(odd, 3), 3);
	ck_assert_double_eq(hw_median(even, 4), 2.5);
	ck_assert_double_eq(hw_median(one, 1), 7);
	/* sorted in place */
	ck_assert(odd[0] == 1 && odd[1] == 3 && odd[2] == 5);
}
END_TEST

START_TEST(nearest_rank_quantiles)
{
	double v[20];
	for (int i = 0; i < 20; i++)
		v[i] = i + 1;
	/* ceil(q n)-th smallest: p10 of 20 is the 2nd, p90 the 18th */
	ck_assert_double_eq(hw_quantile_sorted(v, 20, 0.1), 2);
	ck_assert_double_eq(hw_quantile_sorted(v, 20, 0.9), 18);
	ck_assert_double_eq(hw_quantile_sorted(v, 20, 0.5), 10);
	ck_assert_double_eq(hw_quantile_sorted(v, 20, 0), 1);
	ck_assert_double_eq(hw_quantile_sorted(v, 20, 1), 20);
	ck_assert_double_eq(hw_quantile_sorted(v, 1, 0.9), 1);
}
END_TEST

/* What the statistics are for: one call descheduled for a scheduler slice
 * (5 ms among 100 us calls) moves the mean 2.5x and the median not at all. */
START_TEST(one_stall_does_not_move_the_median)
{
	double v[20];
	hw_stats s;
	for (int i = 0; i < 20; i++)
		v[i] = 100e-6 + (i % 5) * 1e-6;
	v[7] = 5e-3;
	hw_stats_of(v, 20, &s);
	ck_assert_uint_eq(s.n, 20);
	ck_assert_double_eq_tol(s.median, 102e-6, 1e-12);
	ck_assert_double_eq_tol(s.mean, (2040e-6 - 102e-6 + 5e-3) / 20, 1e-12);
	ck_assert(s.mean > 2.5 * s.median);
	ck_assert_double_eq_tol(s.min, 100e-6, 1e-12);
	ck_assert_double_eq_tol(s.p10, 100e-6, 1e-12);
	ck_assert_double_eq_tol(s.p90, 104e-6, 1e-12);
	ck_assert_double_eq(s.max, 5e-3);
	ck_assert(s.min <= s.p10 && s.p10 <= s.median && s.median <= s.p90 && s.p90 <= s.max);
}
END_TEST

START_TEST(one_sample)
{
	double v[] = { 3e-3 };
	hw_stats s;
	hw_stats_of(v, 1, &s);
	ck_assert(s.n == 1 && s.min == 3e-3 && s.p10 == 3e-3 && s.median == 3e-3 &&
		  s.p90 == 3e-3 && s.max == 3e-3 && s.mean == 3e-3);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hw_stats");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, odd_and_even_medians);
	tcase_add_test(tc, nearest_rank_quantiles);
	tcase_add_test(tc, one_stall_does_not_move_the_median);
	tcase_add_test(tc, one_sample);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
