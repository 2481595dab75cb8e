/* Canonical text of a YAML value (models/canon.h): sorted keys, one
 * spelling per number, quoting where a scalar could be misread, and a
 * SHA-256 suffix where the text is long. */
#include "models/canon.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

/* Length of the decimal number s starts with ([+-] digits [. digits]
 * [e [+-] digits]), 0 when none; *integer when it has no point or exponent. */
static size_t decimal_len(const char *s, bool *integer)
{
	const char *p = s, *e;
	size_t digits = 0;
	*integer = true;
	p += *p == '+' || *p == '-';
	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p == '.') {
		*integer = false;
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	}
	if (!digits)
		return 0;
	e = p;
	if (*e == 'e' || *e == 'E') {  /* an exponent only with digits: "1EB" is 1 exabyte */
		e++;
		e += *e == '+' || *e == '-';
		if (*e >= '0' && *e <= '9') {
			*integer = false;
			for (p = e; *p >= '0' && *p <= '9'; p++)
				;
		}
	}
	return (size_t)(p - s);
}

/* A unit after a number: letters, '/' and '%' ("Gbps", "GB/s", "ms/sample"). */
static bool is_unit(const char *s)
{
	return !*s || strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/%") == strlen(s);
}

/* A number, bare or with a unit ("1.0us" is "1us"; the unit as written).
 * Integers stay text (a 20-digit seed does not fit a double): sign and
 * leading zeros dropped. Others: the shortest %g that reads back the same
 * double, whole values below 1e15 without an exponent. */
static bool put_number(FILE *f, const char *s)
{
	bool integer;
	size_t len = decimal_len(s, &integer);
	char num[64], buf[40];
	double x;
	if (!len || len >= sizeof num || !is_unit(s + len))
		return false;
	snprintf(num, sizeof num, "%.*s", (int)len, s);
	if (integer) {
		const char *d = num + (num[0] == '+' || num[0] == '-');
		bool neg = num[0] == '-';
		d += strspn(d, "0");
		fprintf(f, "%s%s%s", neg && *d ? "-" : "", *d ? d : "0", s + len);
		return true;
	}
	x = strtod(num, NULL);
	if (!isfinite(x))
		return false;  /* 1e999: kept as written */
	if (x == 0)
		x = 0;  /* -0.0 is 0 */
	if (x == floor(x) && fabs(x) < 1e15) {
		fprintf(f, "%.0f%s", x, s + len);
		return true;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, sizeof buf, "%.*g", p, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fprintf(f, "%s%s", buf, s + len);
	return true;
}

static bool needs_quotes(const char *s)
{
	size_t len = strlen(s);
	if (!len || !strcmp(s, "null") || s[0] == ' ' || s[len - 1] == ' ')
		return true;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f || strchr(",:{}[]\"'#\\", *p))
			return true;
	return false;
}

static void put_text(FILE *f, const char *s)
{
	if (!needs_quotes(s)) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(const yt_node *const *)a)->key, (*(const yt_node *const *)b)->key);
}

static bool put_value(FILE *f, const yt_node *v);

static bool put_map(FILE *f, const yt_node *v)
{
	const yt_node **kids = malloc((v->nkids ? v->nkids : 1) * sizeof *kids);
	bool ok = kids != NULL;
	if (!ok)
		return false;
	if (v->nkids) /* an empty mapping has no kids array: memcpy(NULL) is undefined */
		memcpy(kids, v->kids, v->nkids * sizeof *kids);
	qsort(kids, v->nkids, sizeof *kids, by_key);
	fputc('{', f);
	for (size_t i = 0; i < v->nkids && ok; i++) {
		fputs(i ? ", " : "", f);
		put_text(f, kids[i]->key);
		fputs(": ", f);
		ok = put_value(f, kids[i]);
	}
	fputc('}', f);
	free(kids);
	return ok;
}

static bool put_value(FILE *f, const yt_node *v)
{
	bool ok = true;
	switch (v->type) {
	case YT_NULL:
		fputs("null", f);
		break;
	case YT_SCALAR:
		if (!put_number(f, v->text))
			put_text(f, v->text);
		break;
	case YT_SEQ:
		fputc('[', f);
		for (size_t i = 0; i < v->nkids && ok; i++) {
			fputs(i ? ", " : "", f);
			ok = put_value(f, v->kids[i]);
		}
		fputc(']', f);
		break;
	case YT_MAP:
		ok = put_map(f, v);
		break;
	}
	return ok;
}

/* Where the text is long: its first CANON_CUT bytes (not splitting a UTF-8
 * character), "...#" and 16 hex digits of its SHA-256. */
static void cut_with_hash(const char *text, size_t len, char *buf, size_t n)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	size_t cut = CANON_CUT;
	int k;
	while (cut > 0 && ((unsigned char)text[cut] & 0xc0) == 0x80)
		cut--;
	k = snprintf(buf, n, "%.*s...#", (int)cut, text);
	if (!EVP_Digest(text, len, md, &mdlen, EVP_sha256(), NULL) || mdlen < 8)
		return (void)snprintf(buf, n, "%s", "");
	for (unsigned i = 0; i < 8 && k > 0 && (size_t)k + 2 < n; i++, k += 2)
		snprintf(buf + k, n - (size_t)k, "%02x", md[i]);
}

char *canon_value(const yt_node *v, char *buf, size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	bool ok = f && put_value(f, v);
	if (f && fclose(f))
		ok = false;
	buf[0] = '\0';
	if (ok && len <= CANON_MAX)
		snprintf(buf, n, "%s", text);
	else if (ok)
		cut_with_hash(text, len, buf, n);
	free(text);
	return buf;
}
