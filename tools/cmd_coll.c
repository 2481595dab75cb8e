/* dpusim coll: a simulated nccl-tests. One collective over a size sweep on a
 * generated fabric, one row per size as nccl-tests prints them (time,
 * algorithm bandwidth, bus bandwidth). Each size runs on a fresh network,
 * like separate nccl-tests iterations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/coll.h"
#include "models/datadir.h"
#include "models/diag.h"
#include "models/fabric.h"
#include "models/profile.h"
#include "models/setup.h"
#include "models/units.h"
#include "models/wire.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/progress.h"

#define MAX_SIZES 64
/* The profiles whose latencies are the defaults: the newest generation that
 * publishes them (ConnectX-7 and Quantum-2 publish none; the scenarios
 * assume these same figures for them). */
#define DEFAULT_NIC "ConnectX-6-HDR"
#define DEFAULT_SWITCH "QM8700-HDR"
/* NVIDIA Quantum-2 QM9700 InfiniBand switch: 64 ports of 400 Gb/s (datasheet). */
#define DEFAULT_RADIX 64
/* Upper bounds that keep a run in memory: a ring needs about 450 B per rank
 * (262144 ranks: 118 MB peak RSS, measured with `dpusim coll --ranks 262144
 * --bytes 1MiB --link 400Gbps --algo ring`), so 2^20 ranks stay under 1 GB
 * where 1e9 would want hundreds of GB. Radix and channels take the ranges
 * the switch and GPU profiles accept (models/profile_schema.c: radix 2..4096,
 * nccl_channels 1..64). */
#define MAX_RANKS 1048576u
#define MAX_RADIX 4096u
#define MAX_CHANNELS 64u
/* A scenario's fabric.oversubscription takes 1..64 (models/scenario_resolve.c). */
#define MAX_OVERSUB 64u

struct opts {
	coll_params p;
	uint32_t ranks;
	uint64_t sizes[MAX_SIZES];
	int nsizes;
	fab_config fc;
	coll_config cc;
	bool json, have_link, have_ranks, have_bytes;
	uint64_t min_bytes, max_bytes; /* -b, -e: a size range as nccl-tests takes it */
	uint32_t step_factor;          /* -f (default 2) */
	uint32_t iters, warmup;        /* -n (default 1), -w (accepted, nothing to warm) */
	const char *nic, *sw;          /* --nic, --switch: profiles giving default latencies */
	const char *gpu;               /* --gpu: the profile giving NCCL's architecture, or NULL */
	bool ideal, have_msg_lat, have_switch_lat, have_proto;
	int link_layer;                /* --link-layer: PROFILE_LL_*, LL_NONE, or LL_UNSET */
	double mtu;                    /* --mtu, 0: the link layer's default */
	wire_frame wire;               /* the packets, where link_layer is not LL_NONE */
};

/* --link-layer not given (the --switch profile's), and none (links carry
 * payload at --link: no headers). */
#define LL_UNSET (-2)
#define LL_NONE (-1)

static int parse_qty(const char *opt, const char *v, unit_dim dim, double *out)
{
	unit_err e;
	if (!v)
		return cli_usage_error("coll: %s needs a value", opt);
	if (unit_parse(v, dim, out, &e))
		return cli_usage_error("coll: %s in '%s'%s%s%s", e.msg, opt, *e.hint ? " (" : "", e.hint,
				       *e.hint ? ")" : "");
	if (*out < 0)
		return cli_usage_error("coll: '%s' must not be negative in '%s'", v, opt);
	return 0;
}

/* Latencies and the jitter mean at most 1 s: 2^20 ranks of ring steps at
 * that still end inside the engine's 106 days, where --msg-latency 9e6s
 * overflowed the collective's time estimate (undefined) and --jitter 1e6s
 * aborted scheduling past the end of time. Scenarios allow far less
 * (hop_latency 1 ms, a switch's latency 100 us). */
#define MAX_TIME_S 1.0

static int parse_time(const char *opt, const char *v, sim_time *out)
{
	double s;
	int rc = parse_qty(opt, v, UNIT_SECONDS, &s);
	if (rc)
		return rc;
	if (!(s <= MAX_TIME_S) || sim_time_from_s(s, out))
		return cli_usage_error("coll: '%s' is out of range in '%s' (at most %gs)", v, opt,
				       MAX_TIME_S);
	return 0;
}

static int parse_count(const char *opt, const char *v, uint32_t lo, uint32_t hi, uint32_t *out)
{
	unsigned long long n;
	if (!cli_parse_u64(v, &n) || n < lo || n > hi)
		return cli_usage_error("coll: %s wants a whole number from %u to %u, not '%s'", opt, lo,
				       hi, v ? v : "(nothing)");
	*out = (uint32_t)n;
	return 0;
}

/* A byte count: plain bytes as nccl-tests writes them, or a quantity
 * (64MiB) that comes to a whole number of bytes that fits 64 bits; a
 * cast of anything else would be undefined (1e30B) or silently round
 * (0.5B to 0). */
static int parse_bytes(const char *opt, const char *v, uint64_t *out)
{
	unsigned long long b;
	double d;
	int rc;
	if (cli_parse_u64(v, &b))
		return *out = b, 0;
	if ((rc = parse_qty(opt, v, UNIT_BYTES, &d)))
		return rc;
	if (d >= 18446744073709551616.0) /* 2^64 */
		return cli_usage_error("coll: '%s' is out of range in '%s' (at most 2^64-1 bytes)",
				       v, opt);
	if (d != floor(d))
		return cli_usage_error("coll: '%s' is not a whole number of bytes in '%s'", v, opt);
	*out = (uint64_t)d;
	return 0;
}

/* A message size: at most COLL_MAX_BYTES, as a scenario's sizes. */
static int size_ok(const char *opt, const char *v, uint64_t b)
{
	if ((double)b > COLL_MAX_BYTES)
		return cli_usage_error("coll: '%s' in '%s' is above the largest collective, %g bytes "
				       "(a scenario's 'sizes' take the same)", v, opt, COLL_MAX_BYTES);
	return 0;
}

/* -b/-e as nccl-tests reads them: bytes with an optional K, M or G
 * (binary: 128M is 128 MiB), or any size parse_bytes takes (64MiB). */
static int parse_nccl_size(const char *opt, const char *v, uint64_t *out)
{
	static const char suffix[] = "KMG";
	size_t len = v ? strlen(v) : 0;
	const char *at = len > 1 ? strchr(suffix, v[len - 1]) : NULL;
	char digits[32];
	unsigned long long n;
	if (!at || !v[len - 1] || len >= sizeof digits)
		return parse_bytes(opt, v, out);
	memcpy(digits, v, len - 1);
	digits[len - 1] = '\0';
	if (!cli_parse_u64(digits, &n) || n > (UINT64_MAX >> (10 * (at - suffix + 1))))
		return parse_bytes(opt, v, out);
	*out = (uint64_t)n << (10 * (at - suffix + 1));
	return 0;
}

/* A size: plain bytes as nccl-tests writes them, or a quantity (64MiB). */
static int parse_sizes(const char *v, struct opts *o)
{
	char *copy, *save = NULL;
	int rc = 0;
	if (!v)
		return cli_usage_error("coll: --bytes needs a value");
	if (cli_list_has_empty(v))
		return cli_usage_error("coll: --bytes '%s' has an empty item (expected S[,S...])", v);
	copy = strdup(v);
	for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == MAX_SIZES)
			rc = cli_usage_error("coll: at most %d sizes in --bytes", MAX_SIZES);
		else if (!(rc = parse_bytes("--bytes", t, &o->sizes[o->nsizes])) &&
			 !(rc = size_ok("--bytes", t, o->sizes[o->nsizes])))
			o->nsizes++;
	}
	free(copy);
	if (!rc && o->nsizes == 0)
		rc = cli_usage_error("coll: --bytes lists no size");
	return rc;
}

static int parse_topology(const char *v, fab_topo *t)
{
	static const struct { const char *name; fab_topo topo; } names[] = {
		{ "single-switch", FAB_SINGLE_SWITCH }, { "fat-tree", FAB_FAT_TREE2 },
		{ "fat-tree3", FAB_FAT_TREE3 },         { "rail", FAB_RAIL },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (v && !strcmp(v, names[i].name))
			return *t = names[i].topo, 0;
	return cli_usage_error("coll: unknown topology '%s' (single-switch, fat-tree, fat-tree3, rail)",
			       v ? v : "");
}

static int parse_enum(const char *opt, const char *v, const char *a, const char *b, bool *is_b)
{
	if (v && !strcmp(v, a))
		return *is_b = false, 0;
	if (v && !strcmp(v, b))
		return *is_b = true, 0;
	return cli_usage_error("coll: %s is '%s' or '%s', not '%s'", opt, a, b, v ? v : "");
}

/* One option (and its value, if it takes one) at argv[*i]. */
static int parse_one(int argc, char **argv, int *i, struct opts *o)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	bool flag = false;
	int rc = 0;
	if (!strcmp(a, "--json"))
		return o->json = true, 0;
	if (!strcmp(a, "--sharp"))
		return o->cc.sharp = true, 0;
	if (!strcmp(a, "--nvls"))
		return o->cc.nvls = true, 0;
	if (!strcmp(a, "--ideal"))
		return o->ideal = true, 0;
	(*i)++;
	if (!strcmp(a, "--op")) {
		if (coll_op_parse(v, &o->p.op))
			rc = cli_usage_error("coll: unknown op '%s' (allreduce, reducescatter, allgather, "
					     "broadcast, alltoall, sendrecv)", v ? v : "");
	} else if (!strcmp(a, "--algo")) {
		if (coll_algo_parse(v, &o->p.algo))
			rc = cli_usage_error("coll: unknown algorithm '%s' (auto, ring, tree, hier, "
					     "sharp, nvls, p2p)", v ? v : "");
	} else if (!strcmp(a, "--ranks")) {
		rc = parse_count(a, v, 2, MAX_RANKS, &o->ranks);
		o->have_ranks = true;
	} else if (!strcmp(a, "--gpus-per-node")) {
		rc = parse_count(a, v, 1, MAX_RANKS, &o->fc.gpus_per_node);
	} else if (!strcmp(a, "--nics-per-node")) {
		rc = parse_count(a, v, 1, MAX_RANKS, &o->fc.nics_per_node);
	} else if (!strcmp(a, "--channels")) {
		rc = parse_count(a, v, 1, MAX_CHANNELS, &o->cc.channels);
	} else if (!strcmp(a, "--radix")) {
		rc = parse_count(a, v, 2, MAX_RADIX, &o->fc.radix);
	} else if (!strcmp(a, "--root")) {
		rc = parse_count(a, v, 0, MAX_RANKS - 1, &o->p.root);
	} else if (!strcmp(a, "--seed")) {
		unsigned long long s;
		if (!cli_parse_u64(v, &s))
			rc = cli_usage_error("coll: --seed wants a whole number, not '%s'", v ? v : "");
		o->fc.seed = o->cc.seed = s;
	} else if (!strcmp(a, "--bytes")) {
		rc = parse_sizes(v, o);
		o->have_bytes = true;
	} else if (!strcmp(a, "--nic")) {
		o->nic = v;
		rc = v ? 0 : cli_usage_error("coll: --nic needs a profile name");
	} else if (!strcmp(a, "--gpu")) {
		o->gpu = v;
		rc = v ? 0 : cli_usage_error("coll: --gpu needs a profile name");
	} else if (!strcmp(a, "--switch")) {
		o->sw = v;
		rc = v ? 0 : cli_usage_error("coll: --switch needs a profile name");
	} else if (!strcmp(a, "-b")) {
		if (!(rc = parse_nccl_size(a, v, &o->min_bytes)))
			rc = size_ok(a, v, o->min_bytes);
	} else if (!strcmp(a, "-e")) {
		if (!(rc = parse_nccl_size(a, v, &o->max_bytes)))
			rc = size_ok(a, v, o->max_bytes);
	} else if (!strcmp(a, "-f")) {
		rc = parse_count(a, v, 2, 1024, &o->step_factor);
	} else if (!strcmp(a, "-n")) {
		rc = parse_count(a, v, 1, 1000, &o->iters);
	} else if (!strcmp(a, "-w")) {
		rc = parse_count(a, v, 0, 1000, &o->warmup);
	} else if (!strcmp(a, "--chunk")) {
		if (!(rc = parse_bytes(a, v, &o->cc.chunk_bytes)) && !o->cc.chunk_bytes)
			rc = cli_usage_error("coll: --chunk wants at least 1 byte, not '%s'", v);
	} else if (!strcmp(a, "--oversub")) {
		if (!(rc = parse_qty(a, v, UNIT_NUMBER, &o->fc.oversub)) &&
		    !(o->fc.oversub >= 1 && o->fc.oversub <= MAX_OVERSUB))
			rc = cli_usage_error("coll: --oversub is a ratio from 1 to %u, not '%s'",
					     MAX_OVERSUB, v);
	} else if (!strcmp(a, "--topology")) {
		rc = parse_topology(v, &o->fc.topo);
	} else if (!strcmp(a, "--transport")) {
		if (coll_tkind_parse(v, &o->cc.transport.kind))
			rc = cli_usage_error("coll: unknown transport '%s' (host-tcp, rdma, rdma-gdr)",
					     v ? v : "");
	} else if (!strcmp(a, "--routing")) {
		if (v && !strcmp(v, "dmodk"))
			o->fc.routing = FAB_DMODK;
		else if (v && !strcmp(v, "ecmp"))
			o->fc.routing = FAB_ECMP;
		else if (v && !strcmp(v, "adaptive"))
			o->fc.routing = FAB_ADAPTIVE;
		else
			rc = cli_usage_error("coll: --routing is 'ecmp', 'dmodk' or 'adaptive', not '%s'",
					     v ? v : "");
	} else if (!strcmp(a, "--pcie-mode")) {
		if (!(rc = parse_enum(a, v, "switch", "root", &flag)))
			o->fc.pcie = flag ? FAB_PCIE_ROOT : FAB_PCIE_SWITCH;
	} else if (!strcmp(a, "--link-layer")) {
		if (v && !strcmp(v, "infiniband"))
			o->link_layer = PROFILE_LL_INFINIBAND;
		else if (v && !strcmp(v, "ethernet"))
			o->link_layer = PROFILE_LL_ETHERNET;
		else if (v && !strcmp(v, "none"))
			o->link_layer = LL_NONE;
		else
			rc = cli_usage_error("coll: --link-layer is 'infiniband', 'ethernet' or 'none', "
					     "not '%s'", v ? v : "");
	} else if (!strcmp(a, "--mtu")) {
		uint64_t b;
		if (!(rc = parse_bytes(a, v, &b)) && (b < 1 || b > 65536))
			rc = cli_usage_error("coll: --mtu wants 1 to 65536 bytes, not '%s'", v);
		o->mtu = (double)b;
	} else if (!strcmp(a, "--link")) {
		if (!(rc = parse_qty(a, v, UNIT_BYTES_PER_S, &o->fc.link_Bps)) && !(o->fc.link_Bps > 0))
			rc = cli_usage_error("coll: --link wants a rate above zero, not '%s'", v);
		o->have_link = true;
	} else if (!strcmp(a, "--nvlink")) {
		rc = parse_qty(a, v, UNIT_BYTES_PER_S, &o->fc.nvlink_Bps);
	} else if (!strcmp(a, "--pcie")) {
		rc = parse_qty(a, v, UNIT_BYTES_PER_S, &o->fc.pcie_Bps);
	} else if (!strcmp(a, "--host-mem")) {
		rc = parse_qty(a, v, UNIT_BYTES_PER_S, &o->fc.host_mem_Bps);
	} else if (!strcmp(a, "--hop-latency")) {
		rc = parse_time(a, v, &o->fc.hop_lat_ps);
	} else if (!strcmp(a, "--switch-latency")) {
		rc = parse_time(a, v, &o->fc.switch_lat_ps);
		o->have_switch_lat = true;
	} else if (!strcmp(a, "--nvlink-latency")) {
		rc = parse_time(a, v, &o->fc.nvlink_lat_ps);
	} else if (!strcmp(a, "--pcie-latency")) {
		rc = parse_time(a, v, &o->fc.pcie_lat_ps);
	} else if (!strcmp(a, "--msg-latency")) {
		rc = parse_time(a, v, &o->cc.transport.msg_lat_ps);
		o->have_msg_lat = true;
	} else if (!strcmp(a, "--proto")) {
		if (coll_proto_parse(v, &o->cc.proto))
			rc = cli_usage_error("coll: unknown protocol '%s' (ideal, nccl, ll, ll128, simple)",
					     v ? v : "");
		o->have_proto = true;
	} else if (!strcmp(a, "--launch-latency")) {
		rc = parse_time(a, v, &o->cc.launch_lat_ps);
	} else if (!strcmp(a, "--jitter")) {
		rc = parse_time(a, v, &o->cc.transport.jitter_mean_ps);
	} else {
		rc = cli_usage_error("coll: unknown option '%s' (see 'dpusim coll --help')", a);
	}
	return rc;
}

/* A profile of kind `kind` named `name` from ps: 0, or a usage error. */
static int find_profile(profile_set *ps, const char *name, profile_kind kind, const profile **out)
{
	diag *d = diag_new();
	int rc = d ? profile_set_find(ps, name, out, d) : SIM_ENOMEM;
	if (rc == SIM_ENOENT && !*profile_set_dir(ps))
		rc = cli_usage_error("coll: no hardware profiles: %s", datadir_profiles_too_long());
	else if (rc == SIM_ENOENT)
		rc = cli_usage_error("coll: no %s profile '%s' in %s", profile_kind_name(kind), name,
				     profile_set_dir(ps));
	else if (rc)
		rc = cli_usage_error("coll: profile '%s': %s", name,
				     d && diag_count(d) ? diag_msg(d, 0) : sim_strerror(rc));
	else if (profile_get_kind(*out) != kind)
		rc = cli_usage_error("coll: '%s' is a %s profile, not a %s profile", name,
				     profile_kind_name(profile_get_kind(*out)), profile_kind_name(kind));
	diag_free(d);
	return rc;
}

/* One latency of a profile, in ps: the profile's published figure, or an
 * error naming the option that sets it when the profile gives none. */
static int profile_latency(profile_set *ps, const char *name, profile_kind kind, const char *field,
			   const char *opt, sim_time *out)
{
	const profile *p = NULL;
	const profile_field *f = profile_field_find(kind, field);
	double v;
	int rc = find_profile(ps, name, kind, &p);
	if (rc)
		return rc;
	if (!profile_has(v = profile_field_get(profile_get_values(p), f)))
		return cli_usage_error("coll: %s profile '%s' gives no %s (%s); set it with %s T",
				       profile_kind_name(kind), name, field,
				       profile_missing(p, f) ? profile_missing(p, f) : "not published",
				       opt);
	if (sim_time_from_s(v, out))
		return cli_usage_error("coll: %s of '%s' is out of range", field, name);
	return 0;
}

/* --gpu: what a scenario's GPU gives NCCL's cost model (models/setup.c,
 * setup_nccl_cc and setup_nccl_pci_GBps): the compute capability its
 * per-architecture caps are keyed on, and the PCIe figure its channel
 * search across nodes reads, the GPU's and the --nic's links, the lower.
 * Without --gpu neither applies, as in a scenario whose GPU profile gives
 * no compute capability; the header says so. */
static int apply_gpu(struct opts *o, profile_set *ps)
{
	const profile *g, *n;
	const profile_gpu *gv;
	const profile_nic *nv;
	int rc;
	if (!o->gpu || o->cc.proto == COLL_PROTO_IDEAL)
		return 0;
	if ((rc = find_profile(ps, o->gpu, PROFILE_GPU, &g)) ||
	    (rc = find_profile(ps, o->nic, PROFILE_NIC, &n)))
		return rc;
	gv = &profile_get_values(g)->gpu;
	nv = &profile_get_values(n)->nic;
	if (!profile_has(gv->compute_capability))
		return cli_usage_error("coll: GPU profile '%s' gives no compute_capability: NCCL's "
				       "per-architecture model cannot apply (leave out --gpu)", o->gpu);
	o->cc.nccl_cc = (uint32_t)llround(gv->compute_capability * 10);
	o->cc.nccl_pci_GBps = setup_nccl_pci_GBps_of(gv, nv);
	return 0;
}

/* Defaults as NCCL runs: its protocols, and the latencies the NIC and switch
 * profiles publish; --ideal (links at their payload rate, no latency) is the closed
 * form. An option given explicitly always wins. */
static int apply_defaults(struct opts *o)
{
	char dir[DATADIR_PATH_MAX];
	profile_set *ps;
	bool latencies = !o->ideal && !(o->have_msg_lat && o->have_switch_lat);
	int rc;
	if (!o->have_proto)
		o->cc.proto = o->ideal ? COLL_PROTO_IDEAL : COLL_PROTO_NCCL;
	if (!latencies && !o->gpu)
		return 0;
	if (!(ps = profile_set_new(datadir_profiles(dir, sizeof dir))))
		return cli_usage_error("out of memory");
	rc = apply_gpu(o, ps);
	if (!rc && latencies && !o->have_msg_lat)
		rc = profile_latency(ps, o->nic, PROFILE_NIC, "rdma_latency", "--msg-latency",
				     &o->cc.transport.msg_lat_ps);
	if (!rc && latencies && !o->have_switch_lat)
		rc = profile_latency(ps, o->sw, PROFILE_SWITCH, "latency", "--switch-latency",
				     &o->fc.switch_lat_ps);
	profile_set_free(ps);
	return rc;
}

/* The --switch profile's link layer, unless --link-layer gave one: 0 or
 * a usage error. */
static int switch_link_layer(struct opts *o)
{
	char dir[DATADIR_PATH_MAX];
	profile_set *ps;
	const profile *p = NULL;
	diag *d = diag_new();
	double ll = NAN;
	int rc = 0;
	if (o->link_layer != LL_UNSET) {
		diag_free(d);
		return 0;
	}
	if (!d || !(ps = profile_set_new(datadir_profiles(dir, sizeof dir)))) {
		diag_free(d);
		return cli_usage_error("out of memory");
	}
	if (!profile_set_find(ps, o->sw, &p, d) && profile_get_kind(p) == PROFILE_SWITCH)
		ll = profile_get_values(p)->sw.link_layer;
	if (ll == PROFILE_LL_INFINIBAND || ll == PROFILE_LL_ETHERNET)
		o->link_layer = (int)ll;
	else
		rc = cli_usage_error("coll: switch profile '%s' gives no link layer (infiniband or "
				     "ethernet) for the packets' headers: set --link-layer", o->sw);
	profile_set_free(ps);
	diag_free(d);
	return rc;
}

/* The links' payload share: the headers of the transport's packets on the
 * link layer (models/wire.h), at --mtu or the link layer's default. */
static int apply_wire(struct opts *o)
{
	wire_transport t = o->cc.transport.kind == COLL_HOST_TCP ? WIRE_TCP : WIRE_RDMA;
	bool ib;
	int rc = switch_link_layer(o);
	if (rc || o->link_layer == LL_NONE)
		return rc;
	ib = o->link_layer == PROFILE_LL_INFINIBAND;
	if (wire_frame_at(ib, t, WIRE_WRITE, o->mtu > 0 ? (uint32_t)o->mtu : 0, &o->wire, NULL))
		return cli_usage_error("coll: --mtu %u is not an %s", (uint32_t)o->mtu,
				       wire_mtu_words(ib));
	o->fc.payload_frac = wire_payload_frac(&o->wire);
	return 0;
}

/* -b MIN -e MAX [-f F]: MIN, MIN x F, ... up to MAX, as nccl-tests steps. */
static int size_range(struct opts *o)
{
	if (o->have_bytes)
		return cli_usage_error("coll: give sizes with --bytes or with -b/-e, not both");
	if (!o->min_bytes || !o->max_bytes || o->min_bytes > o->max_bytes)
		return cli_usage_error("coll: -b MIN and -e MAX go together, 1 <= MIN <= MAX (e.g. "
				       "-b 8 -e 128M)");
	for (uint64_t b = o->min_bytes; b <= o->max_bytes; b *= o->step_factor) {
		if (o->nsizes == MAX_SIZES)
			return cli_usage_error("coll: -b/-e/-f give more than %d sizes", MAX_SIZES);
		o->sizes[o->nsizes++] = b;
		if (b > o->max_bytes / o->step_factor)
			break;
	}
	o->have_bytes = true;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){
		.p = { .op = COLL_ALLREDUCE, .algo = COLL_AUTO },
		.fc = { .topo = FAB_SINGLE_SWITCH, .gpus_per_node = 1, .radix = DEFAULT_RADIX,
			.oversub = 1, .seed = 1 },
		.cc = { .transport = { .kind = COLL_RDMA }, .seed = 1 },
		.step_factor = 2, .iters = 1, .nic = DEFAULT_NIC, .sw = DEFAULT_SWITCH,
		.link_layer = LL_UNSET,
	};
	int rc;
	for (int i = 1; i < argc; i++)
		if ((rc = parse_one(argc, argv, &i, o)))
			return rc;
	if ((o->min_bytes || o->max_bytes) && (rc = size_range(o)))
		return rc;
	if (!o->have_ranks || !o->have_bytes || !o->have_link)
		return cli_usage_error("coll: --ranks, --bytes (or -b and -e) and --link are required "
				       "(see 'dpusim coll --help')");
	if ((rc = apply_defaults(o)) || (rc = apply_wire(o)))
		return rc;
	if (o->link_layer == LL_NONE && o->mtu > 0)
		return cli_usage_error("coll: --mtu with --link-layer none: no packets to size");
	if (o->ranks % o->fc.gpus_per_node)
		return cli_usage_error("coll: --ranks %u is not a multiple of --gpus-per-node %u",
				       o->ranks, o->fc.gpus_per_node);
	if (o->p.op == COLL_BROADCAST && o->p.root >= o->ranks)
		return cli_usage_error("coll: --root %u is not one of the %u ranks (0 to %u)", o->p.root,
				       o->ranks, o->ranks - 1);
	if (!o->fc.nics_per_node)
		o->fc.nics_per_node = o->fc.gpus_per_node;
	if (o->fc.nics_per_node > o->fc.gpus_per_node && o->fc.topo != FAB_RAIL)
		return cli_usage_error("coll: --nics-per-node %u is more than --gpus-per-node %u "
				       "(only --topology rail takes more NICs than GPUs)",
				       o->fc.nics_per_node, o->fc.gpus_per_node);
	if (o->fc.topo == FAB_SINGLE_SWITCH && o->fc.radix == DEFAULT_RADIX)
		o->fc.radix = 0; /* a single switch of any size unless --radix says */
	o->fc.nodes = o->ranks / o->fc.gpus_per_node;
	return 0;
}

static int run_once(const struct opts *o, uint64_t bytes, coll_result *res, char *why, size_t n);

/* Whether the -n runs of a size can differ: only ECMP hashing, where the
 * fabric has paths to choose from, and --jitter draw from their seeds. */
static bool runs_draw(const struct opts *o)
{
	return o->cc.transport.jitter_mean_ps > 0 ||
	       (o->fc.routing == FAB_ECMP && o->fc.topo != FAB_SINGLE_SWITCH);
}

/* Runs one size on a fresh network, -n times with seeds seed, seed + 1, ...
 * (only ECMP hashing and --jitter draw from them), and reports the mean
 * time and bandwidths, as nccl-tests averages its iterations. Where the
 * runs draw nothing (runs_draw) they are one run on one fresh network,
 * which is simulated once (issue 14; the header says so). */
static int run_size(const struct opts *o, uint64_t bytes, coll_result *res, char *why, size_t n)
{
	struct opts one = *o;
	double t_ps = 0, factor;
	int rc = 0;
	if (!runs_draw(o))
		return run_once(o, bytes, res, why, n);
	for (uint32_t k = 0; k < o->iters && !rc; k++) {
		one.fc.seed = o->fc.seed + k;
		one.cc.seed = o->cc.seed + k;
		if (!(rc = run_once(&one, bytes, res, why, n)))
			t_ps += (double)res->time_ps;
	}
	if (!rc && o->iters > 1) { /* bandwidths of the mean time, as nccl-tests */
		factor = res->algbw_GBps > 0 ? res->busbw_GBps / res->algbw_GBps : 0;
		res->time_ps = (sim_time)llround(t_ps / o->iters);
		res->algbw_GBps = res->time_ps > 0 ? (double)bytes / sim_time_to_s(res->time_ps) / 1e9 : 0;
		res->busbw_GBps = res->algbw_GBps * factor;
	}
	return rc;
}

/* One size on a fresh network. When the engine fails (sim_fail), its
 * explanation goes to why (n bytes). */
static int run_once(const struct opts *o, uint64_t bytes, coll_result *res, char *why, size_t n)
{
	sim_engine *eng = sim_engine_new();
	flow_net *net = eng ? flow_net_new(eng) : NULL;
	fab *f = NULL;
	coll_ctx *c = NULL;
	coll_params p = o->p;
	int rc = net ? fab_new(&o->fc, net, &f) : SIM_ENOMEM;
	if (!rc)
		rc = coll_ctx_new(eng, net, f, &o->cc, &c);
	p.bytes = bytes;
	if (!rc)
		rc = coll_run(c, &p, res);
	if (eng && sim_error(eng))
		snprintf(why, n, "%s", sim_error_msg(eng));
	coll_ctx_free(c);
	fab_free(f);
	flow_net_free(net);
	sim_engine_free(eng);
	return rc;
}

/* nccl-tests' element count for a size: float elements of the buffer, per
 * rank for the ops whose parameter is a rank's share (its *_perf tools). */
static uint64_t elements(const struct opts *o, uint64_t bytes)
{
	uint64_t count = bytes / 4;
	if (o->p.op == COLL_ALLGATHER || o->p.op == COLL_REDUCE_SCATTER || o->p.op == COLL_ALLTOALL)
		count /= o->ranks;
	return count;
}

static void print_header(const struct opts *o)
{
	printf("# dpusim coll: %s over %u ranks, transport %s, %u iteration%s per size "
	       "(simulated: no warm-up, and in-place runs as out-of-place)\n",
	       coll_op_name(o->p.op), o->ranks, coll_tkind_name(o->cc.transport.kind), o->iters,
	       o->iters == 1 ? "" : "s averaged");
	if (o->iters > 1 && !runs_draw(o))
		printf("# the %u iterations are one run: nothing draws from their seeds (no --jitter, "
		       "and no ECMP choice of path), so it was simulated once\n", o->iters);
	bool nic_lat = !o->have_msg_lat && !o->ideal, sw_lat = !o->have_switch_lat && !o->ideal;
	printf("# protocol %s; message latency %g us%s%s%s, switch latency %g ns%s%s%s, "
	       "hop latency %g ns\n#\n", coll_proto_name(o->cc.proto),
	       sim_time_to_s(o->cc.transport.msg_lat_ps) * 1e6, nic_lat ? " (profile " : "",
	       nic_lat ? o->nic : "", nic_lat ? ")" : "", sim_time_to_s(o->fc.switch_lat_ps) * 1e9,
	       sw_lat ? " (profile " : "", sw_lat ? o->sw : "", sw_lat ? ")" : "",
	       sim_time_to_s(o->fc.hop_lat_ps) * 1e9);
	if (o->cc.proto != COLL_PROTO_IDEAL && o->gpu)
		printf("# GPU %s: NCCL's per-architecture caps at compute capability %u.%u; its "
		       "channels across nodes %s\n", o->gpu, o->cc.nccl_cc / 10, o->cc.nccl_cc % 10,
		       o->cc.nccl_pci_GBps > 0 ? "from its search (docs/collectives.md)"
					       : "one per NIC (no PCIe figure in the profiles)");
	else if (o->cc.proto != COLL_PROTO_IDEAL)
		printf("# no --gpu: NCCL's per-architecture caps and its channel search across nodes "
		       "not applied\n");
	if (o->link_layer == LL_NONE)
		printf("# link layer none: links carry payload at --link\n");
	else
		printf("# wire: %s, %u payload bytes per packet: links carry payload at %.2f%% of "
		       "--link\n", o->wire.what, o->wire.mtu_bytes, o->fc.payload_frac * 100);
	printf("# %58s %30s\n", "out-of-place", "in-place");
	printf("# %10s %12s %8s %6s %6s %10s %8s %8s %6s %10s %8s %8s %6s  %s\n", "size", "count",
	       "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
	       "#wrong", "algo");
	printf("# %10s %12s %8s %6s %6s %10s %8s %8s %6s %10s %8s %8s %6s\n", "(B)", "(elements)",
	       "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

static void print_row(const struct opts *o, uint64_t bytes, const coll_result *r, bool first)
{
	double us = sim_time_to_s(r->time_ps) * 1e6;
	char algo[32], group[64];
	bool reduces = o->p.op == COLL_ALLREDUCE || o->p.op == COLL_REDUCE_SCATTER;
	int root = o->p.op == COLL_BROADCAST ? (int)o->p.root : -1;
	/* Under a protocol model the algorithm reads ring/ll, as NCCL_DEBUG=INFO names it. */
	if (r->proto == COLL_PROTO_IDEAL)
		snprintf(algo, sizeof algo, "%s", coll_algo_name(r->algo));
	else
		snprintf(algo, sizeof algo, "%s/%s", coll_algo_name(r->algo), coll_proto_name(r->proto));
	if (o->json) {
		printf("%s\n    { \"bytes\": %llu, \"algo\": \"%s\", \"time_us\": %.6f, "
		       "\"algbw_GBps\": %.6f, \"busbw_GBps\": %.6f, \"proto\": \"%s\" }",
		       first ? "" : ",", (unsigned long long)bytes, coll_algo_name(r->algo), us,
		       r->algbw_GBps, r->busbw_GBps, coll_proto_name(r->proto));
		return;
	}
	/* #wrong: N/A, as nccl-tests prints it without its data check (-c 0). */
	snprintf(group, sizeof group, "%10.3f %8.3f %8.3f %6s", us, r->algbw_GBps, r->busbw_GBps, "N/A");
	printf("%12llu %12llu %8s %6s %6d %s %s  %s\n", (unsigned long long)bytes,
	       (unsigned long long)elements(o, bytes), "float", reduces ? "sum" : "none", root, group,
	       group, algo);
}

int cmd_coll(int argc, char **argv)
{
	struct opts o;
	double busbw_sum = 0;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	if (o.json)
		printf("{\n  \"op\": \"%s\", \"ranks\": %u, \"transport\": \"%s\",\n  \"rows\": [",
		       coll_op_name(o.p.op), o.ranks, coll_tkind_name(o.cc.transport.kind));
	else
		print_header(&o);
	/* A long size (65,536 ranks: seconds each) says it goes on, as a run does. */
	progress_start();
	progress_parts((size_t)o.nsizes, "size", false);
	for (int i = 0; i < o.nsizes; i++) {
		coll_result r;
		char why[400] = "", what[64];
		snprintf(what, sizeof what, "%s %llu B", coll_op_name(o.p.op),
			 (unsigned long long)o.sizes[i]);
		progress_part((size_t)i);
		progress_what(what);
		if ((rc = run_size(&o, o.sizes[i], &r, why, sizeof why))) {
			if (o.json)
				printf("\n  ]\n}\n");
			fflush(stdout);
			if (*why) /* the sizes and rates given take it past the clock */
				return cli_usage_error("coll: %llu bytes: %s",
						       (unsigned long long)o.sizes[i], why);
			if (rc == SIM_EUNSUPPORTED)
				return cli_usage_error("coll: algorithm '%s' with protocol '%s' does not "
						       "apply to %s on this fabric over transport '%s'",
						       coll_algo_name(o.p.algo), coll_proto_name(o.cc.proto),
						       coll_op_name(o.p.op),
						       coll_tkind_name(o.cc.transport.kind));
			if (rc == SIM_EINVAL && (uint64_t)o.fc.nodes * o.fc.nics_per_node > fab_max_ports(&o.fc))
				return cli_usage_error("coll: %u NIC ports do not fit this topology: radix %u at "
						       "%g:1 connects at most %llu (a larger --radix%s)",
						       o.fc.nodes * o.fc.nics_per_node, o.fc.radix, o.fc.oversub,
						       (unsigned long long)fab_max_ports(&o.fc),
						       o.fc.topo == FAB_FAT_TREE3 ? "" : ", or --topology fat-tree3");
			return cli_usage_error("coll: %s (fabric or collective rejected the options)",
					       sim_strerror(rc));
		}
		print_row(&o, o.sizes[i], &r, i == 0);
		busbw_sum += r.busbw_GBps;
		fflush(stdout);
	}
	if (o.json)
		printf("\n  ]\n}\n");
	else /* nccl-tests' footer: what scripts read for one figure per run */
		printf("# Avg bus bandwidth    : %g \n#\n", busbw_sum / o.nsizes);
	return CLI_OK;
}
