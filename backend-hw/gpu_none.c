/* The GPU interface when dpusim-hw is built without CUDA: every entry point
 * says so, none pretends to measure. */
#include "backend-hw/gpu.h"

#include <stdio.h>

#include "sim/err.h"

bool hw_gpu_compiled(void)
{
	return false;
}

int hw_gpu_probe(hw_gpu_info *out, int max, char *why, size_t why_cap)
{
	(void)out;
	(void)max;
	snprintf(why, why_cap, "this dpusim-hw was built without CUDA (no /usr/local/cuda at build time)");
	return SIM_EUNSUPPORTED;
}

int hw_gpu_gemm(int dev, const char *dtype, int n, int reps, double *flops_per_s)
{
	(void)dev, (void)dtype, (void)n, (void)reps, (void)flops_per_s;
	return SIM_EUNSUPPORTED;
}

int hw_gpu_copy_bw(int dev, size_t bytes, int reps, double *h2d_Bps, double *d2h_Bps)
{
	(void)dev, (void)bytes, (void)reps, (void)h2d_Bps, (void)d2h_Bps;
	return SIM_EUNSUPPORTED;
}

int hw_gpu_gemm_open(size_t n, void **ctx, char *what, size_t what_cap)
{
	(void)n, (void)what, (void)what_cap;
	*ctx = NULL;
	fprintf(stderr, "dpusim-hw: error: --compute cuda: this dpusim-hw was built without CUDA "
		"(no /usr/local/cuda at build time)\n");
	return SIM_EUNSUPPORTED;
}

int hw_gpu_gemm_run(void *ctx, size_t calls, size_t krem, double *secs)
{
	(void)ctx, (void)calls, (void)krem, (void)secs;
	return SIM_EUNSUPPORTED;
}

void hw_gpu_gemm_close(void *ctx)
{
	(void)ctx;
}

bool hw_cufile_compiled(void)
{
	return false;
}

int hw_cufile_read_bw(const char *path, size_t bytes, size_t block, double *Bps, char *why,
		      size_t why_cap)
{
	(void)path, (void)bytes, (void)block, (void)Bps;
	snprintf(why, why_cap, "cuFile not compiled in: this dpusim-hw was built without CUDA");
	return SIM_EUNSUPPORTED;
}
