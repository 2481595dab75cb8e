/* MPI wrappers for dpusim-hw. MPI errors abort (MPI_ERRORS_ARE_FATAL, the
 * default) except where a call's result is checked here. */
#define _GNU_SOURCE /* setns, CLONE_NEWNET */
#include "backend-hw/comm.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "backend-hw/log.h"
#include "backend-hw/msg.h"
#include "backend-hw/xport.h"
#include "tools/cli.h"

static int comm_rank, comm_size = 1;
static int comm_timeout_ms = 30000;
static int comm_start_timeout_ms = 60000; /* MPI_Init and MPI_Finalize */

/* The watchdog over calls MPI gives no way to bound (MPI_Init waits for
 * every rank to start, MPI_Finalize for every rank to arrive): a thread that
 * ends this process when the call has not returned within the timeout. A
 * stopped or hung rank would otherwise keep every other one waiting forever;
 * this rank's exit makes mpirun end the job. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	struct timespec deadline; /* CLOCK_MONOTONIC */
	const char *phase;
	bool done;
} wd = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void *watchdog_main(void *arg)
{
	int rc = 0;
	(void)arg;
	pthread_mutex_lock(&wd.mu);
	while (!wd.done && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&wd.cv, &wd.mu, &wd.deadline);
	if (!wd.done) {
		hw_error("timed out after %.1f s in %s: some rank is stopped, hung or dead "
			 "(--start-timeout); ending this rank so that mpirun ends the job",
			 comm_start_timeout_ms / 1e3, wd.phase);
		fflush(stdout);
		_exit(2); /* MPI cannot be called here: the main thread is inside it */
	}
	pthread_mutex_unlock(&wd.mu);
	return NULL;
}

/* Starts the watchdog for `phase`; 0 or SIM_EIO. */
static int watchdog_arm(const char *phase)
{
	pthread_condattr_t ca;
	int err;
	clock_gettime(CLOCK_MONOTONIC, &wd.deadline);
	wd.deadline.tv_sec += comm_start_timeout_ms / 1000;
	wd.deadline.tv_nsec += (long)(comm_start_timeout_ms % 1000) * 1000000L;
	if (wd.deadline.tv_nsec >= 1000000000L)
		wd.deadline.tv_sec++, wd.deadline.tv_nsec -= 1000000000L;
	wd.phase = phase;
	wd.done = false;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wd.cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((err = pthread_create(&wd.thread, NULL, watchdog_main, NULL))) {
		pthread_cond_destroy(&wd.cv);
		return hw_fail(SIM_EIO, "cannot start the %s watchdog: %s", phase, strerror(err));
	}
	return 0;
}

static void watchdog_disarm(void)
{
	pthread_mutex_lock(&wd.mu);
	wd.done = true;
	pthread_cond_signal(&wd.cv);
	pthread_mutex_unlock(&wd.mu);
	pthread_join(wd.thread, NULL);
	pthread_cond_destroy(&wd.cv);
}

/* Completes a non-blocking collective, or ends every rank when it has not
 * completed within the timeout: a rank that never arrives is hung or dead,
 * and MPI itself would wait for it forever. Spins briefly, then sleeps, so
 * waiting ranks leave the CPU to the ones that work. */
static void wait_req(MPI_Request *req, const char *what)
{
	struct timespec t0, now, nap = { .tv_nsec = 200000 };
	int done = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long spins = 0;; spins++) {
		double ms;
		MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (done)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (double)(now.tv_sec - t0.tv_sec) * 1e3 + (double)(now.tv_nsec - t0.tv_nsec) * 1e-6;
		if (ms > comm_timeout_ms) {
			hw_error("timed out after %.1f s in MPI %s: some rank is hung or dead; "
				 "ending every rank", comm_timeout_ms / 1e3, what);
			hw_comm_abort(2);
		}
		if (spins > 1000)
			nanosleep(&nap, NULL);
		else
			sched_yield();
	}
}

/* $DPUSIM_HW_NETNS: the network namespace (a name under /run/netns, as
 * `ip netns` and tools/lab-net make them) this rank's transport sockets
 * live in. Entered after MPI_Init: MPI's own connections (PMIx, the
 * launcher) stay where mpirun made them, on the host, and only the sockets
 * opened afterwards, in this thread, use the lab network. 0, or SIM_EIO
 * said plainly. */
static int enter_netns(void)
{
	const char *name = getenv("DPUSIM_HW_NETNS");
	char path[256];
	int fd, err = 0;
	if (!name || !*name)
		return 0;
	if (strchr(name, '/') || snprintf(path, sizeof path, "/run/netns/%s", name) >=
				       (int)sizeof path)
		return hw_fail(SIM_EIO, "DPUSIM_HW_NETNS='%s': expected the name of a network "
			       "namespace under /run/netns", name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return hw_fail(SIM_EIO, "DPUSIM_HW_NETNS: cannot open '%s': %s (is the lab up? "
			       "tools/lab-net status)", path, strerror(errno));
	if (setns(fd, CLONE_NEWNET))
		err = hw_fail(SIM_EIO, "DPUSIM_HW_NETNS: cannot enter '%s': %s (entering a network "
			      "namespace needs root or CAP_SYS_ADMIN)", path, strerror(errno));
	close(fd);
	return err;
}

/* Open MPI tells each process its rank before MPI_Init: messages from the
 * start-up can name it. */
static void guess_rank(void)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK");
	char *end;
	long v = r ? strtol(r, &end, 10) : -1;
	if (r && *r && !*end && v >= 0 && v < 1 << 24)
		hw_log_set_rank((int)v);
}

int hw_parse_timeout_ms(const char *v, int *ms)
{
	double s;
	if (!cli_parse_double(v, &s) || !(s >= 0.001 && s <= 3600))
		return -1;
	*ms = (int)ceil(s * 1000);
	return 0;
}

int hw_comm_init(int *argc, char ***argv, int timeout_ms, int start_timeout_ms)
{
	int rc;
	comm_timeout_ms = timeout_ms;
	comm_start_timeout_ms = start_timeout_ms ? start_timeout_ms
			      : timeout_ms > HW_COMM_START_MS ? timeout_ms : HW_COMM_START_MS;
	guess_rank();
	if (watchdog_arm("start-up (MPI_Init, waiting for every rank to start)"))
		return SIM_EIO;
	rc = MPI_Init(argc, argv);
	watchdog_disarm();
	if (rc != MPI_SUCCESS)
		return hw_fail(SIM_EIO, "MPI_Init failed");
	MPI_Comm_rank(MPI_COMM_WORLD, &comm_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &comm_size);
	hw_log_set_rank(comm_rank);
	if (enter_netns()) /* the others would wait for this rank's transport */
		hw_comm_abort(2);
	return 0;
}

void hw_comm_finalize(void)
{
	/* Without the watchdog, finishing without it is the safe choice. */
	bool armed = watchdog_arm("shut-down (MPI_Finalize, waiting for every rank to finish)") == 0;
	MPI_Finalize();
	if (armed)
		watchdog_disarm();
}

_Noreturn void hw_comm_abort(int status)
{
	MPI_Abort(MPI_COMM_WORLD, status);
	exit(status); /* MPI_Abort does not return; this keeps the promise if it did */
}

int hw_comm_rank(void)
{
	return comm_rank;
}

int hw_comm_size(void)
{
	return comm_size;
}

bool hw_comm_has_peers(const char *what)
{
	if (comm_size >= 2)
		return true;
	hw_error("the %s transport needs at least 2 ranks (run under mpirun -np N)", what);
	return false;
}

int hw_xport_place_me(hw_xport *x, const hw_xport_opts *o)
{
	int s = o->stride > 1 ? o->stride : 1;
	if (o->block > 1 && s > 1)
		return hw_fail(SIM_EINVAL, "rings of every %d-th rank or of %d consecutive "
			       "ranks: not both", s, o->block);
	if (o->block > 1 && hw_xport_place_block(x, comm_rank, comm_size, o->block))
		return hw_fail(SIM_EINVAL, "rings of %d consecutive ranks need a multiple of "
			       "%d ranks (this run has %d)", o->block, o->block, comm_size);
	if (o->block <= 1 && hw_xport_place(x, comm_rank, comm_size, s))
		return hw_fail(SIM_EINVAL, "a ring of every %d-th rank needs a multiple of %d "
			       "ranks, at least %d (this run has %d)", s, s, 2 * s, comm_size);
	return 0;
}

/* Says once, on the lowest rank other than the sender, why rank r's record
 * was refused, quoting it safely (it may hold anything). */
static void report_bad_record(int r, const char *slot, int err)
{
	char quoted[160]; /* enough to recognise it, short enough to read */
	if (comm_rank != (r == 0 ? 1 : 0))
		return;
	hw_msg_quote(slot, HW_MSG_MAX, quoted, sizeof quoted);
	hw_error("rank %d sent connection details this dpusim-hw cannot read%s: '%s'", r,
		 err == SIM_EUNSUPPORTED ? " (another version of dpusim-hw)" : "", quoted);
}

int hw_comm_exchange(const char *mine, char *all, hw_comm_check_fn check)
{
	char slot[HW_MSG_MAX] = { 0 };
	int err = 0, bad = -1;
	if (mine && strnlen(mine, HW_MSG_MAX) >= HW_MSG_MAX)
		return hw_fail(SIM_ERANGE, "out-of-band message longer than %d bytes", HW_MSG_MAX - 1);
	if (mine)
		strcpy(slot, mine);
	MPI_Request req;
	if (MPI_Iallgather(slot, HW_MSG_MAX, MPI_CHAR, all, HW_MSG_MAX, MPI_CHAR, MPI_COMM_WORLD,
			   &req) != MPI_SUCCESS)
		return hw_fail(SIM_EIO, "MPI_Iallgather of connection details failed");
	wait_req(&req, "exchange of connection details");
	for (int r = 0; r < comm_size; r++)
		if (all[(size_t)r * HW_MSG_MAX] == '\0')
			return SIM_EPEER;
	/* Every rank holds the same slots and checks them all, so every rank
	 * reaches the same verdict and none is left connecting to a refused peer. */
	for (int r = 0; r < comm_size && !err; r++)
		if ((err = check(all + (size_t)r * HW_MSG_MAX, HW_MSG_MAX)))
			bad = r;
	if (err)
		report_bad_record(bad, all + (size_t)bad * HW_MSG_MAX, err);
	return err;
}

bool hw_comm_all(bool ok)
{
	int in = ok, out = 0;
	MPI_Request req;
	MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD, &req);
	wait_req(&req, "agreement");
	return out != 0;
}

/* One double reduced over every rank, under the watchdog (wait_req). */
static double reduce_double(double v, MPI_Op op, const char *what)
{
	double out = v;
	MPI_Request req;
	MPI_Iallreduce(&v, &out, 1, MPI_DOUBLE, op, MPI_COMM_WORLD, &req);
	wait_req(&req, what);
	return out;
}

double hw_comm_max(double v)
{
	return reduce_double(v, MPI_MAX, "max reduction");
}

void hw_comm_max_each(double *v, size_t n)
{
	MPI_Request req;
	MPI_Iallreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req);
	wait_req(&req, "max reduction");
}

double hw_comm_sum(double v)
{
	return reduce_double(v, MPI_SUM, "sum reduction");
}

void hw_comm_start_together(void)
{
	hw_comm_barrier();
	hw_comm_barrier();
}

void hw_comm_barrier(void)
{
	MPI_Request req;
	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	wait_req(&req, "barrier");
}
