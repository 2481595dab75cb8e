/* GEMMs of a known product on the CPU (GSL CBLAS) and, through gpu.h, the
 * GPU. */
#include "backend-hw/gemm.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_cblas.h>

#include "backend-hw/gpu.h"
#include "backend-hw/log.h"

float hw_gemm_a(size_t i, size_t k)
{
	return (float)((i * 5 + k * 3) % 7 + 1);
}

float hw_gemm_b(size_t k, size_t j, size_t n)
{
	return k == j || k == (j + 1) % n ? 1.0f : 0.0f;
}

float hw_gemm_want(size_t i, size_t j, size_t k, size_t n)
{
	size_t j1 = (j + 1) % n;
	return (j < k ? hw_gemm_a(i, j) : 0.0f) + (j1 < k && j1 != j ? hw_gemm_a(i, j1) : 0.0f);
}

void hw_gemm_split(double flops, size_t n, size_t *calls, size_t *krem, double *done)
{
	double per_k = 2.0 * (double)n * (double)n, ks = flops > 0 ? nearbyint(flops / per_k) : 0;
	*calls = (size_t)(ks / (double)n);
	*krem = (size_t)(ks - (double)*calls * (double)n);
	*done = per_k * ((double)*calls * (double)n + (double)*krem);
}

struct hw_gemm {
	size_t n;
	bool gpu;
	void *dev;           /* the GPU side (gpu.h) */
	float *a, *b, *c;    /* CPU: row-major n x n */
	char what[320];
};

static int cpu_open(hw_gemm *g)
{
	size_t n = g->n;
	g->a = malloc(n * n * sizeof *g->a);
	g->b = malloc(n * n * sizeof *g->b);
	g->c = malloc(n * n * sizeof *g->c);
	if (!g->a || !g->b || !g->c)
		return hw_fail(SIM_ENOMEM, "cannot allocate 3 x %zu x %zu floats for the GEMM", n, n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			g->a[i * n + j] = hw_gemm_a(i, j);
			g->b[i * n + j] = hw_gemm_b(i, j, n);
		}
	snprintf(g->what, sizeof g->what, "cpu cblas_sgemm (GSL CBLAS, one thread) n=%zu", n);
	return 0;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* C = A(:, :k) B(:k, :), row-major, timed into *secs; then every element
 * checked. */
static int cpu_gemm(hw_gemm *g, size_t k, double *secs)
{
	size_t n = g->n;
	double t0 = now_s();
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)k, 1.0f, g->a,
		    (int)n, g->b, (int)n, 0.0f, g->c, (int)n);
	*secs += now_s() - t0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (g->c[i * n + j] != hw_gemm_want(i, j, k, n))
				return hw_fail(SIM_EVERIFY, "GEMM n=%zu k=%zu: C(%zu,%zu) is %g, expected %g",
					       n, k, i, j, (double)g->c[i * n + j],
					       (double)hw_gemm_want(i, j, k, n));
	return 0;
}

int hw_gemm_open(const char *where, size_t n, hw_gemm **out)
{
	hw_gemm *g = calloc(1, sizeof *g);
	int err;
	*out = NULL;
	if (!g)
		return hw_fail(SIM_ENOMEM, "out of memory");
	g->n = n;
	if (!strcmp(where, "cuda")) {
		g->gpu = true;
		err = hw_gpu_gemm_open(n, &g->dev, g->what, sizeof g->what);
	} else {
		err = cpu_open(g);
	}
	if (err) {
		hw_gemm_close(g);
		return err;
	}
	*out = g;
	return 0;
}

int hw_gemm_run(hw_gemm *g, double flops, double *done, double *secs)
{
	size_t calls, krem;
	int err = 0;
	*secs = 0;
	hw_gemm_split(flops, g->n, &calls, &krem, done);
	if (g->gpu)
		return hw_gpu_gemm_run(g->dev, calls, krem, secs);
	for (size_t i = 0; i < calls && !err; i++)
		err = cpu_gemm(g, g->n, secs);
	if (!err && krem)
		err = cpu_gemm(g, krem, secs);
	return err;
}

const char *hw_gemm_describe(const hw_gemm *g)
{
	return g->what;
}

void hw_gemm_close(hw_gemm *g)
{
	if (!g)
		return;
	if (g->gpu)
		hw_gpu_gemm_close(g->dev);
	free(g->a);
	free(g->b);
	free(g->c);
	free(g);
}
