/* The offload options' rows (offload.h): what each needs and does. */
#include "models/offload.h"

#include <math.h>
#include <stdio.h>

#include "models/wire.h"
#include "sim/err.h"

static const char *const network_words[] = { OFFLOAD_NETWORKS(OFFLOAD_WORD_) NULL };
static const char *const storage_words[] = { OFFLOAD_STORAGES(OFFLOAD_WORD_) NULL };
static const char *const crypto_words[] = { OFFLOAD_CRYPTOS(OFFLOAD_WORD_) NULL };
static const char *const vswitch_words[] = { OFFLOAD_VSWITCHES(OFFLOAD_WORD_) NULL };

static const char *const *const words_of[OFFLOAD_NKINDS] = {
	network_words, storage_words, crypto_words, vswitch_words,
};
static const char *const kind_names[OFFLOAD_NKINDS] = { "network", "storage", "crypto", "vswitch" };

/* ---- what the options cost ---- */

static const profile_host_costs *hc_of(const offload_env *e)
{
	return &e->s->cluster.host_costs.v.host;
}

/* Core-seconds per byte of a cost given as cycles per byte, or as a
 * throughput per core where the clock of the measurement is unpublished. */
static double core_s_per_byte(double cycles_per_byte, double per_core_Bps, double freq_Hz)
{
	if (profile_has(cycles_per_byte))
		return cycles_per_byte / freq_Hz;
	if (profile_has(per_core_Bps) && per_core_Bps > 0)
		return 1.0 / per_core_Bps;
	return NAN;
}

/* An engine bounds the node's traffic: the slowest one binds. */
static void cap_engine(offload_costs *o, double cap, const char *what, bool on_dpu)
{
	if (cap > 0 && (o->engine_cap_Bps == 0 || cap < o->engine_cap_Bps)) {
		o->engine_cap_Bps = cap;
		o->engine_what = what;
		o->engine_on_dpu = on_dpu;
	}
}

static double per_dpu_node(const offload_env *e, double rate)
{
	return rate * (e->s->cluster.dpus_per_node > 0 ? e->s->cluster.dpus_per_node : 1);
}

double offload_packet_bytes(const scn_scenario *s, wire_transport t)
{
	const scn_fabric *f = &s->cluster.fabric;
	const profile_host_costs *hc = &s->cluster.host_costs.v.host;
	wire_frame w;
	/* the loader has checked the MTU against the link layer */
	if (!isnan(f->mtu_bytes) &&
	    !wire_frame_of(f->link_layer == PROFILE_LL_INFINIBAND, t, WIRE_SEND,
			   (uint32_t)f->mtu_bytes, &w))
		return w.mtu_bytes;
	return profile_has(hc->mtu_bytes) ? hc->mtu_bytes : NAN;
}

double offload_tcp_packet_bytes(const scn_scenario *s)
{
	return offload_packet_bytes(s, WIRE_TCP);
}

/* tcp_cycles_per_packet, per side on top of the per-byte costs (as dpusim
 * calibrate fits them: cycles = c_pkt ceil(S / mtu) + c_byte S,
 * docs/calibration.md): c_pkt / (payload per packet) per byte of a bulk
 * transfer, the packets the fabric's (offload_tcp_packet_bytes), added to
 * each side whose cost is given in cycles per byte. A clock-free
 * throughput (tcp_rx_bw_per_core) is measured with its packets included,
 * so it takes none. */
static void tcp_packet_costs(const offload_env *e, offload_costs *out)
{
	const profile_host_costs *hc = hc_of(e);
	double per_byte;
	if (!profile_has(hc->tcp_cycles_per_packet))
		return;
	per_byte = hc->tcp_cycles_per_packet / e->tcp_pkt_bytes / e->freq_Hz;
	if (profile_has(hc->tcp_rx_cycles_per_byte))
		out->tcp_core_s_per_byte += per_byte;
	if (isfinite(out->tcp_tx_core_s_per_byte))
		out->tcp_tx_core_s_per_byte += per_byte;
}

static void net_host_tcp(const offload_env *e, offload_costs *out)
{
	const profile_host_costs *hc = hc_of(e);
	out->tcp_core_s_per_byte = core_s_per_byte(hc->tcp_rx_cycles_per_byte,
						   hc->tcp_rx_bw_per_core_Bps, e->freq_Hz);
	out->tcp_tx_core_s_per_byte = core_s_per_byte(hc->tcp_tx_cycles_per_byte, NAN, e->freq_Hz);
	tcp_packet_costs(e, out);
	if (isfinite(out->tcp_tx_core_s_per_byte))
		return;
	/* ASSUMPTION, said in the report: no published send-side cost, so a
	 * byte sent costs what a byte received does, an upper bound (Cai et
	 * al., SIGCOMM 2021: the receiver's copy is the bottleneck of the
	 * Linux stack). */
	out->tcp_tx_core_s_per_byte = out->tcp_core_s_per_byte;
	if (e->notes)
		diag_add(e->notes, NULL, 0, 0, "host-tcp: ASSUMPTION send-side CPU cost taken as the "
			 "receive copy path's (no published tcp_tx_cycles_per_byte), an upper bound");
}

static void net_crypto_host(const offload_env *e, offload_costs *out)
{
	out->crypto_core_s_per_byte = hc_of(e)->aes_gcm_cycles_per_byte / e->freq_Hz;
}

static void net_crypto_dpu(const offload_env *e, offload_costs *out)
{
	cap_engine(out, per_dpu_node(e, e->s->cluster.dpu.v.dpu.crypto_rate_Bps),
		   "DPU inline crypto engine", true);
}

/* Each NIC's engine encrypts what leaves through it and decrypts what
 * enters: the node's NICs together bound its traffic. */
static void net_crypto_nic(const offload_env *e, offload_costs *out)
{
	int nics = e->s->cluster.nics_per_node > 0 ? e->s->cluster.nics_per_node : 1;
	cap_engine(out, e->s->cluster.nic.v.nic.inline_crypto_bw_Bps * nics,
		   "NIC inline crypto engine", false);
}

/* Packets per second of one host core through the software switch. */
static double vswitch_pps_per_core(const offload_env *e)
{
	const profile_host_costs *hc = hc_of(e);
	return profile_has(hc->vswitch_cycles_per_packet) ? e->freq_Hz / hc->vswitch_cycles_per_packet
							  : hc->vswitch_pps_per_core;
}

static void net_vswitch_host(const offload_env *e, offload_costs *out)
{
	out->vswitch_core_s_per_byte = 1.0 / (vswitch_pps_per_core(e) * e->mtu);
}

static void net_vswitch_dpu(const offload_env *e, offload_costs *out)
{
	cap_engine(out, per_dpu_node(e, e->s->cluster.dpu.v.dpu.asap2_pps) * e->mtu,
		   "DPU ASAP2 virtual-switch offload", true);
}

/* A software virtual switch on the DPU's Arm cores: the host-costs
 * profile's packets per host-core cycle, scaled by the Arm cores' count,
 * clock and work per cycle relative to a host core (the profile's
 * arm_rel_speed), times the MTU. Where the host cost is a rate per core
 * (the measurement's clock unpublished), the scenario's host clock stands
 * in for it. */
static void net_vswitch_arm(const offload_env *e, offload_costs *out)
{
	const profile_host_costs *hc = hc_of(e);
	const profile_dpu *dpu = &e->s->cluster.dpu.v.dpu;
	double pkt_per_cycle = profile_has(hc->vswitch_cycles_per_packet)
				       ? 1.0 / hc->vswitch_cycles_per_packet
				       : hc->vswitch_pps_per_core / e->freq_Hz;
	cap_engine(out, per_dpu_node(e, dpu->arm_cores * dpu->arm_freq_hz * dpu->arm_rel_speed *
					    pkt_per_cycle * e->mtu),
		   "software virtual switch on the DPU's Arm cores", true);
}

/* NFS over TCP receives every byte through the kernel TCP copy path:
 * without a published NFS client cost, that copy's cost is its lower
 * bound (docs/scenarios.md: storage host is NFS). */
static void stor_host(const offload_env *e, offload_storage *out)
{
	const profile_host_costs *hc = hc_of(e);
	out->kernel_stack = true;
	if (profile_has(hc->nfs_cycles_per_byte)) {
		out->core_s_per_byte = hc->nfs_cycles_per_byte / e->freq_Hz;
	} else if (profile_has(hc->tcp_rx_cycles_per_byte) ||
		   (profile_has(hc->tcp_rx_bw_per_core_Bps) && hc->tcp_rx_bw_per_core_Bps > 0)) {
		out->core_s_per_byte = core_s_per_byte(hc->tcp_rx_cycles_per_byte,
						       hc->tcp_rx_bw_per_core_Bps, e->freq_Hz);
		if (e->notes)
			diag_add(e->notes, NULL, 0, 0, "storage host: NFS client CPU cost taken as the "
				 "TCP receive copy (tcp_rx_*), a lower bound (no published "
				 "nfs_cycles_per_byte)");
	} else if (e->notes) {
		diag_add(e->notes, NULL, 0, 0, "storage host: NFS client CPU cost not modelled "
			 "(no published nfs_cycles_per_byte)");
	}
}

/* Each DPU serves SNAP on its own ports (a BlueField per rail: its rail's
 * reads), so a node's engines are its DPUs' together, as the crypto and
 * switch engines are (per_dpu_node); until December 2026 the node had one
 * DPU's snap_bw whatever its DPUs, and snap_iops, required, bounded
 * nothing. */
static void stor_snap(const offload_env *e, offload_storage *out)
{
	out->engine_Bps = per_dpu_node(e, e->s->cluster.dpu.v.dpu.snap_bw_Bps);
	out->engine_iops = per_dpu_node(e, e->s->cluster.dpu.v.dpu.snap_iops);
}

static void stor_gds(const offload_env *e, offload_storage *out)
{
	(void)e;
	out->direct = true;
}

/* NVMe-oF over RDMA (Linux nvme-rdma): the host registers the read's pages
 * and sends their key in the command's keyed SGL data block descriptor
 * (drivers/nvme/host/rdma.c, nvme_rdma_map_data); the target moves the
 * data with RDMA WRITE into them (NVM Express over Fabrics 1.1, RDMA
 * transport binding), so the host's cores copy no byte: no cost per byte.
 * The data lands in a host bounce buffer (train_world.c: host memory
 * twice, written and read by the copy to the GPU). */
static void stor_host_rdma(const offload_env *e, offload_storage *out)
{
	(void)out;
	if (e->notes)
		diag_add(e->notes, NULL, 0, 0, "storage host-rdma: NVMe-oF over RDMA, no host CPU "
			 "copy per byte (the target RDMA-writes the data); host CPU work per IO "
			 "not modelled (no published figure)");
}

/* The host's kernel IPsec/kTLS encrypts what crosses its network stack,
 * storage reads included. */
static void stor_crypto_host(const offload_env *e, offload_storage *out)
{
	if (out->kernel_stack && profile_has(hc_of(e)->aes_gcm_cycles_per_byte))
		out->core_s_per_byte += hc_of(e)->aes_gcm_cycles_per_byte / e->freq_Hz;
}

/* ---- the rows ---- */

#define HC OFFLOAD_HOST_COSTS
#define NIC OFFLOAD_NIC
#define DPU OFFLOAD_DPU
#define VSWITCH_COST { HC, "vswitch_cycles_per_packet", "vswitch_pps_per_core" }

static const offload_row network_rows[] = {
	[SCN_NET_HOST_TCP] = { OFFLOAD_NETWORK, SCN_NET_HOST_TCP, .host_work = true,
			       .needs = { { HC, "tcp_rx_cycles_per_byte", "tcp_rx_bw_per_core" },
					  { HC, "mtu", NULL } },
			       .net = net_host_tcp },
	[SCN_NET_RDMA] = { OFFLOAD_NETWORK, SCN_NET_RDMA },
	[SCN_NET_RDMA_GDR] = { OFFLOAD_NETWORK, SCN_NET_RDMA_GDR,
			       .needs = { { NIC, "gpudirect", NULL } } },
};

static const offload_row storage_rows[] = {
	[SCN_STOR_HOST] = { OFFLOAD_STORAGE, SCN_STOR_HOST, .storage = stor_host },
	[SCN_STOR_DPU_SNAP] = { OFFLOAD_STORAGE, SCN_STOR_DPU_SNAP, .dpu = true,
				.needs = { { DPU, "snap_bw", NULL }, { DPU, "snap_iops", NULL } },
				.storage = stor_snap },
	[SCN_STOR_GDS] = { OFFLOAD_STORAGE, SCN_STOR_GDS, .storage = stor_gds },
	[SCN_STOR_HOST_RDMA] = { OFFLOAD_STORAGE, SCN_STOR_HOST_RDMA, .storage = stor_host_rdma },
};

static const offload_row crypto_rows[] = {
	[SCN_CRYPTO_NONE] = { OFFLOAD_CRYPTO, SCN_CRYPTO_NONE },
	[SCN_CRYPTO_HOST] = { OFFLOAD_CRYPTO, SCN_CRYPTO_HOST, .host_work = true,
			      .needs = { { HC, "aes_gcm_cycles_per_byte", NULL } },
			      .net = net_crypto_host, .storage = stor_crypto_host },
	[SCN_CRYPTO_DPU_INLINE] = { OFFLOAD_CRYPTO, SCN_CRYPTO_DPU_INLINE, .dpu = true,
				    .needs = { { DPU, "crypto_rate", NULL } }, .net = net_crypto_dpu },
	[SCN_CRYPTO_NIC_INLINE] = { OFFLOAD_CRYPTO, SCN_CRYPTO_NIC_INLINE,
				    .needs = { { NIC, "inline_crypto_bw", NULL } },
				    .net = net_crypto_nic },
};

static const offload_row vswitch_rows[] = {
	[SCN_VSW_NONE] = { OFFLOAD_VSWITCH, SCN_VSW_NONE },
	[SCN_VSW_HOST] = { OFFLOAD_VSWITCH, SCN_VSW_HOST, .host_work = true,
			   .needs = { VSWITCH_COST, { HC, "mtu", NULL } }, .net = net_vswitch_host },
	[SCN_VSW_DPU] = { OFFLOAD_VSWITCH, SCN_VSW_DPU, .dpu = true,
			  .host_costs_for = "takes the packet size (mtu) from",
			  .needs = { { DPU, "asap2_pps", NULL }, { HC, "mtu", NULL } },
			  .net = net_vswitch_dpu },
	[SCN_VSW_DPU_ARM] = { OFFLOAD_VSWITCH, SCN_VSW_DPU_ARM, .dpu = true,
			      .host_costs_for = "takes the software switch's cost per packet from",
			      .needs = { VSWITCH_COST, { HC, "mtu", NULL }, { DPU, "arm_cores", NULL },
					 { DPU, "arm_freq", NULL }, { DPU, "arm_rel_speed", NULL } },
			      .net = net_vswitch_arm },
};

#define NROWS(a) (sizeof a / sizeof a[0])
_Static_assert(NROWS(network_rows) + 1 == NROWS(network_words), "a network row per word");
_Static_assert(NROWS(storage_rows) + 1 == NROWS(storage_words), "a storage row per word");
_Static_assert(NROWS(crypto_rows) + 1 == NROWS(crypto_words), "a crypto row per word");
_Static_assert(NROWS(vswitch_rows) + 1 == NROWS(vswitch_words), "a vswitch row per word");

static const offload_row *const rows_of[OFFLOAD_NKINDS] = {
	network_rows, storage_rows, crypto_rows, vswitch_rows,
};
static const size_t nrows_of[OFFLOAD_NKINDS] = {
	NROWS(network_rows), NROWS(storage_rows), NROWS(crypto_rows), NROWS(vswitch_rows),
};

/* ---- lookups ---- */

const char *offload_kind_name(offload_kind k)
{
	return (unsigned)k < OFFLOAD_NKINDS ? kind_names[k] : "?";
}

const char *const *offload_kind_names(void)
{
	return kind_names;
}

const char *const *offload_words(offload_kind k)
{
	return (unsigned)k < OFFLOAD_NKINDS ? words_of[k] : NULL;
}

const char *offload_word(offload_kind k, int value)
{
	if ((unsigned)k >= OFFLOAD_NKINDS || value < 0 || (size_t)value >= nrows_of[k])
		return "?";
	return words_of[k][value];
}

int offload_value(const scn_variant *v, offload_kind k)
{
	switch (k) {
	case OFFLOAD_NETWORK:
		return (int)v->network;
	case OFFLOAD_STORAGE:
		return (int)v->storage;
	case OFFLOAD_CRYPTO:
		return (int)v->crypto;
	default:
		return (int)v->vswitch;
	}
}

const offload_row *offload_row_of(const scn_variant *v, offload_kind k)
{
	int value = offload_value(v, k);
	SIM_ASSERT((unsigned)k < OFFLOAD_NKINDS && value >= 0 && (size_t)value < nrows_of[k],
		   "offload value %d of kind %d out of range", value, (int)k);
	return &rows_of[k][value];
}

const scn_hw *offload_hw_of(const scn_scenario *s, offload_hw hw)
{
	return hw == OFFLOAD_HOST_COSTS ? &s->cluster.host_costs
	       : hw == OFFLOAD_NIC	 ? &s->cluster.nic
				 : &s->cluster.dpu;
}

/* ---- applying a variant ---- */

static bool has_field(const scn_hw *hw, const char *name)
{
	const profile_field *f;
	if (!name || !hw->prof)
		return false;
	f = profile_field_find(profile_get_kind(hw->prof), name);
	return f && profile_has(profile_field_get(&hw->v, f));
}

/* Whether the cluster gives what the row needs. The scenario loader
 * refuses a variant that lacks any of it, with the place to set it; this
 * guards a scenario built without the loader. */
static bool row_ready(const scn_scenario *s, const scn_variant *v, const offload_row *r, diag *d)
{
	if (r->dpu && !s->cluster.has_dpu) {
		diag_add(d, NULL, 0, 0, "variant '%s' (%s: %s) needs a DPU in cluster.dpu", v->name,
			 kind_names[r->kind], words_of[r->kind][r->value]);
		return false;
	}
	for (size_t i = 0; i < OFFLOAD_MAX_FIELDS && r->needs[i].field; i++) {
		const scn_hw *hw = offload_hw_of(s, r->needs[i].hw);
		if (has_field(hw, r->needs[i].field) || has_field(hw, r->needs[i].alt))
			continue;
		diag_add(d, NULL, 0, 0, "variant '%s' (%s: %s) needs '%s' of profile '%s' (the "
			 "scenario loader requires it)", v->name, kind_names[r->kind],
			 words_of[r->kind][r->value], r->needs[i].field, hw->name);
		return false;
	}
	return true;
}

static offload_env env_of(const scn_scenario *s, const scn_variant *v, double freq_Hz,
			  diag *notes)
{
	/* the virtual switch forwards the variant's own packets */
	wire_transport t = v->network == SCN_NET_HOST_TCP ? WIRE_TCP : WIRE_RDMA;
	return (offload_env){ .s = s, .v = v, .freq_Hz = freq_Hz, .notes = notes,
			      .mtu = offload_packet_bytes(s, t),
			      .tcp_pkt_bytes = offload_tcp_packet_bytes(s) };
}

/* Each option's share of the network costs (net) and of the storage
 * path (storage), kinds in order: storage rows before crypto rows. */
static int apply(const scn_scenario *s, const scn_variant *v, double freq_Hz, diag *d,
		 diag *notes, offload_costs *net, offload_storage *storage)
{
	offload_env e = env_of(s, v, freq_Hz, notes);
	for (int k = 0; k < OFFLOAD_NKINDS; k++)
		if (!row_ready(s, v, offload_row_of(v, (offload_kind)k), d))
			return SIM_EINVAL;
	for (int k = 0; k < OFFLOAD_NKINDS; k++) {
		const offload_row *r = offload_row_of(v, (offload_kind)k);
		if (net && r->net)
			r->net(&e, net);
		if (storage && r->storage)
			r->storage(&e, storage);
	}
	return SIM_OK;
}

int offload_net_costs(const scn_scenario *s, const scn_variant *v, double freq_Hz,
		      offload_costs *out, diag *d, diag *notes)
{
	int rc;
	*out = (offload_costs){ 0 };
	if ((rc = apply(s, v, freq_Hz, d, notes, out, NULL)))
		return rc;
	out->total_core_s_per_byte = out->tcp_core_s_per_byte + out->crypto_core_s_per_byte +
				     out->vswitch_core_s_per_byte;
	out->total_tx_core_s_per_byte = out->tcp_tx_core_s_per_byte + out->crypto_core_s_per_byte +
					out->vswitch_core_s_per_byte;
	return SIM_OK;
}

int offload_storage_path(const scn_scenario *s, const scn_variant *v, double freq_Hz,
			 offload_storage *out, diag *d, diag *notes)
{
	*out = (offload_storage){ 0 };
	return apply(s, v, freq_Hz, d, notes, NULL, out);
}
