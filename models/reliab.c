/* Failures, checkpoints and goodput: Young's and Daly's closed forms. */
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

int rel_plan_for(const rel_params *p, double useful_s, double interval_s, rel_plan *out,
		 char *why, size_t n)
{
	int rc = rel_params_check(p, why, n);
	if (rc)
		return rc;
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
	return SIM_OK;
}
