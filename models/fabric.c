/* Topology generation and routing over flow-solver resources (fabric.h).
 *
 * Every full-duplex link is two consecutive resources: `up` (towards the
 * switch or the higher tier) and up + 1 (back down). A leaf has d host
 * ports and u uplinks with d / u = oversub and d + u = radix; the u
 * uplinks go one to each spine (two tiers) or one to each aggregation
 * switch of its pod (three tiers), where an aggregation switch has radix/2
 * leaves below and radix/2 uplinks, one to each core switch of its group.
 *
 * D-mod-K numbers the NIC ports in leaf order (leaf l's i-th host port is
 * l * d + i), as OpenSM's fat-tree engine orders the end ports it routes
 * (its CA ordering), and sends destination D up leaf uplink D mod u and,
 * in three tiers, up aggregation uplink (D / u) mod k. On a full fat tree
 * each down link then carries one destination only, and the d consecutive
 * destinations of one leaf's sources in a shift leave by d distinct
 * uplinks. */
#include "models/fabric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"

#define NONE UINT32_MAX

enum lkind { L_NIC, L_LEAF, L_AGG, L_NVL, L_GPU_PCIE, L_NIC_PCIE, L_SW_PCIE, L_MEM };

typedef struct lname {
	uint8_t kind;
	uint32_t a, b, c;
} lname;

struct fab {
	fab_config cfg;
	flow_net *net;
	uint32_t base, nres;       /* our resource ids are [base, base + nres) */
	lname *names;              /* per link (per pair of resources) */
	size_t names_cap;          /* links names has room for */
	uint32_t ranks, ports;     /* ports = nodes * nics */
	uint32_t d, u;             /* host ports and uplinks per leaf */
	uint32_t leaves, spines, pods, per_pod, cores_per_group;
	uint32_t *port_leaf, *port_link;
	uint32_t *port_dix;        /* D-mod-K: the port's place in leaf order */
	uint32_t *leaf_up;         /* leaves * u */
	uint32_t *agg_up;          /* pods * u * cores_per_group */
	uint32_t *nvl, *gpu_pcie, *nic_pcie, *sw_pcie, *mem;
	uint32_t (*attached)[FAB_ATTACH_MAX]; /* per node: resources on its NIC paths */
	uint8_t *nattached;
	uint32_t *held;            /* per our resource: paths routed since fab_hold_begin */
	uint32_t *held_ids;        /* the resources held counts, so fab_hold_end clears */
	uint32_t nheld;            /* only those, not the whole fabric */
	bool holding;
};

static const struct {
	const char *name, *words;
} class_names[FAB_NCLASSES] = {
	[FAB_CLS_OTHER] = { "other", "other limits" },
	[FAB_CLS_CONN] = { "conn_core", "one core per connection" },
	[FAB_CLS_HOST_CORES] = { "host_cores", "the host's stack cores" },
	[FAB_CLS_HOST_MEM] = { "host_mem", "host memory" },
	[FAB_CLS_PCIE] = { "pcie", "PCIe" },
	[FAB_CLS_NIC] = { "nic", "NIC ports" },
	[FAB_CLS_FABRIC] = { "fabric", "switch links" },
	[FAB_CLS_NVLINK] = { "nvlink", "NVLink" },
	[FAB_CLS_ENGINE] = { "engine", "the DPU/NIC engine" },
	[FAB_CLS_STORAGE] = { "storage", "storage" },
};

const char *fab_class_name(fab_class c)
{
	return c < FAB_NCLASSES ? class_names[c].name : "?";
}

const char *fab_class_words(fab_class c)
{
	return c < FAB_NCLASSES ? class_names[c].words : "?";
}

static fab_class link_class(enum lkind kind)
{
	static const fab_class cls[] = { [L_NIC] = FAB_CLS_NIC, [L_LEAF] = FAB_CLS_FABRIC,
		[L_AGG] = FAB_CLS_FABRIC, [L_NVL] = FAB_CLS_NVLINK, [L_GPU_PCIE] = FAB_CLS_PCIE,
		[L_NIC_PCIE] = FAB_CLS_PCIE, [L_SW_PCIE] = FAB_CLS_PCIE, [L_MEM] = FAB_CLS_HOST_MEM };
	return cls[kind];
}

static int add_link(fab *f, double cap_Bps, enum lkind kind, uint32_t a, uint32_t b,
		    uint32_t c, uint32_t *up)
{
	uint32_t id, down;
	lname *nn;
	if (flow_res_add(f->net, cap_Bps, &id) || flow_res_add(f->net, cap_Bps, &down))
		return SIM_ENOMEM;
	flow_res_set_class(f->net, id, (uint8_t)link_class(kind));
	flow_res_set_class(f->net, down, (uint8_t)link_class(kind));
	/* doubling: one element a link copied the table for every link, a
	 * quadratic build (65,536 ports: over a minute under ASan, whose
	 * realloc always moves) */
	if (f->nres / 2 == f->names_cap) {
		size_t cap = f->names_cap ? 2 * f->names_cap : 64;
		if (!(nn = realloc(f->names, cap * sizeof *nn)))
			return SIM_ENOMEM;
		f->names = nn;
		f->names_cap = cap;
	}
	f->names[f->nres / 2] = (lname){ .kind = (uint8_t)kind, .a = a, .b = b, .c = c };
	f->nres += 2;
	*up = id;
	return 0;
}

/* A one-directional resource (host memory) takes a link slot too, so ids
 * stay paired; its second resource is unused. */
static int add_mem(fab *f, uint32_t node, uint32_t *id)
{
	return add_link(f, f->cfg.host_mem_Bps, L_MEM, node, 0, 0, id);
}

static uint32_t *table(size_t n)
{
	uint32_t *t = malloc((n ? n : 1) * sizeof *t);
	if (t)
		for (size_t i = 0; i < n; i++)
			t[i] = NONE;
	return t;
}

static int check_cfg(const fab_config *c)
{
	if (!c->nodes || !c->gpus_per_node || !c->nics_per_node || !(c->link_Bps > 0) ||
	    c->hop_lat_ps < 0 || c->switch_lat_ps < 0 || c->nvlink_lat_ps < 0 ||
	    c->pcie_lat_ps < 0 || c->nvlink_Bps < 0 || c->pcie_Bps < 0 || c->host_mem_Bps < 0 ||
	    !(c->payload_frac >= 0 && c->payload_frac <= 1))
		return SIM_EINVAL;
	if (c->nics_per_node > c->gpus_per_node && c->topo != FAB_RAIL)
		return SIM_EINVAL;
	if (c->topo != FAB_SINGLE_SWITCH && (c->radix < 2 || !(c->oversub >= 1)))
		return SIM_EINVAL;
	if ((uint64_t)c->nodes * c->gpus_per_node > UINT32_MAX / 2)
		return SIM_ERANGE;
	return 0;
}

double fab_link_payload_Bps(const fab_config *c)
{
	return c->payload_frac > 0 ? c->link_Bps * c->payload_frac : c->link_Bps;
}

/* Host ports per leaf: d / (radix - d) as close to oversub as integers allow.
 * From oversub = radix on that is radix - 1, and computing it there
 * overflowed: radix x 1e308 is inf, lround(inf / 1e308) unspecified (0 on
 * x86), and a leaf of no hosts divided by zero. */
static uint32_t leaf_hosts(const fab_config *c)
{
	uint32_t d;
	if (c->oversub >= c->radix)
		return c->radix - 1;
	d = (uint32_t)lround((double)c->radix * c->oversub / (1 + c->oversub));
	return d >= c->radix ? c->radix - 1 : d;
}

/* Leaf shape: d host ports, u uplinks. */
static void leaf_shape(fab *f)
{
	f->d = leaf_hosts(&f->cfg);
	f->u = f->cfg.radix - f->d;
}

/* As place_ports and build_network refuse: one switch holds radix ports;
 * two tiers and rails at most radix leaves (a spine has a port for each);
 * three tiers at most radix pods of radix/2 leaves. */
uint64_t fab_max_ports(const fab_config *c)
{
	uint64_t d;
	if (c->topo == FAB_SINGLE_SWITCH)
		return c->radix ? c->radix : UINT64_MAX;
	if (c->radix < 2 || !(c->oversub >= 1))
		return 0;
	d = leaf_hosts(c);
	if (c->topo == FAB_FAT_TREE3)
		return (uint64_t)c->radix * (c->radix / 2) * d;
	if (c->topo == FAB_RAIL)
		return c->nics_per_node ? (uint64_t)(c->radix / c->nics_per_node) * d * c->nics_per_node : 0;
	return (uint64_t)c->radix * d;
}

/* Which leaf each NIC port sits on, and how many leaves. */
static int place_ports(fab *f)
{
	const fab_config *c = &f->cfg;
	f->port_leaf = table(f->ports);
	f->port_dix = table(f->ports);
	if (!f->port_leaf || !f->port_dix)
		return SIM_ENOMEM;
	if (c->topo == FAB_SINGLE_SWITCH) {
		if (c->radix && f->ports > c->radix)
			return SIM_EINVAL;
		f->leaves = 1;
		for (uint32_t p = 0; p < f->ports; p++)
			f->port_leaf[p] = 0, f->port_dix[p] = p;
		return 0;
	}
	leaf_shape(f);
	if (c->topo == FAB_RAIL) {
		uint32_t per_rail = (c->nodes + f->d - 1) / f->d;
		f->leaves = per_rail * c->nics_per_node;
		for (uint32_t p = 0; p < f->ports; p++) {
			uint32_t node = p / c->nics_per_node;
			f->port_leaf[p] = (p % c->nics_per_node) * per_rail + node / f->d;
			f->port_dix[p] = f->port_leaf[p] * f->d + node % f->d;
		}
		return 0;
	}
	f->leaves = (f->ports + f->d - 1) / f->d;
	for (uint32_t p = 0; p < f->ports; p++)
		f->port_leaf[p] = p / f->d, f->port_dix[p] = p;
	return 0;
}

/* The NIC and switch links carry payload at their data rate less the
 * packets' headers (fabric.h, payload_frac). */
static int build_network(fab *f)
{
	const fab_config *c = &f->cfg;
	double link = fab_link_payload_Bps(c);
	int rc;
	f->port_link = table(f->ports);
	if (!f->port_link)
		return SIM_ENOMEM;
	for (uint32_t p = 0; p < f->ports; p++)
		if ((rc = add_link(f, link, L_NIC, p / c->nics_per_node, p % c->nics_per_node,
				   f->port_leaf[p], &f->port_link[p])))
			return rc;
	if (c->topo == FAB_SINGLE_SWITCH)
		return 0;
	if (c->topo == FAB_FAT_TREE3) {
		f->per_pod = c->radix / 2;
		f->pods = (f->leaves + f->per_pod - 1) / f->per_pod;
		f->cores_per_group = c->radix - f->per_pod;
		if (f->pods > c->radix)
			return SIM_EINVAL;
	} else if (f->leaves > c->radix) {
		return SIM_EINVAL; /* a spine cannot reach every leaf: three tiers needed */
	}
	f->spines = f->u;
	f->leaf_up = table((size_t)f->leaves * f->u);
	if (!f->leaf_up)
		return SIM_ENOMEM;
	for (uint32_t l = 0; l < f->leaves; l++)
		for (uint32_t j = 0; j < f->u; j++)
			if ((rc = add_link(f, link, L_LEAF, l, j, 0, &f->leaf_up[l * f->u + j])))
				return rc;
	if (c->topo != FAB_FAT_TREE3)
		return 0;
	f->agg_up = table((size_t)f->pods * f->u * f->cores_per_group);
	if (!f->agg_up)
		return SIM_ENOMEM;
	for (uint32_t p = 0; p < f->pods; p++)
		for (uint32_t j = 0; j < f->u; j++)
			for (uint32_t k = 0; k < f->cores_per_group; k++)
				if ((rc = add_link(f, link, L_AGG, p, j, k,
						   &f->agg_up[(p * f->u + j) * f->cores_per_group + k])))
					return rc;
	return 0;
}

static int build_nodes(fab *f)
{
	const fab_config *c = &f->cfg;
	int rc = 0;
	f->nvl = table(f->ranks);
	f->gpu_pcie = table(f->ranks);
	f->nic_pcie = table(f->ports);
	f->sw_pcie = table(f->ports);
	f->mem = table(c->nodes);
	if (!f->nvl || !f->gpu_pcie || !f->nic_pcie || !f->sw_pcie || !f->mem)
		return SIM_ENOMEM;
	for (uint32_t r = 0; r < f->ranks && !rc; r++) {
		uint32_t n = r / c->gpus_per_node, g = r % c->gpus_per_node;
		if (c->nvlink_Bps > 0)
			rc = add_link(f, c->nvlink_Bps, L_NVL, n, g, 0, &f->nvl[r]);
		if (!rc && c->pcie_Bps > 0)
			rc = add_link(f, c->pcie_Bps, L_GPU_PCIE, n, g, 0, &f->gpu_pcie[r]);
	}
	for (uint32_t p = 0; p < f->ports && !rc && c->pcie_Bps > 0; p++) {
		uint32_t n = p / c->nics_per_node, k = p % c->nics_per_node;
		rc = add_link(f, c->pcie_Bps, L_NIC_PCIE, n, k, 0, &f->nic_pcie[p]);
		if (!rc && c->pcie == FAB_PCIE_SWITCH)
			rc = add_link(f, c->pcie_Bps, L_SW_PCIE, n, k, 0, &f->sw_pcie[p]);
	}
	for (uint32_t n = 0; n < c->nodes && !rc && c->host_mem_Bps > 0; n++)
		rc = add_mem(f, n, &f->mem[n]);
	return rc;
}

int fab_new(const fab_config *cfg, flow_net *net, fab **out)
{
	fab *f;
	int rc = check_cfg(cfg);
	*out = NULL;
	if (rc)
		return rc;
	/* too many ports for the topology: refused before the links are built
	 * (65,536 of them were built for a radix-4 tree that holds 8) */
	if ((uint64_t)cfg->nodes * cfg->nics_per_node > fab_max_ports(cfg))
		return SIM_EINVAL;
	f = calloc(1, sizeof *f);
	if (!f)
		return SIM_ENOMEM;
	*f = (fab){ .cfg = *cfg, .net = net, .base = (uint32_t)flow_res_count(net),
		    .ranks = cfg->nodes * cfg->gpus_per_node,
		    .ports = cfg->nodes * cfg->nics_per_node };
	if ((rc = place_ports(f)) || (rc = build_network(f)) || (rc = build_nodes(f))) {
		fab_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

void fab_free(fab *f)
{
	if (!f)
		return;
	free(f->names);
	free(f->port_leaf);
	free(f->port_link);
	free(f->port_dix);
	free(f->leaf_up);
	free(f->agg_up);
	free(f->nvl);
	free(f->gpu_pcie);
	free(f->nic_pcie);
	free(f->sw_pcie);
	free(f->mem);
	free(f->held);
	free(f->held_ids);
	free(f->attached);
	free(f->nattached);
	free(f);
}

int fab_attach(fab *f, uint32_t node, uint32_t res)
{
	if (node >= f->cfg.nodes || res >= flow_res_count(f->net))
		return SIM_EINVAL;
	if (!f->attached) {
		f->attached = calloc(f->cfg.nodes, sizeof *f->attached);
		f->nattached = calloc(f->cfg.nodes, sizeof *f->nattached);
		if (!f->attached || !f->nattached)
			return SIM_ENOMEM;
	}
	if (f->nattached[node] == FAB_ATTACH_MAX)
		return SIM_ERANGE;
	f->attached[node][f->nattached[node]++] = res;
	return 0;
}

static void push_attached(const fab *f, uint32_t node, fab_path *p);

int fab_hold_begin(fab *f)
{
	if (!f->held) {
		f->held = calloc(f->nres ? f->nres : 1, sizeof *f->held);
		f->held_ids = malloc((f->nres ? f->nres : 1) * sizeof *f->held_ids);
		if (!f->held || !f->held_ids) {
			free(f->held);
			free(f->held_ids);
			f->held = f->held_ids = NULL;
			return SIM_ENOMEM;
		}
	}
	f->holding = true;
	return 0;
}

void fab_hold_end(fab *f)
{
	for (uint32_t i = 0; i < f->nheld; i++)
		f->held[f->held_ids[i]] = 0;
	f->nheld = 0;
	f->holding = false;
}

static void hold_path(fab *f, const fab_path *p)
{
	for (uint32_t i = 0; f->holding && i < p->len; i++)
		if (p->res[i] >= f->base && p->res[i] < f->base + f->nres &&
		    f->held[p->res[i] - f->base]++ == 0)
			f->held_ids[f->nheld++] = p->res[i] - f->base;
}

uint32_t fab_ranks(const fab *f) { return f->ranks; }
const fab_config *fab_cfg(const fab *f) { return &f->cfg; }

uint32_t fab_net_switches(const fab *f)
{
	if (f->cfg.topo == FAB_FAT_TREE3)
		return f->leaves + f->pods * f->u + f->u * f->cores_per_group;
	return f->leaves + f->spines;
}

uint32_t fab_switches(const fab *f)
{
	return fab_net_switches(f) + (f->cfg.nvlink_Bps > 0 ? f->cfg.nodes : 0);
}

uint32_t fab_links(const fab *f)
{
	uint32_t mem = f->cfg.host_mem_Bps > 0 ? f->cfg.nodes : 0;
	return f->nres / 2 - mem;
}

double fab_leaf_up_Bps(const fab *f)
{
	return f->cfg.topo == FAB_SINGLE_SWITCH ? 0
	       : (double)f->leaves * f->u * fab_link_payload_Bps(&f->cfg);
}

double fab_leaf_down_Bps(const fab *f)
{
	return (double)f->ports * fab_link_payload_Bps(&f->cfg);
}

uint32_t fab_nic_up(const fab *f, uint32_t rank)
{
	uint32_t g = rank % f->cfg.gpus_per_node, node = rank / f->cfg.gpus_per_node;
	return f->port_link[node * f->cfg.nics_per_node + g * f->cfg.nics_per_node / f->cfg.gpus_per_node];
}

static uint32_t port_of(const fab *f, uint32_t rank)
{
	uint32_t g = rank % f->cfg.gpus_per_node, node = rank / f->cfg.gpus_per_node;
	return node * f->cfg.nics_per_node + g * f->cfg.nics_per_node / f->cfg.gpus_per_node;
}

uint32_t fab_leaf_of(const fab *f, uint32_t rank) { return f->port_leaf[port_of(f, rank)]; }
uint32_t fab_leaves(const fab *f) { return f->leaves; }
uint32_t fab_uplinks(const fab *f) { return f->leaf_up ? f->u : 0; }

uint32_t fab_leaf_up(const fab *f, uint32_t leaf, uint32_t j)
{
	return f->leaf_up && leaf < f->leaves && j < f->u ? f->leaf_up[leaf * f->u + j] : NONE;
}

uint32_t fab_nic_down(const fab *f, uint32_t rank) { return fab_nic_up(f, rank) + 1; }
uint32_t fab_gpu_pcie(const fab *f, uint32_t rank) { return f->gpu_pcie[rank]; }
uint32_t fab_pcie_uplink(const fab *f, uint32_t rank) { return f->sw_pcie[port_of(f, rank)]; }
uint32_t fab_nvl_up(const fab *f, uint32_t rank) { return f->nvl[rank]; }
uint32_t fab_nvl_down(const fab *f, uint32_t rank) { return f->nvl[rank] == NONE ? NONE : f->nvl[rank] + 1; }
uint32_t fab_host_mem(const fab *f, uint32_t node)
{
	return node < f->cfg.nodes ? f->mem[node] : NONE;
}

static void push(fab_path *p, uint32_t res)
{
	if (res == NONE)
		return;
	SIM_ASSERT(p->len < FAB_PATH_MAX, "fabric path longer than %d resources", FAB_PATH_MAX);
	p->res[p->len++] = res;
}

static void push_attached(const fab *f, uint32_t node, fab_path *p)
{
	for (uint32_t i = 0; f->attached && i < f->nattached[node]; i++)
		push(p, f->attached[node][i]);
}

static uint64_t mix64(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* The busiest of up to four links, in flows: adaptive routing's score;
 * once it reaches `beat` (the best candidate's so far: only a lower score
 * wins) the rest cannot matter and it stops. A link whose flows, parked
 * ones counted too (an O(1) bound), cannot raise the score is not counted
 * (flow_res_nflows reads each of its entries while any flow is parked): the
 * choice is the one of counting every link. */
static uint32_t busiest(const fab *f, const uint32_t *links, int n, uint32_t beat)
{
	uint32_t m = 0;
	for (int i = 0; i < n && m < beat; i++) {
		uint32_t held = f->holding ? f->held[links[i] - f->base] : 0, k;
		if (flow_res_nflows_bound(f->net, links[i]) + held <= m)
			continue;
		k = flow_res_nflows(f->net, links[i]) + held;
		m = k > m ? k : m;
	}
	return m;
}

/* Picks (j, k) among u uplinks x kc core links towards NIC port b: by
 * destination (D-mod-K), by hash, or the least loaded starting from the
 * hashed one so ties spread like ECMP. */
static void pick(const fab *f, uint64_t h, uint32_t b, uint32_t la, uint32_t lb, uint32_t pa,
		 uint32_t pb, uint32_t kc, uint32_t *j, uint32_t *k)
{
	uint32_t n = f->u * kc, start = (uint32_t)(h % n), best = NONE;
	if (f->cfg.routing == FAB_DMODK) {
		*j = f->port_dix[b] % f->u;
		*k = f->port_dix[b] / f->u % kc;
		return;
	}
	*j = start / kc;
	*k = start % kc;
	if (f->cfg.routing != FAB_ADAPTIVE)
		return;
	/* The first least-loaded from start wins, so an idle candidate ends the
	 * search: none after it can score below 0. Candidates come k fastest:
	 * the leaf links of uplink j, common to its kc, are counted once per
	 * run of them, and a run whose leaf links alone reach the best score
	 * is passed over (none of it can score lower). */
	uint32_t lj = NONE, lscore = 0;
	for (uint32_t i = 0; i < n && best != 0; i++) {
		uint32_t c = (start + i) % n, cj = c / kc, ck = c % kc, links[2], score;
		if (cj != lj) {
			lj = cj;
			links[0] = f->leaf_up[la * f->u + cj];
			links[1] = f->leaf_up[lb * f->u + cj] + 1;
			lscore = busiest(f, links, 2, NONE);
		}
		if (best != NONE && lscore >= best) {
			i += kc - 1 - ck; /* to the last of this run (c wraps only at one's end) */
			continue;
		}
		score = lscore;
		if (f->agg_up && pa != pb) {
			links[0] = f->agg_up[(pa * f->u + cj) * f->cores_per_group + ck];
			links[1] = f->agg_up[(pb * f->u + cj) * f->cores_per_group + ck] + 1;
			score = busiest(f, links, 2, best);
			score = score > lscore ? score : lscore;
		}
		if (best == NONE || score < best)
			best = score, *j = cj, *k = ck;
	}
}

/* NIC port a to NIC port b through the switches. */
static void route_network(const fab *f, uint32_t a, uint32_t b, uint64_t h, fab_path *p)
{
	uint32_t la = f->port_leaf[a], lb = f->port_leaf[b], j, k;
	push(p, f->port_link[a]);
	p->links += 2;
	p->switches += 1;
	if (la != lb && f->cfg.topo != FAB_FAT_TREE3) {
		pick(f, h, b, la, lb, 0, 0, 1, &j, &k);
		push(p, f->leaf_up[la * f->u + j]);
		push(p, f->leaf_up[lb * f->u + j] + 1);
		p->links += 2, p->switches += 2;
	} else if (la != lb) {
		uint32_t pa = la / f->per_pod, pb = lb / f->per_pod;
		pick(f, h, b, la, lb, pa, pb, pa == pb ? 1 : f->cores_per_group, &j, &k);
		push(p, f->leaf_up[la * f->u + j]);
		if (pa != pb) {
			push(p, f->agg_up[(pa * f->u + j) * f->cores_per_group + k]);
			push(p, f->agg_up[(pb * f->u + j) * f->cores_per_group + k] + 1);
			p->links += 2, p->switches += 2;
		}
		push(p, f->leaf_up[lb * f->u + j] + 1);
		p->links += 2, p->switches += 2;
	}
	push(p, f->port_link[b] + 1);
}

static uint32_t down_of(uint32_t id) { return id == NONE ? NONE : id + 1; }

uint32_t fab_end_mem_passes(fab_end end)
{
	switch (end) {
	case FAB_END_HOST:
		return 1; /* the NIC's DMA */
	case FAB_END_STAGED:
		return 2; /* written, then read back */
	case FAB_END_SOCKET:
		return 4; /* and the socket copy: read, and written */
	case FAB_END_GPU:
		break;
	}
	return 0;
}

/* From the data's place in node memory to the NIC (or back, when in). */
static void node_end(const fab *f, uint32_t rank, uint32_t port, fab_end end, bool in, fab_path *p)
{
	bool sw = f->cfg.pcie == FAB_PCIE_SWITCH;
	uint32_t gpu = f->gpu_pcie[rank], nic = f->nic_pcie[port], swl = f->sw_pcie[port];
	uint32_t mem = f->mem[rank / f->cfg.gpus_per_node], seq[8], n = 0, hops;
	if (end == FAB_END_GPU) {
		seq[n++] = in ? down_of(gpu) : gpu;
		hops = sw ? 2 : 3; /* root complex: one more crossing */
	} else if (end == FAB_END_HOST) {
		seq[n++] = mem; /* fab_end_mem_passes: once */
		if (sw)
			seq[n++] = in ? swl : down_of(swl);
		hops = sw ? 2 : 1;
	} else {
		seq[n++] = in ? down_of(gpu) : gpu;
		if (sw)
			seq[n++] = in ? down_of(swl) : swl;
		for (uint32_t k = 0; k < fab_end_mem_passes(end); k++)
			seq[n++] = mem;
		if (sw)
			seq[n++] = in ? swl : down_of(swl);
		hops = sw ? 4 : 2;
	}
	if (in) {
		push_attached(f, rank / f->cfg.gpus_per_node, p);
		push(p, nic);
		for (uint32_t i = n; i-- > 0;)
			push(p, seq[i]);
	} else {
		for (uint32_t i = 0; i < n; i++)
			push(p, seq[i]);
		push(p, down_of(nic));
		push_attached(f, rank / f->cfg.gpus_per_node, p);
	}
	p->lat_ps += (sim_time)hops * f->cfg.pcie_lat_ps;
}

int fab_node_path(const fab *f, uint32_t rank, fab_end end, bool in, fab_path *out)
{
	if (rank >= f->ranks)
		return SIM_EINVAL;
	*out = (fab_path){ .len = 0 };
	node_end(f, rank, port_of(f, rank), end, in, out);
	return 0;
}

bool fab_leaves_node(const fab *f, uint32_t src, uint32_t dst)
{
	const fab_config *c = &f->cfg;
	return src / c->gpus_per_node != dst / c->gpus_per_node || !(c->nvlink_Bps > 0);
}

int fab_route(fab *f, uint32_t src, uint32_t dst, uint64_t key, fab_end src_end,
	      fab_end dst_end, fab_path *out)
{
	const fab_config *c = &f->cfg;
	uint32_t gpn = c->gpus_per_node, nics = c->nics_per_node, a, b;
	uint64_t h;
	if (src >= f->ranks || dst >= f->ranks || src == dst)
		return SIM_EINVAL;
	*out = (fab_path){ .len = 0 };
	if (!fab_leaves_node(f, src, dst)) {
		push(out, f->nvl[src]);
		push(out, f->nvl[dst] + 1);
		out->lat_ps = c->nvlink_lat_ps;
		return 0;
	}
	a = (src / gpn) * nics + (src % gpn) * nics / gpn;
	b = (dst / gpn) * nics + (dst % gpn) * nics / gpn;
	h = mix64(c->seed ^ mix64(key ^ ((uint64_t)src << 32 | dst)));
	node_end(f, src, a, src_end, false, out);
	route_network(f, a, b, h, out);
	node_end(f, dst, b, dst_end, true, out);
	hold_path(f, out);
	out->lat_ps += (sim_time)out->links * c->hop_lat_ps + (sim_time)out->switches * c->switch_lat_ps;
	return 0;
}

char *fab_res_name(const fab *f, uint32_t res, char *buf, size_t n)
{
	static const char *const fmt[][2] = {
		[L_NIC] = { "n%u.nic%u", "leaf%u" },       [L_LEAF] = { "leaf%u", "up%u" },
		[L_AGG] = { "agg%u.%u", "core%u.%u" },      [L_NVL] = { "n%u.g%u", "nvswitch%u" },
		[L_GPU_PCIE] = { "n%u.g%u", "pcie" },      [L_NIC_PCIE] = { "n%u.nic%u", "pcie" },
		[L_SW_PCIE] = { "n%u.pcisw%u", "root" },   [L_MEM] = { "n%u.mem", "" },
	};
	char a[40], b[40];
	const lname *l;
	if (res < f->base || res >= f->base + f->nres) {
		snprintf(buf, n, "res%u", res);
		return buf;
	}
	l = &f->names[(res - f->base) / 2];
	snprintf(a, sizeof a, fmt[l->kind][0], l->a, l->b);
	if (l->kind == L_AGG)
		snprintf(b, sizeof b, fmt[l->kind][1], l->b, l->c);
	else if (l->kind == L_NVL)
		snprintf(b, sizeof b, fmt[l->kind][1], l->a);
	else
		snprintf(b, sizeof b, fmt[l->kind][1], l->kind == L_NIC ? l->c : l->b);
	if (l->kind == L_MEM)
		snprintf(buf, n, "%s", a);
	else if ((res - f->base) % 2 == 0)
		snprintf(buf, n, "%s>%s", a, b);
	else
		snprintf(buf, n, "%s>%s", b, a);
	return buf;
}
