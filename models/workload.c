/* Transformer and vision workload arithmetic. */
#include "models/workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/err.h"

/* GPT shape as the Megatron-LM paper trains it: ffn 4h, GeLU, vocabulary
 * 51,200, sequence 2,048 (Narayanan et al., SC21, Table 1 and section 5). */
#define MEGATRON(nm, a, h, l)                                                          \
	{ nm, "Narayanan et al., Efficient Large-Scale Language Model Training on GPU "   \
	      "Clusters Using Megatron-LM, SC21, Table 1",                                 \
	  { .kind = WL_TRANSFORMER, .tf = { .layers = l, .hidden = h, .heads = a,          \
					    .seq = 2048, .vocab = 51200 } } }

static const wl_preset presets[] = {
	MEGATRON("megatron-1.7b", 24, 2304, 24),
	MEGATRON("megatron-3.6b", 32, 3072, 30),
	MEGATRON("megatron-7.5b", 32, 4096, 36),
	MEGATRON("megatron-18.4b", 48, 6144, 40),
	MEGATRON("megatron-39.1b", 64, 8192, 48),
	MEGATRON("megatron-76.1b", 80, 10240, 60),
	MEGATRON("megatron-145.6b", 96, 12288, 80),
	MEGATRON("megatron-310.1b", 128, 16384, 96),
	MEGATRON("megatron-529.6b", 128, 20480, 105),
	MEGATRON("megatron-1008b", 160, 25600, 128),
	{ "gpt3-175b", "Brown et al., Language Models are Few-Shot Learners, NeurIPS 2020, "
		       "Table 2.1 (vocabulary padded to 51,200 as in Megatron-LM)",
	  { .kind = WL_TRANSFORMER,
	    .tf = { .layers = 96, .hidden = 12288, .heads = 96, .seq = 2048, .vocab = 51200 } } },
	/* Table 2.1 prints d_model 5140 beside 40 heads of d_head 128: 40 x 128
	 * is 5120, and 5140 is no multiple of 40 heads, so the width is taken
	 * as 5120 (the printed figure cannot be built). */
	{ "gpt3-13b", "Brown et al., NeurIPS 2020, Table 2.1 (n_heads 40 x d_head 128 = 5120; "
		      "the table's d_model 5140 is not a multiple of the heads)",
	  { .kind = WL_TRANSFORMER,
	    .tf = { .layers = 40, .hidden = 5120, .heads = 40, .seq = 2048, .vocab = 51200 } } },
	{ "llama2-7b", "Touvron et al., Llama 2: Open Foundation and Fine-Tuned Chat Models, "
		       "2023, Table 1; params.json of the released model (ffn 11008, SwiGLU)",
	  { .kind = WL_TRANSFORMER,
	    .tf = { .layers = 32, .hidden = 4096, .heads = 32, .ffn = 11008, .ffn_mats = 3,
		    .seq = 4096, .vocab = 32000, .block = WL_BLOCK_LLAMA } } },
	{ "llama2-70b", "Touvron et al., 2023, Table 1 (GQA with 8 KV heads); released "
			"params.json (ffn 28672, SwiGLU)",
	  { .kind = WL_TRANSFORMER,
	    .tf = { .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn = 28672,
		    .ffn_mats = 3, .seq = 4096, .vocab = 32000, .block = WL_BLOCK_LLAMA } } },
	{ "llama3-8b", "Dubey et al., The Llama 3 Herd of Models, 2024, Table 3 (32 layers, "
		       "model dimension 4,096, FFN 14,336, SwiGLU, 32 heads, 8 KV heads); vocabulary "
		       "128,256 as the released tokenizer (the table rounds it to 128,000); sequence "
		       "8,192 (section 3.4.1)",
	  { .kind = WL_TRANSFORMER,
	    .tf = { .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn = 14336,
		    .ffn_mats = 3, .seq = 8192, .vocab = 128256, .block = WL_BLOCK_LLAMA } } },
	{ "llama3-70b", "Dubey et al., 2024, Table 3 (80 layers, model dimension 8,192, FFN "
			"28,672, SwiGLU, 64 heads, 8 KV heads); vocabulary 128,256 as the released "
			"tokenizer; sequence 8,192",
	  { .kind = WL_TRANSFORMER,
	    .tf = { .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn = 28672,
		    .ffn_mats = 3, .seq = 8192, .vocab = 128256, .block = WL_BLOCK_LLAMA } } },
	{ "bert-large", "Devlin et al., BERT, NAACL 2019, section 3 (L=24, H=1024, A=16); "
			"sequence 512, WordPiece vocabulary 30,522",
	  { .kind = WL_TRANSFORMER,
	    .tf = { .layers = 24, .hidden = 1024, .heads = 16, .seq = 512, .vocab = 30522 } } },
	{ "resnet50", "He et al., Deep Residual Learning, CVPR 2016, Table 1 (3.8e9 multiply-adds "
		      "forward = 7.6e9 FLOPs; 25.6M parameters); ImageNet mean JPEG about 110 kB "
		      "(ILSVRC-2012 train set: 1.28M images in about 140 GB)",
	  { .kind = WL_VISION,
	    .vis = { .params = 25.6e6, .fwd_flops_per_sample = 7.6e9, .sample_bytes = 110e3 } } },
};

const wl_preset *wl_preset_find(const char *name)
{
	for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
		if (!strcmp(presets[i].name, name))
			return &presets[i];
	return NULL;
}

size_t wl_preset_count(void)
{
	return sizeof presets / sizeof presets[0];
}

const wl_preset *wl_preset_at(size_t i)
{
	return i < wl_preset_count() ? &presets[i] : NULL;
}

int wl_transformer_check(wl_transformer *t, char *why, size_t n)
{
	if (!t->layers || !t->hidden || !t->heads || !t->seq || !t->vocab) {
		snprintf(why, n, "layers, hidden, heads, seq and vocab must all be positive");
		return SIM_EINVAL;
	}
	if (t->hidden % t->heads) {
		snprintf(why, n, "hidden %u is not a multiple of heads %u", t->hidden, t->heads);
		return SIM_EINVAL;
	}
	if (!t->kv_heads)
		t->kv_heads = t->heads;
	if (t->heads % t->kv_heads) {
		snprintf(why, n, "kv_heads %u does not divide heads %u", t->kv_heads, t->heads);
		return SIM_EINVAL;
	}
	if (!t->ffn)
		t->ffn = 4 * t->hidden;
	if (!t->ffn_mats)
		t->ffn_mats = 2;
	if (t->ffn_mats != 2 && t->ffn_mats != 3) {
		snprintf(why, n, "ffn_mats must be 2 (GeLU) or 3 (SwiGLU), not %u", t->ffn_mats);
		return SIM_EINVAL;
	}
	return SIM_OK;
}

/* Width of the K and V projections together. */
static double kv_width(const wl_transformer *t)
{
	uint32_t kv = t->kv_heads ? t->kv_heads : t->heads;
	return 2.0 * t->hidden * kv / t->heads;
}

static double ffn_of(const wl_transformer *t)
{
	return t->ffn ? t->ffn : 4.0 * t->hidden;
}

static double mats_of(const wl_transformer *t)
{
	return t->ffn_mats ? t->ffn_mats : 2;
}

static bool llama(const wl_transformer *t)
{
	return t->block == WL_BLOCK_LLAMA;
}

double wl_layer_params(const wl_transformer *t)
{
	double h = t->hidden, f = ffn_of(t), m = mats_of(t);
	if (llama(t)) /* no biases; two RMSNorms, a weight each */
		return h * (h + kv_width(t)) + h * h + m * h * f + 2 * h;
	double attn = h * (h + kv_width(t)) + (h + kv_width(t)) + h * h + h;
	double mlp = m * h * f + (m - 1) * f + h;
	return attn + mlp + 4 * h; /* two layer norms, weight and bias */
}

double wl_params(const wl_model *m)
{
	const wl_transformer *t = &m->tf;
	double vh = (double)t->vocab * t->hidden;
	if (m->kind == WL_VISION)
		return m->vis.params;
	if (llama(t)) /* token embedding, untied output layer, final RMSNorm; no positions */
		return t->layers * wl_layer_params(t) + 2 * vh + t->hidden;
	return t->layers * wl_layer_params(t) + vh + (double)t->seq * t->hidden + 2.0 * t->hidden;
}

static wl_gemm gemm(const char *name, double m, double n, double k, double count)
{
	return (wl_gemm){ .name = name, .m = m, .n = n, .k = k, .count = count,
			  .flops = 2 * m * n * k * count,
			  .bytes = 2 * count * (m * k + k * n + m * n) };
}

static uint32_t cp_of(const wl_split *sp)
{
	return sp->cp > 1 ? sp->cp : 1;
}

void wl_layer_gemms(const wl_transformer *t, uint32_t mb, uint32_t tp, wl_gemm out[WL_LAYER_GEMMS])
{
	wl_layer_gemms_split(t, mb, &(wl_split){ .tp = tp, .cp = 1 }, out);
}

void wl_layer_gemms_split(const wl_transformer *t, uint32_t mb, const wl_split *sp,
			  wl_gemm out[WL_LAYER_GEMMS])
{
	double s = t->seq, q = s / cp_of(sp), tokens = (double)mb * q, h = t->hidden;
	double f = ffn_of(t), p = sp->tp, d_head = h / t->heads, heads = (double)mb * t->heads / p;
	out[0] = gemm("qkv", tokens, (h + kv_width(t)) / p, h, 1);
	out[1] = gemm("attn-scores", q, s, d_head, heads);
	out[2] = gemm("attn-values", q, d_head, s, heads);
	if (sp->flash) { /* the scores and probabilities stay on chip: Q, K in; V in, O out */
		out[1].bytes = 2 * heads * (q * d_head + d_head * s);
		out[2].bytes = 2 * heads * (s * d_head + q * d_head);
	}
	out[3] = gemm("proj", tokens, h, h / p, 1);
	out[4] = gemm("mlp-up", tokens, (mats_of(t) - 1) * f / p, h, 1);
	out[5] = gemm("mlp-down", tokens, h, f / p, 1);
}

double wl_layer_fwd_flops_per_token(const wl_transformer *t)
{
	wl_gemm g[WL_LAYER_GEMMS];
	double sum = 0;
	wl_layer_gemms(t, 1, 1, g);
	for (int i = 0; i < WL_LAYER_GEMMS; i++)
		sum += g[i].flops;
	return sum / t->seq;
}

double wl_logit_fwd_flops_per_token(const wl_transformer *t)
{
	return 2.0 * t->hidden * t->vocab;
}

double wl_iter_flops(const wl_transformer *t, double batch, bool recompute)
{
	double tokens = batch * t->seq;
	double layers = tokens * t->layers * wl_layer_fwd_flops_per_token(t);
	double logits = tokens * wl_logit_fwd_flops_per_token(t);
	/* Recomputation reruns the layers' forward, not the logits (equation
	 * 3's V/(16lh) term is 6BshV: the logits counted three times). */
	return layers * (recompute ? 4.0 : 3.0) + 3.0 * logits;
}

double wl_model_iter_flops(const wl_model *m, double batch, bool recompute)
{
	if (m->kind == WL_TRANSFORMER)
		return wl_iter_flops(&m->tf, batch, recompute);
	return 3.0 * m->vis.fwd_flops_per_sample * batch;
}

wl_rates wl_rates_of(const wl_model *m, const wl_iter_run *r)
{
	double model_flops = wl_model_iter_flops(m, r->batch, false);
	double mfu = model_flops / r->iter_s / r->gpus / r->peak_flops;
	return (wl_rates){
		.samples_per_s = r->batch / r->iter_s,
		.tokens_per_s = m->kind == WL_TRANSFORMER ? r->batch * m->tf.seq / r->iter_s : NAN,
		.tflops_per_gpu = r->flops_run / r->iter_s / r->gpus / 1e12,
		.mfu = isnan(mfu) ? NAN : mfu < 0 ? 0 : mfu > 1 ? 1 : mfu,
	};
}

double wl_layer_act_bytes(const wl_transformer *t, uint32_t mb, const wl_split *sp)
{
	double sb = (double)t->seq * mb / cp_of(sp), h = t->hidden, f = ffn_of(t), m = mats_of(t);
	double tp = sp->tp;
	/* Korthikanti et al.'s terms, written for any MLP and attention width:
	 * inside the parallel regions Q, K, V (2sb(h + kv)), the projection's
	 * input (2sbh), the MLP's m - 1 up-projections and activation output
	 * (2msbf: 16sbh for a GeLU MLP of 4h) and the attention scores,
	 * probabilities, mask and dropout output (5as^2b); outside them the two
	 * layer norms' inputs, the two linear inputs and the two dropout masks
	 * (10sbh). GPT's shape gives the paper's sbh(10 + 24/t + 5as/(ht)). */
	/* FlashAttention keeps no scores, only each row's fp32 log-sum-exp
	 * (4 bytes per head and token) beside its output */
	/* Llama has no dropout: no masks (8sbh outside), and the scores keep
	 * only the softmax output (2as^2b: dropout at p = 0 returns its input) */
	double scores = sp->flash ? 4.0 * t->heads * sb
				  : (llama(t) ? 2.0 : 5.0) * t->heads * sb * t->seq;
	double inside = 2 * sb * (h + kv_width(t)) + 2 * sb * h + 2 * m * sb * f + scores;
	return (llama(t) ? 8 : 10) * sb * h / (sp->sp ? tp : 1) + inside / tp;
}

/* Bytes a GPU of stage `stage` holds for weights, gradients and Adam's
 * states under mixed precision (Rajbhandari et al., "ZeRO", SC20, section
 * 3.1: 2 + 2 + 12 bytes per parameter, the gradients p->grad_bytes where
 * they are kept in fp32: Megatron-LM's docs/source/distrib_optimizer.md
 * counts bf16 parameters with fp32 gradients as 2 + 4 + 12 = 18 bytes;
 * stage 1 partitions the 12 across
 * data-parallel ranks, stage 2 also the gradients, stage 3 also the
 * weights). Context-parallel ranks hold the same weights and reduce their
 * gradients together, so the partitions span dp x cp of them (Megatron's
 * distributed optimizer over its data-parallel group with context). */
static void model_states(const wl_model *m, const wl_mem_plan *p, uint32_t stage,
			 wl_memory *out)
{
	double psi = wl_stage_params(m, p->pp, stage) / p->tp;
	double dp = (p->dp ? p->dp : 1) * (p->cp > 1 ? p->cp : 1);
	out->weights = 2 * psi / (p->zero_stage >= 3 ? dp : 1);
	out->grads = (p->grad_bytes > 0 ? p->grad_bytes : 2) * psi / (p->zero_stage >= 2 ? dp : 1);
	out->optimizer = 12 * psi / (p->zero_stage >= 1 ? dp : 1);
}

/* Activations held at once by a GPU of stage `stage` under 1F1B: stage s
 * has min(pp - s, microbatches) microbatches in flight (Narayanan et al.,
 * SC21, section 2.2.1), each keeping its layers' activations, or only each
 * layer's 16-bit input (2sbh) with full recomputation, which then also
 * needs one layer's whole activations while it recomputes (Korthikanti et
 * al., sections 4.2.3 and 5). Interleaved, the schedule's own count of
 * chunk-microbatches in flight (wl_pipe_inflight) each holds a chunk's
 * layers: on the first stage 1 + (pp - 1) / (pp v) times plain 1F1B's,
 * Korthikanti et al.'s section 4.2.3 factor. */
static double activations(const wl_model *m, const wl_mem_plan *p, uint32_t stage)
{
	const wl_transformer *t = &m->tf;
	uint32_t v = p->vp > 1 ? p->vp : 1;
	wl_split sp = { .tp = p->tp, .cp = p->cp, .sp = p->sp, .flash = p->flash };
	double layer = wl_layer_act_bytes(t, p->mb, &sp);
	double input = 2.0 * t->seq * p->mb * t->hidden / cp_of(&sp) / (p->sp ? p->tp : 1);
	double held = (double)wl_pipe_inflight(p->pp, v, p->microbatches, stage) *
		      wl_stage_layers(m, p->pp, stage) / v;
	if (p->recompute)
		return held * input + layer;
	return held * layer;
}

/* NCCL's staging buffers: NCCL_BUFFSIZE (4 MiB by default, NCCL's
 * environment variable documentation) for each channel's send and receive
 * peer, in every communicator a GPU talks in (tensor, context, data and pipeline
 * parallel groups of more than one rank). */
static double comm_buffers(const wl_mem_plan *p)
{
	int comms = (p->tp > 1) + (p->dp > 1) + (p->pp > 1) + (p->cp > 1);
	return comms * (p->channels ? p->channels : 1) * 2.0 * 4194304.0;
}

void wl_gpu_memory(const wl_model *m, const wl_mem_plan *p, wl_memory *out)
{
	*out = (wl_memory){ .total = -1 };
	for (uint32_t s = 0; s < p->pp; s++) {
		wl_memory w = { .stage = s, .reserve = p->reserve_bytes, .comm = comm_buffers(p) };
		model_states(m, p, s, &w);
		w.activations = m->kind == WL_VISION ? 0 : activations(m, p, s);
		w.total = w.weights + w.grads + w.optimizer + w.activations + w.comm + w.reserve;
		if (w.total > out->total)
			*out = w;
	}
}

static wl_kernel kern(const char *name, double read_bytes, double write_bytes)
{
	return (wl_kernel){ .name = name, .read_bytes = read_bytes, .write_bytes = write_bytes };
}

/* Element counts of one layer's tensors on one GPU, 16-bit unless noted. */
typedef struct layer_sizes {
	double n;      /* s*b*h: the [s, b, h] stream, whole on every rank */
	double qkv;    /* s*b*(h + kv)/tp: QKV projection output */
	double ctx;    /* s*b*h/tp: attention context */
	double act;    /* s*b*f/tp: MLP activation output; its input is (mats-1) times it */
	double att;    /* b*(a/tp)*s*s: attention scores, probabilities */
	double tri;    /* (s+1)/(2s): the causal (lower) triangle's share of a score row */
	double stats;  /* s*b*8 bytes: a layer norm's fp32 mean and 1/stddev per token
			* (RMSNorm: s*b*4, its 1/rms) */
	double accum;  /* the weights and biases on this GPU whose gradients the DDP
			* hook's kernel accumulates: all, or with wgrad_fused the
			* biases and norms only */
	double q, k;   /* s*b*h/tp queries, s*b*(kv/2)/tp keys: what RoPE rotates */
} layer_sizes;

static layer_sizes sizes_of(const wl_transformer *t, uint32_t mb, const wl_split *sp)
{
	double S = t->seq, s = S / cp_of(sp), b = mb, h = t->hidden, p = sp->tp, f = ffn_of(t);
	double m = mats_of(t), kv = kv_width(t), seq_split = sp->sp ? p : 1;
	double split = h * (h + kv) + (h + kv) + h * h + m * h * f + (m - 1) * f;
	/* replicated: GPT's row-parallel biases and layer norms (6h), Llama's RMSNorm weights */
	double params = llama(t) ? (h * (h + kv) + h * h + m * h * f) / p + 2 * h : split / p + 6 * h;
	/* the GEMMs' weights accumulate in the GEMMs when fused; the hook still
	 * adds the split biases and the replicated biases and norms */
	double small = llama(t) ? 2 * h : ((h + kv) + (m - 1) * f) / p + 6 * h;
	/* FlashAttention: no score matrix in HBM, so its kernels move nothing */
	return (layer_sizes){ .n = s * b * h / seq_split, .qkv = s * b * (h + kv) / p,
			      .ctx = s * b * h / p, .act = s * b * f / p,
			      .att = sp->flash ? 0 : b * (t->heads / p) * s * S,
			      .tri = (S + 1) / (2 * S),
			      .stats = (llama(t) ? 4 : 8) * s * b / seq_split,
			      .accum = sp->wgrad_fused ? small : params,
			      .q = s * b * h / p, .k = s * b * kv / 2 / p };
}

/* The kernel list and its derivation: docs/gpu-kernels.md. Forward, in
 * the order ParallelTransformerLayer.forward runs them. */
static void fwd_kernels(const layer_sizes *z, double m, wl_kernel k[WL_LAYER_FWD_KERNELS])
{
	double n = z->n;
	k[0] = kern("layernorm-1", 2 * n, 2 * n + z->stats);
	k[1] = kern("qkv-bias-add", 2 * z->qkv, 2 * z->qkv);
	k[2] = kern("scale-mask-softmax", 2 * z->att * z->tri, 2 * z->att);
	k[3] = kern("attention-dropout", 2 * z->att, 3 * z->att);
	k[4] = kern("context-transpose", 2 * z->ctx, 2 * z->ctx);
	k[5] = kern("bias-dropout-add-1", 4 * n, 3 * n);
	k[6] = kern("layernorm-2", 2 * n, 2 * n + z->stats);
	k[7] = kern("bias-gelu", 2 * (m - 1) * z->act, 2 * z->act);
	k[8] = kern("bias-dropout-add-2", 4 * n, 3 * n);
}

/* Backward, in the order autograd runs them (last layer op first). */
static void bwd_kernels(const layer_sizes *z, double m, wl_kernel k[WL_LAYER_BWD_KERNELS])
{
	double n = z->n;
	k[0] = kern("bias-dropout-add-2-bwd", 3 * n, 2 * n);
	k[1] = kern("mlp-down-bias-grad", 2 * n, 0);
	k[2] = kern("bias-gelu-bwd", 2 * z->act + 2 * (m - 1) * z->act, 2 * (m - 1) * z->act);
	k[3] = kern("mlp-up-bias-grad", 2 * (m - 1) * z->act, 0);
	k[4] = kern("layernorm-2-bwd", 8 * n + z->stats, 2 * n);
	k[5] = kern("residual-grad-add-2", 4 * n, 2 * n);
	k[6] = kern("bias-dropout-add-1-bwd", 3 * n, 2 * n);
	k[7] = kern("proj-bias-grad", 2 * n, 0);
	k[8] = kern("context-transpose-bwd", 2 * z->ctx, 2 * z->ctx);
	k[9] = kern("attention-dropout-bwd", 3 * z->att, 2 * z->att);
	k[10] = kern("scale-mask-softmax-bwd", 4 * z->att * z->tri, 2 * z->att);
	k[11] = kern("qkv-bias-grad", 2 * z->qkv, 0);
	k[12] = kern("layernorm-1-bwd", 8 * n + z->stats, 2 * n);
	k[13] = kern("residual-grad-add-1", 4 * n, 2 * n);
	k[14] = kern("weight-grad-accumulate", 4 * z->accum, 2 * z->accum);
}

/* A Llama layer as Megatron-core builds it (docs/gpu-kernels.md,
 * "Llama"): RMSNorm (Transformer Engine's kernels: forward reads the input
 * and writes the output and its fp32 1/rms; backward reads the gradient,
 * the input and 1/rms once and writes the input gradient), rotary
 * embeddings on the queries and keys (read and write each), plain residual
 * adds; no bias or dropout kernel. */
enum { LLAMA_FWD_KERNELS = 8, LLAMA_BWD_KERNELS = 9 };

static void llama_fwd_kernels(const layer_sizes *z, double m, wl_kernel k[WL_LAYER_FWD_KERNELS])
{
	double n = z->n, qk = z->q + z->k;
	k[0] = kern("rmsnorm-1", 2 * n, 2 * n + z->stats);
	k[1] = kern("rope", 2 * qk, 2 * qk);
	k[2] = kern("scale-mask-softmax", 2 * z->att * z->tri, 2 * z->att);
	k[3] = kern("context-transpose", 2 * z->ctx, 2 * z->ctx);
	k[4] = kern("residual-add-1", 4 * n, 2 * n);
	k[5] = kern("rmsnorm-2", 2 * n, 2 * n + z->stats);
	k[6] = kern("swiglu", 2 * (m - 1) * z->act, 2 * z->act);
	k[7] = kern("residual-add-2", 4 * n, 2 * n);
}

/* Backward: a residual add's gradient goes to both inputs as it is (no
 * kernel); the two streams meeting at each norm's input are summed. */
static void llama_bwd_kernels(const layer_sizes *z, double m, wl_kernel k[WL_LAYER_BWD_KERNELS])
{
	double n = z->n, qk = z->q + z->k;
	k[0] = kern("swiglu-bwd", 2 * z->act + 2 * (m - 1) * z->act, 2 * (m - 1) * z->act);
	k[1] = kern("rmsnorm-2-bwd", 4 * n + z->stats, 2 * n);
	k[2] = kern("residual-grad-add-2", 4 * n, 2 * n);
	k[3] = kern("context-transpose-bwd", 2 * z->ctx, 2 * z->ctx);
	k[4] = kern("scale-mask-softmax-bwd", 4 * z->att * z->tri, 2 * z->att);
	k[5] = kern("rope-bwd", 2 * qk, 2 * qk);
	k[6] = kern("rmsnorm-1-bwd", 4 * n + z->stats, 2 * n);
	k[7] = kern("residual-grad-add-1", 4 * n, 2 * n);
	k[8] = kern("weight-grad-accumulate", 4 * z->accum, 2 * z->accum);
}

void wl_layer_kernel_counts(const wl_transformer *t, size_t *nfwd, size_t *nbwd)
{
	*nfwd = llama(t) ? LLAMA_FWD_KERNELS : WL_LAYER_FWD_KERNELS;
	*nbwd = llama(t) ? LLAMA_BWD_KERNELS : WL_LAYER_BWD_KERNELS;
}

void wl_layer_kernels(const wl_transformer *t, uint32_t mb, const wl_split *sp,
		      wl_kernel fwd[WL_LAYER_FWD_KERNELS], wl_kernel bwd[WL_LAYER_BWD_KERNELS])
{
	layer_sizes z = sizes_of(t, mb, sp);
	memset(fwd, 0, WL_LAYER_FWD_KERNELS * sizeof *fwd);
	memset(bwd, 0, WL_LAYER_BWD_KERNELS * sizeof *bwd);
	if (llama(t)) {
		llama_fwd_kernels(&z, mats_of(t), fwd);
		llama_bwd_kernels(&z, mats_of(t), bwd);
		return;
	}
	fwd_kernels(&z, mats_of(t), fwd);
	bwd_kernels(&z, mats_of(t), bwd);
}

void wl_layer_fp8_casts(const wl_transformer *t, uint32_t mb, const wl_split *sp,
			wl_kernel fwd[WL_LAYER_FP8_CASTS], wl_kernel bwd[WL_LAYER_FP8_CASTS])
{
	static const int linear[WL_LAYER_FP8_CASTS] = { 0, 3, 4, 5 }; /* qkv, proj, up, down */
	static const char *const names[WL_LAYER_FP8_CASTS][2] = {
		{ "qkv-input-fp8-transpose", "qkv-grad-fp8-cast-transpose" },
		{ "proj-input-fp8-cast-transpose", "proj-grad-fp8-cast-transpose" },
		{ "mlp-up-input-fp8-transpose", "mlp-up-grad-fp8-cast-transpose" },
		{ "mlp-down-input-fp8-cast-transpose", "mlp-down-grad-fp8-cast-transpose" },
	};
	wl_gemm gm[WL_LAYER_GEMMS];
	wl_layer_gemms_split(t, mb, sp, gm);
	for (int i = 0; i < WL_LAYER_FP8_CASTS; i++) {
		const wl_gemm *g = &gm[linear[i]];
		double in = g->m * g->k, grad = g->m * g->n;
		bool norm_fused = linear[i] == 0 || linear[i] == 4;
		/* after a fused norm: transpose 1 + 1, less the byte the norm saves */
		fwd[i] = norm_fused ? kern(names[i][0], in, 0) : kern(names[i][0], 2 * in, 2 * in);
		bwd[i] = kern(names[i][1], 2 * grad, 2 * grad);
	}
}

void wl_cp_ring_kernels(const wl_transformer *t, uint32_t mb, const wl_split *sp,
			wl_kernel fwd[WL_CP_RING_FWD_KERNELS],
			wl_kernel bwd[WL_CP_RING_BWD_KERNELS])
{
	memset(fwd, 0, WL_CP_RING_FWD_KERNELS * sizeof *fwd);
	memset(bwd, 0, WL_CP_RING_BWD_KERNELS * sizeof *bwd);
	if (cp_of(sp) < 2 || !sp->flash || !sp->cp_ring)
		return;
	layer_sizes z = sizes_of(t, mb, sp);
	double Q = 2 * z.q, K = 2 * z.k, off = cp_of(sp) - 1; /* off-diagonal steps */
	fwd[0] = kern("cp-kv-concat", 2 * K, 2 * K);
	fwd[1] = kern("cp-q-half-contiguous", off * Q / 2, off * Q / 2);
	fwd[2] = kern("cp-out-zero", 0, Q);
	fwd[3] = kern("cp-out-correction", 2 * Q + off * Q, Q + off * Q / 2);
	bwd[0] = kern("cp-kv-buffer-copy", 2 * K, 2 * K);
	bwd[1] = kern("cp-q-out-dout-half-contiguous", off * 1.5 * Q, off * 1.5 * Q);
	bwd[2] = kern("cp-dq-copy-add", Q / 2 + (off - 1) * Q + 1.5 * Q,
		      Q / 2 + (off - 1) * Q / 2 + Q);
	bwd[3] = kern("cp-dkv-concat", (off + 1) * 2 * K, (off + 1) * 2 * K);
	bwd[4] = kern("cp-dkv-copy-add", 2 * K + (off - 1) * 4 * K + 3 * K,
		      2 * K + (off - 1) * 2 * K + 2 * K);
}

void wl_embedding_kernel_bytes(const wl_transformer *t, uint32_t mb, const wl_split *sp,
			       double *fwd_bytes, double *bwd_bytes)
{
	double n = (double)t->seq * mb / cp_of(sp) * t->hidden;
	double weights = (double)t->vocab * t->hidden / sp->tp;
	*fwd_bytes = 2 * n + 2 * n;
	*bwd_bytes = 2 * weights + (2 * n + 2 * n) + 6 * weights;
}

/* Per logit element (fp32 after the cast): forward cast 2+4, max 4,
 * subtract 4+4, exp 4+4, sum 4, divide 4+4 = 38 bytes; backward scale
 * 4+4 and cast back 4+2 = 14 bytes (Megatron-LM mpu/cross_entropy.py). */
void wl_logit_kernel_bytes(const wl_transformer *t, uint32_t mb, const wl_split *sp,
			   double *fwd_bytes, double *bwd_bytes)
{
	/* s/cp tokens a rank; the final norm's [s, b, h] split by tp too with
	 * sequence parallelism, as the layers' */
	double tp = sp->tp, tokens = (double)t->seq * mb / cp_of(sp), seq_split = sp->sp ? tp : 1;
	double n = tokens * t->hidden / seq_split, stats = (llama(t) ? 4.0 : 8.0) * tokens / seq_split;
	double logits = tokens * t->vocab / tp;
	double weights = (double)t->vocab * t->hidden / tp;
	/* the final norm: LayerNorm (apex, two passes backward) or RMSNorm (one) */
	double norm_bwd = (llama(t) ? 4 * n : 8 * n) + stats + 2 * n;
	*fwd_bytes = (2 * n + 2 * n + stats) + 38 * logits;
	*bwd_bytes = norm_bwd + 14 * logits + 6 * weights;
}

void wl_1f1b_op(uint32_t pp, uint32_t microbatches, uint32_t p, uint32_t i, bool *fwd,
		uint32_t *m)
{
	uint32_t M = microbatches, warm = pp - p - 1 < M ? pp - p - 1 : M;
	if (i < warm) {
		*fwd = true, *m = i;
	} else if (i < warm + 2 * (M - warm)) {
		uint32_t j = (i - warm) / 2;
		*fwd = (i - warm) % 2 == 0;
		*m = *fwd ? warm + j : j;
	} else {
		*fwd = false, *m = M - warm + (i - warm - 2 * (M - warm));
	}
}

uint32_t wl_pipe_warmup(uint32_t pp, uint32_t v, uint32_t M, uint32_t p)
{
	uint64_t warm = v == 1 ? pp - p - 1 : 2ull * (pp - p - 1) + (uint64_t)(v - 1) * pp;
	return warm < (uint64_t)M * v ? (uint32_t)warm : M * v;
}

void wl_interleaved_op(uint32_t pp, uint32_t v, uint32_t microbatches, uint32_t p, uint32_t i,
		       bool *fwd, uint32_t *m, uint32_t *chunk)
{
	uint32_t total = microbatches * v, warm = wl_pipe_warmup(pp, v, microbatches, p), k, j;
	if (v == 1) {
		*chunk = 0;
		return wl_1f1b_op(pp, microbatches, p, i, fwd, m);
	}
	if (i < warm)
		*fwd = true, k = i;
	else if (i < warm + 2 * (total - warm))
		*fwd = (i - warm) % 2 == 0, k = *fwd ? warm + (i - warm) / 2 : (i - warm) / 2;
	else
		*fwd = false, k = i - total;
	/* groups of pp microbatches, each through every chunk in turn */
	j = k % (pp * v);
	*m = k / (pp * v) * pp + j % pp;
	*chunk = *fwd ? j / pp : v - 1 - j / pp;
}

uint32_t wl_pipe_inflight(uint32_t pp, uint32_t v, uint32_t microbatches, uint32_t p)
{
	uint32_t M = microbatches ? microbatches : UINT32_MAX / (v ? v : 1) / 2;
	uint32_t warm = wl_pipe_warmup(pp, v, M, p);
	return warm < M * v ? warm + 1 : M * v;
}

unsigned wl_interleave_faults(const wl_model *m, uint32_t pp, uint32_t v, uint32_t microbatches)
{
	unsigned f = 0;
	if (v <= 1)
		return 0;
	if (pp < 2)
		return WL_VP_NO_PIPELINE;
	if (m->kind == WL_TRANSFORMER && m->tf.layers % ((uint64_t)pp * v))
		f |= WL_VP_LAYERS;
	if (microbatches % pp)
		f |= WL_VP_MICROBATCHES;
	return f;
}

bool wl_engine_tp_bwd_overlap(wl_engine e)
{
	return e == WL_ENGINE_MEGATRON || e == WL_ENGINE_MEGATRON_2022;
}

bool wl_engine_wgrad_fusion(wl_engine e, bool fp32_accum)
{
	return e == WL_ENGINE_MEGATRON || (e == WL_ENGINE_MEGATRON_2022 && fp32_accum);
}

bool wl_tp_overlap_fault(bool overlap, uint32_t tp, bool sp)
{
	return overlap && tp > 1 && !sp;
}

const char *wl_engine_fault(wl_engine e, uint32_t pp, uint32_t vp, bool sp, uint32_t cp,
			    uint32_t zero_stage, bool tp_overlap)
{
	if (e == WL_ENGINE_MEGATRON_2021 || e == WL_ENGINE_MEGATRON_2022)
		return cp > 1 ? "cp above 1" : sp && e == WL_ENGINE_MEGATRON_2021 ? "sequence_parallel"
		       : zero_stage >= 1 ? "zero_stage above 0" : tp_overlap ? "tp_comm_overlap" : NULL;
	if (e != WL_ENGINE_DEEPSPEED)
		return NULL;
	return vp > 1 ? "virtual_stages above 1" : cp > 1 ? "cp above 1" : sp ? "sequence_parallel"
	       : zero_stage >= 2 && pp > 1 ? "zero_stage 2 or 3 with pp above 1" : NULL;
}

bool wl_engine_reduces_after_backward(wl_engine e)
{
	return e == WL_ENGINE_MEGATRON_2021 || e == WL_ENGINE_MEGATRON_2022;
}

bool wl_cp_splits_seq(const wl_transformer *t, uint32_t cp)
{
	return cp <= 1 || t->seq % (2ull * cp) == 0;
}

double wl_layer_kv_bytes(const wl_transformer *t, uint32_t mb)
{
	return 2.0 * t->seq * mb * kv_width(t);
}

double wl_stage_boundary_bytes(const wl_transformer *t, uint32_t mb)
{
	return 2.0 * t->seq * mb * t->hidden;
}

uint32_t wl_stage_layers(const wl_model *m, uint32_t pp, uint32_t p)
{
	if (m->kind == WL_VISION)
		return 1;
	return m->tf.layers / pp + (p < m->tf.layers % pp);
}

double wl_stage_params(const wl_model *m, uint32_t pp, uint32_t p)
{
	const wl_transformer *t = &m->tf;
	double params;
	if (m->kind == WL_VISION)
		return m->vis.params;
	params = wl_stage_layers(m, pp, p) * wl_layer_params(t);
	if (p == 0 || p == pp - 1) /* embedding; tied output */
		params += (double)t->vocab * t->hidden;
	if (llama(t) && p == 0 && pp == 1) /* the untied output layer beside the embedding */
		params += (double)t->vocab * t->hidden;
	return params;
}

double wl_gpu_iter_flops(const wl_model *m, uint32_t mb, uint32_t microbatches, uint32_t tp,
			 uint32_t pp, uint32_t p, bool recompute)
{
	const wl_transformer *t = &m->tf;
	wl_gemm g[WL_LAYER_GEMMS];
	double layer = 0, logits;
	if (m->kind == WL_VISION)
		return 3.0 * mb * m->vis.fwd_flops_per_sample * microbatches;
	wl_layer_gemms(t, mb, tp, g);
	for (int i = 0; i < WL_LAYER_GEMMS; i++)
		layer += g[i].flops;
	logits = p == pp - 1 ? (double)mb * t->seq * wl_logit_fwd_flops_per_token(t) / tp : 0;
	return microbatches * (wl_stage_layers(m, pp, p) * layer * (recompute ? 4.0 : 3.0) +
			       3.0 * logits);
}
