/* run_scenario: every variant of every job, into one report. Collective
 * benchmarks run through models/coll; training jobs through models/train. */
#include "tools/run.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "models/coll.h"
#include "models/fabric.h"
#include "models/offload.h"
#include "models/setup.h"
#include "sim/engine.h"
#include "sim/err.h"
#include "sim/flow.h"
#include "sim/stats.h"
#include "models/train.h"
#include "report/atomic.h"
#include "tools/progress.h"
#include "tools/run_train.h"
#include "tools/trace.h"
#include "report/version.h"


/* Info keys are VARIANT.WHAT, made by rep_set_variant_infof to the
 * length they need: a multi-job variant's name is job/variant, up to 127
 * characters, which cut keys in fixed buffers short (their notes then
 * overwrote one another). */
int run_put_notes(rep_report *rep, const char *variant, const diag *notes)
{
	char what[32];
	int rc = 0;
	for (size_t i = 0; i < diag_count(notes) && i < DIAG_MAX && !rc; i++) {
		snprintf(what, sizeof what, "note%zu", i + 1);
		rc = rep_set_variant_infof(rep, variant, what, "%s", diag_msg(notes, i));
	}
	return rc;
}

int run_put_collective(rep_variant *rv, coll_op op, const char *algo, uint32_t ranks,
		       uint64_t bytes, double time_s)
{
	double algbw = time_s > 0 ? (double)bytes / time_s / 1e9 : 0;
	rep_collective c = { .op = coll_op_report_name(op), .algo = algo, .ranks = ranks,
			     .bytes = bytes, .time_s = time_s, .algbw_GBps = algbw,
			     .busbw_GBps = algbw * coll_busbw_factor(op, ranks),
			     .time_min_s = NAN, .time_p10_s = NAN, .time_p90_s = NAN };
	return rep_variant_add_collective(rv, &c);
}

static coll_algo algo_of(scn_coll_algo a, uint32_t nodes)
{
#define ALGO_(e, w, algo) [e] = algo,
	static const coll_algo algos[] = { COLL_SCN_ALGOS(ALGO_) };
#undef ALGO_
	return a == SCN_ALGO_IN_NETWORK && nodes == 1 ? COLL_NVLS : algos[a];
}

/* The simulated machinery of one variant: engine, flows, fabric, collectives. */
struct world {
	sim_engine *eng;
	flow_net *net;
	fab *f;
	coll_ctx *coll;
};

static void world_free(struct world *w)
{
	coll_ctx_free(w->coll);
	fab_free(w->f);
	flow_net_free(w->net);
	sim_engine_free(w->eng);
}

static int world_new(struct world *w, const fab_config *fc, const coll_config *cc)
{
	int rc;
	*w = (struct world){ 0 };
	w->eng = sim_engine_new();
	w->net = w->eng ? flow_net_new(w->eng) : NULL;
	if (!w->net) {
		world_free(w);
		return SIM_ENOMEM;
	}
	if ((rc = fab_new(fc, w->net, &w->f)) || (rc = coll_ctx_new(w->eng, w->net, w->f, cc, &w->coll)))
		world_free(w);
	return rc;
}

/* One collective size, `iters` times in a row: mean time and the result.
 * Where nothing in the world draws per run (may_repeat: no transport
 * jitter; ECMP hashes each route from the seed and its key, the same every
 * run), a run starts from the idle world the previous one left, so once two
 * runs in a row took the same time to the picosecond the rest are that run
 * again: they are added without being simulated (issue 14), and *simulated
 * says how many were. */
static int run_size(struct world *w, const coll_params *p, int iters, bool may_repeat,
		    double *mean_s, coll_result *last, int *simulated)
{
	double sum = 0;
	sim_time prev = -1;
	int i;
	for (i = 0; i < iters; i++) {
		int rc = coll_run(w->coll, p, last);
		if (rc)
			return rc;
		sum += sim_time_to_s(last->time_ps);
		if (may_repeat && last->time_ps == prev) {
			sum += (double)(iters - 1 - i) * sim_time_to_s(last->time_ps);
			i++;
			break;
		}
		prev = last->time_ps;
	}
	*simulated = i;
	*mean_s = sum / iters;
	return SIM_OK;
}

/* The benchmark process's own thread per GPU, as the training model
 * reserves (train_config framework_cores_per_gpu). */
#define BENCH_CORES_PER_GPU 1.0

/* Per node, as in training (models/train_world.c world_node): the host cores
 * left to the network stack bound the node's traffic, and the DPU engines
 * (inline crypto, ASAP2) bound it at their rate. Without this a collective
 * benchmark would ignore both. */
int run_attach_node_caps(flow_net *net, fab *f, const scn_scenario *s, const scn_variant *v,
			 const setup_host *h, const fab_config *fc, diag *d)
{
	offload_costs nc;
	double stack = h->cores - BENCH_CORES_PER_GPU * fc->gpus_per_node;
	int rc = offload_net_costs(s, v, h->freq_Hz, &nc, d, NULL);
	if (stack < 1)
		stack = 1;
	for (uint32_t n = 0; n < fc->nodes && !rc; n++) {
		uint32_t id;
		if (setup_stack_cap_Bps(&nc, stack) > 0 &&
		    !(rc = flow_res_add(net, setup_stack_cap_Bps(&nc, stack), &id)))
			rc = fab_attach(f, n, id);
		if (!rc && nc.engine_cap_Bps > 0 && !(rc = flow_res_add(net, nc.engine_cap_Bps, &id)))
			rc = fab_attach(f, n, id);
	}
	return rc;
}

/* Why NVLS, in-network reduction on one node, cannot run here (NULL: it
 * can): it needs NVLink and GPUs on an NVSwitch that reduces (the GPU
 * profile's nvls). */
static const char *nvls_why(const scn_hw *gpu, const fab_config *fc)
{
	if (!profile_has(gpu->v.gpu.nvls))
		return "on one node it is NVLS, and the GPU profile gives no 'nvls'";
	if (!(gpu->v.gpu.nvls > 0))
		return "on one node it is NVLS, and the GPU profile says 'nvls: false'";
	if (!(fc->nvlink_Bps > 0))
		return "on one node it is NVLS, which needs NVLink between the node's GPUs";
	return NULL;
}

/* Why SHARP, in-network reduction across nodes, cannot run here (NULL: it
 * can): it needs switches whose profile says they reduce, a topology the
 * model reduces on (one switch, two tiers) and an RDMA network (coll.c). */
static const char *sharp_why(const scn_hw *sw, const scn_variant *v, const fab_config *fc)
{
	if (!profile_has(sw->v.sw.sharp))
		return "the switch profile gives no 'sharp'";
	if (!(sw->v.sw.sharp > 0))
		return "the switch profile says 'sharp: false'";
	if (fc->topo != FAB_SINGLE_SWITCH && fc->topo != FAB_FAT_TREE2)
		return "SHARP is modelled on a single switch or a two-tier fat-tree only";
	if (v->network == SCN_NET_HOST_TCP)
		return "SHARP needs an RDMA network (NCCL reaches it through its RDMA-SHARP "
		       "plugin), and this variant's is host-tcp";
	return NULL;
}

/* Whether a collective benchmark can run `algo: in-network` here: 0, or
 * SIM_EUNSUPPORTED with the reason in d. */
static int in_network_ok(const scn_scenario *s, const scn_variant *v, const fab_config *fc,
			 diag *d)
{
	const scn_hw *hw = fc->nodes == 1 ? &s->cluster.gpu : &s->cluster.fabric.sw;
	const char *why = fc->nodes == 1 ? nvls_why(hw, fc) : sharp_why(hw, v, fc);
	if (!why)
		return SIM_OK;
	diag_add(d, NULL, 0, 0, "variant '%s': collective algo 'in-network' on %u node%s (%s '%s') "
		 "cannot run: %s", v->name, fc->nodes, fc->nodes == 1 ? "" : "s",
		 fc->nodes == 1 ? "GPU" : "switch", hw->name, why);
	return SIM_EUNSUPPORTED;
}

/* The world a collective job's variant runs in, seeded with seed: its
 * host, fabric and transport (the transport's notes into notes, NULL: none),
 * the scenario's collective model (the one training runs), NCCL's channels
 * on one node, and the in-network reduction it asks for. *host and *fc as set up, for
 * attach_node_caps; *draws (NULL: not asked) whether a run draws anything
 * (the transport's jitter), so that runs of one size may differ. */
static int coll_world(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		      uint64_t seed, struct world *w, setup_host *host, fab_config *fc, diag *d,
		      diag *notes, bool *draws)
{
	const scn_collective *sc = &job->wl.coll;
	uint32_t ranks = (uint32_t)(sc->ranks > 0 ? sc->ranks : job->wl.gpus);
	coll_config cc = { .seed = seed, .proto = setup_coll_proto(s), /* training's model */
			   .lump_ring_steps = s->lump_ring_steps };
	int rc;
	if ((rc = setup_host_of(s, host, d)) || (rc = setup_fabric(s, v, ranks, fc, d)) ||
	    (rc = setup_transport(s, v, host, &cc.transport, d, notes)))
		return rc;
	/* SHARP only when asked for: NCCL uses it only with its plugin and
	 * NCCL_COLLNET_ENABLE=1 (NVIDIA HPC-X 2.21 documentation,
	 * "NCCL-RDMA-SHARP Plugins"), so auto never picks it. */
	if (sc->algo == SCN_ALGO_IN_NETWORK && (rc = in_network_ok(s, v, fc, d)))
		return rc;
	cc.nccl_cc = setup_nccl_cc(s, notes);
	cc.nccl_pci_GBps = setup_nccl_pci_GBps(s);
	cc.sharp = sc->algo == SCN_ALGO_IN_NETWORK && fc->nodes > 1;
	cc.nvls = sc->algo == SCN_ALGO_IN_NETWORK && fc->nodes == 1;
	/* On one node, NCCL's channels as the training model's tensor-parallel
	 * all-reduce takes them (setup_nvlink_channels). */
	if (fc->nodes == 1 && fc->gpus_per_node > 1)
		cc.channels = setup_nvlink_channels(s, "collective on one node", fc->nics_per_node,
						    notes);
	fc->seed = seed;
	if (draws)
		*draws = cc.transport.jitter_mean_ps > 0;
	if ((rc = world_new(w, fc, &cc)))
		diag_add(d, NULL, 0, 0, "cannot build the fabric for %u ranks: %s", ranks,
			 sim_strerror(rc));
	return rc;
}

/* A collective job's variant, a run_sizes_fn (run.h): every size a row. */
static int coll_sizes(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		      uint64_t seed, rep_variant *rv, rep_report *rep, diag *d, diag *notes)
{
	const scn_collective *sc = &job->wl.coll;
	uint32_t ranks = (uint32_t)(sc->ranks > 0 ? sc->ranks : job->wl.gpus);
	setup_host host;
	fab_config fc;
	struct world w;
	double pass_s = 0;
	coll_op op = (coll_op)sc->op; /* one list makes both (coll_ops.h) */
	int iters = sc->iterations > 0 ? sc->iterations : 1;
	long asked = 0, simulated = 0;
	bool draws = true;
	int rc = coll_world(s, job, v, seed, &w, &host, &fc, d, notes, &draws);
	if (rc)
		return rc;
	rc = run_attach_node_caps(w.net, w.f, s, v, &host, &fc, d);
	for (size_t i = 0; i < sc->nsizes && !rc; i++) {
		coll_params p = { .op = op, .algo = algo_of(sc->algo, fc.nodes),
				  .bytes = (uint64_t)sc->sizes_bytes[i] };
		coll_result res;
		double t;
		int sim_n = 0;
		rc = run_size(&w, &p, iters, !draws, &t, &res, &sim_n);
		asked += iters, simulated += sim_n;
		if (rc) {
			diag_add(d, NULL, 0, 0, "%s of %llu bytes with algorithm '%s' on %u ranks: %s",
				 coll_op_name(op), (unsigned long long)p.bytes,
				 coll_algo_name(p.algo), ranks,
				 sim_error(w.eng) ? sim_error_msg(w.eng) : sim_strerror(rc));
			break;
		}
		rc = run_put_collective(rv, op, coll_algo_name(res.algo), ranks, p.bytes, t);
		pass_s += t;
	}
	world_free(&w);
	if (!rc && simulated < asked)
		rc = rep_set_variant_infof(rep, rep_variant_name(rv), "steady_state",
					   "%ld of the %ld collective runs (%d per size) simulated, "
					   "the rest repeat the last run of their size exactly: nothing "
					   "is drawn per run (no jitter), and two runs in a row took the "
					   "same time to the picosecond", simulated, asked, iters);
	if (!rc)
		rc = rep_variant_set_stat(rv, "iteration_s", pass_s, NAN, NAN, NAN);
	return rc;
}

int run_sizes_with_notes(run_sizes_fn fn, const scn_scenario *s, const scn_job *job,
			 const scn_variant *v, uint64_t seed, rep_variant *rv, rep_report *rep,
			 diag *d)
{
	diag *notes = diag_new();
	int rc = notes ? fn(s, job, v, seed, rv, rep, d, notes) : SIM_ENOMEM;
	if (!rc)
		rc = run_put_notes(rep, rep_variant_name(rv), notes);
	diag_free(notes);
	return rc;
}

int run_put_offload(rep_variant *rv, const scn_variant *v)
{
	int rc = 0;
	for (int k = 0; k < OFFLOAD_NKINDS && !rc; k++)
		rc = rep_variant_set_offload(rv, offload_kind_name((offload_kind)k),
					     offload_word((offload_kind)k,
							  offload_value(v, (offload_kind)k)));
	return rc;
}

/* Whether scenario s, as loaded, traces into the path as given: one job,
 * one variant. */
static bool plain_run(const scn_scenario *s)
{
	return s->nvariants == 1 && s->njobs == 1;
}

/* The trace file of variant `name`: the path as given when the scenario
 * as loaded has one variant and one job (plain), else NAME inserted
 * before its extension. False when that does not fit in n bytes (out then
 * holds a cut name, which run_check_outputs refuses before anything
 * runs). */
static bool trace_path_of(bool plain, const char *path, const char *name, char *out, size_t n)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	char safe[2 * SCN_NAME_MAX + 2];
	size_t i;
	int k;
	if (plain) {
		k = snprintf(out, n, "%s", path);
		return k >= 0 && (size_t)k < n;
	}
	for (i = 0; name[i] && i + 1 < sizeof safe; i++)
		safe[i] = name[i] == '/' ? '-' : name[i];
	safe[i] = '\0';
	if (!dot || (slash && dot < slash))
		k = snprintf(out, n, "%s.%s", path, safe);
	else
		k = snprintf(out, n, "%.*s.%s%s", (int)(dot - path), path, safe, dot);
	return k >= 0 && (size_t)k < n;
}

/* Writes one trace and says so on o->written (whether it replaced a file:
 * an older run's trace of the same name is replaced, never silently). */
static int write_trace(const trace *t, const char *path, const run_opts *o, diag *d)
{
	char err[512];
	bool existed = access(path, F_OK) == 0;
	int rc = trace_write_file(t, path, err, sizeof err);
	if (rc)
		diag_add(d, NULL, 0, 0, "%s", err);
	else if (o->written)
		fprintf(o->written, "dpusim: wrote trace %s%s\n", path,
			existed ? " (replaced the file there)" : "");
	return rc;
}

static int traced_variant(const scn_scenario *s, const scn_job *job, const scn_variant *v,
			  const run_opts *o, uint64_t seed, const char *name, rep_variant *rv,
			  rep_report *rep, diag *d)
{
	char path[4096];
	trace *t = trace_new();
	int rc = t ? SIM_OK : SIM_ENOMEM;
	if (!rc)
		rc = train_variant(s, job, v, o->replications, seed, o->progress, t, rv, rep, d);
	trace_path_of(o->trace_plain, o->trace_path, name, path, sizeof path);
	if (!rc)
		rc = write_trace(t, path, o, d);
	trace_free(t);
	return rc;
}

/* The variant's bill of materials, per node, and where its prices come
 * from: info "VARIANT.hardware". */
static void put_hardware(rep_report *rep, const char *variant, const scn_scenario *s)
{
	const scn_cluster *c = &s->cluster;
	const profile_cpu *cpu = &c->cpu.v.cpu;
	char buf[1024];
	size_t at;
	at = (size_t)snprintf(buf, sizeof buf, "per node: %d x %s, %g x %s", c->gpus_per_node,
			      c->gpu.name, cpu->sockets, c->cpu.name);
	if (c->dpus_replace_nics && at < sizeof buf)
		at += (size_t)snprintf(buf + at, sizeof buf - at, ", %d x %s (the rail adapters, no "
				       "NIC; network side as %s)", c->dpus_per_node, c->dpu.name,
				       c->nic.name);
	else if (at < sizeof buf)
		at += (size_t)snprintf(buf + at, sizeof buf - at, ", %d x %s", c->nics_per_node,
				       c->nic.name);
	if (c->has_dpu && !c->dpus_replace_nics && at < sizeof buf)
		at += (size_t)snprintf(buf + at, sizeof buf - at, ", %d x %s", c->dpus_per_node,
				       c->dpu.name);
	if (at < sizeof buf)
		at += (size_t)snprintf(buf + at, sizeof buf - at, "; %d nodes; fabric %s, %g Gb/s "
				       "links, switch %s", c->nodes,
				       scn_topology_name(c->fabric.topology),
				       c->fabric.link_rate_Bps * 8 / 1e9, c->fabric.sw.name);
	if (c->storage.present && at < sizeof buf)
		at += (size_t)snprintf(buf + at, sizeof buf - at, "; storage %d x %s",
				       c->storage.servers, c->storage.server.name);
	if (at < sizeof buf) {
		if (s->cost.present && c->has_dpu)
			snprintf(buf + at, sizeof buf - at, "; prices (the scenario's cost:): GPU %g "
				 "USD/h, DPU %g USD/h%s", s->cost.gpu_usd_per_s * 3600,
				 s->cost.dpu_usd_per_s * 3600,
				 c->dpus_replace_nics ? " (over the NIC it replaces)" : "");
		else if (s->cost.present)
			snprintf(buf + at, sizeof buf - at, "; prices (the scenario's cost:): GPU %g "
				 "USD/h, no DPU", s->cost.gpu_usd_per_s * 3600);
		else
			snprintf(buf + at, sizeof buf - at, "; no prices given");
	}
	rep_set_variant_infof(rep, variant, "hardware", "%s", buf);
	scn_routing_why(c, buf, sizeof buf);
	rep_set_variant_infof(rep, variant, "routing", "%s", buf);
}

int run_one_variant(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		    const run_opts *o, rep_report *rep, diag *d)
{
	char name[2 * SCN_NAME_MAX + 2];
	uint64_t seed = o && o->has_seed ? o->seed : s->seed;
	rep_variant *rv;
	int rc;
	snprintf(name, sizeof name, "%s", v->name); /* one job: run_multi names the others */
	progress_what(name);
	if (!(rv = rep_add_variant(rep, name)))
		return SIM_ENOMEM;
	put_hardware(rep, name, s);
	if ((rc = run_put_offload(rv, v)))
		return rc;
	if (job->wl.kind == SCN_WL_COLLECTIVE)
		return run_sizes_with_notes(coll_sizes, s, job, v, seed, rv, rep, d);
	if (job->wl.kind == SCN_WL_P2P)
		return run_sizes_with_notes(run_p2p_sizes, s, job, v, seed, rv, rep, d);
	if (!o || !o->trace_path)
		return train_variant(s, job, v, o ? o->replications : 0, seed,
				     o ? o->progress : NULL, NULL, rv, rep, d);
	return traced_variant(s, job, v, o, seed, name, rv, rep, d);
}

/* Whether any job of s trains: then its collective benchmarks run beside
 * the training jobs (multi_variant), else each on its own. */
static bool any_training(const scn_scenario *s)
{
	for (size_t j = 0; j < s->njobs; j++)
		if (s->jobs[j].wl.kind == SCN_WL_TRAINING)
			return true;
	return false;
}

/* The report variant "JOB/VARIANT" of every job and variant, in job order
 * as for one job at a time; collective jobs of a scenario without training
 * run there and then, each on its own. */
static int multi_add_variants(const scn_scenario *s, const run_opts *o, rep_report *rep,
			      rep_variant **rvs, diag *d)
{
	uint64_t seed = o && o->has_seed ? o->seed : s->seed;
	char name[2 * SCN_NAME_MAX + 2];
	int rc = 0;
	for (size_t j = 0; j < s->njobs && !rc; j++)
		for (size_t v = 0; v < s->nvariants && !rc; v++) {
			const scn_scenario *vs;
			const scn_variant *vv;
			rep_variant *rv;
			scn_variant_view(s, v, &vs, &vv);
			snprintf(name, sizeof name, "%s/%s", s->jobs[j].name, vv->name);
			if (!(rv = rvs[j * s->nvariants + v] = rep_add_variant(rep, name)))
				return SIM_ENOMEM;
			put_hardware(rep, name, vs);
			if (!(rc = run_put_offload(rv, vv)) &&
			    vs->jobs[j].wl.kind == SCN_WL_COLLECTIVE && !any_training(vs))
				rc = run_sizes_with_notes(coll_sizes, vs, &vs->jobs[j], vv, seed, rv,
							  rep, d);
		}
	return rc;
}

/* Every training job's trace of a variant, after the run. */
static int multi_write_traces(const run_opts *o, trace *const *tr, rep_variant *const *rv,
			      size_t n, diag *d)
{
	char path[4096];
	int rc = 0;
	for (size_t j = 0; j < n && !rc; j++) {
		trace_path_of(o->trace_plain, o->trace_path, rep_variant_name(rv[j]), path,
			      sizeof path);
		rc = write_trace(tr[j], path, o, d);
	}
	return rc;
}

/* Collective job j as a benchmark beside the training jobs: what it runs
 * (as coll_sizes would), its results zeroed; train_variant_shared
 * places it. */
static int bench_of(const scn_scenario *s, const scn_job *job, train_bench *b, diag *d)
{
	const scn_collective *sc = &job->wl.coll;
	uint32_t gpn = (uint32_t)s->cluster.gpus_per_node;
	*b = (train_bench){ .nsizes = (uint32_t)sc->nsizes,
			    .iterations = (uint32_t)(sc->iterations > 0 ? sc->iterations : 1),
			    .ranks = (uint32_t)(sc->ranks > 0 ? sc->ranks : job->wl.gpus),
			    .cores_per_gpu = BENCH_CORES_PER_GPU };
	b->op = (coll_op)sc->op;
	/* The benchmarks share the training jobs' collective context, whose
	 * algorithms are what NCCL uses by default: no SHARP there. */
	if (sc->algo == SCN_ALGO_IN_NETWORK) {
		diag_add(d, NULL, 0, 0, "collective job '%s': algo 'in-network' is not simulated "
			 "beside training jobs (they share one collective context, without SHARP)",
			 job->name);
		return SIM_EUNSUPPORTED;
	}
	b->nodes = (b->ranks + gpn - 1) / gpn;
	b->algo = algo_of(sc->algo, b->nodes);
	for (size_t i = 0; i < sc->nsizes; i++)
		b->bytes[i] = (uint64_t)sc->sizes_bytes[i];
	return SIM_OK;
}

/* Per variant, every training job of the scenario together on the one
 * cluster, with its collective benchmarks beside them as background
 * tenants (tools/run_train.h train_variant_shared). */
static int multi_variant(const scn_scenario *base, const run_opts *o, size_t v,
			 rep_variant *const *rvs, rep_report *rep, diag *d)
{
	const scn_scenario *s;
	const scn_variant *vv;
	size_t nv = base->nvariants;
	scn_variant_view(base, v, &s, &vv);
	uint64_t seed = o && o->has_seed ? o->seed : s->seed;
	size_t jobs[SCN_MAX_JOBS], bjobs[SCN_MAX_JOBS], n = 0, nb = 0;
	rep_variant *rv[SCN_MAX_JOBS], *brv[SCN_MAX_JOBS];
	trace *tr[SCN_MAX_JOBS] = { 0 };
	bool traced = o && o->trace_path;
	train_bench *bench = calloc(s->njobs, sizeof *bench);
	int rc = bench ? SIM_OK : SIM_ENOMEM;
	for (size_t j = 0; j < s->njobs && !rc; j++)
		if (s->jobs[j].wl.kind != SCN_WL_COLLECTIVE)
			rv[n] = rvs[j * nv + v], jobs[n++] = j;
		else if (!(rc = bench_of(s, &s->jobs[j], &bench[nb], d)))
			brv[nb] = rvs[j * nv + v], bjobs[nb++] = j;
	if (rc || !n) {
		free(bench);
		return rc;
	}
	progress_what(vv->name);
	for (size_t j = 0; j < n && traced && !rc; j++)
		if (!(tr[j] = trace_new()))
			rc = SIM_ENOMEM;
	if (!rc)
		rc = train_variant_shared(s, jobs, n, bjobs, bench, nb, vv,
					  o ? o->replications : 0, seed, o ? o->progress : NULL,
					  traced ? tr : NULL, rv, brv, rep, d);
	if (!rc && traced)
		rc = multi_write_traces(o, tr, rv, n, d);
	for (size_t j = 0; j < n; j++)
		trace_free(tr[j]);
	free(bench);
	return rc;
}

static int run_multi(const scn_scenario *s, const run_opts *o, rep_report *rep, diag *d)
{
	rep_variant **rvs = calloc(s->njobs * s->nvariants + 1, sizeof *rvs);
	int rc = rvs ? multi_add_variants(s, o, rep, rvs, d) : SIM_ENOMEM;
	progress_parts(s->nvariants, "variant", true);
	for (size_t v = 0; v < s->nvariants && !rc; v++) {
		progress_part(v);
		rc = multi_variant(s, o, v, rvs, rep, d);
	}
	free(rvs);
	return rc;
}

/* Path i of the outputs run_check_outputs checks: the trace of each
 * traced variant (training jobs only, named as run_scenario names them). */
static int trace_paths(const scn_scenario *s, const run_opts *o, char (*paths)[4096],
		       size_t max, size_t *np, diag *d)
{
	char name[2 * SCN_NAME_MAX + 2];
	size_t n = 0;
	for (size_t j = 0; j < s->njobs; j++)
		for (size_t v = 0; v < s->nvariants && n < max; v++) {
			if (s->jobs[j].wl.kind != SCN_WL_TRAINING)
				continue;
			snprintf(name, sizeof name, "%s%s%s", s->multi_job ? s->jobs[j].name : "",
				 s->multi_job ? "/" : "", s->variants[v].name);
			if (!trace_path_of(plain_run(s), o->trace_path, name, paths[n++],
					   sizeof paths[0])) {
				diag_add(d, NULL, 0, 0, "--trace: the trace of '%s' would be named past "
					 "the path limit (%zu bytes): give a shorter --trace", name,
					 sizeof paths[0] - 1);
				return SIM_ERANGE;
			}
		}
	*np = n;
	return SIM_OK;
}

/* --trace draws training iterations; a collective benchmark job has none
 * to draw. A scenario of benchmarks only is refused (writing nothing and
 * saying nothing was the alternative); beside training jobs, each benchmark
 * job is named as not traced. */
static int trace_applies(const scn_scenario *s, const run_opts *o, diag *d)
{
	size_t ntrain = 0;
	for (size_t j = 0; j < s->njobs; j++)
		ntrain += s->jobs[j].wl.kind == SCN_WL_TRAINING;
	if (!ntrain) {
		diag_add(d, NULL, 0, 0, "--trace: '%s' is a %s benchmark, and a trace is "
			 "the per-GPU timeline of a training iteration: there is nothing to trace "
			 "(drop --trace; the report has every %s's time)", s->name,
			 s->jobs[0].wl.kind == SCN_WL_P2P ? "p2p" : "collective",
			 s->jobs[0].wl.kind == SCN_WL_P2P ? "message size" : "collective");
		return SIM_EINVAL;
	}
	for (size_t j = 0; j < s->njobs && o->written; j++)
		if (s->jobs[j].wl.kind == SCN_WL_COLLECTIVE)
			fprintf(o->written, "dpusim: note: --trace: job '%s' is a collective "
				"benchmark, not traced (its time is in the report)\n",
				s->jobs[j].name);
	return SIM_OK;
}

int run_check_outputs(const scn_scenario *s, const run_opts *o, const char *report_path,
		      diag *d)
{
	size_t max = SCN_MAX_JOBS * SCN_MAX_VARIANTS + 1, n = 0;
	char (*paths)[4096] = calloc(max, sizeof *paths), err[512];
	int rc = paths ? SIM_OK : SIM_ENOMEM;
	if (!rc && o && o->trace_path && !(rc = trace_applies(s, o, d)))
		rc = trace_paths(s, o, paths, max - 1, &n, d);
	if (!rc && report_path) /* fits: cmd_run made it with cli_path into as much */
		snprintf(paths[n++], sizeof paths[0], "%s", report_path);
	for (size_t i = 0; !rc && i < n; i++) {
		if ((rc = atomic_check_target(paths[i], err, sizeof err)))
			diag_add(d, NULL, 0, 0, "%s", err);
		for (size_t k = 0; !rc && k < i; k++)
			if (!strcmp(paths[i], paths[k])) {
				diag_add(d, NULL, 0, 0, "two outputs of this run lead to one file, "
					 "'%s' (names that differ only by '/' and '-'?)", paths[i]);
				rc = SIM_EEXIST;
			}
	}
	free(paths);
	return rc;
}

/* ---- the dry setup pass (dpusim check, and run before simulating) ---- */

/* Whether d holds m already (one message for what every variant shares). */
static bool holds(const diag *d, const char *m)
{
	for (size_t i = 0; i < diag_count(d) && i < DIAG_MAX; i++)
		if (!strcmp(diag_msg(d, i), m))
			return true;
	return false;
}

/* Moves what `from` says about variant v of job into d, each message
 * placed: where it names its own place as it is, otherwise at the
 * variant's mapping in the scenario, with the job and variant named. */
static void place_msgs(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		       const diag *from, diag *d)
{
	char who[2 * SCN_NAME_MAX + 32];
	if (s->multi_job)
		snprintf(who, sizeof who, "job '%s', variant '%s'", job->name, v->name);
	else
		snprintf(who, sizeof who, "variant '%s'", v->name);
	for (size_t i = 0; i < diag_count(from) && i < DIAG_MAX; i++) {
		const char *m = diag_msg(from, i);
		if (diag_placed(m) && !holds(d, m))
			diag_add(d, NULL, 0, 0, "%s", m);
		else if (diag_placed(m))
			continue;
		else
			diag_add(d, v->at.file ? v->at.file : s->file, v->at.line, v->at.col,
				 "%s: %s", who, m);
	}
}

/* One size of a collective benchmark against the clock: its predicted
 * time (coll_estimate: the algorithm asked for, or what auto chooses)
 * times its iterations, added to the pass so far (*pass_s: the sizes run
 * one after another on one engine), must end before SIM_TIME_MAX. */
static int coll_fits(struct world *w, const scn_collective *sc, coll_op op, uint32_t nodes,
		     uint64_t bytes, double *pass_s, diag *d)
{
	coll_params p = { .op = op, .algo = algo_of(sc->algo, nodes), .bytes = bytes };
	double horizon_s = sim_time_to_s(SIM_TIME_MAX), t_s;
	sim_time best = SIM_TIME_MAX;
	int rc = coll_estimate(w->coll, &p, p.algo, &best);
	if (rc == SIM_ENOMEM) {
		diag_add(d, NULL, 0, 0, "collective '%s' of %llu bytes: predicting its time: %s",
			 scn_coll_op_name(sc->op), (unsigned long long)bytes, sim_strerror(rc));
		return rc;
	}
	if (rc) {
		diag_add(d, NULL, 0, 0, "collective '%s' with algo '%s' cannot run on this fabric "
			 "(%u node%s)", scn_coll_op_name(sc->op), scn_coll_algo_name(sc->algo), nodes,
			 nodes == 1 ? "" : "s");
		return SIM_EUNSUPPORTED;
	}
	char took[96] = "its predicted time alone";
	t_s = sim_time_to_s(best);
	*pass_s += t_s * (sc->iterations > 0 ? sc->iterations : 1);
	if (best < SIM_TIME_MAX && *pass_s < horizon_s)
		return SIM_OK;
	if (best < SIM_TIME_MAX)
		snprintf(took, sizeof took, "about %.4g s (predicted), %d times in a row,", t_s,
			 sc->iterations > 0 ? sc->iterations : 1);
	diag_add(d, NULL, 0, 0, "collective '%s' of %llu bytes: %s ends past the simulator's "
		 "horizon of %.2f days; check the rates it crosses (cluster.fabric.link_rate, the "
		 "NIC's and switch's port_rate, the host costs of the variant's network)",
		 scn_coll_op_name(sc->op), (unsigned long long)bytes, took, sim_horizon_days());
	return SIM_EOVERFLOW;
}

/* A collective benchmark's variant as coll_sizes sets it up, without
 * simulating: every size's predicted time must fit the clock. */
static int coll_check(const scn_scenario *s, const scn_job *job, const scn_variant *v, diag *d)
{
	const scn_collective *sc = &job->wl.coll;
	setup_host host;
	fab_config fc;
	struct world w;
	double pass_s = 0;
	coll_op op = (coll_op)sc->op;
	int rc = coll_world(s, job, v, s->seed, &w, &host, &fc, d, NULL, NULL);
	if (rc)
		return rc;
	if ((rc = run_attach_node_caps(w.net, w.f, s, v, &host, &fc, d)))
		diag_add(d, NULL, 0, 0, "building the cluster: %s", sim_strerror(rc));
	for (size_t i = 0; i < sc->nsizes && !rc; i++)
		rc = coll_fits(&w, sc, op, fc.nodes, (uint64_t)sc->sizes_bytes[i], &pass_s, d);
	world_free(&w);
	return rc;
}

/* The training job's variant as train_variant sets it up, without
 * simulating (models/train.h train_check). */
static int train_dry(const scn_scenario *s, const scn_job *job, const scn_variant *v, diag *d)
{
	train_config c;
	int rc = train_config_of(s, job, v, s->seed, &c, d, NULL);
	if (!rc)
		rc = train_check(&c, d);
	return rc;
}

int run_check(const scn_scenario *s, diag *d)
{
	bool shared = s->multi_job && any_training(s);
	diag *one = diag_new();
	size_t errs = diag_count(d);
	if (!one)
		return SIM_ENOMEM;
	for (size_t j = 0; j < s->njobs; j++)
		for (size_t k = 0; k < s->nvariants; k++) {
			const scn_scenario *vs; /* the variant's own hardware, if it has some */
			const scn_variant *v;
			train_bench b;
			scn_variant_view(s, k, &vs, &v);
			const scn_job *job = &vs->jobs[j];
			diag_free(one);
			if (!(one = diag_new()))
				return SIM_ENOMEM;
			if (job->wl.kind == SCN_WL_P2P)
				run_p2p_check(vs, job, v, one);
			else if (job->wl.kind != SCN_WL_COLLECTIVE)
				train_dry(vs, job, v, one);
			else if (shared)
				bench_of(vs, job, &b, one);
			else
				coll_check(vs, job, v, one);
			place_msgs(vs, job, v, one, d);
		}
	diag_free(one);
	return diag_count(d) > errs ? SIM_EINVAL : SIM_OK;
}

/* Whether any job runs collectives (training and collective benchmarks). */
static bool runs_collectives(const scn_scenario *s)
{
	for (size_t j = 0; j < s->njobs; j++)
		if (s->jobs[j].wl.kind != SCN_WL_P2P)
			return true;
	return false;
}

/* Every variant of every job, one after another. */
static int run_variants(const scn_scenario *s, const run_opts *o, rep_report *rep, diag *d)
{
	int rc = SIM_OK;
	progress_parts(s->njobs * s->nvariants, "variant", true);
	for (size_t j = 0; j < s->njobs && !rc; j++)
		for (size_t v = 0; v < s->nvariants && !rc; v++) {
			const scn_scenario *vs;
			const scn_variant *vv;
			scn_variant_view(s, v, &vs, &vv);
			progress_part(j * s->nvariants + v);
			rc = run_one_variant(vs, &vs->jobs[j], vv, o, rep, d);
		}
	return rc;
}

int run_scenario(const scn_scenario *s, const run_opts *o, rep_report **out, diag *d)
{
	rep_report *rep = rep_new(REP_SIM);
	int rc = rep ? SIM_OK : SIM_ENOMEM;
	run_opts own;
	if (o) { /* the trace's name decided here, where every variant is seen */
		own = *o;
		own.trace_plain = plain_run(s);
		o = &own;
	}
	*out = NULL;
	if (!rc)
		rc = rep_set_version(rep, dpusim_version);
	if (!rc)
		rc = rep_set_scenario(rep, &(rep_scenario){
						   .name = s->name, .file = s->file,
						   .seed = o && o->has_seed ? o->seed : s->seed });
	/* Which collective model every job's collectives ran under; a p2p
	 * benchmark runs none, so it has no such line. */
	if (!rc && runs_collectives(s))
		rc = rep_set_info(rep, "collectives", setup_coll_model_text(setup_coll_proto(s)));
	/* An approximation the user chose: said where the figures are. */
	if (!rc && runs_collectives(s) && s->lump_ring_steps)
		rc = rep_set_info(rep, "ring_steps", SETUP_LUMPED_RING_TEXT);
	/* Everything check refuses, refused before anything runs. */
	if (!rc)
		rc = run_check(s, d);
	if (!rc && s->multi_job)
		rc = run_multi(s, o, rep, d);
	if (!rc && !s->multi_job && o && o->jobs > 1 && s->njobs * s->nvariants > 1)
		rc = run_variants_jobs(s, o, rep, d);
	else if (!rc && !s->multi_job)
		rc = run_variants(s, o, rep, d);
	if (!rc && rep_compute_speedup(rep) == SIM_ENOENT)
		rc = SIM_OK; /* no throughput to compare: speedup stays absent */
	if (rc) {
		if (!diag_count(d))
			diag_add(d, NULL, 0, 0, "simulation failed: %s", sim_strerror(rc));
		rep_free(rep);
		return rc;
	}
	*out = rep;
	return SIM_OK;
}
