/* tools/human: numbers for people in the text tables. */
#include <check.h>
#include <math.h>

#include "tools/human.h"
#include "tests/unit/check_main.h"

START_TEST(numbers)
{
	char b[64];
	ck_assert_str_eq(hum_number(b, sizeof b, 41.313), "41.31");
	ck_assert_str_eq(hum_number(b, sizeof b, 243.7), "243.7");
	ck_assert_str_eq(hum_number(b, sizeof b, 169220.4), "169,220");
	ck_assert_str_eq(hum_number(b, sizeof b, 620950), "620,950");
	ck_assert_str_eq(hum_number(b, sizeof b, 1234567890), "1,234,567,890");
	ck_assert_str_eq(hum_number(b, sizeof b, 999.96), "1,000");
	ck_assert_str_eq(hum_number(b, sizeof b, 1000), "1,000");
	ck_assert_str_eq(hum_number(b, sizeof b, 0.0123), "0.0123");
	ck_assert_str_eq(hum_number(b, sizeof b, 0.5), "0.5");
	ck_assert_str_eq(hum_number(b, sizeof b, 0.000066375), "0.0000664");
	ck_assert_str_eq(hum_number(b, sizeof b, 0), "0");
	ck_assert_str_eq(hum_number(b, sizeof b, -1500), "-1,500");
	ck_assert_str_eq(hum_number(b, sizeof b, NAN), "-");
	ck_assert_str_eq(hum_number(b, 4, 169220), "169"); /* truncated, terminated */
}
END_TEST

START_TEST(durations)
{
	char b[64];
	ck_assert_str_eq(hum_duration(b, sizeof b, 0), "0 s");
	ck_assert_str_eq(hum_duration(b, sizeof b, 850e-9), "850 ns");
	ck_assert_str_eq(hum_duration(b, sizeof b, 372.7e-6), "372.7 us");
	ck_assert_str_eq(hum_duration(b, sizeof b, 0.03547), "35.47 ms");
	ck_assert_str_eq(hum_duration(b, sizeof b, 1.549), "1.549 s");
	ck_assert_str_eq(hum_duration(b, sizeof b, 119), "119 s");
	ck_assert_str_eq(hum_duration(b, sizeof b, 195), "3.25 min");
	ck_assert_str_eq(hum_duration(b, sizeof b, 5.4 * 3600), "5.4 h");
	ck_assert_str_eq(hum_duration(b, sizeof b, 12.345 * 86400), "12.35 days");
	ck_assert_str_eq(hum_duration(b, sizeof b, 1234 * 86400.0), "1,234 days");
	ck_assert_str_eq(hum_duration(b, sizeof b, INFINITY), "-");
}
END_TEST

START_TEST(money_sizes_percent)
{
	char b[64];
	ck_assert_str_eq(hum_usd(b, sizeof b, 1234567.4), "$1,234,567");
	ck_assert_str_eq(hum_usd(b, sizeof b, 12.345), "$12.35");
	ck_assert_str_eq(hum_usd(b, sizeof b, 0), "$0.00");
	ck_assert_str_eq(hum_bytes(b, sizeof b, 1000), "1000 B");
	ck_assert_str_eq(hum_bytes(b, sizeof b, 4096), "4 KiB");
	ck_assert_str_eq(hum_bytes(b, sizeof b, 67108864), "64 MiB");
	ck_assert_str_eq(hum_bytes(b, sizeof b, 1ull << 30), "1 GiB");
	ck_assert_str_eq(hum_bytes(b, sizeof b, 206530048), "197 MiB");
	ck_assert_str_eq(hum_bytes(b, sizeof b, 1536), "1.5 KiB");
	ck_assert_str_eq(hum_percent(b, sizeof b, 0.628), "62.8%");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("human");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, numbers);
	tcase_add_test(tc, durations);
	tcase_add_test(tc, money_sizes_percent);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
