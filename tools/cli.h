/* The dpusim command table and helpers every subcommand shares: exit
 * codes, error messages in one format, --help handling. */
#ifndef DPUSIM_TOOLS_CLI_H
#define DPUSIM_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>

enum cli_exit {
	CLI_OK = 0,       /* success */
	CLI_FINDING = 1,  /* ran, and found something (compare beyond tolerance...) */
	CLI_USAGE = 2,    /* bad input or usage */
};

typedef struct cli_cmd {
	const char *name;
	const char *summary;  /* one line, for `dpusim --help` */
	const char *usage;    /* the whole `dpusim NAME --help` text */
	/* argv[0] is the subcommand name. NULL: not built yet (says so, exit 2). */
	int (*run)(int argc, char **argv);
} cli_cmd;

/* The table behind parsing and --help (tools/dpusim.c). */
extern const cli_cmd cli_commands[];
extern const unsigned cli_ncommands;

/* "dpusim: error: ..." on stderr. Returns CLI_USAGE for `return cli_usage_error(...)`. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "dpusim: error: ..." on stderr, no return value convention. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An output's path made from its parts into out (n bytes): 0, or, where it
 * does not fit (a cut name would be another file), CLI_USAGE with the
 * error said. */
int cli_path(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The report in the JSON file at path (*r: free with rep_free), or
 * CLI_USAGE with the reader's located message printed. */
typedef struct rep_report rep_report;
int cli_read_report(const char *path, rep_report **r);
/* The results database at path opened read-only (*d: close with db_close),
 * or CLI_USAGE with why printed. */
typedef struct db db;
int cli_open_db_ro(const char *path, db **d);

/* True when argv holds -h or --help (before a "--"). */
bool cli_wants_help(int argc, char **argv);

/* Strict number parsing for options: the whole string must be consumed,
 * decimal digits first (a sign for doubles), no hexadecimal, doubles finite. */
bool cli_parse_u64(const char *s, unsigned long long *out);
bool cli_parse_double(const char *s, double *out);
/* Whether a comma-separated option value has an empty item ("1,,2", "1,",
 * ",1", ""). The lists are split with strtok_r, which skips empty items,
 * so a typo would otherwise pass unseen: every list option refuses one. */
bool cli_list_has_empty(const char *list);

/* A test hook: when environment variable `var` holds the number i, says
 * "dpusim: test hook: process PID stops at WHAT i" on stderr and stops
 * this process (SIGSTOP), for a test to kill it or let it time out at a
 * known place (DPUSIM_TEST_SWEEP_STOP, tools/sweep.h; DPUSIM_TEST_FORKS_STOP,
 * tools/forks.h). */
void cli_test_stop_at(const char *var, const char *what, size_t i);

/* Peak resident set size of this process, in KiB (getrusage). */
long cli_peak_rss_kb(void);
/* Monotonic wall clock in seconds. */
double cli_wall_s(void);

#endif
