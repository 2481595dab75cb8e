/* backend-hw/gemm: the known product the replay checks its GEMMs against,
 * the split of a FLOP count into GEMMs, and the CPU engine end to end. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "backend-hw/gemm.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

/* The product written out, for every k the engine uses. */
START_TEST(want_is_the_product_of_a_and_b)
{
	const size_t n = 9;
	for (size_t k = 1; k <= n; k++)
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++) {
				double sum = 0;
				for (size_t l = 0; l < k; l++)
					sum += (double)hw_gemm_a(i, l) * hw_gemm_b(l, j, n);
				ck_assert_double_eq(hw_gemm_want(i, j, k, n), sum);
			}
	for (size_t i = 0; i < 50; i++)
		for (size_t k = 0; k < 50; k++)
			ck_assert(hw_gemm_a(i, k) >= 1 && hw_gemm_a(i, k) <= 7);
}
END_TEST

START_TEST(flops_split_into_whole_gemms)
{
	size_t calls, krem;
	double done;
	hw_gemm_split(2.0 * 256 * 256 * 256 * 3 + 2.0 * 256 * 256 * 10, 256, &calls, &krem, &done);
	ck_assert_uint_eq(calls, 3);
	ck_assert_uint_eq(krem, 10);
	ck_assert_double_eq(done, 2.0 * 256 * 256 * (3 * 256 + 10));
	/* Rounded to the nearest 2n^2 FLOPs. */
	hw_gemm_split(2.0 * 16 * 16 * 5.4, 16, &calls, &krem, &done);
	ck_assert_uint_eq(calls, 0);
	ck_assert_uint_eq(krem, 5);
	hw_gemm_split(0, 16, &calls, &krem, &done);
	ck_assert_uint_eq(calls + krem, 0);
	ck_assert_double_eq(done, 0);
}
END_TEST

START_TEST(cpu_engine_runs_and_checks)
{
	hw_gemm *g = NULL;
	double done = 0, secs = -1;
	ck_assert_int_eq(hw_gemm_open("cpu", 32, &g), 0);
	ck_assert_int_eq(hw_gemm_run(g, 2.0 * 32 * 32 * (2 * 32 + 7), &done, &secs), 0);
	ck_assert_double_eq(done, 2.0 * 32 * 32 * (2 * 32 + 7));
	ck_assert(secs >= 0);
	hw_gemm_close(g);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hw_gemm");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, want_is_the_product_of_a_and_b);
	tcase_add_test(tc, flops_split_into_whole_gemms);
	tcase_add_test(tc, cpu_engine_runs_and_checks);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
