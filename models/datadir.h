/* Where dpusim finds the data it ships (hardware profiles, validation cases,
 * scenarios) wherever it is run from, as installed tools do: never relative
 * to the current folder. */
#ifndef DPUSIM_MODELS_DATADIR_H
#define DPUSIM_MODELS_DATADIR_H

#include <limits.h>
#include <stddef.h>

/* Room for any path datadir_path or datadir_profiles writes. */
#define DATADIR_PATH_MAX (PATH_MAX + 32)

/* The data folder in effect, first found of:
 *   1. $DPUSIM_DATADIR (a source tree or an installed share/dpusim);
 *   2. the source tree the running binary sits in: the nearest of the
 *      binary's parent folders, up to three levels up, that holds
 *      models/profiles (bin/dpusim, build/asan/bin/dpusim, build/tests/...);
 *   3. the installed copy beside the binary, BINDIR/../share/dpusim (a
 *      relocated install), else the compiled-in PREFIX/share/dpusim.
 * Computed once; the string is static, never NULL, and "" when
 * $DPUSIM_DATADIR is longer than the path limit (PATH_MAX): no other folder
 * is taken in its place. */
const char *datadir_root(void);

/* Writes into buf (n bytes) the path of a shipped item named by its path in
 * the source tree ("models/profiles", "tests/validation/cases.yaml",
 * "scenarios/demo.yaml"); in an installed data folder the same item lives
 * under its installed name (profiles/, validation/, scenarios/). A data
 * folder at or below the current folder is named relative to it (run from
 * the source tree: "models/profiles"). Returns 0, or -1 when buf is too
 * small or there is no data folder (buf then holds ""). */
int datadir_path(const char *tree_path, char *buf, size_t n);

/* Writes into buf (n bytes) where hardware profiles are looked up when no
 * folder is given: $DPUSIM_PROFILE_DIR, else datadir_path("models/profiles").
 * Returns buf, which holds "" when the path does not fit in n bytes or
 * there is no data folder (datadir_root): the caller says so
 * (DATADIR_TOO_LONG). */
const char *datadir_profiles(char *buf, size_t n);

/* What a message says where datadir_root gave "", or datadir_profiles did
 * and $DPUSIM_PROFILE_DIR is not set. */
#define DATADIR_TOO_LONG "$DPUSIM_DATADIR is longer than the path limit (PATH_MAX)"
#define PROFILE_DIR_TOO_LONG "$DPUSIM_PROFILE_DIR is longer than the path limit (PATH_MAX)"

/* Why datadir_profiles gave "": which of the two variables is too long. */
const char *datadir_profiles_too_long(void);

#endif
