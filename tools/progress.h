/* Progress lines of a long `dpusim run` on stderr, terminal or not: the
 * training loop's per-iteration lines and, between them, a heartbeat from
 * the event loop itself, so that a run whose single iteration or size
 * takes long (a p2p or collective workload, many microbatches) still says
 * it is alive. One line at most per interval (DPUSIM_PROGRESS_S, for
 * tests; PROGRESS_EVERY_S by default). A run inside a sweep or a plan
 * says which point or finalist it is and ends its lines with the whole
 * job's progress (progress_context); under a sweep's terminal bar its
 * lines redraw the bar instead (progress_bar). */
#ifndef DPUSIM_TOOLS_PROGRESS_H
#define DPUSIM_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#define PROGRESS_EVERY_S 10.0

/* Starts the clock and installs the engine heartbeat (sim_set_heartbeat). */
void progress_start(void);
/* What is being simulated now, for the heartbeat's lines ("gdr"). */
void progress_what(const char *what);
/* True (and the interval restarted) when a line is due now; the first
 * call starts the clock where progress_start was not called (a sweep's
 * points: their iteration lines, no heartbeat). */
bool progress_due(void);
/* Seconds until a line is due (0: now); the clock as progress_due. */
double progress_wait_s(void);

/* What a line is part of beyond the run: a sweep's point. Each line starts
 * "dpusim: PREFIX: " and ends with what tail writes into its buffer (the
 * sweep's own progress, "; sweep: ..."); NULL for none. The prefix is
 * copied (cut short past 1023 bytes) and restarts the heartbeat's wall
 * clock, which then counts the point's time; ctx must outlive the
 * context, which stays until replaced. */
typedef void progress_tail_fn(void *ctx, char *buf, size_t n);
void progress_context(const char *prefix, progress_tail_fn *tail, void *ctx);

/* On a terminal a sweep draws a bar instead of lines: while fn is set, the
 * heartbeat and every progress_say call fn(ctx) instead, at most every
 * PROGRESS_BAR_S (the line interval where that is shorter); NULL: lines
 * again. Muted (a --jobs worker under a terminal's bar), nothing is said. */
#define PROGRESS_BAR_S 1.0
typedef void progress_bar_fn(void *ctx);
void progress_bar(progress_bar_fn *fn, void *ctx);
void progress_mute(bool on);

/* One progress line on stderr, flushed: "dpusim: [PREFIX: ]TEXT[TAIL]". */
void progress_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
