/* Transport cost model (transport.h). */
#include "models/transport.h"

#include <math.h>
#include <string.h>

#include "sim/err.h"

static const char *const names[] = {
	[COLL_HOST_TCP] = "host-tcp",
	[COLL_RDMA] = "rdma",
	[COLL_RDMA_GDR] = "rdma-gdr",
};

int coll_tkind_parse(const char *name, coll_tkind *kind)
{
	for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++)
		if (name && !strcmp(name, names[k])) {
			*kind = (coll_tkind)k;
			return 0;
		}
	return SIM_ENOENT;
}

const char *coll_tkind_name(coll_tkind kind)
{
	return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

fab_end coll_transport_end(coll_tkind kind)
{
	switch (kind) {
	case COLL_HOST_TCP:
		return FAB_END_SOCKET;
	case COLL_RDMA:
		/* The buffers are GPU memory (a training job's gradients, an
		 * nccl-tests buffer): without GPUDirect NCCL's network buffers
		 * are host memory (src/transport/net.cc maps them to the GPU
		 * only with useGdr), so the GPU writes or reads them over its
		 * PCIe link and the NIC's verbs DMA reads or writes them: memory
		 * twice, PCIe twice (FAB_END_STAGED). */
		return FAB_END_STAGED;
	case COLL_RDMA_GDR:
		break;
	}
	return FAB_END_GPU;
}

double coll_transport_cycles(const coll_transport *t, uint64_t bytes)
{
	double packets;
	if (t->kind != COLL_HOST_TCP)
		return 0;
	packets = t->mtu_bytes ? ceil((double)bytes / t->mtu_bytes) : 0;
	return t->cycles_per_byte * (double)bytes + t->cycles_per_packet * packets;
}
