/* Writing files safely (atomic.h). */
#include "report/atomic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/alloc.h"
#include "sim/err.h"

extern char **environ;

/* ---- inputs and outputs of this command ---- */

/* Inputs by identity: a name compared as text misses "./a.yaml", links
 * and bind mounts of the same file. */
struct file_id {
	dev_t dev;
	ino_t ino;
};

static struct file_id *known;
static size_t nknown, capknown;

static int remember(const struct stat *st)
{
	if (sim_grow(&known, &capknown, nknown + 1, sizeof *known, 16))
		return SIM_ENOMEM;
	known[nknown++] = (struct file_id){ .dev = st->st_dev, .ino = st->st_ino };
	return 0;
}

static const struct file_id *find_known(const struct stat *st)
{
	for (size_t i = 0; i < nknown; i++)
		if (known[i].dev == st->st_dev && known[i].ino == st->st_ino)
			return &known[i];
	return NULL;
}

int atomic_protect_input(const char *path)
{
	struct stat st;
	if (!path || stat(path, &st))
		return 0;
	return find_known(&st) ? 0 : remember(&st);
}

int atomic_protect_dir(const char *dir)
{
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	int err = 0;
	if (!d)
		return 0;
	while (!err && (e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path &&
		    !stat(path, &st) && S_ISREG(st.st_mode) && !find_known(&st))
			err = remember(&st);
	}
	closedir(d);
	return err;
}

void atomic_dir_of(const char *path, char *dir, size_t n)
{
	const char *slash = strrchr(path, '/');
	snprintf(dir, n, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
		 slash ? path : ".");
}

/* The longest name a file may have in path's folder (pathconf's, else
 * NAME_MAX where the folder cannot say). */
static size_t name_max_of(const char *path)
{
	char dir[PATH_MAX];
	long m;
	atomic_dir_of(path, dir, sizeof dir);
	m = pathconf(dir, _PC_NAME_MAX);
	return m > 0 ? (size_t)m : NAME_MAX;
}

int atomic_check_target(const char *path, char *errbuf, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	/* a name the file system cannot take, said before the work that would
	 * end in writing it (open's own ENAMETOOLONG) */
	if (strlen(path) >= PATH_MAX || strlen(slash ? slash + 1 : path) > name_max_of(path))
		return sim_errbuf(errbuf, errlen, SIM_EIO, "cannot create '%s': %s", path,
				  strerror(ENAMETOOLONG));
	if (stat(path, &st) || !find_known(&st))
		return 0;
	return sim_errbuf(errbuf, errlen, SIM_EEXIST,
		    "refusing to write '%s': it is an input of this command", path);
}

/* ---- temporaries, removed on interruption ---- */

/* Fixed slots: the signal handler may only read what is already there. */
#define MAX_TEMPS 8
static struct temp_slot {
	volatile sig_atomic_t used;
	bool dir;
	char path[PATH_MAX];
} temps[MAX_TEMPS];
static bool handlers_set;
static volatile pid_t writer_child; /* writes into a temporary (gnuplot); 0 none */

static void drop_slots(void)
{
	for (int pass = 0; pass < 2; pass++) /* files first, then their folders */
		for (int i = 0; i < MAX_TEMPS; i++)
			if (temps[i].used && temps[i].dir == (pass == 1)) {
				if (temps[i].dir)
					rmdir(temps[i].path);
				else
					unlink(temps[i].path);
				temps[i].used = 0;
			}
}

static void on_signal(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	int saved = errno;
	pid_t child = writer_child;
	if (child > 0 && !kill(child, SIGKILL)) /* else it writes on after the unlink */
		waitpid(child, NULL, 0);
	drop_slots();
	sigaction(sig, &dfl, NULL);
	raise(sig);
	errno = saved;
}

static const int handled_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGXCPU, SIGXFSZ };
#define N_HANDLED (sizeof handled_sigs / sizeof handled_sigs[0])

/* Installs on_signal where the signal would end the process; a signal the
 * caller ignores (nohup) stays ignored. Beside an interrupt, a hang-up and a
 * kill, the limits a batch system or a shell sets end a run with a signal
 * too: the CPU time (RLIMIT_CPU, `ulimit -t`: SIGXCPU at the soft limit)
 * and the file size (RLIMIT_FSIZE: SIGXFSZ), so those are caught as well
 * (tools/fuzz-scenarios seed 1205: a run stopped at its CPU limit left
 * t.json.tmp.XXXXXX). A SIGKILL leaves its temporaries: nothing can catch it. */
static void set_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_signal }, old;
	if (handlers_set)
		return;
	handlers_set = true;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < N_HANDLED; i++)
		if (!sigaction(handled_sigs[i], NULL, &old) && old.sa_handler == SIG_DFL)
			sigaction(handled_sigs[i], &sa, NULL);
}

int atomic_temp_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		       char *const argv[])
{
	sigset_t block, old;
	posix_spawnattr_t at;
	int err = posix_spawnattr_init(&at);
	if (err)
		return err;
	sigemptyset(&block);
	for (size_t i = 0; i < N_HANDLED; i++)
		sigaddset(&block, handled_sigs[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	err = posix_spawnattr_setsigmask(&at, &old);
	if (!err)
		err = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
	if (!err)
		err = posix_spawnp(pid, file, fa, &at, argv, environ);
	if (!err)
		writer_child = *pid;
	sigprocmask(SIG_SETMASK, &old, NULL); /* a pending signal is handled here */
	posix_spawnattr_destroy(&at);
	return err;
}

int atomic_temp_wait(pid_t pid, int *status)
{
	siginfo_t si;
	/* WNOWAIT: ended but not reaped, so until the record is cleared its id
	 * still names it (a kill then finds a zombie, harmlessly) */
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0)
		if (errno != EINTR) {
			writer_child = 0;
			return errno;
		}
	writer_child = 0;
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return errno;
	return 0;
}

int atomic_temp_register(const char *path, bool is_dir)
{
	set_handlers();
	if (strlen(path) >= PATH_MAX)
		return SIM_ENOMEM;
	for (int i = 0; i < MAX_TEMPS; i++)
		if (!temps[i].used) {
			strcpy(temps[i].path, path);
			temps[i].dir = is_dir;
			temps[i].used = 1; /* last: the handler sees a whole slot or none */
			return 0;
		}
	return SIM_ENOMEM;
}

void atomic_worker_init(pid_t parent)
{
	struct sigaction old;
	for (int i = 0; i < MAX_TEMPS; i++)
		temps[i].used = 0;
	writer_child = 0;
	if (!sigaction(SIGTERM, NULL, &old) && old.sa_handler == SIG_IGN)
		signal(SIGTERM, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent) /* it ended before the line above */
		raise(SIGTERM);
}

static void forget(const char *path)
{
	for (int i = 0; i < MAX_TEMPS; i++)
		if (temps[i].used && !strcmp(temps[i].path, path))
			temps[i].used = 0;
}

void atomic_temp_drop(const char *tmp)
{
	if (!tmp)
		return;
	unlink(tmp);
	forget(tmp);
}

void atomic_temp_drop_all(void)
{
	drop_slots();
}

/* What fopen("w") would have given a new file: mkstemp's 0600 would hide
 * reports and pictures from the group that shares the folder. */
static mode_t file_mode(void)
{
	mode_t mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

/* A new temporary beside path, opened exclusively (mkstemp: O_CREAT |
 * O_EXCL, so a planted link is an error, never followed). fd or -1. */
static int make_temp(const char *path, char *tmp, size_t tmplen, char *errbuf, size_t errlen)
{
	static const char suffix[] = ".tmp.XXXXXX";
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	int fd, k;
	/* NAME.tmp.XXXXXX unless that is longer than a name may be where NAME
	 * itself is not (a legal name of 245-255 bytes; atomic_check_target
	 * refused a longer one): then .tmp.XXXXXX in the same folder, which the
	 * rename moves as well */
	if (strlen(base) + sizeof suffix - 1 <= name_max_of(path))
		k = snprintf(tmp, tmplen, "%s%s", path, suffix);
	else
		k = snprintf(tmp, tmplen, "%.*s%s", (int)(base - path), path, suffix);
	if (k < 0 || (size_t)k >= tmplen)
		return sim_errbuf(errbuf, errlen, -1, "cannot create '%s': name too long", path);
	if ((fd = mkstemp(tmp)) < 0)
		return sim_errbuf(errbuf, errlen, -1, "cannot create '%s': %s", path, strerror(errno));
	if (fchmod(fd, file_mode()) || fcntl(fd, F_SETFD, FD_CLOEXEC) ||
	    atomic_temp_register(tmp, false)) {
		int e = errno;
		close(fd);
		unlink(tmp);
		return sim_errbuf(errbuf, errlen, -1, "cannot create '%s': %s", path, strerror(e));
	}
	return fd;
}

int atomic_temp_create(const char *path, char *tmp, size_t tmplen, char *errbuf, size_t errlen)
{
	int fd, err = atomic_check_target(path, errbuf, errlen);
	if (err)
		return err;
	if ((fd = make_temp(path, tmp, tmplen, errbuf, errlen)) < 0)
		return SIM_EIO;
	close(fd);
	return 0;
}

/* Syncs the folder holding path, so the rename survives a crash. Some file
 * systems cannot sync a folder (EINVAL): nothing more can be done there. */
static int sync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	int fd, rc;
	atomic_dir_of(path, dir, sizeof dir);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	rc = fsync(fd) && errno != EINVAL && errno != EROFS ? -1 : 0;
	close(fd);
	return rc;
}

int atomic_commit(const char *tmp, const char *path, char *errbuf, size_t errlen)
{
	int fd = open(tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), err;
	if (fd < 0 || fsync(fd)) {
		err = sim_errbuf(errbuf, errlen, SIM_EIO, "%s: cannot sync: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		atomic_temp_drop(tmp);
		return err;
	}
	close(fd);
	if ((err = atomic_check_target(path, errbuf, errlen))) {
		atomic_temp_drop(tmp);
		return err;
	}
	if (rename(tmp, path)) {
		err = sim_errbuf(errbuf, errlen, SIM_EIO, "%s: cannot rename into place: %s", path,
			   strerror(errno));
		atomic_temp_drop(tmp);
		return err;
	}
	forget(tmp);
	if (sync_dir_of(path))
		return sim_errbuf(errbuf, errlen, SIM_EIO, "%s: cannot sync its folder: %s", path,
			    strerror(errno));
	return 0;
}

int atomic_write_file(const char *path, atomic_writer *fn, const void *arg, char *errbuf,
		      size_t errlen)
{
	size_t n = strlen(path) + 16;
	char *tmp;
	FILE *f;
	int fd, err = atomic_check_target(path, errbuf, errlen);
	if (err)
		return err;
	if (!(tmp = malloc(n)))
		return SIM_ENOMEM;
	if ((fd = make_temp(path, tmp, n, errbuf, errlen)) < 0) {
		free(tmp);
		return SIM_EIO;
	}
	if (!(f = fdopen(fd, "w"))) {
		close(fd);
		err = SIM_ENOMEM;
	} else if ((err = fn(f, arg)) || fflush(f) || ferror(f)) {
		err = err == SIM_ENOMEM ? err
					: sim_errbuf(errbuf, errlen, SIM_EIO, "%s: cannot write: %s", path,
					       strerror(errno));
	}
	if (f && fclose(f) && !err)
		err = sim_errbuf(errbuf, errlen, SIM_EIO, "%s: cannot write: %s", path, strerror(errno));
	if (err)
		atomic_temp_drop(tmp);
	else
		err = atomic_commit(tmp, path, errbuf, errlen);
	free(tmp);
	return err;
}

/* ---- standard output ---- */

int atomic_close_stdout(const char *prog, int rc)
{
	int bad = ferror(stdout), e = 0;
	if (fflush(stdout))
		bad = 1, e = errno;
	/* EBADF alone: started with stdout closed and wrote nothing to it */
	if (fclose(stdout) && !bad && errno != EBADF)
		bad = 1, e = errno;
	if (!bad)
		return rc;
	/* ferror alone keeps no errno: an earlier flush failed and the reason
	 * is gone, so say what is known */
	fprintf(stderr, "%s: error: cannot write to standard output%s%s\n", prog, e ? ": " : "",
		e ? strerror(e) : " (a full disk or a closed pipe?)");
	return 2;
}
