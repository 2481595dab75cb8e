/* dpusim-hw replay of a training scenario: each MPI rank stands for one GPU
 * of data-parallel replica `rank` (stage 0, tensor-parallel rank 0) and runs,
 * every iteration,
 *   1. its share of the batch read from --data DIR (prefetched one iteration
 *      ahead by a loader thread; the wait for it is the data stall),
 *   2. the GEMM FLOPs the simulator gives that GPU per iteration
 *      (wl_gpu_iter_flops), times --scale, every product checked,
 *   3. the gradient all-reduce of that GPU's parameters (wl_stage_params / tp
 *      x the simulator's bytes per gradient), times --scale, over the chosen
 *      transport, the sums checked,
 * and writes a source "hw" report with the keys `dpusim run` writes for a
 * training variant. What it does not run (tensor-parallel all-reduces,
 * overlap of the all-reduce with backward, the optimizer, decode) is listed
 * in the report's notes. */
#define _GNU_SOURCE /* O_DIRECT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_sort.h>

#include "backend-hw/allreduce.h"
#include "backend-hw/bench.h"
#include "backend-hw/comm.h"
#include "backend-hw/gemm.h"
#include "backend-hw/log.h"
#include "backend-hw/replay.h"
#include "backend-hw/xport.h"
#include "models/train.h"
#include "models/workload.h"

#define IO_ALIGN ((size_t)4096)
#define IO_CHUNK ((size_t)1 << 20)
#define MAX_NOTES 8

/* ---- the data loader --------------------------------------------------- */

typedef struct data_file {
	char *path;
	int fd;
	uint64_t size;
} data_file;

typedef struct loader {
	data_file *f;
	size_t nf;
	uint64_t total;          /* bytes of every file together */
	uint64_t batch_bytes;    /* this rank's share of one iteration's batch */
	int rank, ranks;
	bool direct;             /* O_DIRECT taken by the filesystem */
	char mode[160];          /* how files are read, for the report */
	char *buf;               /* IO_CHUNK + IO_ALIGN, aligned */
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	long want, done;         /* batch asked for / last batch read; -1: none */
	bool quit;
	int err;
	uint64_t bytes_read;
} loader;

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const data_file *)a)->path, ((const data_file *)b)->path);
}

/* The regular, non-empty files directly in dir, sorted by name. */
static int loader_list(loader *l, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t cap = 0;
	if (!d)
		return hw_replay_usage("--data '%s': cannot open the directory: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;
		data_file *nf;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size == 0)
			continue;
		if (l->nf == cap) {
			cap = cap ? 2 * cap : 16;
			if (!(nf = realloc(l->f, cap * sizeof *nf)))
				return closedir(d), hw_fail(2, "out of memory");
			l->f = nf;
		}
		l->f[l->nf] = (data_file){ .path = strdup(path), .fd = -1, .size = (uint64_t)st.st_size };
		if (!l->f[l->nf].path)
			return closedir(d), hw_fail(2, "out of memory");
		l->total += l->f[l->nf++].size;
	}
	closedir(d);
	if (!l->nf)
		return hw_replay_usage("--data '%s': no regular non-empty file in the directory", dir);
	qsort(l->f, l->nf, sizeof *l->f, cmp_file);
	return 0;
}

/* Opens every file with O_DIRECT, or, when the filesystem refuses it
 * (EINVAL: tmpfs and others), every file without, saying so in mode. */
static int loader_open(loader *l)
{
	int why = 0;
	l->direct = true;
	for (size_t i = 0; i < l->nf; i++) {
		l->f[i].fd = open(l->f[i].path, O_RDONLY | O_CLOEXEC | (l->direct ? O_DIRECT : 0));
		if (l->f[i].fd < 0 && l->direct && errno == EINVAL) {
			why = errno;
			l->direct = false;
			for (size_t j = 0; j < i; j++)
				close(l->f[j].fd), l->f[j].fd = -1;
			i = (size_t)-1;  /* again from the first, without O_DIRECT */
			continue;
		}
		if (l->f[i].fd < 0)
			return hw_fail(2, "--data: cannot open '%s': %s", l->f[i].path, strerror(errno));
	}
	if (l->direct)
		snprintf(l->mode, sizeof l->mode, "O_DIRECT pread, %zu KiB requests",
			 IO_CHUNK >> 10);
	else
		snprintf(l->mode, sizeof l->mode, "plain pread through the page cache (the "
			 "filesystem refuses O_DIRECT: %s)", strerror(why));
	return 0;
}

/* Reads [off, off + len) of file f: with O_DIRECT, the aligned blocks
 * covering it (clipped at the file's end). */
static int read_range(loader *l, const data_file *f, uint64_t off, uint64_t len)
{
	uint64_t lo = l->direct ? off / IO_ALIGN * IO_ALIGN : off, hi = off + len;
	uint64_t end = l->direct ? (hi + IO_ALIGN - 1) / IO_ALIGN * IO_ALIGN : hi;
	while (lo < end) {
		size_t n = end - lo < IO_CHUNK ? (size_t)(end - lo) : IO_CHUNK;
		ssize_t got = pread(f->fd, l->buf, n, (off_t)lo);
		if (got < 0)
			return hw_fail(SIM_EIO, "--data: reading '%s' at %llu: %s", f->path,
				       (unsigned long long)lo, strerror(errno));
		if (got == 0 || (lo + (uint64_t)got < hi && (size_t)got < n))
			return hw_fail(SIM_EIO, "--data: '%s' ended at %llu, before %llu (did it "
				       "shrink?)", f->path, (unsigned long long)(lo + (uint64_t)got),
				       (unsigned long long)hi);
		l->bytes_read += (uint64_t)got;
		lo += (uint64_t)got;
		if (lo >= f->size)
			break;
	}
	return 0;
}

/* Batch b of this rank: the bytes from ((b * ranks + rank) * batch_bytes)
 * modulo the files' total, through the files in name order, wrapping. */
static int read_batch(loader *l, long b)
{
	unsigned __int128 idx = (uint64_t)b * (uint64_t)l->ranks + (uint64_t)l->rank;
	uint64_t pos = (uint64_t)(idx * l->batch_bytes % l->total), left = l->batch_bytes;
	size_t i = 0;
	int err = 0;
	while (pos >= l->f[i].size)
		pos -= l->f[i++].size;
	while (left && !err) {
		uint64_t n = l->f[i].size - pos < left ? l->f[i].size - pos : left;
		err = read_range(l, &l->f[i], pos, n);
		left -= n;
		pos = 0;
		i = (i + 1) % l->nf;
	}
	return err;
}

static void *loader_main(void *arg)
{
	loader *l = arg;
	pthread_mutex_lock(&l->mu);
	for (;;) {
		long b;
		int err;
		while (!l->quit && l->want == l->done)
			pthread_cond_wait(&l->cv, &l->mu);
		if (l->quit)
			break;
		b = l->want;
		pthread_mutex_unlock(&l->mu);
		err = read_batch(l, b);
		pthread_mutex_lock(&l->mu);
		l->done = b;
		if (err && !l->err)
			l->err = err;
		pthread_cond_broadcast(&l->cv);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* Asks the thread for batch b (the previous one must be waited for). */
static void loader_start(loader *l, long b)
{
	pthread_mutex_lock(&l->mu);
	l->want = b;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

/* Back to "nothing read" for another pass from batch 0 (the thread idle:
 * the last batch asked for was waited for); else a one-iteration pass
 * would find batch 0 already done and measure no read. */
static void loader_rewind(loader *l)
{
	pthread_mutex_lock(&l->mu);
	l->want = l->done = -1;
	pthread_mutex_unlock(&l->mu);
}

/* Waits until the batch asked for is read. 0 or the read's error. */
static int loader_wait(loader *l)
{
	int err;
	pthread_mutex_lock(&l->mu);
	while (l->done != l->want && !l->err)
		pthread_cond_wait(&l->cv, &l->mu);
	err = l->err;
	pthread_mutex_unlock(&l->mu);
	return err;
}

static void loader_free(loader *l)
{
	if (l->started) {
		pthread_mutex_lock(&l->mu);
		l->quit = true;
		pthread_cond_broadcast(&l->cv);
		pthread_mutex_unlock(&l->mu);
		pthread_join(l->thread, NULL);
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cv);
	}
	for (size_t i = 0; i < l->nf; i++) {
		if (l->f[i].fd >= 0)
			close(l->f[i].fd);
		free(l->f[i].path);
	}
	free(l->f);
	free(l->buf);
}

static int loader_init(loader *l, const char *dir, uint64_t batch_bytes, int rank, int ranks)
{
	int err;
	*l = (loader){ .batch_bytes = batch_bytes, .rank = rank, .ranks = ranks, .want = -1,
		       .done = -1 };
	if ((err = loader_list(l, dir)) || (err = loader_open(l)))
		return err;
	if (posix_memalign((void **)&l->buf, IO_ALIGN, IO_CHUNK + IO_ALIGN))
		return hw_fail(2, "out of memory");
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	if (pthread_create(&l->thread, NULL, loader_main, l)) {
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cv);
		return hw_fail(2, "cannot start the loader thread");
	}
	l->started = true;
	return 0;
}

/* ---- the plan: what one rank runs per iteration ------------------------ */

typedef struct plan {
	const scn_variant *v;         /* the first variant this run stands for */
	train_config cfg;             /* the simulator's configuration of it */
	double flops_full, flops;     /* per GPU per iteration; times scale */
	double grad_full_bytes;       /* per GPU per iteration */
	size_t grad_count;            /* floats all-reduced (grad bytes x scale / 4) */
	double sample_bytes;
	const char *sample_src;
	uint64_t batch_bytes;         /* this rank's share of a batch */
	uint32_t samples_per_rank;
	size_t gemm_n;
	int fault_rank;
	char fault[16];
	diag *notes;
} plan;

/* Megatron-LM's indexed dataset stores token ids as uint16 when the
 * vocabulary has fewer than 65,500 entries, else int32
 * (megatron/core/datasets/indexed_dataset.py, DType.optimal_dtype). */
static double token_bytes(uint32_t vocab)
{
	return vocab < 65500 ? 2 : 4;
}

/* Why this run does not replay variant v, or NULL when it does: the
 * transport's network, storage through the host when data is read, crypto
 * none or host (host: a second pass with the gradients sealed with
 * AES-256-GCM), no virtual switch. */
static const char *why_not(const scn_variant *v, const replay_opts *o)
{
	if (v->network != hw_replay_network(o))
		return "its network is not the one this run's --transport and --mem stand for";
	if (o->data && v->storage != SCN_STOR_HOST)
		return "--data reads through the host; its storage is not host";
	if (v->crypto != SCN_CRYPTO_NONE && v->crypto != SCN_CRYPTO_HOST)
		return "its crypto needs an inline IPsec/TLS engine (DPU or NIC), which dpusim-hw "
		       "does not drive";
	if (v->vswitch != SCN_VSW_NONE)
		return "a virtual switch is not replayed";
	return NULL;
}

static bool stands_for(const scn_variant *v, const replay_opts *o)
{
	return !why_not(v, o);
}

static int parse_fault(plan *p)
{
	const char *f = getenv("DPUSIM_HW_FAULT");
	p->fault_rank = -1;
	if (!f || !*f)
		return 0;
	if (sscanf(f, "%15[a-z]:%d", p->fault, &p->fault_rank) != 2 || p->fault_rank < 0 ||
	    (strcmp(p->fault, "exit") && strcmp(p->fault, "corrupt")))
		return hw_replay_usage("DPUSIM_HW_FAULT='%s': the training replay takes exit|corrupt:RANK",
				       f);
	return 0;
}

/* Every check of the scenario against this run, then the sizes. Same
 * answer on every rank (same inputs); messages from rank 0 only. */
static int plan_of(const scn_scenario *s, const replay_opts *o, int ranks, plan *p)
{
	const scn_training *t = &s->jobs[0].wl.train;
	diag *d = diag_new();
	int err = 0;
	p->notes = diag_new();
	if (!d || !p->notes)
		return diag_free(d), hw_fail(2, "out of memory");
	for (size_t v = 0; v < s->nvariants && !p->v; v++)
		if (stands_for(&s->variants[v], o))
			p->v = &s->variants[v];
	if (t->pp != 1)
		err = hw_replay_usage("%s: pipeline parallelism (pp %d) is not replayed on hardware "
				      "(the stages' activation sends are not implemented); replay a "
				      "scenario with pp: 1", o->where, t->pp);
	else if (t->dp != ranks)
		err = hw_replay_usage("%s: the workload has dp %d data-parallel replicas, one rank "
				      "each; run it with mpirun -np %d (this run has %d)", o->where,
				      t->dp, t->dp, ranks);
	else if (!p->v)
		err = hw_replay_usage("%s: no variant has network '%s'%s, crypto none or host and "
				      "vswitch none, which --transport %s --mem %s stands for", o->where,
				      scn_network_name(hw_replay_network(o)),
				      o->data ? ", storage host (--data reads through the host)" : "",
				      o->transport, o->mem);
	else if (t->data.present && !o->data)
		err = hw_replay_usage("%s: the workload reads data (workload.data); give --data DIR, "
				      "a directory of files to read its samples from", o->where);
	else if (train_config_of(s, &s->jobs[0], p->v, s->seed, &p->cfg, d, p->notes)) {
		if (hw_comm_rank() == 0)
			diag_print(d, stderr);
		err = 2;
	}
	diag_free(d);
	if (err || (err = parse_fault(p)))
		return err;
	p->flops_full = wl_gpu_iter_flops(&p->cfg.model, p->cfg.micro_batch, p->cfg.microbatches,
					  p->cfg.tp, p->cfg.pp, 0, p->cfg.recompute);
	p->flops = p->flops_full * o->scale;
	p->grad_full_bytes = wl_stage_params(&p->cfg.model, p->cfg.pp, 0) / p->cfg.tp *
			     p->cfg.grad_bytes_per_param;
	p->grad_count = (size_t)nearbyint(p->grad_full_bytes * o->scale / sizeof(float));
	if (p->grad_count < (size_t)ranks)
		p->grad_count = (size_t)ranks;
	p->samples_per_rank = p->cfg.micro_batch * p->cfg.microbatches;
	if (p->cfg.data) {
		p->sample_bytes = p->cfg.sample_bytes;
		p->sample_src = "workload.data.sample_bytes";
	} else if (p->cfg.model.kind == WL_VISION) {
		p->sample_bytes = p->cfg.model.vis.sample_bytes;
		p->sample_src = "the model preset's sample size";
	} else {
		p->sample_bytes = p->cfg.model.tf.seq * token_bytes(p->cfg.model.tf.vocab);
		p->sample_src = "seq x token id size (Megatron-LM indexed dataset: uint16 below "
				"65,500 tokens of vocabulary, else int32)";
	}
	p->batch_bytes = (uint64_t)nearbyint(p->samples_per_rank * p->sample_bytes);
	p->gemm_n = o->gemm_n ? o->gemm_n : !strcmp(o->compute, "cuda") ? 4096 : 256;
	if (o->data && p->batch_bytes == 0)
		err = hw_replay_usage("%s: a sample of 0 bytes: nothing to read from --data",
				      o->where);
	return err;
}

int hw_replay_train_check(const scn_scenario *s, const replay_opts *o, int ranks)
{
	plan p = { 0 };
	int err = plan_of(s, o, ranks, &p);
	diag_free(p.notes);
	return err ? 2 : 0;
}

/* ---- the iterations ---------------------------------------------------- */

enum { P_DATA, P_COMPUTE, P_COMM, P_OTHER, NPARTS };

typedef struct measured {
	double *iter_s;               /* measured iterations, critical rank */
	uint32_t n;
	double part[NPARTS];          /* sums over measured iterations, critical rank */
	double flops_done, compute_s; /* this rank's, measured iterations */
	double comm_s;                /* max over ranks of the all-reduce, summed */
	double last_s;                /* the last iteration, warm-up included */
} measured;

/* One iteration on this rank; times in t[]. Returns 0, SIM_EVERIFY (this
 * rank's GEMM or all-reduce was wrong: the ranks go on together and stop
 * after the iteration), or a transport error. */
static int iterate(hw_xport *x, hw_gemm *g, loader *l, const plan *p, long i, long total,
		   float *grad, float *tmp, double t[NPARTS], double *done)
{
	double t0, t1;
	int err = 0, bad = 0;
	size_t at;
	float want;
	hw_allreduce_fill(grad, p->grad_count, x->rank);
	hw_comm_barrier();
	t0 = hw_now_s();
	if (l) {
		err = loader_wait(l);
		if (!err && i + 1 < total)
			loader_start(l, i + 1);
	}
	t[P_DATA] = hw_now_s() - t0;
	if (!err && (err = hw_gemm_run(g, p->flops, done, &t[P_COMPUTE])) == SIM_EVERIFY)
		bad = 1, err = 0;  /* the product's check is not compute: it lands in `other` */
	if (err)
		return err;
	if (x->rank == p->fault_rank && !strcmp(p->fault, "exit") && i == 1) {
		fprintf(stderr, "dpusim-hw: rank %d: fault hook: exiting early on purpose\n", x->rank);
		_exit(3);
	}
	t1 = hw_now_s();
	err = hw_allreduce_ring(x, grad, p->grad_count, tmp,
				x->rank == p->fault_rank && !strcmp(p->fault, "corrupt"));
	t[P_COMM] = hw_now_s() - t1;
	t[P_OTHER] = hw_now_s() - t0 - t[P_DATA] - t[P_COMPUTE] - t[P_COMM];
	if (err)
		return err;
	at = hw_allreduce_check(grad, p->grad_count, x->size, &want);
	if (at != p->grad_count) {
		hw_error("gradient all-reduce of %zu bytes gave a wrong sum: element %zu is %g, "
			 "expected %g", p->grad_count * sizeof(float), at, (double)grad[at],
			 (double)want);
		bad = 1;
	}
	return bad ? SIM_EVERIFY : 0;
}

/* The iteration's time is the slowest rank's; its parts are that rank's. */
static void account(measured *m, const double t[NPARTS], bool keep)
{
	double total = t[P_DATA] + t[P_COMPUTE] + t[P_COMM] + t[P_OTHER];
	double worst = hw_comm_max(total);
	double crit = hw_comm_max(total == worst ? (double)hw_comm_rank() : -1.0);
	double comm = hw_comm_max(t[P_COMM]);
	m->last_s = worst;
	for (int k = 0; k < NPARTS; k++) {
		double v = hw_comm_sum(hw_comm_rank() == (int)crit ? t[k] : 0.0);
		if (keep)
			m->part[k] += v;
	}
	if (keep) {
		m->iter_s[m->n++] = worst;
		m->comm_s += comm;
	}
}

/* ", data wait 0.001 s" with a loader, "" without, into buf. */
static const char *data_wait(const loader *l, double s, char *buf, size_t n)
{
	if (!l)
		return "";
	snprintf(buf, n, ", data wait %.3f s", s);
	return buf;
}

static int run_iterations(hw_xport *x, hw_gemm *g, loader *l, const plan *p, measured *m)
{
	long warm = p->cfg.warmup, total = warm + p->cfg.iterations;
	size_t tmpn = hw_allreduce_tmp_count(p->grad_count, x->size);
	float *grad = malloc(p->grad_count * sizeof *grad), *tmp = malloc(tmpn * sizeof *tmp);
	int err = grad && tmp ? 0 : hw_fail(SIM_ENOMEM, "cannot allocate the gradients");
	if (l && !err)
		loader_start(l, 0);
	for (long i = 0; i < total && !err; i++) {
		double t[NPARTS] = { 0 }, done = 0;
		err = iterate(x, g, l, p, i, total, grad, tmp, t, &done);
		if (err && err != SIM_EVERIFY)
			break;  /* a transport or read failure: the caller ends every rank */
		if (!hw_comm_all(err == 0)) {
			err = SIM_EVERIFY;
			break;
		}
		account(m, t, i >= warm);
		if (i >= warm)
			m->flops_done += done, m->compute_s += t[P_COMPUTE];
		char wait[48];
		if (x->rank == 0)
			printf("  iteration %ld%s: %.3f s (rank 0: compute %.3f s, all-reduce %.3f s%s), "
			       "GEMMs and gradient sums verified\n", i + 1, i < warm ? " (warm-up)" : "",
			       m->last_s, t[P_COMPUTE], t[P_COMM],
			       data_wait(l, t[P_DATA], wait, sizeof wait));
	}
	free(grad);
	free(tmp);
	return err;
}

/* ---- the report -------------------------------------------------------- */

static int set_info_f(rep_report *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int set_info_f(rep_report *r, const char *key, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return rep_set_info(r, key, buf);
}

static int put_variant(rep_variant *rv, const scn_scenario *s, const plan *p,
		       const measured *m, const loader *l)
{
	const scn_training *t = &s->jobs[0].wl.train;
	double *sorted = malloc(m->n * sizeof *sorted), mean = 0, parts = 0;
	static const char *const names[NPARTS] = { "data_stall", "compute", "exposed_comm", "other" };
	int err = sorted ? 0 : SIM_ENOMEM;
	for (uint32_t i = 0; i < m->n && !err; i++)
		sorted[i] = m->iter_s[i], mean += m->iter_s[i] / m->n;
	if (!err) {
		gsl_sort(sorted, 1, m->n);
		err = rep_variant_set_stat(rv, "iteration_s", mean, hw_quantile_sorted(sorted, m->n, 0.5),
					   hw_quantile_sorted(sorted, m->n, 0.99), NAN);
	}
	free(sorted);
	if (!err) {
		/* one rank's FLOPs as run (x scale): no MFU, as the scaled
		 * GEMMs are not the model's */
		wl_iter_run run = { .iter_s = mean, .batch = t->global_batch,
				    .flops_run = m->flops_done / m->n, .gpus = 1,
				    .peak_flops = NAN };
		wl_rates r = wl_rates_of(&p->cfg.model, &run);
		err = rep_variant_set_rates(rv, &r);
	}
	if (!err)
		err = rep_variant_set_metric(rv, "gpu_util", fmin(1, m->part[P_COMPUTE] / m->n / mean));
	/* The critical rank's parts add up to its iterations: scaled to the
	 * mean exactly, as dpusim run does with its replications. Without
	 * --data the loader's part (no wait at all) joins `other`. */
	for (int k = 0; k < NPARTS; k++)
		parts += m->part[k];
	for (int k = 0; k < NPARTS && !err; k++) {
		double v = m->part[k] + (k == P_OTHER && !l ? m->part[P_DATA] : 0);
		if (k != P_DATA || l)
			err = rep_variant_set_breakdown(rv, names[k], parts > 0 ? v / parts * mean : 0);
	}
	if (!err) {
		double bytes = (double)p->grad_count * sizeof(float), ts = m->comm_s / m->n;
		double algbw = bytes / ts / 1e9;
		err = rep_variant_add_collective(rv, &(rep_collective){ .op = "allreduce",
			.algo = "ring", .ranks = (uint32_t)p->cfg.dp, .bytes = (uint64_t)bytes,
			.time_s = ts, .algbw_GBps = algbw,
			.busbw_GBps = algbw * hw_allreduce_bus_factor((int)p->cfg.dp) });
	}
	return err;
}

static int put_info(rep_report *r, const replay_opts *o, const plan *p, const measured *m,
		    const loader *l, const hw_gemm *g, double fps)
{
	const char *v = p->v->name;
	char key[128];
	int err = set_info_f(r, "replay.scale", "%g", o->scale) ||
		  set_info_f(r, "replay.compute", "%s", hw_gemm_describe(g)) ||
		  set_info_f(r, "replay.flops_per_gpu_iteration", "%.6g (the scenario's, "
			     "wl_gpu_iter_flops; %.6g run: x scale, in whole GEMMs)", p->flops_full,
			     m->flops_done / m->n) ||
		  set_info_f(r, "replay.compute_flops_per_s", "%.6g (measured: FLOPs run / GEMM "
			     "time, mean over ranks)", fps) ||
		  set_info_f(r, "replay.gradient_bytes", "%.6g per GPU (the scenario's: stage "
			     "parameters / tp x %g B); %zu all-reduced (x scale, whole floats)",
			     p->grad_full_bytes, p->cfg.grad_bytes_per_param,
			     p->grad_count * sizeof(float)) ||
		  set_info_f(r, "replay.data", "%s", l ? l->mode : "none (no --data)");
	if (!err && l)
		err = set_info_f(r, "replay.data_per_rank_iteration", "%llu bytes: %u samples x "
				 "%.6g B (%s), prefetched one iteration ahead; %llu bytes read in all",
				 (unsigned long long)p->batch_bytes, p->samples_per_rank,
				 p->sample_bytes, p->sample_src, (unsigned long long)l->bytes_read);
	if (!err)
		err = set_info_f(r, "replay.extrapolate", "compute and the gradient all-reduce ran "
				 "at %g of the scenario's size: full-size compute takes about "
				 "flops_per_gpu_iteration / compute_flops_per_s = %.6g s per "
				 "iteration on this compute; data reads are full size", o->scale,
				 p->flops_full / fps);
	if (!err)
		err = set_info_f(r, "replay.not_replayed", "tensor-parallel all-reduces (tp %u: "
				 "NVLink inside a node), pipeline stages, overlap of the gradient "
				 "all-reduce with backward (here it follows compute: exposed_comm "
				 "is all of it), the optimizer step, sample decode",
				 p->cfg.tp);
	for (size_t i = 0; i < diag_count(p->notes) && i < MAX_NOTES && !err; i++) {
		snprintf(key, sizeof key, "%s.note%zu", v, i + 1);
		err = rep_set_info(r, key, diag_msg(p->notes, i));
	}
	return err ? SIM_ENOMEM : 0;
}

/* One variant's entry: the pass its crypto stands for (m[1]: crypto
 * host), or why it was not replayed (info VARIANT.not_replayed). */
static int add_variant(rep_report *r, const scn_scenario *s, const replay_opts *o, const plan *p,
		       const scn_variant *v, const measured m[2], const hw_crypt_cost *cost,
		       const loader *l)
{
	const char *why = why_not(v, o);
	rep_variant *rv;
	int err;
	char key[SCN_NAME_MAX + 32];
	if (why) {
		snprintf(key, sizeof key, "%s.not_replayed", v->name);
		return rep_set_info(r, key, why) ? SIM_ENOMEM : 0;
	}
	if (!(rv = rep_add_variant(r, v->name)))
		return SIM_ENOMEM;
	err = hw_replay_set_offload(rv, v);
	if (!err)
		err = put_variant(rv, s, p, &m[v->crypto == SCN_CRYPTO_HOST], l);
	if (!err && v->crypto == SCN_CRYPTO_HOST)
		err = hw_replay_crypto_info(r, s, v, cost);
	return err;
}

static int report(const scn_scenario *s, const replay_opts *o, const plan *p,
		  const measured m[2], const hw_crypt_cost *cost, const loader *l,
		  const hw_gemm *g)
{
	rep_report *r = NULL;
	/* the FLOP rate of the first pass run */
	const measured *m0 = m[0].n ? &m[0] : &m[1];
	double fps = hw_comm_sum(m0->compute_s > 0 ? m0->flops_done / m0->compute_s : 0) /
		     hw_comm_size();
	int err = 0;
	if (hw_comm_rank() != 0)
		return 0;
	if ((err = hw_replay_report_new(s, o, &r)))
		return err;
	for (size_t v = 0; v < s->nvariants && !err; v++)
		err = add_variant(r, s, o, p, &s->variants[v], m, cost, l);
	if (!err)
		err = put_info(r, o, p, m0, l, g, fps);
	if (!err)
		err = rep_compute_speedup(r);
	if (err)
		err = hw_fail(err, "cannot build the replay report: %s", sim_strerror(err));
	if (!err) {
		printf("compute: %.3g FLOP/s measured per rank (%s); scale %g\n", fps,
		       hw_gemm_describe(g), o->scale);
		err = hw_replay_write(r, o);
	}
	rep_free(r);
	return err;
}

/* ---- the command ------------------------------------------------------- */

static hw_xport *open_transport(const replay_opts *o, const plan *p)
{
	/* room for the tag: the crypto: host pass sends through it too */
	return hw_replay_transport(o, p->grad_count * sizeof(float) + HW_CRYPT_TAG);
}

/* The crypto: host pass: the same iterations with every gradient message
 * sealed by its sender and opened, tag checked, by its receiver. */
static int crypto_pass(hw_xport *x, const scn_scenario *s, hw_gemm *g, loader *l,
		       const plan *p, measured *m, hw_crypt_cost *cost)
{
	unsigned char key[HW_CRYPT_KEY];
	hw_crypt c = { 0 };
	hw_xport *cx = NULL;
	int err = hw_replay_key(s->seed, key);
	if (!err && !(err = hw_crypt_init(&c, key)) &&
	    !(cx = hw_crypt_xport_new(x, &c, p->grad_count * sizeof(float), false)))
		err = hw_fail(SIM_ENOMEM, "out of memory for the AES-256-GCM buffers");
	if (!err && x->rank == 0)
		printf("crypto host: the gradients sealed with AES-256-GCM (OpenSSL EVP) on every "
		       "rank\n");
	if (!err)
		err = run_iterations(cx, g, l, p, m);
	if (!err)
		hw_replay_crypto_cost(&c, cost);
	hw_xport_free(cx);
	hw_crypt_fini(&c);
	return err;
}

/* The passes the variants need: plain (crypto none), crypto host. */
static int run_passes(hw_xport *x, const scn_scenario *s, const replay_opts *o, hw_gemm *g,
		      loader *l, const plan *p, measured m[2], hw_crypt_cost *cost)
{
	bool want[2] = { false, false };
	int err = 0;
	for (size_t v = 0; v < s->nvariants; v++)
		if (stands_for(&s->variants[v], o))
			want[s->variants[v].crypto == SCN_CRYPTO_HOST] = true;
	if (want[0])
		err = run_iterations(x, g, l, p, &m[0]);
	if (!err && want[1] && l && want[0])
		loader_rewind(l);
	if (!err && want[1])
		err = crypto_pass(x, s, g, l, p, &m[1], cost);
	return err;
}

int hw_replay_train(const scn_scenario *s, const replay_opts *o)
{
	plan p = { 0 };
	measured m[2] = { { 0 }, { 0 } };
	hw_crypt_cost cost = { 0 };
	loader ld = { 0 }, *l = NULL;
	hw_gemm *g = NULL;
	hw_xport *x = NULL;
	int err = plan_of(s, o, hw_comm_size(), &p);
	if (!err && o->data) {
		err = loader_init(&ld, o->data, p.batch_bytes, hw_comm_rank(), hw_comm_size());
		l = &ld;
	}
	if (!err && (err = hw_gemm_open(o->compute, p.gemm_n, &g)))
		err = 2;
	if (!err && (!(m[0].iter_s = calloc(p.cfg.iterations, sizeof *m[0].iter_s)) ||
		     !(m[1].iter_s = calloc(p.cfg.iterations, sizeof *m[1].iter_s))))
		err = hw_fail(2, "out of memory");
	if (!hw_comm_all(err == 0)) {
		err = 2;
		goto out;
	}
	x = open_transport(o, &p);
	if (!x) {
		err = 2;
		goto out;
	}
	if (x->rank == 0)
		printf("dpusim-hw replay %s (training, variant %s): %d ranks over %s, %s; per rank "
		       "and iteration %.4g FLOPs (%.3g x scale %g), %zu gradient bytes, %s\n", s->name,
		       p.v->name, x->size, o->transport, hw_gemm_describe(g), p.flops,
		       p.flops_full, o->scale, p.grad_count * sizeof(float),
		       l ? "data from --data" : "no data read");
	err = run_passes(x, s, o, g, l, &p, m, &cost);
	if (err && err != SIM_EVERIFY) {
		hw_error("replay failed (%s); ending every rank", sim_strerror(err));
		hw_comm_abort(2);
	}
	if (!err)
		err = report(s, o, &p, m, &cost, l, g) ? 2 : 0;
	if (!hw_comm_all(err == 0) && !err)
		err = 2;
	err = err == SIM_EVERIFY ? 1 : err ? 2 : 0;
out:
	hw_xport_free(x);
	hw_gemm_close(g);
	if (l)
		loader_free(l);
	free(m[0].iter_s);
	free(m[1].iter_s);
	diag_free(p.notes);
	return err;
}
