/* Steady state: a training job whose iterations are identical (no noise
 * drawn per step, no data loader, one job alone, nothing traced) repeats
 * the same iteration once its pipeline has warmed up. When two measured
 * iterations in a row took the same time to the picosecond and added the
 * same to every total the report reads (breakdown, GPU busy time, the
 * collectives' times and counts, every node's host-core seconds and DPU
 * bytes), the iterations left are that one again: they are added without
 * being simulated, and the result says from which iteration (issue 14). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/train_int.h"
#include "sim/err.h"

#define TOTAL_RTOL 1e-12

/* The totals one iteration adds to, in one vector: pp and dp times and
 * counts (the parameter all-gather's too), then every node's core seconds, DPU bytes and SNAP bytes. */
enum { ST_PP_S, ST_DP_S, ST_AG_S, ST_PP_N, ST_DP_N, ST_AG_N, ST_NODES };

static size_t totals_len(const trainer *tr) { return ST_NODES + 3 * (size_t)tr->nodes; }

static void totals(const trainer *tr, double *v)
{
	v[ST_PP_S] = tr->pp_time_s, v[ST_DP_S] = tr->dp_time_s, v[ST_AG_S] = tr->ag_time_s;
	v[ST_PP_N] = (double)tr->pp_count, v[ST_DP_N] = (double)tr->dp_count;
	v[ST_AG_N] = (double)tr->ag_count;
	for (uint32_t i = 0; i < tr->nodes; i++) {
		uint32_t n = tr->node_of[i];
		v[ST_NODES + 3 * i] = tr->w->node_core_s[n];
		v[ST_NODES + 3 * i + 1] = tr->w->node_bytes[n];
		v[ST_NODES + 3 * i + 2] = tr->w->node_snap_bytes[n];
	}
}

static void add_totals(trainer *tr, const double *d)
{
	tr->pp_time_s += d[ST_PP_S], tr->dp_time_s += d[ST_DP_S];
	tr->pp_count += (uint64_t)d[ST_PP_N], tr->dp_count += (uint64_t)d[ST_DP_N];
	tr->ag_time_s += d[ST_AG_S], tr->ag_count += (uint64_t)d[ST_AG_N];
	for (uint32_t i = 0; i < tr->nodes; i++) {
		uint32_t n = tr->node_of[i];
		tr->w->node_core_s[n] += d[ST_NODES + 3 * i];
		tr->w->node_bytes[n] += d[ST_NODES + 3 * i + 1];
		tr->w->node_snap_bytes[n] += d[ST_NODES + 3 * i + 2];
	}
}

bool train_steady_allowed(const trainer *tr, uint32_t njobs)
{
	const train_config *c = tr->cfg;
	return njobs == 1 && !tr->w->nbench && !c->data && !c->span && c->noise.gpu_sigma == 0 &&
	       c->noise.jitter_mean_s == 0 && c->os_jitter == 0;
}

int train_steady_init(trainer *tr, bool allowed)
{
	size_t n = totals_len(tr);
	tr->sd = (train_steady){ .allowed = allowed };
	if (!allowed)
		return SIM_OK;
	/* last totals, then the last iteration's addition to them */
	if (!(tr->sd.v = calloc(2 * n, sizeof *tr->sd.v)))
		return SIM_ENOMEM;
	return SIM_OK;
}

void train_steady_release(trainer *tr)
{
	free(tr->sd.v);
	tr->sd.v = NULL;
}

/* Whether this measured iteration (it_ps long, crit its critical stage,
 * busy its GPU busy sum) repeats the one before in every total. Keeps its
 * totals and additions for the next call. */
static bool repeats(trainer *tr, sim_time it_ps, const stage *crit, double busy)
{
	size_t n = totals_len(tr);
	double *last = tr->sd.v, *add = tr->sd.v + n, *now = tr->sd.scratch;
	bool same = tr->sd.seen >= 2 && it_ps == tr->sd.it_ps && busy == tr->sd.busy &&
		    !memcmp(crit->part, tr->sd.part, sizeof tr->sd.part);
	totals(tr, now);
	for (size_t i = 0; i < n; i++) {
		double a = now[i] - last[i];
		/* A total is a sum of many terms, so what one iteration adds
		 * rounds differently at different magnitudes: equal within
		 * TOTAL_RTOL is the same work. */
		same = same && fabs(a - add[i]) <= TOTAL_RTOL * fabs(add[i]);
		add[i] = a, last[i] = now[i];
	}
	tr->sd.it_ps = it_ps, tr->sd.busy = busy;
	memcpy(tr->sd.part, crit->part, sizeof tr->sd.part);
	tr->sd.seen++;
	return same;
}

bool train_steady_fill(trainer *tr, sim_time it_ps, const stage *crit, double it_s, double busy)
{
	train_result *r = tr->res;
	uint32_t total = tr->cfg->warmup + tr->cfg->iterations;
	size_t n = totals_len(tr);
	bool same;
	if (!tr->sd.allowed || tr->iter + 1 >= total)
		return false;
	if (!(tr->sd.scratch = malloc(n * sizeof *tr->sd.scratch)))
		return false; /* simulated in full: slower, never wrong */
	same = repeats(tr, it_ps, crit, busy);
	free(tr->sd.scratch);
	tr->sd.scratch = NULL;
	if (!same || tr->iter < tr->cfg->warmup)
		return false;
	r->steady_from = r->iters + 1; /* the first iteration not simulated, from 1 */
	tr->end = sim_now(tr->w->eng);
	for (uint32_t k = tr->iter + 1; k < total; k++) {
		train_record_iteration(tr, crit, it_s, busy);
		add_totals(tr, tr->sd.v + n);
		tr->end += it_ps;
	}
	tr->iter = total;
	return true;
}
