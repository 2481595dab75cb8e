/* Max-min fair flow solver (see flow.h).
 *
 * Each resource keeps the list of (flow, path slot) entries crossing it and
 * each flow keeps, per path slot, its index in that list, so a flow joins
 * and leaves in O(path length) with swap-removal. Changes mark resources
 * dirty; one solve event per instant walks the component of each dirty
 * resource (resources <-> flows) and water-fills it. A flow's progress is
 * lazy: bytes_left is exact as of t_last, its last rate change, and its
 * completion event is moved only when its rate really changes. */
#include "sim/flow.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"

#define NO_FLOW UINT32_MAX
#define TIE_EPS 1e-12  /* shares this close (relative) are one level */
#define CHECK_EPS 1e-9

typedef struct fentry {
	uint32_t flow;
	uint32_t slot;
} fentry;

typedef struct fres {
	double cap_Bps;
	fentry *ent;
	uint32_t n, ent_cap;
	uint32_t mark;   /* component walk epoch */
	bool dirty;
	double rem_Bps;  /* water-filling scratch */
	uint32_t left;
} fres;

typedef struct fflow {
	uint64_t bytes;
	double left_bytes;  /* as of t_last */
	double rate_Bps;
	double cap_Bps;
	sim_time t_last;
	uint32_t *path;     /* path_len ids, then path_len positions */
	uint32_t path_len;
	uint32_t mark;
	bool live, frozen;
	bool keep, attached, in_idle_list, solo;
	uint64_t solo_gen;         /* net->gen when solo was last set */
	double solo_rate_Bps;      /* its rate when it went idle attached */
	double new_Bps;
	sim_event_id done_ev;
	sim_handler *fn;
	void *obj;
	uint64_t data;
	uint32_t next_free;
} fflow;

struct flow_net {
	sim_engine *eng;
	fres *res;
	uint32_t nres, res_cap;
	fflow *flows;
	uint32_t nflows, flows_cap, free_head;
	uint32_t *dirty;
	uint32_t ndirty, dirty_cap;
	uint32_t *cres, *cflow;  /* component scratch */
	uint32_t cres_cap, cflow_cap;
	uint32_t epoch;
	bool solve_pending;
	uint64_t sent, delivered, solves;
	uint64_t gen;              /* bumped by every join */
	uint32_t *idle;            /* kept flows idle but still joined */
	uint32_t nidle, idle_cap;
	size_t active;
};

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	uint64_t c = *cap ? *cap : 4;
	void *q;
	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (c > UINT32_MAX)
		return SIM_ENOMEM;
	q = realloc(*p, (size_t)c * elem);
	if (!q)
		return SIM_ENOMEM;
	*p = q;
	*cap = (uint32_t)c;
	return 0;
}

flow_net *flow_net_new(sim_engine *eng)
{
	flow_net *net = calloc(1, sizeof *net);
	if (!net)
		return NULL;
	net->eng = eng;
	net->free_head = NO_FLOW;
	return net;
}

void flow_net_free(flow_net *net)
{
	if (!net)
		return;
	for (uint32_t i = 0; i < net->nres; i++)
		free(net->res[i].ent);
	for (uint32_t i = 0; i < net->nflows; i++)
		free(net->flows[i].path);
	free(net->res);
	free(net->flows);
	free(net->dirty);
	free(net->idle);
	free(net->cres);
	free(net->cflow);
	free(net);
}

int flow_res_add(flow_net *net, double cap_Bps, uint32_t *id)
{
	if (!(cap_Bps > 0) || !isfinite(cap_Bps))
		return SIM_EINVAL;
	if (net->nres == UINT32_MAX - 1 ||
	    grow((void **)&net->res, &net->res_cap, net->nres + 1, sizeof *net->res))
		return SIM_ENOMEM;
	net->res[net->nres] = (fres){ .cap_Bps = cap_Bps };
	if (id)
		*id = net->nres;
	net->nres++;
	return 0;
}

size_t flow_res_count(const flow_net *net) { return net->nres; }
double flow_res_cap_Bps(const flow_net *net, uint32_t res) { return net->res[res].cap_Bps; }

uint32_t flow_res_nflows(const flow_net *net, uint32_t res) { return net->res[res].n; }

double flow_res_load_Bps(const flow_net *net, uint32_t res)
{
	const fres *r = &net->res[res];
	double sum = 0;
	for (uint32_t i = 0; i < r->n; i++)
		sum += net->flows[r->ent[i].flow].rate_Bps;
	return sum;
}

static void solve_event(sim_engine *eng, void *obj, uint64_t data);

/* Marks r for the next solve and makes sure one is scheduled now. */
static void mark_dirty(flow_net *net, uint32_t r)
{
	if (!net->res[r].dirty) {
		if (grow((void **)&net->dirty, &net->dirty_cap, net->ndirty + 1, sizeof *net->dirty))
			SIM_DIE("out of memory in the flow solver");
		net->res[r].dirty = true;
		net->dirty[net->ndirty++] = r;
	}
	if (!net->solve_pending) {
		if (sim_schedule_at(net->eng, sim_now(net->eng), solve_event, net, 0, NULL))
			SIM_DIE("out of memory in the flow solver");
		net->solve_pending = true;
	}
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
	free(f->path);
	*f = (fflow){ .next_free = net->free_head };
	net->free_head = fid;
}

/* Adds fid's entries to its resources. On failure, the slots before
 * *joined are in and must be taken out. */
static int join_resources(flow_net *net, uint32_t fid, uint32_t *joined)
{
	fflow *f = &net->flows[fid];
	for (*joined = 0; *joined < f->path_len; (*joined)++) {
		uint32_t s = *joined;
		fres *r = &net->res[f->path[s]];
		if (grow((void **)&r->ent, &r->ent_cap, r->n + 1, sizeof *r->ent))
			return SIM_ENOMEM;
		f->path[f->path_len + s] = r->n;
		r->ent[r->n++] = (fentry){ .flow = fid, .slot = s };
	}
	return 0;
}

/* Takes fid's entries out of its resources (the first `upto` slots). */
static void leave_resources(flow_net *net, uint32_t fid, uint32_t upto)
{
	fflow *f = &net->flows[fid];
	for (uint32_t s = 0; s < upto; s++) {
		fres *r = &net->res[f->path[s]];
		uint32_t at = f->path[f->path_len + s];
		fentry moved = r->ent[--r->n];
		r->ent[at] = moved;
		net->flows[moved.flow].path[net->flows[moved.flow].path_len + moved.slot] = at;
	}
}

/* A join is about to happen: solo flags from before are stale, and kept
 * flows idling on their resources step off them (they are alone there, so
 * no one else's rate depends on it). */
static void bump(flow_net *net)
{
	net->gen++;
	for (uint32_t i = 0; i < net->nidle; i++) {
		uint32_t fid = net->idle[i];
		fflow *f = &net->flows[fid];
		f->in_idle_list = false;
		if (f->keep && f->attached && !f->live) {
			leave_resources(net, fid, f->path_len);
			f->attached = false;
		}
	}
	net->nidle = 0;
}

static bool spec_ok(const flow_net *net, const flow_spec *spec)
{
	if (spec->cap_Bps < 0 || !isfinite(spec->cap_Bps))
		return false;
	if (spec->path_len == 0)
		return spec->cap_Bps > 0;
	if (!spec->path)
		return false;
	for (uint32_t s = 0; s < spec->path_len; s++)
		if (spec->path[s] >= net->nres)
			return false;
	return true;
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
		      .path_len = spec->path_len, .live = true, .fn = spec->done,
		      .obj = spec->obj, .data = spec->data, .mark = net->epoch };
	f->path = malloc(2 * (size_t)(spec->path_len ? spec->path_len : 1) * sizeof *f->path);
	if (!f->path) {
		release_flow(net, id);
		return SIM_ENOMEM;
	}
	if (spec->path_len)
		memcpy(f->path, spec->path, spec->path_len * sizeof *f->path);
	f->keep = spec->keep;
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
	if (f->path_len == 0)
		apply_rate(net, id, f->cap_Bps); /* alone: its cap is its rate */
	else
		mark_dirty(net, f->path[0]);
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
	if (!(dt_ps < (double)(SIM_TIME_MAX - now)))
		SIM_DIE("flow %u would finish beyond the end of time (rate %g B/s)", fid, rate_Bps);
	at = now + (sim_time)dt_ps;
	if (sim_schedule_at(net->eng, at, done_event, net, fid, &f->done_ev))
		SIM_DIE("out of memory in the flow solver");
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
			if (grow((void **)&net->idle, &net->idle_cap, net->nidle + 1, sizeof *net->idle))
				SIM_DIE("out of memory in the flow solver");
			net->idle[net->nidle++] = fid;
			f->in_idle_list = true;
		}
		return;
	}
	f->rate_Bps = 0;
	leave_resources(net, fid, f->path_len);
	f->attached = false;
	for (uint32_t s = 0; s < f->path_len; s++)
		if (net->res[f->path[s]].n > 0)
			mark_dirty(net, f->path[s]);
}

static void done_event(sim_engine *eng, void *obj, uint64_t data)
{
	flow_net *net = obj;
	uint32_t fid = (uint32_t)data;
	fflow *f = &net->flows[fid];
	sim_handler *fn = f->fn;
	void *fobj = f->obj;
	uint64_t fdata = f->data;
	net->delivered += f->bytes;
	net->active--;
	if (f->keep) {
		go_idle(net, fid);
	} else {
		leave_resources(net, fid, f->path_len);
		for (uint32_t s = 0; s < f->path_len; s++)
			if (net->res[f->path[s]].n > 0)
				mark_dirty(net, f->path[s]);
		release_flow(net, fid);
	}
	if (fn)
		fn(eng, fobj, fdata);
}

int flow_restart(flow_net *net, uint32_t fid, uint64_t bytes, uint64_t data)
{
	fflow *f = &net->flows[fid];
	uint32_t joined;
	if (fid >= net->nflows || !f->keep || f->live)
		return SIM_EINVAL;
	if (!f->attached) {
		bump(net);
		f = &net->flows[fid];
		if (join_resources(net, fid, &joined)) {
			leave_resources(net, fid, joined);
			return SIM_ENOMEM;
		}
		f->attached = true;
		f->solo = false;
	}
	*f = (fflow){ .bytes = bytes, .left_bytes = (double)bytes, .cap_Bps = f->cap_Bps,
		      .t_last = sim_now(net->eng), .path = f->path, .path_len = f->path_len,
		      .mark = f->mark, .live = true, .keep = true, .attached = true,
		      .in_idle_list = f->in_idle_list, .solo = f->solo, .solo_gen = f->solo_gen,
		      .solo_rate_Bps = f->solo_rate_Bps, .fn = f->fn, .obj = f->obj, .data = data };
	net->sent += bytes;
	net->active++;
	if (f->solo && f->solo_gen == net->gen)
		apply_rate(net, fid, f->solo_rate_Bps); /* nothing changed around it: O(1) */
	else if (f->path_len)
		mark_dirty(net, f->path[0]);
	else
		apply_rate(net, fid, f->cap_Bps);
	return 0;
}

int flow_release(flow_net *net, uint32_t fid)
{
	fflow *f = &net->flows[fid];
	if (fid >= net->nflows || !f->keep || f->live)
		return SIM_EINVAL;
	if (f->attached)
		leave_resources(net, fid, f->path_len); /* alone there: nobody to re-solve */
	release_flow(net, fid);
	return 0;
}

/* cres holds at most every resource once: solve_event sizes it up front. */
static void push_cres(flow_net *net, uint32_t *n, uint32_t r)
{
	net->res[r].mark = net->epoch;
	net->cres[(*n)++] = r;
}

/* The component of resource `start`: resources into cres, flows into cflow. */
static void walk_component(flow_net *net, uint32_t start, uint32_t *nr, uint32_t *nf)
{
	*nr = *nf = 0;
	push_cres(net, nr, start);
	for (uint32_t i = 0; i < *nr; i++) {
		fres *r = &net->res[net->cres[i]];
		for (uint32_t e = 0; e < r->n; e++) {
			uint32_t fid = r->ent[e].flow;
			fflow *f = &net->flows[fid];
			if (f->mark == net->epoch)
				continue;
			SIM_ASSERT(f->live, "idle flow %u found in a component", fid);
			f->mark = net->epoch;
			if (grow((void **)&net->cflow, &net->cflow_cap, *nf + 1, sizeof *net->cflow))
				SIM_DIE("out of memory in the flow solver");
			net->cflow[(*nf)++] = fid;
			for (uint32_t s = 0; s < f->path_len; s++)
				if (net->res[f->path[s]].mark != net->epoch)
					push_cres(net, nr, f->path[s]);
		}
	}
}

static void freeze(flow_net *net, fflow *f, double rate_Bps)
{
	f->frozen = true;
	f->new_Bps = rate_Bps;
	for (uint32_t s = 0; s < f->path_len; s++) {
		fres *r = &net->res[f->path[s]];
		r->rem_Bps -= rate_Bps;
		if (r->rem_Bps < 0)
			r->rem_Bps = 0;
		r->left--;
	}
}

/* Progressive filling of the component in cres/cflow: raise every unfrozen
 * flow together; freeze the flows of the tightest resource (or the lowest
 * cap) at that level; repeat. */
static void water_fill(flow_net *net, uint32_t nr, uint32_t nf)
{
	uint32_t unfrozen = nf;
	if (nf == 1) {
		/* Alone in its component (the common case of independent
		 * transfers): the tightest resource, counting repeats, or its cap. */
		fflow *f = &net->flows[net->cflow[0]];
		double rate = f->cap_Bps > 0 ? f->cap_Bps : INFINITY;
		for (uint32_t i = 0; i < nr; i++) {
			const fres *r = &net->res[net->cres[i]];
			rate = fmin(rate, r->cap_Bps / r->n);
		}
		f->new_Bps = rate;
		return;
	}
	for (uint32_t i = 0; i < nr; i++) {
		fres *r = &net->res[net->cres[i]];
		r->rem_Bps = r->cap_Bps;
		r->left = r->n;
	}
	for (uint32_t i = 0; i < nf; i++)
		net->flows[net->cflow[i]].frozen = false;
	while (unfrozen > 0) {
		double share = INFINITY, capmin = INFINITY;
		for (uint32_t i = 0; i < nr; i++) {
			fres *r = &net->res[net->cres[i]];
			if (r->left && r->rem_Bps / r->left < share)
				share = r->rem_Bps / r->left;
		}
		for (uint32_t i = 0; i < nf; i++) {
			fflow *f = &net->flows[net->cflow[i]];
			if (!f->frozen && f->cap_Bps > 0 && f->cap_Bps < capmin)
				capmin = f->cap_Bps;
		}
		if (capmin <= share) {
			for (uint32_t i = 0; i < nf; i++) {
				fflow *f = &net->flows[net->cflow[i]];
				if (!f->frozen && f->cap_Bps > 0 && f->cap_Bps <= capmin * (1 + TIE_EPS))
					freeze(net, f, f->cap_Bps), unfrozen--;
			}
			continue;
		}
		for (uint32_t i = 0; i < nr; i++) {
			fres *r = &net->res[net->cres[i]];
			if (!r->left || r->rem_Bps / r->left > share * (1 + TIE_EPS))
				continue;
			for (uint32_t e = 0; e < r->n; e++) {
				fflow *f = &net->flows[r->ent[e].flow];
				if (!f->frozen)
					freeze(net, f, share), unfrozen--;
			}
		}
	}
}

static void solve_event(sim_engine *eng, void *obj, uint64_t data)
{
	flow_net *net = obj;
	(void)eng;
	(void)data;
	net->solve_pending = false;
	net->epoch++; /* one epoch per solve: a component walked once is marked */
	if (grow((void **)&net->cres, &net->cres_cap, net->nres, sizeof *net->cres))
		SIM_DIE("out of memory in the flow solver");
	for (uint32_t d = 0; d < net->ndirty; d++) {
		uint32_t r = net->dirty[d], nr, nf;
		net->res[r].dirty = false;
		if (net->res[r].n == 0 || net->res[r].mark == net->epoch)
			continue;
		walk_component(net, r, &nr, &nf);
		water_fill(net, nr, nf);
		net->solves++;
		for (uint32_t i = 0; i < nf; i++) {
			fflow *f = &net->flows[net->cflow[i]];
			f->solo = nf == 1;
			f->solo_gen = net->gen;
		}
		for (uint32_t i = 0; i < nf; i++)
			apply_rate(net, net->cflow[i], net->flows[net->cflow[i]].new_Bps);
	}
	net->ndirty = 0;
}

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
	for (uint32_t s = 0; s < f->path_len; s++) {
		uint32_t rid = f->path[s];
		const fres *r = &net->res[rid];
		bool fastest = true;
		if (flow_res_load_Bps(net, rid) < r->cap_Bps * (1 - CHECK_EPS))
			continue;
		for (uint32_t e = 0; e < r->n && fastest; e++)
			fastest = net->flows[r->ent[e].flow].rate_Bps <= f->rate_Bps * (1 + CHECK_EPS);
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
