/* Ring all-reduce over a transport, with data verification: every rank
 * contributes a known pattern and checks the result against the exact sums. */
#ifndef DPUSIM_HW_ALLREDUCE_H
#define DPUSIM_HW_ALLREDUCE_H

#include <stdbool.h>
#include <stddef.h>

#include "backend-hw/xport.h"

/* Sums `count` floats in place across the ring: reduce-scatter then
 * all-gather, 2(n-1) steps of count/n elements. tmp holds at least
 * hw_allreduce_tmp_count(count, n) floats. `corrupt` (a fault hook for tests)
 * makes this rank add 1 to the first element it sends. 0 or the transport's
 * error (logged). */
int hw_allreduce_ring(hw_xport *x, float *data, size_t count, float *tmp, bool corrupt);
size_t hw_allreduce_tmp_count(size_t count, int ranks);

/* Rank `rank`'s contribution: small integers, so sums over up to 10^5 ranks
 * are exact in float and the check can demand equality. */
void hw_allreduce_fill(float *data, size_t count, int rank);
/* The first index whose value is not the sum of every rank's pattern, or
 * count when all are right; *want gets the expected value there. */
size_t hw_allreduce_check(const float *data, size_t count, int ranks, float *want);

/* nccl-tests' bus bandwidth factor for all-reduce: 2(n-1)/n. */
double hw_allreduce_bus_factor(int ranks);

#endif
