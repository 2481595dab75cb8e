/* dpusim-hw replay of a p2p workload: the scenario's perftest test
 * (ib_write_bw, ib_read_lat...) on real verbs between ranks 0 and 1
 * (backend-hw/perf.c), each variant from its own memory, each size's data
 * checked, written as the simulator writes it (tools/run_p2p.c): one
 * collective row per size, op sendrecv, algo perftest's program, so
 * `dpusim compare` holds them size by size. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "backend-hw/comm.h"
#include "backend-hw/gpu.h"
#include "backend-hw/log.h"
#include "backend-hw/mem.h"
#include "backend-hw/perf.h"
#include "backend-hw/replay.h"
#include "models/coll.h"
#include "models/diag.h"
#include "tools/run.h"

static bool has_rdma_device(void)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	if (l)
		ibv_free_device_list(l);
	return l && n > 0;
}

/* DPUSIM_HW_FAULT=corrupt:R (tests): rank R's pattern is off by a byte.
 * *rank -1 when unset; 2 (said) when it is another hook. */
static int fault_rank(const replay_opts *o, int *rank)
{
	const char *f = getenv("DPUSIM_HW_FAULT");
	char tail;
	*rank = -1;
	if (!f || !*f)
		return 0;
	if (sscanf(f, "corrupt:%d%c", rank, &tail) != 1 || *rank < 0)
		return hw_replay_usage("%s: DPUSIM_HW_FAULT='%s': the p2p replay takes corrupt:RANK",
				       o->where, f);
	return 0;
}

/* What the simulator refuses (a host-tcp variant: perftest runs verbs; a
 * size past its clock), refused here in its words. */
static int sim_refuses(const scn_scenario *s)
{
	diag *d = diag_new();
	int err = d ? run_check(s, d) : SIM_ENOMEM;
	if (err && d && hw_comm_rank() == 0)
		diag_print(d, stderr);
	diag_free(d);
	return err ? 2 : 0;
}

int hw_replay_p2p_check(const scn_scenario *s, const replay_opts *o, int ranks)
{
	int rank;
	if (strcmp(o->transport, "verbs"))
		return hw_replay_usage("%s: a p2p benchmark runs RDMA verbs, as perftest does: replay "
				       "it with --transport verbs (the simulator refuses network "
				       "host-tcp for it too)", o->where);
	if (strcmp(o->mem, "host"))
		return hw_replay_usage("%s: a p2p replay takes each variant's buffers from its network "
				       "(rdma: host memory, rdma-gdr: GPU memory); drop --mem",
				       o->where);
	if (o->data || o->scale != 1 || strcmp(o->compute, "cpu") || o->gemm_n || o->reps)
		return hw_replay_usage("%s: --data, --scale, --compute, --gemm-n and --reps apply to "
				       "other workloads; a p2p benchmark runs the scenario's sizes "
				       "and iterations", o->where);
	if (ranks != 2)
		return hw_replay_usage("%s: a p2p benchmark runs between two ranks (perftest's "
				       "client and server): run it with mpirun -np 2 (this run has "
				       "%d)", o->where, ranks);
	if (fault_rank(o, &rank) || sim_refuses(s))
		return 2;
	if (!has_rdma_device())
		return hw_replay_usage("%s: no RDMA device here (libibverbs lists none): a p2p "
				       "benchmark runs RDMA verbs, as perftest does, and cannot be "
				       "replayed on this machine", o->where);
	return 0;
}

/* The verb of each test (scn_p2p_test order). */
static hw_perf_op op_of(scn_p2p_test t)
{
	switch (t) {
	case SCN_P2P_WRITE_BW:
	case SCN_P2P_WRITE_LAT:
		return HW_PERF_WRITE;
	case SCN_P2P_SEND_BW:
	case SCN_P2P_SEND_LAT:
		return HW_PERF_SEND;
	case SCN_P2P_READ_BW:
	case SCN_P2P_READ_LAT:
		break;
	}
	return HW_PERF_READ;
}

/* One variant's outcome: its rows (rank 0), or why it did not run. */
typedef struct p2p_var {
	const hw_mem_ops *mem;
	char why[320];             /* not replayed: the reason; "" when it ran */
	char how[640];             /* what ran, for the report's info */
	rep_collective *rows;
	double total_s;            /* every size's whole test */
	uint64_t verified_bytes;
} p2p_var;

/* The variant's memory: host for rdma, GPU for rdma-gdr where this build
 * has CUDA and every rank a GPU; else pv->why. The same on every rank. */
static void memory_of(const scn_variant *v, p2p_var *pv)
{
	hw_gpu_info g[HW_GPU_MAX];
	char w[256] = "";
	int n;
	pv->mem = v->network == SCN_NET_RDMA ? &hw_mem_host_ops : hw_mem_backend("cuda");
	if (v->network == SCN_NET_RDMA)
		return;
	if (!pv->mem) {
		snprintf(pv->why, sizeof pv->why, "network rdma-gdr needs GPU memory: this dpusim-hw "
			 "is built without CUDA (dpusim-hw --version lists its paths)");
	} else if ((n = hw_gpu_probe(g, HW_GPU_MAX, w, sizeof w)) <= 0) {
		snprintf(pv->why, sizeof pv->why, "network rdma-gdr needs GPU memory: no usable GPU "
			 "here (%s)", n < 0 ? w : "the CUDA runtime lists none");
	}
	if (!hw_comm_all(pv->why[0] == '\0') && !pv->why[0])
		snprintf(pv->why, sizeof pv->why, "network rdma-gdr needs GPU memory: the other rank "
			 "has no usable GPU");
}

static size_t max_size(const scn_p2p *k)
{
	size_t m = 1;
	for (size_t i = 0; i < k->nsizes; i++)
		m = (size_t)k->sizes_bytes[i] > m ? (size_t)k->sizes_bytes[i] : m;
	return m;
}

/* Size i's row: a latency test's typical (median) time with its spread,
 * a bandwidth test's time per message at its BW average (as the
 * simulator's rows). */
static rep_collective row_of(const scn_p2p *k, size_t bytes, const hw_perf_res *r)
{
	bool lat = scn_p2p_is_lat(k->test);
	double t = lat ? r->lat.median : (double)bytes / r->bw_Bps, algbw = (double)bytes / t / 1e9;
	return (rep_collective){ .op = coll_op_report_name(COLL_SENDRECV),
				 .algo = run_p2p_prog(k->test), .ranks = 2, .bytes = bytes,
				 .time_s = t, .algbw_GBps = algbw,
				 .busbw_GBps = algbw * coll_busbw_factor(COLL_SENDRECV, 2),
				 .calls = lat ? r->lat.n : 0, .time_min_s = lat ? r->lat.min : NAN,
				 .time_p10_s = lat ? r->lat.p10 : NAN,
				 .time_p90_s = lat ? r->lat.p90 : NAN };
}

/* perftest's units: MB/s of 2^20 bytes, Gb/s of 10^9 bits, us. */
static void print_row(const scn_p2p *k, size_t bytes, const hw_perf_res *r)
{
	if (hw_comm_rank() != 0)
		return;
	if (scn_p2p_is_lat(k->test))
		printf("  %-12s %10zu B  %6d %s  typical %10.2f us  p10 %.2f  p90 %.2f us  "
		       "verified\n", run_p2p_prog(k->test), bytes, k->iterations,
		       k->test == SCN_P2P_READ_LAT ? "reads" : "round trips",
		       r->lat.median * 1e6, r->lat.p10 * 1e6, r->lat.p90 * 1e6);
	else
		printf("  %-12s %10zu B  %6d x %d QP  BW average %12.2f MB/s  %9.3f Gb/s  MsgRate "
		       "%.4f Mpps  verified\n", run_p2p_prog(k->test), bytes, k->iterations, k->qps,
		       r->bw_Bps / 1048576.0, r->bw_Bps * 8 / 1e9, r->msg_rate_per_s / 1e6);
}

static void describe(const scn_p2p *k, const hw_perf *p, const scn_variant *v, p2p_var *pv)
{
	char where[96], rd[160] = "";
	hw_perf_where(p, where, sizeof where);
	if (k->test == SCN_P2P_READ_BW)
		snprintf(rd, sizeof rd, ", %d reads outstanding per QP (the scenario asks %d%s)",
			 hw_perf_reads(p), k->out_reads, hw_perf_reads(p) < k->out_reads
			 ? "; the device's max_qp_rd_atom allows no more" : "");
	if (scn_p2p_is_lat(k->test))
		snprintf(pv->how, sizeof pv->how, "perftest %s on verbs, %s, %s memory, %s, %d per "
			 "size; time_s the median%s (calls, p10, p90 their spread)%s",
			 run_p2p_prog(k->test), where, v->network == SCN_NET_RDMA ? "host" : "GPU",
			 k->test == SCN_P2P_READ_LAT ? "one READ after another" : k->test ==
			 SCN_P2P_WRITE_LAT ? "a ping-pong of RDMA WRITEs with immediate (the "
			 "receiver learns of each from its completion, where perftest polls the "
			 "buffer)" : "a ping-pong of SENDs", k->iterations,
			 k->test == SCN_P2P_READ_LAT ? " round trip" : " half round trip", rd);
	else
		snprintf(pv->how, sizeof pv->how, "perftest %s on verbs, %s, %s memory, %d QP, "
			 "tx_depth %d, %d messages per QP and size, a completion every %u messages "
			 "(every message above 8 KiB); time_s = bytes / BW average (payload bytes "
			 "over first post to last completion)%s", run_p2p_prog(k->test), where,
			 v->network == SCN_NET_RDMA ? "host" : "GPU", k->qps, k->tx_depth,
			 k->iterations, hw_perf_cq_mod(1, k->tx_depth), rd);
}

/* Runs every size of variant v; rank 0 fills pv->rows. */
static int run_variant(const scn_scenario *s, const scn_variant *v, const replay_opts *o,
		       int corrupt_rank, p2p_var *pv)
{
	const scn_p2p *k = &s->jobs[0].wl.p2p;
	hw_perf_opts po = { .op = op_of(k->test), .lat = scn_p2p_is_lat(k->test), .qps = k->qps,
			    .tx_depth = k->tx_depth, .out_reads = k->out_reads,
			    .max_bytes = max_size(k), .mem = pv->mem, .timeout_ms = o->timeout_ms };
	hw_perf *p = hw_perf_new(&po);
	int err = p ? 0 : SIM_EPEER;
	if (p && hw_comm_rank() == 0)
		printf("variant %s: %s memory\n", v->name, v->network == SCN_NET_RDMA ? "host" : "GPU");
	if (p)
		hw_perf_corrupt(p, corrupt_rank == hw_comm_rank());
	for (size_t i = 0; i < k->nsizes && !err; i++) {
		size_t b = (size_t)k->sizes_bytes[i];
		hw_perf_res r;
		if ((err = hw_perf_run(p, b, k->iterations, &r)) && err != SIM_EVERIFY) {
			/* the other rank may be waiting on this one */
			hw_error("p2p %s of %zu bytes failed (%s); ending every rank",
				 run_p2p_prog(k->test), b, sim_strerror(err));
			hw_comm_abort(2);
		}
		if (err)
			break;
		print_row(k, b, &r);
		pv->rows[i] = row_of(k, b, &r);
		pv->total_s += r.elapsed_s;
		pv->verified_bytes += r.verified_bytes;
	}
	if (!err)
		describe(k, p, v, pv);
	hw_perf_free(p);
	return err;
}

static int add_variant(rep_report *r, const scn_scenario *s, const scn_variant *v,
		       const p2p_var *pv)
{
	rep_variant *rv;
	int err;
	if (pv->why[0])
		return rep_set_variant_infof(r, v->name, "not_replayed", "%s", pv->why);
	if (!(rv = rep_add_variant(r, v->name)))
		return SIM_ENOMEM;
	err = hw_replay_set_offload(rv, v);
	for (size_t i = 0; i < s->jobs[0].wl.p2p.nsizes && !err; i++)
		err = rep_variant_add_collective(rv, &pv->rows[i]);
	if (!err)
		err = rep_variant_set_stat(rv, "iteration_s", pv->total_s, NAN, NAN, NAN);
	if (!err)
		err = rep_set_variant_infof(r, v->name, "p2p_replayed", "%s; after every test the receiver's "
			       "buffer was checked against the sender's pattern (%llu bytes in all)",
			       pv->how, (unsigned long long)pv->verified_bytes);
	return err;
}

static int write_report(const scn_scenario *s, const replay_opts *o, const p2p_var *pv)
{
	rep_report *r = NULL;
	int err = hw_replay_report_new(s, o, &r);
	if (!err && rep_set_info(r, "replay.p2p", "each size a row as dpusim run writes it "
				 "(op sendrecv, algo perftest's program, 2 ranks); iteration_s every "
				 "size's whole test, one after another"))
		err = SIM_ENOMEM;
	for (size_t v = 0; v < s->nvariants && !err; v++)
		err = add_variant(r, s, &s->variants[v], &pv[v]);
	if (err)
		hw_error("cannot build the replay report: %s", sim_strerror(err));
	else
		err = hw_replay_write(r, o);
	rep_free(r);
	return err;
}

/* Every variant in turn; the first failure stops the replay. */
static int run_all(const scn_scenario *s, const replay_opts *o, int corrupt, p2p_var *pv)
{
	int err = 0;
	for (size_t v = 0; v < s->nvariants && !err; v++) {
		memory_of(&s->variants[v], &pv[v]);
		if (pv[v].why[0] && hw_comm_rank() == 0)
			printf("variant %s: not replayed: %s\n", s->variants[v].name, pv[v].why);
		if (!pv[v].why[0])
			err = run_variant(s, &s->variants[v], o, corrupt, &pv[v]);
	}
	return err;
}

int hw_replay_p2p(const scn_scenario *s, const replay_opts *o)
{
	p2p_var *pv = calloc(s->nvariants, sizeof *pv);
	int corrupt = -1, err = pv ? fault_rank(o, &corrupt) : hw_fail(SIM_ENOMEM, "out of memory");
	for (size_t v = 0; pv && v < s->nvariants && !err; v++)
		if (!(pv[v].rows = calloc(s->jobs[0].wl.p2p.nsizes, sizeof(rep_collective))))
			err = hw_fail(SIM_ENOMEM, "out of memory");
	if (!hw_comm_all(err == 0))
		err = err ? err : SIM_EPEER;
	if (!err && hw_comm_rank() == 0)
		printf("dpusim-hw replay %s: perftest %s between ranks 0 and 1 over verbs\n", s->name,
		       run_p2p_prog(s->jobs[0].wl.p2p.test));
	if (!err)
		err = run_all(s, o, corrupt, pv);
	if (!err && hw_comm_rank() == 0)
		err = write_report(s, o, pv);
	for (size_t v = 0; pv && v < s->nvariants; v++)
		free(pv[v].rows);
	free(pv);
	err = err == SIM_EVERIFY ? 1 : err ? 2 : 0;
	return !hw_comm_all(err == 0) && err == 0 ? 2 : err;
}
