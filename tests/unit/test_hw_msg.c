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

/* Decodes `text` from a heap slot of exactly its size (NUL included), so a
 * read past the slot is an AddressSanitizer error. */
static int dec_slot(const char *bytes, size_t cap, int verbs)
{
	char *slot = malloc(cap);
	hw_msg_tcp t;
	hw_msg_verbs v;
	int err;
	memcpy(slot, bytes, cap);
	err = verbs ? hw_msg_decode_verbs(slot, cap, &v) : hw_msg_decode_tcp(slot, cap, &t);
	free(slot);
	return err;
}

static int dec_tcp(const char *text)
{
	return dec_slot(text, strlen(text) + 1, 0);
}

static int dec_verbs(const char *text)
{
	return dec_slot(text, strlen(text) + 1, 1);
}

START_TEST(tcp_round_trip)
{
	hw_msg_tcp in = { .host = "node07", .addr = "10.0.0.7", .port = 40123 }, out;
	char line[HW_MSG_MAX];
	ck_assert_int_eq(hw_msg_encode_tcp(line, sizeof line, &in), 0);
	ck_assert_str_eq(line, "dpusim-hw/1 tcp host=node07 addr=10.0.0.7 port=40123");
	memset(&out, 0, sizeof out);
	ck_assert_int_eq(hw_msg_decode_tcp(line, sizeof line, &out), 0);
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
	ck_assert_int_eq(hw_msg_decode_verbs(line, sizeof line, &out), 0);
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
	ck_assert_int_eq(dec_tcp("dpusim-hw/2 tcp host=a addr=b port=1"), SIM_EUNSUPPORTED);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 verbs host=a addr=b port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim/1 tcp host=a addr=b port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcpx host=a addr=b port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_verbs("dpusim-hw/1 tcp host=a addr=b port=1"), SIM_EPARSE);
}
END_TEST

START_TEST(malformed_values_are_refused)
{
	const char *gid = "00112233445566778899aabbccddeeff";
	char line[HW_MSG_MAX];
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a addr=b"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a addr=b port=0"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a addr=b port=70000"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a addr=b port=-1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a addr=b port=12x"), SIM_EPARSE);
	snprintf(line, sizeof line, "dpusim-hw/1 verbs qpn=16777216 psn=1 lid=0 gid=%s rkey=1 "
		 "addr=1 bytes=1 mtu=3", gid);
	ck_assert_int_eq(dec_verbs(line), SIM_EPARSE);   /* QPN is 24 bits */
	snprintf(line, sizeof line, "dpusim-hw/1 verbs qpn=1 psn=1 lid=0 gid=%.30s rkey=1 "
		 "addr=1 bytes=1 mtu=3", gid);
	ck_assert_int_eq(dec_verbs(line), SIM_EPARSE);   /* short GID */
	snprintf(line, sizeof line, "dpusim-hw/1 verbs qpn=1 psn=1 lid=0 gid=%s rkey=1 "
		 "addr=1 bytes=1 mtu=9", gid);
	ck_assert_int_eq(dec_verbs(line), SIM_EPARSE);   /* no such MTU */
	snprintf(line, sizeof line, "dpusim-hw/1 verbs qpn=1 psn=1 lid=0 gid=%s rkey=1 "
		 "addr=1 bytes=1 mtu=3", gid);
	ck_assert_int_eq(dec_verbs(line), 0);
}
END_TEST

/* A verbs record with one field replaced: "KEY=VALUE" or "" for none. */
static int verbs_with(const char *qpn, const char *bytes_addr)
{
	char line[HW_MSG_MAX];
	snprintf(line, sizeof line, "dpusim-hw/1 verbs %s psn=1 lid=0 "
		 "gid=00112233445566778899aabbccddeeff rkey=1 %s mtu=3", qpn, bytes_addr);
	return dec_verbs(line);
}

/* Records a broken or hostile peer could send (issue 17 item 11): each is
 * refused, and nothing past the slot is read (the slot is a heap block of
 * exactly its size, so ASan would see it). */
START_TEST(hostile_records_are_refused)
{
	char slot[HW_MSG_MAX];
	memset(slot, 'A', sizeof slot); /* no NUL anywhere in the slot */
	ck_assert_int_eq(dec_slot(slot, sizeof slot, 0), SIM_EPARSE);
	ck_assert_int_eq(dec_slot(slot, sizeof slot, 1), SIM_EPARSE);
	ck_assert_int_eq(hw_msg_check(slot, sizeof slot), SIM_EPARSE);
	memcpy(slot, "dpusim-hw/1 tcp host=a addr=b port=1 ", 37); /* valid start, no end */
	ck_assert_int_eq(dec_slot(slot, sizeof slot, 0), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp(""), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a\x1b[2J addr=b port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a\taddr=b port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=\xc3\xa9 addr=b port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=%n%n addr=b port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a/b addr=b port=1"), SIM_EPARSE);
	/* Keys: each once, none unknown, none empty; single spaces only. */
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a addr=b port=1 port=2"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a host=c addr=b port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a addr=b port=1 evil=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host= addr=b port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a addr=b port=1 "), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a  addr=b port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a addr=b =1 port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a addr=b port=1=2"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1 tcp host=a addr=b port=1"), 0);
	/* A host name longer than the field (63 characters fit). */
	snprintf(slot, sizeof slot, "dpusim-hw/1 tcp host=%064d addr=b port=1", 0);
	ck_assert_int_eq(dec_tcp(slot), SIM_EPARSE);
	snprintf(slot, sizeof slot, "dpusim-hw/1 tcp host=%063d addr=b port=1", 0);
	ck_assert_int_eq(dec_tcp(slot), 0);
	/* Versions: another one is named as such; an absurd one is malformed. */
	ck_assert_int_eq(dec_tcp("dpusim-hw/99999999999999999999 tcp host=a addr=b port=1"),
			 SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/-1 tcp host=a addr=b port=1"), SIM_EPARSE);
	ck_assert_int_eq(dec_tcp("dpusim-hw/1"), SIM_EPARSE);
	/* Numbers: ranges that would misconfigure a QP or a remote write. */
	ck_assert_int_eq(verbs_with("qpn=5", "addr=4096 bytes=1"), 0);
	ck_assert_int_eq(verbs_with("qpn=0", "addr=4096 bytes=1"), SIM_EPARSE);
	ck_assert_int_eq(verbs_with("qpn=+5", "addr=4096 bytes=1"), SIM_EPARSE);
	ck_assert_int_eq(verbs_with("qpn=99999999999999999999999", "addr=1 bytes=1"), SIM_EPARSE);
	ck_assert_int_eq(verbs_with("qpn=5", "addr=4096 bytes=0"), SIM_EPARSE);
	ck_assert_int_eq(verbs_with("qpn=5", "addr=18446744073709551615 bytes=2"), SIM_EPARSE);
	ck_assert_int_eq(verbs_with("qpn=5", "addr=18446744073709551614 bytes=1"), 0);
	ck_assert_int_eq(verbs_with("", "addr=4096 bytes=1"), SIM_EPARSE);
}
END_TEST

/* The decoders leave *m alone on failure and never read past the slot, for
 * every prefix of a good record and for random bytes. */
START_TEST(truncated_and_random_records)
{
	hw_msg_verbs in = { .qpn = 7, .psn = 9, .rkey = 3, .addr = 4096, .bytes = 64, .mtu = 1 };
	hw_msg_tcp t = { .port = 77 };
	char line[HW_MSG_MAX], slot[HW_MSG_MAX];
	unsigned seed = 1;
	ck_assert_int_eq(hw_msg_encode_verbs(line, sizeof line, &in), 0);
	for (size_t n = 1; n < strlen(line); n++) /* a prefix ending in a digit can be valid */
		if (dec_slot(line, n, 1) == 0)
			ck_abort_msg("a %zu-byte slot without NUL decoded", n);
	for (int k = 0; k < 2000; k++) {
		for (size_t i = 0; i < sizeof slot; i++)
			slot[i] = (char)(rand_r(&seed) % (k % 2 ? 96 : 256) + (k % 2 ? 32 : 0));
		slot[(size_t)rand_r(&seed) % sizeof slot] = '\0';
		ck_assert_int_ne(hw_msg_decode_tcp(slot, sizeof slot, &t), 0);
		ck_assert_int_ne(dec_slot(slot, sizeof slot, 1), 0);
	}
	ck_assert_uint_eq(t.port, 77);
}
END_TEST

/* What an error message shows of a peer's record: bounded, printable. */
START_TEST(records_are_quoted_safely)
{
	char out[32], slot[HW_MSG_MAX];
	hw_msg_quote("ok\x1b[2J\\", 8, out, sizeof out);
	ck_assert_str_eq(out, "ok\\x1b[2J\\x5c");
	memset(slot, 'A', sizeof slot); /* no NUL: cut to the output, marked */
	hw_msg_quote(slot, sizeof slot, out, sizeof out);
	ck_assert_uint_lt(strlen(out), sizeof out);
	ck_assert_str_eq(out + strlen(out) - 3, "...");
	hw_msg_quote("AB", 2, out, sizeof out); /* the slot ends before any NUL */
	ck_assert_str_eq(out, "AB...");
	hw_msg_quote("\xff\xfe\xfd\xfc\xfb\xfa\xf9", 8, out, 8);
	ck_assert_str_eq(out, "\\xff...");
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

/* Rings of every 3rd of 12 ranks: rank 7 is place 2 of 4 in the ring
 * 1, 4, 7, 10; strides that do not divide, or leave one rank, are refused. */
START_TEST(strided_rings)
{
	hw_xport x = { 0 };
	ck_assert_int_eq(hw_xport_place(&x, 7, 12, 3), 0);
	ck_assert_int_eq(x.id, 7);
	ck_assert_int_eq(x.rank, 2);
	ck_assert_int_eq(x.size, 4);
	ck_assert_int_eq(x.peer[HW_LEFT], 4);
	ck_assert_int_eq(x.peer[HW_RIGHT], 10);
	ck_assert_int_eq(hw_xport_place(&x, 10, 12, 3), 0);
	ck_assert_int_eq(x.peer[HW_RIGHT], 1);
	ck_assert_int_eq(hw_xport_place(&x, 0, 4, 0), 0);
	ck_assert_int_eq(x.rank, 0);
	ck_assert_int_eq(x.size, 4);
	ck_assert_int_eq(x.peer[HW_LEFT], 3);
	ck_assert_int_eq(hw_xport_place(&x, 0, 12, 5), SIM_EINVAL);
	ck_assert_int_eq(hw_xport_place(&x, 0, 4, 4), SIM_EINVAL);
	ck_assert_int_eq(hw_xport_place(&x, 4, 4, 1), SIM_EINVAL);
}
END_TEST

/* Rings of 3 consecutive of 12 ranks (a stage's data-parallel group in
 * Megatron's order): rank 7 is place 1 of the ring 6, 7, 8; rank 8's right
 * neighbour wraps to 6; blocks that do not divide, or hold one rank, are
 * refused. */
START_TEST(block_rings)
{
	hw_xport x = { 0 };
	ck_assert_int_eq(hw_xport_place_block(&x, 7, 12, 3), 0);
	ck_assert_int_eq(x.id, 7);
	ck_assert_int_eq(x.rank, 1);
	ck_assert_int_eq(x.size, 3);
	ck_assert_int_eq(x.peer[HW_LEFT], 6);
	ck_assert_int_eq(x.peer[HW_RIGHT], 8);
	ck_assert_int_eq(hw_xport_place_block(&x, 8, 12, 3), 0);
	ck_assert_int_eq(x.peer[HW_RIGHT], 6);
	ck_assert_int_eq(hw_xport_place_block(&x, 0, 12, 12), 0);
	ck_assert_int_eq(x.peer[HW_LEFT], 11);
	ck_assert_int_eq(hw_xport_place_block(&x, 0, 12, 5), SIM_EINVAL);
	ck_assert_int_eq(hw_xport_place_block(&x, 0, 12, 1), SIM_EINVAL);
	ck_assert_int_eq(hw_xport_place_block(&x, 12, 12, 3), SIM_EINVAL);
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
	tcase_add_test(tc, hostile_records_are_refused);
	tcase_add_test(tc, truncated_and_random_records);
	tcase_add_test(tc, records_are_quoted_safely);
	tcase_add_test(ar, allreduce_pattern_and_check);
	tcase_add_test(ar, strided_rings);
	tcase_add_test(ar, block_rings);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ar);
	return s;
}

CHECK_MAIN(suite)
