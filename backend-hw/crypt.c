/* AES-256-GCM for the crypto: host replay (crypt.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "backend-hw/crypt.h"
#include "backend-hw/log.h"
#include "sim/err.h"

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int hw_crypt_init(hw_crypt *c, const unsigned char key[HW_CRYPT_KEY])
{
	EVP_CIPHER_CTX *e = EVP_CIPHER_CTX_new(), *d = EVP_CIPHER_CTX_new();
	int ok = e && d && EVP_EncryptInit_ex(e, EVP_aes_256_gcm(), NULL, key, NULL) == 1 &&
		 EVP_DecryptInit_ex(d, EVP_aes_256_gcm(), NULL, key, NULL) == 1;
	*c = (hw_crypt){ .enc = e, .dec = d };
	if (!ok) {
		hw_crypt_fini(c);
		return hw_fail(SIM_EIO, "cannot set up AES-256-GCM through OpenSSL EVP");
	}
	return 0;
}

void hw_crypt_fini(hw_crypt *c)
{
	EVP_CIPHER_CTX_free(c->enc);
	EVP_CIPHER_CTX_free(c->dec);
	c->enc = c->dec = NULL;
}

void hw_crypt_nonce(unsigned char nonce[12], uint32_t sender, int link, uint64_t seq)
{
	for (int i = 0; i < 4; i++)
		nonce[i] = (unsigned char)(sender >> (24 - 8 * i));
	nonce[4] = (unsigned char)link;
	for (int i = 0; i < 7; i++)
		nonce[5 + i] = (unsigned char)(seq >> (48 - 8 * i));
}

int hw_crypt_seal(hw_crypt *c, const unsigned char nonce[12], const void *in, size_t len,
		  unsigned char *out)
{
	double t0 = thread_cpu_s();
	int n = 0, fin = 0;
	int ok = len <= INT_MAX && EVP_EncryptInit_ex(c->enc, NULL, NULL, NULL, nonce) == 1 &&
		 EVP_EncryptUpdate(c->enc, out, &n, in, (int)len) == 1 &&
		 EVP_EncryptFinal_ex(c->enc, out + n, &fin) == 1 &&
		 EVP_CIPHER_CTX_ctrl(c->enc, EVP_CTRL_GCM_GET_TAG, HW_CRYPT_TAG, out + len) == 1;
	c->cpu_s += thread_cpu_s() - t0;
	if (!ok)
		return hw_fail(SIM_EIO, "AES-256-GCM encryption of %zu bytes failed", len);
	c->bytes += len;
	c->sealed++;
	return 0;
}

int hw_crypt_open(hw_crypt *c, const unsigned char nonce[12], const unsigned char *in,
		  size_t len, void *out)
{
	double t0 = thread_cpu_s();
	int n = 0, fin = 0, ok, tag_ok;
	ok = len <= INT_MAX && EVP_DecryptInit_ex(c->dec, NULL, NULL, NULL, nonce) == 1 &&
	     EVP_DecryptUpdate(c->dec, out, &n, in, (int)len) == 1 &&
	     EVP_CIPHER_CTX_ctrl(c->dec, EVP_CTRL_GCM_SET_TAG, HW_CRYPT_TAG,
				 (void *)(in + len)) == 1;
	/* Final is where GCM compares the tag: its failure is the data's */
	tag_ok = ok && EVP_DecryptFinal_ex(c->dec, (unsigned char *)out + n, &fin) == 1;
	c->cpu_s += thread_cpu_s() - t0;
	if (!ok)
		return hw_fail(SIM_EIO, "AES-256-GCM decryption of %zu bytes failed", len);
	if (!tag_ok) {
		memset(out, 0, len);  /* unauthenticated plaintext is never handed on */
		return SIM_EVERIFY;
	}
	c->bytes += len;
	c->opened++;
	return 0;
}

/* ---- the wrapping transport ---- */

typedef struct crypt_xport {
	hw_xport base;
	hw_xport *inner;
	hw_crypt *c;
	bool tamper;
	uint64_t sent[2], got[2];   /* messages per link, the nonces' sequence */
	unsigned char *sbuf, *rbuf; /* max_msg + tag each */
} crypt_xport;

static int cx_xfer(hw_xport *x, int slink, const void *sbuf, size_t sbytes, int rlink, void *rbuf,
		   size_t rbytes)
{
	crypt_xport *cx = (crypt_xport *)x;
	unsigned char nonce[12];
	int err = 0;
	if ((slink != HW_NOLINK && sbytes > x->max_msg) || (rlink != HW_NOLINK && rbytes > x->max_msg))
		return hw_fail(SIM_ERANGE, "message of %zu bytes over the crypto transport's %zu",
			       sbytes > rbytes ? sbytes : rbytes, x->max_msg);
	if (slink != HW_NOLINK) {
		hw_crypt_nonce(nonce, (uint32_t)x->id, slink, cx->sent[slink]++);
		err = hw_crypt_seal(cx->c, nonce, sbuf, sbytes, cx->sbuf);
		if (!err && cx->tamper)
			cx->sbuf[sbytes / 2] ^= 0x01;  /* the tag, for an empty message */
	}
	if (!err)
		err = hw_xfer(cx->inner, slink, cx->sbuf, slink == HW_NOLINK ? 0 : sbytes + HW_CRYPT_TAG,
			      rlink, cx->rbuf, rlink == HW_NOLINK ? 0 : rbytes + HW_CRYPT_TAG);
	if (err || rlink == HW_NOLINK)
		return err;
	/* the sender sent on its link facing us: the opposite one */
	hw_crypt_nonce(nonce, (uint32_t)x->peer[rlink], 1 - rlink, cx->got[rlink]++);
	err = hw_crypt_open(cx->c, nonce, cx->rbuf, rbytes, rbuf);
	if (err != SIM_EVERIFY)
		return err;
	if (cx->c->failed++ == 0)  /* the first says it; the count goes to the verification */
		hw_error("a %zu-byte message from rank %d (%s link) failed its AES-GCM tag check: "
			 "the data was altered in transit", rbytes, x->peer[rlink],
			 hw_link_name(rlink));
	return 0;
}

static void cx_free(hw_xport *x)
{
	crypt_xport *cx = (crypt_xport *)x;
	free(cx->sbuf);
	free(cx->rbuf);
	free(cx);
}

static const hw_xport_ops crypt_ops = { .name = "crypt", .xfer = cx_xfer, .free = cx_free };

hw_xport *hw_crypt_xport_new(hw_xport *inner, hw_crypt *c, size_t max_msg, bool tamper)
{
	crypt_xport *cx = calloc(1, sizeof *cx);
	if (!cx)
		return NULL;
	cx->base = *inner;
	cx->base.ops = &crypt_ops;
	cx->base.max_msg = max_msg;
	cx->inner = inner;
	cx->c = c;
	cx->tamper = tamper;
	cx->sbuf = malloc(max_msg + HW_CRYPT_TAG);
	cx->rbuf = malloc(max_msg + HW_CRYPT_TAG);
	if (!cx->sbuf || !cx->rbuf) {
		cx_free(&cx->base);
		return NULL;
	}
	return &cx->base;
}
