# models/: the domain (GPU, CPU, NIC, DPU, fabric, collectives, storage, workload).
MODEL_OBJS :=
# scenario language; the sources are named once, for the library
# and for the fuzz target (tests/tests.mk), which builds them with clang
SCN_SRCS := models/units.c models/diag.c models/ytree.c \
	models/profile_schema.c models/profile.c \
	models/scenario.c models/scenario_read.c \
	models/scenario_resolve.c models/scenario_dump.c \
	models/offload.c models/wire.c \
	models/datadir.c models/canon.c
MODEL_OBJS += $(SCN_SRCS:%.c=$(BUILD)/%.o)
UNIT_TESTS += units diag ytree profile scenario datadir canon offload
# fabric, transports, collectives
MODEL_OBJS += $(BUILD)/models/fabric.o $(BUILD)/models/transport.o $(BUILD)/models/coll.o \
	$(BUILD)/models/coll_nccl.o
UNIT_TESTS += wire fabric coll
UNIT_TESTS += coll_group
# training workloads
MODEL_OBJS += $(BUILD)/models/workload.o $(BUILD)/models/gpu.o
UNIT_TESTS += workload gpu
# noise, reliability, power and cost
MODEL_OBJS += $(BUILD)/models/noise.o $(BUILD)/models/reliab.o $(BUILD)/models/power.o
UNIT_TESTS += noise reliab power
# scenario to model parameters, the training simulation
MODEL_OBJS += $(BUILD)/models/setup.o $(BUILD)/models/train.o $(BUILD)/models/train_world.o \
	$(BUILD)/models/train_loader.o $(BUILD)/models/train_explain.o $(BUILD)/models/train_config.o \
	$(BUILD)/models/train_costs.o $(BUILD)/models/train_steady.o $(BUILD)/models/tp_overlap.o
UNIT_TESTS += train
UNIT_TESTS += setup
# node-local NVMe under PCIe switches, GDS and bounce-buffer paths
MODEL_OBJS += $(BUILD)/models/stor.o
UNIT_TESTS += stor
# perftest's point-to-point benchmarks on the fabric's flows
MODEL_OBJS += $(BUILD)/models/p2p.o
UNIT_TESTS += p2p
# (keep last: LIB_OBJS expands MODEL_OBJS here)
LIB_OBJS += $(MODEL_OBJS)
