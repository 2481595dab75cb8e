/* dpusim sweep: every point of a scenario's sweep into the results database,
 * serially, in --jobs forked workers, or over MPI ranks under mpirun; points
 * already stored (same file hash, point and seed) are skipped, so an
 * interrupted sweep is resumed by running it again. */
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/units.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/progress.h"
#include "tools/scn_cli.h"
#include "tools/sweep.h"

struct args {
	scn_cli sc;
	const char *db_path;
	char shard_db[96];         /* default database of a shard */
	unsigned jobs;
	size_t shard, nshards;
	bool has_seed;
	uint64_t seed;
	const char *out_dir;
	double timeout_s;          /* --point-timeout, or SWEEP_TIMEOUT_AUTO */
	bool timeout_given;
};

/* --point-timeout: a duration ("90s", "30min", "2h", or bare seconds), "0"
 * or "none" for no timeout, "auto" for the default. */
static bool parse_timeout(const char *s, double *out)
{
	unit_err ue;
	if (!strcmp(s, "auto"))
		return *out = SWEEP_TIMEOUT_AUTO, true;
	if (!strcmp(s, "none"))
		return *out = 0, true;
	if (!cli_parse_double(s, out) && unit_parse(s, UNIT_SECONDS, out, &ue))
		return false;
	return isfinite(*out) && *out >= 0 && *out <= 1e9;
}

/* "I/N" with 0 <= I < N. */
static bool parse_shard(const char *s, size_t *i, size_t *n)
{
	unsigned long long a, b;
	char buf[64];
	const char *slash = strchr(s, '/');
	if (!slash || (size_t)(slash - s) >= sizeof buf)
		return false;
	snprintf(buf, sizeof buf, "%.*s", (int)(slash - s), s);
	if (!cli_parse_u64(buf, &a) || !cli_parse_u64(slash + 1, &b) || b == 0 || a >= b ||
	    b > SCN_MAX_SWEEP_POINTS)
		return false;
	*i = (size_t)a;
	*n = (size_t)b;
	return true;
}

static int take_value(struct args *a, const char *opt, const char *val)
{
	unsigned long long u;
	if (!strcmp(opt, "--db")) {
		a->db_path = val;
	} else if (!strcmp(opt, "-o")) {
		a->out_dir = val;
	} else if (!strcmp(opt, "--jobs")) {
		if (!cli_parse_u64(val, &u) || u == 0 || u > 1024)
			return cli_usage_error("sweep: --jobs wants a count from 1 to 1024, not '%s'", val);
		a->jobs = (unsigned)u;
	} else if (!strcmp(opt, "--shard")) {
		if (!parse_shard(val, &a->shard, &a->nshards))
			return cli_usage_error("sweep: --shard wants I/N with 0 <= I < N, not '%s'", val);
	} else if (!strcmp(opt, "--point-timeout")) {
		if (!parse_timeout(val, &a->timeout_s))
			return cli_usage_error("sweep: --point-timeout wants a duration such as 90s, "
					       "30min or 2h (0 or none: no timeout; auto), not '%s'", val);
		a->timeout_given = a->timeout_s != SWEEP_TIMEOUT_AUTO;
	} else if (!strcmp(opt, "--seed")) {
		if (!cli_parse_u64(val, &u))
			return cli_usage_error("sweep: --seed wants a non-negative integer, not '%s'", val);
		a->has_seed = true;
		a->seed = u;
	} else {
		return cli_usage_error("sweep: unknown option '%s'", opt);
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	*a = (struct args){ .jobs = 1, .nshards = 1, .timeout_s = SWEEP_TIMEOUT_AUTO };
	for (int i = 1; i < argc; i++) {
		int taken = scn_cli_option(&a->sc, argc, argv, &i), rc;
		if (taken < 0)
			return CLI_USAGE;
		if (taken)
			continue;
		if (argv[i][0] == '-' && argv[i][1]) {
			if (i + 1 == argc)
				return cli_usage_error("sweep: %s wants a value", argv[i]);
			if ((rc = take_value(a, argv[i], argv[i + 1])))
				return rc;
			i++;
		} else if (a->sc.file) {
			return cli_usage_error("sweep: one scenario file at a time ('%s' and '%s')",
					       a->sc.file, argv[i]);
		} else {
			a->sc.file = argv[i];
		}
	}
	if (!a->sc.file)
		return cli_usage_error("sweep: no scenario file given (usage: dpusim sweep FILE)");
	if (!a->db_path && a->nshards > 1) {
		/* shards of a Slurm array write side by side, never into one file */
		snprintf(a->shard_db, sizeof a->shard_db, "results/dpusim-shard-%zu-of-%zu.db",
			 a->shard, a->nshards);
		a->db_path = a->shard_db;
	}
	if (!a->db_path)
		a->db_path = DB_DEFAULT_PATH;
	return 0;
}

static void init_sweep(sweep *c, const struct args *a)
{
	*c = (sweep){ .file = a->sc.file, .db_path = a->db_path, .out_dir = a->out_dir,
		      .ro = { .has_seed = a->has_seed, .seed = a->seed },
		      .timeout_s = a->timeout_s,
		      .progress = stderr, .tty = isatty(STDERR_FILENO) == 1 };
}

/* The report folder, made or checked before the database is opened and
 * any point runs: an -o naming a file once failed only at the first point
 * written, after the database had been created; and the longest report
 * name in it (the last point's, as write_point_file names it) fits. */
static int make_out_dir(const char *dir, const scn_scenario *s)
{
	char last[4096];
	struct stat st;
	if (cli_path(last, sizeof last, "%s/%s.p%zu.json", dir, s->name,
		     s->sweep.points ? s->sweep.points - 1 : 0))
		return SIM_EIO;
	if (mkdir(dir, 0777) && errno != EEXIST) {
		cli_error("%s: cannot create the report folder: %s", dir, strerror(errno));
		return SIM_EIO;
	}
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		cli_error("%s: not a folder, expected one for the reports (-o)", dir);
		return SIM_EIO;
	}
	if (access(dir, W_OK | X_OK)) {
		cli_error("%s: cannot write reports there: %s", dir, strerror(errno));
		return SIM_EIO;
	}
	return 0;
}

/* Load, hash, open the database and plan: everything before the points. */
static int prepare(sweep *c, const struct args *a, unsigned par, scn_scenario **s)
{
	char err[1024];
	int rc;
	if (scn_cli_load(&a->sc, s))
		return SIM_EPARSE;
	c->s = *s;
	if ((rc = sweep_hash_file(c)) || (a->out_dir && (rc = make_out_dir(a->out_dir, *s))))
		return rc;
	if ((rc = db_make_parent(c->db_path, err, sizeof err)) ||
	    (rc = db_open(c->db_path, &c->d, err, sizeof err))) {
		cli_error("%s", err);
		return rc;
	}
	if ((rc = sweep_plan(c, a->shard, a->nshards)))
		return rc;
	return sweep_plan_eta(c, par);
}

static void summary(const sweep *c, const struct args *a)
{
	printf("sweep '%s': %zu point%s", c->s->name, c->s->sweep.points,
	       c->s->sweep.points == 1 ? "" : "s");
	if (a->nshards > 1)
		printf(" (shard %zu/%zu: %zu of them)", a->shard, a->nshards,
		       c->ntodo + c->skipped);
	printf("; %zu run, %zu skipped (already stored), %zu failed; database %s\n", c->done,
	       c->skipped + c->late, c->failed, c->db_path);
}

/* MPI ranks that never answered (stopped, hung) would hold MPI_Finalize
 * for ever: with every stored point committed, the job is ended. */
static _Noreturn void end_lost_ranks(const sweep *c)
{
	cli_error("%zu MPI rank%s did not answer within %g s (--point-timeout); the stored points "
		  "are kept and a rerun retries the rest; ending the job with MPI_Abort", c->lost,
		  c->lost == 1 ? "" : "s", sweep_timeout_s(c));
	fflush(NULL);
	sweep_mpi_abort(CLI_USAGE);
	_exit(CLI_USAGE);
}

/* This process coordinates: alone (serial or --jobs), or as MPI rank 0 of
 * `ranks` (> 1), where the others compute. */
static int coordinate(const struct args *a, int ranks)
{
	scn_scenario *s = NULL;
	sweep c;
	int rc;
	init_sweep(&c, a);
	/* points computed at once: MPI ranks but rank 0, workers, or one */
	rc = prepare(&c, a, ranks > 1 ? (unsigned)ranks - 1 : a->jobs > 1 ? a->jobs : 1, &s);
	if (rc) {
		c.ntodo = 0;  /* MPI ranks are still told to stop */
		c.progress = NULL;
	}
	sweep_progress_start(&c);
	progress_start(); /* a long point says it is alive */
	sweep_progress_bar(&c); /* on a terminal, by redrawing the bar */
	if (ranks > 1) {
		int mrc = sweep_mpi_coordinate(&c, ranks);
		rc = rc ? rc : mrc;
	} else if (!rc) {
		/* a timeout needs a worker to kill: a serial sweep with one given
		 * computes in one forked worker */
		rc = a->jobs > 1 || (a->timeout_given && a->timeout_s > 0)
			     ? sweep_run_jobs(&c, a->jobs) : sweep_run_serial(&c);
	}
	progress_bar(NULL, NULL);
	sweep_progress_end(&c);
	if (c.s && c.d)
		summary(&c, a);
	db_close(c.d);
	free(c.todo);
	free(c.text);
	sweep_eta_free(&c.eta);
	scn_free(s);
	if (c.lost)
		end_lost_ranks(&c);
	return rc || c.failed ? CLI_USAGE : CLI_OK;
}

/* An MPI rank > 0: load without printing (rank 0 prints), then compute. */
static int mpi_worker(const struct args *a)
{
	char dir[DATADIR_PATH_MAX];
	scn_opts o = { .profile_dir = scn_cli_profile_dir(&a->sc, dir, sizeof dir),
		       .profile_files = a->sc.profiles,
		       .nprofile_files = a->sc.nprofiles };
	scn_scenario *s = NULL;
	char *why = NULL;
	size_t wlen = 0;
	diag *d = diag_new();
	sweep c;
	FILE *f;
	int rc;
	init_sweep(&c, a);
	c.progress = NULL;
	if (d && !scn_load(a->sc.file, &o, &s, d) && !sweep_hash_file(&c))
		c.s = s;
	else if (d && (f = open_memstream(&why, &wlen)))
		diag_print(d, f), fclose(f);
	rc = sweep_mpi_work(&c, why ? why : "cannot load the scenario\n");
	free(why);
	free(c.text);
	scn_free(s);
	diag_free(d);
	return rc;
}

static void finalize_timed_out(int sig)
{
	static const char msg[] = "dpusim: error: MPI_Finalize did not finish within 60 s (a rank "
				  "stopped?); every point answered is stored\n";
	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
	_exit(CLI_USAGE);
}

/* MPI_Finalize waits for every rank: one stopped after its last point
 * would hold this one there for ever. */
static void finalize(void)
{
	struct sigaction sa = { .sa_handler = finalize_timed_out };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(60);
	sweep_mpi_finalize();
	alarm(0);
}

static int mpi_main(const struct args *a)
{
	int rank = 0, size = 1, rc;
	if (sweep_mpi_init(&rank, &size, a->timeout_s == SWEEP_TIMEOUT_AUTO ? SWEEP_AUTO_MIN_S
								    : a->timeout_s))
		return CLI_USAGE;
	if (size > 1 && a->jobs > 1) {
		if (rank == 0)
			cli_error("sweep: --jobs and mpirun do not mix: each MPI rank is a worker");
		finalize();
		return CLI_USAGE;
	}
	if (rank == 0) {
		rc = coordinate(a, size);
	} else if ((rc = mpi_worker(a))) {
		sweep_mpi_abort(CLI_USAGE);  /* rank 0 would wait for this rank's answer */
	}
	finalize();
	return rc ? CLI_USAGE : CLI_OK;
}

int cmd_sweep(int argc, char **argv)
{
	struct args a;
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	return sweep_mpi_launched() ? mpi_main(&a) : coordinate(&a, 1);
}
