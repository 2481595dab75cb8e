/* models/setup: scenario values to model costs, against hand-computed
 * figures (the software virtual switch on the DPU's Arm cores). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/offload.h"
#include "models/setup.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"
#include "tests/unit/fixture.h"

/* Host: 2 x 56 cores at 2.0 GHz (Xeon-8480C); host costs: OVS 1.88 Mpps
 * per core, MTU 1500 B (host-costs-linux). An Ethernet switch: the
 * BlueField-2 (ARM_DPU) is an Ethernet card, refused on InfiniBand. */
#define CLUSTER(DPU) CLUSTER_HC("host-costs-linux", DPU)
#define CLUSTER_HC(HC, DPU) CLUSTER_FAB(HC, DPU, "")
#define CLUSTER_FAB(HC, DPU, FAB)                                    \
	"cluster:\n"                                                 \
	"  nodes: 2\n"                                               \
	"  gpus_per_node: 8\n"                                       \
	"  gpu: H100-SXM5\n"                                         \
	"  cpu: Xeon-8480C\n"                                        \
	"  host_costs: " HC "\n"                                     \
	"  nic: { profile: ConnectX-7-NDR, rdma_latency: 0.6us }\n"  \
	"  nics_per_node: 8\n"                                       \
	DPU                                                          \
	"  fabric: { topology: single-switch, switch: { profile: SN5600, latency: 130ns }" FAB " }\n" \
	"workload: { model: llama2-7b, parallelism: { tp: 8 }, batch: { global: 16, micro: 2 } }\n"

#define ARM_DPU "  dpu: { profile: BlueField-2, arm_freq: 2.5GHz, arm_rel_speed: 0.4 }\n"

static int costs_of(const char *text, offload_costs *out, diag *d)
{
	scn_scenario *s = fx_load(text);
	setup_host h;
	ck_assert_int_eq(setup_host_of(s, &h, d), SIM_OK);
	int rc = offload_net_costs(s, &s->variants[0], h.freq_Hz, out, d, NULL);
	scn_free(s);
	return rc;
}

/* 8 cores x 2.5 GHz x 0.4 x (1.88e6 packets / 2.0e9 cycles) x 1500 B
 * = 8 x 0.4 x 1.25 x 1.88e6 x 1500 = 11.28 GB/s, a cap on the node's
 * traffic and no host core. */
/* Host TCP with a send cost given (0.1 cycles/byte at the CPU's 2.0 GHz:
 * 0.05 ns/B) and the profile's receive cost (1 / 8.553 GB/s per core):
 * 10 stack cores carry 10 / ((0.05 + 0.116918) / 2 ns) = 119.82 GB/s in
 * and out together. */
START_TEST(tcp_send_and_receive_costs_apart)
{
	offload_costs c;
	diag *d = diag_new();
	double rx = 1 / 8.553e9, tx = 0.1 / 2.0e9;
	ck_assert_int_eq(costs_of(CLUSTER("") "variants: [{ name: t, network: host-tcp }]\n",
				  &c, d), SIM_OK);
	/* No published send cost: taken as the receive cost (an assumption the
	 * report states), so the cap is the receive cost's. */
	ck_assert_double_eq_tol(c.total_tx_core_s_per_byte, rx, 1e-15);
	ck_assert_double_eq_tol(setup_stack_cap_Bps(&c, 10), 10 * 8.553e9, 1e3);
	ck_assert_int_eq(costs_of(CLUSTER_HC("{ profile: host-costs-linux, tcp_tx_cycles_per_byte: "
					     "0.1cycles/byte }", "")
				  "variants: [{ name: t, network: host-tcp }]\n", &c, d), SIM_OK);
	ck_assert_double_eq_tol(c.total_core_s_per_byte, rx, 1e-15);
	ck_assert_double_eq_tol(c.total_tx_core_s_per_byte, tx, 1e-15);
	ck_assert_double_eq_tol(setup_stack_cap_Bps(&c, 10), 10 / ((rx + tx) / 2), 1e3);
	ck_assert_double_eq_tol(setup_stack_cap_Bps(&c, 10), 119.82e9, 0.01e9);
	diag_free(d);
}
END_TEST

/* tcp_cycles_per_packet (what dpusim calibrate fits beside the per-byte
 * costs) reaches the node: at MTU 1500 and 2.0 GHz, 3000 cycles a packet
 * are 2 cycles = 1 ns a byte on each side given in cycles per byte. A
 * clock-free receive throughput includes its packets and takes none. */
START_TEST(tcp_packet_cost_reaches_the_node)
{
	offload_costs c;
	diag *d = diag_new();
	ck_assert_int_eq(costs_of(CLUSTER_HC("{ profile: host-costs-linux, tcp_rx_cycles_per_byte: "
					     "1cycles/byte, tcp_tx_cycles_per_byte: 0.1cycles/byte, "
					     "tcp_cycles_per_packet: 3000cycles/packet }", "")
				  "variants: [{ name: t, network: host-tcp }]\n", &c, d), SIM_OK);
	ck_assert_double_eq_tol(c.total_core_s_per_byte, (1 + 2) / 2.0e9, 1e-18);
	ck_assert_double_eq_tol(c.total_tx_core_s_per_byte, (0.1 + 2) / 2.0e9, 1e-18);
	ck_assert_int_eq(costs_of(CLUSTER_HC("{ profile: host-costs-linux, tcp_cycles_per_packet: "
					     "3000cycles/packet }", "")
				  "variants: [{ name: t, network: host-tcp }]\n", &c, d), SIM_OK);
	ck_assert_double_eq_tol(c.total_core_s_per_byte, 1 / 8.553e9, 1e-18);
	ck_assert_double_eq_tol(c.total_tx_core_s_per_byte, 1 / 8.553e9, 1e-18);
	diag_free(d);
}
END_TEST

/* Where the scenario gives the fabric's MTU, the packets are the fabric's:
 * at 9000 B on Ethernet a TCP packet carries 8948 B (wire.c: MTU - 52), so
 * 3000 cycles a packet are 3000 / 8948 cycles a byte, as the collectives'
 * packet count (coll_transport.mtu_bytes); over IPoIB at IB MTU 4096,
 * 4040 B. Without it the host-costs profile's 1500 B (tcp_packet_cost_
 * reaches_the_node). */
START_TEST(tcp_packet_cost_at_the_fabrics_mss)
{
	offload_costs c;
	diag *d = diag_new();
	setup_host h;
	coll_transport t;
#define PKT_HC "{ profile: host-costs-linux, tcp_rx_cycles_per_byte: 1cycles/byte, " \
	       "tcp_cycles_per_packet: 3000cycles/packet }"
	const char *jumbo = CLUSTER_FAB(PKT_HC, "", ", mtu: 9000B")
		"variants: [{ name: t, network: host-tcp }]\n";
	ck_assert_int_eq(costs_of(jumbo, &c, d), SIM_OK);
	ck_assert_double_eq_tol(c.total_core_s_per_byte, (1 + 3000.0 / 8948) / 2.0e9, 1e-18);
	scn_scenario *s = fx_load(jumbo);
	ck_assert_double_eq(offload_tcp_packet_bytes(s), 8948);
	ck_assert_int_eq(setup_host_of(s, &h, d), SIM_OK);
	ck_assert_int_eq(setup_transport(s, &s->variants[0], &h, &t, d, NULL), SIM_OK);
	ck_assert_uint_eq(t.mtu_bytes, 8948);
	scn_free(s);
	s = fx_load("cluster:\n  nodes: 2\n  gpus_per_node: 8\n  gpu: H100-SXM5\n  cpu: Xeon-8480C\n"
		    "  host_costs: " PKT_HC "\n"
		    "  nic: { profile: ConnectX-7-NDR, rdma_latency: 0.6us }\n"
		    "  fabric: { topology: single-switch, switch: { profile: QM9700-NDR, latency: 130ns },"
		    " mtu: 4096B }\n"
		    "workload: { model: llama2-7b, parallelism: { tp: 8 }, batch: { global: 16, micro: 2 } }\n"
		    "variants: [{ name: t, network: host-tcp }]\n");
	ck_assert_double_eq(offload_tcp_packet_bytes(s), 4040);
	scn_free(s);
	s = fx_load(CLUSTER_HC(PKT_HC, "") "variants: [{ name: t, network: host-tcp }]\n");
	ck_assert_double_eq(offload_tcp_packet_bytes(s), 1500);
	scn_free(s);
#undef PKT_HC
	diag_free(d);
}
END_TEST

START_TEST(arm_vswitch_capacity_by_hand)
{
	offload_costs c;
	diag *d = diag_new();
	ck_assert_int_eq(costs_of(CLUSTER(ARM_DPU) "variants: [{ name: a, network: rdma, "
				  "vswitch: dpu-arm }]\n", &c, d), SIM_OK);
	ck_assert_double_eq_tol(c.engine_cap_Bps, 11.28e9, 1e3);
	ck_assert(c.engine_on_dpu);
	ck_assert_double_eq(c.total_core_s_per_byte, 0);
	ck_assert_str_eq(c.engine_what, "software virtual switch on the DPU's Arm cores");
	diag_free(d);
}
END_TEST

/* The same switch on the host: one core forwards 1.88e6 x 1500 B = 2.82
 * GB/s, so each byte costs 1 / 2.82e9 core-seconds and there is no cap. */
START_TEST(host_vswitch_costs_cores)
{
	offload_costs c;
	diag *d = diag_new();
	ck_assert_int_eq(costs_of(CLUSTER(ARM_DPU) "variants: [{ name: h, network: rdma, "
				  "vswitch: host }]\n", &c, d), SIM_OK);
	ck_assert_double_eq_tol(c.vswitch_core_s_per_byte, 1 / 2.82e9, 1e-15);
	ck_assert_double_eq(c.engine_cap_Bps, 0);
	/* On a 9000 B Ethernet the switch forwards the variant's own packets:
	 * RoCE's 4096 B (Linux iboe_get_mtu), TCP's 8948 B MSS, where the
	 * profile's 1500 B gave the rate above (wire.c). */
	ck_assert_int_eq(costs_of(CLUSTER_FAB("host-costs-linux", ARM_DPU, ", mtu: 9000B")
				  "variants: [{ name: h, network: rdma, vswitch: host }]\n", &c, d),
			 SIM_OK);
	ck_assert_double_eq_tol(c.vswitch_core_s_per_byte, 1500.0 / 4096 / 2.82e9, 1e-18);
	ck_assert_int_eq(costs_of(CLUSTER_FAB("host-costs-linux", ARM_DPU, ", mtu: 9000B")
				  "variants: [{ name: h, network: host-tcp, vswitch: host }]\n", &c, d),
			 SIM_OK);
	ck_assert_double_eq_tol(c.vswitch_core_s_per_byte, 1500.0 / 8948 / 2.82e9, 1e-18);
	diag_free(d);
}
END_TEST

/* Two DPUs per node double the Arm cores. */
START_TEST(arm_vswitch_scales_with_dpus)
{
	offload_costs c;
	diag *d = diag_new();
	ck_assert_int_eq(costs_of(CLUSTER(ARM_DPU "  dpus_per_node: 2\n")
				  "variants: [{ name: a, network: rdma, vswitch: dpu-arm }]\n",
				  &c, d), SIM_OK);
	ck_assert_double_eq_tol(c.engine_cap_Bps, 22.56e9, 1e3);
	diag_free(d);
}
END_TEST

/* BlueField-2 publishes neither its Arm clock nor a relative speed: the
 * loader refuses the variant, naming both and where to set them. */
START_TEST(arm_vswitch_needs_published_figures)
{
	const char *text = CLUSTER("  dpu: BlueField-2\n")
		"variants: [{ name: a, network: rdma, vswitch: dpu-arm }]\n";
	diag *d = diag_new();
	scn_scenario *s = NULL;
	ck_assert_int_eq(scn_load_buffer("t.yaml", text, strlen(text), NULL, &s, d), SIM_EPARSE);
	ck_assert_ptr_null(s);
	bool freq = false, rel = false;
	for (size_t i = 0; i < diag_count(d); i++) {
		freq |= strstr(diag_msg(d, i), "needs 'arm_freq' of dpu profile 'BlueField-2'") != NULL;
		rel |= strstr(diag_msg(d, i), "needs 'arm_rel_speed' of dpu profile 'BlueField-2'") != NULL;
	}
	ck_assert(freq);
	ck_assert(rel);
	diag_free(d);
}
END_TEST

/* Without a DPU the variant is refused by the loader too. */
START_TEST(arm_vswitch_needs_a_dpu)
{
	const char *text = CLUSTER("") "variants: [{ name: a, network: rdma, vswitch: dpu-arm }]\n";
	diag *d = diag_new();
	scn_scenario *s = NULL;
	ck_assert_int_eq(scn_load_buffer("t.yaml", text, strlen(text), NULL, &s, d), SIM_EPARSE);
	bool found = false;
	for (size_t i = 0; i < diag_count(d); i++)
		found |= strstr(diag_msg(d, i), "has vswitch: dpu-arm, but the cluster has no 'dpu'") != NULL;
	ck_assert(found);
	diag_free(d);
}
END_TEST

/* NVLink in the fabric: the profile's achieved figure where it has one
 * (H100-SXM5: NCCL's 20.6 GB/s per link x 18 links = 370.8 GB/s), the
 * datasheet's signalling rate (450 GB/s) where a scenario's override
 * leaves only that, with a note saying so; none for one GPU per node. */
START_TEST(nvlink_achieved_over_datasheet)
{
	scn_scenario *s = fx_load(CLUSTER("") "variants: [{ name: a, network: rdma }]\n");
	fab_config f;
	gpu_spec g;
	diag *d = diag_new(), *notes = diag_new();
	ck_assert_int_eq(setup_fabric(s, &s->variants[0], 16, &f, d), SIM_OK);
	ck_assert_double_eq_tol(f.nvlink_Bps, 18 * 20.6e9, 1e3);
	ck_assert_int_eq(setup_gpu(s, SCN_FP16, &g, d, notes), SIM_OK);
	for (size_t i = 0; i < diag_count(notes); i++)
		ck_assert_ptr_null(strstr(diag_msg(notes, i), "NVLink"));
	/* the optimizer step's bytes follow the precision (gpu_optimizer_bytes) */
	ck_assert_double_eq(g.opt_bytes, 52);
	ck_assert_int_eq(setup_gpu(s, SCN_BF16, &g, d, notes), SIM_OK);
	ck_assert_double_eq(g.opt_bytes, 38);
	ck_assert_int_eq(setup_gpu(s, SCN_FP32, &g, d, notes), SIM_OK);
	ck_assert_double_eq(g.opt_bytes, 32);
	/* unfused attention's GEMMs: the profile's measured fraction; the
	 * H100 SXM5 lists it as missing (0: the roofline) */
	ck_assert(g.attn_gemm_eff_d64 == 0 && g.attn_gemm_eff_d128 == 0);
	s->cluster.gpu.v.gpu.attn_gemm_eff_d64 = 0.3;
	s->cluster.gpu.v.gpu.attn_gemm_eff_d128 = 0.45;
	ck_assert_int_eq(setup_gpu(s, SCN_FP32, &g, d, notes), SIM_OK);
	ck_assert_double_eq(g.attn_gemm_eff_d64, 0.3);
	ck_assert_double_eq(g.attn_gemm_eff_d128, 0.45);
	s->cluster.gpu.v.gpu.attn_gemm_eff_d64 = NAN;
	s->cluster.gpu.v.gpu.attn_gemm_eff_d128 = NAN;
	/* 16-bit training runs every GEMM at the precision's peak; FP8 as
	 * Transformer Engine runs it keeps attention and the output layer at
	 * the BF16 peak (989.5 TFLOP/s) and casts the linear layers' operands */
	ck_assert(g.attn_flops == 0 && g.logit_flops == 0 && !g.fp8_cast);
	ck_assert_int_eq(setup_gpu(s, SCN_FP8, &g, d, notes), SIM_OK);
	ck_assert_double_eq_tol(g.peak_flops, 1979e12, 1e3);
	ck_assert_double_eq_tol(g.attn_flops, 989.5e12, 1e3);
	ck_assert_double_eq_tol(g.logit_flops, 989.5e12, 1e3);
	ck_assert(g.fp8_cast);
	ck_assert_double_eq(g.opt_bytes, 38);
	/* the FP8 GEMMs at FP8's own measured fraction (Bekman's MAMF table,
	 * H100 SXM FP8: 70.9%), attention and logits at the BF16 one (80.3%) */
	ck_assert_double_eq_tol(g.eff_max, 0.709, 1e-12);
	ck_assert_double_eq_tol(g.eff16, 0.803, 1e-12);
	double fp8_eff = s->cluster.gpu.v.gpu.eff_max_fp8;
	s->cluster.gpu.v.gpu.eff_max_fp8 = NAN; /* none: eff_max, with a note */
	size_t had = diag_count(notes);
	ck_assert_int_eq(setup_gpu(s, SCN_FP8, &g, d, notes), SIM_OK);
	ck_assert_double_eq_tol(g.eff_max, 0.803, 1e-12);
	ck_assert_double_eq(g.eff16, 0);
	bool said = false;
	for (size_t i = had; i < diag_count(notes); i++)
		said |= strstr(diag_msg(notes, i), "no eff_max_fp8 for 'H100-SXM5'") != NULL;
	ck_assert(said);
	s->cluster.gpu.v.gpu.eff_max_fp8 = fp8_eff;
	ck_assert_int_eq(setup_gpu(s, SCN_BF16, &g, d, notes), SIM_OK);
	ck_assert(g.eff_max > 0.8 && g.eff16 == 0);
	/* a power-saturated (sustained) GEMM figure, where a profile gives
	 * one, replaces the burst's: 16-bit GEMMs at eff_sustained, FP8's at
	 * eff_sustained_fp8 beside 16-bit attention at eff_sustained; the
	 * shipped H100 profile lists both as missing */
	ck_assert(!profile_has(s->cluster.gpu.v.gpu.eff_sustained));
	s->cluster.gpu.v.gpu.eff_sustained = 0.7;
	ck_assert_int_eq(setup_gpu(s, SCN_BF16, &g, d, notes), SIM_OK);
	ck_assert_double_eq_tol(g.eff_max, 0.7, 1e-12);
	ck_assert_int_eq(setup_gpu(s, SCN_FP8, &g, d, notes), SIM_OK);
	ck_assert_double_eq_tol(g.eff_max, 0.709, 1e-12);
	ck_assert_double_eq_tol(g.eff16, 0.7, 1e-12);
	s->cluster.gpu.v.gpu.eff_sustained_fp8 = 0.6;
	ck_assert_int_eq(setup_gpu(s, SCN_FP8, &g, d, notes), SIM_OK);
	ck_assert_double_eq_tol(g.eff_max, 0.6, 1e-12);
	ck_assert_double_eq_tol(g.eff16, 0.7, 1e-12);
	s->cluster.gpu.v.gpu.eff_sustained = s->cluster.gpu.v.gpu.eff_sustained_fp8 = NAN;
	/* without a BF16 peak FP8 cannot place attention: refused, named */
	double bf16 = s->cluster.gpu.v.gpu.peak_bf16_flops;
	s->cluster.gpu.v.gpu.peak_bf16_flops = NAN;
	size_t before = diag_count(d);
	ck_assert_int_eq(setup_gpu(s, SCN_FP8, &g, d, notes), SIM_EINVAL);
	ck_assert_uint_gt(diag_count(d), before);
	ck_assert_ptr_nonnull(strstr(diag_msg(d, before), "peak_bf16_flops"));
	s->cluster.gpu.v.gpu.peak_bf16_flops = bf16;
	s->cluster.gpu.v.gpu.nvlink_bw_achieved_Bps = NAN;
	ck_assert_int_eq(setup_fabric(s, &s->variants[0], 16, &f, d), SIM_OK);
	ck_assert_double_eq_tol(f.nvlink_Bps, 450e9, 1e3);
	ck_assert_int_eq(setup_gpu(s, SCN_FP16, &g, d, notes), SIM_OK);
	bool noted = false;
	for (size_t i = 0; i < diag_count(notes); i++)
		noted |= strstr(diag_msg(notes, i), "NVLink runs at the datasheet nvlink_bw "
				"(no nvlink_bw_achieved for 'H100-SXM5')") != NULL;
	ck_assert(noted);
	s->cluster.gpus_per_node = 1;
	ck_assert_int_eq(setup_fabric(s, &s->variants[0], 2, &f, d), SIM_OK);
	ck_assert_double_eq(f.nvlink_Bps, 0);
	diag_free(d);
	diag_free(notes);
	scn_free(s);
}
END_TEST

/* payload_frac of variant v (0 host-tcp, 1 rdma) on a 400 Gb/s fabric of
 * switch sw with fabric keys extra. */
static double frac_of(const char *sw, const char *extra, int v)
{
	char text[2048];
	snprintf(text, sizeof text, "cluster:\n  nodes: 2\n  gpus_per_node: 8\n  gpu: H100-SXM5\n"
		 "  cpu: Xeon-8480C\n  host_costs: host-costs-linux\n"
		 "  nic: { profile: ConnectX-7-NDR, rdma_latency: 0.6us }\n  nics_per_node: 8\n"
		 "  fabric: { topology: single-switch, switch: { profile: %s, latency: 130ns }%s }\n"
		 "workload: { model: llama2-7b, parallelism: { tp: 8 }, batch: { global: 16, micro: 2 } }\n"
		 "variants: [{ name: tcp, network: host-tcp }, { name: rdma, network: rdma }]\n", sw, extra);
	scn_scenario *s = fx_load(text);
	diag *d = diag_new();
	fab_config f;
	ck_assert_int_eq(setup_fabric(s, &s->variants[v], 16, &f, d), SIM_OK);
	ck_assert_double_eq(f.link_Bps, 50e9);
	diag_free(d);
	scn_free(s);
	return f.payload_frac;
}

/* The fabric's links carry payload at the share the variant's packets
 * leave them (models/wire.h): on Ethernet at the default 1500-byte MTU
 * RoCEv2 runs 1024-byte packets (1024 / 1106) and TCP 1448 (1448 / 1538);
 * at mtu 9000B, 4096 / 4178 and 8948 / 9038; on InfiniBand (QM9700) RDMA
 * 4096-byte packets (4096 / 4122) and TCP over IPoIB OpenSM's 2048 (1992
 * / 2082), and at mtu 4096B both 4096 (IPoIB 4040 / 4130). */
START_TEST(links_carry_the_variants_payload)
{
	ck_assert_double_eq(frac_of("SN5600", "", 1), 1024.0 / 1106);
	ck_assert_double_eq(frac_of("SN5600", "", 0), 1448.0 / 1538);
	ck_assert_double_eq(frac_of("SN5600", ", mtu: 9000B", 1), 4096.0 / 4178);
	ck_assert_double_eq(frac_of("SN5600", ", mtu: 9000B", 0), 8948.0 / 9038);
	ck_assert_double_eq(frac_of("QM9700-NDR", "", 1), 4096.0 / 4122);
	ck_assert_double_eq(frac_of("QM9700-NDR", "", 0), 1992.0 / 2082);
	ck_assert_double_eq(frac_of("QM9700-NDR", ", mtu: 4KiB", 1), 4096.0 / 4122);
	ck_assert_double_eq(frac_of("QM9700-NDR", ", mtu: 4KiB", 0), 4040.0 / 4130);
}
END_TEST

/* OS jitter (noise.os_jitter_delay) lands on host-tcp messages only: the
 * transport's mean extra delay is the scenario's, in picoseconds; RDMA's
 * kernel-bypass path has none. */
START_TEST(os_jitter_delay_on_host_tcp_only)
{
	scn_scenario *s = fx_load(CLUSTER("") "noise: { os_jitter_delay: 20us }\n"
				  "variants: [{ name: t, network: host-tcp }, { name: r, network: rdma }]\n");
	setup_host h;
	coll_transport t;
	diag *d = diag_new();
	ck_assert_int_eq(setup_host_of(s, &h, d), SIM_OK);
	ck_assert_int_eq(setup_transport(s, &s->variants[0], &h, &t, d, NULL), SIM_OK);
	ck_assert_int_eq(t.jitter_mean_ps, 20 * SIM_US);
	ck_assert_int_eq(setup_transport(s, &s->variants[1], &h, &t, d, NULL), SIM_OK);
	ck_assert_int_eq(t.jitter_mean_ps, 0);
	diag_free(d);
	scn_free(s);
}
END_TEST

/* Host memory in the fabric: the CPU profile's mem_bw per socket times the
 * sockets (Xeon-8480C: 8 x 4800 MT/s x 8 B = 307.2 GB/s per socket, 2
 * sockets: 614.4 GB/s; a scenario's one socket: 307.2 GB/s). The notes of
 * host-tcp and rdma say how often a byte crosses it, rdma-gdr's nothing.
 * Without mem_bw: no bound, and the note says so. */
START_TEST(host_memory_from_cpu_profile)
{
	scn_scenario *s = fx_load(CLUSTER("") "variants: [{ name: t, network: host-tcp }, "
				  "{ name: r, network: rdma }, { name: g, network: rdma-gdr }]\n");
	setup_host h;
	coll_transport t;
	fab_config f;
	diag *d = diag_new(), *notes[3] = { diag_new(), diag_new(), diag_new() };
	ck_assert_int_eq(setup_host_of(s, &h, d), SIM_OK);
	ck_assert_int_eq(setup_fabric(s, &s->variants[0], 16, &f, d), SIM_OK);
	ck_assert_double_eq_tol(f.host_mem_Bps, 614.4e9, 1);
	ck_assert_double_eq_tol(h.mem_Bps, 614.4e9, 1);
	for (int v = 0; v < 3; v++)
		ck_assert_int_eq(setup_transport(s, &s->variants[v], &h, &t, d, notes[v]), SIM_OK);
	ck_assert(fx_has_msg(notes[0], "host memory: 614.4 GB/s per node (mem_bw x sockets of "
			   "'Xeon-8480C'"));
	ck_assert(fx_has_msg(notes[0], "host-tcp moves crosses it four times per end"));
	ck_assert(fx_has_msg(notes[1], "rdma moves crosses it twice per end (the GPU's copy into NCCL's host buffer"));
	ck_assert(!fx_has_msg(notes[2], "host memory"));
	s->cluster.cpu.v.cpu.sockets = 1;
	ck_assert_int_eq(setup_fabric(s, &s->variants[0], 16, &f, d), SIM_OK);
	ck_assert_double_eq_tol(f.host_mem_Bps, 307.2e9, 1);
	s->cluster.cpu.v.cpu.mem_bw_Bps = NAN;
	ck_assert_int_eq(setup_fabric(s, &s->variants[0], 16, &f, d), SIM_OK);
	ck_assert_double_eq(f.host_mem_Bps, 0);
	ck_assert_int_eq(setup_host_of(s, &h, d), SIM_OK);
	ck_assert_double_eq(h.mem_Bps, 0);
	ck_assert_int_eq(setup_transport(s, &s->variants[0], &h, &t, d, notes[2]), SIM_OK);
	ck_assert(fx_has_msg(notes[2], "host memory: not a bound on host-tcp transfers (CPU "
			   "profile 'Xeon-8480C' gives no mem_bw)"));
	ck_assert_uint_eq(diag_count(d), 0);
	for (int v = 0; v < 3; v++)
		diag_free(notes[v]);
	diag_free(d);
	scn_free(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("setup");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, arm_vswitch_capacity_by_hand);
	tcase_add_test(tc, tcp_send_and_receive_costs_apart);
	tcase_add_test(tc, tcp_packet_cost_reaches_the_node);
	tcase_add_test(tc, tcp_packet_cost_at_the_fabrics_mss);
	tcase_add_test(tc, host_vswitch_costs_cores);
	tcase_add_test(tc, arm_vswitch_scales_with_dpus);
	tcase_add_test(tc, arm_vswitch_needs_published_figures);
	tcase_add_test(tc, arm_vswitch_needs_a_dpu);
	tcase_add_test(tc, nvlink_achieved_over_datasheet);
	tcase_add_test(tc, links_carry_the_variants_payload);
	tcase_add_test(tc, os_jitter_delay_on_host_tcp_only);
	tcase_add_test(tc, host_memory_from_cpu_profile);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
