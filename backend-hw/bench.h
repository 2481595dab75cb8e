/* dpusim-hw bench internals: the shared context and the benchmark groups.
 * Rank 0 collects every figure into the report and prints the table. */
#ifndef DPUSIM_HW_BENCH_H
#define DPUSIM_HW_BENCH_H

#include <stdbool.h>
#include <math.h>
#include <stddef.h>

#include "backend-hw/stats.h"
#include "backend-hw/xport.h"
#include "report/report.h"

#define HW_BENCH_MAX_SIZES 32

typedef struct hw_bench {
	rep_report *rep;           /* rank 0 only; NULL elsewhere */
	int rank, size;
	bool quick;
	size_t sizes[HW_BENCH_MAX_SIZES];  /* message sizes for p2p and all-reduce */
	int nsizes;
	const char *transport;     /* "tcp" | "verbs" */
	const char *mem;           /* verbs receive memory: "host" | "cuda" */
	const char *dir;           /* storage benchmark directory */
	int timeout_ms;
	int start_timeout_ms;       /* --start-timeout; 0: hw_comm_init's default */
	int fault_rank;            /* DPUSIM_HW_FAULT: which rank misbehaves, -1 none */
	char fault[16];            /* "exit", "hang", "corrupt" */
	const char *p2p_name;      /* point-to-point name prefix: tcp, rdma_write, rdma_send */
} hw_bench;

/* Rank 0: adds b to the report and prints one table row. Others: no-op.
 * 0, or the report's error (logged: a benchmark the schema refuses is a bug). */
int hw_bench_emit(hw_bench *h, const rep_benchmark *b);
/* Same without the table row (the caller prints its own). */
int hw_bench_add(hw_bench *h, const rep_benchmark *b);
/* A benchmark group `what` ("storage", "gpu", ...) not run here, and why:
 * the table says "  WHAT: skipped: WHY" and the report's info
 * skipped.WHAT holds WHY, so a report without those benchmarks says why
 * (rank 0; others: no-op). 0, or SIM_ENOMEM (logged). */
int hw_bench_skip(hw_bench *h, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Host-local benchmarks on rank 0 while the other ranks wait quietly:
 * memcpy bandwidth, AES-GCM per core, storage reads, and GPU GEMM/copies
 * when CUDA has a device. 0, or SIM_EPEER on every rank when rank 0 failed
 * (its error is logged). */
int hw_bench_local(hw_bench *h);
/* Transport benchmarks over x: point-to-point latency/bandwidth between
 * ranks 0 and 1 (with TCP CPU cost per byte), then the verified ring
 * all-reduce over every size. 0, SIM_EVERIFY on a wrong sum, or the
 * transport's error (logged). */
int hw_bench_net(hw_bench *h, hw_xport *x);

/* Checks the fault hook at `point`: exits or hangs this rank if so asked. */
void hw_bench_fault(const hw_bench *h, const char *point);

/* The storage files of bench and replay. */
#define HW_STOR_BLOCK ((size_t)1 << 20)
/* Creates a file in dir, which may be shared (/tmp): a fresh name (O_EXCL:
 * nothing planted there, symlink or file, is ever opened) that is removed
 * at once, so no path leaves it behind, a killed rank included. The
 * descriptor alone reaches it (cuFile through /proc/self/fd). Returns the
 * descriptor, or -1 logged (messages start with `what`). */
int hw_stor_create(const char *dir, const char *what);
/* Writes `bytes` through fd, every byte of the HW_STOR_BLOCK-sized block at
 * offset o being (o / HW_STOR_BLOCK) % 251, and syncs it (fsync). 0 or
 * SIM_EIO / SIM_ENOMEM (logged). */
int hw_stor_write(int fd, size_t bytes, const char *what);

/* Monotonic seconds. */
double hw_now_s(void);

#endif
