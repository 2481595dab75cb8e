/* One training variant for dpusim run: replications of train_sim, their
 * statistics, and every metric that applies, into a report variant. */
#include "tools/cli.h"
#include "tools/run_train.h"

#include "tools/run.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>

#include "models/power.h"
#include "models/reliab.h"
#include "models/setup.h"
#include "models/train.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "sim/stats.h"
#include "tools/progress.h"
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
	double comm[TRAIN_NCOMM];
	double bound[TRAIN_NFLOWS][FAB_NCLASSES];
	double gpu, cpu, dpu, conn;
	bool has_cpu, has_dpu, has_conn;
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
	for (int k = 0; k < TRAIN_NCOMM; k++)
		a->comm[k] += r->comm_s[k];
	for (int k = 0; k < TRAIN_NFLOWS; k++)
		for (int c = 0; c < FAB_NCLASSES; c++)
			a->bound[k][c] += r->bound_s[k][c];
	a->gpu += r->gpu_busy_frac;
	if (isfinite(r->host_cpu_util))
		a->cpu += r->host_cpu_util, a->has_cpu = true;
	if (isfinite(r->dpu_util))
		a->dpu += r->dpu_util, a->has_dpu = true;
	if (isfinite(r->conn_core_util))
		a->conn += r->conn_core_util, a->has_conn = true;
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
	p50 = stats_quantile_sorted(a->all, a->nall, 0.50);
	p99 = stats_quantile_sorted(a->all, a->nall, 0.99);
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

/* binding_s: each kind of transfer's exposed seconds of the mean
 * iteration (scaled as put_breakdown scales the parts), split over the
 * classes of limit by their shares of its flow-seconds. */
static int put_binding(rep_variant *rv, const agg *a, double mean)
{
	size_t nk, nc;
	const char *const *kinds = rep_binding_kinds(&nk);
	const char *const *cls = rep_binding_classes(&nc);
	double total = 0;
	int rc = 0;
	for (int k = 0; k < TRAIN_NPARTS; k++)
		total += a->part[k];
	for (int k = 0; k < TRAIN_NFLOWS && k < (int)nk && !rc && total > 0; k++) {
		double s = k < TRAIN_NCOMM ? a->comm[k] : a->part[TRAIN_DATA_STALL], sum = 0;
		for (int c = 0; c < FAB_NCLASSES; c++)
			sum += a->bound[k][c];
		for (int c = 0; c < FAB_NCLASSES && c < (int)nc && !rc && s > 0 && sum > 0; c++)
			if (a->bound[k][c] > 0)
				rc = rep_variant_set_binding(rv, kinds[k], cls[c],
							     s / total * mean * a->bound[k][c] / sum);
	}
	return rc;
}

static int put_throughput(const scn_job *job, const train_config *c, rep_variant *rv,
			  const agg *a, double mean, double *tokens_per_s)
{
	double batch = job->wl.train.global_batch;
	/* Megatron-LM's counting (equation 3): recomputation included. */
	wl_iter_run run = { .iter_s = mean, .batch = batch,
			    .flops_run = wl_model_iter_flops(&c->model, batch, c->recompute),
			    .gpus = train_gpus(c), .peak_flops = c->gpu.peak_flops };
	wl_rates r = wl_rates_of(&c->model, &run);
	int rc = rep_variant_set_rates(rv, &r);
	*tokens_per_s = r.tokens_per_s;
	if (!rc)
		rc = rep_variant_set_metric(rv, "gpu_util", clamp01(a->gpu / a->reps));
	if (!rc && a->has_cpu)
		rc = rep_variant_set_metric(rv, "host_cpu_util", clamp01(a->cpu / a->reps));
	if (!rc && a->has_conn)
		rc = rep_variant_set_metric(rv, "conn_core_util", clamp01(a->conn / a->reps));
	if (!rc && a->has_dpu)
		rc = rep_variant_set_metric(rv, "dpu_util", clamp01(a->dpu / a->reps));
	return rc;
}

/* The report's checkpoint_interval line. */
static void put_ckpt_info(rep_report *rep, const rel_params *rp, const rel_plan *plan,
			  const char *bound)
{
	char buf[640], mode[320] = "";
	if (plan->mode == REL_ASYNC) {
		int len = snprintf(mode, sizeof mode, ", async: snapshot %.3g s (%.4g GB per GPU at "
				   "%.4g GB/s, %s), persist %.4g s in the background",
				   plan->ckpt_s, rp->snapshot_bytes / 1e9, rp->snapshot_Bps / 1e9,
				   bound, plan->persist_s);
		if (plan->wait_s > 0 && len > 0 && (size_t)len < sizeof mode)
			snprintf(mode + len, sizeof mode - (size_t)len, ", longer than the interval: "
				 "the training waits %.4g s per checkpoint for it", plan->wait_s);
	}
	snprintf(buf, sizeof buf, "checkpoint every %.0f s%s; Young suggests %.0f s, %s %.0f s "
		 "(goodput %.3f); job MTBF %.4g h (%llu nodes, %llu GPUs, "
		 "%llu adapters, %llu switches with an MTBF of their own)",
		 plan->interval_s, mode, plan->young_s,
		 plan->mode == REL_ASYNC ? "the async model's optimum" : "Daly", plan->daly_s,
		 plan->daly_goodput, plan->mtbf_s / 3600, (unsigned long long)rp->part[REL_NODE].count,
		 (unsigned long long)rp->part[REL_GPU].count,
		 (unsigned long long)rp->part[REL_NIC].count,
		 (unsigned long long)rp->part[REL_SWITCH].count);
	rep_set_info(rep, "checkpoint_interval", buf);
}

/* Energy of the run and, with an energy price, what it costs: information
 * only, as the GPU price is all-in (power included), so it is not added to
 * cost_usd. */
static int put_energy(const scn_scenario *s, const train_config *c, rep_variant *rv,
		      rep_report *rep, double gpus, uint64_t switches, double gpu_util,
		      double cpu_util, double wall_s)
{
	pwr_cluster pc;
	double util[PWR_KINDS] = { 0 }, kwh;
	char why[160], left[160], buf[480];
	train_energy_parts(s, c, gpus, switches, gpu_util, cpu_util, &pc, util, left, sizeof left);
	/* No published GPU idle power (docs/profile-sources.md): the GPUs at
	 * their TDP throughout, an upper bound, said in the line below. */
	bool gpu_bound = pwr_part_bound_above(&pc.part[PWR_GPU]);
	if (pwr_cluster_check(&pc, why, sizeof why)) {
		rep_set_info(rep, "energy", why);
		return SIM_OK;
	}
	kwh = pwr_energy_kwh(&pc, util, wall_s);
	snprintf(buf, sizeof buf, "facility draw %.0f W (PUE %.2f x IT %.0f W)%s; left out: %s",
		 pwr_it_w(&pc, util) * pc.pue, pc.pue, pwr_it_w(&pc, util),
		 gpu_bound ? "; an UPPER BOUND: GPUs at their TDP throughout, whatever their "
			     "utilisation (no idle_w published; give one to follow gpu_util)"
			   : "",
		 left);
	rep_set_variant_infof(rep, rep_variant_name(rv), "energy", "%s", buf);
	if (isfinite(s->cost.energy_usd_per_j)) {
		snprintf(buf, sizeof buf, "%.6g kWh x %.4g USD/kWh = %.6g USD, inside the all-in "
			 "GPU price (not added to cost_usd)", kwh, s->cost.energy_usd_per_j * 3.6e6,
			 kwh * s->cost.energy_usd_per_j * 3.6e6);
		rep_set_variant_infof(rep, rep_variant_name(rv), "energy_cost", "%s", buf);
	}
	return rep_variant_set_metric(rv, "energy_kwh", kwh);
}

/* Time to train, goodput, energy and cost: only those the scenario gives
 * what they need for. */
static int put_run_totals(const scn_scenario *s, const scn_job *job, const train_config *c,
			  const train_result *r, rep_variant *rv, rep_report *rep,
			  double tokens_per_s, double gpu_util, double cpu_util)
{
	const scn_training *t = &job->wl.train;
	double gpus = train_gpus(c), useful_s, wall_s;
	/* The job's fabric switches; a scenario with several jobs, which
	 * share them, counts none. */
	uint64_t switches = s->njobs == 1 ? r->net_switches : 0;
	char why[320];
	int rc = 0;
	if (!(t->target_tokens > 0) || !isfinite(tokens_per_s))
		return SIM_OK;
	useful_s = t->target_tokens / tokens_per_s;
	wall_s = useful_s;
	if (s->failures.enabled) {
		rel_params rp = { .restart_s = s->failures.restart_s,
				  .ckpt_bytes = train_ckpt_bytes(s, c),
				  .ckpt_write_Bps = c->storage_write_Bps };
		rel_plan plan;
		char bound[96] = "";
		int prc = 0;
		train_rel_parts(s, c, gpus, switches, &rp);
		if (s->failures.checkpoint_mode == SCN_CKPT_ASYNC)
			prc = train_snapshot_rate(s, c, gpus, &rp, bound, sizeof bound, why,
						  sizeof why);
		if (!prc)
			prc = rel_plan_for(&rp, useful_s, s->failures.checkpoint_interval_s, &plan,
					   why, sizeof why);
		if (prc) {
			rep_set_info(rep, "goodput", why);
			/* never completes: no time to train, cost or energy to give */
			if (prc == SIM_ERANGE)
				return SIM_OK;
		} else {
			wall_s = plan.wall_s;
			rc = rep_variant_set_metric(rv, "goodput", plan.goodput);
			put_ckpt_info(rep, &rp, &plan, bound);
		}
	}
	if (!rc)
		rc = rep_variant_set_metric(rv, "time_to_train_s", wall_s);
	if (!rc && s->cost.present && s->cost.gpu_usd_per_s > 0) {
		/* dpu_price is NAN (not given) without a DPU: no term, not 0 x NAN. */
		double usd = wall_s * gpus * s->cost.gpu_usd_per_s;
		if (s->cluster.has_dpu)
			usd += wall_s * c->fabric.nodes * (double)s->cluster.dpus_per_node *
			       s->cost.dpu_usd_per_s;
		rc = rep_variant_set_metric(rv, "cost_usd", usd);
		if (!rc && usd > 0)
			rc = rep_variant_set_metric(rv, "tokens_per_usd",
						    pwr_tokens_per_usd(t->target_tokens, usd));
	}
	if (!rc && s->cost.present && profile_has(s->cluster.gpu.v.gpu.tdp_w))
		rc = put_energy(s, c, rv, rep, gpus, switches, gpu_util, cpu_util, wall_s);
	return rc;
}

static int put_collectives(rep_variant *rv, const train_result *r)
{
	int rc = 0;
	for (uint32_t i = 0; i < r->ncoll && !rc; i++) {
		const train_coll_stat *c = &r->coll[i];
		rc = run_put_collective(rv, c->op, c->algo, c->ranks, c->bytes, c->time_s);
	}
	return rc;
}

static void put_notes(rep_report *rep, const char *variant, diag *notes, const train_result *r)
{
	run_put_notes(rep, variant, notes);
	rep_set_variant_infof(rep, variant, "critical_path", "%s", r->critical);
}

/* Which NCCL channel count the tensor-parallel all-reduce ran with and
 * where it came from: the GPU profile's nccl_channels, or one per NIC (a
 * note then says the profile gives none). */
static void put_tp_channels(rep_report *rep, const char *variant, const train_config *c,
			    const train_result *r)
{
	char buf[200];
	for (uint32_t i = 0; c->tp > 1 && i < r->ncoll; i++) {
		const train_coll_stat *t = &r->coll[i];
		if (strncmp(t->what, "tensor-parallel", 15))
			continue;
		snprintf(buf, sizeof buf, "%u NCCL channels, %s; the %llu B all-reduce runs on %u",
			 c->tp_channels ? c->tp_channels : c->fabric.nics_per_node,
			 c->tp_channels ? "the GPU profile's nccl_channels"
					: "one per NIC (the GPU profile gives no nccl_channels)",
			 (unsigned long long)t->bytes, t->channels);
		rep_set_variant_infof(rep, variant, "tp_channels", "%s", buf);
	}
}

/* Steady state (models/train_steady.c), when the last replication used it. */
static void put_steady(rep_report *rep, const char *variant, const train_result *r)
{
	char buf[256];
	if (!r->steady_from)
		return;
	snprintf(buf, sizeof buf, "measured iterations %u to %u repeat iteration %u exactly (no "
		 "noise, no data loader, one job): added as copies of it, not simulated",
		 r->steady_from, r->iters, r->steady_from - 1);
	rep_set_variant_infof(rep, variant, "steady_state", "%s", buf);
}

/* The memory per GPU the scenario check computed (models/workload.h): the
 * stage that needs the most, its parts, against the GPU's memory. */
static void put_memory(rep_report *rep, const char *variant, const scn_scenario *s,
		       const scn_job *job)
{
	const wl_memory *m = &job->wl.train.memory;
	char buf[400];
	if (m->total <= 0)
		return;
	snprintf(buf, sizeof buf, "%.1f GB of %.1f GB on pipeline stage %u: weights %.1f GB, "
		 "gradients %.1f GB, optimizer states %.1f GB (mixed-precision Adam, ZeRO stage "
		 "%d), activations %.1f GB (%s1F1B, %s), NCCL buffers %.1f GB, reserve %.1f GB%s",
		 m->total / 1e9, s->cluster.gpu.v.gpu.hbm_bytes / 1e9, m->stage, m->weights / 1e9,
		 m->grads / 1e9, m->optimizer / 1e9, job->wl.train.zero_stage,
		 m->activations / 1e9, job->wl.train.vp > 1 ? "interleaved " : "",
		 job->wl.train.recompute ? "full recomputation" :
		 "no recomputation", m->comm / 1e9, m->reserve / 1e9,
		 m->reserve > 0 ? "" : " (framework and CUDA context not counted: set "
		 "workload.memory_reserve)");
	rep_set_variant_infof(rep, variant, "memory_per_gpu", "%s", buf);
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

/* One job's share of a variant: its configuration, what could not be
 * modelled, and its results aggregated over the replications. */
typedef struct job_acc {
	const scn_job *job;
	rep_variant *rv;
	struct trace *tr;
	train_config c;
	diag *notes;
	agg a;
} job_acc;

static int job_acc_init(job_acc *ja, const scn_scenario *s, const scn_job *job,
			const scn_variant *v, uint64_t seed, struct trace *tr, rep_variant *rv,
			diag *d)
{
	*ja = (job_acc){ .job = job, .rv = rv, .tr = tr, .notes = diag_new() };
	stats_acc_init(&ja->a.rep_mean);
	if (!ja->notes)
		return SIM_ENOMEM;
	return train_config_of(s, job, v, seed, &ja->c, d, ja->notes);
}

/* Replication r's seeds: the fabric's and collectives' from the run seed;
 * the job's noise from the same, or, when jobs run together, from a stream
 * of its own (named after the job) so tenants do not draw alike. */
static void job_acc_seed(job_acc *ja, uint64_t seed, int r, bool shared)
{
	char name[32];
	snprintf(name, sizeof name, "replication.%d", r);
	ja->c.seed = sim_rng_stream_seed(seed, name);
	ja->c.fabric.seed = ja->c.coll.seed = ja->c.seed;
	if (shared)
		ja->c.seed = sim_rng_stream_seed(ja->c.seed, ja->job->name);
	ja->c.span = ja->tr && r == 0 ? to_trace : NULL;
	ja->c.span_ctx = ja->tr;
}

/* Everything the replications gave, into the job's report variant. A
 * figure the report refuses (out of its range) is a model bug: say which. */
static int job_acc_put(job_acc *ja, const scn_scenario *s, rep_report *rep, diag *d)
{
	double mean, tps;
	const char *what = "iteration time";
	int rc = put_iteration(ja->rv, &ja->a, &mean);
	if (!rc && (what = "breakdown"))
		rc = put_breakdown(ja->rv, &ja->a, mean);
	if (!rc && (what = "binding"))
		rc = put_binding(ja->rv, &ja->a, mean);
	if (!rc && (what = "throughput and utilisation"))
		rc = put_throughput(ja->job, &ja->c, ja->rv, &ja->a, mean, &tps);
	if (!rc && (what = "time to train, goodput, energy or cost"))
		rc = put_run_totals(s, ja->job, &ja->c, &ja->a.last, ja->rv, rep, tps,
				    ja->a.gpu / ja->a.reps,
				    ja->a.has_cpu ? ja->a.cpu / ja->a.reps : NAN);
	if (!rc && (what = "collectives"))
		rc = put_collectives(ja->rv, &ja->a.last);
	if (!rc) {
		put_notes(rep, rep_variant_name(ja->rv), ja->notes, &ja->a.last);
		put_tp_channels(rep, rep_variant_name(ja->rv), &ja->c, &ja->a.last);
		put_steady(rep, rep_variant_name(ja->rv), &ja->a.last);
		put_memory(rep, rep_variant_name(ja->rv), s, ja->job);
	} else {
		diag_add(d, NULL, 0, 0, "variant '%s': the report refused its %s: %s",
			 rep_variant_name(ja->rv), what, sim_strerror(rc));
	}
	return rc;
}

static void job_acc_free(job_acc *ja)
{
	train_result_release(&ja->a.last);
	free(ja->a.all);
	diag_free(ja->notes);
}

static int replications_of(const scn_scenario *s, int replications)
{
	return replications > 0 ? replications : s->replications > 0 ? s->replications : 1;
}

/* Progress of a long run on stderr, terminal or not: at the end of an
 * iteration the variant's time left at the pace so far (progress.h adds
 * the variants to come), and a line when one is due. */
typedef struct progress_ctx {
	int rep, reps;
	double t0;
} progress_ctx;

static void say_progress(void *obj, uint32_t done, uint32_t total, double sim_s)
{
	progress_ctx *p = obj;
	double now = cli_wall_s(), per_iter = (now - p->t0) / (p->rep * (double)total + done);
	progress_part_left(per_iter * ((double)(p->reps - p->rep) * total - done));
	if (done == total || !progress_due())
		return;
	progress_line("replication %d/%d, iteration %u/%u done, simulated %.4g s", p->rep + 1,
		      p->reps, done, total, sim_s);
}

int train_variant(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		  int replications, uint64_t seed, FILE *progress, struct trace *tr,
		  rep_variant *rv, rep_report *rep, diag *d)
{
	int reps = replications_of(s, replications);
	job_acc ja;
	int rc = job_acc_init(&ja, s, job, v, seed, tr, rv, d);
	progress_ctx pc = { .reps = reps, .t0 = cli_wall_s() };
	ja.c.progress = say_progress;
	ja.c.progress_ctx = &pc;
	for (int r = 0; r < reps && !rc; r++) {
		train_result res;
		pc.rep = r;
		progress_rep(r, reps);
		job_acc_seed(&ja, seed, r, false);
		if (progress)
			fprintf(progress, "dpusim: %s: replication %d of %d\n",
				rep_variant_name(rv), r + 1, reps);
		if (!(rc = train_sim(&ja.c, &res, d)))
			rc = agg_add(&ja.a, &res);
	}
	if (!rc)
		rc = job_acc_put(&ja, s, rep, d);
	job_acc_free(&ja);
	return rc;
}

/* One replication of every job together; each job's result goes to its
 * aggregate (or is released on failure). */
static int multi_replication(const scn_scenario *s, job_acc *ja, size_t n,
			     const uint32_t *const *maps, train_bench *bench, size_t nbench,
			     diag *d)
{
	const train_config *cfgs[SCN_MAX_JOBS] = { 0 };
	train_result res[SCN_MAX_JOBS];
	int rc;
	for (size_t j = 0; j < n; j++)
		cfgs[j] = &ja[j].c;
	rc = train_sim_shared(cfgs, maps, (uint32_t)n, bench, (uint32_t)nbench,
			      (uint32_t)s->cluster.nodes, res, d);
	for (size_t j = 0; j < n && !rc; j++)
		if ((rc = agg_add(&ja[j].a, &res[j])))
			for (size_t k = j + 1; k < n; k++)
				train_result_release(&res[k]);
	return rc;
}

/* Benchmark b's figures into its report variant: per size the mean of
 * every run, and one pass (the sum of the means) as its iteration time. */
static int bench_put(const train_bench *b, rep_variant *rv, rep_report *rep, diag *d)
{
	double pass_s = 0;
	uint64_t runs = 0;
	int rc = 0;
	for (uint32_t i = 0; i < b->nsizes && !rc; i++) {
		double t = b->time_s[i] / (double)b->count[i];
		rc = run_put_collective(rv, b->op, coll_algo_name(b->used[i]),
					b->ranks, b->bytes[i], t);
		pass_s += t;
		runs += b->count[i];
	}
	if (!rc)
		rc = rep_variant_set_stat(rv, "iteration_s", pass_s, NAN, NAN, NAN);
	if (rc)
		diag_add(d, NULL, 0, 0, "variant '%s': the report refused its collectives: %s",
			 rep_variant_name(rv), sim_strerror(rc));
	if (!rc && b->after) {
		char msg[200];
		snprintf(msg, sizeof msg, "%llu of its %llu collectives ran after the training "
			 "jobs had ended (to finish its first pass), on a quieter fabric",
			 (unsigned long long)b->after, (unsigned long long)runs);
		rep_set_variant_infof(rep, rep_variant_name(rv), "note1", "%s", msg);
	}
	return rc;
}

int train_variant_multi(const scn_scenario *s, const size_t *jobs, size_t njobs,
			const scn_variant *v, int replications, uint64_t seed, FILE *progress,
			struct trace *const *tr, rep_variant *const *rv, rep_report *rep, diag *d)
{
	return train_variant_shared(s, jobs, njobs, NULL, NULL, 0, v, replications, seed,
				    progress, tr, rv, NULL, rep, d);
}

int train_variant_shared(const scn_scenario *s, const size_t *jobs, size_t njobs,
			 const size_t *bjobs, train_bench *bench, size_t nbench,
			 const scn_variant *v, int replications, uint64_t seed, FILE *progress,
			 struct trace *const *tr, rep_variant *const *rv,
			 rep_variant *const *brv, rep_report *rep, diag *d)
{	int reps = replications_of(s, replications);
	uint32_t *place = malloc(((size_t)s->cluster.nodes + 1) * sizeof *place), off[SCN_MAX_JOBS];
	const uint32_t *maps[SCN_MAX_JOBS];
	job_acc *ja = calloc(njobs ? njobs : 1, sizeof *ja);
	int rc = !place || !ja ? SIM_ENOMEM : njobs > SCN_MAX_JOBS ? SIM_EINVAL : SIM_OK;
	size_t inited = 0;
	if (!rc)
		rc = train_place_jobs(s, place, d);
	for (size_t j = 0, total = 0; j < s->njobs; j++)
		off[j] = (uint32_t)total, total += (size_t)s->jobs[j].nodes;
	for (size_t k = 0; k < nbench && place; k++)
		bench[k].node_of = place + off[bjobs[k]];
	for (; inited < njobs && !rc; inited++) {
		rc = job_acc_init(&ja[inited], s, &s->jobs[jobs[inited]], v, seed,
				  tr ? tr[inited] : NULL, rv[inited], d);
		maps[inited] = place ? place + off[jobs[inited]] : NULL;
	}
	for (int r = 0; r < reps && !rc; r++) {
		for (size_t j = 0; j < njobs; j++)
			job_acc_seed(&ja[j], seed, r, true);
		if (progress)
			fprintf(progress, "dpusim: %s, %zu jobs together: replication %d of %d\n",
				v->name, njobs, r + 1, reps);
		rc = multi_replication(s, ja, njobs, maps, bench, nbench, d);
	}
	for (size_t j = 0; j < njobs && !rc; j++)
		rc = job_acc_put(&ja[j], s, rep, d);
	for (size_t k = 0; k < nbench && !rc; k++)
		rc = bench_put(&bench[k], brv[k], rep, d);
	for (size_t j = 0; j < inited && ja; j++)
		job_acc_free(&ja[j]);
	free(ja);
	free(place);
	return rc;
}
