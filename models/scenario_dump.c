/* A resolved scenario in words (dpusim check) and as YAML in SI units
 * (dpusim run --dump). The dump is itself a valid scenario: every value is
 * written with its SI unit and every profile with all its merged values, so
 * loading it again gives the same scenario. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/offload.h"
#include "models/scenario_int.h"

/* ---- YAML output helpers ---- */

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", f);
		else if (*c < 0x20)
			fprintf(f, "\\x%02x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

static void put_q(FILE *f, int ind, const char *key, double v, unit_dim dim)
{
	char buf[48];
	if (isnan(v))
		return;
	fprintf(f, "%*s%s: %s\n", ind, "", key, unit_format(v, dim, buf, sizeof buf));
}

static void put_word(FILE *f, int ind, const char *key, const char *word)
{
	fprintf(f, "%*s%s: %s\n", ind, "", key, word);
}

static void put_node(FILE *f, const yt_node *n)
{
	const char *open = n->type == YT_MAP ? "{" : "[", *close = n->type == YT_MAP ? "}" : "]";
	if (n->type == YT_SCALAR)
		return put_str(f, n->text);
	if (n->type == YT_NULL)
		return (void)fputs("null", f);
	fputs(open, f);
	for (size_t i = 0; i < n->nkids; i++) {
		if (i)
			fputs(", ", f);
		if (n->type == YT_MAP) {
			put_str(f, n->kids[i]->key);
			fputs(": ", f);
		}
		put_node(f, n->kids[i]);
	}
	fputs(close, f);
}

static void put_hw(FILE *f, int ind, const char *key, const scn_hw *hw)
{
	if (!hw->prof)
		return;
	fprintf(f, "%*s%s:\n%*sprofile: %s\n", ind, "", key, ind + 2, "", hw->name);
	for (size_t i = 0; i < profile_nfields; i++) {
		const profile_field *fd = &profile_fields[i];
		double v = profile_field_get(&hw->v, fd);
		if (fd->kind != profile_get_kind(hw->prof) || isnan(v))
			continue;
		if (fd->is_bool)
			put_word(f, ind + 2, fd->name, v != 0 ? "true" : "false");
		else if (fd->words)
			put_word(f, ind + 2, fd->name, profile_field_word(fd, v));
		else
			put_q(f, ind + 2, fd->name, v, fd->dim);
	}
}

/* ---- dump ---- */

/* The cluster's fields at indentation ind (nested ones at ind + 2). */
static void dump_cluster_at(FILE *f, int ind, const scn_cluster *c)
{
	const scn_fabric *fb = &c->fabric;
	int in = ind + 2;
	put_q(f, ind, "nodes", c->nodes, UNIT_COUNT);
	put_q(f, ind, "gpus_per_node", c->gpus_per_node, UNIT_COUNT);
	put_hw(f, ind, "gpu", &c->gpu);
	put_hw(f, ind, "cpu", &c->cpu);
	put_hw(f, ind, "host_costs", &c->host_costs);
	put_hw(f, ind, "nic", &c->nic);
	put_q(f, ind, "nics_per_node", c->nics_per_node, UNIT_COUNT);
	put_hw(f, ind, "dpu", &c->dpu);
	if (c->has_dpu)
		put_q(f, ind, "dpus_per_node", c->dpus_per_node, UNIT_COUNT);
	if (c->dpus_replace_nics)
		fprintf(f, "%*sdpus_replace_nics: true\n", ind, "");
	fprintf(f, "%*sfabric:\n", ind, "");
	put_word(f, in, "topology", scn_topology_words[fb->topology]);
	put_hw(f, in, "switch", &fb->sw);
	put_q(f, in, "tiers", fb->tiers, UNIT_COUNT);
	put_q(f, in, "oversubscription", fb->oversubscription, UNIT_NUMBER);
	put_q(f, in, "link_rate", fb->link_rate_Bps, UNIT_BYTES_PER_S);
	put_q(f, in, "hop_latency", fb->hop_latency_s, UNIT_SECONDS);
	if (!isnan(fb->mtu_bytes))
		fprintf(f, "%*smtu: %.0fB\n", in, "", fb->mtu_bytes);
	if (fb->routing_given) /* else a comment: the link layer dumped above decides again */
		put_word(f, in, "routing", scn_routing_words[fb->routing]);
	else
		fprintf(f, "%*s# routing: %s (the default for the link layer)\n", in, "",
			scn_routing_words[fb->routing]);
	if (c->local_nvme.present) {
		fprintf(f, "%*slocal_nvme:\n", ind, "");
		put_hw(f, in, "drive", &c->local_nvme.drive);
		put_q(f, in, "drives", c->local_nvme.drives, UNIT_COUNT);
		put_q(f, in, "pcie_switch", c->local_nvme.pcie_switch, UNIT_COUNT);
	}
	if (!c->storage.present)
		return;
	fprintf(f, "%*sstorage:\n", ind, "");
	put_hw(f, in, "server", &c->storage.server);
	put_q(f, in, "servers", c->storage.servers, UNIT_COUNT);
	put_word(f, in, "network", scn_stornet_words[c->storage.network]);
	put_q(f, in, "link_rate", c->storage.link_rate_Bps, UNIT_BYTES_PER_S);
	if (c->storage.dataset_bytes > 0)
		put_q(f, in, "dataset", c->storage.dataset_bytes, UNIT_BYTES);
}

static void dump_cluster(FILE *f, const scn_cluster *c)
{
	fputs("cluster:\n", f);
	dump_cluster_at(f, 2, c);
}

static void dump_shape(FILE *f, int ind, const wl_transformer *t)
{
	fprintf(f, "%*stransformer:\n", ind, "");
	put_q(f, ind + 2, "layers", t->layers, UNIT_COUNT);
	put_q(f, ind + 2, "hidden", t->hidden, UNIT_COUNT);
	put_q(f, ind + 2, "heads", t->heads, UNIT_COUNT);
	put_q(f, ind + 2, "kv_heads", t->kv_heads, UNIT_COUNT);
	put_q(f, ind + 2, "ffn", t->ffn, UNIT_COUNT);
	put_q(f, ind + 2, "ffn_mats", t->ffn_mats, UNIT_COUNT);
	put_q(f, ind + 2, "seq", t->seq, UNIT_COUNT);
	put_q(f, ind + 2, "vocab", t->vocab, UNIT_COUNT);
	put_word(f, ind + 2, "block", t->block == WL_BLOCK_LLAMA ? "llama" : "gpt");
}

static void dump_training(FILE *f, int ind, const scn_training *t)
{
	put_word(f, ind, "kind", "training");
	put_word(f, ind, "model", t->model);
	if (t->shape.kind == WL_TRANSFORMER)
		dump_shape(f, ind, &t->shape.tf);
	put_word(f, ind, "precision", scn_precision_words[t->precision]);
	put_word(f, ind, "grad_reduce_dtype", scn_precision_words[t->grad_reduce]);
	fprintf(f, "%*sparallelism:\n", ind, "");
	put_q(f, ind + 2, "tp", t->tp, UNIT_COUNT);
	put_q(f, ind + 2, "pp", t->pp, UNIT_COUNT);
	put_q(f, ind + 2, "cp", t->cp, UNIT_COUNT);
	if (t->cp_p2p) /* written only where set: dumps of other scenarios unchanged */
		put_word(f, ind + 2, "cp_comm_type", "p2p");
	if (t->dp_auto)
		fprintf(f, "%*sdp: auto  # %d\n", ind + 2, "", t->dp);
	else
		put_q(f, ind + 2, "dp", t->dp, UNIT_COUNT);
	put_q(f, ind + 2, "zero_stage", t->zero_stage, UNIT_COUNT);
	put_q(f, ind + 2, "virtual_stages", t->vp, UNIT_COUNT);
	put_word(f, ind + 2, "sequence_parallel", t->sp ? "true" : "false");
	fprintf(f, "%*sbatch:\n", ind, "");
	put_q(f, ind + 2, "global", t->global_batch, UNIT_COUNT);
	put_q(f, ind + 2, "micro", t->micro_batch, UNIT_COUNT);
	fprintf(f, "%*s# %d microbatches per iteration per pipeline\n", ind + 2, "", t->microbatches);
	if (wl_engine_reduces_after_backward(t->engine)) /* refused there: no buckets */
		fprintf(f, "%*s# gradients all-reduced once, after the backward\n", ind, "");
	else
		put_q(f, ind, "bucket", t->bucket_bytes, UNIT_BYTES);
	put_word(f, ind, "recompute", t->recompute ? "true" : "false");
	put_word(f, ind, "attention", t->flash ? "flash" : "unfused");
	put_word(f, ind, "pipeline_engine", scn_engine_words[t->engine]);
	/* resolved, as the engine's defaults set them: what the run does */
	put_word(f, ind, "grad_accum_fusion", t->wgrad_fused ? "true" : "false");
	put_word(f, ind, "tp_backward_overlap", t->tp_bwd_overlap ? "true" : "false");
	if (t->tp_overlap) { /* written only where set: dumps of other scenarios unchanged */
		put_word(f, ind, "tp_comm_overlap", "true");
		fprintf(f, "%*stp_overlap_sms:\n", ind, "");
		put_q(f, ind + 2, "proj", t->ub_proj_sms, UNIT_COUNT);
		put_q(f, ind + 2, "fc2", t->ub_fc2_sms, UNIT_COUNT);
		if (t->ub_fp8_rs)
			put_word(f, ind, "tp_overlap_fp8_buf", "true");
	}
	if (t->memory_reserve_bytes > 0)
		put_q(f, ind, "memory_reserve", t->memory_reserve_bytes, UNIT_BYTES);
	if (t->data.present) {
		fprintf(f, "%*sdata:\n", ind, "");
		put_q(f, ind + 2, "sample_bytes", t->data.sample_bytes, UNIT_BYTES);
		put_q(f, ind + 2, "decode", t->data.decode_s_per_sample, UNIT_S_PER_SAMPLE);
		put_q(f, ind + 2, "workers", t->data.workers, UNIT_COUNT);
		put_q(f, ind + 2, "prefetch", t->data.prefetch, UNIT_COUNT);
		put_q(f, ind + 2, "page_cache_hit", t->data.page_cache_hit, UNIT_FRACTION);
	}
	put_q(f, ind, "iterations", t->iterations, UNIT_COUNT);
	if (t->target_tokens > 0)
		put_q(f, ind, "target_tokens", t->target_tokens, UNIT_COUNT);
}

/* qps and tx_depth only for the bandwidth tests, which take them. */
static void dump_p2p(FILE *f, int ind, const scn_p2p *p)
{
	char buf[48];
	put_word(f, ind, "kind", "p2p");
	fprintf(f, "%*sp2p:\n", ind, "");
	put_word(f, ind + 2, "test", scn_p2p_test_words[p->test]);
	fprintf(f, "%*ssizes: [", ind + 2, "");
	for (size_t i = 0; i < p->nsizes; i++)
		fprintf(f, "%s%s", i ? ", " : "", unit_format(p->sizes_bytes[i], UNIT_BYTES, buf, sizeof buf));
	fputs("]\n", f);
	if (!scn_p2p_is_lat(p->test)) {
		put_q(f, ind + 2, "qps", p->qps, UNIT_COUNT);
		put_q(f, ind + 2, "tx_depth", p->tx_depth, UNIT_COUNT);
	}
	if (p->test == SCN_P2P_READ_BW)
		put_q(f, ind + 2, "outstanding_reads", p->out_reads, UNIT_COUNT);
	put_q(f, ind + 2, "iterations", p->iterations, UNIT_COUNT);
}

static void dump_workload(FILE *f, int ind, const scn_workload *w)
{
	char buf[48];
	if (w->kind == SCN_WL_TRAINING)
		return dump_training(f, ind, &w->train);
	if (w->kind == SCN_WL_P2P)
		return dump_p2p(f, ind, &w->p2p);
	put_word(f, ind, "kind", "collective");
	fprintf(f, "%*scollective:\n", ind, "");
	put_word(f, ind + 2, "op", scn_op_words[w->coll.op]);
	put_word(f, ind + 2, "algo", scn_algo_words[w->coll.algo]);
	fprintf(f, "%*ssizes: [", ind + 2, "");
	for (size_t i = 0; i < w->coll.nsizes; i++)
		fprintf(f, "%s%s", i ? ", " : "", unit_format(w->coll.sizes_bytes[i], UNIT_BYTES, buf, sizeof buf));
	fputs("]\n", f);
	/* Not given, ranks follow the GPUs: a sweep of cluster.nodes, or the
	 * dump reloaded with fewer nodes, must not inherit this count. */
	if (w->coll.ranks_auto)
		fprintf(f, "%*s# ranks: %d (all the GPUs the workload gets)\n", ind + 2, "", w->coll.ranks);
	else
		put_q(f, ind + 2, "ranks", w->coll.ranks, UNIT_COUNT);
	put_q(f, ind + 2, "iterations", w->coll.iterations, UNIT_COUNT);
}

static void dump_jobs(FILE *f, const scn_scenario *s)
{
	if (!s->multi_job) {
		fputs("workload:\n", f);
		return dump_workload(f, 2, &s->jobs[0].wl);
	}
	fputs("jobs:\n", f);
	for (size_t i = 0; i < s->njobs; i++) {
		const scn_job *j = &s->jobs[i];
		fprintf(f, "  - name: ");
		put_str(f, j->name);
		fputc('\n', f);
		put_q(f, 4, "nodes", j->nodes, UNIT_COUNT);
		put_word(f, 4, "placement", scn_placement_words[j->placement]);
		fputs("    workload:\n", f);
		dump_workload(f, 6, &j->wl);
	}
}

static void dump_cost_at(FILE *f, int ind, const scn_cost *k)
{
	put_q(f, ind, "gpu_price", k->gpu_usd_per_s, UNIT_USD_PER_S);
	put_q(f, ind, "dpu_price", k->dpu_usd_per_s, UNIT_USD_PER_S);
	put_q(f, ind, "energy_price", k->energy_usd_per_j, UNIT_USD_PER_J);
	put_q(f, ind, "pue", k->pue, UNIT_NUMBER);
}

/* A variant's own hardware and prices, whole, so that merged over the
 * scenario's they give the variant's; what it removed is written null. */
static void dump_own_hw(FILE *f, const scn_scenario *s, const scn_scenario *vs)
{
	const scn_cluster *b = &s->cluster, *c = &vs->cluster;
	fputs("    cluster:\n", f);
	dump_cluster_at(f, 6, c);
	if (b->has_dpu && !c->has_dpu)
		fputs("      dpu: null\n", f);
	if (b->dpus_replace_nics && !c->dpus_replace_nics)
		fputs("      dpus_replace_nics: false\n", f);
	if (b->local_nvme.present && !c->local_nvme.present)
		fputs("      local_nvme: null\n", f);
	if (b->storage.present && !c->storage.present)
		fputs("      storage: null\n", f);
	if (vs->cost.present) {
		fputs("    cost:\n", f);
		dump_cost_at(f, 6, &vs->cost);
	}
}

static void dump_variants(FILE *f, const scn_scenario *s)
{
	fputs("variants:\n", f);
	for (size_t i = 0; i < s->nvariants; i++) {
		const scn_variant *v = &s->variants[i];
		fputs("  - name: ", f);
		put_str(f, v->name);
		fputc('\n', f);
		for (int k = 0; k < OFFLOAD_NKINDS; k++)
			put_word(f, 4, offload_kind_name((offload_kind)k),
				 offload_word((offload_kind)k, offload_value(v, (offload_kind)k)));
		if (v->nccl_socket_nthreads)
			fprintf(f, "    nccl_socket_nthreads: %d\n", v->nccl_socket_nthreads);
		if (v->nccl_nsocks_perthread)
			fprintf(f, "    nccl_nsocks_perthread: %d\n", v->nccl_nsocks_perthread);
		if (s->variant_hw[i])
			dump_own_hw(f, s, s->variant_hw[i]);
	}
}

static void dump_extras(FILE *f, const scn_scenario *s)
{
	const scn_noise *z = &s->noise;
	fputs("noise:\n", f);
	put_word(f, 2, "gpu_dist", scn_slowdown_words[z->gpu_dist]);
	put_q(f, 2, "gpu_cv", z->gpu_cv, UNIT_FRACTION);
	put_q(f, 2, "slow_nodes", z->slow_node_fraction, UNIT_FRACTION);
	put_q(f, 2, "slow_factor", z->slow_node_factor, UNIT_NUMBER);
	put_q(f, 2, "os_jitter", z->os_jitter, UNIT_FRACTION);
	put_q(f, 2, "os_jitter_delay", z->os_jitter_delay_s, UNIT_SECONDS);
	if (z->nslow_gpus)
		fputs("  slow_gpus:\n", f);
	for (size_t i = 0; i < z->nslow_gpus; i++) {
		char buf[48];
		fprintf(f, "    - { gpu: %u, speed: %s }\n", z->slow_gpus[i].gpu,
			unit_format(z->slow_gpus[i].speed, UNIT_FRACTION, buf, sizeof buf));
	}
	if (s->failures.enabled) {
		fputs("failures:\n", f);
		put_q(f, 2, "node_mtbf", s->failures.node_mtbf_s, UNIT_SECONDS);
		put_q(f, 2, "gpu_mtbf", s->failures.gpu_mtbf_s, UNIT_SECONDS);
		put_q(f, 2, "nic_mtbf", s->failures.nic_mtbf_s, UNIT_SECONDS);
		put_q(f, 2, "switch_mtbf", s->failures.switch_mtbf_s, UNIT_SECONDS);
		put_q(f, 2, "checkpoint_interval", s->failures.checkpoint_interval_s, UNIT_SECONDS);
		if (s->failures.checkpoint_bytes > 0)
			put_q(f, 2, "checkpoint_size", s->failures.checkpoint_bytes, UNIT_BYTES);
		put_q(f, 2, "restart", s->failures.restart_s, UNIT_SECONDS);
		put_word(f, 2, "checkpoint_mode", scn_ckpt_mode_words[s->failures.checkpoint_mode]);
	}
	if (s->cost.present) {
		fputs("cost:\n", f);
		dump_cost_at(f, 2, &s->cost);
	}
	fputs("security:\n", f);
	put_word(f, 2, "encryption", s->security.encryption_required ? "required" : "optional");
	put_word(f, 2, "tenant_isolation", s->security.tenant_isolation ? "true" : "false");
	fputs("collectives:\n", f);
	put_word(f, 2, "protocol", scn_coll_proto_words[s->coll_proto]);
	put_word(f, 2, "ring_steps", scn_ring_steps_words[s->lump_ring_steps]);
}

static void dump_sweep(FILE *f, const scn_scenario *s)
{
	const yt_node *sw = s->src ? s->src->sweep : NULL;
	if (!s->sweep.naxes || !sw)
		return;
	fprintf(f, "sweep:  # %zu points\n  mode: %s\n", s->sweep.points, s->sweep.zip ? "zip" : "cartesian");
	for (size_t i = 0; i < sw->nkids; i++) {
		if (!strcmp(sw->kids[i]->key, "mode"))
			continue;
		fprintf(f, "  %s: ", sw->kids[i]->key);
		put_node(f, sw->kids[i]);
		fputc('\n', f);
	}
}

void scn_dump(const scn_scenario *s, FILE *f)
{
	fputs("# resolved scenario: profiles merged, every value in SI units\n", f);
	fputs("name: ", f);
	put_str(f, s->name);
	fputc('\n', f);
	if (s->description) {
		fputs("description: ", f);
		put_str(f, s->description);
		fputc('\n', f);
	}
	fprintf(f, "seed: %llu\nreplications: %d\n", s->seed, s->replications);
	dump_cluster(f, &s->cluster);
	dump_jobs(f, s);
	dump_variants(f, s);
	dump_extras(f, s);
	dump_sweep(f, s);
}

/* ---- summary ---- */

/* "1KiB", "64MiB", "1.5GB": bytes for people. */
static char *human_bytes(double b, char *buf, size_t n)
{
	static const char *const bin[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	static const char *const dec[] = { "B", "kB", "MB", "GB", "TB" };
	double x = b;
	int i = 0;
	while (i < 4 && x >= 1024 && fmod(x, 1024) == 0)
		x /= 1024, i++;
	if (i > 0 || b < 1000) {
		snprintf(buf, n, "%g%s", x, bin[i]);
		return buf;
	}
	for (x = b, i = 0; i < 4 && x >= 1000; i++)
		x /= 1000;
	snprintf(buf, n, "%.3g%s", x, dec[i]);
	return buf;
}

static void summary_workload(FILE *f, const scn_workload *w)
{
	const scn_training *t = &w->train;
	if (w->kind == SCN_WL_P2P) {
		char a[48], b[48];
		human_bytes(w->p2p.sizes_bytes[0], a, sizeof a);
		human_bytes(w->p2p.sizes_bytes[w->p2p.nsizes ? w->p2p.nsizes - 1 : 0], b, sizeof b);
		fprintf(f, "point-to-point benchmark: perftest ib_%s between node 0 and node 1, "
			"%zu sizes from %s to %s", scn_p2p_test_words[w->p2p.test], w->p2p.nsizes, a, b);
		return;
	}
	if (w->kind == SCN_WL_COLLECTIVE) {
		char a[48], b[48];
		human_bytes(w->coll.sizes_bytes[0], a, sizeof a);
		human_bytes(w->coll.sizes_bytes[w->coll.nsizes ? w->coll.nsizes - 1 : 0], b, sizeof b);
		fprintf(f, "collective benchmark: %s (%s) over %d ranks, %zu sizes from %s to %s", scn_op_words[w->coll.op],
			scn_algo_words[w->coll.algo], w->coll.ranks, w->coll.nsizes, a, b);
		return;
	}
	fprintf(f, "training %s (%s) on %d GPUs, tp %d x pp %d x dp %d, global batch %d (micro %d, %d microbatches), %d iterations",
		t->model, scn_precision_words[t->precision], w->gpus, t->tp, t->pp, t->dp, t->global_batch,
		t->micro_batch, t->microbatches, t->iterations);
	if (t->vp > 1)
		fprintf(f, ", interleaved 1F1B over %d virtual stages per pipeline rank", t->vp);
	if (t->sp)
		fprintf(f, ", sequence parallel");
	if (t->flash)
		fprintf(f, ", FlashAttention");
	if (t->cp > 1)
		fprintf(f, ", context parallel over %d ranks", t->cp);
	if (t->target_tokens > 0)
		fprintf(f, ", target %.3g tokens", t->target_tokens);
	if (t->data.present)
		fprintf(f, ", data loader %d workers", t->data.workers);
}

void scn_summary(const scn_scenario *s, FILE *f)
{
	const scn_cluster *c = &s->cluster;
	char rate[48];
	unit_format(c->fabric.link_rate_Bps * 8 / 1e9, UNIT_NUMBER, rate, sizeof rate);
	fprintf(f, "%s: %d nodes x %d %s = %d GPUs, %s host CPUs, ", s->name, c->nodes,
		c->gpus_per_node, c->gpu.name, c->nodes * c->gpus_per_node, c->cpu.name);
	if (c->dpus_replace_nics)
		fprintf(f, "%d x DPU %s per node in place of NICs (network side: %s)", c->dpus_per_node,
			c->dpu.name, c->nic.name);
	else
		fprintf(f, "%d x %s per node%s%s", c->nics_per_node, c->nic.name,
			c->has_dpu ? ", DPU " : "", c->has_dpu ? c->dpu.name : "");
	fprintf(f, "; %d-tier %s of %s at %s Gb/s per link", c->fabric.tiers,
		scn_topology_words[c->fabric.topology], c->fabric.sw.name, rate);
	if (c->fabric.topology != SCN_TOPO_SINGLE_SWITCH)
		fprintf(f, " (oversubscription %g:1, %s)", c->fabric.oversubscription,
			scn_routing_words[c->fabric.routing]);
	if (c->storage.present)
		fprintf(f, "; storage %d x %s (%s network)", c->storage.servers, c->storage.server.name,
			scn_stornet_words[c->storage.network]);
	fputs(". ", f);
	for (size_t i = 0; i < s->njobs; i++) {
		if (s->multi_job)
			fprintf(f, "%sJob '%s' on %d nodes: ", i ? " " : "", s->jobs[i].name, s->jobs[i].nodes);
		else
			fputs("Job: ", f);
		summary_workload(f, &s->jobs[i].wl);
		fputc('.', f);
	}
	fprintf(f, " Variants (%zu):", s->nvariants);
	for (size_t i = 0; i < s->nvariants; i++) {
		const scn_variant *v = &s->variants[i];
		fprintf(f, "%s %s (network %s, storage %s, crypto %s, vswitch %s%s)", i ? ";" : "",
			v->name, scn_network_name(v->network), scn_storage_path_name(v->storage),
			scn_crypto_name(v->crypto), scn_vswitch_name(v->vswitch),
			v->own_hw ? "; hardware and prices of its own" : "");
	}
	if (s->sweep.naxes) {
		fprintf(f, ". Sweep: %zu points (%s of", s->sweep.points, s->sweep.zip ? "zip" : "cartesian");
		for (size_t a = 0; a < s->sweep.naxes; a++)
			fprintf(f, "%s %s [%zu]", a ? "," : "", s->sweep.axes[a].key, s->sweep.axes[a].nvalues);
		fputc(')', f);
	} else {
		fputs(". Sweep: none (1 point)", f);
	}
	fprintf(f, ". Seed %llu, %d replication%s.\n", s->seed, s->replications, s->replications == 1 ? "" : "s");
}
