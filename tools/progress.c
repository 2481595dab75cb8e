/* Progress lines for long runs (progress.h). */
#include "tools/progress.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "sim/time.h"
#include "tools/cli.h"
#include "tools/human.h"

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
	/* a run of several parts (progress_parts), one after another: those
	 * before part are done, in done_s of wall time */
	size_t parts, part;
	const char *noun;        /* what a part is called */
	bool alike, worker;
	double part_t0, done_s;
	double own_left, own_at; /* the running part's own estimate; NAN: none */
	int rep, reps;
} pg = { .every_s = PROGRESS_EVERY_S, .own_left = NAN };

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

void progress_parts(size_t n, const char *noun, bool alike)
{
	pg.parts = n;
	pg.noun = noun;
	pg.alike = alike;
	pg.part = 0;
	pg.done_s = 0;
	pg.worker = false;
	pg.part_t0 = cli_wall_s();
	pg.own_left = NAN;
	pg.rep = pg.reps = 0;
}

void progress_part(size_t k)
{
	double now = cli_wall_s();
	if (k > pg.part) /* the one before has ended */
		pg.done_s += now - pg.part_t0;
	pg.part = k;
	pg.part_t0 = now;
	pg.own_left = NAN;
	pg.rep = pg.reps = 0;
}

void progress_rep(int rep, int reps)
{
	pg.rep = rep;
	pg.reps = reps;
}

void progress_part_left(double left_s)
{
	pg.own_left = left_s;
	pg.own_at = cli_wall_s();
}

void progress_worker(void)
{
	pg.worker = true;
}

double progress_left_s(size_t n, size_t done, double done_s, double elapsed, double own_left)
{
	bool own = isfinite(own_left);
	double known = (double)done + own, mean;
	if (done >= n)
		return 0;
	if (!known)
		return NAN;
	mean = (done_s + (own ? elapsed + own_left : 0)) / known;
	if (!own)
		mean = fmax(mean, elapsed);
	return (own ? own_left : mean - elapsed) + (double)(n - done - 1) * mean;
}

void progress_left_text(char *buf, size_t n, double left_s)
{
	char t[32];
	if (!(left_s > 0))
		snprintf(buf, n, "%s", "");
	else if (left_s < 10)
		snprintf(buf, n, ", about %.2g s left", left_s);
	else if (left_s < 120)
		snprintf(buf, n, ", about %.0f s left", left_s);
	else
		snprintf(buf, n, ", about %s left", hum_duration(t, sizeof t, left_s));
}

/* The run's time left now: the running part's own estimate, aged since it
 * was made, and the parts to come (a --jobs worker: its own part only). */
static double run_left_s(void)
{
	double now = cli_wall_s(), elapsed = now - pg.part_t0;
	double own = isfinite(pg.own_left) ? fmax(pg.own_left - (now - pg.own_at), 0) : NAN;
	if (pg.parts > 1 && !pg.alike)
		return NAN;
	if (pg.worker || pg.parts < 2)
		return own;
	return progress_left_s(pg.parts, pg.part, pg.done_s, elapsed, own);
}

void progress_line(const char *fmt, ...)
{
	char text[1024], who[256], left[48];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	if (pg.parts > 1)
		snprintf(who, sizeof who, "%s (%s %zu/%zu)", pg.what[0] ? pg.what : "setup",
			 pg.noun, pg.part + 1, pg.parts);
	else
		snprintf(who, sizeof who, "%s", pg.what[0] ? pg.what : "setup");
	progress_left_text(left, sizeof left, run_left_s());
	progress_say("%s: %s, wall %.0f s%s%s%s", who, text, cli_wall_s() - pg.t0, left,
		     pg.worker && left[0] ? " for this " : "", pg.worker && left[0] ? pg.noun : "");
}

/* The engine's heartbeat: a line when one is due, with the engine's clock. */
static void beat(void *ctx, sim_time now)
{
	char rep[48] = "";
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
	if (pg.reps > 1)
		snprintf(rep, sizeof rep, ", replication %d/%d", pg.rep + 1, pg.reps);
	progress_line("still simulating%s, simulated %.4g s", rep, sim_time_to_s(now));
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
