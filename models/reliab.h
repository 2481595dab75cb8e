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

typedef struct rel_params {
	rel_part part[REL_KINDS];
	double restart_s;      /* failure to resumed compute: detect, replace, reload (>= 0) */
	double ckpt_bytes;     /* one checkpoint (> 0) */
	double ckpt_write_Bps; /* storage write bandwidth the checkpoint gets (> 0) */
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

/* Everything the report shows for one job. */
typedef struct rel_plan {
	double mtbf_s;       /* system MTBF (INFINITY: no failure model) */
	double ckpt_s;       /* delta */
	double interval_s;   /* the interval used */
	double goodput;      /* at the interval used */
	double wall_s;       /* time to train at the interval used */
	double young_s;      /* suggested intervals (INFINITY without failures) */
	double daly_s;
	double daly_goodput; /* at Daly's interval */
	double daly_wall_s;
} rel_plan;

/* Fills *out for params p (checked first), useful_s (> 0) of compute
 * and the interval the scenario uses (interval_s > 0; 0 means use Daly's,
 * which then must be finite). Returns 0, or SIM_EINVAL with the reason in
 * why. */
int rel_plan_for(const rel_params *p, double useful_s, double interval_s, rel_plan *out,
		 char *why, size_t n);

#endif
