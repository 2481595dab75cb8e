/* dpusim check: validate a scenario completely, without running it, and
 * say in one paragraph what it describes. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sim/err.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/run.h"
#include "tools/scn_cli.h"

/* At most this many failing sweep points are reported (as the loader does). */
#define MAX_BAD_POINTS 20

/* The dry setup pass (tools/run.h run_check) of s as written, which
 * `dpusim run` runs, and of every point of its sweep, which `dpusim
 * sweep` runs: what either would refuse, refused here. The file as
 * written's messages say so (a template whose own values cannot run, say
 * one node under a sweep of node counts, is refused by run). */
static int dry_run(const scn_scenario *s, diag *d)
{
	diag *seen, *bd;
	size_t bad = 0;
	int rc = SIM_OK;
	if (!s->sweep.naxes)
		return run_check(s, d);
	if (!(bd = diag_new()))
		return SIM_ENOMEM;
	if ((rc = run_check(s, bd)))
		for (size_t k = 0; k < diag_count(bd) && k < DIAG_MAX; k++)
			diag_add(d, NULL, 0, 0, "%s (the scenario as written, which 'dpusim run' "
				 "runs; 'dpusim sweep' runs the sweep's points)", diag_msg(bd, k));
	diag_free(bd);
	if (rc == SIM_ENOMEM || !(seen = diag_new()))
		return SIM_ENOMEM;
	for (size_t i = 0; i < s->sweep.points && bad < MAX_BAD_POINTS && rc != SIM_ENOMEM; i++) {
		scn_scenario *pt = NULL;
		diag *pd = diag_new();
		int prc = pd ? scn_sweep_point(s, i, &pt, pd) : SIM_ENOMEM;
		if (!prc)
			prc = run_check(pt, pd);
		if (prc && pd)
			scn_sweep_point_msgs(s, i, pd, d, seen), bad++;
		rc = rc ? rc : prc;
		scn_free(pt);
		diag_free(pd);
	}
	diag_free(seen);
	return rc;
}

int cmd_check(int argc, char **argv)
{
	scn_cli c = { 0 };
	scn_scenario *s = NULL;
	diag *d = NULL;
	int rc;
	for (int i = 1; i < argc; i++) {
		int taken = scn_cli_option(&c, argc, argv, &i);
		if (taken < 0)
			return CLI_USAGE;
		if (taken)
			continue;
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("check: unknown option '%s' (see 'dpusim check --help')", argv[i]);
		if (c.file)
			return cli_usage_error("check: one scenario file at a time ('%s' and '%s')", c.file, argv[i]);
		c.file = argv[i];
	}
	if (!c.file)
		return cli_usage_error("check: no scenario file given (usage: dpusim check FILE)");
	if ((rc = scn_cli_load(&c, &s)))
		return rc;
	if (!(d = diag_new()) || (rc = dry_run(s, d))) {
		diag_print(d, stderr);
		if (!d || rc == SIM_ENOMEM)
			cli_error("out of memory checking '%s'", c.file);
		else
			cli_error("'%s' is not a valid scenario (%zu error%s)", c.file, diag_count(d),
				  diag_count(d) == 1 ? "" : "s");
		diag_free(d);
		scn_free(s);
		return CLI_USAGE;
	}
	diag_free(d);
	scn_summary(s, stdout);
	scn_free(s);
	return CLI_OK;
}
