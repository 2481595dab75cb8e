/* Transports as costs on a path: where the data sits at each end (which
 * PCIe and memory resources it crosses), a latency per message, CPU work
 * per byte and per packet handed to whoever models the host CPU, and
 * optional latency jitter. */
#ifndef DPUSIM_MODELS_TRANSPORT_H
#define DPUSIM_MODELS_TRANSPORT_H

#include <stdint.h>

#include "models/fabric.h"
#include "sim/time.h"

typedef enum coll_tkind {
	COLL_HOST_TCP,   /* kernel TCP: GPU data staged through host memory, CPU does the work */
	COLL_RDMA,       /* verbs from host memory: NIC does the work */
	COLL_RDMA_GDR,   /* GPUDirect RDMA: the NIC reads and writes GPU memory */
} coll_tkind;

/* Host CPU work of one message, reported as it is sent: on rank `rank`,
 * `cycles` cycles of protocol work (TCP send or receive side). */
typedef void coll_cpu_fn(void *ctx, uint32_t rank, double cycles);

typedef struct coll_transport {
	coll_tkind kind;
	sim_time msg_lat_ps;       /* per message: host stack (tcp) or NIC/verbs (rdma) */
	double cycles_per_byte;    /* host CPU, each side (tcp) */
	double cycles_per_packet;  /* host CPU, each side (tcp) */
	uint32_t mtu_bytes;        /* packet payload for the per-packet cost */
	/* Fastest one connection (one hop of a step) can go; 0: no limit. Kernel
	 * TCP processes a connection's bytes on one core at a time, so host-tcp
	 * hops are bounded by what a core moves, whatever the link rate. A hop
	 * over NVLink inside a node is no connection of the transport: neither
	 * this cap nor the CPU work (cpu) applies to it. */
	double conn_cap_Bps;
	sim_time jitter_mean_ps;   /* 0: none; else an exponential extra latency per message */
	coll_cpu_fn *cpu;          /* may be NULL */
	void *cpu_ctx;
} coll_transport;

/* The transport named `name` ("host-tcp", "rdma", "rdma-gdr") into *kind:
 * 0 or SIM_ENOENT. */
int coll_tkind_parse(const char *name, coll_tkind *kind);
const char *coll_tkind_name(coll_tkind kind);

/* Where the data sits at each end of a transfer for this transport. */
fab_end coll_transport_end(coll_tkind kind);

/* Host CPU cycles one side spends on a message of `bytes`: per byte plus
 * per packet (ceil(bytes / mtu) packets). 0 for RDMA transports. */
double coll_transport_cycles(const coll_transport *t, uint64_t bytes);

#endif
