/* Simulated time: an integer count of picoseconds. Never a double inside
 * the engine, so ordering and equality are exact on every machine. */
#ifndef DPUSIM_SIM_TIME_H
#define DPUSIM_SIM_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

typedef int64_t sim_time;

#define SIM_PS ((sim_time)1)
#define SIM_NS ((sim_time)1000)
#define SIM_US ((sim_time)1000000)
#define SIM_MS ((sim_time)1000000000)
#define SIM_S ((sim_time)1000000000000)
#define SIM_TIME_MAX INT64_MAX /* about 106 days */

/* Seconds to picoseconds, rounded to nearest: the one conversion of a
 * computed duration to simulated time (a cast of a double past INT64_MAX
 * is undefined). Returns SIM_EOVERFLOW when the value does not fit (or is
 * not a number), SIM_ERANGE when negative; *out is left alone then. */
int sim_time_from_s(double s, sim_time *out);

/* The horizon, SIM_TIME_MAX, in days (about 106.75): for the messages that
 * refuse a time past it. */
double sim_horizon_days(void);

/* Picoseconds to seconds (exact up to 2^53 ps, about 2.5 hours). */
double sim_time_to_s(sim_time t);

/* *out = a + b; SIM_EOVERFLOW instead of wrapping. */
static inline int sim_time_add(sim_time a, sim_time b, sim_time *out)
{
	return __builtin_add_overflow(a, b, out) ? SIM_EOVERFLOW : SIM_OK;
}

/* Formats t with a readable unit ("1.5 us", "12.000 ms", "0 s") into buf;
 * returns buf. Needs at most 32 bytes. */
char *sim_time_format(sim_time t, char *buf, size_t n);

#endif
