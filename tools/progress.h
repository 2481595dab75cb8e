/* Progress lines of a long `dpusim run` on stderr, terminal or not: the
 * training loop's per-iteration lines and, between them, a heartbeat from
 * the event loop itself, so that a run whose single iteration or size
 * takes long (a p2p or collective workload, many microbatches) still says
 * it is alive. One line at most per interval (DPUSIM_PROGRESS_S, for
 * tests; PROGRESS_EVERY_S by default). */
#ifndef DPUSIM_TOOLS_PROGRESS_H
#define DPUSIM_TOOLS_PROGRESS_H

#include <stdbool.h>

#define PROGRESS_EVERY_S 10.0

/* Starts the clock and installs the engine heartbeat (sim_set_heartbeat). */
void progress_start(void);
/* What is being simulated now, for the heartbeat's lines ("gdr"). */
void progress_what(const char *what);
/* True (and the interval restarted) when a line is due now; the first
 * call starts the clock where progress_start was not called (a sweep's
 * points: their iteration lines, no heartbeat). */
bool progress_due(void);

#endif
