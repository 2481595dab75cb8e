/* Conversions and checked arithmetic on picosecond time. */
#include "sim/time.h"

#include <math.h>
#include <stdio.h>

#include "sim/err.h"

int sim_time_from_s(double s, sim_time *out)
{
	double ps = s * 1e12;
	if (!isfinite(ps) || ps >= 9.2233720368547748e18)
		return SIM_EOVERFLOW;
	if (ps < 0)
		return SIM_ERANGE;
	*out = (sim_time)llround(ps);
	return SIM_OK;
}

double sim_horizon_days(void)
{
	return (double)SIM_TIME_MAX * 1e-12 / 86400;
}

double sim_time_to_s(sim_time t)
{
	/* Split so that large times keep their picoseconds. */
	return (double)(t / SIM_S) + (double)(t % SIM_S) * 1e-12;
}

char *sim_time_format(sim_time t, char *buf, size_t n)
{
	static const struct { sim_time scale; const char *name; } units[] = {
		{ SIM_S, "s" }, { SIM_MS, "ms" }, { SIM_US, "us" },
		{ SIM_NS, "ns" }, { SIM_PS, "ps" },
	};
	sim_time mag = t < 0 ? -t : t;
	size_t i = 0;
	if (t == 0) {
		snprintf(buf, n, "0 s");
		return buf;
	}
	while (i + 1 < sizeof units / sizeof units[0] && mag < units[i].scale)
		i++;
	snprintf(buf, n, "%.6g %s", (double)t / (double)units[i].scale, units[i].name);
	return buf;
}
