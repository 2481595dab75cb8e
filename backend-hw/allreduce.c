/* Ring all-reduce and its verification. */
#include "backend-hw/allreduce.h"

static size_t chunk_lo(size_t count, int n, int c)
{
	return count * (size_t)c / (size_t)n;
}

size_t hw_allreduce_tmp_count(size_t count, int ranks)
{
	return count / (size_t)ranks + 1;
}

static float pattern(size_t i, int rank)
{
	return (float)((i * 7 + (size_t)rank * 13) % 97 + (size_t)rank % 5 + 1);
}

void hw_allreduce_fill(float *data, size_t count, int rank)
{
	for (size_t i = 0; i < count; i++)
		data[i] = pattern(i, rank);
}

size_t hw_allreduce_check(const float *data, size_t count, int ranks, float *want)
{
	for (size_t i = 0; i < count; i++) {
		float sum = 0;
		for (int r = 0; r < ranks; r++)
			sum += pattern(i, r);
		if (data[i] != sum) {
			*want = sum;
			return i;
		}
	}
	return count;
}

double hw_allreduce_bus_factor(int ranks)
{
	return 2.0 * (ranks - 1) / ranks;
}

int hw_allreduce_ring(hw_xport *x, float *data, size_t count, float *tmp, bool corrupt)
{
	int n = x->size, r = x->rank, err;
	/* Reduce-scatter: after step s, chunk (r - s - 1) holds s + 2 ranks' sums. */
	for (int s = 0; s < n - 1; s++) {
		int sc = ((r - s) % n + n) % n, rc = ((r - s - 1) % n + n) % n;
		size_t slo = chunk_lo(count, n, sc), shi = chunk_lo(count, n, sc + 1);
		size_t rlo = chunk_lo(count, n, rc), rhi = chunk_lo(count, n, rc + 1);
		if (corrupt && s == 0 && shi > slo)
			data[slo] += 1.0f;
		err = hw_xfer(x, HW_RIGHT, data + slo, (shi - slo) * sizeof *data, HW_LEFT, tmp,
			      (rhi - rlo) * sizeof *data);
		if (err)
			return err;
		for (size_t i = rlo; i < rhi; i++)
			data[i] += tmp[i - rlo];
	}
	/* All-gather: rank r now owns the full sum of chunk (r + 1). */
	for (int s = 0; s < n - 1; s++) {
		int sc = ((r + 1 - s) % n + n) % n, rc = ((r - s) % n + n) % n;
		size_t slo = chunk_lo(count, n, sc), shi = chunk_lo(count, n, sc + 1);
		size_t rlo = chunk_lo(count, n, rc), rhi = chunk_lo(count, n, rc + 1);
		err = hw_xfer(x, HW_RIGHT, data + slo, (shi - slo) * sizeof *data, HW_LEFT,
			      data + rlo, (rhi - rlo) * sizeof *data);
		if (err)
			return err;
	}
	return 0;
}
