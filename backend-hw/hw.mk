# backend-hw/: dpusim-hw, the hardware backend (libibverbs, MPI, CUDA).
