/* dpusim-hw message helpers. */
#include "backend-hw/log.h"

#include <stdarg.h>
#include <stdio.h>

#include "sim/err.h"

static int log_rank = -1;

void hw_log_set_rank(int rank)
{
	log_rank = rank;
}

int hw_log_rank(void)
{
	return log_rank;
}

static void vlog(const char *level, const char *fmt, va_list ap)
{
	/* a path at PATH_MAX whole; past that the middle is left out, never
	 * the end that says what went wrong (sim_vfit) */
	char line[8192];
	int n;
	fflush(stdout);
	if (log_rank >= 0)
		n = snprintf(line, sizeof line, "dpusim-hw: rank %d: %s: ", log_rank, level);
	else
		n = snprintf(line, sizeof line, "dpusim-hw: %s: ", level);
	if (n > 0 && (size_t)n < sizeof line)
		sim_vfit(line + n, sizeof line - (size_t)n, fmt, ap);
	/* One write per message so ranks sharing a terminal do not interleave. */
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
}

void hw_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("error", fmt, ap);
	va_end(ap);
}

void hw_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("warning", fmt, ap);
	va_end(ap);
}

int hw_fail(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("error", fmt, ap);
	va_end(ap);
	return code;
}
