/* A training job's reliability and energy inputs (models/reliab.h,
 * models/power.h) from its scenario and configuration: what fails, how
 * fast an asynchronous checkpoint's snapshot goes, what draws power. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/train.h"
#include "sim/err.h"

double train_ckpt_bytes(const scn_scenario *s, const train_config *c)
{
	return s->failures.checkpoint_bytes > 0 ? s->failures.checkpoint_bytes
						: 16.0 * wl_params(&c->model);
}

/* What the job's failure rate counts: its nodes (node_mtbf), and where the
 * scenario gives them, its GPUs and its adapters (every NIC and DPU of its
 * nodes) as parts of their own (without gpu_mtbf or nic_mtbf those are
 * taken to be inside node_mtbf), and its fabric's switches (switch_mtbf;
 * a scenario with several jobs, which share them, counts none). */
void train_rel_parts(const scn_scenario *s, const train_config *c, double gpus,
		     uint64_t switches, rel_params *rp)
{
	const scn_failures *f = &s->failures;
	uint64_t adapters = (s->cluster.dpus_replace_nics ? 0 : (uint64_t)c->fabric.nics_per_node) +
			    (s->cluster.has_dpu ? (uint64_t)s->cluster.dpus_per_node : 0);
	rp->part[REL_NODE] = (rel_part){ .count = c->fabric.nodes, .mtbf_s = f->node_mtbf_s };
	if (f->gpu_mtbf_s > 0)
		rp->part[REL_GPU] = (rel_part){ .count = (uint64_t)gpus, .mtbf_s = f->gpu_mtbf_s };
	if (f->nic_mtbf_s > 0)
		rp->part[REL_NIC] = (rel_part){ .count = c->fabric.nodes * adapters,
						.mtbf_s = f->nic_mtbf_s };
	if (f->switch_mtbf_s > 0)
		rp->part[REL_SWITCH] = (rel_part){ .count = switches, .mtbf_s = f->switch_mtbf_s };
}

/* An asynchronous checkpoint's snapshot: each GPU copies an equal share of
 * the checkpoint (PyTorch's distributed checkpoint gives each replicated
 * tensor to the rank with the least to write so far:
 * torch/distributed/checkpoint/_dedup_save_plans.py) into host memory over
 * its own PCIe link (setup_pcie_Bps from the GPU profile's pcie_gen and
 * pcie_lanes), all GPUs of a node at once, so at most the node's memory
 * bandwidth (CPU profile: sockets x mem_bw) over its GPUs. PCIe switch
 * uplinks shared by GPUs are not modelled. Writes what binds into bound;
 * SIM_EINVAL with the reason in why when the GPU profile gives no PCIe
 * link. */
int train_snapshot_rate(const scn_scenario *s, const train_config *c, double gpus,
			rel_params *rp, char *bound, size_t bn, char *why, size_t n)
{
	const profile_gpu *g = &s->cluster.gpu.v.gpu;
	double pcie = setup_pcie_Bps(g->pcie_gen, g->pcie_lanes);
	double gpn = c->fabric.gpus_per_node, mem = NAN;
	if (!(pcie > 0)) {
		snprintf(why, n, "async checkpoint: GPU profile '%s' gives no pcie_gen and "
			 "pcie_lanes (the snapshot's rate)", s->cluster.gpu.name);
		return SIM_EINVAL;
	}
	if (c->fabric.host_mem_Bps > 0) /* the node's, as the simulation ran it (setup_fabric) */
		mem = c->fabric.host_mem_Bps / gpn;
	rp->mode = REL_ASYNC;
	rp->snapshot_bytes = rp->ckpt_bytes / gpus;
	rp->snapshot_Bps = mem < pcie ? mem : pcie;
	if (mem < pcie)
		snprintf(bound, bn, "host memory %.4g GB/s over %.0f GPUs", mem * gpn / 1e9, gpn);
	else
		snprintf(bound, bn, "PCIe Gen%.0f x%.0f%s", g->pcie_gen, g->pcie_lanes,
			 isfinite(mem) ? "" : "; host memory not bound: no CPU mem_bw");
	return SIM_OK;
}

/* Appends ", what" (or "what" first) to the list in buf. */
static void list_add(char *buf, size_t n, const char *what)
{
	size_t len = strlen(buf);
	if (len < n)
		snprintf(buf + len, n - len, "%s%s", len ? ", " : "", what);
}

/* The job's power draw by component (models/power.h): its GPUs at their
 * utilisation; its nodes' CPU sockets at the host CPU utilisation (the
 * busiest node's: an upper bound for the others), when the CPU profile
 * gives tdp_w and idle_w; its NICs and DPUs at their typical power_w (a
 * draw that does not follow the load), when given; its fabric's switches
 * (train_result.net_switches) at the switch profile's typical power_w. A
 * component without its figures is left out and named in left (never a
 * guessed watt figure); storage servers, and the switches of a scenario with several
 * jobs, shared by the jobs, are not counted. */
void train_energy_parts(const scn_scenario *s, const train_config *c, double gpus,
			uint64_t switches, double gpu_util, double cpu_util, pwr_cluster *pc,
			double util[PWR_KINDS], char *left, size_t n)
{
	const profile_cpu *cpu = &s->cluster.cpu.v.cpu;
	double nodes = c->fabric.nodes;
	pwr_cluster_init(pc);
	pc->pue = s->cost.pue >= 1 ? s->cost.pue : 1;
	pc->part[PWR_GPU] = (pwr_part){ .count = (uint64_t)gpus, .max_w = s->cluster.gpu.v.gpu.tdp_w,
					.idle_w = s->cluster.gpu.v.gpu.idle_w };
	util[PWR_GPU] = gpu_util;
	left[0] = 0;
	if (profile_has(cpu->tdp_w) && profile_has(cpu->idle_w) && isfinite(cpu_util)) {
		pc->part[PWR_CPU] = (pwr_part){ .count = (uint64_t)(nodes * cpu->sockets),
						.max_w = cpu->tdp_w, .idle_w = cpu->idle_w };
		util[PWR_CPU] = cpu_util;
	} else {
		list_add(left, n, "CPUs (no tdp_w and idle_w)");
	}
	double nic_w = s->cluster.nic.v.nic.power_w;
	/* DPUs in the NICs' place: no NIC draws power (the DPUs' own figure,
	 * below, is theirs). */
	uint64_t nics = s->cluster.dpus_replace_nics ? 0 : (uint64_t)(nodes * c->fabric.nics_per_node);
	if (nics && profile_has(nic_w))
		pc->part[PWR_NIC] = (pwr_part){ .count = nics, .max_w = nic_w, .idle_w = nic_w };
	else if (nics)
		list_add(left, n, "NICs (no power_w)");
	util[PWR_NIC] = 1;
	if (s->cluster.has_dpu) {
		double dpu_w = s->cluster.dpu.v.dpu.nic.power_w;
		if (profile_has(dpu_w))
			pc->part[PWR_DPU] = (pwr_part){ .count = (uint64_t)(nodes * s->cluster.dpus_per_node),
							.max_w = dpu_w, .idle_w = dpu_w };
		else
			list_add(left, n, "DPUs (no power_w)");
		util[PWR_DPU] = 1;
	}
	double sw_w = s->cluster.fabric.sw.v.sw.power_w;
	if (!switches)
		list_add(left, n, "switches (shared by the jobs)");
	else if (profile_has(sw_w))
		pc->part[PWR_SWITCH] = (pwr_part){ .count = switches, .max_w = sw_w, .idle_w = sw_w };
	else
		list_add(left, n, "switches (no power_w)");
	util[PWR_SWITCH] = 1;
	list_add(left, n, "storage servers (shared by the jobs)");
}
