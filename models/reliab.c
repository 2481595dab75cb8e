/* Failures, checkpoints and goodput: Young's and Daly's closed forms, and
 * their counterparts for asynchronous checkpoints (derivation in reliab.h). */
#include "models/reliab.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "sim/err.h"

static const char *const kind_name[REL_KINDS] = {
	[REL_GPU] = "gpu", [REL_NODE] = "node", [REL_NIC] = "nic", [REL_SWITCH] = "switch",
};

static bool positive(double x)
{
	return isfinite(x) && x > 0;
}

int rel_params_check(const rel_params *p, char *why, size_t n)
{
	for (int k = 0; k < REL_KINDS; k++)
		if (p->part[k].count && !positive(p->part[k].mtbf_s)) {
			snprintf(why, n, "%s MTBF must be a positive finite time", kind_name[k]);
			return SIM_EINVAL;
		}
	if (!isfinite(p->restart_s) || p->restart_s < 0) {
		snprintf(why, n, "restart time must be a finite time >= 0");
		return SIM_EINVAL;
	}
	if (!positive(p->ckpt_bytes) || !positive(p->ckpt_write_Bps)) {
		snprintf(why, n, "checkpoint size and write bandwidth must be positive");
		return SIM_EINVAL;
	}
	if (p->mode == REL_ASYNC && (!positive(p->snapshot_bytes) || !positive(p->snapshot_Bps))) {
		snprintf(why, n, "async checkpoint: snapshot size and rate must be positive");
		return SIM_EINVAL;
	}
	return SIM_OK;
}

double rel_failure_rate_per_s(const rel_params *p)
{
	double rate = 0;
	for (int k = 0; k < REL_KINDS; k++)
		if (p->part[k].count)
			rate += (double)p->part[k].count / p->part[k].mtbf_s;
	return rate;
}

double rel_mtbf_s(const rel_params *p)
{
	double rate = rel_failure_rate_per_s(p);
	return rate > 0 ? 1 / rate : INFINITY;
}

double rel_ckpt_write_s(double bytes, double write_Bps)
{
	return bytes / write_Bps;
}

double rel_young_interval_s(double delta_s, double mtbf_s)
{
	return sqrt(2 * delta_s * mtbf_s);
}

double rel_daly_interval_s(double delta_s, double mtbf_s)
{
	double x = delta_s / (2 * mtbf_s);
	if (isinf(mtbf_s))
		return INFINITY;
	if (delta_s >= 2 * mtbf_s)
		return mtbf_s;
	return sqrt(2 * delta_s * mtbf_s) * (1 + sqrt(x) / 3 + x / 9) - delta_s;
}

/* Expected wall time of one segment: M e^{R/M} (e^{(tau+delta)/M} - 1),
 * with expm1 so that a large M keeps its precision. */
static double segment_wall_s(double interval_s, double delta_s, double restart_s,
			     double mtbf_s)
{
	if (isinf(mtbf_s))
		return interval_s + delta_s;
	return mtbf_s * exp(restart_s / mtbf_s) * expm1((interval_s + delta_s) / mtbf_s);
}

double rel_wall_s(double useful_s, double interval_s, double delta_s, double restart_s,
		  double mtbf_s)
{
	SIM_ASSERT(interval_s > 0, "reliab: checkpoint interval %g s", interval_s);
	return segment_wall_s(interval_s, delta_s, restart_s, mtbf_s) * useful_s / interval_s;
}

double rel_goodput(double interval_s, double delta_s, double restart_s, double mtbf_s)
{
	SIM_ASSERT(interval_s > 0, "reliab: checkpoint interval %g s", interval_s);
	return interval_s / segment_wall_s(interval_s, delta_s, restart_s, mtbf_s);
}

/* P and A of reliab.h: commit to commit, and restart to first commit. */
static double async_period_s(double interval_s, double snap_s, double persist_s)
{
	return fmax(interval_s, persist_s) + snap_s;
}

double rel_async_first_s(double interval_s, double snap_s, double persist_s,
			 double restart_s, double mtbf_s)
{
	return segment_wall_s(interval_s + snap_s + persist_s, 0, restart_s, mtbf_s);
}

double rel_async_segment_s(double interval_s, double snap_s, double persist_s,
			   double restart_s, double mtbf_s)
{
	double p = async_period_s(interval_s, snap_s, persist_s);
	double a = interval_s + snap_s + persist_s;
	SIM_ASSERT(interval_s > 0, "reliab: checkpoint interval %g s", interval_s);
	if (isinf(mtbf_s))
		return p;
	return -mtbf_s * expm1(-p / mtbf_s) * exp((restart_s + a) / mtbf_s);
}

double rel_async_wall_s(double useful_s, double interval_s, double snap_s, double persist_s,
			double restart_s, double mtbf_s)
{
	double first = rel_async_first_s(interval_s, snap_s, persist_s, restart_s, mtbf_s);
	double seg = rel_async_segment_s(interval_s, snap_s, persist_s, restart_s, mtbf_s);
	return first + (useful_s / interval_s - 1) * seg;
}

double rel_async_goodput(double interval_s, double snap_s, double persist_s, double restart_s,
			 double mtbf_s)
{
	return interval_s / rel_async_segment_s(interval_s, snap_s, persist_s, restart_s, mtbf_s);
}

double rel_async_young_interval_s(double snap_s, double persist_s, double mtbf_s)
{
	if (isinf(mtbf_s))
		return INFINITY;
	if (persist_s * persist_s > (persist_s + snap_s) * mtbf_s)
		return sqrt((persist_s + snap_s) * mtbf_s);
	return fmax(sqrt(2 * snap_s * mtbf_s), persist_s);
}

/* Golden-section search for the maximum of the async goodput in [lo, hi]. */
static double golden_max(double lo, double hi, double snap_s, double persist_s,
			 double restart_s, double mtbf_s)
{
	const double r = (sqrt(5.0) - 1) / 2;
	double a = lo, b = hi, x1 = b - r * (b - a), x2 = a + r * (b - a);
	double g1 = rel_async_goodput(x1, snap_s, persist_s, restart_s, mtbf_s);
	double g2 = rel_async_goodput(x2, snap_s, persist_s, restart_s, mtbf_s);
	while (b - a > 1e-9 * b) {
		if (g1 < g2) {
			a = x1, x1 = x2, g1 = g2, x2 = a + r * (b - a);
			g2 = rel_async_goodput(x2, snap_s, persist_s, restart_s, mtbf_s);
		} else {
			b = x2, x2 = x1, g2 = g1, x1 = b - r * (b - a);
			g1 = rel_async_goodput(x1, snap_s, persist_s, restart_s, mtbf_s);
		}
	}
	return (a + b) / 2;
}

/* The goodput has a kink at tau = W (P stops being W + delta_s), so a
 * log-spaced scan from 1e-6 M to 10 M first finds the bracket of the best
 * point, then golden sections refine it. */
double rel_async_best_interval_s(double snap_s, double persist_s, double restart_s,
				 double mtbf_s)
{
	enum { STEPS = 1000 };
	double lo = 1e-6 * mtbf_s, ratio = pow(1e7, 1.0 / STEPS), best_g = -1;
	int best = 0;
	if (isinf(mtbf_s))
		return INFINITY;
	for (int i = 0; i <= STEPS; i++) {
		double g = rel_async_goodput(lo * pow(ratio, i), snap_s, persist_s, restart_s, mtbf_s);
		if (g > best_g)
			best_g = g, best = i;
	}
	return golden_max(lo * pow(ratio, best > 0 ? best - 1 : 0),
			  lo * pow(ratio, best < STEPS ? best + 1 : STEPS), snap_s, persist_s,
			  restart_s, mtbf_s);
}

/* The interval to use: the scenario's, or Daly's when it gives none. */
static int plan_interval(double useful_s, double interval_s, double daly_s, double *tau,
			 char *why, size_t n)
{
	const char *bad = NULL;
	if (!positive(useful_s))
		bad = "useful compute time must be positive";
	else if (!isfinite(interval_s) || interval_s < 0)
		bad = "checkpoint interval must be a finite time >= 0";
	else if (interval_s == 0 && !isfinite(daly_s))
		bad = "no failures, so no optimal checkpoint interval: give one";
	if (bad) {
		snprintf(why, n, "%s", bad);
		return SIM_EINVAL;
	}
	*tau = interval_s > 0 ? interval_s : daly_s;
	return SIM_OK;
}

/* A plan whose expected wall time overflows a double (a checkpoint or
 * restart many MTBFs long: every segment restarts before it commits) has
 * no time to train to give: SIM_ERANGE, saying so. */
static int plan_in_range(const rel_plan *pl, double restart_s, double useful_s, char *why,
			 size_t n)
{
	if (isfinite(pl->wall_s) && pl->goodput > 0)
		return SIM_OK;
	snprintf(why, n, "training never completes (expected time beyond range): %.3g s of "
		 "it, a checkpoint written in %.3g s and a restart of %.3g s against a mean "
		 "time between failures of %.3g s; shorten the checkpoint or raise the MTBF",
		 useful_s, pl->mode == REL_ASYNC ? pl->persist_s : pl->ckpt_s, restart_s,
		 pl->mtbf_s);
	return SIM_ERANGE;
}

/* rel_plan_for for asynchronous checkpoints. A kink at W would leave a
 * golden section in the wrong piece, so the scan in
 * rel_async_best_interval_s brackets it first. */
static int async_plan_for(const rel_params *p, double useful_s, double interval_s,
			  rel_plan *out, char *why, size_t n)
{
	double m = rel_mtbf_s(p), r = p->restart_s;
	double d = p->snapshot_bytes / p->snapshot_Bps;
	double w = rel_ckpt_write_s(p->ckpt_bytes, p->ckpt_write_Bps);
	double best = rel_async_best_interval_s(d, w, r, m), tau;
	int rc = plan_interval(useful_s, interval_s, best, &tau, why, n);
	if (rc)
		return rc;
	*out = (rel_plan){
		.mode = REL_ASYNC,
		.mtbf_s = m,
		.ckpt_s = d,
		.persist_s = w,
		.wait_s = fmax(0, w - tau),
		.interval_s = tau,
		.wall_s = rel_async_wall_s(useful_s, tau, d, w, r, m),
		.young_s = rel_async_young_interval_s(d, w, m),
		.daly_s = best,
		.daly_goodput = isfinite(best) ? rel_async_goodput(best, d, w, r, m) : 1.0,
		.daly_wall_s = isfinite(best) ? rel_async_wall_s(useful_s, best, d, w, r, m)
					      : useful_s,
	};
	out->goodput = useful_s / out->wall_s;
	return plan_in_range(out, r, useful_s, why, n);
}

int rel_plan_for(const rel_params *p, double useful_s, double interval_s, rel_plan *out,
		 char *why, size_t n)
{
	int rc = rel_params_check(p, why, n);
	if (rc)
		return rc;
	if (p->mode == REL_ASYNC)
		return async_plan_for(p, useful_s, interval_s, out, why, n);
	double m = rel_mtbf_s(p), d = rel_ckpt_write_s(p->ckpt_bytes, p->ckpt_write_Bps);
	double daly = rel_daly_interval_s(d, m), tau;
	rc = plan_interval(useful_s, interval_s, daly, &tau, why, n);
	if (rc)
		return rc;
	*out = (rel_plan){
		.mtbf_s = m,
		.ckpt_s = d,
		.interval_s = tau,
		.goodput = rel_goodput(tau, d, p->restart_s, m),
		.wall_s = rel_wall_s(useful_s, tau, d, p->restart_s, m),
		.young_s = rel_young_interval_s(d, m),
		.daly_s = daly,
		/* Without failures the best is never to checkpoint: goodput 1. */
		.daly_goodput = isfinite(daly) ? rel_goodput(daly, d, p->restart_s, m) : 1.0,
		.daly_wall_s = isfinite(daly) ? rel_wall_s(useful_s, daly, d, p->restart_s, m)
					      : useful_s,
	};
	return plan_in_range(out, p->restart_s, useful_s, why, n);
}
