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
#include <string.h>

/* Times are non-negative (the engine's clock starts at 0). The field order
 * makes an entry, read as a little-endian 128-bit number, equal to
 * time * 2^64 + key: its rank. */
typedef struct pq_entry {
	uint64_t key;
	int64_t time;
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

/* Direct access for bulk edits (filtering stale entries, renumbering):
 * after changing entries or the count, call pq_heapify or pq_sort. */
pq_entry *pq_entries(pq *q);
void pq_truncate(pq *q, size_t n);
/* Restores heap order in O(n). */
void pq_heapify(pq *q);
/* Sorts ascending (a sorted array is also a valid heap). */
void pq_sort(pq *q);

/* Doubles the storage; 0 or SIM_ENOMEM. Called by pq_push when full. */
int pq_grow_(pq *q);

static inline size_t pq_size(const pq *q) { return q->n; }
/* The least entry, or NULL when empty. Valid until the next change. */
static inline const pq_entry *pq_top(const pq *q) { return q->n ? &q->a[0] : NULL; }

/* The hot paths are inline: the engine spends most of its time here.
 * (time, key) is compared as one unsigned 128-bit number, which the
 * compiler turns into a compare and a borrow, with no unpredictable branch
 * (a GCC/Clang extension, like the builtins below). */
static inline unsigned __int128 pq_rank_(const pq_entry *e)
{
	unsigned __int128 r;
	_Static_assert(sizeof(pq_entry) == sizeof r, "pq_entry is 16 bytes");
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&r, e, sizeof r);
#else
	r = (unsigned __int128)(uint64_t)e->time << 64 | e->key;
#endif
	return r;
}

/* Moves the hole at i up to where e belongs, never above index top. */
static inline void pq_sift_up_(pq_entry *a, size_t i, size_t top, pq_entry e)
{
	unsigned __int128 r = pq_rank_(&e);
	while (i > top) {
		size_t p = (i - 1) / 4;
		if (r >= pq_rank_(&a[p]))
			break;
		a[i] = a[p];
		i = p;
	}
	a[i] = e;
}

/* Removes the root's hole: Floyd's bottom-up variant. The hole walks down
 * to a leaf along the least children (a full sibling group picks its least
 * member with a two-round tournament of conditional moves), then e, the
 * old last entry, rises from there. e usually belongs near the bottom, so
 * this saves the comparison with e at every level of the descent.
 * The grandchildren of i are 16 consecutive entries (four cache lines):
 * fetching them while this level is compared hides most of the memory
 * latency of a heap larger than the caches. */
static inline void pq_sift_down_(pq_entry *a, size_t n, size_t i, pq_entry e)
{
	size_t top = i;
	for (;;) {
		size_t c = 4 * i + 1, m;
		if (16 * i + 20 < n) {
			__builtin_prefetch(&a[16 * i + 5]);
			__builtin_prefetch(&a[16 * i + 9]);
			__builtin_prefetch(&a[16 * i + 13]);
			__builtin_prefetch(&a[16 * i + 17]);
		}
		if (c + 4 <= n) {
			unsigned __int128 r0 = pq_rank_(&a[c]), r1 = pq_rank_(&a[c + 1]);
			unsigned __int128 r2 = pq_rank_(&a[c + 2]), r3 = pq_rank_(&a[c + 3]);
			size_t m1 = c + (r1 < r0), m2 = c + 2 + (r3 < r2);
			unsigned __int128 v1 = r1 < r0 ? r1 : r0, v2 = r3 < r2 ? r3 : r2;
			m = v2 < v1 ? m2 : m1;
		} else if (c < n) {
			m = c;
			for (size_t k = c + 1; k < n; k++)
				if (pq_rank_(&a[k]) < pq_rank_(&a[m]))
					m = k;
		} else {
			break;
		}
		a[i] = a[m];
		i = m;
	}
	pq_sift_up_(a, i, top, e);
}

/* Adds an entry (time >= 0). Returns 0, or SIM_ENOMEM (q unchanged). */
static inline int pq_push(pq *q, int64_t time, uint64_t key)
{
	if (q->n == q->cap) {
		int rc = pq_grow_(q);
		if (rc)
			return rc;
	}
	pq_sift_up_(q->a, q->n++, 0, (pq_entry){ .time = time, .key = key });
	return 0;
}

/* Removes the least entry into *out. Returns false when empty. */
static inline bool pq_pop(pq *q, pq_entry *out)
{
	if (!q->n)
		return false;
	*out = q->a[0];
	if (--q->n)
		pq_sift_down_(q->a, q->n, 0, q->a[q->n]);
	return true;
}

#endif
