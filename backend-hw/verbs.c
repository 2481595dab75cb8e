/* The verbs transport: one RC queue pair per ring link, RDMA WRITE with
 * immediate into the peer's registered staging buffer (host memory, or GPU
 * memory through dmabuf), with a one-message credit per link so a writer
 * never overwrites data its peer has not consumed. One context owns every
 * verbs object; verbs_free releases whatever was made, on every path. */
#include "backend-hw/xport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "backend-hw/comm.h"
#include "backend-hw/log.h"
#include "backend-hw/mem.h"
#include "backend-hw/msg.h"
#include "backend-hw/vdev.h"

#define VERBS_DEPTH 64            /* work requests per queue */
#define IMM_CREDIT 0x80000000u    /* immediate value: a credit, not data */
#define WR_DATA 1u
#define WR_CREDIT 2u
#define WR_RECV 3u

typedef struct vlink {
	struct ibv_qp *qp;
	hw_mem stage;              /* the peer WRITEs here */
	struct ibv_mr *stage_mr;
	hw_msg_verbs peer;         /* the peer's QP and staging buffer */
	uint32_t psn;              /* our starting PSN */
	int credits;               /* messages we may write to the peer */
	bool data_ready;           /* a message waits in stage */
	uint32_t data_len;
	bool send_done;            /* our last data WRITE completed */
} vlink;

typedef struct verbs_xport {
	hw_xport base;
	hw_vdev dev;               /* context, PD, port, GID */
	struct ibv_comp_channel *chan;  /* lets an idle wait sleep in poll(2) */
	struct ibv_cq *cq;
	hw_mem bounce;             /* registered host memory we send from */
	struct ibv_mr *bounce_mr;
	bool use_send;             /* data by SEND with immediate, not RDMA WRITE */
	vlink link[2];
} verbs_xport;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void verbs_free(hw_xport *x)
{
	verbs_xport *v = (verbs_xport *)x;
	for (int i = 0; i < 2; i++) {
		vlink *l = &v->link[i];
		if (l->qp)
			ibv_destroy_qp(l->qp);
		if (l->stage_mr)
			ibv_dereg_mr(l->stage_mr);
		hw_mem_release(&l->stage);
	}
	if (v->bounce_mr)
		ibv_dereg_mr(v->bounce_mr);
	hw_mem_release(&v->bounce);
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->chan)
		ibv_destroy_comp_channel(v->chan);
	hw_vdev_close(&v->dev);
	free(v);
}

static int register_stage(verbs_xport *v, vlink *l, const hw_mem_ops *mem, size_t bytes)
{
	int err = hw_mem_init(&l->stage, mem, bytes, -1);
	return err ? err : hw_vdev_reg(&v->dev, &l->stage, IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE, &l->stage_mr);
}

static int create_qp(verbs_xport *v, vlink *l)
{
	struct ibv_qp_init_attr a = {
		.send_cq = v->cq,
		.recv_cq = v->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = VERBS_DEPTH, .max_recv_wr = VERBS_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	l->qp = ibv_create_qp(v->dev.pd, &a);
	VERBSCHECK(l->qp, "ibv_create_qp(RC)");
	l->credits = 1;
	return hw_vdev_psn(&l->psn);
}

/* Every receive names the staging buffer: a SEND lands there, while a WRITE
 * with immediate (data or credit) only consumes the request, so the sender
 * may switch between the two without the receiver knowing. */
static int post_recv(vlink *l, int link)
{
	struct ibv_sge sge = { .addr = (uint64_t)(uintptr_t)l->stage.ptr,
			       .length = (uint32_t)l->stage.bytes, .lkey = l->stage_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)link << 8 | WR_RECV, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	VERBSCHECK(!ibv_post_recv(l->qp, &wr, &bad), "ibv_post_recv");
	return 0;
}

/* WRITE (or SEND) with immediate: `bytes` from the bounce buffer to the
 * peer's staging (data), or a zero-byte WRITE with IMM_CREDIT (a credit). */
static int post_write(verbs_xport *v, int link, size_t bytes, bool credit)
{
	vlink *l = &v->link[link];
	struct ibv_sge sge = { .addr = (uint64_t)(uintptr_t)v->bounce.ptr, .length = (uint32_t)bytes,
			       .lkey = v->bounce_mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)link << 8 | (credit ? WR_CREDIT : WR_DATA),
		.sg_list = &sge, .num_sge = credit || bytes == 0 ? 0 : 1,
		.opcode = v->use_send && !credit ? IBV_WR_SEND_WITH_IMM : IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(credit ? IMM_CREDIT : (uint32_t)bytes),
		.wr.rdma = { .remote_addr = l->peer.addr, .rkey = l->peer.rkey },
	}, *bad;
	VERBSCHECK(!ibv_post_send(l->qp, &wr, &bad), "ibv_post_send(data or credit)");
	return 0;
}

/* Handles one completion; 0 or SIM_EPEER/SIM_EIO (logged with the peer). */
static int on_completion(verbs_xport *v, const struct ibv_wc *wc)
{
	int link = (int)(wc->wr_id >> 8) & 1;
	unsigned kind = (unsigned)(wc->wr_id & 0xff);
	vlink *l = &v->link[link];
	if (wc->status != IBV_WC_SUCCESS)
		return hw_fail(SIM_EPEER, "work request to rank %d (%s neighbour) failed: %s "
			       "(status %d, vendor error 0x%x)", v->base.peer[link],
			       hw_link_name(link), ibv_wc_status_str(wc->status), (int)wc->status,
			       wc->vendor_err);
	if (kind == WR_DATA)
		l->send_done = true;
	if (kind != WR_RECV)
		return 0;
	if ((wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM && wc->opcode != IBV_WC_RECV) ||
	    !(wc->wc_flags & IBV_WC_WITH_IMM))
		return hw_fail(SIM_EIO, "unexpected completion opcode %d from rank %d",
			       (int)wc->opcode, v->base.peer[link]);
	if (ntohl(wc->imm_data) & IMM_CREDIT) {
		l->credits++;
	} else {
		l->data_ready = true;
		l->data_len = ntohl(wc->imm_data);
	}
	return post_recv(l, link);
}

/* Polls the CQ once; *progress set when anything completed. */
static int poll_once(verbs_xport *v, bool *progress)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(v->cq, 16, wc), err;
	if (n < 0)
		return hw_fail(SIM_EIO, "ibv_poll_cq failed (%d)", n);
	for (int i = 0; i < n; i++)
		if ((err = on_completion(v, &wc[i])))
			return err;
	*progress = *progress || n > 0;
	return 0;
}

/* Takes the message waiting on link rl: size check, copy out, credit back. */
static int consume(verbs_xport *v, int rl, void *rb, size_t rn)
{
	vlink *l = &v->link[rl];
	int err;
	if (l->data_len != rn)
		return hw_fail(SIM_EPEER, "rank %d (%s neighbour) sent %u bytes, %zu expected",
			       v->base.peer[rl], hw_link_name(rl), l->data_len, rn);
	if (rn && (err = l->stage.ops->to_host(&l->stage, 0, rb, rn)))
		return err;
	l->data_ready = false;
	return post_write(v, rl, 0, true);
}

/* Sleeps until the CQ has a completion or `ms` pass: arm, look once more
 * (a completion may have come before arming), then poll(2) the channel.
 * *progress is set when the second look found something. */
static int sleep_on_cq(verbs_xport *v, int ms, bool *progress)
{
	struct pollfd p = { .fd = v->chan->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;
	int err, n;
	VERBSCHECK(!ibv_req_notify_cq(v->cq, 0), "ibv_req_notify_cq");
	if ((err = poll_once(v, progress)) || *progress)
		return err;
	n = poll(&p, 1, ms);
	if (n < 0 && errno != EINTR)
		return hw_fail(SIM_EIO, "poll on the completion channel: %s", strerror(errno));
	if (n > 0) {
		VERBSCHECK(!ibv_get_cq_event(v->chan, &cq, &ctx), "ibv_get_cq_event");
		ibv_ack_cq_events(cq, 1);
	}
	return 0;
}

static int verbs_timeout(verbs_xport *v, int sl, bool sdone, int rl)
{
	double s = v->base.timeout_ms / 1e3;
	if (!sdone && v->link[sl].credits == 0)
		return hw_fail(SIM_ETIMEDOUT, "timed out after %.1f s waiting for rank %d (%s "
			       "neighbour) to free its buffer (is it hung?)", s, v->base.peer[sl],
			       hw_link_name(sl));
	if (rl >= 0)
		return hw_fail(SIM_ETIMEDOUT, "timed out after %.1f s waiting for data from rank %d "
			       "(%s neighbour) (is it hung?)", s, v->base.peer[rl], hw_link_name(rl));
	return hw_fail(SIM_ETIMEDOUT, "timed out after %.1f s waiting for a WRITE to rank %d to "
		       "complete", s, v->base.peer[sl]);
}

static int verbs_xfer(hw_xport *x, int sl, const void *sb, size_t sn, int rl, void *rb,
		      size_t rn)
{
	verbs_xport *v = (verbs_xport *)x;
	bool posted = sl < 0, sdone = sl < 0, rdone = rl < 0;
	double last = now_ms(), idle_ms;
	int err;
	if ((sl >= 0 && sn > x->max_msg) || (rl >= 0 && rn > x->max_msg) || sn > INT32_MAX)
		return hw_fail(SIM_ERANGE, "message of %zu bytes is larger than the verbs staging "
			       "buffer (%zu)", sl >= 0 ? sn : rn, x->max_msg);
	while (!sdone || !rdone) {
		bool progress = false;
		if (!posted && v->link[sl].credits > 0) {
			memcpy(v->bounce.ptr, sb, sn);
			v->link[sl].credits--;
			v->link[sl].send_done = false;
			if ((err = post_write(v, sl, sn, false)))
				return err;
			posted = progress = true;
		}
		if (!rdone && v->link[rl].data_ready) {
			if ((err = consume(v, rl, rb, rn)))
				return err;
			rdone = progress = true;
		}
		if ((err = poll_once(v, &progress)))
			return err;
		if (posted && !sdone && v->link[sl].send_done)
			sdone = true;
		if (progress) {
			last = now_ms();
			continue;
		}
		idle_ms = now_ms() - last;
		if (idle_ms > v->base.timeout_ms)
			return verbs_timeout(v, sl, sdone, rdone ? -1 : rl);
		/* Spin for the first 50 us of a wait (latency), then sleep on the
		 * completion channel so waiting ranks leave the CPU to others. */
		if (idle_ms > 0.05 && (err = sleep_on_cq(v, 10, &progress)))
			return err;
	}
	return 0;
}

static const hw_xport_ops verbs_ops;

int hw_verbs_use_send(hw_xport *x, bool send)
{
	if (x->ops != &verbs_ops)
		return SIM_EINVAL;
	((verbs_xport *)x)->use_send = send;
	return 0;
}

static const hw_xport_ops verbs_ops = {
	.name = "verbs",
	.xfer = verbs_xfer,
	.free = verbs_free,
};

/* Device, PD, CQ, bounce buffer, and per link a staging buffer and a QP. */
static int verbs_setup(verbs_xport *v, const hw_xport_opts *o)
{
	const hw_mem_ops *mem = hw_mem_backend(o->mem ? o->mem : "host");
	int err;
	if (!mem)
		return hw_fail(SIM_EUNSUPPORTED, "memory '%s' is not compiled in", o->mem);
	if ((err = hw_vdev_open(&v->dev, o->device, o->gid_index)))
		return err;
	v->chan = ibv_create_comp_channel(v->dev.ctx);
	VERBSCHECK(v->chan, "ibv_create_comp_channel");
	v->cq = ibv_create_cq(v->dev.ctx, 4 * VERBS_DEPTH, NULL, v->chan, 0);
	VERBSCHECK(v->cq, "ibv_create_cq");
	if ((err = hw_mem_init(&v->bounce, &hw_mem_host_ops, v->base.max_msg, -1)))
		return err;
	v->bounce_mr = ibv_reg_mr(v->dev.pd, v->bounce.ptr, v->base.max_msg, IBV_ACCESS_LOCAL_WRITE);
	VERBSCHECK(v->bounce_mr, "ibv_reg_mr(bounce)");
	for (int i = 0; i < 2; i++)
		if ((err = register_stage(v, &v->link[i], mem, v->base.max_msg)) ||
		    (err = create_qp(v, &v->link[i])))
			return err;
	return 0;
}

static void describe(const verbs_xport *v, const vlink *l, hw_msg_verbs *m)
{
	hw_vdev_describe(&v->dev, l->qp, l->psn, l->stage_mr, &l->stage, m);
}

static int verbs_check(const char *slot, size_t cap)
{
	hw_msg_verbs m;
	return hw_msg_decode_verbs(slot, cap, &m);
}

/* One exchange round: everyone publishes its `publish` link; this rank reads
 * the neighbour on its `peer_of` side, whose published link faces it. */
static int exchange_round(verbs_xport *v, bool ok, int publish, int peer_of)
{
	char line[HW_MSG_MAX] = "", *all = malloc((size_t)hw_comm_size() * HW_MSG_MAX);
	hw_msg_verbs m;
	int err;
	if (!all)
		return hw_fail(SIM_ENOMEM, "out of memory");
	if (ok) {
		describe(v, &v->link[publish], &m);
		if (hw_msg_encode_verbs(line, sizeof line, &m))
			line[0] = '\0';
	}
	err = hw_comm_exchange(line, all, verbs_check);
	if (err == SIM_EPEER && publish == HW_LEFT) /* said once, not per round */
		hw_error("a rank could not set up its verbs resources; giving up");
	else if (!err) /* checked by hw_comm_exchange: cannot fail here */
		err = hw_msg_decode_verbs(all + (size_t)v->base.peer[peer_of] * HW_MSG_MAX,
					  HW_MSG_MAX, &v->link[peer_of].peer);
	free(all);
	return err;
}

static int verbs_connect(verbs_xport *v, const hw_xport_opts *o)
{
	int err = verbs_setup(v, o);
	/* Rank r's right QP talks to rank r+1's left QP, and the other way round. */
	int e1 = exchange_round(v, err == 0, HW_LEFT, HW_RIGHT);
	int e2 = exchange_round(v, err == 0, HW_RIGHT, HW_LEFT);
	if (err || e1 || e2)
		return err ? err : e1 ? e1 : e2;
	for (int i = 0; i < 2; i++) {
		if (v->link[i].peer.bytes < v->base.max_msg)
			return hw_fail(SIM_EINVAL, "rank %d's staging buffer (%llu bytes) is smaller "
				       "than ours", v->base.peer[i],
				       (unsigned long long)v->link[i].peer.bytes);
		if ((err = hw_vdev_connect(&v->dev, v->link[i].qp, v->link[i].psn, &v->link[i].peer,
					   IBV_ACCESS_REMOTE_WRITE, 1)))
			return err;
		for (int k = 0; k < VERBS_DEPTH / 2; k++)
			if ((err = post_recv(&v->link[i], i)))
				return err;
	}
	return 0;
}

hw_xport *hw_verbs_new(const hw_xport_opts *o)
{
	verbs_xport *v;
	int err;
	if (!hw_comm_has_peers("verbs"))
		return NULL;
	if (!(v = calloc(1, sizeof *v)))
		return NULL;
	v->base = (hw_xport){ .ops = &verbs_ops, .timeout_ms = o->timeout_ms,
			      .max_msg = o->max_msg ? o->max_msg : 1 };
	err = hw_xport_place_me(&v->base, o);
	if (!err)
		err = verbs_connect(v, o);
	/* Every rank has posted its receives before anyone writes. */
	if (!hw_comm_all(err == 0)) {
		verbs_free(&v->base);
		return NULL;
	}
	return &v->base;
}
