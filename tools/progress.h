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

/* A run of several parts (a scenario's variants, one after another or in
 * `run --jobs` workers; `coll`'s sizes), each called a `noun` ("variant",
 * "size"); `alike`: parts whose mean wall time predicts the others' (a
 * scenario's variants), else no time left is said (coll's sizes: 0.3 to 7 s
 * each at 65,536 ranks, in no order). Its lines name the part ("gdr (variant 2/3)"),
 * count the wall time from the run's start (or the sweep point's) and say
 * the whole run's time left: the running part's own estimate (from its
 * iterations' pace) and, for the parts to come, the mean wall time of the
 * parts so far. progress_parts(n) starts a run of n parts; progress_part(k)
 * starts part k (0-based), ending the one before; progress_rep the
 * replication it simulates; progress_part_left its own estimate. A --jobs
 * worker (progress_worker) runs one part of n: its time left is its own. */
void progress_parts(size_t n, const char *noun, bool alike);
void progress_part(size_t k);
void progress_rep(int rep, int reps);
void progress_part_left(double left_s);
void progress_worker(void);
/* "WHAT[ (NOUN K/N)]: TEXT, wall W s[, about L left]" as progress_say
 * writes it: W from the run's (or the point's) start, L the run's time left
 * where there is an estimate (a --jobs worker's: "left for this NOUN"). */
void progress_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The time left of a run of n parts one after another, done of them
 * finished after done_s seconds of wall time in all, the next running for
 * elapsed seconds with its own estimate of its time left own_left (NAN:
 * none): the parts to come take the mean of the known parts' walls
 * (finished, and the running one's elapsed + own estimate); without an
 * estimate the running part is that mean, raised to its elapsed (it is at
 * least that long), less its elapsed. NAN while nothing is known. Parts
 * run at once (`run --jobs`) are a sweep's points: tools/sweep_eta.h. */
double progress_left_s(size_t n, size_t done, double done_s, double elapsed, double own_left);
/* ", about 12 s left" (", about 2.5 min left"; nothing for NAN or 0) into
 * buf: how every progress line says a time left. */
void progress_left_text(char *buf, size_t n, double left_s);

/* One progress line on stderr, flushed: "dpusim: [PREFIX: ]TEXT[TAIL]". */
void progress_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
