/* One training variant for dpusim run: replications of train_sim, their
 * statistics, and every metric that applies, into a report variant. */
#include "tools/run_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "models/power.h"
#include "models/reliab.h"
#include "models/train.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "sim/stats.h"
#include "tools/trace.h"

static const char *const part_names[TRAIN_NPARTS] = {
	[TRAIN_COMPUTE] = "compute", [TRAIN_EXPOSED_COMM] = "exposed_comm",
	[TRAIN_DATA_STALL] = "data_stall", [TRAIN_CPU_STALL] = "cpu_stall",
	[TRAIN_BUBBLE] = "pipeline_bubble", [TRAIN_OTHER] = "other",
};

/* Aggregates over replications. */
typedef struct agg {
	stats_acc rep_mean;        /* per-replication mean iteration time */
	double *all;               /* every measured iteration */
	size_t nall;
	double part[TRAIN_NPARTS];
	double gpu, cpu, dpu;
	bool has_cpu, has_dpu;
	train_result last;
	int reps;
} agg;

static int agg_add(agg *a, train_result *r)
{
	double sum = 0;
	double *all = realloc(a->all, (a->nall + r->iters) * sizeof *all);
	if (!all)
		return SIM_ENOMEM;
	a->all = all;
	for (uint32_t i = 0; i < r->iters; i++) {
		sum += r->iter_s[i];
		a->all[a->nall++] = r->iter_s[i];
	}
	stats_acc_add(&a->rep_mean, sum / r->iters);
	for (int k = 0; k < TRAIN_NPARTS; k++)
		a->part[k] += r->part_s[k];
	a->gpu += r->gpu_busy_frac;
	if (isfinite(r->host_cpu_util))
		a->cpu += r->host_cpu_util, a->has_cpu = true;
	if (isfinite(r->dpu_util))
		a->dpu += r->dpu_util, a->has_dpu = true;
	a->reps++;
	train_result_release(&a->last);
	a->last = *r;
	return SIM_OK;
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

static int put_iteration(rep_variant *rv, agg *a, double *mean)
{
	double ci = NAN, p50, p99;
	gsl_sort(a->all, 1, a->nall);
	p50 = gsl_stats_quantile_from_sorted_data(a->all, 1, a->nall, 0.50);
	p99 = gsl_stats_quantile_from_sorted_data(a->all, 1, a->nall, 0.99);
	*mean = stats_acc_mean(&a->rep_mean);
	if (a->reps >= 2 && stats_acc_ci95(&a->rep_mean, &ci))
		ci = NAN;
	return rep_variant_set_stat(rv, "iteration_s", *mean, p50, p99, ci);
}

/* Breakdown of the mean iteration: mean parts, scaled so they add up to
 * the mean iteration time exactly (each replication's add up to its own). */
static int put_breakdown(rep_variant *rv, const agg *a, double mean)
{
	double total = 0;
	int rc = 0;
	for (int k = 0; k < TRAIN_NPARTS; k++)
		total += a->part[k];
	for (int k = 0; k < TRAIN_NPARTS && !rc; k++)
		rc = rep_variant_set_breakdown(rv, part_names[k],
					       total > 0 ? a->part[k] / total * mean : 0);
	return rc;
}

static int put_throughput(const scn_job *job, const train_config *c, rep_variant *rv,
			  const agg *a, double mean, double *tokens_per_s)
{
	const scn_training *t = &job->wl.train;
	double gpus = (double)c->tp * c->pp * c->dp, flops, model_flops;
	int rc = rep_variant_set_metric(rv, "samples_per_s", t->global_batch / mean);
	*tokens_per_s = NAN;
	if (c->model.kind == WL_TRANSFORMER) {
		*tokens_per_s = (double)t->global_batch * c->model.tf.seq / mean;
		/* Megatron-LM's counting (equation 3): recomputation included. */
		flops = wl_iter_flops(&c->model.tf, t->global_batch, c->recompute);
		model_flops = wl_iter_flops(&c->model.tf, t->global_batch, false);
		if (!rc)
			rc = rep_variant_set_metric(rv, "tokens_per_s", *tokens_per_s);
	} else {
		flops = model_flops = 3.0 * c->model.vis.fwd_flops_per_sample * t->global_batch;
	}
	if (!rc)
		rc = rep_variant_set_metric(rv, "tflops_per_gpu", flops / mean / gpus / 1e12);
	if (!rc)
		rc = rep_variant_set_metric(rv, "mfu", clamp01(model_flops / mean / gpus /
								c->gpu.peak_flops));
	if (!rc)
		rc = rep_variant_set_metric(rv, "gpu_util", clamp01(a->gpu / a->reps));
	if (!rc && a->has_cpu)
		rc = rep_variant_set_metric(rv, "host_cpu_util", clamp01(a->cpu / a->reps));
	if (!rc && a->has_dpu)
		rc = rep_variant_set_metric(rv, "dpu_util", clamp01(a->dpu / a->reps));
	return rc;
}

/* Time to train, goodput, energy and cost: only those the scenario gives
 * what they need for. */
static int put_run_totals(const scn_scenario *s, const train_config *c, rep_variant *rv,
			  rep_report *rep, double tokens_per_s, double gpu_util)
{
	const scn_training *t = &s->jobs[0].wl.train;
	double gpus = (double)c->tp * c->pp * c->dp, useful_s, wall_s;
	char why[160];
	int rc = 0;
	if (!(t->target_tokens > 0) || !isfinite(tokens_per_s))
		return SIM_OK;
	useful_s = t->target_tokens / tokens_per_s;
	wall_s = useful_s;
	if (s->failures.enabled) {
		rel_params rp = { .restart_s = s->failures.restart_s,
				  .ckpt_bytes = s->failures.checkpoint_bytes > 0
							? s->failures.checkpoint_bytes
							: 16.0 * wl_params(&c->model),
				  .ckpt_write_Bps = c->storage_Bps > 0 ? c->storage_Bps : NAN };
		rel_plan plan;
		rp.part[REL_NODE] = (rel_part){ .count = c->fabric.nodes,
						.mtbf_s = s->failures.node_mtbf_s };
		if (rel_plan_for(&rp, useful_s, s->failures.checkpoint_interval_s, &plan, why,
				 sizeof why)) {
			rep_set_info(rep, "goodput", why);
		} else {
			wall_s = plan.wall_s;
			rc = rep_variant_set_metric(rv, "goodput", plan.goodput);
			char buf[160];
			snprintf(buf, sizeof buf, "checkpoint every %.0f s; Young suggests %.0f s, "
				 "Daly %.0f s (goodput %.3f)", plan.interval_s, plan.young_s,
				 plan.daly_s, plan.daly_goodput);
			rep_set_info(rep, "checkpoint_interval", buf);
		}
	}
	if (!rc)
		rc = rep_variant_set_metric(rv, "time_to_train_s", wall_s);
	if (!rc && s->cost.present && s->cost.gpu_usd_per_s > 0) {
		double dpus = s->cluster.has_dpu ? c->fabric.nodes * (double)s->cluster.dpus_per_node : 0;
		double usd = wall_s * (gpus * s->cost.gpu_usd_per_s + dpus * s->cost.dpu_usd_per_s);
		rc = rep_variant_set_metric(rv, "cost_usd", usd);
	}
	if (!rc && s->cost.present && profile_has(s->cluster.gpu.v.gpu.tdp_w)) {
		pwr_cluster pc;
		double util[PWR_KINDS] = { [PWR_GPU] = gpu_util };
		pwr_cluster_init(&pc);
		pc.part[PWR_GPU] = (pwr_part){ .count = (uint64_t)gpus,
					       .max_w = s->cluster.gpu.v.gpu.tdp_w,
					       .idle_w = s->cluster.gpu.v.gpu.idle_w };
		pc.pue = s->cost.pue >= 1 ? s->cost.pue : 1;
		if (pwr_cluster_check(&pc, why, sizeof why))
			rep_set_info(rep, "energy", why);
		else
			rc = rep_variant_set_metric(rv, "energy_kwh",
						    pwr_energy_kwh(&pc, util, wall_s));
	}
	return rc;
}

static int put_collectives(rep_variant *rv, const train_result *r)
{
	int rc = 0;
	for (uint32_t i = 0; i < r->ncoll && !rc; i++) {
		const train_coll_stat *c = &r->coll[i];
		double algbw = c->time_s > 0 ? (double)c->bytes / c->time_s / 1e9 : 0;
		coll_op op;
		double factor = coll_op_parse(c->op, &op) ? 1 : coll_busbw_factor(op, c->ranks);
		rep_collective rc_ = { .op = c->op, .algo = c->algo, .ranks = c->ranks,
				       .bytes = c->bytes, .time_s = c->time_s,
				       .algbw_GBps = algbw, .busbw_GBps = algbw * factor };
		rc = rep_variant_add_collective(rv, &rc_);
	}
	return rc;
}

static void put_notes(rep_report *rep, const char *variant, diag *notes, const train_result *r)
{
	char key[96];
	for (size_t i = 0; i < diag_count(notes) && i < DIAG_MAX; i++) {
		snprintf(key, sizeof key, "%s.note%zu", variant, i + 1);
		rep_set_info(rep, key, diag_msg(notes, i));
	}
	snprintf(key, sizeof key, "%s.critical_path", variant);
	rep_set_info(rep, key, r->critical);
}

static void to_trace(void *ctx, const train_span *sp)
{
	static const trace_cat cats[] = { [TRAIN_SPAN_COMPUTE] = TRACE_COMPUTE,
					  [TRAIN_SPAN_COMM] = TRACE_COMM,
					  [TRAIN_SPAN_DATA] = TRACE_DATA,
					  [TRAIN_SPAN_STALL] = TRACE_STALL };
	trace *t = ctx;
	int track = sp->track == TRAIN_TRACK_GPU    ? trace_gpu(t, (int)sp->node, (int)sp->gpu)
		    : sp->track == TRAIN_TRACK_HOST ? trace_host(t, (int)sp->node)
						    : trace_link(t, sp->link);
	if (track >= 0)
		trace_span(t, track, sp->start_s, sp->dur_s, cats[sp->cat], sp->name);
}

int train_variant(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		  int replications, uint64_t seed, FILE *progress, struct trace *tr,
		  rep_variant *rv, rep_report *rep, diag *d)
{
	int reps = replications > 0 ? replications : s->replications > 0 ? s->replications : 1;
	diag *notes = diag_new();
	agg a = { .reps = 0 };
	train_config c;
	double mean, tps;
	int rc = notes ? SIM_OK : SIM_ENOMEM;
	stats_acc_init(&a.rep_mean);
	if (!rc)
		rc = train_config_of(s, job, v, seed, &c, d, notes);
	for (int r = 0; r < reps && !rc; r++) {
		train_result res;
		char name[32];
		snprintf(name, sizeof name, "replication.%d", r);
		c.seed = sim_rng_stream_seed(seed, name);
		c.fabric.seed = c.coll.seed = c.seed;
		c.span = tr && r == 0 ? to_trace : NULL;
		c.span_ctx = tr;
		if (progress)
			fprintf(progress, "dpusim: %s: replication %d of %d\n",
				rep_variant_name(rv), r + 1, reps);
		if (!(rc = train_sim(&c, &res, d)))
			rc = agg_add(&a, &res);
	}
	if (!rc)
		rc = put_iteration(rv, &a, &mean);
	if (!rc)
		rc = put_breakdown(rv, &a, mean);
	if (!rc)
		rc = put_throughput(job, &c, rv, &a, mean, &tps);
	if (!rc)
		rc = put_run_totals(s, &c, rv, rep, tps, a.gpu / a.reps);
	if (!rc)
		rc = put_collectives(rv, &a.last);
	if (!rc)
		put_notes(rep, rep_variant_name(rv), notes, &a.last);
	train_result_release(&a.last);
	free(a.all);
	diag_free(notes);
	return rc;
}
