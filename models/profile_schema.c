/* The profile schema: every field of every kind, its unit, its accepted
 * range and meaning. docs/profiles.md is written from this table. Ranges are
 * sanity bounds (catching a wrong prefix or a sign), not claims about real
 * devices. */
#include <math.h>
#include <stddef.h>

#include "models/profile.h"

#define F(k, st, nm, member, d, l, h, open, txt)                                  \
	{ .kind = PROFILE_##k, .name = nm, .dim = d, .offset = offsetof(st, member), \
	  .lo = l, .hi = h, .lo_open = open, .doc = txt }
#define B(k, st, nm, member, txt)                                                  \
	{ .kind = PROFILE_##k, .name = nm, .is_bool = true, .offset = offsetof(st, member), \
	  .lo = 0, .hi = 1, .doc = txt }

#define W(k, st, nm, member, list, txt)                                              \
	{ .kind = PROFILE_##k, .name = nm, .words = list, .offset = offsetof(st, member), \
	  .lo = 0, .hi = 2, .doc = txt }

const char *const profile_link_layer_words[] = { "infiniband", "ethernet", "vpi", NULL };

/* NIC fields, shared by nic and dpu (a DPU is a NIC plus Arm cores and engines). */
#define NIC_FIELDS(k, st, pre)                                                              \
	F(k, st, "ports", pre ports, UNIT_COUNT, 1, 16, false, "network ports"),             \
	F(k, st, "port_rate", pre port_rate_Bps, UNIT_BYTES_PER_S, 0, 1e13, true, "rate per port"), \
	F(k, st, "rdma_latency", pre rdma_latency_s, UNIT_SECONDS, 0, 1e-3, true,             \
	  "one-way small-message RDMA latency, NIC to NIC through one switch"),               \
	F(k, st, "msg_rate", pre msg_rate_per_s, UNIT_PER_S, 0, 1e11, true, "messages per second"), \
	F(k, st, "pcie_gen", pre pcie_gen, UNIT_COUNT, 1, 7, false, "PCIe generation"),       \
	F(k, st, "pcie_lanes", pre pcie_lanes, UNIT_COUNT, 1, 32, false, "PCIe lanes"),       \
	B(k, st, "gpudirect", pre gpudirect, "GPUDirect RDMA supported"),                     \
	F(k, st, "power_w", pre power_w, UNIT_WATTS, 0, 1e3, true, "typical power"),          \
	W(k, st, "link_layer", pre link_layer, profile_link_layer_words,                       \
	  "what the ports speak: infiniband, ethernet, or vpi (either, set per port)")

const profile_field profile_fields[] = {
	F(GPU, profile_gpu, "peak_fp64_flops", peak_fp64_flops, UNIT_FLOP_PER_S, 0, 1e18, true, "dense FP64 peak"),
	F(GPU, profile_gpu, "peak_fp32_flops", peak_fp32_flops, UNIT_FLOP_PER_S, 0, 1e18, true, "dense FP32 peak"),
	F(GPU, profile_gpu, "peak_tf32_flops", peak_tf32_flops, UNIT_FLOP_PER_S, 0, 1e18, true, "dense TF32 tensor-core peak"),
	F(GPU, profile_gpu, "peak_fp16_flops", peak_fp16_flops, UNIT_FLOP_PER_S, 0, 1e18, true, "dense FP16 tensor-core peak"),
	F(GPU, profile_gpu, "peak_bf16_flops", peak_bf16_flops, UNIT_FLOP_PER_S, 0, 1e18, true, "dense BF16 tensor-core peak"),
	F(GPU, profile_gpu, "peak_fp8_flops", peak_fp8_flops, UNIT_FLOP_PER_S, 0, 1e18, true, "dense FP8 tensor-core peak"),
	F(GPU, profile_gpu, "hbm_bytes", hbm_bytes, UNIT_BYTES, 0, 1e13, true, "memory size"),
	F(GPU, profile_gpu, "hbm_bw", hbm_bw_Bps, UNIT_BYTES_PER_S, 0, 1e14, true, "memory bandwidth"),
	F(GPU, profile_gpu, "hbm_bw_achieved", hbm_bw_achieved_Bps, UNIT_BYTES_PER_S, 0, 1e14, true,
	  "memory bandwidth a streaming (copy-like) kernel achieves, measured"),
	F(GPU, profile_gpu, "attn_gemm_eff_d64", attn_gemm_eff_d64, UNIT_FRACTION, 0, 1, true,
	  "fraction of peak at which unfused attention's batched score and value GEMMs (k or n the head "
	  "dim) do their arithmetic on top of moving their bytes at the streaming rate, measured at "
	  "head dim 64"),
	F(GPU, profile_gpu, "attn_gemm_eff_d128", attn_gemm_eff_d128, UNIT_FRACTION, 0, 1, true,
	  "the same, measured at head dim 128; between 64 and 128 the fraction is interpolated "
	  "linearly in the head dim, outside it held at the nearer measurement"),
	F(GPU, profile_gpu, "nvlink_bw", nvlink_bw_Bps, UNIT_BYTES_PER_S, 0, 1e13, true, "NVLink bandwidth per GPU, per direction"),
	F(GPU, profile_gpu, "nvlink_bw_achieved", nvlink_bw_achieved_Bps, UNIT_BYTES_PER_S, 0, 1e13, true,
	  "NVLink bandwidth per GPU, per direction, that data movement achieves (links x per-link figure)"),
	/* At most NCCL's MAXCHANNELS, 64 (NVIDIA/nccl src/include/device.h, commit 0524aef7). */
	F(GPU, profile_gpu, "nccl_channels", nccl_channels, UNIT_COUNT, 1, 64, false,
	  "channels (rings) NCCL runs among the node's GPUs on NVLink, as its NCCL_DEBUG=INFO log prints them"),
	B(GPU, profile_gpu, "nvls", nvls,
	  "the NVSwitch the GPU's NVLink attaches to reduces and multicasts (NVLink SHARP, NCCL's NVLS)"),
	F(GPU, profile_gpu, "compute_capability", compute_capability, UNIT_NUMBER, 1, 20, false,
	  "CUDA compute capability, major.minor (8.0 Ampere, 9.0 Hopper): NCCL keys its search's speed "
	  "steps and its tuner's per-architecture caps on it"),
	F(GPU, profile_gpu, "pcie_gen", pcie_gen, UNIT_COUNT, 1, 7, false, "PCIe generation"),
	F(GPU, profile_gpu, "pcie_lanes", pcie_lanes, UNIT_COUNT, 1, 32, false, "PCIe lanes"),
	F(GPU, profile_gpu, "kernel_launch", kernel_launch_s, UNIT_SECONDS, 0, 1e-3, false, "launch overhead per kernel"),
	F(GPU, profile_gpu, "eff_max", eff_max, UNIT_FRACTION, 0, 1, true, "best achieved fraction of peak on large GEMMs"),
	F(GPU, profile_gpu, "eff_max_fp8", eff_max_fp8, UNIT_FRACTION, 0, 1, true,
	  "best achieved fraction of the FP8 peak on large FP8 GEMMs"),
	F(GPU, profile_gpu, "eff_sustained", eff_sustained, UNIT_FRACTION, 0, 1, true,
	  "best fraction of peak on large GEMMs run until the board sits at its power limit "
	  "(a sustained matmul, not a burst at the boost clock); training GEMMs run at it"),
	F(GPU, profile_gpu, "eff_sustained_fp8", eff_sustained_fp8, UNIT_FRACTION, 0, 1, true,
	  "the same for large FP8 GEMMs; an fp8 job's linear GEMMs run at it"),
	F(GPU, profile_gpu, "eff_half_flops", eff_half_flop, UNIT_FLOP, 0, 1e16, true,
	  "operation size at which achieved efficiency is half of eff_max"),
	F(GPU, profile_gpu, "flash_fwd_flops", flash_fwd_flops, UNIT_FLOP_PER_S, 0, 1e18, true,
	  "fused causal attention forward at head dim 128, measured, FLOPs as FlashAttention counts them"),
	F(GPU, profile_gpu, "flash_bwd_flops", flash_bwd_flops, UNIT_FLOP_PER_S, 0, 1e18, true,
	  "fused attention backward at head dim 128, measured, FLOPs as FlashAttention counts them"),
	F(GPU, profile_gpu, "tdp_w", tdp_w, UNIT_WATTS, 0, 1e4, true, "power at full load"),
	F(GPU, profile_gpu, "idle_w", idle_w, UNIT_WATTS, 0, 1e4, false, "power when idle"),

	F(CPU, profile_cpu, "sockets", sockets, UNIT_COUNT, 1, 16, false, "sockets per node"),
	F(CPU, profile_cpu, "cores_per_socket", cores_per_socket, UNIT_COUNT, 1, 1024, false, "cores per socket"),
	F(CPU, profile_cpu, "freq", freq_hz, UNIT_HZ, 0, 1e10, true, "base (all-core sustained) frequency"),
	F(CPU, profile_cpu, "mem_bw", mem_bw_Bps, UNIT_BYTES_PER_S, 0, 1e13, true, "memory bandwidth per socket"),
	F(CPU, profile_cpu, "tdp_w", tdp_w, UNIT_WATTS, 0, 1e4, true, "power per socket at full load"),
	F(CPU, profile_cpu, "idle_w", idle_w, UNIT_WATTS, 0, 1e4, false, "power per socket when idle"),
	F(CPU, profile_cpu, "pcie_read_lat", pcie_read_lat_s, UNIT_SECONDS, 0, 1e-4, true,
	  "a PCIe device's DMA read of host memory: round trip of a small (64 B) read, request "
	  "to completion, as the device measures it"),
	F(CPU, profile_cpu, "mem_lat", mem_lat_s, UNIT_SECONDS, 0, 1e-5, true,
	  "a core's load that misses every cache level (memory latency): a polling CPU's load "
	  "of a line a device has just written"),

	NIC_FIELDS(NIC, profile_nic, ),
	B(NIC, profile_nic, "inline_crypto", inline_crypto,
	  "inline IPsec/TLS (AES-GCM) engine on the adapter (crypto-enabled SKUs)"),
	F(NIC, profile_nic, "inline_crypto_bw", inline_crypto_bw_Bps, UNIT_BYTES_PER_S, 0, 1e13, true,
	  "inline IPsec/TLS (AES-GCM) engine throughput"),

	NIC_FIELDS(DPU, profile_dpu, nic.),
	F(DPU, profile_dpu, "arm_cores", arm_cores, UNIT_COUNT, 1, 1024, false, "Arm cores"),
	F(DPU, profile_dpu, "arm_freq", arm_freq_hz, UNIT_HZ, 0, 1e10, true, "Arm core frequency"),
	F(DPU, profile_dpu, "arm_rel_speed", arm_rel_speed, UNIT_FRACTION, 0, 4, true,
	  "work per cycle relative to a host x86 core"),
	F(DPU, profile_dpu, "crypto_rate", crypto_rate_Bps, UNIT_BYTES_PER_S, 0, 1e13, true,
	  "inline IPsec/TLS (AES-GCM) engine throughput"),
	F(DPU, profile_dpu, "asap2_pps", asap2_pps, UNIT_PER_S, 0, 1e11, true, "virtual-switch offload, packets per second"),
	F(DPU, profile_dpu, "snap_iops", snap_iops, UNIT_PER_S, 0, 1e10, true, "NVMe-oF/SNAP emulation IOPS"),
	F(DPU, profile_dpu, "snap_bw", snap_bw_Bps, UNIT_BYTES_PER_S, 0, 1e13, true, "NVMe-oF/SNAP emulation bandwidth"),
	F(DPU, profile_dpu, "dma_bw", dma_bw_Bps, UNIT_BYTES_PER_S, 0, 1e13, true, "DMA engine bandwidth"),

	F(SWITCH, profile_switch, "radix", radix, UNIT_COUNT, 2, 4096, false, "ports"),
	F(SWITCH, profile_switch, "port_rate", port_rate_Bps, UNIT_BYTES_PER_S, 0, 1e13, true, "rate per port"),
	F(SWITCH, profile_switch, "latency", latency_s, UNIT_SECONDS, 0, 1e-4, true, "port-to-port latency"),
	B(SWITCH, profile_switch, "sharp", sharp, "in-network reduction (SHARP)"),
	F(SWITCH, profile_switch, "power_w", power_w, UNIT_WATTS, 0, 1e5, true, "typical power"),
	W(SWITCH, profile_switch, "link_layer", link_layer, profile_link_layer_words,
	  "what the ports speak: infiniband or ethernet (sets the fabric's default routing)"),

	F(STORAGE, profile_storage, "bw", bw_Bps, UNIT_BYTES_PER_S, 0, 1e13, true, "read bandwidth per server"),
	F(STORAGE, profile_storage, "iops", iops, UNIT_PER_S, 0, 1e10, true, "IOs per second per server"),
	F(STORAGE, profile_storage, "io_latency", io_latency_s, UNIT_SECONDS, 0, 1, true, "latency per IO"),
	F(STORAGE, profile_storage, "power_w", power_w, UNIT_WATTS, 0, 1e5, true, "typical power per server"),
	F(STORAGE, profile_storage, "write_bw", write_bw_Bps, UNIT_BYTES_PER_S, 0, 1e13, true, "sustained write bandwidth per server (checkpoints)"),
	F(STORAGE, profile_storage, "pcie_gen", pcie_gen, UNIT_COUNT, 1, 7, false, "PCIe generation of a drive's link (node-local NVMe)"),
	F(STORAGE, profile_storage, "pcie_lanes", pcie_lanes, UNIT_COUNT, 1, 32, false, "PCIe lanes of a drive's link (node-local NVMe)"),

	F(HOST_COSTS, profile_host_costs, "tcp_rx_cycles_per_byte", tcp_rx_cycles_per_byte, UNIT_CYCLES_PER_BYTE, 0, 1e3, true,
	  "Linux TCP receive path, per byte"),
	/* 0 allowed: an effective profile (dpusim calibrate --effective-ring)
	 * holds the send side's cost in the receive figure, and left out the
	 * model would take the receive side's again (offload.c) */
	F(HOST_COSTS, profile_host_costs, "tcp_tx_cycles_per_byte", tcp_tx_cycles_per_byte, UNIT_CYCLES_PER_BYTE, 0, 1e3, false,
	  "Linux TCP send path, per byte (0: held in tcp_rx_cycles_per_byte, as an effective profile gives it)"),
	F(HOST_COSTS, profile_host_costs, "tcp_cycles_per_packet", tcp_cycles_per_packet, UNIT_CYCLES_PER_PACKET, 0, 1e7, true,
	  "per-packet stack cost"),
	F(HOST_COSTS, profile_host_costs, "mtu", mtu_bytes, UNIT_BYTES, 576, 65536, false, "packet size on the wire"),
	F(HOST_COSTS, profile_host_costs, "aes_gcm_cycles_per_byte", aes_gcm_cycles_per_byte, UNIT_CYCLES_PER_BYTE, 0, 1e3, true,
	  "AES-GCM on the host (AES-NI + PCLMULQDQ)"),
	F(HOST_COSTS, profile_host_costs, "vswitch_cycles_per_packet", vswitch_cycles_per_packet, UNIT_CYCLES_PER_PACKET, 0, 1e7, true,
	  "software OVS datapath, per packet"),
	F(HOST_COSTS, profile_host_costs, "nfs_cycles_per_byte", nfs_cycles_per_byte, UNIT_CYCLES_PER_BYTE, 0, 1e3, true,
	  "storage client (NFS over TCP), per byte"),
	F(HOST_COSTS, profile_host_costs, "tcp_latency", tcp_latency_s, UNIT_SECONDS, 0, 1e-2, false,
	  "extra one-way latency of the host stack per message"),
	F(HOST_COSTS, profile_host_costs, "tcp_rx_bw_per_core", tcp_rx_bw_per_core_Bps, UNIT_BYTES_PER_S, 0, 1e12, true,
	  "TCP receive (copy path) throughput of one fully busy core; tcp_rx_cycles_per_byte = clock / this"),
	F(HOST_COSTS, profile_host_costs, "vswitch_pps_per_core", vswitch_pps_per_core, UNIT_PER_S, 0, 1e10, true,
	  "packets per second one core forwards through the kernel OVS datapath"),
};
const size_t profile_nfields = sizeof profile_fields / sizeof profile_fields[0];
