/* GPU compute time: a roofline (peak FLOP/s at the training precision,
 * HBM bandwidth) with the best achieved fraction of peak on large GEMMs,
 * and tile/wave quantization for the shapes a layer really runs. */
#ifndef DPUSIM_MODELS_GPU_H
#define DPUSIM_MODELS_GPU_H

#include <stdbool.h>
#include <stdint.h>

#include "models/workload.h"

typedef struct gpu_spec {
	double peak_flops;   /* dense, at the training precision */
	double hbm_Bps;      /* datasheet peak */
	double mem_Bps;      /* achievable by streaming kernels; 0: hbm_Bps */
	double eff_max;      /* best achieved fraction of peak, large GEMMs */
	uint32_t sms;        /* streaming multiprocessors; 0: no quantization */
	double tile_m, tile_n; /* output tile of one thread block */
	double launch_s;     /* per kernel; 0 where no published figure exists */
	double opt_bytes;    /* HBM bytes an optimizer step moves per parameter held
			      * (gpu_optimizer_bytes at the training precision) */
	double attn_flops;   /* peak of attention's score and value GEMMs; 0: peak_flops */
	double attn_gemm_eff_d64, attn_gemm_eff_d128; /* unfused attention's score and
			      * value GEMMs: their FLOPs at this fraction of that peak,
			      * measured at head dims 64 and 128 (gpu_attn_gemm_eff),
			      * added to their bytes at gpu_mem_Bps (not the larger of
			      * the two); both 0: the roofline */
	double logit_flops;  /* peak of the output layer's GEMM; 0: peak_flops */
	double eff16;        /* best achieved fraction of attn_flops and logit_flops where
			      * those are given (FP8 jobs: the 16-bit GEMMs, eff_max being
			      * the FP8 GEMMs'); 0: eff_max */
	bool fp8_cast;       /* the linear layers' GEMMs take FP8 operands that
			      * cast-transpose kernels make (wl_layer_fp8_casts) */
	double flash_fwd_flops, flash_bwd_flops; /* measured throughput of the fused
			      * causal attention kernel at head dim GPU_FLASH_HEAD_DIM,
			      * FLOPs counted as FlashAttention's benchmarks count them;
			      * 0: attention runs as GEMMs (attn_flops, eff_max) */
} gpu_spec;

/* The head dimension the profile's flash_*_flops were measured at
 * (Shah et al., "FlashAttention-3", 2024, figures 5 and 6: head dims 64,
 * 128 and 256 run at different rates, so one figure holds for its own). */
#define GPU_FLASH_HEAD_DIM 128

/* NVIDIA, "Matrix Multiplication Background User's Guide" (Deep Learning
 * Performance documentation), sections on tile and wave quantization: its
 * examples use 256 x 128 output tiles, the largest cuBLAS uses on
 * Ampere/Hopper tensor cores. */
#define GPU_TILE_M 256.0
#define GPU_TILE_N 128.0

/* Fraction of the SMs' tile slots doing useful work for this GEMM, with
 * the one large tile (cuBLAS picks smaller tiles for GEMMs that cannot
 * fill the GPU, so this is pessimistic for those; a training layer's GEMMs
 * have m = microbatch * sequence >= 512 and fill it):
 * m*n*count / (waves * sms * tile_m * tile_n), waves = ceil(tiles / sms).
 * 1 when sms is 0. */
double gpu_quantization_eff(const gpu_spec *g, const wl_gemm *gm);

/* Bandwidth memory-bound work gets: mem_Bps, or hbm_Bps where it is 0. */
double gpu_mem_Bps(const gpu_spec *g);

/* Head dims at which a profile measures unfused attention's GEMM rate. */
#define GPU_ATTN_D_LO 64
#define GPU_ATTN_D_HI 128

/* Fraction of the attention peak at which unfused attention's score and
 * value GEMMs run their arithmetic at head dim d: attn_gemm_eff_d64 and
 * _d128 interpolated linearly in d between 64 and 128, held at the nearer
 * one outside, the one given where only one is; 0 where neither is. */
double gpu_attn_gemm_eff(const gpu_spec *g, double d);

/* Time of one GEMM: the larger of its compute time at
 * peak * eff_max * quantization and its memory time (gpu_mem_Bps), plus
 * launch. */
double gpu_gemm_s(const gpu_spec *g, const wl_gemm *gm);

/* gpu_gemm_s at another peak (attn_flops, logit_flops) for the share
 * (0..1] of its FLOPs the kernel really runs (FlashAttention's causal
 * block skipping). */
double gpu_gemm_at_s(const gpu_spec *g, const wl_gemm *gm, double peak_flops, double share);

/* Time of memory-bound work moving `bytes` through HBM, plus launch. */
double gpu_mem_s(const gpu_spec *g, double bytes);

/* Time of one memory-bound kernel: its read and written bytes, plus launch. */
double gpu_kernel_s(const gpu_spec *g, const wl_kernel *k);

/* Forward and backward time of one transformer layer for a microbatch of
 * mb sequences split as sp (tensor parallel tp ways, sequence parallel,
 * context parallel cp ways): its GEMMs (backward: each twice, input and
 * weight gradients) and its memory-bound kernels, each with the bytes it
 * reads and writes (wl_layer_kernels). The attention GEMMs run at
 * attn_flops; with FlashAttention (sp->flash) only the causal triangle's
 * share (s+1)/(2s) of their FLOPs (Dao, "FlashAttention-2", 2023, section
 * 3.1.1: blocks above the diagonal are skipped), and its backward
 * recomputes the scores. With fp8_cast the linear layers' operands are
 * cast to FP8 as well (wl_layer_fp8_casts). Where the profile gives the
 * fused attention kernel's measured throughput (flash_fwd_flops,
 * flash_bwd_flops) and the layer's head dimension is the one measured,
 * FlashAttention takes its causal FLOPs at those rates instead: forward
 * the scores and values GEMMs' causal share, backward 2.5 times that (its
 * two gradients of each and the recomputed scores: the count
 * FlashAttention's benchmarks use). Tensor- and context-parallel
 * communication is not included. */
void gpu_layer_s(const gpu_spec *g, const wl_transformer *t, uint32_t mb, const wl_split *sp,
		 double *fwd_s, double *bwd_s);

/* The linear GEMMs of a layer (wl_layer_gemms_split's qkv, proj, mlp-up,
 * mlp-down, GPU_LINEAR order), each's forward time on all the GPU's SMs
 * (gpu_gemm_s: its backward runs it twice, input and weight gradients)
 * into all[], and on `sms_off` fewer SMs into cut[] (the GPU's peak
 * scaled by the SMs left, its quantization over them): Transformer
 * Engine's userbuffers with set_sm_margin launch the GEMM on the SMs its
 * communication kernel does not hold (comm_gemm_overlap.cpp: _math_sms =
 * sm_count - num_comm_sm). cut[] is all[] where sms_off is 0 or the
 * profile gives no SM count. */
/* Forward and backward time of a layer's attention core (the scores and
 * values, as gpu_layer_s times them: the fused kernel's measured rates,
 * or the two GEMMs, their backward twice and FlashAttention's
 * recomputed scores), without the memory-bound kernels around it. */
void gpu_attention_s(const gpu_spec *g, const wl_transformer *t, uint32_t mb, const wl_split *sp,
		     double *fwd_s, double *bwd_s);

enum { GPU_LINEAR_QKV, GPU_LINEAR_PROJ, GPU_LINEAR_FC1, GPU_LINEAR_FC2, GPU_LINEAR_N };
void gpu_linear_gemms_s(const gpu_spec *g, const wl_transformer *t, uint32_t mb,
			const wl_split *sp, uint32_t sms_off, double all[GPU_LINEAR_N],
			double cut[GPU_LINEAR_N]);

/* Forward and backward time of the output layer (logits, vocab-parallel):
 * its GEMM at logit_flops (backward twice) and the final layer norm, fp32 cross-entropy
 * and weight-gradient accumulation (wl_logit_kernel_bytes). */
void gpu_logits_s(const gpu_spec *g, const wl_transformer *t, uint32_t mb, const wl_split *sp,
		  double *fwd_s, double *bwd_s);

/* Forward and backward time of the token embedding on the first stage
 * (wl_embedding_kernel_bytes): the lookup, and the dense weight gradient
 * zeroed, scattered into and accumulated, each a memory-bound kernel. */
void gpu_embedding_s(const gpu_spec *g, const wl_transformer *t, uint32_t mb,
		     const wl_split *sp, double *fwd_s, double *bwd_s);

/* HBM bytes per parameter of one optimizer step as Megatron-LM runs it
 * (megatron/optimizer/optimizer.py, Float16OptimizerWithFloat16Params.step
 * of 2021, with apex's FusedAdam): the gradient-norm pass of clipping reads
 * the fp32 gradient (4); Adam reads master weight, gradient, m and v (16)
 * and writes master, m and v (12). With 16- or 8-bit weights
 * (master_copy) the step also copies the fp32 masters back to the model's
 * 16-bit weights (_copy_main_params_to_model_params: 4 + 2). With fp16's
 * loss scaling (loss_scaled) the gradients are 16-bit and are first copied
 * to fp32 (_copy_model_grads_to_main_grads, main_grad.float(): 2 + 4) and
 * then unscaled and checked for inf/nan in place
 * (_unscale_main_grads_and_check_for_nan: 4 + 4); bf16 accumulates its
 * gradients in fp32 and runs without a scaler, so neither pass moves a
 * byte. fp32: 32, bf16/fp8: 38, fp16: 52. The clipping's scaling pass
 * (4 + 4, only when the norm exceeds the threshold) is not counted. */
double gpu_optimizer_bytes(bool master_copy, bool loss_scaled);

/* Optimizer step over `params` parameters held by this GPU: memory-bound,
 * g->opt_bytes per parameter. */
double gpu_optimizer_s(const gpu_spec *g, double params);

#endif
