/* Atomic file writes (atomic.h). */
#include "tools/atomic.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/err.h"

static int fail(char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (errbuf && errlen) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return SIM_EIO;
}

int atomic_write_file(const char *path, atomic_writer *fn, const void *arg, char *errbuf,
		      size_t errlen)
{
	size_t n = strlen(path) + 32;
	char *tmp = malloc(n);
	FILE *f;
	int err;
	if (!tmp)
		return SIM_ENOMEM;
	snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
	if (!(f = fopen(tmp, "w"))) {
		err = fail(errbuf, errlen, "%s: cannot create: %s", tmp, strerror(errno));
		free(tmp);
		return err;
	}
	if ((err = fn(f, arg)) || fflush(f) || fsync(fileno(f)))
		err = err == SIM_ENOMEM ? err
					: fail(errbuf, errlen, "%s: write failed: %s", tmp, strerror(errno));
	if (fclose(f) && !err)
		err = fail(errbuf, errlen, "%s: close failed: %s", tmp, strerror(errno));
	if (!err && rename(tmp, path))
		err = fail(errbuf, errlen, "%s: cannot rename into place: %s", path, strerror(errno));
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}
