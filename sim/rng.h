/* Named random streams: one GSL generator per entity, seeded from the
 * scenario seed and the stream's name, so adding a stream never changes the
 * numbers another stream draws. Distributions come from gsl_randist. */
#ifndef DPUSIM_SIM_RNG_H
#define DPUSIM_SIM_RNG_H

#include <stdbool.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

typedef struct sim_rng sim_rng;

/* The 64-bit seed of stream `name` under scenario seed `seed`: a hash of
 * the name (FNV-1a) mixed with the seed (SplitMix64 finaliser). */
uint64_t sim_rng_stream_seed(uint64_t seed, const char *name);

/* A new stream (GSL taus2), or NULL when out of memory. Free with
 * sim_rng_free (NULL is a no-op). */
sim_rng *sim_rng_new(uint64_t seed, const char *name);
void sim_rng_free(sim_rng *r);

/* The underlying generator, for other gsl_ran_* functions; owned by r. */
gsl_rng *sim_rng_gsl(sim_rng *r);

double sim_rng_uniform(sim_rng *r);                        /* [0, 1) */
double sim_rng_uniform_range(sim_rng *r, double a, double b); /* [a, b) */
double sim_rng_exponential(sim_rng *r, double mean);
double sim_rng_normal(sim_rng *r, double mean, double sd);
/* exp(N(zeta, sigma^2)): the median is exp(zeta). */
double sim_rng_lognormal(sim_rng *r, double zeta, double sigma);
bool sim_rng_bernoulli(sim_rng *r, double p);
/* Uniform integer in [0, n), n >= 1. */
uint64_t sim_rng_below(sim_rng *r, uint64_t n);

#endif
