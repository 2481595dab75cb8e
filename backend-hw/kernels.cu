// CUDA kernels for dpusim-hw, with C entry points (backend-hw/kernels.h).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "backend-hw/kernels.h"

// A cheap deterministic pattern in [-1, 1): GEMM inputs that are not all
// zeros, so the tensor cores do representative work.
__device__ static float pattern(size_t i, unsigned seed)
{
	unsigned x = (unsigned)(i * 2654435761u) ^ seed;
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return (float)(x & 0xffff) / 32768.0f - 1.0f;
}

__global__ static void fill_f32(float *p, size_t n, unsigned seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = pattern(i, seed);
}

__global__ static void fill_bf16(__nv_bfloat16 *p, size_t n, unsigned seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = __float2bfloat16(pattern(i, seed));
}

extern "C" int hw_kernel_fill(void *p, size_t n, int bf16, unsigned seed)
{
	if (bf16)
		fill_bf16<<<1024, 256>>>((__nv_bfloat16 *)p, n, seed);
	else
		fill_f32<<<1024, 256>>>((float *)p, n, seed);
	return (int)cudaGetLastError();
}
