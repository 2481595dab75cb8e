/* Training workloads: transformer shapes and a vision model, their
 * parameters, FLOPs (per GEMM, per layer, per iteration) and memory bytes.
 * Pure arithmetic, no engine: the training model turns these into events. */
#ifndef DPUSIM_MODELS_WORKLOAD_H
#define DPUSIM_MODELS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum wl_kind { WL_TRANSFORMER, WL_VISION } wl_kind;

/* The layer's block, besides its widths. GPT as Megatron-LM trains it:
 * LayerNorm, biases on every linear layer, dropout on the attention
 * probabilities and both residual branches, learned position embeddings,
 * the output layer tied to the token embedding. Llama (Touvron et al.,
 * "Llama 2", 2023, section 2.2: "pre-normalization using RMSNorm, the
 * SwiGLU activation function, and rotary positional embeddings"; as
 * Megatron-core builds it for NeMo's llama configs: normalization
 * RMSNorm, bias false, hidden_dropout and attention_dropout 0,
 * position_embedding_type rope, share_embeddings_and_output_weights
 * false): RMSNorm, no biases, no dropout, rotary embeddings applied to
 * the queries and keys of every layer, an untied output layer. */
typedef enum wl_block { WL_BLOCK_GPT, WL_BLOCK_LLAMA } wl_block;

/* The software that runs a pipeline-parallel job, for the costs its
 * implementation adds to the schedule (docs/scenarios.md, pipeline_engine):
 * Megatron-LM's schedules as the model has always run them, DeepSpeed's
 * PipelineEngine of 2021 (v0.5: blocking sends, the partitioned boundary
 * tensor all-gathered on the tensor-parallel group, ZeRO 1 all-reducing),
 * Megatron-LM of 2021 as the SC21 runs used it (commit 6985e58 of
 * examples/sc21: blocking batch_isend_irecv sends, each received slice
 * all-gathered on the tensor-parallel group), or Megatron-LM of 2022 as
 * Korthikanti et al. ran it (commit 55ba1f7: the same sends, with
 * sequence parallelism, under which the boundary tensor is already split
 * over the tensor ranks and nothing is gathered). */
typedef enum wl_engine {
	WL_ENGINE_MEGATRON,
	WL_ENGINE_DEEPSPEED,
	WL_ENGINE_MEGATRON_2021,
	WL_ENGINE_MEGATRON_2022
} wl_engine;

/* A decoder or encoder transformer. ffn 0 means 4*hidden; ffn_mats is 2
 * for a GeLU MLP, 3 for SwiGLU; kv_heads 0 means heads (no GQA). */
typedef struct wl_transformer {
	uint32_t layers, hidden, heads, kv_heads;
	uint32_t ffn, ffn_mats;
	uint32_t seq, vocab;
	wl_block block;
} wl_transformer;

/* A convolutional vision model, described by totals (its layers are many
 * and small; the training model treats it as data parallel only). */
typedef struct wl_vision {
	double params;
	double fwd_flops_per_sample;
	double sample_bytes;     /* encoded sample as stored (e.g. JPEG) */
} wl_vision;

typedef struct wl_model {
	wl_kind kind;
	wl_transformer tf;
	wl_vision vis;
} wl_model;

typedef struct wl_preset {
	const char *name;
	const char *source;  /* where the shape is published */
	wl_model model;
} wl_preset;

/* Presets by name (NULL if unknown); count and index access for listing. */
const wl_preset *wl_preset_find(const char *name);
size_t wl_preset_count(void);
const wl_preset *wl_preset_at(size_t i);

/* Fills defaults (ffn, ffn_mats, kv_heads). Returns 0 or SIM_EINVAL with
 * a reason in why (n bytes) when the shape is impossible (hidden not a
 * multiple of heads, kv_heads not dividing heads, zero sizes). */
int wl_transformer_check(wl_transformer *t, char *why, size_t n);

/* Parameters: one layer, and the whole model (layers, token and position
 * embeddings, final norm). */
double wl_layer_params(const wl_transformer *t);
double wl_params(const wl_model *m);

/* One GEMM of a layer's forward pass on one GPU: count independent
 * (batched) products of an m x k by a k x n matrix. flops = 2*m*n*k*count;
 * bytes = what it must at least read and write with 16-bit operands,
 * 2*count*(m*k + k*n + m*n), for the roofline. */
typedef struct wl_gemm {
	const char *name;
	double m, n, k, count;
	double flops;
	double bytes;
} wl_gemm;

enum { WL_LAYER_GEMMS = 6 };

/* How one layer's work is split over a tensor-parallel group: tp ways
 * (Megatron's tensor parallelism), with sp Megatron's sequence parallelism
 * (the [s, b, h] stream outside the parallel regions split along the
 * sequence over the same tp ranks), and cp ways along the sequence over a
 * context-parallel group (ring attention: each rank holds s/cp tokens'
 * queries against all s keys and values). */
typedef struct wl_split {
	uint32_t tp, cp;
	bool sp;
	bool flash;     /* and how attention runs: FlashAttention (Dao et al., 2022:
			 * one fused kernel, the scores never in HBM, recomputed in
			 * the backward) instead of Megatron-LM 2021's GEMMs, softmax
			 * and dropout kernels */
	bool cp_ring;   /* with cp > 1 and flash: Transformer Engine's ring
			 * (AttnFuncWithCP, cp_comm_type p2p), whose copies and
			 * output corrections wl_cp_ring_kernels counts */
	bool wgrad_fused; /* and how weight gradients accumulate: in the weight-
			   * gradient GEMMs (Megatron's gradient_accumulation_fusion),
			   * so the DDP hook's weight-grad-accumulate kernel adds only
			   * the biases' and norms' gradients (wl_layer_kernels) */
} wl_split;

/* The GEMMs of one layer's forward pass on one GPU of split sp: as
 * wl_layer_gemms with its tokens divided by cp (attention: s/cp queries
 * against s keys and values). wl_layer_gemms is { tp, 1, false }. */
void wl_layer_gemms_split(const wl_transformer *t, uint32_t mb, const wl_split *sp,
			  wl_gemm out[WL_LAYER_GEMMS]);

/* The GEMMs of one transformer layer's forward pass for a microbatch of
 * mb sequences, split tp ways (Megatron tensor parallelism: QKV and MLP-up
 * column-parallel, projection and MLP-down row-parallel). Backward runs
 * each twice (gradients of inputs and of weights). */
void wl_layer_gemms(const wl_transformer *t, uint32_t mb, uint32_t tp,
		    wl_gemm out[WL_LAYER_GEMMS]);

/* Forward FLOPs of one layer (matrix multiplies only) for one token, and of
 * the output logits for one token, whole (not divided by tp). */
double wl_layer_fwd_flops_per_token(const wl_transformer *t);
double wl_logit_fwd_flops_per_token(const wl_transformer *t);

/* Model FLOPs of one iteration of `batch` sequences: forward + backward
 * (x3), plus one more forward with full activation recomputation (x4).
 * For the GPT shape (ffn 4h, 2 matrices, no GQA) this is exactly Megatron-
 * LM's equation 3, 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)), with recompute. */
double wl_iter_flops(const wl_transformer *t, double batch, bool recompute);

/* The same for any model: wl_iter_flops for a transformer; for a vision
 * model three forwards a sample (backward twice the forward; no
 * recomputation model). */
double wl_model_iter_flops(const wl_model *m, double batch, bool recompute);

/* One training iteration as measured or simulated, for wl_rates_of. */
typedef struct wl_iter_run {
	double iter_s;          /* mean iteration time */
	double batch;           /* samples per iteration (the global batch) */
	double flops_run;       /* FLOPs run in one iteration by `gpus` GPUs */
	double gpus;
	double peak_flops;      /* one GPU's peak; NaN: no MFU */
} wl_iter_run;

/* Throughput as both programs report it. */
typedef struct wl_rates {
	double samples_per_s;
	double tokens_per_s;    /* NaN for a vision model */
	double tflops_per_gpu;  /* flops_run per GPU per second (Megatron-LM's
				 * counting: recomputation included) */
	double mfu;             /* model FLOPs utilisation: the model's own FLOPs
				 * (no recomputation) over peak, 0..1; NaN
				 * without a peak */
} wl_rates;

/* The rates of model m trained as r describes. */
wl_rates wl_rates_of(const wl_model *m, const wl_iter_run *r);

/* Bytes of activations one layer keeps for backward, per microbatch, per
 * GPU, 16-bit: for GPT's shape s*b*h*(10 + 24/tp + 5*a*s/(h*tp))
 * (Korthikanti et al., "Reducing Activation Recomputation in Large
 * Transformer Models", MLSys 2023, section 4.1, tensor parallel without
 * sequence parallelism: the 10*s*b*h outside the parallel regions is kept
 * whole), with the same terms written for GQA and SwiGLU widths. Memory
 * held, not HBM traffic: what the kernels read and write is
 * wl_layer_kernels. With FlashAttention the 5as^2b of the scores is
 * 4asb, the fp32 log-sum-exp it keeps per row (Dao et al., 2022). With
 * Megatron's sequence parallelism (sp) the 10sbh
 * outside the parallel regions is split along the sequence too: sbh(34/t +
 * 5as/(ht)) (ibid., section 4.2.2). */
double wl_layer_act_bytes(const wl_transformer *t, uint32_t mb, const wl_split *sp);

/* How a job is laid out, for its memory per GPU. */
typedef struct wl_mem_plan {
	uint32_t tp, pp, dp;
	uint32_t mb;              /* samples per microbatch */
	uint32_t microbatches;    /* per pipeline per iteration; 0: at least pp */
	uint32_t vp;              /* model chunks per pipeline rank (interleaved
				   * schedule); 0 or 1: plain 1F1B */
	int zero_stage;           /* 0..3 */
	bool recompute;           /* full activation recomputation */
	bool sp;                  /* Megatron's sequence parallelism */
	bool flash;               /* FlashAttention: no attention scores kept */
	uint32_t cp;              /* context parallelism (0 or 1: none); tp x cp x pp x dp
				   * GPUs */
	uint32_t channels;        /* NCCL channels per communicator (0: 1) */
	double reserve_bytes;     /* framework and CUDA context, given by the scenario */
	double grad_bytes;        /* gradient buffer element (the grad_reduce_dtype's
				   * size); 0 means 2 */
} wl_mem_plan;

/* Bytes one GPU holds, for the pipeline stage that needs the most. */
typedef struct wl_memory {
	double weights, grads, optimizer;  /* mixed-precision Adam, ZeRO-partitioned */
	double activations;                /* kept for backward under 1F1B, plain or
					    * interleaved (transformers) */
	double comm;                       /* NCCL's buffers */
	double reserve;                    /* the scenario's reserve */
	double total;
	uint32_t stage;                    /* that stage */
} wl_memory;

/* Memory per GPU of model m laid out as p: the largest over its pipeline
 * stages (formulas and sources at each term in models/workload.c). Vision
 * models: model states and buffers only (no activation model). */
void wl_gpu_memory(const wl_model *m, const wl_mem_plan *p, wl_memory *out);

/* One memory-bound (non-GEMM) kernel: the bytes it reads from and writes
 * to HBM. */
typedef struct wl_kernel {
	const char *name;
	double read_bytes, write_bytes;
} wl_kernel;

enum { WL_LAYER_FWD_KERNELS = 9, WL_LAYER_BWD_KERNELS = 15 };

/* The kernels of t's block: wl_layer_kernels fills this many of each list
 * (GPT's 9 and 15; Llama's 8 and 9), the rest with NULL names. */
void wl_layer_kernel_counts(const wl_transformer *t, size_t *nfwd, size_t *nbwd);

/* The memory-bound kernels of one Megatron-LM (2021) GPT layer, forward
 * and backward, for a microbatch of mb sequences split tp ways (tensor
 * parallel, no sequence parallelism), 16-bit activations, dropout masks of
 * one byte per element. Each backward kernel reads its saved input(s) and
 * the incoming gradient and writes the outgoing gradient; the last backward
 * entry adds the layer's weight gradients into the gradient buffer (read
 * buffer and new gradient, write buffer, 2 bytes each: Megatron-LM 2021's
 * fp16 DDP hook, kept for every precision, docs/gpu-kernels.md). Kernels on the
 * [s, b, h] stream outside the parallel regions (layer norms, bias-dropout-
 * adds, residual gradient sums) are replicated on every tensor-parallel
 * rank; those inside (QKV bias, softmax, attention dropout, context
 * transpose, bias-GeLU) are split by tp. Derivation and sources of every
 * entry: docs/gpu-kernels.md. SwiGLU and GQA shapes reuse the list with
 * their own widths. With sequence parallelism (sp) the kernels on the
 * [s, b, h] stream run on s/tp of the sequence on each rank (Korthikanti
 * et al., MLSys 2023, section 4.2.2), so they are split by tp too. With
 * FlashAttention (sp->flash) the score kernels move no bytes: the scores
 * never leave the chip. A Llama block (t->block) runs its own list: RMSNorm
 * instead of LayerNorm, rotary embeddings on Q and K, no bias or dropout
 * kernels (docs/gpu-kernels.md, "Llama"). */
void wl_layer_kernels(const wl_transformer *t, uint32_t mb, const wl_split *sp,
		      wl_kernel fwd[WL_LAYER_FWD_KERNELS], wl_kernel bwd[WL_LAYER_BWD_KERNELS]);

enum { WL_LAYER_FP8_CASTS = 4 };

/* The kernels that make the FP8 operands of one layer's linear GEMMs (QKV,
 * projection, MLP up, MLP down) under Transformer Engine, for a microbatch
 * of mb sequences split as sp. Forward: TE's Linear casts its 16-bit input
 * to FP8 together with the FP8 transpose the weight-gradient GEMM needs
 * (fp8_cast_transpose_fused in transformer_engine/pytorch/module/linear.py,
 * TE 1.x: read 2, write 1 + 1 bytes an element); LayerNormLinear (QKV and
 * MLP up in Megatron-core's TE layer spec) has its layer norm write the
 * FP8 output directly, one byte where the norm (wl_layer_kernels) counts
 * two, then transposes it (read 1, write 1): one byte an element more.
 * Backward: every linear casts and transposes its output gradient
 * (grad_output_preprocess, fp8_cast_transpose_fused: read 2, write 1 + 1).
 * The weights' casts run once an iteration (TE caches them across
 * microbatches, is_first_microbatch) and are not counted here. Element
 * counts are the GEMMs' (wl_layer_gemms_split): inputs m x k, output
 * gradients m x n. */
void wl_layer_fp8_casts(const wl_transformer *t, uint32_t mb, const wl_split *sp,
			wl_kernel fwd[WL_LAYER_FP8_CASTS], wl_kernel bwd[WL_LAYER_FP8_CASTS]);

enum { WL_CP_RING_FWD_KERNELS = 4, WL_CP_RING_BWD_KERNELS = 5 };

/* The memory-bound kernels Transformer Engine's context-parallel attention
 * runs around its fused attention steps (AttnFuncWithCP in
 * transformer_engine/pytorch/attention.py at 7d576ed2, the TE_TAG NeMo's
 * Dockerfile.ci pinned in July 2024; sbhd layout, causal mask), for a
 * microbatch of mb sequences split as sp, on context-parallel rank 0, the
 * rank whose steps copy the most (its off-diagonal steps take the second
 * half of its queries against whole K and V chunks; the ring holds the
 * ranks in step). Q and K below are one rank's query and key bytes (s/cp
 * tokens, 2 bytes an element; V as K). Forward: K and V concatenated into
 * the first send buffer (read 2K, write 2K); per off-diagonal step the
 * queries' second half made contiguous (Q/2 each way); the output zeroed
 * (write Q); each step's output merged into it by
 * flash_attn_fwd_out_correction (read the step's output and the running
 * one, write it: 3Q for the diagonal step, 1.5Q for a half step).
 * Backward: K and V copied into the first send buffer (2K each way); per
 * off-diagonal step q, out and dout halves made contiguous (1.5Q each
 * way); dq's halves copied or added (copy Q/2 + Q/2, add Q + Q/2); dk and
 * dv concatenated each step (2K each way); dkv copied at the first step
 * (2K each way), added at the middle ones (read 4K, write 2K), half added
 * and half copied at the diagonal (read 3K, write 2K). The fp32 softmax
 * statistics (4 or 8 bytes per token and head) are left out: under 2% of
 * the bytes at head dim 128. Where sp has no such ring (cp 1, unfused
 * attention, not cp_ring) every entry is zero with a NULL name. */
void wl_cp_ring_kernels(const wl_transformer *t, uint32_t mb, const wl_split *sp,
			wl_kernel fwd[WL_CP_RING_FWD_KERNELS],
			wl_kernel bwd[WL_CP_RING_BWD_KERNELS]);

/* The token embedding on the first pipeline stage, per microbatch, in bytes
 * (read + write): forward the lookup (read the s/cp x mb tokens' rows,
 * write them, 2 bytes an element); backward the dense gradient of the
 * vocabulary-parallel weight: PyTorch's embedding backward
 * (aten/src/ATen/native/cuda/EmbeddingBackwardKernel.cu,
 * embedding_backward_cuda_kernel: at::zeros({num_weights, ...})) zeroes
 * the whole V/tp x h gradient (write 2) and scatters the tokens' gradient
 * rows into it (read 2, write 2 a token element), and the data-parallel
 * hook adds it into the gradient buffer (main_grad.add_(param.grad):
 * read 4, write 2 an element, the 16-bit accumulation
 * wl_layer_kernels' weight-grad-accumulate keeps for every precision).
 * The [b, s, h] to [s, b, h] transpose and the scatter's fp32 partial
 * sums (token-sized) are left out. */
void wl_embedding_kernel_bytes(const wl_transformer *t, uint32_t mb, const wl_split *sp,
			       double *fwd_bytes, double *bwd_bytes);

/* Memory-bound kernels around the output logits on the last pipeline stage,
 * per microbatch (Megatron-LM 2021): the final layer norm and the
 * vocabulary-parallel cross-entropy in fp32 (logits cast to float, max,
 * subtract, exp, sum, divide; backward: scale by the loss gradient, cast
 * back), plus the output weight's gradient accumulation. Forward and
 * backward totals in bytes (read + write). A Llama block's final norm is
 * an RMSNorm (wl_layer_kernels' bytes). */
void wl_logit_kernel_bytes(const wl_transformer *t, uint32_t mb, const wl_split *sp,
			   double *fwd_bytes, double *bwd_bytes);

/* Op i (0 <= i < 2 x microbatches) of pipeline stage p of pp in Megatron's
 * 1F1B schedule (Narayanan et al., SC21, 2.2.1): the warm-up forwards
 * (pp - p - 1 of them, at most microbatches), then one forward and one
 * backward alternately, then the remaining backwards. *fwd says which pass,
 * *m of which microbatch. The order models/train.c simulates and
 * dpusim-hw replay runs. */
void wl_1f1b_op(uint32_t pp, uint32_t microbatches, uint32_t p, uint32_t i, bool *fwd,
		uint32_t *m);

/* Op i (0 <= i < 2 x microbatches x v) of pipeline rank p of pp when each
 * rank holds v model chunks (virtual pipeline stages): Megatron's
 * interleaved 1F1B schedule (Narayanan et al., SC21, 2.2.2; Megatron-LM's
 * forward_backward_pipelining_with_interleaving, microbatches taken in
 * groups of pp). Chunk c of rank p is virtual stage c x pp + p. Forward k
 * (of the M x v a rank runs) is microbatch (k / (pp v)) pp + k % pp of
 * chunk (k % (pp v)) / pp; backward k the same microbatch of chunk
 * v - 1 - (k % (pp v)) / pp. Rank p runs min(2 (pp - p - 1) + (v - 1) pp,
 * M v) warm-up forwards, then one forward and one backward alternately,
 * then the remaining backwards. microbatches must be a multiple of pp
 * (as Megatron requires); v = 1 is wl_1f1b_op's order (chunk 0). */
void wl_interleaved_op(uint32_t pp, uint32_t v, uint32_t microbatches, uint32_t p, uint32_t i,
		       bool *fwd, uint32_t *m, uint32_t *chunk);

/* What keeps Megatron's interleaved schedule from running v model chunks
 * per pipeline rank (v > 1) on pp stages with `microbatches` per pipeline,
 * as flags (0: it runs): no pipeline (pp < 2), the layers not a multiple of
 * pp x v (equal chunks; transformers), the microbatches not a multiple of
 * pp (Megatron-LM asserts it: microbatches go through the chunks in groups
 * of pp). The one check the scenario loader, the training model and plan
 * apply. */
enum { WL_VP_NO_PIPELINE = 1, WL_VP_LAYERS = 2, WL_VP_MICROBATCHES = 4 };
unsigned wl_interleave_faults(const wl_model *m, uint32_t pp, uint32_t v, uint32_t microbatches);

/* Whether Transformer Engine's userbuffers overlap (tp_comm_overlap) can
 * run on a layout: Megatron-core refuses it without sequence parallelism
 * where tp is above 1 (megatron/training/arguments.py: "Tensor parallel
 * communication/GEMM overlap can happen only when sequence parallelism is
 * enabled"). The loader's refusal and plan's search share it. */
bool wl_tp_overlap_fault(bool overlap, uint32_t tp, bool sp);
/* Whether engine e's linear layers run the backward's tensor-parallel
 * collectives of the column-parallel layers beside their GEMMs
 * (models/tp_overlap.h tp_async_layer): Megatron-LM since cf7efd4 (August
 * 2021, the all-reduce; `--no-async-tensor-model-parallel-allreduce` turns
 * it off) and 02bb1f5 (March 2022, sequence parallelism), so megatron and
 * megatron-2022 (55ba1f7); not Megatron-LM of 2021 (6985e58) nor
 * DeepSpeed's engine of 2021 with its layers. */
bool wl_engine_tp_bwd_overlap(wl_engine e);
/* Whether engine e accumulates the linear layers' weight gradients in
 * their weight-gradient GEMMs (gradient_accumulation_fusion: on unless
 * --no-gradient-accumulation-fusion) where the gradients accumulate in
 * fp32 (fp32_accum) or, on megatron, in 16 bits too: Megatron-LM since
 * 83b1e42 (February 2022), only with fp32 accumulation at 55ba1f7
 * (megatron/arguments.py turns it off otherwise), in 16 bits as well since
 * 07916bf (September 2022, wgrad_gemm_accum_fp16); NeMo's launcher
 * configurations set it (gradient_accumulation_fusion: True). Not
 * Megatron-LM of 2021 nor DeepSpeed's engine of 2021. */
bool wl_engine_wgrad_fusion(wl_engine e, bool fp32_accum);

/* Whether engine e all-reduces the data-parallel gradients once, after the
 * stage's whole backward, one collective per model chunk's buffer, in the
 * buffer's dtype (grad_reduce_dtype), instead of in buckets overlapped
 * with the last backward (PyTorch DDP, Megatron-core's
 * overlap_grad_reduce). Megatron-LM of 2021 and 2022 with its default
 * --DDP-impl local (megatron/arguments.py:600 at 6985e58, :736 at
 * 55ba1f7): train_step runs forward_backward_func, then "for model_module
 * in model: model_module.allreduce_gradients()" (megatron/training.py:
 * 370-374 at 6985e58, 445-449 at 55ba1f7), each a torch.distributed.
 * all_reduce of the whole gradient buffer (megatron/model/distributed.py:
 * 188-218 at 6985e58), before the tied embedding's all-reduce. The SC21
 * script runs its pipelined rows with DDP=local (examples/sc21/
 * run_table_1.sh at 6985e58); its 1.7B and 18B rows use DDP=torch, which
 * overlaps as the default engine does. */
bool wl_engine_reduces_after_backward(wl_engine e);

/* What pipeline engine e cannot run of a layout, for the loader's refusal
 * and plan's search: NULL where it runs it, else the setting, named for a
 * message. DeepSpeed's PipelineEngine of 2021 runs the plain 1F1B
 * schedule (its TrainSchedule) on the whole sequence (no sequence or
 * context parallelism in Megatron-DeepSpeed then) and asserts "ZeRO-2 and
 * ZeRO-3 are incompatible with pipeline parallelism"
 * (deepspeed/runtime/pipe/engine.py v0.5). Megatron-LM of 2021 (commit
 * 6985e58) had no sequence or context parallelism and no distributed
 * optimizer (megatron/arguments.py has none of their flags); that of May
 * 2022 (commit 55ba1f7) had sequence parallelism but still no context
 * parallelism or distributed optimizer (megatron/optimizer/
 * distrib_optimizer.py is not in its tree); neither had Transformer
 * Engine's userbuffers (tp_overlap). Megatron runs them all. */
const char *wl_engine_fault(wl_engine e, uint32_t pp, uint32_t vp, bool sp, uint32_t cp,
			    uint32_t zero_stage, bool tp_overlap);

/* Whether context parallelism over cp ranks splits the sequence: into 2 cp
 * equal pieces, rank i taking pieces i and 2 cp - 1 - i so that each gets
 * an equal share of the causal attention (Megatron-Core's load balancing).
 * cp 0 or 1: always. */
bool wl_cp_splits_seq(const wl_transformer *t, uint32_t cp);

/* Warm-up forwards of rank p of pp under that schedule (v = 1: plain
 * 1F1B's pp - p - 1), at most all microbatches x v. */
uint32_t wl_pipe_warmup(uint32_t pp, uint32_t v, uint32_t microbatches, uint32_t p);

/* Model chunks' microbatches whose activations rank p of pp holds at
 * most under that schedule (v = 1: plain 1F1B): its warm-up forwards plus
 * the one forward the steady state runs before its first backward, at most
 * all M x v. microbatches 0: not bounded by the batch. */
uint32_t wl_pipe_inflight(uint32_t pp, uint32_t v, uint32_t microbatches, uint32_t p);

/* Bytes of one layer's keys and values for a microbatch of mb sequences,
 * whole (every head, the whole sequence), 16-bit: 2 s b times the K and V
 * projections' width 2 h kv_heads / heads. What context parallelism
 * all-gathers per layer (split by tp). */
double wl_layer_kv_bytes(const wl_transformer *t, uint32_t mb);

/* Bytes between pipeline stages for one microbatch: s*b*h 16-bit values. */
double wl_stage_boundary_bytes(const wl_transformer *t, uint32_t mb);

/* Layers of pipeline stage p of pp: the first layers % pp stages get one
 * more (as models/train.c splits them). Vision models: 1. */
uint32_t wl_stage_layers(const wl_model *m, uint32_t pp, uint32_t p);

/* Parameters of pipeline stage p of pp, whole (a GPU holds 1/tp of them):
 * its layers, plus the token embedding on the first stage and the tied
 * output layer on the last (both on one stage when pp is 1: once). Vision
 * models: all their parameters. The per-stage figure models/train.c
 * all-reduces as gradients. */
double wl_stage_params(const wl_model *m, uint32_t pp, uint32_t p);

/* Matrix-multiply FLOPs one GPU of pipeline stage p (of pp) runs in one
 * iteration of `microbatches` microbatches of mb samples, tensor parallel
 * tp ways: per microbatch, forward (wl_layer_gemms of each layer, plus the
 * logits on the last stage, vocabulary split tp ways), backward twice the
 * forward, and one more layer forward with recompute; vision models:
 * 3 x mb x fwd_flops_per_sample. The work models/train.c times per stage;
 * summed over every GPU it is wl_iter_flops (Megatron-LM's counting). */
double wl_gpu_iter_flops(const wl_model *m, uint32_t mb, uint32_t microbatches, uint32_t tp,
			 uint32_t pp, uint32_t p, bool recompute);

#endif
