# models/: the domain (GPU, CPU, NIC, DPU, fabric, collectives, storage, workload).
MODEL_OBJS :=
# scenario language (ME=scn)
MODEL_OBJS += $(BUILD)/models/units.o
UNIT_TESTS += units

LIB_OBJS += $(MODEL_OBJS)
