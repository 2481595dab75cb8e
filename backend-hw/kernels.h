/* C entry points of backend-hw/kernels.cu (compiled by nvcc). */
#ifndef DPUSIM_HW_KERNELS_H
#define DPUSIM_HW_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fills n elements at device pointer p (float, or bfloat16 when bf16) with a
 * deterministic pattern in [-1, 1). Returns the cudaError_t of the launch. */
int hw_kernel_fill(void *p, size_t n, int bf16, unsigned seed);

#ifdef __cplusplus
}
#endif

#endif
