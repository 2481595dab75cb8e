/* Transport-independent helpers over hw_xport_ops. */
#include "backend-hw/xport.h"

#include "sim/err.h"

int hw_xport_place(hw_xport *x, int id, int n, int stride)
{
	int s = stride > 1 ? stride : 1;
	if (n % s || n / s < 2 || id < 0 || id >= n)
		return SIM_EINVAL;
	x->id = id;
	x->rank = id / s;
	x->size = n / s;
	x->peer[HW_LEFT] = (id + n - s) % n;
	x->peer[HW_RIGHT] = (id + s) % n;
	return 0;
}

int hw_xport_place_block(hw_xport *x, int id, int n, int block)
{
	if (block < 2 || n % block || id < 0 || id >= n)
		return SIM_EINVAL;
	int base = id - id % block;
	x->id = id;
	x->rank = id % block;
	x->size = block;
	x->peer[HW_LEFT] = base + (x->rank + block - 1) % block;
	x->peer[HW_RIGHT] = base + (x->rank + 1) % block;
	return 0;
}

int hw_xfer(hw_xport *x, int slink, const void *sbuf, size_t sbytes, int rlink, void *rbuf,
	    size_t rbytes)
{
	return x->ops->xfer(x, slink, sbuf, sbytes, rlink, rbuf, rbytes);
}

int hw_send(hw_xport *x, int link, const void *buf, size_t bytes)
{
	return x->ops->xfer(x, link, buf, bytes, HW_NOLINK, NULL, 0);
}

int hw_recv(hw_xport *x, int link, void *buf, size_t bytes)
{
	return x->ops->xfer(x, HW_NOLINK, NULL, 0, link, buf, bytes);
}

void hw_xport_free(hw_xport *x)
{
	if (x)
		x->ops->free(x);
}

const char *hw_link_name(int link)
{
	return link == HW_LEFT ? "left" : "right";
}
