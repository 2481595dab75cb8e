/* Order statistics of repeated timings (dpusim-hw bench and replay): a call
 * descheduled for a scheduler slice on a shared machine takes milliseconds
 * where its neighbours take microseconds, so a mean over a few calls is
 * that one call; the median is not, and p10/p90 show the spread. */
#ifndef DPUSIM_HW_STATS_H
#define DPUSIM_HW_STATS_H

#include <stddef.h>

typedef struct hw_stats {
	size_t n;
	double min, p10, median, p90, max, mean;
} hw_stats;

/* Sorts v[0..n) ascending and describes it in *out; n >= 1. The median
 * averages the two middle values of an even count; p10 and p90 are nearest
 * ranks (hw_quantile_sorted). */
void hw_stats_of(double *v, size_t n, hw_stats *out);
/* Median of v[0..n) (sorts v); n >= 1. */
double hw_median(double *v, size_t n);
/* Value at quantile q in [0,1] of sorted v[0..n), nearest rank: the
 * ceil(q n)-th smallest (the smallest for q = 0); n >= 1. */
double hw_quantile_sorted(const double *v, size_t n, double q);

#endif
