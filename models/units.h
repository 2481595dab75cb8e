/* Strict parsing of quantities with units ("400Gbps", "64MiB", "1.5us") into
 * SI doubles, one dimension at a time, and formatting back. The grammar is
 * documented in docs/scenarios.md ("Quantities and units"). */
#ifndef DPUSIM_MODELS_UNITS_H
#define DPUSIM_MODELS_UNITS_H

#include <stdbool.h>
#include <stddef.h>

/* What a value measures, and the SI unit it is stored in. */
typedef enum unit_dim {
	UNIT_COUNT,             /* integer, no unit */
	UNIT_NUMBER,            /* real, no unit */
	UNIT_FRACTION,          /* 15% or 0.15, stored as 0.15 */
	UNIT_BYTES,             /* B */
	UNIT_BYTES_PER_S,       /* B/s (bit rates are divided by 8) */
	UNIT_SECONDS,           /* s */
	UNIT_HZ,                /* Hz */
	UNIT_FLOP,              /* FLOP */
	UNIT_FLOP_PER_S,        /* FLOP/s */
	UNIT_PER_S,             /* events per second: packets, IOs, messages */
	UNIT_S_PER_SAMPLE,      /* s/sample */
	UNIT_CYCLES_PER_BYTE,   /* cycles/byte */
	UNIT_CYCLES_PER_PACKET, /* cycles/packet */
	UNIT_CYCLES_PER_SAMPLE, /* cycles/sample */
	UNIT_WATTS,             /* W */
	UNIT_USD,               /* USD */
	UNIT_USD_PER_S,         /* USD/s (written USD/h) */
	UNIT_USD_PER_J,         /* USD/J (written USD/kWh) */
	UNIT_NDIMS
} unit_dim;

/* Why a parse failed, split so callers can place the key between the two:
 * "<msg> in 'link' (<hint>)". hint is "" when there is nothing to suggest. */
typedef struct unit_err {
	char msg[160];
	char hint[96];
} unit_err;

/* Parses s (a whole string: number, optional blanks, unit) as a quantity of
 * dimension dim into *out, in the SI unit above. Returns 0, SIM_EPARSE (not
 * a number), SIM_EUNIT (missing, unknown or wrong-dimension unit) or
 * SIM_ERANGE (a count beyond 2^53 that a double cannot hold exactly: *out
 * is then the rounded value, for a range message), and on error fills *err
 * (may be NULL). Counts must be whole; any size passes (1e300 is whole), so
 * range checks are the caller's, and its message names the range. */
int unit_parse(const char *s, unit_dim dim, double *out, unit_err *err);

/* Parses s as a whole number from 0 to 2^64-1 into *out: digits exactly (no
 * double in between), or a count such as 1e6 held exactly. 0, SIM_EPARSE
 * or SIM_ERANGE (negative, above 2^64-1, or inexact), with *err filled. */
int unit_parse_u64(const char *s, unsigned long long *out, unit_err *err);

/* Parses true/false (also yes/no, on/off) into *out. 0 or SIM_EPARSE. */
int unit_parse_bool(const char *s, bool *out, unit_err *err);

/* Formats v in the SI unit of dim so that unit_parse reads back exactly v
 * ("5e+10B/s", "0.15", "8"). Returns buf; needs at most 48 bytes. */
char *unit_format(double v, unit_dim dim, char *buf, size_t n);

/* "a data rate", "a size"...: the dimension in words, for messages. */
const char *unit_dim_name(unit_dim dim);
/* "400Gbps or 25GB/s": examples of valid values, for messages. */
const char *unit_dim_example(unit_dim dim);
/* The SI unit symbol values are stored in ("B/s"; "" for plain numbers). */
const char *unit_dim_si(unit_dim dim);

/* Levenshtein distance between a and b (both NUL-terminated), capped at
 * 255; used for "did you mean" suggestions everywhere. */
unsigned unit_edit_distance(const char *a, const char *b);

#endif
