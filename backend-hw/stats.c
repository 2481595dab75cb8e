/* Order statistics of repeated timings (see stats.h). */
#include "backend-hw/stats.h"

#include <math.h>

#include <gsl/gsl_sort.h>

double hw_quantile_sorted(const double *v, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);
	return v[k == 0 ? 0 : k > n ? n - 1 : k - 1];
}

static double median_sorted(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double hw_median(double *v, size_t n)
{
	gsl_sort(v, 1, n);
	return median_sorted(v, n);
}

void hw_stats_of(double *v, size_t n, hw_stats *out)
{
	double sum = 0;
	gsl_sort(v, 1, n);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	*out = (hw_stats){ .n = n, .min = v[0], .p10 = hw_quantile_sorted(v, n, 0.1),
			   .median = median_sorted(v, n), .p90 = hw_quantile_sorted(v, n, 0.9),
			   .max = v[n - 1], .mean = sum / (double)n };
}
