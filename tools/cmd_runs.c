/* dpusim runs: list what the results database holds; dpusim import: store
 * report files (from dpusim-hw, or runs made elsewhere) into it. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/err.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "report/db.h"
#include "report/report.h"

/* Open an existing database for reading: listing must not create an empty
 * one, nor need write access (a read-only mount, another user's file). */
static int open_existing(const char *path, db **d)
{
	if (access(path, F_OK)) {
		cli_error("%s: no results database (%s); 'dpusim run --db' and 'dpusim import' "
			  "create one", path, strerror(errno));
		return CLI_USAGE;
	}
	return cli_open_db_ro(path, d);
}

static int print_run(const db_run *r, void *arg)
{
	unsigned *n = arg;
	if ((*n)++ == 0)
		printf("%-5s %-20s %-6s %-24s %-28s %6s  %s\n", "id", "time", "source", "scenario",
		       "point", "seed", "variants (speedup)");
	printf("%-5lld %-20s %-6s %-24s %-28s %6llu  %s\n", (long long)r->id, r->time, r->source,
	       r->scenario, r->point ? r->point : "-", (unsigned long long)r->seed, r->variants);
	return 0;
}

/* "runs=N sha256=HEX": equal for databases that hold the same results. */
static int print_digest(db *d)
{
	char hex[65], err[1024];
	int64_t n;
	int rc = db_digest(d, hex, &n, err, sizeof err);
	if (rc)
		cli_error("%s", err);
	else
		printf("runs=%lld sha256=%s\n", (long long)n, hex);
	db_close(d);
	return rc ? CLI_USAGE : CLI_OK;
}

int cmd_runs(int argc, char **argv)
{
	const char *path = DB_DEFAULT_PATH, *given = NULL;
	db_filter f = { 0 };
	unsigned long long limit;
	unsigned n = 0;
	char err[1024];
	bool digest = false;
	db *d = NULL;
	int rc;
	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i];
		if (!strcmp(opt, "--digest")) {
			digest = true;
			continue;
		}
		if (opt[0] != '-' || !opt[1]) { /* the database, as plot and merge take it */
			if (given && strcmp(given, opt))
				return cli_usage_error("runs: one database at a time ('%s' and '%s')",
						       given, opt);
			path = given = opt;
			continue;
		}
		if (strcmp(opt, "--db") && strcmp(opt, "--scenario") && strcmp(opt, "--variant") &&
		    strcmp(opt, "--limit"))
			return cli_usage_error("runs: unknown argument '%s'", opt);
		if (++i == argc)
			return cli_usage_error("runs: %s wants a value", opt);
		if (!strcmp(opt, "--db") && given && strcmp(given, argv[i]))
			return cli_usage_error("runs: one database at a time ('%s' and '%s')", given,
					       argv[i]);
		else if (!strcmp(opt, "--db"))
			path = given = argv[i];
		else if (!strcmp(opt, "--scenario"))
			f.scenario = argv[i];
		else if (!strcmp(opt, "--variant"))
			f.variant = argv[i];
		else if (!cli_parse_u64(argv[i], &limit) || limit == 0 || limit > 1000000000)
			return cli_usage_error("runs: --limit wants a positive count, not '%s'", argv[i]);
		else
			f.limit = (unsigned)limit;
	}
	if ((rc = open_existing(path, &d)))
		return rc;
	if (digest)
		return print_digest(d);
	if (db_list_runs(d, &f, print_run, &n, err, sizeof err)) {
		cli_error("%s", err);
		db_close(d);
		return CLI_USAGE;
	}
	if (n == 0)
		printf("no stored runs match in %s\n", path);
	db_close(d);
	return CLI_OK;
}

/* A command that failed before storing anything leaves no database it
 * created behind: an empty one would pass for a results database. */
static void drop_if_new(const char *path, bool existed, int rc, unsigned stored)
{
	if (rc && !existed && !stored)
		unlink(path);
}

static int import_one(db *d, const char *file)
{
	char err[1024];
	rep_report *r = NULL;
	int64_t id;
	bool added;
	if (cli_read_report(file, &r))
		return CLI_USAGE;
	if (db_store_report(d, r, NULL, &id, &added, err, sizeof err)) {
		cli_error("%s", err);
		rep_free(r);
		return CLI_USAGE;
	}
	if (added)
		printf("stored %s as run %lld\n", file, (long long)id);
	else
		printf("%s: already stored as run %lld (same scenario, file hash, point, seed and "
		       "source), not stored again\n", file, (long long)id);
	rep_free(r);
	return 0;
}

int cmd_import(int argc, char **argv)
{
	const char *path = DB_DEFAULT_PATH;
	char err[1024];
	int first = 0, rc = 0;
	unsigned stored = 0;
	bool existed;
	db *d = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--db")) {
			if (++i == argc)
				return cli_usage_error("import: --db wants a file");
			path = argv[i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage_error("import: unknown option '%s'", argv[i]);
		} else if (!first) {
			first = i;
		}
	}
	if (!first)
		return cli_usage_error("import wants at least one report file");
	existed = access(path, F_OK) == 0;
	if (db_make_parent(path, err, sizeof err) || db_open(path, &d, err, sizeof err)) {
		cli_error("%s", err);
		return CLI_USAGE;
	}
	/* Each report is its own transaction: a bad file stops the import and
	 * is not stored, the ones before it are. */
	for (int i = first; !rc && i < argc; i++) {
		if (!strcmp(argv[i], "--db"))
			i++;
		else if (!(rc = import_one(d, argv[i])))
			stored++;
	}
	db_close(d);
	drop_if_new(path, existed, rc, stored);
	return rc;
}

/* merge --db OUT SOURCE... (the --db every other command stores with), or
 * the older merge OUT SOURCE...: rewrites argv to the latter. */
static int merge_args(int *argc, char **argv)
{
	const char *out = NULL;
	int k = 1;
	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--db") && i + 1 < *argc && !out)
			out = argv[++i];
		else if (!strcmp(argv[i], "--db"))
			return cli_usage_error("merge: --db wants one output database");
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("merge: unknown option '%s'", argv[i]);
		else
			argv[k++] = argv[i];
	}
	if (out) {
		memmove(argv + 2, argv + 1, (size_t)(k - 1) * sizeof *argv);
		argv[1] = (char *)out;
		k++;
	}
	*argc = k;
	return CLI_OK;
}

int cmd_merge(int argc, char **argv)
{
	char err[1024];
	unsigned added, skipped, merged = 0;
	bool existed;
	db *d = NULL;
	int rc = 0;
	if ((rc = merge_args(&argc, argv)))
		return rc;
	if (argc < 3)
		return cli_usage_error("merge wants OUT.db and at least one database to merge");
	for (int i = 2; i < argc; i++)
		if (access(argv[i], R_OK))
			return cli_usage_error("%s: cannot read: %s", argv[i], strerror(errno));
	existed = access(argv[1], F_OK) == 0;
	if (db_make_parent(argv[1], err, sizeof err) || db_open(argv[1], &d, err, sizeof err)) {
		cli_error("%s", err);
		return CLI_USAGE;
	}
	/* One transaction per source: a bad source adds nothing, the ones
	 * before it stay merged. */
	for (int i = 2; !rc && i < argc; i++) {
		if (db_merge(d, argv[i], &added, &skipped, err, sizeof err)) {
			cli_error("%s", err);
			rc = CLI_USAGE;
		} else {
			printf("%s: %u runs added, %u already in %s\n", argv[i], added, skipped,
			       argv[1]);
			merged++;
		}
	}
	db_close(d);
	drop_if_new(argv[1], existed, rc, merged);
	return rc;
}
