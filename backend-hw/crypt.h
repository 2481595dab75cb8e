/* crypto: host, replayed for real: AES-256-GCM through OpenSSL EVP on the
 * sending and receiving ranks, as a transport that wraps another (tcp or
 * verbs). Each message goes out as its ciphertext followed by the 16-byte
 * tag; the receiver decrypts and checks the tag, and a message that fails
 * the check is an error (SIM_EVERIFY), never passed on. The CPU time of the
 * cipher calls is measured with CLOCK_THREAD_CPUTIME_ID. */
#ifndef DPUSIM_HW_CRYPT_H
#define DPUSIM_HW_CRYPT_H

#include <stdint.h>

#include "backend-hw/xport.h"

#define HW_CRYPT_TAG 16
#define HW_CRYPT_KEY 32

typedef struct hw_crypt {
	void *enc, *dec;      /* EVP_CIPHER_CTX, key set once */
	double cpu_s;         /* thread CPU seconds inside seal and open */
	uint64_t bytes;       /* bytes through seal plus bytes through open */
	uint64_t sealed, opened; /* messages */
	uint64_t failed;      /* messages the wrapping transport received that failed the tag check */
} hw_crypt;

/* 0, or SIM_EIO (logged) when OpenSSL cannot set up AES-256-GCM. */
int hw_crypt_init(hw_crypt *c, const unsigned char key[HW_CRYPT_KEY]);
void hw_crypt_fini(hw_crypt *c);

/* The 12-byte GCM nonce of message `seq` sent by rank `sender` on its link
 * `link`: unique per (sender, link, seq), so no two messages under one key
 * share a nonce (in a 2-rank ring both links of a rank reach the same peer). */
void hw_crypt_nonce(unsigned char nonce[12], uint32_t sender, int link, uint64_t seq);

/* Encrypts len bytes of in into out: len bytes of ciphertext, then the tag
 * (out holds len + HW_CRYPT_TAG). 0 or SIM_EIO. */
int hw_crypt_seal(hw_crypt *c, const unsigned char nonce[12], const void *in, size_t len,
		  unsigned char *out);
/* Decrypts len bytes of ciphertext (followed by its tag) into out. 0;
 * SIM_EVERIFY when the tag does not match (out is then zeroed); SIM_EIO. */
int hw_crypt_open(hw_crypt *c, const unsigned char nonce[12], const unsigned char *in,
		  size_t len, void *out);

/* A transport carrying every message of `inner` sealed with c (both owned
 * by the caller; free the wrapper first). A received message failing its
 * tag check is logged, zeroed and counted in c->failed, and xfer returns 0:
 * the ring step completes, so every rank reaches the verification after the
 * collective and learns of the failure together there (a rank leaving
 * mid-ring would leave its peers waiting out the timeout). Messages up to max_msg bytes of
 * plaintext: inner must accept max_msg + HW_CRYPT_TAG. `tamper` (a fault
 * hook for tests) flips one ciphertext byte of every message this rank
 * sends. NULL when out of memory. */
hw_xport *hw_crypt_xport_new(hw_xport *inner, hw_crypt *c, size_t max_msg, bool tamper);

#endif
