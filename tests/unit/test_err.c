/* sim/err: the error table and the loud-failure path. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
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

/* sim_fit: a message that fits is vsnprintf's; one too long keeps its start
 * and its end (the reason), the middle counted, never a cut UTF-8
 * character; a buffer too small for both ends gets the plain cut. */
START_TEST(fit_keeps_both_ends)
{
	char buf[96], small[16], name[200], want[96];
	int n;
	sim_fit(buf, sizeof buf, "%s: %s", "a.yaml", "cannot open");
	ck_assert_str_eq(buf, "a.yaml: cannot open");
	memset(name, 'x', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	sim_fit(buf, sizeof buf, "'%s': File name too long", name);
	ck_assert_uint_eq(strlen(buf), sizeof buf - 1);
	ck_assert_ptr_nonnull(strstr(buf, "': File name too long"));
	ck_assert_int_eq(buf[0], '\'');
	/* 1 + 199 + 21 = 221 bytes into 95, the mark (30 bytes) among them:
	 * 65 kept, 21 of the start and 44 of the end, 156 left out */
	n = snprintf(want, sizeof want, "'%.*s [... 156 bytes left out ...] %.*s': File name too long",
		     21 - 1, name, 44 - 21, name);
	ck_assert_int_lt(n, (int)sizeof want);
	ck_assert_str_eq(buf, want);
	/* two-byte characters (U+00E9) are cut between, never inside */
	for (size_t i = 0; i + 2 < sizeof name; i += 2)
		name[i] = (char)0xC3, name[i + 1] = (char)0xA9;
	name[sizeof name - 1] = '\0';
	sim_fit(buf, sizeof buf, "x%s", name);
	for (size_t i = 0; buf[i]; i++)
		if (((unsigned char)buf[i] & 0xE0) == 0xC0)
			ck_assert_int_eq((unsigned char)buf[i + 1] & 0xC0, 0x80);
	ck_assert_int_ne((unsigned char)buf[strlen(buf) - 1] & 0xE0, 0xC0);
	/* too small to keep both ends and a mark: vsnprintf's cut */
	sim_fit(small, sizeof small, "%s", "0123456789abcdefghij");
	ck_assert_str_eq(small, "0123456789abcde");
	/* sim_errbuf cuts the same way and returns its code */
	memset(name, 'y', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	ck_assert_int_eq(sim_errbuf(buf, sizeof buf, SIM_EIO, "%s: gone", name), SIM_EIO);
	ck_assert_ptr_nonnull(strstr(buf, "y: gone"));
	ck_assert_ptr_nonnull(strstr(buf, "bytes left out"));
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
	tcase_add_test(tc, fit_keeps_both_ends);
	tcase_add_test_raise_signal(tc, assert_aborts, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
