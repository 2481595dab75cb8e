/* models/noise: determinism per seed, the folded log-normal's moments, the
 * expected slowest member of a synchronous group against the exact integral
 * and the sqrt(2 ln n) order, slow nodes, and jitter only on host paths. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_integration.h>
#include <gsl/gsl_sf_erf.h>

#include "models/noise.h"
#include "sim/err.h"
#include "sim/stats.h"
#include "tests/unit/check_main.h"

static noise_params lognormal(uint32_t gpus, double sigma)
{
	return (noise_params){ .gpus = gpus, .gpus_per_node = 8, .gpu_sigma = sigma };
}

/* |mean - want| within k standard errors of the mean. */
static void ck_mean_near(const stats_acc *a, double want, double k)
{
	double se = stats_acc_stddev(a) / sqrt((double)stats_acc_count(a));
	ck_assert_msg(fabs(stats_acc_mean(a) - want) <= k * se,
		      "mean %.6g, expected %.6g within %.0f SE (SE %.3g)", stats_acc_mean(a),
		      want, k, se);
}

START_TEST(no_noise_is_exactly_one)
{
	noise_params p = lognormal(16, 0);
	p.jitter_mean_s = 0;
	noise_model *n = noise_new(&p, 42);
	ck_assert_ptr_nonnull(n);
	for (uint64_t s = 0; s < 100; s++) {
		ck_assert_double_eq(noise_gpu_factor(n, (uint32_t)(s % 16), s), 1.0);
		ck_assert_double_eq(noise_group_max(n, 0, 16, s), 1.0);
		ck_assert_double_eq(noise_jitter_s(n, 1, s, NOISE_PATH_HOST_CPU), 0.0);
	}
	ck_assert_uint_eq(noise_nodes(n), 2);
	ck_assert_uint_eq(noise_slow_nodes(n), 0);
	noise_free(n);
	noise_free(NULL);
}
END_TEST

START_TEST(deterministic_per_seed_and_order_free)
{
	noise_params p = lognormal(64, 0.05);
	p.jitter_mean_s = 1e-6;
	noise_model *a = noise_new(&p, 7), *b = noise_new(&p, 7), *c = noise_new(&p, 8);
	p.gpus = 128; /* a bigger cluster keeps the first 64 GPUs' draws */
	noise_model *big = noise_new(&p, 7);
	ck_assert(a && b && c && big);
	double fwd[50], differ = 0;
	for (uint64_t s = 0; s < 50; s++)
		fwd[s] = noise_gpu_factor(a, 17, s);
	for (uint64_t s = 50; s-- > 0;) { /* asked backwards */
		ck_assert_double_eq(noise_gpu_factor(b, 17, s), fwd[s]);
		ck_assert_double_eq(noise_gpu_factor(big, 17, s), fwd[s]);
		differ += noise_gpu_factor(c, 17, s) != fwd[s];
		ck_assert_double_eq(noise_jitter_s(a, 3, s, NOISE_PATH_HOST_CPU),
				    noise_jitter_s(b, 3, s, NOISE_PATH_HOST_CPU));
	}
	ck_assert_double_eq(differ, 50); /* another seed, other draws */
	/* Neighbouring GPUs and steps are not copies of each other. */
	ck_assert(noise_gpu_factor(a, 17, 3) != noise_gpu_factor(a, 18, 3));
	ck_assert(noise_gpu_factor(a, 17, 3) != noise_gpu_factor(a, 17, 4));
	noise_free(a);
	noise_free(b);
	noise_free(c);
	noise_free(big);
}
END_TEST

START_TEST(folded_lognormal_moments)
{
	/* log(f) / sigma = |Z|: E = sqrt(2/pi), Var = 1 - 2/pi, P(<= 1) = erf(1/sqrt 2). */
	const double sigma = 0.02;
	noise_params p = lognormal(100, sigma);
	noise_model *n = noise_new(&p, 1);
	stats_acc z, f_acc;
	uint64_t below_one = 0, draws = 0;
	stats_acc_init(&z);
	stats_acc_init(&f_acc);
	for (uint64_t s = 0; s < 2000; s++)
		for (uint32_t g = 0; g < 100; g++) {
			double f = noise_gpu_factor(n, g, s);
			ck_assert(f >= 1.0);
			stats_acc_add(&z, log(f) / sigma);
			stats_acc_add(&f_acc, f);
			below_one += log(f) / sigma <= 1.0;
			draws++;
		}
	ck_mean_near(&z, sqrt(2 / M_PI), 4);
	ck_assert_double_eq_tol(stats_acc_variance(&z), 1 - 2 / M_PI, 0.01);
	double frac = (double)below_one / (double)draws, want = erf(1 / sqrt(2.0));
	ck_assert_double_eq_tol(frac, want, 4 * sqrt(want * (1 - want) / (double)draws));
	/* The factor's own mean and CV match the closed forms. */
	ck_mean_near(&f_acc, noise_factor_mean(sigma), 4);
	double cv = stats_acc_stddev(&f_acc) / stats_acc_mean(&f_acc);
	ck_assert_double_eq_tol(cv, noise_factor_cv(sigma), 0.01 * cv);
	noise_free(n);
}
END_TEST

START_TEST(sigma_from_cv)
{
	/* By hand at sigma = 1: E = 2 e^0.5 Phi(1) = 2 * 1.6487213 * 0.8413447
	 * = 2.7742860; CV^2 = e * Phi(2) / (2 Phi(1)^2) - 1 = 0.8763857. */
	ck_assert_double_eq_tol(noise_factor_mean(1), 2.774285958, 1e-8);
	ck_assert_double_eq_tol(noise_factor_cv(1), sqrt(0.876385785), 1e-8);
	ck_assert_double_eq(noise_factor_mean(0), 1);
	ck_assert_double_eq(noise_factor_cv(0), 0);
	/* Small sigma: CV = sigma sqrt(1 - 2/pi), on both sides of the switch
	 * to the series. */
	ck_assert_double_eq_tol(noise_factor_cv(1e-5) / 1e-5, sqrt(1 - 2 / M_PI), 1e-6);
	ck_assert_double_eq_tol(noise_factor_cv(2e-4) / 2e-4, sqrt(1 - 2 / M_PI), 1e-4);
	double prev = 0;
	for (double sg = 1e-6; sg < 3; sg *= 1.3) {
		double s, cv = noise_factor_cv(sg);
		ck_assert(cv > prev);
		prev = cv;
		if (cv > 10)
			break;
		ck_assert_int_eq(noise_sigma_for_cv(cv, &s), 0);
		ck_assert_double_eq_tol(s, sg, 1e-9 * (1 + sg));
	}
	double s;
	ck_assert_int_eq(noise_sigma_for_cv(0, &s), 0);
	ck_assert_double_eq(s, 0);
	ck_assert_int_eq(noise_sigma_for_cv(-0.1, &s), SIM_ERANGE);
	ck_assert_int_eq(noise_sigma_for_cv(11, &s), SIM_ERANGE);
	ck_assert_int_eq(noise_sigma_for_cv(NAN, &s), SIM_ERANGE);
}
END_TEST

/* E[max of n half-normals] = integral over [0, inf) of 1 - erf(x/sqrt 2)^n;
 * the integrand is below 1e-30 past x = 12 for n <= 4096. */
static double halfnormal_max_integrand(double x, void *nptr)
{
	return 1 - pow(gsl_sf_erf(x / M_SQRT2), *(double *)nptr);
}

static double expected_halfnormal_max(double n)
{
	gsl_integration_workspace *w = gsl_integration_workspace_alloc(200);
	gsl_function f = { .function = halfnormal_max_integrand, .params = &n };
	double r, err;
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(gsl_integration_qags(&f, 0, 12, 1e-12, 1e-10, 200, w, &r, &err), 0);
	gsl_integration_workspace_free(w);
	return r;
}

START_TEST(group_max_grows_with_scale)
{
	static const uint32_t sizes[] = { 8, 64, 512, 4096 };
	const double sigma = 0.02;
	noise_params p = lognormal(4096, sigma);
	noise_model *n = noise_new(&p, 42);
	double prev_excess = 0, prev_ratio = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		stats_acc z, f;
		stats_acc_init(&z);
		stats_acc_init(&f);
		for (uint64_t s = 0; s < 1000; s++) {
			double m = noise_group_max(n, 0, sizes[i], s);
			stats_acc_add(&f, m);
			stats_acc_add(&z, log(m) / sigma);
		}
		/* The slowest member, in units of sigma, is the max of n half-normals. */
		ck_mean_near(&z, expected_halfnormal_max(sizes[i]), 4);
		/* The expected slowdown grows with the group ... */
		double excess = stats_acc_mean(&f) - 1;
		ck_assert_msg(excess > prev_excess, "E[max]-1 %.5g at %u not above %.5g", excess,
			      sizes[i], prev_excess);
		/* ... at the order of the max of n normals, sigma sqrt(2 ln n), which
		 * the folded max approaches from below (exact ratios 0.87 .. 0.93). */
		double ratio = excess / (sigma * sqrt(2 * log(sizes[i])));
		ck_assert_msg(ratio > 0.8 && ratio < 1.0, "ratio %.3f at %u", ratio, sizes[i]);
		ck_assert(ratio > prev_ratio - 0.01);
		prev_excess = excess;
		prev_ratio = ratio;
	}
	noise_free(n);
}
END_TEST

START_TEST(slow_nodes_by_fraction)
{
	/* One GPU per node, 4096 nodes, 10% slow: the count is binomial. */
	noise_params p = { .gpus = 4096, .gpus_per_node = 1, .slow_node_frac = 0.1,
			   .slow_node_factor = 1.3 };
	noise_model *n = noise_new(&p, 3);
	double sd = sqrt(4096 * 0.1 * 0.9);
	ck_assert(fabs(noise_slow_nodes(n) - 409.6) < 4 * sd);
	/* A group of 8 contains a slow node with probability 1 - 0.9^8 and then
	 * waits exactly 1.3 times longer; otherwise it waits for nobody. */
	uint32_t slow_groups = 0;
	for (uint32_t g = 0; g < 4096; g += 8) {
		double m = noise_group_max(n, g, 8, 5);
		bool any = false;
		for (uint32_t k = g; k < g + 8; k++)
			any |= noise_node_is_slow(n, noise_node_of(n, k));
		ck_assert_double_eq(m, any ? 1.3 : 1.0);
		slow_groups += any;
	}
	double q = 1 - pow(0.9, 8);
	ck_assert(fabs(slow_groups - 512 * q) < 4 * sqrt(512 * q * (1 - q)));
	noise_free(n);
	/* Every node slow, combined with the spread: factors multiply. */
	p = (noise_params){ .gpus = 16, .gpus_per_node = 8, .gpu_sigma = 0.05,
			    .slow_node_frac = 1, .slow_node_factor = 2 };
	noise_model *all = noise_new(&p, 3);
	p.slow_node_frac = 0;
	noise_model *none = noise_new(&p, 3);
	ck_assert_uint_eq(noise_slow_nodes(all), 2);
	for (uint32_t g = 0; g < 16; g++)
		ck_assert_double_eq_tol(noise_gpu_factor(all, g, 9),
					2 * noise_gpu_factor(none, g, 9), 1e-15);
	noise_free(all);
	noise_free(none);
}
END_TEST

START_TEST(jitter_fattens_host_tail_only)
{
	/* 5 us base latency; host jitter exponential with mean 20 us:
	 * E = 20 us, p99 = 20 us * ln 100. */
	noise_params p = lognormal(8, 0);
	p.jitter_mean_s = 20e-6;
	noise_model *n = noise_new(&p, 11);
	stats_samples *host = stats_samples_new(STATS_KEEP_ALL);
	stats_acc j;
	stats_acc_init(&j);
	for (uint64_t m = 0; m < 100000; m++) {
		double x = noise_jitter_s(n, 0, m, NOISE_PATH_HOST_CPU);
		ck_assert(x > 0);
		ck_assert_double_eq(noise_jitter_s(n, 0, m, NOISE_PATH_BYPASS), 0.0);
		stats_acc_add(&j, x);
		ck_assert_int_eq(stats_samples_add(host, 5e-6 + x), 0);
	}
	ck_mean_near(&j, 20e-6, 4);
	double p50, p99;
	ck_assert_int_eq(stats_samples_quantile(host, 0.5, &p50), 0);
	ck_assert_int_eq(stats_samples_quantile(host, 0.99, &p99), 0);
	/* Quantile standard errors: sqrt(q(1-q)/n) / density, about 0.5% and 0.7% here. */
	ck_assert_double_eq_tol(p50, 5e-6 + 20e-6 * log(2.0), 0.03 * 20e-6 * log(2.0));
	ck_assert_double_eq_tol(p99, 5e-6 + 20e-6 * log(100.0), 0.03 * 20e-6 * log(100.0));
	/* The RDMA path's p99 / p50 is 1 (5 us both); host-tcp's is far above. */
	ck_assert(p99 / p50 > 4);
	stats_samples_free(host);
	noise_free(n);
}
END_TEST

/* A throttled GPU's fixed slowdown multiplies its own factor only, is
 * what its group waits for, and is copied: the caller's array may go. */
START_TEST(throttled_gpu_alone_is_slower)
{
	double slow[16];
	for (int g = 0; g < 16; g++)
		slow[g] = 1;
	slow[5] = 1.25;
	noise_params p = { .gpus = 16, .gpus_per_node = 8, .gpu_slow = slow };
	noise_model *m = noise_new(&p, 3);
	ck_assert_ptr_nonnull(m);
	slow[5] = 4, slow[9] = 4; /* after noise_new: no effect */
	for (uint64_t step = 0; step < 4; step++) {
		for (uint32_t g = 0; g < 16; g++)
			ck_assert_double_eq(noise_gpu_factor(m, g, step), g == 5 ? 1.25 : 1);
		ck_assert_double_eq(noise_group_max(m, 0, 8, step), 1.25);
		ck_assert_double_eq(noise_group_max(m, 8, 8, step), 1);
	}
	noise_free(m);
	slow[9] = 0.5; /* faster than nominal: refused */
	ck_assert_int_eq(noise_params_check(&p, (char[96]){ 0 }, 96), SIM_EINVAL);
	ck_assert_ptr_null(noise_new(&p, 3));
	slow[9] = NAN;
	ck_assert_ptr_null(noise_new(&p, 3));
}
END_TEST

START_TEST(bad_parameters_say_why)
{
	char why[96];
	noise_params ok = { .gpus = 8, .gpus_per_node = 8, .gpu_sigma = 0.1,
			    .slow_node_frac = 0.01, .slow_node_factor = 1.5, .jitter_mean_s = 1e-6 };
	ck_assert_int_eq(noise_params_check(&ok, why, sizeof why), 0);
	noise_params bad[] = { ok, ok, ok, ok, ok, ok, ok };
	bad[0].gpus = 0;
	bad[1].gpus_per_node = 0;
	bad[2].gpu_sigma = -0.1;
	bad[3].gpu_sigma = NAN;
	bad[4].slow_node_frac = 1.5;
	bad[5].slow_node_factor = 0.5;
	bad[6].jitter_mean_s = -1;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		why[0] = 0;
		ck_assert_int_eq(noise_params_check(&bad[i], why, sizeof why), SIM_EINVAL);
		ck_assert_msg(why[0] != 0, "case %zu gives no reason", i);
		ck_assert_ptr_null(noise_new(&bad[i], 1));
	}
	ck_assert_str_eq((noise_params_check(&bad[4], why, sizeof why), why),
			 "slow-node fraction must be between 0 and 1");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("noise");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, no_noise_is_exactly_one);
	tcase_add_test(tc, throttled_gpu_alone_is_slower);
	tcase_add_test(tc, deterministic_per_seed_and_order_free);
	tcase_add_test(tc, folded_lognormal_moments);
	tcase_add_test(tc, sigma_from_cv);
	tcase_add_test(tc, group_max_grows_with_scale);
	tcase_add_test(tc, slow_nodes_by_fraction);
	tcase_add_test(tc, jitter_fattens_host_tail_only);
	tcase_add_test(tc, bad_parameters_say_why);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
