/* What several unit suites set up the same way: a scenario or YAML tree
 * from text that must load, a message among a diag's, a scratch folder,
 * a fabric with collectives on it.
 * Each helper fails the running Check test (ck_assert) when its setup
 * fails, after printing the loader's messages, so a suite's own asserts
 * are about what it tests. Linked into the suites from an archive
 * (Makefile: TEST_LIB), so a suite pulls in only what it calls. */
#ifndef DPUSIM_TESTS_FIXTURE_H
#define DPUSIM_TESTS_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "models/coll.h"
#include "models/diag.h"
#include "models/fabric.h"
#include "models/scenario.h"
#include "models/ytree.h"
#include "sim/engine.h"
#include "sim/flow.h"

/* The scenario in text, loaded as the file "t.yaml" (relative extends:
 * against the current folder); its messages go to d, or are dropped when
 * d is NULL. The test fails, the messages printed, unless it loads.
 * The caller frees the scenario (scn_free). */
scn_scenario *fx_load_into(const char *text, diag *d);

/* fx_load_into(text, NULL). */
scn_scenario *fx_load(const char *text);

/* The scenario file at path, as fx_load. The caller frees it (scn_free). */
scn_scenario *fx_load_file(const char *path);

/* The YAML document in text as a tree ("t.yaml" in messages); the test
 * fails unless it parses. The caller frees it (yt_free). */
yt_node *fx_parse(const char *text);

/* Whether one of d's messages contains part. */
bool fx_has_msg(const diag *d, const char *part);

/* A new empty folder /tmp/NAME.XXXXXX into dir (n bytes); the test fails
 * when it cannot be made. fx_rmdir removes it and all it holds. */
void fx_tmpdir(char *dir, size_t n, const char *name);
void fx_rmdir(const char *dir);

/* An engine, a flow network, fabric fc on it and a collective context
 * with cc: what the collective suites run on. */
typedef struct fx_world {
	sim_engine *eng;
	flow_net *net;
	fab *f;
	coll_ctx *c;
} fx_world;

/* Builds w; the test fails when a part cannot be made. */
void fx_world_new(fx_world *w, const fab_config *fc, const coll_config *cc);

/* Frees w after checking that the network is drained: no flow in flight,
 * every byte sent delivered. */
void fx_world_free(fx_world *w);

#endif
