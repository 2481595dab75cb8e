/* models/coll: collectives over a group of the fabric's ranks (a
 * data-parallel group) behave like the same collective on a fabric of just
 * those ranks, and groups on disjoint links do not disturb each other. */
#include <check.h>
#include <stdlib.h>

#include "models/coll.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

struct world {
	sim_engine *eng;
	flow_net *net;
	fab *f;
	coll_ctx *c;
};

static void world_new(struct world *w, uint32_t nodes, uint32_t gpn)
{
	fab_config fc = { .topo = FAB_SINGLE_SWITCH, .nodes = nodes, .gpus_per_node = gpn,
			  .nics_per_node = gpn, .link_Bps = 25e9, .hop_lat_ps = 100000,
			  .switch_lat_ps = 200000, .oversub = 1, .nvlink_Bps = 300e9,
			  .nvlink_lat_ps = 500000 };
	coll_config cc = { .transport = { .kind = COLL_RDMA_GDR, .msg_lat_ps = 1000000 } };
	w->eng = sim_engine_new();
	w->net = flow_net_new(w->eng);
	ck_assert_int_eq(fab_new(&fc, w->net, &w->f), 0);
	ck_assert_int_eq(coll_ctx_new(w->eng, w->net, w->f, &cc, &w->c), 0);
}

static void world_free(struct world *w)
{
	coll_ctx_free(w->c);
	fab_free(w->f);
	flow_net_free(w->net);
	sim_engine_free(w->eng);
}

/* Ranks 3, 11, 19, 27 of 4 nodes x 8 GPUs (GPU 3 of each node) ring
 * all-reduce exactly as 4 single-GPU nodes do. */
START_TEST(group_equals_small_fabric)
{
	struct world big, small;
	coll_result rb, rs;
	static const uint32_t grp[] = { 3, 11, 19, 27 };
	world_new(&big, 4, 8);
	world_new(&small, 4, 1);
	coll_params p = { .op = COLL_ALLREDUCE, .algo = COLL_RING, .bytes = 64 << 20 };
	ck_assert_int_eq(coll_run(small.c, &p, &rs), 0);
	p.ranks = grp, p.nranks = 4;
	ck_assert_int_eq(coll_run(big.c, &p, &rb), 0);
	ck_assert_int_eq(rb.time_ps, rs.time_ps);
	ck_assert_double_eq_tol(rb.busbw_GBps, rs.busbw_GBps, 1e-9);
	world_free(&big);
	world_free(&small);
}
END_TEST

static void count(sim_engine *eng, void *obj, uint64_t data)
{
	(void)eng, (void)data;
	(*(int *)obj)++;
}

/* Eight groups, one per GPU index (each on its own NIC rail), at once:
 * each takes as long as one alone. */
START_TEST(disjoint_groups_run_in_parallel)
{
	struct world w;
	coll_result alone, res[8];
	uint32_t grp[8][4];
	int done = 0;
	world_new(&w, 4, 8);
	for (uint32_t g = 0; g < 8; g++)
		for (uint32_t n = 0; n < 4; n++)
			grp[g][n] = n * 8 + g;
	coll_params p = { .op = COLL_ALLREDUCE, .algo = COLL_RING, .bytes = 16 << 20,
			  .ranks = grp[0], .nranks = 4 };
	ck_assert_int_eq(coll_run(w.c, &p, &alone), 0);
	for (uint32_t g = 0; g < 8; g++) {
		p.ranks = grp[g];
		ck_assert_int_eq(coll_start(w.c, &p, &res[g], count, &done, g), 0);
	}
	sim_run(w.eng);
	ck_assert_int_eq(done, 8);
	for (int g = 0; g < 8; g++)
		ck_assert_int_eq(res[g].time_ps, alone.time_ps);
	world_free(&w);
}
END_TEST

START_TEST(bad_groups_are_refused)
{
	struct world w;
	coll_result r;
	static const uint32_t out_of_range[] = { 0, 99 }, one[] = { 5 };
	world_new(&w, 2, 8);
	coll_params p = { .op = COLL_ALLREDUCE, .algo = COLL_RING, .bytes = 1024,
			  .ranks = out_of_range, .nranks = 2 };
	ck_assert_int_eq(coll_start(w.c, &p, &r, NULL, NULL, 0), SIM_EINVAL);
	p.ranks = one, p.nranks = 1;
	ck_assert_int_eq(coll_start(w.c, &p, &r, NULL, NULL, 0), SIM_EINVAL);
	world_free(&w);
}
END_TEST

/* Predictions share one per-resource scratch (a group's view borrows its
 * context's) and leave it clear: a small group's prediction after a large
 * collective's over the same NICs equals it on a context that made none,
 * and so does the large one after it. */
START_TEST(predictions_leave_no_trace)
{
	struct world used, fresh;
	static const uint32_t grp[] = { 3, 11, 19, 27 };
	coll_params small = { .op = COLL_ALLREDUCE, .bytes = 1 << 20, .ranks = grp, .nranks = 4 };
	coll_params large = { .op = COLL_ALLREDUCE, .bytes = (uint64_t)1 << 30 };
	sim_time want_small, want_large, t;
	world_new(&fresh, 4, 8);
	ck_assert_int_eq(coll_predict(fresh.c, &small, COLL_RING, &want_small), 0);
	world_free(&fresh);
	world_new(&fresh, 4, 8);
	ck_assert_int_eq(coll_predict(fresh.c, &large, COLL_RING, &want_large), 0);
	world_free(&fresh);
	world_new(&used, 4, 8);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(coll_predict(used.c, &large, COLL_RING, &t), 0);
		ck_assert_int_eq(t, want_large);
		ck_assert_int_eq(coll_predict(used.c, &small, COLL_RING, &t), 0);
		ck_assert_int_eq(t, want_small);
	}
	world_free(&used);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("coll_group");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, group_equals_small_fabric);
	tcase_add_test(tc, disjoint_groups_run_in_parallel);
	tcase_add_test(tc, bad_groups_are_refused);
	tcase_add_test(tc, predictions_leave_no_trace);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
