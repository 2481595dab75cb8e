/* backend-hw/crypt: AES-256-GCM seal/open and the wrapping transport; a
 * flipped ciphertext or tag byte, or a wrong nonce, fails the tag check. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "backend-hw/crypt.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

static const unsigned char key[HW_CRYPT_KEY] = "0123456789abcdef0123456789abcde";

static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + 3);
}

START_TEST(round_trip_and_cost)
{
	hw_crypt c;
	unsigned char nonce[12], in[4096], ct[4096 + HW_CRYPT_TAG], out[4096];
	fill(in, sizeof in);
	ck_assert_int_eq(hw_crypt_init(&c, key), 0);
	hw_crypt_nonce(nonce, 3, HW_RIGHT, 42);
	ck_assert_int_eq(hw_crypt_seal(&c, nonce, in, sizeof in, ct), 0);
	ck_assert(memcmp(ct, in, sizeof in) != 0);  /* it is ciphertext */
	ck_assert_int_eq(hw_crypt_open(&c, nonce, ct, sizeof in, out), 0);
	ck_assert(memcmp(out, in, sizeof in) == 0);
	ck_assert_uint_eq(c.bytes, 2 * sizeof in);
	ck_assert_uint_eq(c.sealed, 1);
	ck_assert_uint_eq(c.opened, 1);
	ck_assert(c.cpu_s >= 0);
	hw_crypt_fini(&c);
}
END_TEST

START_TEST(tampering_detected)
{
	hw_crypt c;
	unsigned char nonce[12], other[12], in[1000], ct[1000 + HW_CRYPT_TAG], bad[sizeof ct],
		out[1000];
	fill(in, sizeof in);
	ck_assert_int_eq(hw_crypt_init(&c, key), 0);
	hw_crypt_nonce(nonce, 1, HW_LEFT, 0);
	ck_assert_int_eq(hw_crypt_seal(&c, nonce, in, sizeof in, ct), 0);
	memcpy(bad, ct, sizeof ct);
	bad[500] ^= 0x01;  /* one ciphertext bit */
	ck_assert_int_eq(hw_crypt_open(&c, nonce, bad, sizeof in, out), SIM_EVERIFY);
	for (size_t i = 0; i < sizeof out; i++)
		ck_assert_uint_eq(out[i], 0);  /* nothing unauthenticated handed on */
	memcpy(bad, ct, sizeof ct);
	bad[sizeof in + 5] ^= 0x80;  /* the tag */
	ck_assert_int_eq(hw_crypt_open(&c, nonce, bad, sizeof in, out), SIM_EVERIFY);
	/* the same bytes under another link's or message's nonce */
	hw_crypt_nonce(other, 1, HW_RIGHT, 0);
	ck_assert_int_eq(hw_crypt_open(&c, other, ct, sizeof in, out), SIM_EVERIFY);
	hw_crypt_nonce(other, 1, HW_LEFT, 1);
	ck_assert_int_eq(hw_crypt_open(&c, other, ct, sizeof in, out), SIM_EVERIFY);
	ck_assert_uint_eq(c.opened, 0);
	ck_assert_int_eq(hw_crypt_open(&c, nonce, ct, sizeof in, out), 0);
	ck_assert(memcmp(out, in, sizeof in) == 0);
	hw_crypt_fini(&c);
}
END_TEST

START_TEST(nonces_unique)
{
	unsigned char a[12], b[12];
	hw_crypt_nonce(a, 1, HW_LEFT, 7);
	hw_crypt_nonce(b, 1, HW_RIGHT, 7);
	ck_assert(memcmp(a, b, 12) != 0);
	hw_crypt_nonce(b, 2, HW_LEFT, 7);
	ck_assert(memcmp(a, b, 12) != 0);
	hw_crypt_nonce(b, 1, HW_LEFT, 7 + (1ull << 40));
	ck_assert(memcmp(a, b, 12) != 0);
}
END_TEST

/* A 2-rank ring in one process: rank 0's wrapper over a fake transport
 * whose "peer" is rank 1 and echoes what rank 1 would have sealed. */
typedef struct fake {
	hw_xport base;
	unsigned char wire[256 + HW_CRYPT_TAG]; /* what the peer sends next */
	size_t wire_len;
	unsigned char sent[256 + HW_CRYPT_TAG];
	size_t sent_len;
} fake;

static int fake_xfer(hw_xport *x, int slink, const void *sbuf, size_t sbytes, int rlink,
		     void *rbuf, size_t rbytes)
{
	fake *f = (fake *)x;
	if (slink != HW_NOLINK)
		memcpy(f->sent, sbuf, f->sent_len = sbytes);
	if (rlink != HW_NOLINK) {
		ck_assert_uint_eq(rbytes, f->wire_len);
		memcpy(rbuf, f->wire, rbytes);
	}
	return 0;
}

static void fake_free(hw_xport *x)
{
	(void)x;
}

static const hw_xport_ops fake_ops = { .name = "fake", .xfer = fake_xfer, .free = fake_free };

START_TEST(transport_verifies)
{
	fake f = { .base = { .ops = &fake_ops, .rank = 0, .size = 2, .peer = { 1, 1 },
			     .max_msg = sizeof f.wire } };
	hw_crypt mine, peer;
	unsigned char nonce[12], msg[64], got[64], mine_pt[64];
	hw_xport *x;
	fill(msg, sizeof msg);
	ck_assert_int_eq(hw_crypt_init(&mine, key), 0);
	ck_assert_int_eq(hw_crypt_init(&peer, key), 0);
	x = hw_crypt_xport_new(&f.base, &mine, 256, false);
	ck_assert_ptr_nonnull(x);
	/* rank 1 sends its first message on its right link: rank 0's left */
	hw_crypt_nonce(nonce, 1, HW_RIGHT, 0);
	ck_assert_int_eq(hw_crypt_seal(&peer, nonce, msg, sizeof msg, f.wire), 0);
	f.wire_len = sizeof msg + HW_CRYPT_TAG;
	ck_assert_int_eq(hw_xfer(x, HW_RIGHT, msg, sizeof msg, HW_LEFT, got, sizeof got), 0);
	ck_assert(memcmp(got, msg, sizeof msg) == 0);
	ck_assert_uint_eq(mine.failed, 0);
	/* what rank 0 sent opens under its own (rank 0, right, 0) nonce */
	ck_assert_uint_eq(f.sent_len, sizeof msg + HW_CRYPT_TAG);
	hw_crypt_nonce(nonce, 0, HW_RIGHT, 0);
	ck_assert_int_eq(hw_crypt_open(&peer, nonce, f.sent, sizeof msg, mine_pt), 0);
	ck_assert(memcmp(mine_pt, msg, sizeof msg) == 0);
	/* the second message, one ciphertext byte flipped on the wire */
	hw_crypt_nonce(nonce, 1, HW_RIGHT, 1);
	ck_assert_int_eq(hw_crypt_seal(&peer, nonce, msg, sizeof msg, f.wire), 0);
	f.wire[10] ^= 0x04;
	ck_assert_int_eq(hw_recv(x, HW_LEFT, got, sizeof got), 0);
	ck_assert_uint_eq(mine.failed, 1);
	ck_assert_uint_eq(got[10], 0);  /* zeroed, not the tampered plaintext */
	/* a replayed (old) message fails too: the sequence moved on */
	hw_crypt_nonce(nonce, 1, HW_RIGHT, 1);
	ck_assert_int_eq(hw_crypt_seal(&peer, nonce, msg, sizeof msg, f.wire), 0);
	ck_assert_int_eq(hw_recv(x, HW_LEFT, got, sizeof got), 0);
	ck_assert_uint_eq(mine.failed, 2);
	ck_assert_int_eq(hw_send(x, HW_RIGHT, msg, 300), SIM_ERANGE);
	hw_xport_free(x);
	hw_crypt_fini(&mine);
	hw_crypt_fini(&peer);
}
END_TEST

START_TEST(transport_tamper_hook)
{
	fake f = { .base = { .ops = &fake_ops, .rank = 0, .size = 2, .peer = { 1, 1 },
			     .max_msg = sizeof f.wire } };
	hw_crypt mine, peer;
	unsigned char nonce[12], msg[64], out[64];
	hw_xport *x;
	fill(msg, sizeof msg);
	ck_assert_int_eq(hw_crypt_init(&mine, key), 0);
	ck_assert_int_eq(hw_crypt_init(&peer, key), 0);
	x = hw_crypt_xport_new(&f.base, &mine, 256, true);
	ck_assert_int_eq(hw_send(x, HW_LEFT, msg, sizeof msg), 0);
	hw_crypt_nonce(nonce, 0, HW_LEFT, 0);
	ck_assert_int_eq(hw_crypt_open(&peer, nonce, f.sent, sizeof msg, out), SIM_EVERIFY);
	hw_xport_free(x);
	hw_crypt_fini(&mine);
	hw_crypt_fini(&peer);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hw_crypt");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, round_trip_and_cost);
	tcase_add_test(tc, tampering_detected);
	tcase_add_test(tc, nonces_unique);
	tcase_add_test(tc, transport_verifies);
	tcase_add_test(tc, transport_tamper_hook);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
