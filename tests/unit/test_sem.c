/* sim/sem: grants as events, strict FIFO among waiters, release order,
 * wait accounting, and the errors. */
#include <check.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "sim/err.h"
#include "sim/sem.h"
#include "tests/unit/check_main.h"

/* Grants seen: (time, request id). */
struct log {
	sim_time t[64];
	uint64_t id[64];
	size_t n;
};

static void granted(sim_engine *eng, void *obj, uint64_t data)
{
	struct log *lg = obj;
	ck_assert_uint_lt(lg->n, 64);
	lg->t[lg->n] = sim_now(eng);
	lg->id[lg->n++] = data;
}

/* Even a grant on the spot arrives as an event, at the same instant. */
START_TEST(immediate_grant_is_an_event)
{
	sim_engine *eng = sim_engine_new();
	sem *s = sem_new(eng, 2);
	struct log lg = { .n = 0 };
	sim_run_until(eng, 7);
	ck_assert_int_eq(sem_acquire(s, 2, granted, &lg, 42), 0);
	ck_assert_uint_eq(lg.n, 0);
	ck_assert_uint_eq(sem_available(s), 0);
	ck_assert_uint_eq(sem_in_use(s), 2);
	sim_run(eng);
	ck_assert_uint_eq(lg.n, 1);
	ck_assert_int_eq(lg.t[0], 7);
	ck_assert_uint_eq(lg.id[0], 42);
	ck_assert_uint_eq(sem_waits(s), 0);
	ck_assert_uint_eq(sem_grants(s), 1);
	ck_assert_double_eq(sem_wait_total_s(s), 0);
	sem_free(s);
	sim_engine_free(eng);
}
END_TEST

/* Capacity 3: A holds 2; B asks 2 and waits; C asks 1 and waits behind B
 * although 1 unit is free; a try for 1 also refuses to overtake. At t=10 A
 * releases: B then C are granted, in that order, at t=10. */
START_TEST(fifo_no_overtaking)
{
	sim_engine *eng = sim_engine_new();
	sem *s = sem_new(eng, 3);
	struct log lg = { .n = 0 };
	ck_assert(sem_try_acquire(s, 2));
	ck_assert_int_eq(sem_acquire(s, 2, granted, &lg, 1), 0);
	ck_assert_int_eq(sem_acquire(s, 1, granted, &lg, 2), 0);
	ck_assert_uint_eq(sem_waiting(s), 2);
	ck_assert_uint_eq(sem_available(s), 1);
	ck_assert(!sem_try_acquire(s, 1));
	sim_run_until(eng, 10);
	ck_assert_uint_eq(lg.n, 0);
	ck_assert_int_eq(sem_release(s, 2), 0);
	ck_assert_uint_eq(sem_waiting(s), 0);
	ck_assert_uint_eq(sem_available(s), 0);
	sim_run(eng);
	ck_assert_uint_eq(lg.n, 2);
	ck_assert_uint_eq(lg.id[0], 1);
	ck_assert_uint_eq(lg.id[1], 2);
	ck_assert_int_eq(lg.t[0], 10);
	ck_assert_int_eq(lg.t[1], 10);
	ck_assert_uint_eq(sem_waits(s), 2);
	ck_assert_uint_eq(sem_grants(s), 3);
	ck_assert_double_eq_tol(sem_wait_total_s(s), 20e-12, 1e-24);
	sem_free(s);
	sim_engine_free(eng);
}
END_TEST

/* A release that does not cover the head request grants nobody, even if a
 * later, smaller request would fit. Capacity 4, all held; waiters want 3
 * then 1. Release 2: head (3) does not fit, so neither is granted. Release
 * 1: head gets 3, available 0, the 1 still waits. Release 1: it is granted. */
START_TEST(head_of_line_blocks)
{
	sim_engine *eng = sim_engine_new();
	sem *s = sem_new(eng, 4);
	struct log lg = { .n = 0 };
	ck_assert(sem_try_acquire(s, 4));
	ck_assert_int_eq(sem_acquire(s, 3, granted, &lg, 1), 0);
	ck_assert_int_eq(sem_acquire(s, 1, granted, &lg, 2), 0);
	ck_assert_int_eq(sem_release(s, 2), 0);
	ck_assert_uint_eq(sem_waiting(s), 2);
	ck_assert_uint_eq(sem_available(s), 2);
	ck_assert_int_eq(sem_release(s, 1), 0);
	ck_assert_uint_eq(sem_waiting(s), 1);
	ck_assert_uint_eq(sem_available(s), 0);
	ck_assert_int_eq(sem_release(s, 1), 0);
	ck_assert_uint_eq(sem_waiting(s), 0);
	sim_run(eng);
	ck_assert_uint_eq(lg.n, 2);
	ck_assert_uint_eq(lg.id[0], 1);
	ck_assert_uint_eq(lg.id[1], 2);
	sem_free(s);
	sim_engine_free(eng);
}
END_TEST

/* One unit, four users arriving at t = 0, 1, 2, 3, each holding it for 10
 * after its grant and then releasing: grants at 0, 10, 20, 30 in arrival
 * order; waits 0 + 9 + 18 + 27 = 54 ps over 3 waiting requests. */
struct user {
	sim_engine *eng;
	sem *s;
	struct log lg;
};

static void release_unit(sim_engine *eng, void *obj, uint64_t data)
{
	struct user *u = obj;
	(void)eng;
	(void)data;
	ck_assert_int_eq(sem_release(u->s, 1), 0);
}

static void got_unit(sim_engine *eng, void *obj, uint64_t data)
{
	struct user *u = obj;
	granted(eng, &u->lg, data);
	ck_assert_int_eq(sim_schedule_in(eng, 10, release_unit, u, 0, NULL), 0);
}

static void want_unit(sim_engine *eng, void *obj, uint64_t data)
{
	struct user *u = obj;
	(void)eng;
	ck_assert_int_eq(sem_acquire(u->s, 1, got_unit, u, data), 0);
}

START_TEST(release_wakes_in_fifo_order)
{
	struct user u = { .eng = sim_engine_new() };
	u.s = sem_new(u.eng, 1);
	for (uint64_t i = 0; i < 4; i++)
		ck_assert_int_eq(sim_schedule_at(u.eng, (sim_time)i, want_unit, &u, i, NULL), 0);
	sim_run(u.eng);
	ck_assert_uint_eq(u.lg.n, 4);
	for (uint64_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(u.lg.id[i], i);
		ck_assert_int_eq(u.lg.t[i], (sim_time)(10 * i));
	}
	ck_assert_int_eq(sim_now(u.eng), 40);
	ck_assert_uint_eq(sem_waits(u.s), 3);
	ck_assert_uint_eq(sem_grants(u.s), 4);
	ck_assert_double_eq_tol(sem_wait_total_s(u.s), 54e-12, 1e-24);
	ck_assert_uint_eq(sem_available(u.s), 1);
	sem_free(u.s);
	sim_engine_free(u.eng);
}
END_TEST

/* Many waiters: the ring wraps and grows and keeps the order. */
START_TEST(many_waiters_keep_order)
{
	sim_engine *eng = sim_engine_new();
	sem *s = sem_new(eng, 1);
	struct log lg = { .n = 0 };
	ck_assert(sem_try_acquire(s, 1));
	for (uint64_t i = 0; i < 10; i++)
		ck_assert_int_eq(sem_acquire(s, 1, granted, &lg, i), 0);
	for (uint64_t i = 0; i < 6; i++)
		ck_assert_int_eq(sem_release(s, 1), 0);   /* grants 0..5, ring head moves */
	for (uint64_t i = 10; i < 50; i++)
		ck_assert_int_eq(sem_acquire(s, 1, granted, &lg, i), 0);
	ck_assert_uint_eq(sem_waiting(s), 44);
	for (uint64_t i = 6; i < 50; i++)
		ck_assert_int_eq(sem_release(s, 1), 0);
	sim_run(eng);
	ck_assert_uint_eq(lg.n, 50);
	for (uint64_t i = 0; i < 50; i++)
		ck_assert_uint_eq(lg.id[i], i);
	sem_free(s);
	sim_engine_free(eng);
}
END_TEST

START_TEST(errors)
{
	sim_engine *eng = sim_engine_new();
	sem *s = sem_new(eng, 4);
	struct log lg = { .n = 0 };
	ck_assert_ptr_null(sem_new(eng, 0));
	ck_assert_int_eq(sem_acquire(s, 5, granted, &lg, 0), SIM_ERANGE);
	ck_assert_int_eq(sem_acquire(s, 0, granted, &lg, 0), SIM_EINVAL);
	ck_assert_int_eq(sem_acquire(s, 1, NULL, NULL, 0), SIM_EINVAL);
	ck_assert(!sem_try_acquire(s, 0));
	ck_assert(!sem_try_acquire(s, 5));
	ck_assert_int_eq(sem_release(s, 1), SIM_ERANGE);
	ck_assert(sem_try_acquire(s, 3));
	ck_assert_int_eq(sem_release(s, 4), SIM_ERANGE);
	ck_assert_uint_eq(sem_in_use(s), 3);
	ck_assert_int_eq(sem_release(s, 3), 0);
	ck_assert_uint_eq(sem_available(s), 4);
	ck_assert_uint_eq(sem_capacity(s), 4);
	ck_assert_uint_eq(sem_waits(s), 0);
	ck_assert_uint_eq(sem_grants(s), 1);
	ck_assert_uint_eq(sim_events_pending(eng), 0);
	sem_free(s);
	sem_free(NULL);
	sim_engine_free(eng);
}
END_TEST

/* Freeing with waiters queued releases their records (LeakSanitizer). */
START_TEST(free_with_waiters)
{
	sim_engine *eng = sim_engine_new();
	sem *s = sem_new(eng, 1);
	struct log lg = { .n = 0 };
	ck_assert(sem_try_acquire(s, 1));
	for (uint64_t i = 0; i < 20; i++)
		ck_assert_int_eq(sem_acquire(s, 1, granted, &lg, i), 0);
	sem_free(s);
	sim_run(eng);
	ck_assert_uint_eq(lg.n, 0);
	sim_engine_free(eng);
}
END_TEST

static Suite *sem_suite(void)
{
	Suite *s = suite_create("sem");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, immediate_grant_is_an_event);
	tcase_add_test(tc, fifo_no_overtaking);
	tcase_add_test(tc, head_of_line_blocks);
	tcase_add_test(tc, release_wakes_in_fifo_order);
	tcase_add_test(tc, many_waiters_keep_order);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, free_with_waiters);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN_FORKED(sem_suite)
