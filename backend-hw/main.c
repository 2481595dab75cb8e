/* dpusim-hw: the hardware backend's front end. One table drives dispatch and
 * --help, as in tools/dpusim.c. */
#include <stdio.h>
#include <string.h>

#include "backend-hw/cmd.h"
#include "backend-hw/gpu.h"
#include "report/atomic.h"
#include "report/version.h"


typedef struct hw_cmd {
	const char *name;
	const char *summary;
	const char *usage;
	int (*run)(int argc, char **argv);  /* NULL: not built yet (exit 2) */
} hw_cmd;

static const hw_cmd commands[] = {
	{ "probe", "RDMA devices, GPUs, CPU, and which paths are usable here",
	  "usage: dpusim-hw probe [--json]\n"
	  "\n"
	  "Lists RDMA devices (firmware, ports, state, rate, the first GIDs; ConnectX and\n"
	  "BlueField recognised by PCI id), GPUs (CUDA properties, PCI bus id, NUMA node),\n"
	  "the CPU, and which transports and compute paths can run here. No device is a\n"
	  "normal answer (exit 0). --json prints one JSON object instead.\n",
	  hw_cmd_probe },
	{ "bench", "microbenchmarks across MPI ranks, written as a report",
	  "usage: mpirun -np N dpusim-hw bench [-o FILE] [--transport tcp|verbs] [--sizes S[,S...]]\n"
	  "                                   [--quick] [--timeout SECONDS] [--mem host|cuda] [--dir DIR]\n"
	  "                                   [--start-timeout SECONDS]\n"
	  "\n"
	  "Rank 0 measures host memcpy bandwidth, AES-256-GCM encryption per core (OpenSSL\n"
	  "EVP), storage reads in DIR (O_DIRECT sequential and random 4 KiB, io_uring at\n"
	  "queue depth 16) and, where CUDA has a GPU, GEMM throughput and H2D/D2H copies.\n"
	  "Over the transport (2+ ranks): latency and bandwidth between ranks 0 and 1\n"
	  "(tcp also CPU cycles per byte on each side), then a ring all-reduce of every\n"
	  "size whose result is checked against the exact sums on every iteration.\n"
	  "\n"
	  "  -o FILE        write a dpusim-report/1 (source \"hw\", benchmarks section)\n"
	  "  --transport    tcp (default) or verbs (RC QPs, RDMA WRITE with immediate)\n"
	  "  --sizes        message sizes, N[K|M|G] comma separated (binary multiples)\n"
	  "  --quick        small sizes and few iterations (tests)\n"
	  "  --timeout      seconds without progress before a peer counts as dead (30)\n"
	  "  --start-timeout  seconds MPI_Init and MPI_Finalize may take, waiting for\n"
	  "                 every rank to start or finish (the larger of 60 and --timeout)\n"
	  "  --mem          verbs receive buffers in host or cuda (GPUDirect via dmabuf)\n"
	  "  --dir          where the storage benchmark puts its file ($TMPDIR or /tmp)\n"
	  "\n"
	  "Exit status: 0; 1 when data verification failed; 2 on bad usage, a dead or\n"
	  "hung peer (every rank is ended with MPI_Abort), or a failed setup.\n"
	  "Test hook: DPUSIM_HW_FAULT=exit:R|hang:R|corrupt:R|late:R makes rank R exit, hang,\n"
	  "add 1 to its all-reduce contribution or start each p2p stream 0.3 s late.\n",
	  hw_cmd_bench },
	{ "replay", "run a scenario's collectives, training steps or perftest test for real",
	  "usage: mpirun -np N dpusim-hw replay FILE [-o FILE] [--transport tcp|verbs]\n"
	  "                                        [--mem host|cuda] [--timeout SECONDS]\n"
	  "                                        [--start-timeout SECONDS] [--point INDEX]\n"
	  "             collective scenarios also: [--reps N]\n"
	  "               training scenarios also: [--data DIR] [--scale S] [--compute cpu|cuda]\n"
	  "                                        [--gemm-n N] [--dir DIR]\n"
	  "\n"
	  "Collective scenario (workload kind: collective, op allreduce, algo ring or\n"
	  "auto): every size, one warm-up call and then --reps timed calls (the\n"
	  "scenario's iterations, at least 20), each started together after a barrier\n"
	  "and its result checked against the exact sums. A call's time is its slowest\n"
	  "rank's. N must equal the scenario's ranks; each variant gets one collective\n"
	  "per size, time_s the median over the calls (one call descheduled on a busy\n"
	  "machine does not decide it; calls, time_min_s, time_p10_s and time_p90_s\n"
	  "give the spread), and iteration_s, the sum over sizes of those medians, as\n"
	  "`dpusim run` writes them.\n"
	  "\n"
	  "  --reps N      timed calls per size (1..100000)\n"
	  "\n"
	  "Training scenario: pp 1, one rank per data-parallel replica (N = dp), each\n"
	  "standing for that replica's first GPU; pp > 1, one rank per stage per replica\n"
	  "(N = pp x dp; with R = N / pp, rank r is stage r / R, replica r % R), or fewer whole\n"
	  "pipelines (N a multiple of pp: fewer replicas, the report says so). Every\n"
	  "iteration (one warm-up, then the scenario's iterations) each rank\n"
	  "  - waits for its share of the batch from DIR (micro x microbatches samples of\n"
	  "    workload.data.sample_bytes, else the model's sample size), read with\n"
	  "    O_DIRECT where the filesystem takes it and plain reads otherwise (the\n"
	  "    report says which), one iteration ahead by a loader thread: the wait is\n"
	  "    data_stall;\n"
	  "  - runs the GEMM FLOPs the simulator gives one GPU per iteration, times S,\n"
	  "    as N x N SGEMMs of a known product (cpu: GSL's CBLAS, one thread, N 256;\n"
	  "    cuda: cuBLAS on this rank's GPU, N 4096), every product checked: compute;\n"
	  "    With pp > 1 those GEMMs are its stage's, split into the microbatches'\n"
	  "    forward and backward passes in 1F1B order, each forward's activations\n"
	  "    sent to the next stage and each backward's gradients to the one before\n"
	  "    (the simulator's stage-boundary size / tp, full size whatever S), every\n"
	  "    message checked; a receive's wait for the neighbouring stage to send\n"
	  "    is pipeline_bubble, the rest of its time (at most one message's time\n"
	  "    alone) exposed_comm;\n"
	  "  - all-reduces its gradients (its stage's parameters x 2 bytes, times S)\n"
	  "    over its stage's replicas, the sums checked: exposed_comm (it follows\n"
	  "    compute here).\n"
	  "The report holds iteration_s, samples_per_s, tokens_per_s, tflops_per_gpu\n"
	  "(of the FLOPs run), gpu_util, the breakdown and the all-reduce, for each\n"
	  "variant the run stands for (network as below; storage host when --data is\n"
	  "given; crypto none, or host: a second pass with the gradients and pipeline\n"
	  "messages sealed with AES-256-GCM; no vswitch), and in info the scale, the measured FLOP/s and\n"
	  "how to extrapolate to S = 1. A workload with a data: section needs --data.\n"
	  "Storage, after the iterations: each stage-0 rank reads a run's samples\n"
	  "from a file of its own in DIR (written, synced, dropped from the page\n"
	  "cache), buffered and with O_DIRECT, and through cuFile for gds variants\n"
	  "where it is built in; with failures: every rank writes and fsyncs its\n"
	  "share of the checkpoint (the simulator's size, times S). The files are\n"
	  "unlinked at once; info replay.storage_read and replay.checkpoint_write\n"
	  "hold the rates beside the simulated ones.\n"
	  "\n"
	  "  --scale S     fraction (0, 1] of the FLOPs and gradient bytes run (1)\n"
	  "  --data DIR    a directory of files to read the samples from\n"
	  "  --compute     where the GEMMs run: cpu (default) or cuda\n"
	  "  --gemm-n N    GEMM matrix size (16..16384)\n"
	  "  --dir DIR     where the storage replay's files go ($TMPDIR or /tmp)\n"
	  "\n"
	  "p2p scenario (workload kind: p2p, perftest's tests): mpirun -np 2 and\n"
	  "--transport verbs (perftest runs verbs; tcp is refused, as the simulator\n"
	  "refuses network host-tcp). Rank 0 is the requester, rank 1 the responder,\n"
	  "over qps RC QPs from registered buffers: rdma variants in host memory,\n"
	  "rdma-gdr in GPU memory (dmabuf) where CUDA and a GPU are here, else listed\n"
	  "as not replayed with the reason. Bandwidth tests keep tx_depth messages in\n"
	  "flight per QP, a completion every 100 (every message above 8 KiB); BW\n"
	  "average is the payload over first post to last completion. Latency tests\n"
	  "are a ping-pong (read_lat: one READ after another), time_s the median half\n"
	  "round trip (read: round trip). After every test the receiver's buffer is\n"
	  "checked against the sender's pattern. Rows as `dpusim run` writes them (op\n"
	  "sendrecv, algo ib_write_bw...), so `dpusim compare` holds them per size.\n"
	  "Test hook: DPUSIM_HW_FAULT=corrupt:R (rank R sends a wrong byte).\n"
	  "\n"
	  "Sweeps: every point of the scenario's sweep: section runs, in order, each\n"
	  "into its own report DIR/NAME.pINDEX.json with -o DIR (the names and point\n"
	  "labels `dpusim sweep -o DIR` writes, so the two compare file by file), or\n"
	  "only point INDEX with --point INDEX (-o FILE or stdout). Every point is\n"
	  "checked before any runs: one that cannot be replayed here refuses the run.\n"
	  "\n"
	  "Variants: those whose network the transport stands for (tcp: host-tcp; verbs:\n"
	  "rdma, or rdma-gdr with --mem cuda). A collective scenario's crypto: host\n"
	  "variants run the sizes again with every message sealed with AES-256-GCM\n"
	  "(OpenSSL EVP) by its sender and opened, tag checked, by its receiver; info\n"
	  "VARIANT.crypto_cycles_per_byte (measured) sits beside\n"
	  "VARIANT.crypto_model_cycles_per_byte (the host-costs profile). Variants not\n"
	  "run get info VARIANT.not_replayed with the reason. Without -o, the JSON goes\n"
	  "to stdout.\n"
	  "Exit status: 0; 1 when a result was wrong; 2 bad input, dead or hung peer.\n"
	  "Test hook (training): DPUSIM_HW_FAULT=exit:R|corrupt:R.\n",
	  hw_cmd_replay },
};
static const unsigned ncommands = sizeof commands / sizeof commands[0];

const char *hw_compiled_paths(void)
{
	if (!hw_gpu_compiled())
		return "mpi tcp verbs io_uring openssl (no cuda)";
	return hw_cufile_compiled() ? "mpi tcp verbs io_uring openssl cuda cublas cufile"
				    : "mpi tcp verbs io_uring openssl cuda cublas (no cufile)";
}

static void print_help(FILE *f)
{
	fprintf(f, "usage: dpusim-hw COMMAND [ARGS]   (dpusim-hw COMMAND --help for more)\n\n"
		   "probes and benchmarks real GPU + RDMA hardware, replays scenarios on it\n\n"
		   "commands:\n");
	for (unsigned i = 0; i < ncommands; i++)
		fprintf(f, "  %-8s %s%s\n", commands[i].name, commands[i].summary,
			commands[i].run ? "" : " (not built yet)");
}

static int wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	return 0;
}

static int dispatch(int argc, char **argv)
{
	const hw_cmd *cmd = NULL;
	if (argc < 2)
		return print_help(stderr), 2;
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
		return print_help(stdout), 0;
	if (!strcmp(argv[1], "--version"))
		return printf("dpusim-hw %s\ncompiled-in paths: %s\n", dpusim_version,
			      hw_compiled_paths()), 0;
	for (unsigned i = 0; i < ncommands; i++)
		if (!strcmp(argv[1], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		fprintf(stderr, "dpusim-hw: error: unknown command '%s' (see 'dpusim-hw --help')\n",
			argv[1]);
		return 2;
	}
	if (wants_help(argc - 1, argv + 1))
		return fputs(cmd->usage, stdout), 0;
	if (!cmd->run) {
		fprintf(stderr, "dpusim-hw: error: '%s' is not built yet in this version of dpusim-hw\n",
			cmd->name);
		return 2;
	}
	return cmd->run(argc - 1, argv + 1);
}

/* Reports and tables on stdout are checked here once: a full disk under
 * `> FILE` is an error (exit 2), not a silent 0. */
int main(int argc, char **argv)
{
	return atomic_close_stdout("dpusim-hw", dispatch(argc, argv));
}
