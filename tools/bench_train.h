/* The training part of `dpusim bench scale` (tools/bench_train.c). */
#ifndef DPUSIM_TOOLS_BENCH_TRAIN_H
#define DPUSIM_TOOLS_BENCH_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

/* A configuration to time: the variant's network (host-tcp, rdma,
 * rdma-gdr), the fabric's routing (ecmp, dmodk, adaptive), the work per
 * size (microbatches per pipeline, or when that is 0 a fixed global batch
 * of global_batch samples whatever the size) and whether a ring's steps
 * run lumped (collectives.ring_steps). */
typedef struct bench_train_case {
	const char *network, *routing;
	uint32_t microbatches, global_batch;
	bool lumped;
} bench_train_case;

/* One iteration of GPT-3 175B (tp 8, pp 16, dp to fill) at each of the n
 * GPU counts (multiples of 128) for each case, each in a child process;
 * prints "train gpt3-175b gpus=G network=N routing=R microbatches=M
 * wall_s=W peak_rss_kb=K events=E iteration_s=T ring_steps=S" (S exact or
 * lumped), then per case one line of the curve between its sizes:
 * "scale NET/ROUTING/M S: G1->G2 wall xA work xB events xC ns/event D->E; ..."
 * (M as given, gB for a fixed global batch; work is GPUs x microbatches).
 * Returns CLI_OK or CLI_USAGE when a size failed (said on stderr). */
int bench_train(const uint32_t *gpus, int n, const bench_train_case *cases, int ncases);

#endif
