/* The CUDA side of dpusim-hw: discovery, GEMM and copy benchmarks (cuBLAS,
 * CUDA runtime), and the GPU memory backend exported as dmabuf. */
#define _GNU_SOURCE /* O_DIRECT */
#include "backend-hw/gpu.h"

#include <fcntl.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#ifdef HW_HAVE_CUFILE
#include <cufile.h>
#endif
#include <gsl/gsl_sort.h>

#include "backend-hw/gemm.h"
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

/* What time_median times: one operation enqueued on the default stream. */
typedef int timed_op(const void *ctx);

/* Times `reps` runs of op (at most 64, after one untimed warm-up) with CUDA
 * events; median seconds in *s. */
static int time_median(timed_op *op, const void *ctx, int reps, double *s)
{
	double times[64];
	cudaEvent_t e0, e1;
	float ms;
	int err;
	CUDACHECK(cudaEventCreate(&e0));
	CUDACHECK(cudaEventCreate(&e1));
	for (int r = -1; r < reps && r < 64; r++) {
		CUDACHECK(cudaEventRecord(e0, 0));
		if ((err = op(ctx)))
			return err;
		CUDACHECK(cudaEventRecord(e1, 0));
		CUDACHECK(cudaEventSynchronize(e1));
		CUDACHECK(cudaEventElapsedTime(&ms, e0, e1));
		if (r >= 0)
			times[r] = ms * 1e-3;
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	gsl_sort(times, 1, (size_t)(reps < 64 ? reps : 64));
	*s = times[(reps < 64 ? reps : 64) / 2];
	return 0;
}

/* One square GEMM, c = a b, n x n, of type t computed as ct. */
struct gemm_op {
	cublasHandle_t h;
	cudaDataType_t t;
	cublasComputeType_t ct;
	int n;
	const void *a, *b;
	void *c;
};

static int run_gemm(const void *ctx)
{
	const struct gemm_op *g = ctx;
	const float one = 1.0f, zero = 0.0f;
	CUBLASCHECK(cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one, g->a,
				 g->t, g->n, g->b, g->t, g->n, &zero, g->c,
				 g->t == CUDA_R_16BF ? CUDA_R_32F : g->t, g->n, g->ct,
				 CUBLAS_GEMM_DEFAULT));
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
		err = time_median(run_gemm, &(struct gemm_op){ .h = h, .t = t, .ct = ct, .n = n,
				  .a = a, .b = b, .c = c }, reps, &s);
	if (h)
		cublasDestroy(h);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	if (!err)
		*flops_per_s = 2.0 * (double)n * (double)n * (double)n / s;
	return err;
}

/* One copy of `bytes` in direction `kind`. */
struct copy_op {
	void *dst;
	const void *src;
	size_t bytes;
	enum cudaMemcpyKind kind;
};

static int run_copy(const void *ctx)
{
	const struct copy_op *c = ctx;
	CUDACHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, c->kind, 0));
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
		err = time_median(run_copy, &(struct copy_op){ .dst = d, .src = host, .bytes = bytes,
				  .kind = cudaMemcpyHostToDevice }, reps, &s_h2d);
	if (!err)
		err = time_median(run_copy, &(struct copy_op){ .dst = host, .src = d, .bytes = bytes,
				  .kind = cudaMemcpyDeviceToHost }, reps, &s_d2h);
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

/* The replay's GEMM engine: A, B, C n x n on this rank's GPU. */
typedef struct gpu_gemm {
	int device;
	size_t n;
	float *a, *b, *c;   /* device */
	float *host;        /* n x n, for filling and for the check */
	cublasHandle_t h;
} gpu_gemm;

void hw_gpu_gemm_close(void *ctx)
{
	gpu_gemm *g = ctx;
	if (!g)
		return;
	if (g->h)
		cublasDestroy(g->h);
	cudaFree(g->a);
	cudaFree(g->b);
	cudaFree(g->c);
	free(g->host);
	free(g);
}

static int gemm_fill(gpu_gemm *g, float *dst, bool is_a)
{
	size_t n = g->n;
	for (size_t j = 0; j < n; j++)  /* column-major: (i, j) at i + j n */
		for (size_t i = 0; i < n; i++)
			g->host[i + j * n] = is_a ? hw_gemm_a(i, j) : hw_gemm_b(i, j, n);
	CUDACHECK(cudaMemcpy(dst, g->host, n * n * sizeof *dst, cudaMemcpyHostToDevice));
	return 0;
}

static int gemm_setup(gpu_gemm *g, char *what, size_t what_cap)
{
	size_t bytes = g->n * g->n * sizeof(float);
	struct cudaDeviceProp p;
	int err = pick_device(&g->device);
	if (err)
		return err;
	CUDACHECK(cudaSetDevice(g->device));
	CUDACHECK(cudaGetDeviceProperties(&p, g->device));
	if (!(g->host = malloc(bytes)))
		return hw_fail(SIM_ENOMEM, "cannot allocate %zu bytes", bytes);
	CUDACHECK(cudaMalloc((void **)&g->a, bytes));
	CUDACHECK(cudaMalloc((void **)&g->b, bytes));
	CUDACHECK(cudaMalloc((void **)&g->c, bytes));
	if ((err = gemm_fill(g, g->a, true)) || (err = gemm_fill(g, g->b, false)))
		return err;
	CUBLASCHECK(cublasCreate(&g->h));
	CUBLASCHECK(cublasSetMathMode(g->h, CUBLAS_DEFAULT_MATH));  /* FP32, no TF32 */
	snprintf(what, what_cap, "cuda cublasSgemm (FP32) on GPU %d (%s) n=%zu", g->device, p.name,
		 g->n);
	return 0;
}

int hw_gpu_gemm_open(size_t n, void **ctx, char *what, size_t what_cap)
{
	gpu_gemm *g = calloc(1, sizeof *g);
	int err;
	*ctx = NULL;
	if (!g)
		return hw_fail(SIM_ENOMEM, "out of memory");
	g->device = -1;
	g->n = n;
	if ((err = gemm_setup(g, what, what_cap))) {
		hw_gpu_gemm_close(g);
		return err;
	}
	*ctx = g;
	return 0;
}

/* C on the device against the known product with the first k columns of
 * A, every element. */
static int gemm_check(gpu_gemm *g, size_t k)
{
	size_t N = g->n;
	CUDACHECK(cudaMemcpy(g->host, g->c, N * N * sizeof(float), cudaMemcpyDeviceToHost));
	for (size_t j = 0; j < N; j++)
		for (size_t i = 0; i < N; i++)
			if (g->host[i + j * N] != hw_gemm_want(i, j, k, N))
				return hw_fail(SIM_EVERIFY, "GPU GEMM n=%zu k=%zu: C(%zu,%zu) is %g, "
					       "expected %g", N, k, i, j, (double)g->host[i + j * N],
					       (double)hw_gemm_want(i, j, k, N));
	return 0;
}

/* `count` products C = A(:, :k) B(:k, :) back to back, their time (launch
 * to synchronisation) added to *secs, then C checked. */
static int gemm_timed(gpu_gemm *g, size_t count, size_t k, double *secs)
{
	const float one = 1.0f, zero = 0.0f;
	int n = (int)g->n;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < count; i++)
		CUBLASCHECK(cublasSgemm(g->h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, (int)k, &one, g->a, n,
					g->b, n, &zero, g->c, n));
	CUDACHECK(cudaDeviceSynchronize());
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*secs += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	return gemm_check(g, k);
}

/* The full-size products, then the remainder, each batch checked (the
 * remainder overwrites C, so the full ones are checked before it runs). */
int hw_gpu_gemm_run(void *ctx, size_t calls, size_t krem, double *secs)
{
	gpu_gemm *g = ctx;
	int err = 0;
	*secs = 0;
	if (!calls && !krem)
		return 0;
	CUDACHECK(cudaSetDevice(g->device));
	if (calls)
		err = gemm_timed(g, calls, g->n, secs);
	if (!err && krem)
		err = gemm_timed(g, 1, krem, secs);
	return err;
}

#ifndef HW_HAVE_CUFILE
bool hw_cufile_compiled(void)
{
	return false;
}

int hw_cufile_read_bw(const char *path, size_t bytes, size_t block, double *Bps, char *why,
		      size_t why_cap)
{
	(void)path, (void)bytes, (void)block, (void)Bps;
	snprintf(why, why_cap, "cuFile not compiled in: no cufile.h and libcufile under the CUDA "
		 "toolkit at build time");
	return SIM_EUNSUPPORTED;
}
#else
bool hw_cufile_compiled(void)
{
	return true;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Every block of the copy back holds its own byte. */
static int cufile_check(const unsigned char *host, size_t bytes, size_t block)
{
	for (size_t off = 0; off < bytes; off++)
		if (host[off] != (unsigned char)(off / block % 251))
			return hw_fail(SIM_EVERIFY, "cuFile read: byte %zu reads back %u, expected %u",
				       off, host[off], (unsigned)(off / block % 251));
	return 0;
}

/* The timed reads; buf is registered device memory of `bytes`. */
static int cufile_reads(CUfileHandle_t fh, void *buf, size_t bytes, size_t block, double *s)
{
	double t0 = now_s();
	for (size_t off = 0; off < bytes; off += block) {
		size_t n = bytes - off < block ? bytes - off : block;
		ssize_t got = cuFileRead(fh, buf, n, (off_t)off, (off_t)off);
		if (got != (ssize_t)n)
			return hw_fail(SIM_EIO, "cuFileRead of %zu bytes at %zu returned %zd", n, off,
				       got);
	}
	*s = now_s() - t0;
	return 0;
}

int hw_cufile_read_bw(const char *path, size_t bytes, size_t block, double *Bps, char *why,
		      size_t why_cap)
{
	CUfileDescr_t d;
	CUfileHandle_t fh = NULL;
	CUfileError_t st;
	void *buf = NULL;
	unsigned char *host = NULL;
	int dev = -1, fd, err = 0;
	bool buf_reg = false;
	double s = 0;
	if ((err = pick_device(&dev)))
		return err;
	CUDACHECK(cudaSetDevice(dev));
	st = cuFileDriverOpen();
	if (st.err != CU_FILE_SUCCESS) {
		snprintf(why, why_cap, "cuFileDriverOpen failed: %s (error %d)", cufileop_status_error(st.err),
			 (int)st.err);
		return SIM_EUNSUPPORTED;
	}
	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		err = hw_fail(SIM_EIO, "cuFile: cannot open '%s' with O_DIRECT: %s", path,
			      strerror(errno));
	memset(&d, 0, sizeof d);
	d.handle.fd = fd;
	d.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
	if (!err && (st = cuFileHandleRegister(&fh, &d)).err != CU_FILE_SUCCESS) {
		snprintf(why, why_cap, "cuFileHandleRegister failed on '%s': %s (error %d)", path,
			 cufileop_status_error(st.err), (int)st.err);
		err = SIM_EUNSUPPORTED;
		fh = NULL;
	}
	if (!err && (cudaMalloc(&buf, bytes) != cudaSuccess || !(host = malloc(bytes))))
		err = hw_fail(SIM_ENOMEM, "cuFile: cannot allocate %zu bytes on GPU %d and host",
			      bytes, dev);
	if (!err && (st = cuFileBufRegister(buf, bytes, 0)).err != CU_FILE_SUCCESS)
		err = hw_fail(SIM_EIO, "cuFileBufRegister of %zu bytes failed: %s (error %d)", bytes,
			      cufileop_status_error(st.err), (int)st.err);
	buf_reg = !err;
	if (!err)
		err = cufile_reads(fh, buf, bytes, block, &s);
	if (!err && cudaMemcpy(host, buf, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
		err = hw_fail(SIM_EIO, "cuFile: copying the read data back failed");
	if (!err)
		err = cufile_check(host, bytes, block);
	if (buf_reg)
		cuFileBufDeregister(buf);
	if (fh)
		cuFileHandleDeregister(fh);
	if (fd >= 0)
		close(fd);
	cudaFree(buf);
	free(host);
	cuFileDriverClose();
	if (!err)
		*Bps = (double)bytes / s;
	return err;
}
#endif
