/* Collectives as flows with their real dependencies: all-reduce,
 * reduce-scatter, all-gather, broadcast, all-to-all and send/recv over ring,
 * double binary tree, hierarchical (NVLink inside the node, one ring per
 * rail across nodes) and in-network reduction (SHARP on the switches, NVLS
 * on the NVSwitch).
 *
 * A collective is a graph of stages. A stage is one step of the algorithm
 * (or one chunk of a step when pipelined): every hop of that step, all
 * ranks at once, moving the same bytes, run as one flow over the union of
 * the hops' paths, so a step goes at the speed of its slowest hop and
 * contention anywhere on it shows. A stage's successors start when its
 * last byte has arrived: its transfer time (from the flow solver) plus the
 * step latency (the longest hop's path latency plus the transport's
 * per-message latency). Bus bandwidth is reported as nccl-tests computes
 * it (its PERFORMANCE.md). The hops of ring channel c are routed with ECMP
 * key c (fab_route), so a caller can work out by hand where they collide. */
#ifndef DPUSIM_MODELS_COLL_H
#define DPUSIM_MODELS_COLL_H

#include <stdbool.h>
#include <stdint.h>

#include "models/coll_ops.h"
#include "models/fabric.h"
#include "models/transport.h"
#include "sim/engine.h"
#include "sim/flow.h"

/* The operations (models/coll_ops.h). */
typedef enum coll_op { COLL_OPS(COLL_OP_ENUM_) COLL_NOPS } coll_op;

typedef enum coll_algo {
	COLL_AUTO,   /* lowest predicted time among those that apply */
	COLL_RING,
	COLL_TREE,   /* double binary tree, pipelined in chunks */
	COLL_HIER,   /* NVLink ring in the node, one ring per rail across nodes */
	COLL_SHARP,  /* reduction in the network switches */
	COLL_NVLS,   /* reduction in the NVSwitch (one node) */
	COLL_P2P,    /* point to point: all-to-all and send/recv */
	COLL_NALGOS
} coll_algo;

/* Names as the command line writes them ("allreduce", "ring"...): parse
 * returns 0 or SIM_ENOENT. */
int coll_op_parse(const char *s, coll_op *op);
int coll_algo_parse(const char *s, coll_algo *algo);
const char *coll_op_name(coll_op op);
const char *coll_algo_name(coll_algo algo);
/* The operation as dpusim-report/1 writes it ("reduce_scatter"). */
const char *coll_op_report_name(coll_op op);

/* nccl-tests' bus bandwidth factor for op on n ranks (coll_ops.h):
 * all-reduce 2(n-1)/n; reduce-scatter, all-gather, all-to-all (n-1)/n;
 * broadcast and send/recv 1. */
double coll_busbw_factor(coll_op op, uint32_t n);

/* How a collective moves its bytes. IDEAL is the pure flow model: links at
 * full rate, step latency from the fabric path and the transport only (the
 * closed forms hold exactly). The others are NCCL's protocols with NCCL's
 * own published cost figures (src/graph/tuning.cc of NCCL 2.20.3): a
 * bandwidth factor per algorithm and protocol (LL: 8-byte lines of 4 data
 * and 4 flag bytes, stored by the SMs; LL128: 120 of every 128 bytes;
 * Simple: whole buffers behind a fence), a per-step latency per link type
 * (NVLink, PCI, network) and a base latency per collective. From NCCL's
 * enqueue (v2.21.5 src/enqueue.cc): a ring, hier or tree runs on fewer of
 * the context's channels for fewer bytes, at that fraction of its rate, and
 * a ring moves its buffer in loops of channels x ranks chunks, each loop
 * repeating its steps and their latency (docs/collectives.md). COLL_PROTO_NCCL
 * picks, per collective, the algorithm and protocol of lowest predicted
 * time, as NCCL's tuner does; LL, LL128, SIMPLE force one (NCCL_PROTO). */
typedef enum coll_proto {
	COLL_PROTO_IDEAL,
	COLL_PROTO_NCCL,
	COLL_PROTO_LL,
	COLL_PROTO_LL128,
	COLL_PROTO_SIMPLE,
	COLL_NPROTOS
} coll_proto;

/* "ideal", "nccl", "ll", "ll128", "simple": 0 or SIM_ENOENT. */
int coll_proto_parse(const char *s, coll_proto *proto);
const char *coll_proto_name(coll_proto proto);

typedef struct coll_ctx coll_ctx;

typedef struct coll_config {
	coll_transport transport;
	sim_time launch_lat_ps;    /* fixed cost per collective (launch, setup) */
	uint64_t chunk_bytes;      /* pipelining unit of tree and broadcast; 0: 512 KiB.
	                              At most 64 chunks: larger buffers get larger chunks */
	uint64_t seed;             /* jitter stream */
	uint32_t channels;         /* rings side by side; 0: across nodes under NCCL's protocols
	                              NCCL's search's count where reproduced (nccl_pci_GBps),
	                              else one per NIC (one if 1 GPU per node).
	                              Under NCCL's protocols also NCCL's channel count */
	uint32_t node_channels;    /* NCCL's channels for a group whose members all sit in one
	                              node (its NVLink search's count: the GPU profile's
	                              nccl_channels, as the tensor-parallel collectives run
	                              on); 0: as a group across nodes (channels above) */
	bool sharp;                /* the switches can reduce (SHARP) */
	bool nvls;                 /* the NVSwitch can reduce (NVLink SHARP) */
	coll_proto proto;          /* 0: IDEAL; NCCL for NCCL's protocol costs */
	uint32_t nccl_cc;          /* the GPUs' CUDA compute capability as NCCL writes it
	                              (cudaCompCap: 80 Ampere, 90 Hopper), which keys NCCL's
	                              per-architecture figures; 0: not known, none applied */
	double nccl_pci_GBps;      /* NCCL's figure for the GPU-NIC PCIe path (coll_nccl_pci_GBps
	                              of the narrower end); with nccl_cc, the channels of a ring
	                              across nodes are NCCL's search's (coll_nccl_net_ring)
	                              where it is reproduced; 0: not known */
	bool lump_ring_steps;      /* an approximation, off by default: a ring's lock-step
	                              steps on one hop set run as one flow of their bytes,
	                              their latencies summed after it (docs/collectives.md) */
} coll_config;

/* A context for running collectives of all fab's ranks over net, driven by
 * eng (all three must outlive it). Returns 0, SIM_EINVAL or SIM_ENOMEM;
 * free with coll_ctx_free (NULL is a no-op). */
int coll_ctx_new(sim_engine *eng, flow_net *net, fab *f, const coll_config *cfg, coll_ctx **out);
void coll_ctx_free(coll_ctx *c);

typedef struct coll_params {
	coll_op op;
	coll_algo algo;     /* COLL_AUTO to choose */
	uint64_t bytes;     /* nccl-tests' size: the whole buffer (all-gather: the output) */
	uint32_t root;      /* broadcast */
	/* The group: ranks[i] is the fabric rank at position i (a data-parallel
	 * group, say). NULL/0: every rank of the fabric. Members on one node
	 * should be listed together, the same number per node, for the
	 * hierarchical algorithms to see the node structure. Copied. */
	const uint32_t *ranks;
	uint32_t nranks;
	uint32_t tag;       /* its flows' flow_spec.tag (flow_bound); their caps count
			       as FAB_CLS_CONN */
} coll_params;

typedef struct coll_result {
	coll_algo algo;     /* the algorithm that ran */
	coll_proto proto;   /* the protocol it ran with (IDEAL, LL, LL128 or SIMPLE) */
	sim_time start_ps, time_ps;
	double algbw_GBps, busbw_GBps;
	uint64_t stages;    /* flows run */
	uint32_t channels;  /* NCCL ring, hier or tree: the channels NCCL runs at this size; else 0 */
	uint32_t loops;     /* NCCL ring (hier: its longest phase): loops of channels x ranks chunks;
			       NCCL NVLS: loops of heads chunks per channel; else 0 */
} coll_result;

/* Closed-form estimate of the uncontended time of p under algo (used to
 * choose under COLL_AUTO; the simulation is what is reported), with the
 * context's protocol (under COLL_PROTO_NCCL, the protocol the choice takes
 * for that algorithm). NCCL's protocols are estimated as NCCL's tuner does
 * it, on every channel in one loop, which is how NCCL chooses. Returns 0,
 * or SIM_EUNSUPPORTED when algo does not apply to this op or fabric. */
int coll_predict(const coll_ctx *c, const coll_params *p, coll_algo algo, sim_time *t_ps);
/* As coll_predict, but of what a run takes, as far as an estimate knows:
 * algo may be COLL_AUTO (what coll_start would choose), and the figure is
 * the longer of NCCL's tuner's structure and the run's own (the size's
 * channels and loops), the transport's caps included. What the horizon
 * checks hold against the clock (train.c job_fits, tools/run.c coll_fits). */
int coll_estimate(const coll_ctx *c, const coll_params *p, coll_algo algo, sim_time *t_ps);

/* Starts collective p now. When its last byte has arrived, *res (which must
 * stay valid until then) is filled and done(eng, obj, data) runs (done may
 * be NULL). Returns 0, SIM_EINVAL (fewer than 2 ranks, bad root),
 * SIM_EUNSUPPORTED (algo does not apply) or SIM_ENOMEM. Several may run at
 * once on one context; they share the network. One the engine stopped
 * before its end (sim_fail) is freed by coll_ctx_free. */
int coll_start(coll_ctx *c, const coll_params *p, coll_result *res, sim_handler *done,
	       void *obj, uint64_t data);

/* coll_start, then run the engine until it is done (other events run too).
 * Returns coll_start's codes, or the engine's sim_error (SIM_EOVERFLOW: a
 * transfer would end past SIM_TIME_MAX; sim_error_msg says which) with the
 * run left unfinished: coll_ctx_free frees it. */
int coll_run(coll_ctx *c, const coll_params *p, coll_result *res);

/* NCCL's ring graph on one node whose GPUs each reach an NVSwitch fabric over
 * gpu_nvlink_GBps (NCCL's figure: links x its per-link NVLink rate), as
 * NCCL's search builds it (coll_nccl.c): search_channels rings of bw_GBps
 * each, run as `channels` channels (thread blocks) per collective. hopper:
 * compute capability 9.0 (its speed steps and its rule against doubling
 * narrow rings), else 8.0. */
typedef struct coll_nccl_graph {
	uint32_t search_channels; /* ncclTopoCompute's rings after ncclTopoDupChannels */
	double bw_GBps;           /* bwIntra per search ring: the tuner's busbw is the product */
	uint32_t channels;        /* comm->collChannels after ncclTopoPostset */
} coll_nccl_graph;

/* Returns 0, or SIM_EINVAL when gpu_nvlink_GBps is not above 0 and finite
 * (out untouched). */
int coll_nccl_nvswitch_ring(double gpu_nvlink_GBps, bool hopper, coll_nccl_graph *out);

/* NCCL's ring graph across in->nodes nodes (coll_nccl.c), each node's
 * in->gpus GPUs of the communicator with a NIC each on their PCIe switch
 * and an NVSwitch between them, or one GPU per node; bandwidths as NCCL
 * takes them (GB/s). */
typedef struct coll_nccl_net {
	uint32_t gpus;      /* the communicator's GPUs per node */
	uint32_t nics;      /* NICs per node (one per GPU where gpus > 1) */
	uint32_t nodes;     /* at least 2 */
	double nic_GBps;    /* a NIC's speed: Mb/s / 8000 */
	double pci_GBps;    /* the GPU-NIC PCIe path: lanes x NCCL's per-lane figure / 80 */
	double nvlink_GBps; /* a GPU's NVLinks to the NVSwitch; 0: none */
	bool hopper;        /* compute capability 9.0 or more */
} coll_nccl_net;

/* Returns 0, SIM_EINVAL (a bandwidth not above 0 and finite, no GPU, one
 * node) or SIM_EUNSUPPORTED (several GPUs per node without one NIC each or
 * an NVSwitch: a topology whose search is not reproduced). */
int coll_nccl_net_ring(const coll_nccl_net *in, coll_nccl_graph *out);

/* The channels (NCCL's rings side by side, each a connection to the next
 * rank) a ring over a group with g members on each of `nodes` nodes runs
 * on, in a context on fabric fc under cfg, as a collective over such a
 * group runs it: NCCL's search's count where it is reproduced (one GPU a
 * node, or GPUs with a NIC each), else two with one member a node and at
 * most one per member otherwise. dpusim plan's estimate reads it. */
uint32_t coll_ring_channels(const fab_config *fc, const coll_config *cfg, uint32_t g,
			    uint32_t nodes);

/* The channels (connections) NCCL moves a point-to-point send to a rank on
 * another node on, in a communicator of nranks ranks one a node whose
 * rings run coll_ring_channels(fc, cfg, 1, nranks) channels: NCCL v2.21.5
 * src/graph/paths.cc ncclTopoGetNchannels, 2 per network peer, halved
 * while 2 x nranks exceeds 4 x the communicator's p2p channels (its
 * channels, at most 32), at most those (ncclTopoComputeP2pChannels), and enqueue.cc
 * scheduleP2pTasksToPlan, which splits a send larger than its 128 KiB
 * step over that many channels (calcP2pChunkSize), one a chunk. */
uint32_t coll_p2p_channels(const fab_config *fc, const coll_config *cfg, uint32_t nranks);

/* NCCL's PCIe figure for a link of `lanes` lanes of generation `gen`
 * (src/graph/topo.cc: lanes x per-lane / 80), GB/s; 0 for an unknown
 * generation. */
double coll_nccl_pci_GBps(uint32_t gen, uint32_t lanes);

#endif
