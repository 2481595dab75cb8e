/* The main() every Check suite shares: runs the suite that make_suite()
 * builds (forked per test, Check's default; CK_FORK=no runs in-process for
 * a debugger), and exits non-zero when any test failed. */
#ifndef DPUSIM_TESTS_CHECK_MAIN_H
#define DPUSIM_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#define CHECK_MAIN(make_suite)                                          \
	int main(void)                                                  \
	{                                                               \
		SRunner *sr = srunner_create(make_suite());             \
		int failed;                                             \
		srunner_run_all(sr, CK_NORMAL);                         \
		failed = srunner_ntests_failed(sr);                     \
		srunner_free(sr);                                       \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;            \
	}

/* The same with fork mode forced on whatever CK_FORK says, for suites
 * whose tests rely on a fresh process each. */
#define CHECK_MAIN_FORKED(make_suite)                                   \
	int main(void)                                                  \
	{                                                               \
		SRunner *sr = srunner_create(make_suite());             \
		int failed;                                             \
		srunner_set_fork_status(sr, CK_FORK);                   \
		srunner_run_all(sr, CK_NORMAL);                         \
		failed = srunner_ntests_failed(sr);                     \
		srunner_free(sr);                                       \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;            \
	}

#endif
