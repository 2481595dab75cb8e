# models/: the domain (GPU, CPU, NIC, DPU, fabric, collectives, storage, workload).
MODEL_OBJS :=

LIB_OBJS += $(MODEL_OBJS)
