/* dpusim: the command-line front end. One table drives dispatch and --help. */
#include <stdio.h>
#include <string.h>

#include "models/datadir.h"
#include "report/atomic.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "report/version.h"


const cli_cmd cli_commands[] = {
	{ "run", "simulate a scenario under every offload variant",
	  "usage: dpusim run FILE [--json] [-o DIR] [--seed N] [--replications N] [--jobs N]\n"
	  "                  [--db FILE] [--trace FILE] [--profile FILE]... [--profile-dir DIR]\n"
	  "       dpusim run FILE --dump [--profile FILE]... [--profile-dir DIR]\n"
	  "\n"
	  "Simulates every variant (offload policy) of the scenario's workload and\n"
	  "prints them side by side: iteration time (mean, 95% CI across\n"
	  "replications, p50, p99), throughput, TFLOP/s per GPU (Megatron-LM's\n"
	  "counting, recomputation included), MFU, utilisations, the breakdown of\n"
	  "an iteration (it adds up to the mean), time to train, goodput, energy and\n"
	  "cost where the scenario gives what they need, the speedup over the first\n"
	  "variant, the collectives, the critical path, and what could not be\n"
	  "modelled for lack of a published figure.\n"
	  "--json   print the dpusim-report/1 document (docs/report-schema.md) and\n"
	  "         nothing else on stdout\n"
	  "-o DIR   also write DIR/report.json\n"
	  "--seed N, --replications N   override the scenario's\n"
	  "--jobs N  simulate the variants in N worker processes at a time (a\n"
	  "         multi-job scenario's run in this one); the report is the same\n"
	  "--db FILE  store the run in a results database (docs/results.md)\n"
	  "--trace FILE  Chrome/Perfetto trace of the last iteration of replica 0\n"
	  "         (one track per GPU, host CPU and gradient group); with several\n"
	  "         variants, FILE.VARIANT.json per variant; each file written is\n"
	  "         named on stderr. Training jobs only: a collective benchmark has\n"
	  "         no iteration to draw (refused when the scenario has nothing else)\n"
	  "--dump  print the fully resolved scenario as YAML (extends: applied, profiles\n"
	  "        merged with the scenario's overrides, every value in SI units) and\n"
	  "        run nothing; the output is itself a valid scenario\n"
	  "--profile FILE     a profile file that replaces the one of the same name\n"
	  "--profile-dir DIR  where profiles named in the scenario are found (default\n"
	  "                   $DPUSIM_PROFILE_DIR, else the data folder's profiles:\n"
	  "                   see 'dpusim --help')\n"
	  "Scenario format: docs/scenarios.md. Exit 2 on any error in the scenario.\n",
	  cmd_run },
	{ "check", "validate a scenario file without running it",
	  "usage: dpusim check FILE [--profile FILE]... [--profile-dir DIR]\n"
	  "\n"
	  "Loads FILE (following extends:), resolves every profile and override,\n"
	  "and validates everything: types, units, ranges, cross-field consistency\n"
	  "(tp x pp x dp against the GPUs a job gets, variants against the hardware\n"
	  "they need) and every point of the sweep. Prints a one-paragraph summary\n"
	  "(cluster, job, variants, sweep size) and exits 0; otherwise prints every\n"
	  "error as FILE:LINE:COLUMN: message on stderr and exits 2.\n"
	  "--profile FILE     a profile file that replaces the one of the same name\n"
	  "--profile-dir DIR  where profiles are found (default $DPUSIM_PROFILE_DIR,\n"
	  "                   else the data folder's profiles: see 'dpusim --help')\n",
	  cmd_check },
	{ "profiles", "list hardware profiles, or show one with its sources",
	  "usage: dpusim profiles [NAME] [--profile-dir DIR]\n"
	  "\n"
	  "Without NAME: one line per profile (name, kind, summary). With NAME: every\n"
	  "field of the profile's kind, its value in SI units, what it means, and its\n"
	  "source, or why the profile does not give it. Format: docs/profiles.md.\n"
	  "--profile-dir DIR  the profiles' folder (default $DPUSIM_PROFILE_DIR, else\n"
	  "                   the data folder's profiles: see 'dpusim --help')\n",
	  cmd_profiles },
	{ "coll", "simulated nccl-tests: one collective over a size sweep",
	  "usage: dpusim coll --ranks N --bytes S[,S...] --link RATE [options] [--json]\n"
	  "       dpusim coll --ranks N -b MIN -e MAX [-f F] --link RATE [options]\n"
	  "\n"
	  "One row per size in nccl-tests' layout (all_reduce_perf's columns, so its\n"
	  "parsers read it): size (B), count (float elements; a rank's share for\n"
	  "allgather, reducescatter, alltoall), type, redop, root, then time (us),\n"
	  "algbw and busbw (GB/s, busbw as nccl-tests computes it) and #wrong (N/A:\n"
	  "nothing is checked in a simulation) out of place and in place (the same:\n"
	  "the model makes no in-place difference), then the algorithm that ran;\n"
	  "the footer '# Avg bus bandwidth' is the busbw column's mean. Each size\n"
	  "runs on a fresh network. Rates and times carry units (400Gbps, 1.5us);\n"
	  "sizes are bytes or quantities (64MiB). --json: bytes, algo, time_us,\n"
	  "algbw_GBps, busbw_GBps, proto per row.\n"
	  "  -b MIN -e MAX -f F   sizes MIN, MIN x F, ... up to MAX (F default 2; K, M\n"
	  "                       and G are binary, as nccl-tests reads them: 128M)\n"
	  "  -n N                 iterations per size (default 1), seeds seed..seed+N-1\n"
	  "                       (ECMP hashing and --jitter), the mean time reported;\n"
	  "                       where neither draws (one path, no jitter) one run\n"
	  "  -w N                 accepted for nccl-tests command lines; a simulation\n"
	  "                       has nothing to warm up, so no run is made for it\n"
	  "Defaults are what NCCL does on a published NIC and switch: NCCL's\n"
	  "protocols (--proto nccl) and the latencies of the --nic and --switch\n"
	  "profiles (the header says which); --ideal is the closed form instead:\n"
	  "links at their payload rate, no latency unless given. Every default:\n"
	  "  --op OP              allreduce (default), reducescatter, allgather,\n"
	  "                       broadcast, alltoall, sendrecv\n"
	  "  --algo ALGO          auto (default: lowest predicted time of NCCL's own\n"
	  "                       algorithms), ring, tree (NCCL's: chains in the\n"
	  "                       nodes, a tree over them), hier (NVLink rings and\n"
	  "                       rail rings, not NCCL's: by name only), sharp,\n"
	  "                       nvls, p2p\n"
	  "  --proto P            nccl (default: NCCL's LL/LL128/Simple by predicted\n"
	  "                       time), ll, ll128, simple, ideal (the closed form);\n"
	  "                       algo then reads ring/ll etc.\n"
	  "  --ideal              --proto ideal, and no profile latencies\n"
	  "  --nic NAME           the NIC profile whose rdma_latency is --msg-latency's\n"
	  "                       default (ConnectX-6-HDR: 0.6 us)\n"
	  "  --gpu NAME           the GPU profile whose compute capability keys NCCL's\n"
	  "                       per-architecture caps and, with --nic's PCIe link,\n"
	  "                       its channel search across nodes, as in a scenario\n"
	  "                       (default: neither applied; the header says)\n"
	  "  --switch NAME        the switch profile whose latency is --switch-latency's\n"
	  "                       default (QM8700-HDR: 130 ns)\n"
	  "  --msg-latency T      per message (step) software/NIC latency (--nic's)\n"
	  "  --switch-latency T   per switch crossed (--switch's)\n"
	  "  --hop-latency T      per link crossed (default 0: no cable given)\n"
	  "  --topology T         single-switch (default), fat-tree, fat-tree3, rail\n"
	  "  --link RATE          NIC port and switch link rate, per direction (required):\n"
	  "                       the data rate, of which the packets' headers take\n"
	  "                       their share (the header's 'wire' line)\n"
	  "  --link-layer L       infiniband, ethernet (default: --switch's link_layer),\n"
	  "                       or none (no headers: links carry payload at --link)\n"
	  "  --mtu BYTES          IB MTU or Ethernet MTU (default: InfiniBand 4096 for\n"
	  "                       RDMA, 2048 for IPoIB; Ethernet 1500; docs/scenarios.md)\n"
	  "  --radix K            switch ports (default 64; one switch: unlimited)\n"
	  "  --oversub R          leaf down:up ratio (default 1)\n"
	  "  --routing ecmp|dmodk|adaptive  (default ecmp: hashed; dmodk: by\n"
	  "                       destination, an InfiniBand subnet manager's\n"
	  "                       fat-tree routing)\n"
	  "  --seed N             ECMP hash and jitter (default 1)\n"
	  "  --gpus-per-node G    (default 1);  --nics-per-node K  (default G)\n"
	  "  --channels C         ring channels (default: one per NIC); under NCCL's\n"
	  "                       protocols also NCCL's channel count\n"
	  "  --nvlink RATE        NVSwitch domain in the node (default none);\n"
	  "                       --nvlink-latency T (default 0)\n"
	  "  --pcie RATE          device PCIe links (default: not modelled);\n"
	  "                       --pcie-latency T (default 0), --pcie-mode switch|root\n"
	  "                       (default switch)\n"
	  "  --host-mem RATE      host memory bus per node (default: not modelled)\n"
	  "  --transport host-tcp|rdma|rdma-gdr   (default rdma)\n"
	  "  --launch-latency T   per collective fixed cost (default 0)\n"
	  "  --jitter T           mean extra latency per message (default 0)\n"
	  "  --chunk SIZE         pipelining unit of tree and broadcast (512KiB)\n"
	  "  --sharp, --nvls      the switches / NVSwitch can reduce (default: not)\n"
	  "  --root R             broadcast root (default 0)\n",
	  cmd_coll },
	{ "sweep", "run every point of a scenario's sweep",
	  "usage: dpusim sweep FILE [--db FILE] [--jobs N] [--shard I/N] [--seed N] [-o DIR]\n"
	  "                   [--point-timeout T] [--profile FILE] [--profile-dir DIR]\n"
	  "\n"
	  "Runs every point of the scenario's sweep: section and stores each point's\n"
	  "report in the results database (one transaction per point), with the\n"
	  "point's label (key=value,...) and index (info.sweep_index). Points already\n"
	  "stored for the same file (SHA-256 of its text), point and seed are skipped,\n"
	  "so running a killed or failed sweep again finishes it. Progress goes to\n"
	  "stderr: a bar on a terminal, one line per point otherwise.\n"
	  "  --db FILE      the database (default results/dpusim.db; with --shard,\n"
	  "                 results/dpusim-shard-I-of-N.db)\n"
	  "  --jobs N       N worker processes on this machine (default 1)\n"
	  "  --shard I/N    only points p with p % N == I (Slurm job arrays: one\n"
	  "                 database per shard, joined by 'dpusim merge')\n"
	  "  --seed N       override the scenario's seed\n"
	  "  -o DIR         also write each point's report as DIR/NAME.pINDEX.json\n"
	  "  --point-timeout T  a point not answered within T (90s, 30min, 2h; 0 or\n"
	  "                 none: never) fails: its --jobs worker is killed, its MPI\n"
	  "                 rank gets no more points (the job then ends with\n"
	  "                 MPI_Abort); a rerun retries it. Default auto: the larger\n"
	  "                 of 1 h and 20 times the slowest point so far. A serial\n"
	  "                 sweep given T computes in one worker process\n"
	  "Under mpirun (Open MPI) the points are spread over the ranks; rank 0\n"
	  "alone writes the database. --jobs does not combine with mpirun.\n"
	  "exit status: 0 every point stored, 2 bad input or a point that failed\n",
	  cmd_sweep },
	{ "plan", "the fastest parallel layout that fits in GPU memory, per variant",
	  "usage: dpusim plan FILE [--nodes N|A-B|N,M,...] [--global-batch N] [--top N]\n"
	  "                  [--finalists K] [--keep vp,sp,cp] [--jobs N] [--db FILE]\n"
	  "                  [--profile FILE] [--profile-dir DIR]\n"
	  "\n"
	  "Lays out FILE's training job every way on each node count: tp (a power of\n"
	  "two within a node, dividing the heads), pp (a power of two up to the\n"
	  "layers), dp (the rest), microbatch (a power of two dividing the batch),\n"
	  "ZeRO stage 0-3, recomputation off/on, virtual stages (v: 1, 2, 4... as\n"
	  "Megatron's interleaved schedule allows), sequence parallelism off/on (tp\n"
	  "> 1) and context parallelism (cp: powers of two splitting the sequence;\n"
	  "with unfused attention only where nothing fits without). Layouts that do\n"
	  "not fit in GPU memory are dropped; the rest are ranked by a closed-form\n"
	  "estimate under each variant (its transport's caps included), and each\n"
	  "variant's fastest estimates in turn, K in all, are simulated with the\n"
	  "full model under every variant (one replication, at most two\n"
	  "iterations). Prints,\n"
	  "per variant, the N fastest simulated layouts: iteration time, tokens/s,\n"
	  "MFU, memory per GPU and USD per million tokens (with prices). docs/plan.md.\n"
	  "  --nodes N|A-B|N,M,...  node counts (A-B: A, 2A, 4A... up to B, and B;\n"
	  "                 default the scenario's)\n"
	  "  --global-batch N  samples per iteration (default the scenario's)\n"
	  "  --top N        rows per variant (default 5)\n"
	  "  --finalists K  layouts simulated, exactly K (default: 8, then more in\n"
	  "                 that order up to the last estimated under a variant's\n"
	  "                 best simulated iteration, up to 64)\n"
	  "  --keep vp,sp,cp  keep the scenario's virtual_stages (vp), sequence_parallel\n"
	  "                 (sp) or cp instead of varying them (a smaller search)\n"
	  "  --jobs N       simulate N finalists at once, each in a process of its own\n"
	  "                 (1-1024, default 1); the answer is the same as with 1\n"
	  "  --db FILE      also store each finalist's report in the results database\n"
	  "exit status: 0 planned, 2 bad input or no layout that fits (nothing written)\n",
	  cmd_plan },
	{ "compare", "compare two reports metric by metric",
	  "usage: dpusim compare A.json B.json [--tolerance P%] [--json]\n"
	  "                      [--collectives-only]\n"
	  "\n"
	  "Reads two dpusim-report/1 files (sim or hw) and prints, per variant\n"
	  "(matched by name) and metric, A, B and the relative error (B - A) / |A|.\n"
	  "iteration_s is compared by mean, p50 and p99; breakdown components and\n"
	  "speedup are compared too. Metrics and variants present in one report\n"
	  "only are listed as 'only in A' / 'only in B'.\n"
	  "Collective rows are matched per size (op, algo, ranks, bytes): time_s\n"
	  "and busbw_GBps. Each size is latency-bound or bandwidth-bound (its algbw\n"
	  "below or at least half the largest size's, in the simulated report) and\n"
	  "the mean time error per regime names the model parameters it points to.\n"
	  "Reports of different replay scales (info replay.scale, dpusim-hw replay\n"
	  "--scale) are refused.\n"
	  "  --tolerance P%  exit 1 when any shared value differs by more than P%\n"
	  "  --json          the table as JSON on stdout\n"
	  "  --collectives-only  compare only the per-size collective rows (which\n"
	  "                  scale does not change), also across scales\n"
	  "exit status: 0 within tolerance (or none given), 1 beyond it, 2 bad input\n",
	  cmd_compare },
	{ "plot", "draw capacity, breakdown, comparison or timeline plots",
	  "usage: dpusim plot SOURCE [SOURCE2] --kind KIND -o FILE.png|.svg [options]\n"
	  "\n"
	  "SOURCE is a report (JSON), a results database (SQLite) or, for scaling,\n"
	  "dpusim bench scale's output (text). Kinds:\n"
	  "  breakdown  stacked bars of the iteration breakdown per variant, from a\n"
	  "             report or from a database run (--run ID, default the newest)\n"
	  "  compare    relative error of report B against report A per variant and\n"
	  "             metric (two sources; --tolerance P% draws the band)\n"
	  "  capacity   --metric (default samples_per_s) against a sweep key, one\n"
	  "             line per variant and combination of the sweep's other\n"
	  "             keys (named in the legend), from a database\n"
	  "  scaling    speedup over the first variant against a sweep key, from a\n"
	  "             database; or, from a file of `dpusim bench scale` output,\n"
	  "             wall time against GPUs, one line per case (exact and lumped\n"
	  "             of a case in one colour, lumped dashed) and the line linear\n"
	  "             in GPUs x microbatches\n"
	  "  timeline   per-track Gantt chart (GPUs, host CPUs, DPUs, link groups) of\n"
	  "             a Chrome/Perfetto trace file (dpusim run --trace);\n"
	  "             --tracks N draws at most N rows (default 64)\n"
	  "options:\n"
	  "  --kind KIND      the plot, as above (required)\n"
	  "  -o FILE          the picture: .png or .svg (required)\n"
	  "  --metric NAME    capacity: the report metric on the y axis (default\n"
	  "                   samples_per_s; iteration_s, tokens_per_s, ...)\n"
	  "  --run ID         breakdown from a database: that run (default the newest)\n"
	  "  --tolerance P%   compare: draw the +-P% band\n"
	  "  --tracks N       timeline: at most N rows (default 64)\n"
	  "  --scenario NAME  database plots: that scenario (default: the newest run's)\n"
	  "  --x KEY          database plots: the sweep key on the x axis (default:\n"
	  "                   the first key of the sweep point)\n"
	  "  --where KEY=VALUE database plots: only points whose sweep KEY has VALUE\n"
	  "                   (repeatable); the other keys each split the lines\n"
	  "  --size WxH       picture size in pixels (default 1000x600; a timeline of\n"
	  "                   more rows grows 18 pixels a row so labels stay apart)\n",
	  cmd_plot },
	{ "runs", "list the runs stored in a results database",
	  "usage: dpusim runs [DB] [--scenario NAME] [--variant NAME] [--limit N]\n"
	  "       dpusim runs [DB] --digest\n"
	  "\n"
	  "Lists stored runs, newest first: id, time (UTC), source (sim|hw), scenario,\n"
	  "sweep point, seed, and each variant with its speedup over the first.\n"
	  "  DB, --db DB      the database (default results/dpusim.db): either spelling\n"
	  "  --scenario NAME  only runs of that scenario\n"
	  "  --variant NAME   only runs that have a variant of that name\n"
	  "  --limit N        at most N runs\n"
	  "  --digest         print runs=N sha256=HEX over every run's key and report\n"
	  "                   (not ids or times): equal for databases holding the same\n"
	  "                   results, e.g. a serial and an mpirun sweep\n",
	  cmd_runs },
	{ "import", "store report files (e.g. from dpusim-hw) in a results database",
	  "usage: dpusim import REPORT.json... [--db FILE]\n"
	  "\n"
	  "Validates each dpusim-report/1 file and stores it as one run (one\n"
	  "transaction each) in --db FILE (default results/dpusim.db). Stops at the\n"
	  "first bad file (exit 2); the files before it stay stored.\n",
	  cmd_import },
	{ "merge", "join results databases (sweep shards) into one",
	  "usage: dpusim merge --db OUT.db IN.db...\n"
	  "       dpusim merge OUT.db IN.db...      (the older spelling, still accepted)\n"
	  "\n"
	  "Copies every run of each IN.db into OUT.db (created if missing), keeping\n"
	  "its time, scenario text and report. A run whose key (scenario, sha256,\n"
	  "sweep point, seed, source) OUT.db already holds is skipped, so shards that\n"
	  "overlap, or merging twice, store nothing twice. One transaction per IN.db:\n"
	  "a bad one adds nothing (exit 2) and the ones before it stay merged.\n",
	  cmd_merge },
	{ "calibrate", "fit hardware profiles to dpusim-hw bench measurements",
	  "usage: dpusim calibrate BENCH.json [BENCH2.json...] -o DIR [--name NAME] [options]\n"
	  "\n"
	  "Fits every series of the bench reports (weighted least squares, GSL),\n"
	  "prints each fit with its standard errors and its residual at each size,\n"
	  "and writes one profile per kind it could fit, as DIR/NAME-KIND.yaml\n"
	  "(profile NAME-KIND; the loader takes one profile per file):\n"
	  "  host-costs  tcp_latency (alpha of tcp_lat), tcp_tx/rx_cycles_per_byte,\n"
	  "              tcp_cycles_per_packet and mtu (with --mtu),\n"
	  "              aes_gcm_cycles_per_byte\n"
	  "  nic         rdma_latency, port_rate (verbs benches)\n"
	  "  storage     io_latency and bw (alpha-beta over read sizes), iops\n"
	  "  cpu         freq (the clock the cycle figures were converted with)\n"
	  "  gpu         eff_max, eff_half_flops (GEMM points and --peak-flops)\n"
	  "Every value's source names the bench file, the fit and its uncertainty;\n"
	  "fields not measured are listed under missing. Use the files with\n"
	  "'dpusim run FILE --profile DIR/NAME-KIND.yaml'. Guide: docs/calibration.md.\n"
	  "  -o DIR              the folder the profiles go to (required)\n"
	  "  --name NAME         their name (default: the first bench file's, without\n"
	  "                      .json); -o DIR/NAME.yaml, the older spelling, works too\n"
	  "  --plot DIR          draw each fit against its points (gnuplot PNG)\n"
	  "  --mtu BYTES         the MTU of the benched path: TCP cost per packet\n"
	  "  --peak-flops RATE   the GPU's dense BF16 peak, for eff_max (989TFLOP/s)\n"
	  "  --effective-ring    host-tcp costs from the tcp ring all-reduce instead:\n"
	  "                      tcp_latency = its per-step alpha, tcp_rx_cycles_per_byte\n"
	  "                      = cpu_hz / its B (contention included; sources say so)\n"
	  "exit status: 0 profiles written, 2 bad input or nothing could be fitted\n",
	  cmd_calibrate },
	{ "validate", "check predictions against published measurements",
	  "usage: dpusim validate [--cases FILE] [--only NAME|GROUP] [--profile-dir DIR]\n"
	  "\n"
	  "Runs every case of the shipped tests/validation/cases.yaml (installed\n"
	  "as PREFIX/share/dpusim/validation; or --cases FILE): a\n"
	  "scenario built from published hardware specifications, and one figure\n"
	  "of its report compared with a published measurement (sources in the\n"
	  "cases file and each scenario). Prints predicted, published, the error\n"
	  "and the tolerance per case, and the mean absolute error of each\n"
	  "group of cases and of all. Exit 0 when every case is within its tolerance, 1\n"
	  "when one is not, 2 when a case cannot run.\n",
	  cmd_validate },
	{ "bench", "engine, flow-solver and scale benchmarks",
	  "usage: dpusim bench engine [--events N] [--reps R] [--pending N[,N...]]\n"
	  "\n"
	  "engine  the hold model: pop one event, schedule one at now + an\n"
	  "        exponential increment (mean 1 us, drawn in advance from GSL so\n"
	  "        the queue is what is timed). One line per pending size:\n"
	  "        engine hold pending=N events_per_s=R   (median of --reps runs)\n"
	  "        --events  events per run (default 4000000, at most 10^10)\n"
	  "        --reps    runs per size (default 5)\n"
	  "        --pending sizes (default 1000,100000,1000000)\n"
	  "flows   the flow solver: n flows each alone on a link (independent) or\n"
	  "        all on one (shared), started at once and run to completion:\n"
	  "        flows KIND n=N wall_s=W flows_per_s=R peak_rss_kb=K  (median)\n"
	  "        --reps R (default 5)  --quick (first case only)\n"
	  "scale   ring all-reduce on one switch, per-step flows, growing ranks:\n"
	  "        coll ring ranks=N bytes=S sim_time_s=T wall_s=W peak_rss_kb=K\n"
	  "        --ranks N[,N...] (default 512,1024,2048,4096)  --bytes S (1 GiB)\n"
	  "        --reps R (default 3)\n"
	  "        then one iteration of GPT-3 175B (tp 8, pp 16, data parallel to\n"
	  "        fill, H100 nodes on an NDR fat tree), each size in its own process:\n"
	  "        train gpt3-175b gpus=G network=N routing=R microbatches=M wall_s=W\n"
	  "          peak_rss_kb=K events=E solves=V iteration_s=T ring_steps=S\n"
	  "        and after a case's sizes its curve, per step between sizes that\n"
	  "        ran: how wall time, work (GPUs x microbatches), events and the\n"
	  "        flow solver's re-solves grew, and the wall time per event at\n"
	  "        both ends (solves x- when the smaller size had none):\n"
	  "        scale CASE S: G1->G2 wall xA work xB events xC solves xV ns/event D->E; ...\n"
	  "        --train-gpus G[,G...] (default 128,1024,4096,16384: one pipeline,\n"
	  "          dp 1, up to dp 128; multiples of 128; none to skip)\n"
	  "        --train-cases NET/ROUTING/M[/lumped][,...]  the configurations timed\n"
	  "          at each size (at most 8): NET host-tcp, rdma or rdma-gdr; ROUTING\n"
	  "          ecmp, dmodk (an InfiniBand subnet manager's) or adaptive; M\n"
	  "          microbatches per pipeline, or gB a global batch of B at every\n"
	  "          size; /lumped runs a ring's steps as one flow\n"
	  "          (collectives.ring_steps: lumped, an approximation), S says which.\n"
	  "          Default: what planners run, host-tcp/dmodk/64,rdma-gdr/dmodk/64\n"
	  "          (D-mod-K: this InfiniBand fabric's default routing),\n"
	  "          host-tcp/ecmp/64,rdma-gdr/ecmp/64,rdma-gdr/adaptive/64,\n"
	  "          host-tcp/ecmp/64/lumped,rdma-gdr/ecmp/64/lumped\n"
	  "          (the earlier default: --train-gpus 1024,4096,16384 --train-cases\n"
	  "          rdma-gdr/adaptive/g1536)\n"
	  "        dpusim plot FILE --kind scaling draws these lines from a file\n",
	  cmd_bench },
};
const unsigned cli_ncommands = sizeof cli_commands / sizeof cli_commands[0];

static void print_help(FILE *f)
{
	fprintf(f, "usage: dpusim COMMAND [ARGS]   (dpusim COMMAND --help for more)\n\n"
		   "predicts training throughput on a GPU cluster with and without DPU offload\n\n"
		   "conventions: -o names what a command writes, a FILE when it writes one\n"
		   "(plot; dpusim-hw bench and replay) and a DIR when it writes several (run:\n"
		   "DIR/report.json; sweep: DIR/NAME.pINDEX.json; calibrate: DIR/NAME-KIND.yaml).\n"
		   "--db DB names the results database runs are stored in (run, sweep, import,\n"
		   "merge; default results/dpusim.db); a database a command reads is its\n"
		   "argument (runs DB, plot DB), and runs takes --db DB too. Older spellings\n"
		   "keep working: merge OUT IN..., calibrate -o DIR/NAME.yaml.\n\n"
		   "commands:\n");
	for (unsigned i = 0; i < cli_ncommands; i++)
		fprintf(f, "  %-10s %s%s\n", cli_commands[i].name, cli_commands[i].summary,
			cli_commands[i].run ? "" : " (not built yet)");
	fprintf(f, "\ndata (profiles, validation cases, scenarios): $DPUSIM_DATADIR, else the\n"
		   "source tree the binary sits in (bin/..), else PREFIX/share/dpusim beside it;\n"
		   "here: %s\n", *datadir_root() ? datadir_root() : "none (" DATADIR_TOO_LONG ")");
}

static int dispatch(int argc, char **argv)
{
	const cli_cmd *cmd = NULL;
	if (argc < 2)
		return print_help(stderr), CLI_USAGE;
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
		return print_help(stdout), CLI_OK;
	if (!strcmp(argv[1], "--version"))
		return printf("dpusim %s\ndata: %s\n", dpusim_version,
			      *datadir_root() ? datadir_root() : "none (" DATADIR_TOO_LONG ")"), CLI_OK;
	for (unsigned i = 0; i < cli_ncommands; i++)
		if (!strcmp(argv[1], cli_commands[i].name))
			cmd = &cli_commands[i];
	if (!cmd)
		return cli_usage_error("unknown command '%s' (see 'dpusim --help')", argv[1]);
	if (cli_wants_help(argc - 1, argv + 1))
		return fputs(cmd->usage, stdout), CLI_OK;
	if (!cmd->run)
		return cli_usage_error("'%s' is not built yet in this version of dpusim", cmd->name);
	return cmd->run(argc - 1, argv + 1);
}

/* Every command's output, tables and JSON alike, is checked here once: a
 * full disk under `> FILE` is an error (exit 2), not a silent 0. */
int main(int argc, char **argv)
{
	return atomic_close_stdout("dpusim", dispatch(argc, argv));
}
