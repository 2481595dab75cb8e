/* Memory the transports move data in and out of: host memory, or GPU memory
 * when CUDA is compiled in (registered with the NIC through dmabuf for
 * GPUDirect RDMA). Backends share this base struct and have one static const
 * ops table each. */
#ifndef DPUSIM_HW_MEM_H
#define DPUSIM_HW_MEM_H

#include <stddef.h>
#include <stdint.h>

typedef struct hw_mem hw_mem;

typedef struct hw_mem_ops {
	const char *name;  /* "host", "cuda" */
	/* Allocates m->bytes (already set) into m->ptr. 0 or a negative code. */
	int (*alloc)(hw_mem *m);
	/* Frees what alloc made; safe on a failed or never-made allocation. */
	void (*release)(hw_mem *m);
	/* Copies n bytes between host memory and the buffer at offset off. */
	int (*to_host)(const hw_mem *m, size_t off, void *dst, size_t n);
	int (*from_host)(hw_mem *m, size_t off, const void *src, size_t n);
	/* A dmabuf fd for the whole buffer (owned by m), for ibv_reg_dmabuf_mr;
	 * NULL in backends the NIC reaches with plain ibv_reg_mr. */
	int (*dmabuf)(hw_mem *m, int *fd);
} hw_mem_ops;

struct hw_mem {
	const hw_mem_ops *ops;
	void *ptr;        /* host pointer, or device pointer for cuda */
	size_t bytes;
	int device;       /* GPU ordinal for cuda (-1 at init: this rank's), -1 for host */
	int dmabuf_fd;    /* -1 until ops->dmabuf made one */
};

/* The host backend (page-aligned malloc). */
extern const hw_mem_ops hw_mem_host_ops;

/* The backend called `name` in this build, or NULL ("cuda" without CUDA). */
const hw_mem_ops *hw_mem_backend(const char *name);

/* Allocates `bytes` with `ops` on `device` into the caller's *m. Returns 0
 * or a negative code (logged). The caller calls hw_mem_release(m). */
int hw_mem_init(hw_mem *m, const hw_mem_ops *ops, size_t bytes, int device);
/* Frees the buffer; a zeroed or released hw_mem is a no-op. */
void hw_mem_release(hw_mem *m);

#endif
