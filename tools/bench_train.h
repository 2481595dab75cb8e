/* The training part of `dpusim bench scale` (tools/bench_train.c). */
#ifndef DPUSIM_TOOLS_BENCH_TRAIN_H
#define DPUSIM_TOOLS_BENCH_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

/* A configuration to time: the variant's network (host-tcp, rdma,
 * rdma-gdr), the fabric's routing (ecmp, adaptive), the microbatches
 * per pipeline (0: a global batch of 1536 whatever the size) and whether
 * a ring's steps run lumped (collectives.ring_steps). */
typedef struct bench_train_case {
	const char *network, *routing;
	uint32_t microbatches;
	bool lumped;
} bench_train_case;

/* One iteration of GPT-3 175B (tp 8, pp 16, dp to fill) at each of the n
 * GPU counts (multiples of 128) for each case, each in a child process;
 * prints "train gpt3-175b gpus=G network=N routing=R microbatches=M
 * wall_s=W peak_rss_kb=K events=E iteration_s=T ring_steps=S" (S exact or
 * lumped). Returns CLI_OK or
 * CLI_USAGE when a size failed (said on stderr). */
int bench_train(const uint32_t *gpus, int n, const bench_train_case *cases, int ncases);

#endif
