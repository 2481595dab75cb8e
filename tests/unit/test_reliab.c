/* models/reliab: closed forms against hand-computed values, Daly's interval
 * against the exact optimum of his own wall-time model, goodput against
 * MTBF, and a Monte Carlo checkpoint/restart job on the engine whose mean
 * wall time must contain Daly's T_w in its 95% confidence interval. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_sf_lambert.h>

#include "models/reliab.h"
#include "sim/engine.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "sim/stats.h"
#include "tests/unit/check_main.h"

/* Rates 1e-5 + 5e-6 + 1e-6 + 4e-6 = 2e-5 per second: M = 50,000 s.
 * Checkpoint 1.6 TB at 4 GB/s: delta = 400 s. */
static const rel_params job = {
	.part = {
		[REL_GPU] = { .count = 512, .mtbf_s = 5.12e7 },
		[REL_NODE] = { .count = 64, .mtbf_s = 1.28e7 },
		[REL_NIC] = { .count = 64, .mtbf_s = 6.4e7 },
		[REL_SWITCH] = { .count = 8, .mtbf_s = 2e6 },
	},
	.restart_s = 600,
	.ckpt_bytes = 1.6e12,
	.ckpt_write_Bps = 4e9,
};

START_TEST(closed_forms_by_hand)
{
	char why[96];
	ck_assert_int_eq(rel_params_check(&job, why, sizeof why), 0);
	ck_assert_double_eq_tol(rel_failure_rate_per_s(&job), 2e-5, 1e-18);
	ck_assert_double_eq_tol(rel_mtbf_s(&job), 50000, 1e-9);
	ck_assert_double_eq_tol(rel_ckpt_write_s(1.6e12, 4e9), 400, 1e-12);
	/* Young: sqrt(2 * 400 * 50000) = sqrt(4e7). */
	ck_assert_double_eq_tol(rel_young_interval_s(400, 50000), 6324.555320336759, 1e-9);
	/* Daly: x = 400 / 100000 = 0.004, sqrt(x) = 0.0632456;
	 * 6324.5553 * (1 + 0.0210819 + 0.000444) - 400 = 6060.6996. */
	ck_assert_double_eq_tol(rel_daly_interval_s(400, 50000), 6060.699567145798, 1e-9);
	/* delta >= 2M: Daly's interval is M. */
	ck_assert_double_eq(rel_daly_interval_s(2000, 1000), 1000);
	ck_assert_double_eq(rel_daly_interval_s(5000, 1000), 1000);
	/* T_w for 100 h of compute, tau 6000 s, R 600 s:
	 * 50000 * e^0.012 * (e^0.128 - 1) = 50000 * 1.0120723 * 0.1365530 = 6910.08
	 * per segment, 60 segments: 414,604.5 s; goodput 6000 / 6910.08 = 0.86830. */
	ck_assert_double_eq_tol(rel_wall_s(360000, 6000, 400, 600, 50000), 414604.5299734485,
				1e-6);
	ck_assert_double_eq_tol(rel_goodput(6000, 400, 600, 50000), 0.8682973146073791, 1e-12);
}
END_TEST

START_TEST(no_failures_costs_only_checkpoints)
{
	rel_params p = job;
	for (int k = 0; k < REL_KINDS; k++)
		p.part[k].count = 0;
	ck_assert_double_eq(rel_failure_rate_per_s(&p), 0);
	ck_assert(isinf(rel_mtbf_s(&p)));
	ck_assert(isinf(rel_young_interval_s(400, INFINITY)));
	ck_assert(isinf(rel_daly_interval_s(400, INFINITY)));
	ck_assert_double_eq_tol(rel_goodput(3600, 400, 600, INFINITY), 3600.0 / 4000, 1e-15);
	ck_assert_double_eq_tol(rel_wall_s(36000, 3600, 400, 600, INFINITY), 40000, 1e-9);
	/* A huge M tends to the same limit (expm1 keeps the precision). */
	ck_assert_double_eq_tol(rel_goodput(3600, 400, 600, 1e15), 0.9, 1e-9);
}
END_TEST

/* Daly's T_w is smallest where d/dtau (e^{(tau+delta)/M} - 1) / tau = 0,
 * i.e. e^{(tau+delta)/M} (tau/M - 1) = -1; with x = tau/M - 1 this is
 * x e^x = -e^{-1-delta/M}, so tau* = M (1 + W0(-e^{-1-delta/M})). */
static double exact_best_interval_s(double delta_s, double mtbf_s)
{
	return mtbf_s * (1 + gsl_sf_lambert_W0(-exp(-1 - delta_s / mtbf_s)));
}

START_TEST(daly_is_near_the_exact_optimum)
{
	static const double cases[][2] = { /* delta, M */
		{ 100, 1e6 }, { 300, 36000 }, { 600, 14400 }, { 1800, 3600 }, { 3600, 3600 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		double d = cases[i][0], m = cases[i][1], best = exact_best_interval_s(d, m);
		double daly = rel_daly_interval_s(d, m), young = rel_young_interval_s(d, m);
		double g_best = rel_goodput(best, d, 0, m);
		/* The exact optimum beats its neighbours. */
		ck_assert(g_best > rel_goodput(best * 0.9, d, 0, m));
		ck_assert(g_best > rel_goodput(best * 1.1, d, 0, m));
		/* Daly's estimate is within 2% of it (0.01% while delta/M <= 0.05),
		 * and closer than Young's first-order one. */
		ck_assert_msg(fabs(daly / best - 1) < (d / m <= 0.05 ? 1e-4 : 0.02),
			      "daly %g vs exact %g", daly, best);
		ck_assert(fabs(daly / best - 1) < fabs(young / best - 1));
		ck_assert(rel_goodput(daly, d, 0, m) >= rel_goodput(young, d, 0, m));
		ck_assert(rel_goodput(daly, d, 0, m) <= g_best);
	}
}
END_TEST

START_TEST(goodput_falls_with_mtbf)
{
	double prev_opt = 1.1, prev_fixed = 1.1;
	for (double m = 1e7; m >= 600; m /= 1.5) {
		double g_opt = rel_goodput(rel_daly_interval_s(400, m), 400, 600, m);
		double g_fixed = rel_goodput(3600, 400, 600, m);
		ck_assert_msg(g_opt < prev_opt, "goodput %g at M %g not below %g", g_opt, m, prev_opt);
		ck_assert(g_fixed < prev_fixed);
		ck_assert(g_opt > 0 && g_opt >= g_fixed - 1e-12);
		prev_opt = g_opt;
		prev_fixed = g_fixed;
	}
	/* And the plan says the same through the component counts. */
	rel_params p = job;
	rel_plan a, b;
	char why[96];
	ck_assert_int_eq(rel_plan_for(&p, 360000, 0, &a, why, sizeof why), 0);
	p.part[REL_GPU].mtbf_s /= 10;
	ck_assert_int_eq(rel_plan_for(&p, 360000, 0, &b, why, sizeof why), 0);
	ck_assert(b.mtbf_s < a.mtbf_s && b.goodput < a.goodput && b.wall_s > a.wall_s);
}
END_TEST

START_TEST(plan_fields_and_errors)
{
	rel_plan pl;
	char why[96];
	ck_assert_int_eq(rel_plan_for(&job, 360000, 6000, &pl, why, sizeof why), 0);
	ck_assert_double_eq_tol(pl.mtbf_s, 50000, 1e-9);
	ck_assert_double_eq_tol(pl.ckpt_s, 400, 1e-12);
	ck_assert_double_eq(pl.interval_s, 6000);
	ck_assert_double_eq_tol(pl.goodput, 0.8682973146073791, 1e-12);
	ck_assert_double_eq_tol(pl.wall_s, 414604.5299734485, 1e-6);
	ck_assert_double_eq_tol(pl.young_s, 6324.555320336759, 1e-9);
	ck_assert_double_eq_tol(pl.daly_s, 6060.699567145798, 1e-9);
	ck_assert(pl.daly_goodput > pl.goodput);
	ck_assert_double_eq_tol(pl.daly_wall_s, 360000 / pl.daly_goodput, 1e-6);
	/* Interval 0: use Daly's. */
	ck_assert_int_eq(rel_plan_for(&job, 360000, 0, &pl, why, sizeof why), 0);
	ck_assert_double_eq(pl.interval_s, pl.daly_s);

	rel_params p = job;
	p.part[REL_SWITCH].mtbf_s = 0;
	ck_assert_int_eq(rel_plan_for(&p, 1, 0, &pl, why, sizeof why), SIM_EINVAL);
	ck_assert_str_eq(why, "switch MTBF must be a positive finite time");
	p = job;
	p.restart_s = -1;
	ck_assert_int_eq(rel_params_check(&p, why, sizeof why), SIM_EINVAL);
	p = job;
	p.ckpt_write_Bps = 0;
	ck_assert_int_eq(rel_params_check(&p, why, sizeof why), SIM_EINVAL);
	ck_assert_int_eq(rel_plan_for(&job, 0, 0, &pl, why, sizeof why), SIM_EINVAL);
	ck_assert_int_eq(rel_plan_for(&job, 1, -5, &pl, why, sizeof why), SIM_EINVAL);
	p = job;
	for (int k = 0; k < REL_KINDS; k++)
		p.part[k].count = 0;
	ck_assert_int_eq(rel_plan_for(&p, 1, 0, &pl, why, sizeof why), SIM_EINVAL);
	ck_assert_str_eq(why, "no failures, so no optimal checkpoint interval: give one");
	ck_assert_int_eq(rel_plan_for(&p, 36000, 3600, &pl, why, sizeof why), 0);
	ck_assert_double_eq_tol(pl.goodput, 0.9, 1e-15);
	ck_assert_double_eq(pl.daly_goodput, 1.0);
}
END_TEST

/* A checkpoint/restart job on the engine: segments of tau compute + delta
 * checkpoint; failures a Poisson process of rate 1/M that strikes in any
 * phase; a failure throws away the segment (or restart) in progress and
 * begins a restart of R. The job ends when `segments` segments completed. */
typedef struct mc_job {
	sim_rng *fail;
	double mtbf_s;
	sim_time segment_ps, restart_ps;
	uint32_t segments, done;
	sim_event_id phase, next_fail;
	sim_time finish;
} mc_job;

static sim_time ps(double s)
{
	sim_time t;
	ck_assert_int_eq(sim_time_from_s(s, &t), 0);
	return t;
}

static void on_failure(sim_engine *eng, void *obj, uint64_t data);

static void on_segment_end(sim_engine *eng, void *obj, uint64_t data)
{
	mc_job *j = obj;
	(void)data;
	if (++j->done == j->segments) {
		j->finish = sim_now(eng);
		sim_cancel(eng, j->next_fail);
		return;
	}
	ck_assert_int_eq(sim_schedule_in(eng, j->segment_ps, on_segment_end, j, 0, &j->phase), 0);
}

static void on_restart_end(sim_engine *eng, void *obj, uint64_t data)
{
	mc_job *j = obj;
	(void)data;
	ck_assert_int_eq(sim_schedule_in(eng, j->segment_ps, on_segment_end, j, 0, &j->phase), 0);
}

static void schedule_failure(sim_engine *eng, mc_job *j)
{
	sim_time gap = ps(sim_rng_exponential(j->fail, j->mtbf_s));
	ck_assert_int_eq(sim_schedule_in(eng, gap, on_failure, j, 0, &j->next_fail), 0);
}

static void on_failure(sim_engine *eng, void *obj, uint64_t data)
{
	mc_job *j = obj;
	(void)data;
	ck_assert(sim_cancel(eng, j->phase));
	ck_assert_int_eq(sim_schedule_in(eng, j->restart_ps, on_restart_end, j, 0, &j->phase), 0);
	schedule_failure(eng, j);
}

/* One replication's wall time, seconds. */
static double mc_wall_s(uint64_t seed, double tau, double delta, double r, double m,
			uint32_t segments)
{
	sim_engine *eng = sim_engine_new();
	mc_job j = { .fail = sim_rng_new(seed, "rel.mc.failures"), .mtbf_s = m,
		     .segment_ps = ps(tau + delta), .restart_ps = ps(r), .segments = segments };
	ck_assert(eng && j.fail);
	ck_assert_int_eq(sim_schedule_in(eng, j.segment_ps, on_segment_end, &j, 0, &j.phase), 0);
	schedule_failure(eng, &j);
	sim_run(eng);
	ck_assert_uint_eq(j.done, segments);
	sim_engine_free(eng);
	sim_rng_free(j.fail);
	return sim_time_to_s(j.finish);
}

/* Replicates the job and returns Daly's T_w; *acc gets the wall times,
 * *good the per-replication goodputs. */
static double mc_run(double tau, double delta, double r, double m, uint32_t segments,
		     uint32_t reps, stats_acc *acc, stats_acc *good)
{
	double useful = tau * segments;
	stats_acc_init(acc);
	stats_acc_init(good);
	for (uint64_t rep = 0; rep < reps; rep++) {
		double w = mc_wall_s(rep, tau, delta, r, m, segments);
		stats_acc_add(acc, w);
		stats_acc_add(good, useful / w);
	}
	return rel_wall_s(useful, tau, delta, r, m);
}

START_TEST(monte_carlo_contains_daly)
{
	/* M 4 h, checkpoint 10 min, restart 20 min, 1 h between checkpoints,
	 * 48 h of compute: Daly's T_w = 254,422 s, goodput 0.679. */
	stats_acc w, g;
	double half, want = mc_run(3600, 600, 1200, 14400, 48, 2000, &w, &g);
	ck_assert_int_eq(stats_acc_ci95(&w, &half), 0);
	ck_assert_msg(fabs(stats_acc_mean(&w) - want) <= half, "mean %.1f s, Daly %.1f s, CI +-%.1f",
		      stats_acc_mean(&w), want, half);
	ck_assert(half / want < 0.01);
	/* Daly's goodput is T_s / E[T_w], which the ratio of the means matches.
	 * The mean of the per-replication ratios T_s / T_w is a different
	 * quantity: by Jensen's inequality it is larger, by about CV^2 of T_w. */
	double g_daly = 48 * 3600 / want;
	double cv = stats_acc_stddev(&w) / stats_acc_mean(&w);
	ck_assert_double_eq_tol(48 * 3600 / stats_acc_mean(&w), g_daly, g_daly * half / want * 1.01);
	ck_assert(stats_acc_mean(&g) > g_daly);
	ck_assert_double_eq_tol(stats_acc_mean(&g) / g_daly - 1, cv * cv, cv * cv * 0.5);
}
END_TEST

START_TEST(monte_carlo_needs_failures_during_restart)
{
	/* M 1 h, checkpoint 30 min, restart 30 min: failures often strike a
	 * restart. Daly's T_w counts them (the factor e^{R/M}); a model whose
	 * restarts never fail, (M + R)(e^{(tau+delta)/M} - 1) per segment, is
	 * 9% lower and must fall outside the interval. */
	stats_acc w, g;
	double half, want = mc_run(3600, 1800, 1800, 3600, 10, 2000, &w, &g);
	double no_restart_fail = (3600 + 1800) * expm1(5400.0 / 3600) * 10;
	ck_assert_int_eq(stats_acc_ci95(&w, &half), 0);
	ck_assert_msg(fabs(stats_acc_mean(&w) - want) <= half, "mean %.1f s, Daly %.1f s, CI +-%.1f",
		      stats_acc_mean(&w), want, half);
	ck_assert(fabs(stats_acc_mean(&w) - no_restart_fail) > 3 * half);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("reliab");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, closed_forms_by_hand);
	tcase_add_test(tc, no_failures_costs_only_checkpoints);
	tcase_add_test(tc, daly_is_near_the_exact_optimum);
	tcase_add_test(tc, goodput_falls_with_mtbf);
	tcase_add_test(tc, plan_fields_and_errors);
	tcase_add_test(tc, monte_carlo_contains_daly);
	tcase_add_test(tc, monte_carlo_needs_failures_during_restart);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
