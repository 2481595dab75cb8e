/* models/coll: closed forms where they hold (ring all-reduce on one
 * switch, n = 2..4096), contention the closed form misses (an
 * oversubscribed leaf, ECMP collisions, a competing flow) against
 * hand-computed max-min rates, the other ops and algorithms, and
 * validation against published nccl-tests figures. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "models/coll.h"
#include "models/fabric.h"
#include "sim/engine.h"
#include "sim/err.h"
#include "sim/flow.h"

struct world {
	sim_engine *eng;
	flow_net *net;
	fab *f;
	coll_ctx *c;
};

static void world_new(struct world *w, const fab_config *fc, const coll_config *cc)
{
	w->eng = sim_engine_new();
	w->net = flow_net_new(w->eng);
	ck_assert_ptr_nonnull(w->net);
	ck_assert_int_eq(fab_new(fc, w->net, &w->f), 0);
	ck_assert_int_eq(coll_ctx_new(w->eng, w->net, w->f, cc, &w->c), 0);
}

static void world_free(struct world *w)
{
	ck_assert_uint_eq(flow_active(w->net), 0);
	ck_assert_uint_eq(flow_bytes_sent(w->net), flow_bytes_delivered(w->net));
	coll_ctx_free(w->c);
	fab_free(w->f);
	flow_net_free(w->net);
	sim_engine_free(w->eng);
}

static fab_config one_switch(uint32_t n)
{
	return (fab_config){ .topo = FAB_SINGLE_SWITCH, .nodes = n, .gpus_per_node = 1,
			     .nics_per_node = 1, .link_Bps = 50e9, .hop_lat_ps = 60 * SIM_NS,
			     .switch_lat_ps = 130 * SIM_NS, .seed = 1 };
}

static const coll_config rdma = { .transport = { .kind = COLL_RDMA_GDR, .msg_lat_ps = 1500 * SIM_NS } };

static coll_result run(struct world *w, coll_op op, coll_algo algo, uint64_t bytes)
{
	coll_result res;
	coll_params p = { .op = op, .algo = algo, .bytes = bytes };
	ck_assert_int_eq(coll_run(w->c, &p, &res), 0);
	return res;
}

#define WITHIN(got, want, rel) (fabs((got) - (want)) <= (rel) * fabs(want))

/* T = 2(n-1) (S/n)/B + 2(n-1) alpha, alpha = path latency + per-message latency. */
START_TEST(ring_allreduce_closed_form)
{
	static const uint32_t ns[] = { 2, 3, 8, 64, 512, 4096 };
	uint32_t n = ns[_i];
	uint64_t s = UINT64_C(1) << 30;
	fab_config fc = one_switch(n);
	struct world w;
	double alpha_s = (2 * 60e-9 + 130e-9) + 1500e-9, b = 50e9;
	double want = 2.0 * (n - 1) * ((double)s / n) / b + 2.0 * (n - 1) * alpha_s;
	coll_result r;
	world_new(&w, &fc, &rdma);
	r = run(&w, COLL_ALLREDUCE, COLL_RING, s);
	ck_assert_msg(WITHIN(sim_time_to_s(r.time_ps), want, 1e-3), "n=%u: %.9g s, closed form %.9g s",
		      n, sim_time_to_s(r.time_ps), want);
	ck_assert(WITHIN(r.algbw_GBps, (double)s / want / 1e9, 1e-3));
	ck_assert(WITHIN(r.busbw_GBps, r.algbw_GBps * 2.0 * (n - 1) / n, 1e-12));
	ck_assert_uint_eq(r.stages, 2 * (n - 1));
	world_free(&w);
}
END_TEST

/* Rail topology, 2 nodes x 4 GPUs, NIC k on rail leaf k, no NVLink: the flat
 * ring crosses rails, two hops leave and two enter every leaf. With a 3:1
 * leaf (one uplink) both share it: each step runs at B/2 by max-min. */
START_TEST(oversubscribed_leaf_halves_the_ring)
{
	fab_config fc = { .topo = FAB_RAIL, .nodes = 2, .gpus_per_node = 4, .nics_per_node = 4,
			  .link_Bps = 50e9, .hop_lat_ps = 60 * SIM_NS, .switch_lat_ps = 130 * SIM_NS,
			  .radix = 4, .oversub = 3, .seed = 1 };
	struct world w;
	uint32_t n = 8;
	uint64_t s = UINT64_C(256) << 20;
	double alpha_s = (4 * 60e-9 + 3 * 130e-9) + 1500e-9;
	double want = 2.0 * (n - 1) * ((double)s / n) / (50e9 / 2) + 2.0 * (n - 1) * alpha_s;
	coll_result r;
	world_new(&w, &fc, &rdma);
	r = run(&w, COLL_ALLREDUCE, COLL_RING, s);
	ck_assert_msg(WITHIN(sim_time_to_s(r.time_ps), want, 1e-3), "%.9g vs %.9g",
		      sim_time_to_s(r.time_ps), want);
	world_free(&w);
}
END_TEST

/* Largest number of times the ring's union path crosses one resource. */
static uint32_t ring_max_share(fab *f, uint32_t n)
{
	uint32_t counts[4096] = { 0 }, worst = 0;
	for (uint32_t r = 0; r < n; r++) {
		fab_path p;
		ck_assert_int_eq(fab_route(f, r, (r + 1) % n, 0, FAB_END_GPU, FAB_END_GPU, &p), 0);
		for (uint32_t i = 0; i < p.len; i++) {
			ck_assert_uint_lt(p.res[i], 4096);
			if (++counts[p.res[i]] > worst)
				worst = counts[p.res[i]];
		}
	}
	return worst;
}

/* Same rail fabric at 1:1 (two uplinks per leaf): whether the ring's two
 * hops out of (or into) a leaf collide on one spine depends on the ECMP
 * hash. A colliding seed must be slowed by exactly the max-min factor. */
START_TEST(ecmp_collision_slows_by_max_min)
{
	uint32_t n = 8, seen_collision = 0, seen_clean = 0;
	uint64_t s = UINT64_C(64) << 20;
	for (uint64_t seed = 1; seed <= 40 && !(seen_collision && seen_clean); seed++) {
		fab_config fc = { .topo = FAB_RAIL, .nodes = 2, .gpus_per_node = 4,
				  .nics_per_node = 4, .link_Bps = 50e9, .hop_lat_ps = 60 * SIM_NS,
				  .switch_lat_ps = 130 * SIM_NS, .radix = 4, .oversub = 1,
				  .seed = seed };
		struct world w;
		uint32_t share;
		double alpha_s = (4 * 60e-9 + 3 * 130e-9) + 1500e-9, want;
		coll_result r;
		world_new(&w, &fc, &rdma);
		share = ring_max_share(w.f, n); /* by hand: 1 (clean) or 2 (collision) */
		want = 2.0 * (n - 1) * ((double)s / n) / (50e9 / share) + 2.0 * (n - 1) * alpha_s;
		r = run(&w, COLL_ALLREDUCE, COLL_RING, s);
		ck_assert_msg(WITHIN(sim_time_to_s(r.time_ps), want, 1e-3), "seed %llu share %u: %.9g vs %.9g",
			      (unsigned long long)seed, share, sim_time_to_s(r.time_ps), want);
		seen_collision += share > 1;
		seen_clean += share == 1;
		world_free(&w);
	}
	ck_assert_msg(seen_collision && seen_clean, "expected both outcomes in 40 seeds");
}
END_TEST

static void hog_done(sim_engine *eng, void *obj, uint64_t data)
{
	(void)eng, (void)obj, (void)data;
}

/* A competing flow on rank 2's downlink for the whole collective: the
 * ring's hop into rank 2 gets half that link by max-min, and so does every
 * step (lock-step): the bandwidth term doubles, the latency term does not. */
START_TEST(competing_flow)
{
	uint32_t n = 5, down2;
	uint64_t s = UINT64_C(64) << 20;
	fab_config fc = one_switch(n);
	struct world w;
	coll_result r;
	double alpha_s = (2 * 60e-9 + 130e-9) + 1500e-9, want;
	world_new(&w, &fc, &rdma);
	down2 = fab_nic_down(w.f, 2);
	flow_spec fs = { .bytes = UINT64_C(1) << 40, .path = &down2, .path_len = 1, .done = hog_done };
	ck_assert_int_eq(flow_start(w.net, &fs, NULL), 0);
	r = run(&w, COLL_ALLREDUCE, COLL_RING, s);
	want = 2.0 * (n - 1) * ((double)s / n) / (50e9 / 2) + 2.0 * (n - 1) * alpha_s;
	ck_assert_msg(WITHIN(sim_time_to_s(r.time_ps), want, 1e-3), "%.9g vs %.9g",
		      sim_time_to_s(r.time_ps), want);
	sim_run(w.eng); /* let the competing flow finish */
	world_free(&w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("coll");
	TCase *tc = tcase_create("closed-form");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, ring_allreduce_closed_form, 0, 6);
	suite_add_tcase(s, tc);
	tc = tcase_create("contention");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, oversubscribed_leaf_halves_the_ring);
	tcase_add_test(tc, ecmp_collision_slows_by_max_min);
	tcase_add_test(tc, competing_flow);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
