/* Scenario sections into typed structs, then the cross-field checks
 * (parallelism against GPUs, variants against the hardware they need). */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/offload.h"
#include "models/scenario_int.h"
#include "models/wire.h"
#include "sim/err.h"

const char *const scn_topology_words[] = { "single-switch", "fat-tree", "rail-optimised", NULL };
const char *const scn_routing_words[] = { "ecmp", "adaptive", "dmodk", NULL };
const char *const scn_stornet_words[] = { "shared", "dedicated", NULL };
const char *const scn_precision_words[] = { "fp32", "tf32", "fp16", "bf16", "fp8", NULL };
const char *const scn_kind_words[] = { "training", "collective", "p2p", NULL };
static const char *const attention_words[] = { "unfused", "flash", NULL };
/* pipeline_engine's words, in wl_engine order */
const char *const scn_engine_words[] = { "megatron", "deepspeed", "megatron-2021",
					    "megatron-2022", NULL };
/* grad_reduce_dtype's words and the precisions they stand for */
static const char *const grad_reduce_words[] = { "fp32", "bf16", "fp16", NULL };
static const scn_precision grad_reduce_precs[] = { SCN_FP32, SCN_BF16, SCN_FP16 };
/* In scn_p2p_test order. */
const char *const scn_p2p_test_words[] = { "write_bw", "write_lat", "send_bw", "send_lat",
					    "read_bw", "read_lat", NULL };
const char *const scn_op_words[] = { COLL_OPS(COLL_OP_SCN_WORD_) NULL };
const char *const scn_algo_words[] = { COLL_SCN_ALGOS(COLL_SCN_ALGO_WORD_) NULL };
const char *const scn_placement_words[] = { "packed", "spread", NULL };
const char *const scn_slowdown_words[] = { "none", "lognormal", "normal", NULL };
const char *const scn_ckpt_mode_words[] = { "sync", "async", NULL };
const char *const scn_coll_proto_words[] = { "nccl", "ideal", NULL };
const char *const scn_ring_steps_words[] = { "exact", "lumped", NULL };

#define INF HUGE_VAL

/* The scenario being resolved, with where each section was written, for
 * cross-field messages. */
typedef struct resolve_ctx {
	scn_rd *r;
	scn_scenario *s;
	const yt_node *root, *cluster, *fabric, *storage, *gpu, *cpu, *host, *nic, *dpu, *sw, *server;
	const yt_node *variant_nodes[SCN_MAX_VARIANTS];
	const yt_node *job_nodes[SCN_MAX_JOBS];
} resolve_ctx;

/* ---- hardware components ---- */

/* A node's place (its key's, when it has one) for messages after loading. */
static scn_where where_of(const yt_node *n)
{
	if (!n)
		return (scn_where){ 0 };
	if (n->key && n->key_line > 0)
		return (scn_where){ .file = n->file, .line = n->key_line, .col = n->key_col };
	return (scn_where){ .file = n->file, .line = n->line, .col = n->col };
}

static void no_profile(scn_rd *r, const yt_node *at, profile_kind kind, const char *name)
{
	const char *const *names;
	size_t n = 0;
	const char *best = NULL;
	if (!profile_set_names(r->ps, &names, &n))
		best = diag_suggest(name, names, n);
	if (best)
		scn_err(r, at, "unknown %s profile '%s' (no %s/%s.yaml; did you mean '%s'?)",
			profile_kind_name(kind), name, profile_set_dir(r->ps), name, best);
	else
		scn_err(r, at, "unknown %s profile '%s' (no %s/%s.yaml)", profile_kind_name(kind), name,
			profile_set_dir(r->ps), name);
}

static void apply_overrides(scn_rd *r, const yt_node *n, profile_kind kind, scn_hw *hw)
{
	for (size_t i = 0; n->type == YT_MAP && i < n->nkids; i++) {
		const yt_node *o = n->kids[i];
		const profile_field *f;
		double x;
		if (!strcmp(o->key, "profile"))
			continue;
		if (!(f = profile_field_find(kind, o->key))) {
			const char *best = profile_field_suggest(kind, o->key);
			scn_err_key(r, o, "unknown %s field '%s'%s%s%s (see docs/profiles.md)",
				    profile_kind_name(kind), o->key, best ? " (did you mean '" : "",
				    best ? best : "", best ? "'?)" : "");
			continue;
		}
		if (!profile_field_parse(f, o, &x, r->d))
			profile_field_set(&hw->v, f, x);
	}
}

/* key: PROFILE-NAME, or key: { profile: NAME, FIELD: value... }. */
static const yt_node *read_hw(scn_rd *r, const yt_node *parent, const char *key, profile_kind kind,
			      bool required, scn_hw *hw)
{
	const yt_node *n = yt_get(parent, key), *nm = n;
	const profile *p;
	for (size_t i = 0; i < profile_nfields; i++)
		profile_field_set(&hw->v, &profile_fields[i], NAN);
	if (!n) {
		if (required) {
			char what[48];
			snprintf(what, sizeof what, "a %s profile name", profile_kind_name(kind));
			scn_err_missing(r, parent, key, what);
		}
		return NULL;
	}
	if (n->type == YT_MAP && !(nm = yt_get(n, "profile"))) {
		scn_err(r, n, "'%s' needs 'profile: NAME' besides its overrides", key);
		return NULL;
	}
	if (nm->type == YT_SCALAR && strlen(nm->text) >= sizeof hw->name) {
		scn_err(r, nm, "'%s' must be a %s profile name of at most %zu characters, not %zu",
			key, profile_kind_name(kind), sizeof hw->name - 1, strlen(nm->text));
		return NULL;
	}
	if (nm->type != YT_SCALAR || !nm->text[0]) {
		scn_err(r, nm, "'%s' must be a %s profile name, or a mapping with 'profile:' and overrides",
			key, profile_kind_name(kind));
		return NULL;
	}
	int rc = profile_set_find(r->ps, nm->text, &p, r->d);
	if (rc == SIM_ENOENT)
		no_profile(r, nm, kind, nm->text);
	if (rc)
		return r->errs++, NULL;
	if (profile_get_kind(p) != kind) {
		scn_err(r, nm, "'%s' is a %s profile, but '%s' needs a %s profile", nm->text,
			profile_kind_name(profile_get_kind(p)), key, profile_kind_name(kind));
		return NULL;
	}
	snprintf(hw->name, sizeof hw->name, "%s", nm->text);
	hw->at = where_of(n);
	hw->prof = p;
	hw->v = *profile_get_values(p);
	apply_overrides(r, n, kind, hw);
	return n;
}

/* A value the models need from a component: absent is an error that says
 * why it is needed and why the profile lacks it. */
static bool need(resolve_ctx *c, const scn_hw *hw, const yt_node *hw_node, const yt_node *at,
		 const char *field, const char *why)
{
	const profile_field *f;
	const char *reason;
	if (!hw->prof)
		return false;
	f = profile_field_find(profile_get_kind(hw->prof), field);
	SIM_ASSERT(f, "no field %s", field);
	if (profile_has(profile_field_get(&hw->v, f)))
		return true;
	reason = profile_missing(hw->prof, f);
	scn_err(c->r, at ? at : hw_node,
		"%s needs '%s' of %s profile '%s', which does not give it%s%s%s; set it under '%s'", why,
		field, profile_kind_name(profile_get_kind(hw->prof)), hw->name,
		reason ? " (missing: " : "", reason ? reason : "", reason ? ")" : "",
		hw_node && hw_node->key ? hw_node->key : "the component");
	return false;
}

/* Either of two fields will do (a cycles form or a clock-free form). */
static void need_either(resolve_ctx *c, const scn_hw *hw, const yt_node *hw_node, const yt_node *at,
			const char *a, const char *b, const char *why)
{
	const profile_field *fb;
	if (!hw->prof)
		return;
	fb = profile_field_find(profile_get_kind(hw->prof), b);
	if (fb && profile_has(profile_field_get(&hw->v, fb)))
		return;
	need(c, hw, hw_node, at, a, why);
}

/* ---- cluster ---- */

static const char *const fabric_keys[] = { "topology", "switch", "tiers", "oversubscription",
					   "link_rate", "hop_latency", "routing", "mtu", NULL };

/* Endpoints a fabric of this switch radix can attach (leaf down ports
 * k*r/(1+r) for oversubscription r; k leaves under k-port spines; a third
 * tier multiplies by k/2 pods). */
static double fabric_capacity(const scn_fabric *f)
{
	double k = profile_has(f->sw.v.sw.radix) ? f->sw.v.sw.radix : 0;
	double down = floor(k * f->oversubscription / (1 + f->oversubscription));
	if (f->topology == SCN_TOPO_SINGLE_SWITCH)
		return k;
	return f->tiers == 2 ? k * down : k * down * floor(k / 2);
}

static void read_fabric(resolve_ctx *c, const yt_node *fab, scn_cluster *cl)
{
	scn_rd *r = c->r;
	scn_fabric *f = &cl->fabric;
	int v;
	scn_only_keys(r, fab, fabric_keys, "cluster.fabric");
	f->topology = SCN_TOPO_FAT_TREE;
	if (scn_get_enum(r, fab, "topology", true, scn_topology_words, &v))
		f->topology = (scn_topology)v;
	c->sw = read_hw(r, fab, "switch", PROFILE_SWITCH, true, &f->sw);
	f->tiers = f->topology == SCN_TOPO_SINGLE_SWITCH ? 1 : 2;
	if (scn_get_int(r, fab, "tiers", false, 1, 3, &f->tiers)) {
		bool ok = f->topology == SCN_TOPO_SINGLE_SWITCH ? f->tiers == 1 : f->tiers >= 2;
		if (!ok)
			scn_err(r, yt_get(fab, "tiers"), "a %s fabric has %s tiers, not %d",
				scn_topology_words[f->topology],
				f->topology == SCN_TOPO_SINGLE_SWITCH ? "1" : "2 or 3", f->tiers);
	}
	f->oversubscription = 1;
	scn_get_q(r, fab, "oversubscription", false, UNIT_NUMBER, 1, 64, false, &f->oversubscription);
	f->routing = SCN_ROUTE_ECMP;
	f->routing_given = scn_get_enum(r, fab, "routing", false, scn_routing_words, &v);
	if (f->routing_given)
		f->routing = (scn_routing)v;
	f->hop_latency_s = 0;
	scn_get_q(r, fab, "hop_latency", false, UNIT_SECONDS, 0, 1e-3, false, &f->hop_latency_s);
	f->link_rate_Bps = NAN;
	scn_get_q(r, fab, "link_rate", false, UNIT_BYTES_PER_S, 0, 1e13, true, &f->link_rate_Bps);
	f->mtu_bytes = NAN;
	if (scn_get_q(r, fab, "mtu", false, UNIT_BYTES, 256, 9216, false, &f->mtu_bytes) &&
	    f->mtu_bytes != floor(f->mtu_bytes)) {
		scn_err(r, yt_get(fab, "mtu"), "'mtu' must be whole bytes (got '%s')",
			yt_get(fab, "mtu")->text);
		f->mtu_bytes = NAN;
	}
}

/* The fabric's link layer (the switch's, else a NIC's that is not vpi)
 * and, unless the scenario chose, its routing: an InfiniBand subnet
 * manager routes a fat tree by destination (D-mod-K: OpenSM's ftree
 * engine), Ethernet/RoCE switches hash each flow (ECMP). */
static void default_routing(scn_fabric *f, const scn_hw *nic)
{
	double sw = f->sw.prof ? f->sw.v.sw.link_layer : NAN;
	double nl = nic->prof ? nic->v.nic.link_layer : NAN;
	f->link_layer = -1;
	f->ll_from = SCN_LL_UNKNOWN;
	if (profile_has(sw) && sw != PROFILE_LL_VPI)
		f->link_layer = (int)sw, f->ll_from = SCN_LL_SWITCH;
	else if (profile_has(nl) && nl != PROFILE_LL_VPI)
		f->link_layer = (int)nl, f->ll_from = SCN_LL_NIC;
	if (!f->routing_given)
		f->routing = f->link_layer == PROFILE_LL_INFINIBAND ? SCN_ROUTE_DMODK : SCN_ROUTE_ECMP;
}

/* A switch profile of link layer ll in the profile directory, for the
 * message below; NULL when there is none. Profiles that fail to load are
 * passed over (a scratch diag): this only names an example. */
static const char *switch_of_layer(scn_rd *r, int ll)
{
	const char *const *names;
	size_t n = 0;
	diag *scratch = diag_new();
	const char *found = NULL;
	if (!scratch || profile_set_names(r->ps, &names, &n))
		n = 0;
	for (size_t i = 0; i < n && !found; i++) {
		const profile *p;
		if (!profile_set_find(r->ps, names[i], &p, scratch) &&
		    profile_get_kind(p) == PROFILE_SWITCH &&
		    profile_get_values(p)->sw.link_layer == ll)
			found = names[i];
	}
	diag_free(scratch);
	return found;
}

/* What set a component's link layer: its link_layer override, else its
 * profile: name (for a mapping that extends: merged, the key itself may
 * lie in the base while these come from the file loaded). */
static const yt_node *ll_source(const yt_node *n)
{
	const yt_node *k;
	if (n->type != YT_MAP)
		return n;
	if ((k = yt_get(n, "link_layer")) || (k = yt_get(n, "profile")))
		return k;
	return n;
}

/* Of what set the adapter's and the switch's layers, the one to point at:
 * the one in the file being loaded (an extends: base is not where the
 * clash was made), else the later (a variant's override comes after the
 * cluster). */
static const yt_node *clash_at(const resolve_ctx *c, const yt_node *ad, const yt_node *sw)
{
	const char *file = c->s->file;
	bool ad_here, sw_here;
	ad = ll_source(ad), sw = ll_source(sw);
	ad_here = file && ad->file && !strcmp(ad->file, file);
	sw_here = file && sw->file && !strcmp(sw->file, file);
	if (ad_here != sw_here)
		return ad_here ? ad : sw;
	int al = ad->key_line > 0 ? ad->key_line : ad->line;
	int sl = sw->key_line > 0 ? sw->key_line : sw->line;
	return al >= sl ? ad : sw;
}

/* An adapter's ports speak the switch's link layer: an Ethernet-only card
 * (BlueField-2 E-Series) cannot join an InfiniBand fabric, nor an
 * InfiniBand-only one an Ethernet fabric; a vpi card runs either. */
static void check_link_layer(resolve_ctx *c, const scn_hw *ad, const yt_node *ad_node,
			     const char *what)
{
	const scn_hw *sw = &c->s->cluster.fabric.sw;
	double al = ad->prof ? ad->v.nic.link_layer : NAN; /* a DPU's v.dpu.nic, the same bytes */
	double sl = sw->prof ? sw->v.sw.link_layer : NAN;
	const char *alt;
	if (!ad_node || !c->sw || !profile_has(al) || !profile_has(sl) || al == PROFILE_LL_VPI ||
	    sl == PROFILE_LL_VPI || al == sl)
		return;
	alt = switch_of_layer(c->r, (int)al);
	scn_err_key(c->r, clash_at(c, ad_node, c->sw),
		    "%s '%s' is %s; switch '%s' is an %s switch: its ports cannot join that fabric; "
		    "choose an %s switch%s%s or a vpi adapter", what, ad->name,
		    profile_link_layer_words[(int)al], sw->name, profile_link_layer_words[(int)sl],
		    al == PROFILE_LL_ETHERNET ? "Ethernet" : "InfiniBand", alt ? " such as " : "",
		    alt ? alt : "");
}

/* The link layer decides every packet's headers (models/wire.h): a
 * fabric whose switch and NIC are both vpi must say which it runs. And an
 * mtu must be one of that link layer's. */
static void check_wire(resolve_ctx *c, scn_fabric *f, const scn_hw *nic)
{
	const yt_node *m = yt_get(c->fabric, "mtu");
	bool ib = f->link_layer == PROFILE_LL_INFINIBAND;
	if (f->link_layer < 0) {
		scn_err_key(c->r, ll_source(c->sw), "the fabric's link layer is not known (switch "
			    "'%s' and NIC '%s' give none but vpi): the packets' headers depend on "
			    "it; set the switch's link_layer to infiniband or ethernet", f->sw.name,
			    nic->name);
		return;
	}
	if (isnan(f->mtu_bytes) || wire_mtu_ok(ib, (uint32_t)f->mtu_bytes))
		return;
	scn_err(c->r, m, "mtu '%s' is not an %s on the %s fabric of switch '%s'",
		m ? m->text : "?", wire_mtu_words(ib), ib ? "infiniband" : "ethernet", f->sw.name);
}

/* Link rate default and limits, switch capacity: needs the NIC and switch. */
static void check_fabric(resolve_ctx *c, scn_cluster *cl)
{
	scn_fabric *f = &cl->fabric;
	double nic = cl->nic.v.nic.port_rate_Bps, sw = f->sw.v.sw.port_rate_Bps;
	double endpoints = (double)cl->nodes * cl->nics_per_node;
	char a[48];
	default_routing(f, &cl->nic);
	check_link_layer(c, &cl->nic, c->nic, "NIC");
	if (cl->has_dpu)
		check_link_layer(c, &cl->dpu, c->dpu, "DPU");
	if (f->sw.prof)
		check_wire(c, f, &cl->nic);
	if (f->sw.prof)
		need(c, &f->sw, c->sw, NULL, "latency", "the fabric");
	if (!cl->nic.prof || !f->sw.prof || !need(c, &f->sw, c->sw, NULL, "port_rate", "the fabric") ||
	    !need(c, &cl->nic, c->nic, NULL, "port_rate", "the fabric") ||
	    !need(c, &f->sw, c->sw, NULL, "radix", "the fabric"))
		return;
	f->rails = f->topology == SCN_TOPO_RAIL_OPTIMISED ? cl->nics_per_node : 0;
	if (isnan(f->link_rate_Bps))
		f->link_rate_Bps = nic < sw ? nic : sw;
	if (f->link_rate_Bps > sw || f->link_rate_Bps > nic) {
		bool sw_slow = sw < nic;
		scn_err(c->r, yt_get(c->fabric, "link_rate"),
			"link_rate %gGb/s is faster than the %gGb/s ports of %s '%s'", f->link_rate_Bps * 8e-9,
			(sw_slow ? sw : nic) * 8e-9, sw_slow ? "switch" : "NIC", sw_slow ? f->sw.name : cl->nic.name);
	}
	if (endpoints > fabric_capacity(f)) {
		unit_format(fabric_capacity(f), UNIT_COUNT, a, sizeof a);
		scn_err(c->r, c->fabric,
			"the fabric cannot attach %.0f ports: a %d-tier %s of %s (radix %.0f, "
			"oversubscription %g) takes at most %s", endpoints, f->tiers,
			scn_topology_words[f->topology], f->sw.name, f->sw.v.sw.radix,
			f->oversubscription, a);
	}
}

static const char *const storage_keys[] = { "server", "servers", "network", "link_rate", "dataset", NULL };

static void read_storage(resolve_ctx *c, const yt_node *st, scn_storage *s)
{
	scn_rd *r = c->r;
	int v;
	scn_only_keys(r, st, storage_keys, "cluster.storage");
	s->present = true;
	c->server = read_hw(r, st, "server", PROFILE_STORAGE, true, &s->server);
	s->servers = 1;
	scn_get_int(r, st, "servers", false, 1, 100000, &s->servers);
	s->network = SCN_STORNET_SHARED;
	if (scn_get_enum(r, st, "network", false, scn_stornet_words, &v))
		s->network = (scn_stornet)v;
	s->link_rate_Bps = NAN;
	scn_get_q(r, st, "link_rate", false, UNIT_BYTES_PER_S, 0, 1e13, true, &s->link_rate_Bps);
	s->dataset_bytes = 0;
	scn_get_q(r, st, "dataset", false, UNIT_BYTES, 0, 1e18, true, &s->dataset_bytes);
	if (c->server)
		need(c, &s->server, c->server, NULL, "bw", "storage");
}

static const char *const local_keys[] = { "drive", "drives", "pcie_switch", NULL };

static void read_local_nvme(resolve_ctx *c, const yt_node *ln, scn_cluster *cl)
{
	scn_rd *r = c->r;
	scn_local_nvme *l = &cl->local_nvme;
	const yt_node *drive;
	scn_only_keys(r, ln, local_keys, "cluster.local_nvme");
	l->present = true;
	drive = read_hw(r, ln, "drive", PROFILE_STORAGE, true, &l->drive);
	l->drives = 1;
	scn_get_int(r, ln, "drives", false, 1, 64, &l->drives);
	l->pcie_switch = 0;
	if (scn_get_int(r, ln, "pcie_switch", false, 0, 63, &l->pcie_switch) &&
	    l->pcie_switch >= cl->nics_per_node)
		scn_err(r, yt_get(ln, "pcie_switch"), "'pcie_switch' %d: the switches are those of the "
			"%d NICs (0..%d)", l->pcie_switch, cl->nics_per_node, cl->nics_per_node - 1);
	if (drive) {
		need(c, &l->drive, drive, NULL, "bw", "cluster.local_nvme");
		need(c, &l->drive, drive, NULL, "pcie_gen", "cluster.local_nvme");
		need(c, &l->drive, drive, NULL, "pcie_lanes", "cluster.local_nvme");
	}
}

static const char *const cluster_keys[] = { "nodes", "gpus_per_node", "gpu", "cpu", "host_costs",
					    "nic", "nics_per_node", "dpu", "dpus_per_node",
					    "dpus_replace_nics", "fabric",
					    "storage", "local_nvme", NULL };

/* dpus_replace_nics: each rail's adapter is a DPU (a BlueField-3 SuperNIC or
 * DPU on each GPU's rail, in place of a ConnectX-7: NVIDIA's HGX AI Factory
 * reference architecture connects the GPUs "through their respective
 * SuperNICs", BlueField-3 among them), so one DPU per NIC rail. */
static void read_dpu_rails(scn_rd *r, const yt_node *cn, scn_cluster *cl)
{
	const yt_node *k = yt_get(cn, "dpus_replace_nics");
	if (!scn_get_bool(r, cn, "dpus_replace_nics", &cl->dpus_replace_nics) ||
	    !cl->dpus_replace_nics)
		return;
	if (!cl->has_dpu)
		scn_err(r, k, "'dpus_replace_nics' needs a 'dpu' to take the NICs' place "
			"(give cluster.dpu, or drop the key)");
	else if (cl->dpus_per_node != cl->nics_per_node)
		scn_err(r, k, "'dpus_replace_nics' needs one DPU per NIC rail: dpus_per_node is %d, "
			"nics_per_node %d", cl->dpus_per_node, cl->nics_per_node);
}

/* The GPUs of a cluster are simulated rank by rank where symmetry does not
 * fold them (a collective's ring holds every rank: 65,536 take 200 MB and
 * seconds), so their count is bounded: 2^20 is five times the largest
 * cluster announced by 2025 (xAI's Colossus, 200,000 GPUs). */
#define SCN_MAX_GPUS (1L << 20)

static void check_gpus(scn_rd *r, const yt_node *cn, const scn_cluster *cl)
{
	long gpus = (long)cl->nodes * cl->gpus_per_node;
	if (gpus > SCN_MAX_GPUS)
		scn_err(r, yt_get(cn, "nodes"), "nodes x gpus_per_node = %d x %d = %ld GPUs, more "
			"than %ld: five times the largest cluster announced by 2025 (xAI's Colossus, "
			"200,000 GPUs)", cl->nodes, cl->gpus_per_node, gpus, SCN_MAX_GPUS);
}

static void read_cluster(resolve_ctx *c, const yt_node *cn, scn_cluster *cl)
{
	scn_rd *r = c->r;
	const yt_node *fab, *st;
	scn_only_keys(r, cn, cluster_keys, "cluster");
	cl->nodes = cl->gpus_per_node = 1;
	bool have_nodes = scn_get_int(r, cn, "nodes", true, 1, 1000000, &cl->nodes);
	if (scn_get_int(r, cn, "gpus_per_node", true, 1, 64, &cl->gpus_per_node) && have_nodes)
		check_gpus(r, cn, cl);
	c->gpu = read_hw(r, cn, "gpu", PROFILE_GPU, true, &cl->gpu);
	c->cpu = read_hw(r, cn, "cpu", PROFILE_CPU, true, &cl->cpu);
	c->host = read_hw(r, cn, "host_costs", PROFILE_HOST_COSTS, false, &cl->host_costs);
	c->nic = read_hw(r, cn, "nic", PROFILE_NIC, true, &cl->nic);
	cl->nics_per_node = 1;
	scn_get_int(r, cn, "nics_per_node", false, 1, 64, &cl->nics_per_node);
	c->dpu = read_hw(r, cn, "dpu", PROFILE_DPU, false, &cl->dpu);
	cl->has_dpu = cl->dpu.prof != NULL;
	cl->dpus_per_node = cl->has_dpu ? 1 : 0;
	if (scn_get_int(r, cn, "dpus_per_node", false, 1, 16, &cl->dpus_per_node) && !yt_get(cn, "dpu"))
		scn_err(r, yt_get(cn, "dpus_per_node"), "'dpus_per_node' is given but the cluster has no 'dpu'");
	read_dpu_rails(r, cn, cl);
	if (c->cpu) {
		need(c, &cl->cpu, c->cpu, NULL, "sockets", "the host CPU model");
		need(c, &cl->cpu, c->cpu, NULL, "cores_per_socket", "the host CPU model");
		need(c, &cl->cpu, c->cpu, NULL, "freq", "the host CPU model");
	}
	if (c->gpu)
		need(c, &cl->gpu, c->gpu, NULL, "hbm_bytes", "the GPU model");
	if (c->nic)
		need(c, &cl->nic, c->nic, NULL, "rdma_latency", "every transport");
	if ((fab = c->fabric = scn_section(r, cn, "fabric", true)))
		read_fabric(c, fab, cl);
	if (fab)
		check_fabric(c, cl);
	if ((st = c->storage = scn_section(r, cn, "storage", false)))
		read_storage(c, st, &cl->storage);
	if ((st = scn_section(r, cn, "local_nvme", false)))
		read_local_nvme(c, st, cl);
}

/* ---- workloads ---- */

static const char *const tf_keys[] = { "layers", "hidden", "heads", "kv_heads", "ffn", "ffn_mats",
				       "seq", "vocab", "block", NULL };
/* wl_block's words, in its order */
static const char *const block_words[] = { "gpt", "llama", NULL };

static void read_shape(resolve_ctx *c, const yt_node *tn, wl_transformer *t)
{
	static const struct { const char *key; long lo, hi; size_t off; } f[] = {
		{ "layers", 1, 1000, offsetof(wl_transformer, layers) },
		{ "hidden", 1, 1 << 20, offsetof(wl_transformer, hidden) },
		{ "heads", 1, 4096, offsetof(wl_transformer, heads) },
		{ "kv_heads", 1, 4096, offsetof(wl_transformer, kv_heads) },
		{ "ffn", 1, 1 << 22, offsetof(wl_transformer, ffn) },
		{ "ffn_mats", 2, 3, offsetof(wl_transformer, ffn_mats) },
		{ "seq", 1, 1 << 22, offsetof(wl_transformer, seq) },
		{ "vocab", 1, 1 << 24, offsetof(wl_transformer, vocab) },
	};
	int b;
	scn_only_keys(c->r, tn, tf_keys, "transformer");
	if (scn_get_enum(c->r, tn, "block", false, block_words, &b))
		t->block = (wl_block)b;
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		int v;
		if (scn_get_int(c->r, tn, f[i].key, false, f[i].lo, f[i].hi, &v)) {
			uint32_t u = (uint32_t)v;
			memcpy((char *)t + f[i].off, &u, sizeof u);
		}
	}
}

static void read_model(resolve_ctx *c, const yt_node *w, scn_training *t)
{
	scn_rd *r = c->r;
	const yt_node *tn = yt_get(w, "transformer"), *mn = yt_get(w, "model");
	const wl_preset *p = NULL;
	char why[200];
	if (!scn_get_str(r, w, "model", true, t->model, sizeof t->model))
		return;
	if (strcmp(t->model, "custom") && !(p = wl_preset_find(t->model))) {
		const char *names[64];
		size_t n = wl_preset_count() < 64 ? wl_preset_count() : 64;
		for (size_t i = 0; i < n; i++)
			names[i] = wl_preset_at(i)->name;
		const char *best = diag_suggest(t->model, names, n);
		scn_err(r, mn, "unknown model '%s' (a preset, or 'custom' with transformer:)%s%s%s",
			t->model, best ? "; did you mean '" : "", best ? best : "", best ? "'?" : "");
		t->model[0] = '\0'; /* no shape: the shape checks are skipped */
		return;
	}
	t->shape = p ? p->model : (wl_model){ .kind = WL_TRANSFORMER };
	if (tn && tn->type != YT_MAP)
		return scn_err(r, tn, "'transformer' must be a mapping, not %s", yt_type_name(tn->type));
	if (!p && !tn)
		return scn_err(r, mn, "model 'custom' needs a 'transformer:' shape");
	if (tn && t->shape.kind == WL_VISION)
		return scn_err(r, tn, "'transformer' does not apply to vision model '%s'", t->model);
	if (t->shape.kind != WL_TRANSFORMER)
		return;
	if (tn)
		read_shape(c, tn, &t->shape.tf);
	if (wl_transformer_check(&t->shape.tf, why, sizeof why))
		scn_err(r, tn ? tn : mn, "impossible transformer shape: %s", why);
}

static const char *const data_keys[] = { "sample_bytes", "decode", "workers", "prefetch",
					 "page_cache_hit", NULL };

static void read_data(resolve_ctx *c, const yt_node *dn, scn_training *t)
{
	scn_rd *r = c->r;
	scn_data *d = &t->data;
	bool vision = t->shape.kind == WL_VISION;
	scn_only_keys(r, dn, data_keys, "workload.data");
	d->present = true;
	d->sample_bytes = vision ? t->shape.vis.sample_bytes : 0;
	scn_get_q(r, dn, "sample_bytes", !vision, UNIT_BYTES, 0, 1e12, true, &d->sample_bytes);
	scn_get_q(r, dn, "decode", true, UNIT_S_PER_SAMPLE, 0, 3600, false, &d->decode_s_per_sample);
	scn_get_int(r, dn, "workers", true, 1, 4096, &d->workers);
	d->prefetch = 2; /* PyTorch DataLoader's default prefetch_factor */
	scn_get_int(r, dn, "prefetch", false, 1, 1024, &d->prefetch);
	scn_get_q(r, dn, "page_cache_hit", false, UNIT_FRACTION, 0, 1, false, &d->page_cache_hit);
}

/* cp_comm_type's words, Megatron-core's --cp-comm-type names: all_gather
 * (this model's default: K and V all-gathered before attention, their
 * gradients reduce-scattered after) or p2p (Transformer Engine's ring). */
static const char *const cp_comm_words[] = { "all_gather", "p2p", NULL };

static void read_parallelism(resolve_ctx *c, const yt_node *pn, scn_training *t)
{
	static const char *const keys[] = { "tp", "pp", "dp", "zero_stage", "virtual_stages",
					    "sequence_parallel", "cp", "cp_comm_type", NULL };
	const yt_node *dp = yt_get(pn, "dp");
	int v;
	scn_only_keys(c->r, pn, keys, "workload.parallelism");
	scn_get_int(c->r, pn, "tp", false, 1, 1 << 20, &t->tp);
	scn_get_int(c->r, pn, "pp", false, 1, 1 << 20, &t->pp);
	scn_get_int(c->r, pn, "virtual_stages", false, 1, 1 << 10, &t->vp);
	scn_get_bool(c->r, pn, "sequence_parallel", &t->sp);
	scn_get_int(c->r, pn, "cp", false, 1, 1 << 20, &t->cp);
	if (scn_get_enum(c->r, pn, "cp_comm_type", false, cp_comm_words, &v))
		t->cp_p2p = v == 1;
	scn_get_int(c->r, pn, "zero_stage", false, 0, 3, &t->zero_stage);
	if (dp && dp->type == YT_SCALAR && !strcmp(dp->text, "auto"))
		return;
	if (dp && dp->type == YT_SCALAR && !isdigit((unsigned char)dp->text[0]) && dp->text[0] != '-')
		return scn_err(c->r, dp, "'dp' must be a whole number or 'auto' (got '%s')", dp->text);
	scn_get_int(c->r, pn, "dp", false, 1, 1 << 20, &t->dp);
}

static const char *const train_keys[] = { "kind", "model", "transformer", "precision", "parallelism",
					  "batch", "bucket", "recompute", "data", "iterations",
					  "target_tokens", "memory_reserve", "attention",
					  "grad_reduce_dtype", "pipeline_engine", "tp_comm_overlap",
					  "tp_overlap_sms", "tp_overlap_fp8_buf", "tp_backward_overlap",
					  "grad_accum_fusion", NULL };

/* tp_comm_overlap and the SMs its pipeline reduce-scatters take
 * (tp_overlap_sms: { proj, fc2 }, Transformer Engine's default 16 each:
 * initialize_ub's get_default_config); refused without sequence
 * parallelism where tp is above 1, as Megatron-core does
 * (wl_tp_overlap_fault). */
static void read_tp_overlap(scn_rd *r, const yt_node *w, scn_training *t)
{
	const yt_node *sn;
	t->tp_overlap = false;
	t->ub_proj_sms = t->ub_fc2_sms = 16;
	scn_get_bool(r, w, "tp_comm_overlap", &t->tp_overlap);
	if ((sn = scn_section(r, w, "tp_overlap_sms", false))) {
		static const char *const keys[] = { "proj", "fc2", NULL };
		scn_only_keys(r, sn, keys, "workload.tp_overlap_sms");
		scn_get_int(r, sn, "proj", false, 0, 1024, &t->ub_proj_sms);
		scn_get_int(r, sn, "fc2", false, 0, 1024, &t->ub_fc2_sms);
		if (!t->tp_overlap)
			scn_err(r, sn, "'tp_overlap_sms' applies only with 'tp_comm_overlap: true'");
	}
	/* TE's fp8_buf on the pipeline method (initialize_ub: a uint8 userbuffer
	 * for proj_fprop and fc2_fprop; the GEMM writes FP8 into it), which
	 * exists only where the GEMMs run FP8 */
	t->ub_fp8_rs = false;
	if (scn_get_bool(r, w, "tp_overlap_fp8_buf", &t->ub_fp8_rs) && t->ub_fp8_rs) {
		if (!t->tp_overlap)
			scn_err(r, yt_get(w, "tp_overlap_fp8_buf"),
				"'tp_overlap_fp8_buf' applies only with 'tp_comm_overlap: true'");
		else if (t->precision != SCN_FP8)
			scn_err(r, yt_get(w, "tp_overlap_fp8_buf"),
				"'tp_overlap_fp8_buf' applies only with 'precision: fp8' (Transformer "
				"Engine makes FP8 userbuffers only for FP8 GEMMs)");
	}
	if (wl_tp_overlap_fault(t->tp_overlap, (uint32_t)t->tp, t->sp))
		scn_err(r, yt_get(w, "tp_comm_overlap"), "'tp_comm_overlap' needs "
			"parallelism.sequence_parallel: true where tp is above 1 (Megatron-core "
			"overlaps only the sequence-parallel all-gathers and reduce-scatters)");
}

/* grad_accum_fusion: the engine's own by default (wl_engine_wgrad_fusion,
 * whose fp32 accumulation is grad_reduce_dtype fp32: the buffer the hook
 * adds into is the one reduced); refused on where the engine could not. */
static void read_wgrad_fusion(scn_rd *r, const yt_node *w, scn_training *t)
{
	bool fp32 = t->grad_reduce == SCN_FP32;
	t->wgrad_fused = wl_engine_wgrad_fusion(t->engine, fp32);
	if (!scn_get_bool(r, w, "grad_accum_fusion", &t->wgrad_fused) || !t->wgrad_fused ||
	    wl_engine_wgrad_fusion(t->engine, fp32))
		return;
	if (t->engine == WL_ENGINE_MEGATRON_2022)
		scn_err(r, yt_get(w, "grad_accum_fusion"), "'grad_accum_fusion' needs "
			"grad_reduce_dtype: fp32 on pipeline_engine megatron-2022 (Megatron-LM of "
			"May 2022 fuses only fp32 accumulation)");
	else
		scn_err(r, yt_get(w, "grad_accum_fusion"), "'grad_accum_fusion' does not apply "
			"to pipeline_engine %s: its hook accumulates every weight's gradient "
			"(Megatron-LM's fusion came in February 2022)", scn_engine_words[t->engine]);
}

static void read_training(resolve_ctx *c, const yt_node *w, scn_training *t)
{
	scn_rd *r = c->r;
	const yt_node *pn, *bn, *dn;
	int v;
	scn_only_keys(r, w, train_keys, "a training workload");
	read_model(c, w, t);
	t->precision = SCN_BF16;
	if (scn_get_enum(r, w, "precision", false, scn_precision_words, &v))
		t->precision = (scn_precision)v;
	t->grad_reduce = scn_grad_reduce_of(t->precision);
	if (scn_get_enum(r, w, "grad_reduce_dtype", false, grad_reduce_words, &v))
		t->grad_reduce = grad_reduce_precs[v];
	t->tp = t->pp = t->vp = t->cp = 1;
	t->sp = t->cp_p2p = false;
	t->dp = 0; /* auto */
	if ((pn = scn_section(r, w, "parallelism", false)))
		read_parallelism(c, pn, t);
	t->micro_batch = 1;
	if ((bn = scn_section(r, w, "batch", true))) {
		static const char *const keys[] = { "global", "micro", NULL };
		scn_only_keys(r, bn, keys, "workload.batch");
		scn_get_int(r, bn, "global", true, 1, 100000000, &t->global_batch);
		scn_get_int(r, bn, "micro", false, 1, 1000000, &t->micro_batch);
	}
	t->bucket_bytes = 25.0 * 1048576; /* PyTorch DDP's default bucket_cap_mb = 25 */
	scn_get_q(r, w, "bucket", false, UNIT_BYTES, 0, 1e12, true, &t->bucket_bytes);
	t->recompute = false;
	scn_get_bool(r, w, "recompute", &t->recompute);
	read_tp_overlap(r, w, t);
	t->engine = WL_ENGINE_MEGATRON;
	if (scn_get_enum(r, w, "pipeline_engine", false, scn_engine_words, &v))
		t->engine = (wl_engine)v;
	t->flash = t->engine == WL_ENGINE_MEGATRON;
	if (scn_get_enum(r, w, "attention", false, attention_words, &v))
		t->flash = v == 1;
	if (wl_engine_reduces_after_backward(t->engine) && yt_get(w, "bucket"))
		scn_err(r, yt_get(w, "bucket"), "'bucket' does not apply to pipeline_engine %s: "
			"its DistributedDataParallel all-reduces each model chunk's whole gradient "
			"buffer once, after the backward (megatron/training.py train_step)",
			scn_engine_words[t->engine]);
	/* the engine's own by default; an engine whose layers never had it
	 * refuses it */
	t->tp_bwd_overlap = wl_engine_tp_bwd_overlap(t->engine);
	if (scn_get_bool(r, w, "tp_backward_overlap", &t->tp_bwd_overlap) && t->tp_bwd_overlap &&
	    !wl_engine_tp_bwd_overlap(t->engine))
		scn_err(r, yt_get(w, "tp_backward_overlap"), "'tp_backward_overlap' does not apply "
			"to pipeline_engine %s: its linear layers run the backward's tensor-parallel "
			"collectives synchronously (Megatron-LM's asynchronous ones came in August "
			"2021)", scn_engine_words[t->engine]);
	read_wgrad_fusion(r, w, t);
	t->memory_reserve_bytes = 0;
	scn_get_q(r, w, "memory_reserve", false, UNIT_BYTES, 0, 1e13, true, &t->memory_reserve_bytes);
	if ((dn = scn_section(r, w, "data", false)))
		read_data(c, dn, t);
	t->iterations = 10;
	scn_get_int(r, w, "iterations", false, 1, 1000000, &t->iterations);
	t->target_tokens = 0;
	if (scn_get_q(r, w, "target_tokens", false, UNIT_COUNT, 1, 1e18, false, &t->target_tokens) &&
	    t->shape.kind == WL_VISION)
		scn_err(r, yt_get(w, "target_tokens"), "'target_tokens' does not apply to vision model '%s'",
			t->model);
}

/* sizes: [1KiB, 1MiB] or { from: 1KiB, to: 1GiB, factor: 2 }, into
 * sizes_bytes (SCN_MAX_SIZES long) and *nsizes; `what` names the section
 * ("collective", "p2p"). */
static void read_sizes(resolve_ctx *c, const yt_node *sn, double *sizes_bytes, size_t *nsizes,
		       const char *what)
{
	scn_rd *r = c->r;
	double from = 0, to = 0, factor = 2;
	*nsizes = 0;
	if (sn->type == YT_SEQ) {
		if (!sn->nkids || sn->nkids > SCN_MAX_SIZES)
			return scn_err(r, sn, "'sizes' must list 1 to %d sizes", SCN_MAX_SIZES);
		for (size_t i = 0; i < sn->nkids; i++) {
			yt_node wrap = { .type = YT_MAP, .file = sn->file, .line = sn->line, .col = sn->col };
			yt_node item = *sn->kids[i];
			yt_node *kids[1] = { &item };
			item.key = (char *)"sizes";
			wrap.kids = kids;
			wrap.nkids = 1;
			double *b = &sizes_bytes[(*nsizes)++];
			/* a fraction was cut to whole bytes by the runs without a word */
			if (scn_get_q(r, &wrap, "sizes", true, UNIT_BYTES, 0, COLL_MAX_BYTES, true, b) &&
			    *b != floor(*b))
				scn_err(r, sn->kids[i], "'sizes' must be whole bytes (got '%s')",
					sn->kids[i]->text);
		}
		return;
	}
	if (sn->type != YT_MAP)
		return scn_err(r, sn, "'sizes' must be a list of sizes or { from, to, factor }");
	static const char *const keys[] = { "from", "to", "factor", NULL };
	char sect[32];
	snprintf(sect, sizeof sect, "%s.sizes", what);
	scn_only_keys(r, sn, keys, sect);
	bool have_from = scn_get_q(r, sn, "from", true, UNIT_BYTES, 0, COLL_MAX_BYTES, true, &from);
	bool have_to = scn_get_q(r, sn, "to", true, UNIT_BYTES, 0, COLL_MAX_BYTES, true,
				 &to); /* both reported */
	if (!have_from || !have_to)
		return;
	scn_get_q(r, sn, "factor", false, UNIT_NUMBER, 1.01, 1024, false, &factor);
	if (to < from)
		return scn_err(r, sn, "'to' is smaller than 'from'");
	for (double x = from; x <= to * (1 + 1e-12); x *= factor) {
		if (*nsizes == SCN_MAX_SIZES)
			return scn_err(r, sn, "the size sweep has more than %d sizes", SCN_MAX_SIZES);
		sizes_bytes[(*nsizes)++] = round(x);
	}
}

/* Which algorithms an operation runs (models/coll.c, applies): all-reduce
 * every one; reduce-scatter, all-gather and broadcast a ring; all-to-all
 * and send/recv point to point, which only auto names. What the fabric
 * allows besides (in-network, hierarchical) the dry setup pass checks. */
static bool algo_fits_op(scn_coll_op op, scn_coll_algo a)
{
	switch (op) {
	case SCN_OP_ALLREDUCE:
		return true;
	case SCN_OP_REDUCE_SCATTER:
	case SCN_OP_ALLGATHER:
	case SCN_OP_BROADCAST:
		return a == SCN_ALGO_AUTO || a == SCN_ALGO_RING;
	case SCN_OP_ALLTOALL:
	case SCN_OP_SENDRECV:
		break;
	}
	return a == SCN_ALGO_AUTO;
}

static const char *const coll_keys[] = { "kind", "collective", NULL };
static const char *const coll_inner_keys[] = { "op", "algo", "sizes", "ranks", "iterations", NULL };

/* nccl-tests' default run is 20 timed iterations a size (src/common.cu,
 * iters = 20; -n sets it). Each is simulated: 100,000, 5,000 times that,
 * is more than any measurement needs and already minutes a size. */
#define SCN_COLL_MAX_ITERATIONS 100000

static void read_coll_iterations(scn_rd *r, const yt_node *cn, scn_collective *k)
{
	int v;
	k->iterations = 20;
	if (!scn_get_int(r, cn, "iterations", false, 1, INT_MAX, &v))
		return;
	if (v > SCN_COLL_MAX_ITERATIONS)
		return scn_err(r, yt_get(cn, "iterations"), "'iterations' %d is more than %d: 5,000 x "
			       "nccl-tests' default run of 20 (src/common.cu), and each is simulated",
			       v, SCN_COLL_MAX_ITERATIONS);
	k->iterations = v;
}

static void read_collective(resolve_ctx *c, const yt_node *w, scn_collective *k)
{
	scn_rd *r = c->r;
	const yt_node *cn, *sn;
	int v;
	scn_only_keys(r, w, coll_keys, "a collective workload");
	if (!(cn = scn_section(r, w, "collective", true)))
		return;
	scn_only_keys(r, cn, coll_inner_keys, "collective");
	if (scn_get_enum(r, cn, "op", true, scn_op_words, &v))
		k->op = (scn_coll_op)v;
	k->algo = SCN_ALGO_AUTO;
	if (scn_get_enum(r, cn, "algo", false, scn_algo_words, &v))
		k->algo = (scn_coll_algo)v;
	if (k->algo != SCN_ALGO_AUTO && !algo_fits_op(k->op, k->algo))
		scn_err(r, yt_get(cn, "algo"), "collective '%s' %s: algo must be %s (got '%s')",
			scn_op_words[k->op], algo_fits_op(k->op, SCN_ALGO_RING) ? "runs as a ring"
			: "runs point to point", algo_fits_op(k->op, SCN_ALGO_RING) ? "auto or ring"
			: "auto", scn_algo_words[k->algo]);
	if (!(sn = yt_get(cn, "sizes")))
		scn_err_missing(r, cn, "sizes", "a list of sizes, or { from, to, factor }");
	else
		read_sizes(c, sn, k->sizes_bytes, &k->nsizes, "collective");
	k->ranks = 0; /* all the GPUs the workload gets */
	k->ranks_auto = false;
	scn_get_int(r, cn, "ranks", false, 2, 10000000, &k->ranks);
	read_coll_iterations(r, cn, k);
}

static const char *const p2p_keys[] = { "kind", "p2p", NULL };
static const char *const p2p_inner_keys[] = { "test", "sizes", "qps", "tx_depth", "iterations",
					      "outstanding_reads", NULL };

/* read_bw's reads in flight per QP: perftest takes the device's
 * max_qp_rd_atom (ctx_set_out_reads), which no NVIDIA document publishes,
 * so the scenario gives it (ibv_devinfo -v shows it); the other tests have
 * none. */
static void read_out_reads(scn_rd *r, const yt_node *pn, scn_p2p *k)
{
	const yt_node *n = yt_get(pn, "outstanding_reads");
	k->out_reads = 0;
	if (k->test != SCN_P2P_READ_BW) {
		if (n)
			scn_err(r, n, "'outstanding_reads' applies to read_bw only (test '%s')",
				scn_p2p_test_words[k->test]);
		return;
	}
	if (!n)
		return scn_err_missing(r, pn, "outstanding_reads", "the reads in flight per QP: "
				       "perftest takes the adapter's max_qp_rd_atom, which "
				       "'ibv_devinfo -v' shows and no datasheet publishes");
	scn_get_int(r, pn, "outstanding_reads", true, 1, 65536, &k->out_reads);
}

/* perftest's own parser refuses a tx depth above MAX_TX, 15000
 * (src/perftest_parameters.h: "Tx depth should be between 1 and 15000"),
 * which is below what a ConnectX send queue holds (max_qp_wr 32768). */
#define SCN_P2P_MAX_TX_DEPTH 15000

static void read_tx_depth(scn_rd *r, const yt_node *pn, scn_p2p *k)
{
	int v;
	if (!scn_get_int(r, pn, "tx_depth", false, 1, INT_MAX, &v))
		return;
	if (v > SCN_P2P_MAX_TX_DEPTH)
		return scn_err(r, yt_get(pn, "tx_depth"), "'tx_depth' %d is more messages in flight "
			       "per QP than perftest posts: its parser takes 1 to %d (MAX_TX, "
			       "src/perftest_parameters.h)", v, SCN_P2P_MAX_TX_DEPTH);
	k->tx_depth = v;
}

/* Every message of every QP is simulated (about a microsecond each), so a
 * size's run is qps x iterations messages: 10^8 is 20,000 times perftest's
 * default run (DEF_ITERS_WB 5000 on one QP), more than a bandwidth
 * figure needs, and would take minutes per size and variant. */
#define SCN_P2P_MAX_MESSAGES 100000000L

static void check_p2p_messages(scn_rd *r, const yt_node *pn, const scn_p2p *k)
{
	const yt_node *at = yt_get(pn, "iterations") ? yt_get(pn, "iterations") : yt_get(pn, "qps");
	long msgs = (long)k->qps * k->iterations;
	if (msgs > SCN_P2P_MAX_MESSAGES)
		scn_err(r, at ? at : pn, "qps x iterations = %d x %d = %ld messages per size, more "
			"than %ld: 20,000 x perftest's default run (5000 iterations on 1 QP), and each "
			"message is simulated", k->qps, k->iterations, msgs, SCN_P2P_MAX_MESSAGES);
}

/* perftest's defaults (src/perftest_parameters.h): DEF_TX_BW 128 messages
 * in flight for bandwidth tests, DEF_TX_LAT 1 for latency tests;
 * DEF_ITERS_WB 5000 iterations for ib_write_bw, DEF_ITERS 1000 for the
 * others. A latency test is one QP with one message in flight: perftest
 * takes no other there, and neither does this. */
static void read_p2p(resolve_ctx *c, const yt_node *w, scn_p2p *k)
{
	scn_rd *r = c->r;
	const yt_node *pn, *sn;
	int v;
	scn_only_keys(r, w, p2p_keys, "a p2p workload");
	if (!(pn = scn_section(r, w, "p2p", true)))
		return;
	scn_only_keys(r, pn, p2p_inner_keys, "p2p");
	k->test = SCN_P2P_WRITE_BW;
	if (scn_get_enum(r, pn, "test", true, scn_p2p_test_words, &v))
		k->test = (scn_p2p_test)v;
	if (!(sn = yt_get(pn, "sizes")))
		scn_err_missing(r, pn, "sizes", "a list of sizes, or { from, to, factor }");
	else
		read_sizes(c, sn, k->sizes_bytes, &k->nsizes, "p2p");
	k->qps = 1;
	k->tx_depth = scn_p2p_is_lat(k->test) ? 1 : 128;
	k->iterations = k->test == SCN_P2P_WRITE_BW ? 5000 : 1000;
	scn_get_int(r, pn, "iterations", false, 1, 1000000, &k->iterations);
	if (scn_p2p_is_lat(k->test) && (yt_get(pn, "qps") || yt_get(pn, "tx_depth")))
		return scn_err(r, yt_get(pn, "qps") ? yt_get(pn, "qps") : yt_get(pn, "tx_depth"),
			       "p2p test '%s' runs one message at a time on one QP: 'qps' and "
			       "'tx_depth' apply to the bandwidth tests only",
			       scn_p2p_test_words[k->test]);
	scn_get_int(r, pn, "qps", false, 1, 1024, &k->qps);
	read_tx_depth(r, pn, k);
	read_out_reads(r, pn, k);
	check_p2p_messages(r, pn, k);
}

/* False when the kind itself is wrong: nothing else can be checked then. */
static bool read_workload(resolve_ctx *c, const yt_node *w, scn_workload *wl)
{
	int v;
	wl->kind = SCN_WL_TRAINING;
	if (scn_get_enum(c->r, w, "kind", false, scn_kind_words, &v))
		wl->kind = (scn_wl_kind)v;
	else if (yt_get(w, "kind"))
		return false;
	if (wl->kind == SCN_WL_TRAINING)
		read_training(c, w, &wl->train);
	else if (wl->kind == SCN_WL_P2P)
		read_p2p(c, w, &wl->p2p);
	else
		read_collective(c, w, &wl->coll);
	return true;
}

static void check_interleaving(resolve_ctx *c, const yt_node *pn, const scn_training *t);
static void check_engine(resolve_ctx *c, const yt_node *w, const scn_training *t);

/* Context parallelism splits each sequence into 2 cp pieces, rank i taking
 * pieces i and 2 cp - 1 - i so that every rank gets an equal share of the
 * causal attention (Megatron-Core's load balancing): the sequence must be a
 * multiple of 2 cp. */
static void check_context(resolve_ctx *c, const yt_node *pn, const scn_training *t)
{
	const yt_node *at = yt_get(pn, "cp");
	if (t->cp <= 1 || t->shape.kind != WL_TRANSFORMER || !t->shape.tf.seq)
		return;
	if (!wl_cp_splits_seq(&t->shape.tf, (uint32_t)t->cp))
		scn_err(c->r, at, "cp %d: the sequence of %u tokens does not split into 2 x cp = %d "
			"equal pieces", t->cp, t->shape.tf.seq, 2 * t->cp);
}

/* Each microbatch of each pipeline stage is simulated (each model chunk's
 * pass of it, interleaved), so microbatches per iteration (global / (dp x
 * micro)) times virtual_stages is the work a training run grows with. The
 * most any published run takes is 512 microbatches: Narayanan et al. 2021
 * (SC21), Table 1, the 1T model (batch 3072 over dp 6, micro 1), and
 * Korthikanti et al. 2022's 1T run (batch 512 over dp 1; tests/validation);
 * interleaved, NeMo's Llama 2 70B takes 20 chunks of 64. 65,536 is no job
 * anyone trains: a value past it is a typo (a global batch in tokens, not
 * sequences), which would otherwise run for hours. */
#define SCN_MAX_MICROBATCHES 65536

static void check_microbatches(resolve_ctx *c, const yt_node *w, scn_training *t)
{
	long m = t->global_batch / ((long)t->dp * t->micro_batch), passes = m * t->vp;
	const yt_node *bn = yt_get(w, "batch"), *g = yt_get(bn, "global");
	char vp[96] = "";
	if (passes <= SCN_MAX_MICROBATCHES) {
		t->microbatches = (int)m;
		return;
	}
	if (t->vp > 1)
		snprintf(vp, sizeof vp, ", times virtual_stages %d = %ld chunk passes,", t->vp, passes);
	scn_err(c->r, g ? g : bn ? bn : w, "global batch %d over dp x micro = %d x %d is %ld "
		"microbatches per iteration%s more than %d: 128 x the most any published run takes "
		"(512: Narayanan et al. 2021, Table 1, the 1T model; Korthikanti et al. 2022, 1T), and "
		"each is simulated (is the batch in tokens rather than sequences?)",
		t->global_batch, t->dp, t->micro_batch, m, vp[0] ? vp : ",", SCN_MAX_MICROBATCHES);
}

/* Parallelism and batch against the GPUs the workload gets. */
static void check_training(resolve_ctx *c, const yt_node *w, scn_training *t, int gpus)
{
	const yt_node *pn = yt_get(w, "parallelism");
	const yt_node *at = pn ? pn : w;
	long tpp = (long)t->tp * t->cp * t->pp;
	char cp[32] = "", cpn[32] = ""; /* the cp factor, named where it is not 1 */
	SIM_ASSERT(tpp > 0 && t->micro_batch > 0, "tp, pp and micro are set before the checks");
	if (t->shape.kind == WL_VISION && tpp != 1)
		return scn_err(c->r, at, "vision model '%s' trains data parallel only: tp%s and pp "
			       "must be 1", t->model, t->cp > 1 ? ", cp" : "");
	if (t->cp > 1) {
		snprintf(cp, sizeof cp, " x cp");
		snprintf(cpn, sizeof cpn, " x %d", t->cp);
	}
	if (t->dp == 0) {
		t->dp_auto = true;
		if (gpus % tpp)
			return scn_err(c->r, at, "tp%s x pp = %d%s x %d = %ld does not divide the %d GPUs "
				       "the job gets", cp, t->tp, cpn, t->pp, tpp, gpus);
		t->dp = (int)(gpus / tpp);
	} else if (tpp * t->dp != gpus) {
		return scn_err(c->r, at, "tp%s x pp x dp = %d%s x %d x %d = %ld, but the job gets %d "
			       "GPUs", cp, t->tp, cpn, t->pp, t->dp, tpp * t->dp, gpus);
	}
	check_context(c, pn, t);
	if (t->shape.kind == WL_TRANSFORMER && t->model[0] && t->shape.tf.heads && t->shape.tf.layers) {
		if (t->shape.tf.heads % (uint32_t)t->tp)
			scn_err(c->r, at, "tp %d does not divide the model's %u attention heads", t->tp,
				t->shape.tf.heads);
		if (t->shape.tf.layers < (uint32_t)t->pp)
			scn_err(c->r, at, "pp %d is more pipeline stages than the model's %u layers", t->pp,
				t->shape.tf.layers);
	}
	/* Tensor parallelism stays inside a node's NVLink domain (train_config.c). */
	if (c->s->cluster.gpus_per_node % t->tp)
		scn_err(c->r, at, "tp %d does not divide gpus_per_node %d: tensor parallelism stays "
			"inside a node", t->tp, c->s->cluster.gpus_per_node);
	if (t->global_batch % ((long)t->dp * t->micro_batch))
		scn_err(c->r, yt_get(w, "batch") ? yt_get(w, "batch") : w,
			"global batch %d is not a multiple of dp x micro = %d x %d", t->global_batch, t->dp,
			t->micro_batch);
	else
		check_microbatches(c, w, t);
	check_interleaving(c, pn, t);
	check_engine(c, w, t);
	if (t->sp && t->tp < 2)
		scn_err(c->r, yt_get(pn, "sequence_parallel"), "sequence_parallel splits the "
			"sequence over the tensor-parallel ranks: tp must be at least 2 (got %d)", t->tp);
}

/* What the pipeline engine cannot run (wl_engine_fault, the check plan
 * applies to its layouts too), refused where pipeline_engine is written. */
static void check_engine(resolve_ctx *c, const yt_node *w, const scn_training *t)
{
	const yt_node *at = yt_get(w, "pipeline_engine");
	const char *what = wl_engine_fault(t->engine, (uint32_t)t->pp, (uint32_t)t->vp, t->sp,
					   (uint32_t)t->cp, (uint32_t)t->zero_stage, t->tp_overlap);
	if (what && t->engine == WL_ENGINE_MEGATRON_2021)
		scn_err(c->r, at, "pipeline_engine megatron-2021 had no sequence or context "
			"parallelism, no distributed optimizer and no userbuffers (Megatron-LM of "
			"2021): %s needs pipeline_engine: megatron", what);
	else if (what && t->engine == WL_ENGINE_MEGATRON_2022)
		scn_err(c->r, at, "pipeline_engine megatron-2022 had no context parallelism, no "
			"distributed optimizer and no userbuffers (Megatron-LM of May 2022): %s "
			"needs pipeline_engine: megatron", what);
	else if (what)
		scn_err(c->r, at, "pipeline_engine deepspeed runs the plain 1F1B schedule on the "
			"whole sequence with ZeRO 0 or 1 (DeepSpeed's PipelineEngine of 2021): %s "
			"needs pipeline_engine: megatron", what);
}

/* Megatron's interleaved schedule: v model chunks per pipeline rank, each
 * of the same layers (layers a multiple of pp x v), on a pipeline (pp > 1),
 * taking microbatches in groups of pp (their count a multiple of pp,
 * which Megatron-LM asserts). */
static void check_interleaving(resolve_ctx *c, const yt_node *pn, const scn_training *t)
{
	const yt_node *at = yt_get(pn, "virtual_stages");
	long chunks = (long)t->pp * t->vp;
	unsigned f;
	if (t->vp <= 1 || !at)
		return;
	f = wl_interleave_faults(&t->shape, (uint32_t)t->pp, (uint32_t)t->vp,
				 (uint32_t)t->microbatches);
	if (f & WL_VP_NO_PIPELINE)
		return scn_err(c->r, at, "virtual_stages %d needs a pipeline: pp must be at least 2 "
			       "(got %d)", t->vp, t->pp);
	if (f & WL_VP_LAYERS)
		scn_err(c->r, at, "virtual_stages %d: the model's %u layers do not split into pp x "
			"virtual_stages = %d x %d = %ld equal chunks", t->vp, t->shape.tf.layers,
			t->pp, t->vp, chunks);
	if (f & WL_VP_MICROBATCHES)
		scn_err(c->r, at, "virtual_stages %d: %d microbatches per pipeline (global / (dp x "
			"micro)) must be a multiple of pp %d for the interleaved schedule",
			t->vp, t->microbatches, t->pp);
}

/* ---- memory per GPU ---- */

scn_precision scn_grad_reduce_of(scn_precision p)
{
	return p == SCN_FP16 ? SCN_FP16 : SCN_FP32;
}

double scn_grad_bytes(const scn_training *t)
{
	return t->grad_reduce == SCN_FP32 ? 4 : 2;
}

double scn_param_bytes(const scn_training *t)
{
	return t->precision == SCN_FP32 || t->precision == SCN_TF32 ? 4 : 2;
}

wl_mem_plan scn_mem_plan(const scn_cluster *cl, const scn_training *t, const scn_layout *l)
{
	double ch = profile_has(cl->gpu.v.gpu.nccl_channels) ? cl->gpu.v.gpu.nccl_channels
							     : cl->nics_per_node;
	return (wl_mem_plan){ .tp = (uint32_t)l->tp, .pp = (uint32_t)l->pp, .dp = (uint32_t)l->dp,
			      .mb = (uint32_t)l->micro_batch,
			      .microbatches = (uint32_t)(l->global_batch /
							 ((long)l->dp * l->micro_batch)),
			      .zero_stage = l->zero_stage, .recompute = l->recompute,
			      .vp = l->vp > 1 ? (uint32_t)l->vp : 1, .sp = l->sp && l->tp > 1,
			      .cp = l->cp > 1 ? (uint32_t)l->cp : 1, .flash = t->flash,
			      .channels = ch >= 1 ? (uint32_t)ch : 1,
			      .reserve_bytes = t->memory_reserve_bytes,
			      .grad_bytes = scn_grad_bytes(t) };
}

/* t with tp x cp x pp (data parallelism over the rest of its GPUs), ZeRO
 * stage zero and recomputation rc: a layout the memory check tries. t's
 * own virtual stages where pp is its own, its sequence parallelism. */
static scn_layout layout_of(const scn_training *t, int tp, int pp, int cp, int zero, bool rc)
{
	long gpus = (long)t->dp * t->tp * t->cp * t->pp;
	return (scn_layout){ .tp = tp, .pp = pp, .dp = (int)(gpus / ((long)tp * cp * pp)),
			     .micro_batch = t->micro_batch, .global_batch = t->global_batch,
			     .zero_stage = zero, .recompute = rc, .vp = pp == t->pp ? t->vp : 1,
			     .sp = t->sp, .cp = cp };
}

/* A layout suggest_fit tries: tensor, pipeline and context ways. */
typedef struct fit_try {
	int tp, pp, cp;
} fit_try;

static bool fits(const resolve_ctx *c, const scn_training *t, fit_try f, int zero, bool rc,
		 double cap)
{
	scn_layout l = layout_of(t, f.tp, f.pp, f.cp, zero, rc);
	wl_mem_plan p = scn_mem_plan(&c->s->cluster, t, &l);
	wl_memory w;
	wl_gpu_memory(&t->shape, &p, &w);
	return w.total <= cap;
}

static void put_hint(char *buf, size_t n, const scn_training *t, fit_try f, int z, bool rc)
{
	size_t at = (size_t)snprintf(buf, n, "try");
	if (f.tp != t->tp || f.pp != t->pp)
		at += (size_t)snprintf(buf + at, n - at, " tp %d pp %d", f.tp, f.pp);
	if (f.cp != t->cp && at < n)
		at += (size_t)snprintf(buf + at, n - at, "%s cp %d", at > 3 ? "," : "", f.cp);
	if (z != t->zero_stage && at < n)
		at += (size_t)snprintf(buf + at, n - at, "%s zero_stage: %d", at > 3 ? "," : "", z);
	if (rc != t->recompute && at < n)
		snprintf(buf + at, n - at, "%s recompute: true", at > 3 ? "," : "");
}

/* Layout f with ZeRO or recomputation where it divides the job's GPUs and
 * batch and is a layout the loader accepts (tp within a node and dividing
 * the heads, pp up to the layers, cp splitting the sequence): the hint for
 * the first that fits. */
static bool try_layout(const resolve_ctx *c, const scn_training *t, fit_try f, double cap,
		       char *buf, size_t n)
{
	const wl_transformer *tf = &t->shape.tf;
	long gpus = (long)t->dp * t->tp * t->cp * t->pp, prod = (long)f.tp * f.cp * f.pp;
	if (gpus % prod || t->global_batch % (gpus / prod * t->micro_batch) ||
	    c->s->cluster.gpus_per_node % f.tp)
		return false;
	if (t->shape.kind == WL_TRANSFORMER && (tf->heads % (uint32_t)f.tp ||
	    (uint64_t)f.pp > tf->layers || !wl_cp_splits_seq(tf, (uint32_t)f.cp)))
		return false;
	for (int rc = t->recompute; rc <= 1; rc++)
		for (int z = t->zero_stage; z <= 3; z++)
			if (fits(c, t, f, z, rc, cap))
				return put_hint(buf, n, t, f, z, rc), true;
	return false;
}

/* The change nearest the one asked for that fits: the same layout with
 * ZeRO or recomputation, else the smallest larger tp x pp, else the
 * smallest larger cp (the sequence split further: what a long sequence's
 * activations need when tensor parallelism has reached the node). */
static void suggest_fit(const resolve_ctx *c, const scn_training *t, double cap, char *buf, size_t n)
{
	long gpus = (long)t->tp * t->cp * t->pp * t->dp;
	snprintf(buf, n, "no tp, pp, cp, zero_stage or recompute makes it fit: more GPU memory is "
		 "needed");
	if (try_layout(c, t, (fit_try){ t->tp, t->pp, t->cp }, cap, buf, n) ||
	    t->shape.kind != WL_TRANSFORMER)
		return;
	for (long prod = (long)t->tp * t->pp * 2; prod * t->cp <= gpus; prod *= 2)
		for (int tp = t->tp; tp <= prod && tp <= c->s->cluster.gpus_per_node; tp *= 2)
			if (prod / tp >= t->pp &&
			    try_layout(c, t, (fit_try){ tp, (int)(prod / tp), t->cp }, cap, buf, n))
				return;
	for (long cp = (long)t->cp * 2; (long)t->tp * t->pp * cp <= gpus; cp *= 2)
		if (try_layout(c, t, (fit_try){ t->tp, t->pp, (int)cp }, cap, buf, n))
			return;
}

static const char *gb(double bytes, char *buf, size_t n)
{
	if (bytes >= 1e12)
		snprintf(buf, n, "%.2f TB", bytes / 1e12);
	else
		snprintf(buf, n, "%.1f GB", bytes / 1e9);
	return buf;
}

/* The job's memory per GPU against the GPU's: refused when it cannot fit. */
static void check_memory(resolve_ctx *c, const yt_node *w, scn_training *t)
{
	const profile_values *g = &c->s->cluster.gpu.v;
	const yt_node *at = yt_get(w, "parallelism") ? yt_get(w, "parallelism") : w;
	scn_layout l;
	wl_mem_plan p;
	char hint[160], need_s[32], have_s[32], a[5][32];
	if (!c->s->cluster.gpu.prof || !profile_has(g->gpu.hbm_bytes) || !t->microbatches)
		return;
	l = layout_of(t, t->tp, t->pp, t->cp, t->zero_stage, t->recompute);
	p = scn_mem_plan(&c->s->cluster, t, &l);
	wl_gpu_memory(&t->shape, &p, &t->memory);
	if (t->memory.total <= g->gpu.hbm_bytes || c->r->fit_unchecked)
		return;
	suggest_fit(c, t, g->gpu.hbm_bytes, hint, sizeof hint);
	scn_err(c->r, at, "does not fit in GPU memory: pipeline stage %u needs %s per GPU (weights "
		"%s, gradients %s, optimizer states %s, activations %s, buffers and reserve %s), "
		"'%s' has %s: %s", t->memory.stage, gb(t->memory.total, need_s, sizeof need_s),
		gb(t->memory.weights, a[0], 32), gb(t->memory.grads, a[1], 32),
		gb(t->memory.optimizer, a[2], 32), gb(t->memory.activations, a[3], 32),
		gb(t->memory.comm + t->memory.reserve, a[4], 32), c->s->cluster.gpu.name,
		gb(g->gpu.hbm_bytes, have_s, sizeof have_s), hint);
}

static void check_workload(resolve_ctx *c, const yt_node *w, scn_workload *wl, int gpus)
{
	wl->gpus = gpus;
	if (wl->kind == SCN_WL_TRAINING) {
		check_training(c, w, &wl->train, gpus);
		check_memory(c, w, &wl->train);
		const char *field = scn_precision_words[wl->train.precision];
		char name[32];
		snprintf(name, sizeof name, "peak_%s_flops", field);
		need(c, &c->s->cluster.gpu, c->gpu, yt_get(w, "precision"), name, "training at this precision");
		need(c, &c->s->cluster.gpu, c->gpu, NULL, "hbm_bw", "training");
		need(c, &c->s->cluster.gpu, c->gpu, NULL, "eff_max", "training");
		return;
	}
	if (wl->kind == SCN_WL_P2P) {
		if (gpus < 2 * c->s->cluster.gpus_per_node)
			scn_err(c->r, yt_get(w, "p2p") ? yt_get(w, "p2p") : w,
				"a p2p benchmark runs between GPU 0 of node 0 and GPU 0 of node 1, "
				"through their NICs: it needs 2 nodes, and the workload gets %d",
				gpus / c->s->cluster.gpus_per_node);
		return;
	}
	if (wl->coll.ranks == 0 || wl->coll.ranks_auto) {
		wl->coll.ranks = gpus;
		wl->coll.ranks_auto = true;
	} else if (wl->coll.ranks > gpus) {
		scn_err(c->r, yt_get(yt_get(w, "collective"), "ranks"),
			"ranks %d is more than the %d GPUs the workload gets", wl->coll.ranks, gpus);
	}
}

/* ---- jobs ---- */

static const char *const job_keys[] = { "name", "nodes", "placement", "workload", NULL };

/* A collective job beside training jobs shares their collective context,
 * which runs what NCCL runs by default: no in-network reduction there
 * (tools/run.c bench_of). */
static void check_benchmarks(resolve_ctx *c, const yt_node *jn)
{
	const scn_scenario *s = c->s;
	bool training = false;
	for (size_t i = 0; i < s->njobs; i++)
		training |= s->jobs[i].wl.kind == SCN_WL_TRAINING;
	for (size_t i = 0; i < s->njobs && training && i < jn->nkids; i++) {
		const scn_job *job = &s->jobs[i];
		if (job->wl.kind != SCN_WL_COLLECTIVE || job->wl.coll.algo != SCN_ALGO_IN_NETWORK)
			continue;
		scn_err(c->r, yt_get(yt_get(yt_get(jn->kids[i], "workload"), "collective"), "algo"),
			"collective job '%s': algo 'in-network' is not simulated beside training "
			"jobs (they share one collective context, without SHARP)", job->name);
	}
}

static void read_jobs(resolve_ctx *c, const yt_node *jn)
{
	scn_scenario *s = c->s;
	long total = 0;
	if (jn->type != YT_SEQ || !jn->nkids)
		return scn_err(c->r, jn, "'jobs' must be a non-empty list of jobs");
	if (jn->nkids > SCN_MAX_JOBS)
		return scn_err(c->r, jn, "at most %d jobs", SCN_MAX_JOBS);
	s->multi_job = true;
	for (size_t i = 0; i < jn->nkids; i++) {
		const yt_node *j = jn->kids[i], *w;
		scn_job *job = &s->jobs[s->njobs++];
		int v;
		c->job_nodes[i] = j;
		if (j->type != YT_MAP) {
			scn_err(c->r, j, "a job must be a mapping with name, nodes and workload");
			continue;
		}
		scn_only_keys(c->r, j, job_keys, "a job");
		snprintf(job->name, sizeof job->name, "job%zu", i + 1);
		scn_get_str(c->r, j, "name", true, job->name, sizeof job->name);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(s->jobs[k].name, job->name))
				scn_err(c->r, yt_get(j, "name"), "duplicate job name '%s'", job->name);
		job->nodes = 1;
		if (scn_get_int(c->r, j, "nodes", true, 1, 1000000, &job->nodes))
			total += job->nodes;
		job->placement = SCN_PLACE_PACKED;
		if (scn_get_enum(c->r, j, "placement", false, scn_placement_words, &v))
			job->placement = (scn_placement)v;
		job->at = where_of(w = scn_section(c->r, j, "workload", true));
		if (w && read_workload(c, w, &job->wl))
			check_workload(c, w, &job->wl, job->nodes * s->cluster.gpus_per_node);
		/* A p2p benchmark measures two idle adapters, as perftest is run:
		 * not a tenant beside others. */
		if (w && job->wl.kind == SCN_WL_P2P)
			scn_err(c->r, yt_get(w, "kind"), "job '%s': a p2p benchmark runs alone, as "
				"workload: (not in jobs:)", job->name);
	}
	if (total > s->cluster.nodes)
		scn_err(c->r, jn, "the jobs take %ld nodes, but the cluster has %d", total, s->cluster.nodes);
	check_benchmarks(c, jn);
}

/* ---- variants ---- */

static const char *const variant_keys[] = { "name", "network", "storage", "crypto", "vswitch",
					    "nccl_socket_nthreads", "nccl_nsocks_perthread",
					    "cluster", "cost", NULL };

/* What an offload option takes from the cluster (its row,
 * models/offload.c): the host-costs profile it reads, and every profile
 * field it needs, each refused with where to set it. */
static void check_needs(resolve_ctx *c, const scn_variant *v, const yt_node *vn, offload_kind k)
{
	const offload_row *row = offload_row_of(v, k);
	const yt_node *at = yt_get(vn, offload_kind_name(k));
	const yt_node *hw_node[] = { [OFFLOAD_HOST_COSTS] = c->host, [OFFLOAD_NIC] = c->nic,
				     [OFFLOAD_DPU] = c->dpu };
	char why[160];
	snprintf(why, sizeof why, "variant '%s' (%s: %s)", v->name, offload_kind_name(k),
		 offload_word(k, row->value));
	if (row->host_costs_for && !c->s->cluster.host_costs.prof)
		scn_err(c->r, at, "%s %s 'cluster.host_costs' (a host-costs profile such as "
			"host-costs-linux)", why, row->host_costs_for);
	for (size_t i = 0; i < OFFLOAD_MAX_FIELDS && row->needs[i].field; i++) {
		const offload_field *f = &row->needs[i];
		const scn_hw *hw = offload_hw_of(c->s, f->hw);
		if (f->alt)
			need_either(c, hw, hw_node[f->hw], at, f->field, f->alt, why);
		else
			need(c, hw, hw_node[f->hw], at, f->field, why);
	}
}

/* Options that run on a DPU need one; options that run work on the host's
 * cores need its costs. */
static void check_hosts(resolve_ctx *c, const yt_node *vn, const scn_variant *v)
{
	scn_cluster *cl = &c->s->cluster;
	bool host_work = false;
	for (int k = 0; k < OFFLOAD_NKINDS; k++) {
		const offload_row *row = offload_row_of(v, (offload_kind)k);
		host_work |= row->host_work;
		if (row->dpu && !cl->has_dpu)
			scn_err(c->r, yt_get(vn, offload_kind_name((offload_kind)k)),
				"variant '%s' has %s: %s, but the cluster has no 'dpu'", v->name,
				offload_kind_name((offload_kind)k), offload_word((offload_kind)k, row->value));
	}
	if (host_work && !cl->host_costs.prof)
		scn_err(c->r, vn, "variant '%s' runs work on the host CPU, which needs 'cluster.host_costs' "
			"(a host-costs profile such as host-costs-linux)", v->name);
}

/* Where the loader's reads come from: storage servers, or the node's own
 * drives. */
static void check_storage(resolve_ctx *c, const yt_node *vn, const scn_variant *v)
{
	scn_cluster *cl = &c->s->cluster;
	const yt_node *st = yt_get(vn, "storage");
	char why[160];
	if (((v->storage == SCN_STOR_DPU_SNAP || v->storage == SCN_STOR_HOST_RDMA) &&
	     !cl->storage.present) ||
	    (v->storage == SCN_STOR_GDS && !cl->storage.present && !cl->local_nvme.present))
		scn_err(c->r, st, "variant '%s' has storage: %s, but the cluster has no 'storage'%s",
			v->name, scn_storage_path_name(v->storage),
			v->storage == SCN_STOR_GDS ? " or 'local_nvme'" : "");
	snprintf(why, sizeof why, "variant '%s' (storage: %s)", v->name,
		 scn_storage_path_name(v->storage));
	/* GDS from node-local drives needs no NIC; from servers, GPUDirect RDMA. */
	if (v->storage == SCN_STOR_GDS && !cl->local_nvme.present &&
	    need(c, &cl->nic, c->nic, st, "gpudirect", why) &&
	    cl->nic.v.nic.gpudirect == 0)
		scn_err(c->r, st, "%s needs GPUDirect, which NIC '%s' does not support", why, cl->nic.name);
	/* NVMe-oF over RDMA is an NVMe initiator talking to remote drives: the
	 * node's own drives are local NVMe, not read over the fabric. */
	if (v->storage == SCN_STOR_HOST_RDMA && cl->local_nvme.present)
		scn_err(c->r, st, "variant '%s' has storage: host-rdma (NVMe-oF over RDMA from "
			"'cluster.storage'), but with 'local_nvme' the loader reads the node's own "
			"drives (storage: host or gds)", v->name);
}

/* Which traffic each crypto option can encrypt, and on what. False where
 * the option has nothing to run on, so its fields are not asked for. */
static bool check_crypto(resolve_ctx *c, const yt_node *vn, const scn_variant *v)
{
	scn_cluster *cl = &c->s->cluster;
	const yt_node *net = yt_get(vn, "network"), *st = yt_get(vn, "storage");
	const yt_node *cr = yt_get(vn, "crypto");
	/* RDMA packets are built and consumed by the NIC: the kernel's IPsec
	 * (xfrm) never sees them, so AES-GCM on the host's cores cannot
	 * encrypt NVMe-oF/RDMA in transit; IPsec over RoCE needs the NIC's or
	 * DPU's packet offload (NVIDIA MLNX_OFED/DOCA docs, "IPsec Packet
	 * Offload", crypto-enabled ConnectX-6 Dx/-7 and BlueField-2): crypto:
	 * dpu-inline or nic-inline. */
	if (v->storage == SCN_STOR_HOST_RDMA && v->crypto == SCN_CRYPTO_HOST)
		scn_err(c->r, cr ? cr : st, "variant '%s' has storage: host-rdma with crypto: host, "
			"but the host's IPsec never sees RDMA traffic (the NIC builds it): encrypt it "
			"on the NIC or DPU (crypto: dpu-inline)", v->name);
	/* The same holds for the training traffic itself: over rdma or
	 * rdma-gdr the host's cores cannot encrypt it (host-tcp can). */
	if (v->network != SCN_NET_HOST_TCP && v->crypto == SCN_CRYPTO_HOST)
		scn_err(c->r, cr ? cr : net, "variant '%s' has network: %s with crypto: host, but the "
			"host's IPsec never sees RDMA traffic (the NIC builds it): encrypt it on the NIC "
			"or DPU (crypto: dpu-inline), or use network: host-tcp", v->name,
			scn_network_name(v->network));
	/* The inline engine is on crypto-enabled adapters only (NVIDIA DOCA,
	 * "IPsec Crypto Offload": crypto-enabled ConnectX-6 Dx and ConnectX-7,
	 * not ConnectX-6). */
	if (v->crypto == SCN_CRYPTO_NIC_INLINE && profile_has(cl->nic.v.nic.inline_crypto) &&
	    cl->nic.v.nic.inline_crypto == 0) {
		scn_err(c->r, cr, "variant '%s' has crypto: nic-inline, but NIC '%s' has no inline "
			"crypto engine (its profile says 'inline_crypto: false'): use a crypto-enabled "
			"NIC (set cluster.nic.inline_crypto with its source), crypto: dpu-inline or host",
			v->name, cl->nic.name);
		return false;
	}
	return true;
}

static void check_variant(resolve_ctx *c, const yt_node *vn, const scn_variant *v)
{
	scn_cluster *cl = &c->s->cluster;
	const yt_node *net = yt_get(vn, "network");
	const yt_node *cr = yt_get(vn, "crypto"), *vs = yt_get(vn, "vswitch");
	check_hosts(c, vn, v);
	check_needs(c, v, vn, OFFLOAD_NETWORK);
	if (v->network == SCN_NET_RDMA_GDR && profile_has(cl->nic.v.nic.gpudirect) &&
	    cl->nic.v.nic.gpudirect == 0)
		scn_err(c->r, net, "variant '%s' (network: rdma-gdr) needs GPUDirect RDMA, which NIC "
			"'%s' does not support", v->name, cl->nic.name);
	check_storage(c, vn, v);
	check_needs(c, v, vn, OFFLOAD_STORAGE);
	if (check_crypto(c, vn, v))
		check_needs(c, v, vn, OFFLOAD_CRYPTO);
	check_needs(c, v, vn, OFFLOAD_VSWITCH);
	if (c->s->security.encryption_required && v->crypto == SCN_CRYPTO_NONE)
		scn_err(c->r, cr ? cr : vn, "variant '%s' does not encrypt (crypto: none), but security.encryption is required",
			v->name);
	if (c->s->security.tenant_isolation && v->vswitch == SCN_VSW_NONE)
		scn_err(c->r, vs ? vs : vn, "variant '%s' has no virtual switch (vswitch: none), but security.tenant_isolation is on",
			v->name);
}

/* NCCL's socket transport settings, its own limits (NVIDIA/nccl
 * src/transport/net_socket.cc: MAX_THREADS 16, MAX_SOCKETS 64 for threads
 * x sockets per thread; NCCL documentation, Environment Variables,
 * NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD). NCCL clamps a larger
 * value with a warning; here it is refused, as a scenario that asks for
 * more than NCCL runs would report a configuration nobody gets. */
static void read_nccl_sockets(resolve_ctx *c, const yt_node *vn, scn_variant *v)
{
	const yt_node *nt = yt_get(vn, "nccl_socket_nthreads"), *ns = yt_get(vn, "nccl_nsocks_perthread");
	scn_get_int(c->r, vn, "nccl_socket_nthreads", false, 1, 16, &v->nccl_socket_nthreads);
	scn_get_int(c->r, vn, "nccl_nsocks_perthread", false, 1, 64, &v->nccl_nsocks_perthread);
	if ((nt || ns) && v->network != SCN_NET_HOST_TCP)
		scn_err(c->r, nt ? nt : ns, "variant '%s': nccl_socket_nthreads and nccl_nsocks_perthread "
			"set NCCL's socket transport, which only network: host-tcp uses (it has network: %s)",
			v->name, scn_network_name(v->network));
	if (v->nccl_socket_nthreads * v->nccl_nsocks_perthread > 64)
		scn_err(c->r, ns, "variant '%s': nccl_socket_nthreads x nccl_nsocks_perthread is %d sockets "
			"per connection, above NCCL's limit of 64", v->name,
			v->nccl_socket_nthreads * v->nccl_nsocks_perthread);
}

static void read_variant(resolve_ctx *c, const yt_node *vn, scn_variant *v)
{
	int x;
	v->at = where_of(vn);
	scn_only_keys(c->r, vn, variant_keys, "a variant");
	scn_get_str(c->r, vn, "name", true, v->name, sizeof v->name);
	if (scn_get_enum(c->r, vn, "network", true, offload_words(OFFLOAD_NETWORK), &x))
		v->network = (scn_network)x;
	v->storage = SCN_STOR_HOST;
	if (scn_get_enum(c->r, vn, "storage", false, offload_words(OFFLOAD_STORAGE), &x))
		v->storage = (scn_storage_path)x;
	v->crypto = SCN_CRYPTO_NONE;
	if (scn_get_enum(c->r, vn, "crypto", false, offload_words(OFFLOAD_CRYPTO), &x))
		v->crypto = (scn_crypto)x;
	v->vswitch = SCN_VSW_NONE;
	if (scn_get_enum(c->r, vn, "vswitch", false, offload_words(OFFLOAD_VSWITCH), &x))
		v->vswitch = (scn_vswitch)x;
	read_nccl_sockets(c, vn, v);
	v->own_hw = yt_get(vn, "cluster") || yt_get(vn, "cost");
}

static void read_variants(resolve_ctx *c, const yt_node *vs)
{
	scn_scenario *s = c->s;
	if (vs->type != YT_SEQ || !vs->nkids)
		return scn_err(c->r, vs, "'variants' must be a non-empty list of offload variants");
	if (vs->nkids > SCN_MAX_VARIANTS)
		return scn_err(c->r, vs, "at most %d variants", SCN_MAX_VARIANTS);
	for (size_t i = 0; i < vs->nkids; i++) {
		const yt_node *vn = vs->kids[i];
		scn_variant *v = &s->variants[s->nvariants++];
		c->variant_nodes[i] = vn;
		if (vn->type != YT_MAP) {
			scn_err(c->r, vn, "a variant must be a mapping with name and network (and storage, crypto, vswitch)");
			continue;
		}
		read_variant(c, vn, v);
		for (size_t k = 0; k < i; k++)
			if (v->name[0] && !strcmp(s->variants[k].name, v->name))
				scn_err(c->r, yt_get(vn, "name"), "duplicate variant name '%s'", v->name);
		/* A variant with hardware of its own is checked against it, when
		 * models/scenario.c resolves it on its own (scn_variant_view). */
		if (!v->own_hw)
			check_variant(c, vn, v);
	}
}

/* ---- noise, failures, cost, security ---- */

/* Up to 9 decimal digits at *t into *v, *t moved past them; false when
 * there are none or more. */
static bool digits(const char **t, unsigned long *v)
{
	const char *p = *t;
	*v = 0;
	while (*p >= '0' && *p <= '9' && p - *t < 10)
		*v = *v * 10 + (unsigned long)(*p++ - '0');
	if (p == *t || p - *t > 9)
		return false;
	*t = p;
	return true;
}

/* A GPU of the cluster as "G" (its index in the cluster) or "N:L" (GPU L
 * of node N), both from 0; false when the text is neither or names a GPU
 * outside the cluster (an error at g). */
static bool slow_gpu_index(resolve_ctx *c, const yt_node *g, uint32_t *out)
{
	const scn_cluster *cl = &c->s->cluster;
	unsigned long a = 0, b = 0, gpn = (unsigned long)cl->gpus_per_node;
	unsigned long all = (unsigned long)cl->nodes * gpn;
	const char *t = g->type == YT_SCALAR ? g->text : "";
	bool ok = g->type == YT_SCALAR && digits(&t, &a), pair = ok && *t == ':';
	if (pair)
		t++, ok = digits(&t, &b);
	if (!ok || *t) {
		scn_err(c->r, g, "'gpu' must be a GPU of the cluster: its index from 0, or node:gpu "
			"(e.g. 3:5), got '%s'", g->type == YT_SCALAR ? g->text : yt_type_name(g->type));
		return false;
	}
	if (!all) /* the cluster is in error: said there */
		return false;
	if (pair && (a >= (unsigned long)cl->nodes || b >= gpn)) {
		scn_err(c->r, g, "'gpu' %lu:%lu is outside the cluster (nodes 0..%d, GPUs 0..%lu per node)",
			a, b, cl->nodes - 1, gpn - 1);
		return false;
	}
	if (!pair && a >= all) {
		scn_err(c->r, g, "'gpu' %lu is outside the cluster (GPUs 0..%lu: %d nodes of %lu)",
			a, all - 1, cl->nodes, gpn);
		return false;
	}
	*out = (uint32_t)(pair ? a * gpn + b : a);
	return true;
}

/* noise.slow_gpus: a list of { gpu, speed }, each GPU named once. */
static void read_slow_gpus(resolve_ctx *c, const yt_node *n, scn_noise *z)
{
	static const char *const keys[] = { "gpu", "speed", NULL };
	if (n->type != YT_SEQ) {
		scn_err(c->r, n, "'slow_gpus' must be a list of { gpu, speed }");
		return;
	}
	if (n->nkids > SCN_MAX_SLOW_GPUS) {
		scn_err(c->r, n, "'slow_gpus' lists %zu GPUs, at most %d", n->nkids, SCN_MAX_SLOW_GPUS);
		return;
	}
	for (size_t i = 0; i < n->nkids; i++) {
		const yt_node *e = n->kids[i], *g = e->type == YT_MAP ? yt_get(e, "gpu") : NULL;
		scn_slow_gpu sg = { 0 };
		if (e->type != YT_MAP) {
			scn_err(c->r, e, "a 'slow_gpus' entry must be a mapping { gpu, speed }");
			continue;
		}
		scn_only_keys(c->r, e, keys, "slow_gpus");
		if (!g)
			scn_err_missing(c->r, e, "gpu", "the GPU's index, or node:gpu");
		if (!scn_get_q(c->r, e, "speed", true, UNIT_FRACTION, 0, 1, true, &sg.speed) ||
		    !g || !slow_gpu_index(c, g, &sg.gpu))
			continue;
		for (size_t k = 0; k < z->nslow_gpus; k++)
			if (z->slow_gpus[k].gpu == sg.gpu)
				scn_err(c->r, g, "GPU %u is listed twice in 'slow_gpus'", sg.gpu);
		z->slow_gpus[z->nslow_gpus++] = sg;
	}
}

static void read_noise(resolve_ctx *c, const yt_node *n, scn_noise *z)
{
	static const char *const keys[] = { "gpu_dist", "gpu_cv", "slow_nodes", "slow_factor", "os_jitter",
					    "os_jitter_delay", "slow_gpus", NULL };
	const yt_node *sg;
	int v;
	scn_only_keys(c->r, n, keys, "noise");
	if (scn_get_enum(c->r, n, "gpu_dist", false, scn_slowdown_words, &v))
		z->gpu_dist = (scn_slowdown)v;
	scn_get_q(c->r, n, "gpu_cv", false, UNIT_FRACTION, 0, 1, false, &z->gpu_cv);
	scn_get_q(c->r, n, "slow_nodes", false, UNIT_FRACTION, 0, 1, false, &z->slow_node_fraction);
	scn_get_q(c->r, n, "slow_factor", false, UNIT_NUMBER, 1, 100, false, &z->slow_node_factor);
	scn_get_q(c->r, n, "os_jitter", false, UNIT_FRACTION, 0, 0.5, false, &z->os_jitter);
	scn_get_q(c->r, n, "os_jitter_delay", false, UNIT_SECONDS, 0, 1, false, &z->os_jitter_delay_s);
	if (z->gpu_cv > 0 && z->gpu_dist == SCN_SLOW_NONE)
		scn_err(c->r, yt_get(n, "gpu_cv"), "'gpu_cv' needs 'gpu_dist' (lognormal or normal)");
	if (z->slow_node_fraction > 0 && z->slow_node_factor == 1)
		scn_err(c->r, yt_get(n, "slow_nodes"), "'slow_nodes' needs 'slow_factor' above 1");
	if ((sg = yt_get(n, "slow_gpus")) && sg->type != YT_NULL)
		read_slow_gpus(c, sg, z);
}

static void read_failures(resolve_ctx *c, const yt_node *n, scn_failures *f)
{
	static const char *const keys[] = { "node_mtbf", "gpu_mtbf", "nic_mtbf", "switch_mtbf",
					    "checkpoint_interval", "checkpoint_size", "restart",
					    "checkpoint_mode", NULL };
	int v;
	scn_only_keys(c->r, n, keys, "failures");
	f->enabled = true;
	f->gpu_mtbf_s = f->nic_mtbf_s = f->switch_mtbf_s = NAN;
	scn_get_q(c->r, n, "node_mtbf", true, UNIT_SECONDS, 0, INF, true, &f->node_mtbf_s);
	scn_get_q(c->r, n, "gpu_mtbf", false, UNIT_SECONDS, 0, INF, true, &f->gpu_mtbf_s);
	scn_get_q(c->r, n, "nic_mtbf", false, UNIT_SECONDS, 0, INF, true, &f->nic_mtbf_s);
	scn_get_q(c->r, n, "switch_mtbf", false, UNIT_SECONDS, 0, INF, true, &f->switch_mtbf_s);
	scn_get_q(c->r, n, "checkpoint_interval", true, UNIT_SECONDS, 0, INF, true, &f->checkpoint_interval_s);
	scn_get_q(c->r, n, "checkpoint_size", false, UNIT_BYTES, 0, 1e18, true, &f->checkpoint_bytes);
	scn_get_q(c->r, n, "restart", true, UNIT_SECONDS, 0, INF, false, &f->restart_s);
	if (scn_get_enum(c->r, n, "checkpoint_mode", false, scn_ckpt_mode_words, &v))
		f->checkpoint_mode = (scn_ckpt_mode)v;
}

/* A price: 0 (free), or between a billionth of a dollar and a million
 * dollars per hour (per kWh for energy), written as `per`: beyond, the
 * run's cost or its tokens per dollar overflow a double. */
static void read_price(resolve_ctx *c, const yt_node *n, const char *key, bool required, unit_dim dim,
		       double per_s, const char *per, double *out)
{
	const yt_node *at = yt_get(n, key);
	if (scn_get_q(c->r, n, key, required, dim, 0, INF, false, out) &&
	    (*out > 1e6 / per_s || (*out > 0 && *out < 1e-9 / per_s)))
		scn_err(c->r, at, "'%s' must be 0 or between 1e-9USD/%s and 1e6USD/%s (got '%s')", key,
			per, per, at->text);
}

static void read_cost(resolve_ctx *c, const yt_node *n, scn_cost *k)
{
	static const char *const keys[] = { "gpu_price", "dpu_price", "energy_price", "pue", NULL };
	scn_only_keys(c->r, n, keys, "cost");
	k->present = true;
	k->dpu_usd_per_s = k->energy_usd_per_j = NAN;
	k->pue = 1;
	read_price(c, n, "gpu_price", true, UNIT_USD_PER_S, 3600, "h", &k->gpu_usd_per_s);
	read_price(c, n, "dpu_price", c->s->cluster.has_dpu, UNIT_USD_PER_S, 3600, "h",
		   &k->dpu_usd_per_s);
	read_price(c, n, "energy_price", false, UNIT_USD_PER_J, 3.6e6, "kWh", &k->energy_usd_per_j);
	scn_get_q(c->r, n, "pue", false, UNIT_NUMBER, 1, 3, false, &k->pue);
}

static void read_security(resolve_ctx *c, const yt_node *n, scn_security *k)
{
	static const char *const keys[] = { "encryption", "tenant_isolation", NULL };
	static const char *const enc[] = { "optional", "required", NULL };
	int v;
	scn_only_keys(c->r, n, keys, "security");
	if (scn_get_enum(c->r, n, "encryption", false, enc, &v))
		k->encryption_required = v == 1;
	scn_get_bool(c->r, n, "tenant_isolation", &k->tenant_isolation);
}

/* collectives: the model every collective runs under (scn_coll_proto),
 * and whether a ring's steps run lumped (an approximation for speed). */
static void read_collectives(resolve_ctx *c, const yt_node *n, scn_scenario *s)
{
	static const char *const keys[] = { "protocol", "ring_steps", NULL };
	int v;
	scn_only_keys(c->r, n, keys, "collectives");
	if (scn_get_enum(c->r, n, "protocol", false, scn_coll_proto_words, &v))
		s->coll_proto = (scn_coll_proto)v;
	if (scn_get_enum(c->r, n, "ring_steps", false, scn_ring_steps_words, &v))
		s->lump_ring_steps = v == 1;
}

/* ---- the whole scenario ---- */

static const char *const top_keys[] = { "name", "description", "extends", "seed", "replications",
					"cluster", "workload", "jobs", "variants", "noise", "failures",
					"cost", "security", "collectives", "sweep", NULL };

static void read_top(resolve_ctx *c, const yt_node *root)
{
	scn_scenario *s = c->s;
	const yt_node *d = yt_get(root, "description");
	scn_only_keys(c->r, root, top_keys, "the scenario");
	scn_get_str(c->r, root, "name", false, s->name, sizeof s->name);
	if (d && d->type != YT_SCALAR)
		scn_err(c->r, d, "'description' must be text, not %s", yt_type_name(d->type));
	else if (d)
		s->description = strdup(d->text);
	s->seed = 1;
	scn_get_u64(c->r, root, "seed", &s->seed);
	s->replications = 1;
	scn_get_int(c->r, root, "replications", false, 1, 10000, &s->replications);
}

static void read_work(resolve_ctx *c, const yt_node *root)
{
	scn_scenario *s = c->s;
	const yt_node *w = yt_get(root, "workload"), *j = yt_get(root, "jobs");
	if (w && j)
		return scn_err(c->r, j, "give either 'workload' (one job on the whole cluster) or 'jobs', not both");
	if (j)
		return read_jobs(c, j);
	if (!(w = scn_section(c->r, root, "workload", true)))
		return;
	s->njobs = 1;
	s->jobs[0].nodes = s->cluster.nodes;
	snprintf(s->jobs[0].name, sizeof s->jobs[0].name, "%s", "job");
	s->jobs[0].at = where_of(w);
	if (read_workload(c, w, &s->jobs[0].wl))
		check_workload(c, w, &s->jobs[0].wl, s->cluster.nodes * s->cluster.gpus_per_node);
}

void scn_resolve(scn_rd *r, const yt_node *root, scn_scenario *s)
{
	resolve_ctx c = { .r = r, .s = s, .root = root };
	const yt_node *n;
	s->noise = (scn_noise){ .gpu_dist = SCN_SLOW_NONE, .slow_node_factor = 1 };
	read_top(&c, root);
	if ((n = c.cluster = scn_section(r, root, "cluster", true)))
		read_cluster(&c, n, &s->cluster);
	if ((n = scn_section(r, root, "security", false)))
		read_security(&c, n, &s->security);
	if (c.cluster)
		read_work(&c, root);
	if (!(n = yt_get(root, "variants")))
		scn_err_missing(r, root, "variants", "at least one offload variant, e.g. a baseline");
	else if (c.cluster)
		read_variants(&c, n);
	if ((n = scn_section(r, root, "noise", false)))
		read_noise(&c, n, &s->noise);
	if ((n = scn_section(r, root, "failures", false)))
		read_failures(&c, n, &s->failures);
	if ((n = scn_section(r, root, "cost", false)))
		read_cost(&c, n, &s->cost);
	if ((n = scn_section(r, root, "collectives", false)))
		read_collectives(&c, n, s);
}
