/* The unit suites' shared set-up (tests/unit/fixture.h). */
#include "tests/unit/fixture.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"

scn_scenario *fx_load_into(const char *text, diag *d)
{
	diag *own = d ? NULL : diag_new();
	scn_scenario *s = NULL;
	int rc = scn_load_buffer("t.yaml", text, strlen(text), NULL, &s, d ? d : own);
	if (rc)
		diag_print(d ? d : own, stderr);
	diag_free(own);
	ck_assert_int_eq(rc, SIM_OK);
	return s;
}

scn_scenario *fx_load(const char *text)
{
	return fx_load_into(text, NULL);
}

scn_scenario *fx_load_file(const char *path)
{
	diag *d = diag_new();
	scn_scenario *s = NULL;
	int rc = scn_load(path, NULL, &s, d);
	if (rc)
		diag_print(d, stderr);
	diag_free(d);
	ck_assert_int_eq(rc, SIM_OK);
	return s;
}

yt_node *fx_parse(const char *text)
{
	diag *d = diag_new();
	yt_node *t = NULL;
	int rc = yt_parse("t.yaml", text, strlen(text), &t, d);
	if (rc)
		diag_print(d, stderr);
	diag_free(d);
	ck_assert_int_eq(rc, SIM_OK);
	return t;
}

bool fx_has_msg(const diag *d, const char *part)
{
	for (size_t i = 0; i < diag_count(d); i++)
		if (strstr(diag_msg(d, i), part))
			return true;
	return false;
}

void fx_tmpdir(char *dir, size_t n, const char *name)
{
	ck_assert_int_lt(snprintf(dir, n, "/tmp/%s.XXXXXX", name), (int)n);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

void fx_rmdir(const char *dir)
{
	char cmd[256];
	ck_assert_int_lt(snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir), (int)sizeof cmd);
	ck_assert_int_eq(system(cmd), 0);
}

void fx_world_new(fx_world *w, const fab_config *fc, const coll_config *cc)
{
	w->eng = sim_engine_new();
	ck_assert_ptr_nonnull(w->eng);
	w->net = flow_net_new(w->eng);
	ck_assert_ptr_nonnull(w->net);
	ck_assert_int_eq(fab_new(fc, w->net, &w->f), 0);
	ck_assert_int_eq(coll_ctx_new(w->eng, w->net, w->f, cc, &w->c), 0);
}

void fx_world_free(fx_world *w)
{
	ck_assert_uint_eq(flow_active(w->net), 0);
	ck_assert_uint_eq(flow_bytes_sent(w->net), flow_bytes_delivered(w->net));
	coll_ctx_free(w->c);
	fab_free(w->f);
	flow_net_free(w->net);
	sim_engine_free(w->eng);
}
