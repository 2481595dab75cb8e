/* The storage part of a training replay (replay.h hw_replay_store): the data
 * loader's sample reads from a file of this rank's own, buffered and with
 * O_DIRECT (and through cuFile for gds), and the checkpoint write, each
 * timed on every rank at once. */
#define _GNU_SOURCE /* O_DIRECT */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend-hw/bench.h"
#include "backend-hw/comm.h"
#include "backend-hw/gpu.h"
#include "backend-hw/log.h"
#include "backend-hw/replay.h"
#include "models/reliab.h"
#include "models/train.h"

#define ALIGN ((uint64_t)4096)

/* The byte hw_stor_write put at offset o. */
static unsigned char byte_at(uint64_t o)
{
	return (unsigned char)(o / HW_STOR_BLOCK % 251);
}

/* Reads [lo, hi) into buf in HW_STOR_BLOCK pieces, each piece's first and
 * last byte checked. */
static int read_span(int fd, uint64_t lo, uint64_t hi, unsigned char *buf)
{
	while (lo < hi) {
		size_t n = hi - lo < HW_STOR_BLOCK ? (size_t)(hi - lo) : HW_STOR_BLOCK;
		ssize_t got = pread(fd, buf, n, (off_t)lo);
		if (got != (ssize_t)n)
			return hw_fail(SIM_EIO, "storage replay: reading %zu bytes at %llu: %s", n,
				       (unsigned long long)lo, got < 0 ? strerror(errno) : "short read");
		if (buf[0] != byte_at(lo) || buf[n - 1] != byte_at(lo + n - 1))
			return hw_fail(SIM_EVERIFY, "storage replay: the bytes at %llu read back wrong",
				       (unsigned long long)lo);
		lo += n;
	}
	return 0;
}

/* Every sample once, in order: its bytes, or with O_DIRECT the aligned
 * blocks covering them. *secs gets the time of all. */
static int read_samples(int fd, const hw_store_job *j, bool direct, unsigned char *buf,
			double *secs)
{
	double t0 = hw_now_s();
	int err = 0;
	for (uint64_t k = 0; k < j->samples && !err; k++) {
		uint64_t lo = (uint64_t)nearbyint((double)k * j->sample_bytes);
		uint64_t hi = (uint64_t)nearbyint((double)(k + 1) * j->sample_bytes);
		if (direct)
			lo = lo / ALIGN * ALIGN, hi = (hi + ALIGN - 1) / ALIGN * ALIGN;
		err = read_span(fd, lo, hi, buf);
	}
	*secs = hw_now_s() - t0;
	return err;
}

/* Drops the file's pages from the page cache, so the reads after go to
 * the device, as a loader's first read of a sample does. */
static void drop_cache(int fd)
{
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

static int reads(int fd, uint64_t file_bytes, const hw_store_job *j, hw_store_res *r)
{
	unsigned char *buf = NULL;
	int fl, err;
	if (posix_memalign((void **)&buf, ALIGN, HW_STOR_BLOCK))
		return hw_fail(SIM_ENOMEM, "out of memory");
	drop_cache(fd);
	err = read_samples(fd, j, false, buf, &r->buffered_s);
	drop_cache(fd);
	fl = fcntl(fd, F_GETFL);
	r->direct = !err && fl >= 0 && fcntl(fd, F_SETFL, fl | O_DIRECT) == 0;
	if (!err && !r->direct)
		snprintf(r->direct_why, sizeof r->direct_why, "the filesystem of '%s' refuses "
			 "O_DIRECT (%s)", j->dir, strerror(errno));
	if (!err && r->direct)
		err = read_samples(fd, j, true, buf, &r->direct_s);
	free(buf);
	if (!err && j->gds) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		r->gds_err = hw_cufile_read_bw(path, file_bytes, HW_STOR_BLOCK, &r->gds_Bps,
					       r->gds_why, sizeof r->gds_why);
		if (r->gds_err != SIM_EUNSUPPORTED)
			err = r->gds_err;
	}
	return err;
}

static int read_phase(const hw_store_job *j, hw_store_res *r)
{
	uint64_t data = (uint64_t)nearbyint((double)j->samples * j->sample_bytes);
	uint64_t file_bytes = (data + HW_STOR_BLOCK - 1) / HW_STOR_BLOCK * HW_STOR_BLOCK;
	int fd, err;
	if (!j->samples)
		return 0;
	if ((fd = hw_stor_create(j->dir, "storage replay")) < 0)
		return SIM_EIO;
	err = hw_stor_write(fd, file_bytes, "storage replay");
	r->read_bytes = data;
	if (!err)
		err = reads(fd, file_bytes, j, r);
	close(fd);
	return err;
}

static int ckpt_phase(const hw_store_job *j, hw_store_res *r)
{
	double t0;
	int fd, err;
	if (!(j->ckpt_bytes > 0))
		return 0;
	if ((fd = hw_stor_create(j->dir, "checkpoint replay")) < 0)
		return SIM_EIO;
	t0 = hw_now_s();
	err = hw_stor_write(fd, (size_t)j->ckpt_bytes, "checkpoint replay");
	r->ckpt_s = hw_now_s() - t0;
	close(fd);
	return err;
}

int hw_replay_store(const hw_store_job *j, hw_store_res *r)
{
	int err;
	*r = (hw_store_res){ .gds_err = SIM_EUNSUPPORTED };
	hw_comm_barrier();
	err = read_phase(j, r);
	hw_comm_barrier();
	if (!err)
		err = ckpt_phase(j, r);
	return err;
}

void hw_replay_store_sum(const hw_store_job *j, const hw_store_res *r, hw_store_sum *out)
{
	*out = (hw_store_sum){
		.read_bytes = (uint64_t)hw_comm_sum((double)r->read_bytes),
		.samples = (uint64_t)hw_comm_sum((double)j->samples),
		.loaders = (unsigned)hw_comm_sum(j->samples ? 1 : 0),
		.buffered_s = hw_comm_max(r->buffered_s),
		.direct_s = hw_comm_max(r->direct_s),
		.direct = hw_comm_all(r->direct || !j->samples),
		.ckpt_bytes = hw_comm_sum(j->ckpt_bytes > 0 ? floor(j->ckpt_bytes) : 0),
		.ckpt_s = hw_comm_max(r->ckpt_s),
		.gds_err = r->gds_err, .gds_Bps = r->gds_Bps };
	snprintf(out->direct_why, sizeof out->direct_why, "%s", r->direct_why);
	snprintf(out->gds_why, sizeof out->gds_why, "%s", r->gds_why);
}

/* What the simulator reads the samples from, at what rate, into buf. */
static void model_reads(const train_config *c, char *buf, size_t n)
{
	if (c->local_Bps > 0)
		snprintf(buf, n, "node-local NVMe (cluster.local_nvme) at %.6g B/s per node%s",
			 c->local_Bps, c->local_iops > 0 ? ", one IO per sample" : "");
	else if (c->storage_Bps > 0)
		snprintf(buf, n, "the storage servers (cluster.storage) at %.6g B/s for all %u "
			 "replicas together, %.6g B/s each%s; page cache hits %g", c->storage_Bps,
			 c->dp, c->storage_Bps / c->dp,
			 c->storage_iops > 0 ? ", at most their IOPS x the sample size" : "",
			 c->page_cache_hit);
	else
		snprintf(buf, n, "no storage system in the scenario: the simulator reads no samples");
}

static int read_info(rep_report *r, const hw_store_job *j, const hw_store_sum *m,
		     const train_config *c)
{
	double per = m->samples ? (double)m->samples / m->loaders : 0;
	char model[320], direct[256];
	if (!m->samples)
		return rep_set_infof(r, "replay.storage_read", "not run: %s",
				     c->data ? "no loader rank"
					     : "the workload reads no data (no workload.data)");
	model_reads(c, model, sizeof model);
	if (m->direct)
		snprintf(direct, sizeof direct, "%.6g B/s together (%.4g s a sample)",
			 (double)m->read_bytes / m->direct_s, m->direct_s / per);
	else
		snprintf(direct, sizeof direct, "not run: %s", m->direct_why);
	return rep_set_infof(r, "replay.storage_read", "%.0f samples of %.6g B per loader rank "
		      "(stage 0), %u ranks at once, from a file of each in '%s' (written, fsynced, "
		      "dropped from "
		      "the page cache first), in order: buffered pread %.6g B/s together (%.4g s a "
		      "sample); O_DIRECT %s", per, j->sample_bytes, m->loaders, j->dir,
		      (double)m->read_bytes / m->buffered_s, m->buffered_s / per, direct) ||
	       rep_set_infof(r, "replay.storage_model", "simulated: %s", model);
}

static int ckpt_info(rep_report *r, const scn_scenario *s, const train_config *c,
		     const hw_store_sum *m, double full_bytes, double scale)
{
	double gpus = train_gpus(c);
	char model[256];
	if (!s->failures.enabled)
		return rep_set_infof(r, "replay.checkpoint_write", "not run: the scenario takes "
				     "no checkpoints (no failures section)");
	if (c->storage_write_Bps > 0)
		snprintf(model, sizeof model, "the whole checkpoint at the storage servers' write "
			 "rate, %.6g B/s, in %.6g s (rel_ckpt_write_s), %.6g s at this scale",
			 c->storage_write_Bps, rel_ckpt_write_s(full_bytes, c->storage_write_Bps),
			 rel_ckpt_write_s(full_bytes * scale, c->storage_write_Bps));
	else
		snprintf(model, sizeof model, "no storage write rate in the scenario (cluster."
			 "storage with a write_bw): checkpoint writes not simulated");
	return rep_set_infof(r, "replay.checkpoint_write", "%.6g bytes per rank "
		      "(train_ckpt_bytes %.6g: failures.checkpoint_size or 16 B per parameter, / "
		      "%.0f GPUs x scale %g), "
		      "written and fsynced by %d ranks at once: %.6g B/s together (%.4g s); "
		      "simulated: %s", m->ckpt_bytes / hw_comm_size(), full_bytes, gpus, scale,
		      hw_comm_size(), m->ckpt_bytes / m->ckpt_s, m->ckpt_s, model);
}

int hw_replay_store_info(rep_report *r, const scn_scenario *s, const train_config *c,
			 const hw_store_job *j, const hw_store_sum *m, double full_bytes,
			 double scale)
{
	return read_info(r, j, m, c) || ckpt_info(r, s, c, m, full_bytes, scale) ? SIM_ENOMEM : 0;
}

int hw_replay_store_variant(rep_report *r, const scn_variant *v, const hw_store_sum *m)
{
	char key[SCN_NAME_MAX + 40];
	if (!m->samples || v->storage == SCN_STOR_HOST)
		return 0;
	if (v->storage == SCN_STOR_GDS && m->gds_err == 0) {
		snprintf(key, sizeof key, "%s.storage_gds_read_Bps", v->name);
		return rep_set_infof(r, key, "%.6g (cuFile into GPU memory, rank 0, the same file, "
				     "every block checked)", m->gds_Bps);
	}
	snprintf(key, sizeof key, "%s.storage_not_replayed", v->name);
	if (v->storage == SCN_STOR_GDS)
		return rep_set_infof(r, key, "gds: %s",
				     m->gds_why[0] ? m->gds_why : "cuFile did not run");
	return rep_set_infof(r, key, "%s: %s", scn_storage_path_name(v->storage),
		      v->storage == SCN_STOR_DPU_SNAP
			      ? "no DPU SNAP (NVMe emulation) is driven; replay.storage_read is the "
				"host path's reads"
			      : "no NVMe-oF over RDMA target is driven; replay.storage_read is the "
				"host path's reads");
}
