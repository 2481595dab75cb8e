/* What the training jobs of one simulation share (the engine, fabric,
 * collectives, storage servers, each node's host cores and DPU engines) and
 * the collective benchmarks that run beside them. */
#include "models/train_int.h"

/* Host cores a node of job c leaves to the network and storage stacks
 * beside its framework's. The loader's workers hold none of them: a worker
 * takes a core only while it decodes, and then as a flow on the same
 * resource (decode_start, train_loader.c), so the cores go to the stacks,
 * the decodes or both by what each asks. Before, every worker held a core
 * of its own for the whole run, so more workers left the stacks fewer
 * cores: an NFS-bound job ran twice as slow with 4 workers as with 2
 * (issue 16's "more capability is never slower"). */
static double stack_cores(const train_config *c)
{
	double cores = c->host.cores * (1 - c->os_jitter);
	double stack = cores - c->framework_cores_per_gpu * c->fabric.gpus_per_node;
	return stack < 1 ? 1 : stack;
}

/* The host-CPU bound on a node's network traffic, in and out together, at
 * the mean of the send and receive costs (setup_stack_cap_Bps); 0: none. */
double train_net_cpu_cap_Bps(const train_config *c)
{
	return setup_stack_cap_Bps(&c->net_costs, stack_cores(c));
}

/* A device's byte rate under its IO rate: the loader reads one IO per
 * sample (a dataset of one file per sample, as ImageNet's JPEGs, read by
 * the loader one sample at a time), so iops IO/s move at most
 * iops x io_bytes bytes/s; small samples make the device IOPS-bound, large
 * ones leave its bandwidth binding (a roofline: the datasheet's small-IO
 * IOPS taken as independent of the IO size). A sample larger than the
 * protocol's largest IO (Linux NFS client: 1 MiB, NFS_MAX_FILE_IO_SIZE in
 * the kernel's include/linux/nfs_xdr.h) is several IOs, but any IO over
 * Bps / iops bytes (30 kB for a DDN AI400X2, 4.2 kB for a Micron 9200 PRO)
 * leaves the bandwidth binding either way. */
double train_io_capped_Bps(double Bps, double iops, double io_bytes)
{
	return iops > 0 && io_bytes > 0 ? fmin(Bps, iops * io_bytes) : Bps;
}

/* Adds a resource of class cls (flow_bound's account of what held each
 * transfer). */
static int add_res(world *w, double cap_Bps, fab_class cls, uint32_t *id)
{
	int rc = flow_res_add(w->net, cap_Bps, id);
	return rc ? rc : flow_res_set_class(w->net, *id, (uint8_t)cls);
}

/* Node n's decoders (host cores), storage ingress and client work, and the
 * host-stack and DPU-engine capacities on its network paths, sized by the
 * configuration of the job it belongs to. */
static int world_node(world *w, uint32_t n)
{
	const train_config *c = w->node_cfg[n];
	double stack = stack_cores(c), cap = train_net_cpu_cap_Bps(c);
	uint32_t id, cpu = UINT32_MAX;
	int rc = 0;
	w->stor_res[n] = w->stor_bounce[n] = w->local_drv[n] = UINT32_MAX;
	w->stor_w[n] = 1;
	if (!(w->decoders[n] = station_new(w->eng, c->workers ? c->workers : 1)))
		return SIM_ENOMEM;
	if (cap > 0 && !(rc = add_res(w, cap, FAB_CLS_HOST_CORES, &cpu)))
		rc = fab_attach(w->f, n, cpu);
	if (!rc && c->net_costs.engine_cap_Bps > 0 &&
	    !(rc = add_res(w, c->net_costs.engine_cap_Bps, FAB_CLS_ENGINE, &id)))
		rc = fab_attach(w->f, n, id);
	/* The stack cores are one contended station (issue 5: "when it
	 * saturates, everything it serves slows down"): the storage client
	 * crosses the network stack's resource at its own cost per byte, so
	 * reads and gradients share the cores max-min fairly on the cycles
	 * they take (flow.h's weights). In cycles/s the resource would be
	 * stack cores x frequency, crossed at cycles per byte; the fabric puts
	 * it on network paths at weight 1, so it stays in network bytes
	 * (cycles/s over the stack's mean cycles per byte: cap) and a storage
	 * byte weighs its cost over that mean: capacity and weights divided
	 * by one number, the same rates. Without a network-stack cost (RDMA)
	 * the cores serve the storage client alone, sized in its bytes. */
	if (!rc && c->storage_core_s_per_byte > 0 && cpu != UINT32_MAX) {
		w->stor_res[n] = cpu;
		w->stor_w[n] = c->storage_core_s_per_byte * cap / stack;
	} else if (!rc && c->storage_core_s_per_byte > 0) {
		rc = add_res(w, stack / c->storage_core_s_per_byte, FAB_CLS_HOST_CORES,
			     &w->stor_res[n]);
	} else if (!rc && c->storage_engine_Bps > 0) {
		rc = add_res(w, c->storage_engine_Bps, FAB_CLS_ENGINE, &w->stor_res[n]);
	}
	/* The cores the loader's decodes share, in that resource's units: the
	 * network stack's (cap for `stack` cores), else the storage client's
	 * (one core moves 1 / storage_core_s_per_byte bytes a second). With
	 * neither, nothing else runs there and the decoders are a station. */
	w->cores_res[n] = UINT32_MAX;
	if (!rc && c->data && cpu != UINT32_MAX) {
		w->cores_res[n] = cpu;
		w->core_units[n] = cap / stack;
	} else if (!rc && c->data && c->storage_core_s_per_byte > 0 &&
		   w->stor_res[n] != UINT32_MAX) {
		w->cores_res[n] = w->stor_res[n];
		w->core_units[n] = 1 / c->storage_core_s_per_byte;
	}
	/* A dedicated storage network enters the node through its own NIC;
	 * otherwise reads share the compute NICs (stor_ingress). */
	w->stor_in[n] = UINT32_MAX;
	if (!rc && c->storage_nic_Bps > 0)
		rc = add_res(w, c->storage_nic_Bps, FAB_CLS_NIC, &w->stor_in[n]);
	/* Without GPUDirect Storage every byte read is written into a host
	 * bounce buffer by the NIC (or drive) and read out of it by the copy
	 * to the GPU: two passes over the node's host memory, the fabric's
	 * resource that host-tcp and rdma transfers cross too (BOUNCE_CROSSINGS;
	 * UINT32_MAX, not a bound, where the CPU profile gives no mem_bw). */
	if (!rc && (c->storage_Bps > 0 || c->local_Bps > 0) && !c->storage_direct)
		w->stor_bounce[n] = fab_host_mem(w->f, n);
	if (!rc && c->local_Bps > 0)
		rc = add_res(w, train_io_capped_Bps(c->local_Bps, c->local_iops, c->sample_bytes),
			     FAB_CLS_STORAGE, &w->local_drv[n]);
	return rc;
}

/* Every node's resources, then the storage servers (those of the first job
 * that reads from storage: the jobs share the scenario's storage). */
static int world_nodes(world *w, const train_config *const *cfgs, uint32_t njobs)
{
	const train_config *sc = NULL;
	double io_bytes = INFINITY, cap;
	int rc = 0;
	w->decoders = calloc(w->nodes, sizeof *w->decoders);
	w->stor_res = malloc(w->nodes * sizeof *w->stor_res);
	w->stor_w = malloc(w->nodes * sizeof *w->stor_w);
	w->stor_in = malloc(w->nodes * sizeof *w->stor_in);
	w->stor_bounce = malloc(w->nodes * sizeof *w->stor_bounce);
	w->local_drv = malloc(w->nodes * sizeof *w->local_drv);
	w->node_core_s = calloc(w->nodes, sizeof *w->node_core_s);
	w->node_bytes = calloc(w->nodes, sizeof *w->node_bytes);
	w->node_snap_bytes = calloc(w->nodes, sizeof *w->node_snap_bytes);
	w->cores_res = malloc(w->nodes * sizeof *w->cores_res);
	w->core_units = calloc(w->nodes, sizeof *w->core_units);
	w->dec_wait = calloc(w->nodes, sizeof *w->dec_wait);
	if (!w->decoders || !w->stor_res || !w->stor_w || !w->stor_in || !w->stor_bounce ||
	    !w->local_drv || !w->node_core_s || !w->node_bytes || !w->node_snap_bytes ||
	    !w->cores_res || !w->core_units || !w->dec_wait)
		return SIM_ENOMEM;
	for (uint32_t n = 0; n < w->nodes && !rc; n++)
		rc = world_node(w, n);
	for (uint32_t j = 0; j < njobs && !sc; j++)
		if (cfgs[j]->storage_Bps > 0)
			sc = cfgs[j];
	if (!sc)
		return rc;
	/* Each server's IO rate bounds it as a byte rate at the read size
	 * (train_io_capped_Bps). Jobs reading samples of different sizes share the
	 * servers: the bound takes the smallest, so the servers never exceed
	 * their IOPS (pessimistic for the larger reads of such a mix). */
	for (uint32_t j = 0; j < njobs; j++)
		if (cfgs[j]->storage_Bps > 0 && cfgs[j]->sample_bytes > 0)
			io_bytes = fmin(io_bytes, cfgs[j]->sample_bytes);
	cap = train_io_capped_Bps(sc->storage_Bps, sc->storage_iops, isfinite(io_bytes) ? io_bytes : 0);
	w->stor_servers = sc->storage_servers;
	for (uint32_t k = 0; k < sc->storage_servers && !rc; k++) {
		uint32_t id;
		rc = add_res(w, cap / sc->storage_servers, FAB_CLS_STORAGE, &id);
		if (k == 0)
			w->stor_servers0 = id;
	}
	return rc;
}

/* The shared machinery over `nodes` nodes: fabric, transport and
 * collectives of job 0's configuration (the jobs run one scenario under
 * one variant), node resources sized by each node's job. */
int train_world_build(world *w, uint32_t nodes, const train_config *const *cfgs,
		       uint32_t njobs)
{
	const train_config *c = cfgs[0];
	fab_config fc = c->fabric;
	coll_config cc = c->coll;
	int rc;
	w->nodes = fc.nodes = nodes;
	w->gpn = fc.gpus_per_node;
	/* No per-hop CPU callback (transport.cpu stays NULL): training counts a
	 * collective's host work once per collective (count_dp_hops), and a
	 * callback that did nothing still walked every hop of every ring step
	 * (coll.c's launch), O(replicas) per step: a quarter of host-tcp's
	 * time at 16k GPUs (issue 14). */
	cc.transport.cpu = NULL;
	if (!(w->eng = sim_engine_new()) || !(w->net = flow_net_new(w->eng)))
		return SIM_ENOMEM;
	/* Tag 0 for what no job owns, then TRAIN_NFLOWS per job (train_tag). */
	if ((rc = fab_new(&fc, w->net, &w->f)) ||
	    (rc = coll_ctx_new(w->eng, w->net, w->f, &cc, &w->coll)) ||
	    (rc = flow_bound_init(w->net, 1 + njobs * TRAIN_NFLOWS, FAB_NCLASSES)))
		return rc;
	return world_nodes(w, cfgs, njobs);
}

void train_world_teardown(world *w)
{
	/* Stations and collectives hold engine events: free them first. */
	if (w->decoders)
		for (uint32_t n = 0; n < w->nodes; n++)
			station_free(w->decoders[n]);
	free(w->decoders);
	while (w->xfers) { /* a run sim_fail stopped: its transfers never arrived */
		xfer *x = w->xfers;
		w->xfers = x->next;
		free(x);
	}
	coll_ctx_free(w->coll);
	fab_free(w->f);
	flow_net_free(w->net);
	sim_engine_free(w->eng);
	free(w->node_cfg);
	free(w->stor_res);
	free(w->stor_w);
	free(w->stor_in);
	free(w->stor_bounce);
	free(w->local_drv);
	free(w->node_core_s);
	free(w->node_bytes);
	free(w->node_snap_bytes);
	free(w->cores_res);
	free(w->core_units);
	for (uint32_t n = 0; w->dec_wait && n < w->nodes; n++)
		free(w->dec_wait[n].item);
	free(w->dec_wait);
	for (uint32_t k = 0; w->bench && k < w->nbench; k++)
		free(w->bench[k].ranks);
	free(w->bench);
}

/* ---- collective benchmarks beside the jobs ---- */

static void bench_done(sim_engine *eng, void *obj, uint64_t data);

void train_bench_start(bench_run *br)
{
	const train_bench *b = br->b;
	coll_params cp = { .op = b->op, .algo = b->algo, .bytes = b->bytes[br->size],
			   .ranks = br->ranks, .nranks = b->ranks };
	int rc;
	if (!br->w->jobs_left)
		br->b->after++;
	if ((rc = coll_start(br->w->coll, &cp, &br->res, bench_done, br, 0)) && !br->w->err) {
		diag_add(br->w->d, NULL, 0, 0, "collective benchmark: %s of %llu bytes on %u "
			 "ranks: %s", coll_op_name(b->op), (unsigned long long)cp.bytes, b->ranks,
			 sim_strerror(rc));
		br->w->err = rc;
	}
}

/* One collective over: count it, then the next of the pass, or a new pass
 * while a training job still runs. */
static void bench_done(sim_engine *eng, void *obj, uint64_t data)
{
	bench_run *br = obj;
	train_bench *b = br->b;
	(void)eng, (void)data;
	b->time_s[br->size] += sim_time_to_s(br->res.time_ps); /* as coll_run reports it */
	b->count[br->size]++;
	b->used[br->size] = br->res.algo;
	if (br->w->err)
		return;
	if (++br->it == b->iterations) {
		br->it = 0;
		if (++br->size == b->nsizes)
			br->size = 0, br->passes++;
	}
	if (br->passes && !br->w->jobs_left)
		return;
	train_bench_start(br);
}

/* A benchmark's ranks and node configuration (job 0's hosts, the data
 * loader and storage client idle, the benchmark's own cores kept). */
int train_bench_prepare(world *w, const train_config *c0, train_bench *b, bench_run *br)
{
	*br = (bench_run){ .w = w, .b = b, .node_cfg = *c0 };
	br->node_cfg.data = false;
	br->node_cfg.workers = 0;
	br->node_cfg.framework_cores_per_gpu = b->cores_per_gpu;
	br->node_cfg.storage_Bps = br->node_cfg.local_Bps = 0;
	br->node_cfg.storage_core_s_per_byte = br->node_cfg.storage_engine_Bps = 0;
	br->node_cfg.storage_nic_Bps = 0;
	if (!b->nsizes || !b->iterations || !b->ranks || b->nsizes > SCN_MAX_SIZES ||
	    b->nodes != (b->ranks + w->gpn - 1) / w->gpn) {
		diag_add(w->d, NULL, 0, 0, "collective benchmark: nothing to run, or its %u ranks "
			 "do not fill its %u nodes of %u GPUs", b->ranks, b->nodes, w->gpn);
		return SIM_EINVAL;
	}
	if (!(br->ranks = malloc(b->ranks * sizeof *br->ranks)))
		return SIM_ENOMEM;
	for (uint32_t r = 0; r < b->ranks; r++)
		br->ranks[r] = b->node_of[r / w->gpn] * w->gpn + r % w->gpn;
	for (uint32_t i = 0; i < b->nodes; i++) {
		uint32_t n = b->node_of[i];
		if (n >= w->nodes || w->node_cfg[n]) {
			diag_add(w->d, NULL, 0, 0, "collective benchmark: node %u is %s", n,
				 n >= w->nodes ? "outside the cluster" : "taken");
			return SIM_EINVAL;
		}
		w->node_cfg[n] = &br->node_cfg;
	}
	return SIM_OK;
}
