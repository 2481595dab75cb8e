/* Shared scenario options and loading for the dpusim commands. */
#include "tools/scn_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/datadir.h"
#include "sim/err.h"
#include "report/atomic.h"
#include "tools/cli.h"

int scn_cli_option(scn_cli *c, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	if (strcmp(a, "--profile") && strcmp(a, "--profile-dir"))
		return 0;
	if (*i + 1 >= argc) {
		cli_usage_error("%s needs a value", a);
		return -1;
	}
	if (!strcmp(a, "--profile-dir")) {
		c->profile_dir = argv[++*i];
		return 1;
	}
	if (c->nprofiles == SCN_CLI_MAX_PROFILES) {
		cli_usage_error("at most %d --profile options", SCN_CLI_MAX_PROFILES);
		return -1;
	}
	c->profiles[c->nprofiles++] = argv[++*i];
	return 1;
}

const char *scn_cli_profile_dir(const scn_cli *c, char *buf, size_t n)
{
	return c->profile_dir ? c->profile_dir : datadir_profiles(buf, n);
}

int scn_cli_protect_inputs(const scn_cli *c, const scn_scenario *s)
{
	size_t n;
	char dir[DATADIR_PATH_MAX];
	const char *const *files = s ? scn_files(s, &n) : NULL;
	int err = atomic_protect_input(c->file);
	for (size_t i = 0; !err && files && i < n; i++)
		err = atomic_protect_input(files[i]);
	for (size_t i = 0; !err && i < c->nprofiles; i++)
		err = atomic_protect_input(c->profiles[i]);
	if (!err)
		err = atomic_protect_dir(scn_cli_profile_dir(c, dir, sizeof dir));
	if (err)
		cli_error("out of memory");
	return err ? CLI_USAGE : CLI_OK;
}

int scn_cli_load(const scn_cli *c, scn_scenario **out)
{
	char dir[DATADIR_PATH_MAX];
	scn_opts o = { .profile_dir = scn_cli_profile_dir(c, dir, sizeof dir),
		       .profile_files = c->profiles,
		       .nprofile_files = c->nprofiles, .fit_unchecked = c->fit_unchecked };
	diag *d = diag_new();
	int rc;
	if (!d)
		return cli_usage_error("out of memory"), CLI_USAGE;
	rc = scn_load(c->file, &o, out, d);
	if (rc) {
		fflush(stdout);
		diag_print(d, stderr);
		if (rc == SIM_ENOMEM)
			cli_error("out of memory loading '%s'", c->file);
		else
			cli_error("'%s' is not a valid scenario (%zu error%s)", c->file, diag_count(d),
				  diag_count(d) == 1 ? "" : "s");
	}
	diag_free(d);
	if (!rc && (rc = scn_cli_protect_inputs(c, *out))) {
		scn_free(*out);
		*out = NULL;
	}
	return rc ? CLI_USAGE : CLI_OK;
}
