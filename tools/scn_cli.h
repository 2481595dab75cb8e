/* Scenario options the scenario commands share (check, run, sweep...):
 * FILE, --profile FILE (repeatable), --profile-dir DIR; and loading with
 * every error printed. */
#ifndef DPUSIM_TOOLS_SCN_CLI_H
#define DPUSIM_TOOLS_SCN_CLI_H

#include <stdbool.h>

#include "models/scenario.h"

#define SCN_CLI_MAX_PROFILES 32

typedef struct scn_cli {
	const char *file;
	const char *profile_dir; /* --profile-dir, else datadir_profiles() */
	const char *profiles[SCN_CLI_MAX_PROFILES];
	size_t nprofiles;
} scn_cli;

/* Takes argv[*i] if it is --profile FILE or --profile-dir DIR (advancing *i
 * past the value). Returns 1 when taken, 0 when not ours, -1 (message
 * printed) on a missing value or too many --profile. */
int scn_cli_option(scn_cli *c, int argc, char **argv, int *i);

/* The profile directory in effect. */
const char *scn_cli_profile_dir(const scn_cli *c);

/* Loads c->file. On failure prints every error, then one closing line, on
 * stderr and returns CLI_USAGE; on success *out (free with scn_free) and
 * CLI_OK. */
int scn_cli_load(const scn_cli *c, scn_scenario **out);

#endif
