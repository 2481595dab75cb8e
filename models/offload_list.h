/* Every offload option a variant can choose, per kind, in enum order:
 * X(enum constant, scenario word). The enums (scenario.h), the words the
 * scenario loader accepts, the dump and the report print, and the rows of
 * models/offload.c (what each option needs and does) follow these lists.
 * Adding an option: a line here, a row and a function in offload.c. */
#ifndef DPUSIM_MODELS_OFFLOAD_LIST_H
#define DPUSIM_MODELS_OFFLOAD_LIST_H

/* host-tcp: NCCL's socket transport through the kernel; rdma: verbs from
 * host memory; rdma-gdr: GPUDirect RDMA, the NIC reads GPU memory. */
#define OFFLOAD_NETWORKS(X)                 \
	X(SCN_NET_HOST_TCP, "host-tcp")     \
	X(SCN_NET_RDMA, "rdma")             \
	X(SCN_NET_RDMA_GDR, "rdma-gdr")

/* host: NFS over TCP through the host's file-system client; dpu-snap:
 * NVMe-oF/SNAP on the DPU; gds: GPUDirect Storage; host-rdma: the host's
 * NVMe-oF over RDMA initiator (Linux nvme-rdma), into a host bounce buffer. */
#define OFFLOAD_STORAGES(X)                 \
	X(SCN_STOR_HOST, "host")            \
	X(SCN_STOR_DPU_SNAP, "dpu-snap")    \
	X(SCN_STOR_GDS, "gds")              \
	X(SCN_STOR_HOST_RDMA, "host-rdma")

/* host: AES-GCM on the host's cores (kernel IPsec/kTLS); dpu-inline: the
 * DPU's inline engine; nic-inline: the ConnectX NIC's inline engine
 * (crypto-enabled SKUs). */
#define OFFLOAD_CRYPTOS(X)                     \
	X(SCN_CRYPTO_NONE, "none")             \
	X(SCN_CRYPTO_HOST, "host")             \
	X(SCN_CRYPTO_DPU_INLINE, "dpu-inline") \
	X(SCN_CRYPTO_NIC_INLINE, "nic-inline")

/* host: the kernel OVS datapath on the host's cores; dpu: ASAP2 offload in
 * the DPU's switch; dpu-arm: the software switch on the DPU's Arm cores. */
#define OFFLOAD_VSWITCHES(X)              \
	X(SCN_VSW_NONE, "none")           \
	X(SCN_VSW_HOST, "host")           \
	X(SCN_VSW_DPU, "dpu")             \
	X(SCN_VSW_DPU_ARM, "dpu-arm")

#define OFFLOAD_ENUM_(e, w) e,
#define OFFLOAD_WORD_(e, w) w,

#endif
