/* models/diag: message format, the cap, suggestions. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/diag.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

START_TEST(formats)
{
	diag *d = diag_new();
	diag_add(d, "f.yaml", 3, 9, "bad '%s'", "x");
	diag_add(d, "f.yaml", 0, 0, "no position");
	diag_add(d, NULL, 0, 0, "bare");
	ck_assert_uint_eq(diag_count(d), 3);
	ck_assert_str_eq(diag_msg(d, 0), "f.yaml:3:9: bad 'x'");
	ck_assert_str_eq(diag_msg(d, 1), "f.yaml: no position");
	ck_assert_str_eq(diag_msg(d, 2), "bare");
	ck_assert_str_eq(diag_msg(d, 7), "");
	diag_free(d);
	diag_free(NULL);
	ck_assert_uint_eq(diag_count(NULL), 0);
}
END_TEST

START_TEST(cap_and_summary)
{
	diag *d = diag_new();
	char *buf = NULL;
	size_t len = 0;
	for (int i = 0; i < DIAG_MAX + 5; i++)
		diag_add(d, "f", i + 1, 1, "e%d", i);
	ck_assert_uint_eq(diag_count(d), DIAG_MAX + 5);
	FILE *f = open_memstream(&buf, &len);
	diag_print(d, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "f:200:1: e199\n(5 more errors not shown)\n"));
	free(buf);
	diag_free(d);
}
END_TEST

START_TEST(suggestions)
{
	static const char *const words[] = { "nodes", "gpus_per_node", "fabric", "H100-SXM5", "H200-SXM" };
	ck_assert_str_eq(diag_suggest("nodez", words, 5), "nodes");
	ck_assert_str_eq(diag_suggest("gpus_per_nodes", words, 5), "gpus_per_node");
	ck_assert_str_eq(diag_suggest("fabirc", words, 5), "fabric");
	ck_assert_str_eq(diag_suggest("H100", words, 5), "H100-SXM5"); /* unique prefix */
	ck_assert_ptr_null(diag_suggest("H", words, 5));
	ck_assert_ptr_null(diag_suggest("storage", words, 5));
}
END_TEST

/* A message that names its place is told from one that does not, so the
 * dry setup pass of dpusim check places only the latter at the variant. */
START_TEST(placed_messages)
{
	ck_assert(diag_placed("a.yaml:3:14: bad"));
	ck_assert(diag_placed("dir:x/a.yaml:12:1: bad: worse"));
	ck_assert(!diag_placed("training simulation: at 3:14: bad"));
	ck_assert(!diag_placed("a.yaml: bad"));
	ck_assert(!diag_placed("a.yaml:0:1: bad"));
	ck_assert(!diag_placed("a.yaml:3:x: bad"));
	ck_assert(!diag_placed(""));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diag");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, formats);
	tcase_add_test(tc, cap_and_summary);
	tcase_add_test(tc, suggestions);
	tcase_add_test(tc, placed_messages);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
