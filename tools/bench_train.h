/* The training part of `dpusim bench scale` (tools/bench_train.c). */
#ifndef DPUSIM_TOOLS_BENCH_TRAIN_H
#define DPUSIM_TOOLS_BENCH_TRAIN_H

#include <stdint.h>

/* One iteration of GPT-3 175B (tp 8, pp 16, dp to fill) at each of the n
 * GPU counts (multiples of 128), each in a child process; prints
 * "train gpt3-175b gpus=G wall_s=W peak_rss_kb=K events=E iteration_s=T".
 * Returns CLI_OK or CLI_USAGE when a size failed (said on stderr). */
int bench_train(const uint32_t *gpus, int n);

#endif
