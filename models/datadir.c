/* Where dpusim's shipped data is found: beside the running binary (its
 * source tree or its install prefix), never relative to the current folder,
 * so `/path/to/bin/dpusim check x.yaml` works from anywhere. */
#include "models/datadir.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef DPUSIM_DATADIR
#define DPUSIM_DATADIR "/usr/local/share/dpusim"
#endif

/* Parent folders of the binary searched for its source tree: bin/ is one
 * level below it, build/tests/ two, build/asan/bin/ three. */
#define TREE_MAX_UP 3

/* An item's source-tree folder and where make install puts it. */
static const struct {
	const char *tree;
	const char *installed;
} layout[] = {
	{ "models/profiles", "profiles" },
	{ "tests/validation", "validation" },
	{ "scenarios", "scenarios" },
};

static char root[PATH_MAX];
static bool root_is_tree;
static bool root_done; /* datadir_root has run: root is final ("" when unusable) */

static bool is_dir(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* True when dir/models/profiles is a folder: dir is a source tree. */
static bool holds_tree(const char *dir)
{
	char p[PATH_MAX];
	return snprintf(p, sizeof p, "%s/models/profiles", dir) < (int)sizeof p && is_dir(p);
}

/* Sets root to dir (when it fits); returns whether it did. */
static bool set_root(const char *dir, bool tree)
{
	if (strlen(dir) >= sizeof root)
		return false;
	strcpy(root, dir);
	root_is_tree = tree;
	return true;
}

/* The binary's source tree or installed share folder, when there is one:
 * dir starts as the binary's own folder and loses one component per level. */
static bool find_beside_binary(void)
{
	char dir[PATH_MAX], share[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	char *slash;
	if (n <= 0)
		return false;
	dir[n] = '\0';
	for (int up = 0; up <= TREE_MAX_UP; up++) {
		if (!(slash = strrchr(dir, '/')) || slash == dir)
			return false;           /* no parent left below / */
		*slash = '\0';                  /* dir: one level higher */
		if (up == 0)
			continue;               /* the binary's own folder */
		if (holds_tree(dir))
			return set_root(dir, true);
		snprintf(share, sizeof share, "%s/share/dpusim", dir);
		if (up == 1 && is_dir(share))
			return set_root(share, false);
	}
	return false;
}

const char *datadir_root(void)
{
	const char *env;
	if (root_done)
		return root;
	root_done = true;
	env = getenv("DPUSIM_DATADIR");
	if (env && *env) {
		/* one too long to use leaves no data folder: any other in its
		 * place would be data the user did not name */
		set_root(env, strlen(env) < sizeof root && holds_tree(env));
		return root;
	}
	if (find_beside_binary())
		return root;
	set_root(DPUSIM_DATADIR, holds_tree(DPUSIM_DATADIR));
	return root;
}

/* The part of root that names it from the current folder: "" when root is
 * the current folder, "sub/dir" when it is below it, else root itself. Run
 * from the source tree, messages then name models/profiles/X.yaml as
 * before rather than a long absolute path. */
static const char *from_cwd(void)
{
	char cwd[PATH_MAX];
	size_t k;
	if (root[0] != '/' || !getcwd(cwd, sizeof cwd) || !strcmp(cwd, "/"))
		return root;
	k = strlen(cwd);
	if (strncmp(root, cwd, k))
		return root;
	if (root[k] == '\0')
		return "";
	return root[k] == '/' ? root + k + 1 : root;
}

int datadir_path(const char *tree_path, char *buf, size_t n)
{
	const char *base, *rest = tree_path, *dir = "";
	int len;
	if (!*datadir_root()) {
		if (n)
			buf[0] = '\0';
		return -1;
	}
	base = from_cwd();
	for (size_t i = 0; !root_is_tree && i < sizeof layout / sizeof layout[0]; i++) {
		size_t k = strlen(layout[i].tree);
		if (!strncmp(tree_path, layout[i].tree, k) &&
		    (tree_path[k] == '\0' || tree_path[k] == '/')) {
			dir = layout[i].installed;
			rest = tree_path + k;
			break;
		}
	}
	if (*dir)
		len = snprintf(buf, n, "%s%s%s%s", base, *base ? "/" : "", dir, rest);
	else
		len = snprintf(buf, n, "%s%s%s", base, *base ? "/" : "", rest);
	if (len < 0 || (size_t)len >= n) {
		if (n)
			buf[0] = '\0';
		return -1;
	}
	return 0;
}

const char *datadir_profiles(char *buf, size_t n)
{
	const char *env = getenv("DPUSIM_PROFILE_DIR");
	if (!(env && *env)) {
		datadir_path("models/profiles", buf, n);
		return buf;
	}
	if (snprintf(buf, n, "%s", env) >= (int)n && n)
		buf[0] = '\0';
	return buf;
}

const char *datadir_profiles_too_long(void)
{
	const char *env = getenv("DPUSIM_PROFILE_DIR");
	return env && *env ? PROFILE_DIR_TOO_LONG : DATADIR_TOO_LONG;
}
