/* Welford/Chan accumulators, a reservoir-bounded sample store sorted with
 * gsl_sort, and t-distribution confidence intervals (gsl_cdf_tdist_Pinv). */
#include "sim/stats.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim/err.h"

void stats_acc_init(stats_acc *a)
{
	*a = (stats_acc){ .n = 0, .mean = 0.0, .m2 = 0.0, .min = INFINITY, .max = -INFINITY };
}

/* Welford's update: the mean moves by a fraction of the deviation, and m2
 * grows by a product of two deviations from means, never by a difference of
 * two large squares (which loses everything for 1e9 + small noise). */
void stats_acc_add_loc(stats_acc *a, double x, const char *file, int line)
{
	double d;
	if (!isfinite(x))
		sim_die_at(file, line, "non-finite observation %g added to a statistic", x);
	a->n++;
	d = x - a->mean;
	a->mean += d / (double)a->n;
	a->m2 += d * (x - a->mean);
	if (x < a->min)
		a->min = x;
	if (x > a->max)
		a->max = x;
}

/* Chan, Golub and LeVeque's pairwise combination. */
void stats_acc_merge(stats_acc *into, const stats_acc *other)
{
	double na = (double)into->n, nb = (double)other->n, n, d;
	if (other->n == 0)
		return;
	if (into->n == 0) {
		*into = *other;
		return;
	}
	n = na + nb;
	d = other->mean - into->mean;
	into->mean += d * (nb / n);
	into->m2 += other->m2 + d * d * (na * nb / n);
	into->n += other->n;
	if (other->min < into->min)
		into->min = other->min;
	if (other->max > into->max)
		into->max = other->max;
}

uint64_t stats_acc_count(const stats_acc *a)
{
	return a->n;
}

double stats_acc_mean(const stats_acc *a)
{
	return a->n ? a->mean : NAN;
}

double stats_acc_variance(const stats_acc *a)
{
	return a->n >= 2 ? a->m2 / (double)(a->n - 1) : NAN;
}

double stats_acc_stddev(const stats_acc *a)
{
	return sqrt(stats_acc_variance(a));
}

double stats_acc_min(const stats_acc *a)
{
	return a->n ? a->min : NAN;
}

double stats_acc_max(const stats_acc *a)
{
	return a->n ? a->max : NAN;
}

int stats_acc_ci_halfwidth(const stats_acc *a, double level, double *half)
{
	double t;
	if (!(level > 0.0 && level < 1.0))
		return SIM_EINVAL;
	if (a->n < 2)
		return SIM_ERANGE;
	t = gsl_cdf_tdist_Pinv(0.5 + level / 2.0, (double)(a->n - 1));
	*half = t * stats_acc_stddev(a) / sqrt((double)a->n);
	return SIM_OK;
}

int stats_acc_ci95(const stats_acc *a, double *half)
{
	return stats_acc_ci_halfwidth(a, 0.95, half);
}

struct stats_samples {
	double *v;
	size_t n;       /* kept */
	size_t alloc;
	size_t cap;
	uint64_t seen;
	uint64_t rng;   /* splitmix64 state for the reservoir */
	bool sorted;
};

/* Any fixed value: the reservoir must be the same on every run. */
#define RESERVOIR_SEED UINT64_C(0x5eed5eed2026)

stats_samples *stats_samples_new(size_t cap)
{
	stats_samples *s;
	if (cap == 0)
		return NULL;
	s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	*s = (stats_samples){ .cap = cap, .rng = RESERVOIR_SEED, .sorted = true };
	return s;
}

void stats_samples_free(stats_samples *s)
{
	if (!s)
		return;
	free(s->v);
	free(s);
}

static uint64_t splitmix64_next(uint64_t *state)
{
	uint64_t x = (*state += UINT64_C(0x9e3779b97f4a7c15));
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* Uniform in [0, n), n >= 1, without modulo bias. */
static uint64_t below(uint64_t *state, uint64_t n)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % n, x;
	do
		x = splitmix64_next(state);
	while (x >= lim);
	return x % n;
}

static int grow(stats_samples *s)
{
	size_t want = s->alloc ? s->alloc * 2 : 64;
	double *v;
	if (want > s->cap || want < s->alloc)
		want = s->cap;
	if (want > SIZE_MAX / sizeof *v)
		return SIM_ENOMEM;
	v = realloc(s->v, want * sizeof *v);
	if (!v)
		return SIM_ENOMEM;
	s->v = v;
	s->alloc = want;
	return SIM_OK;
}

int stats_samples_add(stats_samples *s, double x)
{
	int rc;
	if (!isfinite(x))
		return SIM_EINVAL;
	if (s->n < s->cap) {
		if (s->n == s->alloc && (rc = grow(s)))
			return rc;
		s->v[s->n++] = x;
		s->seen++;
		s->sorted = false;
		return SIM_OK;
	}
	/* Algorithm R: the (seen+1)-th observation replaces a uniformly chosen
	 * kept one with probability cap / (seen + 1). Kept values are an
	 * unordered set, so sorting them in place does not bias the choice. */
	uint64_t j = below(&s->rng, s->seen + 1);
	s->seen++;
	if (j < s->cap) {
		s->v[j] = x;
		s->sorted = false;
	}
	return SIM_OK;
}

uint64_t stats_samples_seen(const stats_samples *s)
{
	return s->seen;
}

size_t stats_samples_kept(const stats_samples *s)
{
	return s->n;
}

bool stats_samples_exact(const stats_samples *s)
{
	return s->seen == s->n;
}

double stats_quantile_sorted(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1), d, lo, hi, x;
	size_t i = (size_t)pos;
	if (i + 1 >= n)
		return v[n - 1];
	d = pos - (double)i;
	lo = v[i], hi = v[i + 1];
	x = lo + d * (hi - lo); /* >= lo: d and hi - lo are >= 0 */
	return x > hi ? hi : x;
}

int stats_samples_quantile(stats_samples *s, double q, double *out)
{
	if (!(q >= 0.0 && q <= 1.0))
		return SIM_EINVAL;
	if (s->n == 0)
		return SIM_ENOENT;
	if (!s->sorted) {
		gsl_sort(s->v, 1, s->n);
		s->sorted = true;
	}
	*out = stats_quantile_sorted(s->v, s->n, q);
	return SIM_OK;
}
