/* One training job on one cluster under one offload variant, simulated
 * iteration by iteration as events: per-stage 1F1B pipelines of every
 * data-parallel replica, their activations and gradients as flows over the
 * fabric, gradient buckets all-reduced across replicas as they become
 * ready, the optimizer step, the data loader feeding stage 0 from storage
 * through host cores, noise on every GPU, and the host CPU as a capacity
 * on the network paths when the transport runs through it. */
#ifndef DPUSIM_MODELS_TRAIN_H
#define DPUSIM_MODELS_TRAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "models/coll.h"
#include "models/diag.h"
#include "models/fabric.h"
#include "models/gpu.h"
#include "models/noise.h"
#include "models/power.h"
#include "models/reliab.h"
#include "models/scenario.h"
#include "models/setup.h"
#include "models/workload.h"

/* Where each GPU's time in an iteration went, on the critical GPU (the
 * last to finish): the six add up to the iteration time. */
enum train_part {
	TRAIN_COMPUTE,        /* GPU kernels: layers, recompute, optimizer */
	TRAIN_EXPOSED_COMM,   /* tensor-parallel collectives, waits on activations in
			         flight, gradient all-reduce after the last backward */
	TRAIN_DATA_STALL,     /* stage 0 waiting for its microbatch from storage */
	TRAIN_CPU_STALL,      /* stage 0 waiting for host cores to decode its microbatch */
	TRAIN_BUBBLE,         /* pipeline fill and drain: waiting for another stage's compute */
	TRAIN_OTHER,          /* waiting for the slowest replica at the gradient barrier */
	TRAIN_NPARTS
};

/* The transfers whose limits a result counts (train_result.bound_s), and
 * the first three also split the exposed communication by what the GPUs
 * waited for (comm_s): the tensor-parallel all-reduces (simulated on their
 * own node, train.c's tp_coll_s; sequence parallel: reduce-scatters and
 * all-gathers) with the context-parallel K/V collectives (cp_coll_s: on
 * one stage's nodes), activations between pipeline
 * stages, the data-parallel collectives of the gradients (and ZeRO's
 * parameter all-gather); then the data loader's reads. */
enum train_flows {
	TRAIN_FLOWS_TP,
	TRAIN_FLOWS_PIPE,
	TRAIN_FLOWS_DP,
	TRAIN_FLOWS_STORAGE,
	TRAIN_NFLOWS
};
enum { TRAIN_NCOMM = TRAIN_FLOWS_STORAGE };

/* One span of the timeline, for traces: on a GPU (rank), the host CPU or
 * DPU of a node, or a named link group. Names are static strings. */
typedef enum train_track { TRAIN_TRACK_GPU, TRAIN_TRACK_HOST, TRAIN_TRACK_LINK } train_track;
typedef enum train_span_cat { TRAIN_SPAN_COMPUTE, TRAIN_SPAN_COMM, TRAIN_SPAN_DATA,
			      TRAIN_SPAN_STALL } train_span_cat;
typedef struct train_span {
	train_track track;
	uint32_t node, gpu;       /* GPU: its node and global rank; HOST: node */
	const char *link;         /* LINK: the group's name */
	double start_s, dur_s;
	train_span_cat cat;
	const char *name;
} train_span;
typedef void train_span_fn(void *ctx, const train_span *s);

/* Everything the simulation needs, resolved to SI values. */
typedef struct train_config {
	wl_model model;
	uint32_t tp, pp, dp;
	uint32_t micro_batch, microbatches; /* per replica and iteration */
	bool flash;                         /* FlashAttention (wl_split) */
	uint32_t cp;                        /* context parallelism (0 or 1: none): the
					       sequence split over cp ranks, K and V
					       all-gathered per layer (train_gpus) */
	bool cp_p2p;                        /* context parallelism as Transformer Engine's
					       ring (cp_overlap_layer); false: K and V
					       all-gathered, not overlapped */
	bool sp;                            /* Megatron's sequence parallelism: each
					       tensor-parallel all-reduce is a reduce-
					       scatter and an all-gather, the [s, b, h]
					       stream split by tp (wl_split) */
	uint32_t vp;                        /* model chunks per pipeline stage: Megatron's
					       interleaved 1F1B (wl_interleaved_op); 0 or
					       1: plain 1F1B */
	bool recompute;
	bool wgrad_fused;                   /* weight gradients accumulated in the GEMMs
					     * (wl_split.wgrad_fused) */
	bool tp_bwd_overlap;                /* Megatron-LM's asynchronous backward tensor-
					     * parallel collectives (tp_async_layer) */
	bool tp_overlap;                    /* Transformer Engine's userbuffers overlap the
					       sequence-parallel collectives with the GEMMs
					       (tp_overlap_layer; needs sp) */
	uint32_t ub_proj_sms, ub_fc2_sms;   /* SMs its pipeline reduce-scatters hold beside
					       the projection's and MLP-down's GEMMs */
	bool ub_fp8_rs;                     /* those reduce-scatters move FP8, one byte an
					       element (TE's fp8_buf) */
	uint32_t zero_stage;
	wl_engine engine;                   /* the pipeline engine whose costs apply: under
					       DeepSpeed's a send blocks its stage until it
					       has arrived, the receiver all-gathers the
					       partitioned boundary tensor on the tensor-
					       parallel group (once forward, twice backward),
					       and ZeRO 1 all-reduces the gradients; under
					       Megatron-LM 2021's and 2022's sends block
					       and the receiver gathers once, but not
					       under sequence parallelism (train.c) */
	bool tied_embedding;                /* the output layer is the token embedding
					       (GPT; train_config_of from the model):
					       with pp > 1 the first and last stage
					       all-reduce its gradient before their
					       optimizer step (train.c tied_start) */
	double grad_bytes_per_param;        /* gradient element as accumulated and
					       reduced (scn_grad_bytes): the all-reduce's
					       and reduce-scatter's bytes */
	double param_bytes_per_param;       /* parameter element as ZeRO all-gathers it
					       (scn_param_bytes); 0: grad_bytes_per_param */
	double bucket_bytes;                /* 0: one bucket per stage */
	uint32_t iterations, warmup;
	gpu_spec gpu;
	fab_config fabric;
	coll_config coll;
	uint32_t tp_channels;               /* NCCL's channels for the tensor-parallel
					       all-reduce on NVLink (the GPU profile's
					       nccl_channels); 0: one per NIC of the node,
					       as the data-parallel rings (coll.h) */
	setup_host host;
	offload_costs net_costs;
	double framework_cores_per_gpu;     /* the training process's own thread */
	/* data loader, per replica (on the node of its stage 0) */
	bool data;
	double sample_bytes, decode_core_s; /* per sample */
	uint32_t workers, prefetch;         /* decode processes; microbatches ahead */
	double page_cache_hit;              /* fraction of reads served from host memory
					       (never with GDS: O_DIRECT) */
	double storage_Bps;                 /* all servers together; 0: no storage reads */
	double storage_write_Bps;           /* all servers together (checkpoints); NAN: unknown */
	uint32_t storage_servers;
	double storage_io_lat_s;
	double storage_iops;                /* all servers together; 0: not a bound. One
					       IO per sample read, so the servers move at
					       most storage_iops x sample_bytes bytes/s */
	double storage_core_s_per_byte;     /* host client work per byte read */
	double storage_engine_Bps;          /* DPU SNAP bound per node, its engines' bandwidth
					       and, one IO per sample, their IO rate x
					       sample_bytes; 0: none */
	bool storage_direct;                /* GDS: no host bounce */
	double local_Bps;                   /* node-local NVMe, all drives of a node; 0: the
					       loader reads from the storage servers */
	double local_iops;                  /* a node's drives together; 0: not a bound
					       (one IO per sample, as storage_iops) */
	uint32_t local_switch;              /* the drives sit on NIC local_switch's PCIe switch */
	double storage_nic_Bps;             /* a node's storage-network NIC; 0: reads share
					       the compute NICs */
	double storage_wire_w;              /* reads sharing the compute NICs: what a byte
					       read takes of a NIC link's payload capacity,
					       sized by the network transport's packets
					       (models/wire.h): its payload share over the
					       storage protocol's; 0: 1 */
	noise_params noise;                 /* its gpu_slow is unused: slow_gpus below */
	/* Throttled GPUs by their index in the cluster (node x gpus_per_node +
	 * GPU), mapped onto the job's GPUs where its nodes are placed. */
	scn_slow_gpu slow_gpus[SCN_MAX_SLOW_GPUS];
	uint32_t nslow_gpus;
	double os_jitter;                   /* fraction of host-core time lost */
	uint64_t seed;
	/* The last iteration's timeline of replica 0 (every stage, its loader,
	 * its gradient all-reduces) goes to span(span_ctx, ...); NULL: none. */
	train_span_fn *span;
	void *span_ctx;
	/* At the end of each iteration (warm-up included; done of total, the
	 * simulated clock at sim_s), for progress on long runs; NULL: none. */
	void (*progress)(void *ctx, uint32_t done, uint32_t total, double sim_s);
	void *progress_ctx;
} train_config;

typedef struct train_coll_stat {
	coll_op op;
	const char *algo, *what;
	uint32_t ranks;
	uint64_t bytes;
	double time_s;                      /* mean over the measured iterations */
	uint64_t count;
	uint32_t channels;                  /* NCCL ring, hier or tree: the channels it ran
					       on (coll_result.channels; gradients and parameters: the
					       last bucket that ran, as algo); else 0 */
} train_coll_stat;

/* Gradient buckets per stage: enough to resolve how much of the all-reduce
 * hides behind the last backward (to 1/8 of it), few enough that the
 * flows of thousands of replicas stay cheap to solve (dpusim plan's
 * estimate splits the gradients as the simulation does). */
enum { TRAIN_MAX_BUCKETS = 8 };

enum { TRAIN_MAX_COLLS = 10 };

typedef struct train_result {
	double *iter_s;                     /* measured iterations, owned */
	uint32_t iters;
	double part_s[TRAIN_NPARTS];        /* means over measured iterations */
	double gpu_busy_frac;               /* mean over GPUs of compute / time */
	double host_cpu_util, dpu_util;     /* NAN when not applicable */
	double run_s;                       /* the job's whole run, warm-up included */
	double net_cpu_cap_Bps;             /* host-CPU bound on a node's traffic; 0: none */
	double comm_s[TRAIN_NCOMM];         /* part_s[TRAIN_EXPOSED_COMM] by what was waited for */
	/* Flow-seconds of each kind of transfer by the class (fab_class) of
	 * the limit that held them, from the flow solver (flow_bound); the
	 * tensor-parallel row is one all-reduce's. */
	double bound_s[TRAIN_NFLOWS][FAB_NCLASSES];
	double conn_core_util;              /* how busy a connection's own cores were while
					       it carried data (host-tcp); NAN: no such cap */
	char critical[1024];                /* which resource held the iteration back */
	train_coll_stat coll[TRAIN_MAX_COLLS];
	uint32_t ncoll;
	uint64_t events;
	uint64_t solves;                    /* the flow solver's re-solves over the run
					     * (flow_solves): with events, what a run's
					     * cost grew with (dpusim bench scale) */
	uint32_t steady_from;               /* > 0: measured iterations from this one
					     * (counted from 1) repeat the one before
					     * exactly and were not simulated */
	uint32_t net_switches;              /* the simulated cluster's network switches
					     * (leaves, spines, cores; not NVSwitches),
					     * shared by all its jobs */
} train_result;

/* The GPUs of job c: tp x cp x pp x dp. */
static inline uint32_t train_gpus(const train_config *c)
{
	return c->tp * (c->cp > 1 ? c->cp : 1) * c->pp * c->dp;
}

/* A job's own rank of GPU k = c T + t (context rank c, tensor rank t) of
 * pipeline stage p of data-parallel replica d, D replicas of W = T x C
 * GPUs a stage: Megatron's order, tensor innermost, then context, data,
 * pipeline outermost, rank = t + T (c + C (d + D p)). Megatron-core's
 * default order "tp-cp-ep-dp-pp" (megatron/core/parallel_state.py,
 * initialize_model_parallel and generate_masked_orthogonal_rank_groups:
 * global_rank = tp_rank + dp_rank tp + pp_rank tp dp) and Megatron-LM
 * 2021's (megatron/mpu/initialize.py: data-parallel groups
 * range(start + j, end, tp) inside each pipeline block of world / pp
 * ranks). So a tensor-parallel group shares a node's NVLink, a
 * data-parallel group lies on neighbouring nodes and a stage's pipeline
 * neighbour is D W ranks away. The one mapping: the simulation
 * (models/train_int.h rank_of) and plan's estimate (tools/cmd_plan.c)
 * use it. */
static inline uint32_t train_rank(uint32_t D, uint32_t W, uint32_t d, uint32_t p, uint32_t k)
{
	return (p * D + d) * W + k;
}

/* Runs cfg (warmup iterations then `iterations` measured ones) alone on its
 * cluster (train_sim_multi of one job on every node). Returns 0, or a SIM_E*
 * code with a message in d. Release res with train_result_release. */
/* The lowest ZeRO stage whose run under pipeline engine e is stage z's.
 * A run reads the stage only as "at least 1" (the gradients
 * reduce-scattered and the updated parameters all-gathered; every shard's
 * optimizer step) and "at least 3" (the parameters gathered again for the
 * backward: dp_chain in train.c), except DeepSpeed's stage 1, which
 * all-reduces the gradients (train_grad_op). So under the other engines
 * stages 1 and 2 simulate alike, and so do the report's figures derived
 * from the job's configuration (time to train, energy, cost); only the
 * memory per GPU differs (wl_gpu_memory: stage 2 shards the gradients).
 * plan shares one simulation between such layouts through this function:
 * the day the run tells stages apart that this calls alike, test_train's
 * zero_stages_that_run_alike fails. */
uint32_t train_zero_alike(wl_engine e, uint32_t z);

/* The host-CPU bound on a node of job c's network traffic, in and out
 * together, from the cores its framework leaves to the stack
 * (train_world.c); 0: none (no stack cost). */
double train_net_cpu_cap_Bps(const train_config *c);

int train_sim(const train_config *cfg, train_result *res, diag *d);
void train_result_release(train_result *res);

/* Runs njobs jobs together on one cluster of `nodes` nodes: one engine, one
 * fabric (cfgs[0]'s, over all the nodes), one transport and collective
 * context, the storage servers and each node's host cores and DPU engines
 * shared, so the jobs' traffic contends. Job j (cfgs[j], whose fabric
 * gives its node count and GPUs per node, the same for every job) runs on
 * the cluster's nodes node_of[j][0 .. cfgs[j]->fabric.nodes - 1]: its local
 * rank r on global rank node_of[j][r / gpn] * gpn + r % gpn. No node may
 * serve two jobs. The simulation runs until every job has done its
 * iterations; res[j] holds job j's own iterations, breakdown, collectives
 * and utilisations (over its nodes and its run); events counts the whole
 * simulation. The jobs must come from one scenario and variant. Returns 0,
 * or a SIM_E* code with a message in d (then no result needs releasing). */
int train_sim_multi(const train_config *const *cfgs, const uint32_t *const *node_of,
		    uint32_t njobs, uint32_t nodes, train_result *res, diag *d);

/* A collective benchmark beside the training jobs of train_sim_shared, as
 * a background tenant: from time 0 it runs its pass (each size `iterations`
 * times in a row, as nccl-tests does) over and over while any training job
 * is still iterating, and stops at the first collective boundary after the
 * last one has finished, but not before its first pass is complete (so
 * every size has a figure). Its local rank r is the cluster's rank
 * node_of[r / gpn] * gpn + r % gpn; its nodes' host cores keep
 * cores_per_gpu per GPU for the benchmark process and give the rest to the
 * network stack. Results are added to (zero them before the first run),
 * so replications accumulate. */
typedef struct train_bench {
	coll_op op;
	coll_algo algo;                     /* COLL_AUTO to choose */
	uint64_t bytes[SCN_MAX_SIZES];
	uint32_t nsizes, iterations;        /* iterations: per size and pass, >= 1 */
	uint32_t ranks, nodes;              /* nodes: ceil(ranks / gpn) entries of node_of */
	const uint32_t *node_of;
	double cores_per_gpu;
	/* results */
	double time_s[SCN_MAX_SIZES];       /* sum of the measured times of each size */
	uint64_t count[SCN_MAX_SIZES];      /* how many were measured */
	coll_algo used[SCN_MAX_SIZES];      /* the algorithm that ran */
	uint64_t after;                     /* started after every training job had ended */
} train_bench;

/* train_sim_multi with nbench benchmarks (their nodes distinct from the
 * jobs' and each other's) sharing the simulation. */
int train_sim_shared(const train_config *const *cfgs, const uint32_t *const *node_of,
		     uint32_t njobs, train_bench *bench, uint32_t nbench, uint32_t nodes,
		     train_result *res, diag *d);

/* The connections (NCCL channels) a pipeline send to another node moves
 * on in a pipeline of pp stages, each under the transport's
 * per-connection cap (coll_p2p_channels):
 * Megatron's engines send with torch.distributed.batch_isend_irecv, which
 * PyTorch's ProcessGroupNCCL runs on the pipeline group's communicator
 * (a batched point-to-point op is created like a collective's, every rank
 * of the group; pp ranks one a node); DeepSpeed's engine with single
 * dist.send and dist.recv calls, on a communicator of the two ranks. */
uint32_t train_pipe_conns(const train_config *c, uint32_t pp);

/* Seconds of one tensor-parallel collective op of `bytes` (nccl-tests'
 * size: the whole activation) over tp GPUs of a node of c's cluster, as
 * the simulation times every layer's (on a one-node fabric of its own,
 * idle; NCCL's cost model where c's collectives take it): what dpusim
 * plan's estimate charges. *out 0 for tp 1. Returns 0, SIM_ENOMEM, or the
 * engine's error where a figure is past the clock. */
int train_tp_coll_s(const train_config *c, uint32_t tp, coll_op op, double bytes, double *out);

/* Seconds of one context-parallel collective op of `bytes` (a layer's K
 * and V, each tensor rank's slice) over cp ranks tp apart, the tp rings of
 * a stage at once on a fabric of c's kind holding just its tp x cp GPUs,
 * under c's transport, as the simulation times every layer's: what dpusim
 * plan's estimate charges. *out 0 for cp 1. Returns as train_tp_coll_s. */
int train_cp_coll_s(const train_config *c, uint32_t tp, uint32_t cp, coll_op op, double bytes,
		    double *out);

/* Builds the configuration of job/variant from the scenario. notes (may be
 * NULL) collects what could not be modelled for lack of a published figure. */
int train_config_of(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		    uint64_t seed, train_config *cfg, diag *d, diag *notes);

/* A job's reliability and energy inputs (models/train_costs.c). What its
 * failure rate counts: its nodes, and where the scenario gives their own
 * MTBFs its GPUs, adapters and `switches`. */
void train_rel_parts(const scn_scenario *s, const train_config *c, double gpus,
		     uint64_t switches, rel_params *rp);
/* One checkpoint of the job, in bytes: failures.checkpoint_size, else
 * mixed-precision Adam's 16 bytes per parameter (weights, gradients and
 * optimizer states, ZeRO's figure 1). */
double train_ckpt_bytes(const scn_scenario *s, const train_config *c);
/* An asynchronous checkpoint's snapshot rate into rp, what binds it into
 * bound; SIM_EINVAL with the reason in why without the GPU's PCIe link. */
int train_snapshot_rate(const scn_scenario *s, const train_config *c, double gpus,
			rel_params *rp, char *bound, size_t bn, char *why, size_t n);
/* The job's power draw by component at these utilisations into pc and
 * util; what has no published figure is named in left, not guessed. */
void train_energy_parts(const scn_scenario *s, const train_config *c, double gpus,
			uint64_t switches, double gpu_util, double cpu_util, pwr_cluster *pc,
			double util[PWR_KINDS], char *left, size_t n);

/* Sets cfg's job up as train_sim would, on a cluster of its own, and
 * checks what needs the built job (its stages' times against the
 * simulator's horizon), without simulating. Returns 0, or a SIM_E* code
 * with a message in d naming what to change. */
int train_check(const train_config *cfg, diag *d);

/* A device's byte rate under its IO rate, the loader reading one IO per
 * sample: at most iops x io_bytes bytes/s (no bound where either is 0;
 * train_world.c says why). The servers, a node's drives and its DPUs' SNAP
 * engines alike. */
double train_io_capped_Bps(double Bps, double iops, double io_bytes);

/* Nodes of every job of s (jobs: in the scenario): job j's i-th node is
 * node_of[off_j + i], off_j the sum of the earlier jobs' node counts
 * (node_of holds them all). Packed jobs (the default) take consecutive
 * nodes, in job order, from node 0; spread jobs then take theirs evenly
 * spaced over the nodes left. Returns 0, or SIM_EINVAL with a message in d
 * when the jobs need more nodes than the cluster has. */
int train_place_jobs(const scn_scenario *s, uint32_t *node_of, diag *d);

#endif
