/* One opened RDMA device and the RC queue pair steps dpusim-hw's verbs
 * paths share (vdev.h). */
#include "backend-hw/vdev.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "backend-hw/log.h"

/* Reads the GID type sysfs file ("RoCE v2", "IB/RoCE v1"). */
static bool gid_is_rocev2(const char *dev, int port, int index)
{
	char path[256], buf[32] = "";
	FILE *f;
	snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d", dev,
		 port, index);
	if (!(f = fopen(path, "r")))
		return false;
	if (!fgets(buf, sizeof buf, f))
		buf[0] = '\0';
	fclose(f);
	return !strncmp(buf, "RoCE v2", 7);
}

/* InfiniBand: GID 0. RoCE: the first RoCE v2 GID holding an IPv4-mapped
 * address (::ffff:a.b.c.d), which routes like the netdev's IPv4 address. */
static int pick_gid(hw_vdev *d, int wanted)
{
	const char *dev = ibv_get_device_name(d->ctx->device);
	if (wanted >= 0 || d->pattr.link_layer != IBV_LINK_LAYER_ETHERNET) {
		d->gid_index = wanted >= 0 ? wanted : 0;
		VERBSCHECK(!ibv_query_gid(d->ctx, d->port, d->gid_index, &d->gid), "ibv_query_gid");
		return 0;
	}
	for (int i = 0; i < d->pattr.gid_tbl_len && i < 16; i++) {
		union ibv_gid g;
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		if (ibv_query_gid(d->ctx, d->port, i, &g) || memcmp(g.raw, mapped, 12) ||
		    !gid_is_rocev2(dev, d->port, i))
			continue;
		d->gid_index = i;
		d->gid = g;
		return 0;
	}
	return hw_fail(SIM_ENODEV, "%s port %u has no RoCE v2 GID with an IPv4 address "
		       "(give the netdev an IPv4 address, or pass a GID index)", dev, d->port);
}

/* Opens the named (or first) device and its first active port. */
static int open_device(hw_vdev *d, const char *want)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		if (list)
			ibv_free_device_list(list);
		return hw_fail(SIM_ENODEV, "no RDMA device here (libibverbs: %s); the verbs "
			       "transport cannot run, use --transport tcp",
			       list ? "none found" : strerror(errno));
	}
	for (int i = 0; i < n && !d->ctx; i++)
		if (!want || !strcmp(ibv_get_device_name(list[i]), want))
			d->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!d->ctx)
		return hw_fail(SIM_ENODEV, "cannot open RDMA device '%s'", want ? want : "(first)");
	VERBSCHECK(!ibv_query_device(d->ctx, &d->attr), "ibv_query_device");
	for (uint8_t p = 1; p <= d->attr.phys_port_cnt; p++)
		if (!ibv_query_port(d->ctx, p, &d->pattr) && d->pattr.state == IBV_PORT_ACTIVE) {
			d->port = p;
			return 0;
		}
	return hw_fail(SIM_ENODEV, "RDMA device '%s' has no active port",
		       ibv_get_device_name(d->ctx->device));
}

int hw_vdev_open(hw_vdev *d, const char *name, int gid_index)
{
	int err = open_device(d, name);
	if (!err)
		err = pick_gid(d, gid_index);
	if (!err && !(d->pd = ibv_alloc_pd(d->ctx)))
		err = hw_fail(SIM_EIO, "ibv_alloc_pd failed: %s", strerror(errno));
	return err;
}

void hw_vdev_close(hw_vdev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	d->pd = NULL;
	d->ctx = NULL;
}

int hw_vdev_reg(hw_vdev *d, hw_mem *m, int access, struct ibv_mr **mr)
{
	int fd, err;
	if (!m->ops->dmabuf) {
		*mr = ibv_reg_mr(d->pd, m->ptr, m->bytes, access);
		VERBSCHECK(*mr, "ibv_reg_mr");
		return 0;
	}
	if ((err = m->ops->dmabuf(m, &fd)))
		return err;
	*mr = ibv_reg_dmabuf_mr(d->pd, 0, m->bytes, (uint64_t)(uintptr_t)m->ptr, fd, access);
	VERBSCHECK(*mr, "ibv_reg_dmabuf_mr(GPU memory)");
	return 0;
}

void hw_vdev_describe(const hw_vdev *d, const struct ibv_qp *qp, uint32_t psn,
		      const struct ibv_mr *mr, const hw_mem *m, hw_msg_verbs *out)
{
	*out = (hw_msg_verbs){ .qpn = qp->qp_num, .psn = psn, .lid = d->pattr.lid,
			       .rkey = mr->rkey, .addr = (uint64_t)(uintptr_t)m->ptr,
			       .bytes = m->bytes, .mtu = (uint32_t)d->pattr.active_mtu };
	memcpy(out->gid, d->gid.raw, 16);
}

int hw_vdev_psn(uint32_t *psn)
{
	VERBSCHECK(getrandom(psn, sizeof *psn, 0) == (ssize_t)sizeof *psn, "getrandom");
	*psn &= 0xffffff;
	return 0;
}

int hw_vdev_connect(const hw_vdev *d, struct ibv_qp *qp, uint32_t psn, const hw_msg_verbs *peer,
		    int access, uint8_t rd_atomic)
{
	enum ibv_mtu mtu = (enum ibv_mtu)peer->mtu < d->pattr.active_mtu
				   ? (enum ibv_mtu)peer->mtu : d->pattr.active_mtu;
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = d->port,
		.qp_access_flags = (unsigned)access,
	};
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = mtu, .dest_qp_num = peer->qpn,
		.rq_psn = peer->psn, .max_dest_rd_atomic = rd_atomic, .min_rnr_timer = 12,
		.ah_attr = { .dlid = peer->lid, .sl = 0, .port_num = d->port,
			     .is_global = d->pattr.link_layer == IBV_LINK_LAYER_ETHERNET,
			     .grh = { .sgid_index = (uint8_t)d->gid_index, .hop_limit = 64 } },
	};
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.sq_psn = psn, .max_rd_atomic = rd_atomic,
	};
	memcpy(rtr.ah_attr.grh.dgid.raw, peer->gid, 16);
	VERBSCHECK(!ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS), "ibv_modify_qp(INIT)");
	VERBSCHECK(!ibv_modify_qp(qp, &rtr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER), "ibv_modify_qp(RTR)");
	VERBSCHECK(!ibv_modify_qp(qp, &rts, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
		   "ibv_modify_qp(RTS)");
	return 0;
}
