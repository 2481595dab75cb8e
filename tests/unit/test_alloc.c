/* sim/alloc: the allocation-failure hook and sim_grow, the growth rule
 * every list shares. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/alloc.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

/* Capacity doubles from `first`, jumps straight past a large need, and
 * the elements kept survive each move. */
START_TEST(grow_doubles_and_keeps)
{
	int *v = NULL;
	size_t cap = 0;
	ck_assert_int_eq(sim_grow(&v, &cap, 1, sizeof *v, 8), 0);
	ck_assert_uint_eq(cap, 8);
	for (int i = 0; i < 8; i++)
		v[i] = i;
	ck_assert_int_eq(sim_grow(&v, &cap, 8, sizeof *v, 8), 0); /* room already */
	ck_assert_uint_eq(cap, 8);
	ck_assert_int_eq(sim_grow(&v, &cap, 9, sizeof *v, 8), 0);
	ck_assert_uint_eq(cap, 16);
	ck_assert_int_eq(sim_grow(&v, &cap, 100, sizeof *v, 8), 0);
	ck_assert_uint_eq(cap, 128);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(v[i], i);
	free(v);
}
END_TEST

/* A failed growth (the hook, or a size no allocation can hold) leaves the
 * array and its capacity as they were. */
START_TEST(grow_failure_leaves_array)
{
	double *v = NULL, *before;
	size_t cap = 0;
	ck_assert_int_eq(sim_grow(&v, &cap, 4, sizeof *v, 4), 0);
	before = v;
	v[3] = 2.5;
	sim_test_fail_alloc_after(0);
	ck_assert_int_eq(sim_grow(&v, &cap, 5, sizeof *v, 4), SIM_ENOMEM);
	sim_test_fail_alloc_after(-1);
	ck_assert_ptr_eq(v, before);
	ck_assert_uint_eq(cap, 4);
	ck_assert_int_eq(sim_grow(&v, &cap, SIZE_MAX / 2, sizeof *v, 4), SIM_ENOMEM);
	ck_assert_int_eq(sim_grow(&v, &cap, SIZE_MAX, sizeof *v, 4), SIM_ENOMEM);
	ck_assert_uint_eq(cap, 4);
	ck_assert_double_eq(v[3], 2.5);
	free(v);
}
END_TEST

/* The 32-bit form: the same doubling, and a need whose doubled capacity
 * would pass 32 bits refused (no allocation tried). */
START_TEST(grow_u32_stays_in_32_bits)
{
	uint16_t *v = NULL;
	uint32_t cap = 0;
	ck_assert_int_eq(sim_grow_u32(&v, &cap, 5, sizeof *v, 4), 0);
	ck_assert_uint_eq(cap, 8);
	v[7] = 7;
	ck_assert_int_eq(sim_grow_u32(&v, &cap, ((uint32_t)1 << 31) + 1, sizeof *v, 4), SIM_ENOMEM);
	ck_assert_uint_eq(cap, 8);
	ck_assert_int_eq(sim_grow_u32(&v, &cap, 9, sizeof *v, 4), 0);
	ck_assert_uint_eq(cap, 16);
	ck_assert_uint_eq(v[7], 7);
	free(v);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("alloc");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, grow_doubles_and_keeps);
	tcase_add_test(tc, grow_failure_leaves_array);
	tcase_add_test(tc, grow_u32_stays_in_32_bits);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
