/* Statistics for simulation output: a running accumulator (count, mean,
 * variance, min, max) that is numerically stable and mergeable, an optional
 * bounded sample store for quantiles, and confidence intervals across
 * replications from the t distribution (GSL). */
#ifndef DPUSIM_SIM_STATS_H
#define DPUSIM_SIM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Running accumulator (Welford's update, Chan et al.'s merge). The struct is
 * public because models embed one per metric by value; treat the fields as
 * private and read them through the functions below. */
typedef struct stats_acc {
	uint64_t n;
	double mean;
	double m2;   /* sum of squared deviations from the mean */
	double min;
	double max;
} stats_acc;

/* Sets *a to the empty accumulator. A zeroed struct is NOT empty (its min
 * and max would be 0): always initialise. */
void stats_acc_init(stats_acc *a);

/* Adds one observation. A non-finite x is a model bug and aborts with the
 * caller's location. */
#define stats_acc_add(a, x) stats_acc_add_loc((a), (x), __FILE__, __LINE__)
void stats_acc_add_loc(stats_acc *a, double x, const char *file, int line);

/* Folds `other` into `into`, as if every observation of `other` had been
 * added to `into` (up to rounding). `other` is unchanged; they may not alias. */
void stats_acc_merge(stats_acc *into, const stats_acc *other);

uint64_t stats_acc_count(const stats_acc *a);
/* Mean; NaN when empty (a metric that does not apply, never a made-up 0). */
double stats_acc_mean(const stats_acc *a);
/* Sample variance and standard deviation (divisor n - 1); NaN when n < 2. */
double stats_acc_variance(const stats_acc *a);
double stats_acc_stddev(const stats_acc *a);
/* Smallest and largest observation; NaN when empty. */
double stats_acc_min(const stats_acc *a);
double stats_acc_max(const stats_acc *a);

/* Half-width of the two-sided confidence interval of the mean at `level`
 * (0 < level < 1, e.g. 0.95), treating each observation as one independent
 * replication: t_{(1+level)/2, n-1} * s / sqrt(n), the t quantile from
 * gsl_cdf_tdist_Pinv. Returns 0 and sets *half, SIM_EINVAL for a level
 * outside (0, 1), or SIM_ERANGE when n < 2 (no interval exists). */
int stats_acc_ci_halfwidth(const stats_acc *a, double level, double *half);
/* As stats_acc_ci_halfwidth at level 0.95. */
int stats_acc_ci95(const stats_acc *a, double *half);

/* Sample store for quantiles. Memory is bounded by the caller's choice of
 * `cap`: the first cap observations are kept; after that the store is a
 * uniform random sample of everything seen (Vitter's algorithm R, with a
 * fixed-seed internal generator so runs are reproducible), and quantiles
 * become estimates: stats_samples_exact says which. A caller who does not
 * want quantiles simply does not create one. */
typedef struct stats_samples stats_samples;

/* Keep everything: memory grows with the number of observations. */
#define STATS_KEEP_ALL SIZE_MAX

/* A new, empty store keeping at most cap (>= 1) observations, or NULL when
 * out of memory or cap is 0. Storage grows on demand up to cap. Free with
 * stats_samples_free (NULL is a no-op). */
stats_samples *stats_samples_new(size_t cap);
void stats_samples_free(stats_samples *s);

/* Adds one observation. Returns 0, SIM_EINVAL for a non-finite x (not
 * stored), or SIM_ENOMEM (not stored; the store is unchanged). */
int stats_samples_add(stats_samples *s, double x);

/* Observations seen, and observations kept (min(seen, cap)). */
uint64_t stats_samples_seen(const stats_samples *s);
size_t stats_samples_kept(const stats_samples *s);
/* True while every observation seen is kept (quantiles are exact). */
bool stats_samples_exact(const stats_samples *s);

/* The q-quantile (0 <= q <= 1) of v[0..n) sorted ascending (n >= 1), at
 * position q * (n - 1) as gsl_stats_quantile_from_sorted_data places it,
 * interpolated as lo + d * (hi - lo) and kept within [lo, hi]: equal
 * neighbours give their value exactly and a larger q never gives less.
 * GSL's (1 - d) * lo + d * hi can do neither in floating point: with five
 * equal iterations of 27.2677 s its 0.99-quantile came out above the
 * median's, and the report was refused (p50 > p99). */
double stats_quantile_sorted(const double *v, size_t n, double q);

/* The q-quantile (0 <= q <= 1) of the kept observations
 * (stats_quantile_sorted). Sorts the
 * store in place (gsl_sort) when it changed since the last call. Returns 0,
 * SIM_EINVAL for q outside [0, 1], or SIM_ENOENT when the store is empty. */
int stats_samples_quantile(stats_samples *s, double q, double *out);

#endif
