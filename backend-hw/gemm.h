/* Compute that really computes, for `dpusim-hw replay` of a training
 * workload: square single-precision GEMMs adding up to a FLOP count, on the
 * CPU (GSL's CBLAS, cblas_sgemm) or on a GPU (cuBLAS), each result checked
 * against the exactly known product.
 *
 * The inputs make the product known without computing it: A(i,k) is a small
 * positive integer (never 0, so no BLAS can skip work), B is the n x n
 * matrix with ones at (j,j) and ((j+1) mod n, j), so C(i,j) = A(i,j) +
 * A(i,(j+1) mod n) for the k = n product, exact in float (integers <= 14).
 * A GEMM with fewer inner columns k uses the first k columns of A and rows
 * of B: terms whose index is >= k drop out. */
#ifndef DPUSIM_HW_GEMM_H
#define DPUSIM_HW_GEMM_H

#include <stddef.h>

/* A(i,k) and B(k,j) as above (row or column order is the caller's: both
 * are functions of the indices). */
float hw_gemm_a(size_t i, size_t k);
float hw_gemm_b(size_t k, size_t j, size_t n);
/* C(i,j) of A(:, :k) x B(:k, :) for n x n matrices. */
float hw_gemm_want(size_t i, size_t j, size_t k, size_t n);

/* How `flops` split into GEMMs of n x n x n (2n^3 FLOPs each) and one last
 * n x n x krem (krem in [0, n); 0: none), rounded to the nearest multiple
 * of 2n^2 FLOPs. *done gets the FLOPs that split runs. */
void hw_gemm_split(double flops, size_t n, size_t *calls, size_t *krem, double *done);

typedef struct hw_gemm hw_gemm;

/* Opens a GEMM engine: where "cpu" (GSL CBLAS, this thread) or "cuda" (this
 * rank's GPU, cuBLAS SGEMM with FP32 compute), matrices n x n. 0, or a
 * negative code (logged; SIM_EUNSUPPORTED for cuda in a build without it). */
int hw_gemm_open(const char *where, size_t n, hw_gemm **out);
/* Runs GEMMs adding up to `flops` (hw_gemm_split) and waits for them;
 * *done gets the FLOPs run and *secs the time of the GEMMs alone (the
 * checks not counted). Every CPU product is checked; on the GPU the last
 * one is copied back and checked (each overwrites the same C). 0,
 * SIM_EVERIFY (logged, first wrong element named), or another code. */
int hw_gemm_run(hw_gemm *g, double flops, double *done, double *secs);
/* "cpu cblas_sgemm (GSL) n=256" or "cuda cublasSgemm on NVIDIA H100 n=4096". */
const char *hw_gemm_describe(const hw_gemm *g);
void hw_gemm_close(hw_gemm *g);

#endif
