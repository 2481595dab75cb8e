/* models/profile: every shipped profile loads, every value has a source,
 * every absent field is explained; malformed profiles are rejected. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/profile.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

START_TEST(every_shipped_profile_loads_with_sources)
{
	DIR *dir = opendir("models/profiles");
	struct dirent *e;
	size_t n = 0;
	ck_assert_ptr_nonnull(dir);
	while ((e = readdir(dir))) {
		char path[512];
		size_t len = strlen(e->d_name);
		profile *p = NULL;
		diag *d;
		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
			continue;
		d = diag_new();
		snprintf(path, sizeof path, "models/profiles/%s", e->d_name);
		int rc = profile_load(path, &p, d);
		if (rc)
			diag_print(d, stderr);
		ck_assert_msg(rc == SIM_OK, "%s does not load", path);
		ck_assert_msg(!strncmp(e->d_name, profile_name(p), len - 5) && strlen(profile_name(p)) == len - 5,
			      "%s: name '%s' differs from the file name", path, profile_name(p));
		ck_assert_str_ne(profile_summary(p), "");
		for (size_t i = 0; i < profile_nfields; i++) {
			const profile_field *f = &profile_fields[i];
			double v;
			if (f->kind != profile_get_kind(p))
				continue;
			v = profile_field_get(profile_get_values(p), f);
			if (profile_source(p, f)) {
				ck_assert_msg(strlen(profile_source(p, f)) > 10, "%s: %s: source too short", path, f->name);
				ck_assert_msg(!isnan(v), "%s: %s has a source but no value", path, f->name);
			} else {
				ck_assert_msg(isnan(v), "%s: %s has a value but no source", path, f->name);
				ck_assert_msg(profile_missing(p, f) && *profile_missing(p, f),
					      "%s: %s is neither given nor explained", path, f->name);
			}
		}
		profile_free(p);
		diag_free(d);
		n++;
	}
	closedir(dir);
	ck_assert_uint_ge(n, 1);
}
END_TEST

static diag *load_text(const char *text, int want_rc)
{
	char path[] = "/tmp/test_profile.XXXXXX";
	int fd = mkstemp(path);
	profile *p = NULL;
	diag *d = diag_new();
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	ck_assert_int_eq(profile_load(path, &p, d), want_rc);
	ck_assert_ptr_null(p);
	unlink(path);
	return d;
}

static bool has_suffix(const diag *d, const char *want)
{
	for (size_t i = 0; i < diag_count(d); i++) {
		const char *m = diag_msg(d, i);
		if (strlen(m) >= strlen(want) && !strcmp(m + strlen(m) - strlen(want), want))
			return true;
	}
	diag_print(d, stderr);
	return false;
}

START_TEST(malformed_profiles)
{
	diag *d = load_text("kind: storage\nname: x\nsummary: s\nfields:\n"
			    "  bw: { value: 90GB, source: \"a datasheet\" }\n"
			    "  iops: { value: 3MIOPS }\n"
			    "  latncy: { value: 1ms, source: \"x\" }\n"
			    "missing:\n  - \"power_w: unknown\"\n  - \"bogus: no\"\n",
			    SIM_EPARSE);
	ck_assert(has_suffix(d, ":5:16: '90GB' is a size, expected a data rate such as 400Gbps or 25GB/s in 'bw'"));
	ck_assert(has_suffix(d, ":6:9: field 'iops' has no source (every value cites one)"));
	ck_assert(has_suffix(d, ":7:3: unknown field 'latncy' for a storage profile"));
	ck_assert(has_suffix(d, ":10:5: missing entry names unknown field 'bogus'"));
	diag_free(d);
	d = load_text("kind: storage\nname: x\nsummary: s\nfields:\n"
		      "  bw: { value: 90GB/s, source: \"a datasheet\" }\n", SIM_EPARSE);
	ck_assert(has_suffix(d, ": field 'iops' is neither given under fields nor listed under missing"));
	diag_free(d);
	/* NCCL's channel count is a whole number of at most MAXCHANNELS, 64. */
	d = load_text("kind: gpu\nname: x\nsummary: s\nfields:\n"
		      "  nccl_channels: { value: 24.5, source: \"a log\" }\n", SIM_EPARSE);
	ck_assert(has_suffix(d, ":5:27: '24.5' is not a whole number in 'nccl_channels'"));
	diag_free(d);
	d = load_text("kind: gpu\nname: x\nsummary: s\nfields:\n"
		      "  nccl_channels: { value: 65, source: \"a log\" }\n", SIM_EPARSE);
	ck_assert(has_suffix(d, ":5:27: '65' is out of range for 'nccl_channels' (accepted: [1, 64])"));
	diag_free(d);
	/* Beyond 2^53 the range is the news, not wholeness (it said "not a
	 * whole number"). */
	d = load_text("kind: gpu\nname: x\nsummary: s\nfields:\n"
		      "  nccl_channels: { value: 1e300, source: \"a log\" }\n", SIM_EPARSE);
	ck_assert(has_suffix(d, ":5:27: '1e300' is out of range for 'nccl_channels' (accepted: [1, 64])"));
	diag_free(d);
	d = load_text("kind: gpu\nname: x\nsummary: s\nfields:\n"
		      "  nccl_channels: { value: 9007199254740993, source: \"a log\" }\n", SIM_EPARSE);
	ck_assert(has_suffix(d, ":5:27: '9007199254740993' is out of range for 'nccl_channels' (accepted: [1, 64])"));
	diag_free(d);
	d = load_text("kind: tpu\nname: x\nsummary: s\nfields: {}\n", SIM_EPARSE);
	ck_assert(has_suffix(d, ":1:7: unknown kind 'tpu' (expected gpu, cpu, nic, dpu, switch, storage or host-costs)"));
	diag_free(d);
}
END_TEST

START_TEST(set_finds_by_name_and_overrides)
{
	profile_set *s = profile_set_new("models/profiles");
	const profile *p;
	diag *d = diag_new();
	const char *const *names;
	size_t n;
	ck_assert_int_eq(profile_set_find(s, "H100-SXM5", &p, d), SIM_OK);
	ck_assert_int_eq(profile_get_kind(p), PROFILE_GPU);
	ck_assert_int_eq(profile_set_find(s, "no-such-device", &p, d), SIM_ENOENT);
	ck_assert_int_eq(profile_set_find(s, "../Makefile", &p, d), SIM_ENOENT);
	ck_assert_int_eq(profile_set_names(s, &names, &n), SIM_OK);
	ck_assert_uint_ge(n, 1);
	for (size_t i = 1; i < n; i++)
		ck_assert_int_lt(strcmp(names[i - 1], names[i]), 0);
	ck_assert_uint_eq(diag_count(d), 0);
	ck_assert_str_eq(profile_field_suggest(PROFILE_GPU, "hbm_bww"), "hbm_bw");
	diag_free(d);
	profile_set_free(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("profile");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, every_shipped_profile_loads_with_sources);
	tcase_add_test(tc, malformed_profiles);
	tcase_add_test(tc, set_finds_by_name_and_overrides);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
