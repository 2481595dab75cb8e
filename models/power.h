/* Power, energy and cost of a run. Each kind of component draws
 * idle_w + (max_w - idle_w) * utilisation per unit; the facility draws the
 * IT power times the PUE (The Green Grid, "PUE: A Comprehensive
 * Examination of the Metric", White Paper #49, 2012: total facility
 * energy over IT equipment energy). Cost is either an all-in price per
 * GPU-hour (rental: power and amortisation are in the price) or owned
 * hardware: capital cost per unit depreciated straight-line over a
 * lifetime, plus facility energy at a price per kWh.
 *
 * No figure is built in. Where a vendor publishes only a maximum (the GPU
 * TDP), there is no published idle power to derive one from (see
 * docs/profile-sources.md: NVIDIA publishes none for the A100, H100 or
 * H200), so idle_w must be given by the scenario; this module does not
 * guess a fraction. A caller may instead bound such a part from above
 * (pwr_part_bound_above: its maximum at every utilisation) and must then
 * say that the energy is an upper bound. For a part whose draw does not
 * follow utilisation (a switch at its typical power, a storage server),
 * give idle_w = max_w. */
#ifndef DPUSIM_MODELS_POWER_H
#define DPUSIM_MODELS_POWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum pwr_kind {
	PWR_GPU,
	PWR_CPU,     /* per socket */
	PWR_DPU,
	PWR_NIC,
	PWR_SWITCH,  /* per switch */
	PWR_STORAGE, /* per storage server */
	PWR_KINDS
} pwr_kind;

/* Per unit. idle_w and max_w are NAN until given (pwr_cluster_init). */
typedef struct pwr_part {
	uint64_t count;
	double max_w;     /* at utilisation 1: TDP, or maximum power */
	double idle_w;    /* at utilisation 0; 0 <= idle_w <= max_w */
	double capex_usd; /* purchase price, for owned pricing (>= 0) */
} pwr_part;

typedef struct pwr_cluster {
	pwr_part part[PWR_KINDS];
	double pue; /* >= 1 */
} pwr_cluster;

/* Sets *c to no parts, every power and the PUE unknown (NAN), capex 0. */
void pwr_cluster_init(pwr_cluster *c);

/* Returns 0, or SIM_EINVAL with the reason in why (n bytes): a counted
 * part without max_w or idle_w, idle above max, a PUE below 1. */
int pwr_cluster_check(const pwr_cluster *c, char *why, size_t n);

/* Bounds a part whose idle power is not given (idle_w NAN) from above:
 * sets idle_w = max_w, so the part draws its maximum at every utilisation
 * and its energy is an upper bound (max_w is the most it draws: a GPU's
 * datasheet 'Max thermal design power'). Returns true when it did; a part
 * with an idle power, or without a maximum, is left as it is (false). The
 * caller must report the bound: it is not a measured draw. */
bool pwr_part_bound_above(pwr_part *p);

/* Draw of one unit at utilisation util (in [0, 1]), watts. */
double pwr_part_w(const pwr_part *p, double util);

/* IT power of the whole cluster with util[k] the mean utilisation of
 * kind k over the run (in [0, 1]; ignored, and may be NAN, for a kind with
 * count 0), watts. Energy is linear in
 * utilisation, so the mean gives the exact energy of a varying load. */
double pwr_it_w(const pwr_cluster *c, const double util[PWR_KINDS]);

/* Facility energy of a run of wall_s seconds: PUE * IT power * time, kWh. */
double pwr_energy_kwh(const pwr_cluster *c, const double util[PWR_KINDS], double wall_s);

typedef enum pwr_pricing {
	PWR_PRICE_GPU_HOUR, /* usd_per_gpu_hour, all-in */
	PWR_PRICE_OWNED,    /* capex over lifetime_s, plus usd_per_kwh */
} pwr_pricing;

typedef struct pwr_price {
	pwr_pricing mode;
	double usd_per_gpu_hour; /* GPU_HOUR: > 0 */
	double lifetime_s;       /* OWNED: amortisation period, > 0 */
	double usd_per_kwh;      /* OWNED: >= 0 */
} pwr_price;

/* What a run costs. A figure that does not apply to the pricing mode is
 * NAN (the report leaves it out), never a made-up zero. */
typedef struct pwr_bill {
	double it_w;
	double facility_w;
	double energy_kwh;  /* facility energy, whatever the pricing */
	double capex_usd;   /* OWNED: amortised share of the run */
	double energy_usd;  /* OWNED: energy_kwh * usd_per_kwh */
	double cost_usd;    /* the total */
} pwr_bill;

/* Fills *out for cluster c, utilisations util, wall time wall_s (> 0) and
 * price. Returns 0, or SIM_EINVAL with the reason in why (n bytes). */
int pwr_bill_for(const pwr_cluster *c, const double util[PWR_KINDS], double wall_s,
		 const pwr_price *price, pwr_bill *out, char *why, size_t n);

/* Tokens trained per dollar: tokens / cost_usd (cost > 0). */
double pwr_tokens_per_usd(double tokens, double cost_usd);

#endif
