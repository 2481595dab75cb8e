/* models/coll: collectives over a group of the fabric's ranks (a
 * data-parallel group) behave like the same collective on a fabric of just
 * those ranks, and groups on disjoint links do not disturb each other. */
#include <check.h>
#include <stdlib.h>

#include "models/coll.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"
#include "tests/unit/fixture.h"

static fab_config nodes_of(uint32_t nodes, uint32_t gpn)
{
	return (fab_config){ .topo = FAB_SINGLE_SWITCH, .nodes = nodes, .gpus_per_node = gpn,
			     .nics_per_node = gpn, .link_Bps = 25e9, .hop_lat_ps = 100000,
			     .switch_lat_ps = 200000, .oversub = 1, .nvlink_Bps = 300e9,
			     .nvlink_lat_ps = 500000 };
}

static void world_new(fx_world *w, uint32_t nodes, uint32_t gpn)
{
	fab_config fc = nodes_of(nodes, gpn);
	coll_config cc = { .transport = { .kind = COLL_RDMA_GDR, .msg_lat_ps = 1000000 } };
	fx_world_new(w, &fc, &cc);
}

/* Ranks 3, 11, 19, 27 of 4 nodes x 8 GPUs (GPU 3 of each node) ring
 * all-reduce exactly as 4 single-GPU nodes do. */
START_TEST(group_equals_small_fabric)
{
	fx_world big, small;
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
	fx_world_free(&big);
	fx_world_free(&small);
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
	fx_world w;
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
	fx_world_free(&w);
}
END_TEST

START_TEST(bad_groups_are_refused)
{
	fx_world w;
	coll_result r;
	static const uint32_t out_of_range[] = { 0, 99 }, one[] = { 5 };
	world_new(&w, 2, 8);
	coll_params p = { .op = COLL_ALLREDUCE, .algo = COLL_RING, .bytes = 1024,
			  .ranks = out_of_range, .nranks = 2 };
	ck_assert_int_eq(coll_start(w.c, &p, &r, NULL, NULL, 0), SIM_EINVAL);
	p.ranks = one, p.nranks = 1;
	ck_assert_int_eq(coll_start(w.c, &p, &r, NULL, NULL, 0), SIM_EINVAL);
	fx_world_free(&w);
}
END_TEST

/* Predictions share one per-resource scratch (a group's view borrows its
 * context's) and leave it clear: a small group's prediction after a large
 * collective's over the same NICs equals it on a context that made none,
 * and so does the large one after it. */
START_TEST(predictions_leave_no_trace)
{
	fx_world used, fresh;
	static const uint32_t grp[] = { 3, 11, 19, 27 };
	coll_params small = { .op = COLL_ALLREDUCE, .bytes = 1 << 20, .ranks = grp, .nranks = 4 };
	coll_params large = { .op = COLL_ALLREDUCE, .bytes = (uint64_t)1 << 30 };
	sim_time want_small, want_large, t;
	world_new(&fresh, 4, 8);
	ck_assert_int_eq(coll_predict(fresh.c, &small, COLL_RING, &want_small), 0);
	fx_world_free(&fresh);
	world_new(&fresh, 4, 8);
	ck_assert_int_eq(coll_predict(fresh.c, &large, COLL_RING, &want_large), 0);
	fx_world_free(&fresh);
	world_new(&used, 4, 8);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(coll_predict(used.c, &large, COLL_RING, &t), 0);
		ck_assert_int_eq(t, want_large);
		ck_assert_int_eq(coll_predict(used.c, &small, COLL_RING, &t), 0);
		ck_assert_int_eq(t, want_small);
	}
	fx_world_free(&used);
}
END_TEST

/* GPU k of nodes 0 and 1: a data-parallel pair, one GPU per node in the
 * group, so one channel. */
static const uint32_t pair[] = { 3, 11 };

/* Under host TCP a connection moves at most one core's worth (conn_cap).
 * NCCL's tuner does not see that limit (it takes the network's bandwidth
 * from the NIC), so TCP runs what RDMA runs on the same links: for a large
 * buffer on a data-parallel pair, the ring. The pair runs on NCCL's two
 * channels, so its ring holds two connections to its peer, as its two
 * trees do together, and the ring is the faster under TCP too: its time
 * is two steps of S/2 at 2 x 5 GB/s and its loops' latencies (32 loops of
 * 8 MiB, 3%). The two trees, a connection each, move the same bytes
 * through the same two cores: NCCL's tree factors (0.92, and 0.9 at 256
 * MiB) slow the GPUs' side, not the cores, so the tree is held to the same
 * bound (until December 2026 the factors were charged to the cores too,
 * and the tree ran 21% slower under TCP).
 * Before, the pair's ring had one channel (one connection) and the choice
 * was ranked with the cap: TCP ran the tree, RDMA the ring. */
START_TEST(tcp_chooses_as_rdma)
{
	fab_config fc = nodes_of(2, 8);
	coll_config cc = { .transport = { .kind = COLL_RDMA_GDR, .msg_lat_ps = 1000000 },
			   .proto = COLL_PROTO_NCCL };
	coll_params p = { .op = COLL_ALLREDUCE, .algo = COLL_AUTO, .bytes = 256 << 20,
			  .ranks = pair, .nranks = 2 };
	coll_result rdma, tcp, tree;
	fx_world w;
	fx_world_new(&w, &fc, &cc);
	ck_assert_int_eq(coll_run(w.c, &p, &rdma), 0);
	fx_world_free(&w);
	cc.transport.kind = COLL_HOST_TCP;
	cc.transport.conn_cap_Bps = 5e9;
	fx_world_new(&w, &fc, &cc);
	ck_assert_int_eq(coll_run(w.c, &p, &tcp), 0);
	ck_assert_str_eq(coll_algo_name(rdma.algo), "ring");
	ck_assert_str_eq(coll_algo_name(tcp.algo), coll_algo_name(rdma.algo));
	ck_assert_double_le(256.0 * (1 << 20) / 10e9, sim_time_to_s(tcp.time_ps));
	ck_assert_double_le(sim_time_to_s(tcp.time_ps), 256.0 * (1 << 20) / 10e9 * 1.05);
	p.algo = COLL_TREE;
	ck_assert_int_eq(coll_run(w.c, &p, &tree), 0);
	ck_assert_msg(256.0 * (1 << 20) / 10e9 <= sim_time_to_s(tree.time_ps) &&
		      sim_time_to_s(tree.time_ps) <= 256.0 * (1 << 20) / 10e9 * 1.05,
		      "ring %.6g s, tree %.6g s", sim_time_to_s(tcp.time_ps),
		      sim_time_to_s(tree.time_ps));
	fx_world_free(&w);
}
END_TEST

/* NCCL's protocol factors hold the links, not the cores: under host TCP
 * with a connection's cores binding (1 GB/s, far under the 50 GB/s
 * links), ring/LL on the pair moves its data and LL's flags (16-byte
 * lines of 8 data bytes: twice the data) through its two connections,
 * S x 2 / (2 x 1 GB/s), plus its loops' latency; the model charged LL's
 * factor of 1/4 to the cores as four times the data until December 2026
 * (twice this time). The host cycles counted are the same bytes'. */
START_TEST(protocol_factors_hold_links_not_cores)
{
	fab_config fc = nodes_of(2, 8);
	coll_config cc = { .transport = { .kind = COLL_HOST_TCP, .msg_lat_ps = 1000000,
					  .conn_cap_Bps = 1e9 },
			   .proto = COLL_PROTO_LL };
	uint64_t s = UINT64_C(4) << 20;
	coll_params p = { .op = COLL_ALLREDUCE, .algo = COLL_RING, .bytes = s, .ranks = pair,
			  .nranks = 2 };
	coll_result r;
	fx_world w;
	fx_world_new(&w, &fc, &cc);
	ck_assert_int_eq(coll_run(w.c, &p, &r), 0);
	double t = sim_time_to_s(r.time_ps), want = (double)s * 2 / 2e9;
	ck_assert_msg(want <= t && t <= want * 1.2, "ring/LL %.6g s, bound %.6g s", t, want);
	fx_world_free(&w);
}
END_TEST

/* The routes are the connections': a tree hop between two ranks takes the
 * route of the ring connection between them on the tree's channel, so on
 * an ECMP fat tree a pair's ring and tree collide on the same uplinks,
 * and the faster algorithm does not depend on which of them the hash
 * happened to spread better. 32 pairs (GPU k of node i and of node i+4,
 * the two halves on different leaves) all-reduce at once over 2 x 32
 * uplinks: on every seed the tree (92% of the ring's bandwidth under
 * NCCL's Simple protocol) is no faster than the ring. Before, the tree
 * routed by a key of its own: on 4 of these 8 seeds its draw collided
 * less than the ring's and it took up to 35% less time. */
START_TEST(ecmp_tree_takes_the_rings_routes)
{
	fab_config fc = { .topo = FAB_FAT_TREE2, .nodes = 8, .gpus_per_node = 8,
			  .nics_per_node = 8, .link_Bps = 12.5e9, .hop_lat_ps = 100000,
			  .switch_lat_ps = 130000, .radix = 64, .oversub = 1,
			  .nvlink_Bps = 450e9, .nvlink_lat_ps = 500000 };
	coll_config cc = { .transport = { .kind = COLL_RDMA_GDR, .msg_lat_ps = 600000 },
			   .proto = COLL_PROTO_NCCL };
	uint32_t grp[32][2];
	for (uint32_t g = 0; g < 32; g++)
		grp[g][0] = g, grp[g][1] = g + 32;
	for (uint64_t seed = 1; seed <= 8; seed++) {
		sim_time worst[2] = { 0, 0 };
		fc.seed = seed;
		for (int a = 0; a < 2; a++) {
			fx_world w;
			coll_result res[32];
			int done = 0;
			fx_world_new(&w, &fc, &cc);
			for (uint32_t g = 0; g < 32; g++) {
				coll_params p = { .op = COLL_ALLREDUCE, .algo = a ? COLL_TREE : COLL_RING,
						  .bytes = 64 << 20, .ranks = grp[g], .nranks = 2 };
				ck_assert_int_eq(coll_start(w.c, &p, &res[g], count, &done, g), 0);
			}
			sim_run(w.eng);
			ck_assert_int_eq(done, 32);
			for (uint32_t g = 0; g < 32; g++)
				if (res[g].time_ps > worst[a])
					worst[a] = res[g].time_ps;
			fx_world_free(&w);
		}
		ck_assert_msg(worst[1] >= worst[0], "seed %llu: tree %.6g s, ring %.6g s",
			      (unsigned long long)seed, sim_time_to_s(worst[1]), sim_time_to_s(worst[0]));
	}
}
END_TEST

/* A group tp apart holds gpus_per_node / tp GPUs of each node, each with
 * its NIC: NCCL's search (coll_nccl_net_ring, reproduced for GPUs with a
 * NIC each) gives its ring as many channels as it finds for that many GPUs
 * and NICs, more than for one GPU a node: here (200 Gb/s) 2, 4 and 8 for
 * 1, 2 and 4 a node. Before, only groups of one GPU or whole nodes got the
 * search's count; a group of 2 or 4 a node ran on 2 or 4 channels (on NDR
 * with H100s, where one GPU a node gets 4, fewer than it), so under host
 * TCP (a connection's cap per channel) a data-parallel ring of tp 4 ran at
 * half the bandwidth of tp 8's. coll_ring_channels, which dpusim plan's
 * estimate reads, gives the same count. */
START_TEST(partial_node_groups_take_the_search_channels)
{
	fab_config fc = nodes_of(4, 8);
	coll_config cc = { .transport = { .kind = COLL_HOST_TCP, .msg_lat_ps = 1000000,
					  .conn_cap_Bps = 2e9 },
			   .proto = COLL_PROTO_NCCL, .nccl_cc = 90, .nccl_pci_GBps = 24 };
	uint32_t grp[16];
	coll_result res[3];
	fx_world w;
	fx_world_new(&w, &fc, &cc);
	for (uint32_t k = 0, g = 1; k < 3; k++, g *= 2) { /* g GPUs a node, 8 / g apart */
		coll_nccl_net in = { .gpus = g, .nics = g, .nodes = 4, .nic_GBps = 25,
				     .pci_GBps = 24, .nvlink_GBps = 300, .hopper = true };
		coll_nccl_graph gr;
		coll_params p = { .op = COLL_ALLREDUCE, .algo = COLL_RING, .bytes = 256 << 20,
				  .ranks = grp, .nranks = 4 * g };
		for (uint32_t i = 0; i < 4 * g; i++)
			grp[i] = i * (8 / g);
		ck_assert_int_eq(coll_run(w.c, &p, &res[k]), 0);
		ck_assert_int_eq(coll_nccl_net_ring(&in, &gr), 0);
		ck_assert_uint_eq(res[k].channels, gr.channels);
		/* what dpusim plan's estimate reads is what the group ran */
		ck_assert_uint_eq(coll_ring_channels(&fc, &cc, g, 4), res[k].channels);
		if (k)
			ck_assert_msg(res[k].busbw_GBps >= res[k - 1].busbw_GBps * (1 - 1e-9),
				      "%u a node %.4g GB/s, %u a node %.4g GB/s", g, res[k].busbw_GBps,
				      g / 2, res[k - 1].busbw_GBps);
	}
	ck_assert_uint_gt(res[1].channels, res[0].channels);
	fx_world_free(&w);
}
END_TEST

/* A group inside one node runs on NCCL's NVLink channels (node_channels,
 * the GPU profile's nccl_channels), whatever the node's NICs: NCCL's ring
 * search there fits rings to each GPU's NVLink bandwidth. Its channels were
 * one per NIC (at most one per member): a data-parallel pair on one node
 * ran 1 channel with one NIC, 2 with two, and its 813 MiB all-reduce took
 * NCCL's tree at one NIC and a ring 30% slower at two, so a second NIC
 * slowed training (tests/e2e/metamorphic.py dp-in-node). */
START_TEST(groups_in_one_node_take_the_nvlink_channels)
{
	static const uint32_t two[] = { 2, 3 };
	coll_result res[2], old[2];
	for (uint32_t k = 0; k < 2; k++) {
		fab_config fc = nodes_of(2, 8);
		coll_config cc = { .transport = { .kind = COLL_RDMA_GDR, .msg_lat_ps = 1000000 },
				   .proto = COLL_PROTO_NCCL, .nccl_cc = 90, .node_channels = 24 };
		coll_config nic = cc;
		coll_params p = { .op = COLL_ALLREDUCE, .algo = COLL_AUTO, .bytes = 813u << 20,
				  .ranks = two, .nranks = 2 };
		fx_world w;
		fc.nics_per_node = k + 1;
		nic.node_channels = 0;
		fx_world_new(&w, &fc, &cc);
		ck_assert_int_eq(coll_run(w.c, &p, &res[k]), 0);
		ck_assert_uint_eq(res[k].channels, 24);
		ck_assert_uint_eq(coll_ring_channels(&fc, &cc, 2, 1), 24);
		fx_world_free(&w);
		fx_world_new(&w, &fc, &nic); /* without the count: one per NIC, as before */
		ck_assert_int_eq(coll_run(w.c, &p, &old[k]), 0);
		ck_assert_uint_eq(coll_ring_channels(&fc, &nic, 2, 1), k + 1);
		fx_world_free(&w);
	}
	ck_assert_int_eq(res[0].algo, res[1].algo);
	ck_assert_int_eq(res[0].time_ps, res[1].time_ps);
	ck_assert_int_ne(old[0].time_ps, old[1].time_ps); /* what the count removes */
}
END_TEST

/* NCCL's point-to-point channels to a rank on another node (v2.21.5
 * paths.cc ncclTopoGetNchannels): 2, halved while 2 x ranks exceeds 4 x
 * the communicator's channels, never above them. One GPU a node on this
 * fabric runs the search's channels (2 at 200 Gb/s, as above): 2 up to 4
 * ranks, 1 from 8. */
START_TEST(p2p_sends_take_two_channels_in_small_communicators)
{
	fab_config fc = nodes_of(16, 8);
	coll_config cc = { .transport = { .kind = COLL_HOST_TCP, .conn_cap_Bps = 2e9 },
			   .proto = COLL_PROTO_NCCL, .nccl_cc = 90, .nccl_pci_GBps = 24 };
	uint32_t ring = coll_ring_channels(&fc, &cc, 1, 2);
	ck_assert_uint_eq(ring, 2);
	ck_assert_uint_eq(coll_p2p_channels(&fc, &cc, 2), 2);
	ck_assert_uint_eq(coll_p2p_channels(&fc, &cc, 4), 2);
	ck_assert_uint_eq(coll_p2p_channels(&fc, &cc, 8), 1);
	ck_assert_uint_eq(coll_p2p_channels(&fc, &cc, 16), 1);
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
	tcase_add_test(tc, tcp_chooses_as_rdma);
	tcase_add_test(tc, protocol_factors_hold_links_not_cores);
	tcase_add_test(tc, partial_node_groups_take_the_search_channels);
	tcase_add_test(tc, groups_in_one_node_take_the_nvlink_channels);
	tcase_add_test(tc, p2p_sends_take_two_channels_in_small_communicators);
	tcase_add_test(tc, ecmp_tree_takes_the_rings_routes);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
