/* Scenario options the scenario commands share (check, run, sweep...):
 * FILE, --profile FILE (repeatable), --profile-dir DIR; and loading with
 * every error printed. */
#ifndef DPUSIM_TOOLS_SCN_CLI_H
#define DPUSIM_TOOLS_SCN_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "models/datadir.h"
#include "models/scenario.h"

#define SCN_CLI_MAX_PROFILES 32

typedef struct scn_cli {
	const char *file;
	const char *profile_dir; /* --profile-dir (NULL: scn_cli_profile_dir's default) */
	const char *profiles[SCN_CLI_MAX_PROFILES];
	size_t nprofiles;
	bool fit_unchecked;      /* scn_opts.fit_unchecked (dpusim plan) */
} scn_cli;

/* Takes argv[*i] if it is --profile FILE or --profile-dir DIR (advancing *i
 * past the value). Returns 1 when taken, 0 when not ours, -1 (message
 * printed) on a missing value or too many --profile. */
int scn_cli_option(scn_cli *c, int argc, char **argv, int *i);

/* The profile directory in effect: --profile-dir, else the default
 * (datadir_profiles) written into buf, n bytes (DATADIR_PATH_MAX). */
const char *scn_cli_profile_dir(const scn_cli *c, char *buf, size_t n);

/* Loads c->file. On failure prints every error, then one closing line, on
 * stderr and returns CLI_USAGE; on success *out (free with scn_free) and
 * CLI_OK. Every file read (scn_cli_protect_inputs) is then an input no
 * output of the command may replace. */
int scn_cli_load(const scn_cli *c, scn_scenario **out);

/* Records c->file, what s was read from (extends:), the --profile files
 * and every file of the profile folder as inputs of this command
 * (atomic_protect_input). s may be NULL. CLI_OK, or CLI_USAGE (message
 * printed) when out of memory. */
int scn_cli_protect_inputs(const scn_cli *c, const scn_scenario *s);

#endif
