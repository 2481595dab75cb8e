/* From a scenario's training job and an offload variant to train_config. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/offload.h"
#include "models/train.h"
#include "sim/err.h"

/* PyTorch DistributedDataParallel's default gradient bucket, 25 MiB
 * (torch.nn.parallel.DistributedDataParallel, bucket_cap_mb=25). */
#define DEFAULT_BUCKET_BYTES (25.0 * 1024 * 1024)

/* The loader reads from the node's own NVMe drives (models/stor.h): their
 * reads at min(drive read, drive link) each, striped; through the host
 * bounce buffer (storage: host) or peer to peer into the GPU (gds). */
static int local_of(const scn_scenario *s, const scn_variant *v, const setup_host *h,
		    train_config *c, diag *d, diag *notes)
{
	const scn_local_nvme *l = &s->cluster.local_nvme;
	const profile_storage *drv = &l->drive.v.storage;
	double link = setup_pcie_Bps(drv->pcie_gen, drv->pcie_lanes);
	(void)h;
	if (v->storage == SCN_STOR_DPU_SNAP || v->storage == SCN_STOR_HOST_RDMA) {
		diag_add(d, NULL, 0, 0, "storage: %s reads from the storage servers; with "
			 "cluster.local_nvme the loader reads the node's own drives (host or gds)",
			 v->storage == SCN_STOR_DPU_SNAP ? "dpu-snap" : "host-rdma");
		return SIM_EINVAL;
	}
	if (!(link > 0) || !c->fabric.pcie_Bps) {
		diag_add(d, NULL, 0, 0, "cluster.local_nvme: needs the PCIe generation and lanes of "
			 "the drive, GPU and NIC profiles (the drives share the GPUs' PCIe switches)");
		return SIM_EINVAL;
	}
	c->local_Bps = l->drives * fmin(drv->bw_Bps, link);
	/* The drives' IO rate bounds the reads, one IO per sample
	 * (train_io_capped_Bps). */
	c->local_iops = profile_has(drv->iops) ? l->drives * drv->iops : 0;
	c->local_switch = (uint32_t)l->pcie_switch;
	c->storage_direct = v->storage == SCN_STOR_GDS;
	if (notes) {
		diag_add(notes, NULL, 0, 0, "local NVMe: host CPU work per IO not modelled (no "
			 "published figure); per-IO latency not a bound");
		if (!c->local_iops)
			diag_add(notes, NULL, 0, 0, "local NVMe: drive profile '%s' gives no 'iops': "
				 "drive IOPS not a bound", l->drive.name);
		diag_add(notes, NULL, 0, 0, "local NVMe: peer-to-peer through the root complex bound "
			 "only by the PCIe links (no published root-complex P2P rate)");
	}
	return SIM_OK;
}

/* The storage protocol's packets on the fabric's link layer (models/wire.h):
 * NFS over TCP (storage: host), NVMe-oF or GPUDirect Storage over RDMA;
 * *frac their payload share of a storage link, and c->storage_wire_w what a
 * byte read takes of a compute NIC link, whose capacity is the network
 * transport's payload share (setup_fabric). */
static int storage_wire(const scn_scenario *s, const scn_variant *v, train_config *c,
			double *frac, diag *d)
{
	wire_frame net, stor;
	wire_transport t = v->storage == SCN_STOR_HOST ? WIRE_TCP : WIRE_RDMA;
	int rc = setup_wire(s, v, WIRE_WRITE, &net, d);
	if (!rc)
		rc = setup_wire_for(s, t, WIRE_WRITE, &stor, d);
	if (rc)
		return rc;
	*frac = wire_payload_frac(&stor);
	c->storage_wire_w = wire_payload_frac(&net) / *frac;
	return SIM_OK;
}

static int storage_of(const scn_scenario *s, const scn_variant *v, const setup_host *h,
		      train_config *c, diag *d, diag *notes)
{
	const scn_storage *st = &s->cluster.storage;
	double servers = st->servers > 0 ? st->servers : 1, frac = 1;
	/* a server's link carries the protocol's payload share of its rate */
	double link = st->link_rate_Bps;
	offload_storage path;
	int rc;
	c->storage_write_Bps = NAN;
	if (st->present && (rc = storage_wire(s, v, c, &frac, d)))
		return rc;
	link *= frac;
	if (st->present && profile_has(st->server.v.storage.write_bw_Bps)) {
		/* Checkpoints are writes: every server's write bandwidth, capped by
		 * its link like the reads. */
		c->storage_write_Bps = st->server.v.storage.write_bw_Bps * servers;
		if (link > 0 && link * servers < c->storage_write_Bps)
			c->storage_write_Bps = link * servers;
	} else if (st->present && notes) {
		diag_add(notes, NULL, 0, 0, "cluster.storage: profile '%s' gives no 'write_bw': "
			 "checkpoint writes not modelled", st->server.name);
	}
	if (c->data && s->cluster.local_nvme.present)
		return local_of(s, v, h, c, d, notes);
	if (!c->data || !st->present)
		return SIM_OK;
	if (!profile_has(st->server.v.storage.bw_Bps)) {
		diag_add(d, NULL, 0, 0, "cluster.storage: profile '%s' gives no 'bw'",
			 st->server.name);
		return SIM_EINVAL;
	}
	c->storage_servers = (uint32_t)(st->servers > 0 ? st->servers : 1);
	c->storage_Bps = st->server.v.storage.bw_Bps * c->storage_servers;
	if (link > 0 && link * c->storage_servers < c->storage_Bps)
		c->storage_Bps = link * c->storage_servers;
	if (st->network == SCN_STORNET_DEDICATED) {
		/* ASSUMPTION (docs/scenarios.md): one port of the cluster's NIC
		 * profile per node on the storage network, not shared with the
		 * compute fabric. */
		const profile_nic *nic = &s->cluster.nic.v.nic;
		if (!profile_has(nic->port_rate_Bps)) {
			diag_add(d, NULL, 0, 0, "cluster.storage: a dedicated storage network needs "
				 "the NIC profile's 'port_rate'");
			return SIM_EINVAL;
		}
		c->storage_nic_Bps = nic->port_rate_Bps * frac;
	}
	/* Every server's IO rate bounds the loader's reads, one IO per sample
	 * (train_world.c io_capped_Bps). */
	c->storage_iops = profile_has(st->server.v.storage.iops)
				  ? st->server.v.storage.iops * c->storage_servers : 0;
	if (!c->storage_iops && notes)
		diag_add(notes, NULL, 0, 0, "cluster.storage: profile '%s' gives no 'iops': server "
			 "IOPS not a bound", st->server.name);
	c->storage_io_lat_s = profile_has(st->server.v.storage.io_latency_s)
				      ? st->server.v.storage.io_latency_s : 0;
	if ((rc = offload_storage_path(s, v, h->freq_Hz, &path, d, notes)))
		return rc;
	c->storage_core_s_per_byte = path.core_s_per_byte;
	/* one IO per sample, as the servers; a node's engines serve its job's
	 * reads alone, so the bound is folded in here */
	c->storage_engine_Bps = train_io_capped_Bps(path.engine_Bps, path.engine_iops,
						    c->sample_bytes);
	c->storage_direct = path.direct;
	return SIM_OK;
}

/* NCCL's channels for the tensor-parallel all-reduce on NVLink (train.c
 * tp_allreduce_s): the GPU profile's nccl_channels, NCCL's count on one
 * node of 8 such GPUs, taken for a tensor-parallel group of any size on the
 * node (ASSUMPTION: no published log of a smaller group). Without it, one
 * per NIC, as the data-parallel rings, and a note says so
 * (setup_nvlink_channels, which a benchmark on one node takes too). */
static void tp_channels_of(const scn_scenario *s, train_config *c, diag *notes)
{
	if (c->tp < 2)
		return;
	c->tp_channels = setup_nvlink_channels(s, "tensor-parallel all-reduce",
					       c->fabric.nics_per_node, notes);
}

/* The node's page cache serves data.page_cache_hit of the loader's reads
 * from host memory, when the loader reads through the host's file system
 * (storage host or dpu-snap, or node-local drives without GDS). GDS reads
 * bypass it: cuFile needs the file opened with O_DIRECT (cuda-python
 * cufile.handle_register: "the file needs to be opened in O_DIRECT mode to
 * support GPUDirect Storage"; Linux open(2), O_DIRECT: "Try to minimize
 * cache effects of the I/O to and from this file"). */
static void page_cache_of(const scn_training *t, train_config *c, diag *notes)
{
	double h = t->data.present ? t->data.page_cache_hit : 0;
	c->page_cache_hit = 0;
	if (!(h > 0) || !(c->storage_Bps > 0 || c->local_Bps > 0))
		return;
	if (c->storage_direct) {
		if (notes)
			diag_add(notes, NULL, 0, 0, "page cache: GDS reads bypass it (O_DIRECT), so "
				 "page_cache_hit %.3g does not apply", h);
		return;
	}
	c->page_cache_hit = h;
	if (notes)
		diag_add(notes, NULL, 0, 0, "page cache: %.3g of the reads served from host memory, "
			 "spread evenly; their copy to the GPU is not charged", h);
}

static void noise_of(const scn_scenario *s, uint32_t gpus, train_config *c)
{
	const scn_noise *n = &s->noise;
	c->noise = (noise_params){ .gpus = gpus, .gpus_per_node = c->fabric.gpus_per_node };
	if (n->gpu_dist != SCN_SLOW_NONE && n->gpu_cv > 0)
		noise_sigma_for_cv(n->gpu_cv, &c->noise.gpu_sigma);
	if (n->slow_node_fraction > 0) {
		c->noise.slow_node_frac = n->slow_node_fraction;
		c->noise.slow_node_factor = n->slow_node_factor >= 1 ? n->slow_node_factor : 1;
	}
	c->os_jitter = n->os_jitter;
	c->nslow_gpus = (uint32_t)n->nslow_gpus;
	memcpy(c->slow_gpus, n->slow_gpus, n->nslow_gpus * sizeof *n->slow_gpus);
}

/* Says where unfused attention's GEMMs do not run at a rate measured at
 * the model's head dim: on the roofline (neither measured), or at the
 * nearer measured head dim (gpu_attn_gemm_eff holds, never extends). */
static void unfused_attention_note(const gpu_spec *g, const wl_transformer *tf, const char *gpu,
				   diag *notes)
{
	double d = tf->heads ? (double)tf->hidden / tf->heads : 0;
	bool lo = g->attn_gemm_eff_d64 > 0, hi = g->attn_gemm_eff_d128 > 0;
	if (!lo && !hi)
		diag_add(notes, NULL, 0, 0, "gpu: unfused attention's score and value GEMMs on the "
			 "roofline (no measured attn_gemm_eff_d64 or attn_gemm_eff_d128 for '%s')", gpu);
	else if (lo != hi && d != (lo ? GPU_ATTN_D_LO : GPU_ATTN_D_HI))
		diag_add(notes, NULL, 0, 0, "gpu: unfused attention's GEMMs at head dim %g run at the "
			 "rate measured at head dim %d (the only one '%s' gives)", d,
			 lo ? GPU_ATTN_D_LO : GPU_ATTN_D_HI, gpu);
	else if (lo && hi && (d < GPU_ATTN_D_LO || d > GPU_ATTN_D_HI))
		diag_add(notes, NULL, 0, 0, "gpu: unfused attention's GEMMs at head dim %g run at the "
			 "rate measured at head dim %d ('%s' is measured at %d and %d only)", d,
			 d < GPU_ATTN_D_LO ? GPU_ATTN_D_LO : GPU_ATTN_D_HI, gpu, GPU_ATTN_D_LO,
			 GPU_ATTN_D_HI);
}

int train_config_of(const scn_scenario *s, const scn_job *job, const scn_variant *v,
		    uint64_t seed, train_config *c, diag *d, diag *notes)
{
	const scn_training *t = &job->wl.train;
	uint32_t gpus = (uint32_t)(t->tp * t->cp * t->pp * t->dp);
	int rc;
	*c = (train_config){
		.model = t->shape, .tp = (uint32_t)t->tp, .pp = (uint32_t)t->pp,
		.dp = (uint32_t)t->dp, .micro_batch = (uint32_t)t->micro_batch,
		.microbatches = (uint32_t)t->microbatches, .recompute = t->recompute,
		.tp_bwd_overlap = t->tp_bwd_overlap, .wgrad_fused = t->wgrad_fused,
		.tp_overlap = t->tp_overlap, .ub_proj_sms = (uint32_t)t->ub_proj_sms,
		.ub_fc2_sms = (uint32_t)t->ub_fc2_sms, .ub_fp8_rs = t->ub_fp8_rs,
		.vp = (uint32_t)(t->vp > 1 ? t->vp : 1), .sp = t->sp,
		.cp = (uint32_t)(t->cp > 1 ? t->cp : 1), .flash = t->flash, .cp_p2p = t->cp_p2p,
		.zero_stage = (uint32_t)t->zero_stage, .engine = t->engine,
		.tied_embedding = t->shape.kind == WL_TRANSFORMER &&
				  t->shape.tf.block == WL_BLOCK_GPT,
		.grad_bytes_per_param = scn_grad_bytes(t),
		.param_bytes_per_param = scn_param_bytes(t),
		.bucket_bytes = t->bucket_bytes > 0 ? t->bucket_bytes : DEFAULT_BUCKET_BYTES,
		.iterations = (uint32_t)(t->iterations > 0 ? t->iterations : 3),
		.warmup = 1, .framework_cores_per_gpu = 1, .seed = seed,
	};
	if (c->model.kind == WL_VISION && (c->tp > 1 || c->pp > 1)) {
		diag_add(d, NULL, 0, 0, "model '%s' is a vision model: data parallel only "
			 "(tp and pp must be 1)", t->model);
		return SIM_EINVAL;
	}
	if ((uint32_t)s->cluster.gpus_per_node % c->tp) {
		diag_add(d, NULL, 0, 0, "tp %u must divide gpus_per_node %d: tensor parallelism "
			 "stays inside a node's NVLink domain", c->tp, s->cluster.gpus_per_node);
		return SIM_EINVAL;
	}
	if ((rc = setup_host_of(s, &c->host, d)) ||
	    (rc = setup_gpu(s, t->precision, &c->gpu, d, notes)) ||
	    (rc = setup_fabric(s, v, gpus, &c->fabric, d)) ||
	    (rc = setup_transport(s, v, &c->host, &c->coll.transport, d, notes)) ||
	    (rc = offload_net_costs(s, v, c->host.freq_Hz, &c->net_costs, d, NULL)))
		return rc;
	/* DeepSpeed's FP16_Optimizer (runtime/fp16/fused_optimizer.py v0.5.4,
	 * step, without ZeRO) moves 70 bytes a parameter where Megatron-LM's
	 * optimizer moves the 52 of gpu_optimizer_bytes: has_overflow first
	 * sums each 16-bit gradient in fp32 (_has_inf_or_nan: x.float().sum(),
	 * 2 + 4 + 4), and the fp32 gradients are flattened into one buffer
	 * (_flatten_dense_tensors, 4 + 4) before the norm, unscale, Adam and
	 * copy back that both do. */
	if (t->engine == WL_ENGINE_DEEPSPEED && t->precision == SCN_FP16 && t->zero_stage == 0)
		c->gpu.opt_bytes += (2 + 4 + 4) + (4 + 4);
	if (notes && t->flash && !(c->gpu.flash_fwd_flops > 0 && c->gpu.flash_bwd_flops > 0))
		diag_add(notes, NULL, 0, 0, "gpu: FlashAttention runs as GEMMs at eff_max (no measured "
			 "flash_fwd_flops and flash_bwd_flops for '%s')", s->cluster.gpu.name);
	else if (notes && t->flash && t->shape.tf.hidden != GPU_FLASH_HEAD_DIM * t->shape.tf.heads)
		diag_add(notes, NULL, 0, 0, "gpu: FlashAttention runs as GEMMs at eff_max (its measured "
			 "rates are for head dim %d, this model's is %u)", GPU_FLASH_HEAD_DIM,
			 t->shape.tf.heads ? t->shape.tf.hidden / t->shape.tf.heads : 0);
	if (notes && !t->flash && t->shape.kind == WL_TRANSFORMER)
		unfused_attention_note(&c->gpu, &t->shape.tf, s->cluster.gpu.name, notes);
	c->fabric.seed = seed;
	c->coll.seed = seed;
	c->coll.lump_ring_steps = s->lump_ring_steps;
	c->coll.proto = setup_coll_proto(s); /* the scenario's collective model, as its benchmarks */
	c->coll.nccl_cc = setup_nccl_cc(s, notes);
	c->coll.nccl_pci_GBps = setup_nccl_pci_GBps(s);
	tp_channels_of(s, c, notes);
	/* A data-parallel (or other) group inside one node runs on the node's
	 * NVLink channels, as the tensor-parallel collectives, not one per NIC
	 * (coll.c group_channels); a GPU profile without nccl_channels leaves
	 * it at one per NIC, as before (noted only for tp > 1, tp_channels_of) */
	c->coll.node_channels = setup_nvlink_channels(s, NULL, c->fabric.nics_per_node, NULL);
	if (t->data.present) {
		c->data = true;
		c->sample_bytes = t->data.sample_bytes;
		c->decode_core_s = t->data.decode_s_per_sample;
		c->workers = (uint32_t)(t->data.workers > 0 ? t->data.workers : 1);
		c->prefetch = (uint32_t)(t->data.prefetch > 0 ? t->data.prefetch : 2);
		if (c->prefetch > c->microbatches)
			c->prefetch = c->microbatches;
	}
	if ((rc = storage_of(s, v, &c->host, c, d, notes)))
		return rc;
	page_cache_of(t, c, notes);
	noise_of(s, gpus, c);
	return SIM_OK;
}

/* Packed jobs first, in job order, each on the lowest free nodes (so
 * consecutive nodes, sharing leaf switches); then spread jobs, in job
 * order, each on n nodes evenly spaced over the nodes still free: the
 * i-th of F free nodes taken is free[i * F / n]. */
int train_place_jobs(const scn_scenario *s, uint32_t *node_of, diag *d)
{
	uint32_t total = 0, nodes = (uint32_t)s->cluster.nodes, off[SCN_MAX_JOBS];
	uint8_t *taken = calloc(nodes ? nodes : 1, 1);
	uint32_t *free_nodes = malloc((nodes ? nodes : 1) * sizeof *free_nodes);
	int rc = taken && free_nodes ? SIM_OK : SIM_ENOMEM;
	for (size_t j = 0; j < s->njobs; j++)
		off[j] = total, total += (uint32_t)s->jobs[j].nodes;
	if (!rc && total > nodes) {
		diag_add(d, NULL, 0, 0, "the jobs take %u nodes, but the cluster has %u", total, nodes);
		rc = SIM_EINVAL;
	}
	for (int spread = 0; spread < 2 && !rc; spread++)
		for (size_t j = 0; j < s->njobs; j++) {
			uint32_t n = (uint32_t)s->jobs[j].nodes, nfree = 0;
			if ((s->jobs[j].placement == SCN_PLACE_SPREAD) != spread)
				continue;
			for (uint32_t k = 0; k < nodes; k++)
				if (!taken[k])
					free_nodes[nfree++] = k;
			for (uint32_t i = 0; i < n; i++) {
				uint32_t k = spread ? free_nodes[(uint64_t)i * nfree / n] : free_nodes[i];
				node_of[off[j] + i] = k;
				taken[k] = 1;
			}
		}
	free(taken);
	free(free_nodes);
	return rc;
}
