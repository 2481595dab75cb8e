/* Tensor-parallel communication overlapped with the GEMMs as Transformer
 * Engine's userbuffers run it (NeMo's tp_comm_overlap, Megatron-core's
 * --tp-comm-overlap): per layer, which collective hides behind which GEMM
 * and what of it stays exposed. */
#ifndef DPUSIM_MODELS_TP_OVERLAP_H
#define DPUSIM_MODELS_TP_OVERLAP_H

#include <stdint.h>

#include "models/gpu.h"

/* The pipeline method's chunks: TE's default num_splits (initialize_ub's
 * get_default_config: 4 for pipeline), kept by every NeMo H100
 * userbuffers configuration (nemo/collections/llm/recipes/
 * tp_overlap_configs/userbuffers.py; NeMo-Framework-Launcher
 * conf/training/tp_overlap/ub_cfg_h100_*.yaml). */
#define TP_OVERLAP_SPLITS 4

/* One layer's inputs, per microbatch on one GPU. */
typedef struct tp_overlap_in {
	uint32_t tp;                 /* tensor-parallel size (> 1) */
	uint32_t splits;             /* the pipeline method's chunks (TE: num_splits 4) */
	double gemm[GPU_LINEAR_N];   /* forward GEMM on all SMs; each backward GEMM (input
				      * and weight gradient) takes the same (gpu_layer_s) */
	double gemm_cut[GPU_LINEAR_N]; /* the same on the SMs the pipeline method's
				      * communication leaves (set_sm_margin) */
	double ag_s, rs_s;           /* the layer's all-gather and reduce-scatter of the
				      * [s, b, h] stream on the tensor-parallel group */
	double ag_in_s;              /* the all-gathers of the QKV and MLP-up inputs and
				      * of the projection's and MLP-down's output
				      * gradients as Transformer Engine moves them: in FP8
				      * (one byte an element) under FP8, where its norm
				      * writes FP8 and its backward casts the gradient
				      * before gathering it; 0: ag_s */
	double rs_split_s;           /* the reduce-scatter of 1 / splits of it */
	double ar_s;                 /* without sequence parallelism: the layer's
				      * all-reduce of the [s, b, h] stream (tp_async_layer) */
} tp_overlap_in;

typedef struct tp_overlap_out {
	double fwd_comm_s, bwd_comm_s; /* exposed per layer */
	double fwd_extra_s;            /* the forward's GEMMs on fewer SMs (compute) */
} tp_overlap_out;

/* Fills in->gemm and in->gemm_cut for one layer of t at microbatch mb:
 * every linear GEMM on all SMs, and the projection and MLP-down GEMMs
 * (those beside the pipeline method's reduce-scatters) on the SMs that
 * proj_sms and fc2_sms of communication leave them (gpu_linear_gemms_s);
 * the ring-exchange GEMMs keep all SMs. The simulation and plan's
 * estimate share it. */
void tp_overlap_gemms(const gpu_spec *g, const wl_transformer *t, uint32_t mb,
		      const wl_split *sp, uint32_t proj_sms, uint32_t fc2_sms, tp_overlap_in *in);

/* TE's default assignment (transformer_engine/pytorch/module/base.py,
 * initialize_ub: methods and layers_*_overlap), the one NeMo's H100
 * userbuffers configurations of the 70B models keep:
 * - ring_exchange, an all-gather as tp - 1 point-to-point steps of 1/tp
 *   of the tensor, each beside the GEMM on the chunk already there (the
 *   local chunk first, so nothing waits before it): qkv_fprop and
 *   fc1_fprop (the sequence-parallel input gathered for QKV and MLP-up),
 *   proj_dgrad and fc2_dgrad (the output gradient gathered for the row-
 *   parallel layers' input-gradient GEMMs); exposed per step what the step's
 *   transfer takes beyond its GEMM chunk;
 * - pipeline, a reduce-scatter in `splits` chunks, each started when its
 *   share of the GEMM is done, beside the next share: proj_fprop and
 *   fc2_fprop; the last chunk's reduce-scatter is exposed, and the GEMM
 *   runs on the SMs the communication leaves (gemm_cut);
 * - bulk, a whole collective beside a whole GEMM: qkv_dgrad and fc1_dgrad
 *   (the input all-gathered again for the weight gradient beside the input-
 *   gradient GEMM), qkv_wgrad and fc1_wgrad (the input gradient reduce-
 *   scattered beside the weight-gradient GEMM); exposed what the collective
 *   takes beyond its GEMM.
 * The ring exchanges move ag_in_s's bytes (TE gives those four buffers FP8
 * under FP8: initialize_ub's fp8_buf for layers_all_gather_overlap), the
 * bulk all-gathers ag_s's.
 * Each exposure is at least 0 and at most the collective's own time: a
 * collective never hides more than the GEMM it runs beside. */
void tp_overlap_layer(const tp_overlap_in *in, tp_overlap_out *out);

/* The same layer under Transformer Engine's modules without userbuffers
 * (TE 7d576ed2, the TE the NeMo 24.07 rows ran: module/layernorm_linear.py,
 * module/linear.py, module/base.py grad_output_preprocess), with sequence
 * parallelism. Forward: the QKV and MLP-up inputs all-gathered (ag_in_s)
 * and the projection's and MLP-down's outputs reduce-scattered (rs_s), each
 * before or after its GEMM, exposed. Backward: the projection's and MLP-
 * down's output gradients all-gathered before their input-gradient GEMMs
 * (ag_in_s), exposed; for QKV and MLP-up, the input all-gathered again
 * asynchronously beside the input-gradient GEMM ("Overlap input AG with
 * dgrad") and the input gradient reduce-scattered asynchronously beside the
 * weight-gradient GEMM ("Overlap dgrad-RS/AR with wgrad"), each exposing
 * what it takes beyond its GEMM (in->gemm: each backward GEMM takes the
 * forward's time). fwd_extra_s is 0: no SMs are set aside. */
void tp_te_layer(const tp_overlap_in *in, tp_overlap_out *out);

/* The same layer under Megatron-LM's own linear layers in 16 bits
 * (LinearWithGradAccumulationAndAsyncCommunication, megatron/mpu/layers.py
 * at 55ba1f7, May 2022; megatron/core/tensor_parallel/layers.py since
 * c2ea914, September 2022), which overlap the column-parallel layers'
 * (QKV, MLP-up) backward collectives as TE's modules do. With sequence
 * parallelism (in->ar_s 0): the input all-gathered again beside the
 * input-gradient GEMM, the input gradient reduce-scattered beside the
 * weight-gradient GEMM (`async_op=True` on both; the row-parallel layers'
 * output gradients gathered before their GEMMs, exposed): tp_te_layer's
 * layer with 16-bit gathers (ag_in_s 0). Without (in->ar_s, the default
 * --async-tensor-model-parallel-allreduce, arguments.py at 55ba1f7): the
 * forward's two all-reduces after the row-parallel GEMMs exposed; the
 * backward's two, of the column-parallel layers' input gradients, each
 * beside that layer's weight-gradient GEMM, exposing what they take
 * beyond it. Megatron-LM of 2021 (6985e58, the SC21 rows' tree) had
 * neither: the asynchronous all-reduce came in cf7efd4 (August 2021),
 * the sequence-parallel path in 02bb1f5 (March 2022). */
void tp_async_layer(const tp_overlap_in *in, tp_overlap_out *out);

/* Context parallelism as Transformer Engine's AttnFuncWithCP runs it
 * (transformer_engine/pytorch/attention.py of v1.7 to v1.9, whose only
 * context-parallel attention it is; cp_comm_type "p2p" after): the
 * attention of a layer in cp steps on a ring, each step's share of it
 * (attn_f_s, attn_b_s over cp: the load-balanced chunks give every step
 * an equal part) beside a point-to-point exchange of one rank's K and V
 * (step_s: a ring all-gather's step). Forward: step i waits for the K and
 * V the previous step received, so steps 1 .. cp - 1 expose what a
 * transfer takes beyond a step's attention. Backward: every step sends
 * and waits for its exchange beside its own attention: K and V at the
 * first step, K, V and the gradients so far (twice the bytes) in the
 * middle, the gradients alone at the last. Exposed per layer, at least 0
 * and at most the transfers' own time. */
void cp_overlap_layer(uint32_t cp, double step_s, double attn_f_s, double attn_b_s,
		      double *fwd_s, double *bwd_s);

#endif
