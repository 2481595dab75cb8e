/* GPU roofline with quantization. */
#include "models/gpu.h"

#include <math.h>

double gpu_quantization_eff(const gpu_spec *g, const wl_gemm *gm)
{
	double tm = g->tile_m > 0 ? g->tile_m : GPU_TILE_M;
	double tn = g->tile_n > 0 ? g->tile_n : GPU_TILE_N;
	double tiles, waves;
	if (!g->sms || gm->flops <= 0)
		return 1.0;
	tiles = ceil(gm->m / tm) * ceil(gm->n / tn) * gm->count;
	waves = ceil(tiles / g->sms);
	return gm->m * gm->n * gm->count / (waves * g->sms * tm * tn);
}

double gpu_mem_Bps(const gpu_spec *g)
{
	return g->mem_Bps > 0 ? g->mem_Bps : g->hbm_Bps;
}

/* One GEMM at peak_flops x eff x quantization (share of its FLOPs) or
 * its memory time, whichever is longer, plus launch. */
static double gemm_s(const gpu_spec *g, const wl_gemm *gm, double peak_flops, double eff,
		     double share)
{
	double compute = share * gm->flops / (peak_flops * eff * gpu_quantization_eff(g, gm));
	double memory = gm->bytes / gpu_mem_Bps(g);
	return (compute > memory ? compute : memory) + g->launch_s;
}

double gpu_gemm_at_s(const gpu_spec *g, const wl_gemm *gm, double peak_flops, double share)
{
	return gemm_s(g, gm, peak_flops, g->eff_max, share);
}

double gpu_gemm_s(const gpu_spec *g, const wl_gemm *gm)
{
	return gpu_gemm_at_s(g, gm, g->peak_flops, 1.0);
}

/* A GEMM at one of the profile's other peaks (attn_flops, logit_flops):
 * at that peak and its own efficiency (eff16) where the peak is given, at
 * the training peak and eff_max where it is 0. */
static double other_peak_s(const gpu_spec *g, const wl_gemm *gm, double flops, double share)
{
	if (!(flops > 0))
		return gemm_s(g, gm, g->peak_flops, g->eff_max, share);
	return gemm_s(g, gm, flops, g->eff16 > 0 ? g->eff16 : g->eff_max, share);
}

/* The rate is measured at two head dims only (FlashAttention-2's figure
 * 4 at 64 and 128: 30.0% and 46.8% on the A100, the score GEMMs' k and
 * the other four's n being the head dim); a line between them is the
 * least the two points say, and beyond them nothing is measured, so the
 * nearer one is held rather than the line extended. */
double gpu_attn_gemm_eff(const gpu_spec *g, double d)
{
	double lo = g->attn_gemm_eff_d64 > 0 ? g->attn_gemm_eff_d64 : 0;
	double hi = g->attn_gemm_eff_d128 > 0 ? g->attn_gemm_eff_d128 : 0;
	if (!(lo > 0) || !(hi > 0))
		return lo > 0 ? lo : hi;
	if (d <= GPU_ATTN_D_LO)
		return lo;
	if (d >= GPU_ATTN_D_HI)
		return hi;
	return lo + (hi - lo) * (d - GPU_ATTN_D_LO) / (GPU_ATTN_D_HI - GPU_ATTN_D_LO);
}

/* Attention GEMM i (1: scores, 2: values) of a layer. Unfused, where the
 * profile measures it (attn_gemm_eff_d64/_d128), its bytes at the
 * streaming rate plus its FLOPs at that fraction of the attention peak at
 * the model's head dim: these batched GEMMs, k or n the head dim, do not
 * hide one behind the other (Dao, "FlashAttention-2", 2023, figure 4:
 * PyTorch's standard attention on the A100 80GB at head dims 64 and 128;
 * docs/gpu-kernels.md). */
static double attn_gemm_s(const gpu_spec *g, const wl_transformer *t, const wl_split *sp,
			  const wl_gemm *gm)
{
	double peak = g->attn_flops > 0 ? g->attn_flops : g->peak_flops;
	if (sp->flash)
		return other_peak_s(g, gm, g->attn_flops, (t->seq + 1.0) / (2.0 * t->seq));
	double eff = gpu_attn_gemm_eff(g, (double)t->hidden / t->heads);
	if (!(eff > 0))
		return other_peak_s(g, gm, g->attn_flops, 1.0);
	return gm->bytes / gpu_mem_Bps(g) + gm->flops / (peak * eff) + g->launch_s;
}

double gpu_mem_s(const gpu_spec *g, double bytes)
{
	return bytes / gpu_mem_Bps(g) + g->launch_s;
}

double gpu_kernel_s(const gpu_spec *g, const wl_kernel *k)
{
	return gpu_mem_s(g, k->read_bytes + k->write_bytes);
}

/* Whether attention runs at the profile's measured fused-kernel rates:
 * FlashAttention, both rates given, the head dimension they were measured at. */
static bool flash_measured(const gpu_spec *g, const wl_transformer *t, const wl_split *sp)
{
	return sp->flash && g->flash_fwd_flops > 0 && g->flash_bwd_flops > 0 &&
	       t->heads && t->hidden == (uint64_t)GPU_FLASH_HEAD_DIM * t->heads;
}

/* The GEMMs' forward time of a layer (*gemms, summed in their order) and
 * what its attention adds beyond that to the backward's twice those GEMMs
 * (*attn_extra_bwd): the scores' recomputation under FlashAttention. With
 * the fused kernel's measured rates (flash_measured) the attention GEMMs
 * leave *gemms and take their own time forward (*attn_f) and backward
 * (*attn_b); otherwise those are 0. */
static void layer_gemms_s(const gpu_spec *g, const wl_transformer *t, const wl_split *sp,
			  const wl_gemm gm[WL_LAYER_GEMMS], double *gemms, double *attn_f,
			  double *attn_b, double *attn_extra_bwd)
{
	bool fused = flash_measured(g, t, sp);
	*gemms = *attn_f = *attn_b = *attn_extra_bwd = 0;
	for (int i = 0; i < WL_LAYER_GEMMS; i++)
		if (i != 1 && i != 2)
			*gemms += gpu_gemm_s(g, &gm[i]);
		else if (!fused)
			*gemms += attn_gemm_s(g, t, sp, &gm[i]);
	if (fused) {
		double causal = (t->seq + 1.0) / (2.0 * t->seq) * (gm[1].flops + gm[2].flops);
		*attn_f = causal / g->flash_fwd_flops + g->launch_s;
		*attn_b = 2.5 * causal / g->flash_bwd_flops + g->launch_s;
	} else if (sp->flash) { /* its backward recomputes the scores (Dao et al., 2022,
				 * algorithm 4) */
		*attn_extra_bwd = attn_gemm_s(g, t, sp, &gm[1]);
	}
}

void gpu_layer_s(const gpu_spec *g, const wl_transformer *t, uint32_t mb, const wl_split *sp,
		 double *fwd_s, double *bwd_s)
{
	wl_gemm gm[WL_LAYER_GEMMS];
	wl_kernel fk[WL_LAYER_FWD_KERNELS], bk[WL_LAYER_BWD_KERNELS];
	wl_kernel cf[WL_LAYER_FP8_CASTS], cb[WL_LAYER_FP8_CASTS];
	double gemms, fwd = 0, bwd = 0, attn_f, attn_b, extra;
	wl_layer_gemms_split(t, mb, sp, gm);
	wl_layer_kernels(t, mb, sp, fk, bk);
	layer_gemms_s(g, t, sp, gm, &gemms, &attn_f, &attn_b, &extra);
	if (g->fp8_cast) {
		wl_layer_fp8_casts(t, mb, sp, cf, cb);
		for (int i = 0; i < WL_LAYER_FP8_CASTS; i++)
			fwd += gpu_kernel_s(g, &cf[i]), bwd += gpu_kernel_s(g, &cb[i]);
	}
	wl_kernel rf[WL_CP_RING_FWD_KERNELS], rb[WL_CP_RING_BWD_KERNELS];
	wl_cp_ring_kernels(t, mb, sp, rf, rb);
	for (int i = 0; i < WL_CP_RING_FWD_KERNELS; i++)
		fwd += rf[i].name ? gpu_kernel_s(g, &rf[i]) : 0;
	for (int i = 0; i < WL_CP_RING_BWD_KERNELS; i++)
		bwd += rb[i].name ? gpu_kernel_s(g, &rb[i]) : 0;
	size_t nf, nb;
	wl_layer_kernel_counts(t, &nf, &nb);
	for (size_t i = 0; i < nf; i++)
		fwd += gpu_kernel_s(g, &fk[i]);
	for (size_t i = 0; i < nb; i++)
		bwd += gpu_kernel_s(g, &bk[i]);
	*fwd_s = gemms + fwd + attn_f;
	*bwd_s = 2 * gemms + bwd + attn_b;
	if (extra > 0)
		*bwd_s += extra;
}

void gpu_attention_s(const gpu_spec *g, const wl_transformer *t, uint32_t mb, const wl_split *sp,
		     double *fwd_s, double *bwd_s)
{
	wl_gemm gm[WL_LAYER_GEMMS];
	double gemms, attn_f, attn_b, extra;
	wl_layer_gemms_split(t, mb, sp, gm);
	layer_gemms_s(g, t, sp, gm, &gemms, &attn_f, &attn_b, &extra);
	if (flash_measured(g, t, sp)) {
		*fwd_s = attn_f, *bwd_s = attn_b;
		return;
	}
	*fwd_s = attn_gemm_s(g, t, sp, &gm[1]) + attn_gemm_s(g, t, sp, &gm[2]);
	*bwd_s = 2 * *fwd_s + extra;
}

void gpu_linear_gemms_s(const gpu_spec *g, const wl_transformer *t, uint32_t mb,
			const wl_split *sp, uint32_t sms_off, double all[GPU_LINEAR_N],
			double cut[GPU_LINEAR_N])
{
	static const int at[GPU_LINEAR_N] = { 0, 3, 4, 5 }; /* in wl_layer_gemms_split */
	wl_gemm gm[WL_LAYER_GEMMS];
	gpu_spec less = *g;
	if (g->sms > sms_off && sms_off) {
		less.sms = g->sms - sms_off;
		less.peak_flops = g->peak_flops * less.sms / g->sms;
	}
	wl_layer_gemms_split(t, mb, sp, gm);
	for (int i = 0; i < GPU_LINEAR_N; i++) {
		all[i] = gpu_gemm_s(g, &gm[at[i]]);
		cut[i] = gpu_gemm_s(&less, &gm[at[i]]);
	}
}

void gpu_logits_s(const gpu_spec *g, const wl_transformer *t, uint32_t mb, const wl_split *sp,
		  double *fwd_s, double *bwd_s)
{
	double tokens = (double)mb * t->seq / (sp->cp > 1 ? sp->cp : 1), fwd_bytes, bwd_bytes;
	wl_gemm gm = { .name = "logits", .m = tokens, .n = (double)t->vocab / sp->tp,
		       .k = t->hidden, .count = 1 };
	gm.flops = 2 * gm.m * gm.n * gm.k;
	gm.bytes = 2 * (gm.m * gm.k + gm.k * gm.n + gm.m * gm.n);
	wl_logit_kernel_bytes(t, mb, sp, &fwd_bytes, &bwd_bytes);
	double gemm = other_peak_s(g, &gm, g->logit_flops, 1.0);
	*fwd_s = gemm + gpu_mem_s(g, fwd_bytes);
	*bwd_s = 2 * gemm + gpu_mem_s(g, bwd_bytes);
}

void gpu_embedding_s(const gpu_spec *g, const wl_transformer *t, uint32_t mb,
		     const wl_split *sp, double *fwd_s, double *bwd_s)
{
	double fwd_bytes, bwd_bytes;
	wl_embedding_kernel_bytes(t, mb, sp, &fwd_bytes, &bwd_bytes);
	*fwd_s = gpu_mem_s(g, fwd_bytes);
	/* zero, scatter, accumulate: three launches */
	*bwd_s = gpu_mem_s(g, bwd_bytes) + 2 * g->launch_s;
}

double gpu_optimizer_bytes(bool master_copy, bool loss_scaled)
{
	double bytes = 4 + 16 + 12; /* gradient norm; Adam's reads and writes */
	if (master_copy)
		bytes += 4 + 2;     /* fp32 masters to the 16-bit weights */
	if (master_copy && loss_scaled)
		bytes += (2 + 4) + (4 + 4); /* 16-bit grads to fp32; unscale */
	return bytes;
}

double gpu_optimizer_s(const gpu_spec *g, double params)
{
	return gpu_mem_s(g, g->opt_bytes * params);
}
