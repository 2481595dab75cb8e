/* models/units: every dimension, both prefix families, strictness, suggestions. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/units.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

static double ok(const char *s, unit_dim dim)
{
	double v = -1;
	unit_err e;
	int rc = unit_parse(s, dim, &v, &e);
	ck_assert_msg(rc == SIM_OK, "'%s' failed: %s", s, e.msg);
	return v;
}

static int bad(const char *s, unit_dim dim, unit_err *e)
{
	double v = 12345;
	int rc = unit_parse(s, dim, &v, e);
	ck_assert_msg(rc != SIM_OK, "'%s' was accepted", s);
	ck_assert_double_eq(v, 12345); /* untouched on error */
	return rc;
}

START_TEST(rates_bits_and_bytes)
{
	ck_assert_double_eq(ok("400Gbps", UNIT_BYTES_PER_S), 50e9);
	ck_assert_double_eq(ok("400Gb/s", UNIT_BYTES_PER_S), 50e9);
	ck_assert_double_eq(ok("25GB/s", UNIT_BYTES_PER_S), 25e9);
	ck_assert_double_eq(ok("25GBps", UNIT_BYTES_PER_S), 25e9);
	ck_assert_double_eq(ok("12.5GiB/s", UNIT_BYTES_PER_S), 12.5 * 1073741824.0);
	ck_assert_double_eq(ok("100 Mbps", UNIT_BYTES_PER_S), 12.5e6);
	ck_assert_double_eq(ok("1B/s", UNIT_BYTES_PER_S), 1);
}
END_TEST

START_TEST(sizes_decimal_vs_binary)
{
	ck_assert_double_eq(ok("64MiB", UNIT_BYTES), 64.0 * 1048576);
	ck_assert_double_eq(ok("4KB", UNIT_BYTES), 4000);
	ck_assert_double_eq(ok("4kB", UNIT_BYTES), 4000);
	ck_assert_double_eq(ok("4KiB", UNIT_BYTES), 4096);
	ck_assert_double_eq(ok("80GB", UNIT_BYTES), 80e9);
	ck_assert_double_eq(ok("1TiB", UNIT_BYTES), 1099511627776.0);
	ck_assert_double_eq(ok("0B", UNIT_BYTES), 0);
}
END_TEST

START_TEST(times_and_frequencies)
{
	ck_assert_double_eq_tol(ok("1.5us", UNIT_SECONDS), 1.5e-6, 1e-20);
	ck_assert_double_eq_tol(ok("1.5µs", UNIT_SECONDS), 1.5e-6, 1e-20);
	ck_assert_double_eq_tol(ok("120ns", UNIT_SECONDS), 120e-9, 1e-20);
	ck_assert_double_eq_tol(ok("3ms", UNIT_SECONDS), 3e-3, 1e-18);
	ck_assert_double_eq(ok("2s", UNIT_SECONDS), 2);
	ck_assert_double_eq(ok("10min", UNIT_SECONDS), 600);
	ck_assert_double_eq(ok("1h", UNIT_SECONDS), 3600);
	ck_assert_double_eq(ok("2d", UNIT_SECONDS), 172800);
	ck_assert_double_eq(ok("2.6GHz", UNIT_HZ), 2.6e9);
}
END_TEST

START_TEST(compute_costs_power_money)
{
	ck_assert_double_eq(ok("989TFLOP/s", UNIT_FLOP_PER_S), 989e12);
	ck_assert_double_eq(ok("989TFLOPS", UNIT_FLOP_PER_S), 989e12);
	ck_assert_double_eq(ok("1PFLOP", UNIT_FLOP), 1e15);
	ck_assert_double_eq_tol(ok("0.2ms/sample", UNIT_S_PER_SAMPLE), 2e-4, 1e-18);
	ck_assert_double_eq(ok("1.2cycles/byte", UNIT_CYCLES_PER_BYTE), 1.2);
	ck_assert_double_eq(ok("5000cycles/packet", UNIT_CYCLES_PER_PACKET), 5000);
	ck_assert_double_eq(ok("2Mcycles/sample", UNIT_CYCLES_PER_SAMPLE), 2e6);
	ck_assert_double_eq(ok("200Mpps", UNIT_PER_S), 200e6);
	ck_assert_double_eq(ok("1.5MIOPS", UNIT_PER_S), 1.5e6);
	ck_assert_double_eq(ok("215M/s", UNIT_PER_S), 215e6);
	ck_assert_double_eq(ok("700W", UNIT_WATTS), 700);
	ck_assert_double_eq(ok("1.2kW", UNIT_WATTS), 1200);
	ck_assert_double_eq(ok("3600USD/h", UNIT_USD_PER_S), 1);
	ck_assert_double_eq_tol(ok("0.36USD/kWh", UNIT_USD_PER_J), 1e-7, 1e-20);
	ck_assert_double_eq(ok("25000USD", UNIT_USD), 25000);
}
END_TEST

START_TEST(plain_numbers_and_fractions)
{
	ck_assert_double_eq(ok("15%", UNIT_FRACTION), 0.15);
	ck_assert_double_eq(ok("0.15", UNIT_FRACTION), 0.15);
	ck_assert_double_eq(ok("8", UNIT_COUNT), 8);
	ck_assert_double_eq(ok("3e11", UNIT_COUNT), 3e11);
	ck_assert_double_eq(ok("-4", UNIT_COUNT), -4); /* sign is the caller's range check */
	ck_assert_double_eq(ok("1.25", UNIT_NUMBER), 1.25);
	bool b;
	ck_assert_int_eq(unit_parse_bool("true", &b, NULL), SIM_OK);
	ck_assert(b);
	ck_assert_int_eq(unit_parse_bool("off", &b, NULL), SIM_OK);
	ck_assert(!b);
	ck_assert_int_eq(unit_parse_bool("1", &b, NULL), SIM_EPARSE);
}
END_TEST

/* Counts are whole, of any size (the caller's range check names the range:
 * 1e300 said "not a whole number"), and exact: above 2^53 a double skips
 * integers, and 9007199254740993 silently became ...992. */
START_TEST(counts_whole_and_exact)
{
	unit_err e;
	double v = 0;
	ck_assert_double_eq(ok("1e300", UNIT_COUNT), 1e300);
	ck_assert_double_eq(ok("1e16", UNIT_COUNT), 1e16);
	ck_assert_double_eq(ok("9007199254740992", UNIT_COUNT), 9007199254740992.0);
	ck_assert_double_eq(ok("18014398509481988", UNIT_COUNT), 18014398509481988.0); /* 2^54 + 4: held */
	ck_assert_int_eq(unit_parse("9007199254740993", UNIT_COUNT, &v, &e), SIM_ERANGE);
	ck_assert_double_eq(v, 9007199254740992.0); /* for the caller's range message */
	ck_assert_str_eq(e.msg, "'9007199254740993' cannot be held exactly (whole numbers above 2^53 = "
				"9007199254740992 are rounded; the nearest is 9007199254740992)");
	ck_assert_int_eq(unit_parse("9.007199254740993e15", UNIT_COUNT, &v, &e), SIM_ERANGE);
	ck_assert_int_eq(bad("2.5", UNIT_COUNT, &e), SIM_EPARSE);
	ck_assert_str_eq(e.msg, "'2.5' is not a whole number");
}
END_TEST

/* Seeds: every integer from 0 to 2^64-1, read without a double. */
START_TEST(u64_exact)
{
	unsigned long long u = 0;
	unit_err e;
	ck_assert_int_eq(unit_parse_u64("18446744073709551615", &u, &e), SIM_OK);
	ck_assert(u == 18446744073709551615ULL);
	ck_assert_int_eq(unit_parse_u64("9007199254740993", &u, &e), SIM_OK);
	ck_assert(u == 9007199254740993ULL);
	ck_assert_int_eq(unit_parse_u64("1e6", &u, &e), SIM_OK);
	ck_assert(u == 1000000);
	ck_assert_int_eq(unit_parse_u64("0", &u, &e), SIM_OK);
	ck_assert(u == 0);
	ck_assert_int_eq(unit_parse_u64("18446744073709551616", &u, &e), SIM_ERANGE);
	ck_assert_str_eq(e.msg, "'18446744073709551616' is out of range, expected a whole number from 0 to "
				"18446744073709551615 (2^64-1)");
	ck_assert_int_eq(unit_parse_u64("-1", &u, &e), SIM_ERANGE);
	ck_assert_int_eq(unit_parse_u64("1e20", &u, &e), SIM_ERANGE);
	ck_assert_int_eq(unit_parse_u64("9.007199254740993e15", &u, &e), SIM_ERANGE);
	ck_assert_int_eq(unit_parse_u64("1.5", &u, &e), SIM_EPARSE);
	ck_assert_int_eq(unit_parse_u64("x", &u, &e), SIM_EPARSE);
}
END_TEST

/* Zero is zero in every unit, so '0' needs none: a time, a size or a rate
 * of 0 reads as written ('0us' still works). */
START_TEST(zero_without_unit)
{
	static const unit_dim dims[] = { UNIT_SECONDS, UNIT_BYTES, UNIT_BYTES_PER_S };
	for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
		double v = 1;
		unit_err e = { 0 };
		ck_assert_int_eq(unit_parse("0", dims[i], &v, &e), SIM_OK);
		ck_assert(v == 0);
		v = 1;
		ck_assert_int_eq(unit_parse("0.0", dims[i], &v, &e), SIM_OK);
		ck_assert(v == 0);
	}
}
END_TEST

START_TEST(strict_rejections)
{
	unit_err e;
	ck_assert_int_eq(bad("0.5", UNIT_SECONDS, &e), SIM_EUNIT); /* only zero goes without */
	ck_assert_int_eq(bad("400", UNIT_BYTES_PER_S, &e), SIM_EUNIT);
	ck_assert_str_eq(e.msg, "missing unit in '400', expected a data rate such as 400Gbps or 25GB/s");
	ck_assert_int_eq(bad("25GB", UNIT_BYTES_PER_S, &e), SIM_EUNIT);
	ck_assert_str_eq(e.msg, "'25GB' is a size, expected a data rate such as 400Gbps or 25GB/s");
	ck_assert_int_eq(bad("fast", UNIT_BYTES_PER_S, &e), SIM_EPARSE);
	ck_assert_int_eq(bad("1.5.2us", UNIT_SECONDS, &e), SIM_EUNIT);
	ck_assert_int_eq(bad(".5us", UNIT_SECONDS, &e), SIM_EPARSE);
	ck_assert_int_eq(bad("1.us", UNIT_SECONDS, &e), SIM_EPARSE);
	ck_assert_int_eq(bad("1e999s", UNIT_SECONDS, &e), SIM_EPARSE);
	ck_assert_int_eq(bad("inf", UNIT_NUMBER, &e), SIM_EPARSE);
	ck_assert_int_eq(bad("nan", UNIT_NUMBER, &e), SIM_EPARSE);
	ck_assert_int_eq(bad("8 GPUs", UNIT_COUNT, &e), SIM_EUNIT);
	ck_assert_int_eq(bad("2.5", UNIT_COUNT, &e), SIM_EPARSE);
	ck_assert_int_eq(bad("", UNIT_SECONDS, &e), SIM_EPARSE);
	ck_assert_int_eq(bad("5Ms", UNIT_SECONDS, &e), SIM_EUNIT); /* mega-seconds: no */
	ck_assert_int_eq(bad("1mB", UNIT_BYTES, &e), SIM_EUNIT);   /* milli-bytes: no */
	ck_assert_int_eq(bad("1Kis", UNIT_SECONDS, &e), SIM_EUNIT);
}
END_TEST

START_TEST(did_you_mean)
{
	unit_err e;
	bad("400Gbs", UNIT_BYTES_PER_S, &e);
	ck_assert_str_eq(e.msg, "unknown unit 'Gbs' in '400Gbs', expected a data rate such as 400Gbps or 25GB/s");
	ck_assert_str_eq(e.hint, "did you mean 'Gbps'?");
	bad("64mib", UNIT_BYTES, &e);
	ck_assert_str_eq(e.hint, "did you mean 'MiB'?");
	bad("3 msec", UNIT_SECONDS, &e);
	ck_assert_str_eq(e.hint, "did you mean 'ms'?");
	bad("1xyzzy", UNIT_SECONDS, &e);
	ck_assert_str_eq(e.hint, "");
}
END_TEST

START_TEST(format_round_trips)
{
	static const struct { double v; unit_dim d; } cases[] = {
		{ 50e9, UNIT_BYTES_PER_S }, { 1.5e-6, UNIT_SECONDS }, { 0.1, UNIT_FRACTION },
		{ 989e12, UNIT_FLOP_PER_S }, { 1.0 / 3600.0, UNIT_USD_PER_S }, { 8, UNIT_COUNT },
		{ 12.5 * 1073741824.0, UNIT_BYTES_PER_S }, { 1.0 / 3.6e6, UNIT_USD_PER_J },
	};
	char buf[48];
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		unit_format(cases[i].v, cases[i].d, buf, sizeof buf);
		ck_assert_double_eq(ok(buf, cases[i].d), cases[i].v);
	}
	ck_assert_str_eq(unit_format(50e9, UNIT_BYTES_PER_S, buf, sizeof buf), "5e+10B/s");
	ck_assert_str_eq(unit_format(8, UNIT_COUNT, buf, sizeof buf), "8");
	/* 2^60 + 256: %g's shortest form, 1.1529215046068472e+18, is another
	 * integer (...200), refused as inexact when read back. */
	ck_assert_str_eq(unit_format(1152921504606847232.0, UNIT_COUNT, buf, sizeof buf), "1152921504606847232");
	ck_assert_double_eq(ok(buf, UNIT_COUNT), 1152921504606847232.0);
}
END_TEST

START_TEST(edit_distance)
{
	ck_assert_uint_eq(unit_edit_distance("Gbs", "Gbps"), 1);
	ck_assert_uint_eq(unit_edit_distance("", "abc"), 3);
	ck_assert_uint_eq(unit_edit_distance("kitten", "sitting"), 3);
	ck_assert_uint_eq(unit_edit_distance("same", "same"), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("units");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, rates_bits_and_bytes);
	tcase_add_test(tc, sizes_decimal_vs_binary);
	tcase_add_test(tc, times_and_frequencies);
	tcase_add_test(tc, compute_costs_power_money);
	tcase_add_test(tc, plain_numbers_and_fractions);
	tcase_add_test(tc, counts_whole_and_exact);
	tcase_add_test(tc, u64_exact);
	tcase_add_test(tc, strict_rejections);
	tcase_add_test(tc, zero_without_unit);
	tcase_add_test(tc, did_you_mean);
	tcase_add_test(tc, format_round_trips);
	tcase_add_test(tc, edit_distance);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
