/* A minimal streaming JSON writer for dpusim-hw's own outputs (probe --json):
 * the caller writes structure, this quotes strings and formats numbers. */
#ifndef DPUSIM_HW_JSON_H
#define DPUSIM_HW_JSON_H

#include <stdio.h>

/* Writes s as a JSON string literal (quotes, escapes, control characters). */
void hw_json_str(FILE *f, const char *s);
/* Writes "key": with the key escaped; `first` false puts a comma before it. */
void hw_json_key(FILE *f, const char *key, int first);
/* A finite double in round-trip form; a non-finite one as null. */
void hw_json_num(FILE *f, double v);

#endif
