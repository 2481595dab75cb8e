/* sim/rng: named streams are reproducible and independent of each other. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "sim/rng.h"
#include "tests/unit/check_main.h"

START_TEST(same_seed_same_numbers)
{
	sim_rng *a = sim_rng_new(7, "gpu.3"), *b = sim_rng_new(7, "gpu.3");
	for (int i = 0; i < 1000; i++)
		ck_assert_double_eq(sim_rng_uniform(a), sim_rng_uniform(b));
	sim_rng_free(a);
	sim_rng_free(b);
}
END_TEST

START_TEST(names_and_seeds_separate_streams)
{
	sim_rng *a = sim_rng_new(7, "gpu.3"), *b = sim_rng_new(7, "gpu.4"),
		*c = sim_rng_new(8, "gpu.3");
	int same_ab = 0, same_ac = 0;
	for (int i = 0; i < 1000; i++) {
		double x = sim_rng_uniform(a);
		same_ab += x == sim_rng_uniform(b);
		same_ac += x == sim_rng_uniform(c);
	}
	ck_assert_int_lt(same_ab, 3);
	ck_assert_int_lt(same_ac, 3);
	sim_rng_free(a);
	sim_rng_free(b);
	sim_rng_free(c);
}
END_TEST

/* Adding another stream, and drawing from it, leaves this one unchanged. */
START_TEST(adding_a_stream_changes_nothing_else)
{
	double first[100];
	sim_rng *a = sim_rng_new(1, "nic.0");
	for (int i = 0; i < 100; i++)
		first[i] = sim_rng_normal(a, 0, 1);
	sim_rng_free(a);
	sim_rng *other = sim_rng_new(1, "storage.0");
	a = sim_rng_new(1, "nic.0");
	for (int i = 0; i < 100; i++) {
		sim_rng_uniform(other);
		ck_assert_double_eq(sim_rng_normal(a, 0, 1), first[i]);
	}
	sim_rng_free(a);
	sim_rng_free(other);
}
END_TEST

/* The derivation is part of the reproducibility promise: pin it. */
START_TEST(stream_seed_is_stable)
{
	ck_assert_uint_eq(sim_rng_stream_seed(42, "gpu.0"), sim_rng_stream_seed(42, "gpu.0"));
	ck_assert_uint_ne(sim_rng_stream_seed(42, "gpu.0"), sim_rng_stream_seed(42, "gpu.1"));
	ck_assert_uint_ne(sim_rng_stream_seed(42, ""), sim_rng_stream_seed(43, ""));
	sim_rng *r = sim_rng_new(42, "pinned");
	unsigned long v = gsl_rng_get(sim_rng_gsl(r));
	sim_rng_free(r);
	r = sim_rng_new(42, "pinned");
	ck_assert_uint_eq(gsl_rng_get(sim_rng_gsl(r)), v);
	sim_rng_free(r);
}
END_TEST

/* Sample moments of each distribution against their closed forms. The
 * seed is fixed, so this is deterministic; tolerances are ~5 standard
 * errors for n = 200,000. */
START_TEST(distributions_have_their_moments)
{
	enum { N = 200000 };
	sim_rng *r = sim_rng_new(3, "moments");
	double se = sqrt(1.0 / N);
	double s_exp = 0, s_norm = 0, s_norm2 = 0, s_logn = 0, s_unif = 0, s_bern = 0;
	for (int i = 0; i < N; i++) {
		s_exp += sim_rng_exponential(r, 2.0);
		double z = sim_rng_normal(r, 5.0, 3.0);
		s_norm += z;
		s_norm2 += (z - 5.0) * (z - 5.0);
		s_logn += log(sim_rng_lognormal(r, 0.5, 0.25));
		double u = sim_rng_uniform_range(r, -1.0, 3.0);
		ck_assert(u >= -1.0 && u < 3.0);
		s_unif += u;
		s_bern += sim_rng_bernoulli(r, 0.3);
		ck_assert_uint_lt(sim_rng_below(r, UINT64_C(1) << 40), UINT64_C(1) << 40);
	}
	ck_assert_double_eq_tol(s_exp / N, 2.0, 5 * 2.0 * se);
	ck_assert_double_eq_tol(s_norm / N, 5.0, 5 * 3.0 * se);
	ck_assert_double_eq_tol(sqrt(s_norm2 / N), 3.0, 0.05);
	ck_assert_double_eq_tol(s_logn / N, 0.5, 5 * 0.25 * se);
	ck_assert_double_eq_tol(s_unif / N, 1.0, 5 * (4.0 / sqrt(12.0)) * se);
	ck_assert_double_eq_tol(s_bern / N, 0.3, 5 * sqrt(0.21) * se);
	sim_rng_free(r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("rng");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, same_seed_same_numbers);
	tcase_add_test(tc, names_and_seeds_separate_streams);
	tcase_add_test(tc, adding_a_stream_changes_nothing_else);
	tcase_add_test(tc, stream_seed_is_stable);
	tcase_add_test(tc, distributions_have_their_moments);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
