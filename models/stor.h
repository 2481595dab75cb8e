/* Node-local NVMe drives behind a node's PCIe switches, and the paths a
 * read takes into a GPU's memory: GPUDirect Storage peer to peer inside the
 * drives' switch; GPUDirect Storage to a GPU on another switch, staged in a
 * GPU on the drives' switch and copied across the CPU root complex (what
 * cuFile does: NVIDIA GDS Benchmarking and Configuration Guide, 5.1, GPU 12
 * reading a RAID0 on GPU 0's switch, "GPU 0 was selected by the library ...
 * The data is then moved to the target GPU"); or through a host bounce
 * buffer (PCIe up into host memory, PCIe down again: host memory twice). A
 * gdsio-like closed-loop benchmark runs them on the engine and flow solver.
 *
 * One switch level is modelled (DGX-2 and DGX A100 put the drives on the
 * first-level switch; the second-level links are as wide as the GPUs' and
 * carry only their two GPUs' traffic). */
#ifndef DPUSIM_MODELS_STOR_H
#define DPUSIM_MODELS_STOR_H

#include <stdint.h>

typedef enum stor_xfer {
	STOR_XFER_GDS,    /* storage to GPU memory, no host bounce (gdsio -x 0) */
	STOR_XFER_BOUNCE, /* storage to host memory, then to the GPU (gdsio -x 2) */
} stor_xfer;

/* A node's PCIe tree as far as local storage sees it. Rates per direction. */
typedef struct stor_local {
	uint32_t drives;          /* NVMe drives striped (RAID0) on switch drive_switch */
	double drive_read_Bps;    /* one drive's sustained read */
	double drive_link_Bps;    /* one drive's PCIe link */
	uint32_t switches;        /* PCIe switches (trees) in the node */
	uint32_t gpus_per_switch; /* GPU g sits on switch g / gpus_per_switch */
	uint32_t switches_per_socket;
	uint32_t drive_switch;
	double gpu_link_Bps;      /* each GPU's PCIe link */
	double uplink_Bps;        /* each switch to its CPU root port */
	double socket_Bps;        /* between CPU sockets; 0: not a bound */
	double p2p_overhead;      /* PCIe bytes per payload byte of peer-to-peer
				     traffic through a CPU root complex (>= 1) */
	double host_mem_Bps;      /* host memory, for the bounce buffer; 0: not a bound */
	double io_lat_s;          /* per IO at the drives, besides the transfer */
} stor_local;

/* The steady-state read throughput (B/s) of `threads` threads each reading
 * `ios` IOs of io_bytes one after another (each IO waits for the previous
 * one of its thread, as gdsio's threads do) from the drives into GPU gpu's
 * memory by transfer type x. Returns 0, or SIM_EINVAL (a zero count or
 * rate, gpu or drive_switch outside the node, p2p_overhead < 1),
 * SIM_EOVERFLOW (rates so low or IOs so large that the run passes the
 * engine's SIM_TIME_MAX) or SIM_ENOMEM. */
int stor_gdsio(const stor_local *c, uint32_t gpu, stor_xfer x, uint32_t threads,
	       double io_bytes, uint32_t ios, double *Bps);

#endif
