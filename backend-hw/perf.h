/* perftest's point-to-point tests on real verbs between MPI ranks 0 and 1
 * (linux-rdma/perftest: ib_write_bw, ib_send_bw, ib_read_bw and their _lat
 * forms), with the semantics the simulator's p2p workload models
 * (models/p2p.h): a bandwidth test keeps tx_depth messages posted and not
 * completed on each of its QPs, signals a completion every cq_mod messages
 * and reports every byte over the time from the first post to the last
 * completion; a latency test is a ping-pong (a read: one read after another)
 * and reports each round trip. Rank 0 is the requester, rank 1 the
 * responder. Buffers are registered once, host or GPU memory (dmabuf), one
 * per QP: a source half the sender fills with a pattern and a destination
 * half the receiver clears before and checks after every test. */
#ifndef DPUSIM_HW_PERF_H
#define DPUSIM_HW_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend-hw/mem.h"
#include "backend-hw/stats.h"

typedef enum hw_perf_op { HW_PERF_WRITE, HW_PERF_SEND, HW_PERF_READ } hw_perf_op;

typedef struct hw_perf_opts {
	hw_perf_op op;
	bool lat;                /* latency test: QP 0, one message at a time */
	int qps;                 /* bandwidth: queue pairs, each its own stream */
	int tx_depth;            /* bandwidth: messages in flight per QP */
	int out_reads;           /* read bandwidth: reads outstanding per QP (capped by
	                            the device's max_qp_rd_atom, hw_perf_reads says) */
	size_t max_bytes;        /* the largest message */
	const hw_mem_ops *mem;   /* where the buffers are */
	int timeout_ms;          /* longest wait without progress */
	const char *device;      /* NULL: the first RDMA device */
} hw_perf_opts;

typedef struct hw_perf hw_perf;

/* Opens the device and connects o->qps RC QPs (one for a latency test)
 * between ranks 0 and 1 (the job has exactly 2). A collective call: NULL on
 * every rank when any failed (logged). Free with hw_perf_free. */
hw_perf *hw_perf_new(const hw_perf_opts *o);
/* NULL is a no-op. */
void hw_perf_free(hw_perf *p);
/* "rxe0 (RoCE), port 1": the device and port the tests run on. */
void hw_perf_where(const hw_perf *p, char *buf, size_t cap);
/* The reads each QP has outstanding (read tests; 1 otherwise). */
int hw_perf_reads(const hw_perf *p);

/* perftest signals a bandwidth test's completion every DEF_CQ_MOD = 100
 * messages, every message above MSG_SIZE_CQ_MOD_LIMIT = 8192 bytes, never
 * fewer than tx_depth (tools/run_p2p.c and models/p2p.c do the same). */
uint32_t hw_perf_cq_mod(size_t bytes, int tx_depth);

typedef struct hw_perf_res {
	double elapsed_s;        /* bandwidth: first post to last completion; latency:
	                            the whole ping-pong */
	double bw_Bps;           /* bandwidth: payload bytes / elapsed_s */
	double msg_rate_per_s;   /* bandwidth: messages / elapsed_s */
	hw_stats lat;            /* latency: half round trips (write, send) or round
	                            trips (read) */
	uint64_t msgs;           /* messages the test moved (all QPs) */
	uint64_t verified_bytes; /* destination bytes checked against the pattern */
} hw_perf_res;

/* One test of `iterations` messages (round trips) of `bytes` (1 to
 * max_bytes): both ranks call it. Figures on rank 0. 0; SIM_EVERIFY on
 * every rank when a destination did not hold the sender's pattern after the
 * test (logged); SIM_ETIMEDOUT, SIM_EPEER or SIM_EIO from the verbs path
 * (logged; the caller ends the job: the peer may be stuck). */
int hw_perf_run(hw_perf *p, size_t bytes, int iterations, hw_perf_res *out);

/* DPUSIM_HW_FAULT=corrupt:R for tests: rank R's source pattern differs
 * from the one its receiver expects in one byte. */
void hw_perf_corrupt(hw_perf *p, bool on);

#endif
