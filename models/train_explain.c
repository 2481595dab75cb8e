/* A training job's results: per-iteration figures, collectives, engine
 * utilisations, and the text that names what bounds the iteration. */
#include "models/train_int.h"
#include "models/tp_overlap.h"

#include <stdarg.h>
#include <stdio.h>

/* ---- results ---- */

/* Appends printf-style text to r->critical at *n, truncating at its end. */
static void say(train_result *r, size_t *n, const char *fmt, ...)
{
	size_t size = sizeof r->critical;
	va_list ap;
	int k;
	if (*n >= size - 1)
		return;
	va_start(ap, fmt);
	k = vsnprintf(r->critical + *n, size - *n, fmt, ap);
	va_end(ap);
	*n = k < 0 ? *n : *n + (size_t)k < size ? *n + (size_t)k : size - 1;
}

/* The figure of a limit of class cls that held transfers of kind `what`,
 * where the configuration gives one, into buf. */
static void limit_figure(const trainer *tr, const train_result *r, int what, fab_class cls,
			 char *buf, size_t n)
{
	const train_config *c = tr->cfg;
	bool net = what != TRAIN_FLOWS_STORAGE;
	double mem = c->fabric.host_mem_Bps;
	double x = fab_end_mem_passes(coll_transport_end(c->coll.transport.kind));
	*buf = 0;
	if (cls == FAB_CLS_CONN && c->coll.transport.conn_cap_Bps > 0)
		snprintf(buf, n, " (%.2f GB/s)", c->coll.transport.conn_cap_Bps / 1e9);
	else if (cls == FAB_CLS_HOST_CORES && net && r->net_cpu_cap_Bps > 0)
		snprintf(buf, n, " (%.1f GB/s of a node's network traffic)", r->net_cpu_cap_Bps / 1e9);
	else if (cls == FAB_CLS_HOST_MEM && net && mem > 0 && x > 0)
		snprintf(buf, n, " (%.1f GB/s of a node's network traffic: %.1f GB/s, crossed "
			 "%.0f times per byte)", mem / x / 1e9, mem / 1e9, x);
	else if (cls == FAB_CLS_ENGINE && net && c->net_costs.engine_cap_Bps > 0)
		snprintf(buf, n, " (%s, %.1f GB/s a node)", c->net_costs.engine_on_dpu ? "DPU" : "NIC",
			 c->net_costs.engine_cap_Bps / 1e9);
	else if (cls == FAB_CLS_ENGINE && !net && c->storage_engine_Bps > 0)
		snprintf(buf, n, " (DPU SNAP, %.1f GB/s a node)", c->storage_engine_Bps / 1e9);
	else if (cls == FAB_CLS_NIC && net)
		snprintf(buf, n, " (%.0f Gb/s)", c->fabric.link_Bps * 8 / 1e9);
}

/* Names the limits that held transfers of kind `what` (their exposed
 * time `s` of an iteration of `total`), from the solver's account: the
 * two that held them longest, with their shares of the transfers' time. */
static void explain_kind(trainer *tr, train_result *r, size_t *n, int what, double s,
			 double total)
{
	static const char *const kind[TRAIN_NFLOWS] = {
		"tensor-parallel all-reduces exposed", "pipeline transfers exposed",
		"data-parallel collectives exposed", "storage reads stalled the GPUs",
	};
	const double *b = r->bound_s[what];
	const char *name = kind[what];
	double sum = 0;
	int first = -1, second = -1;
	if (what == TRAIN_FLOWS_TP && tr->C > 1) /* the K/V collectives share its account */
		name = "tensor- and context-parallel collectives exposed";
	else if (what == TRAIN_FLOWS_TP && tr->cfg->sp)
		name = "tensor-parallel reduce-scatters and all-gathers exposed";
	for (int k = 0; k < FAB_NCLASSES; k++) {
		sum += b[k];
		if (first < 0 || b[k] > b[first])
			second = first, first = k;
		else if (second < 0 || b[k] > b[second])
			second = k;
	}
	if (!(sum > 0) || !(s >= 0.005 * total)) /* what would print as 0% is left out */
		return;
	char fig[112];
	limit_figure(tr, r, what, (fab_class)first, fig, sizeof fig);
	say(r, n, "; %s %.0f%% of the iteration, held by %s%s for %.0f%% of their transfer time",
	    name, 100 * s / total, fab_class_words((fab_class)first), fig,
	    100 * b[first] / sum);
	if (second >= 0 && b[second] >= 0.01 * sum)
		say(r, n, ", %s %.0f%%", fab_class_words((fab_class)second), 100 * b[second] / sum);
}

/* What held each kind of transfer the GPUs waited for (flow_bound). */
static void explain_flows(trainer *tr, train_result *r, size_t n)
{
	double total = 0;
	for (int k = 0; k < TRAIN_NPARTS; k++)
		total += r->part_s[k];
	if (!(total > 0))
		return;
	for (int k = 0; k < TRAIN_NCOMM; k++)
		explain_kind(tr, r, &n, k, r->comm_s[k], total);
	explain_kind(tr, r, &n, TRAIN_FLOWS_STORAGE, r->part_s[TRAIN_DATA_STALL], total);
}

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
	 * rates (train_io_capped_Bps). */
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
	explain_flows(tr, r, n);
}

/* The solver's account of what held the job's transfers (flow_bound), and
 * how busy a connection's own cores were while it carried data: bytes
 * over what the cap would have moved in the capped flows' time (1 when
 * the cap held them throughout). */
static void held_by(trainer *tr, train_result *r)
{
	double cap = tr->cfg->coll.transport.conn_cap_Bps, cs = 0, cb = 0, s, bytes;
	flow_bound_flush(tr->w->net);
	for (int k = TRAIN_FLOWS_PIPE; k < TRAIN_NFLOWS; k++)
		for (int c = 0; c < FAB_NCLASSES; c++)
			flow_bound(tr->w->net, train_tag(tr, k), (uint32_t)c, &r->bound_s[k][c], &bytes);
	for (int k = TRAIN_FLOWS_PIPE; k <= TRAIN_FLOWS_DP; k++) {
		flow_capped(tr->w->net, train_tag(tr, k), &s, &bytes);
		cs += s, cb += bytes;
	}
	if (cap > 0 && cs > 0)
		r->conn_core_util = fmin(1, cb / (cap * cs));
}

static double boundary_bytes(const train_config *c)
{
	return c->model.kind == WL_TRANSFORMER ? wl_stage_boundary_bytes(&c->model.tf, c->micro_batch)
					       : 0;
}

static void add_coll(train_result *r, coll_op op, const char *algo, const char *what,
		     uint32_t ranks, double bytes, double time_s, uint64_t count, uint32_t channels)
{
	if (r->ncoll == TRAIN_MAX_COLLS || count == 0)
		return;
	r->coll[r->ncoll++] = (train_coll_stat){ .op = op, .algo = algo, .what = what,
						 .ranks = ranks, .bytes = (uint64_t)bytes,
						 .time_s = time_s, .count = count,
						 .channels = channels };
}

void train_finish(trainer *tr, train_result *r)
{
	const train_config *c = tr->cfg;
	double node_max_core_s = 0, node_max_bytes = 0, node_max_snap = 0;
	for (int k = 0; k < TRAIN_NPARTS && r->iters; k++)
		r->part_s[k] /= r->iters;
	for (int k = 0; k < TRAIN_NCOMM && r->iters; k++)
		r->comm_s[k] /= r->iters;
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
	if (c->net_costs.engine_cap_Bps > 0 && c->net_costs.engine_on_dpu && run_s > 0)
		r->dpu_util = node_max_bytes / (c->net_costs.engine_cap_Bps * run_s);
	if (c->storage_engine_Bps > 0 && run_s > 0 &&
	    !(node_max_snap / (c->storage_engine_Bps * run_s) <= r->dpu_util))
		r->dpu_util = node_max_snap / (c->storage_engine_Bps * run_s);
	if (tr->T > 1)
		add_coll(r, c->sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, coll_algo_name(tr->tp_algo),
			 "tensor-parallel activations (NVLink)", tr->T,
			 boundary_bytes(c) / tr->C, tr->tp_ar_s, 1, tr->tp_channels);
	if (tr->T > 1 && c->sp)
		add_coll(r, COLL_ALLGATHER, coll_algo_name(tr->tp_ag_algo),
			 "tensor-parallel activations, sequence parallel (NVLink)", tr->T,
			 boundary_bytes(c) / tr->C, tr->tp_ag_s, 1, tr->tp_ag_channels);
	if (tr->tp_ag8_s > 0)
		add_coll(r, COLL_ALLGATHER, coll_algo_name(tr->tp_ag8_algo),
			 "tensor-parallel activations and gradients in FP8, sequence parallel "
			 "(NVLink; Transformer Engine)", tr->T,
			 boundary_bytes(c) / tr->C / 2, tr->tp_ag8_s, 1, tr->tp_ag8_channels);
	if (tr->tp_rs_chunk_s > 0)
		add_coll(r, COLL_REDUCE_SCATTER, coll_algo_name(tr->tp_rs_chunk_algo),
			 "tensor-parallel chunk beside its GEMM (userbuffers pipeline)", tr->T,
			 boundary_bytes(c) / tr->C / TP_OVERLAP_SPLITS / (c->ub_fp8_rs ? 2 : 1),
			 tr->tp_rs_chunk_s, 1,
			 tr->tp_rs_chunk_channels);
	if (tr->pipe_ag_s > 0)
		add_coll(r, COLL_ALLGATHER, coll_algo_name(tr->pipe_ag_algo),
			 c->engine == WL_ENGINE_DEEPSPEED
				 ? "pipeline boundary tensor, partitioned (NVLink; DeepSpeed)"
				 : "pipeline boundary tensor, scattered (NVLink; Megatron-LM 2021-22)", tr->T,
			 boundary_bytes(c), tr->pipe_ag_s, 1, tr->pipe_ag_channels);
	if (tr->C > 1) {
		add_coll(r, COLL_ALLGATHER, coll_algo_name(tr->cp_ag_algo),
			 "context-parallel keys and values, per layer",
			 tr->C, tr->cp_kv_bytes, tr->cp_ag_s, 1, 0);
		add_coll(r, COLL_REDUCE_SCATTER, coll_algo_name(tr->cp_rs_algo),
			 "context-parallel key and value gradients, per layer", tr->C,
			 tr->cp_kv_bytes, tr->cp_rs_s, 1, 0);
	}
	if (tr->dp_count)
		add_coll(r, train_grad_op(c), coll_algo_name(tr->dp_algo),
			 wl_engine_reduces_after_backward(c->engine)
				 ? "gradient buffer across replicas, after the backward"
				 : "gradient bucket across replicas",
			 tr->R, tr->dg[0].bucket_bytes, tr->dp_time_s / (double)tr->dp_count, tr->dp_count,
			 tr->dp_channels);
	if (tr->tied_count)
		add_coll(r, COLL_ALLREDUCE, coll_algo_name(tr->tied_algo),
			 "tied embedding gradient, first and last stage", 2, tr->tied_bytes,
			 tr->tied_time_s / (double)tr->tied_count, tr->tied_count, tr->tied_res[0].channels);
	if (tr->pp_count)
		add_coll(r, COLL_SENDRECV, "p2p", "pipeline activations and gradients", 2,
			 boundary_bytes(c), tr->pp_time_s / (double)tr->pp_count, tr->pp_count, 0);
	if (tr->ag_count) /* ZeRO (train.c's dp_chain) */
		add_coll(r, COLL_ALLGATHER, coll_algo_name(tr->ag_algo),
			 "parameter bucket across replicas (ZeRO)", tr->R, tr->dg[0].gather_bytes,
			 tr->ag_time_s / (double)tr->ag_count, tr->ag_count, tr->ag_channels);
	held_by(tr, r);
	r->events = sim_events_run(tr->w->eng);
	r->solves = flow_solves(tr->w->net);
	r->net_switches = fab_net_switches(tr->w->f);
	explain(tr, r);
}

