/* Out-of-band connection messages exchanged through MPI before a transport
 * connects: one line of text, "dpusim-hw/VERSION KIND key=value ...", so a
 * rank built from another version is refused with a clear message rather than
 * misread. Pure: no sockets, no verbs. */
#ifndef DPUSIM_HW_MSG_H
#define DPUSIM_HW_MSG_H

#include <stddef.h>
#include <stdint.h>

#define HW_MSG_VERSION 1
#define HW_MSG_MAX 320 /* bytes per message, NUL included (MPI gathers fixed slots) */

/* Where a rank's tcp transport listens. */
typedef struct hw_msg_tcp {
	char host[64];   /* gethostname(): peers on the same host use loopback */
	char addr[48];   /* numeric IPv4/IPv6 address for peers on other hosts */
	uint16_t port;
} hw_msg_tcp;

/* One side of a verbs RC connection (one per ring neighbour link). */
typedef struct hw_msg_verbs {
	uint32_t qpn;
	uint32_t psn;       /* random starting packet sequence number, 24 bits */
	uint16_t lid;       /* 0 on RoCE */
	uint8_t gid[16];
	uint32_t rkey;      /* of the staging buffer the peer WRITEs into */
	uint64_t addr;      /* its virtual address */
	uint64_t bytes;     /* its size */
	uint32_t mtu;       /* enum ibv_mtu of the port */
} hw_msg_verbs;

/* Each encoder writes one NUL-terminated line into buf[cap] and returns 0,
 * or SIM_ERANGE when it does not fit. */
int hw_msg_encode_tcp(char *buf, size_t cap, const hw_msg_tcp *m);
int hw_msg_encode_verbs(char *buf, size_t cap, const hw_msg_verbs *m);

/* 0 when slot[cap] holds a non-empty line of printable ASCII ending in a
 * NUL within the slot; SIM_EPARSE otherwise. Reads no byte past slot[cap-1]. */
int hw_msg_check(const char *slot, size_t cap);

/* Writes slot[cap] for an error message into out[out_cap] (out_cap >= 8):
 * printable ASCII as is, anything else and backslash as \xHH, "..." where
 * it is cut short or has no NUL within the slot. Reads no byte past
 * slot[cap-1]. */
void hw_msg_quote(const char *slot, size_t cap, char *out, size_t out_cap);

/* Each decoder fills *m from the line in slot[cap] (a peer's record: nothing
 * past slot[cap-1] is read). Returns 0; SIM_EUNSUPPORTED when the version
 * differs from HW_MSG_VERSION; SIM_EPARSE when the slot fails hw_msg_check,
 * the kind is not the expected one, a key is missing, repeated or unknown,
 * or a value is malformed or out of range. *m is untouched on failure. */
int hw_msg_decode_tcp(const char *slot, size_t cap, hw_msg_tcp *m);
int hw_msg_decode_verbs(const char *slot, size_t cap, hw_msg_verbs *m);

#endif
