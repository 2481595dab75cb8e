/* Transports between MPI ranks arranged in a ring: each rank has a link to
 * its left neighbour (rank - 1) and its right neighbour (rank + 1), or, with
 * a stride s, one ring per class of ranks equal modulo s, neighbours s
 * apart (the data-parallel group of one pipeline stage). One
 * operation, xfer, sends a message on one link while receiving one on
 * another, both progressing together, so a ring step cannot deadlock. Every
 * wait is bounded: no progress for the timeout ends the operation with
 * SIM_ETIMEDOUT, a closed or failed peer with SIM_EPEER, both logged with the
 * peer's rank. Backends: tcp (tcp.c) and verbs (verbs.c). */
#ifndef DPUSIM_HW_XPORT_H
#define DPUSIM_HW_XPORT_H

#include <stdbool.h>
#include <stddef.h>

enum hw_link { HW_LEFT = 0, HW_RIGHT = 1, HW_NOLINK = -1 };

typedef struct hw_xport hw_xport;

typedef struct hw_xport_ops {
	const char *name;  /* "tcp", "verbs" */
	/* Sends sbytes from sbuf on link `slink` and receives exactly rbytes
	 * into rbuf from link `rlink`; either side may be HW_NOLINK. Messages
	 * on a link arrive in order and whole: the receiver must ask for the
	 * sender's size. 0, SIM_ETIMEDOUT, SIM_EPEER, SIM_ERANGE (larger than
	 * the transport's max_msg) or SIM_EIO; failures are logged. */
	int (*xfer)(hw_xport *x, int slink, const void *sbuf, size_t sbytes, int rlink,
		    void *rbuf, size_t rbytes);
	/* Closes every connection and frees x. */
	void (*free)(hw_xport *x);
} hw_xport_ops;

/* The base every backend embeds first. */
struct hw_xport {
	const hw_xport_ops *ops;
	int rank, size;       /* place in the ring and its length */
	int id;               /* this process's MPI rank */
	int peer[2];          /* MPI rank of the left / right neighbour */
	int timeout_ms;       /* longest wait without progress */
	size_t max_msg;       /* largest message xfer accepts (SIZE_MAX: any) */
};

/* Options common to every transport. */
typedef struct hw_xport_opts {
	int timeout_ms;
	size_t max_msg;          /* verbs: staging buffer size per link */
	const char *mem;         /* verbs: "host" or "cuda" receive staging memory */
	int gid_index;           /* verbs: -1 picks the first RoCEv2 GID, else this one */
	const char *device;      /* verbs: device name, NULL for the first */
	int stride;              /* 0 or 1: one ring of every rank; s: the ranks equal
				    to this one modulo s, which must divide the ranks
				    and leave at least 2 in each ring */
	int block;               /* 0 or 1: rings as stride says; b (stride 0 or 1):
				    rings of b consecutive ranks (b divides the
				    ranks, at least 2): a pipeline stage's
				    data-parallel group in Megatron's rank order */
} hw_xport_opts;

/* Sets x's rank, size, id and peers as MPI rank `id` of n in the rings of
 * `stride` (0 or 1: one ring). 0, or SIM_EINVAL when the stride does not
 * divide n or leaves fewer than 2 ranks a ring. */
int hw_xport_place(hw_xport *x, int id, int n, int stride);
/* The same for rings of `block` consecutive ranks: rank id's ring is
 * id - id % block .. + block - 1. 0, or SIM_EINVAL when block does not
 * divide n or is under 2. */
int hw_xport_place_block(hw_xport *x, int id, int n, int block);
/* hw_xport_place for this process (MPI started); the refusal logged. */
int hw_xport_place_me(hw_xport *x, const hw_xport_opts *o);

/* Connects a ring over MPI_COMM_WORLD (a collective call: every rank calls
 * it; with a stride, every ring at once). Needs at least 2 ranks a ring. NULL on failure, logged; every rank fails
 * together where the failure is local to one (the others learn it through
 * MPI), so none is left waiting. Free with hw_xport_free. */
hw_xport *hw_tcp_new(const hw_xport_opts *o);
hw_xport *hw_verbs_new(const hw_xport_opts *o);

/* verbs only: carry data by SEND with immediate (true) or RDMA WRITE with
 * immediate (false, the default). A sender-side choice: receivers take
 * either. 0, or SIM_EINVAL for another transport. */
int hw_verbs_use_send(hw_xport *x, bool send);

/* tcp only: waits spin as $DPUSIM_HW_TCP_SPIN_US says (true, the default) or
 * sleep at once (false), for measurements of the CPU the transport itself
 * costs. 0; a no-op for another transport. */
int hw_xport_spin(hw_xport *x, bool on);

/* x->ops->xfer; send-only and receive-only shorthands. */
int hw_xfer(hw_xport *x, int slink, const void *sbuf, size_t sbytes, int rlink, void *rbuf,
	    size_t rbytes);
int hw_send(hw_xport *x, int link, const void *buf, size_t bytes);
int hw_recv(hw_xport *x, int link, void *buf, size_t bytes);
/* NULL is a no-op. */
void hw_xport_free(hw_xport *x);

/* "left" / "right". */
const char *hw_link_name(int link);

#endif
