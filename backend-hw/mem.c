/* Memory backends: the host one, and lookup by name. */
#include "backend-hw/mem.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend-hw/gpu.h"
#include "backend-hw/log.h"

static int host_alloc(hw_mem *m)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t bytes = (m->bytes + page - 1) / page * page;
	if (posix_memalign(&m->ptr, page, bytes ? bytes : page))
		return hw_fail(SIM_ENOMEM, "cannot allocate %zu bytes of host memory", m->bytes);
	memset(m->ptr, 0, bytes ? bytes : page);
	return 0;
}

static void host_release(hw_mem *m)
{
	free(m->ptr);
	m->ptr = NULL;
}

static int host_to_host(const hw_mem *m, size_t off, void *dst, size_t n)
{
	if (off > m->bytes || n > m->bytes - off)
		return SIM_ERANGE;
	memcpy(dst, (const char *)m->ptr + off, n);
	return 0;
}

static int host_from_host(hw_mem *m, size_t off, const void *src, size_t n)
{
	if (off > m->bytes || n > m->bytes - off)
		return SIM_ERANGE;
	memcpy((char *)m->ptr + off, src, n);
	return 0;
}

const hw_mem_ops hw_mem_host_ops = {
	.name = "host",
	.alloc = host_alloc,
	.release = host_release,
	.to_host = host_to_host,
	.from_host = host_from_host,
	.dmabuf = NULL,
};

const hw_mem_ops *hw_mem_backend(const char *name)
{
	if (!strcmp(name, "host"))
		return &hw_mem_host_ops;
#ifdef HW_HAVE_CUDA
	if (!strcmp(name, "cuda"))
		return &hw_mem_cuda_ops;
#endif
	return NULL;
}

int hw_mem_init(hw_mem *m, const hw_mem_ops *ops, size_t bytes, int device)
{
	*m = (hw_mem){ .ops = ops, .bytes = bytes, .device = device, .dmabuf_fd = -1 };
	return ops->alloc(m);
}

void hw_mem_release(hw_mem *m)
{
	if (!m->ops)
		return;
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	m->ops->release(m);
	m->ops = NULL;
	m->dmabuf_fd = -1;
}
