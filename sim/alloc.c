/* The allocation-failure hook (alloc.h). */
#include "sim/alloc.h"

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
