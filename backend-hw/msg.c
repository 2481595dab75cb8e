/* Out-of-band message text: encoding and strict decoding. */
#include "backend-hw/msg.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
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

/* Checks "dpusim-hw/V KIND " and returns the rest of the line, or NULL with
 * *err set. */
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

/* Copies the value of " key=" from the rest of a line into val[cap]. */
static int get(const char *rest, const char *key, char *val, size_t cap)
{
	size_t klen = strlen(key), n;
	for (const char *p = rest; (p = strchr(p, ' ')) != NULL;) {
		p++;
		if (strncmp(p, key, klen) || p[klen] != '=')
			continue;
		p += klen + 1;
		n = strcspn(p, " ");
		if (n == 0 || n >= cap)
			return SIM_EPARSE;
		memcpy(val, p, n);
		val[n] = '\0';
		return 0;
	}
	return SIM_EPARSE;
}

static int get_u64(const char *rest, const char *key, uint64_t max, uint64_t *out)
{
	char val[24], *end;
	unsigned long long v;
	if (get(rest, key, val, sizeof val) || !isdigit((unsigned char)val[0]))
		return SIM_EPARSE;
	errno = 0;
	v = strtoull(val, &end, 10);
	if (errno || *end || v > max)
		return SIM_EPARSE;
	*out = v;
	return 0;
}

int hw_msg_decode_tcp(const char *line, hw_msg_tcp *m)
{
	int err;
	uint64_t port;
	const char *rest = header(line, "tcp", &err);
	if (!rest)
		return err;
	if (get(rest, "host", m->host, sizeof m->host) ||
	    get(rest, "addr", m->addr, sizeof m->addr) ||
	    get_u64(rest, "port", 65535, &port) || port == 0)
		return SIM_EPARSE;
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

int hw_msg_decode_verbs(const char *line, hw_msg_verbs *m)
{
	int err;
	uint64_t qpn, psn, lid, rkey, mtu;
	char gid[40];
	const char *rest = header(line, "verbs", &err);
	if (!rest)
		return err;
	if (get_u64(rest, "qpn", 0xffffff, &qpn) || get_u64(rest, "psn", 0xffffff, &psn) ||
	    get_u64(rest, "lid", 0xffff, &lid) || get(rest, "gid", gid, sizeof gid) ||
	    parse_gid(gid, m->gid) || get_u64(rest, "rkey", UINT32_MAX, &rkey) ||
	    get_u64(rest, "addr", UINT64_MAX, &m->addr) ||
	    get_u64(rest, "bytes", UINT64_MAX, &m->bytes) || get_u64(rest, "mtu", 5, &mtu) ||
	    mtu == 0)
		return SIM_EPARSE;
	m->qpn = (uint32_t)qpn;
	m->psn = (uint32_t)psn;
	m->lid = (uint16_t)lid;
	m->rkey = (uint32_t)rkey;
	m->mtu = (uint32_t)mtu;
	return 0;
}
