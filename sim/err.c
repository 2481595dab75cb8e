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

int sim_errbuf(char *errbuf, size_t errlen, int err, const char *fmt, ...)
{
	va_list ap;
	if (errbuf && errlen) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
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
