/* A training job's variant for dpusim run (tools/run.c). */
#ifndef DPUSIM_TOOLS_RUN_TRAIN_H
#define DPUSIM_TOOLS_RUN_TRAIN_H

#include <stdint.h>
#include <stdio.h>

#include "models/diag.h"
#include "models/scenario.h"
#include "tools/report.h"

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

#endif
