/* models/gpu: roofline and quantization against hand-computed values. */
#include <check.h>
#include <stdlib.h>

#include "models/gpu.h"
#include "tests/unit/check_main.h"

/* A100 80GB: 312 TFLOP/s BF16, 2,039 GB/s, 108 SMs, 86.9% best GEMM. */
static const gpu_spec a100 = { .peak_flops = 312e12, .hbm_Bps = 2039e9, .eff_max = 0.869,
			       .sms = 108, .tile_m = 256, .tile_n = 128 };

START_TEST(quantization_by_hand)
{
	/* 2048 x 4608: 8 x 36 = 288 tiles = 2.67 waves -> 3: 288 / 324. */
	wl_gemm g = { .m = 2048, .n = 4608, .k = 12288, .count = 1, .flops = 1 };
	ck_assert_double_eq_tol(gpu_quantization_eff(&a100, &g), 288.0 / 324.0, 1e-12);
	/* 300 x 100: tiles 2 x 1 = 2 in one wave, useful 30000 of 108*32768. */
	g = (wl_gemm){ .m = 300, .n = 100, .k = 64, .count = 1, .flops = 1 };
	ck_assert_double_eq_tol(gpu_quantization_eff(&a100, &g), 30000.0 / (108 * 32768.0), 1e-12);
	/* Exactly 108 full tiles: no loss. */
	g = (wl_gemm){ .m = 256 * 12, .n = 128 * 9, .k = 64, .count = 1, .flops = 1 };
	ck_assert_double_eq_tol(gpu_quantization_eff(&a100, &g), 1.0, 1e-12);
	gpu_spec flat = a100;
	flat.sms = 0;
	ck_assert_double_eq(gpu_quantization_eff(&flat, &g), 1.0);
}
END_TEST

START_TEST(roofline_picks_the_bound)
{
	/* Compute-bound: 3072 x 1152 is 12 x 9 = 108 tiles, exactly one wave. */
	wl_gemm g = { .m = 3072, .n = 1152, .k = 8192, .count = 1 };
	g.flops = 2 * g.m * g.n * g.k;
	g.bytes = 2 * (g.m * g.k + g.k * g.n + g.m * g.n);
	ck_assert_double_eq_tol(gpu_gemm_s(&a100, &g), g.flops / (312e12 * 0.869), 1e-15);
	/* Memory-bound: a thin k, one full wave of tiles. */
	wl_gemm v = { .m = 256 * 108, .n = 128, .k = 16, .count = 1 };
	v.flops = 2 * v.m * v.n * v.k;
	v.bytes = 2 * (v.m * v.k + v.k * v.n + v.m * v.n);
	ck_assert_double_eq_tol(gpu_gemm_s(&a100, &v), v.bytes / 2039e9, 1e-15);
	ck_assert_double_eq_tol(gpu_mem_s(&a100, 2039e9), 1.0, 1e-12);
	gpu_spec l = a100;
	l.launch_s = 5e-6;
	ck_assert_double_eq_tol(gpu_mem_s(&l, 0), 5e-6, 1e-18);
	ck_assert_double_eq_tol(gpu_optimizer_s(&a100, 1e9), 30e9 / 2039e9, 1e-15);
}
END_TEST

START_TEST(layer_backward_is_twice_forward_work)
{
	const wl_preset *p = wl_preset_find("megatron-145.6b");
	wl_transformer t = p->model.tf;
	char why[64];
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	double f, b, lf, lb;
	gpu_layer_s(&a100, &t, 1, 8, &f, &b);
	ck_assert_double_eq_tol(b / f, 2.0, 1e-12);
	/* The layer's FLOPs run at no more than 86.9% of peak. */
	double flops = wl_layer_fwd_flops_per_token(&t) * t.seq / 8;
	ck_assert(flops / f < 312e12 * 0.869);
	ck_assert(flops / f > 312e12 * 0.5);
	gpu_logits_s(&a100, &t, 1, 8, &lf, &lb);
	ck_assert_double_eq_tol(lb / lf, 2.0, 1e-12);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gpu");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, quantization_by_hand);
	tcase_add_test(tc, roofline_picks_the_bound);
	tcase_add_test(tc, layer_backward_is_twice_forward_work);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
