/* `dpusim sweep` under mpirun: rank 0 hands points out one at a time as
 * ranks ask (so slow points do not hold up a static share) and alone writes
 * the database; the other ranks compute and send each report back as the
 * same message the --jobs workers use.
 *
 * Build choice: bin/dpusim is linked with Open MPI, and MPI_Init is called
 * only when OMPI_COMM_WORLD_SIZE is set (that is, under mpirun). One binary
 * means `mpirun dpusim sweep` is the very command a user runs serially, and
 * nothing else changes: outside mpirun no MPI runtime is started (no
 * singleton daemon, no network probing), and this file is the only one that
 * includes mpi.h. Open MPI is already a build dependency (dpusim-hw). The
 * cost is that bin/dpusim needs libmpi at load time. */
#include "tools/sweep.h"

#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "sim/err.h"
#include "tools/cli.h"

enum { TAG_MSG = 1, TAG_WORK = 2, TAG_STOP = 3 };

/* Open MPI's calls return MPI_SUCCESS or an error class; say which call. */
#define MPI_CHECK(call)                                                              \
	do {                                                                         \
		int mpi_rc_ = (call);                                                \
		if (mpi_rc_ != MPI_SUCCESS) {                                        \
			char mpi_msg_[MPI_MAX_ERROR_STRING];                         \
			int mpi_len_ = 0;                                            \
			MPI_Error_string(mpi_rc_, mpi_msg_, &mpi_len_);              \
			cli_error("%s:%d: %s: %s", __FILE__, __LINE__, #call, mpi_msg_); \
			return SIM_EPEER;                                            \
		}                                                                    \
	} while (0)

bool sweep_mpi_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") != NULL;
}

static void init_timed_out(int sig)
{
	static const char msg[] = "dpusim: error: MPI_Init did not finish within the point timeout "
				  "(--point-timeout): a rank stopped or lost at start?\n";
	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
	_exit(2);
}

int sweep_mpi_init(int *rank, int *size, double timeout_s)
{
	/* MPI_Init waits for every rank: one stopped at start held the others
	 * there for ever. An alarm ends this rank, and mpirun the job. */
	struct sigaction sa = { .sa_handler = init_timed_out }, old;
	unsigned secs = timeout_s > 0 ? (unsigned)fmin(ceil(timeout_s), UINT_MAX) : 0;
	int rc;
	sigemptyset(&sa.sa_mask);
	if (secs) {
		sigaction(SIGALRM, &sa, &old);
		alarm(secs);
	}
	rc = MPI_Init(NULL, NULL);
	if (secs) {
		alarm(0);
		sigaction(SIGALRM, &old, NULL);
	}
	MPI_CHECK(rc);
	/* errors come back as codes, so a failed call is reported, not aborted */
	MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
	MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, size));
	return 0;
}

void sweep_mpi_finalize(void)
{
	if (getenv("DPUSIM_TEST_SWEEP_STOP")) {  /* the test hook (sweep.h) */
		int rank = -1;
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		fprintf(stderr, "dpusim: test hook: MPI rank %d finalizes\n", rank);
		fflush(stderr);
	}
	MPI_Finalize();
}

void sweep_mpi_abort(int status)
{
	MPI_Abort(MPI_COMM_WORLD, status);
}

/* What rank 0 waits for from each rank. */
enum rank_state {
	R_HELLO,   /* its hello */
	R_BUSY,    /* the result of the point it holds */
	R_IDLE,    /* nothing: no more work for it; stopped once all have answered */
	R_DONE,    /* nothing: told to stop */
	R_LOST,    /* nothing any more: it did not answer in time */
};

struct ranks {
	int size;
	enum rank_state *state;
	long *point;       /* the point an R_BUSY rank holds */
	double *since_s;   /* since when rank 0 waits for it */
	int live;          /* ranks in R_HELLO or R_BUSY */
};

/* Receives the message from src that a probe found into *buf (malloc'd,
 * NUL-terminated). */
static int recv_probed(const MPI_Status *st, int *src, char **buf, int *len)
{
	MPI_CHECK(MPI_Get_count(st, MPI_CHAR, len));
	if (!(*buf = malloc((size_t)*len + 1)))
		return SIM_ENOMEM;
	*src = st->MPI_SOURCE;
	if (MPI_Recv(*buf, *len, MPI_CHAR, *src, TAG_MSG, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) {
		free(*buf);
		return SIM_EPEER;
	}
	(*buf)[*len] = '\0';
	return 0;
}

/* Rank r has not answered within the timeout: its point fails (retried by
 * the next run), it gets no more work, and rank 0 no longer waits for it. */
static int give_up(sweep *c, struct ranks *rk, int r, double limit)
{
	char why[192];
	enum rank_state was = rk->state[r];
	rk->state[r] = R_LOST;
	rk->live--;
	c->lost++;
	if (was == R_HELLO) {
		cli_error("MPI rank %d did not say hello within %g s (--point-timeout); it gets no "
			  "points", r, limit);
		return 0;
	}
	snprintf(why, sizeof why, "MPI rank %d did not answer within %g s (--point-timeout); it "
		 "gets no more points\n", r, limit);
	return sweep_accept(c, (size_t)rk->point[r], NULL, why);
}

/* Waits for the next message from any rank (*buf as recv_probed), giving up
 * on ranks that exceed the point timeout meanwhile. *buf stays NULL when
 * no rank is left to wait for. MPI_Iprobe and a 1 ms nap, rather than a
 * blocking probe, so that the clock is looked at. */
static int next_msg(sweep *c, struct ranks *rk, int *src, char **buf, int *len, int *fatal)
{
	*buf = NULL;
	while (rk->live > 0) {
		double limit = sweep_timeout_s(c), now = cli_wall_s();
		MPI_Status st;
		int flag = 0, rc;
		MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, TAG_MSG, MPI_COMM_WORLD, &flag, &st));
		if (flag)
			return recv_probed(&st, src, buf, len);
		for (int r = 1; r < rk->size && limit > 0; r++)
			if ((rk->state[r] == R_HELLO || rk->state[r] == R_BUSY) &&
			    now - rk->since_s[r] >= limit && (rc = give_up(c, rk, r, limit)) && !*fatal)
				*fatal = rc;
		sweep_progress_tick(c);
		poll(NULL, 0, 1);
	}
	return 0;
}

/* A rank's hello: the hash of the file it read, or why it could not load. */
static bool hello_ok(const sweep *c, int src, int status, const char *body)
{
	if (!c->s)
		return false;
	if (status) {
		fflush(stdout);
		fprintf(stderr, "%sdpusim: error: MPI rank %d could not load '%s'\n", body, src, c->file);
		return false;
	}
	if (strcmp(body, c->sha256)) {
		cli_error("MPI rank %d read a different '%s' (sha256 %.12s, rank 0 has %.12s); "
			  "it gets no points", src, c->file, body, c->sha256);
		return false;
	}
	return true;
}

/* Sends rank `dst` its next point, or leaves it idle (see release). */
static int hand_out(sweep *c, struct ranks *rk, int dst, bool stop, size_t *next)
{
	long point;
	if (stop || *next >= c->ntodo) {
		if (rk->state[dst] != R_LOST)
			rk->live--;
		else
			c->lost--;  /* it came back and can finalize */
		rk->state[dst] = R_IDLE;
		return 0;
	}
	point = (long)c->todo[(*next)++];
	rk->state[dst] = R_BUSY;
	rk->point[dst] = point;
	rk->since_s[dst] = cli_wall_s();
	sweep_started(c, (size_t)point);
	MPI_CHECK(MPI_Send(&point, 1, MPI_LONG, dst, TAG_WORK, MPI_COMM_WORLD));
	return 0;
}

/* Whether a message's point is the one rank src was expected to send. */
static bool expected(const struct ranks *rk, int src, long point)
{
	return src > 0 && src < rk->size &&
	       ((rk->state[src] == R_HELLO && point == -1) ||
		(rk->state[src] == R_BUSY && point == rk->point[src]) || rk->state[src] == R_LOST);
}

/* One message from a rank: hello or result; then its next assignment. A
 * rank given up on that answers after all is told to stop, its answer
 * dropped (its point was counted failed and is retried by the next run). */
static int serve(sweep *c, struct ranks *rk, size_t *next, int *fatal)
{
	char *buf = NULL, *body;
	long point;
	int src, len, status, rc;
	size_t blen;
	bool ok = true;
	if ((rc = next_msg(c, rk, &src, &buf, &len, fatal)) || !buf)
		return rc;
	body = strchr(buf, '\n');
	if (!body || sweep_parse_header(buf, &point, &status, &blen) ||
	    blen != (size_t)(len - (++body - buf)) || !expected(rk, src, point)) {
		cli_error("MPI rank %d sent a malformed sweep message", src);
		free(buf);
		return SIM_EPEER;
	}
	if (rk->state[src] == R_LOST)
		ok = false;
	else if (point < 0)
		ok = hello_ok(c, src, status, body);
	else {
		c->slowest_s = fmax(c->slowest_s, cli_wall_s() - rk->since_s[src]);
		if ((rc = sweep_accept_msg(c, (size_t)point, status, body, blen)) && !*fatal)
			*fatal = rc;
	}
	free(buf);
	return hand_out(c, rk, src, !ok || *fatal, next);
}

/* Idle ranks are told to stop (and go to MPI_Finalize) only once every
 * rank has answered, and only if none is lost. With a rank lost, rank 0
 * ends the job with MPI_Abort while they still wait for a message: Open
 * MPI 4.1.4's mpirun (with PMIx 4.2.2) could deadlock or crash in its own
 * finalize when an MPI_Abort came while a rank waited in MPI_Finalize's
 * fence for a rank that would never join it (about 1 run in 4, where
 * ranks waiting in MPI_Recv never did; tests/e2e/sweep.sh). */
static int release(const sweep *c, struct ranks *rk)
{
	for (int r = 1; !c->lost && r < rk->size; r++)
		if (rk->state[r] == R_IDLE) {
			rk->state[r] = R_DONE;
			MPI_CHECK(MPI_Send(NULL, 0, MPI_LONG, r, TAG_STOP, MPI_COMM_WORLD));
		}
	return 0;
}

int sweep_mpi_coordinate(sweep *c, int size)
{
	struct ranks rk = { .size = size, .live = size - 1,
			    .state = calloc((size_t)size, sizeof *rk.state),
			    .point = calloc((size_t)size, sizeof *rk.point),
			    .since_s = calloc((size_t)size, sizeof *rk.since_s) };
	size_t next = 0;
	int rc = 0, fatal = 0;
	double t0 = cli_wall_s();
	if (!rk.state || !rk.point || !rk.since_s)
		rc = SIM_ENOMEM;
	for (int r = 0; !rc && r < size; r++) {
		rk.state[r] = r ? R_HELLO : R_DONE;  /* a hello is expected first */
		rk.since_s[r] = t0;
	}
	while (!rc && rk.live > 0)
		rc = serve(c, &rk, &next, &fatal);
	if (rk.state) {
		int src = release(c, &rk);
		rc = rc ? rc : src;
	}
	free(rk.state);
	free(rk.point);
	free(rk.since_s);
	if (!rc && !fatal && c->s && next < c->ntodo) {
		cli_error("no MPI rank could take the sweep's points");
		for (; next < c->ntodo; next++)
			sweep_accept(c, c->todo[next], NULL, "no MPI rank left to compute it\n");
	}
	return rc ? rc : fatal;
}

static int send_msg(const char *msg, size_t len)
{
	if (len > (size_t)INT32_MAX) {
		cli_error("a sweep report of %zu bytes is too large for one MPI message", len);
		return SIM_ERANGE;
	}
	MPI_CHECK(MPI_Send(msg, (int)len, MPI_CHAR, 0, TAG_MSG, MPI_COMM_WORLD));
	return 0;
}

static int hello(const sweep *c, const char *load_error)
{
	char hdr[SWEEP_HDR_MAX];
	const char *body = c->s ? c->sha256 : load_error;
	size_t h = (size_t)snprintf(hdr, sizeof hdr, "%s -1 %d %zu\n", SWEEP_MSG_MAGIC,
				    c->s ? 0 : SIM_EPARSE, strlen(body));
	char *msg = malloc(h + strlen(body) + 1);
	int rc;
	if (!msg)
		return SIM_ENOMEM;
	memcpy(msg, hdr, h);
	strcpy(msg + h, body);
	rc = send_msg(msg, h + strlen(body));
	free(msg);
	return rc;
}

/* Rank 0's next message: a point or the stop. An idle rank waits here
 * until every rank has answered (release), as long as the slowest point:
 * MPI_Iprobe and a 1 ms nap, as rank 0 waits, where a blocking MPI_Recv
 * would keep a core busy polling. */
static int next_point(long *point, int *tag)
{
	MPI_Status st;
	int flag = 0;
	for (;;) {
		MPI_CHECK(MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
		if (flag)
			break;
		poll(NULL, 0, 1);
	}
	*tag = st.MPI_TAG;
	MPI_CHECK(MPI_Recv(point, 1, MPI_LONG, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	return 0;
}

int sweep_mpi_work(const sweep *c, const char *load_error)
{
	int rc = hello(c, load_error ? load_error : "");
	while (!rc) {
		long point = -1;
		int tag;
		char *msg = NULL;
		size_t len = 0;
		if ((rc = next_point(&point, &tag)) || tag == TAG_STOP)
			break;
		if (!c->s || point < 0 || (size_t)point >= c->s->sweep.points)
			return cli_error("MPI rank 0 sent point %ld, out of range", point), SIM_EPEER;
		if ((rc = sweep_compute_msg(c, (size_t)point, &msg, &len)))
			break;
		rc = send_msg(msg, len);
		free(msg);
	}
	return rc;
}
