/* Internals shared by the collectives' files (coll.c: contexts, hop sets,
 * stage graphs, one row per algorithm, prediction and running;
 * coll_nccl.c: NCCL's cost model, its protocol tables, channels and loops). */
#ifndef DPUSIM_MODELS_COLL_INT_H
#define DPUSIM_MODELS_COLL_INT_H

#include "models/coll.h"

#include <math.h>

#include "sim/err.h"
#include "sim/rng.h"

/* Per-resource scratch, all zero between uses, so a prediction costs what
 * its paths touch, not the network's size. One per root context; its views
 * borrow it (everything runs on one thread, and no use outlives a call). */
struct scratch {
	uint32_t *mult;    /* crossings of one hop set (hopset_rate) */
	double *load;      /* bytes over one stage graph (predict_graph) */
	uint8_t *seen;     /* load's resource is in touched */
	uint32_t *touched; /* resources with load, in first-touch order */
	size_t n, ntouched;
};

struct coll_ctx {
	sim_engine *eng;
	flow_net *net;
	fab *f;
	coll_config cfg;
	sim_rng *rng;
	uint32_t n, gpn, nodes, channels;
	struct scratch *sc; /* the root context's; its views share it */
	uint32_t *map;   /* a view's group: position -> fabric rank; NULL: identity */
	bool is_view;
	coll_ctx *root;  /* the context views are made from (itself for a root) */
	struct collective *live; /* the root's: collectives started and not finished */
	struct coll_memo *memo;  /* the root's: choices made (coll.c's memo_find), or NULL */
	struct route_memo *routes; /* the root's: hop sets routed (coll.c's route_find), or NULL */
};

/* The fabric rank at group position pos. */
static inline uint32_t rank_at(const coll_ctx *c, uint32_t pos)
{
	return c->map ? c->map[pos] : pos;
}

/* A hop set's pattern: every rank to the one `step` positions on (shift),
 * every ring channel's next rank (ring), the next GPU `step` away inside
 * the node (intra), the same GPU `step` nodes on (rail), one link of a
 * broadcast chain (chain), one link of NCCL's tree on every one of its
 * channels (tree: a chain link in every node, or a level of the nodes'
 * double binary tree), the
 * reduction in the switches or the NVSwitch (sharp, nvls). */
enum hkind { H_SHIFT, H_RING, H_INTRA, H_RAIL, H_CHAIN, H_TREE, H_SHARP, H_NVLS };

typedef struct hopset {
	uint8_t kind;
	uint32_t step;           /* H_SHIFT, H_INTRA, H_RAIL: how far; H_CHAIN, H_TREE (chain
				    links from 1; 0: the nodes' tree): which link */
	uint32_t channels;       /* H_RING: rings side by side */
	uint32_t tree, depth;    /* H_TREE: which of the two trees, which level of the nodes' tree */
	bool down;               /* H_TREE: parent to child (else child to parent) */
	uint32_t *path, len, cap;
	struct route_ent *route; /* the remembered route whose path it borrows (coll.c's
				    route_find), or NULL: path is its own */
	sim_time lat_ps;
	sim_time nccl_lat_ps;    /* NCCL's per-step latency of this step (0: IDEAL) */
	bool nccl;               /* the step carries NCCL's per-step latency */
	uint8_t nccl_proto;      /* at this protocol (NP_*) */
	uint8_t slices;          /* NCCL's slices per chunk on this step inside a node, each
				    waiting for its peer (coll_nccl_slices); 0 or 1: one */
	uint32_t refs;
	double *w;               /* the path's weights under the collective's pool_w (launch), or
				    NULL: all 1 */
	bool weighed;            /* w is set (or NULL for good: no pooled resource on the path) */
	uint32_t kept;           /* a kept flow on this path, reused step after step */
	bool has_kept, kept_busy;
	bool net;                /* a hop leaves its node: the transport's costs apply */
} hopset;

/* NCCL's tree (NVIDIA/nccl v2.21.5): per channel a chain through the
 * node's GPUs in the channel's tree graph order (src/graph/connect.cc
 * ncclTopoPreset: tree.up = intra[i - 1], tree.down[0] = intra[i + 1]),
 * whose first GPU, intra[0], links the node into a binary tree over the
 * nodes (connectTrees, src/graph/trees.cc ncclGetDtree: tree 1 the mirror
 * of tree 0, here as tree_rank lays them out). The search's default
 * pattern, BALANCED_TREE (init.cc), puts one child's connection on
 * intra[1], through the channel's same NIC (search.cc: both GPUs reach
 * NET n); here every inter-node hop of a channel starts and ends at
 * intra[0], the same bytes on the same NIC. NCCL doubles its channels
 * (ncclTopoPostset) and runs tree 0 on the first half and tree 1 on the
 * second, over the same per-channel connections as its rings
 * (src/transport/generic.cc connects ring and tree peers with connIndex 0,
 * and a peer already connected on a channel is not connected again), so
 * a tree hop takes the route of that channel's ring connection (the same
 * ECMP hash). Tree t runs on *nt channels from the one returned (mod
 * channels): half of them, or the one channel both share. */
static inline uint32_t coll_tree_channels(uint32_t channels, uint32_t tree, uint32_t *nt)
{
	*nt = channels / 2 ? channels / 2 : 1;
	return tree * channels / 2;
}

static inline sim_time us_ps(double us) { return (sim_time)llround(us * 1e6); }

/* NCCL's protocol indices, in NCCL's order (tuning.cc). */
enum { NP_LL, NP_LL128, NP_SIMPLE };

#define NONE UINT32_MAX

typedef struct stage {
	uint32_t hs;
	uint32_t deps;
	uint32_t succ[3];
	uint32_t nsucc;
	uint64_t bytes;
	uint32_t reps;   /* loops this stage stands for: its latency counts reps times */
	uint32_t steps;  /* ring steps it stands for (coll_config.lump_ring_steps), each
			  * with its own jitter draw; 1 otherwise */
	bool on_kept;    /* runs on its hop set's kept flow */
} stage;

/* One collective: its stage graph over hop sets, and its progress while it
 * runs (stages arrived, where to report, its place in the live list). */
typedef struct collective {
	coll_ctx *c;
	coll_params p;
	coll_algo algo;
	coll_proto proto;  /* IDEAL, LL, LL128 or SIMPLE */
	sim_time coll_lat_ps; /* NCCL's latency per collective (0: IDEAL) */
	uint32_t nc, loops;   /* NCCL ring: channels it runs, loops (0: not an NCCL ring) */
	bool tuner;           /* NCCL's own estimate: every channel, one loop */
	/* What a stage byte (inflated by 1 / NCCL's factors, build) is worth
	 * in bytes that exist: pool_w through a node's pooled resources (host
	 * cores, host memory, engines), conn_w against one connection's cap;
	 * 1 where nothing was inflated (coll.c wire_weights) */
	double pool_w, conn_w;
	stage *st;
	uint32_t nst, stcap, arrived;
	hopset *hs;
	uint32_t nhs, hscap;
	int rc;
	coll_result *res;
	sim_handler *fn;
	void *obj;
	uint64_t data;
	sim_time t0;
	struct collective *prev, *next; /* in the root context's live list */
} collective;

static inline uint64_t div_up(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* One row per algorithm: what it is called, where it applies, how its
 * stage graph is built, and under NCCL's protocols (coll_nccl.c) which
 * protocols run it, the data bytes it moves per byte of link time, and
 * its latency per collective. A NULL bw_factor is 1, a NULL lat 0. */
typedef struct coll_algo_ops {
	const char *name;
	bool (*applies)(const coll_ctx *c, coll_op op);
	void (*build)(collective *r);
	bool simple_only;
	double (*bw_factor)(const coll_ctx *c, coll_op op, uint32_t nccl_proto);
	sim_time (*lat)(const coll_ctx *c, coll_op op, uint32_t nccl_proto);
} coll_algo_ops;

extern const coll_algo_ops coll_algos[COLL_NALGOS];

/* coll.c: hop sets and stage graphs */
int coll_hs_build(coll_ctx *c, hopset *h, uint32_t root);
void coll_hs_drop(coll_ctx *c, hopset *h);
double coll_hs_rate(coll_ctx *c, const hopset *h, bool caps);
uint32_t coll_chain(collective *r, uint32_t prev, uint32_t hs, uint32_t steps, uint64_t bytes);

/* coll_nccl.c */
uint32_t coll_nccl_proto(coll_proto p);
bool coll_nccl_proto_applies(const coll_ctx *c, coll_algo algo, coll_proto pr);
double coll_nccl_bw_factor(const coll_ctx *c, coll_op op, coll_algo algo, coll_proto pr,
			   uint64_t bytes);
double coll_nccl_tree_correction(coll_proto pr, uint64_t bytes);
double coll_nccl_wire_factor(coll_proto pr);
double coll_nccl_ring_busbw_Bps(coll_ctx *c);
sim_time coll_nccl_tuner_tree_ps(const coll_ctx *c, const coll_params *p, coll_proto pr,
				 double graph_Bps);
sim_time coll_nccl_coll_lat(const coll_ctx *c, coll_op op, coll_algo algo, coll_proto pr);
double coll_nccl_hop_us(const coll_ctx *c, uint32_t nccl_proto, uint32_t src, uint32_t dst);
double coll_nccl_ring_bw(const coll_ctx *c, coll_op op, uint32_t nccl_proto);
double coll_nccl_tree_bw(const coll_ctx *c, coll_op op, uint32_t nccl_proto);
double coll_nccl_nvls_bw(const coll_ctx *c, coll_op op, uint32_t nccl_proto);
double coll_nccl_sharp_bw(const coll_ctx *c, coll_op op, uint32_t nccl_proto);
sim_time coll_nccl_ring_lat(const coll_ctx *c, coll_op op, uint32_t nccl_proto);
sim_time coll_nccl_tree_lat(const coll_ctx *c, coll_op op, uint32_t nccl_proto);
sim_time coll_nccl_sharp_lat(const coll_ctx *c, coll_op op, uint32_t nccl_proto);
sim_time coll_nccl_nvls_lat(const coll_ctx *c, coll_op op, uint32_t nccl_proto);
uint32_t coll_nccl_channels(collective *r);
uint32_t coll_nccl_net_channels(const fab_config *fc, const coll_config *cfg, uint32_t g,
				uint32_t nodes);
uint32_t coll_nccl_nvls_loops(uint64_t bytes, uint32_t heads);
sim_time coll_nccl_nvls_fill_ps(collective *r, uint64_t link_bytes);
uint32_t coll_nccl_slices(coll_op op, uint32_t nccl_proto);
uint32_t coll_ring_steps(collective *r, uint32_t prev, uint32_t hs, uint32_t steps, uint64_t data,
			 uint32_t members, uint32_t div);

#endif
