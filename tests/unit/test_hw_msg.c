/* backend-hw/msg: out-of-band connection messages, their version check and
 * strict decoding; backend-hw/allreduce's pure parts (pattern, check, bus
 * factor) ride along in their own test case. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend-hw/allreduce.h"
#include "backend-hw/msg.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

START_TEST(tcp_round_trip)
{
	hw_msg_tcp in = { .host = "node07", .addr = "10.0.0.7", .port = 40123 }, out;
	char line[HW_MSG_MAX];
	ck_assert_int_eq(hw_msg_encode_tcp(line, sizeof line, &in), 0);
	ck_assert_str_eq(line, "dpusim-hw/1 tcp host=node07 addr=10.0.0.7 port=40123");
	memset(&out, 0, sizeof out);
	ck_assert_int_eq(hw_msg_decode_tcp(line, &out), 0);
	ck_assert_str_eq(out.host, "node07");
	ck_assert_str_eq(out.addr, "10.0.0.7");
	ck_assert_uint_eq(out.port, 40123);
}
END_TEST

START_TEST(verbs_round_trip)
{
	hw_msg_verbs in = { .qpn = 0x123456, .psn = 0xabcdef, .lid = 0, .rkey = 0xdeadbeef,
			    .addr = 0x7f0012345000ull, .bytes = 1 << 20, .mtu = 3 }, out;
	char line[HW_MSG_MAX];
	for (int i = 0; i < 16; i++)
		in.gid[i] = (uint8_t)(i * 17);
	ck_assert_int_eq(hw_msg_encode_verbs(line, sizeof line, &in), 0);
	memset(&out, 0, sizeof out);
	ck_assert_int_eq(hw_msg_decode_verbs(line, &out), 0);
	ck_assert_uint_eq(out.qpn, in.qpn);
	ck_assert_uint_eq(out.psn, in.psn);
	ck_assert_uint_eq(out.rkey, in.rkey);
	ck_assert_uint_eq(out.addr, in.addr);
	ck_assert_uint_eq(out.bytes, in.bytes);
	ck_assert_uint_eq(out.mtu, 3);
	ck_assert_mem_eq(out.gid, in.gid, 16);
}
END_TEST

START_TEST(version_and_kind_are_checked)
{
	hw_msg_tcp t;
	hw_msg_verbs v;
	ck_assert_int_eq(hw_msg_decode_tcp("dpusim-hw/2 tcp host=a addr=b port=1", &t), SIM_EUNSUPPORTED);
	ck_assert_int_eq(hw_msg_decode_tcp("dpusim-hw/1 verbs host=a addr=b port=1", &t), SIM_EPARSE);
	ck_assert_int_eq(hw_msg_decode_tcp("dpusim/1 tcp host=a addr=b port=1", &t), SIM_EPARSE);
	ck_assert_int_eq(hw_msg_decode_tcp("dpusim-hw/1 tcpx host=a addr=b port=1", &t), SIM_EPARSE);
	ck_assert_int_eq(hw_msg_decode_verbs("dpusim-hw/1 tcp host=a addr=b port=1", &v), SIM_EPARSE);
}
END_TEST

START_TEST(malformed_values_are_refused)
{
	hw_msg_tcp t;
	hw_msg_verbs v;
	const char *gid = "00112233445566778899aabbccddeeff";
	char line[HW_MSG_MAX];
	ck_assert_int_eq(hw_msg_decode_tcp("dpusim-hw/1 tcp host=a addr=b", &t), SIM_EPARSE);
	ck_assert_int_eq(hw_msg_decode_tcp("dpusim-hw/1 tcp host=a addr=b port=0", &t), SIM_EPARSE);
	ck_assert_int_eq(hw_msg_decode_tcp("dpusim-hw/1 tcp host=a addr=b port=70000", &t), SIM_EPARSE);
	ck_assert_int_eq(hw_msg_decode_tcp("dpusim-hw/1 tcp host=a addr=b port=-1", &t), SIM_EPARSE);
	ck_assert_int_eq(hw_msg_decode_tcp("dpusim-hw/1 tcp host=a addr=b port=12x", &t), SIM_EPARSE);
	snprintf(line, sizeof line, "dpusim-hw/1 verbs qpn=16777216 psn=1 lid=0 gid=%s rkey=1 "
		 "addr=1 bytes=1 mtu=3", gid);
	ck_assert_int_eq(hw_msg_decode_verbs(line, &v), SIM_EPARSE);   /* QPN is 24 bits */
	snprintf(line, sizeof line, "dpusim-hw/1 verbs qpn=1 psn=1 lid=0 gid=%.30s rkey=1 "
		 "addr=1 bytes=1 mtu=3", gid);
	ck_assert_int_eq(hw_msg_decode_verbs(line, &v), SIM_EPARSE);   /* short GID */
	snprintf(line, sizeof line, "dpusim-hw/1 verbs qpn=1 psn=1 lid=0 gid=%s rkey=1 "
		 "addr=1 bytes=1 mtu=9", gid);
	ck_assert_int_eq(hw_msg_decode_verbs(line, &v), SIM_EPARSE);   /* no such MTU */
	snprintf(line, sizeof line, "dpusim-hw/1 verbs qpn=1 psn=1 lid=0 gid=%s rkey=1 "
		 "addr=1 bytes=1 mtu=3", gid);
	ck_assert_int_eq(hw_msg_decode_verbs(line, &v), 0);
}
END_TEST

START_TEST(encoding_that_does_not_fit)
{
	hw_msg_tcp in = { .host = "h", .addr = "1.2.3.4", .port = 1 };
	char small[16];
	ck_assert_int_eq(hw_msg_encode_tcp(small, sizeof small, &in), SIM_ERANGE);
}
END_TEST

START_TEST(allreduce_pattern_and_check)
{
	enum { N = 1000, RANKS = 5 };
	float *sum = calloc(N, sizeof *sum), *one = malloc(N * sizeof *one), want = 0;
	for (int r = 0; r < RANKS; r++) {
		hw_allreduce_fill(one, N, r);
		for (int i = 0; i < N; i++)
			sum[i] += one[i];
	}
	ck_assert_uint_eq(hw_allreduce_check(sum, N, RANKS, &want), N);
	sum[617] += 1.0f;
	ck_assert_uint_eq(hw_allreduce_check(sum, N, RANKS, &want), 617);
	ck_assert_float_eq(want, sum[617] - 1.0f);
	ck_assert_uint_eq(hw_allreduce_check(sum, N, RANKS - 1, &want), 0); /* wrong rank count */
	ck_assert_double_eq_tol(hw_allreduce_bus_factor(8), 1.75, 1e-12);
	ck_assert_double_eq_tol(hw_allreduce_bus_factor(2), 1.0, 1e-12);
	free(sum);
	free(one);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hw_msg");
	TCase *tc = tcase_create("msg");
	TCase *ar = tcase_create("allreduce");
	tcase_add_test(tc, tcp_round_trip);
	tcase_add_test(tc, verbs_round_trip);
	tcase_add_test(tc, version_and_kind_are_checked);
	tcase_add_test(tc, malformed_values_are_refused);
	tcase_add_test(tc, encoding_that_does_not_fit);
	tcase_add_test(ar, allreduce_pattern_and_check);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ar);
	return s;
}

CHECK_MAIN(suite)
