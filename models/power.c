/* Power, energy and cost of a run. */
#include "models/power.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "sim/err.h"

static const char *const kind_name[PWR_KINDS] = {
	[PWR_GPU] = "gpu", [PWR_CPU] = "cpu", [PWR_DPU] = "dpu",
	[PWR_NIC] = "nic", [PWR_SWITCH] = "switch", [PWR_STORAGE] = "storage server",
};

#define J_PER_KWH 3.6e6
#define S_PER_HOUR 3600.0

void pwr_cluster_init(pwr_cluster *c)
{
	for (int k = 0; k < PWR_KINDS; k++)
		c->part[k] = (pwr_part){ .count = 0, .max_w = NAN, .idle_w = NAN, .capex_usd = 0 };
	c->pue = NAN;
}

static bool nonneg(double x)
{
	return isfinite(x) && x >= 0;
}

static int part_check(const pwr_part *p, const char *name, char *why, size_t n)
{
	if (!nonneg(p->max_w))
		snprintf(why, n, "%s maximum power is not given", name);
	else if (isnan(p->idle_w))
		snprintf(why, n, "%s idle power is not given: no published figure is assumed "
			 "(give idle_w = max_w for a constant draw)", name);
	else if (!nonneg(p->idle_w) || p->idle_w > p->max_w)
		snprintf(why, n, "%s idle power must be between 0 and its maximum (%g W)", name,
			 p->max_w);
	else if (!nonneg(p->capex_usd))
		snprintf(why, n, "%s price must be a finite amount >= 0", name);
	else
		return SIM_OK;
	return SIM_EINVAL;
}

int pwr_cluster_check(const pwr_cluster *c, char *why, size_t n)
{
	for (int k = 0; k < PWR_KINDS; k++)
		if (c->part[k].count && part_check(&c->part[k], kind_name[k], why, n))
			return SIM_EINVAL;
	if (!isfinite(c->pue) || c->pue < 1) {
		snprintf(why, n, "PUE must be a finite number >= 1");
		return SIM_EINVAL;
	}
	return SIM_OK;
}

bool pwr_part_bound_above(pwr_part *p)
{
	if (!isnan(p->idle_w) || !nonneg(p->max_w))
		return false;
	p->idle_w = p->max_w;
	return true;
}

double pwr_part_w(const pwr_part *p, double util)
{
	SIM_ASSERT(util >= 0 && util <= 1, "power: utilisation %g outside [0, 1]", util);
	return p->idle_w + (p->max_w - p->idle_w) * util;
}

double pwr_it_w(const pwr_cluster *c, const double util[PWR_KINDS])
{
	double w = 0;
	for (int k = 0; k < PWR_KINDS; k++)
		if (c->part[k].count)
			w += (double)c->part[k].count * pwr_part_w(&c->part[k], util[k]);
	return w;
}

double pwr_energy_kwh(const pwr_cluster *c, const double util[PWR_KINDS], double wall_s)
{
	return c->pue * pwr_it_w(c, util) * wall_s / J_PER_KWH;
}

static int price_check(const pwr_cluster *c, const pwr_price *p, char *why, size_t n)
{
	const char *bad = NULL;
	if (p->mode == PWR_PRICE_GPU_HOUR) {
		if (!isfinite(p->usd_per_gpu_hour) || p->usd_per_gpu_hour <= 0)
			bad = "price per GPU-hour must be positive";
		else if (!c->part[PWR_GPU].count)
			bad = "price per GPU-hour needs a GPU count";
	} else if (p->mode == PWR_PRICE_OWNED) {
		if (!isfinite(p->lifetime_s) || p->lifetime_s <= 0)
			bad = "hardware lifetime must be a positive time";
		else if (!nonneg(p->usd_per_kwh))
			bad = "energy price must be a finite amount >= 0";
	} else {
		bad = "unknown pricing mode";
	}
	if (!bad)
		return SIM_OK;
	snprintf(why, n, "%s", bad);
	return SIM_EINVAL;
}

/* Only counted kinds need a utilisation (a run without DPUs has none). */
static int util_check(const pwr_cluster *c, const double util[PWR_KINDS], char *why,
		      size_t n)
{
	for (int k = 0; k < PWR_KINDS; k++)
		if (c->part[k].count && !(util[k] >= 0 && util[k] <= 1)) {
			snprintf(why, n, "%s utilisation %g is outside [0, 1]", kind_name[k], util[k]);
			return SIM_EINVAL;
		}
	return SIM_OK;
}

/* Straight-line depreciation: the run's share of every unit's price. */
static double capex_share_usd(const pwr_cluster *c, double wall_s, double lifetime_s)
{
	double usd = 0;
	for (int k = 0; k < PWR_KINDS; k++)
		usd += (double)c->part[k].count * c->part[k].capex_usd;
	return usd * wall_s / lifetime_s;
}

int pwr_bill_for(const pwr_cluster *c, const double util[PWR_KINDS], double wall_s,
		 const pwr_price *price, pwr_bill *out, char *why, size_t n)
{
	int rc = pwr_cluster_check(c, why, n);
	if (!rc)
		rc = util_check(c, util, why, n);
	if (!rc)
		rc = price_check(c, price, why, n);
	if (!rc && !(isfinite(wall_s) && wall_s > 0)) {
		snprintf(why, n, "wall time must be positive");
		rc = SIM_EINVAL;
	}
	if (rc)
		return rc;
	double it_w = pwr_it_w(c, util), kwh = pwr_energy_kwh(c, util, wall_s);
	*out = (pwr_bill){ .it_w = it_w, .facility_w = it_w * c->pue, .energy_kwh = kwh,
			   .capex_usd = NAN, .energy_usd = NAN };
	if (price->mode == PWR_PRICE_GPU_HOUR) {
		out->cost_usd = (double)c->part[PWR_GPU].count * wall_s / S_PER_HOUR *
				price->usd_per_gpu_hour;
	} else {
		out->capex_usd = capex_share_usd(c, wall_s, price->lifetime_s);
		out->energy_usd = kwh * price->usd_per_kwh;
		out->cost_usd = out->capex_usd + out->energy_usd;
	}
	return SIM_OK;
}

double pwr_tokens_per_usd(double tokens, double cost_usd)
{
	SIM_ASSERT(cost_usd > 0, "power: cost %g USD", cost_usd);
	return tokens / cost_usd;
}
