/* Minimal JSON writer helpers. */
#include "backend-hw/json.h"

#include <math.h>
#include <stdlib.h>

void hw_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
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
