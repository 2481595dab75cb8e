/* Transformer Engine's userbuffers overlap of a layer's tensor-parallel
 * collectives with its GEMMs (models/tp_overlap.h). */
#include "models/tp_overlap.h"

static double over(double comm, double gemm)
{
	return comm > gemm ? comm - gemm : 0;
}

/* The all-gathers TE runs on FP8 data under FP8 (tp_overlap_in.ag_in_s). */
static double ag_in(const tp_overlap_in *in)
{
	return in->ag_in_s > 0 ? in->ag_in_s : in->ag_s;
}

/* ring_exchange all-gather beside a GEMM of `gemm` seconds: tp steps of
 * gemm / tp, the first on the local chunk, each of the others waiting for
 * one transfer of ag / (tp - 1) (a ring all-gather's step). */
static double ring_exchange(const tp_overlap_in *in, double gemm)
{
	double n = in->tp;
	return (n - 1) * over(ag_in(in) / (n - 1), gemm / n);
}

/* pipeline reduce-scatter: the GEMM (on fewer SMs) in `splits` shares,
 * each share's reduce-scatter beside the next share, the last alone. */
static double pipeline(const tp_overlap_in *in, double gemm_cut)
{
	double n = in->splits ? in->splits : 1;
	return (n - 1) * over(in->rs_split_s, gemm_cut / n) + in->rs_split_s;
}

void cp_overlap_layer(uint32_t cp, double step_s, double attn_f_s, double attn_b_s,
		      double *fwd_s, double *bwd_s)
{
	double n = cp, f = attn_f_s / n, b = attn_b_s / n;
	*fwd_s = *bwd_s = 0;
	if (cp < 2)
		return;
	*fwd_s = (n - 1) * over(step_s, f);
	*bwd_s = 2 * over(step_s, b) + (n - 2) * over(2 * step_s, b);
}

void tp_overlap_layer(const tp_overlap_in *in, tp_overlap_out *out)
{
	const double *g = in->gemm, *gc = in->gemm_cut;
	out->fwd_comm_s = ring_exchange(in, g[GPU_LINEAR_QKV]) + ring_exchange(in, g[GPU_LINEAR_FC1]) +
			  pipeline(in, gc[GPU_LINEAR_PROJ]) + pipeline(in, gc[GPU_LINEAR_FC2]);
	out->fwd_extra_s = gc[GPU_LINEAR_PROJ] - g[GPU_LINEAR_PROJ] + gc[GPU_LINEAR_FC2] -
			   g[GPU_LINEAR_FC2];
	out->bwd_comm_s = ring_exchange(in, g[GPU_LINEAR_PROJ]) + ring_exchange(in, g[GPU_LINEAR_FC2]) +
			  over(in->ag_s, g[GPU_LINEAR_QKV]) + over(in->rs_s, g[GPU_LINEAR_QKV]) +
			  over(in->ag_s, g[GPU_LINEAR_FC1]) + over(in->rs_s, g[GPU_LINEAR_FC1]);
}

void tp_te_layer(const tp_overlap_in *in, tp_overlap_out *out)
{
	const double *g = in->gemm;
	double ag = ag_in(in);
	out->fwd_comm_s = 2 * ag + 2 * in->rs_s;
	out->fwd_extra_s = 0;
	out->bwd_comm_s = 2 * ag + over(ag, g[GPU_LINEAR_QKV]) + over(in->rs_s, g[GPU_LINEAR_QKV]) +
			  over(ag, g[GPU_LINEAR_FC1]) + over(in->rs_s, g[GPU_LINEAR_FC1]);
}

void tp_async_layer(const tp_overlap_in *in, tp_overlap_out *out)
{
	const double *g = in->gemm;
	if (!(in->ar_s > 0)) {
		tp_te_layer(in, out);
		return;
	}
	out->fwd_comm_s = 2 * in->ar_s;
	out->fwd_extra_s = 0;
	out->bwd_comm_s = over(in->ar_s, g[GPU_LINEAR_QKV]) + over(in->ar_s, g[GPU_LINEAR_FC1]);
}

void tp_overlap_gemms(const gpu_spec *g, const wl_transformer *t, uint32_t mb,
		      const wl_split *sp, uint32_t proj_sms, uint32_t fc2_sms, tp_overlap_in *in)
{
	double all[GPU_LINEAR_N], cut[GPU_LINEAR_N];
	gpu_linear_gemms_s(g, t, mb, sp, proj_sms, in->gemm, cut);
	in->gemm_cut[GPU_LINEAR_PROJ] = cut[GPU_LINEAR_PROJ];
	gpu_linear_gemms_s(g, t, mb, sp, fc2_sms, all, cut);
	in->gemm_cut[GPU_LINEAR_FC2] = cut[GPU_LINEAR_FC2];
	in->gemm_cut[GPU_LINEAR_QKV] = in->gemm[GPU_LINEAR_QKV];
	in->gemm_cut[GPU_LINEAR_FC1] = in->gemm[GPU_LINEAR_FC1];
}
