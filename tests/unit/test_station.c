/* sim/station: hand-traced schedules, FIFO with ties, speed, errors, and the
 * M/M/c closed form (Erlang C) inside the replications' 95% interval. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "sim/station.h"
#include "sim/stats.h"
#include "tests/unit/check_main.h"

/* Completions seen: (time, job id). */
struct log {
	sim_time t[256];
	uint64_t id[256];
	size_t n;
};

static void done_cb(sim_engine *eng, void *obj, uint64_t data)
{
	struct log *lg = obj;
	ck_assert_uint_lt(lg->n, 256);
	lg->t[lg->n] = sim_now(eng);
	lg->id[lg->n++] = data;
}

/* A scripted arrival: job `data` of the script arrives now. */
struct script {
	station *st;
	struct log lg;
	const sim_time *service;
};

static void arrive(sim_engine *eng, void *obj, uint64_t data)
{
	struct script *sc = obj;
	(void)eng;
	ck_assert_int_eq(station_submit(sc->st, sc->service[data], done_cb, &sc->lg, data), 0);
}

/* 2 servers; arrivals 0 10 20 30 45 ns, services 50 30 20 40 10 ns.
 *   t=0  J0 on a server (ends 50)      t=10 J1 on the other (ends 40)
 *   t=20 J2 waits   t=30 J3 waits      t=40 J1 ends, J2 starts (wait 20, ends 60)
 *   t=45 J4 waits behind J3            t=50 J0 ends, J3 starts (wait 20, ends 90)
 *   t=60 J2 ends, J4 starts (wait 15, ends 70)   t=70 J4 ends   t=90 J3 ends
 * Waits 0 0 20 20 15 ns: mean 11 ns. Busy = sum of services = 150 server-ns
 * over 90 ns: utilisation 150 / 180. Waiting jobs: 1 on [20,30), 2 on
 * [30,40), 1 on [40,45), 2 on [45,50), 1 on [50,60): integral 55 job-ns
 * (the sum of waits, as it must be), mean 55 / 90. */
START_TEST(hand_traced_two_servers)
{
	static const sim_time arr[] = { 0, 10, 20, 30, 45 };
	static const sim_time svc[] = { 50 * SIM_NS, 30 * SIM_NS, 20 * SIM_NS, 40 * SIM_NS,
					10 * SIM_NS };
	static const uint64_t want_id[] = { 1, 0, 2, 4, 3 };
	static const sim_time want_t[] = { 40, 50, 60, 70, 90 };
	sim_engine *eng = sim_engine_new();
	struct script sc = { .st = station_new(eng, 2), .service = svc };
	const stats_acc *w;
	for (uint64_t i = 0; i < 5; i++)
		ck_assert_int_eq(sim_schedule_at(eng, arr[i] * SIM_NS, arrive, &sc, i, NULL), 0);
	sim_run_until(eng, 45 * SIM_NS);
	ck_assert_uint_eq(station_busy(sc.st), 2);
	ck_assert_uint_eq(station_queue_len(sc.st), 2);
	sim_run(eng);
	ck_assert_uint_eq(sc.lg.n, 5);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_uint_eq(sc.lg.id[i], want_id[i]);
		ck_assert_int_eq(sc.lg.t[i], want_t[i] * SIM_NS);
	}
	w = station_wait_s(sc.st);
	ck_assert_uint_eq(stats_acc_count(w), 5);
	ck_assert_double_eq_tol(stats_acc_mean(w), 11e-9, 1e-18);
	ck_assert_double_eq_tol(stats_acc_max(w), 20e-9, 1e-18);
	ck_assert_double_eq(stats_acc_min(w), 0);
	ck_assert_uint_eq(station_jobs_served(sc.st), 5);
	ck_assert_double_eq_tol(station_elapsed_s(sc.st), 90e-9, 1e-18);
	ck_assert_double_eq_tol(station_busy_s(sc.st), 150e-9, 1e-18);
	ck_assert_double_eq_tol(station_utilisation(sc.st), 150.0 / 180.0, 1e-12);
	ck_assert_double_eq_tol(station_queue_len_mean(sc.st), 55.0 / 90.0, 1e-12);
	ck_assert_uint_eq(station_busy(sc.st), 0);
	station_free(sc.st);
	sim_engine_free(eng);
}
END_TEST

/* Submitted at one instant, jobs start in submission order; completions at
 * one instant hand servers out in FIFO order, and a job submitted from a
 * completion callback queues behind jobs already waiting. */
struct resubmit {
	station *st;
	struct log lg;
};

static void done_and_resubmit(sim_engine *eng, void *obj, uint64_t data)
{
	struct resubmit *r = obj;
	done_cb(eng, &r->lg, data);
	if (data == 0)
		ck_assert_int_eq(station_submit(r->st, 1, done_and_resubmit, r, 4), 0);
}

START_TEST(fifo_with_ties)
{
	sim_engine *eng = sim_engine_new();
	struct resubmit r = { .st = station_new(eng, 2) };
	static const sim_time want_t[] = { 10, 10, 20, 20, 21 };
	for (uint64_t i = 0; i < 4; i++)
		ck_assert_int_eq(station_submit(r.st, 10, done_and_resubmit, &r, i), 0);
	ck_assert_uint_eq(station_queue_len(r.st), 2);
	sim_run(eng);
	ck_assert_uint_eq(r.lg.n, 5);
	for (uint64_t i = 0; i < 5; i++) {
		ck_assert_uint_eq(r.lg.id[i], i);
		ck_assert_int_eq(r.lg.t[i], want_t[i]);
	}
	/* Waits: 0 0 10 10 and J4 from 10 to 20. */
	ck_assert_double_eq_tol(stats_acc_mean(station_wait_s(r.st)), 30e-12 / 5, 1e-20);
	station_free(r.st);
	sim_engine_free(eng);
}
END_TEST

/* The ring wraps (jobs leave from the front while more arrive) and then
 * grows while wrapped; order must survive both. */
START_TEST(ring_wraps_and_grows)
{
	sim_engine *eng = sim_engine_new();
	station *st = station_new(eng, 1);
	struct log lg = { .n = 0 };
	for (uint64_t i = 0; i < 60; i++)
		ck_assert_int_eq(station_submit(st, 1, done_cb, &lg, i), 0);
	sim_run_until(eng, 30);
	ck_assert_uint_eq(lg.n, 30);
	for (uint64_t i = 60; i < 160; i++)
		ck_assert_int_eq(station_submit(st, 1, done_cb, &lg, i), 0);
	ck_assert_uint_eq(station_queue_len(st), 129);
	sim_run(eng);
	ck_assert_uint_eq(lg.n, 160);
	for (uint64_t i = 0; i < 160; i++) {
		ck_assert_uint_eq(lg.id[i], i);
		ck_assert_int_eq(lg.t[i], (sim_time)i + 1);
	}
	station_free(st);
	sim_engine_free(eng);
}
END_TEST

/* Speed 2: a 100 ps job takes 50. Slowing to 0.5 while it runs leaves its
 * end alone; the next job, starting at 50, takes 200 and ends at 250. */
START_TEST(speed_factor)
{
	sim_engine *eng = sim_engine_new();
	station *st = station_new(eng, 1);
	struct log lg = { .n = 0 };
	ck_assert_int_eq(station_set_speed(st, 2.0), 0);
	ck_assert_int_eq(station_submit(st, 100, done_cb, &lg, 0), 0);
	ck_assert_int_eq(station_submit(st, 100, done_cb, &lg, 1), 0);
	ck_assert_int_eq(station_set_speed(st, 0.5), 0);
	ck_assert_double_eq(station_speed(st), 0.5);
	sim_run(eng);
	ck_assert_uint_eq(lg.n, 2);
	ck_assert_int_eq(lg.t[0], 50);
	ck_assert_int_eq(lg.t[1], 250);
	ck_assert_double_eq_tol(station_utilisation(st), 1.0, 1e-12);
	station_free(st);
	sim_engine_free(eng);
}
END_TEST

START_TEST(bad_arguments)
{
	sim_engine *eng = sim_engine_new();
	station *st = station_new(eng, 3);
	ck_assert_ptr_null(station_new(eng, 0));
	ck_assert_int_eq(station_submit(st, -1, NULL, NULL, 0), SIM_EINVAL);
	ck_assert_int_eq(station_set_speed(st, 0.0), SIM_EINVAL);
	ck_assert_int_eq(station_set_speed(st, -1.0), SIM_EINVAL);
	ck_assert_int_eq(station_set_speed(st, INFINITY), SIM_EINVAL);
	ck_assert_int_eq(station_set_speed(st, NAN), SIM_EINVAL);
	ck_assert_double_eq(station_speed(st), 1.0);
	/* Too slow for the time type: refused, nothing changes. */
	ck_assert_int_eq(station_set_speed(st, 1e-300), 0);
	ck_assert_int_eq(station_submit(st, SIM_S, NULL, NULL, 0), SIM_EOVERFLOW);
	/* Fits, but ends past the end of time once now > 0. */
	ck_assert_int_eq(station_set_speed(st, 1.0), 0);
	sim_run_until(eng, 10);
	ck_assert_int_eq(station_submit(st, SIM_TIME_MAX - 5, NULL, NULL, 0), SIM_EOVERFLOW);
	ck_assert_uint_eq(station_busy(st), 0);
	ck_assert_uint_eq(station_queue_len(st), 0);
	ck_assert_uint_eq(sim_events_pending(eng), 0);
	/* A job with no callback still runs and counts. */
	ck_assert_int_eq(station_submit(st, 5, NULL, NULL, 0), 0);
	sim_run(eng);
	ck_assert_uint_eq(station_jobs_served(st), 1);
	ck_assert_int_eq(sim_now(eng), 15);
	station_free(st);
	station_free(NULL);
	sim_engine_free(eng);
}
END_TEST

/* Empty window: NaN, not 0. A reset mid-job starts a new window. */
START_TEST(reset_window)
{
	sim_engine *eng = sim_engine_new();
	station *st = station_new(eng, 1);
	ck_assert(isnan(station_utilisation(st)));
	ck_assert(isnan(station_queue_len_mean(st)));
	ck_assert_int_eq(station_submit(st, 100, NULL, NULL, 0), 0);
	sim_run_until(eng, 50);
	station_reset_stats(st);
	sim_run_until(eng, 200);
	ck_assert_double_eq_tol(station_utilisation(st), 50.0 / 150.0, 1e-12);
	ck_assert_uint_eq(station_jobs_served(st), 1);
	ck_assert_uint_eq(stats_acc_count(station_wait_s(st)), 0);
	station_free(st);
	sim_engine_free(eng);
}
END_TEST

/* M/M/c with c servers, arrival rate lambda, service rate mu, offered load
 * a = lambda / mu, rho = a / c. Erlang C: the probability of waiting is
 *   C = (a^c / c!) (c / (c - a)) / (sum_{k<c} a^k / k! + (a^c / c!) (c / (c - a)))
 * and the mean wait Wq = C / (c mu - lambda); utilisation is rho and the
 * mean queue length Lq = lambda Wq (Little). */
static double erlang_c(unsigned c, double a)
{
	double term = 1, sum = 0, top;
	for (unsigned k = 0; k < c; k++) {
		sum += term;
		term *= a / (k + 1);
	}
	top = term * c / (c - a);
	return top / (sum + top);
}

struct mmc {
	sim_engine *eng;
	station *st;
	sim_rng *arrivals, *service;
	double mean_ia_s, mean_svc_s;
};

/* Hot path: a passing ck_assert costs Check a pipe write, so these test
 * with `if` and fail only when something is wrong. */
static sim_time draw_ps(sim_rng *r, double mean_s)
{
	sim_time t;
	if (sim_time_from_s(sim_rng_exponential(r, mean_s), &t))
		ck_abort_msg("exponential draw does not fit in sim_time");
	return t;
}

static void mmc_arrival(sim_engine *eng, void *obj, uint64_t data)
{
	struct mmc *m = obj;
	int rc = station_submit(m->st, draw_ps(m->service, m->mean_svc_s), NULL, NULL, 0);
	if (rc == 0)
		rc = sim_schedule_in(eng, draw_ps(m->arrivals, m->mean_ia_s), mmc_arrival, m, data,
				     NULL);
	if (rc)
		ck_abort_msg("mmc arrival: %s", sim_strerror(rc));
}

struct mmc_result {
	double util, wq_s, lq;
};

/* One replication: warm up, reset the window, observe. */
static struct mmc_result mmc_replication(uint64_t seed, unsigned c, double lambda, double mu,
					 sim_time warm, sim_time run)
{
	struct mmc m = { .eng = sim_engine_new(), .mean_ia_s = 1 / lambda, .mean_svc_s = 1 / mu };
	struct mmc_result res;
	m.st = station_new(m.eng, c);
	m.arrivals = sim_rng_new(seed, "mmc.arrivals");
	m.service = sim_rng_new(seed, "mmc.service");
	ck_assert(m.st && m.arrivals && m.service);
	ck_assert_int_eq(sim_schedule_at(m.eng, 0, mmc_arrival, &m, 0, NULL), 0);
	sim_run_until(m.eng, warm);
	station_reset_stats(m.st);
	sim_run_until(m.eng, warm + run);
	res = (struct mmc_result){ .util = station_utilisation(m.st),
				   .wq_s = stats_acc_mean(station_wait_s(m.st)),
				   .lq = station_queue_len_mean(m.st) };
	station_free(m.st);
	sim_rng_free(m.arrivals);
	sim_rng_free(m.service);
	sim_engine_free(m.eng);
	return res;
}

static void assert_in_ci(const char *what, const stats_acc *a, double want, double rel)
{
	double half, mean = stats_acc_mean(a);
	ck_assert_int_eq(stats_acc_ci95(a, &half), 0);
	ck_assert_msg(fabs(mean - want) <= half, "%s: closed form %g outside %g +- %g", what,
		      want, mean, half);
	ck_assert_msg(fabs(mean - want) <= rel * want, "%s: %g is more than %g%% from %g", what,
		      mean, rel * 100, want);
}

/* c = 4, rho = 0.8, mean service 1 us: C(4, 3.2) = 0.5964, Wq = 0.7455 us.
 * R = 20 replications of 50 ms (about 160,000 jobs each) after 1 ms of
 * warm-up, seeds 1..20. A 95% interval misses the truth for one seed set in
 * twenty by design: 10 replications of 100 ms (seeds 1..10) drew services
 * 0.1% long on average and put utilisation 2.2 half-widths high; a failure
 * here after a change deserves a look at other seeds before a verdict. */
START_TEST(mmc_matches_erlang_c)
{
	const unsigned c = 4, R = 20;
	const double mu = 1e6, lambda = 0.8 * c * mu;
	const double wq = erlang_c(c, lambda / mu) / (c * mu - lambda);
	stats_acc util, wait, lq;
	stats_acc_init(&util);
	stats_acc_init(&wait);
	stats_acc_init(&lq);
	ck_assert_double_eq_tol(erlang_c(c, 3.2), 0.5964, 1e-4);
	for (uint64_t seed = 1; seed <= R; seed++) {
		struct mmc_result r = mmc_replication(seed, c, lambda, mu, SIM_MS, 50 * SIM_MS);
		stats_acc_add(&util, r.util);
		stats_acc_add(&wait, r.wq_s);
		stats_acc_add(&lq, r.lq);
	}
	assert_in_ci("utilisation", &util, 0.8, 0.01);
	assert_in_ci("mean wait", &wait, wq, 0.03);
	assert_in_ci("mean queue length", &lq, lambda * wq, 0.03);
}
END_TEST

static Suite *station_suite(void)
{
	Suite *s = suite_create("station");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, hand_traced_two_servers);
	tcase_add_test(tc, fifo_with_ties);
	tcase_add_test(tc, ring_wraps_and_grows);
	tcase_add_test(tc, speed_factor);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, reset_window);
	tcase_add_test(tc, mmc_matches_erlang_c);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN_FORKED(station_suite)
