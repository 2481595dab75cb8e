/* perftest's point-to-point benchmarks as flows on the fabric (p2p.h). */
#include "models/p2p.h"

#include <stdlib.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim/err.h"

/* Per-packet bytes. InfiniBand Architecture Specification Volume 1
 * (IBTA, Release 1.4), chapter 5 "Data packet format" and 9.3 "Base
 * transport header": every packet carries a Local Route Header (8 bytes),
 * a Base Transport Header (12), the invariant CRC (4) and the variant CRC
 * (2); the first (or only) packet of an RDMA WRITE also an RDMA Extended
 * Transport Header (16: virtual address 8, R_Key 4, DMA length 4), a SEND
 * none. The largest path MTU is 4096 bytes of payload (same chapter: MTUs
 * of 256 to 4096), which perftest uses when both ports and the switch
 * have it (it takes the port's active MTU). RoCEv2 (IBTA Supplement to
 * Volume 1, Annex A17 "RoCEv2", 2014) carries the same BTH, RETH and ICRC
 * in UDP (8) over IPv4 (20) in an Ethernet frame (header 14, FCS 4), and
 * every frame also occupies its preamble and start delimiter (8) and the
 * minimum inter-frame gap (12) on the wire (IEEE 802.3, clause 3 and
 * 4.4.2); its payload MTU is at most 4096 as on InfiniBand. Link-level
 * flow control packets, the physical layer's idle and control symbols and
 * FEC are not counted: the port_rate of a profile is taken as the data
 * rate after line coding, as NVIDIA quotes it (200 Gb/s HDR, 400 Gb/s NDR). */
p2p_wire p2p_wire_of(bool link_ib, bool write)
{
	if (link_ib)
		return (p2p_wire){ .mtu_bytes = 4096, .pkt_hdr_bytes = 8 + 12 + 4 + 2,
				   .first_hdr_bytes = write ? 16 : 0,
				   .what = "InfiniBand, 4096-byte MTU: LRH 8 + BTH 12 + ICRC 4 + "
					   "VCRC 2 bytes per packet" };
	return (p2p_wire){ .mtu_bytes = 4096, .pkt_hdr_bytes = 8 + 14 + 4 + 12 + 20 + 8 + 12 + 4,
			   .first_hdr_bytes = write ? 16 : 0,
			   .what = "RoCEv2, 4096-byte MTU: preamble 8 + Ethernet 14 + FCS 4 + gap 12 "
				   "+ IPv4 20 + UDP 8 + BTH 12 + ICRC 4 bytes per packet" };
}

double p2p_wire_bytes(const p2p_wire *w, uint64_t bytes)
{
	uint64_t packets = bytes ? (bytes + w->mtu_bytes - 1) / w->mtu_bytes : 1;
	return (double)bytes + (double)packets * w->pkt_hdr_bytes + w->first_hdr_bytes;
}

typedef struct qp_state {
	uint32_t posted, started, sent, completed;
	bool busy;
} qp_state;

/* One run: the two directions' paths with their weights, and the state. */
typedef struct p2p_run_state {
	sim_engine *eng;
	flow_net *net;
	const p2p_params *p;
	uint32_t path[2][FAB_PATH_MAX + 1];
	double weight[2][FAB_PATH_MAX + 1];
	uint32_t len[2];
	sim_time lat_ps[2];          /* fixed one-way latency, forward and back */
	qp_state *qp;
	uint32_t qps_done;
	sim_time start_ps, end_ps;
	double *half_s;              /* latency: half of each round trip */
	uint32_t iter;
	sim_time t0_ps;
} p2p_run_state;

static void on_sent(sim_engine *eng, void *obj, uint64_t data);
static void on_arrive(sim_engine *eng, void *obj, uint64_t data);

/* A message's flow in direction dir (0 forward, 1 back); done(data) at its
 * last byte. */
static int send_msg(p2p_run_state *r, int dir, sim_handler *done, uint64_t data)
{
	flow_spec fs = { .bytes = r->p->bytes, .path = r->path[dir], .weights = r->weight[dir],
			 .path_len = r->len[dir], .cap_Bps = r->p->conn_cap_Bps, .done = done,
			 .obj = r, .data = data };
	int rc = flow_start(r->net, &fs, NULL);
	if (rc)
		sim_fail(r->eng, rc, "p2p: starting a message of %llu bytes: %s",
			 (unsigned long long)r->p->bytes, sim_strerror(rc));
	return rc;
}

/* The adapter works through a QP's send queue in order: the next posted
 * message starts when the one before has left. */
static void qp_start(p2p_run_state *r, uint32_t q)
{
	qp_state *s = &r->qp[q];
	if (s->busy || s->started == s->posted)
		return;
	s->busy = true;
	s->started++;
	send_msg(r, 0, on_sent, q);
}

/* perftest posts while fewer than tx_depth messages are outstanding. */
static void qp_post(p2p_run_state *r, uint32_t q)
{
	qp_state *s = &r->qp[q];
	while (s->posted < r->p->iterations && s->posted - s->completed < r->p->tx_depth)
		s->posted++;
	qp_start(r, q);
}

static void on_completion(sim_engine *eng, void *obj, uint64_t data)
{
	p2p_run_state *r = obj;
	uint32_t q = (uint32_t)(data & 0xffffffffu), n = (uint32_t)(data >> 32);
	qp_state *s = &r->qp[q];
	s->completed += n;
	if (s->completed == r->p->iterations) {
		r->end_ps = sim_now(eng);
		r->qps_done++;
		return;
	}
	qp_post(r, q);
}

/* perftest never waits for more completions than it can have posted: it
 * lowers cq_mod to tx_depth (src/perftest_parameters.c). */
static uint32_t cq_of(const p2p_params *p)
{
	return p->cq_mod < p->tx_depth ? p->cq_mod : p->tx_depth;
}

/* A message's last byte is through the path: it arrives one way later and
 * its acknowledgement is back another later; perftest signals every
 * cq_mod-th message, and the last. */
static void on_sent(sim_engine *eng, void *obj, uint64_t data)
{
	p2p_run_state *r = obj;
	uint32_t q = (uint32_t)data, cq = cq_of(r->p);
	qp_state *s = &r->qp[q];
	s->busy = false;
	s->sent++;
	if (s->sent % cq == 0 || s->sent == r->p->iterations) {
		uint64_t n = s->sent % cq ? s->sent % cq : cq;
		int rc = sim_schedule_in(eng, r->lat_ps[0] + r->lat_ps[1], on_completion, r,
					 (n << 32) | q, NULL);
		if (rc)
			sim_fail(eng, rc, "p2p: a completion after %llu messages: %s",
				 (unsigned long long)s->sent, sim_strerror(rc));
	}
	qp_start(r, q);
}

static void ping(p2p_run_state *r)
{
	r->t0_ps = sim_now(r->eng);
	send_msg(r, 0, on_arrive, 0);
}

/* Latency test: the last byte of direction `data`'s message is through;
 * it is seen at the other end one fixed latency later, and answered. */
static void on_through(sim_engine *eng, void *obj, uint64_t data)
{
	p2p_run_state *r = obj;
	int rc = sim_schedule_in(eng, r->lat_ps[data], on_arrive, r, data + 2, NULL);
	if (rc)
		sim_fail(eng, rc, "p2p: a message's arrival: %s", sim_strerror(rc));
}

/* data 0 or 1: a message of that direction is through (on_through); 2: the
 * ping has arrived, answer it; 3: the answer has arrived, one round trip. */
static void on_arrive(sim_engine *eng, void *obj, uint64_t data)
{
	p2p_run_state *r = obj;
	if (data < 2)
		return on_through(eng, obj, data);
	if (data == 2) {
		send_msg(r, 1, on_arrive, 1);
		return;
	}
	r->half_s[r->iter++] = sim_time_to_s(sim_now(eng) - r->t0_ps) / 2;
	if (r->iter < r->p->iterations)
		ping(r);
}

/* Direction dir's path (src to dst, or back), the network links weighted
 * by the wire's bytes per payload byte, plus the message-rate resource
 * (msg_res, forward only; UINT32_MAX: none). */
static int route(p2p_run_state *r, fab *f, int dir, uint32_t msg_res)
{
	const p2p_params *p = r->p;
	double w = p2p_wire_bytes(&p->wire, p->bytes) / (double)p->bytes;
	fab_path fp;
	int rc = dir ? fab_route(f, p->dst, p->src, 1, p->end, p->end, &fp)
		     : fab_route(f, p->src, p->dst, 0, p->end, p->end, &fp);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < fp.len; i++) {
		uint8_t cls = flow_res_class(r->net, fp.res[i]);
		r->path[dir][i] = fp.res[i];
		r->weight[dir][i] = cls == FAB_CLS_NIC || cls == FAB_CLS_FABRIC ? w : 1;
	}
	r->len[dir] = fp.len;
	if (msg_res != UINT32_MAX) {
		r->path[dir][r->len[dir]] = msg_res;
		r->weight[dir][r->len[dir]++] = 1;
	}
	r->lat_ps[dir] = p->adapter_lat_ps + fp.lat_ps;
	return 0;
}

static int check_params(const fab *f, const p2p_params *p)
{
	uint32_t gpn = fab_cfg(f)->gpus_per_node;
	if (!p->bytes || !p->iterations || !p->qps || !p->tx_depth || !p->cq_mod ||
	    !p->wire.mtu_bytes || p->src >= fab_ranks(f) || p->dst >= fab_ranks(f) ||
	    p->src / gpn == p->dst / gpn || (p->end != FAB_END_HOST && p->end != FAB_END_GPU))
		return SIM_EINVAL;
	return SIM_OK;
}

static void stream_result(const p2p_run_state *r, p2p_result *out)
{
	const p2p_params *p = r->p;
	double t = sim_time_to_s(r->end_ps - r->start_ps), msgs = (double)p->iterations * p->qps;
	out->time_s = t;
	out->bw_Bps = msgs * (double)p->bytes / t;
	out->msg_rate_per_s = msgs / t;
}

static void pingpong_result(p2p_run_state *r, p2p_result *out)
{
	size_t n = r->p->iterations;
	gsl_sort(r->half_s, 1, n);
	out->time_s = gsl_stats_quantile_from_sorted_data(r->half_s, 1, n, 0.5);
	out->lat_p99_s = gsl_stats_quantile_from_sorted_data(r->half_s, 1, n, 0.99);
	out->bw_Bps = (double)r->p->bytes / out->time_s;
}

/* Runs the events to the end and checks that everything finished. */
static int run_to_end(p2p_run_state *r)
{
	sim_run(r->eng);
	if (sim_error(r->eng))
		return sim_error(r->eng);
	if (r->p->lat ? r->iter != r->p->iterations : r->qps_done != r->p->qps) {
		sim_fail(r->eng, SIM_EINVAL, "p2p: the benchmark stopped before its last message");
		return SIM_EINVAL;
	}
	return SIM_OK;
}

int p2p_run(sim_engine *eng, flow_net *net, fab *f, const p2p_params *p, p2p_result *out)
{
	p2p_run_state r = { .eng = eng, .net = net, .p = p, .start_ps = sim_now(eng) };
	uint32_t msg_res = UINT32_MAX;
	int rc = check_params(f, p);
	*out = (p2p_result){ 0 };
	if (!rc && p->msg_rate_per_s > 0)
		rc = flow_res_add(net, p->msg_rate_per_s * (double)p->bytes, &msg_res);
	if (!rc && !(rc = route(&r, f, 0, msg_res)))
		rc = route(&r, f, 1, UINT32_MAX);
	if (!rc && !(p->lat ? (r.half_s = calloc(p->iterations, sizeof *r.half_s)) != NULL
			    : (r.qp = calloc(p->qps, sizeof *r.qp)) != NULL))
		rc = SIM_ENOMEM;
	if (rc) {
		free(r.half_s);
		return rc;
	}
	out->one_way_lat_s = sim_time_to_s(r.lat_ps[0]);
	if (p->lat)
		ping(&r);
	for (uint32_t q = 0; q < p->qps && !p->lat; q++)
		qp_post(&r, q);
	if (!(rc = run_to_end(&r)))
		p->lat ? pingpong_result(&r, out) : stream_result(&r, out);
	free(r.qp);
	free(r.half_s);
	return rc;
}
