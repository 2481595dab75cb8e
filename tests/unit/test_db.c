/* tools/db: stored rows match the reports, a failed or killed store leaves
 * nothing, migrations from an empty file, WAL mode, queries. */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sim/err.h"
#include "report/db.h"
#include "report/report.h"
#include "tests/unit/check_main.h"
#include "tests/unit/fixture.h"

static char dir[64], path[128];

static void setup(void)
{
	fx_tmpdir(dir, sizeof dir, "test_db");
	snprintf(path, sizeof path, "%s/r.db", dir);
}

static void teardown(void)
{
	fx_rmdir(dir);
}

static rep_report *fixture(const char *name)
{
	char file[128], err[512] = "";
	rep_report *r = NULL;
	snprintf(file, sizeof file, "tests/data/%s", name);
	ck_assert_msg(rep_read_file(file, &r, err, sizeof err) == 0, "%s", err);
	return r;
}

static db *open_db(void)
{
	db *d = NULL;
	char err[512] = "";
	ck_assert_msg(db_open(path, &d, err, sizeof err) == 0, "%s", err);
	return d;
}

/* A single number from SQL on a separate connection. */
static double sql_num(const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	double x = NAN;
	ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		x = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return x;
}

static void expect_counts(db *d, int64_t runs, int64_t vars, int64_t metrics, int64_t bd,
			  int64_t coll)
{
	ck_assert_int_eq(db_count(d, "runs"), runs);
	ck_assert_int_eq(db_count(d, "variants"), vars);
	ck_assert_int_eq(db_count(d, "metrics"), metrics);
	ck_assert_int_eq(db_count(d, "breakdown"), bd);
	ck_assert_int_eq(db_count(d, "collectives"), coll);
}

static int count_run(const db_run *run, void *arg)
{
	int64_t *ids = arg;
	ids[ids[0] + 1] = run->id;
	ids[0]++;
	return 0;
}

static int sum_point(const db_point *p, void *arg)
{
	double *acc = arg;
	acc[0] += 1;
	acc[1] += p->value;
	return 0;
}

START_TEST(store_two_runs)
{
	db *d = open_db();
	rep_report *sim = fixture("report-sim.json"), *hw = fixture("report-hw.json"), *back;
	int64_t id1, id2, ids[8] = { 0 };
	double acc[2] = { 0, 0 };
	char err[512] = "";
	ck_assert_msg(db_store_report(d, sim, "name: fixture\n", &id1, NULL, err, sizeof err) == 0,
		      "%s", err);
	ck_assert_msg(db_store_report(d, hw, NULL, &id2, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_int_lt(id1, id2);
	/* sim: 9 + 10 metrics, 6 + 6 breakdown, 1 + 1 collectives;
	 * hw: 7 + 8 + 1 metrics, no breakdown, 1 collective */
	expect_counts(d, 2, 5, 35, 12, 3);
	ck_assert_int_eq(db_count(d, "benchmarks"), 0);
	ck_assert(sql_num("SELECT m.value FROM metrics m JOIN variants v ON v.id = m.variant_id"
			  " JOIN runs r ON r.id = v.run_id WHERE r.source = 'sim' AND"
			  " v.name = 'dpu' AND m.name = 'samples_per_s'") == 2560);
	ck_assert(sql_num("SELECT p99 FROM metrics WHERE name = 'iteration_s' AND p99 IS NOT NULL"
			  " ORDER BY variant_id LIMIT 1") == 0.58);
	ck_assert(isnan(sql_num("SELECT ci95 FROM metrics m JOIN variants v ON v.id ="
				" m.variant_id WHERE v.run_id = 2 AND m.name = 'iteration_s'"
				" AND ci95 IS NOT NULL")));
	ck_assert(sql_num("SELECT speedup FROM variants WHERE run_id = 2 AND name = 'dpu'")
		  == 1.2093235831809872);
	ck_assert(sql_num("SELECT count(*) FROM runs WHERE scenario_text = 'name: fixture\n'"
			  " AND seed = 42") == 1);
	/* listing: newest first, filters */
	ck_assert_int_eq(db_list_runs(d, &(db_filter){ 0 }, count_run, ids, err, sizeof err), 0);
	ck_assert_int_eq(ids[0], 2);
	ck_assert_int_eq(ids[1], id2);
	ids[0] = 0;
	db_list_runs(d, &(db_filter){ .variant = "dpu-nocrypto" }, count_run, ids, err, sizeof err);
	ck_assert_int_eq(ids[0], 1);
	ids[0] = 0;
	db_list_runs(d, &(db_filter){ .scenario = "nosuch" }, count_run, ids, err, sizeof err);
	ck_assert_int_eq(ids[0], 0);
	ids[0] = 0;
	db_list_runs(d, &(db_filter){ .limit = 1 }, count_run, ids, err, sizeof err);
	ck_assert_int_eq(ids[0], 1);
	/* series and stored JSON */
	ck_assert_int_eq(db_series(d, NULL, "samples_per_s", sum_point, acc, err, sizeof err), 0);
	ck_assert(acc[0] == 5 && fabs(acc[1] - (2048 + 2560 + 1969.2 + 2381.4 + 2400)) < 1e-9);
	ck_assert_int_eq(db_load_report(d, id1, &back, err, sizeof err), 0);
	ck_assert_str_eq(rep_variant_name(rep_variant_at(back, 1)), "dpu");
	rep_free(back);
	ck_assert_int_eq(db_load_report(d, 99, &back, err, sizeof err), SIM_ENOENT);
	rep_free(sim);
	rep_free(hw);
	ck_assert_int_eq(db_close(d), 0);
}
END_TEST

static int fail_at(void *arg, unsigned step)
{
	return step == *(unsigned *)arg;
}

START_TEST(aborted_store_leaves_nothing)
{
	db *d = open_db();
	rep_report *sim = fixture("report-sim.json");
	unsigned at;
	char err[512] = "";
	/* fail at the first, a middle and the last insert (1 run, 2 variants,
	 * 19 metrics, 12 breakdown, 2 collectives: 36 inserts) */
	static const unsigned where[] = { 0, 17, 35 };
	for (size_t i = 0; i < 3; i++) {
		at = where[i];
		db_set_fault_hook(d, fail_at, &at);
		ck_assert_int_eq(db_store_report(d, sim, NULL, NULL, NULL, err, sizeof err), SIM_EDB);
		ck_assert_ptr_nonnull(strstr(err, "fault hook"));
		expect_counts(d, 0, 0, 0, 0, 0);
	}
	at = 36; /* past the end: the store completes */
	ck_assert_int_eq(db_store_report(d, sim, NULL, NULL, NULL, err, sizeof err), 0);
	expect_counts(d, 1, 2, 19, 12, 2);
	rep_free(sim);
	db_close(d);
}
END_TEST

static int die_at(void *arg, unsigned step)
{
	if (step == *(unsigned *)arg)
		_exit(3); /* as if killed: no rollback, no close */
	return 0;
}

START_TEST(killed_store_leaves_nothing)
{
	pid_t pid;
	int status;
	db *d;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		unsigned at = 20; /* of the hw run's 21 inserts */
		rep_report *sim = fixture("report-sim.json"), *hw = fixture("report-hw.json");
		d = open_db();
		db_store_report(d, sim, NULL, NULL, NULL, NULL, 0); /* stores a first run */
		db_set_fault_hook(d, die_at, &at);
		db_store_report(d, hw, NULL, NULL, NULL, NULL, 0);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	d = open_db();
	expect_counts(d, 1, 2, 19, 12, 2);
	ck_assert(sql_num("SELECT count(*) FROM pragma_integrity_check WHERE"
			  " integrity_check = 'ok'") == 1);
	db_close(d);
}
END_TEST

START_TEST(migration_from_empty_file)
{
	db *d;
	char err[512] = "";
	int fd = open(path, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	d = open_db();
	ck_assert_int_eq(db_schema_version(d), DB_SCHEMA_VERSION);
	expect_counts(d, 0, 0, 0, 0, 0);
	db_close(d);
	d = open_db(); /* reopening migrates nothing twice */
	ck_assert_int_eq(db_schema_version(d), DB_SCHEMA_VERSION);
	db_close(d);
	ck_assert(sql_num("SELECT count(*) FROM schema_version") == DB_SCHEMA_VERSION);
	ck_assert(sql_num("SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'")
		  == 1);
	/* a file from a newer dpusim is refused, not clobbered */
	sqlite3 *h;
	ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "INSERT INTO schema_version VALUES (99)", NULL, NULL,
				      NULL), SQLITE_OK);
	sqlite3_close(h);
	d = NULL;
	ck_assert_int_eq(db_open(path, &d, err, sizeof err), SIM_EDB);
	ck_assert_ptr_null(d);
	ck_assert_ptr_nonnull(strstr(err, "schema version 99 is newer"));
}
END_TEST

/* Eight processes create one new database at once, three of them storing
 * a run (as concurrent `dpusim import`s do): every one succeeds. The schema version
 * was once read before the write lock, and all but the first failed on
 * "table runs already exists". Ten rounds, each on a fresh file. */
START_TEST(concurrent_creation)
{
	enum { NPROC = 8, ROUNDS = 10 };
	for (int round = 0; round < ROUNDS; round++) {
		pid_t pids[NPROC];
		int go[2], status, failed = 0;
		char one;
		unlink(path);
		ck_assert_int_eq(pipe(go), 0);
		for (int k = 0; k < NPROC; k++) {
			ck_assert_int_ge(pids[k] = fork(), 0);
			if (pids[k] == 0) {
				char err[512] = "";
				static const char *const names[] = { "report-sim.json", "report-hw.json",
								     "report-bench.json" };
				rep_report *r = k < 3 ? fixture(names[k]) : NULL;
				db *d = NULL;
				close(go[1]);
				if (read(go[0], &one, 1) != 0) /* the start signal: the pipe closes */
					_exit(4);
				if (db_open(path, &d, err, sizeof err) ||
				    (r && db_store_report(d, r, NULL, NULL, NULL, err, sizeof err))) {
					fprintf(stderr, "process %d: %s\n", k, err);
					_exit(1);
				}
				db_close(d);
				rep_free(r);
				_exit(0);
			}
		}
		close(go[0]);
		close(go[1]);
		for (int k = 0; k < NPROC; k++) {
			ck_assert_int_eq(waitpid(pids[k], &status, 0), pids[k]);
			failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
		}
		ck_assert_msg(failed == 0, "round %d: %d of %d processes failed", round, failed, NPROC);
		ck_assert(sql_num("SELECT count(*) FROM runs") == 3);
		ck_assert(sql_num("SELECT count(*) FROM schema_version") == DB_SCHEMA_VERSION);
	}
}
END_TEST

/* Reads the run count of a database through db_open_ro, in a child that
 * cannot write the file or its folder: as root (which ignores modes) the
 * child drops to nobody. The child's exit status is the count, or 100 +
 * the error. */
static int count_as_reader(const char *file)
{
	pid_t pid = fork();
	int status;
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char err[512] = "";
		db *d = NULL;
		if (getuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(99);
		if (db_open_ro(file, &d, err, sizeof err)) {
			fprintf(stderr, "%s\n", err);
			_exit(100);
		}
		if (db_store_report(d, NULL, NULL, NULL, NULL, err, sizeof err) != SIM_EDB ||
		    !strstr(err, "opened read-only"))
			_exit(101);
		status = (int)db_count(d, "runs");
		db_close(d);
		_exit(status);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* A database in a folder the reader cannot write, its file mode 444, is
 * read read-only (through SQLite's immutable mode: it cannot create the
 * -shm file), even with URI characters in its name; db_open for writing
 * once failed there, so runs, plot and merge could not read it. */
START_TEST(read_only_open)
{
	char sub[160], odd[200], err[512] = "";
	rep_report *r = fixture("report-sim.json");
	db *d = NULL;
	unsigned added, skipped;
	snprintf(sub, sizeof sub, "%s/ro", dir);
	snprintf(odd, sizeof odd, "%s/r?x=1#%%20.db", sub);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_msg(db_open(odd, &d, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(db_store_report(d, r, NULL, NULL, NULL, err, sizeof err), 0);
	db_close(d);
	ck_assert_int_eq(chmod(odd, 0444), 0);
	ck_assert_int_eq(chmod(sub, 0555), 0);
	ck_assert_int_eq(chmod(dir, 0711), 0);
	ck_assert_int_eq(count_as_reader(odd), 1);
	ck_assert_int_eq(chmod(sub, 0755), 0);
	/* a read-only handle stores and merges nothing */
	ck_assert_int_eq(db_open_ro(odd, &d, err, sizeof err), 0);
	ck_assert_int_eq(db_merge(d, odd, &added, &skipped, err, sizeof err), SIM_EDB);
	ck_assert_ptr_nonnull(strstr(err, "opened read-only"));
	db_close(d);
	/* missing, empty and schema-less files are refused, and left alone */
	snprintf(odd, sizeof odd, "%s/none.db", sub);
	ck_assert_int_eq(db_open_ro(odd, &d, err, sizeof err), SIM_EDB);
	ck_assert_ptr_null(d);
	ck_assert_int_eq(access(odd, F_OK), -1);
	ck_assert_int_eq(close(open(odd, O_CREAT | O_WRONLY, 0600)), 0);
	ck_assert_int_eq(db_open_ro(odd, &d, err, sizeof err), SIM_EDB);
	ck_assert_ptr_nonnull(strstr(err, "an empty file"));
	rep_free(r);
}
END_TEST

/* One run per key: a second store of the same run (two sweeps of one
 * scenario into one file, an import repeated) stores nothing and names the
 * stored run; another seed or point is another run; a report without a
 * file hash is the same run only when it is the very same report. Once,
 * every store added a run. */
START_TEST(same_run_stored_once)
{
	db *d = open_db();
	rep_report *sim = fixture("report-sim.json"), *bench = fixture("report-bench.json");
	const rep_scenario *sc = rep_get_scenario(sim);
	int64_t id1 = 0, id = 0;
	bool added = false;
	char err[512] = "";
	ck_assert_int_eq(db_store_report(d, sim, NULL, &id1, &added, err, sizeof err), 0);
	ck_assert(added);
	ck_assert_int_eq(db_store_report(d, sim, "other text", &id, &added, err, sizeof err), 0);
	ck_assert(!added);
	ck_assert_int_eq(id, id1);
	expect_counts(d, 1, 2, 19, 12, 2);
	/* the same key with another point, then the empty point (= none) */
	ck_assert_int_eq(rep_set_scenario(sim, &(rep_scenario){ .name = sc->name,
			 .sha256 = sc->sha256, .seed = 42, .point = "cluster.nodes=4" }), 0);
	ck_assert_int_eq(db_store_report(d, sim, NULL, &id, &added, err, sizeof err), 0);
	ck_assert(added && id > id1);
	ck_assert_int_eq(rep_set_scenario(sim, &(rep_scenario){ .name = sc->name,
			 .sha256 = sc->sha256, .seed = 42, .point = "" }), 0);
	ck_assert_int_eq(db_store_report(d, sim, NULL, &id, &added, err, sizeof err), 0);
	ck_assert(!added && id == id1);
	ck_assert_int_eq(db_count(d, "runs"), 2);
	/* no file hash: the same report is the same run, another one is not */
	ck_assert_int_eq(db_store_report(d, bench, NULL, &id, &added, err, sizeof err), 0);
	ck_assert(added);
	ck_assert_int_eq(db_store_report(d, bench, NULL, &id1, &added, err, sizeof err), 0);
	ck_assert(!added && id1 == id);
	ck_assert_int_eq(rep_set_info(bench, "node", "b"), 0);
	ck_assert_int_eq(db_store_report(d, bench, NULL, &id, &added, err, sizeof err), 0);
	ck_assert(added && id > id1);
	ck_assert_int_eq(db_count(d, "runs"), 4);
	/* the key holds in the file itself, whoever writes it */
	sqlite3 *h;
	ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "INSERT INTO runs (time, scenario, scenario_sha256, seed,"
				      " version, source, point, report) SELECT time, scenario,"
				      " scenario_sha256, seed, version, source, point, report"
				      " FROM runs WHERE id = 1", NULL, NULL, NULL), SQLITE_CONSTRAINT);
	sqlite3_close(h);
	rep_free(sim);
	rep_free(bench);
	db_close(d);
}
END_TEST

/* A schema-1 file holding the same run twice (stored before the key
 * existed) is migrated without losing a row: the later copy is numbered,
 * the key then holds, and the run is not stored a third time. */
START_TEST(migration_keeps_copies)
{
	db *d = open_db();
	rep_report *sim = fixture("report-sim.json");
	bool added = true;
	char err[512] = "";
	sqlite3 *h;
	ck_assert_int_eq(db_store_report(d, sim, NULL, NULL, NULL, err, sizeof err), 0);
	db_close(d);
	/* back to schema 1 (as dpusim before this change wrote it), plus a copy */
	ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "DROP INDEX runs_key; ALTER TABLE runs DROP COLUMN copy;"
				      "ALTER TABLE collectives DROP COLUMN calls;"
				      "ALTER TABLE collectives DROP COLUMN time_min_s;"
				      "ALTER TABLE collectives DROP COLUMN time_p10_s;"
				      "ALTER TABLE collectives DROP COLUMN time_p90_s;"
				      "DELETE FROM schema_version WHERE version >= 2;"
				      "INSERT INTO runs (time, scenario, scenario_sha256, seed, version,"
				      " source, point, report) SELECT time, scenario, scenario_sha256,"
				      " seed, version, source, point, report FROM runs WHERE id = 1;",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	ck_assert(sql_num("SELECT count(*) FROM runs") == 2);
	d = open_db();
	ck_assert_int_eq(db_schema_version(d), 3);
	ck_assert_int_eq(db_count(d, "runs"), 2);
	ck_assert_int_eq(db_count(d, "variants"), 2);
	ck_assert(sql_num("SELECT copy FROM runs WHERE id = 1") == 0);
	ck_assert(sql_num("SELECT copy FROM runs WHERE id = 2") == 1);
	ck_assert_int_eq(db_store_report(d, sim, NULL, NULL, &added, err, sizeof err), 0);
	ck_assert(!added);
	ck_assert_int_eq(db_count(d, "runs"), 2);
	rep_free(sim);
	db_close(d);
}
END_TEST

START_TEST(bad_paths_and_reports)
{
	db *d = NULL;
	char err[512] = "", bad[160];
	rep_report *r = rep_new(REP_SIM);
	snprintf(bad, sizeof bad, "%s/no/such/dir/x.db", dir);
	ck_assert_int_eq(db_open(bad, &d, err, sizeof err), SIM_EDB);
	ck_assert_ptr_null(d);
	ck_assert_ptr_nonnull(strstr(err, "cannot open database"));
	d = open_db();
	ck_assert_int_eq(db_store_report(d, r, NULL, NULL, NULL, err, sizeof err), SIM_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "invalid report"));
	ck_assert_int_eq(db_count(d, "sqlite_master"), SIM_EINVAL);
	rep_free(r);
	db_close(d);
	db_close(NULL);
}
END_TEST

/* db_check_target says, creating nothing, what db_make_parent and db_open
 * would fail on, and passes what they would make. */
START_TEST(target_checked_without_creating)
{
	char err[512] = "", p[512], name[300];
	int fd;
	snprintf(p, sizeof p, "%s/new.db", dir); /* a new file in a folder that is there */
	ck_assert_msg(db_check_target(p, err, sizeof err) == 0, "%s", err);
	snprintf(p, sizeof p, "%s/sub/new.db", dir); /* one missing level: made by db_make_parent */
	ck_assert_msg(db_check_target(p, err, sizeof err) == 0, "%s", err);
	snprintf(p, sizeof p, "%s/a/b/new.db", dir);
	ck_assert_int_ne(db_check_target(p, err, sizeof err), 0);
	ck_assert_ptr_nonnull(strstr(err, "/a/b: cannot create folder: No such file or directory"));
	ck_assert_int_ne(db_check_target(dir, err, sizeof err), 0);
	ck_assert_ptr_nonnull(strstr(err, "a folder, not a results database"));
	memset(name, 'n', 250);
	name[250] = '\0';
	snprintf(p, sizeof p, "%s/%s", dir, name);
	ck_assert_int_ne(db_check_target(p, err, sizeof err), 0);
	ck_assert_ptr_nonnull(strstr(err, "a results database's name can be at most"));
	snprintf(p, sizeof p, "%s/text.db", dir);
	fd = open(p, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "hello", 5), 5);
	close(fd);
	ck_assert_int_ne(db_check_target(p, err, sizeof err), 0);
	ck_assert_ptr_nonnull(strstr(err, "not a results database"));
	unlink(p);
	fd = open(p, O_CREAT | O_WRONLY, 0600); /* an empty file is one db_open migrates */
	close(fd);
	ck_assert_msg(db_check_target(p, err, sizeof err) == 0, "%s", err);
	unlink(p);
	fd = open(p, O_CREAT | O_WRONLY, 0600); /* a file where the folder would be */
	close(fd);
	snprintf(p + strlen(p), sizeof p - strlen(p), "/x.db");
	ck_assert_int_ne(db_check_target(p, err, sizeof err), 0);
	snprintf(p, sizeof p, "%s/text.db", dir);
	ck_assert_ptr_nonnull(strstr(err, "/text.db': Not a directory"));
	unlink(p);
	snprintf(p, sizeof p, "%s/sub", dir);
	ck_assert_int_eq(access(p, F_OK), -1); /* nothing was made */
	snprintf(p, sizeof p, "%s/new.db", dir);
	ck_assert_int_eq(access(p, F_OK), -1);
}
END_TEST

START_TEST(benchmarks_are_stored)
{
	db *d = open_db();
	rep_report *b = fixture("report-bench.json");
	char err[512] = "";
	ck_assert_msg(db_store_report(d, b, NULL, NULL, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(db_count(d, "benchmarks"), 4);
	ck_assert(sql_num("SELECT value FROM benchmarks WHERE name = 'rdma_write_lat'") == 1.9e-6);
	ck_assert(sql_num("SELECT count(*) FROM benchmarks WHERE memory IS NULL") == 2);
	rep_free(b);
	db_close(d);
}
END_TEST

/* The record tables' columns after (owner, idx) are report.h's field list,
 * in order, and each stored value is the record's: the JSON writer, the
 * reader and the store share that one list. */
static void check_record_columns(const char *table, const rep_field *f, int nf,
				 const void *rec)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	char sql[256];
	ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
	snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
	ck_assert_int_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	for (int k = -2; k < nf; k++) {
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		if (k >= 0)
			ck_assert_str_eq((const char *)sqlite3_column_text(st, 1), f[k].key);
	}
	ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(h);
	for (int k = 0; k < nf; k++) {
		snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE idx = 0 ORDER BY rowid LIMIT 1",
			 f[k].key, table);
		if (f[k].type == REP_F_NUM && !isnan(rep_field_num(&f[k], rec)))
			ck_assert_double_eq(sql_num(sql), rep_field_num(&f[k], rec));
		else if (f[k].type == REP_F_U32 || f[k].type == REP_F_U64)
			ck_assert_double_eq(sql_num(sql), (double)rep_field_u64(&f[k], rec));
	}
}

/* Schema 3: a replayed collective row's calls and spread are stored (the
 * median in time_s), a simulated row's are NULL; a schema-2 file gains the
 * columns and keeps its rows. */
START_TEST(collective_spread_columns)
{
	db *d = open_db();
	rep_report *sim = fixture("report-sim.json"), *hw = fixture("report-hw.json");
	char err[512] = "";
	sqlite3 *h;
	ck_assert_msg(db_store_report(d, sim, NULL, NULL, NULL, err, sizeof err) == 0, "%s", err);
	db_close(d);
	ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(h, "ALTER TABLE collectives DROP COLUMN calls;"
				      "ALTER TABLE collectives DROP COLUMN time_min_s;"
				      "ALTER TABLE collectives DROP COLUMN time_p10_s;"
				      "ALTER TABLE collectives DROP COLUMN time_p90_s;"
				      "DELETE FROM schema_version WHERE version = 3;", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(h);
	d = open_db();
	ck_assert_int_eq(db_schema_version(d), 3);
	ck_assert_msg(db_store_report(d, hw, NULL, NULL, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert(sql_num("SELECT count(*) FROM collectives WHERE calls IS NULL AND time_p10_s IS "
			  "NULL") == db_count(d, "collectives") - 1);
	ck_assert(sql_num("SELECT calls FROM collectives WHERE calls IS NOT NULL") == 20);
	ck_assert(sql_num("SELECT time_min_s FROM collectives WHERE calls = 20") == 0.0129);
	ck_assert(sql_num("SELECT time_p10_s FROM collectives WHERE calls = 20") == 0.013);
	ck_assert(sql_num("SELECT time_p90_s FROM collectives WHERE calls = 20") == 0.0135);
	rep_free(sim);
	rep_free(hw);
	db_close(d);
}
END_TEST

START_TEST(record_columns_follow_the_field_list)
{
	db *d = open_db();
	rep_report *sim = fixture("report-sim.json"), *bench = fixture("report-bench.json");
	char err[512] = "";
	ck_assert_msg(db_store_report(d, sim, NULL, NULL, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(db_store_report(d, bench, NULL, NULL, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_gt(rep_variant_ncollectives(rep_variant_at(sim, 0)), 0);
	check_record_columns("collectives", rep_collective_fields, REP_COLLECTIVE_NFIELDS,
			     rep_variant_collective(rep_variant_at(sim, 0), 0));
	check_record_columns("benchmarks", rep_benchmark_fields, REP_BENCHMARK_NFIELDS,
			     rep_benchmark_at(bench, 0));
	rep_free(sim);
	rep_free(bench);
	db_close(d);
}
END_TEST

START_TEST(find_run_by_key)
{
	db *d = open_db();
	rep_report *sim = fixture("report-sim.json");
	const rep_scenario *sc = rep_get_scenario(sim);
	db_key k = { .scenario = sc->name, .sha256 = sc->sha256, .point = NULL, .seed = 42,
		     .source = "sim" };
	int64_t id;
	char err[512] = "";
	ck_assert_int_eq(db_find_run(d, &k, err, sizeof err), 0);
	ck_assert_int_eq(db_store_report(d, sim, NULL, &id, NULL, err, sizeof err), 0);
	ck_assert_int_eq(db_find_run(d, &k, err, sizeof err), id);
	k.point = "cluster.gpus=8";
	ck_assert_int_eq(db_find_run(d, &k, err, sizeof err), 0);
	k.point = NULL, k.seed = 43;
	ck_assert_int_eq(db_find_run(d, &k, err, sizeof err), 0);
	k.seed = 42, k.source = "hw";
	ck_assert_int_eq(db_find_run(d, &k, err, sizeof err), 0);
	rep_free(sim);
	db_close(d);
}
END_TEST

/* Store the named fixtures into a database at `file`. */
static void make_shard(const char *file, const char *const *names, size_t n)
{
	db *d = NULL;
	char err[512] = "";
	ck_assert_msg(db_open(file, &d, err, sizeof err) == 0, "%s", err);
	for (size_t i = 0; i < n; i++) {
		rep_report *r = fixture(names[i]);
		ck_assert_msg(db_store_report(d, r, names[i], NULL, NULL, err, sizeof err) == 0, "%s", err);
		rep_free(r);
	}
	db_close(d);
}

START_TEST(merge_shards)
{
	static const char *const a[] = { "report-sim.json" };
	static const char *const b[] = { "report-hw.json", "report-sim.json", "report-bench.json" };
	char sa[160], sb[160], err[512] = "";
	unsigned added, skipped;
	db *d;
	snprintf(sa, sizeof sa, "%s/a.db", dir);
	snprintf(sb, sizeof sb, "%s/b.db", dir);
	make_shard(sa, a, 1);
	make_shard(sb, b, 3);
	d = open_db();
	ck_assert_msg(db_merge(d, sa, &added, &skipped, err, sizeof err) == 0, "%s", err);
	ck_assert(added == 1 && skipped == 0);
	ck_assert_msg(db_merge(d, sb, &added, &skipped, err, sizeof err) == 0, "%s", err);
	ck_assert(added == 2 && skipped == 1); /* the sim run is in both shards */
	ck_assert_int_eq(db_merge(d, sb, &added, &skipped, err, sizeof err), 0);
	ck_assert(added == 0 && skipped == 3); /* merging again adds nothing */
	expect_counts(d, 3, 5, 35, 12, 3);
	ck_assert_int_eq(db_count(d, "benchmarks"), 4);
	ck_assert(sql_num("SELECT count(*) FROM runs WHERE scenario_text = 'report-hw.json'") == 1);
	/* a source whose stored report no longer reads: nothing merged */
	sqlite3 *h;
	ck_assert_int_eq(sqlite3_open(sb, &h), SQLITE_OK);
	/* run 1 becomes a new key (copied first), run 3 fails: all rolled back */
	ck_assert_int_eq(sqlite3_exec(h, "UPDATE runs SET report = replace(report,"
				      " '\"seed\": 42', '\"seed\": 7') WHERE id = 1;"
				      "UPDATE runs SET report = '{' WHERE id = 3", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(h);
	ck_assert_int_eq(db_merge(d, sb, &added, &skipped, err, sizeof err), SIM_EPARSE);
	ck_assert_ptr_nonnull(strstr(err, "b.db: run 3:"));
	ck_assert(added == 0 && skipped == 0);
	expect_counts(d, 3, 5, 35, 12, 3);
	db_close(d);
}
END_TEST

START_TEST(digest_ignores_order_and_ids)
{
	static const char *const one[] = { "report-sim.json", "report-hw.json" };
	static const char *const two[] = { "report-hw.json", "report-sim.json" };
	static const char *const three[] = { "report-hw.json" };
	char p1[160], p2[160], p3[160], h[3][65], err[512] = "";
	const char *paths[3] = { p1, p2, p3 };
	int64_t n[3];
	snprintf(p1, sizeof p1, "%s/1.db", dir);
	snprintf(p2, sizeof p2, "%s/2.db", dir);
	snprintf(p3, sizeof p3, "%s/3.db", dir);
	make_shard(p1, one, 2);
	make_shard(p2, two, 2);
	make_shard(p3, three, 1);
	for (int i = 0; i < 3; i++) {
		db *d = NULL;
		ck_assert_int_eq(db_open(paths[i], &d, err, sizeof err), 0);
		ck_assert_msg(db_digest(d, h[i], &n[i], err, sizeof err) == 0, "%s", err);
		ck_assert_uint_eq(strlen(h[i]), 64);
		db_close(d);
	}
	ck_assert_str_eq(h[0], h[1]);
	ck_assert_str_ne(h[0], h[2]);
	ck_assert(n[0] == 2 && n[1] == 2 && n[2] == 1);
}
END_TEST

/* Runs SQL on a separate connection with the schema writable: a column
 * the schema declares NOT NULL let go of it, as a record damaged on disk
 * reads whatever the schema says. */
static void sql_exec(const char *sql)
{
	sqlite3 *h;
	char *msg = NULL;
	ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(h, sql, NULL, NULL, &msg) == SQLITE_OK, "%s", msg);
	sqlite3_close(h);
}

static void let_null(const char *table, const char *column)
{
	char sql[512];
	snprintf(sql, sizeof sql, "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql ="
		 " replace(sql, ' %s TEXT NOT NULL', ' %s TEXT') WHERE name = '%s';", column,
		 column, table);
	sql_exec(sql);
}

/* A NULL where the schema says NOT NULL (a damaged file, another tool's
 * database) is an error naming the run and the column, never a NULL
 * handed to the caller (plot strdup'ed it; runs printed "(null)"). */
START_TEST(null_columns_are_an_error)
{
	static const char *const cols[] = { "time", "scenario", "version", "source" };
	rep_report *sim = fixture("report-sim.json");
	int64_t id, ids[8];
	double acc[2] = { 0, 0 };
	char err[512], want[64], sql[128];
	db *d = open_db();
	ck_assert_msg(db_store_report(d, sim, NULL, &id, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(db_close(d), 0);
	for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) {
		let_null("runs", cols[i]);
		snprintf(sql, sizeof sql, "UPDATE runs SET %s = NULL", cols[i]);
		sql_exec(sql);
		d = open_db();
		ids[0] = 0, err[0] = 0;
		ck_assert_int_eq(db_list_runs(d, &(db_filter){ 0 }, count_run, ids, err, sizeof err),
				 SIM_EDB);
		ck_assert_int_eq(ids[0], 0);
		snprintf(want, sizeof want, "run %lld has no %s (", (long long)id, cols[i]);
		ck_assert_msg(strstr(err, want) && strstr(err, path), "%s", err);
		ck_assert_int_eq(db_close(d), 0);
		snprintf(sql, sizeof sql, "UPDATE runs SET %s = '%s'", cols[i],
			 strcmp(cols[i], "source") ? "x" : "sim");
		sql_exec(sql);
	}
	let_null("variants", "name");
	sql_exec("UPDATE variants SET name = NULL WHERE idx = 1");
	d = open_db();
	err[0] = 0;
	ck_assert_int_eq(db_series(d, NULL, "samples_per_s", sum_point, acc, err, sizeof err),
			 SIM_EDB);
	ck_assert_msg(strstr(err, "has no variant name"), "%s", err);
	ck_assert(acc[0] == 1); /* the first variant's point, then the damaged one */
	ck_assert_int_eq(db_close(d), 0);
	rep_free(sim);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("db");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, store_two_runs);
	tcase_add_test(tc, aborted_store_leaves_nothing);
	tcase_add_test(tc, killed_store_leaves_nothing);
	tcase_add_test(tc, migration_from_empty_file);
	tcase_add_test(tc, concurrent_creation);
	tcase_add_test(tc, read_only_open);
	tcase_add_test(tc, same_run_stored_once);
	tcase_add_test(tc, migration_keeps_copies);
	tcase_add_test(tc, bad_paths_and_reports);
	tcase_add_test(tc, target_checked_without_creating);
	tcase_add_test(tc, benchmarks_are_stored);
	tcase_add_test(tc, record_columns_follow_the_field_list);
	tcase_add_test(tc, collective_spread_columns);
	tcase_add_test(tc, find_run_by_key);
	tcase_add_test(tc, merge_shards);
	tcase_add_test(tc, digest_ignores_order_and_ids);
	tcase_add_test(tc, null_columns_are_an_error);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
