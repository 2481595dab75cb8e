/* The CUDA side of dpusim-hw: discovery, GEMM and copy benchmarks (cuBLAS,
 * CUDA runtime), and the GPU memory backend exported as dmabuf. */
#include "backend-hw/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "backend-hw/kernels.h"
#include "backend-hw/log.h"

#define CUDACHECK(call)                                                            \
	do {                                                                       \
		cudaError_t e_ = (call);                                           \
		if (e_ != cudaSuccess)                                             \
			return hw_fail(SIM_EIO, "%s failed: %s (%s:%d)", #call,    \
				       cudaGetErrorString(e_), __FILE__, __LINE__); \
	} while (0)

#define CUBLASCHECK(call)                                                          \
	do {                                                                       \
		cublasStatus_t s_ = (call);                                        \
		if (s_ != CUBLAS_STATUS_SUCCESS)                                   \
			return hw_fail(SIM_EIO, "%s failed: cuBLAS status %d (%s:%d)", \
				       #call, (int)s_, __FILE__, __LINE__);        \
	} while (0)

bool hw_gpu_compiled(void)
{
	return true;
}

static int sysfs_numa_node(const char *bus_id)
{
	char path[128], lower[32];
	int node = -1;
	FILE *f;
	size_t i;
	for (i = 0; bus_id[i] && i + 1 < sizeof lower; i++)
		lower[i] = (char)(bus_id[i] >= 'A' && bus_id[i] <= 'F' ? bus_id[i] + 32 : bus_id[i]);
	lower[i] = '\0';
	snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", lower);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return node;
}

int hw_gpu_probe(hw_gpu_info *out, int max, char *why, size_t why_cap)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e == cudaErrorNoDevice)
		return snprintf(why, why_cap, "no GPU (CUDA runtime: %s)", cudaGetErrorString(e)), 0;
	if (e != cudaSuccess) {
		snprintf(why, why_cap, "no usable GPU (CUDA runtime: %s)", cudaGetErrorString(e));
		return SIM_ENODEV;
	}
	for (int i = 0; i < n && i < max; i++) {
		struct cudaDeviceProp p;
		hw_gpu_info *g = &out[i];
		CUDACHECK(cudaGetDeviceProperties(&p, i));
		*g = (hw_gpu_info){ .cc_major = p.major, .cc_minor = p.minor,
				    .mem_bytes = p.totalGlobalMem, .sm_count = p.multiProcessorCount };
		snprintf(g->name, sizeof g->name, "%s", p.name);
		CUDACHECK(cudaDeviceGetPCIBusId(g->pci_bus_id, (int)sizeof g->pci_bus_id, i));
		g->numa_node = sysfs_numa_node(g->pci_bus_id);
	}
	return n < max ? n : max;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Times `reps` runs of one GEMM with CUDA events; median seconds in *s. */
static int time_gemm(cublasHandle_t h, cudaDataType_t t, cublasComputeType_t ct, int n,
		     const void *a, const void *b, void *c, int reps, double *s)
{
	const float one = 1.0f, zero = 0.0f;
	double times[64];
	cudaEvent_t e0, e1;
	float ms;
	CUDACHECK(cudaEventCreate(&e0));
	CUDACHECK(cudaEventCreate(&e1));
	for (int r = -1; r < reps && r < 64; r++) {
		CUDACHECK(cudaEventRecord(e0, 0));
		CUBLASCHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, t, n, b, t,
					 n, &zero, c, t == CUDA_R_16BF ? CUDA_R_32F : t, n, ct,
					 CUBLAS_GEMM_DEFAULT));
		CUDACHECK(cudaEventRecord(e1, 0));
		CUDACHECK(cudaEventSynchronize(e1));
		CUDACHECK(cudaEventElapsedTime(&ms, e0, e1));
		if (r >= 0)
			times[r] = ms * 1e-3;
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	qsort(times, (size_t)(reps < 64 ? reps : 64), sizeof times[0], cmp_double);
	*s = times[(reps < 64 ? reps : 64) / 2];
	return 0;
}

int hw_gpu_gemm(int dev, const char *dtype, int n, int reps, double *flops_per_s)
{
	int bf16 = !strcmp(dtype, "bf16"), err;
	cudaDataType_t t = bf16 ? CUDA_R_16BF : CUDA_R_32F;
	cublasComputeType_t ct = !strcmp(dtype, "tf32") ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
	size_t elems = (size_t)n * (size_t)n, esize = bf16 ? 2 : 4;
	void *a = NULL, *b = NULL, *c = NULL;
	cublasHandle_t h = NULL;
	double s = 0;
	if (reps < 1 || n < 1)
		return SIM_EINVAL;
	CUDACHECK(cudaSetDevice(dev));
	err = cudaMalloc(&a, elems * esize) || cudaMalloc(&b, elems * esize) ||
	      cudaMalloc(&c, elems * 4);
	if (err)
		err = hw_fail(SIM_ENOMEM, "cannot allocate GEMM buffers for n=%d on GPU %d", n, dev);
	if (!err && (hw_kernel_fill(a, elems, bf16, 1) || hw_kernel_fill(b, elems, bf16, 2)))
		err = hw_fail(SIM_EIO, "fill kernel failed on GPU %d", dev);
	if (!err && cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
		err = hw_fail(SIM_EIO, "cublasCreate failed on GPU %d", dev);
	if (!err)
		err = time_gemm(h, t, ct, n, a, b, c, reps, &s);
	if (h)
		cublasDestroy(h);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	if (!err)
		*flops_per_s = 2.0 * (double)n * (double)n * (double)n / s;
	return err;
}

/* Median seconds of `reps` copies of `bytes` in direction `kind`. */
static int time_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, int reps,
		     double *s)
{
	double times[64];
	cudaEvent_t e0, e1;
	float ms;
	CUDACHECK(cudaEventCreate(&e0));
	CUDACHECK(cudaEventCreate(&e1));
	for (int r = -1; r < reps && r < 64; r++) {
		CUDACHECK(cudaEventRecord(e0, 0));
		CUDACHECK(cudaMemcpyAsync(dst, src, bytes, kind, 0));
		CUDACHECK(cudaEventRecord(e1, 0));
		CUDACHECK(cudaEventSynchronize(e1));
		CUDACHECK(cudaEventElapsedTime(&ms, e0, e1));
		if (r >= 0)
			times[r] = ms * 1e-3;
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	qsort(times, (size_t)(reps < 64 ? reps : 64), sizeof times[0], cmp_double);
	*s = times[(reps < 64 ? reps : 64) / 2];
	return 0;
}

int hw_gpu_copy_bw(int dev, size_t bytes, int reps, double *h2d_Bps, double *d2h_Bps)
{
	void *host = NULL, *d = NULL;
	double s_h2d = 0, s_d2h = 0;
	int err = 0;
	if (reps < 1 || bytes == 0)
		return SIM_EINVAL;
	CUDACHECK(cudaSetDevice(dev));
	if (cudaMallocHost(&host, bytes) != cudaSuccess || cudaMalloc(&d, bytes) != cudaSuccess)
		err = hw_fail(SIM_ENOMEM, "cannot allocate %zu bytes pinned + on GPU %d", bytes, dev);
	if (!err)
		memset(host, 0x5a, bytes);
	if (!err)
		err = time_copy(d, host, bytes, cudaMemcpyHostToDevice, reps, &s_h2d);
	if (!err)
		err = time_copy(host, d, bytes, cudaMemcpyDeviceToHost, reps, &s_d2h);
	cudaFreeHost(host);
	cudaFree(d);
	if (!err) {
		*h2d_Bps = (double)bytes / s_h2d;
		*d2h_Bps = (double)bytes / s_d2h;
	}
	return err;
}

/* GPU memory backend. Sizes round up to 2 MiB so the dmabuf export, which
 * wants page-aligned ranges, covers whole allocations. */
#define CUDA_ALIGN ((size_t)2 << 20)

/* Device -1: this rank's GPU, local rank modulo the GPUs on the node (one
 * rank per GPU, as mpirun places them). */
static int pick_device(int *device)
{
	const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
	int n = 0;
	if (*device >= 0)
		return 0;
	CUDACHECK(cudaGetDeviceCount(&n));
	if (n < 1)
		return hw_fail(SIM_ENODEV, "no GPU for GPU memory");
	*device = (lr ? atoi(lr) : 0) % n;
	return 0;
}

static int cuda_alloc(hw_mem *m)
{
	size_t bytes = (m->bytes + CUDA_ALIGN - 1) / CUDA_ALIGN * CUDA_ALIGN;
	int err = pick_device(&m->device);
	if (err)
		return err;
	CUDACHECK(cudaSetDevice(m->device));
	CUDACHECK(cudaMalloc(&m->ptr, bytes));
	CUDACHECK(cudaMemset(m->ptr, 0, bytes));
	return 0;
}

static void cuda_release(hw_mem *m)
{
	if (m->ptr)
		cudaFree(m->ptr);
	m->ptr = NULL;
}

static int cuda_to_host(const hw_mem *m, size_t off, void *dst, size_t n)
{
	CUDACHECK(cudaSetDevice(m->device));
	if (off > m->bytes || n > m->bytes - off)
		return SIM_ERANGE;
	CUDACHECK(cudaMemcpy(dst, (const char *)m->ptr + off, n, cudaMemcpyDeviceToHost));
	return 0;
}

static int cuda_from_host(hw_mem *m, size_t off, const void *src, size_t n)
{
	CUDACHECK(cudaSetDevice(m->device));
	if (off > m->bytes || n > m->bytes - off)
		return SIM_ERANGE;
	CUDACHECK(cudaMemcpy((char *)m->ptr + off, src, n, cudaMemcpyHostToDevice));
	return 0;
}

typedef CUresult (*get_handle_fn)(void *, CUdeviceptr, size_t, CUmemRangeHandleType,
				  unsigned long long);

/* The driver's cuMemGetHandleForAddressRange, reached through the runtime so
 * that the binary does not link libcuda and still starts without a driver. */
static int cuda_dmabuf(hw_mem *m, int *fd)
{
	void *fn = NULL;
	enum cudaDriverEntryPointQueryResult q;
	size_t bytes = (m->bytes + CUDA_ALIGN - 1) / CUDA_ALIGN * CUDA_ALIGN;
	CUresult r;
	CUDACHECK(cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &fn, 12000,
						    cudaEnableDefault, &q));
	if (q != cudaDriverEntryPointSuccess || !fn)
		return hw_fail(SIM_EUNSUPPORTED, "this CUDA driver cannot export dmabuf handles");
	r = ((get_handle_fn)fn)(&m->dmabuf_fd, (CUdeviceptr)m->ptr, bytes,
				CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (r != CUDA_SUCCESS)
		return hw_fail(SIM_EUNSUPPORTED,
			       "cuMemGetHandleForAddressRange(DMA_BUF_FD) failed: CUresult %d "
			       "(needs an open kernel module with dmabuf support)", (int)r);
	*fd = m->dmabuf_fd;
	return 0;
}

const hw_mem_ops hw_mem_cuda_ops = {
	.name = "cuda",
	.alloc = cuda_alloc,
	.release = cuda_release,
	.to_host = cuda_to_host,
	.from_host = cuda_from_host,
	.dmabuf = cuda_dmabuf,
};
