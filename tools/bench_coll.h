/* dpusim bench flows / bench scale: flow-solver and collective-scale
 * benchmarks (tools/bench_coll.c), entries of cmd_bench's table. */
#ifndef DPUSIM_TOOLS_BENCH_COLL_H
#define DPUSIM_TOOLS_BENCH_COLL_H

/* argv[0] is the benchmark's name; options as in `dpusim bench --help`. */
int bench_flows(int argc, char **argv);
int bench_scale(int argc, char **argv);

#endif
