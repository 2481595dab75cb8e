/* Performance noise: counter-based draws from named streams. */
#include "models/noise.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "sim/err.h"
#include "sim/rng.h"

struct noise_model {
	noise_params p;
	uint32_t nodes;
	uint32_t slow_count;
	uint64_t *gpu_key;    /* stream seed of "noise.gpu.G", per GPU */
	uint64_t *jitter_key; /* stream seed of "noise.jitter.N", per node */
	bool *slow;           /* per node */
	double *gpu_slow;     /* per GPU, or NULL (p.gpu_slow copied) */
};

/* SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): output i of the
 * generator seeded with key is the finaliser applied to key + (i+1)*gamma.
 * Reading it by index gives random access to each stream. */
static uint64_t stream_bits(uint64_t key, uint64_t i)
{
	uint64_t z = key + (i + 1) * UINT64_C(0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in the open interval (0, 1) from the top 53 bits. */
static double open_uniform(uint64_t bits)
{
	return ((double)(bits >> 11) + 0.5) * 0x1p-53;
}

static uint64_t named_key(uint64_t seed, const char *kind, uint32_t index)
{
	char name[48];
	snprintf(name, sizeof name, "noise.%s.%u", kind, index);
	return sim_rng_stream_seed(seed, name);
}

static bool finite_in(double x, double lo, double hi)
{
	return isfinite(x) && x >= lo && x <= hi;
}

int noise_params_check(const noise_params *p, char *why, size_t n)
{
	const char *bad = NULL;
	if (!p->gpus || !p->gpus_per_node)
		bad = "gpus and gpus_per_node must be at least 1";
	else if (!finite_in(p->gpu_sigma, 0, HUGE_VAL))
		bad = "gpu slowdown sigma must be a finite number >= 0";
	else if (!finite_in(p->slow_node_frac, 0, 1))
		bad = "slow-node fraction must be between 0 and 1";
	else if (p->slow_node_frac > 0 && !finite_in(p->slow_node_factor, 1, HUGE_VAL))
		bad = "slow-node factor must be a finite number >= 1";
	else if (!finite_in(p->jitter_mean_s, 0, HUGE_VAL))
		bad = "jitter mean must be a finite time >= 0";
	for (uint32_t g = 0; !bad && p->gpu_slow && g < p->gpus; g++)
		if (!finite_in(p->gpu_slow[g], 1, HUGE_VAL))
			bad = "a GPU's slowdown must be a finite number >= 1";
	if (!bad)
		return SIM_OK;
	snprintf(why, n, "%s", bad);
	return SIM_EINVAL;
}

double noise_factor_mean(double sigma)
{
	return 2 * exp(sigma * sigma / 2) * gsl_cdf_ugaussian_P(sigma);
}

double noise_factor_cv(double sigma)
{
	double p = gsl_cdf_ugaussian_P(sigma);
	/* CV^2 = e^{sigma^2} Phi(2 sigma) / (2 Phi(sigma)^2) - 1: below 1e-4
	 * the difference loses digits, and the series term is exact enough. */
	if (sigma < 1e-4)
		return sigma * sqrt(1 - 2 / M_PI);
	return sqrt(exp(sigma * sigma) * gsl_cdf_ugaussian_P(2 * sigma) / (2 * p * p) - 1);
}

int noise_sigma_for_cv(double cv, double *sigma)
{
	double lo = 0, hi = 3; /* noise_factor_cv(3) is about 64 */
	if (!(cv >= 0 && cv <= 10))
		return SIM_ERANGE;
	/* The CV grows monotonically with sigma: bisect to the last bit. */
	for (int i = 0; i < 200 && lo < hi; i++) {
		double mid = (lo + hi) / 2;
		if (mid <= lo || mid >= hi)
			break;
		if (noise_factor_cv(mid) < cv)
			lo = mid;
		else
			hi = mid;
	}
	*sigma = lo;
	return SIM_OK;
}

/* Draws each node's slow flag (the first value of its stream) and the
 * per-entity stream keys. */
static void noise_seed(noise_model *m, uint64_t seed)
{
	for (uint32_t g = 0; g < m->p.gpus; g++)
		m->gpu_key[g] = named_key(seed, "gpu", g);
	for (uint32_t node = 0; node < m->nodes; node++) {
		uint64_t k = named_key(seed, "slow", node);
		m->slow[node] = open_uniform(stream_bits(k, 0)) < m->p.slow_node_frac;
		m->slow_count += m->slow[node];
		m->jitter_key[node] = named_key(seed, "jitter", node);
	}
}

noise_model *noise_new(const noise_params *p, uint64_t seed)
{
	char why[96];
	noise_model *m;
	if (noise_params_check(p, why, sizeof why))
		return NULL;
	m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->p = *p;
	m->nodes = p->gpus / p->gpus_per_node + (p->gpus % p->gpus_per_node != 0);
	m->gpu_key = malloc(p->gpus * sizeof *m->gpu_key);
	m->jitter_key = malloc(m->nodes * sizeof *m->jitter_key);
	m->slow = malloc(m->nodes * sizeof *m->slow);
	if (p->gpu_slow && (m->gpu_slow = malloc(p->gpus * sizeof *m->gpu_slow)))
		memcpy(m->gpu_slow, p->gpu_slow, p->gpus * sizeof *m->gpu_slow);
	m->p.gpu_slow = NULL; /* the copy is m->gpu_slow */
	if (!m->gpu_key || !m->jitter_key || !m->slow || (p->gpu_slow && !m->gpu_slow)) {
		noise_free(m);
		return NULL;
	}
	noise_seed(m, seed);
	return m;
}

void noise_free(noise_model *n)
{
	if (!n)
		return;
	free(n->gpu_key);
	free(n->jitter_key);
	free(n->slow);
	free(n->gpu_slow);
	free(n);
}

double noise_gpu_factor(const noise_model *n, uint32_t gpu, uint64_t step)
{
	double f = 1.0;
	SIM_ASSERT(gpu < n->p.gpus, "noise: GPU %u of %u", gpu, n->p.gpus);
	if (n->p.gpu_sigma > 0) {
		/* |Z| = -Pinv(u / 2): the lower tail keeps full precision. */
		double u = open_uniform(stream_bits(n->gpu_key[gpu], step));
		f = exp(-n->p.gpu_sigma * gsl_cdf_ugaussian_Pinv(u / 2));
	}
	if (n->slow[gpu / n->p.gpus_per_node])
		f *= n->p.slow_node_factor;
	if (n->gpu_slow)
		f *= n->gpu_slow[gpu];
	return f;
}

double noise_group_max(const noise_model *n, uint32_t first_gpu, uint32_t count,
		       uint64_t step)
{
	double worst = 0;
	SIM_ASSERT(count >= 1 && first_gpu < n->p.gpus && count <= n->p.gpus - first_gpu,
		   "noise: group of %u from GPU %u outside %u GPUs", count, first_gpu,
		   n->p.gpus);
	for (uint32_t g = first_gpu; g < first_gpu + count; g++) {
		double f = noise_gpu_factor(n, g, step);
		if (f > worst)
			worst = f;
	}
	return worst;
}

double noise_jitter_s(const noise_model *n, uint32_t node, uint64_t msg, noise_path path)
{
	SIM_ASSERT(node < n->nodes, "noise: node %u of %u", node, n->nodes);
	if (path != NOISE_PATH_HOST_CPU || n->p.jitter_mean_s == 0)
		return 0;
	return -n->p.jitter_mean_s * log(open_uniform(stream_bits(n->jitter_key[node], msg)));
}

uint32_t noise_node_of(const noise_model *n, uint32_t gpu)
{
	SIM_ASSERT(gpu < n->p.gpus, "noise: GPU %u of %u", gpu, n->p.gpus);
	return gpu / n->p.gpus_per_node;
}

uint32_t noise_nodes(const noise_model *n)
{
	return n->nodes;
}

bool noise_node_is_slow(const noise_model *n, uint32_t node)
{
	SIM_ASSERT(node < n->nodes, "noise: node %u of %u", node, n->nodes);
	return n->slow[node];
}

uint32_t noise_slow_nodes(const noise_model *n)
{
	return n->slow_count;
}
