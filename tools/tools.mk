# tools/: the command-line programs. cli.o (option helpers) and the command
# implementations go in the library so tests can drive them; main stays out.
TOOL_OBJS := \
	$(BUILD)/tools/cli.o \
	$(BUILD)/tools/cmd_bench.o

# reading results: compare/runs/plot (the report itself is report/)
TOOL_OBJS += $(BUILD)/tools/cmd_compare.o $(BUILD)/tools/cmd_runs.o $(BUILD)/tools/cmd_plot.o \
	$(BUILD)/tools/plot_timeline.o $(BUILD)/tools/plot_bench.o $(BUILD)/tools/gnuplot.o
UNIT_TESTS += human
E2E_TESTS += compare.sh runs.sh plot.sh
# simulated nccl-tests
TOOL_OBJS += $(BUILD)/tools/cmd_coll.o $(BUILD)/tools/bench_coll.o $(BUILD)/tools/human.o
E2E_TESTS += coll.sh bench-coll.sh p2p.sh
# sweeps and traces
TOOL_OBJS += $(BUILD)/tools/trace.o $(BUILD)/tools/sweep.o $(BUILD)/tools/sweep_eta.o $(BUILD)/tools/cmd_sweep.o
UNIT_TESTS += trace sweep
E2E_TESTS += sweep.sh
# scenario commands: check, profiles, run --dump
TOOL_OBJS += $(BUILD)/tools/scn_cli.o $(BUILD)/tools/cmd_check.o $(BUILD)/tools/cmd_profiles.o \
	$(BUILD)/tools/cmd_run.o

# calibration: fits and `dpusim calibrate`
TOOL_OBJS += $(BUILD)/tools/calib.o $(BUILD)/tools/calib_fits.o $(BUILD)/tools/calib_out.o \
	$(BUILD)/tools/cmd_calibrate.o
UNIT_TESTS += calib calib_out
E2E_TESTS += calibrate.sh closed-loop.sh
# simulating scenarios: run, validate
TOOL_OBJS += $(BUILD)/tools/run.o $(BUILD)/tools/progress.o $(BUILD)/tools/run_p2p.o $(BUILD)/tools/run_par.o $(BUILD)/tools/forks.o $(BUILD)/tools/run_train.o $(BUILD)/tools/cmd_validate.o \
	$(BUILD)/tools/bench_train.o
UNIT_TESTS += run forks
# plan: the fastest layout that fits, per variant
TOOL_OBJS += $(BUILD)/tools/cmd_plan.o
E2E_TESTS += plan.sh

LIB_OBJS += $(TOOL_OBJS)
DPUSIM_OBJS += $(BUILD)/tools/dpusim.o
# sweeps under mpirun: sweep_mpi.o is the one file that includes mpi.h;
# it goes into bin/dpusim only, never the library, and bin/dpusim links Open
# MPI (why: tools/sweep_mpi.c). MPI_Init runs only under mpirun.
DPUSIM_OBJS += $(BUILD)/tools/sweep_mpi.o
$(BUILD)/tools/sweep_mpi.o: CFLAGS += $(MPI_CFLAGS)
$(BIN)/dpusim: LDLIBS += $(MPI_LIBS)

# the calibration loop on this machine as a benchmark: prediction error per size
.PHONY: bench-calib
bench-calib: $(BIN)/dpusim $(BIN)/dpusim-hw
	BIN=$(BIN) tools/calib-loop
