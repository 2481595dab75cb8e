/* perftest's point-to-point benchmarks as flows on the fabric (p2p.h). */
#include "models/p2p.h"

#include <stdlib.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim/err.h"

/* A QP's messages: posted by the host, issued as read requests (reads
 * only), ready at the sending adapter (written or sent: once posted; read:
 * once the request has arrived), started and through on the wire, arrived
 * (reads), completed as the host polls them. */
typedef struct qp_state {
	uint32_t posted, issued, ready, started, sent, arrived, completed;
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
	int data_dir;                /* the direction the bytes go: 1 for a read's */
	qp_state *qp;
	uint32_t qps_done;
	sim_time start_ps, end_ps;
	double *lat_s;               /* latency: each iteration's figure */
	uint32_t iter;
	sim_time t0_ps;
} p2p_run_state;

static void on_sent(sim_engine *eng, void *obj, uint64_t data);
static void on_arrive(sim_engine *eng, void *obj, uint64_t data);
static void qp_post(p2p_run_state *r, uint32_t q);

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

/* Schedules fn(data) after delay, failing the engine on error. */
static void after(p2p_run_state *r, sim_time delay, sim_handler *fn, uint64_t data)
{
	int rc = sim_schedule_in(r->eng, delay, fn, r, data, NULL);
	if (rc)
		sim_fail(r->eng, rc, "p2p: scheduling a message's next step: %s", sim_strerror(rc));
}

/* The adapter's DMA read of a latency test's payload before it can send:
 * perftest writes a WRITE or SEND of at most its inline size into the work
 * request, which the CPU's doorbell write carries to the adapter, so that
 * message costs no read; a larger one, and every READ response, is read
 * from the buffer's memory first (one PCIe read round trip; the bytes then
 * stream through PCIe at its rate, part of the message's flow). */
static sim_time payload_read_ps(const p2p_params *p)
{
	bool inlined = p->op != P2P_READ && p->bytes <= p->inline_bytes;
	return inlined ? 0 : p->payload_read_ps;
}

/* The payload's read is done: the message's flow starts. data: direction
 * in bits 8 and up, the on_arrive step its last byte leads to below. */
static void on_payload_read(sim_engine *eng, void *obj, uint64_t data)
{
	(void)eng;
	send_msg(obj, (int)(data >> 8), on_arrive, data & 0xff);
}

/* The time from a latency test's decision to send a message to its first
 * byte leaving: a message the CPU posts (a WRITE or SEND; a READ's request,
 * lat_next) reaches the adapter one doorbell write later; then the
 * payload's read, where it pays one. A READ's response is the responder
 * adapter's own: no doorbell. */
static sim_time lat_start_ps(const p2p_params *p)
{
	return (p->op == P2P_READ ? 0 : p->doorbell_ps) + payload_read_ps(p);
}

/* A latency test's message in direction dir, after its doorbell and its
 * payload's read. */
static void lat_send(p2p_run_state *r, int dir, uint64_t step)
{
	sim_time t = lat_start_ps(r->p);
	if (t)
		after(r, t, on_payload_read, (uint64_t)dir << 8 | step);
	else
		send_msg(r, dir, on_arrive, step);
}

/* The sending adapter works through a QP's messages in order: the next
 * ready one starts when the one before has left. */
static void qp_start(p2p_run_state *r, uint32_t q)
{
	qp_state *s = &r->qp[q];
	if (s->busy || s->started == s->ready)
		return;
	s->busy = true;
	s->started++;
	send_msg(r, r->data_dir, on_sent, q);
}

/* A read request reaches the responder, whose adapter answers it. */
static void on_request(sim_engine *eng, void *obj, uint64_t data)
{
	p2p_run_state *r = obj;
	(void)eng;
	r->qp[data].ready++;
	qp_start(r, (uint32_t)data);
}

/* The requester's adapter sends read requests while fewer than out_reads
 * are outstanding (its max_rd_atomic). */
static void qp_issue(p2p_run_state *r, uint32_t q)
{
	qp_state *s = &r->qp[q];
	while (s->issued < s->posted && s->issued - s->arrived < r->p->out_reads) {
		s->issued++;
		after(r, r->lat_ps[0], on_request, q);
	}
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

/* perftest posts while fewer than tx_depth messages are outstanding. */
static void qp_post(p2p_run_state *r, uint32_t q)
{
	qp_state *s = &r->qp[q];
	while (s->posted < r->p->iterations && s->posted - s->completed < r->p->tx_depth)
		s->posted++;
	if (r->p->op == P2P_READ)
		return qp_issue(r, q);
	s->ready = s->posted;
	qp_start(r, q);
}

/* perftest never waits for more completions than it can have posted: it
 * lowers cq_mod to tx_depth (src/perftest_parameters.c). */
static uint32_t cq_of(const p2p_params *p)
{
	return p->cq_mod < p->tx_depth ? p->cq_mod : p->tx_depth;
}

/* The count-th message of QP q is done at the requester: perftest signals
 * every cq_mod-th and the last; the completion reaches the host `delay`
 * later. */
static void signal_done(p2p_run_state *r, uint32_t q, uint32_t count, sim_time delay)
{
	uint32_t cq = cq_of(r->p);
	if (count % cq == 0 || count == r->p->iterations) {
		uint64_t n = count % cq ? count % cq : cq;
		after(r, delay, on_completion, (n << 32) | q);
	}
}

/* A read's response has arrived: a slot for another request, and maybe a
 * completion. */
static void on_read_back(sim_engine *eng, void *obj, uint64_t data)
{
	p2p_run_state *r = obj;
	uint32_t q = (uint32_t)data;
	(void)eng;
	r->qp[q].arrived++;
	qp_issue(r, q);
	signal_done(r, q, r->qp[q].arrived, 0);
}

/* A message's last byte is through the path. A write or send arrives one
 * way later and its acknowledgement is back another later; a read's
 * response arrives one way later at the requester. */
static void on_sent(sim_engine *eng, void *obj, uint64_t data)
{
	p2p_run_state *r = obj;
	uint32_t q = (uint32_t)data;
	qp_state *s = &r->qp[q];
	(void)eng;
	s->busy = false;
	s->sent++;
	if (r->p->op == P2P_READ)
		after(r, r->lat_ps[1], on_read_back, q);
	else
		signal_done(r, q, s->sent, r->lat_ps[0] + r->lat_ps[1]);
	qp_start(r, q);
}

/* Latency tests, one message at a time. A ping-pong: `data` 0 or 1, the
 * message of that direction is through; 2, the ping has arrived and the
 * polling CPU has seen it (written into memory, then its load), answer it;
 * 3, the answer has been seen: one round trip, half of it the figure. A
 * read: 4, the request has arrived, respond; 5, the response is through; 6,
 * its completion has been seen: one round trip, the figure whole. */
static void lat_next(p2p_run_state *r)
{
	r->t0_ps = sim_now(r->eng);
	if (r->p->op == P2P_READ)
		after(r, r->p->doorbell_ps + r->lat_ps[0], on_arrive, 4);
	else
		lat_send(r, 0, 0);
}

/* From a latency test's message's last byte leaving to the waiting CPU
 * seeing it: the fixed one-way latency of direction dir, the receiving
 * adapter's write into memory, and the CPU's load that misses on it. */
static sim_time seen_ps(const p2p_run_state *r, int dir)
{
	return r->lat_ps[dir] + r->p->mem_write_ps + r->p->poll_ps;
}

static void lat_done(p2p_run_state *r, int rtt_factor)
{
	r->lat_s[r->iter++] = sim_time_to_s(sim_now(r->eng) - r->t0_ps) / rtt_factor;
	if (r->iter < r->p->iterations)
		lat_next(r);
}

static void on_arrive(sim_engine *eng, void *obj, uint64_t data)
{
	p2p_run_state *r = obj;
	(void)eng;
	switch (data) {
	case 0:
	case 1:
		return after(r, seen_ps(r, (int)data), on_arrive, data + 2);
	case 2:
		return lat_send(r, 1, 1);
	case 3:
		return lat_done(r, 2);
	case 4:
		return lat_send(r, 1, 5);
	case 5:
		return after(r, seen_ps(r, 1), on_arrive, 6);
	default:
		return lat_done(r, 1);
	}
}

/* Direction dir's path (src to dst, or back), the network links weighted
 * by the message's wire bytes per payload byte over what their payload
 * rate already leaves for headers (fab_config.payload_frac, 0: none), plus
 * the sending adapter's message-rate resource (msg_res; UINT32_MAX:
 * none). */
static int route(p2p_run_state *r, fab *f, int dir, uint32_t msg_res)
{
	const p2p_params *p = r->p;
	double frac = fab_cfg(f)->payload_frac > 0 ? fab_cfg(f)->payload_frac : 1;
	double w = wire_bytes(&p->wire, p->bytes) * frac / (double)p->bytes;
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
	    !p->wire.mtu_bytes || (p->op == P2P_READ && !p->lat && !p->out_reads) ||
	    p->src >= fab_ranks(f) || p->dst >= fab_ranks(f) ||
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

static void lat_result(p2p_run_state *r, p2p_result *out)
{
	size_t n = r->p->iterations;
	gsl_sort(r->lat_s, 1, n);
	out->time_s = gsl_stats_quantile_from_sorted_data(r->lat_s, 1, n, 0.5);
	out->lat_p99_s = gsl_stats_quantile_from_sorted_data(r->lat_s, 1, n, 0.99);
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

/* The message-rate resources of the sending adapters, *res[dir] for the
 * messages of direction dir (UINT32_MAX: none): a stream's or a read's
 * messages go one way, a ping-pong's both ways, each from its own adapter. */
static int msg_rate_res(flow_net *net, const p2p_params *p, uint32_t res[2])
{
	int data_dir = p->op == P2P_READ, rc = SIM_OK;
	res[0] = res[1] = UINT32_MAX;
	if (!(p->msg_rate_per_s > 0))
		return SIM_OK;
	rc = flow_res_add(net, p->msg_rate_per_s * (double)p->bytes, &res[data_dir]);
	if (!rc && p->lat && p->op != P2P_READ)
		rc = flow_res_add(net, p->msg_rate_per_s * (double)p->bytes, &res[1]);
	return rc;
}

int p2p_run(sim_engine *eng, flow_net *net, fab *f, const p2p_params *p, p2p_result *out)
{
	p2p_run_state r = { .eng = eng, .net = net, .p = p, .start_ps = sim_now(eng) };
	uint32_t msg_res[2];
	int rc = check_params(f, p);
	*out = (p2p_result){ 0 };
	if (!rc)
		rc = msg_rate_res(net, p, msg_res);
	r.data_dir = p->op == P2P_READ;
	if (!rc && !(rc = route(&r, f, 0, msg_res[0])))
		rc = route(&r, f, 1, msg_res[1]);
	if (!rc && !(p->lat ? (r.lat_s = calloc(p->iterations, sizeof *r.lat_s)) != NULL
			    : (r.qp = calloc(p->qps, sizeof *r.qp)) != NULL))
		rc = SIM_ENOMEM;
	if (rc) {
		free(r.lat_s);
		return rc;
	}
	out->one_way_lat_s = sim_time_to_s(p->lat ? p->doorbell_ps + payload_read_ps(p) + seen_ps(&r, 0)
						  : r.lat_ps[0]);
	if (p->lat)
		lat_next(&r);
	for (uint32_t q = 0; q < p->qps && !p->lat; q++)
		qp_post(&r, q);
	if (!(rc = run_to_end(&r)))
		p->lat ? lat_result(&r, out) : stream_result(&r, out);
	free(r.qp);
	free(r.lat_s);
	return rc;
}
