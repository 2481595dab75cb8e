/* One pipeline stage's iteration in 1F1B order over a ring transport (see
 * pipe.h); the order comes from the simulator's own wl_1f1b_op. */
#include "backend-hw/pipe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend-hw/bench.h"
#include "backend-hw/comm.h"
#include "backend-hw/log.h"
#include "models/workload.h"

int hw_pipe_init(hw_pipe *p)
{
	size_t n = p->msg_bytes ? p->msg_bytes : 1;
	p->sbuf = malloc(n);
	p->rbuf = malloc(n);
	if (!p->sbuf || !p->rbuf)
		return hw_fail(SIM_ENOMEM, "out of memory for two %zu-byte pipeline messages", n);
	return 0;
}

void hw_pipe_release(hw_pipe *p)
{
	free(p->sbuf);
	free(p->rbuf);
	p->sbuf = p->rbuf = NULL;
}

static uint32_t word_of(size_t i, uint32_t tag)
{
	return (uint32_t)i * 2654435761u ^ tag;
}

static uint32_t tag_of(uint32_t from, uint32_t m, bool fwd)
{
	return (from * 2654435761u) ^ (m * 40503u) ^ (fwd ? 0x5bd1e995u : 0x1b873593u);
}

void hw_pipe_fill(unsigned char *buf, size_t n, uint32_t from, uint32_t m, bool fwd)
{
	uint32_t tag = tag_of(from, m, fwd);
	size_t words = n / 4;
	for (size_t i = 0; i < words; i++) {
		uint32_t w = word_of(i, tag);
		memcpy(buf + 4 * i, &w, 4);
	}
	for (size_t i = 4 * words; i < n; i++)
		buf[i] = (unsigned char)(tag + i);
}

size_t hw_pipe_check(const unsigned char *buf, size_t n, uint32_t from, uint32_t m, bool fwd)
{
	uint32_t tag = tag_of(from, m, fwd);
	size_t words = n / 4;
	for (size_t i = 0; i < words; i++) {
		uint32_t w = word_of(i, tag), got;
		memcpy(&got, buf + 4 * i, 4);
		if (got != w)
			return 4 * i;
	}
	for (size_t i = 4 * words; i < n; i++)
		if (buf[i] != (unsigned char)(tag + i))
			return i;
	return n;
}

/* A message one pass sends or receives: which link, and its pattern. */
typedef struct msg {
	int link;      /* HW_NOLINK: none */
	uint32_t from, m;
	bool fwd;
} msg;

/* The input pass (fwd, m) of this stage waits for, and the output it sends. */
static msg input_of(const hw_pipe *p, bool fwd, uint32_t m)
{
	if (fwd && p->stage > 0)
		return (msg){ HW_LEFT, p->stage - 1, m, true };
	if (!fwd && p->stage + 1 < p->stages)
		return (msg){ HW_RIGHT, p->stage + 1, m, false };
	return (msg){ .link = HW_NOLINK };
}

static msg output_of(const hw_pipe *p, bool fwd, uint32_t m)
{
	if (fwd && p->stage + 1 < p->stages)
		return (msg){ HW_RIGHT, p->stage, m, true };
	if (!fwd && p->stage > 0)
		return (msg){ HW_LEFT, p->stage, m, false };
	return (msg){ .link = HW_NOLINK };
}

/* Sends `out` (already in sbuf) while receiving `in`, both optional; counts
 * and checks. 0, SIM_EVERIFY (a wrong message: logged), or the transport's
 * error. */
static int exchange(hw_pipe *p, hw_xport *x, msg out, msg in, hw_pipe_count *c)
{
	size_t n = p->msg_bytes, at;
	double t0 = hw_now_s();
	int err;
	if (out.link == HW_NOLINK && in.link == HW_NOLINK)
		return 0;
	err = hw_xfer(x, out.link, p->sbuf, n, in.link, p->rbuf, n);
	t0 = hw_now_s() - t0;
	c->p2p_s += t0;
	if (in.link != HW_NOLINK)
		c->bubble_s += t0 - fmin(t0, p->alone_s);
	if (err)
		return err;
	if (out.link != HW_NOLINK)
		out.fwd ? c->fwd_sent++ : c->bwd_sent++;
	if (in.link == HW_NOLINK)
		return 0;
	in.fwd ? c->fwd_recv++ : c->bwd_recv++;
	if ((at = hw_pipe_check(p->rbuf, n, in.from, in.m, in.fwd)) == n)
		return 0;
	c->bad++;
	hw_error("the %s of microbatch %u from stage %u (rank %d) is wrong at byte %zu of %zu",
		 in.fwd ? "activation" : "activation gradient", in.m, in.from, x->peer[in.link],
		 at, n);
	return SIM_EVERIFY;
}

/* "F3 " or "B3 " appended to order while it fits, else "..." once. */
static void note_op(char *order, size_t n, bool fwd, uint32_t m)
{
	size_t len;
	char op[16];
	if (!order || !n)
		return;
	len = strlen(order);
	if (len >= 3 && !strcmp(order + len - 3, "..."))
		return;
	snprintf(op, sizeof op, "%s%c%u", len ? " " : "", fwd ? 'F' : 'B', m);
	if (len + strlen(op) + 4 < n)
		memcpy(order + len, op, strlen(op) + 1);
	else
		snprintf(order + len, n - len, "%s...", len ? " " : "");
}

static int run_pass(hw_pipe *p, hw_gemm *g, bool fwd, hw_pipe_count *c)
{
	double done = 0, secs = 0;
	int err = hw_gemm_run(g, fwd ? p->fwd_flops : p->bwd_flops, &done, &secs);
	c->flops_done += done;
	c->compute_s += secs;
	return err;
}

int hw_pipe_iteration(hw_pipe *p, hw_xport *x, hw_gemm *g, hw_pipe_count *c, char *order,
		      size_t n)
{
	msg out = { .link = HW_NOLINK };
	int bad = 0, err = 0;
	if (order && n)
		order[0] = '\0';
	for (uint32_t i = 0; i < 2 * p->microbatches && !err; i++) {
		bool fwd;
		uint32_t m;
		wl_1f1b_op(p->stages, p->microbatches, p->stage, i, &fwd, &m);
		err = exchange(p, x, out, input_of(p, fwd, m), c);
		if (err == SIM_EVERIFY)
			bad = 1, err = 0;
		if (!err && (err = run_pass(p, g, fwd, c)) == SIM_EVERIFY)
			bad = 1, err = 0;
		note_op(order, n, fwd, m);
		out = output_of(p, fwd, m);
		if (out.link != HW_NOLINK) {
			hw_pipe_fill(p->sbuf, p->msg_bytes, out.from, out.m, out.fwd);
			if (p->corrupt && p->msg_bytes)
				p->sbuf[p->msg_bytes / 2] ^= 0x01;
		}
	}
	if (!err)
		err = exchange(p, x, out, (msg){ .link = HW_NOLINK }, c);
	if (err == SIM_EVERIFY)
		bad = 1, err = 0;
	return err ? err : bad ? SIM_EVERIFY : 0;
}

int hw_pipe_pingpong(hw_pipe *p, hw_xport *x, int reps, double *half_rtt_s)
{
	double *t = calloc((size_t)reps, sizeof *t);
	size_t n = p->msg_bytes;
	int err = t ? 0 : hw_fail(SIM_ENOMEM, "out of memory");
	*half_rtt_s = 0;
	for (uint32_t phase = 0; phase < 2; phase++) {
		/* this rank sends in pair (stage, stage + 1), answers in (stage - 1, stage) */
		bool send = p->stage % 2 == phase && p->stage + 1 < p->stages;
		bool answer = p->stage > 0 && (p->stage - 1) % 2 == phase;
		for (int k = -1; k < reps && !err && (send || answer); k++) {
			double t0 = hw_now_s();
			if (send && !(err = hw_send(x, HW_RIGHT, p->sbuf, n)))
				err = hw_recv(x, HW_RIGHT, p->rbuf, n);
			if (answer && !(err = hw_recv(x, HW_LEFT, p->rbuf, n)))
				err = hw_send(x, HW_LEFT, p->rbuf, n);
			if (send && k >= 0)
				t[k] = (hw_now_s() - t0) / 2;
		}
		if (!err && send)
			*half_rtt_s = hw_median(t, (size_t)reps);
		hw_comm_barrier();
	}
	free(t);
	return err;
}
