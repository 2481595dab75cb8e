/* Host-local microbenchmarks of dpusim-hw bench (rank 0): memory copy,
 * CPU GEMM, AES-GCM encryption per core, storage reads, GPU GEMM and copies. */
#define _GNU_SOURCE /* O_DIRECT */
#include "backend-hw/bench.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_blas.h>
#include <liburing.h>
#include <openssl/evp.h>

#include "backend-hw/comm.h"
#include "backend-hw/gpu.h"
#include "backend-hw/log.h"

#define STOR_BLOCK HW_STOR_BLOCK
#define STOR_RAND 4096u

static int bench_memcpy(hw_bench *h)
{
	size_t bytes = h->quick ? (size_t)16 << 20 : (size_t)256 << 20;
	int reps = h->quick ? 3 : 7;
	double t[16];
	char *a = malloc(bytes), *b = malloc(bytes);
	if (!a || !b) {
		free(a), free(b);
		return hw_fail(SIM_ENOMEM, "memcpy benchmark: cannot allocate 2 x %zu bytes", bytes);
	}
	memset(a, 1, bytes), memset(b, 2, bytes);
	for (int r = 0; r < reps; r++) {
		double t0 = hw_now_s();
		memcpy(b, a, bytes);
		t[r] = hw_now_s() - t0;
	}
	if (memcmp(a, b, bytes)) {
		free(a), free(b);
		return hw_fail(SIM_EVERIFY, "memcpy benchmark: the copy differs from its source");
	}
	free(a), free(b);
	return hw_bench_emit(h, &(rep_benchmark){ .name = "memcpy_bw", .transport = "cpu",
		.memory = "host", .bytes = bytes, .ranks = 1, .iters = (uint64_t)reps,
		.value = (double)bytes / hw_median(t, (size_t)reps), .unit = "B/s",
		.p50 = NAN, .p99 = NAN, .stddev = NAN });
}

/* Encrypts `chunk`-byte buffers with AES-256-GCM for about `secs`; B/s. */
static int aes_rate(size_t chunk, double secs, double *Bps, uint64_t *iters)
{
	unsigned char key[32] = { 1 }, iv[12] = { 2 }, tag[16];
	unsigned char *in = calloc(1, chunk), *out = malloc(chunk + 16);
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int len, ok = in && out && c &&
		      EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, iv) == 1;
	double t0 = hw_now_s(), t = 0;
	uint64_t n = 0;
	while (ok && (t = hw_now_s() - t0) < secs) {
		iv[0] = (unsigned char)n;
		ok = EVP_EncryptInit_ex(c, NULL, NULL, NULL, iv) == 1 &&
		     EVP_EncryptUpdate(c, out, &len, in, (int)chunk) == 1 &&
		     EVP_EncryptFinal_ex(c, out + len, &len) == 1 &&
		     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
		n++;
	}
	EVP_CIPHER_CTX_free(c);
	free(in), free(out);
	if (!ok)
		return hw_fail(SIM_EIO, "AES-256-GCM through OpenSSL EVP failed");
	*Bps = (double)chunk * (double)n / t;
	*iters = n;
	return 0;
}

static int bench_aes(hw_bench *h)
{
	static const size_t chunks[] = { 1500, 16384 }; /* an MTU-sized packet, a TLS record */
	for (size_t i = 0; i < 2; i++) {
		double Bps = 0;
		uint64_t iters = 0;
		int err = aes_rate(chunks[i], h->quick ? 0.05 : 0.5, &Bps, &iters);
		if (!err)
			err = hw_bench_emit(h, &(rep_benchmark){ .name = "aes_gcm_encrypt_bw",
				.transport = "crypto", .memory = "host", .bytes = chunks[i],
				.ranks = 1, .iters = iters, .value = Bps, .unit = "B/s",
				.p50 = NAN, .p99 = NAN, .stddev = NAN });
		if (err)
			return err;
	}
	return 0;
}

int hw_stor_write(int fd, size_t bytes, const char *what)
{
	char *buf = malloc(STOR_BLOCK);
	int err = 0;
	if (!buf)
		return hw_fail(SIM_ENOMEM, "out of memory");
	for (size_t off = 0; off < bytes && !err; off += STOR_BLOCK) {
		size_t n = bytes - off < STOR_BLOCK ? bytes - off : STOR_BLOCK;
		memset(buf, (int)(off / STOR_BLOCK % 251), n);
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n)
			err = hw_fail(SIM_EIO, "%s: writing its file: %s", what, strerror(errno));
	}
	if (!err && fsync(fd))
		err = hw_fail(SIM_EIO, "%s: fsync of its file: %s", what, strerror(errno));
	free(buf);
	return err;
}

int hw_stor_create(const char *dir, const char *what)
{
	char path[4096];
	int fd, n = snprintf(path, sizeof path, "%s/dpusim-hw-storage.XXXXXX", dir);
	if (n < 0 || (size_t)n >= sizeof path) {
		hw_error("%s: the directory '%.64s...' is too long", what, dir);
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		hw_error("%s: cannot create a file in '%s': %s", what, dir, strerror(errno));
		return -1;
	}
	if (unlink(path)) {
		hw_error("%s: cannot remove '%s' after creating it: %s", what, path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Sequential O_DIRECT reads of the whole file; verifies each block's byte. */
static int stor_seq(hw_bench *h, int fd, size_t bytes, char *buf)
{
	double t0 = hw_now_s(), t;
	for (size_t off = 0; off < bytes; off += STOR_BLOCK) {
		if (pread(fd, buf, STOR_BLOCK, (off_t)off) != (ssize_t)STOR_BLOCK)
			return hw_fail(SIM_EIO, "storage benchmark: O_DIRECT read: %s", strerror(errno));
		if (buf[0] != (char)(off / STOR_BLOCK % 251) || buf[STOR_BLOCK - 1] != buf[0])
			return hw_fail(SIM_EVERIFY, "storage benchmark: block at %zu reads back wrong", off);
	}
	t = hw_now_s() - t0;
	return hw_bench_emit(h, &(rep_benchmark){ .name = "storage_read_bw", .transport = "storage",
		.bytes = STOR_BLOCK, .ranks = 1, .iters = bytes / STOR_BLOCK,
		.value = (double)bytes / t, .unit = "B/s", .p50 = NAN, .p99 = NAN, .stddev = NAN });
}

/* Random 4 KiB O_DIRECT reads one at a time: latency distribution. */
static int stor_rand(hw_bench *h, int fd, size_t bytes, char *buf)
{
	size_t n = h->quick ? 256 : 4096, blocks = bytes / STOR_RAND;
	double *lat = malloc(n * sizeof *lat), sum = 0;
	unsigned seed = 12345;
	int err;
	if (!lat)
		return hw_fail(SIM_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		off_t off = (off_t)((size_t)rand_r(&seed) % blocks * STOR_RAND);
		double t0 = hw_now_s();
		if (pread(fd, buf, STOR_RAND, off) != (ssize_t)STOR_RAND) {
			free(lat);
			return hw_fail(SIM_EIO, "storage benchmark: O_DIRECT read: %s", strerror(errno));
		}
		sum += lat[i] = hw_now_s() - t0;
	}
	hw_median(lat, n);
	err = hw_bench_emit(h, &(rep_benchmark){ .name = "storage_read_lat", .transport = "storage",
		.bytes = STOR_RAND, .ranks = 1, .iters = n, .value = sum / (double)n, .unit = "s",
		.p50 = hw_quantile_sorted(lat, n, 0.5), .p99 = hw_quantile_sorted(lat, n, 0.99),
		.stddev = NAN });
	free(lat);
	return err;
}

#define URING_QD 16u

/* Random 4 KiB O_DIRECT reads through io_uring, URING_QD in flight: op/s. */
static int stor_uring(hw_bench *h, int fd, size_t bytes, char *buf)
{
	struct io_uring ring;
	size_t n = h->quick ? 1024 : 16384, blocks = bytes / STOR_RAND, issued = 0, done = 0;
	unsigned seed = 777;
	double t0;
	int err = io_uring_queue_init(URING_QD, &ring, 0);
	if (err < 0) {
		return hw_bench_skip(h, "storage_io_uring", "io_uring_queue_init: %s",
				     strerror(-err));
	}
	t0 = hw_now_s();
	while (done < n && !err) {
		struct io_uring_cqe *cqe;
		while (issued < n && issued - done < URING_QD) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			off_t off = (off_t)((size_t)rand_r(&seed) % blocks * STOR_RAND);
			io_uring_prep_read(sqe, fd, buf + (issued % URING_QD) * STOR_RAND, STOR_RAND,
					   (uint64_t)off);
			issued++;
		}
		if ((err = io_uring_submit_and_wait(&ring, 1)) < 0)
			break;
		err = 0;
		while (!err && io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (cqe->res != (int)STOR_RAND)
				err = cqe->res < 0 ? cqe->res : -EIO;
			io_uring_cqe_seen(&ring, cqe);
			done++;
		}
	}
	io_uring_queue_exit(&ring);
	if (err)
		return hw_fail(SIM_EIO, "storage benchmark: io_uring read: %s", strerror(-err));
	return hw_bench_emit(h, &(rep_benchmark){ .name = "storage_read_iops_qd16",
		.transport = "storage", .bytes = STOR_RAND, .ranks = 1, .iters = n,
		.value = (double)n / (hw_now_s() - t0), .unit = "op/s", .p50 = NAN, .p99 = NAN,
		.stddev = NAN });
}

/* Sequential 1 MiB cuFile (GPUDirect Storage) reads of the file into GPU
 * memory, every block checked after: storage_read_bw with memory cuda.
 * Where cuFile is not compiled in or its driver does not open, says so. */
static int stor_cufile(hw_bench *h, const char *path, size_t bytes)
{
	char why[256] = "";
	double Bps = 0;
	int err = hw_cufile_read_bw(path, bytes, STOR_BLOCK, &Bps, why, sizeof why);
	if (err == SIM_EUNSUPPORTED) {
		return hw_bench_skip(h, "storage_cufile", "%s", why);
	}
	if (err)
		return err;
	return hw_bench_emit(h, &(rep_benchmark){ .name = "storage_read_bw", .transport = "storage",
		.memory = "cuda", .bytes = STOR_BLOCK, .ranks = 1, .iters = bytes / STOR_BLOCK,
		.value = Bps, .unit = "B/s", .p50 = NAN, .p99 = NAN, .stddev = NAN });
}

/* The reads of a written, synced file, with O_DIRECT set on the same
 * descriptor (no second open by name that could be raced). */
static int stor_reads(hw_bench *h, int fd, size_t bytes)
{
	char fdpath[64];
	void *buf = NULL;
	int fl = fcntl(fd, F_GETFL), err;
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_DIRECT) < 0) {
		return hw_bench_skip(h, "storage", "the filesystem of '%s' refuses O_DIRECT (%s): "
				     "no storage_read benchmark; pick another --dir", h->dir,
				     strerror(errno));
	}
	if (posix_memalign(&buf, 4096, STOR_BLOCK))
		return hw_fail(SIM_ENOMEM, "out of memory");
	err = stor_seq(h, fd, bytes, buf);
	if (!err)
		err = stor_rand(h, fd, bytes, buf);
	if (!err)
		err = stor_uring(h, fd, bytes, buf);
	snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
	if (!err)
		err = stor_cufile(h, fdpath, bytes);
	free(buf);
	return err;
}

static int bench_storage(hw_bench *h)
{
	size_t bytes = h->quick ? (size_t)8 << 20 : (size_t)256 << 20;
	int fd = hw_stor_create(h->dir, "storage benchmark"), err;
	if (fd < 0)
		return SIM_EIO;
	err = hw_stor_write(fd, bytes, "storage benchmark");
	if (!err)
		err = stor_reads(h, fd, bytes);
	close(fd);
	return err;
}

static int bench_gpu(hw_bench *h)
{
	static const char *const dtypes[] = { "bf16", "tf32", "fp32" };
	static const int quick_n[] = { 1024, 4096 }, full_n[] = { 1024, 2048, 4096, 8192 };
	hw_gpu_info g[HW_GPU_MAX];
	char why[200] = "";
	int ngpu = hw_gpu_probe(g, HW_GPU_MAX, why, sizeof why), err = 0;
	int nn = h->quick ? 2 : 4;
	if (ngpu <= 0) {
		return hw_bench_skip(h, "gpu", "%s", why[0] ? why : "no GPU");
	}
	for (int d = 0; d < 3 && !err; d++)
		for (int i = 0; i < nn && !err; i++) {
			int n = h->quick ? quick_n[i] : full_n[i];
			double fps;
			char name[32];
			snprintf(name, sizeof name, "gemm_%s", dtypes[d]);
			err = hw_gpu_gemm(0, dtypes[d], n, h->quick ? 5 : 20, &fps);
			if (!err)
				err = hw_bench_emit(h, &(rep_benchmark){ .name = name, .transport = "cuda",
					.memory = "cuda", .device = g[0].name,
					.bytes = (uint64_t)n * (uint64_t)n * (d ? 4u : 2u), .ranks = 1,
					.iters = h->quick ? 5 : 20, .value = fps, .unit = "FLOP/s",
					.p50 = NAN, .p99 = NAN, .stddev = NAN });
		}
	if (!err) {
		size_t bytes = h->quick ? (size_t)16 << 20 : (size_t)256 << 20;
		double h2d, d2h;
		err = hw_gpu_copy_bw(0, bytes, h->quick ? 5 : 20, &h2d, &d2h);
		if (!err)
			err = hw_bench_emit(h, &(rep_benchmark){ .name = "h2d_bw", .transport = "cuda",
				.memory = "host", .device = g[0].name, .bytes = bytes, .ranks = 1,
				.iters = h->quick ? 5 : 20, .value = h2d, .unit = "B/s", .p50 = NAN,
				.p99 = NAN, .stddev = NAN });
		if (!err)
			err = hw_bench_emit(h, &(rep_benchmark){ .name = "d2h_bw", .transport = "cuda",
				.memory = "host", .device = g[0].name, .bytes = bytes, .ranks = 1,
				.iters = h->quick ? 5 : 20, .value = d2h, .unit = "B/s", .p50 = NAN,
				.p99 = NAN, .stddev = NAN });
	}
	return err;
}

/* One core's single-precision GEMM through GSL's CBLAS (the reference BLAS
 * GSL ships: a lower bound, not a tuned library), n = 128..1024; one element
 * of C is checked against a direct dot product. */
static int bench_cpu_gemm(hw_bench *h)
{
	static const size_t quick_n[] = { 128, 256 }, full_n[] = { 256, 512, 1024 };
	size_t nn = h->quick ? 2 : 3;
	int err = 0;
	for (size_t k = 0; k < nn && !err; k++) {
		size_t n = h->quick ? quick_n[k] : full_n[k];
		gsl_matrix_float *a = gsl_matrix_float_alloc(n, n), *b = gsl_matrix_float_alloc(n, n);
		gsl_matrix_float *c = gsl_matrix_float_alloc(n, n);
		double t0, secs, want = 0;
		if (!a || !b || !c)
			err = hw_fail(SIM_ENOMEM, "cpu GEMM: cannot allocate 3 x %zu^2 floats", n);
		for (size_t i = 0; !err && i < n * n; i++) {
			a->data[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
			b->data[i] = (float)((i * 11) % 17) / 17.0f - 0.5f;
		}
		t0 = hw_now_s();
		if (!err)
			gsl_blas_sgemm(CblasNoTrans, CblasNoTrans, 1.0f, a, b, 0.0f, c);
		secs = hw_now_s() - t0;
		for (size_t i = 0; !err && i < n; i++)
			want += (double)gsl_matrix_float_get(a, n / 2, i) * gsl_matrix_float_get(b, i, n / 3);
		if (!err && fabs(gsl_matrix_float_get(c, n / 2, n / 3) - want) > 1e-3 * (1 + fabs(want)))
			err = hw_fail(SIM_EVERIFY, "cpu GEMM n=%zu: C[%zu][%zu] is %g, expected %g", n,
				      n / 2, n / 3, (double)gsl_matrix_float_get(c, n / 2, n / 3), want);
		if (!err)
			err = hw_bench_emit(h, &(rep_benchmark){ .name = "cpu_gemm_fp32",
				.transport = "cpu", .memory = "host", .bytes = n * n * 4, .ranks = 1,
				.iters = 1, .value = 2.0 * (double)n * (double)n * (double)n / secs,
				.unit = "FLOP/s", .p50 = NAN, .p99 = NAN, .stddev = NAN });
		gsl_matrix_float_free(a);
		gsl_matrix_float_free(b);
		gsl_matrix_float_free(c);
	}
	return err;
}

int hw_bench_local(hw_bench *h)
{
	int err = 0;
	if (h->rank == 0) {
		err = bench_memcpy(h);
		if (!err)
			err = bench_cpu_gemm(h);
		if (!err)
			err = bench_aes(h);
		if (!err)
			err = bench_storage(h);
		if (!err)
			err = bench_gpu(h);
	}
	/* Every rank learns whether rank 0 failed, so none waits for a peer that quit. */
	hw_comm_barrier();
	return hw_comm_all(err == 0) ? 0 : SIM_EPEER; /* all agree: none is left waiting */
}
