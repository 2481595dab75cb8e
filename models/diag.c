/* Error message list for loaders. */
#include "models/diag.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "models/units.h"
#include "sim/alloc.h"
#include "sim/err.h"

struct diag {
	char **msgs;
	size_t n, kept, cap;
};

diag *diag_new(void)
{
	return calloc(1, sizeof(diag));
}

void diag_free(diag *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->kept; i++)
		free(d->msgs[i]);
	free(d->msgs);
	free(d);
}

static int diag_push(diag *d, char *msg)
{
	if (sim_grow(&d->msgs, &d->cap, d->kept + 1, sizeof *d->msgs, 8))
		return free(msg), SIM_ENOMEM;
	d->msgs[d->kept++] = msg;
	return SIM_OK;
}

int diag_add(diag *d, const char *file, int line, int col, const char *fmt, ...)
{
	/* room for a path at PATH_MAX and its message; past it the middle
	 * is left out, never the end that says what was wrong (sim_vfit) */
	char body[8192], *msg;
	va_list ap;
	int n;
	d->n++;
	if (d->kept >= DIAG_MAX)
		return SIM_OK;
	va_start(ap, fmt);
	sim_vfit(body, sizeof body, fmt, ap);
	va_end(ap);
	if (!file)
		n = snprintf(NULL, 0, "%s", body);
	else if (line > 0)
		n = snprintf(NULL, 0, "%s:%d:%d: %s", file, line, col, body);
	else
		n = snprintf(NULL, 0, "%s: %s", file, body);
	msg = malloc((size_t)n + 1);
	if (!msg)
		return SIM_ENOMEM;
	if (!file)
		snprintf(msg, (size_t)n + 1, "%s", body);
	else if (line > 0)
		snprintf(msg, (size_t)n + 1, "%s:%d:%d: %s", file, line, col, body);
	else
		snprintf(msg, (size_t)n + 1, "%s: %s", file, body);
	return diag_push(d, msg);
}

size_t diag_count(const diag *d)
{
	return d ? d->n : 0;
}

const char *diag_msg(const diag *d, size_t i)
{
	return i < d->kept ? d->msgs[i] : "";
}

bool diag_placed(const char *m)
{
	for (const char *c = strchr(m, ':'); c; c = strchr(c + 1, ':')) {
		int line, col, end = 0;
		if (isdigit((unsigned char)c[1]) && sscanf(c, ":%d:%d: %n", &line, &col, &end) == 2 &&
		    end > 0 && line > 0)
			return true;
	}
	return false;
}

void diag_print(const diag *d, FILE *f)
{
	for (size_t i = 0; i < d->kept; i++)
		fprintf(f, "%s\n", d->msgs[i]);
	if (d->n > d->kept)
		fprintf(f, "(%zu more errors not shown)\n", d->n - d->kept);
}

const char *diag_suggest(const char *word, const char *const *cands, size_t n)
{
	size_t len = strlen(word);
	unsigned limit = len <= 3 ? 1 : len <= 6 ? 2 : 3, best = limit + 1;
	const char *pick = NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned dist = unit_edit_distance(word, cands[i]);
		if (dist < best) {
			best = dist;
			pick = cands[i];
		}
	}
	/* "H100" for "H100-SXM5": a unique candidate that starts with word. */
	for (size_t i = 0; !pick && len >= 3 && i < n; i++) {
		if (strncasecmp(cands[i], word, len))
			continue;
		for (size_t j = i + 1; j < n; j++)
			if (!strncasecmp(cands[j], word, len))
				return NULL;
		return cands[i];
	}
	return pick;
}
