/* Cluster fabrics as flow-solver resources: topologies (single switch,
 * two- and three-tier fat-tree with oversubscription, rail-optimised), the
 * node inside (NVLink/NVSwitch domain, PCIe under a switch or through the
 * root complex, host memory), and routing (ECMP by a seeded per-flow hash,
 * D-mod-K by destination as an InfiniBand subnet manager routes a fat tree,
 * or adaptive least-loaded). Every link is full duplex: one resource per
 * direction. A rank is one GPU; rank r is GPU r % gpus_per_node of node
 * r / gpus_per_node. */
#ifndef DPUSIM_MODELS_FABRIC_H
#define DPUSIM_MODELS_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/flow.h"
#include "sim/time.h"

typedef struct fab fab;

typedef enum fab_topo {
	FAB_SINGLE_SWITCH,
	FAB_FAT_TREE2,   /* leaves and spines */
	FAB_FAT_TREE3,   /* leaves, aggregation (per pod) and core */
	FAB_RAIL,        /* NIC k of every node on rail leaf k, spines join rails */
} fab_topo;

typedef enum fab_pcie_mode {
	FAB_PCIE_SWITCH, /* GPU k and NIC k under one PCIe switch: GPUDirect stays local */
	FAB_PCIE_ROOT,   /* GPU and NIC on the root complex: every transfer crosses it */
} fab_pcie_mode;

typedef enum fab_routing {
	FAB_ECMP,        /* per-flow hash of (seed, key, src, dst): collisions happen */
	FAB_ADAPTIVE,    /* the candidate whose busiest link carries fewest flows */
	FAB_DMODK,       /* by destination: up-port D mod u at the leaf, (D / u) mod
			  * k above, D the destination port's place in leaf order
			  * (Zahavi et al. 2010; OpenSM's ftree engine): every
			  * shift pattern is contention-free on a full fat tree */
} fab_routing;

/* Where a transfer starts or ends inside a node. */
typedef enum fab_end {
	FAB_END_GPU,     /* GPU memory read/written by the NIC directly (GPUDirect) */
	FAB_END_HOST,    /* host memory (verbs from host buffers) */
	FAB_END_STAGED,  /* GPU memory copied through host memory: PCIe twice, memory twice */
	FAB_END_SOCKET,  /* GPU memory through a kernel socket (TCP): staged, and the
			  * kernel's copy between the socket buffer and the staging
			  * buffer reads and writes memory: PCIe twice, memory four
			  * times (the GPU's write or read, the copy's read and write,
			  * the NIC's DMA) */
} fab_end;

/* How many times a byte crosses its node's host-memory resource at an end
 * of this kind (as fab_route routes it): GPU 0, host 1, staged 2,
 * socket 4. */
uint32_t fab_end_mem_passes(fab_end end);

typedef struct fab_config {
	fab_topo topo;
	uint32_t nodes;
	uint32_t gpus_per_node;
	uint32_t nics_per_node;    /* GPU g uses NIC g * nics / gpus; rails = nics */
	double link_Bps;           /* NIC port and switch links, per direction: the data
				    * rate (models/wire.h) */
	double payload_frac;       /* of link_Bps, what carries payload: the rest is the
				    * packets' headers (wire_payload_frac of the
				    * fabric's traffic); 0: all of it (no headers) */
	sim_time hop_lat_ps;       /* per link crossed */
	sim_time switch_lat_ps;    /* per switch crossed */
	uint32_t radix;            /* switch ports (fat-tree and rail; 0 = unlimited for single switch) */
	double oversub;            /* leaf downlinks : uplinks (>= 1) */
	double nvlink_Bps;         /* per GPU per direction into the NVSwitch; 0: no NVLink domain */
	sim_time nvlink_lat_ps;    /* GPU to GPU through the NVSwitch */
	double pcie_Bps;           /* per device link per direction; 0: PCIe not modelled */
	sim_time pcie_lat_ps;      /* per PCIe hop */
	fab_pcie_mode pcie;
	double host_mem_Bps;       /* per node; 0: not modelled */
	fab_routing routing;
	uint64_t seed;
} fab_config;

/* Builds the topology's resources into net (which must outlive it): the
 * NIC and switch links at their payload rate, link_Bps x payload_frac.
 * *out is freed with fab_free (NULL is a no-op). Returns 0, SIM_EINVAL (a
 * zero count or rate, oversub < 1, payload_frac outside [0, 1], a radix
 * too small for the topology) or SIM_ENOMEM. */
int fab_new(const fab_config *cfg, flow_net *net, fab **out);
void fab_free(fab *f);

/* The most NIC ports (nodes x nics_per_node) a fabric of cfg's topology,
 * radix and oversubscription can connect: fab_new builds it with this
 * many and refuses one node more. UINT64_MAX: no limit (a single switch
 * of radix 0). For saying why a fabric was refused. */
uint64_t fab_max_ports(const fab_config *cfg);

/* The payload rate of one NIC or switch link of cfg: link_Bps x
 * payload_frac (link_Bps where payload_frac is 0). */
double fab_link_payload_Bps(const fab_config *cfg);

uint32_t fab_ranks(const fab *f);
/* Switches: the network's (leaves, spines, cores), and with them each
 * node's NVSwitch when the nodes have NVLink. */
uint32_t fab_net_switches(const fab *f);
uint32_t fab_switches(const fab *f);
/* Full-duplex links in the network (switch and NIC links, NVLink, PCIe). */
uint32_t fab_links(const fab *f);
const fab_config *fab_cfg(const fab *f);
/* Sum of the capacities of the links from leaf switches up to the next
 * tier, and from hosts down into the leaves (per direction, payload B/s):
 * their ratio is the oversubscription as built. Single switch: 0 uplink. */
double fab_leaf_up_Bps(const fab *f);
double fab_leaf_down_Bps(const fab *f);

#define FAB_PATH_MAX 32

typedef struct fab_path {
	uint32_t res[FAB_PATH_MAX];
	uint32_t len;
	sim_time lat_ps;   /* sum of link, switch, NVLink and PCIe latencies */
	uint32_t links;    /* links crossed (network links and NIC ports) */
	uint32_t switches; /* network switches crossed */
} fab_path;

/* The path from rank src to rank dst for the flow named by key (different
 * keys may take different ECMP paths; the same key always takes the same
 * one for a seed; D-mod-K ignores key and seed: the destination alone
 * picks the path). Same node with an NVLink domain: over NVLink. Otherwise
 * through the NICs, with the ends in GPU, host or staged memory. Returns 0
 * or SIM_EINVAL (rank out of range, src == dst). */
int fab_route(fab *f, uint32_t src, uint32_t dst, uint64_t key, fab_end src_end,
	      fab_end dst_end, fab_path *out);

/* Whether fab_route's path from rank src to rank dst leaves the node
 * through the NICs (another node, or a node without an NVLink domain):
 * the transfers that pay the network adapter's and host stack's costs (the
 * transport's per-message latency, per-connection cap, OS jitter and host
 * cycles); NVLink inside a node pays none. One answer for every model that
 * charges them (collective steps, training's pipeline sends). */
bool fab_leaves_node(const fab *f, uint32_t src, uint32_t dst);

/* The part of a fab_route path inside rank's node, on the way out
 * (in false: from where `end` puts the data to the NIC) or in (from the
 * NIC to the data): PCIe and host-memory resources as fab_route crosses
 * them, the node's attached resources, and their PCIe latency; no network
 * link and no NVLink. For traffic that leaves a node for the switch itself
 * (in-network reduction). Returns 0 or SIM_EINVAL (rank out of range). */
int fab_node_path(const fab *f, uint32_t rank, fab_end end, bool in, fab_path *out);

/* Attaches resource res (any flow-net resource, e.g. a node's host-stack or
 * DPU-engine capacity) to node: every path fab_route returns that leaves or
 * enters the node through its NICs crosses res, once per end on that node
 * (NVLink paths inside the node do not). At most FAB_ATTACH_MAX per node.
 * Returns 0, SIM_EINVAL (no such node or resource), SIM_ERANGE (too many)
 * or SIM_ENOMEM. */
#define FAB_ATTACH_MAX 4
int fab_attach(fab *f, uint32_t node, uint32_t res);

/* Between fab_hold_begin and fab_hold_end, every path fab_route returns
 * counts as a flow on its links for adaptive routing, so the hops of one
 * step routed together before any of them starts spread out as adaptive
 * routing would spread them. begin returns 0 or SIM_ENOMEM. */
int fab_hold_begin(fab *f);
void fab_hold_end(fab *f);

/* Resources of rank r's NIC port (towards the leaf, and from it), and of its
 * NVLink (towards the NVSwitch, and from it; UINT32_MAX when there is none).
 * For collectives that address the switch itself (in-network reduction). */
uint32_t fab_nic_up(const fab *f, uint32_t rank);
uint32_t fab_nic_down(const fab *f, uint32_t rank);
uint32_t fab_nvl_up(const fab *f, uint32_t rank);
uint32_t fab_nvl_down(const fab *f, uint32_t rank);
/* Node's host-memory resource, which host and staged ends cross
 * (UINT32_MAX when host_mem_Bps is 0 or node is out of range). */
uint32_t fab_host_mem(const fab *f, uint32_t node);

/* Resources of rank r's PCIe link (GPU towards its PCIe switch; + 1 is the
 * way back to the GPU), and of the uplink of the PCIe switch r sits on
 * (towards the CPU root complex; + 1 back down). The switch of GPU g is
 * that of NIC g * nics / gpus (FAB_PCIE_SWITCH). UINT32_MAX when PCIe is
 * not modelled (pcie_Bps 0) or, for the uplink, in FAB_PCIE_ROOT mode. For
 * traffic that is not a network transfer: node-local storage. */
uint32_t fab_gpu_pcie(const fab *f, uint32_t rank);
uint32_t fab_pcie_uplink(const fab *f, uint32_t rank);

/* The leaf switch rank r's NIC sits on, the number of leaves and uplinks
 * per leaf, and the resource of leaf l's uplink j (towards the spine or
 * aggregation tier; + 1 is the way back down). UINT32_MAX when the
 * topology has no such link (single switch). */
uint32_t fab_leaf_of(const fab *f, uint32_t rank);
uint32_t fab_leaves(const fab *f);
uint32_t fab_uplinks(const fab *f);
uint32_t fab_leaf_up(const fab *f, uint32_t leaf, uint32_t j);

/* What kind of limit a flow resource (or a flow's own cap) is, for the
 * solver's account of what held each transfer (flow_bound): the fabric
 * classes its own resources, the training world the host's and DPU's
 * resources it adds, and the transports a connection's cap. */
typedef enum fab_class {
	FAB_CLS_OTHER,      /* not classed */
	FAB_CLS_CONN,       /* one connection's own cores (host-tcp: NCCL's socket
			       threads, coll_transport.conn_cap_Bps) */
	FAB_CLS_HOST_CORES, /* a node's host cores left to the network and storage stacks */
	FAB_CLS_HOST_MEM,   /* a node's host memory */
	FAB_CLS_PCIE,       /* a GPU's or NIC's PCIe link, a PCIe switch uplink */
	FAB_CLS_NIC,        /* a NIC port and its cable to the leaf (or a storage NIC) */
	FAB_CLS_FABRIC,     /* links between switches */
	FAB_CLS_NVLINK,     /* a GPU's NVLink to the NVSwitch */
	FAB_CLS_ENGINE,     /* a DPU's or NIC's engine (inline crypto, switch offload, SNAP) */
	FAB_CLS_STORAGE,    /* storage servers, a node's local NVMe drives */
	FAB_NCLASSES
} fab_class;

/* The class's word in reports ("conn_core", "host_mem", ...) and its
 * words in sentences ("one core per connection", ...). */
const char *fab_class_name(fab_class c);
const char *fab_class_words(fab_class c);

/* A name for resource id ("leaf3>spine1", "n2.nic0>leaf0", "n0.g1>nvswitch")
 * into buf (n bytes); returns buf. */
char *fab_res_name(const fab *f, uint32_t res, char *buf, size_t n);

#endif
