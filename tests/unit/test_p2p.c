/* models/p2p: perftest's benchmarks against hand-computed bounds: the
 * stream approaches the wire's payload rate (or PCIe's, where slower),
 * latency is the closed form and grows with size, a lone message's
 * latency is below a stream's time for it, the message rate binds small
 * messages, reads come back over the reverse path, a latency test's
 * message above perftest's inline size pays one PCIe read and every one a
 * doorbell, a write into memory and a poll, bad parameters are refused. */
#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "models/p2p.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

#define MiB (1024.0 * 1024)

/* Two nodes of one GPU and one HDR-like NIC on one switch: 25 GB/s links,
 * 130 ns switch, PCIe Gen4 x16 after encoding, ample host memory. */
static fab_config two_nodes(void)
{
	return (fab_config){ .topo = FAB_SINGLE_SWITCH, .nodes = 2, .gpus_per_node = 1,
			     .nics_per_node = 1, .link_Bps = 25e9, .switch_lat_ps = 130000,
			     .pcie_Bps = 16e9 * 128 / 130 / 8 * 16, .pcie = FAB_PCIE_SWITCH,
			     .host_mem_Bps = 409.6e9, .routing = FAB_DMODK, .seed = 1 };
}

/* InfiniBand RC at a 4096-byte MTU doing op (models/wire.h). */
static wire_frame ib(wire_op op)
{
	wire_frame w;
	ck_assert_int_eq(wire_frame_of(true, WIRE_RDMA, op, 4096, &w), 0);
	return w;
}

static p2p_params params(bool lat, uint64_t bytes, uint32_t iterations)
{
	return (p2p_params){ .lat = lat, .bytes = bytes, .qps = 1, .tx_depth = lat ? 1 : 128,
			     .cq_mod = 100, .iterations = iterations, .src = 0, .dst = 1,
			     .end = FAB_END_HOST, .adapter_lat_ps = 600000,
			     .wire = ib(WIRE_WRITE) };
}

/* Runs p on a fresh fabric of fc: 0 or the error. */
static int run(const fab_config *fc, const p2p_params *p, p2p_result *out)
{
	sim_engine *eng = sim_engine_new();
	flow_net *net = eng ? flow_net_new(eng) : NULL;
	fab *f = NULL;
	int rc = net ? fab_new(fc, net, &f) : SIM_ENOMEM;
	if (!rc)
		rc = p2p_run(eng, net, f, p, out);
	fab_free(f);
	flow_net_free(net);
	sim_engine_free(eng);
	return rc;
}

/* A read's latency test of `bytes`, its response's headers on the wire. */
static p2p_params read_lat(uint64_t bytes)
{
	p2p_params p = params(true, bytes, 20);
	p.op = P2P_READ;
	p.wire = ib(WIRE_READ_RESP);
	return p;
}

static p2p_result ok_run(const fab_config *fc, const p2p_params *p)
{
	p2p_result r;
	ck_assert_int_eq(run(fc, p, &r), SIM_OK);
	return r;
}

/* The payload rate of a 25 GB/s InfiniBand link with 4096-byte packets:
 * each carries 26 bytes of headers (LRH, BTH, ICRC, VCRC). */
START_TEST(stream_approaches_the_wire)
{
	fab_config fc = two_nodes();
	p2p_params p = params(false, 8 * 1048576, 300);
	p2p_result r = ok_run(&fc, &p);
	double wire = 25e9 * 4096.0 / 4122;
	ck_assert_double_le(r.bw_Bps, wire);
	ck_assert_double_ge(r.bw_Bps, 0.999 * wire);
	ck_assert_double_eq_tol(r.msg_rate_per_s, r.bw_Bps / (double)p.bytes, 1e-6 * r.msg_rate_per_s);
	/* Two QPs share the link: together no faster. */
	p.qps = 2;
	r = ok_run(&fc, &p);
	ck_assert_double_le(r.bw_Bps, wire);
	ck_assert_double_ge(r.bw_Bps, 0.999 * wire);
	/* Links that already carry payload at the frame's share (as
	 * setup_fabric builds them) give the same rate: headers count once. */
	fc.payload_frac = wire_payload_frac(&p.wire);
	p.qps = 1;
	r = ok_run(&fc, &p);
	ck_assert_double_le(r.bw_Bps, wire);
	ck_assert_double_ge(r.bw_Bps, 0.999 * wire);
}
END_TEST

/* PCIe below the link binds, at its payload rate (no headers there). */
START_TEST(slower_pcie_binds)
{
	fab_config fc = two_nodes();
	fc.pcie_Bps = 10e9;
	p2p_params p = params(false, 8 * 1048576, 300);
	p2p_result r = ok_run(&fc, &p);
	ck_assert_double_le(r.bw_Bps, 10e9);
	ck_assert_double_ge(r.bw_Bps, 0.999 * 10e9);
	/* from GPU memory the same PCIe link is crossed */
	p.end = FAB_END_GPU;
	r = ok_run(&fc, &p);
	ck_assert_double_ge(r.bw_Bps, 0.999 * 10e9);
}
END_TEST

/* One-way: the adapter's latency, the switch's and the wire bytes at the
 * link rate, exactly (to a picosecond of rounding per step). */
START_TEST(latency_is_the_closed_form)
{
	fab_config fc = two_nodes();
	static const uint64_t sizes[] = { 2, 4096, 65536, 1048576 };
	double prev = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		p2p_params p = params(true, sizes[i], 50);
		p2p_result r = ok_run(&fc, &p);
		double want = 600e-9 + 130e-9 + wire_bytes(&p.wire, sizes[i]) / 25e9;
		ck_assert_double_eq_tol(r.time_s, want, 1e-11);
		ck_assert_double_eq_tol(r.lat_p99_s, r.time_s, 1e-11);
		ck_assert_double_eq_tol(r.one_way_lat_s, 730e-9, 1e-12);
		ck_assert_double_gt(r.time_s, prev); /* grows with size */
		prev = r.time_s;
	}
}
END_TEST

/* A lone message: its latency is below the stream's time for it (which
 * waits for the acknowledgement); many in flight: the stream's time per
 * message falls below the latency. */
START_TEST(latency_against_stream)
{
	fab_config fc = two_nodes();
	p2p_params lat = params(true, 65536, 1), bw = params(false, 65536, 1);
	p2p_result l = ok_run(&fc, &lat), one = ok_run(&fc, &bw);
	ck_assert_double_lt(l.time_s, one.time_s);
	bw.iterations = 1000;
	p2p_result many = ok_run(&fc, &bw);
	ck_assert_double_lt(65536 / many.bw_Bps, l.time_s);
	ck_assert_double_gt(many.bw_Bps, one.bw_Bps);
}
END_TEST

/* Small messages: with a deep enough window the adapter's message rate
 * binds, not the wire; with perftest's (128 in flight, a completion every
 * 100) the round trip does: at most 128 messages per two one-way
 * latencies (730 ns each), at least 100 per those and 128 messages' own
 * times (Little's law both ways); one in flight: one per round trip. */
START_TEST(small_messages)
{
	fab_config fc = two_nodes();
	p2p_params p = params(false, 2, 20000);
	double rtt = 2 * 730e-9, one = 2 / (215e6 * 2.0);
	p.msg_rate_per_s = 215e6;
	p.tx_depth = 8192;
	p2p_result r = ok_run(&fc, &p);
	ck_assert_double_le(r.msg_rate_per_s, 215e6);
	/* less the last completion's round trip: 1.46 us of 94.5 */
	ck_assert_double_ge(r.msg_rate_per_s, 0.98 * 215e6);
	p.tx_depth = 128;
	r = ok_run(&fc, &p);
	ck_assert_double_lt(r.msg_rate_per_s, 128 / rtt);
	ck_assert_double_gt(r.msg_rate_per_s, 100 / (rtt + 128 * one));
	p.tx_depth = 1; /* cq_mod 100 is taken as 1, as perftest lowers it */
	p.iterations = 100;
	r = ok_run(&fc, &p);
	ck_assert_double_lt(r.msg_rate_per_s, 1 / rtt);
	ck_assert_double_gt(r.msg_rate_per_s, 0.99 / (rtt + one));
}
END_TEST

/* A ping-pong's answer leaves through the other adapter, as bound by its
 * message rate as the ping: with 1 us per message (1 M/s) each half round
 * trip is the 730 ns latency plus that microsecond, both ways. */
START_TEST(ping_pong_is_rate_bound_both_ways)
{
	fab_config fc = two_nodes();
	p2p_params p = params(true, 2, 20);
	p.msg_rate_per_s = 1e6;
	ck_assert_double_eq_tol(ok_run(&fc, &p).time_s, 730e-9 + 1e-6, 1e-11);
	p.op = P2P_SEND;
	p.wire = ib(WIRE_SEND);
	ck_assert_double_eq_tol(ok_run(&fc, &p).time_s, 730e-9 + 1e-6, 1e-11);
	p.op = P2P_READ; /* a read's request is no message of the adapter's rate */
	p.wire = ib(WIRE_READ_RESP);
	ck_assert_double_eq_tol(ok_run(&fc, &p).time_s, 2 * 730e-9 + 1e-6, 1e-11);
}
END_TEST

/* Reads: the responses come back over the reverse path; with enough
 * outstanding the stream reaches the wire; one outstanding waits a round
 * trip per read (request one way, response back); the latency test is the
 * whole round trip. */
START_TEST(reads)
{
	fab_config fc = two_nodes();
	p2p_params p = params(false, 8 * 1048576, 300);
	p.op = P2P_READ;
	p.wire = ib(WIRE_READ_RESP);
	p.out_reads = 16;
	p2p_result r = ok_run(&fc, &p);
	double wire = 25e9 * 8388608 / wire_bytes(&p.wire, 8388608), L = 730e-9;
	ck_assert_double_le(r.bw_Bps, wire);
	ck_assert_double_ge(r.bw_Bps, 0.999 * wire);
	p.bytes = 65536;
	p.iterations = 500;
	p.out_reads = 1;
	r = ok_run(&fc, &p);
	double one = 2 * L + wire_bytes(&p.wire, 65536) / 25e9;
	ck_assert_double_le(r.bw_Bps, 65536 / one * (1 + 1e-9));
	ck_assert_double_ge(r.bw_Bps, 0.99 * 65536 / one);
	p = read_lat(4096);
	r = ok_run(&fc, &p);
	ck_assert_double_eq_tol(r.time_s, 2 * L + wire_bytes(&p.wire, 4096) / 25e9, 1e-11);
	p = params(false, 4096, 20);
	p.op = P2P_READ; /* a read stream needs its outstanding reads */
	ck_assert_int_eq(run(&fc, &p, &r), SIM_EINVAL);
}
END_TEST

/* perftest's inline size: a latency test's WRITE of at most inline_bytes
 * goes inside its work request, a larger one waits exactly one DMA read of
 * its payload before its first byte leaves; the receiving adapter's write
 * into memory delays every message, inlined or not, exactly once. */
START_TEST(inline_vs_non_inline_differs_by_one_pcie_read)
{
	fab_config fc = two_nodes();
	static const uint64_t sizes[] = { 2, 220, 221, 4096, 65536 };
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		p2p_params p = params(true, sizes[i], 20);
		double plain = ok_run(&fc, &p).time_s, read = sizes[i] > 220 ? 546e-9 : 0;
		p.inline_bytes = 220;
		p.payload_read_ps = 546000;
		p2p_result r = ok_run(&fc, &p);
		ck_assert_double_eq_tol(r.time_s, plain + read, 1e-11);
		ck_assert_double_eq_tol(r.one_way_lat_s, 730e-9 + read, 1e-12);
		p.mem_write_ps = 273000;
		r = ok_run(&fc, &p);
		ck_assert_double_eq_tol(r.time_s, plain + read + 273e-9, 1e-11);
		ck_assert_double_eq_tol(r.one_way_lat_s, 730e-9 + read + 273e-9, 1e-12);
	}
}
END_TEST

/* A SEND is inlined as a WRITE is (perftest's 236 B for RC); a READ never:
 * its responder reads the payload before answering, and the requester's
 * CPU sees the response one write into memory after it arrives. */
START_TEST(reads_always_read_the_payload)
{
	fab_config fc = two_nodes();
	p2p_params p = params(true, 2, 20);
	p.op = P2P_SEND;
	p.wire = ib(WIRE_SEND);
	double plain = ok_run(&fc, &p).time_s;
	p.inline_bytes = 236;
	p.payload_read_ps = 546000;
	ck_assert_double_eq_tol(ok_run(&fc, &p).time_s, plain, 1e-11);
	p = read_lat(2);
	plain = ok_run(&fc, &p).time_s;
	p.inline_bytes = 220; /* no effect on a read */
	p.payload_read_ps = 546000;
	p.mem_write_ps = 273000;
	ck_assert_double_eq_tol(ok_run(&fc, &p).time_s, plain + 546e-9 + 273e-9, 1e-11);
}
END_TEST

/* Setting the latency step at `field` of p to ps makes the run exactly ps
 * later per half round trip (a ping-pong) or per round trip (a read), and
 * its one-way latency ps later where one_way. */
static void step_adds_once(const fab_config *fc, p2p_params p, size_t field, sim_time ps,
			   bool one_way)
{
	p2p_result a = ok_run(fc, &p);
	*(sim_time *)((char *)&p + field) = ps;
	p2p_result b = ok_run(fc, &p);
	ck_assert_double_eq_tol(b.time_s, a.time_s + sim_time_to_s(ps), 1e-11);
	if (one_way)
		ck_assert_double_eq_tol(b.one_way_lat_s, a.one_way_lat_s + sim_time_to_s(ps), 1e-12);
}

/* The CPU's post reaches the adapter one doorbell write later: every
 * message of a ping-pong pays it once, inlined or not, so the half round
 * trip grows by exactly that; a read pays it on its request only (the
 * responder's adapter answers without a CPU), so the round trip grows by
 * it once too. */
START_TEST(every_posted_message_pays_its_doorbell)
{
	fab_config fc = two_nodes();
	static const uint64_t sizes[] = { 2, 220, 221, 4096, 65536 };
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		p2p_params p = params(true, sizes[i], 20);
		p.inline_bytes = 220;
		p.payload_read_ps = 546000;
		p.mem_write_ps = 273000;
		step_adds_once(&fc, p, offsetof(p2p_params, doorbell_ps), 273000, true);
	}
	p2p_params r = read_lat(4096);
	r.payload_read_ps = 546000;
	step_adds_once(&fc, r, offsetof(p2p_params, doorbell_ps), 273000, false);
}
END_TEST

/* The waiting CPU sees a message one polling load after it is in memory:
 * once per message of a ping-pong (half the round trip grows by it) and
 * once per read (the requester polls its completion). */
START_TEST(the_waiting_cpu_sees_a_message_one_poll_later)
{
	fab_config fc = two_nodes();
	static const uint64_t sizes[] = { 2, 4096, 65536 };
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		p2p_params p = params(true, sizes[i], 20);
		p.mem_write_ps = 273000;
		step_adds_once(&fc, p, offsetof(p2p_params, poll_ps), 122000, true);
	}
	step_adds_once(&fc, read_lat(2), offsetof(p2p_params, poll_ps), 122000, false);
}
END_TEST

/* The whole fixed part of a 2 B ping-pong, by hand: doorbell, adapters,
 * switch, write into memory and poll, once each per half round trip (the
 * wire time of 44 bytes at 25 GB/s on top). */
START_TEST(inlined_half_round_trip_by_hand)
{
	fab_config fc = two_nodes();
	p2p_params p = params(true, 2, 20);
	p.inline_bytes = 220;
	p.payload_read_ps = 546000;
	p.mem_write_ps = 273000;
	p.doorbell_ps = 273000;
	p.poll_ps = 122000;
	p2p_result r = ok_run(&fc, &p);
	double fixed = 273e-9 + 600e-9 + 130e-9 + 273e-9 + 122e-9;
	ck_assert_double_eq_tol(r.one_way_lat_s, fixed, 1e-12);
	ck_assert_double_eq_tol(r.time_s, fixed + wire_bytes(&p.wire, 2) / 25e9, 1e-11);
}
END_TEST

/* A stream's payload reads and writes overlap the messages ahead of it on
 * the wire: neither is charged there, so its figures do not move. */
START_TEST(streams_do_not_pay_the_crossings)
{
	fab_config fc = two_nodes();
	p2p_params p = params(false, 65536, 200);
	p2p_result a = ok_run(&fc, &p);
	p.payload_read_ps = 546000;
	p.mem_write_ps = 273000;
	p.doorbell_ps = 273000;
	p.poll_ps = 122000;
	p2p_result b = ok_run(&fc, &p);
	ck_assert_double_eq(a.time_s, b.time_s);
	ck_assert_double_eq(a.one_way_lat_s, b.one_way_lat_s);
}
END_TEST

START_TEST(bad_parameters_are_refused)
{
	fab_config fc = two_nodes();
	p2p_result r;
	p2p_params p = params(false, 0, 10);
	ck_assert_int_eq(run(&fc, &p, &r), SIM_EINVAL);
	p = params(false, 8, 0);
	ck_assert_int_eq(run(&fc, &p, &r), SIM_EINVAL);
	p = params(false, 8, 10);
	p.dst = 0; /* the same node */
	ck_assert_int_eq(run(&fc, &p, &r), SIM_EINVAL);
	p = params(false, 8, 10);
	p.dst = 2; /* no such rank */
	ck_assert_int_eq(run(&fc, &p, &r), SIM_EINVAL);
	p = params(false, 8, 10);
	p.end = FAB_END_SOCKET;
	ck_assert_int_eq(run(&fc, &p, &r), SIM_EINVAL);
	p = params(false, 8, 10);
	p.tx_depth = 0;
	ck_assert_int_eq(run(&fc, &p, &r), SIM_EINVAL);
	/* a transfer past the clock stops the engine with its error */
	fc.link_Bps = 1e-3;
	p = params(true, 1048576, 10);
	ck_assert_int_eq(run(&fc, &p, &r), SIM_EOVERFLOW);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("p2p");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, stream_approaches_the_wire);
	tcase_add_test(tc, slower_pcie_binds);
	tcase_add_test(tc, latency_is_the_closed_form);
	tcase_add_test(tc, latency_against_stream);
	tcase_add_test(tc, small_messages);
	tcase_add_test(tc, ping_pong_is_rate_bound_both_ways);
		tcase_add_test(tc, reads);
	tcase_add_test(tc, inline_vs_non_inline_differs_by_one_pcie_read);
	tcase_add_test(tc, reads_always_read_the_payload);
	tcase_add_test(tc, every_posted_message_pays_its_doorbell);
	tcase_add_test(tc, the_waiting_cpu_sees_a_message_one_poll_later);
	tcase_add_test(tc, inlined_half_round_trip_by_hand);
	tcase_add_test(tc, streams_do_not_pay_the_crossings);
	tcase_add_test(tc, bad_parameters_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
