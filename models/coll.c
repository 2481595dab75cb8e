/* Collectives as stage graphs over the flow solver (coll.h). Each
 * algorithm is one row of coll_algos (where it applies, its stage graph,
 * and its NCCL costs, coll_nccl.c); adding one is a row and a build
 * function.
 *
 * A hop set is the set of (src, dst) hops one step moves, named by a
 * pattern (ring shift, intra-node shift, rail shift, broadcast chain link,
 * tree level, in-network reduction); its union path is routed lazily at
 * its first use and freed after its last, so a ring's 2(n-1) steps route
 * once and an all-to-all never holds more than a window of shifts. */
#include "models/coll_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/alloc.h"
#include "sim/err.h"
#include "sim/rng.h"

#define DEFAULT_CHUNK ((uint64_t)512 * 1024) /* NCCL Simple: 4 MiB buffer / 8 steps */
#define MAX_CHUNKS 64
#define COLL_GRID_SLOTS 8 /* NCCL_STEPS: FIFO slots per connection (src/include/device.h) */
#define A2A_WINDOW 8 /* all-to-all shifts in flight at once */

static const char *const op_names[] = { COLL_OPS(COLL_OP_CLI_WORD_) };
static const char *const op_report_names[] = { COLL_OPS(COLL_OP_REPORT_WORD_) };

int coll_op_parse(const char *s, coll_op *op)
{
	for (int i = 0; i < COLL_NOPS; i++)
		if (s && !strcmp(s, op_names[i]))
			return *op = (coll_op)i, 0;
	return SIM_ENOENT;
}

int coll_algo_parse(const char *s, coll_algo *algo)
{
	for (int i = 0; i < COLL_NALGOS; i++)
		if (s && !strcmp(s, coll_algos[i].name))
			return *algo = (coll_algo)i, 0;
	return SIM_ENOENT;
}

static const char *const proto_names[] = {
	[COLL_PROTO_IDEAL] = "ideal", [COLL_PROTO_NCCL] = "nccl", [COLL_PROTO_LL] = "ll",
	[COLL_PROTO_LL128] = "ll128", [COLL_PROTO_SIMPLE] = "simple",
};

int coll_proto_parse(const char *s, coll_proto *proto)
{
	for (int i = 0; i < COLL_NPROTOS; i++)
		if (s && !strcmp(s, proto_names[i]))
			return *proto = (coll_proto)i, 0;
	return SIM_ENOENT;
}

const char *coll_proto_name(coll_proto p)
{
	return (unsigned)p < COLL_NPROTOS ? proto_names[p] : "?";
}

const char *coll_op_name(coll_op op) { return (unsigned)op < COLL_NOPS ? op_names[op] : "?"; }
const char *coll_algo_name(coll_algo a) { return (unsigned)a < COLL_NALGOS ? coll_algos[a].name : "?"; }

const char *coll_op_report_name(coll_op op)
{
	return (unsigned)op < COLL_NOPS ? op_report_names[op] : "?";
}

double coll_busbw_factor(coll_op op, uint32_t n)
{
#define BUSBW_(e, s, cli, scn, rep, busbw) \
	case e:                             \
		return busbw;
	switch (op) {
		COLL_OPS(BUSBW_)
	default:
		return 1.0;
	}
#undef BUSBW_
}
/* Room for nres resources; new entries start zero. */
static int scratch_fit(struct scratch *sc, size_t nres)
{
	uint32_t *m, *t;
	double *l;
	uint8_t *s;
	if (sc->n >= nres)
		return 0;
	if ((m = sim_realloc(sc->mult, nres * sizeof *m)))
		sc->mult = m;
	if ((l = sim_realloc(sc->load, nres * sizeof *l)))
		sc->load = l;
	if ((s = sim_realloc(sc->seen, nres * sizeof *s)))
		sc->seen = s;
	if ((t = sim_realloc(sc->touched, nres * sizeof *t)))
		sc->touched = t;
	if (!m || !l || !s || !t)
		return SIM_ENOMEM;
	memset(m + sc->n, 0, (nres - sc->n) * sizeof *m);
	memset(l + sc->n, 0, (nres - sc->n) * sizeof *l);
	memset(s + sc->n, 0, (nres - sc->n) * sizeof *s);
	sc->n = nres;
	return 0;
}

static void scratch_free(struct scratch *sc)
{
	if (!sc)
		return;
	free(sc->mult);
	free(sc->load);
	free(sc->seen);
	free(sc->touched);
	free(sc);
}

/* The channels of the whole fabric's context (coll_new): the configured
 * count, else one per NIC (one with one GPU a node), or NCCL's search's
 * for whole nodes where it is reproduced. */
static uint32_t fabric_channels(const fab_config *fc, const coll_config *cfg)
{
	uint32_t ch = cfg->channels ? cfg->channels : fc->gpus_per_node > 1 ? fc->nics_per_node : 1;
	if (!cfg->channels && fc->nodes > 1 && fc->gpus_per_node > 1) {
		uint32_t nc = coll_nccl_net_channels(fc, cfg, fc->gpus_per_node, fc->nodes);
		if (nc)
			ch = nc;
	}
	return ch;
}

/* A group's channels (view_new) with g members on each of `nodes` nodes,
 * its context running ctx_channels: two with one member a node, else at
 * most one per member and the context's; where NCCL's search across nodes
 * is reproduced (one GPU per node, or GPUs with a NIC each: whole nodes, or
 * the gpn / tp of a group tp apart), its count instead. A group inside one
 * node runs on NCCL's NVLink channels where they are known (node_channels),
 * as many for two GPUs of an NVSwitch node as for eight: NCCL's ring search
 * there fits rings to each GPU's NVLink bandwidth, not to the NICs
 * (coll_nccl_nvswitch_ring), so a node's NIC count does not change them. */
static uint32_t group_channels(uint32_t ctx_channels, const fab_config *fc,
			       const coll_config *cfg, uint32_t g, uint32_t nodes)
{
	uint32_t ch = g > 1 ? (ctx_channels < g ? ctx_channels : g) : 2;
	if (nodes == 1 && g > 1 && cfg->node_channels)
		ch = cfg->node_channels;
	if (nodes > 1) {
		uint32_t nc = coll_nccl_net_channels(fc, cfg, g, nodes);
		if (nc)
			ch = nc;
	}
	return ch;
}

uint32_t coll_ring_channels(const fab_config *fc, const coll_config *cfg, uint32_t g,
			    uint32_t nodes)
{
	return group_channels(fabric_channels(fc, cfg), fc, cfg, g, nodes);
}

uint32_t coll_p2p_channels(const fab_config *fc, const coll_config *cfg, uint32_t nranks)
{
	uint32_t ring = coll_ring_channels(fc, cfg, 1, nranks), n = 2;
	uint32_t p2p = ring < 32 ? ring : 32; /* MAXCHANNELS */
	while ((uint64_t)n * nranks > 4ull * p2p && n > 1)
		n /= 2;
	return n < p2p ? n : p2p > 0 ? p2p : 1; /* 1 or 2: already powers of two */
}

/* A collective over a group runs on a view: a copy of the context whose
 * position i is fabric rank ranks[i], with the group's own node structure
 * (members per node when they come node by node, evenly; else one). A
 * group with one member per node runs on two channels (NCCL's own count
 * where its search is reproduced, coll_nccl_net_channels: 4 for one H100
 * per node on NDR): NCCL's search finds one per NIC path and
 * ncclTopoPostset doubles them (NVIDIA/nccl src/graph/connect.cc,
 * "Duplication should be complete now"), so its
 * ring has two connections to each peer and each of its trees half of
 * them (coll_tree_channels). With one channel the ring held one TCP
 * connection where the two trees held two. */
static int view_new(const coll_ctx *c, const coll_params *p, coll_ctx **out)
{
	uint32_t n = p->nranks, g = 1, gpn = c->gpn;
	coll_ctx *v;
	if (n < 2)
		return SIM_EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (p->ranks[i] >= c->n)
			return SIM_EINVAL;
	while (g < n && p->ranks[g] / gpn == p->ranks[0] / gpn)
		g++;
	for (uint32_t i = 0; i < n && g > 1; i++)
		if (n % g || p->ranks[i] / gpn != p->ranks[i - i % g] / gpn ||
		    (i % g == 0 && i && p->ranks[i] / gpn == p->ranks[i - 1] / gpn))
			g = 1;
	if (!(v = sim_malloc(sizeof *v)))
		return SIM_ENOMEM;
	*v = *c;
	v->n = n, v->gpn = g, v->nodes = n / g;
	v->channels = group_channels(c->channels, fab_cfg(c->f), &c->cfg, g, v->nodes);
	v->is_view = true;
	if (!(v->map = sim_malloc(n * sizeof *v->map))) {
		free(v);
		return SIM_ENOMEM;
	}
	memcpy(v->map, p->ranks, n * sizeof *v->map);
	*out = v;
	return 0;
}

static void view_free(coll_ctx *v)
{
	if (!v || !v->is_view)
		return;
	free(v->map);
	free(v);
}

int coll_ctx_new(sim_engine *eng, flow_net *net, fab *f, const coll_config *cfg, coll_ctx **out)
{
	coll_ctx *c;
	*out = NULL;
	if (cfg->launch_lat_ps < 0 || cfg->transport.msg_lat_ps < 0 || cfg->transport.jitter_mean_ps < 0 ||
	    (unsigned)cfg->proto >= COLL_NPROTOS)
		return SIM_EINVAL;
	c = sim_calloc(1, sizeof *c);
	if (!c)
		return SIM_ENOMEM;
	*c = (coll_ctx){ .eng = eng, .net = net, .f = f, .cfg = *cfg, .n = fab_ranks(f),
			 .gpn = fab_cfg(f)->gpus_per_node, .nodes = fab_cfg(f)->nodes };
	if (!c->cfg.chunk_bytes)
		c->cfg.chunk_bytes = DEFAULT_CHUNK;
	c->channels = fabric_channels(fab_cfg(f), cfg);
	c->root = c;
	c->rng = sim_rng_new(cfg->seed, "coll.jitter");
	c->sc = sim_calloc(1, sizeof *c->sc);
	if (!c->rng || !c->sc) {
		sim_rng_free(c->rng);
		free(c->sc);
		free(c);
		return SIM_ENOMEM;
	}
	*out = c;
	return 0;
}

static void abandon_runs(coll_ctx *c);
static void memo_free(struct coll_memo *m);
static void route_memo_free(struct route_memo *m);

void coll_ctx_free(coll_ctx *c)
{
	if (!c)
		return;
	abandon_runs(c);
	memo_free(c->memo);
	route_memo_free(c->routes);
	sim_rng_free(c->rng);
	scratch_free(c->sc);
	free(c);
}

/* ---- hop sets ---- */

/* One hop; tag tells connections apart (a ring's channel) for ECMP. */
typedef void hop_fn(void *ctx, uint32_t src, uint32_t dst, uint32_t tag);

/* Position p of ring channel ch: nodes in order, and inside each node the
 * GPUs rotated by ch, so each channel leaves the node through another
 * GPU's NIC (as NCCL lays its rings out). */
static uint32_t ring_rank(uint32_t g, uint32_t ch, uint32_t p)
{
	return p - p % g + (p % g + ch) % g;
}

static uint32_t tree_rank(uint32_t n, uint32_t tree, uint32_t pos)
{
	return tree ? n - 1 - pos : pos; /* the second tree mirrors the first */
}

static uint32_t depth_of(uint32_t pos)
{
	uint32_t d = 0;
	while (pos + 1 >= (UINT32_C(2) << d))
		d++;
	return d;
}

/* Calls fn for every hop of h. */
static void for_each_hop(const coll_ctx *c, const hopset *h, uint32_t root, hop_fn *fn, void *ctx)
{
	uint32_t n = c->n, g = c->gpn;
	switch (h->kind) {
	case H_SHIFT:
		for (uint32_t r = 0; r < n; r++)
			fn(ctx, r, (r + h->step) % n, 0);
		break;
	case H_RING:
		for (uint32_t ch = 0; ch < h->channels; ch++)
			for (uint32_t p = 0; p < n; p++)
				fn(ctx, ring_rank(g, ch, p), ring_rank(g, ch, (p + 1) % n), ch);
		break;
	case H_INTRA:
		for (uint32_t r = 0; r < n; r++)
			fn(ctx, r, r - r % g + (r % g + h->step) % g, 0);
		break;
	case H_RAIL:
		for (uint32_t r = 0; r < n; r++)
			fn(ctx, r, ((r / g + h->step) % c->nodes) * g + r % g, 0);
		break;
	case H_CHAIN:
		fn(ctx, (root + h->step) % n, (root + h->step + 1) % n, 0);
		break;
	case H_TREE: {
		/* Channel ch's chain visits the node's GPUs rotated by ch (its
		 * ring's order, ring_rank), intra[0] first: link `step` joins
		 * intra[step - 1] and intra[step]; depth's hops join each node's
		 * intra[0] to its parent node's (coll_tree_channels). */
		uint32_t nt, ch0 = coll_tree_channels(c->channels, h->tree, &nt);
		for (uint32_t j = 0; j < nt; j++) {
			uint32_t ch = (ch0 + j) % c->channels;
			if (h->step) {
				for (uint32_t nd = 0; nd < c->nodes; nd++) {
					uint32_t a = nd * g + (h->step - 1 + ch) % g, b = nd * g + (h->step + ch) % g;
					if (h->down)
						fn(ctx, a, b, ch);
					else
						fn(ctx, b, a, ch);
				}
				continue;
			}
			uint32_t lo = (UINT32_C(1) << h->depth) - 1, hi = (UINT32_C(2) << h->depth) - 2;
			for (uint32_t p = lo; p <= hi && p < c->nodes; p++) {
				uint32_t child = tree_rank(c->nodes, h->tree, p) * g + ch % g;
				uint32_t parent = tree_rank(c->nodes, h->tree, (p - 1) / 2) * g + ch % g;
				if (h->down)
					fn(ctx, parent, child, ch);
				else
					fn(ctx, child, parent, ch);
			}
		}
		break;
	}
	default:
		break;
	}
}

struct build_ctx {
	coll_ctx *c;
	hopset *h;
	uint64_t key;
	int rc;
	double nccl_sum_us, nccl_max_us; /* NCCL per-hop latencies of the step */
	uint32_t hops;
};

static int hs_push(hopset *h, uint32_t res)
{
	if (sim_grow_u32(&h->path, &h->cap, h->len + 1, sizeof *h->path, 16))
		return SIM_ENOMEM;
	h->path[h->len++] = res;
	return 0;
}

/* Whether the hop from group position src to dst goes through the NICs
 * (fab_leaves_node, fab_route's own test, which training's pipeline sends
 * take too). */
static bool hop_is_net(const coll_ctx *c, uint32_t src, uint32_t dst)
{
	return fab_leaves_node(c->f, rank_at(c, src), rank_at(c, dst));
}

/* NCCL's latency of the hop (a step's, at its protocol): summed and
 * maxed for set_nccl_lat. */
static void add_nccl_hop(void *obj, uint32_t src, uint32_t dst, uint32_t tag)
{
	struct build_ctx *b = obj;
	double us;
	(void)tag;
	if (b->rc || src == dst)
		return;
	us = coll_nccl_hop_us(b->c, b->h->nccl_proto, src, dst);
	b->nccl_sum_us += us, b->hops++;
	b->nccl_max_us = fmax(b->nccl_max_us, us);
}

static void add_hop(void *obj, uint32_t src, uint32_t dst, uint32_t tag)
{
	struct build_ctx *b = obj;
	fab_end end = coll_transport_end(b->c->cfg.transport.kind);
	fab_path p;
	if (b->rc || src == dst)
		return;
	if (hop_is_net(b->c, src, dst))
		b->h->net = true;
	b->rc = fab_route(b->c->f, rank_at(b->c, src), rank_at(b->c, dst), b->key << 32 | tag, end, end,
			  &p);
	for (uint32_t i = 0; i < p.len && !b->rc; i++)
		b->rc = hs_push(b->h, p.res[i]);
	if (p.lat_ps > b->h->lat_ps)
		b->h->lat_ps = p.lat_ps;
	if (b->h->nccl)
		add_nccl_hop(b, src, dst, tag);
}

/* NCCL's latency of a lock-step step. A ring has no barrier between steps:
 * a chunk crosses its 2(n-1) hops one after another, so each step is
 * charged the ring's mean hop latency and the chunk's hops add up to
 * NCCL's (steps - inter) * intra + inter * net. Other steps wait for their
 * slowest hop. */
static void set_nccl_lat(struct build_ctx *b)
{
	double us = b->h->kind == H_RING && b->hops ? b->nccl_sum_us / b->hops : b->nccl_max_us;
	b->h->nccl_lat_ps = b->h->nccl ? us_ps(us) : 0;
}

/* The resources of a node-end path (fab_node_path) onto h. */
static int push_node_path(hopset *h, const fab_path *p)
{
	int rc = 0;
	for (uint32_t i = 0; i < p->len && !rc; i++)
		rc = hs_push(h, p->res[i]);
	return rc;
}

/* In-network reduction: every rank's links to the reducing switch and back
 * (and, on two tiers, every leaf's first uplink to the aggregation root).
 * SHARP's bytes leave and enter each node as any network transfer of the
 * transport does: from host memory (rdma) they cross PCIe and the memory
 * bus, and the node's attached resources (stack, DPU engines) see them. */
static int build_innet(coll_ctx *c, hopset *h)
{
	fab_end end = coll_transport_end(c->cfg.transport.kind);
	int rc = 0;
	fab_path p;
	h->net = h->kind == H_SHARP;
	for (uint32_t r = 0; r < c->n && !rc; r++) {
		uint32_t up = h->kind == H_NVLS ? fab_nvl_up(c->f, rank_at(c, r)) : fab_nic_up(c->f, rank_at(c, r));
		uint32_t down = h->kind == H_NVLS ? fab_nvl_down(c->f, rank_at(c, r))
						 : fab_nic_down(c->f, rank_at(c, r));
		if (h->kind == H_SHARP && !fab_node_path(c->f, rank_at(c, r), end, false, &p))
			rc = push_node_path(h, &p);
		if (!rc && !(rc = hs_push(h, up)))
			rc = hs_push(h, down);
		if (!rc && h->kind == H_SHARP && !fab_node_path(c->f, rank_at(c, r), end, true, &p))
			rc = push_node_path(h, &p);
	}
	for (uint32_t l = 0; h->kind == H_SHARP && l < fab_leaves(c->f) && !rc; l++) {
		uint32_t up = fab_leaf_up(c->f, l, 0);
		if (up != UINT32_MAX && !(rc = hs_push(h, up)))
			rc = hs_push(h, up + 1);
	}
	if (!rc && c->n > 1) {
		/* Up to the top of the reduction and back down: the longest route, twice. */
		fab_route(c->f, rank_at(c, 0), rank_at(c, c->n - 1), 0, end, end, &p);
		h->lat_ps = 2 * p.lat_ps;
	}
	return rc;
}

static bool is_innet(const hopset *h) { return h->kind == H_SHARP || h->kind == H_NVLS; }

static int hs_route(coll_ctx *c, hopset *h, uint32_t root)
{
	/* Ring channel ch routes with key ch (coll.h), and a tree's hops with
	 * its channel's, whose connections they share (coll_tree_channels);
	 * others by pattern. */
	struct build_ctx b = { .c = c, .h = h,
			       .key = h->kind == H_RING || h->kind == H_TREE ? 0 : h->kind };
	if (is_innet(h))
		return build_innet(c, h);
	if (fab_hold_begin(c->f))
		return SIM_ENOMEM;
	for_each_hop(c, h, root, add_hop, &b);
	fab_hold_end(c->f);
	set_nccl_lat(&b);
	return b.rc;
}

/* ---- routes remembered ----
 *
 * A hop set's route (its union path, longest hop latency, whether a hop
 * leaves its node) follows from the group's ranks, the context's node
 * structure and channels, and the pattern: fab_route is a function of its
 * ends and key, but under adaptive routing, which reads the links' loads.
 * A training run starts each data-parallel group's ring again for every
 * gradient bucket, and prices it again each time (coll_nccl_channels): at
 * 16,384 GPUs, routing its 512 hops (10,496 resources) every time, then
 * reading and sorting them again to start the step's flow, was a fifth of
 * bench scale's run. So a root context remembers each route it builds,
 * and its hop sets borrow it: the same resources in the same order, so
 * every rate, load and flow is computed from the same numbers, to the bit.
 * It keeps with the route NCCL's step latency per protocol, the route's
 * uncapped rate (coll_hs_rate) and the path prepared for the flow solver
 * (flow_path_new), each made at its first use. Bounded (ROUTE_MAX_ENT
 * routes, ROUTE_MAX_IDS ranks and resource ids kept): past either, routes
 * are built afresh, to the same route. */
#define ROUTE_MAX_ENT (UINT32_C(1) << 16)
#define ROUTE_MAX_IDS (UINT32_C(1) << 24)

struct route_ent {
	uint64_t hash;
	uint32_t *ranks;        /* the group's fabric ranks by position (n) */
	uint32_t n, gpn, nodes, channels; /* the context's structure */
	uint32_t step, hchannels, tree, depth, root; /* the hop set's pattern */
	uint8_t kind;
	bool down;
	bool net;               /* the route */
	uint32_t *path, len;
	sim_time lat_ps;
	sim_time nccl_lat_ps[3]; /* per NCCL protocol (NP_*) with its bit in nccl_have */
	uint8_t nccl_have;
	double rate_Bps;        /* coll_hs_rate without caps; 0: not yet */
	flow_path *fp;          /* path prepared (NULL: not yet, or out of memory) */
};

struct route_memo {
	struct route_ent **e;   /* open addressing, cap a power of two, at most half full;
				 * entries allocated one by one: hop sets point at them */
	uint32_t cap, n;
	size_t ids;
};

/* Whether c's routes may be remembered: every route fixed. */
static bool route_applies(const coll_ctx *c)
{
	return fab_cfg(c->f)->routing != FAB_ADAPTIVE;
}

/* h's route in c as a key (hash and fields; ranks compared in place). */
static struct route_ent route_key(const coll_ctx *c, const hopset *h, uint32_t root)
{
	struct route_ent k = { .n = c->n, .gpn = c->gpn, .nodes = c->nodes, .channels = c->channels,
			       .step = h->step, .hchannels = h->channels, .tree = h->tree,
			       .depth = h->depth, .root = h->kind == H_CHAIN ? root : 0,
			       .kind = h->kind, .down = h->down };
	uint64_t v[10] = { k.n, k.gpn, k.nodes, k.channels, k.step, k.hchannels, k.tree, k.depth,
			   k.root, (uint64_t)k.kind << 1 | k.down };
	uint64_t x = UINT64_C(0xcbf29ce484222325);
	for (int i = 0; i < 10; i++)
		x = (x ^ v[i]) * UINT64_C(0x100000001b3);
	for (uint32_t i = 0; i < c->n; i++)
		x = (x ^ rank_at(c, i)) * UINT64_C(0x100000001b3);
	k.hash = x ^ x >> 29;
	return k;
}

static bool route_same(const struct route_ent *e, const struct route_ent *k, const coll_ctx *c)
{
	if (e->hash != k->hash || e->n != k->n || e->gpn != k->gpn || e->nodes != k->nodes ||
	    e->channels != k->channels || e->step != k->step || e->hchannels != k->hchannels ||
	    e->tree != k->tree || e->depth != k->depth || e->root != k->root ||
	    e->kind != k->kind || e->down != k->down)
		return false;
	if (c->map)
		return !memcmp(e->ranks, c->map, c->n * sizeof *e->ranks);
	for (uint32_t i = 0; i < c->n; i++)
		if (e->ranks[i] != i)
			return false;
	return true;
}

/* The slot of k's route in m (an entry), or of the empty slot it would take. */
static struct route_ent **route_slot(const struct route_memo *m, const struct route_ent *k,
				     const coll_ctx *c)
{
	uint32_t i = (uint32_t)k->hash & (m->cap - 1);
	while (m->e[i] && !route_same(m->e[i], k, c))
		i = (i + 1) & (m->cap - 1);
	return &m->e[i];
}

/* Doubles m's table (or makes its first): false when out of memory, m as it was. */
static bool route_grow(struct route_memo *m)
{
	uint32_t cap = m->cap ? 2 * m->cap : 64;
	struct route_ent **e = sim_calloc(cap, sizeof *e), **old = m->e;
	if (!e)
		return false;
	for (uint32_t i = 0; i < m->cap; i++) {
		uint32_t j;
		if (!old[i])
			continue;
		for (j = (uint32_t)old[i]->hash & (cap - 1); e[j]; j = (j + 1) & (cap - 1))
			;
		e[j] = old[i];
	}
	m->e = e;
	m->cap = cap;
	free(old);
	return true;
}

/* NCCL's step latency of h (at its protocol) into h, from e's or by its
 * hops, as hs_route's set_nccl_lat sets it; an in-network reduction's it
 * never sets. */
static int route_nccl_lat(coll_ctx *c, hopset *h, struct route_ent *e, uint32_t root)
{
	struct build_ctx b = { .c = c, .h = h };
	if (is_innet(h))
		return 0;
	if (h->nccl && h->nccl_proto < 3 && (e->nccl_have >> h->nccl_proto & 1)) {
		h->nccl_lat_ps = e->nccl_lat_ps[h->nccl_proto];
		return 0;
	}
	if (h->nccl)
		for_each_hop(c, h, root, add_nccl_hop, &b);
	set_nccl_lat(&b);
	if (h->nccl && h->nccl_proto < 3) {
		e->nccl_lat_ps[h->nccl_proto] = h->nccl_lat_ps;
		e->nccl_have |= (uint8_t)(1u << h->nccl_proto);
	}
	return b.rc;
}

/* h, just routed, gives its route to c's root to remember, and borrows it
 * from there; unless past the bounds or out of memory: then it keeps it. */
static void route_put(coll_ctx *c, hopset *h, const struct route_ent *k)
{
	coll_ctx *root = c->root;
	struct route_memo *m = root->routes;
	struct route_ent *e, **slot;
	uint32_t *path = h->path;
	if (!m && !(m = root->routes = sim_calloc(1, sizeof *m)))
		return;
	if (m->n >= ROUTE_MAX_ENT || (size_t)c->n + h->len > ROUTE_MAX_IDS - m->ids ||
	    (2 * (m->n + 1) > m->cap && !route_grow(m)))
		return;
	if (!(e = sim_malloc(sizeof *e)))
		return;
	*e = *k;
	if (!(e->ranks = sim_malloc(c->n * sizeof *e->ranks))) {
		free(e);
		return;
	}
	for (uint32_t i = 0; i < c->n; i++)
		e->ranks[i] = rank_at(c, i);
	if (h->len && h->len < h->cap && (path = sim_realloc(h->path, h->len * sizeof *path)))
		h->path = path; /* no room left over, kept for the run */
	e->path = h->path, e->len = h->len, e->lat_ps = h->lat_ps, e->net = h->net;
	if (h->nccl && h->nccl_proto < 3 && !is_innet(h)) {
		e->nccl_lat_ps[h->nccl_proto] = h->nccl_lat_ps;
		e->nccl_have = (uint8_t)(1u << h->nccl_proto);
	}
	slot = route_slot(m, k, c);
	*slot = e;
	m->n++;
	m->ids += (size_t)c->n + h->len;
	h->route = e;
	h->cap = h->len;
}

static void route_memo_free(struct route_memo *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->e[i]) {
			free(m->e[i]->ranks);
			free(m->e[i]->path);
			flow_path_free(m->e[i]->fp);
			free(m->e[i]);
		}
	free(m->e);
	free(m);
}

/* h's route, remembered in c's root (route_put): borrowed, or NULL. */
static struct route_ent *route_find(const coll_ctx *c, const struct route_ent *k)
{
	const struct route_memo *m = c->root->routes;
	return m ? *route_slot(m, k, c) : NULL;
}

int coll_hs_build(coll_ctx *c, hopset *h, uint32_t root)
{
	struct route_ent k, *e;
	int rc;
	if (!route_applies(c))
		return hs_route(c, h, root);
	k = route_key(c, h, root);
	if ((e = route_find(c, &k))) {
		h->path = e->path, h->len = e->len, h->cap = e->len;
		h->lat_ps = e->lat_ps, h->net = e->net;
		h->route = e;
		return route_nccl_lat(c, h, e, root);
	}
	if (!(rc = hs_route(c, h, root)))
		route_put(c, h, &k);
	return rc;
}

/* The path of h's remembered route prepared for its flows (made at the
 * first launch), or NULL: the flow starts on the path itself, the same. */
static flow_path *hs_prepared(coll_ctx *c, const hopset *h)
{
	struct route_ent *e = h->route;
	if (!e || !e->len)
		return NULL;
	if (!e->fp && flow_path_new(c->net, e->path, NULL, e->len, &e->fp))
		e->fp = NULL;
	return e->fp;
}

void coll_hs_drop(coll_ctx *c, hopset *h)
{
	int rc = h->has_kept ? flow_release(c->net, h->kept) : 0;
	SIM_ASSERT(!rc, "a collective released a running flow (a model bug)");
	h->has_kept = false;
	free(h->w);
	h->w = NULL;
	h->weighed = false;
	if (!h->route)
		free(h->path);
	h->route = NULL;
	h->path = NULL;
	h->len = h->cap = 0;
}

/* The transport's cap on h's flow (0: none): one connection's. The
 * estimate and the run both take it from here. */
static double flow_cap_Bps(const coll_ctx *c, const hopset *h)
{
	double cap = c->cfg.transport.conn_cap_Bps;
	return h->net && cap > 0 ? cap : 0;
}

/* Uncontended rate of a lock-step hop set: min over resources of capacity
 * over the number of times the set crosses it, and with caps, the
 * transport's cap on its connections. */
static bool pooled(const coll_ctx *c, uint32_t res);

/* Min over h's resources of capacity over the times h crosses it, a
 * pooled one's at pool_w of a byte (wire_weights); 0 out of memory. */
static double path_rate(coll_ctx *c, const hopset *h, double pool_w)
{
	double rate = INFINITY;
	uint32_t *mult;
	if (scratch_fit(c->sc, flow_res_count(c->net)))
		return 0;
	mult = c->sc->mult;
	for (uint32_t i = 0; i < h->len; i++)
		mult[h->path[i]]++;
	for (uint32_t i = 0; i < h->len; i++) {
		uint32_t r = h->path[i];
		if (mult[r]) {
			double w = pool_w != 1 && pooled(c, r) ? pool_w : 1;
			rate = fmin(rate, flow_res_cap_Bps(c->net, r) / (mult[r] * w));
			mult[r] = 0;
		}
	}
	return rate;
}

double coll_hs_rate(coll_ctx *c, const hopset *h, bool caps)
{
	double rate;
	if (h->route && h->route->rate_Bps > 0) {
		rate = h->route->rate_Bps; /* the same path's, below */
	} else {
		rate = path_rate(c, h, 1);
		if (h->route && rate > 0)
			h->route->rate_Bps = rate;
	}
	if (caps && flow_cap_Bps(c, h) > 0)
		rate = fmin(rate, flow_cap_Bps(c, h));
	return rate;
}

/* Whether resource res is a node's pooled one (host cores, host memory,
 * an engine): it carries a stage's bytes that exist, not its link time
 * (wire_weights). */
static bool pooled(const coll_ctx *c, uint32_t res)
{
	uint8_t k = flow_res_class(c->net, res);
	return k == FAB_CLS_HOST_CORES || k == FAB_CLS_HOST_MEM || k == FAB_CLS_ENGINE;
}

/* coll_hs_rate of r's hop set h under r's weights: a pooled resource
 * carries pool_w of each stage byte, a connection's cap conn_w. */
static double hs_rate_of(coll_ctx *c, const collective *r, const hopset *h, bool caps)
{
	double rate, cap;
	if (r->pool_w == 1 && r->conn_w == 1)
		return coll_hs_rate(c, h, caps);
	rate = path_rate(c, h, r->pool_w);
	if (caps && (cap = flow_cap_Bps(c, h)) > 0)
		rate = fmin(rate, cap / r->conn_w);
	return rate;
}

/* A step's latency: its longest hop path plus the transport's per-message
 * latency, or NCCL's per-step figure when that is longer (NCCL's figure is
 * measured end to end, so it already holds the wire and the adapter). The
 * transport's latency is the network adapter's and host stack's: a step
 * that never leaves its node (NVLink, NVLS) does not pay it, as it pays no
 * connection cap and no host cycles (a collective on one node costs what
 * the training model's tensor-parallel all-reduce costs). */
static sim_time step_lat(const coll_ctx *c, const hopset *h)
{
	sim_time phys = h->lat_ps + (h->net ? c->cfg.transport.msg_lat_ps : 0);
	return h->nccl_lat_ps > phys ? h->nccl_lat_ps : phys;
}

/* The latency stage st pays: its step's, once per loop it stands for and,
 * on a step that stays inside the node, once per NCCL slice of the chunk:
 * there the GPU's own threads wait for the peer's flag, move the slice and
 * post their own before the next slice (NVIDIA/nccl v2.18.5
 * src/collectives/device/prims_simple.h, genericOp: waitPeer, reduceCopy,
 * postPeer per slice), where a step that leaves the node is posted to the
 * network by the proxy thread, which keeps NCCL_STEPS (8) FIFO steps in
 * flight (src/transport/net.cc), so its slices overlap. */
static sim_time stage_lat(const coll_ctx *c, const hopset *h, const stage *st)
{
	sim_time per = h->net || h->slices < 2 ? 1 : h->slices;
	return step_lat(c, h) * (sim_time)st->reps * per;
}

/* ---- stage graphs ---- */

static uint32_t add_hs(collective *r, hopset h)
{
	if (r->rc)
		return NONE;
	if (sim_grow_u32(&r->hs, &r->hscap, r->nhs + 1, sizeof *r->hs, 8))
		return r->rc = SIM_ENOMEM, NONE;
	r->hs[r->nhs] = h;
	/* Lock-step steps carry NCCL's per-step latency; pipelined grids and
	 * in-network reductions carry it per collective (coll_nccl_coll_lat). */
	if (r->proto != COLL_PROTO_IDEAL &&
	    (h.kind == H_RING || h.kind == H_INTRA || h.kind == H_RAIL)) {
		r->hs[r->nhs].nccl = true;
		r->hs[r->nhs].nccl_proto = (uint8_t)coll_nccl_proto(r->proto);
		/* NCCL's tuner charges a step once (build's tuner): so does the choice. */
		if (!r->tuner)
			r->hs[r->nhs].slices = (uint8_t)coll_nccl_slices(r->p.op, coll_nccl_proto(r->proto));
	}
	return r->nhs++;
}

static uint32_t add_stage(collective *r, uint32_t hs, uint64_t bytes)
{
	if (r->rc)
		return NONE;
	if (sim_grow_u32(&r->st, &r->stcap, r->nst + 1, sizeof *r->st, 16))
		return r->rc = SIM_ENOMEM, NONE;
	r->st[r->nst] = (stage){ .hs = hs, .bytes = bytes, .reps = 1, .steps = 1 };
	r->hs[hs].refs++;
	return r->nst++;
}

/* from must finish (and its data arrive) before to starts. Stages are
 * created in an order where every edge goes forwards. */
static void link_stages(collective *r, uint32_t from, uint32_t to)
{
	if (r->rc || from == NONE || to == NONE)
		return;
	SIM_ASSERT(r->st[from].nsucc < 3 && from < to, "bad collective stage graph");
	r->st[from].succ[r->st[from].nsucc++] = to;
	r->st[to].deps++;
}

/* `steps` stages on hop set hs, one after another, after prev. */
uint32_t coll_chain(collective *r, uint32_t prev, uint32_t hs, uint32_t steps, uint64_t bytes)
{
	for (uint32_t i = 0; i < steps; i++) {
		uint32_t s = add_stage(r, hs, bytes);
		link_stages(r, prev, s);
		prev = s;
	}
	return prev;
}

/* Pipelined steps: chunk k of step s follows chunk k of step s-1 (its data),
 * chunk k-1 of step s (the same links, in order) and chunk k-w-1 of step
 * s+1: the receiver holds w chunks (NCCL_STEPS slots of the configured
 * chunk per connection, NVIDIA/nccl src/include/device.h, fewer when a
 * chunk is larger), so a step runs at most w chunks ahead of the next one,
 * which frees a slot as it forwards its chunk; without that bound a tree's
 * chains inside the node ran their whole share ahead of the NICs, all
 * steps at once on the same NVLinks. The slots free one by one while the
 * next step forwards chunk k-w, so chunk k may start once chunk k-w-1 is
 * through, not k-w: with chunks as large as the window (w = 1, a large
 * collective's chunks capped at MAX_CHUNKS) waiting for k-w made
 * neighbouring steps take turns, at half the links' rate. Created
 * anti-diagonal by anti-diagonal, the later step first, so every edge goes
 * forwards. */
static void grid(collective *r, const uint32_t *hs, uint32_t steps, uint32_t chunks, uint64_t bytes)
{
	/* in doubles: a --chunk near 2^64 bytes would wrap 8 x chunk_bytes */
	double slots = floor(COLL_GRID_SLOTS * (double)r->c->cfg.chunk_bytes / (double)(bytes ? bytes : 1));
	uint32_t w = !(slots >= 1) ? 1 : slots > chunks ? chunks : (uint32_t)slots;
	uint32_t *id = sim_malloc((size_t)steps * chunks * sizeof *id);
	if (!id) {
		r->rc = SIM_ENOMEM;
		return;
	}
	for (uint32_t d = 0; d + 1 < steps + chunks && !r->rc; d++)
		for (uint32_t s = d < steps ? d + 1 : steps; s-- > 0 && d - s < chunks;) {
			uint32_t k = d - s, at = id[(size_t)s * chunks + k] = add_stage(r, hs[s], bytes);
			if (s > 0)
				link_stages(r, id[(size_t)(s - 1) * chunks + k], at);
			if (k > 0)
				link_stages(r, id[(size_t)s * chunks + k - 1], at);
			if (k > w && s + 1 < steps)
				link_stages(r, id[(size_t)(s + 1) * chunks + k - w - 1], at);
		}
	free(id);
}

static uint32_t chunks_for(const coll_ctx *c, uint64_t bytes)
{
	uint64_t k = div_up(bytes ? bytes : 1, c->cfg.chunk_bytes);
	return (uint32_t)(k > MAX_CHUNKS ? MAX_CHUNKS : k);
}

static void build_tree(collective *r)
{
	uint32_t g = r->c->gpn, levels = depth_of(r->c->nodes - 1) + 1, nt;
	uint32_t steps = 2 * (g - 1 + levels - 1), *hs = sim_malloc((steps ? steps : 1) * sizeof *hs);
	uint64_t half = div_up(r->p.bytes, 2);
	if (!hs) {
		r->rc = SIM_ENOMEM;
		return;
	}
	for (uint32_t t = 0; t < 2 && !r->rc; t++) {
		/* Each of the tree's nt channels moves its 1/nt share of the
		 * half: up the chains, up the nodes' tree, down it, down the
		 * chains. */
		uint32_t s = 0, chunks;
		uint64_t share;
		coll_tree_channels(r->c->channels, t, &nt);
		share = div_up(half, nt);
		chunks = chunks_for(r->c, share);
		for (uint32_t i = g - 1; i >= 1; i--)
			hs[s++] = add_hs(r, (hopset){ .kind = H_TREE, .tree = t, .step = i });
		for (uint32_t d = levels - 1; d >= 1; d--)
			hs[s++] = add_hs(r, (hopset){ .kind = H_TREE, .tree = t, .depth = d });
		for (uint32_t d = 1; d < levels; d++)
			hs[s++] = add_hs(r, (hopset){ .kind = H_TREE, .tree = t, .depth = d, .down = true });
		for (uint32_t i = 1; i < g; i++)
			hs[s++] = add_hs(r, (hopset){ .kind = H_TREE, .tree = t, .step = i, .down = true });
		if (!r->rc && steps)
			grid(r, hs, steps, chunks, div_up(share, chunks));
	}
	free(hs);
}

static void build_ring(collective *r)
{
	uint32_t n = r->c->n;
	if (r->p.op == COLL_BROADCAST) {
		uint32_t chunks = chunks_for(r->c, r->p.bytes);
		uint32_t *hs = sim_malloc((n - 1) * sizeof *hs);
		if (!hs) {
			r->rc = SIM_ENOMEM;
			return;
		}
		for (uint32_t h = 0; h < n - 1; h++)
			hs[h] = add_hs(r, (hopset){ .kind = H_CHAIN, .step = h });
		if (!r->rc)
			grid(r, hs, n - 1, chunks, div_up(r->p.bytes, chunks));
		free(hs);
		return;
	}
	uint32_t ch = r->c->channels;
	/* Every channel moves its 1/ch share in lock-step with the others. */
	coll_ring_steps(r, NONE, add_hs(r, (hopset){ .kind = H_RING, .channels = ch }),
		   r->p.op == COLL_ALLREDUCE ? 2 * (n - 1) : n - 1, r->p.bytes, n, ch);
}

static void build_hier(collective *r)
{
	uint32_t g = r->c->gpn, nodes = r->c->nodes;
	uint32_t intra = add_hs(r, (hopset){ .kind = H_INTRA, .step = 1 }), last;
	/* Under NCCL each phase is a ring of its own with its own loops: the
	 * node's reduce-scatter and all-gather over S, the rail all-reduce
	 * over the node's 1/g share. */
	last = coll_ring_steps(r, NONE, intra, g - 1, r->p.bytes, g, 1);
	if (nodes > 1)
		last = coll_ring_steps(r, last, add_hs(r, (hopset){ .kind = H_RAIL, .step = 1 }), 2 * (nodes - 1),
				  div_up(r->p.bytes, g), nodes, 1);
	coll_ring_steps(r, last, intra, g - 1, r->p.bytes, g, 1);
}

static void build_p2p(collective *r)
{
	uint32_t n = r->c->n;
	if (r->p.op == COLL_SENDRECV) {
		add_stage(r, add_hs(r, (hopset){ .kind = H_SHIFT, .step = 1 }), r->p.bytes);
		return;
	}
	for (uint32_t k = 1; k < n && !r->rc; k++) {
		uint32_t s = add_stage(r, add_hs(r, (hopset){ .kind = H_SHIFT, .step = k }), div_up(r->p.bytes, n));
		if (k > A2A_WINDOW)
			link_stages(r, s - A2A_WINDOW, s);
	}
}

/* SHARP reaches NCCL through the NCCL-RDMA-SHARP plugin's CollNet
 * transport, an RDMA (InfiniBand verbs) transport (NVIDIA HPC-X 2.21
 * documentation, "NCCL-RDMA-SHARP Plugins"): never over the host's TCP. */
static bool sharp_transport(const coll_ctx *c)
{
	return c->cfg.transport.kind != COLL_HOST_TCP;
}

static bool ring_applies(const coll_ctx *c, coll_op op)
{
	(void)c;
	return op == COLL_ALLREDUCE || op == COLL_REDUCE_SCATTER || op == COLL_ALLGATHER ||
	       op == COLL_BROADCAST;
}

static bool tree_applies(const coll_ctx *c, coll_op op)
{
	(void)c;
	return op == COLL_ALLREDUCE;
}

static bool hier_applies(const coll_ctx *c, coll_op op)
{
	return op == COLL_ALLREDUCE && c->gpn > 1 && fab_cfg(c->f)->nvlink_Bps > 0;
}

static bool sharp_applies(const coll_ctx *c, coll_op op)
{
	const fab_config *fc = fab_cfg(c->f);
	return op == COLL_ALLREDUCE && c->cfg.sharp && sharp_transport(c) &&
	       (fc->topo == FAB_SINGLE_SWITCH || fc->topo == FAB_FAT_TREE2);
}

static bool nvls_applies(const coll_ctx *c, coll_op op)
{
	return op == COLL_ALLREDUCE && c->cfg.nvls && c->nodes == 1 &&
	       fab_cfg(c->f)->nvlink_Bps > 0 && (c->cfg.nccl_cc == 0 || c->cfg.nccl_cc >= 90);
}

static bool p2p_applies(const coll_ctx *c, coll_op op)
{
	(void)c;
	return op == COLL_ALLTOALL || op == COLL_SENDRECV;
}

/* Under NCCL's protocols the tree runs on the channels NCCL gives its size. */
static void build_nccl_tree(collective *r)
{
	if (r->proto != COLL_PROTO_IDEAL)
		r->nc = r->tuner ? r->c->channels : coll_nccl_channels(r);
	build_tree(r);
}

static void build_sharp(collective *r)
{
	add_stage(r, add_hs(r, (hopset){ .kind = H_SHARP }), r->p.bytes);
}

/* Each GPU sends its whole buffer up to be reduced and its 1/n share of the
 * result up to be multicast; receives the same amounts. */
static void build_nvls(collective *r)
{
	uint64_t bytes = div_up(r->p.bytes * (r->c->n + 1), r->c->n);
	add_stage(r, add_hs(r, (hopset){ .kind = H_NVLS }), bytes);
	/* Under NCCL: its pipeline's fill and drain (coll_nccl_nvls_fill_ps),
	 * which NCCL's tuner does not count. */
	if (r->proto != COLL_PROTO_IDEAL && !r->tuner && !r->rc)
		r->coll_lat_ps += coll_nccl_nvls_fill_ps(r, bytes);
}

const coll_algo_ops coll_algos[COLL_NALGOS] = {
	[COLL_AUTO] = { .name = "auto" },
	[COLL_RING] = { "ring", ring_applies, build_ring, false, coll_nccl_ring_bw,
			coll_nccl_ring_lat },
	[COLL_TREE] = { "tree", tree_applies, build_nccl_tree, false, coll_nccl_tree_bw,
			coll_nccl_tree_lat },
	[COLL_HIER] = { "hier", hier_applies, build_hier, false, coll_nccl_ring_bw,
			coll_nccl_ring_lat },
	[COLL_SHARP] = { "sharp", sharp_applies, build_sharp, true, coll_nccl_sharp_bw,
			 coll_nccl_sharp_lat },
	[COLL_NVLS] = { "nvls", nvls_applies, build_nvls, true, coll_nccl_nvls_bw,
			coll_nccl_nvls_lat },
	[COLL_P2P] = { "p2p", p2p_applies, build_p2p, true, NULL, NULL },
};

static bool applies(const coll_ctx *c, coll_op op, coll_algo a)
{
	return coll_algos[a].applies && coll_algos[a].applies(c, op);
}

/* The stage bytes build inflates by 1 / f (NCCL's protocol and tree
 * factors, fp, times the channels' share) stand for link time, not for
 * bytes that exist. What crosses a node's pooled resources (its host
 * cores, host memory and engines) is the data and the protocol's flags
 * (coll_nccl_wire_factor): f x wire of a stage byte; what one
 * connection's cores carry per stage byte is fp x wire (with fewer
 * channels the same bytes go over fewer connections, so each real one
 * carries what its stage bytes say). Until December 2026 the inflated
 * bytes were charged there too: LL's 1/4 as four times the data through
 * a host-TCP socket's cores and a node's inline engine, where its lines
 * double it. */
static void wire_weights(collective *r, double f, double fp)
{
	double wire = r->proto == COLL_PROTO_IDEAL ? 1 : coll_nccl_wire_factor(r->proto);
	r->pool_w = (f < 1 ? f : 1) * wire;
	r->conn_w = (fp < 1 ? fp : 1) * wire;
}

/* The stage graph of p under algo (hop sets not yet routed). tuner:
 * NCCL's protocols costed as NCCL's tuner costs them, on every channel in
 * one loop (tuning.cc charges its latency once and leaves the channel
 * count to enqueue), for choosing as NCCL chooses. */
static int build(coll_ctx *c, const coll_params *p, coll_algo algo, coll_proto proto, bool tuner,
		 collective *r)
{
	double f = coll_nccl_bw_factor(c, p->op, algo, proto, p->bytes), fp = f;
	*r = (collective){ .c = c, .p = *p, .algo = algo, .proto = proto, .tuner = tuner,
		     .coll_lat_ps = coll_nccl_coll_lat(c, p->op, algo, proto) };
	coll_algos[algo].build(r);
	/* A protocol that moves data at f of the link rate holds each link
	 * 1/f as long: its stages weigh bytes / f on the network. An NCCL ring
	 * or tree on nc of the context's channels moves at nc/channels of its rate:
	 * each channel is one thread block with its share of the bandwidth
	 * (NCCL 2.21.5 tuning.cc ncclTopoGetAlgoTime scales its bandwidth by
	 * nChannels / comm->nChannels the same way). */
	if (r->nc)
		f *= (double)r->nc / c->channels;
	wire_weights(r, f, fp);
	for (uint32_t s = 0; s < r->nst && f < 1 && !r->rc; s++) {
		/* The inputs bound a size (COLL_MAX_BYTES) far below this; a
		 * caller that does not is told, not handed a wrapped count. */
		double w = ceil((double)r->st[s].bytes / f);
		if (!(w < 0x1p64))
			r->rc = SIM_EOVERFLOW;
		else
			r->st[s].bytes = (uint64_t)w;
	}
	return r->rc;
}

static void free_run(collective *r)
{
	for (uint32_t i = 0; i < r->nhs; i++)
		coll_hs_drop(r->c, &r->hs[i]);
	free(r->hs);
	free(r->st);
}

static int check_params(const coll_ctx *c, const coll_params *p)
{
	if (c->n < 2 || (unsigned)p->op >= COLL_NOPS || (unsigned)p->algo >= COLL_NALGOS ||
	    (p->op == COLL_BROADCAST && p->root >= c->n))
		return SIM_EINVAL;
	if (p->algo != COLL_AUTO && !applies(c, p->op, p->algo))
		return SIM_EUNSUPPORTED;
	return 0;
}

/* Adds a hop set's bytes to the load of every resource on its path (a
 * pooled one's at pool_w, wire_weights), noting each resource the first
 * time it gets any. */
static void load_add(const coll_ctx *c, const hopset *h, double bytes, double pool_w)
{
	struct scratch *sc = c->sc;
	for (uint32_t i = 0; i < h->len; i++) {
		uint32_t r = h->path[i];
		if (!sc->seen[r])
			sc->seen[r] = 1, sc->touched[sc->ntouched++] = r;
		sc->load[r] += pool_w != 1 && pooled(c, r) ? bytes * pool_w : bytes;
	}
}

/* The busiest resource's total bytes over its capacity: no schedule can
 * beat it, and it is what pipelined stages sharing links come to. Only
 * the resources load_add touched can have load, so only they are scanned
 * (an untouched one's 0 / cap never raises the maximum), then cleared. */
static double load_bound_ps(coll_ctx *c)
{
	struct scratch *sc = c->sc;
	double worst = 0;
	for (size_t i = 0; i < sc->ntouched; i++) {
		uint32_t r = sc->touched[i];
		worst = fmax(worst, sc->load[r] / flow_res_cap_Bps(c->net, r) * 1e12);
		sc->load[r] = 0, sc->seen[r] = 0;
	}
	sc->ntouched = 0;
	return worst;
}

/* The busiest resource on h's path under the load in the scratch
 * (load_add), in ps. */
static double hs_load_ps(coll_ctx *c, const hopset *h)
{
	double worst = 0;
	for (uint32_t i = 0; i < h->len; i++) {
		uint32_t r = h->path[i];
		worst = fmax(worst, c->sc->load[r] / flow_res_cap_Bps(c->net, r) * 1e12);
	}
	return worst;
}

/* Each stage's time with the stages that can run beside it: a stage's wave
 * is one more than its latest predecessor's, so a wave's stages can run at
 * once (a pipelined grid's diagonal: each step's chunk beside the next
 * step's; both trees' steps of a level). A stage of a wave of several
 * takes at least what the wave puts on the busiest resource of its own
 * path (the wave's bytes there over its capacity), plus its latency; alone,
 * its bytes at its rate. Where a wave's stages share links, NVLink or a
 * GPU's port (the two trees' chains, a chunk's step up beside the next
 * chunk's step down) that is what they take together. rate[] per hop set,
 * the paths built (coll_hs_build); dur[] per stage, in ps. 0 or
 * SIM_ENOMEM. */
static int wave_durations(coll_ctx *c, const collective *r, const double *rate, double *dur)
{
	uint32_t nlev = 0, nprev = 0, nh = r->nhs ? r->nhs : 1, n = r->nst ? r->nst : 1;
	uint32_t *level = sim_calloc(n, sizeof *level), *first = NULL, *next = sim_malloc(n * sizeof *next);
	uint32_t *in = sim_malloc(nh * sizeof *in), *prev = sim_malloc(nh * sizeof *prev);
	uint32_t *in_wave = sim_calloc(nh, sizeof *in_wave); /* the wave + 1 it was listed in */
	double *hs_in = sim_calloc(nh, sizeof *hs_in), *prev_b = sim_malloc(nh * sizeof *prev_b);
	double *busy = sim_calloc(nh, sizeof *busy);
	int rc = level && next && in && prev && in_wave && hs_in && prev_b && busy ? 0 : SIM_ENOMEM;
	for (uint32_t s = 0; s < r->nst && !rc; s++) {
		for (uint32_t k = 0; k < r->st[s].nsucc; k++) {
			uint32_t t = r->st[s].succ[k];
			level[t] = level[t] > level[s] + 1 ? level[t] : level[s] + 1;
		}
		nlev = level[s] + 1 > nlev ? level[s] + 1 : nlev;
	}
	if (!rc && !(first = sim_malloc((nlev ? nlev : 1) * sizeof *first)))
		rc = SIM_ENOMEM;
	for (uint32_t l = 0; l < nlev && !rc; l++)
		first[l] = UINT32_MAX;
	for (uint32_t s = r->nst; s-- > 0 && !rc;)
		next[s] = first[level[s]], first[level[s]] = s;
	for (uint32_t l = 0; l < nlev && !rc; l++) {
		uint32_t nin = 0;
		bool same;
		for (uint32_t s = first[l]; s != UINT32_MAX; s = next[s]) {
			uint32_t h = r->st[s].hs;
			if (in_wave[h] != l + 1)
				in_wave[h] = l + 1, in[nin++] = h;
			hs_in[h] += (double)r->st[s].bytes;
		}
		/* each hop set's stages of the wave added up and routed once; a
		 * wave that loads the same hop sets with the same bytes as the
		 * one before (a grid's steady diagonals) loads them the same */
		same = nin == nprev;
		for (uint32_t i = 0; i < nin && same; i++)
			same = in[i] == prev[i] && hs_in[in[i]] == prev_b[i];
		if (!same && next[first[l]] != UINT32_MAX) {
			for (uint32_t i = 0; i < nin; i++)
				load_add(c, &r->hs[in[i]], hs_in[in[i]], r->pool_w);
			for (uint32_t i = 0; i < nin; i++)
				busy[in[i]] = hs_load_ps(c, &r->hs[in[i]]);
			load_bound_ps(c); /* clears the scratch */
		}
		if (!same) {
			for (uint32_t i = 0; i < nin; i++)
				prev[i] = in[i], prev_b[i] = hs_in[in[i]];
			/* a wave of one stage computes no load to reuse */
			nprev = next[first[l]] != UINT32_MAX ? nin : 0;
		}
		for (uint32_t i = 0; i < nin; i++)
			hs_in[in[i]] = 0;
		for (uint32_t s = first[l]; s != UINT32_MAX; s = next[s]) {
			const stage *st = &r->st[s];
			double alone = (double)st->bytes / rate[st->hs] * 1e12;
			if (next[first[l]] != UINT32_MAX)
				alone = fmax(alone, busy[st->hs]);
			dur[s] = alone + (double)stage_lat(c, &r->hs[st->hs], st);
		}
	}
	free(level);
	free(first);
	free(next);
	free(in);
	free(prev);
	free(in_wave);
	free(hs_in);
	free(prev_b);
	free(busy);
	return rc;
}

/* Estimate: the longer of the critical path (every stage at its
 * uncontended rate plus its latency; stages are numbered in dependency
 * order) and the busiest resource's load; in the run's own structure (not
 * NCCL's tuner's, which charges as NCCL does) each stage also at least
 * what its wave puts on its path (wave_durations), unless the estimate
 * without them already reaches cutoff_ps (then that one: a candidate that
 * has lost, choose). Each hop set is routed once, for its rate, its share
 * of the load and the waves. caps: coll_hs_rate's. The waves since
 * December 2026: without
 * them NCCL's tree, whose two trees' chains and pipelined steps share
 * NVLink ports and links, ran up to 68% longer than estimated (a median
 * 5.6% over 324 all-reduces, docs/collectives.md, "The tree's estimate
 * takes what runs beside each stage"), so the choice took it over a ring
 * that ran up to 33% faster. */
static int predict_graph(coll_ctx *c, collective *r, bool caps, double cutoff_ps, sim_time *t_ps)
{
	uint32_t nh = r->nhs ? r->nhs : 1;
	double *rate = sim_calloc(nh, sizeof *rate), *hs_bytes = sim_calloc(nh, sizeof *hs_bytes);
	double *end = sim_calloc(r->nst, sizeof *end), *start = sim_calloc(r->nst, sizeof *start);
	double *dur = sim_calloc(r->nst ? r->nst : 1, sizeof *dur);
	double total = 0, bound;
	int rc = rate && hs_bytes && end && start && dur ? 0 : SIM_ENOMEM;
	if (!rc)
		rc = scratch_fit(c->sc, flow_res_count(c->net));
	for (uint32_t s = 0; s < r->nst && !rc; s++)
		hs_bytes[r->st[s].hs] += (double)r->st[s].bytes;
	for (uint32_t h = 0; h < r->nhs && !rc; h++)
		if (!(rc = coll_hs_build(c, &r->hs[h], r->p.root))) {
			rate[h] = hs_rate_of(c, r, &r->hs[h], caps);
			load_add(c, &r->hs[h], hs_bytes[h], r->pool_w);
		}
	bound = load_bound_ps(c); /* also clears the scratch, on error too */
	for (uint32_t h = 0; h < r->nhs && !rc; h++)
		rc = rate[h] > 0 ? 0 : SIM_ENOMEM;
	for (uint32_t s = 0; s < r->nst && !rc; s++)
		dur[s] = (double)r->st[s].bytes / rate[r->st[s].hs] * 1e12 +
			 (double)stage_lat(c, &r->hs[r->st[s].hs], &r->st[s]);
	for (int pass = 0; pass < 2 && !rc; pass++) {
		/* pass 1 adds the waves, which only lengthen stages: skipped
		 * where the stages alone already reach cutoff_ps */
		if (pass == 1 && (r->tuner || !(ceil(fmax(total, bound)) + (double)c->cfg.launch_lat_ps +
						 (double)r->coll_lat_ps < cutoff_ps)))
			break;
		if (pass == 1 && (rc = wave_durations(c, r, rate, dur)))
			break;
		total = 0;
		for (uint32_t s = 0; s < r->nst; s++)
			start[s] = 0;
		for (uint32_t s = 0; s < r->nst; s++) {
			const stage *st = &r->st[s];
			end[s] = start[s] + dur[s];
			for (uint32_t k = 0; k < st->nsucc; k++)
				start[st->succ[k]] = fmax(start[st->succ[k]], end[s]);
			total = fmax(total, end[s]);
		}
	}
	for (uint32_t h = 0; h < r->nhs; h++)
		coll_hs_drop(c, &r->hs[h]);
	/* An estimate past the end of time (1e19 bytes, a 1e-300 B/s link) is
	 * SIM_TIME_MAX: the cast of a larger double is undefined. */
	if (!rc) {
		total = ceil(fmax(total, bound)) + (double)c->cfg.launch_lat_ps +
			(double)r->coll_lat_ps;
		*t_ps = total < (double)SIM_TIME_MAX ? (sim_time)total : SIM_TIME_MAX;
	}
	free(rate);
	free(hs_bytes);
	free(end);
	free(start);
	free(dur);
	return rc;
}

/* predict_graph of algo under proto; a figure of cutoff_ps or more may be
 * any such (the candidate has lost: choose), INFINITY for the estimate. */
static int predict_on(coll_ctx *c, const coll_params *p, coll_algo algo, coll_proto proto,
		      bool caps, bool tuner, double cutoff_ps, sim_time *t_ps)
{
	collective r;
	int rc = build(c, p, algo, proto, tuner, &r);
	if (!rc)
		rc = predict_graph(c, &r, caps, cutoff_ps, t_ps);
	free_run(&r);
	return rc;
}

/* The algorithm and protocol of lowest predicted time: over every
 * algorithm that applies (or p->algo alone) and every protocol the context
 * allows. Ties go to the first (Ring before Tree, LL before Simple). A
 * single candidate is taken without predicting unless t_ps wants its time.
 * Each of NCCL's candidates is charged the longer of two figures. NCCL's
 * tuner's (build's tuner: NCCL chooses without its per-size channels and
 * loops; its tree by NCCL's own figure, coll_nccl_tuner_tree_ps, from the
 * ring graph's bus bandwidth, found once for the tree's protocols), so
 * that nothing NCCL puts behind another candidate runs in its place. And
 * the run's own (the stage graph as the simulation runs it: the channels
 * and loops of the size, a Simple step's slices), so that nothing the
 * simulation itself makes slower than another candidate is chosen (issue
 * 16, faster links never slower): with NCCL's figure alone, 1 MiB over 8
 * nodes of one A100 ran the ring (LL128) at 100 Gb/s in 344 us and the tree
 * at 200 Gb/s in 477 us, and at 800 Gb/s ring/LL, whose loops of 14 steps
 * pay their latency one after another, in 360 us where LL128 takes 159.
 * Where the two agree on the winner, NCCL's choice stands.
 * Neither figure sees a connection's CPU limit, as NCCL does not: its
 * tuner takes the network's bandwidth from the NIC's speed
 * (src/graph/tuning.cc: the graph's bwInter, from the topology's net
 * speed), the socket transport's as RDMA's, so the candidates are ranked
 * without the transport's per-connection cap (coll_hs_rate's caps), and
 * host TCP runs what RDMA
 * runs on the same links. Ranked with the cap (and the pair's ring on one
 * channel, view_new), a data-parallel pair's two trees (a TCP connection
 * each) beat its ring (one) under TCP but not under RDMA: the transports
 * ran different algorithms on different ECMP routes, and in training,
 * where collisions and the node's memory bus shared by its other GPUs'
 * groups hold the flows below the cap, TCP's tree was the slower and RDMA
 * was predicted slower than TCP (issue 16). *t_ps, which coll_predict
 * reports, is the winner's time with the cap. */
static int choose(coll_ctx *c, const coll_params *p, coll_algo *algo, coll_proto *proto,
		  sim_time *t_ps)
{
	struct { coll_algo a; coll_proto pr; } cand[COLL_NALGOS * COLL_NPROTOS];
	sim_time best = SIM_TIME_MAX;
	double graph = 0; /* the ring graph's bus bandwidth, for the tree's tuner figure */
	uint32_t n = 0;
	for (int a = COLL_RING; a < COLL_NALGOS; a++)
		for (int pr = COLL_PROTO_IDEAL; pr < COLL_NPROTOS; pr++)
			if (applies(c, p->op, (coll_algo)a) &&
			    (p->algo == COLL_AUTO ? a != COLL_HIER : a == (int)p->algo) &&
			    coll_nccl_proto_applies(c, (coll_algo)a, (coll_proto)pr))
				cand[n].a = (coll_algo)a, cand[n++].pr = (coll_proto)pr;
	if (n == 0)
		return SIM_EUNSUPPORTED;
	*algo = cand[0].a, *proto = cand[0].pr;
	for (uint32_t i = 0; i < n && n > 1; i++) {
		sim_time t = 0, own = 0;
		int rc = 0;
		if (cand[i].a != COLL_TREE || cand[i].pr == COLL_PROTO_IDEAL)
			rc = predict_on(c, p, cand[i].a, cand[i].pr, false, true, INFINITY, &t);
		else if (graph > 0 || (graph = coll_nccl_ring_busbw_Bps(c)) > 0)
			t = coll_nccl_tuner_tree_ps(c, p, cand[i].pr, graph);
		else
			rc = SIM_ENOMEM;
		if (!rc && cand[i].pr != COLL_PROTO_IDEAL) /* the run's own structure */
			rc = predict_on(c, p, cand[i].a, cand[i].pr, false, false,
					best < SIM_TIME_MAX ? (double)best : INFINITY, &own);
		if (rc)
			return rc;
		t = own > t ? own : t;
		if (t < best)
			best = t, *algo = cand[i].a, *proto = cand[i].pr;
	}
	return t_ps ? predict_on(c, p, *algo, *proto, true, true, INFINITY, t_ps) : 0;
}

/* coll_predict (run false) and coll_estimate (run true: the longer of
 * the winner's two structures' figures, with the caps). */
static int predict_common(const coll_ctx *cc, const coll_params *p, coll_algo algo, bool run,
			  sim_time *t_ps)
{
	coll_ctx *c = (coll_ctx *)cc; /* scratch only: the network is not touched */
	coll_ctx *v = NULL;
	coll_params q = *p;
	coll_proto proto;
	sim_time own = 0;
	int rc;
	if (p->nranks && !c->is_view) {
		if ((rc = view_new(c, p, &v)))
			return rc;
		c = v;
	}
	q.algo = algo;
	rc = check_params(c, p);
	if (!rc && (run ? algo != COLL_AUTO && !applies(c, p->op, algo)
			: algo == COLL_AUTO || !applies(c, p->op, algo)))
		rc = SIM_EUNSUPPORTED;
	if (!rc)
		rc = choose(c, &q, &algo, &proto, t_ps);
	q.algo = algo;
	if (!rc && run && proto != COLL_PROTO_IDEAL &&
	    !(rc = predict_on(c, &q, algo, proto, true, false, INFINITY, &own)) && own > *t_ps)
		*t_ps = own;
	view_free(v);
	return rc;
}

int coll_predict(const coll_ctx *cc, const coll_params *p, coll_algo algo, sim_time *t_ps)
{
	return predict_common(cc, p, algo, false, t_ps);
}

int coll_estimate(const coll_ctx *cc, const coll_params *p, coll_algo algo, sim_time *t_ps)
{
	return predict_common(cc, p, algo, true, t_ps);
}

/* ---- running ---- */

static void stage_flowed(sim_engine *eng, void *obj, uint64_t data);
static void stage_arrived(sim_engine *eng, void *obj, uint64_t data);

struct cpu_ctx {
	const coll_ctx *c;
	const coll_transport *t;
	double cycles;
};

static void charge_cpu(void *obj, uint32_t src, uint32_t dst, uint32_t tag)
{
	struct cpu_ctx *cc = obj;
	(void)tag;
	if (!hop_is_net(cc->c, src, dst))
		return; /* NVLink inside the node: no host stack */
	cc->t->cpu(cc->t->cpu_ctx, rank_at(cc->c, src), cc->cycles);
	cc->t->cpu(cc->t->cpu_ctx, rank_at(cc->c, dst), cc->cycles);
}

/* A failure inside the engine's handlers (out of memory) fails the
 * engine, as sim_fail does for a time past the horizon: the run stops,
 * coll_run and the training simulation return the code with its message,
 * and coll_ctx_free frees the collectives left unfinished. */
static void run_failed(collective *r, int rc, const char *what)
{
	sim_fail(r->c->eng, rc, "a collective (%s of %llu bytes on %u ranks): %s: %s",
		 coll_op_name(r->p.op), (unsigned long long)r->p.bytes, r->c->n, what,
		 sim_strerror(rc));
}

/* h->w: the weights of h's path under r's pool_w, or none (NULL) where
 * no pooled resource is on it. 0 or SIM_ENOMEM. */
static int hs_weights(const collective *r, hopset *h)
{
	bool any = false;
	h->weighed = true;
	for (uint32_t i = 0; i < h->len && !any; i++)
		any = pooled(r->c, h->path[i]);
	if (!any)
		return 0;
	if (!(h->w = sim_malloc((h->len ? h->len : 1) * sizeof *h->w)))
		return SIM_ENOMEM;
	for (uint32_t i = 0; i < h->len; i++)
		h->w[i] = pooled(r->c, h->path[i]) ? r->pool_w : 1;
	return 0;
}

static void launch(collective *r, uint32_t s)
{
	const stage *st = &r->st[s];
	hopset *h = &r->hs[st->hs];
	const coll_transport *t = &r->c->cfg.transport;
	int rc;
	if (sim_error(r->c->eng))
		return; /* the run has failed: start nothing more */
	if (!h->path && h->len == 0 && (rc = coll_hs_build(r->c, h, r->p.root))) {
		coll_hs_drop(r->c, h); /* a partial path must not be taken for a route */
		return run_failed(r, rc, "routing a step");
	}
	if (!h->weighed && r->pool_w != 1 && h->net && (rc = hs_weights(r, h)))
		return run_failed(r, rc, "weighing a step's path");
	flow_spec fs = { .bytes = st->bytes, .prepared = h->w ? NULL : hs_prepared(r->c, h),
			 .path = h->path, .weights = h->w, .path_len = h->len,
			 .cap_Bps = flow_cap_Bps(r->c, h) / r->conn_w, .done = stage_flowed, .obj = r,
			 .data = s, .keep = !h->has_kept, .tag = r->p.tag, .cap_class = FAB_CLS_CONN };
	/* Consecutive steps on one hop set reuse one kept flow: when nothing
	 * else changed meanwhile, the next step costs O(1), not O(hops). */
	if (h->has_kept && !h->kept_busy) {
		if ((rc = flow_restart(r->c->net, h->kept, st->bytes, s)))
			return run_failed(r, rc, "restarting a step's flow");
		h->kept_busy = r->st[s].on_kept = true;
	} else if ((rc = flow_start(r->c->net, &fs, fs.keep ? &h->kept : NULL))) {
		return run_failed(r, rc, "starting a step's flow");
	} else if (fs.keep) {
		h->has_kept = h->kept_busy = r->st[s].on_kept = true;
	}
	if (t->cpu && t->kind == COLL_HOST_TCP) {
		/* the bytes that exist (wire_weights), not the link time */
		double real = ceil((double)st->bytes * r->pool_w);
		struct cpu_ctx cc = { .c = r->c, .t = t,
				       .cycles = coll_transport_cycles(t, real < 0x1p64 ? (uint64_t)real
											: UINT64_MAX) };
		for_each_hop(r->c, h, r->p.root, charge_cpu, &cc);
	}
}

/* Max of m exponential draws of mean mu, by inverting its CDF. For many
 * members and u near 1, u^(1/m) rounds to 1 (log1p(-1) = -inf): there
 * 1 - u^(1/m) is taken as -expm1(log(u) / m), which does not round. */
static double max_exponential(sim_rng *rng, double mu, uint32_t m)
{
	double u = sim_rng_uniform(rng), k = 1.0 / (m ? m : 1), p = pow(u, k);
	return p < 1 ? -mu * log1p(-p) : -mu * log(-expm1(log(u) * k));
}

static void stage_flowed(sim_engine *eng, void *obj, uint64_t data)
{
	collective *r = obj;
	hopset *h = &r->hs[r->st[data].hs];
	const coll_transport *t = &r->c->cfg.transport;
	if (r->st[data].on_kept)
		h->kept_busy = false;
	sim_time lat = stage_lat(r->c, h, &r->st[data]);
	int rc = SIM_OK;
	/* The host stack's: network steps only, one draw per step a lumped
	 * stage stands for. Checked as a double: a draw past the clock must
	 * not be cast. */
	for (uint32_t i = 0; t->jitter_mean_ps > 0 && h->net && !rc && i < r->st[data].steps; i++) {
		double j = max_exponential(r->c->rng, (double)t->jitter_mean_ps,
					   h->kind == H_CHAIN ? 1 : r->c->n);
		if (!(j < (double)(SIM_TIME_MAX - lat)))
			rc = SIM_EOVERFLOW, lat = SIM_TIME_MAX;
		else
			lat += (sim_time)j;
	}
	if (!rc)
		rc = sim_schedule_in(eng, lat, stage_arrived, r, data, NULL);
	if (rc == SIM_EOVERFLOW)
		sim_fail(eng, rc, "simulated time passes the engine's horizon of %.2f days (int64 "
			 "picoseconds): a collective step's latency of %.6g s after %.6g s ends past "
			 "it; a latency, rate or size out of range?",
			 (double)SIM_TIME_MAX * 1e-12 / 86400, sim_time_to_s(lat),
			 sim_time_to_s(sim_now(eng)));
	else if (rc)
		run_failed(r, rc, "scheduling a step's arrival");
}

static void live_unlink(collective *r)
{
	coll_ctx *root = r->c->root;
	if (r->prev)
		r->prev->next = r->next;
	else
		root->live = r->next;
	if (r->next)
		r->next->prev = r->prev;
}

/* Frees the collectives still running on c when it is freed: a run the
 * engine stopped (sim_fail) never finishes. Their flows stay in the
 * network, which drops them when it is freed; a kept flow still running
 * is not released here (flow_release refuses it). */
static void abandon_runs(coll_ctx *c)
{
	while (c->live) {
		collective *r = c->live;
		live_unlink(r);
		for (uint32_t i = 0; i < r->nhs; i++)
			if (r->hs[i].kept_busy)
				r->hs[i].has_kept = false;
		free_run(r);
		view_free(r->c);
		free(r);
	}
}

static void finish(sim_engine *eng, collective *r)
{
	coll_result *res = r->res;
	sim_handler *fn = r->fn;
	void *obj = r->obj;
	uint64_t data = r->data;
	double t_s;
	*res = (coll_result){ .algo = r->algo, .proto = r->proto, .start_ps = r->t0, .time_ps = sim_now(eng) - r->t0,
			      .stages = r->nst, .channels = r->nc, .loops = r->loops };
	t_s = sim_time_to_s(res->time_ps);
	res->algbw_GBps = t_s > 0 ? (double)r->p.bytes / t_s / 1e9 : 0;
	res->busbw_GBps = res->algbw_GBps * coll_busbw_factor(r->p.op, r->c->n);
	live_unlink(r);
	free_run(r);
	view_free(r->c);
	free(r);
	if (fn)
		fn(eng, obj, data);
}

static void stage_arrived(sim_engine *eng, void *obj, uint64_t data)
{
	collective *r = obj;
	stage *st = &r->st[data];
	hopset *h = &r->hs[st->hs];
	if (--h->refs == 0)
		coll_hs_drop(r->c, h);
	for (uint32_t k = 0; k < st->nsucc; k++)
		if (--r->st[st->succ[k]].deps == 0)
			launch(r, st->succ[k]);
	if (++r->arrived == r->nst)
		finish(eng, r);
}

static void begin(sim_engine *eng, void *obj, uint64_t data)
{
	collective *r = obj;
	(void)eng;
	(void)data;
	for (uint32_t s = 0; s < r->nst; s++)
		if (r->st[s].deps == 0)
			launch(r, s);
}

/* ---- choices remembered ----
 *
 * The algorithm and protocol coll_start runs (choose) follow from the
 * context's fixed configuration and the call's operation, size, root,
 * forced algorithm and group: the predictions read capacities and routes,
 * never the flows running, but for adaptive routing, whose routes
 * (fab_route) follow the links' loads. A training iteration starts the
 * same data-parallel collectives again and again (every gradient bucket
 * of a stage's group; 60-80% of bench scale's starts at 4,096-16,384
 * GPUs), and each choice predicts every candidate over every hop of the
 * group: about a tenth of the run. So a root context remembers its
 * choices by those parameters, the group's ranks compared whole, and
 * reuses them. Bounded (MEMO_MAX_ENT choices, MEMO_MAX_RANKS ranks kept):
 * past either, choices are made afresh. */
#define MEMO_MAX_ENT (UINT32_C(1) << 15)
#define MEMO_MAX_RANKS (UINT32_C(1) << 24)

struct memo_ent {
	uint64_t hash, bytes;
	uint32_t *ranks;      /* a copy of the group's; NULL: the whole fabric */
	uint32_t nranks, root;
	uint8_t op, algo_req, algo, proto;
	bool used;
};

struct coll_memo {
	struct memo_ent *e;   /* open addressing, cap a power of two, at most half full */
	uint32_t cap, n, ranks_kept;
};

/* Whether c's choices may be remembered: every route fixed. */
static bool memo_applies(const coll_ctx *c)
{
	return fab_cfg(c->f)->routing != FAB_ADAPTIVE;
}

static uint64_t memo_hash(const coll_params *p)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	uint64_t key[5] = { p->op, p->algo, p->bytes, p->root, p->nranks };
	for (int i = 0; i < 5; i++)
		h = (h ^ key[i]) * UINT64_C(0x100000001b3);
	for (uint32_t i = 0; i < p->nranks; i++)
		h = (h ^ p->ranks[i]) * UINT64_C(0x100000001b3);
	return h ^ h >> 29;
}

static bool memo_same(const struct memo_ent *e, uint64_t h, const coll_params *p)
{
	return e->hash == h && e->bytes == p->bytes && e->nranks == p->nranks &&
	       e->root == p->root && e->op == (uint8_t)p->op && e->algo_req == (uint8_t)p->algo &&
	       (!p->nranks || !memcmp(e->ranks, p->ranks, p->nranks * sizeof *p->ranks));
}

/* The slot of p's choice in m (used), or of the empty slot it would take. */
static struct memo_ent *memo_slot(const struct coll_memo *m, uint64_t h, const coll_params *p)
{
	uint32_t i = (uint32_t)h & (m->cap - 1);
	while (m->e[i].used && !memo_same(&m->e[i], h, p))
		i = (i + 1) & (m->cap - 1);
	return &m->e[i];
}

/* p's remembered choice, into *algo and *proto: true when there is one. */
static bool memo_find(const coll_ctx *c, const coll_params *p, coll_algo *algo,
		      coll_proto *proto)
{
	const struct coll_memo *m = c->root->memo;
	const struct memo_ent *e;
	if (!m || !memo_applies(c))
		return false;
	e = memo_slot(m, memo_hash(p), p);
	if (!e->used)
		return false;
	*algo = (coll_algo)e->algo;
	*proto = (coll_proto)e->proto;
	return true;
}

/* Doubles m's table (or makes its first): false when out of memory, m as it was. */
static bool memo_grow(struct coll_memo *m)
{
	uint32_t cap = m->cap ? 2 * m->cap : 64;
	struct memo_ent *e = sim_calloc(cap, sizeof *e), *old = m->e;
	if (!e)
		return false;
	m->e = e;
	for (uint32_t i = 0; i < m->cap; i++) {
		uint32_t j = (uint32_t)old[i].hash & (cap - 1);
		if (!old[i].used)
			continue;
		while (e[j].used)
			j = (j + 1) & (cap - 1);
		e[j] = old[i];
	}
	m->cap = cap;
	free(old);
	return true;
}

/* Remembers p's choice. Out of memory or past the bounds, it is not: the
 * next such call chooses afresh, to the same choice. */
static void memo_put(coll_ctx *c, const coll_params *p, coll_algo algo, coll_proto proto)
{
	coll_ctx *root = c->root;
	struct coll_memo *m = root->memo;
	struct memo_ent *e;
	uint32_t *ranks = NULL;
	uint64_t h;
	if (!memo_applies(c))
		return;
	if (!m && !(m = root->memo = sim_calloc(1, sizeof *m)))
		return;
	if (m->n >= MEMO_MAX_ENT || p->nranks > MEMO_MAX_RANKS - m->ranks_kept ||
	    (2 * (m->n + 1) > m->cap && !memo_grow(m)))
		return;
	if (p->nranks && !(ranks = sim_malloc(p->nranks * sizeof *ranks)))
		return;
	h = memo_hash(p);
	e = memo_slot(m, h, p);
	if (e->used) { /* remembered already (not looked up first) */
		free(ranks);
		return;
	}
	if (ranks)
		memcpy(ranks, p->ranks, p->nranks * sizeof *ranks);
	*e = (struct memo_ent){ .hash = h, .bytes = p->bytes, .ranks = ranks, .nranks = p->nranks,
				.root = p->root, .op = (uint8_t)p->op, .algo_req = (uint8_t)p->algo,
				.algo = (uint8_t)algo, .proto = (uint8_t)proto, .used = true };
	m->n++;
	m->ranks_kept += p->nranks;
}

static void memo_free(struct coll_memo *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->cap; i++)
		free(m->e[i].ranks);
	free(m->e);
	free(m);
}

int coll_start(coll_ctx *c, const coll_params *p, coll_result *res, sim_handler *done,
	       void *obj, uint64_t data)
{
	coll_algo algo = p->algo;
	coll_proto proto = COLL_PROTO_IDEAL;
	coll_ctx *v = NULL;
	collective *r;
	int rc = p->nranks ? view_new(c, p, &v) : 0;
	if (v)
		c = v; /* freed with the run */
	if (!rc)
		rc = check_params(c, p);
	if (!rc && !memo_find(c, p, &algo, &proto) && !(rc = choose(c, p, &algo, &proto, NULL)))
		memo_put(c, p, algo, proto);
	r = rc ? NULL : sim_malloc(sizeof *r);
	if (!rc && !r)
		rc = SIM_ENOMEM;
	if (rc) {
		view_free(v);
		return rc;
	}
	if ((rc = build(c, p, algo, proto, false, r)) ||
	    (rc = sim_schedule_in(c->eng, c->cfg.launch_lat_ps + r->coll_lat_ps, begin, r, 0,
				  NULL))) {
		free_run(r);
		view_free(v);
		free(r);
		return rc;
	}
	r->res = res, r->fn = done, r->obj = obj, r->data = data;
	r->t0 = sim_now(c->eng);
	r->prev = NULL;
	r->next = c->root->live;
	if (r->next)
		r->next->prev = r;
	c->root->live = r;
	return 0;
}

static void mark_done(sim_engine *eng, void *obj, uint64_t data)
{
	(void)data;
	*(bool *)obj = true;
	sim_stop(eng);
}

int coll_run(coll_ctx *c, const coll_params *p, coll_result *res)
{
	bool done = false;
	int rc = coll_start(c, p, res, mark_done, &done, 0);
	if (rc)
		return rc;
	while (!done && !sim_error(c->eng) && sim_events_pending(c->eng))
		sim_run(c->eng);
	/* A failed engine (sim_fail): the run is left to coll_ctx_free. */
	if ((rc = sim_error(c->eng)))
		return rc;
	SIM_ASSERT(done, "collective did not finish: its stage graph is stuck");
	return 0;
}
