/* dpusim check: validate a scenario completely, without running it, and
 * say in one paragraph what it describes. */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/scn_cli.h"

int cmd_check(int argc, char **argv)
{
	scn_cli c = { 0 };
	scn_scenario *s = NULL;
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
	scn_summary(s, stdout);
	scn_free(s);
	return CLI_OK;
}
