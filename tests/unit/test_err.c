/* sim/err: the error table and the loud-failure path. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "tests/unit/check_main.h"

START_TEST(messages_and_names)
{
	ck_assert_str_eq(sim_strerror(SIM_OK), "success");
	ck_assert_str_eq(sim_strerror(SIM_ENOMEM), "out of memory");
	ck_assert_str_eq(sim_errname(SIM_EPAST), "SIM_EPAST");
	ck_assert_str_eq(sim_strerror(12345), "unknown error");
	ck_assert_str_eq(sim_strerror(SIM_ERR_FIRST_), "unknown error");
	ck_assert_int_lt(SIM_ENOMEM, 0);
}
END_TEST

START_TEST(every_code_has_a_distinct_message)
{
	for (int e = SIM_ERR_FIRST_ + 1; e < SIM_ERR_LAST_; e++) {
		ck_assert_str_ne(sim_strerror(e), "unknown error");
		for (int f = e + 1; f < SIM_ERR_LAST_; f++)
			ck_assert_str_ne(sim_strerror(e), sim_strerror(f));
	}
}
END_TEST

START_TEST(assert_aborts)
{
	SIM_ASSERT(1 + 1 == 3, "arithmetic is broken: %d", 2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("err");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, messages_and_names);
	tcase_add_test(tc, every_code_has_a_distinct_message);
	tcase_add_test_raise_signal(tc, assert_aborts, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
