/* Messages from dpusim-hw, in one format, naming the MPI rank when there is
 * one: "dpusim-hw: rank 2: error: timed out ...". The check macros wrap each
 * external API family (verbs, sockets, CUDA): on failure they log the call,
 * the errno or driver message and the source location, then return an error
 * code upward (nccl-tests' CUDACHECK, without aborting). */
#ifndef DPUSIM_HW_LOG_H
#define DPUSIM_HW_LOG_H

#include <errno.h>
#include <string.h>

#include "sim/err.h"

/* Sets the rank named in messages; -1 (the default) names none. */
void hw_log_set_rank(int rank);
int hw_log_rank(void);

/* "dpusim-hw: [rank R: ]error: ..." on stderr. */
void hw_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "dpusim-hw: [rank R: ]warning: ..." on stderr. */
void hw_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same as hw_error, and returns `code` for `return hw_fail(...)`. */
int hw_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A libc/socket call returning -1 with errno set. */
#define HW_SYSCHECK(call)                                                          \
	do {                                                                       \
		if ((call) < 0)                                                    \
			return hw_fail(SIM_EIO, "%s failed: %s (%s:%d)", #call,    \
				       strerror(errno), __FILE__, __LINE__);       \
	} while (0)

#endif
