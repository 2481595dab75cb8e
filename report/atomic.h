/* Writing files safely: either whole or absent, never through a planted
 * link, never over one of the command's own inputs, and temporaries that
 * do not outlive an interrupted command. Reports, traces, calibrated
 * profiles and pictures all go through here; so does the check that
 * standard output was written. */
#ifndef DPUSIM_REPORT_ATOMIC_H
#define DPUSIM_REPORT_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <spawn.h>
#include <sys/types.h>

/* Writes the whole content to f; 0, or a SIM_E* code (SIM_ENOMEM is passed
 * through as is; any other failure is reported as a write failure). */
typedef int atomic_writer(FILE *f, const void *arg);

/* Writes path with fn(f, arg): into a new temporary beside it (created
 * exclusively, so a link planted there is never followed), flushed and
 * synced, renamed into place, the folder synced. On any failure the
 * temporary is removed, path is untouched, and errbuf (errlen bytes) says
 * what failed. Refuses a path that is an input of this command
 * (atomic_check_target). Returns 0, SIM_ENOMEM, SIM_EEXIST
 * (refused) or SIM_EIO. */
int atomic_write_file(const char *path, atomic_writer *fn, const void *arg, char *errbuf,
		      size_t errlen);

/* ---- inputs of this command ---- */

/* Records path (by device and inode, so any other name of the same file
 * matches too) as an input of this command: no output may replace it. A
 * path that does not exist is ignored. 0 or SIM_ENOMEM. */
int atomic_protect_input(const char *path);
/* Records every regular file directly in folder dir as an input (a
 * profile folder: what a sweep point may read). 0 or SIM_ENOMEM; a folder
 * that cannot be read is ignored. */
int atomic_protect_dir(const char *dir);
/* 0 when path may be written: it does not exist, or it is no input of this
 * command. Otherwise SIM_EEXIST with the reason in errbuf. */
int atomic_check_target(const char *path, char *errbuf, size_t errlen);
/* The folder that holds path, into dir (n bytes): "." for a bare name, "/"
 * for one in the root. */
void atomic_dir_of(const char *path, char *dir, size_t n);

/* ---- temporaries for files another program writes (gnuplot) ---- */

/* Creates an empty temporary beside path (PATH.tmp.XXXXXX, exclusively,
 * mode 0666 less the umask) and writes its name to tmp (tmplen bytes).
 * Until atomic_commit or atomic_temp_drop it is removed if the command is
 * interrupted (SIGINT, SIGTERM, SIGHUP). 0, SIM_EEXIST (path refused, see
 * atomic_check_target) or SIM_EIO, with errbuf set. */
int atomic_temp_create(const char *path, char *tmp, size_t tmplen, char *errbuf, size_t errlen);
/* Syncs tmp and renames it to path (then syncs the folder); on failure
 * removes tmp. 0, SIM_EEXIST (path refused) or SIM_EIO with errbuf set. */
int atomic_commit(const char *tmp, const char *path, char *errbuf, size_t errlen);
/* Removes tmp (if it still exists) and forgets it. */
void atomic_temp_drop(const char *tmp);
/* Removes every registered temporary: what the signal handler does, for
 * error paths that end the command. */
void atomic_temp_drop_all(void);
/* Registers an existing temporary file or (empty at the end) folder for
 * removal on interruption, as atomic_temp_create does. 0 or SIM_ENOMEM (too
 * many at once). */
int atomic_temp_register(const char *path, bool is_dir);

/* Starts the child process (gnuplot) that writes into the registered
 * temporaries, as posix_spawnp does (file searched in PATH, argv, this
 * process's environment, fa may be NULL), and records it: on interruption it
 * is killed and reaped before they are removed, so it cannot create one
 * again. The handled signals are blocked from before the start until the
 * child is recorded, so a signal in between waits for the record instead of
 * leaving the child running; the child starts with the caller's mask. 0 or
 * posix_spawnp's error number. */
int atomic_temp_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		       char *const argv[]);
/* Waits for that child to end (its wait status into *status) and forgets
 * it before it is reaped, so the handler never kills a reused process id.
 * 0 or the error number of waitid/waitpid. */
int atomic_temp_wait(pid_t pid, int *status);

/* In a forked worker (tools/forks.c, the sweep's, bench scale's), first
 * thing, with the parent's process id from before the fork:
 * - it owns none of the temporaries its parent registered, so that a
 *   worker stopped by a signal (the parent ending the others when one
 *   fails) removes only its own, never the files the parent is still
 *   writing;
 * - it ends (SIGTERM, so its own temporaries go) when its parent does: a
 *   parent stopped alone (timeout(1), a batch system's kill, `kill PID`)
 *   leaves no worker computing on for minutes. SIGTERM is made to end it
 *   even where the parent's caller ignores it. */
void atomic_worker_init(pid_t parent);

/* ---- standard output ---- */

/* Flushes and closes standard output; on any write error (a full disk,
 * /dev/full) prints "PROG: error: ..." on stderr and returns 2, else rc.
 * Every command of dpusim and dpusim-hw ends through it. */
int atomic_close_stdout(const char *prog, int rc);

#endif
