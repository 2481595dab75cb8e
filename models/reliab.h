/* Failures, checkpoints and goodput. Components fail independently with
 * exponential lifetimes given by their MTBF, so the system's failure rate
 * is the sum of the components' rates; a failure stops the whole job,
 * which restarts from its last checkpoint. From that: the checkpoint
 * interval suggested by Young and by Daly, and the expected wall time and
 * goodput at any interval by Daly's model.
 *
 *   J. W. Young, "A first order approximation to the optimum checkpoint
 *   interval", Communications of the ACM 17(9), 1974: tau = sqrt(2 delta M).
 *   J. T. Daly, "A higher order estimate of the optimum checkpoint interval
 *   for restart dumps", Future Generation Computer Systems 22(3), 2006.
 *
 * Symbols as Daly's: M the system MTBF, delta the time to write one
 * checkpoint, R the restart time, tau the compute time between two
 * checkpoints, T_s the useful (failure-free, checkpoint-free) compute time.
 * No MTBF or restart figure is built in: they come from the scenario. */
#ifndef DPUSIM_MODELS_RELIAB_H
#define DPUSIM_MODELS_RELIAB_H

#include <stddef.h>
#include <stdint.h>

typedef enum rel_kind {
	REL_GPU,
	REL_NODE,   /* everything else in a server: CPU, memory, board, PSU, OS */
	REL_NIC,    /* NIC or DPU */
	REL_SWITCH,
	REL_KINDS
} rel_kind;

/* How many of one kind the job depends on, and the MTBF of one of them
 * (seconds; required, > 0, where count > 0). */
typedef struct rel_part {
	uint64_t count;
	double mtbf_s;
} rel_part;

/* How a checkpoint is taken. REL_SYNC: training stops while the
 * checkpoint is written to storage (delta = bytes / write_Bps). REL_ASYNC,
 * as CheckFreq (Mohan, Phanishayee, Chidambaram, FAST 2021) and PyTorch's
 * async distributed checkpoint take it: training stops only for a snapshot
 * of the GPU state into host memory (delta = snapshot bytes / snapshot
 * rate), and the snapshot is persisted to storage in the background
 * (W = bytes / write_Bps) while training goes on; a persist must end
 * before the next snapshot begins, so training waits max(0, W - tau) at
 * each checkpoint, and a failure loses the work since the last *persisted*
 * checkpoint. Closed forms: the comment above rel_async_segment_s. */
typedef enum rel_ckpt_mode {
	REL_SYNC,
	REL_ASYNC,
} rel_ckpt_mode;

typedef struct rel_params {
	rel_part part[REL_KINDS];
	double restart_s;      /* failure to resumed compute: detect, replace, reload (>= 0) */
	double ckpt_bytes;     /* one checkpoint (> 0) */
	double ckpt_write_Bps; /* storage write bandwidth the checkpoint gets (> 0) */
	rel_ckpt_mode mode;    /* REL_SYNC unless set */
	double snapshot_bytes; /* REL_ASYNC: what one GPU copies to host memory (> 0) */
	double snapshot_Bps;   /* REL_ASYNC: the rate it copies at (> 0) */
} rel_params;

/* Returns 0, or SIM_EINVAL with the reason in why (n bytes). */
int rel_params_check(const rel_params *p, char *why, size_t n);

/* Failures per second of the whole job, sum of count / mtbf_s; 0 when no
 * part is counted. */
double rel_failure_rate_per_s(const rel_params *p);

/* System MTBF M = 1 / rate; INFINITY when the rate is 0. */
double rel_mtbf_s(const rel_params *p);

/* Time to write one checkpoint, delta = bytes / write_Bps. */
double rel_ckpt_write_s(double bytes, double write_Bps);

/* Young's interval sqrt(2 delta M) (INFINITY when M is). */
double rel_young_interval_s(double delta_s, double mtbf_s);

/* Daly's higher-order interval: for delta < 2M,
 * sqrt(2 delta M) * (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta,
 * otherwise M (INFINITY when M is). */
double rel_daly_interval_s(double delta_s, double mtbf_s);

/* Daly's expected wall time (his T_w) to complete useful_s of compute in
 * segments of interval_s (> 0) each followed by a checkpoint of delta_s,
 * with restart time restart_s after each failure:
 *   T_w = M exp(R / M) (exp((tau + delta) / M) - 1) T_s / tau.
 * It is exact when failures form a Poisson process that can also strike
 * during checkpoints and restarts (a failed restart starts over), a
 * failure loses the segment in progress, and T_s is a whole number of
 * segments. Without failures (M infinite) it is T_s (1 + delta / tau). */
double rel_wall_s(double useful_s, double interval_s, double delta_s, double restart_s,
		  double mtbf_s);

/* Goodput: useful compute time over expected wall time, T_s / T_w, in
 * (0, 1]; it does not depend on T_s. */
double rel_goodput(double interval_s, double delta_s, double restart_s, double mtbf_s);

/* Asynchronous checkpoints: a failure-free job computes tau, snapshots
 * for snap_s (blocking), and persists for persist_s in the background while
 * it computes the next tau; the next snapshot waits for that persist.
 * Failures are a Poisson process of rate 1/M striking in any phase,
 * restarts included (a failed restart starts over, as in Daly's model); a
 * failure loses everything since the last persisted checkpoint (the
 * snapshot in host memory and the persist in flight die with the job) and
 * the job restarts from it after R.
 *
 * Derivation (exact under those assumptions). Let P = max(tau, W) +
 * delta_s, the time between two persist completions ("commits") without
 * failures, and A = tau + delta_s + W, the time from a restart to the
 * first commit (no compute was overlapped with a persist yet). Between
 * commits the durable progress grows by tau. Write L = 1/M.
 *  - From a restart (state "fresh"): the job needs A failure-free; this is
 *    Daly's segment, E_fresh = M e^{R/M} (e^{A/M} - 1).
 *  - From a commit (state "steady"): the next commit comes after P unless
 *    a failure strikes first (probability 1 - e^{-P/M}); then the job has
 *    spent E[min(X, P)] = M (1 - e^{-P/M}), restarts (expected M (e^{R/M}
 *    - 1) with failures during restarts) and is fresh again:
 *      E_steady = (1 - e^{-P/M}) (M + M (e^{R/M} - 1) + E_fresh)
 *               = M (1 - e^{-P/M}) e^{R/M} e^{A/M}.
 *  - The job starts fresh and ends at the commit of its last segment:
 *      T_w = E_fresh + (T_s / tau - 1) E_steady
 *    (exact for a whole number of segments); long-run goodput tau /
 *    E_steady. With W = 0, P = A and E_steady is Daly's segment.
 * First order (tau, W, delta_s, R << M, tau >= W): E_steady / tau ~ (1 +
 * delta_s / tau)(1 + (R + A - P / 2) / M), so the waste is
 *      1 - goodput ~ delta_s / tau + (tau / 2 + W + R) / M:
 * a failure loses on average half an interval plus the persist in flight.
 * Minimising it gives Young's tau* = sqrt(2 delta_s M); for tau < W the
 * waste is (W + delta_s) / tau - 1 + (tau + (W + delta_s) / 2 + R) / M,
 * falling while tau^2 < (W + delta_s) M, so tau* = max(sqrt(2 delta_s M), W)
 * when W^2 <= (W + delta_s) M, else sqrt((W + delta_s) M). No higher-order
 * closed form like Daly's is derived: the plan gives the exact optimum of
 * tau / E_steady, found numerically, in its place. */

/* E_steady above: expected time from one commit to the next (> 0 args,
 * INFINITE M allowed: then P). */
double rel_async_segment_s(double interval_s, double snap_s, double persist_s,
			   double restart_s, double mtbf_s);

/* E_fresh above: expected time from a restart's end to the first commit. */
double rel_async_first_s(double interval_s, double snap_s, double persist_s,
			 double restart_s, double mtbf_s);

/* T_w above for useful_s of compute. */
double rel_async_wall_s(double useful_s, double interval_s, double snap_s, double persist_s,
			double restart_s, double mtbf_s);

/* Long-run goodput tau / E_steady, in (0, 1]. */
double rel_async_goodput(double interval_s, double snap_s, double persist_s, double restart_s,
			 double mtbf_s);

/* Young's first-order interval for async checkpoints (above); INFINITY
 * when M is. */
double rel_async_young_interval_s(double snap_s, double persist_s, double mtbf_s);

/* The interval that maximises rel_async_goodput, found by a log-spaced scan
 * and golden-section refinement (relative precision 1e-9); INFINITY when M
 * is. */
double rel_async_best_interval_s(double snap_s, double persist_s, double restart_s,
				 double mtbf_s);

/* Everything the report shows for one job. */
typedef struct rel_plan {
	rel_ckpt_mode mode;
	double mtbf_s;       /* system MTBF (INFINITY: no failure model) */
	double ckpt_s;       /* delta: training's stop per checkpoint (async: the snapshot) */
	double persist_s;    /* async: W, the background write; sync: 0 */
	double wait_s;       /* async: training's wait per checkpoint for the previous
			      * persist, max(0, W - tau); sync: 0 */
	double interval_s;   /* the interval used */
	double goodput;      /* at the interval used (async: useful_s / wall_s) */
	double wall_s;       /* time to train at the interval used */
	double young_s;      /* suggested intervals (INFINITY without failures) */
	double daly_s;       /* sync: Daly's; async: the exact optimum (rel_async_best_interval_s) */
	double daly_goodput; /* at that interval */
	double daly_wall_s;
} rel_plan;

/* Fills *out for params p (checked first), useful_s (> 0) of compute
 * and the interval the scenario uses (interval_s > 0; 0 means use Daly's,
 * or the async optimum, which then must be finite). Returns 0, or SIM_EINVAL with the reason in
 * why, or SIM_ERANGE (why says so) where the expected time to train overflows: a
 * checkpoint or restart so many MTBFs long that training never completes. */
int rel_plan_for(const rel_params *p, double useful_s, double interval_s, rel_plan *out,
		 char *why, size_t n);

#endif
