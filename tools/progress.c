/* Progress lines for long runs (progress.h). */
#include "tools/progress.h"

#include <stdio.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "sim/time.h"
#include "tools/cli.h"

static struct {
	bool on;
	double every_s, t0, last;
	char what[128];
} pg = { .every_s = PROGRESS_EVERY_S };

/* The engine's heartbeat: a line when one is due, with the engine's clock. */
static void beat(void *ctx, sim_time now)
{
	(void)ctx;
	if (!progress_due())
		return;
	fprintf(stderr, "dpusim: %s: still simulating, simulated %.4g s, wall %.0f s\n",
		pg.what[0] ? pg.what : "setup", sim_time_to_s(now), cli_wall_s() - pg.t0);
	fflush(stderr);
}

static void start_clock(void)
{
	const char *every = getenv("DPUSIM_PROGRESS_S");
	char *end = NULL;
	double v = every ? strtod(every, &end) : PROGRESS_EVERY_S;
	pg.every_s = every && *end == '\0' && v >= 0 ? v : PROGRESS_EVERY_S;
	pg.t0 = pg.last = cli_wall_s();
	pg.on = true;
}

void progress_start(void)
{
	start_clock();
	sim_set_heartbeat(beat, NULL);
}

void progress_what(const char *what)
{
	snprintf(pg.what, sizeof pg.what, "%s", what);
}

bool progress_due(void)
{
	double now;
	if (!pg.on)
		start_clock();
	if ((now = cli_wall_s()) - pg.last < pg.every_s)
		return false;
	pg.last = now;
	return true;
}

