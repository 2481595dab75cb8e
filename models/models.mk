# models/: the domain (GPU, CPU, NIC, DPU, fabric, collectives, storage, workload).
MODEL_OBJS :=
# scenario language (ME=scn)
MODEL_OBJS += $(BUILD)/models/units.o
UNIT_TESTS += units
# fabric, transports, collectives (ME=fab)
MODEL_OBJS += $(BUILD)/models/fabric.o $(BUILD)/models/transport.o $(BUILD)/models/coll.o
UNIT_TESTS += fabric coll
# training workloads (lead)
MODEL_OBJS += $(BUILD)/models/workload.o $(BUILD)/models/gpu.o
UNIT_TESTS += workload gpu
# noise, reliability, power and cost (ME=rel)
MODEL_OBJS += $(BUILD)/models/noise.o $(BUILD)/models/reliab.o
UNIT_TESTS += noise reliab
# (keep last: LIB_OBJS expands MODEL_OBJS here)
LIB_OBJS += $(MODEL_OBJS)
