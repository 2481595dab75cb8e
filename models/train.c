/* The training simulation: 1F1B pipelines of every data-parallel replica on
 * the engine (plain, or Megatron's interleaved schedule where each stage
 * holds several model chunks), communication as flows, a data loader per
 * replica.
 *
 * Ranks follow Megatron's order (train_rank, models/train.h):
 * tensor-parallel innermost, then context, data, pipeline outermost,
 * rank(d, p, t) = (p * dp + d) * tp + t, so a tensor-parallel group
 * shares a node's NVLink domain and a data-parallel group neighbouring
 * nodes. A tensor-parallel
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
#include "models/train_int.h"
#include "models/tp_overlap.h"

static void stage_synced(trainer *tr, uint32_t p);

/* Every GPU of a stage (its tensor-parallel group) gets the span. */
static void span_gpus(trainer *tr, const stage *s, sim_time from, sim_time to,
		      train_span_cat cat, const char *name)
{
	if (to <= from || !tracing(tr, s->d))
		return;
	for (uint32_t t = 0; t < tr->W; t++) {
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

/* Exposed communication [from, to] of s, waiting for transfers of kind
 * `what` (enum train_flows). */
static void add_comm(stage *s, int what, sim_time from, sim_time to)
{
	if (to > from)
		s->comm[what] += sim_time_to_s(to - from);
	add_wait(s, TRAIN_EXPOSED_COMM, from, to);
}

/* Attributes [wait_since, now] of a stage that was waiting on an input
 * whose transfer (or batch) started at `sent`. */
static void end_wait(trainer *tr, stage *s, bool fwd, uint32_t m, uint32_t c)
{
	sim_time now = sim_now(tr->w->eng);
	if (!s->waiting)
		return;
	s->waiting = false;
	if (fwd && s->p == 0 && c == 0) {
		loader *l = &tr->ld[s->d];
		sim_time rd = l->read_done[(tr->iter * (uint64_t)tr->M + m) % l->ring];
		sim_time cut = rd > s->wait_since ? (rd < now ? rd : now) : s->wait_since;
		add_wait(s, TRAIN_DATA_STALL, s->wait_since, cut);
		add_wait(s, TRAIN_CPU_STALL, cut, now);
		return;
	}
	sim_time sent = fwd ? s->fwd_sent[c * tr->M + m] : s->bwd_sent[c * tr->M + m];
	sim_time cut = sent > s->wait_since ? (sent < now ? sent : now) : s->wait_since;
	add_wait(s, TRAIN_BUBBLE, s->wait_since, cut);
	add_comm(s, TRAIN_FLOWS_PIPE, cut, now);
}

/* Whether the input of microbatch m's pass through chunk c of s is there:
 * the loader's batch for the first virtual stage, the loss on the last
 * (its own forward ran before, in the schedule's order), else what the
 * neighbouring virtual stage sent. */
static bool input_ready(trainer *tr, stage *s, bool fwd, uint32_t m, uint32_t c)
{
	if (fwd && s->p == 0 && c == 0) {
		loader *l = &tr->ld[s->d];
		return !tr->cfg->data || l->ready[(tr->iter * (uint64_t)tr->M + m) % l->ring];
	}
	if (fwd)
		return s->fwd_in[c * tr->M + m];
	return (s->p == tr->P - 1 && c == tr->V - 1) || s->bwd_in[c * tr->M + m];
}

static void op_done(sim_engine *eng, void *obj, uint64_t data);
static void bucket_ready(sim_engine *eng, void *obj, uint64_t data);
static bool rendezvous(const trainer *tr);
static void pipe_send(trainer *tr, stage *s, bool fwd, uint32_t m);
static void post_recv(trainer *tr, stage *s, bool fwd, uint32_t m);

/* A pass of stage s through its model chunk `chunk` (its layers / V; the
 * logits on the last virtual stage) without noise: compute seconds, and in
 * *comm_s its tensor-parallel all-reduces. */
static double op_base_s(const trainer *tr, const stage *s, bool fwd, uint32_t chunk,
			double *comm_s)
{
	bool last = s->p == tr->P - 1 && chunk == tr->V - 1, first = s->p == 0 && chunk == 0;
	double layers = (double)s->layers / tr->V;
	/* DeepSpeed's engine receives the boundary tensor in tensor-parallel
	 * slices and all-gathers it (PartitionedTensor.full in
	 * _exec_forward_pass); the backward gathers its own partitioned output
	 * back and the received gradient (_exec_backward_pass). Megatron-LM
	 * of 2021-22 gathers what it received only (gather_split_1d_tensor in
	 * p2p_communication._communicate): once a backward too. */
	double bwd_ag = tr->cfg->engine == WL_ENGINE_DEEPSPEED ? 2 * tr->pipe_ag_s : tr->pipe_ag_s;
	if (fwd) {
		*comm_s = layers * (tr->tp_fwd_s + tr->cp_fwd_s) + (first ? 0 : tr->pipe_ag_s);
		return layers * tr->layer_f_s + (last ? tr->logit_f_s : 0) +
		       (first ? tr->embed_f_s : 0);
	}
	/* an overlap that prices its own backward (userbuffers, the layers'
	 * asynchronous collectives: tp_bwd_own) exposes that; a recomputed
	 * forward exposes the forward's */
	if (tr->tp_bwd_own)
		*comm_s = layers * (tr->tp_bwd_s + tr->cp_bwd_s +
				    (tr->cfg->recompute ? tr->tp_fwd_s + tr->cp_fwd_s : 0)) +
			  (last ? 0 : bwd_ag);
	else
		*comm_s = layers * ((tr->tp_fwd_s + tr->cp_fwd_s) * (tr->cfg->recompute ? 2 : 1) -
				    tr->cp_fwd_s + tr->cp_bwd_s) + (last ? 0 : bwd_ag);
	return layers * (tr->layer_b_s + (tr->cfg->recompute ? tr->layer_f_s : 0)) +
	       (last ? tr->logit_b_s : 0) + (first ? tr->embed_b_s : 0);
}

static double op_times(trainer *tr, stage *s, bool fwd, uint32_t chunk, double *comm_s)
{
	double c = op_base_s(tr, s, fwd, chunk, comm_s);
	return c * noise_group_max(tr->noise, local_rank(tr, s), tr->W, tr->step++);
}

/* Host-stack work and DPU-engine bytes of n context-parallel collectives
 * (all-gathers of K and V, or reduce-scatters of their gradients) of stage
 * s: each of its T rings over the C context ranks moves (C - 1) / C of the
 * collective's bytes over every hop, and a hop between two nodes costs
 * the sender's stack and engines its bytes out, the receiver's in (as
 * count_dp_hops charges a data-parallel ring). */
static void count_cp_hops(trainer *tr, const stage *s, double n)
{
	const offload_costs *nc = &tr->cfg->net_costs;
	double hop = n * tr->cp_kv_bytes * (tr->C - 1) / tr->C;
	for (uint32_t t = 0; t < tr->T; t++)
		for (uint32_t c = 0; c < tr->C; c++) {
			uint32_t a = rank_of(tr, s->d, s->p, c * tr->T + t) / tr->gpn;
			uint32_t b = rank_of(tr, s->d, s->p, (c + 1) % tr->C * tr->T + t) / tr->gpn;
			if (a == b)
				continue;
			tr->w->node_bytes[a] += hop, tr->w->node_bytes[b] += hop;
			tr->w->node_core_s[a] += hop * nc->total_tx_core_s_per_byte;
			tr->w->node_core_s[b] += hop * nc->total_core_s_per_byte;
		}
}

/* The last microbatch's backward through a chunk of stage s, of dur: the
 * chunk's share (1 / V) of the stage's gradients becomes ready as it
 * proceeds, from the last layer back, so bucket k (of n) is ready once
 * (k + 1) / n of them are, in the chunks' order of finishing (the last
 * chunk first). An engine that all-reduces after the backward
 * (wl_engine_reduces_after_backward: one bucket per chunk) releases every
 * bucket as the last chunk's backward ends. Times in 128 bits, as dur x
 * buckets can pass 2^63. */
static int grads_ready(trainer *tr, stage *s, sim_time dur)
{
	dpgroup *g = &tr->dg[s->p];
	uint64_t j = s->grad_chunks++, n = g->nbuckets, V = tr->V;
	bool after = wl_engine_reduces_after_backward(tr->cfg->engine);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t at = after ? V * n : (k + 1) * V; /* bucket k's share, in units of 1 / (n V) */
		int rc;
		if (at <= j * n || at > (j + 1) * n)
			continue;
		if ((rc = sim_schedule_in(tr->w->eng, (sim_time)((__int128)dur * (at - j * n) / n),
					  bucket_ready, g, k, NULL)))
			return rc;
	}
	return SIM_OK;
}

void train_try_run(trainer *tr, stage *s)
{
	bool fwd;
	uint32_t m, c;
	double comm, compute;
	if (s->busy || s->sending || s->syncing || s->done || tr->w->err)
		return;
	if (s->op == 2 * tr->M * tr->V) {
		s->syncing = true;
		s->sync_since = sim_now(tr->w->eng);
		if (tr->R == 1)
			stage_synced(tr, s->p);
		return;
	}
	wl_interleaved_op(tr->P, tr->V, tr->M, s->p, s->op, &fwd, &m, &c);
	if (!input_ready(tr, s, fwd, m, c)) {
		if (!s->waiting) {
			s->waiting = true;
			s->wait_since = sim_now(tr->w->eng);
		}
		if (rendezvous(tr) && (fwd ? s->p > 0 : s->p + 1 < tr->P))
			post_recv(tr, s, fwd, m);
		return;
	}
	end_wait(tr, s, fwd, m, c);
	if (s->deferred) { /* the activation is in: now the backward's gradient */
		s->deferred = false;
		return pipe_send(tr, s, false, s->def_m);
	}
	if (fwd && s->p == 0 && c == 0 && tr->cfg->data)
		train_loader_consume(tr, &tr->ld[s->d]);
	compute = op_times(tr, s, fwd, c, &comm);
	if (tr->C > 1) /* per layer: forward one all-gather; backward one reduce-scatter
			* (and with recompute the forward's all-gather again); TE's
			* ring moves the gradients with K and V backward: twice */
		count_cp_hops(tr, s, (double)s->layers / tr->V *
					     (fwd ? 1 : (tr->cfg->cp_p2p ? 2 : 1) + tr->cfg->recompute));
	s->busy = true;
	s->op_compute_s = compute;
	s->op_comm_s = comm;
	const char *what = fwd ? "a forward pass" : "a backward pass";
	sim_time dur, cdur, now = sim_now(tr->w->eng), end;
	int rc;
	if (!train_ps(tr, compute + comm, what, TRAIN_GPU_HINT, &dur) ||
	    !train_ps(tr, compute, what, TRAIN_GPU_HINT, &cdur))
		return;
	if ((rc = sim_time_add(now, dur, &end)))
		return train_fail_time(tr, rc, what, TRAIN_GPU_HINT, compute + comm);
	span_gpus(tr, s, now, now + cdur, TRAIN_SPAN_COMPUTE,
		  fwd ? "forward" : tr->cfg->recompute ? "recompute + backward" : "backward");
	span_gpus(tr, s, now + cdur, end, TRAIN_SPAN_COMM, "tensor-parallel all-reduce");
	if (!fwd && m == tr->M - 1 && tr->R > 1 && (rc = grads_ready(tr, s, dur)))
		return train_fail_time(tr, rc, what, TRAIN_GPU_HINT, compute + comm);
	if ((rc = sim_schedule_in(tr->w->eng, dur, op_done, s,
				  (uint64_t)fwd << 63 | (uint64_t)c << 32 | m, NULL)))
		train_fail_time(tr, rc, what, TRAIN_GPU_HINT, compute + comm);
}

void train_fail_time(trainer *tr, int rc, const char *what, const char *hint, double s)
{
	if (rc == SIM_ENOMEM)
		return fail(tr, rc, what);
	if (!tr->w->err) {
		tr->w->err = SIM_EOVERFLOW;
		diag_add(tr->w->d, NULL, 0, 0, "training simulation: %s takes %.4g s at %.4g s of "
			 "simulated time: it ends past the simulator's horizon of %.2f days; %s",
			 what, s, sim_time_to_s(sim_now(tr->w->eng)), sim_horizon_days(), hint);
	}
	sim_stop(tr->w->eng);
}

/* ---- point-to-point transfers between stages ---- */

static void xfer_arrived(sim_engine *eng, void *obj, uint64_t data)
{
	xfer *x = obj;
	trainer *tr = x->tr;
	stage *s = &tr->st[x->d * tr->P + x->p_to], *from = &tr->st[x->d * tr->P + x->p_from];
	sim_time sent = x->sent;
	(void)eng, (void)data;
	size_t at = (size_t)x->chunk * tr->M + x->m;
	s->inflight = false;
	if (x->fwd) {
		s->fwd_in[at] = 1;
		s->fwd_sent[at] = x->sent;
	} else {
		s->bwd_in[at] = 1;
		s->bwd_sent[at] = x->sent;
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
	train_try_run(tr, s);
	if (from->sending) { /* blocked until the receiver took it (a rendezvous), then moving */
		from->sending = false;
		add_wait(from, TRAIN_BUBBLE, from->send_since, sent);
		add_comm(from, TRAIN_FLOWS_PIPE, sent > from->send_since ? sent : from->send_since,
			 sim_now(tr->w->eng));
		train_try_run(tr, from);
	}
}

static void xfer_flowed(sim_engine *eng, void *obj, uint64_t data)
{
	xfer *x = obj;
	int rc;
	(void)data;
	if ((rc = sim_schedule_in(eng, x->lat, xfer_arrived, x, 0, NULL)))
		train_fail_time(x->tr, rc, "a pipeline transfer's latency", TRAIN_NET_HINT,
				sim_time_to_s(x->lat));
}

/* Host-stack work and DPU-engine bytes of `bytes` sent from node `from` to
 * node `to`: the sender pays the send cost, the receiver the receive cost,
 * and each node's engines see the bytes that leave and enter it (inline
 * crypto encrypts out and decrypts in; the switch offload forwards both
 * ways). Inside one node (NVLink) neither is involved. */
static void count_net(trainer *tr, uint32_t from, uint32_t to, double bytes)
{
	const offload_costs *nc = &tr->cfg->net_costs;
	if (from == to)
		return;
	tr->w->node_bytes[from] += bytes;
	tr->w->node_bytes[to] += bytes;
	tr->w->node_core_s[from] += bytes * nc->total_tx_core_s_per_byte;
	tr->w->node_core_s[to] += bytes * nc->total_core_s_per_byte;
}

/* The ECMP key of a pipeline transfer: its connection's. NCCL sends
 * between two ranks over a connection set up once and kept for the job,
 * and an ECMP switch hashes a packet's 5-tuple (RoCE v2: the queue pair's
 * UDP source port, fixed for its life; TCP: the connection's ports), so
 * every microbatch between a rank pair takes one path and a collision
 * between two pairs lasts the whole run. fab_route mixes in the ranks, so
 * the key only has to keep pipeline connections apart from the
 * collectives' (coll_hs_build: kind << 32 | channel) and name the job.
 * Adaptive routing decides per message, starting its search where the
 * message's own key points, so it keeps drawing a fresh one; D-mod-K
 * routes by destination and reads no key. */
static uint64_t pipe_key(trainer *tr)
{
	if (fab_cfg(tr->w->f)->routing == FAB_ADAPTIVE)
		return tr->w->flow_key++;
	return (uint64_t)1 << 63 | tr->job;
}

/* Union of the tensor ranks' routes from stage p_from to p_to of replica d
 * into path (room for FAB_PATH_MAX x W), their longest latency and
 * whether any leaves its node. */
static int route_pipe(trainer *tr, uint32_t d, uint32_t p_from, uint32_t p_to, uint32_t *path,
		      struct pipe_route *r)
{
	fab_end end = coll_transport_end(tr->cfg->coll.transport.kind);
	*r = (struct pipe_route){ .len = 0 };
	for (uint32_t k = 0; k < tr->W; k++) {
		fab_path fp;
		uint32_t src = rank_of(tr, d, p_from, k), dst = rank_of(tr, d, p_to, k);
		int rc = fab_route(tr->w->f, src, dst, pipe_key(tr), end, end, &fp);
		if (rc || r->len + fp.len > (size_t)FAB_PATH_MAX * tr->W)
			return rc ? rc : SIM_ERANGE;
		memcpy(path + r->len, fp.res, fp.len * sizeof path[0]);
		r->len += fp.len;
		if (fp.lat_ps > r->lat)
			r->lat = fp.lat_ps;
		r->net = r->net || fab_leaves_node(tr->w->f, src, dst);
	}
	return SIM_OK;
}

/* The route of a send from p_from to p_to of replica d: kept per
 * connection where its key is fixed (tr->routes), as the switches keep
 * it, and then prepared for the flow solver once (*fp; else NULL), as
 * every microbatch crosses it; *path points into tr->route_res or
 * tr->path. */
static int pipe_route_of(trainer *tr, uint32_t d, uint32_t p_from, uint32_t p_to,
			 const uint32_t **path, struct pipe_route *r, flow_path **fp)
{
	size_t i = ((size_t)d * tr->P + p_from) * 2 + (p_to == (p_from + 1) % tr->P ? 0 : 1);
	int rc;
	*fp = NULL;
	if (!tr->routes || (i % 2 && p_to != (p_from + tr->P - 1) % tr->P)) {
		*path = tr->path;
		return route_pipe(tr, d, p_from, p_to, tr->path, r);
	}
	uint32_t *kept = tr->route_res + i * FAB_PATH_MAX * tr->W;
	*path = kept;
	if (!tr->routes[i].len && (rc = route_pipe(tr, d, p_from, p_to, kept, &tr->routes[i]))) {
		tr->routes[i].len = 0; /* none kept half-made */
		return rc;
	}
	if (!tr->route_fp[i] &&
	    (rc = flow_path_new(tr->w->net, kept, NULL, tr->routes[i].len, &tr->route_fp[i])))
		return rc;
	*r = tr->routes[i];
	*fp = tr->route_fp[i];
	return SIM_OK;
}

/* A pipeline transfer: the union of the tensor ranks' routes (pipe_route_of):
 * the T slices move in lock step, one flow for all. The transport's
 * per-message latency and per-connection cap apply when a slice leaves its
 * node (fab_leaves_node, as a collective's step), the cap on each of the
 * connections NCCL moves a send on (pipe_conn_cap_Bps, train_pipe_conns):
 * neighbouring stages on one node (tp below the GPUs per node) send over
 * NVLink at its rate and latency, through no network adapter and no host
 * stack. */
static int send_between(trainer *tr, uint32_t d, uint32_t p_from, uint32_t p_to, uint32_t m,
			uint32_t chunk, bool fwd)
{
	const wl_transformer *t = &tr->cfg->model.tf;
	const uint32_t *path;
	struct pipe_route r;
	flow_path *fp;
	int rc = pipe_route_of(tr, d, p_from, p_to, &path, &r, &fp);
	sim_time lat = r.lat;
	uint32_t len = r.len;
	bool net = r.net;
	xfer *x;
	if (rc)
		return rc;
	if (!(x = malloc(sizeof *x)))
		return SIM_ENOMEM;
	const coll_transport *tp = &tr->cfg->coll.transport;
	/* DeepSpeed's engine sends a partitioned tensor as two messages in a
	 * row, its layout (PartitionedTensor.to_meta) then its slice. */
	sim_time msgs = tr->cfg->engine == WL_ENGINE_DEEPSPEED && tr->T > 1 ? 2 : 1;
	*x = (xfer){ .tr = tr, .d = d, .p_from = p_from, .p_to = p_to, .m = m, .chunk = chunk,
		     .fwd = fwd, .sent = sim_now(tr->w->eng),
		     .lat = msgs * (lat + (net ? tp->msg_lat_ps : 0)) };
	/* each GPU's slice: 1/tp of its 1/cp of the sequence */
	uint64_t bytes = (uint64_t)(wl_stage_boundary_bytes(t, tr->cfg->micro_batch) / tr->W);
	flow_spec fs = { .bytes = bytes ? bytes : 1, .prepared = fp, .path = path, .path_len = len,
			 .cap_Bps = net ? tr->pipe_conn_cap_Bps : 0, .done = xfer_flowed,
			 .obj = x, .tag = train_tag(tr, TRAIN_FLOWS_PIPE), .cap_class = FAB_CLS_CONN };
	count_net(tr, rank_of(tr, d, p_from, 0) / tr->gpn, rank_of(tr, d, p_to, 0) / tr->gpn,
		  (double)bytes * tr->W);
	if ((rc = flow_start(tr->w->net, &fs, NULL))) {
		free(x);
		return rc;
	}
	if ((x->next = tr->w->xfers))
		x->next->prev = x;
	tr->w->xfers = x;
	return SIM_OK;
}

/* DeepSpeed's TrainSchedule (v0.5 schedule.py) runs each exchange as a
 * blocking dist.send / dist.recv pair on NCCL, whose ncclSend "is blocking
 * for the GPU" until the peer calls the matching ncclRecv (NCCL's
 * api/p2p.html): a transfer flows only once the sender has sent and the
 * receiver has posted its receive, and each side waits for it. Its order
 * within a step: a forward step receives the activation, then sends the
 * previous backward's gradient; a backward step sends the previous
 * forward's activation, then receives the gradient. So after a forward
 * the stage sends, then posts its next receive; after a backward followed
 * by a forward it posts the forward's receive first and sends the
 * gradient once the activation is in (deferred); a backward followed by
 * a backward sends first. The plain 1F1B op order is TrainSchedule's
 * (tools/ds-schedule-replay replays the same stream). */
static bool rendezvous(const trainer *tr)
{
	return tr->cfg->engine == WL_ENGINE_DEEPSPEED;
}

/* Stage s sends microbatch m's activation (fwd) to the next stage or its
 * input gradient to the previous one, and blocks until it has arrived: at
 * once if the receiver has posted that receive, else when it does. */
static void pipe_send(trainer *tr, stage *s, bool fwd, uint32_t m)
{
	stage *r = &tr->st[s->d * tr->P + (fwd ? s->p + 1 : s->p - 1)];
	s->sending = true;
	s->send_since = sim_now(tr->w->eng);
	if (r->posted && r->post_fwd == fwd && r->post_m == m) {
		r->posted = false;
		r->inflight = true;
		int rc = send_between(tr, s->d, s->p, r->p, m, 0, fwd);
		if (rc)
			fail(tr, rc, "pipeline transfer");
		return;
	}
	r->offer[fwd] = true;
	r->offer_m[fwd] = m;
}

/* Stage s needs microbatch m's input (fwd: the activation) from a
 * neighbour: it posts the receive, and a sender already blocked on it
 * starts its transfer. */
static void post_recv(trainer *tr, stage *s, bool fwd, uint32_t m)
{
	if (s->posted || s->inflight)
		return;
	if (s->offer[fwd] && s->offer_m[fwd] == m) {
		s->offer[fwd] = false;
		s->inflight = true;
		int rc = send_between(tr, s->d, fwd ? s->p - 1 : s->p + 1, s->p, m, 0, fwd);
		if (rc)
			fail(tr, rc, "pipeline transfer");
		return;
	}
	s->posted = true;
	s->post_fwd = fwd;
	s->post_m = m;
}

/* A pass of stage s ended on DeepSpeed's engine: its send, in
 * TrainSchedule's order (rendezvous). */
static void ds_op_done(trainer *tr, stage *s, bool fwd, uint32_t m)
{
	bool sends = fwd ? s->p + 1 < tr->P : s->p > 0, next_fwd = false;
	uint32_t nm, nc;
	s->op++;
	if (s->op < 2 * tr->M)
		wl_interleaved_op(tr->P, 1, tr->M, s->p, s->op, &next_fwd, &nm, &nc);
	if (sends && !fwd && next_fwd) {
		s->deferred = true;
		s->def_m = m;
	} else if (sends) {
		pipe_send(tr, s, fwd, m);
	}
	train_try_run(tr, s);
}

static void op_done(sim_engine *eng, void *obj, uint64_t data)
{
	stage *s = obj;
	trainer *tr = s->tr;
	bool fwd = data >> 63;
	uint32_t m = (uint32_t)data, c = (uint32_t)(data >> 32 & 0x7fffffff);
	int rc = 0;
	bool sent = true;
	(void)eng;
	s->busy = false;
	s->part[TRAIN_COMPUTE] += s->op_compute_s;
	s->part[TRAIN_EXPOSED_COMM] += s->op_comm_s;
	s->comm[TRAIN_FLOWS_TP] += s->op_comm_s;
	s->compute_s += s->op_compute_s;
	if (rendezvous(tr))
		return ds_op_done(tr, s, fwd, m);
	/* To the next virtual stage (chunk c of the next stage, or from the
	 * last stage chunk c + 1 of the first), backward the reverse. */
	if (fwd && s->p + 1 < tr->P)
		rc = send_between(tr, s->d, s->p, s->p + 1, m, c, true);
	else if (fwd && c + 1 < tr->V)
		rc = send_between(tr, s->d, s->p, 0, m, c + 1, true);
	else if (!fwd && s->p > 0)
		rc = send_between(tr, s->d, s->p, s->p - 1, m, c, false);
	else if (!fwd && c > 0)
		rc = send_between(tr, s->d, s->p, tr->P - 1, m, c - 1, false);
	else
		sent = false;
	if (rc)
		return fail(tr, rc, "pipeline transfer");
	/* DeepSpeed's p2p.send is a blocking dist.send (a two-rank broadcast
	 * before September 2021): the stage's next instruction waits for it.
	 * So does Megatron-LM of 2021's and 2022's: _communicate waits on
	 * every request of its batch_isend_irecv, then calls
	 * torch.cuda.synchronize(). */
	if (sent && tr->cfg->engine != WL_ENGINE_MEGATRON) {
		s->sending = true;
		s->send_since = sim_now(tr->w->eng);
	}
	s->op++;
	train_try_run(tr, s);
}

/* ---- gradient synchronisation across replicas ---- */

static void bucket_done(sim_engine *eng, void *obj, uint64_t data);
static void gather_done(sim_engine *eng, void *obj, uint64_t data);

/* The collectives each gradient bucket runs, in order, into ops[2]; their
 * count. What ZeRO adds is communication as Rajbhandari et al. ("ZeRO",
 * SC 2020, section 7) count it: stages 1 and 2 replace the all-reduce by a
 * reduce-scatter of the gradients and, after the optimizer step on each
 * replica's shard, an all-gather of the updated parameters (stage_synced),
 * as many bytes as the all-reduce; stage 3 also gathers the parameters
 * again for the backward pass, 1.5 times the traffic. That backward gather
 * runs here, in the bucket's slot behind the last backward; the forward's
 * gather is the one after the optimizer step, not hidden behind the next
 * forward (no prefetch). Counted once per iteration, as the paper does:
 * implementations that gather again for each microbatch of gradient
 * accumulation move more. */
static uint32_t dp_chain(const train_config *c, coll_op ops[2])
{
	if (c->zero_stage >= 3) {
		ops[0] = COLL_ALLGATHER;
		ops[1] = COLL_REDUCE_SCATTER;
		return 2;
	}
	ops[0] = train_grad_op(c);
	return 1;
}

uint32_t train_zero_alike(wl_engine e, uint32_t z)
{
	/* dp_chain and gathers read z >= 1 and z >= 3; train_grad_op also
	 * DeepSpeed's z == 1 */
	return z == 2 && e != WL_ENGINE_DEEPSPEED ? 1 : z;
}

/* Whether the parameters are gathered after the optimizer step (ZeRO). */
static bool gathers(const trainer *tr)
{
	return tr->cfg->zero_stage >= 1 && tr->R > 1;
}

/* Host-stack work and DPU-engine bytes of member i's ranks (of the R =
 * D x C holding the stage's weights: replica d, context rank c, i = d C +
 * c) in one collective op of a bucket of g. A ring (or tree) moves busbw
 * factor x the bucket over every hop of its ring (all-reduce 2 (R - 1) / R,
 * reduce-scatter and all-gather (R - 1) / R each). Only hops that leave a
 * node cost the host stack and go through the DPU's engines: the ring
 * visits a node's ranks in a row (as NCCL lays rings out, coll.c's
 * ring_rank), so a node holding several replicas sends and receives once
 * per ring, and a ring inside one node, over NVLink, not at all (as coll.c
 * charges its collectives: network hops only). Charged to the node of the
 * member's first tensor rank: a tensor-parallel group shares one node. */
static void count_dp_hops(trainer *tr, const dpgroup *g, uint32_t i, coll_op op)
{
	const offload_costs *nc = &tr->cfg->net_costs;
	uint32_t node = g->ranks[i] / tr->gpn, out = 0, in = 0, R = tr->R;
	double hop = dp_op_bytes(g, op) * coll_busbw_factor(op, R);
	for (uint32_t t = 0; t < tr->T; t++) {
		const uint32_t *rk = g->ranks + (size_t)t * R;
		uint32_t here = rk[i] / tr->gpn;
		out += here != rk[(i + 1) % R] / tr->gpn;
		in += here != rk[(i + R - 1) % R] / tr->gpn;
	}
	tr->w->node_bytes[node] += hop * (out + in);
	tr->w->node_core_s[node] += hop * (out * nc->total_tx_core_s_per_byte +
					   in * nc->total_core_s_per_byte);
}

/* Op on one bucket of g across the replicas, one collective per tensor
 * rank; done(g, t) as each ends. */
static void dp_start(trainer *tr, dpgroup *g, coll_op op, sim_handler *done)
{
	g->done_tp = 0;
	g->started = sim_now(tr->w->eng);
	for (uint32_t t = 0; t < tr->T; t++) {
		coll_params cp = { .op = op, .algo = COLL_AUTO, .bytes = (uint64_t)dp_op_bytes(g, op),
				   .ranks = g->ranks + (size_t)t * tr->R, .nranks = tr->R,
				   .tag = train_tag(tr, TRAIN_FLOWS_DP) };
		int rc = coll_start(tr->w->coll, &cp, &g->res[t], done, g, t);
		if (rc)
			return fail(tr, rc, op == COLL_ALLGATHER ? "parameter all-gather"
								 : "gradient all-reduce");
	}
	for (uint32_t i = 0; i < tr->R; i++)
		count_dp_hops(tr, g, i, op);
}

/* The time of g's op that just ended, into the report's figures and, for
 * replica 0 in a traced iteration, the trace. */
static void dp_account(trainer *tr, const dpgroup *g, coll_op op)
{
	double s = sim_time_to_s(sim_now(tr->w->eng) - g->started);
	bool ag = op == COLL_ALLGATHER;
	if (ag) {
		tr->ag_time_s += s;
		tr->ag_count++;
		tr->ag_algo = g->res[0].algo;
		tr->ag_channels = g->res[0].channels;
	} else {
		tr->dp_time_s += s;
		tr->dp_count++;
		tr->dp_algo = g->res[0].algo;
		tr->dp_channels = g->res[0].channels;
	}
	if (!tracing(tr, 0))
		return;
	static const char *const names[] = { "gradients, stage 0", "gradients, stage 1",
		"gradients, stage 2", "gradients, stage 3", "gradients, stage 4",
		"gradients, stage 5", "gradients, stage 6", "gradients, stage 7+" };
	train_span sp = { .track = TRAIN_TRACK_LINK, .link = names[g->p < 7 ? g->p : 7],
			  .start_s = sim_time_to_s(g->started - tr->iter_start), .dur_s = s,
			  .cat = TRAIN_SPAN_COMM,
			  .name = ag ? "parameter all-gather" : op == COLL_REDUCE_SCATTER
				? "gradient reduce-scatter" : "gradient all-reduce" };
	tr->cfg->span(tr->cfg->span_ctx, &sp);
}

static void bucket_start(trainer *tr, dpgroup *g)
{
	coll_op ops[2];
	dp_chain(tr->cfg, ops);
	g->running = 1;
	dp_start(tr, g, ops[g->phase], bucket_done);
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
	coll_op ops[2];
	uint32_t n = dp_chain(tr->cfg, ops);
	(void)eng, (void)t;
	if (++g->done_tp < tr->T)
		return;
	dp_account(tr, g, ops[g->phase]);
	if (++g->phase < n)
		return dp_start(tr, g, ops[g->phase], bucket_done);
	g->phase = 0;
	g->running = 0;
	if (++g->next == g->nbuckets)
		return stage_synced(tr, g->p);
	if (g->ready[g->next] == tr->D)
		bucket_start(tr, g);
}

static void stage_finished(sim_engine *eng, void *obj, uint64_t data);
static void optimizer_done(sim_engine *eng, void *obj, uint64_t data);

static void optimizer_start(trainer *tr, uint32_t p);

/* Whether the job all-reduces a tied embedding's gradient between its
 * first and last stage. */
static bool tied(const trainer *tr)
{
	return tr->tied_bytes > 0;
}

static void tied_done(sim_engine *eng, void *obj, uint64_t data)
{
	trainer *tr = obj;
	(void)eng, (void)data;
	if (++tr->tied_done < tr->D * tr->W)
		return;
	tr->tied_time_s += sim_time_to_s(sim_now(tr->w->eng) - tr->tied_started);
	tr->tied_count++;
	tr->tied_algo = tr->tied_res[0].algo;
	optimizer_start(tr, 0);
	optimizer_start(tr, tr->P - 1);
}

/* The tied embedding's gradient, all-reduced between the first stage (the
 * token embedding) and the last (the output layer, the same weight) of
 * each replica, tensor and context rank, once both stages' gradients are
 * reduced across the replicas and before either's optimizer step:
 * Megatron-LM's train_step of 2021 (megatron/training.py at 6985e58,
 * "backward-embedding-all-reduce": torch.distributed.all_reduce on the
 * embedding group after model.allreduce_gradients(), before
 * optimizer.step()) and Megatron-core's finalize_model_grads
 * (_allreduce_word_embedding_grads). DeepSpeed's TrainSchedule runs it
 * (ReduceTiedGrads: PipelineModule.allreduce_tied_weight_gradients)
 * before its ReduceGrads instead; the first stage, which ends the
 * pipeline's backward last, pays the same all-reduce either way. Its host
 * and DPU bytes are charged as a data-parallel ring's hop: each rank
 * sends and receives the whole gradient (2 (n - 1) / n = 1 at n = 2). */
static void tied_start(trainer *tr)
{
	const offload_costs *nc = &tr->cfg->net_costs;
	tr->tied_done = 0;
	tr->tied_started = sim_now(tr->w->eng);
	for (uint32_t i = 0; i < tr->D * tr->W; i++) {
		const uint32_t *rk = tr->tied_ranks + 2 * (size_t)i;
		coll_params cp = { .op = COLL_ALLREDUCE, .algo = COLL_AUTO,
				   .bytes = (uint64_t)tr->tied_bytes, .ranks = rk, .nranks = 2,
				   .tag = train_tag(tr, TRAIN_FLOWS_DP) };
		int rc = coll_start(tr->w->coll, &cp, &tr->tied_res[i], tied_done, tr, i);
		if (rc)
			return fail(tr, rc, "tied embedding all-reduce");
		for (int k = 0; k < 2; k++) {
			uint32_t a = rk[k] / tr->gpn, b = rk[1 - k] / tr->gpn;
			if (a == b)
				continue;
			tr->w->node_bytes[a] += 2 * tr->tied_bytes;
			tr->w->node_core_s[a] += tr->tied_bytes * (nc->total_tx_core_s_per_byte +
								   nc->total_core_s_per_byte);
		}
	}
}

/* Every replica's stage p has its gradients: the first and last stage
 * of a tied embedding wait for each other and all-reduce it (tied_start),
 * the others go on to their optimizer step. */
static void stage_synced(trainer *tr, uint32_t p)
{
	tr->dg[p].synced_at = sim_now(tr->w->eng);
	if (!tied(tr) || (p != 0 && p != tr->P - 1))
		return optimizer_start(tr, p);
	if (++tr->tied_synced == 2)
		tied_start(tr);
}

/* Stage p's gradients are final: attribute the wait, run the optimizer
 * step (on each replica's shard under ZeRO). */
static void optimizer_start(trainer *tr, uint32_t p)
{
	const train_config *c = tr->cfg;
	sim_time now = sim_now(tr->w->eng);
	dpgroup *g = &tr->dg[p];
	sim_time barrier = tr->R > 1 ? g->all_ready_at[g->nbuckets - 1] : g->synced_at;
	double shard = tr->params_stage[p] / (c->zero_stage >= 1 ? tr->R : 1);
	g->opt_done = 0;
	for (uint32_t d = 0; d < tr->D; d++) {
		stage *s = &tr->st[d * tr->P + p];
		sim_time cut = barrier > s->sync_since ? barrier : s->sync_since;
		double opt = gpu_optimizer_s(&c->gpu, shard) *
			     noise_group_max(tr->noise, local_rank(tr, s), tr->W, tr->step++);
		sim_time dur, end;
		int rc;
		/* waiting for the replicas, their collectives; then, with a tied
		 * embedding, waiting for the other end stage (the pipeline's
		 * drain: the last stage idles while the first ends its backward,
		 * as it would at the iteration's end without the tie) and their
		 * all-reduce */
		add_wait(s, TRAIN_OTHER, s->sync_since, cut);
		add_comm(s, TRAIN_FLOWS_DP, cut, g->synced_at);
		if (now > g->synced_at) {
			add_wait(s, TRAIN_BUBBLE, g->synced_at, tr->tied_started);
			add_comm(s, TRAIN_FLOWS_DP, tr->tied_started, now);
		}
		if (!train_ps(tr, opt, "an optimizer step", TRAIN_GPU_HINT, &dur))
			return;
		if ((rc = sim_time_add(now, dur, &end)))
			return train_fail_time(tr, rc, "an optimizer step", TRAIN_GPU_HINT, opt);
		span_gpus(tr, s, now, end, TRAIN_SPAN_COMPUTE, "optimizer step");
		s->part[TRAIN_COMPUTE] += opt;
		s->compute_s += opt;
		if ((rc = sim_schedule_in(tr->w->eng, dur, gathers(tr) ? optimizer_done : stage_finished,
					  s, 0, NULL)))
			return train_fail_time(tr, rc, "an optimizer step", TRAIN_GPU_HINT, opt);
	}
}

/* ZeRO: once every replica has updated its shard of stage p's parameters,
 * they are all-gathered, bucket by bucket; each replica waits for it. */
static void optimizer_done(sim_engine *eng, void *obj, uint64_t data)
{
	stage *s = obj;
	trainer *tr = s->tr;
	dpgroup *g = &tr->dg[s->p];
	(void)data;
	s->opt_end = sim_now(eng);
	if (++g->opt_done < tr->D)
		return;
	g->gather_next = 0;
	dp_start(tr, g, COLL_ALLGATHER, gather_done);
}

static void gather_done(sim_engine *eng, void *obj, uint64_t t)
{
	dpgroup *g = obj;
	trainer *tr = g->tr;
	sim_time now = sim_now(eng);
	(void)t;
	if (++g->done_tp < tr->T)
		return;
	dp_account(tr, g, COLL_ALLGATHER);
	if (++g->gather_next < g->nbuckets)
		return dp_start(tr, g, COLL_ALLGATHER, gather_done);
	/* The gather began when the last optimizer step ended. */
	sim_time began = 0;
	for (uint32_t d = 0; d < tr->D; d++)
		if (tr->st[d * tr->P + g->p].opt_end > began)
			began = tr->st[d * tr->P + g->p].opt_end;
	for (uint32_t d = 0; d < tr->D; d++) {
		stage *s = &tr->st[d * tr->P + g->p];
		add_wait(s, TRAIN_OTHER, s->opt_end, began);
		add_comm(s, TRAIN_FLOWS_DP, began, now);
		stage_finished(eng, s, 0);
	}
}

void train_record_iteration(trainer *tr, const stage *crit, double it_s, double busy)
{
	train_result *r = tr->res;
	r->iter_s[r->iters++] = it_s;
	for (int k = 0; k < TRAIN_NPARTS; k++)
		r->part_s[k] += crit->part[k];
	for (int k = 0; k < TRAIN_NCOMM; k++)
		r->comm_s[k] += crit->comm[k];
	r->gpu_busy_frac += busy / (tr->D * tr->P);
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
	if (tr->iter >= tr->cfg->warmup)
		train_record_iteration(tr, crit, it_s, busy);
	if (train_steady_fill(tr, crit->done_at - tr->iter_start, crit, it_s, busy)) {
		tr->w->jobs_left--;
		sim_stop(eng); /* the one job is done: what is left would be the next iteration's */
		return;
	}
	tr->iter++;
	if (tr->cfg->progress)
		tr->cfg->progress(tr->cfg->progress_ctx, tr->iter, tr->cfg->warmup + tr->cfg->iterations,
				  sim_time_to_s(sim_now(eng)));
	if (tr->iter < tr->cfg->warmup + tr->cfg->iterations)
		iteration_start(tr);
	else
		tr->end = sim_now(eng), tr->w->jobs_left--;
}

/* ---- iterations ---- */

static void iteration_start(trainer *tr)
{
	tr->iter_start = sim_now(tr->w->eng);
	tr->stages_done = 0;
	for (uint32_t i = 0; i < tr->D * tr->P; i++) {
		stage *s = &tr->st[i];
		memset(s->fwd_in, 0, 2 * (size_t)tr->M * tr->V);
		memset(s->part, 0, sizeof s->part);
		memset(s->comm, 0, sizeof s->comm);
		s->op = s->grad_chunks = 0;
		s->busy = s->waiting = s->syncing = s->done = s->sending = false;
		s->posted = s->inflight = s->deferred = s->offer[0] = s->offer[1] = false;
		s->compute_s = 0;
	}
	for (uint32_t p = 0; p < tr->P; p++) {
		dpgroup *g = &tr->dg[p];
		memset(g->ready, 0, sizeof g->ready);
		g->next = g->running = g->phase = 0;
	}
	tr->tied_synced = 0;
	for (uint32_t i = 0; i < tr->D * tr->P; i++)
		train_try_run(tr, &tr->st[i]);
}

/* ---- construction ---- */

/* Adds the seconds net's flows spent held by each class of limit
 * (FAB_NCLASSES, flow_bound's tag 0) to bound. */
static void add_held_s(flow_net *net, double *bound)
{
	flow_bound_flush(net);
	for (int k = 0; k < FAB_NCLASSES; k++) {
		double held, bytes_held;
		flow_bound(net, 0, (uint32_t)k, &held, &bytes_held);
		bound[k] += held;
	}
}

/* Tensor-parallel collective op of one layer's activations on a node's
 * NVSwitch, simulated once on its own one-node fabric: its time, the
 * channels and the algorithm NCCL's choice ran it on, and its flows'
 * seconds by the class of the limit that held them added to bound
 * (FAB_NCLASSES). */
static int tp_coll_s(const train_config *c, coll_op op, double bytes, double *out,
		     uint32_t *channels, coll_algo *algo, double *bound, diag *d)
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
		rc = flow_bound_init(net, 1, FAB_NCLASSES);
	if (!rc)
		rc = coll_run(cc, &(coll_params){ .op = op, .algo = COLL_AUTO,
						  .bytes = (uint64_t)bytes }, &r);
	if (rc && d && sim_error(eng)) /* sim_fail: an NVLink rate or size past the clock */
		diag_add(d, NULL, 0, 0, "training simulation: the tensor-parallel %s "
			 "inside a node: %s; check cluster.gpu's 'nvlink_bw' (or "
			 "'nvlink_bw_achieved')", op == COLL_ALLREDUCE ? "all-reduce" :
			 op == COLL_REDUCE_SCATTER ? "reduce-scatter" : "all-gather",
			 sim_error_msg(eng));
	if (!rc) {
		*out = sim_time_to_s(r.time_ps);
		*channels = r.channels;
		*algo = r.algo;
		add_held_s(net, bound);
	}
	coll_ctx_free(cc);
	fab_free(f);
	flow_net_free(net);
	sim_engine_free(eng);
	return rc;
}

uint32_t train_pipe_conns(const train_config *c, uint32_t pp)
{
	uint32_t nranks = c->engine == WL_ENGINE_DEEPSPEED ? 2 : pp;
	return nranks > 1 ? coll_p2p_channels(&c->fabric, &c->coll, nranks) : 1;
}

int train_tp_coll_s(const train_config *c, uint32_t tp, coll_op op, double bytes, double *out)
{
	train_config t = *c;
	double bound[FAB_NCLASSES] = { 0 };
	uint32_t channels;
	coll_algo algo;
	t.tp = tp;
	return tp_coll_s(&t, op, bytes, out, &channels, &algo, bound, NULL);
}

static void cp_coll_done(sim_engine *eng, void *obj, uint64_t data)
{
	(void)eng, (void)obj, (void)data;
}

/* Context-parallel op on one layer's K and V (bytes per tensor slice):
 * the T rings of a stage's C context ranks at once, on a fabric of the
 * cluster's kind holding just that stage's nodes, with the scenario's
 * transport, simulated once and reused for every layer (as the
 * tensor-parallel collectives are): its time, the slowest ring's. The
 * rings of other stages and the data-parallel traffic are not on these
 * links here, a simplification that holds while they are idle during a
 * layer's attention. */
static int cp_coll_time(const train_config *c, uint32_t T, uint32_t C, coll_op op, double bytes,
			double *out, coll_algo *algo, double *bound, diag *d)
{
	fab_config fc = c->fabric;
	uint32_t W = T * C, gpn = fc.gpus_per_node;
	sim_engine *eng;
	flow_net *net = NULL;
	fab *f = NULL;
	coll_ctx *cc = NULL;
	coll_result *r = calloc(T, sizeof *r);
	uint32_t *ranks = malloc((size_t)W * sizeof *ranks);
	int rc = r && ranks ? SIM_OK : SIM_ENOMEM;
	*out = 0;
	fc.nodes = (W + gpn - 1) / gpn;
	eng = sim_engine_new();
	if (!eng)
		rc = SIM_ENOMEM;
	if (!rc && !(net = flow_net_new(eng)))
		rc = SIM_ENOMEM;
	if (!rc)
		rc = fab_new(&fc, net, &f);
	if (!rc)
		rc = coll_ctx_new(eng, net, f, &c->coll, &cc);
	if (!rc)
		rc = flow_bound_init(net, 1, FAB_NCLASSES);
	for (uint32_t t = 0; t < T && !rc; t++) {
		for (uint32_t k = 0; k < C; k++)
			ranks[t * C + k] = k * T + t;
		rc = coll_start(cc, &(coll_params){ .op = op, .algo = COLL_AUTO,
						    .bytes = (uint64_t)bytes, .ranks = ranks + t * C,
						    .nranks = C }, &r[t], cp_coll_done, NULL, t);
	}
	if (!rc) {
		sim_run(eng);
		rc = sim_error(eng);
	}
	if (rc && d && eng && sim_error(eng))
		diag_add(d, NULL, 0, 0, "training simulation: the context-parallel %s of a "
			 "layer's keys and values: %s; %s", op == COLL_ALLGATHER ? "all-gather"
			 : "reduce-scatter", sim_error_msg(eng), TRAIN_NET_HINT);
	for (uint32_t t = 0; t < T && !rc; t++)
		if (sim_time_to_s(r[t].time_ps) > *out)
			*out = sim_time_to_s(r[t].time_ps), *algo = r[t].algo;
	if (!rc) /* what held its flows, with the tensor-parallel ones' (explain_kind) */
		add_held_s(net, bound);
	coll_ctx_free(cc);
	fab_free(f);
	flow_net_free(net);
	sim_engine_free(eng);
	free(ranks);
	free(r);
	return rc;
}

int train_cp_coll_s(const train_config *c, uint32_t tp, uint32_t cp, coll_op op, double bytes,
		    double *out)
{
	double bound[FAB_NCLASSES] = { 0 };
	coll_algo algo;
	*out = 0;
	return cp > 1 ? cp_coll_time(c, tp, cp, op, bytes, out, &algo, bound, NULL) : SIM_OK;
}

/* Transformer Engine's userbuffers (c->tp_overlap): the layer's exposed
 * tensor-parallel time forward and backward from tp_overlap_layer, with
 * the GEMMs' times of this GPU, the collectives simulated above and one
 * reduce-scatter of a pipeline chunk; the forward's GEMMs beside a
 * pipeline reduce-scatter run on fewer SMs, which the layer's compute
 * takes. */
static int tp_overlapped(trainer *tr, const wl_split *sp, double bytes, double *bound)
{
	const train_config *c = tr->cfg;
	tp_overlap_in in = { .tp = c->tp, .splits = TP_OVERLAP_SPLITS, .ag_s = tr->tp_ag_s,
			     .rs_s = tr->tp_ar_s, .ag_in_s = tr->tp_ag8_s };
	tp_overlap_out out;
	/* with fp8_buf the GEMM writes FP8 into the userbuffer and the chunks
	 * move one byte an element (linear.py at 7d576ed2: is_fp8_ubuf) */
	double chunk = bytes / TP_OVERLAP_SPLITS / (c->ub_fp8_rs ? 2 : 1);
	int rc = tp_coll_s(c, COLL_REDUCE_SCATTER, chunk, &tr->tp_rs_chunk_s,
			   &tr->tp_rs_chunk_channels, &tr->tp_rs_chunk_algo, bound, tr->w->d);
	if (rc)
		return rc;
	in.rs_split_s = tr->tp_rs_chunk_s;
	tp_overlap_gemms(&c->gpu, &c->model.tf, c->micro_batch, sp, c->ub_proj_sms, c->ub_fc2_sms,
			 &in);
	tp_overlap_layer(&in, &out);
	tr->tp_fwd_s = out.fwd_comm_s;
	tr->tp_bwd_s = out.bwd_comm_s;
	tr->tp_bwd_own = true;
	tr->layer_f_s += out.fwd_extra_s;
	return SIM_OK;
}

/* The layers' own asynchronous backward collectives, without userbuffers
 * (tp_async_layer): Megatron-LM's linear layers (c->tp_bwd_overlap), and
 * Transformer Engine's modules under FP8 with sequence parallelism, which
 * run the same overlaps with the forward's gathers in FP8 (tp_ag8_s, 0
 * otherwise: tp_te_layer). */
static void tp_async(trainer *tr, const wl_split *sp)
{
	const train_config *c = tr->cfg;
	tp_overlap_in in = { .tp = c->tp, .ag_s = tr->tp_ag_s, .rs_s = tr->tp_ar_s,
			     .ag_in_s = tr->tp_ag8_s, .ar_s = c->sp ? 0 : tr->tp_ar_s };
	tp_overlap_out out;
	double cut[GPU_LINEAR_N];
	gpu_linear_gemms_s(&c->gpu, &c->model.tf, c->micro_batch, sp, 0, in.gemm, cut);
	tp_async_layer(&in, &out);
	tr->tp_fwd_s = out.fwd_comm_s;
	tr->tp_bwd_s = out.bwd_comm_s;
	tr->tp_bwd_own = true;
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
	wl_split sp = { .tp = c->tp, .cp = tr->C, .sp = c->sp, .flash = c->flash,
			.wgrad_fused = c->wgrad_fused,
			.cp_ring = c->cp_p2p };
	double bytes = wl_stage_boundary_bytes(t, c->micro_batch) / (c->cp > 1 ? c->cp : 1), *bound;
	gpu_layer_s(&c->gpu, t, c->micro_batch, &sp, &tr->layer_f_s, &tr->layer_b_s);
	gpu_logits_s(&c->gpu, t, c->micro_batch, &sp, &tr->logit_f_s, &tr->logit_b_s);
	gpu_embedding_s(&c->gpu, t, c->micro_batch, &sp, &tr->embed_f_s, &tr->embed_b_s);
	/* Megatron: two all-reduces per layer forward (attention, MLP); with
	 * sequence parallelism each is a reduce-scatter after the row-parallel
	 * GEMM and an all-gather before the next column-parallel one
	 * (Korthikanti et al., MLSys 2023, section 4.2.2): the same bytes. */
	bound = tr->res->bound_s[TRAIN_FLOWS_TP];
	rc = tp_coll_s(c, c->sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, bytes, &tr->tp_ar_s,
		       &tr->tp_channels, &tr->tp_algo, bound, tr->w->d);
	if (!rc && c->sp)
		rc = tp_coll_s(c, COLL_ALLGATHER, bytes, &tr->tp_ag_s, &tr->tp_ag_channels,
			       &tr->tp_ag_algo, bound, tr->w->d);
	tr->tp_fwd_s = tr->tp_bwd_s = 2 * (tr->tp_ar_s + tr->tp_ag_s);
	/* Transformer Engine under FP8 gathers FP8: LayerNormLinear's norm
	 * writes its output in FP8 and gathers that (layernorm_linear.py at
	 * 7d576ed2: ln_out uint8, gather_along_first_dim or the userbuffer, whose
	 * dtype initialize_ub makes uint8 for layers_all_gather_overlap), and the
	 * row-parallel layers' backward casts the output gradient to FP8 before
	 * gathering it (base.py grad_output_preprocess, "cast, transpose for
	 * efficient gather"). The reduce-scatters stay 16-bit. */
	bool te8 = c->sp && c->gpu.fp8_cast && c->tp > 1;
	if (!rc && te8)
		rc = tp_coll_s(c, COLL_ALLGATHER, bytes / 2, &tr->tp_ag8_s, &tr->tp_ag8_channels,
			       &tr->tp_ag8_algo, bound, tr->w->d);
	if (!rc && c->tp_overlap && c->tp > 1)
		rc = tp_overlapped(tr, &sp, bytes, bound);
	else if (!rc && (te8 || (c->tp_bwd_overlap && c->tp > 1)))
		tp_async(tr, &sp);
	/* the engines that split the boundary tensor over the tensor ranks and
	 * gather it on arrival; under sequence parallelism Megatron-LM of 2022
	 * sends it already split by sequence, and gathers nothing
	 * (p2p_communication.py at 55ba1f7: not args.sequence_parallel) */
	if (!rc && c->engine != WL_ENGINE_MEGATRON && c->pp > 1 && !c->sp)
		rc = tp_coll_s(c, COLL_ALLGATHER, bytes, &tr->pipe_ag_s, &tr->pipe_ag_channels,
			       &tr->pipe_ag_algo, bound, tr->w->d);
	/* Context parallelism as Llama 3 trains it (Dubey et al., 2024,
	 * section 3.3.2): each layer all-gathers K and V across the context
	 * ranks before its attention (small beside Q under GQA), not
	 * overlapped, and reduce-scatters their gradients in the backward;
	 * or (cp_p2p) as Transformer Engine's ring, each exchange a ring
	 * step of that all-gather beside an attention step
	 * (cp_overlap_layer). */
	if (!rc && tr->C > 1) {
		tr->cp_kv_bytes = wl_layer_kv_bytes(t, c->micro_batch) / tr->T;
		rc = cp_coll_time(c, tr->T, tr->C, COLL_ALLGATHER, tr->cp_kv_bytes, &tr->cp_ag_s,
				  &tr->cp_ag_algo, bound, tr->w->d);
		if (!rc)
			rc = cp_coll_time(c, tr->T, tr->C, COLL_REDUCE_SCATTER, tr->cp_kv_bytes,
					  &tr->cp_rs_s, &tr->cp_rs_algo, bound, tr->w->d);
		tr->cp_fwd_s = tr->cp_ag_s, tr->cp_bwd_s = tr->cp_rs_s;
		if (!rc && c->cp_p2p) { /* a ring step is one rank's K and V to its neighbour */
			double af, ab;
			gpu_attention_s(&c->gpu, t, c->micro_batch, &sp, &af, &ab);
			cp_overlap_layer(tr->C, tr->cp_ag_s / (tr->C - 1), af, ab, &tr->cp_fwd_s,
					 &tr->cp_bwd_s);
		}
	}
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
			size_t ops = (size_t)tr->M * tr->V;
			s->fwd_in = calloc(2 * ops, 1);
			s->fwd_sent = calloc(2 * ops, sizeof *s->fwd_sent);
			if (!s->fwd_in || !s->fwd_sent)
				return SIM_ENOMEM;
			s->bwd_in = s->fwd_in + ops;
			s->bwd_sent = s->fwd_sent + ops;
		}
	}
	return SIM_OK;
}

/* The tied embedding's two-rank groups (tied_start), where the model
 * ties it and the pipeline splits it from the output layer: stage 0's
 * and stage P - 1's GPU of each replica d and tensor-context rank k. */
static int alloc_tied(trainer *tr)
{
	const train_config *c = tr->cfg;
	if (!c->tied_embedding || tr->P < 2 || c->model.kind != WL_TRANSFORMER)
		return SIM_OK;
	tr->tied_bytes = (double)c->model.tf.vocab * c->model.tf.hidden / tr->T *
			 c->grad_bytes_per_param;
	tr->tied_ranks = malloc(2 * (size_t)tr->D * tr->W * sizeof *tr->tied_ranks);
	tr->tied_res = calloc((size_t)tr->D * tr->W, sizeof *tr->tied_res);
	if (!tr->tied_ranks || !tr->tied_res)
		return SIM_ENOMEM;
	for (uint32_t d = 0; d < tr->D; d++)
		for (uint32_t k = 0; k < tr->W; k++) {
			uint32_t *rk = tr->tied_ranks + 2 * ((size_t)d * tr->W + k);
			rk[0] = rank_of(tr, d, 0, k);
			rk[1] = rank_of(tr, d, tr->P - 1, k);
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
		/* Clamped as a double: bytes over a tiny bucket passes 2^32. An
		 * engine that all-reduces after the backward reduces each model
		 * chunk's gradient buffer whole (wl_engine_reduces_after_backward). */
		double k = wl_engine_reduces_after_backward(c->engine) ? tr->V
			   : c->bucket_bytes > 0 ? ceil(bytes / c->bucket_bytes) : 1;
		*g = (dpgroup){ .tr = tr, .p = p,
				.nbuckets = !(k > 1) ? 1 : k > MAX_BUCKETS ? MAX_BUCKETS : (uint32_t)k };
		g->bucket_bytes = bytes / g->nbuckets;
		g->gather_bytes = c->param_bytes_per_param > 0
					  ? g->bucket_bytes * c->param_bytes_per_param / c->grad_bytes_per_param
					  : g->bucket_bytes;
		g->ranks = malloc((size_t)tr->T * tr->R * sizeof *g->ranks);
		g->res = calloc(tr->T, sizeof *g->res);
		if (!g->ranks || !g->res)
			return SIM_ENOMEM;
		/* per tensor rank t: every replica's context ranks, in rank order */
		for (uint32_t t = 0; t < tr->T; t++)
			for (uint32_t d = 0; d < tr->D; d++)
				for (uint32_t ci = 0; ci < tr->C; ci++)
					g->ranks[(size_t)t * tr->R + d * tr->C + ci] =
						rank_of(tr, d, p, ci * tr->T + t);
	}
	return alloc_tied(tr);
}

/* The job's noise, each throttled GPU of the cluster found among the
 * job's GPUs where its nodes are placed (rank_of's mapping). */
static int job_noise(trainer *tr)
{
	const train_config *c = tr->cfg;
	noise_params p = c->noise;
	double *slow = NULL;
	if (c->nslow_gpus && !(slow = malloc(p.gpus * sizeof *slow)))
		return SIM_ENOMEM;
	for (uint32_t g = 0; slow && g < p.gpus; g++) {
		uint32_t cl = tr->node_of[g / tr->gpn] * tr->gpn + g % tr->gpn;
		slow[g] = 1;
		for (uint32_t k = 0; k < c->nslow_gpus; k++)
			if (c->slow_gpus[k].gpu == cl)
				slow[g] = 1 / c->slow_gpus[k].speed;
	}
	p.gpu_slow = slow;
	tr->noise = noise_new(&p, c->seed);
	free(slow);
	return tr->noise ? SIM_OK : SIM_EINVAL;
}

static int job_build(trainer *tr)
{
	const train_config *c = tr->cfg;
	int rc;
	tr->P = c->pp, tr->D = c->dp, tr->T = c->tp, tr->M = c->microbatches;
	tr->V = c->vp > 1 ? c->vp : 1;
	tr->C = c->cp > 1 ? c->cp : 1;
	tr->W = tr->T * tr->C, tr->R = tr->D * tr->C;
	if (!(tr->path = malloc((size_t)FAB_PATH_MAX * tr->W * sizeof *tr->path)))
		return SIM_ENOMEM;
	/* adaptive routing decides each message afresh: nothing to keep */
	size_t nroutes = (size_t)tr->D * tr->P * 2;
	if (tr->P > 1 && fab_cfg(tr->w->f)->routing != FAB_ADAPTIVE &&
	    (!(tr->routes = calloc(nroutes, sizeof *tr->routes)) ||
	     !(tr->route_fp = calloc(nroutes, sizeof *tr->route_fp)) ||
	     !(tr->route_res = malloc(nroutes * FAB_PATH_MAX * tr->W * sizeof *tr->route_res))))
		return SIM_ENOMEM;
	tr->gpn = c->fabric.gpus_per_node;
	tr->nodes = c->fabric.nodes;
	tr->res->net_cpu_cap_Bps = train_net_cpu_cap_Bps(c);
	tr->pipe_conn_cap_Bps = c->coll.transport.conn_cap_Bps * train_pipe_conns(c, c->pp);
	if ((rc = job_noise(tr)) || (rc = build_compute(tr)) || (rc = alloc_stages(tr)) || (rc = alloc_groups(tr)) ||
	    (rc = train_alloc_loaders(tr)))
		return rc;
	return SIM_OK;
}

/* ---- the simulator's horizon ---- */

/* The uncontended estimate of op on one gradient bucket of stage p's
 * data-parallel group, as auto chooses and runs it (coll_estimate), in
 * seconds. Until December 2026 it was the least over every algorithm of
 * NCCL's tuner's structure, where the run follows its own: at 25 B/s
 * links gds-vs-bounce's all-reduces took 7.5 times that figure, so
 * check passed and run died at the horizon. */
static double bucket_op_s(const trainer *tr, const dpgroup *g, coll_op op)
{
	coll_params cp = { .op = op, .algo = COLL_AUTO, .ranks = g->ranks, .nranks = tr->R };
	sim_time t;
	if (!(dp_op_bytes(g, op) < 1.8e19))
		return INFINITY;
	cp.bytes = (uint64_t)dp_op_bytes(g, op);
	if (coll_estimate(tr->w->coll, &cp, COLL_AUTO, &t) || t == SIM_TIME_MAX)
		return INFINITY;
	return sim_time_to_s(t);
}

/* One bucket's chain and, under ZeRO, its parameter all-gather, in
 * seconds (dp_chain). */
static double bucket_s(const trainer *tr, const dpgroup *g)
{
	coll_op ops[2];
	uint32_t n = dp_chain(tr->cfg, ops);
	double s = gathers(tr) ? bucket_op_s(tr, g, COLL_ALLGATHER) : 0;
	for (uint32_t i = 0; i < n; i++)
		s += bucket_op_s(tr, g, ops[i]);
	return s;
}

/* One microbatch's boundary tensor from stage p_from to p_to of replica 0,
 * alone on the network: each tensor rank's slice at its route's narrowest
 * resource and, off the node, the transport's per-connection cap (as
 * send_between starts it), in seconds; 0 without a transformer boundary. */
static double boundary_send_s(const trainer *tr, uint32_t p_from, uint32_t p_to)
{
	const train_config *c = tr->cfg;
	fab_end end = coll_transport_end(c->coll.transport.kind);
	uint32_t src = rank_of(tr, 0, p_from, 0), dst = rank_of(tr, 0, p_to, 0);
	double Bps = INFINITY, bytes;
	fab_path fp;
	if (c->model.kind != WL_TRANSFORMER)
		return 0;
	bytes = wl_stage_boundary_bytes(&c->model.tf, c->micro_batch) / tr->W;
	if (fab_route(tr->w->f, src, dst, 0, end, end, &fp))
		return INFINITY;
	for (uint32_t i = 0; i < fp.len; i++)
		Bps = fmin(Bps, flow_res_cap_Bps(tr->w->net, fp.res[i]));
	if (fab_leaves_node(tr->w->f, src, dst) && tr->pipe_conn_cap_Bps > 0)
		Bps = fmin(Bps, tr->pipe_conn_cap_Bps);
	return Bps > 0 ? bytes / Bps : INFINITY;
}

/* Stage p's sends per pass of a chunk: its activations forward to p + 1 and
 * its input gradient back to p - 1. */
static double stage_sends_s(const trainer *tr, uint32_t p)
{
	double s = 0;
	if (p + 1 < tr->P)
		s += boundary_send_s(tr, p, p + 1);
	if (p > 0)
		s += boundary_send_s(tr, p, p - 1);
	return s;
}

/* The iteration's reads over the resources of their paths, as the loaders
 * issue them (train_read_path): the busiest resource's bytes (times each
 * read's weight there) over its capacity, in seconds. A bounce buffer's
 * host memory, a PCIe link or a storage port can be narrower than the
 * servers or drives (read_s). A replica's first READ_SPAN reads stand for
 * all M, scaled (the NICs and servers they take repeat within it). */
#define READ_SPAN 256
static double read_paths_s(const trainer *tr)
{
	const train_config *c = tr->cfg;
	size_t n = flow_res_count(tr->w->net);
	uint32_t span = tr->M < READ_SPAN ? (uint32_t)tr->M : READ_SPAN;
	double *load = calloc(n ? n : 1, sizeof *load), worst = 0;
	double bytes = c->micro_batch * c->sample_bytes * ((double)tr->M / (span ? span : 1));
	if (!load)
		return 0; /* an estimate: none without memory */
	for (uint32_t d = 0; d < tr->D; d++)
		for (uint32_t k = 0; k < span; k++) {
			uint32_t path[8];
			double wt[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
			uint32_t len = train_read_path(tr, &tr->ld[d], k, (uint32_t)((uint64_t)d * span + k),
						       path, wt);
			for (uint32_t i = 0; i < len; i++)
				load[path[i]] += bytes * wt[i];
		}
	for (size_t r = 0; r < n; r++)
		if (load[r] > 0)
			worst = fmax(worst, load[r] / flow_res_cap_Bps(tr->w->net, (uint32_t)r));
	free(load);
	return worst;
}

/* The iteration's samples of every replica read at the storage's rate
 * (the servers' or one node's drives', their IOPS bound included), the
 * page cache's share left out: seconds, 0 when nothing is read. */
static double read_s(const trainer *tr)
{
	const train_config *c = tr->cfg;
	double bytes = (double)tr->M * c->micro_batch * c->sample_bytes * (1 - c->page_cache_hit);
	double Bps = c->local_Bps > 0 ? c->local_Bps : c->storage_Bps;
	double iops = c->local_Bps > 0 ? c->local_iops : c->storage_iops;
	if (c->local_Bps <= 0)
		bytes *= tr->D; /* the servers serve every replica */
	Bps = train_io_capped_Bps(Bps, iops, c->sample_bytes);
	if (c->storage_engine_Bps > 0 && c->local_Bps <= 0)
		Bps = fmin(Bps, c->storage_engine_Bps * c->fabric.nodes);
	return fmax(bytes > 0 && Bps > 0 ? bytes / Bps : 0, read_paths_s(tr));
}

/* "[about ]1.5 s", or what an estimate past the clock (infinite) is, into
 * buf[40]. */
static const char *secs(double s, bool about, char *buf)
{
	if (isfinite(s))
		snprintf(buf, 40, "%s%.4g s", about ? "about " : "", s);
	else
		snprintf(buf, 40, "longer than the clock holds");
	return buf;
}

/* About how long job tr runs, before it runs, by part: per iteration the
 * slowest pipeline stage's 1F1B passes ((M V + P - 1) forward and backward
 * passes of a chunk, noise left out) with its pipeline sends (one boundary
 * each way per pass, alone on the network) and its gradient buckets one after another,
 * and one replica's loader decoding the iteration's samples on its
 * workers; times the iterations with the warm-up. An estimate, not a
 * bound: what lets dpusim check refuse a job the clock cannot hold, with
 * what to change. 0, or SIM_EOVERFLOW with a message in d. */
static int job_fits(const trainer *tr, diag *d)
{
	const train_config *c = tr->cfg;
	double iters = (double)c->warmup + c->iterations, gpu_s = 0, net_s = 0, load_s = 0, it_s;
	const char *hint = TRAIN_GPU_HINT;
	for (uint32_t p = 0; p < tr->P; p++) {
		double fc, bc, f = op_base_s(tr, &tr->st[p], true, tr->V - 1, &fc),
			       b = op_base_s(tr, &tr->st[p], false, tr->V - 1, &bc);
		double stage_s = ((double)tr->M * tr->V + tr->P - 1) * (f + fc + b + bc);
		double grads_s = tr->R > 1 ? tr->dg[p].nbuckets * bucket_s(tr, &tr->dg[p]) : 0;
		grads_s += ((double)tr->M * tr->V + tr->P - 1) * stage_sends_s(tr, p);
		if (!(stage_s + grads_s <= gpu_s + net_s))
			gpu_s = stage_s, net_s = grads_s;
	}
	if (c->data)
		load_s = fmax((double)tr->M * c->micro_batch * c->decode_core_s / c->workers,
			      read_s(tr));
	it_s = fmax(gpu_s + net_s, load_s);
	if (iters * it_s < sim_time_to_s(SIM_TIME_MAX))
		return SIM_OK;
	if (load_s >= gpu_s + net_s)
		hint = TRAIN_LOADER_HINT;
	else if (net_s > gpu_s)
		hint = TRAIN_NET_HINT;
	char it[40], gpu[40], net[40], load[40];
	diag_add(d, NULL, 0, 0, "training simulation: an iteration takes %s (the "
		 "slowest pipeline stage's passes %s, its pipeline sends and gradient all-reduces %s, the data "
		 "loader %s), so %.0f iterations with the warm-up end past the simulator's "
		 "horizon of %.2f days; %s", secs(it_s, true, it), secs(gpu_s, false, gpu),
		 secs(net_s, false, net), secs(load_s, false, load), iters, sim_horizon_days(), hint);
	return SIM_EOVERFLOW;
}

static void job_teardown(trainer *tr)
{
	train_steady_release(tr);
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
	free(tr->path);
	for (size_t i = 0; tr->route_fp && i < (size_t)tr->D * tr->P * 2; i++)
		flow_path_free(tr->route_fp[i]);
	free(tr->route_fp);
	free(tr->routes);
	free(tr->route_res);
	free(tr->tied_ranks);
	free(tr->tied_res);
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
		if (!c->iterations || !c->microbatches || train_gpus(c) == 0) {
			diag_add(w->d, NULL, 0, 0, "training simulation: job %u: nothing to run", j);
			return SIM_EINVAL;
		}
		if (wl_interleave_faults(&c->model, c->pp, c->vp, c->microbatches)) {
			diag_add(w->d, NULL, 0, 0, "training simulation: job %u: %u virtual stages "
				 "need pp > 1, microbatches a multiple of pp and layers of pp x "
				 "virtual stages (pp %u, %u microbatches)", j, c->vp, c->pp,
				 c->microbatches);
			return SIM_EINVAL;
		}
		if (wl_tp_overlap_fault(c->tp_overlap, c->tp, c->sp)) {
			diag_add(w->d, NULL, 0, 0, "training simulation: job %u: tp_comm_overlap "
				 "needs sequence parallelism at tp %u", j, c->tp);
			return SIM_EINVAL;
		}
		if (c->fabric.gpus_per_node != w->gpn ||
		    (uint64_t)train_gpus(c) > (uint64_t)c->fabric.nodes * w->gpn) {
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
		int rc = train_bench_prepare(w, cfgs[0], w->bench[k].b, &w->bench[k]);
		if (rc)
			return rc;
	}
	for (uint32_t n = 0; n < w->nodes; n++)
		if (!w->node_cfg[n])
			w->node_cfg[n] = cfgs[0];
	return SIM_OK;
}

/* Builds every job, starts them together, runs the engine until all have
 * done their iterations; dry: builds them and checks them against the
 * horizon (job_fits), without running. */
static int run_jobs(world *w, trainer *trs, uint32_t njobs, bool dry)
{
	size_t said = diag_count(w->d);
	int rc = 0;
	for (uint32_t j = 0; j < njobs && !rc; j++)
		if (!(rc = job_build(&trs[j])))
			rc = train_steady_init(&trs[j], !dry && train_steady_allowed(&trs[j], njobs));
	if (rc && diag_count(w->d) == said) {
		diag_add(w->d, NULL, 0, 0, "training simulation: building the jobs: %s",
			 sim_strerror(rc));
	}
	if (rc)
		return rc;
	for (uint32_t j = 0; j < njobs && dry && !rc; j++)
		rc = job_fits(&trs[j], w->d);
	if (dry)
		return rc;
	for (uint32_t j = 0; j < njobs; j++) {
		for (uint32_t l = 0; l < trs[j].D && trs[j].cfg->data; l++)
			train_loader_fill(&trs[j], &trs[j].ld[l]);
		iteration_start(&trs[j]);
	}
	w->jobs_left = njobs;
	for (uint32_t k = 0; k < w->nbench; k++)
		train_bench_start(&w->bench[k]);
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
		train_finish(&trs[j], trs[j].res);
	return w->err;
}

static int sim_shared(const train_config *const *cfgs, const uint32_t *const *node_of,
		      uint32_t njobs, train_bench *bench, uint32_t nbench, uint32_t nodes,
		      train_result *res, diag *d, bool dry)
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
		res[j] = (train_result){ .host_cpu_util = NAN, .dpu_util = NAN,
					 .conn_core_util = NAN };
	for (uint32_t j = 0; j < njobs && !rc; j++) {
		trs[j] = (trainer){ .cfg = cfgs[j], .w = &w, .node_of = node_of[j], .res = &res[j],
				    .job = j };
		if (!(res[j].iter_s = calloc(cfgs[j]->iterations, sizeof *res[j].iter_s)))
			rc = SIM_ENOMEM;
	}
	if (!rc && (rc = train_world_build(&w, nodes, cfgs, njobs)))
		diag_add(d, NULL, 0, 0, "training simulation: building the cluster: %s",
			 sim_strerror(rc));
	if (!rc)
		rc = run_jobs(&w, trs, njobs, dry);
	for (uint32_t j = 0; trs && j < njobs; j++)
		job_teardown(&trs[j]);
	train_world_teardown(&w);
	free(trs);
	for (uint32_t j = 0; (rc || dry) && j < njobs; j++)
		train_result_release(&res[j]);
	return rc;
}

int train_sim_shared(const train_config *const *cfgs, const uint32_t *const *node_of,
		     uint32_t njobs, train_bench *bench, uint32_t nbench, uint32_t nodes,
		     train_result *res, diag *d)
{
	return sim_shared(cfgs, node_of, njobs, bench, nbench, nodes, res, d, false);
}

int train_sim_multi(const train_config *const *cfgs, const uint32_t *const *node_of,
		    uint32_t njobs, uint32_t nodes, train_result *res, diag *d)
{
	return train_sim_shared(cfgs, node_of, njobs, NULL, 0, nodes, res, d);
}

/* cfg alone on its cluster, simulated or (dry) only built and checked. */
static int sim_alone(const train_config *cfg, train_result *res, diag *d, bool dry)
{
	uint32_t *ident = malloc((cfg->fabric.nodes ? cfg->fabric.nodes : 1) * sizeof *ident);
	const uint32_t *map = ident;
	int rc;
	if (!ident)
		return SIM_ENOMEM;
	for (uint32_t n = 0; n < cfg->fabric.nodes; n++)
		ident[n] = n;
	rc = sim_shared(&cfg, &map, 1, NULL, 0, cfg->fabric.nodes, res, d, dry);
	free(ident);
	return rc;
}

int train_sim(const train_config *cfg, train_result *res, diag *d)
{
	return sim_alone(cfg, res, d, false);
}

int train_check(const train_config *cfg, diag *d)
{
	train_result res;
	return sim_alone(cfg, &res, d, true);
}

void train_result_release(train_result *res)
{
	free(res->iter_s);
	res->iter_s = NULL;
}
