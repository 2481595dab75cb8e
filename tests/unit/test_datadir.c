/* models/datadir: the data folder beside the binary, $DPUSIM_DATADIR, and
 * the installed layout's names. The root is computed once per process, so
 * every test runs in a fresh fork (CHECK_MAIN_FORKED). */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/datadir.h"
#include "tests/unit/check_main.h"

/* The source tree: make runs the suites from the repository root. */
static void tree_root(char *buf, size_t n)
{
	ck_assert_ptr_nonnull(getcwd(buf, n));
}

START_TEST(finds_tree_of_binary)
{
	char cwd[PATH_MAX], want[PATH_MAX + 32], got[PATH_MAX + 32], pb[DATADIR_PATH_MAX];
	unsetenv("DPUSIM_DATADIR");
	unsetenv("DPUSIM_PROFILE_DIR");
	tree_root(cwd, sizeof cwd);
	/* From the tree itself: named as before, relative. */
	ck_assert_str_eq(datadir_profiles(pb, sizeof pb), "models/profiles");
	ck_assert_int_eq(chdir("models"), 0);
	snprintf(want, sizeof want, "%s/models/profiles", cwd);
	ck_assert_str_eq(datadir_profiles(pb, sizeof pb), want);
	/* From another folder: the binary (build/tests/test_datadir) still
	 * finds the tree two levels above it, not the current folder. */
	ck_assert_int_eq(chdir("/"), 0);
	ck_assert_str_eq(datadir_root(), cwd);
	snprintf(want, sizeof want, "%s/models/profiles", cwd);
	ck_assert_str_eq(datadir_profiles(pb, sizeof pb), want);
	ck_assert_int_eq(datadir_path("tests/validation/cases.yaml", got, sizeof got), 0);
	snprintf(want, sizeof want, "%s/tests/validation/cases.yaml", cwd);
	ck_assert_str_eq(got, want);
}
END_TEST

START_TEST(env_installed_layout)
{
	char dir[] = "/tmp/dpusim-datadir-XXXXXX", sub[64], got[128], want[128], pb[DATADIR_PATH_MAX];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sub, sizeof sub, "%s/profiles", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	setenv("DPUSIM_DATADIR", dir, 1);
	unsetenv("DPUSIM_PROFILE_DIR");
	ck_assert_str_eq(datadir_root(), dir);
	ck_assert_str_eq(datadir_profiles(pb, sizeof pb), sub);
	ck_assert_int_eq(datadir_path("tests/validation/cases.yaml", got, sizeof got), 0);
	snprintf(want, sizeof want, "%s/validation/cases.yaml", dir);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(datadir_path("scenarios/effects/x.yaml", got, sizeof got), 0);
	snprintf(want, sizeof want, "%s/scenarios/effects/x.yaml", dir);
	ck_assert_str_eq(got, want);
	/* A name that merely starts like a mapped folder keeps its own name. */
	ck_assert_int_eq(datadir_path("models/profilesX", got, sizeof got), 0);
	snprintf(want, sizeof want, "%s/models/profilesX", dir);
	ck_assert_str_eq(got, want);
	rmdir(sub);
	rmdir(dir);
}
END_TEST

START_TEST(env_tree_and_profile_dir)
{
	char cwd[PATH_MAX], want[PATH_MAX + 32], pb[DATADIR_PATH_MAX];
	tree_root(cwd, sizeof cwd);
	setenv("DPUSIM_DATADIR", cwd, 1);
	setenv("DPUSIM_PROFILE_DIR", "/somewhere/else", 1);
	ck_assert_str_eq(datadir_root(), cwd);
	/* $DPUSIM_PROFILE_DIR still names the profiles alone. */
	ck_assert_str_eq(datadir_profiles(pb, sizeof pb), "/somewhere/else");
	unsetenv("DPUSIM_PROFILE_DIR");
	ck_assert_str_eq(datadir_profiles(pb, sizeof pb), "models/profiles"); /* a tree keeps its names */
	ck_assert_int_eq(chdir("/"), 0);
	snprintf(want, sizeof want, "%s/models/profiles", cwd);
	ck_assert_str_eq(datadir_profiles(pb, sizeof pb), want);
}
END_TEST

START_TEST(too_small)
{
	char buf[8] = "junk";
	setenv("DPUSIM_DATADIR", "/a/rather/long/folder", 1);
	ck_assert_int_eq(datadir_path("models/profiles", buf, sizeof buf), -1);
	ck_assert_str_eq(buf, "");
}
END_TEST

/* $DPUSIM_DATADIR too long to use leaves no data folder: nothing else (the
 * tree beside the binary, the installed copy) is taken in its place, and
 * every path built on it is "" with the reason to say. */
START_TEST(env_too_long_is_no_folder)
{
	static char longdir[DATADIR_PATH_MAX + 16];
	char pb[DATADIR_PATH_MAX] = "junk", got[64] = "junk";
	memset(longdir, 'x', sizeof longdir - 1);
	longdir[0] = '/';
	setenv("DPUSIM_DATADIR", longdir, 1);
	unsetenv("DPUSIM_PROFILE_DIR");
	ck_assert_str_eq(datadir_root(), "");
	ck_assert_str_eq(datadir_profiles(pb, sizeof pb), "");
	ck_assert_str_eq(datadir_profiles_too_long(), DATADIR_TOO_LONG);
	ck_assert_int_eq(datadir_path("tests/validation/cases.yaml", got, sizeof got), -1);
	ck_assert_str_eq(got, "");
	/* the profiles' own variable, too long, is named as the reason */
	setenv("DPUSIM_PROFILE_DIR", longdir, 1);
	strcpy(pb, "junk");
	ck_assert_str_eq(datadir_profiles(pb, sizeof pb), "");
	ck_assert_str_eq(datadir_profiles_too_long(), PROFILE_DIR_TOO_LONG);
}
END_TEST

/* The caller owns the result: a second call with another buffer leaves the
 * first one's as it was, and a buffer too small for the folder gets "". */
START_TEST(profiles_in_callers_buffer)
{
	char a[DATADIR_PATH_MAX], b[DATADIR_PATH_MAX], small[8] = "junk";
	setenv("DPUSIM_PROFILE_DIR", "/first/profiles", 1);
	ck_assert_ptr_eq(datadir_profiles(a, sizeof a), a);
	setenv("DPUSIM_PROFILE_DIR", "/second/profiles", 1);
	ck_assert_str_eq(datadir_profiles(b, sizeof b), "/second/profiles");
	ck_assert_str_eq(a, "/first/profiles");
	ck_assert_str_eq(datadir_profiles(small, sizeof small), "");
	unsetenv("DPUSIM_PROFILE_DIR");
	setenv("DPUSIM_DATADIR", "/a/rather/long/folder", 1);
	strcpy(small, "junk");
	ck_assert_str_eq(datadir_profiles(small, sizeof small), "");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("datadir");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, finds_tree_of_binary);
	tcase_add_test(tc, env_installed_layout);
	tcase_add_test(tc, profiles_in_callers_buffer);
	tcase_add_test(tc, env_tree_and_profile_dir);
	tcase_add_test(tc, too_small);
	tcase_add_test(tc, env_too_long_is_no_folder);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN_FORKED(suite)
