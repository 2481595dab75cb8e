/* Priority queue of (time, key) pairs: a 4-ary implicit heap whose sibling
 * groups sit on one 64-byte cache line. Ordering is total and does not
 * depend on pointers: time first, then key (the engine packs its insertion
 * sequence into the key's high bits). The struct is public because the
 * engine embeds it; treat its fields as private. */
#ifndef DPUSIM_SIM_PQ_H
#define DPUSIM_SIM_PQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pq_entry {
	int64_t time;
	uint64_t key;
} pq_entry;

typedef struct pq {
	pq_entry *a;   /* a[0] is the root; aligned so a[4i+1..4i+4] share a line */
	void *mem;     /* allocation that a points into */
	size_t n, cap;
} pq;

/* An empty queue; no allocation until the first push. */
void pq_init(pq *q);
/* Frees the storage; q may be re-initialised. */
void pq_release(pq *q);

/* Adds an entry. Returns 0, or SIM_ENOMEM (q unchanged). */
int pq_push(pq *q, int64_t time, uint64_t key);
/* Removes the least entry into *out. Returns false when empty. */
bool pq_pop(pq *q, pq_entry *out);

static inline size_t pq_size(const pq *q) { return q->n; }
/* The least entry, or NULL when empty. Valid until the next change. */
static inline const pq_entry *pq_top(const pq *q) { return q->n ? &q->a[0] : NULL; }

/* Direct access for bulk edits (filtering stale entries, renumbering):
 * after changing entries or the count, call pq_heapify or pq_sort. */
pq_entry *pq_entries(pq *q);
void pq_truncate(pq *q, size_t n);
/* Restores heap order in O(n). */
void pq_heapify(pq *q);
/* Sorts ascending (a sorted array is also a valid heap). */
void pq_sort(pq *q);

#endif
