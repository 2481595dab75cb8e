/* Simulating a resolved scenario: every variant of its workload (or of each
 * job), with replications, into one dpusim-report/1 document. The one entry
 * point `dpusim run`, `dpusim sweep` and `dpusim validate` share. */
#ifndef DPUSIM_TOOLS_RUN_H
#define DPUSIM_TOOLS_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "models/coll.h"
#include "models/diag.h"
#include "models/fabric.h"
#include "models/scenario.h"
#include "models/setup.h"
#include "sim/flow.h"
#include "report/report.h"

typedef struct run_opts {
	bool has_seed;            /* override the scenario's seed */
	uint64_t seed;
	int replications;         /* > 0: override the scenario's */
	const char *trace_path;   /* Chrome/Perfetto trace of one iteration; NULL: none */
	FILE *progress;           /* progress lines for long runs; NULL: silent */
	FILE *written;            /* "dpusim: wrote trace FILE" per trace; NULL: silent */
	int jobs;                 /* > 1: variants in that many worker processes */
	/* Set by run_scenario, not its caller: whether trace_path is the
	 * trace itself (the scenario as loaded has one job and one
	 * variant) rather than a name each variant's trace is made from. A
	 * variant with hardware of its own runs on a view of one variant
	 * (scn_variant_view), which cannot tell. */
	bool trace_plain;
} run_opts;


/* The variant's offload options into rv (models/offload.h's words). */
int run_put_offload(rep_variant *rv, const scn_variant *v);

/* Adds one collective to rv as nccl-tests reports it: algbw = bytes / time
 * (0 when time_s is not positive), busbw = algbw times the op's bus factor
 * (coll_busbw_factor); the op under its report name (coll_op_report_name). */
int run_put_collective(rep_variant *rv, coll_op op, const char *algo, uint32_t ranks,
		       uint64_t bytes, double time_s);

/* Per node of fc, the host cores left to the network stack and the DPU
 * engines as flow resources attached to f (fab_attach), as training
 * attaches them: a benchmark's transfers are bounded by both. 0 or an
 * error code (messages in d). */
int run_attach_node_caps(flow_net *net, fab *f, const scn_scenario *s, const scn_variant *v,
			 const setup_host *h, const fab_config *fc, diag *d);

/* A benchmark job's variant, size by size: every size into rv as a row,
 * facts about how it ran into rep's info (a collective's steady state),
 * what set-up assumed or could not model into notes. 0, or a SIM_E* code
 * with messages in d. */
typedef int (*run_sizes_fn)(const scn_scenario *s, const scn_job *job, const scn_variant *v,
			    uint64_t seed, rep_variant *rv, rep_report *rep, diag *d,
			    diag *notes);

/* Runs fn (coll_sizes, run_p2p_sizes) with notes of its own, then puts
 * them into rep's info (run_put_notes). 0, or a SIM_E* code. */
int run_sizes_with_notes(run_sizes_fn fn, const scn_scenario *s, const scn_job *job,
			 const scn_variant *v, uint64_t seed, rep_variant *rv, rep_report *rep,
			 diag *d);

/* A p2p benchmark's variant (tools/run_p2p.c), a run_sizes_fn: every size
 * a row (op sendrecv, algo perftest's program, "ib_write_bw"...). */
int run_p2p_sizes(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		  uint64_t seed, rep_variant *rv, rep_report *rep, diag *d, diag *notes);

/* perftest's program for test t ("ib_write_bw", ...): a p2p row's algo. */
const char *run_p2p_prog(scn_p2p_test t);

/* The same set up without simulating, for the dry pass (run_check): a
 * network it cannot run (host-tcp), a size past the clock. 0 or an error
 * with messages in d. */
int run_p2p_check(const scn_scenario *s, const scn_job *job, const scn_variant *v, diag *d);

/* A variant's notes (what setup assumed or could not model) into the
 * report's info, "VARIANT.note1" on; training and collective jobs alike.
 * 0 or rep_set_info's code. */
int run_put_notes(rep_report *rep, const char *variant, const diag *notes);

/* Before the run: the trace files o asks for (none without trace_path),
 * and report_path (may be NULL), can all be written: none is an input of
 * the command (atomic_check_target) and no two are the same file name
 * (variant names that differ only by '/' and '-'). 0, or SIM_EEXIST with
 * the reason in d. */
int run_check_outputs(const scn_scenario *s, const run_opts *o, const char *report_path,
		      diag *d);

/* The dry setup pass: for every job and variant of s, what run_scenario
 * builds before it simulates (the models' configurations, the fabric, the
 * transport, the collective context, the training job's stages and its
 * world: models/train.h train_check), and the checks that need them (an
 * algorithm the fabric cannot run, a time past the simulator's horizon),
 * without simulating. Every message goes to d placed in the scenario
 * ("file:line:col: ...", at the variant when the message has no place of
 * its own). Returns 0, SIM_EINVAL (messages in d) or SIM_ENOMEM. */
int run_check(const scn_scenario *s, diag *d);

/* Simulates s. On success *out is a report with source "sim", the scenario
 * block filled from s (name, file; sha256 is the caller's to set since it
 * hashes the file text), one variant per scenario variant (per job and
 * variant, named "JOB/VARIANT", for multi-job scenarios), and speedups.
 * Free with rep_free. Returns 0, or a SIM_E* code with messages in d. */
int run_scenario(const scn_scenario *s, const run_opts *o, rep_report **out, diag *d);

/* Job `job` of s under variant v (s being the variant's view,
 * scn_variant_view) into rep: the report variant named as v, with its
 * info. What run_scenario does per variant of a single-job scenario.
 * 0, or a SIM_E* code with messages in d. */
int run_one_variant(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		    const run_opts *o, rep_report *rep, diag *d);

/* Every job and variant of single-job scenario s as run_one_variant does,
 * in o->jobs forked processes at a time, merged into rep in variant order:
 * the report is the one a run in this process writes (tools/run_par.c).
 * 0, or the first failing variant's code with its messages in d
 * (SIM_EIO: a worker that could not be started or did not finish). */
int run_variants_jobs(const scn_scenario *s, const run_opts *o, rep_report *rep, diag *d);

#endif
