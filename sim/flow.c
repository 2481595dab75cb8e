/* Max-min fair flow solver (see flow.h).
 *
 * A flow's path is kept as its distinct resources ("slots"), each with the
 * number of times the path names it. Each resource keeps one (flow, slot)
 * entry per distinct flow crossing it, and each slot keeps its index in
 * that list, so a flow joins and leaves in O(distinct path) with
 * swap-removal.
 *
 * A kept flow that finishes "parks" (park) instead of leaving: it stays in
 * the lists of all its resources, at rate 0 and frozen, flagged so that
 * nobody counts it: flow_res_nflows and the water-filling's counts pass
 * over it (live_occ, res_extra), walks and re-solves skip it. A flow
 * joining a resource it is alone on evicts it (attach_slot), and the
 * restart (unpark) adds back only the slots out of their lists; its least
 * private cap is found in its slots sorted by cap, past the shared ones.
 * So a ring's step costs the resources others took meanwhile and its
 * solve, not a leave and a join of the hundreds of resources of its whole
 * ring, most of them shared with the ring's other flows at 16k GPUs
 * (issue 14). Its entries keep their places in the lists, where a leave
 * and a join would have moved them to the end: the flows of a walk come
 * in another order, so a rate may differ from the leave-and-join one in a
 * last bit, and completions at one instant may run in another order. Ties
 * in what holds a flow (flow_bound) are broken by rule, never by that
 * order: its cap, then a private resource, then the least id.
 *
 * A weighted flow keeps each slot's weights summed (wt); every use of a
 * slot's count as what the flow takes of it per unit of rate goes through
 * slot_w, where an unweighted flow's weight is its count of occurrences.
 * A resource counts its entries of weighted flows (nweighted); water-filling
 * adds their weights beyond their occurrences (wt_extra, 0 when nweighted
 * is) to its count of unfrozen occurrences, so that unweighted resources
 * and flows divide by plain occurrence counts, with no floating sum to
 * perturb their rates.
 *
 * A resource crossed by one flow only is "private" to it: it cannot tie
 * that flow's rate to anyone else's, so it acts as a rate cap, cap/times
 * (cap/weight).
 * A flow keeps its shared slots first and its private ones after, and the
 * least private cap cached; a join or leave that changes a resource's
 * sharing moves the other flow's slot across in O(1). Components are then
 * walked and water-filled over shared resources only: a collective whose
 * flows each cross hundreds of NVLink, PCIe and NIC resources of their own
 * but meet on a few switch links costs those few links per solve.
 *
 * Of the shared resources, only the tight ones count (res_tight): a
 * resource whose flows, each at its upper bound (its cap and every slot's
 * cap / weight, fflow.ub_Bps), would still leave it SLACK_EPS free can
 * never hold any of them, so it links no flows into a component and
 * water-filling never reads it. The shared slots keep the tight ones
 * first (ntight); a resource tracks the sum of its entries' bounds and
 * moves its entries' slots across when a join or leave flips it. Host
 * TCP's connections, capped well below a link, cross hundreds of links
 * and node buses that are slack: their components shrink from the whole
 * cluster to what really contends.
 *
 * A leave marks the resources the flow shared dirty, unless none was
 * saturated (see quiet); a start or restart lists the flow as joined. One
 * solve event per instant first places the joined flows that fit at their
 * own limit without saturating anything (place_quietly), then walks the
 * component of each dirty resource (shared resources <-> flows) and
 * water-fills it, or, incremental (the default), only the part of it the
 * change can move (resolve_changed), filling only the resources of that
 * part which may hold a flow. A flow's progress is lazy: bytes_left
 * is exact as of t_last, its last rate change, and its completion event is
 * moved only when its rate really changes.
 *
 * A path many flows cross in turn (a pipeline connection's, once per
 * microbatch) can be prepared once (flow_path): its slots, weights, upper
 * bound and slots by cap, as set_slots, set_weights, set_ub and
 * sort_slot_caps make them, are copied (the slots, which a flow reorders)
 * or shared read-only (the caps by order, which priv_cap_Bps then reads
 * as a kept flow's), so a start costs its joins, not reading and sorting
 * its path again. The flow is the same, slot for slot: rates, times and
 * bounds are those of a flow started on the path itself, to the bit. */
#include "sim/flow.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/alloc.h"
#include "sim/err.h"

#define NO_FLOW UINT32_MAX
#define NO_POS UINT32_MAX /* a slot not in its resource's list */
#define BY_CAP UINT32_MAX /* fflow.bound: held by its own cap */
#define TIE_EPS 1e-12  /* shares this close (relative) are one level */
#define CHECK_EPS 1e-9
#define QUIET_EPS 1e-9 /* a resource this close to its capacity counts as saturated */
#define QUIET_SCAN 256 /* most entries a test for a change without a solve reads */
#define SLACK_EPS 1e-6 /* a resource its flows' bounds fill to within this is tight */
#define ROOM_EPS 1e-7  /* a re-solve fills a resource loaded to within this of its capacity */

typedef struct fentry {
	uint32_t flow;
	uint32_t slot;
	uint32_t times;  /* the slot's occurrences (fixed), read here where a walk
			  * would otherwise read the flow's slot */
} fentry;

/* A resource as a join or a leave sees it: one 64-byte line (the array is
 * 64-byte aligned, res_grow), with its first entry in it. A path crosses
 * about a hundred resources, most of them alone at any time (private), out
 * of hundreds of thousands at 16k GPUs: a join or leave on one is then one
 * cache miss, where an 80-byte record with its scratch (two lines) and an
 * entry list of its own (a third) were three. The water-filling's scratch
 * is in fscr, a parallel array only solves read. */
typedef struct fres {
	double cap_Bps;
	double ub_sum_Bps; /* sum over entries of weight x their flow's ub_Bps */
	fentry *more;    /* entries 1..nent-1 (more_cap of room), NULL until needed */
	fentry first;    /* entry 0: one per distinct flow, res_ent */
	uint32_t nent, more_cap;
	uint32_t occ;    /* path occurrences over its flows */
	uint32_t nweighted; /* entries of weighted flows (fflow.wt) */
	uint32_t stamp;  /* path dedup scratch: net->stamp when last seen, */
	uint32_t at;     /* and the slot it got */
	bool tight;      /* shared, and its flows' bounds could fill it (res_tight) */
	bool dirty;
	uint8_t cls;     /* flow_res_set_class */
} fres;

_Static_assert(sizeof(fres) == 64, "a resource's join/leave record is one cache line");

typedef struct fscr { /* a resource's solve scratch (net->scr, by resource id) */
	double rem_Bps;  /* capacity not yet given out (left out of an incremental
			  * re-solve's filling: its load, add_filled) */
	double wt_extra; /* unfrozen weighted flows' weights beyond their occurrences */
	uint32_t mark;   /* component walk epoch */
	uint32_t left;   /* water-filling: occurrences of unfrozen flows */
	uint32_t ci;     /* water-filling: place in the filling, NO_POS if left out */
	bool touched;    /* in net->touched */
} fscr;

typedef struct fslot {
	uint32_t res;
	uint32_t times;  /* occurrences in the path */
	uint32_t pos;    /* index of this flow's entry in res's list, or NO_POS */
} fslot;

/* A cap and whose it is: a flow's (the component's heaps of capped flows)
 * or a resource's (fflow.bycap, a kept flow's or a prepared path's slots by cap). */
typedef struct fcapped {
	double cap_Bps;
	uint32_t id;
} fcapped;

typedef struct fflow {
	uint64_t bytes;
	double left_bytes;  /* as of t_last */
	double rate_Bps;
	double cap_Bps;
	sim_time t_last;
	fslot *slot;        /* nslot distinct resources: nshared shared (ntight tight
			     * first, then slack), then private */
	double *wt;         /* per slot, its occurrences' weights summed; NULL: all 1 */
	uint32_t nslot, nshared, ntight;
	double ub_Bps;      /* no rate it can get exceeds this: min(cap, slot caps) */
	double priv_Bps;    /* least cap/times over private slots, unless priv_stale */
	fcapped *bycap;     /* kept flows and flows on a prepared path: (cap/times,
			     * resource) of every slot, by cap; its own unless tpl's */
	flow_path *tpl;     /* the prepared path it was started on (held), or NULL */
	uint64_t *out_bits; /* a kept flow's slots out of their resources' lists,
			     * a bit per slot position (park_alloc) */
	uint32_t nout;      /* how many */
	uint32_t mark;
	uint32_t priv_res;  /* the resource priv_Bps comes from */
	uint32_t bound;     /* what the last solve froze it on: a resource, or BY_CAP */
	sim_time bound_t;   /* counted in flow_bound up to here */
	uint8_t cap_class;  /* flow_spec's (the flags and it together: 192 bytes) */
	bool priv_stale;
	bool parked;        /* idle kept flow, in its resources' lists but counted
			     * nowhere (park) */
	bool live, frozen;
	bool keep, attached, in_idle_list, solo;
	bool joined;               /* in net->joined */
	bool pinned;               /* in an incremental re-solve (mark: its epoch), held
				    * at its rate, not solved (resolve_changed) */
	uint32_t pin_first;        /* in an incremental re-solve: its slots on the
				    * resources filled, in net->pins */
	uint32_t pin_bound;        /* pinned: what holds it (pinned_bound) */
	uint32_t new_bound;        /* what the filling froze it on (settle_fill) */
	uint64_t solo_gen;         /* net->gen when solo was last set */
	double solo_rate_Bps;      /* its rate when it went idle attached */
	double new_Bps;
	double applied_Bps;        /* in an incremental re-solve: its rate in the loads
				    * of the resources left out (add_filled) */
	sim_event_id done_ev;
	sim_handler *fn;
	void *obj;
	uint64_t data;
	uint32_t next_free;
	uint32_t tag;       /* flow_spec's, for flow_bound */
} fflow;

/* A prepared path (flow_path_new): what set_slots, set_weights,
 * sort_slot_caps and set_ub make of it for a flow, made once. */
struct flow_path {
	fslot *slot;        /* as set_slots makes them */
	double *wt;         /* as set_weights: NULL when every weight is 1 */
	fcapped *bycap;     /* as sort_slot_caps, read by its flows in place */
	double ub_Bps;      /* the least slot cap / weight; INFINITY: no slot */
	uint32_t nslot;
	uint32_t refs;      /* the caller's (until flow_path_free) and its flows' */
};

struct flow_net {
	sim_engine *eng;
	fres *res;                 /* 64-byte aligned, in res_raw (res_grow) */
	char *res_raw;
	fscr *scr;                 /* per resource, as res (in res_raw) */
	uint32_t nres, res_cap;
	fflow *flows;
	uint32_t nflows, flows_cap, free_head;
	uint32_t *dirty;
	uint32_t ndirty, dirty_cap;
	uint32_t *cres, *cflow;  /* component scratch */
	uint32_t cres_cap, cflow_cap;
	double *ashare;            /* water-filling: shares by place in the walk */
	uint32_t ashare_cap;
	uint32_t *touched, touched_cap; /* resources a level's freezes changed */
	uint32_t ntouched;
	fcapped *capped;           /* a component's capped flows, sorted */
	uint32_t capped_cap;
	uint32_t epoch, stamp;
	bool solve_pending;
	uint64_t sent, delivered, solves;
	uint64_t gen;              /* bumped by every join */
	uint32_t *joined;          /* flows joined since the last solve */
	uint32_t njoined, joined_cap;
	uint32_t *idle;            /* kept flows idle but still joined */
	uint32_t nparked;          /* parked flows: while there are any, counts of a
				    * resource's flows skip them (live_occ) */
	uint32_t nidle, idle_cap;
	size_t active;
	double *bacc;              /* flow_bound: per (tag, class), flow-seconds and bytes, */
				   /* then per tag, those of capped flows (flow_capped) */
	uint32_t btags, bclasses;
	bool full;                 /* flow_net_set_incremental(false) */
	struct fpin { uint32_t slot, next; } *pins; /* flows' slots filled, listed */
	uint32_t npins, pins_cap;
	uint32_t *fill, fill_cap;  /* the resources an incremental re-solve fills */
	uint32_t *froze, froze_cap; /* the flows the filling froze, in order */
	uint32_t nfroze;
	bool eager;                /* flow_net_set_lazy_fill(false) */
	bool listed;               /* an incremental re-solve: fflow.pin_first lists */
};

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	return sim_grow_u32(p, cap, need, elem, 4);
}

/* Room for `need` resources. res and scr share one block (res_raw): res
 * at its first 64-byte boundary (a record one line), scr after res's
 * capacity. realloc grows a large block in place or remaps it, without a
 * second one alive (two arrays growing in turn left the heap holes that
 * cost 10% of peak memory at 16k GPUs); then scr moves past res's new
 * capacity and, when the block landed at another offset from a boundary,
 * res to the new one. 0 or SIM_ENOMEM with both as they were. */
static int res_grow(flow_net *net, uint32_t need)
{
	const size_t rsz = sizeof *net->res, ssz = sizeof *net->scr;
	uint32_t cap = net->res_cap ? net->res_cap : 4;
	size_t old_off = net->res_raw ? (size_t)((char *)net->res - net->res_raw) : 0, off;
	char *raw;
	if (need <= net->res_cap)
		return 0;
	while (cap < need) {
		if (cap > UINT32_MAX / 2)
			return SIM_ENOMEM;
		cap *= 2;
	}
	if ((size_t)cap > (SIZE_MAX - 63) / (rsz + ssz) ||
	    !(raw = sim_realloc(net->res_raw, (size_t)cap * (rsz + ssz) + 63)))
		return SIM_ENOMEM;
	off = (64 - (uintptr_t)raw % 64) % 64;
	if (net->nres) { /* scr first: res may move up over where it was */
		memmove(raw + off + (size_t)cap * rsz, raw + old_off + (size_t)net->res_cap * rsz,
			(size_t)net->nres * ssz);
		if (off != old_off)
			memmove(raw + off, raw + old_off, (size_t)net->nres * rsz);
	}
	net->res_raw = raw;
	net->res = (fres *)(void *)(raw + off);
	net->scr = (fscr *)(void *)(raw + off + (size_t)cap * rsz);
	net->res_cap = cap;
	return 0;
}

flow_net *flow_net_new(sim_engine *eng)
{
	flow_net *net = sim_calloc(1, sizeof *net);
	if (!net)
		return NULL;
	net->eng = eng;
	net->free_head = NO_FLOW;
	return net;
}

static void path_drop(flow_path *p)
{
	if (p && --p->refs == 0) {
		free(p->slot);
		free(p->wt);
		free(p->bycap);
		free(p);
	}
}

void flow_path_free(flow_path *p) { path_drop(p); }

/* What f holds: its arrays, and its prepared path's hold. */
static void flow_mem_free(fflow *f)
{
	free(f->slot);
	free(f->wt);
	if (!f->tpl)
		free(f->bycap);
	path_drop(f->tpl);
	free(f->out_bits);
}

void flow_net_free(flow_net *net)
{
	if (!net)
		return;
	for (uint32_t i = 0; i < net->nres; i++)
		free(net->res[i].more);
	for (uint32_t i = 0; i < net->nflows; i++)
		flow_mem_free(&net->flows[i]);
	free(net->res_raw);
	free(net->flows);
	free(net->dirty);
	free(net->idle);
	free(net->joined);
	free(net->cres);
	free(net->cflow);
	free(net->ashare);
	free(net->touched);
	free(net->capped);
	free(net->bacc);
	free(net->pins);
	free(net->fill);
	free(net->froze);
	free(net);
}

int flow_res_add(flow_net *net, double cap_Bps, uint32_t *id)
{
	if (!(cap_Bps > 0) || !isfinite(cap_Bps))
		return SIM_EINVAL;
	if (net->nres == UINT32_MAX - 1 || res_grow(net, net->nres + 1))
		return SIM_ENOMEM;
	net->res[net->nres] = (fres){ .cap_Bps = cap_Bps };
	net->scr[net->nres] = (fscr){ .mark = 0 };
	if (id)
		*id = net->nres;
	net->nres++;
	return 0;
}

size_t flow_res_count(const flow_net *net) { return net->nres; }

int flow_res_set_class(flow_net *net, uint32_t res, uint8_t cls)
{
	if (res >= net->nres)
		return SIM_EINVAL;
	net->res[res].cls = cls;
	return 0;
}

uint8_t flow_res_class(const flow_net *net, uint32_t res)
{
	return res < net->nres ? net->res[res].cls : 0;
}

int flow_bound_init(flow_net *net, uint32_t ntags, uint32_t nclasses)
{
	double *a;
	if (!ntags || !nclasses || (size_t)ntags > SIZE_MAX / 2 / nclasses / sizeof *a)
		return SIM_EINVAL;
	if (!(a = sim_calloc(2 * (size_t)ntags * (nclasses + 1), sizeof *a)))
		return SIM_ENOMEM;
	free(net->bacc);
	net->bacc = a;
	net->btags = ntags;
	net->bclasses = nclasses;
	return 0;
}

/* Counts f's time since bound_t, at its rate, to the class of the limit
 * that holds it: rates change only at freezes, placements and
 * completions, which call this first, so every interval goes to the limit
 * that held it then. */
static void settle_bound(flow_net *net, fflow *f)
{
	sim_time now = sim_now(net->eng);
	uint32_t cls;
	if (net->bacc && f->rate_Bps > 0 && now > f->bound_t && f->tag < net->btags) {
		double dt_s = (double)(now - f->bound_t) * 1e-12, *a;
		cls = f->bound == BY_CAP ? f->cap_class : net->res[f->bound].cls;
		if (cls < net->bclasses) {
			a = net->bacc + 2 * ((size_t)f->tag * net->bclasses + cls);
			a[0] += dt_s, a[1] += dt_s * f->rate_Bps;
		}
		if (f->cap_Bps > 0) {
			a = net->bacc + 2 * ((size_t)net->btags * net->bclasses + f->tag);
			a[0] += dt_s, a[1] += dt_s * f->rate_Bps;
		}
	}
	f->bound_t = now;
}

/* f is held by `bound` (a resource or BY_CAP) from now on. */
static void set_bound(flow_net *net, fflow *f, uint32_t bound)
{
	settle_bound(net, f);
	f->bound = bound;
}

void flow_bound_flush(flow_net *net)
{
	for (uint32_t i = 0; i < net->nflows; i++)
		if (net->flows[i].live)
			settle_bound(net, &net->flows[i]);
}

void flow_bound(const flow_net *net, uint32_t tag, uint32_t cls, double *flow_s,
		double *bytes)
{
	const double *a;
	*flow_s = *bytes = 0;
	if (!net->bacc || tag >= net->btags || cls >= net->bclasses)
		return;
	a = net->bacc + 2 * ((size_t)tag * net->bclasses + cls);
	*flow_s = a[0];
	*bytes = a[1];
}

void flow_capped(const flow_net *net, uint32_t tag, double *flow_s, double *bytes)
{
	const double *c;
	*flow_s = *bytes = 0;
	if (!net->bacc || tag >= net->btags)
		return;
	c = net->bacc + 2 * ((size_t)net->btags * net->bclasses + tag);
	*flow_s = c[0];
	*bytes = c[1];
}
double flow_res_cap_Bps(const flow_net *net, uint32_t res) { return net->res[res].cap_Bps; }

/* What f's slot k takes of its resource per unit of f's rate: its
 * occurrences, or their weights summed. Unweighted, exactly the count. */
static double slot_w(const fflow *f, uint32_t k)
{
	return f->wt ? f->wt[k] : (double)f->slot[k].times;
}

/* r's entry i (< nent): the first in the record, the others in its list. */
static inline fentry *res_ent(const fres *r, uint32_t i)
{
	return i ? &r->more[i - 1] : (fentry *)&r->first;
}

/* Sum over r's weighted entries, parked flows' aside (and only its
 * unfrozen flows', with unfrozen_only), of their weights beyond their
 * occurrences, so that live_occ + this is what a common rate of all its
 * flows takes of it per unit (callers skip it, 0, on resources with none,
 * so unweighted that is the count to the bit). */
static double res_extra(const flow_net *net, const fres *r, bool unfrozen_only)
{
	double sum = 0;
	for (uint32_t i = 0; i < r->nent; i++) {
		const fentry *e = res_ent(r, i);
		const fflow *f = &net->flows[e->flow];
		if (f->wt && !f->parked && !(unfrozen_only && f->frozen))
			sum += f->wt[e->slot] - f->slot[e->slot].times;
	}
	return sum;
}

/* A parked flow in res's list has left it, as far as anyone outside can
 * tell. */
static bool parked_only(const flow_net *net, const fres *r)
{
	return r->nent == 1 && net->flows[r->first.flow].parked;
}

/* Whether res holds no flow that runs: empty, or every flow in its list
 * parked (the ring steps that shared a link all between steps). A re-solve
 * from it finds nothing to solve. */
static bool none_live(const flow_net *net, const fres *r)
{
	if (!net->nparked)
		return r->nent == 0;
	for (uint32_t i = 0; i < r->nent; i++)
		if (!net->flows[res_ent(r, i)->flow].parked)
			return false;
	return true;
}

/* r's occurrences of flows that are not parked: those solves and callers
 * count (a parked flow has left, as far as they can tell). O(1) while
 * nobody is parked, else O(entries). */
static uint32_t live_occ(const flow_net *net, const fres *r)
{
	uint32_t occ = r->occ;
	if (net->nparked)
		for (uint32_t i = 0; i < r->nent; i++) {
			const fentry *e = res_ent(r, i);
			if (net->flows[e->flow].parked)
				occ -= e->times;
		}
	return occ;
}

uint32_t flow_res_nflows(const flow_net *net, uint32_t res)
{
	return live_occ(net, &net->res[res]);
}

uint32_t flow_res_nflows_bound(const flow_net *net, uint32_t res)
{
	return net->res[res].occ;
}

double flow_res_load_Bps(const flow_net *net, uint32_t res)
{
	const fres *r = &net->res[res];
	double sum = 0;
	for (uint32_t i = 0; i < r->nent; i++) {
		const fentry *e = res_ent(r, i);
		const fflow *f = &net->flows[e->flow];
		sum += f->rate_Bps * slot_w(f, e->slot);
	}
	return sum;
}

static void solve_event(sim_engine *eng, void *obj, uint64_t data);

/* Out of memory inside an event: the engine's run fails with SIM_ENOMEM
 * (sticky, as SQLite's mallocFailed) and stops after this event; the
 * solver stays consistent enough to be freed, not to run on. */
static void oom(flow_net *net)
{
	sim_fail(net->eng, SIM_ENOMEM, "out of memory in the flow solver");
}

/* Makes sure a solve is scheduled now. */
static void want_solve(flow_net *net)
{
	if (!net->solve_pending) {
		if (sim_schedule_at(net->eng, sim_now(net->eng), solve_event, net, 0, NULL)) {
			oom(net);
			return;
		}
		net->solve_pending = true;
	}
}

static void add_dirty(flow_net *net, uint32_t r)
{
	if (!net->res[r].dirty) {
		if (grow((void **)&net->dirty, &net->dirty_cap, net->ndirty + 1, sizeof *net->dirty)) {
			oom(net);
			return;
		}
		net->res[r].dirty = true;
		net->dirty[net->ndirty++] = r;
	}
}

/* Marks r for the next solve and makes sure one is scheduled now. */
static void mark_dirty(flow_net *net, uint32_t r)
{
	add_dirty(net, r);
	want_solve(net);
}

/* fid (live, rate not yet set) waits for the solve of this instant, which
 * first tries to place it without re-solving its component. */
static void mark_joined(flow_net *net, uint32_t fid)
{
	fflow *f = &net->flows[fid];
	if (!f->joined) {
		if (grow((void **)&net->joined, &net->joined_cap, net->njoined + 1,
			 sizeof *net->joined)) {
			oom(net);
			return;
		}
		f->joined = true;
		net->joined[net->njoined++] = fid;
	}
	want_solve(net);
}

static int alloc_flow(flow_net *net, uint32_t *fid)
{
	if (net->free_head != NO_FLOW) {
		*fid = net->free_head;
		net->free_head = net->flows[*fid].next_free;
		return 0;
	}
	if (net->nflows == NO_FLOW - 1 ||
	    grow((void **)&net->flows, &net->flows_cap, net->nflows + 1, sizeof *net->flows))
		return SIM_ENOMEM;
	*fid = net->nflows++;
	return 0;
}

static void release_flow(flow_net *net, uint32_t fid)
{
	fflow *f = &net->flows[fid];
	flow_mem_free(f);
	*f = (fflow){ .next_free = net->free_head };
	net->free_head = fid;
}

static bool slot_out(const fflow *f, uint32_t k);
static void flip_out(fflow *f, uint32_t k);

/* Swaps slots a and b of flow fid, keeping their resources' entries
 * pointing at them, and a parked flow's marks of its slots out with
 * them. */
static void swap_slots(flow_net *net, uint32_t fid, uint32_t a, uint32_t b)
{
	fflow *f = &net->flows[fid];
	fslot *s = f->slot, t;
	if (a == b)
		return;
	t = s[a], s[a] = s[b], s[b] = t;
	if (f->wt) {
		double w = f->wt[a];
		f->wt[a] = f->wt[b], f->wt[b] = w;
	}
	if (s[a].pos != NO_POS)
		res_ent(&net->res[s[a].res], s[a].pos)->slot = a;
	if (s[b].pos != NO_POS)
		res_ent(&net->res[s[b].res], s[b].pos)->slot = b;
	if (f->nout && slot_out(f, a) != slot_out(f, b))
		flip_out(f, a), flip_out(f, b);
}

/* The rate f's slot k alone allows: its resource's capacity over the
 * slot's weight. */
static double slot_cap_Bps(const flow_net *net, const fflow *f, uint32_t k)
{
	return net->res[f->slot[k].res].cap_Bps / slot_w(f, k);
}

/* Slot k of fid's (private until now) becomes shared: moved into the
 * shared part. If it may have been the least private cap, that is
 * recomputed at the next solve. */
static void make_shared(flow_net *net, uint32_t fid, uint32_t k)
{
	fflow *f = &net->flows[fid];
	if (!f->priv_stale && slot_cap_Bps(net, f, k) <= f->priv_Bps)
		f->priv_stale = true;
	swap_slots(net, fid, k, f->nshared++);
}

/* Whether private resource r with cap/weight c is a flow's least before
 * (best_c, best_r): by cap, ties to the least id, so that which of several
 * equal ones holds it (flow_bound) does not depend on the order its slots
 * came to be in. */
static bool priv_before(double c, uint32_t r, double best_c, uint32_t best_r)
{
	return c < best_c || (c == best_c && r < best_r);
}

/* Slot k of fid's (shared until now) is left to fid alone. */
static void make_private(flow_net *net, uint32_t fid, uint32_t k)
{
	fflow *f = &net->flows[fid];
	f->nshared--;
	swap_slots(net, fid, k, f->nshared);
	if (!f->priv_stale && priv_before(slot_cap_Bps(net, f, f->nshared), f->slot[f->nshared].res,
					  f->priv_Bps, f->priv_res)) {
		f->priv_Bps = slot_cap_Bps(net, f, f->nshared);
		f->priv_res = f->slot[f->nshared].res;
	}
}

/* What f's slot k adds to its resource's ub_sum_Bps. */
static double slot_ub_Bps(const fflow *f, uint32_t k)
{
	return slot_w(f, k) * f->ub_Bps;
}

/* A shared resource is tight unless its flows, each at its own upper
 * bound, leave SLACK_EPS of it free. A slack one can never hold a flow:
 * a flow's rate never exceeds its bound, and at every level of
 * water-filling its share (capacity left over unfrozen weight) stays
 * above the level by about SLACK_EPS x its capacity over its unfrozen
 * weight, far past TIE_EPS and rounding. So it is neither a link in
 * components nor read by water-filling, and leaving it out moves no rate
 * and no freeze: with host-tcp's per-connection caps, most of the
 * fabric's links are such (issue 14). */
static bool res_tight(const fres *r)
{
	return r->nent >= 2 && !(r->ub_sum_Bps <= r->cap_Bps * (1 - SLACK_EPS));
}

/* Slot k of fid's, shared, moves into the tight part (or out of it, to the
 * slack part). */
static void slot_tighten(flow_net *net, uint32_t fid, uint32_t k)
{
	swap_slots(net, fid, k, net->flows[fid].ntight++);
}

static void slot_loosen(flow_net *net, uint32_t fid, uint32_t k)
{
	swap_slots(net, fid, k, --net->flows[fid].ntight);
}

/* r's entries or bounds changed: when that flips it between tight and
 * slack, every entry's slot moves across. O(entries), only on a flip. */
static void retighten(flow_net *net, fres *r)
{
	bool t = res_tight(r);
	if (t == r->tight)
		return;
	r->tight = t;
	for (uint32_t i = 0; i < r->nent; i++) {
		const fentry *e = res_ent(r, i);
		if (t)
			slot_tighten(net, e->flow, e->slot);
		else
			slot_loosen(net, e->flow, e->slot);
	}
}

/* The least cap/times over f's private slots (of a live flow, on all its
 * resources: private ones are those it is alone on). A kept flow, or one
 * on a prepared path, finds it in its slots sorted by cap (ties by id, as
 * priv_before), past at most its shared ones. */
static double priv_cap_Bps(flow_net *net, fflow *f)
{
	if (f->priv_stale) {
		f->priv_Bps = INFINITY;
		if (f->bycap) {
			for (uint32_t i = 0; i < f->nslot; i++)
				if (net->res[f->bycap[i].id].nent == 1) {
					f->priv_Bps = f->bycap[i].cap_Bps;
					f->priv_res = f->bycap[i].id;
					break;
				}
		} else {
			for (uint32_t k = f->nshared; k < f->nslot; k++)
				if (priv_before(slot_cap_Bps(net, f, k), f->slot[k].res, f->priv_Bps,
						f->priv_res)) {
					f->priv_Bps = slot_cap_Bps(net, f, k);
					f->priv_res = f->slot[k].res;
				}
		}
		f->priv_stale = false;
	}
	return f->priv_Bps;
}

/* A path's resources are spread over the whole fabric's records and entry
 * lists (tens of MB at 16k GPUs) and a transfer crosses about a hundred,
 * mostly alone: each first touch is a cache miss, and a walk that takes
 * them one after the other waits for each in turn. The walks over a path
 * ask for the records PATH_AHEAD ahead (the first ones before the walk:
 * spec_ok, leave_resources) and for an entry list AHEAD slots ahead, once
 * its record is in (join_resources, leave_resources), so that the misses
 * overlap. Hints only: nothing read depends on them. */
#define AHEAD 8
#define PATH_AHEAD 32

static void prefetch_res(const flow_net *net, uint32_t rid)
{
	__builtin_prefetch(&net->res[rid], 1);
}

/* r's entry at pos, when in its list (a pointer in r: r should be in
 * already). */
static void prefetch_ent(const fres *r, uint32_t pos)
{
	if (pos && r->more)
		__builtin_prefetch(r->more + pos - 1, 1);
}

/* A kept flow's slots out of their resources' lists, one bit per slot
 * position (out_bits, park_alloc): set as slots go out (evict, a failed
 * restart), moved with their slots (swap_slots), cleared as they rejoin
 * (unpark), so that finding them costs a word per 64 slots, not a read of
 * every slot (a ring's step crosses over a thousand resources at 16k
 * GPUs; issue 14). */
static int park_alloc(fflow *f)
{
	size_t words = ((size_t)f->nslot + 63) / 64;
	f->out_bits = sim_calloc(words ? words : 1, sizeof *f->out_bits);
	return f->out_bits ? 0 : SIM_ENOMEM;
}

static bool slot_out(const fflow *f, uint32_t k)
{
	return f->out_bits[k / 64] >> (k % 64) & 1;
}

static void flip_out(fflow *f, uint32_t k)
{
	f->out_bits[k / 64] ^= UINT64_C(1) << k % 64;
}

/* Parked flow fid's entry, alone on resource r, goes: it has left r as it
 * would have when it finished, and rejoins it at its restart. Alone, the
 * slot is a private one, and stays among them while out (swap_slots moves
 * shared slots only with slots in their lists). */
static void evict(flow_net *net, fres *r, uint32_t rid)
{
	fentry e = r->first;
	fflow *f = &net->flows[e.flow];
	r->nent = 0;
	r->ub_sum_Bps = 0;
	r->nweighted -= f->wt != NULL;
	net->res[rid].occ -= f->slot[e.slot].times;
	f->slot[e.slot].pos = NO_POS;
	flip_out(f, e.slot);
	f->nout++;
}

/* Adds fid's entry for slot k to its resource (not in its list), sorting
 * it into shared or private (and the other flow's, on a resource it makes
 * shared): as at a join, slot k is the last shared one after those
 * before it. */
static int attach_slot(flow_net *net, uint32_t fid, uint32_t k)
{
	fslot *s = &net->flows[fid].slot[k];
	fres *r = &net->res[s->res];
	bool weighted = net->flows[fid].wt != NULL, was_tight;
	if (parked_only(net, r))
		evict(net, r, s->res);
	/* more holds entries 1..nent-1: room checked here, as most joins find
	 * it, so that the call is made only to grow */
	if (r->nent > r->more_cap && grow((void **)&r->more, &r->more_cap, r->nent, sizeof *r->more))
		return SIM_ENOMEM;
	was_tight = r->tight;
	s->pos = r->nent;
	*res_ent(r, r->nent++) = (fentry){ .flow = fid, .slot = k, .times = s->times };
	r->ub_sum_Bps += slot_ub_Bps(&net->flows[fid], k);
	net->res[s->res].occ += s->times;
	r->nweighted += weighted;
	if (r->nent == 2)
		make_shared(net, r->first.flow, r->first.slot);
	if (r->nent >= 2)
		make_shared(net, fid, k);
	if (was_tight) /* still tight: the new entry joins the others */
		slot_tighten(net, fid, res_ent(r, r->nent - 1)->slot);
	else
		retighten(net, r);
	return 0;
}

/* Adds fid's entries to its resources, sorting its slots into shared and
 * private as it goes (and the other flow's, on a resource it makes
 * shared). On failure, the slots before *joined are in and must be taken
 * out. */
static int join_resources(flow_net *net, uint32_t fid, uint32_t *joined)
{
	fflow *f = &net->flows[fid];
	f->nshared = f->ntight = 0;
	f->priv_stale = true;
	for (*joined = 0; *joined < f->nslot; (*joined)++) {
		/* On a prepared path nothing has read the records yet (spec_ok
		 * asked for the first ones); on another set_slots has */
		if (*joined + PATH_AHEAD < f->nslot && f->tpl)
			prefetch_res(net, f->slot[*joined + PATH_AHEAD].res);
		if (*joined + AHEAD < f->nslot) { /* its record is in, or on its way */
			const fres *r = &net->res[f->slot[*joined + AHEAD].res];
			prefetch_ent(r, r->nent);
		}
		if (attach_slot(net, fid, *joined))
			return SIM_ENOMEM;
	}
	return 0;
}

/* Takes fid's entries out of its resources (the first `upto` slots, those
 * in their lists); a resource left with one flow becomes private to it. */
static void leave_resources(flow_net *net, uint32_t fid, uint32_t upto)
{
	fflow *f = &net->flows[fid];
	for (uint32_t k = 0; k < upto && k < PATH_AHEAD; k++)
		prefetch_res(net, f->slot[k].res);
	for (uint32_t k = 0; k < upto; k++) {
		fslot *s = &f->slot[k];
		fres *r = &net->res[s->res];
		fentry moved;
		if (k + PATH_AHEAD < upto)
			prefetch_res(net, f->slot[k + PATH_AHEAD].res);
		if (k + AHEAD < upto && f->slot[k + AHEAD].pos != NO_POS) {
			const fres *a = &net->res[f->slot[k + AHEAD].res];
			prefetch_ent(a, f->slot[k + AHEAD].pos);
			prefetch_ent(a, a->nent - 1);
		}
		if (s->pos == NO_POS)
			continue;
		moved = *res_ent(r, --r->nent);
		*res_ent(r, s->pos) = moved;
		net->flows[moved.flow].slot[moved.slot].pos = s->pos;
		net->res[s->res].occ -= s->times;
		r->ub_sum_Bps = r->nent ? r->ub_sum_Bps - slot_ub_Bps(f, k) : 0;
		r->nweighted -= f->wt != NULL;
		s->pos = NO_POS;
		if (r->nent == 1) {
			if (r->tight)
				slot_loosen(net, r->first.flow, r->first.slot);
			r->tight = false;
			make_private(net, r->first.flow, r->first.slot);
		} else if (r->tight) {
			retighten(net, r);
		}
	}
	f->nshared = f->ntight = 0;
}

/* Kept flow fid, idle, parks: it stays in every list it is in, at rate 0
 * and frozen, and every count a solve or a caller reads passes over it
 * (live_occ, res_extra; walks skip it), so that nobody can tell it from a
 * flow that left. Its slots keep their places and sharing (other flows'
 * joins and leaves move them as anyone's), so parking costs O(1) and a
 * restart costs the slots others took meanwhile (unpark), not a leave and
 * a join of the hundreds of resources a ring's step crosses, most of them
 * shared with other rings' flows (issue 14). A flow joining a resource it
 * is alone on evicts it (attach_slot). */
static void park(flow_net *net, uint32_t fid)
{
	fflow *f = &net->flows[fid];
	if (!f->out_bits && park_alloc(f)) {
		oom(net); /* stays attached: the run stops */
		return;
	}
	f->attached = false;
	f->parked = true;
	f->frozen = true; /* freeze_level passes over it */
	net->nparked++;
}

/* Parked fid runs again: its slots out rejoin (attach_slot), lowest
 * position first. A join moves the slot at position nshared (in a list or
 * out: out ones sit among the private slots) up to the one joining
 * (make_shared), so the bits are read afresh after each; the others keep
 * their places and sharing. O(slots out), not O(path). */
static int unpark(flow_net *net, uint32_t fid)
{
	fflow *f = &net->flows[fid];
	f->parked = false;
	net->nparked--;
	f->priv_stale = true;
	for (uint32_t w = 0; f->nout;) {
		uint64_t b = f->out_bits[w];
		uint32_t k;
		if (!b) {
			w++;
			continue;
		}
		k = w * 64 + (uint32_t)__builtin_ctzll(b);
		flip_out(f, k);
		f->nout--;
		if (attach_slot(net, fid, k)) {
			/* Out of memory: parked again, in no list, every slot out. */
			leave_resources(net, fid, f->nslot);
			memset(f->out_bits, 0, (f->nslot + 63) / 64 * sizeof *f->out_bits);
			for (f->nout = 0; f->nout < f->nslot; f->nout++)
				flip_out(f, f->nout);
			f->parked = f->frozen = true;
			net->nparked++;
			return SIM_ENOMEM;
		}
	}
	return 0;
}

/* A join is about to happen: solo flags from before are stale, and kept
 * flows idling unparked (alone on their resources, so no one else's rate
 * depends on it) park, so that the joining flow does not count them. */
static void bump(flow_net *net)
{
	net->gen++;
	for (uint32_t i = 0; i < net->nidle; i++) {
		uint32_t fid = net->idle[i];
		fflow *f = &net->flows[fid];
		f->in_idle_list = false;
		if (f->keep && f->attached && !f->live)
			park(net, fid);
	}
	net->nidle = 0;
}

static bool spec_ok(const flow_net *net, const flow_spec *spec)
{
	if (spec->cap_Bps < 0 || !isfinite(spec->cap_Bps))
		return false;
	if (spec->prepared) { /* checked by flow_path_new */
		const flow_path *p = spec->prepared;
		for (uint32_t k = 0; k < p->nslot && k < PATH_AHEAD; k++)
			prefetch_res(net, p->slot[k].res); /* join_resources reads them first */
		return p->nslot > 0 || spec->cap_Bps > 0;
	}
	if (spec->path_len == 0)
		return spec->cap_Bps > 0;
	if (!spec->path)
		return false;
	for (uint32_t s = 0; s < spec->path_len; s++) {
		if (spec->path[s] >= net->nres ||
		    (spec->weights && !(spec->weights[s] > 0 && isfinite(spec->weights[s]))))
			return false;
		if (s < PATH_AHEAD) /* set_slots reads them first: on their way meanwhile */
			prefetch_res(net, spec->path[s]);
	}
	return true;
}

/* The weights of a path, summed per slot into f->wt (allocated here), unless
 * every one is 1: then f->wt stays NULL and the flow is solved as an
 * unweighted one, to the bit. 0 or SIM_ENOMEM. */
static int set_weights(const flow_net *net, fflow *f, const uint32_t *path,
		       const double *weights, uint32_t len)
{
	bool unit = true;
	for (uint32_t i = 0; i < len && weights && unit; i++)
		unit = weights[i] == 1;
	if (unit)
		return 0;
	f->wt = sim_calloc(f->nslot, sizeof *f->wt);
	if (!f->wt)
		return SIM_ENOMEM;
	for (uint32_t i = 0; i < len; i++)
		f->wt[net->res[path[i]].at] += weights[i];
	return 0;
}

/* The distinct resources of a path with their counts (and weights), in
 * order of first appearance, into f->slot (allocated here; 0 or
 * SIM_ENOMEM). */
static int set_slots(flow_net *net, fflow *f, const uint32_t *path, const double *weights,
		     uint32_t len)
{
	f->slot = sim_malloc((size_t)(len ? len : 1) * sizeof *f->slot);
	if (!f->slot)
		return SIM_ENOMEM;
	if (++net->stamp == 0) { /* wrapped: no resource may look seen */
		for (uint32_t i = 0; i < net->nres; i++)
			net->res[i].stamp = 0;
		net->stamp = 1;
	}
	f->nslot = 0;
	for (uint32_t i = 0; i < len; i++) {
		fres *r = &net->res[path[i]];
		if (i + PATH_AHEAD < len)
			prefetch_res(net, path[i + PATH_AHEAD]);
		if (r->stamp == net->stamp) {
			f->slot[r->at].times++;
			continue;
		}
		r->stamp = net->stamp;
		r->at = f->nslot;
		f->slot[f->nslot++] = (fslot){ .res = path[i], .times = 1 };
	}
	return set_weights(net, f, path, weights, len);
}

/* f's upper bound (fflow.ub_Bps): its cap and every slot's cap / weight.
 * Fixed for its life (a kept flow restarts on the same path). */
static void set_ub(const flow_net *net, fflow *f)
{
	f->ub_Bps = f->cap_Bps > 0 ? f->cap_Bps : INFINITY;
	for (uint32_t k = 0; k < f->nslot; k++)
		f->ub_Bps = fmin(f->ub_Bps, slot_cap_Bps(net, f, k));
}

static int by_cap(const void *a, const void *b);

/* A kept flow's slots by cap/times, so that priv_cap_Bps need not read
 * all of them at each restart (0 or SIM_ENOMEM). */
static int sort_slot_caps(const flow_net *net, fflow *f)
{
	f->bycap = sim_malloc((size_t)(f->nslot ? f->nslot : 1) * sizeof *f->bycap);
	if (!f->bycap)
		return SIM_ENOMEM;
	for (uint32_t k = 0; k < f->nslot; k++)
		f->bycap[k] = (fcapped){ .cap_Bps = slot_cap_Bps(net, f, k),
					 .id = f->slot[k].res };
	qsort(f->bycap, f->nslot, sizeof *f->bycap, by_cap);
	return 0;
}

/* f takes prepared path p's slots, weights and caps (0 or SIM_ENOMEM, f
 * holding p either way): as set_slots, sort_slot_caps and set_ub make
 * them from p's path, copied or, read-only, shared. */
static int take_prepared(fflow *f, flow_path *p)
{
	size_t n = p->nslot ? p->nslot : 1;
	f->tpl = p;
	p->refs++;
	f->bycap = p->bycap;
	f->nslot = p->nslot;
	/* fmin is exact: the least of cap and the slot caps in any order */
	f->ub_Bps = fmin(f->cap_Bps > 0 ? f->cap_Bps : INFINITY, p->ub_Bps);
	if (!(f->slot = sim_malloc(n * sizeof *f->slot)) ||
	    (p->wt && !(f->wt = sim_malloc(n * sizeof *f->wt))))
		return SIM_ENOMEM;
	memcpy(f->slot, p->slot, p->nslot * sizeof *f->slot);
	if (p->wt)
		memcpy(f->wt, p->wt, p->nslot * sizeof *f->wt);
	return 0;
}

int flow_path_new(flow_net *net, const uint32_t *path, const double *weights, uint32_t len,
		  flow_path **out)
{
	/* a cap so that an empty path passes: it is the flows' own */
	flow_spec spec = { .path = path, .weights = weights, .path_len = len, .cap_Bps = 1 };
	fflow f = { .cap_Bps = 0 };
	flow_path *p;
	fslot *slot;
	*out = NULL;
	if (!spec_ok(net, &spec))
		return SIM_EINVAL;
	if (!(p = sim_malloc(sizeof *p)) || set_slots(net, &f, path, weights, len) ||
	    sort_slot_caps(net, &f)) {
		free(f.slot);
		free(f.wt);
		free(f.bycap);
		free(p);
		return SIM_ENOMEM;
	}
	set_ub(net, &f);
	/* set_slots made room for every entry; the distinct ones are kept */
	if (f.nslot && f.nslot < len && (slot = sim_realloc(f.slot, f.nslot * sizeof *slot)))
		f.slot = slot;
	*p = (flow_path){ .slot = f.slot, .wt = f.wt, .bycap = f.bycap, .ub_Bps = f.ub_Bps,
			  .nslot = f.nslot, .refs = 1 };
	*out = p;
	return 0;
}

static void apply_rate(flow_net *net, uint32_t fid, double rate_Bps);

int flow_start(flow_net *net, const flow_spec *spec, uint32_t *fid)
{
	uint32_t id, joined;
	fflow *f;
	if (!spec_ok(net, spec))
		return SIM_EINVAL;
	if (alloc_flow(net, &id))
		return SIM_ENOMEM;
	f = &net->flows[id];
	*f = (fflow){ .bytes = spec->bytes, .left_bytes = (double)spec->bytes,
		      .cap_Bps = spec->cap_Bps, .t_last = sim_now(net->eng),
		      .live = true, .fn = spec->done, .keep = spec->keep,
		      .obj = spec->obj, .data = spec->data, .mark = net->epoch,
		      .bound = BY_CAP, .bound_t = sim_now(net->eng), .tag = spec->tag,
		      .cap_class = spec->cap_class };
	if (spec->prepared ? take_prepared(f, spec->prepared)
			   : set_slots(net, f, spec->path, spec->weights, spec->path_len) ||
				     (spec->keep && sort_slot_caps(net, f))) {
		release_flow(net, id);
		return SIM_ENOMEM;
	}
	if (!spec->prepared)
		set_ub(net, f);
	bump(net);
	f = &net->flows[id];
	if (join_resources(net, id, &joined)) {
		leave_resources(net, id, joined);
		release_flow(net, id);
		return SIM_ENOMEM;
	}
	f->attached = true;
	net->sent += spec->bytes;
	net->active++;
	if (fid)
		*fid = id;
	if (f->nslot == 0)
		apply_rate(net, id, f->cap_Bps); /* alone: its cap is its rate */
	else
		mark_joined(net, id);
	return 0;
}

static void done_event(sim_engine *eng, void *obj, uint64_t data);

/* Bytes still to send as of now, from the lazy state. */
static double left_now(const flow_net *net, const fflow *f)
{
	double sent = f->rate_Bps * (double)(sim_now(net->eng) - f->t_last) * 1e-12;
	double left = f->left_bytes - sent;
	/* Within rounding of done: the completion event is due now. */
	return left <= (double)f->bytes * 1e-12 ? 0 : left;
}

/* Moves fid to a new rate: settles its progress at the old rate, then
 * moves its completion to now + ceil(left / rate), never early. */
static void apply_rate(flow_net *net, uint32_t fid, double rate_Bps)
{
	fflow *f = &net->flows[fid];
	sim_time now = sim_now(net->eng), at;
	double dt_ps;
	if (rate_Bps == f->rate_Bps && sim_pending_id(net->eng, f->done_ev))
		return;
	f->left_bytes = left_now(net, f);
	f->t_last = now;
	f->rate_Bps = rate_Bps;
	sim_cancel(net->eng, f->done_ev);
	dt_ps = ceil(f->left_bytes * 1e12 / rate_Bps);
	if (!(dt_ps < (double)(SIM_TIME_MAX - now))) {
		/* Not a model bug: a rate or a size the user gave can take a
		 * transfer past the clock's end. The flow keeps its rate but no
		 * completion; the engine stops and the caller reports it. */
		double end_s = ((double)now + dt_ps) * 1e-12;
		char left[48] = "";
		if (f->left_bytes < (double)f->bytes)
			snprintf(left, sizeof left, " (%.6g left)", f->left_bytes);
		sim_fail(net->eng, SIM_EOVERFLOW,
			 "simulated time passes the engine's horizon of %.2f days (int64 "
			 "picoseconds): a transfer of %llu bytes%s at %.6g B/s would end at "
			 "%.6g s (%.6g days); a rate or size out of range?",
			 (double)SIM_TIME_MAX * 1e-12 / 86400, (unsigned long long)f->bytes, left,
			 rate_Bps, end_s, end_s / 86400);
		return;
	}
	at = now + (sim_time)dt_ps;
	if (sim_schedule_at(net->eng, at, done_event, net, fid, &f->done_ev))
		oom(net); /* no completion: the run stops */
}

/* True when no resource fid shares with others is saturated (to within
 * QUIET_EPS) at the current rates. In a max-min fair allocation every flow
 * is bottlenecked on a saturated resource or at its own cap; so such a
 * flow is nobody's bottleneck: it can leave, or join at its own cap
 * (extra_Bps, counted once per occurrence), without moving any other
 * rate. */
static bool quiet(const flow_net *net, const fflow *f, double extra_Bps)
{
	uint32_t seen = 0;
	for (uint32_t k = 0; k < f->ntight; k++) { /* a slack one never saturates */
		const fres *r = &net->res[f->slot[k].res];
		double load;
		/* Re-solved at this instant anyway; and a check costlier than
		 * QUIET_SCAN entries is left to the solve, so that n changes on
		 * one link at one instant cost one solve, not n^2. */
		if (r->dirty || (seen += r->nent) > QUIET_SCAN)
			return false;
		load = flow_res_load_Bps(net, f->slot[k].res) + extra_Bps * slot_w(f, k);
		if (!(load <= r->cap_Bps * (1 - QUIET_EPS)))
			return false;
	}
	return true;
}

/* fid leaves its resources. The ones it had to itself are empty now, and
 * when none it shares was saturated nobody else's rate moves (see quiet);
 * otherwise those it shared are re-solved. Changes still unsolved at this
 * instant are re-solved with their whole component anyway. */
static void leave_and_mark(flow_net *net, uint32_t fid)
{
	fflow *f = &net->flows[fid];
	uint32_t ntight = f->ntight;
	if (!quiet(net, f, 0))
		for (uint32_t k = 0; k < ntight; k++)
			mark_dirty(net, f->slot[k].res);
	leave_resources(net, fid, f->nslot);
	f->attached = false;
}

/* A flow joined at this instant runs at its own cap (its cap or its
 * tightest private resource) when that fits on every resource it shares
 * without saturating one: the max-min allocation of the others stays as
 * it is. A flow sharing nothing, or with no cap of its own, is solved. If
 * a flow of its component is re-solved at this instant, so is it, which
 * makes up for the flows still at rate 0 when it was placed. */
static bool place_quietly(flow_net *net, uint32_t fid)
{
	fflow *f = &net->flows[fid];
	double rate_Bps = priv_cap_Bps(net, f);
	if (f->cap_Bps > 0)
		rate_Bps = fmin(rate_Bps, f->cap_Bps);
	if (f->nshared == 0 || rate_Bps == INFINITY || !quiet(net, f, rate_Bps))
		return false;
	f->solo = false;
	set_bound(net, f, f->cap_Bps > 0 && f->cap_Bps <= f->priv_Bps ? BY_CAP : f->priv_res);
	apply_rate(net, fid, rate_Bps);
	return true;
}

/* A kept flow finished: alone in its component since its last solve, it
 * stays on its resources (nobody's rate changes); otherwise it leaves. */
static void go_idle(flow_net *net, uint32_t fid)
{
	fflow *f = &net->flows[fid];
	f->live = false;
	f->done_ev = SIM_EVENT_NONE;
	if (f->solo && f->solo_gen == net->gen) {
		f->solo_rate_Bps = f->rate_Bps;
		f->rate_Bps = 0;
		if (!f->in_idle_list) {
			if (grow((void **)&net->idle, &net->idle_cap, net->nidle + 1, sizeof *net->idle)) {
				oom(net);
				return;
			}
			net->idle[net->nidle++] = fid;
			f->in_idle_list = true;
		}
		return;
	}
	/* At its rate: the test of saturation counts it. */
	if (!quiet(net, f, 0))
		for (uint32_t k = 0; k < f->ntight; k++)
			mark_dirty(net, f->slot[k].res);
	park(net, fid);
	f->rate_Bps = 0;
}

static void done_event(sim_engine *eng, void *obj, uint64_t data)
{
	flow_net *net = obj;
	uint32_t fid = (uint32_t)data;
	fflow *f = &net->flows[fid];
	sim_handler *fn = f->fn;
	void *fobj = f->obj;
	uint64_t fdata = f->data;
	settle_bound(net, f);
	net->delivered += f->bytes;
	net->active--;
	if (f->keep) {
		go_idle(net, fid);
	} else {
		leave_and_mark(net, fid);
		release_flow(net, fid);
	}
	if (fn)
		fn(eng, fobj, fdata);
}

int flow_restart(flow_net *net, uint32_t fid, uint64_t bytes, uint64_t data)
{
	fflow *f = &net->flows[fid];
	if (fid >= net->nflows || !f->keep || f->live)
		return SIM_EINVAL;
	if (!f->attached) {
		bump(net);
		f = &net->flows[fid];
		if (unpark(net, fid))
			return SIM_ENOMEM;
		f->attached = true;
		f->solo = false;
	}
	f->bytes = bytes;
	f->left_bytes = (double)bytes;
	f->rate_Bps = 0;
	f->t_last = f->bound_t = sim_now(net->eng);
	f->live = true;
	f->frozen = false;
	f->new_Bps = 0;
	f->done_ev = SIM_EVENT_NONE;
	f->data = data;
	net->sent += bytes;
	net->active++;
	if (f->solo && f->solo_gen == net->gen)
		apply_rate(net, fid, f->solo_rate_Bps); /* nothing changed around it: O(1) */
	else if (f->nslot)
		mark_joined(net, fid);
	else
		apply_rate(net, fid, f->cap_Bps);
	return 0;
}

int flow_release(flow_net *net, uint32_t fid)
{
	fflow *f = &net->flows[fid];
	if (fid >= net->nflows || !f->keep || f->live)
		return SIM_EINVAL;
	/* idle, it takes nothing of the resources it leaves: nobody to re-solve */
	net->nparked -= f->parked;
	leave_resources(net, fid, f->nslot);
	release_flow(net, fid);
	return 0;
}

/* cres holds at most every resource once: solve_event sizes it up front. */
static void push_cres(flow_net *net, uint32_t *n, uint32_t r)
{
	net->scr[r].mark = net->epoch;
	net->scr[r].ci = NO_POS; /* until the filling takes it */
	net->cres[(*n)++] = r;
}

/* Adds fid to the component being walked, and its shared resources not
 * seen yet. */
static void visit_flow(flow_net *net, uint32_t fid, uint32_t *nr, uint32_t *nf)
{
	fflow *f = &net->flows[fid];
	if (f->mark == net->epoch || f->parked)
		return;
	SIM_ASSERT(f->live, "idle flow %u found in a component", fid);
	f->mark = net->epoch;
	net->cflow[(*nf)++] = fid; /* sized by solve_event */
	for (uint32_t k = 0; k < f->ntight; k++)
		if (net->scr[f->slot[k].res].mark != net->epoch)
			push_cres(net, nr, f->slot[k].res);
}

/* The component of resource `start`: its tight resources into cres, its
 * flows into cflow (none when they were walked already this solve). A
 * start that is not tight (private, or slack since it was marked) links
 * nobody: the component is its flows'. */
static void walk_component(flow_net *net, uint32_t start, uint32_t *nr, uint32_t *nf)
{
	const fres *s = &net->res[start];
	*nr = *nf = 0;
	if (!s->tight) {
		for (uint32_t e = 0; e < s->nent; e++)
			visit_flow(net, res_ent(s, e)->flow, nr, nf);
	} else if (net->scr[start].mark != net->epoch) {
		push_cres(net, nr, start);
	}
	for (uint32_t i = 0; i < *nr; i++) {
		const fres *r = &net->res[net->cres[i]];
		for (uint32_t e = 0; e < r->nent; e++)
			visit_flow(net, res_ent(r, e)->flow, nr, nf);
	}
}

/* What each unfrozen flow on r may still get per unit of weight: its
 * capacity left over their weights. Unweighted, wt_extra is 0 and the
 * weights are the occurrences: rem / left to the bit. */
static double res_share(const fscr *q)
{
	return q->rem_Bps / (q->left + q->wt_extra);
}

/* Notes that a freeze changed rid's remaining capacity or count. */
static void touch(flow_net *net, uint32_t rid)
{
	if (!net->scr[rid].touched) {
		net->scr[rid].touched = true;
		net->touched[net->ntouched++] = rid;
	}
}

/* f's slot k (of a tight resource in the solve) gives up rate_Bps per
 * occurrence: one subtraction each, as when every occurrence was an entry
 * of its own, so the remaining capacities round as they did then; a
 * weighted flow, weight x rate once. */
static void freeze_slot(flow_net *net, const fflow *f, uint32_t k, double rate_Bps)
{
	fscr *q = &net->scr[f->slot[k].res];
	touch(net, f->slot[k].res);
	q->left -= f->slot[k].times;
	if (!f->wt) {
		/* one product, not `times` subtractions: a host-TCP ring step
		 * crosses a node's memory and cores many times (9.1 a slot on
		 * average in train-405b-16k-2nics), and the loop, kept from when
		 * each crossing was a slot of its own (a2e8edc), was 6.5 G
		 * subtractions there */
		q->rem_Bps -= rate_Bps * f->slot[k].times;
		if (q->rem_Bps < 0)
			q->rem_Bps = 0;
		return;
	}
	q->rem_Bps -= rate_Bps * f->wt[k];
	if (q->rem_Bps < 0)
		q->rem_Bps = 0;
	q->wt_extra -= f->wt[k] - f->slot[k].times;
	/* Subtracting one by one rounded the weights left to nothing while
	 * some flows are: sum them afresh. */
	if (q->left && !(q->left + q->wt_extra > 0))
		q->wt_extra = res_extra(net, &net->res[f->slot[k].res], true);
}

/* What holds pinned f, frozen at rate_Bps: as level_bound would find over
 * all its resources, the least id at the level, of its limit outside the
 * solve (unchanged, so still at the level) and those in it at the level;
 * its cap or a private resource first, as in a whole solve. */
static uint32_t pinned_bound(const flow_net *net, const fflow *f, double rate_Bps)
{
	uint32_t best = f->bound;
	double level = rate_Bps * (1 + TIE_EPS);
	if (best == BY_CAP || net->res[best].nent < 2) /* its cap, or a private resource */
		return best;
	for (uint32_t i = f->pin_first; i != NO_POS; i = net->pins[i].next) {
		uint32_t rid = f->slot[net->pins[i].slot].res;
		if (rid < best && net->ashare[net->scr[rid].ci] <= level)
			best = rid;
	}
	return best;
}

/* f (not pinned) is frozen on `bound`: set_bound once the filling stands
 * (settle_fill), in the order of the freezes, as a filling that takes
 * every resource would set it (an incremental re-solve may fill again over
 * more resources, add_filled). */
static void froze_on(flow_net *net, fflow *f, uint32_t bound)
{
	f->new_bound = bound;
	net->froze[net->nfroze++] = (uint32_t)(f - net->flows); /* sized by solve_event */
}

/* The filling stands: its flows are held by what froze them. */
static void settle_fill(flow_net *net)
{
	for (uint32_t i = 0; i < net->nfroze; i++) {
		fflow *f = &net->flows[net->froze[i]];
		set_bound(net, f, f->new_bound);
	}
	net->nfroze = 0;
}

/* Freezes f at rate_Bps, held by `bound` (froze_on), taking it off the
 * tight resources filled: in an incremental re-solve those listed as it
 * was found on them (a pinned flow held at its rate elsewhere, pin_bound),
 * in a whole one every tight one. */
static void freeze(flow_net *net, fflow *f, double rate_Bps, uint32_t bound)
{
	f->frozen = true;
	f->new_Bps = rate_Bps;
	if (f->pinned)
		f->pin_bound = pinned_bound(net, f, rate_Bps);
	else
		froze_on(net, f, bound);
	if (net->listed) {
		for (uint32_t i = f->pin_first; i != NO_POS; i = net->pins[i].next)
			freeze_slot(net, f, net->pins[i].slot, rate_Bps);
		return;
	}
	for (uint32_t k = 0; k < f->ntight; k++)
		freeze_slot(net, f, k, rate_Bps);
}

static int by_cap(const void *a, const void *b)
{
	const fcapped *x = a, *y = b;
	if (x->cap_Bps != y->cap_Bps)
		return x->cap_Bps < y->cap_Bps ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* (cap, id) order: a total one, so a heap pops what a sort would list. */
static bool cap_less(const fcapped *x, const fcapped *y)
{
	return x->cap_Bps < y->cap_Bps || (x->cap_Bps == y->cap_Bps && x->id < y->id);
}

static void cap_sift_down(fcapped *h, uint32_t n, uint32_t i)
{
	fcapped v = h[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && cap_less(&h[c + 1], &h[c]))
			c++;
		if (!cap_less(&h[c], &v))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = v;
}

static void cap_heapify(fcapped *h, uint32_t n)
{
	for (uint32_t i = n / 2; i-- > 0;)
		cap_sift_down(h, n, i);
}

static void cap_pop(fcapped *h, uint32_t *n)
{
	h[0] = h[--*n];
	cap_sift_down(h, *n, 0);
}

/* The component's flows' own caps into net->capped[0, *ncap) and their
 * least private resources into net->capped[nf, nf + *npriv), each a heap
 * in (cap, flow id) order: levels pop only the few they reach, where
 * sorting every cap cost each solve O(nf log nf). */
static void heap_caps(flow_net *net, uint32_t nf, uint32_t *ncap, uint32_t *npriv)
{
	fcapped *own, *priv; /* capped sized by solve_event */
	own = net->capped, priv = net->capped + nf;
	*ncap = *npriv = 0;
	for (uint32_t i = 0; i < nf; i++) {
		uint32_t fid = net->cflow[i];
		fflow *f = &net->flows[fid];
		double p;
		f->frozen = false;
		if (f->pinned && f->mark == net->epoch) {
			/* held at its rate as by a private resource: frozen at
			 * the level's share, so that one level freezes it with
			 * the flows tied with it, as the whole solve does */
			priv[(*npriv)++] = (fcapped){ .cap_Bps = f->rate_Bps, .id = fid };
			continue;
		}
		p = priv_cap_Bps(net, f);
		if (f->cap_Bps > 0)
			own[(*ncap)++] = (fcapped){ .cap_Bps = f->cap_Bps, .id = fid };
		if (p < INFINITY)
			priv[(*npriv)++] = (fcapped){ .cap_Bps = p, .id = fid };
	}
	cap_heapify(own, *ncap);
	cap_heapify(priv, *npriv);
}

/* The least unfrozen entry of a cap heap (popping frozen ones), or
 * INFINITY. */
static double least_cap(const flow_net *net, fcapped *h, uint32_t *n)
{
	while (*n && net->flows[h[0].id].frozen)
		cap_pop(h, n);
	return *n ? h[0].cap_Bps : INFINITY;
}

/* Alone in its component (the common case of independent transfers), or
 * alone but for parked flows on the resources it shares: its own caps, or
 * the tightest of those resources. */
static void fill_one(flow_net *net, const uint32_t *rl, uint32_t nr)
{
	fflow *f = &net->flows[net->cflow[0]];
	/* the shares by place in rl, in water_fill's scratch (solve_event
	 * sizes it for every resource) */
	double priv = priv_cap_Bps(net, f), least = priv, level, *share = net->ashare;
	uint32_t bound = f->priv_res;
	for (uint32_t i = 0; i < nr; i++) {
		const fres *r = &net->res[rl[i]];
		double extra = r->nweighted ? res_extra(net, r, false) : 0;
		share[i] = r->cap_Bps / (live_occ(net, r) + extra);
		least = share[i] < least ? share[i] : least;
	}
	/* As water_fill's one level would: its cap first, within TIE_EPS of
	 * the level, then a private resource at the level, then the least id
	 * of the shared ones at it (level_bound), whatever their order here */
	level = least * (1 + TIE_EPS);
	if (f->cap_Bps > 0 && f->cap_Bps <= level) {
		froze_on(net, f, BY_CAP);
		f->new_Bps = f->cap_Bps;
		return;
	}
	if (!(priv <= level)) {
		bound = UINT32_MAX;
		for (uint32_t i = 0; i < nr; i++)
			if (share[i] <= level && rl[i] < bound)
				bound = rl[i];
	}
	froze_on(net, f, bound);
	f->new_Bps = least;
}

/* The water-filling state of the resources filled, by their place i in
 * the list filled (rl[i], scr ci): net->ashare[i] is resource i's
 * share at the start of the level, INFINITY once no unfrozen flow crosses
 * it. A level changes the shares of the resources its flows cross only
 * (listed as touched by freeze), so those alone are recomputed; the least
 * and those at the level are found in one sequential pass over a
 * contiguous array, where the pass over the resources themselves read a
 * scattered struct each. */
static void refresh_touched(flow_net *net)
{
	for (uint32_t i = 0; i < net->ntouched; i++) {
		fscr *q = &net->scr[net->touched[i]];
		q->touched = false;
		net->ashare[q->ci] = q->left ? res_share(q) : INFINITY;
	}
	net->ntouched = 0;
}

/* The least share over the shared resources still carrying unfrozen flows
 * and over the unfrozen flows' private caps; INFINITY when none. */
static double least_share(flow_net *net, uint32_t nr, fcapped *priv, uint32_t *npriv)
{
	double share = least_cap(net, priv, npriv);
	const double *a = net->ashare;
	refresh_touched(net);
	for (uint32_t i = 0; i < nr; i++)
		share = a[i] < share ? a[i] : share;
	return share;
}

/* Which of f's resources at the level (share at its start within level)
 * holds f: the least id, whatever the order of the walk, so that a flow
 * tied on several is charged to the same one by every solve, whole or
 * incremental. */
static uint32_t level_bound(const flow_net *net, const fflow *f, double level)
{
	uint32_t best = UINT32_MAX;
	if (net->listed) {
		for (uint32_t i = f->pin_first; i != NO_POS; i = net->pins[i].next) {
			uint32_t rid = f->slot[net->pins[i].slot].res;
			if (rid < best && net->ashare[net->scr[rid].ci] <= level)
				best = rid;
		}
		return best;
	}
	for (uint32_t k = 0; k < f->ntight; k++) {
		const fscr *q = &net->scr[f->slot[k].res];
		if (f->slot[k].res < best && q->mark == net->epoch && net->ashare[q->ci] <= level)
			best = f->slot[k].res;
	}
	return best;
}

/* Freezes at `share` every unfrozen flow with a private cap or a shared
 * resource at that level (to within TIE_EPS); returns how many. */
static uint32_t freeze_level(flow_net *net, double share, const uint32_t *rl, uint32_t nr,
			     fcapped *priv, uint32_t *npriv)
{
	double level = share * (1 + TIE_EPS);
	uint32_t n = 0;
	while (*npriv && priv[0].cap_Bps <= level) {
		fflow *f = &net->flows[priv[0].id];
		cap_pop(priv, npriv);
		if (!f->frozen)
			freeze(net, f, share, f->priv_res), n++;
	}
	for (uint32_t i = 0; i < nr; i++) {
		const fres *r;
		const fscr *q;
		/* Shares only grow as flows freeze at the least (but for
		 * rounding): the start-of-level one rules most out cheaply. */
		if (net->ashare[i] > level)
			continue;
		q = &net->scr[rl[i]];
		if (!q->left || res_share(q) > level)
			continue;
		r = &net->res[rl[i]];
		for (uint32_t e = 0; e < r->nent; e++) {
			fflow *f = &net->flows[res_ent(r, e)->flow];
			if (!f->frozen)
				freeze(net, f, share, level_bound(net, f, level)), n++;
		}
	}
	return n;
}

/* The resources filled at full capacity, each with its share. */
static void fill_init(flow_net *net, const uint32_t *rl, uint32_t nr)
{
	net->ntouched = 0;
	for (uint32_t i = 0; i < nr; i++) {
		const fres *r = &net->res[rl[i]];
		fscr *q = &net->scr[rl[i]];
		q->rem_Bps = r->cap_Bps;
		q->left = live_occ(net, r);
		q->wt_extra = r->nweighted ? res_extra(net, r, false) : 0;
		q->ci = i;
		q->touched = false;
		net->ashare[i] = q->left ? res_share(q) : INFINITY;
	}
}

/* The unfrozen flows have nothing left to hold them: an incremental
 * re-solve left out every resource of theirs that can (take_resources).
 * Each is frozen at its upper bound, which fills the shared resource it
 * comes from, so that add_filled adds that and the filling runs again. */
static void freeze_unbounded(flow_net *net, uint32_t nf)
{
	for (uint32_t i = 0; i < nf; i++) {
		fflow *f = &net->flows[net->cflow[i]];
		if (!f->frozen)
			freeze(net, f, f->ub_Bps, BY_CAP);
	}
}

/* Progressive filling of the flows in cflow over the resources in rl (the
 * component's, or those an incremental re-solve fills): raise every unfrozen
 * flow together; at the level of the tightest resource, freeze its flows
 * (or, when a flow's own cap is lower, the flows at that cap); repeat. A
 * private resource's share is its flow's cap/times until that flow
 * freezes, so the private ones enter as one list of their flows' least,
 * and the shared ones as a heap by share: the same levels as scanning
 * every resource of the component, for a fraction of the cost when flows
 * meet on a few links of long paths. */
static void water_fill(flow_net *net, const uint32_t *rl, uint32_t nr, uint32_t nf)
{
	uint32_t unfrozen = nf, ncap, npriv;
	fcapped *own, *priv;
	net->nfroze = 0; /* a filling run again forgets the last */
	/* (a pinned one is held at its rate, which fill_one does not know:
	 * alone in a re-solve once a resource it crosses holds parked flows
	 * besides it) */
	if (nf == 1 && !net->flows[net->cflow[0]].pinned)
		return fill_one(net, rl, nr);
	fill_init(net, rl, nr);
	heap_caps(net, nf, &ncap, &npriv);
	own = net->capped, priv = net->capped + nf;
	while (unfrozen > 0) {
		double share = least_share(net, nr, priv, &npriv);
		double capmin = least_cap(net, own, &ncap);
		if (share == INFINITY && capmin == INFINITY)
			return freeze_unbounded(net, nf);
		/* a cap within TIE_EPS of the level is at it, and holds its
		 * flow first (as fill_one): which of the two rounds lower
		 * must not decide what holds the flow */
		if (capmin > share * (1 + TIE_EPS)) {
			unfrozen -= freeze_level(net, share, rl, nr, priv, &npriv);
			continue;
		}
		while (ncap && own[0].cap_Bps <= capmin * (1 + TIE_EPS)) {
			fflow *f = &net->flows[own[0].id];
			double cap = own[0].cap_Bps;
			cap_pop(own, &ncap);
			if (!f->frozen)
				freeze(net, f, cap, BY_CAP), unfrozen--;
		}
	}
}

/* A fresh epoch: marks from before are stale. At the wrap every mark is
 * cleared first, so that none can pass for a new one (an instant whose
 * solve spans the wrap may re-solve a part twice, to the same rates). */
static void next_epoch(flow_net *net)
{
	if (net->epoch == UINT32_MAX) {
		for (uint32_t i = 0; i < net->nres; i++)
			net->scr[i].mark = 0;
		for (uint32_t i = 0; i < net->nflows; i++)
			net->flows[i].mark = 0;
		net->epoch = 0;
	}
	net->epoch++;
}

/* ---- Incremental re-solves ----
 *
 * A max-min fair allocation holds every flow at a limit: its cap, or a
 * saturated resource on which no flow is faster (fflow.bound, the one the
 * last solve froze it on). After flows leave or join, a flow whose limit
 * is a resource none of the changed flows touches, directly or through
 * flows re-solved in turn, keeps its rate: its limit is as full as it was.
 * So a re-solve takes the flows held by the changed resources (and the
 * joining ones) as flows to solve, adds the tight resources they cross,
 * takes the flows held by those in turn, and so on; every other flow on
 * those resources is "pinned": it enters the water-filling as if capped at
 * its rate, so its share of each resource is taken off at its level as a
 * whole solve takes it. Then every pinned flow must come out at its rate:
 * one frozen below it (a resource that was not saturated now is) is solved
 * too and the filling runs again (past PIN_ROUNDS rounds, every flow found
 * is solved). Each flow is then at a limit, the allocation is max-min fair
 * and so, being unique, the whole re-solve's, but for rounding: each
 * resource gives out its capacity in order of level in both, yet a whole
 * re-solve computes the unchanged rates again, from sums taken in another
 * order, and may land them a last bit or so away (tests/unit/test_flow.c,
 * incremental_equals_whole_resolve: within 1e-12).
 *
 * The walk takes every tight resource of the flows it solves, but a ring's
 * step crosses dozens of links, most with room to spare: the filling takes
 * only those its flows load to within ROOM_EPS of capacity (take_resources)
 * and, after each filling, those the new rates would so load (add_filled,
 * then it runs again). One left out cannot hold a flow, so the levels,
 * freezes and bounds are those of filling all of them, to the bit; the
 * walk, which fixes the order the flows are found (hence of their new
 * completions, which order events at one instant) and the flows pinned, is
 * unchanged (lazy_fill_equals_eager_fill: rates, times and held times
 * equal). A flow's bound is set once a filling stands (settle_fill), in
 * the order it froze, as a single filling sets it. */
#define PIN_ROUNDS 4

/* fid joins the re-solve: pinned when first found, and solved (its tight
 * resources added) when `solve` or once all are. */
static inline void take_flow(flow_net *net, uint32_t fid, bool solve, uint32_t *nr, uint32_t *nf)
{
	fflow *f = &net->flows[fid];
	if (f->mark != net->epoch) {
		SIM_ASSERT(f->live, "idle flow %u found in a re-solve", fid);
		f->mark = net->epoch;
		f->pinned = true;
		f->pin_first = NO_POS;
		f->applied_Bps = f->rate_Bps;
		net->cflow[(*nf)++] = fid;
	}
	if (!solve || !f->pinned)
		return;
	f->pinned = false;
	for (uint32_t k = 0; k < f->ntight; k++)
		if (net->scr[f->slot[k].res].mark != net->epoch)
			push_cres(net, nr, f->slot[k].res);
}

/* Walked resource rid joins the filling (appended to net->fill when nfill
 * is given, in the order of the walk), its flows' slots on it listed.
 * False when out of memory (the run stops after this event: sim_fail). */
static bool fill_take(flow_net *net, uint32_t rid, uint32_t *nfill)
{
	const fres *r = &net->res[rid];
	net->scr[rid].ci = 0; /* not NO_POS: fill_init numbers it */
	if (nfill)
		net->fill[(*nfill)++] = rid; /* sized by solve_event */
	for (uint32_t e = 0; e < r->nent; e++) {
		const fentry *en = res_ent(r, e);
		fflow *f = &net->flows[en->flow];
		if (f->parked)
			continue;
		if (grow((void **)&net->pins, &net->pins_cap, net->npins + 1, sizeof *net->pins)) {
			oom(net);
			return false;
		}
		net->pins[net->npins] = (struct fpin){ .slot = en->slot, .next = f->pin_first };
		f->pin_first = net->npins++;
	}
	return true;
}

/* The flows of the resources added since *done: solved when the resource
 * holds them (or they join now, at rate 0, or `all`), pinned otherwise.
 * Each resource is filled when its flows load it to within ROOM_EPS of its
 * capacity (or always, eager); one with more room is left out, unless the
 * filling's rates would fill it (add_filled). False when out of memory. */
static bool take_resources(flow_net *net, uint32_t *done, bool all, uint32_t *nr, uint32_t *nf,
			   uint32_t *nfill)
{
	for (; *done < *nr; (*done)++) {
		uint32_t rid = net->cres[*done];
		const fres *r = &net->res[rid];
		double load_Bps = 0;
		for (uint32_t e = 0; e < r->nent; e++) {
			const fentry *en = res_ent(r, e);
			fflow *f = &net->flows[en->flow];
			if (f->parked)
				continue;
			take_flow(net, en->flow, all || f->bound == rid || f->rate_Bps == 0, nr, nf);
			load_Bps += f->applied_Bps * (f->wt ? f->wt[en->slot] : (double)en->times);
		}
		net->scr[rid].rem_Bps = load_Bps; /* left out: add_filled keeps it */
		if ((net->eager || !(load_Bps < r->cap_Bps * (1 - ROOM_EPS))) &&
		    !fill_take(net, rid, nfill))
			return false;
	}
	return true;
}

/* The resources the re-solve walked but left out of the filling that the
 * filled rates would load to within ROOM_EPS of capacity join it (and
 * net->fill is listed anew, in the order of the walk); true when any did.
 * One left out with more room cannot have held a flow: at every level its
 * share stays above the level by a factor of at least 1 + ROOM_EPS (far
 * past TIE_EPS and rounding), as its unfrozen flows each end at or above
 * the level and its load stays within its capacity less ROOM_EPS. So
 * filling it too changes no level, freeze or bound: the filling is the
 * one of every resource walked, to the bit. A resource left out keeps its
 * load at the rates the last filling gave (applied_Bps) in rem_Bps (unused
 * outside the filling), so only the flows that filling moved are read;
 * one is taken as soon as a partial sum reaches the mark (taking one that
 * the rest would bring back under is harmless: any resource may be filled).
 * Out of memory, true with the run failed (sim_error). */
static bool add_filled(flow_net *net, uint32_t nr, uint32_t nf, uint32_t *nfill)
{
	bool added = false;
	if (*nfill == nr)
		return false; /* none left out */
	for (uint32_t i = 0; i < nf; i++) {
		fflow *f = &net->flows[net->cflow[i]];
		double d_Bps = f->new_Bps - f->applied_Bps;
		if (d_Bps == 0)
			continue;
		f->applied_Bps = f->new_Bps;
		for (uint32_t k = 0; k < f->ntight; k++) {
			fscr *q = &net->scr[f->slot[k].res];
			if (q->mark != net->epoch || q->ci != NO_POS)
				continue; /* not walked, or filled */
			q->rem_Bps += d_Bps * slot_w(f, k);
			if (!(q->rem_Bps < net->res[f->slot[k].res].cap_Bps * (1 - ROOM_EPS))) {
				if (!fill_take(net, f->slot[k].res, NULL))
					return true;
				added = true;
			}
		}
	}
	if (added) {
		*nfill = 0;
		for (uint32_t i = 0; i < nr; i++)
			if (net->scr[net->cres[i]].ci != NO_POS)
				net->fill[(*nfill)++] = net->cres[i];
	}
	return added;
}

/* Solves every pinned flow the filling froze off its rate; false when
 * none was. */
static bool unpin_moved(flow_net *net, bool all, uint32_t *nr, uint32_t *nf)
{
	bool moved = false;
	uint32_t n = *nf;
	for (uint32_t i = 0; i < n; i++) {
		fflow *f = &net->flows[net->cflow[i]];
		if (f->pinned && (all || f->new_Bps != f->rate_Bps)) {
			take_flow(net, net->cflow[i], true, nr, nf);
			moved = true;
		}
	}
	return moved;
}

/* A re-solve with nothing to solve, or out of memory (the run stops after
 * this event), ends with no rate moved. */
static void abandon(flow_net *net, uint32_t nf)
{
	for (uint32_t i = 0; i < nf; i++)
		net->flows[net->cflow[i]].pinned = false;
	net->listed = false;
}

/* Re-solves what the change at dirty resource d can move (see above), in
 * a fresh epoch: the flows a re-solve at this instant settled stay
 * settled. */
static void resolve_changed(flow_net *net, uint32_t d)
{
	const fres *s = &net->res[d];
	uint32_t nr = 0, nf = 0, done = 0, rounds = 0;
	uint32_t nfill = 0;
	bool all = false;
	next_epoch(net);
	net->npins = 0;
	net->listed = true;
	if (s->tight) {
		push_cres(net, &nr, d);
	} else {
		for (uint32_t e = 0; e < s->nent; e++) {
			uint32_t fid = res_ent(s, e)->flow;
			const fflow *f = &net->flows[fid];
			if (!f->parked && (f->bound == d || f->rate_Bps == 0))
				take_flow(net, fid, true, &nr, &nf);
		}
	}
	if (!take_resources(net, &done, all, &nr, &nf, &nfill) || nf == 0)
		return abandon(net, nf);
	for (;;) {
		water_fill(net, net->fill, nfill, nf);
		if (add_filled(net, nr, nf, &nfill)) {
			if (sim_error(net->eng))
				return abandon(net, nf);
			continue; /* the same flows, over more resources */
		}
		settle_fill(net);
		if (!unpin_moved(net, all, &nr, &nf))
			break;
		all = ++rounds >= PIN_ROUNDS;
		if (!take_resources(net, &done, all, &nr, &nf, &nfill))
			return abandon(net, nf);
	}
	net->listed = false;
	net->solves++;
	for (uint32_t i = 0; i < nf; i++) {
		fflow *f = &net->flows[net->cflow[i]];
		if (f->pinned) {
			if (f->pin_bound != f->bound)
				set_bound(net, f, f->pin_bound);
			f->pinned = false; /* pinned only within this re-solve */
			continue;
		}
		/* alone in its component just when it shares nothing: its tight
		 * resources would bring their other flows */
		f->solo = f->nshared == 0;
		f->solo_gen = net->gen;
		apply_rate(net, net->cflow[i], f->new_Bps);
	}
}

/* Whole re-solve of the component of dirty resource r (the walk's epoch
 * marks what this instant re-solved already). */
static void resolve_component(flow_net *net, uint32_t r)
{
	uint32_t nr, nf;
	walk_component(net, r, &nr, &nf);
	if (nf == 0)
		return;
	water_fill(net, net->cres, nr, nf);
	settle_fill(net);
	net->solves++;
	for (uint32_t i = 0; i < nf; i++) {
		fflow *f = &net->flows[net->cflow[i]];
		/* alone on every resource, as resolve_changed has it: a
		 * resource shared with a parked flow only counts as shared */
		f->solo = f->nshared == 0;
		f->solo_gen = net->gen;
	}
	for (uint32_t i = 0; i < nf; i++)
		apply_rate(net, net->cflow[i], net->flows[net->cflow[i]].new_Bps);
}

static void solve_event(sim_engine *eng, void *obj, uint64_t data)
{
	flow_net *net = obj;
	uint32_t first;
	(void)eng;
	(void)data;
	for (uint32_t i = 0; i < net->njoined; i++) {
		uint32_t fid = net->joined[i];
		net->flows[fid].joined = false;
		if (!place_quietly(net, fid))
			add_dirty(net, net->flows[fid].slot[0].res);
	}
	net->njoined = 0;
	net->solve_pending = false;
	next_epoch(net); /* one epoch per solve: a component walked once is marked */
	first = net->epoch;
	/* Every scratch list at its largest up front, so that running out of
	 * memory stops the run here rather than half-way through a solve. */
	if (grow((void **)&net->cres, &net->cres_cap, net->nres, sizeof *net->cres) ||
	    grow((void **)&net->fill, &net->fill_cap, net->nres, sizeof *net->fill) ||
	    grow((void **)&net->ashare, &net->ashare_cap, net->nres, sizeof *net->ashare) ||
	    grow((void **)&net->touched, &net->touched_cap, net->nres, sizeof *net->touched) ||
	    grow((void **)&net->cflow, &net->cflow_cap, net->nflows, sizeof *net->cflow) ||
	    grow((void **)&net->froze, &net->froze_cap, net->nflows, sizeof *net->froze) ||
	    grow((void **)&net->capped, &net->capped_cap, 2 * net->nflows, sizeof *net->capped)) {
		oom(net);
		return;
	}
	for (uint32_t d = 0; d < net->ndirty; d++) {
		uint32_t r = net->dirty[d];
		net->res[r].dirty = false;
		/* A resource whose flows all parked (a ring step's flow parks and
		 * marks the links it shared, whose other flows may be parked
		 * too): nothing to solve. Asking the re-solve instead cost
		 * 162 M abandoned walks in train-405b-16k-2nics. */
		if (none_live(net, &net->res[r]))
			continue;
		if (net->full)
			resolve_component(net, r);
		else if (net->scr[r].mark < first) /* else re-solved with its flows */
			resolve_changed(net, r);
	}
	net->ndirty = 0;
}

void flow_net_set_incremental(flow_net *net, bool on) { net->full = !on; }
void flow_net_set_lazy_fill(flow_net *net, bool on) { net->eager = !on; }

double flow_rate_Bps(const flow_net *net, uint32_t fid)
{
	return net->flows[fid].rate_Bps;
}

double flow_bytes_left(const flow_net *net, uint32_t fid)
{
	return left_now(net, &net->flows[fid]);
}

uint64_t flow_bytes_sent(const flow_net *net) { return net->sent; }
uint64_t flow_bytes_delivered(const flow_net *net) { return net->delivered; }
size_t flow_active(const flow_net *net) { return net->active; }
uint64_t flow_solves(const flow_net *net) { return net->solves; }

/* True when some resource on f's path is saturated and no flow on it is
 * faster than f: f's bottleneck. */
static bool has_bottleneck(const flow_net *net, const fflow *f)
{
	for (uint32_t k = 0; k < f->nslot; k++) {
		uint32_t rid = f->slot[k].res;
		const fres *r = &net->res[rid];
		bool fastest = true;
		if (flow_res_load_Bps(net, rid) < r->cap_Bps * (1 - CHECK_EPS))
			continue;
		for (uint32_t e = 0; e < r->nent && fastest; e++)
			fastest = net->flows[res_ent(r, e)->flow].rate_Bps <= f->rate_Bps * (1 + CHECK_EPS);
		if (fastest)
			return true;
	}
	return false;
}

int flow_net_check(const flow_net *net, char *msg, size_t n)
{
	for (uint32_t i = 0; i < net->nres; i++) {
		double load = flow_res_load_Bps(net, i);
		if (load > net->res[i].cap_Bps * (1 + CHECK_EPS))
			return snprintf(msg, n, "resource %u carries %.6g B/s over its capacity %.6g B/s",
					i, load, net->res[i].cap_Bps), SIM_ERANGE;
	}
	for (uint32_t i = 0; i < net->nflows; i++) {
		const fflow *f = &net->flows[i];
		if (!f->live)
			continue;
		if (!(f->rate_Bps > 0))
			return snprintf(msg, n, "flow %u has no rate", i), SIM_ERANGE;
		if (f->cap_Bps > 0 && f->rate_Bps > f->cap_Bps * (1 + CHECK_EPS))
			return snprintf(msg, n, "flow %u runs above its cap", i), SIM_ERANGE;
		if (f->cap_Bps > 0 && f->rate_Bps >= f->cap_Bps * (1 - CHECK_EPS))
			continue;
		if (!has_bottleneck(net, f))
			return snprintf(msg, n, "flow %u (%.6g B/s) has no bottleneck: not max-min fair",
					i, f->rate_Bps), SIM_ERANGE;
	}
	return 0;
}
