/* Helpers shared by the dpusim subcommands. */
#include "tools/cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "report/db.h"
#include "report/report.h"
#include "sim/err.h"

static void verror(const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("dpusim: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
	return CLI_USAGE;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
}

int cli_path(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	char said[1024];
	int k;
	va_start(ap, fmt);
	k = vsnprintf(out, n, fmt, ap);
	va_end(ap);
	if (k >= 0 && (size_t)k < n)
		return 0;
	va_start(ap, fmt);
	sim_vfit(said, sizeof said, fmt, ap);
	va_end(ap);
	return cli_usage_error("'%s' would be named past the path limit (%zu bytes)", said, n - 1);
}

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	}
	return false;
}

/* Written as a person writes a number: strtod and strtoull also took
 * leading blanks, '+', hexadecimal ("--tolerance 0x10%" was 16%) and, for
 * doubles, inf and nan. */
static bool plain_number(const char *s, bool sign)
{
	if (sign && (*s == '-' || *s == '+'))
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return false;
	return (*s >= '0' && *s <= '9') || (sign && *s == '.' && s[1] >= '0' && s[1] <= '9');
}

bool cli_parse_u64(const char *s, unsigned long long *out)
{
	char *end;
	if (!s || !plain_number(s, false))
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno == 0 && *end == '\0';
}

void cli_test_stop_at(const char *var, const char *what, size_t i)
{
	const char *v = getenv(var);
	unsigned long long n;
	if (!v || !cli_parse_u64(v, &n) || n != i)
		return;
	fprintf(stderr, "dpusim: test hook: process %ld stops at %s %zu\n", (long)getpid(), what, i);
	fflush(stderr);
	raise(SIGSTOP);
}

bool cli_list_has_empty(const char *list)
{
	size_t n = list ? strlen(list) : 0;
	return !n || list[0] == ',' || list[n - 1] == ',' || strstr(list, ",,");
}

bool cli_parse_double(const char *s, double *out)
{
	char *end;
	if (!s || !plain_number(s, true))
		return false;
	errno = 0;
	*out = strtod(s, &end);
	return errno == 0 && *end == '\0' && isfinite(*out);
}

long cli_peak_rss_kb(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_maxrss;
}

double cli_wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A library call's outcome as a command's: its message (err) printed and
 * CLI_USAGE when it failed (rc != 0). */
static int said(int rc, const char *err)
{
	if (!rc)
		return CLI_OK;
	cli_error("%s", err);
	return CLI_USAGE;
}

int cli_read_report(const char *path, rep_report **r)
{
	char err[1024];
	return said(rep_read_file(path, r, err, sizeof err), err);
}

int cli_open_db_ro(const char *path, db **d)
{
	char err[1024];
	return said(db_open_ro(path, d, err, sizeof err), err);
}
