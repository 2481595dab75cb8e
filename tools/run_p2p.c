/* dpusim run of a p2p workload: perftest's point-to-point benchmarks
 * (models/p2p.h) between GPU 0 of node 0 and GPU 0 of node 1, each through
 * its own NIC, on the scenario's fabric, host and transport. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/p2p.h"
#include "models/setup.h"
#include "sim/err.h"
#include "tools/run.h"

/* perftest's program for each test (scn_p2p_test order): what a row's algo
 * says ran. */
static const char *const test_prog[] = {
	[SCN_P2P_WRITE_BW] = "ib_write_bw", [SCN_P2P_WRITE_LAT] = "ib_write_lat",
	[SCN_P2P_SEND_BW] = "ib_send_bw", [SCN_P2P_SEND_LAT] = "ib_send_lat",
	[SCN_P2P_READ_BW] = "ib_read_bw", [SCN_P2P_READ_LAT] = "ib_read_lat",
};

const char *run_p2p_prog(scn_p2p_test t)
{
	return test_prog[t];
}

/* The verb each test moves its bytes with. */
static p2p_op op_of(scn_p2p_test t)
{
	switch (t) {
	case SCN_P2P_WRITE_BW:
	case SCN_P2P_WRITE_LAT:
		return P2P_WRITE;
	case SCN_P2P_SEND_BW:
	case SCN_P2P_SEND_LAT:
		return P2P_SEND;
	case SCN_P2P_READ_BW:
	case SCN_P2P_READ_LAT:
		break;
	}
	return P2P_READ;
}

/* perftest signals a completion every DEF_CQ_MOD = 100 messages of a
 * bandwidth test, and every message above MSG_SIZE_CQ_MOD_LIMIT = 8192
 * bytes when a run is of one size (src/perftest_parameters.h and .c: its
 * moderation is disabled there unless asked for; a scenario's size list
 * stands for a run per size, not for -a). */
#define PERFTEST_CQ_MOD 100
#define PERFTEST_CQ_MOD_LIMIT 8192

typedef struct p2p_world {
	sim_engine *eng;
	flow_net *net;
	fab *f;
	fab_config fc;
} p2p_world;

static void world_release(p2p_world *w)
{
	fab_free(w->f);
	flow_net_free(w->net);
	sim_engine_free(w->eng);
	*w = (p2p_world){ 0 };
}

/* perftest runs verbs; a TCP stream from host memory is another tool. */
static int network_ok(const scn_variant *v, diag *d)
{
	if (v->network != SCN_NET_HOST_TCP)
		return SIM_OK;
	diag_add(d, NULL, 0, 0, "a p2p benchmark runs RDMA verbs, as perftest does: network must "
		 "be rdma (host memory) or rdma-gdr (GPU memory, perftest's --use_cuda), not "
		 "host-tcp");
	return SIM_EUNSUPPORTED;
}

/* The verb of a test, for its packets' extra headers (models/wire.h). */
static wire_op wire_op_of(scn_p2p_test t)
{
	p2p_op op = op_of(t);
	return op == P2P_WRITE ? WIRE_WRITE : op == P2P_READ ? WIRE_READ_RESP : WIRE_SEND;
}

/* perftest's inline size: a latency test's WRITE of at most 220 bytes and
 * SEND (RC) of at most 236 go inside the work request; bandwidth tests and
 * reads inline nothing (linux-rdma/perftest src/perftest_parameters.h,
 * DEF_INLINE_WRITE and DEF_INLINE_SEND_RC_UC; perftest_parameters.c,
 * ctx_set_max_inline). */
static uint32_t inline_of(scn_p2p_test t)
{
	return t == SCN_P2P_WRITE_LAT ? 220 : t == SCN_P2P_SEND_LAT ? 236 : 0;
}

/* A latency test's PCIe crossings, from the CPU profile's pcie_read_lat (a
 * device's DMA read round trip). The CPU's post of each message, a posted
 * MMIO write of its work request to the adapter's BlueFlame register
 * (rdma-core providers/mlx5 post_send_db: a single work request is copied
 * whole there by default), half of it, whatever memory the buffers are in:
 * one posted write's crossing, taken as Intel's estimate for a posted
 * write the other way (Intel TCC Tools 2021.3 Developer Guide, "Data
 * Streams Supported": the PCIe-to-memory stream's latency 'is estimated to
 * be equivalent to half of the PCIe-from-memory stream latency'). At a
 * host-memory end, the sending adapter's read of a payload, that figure,
 * and the receiving adapter's posted write into memory, half of it. None
 * for GPU memory (no published latency of a device's read or write of a
 * GPU's memory) or where the profile gives none; the notes say so. */
static void pcie_crossings(const scn_scenario *s, const scn_variant *v, p2p_params *p)
{
	double t = s->cluster.cpu.v.cpu.pcie_read_lat_s;
	sim_time ps = 0;
	if (!profile_has(t) || sim_time_from_s(t, &ps))
		return;
	p->doorbell_ps = ps / 2;
	if (v->network == SCN_NET_RDMA_GDR)
		return;
	p->payload_read_ps = ps;
	p->mem_write_ps = ps / 2;
}

/* A latency test's poll at a host-memory end: the adapter's write
 * invalidated the line the waiting CPU spins on (perftest's ib_write_lat
 * polls the buffer's last byte, its read and send tests a completion the
 * adapter writes), so the load that sees the message misses every cache:
 * the CPU profile's mem_lat. None where the profile gives none, or for GPU
 * memory (no published cost of a CPU's poll of a GPU's memory). */
static void cpu_poll(const scn_scenario *s, const scn_variant *v, p2p_params *p)
{
	double t = s->cluster.cpu.v.cpu.mem_lat_s;
	sim_time ps = 0;
	if (v->network == SCN_NET_RDMA_GDR || !profile_has(t) || sim_time_from_s(t, &ps))
		return;
	p->poll_ps = ps;
}

/* The parameters every size shares; fc and tr as set up. */
static p2p_params params_of(const scn_scenario *s, const scn_p2p *k, const scn_variant *v,
			    const coll_transport *tr, const wire_frame *w)
{
	const profile_nic *nic = &s->cluster.nic.v.nic;
	return (p2p_params){
		.op = op_of(k->test), .lat = scn_p2p_is_lat(k->test), .qps = (uint32_t)k->qps,
		.tx_depth = (uint32_t)k->tx_depth, .out_reads = (uint32_t)k->out_reads,
		.cq_mod = PERFTEST_CQ_MOD,
		.iterations = (uint32_t)k->iterations, .src = 0,
		.dst = (uint32_t)s->cluster.gpus_per_node,
		.end = v->network == SCN_NET_RDMA_GDR ? FAB_END_GPU : FAB_END_HOST,
		.adapter_lat_ps = tr->msg_lat_ps, .conn_cap_Bps = tr->conn_cap_Bps,
		.msg_rate_per_s = profile_has(nic->msg_rate_per_s) ? nic->msg_rate_per_s : 0,
		.inline_bytes = inline_of(k->test), .wire = *w,
	};
}

/* A latency test's PCIe crossings and poll, for the notes. */
static void put_pcie_note(const scn_scenario *s, const p2p_params *p, diag *notes)
{
	const char *cpu = s->cluster.cpu.name;
	if (!p->lat) {
		diag_add(notes, NULL, 0, 0, "p2p: the adapters' PCIe crossings (doorbells, payload "
			 "reads, writes into memory) and the CPU's polls not charged: in a stream "
			 "they overlap the messages ahead on the wire");
		return;
	}
	if (p->doorbell_ps)
		diag_add(notes, NULL, 0, 0, "p2p: each message reaches its adapter %.3g us after "
			 "the CPU posts it, the posted write of its work request to the adapter's "
			 "BlueFlame register (half of CPU '%s' pcie_read_lat, Intel's estimate of a "
			 "posted write)", sim_time_to_s(p->doorbell_ps) * 1e6, cpu);
	else
		diag_add(notes, NULL, 0, 0, "p2p: the CPU's doorbell write to the adapter not "
			 "modelled: the CPU profile gives no pcie_read_lat");
	if (p->payload_read_ps)
		diag_add(notes, NULL, 0, 0, "p2p: each message reaches the waiting CPU's memory "
			 "%.3g us after its last byte, the receiving adapter's posted write into "
			 "memory (half of CPU '%s' pcie_read_lat, Intel's estimate), and one above "
			 "perftest's inline size (%u B here) first waits %.3g us for the sending "
			 "adapter's DMA read of the payload (pcie_read_lat)",
			 sim_time_to_s(p->mem_write_ps) * 1e6, cpu, p->inline_bytes,
			 sim_time_to_s(p->payload_read_ps) * 1e6);
	else
		diag_add(notes, NULL, 0, 0, "p2p: the adapters' PCIe crossings (the payload's "
			 "read above perftest's inline size, %u B here, and the write into memory) "
			 "not modelled: %s", p->inline_bytes,
			 p->end == FAB_END_GPU ? "no published latency of a device's read or write "
						 "of GPU memory"
					       : "the CPU profile gives no pcie_read_lat");
	if (p->poll_ps)
		diag_add(notes, NULL, 0, 0, "p2p: the waiting CPU sees a message %.3g us after it "
			 "is in memory, its polling load missing on the line the adapter wrote "
			 "(CPU '%s' mem_lat)", sim_time_to_s(p->poll_ps) * 1e6, cpu);
	else
		diag_add(notes, NULL, 0, 0, "p2p: the CPU's poll that sees a message not modelled: "
			 "%s", p->end == FAB_END_GPU ? "no published cost of a CPU's poll of GPU "
						       "memory"
						     : "the CPU profile gives no mem_lat");
}

/* What the figures rest on, for the report's notes. */
static void put_notes(const scn_scenario *s, const scn_p2p *k, const p2p_params *p,
		      const fab_config *fc, diag *notes)
{
	const scn_hw *nic = &s->cluster.nic;
	diag_add(notes, NULL, 0, 0, "p2p: perftest %s between GPU 0 of nodes 0 and 1, each "
		 "through its own NIC, buffers in %s; %s", test_prog[k->test],
		 p->end == FAB_END_GPU ? "GPU memory (GPUDirect RDMA, perftest --use_cuda)"
				       : "host memory",
		 p->lat ? (p->op == P2P_READ ? "one read at a time, the typical (median) round "
					       "trip (a read's latency is its round trip)"
					     : "one message in flight, the typical (median) half "
					       "round trip")
			: "each QP's messages in order, tx_depth in flight, a completion every "
			  "100 messages up to 8 KiB and every message above (perftest's defaults "
			  "for a run of one size), BW average over the first post to the last "
			  "completion");
	if (p->op == P2P_READ && !p->lat)
		diag_add(notes, NULL, 0, 0, "p2p: at most %u reads outstanding per QP (the "
			 "scenario's outstanding_reads), each request one fixed latency to the "
			 "responder, whose adapter returns the responses in order", p->out_reads);
	diag_add(notes, NULL, 0, 0, "p2p: wire bytes per packet from the %s, %u payload bytes "
		 "per packet, and a message's own extra headers (%u in the first packet%s)",
		 p->wire.what, p->wire.mtu_bytes, p->wire.first_hdr_bytes,
		 p->wire.last_hdr_bytes ? " and the last" : "");
	diag_add(notes, NULL, 0, 0, "p2p: each message's fixed one-way latency is the adapter's "
		 "rdma_latency (%.3g us, once per message) plus the path's switches and hops",
		 nic->v.nic.rdma_latency_s * 1e6);
	put_pcie_note(s, p, notes);
	if (p->msg_rate_per_s > 0)
		diag_add(notes, NULL, 0, 0, "p2p: messages bounded by '%s' msg_rate %.3g M/s, the "
			 "adapter's published total over all its QPs (one QP alone is slower; no "
			 "published per-QP figure)", nic->name, p->msg_rate_per_s / 1e6);
	else
		diag_add(notes, NULL, 0, 0, "p2p: message rate not a bound (NIC '%s' gives no "
			 "msg_rate): small messages may be predicted faster than the adapter allows",
			 nic->name);
	if (fc->pcie_Bps > 0)
		diag_add(notes, NULL, 0, 0, "p2p: PCIe at %.1f GB/s per direction, its signalling "
			 "rate after 128b/130b encoding; TLP headers not counted", fc->pcie_Bps / 1e9);
}

/* The variant's transport (setup_transport), its notes into notes (may be
 * NULL) but the one on host memory, which describes NCCL's staging through
 * a host buffer; a p2p buffer in host memory is crossed once per end, by
 * the NIC's DMA (fab_end_mem_passes), and one in GPU memory never. */
static int transport_of(const scn_scenario *s, const scn_variant *v, const setup_host *host,
			coll_transport *tr, diag *d, diag *notes)
{
	diag *all = notes ? diag_new() : NULL;
	int rc = notes && !all ? SIM_ENOMEM : setup_transport(s, v, host, tr, d, all);
	for (size_t i = 0; !rc && all && i < diag_count(all) && i < DIAG_MAX; i++)
		if (strncmp(diag_msg(all, i), "host memory:", 12))
			diag_add(notes, NULL, 0, 0, "%s", diag_msg(all, i));
	if (!rc && notes && v->network == SCN_NET_RDMA) {
		if (host->mem_Bps > 0)
			diag_add(notes, NULL, 0, 0, "host memory: %.1f GB/s per node (mem_bw x sockets "
				 "of '%s', a peak), crossed once per end by the NIC's DMA; cache hits "
				 "(Intel DDIO) not modelled", host->mem_Bps / 1e9, s->cluster.cpu.name);
		else
			diag_add(notes, NULL, 0, 0, "host memory: not a bound (CPU profile '%s' gives "
				 "no mem_bw)", s->cluster.cpu.name);
	}
	diag_free(all);
	return rc;
}

/* The world of variant v's benchmark: fabric of the first two nodes, the
 * host's and DPU's caps attached; *p the parameters shared by the sizes. */
static int p2p_setup(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		     uint64_t seed, p2p_world *w, p2p_params *p, diag *d, diag *notes)
{
	const scn_p2p *k = &job->wl.p2p;
	setup_host host;
	coll_transport tr;
	wire_frame wire;
	int rc;
	*w = (p2p_world){ 0 };
	if ((rc = network_ok(v, d)) || (rc = setup_wire(s, v, wire_op_of(k->test), &wire, d)) ||
	    (rc = setup_host_of(s, &host, d)) ||
	    (rc = setup_fabric(s, v, 2 * (uint32_t)s->cluster.gpus_per_node, &w->fc, d)) ||
	    (rc = transport_of(s, v, &host, &tr, d, notes)))
		return rc;
	w->fc.seed = seed;
	*p = params_of(s, k, v, &tr, &wire);
	if (p->lat) {
		pcie_crossings(s, v, p);
		cpu_poll(s, v, p);
	}
	w->eng = sim_engine_new();
	w->net = w->eng ? flow_net_new(w->eng) : NULL;
	rc = w->net ? fab_new(&w->fc, w->net, &w->f) : SIM_ENOMEM;
	if (!rc)
		rc = run_attach_node_caps(w->net, w->f, s, v, &host, &w->fc, d);
	if (rc) {
		diag_add(d, NULL, 0, 0, "cannot build the fabric of the p2p benchmark: %s",
			 sim_strerror(rc));
		world_release(w);
	} else if (notes) {
		put_notes(s, k, p, &w->fc, notes);
	}
	return rc;
}

/* One size into rv: a bandwidth test's time is one message's at the
 * stream's bandwidth (bytes / BW average), a latency test's the typical
 * half round trip, so algbw is the bandwidth either way. *time_s: the
 * whole test's simulated time. */
static int run_size(p2p_world *w, const scn_p2p *k, p2p_params *p, uint64_t bytes,
		    rep_variant *rv, double *time_s, diag *d)
{
	p2p_result res;
	int rc;
	p->bytes = bytes;
	p->cq_mod = bytes > PERFTEST_CQ_MOD_LIMIT ? 1 : PERFTEST_CQ_MOD;
	if ((rc = p2p_run(w->eng, w->net, w->f, p, &res))) {
		diag_add(d, NULL, 0, 0, "p2p %s of %llu bytes: %s", test_prog[k->test],
			 (unsigned long long)bytes,
			 sim_error(w->eng) ? sim_error_msg(w->eng) : sim_strerror(rc));
		return rc;
	}
	*time_s = p->lat ? (p->op == P2P_READ ? 1 : 2) * res.time_s * p->iterations : res.time_s;
	return run_put_collective(rv, COLL_SENDRECV, test_prog[k->test], 2, bytes,
				  p->lat ? res.time_s : (double)bytes / res.bw_Bps);
}

int run_p2p_sizes(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		  uint64_t seed, rep_variant *rv, rep_report *rep, diag *d, diag *notes)
{
	(void)rep; /* one run per size: no steady state to tell */
	const scn_p2p *k = &job->wl.p2p;
	p2p_world w;
	p2p_params p;
	double pass_s = 0, t = 0;
	int rc = p2p_setup(s, job, v, seed, &w, &p, d, notes);
	for (size_t i = 0; i < k->nsizes && !rc; i++, pass_s += t)
		rc = run_size(&w, k, &p, (uint64_t)k->sizes_bytes[i], rv, &t, d);
	world_release(&w);
	if (!rc)
		rc = rep_variant_set_stat(rv, "iteration_s", pass_s, NAN, NAN, NAN);
	return rc;
}

/* An upper bound on the test's simulated time for size `bytes`: every
 * message alone at the slowest rate of its path, and two latencies each. */
static double estimate_s(const p2p_world *w, const p2p_params *p, uint64_t bytes)
{
	double rate = w->fc.link_Bps,
	       lat = sim_time_to_s(p->adapter_lat_ps + p->doorbell_ps + p->payload_read_ps +
				   p->mem_write_ps + p->poll_ps) + 1e-6;
	if (w->fc.pcie_Bps > 0 && w->fc.pcie_Bps < rate)
		rate = w->fc.pcie_Bps;
	if (w->fc.host_mem_Bps > 0 && w->fc.host_mem_Bps < rate)
		rate = w->fc.host_mem_Bps;
	if (p->conn_cap_Bps > 0 && p->conn_cap_Bps < rate)
		rate = p->conn_cap_Bps;
	return (double)p->iterations * p->qps * (wire_bytes(&p->wire, bytes) / rate + 2 * lat);
}

int run_p2p_check(const scn_scenario *s, const scn_job *job, const scn_variant *v, diag *d)
{
	const scn_p2p *k = &job->wl.p2p;
	double horizon_s = sim_time_to_s(SIM_TIME_MAX), pass_s = 0;
	p2p_world w;
	p2p_params p;
	int rc = p2p_setup(s, job, v, s->seed, &w, &p, d, NULL);
	for (size_t i = 0; i < k->nsizes && !rc; i++) {
		pass_s += estimate_s(&w, &p, (uint64_t)k->sizes_bytes[i]);
		if (pass_s < horizon_s)
			continue;
		diag_add(d, NULL, 0, 0, "p2p %s of %.0f bytes, %d times: up to about %.4g s (each "
			 "message alone on its path), past the simulator's horizon of %.2f days; "
			 "check the rates it crosses "
			 "(cluster.fabric.link_rate, the NIC's port_rate and PCIe)",
			 test_prog[k->test], k->sizes_bytes[i], k->iterations, pass_s,
			 sim_horizon_days());
		rc = SIM_EOVERFLOW;
	}
	world_release(&w);
	return rc;
}
