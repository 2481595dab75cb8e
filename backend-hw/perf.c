/* perftest's point-to-point tests on verbs between ranks 0 and 1 (perf.h):
 * one context, one CQ, a buffer and an RC QP per stream, the bandwidth and
 * latency loops, and the pattern check that follows every test. */
#include "backend-hw/perf.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "backend-hw/bench.h"
#include "backend-hw/comm.h"
#include "backend-hw/log.h"
#include "backend-hw/msg.h"
#include "backend-hw/vdev.h"

#define PERF_CQ_MOD 100          /* perftest DEF_CQ_MOD */
#define PERF_CQ_MOD_LIMIT 8192   /* perftest MSG_SIZE_CQ_MOD_LIMIT */
#define PERF_RX_DEPTH 512        /* perftest DEF_RX_SEND: receives posted per QP */
#define PERF_LAT_DEPTH 16        /* a ping-pong's send and receive queues */
#define PERF_SPIN_S 100e-6        /* spin this long without progress, then yield */
#define SEQ_MASK ((UINT64_C(1) << 48) - 1)

/* Completions of a send-side verb, and of receives. */
enum { WC_SEND, WC_RECV };

typedef struct pqp {
	struct ibv_qp *qp;
	uint32_t psn;
	hw_mem buf;                /* [0, max) source, [max, 2 max) destination */
	struct ibv_mr *mr;
	hw_msg_verbs peer;
	uint64_t scnt, ccnt;       /* posted, completed (send side) */
	uint64_t rcnt, rposted;    /* received, receives posted */
} pqp;

struct hw_perf {
	hw_vdev dev;
	struct ibv_cq *cq;
	hw_perf_opts o;
	int rank, nqp, reads, rx_depth, sq_depth;
	bool corrupt;
	double last_s;             /* last progress, for the timeout */
	pqp *q;
};

uint32_t hw_perf_cq_mod(size_t bytes, int tx_depth)
{
	uint32_t m = bytes > PERF_CQ_MOD_LIMIT ? 1 : PERF_CQ_MOD;
	return m > (uint32_t)tx_depth ? (uint32_t)tx_depth : m;
}

void hw_perf_where(const hw_perf *p, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s (%s), port %u", ibv_get_device_name(p->dev.ctx->device),
		 p->dev.pattr.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
		 p->dev.port);
}

int hw_perf_reads(const hw_perf *p)
{
	return p->reads;
}

void hw_perf_corrupt(hw_perf *p, bool on)
{
	p->corrupt = on;
}

void hw_perf_free(hw_perf *p)
{
	if (!p)
		return;
	for (int i = 0; p->q && i < p->nqp; i++) {
		if (p->q[i].qp)
			ibv_destroy_qp(p->q[i].qp);
		if (p->q[i].mr)
			ibv_dereg_mr(p->q[i].mr);
		hw_mem_release(&p->q[i].buf);
	}
	if (p->cq)
		ibv_destroy_cq(p->cq);
	hw_vdev_close(&p->dev);
	free(p->q);
	free(p);
}

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

/* Queue sizes within the device's limits; reads outstanding as asked, at
 * most what the device allows (hw_perf_reads says what ran). */
static int size_queues(hw_perf *p)
{
	const struct ibv_device_attr *a = &p->dev.attr;
	int cqe;
	p->sq_depth = min_int(p->o.lat ? PERF_LAT_DEPTH : p->o.tx_depth, a->max_qp_wr);
	p->rx_depth = min_int(p->o.lat ? PERF_LAT_DEPTH : PERF_RX_DEPTH, a->max_qp_wr);
	if (!p->o.lat && p->sq_depth < p->o.tx_depth)
		return hw_fail(SIM_EUNSUPPORTED, "tx_depth %d is more than this device's queue "
			       "takes (max_qp_wr %d)", p->o.tx_depth, a->max_qp_wr);
	p->reads = 1;
	if (p->o.op == HW_PERF_READ)
		p->reads = min_int(min_int(p->o.out_reads > 0 ? p->o.out_reads : 1,
					   a->max_qp_rd_atom), min_int(a->max_qp_init_rd_atom, 255));
	cqe = min_int(p->nqp * (p->sq_depth + p->rx_depth) + 1, a->max_cqe);
	if (!(p->cq = ibv_create_cq(p->dev.ctx, cqe, NULL, NULL, 0)))
		return hw_fail(SIM_EIO, "ibv_create_cq(%d) failed: %s", cqe, strerror(errno));
	return p->reads >= 1 ? 0 : hw_fail(SIM_EUNSUPPORTED, "this device takes no RDMA READ "
					   "outstanding (max_qp_rd_atom 0)");
}

static int qp_setup(hw_perf *p, pqp *q)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_qp_init_attr a = {
		.send_cq = p->cq, .recv_cq = p->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = (uint32_t)p->sq_depth, .max_recv_wr = (uint32_t)p->rx_depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int err = hw_mem_init(&q->buf, p->o.mem, 2 * p->o.max_bytes, -1);
	if (!err)
		err = hw_vdev_reg(&p->dev, &q->buf, access, &q->mr);
	if (!err && !(q->qp = ibv_create_qp(p->dev.pd, &a)))
		err = hw_fail(SIM_EIO, "ibv_create_qp(RC, %d send, %d receive) failed: %s",
			      p->sq_depth, p->rx_depth, strerror(errno));
	return err ? err : hw_vdev_psn(&q->psn);
}

static int check_record(const char *slot, size_t cap)
{
	hw_msg_verbs m;
	return hw_msg_decode_verbs(slot, cap, &m);
}

/* Every rank publishes QP i and reads the other rank's. */
static int exchange(hw_perf *p, int i, bool ok)
{
	char line[HW_MSG_MAX] = "", *all = malloc(2 * HW_MSG_MAX);
	hw_msg_verbs m;
	int err;
	if (!all)
		return hw_fail(SIM_ENOMEM, "out of memory");
	if (ok) {
		hw_vdev_describe(&p->dev, p->q[i].qp, p->q[i].psn, p->q[i].mr, &p->q[i].buf, &m);
		if (hw_msg_encode_verbs(line, sizeof line, &m))
			line[0] = '\0';
	}
	err = hw_comm_exchange(line, all, check_record);
	if (!err)
		err = hw_msg_decode_verbs(all + (size_t)(1 - p->rank) * HW_MSG_MAX, HW_MSG_MAX,
					  &p->q[i].peer);
	if (!err && p->q[i].peer.bytes != p->q[i].buf.bytes)
		err = hw_fail(SIM_EINVAL, "rank %d's buffer has %llu bytes, this one %zu",
			      1 - p->rank, (unsigned long long)p->q[i].peer.bytes, p->q[i].buf.bytes);
	free(all);
	return err;
}

static int connect_all(hw_perf *p, bool ok)
{
	int access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, err = 0, e;
	for (int i = 0; i < p->nqp; i++)
		if ((e = exchange(p, i, ok && !err)) && !err)
			err = e;
	for (int i = 0; i < p->nqp && ok && !err; i++)
		err = hw_vdev_connect(&p->dev, p->q[i].qp, p->q[i].psn, &p->q[i].peer, access,
				      (uint8_t)p->reads);
	return ok ? err : SIM_EPEER;
}

hw_perf *hw_perf_new(const hw_perf_opts *o)
{
	hw_perf *p = calloc(1, sizeof *p);
	int err = p ? 0 : hw_fail(SIM_ENOMEM, "out of memory");
	if (!err) {
		p->o = *o;
		p->rank = hw_comm_rank();
		p->nqp = o->lat ? 1 : o->qps;
		if (!(p->q = calloc((size_t)p->nqp, sizeof *p->q)))
			err = hw_fail(SIM_ENOMEM, "out of memory");
	}
	if (!err)
		err = hw_vdev_open(&p->dev, o->device, -1);
	if (!err)
		err = size_queues(p);
	for (int i = 0; p && p->q && i < p->nqp && !err; i++)
		err = qp_setup(p, &p->q[i]);
	/* every rank takes part in the exchange, so a failed one fails all */
	if (p && p->q)
		err = connect_all(p, err == 0);
	if (!hw_comm_all(err == 0)) {
		hw_perf_free(p);
		return NULL;
	}
	return p;
}

/* The byte at offset i of a message of `bytes` that rank `from` sends on
 * QP qi: a function of the size too, so a previous size's bytes never pass. */
static uint8_t pattern(size_t i, size_t bytes, int from, int qi)
{
	return (uint8_t)((i * 131u + bytes * 7u + (size_t)qi * 17u + (size_t)from * 29u + 1u) & 0xffu);
}

/* Source halves filled with this rank's pattern, destinations cleared. */
static int prepare(hw_perf *p, size_t bytes)
{
	uint8_t *h = malloc(bytes);
	int err = h ? 0 : hw_fail(SIM_ENOMEM, "out of memory");
	for (int qi = 0; qi < p->nqp && !err; qi++) {
		for (size_t i = 0; i < bytes; i++)
			h[i] = pattern(i, bytes, p->rank, qi);
		h[bytes / 2] ^= p->corrupt ? 0x5a : 0;
		err = p->q[qi].buf.ops->from_host(&p->q[qi].buf, 0, h, bytes);
		memset(h, 0, bytes);
		if (!err)
			err = p->q[qi].buf.ops->from_host(&p->q[qi].buf, p->o.max_bytes, h, bytes);
	}
	free(h);
	return err;
}

/* Whether this rank's destination halves receive data in this test. */
static bool receives(const hw_perf *p)
{
	if (p->o.lat)
		return p->o.op != HW_PERF_READ || p->rank == 0;
	return p->o.op == HW_PERF_READ ? p->rank == 0 : p->rank == 1;
}

/* Checks each destination half against the other rank's pattern; *n the
 * bytes checked. 0, SIM_EVERIFY (logged) or a copy error. */
static int verify(hw_perf *p, size_t bytes, uint64_t *n)
{
	uint8_t *h = malloc(bytes);
	int err = h ? 0 : hw_fail(SIM_ENOMEM, "out of memory");
	for (int qi = 0; qi < p->nqp && !err && receives(p); qi++) {
		err = p->q[qi].buf.ops->to_host(&p->q[qi].buf, p->o.max_bytes, h, bytes);
		for (size_t i = 0; i < bytes && !err; i++)
			if (h[i] != pattern(i, bytes, 1 - p->rank, qi))
				err = hw_fail(SIM_EVERIFY, "QP %d, %zu-byte messages: byte %zu is 0x%02x, "
					      "rank %d sent 0x%02x", qi, bytes, i, h[i], 1 - p->rank,
					      pattern(i, bytes, 1 - p->rank, qi));
		*n += err ? 0 : bytes;
	}
	free(h);
	return err;
}

static int post_recv(hw_perf *p, int qi)
{
	pqp *q = &p->q[qi];
	struct ibv_sge sge = { .addr = (uint64_t)(uintptr_t)q->buf.ptr + p->o.max_bytes,
			       .length = (uint32_t)p->o.max_bytes, .lkey = q->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)qi << 48, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	if (ibv_post_recv(q->qp, &wr, &bad))
		return hw_fail(SIM_EIO, "ibv_post_recv failed: %s", strerror(errno));
	q->rposted++;
	return 0;
}

/* Posts message number q->scnt of QP qi: a WRITE (with immediate in a
 * latency test, so the peer learns of it), a SEND or a READ of the peer's
 * source half into this destination half. */
static int post_send(hw_perf *p, int qi, size_t bytes, bool signaled)
{
	pqp *q = &p->q[qi];
	bool rd = p->o.op == HW_PERF_READ;
	uint64_t local = (uint64_t)(uintptr_t)q->buf.ptr + (rd ? p->o.max_bytes : 0);
	struct ibv_sge sge = { .addr = local, .length = (uint32_t)bytes, .lkey = q->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)qi << 48 | (q->scnt & SEQ_MASK), .sg_list = &sge, .num_sge = 1,
		.opcode = rd ? IBV_WR_RDMA_READ : p->o.op == HW_PERF_SEND ? IBV_WR_SEND
			: p->o.lat ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.wr.rdma = { .remote_addr = q->peer.addr + (rd ? 0 : p->o.max_bytes),
			     .rkey = q->peer.rkey },
	}, *bad;
	if (ibv_post_send(q->qp, &wr, &bad))
		return hw_fail(SIM_EIO, "ibv_post_send(%s, %zu bytes) failed: %s",
			       rd ? "READ" : p->o.op == HW_PERF_SEND ? "SEND" : "WRITE", bytes,
			       strerror(errno));
	q->scnt++;
	return 0;
}

/* One completion: counts it on its QP; a failed one is logged with its
 * status, a receive of the wrong size refused. */
static int on_wc(hw_perf *p, const struct ibv_wc *wc, size_t bytes)
{
	pqp *q = &p->q[wc->wr_id >> 48];
	if (wc->status != IBV_WC_SUCCESS)
		return hw_fail(SIM_EPEER, "work request on QP %llu to rank %d failed: %s (status %d, "
			       "vendor error 0x%x)", (unsigned long long)(wc->wr_id >> 48),
			       1 - p->rank, ibv_wc_status_str(wc->status), (int)wc->status,
			       wc->vendor_err);
	if (!(wc->opcode & IBV_WC_RECV)) {
		q->ccnt = (wc->wr_id & SEQ_MASK) + 1;
		return WC_SEND;
	}
	if (wc->opcode == IBV_WC_RECV && wc->byte_len != bytes)
		return hw_fail(SIM_EPEER, "rank %d sent %u bytes, %zu expected", 1 - p->rank,
			       wc->byte_len, bytes);
	q->rcnt++;
	return WC_RECV;
}

/* Polls the CQ once: *recvs the receives that completed (each reposted
 * while the test needs more, `want` per QP). 0 or an error; SIM_ETIMEDOUT
 * after the timeout without any completion. */
static int poll_cq(hw_perf *p, size_t bytes, uint64_t want, int *recvs)
{
	struct ibv_wc wc[32];
	int n = ibv_poll_cq(p->cq, 32, wc), kind, err = 0;
	double now = hw_now_s();
	if (n < 0)
		return hw_fail(SIM_EIO, "ibv_poll_cq failed (%d)", n);
	for (int i = 0; i < n && !err; i++) {
		pqp *q = &p->q[wc[i].wr_id >> 48];
		if ((kind = on_wc(p, &wc[i], bytes)) < 0)
			return kind;
		*recvs += kind == WC_RECV;
		if (kind == WC_RECV && q->rposted < want)
			err = post_recv(p, (int)(wc[i].wr_id >> 48));
	}
	if (n > 0)
		p->last_s = now;
	/* Spin as perftest does, but past 100 us without a completion let
	 * others run: a software device (rxe) needs this CPU to make progress,
	 * and a real adapter answers well within it */
	if (n == 0 && now - p->last_s > PERF_SPIN_S)
		sched_yield();
	if (n == 0 && now - p->last_s > p->o.timeout_ms / 1e3)
		return hw_fail(SIM_ETIMEDOUT, "timed out after %.1f s without a completion from "
			       "rank %d (is it hung?)", p->o.timeout_ms / 1e3, 1 - p->rank);
	return err;
}

/* The requester's stream: tx_depth messages in flight per QP, one
 * signalled every cq_mod and the last; first post to last completion. */
static int bw_stream(hw_perf *p, size_t bytes, uint64_t iters, double *elapsed)
{
	uint32_t mod = hw_perf_cq_mod(bytes, p->o.tx_depth);
	int done = 0, recvs = 0, err = 0;
	double t0 = hw_now_s();
	p->last_s = t0;
	while (done < p->nqp && !err) {
		for (int qi = 0; qi < p->nqp && !err; qi++) {
			pqp *q = &p->q[qi];
			while (!err && q->scnt < iters && q->scnt - q->ccnt < (uint64_t)p->o.tx_depth)
				err = post_send(p, qi, bytes, (q->scnt + 1) % mod == 0 ||
						q->scnt + 1 == iters);
		}
		if (!err)
			err = poll_cq(p, bytes, 0, &recvs);
		done = 0;
		for (int qi = 0; qi < p->nqp; qi++)
			done += p->q[qi].ccnt == iters;
	}
	*elapsed = hw_now_s() - t0;
	return err;
}

/* A SEND stream's receiver: until every QP has received `iters`. */
static int bw_sink(hw_perf *p, size_t bytes, uint64_t iters)
{
	uint64_t got = 0;
	int err = 0;
	p->last_s = hw_now_s();
	while (got < iters * (uint64_t)p->nqp && !err) {
		int r = 0;
		err = poll_cq(p, bytes, iters, &r);
		got += (uint64_t)r;
	}
	return err;
}

/* Waits for one receive on QP 0, reaping send completions meanwhile. */
static int wait_recv(hw_perf *p, size_t bytes, uint64_t want)
{
	int r = 0, err = 0;
	p->last_s = hw_now_s();
	while (!r && !err)
		err = poll_cq(p, bytes, want, &r);
	return err;
}

/* Waits until QP 0's posted sends have all completed. */
static int wait_sends(hw_perf *p, size_t bytes, uint64_t want)
{
	int r = 0, err = 0;
	p->last_s = hw_now_s();
	while (p->q[0].ccnt < p->q[0].scnt && !err)
		err = poll_cq(p, bytes, want, &r);
	return err;
}

/* A ping-pong (WRITE with immediate or SEND): rank 0 sends and waits for
 * the answer, rank 1 answers each; t[i] half of rank 0's round trip. */
static int lat_pingpong(hw_perf *p, size_t bytes, int iters, double *t)
{
	int err = 0;
	for (int i = 0; i < iters && !err; i++) {
		double t0 = hw_now_s();
		if (p->rank == 1)
			err = wait_recv(p, bytes, (uint64_t)iters);
		if (!err && p->q[0].scnt - p->q[0].ccnt >= (uint64_t)p->sq_depth - 1)
			err = wait_sends(p, bytes, (uint64_t)iters);
		if (!err)
			err = post_send(p, 0, bytes, true);
		if (!err && p->rank == 0)
			err = wait_recv(p, bytes, (uint64_t)iters);
		t[i] = (hw_now_s() - t0) / 2;
	}
	return err ? err : wait_sends(p, bytes, (uint64_t)iters);
}

/* Reads one after another on rank 0: t[i] each whole round trip. */
static int lat_reads(hw_perf *p, size_t bytes, int iters, double *t)
{
	int err = 0;
	for (int i = 0; i < iters && !err && p->rank == 0; i++) {
		double t0 = hw_now_s();
		err = post_send(p, 0, bytes, true);
		if (!err)
			err = wait_sends(p, bytes, 0);
		t[i] = hw_now_s() - t0;
	}
	return err;
}

/* Counts from zero for a new test; receives an earlier test left posted
 * count as this one's (a SEND of any size fits them: each takes the
 * largest message). */
static void reset_counts(hw_perf *p)
{
	for (int qi = 0; qi < p->nqp; qi++) {
		pqp *q = &p->q[qi];
		q->rposted = q->rposted > q->rcnt ? q->rposted - q->rcnt : 0;
		q->scnt = q->ccnt = q->rcnt = 0;
	}
}

/* Receives posted before the test, for SENDs and WRITEs with immediate,
 * as many as the queue takes and the test uses; the rest as they complete. */
static int pre_post(hw_perf *p, uint64_t iters)
{
	bool needs = p->o.op == HW_PERF_SEND || (p->o.op == HW_PERF_WRITE && p->o.lat);
	int err = 0;
	for (int qi = 0; qi < p->nqp && needs && !err; qi++)
		while (!err && p->q[qi].rposted < (uint64_t)p->rx_depth && p->q[qi].rposted < iters)
			err = post_recv(p, qi);
	return err;
}

static int run_test(hw_perf *p, size_t bytes, int iters, double *t, hw_perf_res *out)
{
	int err = 0;
	double t0 = hw_now_s();
	if (p->o.lat && p->o.op == HW_PERF_READ)
		err = lat_reads(p, bytes, iters, t);
	else if (p->o.lat)
		err = lat_pingpong(p, bytes, iters, t);
	else if (p->rank == 0)
		err = bw_stream(p, bytes, (uint64_t)iters, &out->elapsed_s);
	else if (p->o.op == HW_PERF_SEND)
		err = bw_sink(p, bytes, (uint64_t)iters);
	if (p->o.lat)
		out->elapsed_s = hw_now_s() - t0;
	return err;
}

int hw_perf_run(hw_perf *p, size_t bytes, int iters, hw_perf_res *out)
{
	double *t = p->o.lat ? calloc((size_t)iters, sizeof *t) : NULL;
	int err = (t || !p->o.lat) ? prepare(p, bytes) : hw_fail(SIM_ENOMEM, "out of memory");
	*out = (hw_perf_res){ .msgs = (uint64_t)iters * (uint64_t)p->nqp };
	reset_counts(p);
	if (!err)
		err = pre_post(p, (uint64_t)iters);
	hw_comm_barrier(); /* buffers ready and receives posted on both sides */
	if (!err)
		err = run_test(p, bytes, iters, t, out);
	if (err && err != SIM_EVERIFY)
		goto done; /* the caller ends the job: the peer may be waiting */
	hw_comm_barrier(); /* every message landed before anyone looks */
	if (!err)
		err = verify(p, bytes, &out->verified_bytes);
	if (!hw_comm_all(err == 0))
		err = err ? err : SIM_EVERIFY;
	out->verified_bytes = (uint64_t)hw_comm_sum((double)out->verified_bytes);
	if (!err && p->o.lat)
		hw_stats_of(t, (size_t)iters, &out->lat);
	if (!err && !p->o.lat && out->elapsed_s > 0) {
		out->bw_Bps = (double)bytes * (double)out->msgs / out->elapsed_s;
		out->msg_rate_per_s = (double)out->msgs / out->elapsed_s;
	}
done:
	free(t);
	return err;
}
