/* 4-ary heap with "hole" sifting: the moving entry is written once, at its
 * final place, and each level reads one cache line of four children. */
#include "sim/pq.h"

#include <stdlib.h>
#include <string.h>

#include "sim/err.h"

#define PQ_LINE 64

static inline bool less(const pq_entry *x, const pq_entry *y)
{
	return x->time < y->time || (x->time == y->time && x->key < y->key);
}

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
static int grow(pq *q)
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

static void sift_up(pq_entry *a, size_t i, pq_entry e)
{
	while (i > 0) {
		size_t p = (i - 1) / 4;
		if (!less(&e, &a[p]))
			break;
		a[i] = a[p];
		i = p;
	}
	a[i] = e;
}

static void sift_down(pq_entry *a, size_t n, size_t i, pq_entry e)
{
	for (;;) {
		size_t c = 4 * i + 1, best, end;
		if (c >= n)
			break;
		best = c;
		end = c + 4 < n ? c + 4 : n;
		for (size_t k = c + 1; k < end; k++)
			if (less(&a[k], &a[best]))
				best = k;
		if (!less(&a[best], &e))
			break;
		a[i] = a[best];
		i = best;
	}
	a[i] = e;
}

int pq_push(pq *q, int64_t time, uint64_t key)
{
	if (q->n == q->cap) {
		int rc = grow(q);
		if (rc)
			return rc;
	}
	sift_up(q->a, q->n++, (pq_entry){ .time = time, .key = key });
	return SIM_OK;
}

bool pq_pop(pq *q, pq_entry *out)
{
	if (!q->n)
		return false;
	*out = q->a[0];
	if (--q->n)
		sift_down(q->a, q->n, 0, q->a[q->n]);
	return true;
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
		sift_down(q->a, q->n, i, q->a[i]);
}

static int cmp_entry(const void *x, const void *y)
{
	const pq_entry *a = x, *b = y;
	if (less(a, b))
		return -1;
	return less(b, a) ? 1 : 0;
}

void pq_sort(pq *q)
{
	if (q->n > 1)
		qsort(q->a, q->n, sizeof(pq_entry), cmp_entry);
}
