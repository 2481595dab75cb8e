/* Writing a file so that it is either whole or absent: into a temporary
 * next to it, flushed and synced, then renamed into place. Reports, traces
 * and calibrated profiles all go through here. */
#ifndef DPUSIM_TOOLS_ATOMIC_H
#define DPUSIM_TOOLS_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

/* Writes the whole content to f; 0, or a SIM_E* code (SIM_ENOMEM is passed
 * through as is; any other failure is reported as a write failure). */
typedef int atomic_writer(FILE *f, const void *arg);

/* Writes path with fn(f, arg). On any failure the temporary is removed,
 * path is untouched, and errbuf (errlen bytes) says what failed. Returns 0,
 * SIM_ENOMEM, or SIM_EIO. */
int atomic_write_file(const char *path, atomic_writer *fn, const void *arg, char *errbuf,
		      size_t errlen);

#endif
