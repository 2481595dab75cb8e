/* models/reliab: closed forms against hand-computed values, Daly's interval
 * against the exact optimum of his own wall-time model, goodput against
 * MTBF, and a Monte Carlo checkpoint/restart job on the engine whose mean
 * wall time must contain Daly's T_w in its 95% confidence interval; the
 * same for asynchronous checkpoints (snapshot, background persist). */
#include <string.h>
#include <check.h>
#include <math.h>
#include <stdbool.h>
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
	/* A checkpoint 15,000 MTBFs long (108 GB at 1 kb/s against the
	 * cluster's MTBF): exp((tau + delta) / M) overflows, no segment ever
	 * commits, and the plan says so instead of an infinite time. */
	p = job;
	p.ckpt_write_Bps = 125;
	p.ckpt_bytes = 108e9;
	ck_assert_int_eq(rel_plan_for(&p, 360000, 600, &pl, why, sizeof why), SIM_ERANGE);
	ck_assert_ptr_nonnull(strstr(why, "never completes"));
	p.mode = REL_ASYNC;
	p.snapshot_bytes = 1e9;
	p.snapshot_Bps = 1e9;
	ck_assert_int_eq(rel_plan_for(&p, 360000, 600, &pl, why, sizeof why), SIM_ERANGE);
	ck_assert_ptr_nonnull(strstr(why, "never completes"));
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

START_TEST(async_closed_forms_by_hand)
{
	/* M 50,000 s, snapshot 20 s, persist 400 s, restart 600 s, tau 6000 s:
	 * P = 6000 + 20 = 6020, A = 6000 + 20 + 400 = 6420;
	 * E_steady = 50000 (1 - e^-0.1204) e^{(600 + 6420) / 50000}
	 *          = 50000 x 0.1134343 x 1.1507340 = 6526.633 s,
	 * E_fresh = 50000 e^0.012 (e^0.1284 - 1) = 6933.086 s;
	 * 100 h of compute = 60 segments: T_w = 6933.086 + 59 x 6526.633 =
	 * 392,004.43 s; long-run goodput 6000 / 6526.633 = 0.91931, against
	 * 0.86830 for the same job checkpointing synchronously (delta 400 s). */
	ck_assert_double_eq_tol(rel_async_segment_s(6000, 20, 400, 600, 50000), 6526.633019209453,
				1e-8);
	ck_assert_double_eq_tol(rel_async_first_s(6000, 20, 400, 600, 50000), 6933.085577243352,
				1e-8);
	ck_assert_double_eq_tol(rel_async_wall_s(360000, 6000, 20, 400, 600, 50000),
				392004.43371060106, 1e-6);
	ck_assert_double_eq_tol(rel_async_goodput(6000, 20, 400, 600, 50000), 0.91931015308208,
				1e-12);
	/* Persist longer than the interval: tau 300 s, P = 400 + 20 = 420 (the
	 * training waits 100 s per checkpoint), A = 720:
	 * E_steady = 50000 (1 - e^-0.0084) e^0.0264 = 429.4295 s. */
	ck_assert_double_eq_tol(rel_async_segment_s(300, 20, 400, 600, 50000), 429.42952906311757,
				1e-9);
	/* Young, first order: sqrt(2 x 20 x 50000) = 1414.21 >= W = 400;
	 * snapshot 2 s, persist 1000 s: sqrt(2e5) = 447.2 < W, so W;
	 * W^2 = 1e10 > (W + delta) M = 5e9: sqrt(5e9) = 70710.68. */
	ck_assert_double_eq_tol(rel_async_young_interval_s(20, 400, 50000), 1414.213562373095,
				1e-9);
	ck_assert_double_eq(rel_async_young_interval_s(2, 1000, 50000), 1000);
	ck_assert_double_eq_tol(rel_async_young_interval_s(0, 1e5, 5e4), 70710.67811865475, 1e-6);
	ck_assert(isinf(rel_async_young_interval_s(20, 400, INFINITY)));
	/* No failures: the persist only adds to the first segment and the
	 * wait, never to the others. */
	ck_assert_double_eq(rel_async_segment_s(6000, 20, 400, 600, INFINITY), 6020);
	ck_assert_double_eq(rel_async_segment_s(300, 20, 400, 600, INFINITY), 420);
	ck_assert_double_eq(rel_async_wall_s(36000, 6000, 20, 400, 600, INFINITY),
			    6420 + 5 * 6020);
}
END_TEST

START_TEST(async_without_persist_is_daly)
{
	/* W = 0: P = A, E_steady and E_fresh are both Daly's segment. */
	static const double cases[][4] = { /* tau, delta, R, M */
		{ 6000, 400, 600, 50000 }, { 3600, 1800, 1800, 3600 }, { 100, 1, 0, 1e6 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		double t = cases[i][0], d = cases[i][1], r = cases[i][2], m = cases[i][3];
		double daly = rel_wall_s(10 * t, t, d, r, m);
		ck_assert_double_eq_tol(rel_async_wall_s(10 * t, t, d, 0, r, m), daly, daly * 1e-12);
		ck_assert_double_eq_tol(rel_async_goodput(t, d, 0, r, m), rel_goodput(t, d, r, m),
					1e-12);
		/* And the optimum is the exact one of Daly's model. */
		if (r == 0)
			ck_assert_double_eq_tol(rel_async_best_interval_s(d, 0, 0, m),
						exact_best_interval_s(d, m),
						exact_best_interval_s(d, m) * 1e-6);
	}
}
END_TEST

START_TEST(async_best_interval_beats_a_grid)
{
	static const double cases[][4] = { /* snapshot, persist, R, M */
		{ 20, 400, 600, 50000 }, { 2, 1000, 600, 50000 }, { 1, 3000, 300, 20000 },
		{ 60, 60, 0, 3600 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		double d = cases[i][0], w = cases[i][1], r = cases[i][2], m = cases[i][3];
		double best = rel_async_best_interval_s(d, w, r, m);
		double g = rel_async_goodput(best, d, w, r, m), young;
		for (double t = m * 1e-4; t < 3 * m; t *= 1.001)
			ck_assert_msg(rel_async_goodput(t, d, w, r, m) <= g * (1 + 1e-12),
				      "case %zu: tau %g beats the optimum %g", i, t, best);
		/* Young's first-order interval is close while everything is
		 * small next to M (within 10 % in goodput lost). */
		young = rel_async_young_interval_s(d, w, m);
		if (w < 0.05 * m && d < 0.01 * m)
			ck_assert_msg(1 - rel_async_goodput(young, d, w, r, m) < 1.1 * (1 - g),
				      "case %zu: Young %g", i, young);
	}
	ck_assert(isinf(rel_async_best_interval_s(20, 400, 600, INFINITY)));
}
END_TEST

START_TEST(async_plan_fields_and_errors)
{
	rel_params p = job;
	rel_plan pl, sync;
	char why[96];
	p.mode = REL_ASYNC;
	p.snapshot_bytes = 1.6e12 / 512; /* 3.125 GB per GPU at 156.25 MB/s: 20 s */
	p.snapshot_Bps = 1.5625e8;
	ck_assert_int_eq(rel_plan_for(&p, 360000, 6000, &pl, why, sizeof why), 0);
	ck_assert_int_eq(pl.mode, REL_ASYNC);
	ck_assert_double_eq_tol(pl.ckpt_s, 20, 1e-12);
	ck_assert_double_eq_tol(pl.persist_s, 400, 1e-12);
	ck_assert_double_eq(pl.wait_s, 0);
	ck_assert_double_eq_tol(pl.wall_s, 392004.43371060106, 1e-6);
	ck_assert_double_eq_tol(pl.goodput, 360000 / 392004.43371060106, 1e-12);
	ck_assert_double_eq_tol(pl.young_s, 1414.213562373095, 1e-9);
	ck_assert(pl.daly_goodput >= rel_async_goodput(6000, 20, 400, 600, 50000));
	ck_assert_int_eq(rel_plan_for(&job, 360000, 6000, &sync, why, sizeof why), 0);
	ck_assert(pl.goodput > sync.goodput && pl.wall_s < sync.wall_s);
	/* Interval below the persist: the training waits for it. */
	ck_assert_int_eq(rel_plan_for(&p, 360000, 300, &pl, why, sizeof why), 0);
	ck_assert_double_eq_tol(pl.wait_s, 100, 1e-12);
	/* Interval 0: the optimum. */
	ck_assert_int_eq(rel_plan_for(&p, 360000, 0, &pl, why, sizeof why), 0);
	ck_assert_double_eq(pl.interval_s, pl.daly_s);
	p.snapshot_Bps = 0;
	ck_assert_int_eq(rel_plan_for(&p, 360000, 0, &pl, why, sizeof why), SIM_EINVAL);
	ck_assert_str_eq(why, "async checkpoint: snapshot size and rate must be positive");
	p.snapshot_Bps = 1;
	p.snapshot_bytes = NAN;
	ck_assert_int_eq(rel_params_check(&p, why, sizeof why), SIM_EINVAL);
}
END_TEST

/* An asynchronous checkpoint/restart job on the engine, simulated as it
 * runs rather than through the renewal argument of reliab.h: compute tau;
 * snapshot delta_s (blocking) once the previous persist is done; then the
 * persist W runs beside the next compute; a failure (Poisson, any phase)
 * cancels compute, snapshot, persist and restart in flight, and the job
 * restarts after R from the last persisted segment. It ends when the last
 * segment is persisted. */
typedef struct mc_async {
	sim_rng *fail;
	double mtbf_s;
	sim_time tau_ps, snap_ps, persist_ps, restart_ps;
	uint32_t segments, persisted, computed;
	bool persisting, waiting;
	sim_event_id phase, persist, next_fail;
	sim_time finish;
} mc_async;

static void as_compute(sim_engine *eng, mc_async *j);
static void as_on_failure(sim_engine *eng, void *obj, uint64_t data);

static void as_on_snapshot_end(sim_engine *eng, void *obj, uint64_t data);

static void as_snapshot(sim_engine *eng, mc_async *j)
{
	ck_assert(!j->persisting);
	ck_assert_int_eq(sim_schedule_in(eng, j->snap_ps, as_on_snapshot_end, j, j->computed,
					 &j->phase), 0);
}

static void as_on_compute_end(sim_engine *eng, void *obj, uint64_t data)
{
	mc_async *j = obj;
	(void)data;
	j->computed++;
	if (j->persisting)
		j->waiting = true;
	else
		as_snapshot(eng, j);
}

static void as_on_persist_end(sim_engine *eng, void *obj, uint64_t data)
{
	mc_async *j = obj;
	j->persisted = (uint32_t)data;
	j->persisting = false;
	if (j->persisted == j->segments) {
		j->finish = sim_now(eng);
		ck_assert(sim_cancel(eng, j->next_fail));
		return;
	}
	if (j->waiting) {
		j->waiting = false;
		as_snapshot(eng, j);
	}
}

static void as_on_snapshot_end(sim_engine *eng, void *obj, uint64_t data)
{
	mc_async *j = obj;
	j->persisting = true;
	ck_assert_int_eq(sim_schedule_in(eng, j->persist_ps, as_on_persist_end, j, data,
					 &j->persist), 0);
	if (data < j->segments)
		as_compute(eng, j);
}

static void as_compute(sim_engine *eng, mc_async *j)
{
	ck_assert_int_eq(sim_schedule_in(eng, j->tau_ps, as_on_compute_end, j, 0, &j->phase), 0);
}

static void as_on_restart_end(sim_engine *eng, void *obj, uint64_t data)
{
	(void)data;
	as_compute(eng, obj);
}

static void as_schedule_failure(sim_engine *eng, mc_async *j)
{
	sim_time gap = ps(sim_rng_exponential(j->fail, j->mtbf_s));
	ck_assert_int_eq(sim_schedule_in(eng, gap, as_on_failure, j, 0, &j->next_fail), 0);
}

static void as_on_failure(sim_engine *eng, void *obj, uint64_t data)
{
	mc_async *j = obj;
	(void)data;
	/* Waiting for a persist, or persisting the last segment, the job has
	 * no phase event of its own. */
	ck_assert(sim_cancel(eng, j->phase) || j->waiting ||
		  (j->persisting && j->computed == j->segments));
	ck_assert(sim_cancel(eng, j->persist) == j->persisting);
	j->persisting = j->waiting = false;
	j->computed = j->persisted;
	ck_assert_int_eq(sim_schedule_in(eng, j->restart_ps, as_on_restart_end, j, 0, &j->phase), 0);
	as_schedule_failure(eng, j);
}

static double mc_async_wall_s(uint64_t seed, double tau, double snap, double persist, double r,
			      double m, uint32_t segments)
{
	sim_engine *eng = sim_engine_new();
	mc_async j = { .fail = sim_rng_new(seed, "rel.mc.async"), .mtbf_s = m,
		       .tau_ps = ps(tau), .snap_ps = ps(snap), .persist_ps = ps(persist),
		       .restart_ps = ps(r), .segments = segments };
	ck_assert(eng && j.fail);
	as_compute(eng, &j);
	as_schedule_failure(eng, &j);
	sim_run(eng);
	ck_assert_uint_eq(j.persisted, segments);
	sim_engine_free(eng);
	sim_rng_free(j.fail);
	return sim_time_to_s(j.finish);
}

/* Mean wall time of reps replications, its 95 % half-width in *half. */
static double mc_async_mean(double tau, double snap, double persist, double r, double m,
			    uint32_t segments, uint32_t reps, double *half)
{
	stats_acc w;
	stats_acc_init(&w);
	for (uint64_t rep = 0; rep < reps; rep++)
		stats_acc_add(&w, mc_async_wall_s(rep, tau, snap, persist, r, m, segments));
	ck_assert_int_eq(stats_acc_ci95(&w, half), 0);
	return stats_acc_mean(&w);
}

START_TEST(monte_carlo_contains_async)
{
	/* M 4 h, snapshot 2 min, persist 30 min, restart 20 min, 1 h between
	 * checkpoints, 48 h of compute: closed form 253,021 s (a run gave a
	 * mean of 252,678 +- 966 s). It must sit in the 95 % interval; the sync
	 * model with the snapshot as delta (a failure losing only the work
	 * since the last snapshot), 221,452 s, 12 % lower, must not. */
	double half, mean = mc_async_mean(3600, 120, 1800, 1200, 14400, 48, 2000, &half);
	double want = rel_async_wall_s(48 * 3600, 3600, 120, 1800, 1200, 14400);
	double snap_only = rel_wall_s(48 * 3600, 3600, 120, 1200, 14400);
	ck_assert_msg(fabs(mean - want) <= half, "mean %.1f s, closed form %.1f s, CI +-%.1f",
		      mean, want, half);
	ck_assert(half / want < 0.01);
	ck_assert_msg(mean - snap_only > 3 * half, "mean %.1f s, snapshot-only %.1f s", mean,
		      snap_only);
}
END_TEST

START_TEST(monte_carlo_async_waits_for_persist)
{
	/* Persist 40 min longer than the 30 min interval: the training waits
	 * 10 min per checkpoint (P = 40 min + snapshot 2 min). M 4 h, restart
	 * 20 min, 24 h of compute: closed form 164,892 s (a run gave 164,765
	 * +- 677 s). A model that forgets the wait (P = tau + delta_s),
	 * 129,426 s, must fall outside the interval. */
	double half, mean = mc_async_mean(1800, 120, 2400, 1200, 14400, 48, 2000, &half);
	double want = rel_async_wall_s(48 * 1800, 1800, 120, 2400, 1200, 14400);
	/* Without the wait: P = tau + delta_s; same A. */
	double m = 14400, p = 1800 + 120, a = 1800 + 120 + 2400;
	double no_wait = rel_async_first_s(1800, 120, 2400, 1200, m) +
			 47 * -m * expm1(-p / m) * exp((1200 + a) / m);
	ck_assert_msg(fabs(mean - want) <= half, "mean %.1f s, closed form %.1f s, CI +-%.1f",
		      mean, want, half);
	ck_assert(want - no_wait > 3 * half);
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
	tcase_add_test(tc, async_closed_forms_by_hand);
	tcase_add_test(tc, async_without_persist_is_daly);
	tcase_add_test(tc, async_best_interval_beats_a_grid);
	tcase_add_test(tc, async_plan_fields_and_errors);
	tcase_add_test(tc, monte_carlo_contains_async);
	tcase_add_test(tc, monte_carlo_async_waits_for_persist);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
