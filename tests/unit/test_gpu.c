/* models/gpu: roofline and quantization against hand-computed values. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "models/gpu.h"
#include "models/profile.h"
#include "models/diag.h"
#include "models/setup.h"
#include "tests/unit/check_main.h"
#include "tests/unit/fixture.h"

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
}
END_TEST

/* Megatron-LM's optimizer step, pass by pass (gpu.h): 32 bytes per
 * parameter in fp32, 38 with bf16's fp32 gradients, 52 with fp16's
 * 16-bit gradients and loss scaling; the step moves opt_bytes each. */
START_TEST(optimizer_step_moves_megatron_passes)
{
	ck_assert_double_eq(gpu_optimizer_bytes(false, false), 32);
	ck_assert_double_eq(gpu_optimizer_bytes(true, false), 38);
	ck_assert_double_eq(gpu_optimizer_bytes(true, true), 52);
	gpu_spec g = a100;
	g.opt_bytes = gpu_optimizer_bytes(true, true);
	ck_assert_double_eq_tol(gpu_optimizer_s(&g, 1e9), 52e9 / 2039e9, 1e-15);
}
END_TEST

START_TEST(memory_bound_work_uses_the_achieved_bandwidth)
{
	gpu_spec g = a100;
	ck_assert_double_eq(gpu_mem_Bps(&g), 2039e9);
	g.mem_Bps = 1.8e12;
	ck_assert_double_eq(gpu_mem_Bps(&g), 1.8e12);
	ck_assert_double_eq_tol(gpu_mem_s(&g, 1.8e12), 1.0, 1e-12);
	wl_kernel k = { .name = "k", .read_bytes = 1.2e12, .write_bytes = 0.6e12 };
	ck_assert_double_eq_tol(gpu_kernel_s(&g, &k), 1.0, 1e-12);
	/* A GEMM's memory bound moves at the same rate. */
	wl_gemm v = { .m = 256 * 108, .n = 128, .k = 16, .count = 1 };
	v.flops = 2 * v.m * v.n * v.k;
	v.bytes = 2 * (v.m * v.k + v.k * v.n + v.m * v.n);
	ck_assert_double_eq_tol(gpu_gemm_s(&g, &v), v.bytes / 1.8e12, 1e-15);
}
END_TEST

/* The small layer of test_workload's layer_kernel_bytes_by_hand: its
 * kernels move 41,248 bytes forward and 222,336 backward. */
START_TEST(layer_is_gemms_plus_kernel_bytes)
{
	wl_transformer t = { .layers = 1, .hidden = 64, .heads = 4, .seq = 8, .vocab = 100 };
	char why[64];
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	gpu_spec g = a100;
	g.mem_Bps = 1.8e12;
	wl_gemm gm[WL_LAYER_GEMMS];
	double gemms = 0, f, b;
	wl_layer_gemms(&t, 2, 2, gm);
	for (int i = 0; i < WL_LAYER_GEMMS; i++)
		gemms += gpu_gemm_s(&g, &gm[i]);
	gpu_layer_s(&g, &t, 2, &(wl_split){ .tp = 2 }, &f, &b);
	ck_assert_double_eq_tol(f - gemms, 41248 / 1.8e12, 1e-18);
	ck_assert_double_eq_tol(b - 2 * gemms, 222336 / 1.8e12, 1e-18);
	/* FlashAttention: the score kernels move nothing (A = 256 scores: the
	 * softmax's 2A tau + 2A and the dropout's 5A forward, 5A and 4A tau +
	 * 2A backward, tau = 9/16), its GEMMs not the scores, and the backward
	 * recomputes the scores' GEMM. */
	wl_gemm fm[WL_LAYER_GEMMS];
	double fgemms = 0, ff, fb;
	wl_layer_gemms_split(&t, 2, &(wl_split){ .tp = 2, .flash = true }, fm);
	/* its attention GEMMs run the causal triangle only: (8+1)/16 of them */
	for (int i = 0; i < WL_LAYER_GEMMS; i++)
		fgemms += i == 1 || i == 2 ? gpu_gemm_at_s(&g, &fm[i], g.peak_flops, 9.0 / 16)
					   : gpu_gemm_s(&g, &fm[i]);
	ck_assert(fm[1].bytes < gm[1].bytes && fm[2].bytes < gm[2].bytes);
	gpu_layer_s(&g, &t, 2, &(wl_split){ .tp = 2, .flash = true }, &ff, &fb);
	ck_assert_double_eq_tol(ff - fgemms, (41248 - 800 - 1280) / 1.8e12, 1e-18);
	ck_assert_double_eq_tol(fb - 2 * fgemms - gpu_gemm_at_s(&g, &fm[1], g.peak_flops, 9.0 / 16),
				(222336 - 1280 - 1088) / 1.8e12, 1e-18);
	/* Each kernel pays the launch overhead where a profile gives one. */
	g.launch_s = 1e-6;
	double fl, bl;
	gpu_layer_s(&g, &t, 2, &(wl_split){ .tp = 2 }, &fl, &bl);
	ck_assert_double_eq_tol(fl - f, (WL_LAYER_GEMMS + WL_LAYER_FWD_KERNELS) * 1e-6, 1e-15);
	ck_assert_double_eq_tol(bl - b, (2 * WL_LAYER_GEMMS + WL_LAYER_BWD_KERNELS) * 1e-6, 1e-15);
}
END_TEST

/* Unfused attention's score and value GEMMs where the profile measures
 * them (attn_gemm_eff_d64/_d128): their bytes at the streaming rate plus
 * their FLOPs at that fraction of the peak at the model's head dim, not
 * the larger of the two (Dao, "FlashAttention-2", 2023, figure 4:
 * PyTorch's standard attention on the A100 80GB SXM4). The other kernels
 * and FlashAttention are unchanged. */
START_TEST(unfused_attention_gemms_add_bytes_and_flops)
{
	gpu_spec g = a100;
	g.mem_Bps = 1.8e12;
	/* megatron-1.7b at microbatch 16: 384 score matrices of 2048 x 2048,
	 * head dim 96, GEMMs the roofline calls memory-bound */
	wl_transformer t = wl_preset_find("megatron-1.7b")->model.tf;
	char why[64];
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	ck_assert_uint_eq(t.hidden / t.heads, 96);
	const double eff = (0.300 + 0.468) / 2; /* half way from 64 to 128 */
	wl_split sp = { .tp = 1, .cp = 1 };
	wl_gemm gm[WL_LAYER_GEMMS];
	wl_layer_gemms_split(&t, 16, &sp, gm);
	double roof = 0, sum = 0;
	for (int i = 1; i <= 2; i++) {
		ck_assert(gm[i].bytes / 1.8e12 > gm[i].flops / (312e12 * 0.869));
		roof += gm[i].bytes / 1.8e12;
		sum += gm[i].bytes / 1.8e12 + gm[i].flops / (312e12 * eff);
	}
	double f0, b0, f1, b1, af, ab;
	gpu_attention_s(&g, &t, 16, &sp, &af, &ab);
	ck_assert_double_eq_tol(af, roof, 1e-12);
	gpu_layer_s(&g, &t, 16, &sp, &f0, &b0);
	g.attn_gemm_eff_d64 = 0.300, g.attn_gemm_eff_d128 = 0.468;
	gpu_attention_s(&g, &t, 16, &sp, &af, &ab);
	ck_assert_double_eq_tol(af, sum, 1e-12);
	ck_assert_double_eq_tol(ab, 2 * sum, 1e-12);
	gpu_layer_s(&g, &t, 16, &sp, &f1, &b1);
	ck_assert_double_eq_tol(f1 - f0, sum - roof, 1e-12);
	ck_assert_double_eq_tol(b1 - b0, 2 * (sum - roof), 1e-12);
	/* at attention's own peak where the profile gives one (FP8 jobs) */
	g.attn_flops = 156e12;
	gpu_attention_s(&g, &t, 16, &sp, &af, &ab);
	ck_assert_double_eq_tol(af, sum + (gm[1].flops + gm[2].flops) / (312e12 * eff), 1e-12);
	g.attn_flops = 0;
	/* FlashAttention: the fraction changes nothing */
	sp.flash = true;
	gpu_layer_s(&g, &t, 16, &sp, &f1, &b1);
	g.attn_gemm_eff_d64 = g.attn_gemm_eff_d128 = 0;
	gpu_layer_s(&g, &t, 16, &sp, &f0, &b0);
	ck_assert(f0 == f1 && b0 == b1);
}
END_TEST

/* The fraction follows the head dim between the two measured ones and is
 * held, not extended, outside them; one measurement alone holds
 * everywhere; none: 0 (the roofline). */
START_TEST(attn_gemm_eff_follows_the_head_dim)
{
	gpu_spec g = a100;
	g.attn_gemm_eff_d64 = 0.300, g.attn_gemm_eff_d128 = 0.468;
	ck_assert_double_eq_tol(gpu_attn_gemm_eff(&g, 64), 0.300, 1e-15);
	ck_assert_double_eq_tol(gpu_attn_gemm_eff(&g, 96), 0.384, 1e-15);
	ck_assert_double_eq_tol(gpu_attn_gemm_eff(&g, 112), 0.426, 1e-15);
	ck_assert_double_eq_tol(gpu_attn_gemm_eff(&g, 128), 0.468, 1e-15);
	ck_assert_double_eq_tol(gpu_attn_gemm_eff(&g, 160), 0.468, 1e-15);
	ck_assert_double_eq_tol(gpu_attn_gemm_eff(&g, 32), 0.300, 1e-15);
	g.attn_gemm_eff_d128 = NAN;
	ck_assert_double_eq_tol(gpu_attn_gemm_eff(&g, 160), 0.300, 1e-15);
	g.attn_gemm_eff_d64 = 0, g.attn_gemm_eff_d128 = 0.468;
	ck_assert_double_eq_tol(gpu_attn_gemm_eff(&g, 64), 0.468, 1e-15);
	g.attn_gemm_eff_d128 = 0;
	ck_assert_double_eq(gpu_attn_gemm_eff(&g, 96), 0);
}
END_TEST

/* The measurement attn_gemm_eff_d64/_d128 come from, run through the
 * model: Dao, "FlashAttention-2" (2023), figure 4 (a) and (b) as published
 * in the flash-attention repository (assets/flash2_a100_fwd_bwd_benchmark.png,
 * commit 4f285b35), PyTorch's standard attention on the A100 80GB SXM4, 16k
 * tokens of hidden 2048, sequence 2048, no causal mask, forward + backward:
 * 43 TFLOP/s at head dim 64 (32 heads) and 76 at 128 (16 heads), FLOPs
 * counted 3.5 x 4 s^2 d heads. The pattern is the two GEMMs
 * (gpu_attention_s, their backward twice) plus PyTorch's softmax over the
 * whole row (read 2 write 2 bytes a score forward; read 2 + 2 write 2
 * backward), dropout at p 0 a no-op. The shipped profile's fractions,
 * 30.0% and 46.8%, reproduce each bar within 0.5%; one mean fraction for both
 * (38.4%) misses each by more than 8%, which is why the rate follows the
 * head dim. */
START_TEST(unfused_attention_reproduces_flashattention2_figure4)
{
	static const struct { uint32_t heads; double tflops; } bar[] = { { 32, 43 }, { 16, 76 } };
	/* the shipped A100 profile's fractions and streaming rate */
	scn_scenario *s = fx_load("cluster: { nodes: 1, gpus_per_node: 8, gpu: A100-SXM4-80GB,\n"
				  "  cpu: EPYC-7742, nic: ConnectX-6-HDR, nics_per_node: 8,\n"
				  "  fabric: { topology: single-switch, switch: QM8700-HDR } }\n"
				  "workload: { model: megatron-1.7b, parallelism: { tp: 8, pp: 1 },\n"
				  "  batch: { global: 8, micro: 1 } }\n"
				  "variants: [{ name: a, network: rdma-gdr }]\n");
	diag *errs = diag_new();
	gpu_spec g;
	ck_assert_int_eq(setup_gpu(s, SCN_BF16, &g, errs, NULL), 0);
	scn_free(s);
	diag_free(errs);
	ck_assert_double_eq_tol(g.mem_Bps, 1.8e12, 1);
	ck_assert_double_eq_tol(g.peak_flops, 312e12, 1);
	gpu_spec mean = g;
	mean.attn_gemm_eff_d64 = mean.attn_gemm_eff_d128 =
		(g.attn_gemm_eff_d64 + g.attn_gemm_eff_d128) / 2;
	for (int i = 0; i < 2; i++) {
		wl_transformer t = { .layers = 1, .hidden = 2048, .heads = bar[i].heads,
				     .seq = 2048, .vocab = 1 };
		char why[64];
		ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
		double scores = 8.0 * bar[i].heads * 2048.0 * 2048, d = 2048.0 / bar[i].heads;
		double softmax = 10 * scores / 1.8e12, f, b;
		double measured = 3.5 * 4 * d * scores / (bar[i].tflops * 1e12);
		gpu_attention_s(&g, &t, 8, &(wl_split){ .tp = 1, .cp = 1 }, &f, &b);
		ck_assert_msg(fabs((f + b + softmax) / measured - 1) < 0.005,
			      "head dim %g: %g s against %g", d, f + b + softmax, measured);
		gpu_attention_s(&mean, &t, 8, &(wl_split){ .tp = 1, .cp = 1 }, &f, &b);
		ck_assert_msg(fabs((f + b + softmax) / measured - 1) > 0.08,
			      "head dim %g: the mean fraction fits", d);
		/* the roofline alone (no measured fraction) is a third too fast or more */
		gpu_spec roof = g;
		roof.attn_gemm_eff_d64 = roof.attn_gemm_eff_d128 = 0;
		gpu_attention_s(&roof, &t, 8, &(wl_split){ .tp = 1, .cp = 1 }, &f, &b);
		ck_assert(f + b + softmax < 0.7 * measured);
	}
}
END_TEST

START_TEST(large_layer_stays_below_the_gemm_ceiling)
{
	const wl_preset *p = wl_preset_find("megatron-145.6b");
	wl_transformer t = p->model.tf;
	char why[64];
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	double f, b, lf, lb, fb, bb;
	gpu_layer_s(&a100, &t, 1, &(wl_split){ .tp = 8 }, &f, &b);
	/* Backward: twice the GEMMs and more memory-bound bytes than forward. */
	ck_assert(b > 2 * f);
	double flops = wl_layer_fwd_flops_per_token(&t) * t.seq / 8;
	ck_assert(flops / f < 312e12 * 0.869);
	ck_assert(flops / f > 312e12 * 0.5);
	gpu_logits_s(&a100, &t, 1, &(wl_split){ .tp = 8 }, &lf, &lb);
	wl_logit_kernel_bytes(&t, 1, &(wl_split){ .tp = 8 }, &fb, &bb);
	ck_assert_double_eq_tol(lb - 2 * (lf - fb / 2039e9), bb / 2039e9, 1e-12);
}
END_TEST

/* FlashAttention skips the blocks above the causal diagonal (Dao, 2023,
 * section 3.1.1): a compute-bound attention GEMM takes (s+1)/(2s) of its
 * full-square time; a memory-bound one is not helped. */
START_TEST(flash_runs_the_causal_triangle)
{
	wl_gemm c = { .m = 4096, .n = 8192, .k = 128, .count = 32 };
	c.flops = 2 * c.m * c.n * c.k * c.count, c.bytes = 1;
	ck_assert_double_eq_tol(gpu_gemm_at_s(&a100, &c, 312e12, 0.5), gpu_gemm_s(&a100, &c) / 2,
				1e-15);
	ck_assert_double_eq_tol(gpu_gemm_at_s(&a100, &c, 156e12, 1.0), 2 * gpu_gemm_s(&a100, &c),
				1e-15);
	wl_gemm m = c;
	m.bytes = 1e15; /* memory-bound: the share changes nothing */
	ck_assert_double_eq(gpu_gemm_at_s(&a100, &m, 312e12, 0.5), gpu_gemm_s(&a100, &m));
	/* llama3-8b's layer at s 8192: the attention GEMMs at half the peak
	 * add their causal share's time once more, forward and backward
	 * (twice, and the scores' recomputation) */
	const wl_preset *p = wl_preset_find("llama3-8b");
	wl_transformer t = p->model.tf;
	char why[64];
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	gpu_spec h = { .peak_flops = 1979e12, .hbm_Bps = 3.35e12, .eff_max = 0.803, .sms = 132,
		       .tile_m = 256, .tile_n = 128 };
	wl_split sp = { .tp = 1, .cp = 1, .flash = true };
	wl_gemm gm[WL_LAYER_GEMMS];
	double f, b, f2, b2, share = 8193.0 / 16384;
	wl_layer_gemms_split(&t, 1, &sp, gm);
	gpu_layer_s(&h, &t, 1, &sp, &f, &b);
	h.attn_flops = 1979e12 / 2;
	gpu_layer_s(&h, &t, 1, &sp, &f2, &b2);
	h.attn_flops = 0;
	double s1 = gpu_gemm_at_s(&h, &gm[1], 1979e12, share);
	double attn = s1 + gpu_gemm_at_s(&h, &gm[2], 1979e12, share);
	ck_assert(s1 < 0.51 * gpu_gemm_s(&h, &gm[1]));
	ck_assert_double_eq_tol(f2 - f, attn, 1e-12);
	ck_assert_double_eq_tol(b2 - b, 2 * attn + s1, 1e-12);
}
END_TEST

/* Where the profile gives the fused attention kernel's measured rates
 * (FlashAttention-3, figures 5 and 6: cuDNN on the H100 SXM5 at head dim
 * 128), a FlashAttention layer's attention takes its causal FLOPs at
 * them: forward at flash_fwd_flops, backward 2.5 times the FLOPs at
 * flash_bwd_flops, in place of the GEMM model (and its recomputed scores).
 * Unfused attention and other head dims keep the GEMMs. */
START_TEST(flash_at_the_measured_kernel_rates)
{
	const wl_preset *p = wl_preset_find("llama3-8b");
	wl_transformer t = p->model.tf;
	char why[64];
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	gpu_spec h = { .peak_flops = 1979e12, .hbm_Bps = 3.35e12, .eff_max = 0.803, .sms = 132,
		       .tile_m = 256, .tile_n = 128, .attn_flops = 989.5e12 };
	wl_split sp = { .tp = 1, .cp = 2, .flash = true };
	wl_gemm gm[WL_LAYER_GEMMS];
	double f, b, f2, b2, share = 8193.0 / 16384;
	wl_layer_gemms_split(&t, 1, &sp, gm);
	gpu_layer_s(&h, &t, 1, &sp, &f, &b);
	double s1 = gpu_gemm_at_s(&h, &gm[1], 989.5e12, share);
	double s2 = gpu_gemm_at_s(&h, &gm[2], 989.5e12, share);
	h.flash_fwd_flops = 529e12, h.flash_bwd_flops = 518e12;
	gpu_layer_s(&h, &t, 1, &sp, &f2, &b2);
	double causal = share * (gm[1].flops + gm[2].flops);
	ck_assert_double_eq_tol(f2 - f, causal / 529e12 - (s1 + s2), 1e-12);
	ck_assert_double_eq_tol(b2 - b, 2.5 * causal / 518e12 - (2 * (s1 + s2) + s1), 1e-12);
	/* the measured kernel is slower than the GEMM model's 794 TFLOP/s */
	ck_assert(f2 > f && b2 > b);
	/* unfused attention: the rates do not apply */
	double uf, ub, uf2, ub2;
	sp.flash = false;
	gpu_layer_s(&h, &t, 1, &sp, &uf2, &ub2);
	h.flash_fwd_flops = h.flash_bwd_flops = 0;
	gpu_layer_s(&h, &t, 1, &sp, &uf, &ub);
	ck_assert(uf == uf2 && ub == ub2);
	/* head dim 96 (megatron-1.7b's 2304 / 24): not the measured shape */
	wl_transformer m = wl_preset_find("megatron-1.7b")->model.tf;
	ck_assert_int_eq(wl_transformer_check(&m, why, sizeof why), 0);
	sp.flash = true;
	gpu_layer_s(&h, &m, 1, &sp, &uf, &ub);
	h.flash_fwd_flops = 529e12, h.flash_bwd_flops = 518e12;
	gpu_layer_s(&h, &m, 1, &sp, &uf2, &ub2);
	ck_assert(uf == uf2 && ub == ub2);
}
END_TEST

/* A shipped profile's fused-attention rates (flash_fwd_flops and
 * flash_bwd_flops) on an H100-class spec, and the forward and backward
 * time gpu_attention_s gives a causal FlashAttention layer of that shape
 * for a batch of mb sequences. */
static void profile_flash_s(const char *path, wl_transformer t, uint32_t mb, double *f,
			    double *b)
{
	profile *p = NULL;
	diag *d = diag_new();
	ck_assert_int_eq(profile_load(path, &p, d), 0);
	const profile_gpu *pg = &profile_get_values(p)->gpu;
	gpu_spec h = { .peak_flops = 989.5e12, .hbm_Bps = 3.35e12, .eff_max = 0.803,
		       .flash_fwd_flops = pg->flash_fwd_flops,
		       .flash_bwd_flops = pg->flash_bwd_flops };
	char why[64];
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	gpu_attention_s(&h, &t, mb, &(wl_split){ .tp = 1, .cp = 1, .flash = true }, f, b);
	/* forward at the profile's own rate: the causal share of 4 s^2 d heads mb */
	ck_assert_double_eq_tol(*f * pg->flash_fwd_flops, 4.0 * t.seq * t.seq * 128 * t.heads *
				mb * (t.seq + 1) / (2.0 * t.seq), 1);
	profile_free(p);
	diag_free(d);
}

/* The measurement the H100 profile's causal backward comes from, run
 * through the model with the shipped profile's rates: Transformer
 * Engine's attention notebook (docs/examples/attention/attention.ipynb,
 * commit 88c0c9143), benchmark_attention.py's test_3 on the H100 80GB
 * HBM3: batch 2, 32 heads in 4 GQA groups, head dim 128, sequence 8192,
 * causal, BF16, cuDNN forward + backward kernels 7.4875 ms. The profile's
 * flash_bwd_flops is that time less the forward at flash_fwd_flops;
 * FlashAttention-3's unmasked backward (518 TFLOP/s), which the profile
 * held before, gives 7.386 ms (1.4% fast). */
START_TEST(h100_flash_reproduces_te_causal_8k)
{
	wl_transformer t = { .layers = 1, .hidden = 32 * 128, .heads = 32, .kv_heads = 4,
			     .seq = 8192, .vocab = 1 };
	double f, b;
	profile_flash_s("models/profiles/H100-SXM5.yaml", t, 2, &f, &b);
	ck_assert_msg(fabs((f + b) / 7.4875e-3 - 1) < 1e-3, "%g s against 7.4875 ms", f + b);
}
END_TEST

/* The H200 profile's rates are cudnn-frontend's published H200 run
 * (benchmark/sdpa_benchmark_training/results/h200_919_only_cudnn/
 * llama3.1_20260227_034703.csv, cuDNN 9.19.1): batch 1, 64 heads in 8 KV
 * heads, head dim 128, sequence 8192, causal, BF16: forward 1.708 ms,
 * backward 5.083 ms, each reproduced within 0.1% (the file's TFLOPS are
 * rounded to whole numbers). */
START_TEST(h200_flash_reproduces_cudnn_frontend_8k)
{
	wl_transformer t = { .layers = 1, .hidden = 64 * 128, .heads = 64, .kv_heads = 8,
			     .seq = 8192, .vocab = 1 };
	double f, b;
	profile_flash_s("models/profiles/H200-SXM.yaml", t, 1, &f, &b);
	ck_assert_msg(fabs(f / 1.708e-3 - 1) < 1e-3, "forward %g s against 1.708 ms", f);
	ck_assert_msg(fabs(b / 5.083e-3 - 1) < 1e-3, "backward %g s against 5.083 ms", b);
}
END_TEST

/* Context parallelism as Transformer Engine's ring (cp_ring): a layer's
 * forward and backward take the ring's copies and output corrections
 * (wl_cp_ring_kernels) at the streaming rate, one launch each; llama3-8b
 * at cp 2 moves 4K + 6.5Q forward and 21K + 6.5Q backward, Q = 4096
 * tokens x 4096 x 2 B, K = 4096 x 1024 x 2 B. The all-gather form
 * (cp_ring false) runs no such kernel. */
START_TEST(te_cp_ring_copies_in_the_layer)
{
	wl_transformer t = wl_preset_find("llama3-8b")->model.tf;
	char why[64];
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	gpu_spec h = { .peak_flops = 1979e12, .hbm_Bps = 3.35e12, .eff_max = 0.709, .sms = 132,
		       .tile_m = 256, .tile_n = 128, .attn_flops = 989.5e12,
		       .flash_fwd_flops = 529e12, .flash_bwd_flops = 518e12, .launch_s = 2e-6 };
	wl_split sp = { .tp = 1, .cp = 2, .flash = true };
	double f, b, f2, b2, Q = 4096.0 * 4096 * 2, K = 4096.0 * 1024 * 2;
	gpu_layer_s(&h, &t, 1, &sp, &f, &b);
	sp.cp_ring = true;
	gpu_layer_s(&h, &t, 1, &sp, &f2, &b2);
	ck_assert_double_eq_tol(f2 - f, (4 * K + 6.5 * Q) / 3.35e12 + 4 * 2e-6, 1e-12);
	ck_assert_double_eq_tol(b2 - b, (21 * K + 6.5 * Q) / 3.35e12 + 5 * 2e-6, 1e-12);
	/* attention alone (what the ring's steps hide the exchanges behind) is unchanged */
	double af, ab, af2, ab2;
	gpu_attention_s(&h, &t, 1, &sp, &af2, &ab2);
	sp.cp_ring = false;
	gpu_attention_s(&h, &t, 1, &sp, &af, &ab);
	ck_assert(af == af2 && ab == ab2);
}
END_TEST

/* The token embedding: llama3-8b at tp 1, cp 2 (4,096 tokens a rank):
 * forward the lookup, 4 x 4,096 x 4,096 bytes; backward the vocabulary's
 * dense gradient, 8 x 128,256 x 4,096 bytes, plus the tokens' rows, at
 * the streaming rate, three launches. */
START_TEST(embedding_dense_gradient_time)
{
	wl_transformer t = wl_preset_find("llama3-8b")->model.tf;
	gpu_spec h = { .peak_flops = 1979e12, .hbm_Bps = 3.35e12, .eff_max = 0.709,
		       .launch_s = 2e-6 };
	double f, b, n = 4096.0 * 4096, V = 128256.0 * 4096;
	gpu_embedding_s(&h, &t, 1, &(wl_split){ .tp = 1, .cp = 2 }, &f, &b);
	ck_assert_double_eq_tol(f, 4 * n / 3.35e12 + 2e-6, 1e-15);
	ck_assert_double_eq_tol(b, (8 * V + 4 * n) / 3.35e12 + 3 * 2e-6, 1e-15);
	/* tensor parallelism splits the vocabulary */
	double f4, b4;
	gpu_embedding_s(&h, &t, 1, &(wl_split){ .tp = 4, .cp = 2 }, &f4, &b4);
	ck_assert_double_eq_tol(b4, (8 * V / 4 + 4 * n) / 3.35e12 + 3 * 2e-6, 1e-15);
}
END_TEST

/* FP8 under Transformer Engine: the output layer at logit_flops (BF16), the
 * linear layers' operands cast-transposed to FP8 (wl_layer_fp8_casts). */
START_TEST(fp8_logits_and_casts)
{
	wl_transformer t = { .layers = 1, .hidden = 64, .heads = 4, .seq = 8, .vocab = 100 };
	wl_transformer big = { .layers = 1, .hidden = 8192, .heads = 64, .seq = 4096,
			       .vocab = 128000 };
	char why[64];
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	ck_assert_int_eq(wl_transformer_check(&big, why, sizeof why), 0);
	gpu_spec g = a100;
	double lf, lb, lf2, lb2, f, b, f2, b2;
	gpu_logits_s(&g, &big, 1, &(wl_split){ .tp = 1 }, &lf, &lb);
	g.logit_flops = 156e12;
	gpu_logits_s(&g, &big, 1, &(wl_split){ .tp = 1 }, &lf2, &lb2);
	wl_gemm lg = { .m = 4096, .n = 128000, .k = 8192, .count = 1 };
	lg.flops = 2 * lg.m * lg.n * lg.k;
	double at_peak = lg.flops / (312e12 * 0.869 * gpu_quantization_eff(&g, &lg));
	ck_assert_double_eq_tol(lf2 - lf, at_peak, 1e-12);
	ck_assert_double_eq_tol(lb2 - lb, 2 * at_peak, 1e-12);
	/* with eff_max the FP8 GEMMs' own fraction, the 16-bit output layer
	 * keeps its own (eff16): halving it doubles the GEMM's time */
	double lf3, lb3;
	g.eff16 = 0.869 / 2;
	gpu_logits_s(&g, &big, 1, &(wl_split){ .tp = 1 }, &lf3, &lb3);
	ck_assert_double_eq_tol(lf3 - lf2, at_peak * 2, 1e-12);
	ck_assert_double_eq_tol(lb3 - lb2, 2 * at_peak * 2, 1e-12);
	g.eff_max = 0.5; /* and eff_max no longer moves it */
	gpu_logits_s(&g, &big, 1, &(wl_split){ .tp = 1 }, &lf2, &lb2);
	ck_assert(lf2 == lf3 && lb2 == lb3);
	/* the casts: forward 16x64 (qkv, after the norm: 1 B), 16x32 (proj: 4 B),
	 * 16x64 (up: 1 B), 16x128 (down: 4 B) = 12,288 B; backward 4 B an
	 * element of the output gradients 16 x (96, 64, 128, 64) = 22,528 B */
	g = a100;
	g.mem_Bps = 1e12;
	gpu_layer_s(&g, &t, 2, &(wl_split){ .tp = 2 }, &f, &b);
	g.fp8_cast = true;
	gpu_layer_s(&g, &t, 2, &(wl_split){ .tp = 2 }, &f2, &b2);
	ck_assert_double_eq_tol(f2 - f, 12288 / 1e12, 1e-18);
	ck_assert_double_eq_tol(b2 - b, 22528 / 1e12, 1e-18);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gpu");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, quantization_by_hand);
	tcase_add_test(tc, roofline_picks_the_bound);
	tcase_add_test(tc, optimizer_step_moves_megatron_passes);
	tcase_add_test(tc, memory_bound_work_uses_the_achieved_bandwidth);
	tcase_add_test(tc, layer_is_gemms_plus_kernel_bytes);
	tcase_add_test(tc, unfused_attention_gemms_add_bytes_and_flops);
	tcase_add_test(tc, unfused_attention_reproduces_flashattention2_figure4);
	tcase_add_test(tc, attn_gemm_eff_follows_the_head_dim);
	tcase_add_test(tc, large_layer_stays_below_the_gemm_ceiling);
	tcase_add_test(tc, flash_runs_the_causal_triangle);
	tcase_add_test(tc, flash_at_the_measured_kernel_rates);
	tcase_add_test(tc, h100_flash_reproduces_te_causal_8k);
	tcase_add_test(tc, h200_flash_reproduces_cudnn_frontend_8k);
	tcase_add_test(tc, fp8_logits_and_casts);
	tcase_add_test(tc, te_cp_ring_copies_in_the_layer);
	tcase_add_test(tc, embedding_dense_gradient_time);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
