/* The training simulation: 1F1B pipelines of every data-parallel replica on
 * the engine, communication as flows, a data loader per replica.
 *
 * Ranks follow Megatron-LM's order, tensor-parallel innermost, then
 * pipeline, then data: rank(d, p, t) = (d * pp + p) * tp + t, so a
 * tensor-parallel group shares a node's NVLink domain. A tensor-parallel
 * group moves in lock step (its all-reduces synchronise it), so it is one
 * "stage" here whose compute time is that of its slowest GPU. Its
 * all-reduces run on the node's NVSwitch, which no other group shares: their
 * time is simulated once, on a one-node fabric, and reused (symmetry used
 * only where no resource is shared). Everything that leaves a node (pipeline
 * activations and gradients, gradient all-reduce across replicas, storage
 * reads) runs as flows on the one cluster fabric, where it contends.
 *
 * Several jobs can share one simulation (train_sim_multi): the world (engine,
 * fabric over the whole cluster, collectives, storage servers, each node's
 * host cores and DPU engines) is built once, each job keeps its own stages,
 * gradient groups, loaders, noise and results, and its ranks are mapped
 * onto its nodes, so tenants contend for links, uplinks and storage. */
#include "models/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim/engine.h"
#include "sim/err.h"
#include "sim/flow.h"
#include "sim/station.h"

/* Gradient buckets per stage: enough to resolve how much of the all-reduce
 * hides behind the last backward (to 1/8 of it), few enough that the
 * flows of thousands of replicas stay cheap to solve. */
#define MAX_BUCKETS 8

typedef struct trainer trainer;

typedef struct stage {
	trainer *tr;
	uint32_t d, p, first_rank, layers;
	uint32_t op;               /* next op of the 2M-long 1F1B sequence */
	bool busy, waiting, syncing, done;
	sim_time wait_since, sync_since, done_at;
	uint8_t *fwd_in, *bwd_in;  /* input of microbatch m has arrived */
	sim_time *fwd_sent, *bwd_sent; /* when the transfer providing it started */
	double part[TRAIN_NPARTS];
	double compute_s;
	double op_comm_s;          /* exposed comm inside the running op */
	double op_compute_s;
} stage;

/* Gradient all-reduce of one pipeline stage across the replicas. */
typedef struct dpgroup {
	trainer *tr;
	uint32_t p, nbuckets, next, running, done_tp;
	uint32_t ready[MAX_BUCKETS];
	sim_time all_ready_at[MAX_BUCKETS];
	double bucket_bytes;
	uint32_t *ranks;           /* tp x dp: the group of each tensor rank */
	coll_result *res;          /* tp results of the running bucket */
	sim_time started;
} dpgroup;

/* A replica's data loader on the node of its stage 0. */
typedef struct loader {
	trainer *tr;
	uint32_t d, node;
	uint64_t issued, consumed;
	sim_time *read_done;       /* per ring slot: when storage delivered it */
	uint8_t *ready;            /* per ring slot */
	uint32_t ring;
} loader;

/* One point-to-point transfer between stages. */
typedef struct xfer {
	trainer *tr;
	uint32_t d, p_to, m;
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
	station **decoders;        /* per node */
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
	xfer *xfers;               /* in flight: freed by world_teardown if the run stopped */
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

/* One job: its replicas' stages, gradient groups and loaders, on the nodes
 * node_of[0 .. nodes-1] of the world. */
struct trainer {
	const train_config *cfg;
	world *w;
	const uint32_t *node_of;   /* the job's node i is the world's node node_of[i] */
	noise_model *noise;
	uint32_t P, D, T, M, gpn, nodes;
	stage *st;                 /* D x P */
	dpgroup *dg;               /* P */
	loader *ld;                /* D */
	double tp_fwd_s, tp_ar_s;  /* per layer per op: all-reduces on NVLink */
	uint32_t tp_channels;      /* the channels NCCL ran tp_ar_s on (0: not NCCL's) */
	double layer_f_s, layer_b_s, logit_f_s, logit_b_s;
	double *params_stage;      /* per GPU, per stage */
	uint32_t iter, stages_done;
	sim_time iter_start, end;
	uint64_t step;
	/* results */
	train_result *res;
	double pp_time_s, dp_time_s;
	uint64_t pp_count, dp_count;
};

/* The world's rank of the job's rank (d, p, t): its node mapped, its GPU
 * within the node kept. */
static uint32_t rank_of(const trainer *tr, uint32_t d, uint32_t p, uint32_t t)
{
	uint32_t local = (d * tr->P + p) * tr->T + t;
	return tr->node_of[local / tr->gpn] * tr->gpn + local % tr->gpn;
}

/* The job's own rank of a stage's first GPU, for its noise draws. */
static uint32_t local_rank(const trainer *tr, const stage *s)
{
	return (s->d * tr->P + s->p) * tr->T;
}

static sim_time ps(double s)
{
	return (sim_time)llround(s * 1e12);
}

/* Spans are kept for replica 0 in the last iteration only. */
static bool tracing(const trainer *tr, uint32_t d)
{
	return tr->cfg->span && d == 0 &&
	       tr->iter + 1 == tr->cfg->warmup + tr->cfg->iterations;
}

static void span_gpus(trainer *tr, const struct stage *s, sim_time from, sim_time to,
		      train_span_cat cat, const char *name);

static void fail(trainer *tr, int rc, const char *what)
{
	if (!tr->w->err) {
		tr->w->err = rc;
		diag_add(tr->w->d, NULL, 0, 0, "training simulation: %s: %s", what, sim_strerror(rc));
	}
	sim_stop(tr->w->eng);
}

/* ---- the 1F1B schedule ---- */

/* Op i of stage p: warm-up forwards, then one forward and one backward
 * alternately, then the remaining backwards (Narayanan et al., SC21, 2.2.1). */
static void op_at(uint32_t P, uint32_t M, uint32_t p, uint32_t i, bool *fwd, uint32_t *m)
{
	uint32_t warm = P - p - 1 < M ? P - p - 1 : M;
	if (i < warm) {
		*fwd = true, *m = i;
	} else if (i < warm + 2 * (M - warm)) {
		uint32_t j = (i - warm) / 2;
		*fwd = (i - warm) % 2 == 0;
		*m = *fwd ? warm + j : j;
	} else {
		*fwd = false, *m = M - warm + (i - warm - 2 * (M - warm));
	}
}

static void try_run(trainer *tr, stage *s);
static void stage_synced(trainer *tr, uint32_t p);

/* Every GPU of a stage (its tensor-parallel group) gets the span. */
static void span_gpus(trainer *tr, const stage *s, sim_time from, sim_time to,
		      train_span_cat cat, const char *name)
{
	if (to <= from || !tracing(tr, s->d))
		return;
	for (uint32_t t = 0; t < tr->T; t++) {
		uint32_t rank = s->first_rank + t;
		train_span sp = { .track = TRAIN_TRACK_GPU, .node = rank / tr->gpn,
				  .gpu = rank, .start_s = sim_time_to_s(from - tr->iter_start),
				  .dur_s = sim_time_to_s(to - from), .cat = cat, .name = name };
		tr->cfg->span(tr->cfg->span_ctx, &sp);
	}
}

static const char *const wait_names[TRAIN_NPARTS] = {
	[TRAIN_EXPOSED_COMM] = "waiting for transfers", [TRAIN_DATA_STALL] = "data stall",
	[TRAIN_CPU_STALL] = "decode stall", [TRAIN_BUBBLE] = "pipeline bubble",
	[TRAIN_OTHER] = "waiting for slowest replica",
};

static void add_wait(stage *s, enum train_part part, sim_time from, sim_time to)
{
	if (to <= from)
		return;
	s->part[part] += sim_time_to_s(to - from);
	span_gpus(s->tr, s, from, to,
		  part == TRAIN_EXPOSED_COMM ? TRAIN_SPAN_COMM : TRAIN_SPAN_STALL,
		  wait_names[part]);
}

/* Attributes [wait_since, now] of a stage that was waiting on an input
 * whose transfer (or batch) started at `sent`. */
static void end_wait(trainer *tr, stage *s, bool fwd, uint32_t m)
{
	sim_time now = sim_now(tr->w->eng);
	if (!s->waiting)
		return;
	s->waiting = false;
	if (fwd && s->p == 0) {
		loader *l = &tr->ld[s->d];
		sim_time rd = l->read_done[(tr->iter * (uint64_t)tr->M + m) % l->ring];
		sim_time cut = rd > s->wait_since ? (rd < now ? rd : now) : s->wait_since;
		add_wait(s, TRAIN_DATA_STALL, s->wait_since, cut);
		add_wait(s, TRAIN_CPU_STALL, cut, now);
		return;
	}
	sim_time sent = fwd ? s->fwd_sent[m] : s->bwd_sent[m];
	sim_time cut = sent > s->wait_since ? (sent < now ? sent : now) : s->wait_since;
	add_wait(s, TRAIN_BUBBLE, s->wait_since, cut);
	add_wait(s, TRAIN_EXPOSED_COMM, cut, now);
}

static bool input_ready(trainer *tr, stage *s, bool fwd, uint32_t m)
{
	if (fwd && s->p == 0) {
		loader *l = &tr->ld[s->d];
		return !tr->cfg->data || l->ready[(tr->iter * (uint64_t)tr->M + m) % l->ring];
	}
	if (fwd)
		return s->fwd_in[m];
	return s->p == tr->P - 1 || s->bwd_in[m];
}

static void op_done(sim_engine *eng, void *obj, uint64_t data);
static void loader_consume(trainer *tr, loader *l);
static void bucket_ready(sim_engine *eng, void *obj, uint64_t data);

static double op_times(trainer *tr, stage *s, bool fwd, double *comm_s)
{
	double c, comm;
	bool last = s->p == tr->P - 1;
	if (fwd) {
		c = s->layers * tr->layer_f_s + (last ? tr->logit_f_s : 0);
		comm = s->layers * tr->tp_fwd_s;
	} else {
		c = s->layers * (tr->layer_b_s + (tr->cfg->recompute ? tr->layer_f_s : 0)) +
		    (last ? tr->logit_b_s : 0);
		comm = s->layers * tr->tp_fwd_s * (tr->cfg->recompute ? 2 : 1);
	}
	c *= noise_group_max(tr->noise, local_rank(tr, s), tr->T, tr->step++);
	*comm_s = comm;
	return c;
}

static void try_run(trainer *tr, stage *s)
{
	bool fwd;
	uint32_t m;
	double comm, compute;
	if (s->busy || s->syncing || s->done || tr->w->err)
		return;
	if (s->op == 2 * tr->M) {
		s->syncing = true;
		s->sync_since = sim_now(tr->w->eng);
		if (tr->D == 1)
			stage_synced(tr, s->p);
		return;
	}
	op_at(tr->P, tr->M, s->p, s->op, &fwd, &m);
	if (!input_ready(tr, s, fwd, m)) {
		if (!s->waiting) {
			s->waiting = true;
			s->wait_since = sim_now(tr->w->eng);
		}
		return;
	}
	end_wait(tr, s, fwd, m);
	if (fwd && s->p == 0 && tr->cfg->data)
		loader_consume(tr, &tr->ld[s->d]);
	compute = op_times(tr, s, fwd, &comm);
	s->busy = true;
	s->op_compute_s = compute;
	s->op_comm_s = comm;
	sim_time dur = ps(compute + comm), now = sim_now(tr->w->eng);
	span_gpus(tr, s, now, now + ps(compute), TRAIN_SPAN_COMPUTE,
		  fwd ? "forward" : tr->cfg->recompute ? "recompute + backward" : "backward");
	span_gpus(tr, s, now + ps(compute), now + dur, TRAIN_SPAN_COMM, "tensor-parallel all-reduce");
	if (!fwd && m == tr->M - 1 && tr->D > 1) {
		/* Gradients of the last microbatch's backward become ready bucket
		 * by bucket as it proceeds (from the last layer back). */
		dpgroup *g = &tr->dg[s->p];
		for (uint32_t k = 0; k < g->nbuckets; k++)
			if (sim_schedule_in(tr->w->eng, dur * (k + 1) / g->nbuckets, bucket_ready, g, k,
					    NULL))
				return fail(tr, SIM_ENOMEM, "scheduling");
	}
	if (sim_schedule_in(tr->w->eng, dur, op_done, s, (uint64_t)fwd << 32 | m, NULL))
		fail(tr, SIM_ENOMEM, "scheduling");
}

/* ---- point-to-point transfers between stages ---- */

static void xfer_arrived(sim_engine *eng, void *obj, uint64_t data)
{
	xfer *x = obj;
	trainer *tr = x->tr;
	stage *s = &tr->st[x->d * tr->P + x->p_to];
	(void)eng, (void)data;
	if (x->fwd) {
		s->fwd_in[x->m] = 1;
		s->fwd_sent[x->m] = x->sent;
	} else {
		s->bwd_in[x->m] = 1;
		s->bwd_sent[x->m] = x->sent;
	}
	tr->pp_time_s += sim_time_to_s(sim_now(tr->w->eng) - x->sent);
	tr->pp_count++;
	if (x->prev)
		x->prev->next = x->next;
	else
		tr->w->xfers = x->next;
	if (x->next)
		x->next->prev = x->prev;
	free(x);
	try_run(tr, s);
}

static void xfer_flowed(sim_engine *eng, void *obj, uint64_t data)
{
	xfer *x = obj;
	(void)data;
	if (sim_schedule_in(eng, x->lat, xfer_arrived, x, 0, NULL))
		fail(x->tr, SIM_ENOMEM, "scheduling");
}

/* Host-stack work and DPU-engine bytes of `bytes` sent from node `from` to
 * node `to`: the sender pays the send cost, the receiver the receive cost,
 * and each node's engines see the bytes that leave and enter it (inline
 * crypto encrypts out and decrypts in; the switch offload forwards both
 * ways). Inside one node (NVLink) neither is involved. */
static void count_net(trainer *tr, uint32_t from, uint32_t to, double bytes)
{
	const setup_host_costs *nc = &tr->cfg->net_costs;
	if (from == to)
		return;
	tr->w->node_bytes[from] += bytes;
	tr->w->node_bytes[to] += bytes;
	tr->w->node_core_s[from] += bytes * nc->total_tx_core_s_per_byte;
	tr->w->node_core_s[to] += bytes * nc->total_core_s_per_byte;
}

/* Union of the tensor ranks' routes from stage p_from to p_to of replica d:
 * the T slices move in lock step, one flow for all. */
static int send_between(trainer *tr, uint32_t d, uint32_t p_from, uint32_t p_to, uint32_t m,
			bool fwd)
{
	const wl_transformer *t = &tr->cfg->model.tf;
	uint32_t path[FAB_PATH_MAX * 8], len = 0;
	sim_time lat = 0;
	fab_end end = coll_transport_end(tr->cfg->coll.transport.kind);
	xfer *x = malloc(sizeof *x);
	if (!x)
		return SIM_ENOMEM;
	for (uint32_t k = 0; k < tr->T; k++) {
		fab_path fp;
		int rc = fab_route(tr->w->f, rank_of(tr, d, p_from, k), rank_of(tr, d, p_to, k),
				   tr->w->flow_key++, end, end, &fp);
		if (rc || len + fp.len > sizeof path / sizeof path[0]) {
			free(x);
			return rc ? rc : SIM_ERANGE;
		}
		memcpy(path + len, fp.res, fp.len * sizeof path[0]);
		len += fp.len;
		if (fp.lat_ps > lat)
			lat = fp.lat_ps;
	}
	*x = (xfer){ .tr = tr, .d = d, .p_to = p_to, .m = m, .fwd = fwd,
		     .sent = sim_now(tr->w->eng), .lat = lat + tr->cfg->coll.transport.msg_lat_ps };
	uint64_t bytes = (uint64_t)(wl_stage_boundary_bytes(t, tr->cfg->micro_batch) / tr->T);
	flow_spec fs = { .bytes = bytes ? bytes : 1, .path = path, .path_len = len,
			 .cap_Bps = tr->cfg->coll.transport.conn_cap_Bps, .done = xfer_flowed,
			 .obj = x };
	count_net(tr, rank_of(tr, d, p_from, 0) / tr->gpn, rank_of(tr, d, p_to, 0) / tr->gpn,
		  (double)bytes * tr->T);
	int rc = flow_start(tr->w->net, &fs, NULL);
	if (rc) {
		free(x);
		return rc;
	}
	if ((x->next = tr->w->xfers))
		x->next->prev = x;
	tr->w->xfers = x;
	return SIM_OK;
}

static void op_done(sim_engine *eng, void *obj, uint64_t data)
{
	stage *s = obj;
	trainer *tr = s->tr;
	bool fwd = data >> 32;
	uint32_t m = (uint32_t)data;
	int rc = 0;
	(void)eng;
	s->busy = false;
	s->part[TRAIN_COMPUTE] += s->op_compute_s;
	s->part[TRAIN_EXPOSED_COMM] += s->op_comm_s;
	s->compute_s += s->op_compute_s;
	if (fwd && s->p + 1 < tr->P)
		rc = send_between(tr, s->d, s->p, s->p + 1, m, true);
	else if (!fwd && s->p > 0)
		rc = send_between(tr, s->d, s->p, s->p - 1, m, false);
	if (rc)
		return fail(tr, rc, "pipeline transfer");
	s->op++;
	try_run(tr, s);
}

/* ---- gradient all-reduce across replicas ---- */

static void bucket_done(sim_engine *eng, void *obj, uint64_t data);

/* Host-stack work and DPU-engine bytes of replica d's ranks in one bucket
 * of g. A ring (or tree) all-reduce moves 2 (D - 1) / D of the bucket over
 * every hop of its ring (with ZeRO, its reduce-scatter and the parameters'
 * all-gather, (D - 1) / D each, move as much). Only hops that leave a node
 * cost the host stack and go through the DPU's engines: the ring visits a
 * node's ranks in a row (as NCCL lays rings out, coll.c's ring_rank), so a
 * node holding several replicas sends and receives once per ring, and a
 * ring inside one node, over NVLink, not at all (as coll.c charges its
 * collectives: network hops only). Charged to the node of d's first
 * tensor rank, as before. */
static void count_dp_hops(trainer *tr, const dpgroup *g, uint32_t d)
{
	const setup_host_costs *nc = &tr->cfg->net_costs;
	uint32_t node = rank_of(tr, d, g->p, 0) / tr->gpn, out = 0, in = 0, D = tr->D;
	double hop = g->bucket_bytes * 2.0 * (D - 1) / D;
	for (uint32_t t = 0; t < tr->T; t++) {
		const uint32_t *rk = g->ranks + (size_t)t * D;
		uint32_t here = rk[d] / tr->gpn;
		out += here != rk[(d + 1) % D] / tr->gpn;
		in += here != rk[(d + D - 1) % D] / tr->gpn;
	}
	tr->w->node_bytes[node] += hop * (out + in);
	if (out == in) /* one product, rounded as it was before hops were told apart */
		tr->w->node_core_s[node] += hop * out * (nc->total_tx_core_s_per_byte +
							 nc->total_core_s_per_byte);
	else
		tr->w->node_core_s[node] += hop * (out * nc->total_tx_core_s_per_byte +
						   in * nc->total_core_s_per_byte);
}

static void bucket_start(trainer *tr, dpgroup *g)
{
	coll_op op = tr->cfg->zero_stage >= 1 ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE;
	g->running = 1;
	g->done_tp = 0;
	g->started = sim_now(tr->w->eng);
	for (uint32_t t = 0; t < tr->T; t++) {
		coll_params cp = { .op = op, .algo = COLL_AUTO, .bytes = (uint64_t)g->bucket_bytes,
				   .ranks = g->ranks + (size_t)t * tr->D, .nranks = tr->D };
		int rc = coll_start(tr->w->coll, &cp, &g->res[t], bucket_done, g, t);
		if (rc)
			return fail(tr, rc, "gradient all-reduce");
	}
	for (uint32_t d = 0; d < tr->D; d++)
		count_dp_hops(tr, g, d);
}

static void bucket_ready(sim_engine *eng, void *obj, uint64_t k)
{
	dpgroup *g = obj;
	trainer *tr = g->tr;
	(void)eng;
	if (++g->ready[k] < tr->D)
		return;
	g->all_ready_at[k] = sim_now(tr->w->eng);
	if (k == g->next && !g->running)
		bucket_start(tr, g);
}

static void bucket_done(sim_engine *eng, void *obj, uint64_t t)
{
	dpgroup *g = obj;
	trainer *tr = g->tr;
	(void)eng, (void)t;
	if (++g->done_tp < tr->T)
		return;
	tr->dp_time_s += sim_time_to_s(sim_now(tr->w->eng) - g->started);
	tr->dp_count++;
	if (tracing(tr, 0)) {
		static const char *const names[] = { "gradients, stage 0", "gradients, stage 1",
			"gradients, stage 2", "gradients, stage 3", "gradients, stage 4",
			"gradients, stage 5", "gradients, stage 6", "gradients, stage 7+" };
		train_span sp = { .track = TRAIN_TRACK_LINK,
				  .link = names[g->p < 7 ? g->p : 7],
				  .start_s = sim_time_to_s(g->started - tr->iter_start),
				  .dur_s = sim_time_to_s(sim_now(tr->w->eng) - g->started),
				  .cat = TRAIN_SPAN_COMM, .name = "gradient all-reduce" };
		tr->cfg->span(tr->cfg->span_ctx, &sp);
	}
	g->running = 0;
	if (++g->next == g->nbuckets)
		return stage_synced(tr, g->p);
	if (g->ready[g->next] == tr->D)
		bucket_start(tr, g);
}

static void stage_finished(sim_engine *eng, void *obj, uint64_t data);

/* Every replica's stage p has its gradients: attribute the wait, run the
 * optimizer step. */
static void stage_synced(trainer *tr, uint32_t p)
{
	const train_config *c = tr->cfg;
	sim_time now = sim_now(tr->w->eng);
	dpgroup *g = &tr->dg[p];
	sim_time barrier = tr->D > 1 ? g->all_ready_at[g->nbuckets - 1] : now;
	double shard = tr->params_stage[p] / (c->zero_stage >= 1 ? tr->D : 1);
	for (uint32_t d = 0; d < tr->D; d++) {
		stage *s = &tr->st[d * tr->P + p];
		sim_time cut = barrier > s->sync_since ? barrier : s->sync_since;
		double opt = gpu_optimizer_s(&c->gpu, shard) *
			     noise_group_max(tr->noise, local_rank(tr, s), tr->T, tr->step++);
		add_wait(s, TRAIN_OTHER, s->sync_since, cut);
		add_wait(s, TRAIN_EXPOSED_COMM, cut, now);
		span_gpus(tr, s, now, now + ps(opt), TRAIN_SPAN_COMPUTE, "optimizer step");
		s->part[TRAIN_COMPUTE] += opt;
		s->compute_s += opt;
		if (sim_schedule_in(tr->w->eng, ps(opt), stage_finished, s, 0, NULL))
			return fail(tr, SIM_ENOMEM, "scheduling");
	}
}

static void iteration_start(trainer *tr);

static void stage_finished(sim_engine *eng, void *obj, uint64_t data)
{
	stage *s = obj;
	trainer *tr = s->tr;
	(void)data;
	s->done = true;
	s->done_at = sim_now(eng);
	if (++tr->stages_done < tr->D * tr->P)
		return;
	/* The iteration is over: keep the critical stage's account. */
	stage *crit = &tr->st[0];
	for (uint32_t i = 1; i < tr->D * tr->P; i++)
		if (tr->st[i].done_at > crit->done_at)
			crit = &tr->st[i];
	double it_s = sim_time_to_s(crit->done_at - tr->iter_start), busy = 0;
	for (uint32_t i = 0; i < tr->D * tr->P; i++)
		busy += tr->st[i].compute_s / it_s;
	if (tr->iter >= tr->cfg->warmup) {
		train_result *r = tr->res;
		r->iter_s[r->iters++] = it_s;
		for (int k = 0; k < TRAIN_NPARTS; k++)
			r->part_s[k] += crit->part[k];
		r->gpu_busy_frac += busy / (tr->D * tr->P);
	}
	tr->iter++;
	if (tr->iter < tr->cfg->warmup + tr->cfg->iterations)
		iteration_start(tr);
	else
		tr->end = sim_now(eng), tr->w->jobs_left--;
}

/* ---- the data loader ---- */

static void loader_fill(trainer *tr, loader *l);

static void decoded(sim_engine *eng, void *obj, uint64_t k)
{
	loader *l = obj;
	trainer *tr = l->tr;
	sim_time rd = l->read_done[k % l->ring], now = sim_now(eng);
	l->ready[k % l->ring] = 1;
	if (k / tr->M == tr->iter && tracing(tr, l->d) && rd >= tr->iter_start && now > rd) {
		train_span sp = { .track = TRAIN_TRACK_HOST, .node = l->node,
				  .start_s = sim_time_to_s(rd - tr->iter_start),
				  .dur_s = sim_time_to_s(now - rd), .cat = TRAIN_SPAN_DATA,
				  .name = "decode microbatch" };
		tr->cfg->span(tr->cfg->span_ctx, &sp);
	}
	if (k / tr->M == tr->iter)
		try_run(tr, &tr->st[l->d * tr->P]);
}

static void storage_read(sim_engine *eng, void *obj, uint64_t k)
{
	loader *l = obj;
	trainer *tr = l->tr;
	const train_config *c = tr->cfg;
	double work = c->micro_batch * c->decode_core_s;
	l->read_done[k % l->ring] = sim_now(eng);
	tr->w->node_core_s[l->node] += work;
	if (station_submit(tr->w->decoders[l->node], ps(work), decoded, l, k))
		fail(tr, SIM_ENOMEM, "data loader");
}

static void storage_flowed(sim_engine *eng, void *obj, uint64_t k)
{
	loader *l = obj;
	if (sim_schedule_in(eng, ps(l->tr->cfg->storage_io_lat_s), storage_read, l, k, NULL))
		fail(l->tr, SIM_ENOMEM, "scheduling");
}

/* Where storage read k of loader l enters its node: the storage network's
 * own NIC when the scenario has one; otherwise a compute NIC. GPUDirect
 * Storage lands in the loader GPU's memory through the NIC on that GPU's
 * PCIe switch (cuFile uses the NIC nearest the GPU buffer: NVIDIA GDS
 * Benchmarking and Configuration Guide, 4.1: for network storage "the NIC
 * becomes the storage controller", best on the GPU's own switch); reads
 * into host memory (NFS, SNAP) take the node's NICs in turn, as multi-rail
 * storage clients spread them (Lustre LNet Multi-Rail, NFS session
 * trunking), rather than all through the first NIC. */
static uint32_t stor_ingress(trainer *tr, const loader *l, uint64_t k, uint32_t *nic_rank)
{
	world *w = tr->w;
	*nic_rank = UINT32_MAX;
	if (w->stor_in[l->node] != UINT32_MAX)
		return w->stor_in[l->node];
	*nic_rank = tr->cfg->storage_direct ? rank_of(tr, l->d, 0, 0)
					    : l->node * w->gpn + (uint32_t)((k + l->d) % w->gpn);
	return fab_nic_down(w->f, *nic_rank);
}

/* A bounce buffer's passes over host memory (the NIC's or drive's write,
 * the copy to the GPU's read: a staged end's, fab_end_mem_passes) on the
 * fabric's per-node memory resource, which network transfers cross too:
 * one entry at that weight, so storage and network share one memory
 * budget. */
#define BOUNCE_CROSSINGS ((double)fab_end_mem_passes(FAB_END_STAGED))

static void push_pcie(uint32_t *path, double *wt, uint32_t *len, uint32_t res, double weight)
{
	if (res == UINT32_MAX)
		return;
	wt[*len] = weight;
	path[(*len)++] = res;
}

/* Into the loading GPU over its own PCIe link (and, through a bounce
 * buffer behind PCIe switches, up the NIC's switch uplink into memory and
 * down the GPU's): the PCIe the fabric models (UINT32_MAX entries skipped;
 * ids pair up, down = up + 1). */
static void push_landing(world *w, uint32_t rank, uint32_t nic_rank, bool bounce,
			 uint32_t *path, double *wt, uint32_t *len)
{
	uint32_t up, g = fab_gpu_pcie(w->f, rank);
	if (bounce && nic_rank != UINT32_MAX)
		push_pcie(path, wt, len, fab_pcie_uplink(w->f, nic_rank), 1);
	if (bounce && w->stor_bounce[rank / w->gpn] != UINT32_MAX)
		push_pcie(path, wt, len, w->stor_bounce[rank / w->gpn], BOUNCE_CROSSINGS);
	if (bounce && (up = fab_pcie_uplink(w->f, rank)) != UINT32_MAX)
		push_pcie(path, wt, len, up + 1, 1);
	if (g != UINT32_MAX)
		push_pcie(path, wt, len, g + 1, 1);
}

/* A read from the node's own NVMe drives into the loader GPU's memory
 * (models/stor.h), one flow over every PCIe link it crosses (its stages
 * pipelined across the reads in flight). The drives sit on NIC
 * local_switch's PCIe switch; "near" is the first GPU there. GDS on that
 * switch: peer to peer into the GPU. GDS elsewhere: staged in the near GPU
 * and copied through the root complex, as cuFile does (NVIDIA GDS
 * Benchmarking and Configuration Guide, 5.1). Bounce buffer: up into host
 * memory and down again, memory twice (the bounce resource). */
static void local_issue(trainer *tr, loader *l, uint64_t k, double bytes)
{
	const train_config *c = tr->cfg;
	world *w = tr->w;
	uint32_t rank = rank_of(tr, l->d, 0, 0), g = rank % w->gpn, nics = c->fabric.nics_per_node;
	uint32_t near = l->node * w->gpn + (c->local_switch * w->gpn + nics - 1) / nics;
	uint32_t path[8], len = 0;
	double wt[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	bool same = g * nics / w->gpn == c->local_switch;
	path[len++] = w->local_drv[l->node];
	if (!c->storage_direct) {
		path[len++] = fab_pcie_uplink(w->f, near);
		if (w->stor_bounce[l->node] != UINT32_MAX) {
			wt[len] = BOUNCE_CROSSINGS;
			path[len++] = w->stor_bounce[l->node];
		}
		path[len++] = fab_pcie_uplink(w->f, rank) + 1;
	} else if (!same) {
		path[len++] = fab_gpu_pcie(w->f, near) + 1;
		path[len++] = fab_gpu_pcie(w->f, near);
		path[len++] = fab_pcie_uplink(w->f, near);
		path[len++] = fab_pcie_uplink(w->f, rank) + 1;
	}
	path[len++] = fab_gpu_pcie(w->f, rank) + 1;
	flow_spec fs = { .bytes = (uint64_t)bytes, .path = path, .weights = wt, .path_len = len,
			 .done = storage_flowed, .obj = l, .data = k };
	int rc = flow_start(w->net, &fs, NULL);
	if (rc)
		fail(tr, rc, "local storage read");
}

/* Whether read k of loader l is served by the page cache: page_cache_hit
 * of each loader's reads, spread evenly (read i = k + l->d hits when
 * floor((i + 1) h) passes floor(i h)), so the share is exact over any run
 * and needs no random stream; the offset by replica keeps the loaders' hits
 * out of step, so the servers see the misses spread over the iterations. */
static bool page_cache_hit(const train_config *c, const loader *l, uint64_t k)
{
	double h = c->page_cache_hit, i = (double)(k + l->d);
	return h > 0 && floor((i + 1) * h) > floor(i * h);
}

static void loader_issue(trainer *tr, loader *l, uint64_t k)
{
	const train_config *c = tr->cfg;
	double bytes = c->micro_batch * c->sample_bytes;
	uint32_t path[8], len = 0, nic_rank;
	double wt[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	l->ready[k % l->ring] = 0;
	l->read_done[k % l->ring] = SIM_TIME_MAX;
	if (page_cache_hit(c, l, k))
		return storage_read(tr->w->eng, l, k);
	if (c->local_Bps > 0 && bytes >= 1)
		return local_issue(tr, l, k, bytes);
	if (c->storage_Bps <= 0 || bytes < 1)
		return storage_read(tr->w->eng, l, k);
	path[len++] = tr->w->stor_servers0 + (uint32_t)(tr->w->stor_rr++ % tr->w->stor_servers);
	path[len++] = stor_ingress(tr, l, k, &nic_rank);
	if (tr->w->stor_res[l->node] != UINT32_MAX) {
		wt[len] = tr->w->stor_w[l->node];
		path[len++] = tr->w->stor_res[l->node];
	}
	push_landing(tr->w, rank_of(tr, l->d, 0, 0), nic_rank, !c->storage_direct, path, wt, &len);
	flow_spec fs = { .bytes = (uint64_t)bytes, .path = path, .weights = wt, .path_len = len,
			 .done = storage_flowed, .obj = l, .data = k };
	tr->w->node_core_s[l->node] += bytes * c->storage_core_s_per_byte;
	if (c->storage_engine_Bps > 0)
		tr->w->node_snap_bytes[l->node] += bytes;
	int rc = flow_start(tr->w->net, &fs, NULL);
	if (rc)
		fail(tr, rc, "storage read");
}

/* Keeps `prefetch` microbatches in flight ahead of consumption. */
static void loader_fill(trainer *tr, loader *l)
{
	uint64_t end = (uint64_t)(tr->cfg->warmup + tr->cfg->iterations) * tr->M;
	while (l->issued < end && l->issued < l->consumed + tr->cfg->prefetch)
		loader_issue(tr, l, l->issued++);
}

static void loader_consume(trainer *tr, loader *l)
{
	l->consumed++;
	loader_fill(tr, l);
}

/* ---- iterations ---- */

static void iteration_start(trainer *tr)
{
	tr->iter_start = sim_now(tr->w->eng);
	tr->stages_done = 0;
	for (uint32_t i = 0; i < tr->D * tr->P; i++) {
		stage *s = &tr->st[i];
		memset(s->fwd_in, 0, tr->M);
		memset(s->bwd_in, 0, tr->M);
		memset(s->part, 0, sizeof s->part);
		s->op = 0;
		s->busy = s->waiting = s->syncing = s->done = false;
		s->compute_s = 0;
	}
	for (uint32_t p = 0; p < tr->P; p++) {
		dpgroup *g = &tr->dg[p];
		memset(g->ready, 0, sizeof g->ready);
		g->next = g->running = 0;
	}
	for (uint32_t i = 0; i < tr->D * tr->P; i++)
		try_run(tr, &tr->st[i]);
}

/* ---- construction ---- */

/* Tensor-parallel all-reduce of one layer's activations on a node's
 * NVSwitch, simulated once on its own one-node fabric. */
static int tp_allreduce_s(const train_config *c, double bytes, double *out, uint32_t *channels,
			  diag *d)
{
	fab_config fc = c->fabric;
	sim_engine *eng;
	flow_net *net = NULL;
	fab *f = NULL;
	coll_ctx *cc = NULL;
	coll_result r;
	coll_config cfg = c->coll;
	int rc;
	*out = 0;
	*channels = 0;
	if (c->tp == 1)
		return SIM_OK;
	fc.nodes = 1;
	fc.gpus_per_node = c->tp;
	fc.nics_per_node = 1;
	fc.topo = FAB_SINGLE_SWITCH;
	fc.radix = 0;
	/* NCCL inside a node goes GPU to GPU over NVLink whatever the network
	 * transport: no host, no adapter latency, no socket limit. */
	cfg.transport = (coll_transport){ .kind = COLL_RDMA_GDR,
					  .mtu_bytes = c->coll.transport.mtu_bytes };
	/* NCCL's channels on the node's NVLink: the GPU profile's count from
	 * NCCL's own log where it gives one (tp_channels), else one per NIC of
	 * the real node, as the data-parallel rings have (coll.h), not the one
	 * NIC of this stand-alone node (train_config_of notes which). Under
	 * NCCL's protocols the count sets how many loops a buffer takes. */
	if (!cfg.channels)
		cfg.channels = c->tp_channels ? c->tp_channels : c->fabric.nics_per_node;
	eng = sim_engine_new();
	rc = eng ? SIM_OK : SIM_ENOMEM;
	if (!rc && !(net = flow_net_new(eng)))
		rc = SIM_ENOMEM;
	if (!rc)
		rc = fab_new(&fc, net, &f);
	if (!rc)
		rc = coll_ctx_new(eng, net, f, &cfg, &cc);
	if (!rc)
		rc = coll_run(cc, &(coll_params){ .op = COLL_ALLREDUCE, .algo = COLL_AUTO,
						  .bytes = (uint64_t)bytes }, &r);
	if (rc && sim_error(eng)) /* sim_fail: an NVLink rate or size past the clock */
		diag_add(d, NULL, 0, 0, "training simulation: the tensor-parallel all-reduce "
			 "inside a node: %s", sim_error_msg(eng));
	if (!rc) {
		*out = sim_time_to_s(r.time_ps);
		*channels = r.channels;
	}
	coll_ctx_free(cc);
	fab_free(f);
	flow_net_free(net);
	sim_engine_free(eng);
	return rc;
}

static int build_compute(trainer *tr)
{
	const train_config *c = tr->cfg;
	const wl_transformer *t = &c->model.tf;
	int rc;
	if (c->model.kind == WL_VISION) {
		/* Many small layers: the whole network as one block of FLOPs at
		 * the best GEMM efficiency (convolutions run as implicit GEMMs). */
		tr->layer_f_s = c->micro_batch * c->model.vis.fwd_flops_per_sample /
				(c->gpu.peak_flops * c->gpu.eff_max);
		tr->layer_b_s = 2 * tr->layer_f_s;
		return SIM_OK;
	}
	gpu_layer_s(&c->gpu, t, c->micro_batch, c->tp, &tr->layer_f_s, &tr->layer_b_s);
	gpu_logits_s(&c->gpu, t, c->micro_batch, c->tp, &tr->logit_f_s, &tr->logit_b_s);
	/* Megatron: two all-reduces per layer forward (attention, MLP). */
	rc = tp_allreduce_s(c, wl_stage_boundary_bytes(t, c->micro_batch), &tr->tp_ar_s,
			    &tr->tp_channels, tr->w->d);
	tr->tp_fwd_s = 2 * tr->tp_ar_s;
	return rc;
}

static int alloc_stages(trainer *tr)
{
	const train_config *c = tr->cfg;
	uint32_t n = tr->D * tr->P;
	tr->st = calloc(n, sizeof *tr->st);
	tr->params_stage = calloc(tr->P, sizeof *tr->params_stage);
	if (!tr->st || !tr->params_stage)
		return SIM_ENOMEM;
	for (uint32_t p = 0; p < tr->P; p++) {
		uint32_t layers = wl_stage_layers(&c->model, tr->P, p);
		tr->params_stage[p] = wl_stage_params(&c->model, tr->P, p) / tr->T;
		for (uint32_t d = 0; d < tr->D; d++) {
			stage *s = &tr->st[d * tr->P + p];
			*s = (stage){ .tr = tr, .d = d, .p = p, .layers = layers,
				      .first_rank = rank_of(tr, d, p, 0) };
			s->fwd_in = calloc(2 * tr->M, 1);
			s->fwd_sent = calloc(2 * tr->M, sizeof *s->fwd_sent);
			if (!s->fwd_in || !s->fwd_sent)
				return SIM_ENOMEM;
			s->bwd_in = s->fwd_in + tr->M;
			s->bwd_sent = s->fwd_sent + tr->M;
		}
	}
	return SIM_OK;
}

static int alloc_groups(trainer *tr)
{
	const train_config *c = tr->cfg;
	tr->dg = calloc(tr->P, sizeof *tr->dg);
	if (!tr->dg)
		return SIM_ENOMEM;
	for (uint32_t p = 0; p < tr->P; p++) {
		dpgroup *g = &tr->dg[p];
		double bytes = tr->params_stage[p] * c->grad_bytes_per_param;
		uint32_t k = c->bucket_bytes > 0 ? (uint32_t)ceil(bytes / c->bucket_bytes) : 1;
		*g = (dpgroup){ .tr = tr, .p = p, .nbuckets = k < 1 ? 1 : k > MAX_BUCKETS ? MAX_BUCKETS : k };
		g->bucket_bytes = bytes / g->nbuckets;
		g->ranks = malloc((size_t)tr->T * tr->D * sizeof *g->ranks);
		g->res = calloc(tr->T, sizeof *g->res);
		if (!g->ranks || !g->res)
			return SIM_ENOMEM;
		for (uint32_t t = 0; t < tr->T; t++)
			for (uint32_t d = 0; d < tr->D; d++)
				g->ranks[(size_t)t * tr->D + d] = rank_of(tr, d, p, t);
	}
	return SIM_OK;
}

/* Host cores a node of job c leaves to the network and storage stacks. */
static double stack_cores(const train_config *c)
{
	double cores = c->host.cores * (1 - c->os_jitter);
	double stack = cores - c->framework_cores_per_gpu * c->fabric.gpus_per_node -
		       (c->data ? c->workers : 0);
	return stack < 1 ? 1 : stack;
}

/* The host-CPU bound on a node's network traffic, in and out together, at
 * the mean of the send and receive costs (setup_stack_cap_Bps); 0: none. */
static double net_cpu_cap_Bps(const train_config *c)
{
	return setup_stack_cap_Bps(&c->net_costs, stack_cores(c));
}

/* A device's byte rate under its IO rate: the loader reads one IO per
 * sample (a dataset of one file per sample, as ImageNet's JPEGs, read by
 * the loader one sample at a time), so iops IO/s move at most
 * iops x io_bytes bytes/s; small samples make the device IOPS-bound, large
 * ones leave its bandwidth binding (a roofline: the datasheet's small-IO
 * IOPS taken as independent of the IO size). A sample larger than the
 * protocol's largest IO (Linux NFS client: 1 MiB, NFS_MAX_FILE_IO_SIZE in
 * the kernel's include/linux/nfs_xdr.h) is several IOs, but any IO over
 * Bps / iops bytes (30 kB for a DDN AI400X2, 4.2 kB for a Micron 9200 PRO)
 * leaves the bandwidth binding either way. */
static double io_capped_Bps(double Bps, double iops, double io_bytes)
{
	return iops > 0 && io_bytes > 0 ? fmin(Bps, iops * io_bytes) : Bps;
}

/* Node n's decoders (host cores), storage ingress and client work, and the
 * host-stack and DPU-engine capacities on its network paths, sized by the
 * configuration of the job it belongs to. */
static int world_node(world *w, uint32_t n)
{
	const train_config *c = w->node_cfg[n];
	double stack = stack_cores(c), cap = net_cpu_cap_Bps(c);
	uint32_t id, cpu = UINT32_MAX;
	int rc = 0;
	w->stor_res[n] = w->stor_bounce[n] = w->local_drv[n] = UINT32_MAX;
	w->stor_w[n] = 1;
	if (!(w->decoders[n] = station_new(w->eng, c->workers ? c->workers : 1)))
		return SIM_ENOMEM;
	if (cap > 0 && !(rc = flow_res_add(w->net, cap, &cpu)))
		rc = fab_attach(w->f, n, cpu);
	if (!rc && c->net_costs.engine_cap_Bps > 0 &&
	    !(rc = flow_res_add(w->net, c->net_costs.engine_cap_Bps, &id)))
		rc = fab_attach(w->f, n, id);
	/* The stack cores are one contended station (issue 5: "when it
	 * saturates, everything it serves slows down"): the storage client
	 * crosses the network stack's resource at its own cost per byte, so
	 * reads and gradients share the cores max-min fairly on the cycles
	 * they take (flow.h's weights). In cycles/s the resource would be
	 * stack cores x frequency, crossed at cycles per byte; the fabric puts
	 * it on network paths at weight 1, so it stays in network bytes
	 * (cycles/s over the stack's mean cycles per byte: cap) and a storage
	 * byte weighs its cost over that mean: capacity and weights divided
	 * by one number, the same rates. Without a network-stack cost (RDMA)
	 * the cores serve the storage client alone, sized in its bytes. */
	if (!rc && c->storage_core_s_per_byte > 0 && cpu != UINT32_MAX) {
		w->stor_res[n] = cpu;
		w->stor_w[n] = c->storage_core_s_per_byte * cap / stack;
	} else if (!rc && c->storage_core_s_per_byte > 0) {
		rc = flow_res_add(w->net, stack / c->storage_core_s_per_byte, &w->stor_res[n]);
	} else if (!rc && c->storage_engine_Bps > 0) {
		rc = flow_res_add(w->net, c->storage_engine_Bps, &w->stor_res[n]);
	}
	/* A dedicated storage network enters the node through its own NIC;
	 * otherwise reads share the compute NICs (stor_ingress). */
	w->stor_in[n] = UINT32_MAX;
	if (!rc && c->storage_nic_Bps > 0)
		rc = flow_res_add(w->net, c->storage_nic_Bps, &w->stor_in[n]);
	/* Without GPUDirect Storage every byte read is written into a host
	 * bounce buffer by the NIC (or drive) and read out of it by the copy
	 * to the GPU: two passes over the node's host memory, the fabric's
	 * resource that host-tcp and rdma transfers cross too (BOUNCE_CROSSINGS;
	 * UINT32_MAX, not a bound, where the CPU profile gives no mem_bw). */
	if (!rc && (c->storage_Bps > 0 || c->local_Bps > 0) && !c->storage_direct)
		w->stor_bounce[n] = fab_host_mem(w->f, n);
	if (!rc && c->local_Bps > 0)
		rc = flow_res_add(w->net, io_capped_Bps(c->local_Bps, c->local_iops, c->sample_bytes),
				  &w->local_drv[n]);
	return rc;
}

/* Every node's resources, then the storage servers (those of the first job
 * that reads from storage: the jobs share the scenario's storage). */
static int world_nodes(world *w, const train_config *const *cfgs, uint32_t njobs)
{
	const train_config *sc = NULL;
	double io_bytes = INFINITY, cap;
	int rc = 0;
	w->decoders = calloc(w->nodes, sizeof *w->decoders);
	w->stor_res = malloc(w->nodes * sizeof *w->stor_res);
	w->stor_w = malloc(w->nodes * sizeof *w->stor_w);
	w->stor_in = malloc(w->nodes * sizeof *w->stor_in);
	w->stor_bounce = malloc(w->nodes * sizeof *w->stor_bounce);
	w->local_drv = malloc(w->nodes * sizeof *w->local_drv);
	w->node_core_s = calloc(w->nodes, sizeof *w->node_core_s);
	w->node_bytes = calloc(w->nodes, sizeof *w->node_bytes);
	w->node_snap_bytes = calloc(w->nodes, sizeof *w->node_snap_bytes);
	if (!w->decoders || !w->stor_res || !w->stor_w || !w->stor_in || !w->stor_bounce ||
	    !w->local_drv || !w->node_core_s || !w->node_bytes || !w->node_snap_bytes)
		return SIM_ENOMEM;
	for (uint32_t n = 0; n < w->nodes && !rc; n++)
		rc = world_node(w, n);
	for (uint32_t j = 0; j < njobs && !sc; j++)
		if (cfgs[j]->storage_Bps > 0)
			sc = cfgs[j];
	if (!sc)
		return rc;
	/* Each server's IO rate bounds it as a byte rate at the read size
	 * (io_capped_Bps). Jobs reading samples of different sizes share the
	 * servers: the bound takes the smallest, so the servers never exceed
	 * their IOPS (pessimistic for the larger reads of such a mix). */
	for (uint32_t j = 0; j < njobs; j++)
		if (cfgs[j]->storage_Bps > 0 && cfgs[j]->sample_bytes > 0)
			io_bytes = fmin(io_bytes, cfgs[j]->sample_bytes);
	cap = io_capped_Bps(sc->storage_Bps, sc->storage_iops, isfinite(io_bytes) ? io_bytes : 0);
	w->stor_servers = sc->storage_servers;
	for (uint32_t k = 0; k < sc->storage_servers && !rc; k++) {
		uint32_t id;
		rc = flow_res_add(w->net, cap / sc->storage_servers, &id);
		if (k == 0)
			w->stor_servers0 = id;
	}
	return rc;
}

static int alloc_loaders(trainer *tr)
{
	tr->ld = calloc(tr->D, sizeof *tr->ld);
	if (!tr->ld)
		return SIM_ENOMEM;
	for (uint32_t d = 0; d < tr->D; d++) {
		loader *l = &tr->ld[d];
		*l = (loader){ .tr = tr, .d = d, .node = rank_of(tr, d, 0, 0) / tr->gpn,
			       .ring = 2 * tr->M + tr->cfg->prefetch + 1 };
		l->read_done = calloc(l->ring, sizeof *l->read_done);
		l->ready = calloc(l->ring, 1);
		if (!l->read_done || !l->ready)
			return SIM_ENOMEM;
	}
	return SIM_OK;
}

static void count_cycles(void *ctx, uint32_t rank, double cycles)
{
	(void)ctx, (void)rank, (void)cycles; /* counted per collective in bucket_start */
}

/* The shared machinery over `nodes` nodes: fabric, transport and
 * collectives of job 0's configuration (the jobs run one scenario under
 * one variant), node resources sized by each node's job. */
static int world_build(world *w, uint32_t nodes, const train_config *const *cfgs,
		       uint32_t njobs)
{
	const train_config *c = cfgs[0];
	fab_config fc = c->fabric;
	coll_config cc = c->coll;
	int rc;
	w->nodes = fc.nodes = nodes;
	w->gpn = fc.gpus_per_node;
	cc.transport.cpu = count_cycles;
	if (!(w->eng = sim_engine_new()) || !(w->net = flow_net_new(w->eng)))
		return SIM_ENOMEM;
	if ((rc = fab_new(&fc, w->net, &w->f)) ||
	    (rc = coll_ctx_new(w->eng, w->net, w->f, &cc, &w->coll)))
		return rc;
	return world_nodes(w, cfgs, njobs);
}

static void world_teardown(world *w)
{
	/* Stations and collectives hold engine events: free them first. */
	if (w->decoders)
		for (uint32_t n = 0; n < w->nodes; n++)
			station_free(w->decoders[n]);
	free(w->decoders);
	while (w->xfers) { /* a run sim_fail stopped: its transfers never arrived */
		xfer *x = w->xfers;
		w->xfers = x->next;
		free(x);
	}
	coll_ctx_free(w->coll);
	fab_free(w->f);
	flow_net_free(w->net);
	sim_engine_free(w->eng);
	free(w->node_cfg);
	free(w->stor_res);
	free(w->stor_w);
	free(w->stor_in);
	free(w->stor_bounce);
	free(w->local_drv);
	free(w->node_core_s);
	free(w->node_bytes);
	free(w->node_snap_bytes);
	for (uint32_t k = 0; w->bench && k < w->nbench; k++)
		free(w->bench[k].ranks);
	free(w->bench);
}

static int job_build(trainer *tr)
{
	const train_config *c = tr->cfg;
	int rc;
	tr->P = c->pp, tr->D = c->dp, tr->T = c->tp, tr->M = c->microbatches;
	tr->gpn = c->fabric.gpus_per_node;
	tr->nodes = c->fabric.nodes;
	tr->res->net_cpu_cap_Bps = net_cpu_cap_Bps(c);
	if (!(tr->noise = noise_new(&c->noise, c->seed)))
		return SIM_EINVAL;
	if ((rc = build_compute(tr)) || (rc = alloc_stages(tr)) || (rc = alloc_groups(tr)) ||
	    (rc = alloc_loaders(tr)))
		return rc;
	return SIM_OK;
}

static void job_teardown(trainer *tr)
{
	noise_free(tr->noise);
	if (tr->st)
		for (uint32_t i = 0; i < tr->D * tr->P; i++) {
			free(tr->st[i].fwd_in);
			free(tr->st[i].fwd_sent);
		}
	free(tr->st);
	if (tr->dg)
		for (uint32_t p = 0; p < tr->P; p++) {
			free(tr->dg[p].ranks);
			free(tr->dg[p].res);
		}
	free(tr->dg);
	if (tr->ld)
		for (uint32_t d = 0; d < tr->D; d++) {
			free(tr->ld[d].read_done);
			free(tr->ld[d].ready);
		}
	free(tr->ld);
	free(tr->params_stage);
}

/* ---- collective benchmarks beside the jobs ---- */

static void bench_done(sim_engine *eng, void *obj, uint64_t data);

static void bench_start(bench_run *br)
{
	const train_bench *b = br->b;
	coll_params cp = { .op = b->op, .algo = b->algo, .bytes = b->bytes[br->size],
			   .ranks = br->ranks, .nranks = b->ranks };
	int rc;
	if (!br->w->jobs_left)
		br->b->after++;
	if ((rc = coll_start(br->w->coll, &cp, &br->res, bench_done, br, 0)) && !br->w->err) {
		diag_add(br->w->d, NULL, 0, 0, "collective benchmark: %s of %llu bytes on %u "
			 "ranks: %s", coll_op_name(b->op), (unsigned long long)cp.bytes, b->ranks,
			 sim_strerror(rc));
		br->w->err = rc;
	}
}

/* One collective over: count it, then the next of the pass, or a new pass
 * while a training job still runs. */
static void bench_done(sim_engine *eng, void *obj, uint64_t data)
{
	bench_run *br = obj;
	train_bench *b = br->b;
	(void)eng, (void)data;
	b->time_s[br->size] += sim_time_to_s(br->res.time_ps); /* as coll_run reports it */
	b->count[br->size]++;
	b->used[br->size] = br->res.algo;
	if (br->w->err)
		return;
	if (++br->it == b->iterations) {
		br->it = 0;
		if (++br->size == b->nsizes)
			br->size = 0, br->passes++;
	}
	if (br->passes && !br->w->jobs_left)
		return;
	bench_start(br);
}

/* A benchmark's ranks and node configuration (job 0's hosts, the data
 * loader and storage client idle, the benchmark's own cores kept). */
static int bench_prepare(world *w, const train_config *c0, train_bench *b, bench_run *br)
{
	*br = (bench_run){ .w = w, .b = b, .node_cfg = *c0 };
	br->node_cfg.data = false;
	br->node_cfg.workers = 0;
	br->node_cfg.framework_cores_per_gpu = b->cores_per_gpu;
	br->node_cfg.storage_Bps = br->node_cfg.local_Bps = 0;
	br->node_cfg.storage_core_s_per_byte = br->node_cfg.storage_engine_Bps = 0;
	br->node_cfg.storage_nic_Bps = 0;
	if (!b->nsizes || !b->iterations || !b->ranks || b->nsizes > SCN_MAX_SIZES ||
	    b->nodes != (b->ranks + w->gpn - 1) / w->gpn) {
		diag_add(w->d, NULL, 0, 0, "collective benchmark: nothing to run, or its %u ranks "
			 "do not fill its %u nodes of %u GPUs", b->ranks, b->nodes, w->gpn);
		return SIM_EINVAL;
	}
	if (!(br->ranks = malloc(b->ranks * sizeof *br->ranks)))
		return SIM_ENOMEM;
	for (uint32_t r = 0; r < b->ranks; r++)
		br->ranks[r] = b->node_of[r / w->gpn] * w->gpn + r % w->gpn;
	for (uint32_t i = 0; i < b->nodes; i++) {
		uint32_t n = b->node_of[i];
		if (n >= w->nodes || w->node_cfg[n]) {
			diag_add(w->d, NULL, 0, 0, "collective benchmark: node %u is %s", n,
				 n >= w->nodes ? "outside the cluster" : "taken");
			return SIM_EINVAL;
		}
		w->node_cfg[n] = &br->node_cfg;
	}
	return SIM_OK;
}

/* ---- results ---- */

static void explain(trainer *tr, train_result *r)
{
	static const char *const what[TRAIN_NPARTS] = {
		"GPU compute", "exposed communication", "waiting for storage",
		"waiting for host cores to decode data", "pipeline bubble",
		"waiting for the slowest replica",
	};
	int top = 0;
	double total = 0;
	for (int k = 0; k < TRAIN_NPARTS; k++) {
		total += r->part_s[k];
		if (r->part_s[k] > r->part_s[top])
			top = k;
	}
	const train_config *c = tr->cfg;
	size_t n = 0, size = sizeof r->critical;
	int k = snprintf(r->critical, size, "%s %.0f%% of the iteration",
			 what[top], total > 0 ? 100 * r->part_s[top] / total : 0);
	n = k < 0 ? 0 : (size_t)k < size ? (size_t)k : size - 1;
	/* Waiting for storage (the top part, or a tenth of the iteration)
	 * whose IO rate binds before its bandwidth: say so, with the two
	 * rates (io_capped_Bps). */
	double iops = c->local_Bps > 0 ? c->local_iops : c->storage_iops;
	double Bps = c->local_Bps > 0 ? c->local_Bps : c->storage_Bps;
	double stall = total > 0 ? r->part_s[TRAIN_DATA_STALL] / total : 0;
	if ((top == TRAIN_DATA_STALL || stall >= 0.1) && iops > 0 &&
	    iops * c->sample_bytes < Bps && n < size - 1) {
		char share[40] = "";
		if (top != TRAIN_DATA_STALL)
			snprintf(share, sizeof share, " (waiting for storage %.0f%%)", 100 * stall);
		k = snprintf(r->critical + n, size - n, "; the data loader is IOPS-bound%s: %s "
			     "%.3g IO/s x %.4g kB samples = %.3g GB/s < %.3g GB/s bandwidth", share,
			     c->local_Bps > 0 ? "local NVMe" : "storage", iops,
			     c->sample_bytes / 1e3, iops * c->sample_bytes / 1e9, Bps / 1e9);
		n = k < 0 ? n : n + (size_t)k < size ? n + (size_t)k : size - 1;
	}
	/* The host's bound on a node's network traffic: its cores or its
	 * memory, whichever is lower, named as such. */
	double mem = c->fabric.host_mem_Bps;
	double x = fab_end_mem_passes(coll_transport_end(c->coll.transport.kind));
	double mem_cap = mem > 0 && x > 0 ? mem / x : 0, cpu_cap = r->net_cpu_cap_Bps;
	if (mem_cap > 0 && (!(cpu_cap > 0) || mem_cap < cpu_cap) && n < size - 1) {
		char cores[64] = "";
		if (cpu_cap > 0)
			snprintf(cores, sizeof cores, ", below the host cores' %.1f GB/s", cpu_cap / 1e9);
		snprintf(r->critical + n, size - n, "; host memory caps each node's network traffic "
			 "at %.1f GB/s (%.1f GB/s, crossed %.0f times per byte)%s", mem_cap / 1e9,
			 mem / 1e9, x, cores);
	} else if (cpu_cap > 0 && n < size - 1) {
		snprintf(r->critical + n, size - n,
			 "; host cores cap each node's network traffic at %.1f GB/s", cpu_cap / 1e9);
	}
}

static double boundary_bytes(const train_config *c)
{
	return c->model.kind == WL_TRANSFORMER ? wl_stage_boundary_bytes(&c->model.tf, c->micro_batch)
					       : 0;
}

static void add_coll(train_result *r, const char *op, const char *algo, const char *what,
		     uint32_t ranks, double bytes, double time_s, uint64_t count, uint32_t channels)
{
	if (r->ncoll == TRAIN_MAX_COLLS || count == 0)
		return;
	r->coll[r->ncoll++] = (train_coll_stat){ .op = op, .algo = algo, .what = what,
						 .ranks = ranks, .bytes = (uint64_t)bytes,
						 .time_s = time_s, .count = count,
						 .channels = channels };
}

static void finish(trainer *tr, train_result *r)
{
	const train_config *c = tr->cfg;
	double T = 0, node_max_core_s = 0, node_max_bytes = 0, node_max_snap = 0;
	for (uint32_t i = 0; i < r->iters; i++)
		T += r->iter_s[i];
	for (int k = 0; k < TRAIN_NPARTS && r->iters; k++)
		r->part_s[k] /= r->iters;
	if (r->iters)
		r->gpu_busy_frac /= r->iters;
	for (uint32_t i = 0; i < tr->nodes; i++) {
		uint32_t n = tr->node_of[i];
		if (tr->w->node_core_s[n] > node_max_core_s)
			node_max_core_s = tr->w->node_core_s[n];
		if (tr->w->node_bytes[n] > node_max_bytes)
			node_max_bytes = tr->w->node_bytes[n];
		if (tr->w->node_snap_bytes[n] > node_max_snap)
			node_max_snap = tr->w->node_snap_bytes[n];
	}
	/* The job's whole run (warm-up included): work over capacity on its
	 * busiest node. */
	double run_s = sim_time_to_s(tr->end);
	r->host_cpu_util = run_s > 0 ? node_max_core_s / (c->host.cores * run_s) : NAN;
	r->run_s = run_s;
	/* The DPU's busiest engine: the network engine (both directions) or
	 * SNAP (storage reads). */
	if (c->net_costs.engine_cap_Bps > 0 && run_s > 0)
		r->dpu_util = node_max_bytes / (c->net_costs.engine_cap_Bps * run_s);
	if (c->storage_engine_Bps > 0 && run_s > 0 &&
	    !(node_max_snap / (c->storage_engine_Bps * run_s) <= r->dpu_util))
		r->dpu_util = node_max_snap / (c->storage_engine_Bps * run_s);
	if (tr->T > 1)
		add_coll(r, "allreduce", "auto", "tensor-parallel activations (NVLink)", tr->T,
			 boundary_bytes(c), tr->tp_ar_s, 1, tr->tp_channels);
	if (tr->dp_count)
		add_coll(r, c->zero_stage >= 1 ? "reducescatter" : "allreduce",
			 coll_algo_name(tr->dg[0].res[0].algo), "gradient bucket across replicas",
			 tr->D, tr->dg[0].bucket_bytes, tr->dp_time_s / (double)tr->dp_count, tr->dp_count,
			 tr->dg[0].res[0].channels);
	if (tr->pp_count)
		add_coll(r, "sendrecv", "p2p", "pipeline activations and gradients", 2,
			 boundary_bytes(c), tr->pp_time_s / (double)tr->pp_count, tr->pp_count, 0);
	r->events = sim_events_run(tr->w->eng);
	r->net_switches = fab_net_switches(tr->w->f);
	explain(tr, r);
	(void)T;
}

/* Each job runnable, its nodes inside the cluster and no node given to two
 * jobs; fills w->node_cfg. */
static int check_jobs(world *w, const train_config *const *cfgs, const uint32_t *const *node_of,
		      uint32_t njobs)
{
	if (!njobs) {
		diag_add(w->d, NULL, 0, 0, "training simulation: no job to run");
		return SIM_EINVAL;
	}
	if (!(w->node_cfg = calloc(w->nodes, sizeof *w->node_cfg)))
		return SIM_ENOMEM;
	for (uint32_t j = 0; j < njobs; j++) {
		const train_config *c = cfgs[j];
		if (!c->iterations || !c->microbatches || c->tp * c->pp * c->dp == 0) {
			diag_add(w->d, NULL, 0, 0, "training simulation: job %u: nothing to run", j);
			return SIM_EINVAL;
		}
		if (c->fabric.gpus_per_node != w->gpn ||
		    (uint64_t)c->tp * c->pp * c->dp > (uint64_t)c->fabric.nodes * w->gpn) {
			diag_add(w->d, NULL, 0, 0, "training simulation: job %u does not fit its "
				 "%u nodes of %u GPUs", j, c->fabric.nodes, w->gpn);
			return SIM_EINVAL;
		}
		for (uint32_t i = 0; i < c->fabric.nodes; i++) {
			uint32_t n = node_of[j][i];
			if (n >= w->nodes || w->node_cfg[n]) {
				diag_add(w->d, NULL, 0, 0, "training simulation: job %u: node %u is "
					 "%s", j, n, n >= w->nodes ? "outside the cluster" : "taken");
				return SIM_EINVAL;
			}
			w->node_cfg[n] = c;
		}
	}
	for (uint32_t k = 0; k < w->nbench; k++) {
		int rc = bench_prepare(w, cfgs[0], w->bench[k].b, &w->bench[k]);
		if (rc)
			return rc;
	}
	for (uint32_t n = 0; n < w->nodes; n++)
		if (!w->node_cfg[n])
			w->node_cfg[n] = cfgs[0];
	return SIM_OK;
}

/* Builds every job, starts them together, runs the engine until all have
 * done their iterations. */
static int run_jobs(world *w, trainer *trs, uint32_t njobs)
{
	int rc = 0;
	for (uint32_t j = 0; j < njobs && !rc; j++)
		rc = job_build(&trs[j]);
	if (rc) {
		diag_add(w->d, NULL, 0, 0, "training simulation: building the jobs: %s",
			 sim_strerror(rc));
		return rc;
	}
	for (uint32_t j = 0; j < njobs; j++) {
		for (uint32_t l = 0; l < trs[j].D && trs[j].cfg->data; l++)
			loader_fill(&trs[j], &trs[j].ld[l]);
		iteration_start(&trs[j]);
	}
	w->jobs_left = njobs;
	for (uint32_t k = 0; k < w->nbench; k++)
		bench_start(&w->bench[k]);
	sim_run(w->eng);
	if ((rc = sim_error(w->eng))) { /* sim_fail: a rate or size took it past the clock */
		diag_add(w->d, NULL, 0, 0, "training simulation: %s", sim_error_msg(w->eng));
		return rc;
	}
	for (uint32_t j = 0; j < njobs && !w->err; j++)
		if (trs[j].res->iters != trs[j].cfg->iterations) {
			diag_add(w->d, NULL, 0, 0, "training simulation: job %u stalled after %u of "
				 "%u iterations (a model bug)", j, trs[j].res->iters,
				 trs[j].cfg->iterations);
			return SIM_EINVAL;
		}
	for (uint32_t k = 0; k < w->nbench && !w->err; k++)
		if (!w->bench[k].passes) {
			diag_add(w->d, NULL, 0, 0, "collective benchmark %u stalled in its first "
				 "pass (a model bug)", k);
			return SIM_EINVAL;
		}
	for (uint32_t j = 0; j < njobs && !w->err; j++)
		finish(&trs[j], trs[j].res);
	return w->err;
}

int train_sim_shared(const train_config *const *cfgs, const uint32_t *const *node_of,
		     uint32_t njobs, train_bench *bench, uint32_t nbench, uint32_t nodes,
		     train_result *res, diag *d)
{
	world w = { .d = d, .nodes = nodes, .gpn = njobs ? cfgs[0]->fabric.gpus_per_node : 0,
		    .bench = calloc(nbench ? nbench : 1, sizeof *w.bench), .nbench = nbench };
	trainer *trs = calloc(njobs ? njobs : 1, sizeof *trs);
	int rc = trs && w.bench ? SIM_OK : SIM_ENOMEM;
	for (uint32_t k = 0; k < nbench && w.bench; k++)
		w.bench[k].b = &bench[k];
	if (!rc)
		rc = check_jobs(&w, cfgs, node_of, njobs);
	for (uint32_t j = 0; j < njobs; j++)
		res[j] = (train_result){ .host_cpu_util = NAN, .dpu_util = NAN };
	for (uint32_t j = 0; j < njobs && !rc; j++) {
		trs[j] = (trainer){ .cfg = cfgs[j], .w = &w, .node_of = node_of[j], .res = &res[j] };
		if (!(res[j].iter_s = calloc(cfgs[j]->iterations, sizeof *res[j].iter_s)))
			rc = SIM_ENOMEM;
	}
	if (!rc && (rc = world_build(&w, nodes, cfgs, njobs)))
		diag_add(d, NULL, 0, 0, "training simulation: building the cluster: %s",
			 sim_strerror(rc));
	if (!rc)
		rc = run_jobs(&w, trs, njobs);
	for (uint32_t j = 0; trs && j < njobs; j++)
		job_teardown(&trs[j]);
	world_teardown(&w);
	free(trs);
	for (uint32_t j = 0; rc && j < njobs; j++)
		train_result_release(&res[j]);
	return rc;
}

int train_sim_multi(const train_config *const *cfgs, const uint32_t *const *node_of,
		    uint32_t njobs, uint32_t nodes, train_result *res, diag *d)
{
	return train_sim_shared(cfgs, node_of, njobs, NULL, 0, nodes, res, d);
}

int train_sim(const train_config *cfg, train_result *res, diag *d)
{
	uint32_t *ident = malloc((cfg->fabric.nodes ? cfg->fabric.nodes : 1) * sizeof *ident);
	const uint32_t *map = ident;
	int rc;
	if (!ident)
		return SIM_ENOMEM;
	for (uint32_t n = 0; n < cfg->fabric.nodes; n++)
		ident[n] = n;
	rc = train_sim_multi(&cfg, &map, 1, cfg->fabric.nodes, res, d);
	free(ident);
	return rc;
}

void train_result_release(train_result *res)
{
	free(res->iter_s);
	res->iter_s = NULL;
}
