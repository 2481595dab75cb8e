/* Performance noise: per-GPU compute slowdown (a log-normal spread per step
 * and whole slow nodes) and OS jitter on host-CPU message paths. Every draw
 * is a pure function of (seed, entity, index), so a result never depends on
 * the order in which the training model asks for it.
 *
 * Why it matters: a synchronous collective waits for the slowest member, so
 * the expected step time grows with the group size even when each GPU's
 * spread is small (Petrini, Kerbyson and Pakin, "The Case of the Missing
 * Supercomputer Performance", SC 2003; Hoefler, Schneider and Lumsdaine,
 * "Characterizing the Influence of System Noise on Large-Scale Applications
 * by Simulation", SC 2010). The parameters below come from the scenario; this
 * module holds no hardware figure. */
#ifndef DPUSIM_MODELS_NOISE_H
#define DPUSIM_MODELS_NOISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct noise_model noise_model;

/* Where a message's per-message work runs. Only messages that cross the
 * host kernel (the TCP/IP stack, interrupts, the scheduler) pick up OS
 * jitter; kernel-bypass RDMA and GPUDirect do not. */
typedef enum noise_path {
	NOISE_PATH_BYPASS,   /* rdma, rdma-gdr */
	NOISE_PATH_HOST_CPU, /* host-tcp */
} noise_path;

/* Scenario parameters. All zero except the counts means no noise:
 * every factor is 1 and every jitter 0. The two slowdowns combine by
 * multiplication. */
typedef struct noise_params {
	uint32_t gpus;           /* GPUs in the cluster, >= 1 */
	uint32_t gpus_per_node;  /* >= 1; GPU g is on node g / gpus_per_node */
	/* Per (GPU, step) slowdown exp(gpu_sigma * |Z|), Z standard normal: a
	 * log-normal spread folded at the nominal time, because the nominal
	 * (roofline) time is the fastest a GPU runs; 0 means none. The median
	 * factor is exp(0.674 * gpu_sigma), the mean of its log is
	 * gpu_sigma * sqrt(2 / pi). */
	double gpu_sigma;
	/* Each node is slow for the whole run with this probability,
	 * independently of the others ([0, 1]); a slow node's GPUs run
	 * slow_node_factor (>= 1) times slower. */
	double slow_node_frac;
	double slow_node_factor;
	/* Extra delay of each host-CPU message: exponential with this mean
	 * (>= 0 s; 0 means none). */
	double jitter_mean_s;
	/* Per GPU (gpus of them) a fixed slowdown >= 1 for the whole run, 1 /
	 * the fraction of its speed a throttled GPU keeps; NULL: none.
	 * noise_new copies it. */
	const double *gpu_slow;
} noise_params;

/* Returns 0, or SIM_EINVAL with the reason in why (n bytes) when a field
 * is out of range or not finite. */
int noise_params_check(const noise_params *p, char *why, size_t n);

/* A noise model for parameters p (which must pass noise_params_check) and
 * scenario seed `seed`, or NULL when out of memory or p is invalid. The
 * streams are the named streams of sim/rng.h: "noise.gpu.G" per GPU,
 * "noise.slow.N" and "noise.jitter.N" per node; each is a SplitMix64
 * sequence (Steele, Lea and Flood, OOPSLA 2014) seeded with
 * sim_rng_stream_seed(seed, name) and read at the step or message index,
 * so adding GPUs never changes an existing GPU's draws. The caller frees
 * it with noise_free (NULL is a no-op). */
noise_model *noise_new(const noise_params *p, uint64_t seed);
void noise_free(noise_model *n);

/* Compute slowdown (>= 1) of GPU `gpu` (< gpus) in training step `step`:
 * the folded log-normal draw times slow_node_factor on a slow node times
 * the GPU's own gpu_slow. */
double noise_gpu_factor(const noise_model *n, uint32_t gpu, uint64_t step);

/* The largest factor among GPUs first_gpu .. first_gpu + count - 1
 * (count >= 1, all < gpus) in step `step`: what a synchronous collective
 * over that group waits for. */
double noise_group_max(const noise_model *n, uint32_t first_gpu, uint32_t count,
		       uint64_t step);

/* Extra delay in seconds of message number `msg` sent or received by node
 * `node` (< nodes) on `path`: an exponential draw with mean jitter_mean_s
 * for NOISE_PATH_HOST_CPU, exactly 0 for NOISE_PATH_BYPASS. The caller
 * numbers each node's messages. */
double noise_jitter_s(const noise_model *n, uint32_t node, uint64_t msg, noise_path path);

/* Mean and coefficient of variation (sd / mean) of the per-step factor
 * F = exp(sigma |Z|) alone (no slow node), from E[exp(t |Z|)] =
 * 2 exp(t^2 / 2) Phi(t): E[F] = 2 e^{sigma^2/2} Phi(sigma),
 * E[F^2] = 2 e^{2 sigma^2} Phi(2 sigma). For small sigma the CV is
 * sigma * sqrt(1 - 2 / pi), about 0.603 sigma. */
double noise_factor_mean(double sigma);
double noise_factor_cv(double sigma);

/* The gpu_sigma whose factor has coefficient of variation cv, for
 * scenarios that state the spread of GPU compute time as a CV. Returns 0
 * and sets *sigma, or SIM_ERANGE when cv is not in [0, 10]. */
int noise_sigma_for_cv(double cv, double *sigma);

/* The node GPU `gpu` is on; the number of nodes; whether `node` is slow,
 * and how many are (for the report). */
uint32_t noise_node_of(const noise_model *n, uint32_t gpu);
uint32_t noise_nodes(const noise_model *n);
bool noise_node_is_slow(const noise_model *n, uint32_t node);
uint32_t noise_slow_nodes(const noise_model *n);

#endif
