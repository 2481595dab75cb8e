/* A broken or hostile rank for tests/e2e/hw-bad-peer.sh, preloaded
 * (LD_PRELOAD) into one dpusim-hw rank; it wraps MPI calls through MPI's
 * profiling interface, so the other ranks run the unmodified binary.
 *   DPUSIM_TEST_RECORD=TEXT   what this rank publishes in the out-of-band
 *                             exchange (MPI_Iallgather) instead of its record;
 *                             "nonul": a whole slot of bytes and no NUL
 *                             (escape sequences, format directives, non-ASCII)
 *   DPUSIM_TEST_STOP=PHASE    the rank stops itself (SIGSTOP) on entering
 *                             init (MPI_Init), exchange (the first
 *                             MPI_Iallgather) or finalize (MPI_Finalize) */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static void stop_in(const char *phase)
{
	const char *p = getenv("DPUSIM_TEST_STOP");
	if (p && !strcmp(p, phase))
		raise(SIGSTOP);
}

int MPI_Init(int *argc, char ***argv)
{
	stop_in("init");
	return PMPI_Init(argc, argv);
}

int MPI_Finalize(void)
{
	stop_in("finalize");
	return PMPI_Finalize();
}

int MPI_Iallgather(const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf,
		   int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	static char slot[4096];
	const char *rec = getenv("DPUSIM_TEST_RECORD");
	size_t n = scount > 0 && (size_t)scount <= sizeof slot ? (size_t)scount : 0;
	stop_in("exchange");
	if (!rec || !*rec || n == 0)
		return PMPI_Iallgather(sendbuf, scount, stype, recvbuf, rcount, rtype, comm, req);
	if (!strcmp(rec, "nonul")) {
		static const char pat[] = "\x1b[2J\x1b]0;pwned\x07%n%s\xff\xfe ";
		for (size_t i = 0; i < n; i++)
			slot[i] = pat[i % (sizeof pat - 1)];
	} else {
		memset(slot, 0, n);
		strncpy(slot, rec, n - 1);
	}
	return PMPI_Iallgather(slot, scount, stype, recvbuf, rcount, rtype, comm, req);
}
