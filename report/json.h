/* JSON text shared by every writer: the report, traces, compare's output
 * and dpusim-hw's records. */
#ifndef DPUSIM_REPORT_JSON_H
#define DPUSIM_REPORT_JSON_H

#include <stdio.h>

/* s as a JSON string, quotes included: " and \ escaped, control
 * characters as \u00XX, other bytes (UTF-8 included) as they are. */
void json_put_str(FILE *f, const char *s);

#endif
