/* The tcp transport: one TCP connection per ring link, non-blocking sockets
 * driven by poll(2) so every wait has a deadline. Peers on the same host
 * connect over loopback; others over the address pick_addr chose. */
#define _GNU_SOURCE /* accept4 */
#include "backend-hw/xport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "backend-hw/comm.h"
#include "backend-hw/log.h"
#include "backend-hw/msg.h"

typedef struct tcp_xport {
	hw_xport base;
	int fd[2];      /* HW_LEFT, HW_RIGHT */
	int listen_fd;
	double spin_ms; /* how long a wait polls without sleeping (see tcp_spin_ms) */
	double spin_set; /* spin_ms as $DPUSIM_HW_TCP_SPIN_US says, for hw_xport_spin */
} tcp_xport;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* How long a wait for a message's first bytes polls before it sleeps in
 * poll: $DPUSIM_HW_TCP_SPIN_US microseconds (0..1000000), else 0. Not by
 * default: on a shared machine a spinning rank takes the core that the
 * kernel's softirqs (the shaper's timer, the peer's packets) need, and a
 * 64 KiB all-reduce on the lab network took 1.6 ms spinning against
 * 0.63 ms sleeping. -1 (said) when the variable is malformed. */
static double tcp_spin_ms(void)
{
	const char *e = getenv("DPUSIM_HW_TCP_SPIN_US");
	char *end;
	double us;
	if (!e || !*e)
		return 0;
	us = strtod(e, &end);
	if (*end || !(us >= 0 && us <= 1e6))
		return hw_fail(-1, "DPUSIM_HW_TCP_SPIN_US='%s': expected microseconds, 0 to 1000000",
			       e);
	return us / 1e3;
}

static int set_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	HW_SYSCHECK(fl);
	HW_SYSCHECK(fcntl(fd, F_SETFL, fl | O_NONBLOCK));
	return 0;
}

/* The address peers on other hosts use, in this order: $DPUSIM_HW_TCP_ADDR;
 * what the host name resolves to unless that is loopback (Debian maps its
 * host name to 127.0.1.1); the first IPv4 address of an interface that is
 * up and not loopback; else "unresolved", which a peer on another host
 * refuses with a message naming this host. Peers on the same host (same name
 * and address) use 127.0.0.1. */
static void pick_addr(const char *host, char *addr, size_t cap)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
	struct ifaddrs *ifs = NULL;
	const char *env = getenv("DPUSIM_HW_TCP_ADDR");
	snprintf(addr, cap, "unresolved");
	if (env && *env) {
		snprintf(addr, cap, "%s", env);
		return;
	}
	if (getaddrinfo(host, NULL, &hints, &res) == 0 && res) {
		struct in_addr ip = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
		if ((ntohl(ip.s_addr) >> 24) != 127)
			inet_ntop(AF_INET, &ip, addr, (socklen_t)cap);
		freeaddrinfo(res);
		if (strcmp(addr, "unresolved"))
			return;
	}
	if (getifaddrs(&ifs))
		return;
	for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
		    !(i->ifa_flags & IFF_LOOPBACK)) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, addr,
				  (socklen_t)cap);
			break;
		}
	freeifaddrs(ifs);
}

/* Listens on an ephemeral port on every address; fills m with how to reach it. */
static int tcp_listen(tcp_xport *t, hw_msg_tcp *m)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t len = sizeof a;
	int one = 1;
	HW_SYSCHECK(t->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
	HW_SYSCHECK(setsockopt(t->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
	HW_SYSCHECK(bind(t->listen_fd, (struct sockaddr *)&a, sizeof a));
	HW_SYSCHECK(listen(t->listen_fd, 8));
	HW_SYSCHECK(getsockname(t->listen_fd, (struct sockaddr *)&a, &len));
	HW_SYSCHECK(set_nonblocking(t->listen_fd));
	m->port = ntohs(a.sin_port);
	HW_SYSCHECK(gethostname(m->host, sizeof m->host - 1));
	m->host[sizeof m->host - 1] = '\0';
	pick_addr(m->host, m->addr, sizeof m->addr);
	return 0;
}

/* Waits for `events` on fd until the deadline; 0, or SIM_ETIMEDOUT. */
static int wait_fd(int fd, short events, double deadline_ms)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		double left = deadline_ms - now_ms();
		int n;
		if (left <= 0)
			return SIM_ETIMEDOUT;
		n = poll(&p, 1, (int)left + 1);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return hw_fail(SIM_EIO, "poll failed: %s", strerror(errno));
	}
}

static int connect_right(tcp_xport *t, const hw_msg_tcp *me, const hw_msg_tcp *peer)
{
	int right = t->base.peer[HW_RIGHT], fd, err = 0;
	socklen_t len = sizeof err;
	uint32_t hello = htonl((uint32_t)t->base.id);
	double deadline = now_ms() + t->base.timeout_ms;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(peer->port) };
	/* Same host name and address: the same machine (containers on different
	 * nodes can share a host name; their addresses differ). */
	bool same = !strcmp(me->host, peer->host) && !strcmp(me->addr, peer->addr);
	const char *addr = same ? "127.0.0.1" : peer->addr;
	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
		return hw_fail(SIM_EPEER, "rank %d (right) on host '%s' has no usable IPv4 address "
			       "('%s'); set DPUSIM_HW_TCP_ADDR on that host", right, peer->host, addr);
	HW_SYSCHECK(fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	t->fd[HW_RIGHT] = fd;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS)
		return hw_fail(SIM_EPEER, "cannot connect to rank %d (right) at %s:%u: %s", right,
			       addr, (unsigned)peer->port, strerror(errno));
	if (wait_fd(fd, POLLOUT, deadline))
		return hw_fail(SIM_ETIMEDOUT, "timed out connecting to rank %d (right) at %s:%u",
			       right, addr, (unsigned)peer->port);
	HW_SYSCHECK(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len));
	if (err)
		return hw_fail(SIM_EPEER, "cannot connect to rank %d (right) at %s:%u: %s", right,
			       addr, (unsigned)peer->port, strerror(err));
	if (send(fd, &hello, sizeof hello, MSG_NOSIGNAL) != (ssize_t)sizeof hello)
		return hw_fail(SIM_EPEER, "cannot greet rank %d (right): %s", right, strerror(errno));
	return 0;
}

static int accept_left(tcp_xport *t)
{
	int left = t->base.peer[HW_LEFT], fd;
	uint32_t hello = 0;
	double deadline = now_ms() + t->base.timeout_ms;
	if (wait_fd(t->listen_fd, POLLIN, deadline))
		return hw_fail(SIM_ETIMEDOUT, "timed out waiting for rank %d (left) to connect", left);
	HW_SYSCHECK(fd = accept4(t->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK));
	t->fd[HW_LEFT] = fd;
	if (wait_fd(fd, POLLIN, deadline) ||
	    recv(fd, &hello, sizeof hello, MSG_WAITALL) != (ssize_t)sizeof hello)
		return hw_fail(SIM_EPEER, "rank %d (left) connected but did not greet", left);
	if ((int)ntohl(hello) != left)
		return hw_fail(SIM_EPEER, "expected rank %d on the left link, rank %u connected",
			       left, (unsigned)ntohl(hello));
	return 0;
}

static void tcp_free(hw_xport *x)
{
	tcp_xport *t = (tcp_xport *)x;
	for (int i = 0; i < 2; i++)
		if (t->fd[i] >= 0)
			close(t->fd[i]);
	if (t->listen_fd >= 0)
		close(t->listen_fd);
	free(t);
}

/* One step of progress on a send; 1 when bytes moved, 0 would-block, <0 error. */
static int step_send(tcp_xport *t, int link, const char *buf, size_t n, size_t *done)
{
	ssize_t w = send(t->fd[link], buf + *done, n - *done, MSG_NOSIGNAL);
	if (w > 0)
		return *done += (size_t)w, 1;
	if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	return hw_fail(SIM_EPEER, "rank %d (%s neighbour) failed: sending: %s",
		       t->base.peer[link], hw_link_name(link), strerror(errno));
}

static int step_recv(tcp_xport *t, int link, char *buf, size_t n, size_t *done)
{
	ssize_t r = recv(t->fd[link], buf + *done, n - *done, 0);
	if (r > 0)
		return *done += (size_t)r, 1;
	if (r == 0)
		return hw_fail(SIM_EPEER, "rank %d (%s neighbour) closed the connection "
			       "(it exited or failed) after %zu of %zu bytes",
			       t->base.peer[link], hw_link_name(link), *done, n);
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return 0;
	return hw_fail(SIM_EPEER, "rank %d (%s neighbour) failed: receiving: %s",
		       t->base.peer[link], hw_link_name(link), strerror(errno));
}

static int timed_out(tcp_xport *t, int sl, size_t sent, size_t sn, int rl, size_t got, size_t rn)
{
	double s = t->base.timeout_ms / 1e3;
	if (rl >= 0 && got < rn)
		return hw_fail(SIM_ETIMEDOUT, "timed out after %.1f s waiting for data from rank "
			       "%d (%s neighbour): %zu of %zu bytes came (is it hung?)",
			       s, t->base.peer[rl], hw_link_name(rl), got, rn);
	return hw_fail(SIM_ETIMEDOUT, "timed out after %.1f s sending to rank %d (%s "
		       "neighbour): %zu of %zu bytes went (is it hung?)",
		       s, t->base.peer[sl], hw_link_name(sl), sent, sn);
}

static int tcp_xfer(hw_xport *x, int sl, const void *sb, size_t sn, int rl, void *rb, size_t rn)
{
	tcp_xport *t = (tcp_xport *)x;
	size_t sent = 0, got = 0;
	double last = now_ms();
	if (sl < 0)
		sn = 0;
	if (rl < 0)
		rn = 0;
	while (sent < sn || got < rn) {
		struct pollfd p[2];
		int np = 0, si = -1, ri = -1, n, rc;
		bool spin;
		double left = last + t->base.timeout_ms - now_ms();
		if (left <= 0)
			return timed_out(t, sl, sent, sn, rl, got, rn);
		if (sent < sn)
			p[si = np++] = (struct pollfd){ .fd = t->fd[sl], .events = POLLOUT };
		if (got < rn && si >= 0 && t->fd[rl] == t->fd[sl])
			p[ri = si].events |= POLLIN;
		else if (got < rn)
			p[ri = np++] = (struct pollfd){ .fd = t->fd[rl], .events = POLLIN };
		/* the wait for a message's first bytes polls without sleeping
		 * for up to spin_ms, as NCCL's socket proxy progresses its
		 * connections: a receiver that sleeps pays its core's wake-up
		 * (55 us on this VM, more than the stack's own 13 us) on every
		 * message, which a ring's steps, its ranks busy sending, mostly
		 * do not. Once bytes flow it sleeps: each wake-up then reads what
		 * came meanwhile, and a core spinning through a bulk transfer
		 * loses it to whatever else runs there */
		spin = got == 0 && rn > 0 && now_ms() < last + t->spin_ms;
		n = poll(p, (nfds_t)np, spin ? 0 : (int)left + 1);
		if (n < 0 && errno != EINTR)
			return hw_fail(SIM_EIO, "poll failed: %s", strerror(errno));
		if (n <= 0)
			continue;
		if (ri >= 0 && (p[ri].revents & (POLLIN | POLLHUP | POLLERR))) {
			if ((rc = step_recv(t, rl, rb, rn, &got)) < 0)
				return rc;
			if (rc)
				last = now_ms();
		}
		if (si >= 0 && (p[si].revents & (POLLOUT | POLLHUP | POLLERR)) && sent < sn) {
			if ((rc = step_send(t, sl, sb, sn, &sent)) < 0)
				return rc;
			if (rc)
				last = now_ms();
		}
	}
	return 0;
}

static const hw_xport_ops tcp_ops = {
	.name = "tcp",
	.xfer = tcp_xfer,
	.free = tcp_free,
};

int hw_xport_spin(hw_xport *x, bool on)
{
	if (x->ops == &tcp_ops)
		((tcp_xport *)x)->spin_ms = on ? ((tcp_xport *)x)->spin_set : 0;
	return 0;
}

static int tcp_check(const char *slot, size_t cap)
{
	hw_msg_tcp m;
	return hw_msg_decode_tcp(slot, cap, &m);
}

/* Listen, exchange, connect right, accept left; 0 or a negative code. */
static int tcp_connect(tcp_xport *t)
{
	hw_msg_tcp me = { 0 }, right;
	char line[HW_MSG_MAX] = "", *all;
	int err = tcp_listen(t, &me), one = 1;
	if (!err)
		err = hw_msg_encode_tcp(line, sizeof line, &me);
	all = malloc((size_t)hw_comm_size() * HW_MSG_MAX);
	if (!all)
		return hw_fail(SIM_ENOMEM, "out of memory");
	if (err)
		line[0] = '\0';
	err = hw_comm_exchange(line, all, tcp_check);
	if (err == SIM_EPEER)
		hw_error("a rank could not open its tcp listener; giving up");
	if (!err) /* checked by hw_comm_exchange: cannot fail here */
		err = hw_msg_decode_tcp(all + (size_t)t->base.peer[HW_RIGHT] * HW_MSG_MAX,
					HW_MSG_MAX, &right);
	free(all);
	if (!err)
		err = connect_right(t, &me, &right);
	if (!err)
		err = accept_left(t);
	for (int i = 0; !err && i < 2; i++)
		setsockopt(t->fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return err;
}

hw_xport *hw_tcp_new(const hw_xport_opts *o)
{
	tcp_xport *t;
	int err;
	if (!hw_comm_has_peers("tcp"))
		return NULL;
	t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->base = (hw_xport){ .ops = &tcp_ops, .timeout_ms = o->timeout_ms, .max_msg = SIZE_MAX };
	t->spin_ms = t->spin_set = tcp_spin_ms();
	t->fd[0] = t->fd[1] = t->listen_fd = -1;
	err = t->spin_ms < 0 ? SIM_EINVAL : hw_xport_place_me(&t->base, o);
	if (!err)
		err = tcp_connect(t);
	if (!hw_comm_all(err == 0)) {
		tcp_free(&t->base);
		return NULL;
	}
	return &t->base;
}
