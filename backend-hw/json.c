/* Minimal JSON writer helpers. */
#include "backend-hw/json.h"

#include <math.h>
#include <stdlib.h>

#include "report/json.h"

/* The one JSON string escaper (report/json.h). */
void hw_json_str(FILE *f, const char *s)
{
	json_put_str(f, s);
}

void hw_json_key(FILE *f, const char *key, int first)
{
	if (!first)
		fputc(',', f);
	hw_json_str(f, key);
	fputc(':', f);
}

void hw_json_num(FILE *f, double v)
{
	char buf[32];
	if (isfinite(v)) {
		/* Shortest of 15 or 17 digits that reads back as the same double. */
		snprintf(buf, sizeof buf, "%.15g", v);
		if (strtod(buf, NULL) != v)
			snprintf(buf, sizeof buf, "%.17g", v);
		fputs(buf, f);
	}
	else
		fputs("null", f);
}
