# backend-hw/: dpusim-hw, the hardware backend (libibverbs, MPI, CUDA).
#
# Always built with Open MPI, libibverbs, liburing and OpenSSL. The CUDA parts
# (gpu_cuda.c, kernels.cu, cuBLAS) are compiled when $(CUDA_HOME)/bin/nvcc
# exists; HW_CUDA= (empty) forces a build without them. The binary says which
# paths it has: `dpusim-hw --version`.
CUDA_HOME ?= /usr/local/cuda
HW_CUDA ?= $(if $(wildcard $(CUDA_HOME)/bin/nvcc),1,)
NVCC ?= $(CUDA_HOME)/bin/nvcc
# Hopper (H100/H200) SASS plus PTX that newer GPUs JIT-compile.
NVCC_ARCH ?= -gencode arch=compute_90,code=[sm_90,compute_90]

# MPI_CFLAGS and MPI_LIBS (the top Makefile) are expanded only when used.
HW_LIBS = $(MPI_LIBS) -libverbs -luring -lcrypto

# Pure parts (no MPI, no verbs calls): unit-tested on their own.
HW_PURE_OBJS := \
	$(BUILD)/backend-hw/pci.o \
	$(BUILD)/backend-hw/msg.o \
	$(BUILD)/backend-hw/log.o \
	$(BUILD)/backend-hw/json.o \
	$(BUILD)/backend-hw/crypt.o \
	$(BUILD)/backend-hw/stats.o

HW_OBJS := $(HW_PURE_OBJS) \
	$(BUILD)/backend-hw/main.o \
	$(BUILD)/backend-hw/probe.o \
	$(BUILD)/backend-hw/mem.o \
	$(BUILD)/backend-hw/comm.o \
	$(BUILD)/backend-hw/xport.o \
	$(BUILD)/backend-hw/tcp.o \
	$(BUILD)/backend-hw/verbs.o \
	$(BUILD)/backend-hw/vdev.o \
	$(BUILD)/backend-hw/perf.o \
	$(BUILD)/backend-hw/replay_p2p.o \
	$(BUILD)/backend-hw/allreduce.o \
	$(BUILD)/backend-hw/bench.o \
	$(BUILD)/backend-hw/bench_local.o \
	$(BUILD)/backend-hw/bench_net.o \
	$(BUILD)/backend-hw/replay.o
# The training replay and its GEMM engine (CPU: GSL CBLAS; GPU: gpu_cuda.c).
HW_OBJS += $(BUILD)/backend-hw/replay_train.o $(BUILD)/backend-hw/gemm.o \
	$(BUILD)/backend-hw/pipe.o $(BUILD)/backend-hw/replay_store.o

ifneq ($(HW_CUDA),)
HW_OBJS += $(BUILD)/backend-hw/gpu_cuda.o $(BUILD)/backend-hw/kernels.o
HW_CPPFLAGS := -DHW_HAVE_CUDA=1 -I$(CUDA_HOME)/include
HW_LIBS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart -lstdc++
else
HW_OBJS += $(BUILD)/backend-hw/gpu_none.o
HW_CPPFLAGS :=
endif

# cuFile (GPUDirect Storage) for bench's storage reads into GPU memory: when
# the toolkit has cufile.h and libcufile; HW_CUFILE= forces it off.
HW_CUFILE ?= $(if $(HW_CUDA),$(if $(and $(wildcard $(CUDA_HOME)/include/cufile.h),$(wildcard $(CUDA_HOME)/lib64/libcufile.so*)),1,),)
ifneq ($(HW_CUFILE),)
HW_CPPFLAGS += -DHW_HAVE_CUFILE=1
HW_LIBS += -lcufile
endif

$(HW_OBJS): CPPFLAGS += $(HW_CPPFLAGS)
$(HW_OBJS): CFLAGS += $(MPI_CFLAGS)

$(BUILD)/backend-hw/%.o: backend-hw/%.cu | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCC_ARCH) -O2 -I. -MMD -MP -c -o $@ $<

# $(LIB) is set after the fragments are included, so name the library here.
$(BIN)/dpusim-hw: $(HW_OBJS) $(BUILD)/libdpusim.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(HW_LIBS) $(LDLIBS)

ALL_BINS += $(BIN)/dpusim-hw

# Unit suites for the pure parts link those objects besides the library.
UNIT_TESTS += hw_pci hw_msg
UNIT_TESTS += hw_gemm hw_crypt hw_stats hw_pipe
$(BUILD)/tests/test_hw_stats: $(BUILD)/backend-hw/stats.o
# pipe.o's clock and barrier are the test's own (a scripted clock, no MPI)
$(BUILD)/tests/test_hw_pipe: $(BUILD)/backend-hw/pipe.o $(BUILD)/backend-hw/gemm.o \
	$(BUILD)/backend-hw/gpu_none.o $(BUILD)/backend-hw/log.o $(BUILD)/backend-hw/xport.o \
	$(BUILD)/backend-hw/stats.o
# pipe.o needs the library's wl_1f1b_op, which comes before it on the line
$(BUILD)/tests/test_hw_pipe: LDLIBS := $(BUILD)/libdpusim.a $(LDLIBS)
$(BUILD)/tests/test_hw_crypt: $(BUILD)/backend-hw/crypt.o $(BUILD)/backend-hw/log.o \
	$(BUILD)/backend-hw/xport.o
$(BUILD)/tests/test_hw_gemm: $(BUILD)/backend-hw/gemm.o $(BUILD)/backend-hw/gpu_none.o \
	$(BUILD)/backend-hw/log.o
# log.o needs the library's sim_vfit, which comes before it on the line
$(BUILD)/tests/test_hw_crypt $(BUILD)/tests/test_hw_gemm: LDLIBS := $(BUILD)/libdpusim.a $(LDLIBS)
$(BUILD)/tests/test_hw_pci: $(BUILD)/backend-hw/pci.o
$(BUILD)/tests/test_hw_msg: $(BUILD)/backend-hw/msg.o $(BUILD)/backend-hw/allreduce.o \
	$(BUILD)/backend-hw/xport.o

# make check-rdma: the verbs path on Soft-RoCE in a qemu VM (tests/vm/). The
# guest gets a build without CUDA (cuBLAS alone would be 600 MB of initramfs):
# the plain one where that has none (as on CI), else its own in build/vm.
# make check-cuda: the CUDA paths where a GPU is present; says it skipped else.
# make check builds both (CHECK_BUILDS) beside the others and runs their
# tests with the rest (CHECK_EXTRA_TESTS).
.PHONY: check-rdma check-rdma-asan check-cuda check-build-vm
VM_BIN := $(if $(HW_CUDA),build/vm/bin,$(BIN))
# The issue asks CI (make check) to run the VM too: about 2-4 minutes under TCG.
CHECK_BUILDS += check-build-vm
CHECK_EXTRA_TESTS += e2e:$(VM_BIN):tests/vm/rdma.sh e2e:$(BIN):tests/e2e/hw-cuda.sh
check-build-vm: $(if $(HW_CUDA),,$(BIN)/dpusim-hw $(BIN)/dpusim)
	@tools/install-deps --vm
	+$(if $(HW_CUDA),$(MAKE) BUILD=build/vm BIN=build/vm/bin HW_CUDA= build/vm/bin/dpusim-hw \
	    build/vm/bin/dpusim)
check-rdma: check-build-vm
	@BIN=$(VM_BIN) tools/run-tests e2e tests/vm/rdma.sh

# The same with the sanitizer build inside the guest (ASan, UBSan, LSan).
check-rdma-asan:
	@tools/install-deps --vm
	$(MAKE) BUILD=build/vm-asan BIN=build/vm-asan/bin HW_CUDA= OPT="-O1 -g" \
	    SAN="$(ASAN_FLAGS)" build/vm-asan/bin/dpusim-hw build/vm-asan/bin/dpusim
	@BIN=build/vm-asan/bin tools/run-tests e2e tests/vm/rdma.sh

check-cuda: $(BIN)/dpusim-hw
	@BIN=$(BIN) tools/run-tests e2e tests/e2e/hw-cuda.sh
