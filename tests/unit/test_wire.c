/* models/wire: the bytes each link layer and transport put on the wire,
 * against figures computed by hand from the headers (wire.c): the payload
 * share of a link in full packets, a message's wire bytes, RoCE's MTU from
 * the interface's, the MTUs each link layer allows. */
#include <check.h>
#include <string.h>

#include "models/wire.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

static wire_frame frame(bool ib, wire_transport t, wire_op op, uint32_t mtu)
{
	wire_frame w;
	ck_assert_int_eq(wire_frame_of(ib, t, op, mtu, &w), SIM_OK);
	return w;
}

/* Payload B/s of a 400 Gb/s link (50e9 B/s) under frame w. */
static double payload_400g(bool ib, wire_transport t, uint32_t mtu)
{
	wire_frame w = frame(ib, t, WIRE_WRITE, mtu);
	return 50e9 * wire_payload_frac(&w);
}

#define REL(x) (1e-12 * (x))

/* InfiniBand RC, 4096-byte MTU: 26 header bytes per packet,
 * 50e9 x 4096 / 4122 = 49.684619... GB/s. RoCEv2, 4096-byte RoCE MTU (an
 * interface MTU of 9000): 82 per packet, 50e9 x 4096 / 4178 = 49.018669...
 * GB/s; at an interface MTU of 1500 RoCE runs 1024-byte packets:
 * 50e9 x 1024 / 1106 = 46.292947... GB/s. TCP over Ethernet, 1500: 1448
 * bytes of payload in 1538 on the wire (1500 + 38), 47.074122... GB/s;
 * 9000: 8948 in 9038, 49.502102... GB/s. TCP over IPoIB, IB MTU 2048:
 * 1992 in 2082, 47.838616... GB/s; 4096: 4040 in 4130, 48.910411... GB/s. */
START_TEST(payload_rates_are_the_hand_computed_figures)
{
	ck_assert_double_eq_tol(payload_400g(true, WIRE_RDMA, 4096), 50e9 * 4096 / 4122, REL(50e9));
	ck_assert_double_eq_tol(payload_400g(true, WIRE_RDMA, 4096), 49.684619116933525e9, 1e-3);
	ck_assert_double_eq_tol(payload_400g(false, WIRE_RDMA, 9000), 50e9 * 4096 / 4178, REL(50e9));
	ck_assert_double_eq_tol(payload_400g(false, WIRE_RDMA, 9000), 49.01866921972236e9, 1e-3);
	ck_assert_double_eq_tol(payload_400g(false, WIRE_RDMA, 1500), 50e9 * 1024 / 1106, REL(50e9));
	ck_assert_double_eq_tol(payload_400g(false, WIRE_TCP, 1500), 50e9 * 1448 / 1538, REL(50e9));
	ck_assert_double_eq_tol(payload_400g(false, WIRE_TCP, 1500), 47.074122236671e9, 1e-3);
	ck_assert_double_eq_tol(payload_400g(false, WIRE_TCP, 9000), 50e9 * 8948 / 9038, REL(50e9));
	ck_assert_double_eq_tol(payload_400g(false, WIRE_TCP, 9000), 49.502102235007744e9, 1e-3);
	ck_assert_double_eq_tol(payload_400g(true, WIRE_TCP, 2048), 50e9 * 1992 / 2082, REL(50e9));
	ck_assert_double_eq_tol(payload_400g(true, WIRE_TCP, 4096), 50e9 * 4040 / 4130, REL(50e9));
}
END_TEST

/* RoCE takes the largest IB MTU that fits the interface's after 96 bytes
 * of headroom (Linux iboe_get_mtu): 4192 is the least for 4096. */
START_TEST(roce_mtu_follows_the_interface)
{
	ck_assert_uint_eq(frame(false, WIRE_RDMA, WIRE_SEND, 1500).mtu_bytes, 1024);
	ck_assert_uint_eq(frame(false, WIRE_RDMA, WIRE_SEND, 4192).mtu_bytes, 4096);
	ck_assert_uint_eq(frame(false, WIRE_RDMA, WIRE_SEND, 4191).mtu_bytes, 2048);
	ck_assert_uint_eq(frame(false, WIRE_RDMA, WIRE_SEND, 9000).mtu_bytes, 4096);
	ck_assert_uint_eq(frame(false, WIRE_RDMA, WIRE_SEND, 576).mtu_bytes, 256);
	ck_assert_uint_eq(frame(false, WIRE_TCP, WIRE_SEND, 1500).mtu_bytes, 1448);
	ck_assert_uint_eq(frame(true, WIRE_TCP, WIRE_SEND, 2048).mtu_bytes, 1992);
	ck_assert_uint_eq(frame(true, WIRE_RDMA, WIRE_SEND, 1024).mtu_bytes, 1024);
}
END_TEST

/* A WRITE's first packet carries a RETH, a SEND none, a READ response an
 * AETH in its first and last; a partial last packet carries its headers. */
START_TEST(message_bytes)
{
	wire_frame w = frame(true, WIRE_RDMA, WIRE_WRITE, 4096);
	wire_frame s = frame(true, WIRE_RDMA, WIRE_SEND, 4096);
	wire_frame e = frame(false, WIRE_RDMA, WIRE_WRITE, 9000);
	wire_frame rd = frame(true, WIRE_RDMA, WIRE_READ_RESP, 4096);
	wire_frame t = frame(false, WIRE_TCP, WIRE_SEND, 1500);
	ck_assert_double_eq(wire_bytes(&w, 2), 2 + 26 + 16);
	ck_assert_double_eq(wire_bytes(&s, 2), 2 + 26);
	ck_assert_double_eq(wire_bytes(&s, 0), 26);
	ck_assert_double_eq(wire_bytes(&w, 4097), 4097 + 2 * 26 + 16);
	ck_assert_double_eq(wire_bytes(&e, 4096), 4096 + 82 + 16);
	ck_assert_double_eq(wire_bytes(&rd, 2), 2 + 26 + 4);
	ck_assert_double_eq(wire_bytes(&rd, 8192), 8192 + 2 * 26 + 4 + 4);
	ck_assert_double_eq(wire_bytes(&t, 1449), 1449 + 2 * 90);
}
END_TEST

/* InfiniBand MTUs are powers of two from 256 to 4096; Ethernet's 576 to
 * 9216; a frame of another is refused and *out left alone. Defaults. */
START_TEST(mtus_of_each_link_layer)
{
	wire_frame w = { .mtu_bytes = 7 };
	ck_assert(wire_mtu_ok(true, 256) && wire_mtu_ok(true, 4096) && wire_mtu_ok(true, 2048));
	ck_assert(!wire_mtu_ok(true, 1500) && !wire_mtu_ok(true, 8192) && !wire_mtu_ok(true, 128));
	ck_assert(!wire_mtu_ok(true, 0));
	ck_assert(wire_mtu_ok(false, 576) && wire_mtu_ok(false, 1500) && wire_mtu_ok(false, 9216));
	ck_assert(!wire_mtu_ok(false, 575) && !wire_mtu_ok(false, 9217));
	ck_assert_int_eq(wire_frame_of(true, WIRE_RDMA, WIRE_WRITE, 3000, &w), SIM_EINVAL);
	ck_assert_int_eq(wire_frame_of(false, WIRE_TCP, WIRE_SEND, 100, &w), SIM_EINVAL);
	ck_assert_uint_eq(w.mtu_bytes, 7);
	ck_assert_uint_eq(wire_default_mtu(true, WIRE_RDMA), 4096);
	ck_assert_uint_eq(wire_default_mtu(true, WIRE_TCP), 2048);
	ck_assert_uint_eq(wire_default_mtu(false, WIRE_RDMA), 1500);
	ck_assert_uint_eq(wire_default_mtu(false, WIRE_TCP), 1500);
}
END_TEST

/* wire_frame_at: 0 takes the default (and says which), a set MTU is taken
 * as given, a bad one refused with the MTU named; the words for notes and
 * errors follow the link layer. */
START_TEST(frame_at_the_default_or_the_set_mtu)
{
	wire_frame a, b;
	uint32_t mtu = 0;
	ck_assert_int_eq(wire_frame_at(true, WIRE_TCP, WIRE_SEND, 0, &a, &mtu), SIM_OK);
	ck_assert_uint_eq(mtu, 2048);
	ck_assert_int_eq(wire_frame_of(true, WIRE_TCP, WIRE_SEND, 2048, &b), SIM_OK);
	ck_assert_uint_eq(a.mtu_bytes, b.mtu_bytes);
	ck_assert_int_eq(wire_frame_at(false, WIRE_RDMA, WIRE_WRITE, 9000, &a, &mtu), SIM_OK);
	ck_assert_uint_eq(mtu, 9000);
	ck_assert_uint_eq(a.mtu_bytes, 4096);
	ck_assert_int_eq(wire_frame_at(true, WIRE_RDMA, WIRE_WRITE, 1500, &a, &mtu), SIM_EINVAL);
	ck_assert_uint_eq(mtu, 1500);
	ck_assert_str_eq(wire_default_mtu_why(true, WIRE_TCP), "the default for IPoIB");
	ck_assert_str_eq(wire_default_mtu_why(true, WIRE_RDMA), "the default for InfiniBand RDMA");
	ck_assert_str_eq(wire_default_mtu_why(false, WIRE_TCP), "the default for Ethernet");
	ck_assert_ptr_nonnull(strstr(wire_mtu_words(true), "4096 bytes of payload"));
	ck_assert_ptr_nonnull(strstr(wire_mtu_words(false), "576 to 9216"));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, payload_rates_are_the_hand_computed_figures);
	tcase_add_test(tc, roce_mtu_follows_the_interface);
	tcase_add_test(tc, message_bytes);
	tcase_add_test(tc, mtus_of_each_link_layer);
	tcase_add_test(tc, frame_at_the_default_or_the_set_mtu);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
