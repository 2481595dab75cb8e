/* NCCL's cost model for the collectives (coll_int.h): its protocols'
 * latencies and bandwidth factors per algorithm, and the channels and
 * loops its ring runs at a given size. */
#include "models/coll_int.h"

/* ---- NCCL's protocol costs ----
 * NVIDIA/nccl v2.20.3, src/graph/tuning.cc (ncclTopoTuneModel,
 * ncclTopoGetAlgoTime): NCCL's own latency (us) and bandwidth model, which
 * its tuner uses to pick an algorithm and a protocol per call. Indices in
 * NCCL's order: protocols LL, LL128, Simple; algorithms Tree, Ring; links
 * NVLink, PCI, network. */
enum { NA_TREE, NA_RING };
enum { NHW_NVLINK, NHW_PCI, NHW_NET };

static const double nccl_base_us[2][3] = { { 6.8, 14.0, 0 }, { 6.6, 14.0, 8.4 } }; /* baseLat */
static const double nccl_hw_us[3][2][3] = {                                       /* hwLat */
	{ { .6, 1.25, 28 }, { .6, 1.9, 3.4 } },
	{ { 1.0, 1.9, 28 }, { 1.0, 2.5, 5.7 } },
	{ { 5.0, 8.5, 28 }, { 2.7, 4.0, 14.0 } },
};
/* hwLat of CollNet Direct (Simple): NVLink and PCI 3.7, network 31, plus
 * 0.4 us of arity serialisation per local rank; of NVLS: NVLink 23. */
#define NCCL_COLLNET_INTRA_US 3.7
#define NCCL_COLLNET_NET_US 31.0
#define NCCL_COLLNET_ARITY_US 0.4
#define NCCL_NVLS_NVLINK_US 23.0

/* ---- NCCL's ring at a given size ----
 * NVIDIA/nccl v2.21.5 (commit ab2b89c): src/enqueue.cc getChannnelThreadInfo
 * drops channels while nBytes < nc * nt * threadThreshold; the thresholds
 * (src/include/comm.h NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD 8, 8, 64, and
 * tuning.cc multiplies Ring LL's by nRanks) and thread counts
 * (src/include/device.h NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS
 * 640, NCCL_SIMPLE_MAX_NTHREADS 512; tuning.cc gives Ring Simple 256 when
 * the ring's bandwidth is at most topo.h's PCI_BW, 12 GB/s). Its chunks
 * (enqueue.cc computeCollChunkInfo): stepSize = buffSize / NCCL_STEPS (8),
 * Ring Simple chunk = ALLREDUCE_CHUNKSTEPS (NCCL_STEPS/2, collectives.h)
 * steps of the 4 MiB buffer (init.cc DEFAULT_BUFFSIZE), LL half a step of
 * its 8 lines x 512 threads x 8 steps x 16 B buffer, LL128 15/16 of a step
 * of its 120 x 640 x 8 x 8 B buffer. A loop moves nc * nRanks chunks. */
static const uint32_t nccl_ring_threads[3] = { 512, 640, 512 };
static const uint32_t nccl_thread_threshold[3] = { 8, 8, 64 };
static const uint64_t nccl_ring_chunk[3] = {
	(8 * 512 * 8 * 16) / 8 / 2,          /* LL: 32,768 B */
	(120 * 640 * 8 * 8) / 8 / 16 * 15,   /* LL128: 576,000 B */
	((uint64_t)4 << 20) / 8 * 4,         /* Simple: 2 MiB */
};
#define NCCL_PCI_BW_Bps 12e9
#define NCCL_STEPS 8 /* FIFO steps per connection (src/include/device.h) */

/* ---- NCCL's ring graph on one NVSwitch node ----
 * NVIDIA/nccl v2.21.5 (commit ab2b89c4; v2.18.5, v2.20.5 and v2.28.3 give
 * the same counts here). A communicator whose ranks are all on one node
 * drops the NICs (src/graph/paths.cc:678-680 ncclTopoTrimSystem), so
 * ncclTopoCompute (src/graph/search.cc:860) searches NVLink only, in the
 * steps of speedArrayIntra (SM80) or sm90SpeedArrayIntra (search.cc:850,
 * 855). Each GPU has one link to the NVSwitch node, its NVLinks' count x
 * NCCL's per-link rate (src/graph/topo.cc:563-566), and a ring through the
 * NVSwitch takes bw off every GPU's link once each way, so the rings that
 * fit at bw are the link over bw, at most maxChannels = MAXCHANNELS/2 = 16
 * (src/init.cc:1051). */
static const double nccl_speeds_sm80[] = { 40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3 };
static const double nccl_speeds_sm90[] = { 60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3 };
#define NCCL_RING_SEARCH_MAX 16 /* MAXCHANNELS / 2 */
#define NCCL_MAXCHANNELS 32     /* src/include/device.h:54 */

/* Rings of bw GB/s that fit on a link of link GB/s, taken off as
 * followPath takes them (search.cc SUB_ROUND: to 1/1000 each time). */
static uint32_t rings_fit(double link, double bw)
{
	uint32_t n = 0;
	while (n < NCCL_RING_SEARCH_MAX && link >= bw) {
		link = round((link - bw) * 1000) / 1000;
		n++;
	}
	return n;
}

/* Pass 1 (search.cc:907-1000): from the first speed the link carries, then
 * lower speeds while above .49 of the best's, until the rings carry the
 * whole link (totalBw); a graph replaces the best only with more rings x
 * bw (ncclTopoCompareGraphs; at a tie the one of fewer hops, the fewer
 * rings, stays). */
static void ring_pass1(double link, const double *sp, size_t ns, uint32_t *n, double *bw)
{
	size_t i = 0;
	while (i + 1 < ns && sp[i] > link)
		i++;
	*bw = sp[i], *n = rings_fit(link, sp[i]);
	while (*n * *bw < link && i + 1 < ns && (*n == 0 || sp[i + 1] / *bw > .49)) {
		uint32_t m = rings_fit(link, sp[++i]);
		if (m * sp[i] > *n * *bw)
			*n = m, *bw = sp[i];
	}
}

int coll_nccl_nvswitch_ring(double gpu_nvlink_GBps, bool hopper, coll_nccl_graph *out)
{
	const double *sp = hopper ? nccl_speeds_sm90 : nccl_speeds_sm80;
	size_t ns = hopper ? sizeof nccl_speeds_sm90 / sizeof *sp : sizeof nccl_speeds_sm80 / sizeof *sp;
	uint32_t n;
	double bw;
	size_t i = 0;
	if (!(gpu_nvlink_GBps > 0) || !isfinite(gpu_nvlink_GBps))
		return SIM_EINVAL;
	ring_pass1(gpu_nvlink_GBps, sp, ns, &n, &bw);
	if (n == 0) /* search.cc: "falling back to simple order", one ring */
		n = 1, bw = 0.1;
	/* ncclTopoDupChannels (search.cc:835): each ring twice at half the
	 * bw, but for narrow rings, and on SM90 for many rings under 50. */
	if (bw >= 25 && !(hopper && bw < 50 && n > 4)) {
		uint32_t d = 2 * n < NCCL_RING_SEARCH_MAX ? 2 * n : NCCL_RING_SEARCH_MAX;
		bw /= (d + n - 1) / n;
		n = d;
	}
	/* Pass 2 (search.cc:1001-1032): higher speeds with at least n rings. */
	while (i + 1 < ns && sp[i] > bw)
		i++;
	while (i-- > 0) {
		uint32_t m = rings_fit(gpu_nvlink_GBps, sp[i]);
		if (m >= n && m * sp[i] > n * bw)
			n = m, bw = sp[i];
	}
	/* ncclTopoPostset (src/graph/connect.cc:443): every channel twice; on
	 * one node neither CollNet nor SM90's doubling across nodes
	 * (connect.cc:457) adds any, NCCL_MIN/MAX_NCHANNELS default to 0 and
	 * MAXCHANNELS, and the tree graph, searched for the ring's count,
	 * leaves comm->nChannels at it (init.cc:1105). */
	*out = (coll_nccl_graph){ .search_channels = n, .bw_GBps = bw,
				  .channels = 2 * n < NCCL_MAXCHANNELS ? 2 * n : NCCL_MAXCHANNELS };
	return SIM_OK;
}

/* ---- NCCL's ring graph across nodes ----
 * NVIDIA/nccl v2.21.5 (commit ab2b89c4) src/graph/search.cc, for nodes
 * whose GPUs each have a NIC of their own under the same PCIe switch and
 * reach each other through an NVSwitch (DGX/HGX A100 and H100), or one GPU
 * per node (a data-parallel communicator: ncclTopoTrimSystem keeps its one
 * GPU and the NICs). A ring enters the node from a NIC, visits the node's
 * GPUs and leaves through a NIC (search.cc:639). Bandwidths are NCCL's
 * (topo.cc): a NIC's speed in Mb/s / 8000 (topo.cc:358), a PCIe link's
 * width x per-lane figure / 80 (topo.cc:393-396, 459: Gen4 x16 24 GB/s,
 * Gen5 x16 48). system->maxBw is the best GPU-to-NIC path (search.cc:18-27:
 * min of the NIC and PCIe), totalBw a GPU's NVLink or PCIe total
 * (search.cc:28-36). Speeds: speedArrayInter / sm90SpeedArrayInter
 * (search.cc:851, 856). */
static const double nccl_inter_sm80[] = { 48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7,
					  6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12 };
static const double nccl_inter_sm90[] = { 48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15,
					  12, 6, 3, 2.4, 1.2, 0.24, 0.12 };

/* Rings of bw that fit through the node's NICs: each NIC starts as many as
 * its speed carries (search.cc:561, 570: net.bw less bw per ring), and its
 * PCIe path carries one ring in and one out per ring; with one NIC per GPU
 * NCCL's cross-NIC rings (NCCL_CROSS_NIC's default 2: search.cc:983-986,
 * 489-490, each pair of rings entering by one NIC and leaving by the
 * other's) leave every GPU's NVLink unused in the rings it ends, so a GPU
 * sends on NVLink in all but its NIC's share. */
static uint32_t net_rings_fit(const coll_nccl_net *in, double path, double bw)
{
	uint32_t per_nic = rings_fit(in->nic_GBps, bw), n;
	if (rings_fit(path, bw) < per_nic)
		per_nic = rings_fit(path, bw);
	n = in->gpus > 1 ? in->gpus * per_nic : per_nic;
	if (n > NCCL_RING_SEARCH_MAX)
		n = NCCL_RING_SEARCH_MAX;
	while (in->gpus > 1 && n > 0 && rings_fit(in->nvlink_GBps, bw) < n - n / in->gpus)
		n--;
	return n;
}

int coll_nccl_net_ring(const coll_nccl_net *in, coll_nccl_graph *out)
{
	const double *sp = in->hopper ? nccl_inter_sm90 : nccl_inter_sm80;
	size_t ns = in->hopper ? sizeof nccl_inter_sm90 / sizeof *sp : sizeof nccl_inter_sm80 / sizeof *sp;
	double path, total, bw;
	uint32_t n, ch;
	size_t i = 0;
	if (!(in->nic_GBps > 0) || !(in->pci_GBps > 0) || !isfinite(in->nic_GBps) ||
	    !isfinite(in->pci_GBps) || !(in->nvlink_GBps >= 0) || !isfinite(in->nvlink_GBps) ||
	    in->gpus == 0 || in->nodes < 2)
		return SIM_EINVAL;
	if (in->gpus > 1 && (in->nics != in->gpus || in->nvlink_GBps == 0))
		return SIM_EUNSUPPORTED;
	path = fmin(in->nic_GBps, in->pci_GBps);
	total = fmax(in->pci_GBps, in->nvlink_GBps);
	/* Pass 1 (search.cc:922-998): the first speed the path carries, then
	 * lower ones while above .49 of the best's, until the rings carry
	 * totalBw (search.cc:946); a graph replaces the best only with more
	 * rings x bw (ncclTopoCompareGraphs, search.cc:380). */
	while (i + 1 < ns && (sp[i] > path || sp[i] > total))
		i++;
	bw = sp[i], n = net_rings_fit(in, path, bw);
	while (n * bw < total && i + 1 < ns && (n == 0 || sp[i + 1] / bw > .49)) {
		uint32_t m = net_rings_fit(in, path, sp[++i]);
		if (m * sp[i] > n * bw)
			n = m, bw = sp[i];
	}
	if (n == 0) /* search.cc:1035-1041: one ring at 0.1 GB/s */
		n = 1, bw = 0.1;
	/* ncclTopoDupChannels (search.cc:835-848), then pass 2 (search.cc:1001-
	 * 1032): higher speeds with at least the rings found. */
	if (bw >= 25 && !(in->hopper && bw < 50 && n > 4)) {
		uint32_t d = 2 * n < NCCL_RING_SEARCH_MAX ? 2 * n : NCCL_RING_SEARCH_MAX;
		bw /= (d + n - 1) / n;
		n = d;
	}
	for (i = 0; i + 1 < ns && sp[i] > bw; i++)
		;
	while (i-- > 0) {
		uint32_t m = net_rings_fit(in, path, sp[i]);
		if (m >= n && m * sp[i] > n * bw)
			n = m, bw = sp[i];
	}
	/* ncclTopoPostset (src/graph/connect.cc:443): every channel twice; on
	 * SM90 across nodes twice again while under 16 and the rings above 45
	 * GB/s (connect.cc:457); CollNet off; NCCL_MIN/MAX_NCHANNELS default 0
	 * and MAXCHANNELS. The tree graph is searched for the ring's count
	 * (src/init.cc:1058-1059) and comm->nChannels is the smaller
	 * (init.cc:1105): the tree finds the same here. */
	ch = 2 * n < NCCL_MAXCHANNELS ? 2 * n : NCCL_MAXCHANNELS;
	if (in->hopper && bw > 45 && ch < 16)
		ch = 2 * ch < NCCL_MAXCHANNELS ? 2 * ch : NCCL_MAXCHANNELS;
	*out = (coll_nccl_graph){ .search_channels = n, .bw_GBps = bw, .channels = ch };
	return SIM_OK;
}

double coll_nccl_pci_GBps(uint32_t gen, uint32_t lanes)
{
	/* src/graph/topo.cc:393-396 kvDictPciGen: per lane in 100 Mb/s, 2.5 to
	 * 64 GT/s (generations 1 to 6). */
	static const double per_lane[] = { 15, 30, 60, 120, 240, 480 };
	if (gen < 1 || gen > sizeof per_lane / sizeof *per_lane)
		return 0;
	return lanes * per_lane[gen - 1] / 80.0;
}

/* The NICs g GPUs of a node reach as NCCL's search takes them: one; on a
 * node with a NIC per GPU (on the GPU's PCIe switch) each member's own,
 * whether the group has the whole node or some of its GPUs (a data-parallel
 * group tp apart has gpus_per_node / tp); else the node's, which
 * coll_nccl_net_ring does not reproduce for several GPUs. */
static uint32_t group_nics(const fab_config *fc, uint32_t g)
{
	if (g <= 1)
		return 1;
	return fc->nics_per_node == fc->gpus_per_node ? g : fc->nics_per_node;
}

/* The input of NCCL's search across nodes (coll_nccl_net_ring) for a ring
 * of g GPUs on each of `nodes` nodes of fabric fc under cfg. */
static coll_nccl_net net_in(const fab_config *fc, const coll_config *cfg, uint32_t g,
			    uint32_t nodes)
{
	return (coll_nccl_net){ .gpus = g, .nics = group_nics(fc, g), .nodes = nodes,
				.nic_GBps = fc->link_Bps / 1e9, .pci_GBps = cfg->nccl_pci_GBps,
				.nvlink_GBps = fc->nvlink_Bps / 1e9, .hopper = cfg->nccl_cc >= 90 };
}

/* The channels NCCL gives a ring of g GPUs per node over `nodes` of c's
 * nodes under its protocols, where its search is reproduced
 * (coll_nccl_net_ring: a known compute capability and PCIe figure, one NIC
 * per GPU or one GPU per node); else 0 (the caller's convention). */
uint32_t coll_nccl_net_channels(const fab_config *fc, const coll_config *cfg, uint32_t g,
				uint32_t nodes)
{
	coll_nccl_graph gr;
	coll_nccl_net in = net_in(fc, cfg, g, nodes);
	if (!cfg->nccl_cc || cfg->proto == COLL_PROTO_IDEAL || coll_nccl_net_ring(&in, &gr))
		return 0;
	return gr.channels;
}

/* The slices a ring chunk of op moves in, each a wait for the peer and a
 * post (NVIDIA/nccl v2.18.5 src/include/collectives.h): Simple's chunk is
 * {ALLREDUCE,REDUCESCATTER,ALLGATHER}_CHUNKSTEPS = NCCL_STEPS/2 FIFO steps
 * in slices of *_SLICESTEPS = NCCL_STEPS/4, so 2 (broadcast: 1 of 1);
 * LL and LL128 move a chunk as one step (enqueue.cc: chunkSteps and
 * sliceSteps 1 but for Ring Simple). */
uint32_t coll_nccl_slices(coll_op op, uint32_t nccl_proto)
{
	if (nccl_proto != NP_SIMPLE || op == COLL_BROADCAST)
		return 1;
	return (NCCL_STEPS / 2) / (NCCL_STEPS / 4);
}

/* With one rank per node every ring step crosses the network and nothing
 * hides its latency: NVIDIA/nccl v2.28.3 (commit f1308997)
 * src/graph/tuning.cc charges such a ring's network steps the Tree's
 * network hwLatency ("With ppn=1 latencies are fully exposed, use the Tree
 * network latency"), in that version's table LL 5.0, LL128 8.5, Simple 14
 * us (the Ring's: 2.7, 4.0, 14; v2.20.3's Tree Simple 28 is that table's
 * 14 by then). */
static const double nccl_net_ppn1_us[3] = { 5.0, 8.5, 14.0 };

/* NCCL's Ring per-step latency of one hop (tuning.cc's hwLat): the network
 * when it leaves the node (exposed with one rank per node), else NVLink
 * when the node has it, else PCI. */
double coll_nccl_hop_us(const coll_ctx *c, uint32_t nccl_proto, uint32_t src, uint32_t dst)
{
	const fab_config *fc = fab_cfg(c->f);
	int hw = rank_at(c, src) / fc->gpus_per_node != rank_at(c, dst) / fc->gpus_per_node ? NHW_NET
		 : fc->nvlink_Bps > 0 ? NHW_NVLINK : NHW_PCI;
	if (hw == NHW_NET && c->gpn == 1)
		return nccl_net_ppn1_us[nccl_proto];
	return nccl_hw_us[hw][NA_RING][nccl_proto];
}

/* NCCL's index of a concrete protocol. */
uint32_t coll_nccl_proto(coll_proto p)
{
	return p == COLL_PROTO_LL ? NP_LL : p == COLL_PROTO_LL128 ? NP_LL128 : NP_SIMPLE;
}

/* Whether protocol pr can run algo here. NVLS, CollNet (SHARP) and
 * point-to-point run Simple only (their rows' simple_only); LL128 is on by
 * default only over NVLink inside the node and a NIC that reaches GPU
 * memory directly (tuning.cc: typeIntra <= PATH_NVB, typeInter <= PATH_PXB). */
bool coll_nccl_proto_applies(const coll_ctx *c, coll_algo algo, coll_proto pr)
{
	const fab_config *fc = fab_cfg(c->f);
	if (pr == COLL_PROTO_IDEAL || c->cfg.proto == COLL_PROTO_IDEAL)
		return pr == c->cfg.proto;
	if (pr == COLL_PROTO_NCCL || (c->cfg.proto != COLL_PROTO_NCCL && pr != c->cfg.proto))
		return false;
	if (coll_algos[algo].simple_only)
		return pr == COLL_PROTO_SIMPLE;
	if (pr == COLL_PROTO_LL128)
		return (c->gpn == 1 || fc->nvlink_Bps > 0) &&
		       (c->nodes == 1 || c->cfg.transport.kind == COLL_RDMA_GDR);
	return true;
}

/* ---- NCCL's per-architecture caps ----
 * NVIDIA/nccl v2.20.5 (commit 48bb7fec) src/graph/tuning.cc:81-106, the
 * same figures in v2.18.5 (commit 559b70f8, the same lines): the tuner caps
 * a protocol's bus bandwidth per architecture, indexed by compCapIndex
 * (tuning.cc:140: Hopper from cudaCompCap 90, Ampere from 80, else Volta)
 * and by nodes (1, 2, more: tuning.cc:143). llMaxBws caps the whole bus
 * bandwidth of LL (on one node by the GPU's architecture, across nodes by
 * the CPU's vendor, tuning.cc:144-146); perChMaxRingLL128Bws,
 * perChMaxTreeLL128Bws and perChMaxTreeBws cap it per channel of the graph
 * (tuning.cc:180-185: min(busBw x factor, nChannels x cap)). Hopper's
 * differ from Ampere's in all three per-channel tables; v2.18.5 and
 * v2.20.5 give both the same llMaxBws (v2.21.5 raises Hopper's to 141 GB/s
 * along with Ring LL's factor, 1/4 -> 1/2: not this model's version). */
enum { NCC_VOLTA, NCC_AMPERE, NCC_HOPPER };
static const double nccl_ll_max[3][3] = { { 39.0, 39.0, 20.4 }, { 87.7, 22.5, 19.0 },
					  { 87.7, 22.5, 19.0 } };
static const double nccl_ring_ll128_max[3][3] = { { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 },
						  { 36.7, 36.7, 36.7 } };
static const double nccl_tree_ll128_max[3][3] = { { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 },
						  { 36.7, 36.7, 29.0 } };
static const double nccl_tree_max[3][3] = { { 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 },
					    { 38.7, 41.4, 36.0 } };

static int cc_index(uint32_t cc)
{
	return cc >= 90 ? NCC_HOPPER : cc >= 80 ? NCC_AMPERE : NCC_VOLTA;
}

/* The ring graph the caps are per channel of, where the model knows it,
 * at a known compute capability: on one node's NVSwitch
 * (coll_nccl_nvswitch_ring; its tree graph has the same channels and bw
 * there), across nodes of GPUs with a NIC each or one GPU per node
 * (coll_nccl_net_ring, which needs NCCL's PCIe figure). */
static bool caps_graph(const coll_ctx *c, coll_nccl_graph *g)
{
	const fab_config *fc = fab_cfg(c->f);
	coll_nccl_net in = net_in(fc, &c->cfg, c->gpn, c->nodes);
	if (!c->cfg.nccl_cc)
		return false;
	if (c->nodes == 1)
		return fc->nvlink_Bps > 0 &&
		       !coll_nccl_nvswitch_ring(fc->nvlink_Bps / 1e9, c->cfg.nccl_cc >= 90, g);
	return !coll_nccl_net_ring(&in, g);
}

/* tuning.cc's index by nodes: 1, 2, more. */
static int nodes_index(const coll_ctx *c)
{
	return c->nodes <= 2 ? (int)c->nodes - 1 : 2;
}

/* f, capped at `per_ch` GB/s per graph channel of g's bw. */
static double cap_per_ch(double f, double per_ch, const coll_nccl_graph *g)
{
	return fmin(f, per_ch / g->bw_GBps);
}

/* f, capped at `total` GB/s over all of g's channels. */
static double cap_total(double f, double total, const coll_nccl_graph *g)
{
	return fmin(f, total / (g->search_channels * g->bw_GBps));
}

/* Data bytes per byte of link time of a collective of `bytes` (tuning.cc's
 * "model refinements" of the bus bandwidth, capped per architecture where
 * the graph is known: above), by the algorithm's row; the tree's at its
 * correction for that size (coll_nccl_tree_correction). */
double coll_nccl_bw_factor(const coll_ctx *c, coll_op op, coll_algo algo, coll_proto pr,
			   uint64_t bytes)
{
	double f;
	if (pr == COLL_PROTO_IDEAL || !coll_algos[algo].bw_factor)
		return 1;
	f = coll_algos[algo].bw_factor(c, op, coll_nccl_proto(pr));
	return algo == COLL_TREE ? f * coll_nccl_tree_correction(pr, bytes) : f;
}

/* NCCL's correction of its tree's bandwidth at medium sizes
 * (NVIDIA/nccl v2.21.5 src/graph/tuning.cc treeCorrectionFactor, applied
 * by ncclTopoGetAlgoTime to sizes up to 256 MiB, indexed by
 * log2(bytes / 64): "Trees are not perfectly sticking to the model for
 * medium sizes"): the fraction of the tree's modelled bandwidth it reaches
 * at that size and protocol, so the model both chooses and runs its tree
 * at it. 1 under the ideal protocol. */
static const double nccl_tree_correction[3][23] = {
	{ 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0 },
	{ 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0 },
	{ .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9 },
};

/* Bytes a protocol puts on the wire per data byte: LL's FIFO line holds
 * two 4-byte words of data and two flags (NVIDIA/nccl v2.21.5
 * src/include/device.h, union ncclLLFifoLine), LL128's 128-byte line 15
 * data words and a flag (NCCL_LL128_LINEELEMS 16, NCCL_LL128_DATAELEMS
 * 15), Simple data alone; the network proxy sends the lines, flags and
 * all (src/transport/net.cc, sendProxyProgress: isend of the FIFO slot's
 * size, after checking every line's flags). */
double coll_nccl_wire_factor(coll_proto pr)
{
	return pr == COLL_PROTO_LL ? 2.0 : pr == COLL_PROTO_LL128 ? 16.0 / 15 : 1.0;
}

double coll_nccl_tree_correction(coll_proto pr, uint64_t bytes)
{
	uint32_t l = 0;
	if (pr == COLL_PROTO_IDEAL || pr == COLL_PROTO_NCCL)
		return 1;
	for (uint64_t v = bytes >> 6; v >>= 1;)
		l++;
	return l < 23 ? nccl_tree_correction[coll_nccl_proto(pr)][l] : 1;
}

/* Ring (and the hierarchical rings): LL 1/4 (all-reduce or several nodes)
 * else 1/3, LL128 0.92 (0.7 with one GPU per node). */
double coll_nccl_ring_bw(const coll_ctx *c, coll_op op, uint32_t nccl_proto)
{
	coll_nccl_graph g;
	bool capped = nccl_proto != NP_SIMPLE && caps_graph(c, &g);
	int a = cc_index(c->cfg.nccl_cc);
	/* LL across nodes is capped by the CPU's vendor (tuning.cc:144), which
	 * no profile gives: not applied there. */
	if (nccl_proto == NP_LL) {
		double f = c->nodes > 1 || op == COLL_ALLREDUCE ? 1.0 / 4 : 1.0 / 3;
		return capped && c->nodes == 1 ? cap_total(f, nccl_ll_max[a][0], &g) : f;
	}
	if (nccl_proto == NP_LL128) {
		double f = c->gpn < 2 ? 0.7 : 0.92;
		return capped ? cap_per_ch(f, nccl_ring_ll128_max[a][nodes_index(c)], &g) : f;
	}
	return 1;
}

/* Tree: 0.92 times 1/3.8 (LL) or 7/9 in one node and 120/128 across nodes
 * (LL128). */
double coll_nccl_tree_bw(const coll_ctx *c, coll_op op, uint32_t nccl_proto)
{
	/* Across nodes the tree's own graph (its search's pattern) is not
	 * reproduced: its caps apply on one node only. */
	coll_nccl_graph g;
	bool capped = c->nodes == 1 && caps_graph(c, &g);
	int a = cc_index(c->cfg.nccl_cc);
	double f = capped ? cap_per_ch(0.92, nccl_tree_max[a][0], &g) : 0.92;
	(void)op;
	if (nccl_proto == NP_LL)
		return capped ? cap_total(f / 3.8, nccl_ll_max[a][0], &g) : f / 3.8;
	if (nccl_proto == NP_LL128) {
		f *= c->nodes == 1 ? 7.0 / 9 : 120.0 / 128;
		return capped ? cap_per_ch(f, nccl_tree_ll128_max[a][0], &g) : f;
	}
	return f;
}

/* CollNet Direct (SHARP): on Hopper NCCL takes 0.85 of the bandwidth
 * (v2.20.5 tuning.cc:209, v2.18.5 tuning.cc:192: minCompCap >= 90); its
 * GPU-per-NIC factor (1 with a NIC per GPU) is not applied. */
double coll_nccl_sharp_bw(const coll_ctx *c, coll_op op, uint32_t nccl_proto)
{
	(void)op, (void)nccl_proto;
	return c->cfg.nccl_cc >= 90 ? 0.85 : 1;
}

/* NVLS: the NVSwitch's reduction and multicast run below the NVLinks'
 * rate. NVIDIA/nccl v2.28.3 (commit f1308997) src/graph/tuning.cc:134-139
 * and :290 give NVLS's per-channel bandwidth as bwIntra x
 * nvlsEfficiency[compCapIndex] x (nChannels - 1) / nChannels,
 * nvlsEfficiency 0.85 on Hopper and 0.74 on Blackwell (0 on Volta and
 * Ampere, which have no NVLS: search.cc builds no NVLS graph under
 * cudaCompCap 90), and, src/transport/nvls.cc, NVLS_NCHANNELS_SM90 16
 * channels on Hopper (NCCL_NVLS_NCHANNELS' default of 16 in v2.18.5 and
 * v2.20.5). A context of unknown compute capability takes Hopper's, the
 * first generation with NVLS (nvls_applies refuses NVLS under 90). */
#define NCCL_NVLS_EFF_SM90 0.85
#define NCCL_NVLS_EFF_SM100 0.74
#define NCCL_NVLS_CHANNELS_SM90 16

double coll_nccl_nvls_bw(const coll_ctx *c, coll_op op, uint32_t nccl_proto)
{
	double eff = c->cfg.nccl_cc >= 100 ? NCCL_NVLS_EFF_SM100 : NCCL_NVLS_EFF_SM90;
	(void)op, (void)nccl_proto;
	return eff * (NCCL_NVLS_CHANNELS_SM90 - 1) / NCCL_NVLS_CHANNELS_SM90;
}

/* ---- NCCL's NVLS all-reduce at a given size ----
 * NVIDIA/nccl v2.18.5 src/enqueue.cc computeColl (the same rules in v2.20.5
 * computeCollChunkInfo): NVLS's chunk is at most 131,072 B and shrinks
 * to 64, 32 and 16 KiB while the buffer is under 64, 8 and 2 times
 * concurrentOps x chunk, concurrentOps being its channels (16 on Hopper,
 * above) x nvls.nHeads; on one node every GPU is a head (connect.cc
 * connectNvls: nHeads = the NVLS graph's channels, and search.cc forces
 * a one-node NVLS graph to one channel per GPU). Each channel moves its
 * share in loops of nHeads chunks (src/collectives/device/all_reduce.h,
 * RunWorkElement NCCL_ALGO_NVLS: gridOffset += nChannels x nHeads x
 * chunkSize). */
#define NCCL_NVLS_MAX_CHUNK 131072

uint32_t coll_nccl_nvls_loops(uint64_t bytes, uint32_t heads)
{
	uint64_t ops = (uint64_t)NCCL_NVLS_CHANNELS_SM90 * (heads ? heads : 1), chunk = NCCL_NVLS_MAX_CHUNK;
	uint64_t loops;
	if (bytes < 64 * ops * chunk && chunk > 65536)
		chunk = 65536;
	if (bytes < 8 * ops * chunk && chunk > 32768)
		chunk = 32768;
	if (bytes < 2 * ops * chunk && chunk > 16384)
		chunk = 16384;
	loops = div_up(bytes, ops * chunk);
	return loops < 1 ? 1 : loops > UINT32_MAX ? UINT32_MAX : (uint32_t)loops;
}

/* NVLS's one-node all-reduce is a pipeline of three warp groups per
 * channel (all_reduce.h, v2.18.5 and v2.20.5): scatter (the send buffer
 * into the heads' buffers), reduce (multimem load-reduce and multicast
 * store of the head's chunk) and gather (into the receive buffer), each
 * taking loop after loop through NCCL_STEPS FIFO slots. NCCL sizes the
 * groups so that they keep pace (reduce 5 or 7 warps, the rest split
 * between scatter and gather), so a loop spends one stage time in each,
 * and K loops take K + 2 stage times: the first loop fills the pipeline
 * and the last drains it while the other groups wait. Returns those two
 * stage times, each one loop's share of the link bytes at the collective's
 * uncontended rate (what the stage moves at when the pipeline is full),
 * or 0 with r->rc set when out of memory. */
#define NCCL_NVLS_STAGES 3

sim_time coll_nccl_nvls_fill_ps(collective *r, uint64_t link_bytes)
{
	coll_ctx *c = r->c;
	hopset h = { .kind = H_NVLS };
	double rate = coll_hs_build(c, &h, 0) ? 0 : coll_hs_rate(c, &h, true);
	double t_ps;
	coll_hs_drop(c, &h);
	if (!(rate > 0))
		return r->rc = SIM_ENOMEM, 0;
	rate *= coll_nccl_nvls_bw(c, r->p.op, NP_SIMPLE);
	r->loops = coll_nccl_nvls_loops(r->p.bytes, c->n);
	t_ps = (NCCL_NVLS_STAGES - 1) * ((double)link_bytes / r->loops) / rate * 1e12;
	return t_ps < (double)SIM_TIME_MAX ? (sim_time)llround(t_ps) : SIM_TIME_MAX;
}

static uint32_t log2_floor(uint32_t v)
{
	uint32_t l = 0;
	while (v >>= 1)
		l++;
	return l;
}

/* NCCL's latency per collective (tuning.cc), by the algorithm's row:
 * baseLat, plus for the pipelined algorithms, whose stages carry only
 * physical latencies, the whole per-step sum NCCL charges. */
sim_time coll_nccl_coll_lat(const coll_ctx *c, coll_op op, coll_algo algo, coll_proto pr)
{
	if (pr == COLL_PROTO_IDEAL || !coll_algos[algo].lat)
		return 0;
	return coll_algos[algo].lat(c, op, coll_nccl_proto(pr));
}

static int intra_hw(const coll_ctx *c)
{
	return fab_cfg(c->f)->nvlink_Bps > 0 ? NHW_NVLINK : NHW_PCI;
}

/* Ring: baseLat, broadcast one step more (sameChannels). */
sim_time coll_nccl_ring_lat(const coll_ctx *c, coll_op op, uint32_t nccl_proto)
{
	int hw = c->nodes == 1 ? intra_hw(c) : NHW_NET;
	return us_ps(nccl_base_us[NA_RING][nccl_proto] +
		     (op == COLL_BROADCAST ? nccl_hw_us[hw][NA_RING][nccl_proto] : 0));
}

/* Tree: 2((ppn-1) intra + log2(nodes) net) over baseLat. */
sim_time coll_nccl_tree_lat(const coll_ctx *c, coll_op op, uint32_t nccl_proto)
{
	(void)op;
	return us_ps(nccl_base_us[NA_TREE][nccl_proto] +
		     2 * ((c->gpn - 1) * nccl_hw_us[intra_hw(c)][NA_TREE][nccl_proto] +
			  log2_floor(c->nodes) * nccl_hw_us[NHW_NET][NA_TREE][nccl_proto]));
}

/* CollNet Direct: 2(min(1, ppn-1) intra + 0.4 (ppn-1)) + net. */
sim_time coll_nccl_sharp_lat(const coll_ctx *c, coll_op op, uint32_t nccl_proto)
{
	uint32_t ppn = c->gpn;
	(void)op, (void)nccl_proto;
	return us_ps(2 * ((ppn > 1 ? 1 : 0) * NCCL_COLLNET_INTRA_US +
			  (ppn - 1) * NCCL_COLLNET_ARITY_US) + NCCL_COLLNET_NET_US);
}

/* NVLS: its NVLink figure. */
sim_time coll_nccl_nvls_lat(const coll_ctx *c, coll_op op, uint32_t nccl_proto)
{
	(void)c, (void)op, (void)nccl_proto;
	return us_ps(NCCL_NVLS_NVLINK_US);
}

/* NCCL's Ring bus bandwidth here: the uncontended rate of every channel's
 * ring at once (a ring's rate is its bus bandwidth), from the links as
 * NCCL's graph has it: without the transport's per-connection cap, which
 * NCCL does not see (coll.c, choose). 0 when out of memory. */
double coll_nccl_ring_busbw_Bps(coll_ctx *c)
{
	hopset h = { .kind = H_RING, .channels = c->channels };
	double rate = coll_hs_build(c, &h, 0) ? 0 : coll_hs_rate(c, &h, false) * c->channels;
	coll_hs_drop(c, &h);
	return rate;
}

/* NCCL's tuner's time for its tree (v2.21.5 src/graph/tuning.cc
 * ncclTopoTuneModel, ncclTopoGetAlgoTime): the bus bandwidth of its graph
 * (the tree is searched for the ring's channels: its ring's here, graph_Bps,
 * coll_nccl_ring_busbw_Bps) at the tree's factors and its correction for
 * the size (coll_nccl_bw_factor), half of it as algorithm bandwidth
 * ("ratio *= .5": the data goes up the tree and down again), after the
 * tree's latency. The model's own tree graph sends a node's data once each
 * way on two nodes, which NCCL's figure counts twice: choosing on the
 * graph ran trees NCCL's tuner does not pick (1 GiB on 2 DGX A100 nodes:
 * tree 225 GB/s of bus bandwidth against the ring's 193, where NCCL runs
 * its ring). */
sim_time coll_nccl_tuner_tree_ps(const coll_ctx *c, const coll_params *p, coll_proto pr,
				 double graph_Bps)
{
	double bw = graph_Bps * coll_nccl_bw_factor(c, p->op, COLL_TREE, pr, p->bytes) * 0.5;
	double t = (double)coll_nccl_tree_lat(c, p->op, coll_nccl_proto(pr)) +
		   (double)c->cfg.launch_lat_ps + (double)p->bytes / bw * 1e12;
	return t < (double)SIM_TIME_MAX ? (sim_time)ceil(t) : SIM_TIME_MAX;
}

/* The channels NCCL runs a ring or tree of r's size on (enqueue.cc: one
 * fewer while nBytes < nc * nt * threadThreshold, from the context's
 * channels down to 1). Tree: LL 512, LL128 640, Simple 512 threads, no
 * nRanks factor. */
uint32_t coll_nccl_channels(collective *r)
{
	coll_ctx *c = r->c;
	uint32_t nccl_proto = coll_nccl_proto(r->proto), nc = c->channels;
	uint64_t nt = nccl_ring_threads[nccl_proto], thr = nccl_thread_threshold[nccl_proto];
	if (nccl_proto == NP_LL && r->algo != COLL_TREE)
		thr *= c->n;
	if (nccl_proto == NP_SIMPLE && nc > 1 && r->algo != COLL_TREE) {
		double bw = coll_nccl_ring_busbw_Bps(c);
		if (bw <= 0)
			return r->rc = SIM_ENOMEM, 1;
		if (bw <= NCCL_PCI_BW_Bps)
			nt = 256;
	}
	while (nc > 1 && r->p.bytes < nc * nt * thr)
		nc--;
	return nc;
}

/* `steps` lock-step ring steps of `bytes` each on hop set hs after prev,
 * each standing for `reps` loops. Lumped (coll_config.lump_ring_steps, an
 * approximation): one stage of all their bytes, standing for steps x reps
 * step latencies (and steps jitter draws), so that a ring of n ranks costs
 * the solver one flow per pass, not 2(n-1) joins of its n-hop path; alone
 * on its links it takes the same time (bytes / rate plus the latencies
 * either way), but while it runs it never leaves the links to others in
 * the latencies between its steps. Returns the last stage. */
static uint32_t ring_pass(collective *r, uint32_t prev, uint32_t hs, uint32_t steps, uint64_t bytes,
			  uint32_t reps)
{
	uint32_t first = r->nst, lumped = 1;
	if (r->c->cfg.lump_ring_steps && steps > 1 && (uint64_t)steps * reps <= UINT32_MAX &&
	    bytes <= UINT64_MAX / steps)
		lumped = steps, bytes *= steps, reps *= steps, steps = 1;
	prev = coll_chain(r, prev, hs, steps, bytes);
	for (uint32_t s = first; s < r->nst && !r->rc; s++)
		r->st[s].reps = reps, r->st[s].steps = lumped;
	return prev;
}

/* An NCCL ring of `members` ranks moving `data` bytes (each rank 1/members
 * of a loop per step, split over `div` rings of the hop set hs), after
 * prev: loops of nc * members chunks (the last one partial, spread evenly
 * as the kernel does), each loop `steps` ring steps that each wait for
 * their peer. The full loops are identical, so they run as one pass of
 * `steps` stages carrying all their bytes and `full` times each step's
 * latency; the partial loop follows. Returns the last stage. */
static uint32_t nccl_loops(collective *r, uint32_t prev, uint32_t hs, uint32_t steps, uint64_t data,
			   uint32_t members, uint32_t div)
{
	uint64_t loop = (uint64_t)r->nc * members * nccl_ring_chunk[coll_nccl_proto(r->proto)];
	uint64_t full = data / loop, rem = data % loop;
	uint32_t loops = (uint32_t)(full + (rem > 0 || full == 0));
	if (loops > r->loops)
		r->loops = loops;
	if (full > 0)
		prev = ring_pass(r, prev, hs, steps, div_up(loop / members, div) * full, (uint32_t)full);
	if (rem > 0 || full == 0)
		prev = ring_pass(r, prev, hs, steps, div_up(div_up(rem, members), div), 1);
	return prev;
}

/* `steps` lock-step ring steps moving `data` bytes among `members` ranks:
 * one pass of data/members per step (ideal), or NCCL's loops. */
uint32_t coll_ring_steps(collective *r, uint32_t prev, uint32_t hs, uint32_t steps, uint64_t data,
			 uint32_t members, uint32_t div)
{
	if (r->proto == COLL_PROTO_IDEAL || r->tuner) {
		r->nc = r->tuner ? r->c->channels : 0;
		return ring_pass(r, prev, hs, steps, div_up(div_up(data, members), div), 1);
	}
	if (!r->nc)
		r->nc = coll_nccl_channels(r);
	return nccl_loops(r, prev, hs, steps, data, members, div);
}
