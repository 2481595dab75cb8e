/* From a resolved scenario to the models' parameters: the fabric of a set
 * of GPUs, the transport and host costs an offload variant implies, the
 * GPU's compute parameters. One place where profile fields become model
 * inputs, so every model reads hardware the same way, and where a figure a
 * model needs but no profile publishes is reported, never made up. */
#ifndef DPUSIM_MODELS_SETUP_H
#define DPUSIM_MODELS_SETUP_H

#include <stdint.h>

#include "models/coll.h"
#include "models/diag.h"
#include "models/fabric.h"
#include "models/gpu.h"
#include "models/offload.h"
#include "models/scenario.h"
#include "models/transport.h"
#include "models/wire.h"

/* PCIe bandwidth per direction of one link: lanes x per-lane rate of the
 * generation (PCI-SIG base specifications: Gen3 8 GT/s, Gen4 16 GT/s, Gen5
 * 32 GT/s, Gen6 64 GT/s, 128b/130b encoding; Gen6 FLIT 242/256). 0 when the
 * generation is unknown. */
double setup_pcie_Bps(double gen, double lanes);

/* The bound that `stack_cores` host cores put on a node's network traffic,
 * in and out together (B/s; 0 when the variant costs the host nothing): the
 * cores serve r = in + out bytes/s at (tx + rx) / 2 core-s per byte, exact
 * when the node sends as much as it receives (ring and tree collectives,
 * pipeline activations one way and gradients back), an approximation when
 * it does not (the flow solver has one capacity per resource, not a
 * weighted sum of the two directions). */
double setup_stack_cap_Bps(const offload_costs *c, double stack_cores);

/* Host CPU of one node: cores and clock. 0 or SIM_EINVAL with messages. */
typedef struct setup_host {
	double cores;
	double freq_Hz;
	double mem_Bps;
} setup_host;

int setup_host_of(const scn_scenario *s, setup_host *out, diag *d);

/* The packets variant v's network transport sends over the scenario's
 * fabric doing op (models/wire.h): InfiniBand RC or RoCEv2 for rdma and
 * rdma-gdr, TCP over IPoIB or Ethernet for host-tcp, at the fabric's mtu
 * or the link layer's default for the transport. 0 or SIM_EINVAL with a
 * message (a link layer not known, an MTU the link layer has not: the
 * loader refuses both). */
int setup_wire(const scn_scenario *s, const scn_variant *v, wire_op op, wire_frame *out,
	       diag *d);

/* The same for transport t (a storage protocol's: NFS over TCP, NVMe-oF
 * or GPUDirect Storage over RDMA). */
int setup_wire_for(const scn_scenario *s, wire_transport t, wire_op op, wire_frame *out,
		   diag *d);

/* The share of a link's rate that variant v's packets leave to payload on
 * the scenario's fabric (setup_wire's frame of a WRITE, wire_payload_frac):
 * what setup_fabric's links carry, and what dpusim plan's estimate takes. 0
 * or SIM_EINVAL with a message, *frac untouched. */
int setup_payload_frac(const scn_scenario *s, const scn_variant *v, double *frac, diag *d);

/* The fabric for `gpus` GPUs of the scenario's cluster (packed onto
 * ceil(gpus / gpus_per_node) nodes) as variant v runs it: its links carry
 * payload at the share of their rate that v's packets leave to it
 * (setup_wire, wire_payload_frac); host memory per node the CPU profile's
 * mem_bw x sockets (0, not a bound, without mem_bw: setup_transport notes
 * it). 0 or SIM_EINVAL with messages. */
int setup_fabric(const scn_scenario *s, const scn_variant *v, uint32_t gpus, fab_config *out,
		 diag *d);

/* The transport of a variant (latency, host cycles at the node's clock).
 * Fills notes (may be NULL) with what was assumed or not modelled,
 * host memory included. */
int setup_transport(const scn_scenario *s, const scn_variant *v, const setup_host *h,
		    coll_transport *out, diag *d, diag *notes);

/* The collective model of the scenario (collectives.protocol): NCCL's cost
 * model (COLL_PROTO_NCCL: protocols, channels and loops per size, models/coll.h)
 * unless it says ideal (COLL_PROTO_IDEAL, the closed form). Every path that
 * runs collectives takes it from here (dpusim run's benchmarks, training,
 * benchmarks beside training), so one collective costs the same in each. */
coll_proto setup_coll_proto(const scn_scenario *s);

/* What the report's info says of the model p (setup_coll_proto). */
const char *setup_coll_model_text(coll_proto p);
/* What the report's info says of collectives.ring_steps: lumped. */
#define SETUP_LUMPED_RING_TEXT                                                                  \
	"lumped (collectives.ring_steps: lumped): a ring's lock-step steps run as one flow, "    \
	"their latencies summed after it, an approximation for speed (docs/collectives.md "    \
	"\"Lumped ring steps\")"

/* NCCL's channels for a collective among the GPUs of one node over NVLink:
 * the GPU profile's nccl_channels (NCCL's count in its own log), else 0
 * (the collective's default, one per NIC of the node, coll.h) with a note
 * in notes (may be NULL) naming `what` runs so and the nics_per_node it
 * takes. */
uint32_t setup_nvlink_channels(const scn_scenario *s, const char *what, uint32_t nics_per_node,
			       diag *notes);

/* The GPU profile's compute capability as NCCL writes it (cudaCompCap,
 * major x 10 + minor: 90 for 9.0), which keys NCCL's per-architecture
 * figures (coll_config.nccl_cc); 0 when the profile does not give it, with
 * a note in notes (may be NULL) that those figures are not applied. */
uint32_t setup_nccl_cc(const scn_scenario *s, diag *notes);

/* NCCL's figure for the PCIe path between a GPU and its NIC
 * (coll_config.nccl_pci_GBps): the narrower of the GPU's and the NIC's
 * links, each lanes x NCCL's per-lane figure (coll_nccl_pci_GBps); 0 when a
 * profile does not give its generation and lanes (then NCCL's channels
 * across nodes are not derived: one per NIC). */
double setup_nccl_pci_GBps(const scn_scenario *s);
/* The same of a GPU and a NIC profile's values (dpusim coll --gpu). */
double setup_nccl_pci_GBps_of(const profile_gpu *g, const profile_nic *n);

/* The GPU at the workload's precision. 0 or SIM_EINVAL with messages. */
int setup_gpu(const scn_scenario *s, scn_precision prec, gpu_spec *out, diag *d, diag *notes);

/* Streaming multiprocessors of a GPU profile by name (0 when unknown):
 * NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 108 SMs on
 * A100; NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): 132 SMs
 * on H100 SXM5 (H200 SXM is the same GH100 configuration with more HBM:
 * NVIDIA H200 Tensor Core GPU datasheet, 2024). */
uint32_t setup_gpu_sms(const char *profile_name);

#endif
