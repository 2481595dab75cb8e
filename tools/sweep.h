/* `dpusim sweep`: the parts the drivers share. One coordinator (the process
 * itself, the parent of --jobs workers, or MPI rank 0) alone writes the
 * database; workers compute points and hand back serialized reports as
 * messages "dpusim-sweep/1 POINT STATUS LEN\n" followed by LEN bytes (the
 * report JSON when STATUS is 0, else the error text). */
#ifndef DPUSIM_TOOLS_SWEEP_H
#define DPUSIM_TOOLS_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/scenario.h"
#include "report/db.h"
#include "tools/run.h"
#include "tools/sweep_eta.h"

#define SWEEP_MSG_MAGIC "dpusim-sweep/1"
#define SWEEP_HDR_MAX 96    /* longest header line, newline included */
/* Longest point label: every axis key (< 128) and a value, so that labels,
 * the resume key, are never cut short. */
#define SWEEP_LABEL_MAX (SCN_MAX_AXES * 512)

typedef struct sweep {
	const char *file;          /* the scenario file */
	const scn_scenario *s;     /* loaded; its sweep has s->sweep.points points */
	char sha256[65];           /* of the file text */
	run_opts ro;               /* --seed override */
	const char *db_path;
	const char *out_dir;       /* -o DIR: one report file per point; NULL none */
	char *text;                /* the file text, stored with each run */
	db *d;                     /* coordinator only, NULL in workers */
	size_t *todo;              /* points to compute, ascending */
	size_t ntodo;
	/* progress, coordinator only */
	FILE *progress;
	bool tty;
	double t0_s;
	size_t done, failed, skipped;
	size_t late;               /* computed, but stored meanwhile by another sweep */
	sweep_eta eta;             /* time left (sweep_plan_eta); n 0: no estimate */
	double tick_s;             /* when sweep_progress_tick last printed */
	/* --point-timeout: a point not answered within it fails, its worker
	 * killed (--jobs) or given up (MPI). > 0 seconds; 0 none;
	 * SWEEP_TIMEOUT_AUTO scales with the slowest point (sweep_timeout_s). */
	double timeout_s;
	double slowest_s;          /* the slowest point answered so far */
	size_t lost;               /* MPI ranks given up on (they never answered) */
} sweep;

/* The default per-point timeout: generous (a stopped worker must not hold
 * a sweep for ever, a slow point must not be killed): the larger of
 * SWEEP_AUTO_MIN_S and SWEEP_AUTO_FACTOR times the slowest point so far. */
#define SWEEP_TIMEOUT_AUTO (-1.0)
#define SWEEP_AUTO_MIN_S 3600.0
#define SWEEP_AUTO_FACTOR 20.0

/* The timeout now in effect for one point, in seconds; 0: none. */
double sweep_timeout_s(const sweep *c);

/* Reads c->file and sets c->text and c->sha256 (lowercase hex). 0, or
 * SIM_EIO / SIM_ENOMEM with a message printed. */
int sweep_hash_file(sweep *c);

/* The points of `shard` of `nshards` (p % nshards == shard) not yet stored
 * under (scenario, sha256, point label, seed) into c->todo, counting the
 * others in c->skipped. c->d must be open. 0, or a code with a message printed. */
int sweep_plan(sweep *c, size_t shard, size_t nshards);

/* The estimates of how long each point of c->todo takes (sweep_eta.h), par
 * computed at once; a point that cannot be resolved counts no work (it
 * will fail at once). 0, or SIM_ENOMEM (printed). Progress lines say the
 * time left only after it. */
int sweep_plan_eta(sweep *c, unsigned par);

/* Drivers: point i was handed out now (to this process, a worker or a
 * rank), for its wall time and the time left. */
void sweep_started(sweep *c, size_t i);

/* Point i's label as reports carry it, "key=value,key=value" in sweep
 * order; "" when the scenario has no sweep. */
void sweep_label(const sweep *c, size_t i, char *buf, size_t n);

/* Simulates point i into *out (free with rep_free): the scenario block
 * carries the label, the file hash and the seed; info gets sweep_index and
 * sweep_points. 0, or a code with messages in d. Every driver (serial,
 * --jobs worker, MPI rank) computes a point here, so here is the test hook
 * DPUSIM_TEST_SWEEP_STOP=N: the process about to compute point N says
 * "dpusim: test hook: process PID stops at point N" on stderr and stops
 * itself (SIGSTOP), holding that point, for tests/e2e/sweep.sh to kill it
 * or let it time out at a known place rather than race it with a timer.
 * Under mpirun, with the hook set, each rank also says "dpusim: test hook:
 * MPI rank R finalizes" as it calls MPI_Finalize (sweep_mpi_finalize). */
int sweep_compute(const sweep *c, size_t i, rep_report **out, diag *d);

/* Worker side: simulates point i and returns the whole message in *msg
 * (malloc'd, *len bytes). 0, or SIM_ENOMEM. A failed point is a message too. */
int sweep_compute_msg(const sweep *c, size_t i, char **msg, size_t *len);

/* Parses a header line "dpusim-sweep/1 POINT STATUS LEN\n" (NUL-terminated).
 * POINT is -1 for a worker's hello. 0, or SIM_EPARSE. */
int sweep_parse_header(const char *hdr, long *point, int *status, size_t *len);

/* Coordinator side: one result. Stores report (ownership taken) for point
 * i, or, when report is NULL, counts point i as failed and prints why.
 * Draws progress. 0, or the store's error code (printed). */
int sweep_accept(sweep *c, size_t i, rep_report *report, const char *why);

/* Coordinator side: a message's payload for point i with status. Parses the
 * report JSON and calls sweep_accept. */
int sweep_accept_msg(sweep *c, size_t i, int status, const char *payload, size_t len);

/* Drivers: every point of c->todo, computed here (serial), in `jobs`
 * forked workers, or over MPI ranks. Return 0 or the first fatal error
 * (failed points are counted in c->failed, not fatal). The serial driver
 * computes in this process and so has no timeout; a --jobs worker that
 * does not answer within sweep_timeout_s is killed (SIGKILL, which also
 * ends a stopped one), its point fails and a new worker takes its place. */
int sweep_run_serial(sweep *c);
int sweep_run_jobs(sweep *c, unsigned jobs);

/* Progress: start, and the closing line. */
void sweep_progress_start(sweep *c);
void sweep_progress_end(sweep *c);

/* On a terminal: a point's progress (its heartbeat, its iterations)
 * redraws the bar rather than printing lines (progress_bar). */
void sweep_progress_bar(sweep *c);

/* Coordinator of workers or ranks, off a terminal: while points are being
 * computed elsewhere, a line when one is due (progress_due, and at most one
 * every SWEEP_TICK_MIN_S): points done, how many run and the longest
 * running, the time elapsed and left. */
#define SWEEP_TICK_MIN_S 0.1
void sweep_progress_tick(sweep *c);

/* ---- MPI (tools/sweep_mpi.c) ---------------------------------------- */

/* True when mpirun (Open MPI) started this process: OMPI_COMM_WORLD_SIZE is set. */
bool sweep_mpi_launched(void);
/* MPI_Init; *rank and *size of MPI_COMM_WORLD. 0 or SIM_EPEER (printed).
 * When MPI_Init takes longer than timeout_s (> 0), the process says so and
 * exits with status 2. */
int sweep_mpi_init(int *rank, int *size, double timeout_s);
void sweep_mpi_finalize(void);
/* Stops every rank (a worker that can no longer answer would leave rank 0
 * waiting for ever). */
void sweep_mpi_abort(int status);
/* Rank 0: hands c->todo out to ranks 1..size-1 as they ask, stores what
 * they send back. c->s may be NULL when rank 0 could not load the scenario:
 * then every worker is told to stop. */
int sweep_mpi_coordinate(sweep *c, int size);
/* Ranks > 0: say hello (with the file hash, or the load error when c->s is
 * NULL), then compute the points rank 0 sends until told to stop. */
int sweep_mpi_work(const sweep *c, const char *load_error);

#endif
