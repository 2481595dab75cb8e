/* A list of error messages, each "file:line:column: message", so a loader can
 * report every problem it finds rather than stopping at the first. */
#ifndef DPUSIM_MODELS_DIAG_H
#define DPUSIM_MODELS_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct diag diag;

/* Most messages kept; later ones are counted and summarised in one line. */
#define DIAG_MAX 200

/* A new, empty list, or NULL when out of memory. Free with diag_free. */
diag *diag_new(void);
/* Frees d and its messages; NULL is a no-op. */
void diag_free(diag *d);

/* Adds "file:line:col: message" (line/col 0: omitted; file NULL: message
 * only). Returns 0 or SIM_ENOMEM (the message is then lost). */
int diag_add(diag *d, const char *file, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Number of messages added (including those past DIAG_MAX). */
size_t diag_count(const diag *d);
/* Message i (i < DIAG_MAX and < diag_count), owned by d. */
const char *diag_msg(const diag *d, size_t i);
/* Whether message m names its place: "file:line:col: ...". */
bool diag_placed(const char *m);

/* Prints every kept message on its own line, then a summary line when some
 * were dropped. */
void diag_print(const diag *d, FILE *f);

/* The candidate closest to word by edit distance when close enough to be a
 * likely typo (distance 1 for short words, up to 3 for long ones), or the
 * one candidate that starts with word (3+ characters), else NULL. For "did you mean" hints. */
const char *diag_suggest(const char *word, const char *const *cands, size_t n);

#endif
