/* Error codes shared by every dpusim library module, and the loud-failure
 * macro for broken invariants. Library code returns these; only the command
 * layer prints and exits. */
#ifndef DPUSIM_SIM_ERR_H
#define DPUSIM_SIM_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* X(NAME, message): codes are negative, in table order, 0 is success. */
#define SIM_ERRNO_MAP(X)                                            \
	X(NOMEM, "out of memory")                                   \
	X(INVAL, "invalid argument")                                \
	X(PAST, "event scheduled in the past")                      \
	X(OVERFLOW, "time or quantity overflow")                    \
	X(RANGE, "value out of range")                              \
	X(NOENT, "no such entry")                                   \
	X(EXIST, "entry already exists")                            \
	X(IO, "input/output error")                                 \
	X(PARSE, "malformed input")                                 \
	X(UNIT, "bad or missing unit")                              \
	X(UNSUPPORTED, "not supported")                             \
	X(NODEV, "no such device")                                  \
	X(TIMEDOUT, "timed out")                                    \
	X(PEER, "peer failed or disconnected")                      \
	X(VERIFY, "data verification failed")                       \
	X(DB, "database error")

enum sim_errno {
	SIM_OK = 0,
#define SIM_ERR_ENUM_(name, msg) SIM_E##name,
	SIM_ERR_FIRST_ = -1000,
	SIM_ERRNO_MAP(SIM_ERR_ENUM_)
#undef SIM_ERR_ENUM_
	SIM_ERR_LAST_
};

/* Message for an error code (never NULL; unknown codes get a generic text). */
const char *sim_strerror(int err);

/* Name of an error code such as "SIM_ENOMEM" (never NULL). */
const char *sim_errname(int err);

/* vsnprintf into buf (n bytes), except that a message too long for it keeps
 * its start (a third) and its end (two thirds) with the middle left out
 * ("[... K bytes left out ...]", cut between UTF-8 characters): a message
 * names a path or a name a user gave and ends with what went wrong, which
 * a plain cut would lose to a long path. */
void sim_vfit(char *buf, size_t n, const char *fmt, va_list ap);
void sim_fit(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A message into errbuf (when errbuf and errlen are given: the callers'
 * convention for errors a library hands back as text), returning err; a
 * message too long for it is cut as sim_fit cuts. */
int sim_errbuf(char *errbuf, size_t errlen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Broken invariant: print file:line and the message, then abort. Never
 * compiled out (SimGrid's xbt_assert, ROSS's tw_error(TW_LOC, ...)). */
_Noreturn void sim_die_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define SIM_DIE(...) sim_die_at(__FILE__, __LINE__, __VA_ARGS__)
#define SIM_ASSERT(cond, ...)                                       \
	do {                                                        \
		if (__builtin_expect(!(cond), 0))                   \
			sim_die_at(__FILE__, __LINE__, __VA_ARGS__);\
	} while (0)

#endif
