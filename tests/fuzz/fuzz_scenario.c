/* libFuzzer entry point over the scenario loader: any bytes, as a scenario
 * file, must load or be refused with messages, never crash, leak or hit
 * undefined behaviour. A scenario that loads is also summarised and dumped,
 * and its dump must load again. Run by `make fuzz`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/scenario.h"
#include "sim/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void reload_dump(const scn_scenario *s, const scn_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	scn_scenario *again = NULL;
	diag *d = diag_new();
	if (!f || !d)
		abort();
	scn_summary(s, f);
	rewind(f);
	scn_dump(s, f);
	fclose(f);
	/* The dump of a valid scenario is a valid scenario. */
	if (scn_load_buffer("dump.yaml", buf, len, o, &again, d) != SIM_OK) {
		diag_print(d, stderr);
		abort();
	}
	scn_free(again);
	diag_free(d);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	scn_opts o = { .profile_dir = "models/profiles" };
	scn_scenario *s = NULL;
	diag *d = diag_new();
	if (!d)
		return 0;
	if (scn_load_buffer("fuzz.yaml", (const char *)data, size, &o, &s, d) == SIM_OK)
		reload_dump(s, &o);
	scn_free(s);
	diag_free(d);
	return 0;
}
