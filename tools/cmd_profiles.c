/* dpusim profiles: list the hardware profiles, or show one with every
 * value of its kind and where each comes from. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/datadir.h"
#include "models/profile.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/scn_cli.h"

static int list(profile_set *ps)
{
	const char *const *names;
	size_t n;
	int bad = 0;
	if (profile_set_names(ps, &names, &n))
		return cli_usage_error("out of memory");
	if (!n)
		return cli_usage_error("no profiles in '%s'", profile_set_dir(ps));
	printf("%-18s %-10s %s\n", "NAME", "KIND", "SUMMARY");
	for (size_t i = 0; i < n; i++) {
		const profile *p;
		diag *d = diag_new();
		if (!d || profile_set_find(ps, names[i], &p, d)) {
			if (d)
				diag_print(d, stderr);
			bad++;
		} else {
			printf("%-18s %-10s %s\n", profile_name(p), profile_kind_name(profile_get_kind(p)),
			       profile_summary(p));
		}
		diag_free(d);
	}
	if (bad)
		return cli_usage_error("%d profile%s in '%s' did not load", bad, bad == 1 ? "" : "s",
				       profile_set_dir(ps));
	return CLI_OK;
}

static void show_field(const profile *p, const profile_field *f)
{
	double v = profile_field_get(profile_get_values(p), f);
	char buf[48];
	if (isnan(v))
		printf("%-26s (not given)\n", f->name);
	else if (f->is_bool)
		printf("%-26s %s\n", f->name, v != 0 ? "true" : "false");
	else if (f->words)
		printf("%-26s %s\n", f->name, profile_field_word(f, v));
	else
		printf("%-26s %s\n", f->name, unit_format(v, f->dim, buf, sizeof buf));
	printf("    %s\n", f->doc);
	if (profile_source(p, f))
		printf("    source: %s\n", profile_source(p, f));
	else
		printf("    missing: %s\n", profile_missing(p, f));
}

static int show(profile_set *ps, const char *name)
{
	const profile *p;
	diag *d = diag_new();
	int rc;
	if (!d)
		return cli_usage_error("out of memory");
	rc = profile_set_find(ps, name, &p, d);
	if (rc == SIM_ENOENT) {
		const char *const *names;
		size_t n = 0;
		const char *best = profile_set_names(ps, &names, &n) ? NULL : diag_suggest(name, names, n);
		diag_free(d);
		if (best)
			return cli_usage_error("no profile '%s' in '%s' (did you mean '%s'?)", name,
					       profile_set_dir(ps), best);
		return cli_usage_error("no profile '%s' in '%s' (see 'dpusim profiles')", name, profile_set_dir(ps));
	}
	if (rc) {
		diag_print(d, stderr);
		diag_free(d);
		return cli_usage_error("profile '%s' did not load", name);
	}
	diag_free(d);
	printf("%s (%s): %s\nfile: %s\nvalues in SI units\n\n", profile_name(p),
	       profile_kind_name(profile_get_kind(p)), profile_summary(p), profile_file(p));
	for (size_t i = 0; i < profile_nfields; i++)
		if (profile_fields[i].kind == profile_get_kind(p))
			show_field(p, &profile_fields[i]);
	return CLI_OK;
}

int cmd_profiles(int argc, char **argv)
{
	scn_cli c = { 0 };
	char dir[DATADIR_PATH_MAX];
	const char *name = NULL, *where;
	profile_set *ps;
	int rc;
	for (int i = 1; i < argc; i++) {
		int taken = scn_cli_option(&c, argc, argv, &i);
		if (taken < 0)
			return CLI_USAGE;
		if (taken && c.nprofiles)
			return cli_usage_error("profiles: --profile does not apply here (use --profile-dir)");
		if (taken)
			continue;
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("profiles: unknown option '%s'", argv[i]);
		if (name)
			return cli_usage_error("profiles: one profile name at a time");
		name = argv[i];
	}
	if (!*(where = scn_cli_profile_dir(&c, dir, sizeof dir)))
		return cli_usage_error("no hardware profiles: %s", datadir_profiles_too_long());
	if (!(ps = profile_set_new(where)))
		return cli_usage_error("out of memory");
	rc = name ? show(ps, name) : list(ps);
	profile_set_free(ps);
	return rc;
}
