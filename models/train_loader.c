/* The training simulation's data loader: a replica's reads from storage
 * (network, local NVMe, page cache) and their decoding on host cores. */
#include "models/train_int.h"

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
		train_try_run(tr, &tr->st[l->d * tr->P]);
}

static void decode_start(trainer *tr, loader *l, uint64_t k);

/* A decode on shared cores ended: its worker takes the next waiting
 * microbatch (as a station hands its server on), then k is decoded. */
static void decode_flowed(sim_engine *eng, void *obj, uint64_t k)
{
	loader *l = obj;
	struct dec_wait *q = &l->tr->w->dec_wait[l->node];
	q->busy--;
	if (q->len > 0) {
		struct dec_item next = q->item[q->head];
		q->head = (q->head + 1) % q->cap;
		q->len--;
		decode_start(next.l->tr, next.l, next.k);
	}
	decoded(eng, l, k);
}

/* Microbatch k of loader l decoded by one worker on its node's host cores:
 * a flow of its core-seconds over the cores the network and storage stacks
 * cross too, at most one core's rate (a worker is one process), so the
 * decodes and the stacks share the cores max-min by what each asks. */
static void decode_start(trainer *tr, loader *l, uint64_t k)
{
	world *w = tr->w;
	double work = tr->cfg->micro_batch * tr->cfg->decode_core_s;
	double units = w->core_units[l->node], bytes = work * units;
	uint32_t res = w->cores_res[l->node];
	int rc;
	if (!(bytes < 0x1p63)) {
		train_fail_time(tr, SIM_EOVERFLOW, "decoding a microbatch", TRAIN_LOADER_HINT, work);
		return;
	}
	w->dec_wait[l->node].busy++;
	/* tag 0: no job's transfers (train_explain counts reads, not decodes) */
	flow_spec fs = { .bytes = bytes < 1 ? 1 : (uint64_t)ceil(bytes), .path = &res,
			 .path_len = 1, .cap_Bps = units, .done = decode_flowed, .obj = l,
			 .data = k, .cap_class = FAB_CLS_HOST_CORES };
	if ((rc = flow_start(w->net, &fs, NULL)))
		fail(tr, rc, "decoding a microbatch");
}

/* Decode k now if one of the job's loader workers on l's node is free,
 * else after those already waiting there. */
static void decode_submit(trainer *tr, loader *l, uint64_t k)
{
	struct dec_wait *q = &tr->w->dec_wait[l->node];
	if (q->busy < tr->cfg->workers) {
		decode_start(tr, l, k);
		return;
	}
	if (q->len == q->cap) { /* grow the ring, its items in order from 0 */
		uint32_t cap = q->cap ? 2 * q->cap : 16;
		struct dec_item *item = malloc(cap * sizeof *item);
		if (!item) {
			fail(tr, SIM_ENOMEM, "a decode's place in its queue");
			return;
		}
		for (uint32_t i = 0; i < q->len; i++)
			item[i] = q->item[(q->head + i) % q->cap];
		free(q->item);
		*q = (struct dec_wait){ .item = item, .len = q->len, .cap = cap, .busy = q->busy };
	}
	q->item[(q->head + q->len) % q->cap] = (struct dec_item){ .l = l, .k = k };
	q->len++;
}

static void storage_read(sim_engine *eng, void *obj, uint64_t k)
{
	loader *l = obj;
	trainer *tr = l->tr;
	const train_config *c = tr->cfg;
	double work = c->micro_batch * c->decode_core_s;
	sim_time dur;
	int rc;
	l->read_done[k % l->ring] = sim_now(eng);
	tr->w->node_core_s[l->node] += work;
	if (tr->w->cores_res[l->node] != UINT32_MAX && work > 0) {
		decode_submit(tr, l, k);
		return;
	}
	if (!train_ps(tr, work, "decoding a microbatch", TRAIN_LOADER_HINT, &dur))
		return;
	if ((rc = station_submit(tr->w->decoders[l->node], dur, decoded, l, k)))
		train_fail_time(tr, rc, "decoding a microbatch", TRAIN_LOADER_HINT, work);
}

static void storage_flowed(sim_engine *eng, void *obj, uint64_t k)
{
	loader *l = obj;
	double lat_s = l->tr->cfg->storage_io_lat_s;
	sim_time lat;
	int rc;
	if (!train_ps(l->tr, lat_s, "a storage IO's latency", TRAIN_LOADER_HINT, &lat))
		return;
	if ((rc = sim_schedule_in(eng, lat, storage_read, l, k, NULL)))
		train_fail_time(l->tr, rc, "a storage IO's latency", TRAIN_LOADER_HINT, lat_s);
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
static uint32_t stor_ingress(const trainer *tr, const loader *l, uint64_t k, uint32_t *nic_rank)
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
 * memory and down again, memory twice (the bounce resource). Fills path
 * and wt (at least 8), returns the length. */
static uint32_t local_path(const trainer *tr, const loader *l, uint32_t *path, double *wt)
{
	const train_config *c = tr->cfg;
	world *w = tr->w;
	uint32_t rank = rank_of(tr, l->d, 0, 0), g = rank % w->gpn, nics = c->fabric.nics_per_node;
	uint32_t near = l->node * w->gpn + (c->local_switch * w->gpn + nics - 1) / nics;
	uint32_t len = 0;
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
	return len;
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

/* The path of loader l's read k from storage server `server` (of the
 * servers') or the node's drives, with each entry's weight (path and wt of
 * at least 8, wt all 1 on entry); 0 when the read crosses no resource (a
 * page-cache hit, no storage, nothing to read). The issue and the horizon's
 * estimate (train.c read_s) take it from here. */
uint32_t train_read_path(const trainer *tr, const loader *l, uint64_t k, uint32_t server,
			 uint32_t *path, double *wt)
{
	const train_config *c = tr->cfg;
	double bytes = c->micro_batch * c->sample_bytes;
	uint32_t len = 0, nic_rank;
	if (page_cache_hit(c, l, k) || bytes < 1)
		return 0;
	if (c->local_Bps > 0)
		return local_path(tr, l, path, wt);
	if (c->storage_Bps <= 0)
		return 0;
	path[len++] = tr->w->stor_servers0 + server % tr->w->stor_servers;
	path[len] = stor_ingress(tr, l, k, &nic_rank);
	if (nic_rank != UINT32_MAX && c->storage_wire_w > 0) /* a compute NIC (train.h) */
		wt[len] = c->storage_wire_w;
	len++;
	if (tr->w->stor_res[l->node] != UINT32_MAX) {
		wt[len] = tr->w->stor_w[l->node];
		path[len++] = tr->w->stor_res[l->node];
	}
	push_landing(tr->w, rank_of(tr, l->d, 0, 0), nic_rank, !c->storage_direct, path, wt, &len);
	return len;
}

static void loader_issue(trainer *tr, loader *l, uint64_t k)
{
	const train_config *c = tr->cfg;
	double bytes = c->micro_batch * c->sample_bytes;
	uint32_t path[8], len;
	double wt[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	bool servers = c->local_Bps <= 0 && c->storage_Bps > 0;
	l->ready[k % l->ring] = 0;
	l->read_done[k % l->ring] = SIM_TIME_MAX;
	len = train_read_path(tr, l, k, servers ? (uint32_t)(tr->w->stor_rr % tr->w->stor_servers) : 0,
			      path, wt);
	if (len == 0)
		return storage_read(tr->w->eng, l, k);
	if (servers) {
		tr->w->stor_rr++;
		tr->w->node_core_s[l->node] += bytes * c->storage_core_s_per_byte;
		if (c->storage_engine_Bps > 0)
			tr->w->node_snap_bytes[l->node] += bytes;
	}
	flow_spec fs = { .bytes = (uint64_t)bytes, .path = path, .weights = wt, .path_len = len,
			 .done = storage_flowed, .obj = l, .data = k,
			 .tag = train_tag(tr, TRAIN_FLOWS_STORAGE) };
	int rc = flow_start(tr->w->net, &fs, NULL);
	if (rc)
		fail(tr, rc, servers ? "storage read" : "local storage read");
}

/* Keeps `prefetch` microbatches in flight ahead of consumption. */
void train_loader_fill(trainer *tr, loader *l)
{
	uint64_t end = (uint64_t)(tr->cfg->warmup + tr->cfg->iterations) * tr->M;
	while (l->issued < end && l->issued < l->consumed + tr->cfg->prefetch)
		loader_issue(tr, l, l->issued++);
}

void train_loader_consume(trainer *tr, loader *l)
{
	l->consumed++;
	train_loader_fill(tr, l);
}

int train_alloc_loaders(trainer *tr)
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
