/* Point-to-point RDMA benchmarks with perftest's semantics (linux-rdma/
 * perftest: ib_write_bw, ib_write_lat, ib_send_bw, ib_send_lat), simulated
 * on the fabric's flows, so a perftest figure is a prediction of the same
 * models the collectives and training run on.
 *
 * Bandwidth: each of `qps` queue pairs sends `iterations` messages in
 * order (the adapter works through a send queue one message after
 * another), with at most tx_depth posted and not yet completed; a
 * completion is signalled every cq_mod messages and frees that many slots,
 * as perftest polls them. A message's bytes are a flow over the fabric
 * path from the sender's buffer to the receiver's; its completion comes
 * back one adapter latency after its last byte arrives (the
 * acknowledgement). The figure is perftest's BW average: every message's
 * bytes over the time from the first post to the last completion.
 *
 * Latency: a ping-pong, each side sending its message as soon as the
 * other's has arrived; the figure is perftest's typical latency, the
 * median of half the round trips. A read is a round trip by itself: its
 * latency test reads one after another and reports the whole round trip
 * (perftest's rtt_factor 1 for READ). A message above the inline size
 * waits for its adapter's DMA read of the payload before its flow starts
 * (payload_read_ps), and every message reaches the waiting CPU one posted
 * write into memory after its last byte arrives (mem_write_ps); in a stream
 * those overlap the messages ahead on the wire, so there they are not
 * charged. Each message of a latency test starts with the CPU's post: its
 * work request reaches the adapter one posted MMIO write later (doorbell_ps,
 * the mlx5 provider's BlueFlame copy of a single work request), and ends
 * with the waiting CPU's poll, whose load of the line the adapter has just
 * written misses its caches (poll_ps): perftest's ib_write_lat spins on the
 * last byte of its buffer and posts its answer once that byte changes
 * (run_iter_lat_write), and its read and send tests poll a completion the
 * adapter writes the same way. Its wait for its own write's completion
 * (every write is signalled) is not charged: the acknowledgement and the
 * completion's write are back before the peer's answer can be (that answer
 * needs the peer's write into memory, poll, post and the message itself).
 *
 * Reads (ib_read_bw): the requester's adapter has at most out_reads
 * requests outstanding; each request reaches the responder one fixed
 * latency later, whose adapter returns the responses of a QP in order, each
 * a flow back over the path; a read completes when its response's last
 * byte has arrived.
 *
 * On the wire a message is packets of at most `mtu` payload bytes, each
 * with the link layer's and transport's headers (models/wire.h): the
 * network links, whose capacity is already their payload rate in full
 * packets (fab_config.payload_frac), carry what a message's own packets
 * add beyond that (a weight on the flow's path entries of the NIC and
 * fabric classes: a WRITE's RETH, a last packet's headers on a partial
 * payload); PCIe and memory only the payload. */
#ifndef DPUSIM_MODELS_P2P_H
#define DPUSIM_MODELS_P2P_H

#include <stdbool.h>
#include <stdint.h>

#include "models/fabric.h"
#include "models/wire.h"
#include "sim/engine.h"
#include "sim/flow.h"

/* The verb a test moves its bytes with: RDMA WRITE and SEND carry them from
 * the requester (src) to the responder (dst); an RDMA READ asks with a
 * small request and the responder's adapter returns them (dst to src). */
typedef enum p2p_op { P2P_WRITE, P2P_SEND, P2P_READ } p2p_op;

typedef struct p2p_params {
	p2p_op op;
	bool lat;                  /* one message at a time (latency test): a ping-pong of
	                              writes or sends, a read after read; else a stream */
	uint64_t bytes;            /* message size, > 0 */
	uint32_t qps;              /* bandwidth: queue pairs, each its own stream */
	uint32_t tx_depth;         /* bandwidth: messages posted and not completed per QP */
	uint32_t out_reads;        /* READ bandwidth: reads a QP's adapter has outstanding
	                              (the QP's max_rd_atomic); at most tx_depth count */
	uint32_t cq_mod;           /* bandwidth: a completion every cq_mod messages (at most
	                              tx_depth: a larger one is taken as tx_depth, as perftest
	                              does) */
	uint32_t iterations;       /* messages per QP (bandwidth), round trips (latency) */
	uint32_t src, dst;         /* fabric ranks of the two ends (on different nodes) */
	fab_end end;               /* where the buffers are: FAB_END_HOST or FAB_END_GPU */
	sim_time adapter_lat_ps;   /* one message through the two adapters (transport) */
	double conn_cap_Bps;       /* a QP's own rate cap (a DPU engine's share...); 0: none */
	double msg_rate_per_s;     /* the sending adapter's messages per second; 0: no bound */
	uint32_t inline_bytes;     /* latency tests: a WRITE or SEND of at most this many bytes
	                              travels inside its work request (perftest's inline
	                              size), so its adapter reads no payload */
	sim_time payload_read_ps;  /* latency tests: the adapter's DMA read of a payload from
	                              the buffer's memory, the round trip before its first
	                              byte can leave (a READ's responder always reads); 0: not
	                              modelled */
	sim_time mem_write_ps;     /* latency tests: the receiving adapter's posted write of a
	                              message (and its completion) into the buffer's memory,
	                              before the waiting CPU can see it; 0: not modelled */
	sim_time doorbell_ps;      /* latency tests: the CPU's posted write of a message's work
	                              request to the adapter's doorbell (BlueFlame) register,
	                              before the adapter can start it; 0: not modelled */
	sim_time poll_ps;          /* latency tests: the waiting CPU's load that sees a message
	                              once it is in memory (the adapter's write invalidated
	                              the polled line, so the load misses); 0: not modelled */
	wire_frame wire;          /* the packets of op on the fabric's link layer
	                             (models/wire.h): the network links carry their
	                             headers beyond the share the fabric's
	                             payload_frac already leaves for full packets */
} p2p_params;

typedef struct p2p_result {
	double time_s;             /* bandwidth: first post to last completion; latency: the
	                              typical (median) half round trip of a ping-pong, or
	                              round trip of a read (as perftest reports each) */
	double bw_Bps;             /* payload bytes per second: bandwidth, perftest's BW
	                              average; latency, bytes over time_s */
	double msg_rate_per_s;     /* bandwidth: messages per second (perftest's MsgRate) */
	double lat_p99_s;          /* latency: 99th percentile of the same */
	double one_way_lat_s;      /* the fixed part of one message: adapter and path latency,
	                              and in a latency test the doorbell, the payload's read
	                              where it pays one, the write into memory and the poll */
} p2p_result;

/* Runs the benchmark p on f's fabric (its flows on net, driven by eng:
 * all must outlive the call, and nothing else should run on them, as
 * perftest runs on idle adapters). Returns 0, SIM_EINVAL (bad parameters:
 * no bytes, iterations, QPs or depth, src and dst on one node), SIM_ENOMEM,
 * or the engine's error (sim_error_msg says which transfer). */
int p2p_run(sim_engine *eng, flow_net *net, fab *f, const p2p_params *p, p2p_result *out);

#endif
