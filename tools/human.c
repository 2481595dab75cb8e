/* Numbers for people in the text tables (see human.h): what a reader scans
 * for is the size and the unit, so no exponents and no bare seconds for a
 * week-long run. */
#include "tools/human.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Digits of a non-negative whole number with a comma every three. */
static void grouped(char *buf, size_t n, double whole)
{
	char digits[64], out[96];
	size_t len, k = 0;
	snprintf(digits, sizeof digits, "%.0f", whole);
	len = strlen(digits);
	for (size_t i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = digits[i];
	}
	out[k] = '\0';
	snprintf(buf, n, "%s", out);
}

char *hum_number(char *buf, size_t n, double x)
{
	double a = fabs(x);
	char body[96];
	if (!isfinite(x))
		return snprintf(buf, n, "-"), buf;
	if (a >= 999.95) {
		grouped(body, sizeof body, round(a));
	} else if (a >= 1 || a == 0) {
		snprintf(body, sizeof body, "%.4g", a);
	} else {
		/* Below 1: three significant digits as a plain decimal. */
		int decimals = 2 - (int)floor(log10(a));
		size_t len;
		snprintf(body, sizeof body, "%.*f", decimals > 12 ? 12 : decimals, a);
		len = strlen(body);      /* "0.500" reads as "0.5" */
		while (len > 1 && body[len - 1] == '0')
			body[--len] = '\0';
		if (body[len - 1] == '.')
			body[--len] = '\0';
	}
	snprintf(buf, n, "%s%s", x < 0 && strcmp(body, "0") ? "-" : "", body);
	return buf;
}

char *hum_duration(char *buf, size_t n, double s)
{
	static const struct { double min_s, per; const char *unit; } units[] = {
		{ 2 * 86400, 86400, "days" }, { 2 * 3600, 3600, "h" }, { 120, 60, "min" },
		{ 1, 1, "s" }, { 1e-3, 1e-3, "ms" }, { 1e-6, 1e-6, "us" }, { 0, 1e-9, "ns" },
	};
	char num[64];
	if (!isfinite(s))
		return snprintf(buf, n, "-"), buf;
	if (s == 0)
		return snprintf(buf, n, "0 s"), buf;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (fabs(s) >= units[i].min_s || i + 1 == sizeof units / sizeof units[0]) {
			snprintf(buf, n, "%s %s", hum_number(num, sizeof num, s / units[i].per),
				 units[i].unit);
			break;
		}
	return buf;
}

char *hum_usd(char *buf, size_t n, double usd)
{
	char num[64];
	if (!isfinite(usd))
		return snprintf(buf, n, "-"), buf;
	if (fabs(usd) >= 999.995)
		grouped(num, sizeof num, round(fabs(usd)));
	else
		snprintf(num, sizeof num, "%.2f", fabs(usd));
	snprintf(buf, n, "%s$%s", usd < 0 ? "-" : "", num);
	return buf;
}

char *hum_bytes(char *buf, size_t n, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	size_t u = 0;
	char num[64];
	if (bytes < 1024)
		return snprintf(buf, n, "%llu B", (unsigned long long)bytes), buf;
	v /= 1024;
	while (v >= 1024 && u + 1 < sizeof units / sizeof units[0])
		v /= 1024, u++;
	if (v == floor(v))
		snprintf(num, sizeof num, "%.0f", v);
	else
		hum_number(num, sizeof num, v);
	snprintf(buf, n, "%s %s", num, units[u]);
	return buf;
}

char *hum_percent(char *buf, size_t n, double fraction)
{
	if (!isfinite(fraction))
		return snprintf(buf, n, "-"), buf;
	snprintf(buf, n, "%.1f%%", 100 * fraction);
	return buf;
}
