/* Node-local NVMe reads into GPU memory over a node's PCIe tree (stor.h):
 * resources per link and direction on a flow network of its own, each IO
 * one or two flows in sequence. */
#include "models/stor.h"

#include <math.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "sim/err.h"
#include "sim/flow.h"

#define NONE UINT32_MAX
#define PATH_MAX_RES 8

/* One benchmark: the network, the two stages of an IO as resource paths
 * (stage 2 empty when the first lands where it should), the threads. */
typedef struct bench {
	sim_engine *eng;
	flow_net *net;
	uint32_t stage[2][PATH_MAX_RES], len[2];
	uint64_t io_bytes;
	sim_time io_lat;
	uint32_t ios_left, done;
	sim_time end;
	int err;
} bench;

static bool positive(double x)
{
	return isfinite(x) && x > 0;
}

static int check(const stor_local *c, uint32_t gpu, uint32_t threads, double io_bytes,
		 uint32_t ios)
{
	bool ok = c->drives && c->switches && c->gpus_per_switch && c->switches_per_socket &&
		  c->drive_switch < c->switches && gpu < c->switches * c->gpus_per_switch &&
		  positive(c->drive_read_Bps) && positive(c->drive_link_Bps) &&
		  positive(c->gpu_link_Bps) && positive(c->uplink_Bps) && c->socket_Bps >= 0 &&
		  c->host_mem_Bps >= 0 && c->p2p_overhead >= 1 && c->io_lat_s >= 0 && threads &&
		  ios && positive(io_bytes);
	return ok ? SIM_OK : SIM_EINVAL;
}

static int res(bench *b, double cap_Bps, uint32_t *id)
{
	return cap_Bps > 0 ? flow_res_add(b->net, cap_Bps, id) : (*id = NONE, SIM_OK);
}

static void push(bench *b, int s, uint32_t id)
{
	if (id != NONE)
		b->stage[s][b->len[s]++] = id;
}

/* The resources an IO crosses, stage by stage, from the drives' switch s0
 * to GPU gpu on switch s1. */
static int build_paths(bench *b, const stor_local *c, uint32_t gpu, stor_xfer x)
{
	uint32_t s0 = c->drive_switch, s1 = gpu / c->gpus_per_switch;
	bool cross_socket = s0 / c->switches_per_socket != s1 / c->switches_per_socket;
	uint32_t drv, gpu_dn, near_dn, near_up, up0, dn1, p2p, sock, mem;
	int rc = res(b, c->drives * fmin(c->drive_read_Bps, c->drive_link_Bps), &drv);
	rc = rc ? rc : res(b, c->gpu_link_Bps, &gpu_dn);
	rc = rc ? rc : res(b, c->uplink_Bps, &up0);
	rc = rc ? rc : res(b, c->uplink_Bps, &dn1);
	rc = rc ? rc : res(b, cross_socket ? c->socket_Bps : 0, &sock);
	if (rc)
		return rc;
	push(b, 0, drv);
	if (x == STOR_XFER_BOUNCE) {
		/* Up into host memory (written), then read out by the GPU's copy
		 * engine and down to the GPU; across sockets when the GPU is on
		 * the other one (the buffer sits by the drives). */
		if ((rc = res(b, c->host_mem_Bps, &mem)))
			return rc;
		push(b, 0, up0), push(b, 0, mem);
		push(b, 1, mem), push(b, 1, sock), push(b, 1, dn1);
		push(b, 1, gpu_dn);
		return SIM_OK;
	}
	if (s0 == s1) { /* peer to peer inside the switch */
		push(b, 0, gpu_dn);
		return SIM_OK;
	}
	/* Staged in the first GPU of the drives' switch, then copied peer to
	 * peer through the root complex(es): the copy's PCIe traffic through a
	 * CPU carries p2p_overhead bytes per byte on the links at the CPU. */
	rc = res(b, c->gpu_link_Bps, &near_dn);
	rc = rc ? rc : res(b, c->gpu_link_Bps, &near_up);
	rc = rc ? rc : res(b, fmin(c->uplink_Bps, cross_socket && c->socket_Bps > 0
							  ? c->socket_Bps : INFINITY) /
				      c->p2p_overhead, &p2p);
	if (rc)
		return rc;
	push(b, 0, near_dn);
	push(b, 1, near_up), push(b, 1, up0), push(b, 1, p2p), push(b, 1, sock);
	push(b, 1, dn1), push(b, 1, gpu_dn);
	return SIM_OK;
}

static void issue(bench *b);
static void stage_done(sim_engine *eng, void *obj, uint64_t st);

static void start_stage(bench *b, int s)
{
	flow_spec fs = { .bytes = b->io_bytes, .path = b->stage[s],
			 .path_len = b->len[s], .done = stage_done, .obj = b, .data = (uint64_t)s };
	int rc = flow_start(b->net, &fs, NULL);
	if (rc && !b->err) {
		b->err = rc;
		sim_stop(b->eng);
	}
}

static void after_latency(sim_engine *eng, void *obj, uint64_t s)
{
	bench *b = obj;
	(void)eng;
	if (s == 0 && b->len[1])
		return start_stage(b, 1);
	b->done++;
	b->end = sim_now(b->eng);
	issue(b);
}

static void stage_done(sim_engine *eng, void *obj, uint64_t s)
{
	bench *b = obj;
	int rc = sim_schedule_in(eng, s == 0 ? b->io_lat : 0, after_latency, b, s, NULL);
	if (rc && !b->err) {
		b->err = rc; /* SIM_EOVERFLOW: the latency ends past the clock */
		sim_stop(eng);
	}
}

/* The thread whose IO just finished (or one starting) reads the next. */
static void issue(bench *b)
{
	if (!b->ios_left)
		return;
	b->ios_left--;
	start_stage(b, 0);
}

static void start_thread(sim_engine *eng, void *obj, uint64_t data)
{
	(void)eng, (void)data;
	issue(obj);
}

int stor_gdsio(const stor_local *c, uint32_t gpu, stor_xfer x, uint32_t threads,
	       double io_bytes, uint32_t ios, double *Bps)
{
	bench b = { 0 };
	int rc = check(c, gpu, threads, io_bytes, ios);
	*Bps = 0;
	/* The IO's size and latency as the engine counts them, checked: a
	 * double cast past the integer's range is undefined. */
	if (!rc && !(io_bytes < 18446744073709551616.0))
		rc = SIM_ERANGE;
	if (!rc)
		rc = sim_time_from_s(c->io_lat_s, &b.io_lat);
	if (rc)
		return rc;
	b.io_bytes = (uint64_t)llround(io_bytes);
	b.ios_left = ios * threads;
	if (!(b.eng = sim_engine_new()) || !(b.net = flow_net_new(b.eng)))
		rc = SIM_ENOMEM;
	if (!rc)
		rc = build_paths(&b, c, gpu, x);
	/* Threads start one drive-set IO time apart: over a long run they drift
	 * out of phase, while started together a fluid model would keep them in
	 * lock step (all reading, then all copying), which no real run does. */
	double gap_s = io_bytes / (c->drives * fmin(c->drive_read_Bps, c->drive_link_Bps));
	for (uint32_t t = 0; t < threads && !rc; t++) {
		sim_time at;
		if (!(rc = sim_time_from_s(t * gap_s, &at)))
			rc = sim_schedule_in(b.eng, at, start_thread, &b, 0, NULL);
	}
	if (!rc) {
		sim_run(b.eng);
		rc = b.err ? b.err : sim_error(b.eng); /* SIM_EOVERFLOW: past the clock's end */
	}
	if (!rc)
		*Bps = b.done * io_bytes / sim_time_to_s(b.end);
	flow_net_free(b.net);
	sim_engine_free(b.eng);
	return rc;
}
