/* models/canon: the canonical text of sweep values. Distinct values get
 * distinct texts (mappings and lists were all "a mapping"/"a list"), equal
 * values one text whatever their spelling (key order, number forms). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/canon.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"
#include "tests/unit/fixture.h"

/* The canonical text of the value of key v in the YAML document text. */
static const char *canon_of(const char *text, char *buf, size_t n)
{
	yt_node *t = fx_parse(text);
	canon_value(yt_get(t, "v"), buf, n);
	yt_free(t);
	return buf;
}

#define CANON(yaml) canon_of("v: " yaml "\n", buf, sizeof buf)

START_TEST(mappings_and_lists)
{
	char buf[CANON_MAX + 1];
	ck_assert_str_eq(CANON("{ profile: CX6, rdma_latency: 1.0us }"), "{profile: CX6, rdma_latency: 1us}");
	ck_assert_str_eq(CANON("{ rdma_latency: 1us, profile: CX6 }"), "{profile: CX6, rdma_latency: 1us}");
	ck_assert_str_eq(CANON("[64KiB, [1, {b: 2, a: ~}]]"), "[64KiB, [1, {a: null, b: 2}]]");
	ck_assert_str_eq(CANON("[]"), "[]");
	ck_assert_str_eq(CANON("{}"), "{}");
	ck_assert_str_eq(CANON("{ 'a b': 1, 'c:d': x }"), "{a b: 1, \"c:d\": x}");
}
END_TEST

START_TEST(numbers)
{
	char buf[CANON_MAX + 1];
	ck_assert_str_eq(CANON("1e3"), "1000");
	ck_assert_str_eq(CANON("1000.0"), "1000");
	ck_assert_str_eq(CANON("+1000"), "1000");
	ck_assert_str_eq(CANON("0001000"), "1000");
	ck_assert_str_eq(CANON("0.50"), "0.5");
	ck_assert_str_eq(CANON("-0.0"), "0");
	ck_assert_str_eq(CANON("-007"), "-7");
	ck_assert_str_eq(CANON("0.1"), "0.1");
	ck_assert_str_eq(CANON("1e-9"), "1e-09");
	ck_assert_str_eq(CANON("1.5e20"), "1.5e+20");
	ck_assert_str_eq(CANON("3.35TB/s"), "3.35TB/s");
	ck_assert_str_eq(CANON("400.0Gbps"), "400Gbps");
	ck_assert_str_eq(CANON("1EB"), "1EB");  /* an exabyte, not an exponent */
	ck_assert_str_eq(CANON("1e999"), "1e999");
	/* integers stay exact: 2^64 - 1 and its neighbour differ */
	ck_assert_str_eq(CANON("18446744073709551615"), "18446744073709551615");
	ck_assert_str_eq(CANON("18446744073709551614"), "18446744073709551614");
	/* not numbers: left as written */
	ck_assert_str_eq(CANON("10.0.0.1"), "10.0.0.1");
	ck_assert_str_eq(CANON("H100-SXM5"), "H100-SXM5");
	ck_assert_str_eq(CANON("0x10"), "0x10");
}
END_TEST

START_TEST(quoting)
{
	char buf[CANON_MAX + 1];
	ck_assert_str_eq(CANON("~"), "null");
	ck_assert_str_eq(CANON("'null'"), "\"null\"");
	ck_assert_str_eq(CANON("''"), "\"\"");
	ck_assert_str_eq(CANON("'a, b'"), "\"a, b\"");
	ck_assert_str_eq(CANON("' x'"), "\" x\"");
	ck_assert_str_eq(CANON("\"q\\\"\\\\\\t\""), "\"q\\\"\\\\\\x09\"");
	ck_assert_str_eq(CANON("'[1]'"), "\"[1]\"");
	ck_assert_str_ne(CANON("'[1]'"), "[1]");
}
END_TEST

/* Longer than CANON_MAX: cut, with a hash of the whole; two values that
 * differ only past the cut still differ. */
START_TEST(long_values_are_hashed)
{
	char a[CANON_MAX + 1], b[CANON_MAX + 1];
	const char *pad = "{ k1: aaaaaaaaaa, k2: bbbbbbbbbb, k3: cccccccccc, k4: dddddddddd, ";
	char ya[256], yb[256];
	snprintf(ya, sizeof ya, "v: %sk5: eeeeeeeeeeeeeeeeee }\n", pad);
	snprintf(yb, sizeof yb, "v: %sk5: eeeeeeeeeeeeeeeeef }\n", pad);
	canon_of(ya, a, sizeof a);
	canon_of(yb, b, sizeof b);
	ck_assert_uint_le(strlen(a), CANON_MAX);
	ck_assert_uint_eq(strlen(a), CANON_CUT + 4 + 16);
	ck_assert_int_eq(strncmp(a, "{k1: aaaaaaaaaa, k2: bbbbbbbbbb, k3: cccccccccc, ", CANON_CUT), 0);
	ck_assert_str_eq(a + CANON_CUT, strstr(a, "...#"));
	ck_assert_str_ne(a, b);
	/* a multi-byte character across the cut (47 bytes, then é) is not split */
	snprintf(ya, sizeof ya, "v: %.*s\xc3\xa9%s\n", CANON_CUT - 1,
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		 "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
	canon_of(ya, a, sizeof a);
	ck_assert_ptr_nonnull(strstr(a, "...#"));
	ck_assert_int_ne((unsigned char)strstr(a, "...#")[-1], 0xc3);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("canon");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, mappings_and_lists);
	tcase_add_test(tc, numbers);
	tcase_add_test(tc, quoting);
	tcase_add_test(tc, long_values_are_hashed);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
