/* 4-ary heap storage and bulk operations; the per-event paths are inline
 * in pq.h. Sifting moves a hole: the moving entry is written once, at its
 * final place, and each level reads one cache line of four children. */
#include "sim/pq.h"

#include <stdlib.h>
#include <string.h>

#include "sim/err.h"

#define PQ_LINE 64

void pq_init(pq *q)
{
	*q = (pq){ 0 };
}

void pq_release(pq *q)
{
	free(q->mem);
	*q = (pq){ 0 };
}

/* Entries are 16 bytes; placing a[0] 48 bytes past a line boundary puts
 * a[1], a[5], a[9]... (each group of four siblings) at line starts. */
int pq_grow_(pq *q)
{
	size_t cap = q->cap ? q->cap * 2 : 256;
	size_t bytes = cap * sizeof(pq_entry) + 2 * PQ_LINE;
	void *mem;
	pq_entry *a;
	if (cap > SIZE_MAX / sizeof(pq_entry) / 2)
		return SIM_ENOMEM;
	mem = aligned_alloc(PQ_LINE, (bytes + PQ_LINE - 1) / PQ_LINE * PQ_LINE);
	if (!mem)
		return SIM_ENOMEM;
	a = (pq_entry *)((char *)mem + PQ_LINE - sizeof(pq_entry));
	if (q->n)
		memcpy(a, q->a, q->n * sizeof(pq_entry));
	free(q->mem);
	q->mem = mem;
	q->a = a;
	q->cap = cap;
	return SIM_OK;
}

pq_entry *pq_entries(pq *q)
{
	return q->a;
}

void pq_truncate(pq *q, size_t n)
{
	SIM_ASSERT(n <= q->n, "pq_truncate to %zu beyond size %zu", n, q->n);
	q->n = n;
}

void pq_heapify(pq *q)
{
	if (q->n < 2)
		return;
	for (size_t i = (q->n - 2) / 4 + 1; i-- > 0;)
		pq_sift_down_(q->a, q->n, i, q->a[i]);
}

static int cmp_entry(const void *x, const void *y)
{
	unsigned __int128 a = pq_rank_(x), b = pq_rank_(y);
	return a < b ? -1 : a > b;
}

void pq_sort(pq *q)
{
	if (q->n > 1)
		qsort(q->a, q->n, sizeof(pq_entry), cmp_entry);
}
