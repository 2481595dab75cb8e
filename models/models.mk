# models/: the domain (GPU, CPU, NIC, DPU, fabric, collectives, storage, workload).
MODEL_OBJS :=
# scenario language
MODEL_OBJS += $(BUILD)/models/units.o $(BUILD)/models/diag.o $(BUILD)/models/ytree.o \
	$(BUILD)/models/profile_schema.o $(BUILD)/models/profile.o \
	$(BUILD)/models/scenario.o $(BUILD)/models/scenario_read.o \
	$(BUILD)/models/scenario_resolve.o $(BUILD)/models/scenario_dump.o \
	$(BUILD)/models/offload.o \
	$(BUILD)/models/datadir.o $(BUILD)/models/canon.o
UNIT_TESTS += units diag ytree profile scenario datadir canon offload
# fabric, transports, collectives
MODEL_OBJS += $(BUILD)/models/fabric.o $(BUILD)/models/transport.o $(BUILD)/models/coll.o \
	$(BUILD)/models/coll_nccl.o
UNIT_TESTS += fabric coll
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
	$(BUILD)/models/train_costs.o $(BUILD)/models/train_steady.o
UNIT_TESTS += train
UNIT_TESTS += setup
# node-local NVMe under PCIe switches, GDS and bounce-buffer paths
MODEL_OBJS += $(BUILD)/models/stor.o
UNIT_TESTS += stor
# (keep last: LIB_OBJS expands MODEL_OBJS here)
LIB_OBJS += $(MODEL_OBJS)
