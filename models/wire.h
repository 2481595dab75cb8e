/* Bytes on the wire: the headers, trailers and gaps a link layer and a
 * transport add to every packet of a transfer, so that a link of data rate
 * R carries payload at R x wire_payload_frac for a long transfer, and a
 * message of B bytes takes wire_bytes on the link. The figures and their
 * sources are in wire.c and docs/profile-sources.md ("Bytes on the wire").
 *
 * A link's rate (a profile's port_rate, a scenario's link_rate) is taken
 * as the data rate after line coding and FEC, as InfiniBand and Ethernet
 * name their speeds (HDR's 200 Gb/s is four lanes of 53.125 Gb/s
 * signalling): the headers below come out of it, the coding does not. */
#ifndef DPUSIM_MODELS_WIRE_H
#define DPUSIM_MODELS_WIRE_H

#include <stdbool.h>
#include <stdint.h>

/* What carries the bytes over the fabric's link layer. */
typedef enum wire_transport {
	WIRE_RDMA, /* RC verbs: InfiniBand, or RoCEv2 on Ethernet */
	WIRE_TCP,  /* the kernel's TCP over IPv4: Ethernet, or IPoIB on InfiniBand */
} wire_transport;

/* The verb of an RDMA message, for its extra headers: a WRITE's first packet
 * carries a RETH, a READ response an AETH in its first and last packets, a
 * SEND neither. TCP takes WIRE_SEND (no extra). */
typedef enum wire_op { WIRE_WRITE, WIRE_SEND, WIRE_READ_RESP } wire_op;

typedef struct wire_frame {
	uint32_t mtu_bytes;       /* payload per packet */
	uint32_t pkt_hdr_bytes;   /* headers, trailers and gaps of every packet */
	uint32_t first_hdr_bytes; /* more in a message's first packet (WRITE's RETH, a
	                             READ response's AETH) */
	uint32_t last_hdr_bytes;  /* more in the last of several (a READ response's AETH) */
	const char *what;         /* the layers, for notes */
} wire_frame;

/* The link MTU a fabric runs where the scenario sets none
 * (cluster.fabric.mtu): InfiniBand RDMA 4096 (the largest IB MTU, the
 * ports' active MTU that perftest and NCCL take), IPoIB 2048 (OpenSM's
 * IPoIB broadcast group), Ethernet 1500 (RFC 894). */
uint32_t wire_default_mtu(bool ib, wire_transport t);
/* Why wire_default_mtu picks its MTU, for a report's note ("the default for
 * IPoIB"). */
const char *wire_default_mtu_why(bool ib, wire_transport t);

/* Whether link_mtu is an MTU of the link layer: InfiniBand 256, 512, 1024,
 * 2048 or 4096 (the IB MTU, payload bytes per packet); Ethernet 576 to
 * 9216 (the interface's IP MTU). */
bool wire_mtu_ok(bool ib, uint32_t link_mtu);
/* The MTUs wire_mtu_ok takes, in words, for an error message: "InfiniBand
 * MTU (256, ... or 4096 bytes of payload)" or "Ethernet MTU (576 to 9216
 * bytes)". */
const char *wire_mtu_words(bool ib);

/* The frame of transport t doing op over InfiniBand (ib) or Ethernet with
 * link MTU link_mtu (the IB MTU, or the Ethernet interface's MTU, from
 * which RoCE takes its own as the Linux kernel does). Returns 0, or
 * SIM_EINVAL when wire_mtu_ok refuses link_mtu (*out untouched). */
int wire_frame_of(bool ib, wire_transport t, wire_op op, uint32_t link_mtu, wire_frame *out);
/* wire_frame_of at link_mtu, or at wire_default_mtu where link_mtu is 0;
 * *mtu (if not NULL) gets the link MTU taken. */
int wire_frame_at(bool ib, wire_transport t, wire_op op, uint32_t link_mtu, wire_frame *out,
		  uint32_t *mtu);

/* Bytes on the wire of a message of `bytes` payload bytes (one packet for
 * an empty one). */
double wire_bytes(const wire_frame *w, uint64_t bytes);

/* Payload bytes per byte on the wire of a long transfer in full packets:
 * mtu / (mtu + pkt_hdr). */
double wire_payload_frac(const wire_frame *w);

#endif
