/* The results database in SQLite: schema migrations, one transaction per
 * stored run, prepared statements, every call checked with its message. */
#include "report/db.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <sqlite3.h>

#include "report/atomic.h"
#include "sim/err.h"

/* Schema version 1. A later version appends { N, "ALTER TABLE ..." } to
 * `migrations`; db_open applies, in order and in one transaction that also
 * reads the file's version, every step above it. Never edit a released step. */
static const char schema_v1[] =
	"CREATE TABLE runs ("
	" id INTEGER PRIMARY KEY,"
	" time TEXT NOT NULL,"                 /* UTC, ISO 8601 */
	" scenario TEXT NOT NULL,"
	" scenario_sha256 TEXT,"
	" scenario_file TEXT,"
	" scenario_text TEXT,"
	" seed INTEGER NOT NULL,"              /* uint64 stored as its int64 bit pattern */
	" version TEXT NOT NULL,"
	" source TEXT NOT NULL CHECK (source IN ('sim', 'hw')),"
	" point TEXT,"                         /* sweep point key, NULL outside sweeps */
	" report TEXT NOT NULL);"              /* the report JSON as written */
	"CREATE INDEX runs_by_scenario ON runs (scenario, scenario_sha256, point);"
	"CREATE TABLE variants ("
	" id INTEGER PRIMARY KEY,"
	" run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
	" idx INTEGER NOT NULL,"
	" name TEXT NOT NULL,"
	" network TEXT, storage TEXT, crypto TEXT, vswitch TEXT,"
	" speedup REAL,"
	" UNIQUE (run_id, name));"
	"CREATE TABLE metrics ("
	" variant_id INTEGER NOT NULL REFERENCES variants (id) ON DELETE CASCADE,"
	" name TEXT NOT NULL,"
	" value REAL NOT NULL,"                /* scalar value, or the mean */
	" p50 REAL, p99 REAL, ci95 REAL,"
	" PRIMARY KEY (variant_id, name));"
	"CREATE TABLE breakdown ("
	" variant_id INTEGER NOT NULL REFERENCES variants (id) ON DELETE CASCADE,"
	" component TEXT NOT NULL,"
	" seconds REAL NOT NULL,"
	" PRIMARY KEY (variant_id, component));"
	"CREATE TABLE collectives ("
	" variant_id INTEGER NOT NULL REFERENCES variants (id) ON DELETE CASCADE,"
	" idx INTEGER NOT NULL,"
	" op TEXT NOT NULL, algo TEXT NOT NULL, ranks INTEGER NOT NULL, bytes INTEGER NOT NULL,"
	" time_s REAL NOT NULL, algbw_GBps REAL NOT NULL, busbw_GBps REAL NOT NULL,"
	" PRIMARY KEY (variant_id, idx));"
	"CREATE TABLE benchmarks ("
	" run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
	" idx INTEGER NOT NULL,"
	" name TEXT NOT NULL, transport TEXT NOT NULL, memory TEXT, device TEXT,"
	" bytes INTEGER NOT NULL, ranks INTEGER NOT NULL, iters INTEGER NOT NULL,"
	" value REAL NOT NULL, unit TEXT NOT NULL, p50 REAL, p99 REAL, stddev REAL,"
	" PRIMARY KEY (run_id, idx));";

/* Version 2: a run is stored once per key (scenario, file hash, point, seed,
 * source); two sweeps of one scenario into one file stored every point
 * twice. Copies stored before this step are kept, numbered 1, 2, ... in
 * `copy` after the first (0), so the key holds without losing a row. Runs
 * without a file hash have no key (NULL never collides in SQLite); the
 * store finds them by their report instead. */
static const char schema_v2[] =
	"ALTER TABLE runs ADD COLUMN copy INTEGER NOT NULL DEFAULT 0;"
	"UPDATE runs SET copy = (SELECT count(*) FROM runs o WHERE o.scenario = runs.scenario"
	" AND o.scenario_sha256 = runs.scenario_sha256 AND ifnull(o.point, '') = ifnull(runs.point, '')"
	" AND o.seed = runs.seed AND o.source = runs.source AND o.id < runs.id)"
	" WHERE scenario_sha256 IS NOT NULL;"
	"CREATE UNIQUE INDEX runs_key ON runs"
	" (scenario, scenario_sha256, ifnull(point, ''), seed, source, copy);";

/* Version 3: a measured collective row's calls and spread (dpusim-hw
 * replay: time_s is the median of `calls`), NULL where absent. */
static const char schema_v3[] =
	"ALTER TABLE collectives ADD COLUMN calls INTEGER;"
	"ALTER TABLE collectives ADD COLUMN time_min_s REAL;"
	"ALTER TABLE collectives ADD COLUMN time_p10_s REAL;"
	"ALTER TABLE collectives ADD COLUMN time_p90_s REAL;";

static const struct migration {
	int version;
	const char *sql;
} migrations[] = {
	{ 1, schema_v1 },
	{ 2, schema_v2 },
	{ 3, schema_v3 },
};

enum stmt {
	S_RUN, S_VARIANT, S_METRIC, S_BREAKDOWN, S_COLLECTIVE, S_BENCH, S_N
};

static const char *const stmt_sql[S_N] = {
	[S_RUN] = "INSERT INTO runs (time, scenario, scenario_sha256, scenario_file, "
		  "scenario_text, seed, version, source, point, report) "
		  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[S_VARIANT] = "INSERT INTO variants (run_id, idx, name, network, storage, crypto, "
		      "vswitch, speedup) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[S_METRIC] = "INSERT INTO metrics (variant_id, name, value, p50, p99, ci95) "
		     "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[S_BREAKDOWN] = "INSERT INTO breakdown (variant_id, component, seconds) "
			"VALUES (?1, ?2, ?3)",
	/* collectives and benchmarks: after (owner, idx), the record's fields
	 * in report/report.h's order (store_record) */
	[S_COLLECTIVE] = "INSERT INTO collectives (variant_id, idx, op, algo, ranks, bytes, "
			 "time_s, algbw_GBps, busbw_GBps, calls, time_min_s, time_p10_s, "
			 "time_p90_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
			 "?13)",
	[S_BENCH] = "INSERT INTO benchmarks (run_id, idx, name, transport, memory, device, "
		    "bytes, ranks, iters, value, unit, p50, p99, stddev) "
		    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
};

struct db {
	sqlite3 *h;
	char *path;
	bool ro;        /* opened with db_open_ro: no statements to store with */
	sqlite3_stmt *st[S_N];
	int (*hook)(void *arg, unsigned step);
	void *hook_arg;
	unsigned step;
	char *errbuf;   /* where the current call reports */
	size_t errlen;
};

/* Record "path: what: sqlite message" and return SIM_EDB. */
static int db_fail(db *d, const char *what, ...) __attribute__((format(printf, 2, 3)));
static int db_fail(db *d, const char *what, ...)
{
	va_list ap;
	char said[1024];
	if (!d->errbuf || !d->errlen)
		return SIM_EDB;
	va_start(ap, what);
	sim_vfit(said, sizeof said, what, ap);
	va_end(ap);
	/* the path cut in its middle where long, never SQLite's reason */
	sim_fit(d->errbuf, d->errlen, "%s: %s%s%s", d->path, said, d->h ? ": " : "",
		d->h ? sqlite3_errmsg(d->h) : "");
	return SIM_EDB;
}

/* Copies the write-ahead log's committed runs into the database file
 * itself (a passive checkpoint: it waits for no reader, and a reader's
 * snapshot keeps what it still needs). Without it the runs of a sweep
 * stopped by a signal (Ctrl-C, a batch system's time limit) lived only in
 * NAME-wal until the next open: the file alone, copied or moved, held none
 * of them. The result is not checked: what is not copied now stays in
 * the log, as it would have anyway. */
static void into_main_file(db *d)
{
	sqlite3_wal_checkpoint_v2(d->h, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

/* Check an sqlite3 call: anything but OK/ROW/DONE reports call and location. */
#define DB_CHECK(d, call)                                                           \
	do {                                                                        \
		int rc_ = (call);                                                   \
		if (rc_ != SQLITE_OK && rc_ != SQLITE_ROW && rc_ != SQLITE_DONE)    \
			return db_fail((d), "%s failed (%s:%d)", #call, __FILE__,   \
				       __LINE__);                                   \
	} while (0)

static int exec(db *d, const char *sql)
{
	DB_CHECK(d, sqlite3_exec(d->h, sql, NULL, NULL, NULL));
	return 0;
}

/* 0 when the file has no schema yet. */
static int read_version(db *d, int *version)
{
	sqlite3_stmt *st = NULL;
	int rc;
	*version = 0;
	DB_CHECK(d, sqlite3_prepare_v2(d->h, "SELECT count(*) FROM sqlite_master WHERE "
				       "type = 'table' AND name = 'schema_version'", -1, &st, NULL));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 1) {
		sqlite3_finalize(st);
		DB_CHECK(d, sqlite3_prepare_v2(d->h, "SELECT max(version) FROM schema_version",
					       -1, &st, NULL));
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			*version = sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return db_fail(d, "reading the schema version");
	return 0;
}

static int apply(db *d, const struct migration *m)
{
	char sql[128];
	int err;
	snprintf(sql, sizeof sql, "%sINSERT INTO schema_version (version) VALUES (%d)",
		 m->version == 1 ? "CREATE TABLE schema_version (version INTEGER NOT NULL);" : "",
		 m->version);
	if ((err = exec(d, m->sql)) || (err = exec(d, sql)))
		return err;
	return 0;
}

/* The version check is inside the write transaction: read outside it, two
 * processes creating one new database both saw version 0 and the second
 * failed on "table runs already exists". BEGIN IMMEDIATE takes the write
 * lock first (waiting up to the busy timeout), so the second one reads the
 * version the first committed. Every step applies in this one transaction. */
static int migrate_locked(db *d)
{
	int version, err;
	size_t n = sizeof migrations / sizeof migrations[0];
	if ((err = read_version(d, &version)))
		return err;
	if (version > migrations[n - 1].version) {
		if (d->errbuf && d->errlen)
			sim_fit(d->errbuf, d->errlen, "%s: database schema version %d is newer "
				 "than this dpusim understands (%d)", d->path, version,
				 migrations[n - 1].version);
		return SIM_EDB;
	}
	for (size_t i = 0; i < n; i++)
		if (migrations[i].version > version && (err = apply(d, &migrations[i])))
			return err;
	return 0;
}

static int migrate(db *d)
{
	int err;
	if ((err = exec(d, "BEGIN IMMEDIATE")))
		return err;
	if ((err = migrate_locked(d)) || (err = exec(d, "COMMIT")))
		sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
	return err;
}

#define DB_BUSY_MS 10000  /* how long a call waits for another writer's lock */

/* Switches the file to WAL. The switch needs the database to itself and,
 * unlike other statements, does not wait through the busy handler: while
 * another process creates the same new file it fails at once with
 * SQLITE_BUSY, so it is retried here for as long as the busy timeout. */
static int switch_wal(db *d)
{
	sqlite3_stmt *st = NULL;
	const char *mode;
	bool wal = false;
	int rc = SQLITE_BUSY;
	for (int waited_ms = 0; rc == SQLITE_BUSY && waited_ms < DB_BUSY_MS; waited_ms += 10) {
		if (sqlite3_prepare_v2(d->h, "PRAGMA journal_mode = WAL", -1, &st, NULL) != SQLITE_OK)
			return db_fail(d, "preparing the WAL switch");
		if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			mode = (const char *)sqlite3_column_text(st, 0);
			wal = mode && !strcmp(mode, "wal");
		}
		sqlite3_finalize(st);
		if (rc == SQLITE_BUSY)
			sqlite3_sleep(10);
	}
	if (rc != SQLITE_ROW)
		return db_fail(d, "switching to WAL journal mode");
	return wal ? 0 : db_fail(d, "cannot switch to WAL journal mode");
}

static int setup(db *d)
{
	int err;
	DB_CHECK(d, sqlite3_busy_timeout(d->h, DB_BUSY_MS));
	if ((err = exec(d, "PRAGMA foreign_keys = ON")) || (err = switch_wal(d)) ||
	    (err = migrate(d)))
		return err;
	for (int i = 0; i < S_N; i++)
		DB_CHECK(d, sqlite3_prepare_v2(d->h, stmt_sql[i], -1, &d->st[i], NULL));
	return 0;
}

/* SQLite takes a short file that is no database (a 1-byte JSON file) as a
 * new one and writes its schema over it; so an existing file must be a
 * SQLite file, or empty where allow_empty (a new database made with touch). */
static int check_header(const char *path, bool allow_empty, char *errbuf, size_t errlen)
{
	static const char magic[16] = "SQLite format 3";
	char head[16];
	size_t n = 0;
	bool unreadable;
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0; /* missing or unreadable (a folder): SQLite creates it or says why not */
	n = fread(head, 1, sizeof head, f);
	unreadable = ferror(f);
	fclose(f);
	if (unreadable || (n == 0 && allow_empty) ||
	    (n == sizeof head && !memcmp(head, magic, sizeof head)))
		return 0;
	if (errbuf && errlen)
		sim_fit(errbuf, errlen, "%s: not a results database (%s)", path,
			 n ? "no SQLite header" : "an empty file");
	return SIM_EDB;
}

/* A file with SQLite's header and garbage after it fails at the first
 * statement: said as such, not as the statement that failed. */
static void not_a_db(db *d)
{
	if (d->h && sqlite3_errcode(d->h) == SQLITE_NOTADB && d->errbuf && d->errlen)
		sim_fit(d->errbuf, d->errlen, "%s: not a results database (SQLite: %s)", d->path,
			 sqlite3_errmsg(d->h));
}

/* Whether SQLite's companions of path (PATH-wal, PATH-shm, PATH-journal)
 * fit its folder's limit on a file's name. One that does not fails the
 * switch to WAL after SQLite has made the database: refused first, so that
 * no empty file is left behind. */
static int check_name(const char *path, char *errbuf, size_t errlen)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	char dir[4096];
	long name_max;
	size_t n = strlen(base);
	atomic_dir_of(path, dir, sizeof dir);
	name_max = pathconf(dir, _PC_NAME_MAX);
	if (name_max <= 0) /* no limit, or no such folder: SQLite says why */
		return 0;
	if (n + strlen("-journal") <= (size_t)name_max)
		return 0;
	if (errbuf && errlen)
		sim_fit(errbuf, errlen, "%s: a results database's name can be at most %ld bytes "
			 "(SQLite keeps NAME-journal, NAME-wal and NAME-shm beside it), not %zu",
			 path, name_max - (long)strlen("-journal"), n);
	return SIM_EDB;
}

int db_open(const char *path, db **out, char *errbuf, size_t errlen)
{
	db *d;
	int err;
	*out = NULL;
	if ((err = check_header(path, true, errbuf, errlen)) ||
	    (err = check_name(path, errbuf, errlen)))
		return err;
	d = calloc(1, sizeof *d);
	if (!d || !(d->path = strdup(path))) {
		free(d);
		return SIM_ENOMEM;
	}
	d->errbuf = errbuf;
	d->errlen = errlen;
	if (sqlite3_open_v2(path, &d->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK)
		err = db_fail(d, "cannot open database");
	else if (sqlite3_db_readonly(d->h, "main") == 1)  /* SQLite fell back to reading */
		err = db_fail(d, "cannot write to the database (a read-only file or mount)");
	else
		err = setup(d);
	if (err) {
		not_a_db(d);
		db_close(d);
		return err;
	}
	*out = d;
	return 0;
}

/* "file:PATH?immutable=1" with PATH percent-encoded (a '?' or '#' in a
 * file name would end the path part of the URI). malloc'd, or NULL. */
static char *immutable_uri(const char *path)
{
	static const char keep[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789/._~-";
	size_t n = strlen(path);
	char *uri = malloc(3 * n + 32), *at = uri;
	if (!uri)
		return NULL;
	at += sprintf(at, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		at += strchr(keep, *p) ? sprintf(at, "%c", *p) : sprintf(at, "%%%02X", *p);
	strcpy(at, "?immutable=1");
	return uri;
}

/* True when PATH-wal holds frames that only a reader able to create or
 * write PATH-shm can see (an immutable open would miss them). */
static bool wal_has_frames(const char *path)
{
	char wal[4096];
	struct stat st;
	snprintf(wal, sizeof wal, "%s-wal", path);
	return stat(wal, &st) == 0 && st.st_size > 0;
}

/* True when this process may write path and the folder that holds it. A
 * connection opened read-only cannot remove the -wal and -shm files when it
 * closes, and left them beside every file it read; where writing is
 * allowed, the connection is opened read-write (without creating, and this
 * module never writes through it) so that closing removes them. */
static bool writable(const char *path)
{
	char dir[4096];
	atomic_dir_of(path, dir, sizeof dir);
	return access(path, W_OK) == 0 && access(dir, W_OK | X_OK) == 0;
}

/* Opens d->h (for reading only) and reads the schema version. A WAL file is read
 * through PATH-shm, which a reader creates; where the folder is not
 * writable (a read-only mount, another user's folder) SQLite says
 * SQLITE_READONLY_DIRECTORY, and the file, when its log is empty (every
 * writer closed), is read as immutable instead: no lock, no -shm. */
static int open_readonly(db *d, int *version)
{
	char *uri;
	int err;
	if (sqlite3_open_v2(d->path, &d->h, writable(d->path) ? SQLITE_OPEN_READWRITE :
			    SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return db_fail(d, "cannot open database");
	DB_CHECK(d, sqlite3_busy_timeout(d->h, DB_BUSY_MS));
	if (!(err = read_version(d, version)) ||
	    sqlite3_extended_errcode(d->h) != SQLITE_READONLY_DIRECTORY)
		return err;
	if (wal_has_frames(d->path))
		return db_fail(d, "cannot read: the folder is not writable and the write-ahead log "
			       "%s-wal still holds runs (open it once where it is writable)", d->path);
	sqlite3_close(d->h);
	d->h = NULL;
	if (!(uri = immutable_uri(d->path)))
		return SIM_ENOMEM;
	err = sqlite3_open_v2(uri, &d->h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
	free(uri);
	if (err != SQLITE_OK)
		return db_fail(d, "cannot open database");
	return read_version(d, version);
}

int db_open_ro(const char *path, db **out, char *errbuf, size_t errlen)
{
	db *d;
	int err, version = 0;
	*out = NULL;
	if ((err = check_header(path, false, errbuf, errlen)))
		return err;
	if (!(d = calloc(1, sizeof *d)) || !(d->path = strdup(path))) {
		free(d);
		return SIM_ENOMEM;
	}
	*d = (db){ .path = d->path, .ro = true, .errbuf = errbuf, .errlen = errlen };
	/* An older schema reads as well: the queries use no column that a
	 * later step adds. A newer one might not mean what they expect. */
	if (!(err = open_readonly(d, &version)) && version < 1) {
		sim_fit(errbuf, errlen, "%s: not a results database (no schema)", path);
		err = SIM_EDB;
	} else if (!err && version > DB_SCHEMA_VERSION) {
		sim_fit(errbuf, errlen, "%s: database schema version %d is newer than this dpusim "
			 "understands (%d)", path, version, DB_SCHEMA_VERSION);
		err = SIM_EDB;
	}
	if (err) {
		not_a_db(d);
		db_close(d);
		return err;
	}
	*out = d;
	return 0;
}

int db_make_parent(const char *path, char *errbuf, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int err = 0;
	if (!slash || slash == path)
		return 0;
	if (!(dir = strndup(path, (size_t)(slash - path))))
		return SIM_ENOMEM;
	if (mkdir(dir, 0777) && errno != EEXIST) {
		if (errbuf && errlen)
			sim_fit(errbuf, errlen, "%s: cannot create folder: %s", dir, strerror(errno));
		err = SIM_EIO;
	}
	free(dir);
	return err;
}

/* Whether folder dir is there and writable: 0, or the errno that says why
 * not (ENOTDIR for a file). */
static int writable_dir(const char *dir)
{
	struct stat st;
	if (stat(dir, &st))
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	return access(dir, W_OK | X_OK) ? errno : 0;
}

int db_check_target(const char *path, char *errbuf, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char dir[4096], up[4096];
	int err, why;
	struct stat st;
	if ((err = check_name(path, errbuf, errlen)) || (err = check_header(path, true, errbuf, errlen)))
		return err;
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return sim_errbuf(errbuf, errlen, SIM_EDB, "%s: a folder, not a results database", path);
	if (strlen(path) >= sizeof dir)
		return sim_errbuf(errbuf, errlen, SIM_EIO, "%s: %s", path, strerror(ENAMETOOLONG));
	atomic_dir_of(path, dir, sizeof dir);
	if (!(why = writable_dir(dir)))
		return 0;
	if (why != ENOENT || !slash || slash == path)
		return sim_errbuf(errbuf, errlen, SIM_EIO, "%s: cannot write in folder '%s': %s", path,
				  dir, strerror(why));
	/* missing: db_make_parent makes it in its parent */
	atomic_dir_of(dir, up, sizeof up);
	if ((why = writable_dir(up)))
		return sim_errbuf(errbuf, errlen, SIM_EIO, "%s: cannot create folder: %s", dir,
				  strerror(why));
	return 0;
}

int db_close(db *d)
{
	int err = 0;
	if (!d)
		return 0;
	for (int i = 0; i < S_N; i++)
		sqlite3_finalize(d->st[i]);
	if (d->h && sqlite3_close(d->h) != SQLITE_OK)
		err = SIM_EDB;
	free(d->path);
	free(d);
	return err;
}

int db_schema_version(db *d)
{
	int v = -1;
	d->errbuf = NULL;
	return read_version(d, &v) ? -1 : v;
}

void db_set_fault_hook(db *d, int (*hook)(void *arg, unsigned step), void *arg)
{
	d->hook = hook;
	d->hook_arg = arg;
}

/* ---- storing ------------------------------------------------------------ */

/* A handle from db_open_ro cannot store: say so rather than crash on the
 * statements it never prepared. */
static int read_only(db *d)
{
	if (d->errbuf && d->errlen)
		sim_fit(d->errbuf, d->errlen, "%s: opened read-only, cannot store runs", d->path);
	return SIM_EDB;
}

static int bind_text(db *d, sqlite3_stmt *st, int i, const char *s)
{
	DB_CHECK(d, s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i));
	return 0;
}

/* Bind a double, NULL when NaN (absent). */
static int bind_opt(db *d, sqlite3_stmt *st, int i, double x)
{
	DB_CHECK(d, !isnan(x) ? sqlite3_bind_double(st, i, x) : sqlite3_bind_null(st, i));
	return 0;
}

/* Run a bound insert statement; reset and unbind it for the next use. */
static int step_insert(db *d, sqlite3_stmt *st)
{
	int rc;
	if (d->hook && d->hook(d->hook_arg, d->step++)) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		if (d->errbuf && d->errlen)
			sim_fit(d->errbuf, d->errlen, "%s: insert aborted by the fault hook",
				 d->path);
		return SIM_EDB;
	}
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return db_fail(d, "insert failed");
	return 0;
}

static int store_stats(db *d, int64_t vid, const rep_variant *v)
{
	sqlite3_stmt *st = d->st[S_METRIC];
	size_t nm, nb;
	const rep_metric_def *defs = rep_metric_defs(&nm);
	const char *const *bd = rep_breakdown_names(&nb);
	int err;
	for (size_t i = 0; i < nm; i++) {
		rep_stat s = { .p50 = NAN, .p99 = NAN, .ci95 = NAN };
		if (defs[i].kind == REP_STAT ? !rep_variant_stat(v, defs[i].name, &s)
					     : !rep_variant_metric(v, defs[i].name, &s.mean))
			continue;
		DB_CHECK(d, sqlite3_bind_int64(st, 1, vid));
		if ((err = bind_text(d, st, 2, defs[i].name)) || (err = bind_opt(d, st, 3, s.mean)) ||
		    (err = bind_opt(d, st, 4, s.p50)) || (err = bind_opt(d, st, 5, s.p99)) ||
		    (err = bind_opt(d, st, 6, s.ci95)) || (err = step_insert(d, st)))
			return err;
	}
	st = d->st[S_BREAKDOWN];
	for (size_t i = 0; i < nb; i++) {
		double x;
		if (!rep_variant_breakdown(v, bd[i], &x))
			continue;
		DB_CHECK(d, sqlite3_bind_int64(st, 1, vid));
		if ((err = bind_text(d, st, 2, bd[i])) || (err = bind_opt(d, st, 3, x)) ||
		    (err = step_insert(d, st)))
			return err;
	}
	return 0;
}

/* Inserts record rec as row idx of its owner (the statement's first two
 * columns), its fields (report/report.h's list) in the columns after. */
static int store_record(db *d, sqlite3_stmt *st, int64_t owner, size_t idx, const rep_field *f,
			size_t nf, const void *rec)
{
	int err = 0;
	DB_CHECK(d, sqlite3_bind_int64(st, 1, owner));
	DB_CHECK(d, sqlite3_bind_int64(st, 2, (sqlite3_int64)idx));
	for (size_t k = 0; k < nf && !err; k++) {
		int col = 3 + (int)k;
		if (f[k].type == REP_F_STR)
			err = bind_text(d, st, col, rep_field_str(&f[k], rec));
		else if (f[k].type == REP_F_NUM)
			err = bind_opt(d, st, col, rep_field_num(&f[k], rec));
		else if (!f[k].required && !rep_field_u64(&f[k], rec))
			DB_CHECK(d, sqlite3_bind_null(st, col));  /* an absent optional count */
		else
			DB_CHECK(d, sqlite3_bind_int64(st, col, (sqlite3_int64)rep_field_u64(&f[k], rec)));
	}
	return err ? err : step_insert(d, st);
}

static int store_variant(db *d, int64_t run_id, const rep_report *r, size_t idx)
{
	const rep_variant *v = rep_variant_at(r, idx);
	sqlite3_stmt *st = d->st[S_VARIANT];
	size_t nk;
	const char *const *keys = rep_offload_keys(&nk);
	double speedup = NAN;
	int64_t vid;
	int err;
	rep_speedup(r, rep_variant_name(v), &speedup);
	DB_CHECK(d, sqlite3_bind_int64(st, 1, run_id));
	DB_CHECK(d, sqlite3_bind_int64(st, 2, (sqlite3_int64)idx));
	if ((err = bind_text(d, st, 3, rep_variant_name(v))))
		return err;
	for (size_t k = 0; k < nk; k++)
		if ((err = bind_text(d, st, 4 + (int)k, rep_variant_offload(v, keys[k]))))
			return err;
	if ((err = bind_opt(d, st, 8, speedup)) || (err = step_insert(d, st)))
		return err;
	vid = sqlite3_last_insert_rowid(d->h);
	err = store_stats(d, vid, v);
	for (size_t i = 0; i < rep_variant_ncollectives(v) && !err; i++)
		err = store_record(d, d->st[S_COLLECTIVE], vid, i, rep_collective_fields,
				   REP_COLLECTIVE_NFIELDS, rep_variant_collective(v, i));
	return err;
}

/* The JSON of r as a malloc'd string, or NULL. */
static char *report_json(const rep_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;
	if (!f)
		return NULL;
	err = rep_write_json(r, f);
	if (fclose(f) || err) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Insert run r and everything under it; `stamp` is its time (NULL: now). */
static int store_run(db *d, const rep_report *r, const char *text, const char *json,
		     const char *stamp, int64_t *run_id)
{
	sqlite3_stmt *st = d->st[S_RUN];
	const rep_scenario *sc = rep_get_scenario(r);
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int err;
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	if (stamp)
		snprintf(when, sizeof when, "%s", stamp);
	DB_CHECK(d, sqlite3_bind_int64(st, 6, (sqlite3_int64)sc->seed));
	if ((err = bind_text(d, st, 1, when)) || (err = bind_text(d, st, 2, sc->name)) ||
	    (err = bind_text(d, st, 3, sc->sha256)) || (err = bind_text(d, st, 4, sc->file)) ||
	    (err = bind_text(d, st, 5, text)) || (err = bind_text(d, st, 7, rep_get_version(r))) ||
	    (err = bind_text(d, st, 8, rep_source_name(rep_get_source(r)))) ||
	    (err = bind_text(d, st, 9, sc->point)) || (err = bind_text(d, st, 10, json)) ||
	    (err = step_insert(d, st)))
		return err;
	*run_id = sqlite3_last_insert_rowid(d->h);
	for (size_t i = 0; i < rep_nvariants(r) && !err; i++)
		err = store_variant(d, *run_id, r, i);
	for (size_t i = 0; i < rep_nbenchmarks(r) && !err; i++)
		err = store_record(d, d->st[S_BENCH], *run_id, i, rep_benchmark_fields,
				   REP_BENCHMARK_NFIELDS, rep_benchmark_at(r, i));
	return err;
}

/* Id of the run stored as the same run as r (json: its report as text):
 * the same key where r names its file hash; without one, nothing says
 * which input r ran, and only the very same report is the same run.
 * 0 when none, or a negative code. */
static int64_t find_same(db *d, const rep_report *r, const char *json)
{
	static const char sql[] = "SELECT max(id) FROM runs WHERE scenario = ?1"
				  " AND scenario_sha256 IS NULL AND report = ?2";
	const rep_scenario *sc = rep_get_scenario(r);
	db_key k = { .scenario = sc->name, .sha256 = sc->sha256, .point = sc->point,
		     .seed = sc->seed, .source = rep_source_name(rep_get_source(r)) };
	sqlite3_stmt *st = NULL;
	int64_t id = 0;
	int rc, err;
	if (sc->sha256)
		return db_find_run(d, &k, d->errbuf, d->errlen);
	DB_CHECK(d, sqlite3_prepare_v2(d->h, sql, -1, &st, NULL));
	if ((err = bind_text(d, st, 1, sc->name)) || (err = bind_text(d, st, 2, json))) {
		sqlite3_finalize(st);
		return err;
	}
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? id : db_fail(d, "looking up a run");
}

/* Insert-or-skip, inside the caller's write transaction (so no other
 * process stores the same run between the look-up and the insert). */
static int store_once(db *d, const rep_report *r, const char *text, const char *json,
		      const char *stamp, int64_t *run_id, bool *added)
{
	int64_t id = find_same(d, r, json);
	int err;
	*added = false;
	if (id < 0)
		return (int)id;
	if (id > 0) {
		*run_id = id;
		return 0;
	}
	err = store_run(d, r, text, json, stamp, run_id);
	*added = !err;
	return err;
}

/* The counts stored in INTEGER columns (SQLite's are signed 64-bit): above
 * 2^63-1 they would come back negative. The seed alone is stored as its bit
 * pattern and read back as unsigned. true (why: the JSON path and value)
 * when r holds one. */
/* Whether a count of rec (record i under the JSON path at) is above what
 * the database holds; why: that path and the value. */
static bool field_too_large(const rep_field *f, size_t nf, const void *rec, const char *at,
			    size_t i, char *why, size_t n)
{
	for (size_t k = 0; k < nf; k++)
		if (f[k].type == REP_F_U64 && rep_field_u64(&f[k], rec) > INT64_MAX)
			return snprintf(why, n, "%s%zu/%s = %llu is above the largest integer the "
					"database stores (2^63-1)", at, i, f[k].key,
					(unsigned long long)rep_field_u64(&f[k], rec)), true;
	return false;
}

static bool too_large(const rep_report *r, char *why, size_t n)
{
	for (size_t v = 0; v < rep_nvariants(r); v++)
		for (size_t i = 0; i < rep_variant_ncollectives(rep_variant_at(r, v)); i++) {
			char at[64];
			snprintf(at, sizeof at, "/variants/%zu/collectives/", v);
			if (field_too_large(rep_collective_fields, REP_COLLECTIVE_NFIELDS,
					    rep_variant_collective(rep_variant_at(r, v), i), at, i,
					    why, n))
				return true;
		}
	for (size_t i = 0; i < rep_nbenchmarks(r); i++)
		if (field_too_large(rep_benchmark_fields, REP_BENCHMARK_NFIELDS,
				    rep_benchmark_at(r, i), "/benchmarks/", i, why, n))
			return true;
	return false;
}

int db_store_report(db *d, const rep_report *r, const char *scenario_text, int64_t *run_id,
		    bool *added, char *errbuf, size_t errlen)
{
	char why[256];
	char *json;
	int64_t id = 0;
	bool fresh = false;
	int err;
	d->errbuf = errbuf;
	d->errlen = errlen;
	d->step = 0;
	if (d->ro)
		return read_only(d);
	if (rep_validate(r, why, sizeof why)) {
		if (errbuf && errlen)
			sim_fit(errbuf, errlen, "%s: refusing an invalid report: %s", d->path, why);
		return SIM_EINVAL;
	}
	if (too_large(r, why, sizeof why)) {
		if (errbuf && errlen)
			sim_fit(errbuf, errlen, "%s: refusing the report: %s", d->path, why);
		return SIM_ERANGE;
	}
	if (!(json = report_json(r)))
		return SIM_ENOMEM;
	if (!(err = exec(d, "BEGIN IMMEDIATE"))) {
		err = store_once(d, r, scenario_text, json, NULL, &id, &fresh);
		if (!err)
			err = exec(d, "COMMIT");
		if (err)
			sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
	}
	if (!err && fresh)
		into_main_file(d);
	free(json);
	if (!err && run_id)
		*run_id = id;
	if (added)
		*added = !err && fresh;
	return err;
}

/* ---- keys and merging ---------------------------------------------------- */

int64_t db_find_run(db *d, const db_key *k, char *errbuf, size_t errlen)
{
	static const char sql[] =
		"SELECT max(id) FROM runs WHERE scenario = ?1 AND scenario_sha256 IS ?2"
		" AND ifnull(point, '') = ifnull(?3, '') AND seed = ?4 AND source = ?5";
	sqlite3_stmt *st = NULL;
	int64_t id = 0;
	int rc, err;
	d->errbuf = errbuf;
	d->errlen = errlen;
	DB_CHECK(d, sqlite3_prepare_v2(d->h, sql, -1, &st, NULL));
	sqlite3_bind_int64(st, 4, (sqlite3_int64)k->seed);
	if ((err = bind_text(d, st, 1, k->scenario)) || (err = bind_text(d, st, 2, k->sha256)) ||
	    (err = bind_text(d, st, 3, k->point)) || (err = bind_text(d, st, 5, k->source))) {
		sqlite3_finalize(st);
		return err;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? id : db_fail(d, "looking up a run");
}

/* Copy one source row (time, scenario text, report JSON) unless the same
 * run is already stored (the rule of db_store_report). *added is set when
 * it was copied. */
static int merge_row(db *d, sqlite3_stmt *src, const char *src_path, bool *added)
{
	char name[64], why[512];
	rep_report *r = NULL;
	const char *json = (const char *)sqlite3_column_text(src, 3);
	int64_t id;
	int err;
	*added = false;
	snprintf(name, sizeof name, "run %lld", (long long)sqlite3_column_int64(src, 0));
	if (rep_read_string(name, json ? json : "", json ? strlen(json) : 0, &r, why, sizeof why)) {
		if (d->errbuf && d->errlen)
			sim_fit(d->errbuf, d->errlen, "%s: %s", src_path, why);
		return SIM_EPARSE;
	}
	err = store_once(d, r, (const char *)sqlite3_column_text(src, 2), json,
			 (const char *)sqlite3_column_text(src, 1), &id, added);
	rep_free(r);
	return err;
}

static int merge_all(db *d, db *s, const char *src_path, unsigned *added, unsigned *skipped)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;
	if (sqlite3_prepare_v2(s->h, "SELECT id, time, scenario_text, report FROM runs ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(s, "reading runs");
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		bool copied;
		err = merge_row(d, st, src_path, &copied);
		*added += copied;
		*skipped += !err && !copied;
	}
	if (!err && rc != SQLITE_DONE)
		err = db_fail(s, "reading runs");
	sqlite3_finalize(st);
	return err;
}

int db_merge(db *d, const char *src_path, unsigned *added, unsigned *skipped, char *errbuf,
	     size_t errlen)
{
	db *s = NULL;
	int err;
	*added = *skipped = 0;
	d->errbuf = errbuf;
	d->errlen = errlen;
	if (d->ro)
		return read_only(d);
	if ((err = db_open_ro(src_path, &s, errbuf, errlen)))
		return err;
	s->errbuf = d->errbuf = errbuf;
	s->errlen = d->errlen = errlen;
	d->step = 0;
	if (!(err = exec(d, "BEGIN IMMEDIATE"))) {
		err = merge_all(d, s, src_path, added, skipped);
		if (!err)
			err = exec(d, "COMMIT");
		if (err) {
			sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
			*added = *skipped = 0;
		}
	}
	if (!err && *added)
		into_main_file(d);
	db_close(s);
	return err;
}

/* ---- queries ------------------------------------------------------------ */

static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* Step through st calling each(row) until done; finalizes st. */
static int walk(db *d, sqlite3_stmt *st, int (*each)(sqlite3_stmt *st, void *ctx), void *ctx)
{
	int rc, ret = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((ret = each(st, ctx)))
			break;
	if (!ret && rc != SQLITE_DONE)
		ret = db_fail(d, "query failed");
	sqlite3_finalize(st);
	return ret;
}

/* A listing query: its errors into errbuf (errlen bytes), *st: sql
 * prepared, its ?1 and ?2 bound to the strings a and b (NULL: SQL NULL);
 * nothing to finalize on failure. */
static int prepare_two(db *d, char *errbuf, size_t errlen, const char *sql, const char *a,
		       const char *b, sqlite3_stmt **st)
{
	int err;
	d->errbuf = errbuf;
	d->errlen = errlen;
	DB_CHECK(d, sqlite3_prepare_v2(d->h, sql, -1, st, NULL));
	if ((err = bind_text(d, *st, 1, a)) || (err = bind_text(d, *st, 2, b))) {
		sqlite3_finalize(*st);
		return err;
	}
	return 0;
}

/* Text column i of st, which the schema declares NOT NULL, into *out; a
 * NULL there (a file damaged on disk, whose record says NULL whatever the
 * schema, or a database dpusim did not write) is SIM_EDB with the run and
 * the column said, never a NULL handed to a caller that prints it. */
static int need_text(db *d, sqlite3_stmt *st, int i, int64_t run, const char *what,
		     const char **out)
{
	if ((*out = col_text(st, i)))
		return 0;
	if (d->errbuf && d->errlen)
		sim_fit(d->errbuf, d->errlen, "%s: run %lld has no %s (a damaged database, or one "
			"dpusim did not write)", d->path, (long long)run, what);
	return SIM_EDB;
}

struct run_ctx {
	db *d;
	int (*cb)(const db_run *run, void *arg);
	void *arg;
};

static int each_run(sqlite3_stmt *st, void *ctx)
{
	struct run_ctx *c = ctx;
	db_run run = {
		.id = sqlite3_column_int64(st, 0), .sha256 = col_text(st, 3),
		.seed = (uint64_t)sqlite3_column_int64(st, 4), .point = col_text(st, 7),
		.variants = col_text(st, 8) ? col_text(st, 8) : "",
	};
	int err;
	if ((err = need_text(c->d, st, 1, run.id, "time", &run.time)) ||
	    (err = need_text(c->d, st, 2, run.id, "scenario", &run.scenario)) ||
	    (err = need_text(c->d, st, 5, run.id, "version", &run.version)) ||
	    (err = need_text(c->d, st, 6, run.id, "source", &run.source)))
		return err;
	return c->cb(&run, c->arg);
}

int db_list_runs(db *d, const db_filter *f, int (*cb)(const db_run *run, void *arg), void *arg,
		 char *errbuf, size_t errlen)
{
	static const char sql[] =
		"SELECT r.id, r.time, r.scenario, r.scenario_sha256, r.seed, r.version, r.source,"
		" r.point, (SELECT group_concat(v.name || '=' ||"
		"   ifnull(printf('%.4g', v.speedup), '-'), ' ')"
		"   FROM (SELECT name, speedup FROM variants WHERE run_id = r.id ORDER BY idx) v)"
		" FROM runs r"
		" WHERE (?1 IS NULL OR r.scenario = ?1)"
		" AND (?2 IS NULL OR EXISTS (SELECT 1 FROM variants w"
		"      WHERE w.run_id = r.id AND w.name = ?2))"
		" ORDER BY r.id DESC LIMIT ?3";
	sqlite3_stmt *st = NULL;
	struct run_ctx c = { .d = d, .cb = cb, .arg = arg };
	int err = prepare_two(d, errbuf, errlen, sql, f->scenario, f->variant, &st);
	if (err)
		return err;
	sqlite3_bind_int64(st, 3, f->limit ? (sqlite3_int64)f->limit : -1);
	return walk(d, st, each_run, &c);
}

struct point_ctx {
	db *d;
	int (*cb)(const db_point *p, void *arg);
	void *arg;
};

static int each_point(sqlite3_stmt *st, void *ctx)
{
	struct point_ctx *c = ctx;
	db_point p = { .run_id = sqlite3_column_int64(st, 0), .point = col_text(st, 1),
		       .value = sqlite3_column_double(st, 3) };
	int err = need_text(c->d, st, 2, p.run_id, "variant name", &p.variant);
	return err ? err : c->cb(&p, c->arg);
}

int db_series(db *d, const char *scenario, const char *what,
	      int (*cb)(const db_point *p, void *arg), void *arg, char *errbuf, size_t errlen)
{
	static const char metric_sql[] =
		"SELECT r.id, r.point, v.name, m.value FROM runs r"
		" JOIN variants v ON v.run_id = r.id JOIN metrics m ON m.variant_id = v.id"
		" WHERE m.name = ?2 AND (?1 IS NULL OR r.scenario = ?1) ORDER BY r.id, v.idx";
	static const char speedup_sql[] =
		"SELECT r.id, r.point, v.name, v.speedup FROM runs r"
		" JOIN variants v ON v.run_id = r.id"
		" WHERE v.speedup IS NOT NULL AND (?1 IS NULL OR r.scenario = ?1)"
		" AND ?2 = 'speedup' ORDER BY r.id, v.idx";
	sqlite3_stmt *st = NULL;
	struct point_ctx c = { .d = d, .cb = cb, .arg = arg };
	int err = prepare_two(d, errbuf, errlen, strcmp(what, "speedup") ? metric_sql : speedup_sql,
			      scenario, what, &st);
	if (err)
		return err;
	return walk(d, st, each_point, &c);
}

int db_load_report(db *d, int64_t id, rep_report **out, char *errbuf, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	char name[4200]; /* the path, then a run id: a stored report's errors name both */
	int rc, err;
	*out = NULL;
	d->errbuf = errbuf;
	d->errlen = errlen;
	DB_CHECK(d, sqlite3_prepare_v2(d->h, "SELECT report FROM runs WHERE id = ?1", -1, &st,
				       NULL));
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		if (rc == SQLITE_DONE) {
			if (errbuf && errlen)
				sim_fit(errbuf, errlen, "%s: no run %lld", d->path, (long long)id);
			return SIM_ENOENT;
		}
		return db_fail(d, "reading run %lld", (long long)id);
	}
	/* "DB: run 10:56:15: ..." as db_merge says it; "run 10:56:15" alone
	 * read as a time and named no file */
	snprintf(name, sizeof name, "%s: run %lld", d->path, (long long)id);
	err = rep_read_string(name, col_text(st, 0), (size_t)sqlite3_column_bytes(st, 0), out,
			      errbuf, errlen);
	sqlite3_finalize(st);
	return err;
}

/* Feed one field, length first, so that field boundaries are part of the
 * digest ("ab","c" and "a","bc" differ). */
static int digest_field(EVP_MD_CTX *md, const void *p, size_t len)
{
	uint64_t n = len;
	return EVP_DigestUpdate(md, &n, sizeof n) && EVP_DigestUpdate(md, p ? p : "", len);
}

static int digest_rows(db *d, sqlite3_stmt *st, EVP_MD_CTX *md, int64_t *nruns)
{
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < 6; c++)
			if (!digest_field(md, sqlite3_column_blob(st, c),
					  (size_t)sqlite3_column_bytes(st, c)))
				return SIM_ENOMEM;
		(*nruns)++;
	}
	return rc == SQLITE_DONE ? 0 : db_fail(d, "reading runs");
}

int db_digest(db *d, char hex[65], int64_t *nruns, char *errbuf, size_t errlen)
{
	static const char sql[] =
		"SELECT scenario, scenario_sha256, point, CAST(seed AS TEXT), source, report"
		" FROM runs ORDER BY scenario, scenario_sha256, point, seed, source, report";
	unsigned char out[EVP_MAX_MD_SIZE];
	unsigned int outlen = 0;
	sqlite3_stmt *st = NULL;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	int64_t n = 0;
	int err;
	d->errbuf = errbuf;
	d->errlen = errlen;
	if (!md)
		return SIM_ENOMEM;
	if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK)
		err = db_fail(d, "reading runs");
	else if (!EVP_DigestInit_ex(md, EVP_sha256(), NULL))
		err = SIM_ENOMEM;
	else if (!(err = digest_rows(d, st, md, &n)) && !EVP_DigestFinal_ex(md, out, &outlen))
		err = SIM_ENOMEM;
	sqlite3_finalize(st);
	EVP_MD_CTX_free(md);
	for (unsigned i = 0; !err && i < 32 && outlen == 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", out[i]);
	if (nruns)
		*nruns = err ? 0 : n;
	return err;
}

int64_t db_count(db *d, const char *table)
{
	static const char *const tables[] = { "runs", "variants", "metrics", "breakdown",
					      "collectives", "benchmarks" };
	char sql[64];
	sqlite3_stmt *st = NULL;
	int64_t n = SIM_EDB;
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		if (strcmp(table, tables[i]))
			continue;
		snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[i]);
		if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		return n;
	}
	return SIM_EINVAL;
}
