/* The results database: every run's report in SQLite (WAL mode, one
 * transaction per run, versioned schema with migrations). Tables and
 * columns are documented in docs/report-schema.md ("Results database"). */
#ifndef DPUSIM_REPORT_DB_H
#define DPUSIM_REPORT_DB_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "report/report.h"

#define DB_DEFAULT_PATH "results/dpusim.db"
#define DB_SCHEMA_VERSION 3  /* the version this code migrates up to */

typedef struct db db;

/* Open (creating if needed) the database at path, switch it to WAL mode and
 * migrate its schema to DB_SCHEMA_VERSION. The parent folder must exist.
 * 0 and *out set; else *out NULL, SIM_EDB (SQLite failure, a schema newer
 * than this program, or a non-empty file without the SQLite header, which
 * is left untouched) or SIM_ENOMEM, errbuf "path: what went wrong". */
int db_open(const char *path, db **out, char *errbuf, size_t errlen);
/* Open the existing database at path for reading only (runs, plot, a
 * merge's sources): nothing is created, switched or migrated, so a file on
 * a read-only mount, with mode 444 or in another user's folder is read
 * (through SQLite's immutable mode where the folder is not writable and the
 * write-ahead log is empty). db_store_report and db_merge into it fail.
 * 0 and *out set; else *out NULL and SIM_EDB (missing, not a SQLite file,
 * no schema, a schema newer than this program) or SIM_ENOMEM, errbuf set. */
int db_open_ro(const char *path, db **out, char *errbuf, size_t errlen);
/* Create the folder that will hold `path` when it is missing (one level,
 * as for the default results/dpusim.db). 0, or SIM_EIO with errbuf set. */
int db_make_parent(const char *path, char *errbuf, size_t errlen);
/* Whether db_make_parent and db_open could make or open a results database
 * at path, found without creating anything: its name fits the folder's
 * limit with SQLite's companions, its folder is there to write in (or,
 * missing, its parent is: db_make_parent makes one level), and a file
 * already there is a results database or empty. For commands that simulate
 * before they store: said before the work, not after it. 0, or SIM_EDB /
 * SIM_EIO with errbuf "path: what is wrong". */
int db_check_target(const char *path, char *errbuf, size_t errlen);
/* Close; NULL is a no-op. Returns 0 or SIM_EDB (the handle is freed anyway). */
int db_close(db *d);

/* The schema version stored in the file (after db_open: DB_SCHEMA_VERSION). */
int db_schema_version(db *d);

/* Store one run: the report (every variant, metric, breakdown component,
 * collective and benchmark, and the report's JSON) with the scenario text
 * (may be NULL), in one transaction: on any failure nothing of the run is
 * stored. A run is stored once: when the database already holds the same
 * run (the same db_key, or, for a report without a scenario file hash, the
 * very same report), nothing is stored, *added is false and *run_id is the
 * stored run's id; the first result stored under a key is kept (a
 * simulation is deterministic; a later one is never silently swapped in).
 * Otherwise *added is true and *run_id the new id (both may be NULL).
 * The run's time is now, UTC. 0, SIM_EDB or SIM_ENOMEM with errbuf set. */
int db_store_report(db *d, const rep_report *r, const char *scenario_text, int64_t *run_id,
		    bool *added, char *errbuf, size_t errlen);

/* Fault injection for tests: hook(arg, step) runs before each insert of
 * db_store_report (step counts from 0); a nonzero return aborts the store
 * as a failed SQLite call would. NULL removes the hook. */
void db_set_fault_hook(db *d, int (*hook)(void *arg, unsigned step), void *arg);

/* What identifies a run's result: two runs with equal keys ran the same
 * input (the scenario file, the sweep point, the seed) the same way (sim or
 * hw). The database holds one run per key (a UNIQUE index since schema 2).
 * A NULL point and "" are the same (no sweep); a NULL sha256 matches only
 * NULL. The key does not cover --profile overrides, the files a scenario
 * extends or the dpusim version: runs differing only there share a key. */
typedef struct db_key {
	const char *scenario;
	const char *sha256;
	const char *point;
	uint64_t seed;
	const char *source;  /* "sim" | "hw" */
} db_key;

/* Id of the newest run stored under key k, 0 when none, or a negative
 * SIM_EDB with errbuf set. `dpusim sweep` uses it to skip stored points. */
int64_t db_find_run(db *d, const db_key *k, char *errbuf, size_t errlen);

/* Copy every run of the database at src_path (opened read-only) into d,
 * keeping each run's time, scenario text and report, and skipping runs d
 * already holds by the rule of db_store_report (so merging twice, or
 * merging overlapping shards, adds nothing twice). One transaction: on failure d is unchanged and the counts are 0.
 * src_path must be a SQLite file (an empty one is refused too, not made a
 * database). 0, SIM_EDB, SIM_EPARSE (a stored report that no longer reads),
 * SIM_ENOMEM. */
int db_merge(db *d, const char *src_path, unsigned *added, unsigned *skipped, char *errbuf,
	     size_t errlen);

/* A stored run, as db_list_runs hands it over (strings valid during the
 * callback only; sha256 and point may be NULL, the other strings never:
 * db_list_runs refuses a row without them). */
typedef struct db_run {
	int64_t id;
	const char *time;      /* "YYYY-MM-DDTHH:MM:SSZ" */
	const char *scenario;
	const char *sha256;
	uint64_t seed;
	const char *version;
	const char *source;    /* "sim" | "hw" */
	const char *point;
	const char *variants;  /* "baseline=1 dpu=1.25": names with speedup ("-" none) */
} db_run;

typedef struct db_filter {
	const char *scenario;  /* NULL: any */
	const char *variant;   /* runs having a variant of that name; NULL: any */
	unsigned limit;        /* newest first; 0: no limit */
} db_filter;

/* Call cb for each run matching f, newest first; a nonzero cb return stops
 * the walk and is returned. 0, SIM_EDB with errbuf set. */
int db_list_runs(db *d, const db_filter *f, int (*cb)(const db_run *run, void *arg), void *arg,
		 char *errbuf, size_t errlen);

/* One point of a series for plots: run, sweep point, variant, value. */
typedef struct db_point {
	int64_t run_id;
	const char *point;    /* may be NULL */
	const char *variant;  /* never NULL (db_series refuses such a row) */
	double value;
} db_point;

/* Values of `what` (a metric name; for iteration_s the mean; or "speedup")
 * for every variant of every run of scenario `scenario` (NULL: any), in run
 * then variant order. cb as for db_list_runs. 0, SIM_EDB. */
int db_series(db *d, const char *scenario, const char *what,
	      int (*cb)(const db_point *p, void *arg), void *arg, char *errbuf, size_t errlen);

/* The stored JSON of run `id` as a new report (free with rep_free).
 * SIM_ENOENT when there is no such run; SIM_EDB; parse errors as rep_read_string. */
int db_load_report(db *d, int64_t id, rep_report **out, char *errbuf, size_t errlen);

/* SHA-256 (64 hex digits and a NUL into hex) over every stored run's key
 * (scenario, sha256, point, seed, source) and report JSON, taken in key
 * order; ids and times are left out. Two databases holding the same results
 * have the same digest, whatever order or process stored them (a serial and
 * an mpirun sweep, say). *nruns (may be NULL) gets the run count.
 * 0, SIM_EDB or SIM_ENOMEM with errbuf set. */
int db_digest(db *d, char hex[65], int64_t *nruns, char *errbuf, size_t errlen);

/* Row count of table `table` (runs, variants, metrics, breakdown,
 * collectives, benchmarks), or a negative error code. For tests and tools. */
int64_t db_count(db *d, const char *table);

#endif
