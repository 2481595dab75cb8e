/* Internals shared by the training simulation's files (train.c: the 1F1B
 * schedule, pipeline transfers, gradient buckets, the jobs; train_loader.c:
 * the data loader and its storage reads; train_world.c: what the jobs share,
 * each node's resources, background collective benchmarks;
 * train_explain.c: results and the critical-path text). */
#ifndef DPUSIM_MODELS_TRAIN_INT_H
#define DPUSIM_MODELS_TRAIN_INT_H

#include "models/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/err.h"
#include "sim/flow.h"
#include "sim/station.h"

#define MAX_BUCKETS TRAIN_MAX_BUCKETS

typedef struct trainer trainer;

typedef struct stage {
	trainer *tr;
	uint32_t d, p, first_rank, layers;
	uint32_t op;               /* next op of the 2MV-long (interleaved) 1F1B sequence */
	uint32_t grad_chunks;      /* chunks whose last backward has started (buckets) */
	bool busy, waiting, syncing, done;
	bool sending;              /* blocked on its own send (DeepSpeed's engine) */
	/* DeepSpeed's TrainSchedule, each send and receive a rendezvous
	 * (train.c pipe_send, post_recv): the receive this stage has posted
	 * and whether its transfer is flowing; a blocked sender's transfer
	 * waiting for this stage's receive, [fwd]; a backward's gradient
	 * send held until the next forward's input is in */
	bool posted, post_fwd, inflight, deferred;
	uint32_t post_m, def_m;
	bool offer[2];
	uint32_t offer_m[2];
	sim_time wait_since, sync_since, done_at, send_since;
	sim_time opt_end;          /* its optimizer step ended (ZeRO: before the gather) */
	uint8_t *fwd_in, *bwd_in;  /* input of microbatch m of chunk c ([c M + m]) has arrived */
	sim_time *fwd_sent, *bwd_sent; /* when the transfer providing it started */
	double part[TRAIN_NPARTS];
	double comm[TRAIN_NCOMM];  /* part[TRAIN_EXPOSED_COMM] by what was waited for */
	double compute_s;
	double op_comm_s;          /* exposed comm inside the running op */
	double op_compute_s;
} stage;

/* Gradient synchronisation of one pipeline stage across the replicas:
 * each bucket runs its chain of collectives (dp_chain: an all-reduce, or
 * under ZeRO a reduce-scatter, after ZeRO-3's backward all-gather of the
 * parameters), then, under ZeRO, the parameters are all-gathered bucket by
 * bucket once every replica's optimizer step is over. */
typedef struct dpgroup {
	trainer *tr;
	uint32_t p, nbuckets, next, running, done_tp;
	uint32_t phase;            /* the running bucket's place in its chain */
	uint32_t opt_done;         /* replicas whose optimizer step is over (ZeRO) */
	uint32_t gather_next;      /* the bucket the parameter all-gather is at */
	uint32_t ready[MAX_BUCKETS];
	sim_time all_ready_at[MAX_BUCKETS];
	sim_time synced_at;        /* its gradients reduced across the replicas */
	double bucket_bytes;       /* a bucket's gradients, reduced */
	double gather_bytes;       /* the same bucket's parameters, all-gathered (ZeRO) */
	uint32_t *ranks;           /* tp x dp: the group of each tensor rank */
	coll_result *res;          /* tp results of the running bucket */
	sim_time started;
} dpgroup;

/* Bytes one collective op moves for a bucket of g: its parameters for an
 * all-gather (ZeRO gathers weights), else its gradients. */
static inline double dp_op_bytes(const dpgroup *g, coll_op op)
{
	return op == COLL_ALLGATHER ? g->gather_bytes : g->bucket_bytes;
}

/* The collective that reduces the gradients across replicas: the
 * all-reduce, or under ZeRO the reduce-scatter; but DeepSpeed's ZeRO 1
 * of 2021 all-reduces them too (deepspeed/runtime/zero/stage2.py v0.5
 * with stage 1: contiguous_gradients off, so reduce_ipg_grads takes
 * buffered_reduce_fallback, whose allreduce_bucket calls dist.all_reduce),
 * keeping only its partition for the step before the all-gather. */
static inline coll_op train_grad_op(const train_config *c)
{
	bool ds1 = c->engine == WL_ENGINE_DEEPSPEED && c->zero_stage == 1;
	return c->zero_stage >= 1 && !ds1 ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE;
}

/* A replica's data loader on the node of its stage 0. */
typedef struct loader {
	trainer *tr;
	uint32_t d, node;
	uint64_t issued, consumed;
	sim_time *read_done;       /* per ring slot: when storage delivered it */
	uint8_t *ready;            /* per ring slot */
	uint32_t ring;
} loader;

/* A node's decodes on its shared host cores (train_loader.c): how many
 * run (at most the job's loader workers) and those waiting for a worker,
 * in arrival order (a ring of cap items from head). */
struct dec_item {
	loader *l;
	uint64_t k;
};
struct dec_wait {
	struct dec_item *item;
	uint32_t head, len, cap, busy;
};

/* One point-to-point transfer between stages. */
typedef struct xfer {
	trainer *tr;
	uint32_t d, p_from, p_to, m, chunk;   /* chunk: the receiver's model chunk */
	bool fwd;
	sim_time sent, lat;
	struct xfer *prev, *next; /* in the world's list of transfers in flight */
} xfer;

/* What the jobs of one simulation share: the engine, the cluster's fabric
 * and collectives, the storage servers, and each node's host cores (decode
 * workers, network and storage stacks) and DPU engines. Every node belongs
 * to at most one job, whose configuration sizes its host resources. */
typedef struct world {
	diag *d;
	sim_engine *eng;
	flow_net *net;
	fab *f;
	coll_ctx *coll;
	uint32_t nodes, gpn;
	const train_config **node_cfg; /* per node: its job's (job 0's when idle) */
	station **decoders;        /* per node: its loader workers, where nothing else
				    * takes its host cores (cores_res UINT32_MAX) */
	uint32_t *cores_res;       /* per node: the host cores the stacks run on, which
				    * its decodes share as flows (or UINT32_MAX) */
	double *core_units;        /* per node: cores_res's capacity per core */
	struct dec_wait *dec_wait; /* per node: decodes in flight and waiting there */
	uint32_t *stor_res;        /* per node: host cores, SNAP engine (or UINT32_MAX) */
	double *stor_w;            /* per node: what a byte read takes of stor_res (world_node) */
	uint32_t *stor_in;         /* per node: ingress for storage */
	uint32_t *stor_bounce;     /* per node: the fabric's host memory, crossed by reads
				    * through a bounce buffer (or UINT32_MAX) */
	uint32_t *local_drv;       /* per node: its NVMe drives together (or UINT32_MAX) */
	uint32_t stor_servers0, stor_servers;
	uint64_t stor_rr, flow_key;
	double *node_core_s;       /* host core-seconds of stack work, per node */
	double *node_bytes;        /* bytes out and in through the DPU's network engines, per node */
	double *node_snap_bytes;   /* bytes read through the DPU's SNAP engine, per node */
	uint32_t jobs_left;        /* training jobs still iterating */
	struct bench_run *bench;   /* nbench background benchmarks */
	uint32_t nbench;
	int err;
	xfer *xfers;               /* in flight: freed by train_world_teardown if the run stopped */
} world;

/* A collective benchmark's state in the world: where it is in its pass,
 * its ranks in the cluster, and the configuration that sizes its nodes. */
typedef struct bench_run {
	world *w;
	train_bench *b;
	train_config node_cfg;
	uint32_t *ranks;
	uint32_t size, it, passes;
	coll_result res;
} bench_run;

/* Steady-state detection (train_steady.c): the totals at the last
 * iteration's end and what that iteration added to them (v, 2 x their
 * count), its length, critical stage's parts and GPU busy sum. */
typedef struct train_steady {
	bool allowed;
	uint32_t seen;
	double *v, *scratch;
	sim_time it_ps;
	double busy, part[TRAIN_NPARTS];
} train_steady;

/* One job: its replicas' stages, gradient groups and loaders, on the nodes
 * node_of[0 .. nodes-1] of the world. */
struct trainer {
	const train_config *cfg;
	world *w;
	const uint32_t *node_of;   /* the job's node i is the world's node node_of[i] */
	uint32_t job;              /* its place among the world's jobs (flow tags) */
	noise_model *noise;
	uint32_t P, D, T, M, gpn, nodes;
	uint32_t V;                /* model chunks per stage (interleaved 1F1B); 1: plain */
	uint32_t C, W, R;          /* context parallelism; a stage's GPUs T x C; the ranks
				    * holding the same weights, whose gradients are
				    * reduced together, D x C */
	uint32_t *path;            /* FAB_PATH_MAX x W: a pipeline send's routes */
	/* Pipeline routes of a fixed key (pipe_key: not adaptive), computed
	 * once per (d, p_from, direction): D x P x 2 of them, each its W
	 * routes in FAB_PATH_MAX x W of route_res; NULL: not kept. */
	struct pipe_route {
		uint32_t len;      /* 0: not yet routed */
		bool net;
		sim_time lat;
	} *routes;
	uint32_t *route_res;
	flow_path **route_fp;      /* per route kept, its union prepared for the
				    * flow solver (NULL until its first send) */
	stage *st;                 /* D x P */
	dpgroup *dg;               /* P */
	loader *ld;                /* D */
	double tp_fwd_s, tp_ar_s;  /* per layer per op: all-reduces on NVLink (sequence
				    * parallel: tp_ar_s a reduce-scatter's, tp_ag_s an
				    * all-gather's) */
	double tp_ag_s;
	double tp_ag8_s;           /* Transformer Engine under FP8 with sequence
				    * parallelism: the same all-gather of FP8 data (one
				    * byte an element; tp_te, tp_overlapped) */
	coll_algo tp_ag8_algo;
	uint32_t tp_ag8_channels;
	double tp_bwd_s;           /* per layer: a backward's tensor-parallel collectives,
				    * exposed (tp_fwd_s's without the overlap) */
	bool tp_bwd_own;           /* tp_bwd_s is the backward's own (an overlap set
				    * it: tp_overlapped, tp_te, tp_async), not tp_fwd_s */
	double tp_rs_chunk_s;      /* userbuffers' pipeline: one chunk's reduce-scatter */
	coll_algo tp_rs_chunk_algo;
	uint32_t tp_rs_chunk_channels;
	double pipe_conn_cap_Bps;  /* a pipeline send's cap off its node: the transport's
				    * per-connection cap times the connections NCCL
				    * moves it on (train_pipe_conns); 0: none */
	double pipe_ag_s;          /* DeepSpeed's engine and Megatron-LM of 2021-22: one
				    * all-gather of the partitioned stage-boundary
				    * tensor on the tensor-parallel group */
	coll_algo pipe_ag_algo;
	uint32_t pipe_ag_channels;
	double cp_ag_s, cp_rs_s;   /* per layer: K and V all-gathered across the context-
				    * parallel group (forward), their gradients
				    * reduce-scattered (backward) */
	double cp_kv_bytes;        /* one such collective's size, per tensor slice */
	double cp_fwd_s, cp_bwd_s; /* per layer, exposed: cp_ag_s and cp_rs_s, or under
				    * Transformer Engine's ring (cp_p2p) what its
				    * exchanges take beyond the attention steps */
	coll_algo cp_ag_algo, cp_rs_algo;
	coll_algo tp_ag_algo;      /* what tp_ag_s ran, on tp_ag_channels */
	uint32_t tp_ag_channels;
	uint32_t tp_channels;      /* the channels NCCL ran tp_ar_s on (0: not NCCL's) */
	coll_algo tp_algo;         /* the algorithm tp_ar_s ran (NCCL's choice) */
	double layer_f_s, layer_b_s, logit_f_s, logit_b_s, embed_f_s, embed_b_s;
	double *params_stage;      /* per GPU, per stage */
	uint32_t iter, stages_done;
	sim_time iter_start, end;
	uint64_t step;
	/* results */
	train_result *res;
	/* the tied embedding's gradient all-reduce (tied_start): D x W
	 * two-rank groups, stage 0's and stage P - 1's GPU of each */
	double tied_bytes;         /* one group's: V h / T gradients; 0: none */
	uint32_t *tied_ranks;      /* 2 x D x W */
	coll_result *tied_res;     /* D x W */
	uint32_t tied_synced, tied_done;
	sim_time tied_started;
	double tied_time_s;
	uint64_t tied_count;
	coll_algo tied_algo;
	double pp_time_s, dp_time_s, ag_time_s;
	uint64_t pp_count, dp_count, ag_count;  /* dp: gradient all-reduce or reduce-scatter;
						 * ag: parameter all-gather (ZeRO) */
	coll_algo dp_algo, ag_algo;             /* what NCCL's choice ran, last time */
	uint32_t dp_channels, ag_channels;
	train_steady sd;
};

/* The world's rank of the job's rank (d, p, k), k = c T + t the GPU of
 * stage (d, p) in context-parallel rank c, tensor rank t (train_rank:
 * Megatron's order): its node mapped, its GPU within the node kept. */
static inline uint32_t rank_of(const trainer *tr, uint32_t d, uint32_t p, uint32_t k)
{
	uint32_t local = train_rank(tr->D, tr->W, d, p, k);
	return tr->node_of[local / tr->gpn] * tr->gpn + local % tr->gpn;
}

/* The job's own rank of a stage's first GPU, for its noise draws. */
static inline uint32_t local_rank(const trainer *tr, const stage *s)
{
	return train_rank(tr->D, tr->W, s->d, s->p, 0);
}

/* What the user can change when a time of the job runs past the
 * simulator's horizon, by what took that long. */
#define TRAIN_GPU_HINT                                                              \
	"check cluster.gpu's peak FLOP/s at the workload's precision (peak_*_flops), " \
	"'hbm_bw' (or 'hbm_bw_achieved') and 'eff_max', and the model's size"
#define TRAIN_NET_HINT                                                              \
	"check the rates it crosses (cluster.fabric.link_rate, the NIC's port_rate, "  \
	"the host costs of the variant's network) and the model's size"
#define TRAIN_LOADER_HINT                                                            \
	"check workload.data's 'decode', 'workers' and 'sample_bytes', and the storage's " \
	"rates (its profile's 'bw' and 'iops', cluster.storage.link_rate) and what the reads " \
	"cross (the CPU's 'mem_bw' for a bounce buffer, the PCIe generations)"

/* A failed conversion or scheduling of a time (rc: sim_time_from_s's, the
 * engine's or a station's): past the horizon (or not a number) stops the
 * run with a message saying what (`what`, taking s seconds) and what to
 * check (hint); SIM_ENOMEM as fail does. */
void train_fail_time(trainer *tr, int rc, const char *what, const char *hint, double s);

/* s seconds of `what` as simulated time: true, or false when it cannot be
 * one (the run is stopped: train_fail_time). */
static inline bool train_ps(trainer *tr, double s, const char *what, const char *hint,
			    sim_time *out)
{
	int rc = sim_time_from_s(s, out);
	if (rc)
		train_fail_time(tr, rc, what, hint, s);
	return !rc;
}

/* The flow tag of the job's transfers of kind k (enum train_flows):
 * 0 is left to what no job owns (benchmarks). */
static inline uint32_t train_tag(const trainer *tr, int k)
{
	return 1 + tr->job * TRAIN_NFLOWS + (uint32_t)k;
}

/* Spans are kept for replica 0 in the last iteration only. */
static inline bool tracing(const trainer *tr, uint32_t d)
{
	return tr->cfg->span && d == 0 &&
	       tr->iter + 1 == tr->cfg->warmup + tr->cfg->iterations;
}

/* The first error stops the run; later ones are consequences. */
static inline void fail(trainer *tr, int rc, const char *what)
{
	if (!tr->w->err) {
		tr->w->err = rc;
		diag_add(tr->w->d, NULL, 0, 0, "training simulation: %s: %s", what, sim_strerror(rc));
	}
	sim_stop(tr->w->eng);
}

/* train.c */
void train_try_run(trainer *tr, stage *s);

/* train_loader.c */
int train_alloc_loaders(trainer *tr);
void train_loader_fill(trainer *tr, loader *l);
void train_loader_consume(trainer *tr, loader *l);
uint32_t train_read_path(const trainer *tr, const loader *l, uint64_t k, uint32_t server,
			 uint32_t *path, double *wt);

/* train_world.c: train_net_cpu_cap_Bps is in train.h */
int train_world_build(world *w, uint32_t nodes, const train_config *const *cfgs, uint32_t njobs);
void train_world_teardown(world *w);
int train_bench_prepare(world *w, const train_config *c0, train_bench *b, bench_run *br);
void train_bench_start(bench_run *br);

/* train_steady.c: whether job tr (of njobs in its world) has identical
 * iterations by construction; init (0 or SIM_ENOMEM) and release its
 * state; at the end of each iteration, fill: when it repeats the one
 * before exactly, the iterations left are added to the results as copies
 * of it, tr->iter and tr->end set as if they had run; true then. */
bool train_steady_allowed(const trainer *tr, uint32_t njobs);
int train_steady_init(trainer *tr, bool allowed);
void train_steady_release(trainer *tr);
bool train_steady_fill(trainer *tr, sim_time it_ps, const stage *crit, double it_s, double busy);
/* One measured iteration of it_s seconds into the job's results: the
 * critical stage's parts and collective times, the GPUs' busy share
 * (busy: summed over the stages). Simulated and steady-state iterations
 * alike. */
void train_record_iteration(trainer *tr, const stage *crit, double it_s, double busy);

/* train_explain.c */
void train_finish(trainer *tr, train_result *r);

#endif
