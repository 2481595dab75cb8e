/* The CUDA side of dpusim-hw, seen from C: device discovery, device memory,
 * GEMM and copy benchmarks. Built from gpu_cuda.c + kernels.cu when
 * /usr/local/cuda exists (HW_HAVE_CUDA), else from gpu_none.c, whose
 * functions say plainly that CUDA is not compiled in. */
#ifndef DPUSIM_HW_GPU_H
#define DPUSIM_HW_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HW_GPU_MAX 16

typedef struct hw_gpu_info {
	char name[256];
	int cc_major, cc_minor;     /* compute capability */
	uint64_t mem_bytes;
	int sm_count;
	char pci_bus_id[32];        /* "0000:17:00.0" */
	int numa_node;              /* from sysfs; -1 when the kernel does not say */
} hw_gpu_info;

/* True when this binary was built with CUDA. */
bool hw_gpu_compiled(void);

/* Fills out[0..max) and returns the number of GPUs (0 is a normal answer),
 * or a negative code with why[] saying what the CUDA runtime said (no driver,
 * not compiled in...). */
int hw_gpu_probe(hw_gpu_info *out, int max, char *why, size_t why_cap);

/* One GEMM throughput point: C = A*B, n x n x n, `dtype` "fp32", "tf32" or
 * "bf16" through cuBLAS, on GPU `dev`. *flops_per_s gets the median over
 * `reps` timed runs (after a warm-up). Returns 0 or a negative code (logged). */
int hw_gpu_gemm(int dev, const char *dtype, int n, int reps, double *flops_per_s);

/* Host<->device copy bandwidth with pinned host memory, bytes per copy.
 * h2d/d2h get bytes per second (median of reps). Returns 0 or a negative code. */
int hw_gpu_copy_bw(int dev, size_t bytes, int reps, double *h2d_Bps, double *d2h_Bps);

/* The replay's GEMM engine on this rank's GPU (local rank modulo the GPUs):
 * n x n FP32 matrices of backend-hw/gemm.h's known product, column-major,
 * cuBLAS SGEMM. open fills what[] with the device; run does `calls` n x n x n
 * products and one n x n x krem (krem 0: none), waits (*secs: launch to
 * completion), copies the last product back and checks every element
 * (SIM_EVERIFY, logged). Without CUDA:
 * SIM_EUNSUPPORTED, said plainly. */
int hw_gpu_gemm_open(size_t n, void **ctx, char *what, size_t what_cap);
int hw_gpu_gemm_run(void *ctx, size_t calls, size_t krem, double *secs);
void hw_gpu_gemm_close(void *ctx);

/* cuFile (GPUDirect Storage), compiled in when $(CUDA_HOME) has cufile.h and
 * libcufile (HW_HAVE_CUFILE). hw_cufile_compiled says whether it is. */
bool hw_cufile_compiled(void);
/* Reads the `bytes`-long file at path (written by bench: every byte of the
 * block at offset o is (o / block) % 251) sequentially in `block`-sized
 * cuFileRead calls into this rank's GPU memory, timed; then copies it back
 * and checks every block. *Bps gets bytes / time. 0; SIM_EUNSUPPORTED with
 * why[] saying so when cuFile is not compiled in or its driver does not
 * open (a skip, not a failure); SIM_EVERIFY; SIM_EIO (logged). */
int hw_cufile_read_bw(const char *path, size_t bytes, size_t block, double *Bps, char *why,
		      size_t why_cap);

#ifdef HW_HAVE_CUDA
#include "backend-hw/mem.h"
/* GPU memory (cudaMalloc), exported to the NIC as a dmabuf. */
extern const hw_mem_ops hw_mem_cuda_ops;
#endif

#endif
