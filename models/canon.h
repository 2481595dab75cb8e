/* Canonical text of a YAML value, for the labels that identify sweep
 * points (in reports, the results database's key, resume and plots): two
 * values get the same text only when they are the same value. */
#ifndef DPUSIM_MODELS_CANON_H
#define DPUSIM_MODELS_CANON_H

#include <stddef.h>

#include "models/ytree.h"

/* Longest canonical text kept whole; a longer one is cut and ends in a
 * hash of the whole (CANON_CUT bytes of it, "...#", 16 hex digits). */
#define CANON_MAX 80
#define CANON_CUT 48

/* Writes v's canonical text into buf (n bytes, at least CANON_MAX + 1):
 * flow style, mapping keys sorted bytewise, decimal numbers written one
 * way, bare or before a unit ("1e3", "1000.0" and "+1000" are "1000";
 * "0.50" is "0.5"; "1.0us" is "1us"),
 * null as `null`, and a scalar that could be read otherwise ("null", empty,
 * holding `,:{}[]"'#\` or control characters, or edge spaces) in double
 * quotes with escapes. Returns buf; "" when out of memory. */
char *canon_value(const yt_node *v, char *buf, size_t n);

#endif
