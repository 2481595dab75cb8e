/* Numbers for people, in the text tables: a unit that fits the size (s, min,
 * h, days; us, ms; KiB..GiB), thousands separators, never an exponent.
 * --json and the database keep full precision; only text goes through here. */
#ifndef DPUSIM_TOOLS_HUMAN_H
#define DPUSIM_TOOLS_HUMAN_H

#include <stddef.h>
#include <stdint.h>

/* Each writes at most n bytes (always terminated) into buf and returns buf;
 * a value that is not finite is written "-". */

/* About four significant digits, thousands separators from 1,000 up:
 * "41.31", "243.7", "169,220", "0.0123". */
char *hum_number(char *buf, size_t n, double x);

/* A duration in the unit that fits: "0 s", "850 ns", "372.7 us", "35.47 ms",
 * "1.549 s", "3.25 min" (from 2 min), "5.4 h" (from 2 h), "12.35 days"
 * (from 2 days; "1,234 days"). */
char *hum_duration(char *buf, size_t n, double s);

/* Dollars: "$1,234,567" from $1,000 up, "$12.35" below. */
char *hum_usd(char *buf, size_t n, double usd);

/* A size in binary units: "4 KiB", "64 MiB", "1 GiB" when exact, else about
 * four significant digits ("197 MiB"); under 1 KiB "1000 B". */
char *hum_bytes(char *buf, size_t n, uint64_t bytes);

/* A fraction as a percentage with one decimal: "62.8%". */
char *hum_percent(char *buf, size_t n, double fraction);

#endif
