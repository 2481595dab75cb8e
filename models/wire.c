/* Per-packet bytes of each link layer and transport (wire.h).
 *
 * InfiniBand: InfiniBand Architecture Specification Volume 1 (IBTA,
 * Release 1.4), chapter 5 "Data packet format" and 9.2-9.4: every packet
 * carries a Local Route Header (8 bytes), a Base Transport Header (12), the
 * invariant CRC (4) and the variant CRC (2); the first (or only) packet of
 * an RDMA WRITE an RDMA Extended Transport Header (16: virtual address 8,
 * R_Key 4, DMA length 4), a SEND none; an RDMA READ response an ACK
 * Extended Transport Header (4) in its first and last packets. A Global
 * Route Header (40) only crosses routers, which a cluster fabric of one
 * subnet has none of. The MTU is 256 to 4096 bytes of payload.
 *
 * RoCEv2 (IBTA Supplement to Volume 1, Annex A17, 2014): the same BTH,
 * RETH, AETH and ICRC in UDP (8) over IPv4 (20) in an Ethernet frame
 * (header 14, FCS 4), each frame also taking its preamble and start
 * delimiter (8) and the minimum inter-frame gap (12) of the link's time
 * (IEEE 802.3, clause 3.2 and 4.4.2: a 96-bit gap). Its MTU is an IB MTU,
 * the largest that fits the interface's after 96 bytes of headers: the
 * Linux kernel's iboe_get_mtu (include/rdma/ib_addr.h) takes GRH 40 (IPv6
 * room), UDP 8, BTH 12, XRC 4, AtomicETH 28 and ICRC 4 off it, so 1500
 * gives 1024 and 9000 gives 4096.
 *
 * TCP over IPv4 (RFC 791: 20; RFC 9293: TCP 20) with the timestamp option
 * (RFC 7323: 10 bytes, padded to 12), which Linux sends by default
 * (Documentation/networking/ip-sysctl.rst, tcp_timestamps: default 1): 52
 * bytes of headers, MSS = MTU - 52 (1448 at 1500). On Ethernet the frame's
 * 38 bytes above; on InfiniBand IPoIB's datagram mode (RFC 4391: UD, a
 * 4-byte encapsulation header; Linux IPOIB_UD_MTU is the IB MTU - 4): LRH
 * 8, BTH 12, DETH 8, ICRC 4, VCRC 2.
 *
 * Not counted: acknowledgements in the other direction (IB and RoCE
 * responders coalesce theirs, Linux TCP acknowledges every second segment
 * or one per GRO batch), link-level flow control packets, the pad of an
 * Ethernet frame under 64 bytes (at most 6 bytes, a SEND of under 6 over
 * RoCE), and the physical layer's coding and FEC, which lie below the data
 * rate a link is named by (wire.h). */
#include "models/wire.h"

#include "sim/err.h"

enum {
	IB_LRH = 8, IB_BTH = 12, IB_ICRC = 4, IB_VCRC = 2, IB_RETH = 16, IB_AETH = 4, IB_DETH = 8,
	ETH_PREAMBLE = 8, ETH_GAP = 12, ETH_HDR = 14, ETH_FCS = 4,
	IPV4 = 20, UDP = 8, TCP_TS = 20 + 12, IPOIB_ENCAP = 4,
	ROCE_MTU_HEADROOM = 40 + 8 + 12 + 4 + 28 + 4, /* iboe_get_mtu's */
	IB_MTU_MAX = 4096, IB_MTU_MIN = 256, ETH_MTU_MIN = 576, ETH_MTU_MAX = 9216,
};

#define IB_PKT (IB_LRH + IB_BTH + IB_ICRC + IB_VCRC)
#define ETH_FRAME (ETH_PREAMBLE + ETH_GAP + ETH_HDR + ETH_FCS)

uint32_t wire_default_mtu(bool ib, wire_transport t)
{
	if (!ib)
		return 1500;
	return t == WIRE_TCP ? 2048 : IB_MTU_MAX;
}

const char *wire_default_mtu_why(bool ib, wire_transport t)
{
	if (!ib)
		return "the default for Ethernet";
	return t == WIRE_TCP ? "the default for IPoIB" : "the default for InfiniBand RDMA";
}

static bool ib_mtu_ok(uint32_t m)
{
	return m >= IB_MTU_MIN && m <= IB_MTU_MAX && !(m & (m - 1));
}

/* RFC 791 asks every host to take 576-byte datagrams; 9216 is the largest
 * jumbo frame NVIDIA's Spectrum switches (Cumulus Linux) configure. */
bool wire_mtu_ok(bool ib, uint32_t link_mtu)
{
	return ib ? ib_mtu_ok(link_mtu) : link_mtu >= ETH_MTU_MIN && link_mtu <= ETH_MTU_MAX;
}

const char *wire_mtu_words(bool ib)
{
	return ib ? "InfiniBand MTU (256, 512, 1024, 2048 or 4096 bytes of payload)"
		  : "Ethernet MTU (576 to 9216 bytes)";
}

/* iboe_get_mtu: the largest IB MTU within the interface's after headroom. */
static uint32_t roce_mtu(uint32_t eth_mtu)
{
	uint32_t m = IB_MTU_MAX;
	while (m > IB_MTU_MIN && m + ROCE_MTU_HEADROOM > eth_mtu)
		m /= 2;
	return m;
}

static wire_frame rdma_frame(bool ib, wire_op op, uint32_t link_mtu)
{
	wire_frame w = { .first_hdr_bytes = op == WIRE_WRITE ? IB_RETH
					    : op == WIRE_READ_RESP ? IB_AETH : 0,
			 .last_hdr_bytes = op == WIRE_READ_RESP ? IB_AETH : 0 };
	if (ib) {
		w.mtu_bytes = link_mtu;
		w.pkt_hdr_bytes = IB_PKT;
		w.what = "InfiniBand RC: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 bytes per packet";
	} else {
		w.mtu_bytes = roce_mtu(link_mtu);
		w.pkt_hdr_bytes = ETH_FRAME + IPV4 + UDP + IB_BTH + IB_ICRC;
		w.what = "RoCEv2: preamble 8 + Ethernet 14 + FCS 4 + gap 12 + IPv4 20 + UDP 8 + "
			 "BTH 12 + ICRC 4 bytes per packet";
	}
	return w;
}

static wire_frame tcp_frame(bool ib, uint32_t link_mtu)
{
	wire_frame w = { 0 };
	if (ib) {
		w.mtu_bytes = link_mtu - IPOIB_ENCAP - IPV4 - TCP_TS;
		w.pkt_hdr_bytes = IB_PKT + IB_DETH + IPOIB_ENCAP + IPV4 + TCP_TS;
		w.what = "TCP over IPoIB (datagram mode): LRH 8 + BTH 12 + DETH 8 + IPoIB 4 + "
			 "IPv4 20 + TCP 20 + timestamps 12 + ICRC 4 + VCRC 2 bytes per packet";
	} else {
		w.mtu_bytes = link_mtu - IPV4 - TCP_TS;
		w.pkt_hdr_bytes = ETH_FRAME + IPV4 + TCP_TS;
		w.what = "TCP over Ethernet: preamble 8 + Ethernet 14 + FCS 4 + gap 12 + IPv4 20 + "
			 "TCP 20 + timestamps 12 bytes per packet";
	}
	return w;
}

int wire_frame_of(bool ib, wire_transport t, wire_op op, uint32_t link_mtu, wire_frame *out)
{
	if (!wire_mtu_ok(ib, link_mtu))
		return SIM_EINVAL;
	*out = t == WIRE_TCP ? tcp_frame(ib, link_mtu) : rdma_frame(ib, op, link_mtu);
	return SIM_OK;
}

int wire_frame_at(bool ib, wire_transport t, wire_op op, uint32_t link_mtu, wire_frame *out,
		  uint32_t *mtu)
{
	uint32_t m = link_mtu ? link_mtu : wire_default_mtu(ib, t);
	if (mtu)
		*mtu = m;
	return wire_frame_of(ib, t, op, m, out);
}

double wire_bytes(const wire_frame *w, uint64_t bytes)
{
	uint64_t packets = bytes ? (bytes + w->mtu_bytes - 1) / w->mtu_bytes : 1;
	return (double)bytes + (double)packets * w->pkt_hdr_bytes + w->first_hdr_bytes +
	       (packets > 1 ? w->last_hdr_bytes : 0);
}

double wire_payload_frac(const wire_frame *w)
{
	return (double)w->mtu_bytes / ((double)w->mtu_bytes + w->pkt_hdr_bytes);
}
