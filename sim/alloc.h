/* Allocation with a failure hook for tests. Modules that allocate through
 * these can be made to fail after n more allocations, so a test reaches
 * each out-of-memory path and checks it returns SIM_ENOMEM (or fails its
 * engine with it) and leaks nothing, as SQLite's mallocFailed tests do.
 * The budget is process-wide and not thread-safe: for tests only. */
#ifndef DPUSIM_SIM_ALLOC_H
#define DPUSIM_SIM_ALLOC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* After n more allocations through sim_malloc and friends, each fails;
 * n < 0 removes the limit (the default). */
void sim_test_fail_alloc_after(long n);

/* Whether the next allocation may go ahead (counts it). */
bool sim_alloc_ok(void);

static inline void *sim_malloc(size_t size)
{
	return sim_alloc_ok() ? malloc(size) : NULL;
}

static inline void *sim_calloc(size_t n, size_t size)
{
	return sim_alloc_ok() ? calloc(n, size) : NULL;
}

static inline void *sim_realloc(void *p, size_t size)
{
	return sim_alloc_ok() ? realloc(p, size) : NULL;
}

/* Makes room for `need` elements of `elem` bytes in the array whose
 * address is at arrp (a T ** for any T), of capacity *cap: doubles it
 * (from `first` when empty) through sim_realloc. 0, or SIM_ENOMEM with the
 * array and *cap as they were. The one growth rule of every list. */
int sim_grow(void *arrp, size_t *cap, size_t need, size_t elem, size_t first);

/* The same for a 32-bit capacity (the engine's and collectives' lists):
 * SIM_ENOMEM also when the doubled capacity would not fit (need > 2^31). */
int sim_grow_u32(void *arrp, uint32_t *cap, uint32_t need, size_t elem, uint32_t first);

#endif
