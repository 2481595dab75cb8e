/* dpusim plan: the fastest parallel layout of a scenario's training job that
 * fits in GPU memory, per offload variant. Every layout (tp, pp, dp,
 * microbatch, ZeRO stage, recomputation, virtual stages, sequence and
 * context parallelism) of the job on each node count is
 * checked against GPU memory (wl_gpu_memory) and timed by a closed-form
 * estimate under each variant (plan_estimate, below); each variant's
 * fastest estimates, in turn, are the finalists (rank_layouts), each
 * simulated with the real model (run_scenario, every variant) from the
 * scenario with its layout merged over it (extends:), so a finalist passes
 * the same checks a scenario file would. docs/plan.md. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "models/diag.h"
#include "models/gpu.h"
#include "models/profile.h"
#include "models/scenario.h"
#include "models/setup.h"
#include "models/tp_overlap.h"
#include "models/train.h"
#include "models/workload.h"
#include "sim/alloc.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tools/forks.h"
#include "tools/commands.h"
#include "report/db.h"
#include "report/report.h"
#include "tools/human.h"
#include "tools/progress.h"
#include "tools/sweep_eta.h"
#include "tools/run.h"
#include "tools/scn_cli.h"

/* PLAN_MORE: without --finalists, at most this many finalists in all (the
 * default 8 and those estimated under a variant's best simulated
 * iteration, plan_more). */
enum { PLAN_MAX_NODES = 32, PLAN_MAX_CANDS = 200000, PLAN_MORE = 64 };

typedef struct plan_opts {
	scn_cli c;
	int nodes[PLAN_MAX_NODES];
	size_t nnodes;
	long global_batch;   /* 0: the scenario's */
	long top;            /* rows per variant */
	long finalists;      /* layouts simulated (at first, without --finalists) */
	long jobs;           /* finalists simulated at once, each in a process */
	bool finalists_set;  /* --finalists given: exactly that many */
	const char *db_path;
	bool keep_vp, keep_sp, keep_cp; /* --keep: the scenario's, not varied */
} plan_opts;

typedef struct cand {
	int nodes, tp, pp, dp, mb, zero, vp, cp;
	bool recompute, sp;
	double mem_bytes;
	double est_s;                       /* the least of est_v */
	double est_v[SCN_MAX_VARIANTS];     /* the estimate under each variant */
	uint32_t rank_v[SCN_MAX_VARIANTS];  /* its place in each variant's order of the
					       layouts that fit (from 1) */
	uint32_t rank;                      /* the least of rank_v */
} cand;

typedef struct cand_list {
	cand *v;
	size_t n, cap;
	size_t tried, too_big;  /* layouts tried, and refused for memory */
	double least_mem;       /* the smallest need of those refused */
} cand_list;

/* One finalist's simulated figures under one variant. */
typedef struct plan_row {
	const cand *c;
	double iter_s, tokens_s, mfu, tokens_usd;
} plan_row;

/* ---- options ---- */

static int parse_long(const char *opt, const char *s, long lo, long hi, long *out)
{
	unsigned long long x;
	if (!s || !cli_parse_u64(s, &x) || (long long)x < lo || (long long)x > hi)
		return cli_usage_error("plan: %s needs a whole number from %ld to %ld (got '%s')",
				       opt, lo, hi, s ? s : "nothing");
	*out = (long)x;
	return CLI_OK;
}

/* --nodes N, A-B (A, 2A, 4A... up to B, and B) or N,M,... */
static int parse_nodes(const char *s, plan_opts *o)
{
	char buf[256], *save = NULL;
	long a = 0, b = 0;
	if (!s || strlen(s) >= sizeof buf)
		return cli_usage_error("plan: --nodes needs N, A-B or N,M,... (got '%s')", s ? s : "nothing");
	strcpy(buf, s);
	char *dash = strchr(buf, '-');
	if (dash) {
		*dash = 0;
		if (parse_long("--nodes", buf, 1, 1 << 20, &a) || parse_long("--nodes", dash + 1, 1, 1 << 20, &b))
			return CLI_USAGE;
		if (b < a)
			return cli_usage_error("plan: --nodes %s: the range runs backwards", s);
		for (long n = a; n <= b && o->nnodes < PLAN_MAX_NODES; n *= 2)
			o->nodes[o->nnodes++] = (int)n;
		if (o->nodes[o->nnodes - 1] != b && o->nnodes < PLAN_MAX_NODES)
			o->nodes[o->nnodes++] = (int)b;
		return CLI_OK;
	}
	if (cli_list_has_empty(s))
		return cli_usage_error("plan: --nodes '%s' has an empty item (expected N, A-B or N,M,...)", s);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (o->nnodes == PLAN_MAX_NODES)
			return cli_usage_error("plan: --nodes: at most %d node counts", PLAN_MAX_NODES);
		if (parse_long("--nodes", t, 1, 1 << 20, &a))
			return CLI_USAGE;
		o->nodes[o->nnodes++] = (int)a;
	}
	return o->nnodes ? CLI_OK : cli_usage_error("plan: --nodes is empty");
}

/* --keep vp,sp,cp: the scenario's virtual stages, sequence parallelism or
 * context parallelism, kept as it has them instead of varied (each also by
 * its scenario key's name). */
static int parse_keep(const char *s, plan_opts *o)
{
	char buf[256];
	if (!s || !*s || strlen(s) >= sizeof buf)
		return cli_usage_error("plan: --keep needs a list of vp, sp and cp (got '%s')",
				       s ? s : "nothing");
	strcpy(buf, s);
	/* strsep, not strtok: an empty name ("vp,", ",") is an error, not skipped */
	for (char *rest = buf, *t; (t = strsep(&rest, ",")) != NULL;) {
		if (!strcmp(t, "vp") || !strcmp(t, "virtual_stages"))
			o->keep_vp = true;
		else if (!strcmp(t, "sp") || !strcmp(t, "sequence_parallel"))
			o->keep_sp = true;
		else if (!strcmp(t, "cp"))
			o->keep_cp = true;
		else
			return cli_usage_error("plan: --keep %s: unknown name '%s' (expected vp, sp or "
					       "cp, comma-separated)", s, t);
	}
	return CLI_OK;
}

static int parse_opts(int argc, char **argv, plan_opts *o)
{
	*o = (plan_opts){ .top = 5, .finalists = 8, .jobs = 1 };
	for (int i = 1; i < argc; i++) {
		int taken = scn_cli_option(&o->c, argc, argv, &i), rc = CLI_OK;
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (taken < 0)
			return CLI_USAGE;
		if (taken)
			continue;
		if (!strcmp(a, "--nodes"))
			rc = parse_nodes(val, o), i++;
		else if (!strcmp(a, "--global-batch"))
			rc = parse_long(a, val, 1, INT_MAX, &o->global_batch), i++;
		else if (!strcmp(a, "--top"))
			rc = parse_long(a, val, 1, 1000, &o->top), i++;
		else if (!strcmp(a, "--finalists"))
			rc = parse_long(a, val, 1, 100000, &o->finalists), o->finalists_set = true, i++;
		else if (!strcmp(a, "--keep"))
			rc = parse_keep(val, o), i++;
		else if (!strcmp(a, "--jobs"))
			rc = parse_long(a, val, 1, 1024, &o->jobs), i++;
		else if (!strcmp(a, "--db")) {
			if (!val)
				return cli_usage_error("plan: --db needs a file name");
			o->db_path = val, i++;
		} else if (a[0] == '-' && a[1])
			return cli_usage_error("plan: unknown option '%s' (see 'dpusim plan --help')", a);
		else if (o->c.file)
			return cli_usage_error("plan: one scenario file at a time ('%s' and '%s')", o->c.file, a);
		else
			o->c.file = a;
		if (rc)
			return rc;
	}
	if (!o->c.file)
		return cli_usage_error("plan: no scenario file given (usage: dpusim plan FILE [options])");
	return CLI_OK;
}

/* ---- the closed-form estimate ---- */

/* Tensor- and context-parallel collective times already simulated
 * (group_op_s), by operation, group and bytes. */
typedef struct op_memo {
	struct op_time { coll_op op; uint32_t tp, cp; double bytes, s; } *v;
	size_t n, cap;
} op_memo;

/* What the estimate sees of the fabric under one variant: the scenario as
 * the variant sees it, the payload rate of one link, its link_rate x the
 * share the variant's packet headers leave (setup_payload_frac, as
 * setup_fabric builds the simulated links), and the caps the variant's
 * transport puts on traffic that leaves a node, as train_config_of gives
 * them to the simulation: one connection's (host-tcp: the cores its NCCL
 * socket threads run on; RDMA with a host cost per byte), and the node's
 * host stack, DPU engines and host memory on its traffic in and out (the
 * memory's rate over the times each byte crosses it at an end of the
 * variant's transport, fab_end_mem_passes: 4 through a kernel socket, 1
 * from host buffers, 0 with GPUDirect). */
typedef struct plan_net {
	const scn_scenario *s;
	double link_Bps;
	double conn_Bps;    /* 0: no cap per connection */
	double node_Bps;    /* 0: no cap per node */
	train_config cfg;   /* the variant's configuration as the simulation builds it
			     * (train_config_of): its fabric and collectives for
			     * ring_channels, the whole for group_op_s */
	op_memo *memo;
} plan_net;

/* Seconds stage p's GPU computes in one iteration of m microbatches, as
 * models/train.c times a pass (op_base_s): per microbatch its layers'
 * forward and backward, the forward again with recomputation, and on the
 * last stage the logits', on the first the token embedding's (gpu_layer_s,
 * gpu_logits_s, gpu_embedding_s: each GEMM on the
 * roofline at eff_max with tile quantization, the memory-bound kernels at
 * HBM's rate, split as the layout splits them: tp, sequence parallelism
 * along the sequence, cp's s/cp tokens, FlashAttention's fused kernel).
 * A vision model: one block of forward FLOPs at eff_max, backward twice. */
static double stage_compute_s(const gpu_spec *g, const scn_training *t, const cand *c, int p,
			      int m)
{
	const wl_model *wm = &t->shape;
	wl_split sp = { .tp = (uint32_t)c->tp, .cp = (uint32_t)c->cp, .sp = c->sp,
			.flash = t->flash, .cp_ring = t->cp_p2p, .wgrad_fused = t->wgrad_fused };
	double f, b, lf = 0, lb = 0;
	if (wm->kind == WL_TRANSFORMER) {
		gpu_layer_s(g, &wm->tf, (uint32_t)c->mb, &sp, &f, &b);
		if (p == c->pp - 1)
			gpu_logits_s(g, &wm->tf, (uint32_t)c->mb, &sp, &lf, &lb);
		if (p == 0) { /* the token embedding and its dense gradient */
			double ef, eb;
			gpu_embedding_s(g, &wm->tf, (uint32_t)c->mb, &sp, &ef, &eb);
			lf += ef, lb += eb;
		}
	} else { /* build_compute's: the network as one block at eff_max */
		f = c->mb * wm->vis.fwd_flops_per_sample / (g->peak_flops * g->eff_max);
		b = 2 * f;
	}
	return m * (wl_stage_layers(wm, (uint32_t)c->pp, (uint32_t)p) * (f + b + (c->recompute ? f : 0)) +
		    lf + lb);
}

/* The members a ring of `members` ranks `stride` apart (from rank 0) has
 * on each node, as coll.c's view_new finds them: its first node's, where
 * every node holds that many in a row; else 1 (it takes the ring as
 * crossing a node at every member). */
static long members_per_node(long gpn, long stride, long members)
{
	long g = stride <= gpn && gpn % stride == 0 ? gpn / stride : 1;
	g = g < members ? g : members;
	return g > 0 && members % g == 0 ? g : 1;
}

/* The connections (NCCL channels) a ring of `members` ranks with g on each
 * node runs on across nodes: the simulation's own count
 * (coll_ring_channels, as coll.c's view_new gives a group its channels). */
static double ring_channels(const plan_net *n, long g, long members)
{
	return coll_ring_channels(&n->cfg.fabric, &n->cfg.coll, (uint32_t)g, (uint32_t)(members / g));
}

/* Bytes per second a group moves between its members, its ranks spanning
 * `span` consecutive ranks in Megatron's order (train_rank: tensor,
 * context, data, pipeline): NVLink when they lie inside one node. Across nodes, point to
 * point (ring false) one GPU's share of its node's NICs; a ring, as NCCL
 * lays it out (a node's members in a row, one ring per NIC), crosses each
 * node once per ring, so the node's NICs serve the `side` groups that run
 * side by side there (at most the GPUs per node), up to NVLink's rate;
 * a link carries payload at n->link_Bps (plan_net). A ring also pays the
 * variant's caps, as the simulation puts them on what leaves a node: it
 * runs on ring_channels(g, members) connections of at most n->conn_Bps
 * each (g of its members on each node, `members` in all; g not read
 * point to point), and the groups side by side share the node's cap on
 * its traffic, each sending and receiving what it moves. A pipeline send
 * (point to point, `members` the pipeline's stages) runs on the
 * connections NCCL gives it (train_pipe_conns, as send_between caps it),
 * and the node's GPUs send theirs at once (its
 * tensor ranks and the replicas of its stage run in lock step), sharing
 * the node's cap one way: the sends that wait in line are the warm-up's
 * forwards and the cool-down's backwards (pipe_waits), not both at once. */
static double group_Bps(const plan_net *n, long span, long side, long g, long members,
			bool ring)
{
	const scn_cluster *cl = &n->s->cluster;
	double link = n->link_Bps, nvl = cl->gpu.v.gpu.nvlink_bw_Bps;
	double node = link * cl->nics_per_node, gpn = cl->gpus_per_node;
	double sharing = ring ? fmin(gpn, (double)side) : gpn;
	double Bps = node / sharing;
	if (span <= cl->gpus_per_node && nvl > 0)
		return nvl;
	Bps = fmin(Bps, ring ? node : link);
	if (n->conn_Bps > 0)
		Bps = fmin(Bps, n->conn_Bps * (ring ? ring_channels(n, g, members)
						      : train_pipe_conns(&n->cfg, (uint32_t)members)));
	if (n->node_Bps > 0)
		Bps = fmin(Bps, n->node_Bps / ((ring ? 2 : 1) * sharing));
	return nvl > 0 ? fmin(Bps, nvl) : Bps;
}

/* Data-parallel groups (one per tensor rank and stage, each of dp x cp
 * members) with a member on one node: the tensor ranks and the stages of
 * the node's first GPUs (train_rank's order: a stage's replicas follow one
 * another, so a node holds more than one stage only when a stage's
 * tp x cp x dp GPUs fit in it several times). */
static long dp_groups_per_node(const scn_scenario *s, const cand *c)
{
	long gpn = s->cluster.gpus_per_node, tc = (long)c->tp * c->cp;
	long block = (long)train_rank((uint32_t)c->dp, (uint32_t)tc, 0, 1, 0);
	long stages = (gpn + block - 1) / block;
	return (c->tp < gpn ? c->tp : gpn) * (c->pp < stages ? c->pp : stages);
}

/* The ranks a group spans, from its first member (rank 0) to its last:
 * stage 0 to pp - 1 of replica 0 (pipeline), replica 0 to dp - 1 of
 * stage 0 (data parallel). */
static long pp_span(const cand *c)
{
	uint32_t tc = (uint32_t)(c->tp * c->cp);
	return (long)train_rank((uint32_t)c->dp, tc, 0, (uint32_t)c->pp - 1, tc - 1) + 1;
}

static long dp_span(const cand *c)
{
	uint32_t tc = (uint32_t)(c->tp * c->cp);
	return (long)train_rank((uint32_t)c->dp, tc, (uint32_t)c->dp - 1, 0, tc - 1) + 1;
}

/* Exposed seconds of the data-parallel traffic of a stage with `params`
 * parameters per GPU (gradients of scn_grad_bytes, all-gathered weights
 * of scn_param_bytes) whose last microbatch's backward
 * takes bwd_s, as the simulation schedules it (models/train.c, dp_chain):
 * the gradients are reduced over the R = dp x cp ranks holding the same
 * weights (context ranks too, as alloc_groups lays the group out); the
 * all-reduce (ring 2(R-1)/R of the bytes) runs in buckets behind
 * that backward, hidden but for what outlasts it and at least its last
 * bucket; ZeRO 1 and 2 run a reduce-scatter there (half of it) and an
 * all-gather, exposed, after the optimizer step; ZeRO 3 the backward's
 * all-gather and the reduce-scatter there and the all-gather after, 3
 * against 2 model sizes per step (Rajbhandari et al., "ZeRO", SC 2020,
 * section 7.2). With v virtual stages a stage's gradients come in v
 * pieces, each as its chunk's last backward ends (train.c, grads_ready),
 * so the pieces of the chunks that finish first run behind the later
 * chunks' backward passes. Megatron-LM 2021-22's engines run it all after
 * that backward (wl_engine_reduces_after_backward). */
static double dp_exposed_s(const scn_training *t, const cand *c, double params, double Bps,
			   double bwd_s)
{
	double R = (double)c->dp * c->cp, bytes = params / c->tp * scn_grad_bytes(t);
	double ar = 2.0 * (R - 1) / R * bytes / Bps;
	double k = t->bucket_bytes > 0 ? ceil(bytes / t->bucket_bytes) : 1;
	double nb = k < 1 ? 1 : k > TRAIN_MAX_BUCKETS ? TRAIN_MAX_BUCKETS : k;
	double gather = ar / 2 * scn_param_bytes(t) / scn_grad_bytes(t); /* weights, not gradients */
	double slot = c->zero == 0 ? ar : c->zero == 3 ? ar / 2 + gather : ar / 2;
	double after = c->zero ? gather : 0;
	if (wl_engine_reduces_after_backward(t->engine)) /* none behind the backward */
		return slot + after;
	/* v chunks' pieces in the order their last backward ends (1 / v of
	 * bwd_s each, pp backward passes apart: the interleaved schedule's
	 * cool-down takes each chunk through a group of pp microbatches,
	 * wl_interleaved_op), relative to the end of the last one; each piece
	 * waits for the one before it */
	double piece = slot / c->vp, pass_s = bwd_s / c->vp, end_s = -INFINITY;
	for (int j = c->vp - 1; j >= 0; j--)
		end_s = fmax(end_s, -j * c->pp * pass_s - pass_s) + piece;
	return fmax(slot / nb, end_s) + after;
}

/* Seconds of one iteration, closed form, for ranking only (the finalists'
 * figures are simulated), with the formulas models/train.c simulates: the
 * busiest stage's FLOPs at eff_max of peak, each context rank running 1/cp
 * of every GEMM (its s/cp tokens' queries against all s keys), stretched by
 * the pipeline bubble, (pp - 1) / (m v) of the work with v virtual stages
 * per rank (Narayanan et al., SC21, sections 2.2.1-2.2.2; v = 1 is plain
 * 1F1B's (m + pp - 1) / m), plus, not overlapped: per microbatch the
 * tensor-parallel collectives (layer_tp_s) and the context-parallel K/V
 * collectives (layer_cp_s), the stage-boundary sends that the pipeline
 * waits for (pipe_waits), and what the data-parallel traffic
 * leaves exposed (dp_exposed_s), each over NVLink where its group lies
 * inside a node, else over the GPU's share of the node's NICs under the
 * variant's caps (group_Bps, plan_net). */
/* Seconds of collective op of `bytes` as the simulation times a layer's
 * (NCCL's channels, protocols and latencies where the scenario's
 * collectives take NCCL's cost model), each simulated once per variant:
 * cp 0, over tp GPUs of a node (train_tp_coll_s, on an idle node); else
 * over cp context ranks tp apart, the tp rings of a stage at once
 * (train_cp_coll_s, on the stage's own nodes under the variant's
 * transport). INFINITY where it cannot be timed (out of memory, or a rate
 * past the simulation's clock: the layout's own simulation says which),
 * so the layout is ranked last. */
static double group_op_s(const plan_net *n, coll_op op, uint32_t tp, uint32_t cp, double bytes)
{
	op_memo *m = n->memo;
	double s;
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].op == op && m->v[i].tp == tp && m->v[i].cp == cp &&
		    m->v[i].bytes == bytes)
			return m->v[i].s;
	if (cp ? train_cp_coll_s(&n->cfg, tp, cp, op, bytes, &s)
	       : train_tp_coll_s(&n->cfg, tp, op, bytes, &s))
		return INFINITY;
	if (!sim_grow(&m->v, &m->cap, m->n + 1, sizeof *m->v, 64))
		m->v[m->n++] = (struct op_time){ .op = op, .tp = tp, .cp = cp, .bytes = bytes,
						 .s = s };
	return s;
}

static double tp_op_s(const plan_net *n, coll_op op, uint32_t tp, double bytes)
{
	return group_op_s(n, op, tp, 0, bytes);
}

/* One layer's tensor-parallel collectives for one microbatch whose
 * [s/cp, b, h] stream is act bytes, as the simulation's build_compute
 * runs them: 4 a layer (2 forward, 2 backward), 6 with recomputation,
 * which repeats the forward's 2 in the backward; each an all-reduce or,
 * with sequence parallelism, a reduce-scatter and an all-gather of the
 * same bytes (Korthikanti et al., MLSys 2023, section 4.2.2). The single
 * ops' times into *ar, *rs and *ag (0 where not run); their sum for the
 * layer returned. */
static double layer_tp_s(const plan_net *n, const cand *c, double act, double *ar, double *rs,
			 double *ag)
{
	*ar = *rs = *ag = 0;
	if (c->tp < 2)
		return 0;
	if (c->sp) {
		*rs = tp_op_s(n, COLL_REDUCE_SCATTER, (uint32_t)c->tp, act);
		*ag = tp_op_s(n, COLL_ALLGATHER, (uint32_t)c->tp, act);
	} else {
		*ar = tp_op_s(n, COLL_ALLREDUCE, (uint32_t)c->tp, act);
	}
	return (c->recompute ? 6 : 4) * (*ar + *rs + *ag);
}

/* One layer's context-parallel collectives for one microbatch, not
 * overlapped (models/train.c, build_compute: as Llama 3 trains, Dubey et
 * al. 2024, section 3.3.2): the forward all-gathers the layer's keys and
 * values (wl_layer_kv_bytes, each tensor rank its 1/tp) over the cp ranks,
 * the backward reduce-scatters their gradients, and recomputation gathers
 * again; each at the simulation's time for it (group_op_s), the all-gather
 * into *ag. */
static double layer_cp_s(const plan_net *n, const wl_transformer *tf, const cand *c, double *ag)
{
	double kv = wl_layer_kv_bytes(tf, (uint32_t)c->mb) / c->tp;
	*ag = 0;
	if (c->cp < 2)
		return 0;
	*ag = group_op_s(n, COLL_ALLGATHER, (uint32_t)c->tp, (uint32_t)c->cp, kv);
	return *ag * (1 + c->recompute) +
	       group_op_s(n, COLL_REDUCE_SCATTER, (uint32_t)c->tp, (uint32_t)c->cp, kv);
}

/* One layer's exposed tensor- and context-parallel seconds for one
 * microbatch (forward, backward, the forward again with recomputation)
 * where the scenario overlaps them as the simulation does (train.c:
 * tp_comm_overlap through tp_overlap_layer, cp_comm_type p2p through
 * cp_overlap_layer), with the simulation's collective times (group_op_s;
 * a pipeline chunk the reduce-scatter of its quarter, a ring step
 * 1 / (cp - 1) of the all-gather) and the GEMM and attention times the
 * simulation uses; the SMs the chunked reduce-scatters take are added to
 * *extra_s (compute per microbatch and layer). An FP8 job with sequence
 * parallelism and no userbuffers runs Transformer Engine's own overlaps
 * (tp_te_layer); with userbuffers its ring exchanges move FP8. Otherwise
 * an engine with Megatron-LM's asynchronous backward collectives
 * (tp_backward_overlap) runs tp_async_layer. Where no overlap applies:
 * layer_tp_s + layer_cp_s, and *extra_s 0. */
static double layer_comm_s(const plan_net *n, const gpu_spec *g, const scn_training *t,
			   const cand *c, double act, double *extra_s)
{
	const wl_transformer *tf = &t->shape.tf;
	double ar, rs, ag, tp_s = layer_tp_s(n, c, act, &ar, &rs, &ag), cp_ag;
	double cp_s = layer_cp_s(n, tf, c, &cp_ag);
	double again = c->recompute ? 1 : 0, f, b;
	uint32_t tp = (uint32_t)c->tp;
	wl_split sp = { .tp = (uint32_t)c->tp, .cp = (uint32_t)c->cp, .sp = c->sp,
			.flash = t->flash, .cp_ring = t->cp_p2p, .wgrad_fused = t->wgrad_fused };
	/* Transformer Engine under FP8 gathers FP8, half the bytes (train.c,
	 * build_compute) */
	bool te8 = g->fp8_cast && c->sp && c->tp > 1 && tp_s > 0;
	double ag8 = te8 ? tp_op_s(n, COLL_ALLGATHER, tp, act / 2) : 0;
	*extra_s = 0;
	if (t->tp_overlap && c->tp > 1 && tp_s > 0) {
		double chunk = act / TP_OVERLAP_SPLITS / (t->ub_fp8_rs ? 2 : 1);
		tp_overlap_in in = { .tp = tp, .splits = TP_OVERLAP_SPLITS, .ag_s = ag, .rs_s = rs,
				     .ag_in_s = ag8,
				     .rs_split_s = tp_op_s(n, COLL_REDUCE_SCATTER, tp, chunk) };
		tp_overlap_out o;
		tp_overlap_gemms(g, tf, (uint32_t)c->mb, &sp, (uint32_t)t->ub_proj_sms,
				 (uint32_t)t->ub_fc2_sms, &in);
		tp_overlap_layer(&in, &o);
		tp_s = o.fwd_comm_s * (1 + again) + o.bwd_comm_s;
		*extra_s = o.fwd_extra_s * (1 + again);
	} else if (te8 || (t->tp_bwd_overlap && c->tp > 1 && tp_s > 0)) {
		/* the layers' own asynchronous backward collectives, FP8 gathers
		 * under Transformer Engine's FP8 (tp_async_layer, as train.c's
		 * tp_async) */
		tp_overlap_in in = { .tp = tp, .ag_s = ag, .rs_s = c->sp ? rs : ar, .ag_in_s = ag8,
				     .ar_s = c->sp ? 0 : ar };
		tp_overlap_out o;
		double cut[GPU_LINEAR_N];
		gpu_linear_gemms_s(g, tf, (uint32_t)c->mb, &sp, 0, in.gemm, cut);
		tp_async_layer(&in, &o);
		tp_s = o.fwd_comm_s * (1 + again) + o.bwd_comm_s;
	}
	if (t->cp_p2p && c->cp > 1 && cp_s > 0) {
		double step = cp_ag / (c->cp - 1); /* one rank's K and V to its neighbour */
		gpu_attention_s(g, tf, (uint32_t)c->mb, &sp, &f, &b);
		cp_overlap_layer((uint32_t)c->cp, step, f, b, &f, &b);
		cp_s = f * (1 + again) + b;
	}
	return tp_s + cp_s;
}

/* The stage-boundary sends a pipeline waits for in an iteration of m
 * microbatches, as the simulation runs Megatron's schedules (train.c: a
 * send flows while its rank goes on, and a pass waits for its input).
 * Plain 1F1B's steady state has no slack: a stage's next backward needs
 * the gradient of a microbatch that went on through every later stage,
 * so each forward and backward of a microbatch waits for a send, 2 m.
 * The interleaved schedule (v chunks) takes groups of pp microbatches
 * through each chunk in turn: in rank 0's warm-up the group's next chunk
 * needs its first microbatch back from around the pipeline (pp passes
 * and pp sends) while the rank has only the group's other pp - 1 passes
 * to run, so each warm-up forward waits for about one send, and each
 * cool-down backward likewise; in the steady state a forward and a
 * backward of other microbatches run while a send is in flight. So 2 W,
 * W rank 0's warm-up forwards (wl_pipe_warmup: 2 (pp - 1) + (v - 1) pp,
 * at most m v). */
static double pipe_waits(const cand *c, int m)
{
	if (c->vp == 1)
		return 2.0 * m;
	return 2.0 * wl_pipe_warmup((uint32_t)c->pp, (uint32_t)c->vp, (uint32_t)m, 0);
}

static double plan_estimate(const plan_net *n, const gpu_spec *g, const scn_training *t,
			    const cand *c, int m)
{
	const wl_model *wm = &t->shape;
	double comp = 0, params = 0, mv = (double)m * c->vp;
	long R = (long)c->dp * c->cp; /* the gradients' group: every replica's context ranks */
	double pp_Bps = group_Bps(n, pp_span(c), 1, 1, c->pp, false); /* point to point */
	double dp_Bps = group_Bps(n, dp_span(c), dp_groups_per_node(n->s, c),
				  members_per_node(n->s->cluster.gpus_per_node, c->tp, R), R, true);
	for (int p = 0; p < c->pp; p++) {
		comp = fmax(comp, stage_compute_s(g, t, c, p, m));
		params = fmax(params, wl_stage_params(wm, (uint32_t)c->pp, (uint32_t)p));
	}
	double T = comp * (1 + (c->pp - 1) / mv);
	if (wm->kind == WL_TRANSFORMER) {
		/* each context rank's s/cp of the sequence */
		double act = wl_stage_boundary_bytes(&wm->tf, (uint32_t)c->mb) / c->cp;
		double layers = wl_stage_layers(wm, (uint32_t)c->pp, 0);
		double extra, comm = layer_comm_s(n, g, t, c, act, &extra);
		T += layers * m * (comm + extra * (1 + (c->pp - 1) / mv));
		if (c->pp > 1 && pp_Bps > 0)
			T += pipe_waits(c, m) * act / c->tp / pp_Bps;
	}
	/* The last microbatch's backward: 2 of a pass's 3 forward-equivalents,
	 * 3 of 4 with recomputation. */
	if ((long)c->dp * c->cp > 1 && dp_Bps > 0)
		T += dp_exposed_s(t, c, params, dp_Bps, comp / m * (c->recompute ? 0.75 : 2.0 / 3));
	return T;
}

/* ---- candidates ---- */

static int cand_add(cand_list *l, const cand *c)
{
	if (sim_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v, 256))
		return SIM_ENOMEM;
	l->v[l->n++] = *c;
	return SIM_OK;
}

/* The layouts of one node count, and where the kept ones go. */
typedef struct space {
	const plan_opts *o;
	const scn_scenario *s;
	const scn_training *t;
	const gpu_spec *gpu;    /* the job's GPU, as the simulation times it */
	const plan_net *net;    /* its fabric under each variant, as the estimate sees it */
	int nodes;
	long global;
	cand_list *l;
} space;

/* Layout c (all but ZeRO and recomputation set; m microbatches per
 * pipeline) under ZeRO 0-3 (only 0 without data parallelism: dp x cp
 * ranks holding the same weights) and recomputation off and on: those that
 * fit in GPU memory (wl_gpu_memory through the loader's own plan,
 * scn_mem_plan) join the list with their estimates. */
static int add_states(const space *sp, cand c, int m)
{
	const scn_training *t = sp->t;
	double hbm = sp->s->cluster.gpu.v.gpu.hbm_bytes;
	for (int z = 0; z <= ((long)c.dp * c.cp > 1 ? 3 : 0); z++)
		for (int r = 0; r < 2; r++) {
			/* only what the scenario's pipeline engine runs (the loader's check) */
			if (wl_engine_fault(t->engine, (uint32_t)c.pp, (uint32_t)c.vp, c.sp,
					    (uint32_t)c.cp, (uint32_t)z, t->tp_overlap))
				continue;
			/* userbuffers overlap only the sequence-parallel collectives */
			if (wl_tp_overlap_fault(t->tp_overlap, (uint32_t)c.tp, c.sp))
				continue;
			scn_layout lay = { .tp = c.tp, .pp = c.pp, .dp = c.dp, .micro_batch = c.mb,
					   .global_batch = sp->global, .zero_stage = z, .recompute = r,
					   .vp = c.vp, .sp = c.sp, .cp = c.cp };
			wl_mem_plan mp = scn_mem_plan(&sp->s->cluster, t, &lay);
			wl_memory mem;
			wl_gpu_memory(&t->shape, &mp, &mem);
			sp->l->tried++;
			c.zero = z, c.recompute = r, c.mem_bytes = mem.total;
			if (hbm > 0 && mem.total > hbm) {
				sp->l->too_big++;
				sp->l->least_mem = fmin(sp->l->least_mem, mem.total);
				continue;
			}
			c.est_s = INFINITY;
			for (size_t v = 0; v < sp->s->nvariants; v++) {
				c.est_v[v] = plan_estimate(&sp->net[v], sp->gpu, t, &c, m);
				c.est_s = fmin(c.est_s, c.est_v[v]);
			}
			if (sp->l->n >= PLAN_MAX_CANDS || cand_add(sp->l, &c))
				return SIM_ENOMEM;
		}
	return SIM_OK;
}

/* Sequence parallelism off and on where there is tensor parallelism to
 * split the sequence over (tp > 1; the scenario's with --keep sp). */
static int add_sequence(const space *sp, cand c, int m)
{
	int rc = SIM_OK;
	if (c.tp < 2 || sp->o->keep_sp) {
		c.sp = c.tp > 1 && sp->t->sp;
		return add_states(sp, c, m);
	}
	for (int on = 0; on < 2 && !rc; on++)
		c.sp = on, rc = add_states(sp, c, m);
	return rc;
}

/* Virtual stages per pipeline rank: 1, 2, 4... while Megatron's
 * interleaved schedule can run them (wl_interleave_faults, the loader's
 * check: a pipeline, the layers of a stage a multiple of v, the
 * microbatches of pp); with --keep vp the scenario's where there is a
 * pipeline (1 without: nothing to interleave), the layout left out where
 * that check refuses it. */
static int add_interleavings(const space *sp, cand c, int m)
{
	const wl_model *wm = &sp->t->shape;
	int rc = SIM_OK;
	if (sp->o->keep_vp) {
		c.vp = c.pp > 1 && sp->t->vp > 1 ? sp->t->vp : 1;
		if (wl_interleave_faults(wm, (uint32_t)c.pp, (uint32_t)c.vp, (uint32_t)m))
			return SIM_OK;
		return add_sequence(sp, c, m);
	}
	for (uint32_t v = 1; !rc && (v == 1 || !wl_interleave_faults(wm, (uint32_t)c.pp, v,
								      (uint32_t)m)); v *= 2)
		c.vp = (int)v, rc = add_sequence(sp, c, m);
	return rc;
}

/* Every layout on sp->nodes nodes with cp from cp_lo to cp_hi (powers of
 * two splitting the sequence, wl_cp_splits_seq): tp a power of two within
 * a node dividing the heads, pp a power of two up to the layers, dp what
 * is left, mb a power of two dividing the per-replica batch, and below
 * them the virtual stages, sequence parallelism, ZeRO and recomputation. */
static int enumerate(const space *sp, int cp_lo, int cp_hi)
{
	const wl_model *wm = &sp->t->shape;
	int gpus = sp->nodes * sp->s->cluster.gpus_per_node, rc = SIM_OK;
	uint32_t layers = wm->kind == WL_TRANSFORMER ? wm->tf.layers : 1;
	uint32_t heads = wm->kind == WL_TRANSFORMER ? wm->tf.heads : 1;
	for (int tp = 1; tp <= sp->s->cluster.gpus_per_node && !rc; tp *= 2) {
		if (heads % (uint32_t)tp)
			continue;
		for (long cp = cp_lo; cp <= cp_hi && tp * cp <= gpus && !rc; cp *= 2) {
			if (wm->kind == WL_TRANSFORMER && !wl_cp_splits_seq(&wm->tf, (uint32_t)cp))
				break;
			for (long pp = 1; (uint32_t)pp <= layers && tp * cp * pp <= gpus && !rc; pp *= 2) {
				if (gpus % (tp * cp * pp))
					continue;
				int dp = (int)(gpus / (tp * cp * pp));
				for (int mb = 1; mb <= 64 && !rc; mb *= 2) {
					if (sp->global % ((long)dp * mb))
						continue;
					cand c = { .nodes = sp->nodes, .tp = tp, .pp = (int)pp, .dp = dp,
						   .mb = mb, .cp = (int)cp };
					rc = add_interleavings(sp, c, (int)(sp->global / ((long)dp * mb)));
				}
			}
		}
	}
	return rc;
}

/* The layouts of one node count. cp: the scenario's with --keep cp (and
 * for a vision model, which trains data parallel only); with
 * FlashAttention every power of two; with unfused attention only where
 * nothing fits without it (Megatron-Core runs context parallelism on
 * fused attention kernels; unfused, it is the last resort of a sequence
 * whose scores do not fit). */
static int enumerate_nodes(const space *sp)
{
	const scn_training *t = sp->t;
	size_t before = sp->l->n;
	int rc;
	if (sp->o->keep_cp || t->shape.kind != WL_TRANSFORMER)
		return enumerate(sp, t->cp > 1 ? t->cp : 1, t->cp > 1 ? t->cp : 1);
	if (t->flash)
		return enumerate(sp, 1, INT_MAX / 2);
	rc = enumerate(sp, 1, 1);
	if (!rc && sp->l->n == before)
		rc = enumerate(sp, 2, INT_MAX / 2);
	return rc;
}

/* Variant by_variant_v's order of the layouts (qsort has no context). */
static size_t by_variant_v;
static const cand *by_variant_l;

static int by_variant(const void *a, const void *b)
{
	const cand *x = &by_variant_l[*(const uint32_t *)a], *y = &by_variant_l[*(const uint32_t *)b];
	double ex = x->est_v[by_variant_v], ey = y->est_v[by_variant_v];
	if (ex != ey)
		return (ex > ey) - (ex < ey);
	return (x->mem_bytes > y->mem_bytes) - (x->mem_bytes < y->mem_bytes);
}

/* The finalists' order: every variant's fastest estimate, then every
 * one's second, and so on (a layout's best place under any variant, then
 * its least estimate, then its memory), so that each variant's own best
 * estimates are simulated, whatever the others' say. */
static int by_rank(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	if (x->est_s != y->est_s)
		return (x->est_s > y->est_s) - (x->est_s < y->est_s);
	return (x->mem_bytes > y->mem_bytes) - (x->mem_bytes < y->mem_bytes);
}

/* Each layout's place in each variant's order of estimates, then the list
 * in the finalists' order (by_rank). */
static int rank_layouts(cand_list *l, size_t nvariants)
{
	uint32_t *idx = malloc((l->n ? l->n : 1) * sizeof *idx);
	if (!idx)
		return SIM_ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		l->v[i].rank = UINT32_MAX;
	for (size_t v = 0; v < nvariants; v++) {
		for (size_t i = 0; i < l->n; i++)
			idx[i] = (uint32_t)i;
		by_variant_v = v, by_variant_l = l->v;
		qsort(idx, l->n, sizeof *idx, by_variant);
		for (size_t k = 0; k < l->n; k++) {
			cand *c = &l->v[idx[k]];
			c->rank_v[v] = (uint32_t)k + 1;
			if (c->rank_v[v] < c->rank)
				c->rank = c->rank_v[v];
		}
	}
	free(idx);
	qsort(l->v, l->n, sizeof *l->v, by_rank);
	return SIM_OK;
}

/* ---- the finalists, simulated ---- */

/* The scenario with c's layout merged over it (extends:), one replication,
 * at most two iterations, no sweep. */
static int finalist_text(const char *abs, const scn_training *t, bool cost, const cand *c,
			 long global, char *buf, size_t n)
{
	int k = snprintf(buf, n,
			 "extends: \"%s\"\nreplications: 1\nsweep: null\ncluster: { nodes: %d }\n"
			 "workload:\n  parallelism: { tp: %d, pp: %d, dp: %d, zero_stage: %d, "
			 "virtual_stages: %d, sequence_parallel: %s, cp: %d }\n"
			 "  batch: { global: %ld, micro: %d }\n  recompute: %s\n  iterations: %d\n",
			 abs, c->nodes, c->tp, c->pp, c->dp, c->zero, c->vp, c->sp ? "true" : "false",
			 c->cp, global, c->mb,
			 c->recompute ? "true" : "false", t->iterations < 2 ? t->iterations : 2);
	/* Tokens per dollar need a training length; any will do (it cancels). */
	if (k > 0 && (size_t)k < n && cost && !(t->target_tokens > 0))
		k += snprintf(buf + k, n - (size_t)k, "  target_tokens: 1e9\n");
	return k > 0 && (size_t)k < n ? SIM_OK : SIM_EINVAL;
}

static double metric(const rep_variant *v, const char *name)
{
	double x;
	rep_stat st;
	if (rep_variant_stat(v, name, &st))
		return st.mean;
	return rep_variant_metric(v, name, &x) ? x : NAN;
}

/* Each variant's figures of finalist c's report into rows[variant]. */
static void rows_of(const rep_report *rep, const cand *c, plan_row *rows)
{
	for (size_t i = 0; i < rep_nvariants(rep); i++) {
		const rep_variant *v = rep_variant_at(rep, i);
		rows[i] = (plan_row){ .c = c, .iter_s = metric(v, "iteration_s"),
				      .tokens_s = metric(v, "tokens_per_s"), .mfu = metric(v, "mfu"),
				      .tokens_usd = metric(v, "tokens_per_usd") };
	}
}

/* Finalist c's scenario (its text in text) into *cs, messages in d. */
static int load_finalist(const plan_opts *o, const char *abs, const scn_training *t, bool cost,
			 const cand *c, long global, char *text, size_t ntext, scn_scenario **cs,
			 diag *d)
{
	scn_opts so = { .profile_dir = o->c.profile_dir, .profile_files = o->c.profiles,
			.nprofile_files = o->c.nprofiles };
	int rc = finalist_text(abs, t, cost, c, global, text, ntext);
	return rc ? rc : scn_load_buffer(o->c.file, text, strlen(text), &so, cs, d);
}

/* Simulates finalist c; its report (owned by the caller) in *out and each
 * variant's figures in rows[variant]. A layout the scenario's own checks
 * refuse is skipped (returns SIM_EINVAL, its first message in why). */
static int simulate(const plan_opts *o, const char *abs, const scn_training *t, bool cost,
		    const cand *c,
		    long global, char *text, size_t ntext, rep_report **out, plan_row *rows,
		    char *why, size_t nwhy)
{
	scn_scenario *cs = NULL;
	diag *d = diag_new();
	int rc = d ? load_finalist(o, abs, t, cost, c, global, text, ntext, &cs, d) : SIM_ENOMEM;
	if (!rc) {
		run_opts ro = { .replications = 1 };
		rc = run_scenario(cs, &ro, out, d);
	}
	if (rc) {
		sim_fit(why, nwhy, "%s", d && diag_count(d) ? diag_msg(d, 0) : "out of memory");
	} else {
		rows_of(*out, c, rows);
		char info[256];
		snprintf(info, sizeof info, "nodes %d, tp %d, pp %d, dp %d, micro %d, zero %d, "
			 "recompute %s, virtual_stages %d, sequence_parallel %s, cp %d", c->nodes, c->tp,
			 c->pp, c->dp, c->mb, c->zero, c->recompute ? "on" : "off", c->vp,
			 c->sp ? "on" : "off", c->cp);
		rc = rep_set_info(*out, "plan.layout", info);
	}
	scn_free(cs);
	diag_free(d);
	return rc;
}

static int by_iteration(const void *a, const void *b)
{
	const plan_row *x = a, *y = b;
	if (x->iter_s != y->iter_s)
		return (x->iter_s > y->iter_s) - (x->iter_s < y->iter_s);
	return (x->c->mem_bytes > y->c->mem_bytes) - (x->c->mem_bytes < y->c->mem_bytes);
}

/* The ranks of v[0..n-1], 1 for the least, ties sharing their mean rank,
 * into rank; tmp holds n entries. */
typedef struct ranked {
	double v;
	size_t i;
} ranked;

static int by_value(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->v != y->v)
		return (x->v > y->v) - (x->v < y->v);
	return (x->i > y->i) - (x->i < y->i);
}

static void mean_ranks(const double *v, size_t n, double *rank, ranked *tmp)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = (ranked){ .v = v[i], .i = i };
	qsort(tmp, n, sizeof *tmp, by_value);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && tmp[j].v == tmp[i].v; j++)
			;
		for (size_t k = i; k < j; k++)
			rank[tmp[k].i] = (double)(i + j + 1) / 2;
	}
}

/* Spearman's rank correlation of x and y (n pairs): the Pearson
 * correlation of their mean ranks; NAN for fewer than 2 pairs or a
 * side all ties. */
static double plan_spearman(const double *x, const double *y, size_t n)
{
	double *r = malloc(2 * n * sizeof *r), sxy = 0, sxx = 0, syy = 0, mean = (double)(n + 1) / 2;
	ranked *tmp = malloc(n * sizeof *tmp);
	double rho = NAN;
	if (n >= 2 && r && tmp) {
		mean_ranks(x, n, r, tmp);
		mean_ranks(y, n, r + n, tmp);
		for (size_t i = 0; i < n; i++) {
			sxy += (r[i] - mean) * (r[n + i] - mean);
			sxx += (r[i] - mean) * (r[i] - mean);
			syy += (r[n + i] - mean) * (r[n + i] - mean);
		}
		if (sxx > 0 && syy > 0)
			rho = sxy / sqrt(sxx * syy);
	}
	free(r);
	free(tmp);
	return rho;
}

/* How far the estimate's order of the simulated layouts agrees with the
 * simulation's, said plainly under the table. */
static void print_agreement(const plan_row *rows, size_t n, size_t vi)
{
	double *est = malloc(2 * n * sizeof *est), rho;
	size_t first = 0;
	if (!est)
		return;
	for (size_t i = 0; i < n; i++) {
		est[i] = rows[i].c->est_v[vi];
		est[n + i] = rows[i].iter_s;
		if (rows[i].c->rank_v[vi] < rows[first].c->rank_v[vi])
			first = i;
	}
	rho = n >= 3 ? plan_spearman(est, est + n, n) : NAN; /* 2 pairs: always +-1 */
	if (isfinite(rho))
		printf("the estimate orders these %zu layouts with Spearman's rank correlation %.2f "
		       "against the simulation (1: the same order); the simulated iteration decides "
		       "the order above, and the estimate's first of them is simulated rank %zu\n", n, rho, first + 1);
	free(est);
}

static void print_variant(const scn_scenario *s, size_t vi, plan_row *rows, size_t n, long top)
{
	qsort(rows, n, sizeof *rows, by_iteration);
	printf("\nvariant %s: the %ld fastest of %zu simulated\n", s->variants[vi].name,
	       top < (long)n ? top : (long)n, n);
	printf("%4s %5s %3s %3s %4s %5s %4s %9s %3s %3s %3s %10s %9s %10s %12s %6s %9s %12s\n",
	       "rank", "nodes", "tp", "pp", "dp", "micro", "zero", "recompute", "v", "sp", "cp",
	       "estimate", "est.rank", "iteration", "tokens/s", "MFU", "GiB/GPU", "USD/Mtoken");
	for (size_t i = 0; i < n && (long)i < top; i++) {
		const plan_row *r = &rows[i];
		char usd[32] = "-";
		if (isfinite(r->tokens_usd) && r->tokens_usd > 0)
			snprintf(usd, sizeof usd, "%.4f", 1e6 / r->tokens_usd);
		printf("%4zu %5d %3d %3d %4d %5d %4d %9s %3d %3s %3d %9.4fs %9u %9.4fs %12.0f %5.1f%% "
		       "%9.1f %12s\n", i + 1, r->c->nodes, r->c->tp, r->c->pp, r->c->dp, r->c->mb,
		       r->c->zero, r->c->recompute ? "on" : "off", r->c->vp, r->c->sp ? "on" : "off",
		       r->c->cp, r->c->est_v[vi], (unsigned)r->c->rank_v[vi], r->iter_s,
		       r->tokens_s, 100 * r->mfu, r->c->mem_bytes / (1024.0 * 1024 * 1024), usd);
	}
	print_agreement(rows, n, vi);
}

/* ---- the command ---- */

static int no_fit(const plan_opts *o, const scn_job *job, const cand_list *l, long global)
{
	fprintf(stderr, "%s:%d:%d: no layout of the job fits: %zu tried on %d to %d nodes with global "
		"batch %ld, %zu need more GPU memory than the GPU has (the least, %.1f GiB)%s%s\n",
		job->at.file ? job->at.file : o->c.file, job->at.line, job->at.col, l->tried,
		o->nodes[0], o->nodes[o->nnodes - 1], global, l->too_big,
		isfinite(l->least_mem) ? l->least_mem / (1024.0 * 1024 * 1024) : 0.0,
		l->too_big == l->tried ? "" : "; the rest divide neither the GPUs nor the batch",
		o->keep_vp || o->keep_sp || o->keep_cp ? "; --keep held some of vp, sp and cp at the "
		"scenario's (without it they vary)" : "");
	return cli_usage_error("plan: nothing to plan in '%s' (try more nodes, or another global batch)",
			       o->c.file);
}

/* --db can be made or opened: said before the finalists run, not after
 * (store opens it then, so that a plan that fails writes nothing). */
static int check_db(const plan_opts *o)
{
	char err[512];
	if (o->db_path && db_check_target(o->db_path, err, sizeof err))
		return cli_usage_error("plan: %s", err);
	return CLI_OK;
}

static int store(const plan_opts *o, rep_report **reps, char **texts, size_t n)
{
	char err[512];
	db *d = NULL;
	size_t added = 0;
	if (db_make_parent(o->db_path, err, sizeof err) || db_open(o->db_path, &d, err, sizeof err))
		return cli_usage_error("plan: %s", err);
	for (size_t i = 0; i < n; i++) {
		bool add = false;
		if (reps[i] && db_store_report(d, reps[i], texts[i], NULL, &add, err, sizeof err)) {
			db_close(d);
			return cli_usage_error("plan: %s", err);
		}
		added += add;
	}
	db_close(d);
	fprintf(stderr, "dpusim: plan: stored %zu finalist run%s in %s\n", added, added == 1 ? "" : "s",
		o->db_path);
	return CLI_OK;
}

static int check_job(const plan_opts *o, const scn_scenario *s)
{
	if (s->multi_job || s->njobs != 1)
		return cli_usage_error("plan: '%s' has several jobs; plan lays out one training job",
				       o->c.file);
	if (s->jobs[0].wl.kind != SCN_WL_TRAINING)
		return cli_usage_error("plan: '%s' is a %s benchmark; plan lays out a training job",
				       o->c.file, s->jobs[0].wl.kind == SCN_WL_P2P ? "p2p" : "collective");
	return CLI_OK;
}

/* The job's GPU as the simulation times it (setup_gpu) into g, and its
 * fabric under each variant into n[] (the variant's link framing,
 * setup_payload_frac, and its configuration as the simulation builds it,
 * train_config_of): a GPU the simulation cannot time (no hbm_bw, eff_max
 * or peak at the precision), or a link layer it cannot frame, is bad input
 * here as there. */
static int job_nets(const plan_opts *o, const scn_scenario *s, gpu_spec *g, plan_net *n)
{
	diag *d = diag_new();
	int rc = d ? setup_gpu(s, s->jobs[0].wl.train.precision, g, d, NULL) : SIM_ENOMEM;
	for (size_t v = 0; v < s->nvariants && !rc; v++) {
		const scn_scenario *vs; /* the scenario as the variant sees it */
		const scn_variant *var;
		double frac = 1, cpu, eng, mem;
		uint32_t passes;
		train_config c;
		plan_net *nv = &n[v];
		scn_variant_view(s, v, &vs, &var);
		if ((rc = setup_payload_frac(vs, var, &frac, d)) ||
		    (rc = train_config_of(vs, &vs->jobs[0], var, vs->seed, &c, d, NULL)))
			break;
		cpu = train_net_cpu_cap_Bps(&c), eng = c.net_costs.engine_cap_Bps;
		*nv = (plan_net){ .s = vs, .link_Bps = vs->cluster.fabric.link_rate_Bps * frac,
				  .conn_Bps = c.coll.transport.conn_cap_Bps };
		passes = fab_end_mem_passes(coll_transport_end(c.coll.transport.kind));
		mem = passes && c.fabric.host_mem_Bps > 0 ? c.fabric.host_mem_Bps / passes : 0;
		nv->node_Bps = cpu > 0 ? cpu : 0; /* the least of the caps there are */
		if (eng > 0 && !(nv->node_Bps > 0 && nv->node_Bps < eng))
			nv->node_Bps = eng;
		if (mem > 0 && !(nv->node_Bps > 0 && nv->node_Bps < mem))
			nv->node_Bps = mem;
		nv->cfg = c;
	}
	if (rc)
		rc = cli_usage_error("plan: '%s': %s", o->c.file,
				     d && diag_count(d) ? diag_msg(d, 0) : "out of memory");
	diag_free(d);
	return rc;
}

/* The finalists' progress: how long each takes, sized by its work
 * (tools/sweep_eta.h), for their run lines' tails and a line per finalist. */
typedef struct plan_progress {
	sweep_eta eta;
	double t0_s;
	size_t done;
	const size_t *idx; /* the finalist each of the round's simulations is */
	size_t first;      /* finalists before the round */
	size_t total;      /* finalists so far, this round's included */
} plan_progress;

static void plan_tail(void *ctx, char *buf, size_t n)
{
	const plan_progress *p = ctx;
	char el[128];
	double now = cli_wall_s();
	sweep_eta_text(&p->eta, now - p->t0_s, now, el, sizeof el);
	snprintf(buf, n, "; plan: %zu/%zu finalists done, %s", p->first + p->done, p->total, el);
}

/* The work of each finalist v[idx[k]] of the round, for the time left (0
 * where one cannot be loaded: it is skipped at once). */
static int plan_progress_init(plan_progress *p, const plan_opts *o, const char *abs,
			      const scn_training *t, bool cost, const cand *v, const size_t *idx,
			      size_t nf, long global)
{
	char *text = malloc(8192);
	if (!text || sweep_eta_init(&p->eta, nf, (unsigned)o->jobs)) {
		free(text);
		return SIM_ENOMEM;
	}
	p->t0_s = cli_wall_s();
	for (size_t i = 0; i < nf; i++) {
		scn_scenario *cs = NULL;
		diag *d = diag_new();
		if (d && !load_finalist(o, abs, t, cost, &v[idx[i]], global, text, 8192, &cs, d))
			p->eta.work[i] = sweep_point_work(cs);
		scn_free(cs);
		diag_free(d);
	}
	free(text);
	return 0;
}

/* What a finalist's progress lines start with. */
static void finalist_prefix(const plan_progress *p, size_t i, const cand *c, char *buf, size_t n)
{
	snprintf(buf, n, "plan finalist %zu/%zu (nodes %d, tp %d, pp %d, dp %d, "
		 "micro %d, zero %d, recompute %s, v %d, sp %s, cp %d)", p->idx[i] + 1, p->total,
		 c->nodes,
		 c->tp, c->pp, c->dp, c->mb, c->zero, c->recompute ? "on" : "off", c->vp,
		 c->sp ? "on" : "off", c->cp);
}

static void finalist_started(plan_progress *p, size_t i, const cand *c)
{
	char prefix[256];
	finalist_prefix(p, i, c, prefix, sizeof prefix);
	sweep_eta_start(&p->eta, i, cli_wall_s());
	progress_context(prefix, plan_tail, p);
}

/* Finalist i is over; one simulated (ok) gets a line: its own wall time,
 * the time elapsed and left (a skipped one has its own, plan_run's). */
static void finalist_done(plan_progress *p, size_t i, bool ok)
{
	char el[128], t[32];
	double now = cli_wall_s();
	progress_context(NULL, NULL, NULL);
	sweep_eta_end(&p->eta, i, now, ok);
	p->done++;
	if (!ok)
		return;
	sweep_eta_text(&p->eta, now - p->t0_s, now, el, sizeof el);
	fprintf(stderr, "dpusim: plan: finalist %zu/%zu simulated in %s; %s\n", p->idx[i] + 1,
		p->total, hum_duration(t, sizeof t, now - p->eta.start_s[i]), el);
}

/* The finalists and what their simulations gave: reports, scenario texts
 * and each variant's rows (rows[v * cap + i] for the i-th simulated). */
typedef struct plan_sims {
	rep_report **reps;
	char **texts;
	plan_row *rows;
	size_t *slot;       /* per finalist: its rows' place (of ok), or NO_SLOT */
	size_t cap, n, ok;  /* room, finalists tried, with figures */
	size_t shared;      /* of ok: figures of a twin's simulation (twin_of) */
} plan_sims;

#define NO_SLOT SIZE_MAX

/* Finalists l[idx[0..n)] simulated, as the workers of --jobs see them. */
typedef struct plan_round {
	const plan_opts *o;
	const char *abs;
	const scn_scenario *s;
	long global;
	const cand_list *l;
	const size_t *idx;
	plan_progress *pg;
	plan_sims *ps;
} plan_round;

/* Finalist i has figures: its rows vr (one per variant) after the others'. */
static void round_add(plan_sims *ps, size_t nvariants, size_t i, const plan_row *vr)
{
	for (size_t v = 0; v < nvariants; v++)
		ps->rows[v * ps->cap + ps->ok] = vr[v];
	ps->slot[i] = ps->ok++;
	if (ps->n < i + 1)
		ps->n = i + 1;
}

static void skipped(size_t i, const char *why)
{
	fprintf(stderr, "dpusim: plan: layout %zu skipped: %s\n", i + 1, why);
}

static void round_started(void *ctx, size_t k)
{
	plan_round *r = ctx;
	finalist_started(r->pg, k, &r->l->v[r->idx[k]]);
}

/* In a worker: finalist idx[k] simulated, into out: its status, why it
 * was skipped (a length, then the text), its report as JSON. Its run's
 * progress lines name the finalist; the plan's time left is the parent's. */
static void round_work(void *ctx, size_t k, FILE *out)
{
	const plan_round *r = ctx;
	const scn_training *t = &r->s->jobs[0].wl.train;
	const cand *c = &r->l->v[r->idx[k]];
	char why[512] = "out of memory", prefix[256], *text = malloc(8192);
	plan_row vr[SCN_MAX_VARIANTS];
	rep_report *rep = NULL;
	int rc = SIM_ENOMEM;
	finalist_prefix(r->pg, k, c, prefix, sizeof prefix);
	progress_context(prefix, NULL, NULL);
	if (text)
		rc = simulate(r->o, r->abs, t, r->s->cost.present, c, r->global, text, 8192, &rep, vr,
			      why, sizeof why);
	fprintf(out, "%d\n%zu\n%s", rc, rc ? strlen(why) : 0, rc ? why : "");
	if (!rc)
		rep_write_json(rep, out);
}

static bool worker_ok(FILE *in, int status)
{
	int rc;
	return WIFEXITED(status) && !WEXITSTATUS(status) && fscanf(in, "%d", &rc) == 1 && !rc;
}

static void round_ended(void *ctx, size_t k, FILE *in, int status)
{
	plan_round *r = ctx;
	finalist_done(r->pg, k, worker_ok(in, status));
}

/* Reads a worker's file back, in the finalists' order: a skipped layout's
 * message, or its report and rows; as the serial round leaves them. */
static int round_collect(void *ctx, size_t k, FILE *in, int status)
{
	plan_round *r = ctx;
	plan_sims *ps = r->ps;
	size_t i = r->idx[k], len = 0;
	const scn_training *t = &r->s->jobs[0].wl.train;
	char why[512], err[256];
	plan_row vr[SCN_MAX_VARIANTS];
	int wrc = 0;
	if (ps->n < i + 1)
		ps->n = i + 1;
	if (!(ps->texts[i] = malloc(8192)))
		return cli_usage_error("plan: out of memory");
	finalist_text(r->abs, t, r->s->cost.present, &r->l->v[i], r->global, ps->texts[i], 8192);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || fscanf(in, "%d\n%zu\n", &wrc, &len) != 2 ||
	    len >= sizeof why)
		return cli_usage_error("plan --jobs: the worker of finalist %zu failed (%s)", i + 1,
				       forks_status_text(status, why, sizeof why));
	why[fread(why, 1, len, in)] = '\0';
	if (wrc) {
		skipped(i, why);
		return CLI_OK;
	}
	if (rep_read_stream(in, "(plan worker)", &ps->reps[i], err, sizeof err))
		return cli_usage_error("plan --jobs: finalist %zu's report does not read back: %s",
				       i + 1, err);
	rows_of(ps->reps[i], &r->l->v[i], vr);
	round_add(ps, r->s->nvariants, i, vr);
	return CLI_OK;
}

/* Simulates finalists l[idx[0..n)] (in increasing order; first and
 * total: the finalists before the round and so far, for the lines; the
 * time elapsed since t0_s, the plan's first round): one after another, or
 * o->jobs at once in forked workers (tools/forks.h), read back in the same
 * order, so the answer does not depend on --jobs. */
static int simulate_list(const plan_opts *o, const char *abs, const scn_scenario *s, long global,
			 const cand_list *l, const size_t *idx, size_t n, size_t first,
			 size_t total, double t0_s, plan_sims *ps)
{
	const scn_training *t = &s->jobs[0].wl.train;
	plan_progress pg = { .idx = idx, .first = first, .total = total };
	int rc = 0;
	if (plan_progress_init(&pg, o, abs, t, s->cost.present, l->v, idx, n, global))
		return cli_usage_error("plan: out of memory");
	pg.t0_s = t0_s;
	if (o->jobs > 1 && n > 1) {
		plan_round r = { .o = o, .abs = abs, .s = s, .global = global, .l = l, .idx = idx,
				 .pg = &pg, .ps = ps };
		const forks_ops ops = { .started = round_started, .work = round_work,
					.ended = round_ended, .collect = round_collect };
		rc = forks_run(n, (unsigned)o->jobs, &ops, &r);
		progress_context(NULL, NULL, NULL);
		if (rc == SIM_EIO || rc == SIM_ENOMEM)
			rc = cli_usage_error("plan --jobs: a worker could not be started (%s)",
					     sim_strerror(rc));
		sweep_eta_free(&pg.eta);
		return rc;
	}
	for (size_t k = 0; k < n && !rc; k++) {
		size_t i = idx[k];
		char why[512];
		plan_row vr[SCN_MAX_VARIANTS];
		if (ps->n < i + 1)
			ps->n = i + 1;
		if (!(ps->texts[i] = malloc(8192))) {
			rc = cli_usage_error("plan: out of memory");
			break;
		}
		finalist_started(&pg, k, &l->v[i]);
		if (simulate(o, abs, t, s->cost.present, &l->v[i], global, ps->texts[i], 8192,
			     &ps->reps[i], vr, why, sizeof why)) {
			finalist_done(&pg, k, false);
			skipped(i, why);
			rep_free(ps->reps[i]);
			ps->reps[i] = NULL;
			continue;
		}
		finalist_done(&pg, k, true);
		round_add(ps, s->nvariants, i, vr);
	}
	sweep_eta_free(&pg.eta);
	return rc;
}

/* Whether finalists a and b run the same simulation under engine e: the
 * same layout, their ZeRO stages ones the run does not tell apart
 * (train_zero_alike). */
static bool same_run(wl_engine e, const cand *a, const cand *b)
{
	return a->nodes == b->nodes && a->tp == b->tp && a->pp == b->pp && a->dp == b->dp &&
	       a->mb == b->mb && a->vp == b->vp && a->cp == b->cp &&
	       a->recompute == b->recompute && a->sp == b->sp &&
	       train_zero_alike(e, (uint32_t)a->zero) == train_zero_alike(e, (uint32_t)b->zero);
}

/* Finalist i's twin (this round from `from` on; twin[] this round's so
 * far): the first earlier finalist whose simulation is i's, simulated in
 * an earlier round or to be in this one; NO_SLOT where there is none, and
 * with --db, whose runs are each finalist's own report (the memory per
 * GPU in it differs). */
static size_t twin_of(const plan_opts *o, const scn_training *t, const cand_list *l,
		      const plan_sims *ps, const size_t *twin, size_t from, size_t i)
{
	if (o->db_path)
		return NO_SLOT;
	for (size_t j = 0; j < i; j++)
		if (same_run(t->engine, &l->v[j], &l->v[i]) &&
		    (j < from ? ps->slot[j] != NO_SLOT : twin[j - from] == NO_SLOT))
			return j;
	return NO_SLOT;
}

/* Finalist i takes the figures of its twin j's simulation. */
static void share(const scn_scenario *s, const cand_list *l, plan_sims *ps, size_t j, size_t i,
		  size_t total)
{
	plan_row vr[SCN_MAX_VARIANTS];
	for (size_t v = 0; v < s->nvariants; v++) {
		vr[v] = ps->rows[v * ps->cap + ps->slot[j]];
		vr[v].c = &l->v[i];
	}
	round_add(ps, s->nvariants, i, vr);
	ps->shared++;
	fprintf(stderr, "dpusim: plan: finalist %zu/%zu takes the simulation of finalist %zu: "
		"ZeRO %d and %d run alike (only the memory per GPU differs)\n", i + 1, total, j + 1,
		l->v[i].zero, l->v[j].zero);
}

/* Finalists l[from .. to): those whose simulation no earlier one runs
 * (twin_of) simulated, the others given their twin's figures, or
 * simulated where the twin was skipped. */
static int simulate_round(const plan_opts *o, const char *abs, const scn_scenario *s, long global,
			  const cand_list *l, size_t from, size_t to, double t0_s, plan_sims *ps)
{
	const scn_training *t = &s->jobs[0].wl.train;
	size_t n = to - from, nrun = 0;
	size_t *twin = malloc(n * sizeof *twin), *run = malloc(n * sizeof *run);
	int rc = twin && run ? 0 : cli_usage_error("plan: out of memory");
	for (size_t i = from; !rc && i < to; i++)
		if ((twin[i - from] = twin_of(o, t, l, ps, twin, from, i)) == NO_SLOT)
			run[nrun++] = i;
	if (!rc && nrun)
		rc = simulate_list(o, abs, s, global, l, run, nrun, from, to, t0_s, ps);
	for (size_t i = from; !rc && i < to; i++) {
		size_t j = twin[i - from];
		if (j == NO_SLOT)
			continue;
		if (ps->slot[j] != NO_SLOT)
			share(s, l, ps, j, i, to);
		else /* the twin was skipped: this one runs its own checks */
			rc = simulate_list(o, abs, s, global, l, &i, 1, i, to, t0_s, ps);
	}
	free(twin);
	free(run);
	return rc;
}

/* How many layouts past the first nf to simulate too (without
 * --finalists): those in the finalists' order (each variant's next best
 * estimates in turn) up to the last one estimated, under some variant,
 * under that variant's best simulated iteration times the most its
 * estimate ran off the simulation on the finalists so far, either way
 * (est / sim or sim / est, 1 if it matched), and at most PLAN_MORE
 * finalists in all; *left_out: those so estimated past the cap. With one
 * variant they are exactly the ones so estimated, in the estimate's
 * order. A layout estimated slower than that bound is the least likely to
 * beat the best; one estimated faster can, and the simulations are cheap
 * beside a wrong answer. The margin is measured, not assumed: the
 * estimate leaves out overlaps the simulation has and costs it does not
 * see, so it runs on either side of it, and a layout estimated e above
 * the best may simulate e below its estimate. */
static size_t plan_more(const scn_scenario *s, const cand_list *l, const plan_sims *ps,
			size_t nf, size_t *left_out)
{
	double bound[SCN_MAX_VARIANTS];
	size_t end = nf, past = 0;
	for (size_t v = 0; v < s->nvariants; v++) {
		double best = INFINITY, off = 1;
		for (size_t i = 0; i < ps->ok; i++) {
			const plan_row *r = &ps->rows[v * ps->cap + i];
			double e = r->c->est_v[v];
			best = fmin(best, r->iter_s);
			if (r->iter_s > 0 && e > 0 && isfinite(e))
				off = fmax(off, fmax(e / r->iter_s, r->iter_s / e));
		}
		bound[v] = best * off;
	}
	for (size_t i = nf; i < l->n; i++) {
		bool under = false;
		for (size_t v = 0; v < s->nvariants && !under; v++)
			under = l->v[i].est_v[v] < bound[v];
		if (under && i < ps->cap)
			end = i + 1;
		past += under && i >= ps->cap;
	}
	*left_out = past;
	return end - nf;
}

/* Plans s with the job's GPU and its fabric under each variant, net. */
static int plan_layouts(plan_opts *o, const scn_scenario *s, const gpu_spec *gpu,
			const plan_net *net)
{
	const scn_training *t = &s->jobs[0].wl.train;
	long global = o->global_batch ? o->global_batch : t->global_batch;
	char abs[4096];
	cand_list l = { .least_mem = INFINITY };
	int rc = SIM_OK;
	if (!realpath(o->c.file, abs))
		return cli_usage_error("plan: cannot resolve '%s'", o->c.file);
	if (!o->nnodes)
		o->nodes[o->nnodes++] = s->cluster.nodes;
	for (size_t i = 0; i < o->nnodes; i++)
		if (enumerate_nodes(&(space){ .o = o, .s = s, .t = t, .gpu = gpu, .net = net,
					      .nodes = o->nodes[i],
					      .global = global, .l = &l })) {
			free(l.v);
			return cli_usage_error("plan: out of memory (or over %d layouts that fit: fewer "
					       "node counts, or --keep vp,sp,cp)", PLAN_MAX_CANDS);
		}
	if (!l.n) {
		free(l.v);
		return no_fit(o, &s->jobs[0], &l, global);
	}
	if (rank_layouts(&l, s->nvariants)) {
		free(l.v);
		return cli_usage_error("plan: out of memory");
	}
	size_t nf = l.n < (size_t)o->finalists ? l.n : (size_t)o->finalists;
	size_t cap = o->finalists_set || nf >= PLAN_MORE ? nf : l.n < PLAN_MORE ? l.n : PLAN_MORE;
	fprintf(stderr, "dpusim: plan: %zu layouts tried, %zu fit in GPU memory; simulating the %zu "
		"fastest estimates under %zu variant%s\n", l.tried, l.n, nf, s->nvariants,
		s->nvariants == 1 ? "" : "s");
	plan_sims ps = { .reps = calloc(cap, sizeof *ps.reps), .texts = calloc(cap, sizeof *ps.texts),
			 .rows = calloc(cap * SCN_MAX_VARIANTS, sizeof *ps.rows),
			 .slot = malloc(cap * sizeof *ps.slot), .cap = cap };
	for (size_t i = 0; ps.slot && i < cap; i++)
		ps.slot[i] = NO_SLOT;
	if (!ps.reps || !ps.texts || !ps.rows || !ps.slot)
		rc = cli_usage_error("plan: out of memory");
	double t0_s = cli_wall_s();
	if (!rc)
		rc = simulate_round(o, abs, s, global, &l, 0, nf, t0_s, &ps);
	if (!rc && ps.ok && cap > nf) {
		size_t left, more = plan_more(s, &l, &ps, nf, &left);
		if (more)
			fprintf(stderr, "dpusim: plan: %zu more layouts are estimated under a variant's "
				"best simulated iteration: simulating them too%s\n", more,
				left ? "" : " (--finalists N simulates exactly N)");
		if (left)
			fprintf(stderr, "dpusim: plan: %zu more estimated under it are left out (at most %d "
				"finalists without --finalists; --finalists N simulates the N fastest "
				"estimates)\n", left, PLAN_MORE);
		if (more)
			rc = simulate_round(o, abs, s, global, &l, nf, nf + more, t0_s, &ps);
	}
	if (!rc && !ps.ok)
		rc = cli_usage_error("plan: none of the %zu finalists passed the scenario's checks "
				     "(messages above)", ps.n);
	if (!rc && o->db_path)
		rc = store(o, ps.reps, ps.texts, ps.n);
	if (!rc) {
		printf("plan %s: %s, global batch %ld; %zu layouts, %zu fit, %zu simulated", s->name,
		       s->jobs[0].wl.train.model, global, l.tried, l.n, ps.ok);
		if (ps.shared)
			printf(" (%zu of them on a twin's run: ZeRO 1 and 2 run alike)", ps.shared);
		printf("\n");
		for (size_t v = 0; v < s->nvariants; v++)
			print_variant(s, v, ps.rows + v * ps.cap, ps.ok, o->top);
	}
	for (size_t i = 0; i < ps.n && ps.reps && ps.texts; i++) {
		rep_free(ps.reps[i]);
		free(ps.texts[i]);
	}
	free(ps.reps);
	free(ps.texts);
	free(ps.rows);
	free(ps.slot);
	free(l.v);
	return rc;
}

static int plan_run(plan_opts *o, const scn_scenario *s)
{
	gpu_spec g;
	plan_net net[SCN_MAX_VARIANTS];
	op_memo memo[SCN_MAX_VARIANTS] = { 0 };
	int rc = job_nets(o, s, &g, net);
	for (size_t v = 0; v < s->nvariants && !rc; v++)
		net[v].memo = &memo[v];
	if (!rc)
		rc = plan_layouts(o, s, &g, net);
	for (size_t v = 0; v < SCN_MAX_VARIANTS; v++)
		free(memo[v].v);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	plan_opts o;
	scn_scenario *s = NULL;
	int rc = parse_opts(argc, argv, &o);
	/* The scenario's own layout need not fit: plan searches for one that does. */
	o.c.fit_unchecked = true;
	if (rc || (rc = scn_cli_load(&o.c, &s)))
		return rc;
	progress_start(); /* a finalist's long simulation says it is alive */
	if (!(rc = check_job(&o, s)) && !(rc = check_db(&o)))
		rc = plan_run(&o, s);
	scn_free(s);
	return rc;
}
