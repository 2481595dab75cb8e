/* The allocation-failure hook (alloc.h). */
#include "sim/alloc.h"

#include <stdint.h>
#include <string.h>

#include "sim/err.h"

static long alloc_budget = -1; /* allocations left before failing; -1: no limit */

void sim_test_fail_alloc_after(long n)
{
	alloc_budget = n;
}

bool sim_alloc_ok(void)
{
	if (alloc_budget < 0)
		return true;
	if (alloc_budget == 0)
		return false;
	alloc_budget--;
	return true;
}

int sim_grow(void *arrp, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t c = *cap ? *cap : first;
	void *arr, *p;
	if (need <= *cap)
		return 0;
	while (c < need && c <= SIZE_MAX / 2)
		c *= 2;
	if (c < need || !elem || c > SIZE_MAX / elem)
		return SIM_ENOMEM;
	/* through memcpy: arrp points at a T *, not at a void * */
	memcpy(&arr, arrp, sizeof arr);
	if (!(p = sim_realloc(arr, c * elem)))
		return SIM_ENOMEM;
	memcpy(arrp, &p, sizeof p);
	*cap = c;
	return 0;
}

int sim_grow_u32(void *arrp, uint32_t *cap, uint32_t need, size_t elem, uint32_t first)
{
	size_t c = *cap;
	if (need <= *cap)
		return 0;
	if (need > (uint32_t)1 << 31 || sim_grow(arrp, &c, need, elem, first))
		return SIM_ENOMEM;
	*cap = (uint32_t)c;
	return 0;
}
