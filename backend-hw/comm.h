/* The MPI side of dpusim-hw: rank facts and the out-of-band exchange of
 * connection messages (backend-hw/msg.h text) before transports connect. */
#ifndef DPUSIM_HW_COMM_H
#define DPUSIM_HW_COMM_H

#include <stdbool.h>
#include <stddef.h>

/* Default bound on MPI_Init and MPI_Finalize: start-up of many ranks, or of
 * sanitizer builds on a busy machine, legitimately takes seconds. */
#define HW_COMM_START_MS 60000

/* MPI_Init (once) and sets the rank in log messages. Every wait below lasts
 * at most timeout_ms, MPI_Init and MPI_Finalize at most start_timeout_ms
 * (0: the larger of timeout_ms and HW_COMM_START_MS): past it the rank says
 * in which step it hung and ends (status 2), taking every rank with it
 * (MPI_Abort, or mpirun seeing it exit). With $DPUSIM_HW_NETNS set (a
 * namespace of tools/lab-net), the calling thread then enters that network
 * namespace, or every rank is ended. 0 or SIM_EIO. */
int hw_comm_init(int *argc, char ***argv, int timeout_ms, int start_timeout_ms);

/* A --timeout/--start-timeout value: plain seconds, the whole string a
 * number (sscanf took "5xyz" as 5), 0.001 to 3600 (1e-9 came to 0 ms:
 * every wait timed out at once, or the default for --start-timeout),
 * rounded up to whole ms. 0, or -1 for a bad value. */
int hw_parse_timeout_ms(const char *v, int *ms);
/* MPI_Finalize after a successful run (bounded by the timeout). */
void hw_comm_finalize(void);
/* Ends every rank now with exit status `status` (MPI_Abort): the way out
 * after a transport failure, when some peer may be hung. Never returns. */
_Noreturn void hw_comm_abort(int status);

int hw_comm_rank(void);
int hw_comm_size(void);

/* Whether there is a peer to talk to (2 ranks or more); when not, says
 * that the `what` transport needs them. */
bool hw_comm_has_peers(const char *what);

/* Says whether one gathered slot[cap] holds a record this rank can use:
 * 0, or a negative code (a decoder from backend-hw/msg.h). */
typedef int (*hw_comm_check_fn)(const char *slot, size_t cap);

/* Gathers every rank's message (at most HW_MSG_MAX bytes with its NUL) into
 * all[size][HW_MSG_MAX], rank order. `mine` NULL or "" says this rank failed
 * locally. Every rank checks every slot with `check` (peers' records are
 * untrusted input). Returns 0; SIM_EPEER when any rank sent an empty message;
 * check's code for the first slot it refuses (logged once, the record
 * quoted safely); SIM_EIO on MPI error. Every rank sees the same answer, so
 * all give up together. */
int hw_comm_exchange(const char *mine, char *all, hw_comm_check_fn check);

/* True on every rank when `ok` is true on every rank (MPI_Allreduce LAND). */
bool hw_comm_all(bool ok);
/* Max / sum over ranks of v. */
double hw_comm_max(double v);
double hw_comm_sum(double v);
/* v[i] = the max over ranks of v[i], for each of the n (the same n on
 * every rank; below INT_MAX): the time of each call of a collective is its
 * slowest rank's. */
void hw_comm_max_each(double *v, size_t n);
/* A barrier that does not spin a core while it waits. */
void hw_comm_barrier(void);
/* Before a timed call: every rank leaves within microseconds of the others.
 * hw_comm_barrier naps 200 us at a time once a wait grows long (a rank
 * checking a large result keeps the others waiting), so ranks leave it up
 * to a nap apart, which a call of tens of microseconds would count; a second
 * barrier, entered that close together, is passed spinning. */
void hw_comm_start_together(void);

#endif
