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

#include <stdlib.h>
#include <string.h>

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

int sweep_mpi_init(int *rank, int *size)
{
	MPI_CHECK(MPI_Init(NULL, NULL));
	/* errors come back as codes, so a failed call is reported, not aborted */
	MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
	MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, size));
	return 0;
}

void sweep_mpi_finalize(void)
{
	MPI_Finalize();
}

void sweep_mpi_abort(int status)
{
	MPI_Abort(MPI_COMM_WORLD, status);
}

/* Receives the next message from any rank into *buf (malloc'd, NUL-terminated). */
static int recv_msg(int *src, char **buf, int *len)
{
	MPI_Status st;
	MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, TAG_MSG, MPI_COMM_WORLD, &st));
	MPI_CHECK(MPI_Get_count(&st, MPI_CHAR, len));
	if (!(*buf = malloc((size_t)*len + 1)))
		return SIM_ENOMEM;
	*src = st.MPI_SOURCE;
	if (MPI_Recv(*buf, *len, MPI_CHAR, *src, TAG_MSG, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) {
		free(*buf);
		return SIM_EPEER;
	}
	(*buf)[*len] = '\0';
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

/* Sends rank `dst` its next point, or tells it to stop. */
static int hand_out(sweep *c, int dst, bool stop, size_t *next, long *assigned)
{
	long point;
	if (stop || *next >= c->ntodo) {
		assigned[dst] = -1;
		MPI_CHECK(MPI_Send(NULL, 0, MPI_LONG, dst, TAG_STOP, MPI_COMM_WORLD));
		return 1;
	}
	point = (long)c->todo[(*next)++];
	assigned[dst] = point;
	MPI_CHECK(MPI_Send(&point, 1, MPI_LONG, dst, TAG_WORK, MPI_COMM_WORLD));
	return 0;
}

/* One message from a rank: hello or result; then its next assignment.
 * *live drops when the rank is told to stop. */
static int serve(sweep *c, long *assigned, size_t *next, int *live, int *fatal)
{
	char *buf = NULL, *body;
	long point;
	int src, len, status, rc;
	size_t blen;
	bool ok = true;
	if ((rc = recv_msg(&src, &buf, &len)))
		return rc;
	body = strchr(buf, '\n');
	if (!body || sweep_parse_header(buf, &point, &status, &blen) ||
	    blen != (size_t)(len - (++body - buf)) || point != assigned[src]) {
		cli_error("MPI rank %d sent a malformed sweep message", src);
		free(buf);
		return SIM_EPEER;
	}
	if (point < 0)
		ok = hello_ok(c, src, status, body);
	else if ((rc = sweep_accept_msg(c, (size_t)point, status, body, blen)) && !*fatal)
		*fatal = rc;
	free(buf);
	rc = hand_out(c, src, !ok || *fatal, next, assigned);
	if (rc < 0)
		return rc;
	*live -= rc;
	return 0;
}

int sweep_mpi_coordinate(sweep *c, int size)
{
	long *assigned = malloc((size_t)size * sizeof *assigned);
	size_t next = 0;
	int live = size - 1, rc = 0, fatal = 0;
	if (!assigned)
		return SIM_ENOMEM;
	for (int r = 0; r < size; r++)
		assigned[r] = -1;  /* a hello is expected first */
	while (live > 0 && !rc)
		rc = serve(c, assigned, &next, &live, &fatal);
	free(assigned);
	if (!rc && !fatal && c->s && next < c->ntodo) {
		cli_error("no MPI rank could take the sweep's points");
		for (; next < c->ntodo; next++)
			sweep_accept(c, c->todo[next], NULL, NULL);
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

int sweep_mpi_work(const sweep *c, const char *load_error)
{
	int rc = hello(c, load_error ? load_error : "");
	while (!rc) {
		MPI_Status st;
		long point = -1;
		char *msg = NULL;
		size_t len = 0;
		MPI_CHECK(MPI_Recv(&point, 1, MPI_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
		if (st.MPI_TAG == TAG_STOP)
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
