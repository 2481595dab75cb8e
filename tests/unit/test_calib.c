/* tools/calib: the fits recover known parameters from synthetic points,
 * with and without noise, their standard errors match the spread seen over
 * many noisy draws, and degenerate input is an error, not a crash. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sim/err.h"
#include "tools/calib.h"
#include "tests/unit/check_main.h"

#define NS 12

/* 8 B .. 32 MiB, spaced by 4x: the span of a perftest-style sweep. */
static void sizes(double *s)
{
	for (int i = 0; i < NS; i++)
		s[i] = 8.0 * pow(4.0, i);
}

/* Multiplies every y by (1 + N(0, rel)). */
static void noisy(gsl_rng *r, double *y, size_t n, double rel)
{
	for (size_t i = 0; i < n; i++)
		y[i] *= 1 + gsl_ran_gaussian(r, rel);
}

START_TEST(alpha_beta_exact)
{
	double s[NS], t[NS], rel[NS];
	cal_ab ab;
	sizes(s);
	for (int i = 0; i < NS; i++)
		t[i] = 2e-6 + s[i] / 10e9;
	ck_assert_int_eq(cal_fit_alpha_beta(s, t, NS, &ab, rel), 0);
	ck_assert_double_eq_tol(ab.alpha_s, 2e-6, 2e-6 * 1e-9);
	ck_assert_double_eq_tol(ab.bw_Bps, 10e9, 10e9 * 1e-9);
	ck_assert_double_eq_tol(ab.half_bytes, 2e-6 * 10e9, 20e3 * 1e-9);
	ck_assert_uint_eq(ab.fit.n, NS);
	ck_assert_uint_eq(ab.fit.dof, NS - 2);
	ck_assert(ab.fit.max_rel < 1e-12);
	ck_assert(ab.se_alpha_s < 1e-15);
	for (int i = 0; i < NS; i++)
		ck_assert(fabs(rel[i]) < 1e-12);
}
END_TEST

START_TEST(alpha_beta_noisy)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double s[NS], t[NS];
	cal_ab ab;
	gsl_rng_set(r, 42);
	sizes(s);
	for (int i = 0; i < NS; i++)
		t[i] = 12e-6 + s[i] / 5e9;
	noisy(r, t, NS, 0.03);
	ck_assert_int_eq(cal_fit_alpha_beta(s, t, NS, &ab, NULL), 0);
	/* Within four standard errors and 10% of the truth. */
	ck_assert(fabs(ab.alpha_s - 12e-6) < 4 * ab.se_alpha_s);
	ck_assert(fabs(ab.bw_Bps - 5e9) < 4 * ab.se_bw_Bps);
	ck_assert(fabs(ab.alpha_s / 12e-6 - 1) < 0.1);
	ck_assert(fabs(ab.bw_Bps / 5e9 - 1) < 0.1);
	/* 3% noise: errors of a few percent of the value, not zero, not huge. */
	ck_assert(ab.se_alpha_s / ab.alpha_s > 0.001 && ab.se_alpha_s / ab.alpha_s < 0.05);
	ck_assert(ab.fit.rms_rel > 0.01 && ab.fit.rms_rel < 0.06);
	gsl_rng_free(r);
}
END_TEST

/* The standard errors estimate the real spread: over 400 noisy draws the
 * standard deviation of alpha and beta matches the mean reported error. */
START_TEST(standard_errors_match_spread)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double s[NS], t[NS], sa = 0, saa = 0, sb = 0, sbb = 0, sea = 0, seb = 0;
	const int draws = 400;
	gsl_rng_set(r, 7);
	sizes(s);
	for (int k = 0; k < draws; k++) {
		cal_ab ab;
		for (int i = 0; i < NS; i++)
			t[i] = 3e-6 + s[i] / 20e9;
		noisy(r, t, NS, 0.05);
		ck_assert_int_eq(cal_fit_alpha_beta(s, t, NS, &ab, NULL), 0);
		sa += ab.alpha_s, saa += ab.alpha_s * ab.alpha_s, sea += ab.se_alpha_s;
		sb += ab.beta_s_per_B, sbb += ab.beta_s_per_B * ab.beta_s_per_B;
		seb += ab.se_beta_s_per_B;
	}
	double sd_a = sqrt(saa / draws - (sa / draws) * (sa / draws));
	double sd_b = sqrt(sbb / draws - (sb / draws) * (sb / draws));
	ck_assert_msg(sd_a / (sea / draws) > 0.75 && sd_a / (sea / draws) < 1.33,
		      "alpha: spread %g, mean se %g", sd_a, sea / draws);
	ck_assert_msg(sd_b / (seb / draws) > 0.75 && sd_b / (seb / draws) < 1.33,
		      "beta: spread %g, mean se %g", sd_b, seb / draws);
	/* Unbiased to well within one standard error. */
	ck_assert_msg(fabs(sa / draws - 3e-6) < 0.2 * sea / draws, "mean %g se %g", sa / draws, sea / draws);
	gsl_rng_free(r);
}
END_TEST

START_TEST(cost_per_packet_and_byte)
{
	/* 5000 cycles per 1500-byte packet plus 0.5 cycles per byte. */
	double s[NS], c[NS], rel[NS];
	cal_lin f;
	sizes(s);
	for (int i = 0; i < NS; i++)
		c[i] = 5000 * ceil(s[i] / 1500) + 0.5 * s[i];
	ck_assert_int_eq(cal_fit_cost(s, c, NS, 1500, &f, rel), 0);
	ck_assert_double_eq_tol(f.p0, 5000, 1e-6);
	ck_assert_double_eq_tol(f.p1, 0.5, 1e-9);
	ck_assert(f.max_rel < 1e-12);
	/* mtu 0: per message instead of per packet, a plain line. */
	for (int i = 0; i < NS; i++)
		c[i] = 20000 + 0.8 * s[i];
	ck_assert_int_eq(cal_fit_cost(s, c, NS, 0, &f, NULL), 0);
	ck_assert_double_eq_tol(f.p0, 20000, 1e-6);
	ck_assert_double_eq_tol(f.p1, 0.8, 1e-12);
	ck_assert_int_eq(cal_fit_cost(s, c, NS, -1, &f, NULL), SIM_EINVAL);
	ck_assert_int_eq(cal_fit_cost(s, c, NS, NAN, &f, NULL), SIM_EINVAL);
}
END_TEST

START_TEST(ring_effective_alpha_beta)
{
	/* The closed form: T = 2(n-1) alpha + 2(n-1)/n S / B, n = 4. */
	double s[NS], busbw[NS];
	const double alpha = 20e-6, bw = 1.25e9, n = 4;
	cal_ring rg;
	sizes(s);
	for (int i = 0; i < NS; i++) {
		double t = 2 * (n - 1) * alpha + 2 * (n - 1) / n * s[i] / bw;
		busbw[i] = s[i] / t * 2 * (n - 1) / n;
	}
	ck_assert_int_eq(cal_fit_ring(s, busbw, NS, 4, &rg, NULL), 0);
	ck_assert_double_eq_tol(rg.alpha_s, alpha, alpha * 1e-9);
	ck_assert_double_eq_tol(rg.bw_Bps, bw, bw * 1e-9);
	ck_assert_uint_eq(rg.ranks, 4);
	ck_assert_int_eq(cal_fit_ring(s, busbw, NS, 1, &rg, NULL), SIM_EINVAL);
	busbw[3] = 0;
	ck_assert_int_eq(cal_fit_ring(s, busbw, NS, 4, &rg, NULL), SIM_EINVAL);
}
END_TEST

/* GEMMs n = 256 .. 16384 (F = 2 n^3), throughput 700 TFLOP/s * F/(F + 5e10). */
START_TEST(saturating_recovers_curve)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double F[7], y[7], rel[7];
	cal_sat sat;
	gsl_rng_set(r, 3);
	for (int i = 0; i < 7; i++) {
		double n = 256.0 * pow(2, i);
		F[i] = 2 * n * n * n;
		y[i] = 700e12 * F[i] / (F[i] + 5e10);
	}
	ck_assert_int_eq(cal_fit_saturating(F, y, 7, &sat, rel), 0);
	ck_assert_double_eq_tol(sat.ymax, 700e12, 700e12 * 1e-6);
	ck_assert_double_eq_tol(sat.f_half, 5e10, 5e10 * 1e-6);
	ck_assert(sat.max_rel < 1e-8);
	noisy(r, y, 7, 0.02);
	ck_assert_int_eq(cal_fit_saturating(F, y, 7, &sat, NULL), 0);
	ck_assert_msg(fabs(sat.ymax / 700e12 - 1) < 0.05, "ymax %g", sat.ymax);
	ck_assert_msg(fabs(sat.f_half / 5e10 - 1) < 0.25, "f_half %g", sat.f_half);
	ck_assert(fabs(sat.ymax - 700e12) < 4 * sat.se_ymax);
	ck_assert(fabs(sat.f_half - 5e10) < 4 * sat.se_f_half);
	ck_assert(sat.se_ymax > 0 && sat.se_f_half > 0);
	ck_assert_uint_eq(sat.dof, 5);
	gsl_rng_free(r);
}
END_TEST

START_TEST(degenerate_input_is_an_error)
{
	double s[3] = { 8, 64, 512 }, t[3] = { 1e-6, 2e-6, 3e-6 };
	double zero[3] = { 0, 0, 0 }, same[3] = { 64, 64, 64 };
	cal_ab ab;
	cal_sat sat;
	cal_lin f;
	ck_assert_int_eq(cal_fit_alpha_beta(s, t, 1, &ab, NULL), SIM_EINVAL);
	ck_assert_int_eq(cal_fit_alpha_beta(s, t, 0, &ab, NULL), SIM_EINVAL);
	ck_assert_int_eq(cal_fit_alpha_beta(s, zero, 3, &ab, NULL), SIM_EINVAL);
	ck_assert_int_eq(cal_fit_alpha_beta(same, t, 3, &ab, NULL), SIM_EINVAL);
	ck_assert_int_eq(cal_fit_alpha_beta(NULL, t, 3, &ab, NULL), SIM_EINVAL);
	ck_assert_int_eq(cal_fit_alpha_beta(s, t, CAL_MAX_POINTS + 1, &ab, NULL), SIM_EINVAL);
	t[1] = NAN;
	ck_assert_int_eq(cal_fit_line(s, t, 3, &f, NULL), SIM_EINVAL);
	t[1] = -2e-6;
	ck_assert_int_eq(cal_fit_line(s, t, 3, &f, NULL), SIM_EINVAL);
	t[1] = 2e-6;
	ck_assert_int_eq(cal_fit_saturating(s, t, 1, &sat, NULL), SIM_EINVAL);
	ck_assert_int_eq(cal_fit_saturating(same, t, 3, &sat, NULL), SIM_EINVAL);
	ck_assert_int_eq(cal_fit_saturating(s, zero, 3, &sat, NULL), SIM_EINVAL);
	ck_assert_int_eq(cal_fit_cost(s, zero, 3, 1500, &f, NULL), SIM_EINVAL);
	ck_assert_int_eq(cal_fit_cost(same, t, 3, 1500, &f, NULL), SIM_EINVAL);
	/* Two points: a fit, but no uncertainty is claimed. */
	ck_assert_int_eq(cal_fit_alpha_beta(s, t, 2, &ab, NULL), 0);
	ck_assert_uint_eq(ab.fit.dof, 0);
	ck_assert(isnan(ab.se_alpha_s) && isnan(ab.se_bw_Bps));
}
END_TEST

START_TEST(unphysical_fit_is_reported_not_hidden)
{
	/* Times that fall with size: the slope is negative, so there is no
	 * bandwidth and no crossover; the fit itself is still returned. */
	double s[4] = { 8, 64, 512, 4096 }, t[4] = { 40e-6, 30e-6, 15e-6, 10e-6 };
	cal_ab ab;
	ck_assert_int_eq(cal_fit_alpha_beta(s, t, 4, &ab, NULL), 0);
	ck_assert(ab.beta_s_per_B < 0);
	ck_assert(isnan(ab.bw_Bps) && isnan(ab.half_bytes));
	ck_assert(ab.fit.max_rel > 0.1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("calib");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, alpha_beta_exact);
	tcase_add_test(tc, alpha_beta_noisy);
	tcase_add_test(tc, standard_errors_match_spread);
	tcase_add_test(tc, cost_per_packet_and_byte);
	tcase_add_test(tc, ring_effective_alpha_beta);
	tcase_add_test(tc, saturating_recovers_curve);
	tcase_add_test(tc, degenerate_input_is_an_error);
	tcase_add_test(tc, unphysical_fit_is_reported_not_hidden);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
