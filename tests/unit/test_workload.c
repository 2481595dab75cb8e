/* models/workload: parameter counts and FLOPs against published figures. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/workload.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

static wl_transformer shape(const char *name)
{
	const wl_preset *p = wl_preset_find(name);
	char why[128];
	ck_assert_ptr_nonnull(p);
	wl_transformer t = p->model.tf;
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	return t;
}

/* Megatron-LM (SC21) equation 3, written out as the paper prints it. */
static double megatron_eq3(const wl_transformer *t, double B)
{
	double s = t->seq, l = t->layers, h = t->hidden, V = t->vocab;
	return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

START_TEST(iteration_flops_are_megatron_equation_3)
{
	static const char *const rows[] = { "megatron-1.7b", "megatron-18.4b",
					    "megatron-145.6b", "megatron-1008b", "gpt3-175b" };
	static const double batch[] = { 512, 1024, 2304, 3072, 1536 };
	for (int i = 0; i < 5; i++) {
		wl_transformer t = shape(rows[i]);
		double want = megatron_eq3(&t, batch[i]);
		ck_assert_double_eq_tol(wl_iter_flops(&t, batch[i], true) / want, 1.0, 1e-12);
		/* Without recompute: 72 instead of 96 on the layer terms. */
		double s = t.seq, l = t.layers, h = t.hidden, V = t.vocab, B = batch[i];
		double want72 = 72 * B * s * l * h * h * (1 + s / (6 * h)) + 6 * B * s * h * V;
		ck_assert_double_eq_tol(wl_iter_flops(&t, B, false) / want72, 1.0, 1e-12);
	}
}
END_TEST

/* The rates both programs report, by hand for GPT-3 175B on 1,024 GPUs
 * (Megatron-LM's Table 1 row: batch 1536 of 2048 tokens): MFU counts the
 * model's FLOPs without recomputation, TFLOP/s what ran; a vision model
 * has no tokens, no peak gives no MFU, and MFU stays within 0..1. */
START_TEST(rates_by_hand)
{
	wl_model m = { .kind = WL_TRANSFORMER, .tf = shape("gpt3-175b") };
	double run = wl_iter_flops(&m.tf, 1536, true), model = wl_iter_flops(&m.tf, 1536, false);
	wl_iter_run r = { .iter_s = 20, .batch = 1536, .flops_run = run, .gpus = 1024,
			  .peak_flops = 312e12 };
	wl_rates x = wl_rates_of(&m, &r);
	ck_assert_double_eq(x.samples_per_s, 1536 / 20.0);
	ck_assert_double_eq_tol(x.tokens_per_s, 1536 * 2048 / 20.0, 1e-6);
	ck_assert_double_eq_tol(x.tflops_per_gpu, run / 20 / 1024 / 1e12, 1e-9);
	ck_assert_double_eq_tol(x.mfu, model / 20 / 1024 / 312e12, 1e-12);
	ck_assert_double_lt(x.mfu, x.tflops_per_gpu * 1e12 / 312e12);
	ck_assert_double_eq(wl_model_iter_flops(&m, 1536, true), run);
	r.peak_flops = 1e9;
	ck_assert_double_eq(wl_rates_of(&m, &r).mfu, 1);
	r.peak_flops = NAN;
	ck_assert(isnan(wl_rates_of(&m, &r).mfu));
	m = (wl_model){ .kind = WL_VISION, .vis = { .fwd_flops_per_sample = 4e9 } };
	r = (wl_iter_run){ .iter_s = 2, .batch = 256, .flops_run = 3 * 4e9 * 256, .gpus = 8,
			   .peak_flops = 1e15 };
	x = wl_rates_of(&m, &r);
	ck_assert(isnan(x.tokens_per_s));
	ck_assert_double_eq(wl_model_iter_flops(&m, 256, true), 3 * 4e9 * 256);
	ck_assert_double_eq_tol(x.mfu, 3 * 4e9 * 256 / 2 / 8 / 1e15, 1e-15);
}
END_TEST

/* The model names carry their parameter counts (Megatron-LM Table 1;
 * GPT-3 paper). The Llama blocks (no biases, RMSNorm weights only, rotary
 * positions, an untied output layer) give the released checkpoints'
 * totals to the parameter: Llama 2 7B 6,738,415,616 and 70B
 * 68,976,648,192; Llama 3 8B 8,030,261,248 and 70B 70,553,706,496. */
START_TEST(parameter_counts_match_the_names)
{
	static const struct { const char *name; double params, tol; } cases[] = {
		{ "megatron-1.7b", 1.7e9, 0.03 },   { "megatron-18.4b", 18.4e9, 0.01 },
		{ "megatron-145.6b", 145.6e9, 0.01 }, { "megatron-1008b", 1008e9, 0.01 },
		{ "gpt3-175b", 175e9, 0.01 },       { "llama2-7b", 6738415616, 1e-12 },
		{ "llama2-70b", 68976648192, 1e-12 }, { "llama3-8b", 8030261248, 1e-12 },
		{ "llama3-70b", 70553706496, 1e-12 }, { "bert-large", 340e6, 0.03 },
		{ "resnet50", 25.6e6, 1e-9 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const wl_preset *p = wl_preset_find(cases[i].name);
		ck_assert_ptr_nonnull(p);
		wl_model m = p->model;
		if (m.kind == WL_TRANSFORMER) {
			char why[64];
			ck_assert_int_eq(wl_transformer_check(&m.tf, why, sizeof why), 0);
		}
		double got = wl_params(&m);
		ck_assert_msg(fabs(got / cases[i].params - 1) < cases[i].tol,
			      "%s: %.4g parameters, expected %.4g", cases[i].name, got,
			      cases[i].params);
	}
}
END_TEST

START_TEST(gemms_split_with_tensor_parallelism)
{
	wl_transformer t = shape("megatron-18.4b");
	wl_gemm one[WL_LAYER_GEMMS], eight[WL_LAYER_GEMMS];
	wl_layer_gemms(&t, 2, 1, one);
	wl_layer_gemms(&t, 2, 8, eight);
	double sum = 0;
	for (int i = 0; i < WL_LAYER_GEMMS; i++) {
		ck_assert_double_eq_tol(one[i].flops / eight[i].flops, 8.0, 1e-12);
		ck_assert(eight[i].bytes > 0);
		sum += one[i].flops;
	}
	/* 24*b*s*h^2 + 4*b*s^2*h for the GPT shape. */
	double b = 2, s = t.seq, h = t.hidden;
	ck_assert_double_eq_tol(sum / (24 * b * s * h * h + 4 * b * s * s * h), 1.0, 1e-12);
}
END_TEST

START_TEST(activation_bytes_follow_korthikanti)
{
	wl_transformer t = shape("gpt3-175b");
	double sbh = 2048.0 * 1 * 12288;
	/* Table 2 of the paper: sbh(34 + 5as/h) without parallelism,
	 * sbh(10 + 24/t + 5as/(ht)) with tensor parallelism t. */
	ck_assert_double_eq_tol(wl_layer_act_bytes(&t, 1, &(wl_split){ .tp = 1 }) / (sbh * (34 + 5.0 * 96 * 2048 / 12288)),
				1.0, 1e-12);
	ck_assert_double_eq_tol(wl_layer_act_bytes(&t, 1, &(wl_split){ .tp = 8 }) /
				(sbh * (10 + 3 + 5.0 * 96 * 2048 / (12288 * 8))), 1.0, 1e-12);
	ck_assert_double_eq(wl_stage_boundary_bytes(&t, 1), 2 * sbh);
	/* Sequence parallelism (section 4.2.2, Table 2): sbh(34/t + 5as/(ht)). */
	ck_assert_double_eq_tol(wl_layer_act_bytes(&t, 1, &(wl_split){ .tp = 8, .sp = true }) /
				(sbh * (34.0 / 8 + 5.0 * 96 * 2048 / (12288 * 8))), 1.0, 1e-12);
	/* FlashAttention keeps each row's fp32 log-sum-exp, not the scores:
	 * 5as^2b/t becomes 4asb/t. */
	ck_assert_double_eq_tol(wl_layer_act_bytes(&t, 1, &(wl_split){ .tp = 8, .flash = true }) /
				(sbh * (10 + 3) + 4.0 * 96 * 2048 / 8), 1.0, 1e-12);
	/* ... and its GEMMs move Q, K, V and O, never the s x s scores */
	wl_gemm g[WL_LAYER_GEMMS], gf[WL_LAYER_GEMMS];
	wl_layer_gemms_split(&t, 1, &(wl_split){ .tp = 8 }, g);
	wl_layer_gemms_split(&t, 1, &(wl_split){ .tp = 8, .flash = true }, gf);
	ck_assert_double_eq(gf[1].flops, g[1].flops);
	ck_assert_double_eq(gf[1].bytes, 2 * 12.0 * (2048 * 128 + 128 * 2048));
	ck_assert_double_eq(gf[2].bytes, 2 * 12.0 * (2048 * 128 + 2048 * 128));
	/* Context parallelism: each rank keeps s/cp tokens' activations, its
	 * scores s/cp x s: everything divided by cp. */
	ck_assert_double_eq_tol(wl_layer_act_bytes(&t, 1, &(wl_split){ .tp = 8, .cp = 4 }) * 4 /
				wl_layer_act_bytes(&t, 1, &(wl_split){ .tp = 8 }), 1.0, 1e-12);
}
END_TEST

/* Rajbhandari et al., "ZeRO" (SC20), Figure 1: a 7.5B-parameter model on
 * 64 data-parallel GPUs with mixed-precision Adam (K = 12) holds 120 GB of
 * model states per GPU as the baseline, 31.4 GB with optimizer states
 * partitioned, 16.6 GB with gradients too and 1.9 GB with parameters too.
 * A vision model is all parameters, so its states are exactly the paper's. */
START_TEST(model_states_match_zero_figure_1)
{
	const wl_model m = { .kind = WL_VISION, .vis = { .params = 7.5e9 } };
	const double published[4] = { 120e9, 31.4e9, 16.6e9, 1.9e9 };
	for (int z = 0; z < 4; z++) {
		wl_mem_plan p = { .tp = 1, .pp = 1, .dp = 64, .mb = 1, .zero_stage = z };
		wl_memory w;
		wl_gpu_memory(&m, &p, &w);
		double states = w.weights + w.grads + w.optimizer;
		/* the paper prints one decimal: within 0.05 GB, and 1.875 -> 1.9 */
		ck_assert_msg(fabs(states - published[z]) <= 0.051e9, "zero %d: %g", z, states);
		ck_assert_double_eq(w.activations, 0);
		ck_assert_double_eq(w.comm, 4194304.0 * 2); /* one data-parallel communicator */
	}
}
END_TEST

/* Megatron-LM's docs/source/distrib_optimizer.md: bf16 parameters with
 * fp32 gradients hold 18 bytes a parameter, and 6 + 12/d with the
 * optimizer states sharded over d data-parallel ranks (ZeRO 1); fp16
 * gradients the paper's 16. */
START_TEST(fp32_gradients_hold_4_bytes)
{
	const wl_model m = { .kind = WL_VISION, .vis = { .params = 1e9 } };
	wl_mem_plan p = { .tp = 1, .pp = 1, .dp = 8, .mb = 1, .grad_bytes = 4 };
	wl_memory w;
	wl_gpu_memory(&m, &p, &w);
	ck_assert_double_eq_tol(w.weights + w.grads + w.optimizer, 18e9, 1);
	ck_assert_double_eq_tol(w.grads, 4e9, 1);
	p.zero_stage = 1;
	wl_gpu_memory(&m, &p, &w);
	ck_assert_double_eq_tol(w.weights + w.grads + w.optimizer, 6e9 + 12e9 / 8, 1);
	p.grad_bytes = 2, p.zero_stage = 0;
	wl_gpu_memory(&m, &p, &w);
	ck_assert_double_eq_tol(w.weights + w.grads + w.optimizer, 16e9, 1);
}
END_TEST

/* 1F1B: the first stage keeps pp microbatches in flight, the last one;
 * full recomputation keeps each layer's input and one whole layer. GPT-3
 * 175B (96 layers, h 12288, a 96, s 2048) at tp 8 pp 16 mb 1: per layer
 * sbh(10 + 3 + 10) = 23 sbh; stage 0 has 6 layers and 16 in flight. */
START_TEST(activations_under_1f1b_by_hand)
{
	wl_model m = { .kind = WL_TRANSFORMER, .tf = shape("gpt3-175b") };
	double sbh = 2048.0 * 12288;
	wl_mem_plan p = { .tp = 8, .pp = 16, .dp = 8, .mb = 1, .microbatches = 192,
			  .zero_stage = 1, .channels = 8 };
	wl_memory w;
	wl_gpu_memory(&m, &p, &w);
	ck_assert_uint_eq(w.stage, 0);
	ck_assert_double_eq_tol(w.activations / (16 * 6 * 23 * sbh), 1, 1e-12);
	double psi = wl_stage_params(&m, 16, 0) / 8;
	ck_assert_double_eq_tol(w.weights + w.grads + w.optimizer, 4 * psi + 12 * psi / 8, 1);
	ck_assert_double_eq(w.comm, 3 * 8 * 2 * 4194304.0);
	ck_assert_double_eq_tol(w.total, w.weights + w.grads + w.optimizer + w.activations + w.comm,
				1);
	p.recompute = true;
	wl_gpu_memory(&m, &p, &w);
	ck_assert_double_eq_tol(w.activations / (16 * 6 * 2 * sbh + 23 * sbh), 1, 1e-12);
	p.microbatches = 4; /* fewer microbatches than stages: only those are in flight */
	wl_gpu_memory(&m, &p, &w);
	ck_assert_double_eq_tol(w.activations / (4 * 6 * 2 * sbh + 23 * sbh), 1, 1e-12);
}
END_TEST

/* A small layer worked by hand (docs/gpu-kernels.md): h 64, a 4, s 8,
 * b 2, t 2, f 256, kv 128. n = sbh = 1024, q = sb(h+kv)/t = 1536,
 * c = sbh/t = 512, F = sbf/t = 2048, A = b(a/t)s^2 = 256, tau = 9/16,
 * statistics 8sb = 128, P = (12288 + 192 + 4096 + 32768 + 256)/2 + 6*64
 * = 25184 parameters. */
START_TEST(layer_kernel_bytes_by_hand)
{
	wl_transformer t = { .layers = 1, .hidden = 64, .heads = 4, .seq = 8, .vocab = 100 };
	char why[64];
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	static const double fwd[WL_LAYER_FWD_KERNELS][2] = {
		{ 2048, 2176 },	  /* layernorm-1: 2n, 2n + stats */
		{ 3072, 3072 },	  /* qkv-bias-add: 2q, 2q */
		{ 288, 512 },	  /* softmax: 2A*9/16, 2A */
		{ 512, 768 },	  /* attention dropout: 2A, 2A + A mask */
		{ 1024, 1024 },	  /* context transpose: 2c, 2c */
		{ 4096, 3072 },	  /* bias-dropout-add: 4n, 2n + n mask */
		{ 2048, 2176 },	  /* layernorm-2 */
		{ 4096, 4096 },	  /* bias-gelu: 2F, 2F */
		{ 4096, 3072 },	  /* bias-dropout-add-2 */
	};
	static const double bwd[WL_LAYER_BWD_KERNELS][2] = {
		{ 3072, 2048 },	   /* bias-dropout-add-2: grad 2n + mask n, 2n */
		{ 2048, 0 },	   /* mlp-down bias grad */
		{ 8192, 4096 },	   /* bias-gelu: grad 2F + input 2F, 2F */
		{ 4096, 0 },	   /* mlp-up bias grad */
		{ 8320, 2048 },	   /* layernorm-2: two passes 8n + stats, 2n */
		{ 4096, 2048 },	   /* residual gradient sum */
		{ 3072, 2048 },	   /* bias-dropout-add-1 */
		{ 2048, 0 },	   /* proj bias grad */
		{ 1024, 1024 },	   /* context transpose */
		{ 768, 512 },	   /* attention dropout: 2A + A, 2A */
		{ 576, 512 },	   /* softmax: 4A*9/16, 2A */
		{ 3072, 0 },	   /* qkv bias grad */
		{ 8320, 2048 },	   /* layernorm-1 */
		{ 4096, 2048 },	   /* residual gradient sum */
		{ 100736, 50368 }, /* weight gradients: 4P, 2P */
	};
	wl_kernel f[WL_LAYER_FWD_KERNELS], b[WL_LAYER_BWD_KERNELS];
	wl_layer_kernels(&t, 2, &(wl_split){ .tp = 2 }, f, b);
	for (int i = 0; i < WL_LAYER_FWD_KERNELS; i++) {
		ck_assert_msg(f[i].read_bytes == fwd[i][0] && f[i].write_bytes == fwd[i][1],
			      "forward %s: %g %g", f[i].name, f[i].read_bytes, f[i].write_bytes);
	}
	for (int i = 0; i < WL_LAYER_BWD_KERNELS; i++) {
		ck_assert_msg(b[i].read_bytes == bwd[i][0] && b[i].write_bytes == bwd[i][1],
			      "backward %s: %g %g", b[i].name, b[i].read_bytes, b[i].write_bytes);
	}
	ck_assert_str_eq(f[2].name, "scale-mask-softmax");
	/* gradient_accumulation_fusion: the weights accumulate in their
	 * weight-gradient GEMMs; the hook adds the split biases, (192 + 256)/2,
	 * and the replicated 6h: 608 parameters. Nothing else moves. */
	wl_layer_kernels(&t, 2, &(wl_split){ .tp = 2, .wgrad_fused = true }, f, b);
	ck_assert_str_eq(b[14].name, "weight-grad-accumulate");
	ck_assert_double_eq(b[14].read_bytes, 4 * 608);
	ck_assert_double_eq(b[14].write_bytes, 2 * 608);
	for (int i = 0; i < 14; i++)
		ck_assert(b[i].read_bytes == bwd[i][0] && b[i].write_bytes == bwd[i][1]);
	/* The replicated parameters and the split ones add up to the layer. */
	ck_assert_double_eq(wl_layer_params(&t), (100736.0 / 4 - 6 * 64) * 2 + 6 * 64);
	/* Logits: V = 100, L = sbV/t = 800, weights Vh/t = 3200: forward
	 * 4n + stats + 38L, backward 10n + stats + 14L + 6*3200. */
	double lf, lb;
	wl_logit_kernel_bytes(&t, 2, &(wl_split){ .tp = 2 }, &lf, &lb);
	ck_assert_double_eq(lf, 4096 + 128 + 38 * 800);
	ck_assert_double_eq(lb, 10240 + 128 + 14 * 800 + 6 * 3200);
}
END_TEST

/* What tensor parallelism splits and what it replicates. */
START_TEST(kernels_split_inside_parallel_regions_only)
{
	wl_transformer t = shape("megatron-18.4b");
	wl_kernel f1[WL_LAYER_FWD_KERNELS], b1[WL_LAYER_BWD_KERNELS];
	wl_kernel f8[WL_LAYER_FWD_KERNELS], b8[WL_LAYER_BWD_KERNELS];
	wl_layer_kernels(&t, 1, &(wl_split){ .tp = 1 }, f1, b1);
	wl_layer_kernels(&t, 1, &(wl_split){ .tp = 8 }, f8, b8);
	static const int split[] = { 1, 2, 3, 4, 7 }, whole[] = { 0, 5, 6, 8 };
	for (size_t i = 0; i < sizeof split / sizeof split[0]; i++)
		ck_assert_double_eq_tol(f1[split[i]].read_bytes / f8[split[i]].read_bytes, 8, 1e-12);
	for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
		ck_assert_double_eq(f1[whole[i]].write_bytes, f8[whole[i]].write_bytes);
	ck_assert_double_eq_tol(b1[9].write_bytes / b8[9].write_bytes, 8, 1e-12);
	ck_assert_double_eq(b1[12].read_bytes, b8[12].read_bytes);
	/* Sequence parallel: the replicated kernels split by tp as well, the
	 * others unchanged. */
	wl_kernel fs[WL_LAYER_FWD_KERNELS], bs[WL_LAYER_BWD_KERNELS];
	wl_layer_kernels(&t, 1, &(wl_split){ .tp = 8, .sp = true }, fs, bs);
	for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
		ck_assert_double_eq_tol(f8[whole[i]].read_bytes / fs[whole[i]].read_bytes, 8, 1e-12);
	for (size_t i = 0; i < sizeof split / sizeof split[0]; i++)
		ck_assert_double_eq(f8[split[i]].read_bytes, fs[split[i]].read_bytes);
	ck_assert_double_eq_tol(b8[12].read_bytes / bs[12].read_bytes, 8, 1e-12);
	/* SwiGLU: the activation reads both halves of the up projection. */
	wl_transformer sw = shape("llama2-7b");
	wl_layer_kernels(&sw, 1, &(wl_split){ .tp = 1 }, f1, b1);
	ck_assert_str_eq(f1[6].name, "swiglu");
	ck_assert_double_eq(f1[6].read_bytes, 2 * f1[6].write_bytes);
	ck_assert_str_eq(b1[0].name, "swiglu-bwd");
	ck_assert_double_eq(b1[0].write_bytes, 2 * 2.0 * 4096 * 11008);
}
END_TEST

/* A Llama layer (Llama 2 7B: s 4096, h 4096, no GQA, f 11008) at b 1,
 * tp 2: no bias or dropout kernel; RMSNorm writes a 4-byte 1/rms per
 * token and reads gradient, input and 1/rms once backward; RoPE reads and
 * writes the queries and keys (2 x sbh/t elements) forward and backward;
 * the residual adds carry no mask; the weight gradients are the layer's
 * weights without biases: [4h^2 + 3hf]/t + 2h. The same shape as a GPT
 * block keeps its 9 + 15 kernels. */
START_TEST(llama_layer_has_rope_and_no_bias_or_dropout)
{
	wl_transformer t = shape("llama2-7b");
	wl_kernel f[WL_LAYER_FWD_KERNELS], b[WL_LAYER_BWD_KERNELS];
	size_t nf, nb;
	double s = 4096, h = 4096, ff = 11008, n = s * h, sb = s;
	wl_layer_kernels(&t, 1, &(wl_split){ .tp = 2 }, f, b);
	wl_layer_kernel_counts(&t, &nf, &nb);
	ck_assert_uint_eq(nf, 8);
	ck_assert_uint_eq(nb, 9);
	for (size_t i = 0; i < WL_LAYER_FWD_KERNELS; i++) {
		ck_assert(i < nf ? f[i].name != NULL : f[i].name == NULL);
		if (i < nf)
			ck_assert_msg(!strstr(f[i].name, "bias") && !strstr(f[i].name, "dropout") &&
					      !strstr(f[i].name, "layernorm"), "%s", f[i].name);
	}
	for (size_t i = 0; i < WL_LAYER_BWD_KERNELS; i++) {
		ck_assert(i < nb ? b[i].name != NULL : b[i].name == NULL);
		if (i < nb)
			ck_assert_msg(!strstr(b[i].name, "bias") && !strstr(b[i].name, "dropout") &&
					      !strstr(b[i].name, "layernorm"), "%s", b[i].name);
	}
	ck_assert_str_eq(f[0].name, "rmsnorm-1");
	ck_assert_double_eq(f[0].write_bytes, 2 * n + 4 * sb);
	ck_assert_str_eq(f[1].name, "rope");
	ck_assert_double_eq(f[1].read_bytes, 2 * (2 * s * h / 2));
	ck_assert_double_eq(f[1].write_bytes, f[1].read_bytes);
	ck_assert_str_eq(b[5].name, "rope-bwd");
	ck_assert_double_eq(b[5].read_bytes, f[1].read_bytes);
	ck_assert_str_eq(f[4].name, "residual-add-1");
	ck_assert_double_eq(f[4].write_bytes, 2 * n);
	ck_assert_str_eq(b[1].name, "rmsnorm-2-bwd");
	ck_assert_double_eq(b[1].read_bytes, 4 * n + 4 * sb);
	ck_assert_str_eq(b[8].name, "weight-grad-accumulate");
	double P = (4 * h * h + 3 * h * ff) / 2 + 2 * h;
	ck_assert_double_eq_tol(b[8].read_bytes, 4 * P, 1e-6 * P);
	/* fused, the hook adds the two RMSNorm weights alone */
	wl_layer_kernels(&t, 1, &(wl_split){ .tp = 2, .wgrad_fused = true }, f, b);
	ck_assert_double_eq(b[8].read_bytes, 4 * 2 * h);
	ck_assert_double_eq(b[8].write_bytes, 2 * 2 * h);
	/* GQA (Llama 3 8B, 8 of 32 heads): RoPE rotates the queries and the
	 * 8 KV heads' keys, h + h/4 wide */
	wl_transformer t3 = shape("llama3-8b");
	wl_layer_kernels(&t3, 1, &(wl_split){ .tp = 1 }, f, b);
	ck_assert_double_eq(f[1].read_bytes, 2 * 8192 * (4096 + 1024.0));
	/* activations kept: no dropout masks outside (8sbh), only the softmax
	 * output of the unfused scores (2as^2b) */
	double kept = 8 * n + 2 * s * (3 * h) + 2 * n + 2 * 3 * s * ff + 2.0 * 32 * s * s;
	ck_assert_double_eq_tol(wl_layer_act_bytes(&t, 1, &(wl_split){ .tp = 1 }), kept, 1e-9 * kept);
	/* the block, not the widths, decides the list */
	t.block = WL_BLOCK_GPT;
	wl_layer_kernel_counts(&t, &nf, &nb);
	ck_assert_uint_eq(nf, WL_LAYER_FWD_KERNELS);
	ck_assert_uint_eq(nb, WL_LAYER_BWD_KERNELS);
	wl_layer_kernels(&t, 1, &(wl_split){ .tp = 2 }, f, b);
	ck_assert_str_eq(f[1].name, "qkv-bias-add");
}
END_TEST

START_TEST(bad_shapes_are_refused)
{
	char why[128];
	wl_transformer t = { .layers = 2, .hidden = 100, .heads = 3, .seq = 8, .vocab = 10 };
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), SIM_EINVAL);
	ck_assert_str_eq(why, "hidden 100 is not a multiple of heads 3");
	t = (wl_transformer){ .layers = 2, .hidden = 96, .heads = 8, .kv_heads = 3, .seq = 8,
			      .vocab = 10 };
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), SIM_EINVAL);
	t = (wl_transformer){ .layers = 0, .hidden = 96, .heads = 8, .seq = 8, .vocab = 10 };
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), SIM_EINVAL);
	ck_assert_ptr_null(wl_preset_find("gpt-5"));
	ck_assert_uint_gt(wl_preset_count(), 10);
	ck_assert_ptr_null(wl_preset_at(wl_preset_count()));
}
END_TEST

/* Every preset is a shape the loader accepts (gpt3-13b's 5140 from the
 * GPT-3 paper's table was not a multiple of its 40 heads). */
START_TEST(every_preset_is_a_valid_shape)
{
	char why[128];
	for (size_t i = 0; i < wl_preset_count(); i++) {
		wl_model m = wl_preset_at(i)->model;
		if (m.kind != WL_TRANSFORMER)
			continue;
		ck_assert_msg(wl_transformer_check(&m.tf, why, sizeof why) == 0, "%s: %s",
			      wl_preset_at(i)->name, why);
	}
}
END_TEST

/* One GPU's share, summed over every GPU of a tp x pp x dp job, is the
 * whole iteration's FLOPs; stage parameters add up to the model's, less
 * the position embeddings and final norm the stages do not hold, plus the
 * output layer tied to the embedding when it sits on another stage. */
START_TEST(per_gpu_flops_and_stage_params_add_up)
{
	wl_model m = { .kind = WL_TRANSFORMER, .tf = shape("megatron-1.7b") };
	const uint32_t tp = 2, pp = 5, dp = 3, mb = 2, M = 4;
	double sum, params = 0;
	for (int rec = 0; rec < 2; rec++) {
		sum = 0;
		for (uint32_t p = 0; p < pp; p++)
			sum += tp * dp * wl_gpu_iter_flops(&m, mb, M, tp, pp, p, rec);
		ck_assert_double_eq_tol(sum / wl_iter_flops(&m.tf, (double)dp * M * mb, rec), 1.0,
					1e-12);
	}
	ck_assert_uint_eq(wl_stage_layers(&m, pp, 0), 5);
	ck_assert_uint_eq(wl_stage_layers(&m, pp, 4), 4);
	for (uint32_t p = 0; p < pp; p++)
		params += wl_stage_params(&m, pp, p);
	ck_assert_double_eq_tol(params, wl_params(&m) - (double)m.tf.seq * m.tf.hidden -
					2.0 * m.tf.hidden + (double)m.tf.vocab * m.tf.hidden, 1e-3);
	ck_assert_double_eq_tol(wl_stage_params(&m, 1, 0), wl_params(&m) -
				(double)m.tf.seq * m.tf.hidden - 2.0 * m.tf.hidden, 1e-3);
	m = (wl_model){ .kind = WL_VISION, .vis = { .params = 25.6e6, .fwd_flops_per_sample = 7.6e9 } };
	ck_assert_double_eq(wl_gpu_iter_flops(&m, 256, 2, 1, 1, 0, false), 3.0 * 512 * 7.6e9);
	ck_assert_double_eq(wl_stage_params(&m, 1, 0), 25.6e6);
}
END_TEST

/* wl_1f1b_op: every stage runs each microbatch's forward and backward
 * once, a forward before its backward; stage p starts with min(P - p - 1,
 * M) forwards (and at most that many in flight after), then alternates. */
START_TEST(one_f_one_b_order)
{
	const uint32_t P = 4;
	for (uint32_t M = 1; M <= 6; M++)
		for (uint32_t p = 0; p < P; p++) {
			uint32_t warm = P - p - 1 < M ? P - p - 1 : M, f = 0, b = 0;
			for (uint32_t i = 0; i < 2 * M; i++) {
				bool fwd;
				uint32_t m;
				wl_1f1b_op(P, M, p, i, &fwd, &m);
				ck_assert_uint_eq(m, fwd ? f : b);  /* microbatches in order */
				fwd ? f++ : b++;
				ck_assert_uint_le(b, f);
				ck_assert_uint_le(f - b, warm + 1);
				if (i < warm)
					ck_assert(fwd);
			}
			ck_assert_uint_eq(f, M);
			ck_assert_uint_eq(b, M);
		}
}
END_TEST

/* Megatron's interleaved order worked by hand for pp 2, v 2, M 4 (groups
 * of pp = 2 microbatches, each through chunk 0 then chunk 1): rank 0 warms
 * up with 2 (2 - 0 - 1) + (2 - 1) 2 = 4 forwards, rank 1 with 2; F m.c is
 * microbatch m's forward of chunk c, B m.c its backward. */
START_TEST(interleaved_order_by_hand)
{
	static const char *const want[2] = {
		"F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0 ",
		"F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 F3.1 B3.1 B2.0 B3.0 ",
	};
	for (uint32_t p = 0; p < 2; p++) {
		char got[256] = "";
		for (uint32_t i = 0; i < 16; i++) {
			bool fwd;
			uint32_t m, c;
			size_t at = strlen(got);
			wl_interleaved_op(2, 2, 4, p, i, &fwd, &m, &c);
			snprintf(got + at, sizeof got - at, "%c%u.%u ", fwd ? 'F' : 'B', m, c);
		}
		ck_assert_str_eq(got, want[p]);
	}
}
END_TEST

/* Every rank runs each microbatch's forward and backward of each chunk
 * once, the forward first; a chunk sees its microbatches in order both
 * ways; v = 1 is plain 1F1B's order exactly. */
START_TEST(interleaved_order_covers_every_chunk)
{
	for (uint32_t P = 2; P <= 4; P++)
		for (uint32_t v = 1; v <= 3; v++)
			for (uint32_t M = P; M <= 3 * P; M += P)
				for (uint32_t p = 0; p < P; p++) {
					uint32_t f[3] = { 0 }, b[3] = { 0 };
					for (uint32_t i = 0; i < 2 * M * v; i++) {
						bool fwd, pf;
						uint32_t m, c, pm;
						wl_interleaved_op(P, v, M, p, i, &fwd, &m, &c);
						ck_assert_uint_lt(c, v);
						ck_assert_uint_eq(m, fwd ? f[c] : b[c]);
						fwd ? f[c]++ : b[c]++;
						ck_assert_uint_le(b[c], f[c]);
						if (v > 1)
							continue;
						wl_1f1b_op(P, M, p, i, &pf, &pm);
						ck_assert(pf == fwd && pm == m && c == 0);
					}
					for (uint32_t c = 0; c < v; c++)
						ck_assert(f[c] == M && b[c] == M);
				}
}
END_TEST

/* Dependencies run as fast as they allow, each rank taking its ops in the
 * schedule's order (forward of a chunk-microbatch after the virtual stage
 * before it, backward after the one after it, one op at a time per rank,
 * a chunk's forward taking 1 and backward 2 time units, no transfer
 * time): the iteration takes (M v + pp - 1) x 3 units, i.e. the bubble
 * is (pp - 1) / v of a whole stage's forward and backward, Narayanan et
 * al.'s (p - 1) / (m v) bubble fraction. The order cannot deadlock. */
static uint32_t ideal_makespan(uint32_t P, uint32_t v, uint32_t M)
{
	uint32_t V = P * v, next[8] = { 0 }, done_ops = 0, end = 0, free_at[8] = { 0 };
	static uint32_t fdone[8 * 4][64], bdone[8 * 4][64]; /* [virtual stage][m]: end + 1 */
	memset(fdone, 0, sizeof fdone);
	memset(bdone, 0, sizeof bdone);
	while (done_ops < 2 * M * v * P) {
		bool moved = false;
		for (uint32_t p = 0; p < P; p++) {
			bool fwd;
			uint32_t m, c, vs, dep = 0;
			if (next[p] == 2 * M * v)
				continue;
			wl_interleaved_op(P, v, M, p, next[p], &fwd, &m, &c);
			vs = c * P + p;
			if (fwd && vs > 0 && !(dep = fdone[vs - 1][m]))
				continue;
			if (!fwd && vs + 1 < V && !(dep = bdone[vs + 1][m]))
				continue;
			if (!fwd && vs + 1 == V && !(dep = fdone[vs][m]))
				continue;
			uint32_t ready = dep ? dep - 1 : 0;
			uint32_t start = free_at[p] > ready ? free_at[p] : ready;
			free_at[p] = start + (fwd ? 1 : 2);
			(fwd ? fdone : bdone)[vs][m] = free_at[p] + 1;
			end = free_at[p] > end ? free_at[p] : end;
			next[p]++, done_ops++, moved = true;
		}
		ck_assert_msg(moved, "deadlock at P %u v %u M %u", P, v, M);
	}
	return end;
}

START_TEST(interleaved_bubble_shrinks_by_v)
{
	for (uint32_t P = 2; P <= 8; P *= 2)
		for (uint32_t v = 1; v <= 4; v++)
			for (uint32_t M = P; M <= 4 * P && M <= 64; M += P)
				ck_assert_uint_eq(ideal_makespan(P, v, M), (M * v + P - 1) * 3);
}
END_TEST

/* Activations in flight under the interleaved schedule: the first stage
 * keeps 1 + (pp - 1) / (pp v) times what it keeps under plain 1F1B
 * (Korthikanti et al., MLSys 2023, section 4.2.3); the last stage
 * (v - 1) pp + 1 chunk-microbatches, each of layers / (pp v) layers. */
START_TEST(interleaved_activations_follow_korthikanti)
{
	wl_model m = { .kind = WL_TRANSFORMER, .tf = shape("gpt3-175b") };
	wl_mem_plan p = { .tp = 8, .pp = 16, .dp = 8, .mb = 1, .microbatches = 192 };
	wl_memory plain, inter;
	wl_gpu_memory(&m, &p, &plain);
	p.vp = 3;
	wl_gpu_memory(&m, &p, &inter);
	ck_assert_uint_eq(inter.stage, 0);
	ck_assert_double_eq_tol(inter.activations / plain.activations, 1 + 15.0 / (16 * 3), 1e-12);
	ck_assert_uint_eq(wl_pipe_inflight(16, 3, 192, 15), 2 * 16 + 1);
	ck_assert_uint_eq(wl_pipe_inflight(16, 3, 16, 0), 48); /* all in warm-up */
	ck_assert_uint_eq(wl_pipe_inflight(16, 1, 192, 3), 13);
	/* the warm-up itself: 2 (pp - p - 1) + (v - 1) pp, pp - p - 1 under
	 * plain 1F1B, at most every chunk-microbatch */
	ck_assert_uint_eq(wl_pipe_warmup(16, 3, 192, 15), 2 * 16);
	ck_assert_uint_eq(wl_pipe_warmup(8, 2, 32, 0), 2 * 7 + 8);
	ck_assert_uint_eq(wl_pipe_warmup(4, 4, 4, 0), 16);
	ck_assert_uint_eq(wl_pipe_warmup(16, 1, 192, 3), 12);
}
END_TEST

/* The by-hand layer of the FP8, ring and embedding tests: h 64, 4 heads of
 * which 2 KV, SwiGLU FFN 96, s 8, vocabulary 100; checked valid. */
static wl_transformer small_swiglu_gqa(void)
{
	wl_transformer t = { .layers = 1, .hidden = 64, .heads = 4, .kv_heads = 2, .ffn = 96,
			     .ffn_mats = 3, .seq = 8, .vocab = 100 };
	char why[64];
	ck_assert_int_eq(wl_transformer_check(&t, why, sizeof why), 0);
	return t;
}

/* FP8 operand casts (Transformer Engine) of a SwiGLU/GQA layer by hand:
 * h 64, 4 heads of which 2 KV (kv width 64), ffn 96, s 8, mb 2, tp 2:
 * m = 16 tokens. Forward: qkv's input 16x64 at 1 B (transpose after the
 * norm's FP8 output), proj's 16x32 at 4 B, up's 16x64 at 1 B, down's 16x48
 * at 4 B. Backward: output gradients 16x64 (qkv: (64+64)/2), 16x64, 16x96
 * (two up-projections of 48), 16x64, 4 B each. */
START_TEST(fp8_cast_bytes_by_hand)
{
	wl_transformer t = small_swiglu_gqa();
	wl_kernel f[WL_LAYER_FP8_CASTS], b[WL_LAYER_FP8_CASTS];
	static const double fwd[WL_LAYER_FP8_CASTS] = { 1024, 2048, 1024, 3072 };
	static const double bwd[WL_LAYER_FP8_CASTS] = { 4096, 4096, 6144, 4096 };
	wl_layer_fp8_casts(&t, 2, &(wl_split){ .tp = 2, .cp = 1 }, f, b);
	for (int i = 0; i < WL_LAYER_FP8_CASTS; i++) {
		ck_assert_double_eq(f[i].read_bytes + f[i].write_bytes, fwd[i]);
		ck_assert_double_eq(b[i].read_bytes, bwd[i] / 2);
		ck_assert_double_eq(b[i].write_bytes, bwd[i] / 2);
		ck_assert_ptr_nonnull(strstr(b[i].name, "fp8"));
	}
	/* context parallelism halves the tokens, and every byte with them */
	wl_kernel f2[WL_LAYER_FP8_CASTS], b2[WL_LAYER_FP8_CASTS];
	wl_layer_fp8_casts(&t, 2, &(wl_split){ .tp = 2, .cp = 2 }, f2, b2);
	ck_assert_double_eq(f2[3].read_bytes * 2, f[3].read_bytes);
	ck_assert_double_eq(b2[2].write_bytes * 2, b[2].write_bytes);
}
END_TEST

/* Transformer Engine's context-parallel ring (AttnFuncWithCP at 7d576ed2)
 * on rank 0, by hand: h 64, 4 heads of which 2 KV, s 8, mb 2, tp 2, cp 2:
 * 8 tokens a rank, Q = 8 x 64 / 2 x 2 B = 512 B, K = 8 x 32 / 2 x 2 B =
 * 256 B. Forward: K, V concatenated 512 + 512; the queries' second half
 * 256 + 256; the output zeroed 0 + 512; two corrections (diagonal 3Q, half
 * 1.5Q) 1536 + 768: 4K + 6.5Q. Backward: the buffer copy 512 + 512; q,
 * out, dout halves 768 + 768; dq copied (Q/2) then half copied, half
 * added 1024 + 768; dk, dv concatenated twice 1024 + 1024; dkv copied,
 * then half added, half copied 1280 + 1024: 21K + 6.5Q. At cp 4 (three
 * off-diagonal steps) 4K + 11.5Q and 41K + 15.5Q. None without the ring. */
START_TEST(cp_ring_copies_by_hand)
{
	wl_transformer t = small_swiglu_gqa();
	wl_kernel f[WL_CP_RING_FWD_KERNELS], b[WL_CP_RING_BWD_KERNELS];
	static const double fr[] = { 512, 256, 0, 1536 }, fw[] = { 512, 256, 512, 768 };
	static const double br[] = { 512, 768, 1024, 1024, 1280 };
	static const double bw[] = { 512, 768, 768, 1024, 1024 };
	wl_split sp = { .tp = 2, .cp = 2, .flash = true, .cp_ring = true };
	wl_cp_ring_kernels(&t, 2, &sp, f, b);
	for (int i = 0; i < WL_CP_RING_FWD_KERNELS; i++) {
		ck_assert_double_eq(f[i].read_bytes, fr[i]);
		ck_assert_double_eq(f[i].write_bytes, fw[i]);
		ck_assert_ptr_nonnull(strstr(f[i].name, "cp-"));
	}
	for (int i = 0; i < WL_CP_RING_BWD_KERNELS; i++) {
		ck_assert_double_eq(b[i].read_bytes, br[i]);
		ck_assert_double_eq(b[i].write_bytes, bw[i]);
		ck_assert_ptr_nonnull(strstr(b[i].name, "cp-"));
	}
	/* cp 4 over s 16: still 8 tokens a rank, so the same Q and K */
	double tf = 0, tb = 0, Q = 512, K = 256;
	t.seq = 16, sp.cp = 4;
	wl_cp_ring_kernels(&t, 2, &sp, f, b);
	for (int i = 0; i < WL_CP_RING_FWD_KERNELS; i++)
		tf += f[i].read_bytes + f[i].write_bytes;
	for (int i = 0; i < WL_CP_RING_BWD_KERNELS; i++)
		tb += b[i].read_bytes + b[i].write_bytes;
	ck_assert_double_eq(tf, 4 * K + 11.5 * Q);
	ck_assert_double_eq(tb, 41 * K + 15.5 * Q);
	/* no ring: cp 1, unfused attention, or the all-gather context parallelism */
	wl_split none[] = { { .tp = 2, .cp = 1, .flash = true, .cp_ring = true },
			    { .tp = 2, .cp = 4, .flash = false, .cp_ring = true },
			    { .tp = 2, .cp = 4, .flash = true, .cp_ring = false } };
	for (size_t j = 0; j < sizeof none / sizeof none[0]; j++) {
		wl_cp_ring_kernels(&t, 2, &none[j], f, b);
		for (int i = 0; i < WL_CP_RING_FWD_KERNELS; i++)
			ck_assert(!f[i].name && f[i].read_bytes == 0 && f[i].write_bytes == 0);
		for (int i = 0; i < WL_CP_RING_BWD_KERNELS; i++)
			ck_assert(!b[i].name && b[i].read_bytes == 0 && b[i].write_bytes == 0);
	}
}
END_TEST

/* The token embedding by hand: h 64, vocab 100, s 8, mb 2, tp 2, cp 2:
 * 8 tokens a rank, 512 elements; the weight's partition 50 x 64 = 3,200.
 * Forward the lookup 2 + 2 bytes a token element: 2,048. Backward the
 * dense gradient zeroed (2 x 3,200), the tokens' rows scattered into it
 * (2,048) and added into the gradient buffer (6 x 3,200): 27,648. */
START_TEST(embedding_gradient_by_hand)
{
	wl_transformer t = small_swiglu_gqa();
	double f, b;
	wl_embedding_kernel_bytes(&t, 2, &(wl_split){ .tp = 2, .cp = 2 }, &f, &b);
	ck_assert_double_eq(f, 2048);
	ck_assert_double_eq(b, 27648);
	/* the dense gradient is the vocabulary's, whatever the tokens */
	wl_embedding_kernel_bytes(&t, 4, &(wl_split){ .tp = 2, .cp = 2 }, &f, &b);
	ck_assert_double_eq(f, 4096);
	ck_assert_double_eq(b, 8 * 3200 + 4096);
}
END_TEST

/* The interleaving check the loader, the training model and plan share:
 * each fault alone, and together; v 1 always runs. And the context split
 * of the sequence into 2 cp pieces. */
START_TEST(interleave_and_context_checks)
{
	wl_model m = { .kind = WL_TRANSFORMER, .tf = { .layers = 32, .seq = 4096 } };
	ck_assert_uint_eq(wl_interleave_faults(&m, 1, 1, 3), 0);
	ck_assert_uint_eq(wl_interleave_faults(&m, 4, 8, 4), 0);   /* 1 layer a chunk */
	ck_assert_uint_eq(wl_interleave_faults(&m, 1, 2, 4), WL_VP_NO_PIPELINE);
	ck_assert_uint_eq(wl_interleave_faults(&m, 4, 16, 4), WL_VP_LAYERS);
	ck_assert_uint_eq(wl_interleave_faults(&m, 2, 3, 4), WL_VP_LAYERS);
	ck_assert_uint_eq(wl_interleave_faults(&m, 4, 2, 6), WL_VP_MICROBATCHES);
	ck_assert_uint_eq(wl_interleave_faults(&m, 4, 16, 6), WL_VP_LAYERS | WL_VP_MICROBATCHES);
	ck_assert(wl_cp_splits_seq(&m.tf, 1));
	ck_assert(wl_cp_splits_seq(&m.tf, 2048));
	ck_assert(!wl_cp_splits_seq(&m.tf, 4096));
	ck_assert(!wl_cp_splits_seq(&m.tf, 3));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("workload");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, iteration_flops_are_megatron_equation_3);
	tcase_add_test(tc, rates_by_hand);
	tcase_add_test(tc, parameter_counts_match_the_names);
	tcase_add_test(tc, gemms_split_with_tensor_parallelism);
	tcase_add_test(tc, activation_bytes_follow_korthikanti);
	tcase_add_test(tc, model_states_match_zero_figure_1);
	tcase_add_test(tc, fp32_gradients_hold_4_bytes);
	tcase_add_test(tc, activations_under_1f1b_by_hand);
	tcase_add_test(tc, layer_kernel_bytes_by_hand);
	tcase_add_test(tc, fp8_cast_bytes_by_hand);
	tcase_add_test(tc, kernels_split_inside_parallel_regions_only);
	tcase_add_test(tc, llama_layer_has_rope_and_no_bias_or_dropout);
	tcase_add_test(tc, bad_shapes_are_refused);
	tcase_add_test(tc, every_preset_is_a_valid_shape);
	tcase_add_test(tc, per_gpu_flops_and_stage_params_add_up);
	tcase_add_test(tc, one_f_one_b_order);
	tcase_add_test(tc, interleaved_order_by_hand);
	tcase_add_test(tc, interleaved_order_covers_every_chunk);
	tcase_add_test(tc, interleaved_bubble_shrinks_by_v);
	tcase_add_test(tc, interleaved_activations_follow_korthikanti);
	tcase_add_test(tc, interleave_and_context_checks);
	tcase_add_test(tc, cp_ring_copies_by_hand);
	tcase_add_test(tc, embedding_gradient_by_hand);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
