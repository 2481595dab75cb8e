# models/: the domain (GPU, CPU, NIC, DPU, fabric, collectives, storage, workload).
MODEL_OBJS :=
# scenario language (ME=scn)
MODEL_OBJS += $(BUILD)/models/units.o
UNIT_TESTS += units
# fabric, transports, collectives (ME=fab)
MODEL_OBJS += $(BUILD)/models/fabric.o
UNIT_TESTS += fabric

LIB_OBJS += $(MODEL_OBJS)
