/* dpusim-hw subcommands and build facts shared by them. */
#ifndef DPUSIM_HW_CMD_H
#define DPUSIM_HW_CMD_H

/* "verbs tcp mpi io_uring openssl[ cuda]": the paths compiled into this binary. */
const char *hw_compiled_paths(void);

/* This CPU's clock in Hz for cycle counts: cpufreq's cpuinfo_max_freq where
 * the kernel has it, else /proc/cpuinfo's "cpu MHz"; 0 when neither says.
 * *source (may be NULL) gets which one. */
double hw_cpu_hz(const char **source);

/* `dpusim-hw probe [--json]`: argv[0] is "probe". Exit status: 0, or 2 on usage. */
int hw_cmd_probe(int argc, char **argv);
/* `dpusim-hw bench ...` (backend-hw/bench.c): 0, 1 verification failure, 2 usage/error. */
int hw_cmd_bench(int argc, char **argv);
/* `dpusim-hw replay FILE ...` (backend-hw/replay.c). */
int hw_cmd_replay(int argc, char **argv);

#endif
