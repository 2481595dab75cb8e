/* GSL-backed named streams. */
#include "sim/rng.h"

#include <stdlib.h>

#include <gsl/gsl_randist.h>

#include "sim/err.h"

struct sim_rng {
	gsl_rng *g;
};

static uint64_t splitmix64(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

uint64_t sim_rng_stream_seed(uint64_t seed, const char *name)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * UINT64_C(0x100000001b3);
	return splitmix64(h ^ splitmix64(seed));
}

/* gsl_rng_set takes 32 bits of seed for taus2, which would make two of
 * thousands of per-GPU streams collide now and then. taus2's state is three
 * 32-bit words (gsl's taus_state_t); fill them from the 64-bit stream seed,
 * respecting the generator's minimums, when the state has that size. */
static void seed_taus2(gsl_rng *g, uint64_t s)
{
	gsl_rng_set(g, (unsigned long)(s & 0xffffffffu));
	if (gsl_rng_size(g) == 3 * sizeof(unsigned long)) {
		unsigned long *st = gsl_rng_state(g);
		static const unsigned long min[3] = { 2, 8, 16 };
		for (int i = 0; i < 3; i++) {
			s = splitmix64(s);
			st[i] = (unsigned long)(s & 0xffffffffu);
			if (st[i] < min[i])
				st[i] += min[i];
		}
		for (int i = 0; i < 8; i++)
			gsl_rng_get(g);
	}
}

sim_rng *sim_rng_new(uint64_t seed, const char *name)
{
	sim_rng *r = malloc(sizeof *r);
	if (!r)
		return NULL;
	r->g = gsl_rng_alloc(gsl_rng_taus2);
	if (!r->g) {
		free(r);
		return NULL;
	}
	seed_taus2(r->g, sim_rng_stream_seed(seed, name));
	return r;
}

void sim_rng_free(sim_rng *r)
{
	if (!r)
		return;
	gsl_rng_free(r->g);
	free(r);
}

gsl_rng *sim_rng_gsl(sim_rng *r)
{
	return r->g;
}

double sim_rng_uniform(sim_rng *r)
{
	return gsl_rng_uniform(r->g);
}

double sim_rng_uniform_range(sim_rng *r, double a, double b)
{
	return gsl_ran_flat(r->g, a, b);
}

double sim_rng_exponential(sim_rng *r, double mean)
{
	return gsl_ran_exponential(r->g, mean);
}

double sim_rng_normal(sim_rng *r, double mean, double sd)
{
	return mean + gsl_ran_gaussian_ziggurat(r->g, sd);
}

double sim_rng_lognormal(sim_rng *r, double zeta, double sigma)
{
	return gsl_ran_lognormal(r->g, zeta, sigma);
}

bool sim_rng_bernoulli(sim_rng *r, double p)
{
	return gsl_ran_bernoulli(r->g, p) != 0;
}

uint64_t sim_rng_below(sim_rng *r, uint64_t n)
{
	SIM_ASSERT(n >= 1, "sim_rng_below(0)");
	if (n <= 0xffffffffu)
		return gsl_rng_uniform_int(r->g, (unsigned long)n);
	/* taus2 yields 32 bits per draw: combine two, reject the biased tail. */
	for (;;) {
		uint64_t x = (uint64_t)gsl_rng_get(r->g) << 32 | gsl_rng_get(r->g);
		uint64_t lim = UINT64_MAX - UINT64_MAX % n;
		if (x < lim)
			return x % n;
	}
}
