/* One RDMA device opened for verbs work: the context, a protection domain,
 * the first active port and the GID to address peers with, and the steps
 * every RC queue pair of dpusim-hw shares (registering a buffer, INIT ->
 * RTR -> RTS). Used by the ring transport (verbs.c) and the perftest-style
 * point-to-point tests (perf.c). */
#ifndef DPUSIM_HW_VDEV_H
#define DPUSIM_HW_VDEV_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "backend-hw/log.h"
#include "backend-hw/mem.h"
#include "backend-hw/msg.h"

/* A verbs call that returns NULL or non-zero with errno: log and return. */
#define VERBSCHECK(ok, call)                                                       \
	do {                                                                       \
		if (!(ok))                                                         \
			return hw_fail(SIM_EIO, "%s failed: %s (%s:%d)", call,     \
				       strerror(errno), __FILE__, __LINE__);       \
	} while (0)

typedef struct hw_vdev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	struct ibv_port_attr pattr;
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
} hw_vdev;

/* Opens the named device (NULL: the first), its first active port, the GID
 * (gid_index >= 0: that one; else InfiniBand GID 0, RoCE the first v2 GID
 * holding an IPv4-mapped address) and a PD, into the caller's zeroed *d.
 * 0, or SIM_ENODEV / SIM_EIO logged; hw_vdev_close(d) either way. */
int hw_vdev_open(hw_vdev *d, const char *name, int gid_index);
/* Deallocates the PD and closes the device; everything made on them must be
 * gone. A zeroed or closed d is a no-op. */
void hw_vdev_close(hw_vdev *d);

/* Registers m (host memory with ibv_reg_mr, GPU memory through its dmabuf)
 * with `access` into *mr. 0 or a code, logged. The caller deregisters. */
int hw_vdev_reg(hw_vdev *d, hw_mem *m, int access, struct ibv_mr **mr);

/* Describes qp (starting PSN psn) and buffer m, registered as mr, for a peer. */
void hw_vdev_describe(const hw_vdev *d, const struct ibv_qp *qp, uint32_t psn,
		      const struct ibv_mr *mr, const hw_mem *m, hw_msg_verbs *out);

/* A random 24-bit starting PSN, so a stale packet from an earlier run of
 * the same QP numbers is not taken for a new one. 0 or SIM_EIO. */
int hw_vdev_psn(uint32_t *psn);

/* INIT -> RTR -> RTS of the RC qp against `peer`, with explicit masks:
 * `access` the remote access the QP grants, rd_atomic the RDMA READs it
 * may have outstanding as requester and accept as responder (at least 1).
 * 0 or SIM_EIO logged. */
int hw_vdev_connect(const hw_vdev *d, struct ibv_qp *qp, uint32_t psn, const hw_msg_verbs *peer,
		    int access, uint8_t rd_atomic);

#endif
