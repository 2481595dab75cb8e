/* dpusim run: for now only --dump, the fully resolved scenario as YAML
 * (profiles merged, SI units). Simulating scenarios is not wired here yet:
 * without --dump it says so and exits 2. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/scn_cli.h"

int cmd_run(int argc, char **argv)
{
	scn_cli c = { 0 };
	scn_scenario *s = NULL;
	const char *unknown = NULL;
	bool dump = false;
	int rc;
	for (int i = 1; i < argc; i++) {
		int taken = scn_cli_option(&c, argc, argv, &i);
		if (taken < 0)
			return CLI_USAGE;
		if (taken)
			continue;
		if (!strcmp(argv[i], "--dump"))
			dump = true;
		else if (argv[i][0] == '-' && argv[i][1])
			unknown = unknown ? unknown : argv[i];
		else if (c.file)
			return cli_usage_error("run: one scenario file at a time ('%s' and '%s')", c.file, argv[i]);
		else
			c.file = argv[i];
	}
	if (!dump)
		return cli_usage_error("run: simulating scenarios is not built yet in this version of dpusim "
				       "(only 'dpusim run FILE --dump' is; 'dpusim check FILE' validates)");
	if (unknown)
		return cli_usage_error("run --dump: unknown option '%s'", unknown);
	if (!c.file)
		return cli_usage_error("run: no scenario file given (usage: dpusim run FILE --dump)");
	if ((rc = scn_cli_load(&c, &s)))
		return rc;
	scn_dump(s, stdout);
	scn_free(s);
	return CLI_OK;
}
