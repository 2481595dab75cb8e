/* Scenario values to model parameters. */
#include "models/setup.h"

#include <math.h>
#include <string.h>

#include "models/offload.h"
#include "sim/err.h"


double setup_pcie_Bps(double gen, double lanes)
{
	static const double lane_Bps[] = {
		[3] = 8e9 * 128 / 130 / 8, [4] = 16e9 * 128 / 130 / 8,
		[5] = 32e9 * 128 / 130 / 8, [6] = 64e9 * 242 / 256 / 8,
	};
	int g = (int)gen;
	if (!profile_has(gen) || !profile_has(lanes) || g < 3 || g > 6)
		return 0;
	return lane_Bps[g] * lanes;
}

uint32_t setup_gpu_sms(const char *name)
{
	if (!strncmp(name, "A100", 4))
		return 108;
	if (!strncmp(name, "H100-SXM", 8) || !strncmp(name, "H200-SXM", 8))
		return 132;
	return 0;
}

/* A latency from the scenario as simulated time. The loader's ranges keep
 * every one it passes here under a second (hop 1 ms, switch 0.1 ms, NIC
 * 1 ms, TCP 10 ms, OS jitter 1 s), far inside the clock: one outside is a
 * bug, stopped loudly rather than cast. */
static sim_time ps_of(double s)
{
	sim_time t = 0;
	int rc = sim_time_from_s(s, &t);
	SIM_ASSERT(!rc, "latency %g s outside the clock: %s", s, sim_strerror(rc));
	return t;
}

/* A value a model cannot do without: an error naming where to set it. */
static bool need(double v, const scn_hw *hw, const char *field, const char *where, diag *d)
{
	if (profile_has(v))
		return true;
	diag_add(d, hw->at.file, hw->at.line, hw->at.col,
		 "%s: profile '%s' gives no '%s' (no published figure); set %s.%s in the "
		 "scenario, with its source in a comment",
		 where, hw->name, field, where, field);
	return false;
}

/* A node's host memory bandwidth: the CPU profile's mem_bw per socket
 * times its sockets; 0 (no bound) where the profile gives no mem_bw. */
static double host_mem_Bps(const profile_cpu *c)
{
	return profile_has(c->mem_bw_Bps) && profile_has(c->sockets) ? c->mem_bw_Bps * c->sockets : 0;
}

int setup_host_of(const scn_scenario *s, setup_host *out, diag *d)
{
	const scn_hw *cpu = &s->cluster.cpu;
	const profile_cpu *c = &cpu->v.cpu;
	bool ok = need(c->sockets, cpu, "sockets", "cluster.cpu", d) &
		  need(c->cores_per_socket, cpu, "cores_per_socket", "cluster.cpu", d) &
		  need(c->freq_hz, cpu, "freq", "cluster.cpu", d);
	if (!ok)
		return SIM_EINVAL;
	*out = (setup_host){ .cores = c->sockets * c->cores_per_socket, .freq_Hz = c->freq_hz,
			     .mem_Bps = host_mem_Bps(c) };
	return SIM_OK;
}

double setup_stack_cap_Bps(const offload_costs *c, double stack_cores)
{
	double mean = (c->total_core_s_per_byte + c->total_tx_core_s_per_byte) / 2;
	return mean > 0 ? stack_cores / mean : 0;
}

static fab_topo topo_of(const scn_fabric *f)
{
	switch (f->topology) {
	case SCN_TOPO_SINGLE_SWITCH:
		return FAB_SINGLE_SWITCH;
	case SCN_TOPO_FAT_TREE:
		return f->tiers >= 3 ? FAB_FAT_TREE3 : FAB_FAT_TREE2;
	case SCN_TOPO_RAIL_OPTIMISED:
		break;
	}
	return FAB_RAIL;
}

/* NVLink per GPU and direction: what data movement achieves where the
 * profile gives it (NCCL's per-link figure times the links), else the
 * signalling rate of the datasheet (setup_gpu notes which). */
static double nvlink_Bps(const profile_gpu *g)
{
	if (profile_has(g->nvlink_bw_achieved_Bps))
		return g->nvlink_bw_achieved_Bps;
	return profile_has(g->nvlink_bw_Bps) ? g->nvlink_bw_Bps : 0;
}

int setup_wire_for(const scn_scenario *s, wire_transport t, wire_op op, wire_frame *out,
		   diag *d)
{
	const scn_fabric *f = &s->cluster.fabric;
	bool ib = f->link_layer == PROFILE_LL_INFINIBAND;
	uint32_t mtu;
	if (f->link_layer != PROFILE_LL_INFINIBAND && f->link_layer != PROFILE_LL_ETHERNET) {
		diag_add(d, NULL, 0, 0, "the fabric's link layer is not known (switch '%s', NIC "
			 "'%s'): set cluster.fabric.switch.link_layer", f->sw.name,
			 s->cluster.nic.name);
		return SIM_EINVAL;
	}
	if (wire_frame_at(ib, t, op, isnan(f->mtu_bytes) ? 0 : (uint32_t)f->mtu_bytes, out, &mtu)) {
		diag_add(d, NULL, 0, 0, "cluster.fabric.mtu %u is not an %s", mtu, wire_mtu_words(ib));
		return SIM_EINVAL;
	}
	return SIM_OK;
}

int setup_wire(const scn_scenario *s, const scn_variant *v, wire_op op, wire_frame *out,
	       diag *d)
{
	return setup_wire_for(s, v->network == SCN_NET_HOST_TCP ? WIRE_TCP : WIRE_RDMA, op, out, d);
}

int setup_payload_frac(const scn_scenario *s, const scn_variant *v, double *frac, diag *d)
{
	wire_frame w;
	if (setup_wire(s, v, WIRE_WRITE, &w, d))
		return SIM_EINVAL;
	*frac = wire_payload_frac(&w);
	return SIM_OK;
}

int setup_fabric(const scn_scenario *s, const scn_variant *v, uint32_t gpus, fab_config *out,
		 diag *d)
{
	double frac;
	const scn_cluster *c = &s->cluster;
	const scn_fabric *f = &c->fabric;
	uint32_t gpn = (uint32_t)c->gpus_per_node;
	double gpu_pcie = setup_pcie_Bps(c->gpu.v.gpu.pcie_gen, c->gpu.v.gpu.pcie_lanes);
	double nic_pcie = setup_pcie_Bps(c->nic.v.nic.pcie_gen, c->nic.v.nic.pcie_lanes);
	if (!need(f->sw.v.sw.latency_s, &f->sw, "latency", "cluster.fabric.switch", d) ||
	    setup_payload_frac(s, v, &frac, d))
		return SIM_EINVAL;
	*out = (fab_config){
		.topo = topo_of(f),
		.nodes = (gpus + gpn - 1) / gpn,
		.gpus_per_node = gpn,
		.nics_per_node = (uint32_t)(c->nics_per_node > 0 ? c->nics_per_node : 1),
		.link_Bps = f->link_rate_Bps,
		.payload_frac = frac,
		.hop_lat_ps = ps_of(f->hop_latency_s),
		.switch_lat_ps = ps_of(f->sw.v.sw.latency_s),
		.radix = profile_has(f->sw.v.sw.radix) ? (uint32_t)f->sw.v.sw.radix : 0,
		.oversub = f->oversubscription >= 1 ? f->oversubscription : 1,
		.nvlink_Bps = gpn > 1 ? nvlink_Bps(&c->gpu.v.gpu) : 0,
		.pcie_Bps = gpu_pcie > 0 && nic_pcie > 0 ? fmin(gpu_pcie, nic_pcie) : 0,
		.pcie = FAB_PCIE_SWITCH,
		.host_mem_Bps = host_mem_Bps(&c->cpu.v.cpu),
		.routing = f->routing == SCN_ROUTE_ADAPTIVE ? FAB_ADAPTIVE
			   : f->routing == SCN_ROUTE_DMODK  ? FAB_DMODK
							    : FAB_ECMP,
		.seed = s->seed,
	};
	if (out->topo == FAB_SINGLE_SWITCH)
		out->radix = 0; /* one switch of whatever size the cluster needs */
	return SIM_OK;
}

/* What host memory does to a variant's transfers (setup_fabric gives the
 * fabric the node's bandwidth): how often a byte crosses it (fabric.h,
 * fab_end), and whether it binds at all. GPUDirect RDMA does not touch it. */
static void host_mem_note(const scn_scenario *s, const scn_variant *v, diag *notes)
{
	const scn_hw *cpu = &s->cluster.cpu;
	double mem = host_mem_Bps(&cpu->v.cpu);
	bool tcp = v->network == SCN_NET_HOST_TCP;
	if (!notes || v->network == SCN_NET_RDMA_GDR)
		return;
	if (mem > 0)
		diag_add(notes, NULL, 0, 0, "host memory: %.1f GB/s per node (mem_bw x sockets of "
			 "'%s', a peak: no sustained figure); each byte %s moves crosses it %s; "
			 "cache hits (Intel DDIO) not modelled", mem / 1e9, cpu->name,
			 tcp ? "host-tcp" : "rdma", tcp ? "four times per end (the GPU's copy, the "
			 "kernel's socket copy reading and writing, the NIC's DMA)"
			 : "twice per end (the GPU's copy into NCCL's host buffer over its PCIe "
			 "link, the NIC's DMA)");
	else
		diag_add(notes, NULL, 0, 0, "host memory: not a bound on %s transfers (CPU profile "
			 "'%s' gives no mem_bw): they may run faster than the node's memory allows",
			 tcp ? "host-tcp" : "rdma", cpu->name);
}

/* One host-tcp connection's cap. NCCL's socket transport
 * (NVIDIA/nccl src/transport/net_socket.cc) splits each message into
 * NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD chunks of at least 64 KiB
 * and hands them round-robin to its helper threads, each progressing its
 * sockets on one core: a connection moves at most its threads' cores'
 * worth (no more than the node has). The default is 1 x 1 (2 x 8 on AWS's
 * adapters, detected by PCI vendor). Sockets per thread share their
 * thread's core: in NCCL they buy parallel TCP flows (more window in
 * flight, more ECMP paths, per-flow caps spread), none of which this model
 * has, so they change nothing here; the report says so. */
static double tcp_conn_cap_Bps(const scn_variant *v, const setup_host *h,
			       const offload_costs *costs, diag *notes)
{
	int threads = v->nccl_socket_nthreads ? v->nccl_socket_nthreads : 1;
	int socks = v->nccl_nsocks_perthread ? v->nccl_nsocks_perthread : 1;
	double cores = fmin(threads, h->cores > 0 ? h->cores : threads);
	if (notes && (v->nccl_socket_nthreads || v->nccl_nsocks_perthread))
		diag_add(notes, NULL, 0, 0, "host-tcp (variant '%s'): NCCL socket transport at %d "
			 "thread%s x %d socket%s per thread: each connection runs on %.0f host "
			 "core%s (%.1f GB/s); the sockets per thread are not modelled (parallel TCP "
			 "flows: no per-flow window, ECMP or per-flow cap here)", v->name, threads,
			 threads == 1 ? "" : "s", socks, socks == 1 ? "" : "s", cores,
			 cores == 1 ? "" : "s", cores / costs->total_core_s_per_byte / 1e9);
	return cores / costs->total_core_s_per_byte;
}

/* What the packets' headers leave of a link, for the report (setup_fabric
 * applies it). */
static void wire_note(const scn_scenario *s, const scn_variant *v, const wire_frame *w,
		      diag *notes)
{
	const scn_fabric *f = &s->cluster.fabric;
	bool ib = f->link_layer == PROFILE_LL_INFINIBAND;
	wire_transport t = v->network == SCN_NET_HOST_TCP ? WIRE_TCP : WIRE_RDMA;
	double frac = wire_payload_frac(w);
	bool set = !isnan(f->mtu_bytes);
	if (!notes)
		return;
	diag_add(notes, NULL, 0, 0, "wire: %s, %u payload bytes per packet (MTU %u, %s): links "
		 "carry payload at %.2f%% of their %g Gb/s data rate, %.4g Gb/s", w->what,
		 w->mtu_bytes, set ? (uint32_t)f->mtu_bytes : wire_default_mtu(ib, t),
		 set ? "cluster.fabric.mtu" : wire_default_mtu_why(ib, t), frac * 100,
		 f->link_rate_Bps * 8e-9, f->link_rate_Bps * frac * 8e-9);
}

int setup_transport(const scn_scenario *s, const scn_variant *v, const setup_host *h,
		    coll_transport *out, diag *d, diag *notes)
{
	wire_frame w;
	const profile_host_costs *hc = &s->cluster.host_costs.v.host;
	offload_costs costs;
	int rc = offload_net_costs(s, v, h->freq_Hz, &costs, d, notes);
	if (!rc)
		rc = setup_wire(s, v, WIRE_WRITE, &w, d);
	if (rc)
		return rc;
	wire_note(s, v, &w, notes);
	double pkt = offload_tcp_packet_bytes(s);
	*out = (coll_transport){ .mtu_bytes = isnan(pkt) ? 1500 : (uint32_t)pkt };
	/* The adapter's own latency applies to every transport; the host stack
	 * adds its share on top for TCP. */
	if (!need(s->cluster.nic.v.nic.rdma_latency_s, &s->cluster.nic, "rdma_latency",
		  "cluster.nic", d))
		return SIM_EINVAL;
	out->msg_lat_ps = ps_of(s->cluster.nic.v.nic.rdma_latency_s);
	switch (v->network) {
	case SCN_NET_HOST_TCP:
		out->kind = COLL_HOST_TCP;
		if (profile_has(hc->tcp_latency_s))
			out->msg_lat_ps += ps_of(hc->tcp_latency_s);
		else if (notes)
			diag_add(notes, NULL, 0, 0, "host-tcp: host-stack latency per message not "
				 "modelled (no published tcp_latency)");
		out->conn_cap_Bps = tcp_conn_cap_Bps(v, h, &costs, notes);
		/* OS jitter: each message through the kernel stack waits an
		 * exponential extra delay (models/noise.h); kernel-bypass RDMA
		 * does not. A step waits for its slowest member's. */
		out->jitter_mean_ps = ps_of(s->noise.os_jitter_delay_s);
		break;
	case SCN_NET_RDMA:
	case SCN_NET_RDMA_GDR:
		out->kind = v->network == SCN_NET_RDMA ? COLL_RDMA : COLL_RDMA_GDR;
		if (costs.total_core_s_per_byte > 0)
			out->conn_cap_Bps = 1.0 / costs.total_core_s_per_byte;
		break;
	}
	out->cycles_per_byte = costs.total_core_s_per_byte * h->freq_Hz;
	host_mem_note(s, v, notes);
	return SIM_OK;
}

coll_proto setup_coll_proto(const scn_scenario *s)
{
	return s->coll_proto == SCN_PROTO_IDEAL ? COLL_PROTO_IDEAL : COLL_PROTO_NCCL;
}

const char *setup_coll_model_text(coll_proto p)
{
	if (p == COLL_PROTO_IDEAL)
		return "ideal closed form (collectives.protocol: ideal): links at their payload "
		       "rate, latencies of the fabric and transport only";
	return "NCCL's cost model (collectives.protocol: nccl): per call the algorithm and "
	       "protocol (LL, LL128, Simple) of lowest predicted time, NCCL's per-step and "
	       "per-collective latencies, channels and loops per size (docs/collectives.md)";
}

uint32_t setup_nvlink_channels(const scn_scenario *s, const char *what, uint32_t nics_per_node,
			       diag *notes)
{
	const scn_hw *hw = &s->cluster.gpu;
	if (profile_has(hw->v.gpu.nccl_channels))
		return (uint32_t)hw->v.gpu.nccl_channels;
	if (notes)
		diag_add(notes, NULL, 0, 0, "%s: NCCL channels taken as one per NIC, %u (no "
			 "published nccl_channels for '%s')", what, nics_per_node, hw->name);
	return 0;
}

uint32_t setup_nccl_cc(const scn_scenario *s, diag *notes)
{
	const scn_hw *hw = &s->cluster.gpu;
	if (profile_has(hw->v.gpu.compute_capability))
		return (uint32_t)llround(hw->v.gpu.compute_capability * 10);
	if (notes)
		diag_add(notes, NULL, 0, 0, "collectives: NCCL's per-architecture caps not applied "
			 "(no compute_capability for '%s')", hw->name);
	return 0;
}

double setup_nccl_pci_GBps(const scn_scenario *s)
{
	return setup_nccl_pci_GBps_of(&s->cluster.gpu.v.gpu, &s->cluster.nic.v.nic);
}

double setup_nccl_pci_GBps_of(const profile_gpu *g, const profile_nic *n)
{
	if (!profile_has(g->pcie_gen) || !profile_has(g->pcie_lanes) || !profile_has(n->pcie_gen) ||
	    !profile_has(n->pcie_lanes))
		return 0;
	return fmin(coll_nccl_pci_GBps((uint32_t)g->pcie_gen, (uint32_t)g->pcie_lanes),
		    coll_nccl_pci_GBps((uint32_t)n->pcie_gen, (uint32_t)n->pcie_lanes));
}

static double peak_of(const profile_gpu *g, scn_precision p)
{
	switch (p) {
	case SCN_FP32:
		return g->peak_fp32_flops;
	case SCN_TF32:
		return g->peak_tf32_flops;
	case SCN_FP16:
		return g->peak_fp16_flops;
	case SCN_BF16:
		return g->peak_bf16_flops;
	case SCN_FP8:
		break;
	}
	return g->peak_fp8_flops;
}

/* FP8 as Transformer Engine trains it under Megatron-core (NeMo): only TE's
 * linear modules run FP8 GEMMs, on operands cast-transposed to FP8
 * (fp8_cast). Core attention stays 16-bit: TransformerConfig's
 * fp8_dot_product_attention defaults to False (megatron/core/
 * transformer/transformer_config.py; NeMo's MegatronMixedPrecision the
 * same), and the output layer is Megatron's own tensor_parallel.
 * ColumnParallelLinear (megatron/core/models/gpt/gpt_model.py), not a TE
 * module, so fp8_autocast leaves it in BF16. */
static bool fp8_split(const profile_gpu *g, const scn_hw *hw, gpu_spec *out, diag *d)
{
	if (!need(g->peak_bf16_flops, hw, "peak_bf16_flops", "cluster.gpu", d))
		return false;
	out->attn_flops = out->logit_flops = g->peak_bf16_flops;
	out->fp8_cast = true;
	/* The linear GEMMs at FP8's own measured fraction, the power-saturated
	 * one first; attention and logits keep the 16-bit one (eff16). */
	double fp8 = profile_has(g->eff_sustained_fp8) ? g->eff_sustained_fp8
		     : profile_has(g->eff_max_fp8)    ? g->eff_max_fp8
						       : NAN;
	if (!isnan(fp8))
		out->eff16 = out->eff_max, out->eff_max = fp8;
	return true;
}

int setup_gpu(const scn_scenario *s, scn_precision prec, gpu_spec *out, diag *d, diag *notes)
{
	const scn_hw *hw = &s->cluster.gpu;
	const profile_gpu *g = &hw->v.gpu;
	char field[32];
	snprintf(field, sizeof field, "peak_%s_flops", scn_precision_name(prec));
	bool ok = need(peak_of(g, prec), hw, field, "cluster.gpu", d) &
		  need(g->hbm_bw_Bps, hw, "hbm_bw", "cluster.gpu", d) &
		  need(g->eff_max, hw, "eff_max", "cluster.gpu", d);
	if (!ok)
		return SIM_EINVAL;
	*out = (gpu_spec){ .peak_flops = peak_of(g, prec), .hbm_Bps = g->hbm_bw_Bps,
			   .eff_max = profile_has(g->eff_sustained) ? g->eff_sustained : g->eff_max,
			   .sms = setup_gpu_sms(hw->name),
			   .tile_m = GPU_TILE_M, .tile_n = GPU_TILE_N,
			   .launch_s = profile_has(g->kernel_launch_s) ? g->kernel_launch_s : 0,
			   .mem_Bps = profile_has(g->hbm_bw_achieved_Bps) ? g->hbm_bw_achieved_Bps : 0,
			   .attn_gemm_eff_d64 = profile_has(g->attn_gemm_eff_d64) ? g->attn_gemm_eff_d64 : 0,
			   .attn_gemm_eff_d128 = profile_has(g->attn_gemm_eff_d128) ? g->attn_gemm_eff_d128 : 0,
			   .opt_bytes = gpu_optimizer_bytes(prec != SCN_FP32 && prec != SCN_TF32,
							    prec == SCN_FP16),
			   .flash_fwd_flops = profile_has(g->flash_fwd_flops) ? g->flash_fwd_flops : 0,
			   .flash_bwd_flops = profile_has(g->flash_bwd_flops) ? g->flash_bwd_flops : 0 };
	if (prec == SCN_FP8 && !fp8_split(g, hw, out, d))
		return SIM_EINVAL;
	if (notes && prec == SCN_FP8 && !profile_has(g->eff_max_fp8) &&
	    !profile_has(g->eff_sustained_fp8))
		diag_add(notes, NULL, 0, 0, "gpu: FP8 GEMMs at eff_max, a 16-bit measurement (no "
			 "eff_max_fp8 for '%s')", hw->name);
	if (notes && !profile_has(g->hbm_bw_achieved_Bps))
		diag_add(notes, NULL, 0, 0, "gpu: memory-bound kernels run at the datasheet hbm_bw "
			 "(no measured hbm_bw_achieved for '%s')", hw->name);
	if (notes && profile_has(g->nvlink_bw_Bps) && !profile_has(g->nvlink_bw_achieved_Bps))
		diag_add(notes, NULL, 0, 0, "gpu: NVLink runs at the datasheet nvlink_bw "
			 "(no nvlink_bw_achieved for '%s')", hw->name);
	if (notes && !profile_has(g->kernel_launch_s))
		diag_add(notes, NULL, 0, 0, "gpu: kernel-launch overhead not modelled (no "
			 "published kernel_launch for '%s')", hw->name);
	if (notes && !out->sms)
		diag_add(notes, NULL, 0, 0, "gpu: tile/wave quantization not modelled (SM count "
			 "of '%s' unknown)", hw->name);
	return SIM_OK;
}
