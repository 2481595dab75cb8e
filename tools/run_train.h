/* A training job's variant for dpusim run (tools/run.c). */
#ifndef DPUSIM_TOOLS_RUN_TRAIN_H
#define DPUSIM_TOOLS_RUN_TRAIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/diag.h"
#include "models/scenario.h"
#include "report/report.h"

/* Runs replications (0: the scenario's) of job under variant v, each with
 * its own seed derived from seed, and fills rv: iteration time (mean across
 * replications with its 95% CI, p50/p99 over every measured iteration),
 * throughput, TFLOP/s per GPU (Megatron-LM's counting), MFU, utilisations,
 * the breakdown (adding up to the mean iteration), time to train, goodput,
 * energy and cost where the scenario gives what they need, collectives,
 * and, in rep's info, the critical path and what could not be modelled.
 * Returns 0 or SIM_E* with messages in d. */
struct trace;
/* tr (may be NULL) receives the timeline of replication 0's last iteration. */
int train_variant(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		  int replications, uint64_t seed, FILE *progress, struct trace *tr,
		  rep_variant *rv, rep_report *rep, diag *d);

/* The training jobs jobs[0 .. njobs-1] (indices into s->jobs) of a
 * multi-job scenario under variant v, run together on the one cluster
 * (models/train.h train_sim_multi) with their nodes placed as
 * train_place_jobs says, each replication once: rv[j] receives job j's
 * variant as train_variant would fill it, from its own results, and tr[j]
 * (tr or tr[j] may be NULL) its timeline. Returns 0 or SIM_E* with
 * messages in d. */
int train_variant_multi(const scn_scenario *s, const size_t *jobs, size_t njobs,
			const scn_variant *v, int replications, uint64_t seed, FILE *progress,
			struct trace *const *tr, rep_variant *const *rv, rep_report *rep, diag *d);

/* train_variant_multi with the collective benchmarks bjobs[0 .. nbench-1]
 * (indices into s->jobs; bench[k] their operation, sizes, ranks and
 * host cores, results zeroed) as background tenants in the same
 * simulation (models/train.h train_bench), placed as train_place_jobs
 * says: brv[k] receives benchmark k's collectives (mean time of each size
 * over every run of it in every replication, algbw and busbw from it) and
 * its iteration_s (one pass: the sum of the sizes' means), and rep's info
 * a note when some of its collectives ran after the training had ended. */
struct train_bench;
int train_variant_shared(const scn_scenario *s, const size_t *jobs, size_t njobs,
			 const size_t *bjobs, struct train_bench *bench, size_t nbench,
			 const scn_variant *v, int replications, uint64_t seed, FILE *progress,
			 struct trace *const *tr, rep_variant *const *rv,
			 rep_variant *const *brv, rep_report *rep, diag *d);

#endif
