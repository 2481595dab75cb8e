/* Internals shared by the scenario loader's files (scenario.c: files,
 * extends and sweeps; scenario_read.c: typed readers; scenario_resolve.c:
 * sections and cross-field checks; scenario_dump.c: summary and dump). */
#ifndef DPUSIM_MODELS_SCENARIO_INT_H
#define DPUSIM_MODELS_SCENARIO_INT_H

#include "models/scenario.h"
#include "models/ytree.h"

/* What a loaded scenario keeps for sweeps: shared by every point. */
struct scn_src {
	int refs;
	bool fit_unchecked; /* scn_opts.fit_unchecked */
	yt_node *root;      /* merged tree (extends applied), sweep: removed */
	yt_node *sweep;     /* the sweep: mapping as written, or NULL */
	char **files;       /* file names the nodes point at */
	size_t nfiles;
	profile_set *ps;
};

typedef struct scn_rd {
	diag *d;
	size_t errs;
	profile_set *ps;
	bool fit_unchecked; /* scn_opts.fit_unchecked */
} scn_rd;

/* Error at a node's value / at its key. */
void scn_err(scn_rd *r, const yt_node *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void scn_err_key(scn_rd *r, const yt_node *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "missing 'key' (what)" (what may be NULL), at mapping m, or at the null
 * of an extending file that removed the key (yt_removed). */
void scn_err_missing(scn_rd *r, const yt_node *m, const char *key, const char *what);

/* Unknown keys of mapping m (keys: NULL-terminated), each an error with a
 * suggestion; where names the section in messages. */
void scn_only_keys(scn_rd *r, const yt_node *m, const char *const *keys, const char *where);

/* The mapping under key, or NULL (absent, or not a mapping: an error). A
 * required one that is absent is an error placed at m. */
const yt_node *scn_section(scn_rd *r, const yt_node *m, const char *key, bool required);

/* Typed values. Each returns true when the key is present and valid (*out
 * set), false otherwise; absent + required and invalid values are errors.
 * Ranges are inclusive; lo_open makes lo exclusive. */
bool scn_get_q(scn_rd *r, const yt_node *m, const char *key, bool required, unit_dim dim,
	       double lo, double hi, bool lo_open, double *out);
bool scn_get_int(scn_rd *r, const yt_node *m, const char *key, bool required, long lo, long hi,
		 int *out);
/* An optional whole number from 0 to 2^64-1, read exactly (seeds). */
bool scn_get_u64(scn_rd *r, const yt_node *m, const char *key, unsigned long long *out);
bool scn_get_bool(scn_rd *r, const yt_node *m, const char *key, bool *out);
bool scn_get_str(scn_rd *r, const yt_node *m, const char *key, bool required, char *out, size_t n);
/* One of words (NULL-terminated) by index. */
bool scn_get_enum(scn_rd *r, const yt_node *m, const char *key, bool required,
		  const char *const *words, int *out);
/* "a, b or c" from words, into buf. */
char *scn_words(const char *const *words, char *buf, size_t n);

/* Fills s from the merged tree root. Errors go to r. */
void scn_resolve(scn_rd *r, const yt_node *root, scn_scenario *s);

/* Enumeration words (NULL-terminated), in enum order. */
extern const char *const scn_topology_words[], *const scn_routing_words[],
	*const scn_stornet_words[], *const scn_precision_words[], *const scn_kind_words[],
	*const scn_op_words[], *const scn_algo_words[], *const scn_p2p_test_words[], *const scn_placement_words[],
	*const scn_slowdown_words[], *const scn_ckpt_mode_words[],
	*const scn_coll_proto_words[], *const scn_engine_words[], *const scn_ring_steps_words[];

#endif
