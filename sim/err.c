/* Error table lookups and the abort path for broken invariants. */
#include "sim/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define SIM_ERR_MSG_(name, msg) [SIM_E##name - SIM_ERR_FIRST_] = msg,
static const char *const err_msg[] = { SIM_ERRNO_MAP(SIM_ERR_MSG_) };
#undef SIM_ERR_MSG_
#define SIM_ERR_NAME_(name, msg) [SIM_E##name - SIM_ERR_FIRST_] = "SIM_E" #name,
static const char *const err_name[] = { SIM_ERRNO_MAP(SIM_ERR_NAME_) };
#undef SIM_ERR_NAME_

static int err_index(int err)
{
	if (err <= SIM_ERR_FIRST_ || err >= SIM_ERR_LAST_)
		return -1;
	return err - SIM_ERR_FIRST_;
}

const char *sim_strerror(int err)
{
	int i = err_index(err);
	if (err == SIM_OK)
		return "success";
	return i < 0 ? "unknown error" : err_msg[i];
}

const char *sim_errname(int err)
{
	int i = err_index(err);
	if (err == SIM_OK)
		return "SIM_OK";
	return i < 0 ? "SIM_E?" : err_name[i];
}

/* A cut at byte i of s moved back (or forward) off the middle of a UTF-8
 * character, so that what is kept stays valid text. */
static size_t utf8_back(const char *s, size_t i)
{
	while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
		i--;
	return i;
}

static size_t utf8_fwd(const char *s, size_t i, size_t len)
{
	while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
		i++;
	return i;
}

void sim_vfit(char *buf, size_t n, const char *fmt, va_list ap)
{
	va_list again;
	char *full, mark[64];
	size_t len, head, tail_at, room;
	int k;
	if (!n)
		return;
	va_copy(again, ap);
	k = vsnprintf(buf, n, fmt, ap);
	if (k < 0 || (size_t)k < n || !(full = malloc((size_t)k + 1))) {
		va_end(again);
		return; /* it fits (or, out of memory, the plain cut) */
	}
	len = (size_t)k;
	vsnprintf(full, len + 1, fmt, again);
	va_end(again);
	/* the mark's length at the largest count it can say, so that the
	 * real one, no longer, fits the room it leaves */
	k = snprintf(mark, sizeof mark, " [... %zu bytes left out ...] ", len);
	if (k < 0 || (size_t)k + 32 >= n) {
		free(full);
		return; /* too small a buffer to keep both ends: the plain cut */
	}
	/* a third to the start, two to the end: the end says what was wrong
	 * and what to do, the start only whose message it is */
	room = n - 1 - (size_t)k;
	head = utf8_back(full, room / 3);
	tail_at = utf8_fwd(full, len - (room - room / 3), len);
	snprintf(mark, sizeof mark, " [... %zu bytes left out ...] ", tail_at - head);
	snprintf(buf, n, "%.*s%s%s", (int)head, full, mark, full + tail_at);
	free(full);
}

void sim_fit(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sim_vfit(buf, n, fmt, ap);
	va_end(ap);
}

int sim_errbuf(char *errbuf, size_t errlen, int err, const char *fmt, ...)
{
	va_list ap;
	if (errbuf && errlen) {
		va_start(ap, fmt);
		sim_vfit(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

void sim_die_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "%s:%d: fatal: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
