/* sim/pq: ordering with ties, out-of-order inserts, a property test against
 * a sorted reference (ROSS's splay_order_test idea). */
#include <check.h>
#include <stdlib.h>

#include "sim/pq.h"
#include "sim/rng.h"
#include "tests/unit/check_main.h"

static int cmp(const void *x, const void *y)
{
	const pq_entry *a = x, *b = y;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

START_TEST(empty)
{
	pq q;
	pq_entry e;
	pq_init(&q);
	ck_assert_ptr_null(pq_top(&q));
	ck_assert(!pq_pop(&q, &e));
	pq_release(&q);
}
END_TEST

START_TEST(ties_break_on_key)
{
	pq q;
	pq_entry e;
	pq_init(&q);
	/* Same time, keys inserted out of order; then an earlier time. */
	ck_assert_int_eq(pq_push(&q, 10, 3), 0);
	ck_assert_int_eq(pq_push(&q, 10, 1), 0);
	ck_assert_int_eq(pq_push(&q, 10, 2), 0);
	ck_assert_int_eq(pq_push(&q, 5, 9), 0);
	ck_assert_int_eq(pq_push(&q, 0, 7), 0);
	static const pq_entry want[] = { { .time = 0, .key = 7 }, { .time = 5, .key = 9 },
					 { .time = 10, .key = 1 }, { .time = 10, .key = 2 },
					 { .time = 10, .key = 3 } };
	for (int i = 0; i < 5; i++) {
		ck_assert(pq_pop(&q, &e));
		ck_assert_int_eq(e.time, want[i].time);
		ck_assert_uint_eq(e.key, want[i].key);
	}
	ck_assert_uint_eq(pq_size(&q), 0);
	pq_release(&q);
}
END_TEST

/* Random pushes and pops interleaved, many equal times, compared with a
 * sorted copy of what is pending. */
START_TEST(matches_sorted_reference)
{
	enum { N = 20000 };
	pq q;
	pq_entry *ref = malloc(N * sizeof *ref);
	size_t nref = 0;
	sim_rng *r = sim_rng_new((uint64_t)_i, "test.pq");
	pq_init(&q);
	for (uint64_t k = 0; k < N; k++) {
		int64_t t = (int64_t)sim_rng_below(r, 50); /* heavy ties */
		ck_assert_int_eq(pq_push(&q, t, k), 0);
		ref[nref++] = (pq_entry){ .time = t, .key = k };
		if (sim_rng_bernoulli(r, 0.4)) {
			pq_entry got;
			size_t best = 0;
			for (size_t i = 1; i < nref; i++)
				if (cmp(&ref[i], &ref[best]) < 0)
					best = i;
			ck_assert(pq_pop(&q, &got));
			ck_assert_int_eq(got.time, ref[best].time);
			ck_assert_uint_eq(got.key, ref[best].key);
			ref[best] = ref[--nref];
		}
	}
	qsort(ref, nref, sizeof *ref, cmp);
	for (size_t i = 0; i < nref; i++) {
		pq_entry got;
		ck_assert(pq_pop(&q, &got));
		ck_assert_int_eq(got.time, ref[i].time);
		ck_assert_uint_eq(got.key, ref[i].key);
	}
	ck_assert(!pq_pop(&q, &(pq_entry){ 0 }));
	sim_rng_free(r);
	free(ref);
	pq_release(&q);
}
END_TEST

START_TEST(heapify_and_sort)
{
	pq q;
	pq_entry e, *a;
	pq_init(&q);
	for (uint64_t k = 0; k < 1000; k++)
		ck_assert_int_eq(pq_push(&q, (int64_t)((k * 7919) % 1000), k), 0);
	/* Drop odd keys by hand, then restore heap order. */
	a = pq_entries(&q);
	size_t n = 0;
	for (size_t i = 0; i < pq_size(&q); i++)
		if (a[i].key % 2 == 0)
			a[n++] = a[i];
	pq_truncate(&q, n);
	pq_heapify(&q);
	a = pq_entries(&q);
	for (size_t k = 1; k < n; k++) /* every parent orders before its children */
		ck_assert_int_le(cmp(&a[(k - 1) / 4], &a[k]), 0);
	int64_t last = 0;
	for (size_t i = 0; i < 250; i++) {
		ck_assert(pq_pop(&q, &e));
		ck_assert_int_ge(e.time, last);
		ck_assert_uint_eq(e.key % 2, 0);
		last = e.time;
	}
	pq_sort(&q);
	a = pq_entries(&q);
	for (size_t i = 1; i < pq_size(&q); i++)
		ck_assert_int_le(cmp(&a[i - 1], &a[i]), 0);
	ck_assert_uint_eq(pq_size(&q), 250);
	pq_release(&q);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("pq");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, empty);
	tcase_add_test(tc, ties_break_on_key);
	tcase_add_loop_test(tc, matches_sorted_reference, 1, 4);
	tcase_add_test(tc, heapify_and_sort);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
