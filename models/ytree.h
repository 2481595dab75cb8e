/* A YAML document as a small tree of our own (built from libfyaml's event
 * stream), every node keeping the file, line and column it came from, so
 * trees from several files can be merged (extends:) and overridden (sweeps)
 * without losing where each value was written. */
#ifndef DPUSIM_MODELS_YTREE_H
#define DPUSIM_MODELS_YTREE_H

#include <stddef.h>

#include "models/diag.h"

typedef enum yt_type { YT_NULL, YT_SCALAR, YT_SEQ, YT_MAP } yt_type;

/* Exposed read-only so loaders can walk it; build and change it only with
 * the functions below. */
typedef struct yt_node yt_node;
struct yt_node {
	yt_type type;
	const char *file;  /* not owned: outlives the tree (the caller's) */
	int line, col;     /* 1-based position of the value */
	char *key;         /* key when this node is a mapping value, else NULL */
	int key_line, key_col;
	char *text;        /* scalar text (YT_SCALAR), else NULL */
	yt_node **kids;    /* sequence items or mapping values, in order */
	size_t nkids, cap;
	yt_node *gone;     /* mapping: the nulls that removed keys (yt_merge), or NULL */
};

/* Largest file yt_read_file accepts: scenarios and profiles are small. */
#define YT_MAX_FILE_BYTES ((size_t)4 << 20)
/* Most nodes one document may expand to (aliases included). */
#define YT_MAX_NODES 200000

/* Reads a whole text file into *buf (NUL-terminated, caller frees) and *len.
 * Refuses directories, files over YT_MAX_FILE_BYTES, files holding NUL bytes
 * or invalid UTF-8, each with a message in d. 0, SIM_EIO or SIM_EPARSE. */
int yt_read_file(const char *path, char **buf, size_t *len, diag *d);

/* Checks that buf holds text: no NUL byte, valid UTF-8 as RFC 3629 defines
 * it (no overlong form, surrogate, code point above U+10FFFF or truncated
 * sequence); else a message at the first bad byte in d (file names buf) and
 * SIM_EPARSE. */
int yt_check_text(const char *file, const char *buf, size_t len, diag *d);

/* Parses buf (len bytes) as one YAML document into *out (caller frees with
 * yt_free; NULL when the document is empty). file names buf in messages and
 * in every node; it must outlive the tree. buf is checked by yt_check_text.
 * Anchors and aliases are expanded (an alias is a copy placed where the
 * alias is); a plain '<<' key merges a mapping or a list of mappings into
 * its mapping (YAML 1.1 merge key: keys written in the mapping win, then
 * earlier mappings of the list). Syntax errors, duplicate keys, non-scalar
 * keys, tags, several documents, recursive aliases, alias bombs and a parser
 * that stops before the end of buf are reported in d with their position.
 * 0 or SIM_EPARSE / SIM_ENOMEM. */
int yt_parse(const char *file, const char *buf, size_t len, yt_node **out, diag *d);

/* Frees a tree; NULL is a no-op. */
void yt_free(yt_node *n);
/* Deep copy (positions kept), or NULL when out of memory. */
yt_node *yt_clone(const yt_node *n);

/* Value for key in mapping m, or NULL (also when m is not a mapping). */
yt_node *yt_get(const yt_node *m, const char *key);

/* Merges over into base (both mappings): keys of over replace base's,
 * mappings under the same key merge recursively, and a null value removes
 * the key from base (the null is kept for yt_removed). over is consumed. 0
 * or SIM_ENOMEM. */
int yt_merge(yt_node *base, yt_node *over);

/* The null that removed key from mapping m in a yt_merge, or NULL: a
 * message about the missing key belongs where that null was written. */
const yt_node *yt_removed(const yt_node *m, const char *key);

/* Replaces (or adds) the value at a dotted key path ("cluster.nodes") of
 * mapping root with a copy of val, creating intermediate mappings. 0,
 * SIM_ENOENT (a non-mapping is in the way) or SIM_ENOMEM. */
int yt_set_path(yt_node *root, const char *path, const yt_node *val);

/* Removes key (and its value) from mapping m: 0, or SIM_ENOENT when m has
 * no such key. */
int yt_remove(yt_node *m, const char *key);

/* "a mapping", "a list", "a value", "nothing": for messages. */
const char *yt_type_name(yt_type t);

#endif
