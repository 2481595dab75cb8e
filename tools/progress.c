/* Progress lines for long runs (progress.h). */
#include "tools/progress.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "sim/time.h"
#include "tools/cli.h"

static struct {
	bool on;
	double every_s, t0, last;
	char what[128];
	char prefix[1024];      /* a sweep point's, cut short past this */
	progress_tail_fn *tail;
	void *tail_ctx;
	progress_bar_fn *bar;   /* a terminal's bar instead of lines */
	void *bar_ctx;
	double bar_last;
	bool mute;
} pg = { .every_s = PROGRESS_EVERY_S };

void progress_bar(progress_bar_fn *fn, void *ctx)
{
	pg.bar = fn;
	pg.bar_ctx = ctx;
}

void progress_mute(bool on)
{
	pg.mute = on;
}

static void start_clock(void);

/* The bar redrawn, at most every PROGRESS_BAR_S (or the line interval, if
 * shorter: tests). */
static void redraw(void)
{
	double now = cli_wall_s();
	if (now - pg.bar_last < fmin(PROGRESS_BAR_S, pg.every_s))
		return;
	pg.bar_last = now;
	pg.bar(pg.bar_ctx);
}

void progress_context(const char *prefix, progress_tail_fn *tail, void *ctx)
{
	snprintf(pg.prefix, sizeof pg.prefix, "%s", prefix ? prefix : "");
	if (prefix && pg.on)
		pg.t0 = cli_wall_s(); /* the heartbeat's wall: the point's */
	pg.tail = tail;
	pg.tail_ctx = ctx;
}

void progress_say(const char *fmt, ...)
{
	char line[2048], tail[256] = "";
	int n;
	va_list ap;
	if (pg.mute)
		return;
	if (pg.bar)
		return redraw();
	if (pg.tail)
		pg.tail(pg.tail_ctx, tail, sizeof tail);
	n = snprintf(line, sizeof line, "dpusim: %s%s", pg.prefix, pg.prefix[0] ? ": " : "");
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof line)
		vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	/* one write, so that --jobs workers' lines do not interleave */
	fprintf(stderr, "%.*s%s\n", (int)(sizeof line - 1), line, tail);
	fflush(stderr);
}

/* The engine's heartbeat: a line when one is due, with the engine's clock. */
static void beat(void *ctx, sim_time now)
{
	(void)ctx;
	if (pg.mute)
		return;
	if (pg.bar) {
		if (!pg.on)
			start_clock();
		return redraw();
	}
	if (!progress_due())
		return;
	progress_say("%s: still simulating, simulated %.4g s, wall %.0f s",
		     pg.what[0] ? pg.what : "setup", sim_time_to_s(now), cli_wall_s() - pg.t0);
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

double progress_wait_s(void)
{
	if (!pg.on)
		start_clock();
	return fmax(pg.last + pg.every_s - cli_wall_s(), 0);
}
