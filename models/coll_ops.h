/* The collective operations, one line each: X(model enum, scenario enum,
 * word as the command line and the models write it, word in scenario
 * files, word in dpusim-report/1, nccl-tests' bus-bandwidth factor on n
 * ranks (its PERFORMANCE.md)). coll_op (models/coll.h) and scn_coll_op
 * (models/scenario.h) are made from this list, in this order, so one
 * converts to the other by value. */
#ifndef DPUSIM_MODELS_COLL_OPS_H
#define DPUSIM_MODELS_COLL_OPS_H

/* The largest collective a scenario or `dpusim coll` may ask for, in bytes
 * (10 TB: a trillion-parameter model's fp32 gradients two and a half times).
 * A protocol's stage weighs bytes / its bandwidth factor on the network
 * (coll.c, build), which above 2^64 would not fit the stage's count:
 * `coll --bytes 18446744073709551615` cast an out-of-range double there
 * (tools/fuzz-cli seed 120405, UBSan) and printed 429 TB/s on 400 Gb/s
 * links. build now refuses such a count itself (SIM_EOVERFLOW); this bound
 * keeps every input far below it, with an error naming it. */
#define COLL_MAX_BYTES 1e13

#define COLL_OPS(X)                                                                      \
	X(COLL_ALLREDUCE, SCN_OP_ALLREDUCE, "allreduce", "allreduce", "allreduce",       \
	  2.0 * (n - 1) / n)                                                             \
	X(COLL_REDUCE_SCATTER, SCN_OP_REDUCE_SCATTER, "reducescatter", "reduce-scatter", \
	  "reduce_scatter", (double)(n - 1) / n)                                         \
	X(COLL_ALLGATHER, SCN_OP_ALLGATHER, "allgather", "allgather", "allgather",       \
	  (double)(n - 1) / n)                                                           \
	X(COLL_ALLTOALL, SCN_OP_ALLTOALL, "alltoall", "alltoall", "alltoall",            \
	  (double)(n - 1) / n)                                                           \
	X(COLL_BROADCAST, SCN_OP_BROADCAST, "broadcast", "broadcast", "broadcast", 1.0)  \
	X(COLL_SENDRECV, SCN_OP_SENDRECV, "sendrecv", "sendrecv", "sendrecv", 1.0)

/* The algorithms a scenario names, one line each: X(scenario enum,
 * scenario word, the model's algorithm (coll_algo); in-network is SHARP
 * across nodes and NVLS on one node, chosen by the node count). */
#define COLL_SCN_ALGOS(X)                                   \
	X(SCN_ALGO_AUTO, "auto", COLL_AUTO)                 \
	X(SCN_ALGO_RING, "ring", COLL_RING)                 \
	X(SCN_ALGO_TREE, "tree", COLL_TREE)                 \
	X(SCN_ALGO_HIERARCHICAL, "hierarchical", COLL_HIER) \
	X(SCN_ALGO_IN_NETWORK, "in-network", COLL_SHARP)

#define COLL_SCN_ALGO_ENUM_(e, w, algo) e,
#define COLL_SCN_ALGO_WORD_(e, w, algo) w,

#define COLL_OP_ENUM_(e, s, cli, scn, rep, busbw) e,
#define COLL_OP_SCN_ENUM_(e, s, cli, scn, rep, busbw) s,
#define COLL_OP_CLI_WORD_(e, s, cli, scn, rep, busbw) cli,
#define COLL_OP_SCN_WORD_(e, s, cli, scn, rep, busbw) scn,
#define COLL_OP_REPORT_WORD_(e, s, cli, scn, rep, busbw) rep,

#endif
