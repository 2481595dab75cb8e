/* Pipeline parallelism replayed for real: one stage's share of a training
 * iteration in Megatron's 1F1B order (models/workload.h wl_1f1b_op, the
 * order models/train.c simulates), its activations sent to the next stage
 * and its activation gradients to the previous one over a ring transport
 * whose neighbours are the neighbouring stages (rank = stage x replicas +
 * replica, Megatron's order), each message's data checked by its receiver. */
#ifndef DPUSIM_HW_PIPE_H
#define DPUSIM_HW_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend-hw/gemm.h"
#include "backend-hw/xport.h"

typedef struct hw_pipe {
	uint32_t stages, microbatches, stage;
	size_t msg_bytes;            /* one activation, and its gradient: one message */
	double fwd_flops, bwd_flops; /* GEMM FLOPs of one microbatch's passes */
	bool corrupt;                /* fault hook: flip a byte of every message sent */
	double alone_s;              /* one message's time alone (hw_pipe_pingpong, the
					slowest pair): the transfer share of a wait */
	unsigned char *sbuf, *rbuf;  /* msg_bytes each, owned */
} hw_pipe;

/* What this stage did, summed over the iterations run (hw_pipe_iteration
 * adds to it). */
typedef struct hw_pipe_count {
	uint64_t fwd_sent, bwd_sent, fwd_recv, bwd_recv;
	uint64_t bad;                /* received messages whose data was wrong */
	double p2p_s;                /* inside the sends and receives (transfer and the
					wait for the neighbouring stage together) */
	double bubble_s;             /* the part of p2p_s the stage waited for its
					neighbour to send (see hw_pipe_iteration) */
	double compute_s, flops_done;
} hw_pipe_count;

/* Allocates p's buffers (its other fields set by the caller). 0 or
 * SIM_ENOMEM (logged). Release with hw_pipe_release. */
int hw_pipe_init(hw_pipe *p);
void hw_pipe_release(hw_pipe *p);

/* One iteration of this stage: the 2 x microbatches passes in 1F1B order,
 * each preceded by the receive of its input (an activation from the left
 * for a forward pass of a stage after the first, a gradient from the right
 * for a backward pass of a stage before the last) combined in one transfer
 * with the send of the previous pass's output, as Megatron-LM combines them
 * (send_forward_recv_backward...), so two neighbours sending to each other
 * never wait on each other. order (NULL: none) gets the passes as run,
 * "F0 F1 B0 ...", cut with "..." at n bytes. An exchange that receives
 * splits its time w as the simulator splits a stage's wait (models/train.c
 * end_wait: until the neighbour sent is the pipeline bubble, from then on
 * the transfer), taking the transfer to last what one message alone does:
 * min(w, alone_s) joins p2p_s only, the rest bubble_s too (clock-free: the
 * ranks' clocks need not agree). Returns 0; SIM_EVERIFY when a
 * GEMM or a received message was wrong (logged; the schedule still runs to
 * its end, so no neighbour is left waiting); or the transport's error. */
int hw_pipe_iteration(hw_pipe *p, hw_xport *x, hw_gemm *g, hw_pipe_count *c, char *order,
		      size_t n);

/* One message's time between neighbouring stages, alone: each stage s with
 * s + 1 < stages sends msg_bytes right and gets them back, reps times (after
 * one untimed round), stage pairs (s, s + 1) of even s first, then of odd s;
 * *half_rtt_s gets this rank's median half round trip as the sender, 0 on
 * a rank that sends in no pair. Every rank calls it. 0 or the transport's
 * error. */
int hw_pipe_pingpong(hw_pipe *p, hw_xport *x, int reps, double *half_rtt_s);

/* The 32-bit words and tail bytes of message (from_stage, microbatch, fwd):
 * a pattern the receiver can check without being sent it. */
void hw_pipe_fill(unsigned char *buf, size_t n, uint32_t from, uint32_t m, bool fwd);
/* The first byte of buf that is not that pattern, or n. */
size_t hw_pipe_check(const unsigned char *buf, size_t n, uint32_t from, uint32_t m, bool fwd);

#endif
