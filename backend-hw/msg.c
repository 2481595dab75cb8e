/* Out-of-band message text: encoding and strict decoding. A message comes
 * from another process that may be broken, of another version or hostile,
 * so the decoders read at most the slot they are given, accept printable
 * ASCII only, each expected key exactly once and nothing else, and check
 * every number's range. */
#include "backend-hw/msg.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"

static int finish(int n, size_t cap)
{
	return n < 0 || (size_t)n >= cap ? SIM_ERANGE : 0;
}

int hw_msg_encode_tcp(char *buf, size_t cap, const hw_msg_tcp *m)
{
	return finish(snprintf(buf, cap, "dpusim-hw/%d tcp host=%s addr=%s port=%u", HW_MSG_VERSION,
			       m->host, m->addr, (unsigned)m->port), cap);
}

int hw_msg_encode_verbs(char *buf, size_t cap, const hw_msg_verbs *m)
{
	char gid[33];
	for (int i = 0; i < 16; i++)
		snprintf(gid + 2 * i, 3, "%02x", m->gid[i]);
	return finish(snprintf(buf, cap,
			       "dpusim-hw/%d verbs qpn=%" PRIu32 " psn=%" PRIu32 " lid=%u gid=%s"
			       " rkey=%" PRIu32 " addr=%" PRIu64 " bytes=%" PRIu64 " mtu=%" PRIu32,
			       HW_MSG_VERSION, m->qpn, m->psn, (unsigned)m->lid, gid, m->rkey,
			       m->addr, m->bytes, m->mtu), cap);
}

int hw_msg_check(const char *slot, size_t cap)
{
	size_t n = strnlen(slot, cap);
	if (n == 0 || n == cap)
		return SIM_EPARSE;
	for (size_t i = 0; i < n; i++)
		if (slot[i] < 0x20 || slot[i] > 0x7e)
			return SIM_EPARSE;
	return 0;
}

void hw_msg_quote(const char *slot, size_t cap, char *out, size_t out_cap)
{
	size_t o = 0, i;
	/* Each step adds at most 4 characters and keeps room for "..." + NUL. */
	for (i = 0; i < cap && slot[i] && o + 8 <= out_cap; i++) {
		unsigned char c = (unsigned char)slot[i];
		if (c >= 0x20 && c <= 0x7e && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, out_cap - o, "\\x%02x", c);
	}
	if (i == cap || slot[i]) /* cut short, or no NUL within the slot */
		memcpy(out + o, "...", 3), o += 3;
	out[o] = '\0';
}

/* Checks "dpusim-hw/V KIND" and returns the rest of the line (empty or
 * starting with a space), or NULL with *err set. `line` is checked text. */
static const char *header(const char *line, const char *kind, int *err)
{
	const char *p = line;
	char *end;
	long v;
	size_t klen = strlen(kind);
	*err = SIM_EPARSE;
	if (strncmp(p, "dpusim-hw/", 10))
		return NULL;
	p += 10;
	if (!isdigit((unsigned char)*p))
		return NULL;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || *end != ' ')
		return NULL;
	if (v != HW_MSG_VERSION) {
		*err = SIM_EUNSUPPORTED;
		return NULL;
	}
	p = end + 1;
	if (strncmp(p, kind, klen) || (p[klen] != ' ' && p[klen] != '\0'))
		return NULL;
	*err = 0;
	return p + klen;
}

/* One expected key and where its value goes. */
typedef struct msg_field {
	const char *key;
	char *val;
	size_t cap;
	bool seen;
} msg_field;

/* Values are tokens of letters, digits and ". _ : -": host names, numeric
 * addresses, numbers, hex. */
static bool value_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == ':' || c == '-';
}

/* Splits " key=value" tokens into f[n]: every key must be one of f's, each
 * exactly once, every value 1..cap-1 value characters. */
static int fields(const char *rest, msg_field *f, size_t n)
{
	const char *p = rest;
	while (*p) {
		size_t klen, vlen, i;
		const char *eq;
		if (*p++ != ' ')
			return SIM_EPARSE;
		eq = p + strcspn(p, "= ");
		if (*eq != '=')
			return SIM_EPARSE;
		klen = (size_t)(eq - p);
		for (i = 0; i < n && (strlen(f[i].key) != klen || strncmp(f[i].key, p, klen)); i++)
			;
		if (i == n || f[i].seen)
			return SIM_EPARSE;
		for (vlen = 0; value_char(eq[1 + vlen]); vlen++)
			;
		if (vlen == 0 || vlen >= f[i].cap || (eq[1 + vlen] && eq[1 + vlen] != ' '))
			return SIM_EPARSE;
		memcpy(f[i].val, eq + 1, vlen);
		f[i].val[vlen] = '\0';
		f[i].seen = true;
		p = eq + 1 + vlen;
	}
	for (size_t i = 0; i < n; i++)
		if (!f[i].seen)
			return SIM_EPARSE;
	return 0;
}

/* A decimal number in [lo, hi]. */
static int to_u64(const char *val, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (!isdigit((unsigned char)val[0]))
		return SIM_EPARSE;
	errno = 0;
	v = strtoull(val, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return SIM_EPARSE;
	*out = v;
	return 0;
}

/* The checked line after the header for `kind`, or NULL with *err set. */
static const char *start(const char *line, size_t cap, const char *kind, int *err)
{
	if ((*err = hw_msg_check(line, cap)))
		return NULL;
	return header(line, kind, err);
}

int hw_msg_decode_tcp(const char *line, size_t cap, hw_msg_tcp *m)
{
	int err;
	uint64_t port;
	char host[sizeof m->host], addr[sizeof m->addr], portv[8];
	msg_field f[] = { { "host", host, sizeof host, false }, { "addr", addr, sizeof addr, false },
			  { "port", portv, sizeof portv, false } };
	const char *rest = start(line, cap, "tcp", &err);
	if (!rest)
		return err;
	if (fields(rest, f, 3) || to_u64(portv, 1, 65535, &port))
		return SIM_EPARSE;
	memcpy(m->host, host, sizeof host);
	memcpy(m->addr, addr, sizeof addr);
	m->port = (uint16_t)port;
	return 0;
}

static int parse_gid(const char *hex, uint8_t gid[16])
{
	if (strlen(hex) != 32)
		return SIM_EPARSE;
	for (int i = 0; i < 16; i++) {
		char byte[3] = { hex[2 * i], hex[2 * i + 1], '\0' };
		if (!isxdigit((unsigned char)byte[0]) || !isxdigit((unsigned char)byte[1]))
			return SIM_EPARSE;
		gid[i] = (uint8_t)strtoul(byte, NULL, 16);
	}
	return 0;
}

int hw_msg_decode_verbs(const char *line, size_t cap, hw_msg_verbs *m)
{
	enum { QPN, PSN, LID, GID, RKEY, ADDR, BYTES, MTU, NF };
	static const char *const keys[NF] = { "qpn", "psn", "lid", "gid", "rkey", "addr", "bytes",
					      "mtu" };
	char val[NF][40];
	uint64_t qpn, psn, lid, rkey, addr, bytes, mtu;
	hw_msg_verbs d;
	msg_field f[NF];
	int err;
	const char *rest = start(line, cap, "verbs", &err);
	if (!rest)
		return err;
	for (int i = 0; i < NF; i++)
		f[i] = (msg_field){ .key = keys[i], .val = val[i], .cap = i == GID ? 33 : 21 };
	/* A buffer must fit in the address space: addr + bytes does not wrap. */
	if (fields(rest, f, NF) || to_u64(val[QPN], 1, 0xffffff, &qpn) ||
	    to_u64(val[PSN], 0, 0xffffff, &psn) || to_u64(val[LID], 0, 0xffff, &lid) ||
	    parse_gid(val[GID], d.gid) || to_u64(val[RKEY], 0, UINT32_MAX, &rkey) ||
	    to_u64(val[ADDR], 0, UINT64_MAX, &addr) || to_u64(val[BYTES], 1, UINT64_MAX, &bytes) ||
	    addr > UINT64_MAX - bytes || to_u64(val[MTU], 1, 5, &mtu))
		return SIM_EPARSE;
	*m = (hw_msg_verbs){ .qpn = (uint32_t)qpn, .psn = (uint32_t)psn, .lid = (uint16_t)lid,
			     .rkey = (uint32_t)rkey, .addr = addr, .bytes = bytes,
			     .mtu = (uint32_t)mtu };
	memcpy(m->gid, d.gid, 16);
	return 0;
}
