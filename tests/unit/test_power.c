/* models/power: power, energy and cost against hand-computed values. The
 * watts and prices below are test inputs, not hardware figures. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/power.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

static pwr_cluster node(void)
{
	pwr_cluster c;
	pwr_cluster_init(&c);
	c.part[PWR_GPU] = (pwr_part){ .count = 8, .max_w = 700, .idle_w = 100, .capex_usd = 25000 };
	c.part[PWR_CPU] = (pwr_part){ .count = 2, .max_w = 350, .idle_w = 100, .capex_usd = 5000 };
	c.part[PWR_DPU] = (pwr_part){ .count = 1, .max_w = 75, .idle_w = 50, .capex_usd = 2500 };
	c.part[PWR_NIC] = (pwr_part){ .count = 8, .max_w = 25, .idle_w = 25, .capex_usd = 1500 };
	c.part[PWR_SWITCH] = (pwr_part){ .count = 1, .max_w = 1000, .idle_w = 1000,
					 .capex_usd = 20000 };
	c.part[PWR_STORAGE] = (pwr_part){ .count = 1, .max_w = 2000, .idle_w = 1500,
					  .capex_usd = 100000 };
	c.pue = 1.25;
	return c;
}

static const double util[PWR_KINDS] = {
	[PWR_GPU] = 0.6, [PWR_CPU] = 0.5, [PWR_DPU] = 0.2,
	[PWR_NIC] = 0.9, [PWR_SWITCH] = 0, [PWR_STORAGE] = 0.4,
};

START_TEST(power_and_energy_by_hand)
{
	pwr_cluster c = node();
	char why[160];
	ck_assert_int_eq(pwr_cluster_check(&c, why, sizeof why), 0);
	ck_assert_double_eq(pwr_part_w(&c.part[PWR_GPU], 0), 100);
	ck_assert_double_eq(pwr_part_w(&c.part[PWR_GPU], 1), 700);
	ck_assert_double_eq_tol(pwr_part_w(&c.part[PWR_GPU], 0.6), 460, 1e-12);
	/* 8*460 + 2*225 + 55 + 8*25 + 1000 + 1700 = 7085 W. */
	ck_assert_double_eq_tol(pwr_it_w(&c, util), 7085, 1e-9);
	/* * 1.25 = 8856.25 W for 10 h: 88.5625 kWh. */
	ck_assert_double_eq_tol(pwr_energy_kwh(&c, util, 36000), 88.5625, 1e-9);
	/* Energy is linear in utilisation: 5 h at 0.2 and 5 h at 1.0 on the
	 * GPUs cost what 10 h at the mean 0.6 do. */
	double lo[PWR_KINDS], hi[PWR_KINDS];
	memcpy(lo, util, sizeof lo);
	memcpy(hi, util, sizeof hi);
	lo[PWR_GPU] = 0.2;
	hi[PWR_GPU] = 1.0;
	ck_assert_double_eq_tol(pwr_energy_kwh(&c, lo, 18000) + pwr_energy_kwh(&c, hi, 18000),
				88.5625, 1e-9);
}
END_TEST

START_TEST(owned_cost_by_hand)
{
	pwr_cluster c = node();
	pwr_price p = { .mode = PWR_PRICE_OWNED, .lifetime_s = 5 * 365 * 86400.0,
			.usd_per_kwh = 0.12 };
	pwr_bill b;
	char why[160];
	ck_assert_int_eq(pwr_bill_for(&c, util, 36000, &p, &b, why, sizeof why), 0);
	ck_assert_double_eq_tol(b.it_w, 7085, 1e-9);
	ck_assert_double_eq_tol(b.facility_w, 8856.25, 1e-9);
	ck_assert_double_eq_tol(b.energy_kwh, 88.5625, 1e-9);
	/* 88.5625 kWh * 0.12 = 10.6275 USD. */
	ck_assert_double_eq_tol(b.energy_usd, 10.6275, 1e-9);
	/* Capex 200000 + 10000 + 2500 + 12000 + 20000 + 100000 = 344500 USD;
	 * 10 h of a 43800 h life: 344500 / 4380 = 78.652968 USD. */
	ck_assert_double_eq_tol(b.capex_usd, 344500.0 / 4380, 1e-9);
	ck_assert_double_eq_tol(b.cost_usd, 344500.0 / 4380 + 10.6275, 1e-9);
	/* 1e9 tokens for that. */
	ck_assert_double_eq_tol(pwr_tokens_per_usd(1e9, b.cost_usd),
				1e9 / 89.28046803652968, 1e-3);
}
END_TEST

START_TEST(gpu_hour_cost_by_hand)
{
	pwr_cluster c = node();
	pwr_price p = { .mode = PWR_PRICE_GPU_HOUR, .usd_per_gpu_hour = 2.5 };
	pwr_bill b;
	char why[160];
	ck_assert_int_eq(pwr_bill_for(&c, util, 36000, &p, &b, why, sizeof why), 0);
	/* 8 GPUs * 10 h * 2.5 USD = 200 USD; energy still reported, its price
	 * is inside the rental price, so the split does not apply. */
	ck_assert_double_eq_tol(b.cost_usd, 200, 1e-9);
	ck_assert_double_eq_tol(b.energy_kwh, 88.5625, 1e-9);
	ck_assert(isnan(b.capex_usd) && isnan(b.energy_usd));
	ck_assert_double_eq_tol(pwr_tokens_per_usd(1e9, b.cost_usd), 5e6, 1e-6);
}
END_TEST

START_TEST(missing_or_bad_inputs_say_why)
{
	char why[160];
	pwr_bill b;
	pwr_price owned = { .mode = PWR_PRICE_OWNED, .lifetime_s = 1e8, .usd_per_kwh = 0.1 };
	pwr_cluster c = node();
	c.part[PWR_GPU].idle_w = NAN; /* as pwr_cluster_init leaves it */
	ck_assert_int_eq(pwr_cluster_check(&c, why, sizeof why), SIM_EINVAL);
	ck_assert_str_eq(why, "gpu idle power is not given: no published figure is assumed "
			      "(give idle_w = max_w for a constant draw)");
	ck_assert_int_eq(pwr_bill_for(&c, util, 1, &owned, &b, why, sizeof why), SIM_EINVAL);
	c = node();
	c.part[PWR_CPU].idle_w = 400;
	ck_assert_int_eq(pwr_cluster_check(&c, why, sizeof why), SIM_EINVAL);
	ck_assert_str_eq(why, "cpu idle power must be between 0 and its maximum (350 W)");
	c = node();
	c.part[PWR_SWITCH].max_w = NAN;
	ck_assert_int_eq(pwr_cluster_check(&c, why, sizeof why), SIM_EINVAL);
	ck_assert_str_eq(why, "switch maximum power is not given");
	c = node();
	c.pue = 0.9;
	ck_assert_int_eq(pwr_cluster_check(&c, why, sizeof why), SIM_EINVAL);
	/* A kind that is not counted needs no figures. */
	pwr_cluster_init(&c);
	c.part[PWR_GPU] = node().part[PWR_GPU];
	c.pue = 1;
	ck_assert_int_eq(pwr_cluster_check(&c, why, sizeof why), 0);

	c = node();
	double u[PWR_KINDS];
	memcpy(u, util, sizeof u);
	u[PWR_DPU] = 1.5;
	ck_assert_int_eq(pwr_bill_for(&c, u, 1, &owned, &b, why, sizeof why), SIM_EINVAL);
	ck_assert_str_eq(why, "dpu utilisation 1.5 is outside [0, 1]");
	/* No DPU, no DPU utilisation needed (the training model reports NAN). */
	u[PWR_DPU] = NAN;
	c.part[PWR_DPU].count = 0;
	ck_assert_int_eq(pwr_bill_for(&c, u, 36000, &owned, &b, why, sizeof why), 0);
	ck_assert_double_eq_tol(b.it_w, 7085 - 55, 1e-9);
	c = node();
	ck_assert_int_eq(pwr_bill_for(&c, util, 0, &owned, &b, why, sizeof why), SIM_EINVAL);
	pwr_price bad = owned;
	bad.lifetime_s = 0;
	ck_assert_int_eq(pwr_bill_for(&c, util, 1, &bad, &b, why, sizeof why), SIM_EINVAL);
	ck_assert_str_eq(why, "hardware lifetime must be a positive time");
	bad = (pwr_price){ .mode = PWR_PRICE_GPU_HOUR, .usd_per_gpu_hour = 0 };
	ck_assert_int_eq(pwr_bill_for(&c, util, 1, &bad, &b, why, sizeof why), SIM_EINVAL);
	c.part[PWR_GPU].count = 0;
	bad.usd_per_gpu_hour = 2;
	ck_assert_int_eq(pwr_bill_for(&c, util, 1, &bad, &b, why, sizeof why), SIM_EINVAL);
	ck_assert_str_eq(why, "price per GPU-hour needs a GPU count");
}
END_TEST

/* A GPU without a published idle power, bounded from above: it draws its
 * TDP whatever its utilisation. 1,024 GPUs x 700 W x PUE 1.3 for 10 days
 * = 1024 * 700 * 1.3 * 240 h / 1000 = 223,641.6 kWh; with an idle power of
 * 100 W at utilisation 0.7 it would be 1024 * 520 * 1.3 * 240 / 1000 =
 * 166,133.76 kWh, below the bound. */
START_TEST(unknown_idle_bounded_above_by_hand)
{
	pwr_cluster c;
	pwr_cluster_init(&c);
	c.part[PWR_GPU] = (pwr_part){ .count = 1024, .max_w = 700, .idle_w = NAN };
	c.pue = 1.3;
	char why[160];
	ck_assert_int_eq(pwr_cluster_check(&c, why, sizeof why), SIM_EINVAL);
	ck_assert(pwr_part_bound_above(&c.part[PWR_GPU]));
	ck_assert_double_eq(c.part[PWR_GPU].idle_w, 700);
	ck_assert_int_eq(pwr_cluster_check(&c, why, sizeof why), 0);
	double u[PWR_KINDS] = { [PWR_GPU] = 0.7 };
	double s = 10 * 24 * 3600.0;
	ck_assert_double_eq(pwr_part_w(&c.part[PWR_GPU], 0), 700);
	ck_assert_double_eq(pwr_part_w(&c.part[PWR_GPU], 0.7), 700);
	ck_assert_double_eq_tol(pwr_energy_kwh(&c, u, s), 223641.6, 1e-6);
	/* Already bounded, or with a published idle power: left alone. */
	ck_assert(!pwr_part_bound_above(&c.part[PWR_GPU]));
	pwr_part given = { .count = 1024, .max_w = 700, .idle_w = 100 };
	ck_assert(!pwr_part_bound_above(&given));
	ck_assert_double_eq(given.idle_w, 100);
	c.part[PWR_GPU] = given;
	double below = pwr_energy_kwh(&c, u, s);
	ck_assert_double_eq_tol(below, 166133.76, 1e-6);
	ck_assert(below < 223641.6);
	/* No maximum: nothing to bound with, the check still refuses it. */
	pwr_part none = { .count = 1, .max_w = NAN, .idle_w = NAN };
	ck_assert(!pwr_part_bound_above(&none));
	ck_assert(isnan(none.idle_w));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("power");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, power_and_energy_by_hand);
	tcase_add_test(tc, owned_cost_by_hand);
	tcase_add_test(tc, gpu_hour_cost_by_hand);
	tcase_add_test(tc, missing_or_bad_inputs_say_why);
	tcase_add_test(tc, unknown_idle_bounded_above_by_hand);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
