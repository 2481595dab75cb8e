/* sim/engine: deterministic order, cancellation, run control, the past. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "tests/unit/check_main.h"

/* A log of (time, tag) for events that ran. */
struct trace {
	sim_time t[4096];
	uint64_t tag[4096];
	size_t n;
};

static void record(sim_engine *eng, void *obj, uint64_t data)
{
	struct trace *tr = obj;
	ck_assert_uint_lt(tr->n, 4096);
	tr->t[tr->n] = sim_now(eng);
	tr->tag[tr->n++] = data;
}

START_TEST(order_by_time_then_insertion)
{
	struct trace tr = { .n = 0 };
	sim_engine *eng = sim_engine_new();
	static const sim_time when[] = { 50, 10, 50, 30, 10, 50, 0 };
	for (uint64_t i = 0; i < 7; i++)
		ck_assert_int_eq(sim_schedule_at(eng, when[i], record, &tr, i, NULL), 0);
	ck_assert_uint_eq(sim_events_pending(eng), 7);
	ck_assert_uint_eq(sim_run(eng), 7);
	static const uint64_t want[] = { 6, 1, 4, 3, 0, 2, 5 };
	for (size_t i = 0; i < 7; i++)
		ck_assert_uint_eq(tr.tag[i], want[i]);
	ck_assert_int_eq(sim_now(eng), 50);
	ck_assert_uint_eq(sim_events_run(eng), 7);
	sim_engine_free(eng);
}
END_TEST

/* A handler that schedules more work at the same instant: it runs after
 * everything already queued for that instant. */
static void spawn_same_time(sim_engine *eng, void *obj, uint64_t data)
{
	record(eng, obj, data);
	if (data < 3)
		ck_assert_int_eq(sim_schedule_in(eng, 0, spawn_same_time, obj, data + 10, NULL), 0);
}

START_TEST(same_instant_scheduling_runs_after)
{
	struct trace tr = { .n = 0 };
	sim_engine *eng = sim_engine_new();
	for (uint64_t i = 0; i < 3; i++)
		sim_schedule_at(eng, 100, spawn_same_time, &tr, i, NULL);
	sim_run(eng);
	static const uint64_t want[] = { 0, 1, 2, 10, 11, 12 };
	ck_assert_uint_eq(tr.n, 6);
	for (size_t i = 0; i < 6; i++) {
		ck_assert_uint_eq(tr.tag[i], want[i]);
		ck_assert_int_eq(tr.t[i], 100);
	}
	sim_engine_free(eng);
}
END_TEST

START_TEST(cancel_pending_and_stale)
{
	struct trace tr = { .n = 0 };
	sim_engine *eng = sim_engine_new();
	sim_event_id a, b, c;
	sim_schedule_at(eng, 10, record, &tr, 1, &a);
	sim_schedule_at(eng, 20, record, &tr, 2, &b);
	sim_schedule_at(eng, 30, record, &tr, 3, &c);
	ck_assert(sim_pending_id(eng, b));
	ck_assert(sim_cancel(eng, b));
	ck_assert(!sim_pending_id(eng, b));
	ck_assert(!sim_cancel(eng, b));             /* twice: no */
	ck_assert(!sim_cancel(eng, SIM_EVENT_NONE)); /* nothing */
	ck_assert_uint_eq(sim_events_pending(eng), 2);
	/* The freed slot is reused; the old id must not cancel the new event. */
	sim_event_id d;
	sim_schedule_at(eng, 25, record, &tr, 4, &d);
	ck_assert_uint_eq(d.slot, b.slot);
	ck_assert(!sim_cancel(eng, b));
	sim_run(eng);
	ck_assert_uint_eq(tr.n, 3);
	ck_assert_uint_eq(tr.tag[0], 1);
	ck_assert_uint_eq(tr.tag[1], 4);
	ck_assert_uint_eq(tr.tag[2], 3);
	ck_assert(!sim_cancel(eng, a)); /* already ran */
	sim_engine_free(eng);
}
END_TEST

struct canceller {
	sim_event_id victim;
	struct trace *tr;
	bool cancelled;
};

static void cancel_other(sim_engine *eng, void *obj, uint64_t data)
{
	struct canceller *c = obj;
	(void)data;
	c->cancelled = sim_cancel(eng, c->victim);
}

START_TEST(cancel_from_a_handler_at_the_same_instant)
{
	struct trace tr = { .n = 0 };
	struct canceller c = { .tr = &tr };
	sim_engine *eng = sim_engine_new();
	sim_schedule_at(eng, 5, cancel_other, &c, 0, NULL);
	sim_schedule_at(eng, 5, record, &tr, 7, &c.victim);
	sim_run(eng);
	ck_assert(c.cancelled);
	ck_assert_uint_eq(tr.n, 0);
	sim_engine_free(eng);
}
END_TEST

/* Many cancellations trigger the sweep of stale heap entries; order of the
 * survivors is unchanged. */
START_TEST(mass_cancellation)
{
	static struct trace tr;
	sim_engine *eng = sim_engine_new();
	sim_event_id ids[4000];
	tr.n = 0;
	for (uint64_t i = 0; i < 4000; i++)
		sim_schedule_at(eng, (sim_time)(4000 - i), record, &tr, i, &ids[i]);
	for (size_t i = 0; i < 4000; i++)
		if (i % 4 != 0)
			ck_assert(sim_cancel(eng, ids[i]));
	ck_assert_uint_eq(sim_events_pending(eng), 1000);
	sim_run(eng);
	ck_assert_uint_eq(tr.n, 1000);
	for (size_t i = 1; i < tr.n; i++)
		ck_assert_int_lt(tr.t[i - 1], tr.t[i]);
	sim_engine_free(eng);
}
END_TEST

START_TEST(run_until_and_stop)
{
	struct trace tr = { .n = 0 };
	sim_engine *eng = sim_engine_new();
	for (uint64_t i = 1; i <= 5; i++)
		sim_schedule_at(eng, (sim_time)(i * 10), record, &tr, i, NULL);
	ck_assert_uint_eq(sim_run_until(eng, 30), 3);
	ck_assert_int_eq(sim_now(eng), 30);
	ck_assert_uint_eq(sim_run_until(eng, 45), 1);
	ck_assert_int_eq(sim_now(eng), 45);
	ck_assert_uint_eq(sim_run_until(eng, 45), 0);
	ck_assert_uint_eq(sim_events_pending(eng), 1);
	ck_assert_uint_eq(sim_run(eng), 1);
	ck_assert_int_eq(sim_now(eng), 50);
	sim_engine_free(eng);
}
END_TEST

static void stopper(sim_engine *eng, void *obj, uint64_t data)
{
	record(eng, obj, data);
	if (data == 2)
		sim_stop(eng);
}

START_TEST(stop_request)
{
	struct trace tr = { .n = 0 };
	sim_engine *eng = sim_engine_new();
	for (uint64_t i = 1; i <= 4; i++)
		sim_schedule_at(eng, (sim_time)i, stopper, &tr, i, NULL);
	ck_assert_uint_eq(sim_run(eng), 2);
	ck_assert_uint_eq(sim_events_pending(eng), 2);
	ck_assert_uint_eq(sim_run(eng), 2); /* resumes */
	sim_engine_free(eng);
}
END_TEST

static void noop(sim_engine *eng, void *obj, uint64_t data)
{
	(void)eng, (void)obj, (void)data;
}

START_TEST(past_is_a_bug)
{
	sim_engine *eng = sim_engine_new();
	sim_schedule_at(eng, 100, noop, NULL, 0, NULL);
	sim_run(eng);
	sim_schedule_at(eng, 99, noop, NULL, 0, NULL); /* aborts */
}
END_TEST

START_TEST(negative_delay_is_a_bug)
{
	sim_engine *eng = sim_engine_new();
	sim_schedule_in(eng, -1, noop, NULL, 0, NULL); /* aborts */
}
END_TEST

START_TEST(overflow_is_an_error)
{
	sim_engine *eng = sim_engine_new();
	sim_schedule_at(eng, SIM_TIME_MAX - 10, noop, NULL, 0, NULL);
	sim_run(eng);
	ck_assert_int_eq(sim_schedule_in(eng, 11, noop, NULL, 0, NULL), SIM_EOVERFLOW);
	ck_assert_int_eq(sim_schedule_in(eng, 10, noop, NULL, 0, NULL), SIM_OK);
	sim_engine_free(eng);
}
END_TEST

/* When the insertion sequence runs out, pending events are renumbered in
 * their current order: ties still run in insertion order across it. */
START_TEST(sequence_renumbering_keeps_order)
{
	struct trace tr = { .n = 0 };
	sim_engine *eng = sim_engine_new();
	sim_event_id gone;
	sim_engine_debug_set_next_seq(eng, (UINT64_C(1) << 36) - 3);
	for (uint64_t i = 0; i < 8; i++)
		sim_schedule_at(eng, (sim_time)(i % 2 ? 7 : 3), record, &tr, i,
				i == 4 ? &gone : NULL);
	ck_assert(sim_cancel(eng, gone));
	sim_run(eng);
	static const uint64_t want[] = { 0, 2, 6, 1, 3, 5, 7 };
	ck_assert_uint_eq(tr.n, 7);
	for (size_t i = 0; i < 7; i++)
		ck_assert_uint_eq(tr.tag[i], want[i]);
	sim_engine_free(eng);
}
END_TEST

/* The same seed gives the same event sequence; another seed does not. */
struct chain {
	sim_rng *r;
	struct trace *tr;
	int left;
};

static void chain_step(sim_engine *eng, void *obj, uint64_t data)
{
	struct chain *c = obj;
	record(eng, c->tr, data);
	if (c->left-- > 0)
		sim_schedule_in(eng, (sim_time)sim_rng_below(c->r, 5), chain_step, c,
				sim_rng_below(c->r, 1000), NULL);
}

static void run_chains(uint64_t seed, struct trace *tr)
{
	sim_engine *eng = sim_engine_new();
	struct chain c[3];
	static const char *const names[] = { "a", "b", "c" };
	tr->n = 0;
	for (int i = 0; i < 3; i++) {
		c[i] = (struct chain){ sim_rng_new(seed, names[i]), tr, 300 };
		sim_schedule_at(eng, 0, chain_step, &c[i], (uint64_t)i, NULL);
	}
	sim_run(eng);
	for (int i = 0; i < 3; i++)
		sim_rng_free(c[i].r);
	sim_engine_free(eng);
}

START_TEST(deterministic_per_seed)
{
	static struct trace x, y, z;
	run_chains(42, &x);
	run_chains(42, &y);
	run_chains(43, &z);
	ck_assert_uint_eq(x.n, y.n);
	bool differs = false;
	for (size_t i = 0; i < x.n; i++) {
		ck_assert_int_eq(x.t[i], y.t[i]);
		ck_assert_uint_eq(x.tag[i], y.tag[i]);
		differs |= x.t[i] != z.t[i] || x.tag[i] != z.tag[i];
	}
	ck_assert(differs);
}
END_TEST

/* A chain of events, each scheduling the next 1 ps later until n ran. */
static void chain(sim_engine *eng, void *obj, uint64_t left)
{
	(void)obj;
	if (left > 1)
		ck_assert_int_eq(sim_schedule_in(eng, 1, chain, NULL, left - 1, NULL), 0);
}

struct beats {
	uint64_t n;
	sim_time last;
};

static void count_beat(void *ctx, sim_time now)
{
	struct beats *b = ctx;
	b->n++;
	b->last = now;
}

/* The heartbeat comes once per SIM_HEARTBEAT_EVENTS events run, with the
 * engine's clock, across sim_run calls; none once unset. */
START_TEST(heartbeat_every_n_events)
{
	struct beats b = { 0 };
	sim_engine *eng = sim_engine_new();
	sim_set_heartbeat(count_beat, &b);
	ck_assert_int_eq(sim_schedule_at(eng, 0, chain, NULL, 2 * SIM_HEARTBEAT_EVENTS + 5, NULL), 0);
	ck_assert_uint_eq(sim_run_until(eng, SIM_HEARTBEAT_EVENTS - 2), SIM_HEARTBEAT_EVENTS - 1);
	ck_assert_uint_eq(b.n, 0);
	sim_run(eng);
	ck_assert_uint_eq(b.n, 2);
	ck_assert_int_eq(b.last, 2 * SIM_HEARTBEAT_EVENTS - 1);
	sim_set_heartbeat(NULL, NULL);
	ck_assert_int_eq(sim_schedule_in(eng, 1, chain, NULL, SIM_HEARTBEAT_EVENTS, NULL), 0);
	sim_run(eng);
	ck_assert_uint_eq(b.n, 2);
	sim_engine_free(eng);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, order_by_time_then_insertion);
	tcase_add_test(tc, same_instant_scheduling_runs_after);
	tcase_add_test(tc, cancel_pending_and_stale);
	tcase_add_test(tc, cancel_from_a_handler_at_the_same_instant);
	tcase_add_test(tc, mass_cancellation);
	tcase_add_test(tc, run_until_and_stop);
	tcase_add_test(tc, stop_request);
	tcase_add_test_raise_signal(tc, past_is_a_bug, SIGABRT);
	tcase_add_test_raise_signal(tc, negative_delay_is_a_bug, SIGABRT);
	tcase_add_test(tc, overflow_is_an_error);
	tcase_add_test(tc, sequence_renumbering_keeps_order);
	tcase_add_test(tc, deterministic_per_seed);
	tcase_add_test(tc, heartbeat_every_n_events);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
