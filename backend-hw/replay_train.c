/* dpusim-hw replay of a training scenario: each MPI rank stands for one GPU,
 * tensor-parallel rank 0 of data-parallel replica `rank` (pp 1) or, with R
 * replicas replayed, of stage rank / R of replica rank % R (Megatron's
 * order, models/train.h train_rank: data parallel inside each pipeline
 * stage's block of ranks), and runs, every iteration,
 *   1. on stage 0, its share of the batch read from --data DIR (prefetched
 *      one iteration ahead by a loader thread; the wait for it is the data
 *      stall),
 *   2. the GEMM FLOPs the simulator gives that GPU per iteration
 *      (wl_gpu_iter_flops), times --scale, every product checked; with
 *      pp > 1 pass by pass in 1F1B order, the activations and their
 *      gradients sent between neighbouring stages (backend-hw/pipe.c),
 *   3. the gradient all-reduce of that GPU's parameters (wl_stage_params / tp
 *      x the simulator's bytes per gradient), times --scale, over the chosen
 *      transport among its stage's replicas, the sums checked,
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
#include "backend-hw/msg.h"
#include "backend-hw/pipe.h"
#include "backend-hw/replay.h"
#include "backend-hw/xport.h"
#include "models/train.h"
#include "models/workload.h"
#include "sim/alloc.h"
#include "tools/run.h"

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
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path ||
		    stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size == 0)
			continue; /* (a name cut at the path limit would be another file) */
		if (sim_grow(&l->f, &cap, l->nf + 1, sizeof *l->f, 16))
			return closedir(d), hw_fail(2, "out of memory");
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
	uint32_t replicas;            /* replayed: ranks / pp (dp where ranks allow) */
	uint32_t stage, replica;      /* this rank's: rank = stage x replicas + replica
					 (train_rank's order) */
	double flops_full, flops;     /* this rank's stage, per GPU per iteration; times scale */
	double fwd_flops, bwd_flops;  /* pp > 1: one microbatch's passes, times scale */
	size_t msg_bytes;             /* pp > 1: one activation (or its gradient) per GPU */
	double grad_full_bytes;       /* per GPU per iteration, this rank's stage */
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
 * none or host (host: a second pass with the gradients and activations
 * sealed with AES-256-GCM), no virtual switch. */
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

/* One rank per data-parallel replica (pp 1), or per stage per replica; with
 * pp > 1 fewer whole pipelines (fewer replicas) also run, said in the
 * report. 0 or 2 (said). */
static int check_ranks(const scn_training *t, const replay_opts *o, int ranks)
{
	/* A rank stands for its stage's first GPU: a context-parallel group's
	 * per-layer collectives have no rank to run them. */
	if (t->cp > 1)
		return hw_replay_usage("%s: the workload has cp %d: context parallelism is not "
				       "replayed (dpusim run simulates it)", o->where, t->cp);
	if (t->pp == 1 && t->dp != ranks)
		return hw_replay_usage("%s: the workload has dp %d data-parallel replicas, one rank "
				       "each; run it with mpirun -np %d (this run has %d)", o->where,
				       t->dp, t->dp, ranks);
	if (t->pp > 1 && (ranks % t->pp || ranks / t->pp > t->dp))
		return hw_replay_usage("%s: the workload has pp %d pipeline stages x dp %d replicas: "
				       "run one rank per stage per replica (mpirun -np %d), or whole "
				       "pipelines of fewer replicas, a multiple of %d ranks (this run "
				       "has %d)", o->where, t->pp, t->dp, t->pp * t->dp, t->pp, ranks);
	return 0;
}

/* This rank's sizes, from the simulator's own functions: its stage's GEMM
 * FLOPs (per iteration, and per microbatch's forward and backward pass:
 * a forward is a third of the passes without recompute), the stage
 * boundary each message carries, its stage's gradients. */
static void sizes_of(plan *p, const replay_opts *o, int ranks)
{
	const train_config *c = &p->cfg;
	uint32_t P = c->pp, s;
	double fwd;
	p->replicas = (uint32_t)ranks / P;
	p->stage = s = (uint32_t)hw_comm_rank() / p->replicas;
	p->replica = (uint32_t)hw_comm_rank() % p->replicas;
	p->flops_full = wl_gpu_iter_flops(&c->model, c->micro_batch, c->microbatches, c->tp, P, s,
					  c->recompute);
	p->flops = p->flops_full * o->scale;
	if (P > 1) {
		fwd = wl_gpu_iter_flops(&c->model, c->micro_batch, 1, c->tp, P, s, false) / 3;
		p->fwd_flops = fwd * o->scale;
		p->bwd_flops = (wl_gpu_iter_flops(&c->model, c->micro_batch, 1, c->tp, P, s,
						  c->recompute) - fwd) * o->scale;
		p->msg_bytes = (size_t)nearbyint(wl_stage_boundary_bytes(&c->model.tf,
									 c->micro_batch) / c->tp);
	}
	p->grad_full_bytes = wl_stage_params(&c->model, P, s) / c->tp * c->grad_bytes_per_param;
	p->grad_count = (size_t)nearbyint(p->grad_full_bytes * o->scale / sizeof(float));
	if (p->grad_count < p->replicas)
		p->grad_count = p->replicas;
}

static void sample_of(plan *p)
{
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
	if ((err = check_ranks(t, o, ranks)))
		;
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
	sizes_of(p, o, ranks);
	sample_of(p);
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

enum { P_DATA, P_COMPUTE, P_COMM, P_BUBBLE, P_OTHER, NPARTS };

/* The transports an iteration uses. */
typedef struct lanes {
	hw_xport *pipe;   /* pp > 1: the stages' ring over every rank; else NULL */
	hw_xport *dp;     /* this stage's replicas' ring; NULL with one replica */
	hw_pipe *pp;      /* pp > 1: this stage's sizes and message buffers */
} lanes;

/* One iteration on this rank. */
typedef struct iter_t {
	double part[NPARTS];
	double ar_s, done;            /* the gradient all-reduce; FLOPs run */
	hw_pipe_count pc;             /* pp > 1: this iteration's sends and receives */
	char order[HW_MSG_MAX];       /* pp > 1: its passes in the order run */
} iter_t;

typedef struct measured {
	double *iter_s;               /* measured iterations, critical rank */
	uint32_t n;
	double part[NPARTS];          /* sums over measured iterations, critical rank */
	double flops_done, compute_s; /* this rank's, measured iterations */
	double comm_s;                /* max over stage 0's ranks of the all-reduce, summed */
	double last_s;                /* the last iteration, warm-up included */
	hw_pipe_count pc;             /* this rank's, measured iterations */
	char order[HW_MSG_MAX];       /* the last iteration's passes, this rank's */
	double half_rtt_s;            /* this rank's pipeline message alone (hw_pipe_pingpong) */
} measured;

/* The GEMMs of the iteration: the stage's 1F1B passes with their sends and
 * receives (pp > 1), else all at once. */
static int compute(const lanes *k, hw_gemm *g, const plan *p, iter_t *it)
{
	int err;
	if (!k->pp)
		return hw_gemm_run(g, p->flops, &it->done, &it->part[P_COMPUTE]);
	err = hw_pipe_iteration(k->pp, k->pipe, g, &it->pc, it->order, sizeof it->order);
	it->part[P_COMPUTE] = it->pc.compute_s;
	it->done = it->pc.flops_done;
	return err;
}

static int all_reduce(const lanes *k, const plan *p, float *grad, float *tmp)
{
	size_t at;
	float want;
	/* with pp > 1 the fault hook corrupts the pipeline's messages instead */
	bool corrupt = k->dp->id == p->fault_rank && !strcmp(p->fault, "corrupt") && !k->pp;
	int err = hw_allreduce_ring(k->dp, grad, p->grad_count, tmp, corrupt);
	if (err)
		return err;
	at = hw_allreduce_check(grad, p->grad_count, k->dp->size, &want);
	if (at == p->grad_count)
		return 0;
	hw_error("gradient all-reduce of %zu bytes gave a wrong sum: element %zu is %g, "
		 "expected %g", p->grad_count * sizeof(float), at, (double)grad[at], (double)want);
	return SIM_EVERIFY;
}

/* One iteration on this rank; times in it. Returns 0, SIM_EVERIFY (this
 * rank's GEMM, pipeline message or all-reduce was wrong: the ranks go on
 * together and stop after the iteration), or a transport error. */
static int iterate(const lanes *k, hw_gemm *g, loader *l, const plan *p, long i, long total,
		   float *grad, float *tmp, iter_t *it)
{
	double t0, t1;
	int err = 0, bad = 0;
	if (k->dp)
		hw_allreduce_fill(grad, p->grad_count, k->dp->rank);
	hw_comm_barrier();
	t0 = hw_now_s();
	if (l) {
		err = loader_wait(l);
		if (!err && i + 1 < total)
			loader_start(l, i + 1);
	}
	it->part[P_DATA] = hw_now_s() - t0;
	if (!err && (err = compute(k, g, p, it)) == SIM_EVERIFY)
		bad = 1, err = 0;  /* the product's check is not compute: it lands in `other` */
	if (err)
		return err;
	if (hw_comm_rank() == p->fault_rank && !strcmp(p->fault, "exit") && i == 1) {
		fprintf(stderr, "dpusim-hw: rank %d: fault hook: exiting early on purpose\n",
			hw_comm_rank());
		_exit(3);
	}
	t1 = hw_now_s();
	if (k->dp && (err = all_reduce(k, p, grad, tmp)) == SIM_EVERIFY)
		bad = 1, err = 0;
	it->ar_s = hw_now_s() - t1;
	/* pipeline waits: the transfer share is exposed_comm, the wait for
	 * the neighbouring stage to send the bubble (hw_pipe_iteration) */
	it->part[P_COMM] = it->ar_s + it->pc.p2p_s - it->pc.bubble_s;
	it->part[P_BUBBLE] = it->pc.bubble_s;
	it->part[P_OTHER] = hw_now_s() - t0 - it->part[P_DATA] - it->part[P_COMPUTE] -
			    it->part[P_COMM] - it->part[P_BUBBLE];
	if (err)
		return err;
	return bad ? SIM_EVERIFY : 0;
}

static void add_count(hw_pipe_count *to, const hw_pipe_count *c)
{
	to->fwd_sent += c->fwd_sent, to->bwd_sent += c->bwd_sent;
	to->fwd_recv += c->fwd_recv, to->bwd_recv += c->bwd_recv;
	to->bad += c->bad, to->p2p_s += c->p2p_s, to->bubble_s += c->bubble_s;
	to->compute_s += c->compute_s, to->flops_done += c->flops_done;
}

/* The iteration's time is the slowest rank's; its parts are that rank's.
 * The all-reduce's time is that of stage 0's replicas, whose gradients the
 * simulator's collective row stands for. */
static void account(measured *m, const plan *p, const iter_t *it, bool keep)
{
	double total = it->part[P_DATA] + it->part[P_COMPUTE] + it->part[P_COMM] +
		       it->part[P_OTHER];
	double worst = hw_comm_max(total);
	double crit = hw_comm_max(total == worst ? (double)hw_comm_rank() : -1.0);
	double comm = hw_comm_max(p->stage == 0 ? it->ar_s : 0.0);
	m->last_s = worst;
	for (int k = 0; k < NPARTS; k++) {
		double v = hw_comm_sum(hw_comm_rank() == (int)crit ? it->part[k] : 0.0);
		if (keep)
			m->part[k] += v;
	}
	if (keep) {
		m->iter_s[m->n++] = worst;
		m->comm_s += comm;
		m->flops_done += it->done, m->compute_s += it->part[P_COMPUTE];
		add_count(&m->pc, &it->pc);
		memcpy(m->order, it->order, sizeof m->order);
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

static void say_iteration(const lanes *k, const loader *l, const measured *m, const iter_t *it,
			  long i, long warm)
{
	char wait[48], pipe[48] = "", ar[48] = "no all-reduce: one replica";
	if (hw_comm_rank() != 0)
		return;
	if (k->pp)
		snprintf(pipe, sizeof pipe, ", pipeline sends %.3f s", it->pc.p2p_s);
	if (k->dp)
		snprintf(ar, sizeof ar, "all-reduce %.3f s", it->ar_s);
	printf("  iteration %ld%s: %.3f s (rank 0: compute %.3f s%s, %s%s), GEMMs%s%s verified\n",
	       i + 1, i < warm ? " (warm-up)" : "", m->last_s, it->part[P_COMPUTE], pipe, ar,
	       data_wait(l, it->part[P_DATA], wait, sizeof wait),
	       k->pp ? (k->dp ? ", pipeline messages" : " and pipeline messages") : "",
	       k->dp ? " and gradient sums" : "");
}

static int run_iterations(const lanes *k, hw_gemm *g, loader *l, const plan *p, measured *m)
{
	long warm = p->cfg.warmup, total = warm + p->cfg.iterations;
	size_t tmpn = hw_allreduce_tmp_count(p->grad_count, k->dp ? k->dp->size : 1);
	float *grad = malloc(p->grad_count * sizeof *grad), *tmp = malloc(tmpn * sizeof *tmp);
	int err = grad && tmp ? 0 : hw_fail(SIM_ENOMEM, "cannot allocate the gradients");
	/* one message alone first: each pipeline wait's transfer share */
	if (!err && k->pp && !(err = hw_pipe_pingpong(k->pp, k->pipe, 5, &m->half_rtt_s)))
		k->pp->alone_s = hw_comm_max(m->half_rtt_s);
	if (l && !err)
		loader_start(l, 0);
	for (long i = 0; i < total && !err; i++) {
		iter_t it = { 0 };
		err = iterate(k, g, l, p, i, total, grad, tmp, &it);
		if (err && err != SIM_EVERIFY)
			break;  /* a transport or read failure: the caller ends every rank */
		if (!hw_comm_all(err == 0)) {
			err = SIM_EVERIFY;
			break;
		}
		account(m, p, &it, i >= warm);
		say_iteration(k, l, m, &it, i, warm);
	}
	free(grad);
	free(tmp);
	return err;
}

/* ---- the report -------------------------------------------------------- */

/* What the ranks did, gathered (a collective call) for rank 0's report. */
typedef struct gathered {
	double fps;                   /* FLOP/s of the GEMMs, mean over ranks */
	double flops_done;            /* FLOPs run per rank, mean over ranks */
	double half_rtt_s[2];         /* per pass: the slowest stage pair's message */
	hw_pipe_count *stage;         /* pp > 1: per stage, summed over replicas (first pass) */
	char *order;                  /* pp > 1: every rank's order [ranks][HW_MSG_MAX] */
	const hw_store_job *sj;       /* the storage replay: what it ran */
	hw_store_sum ss;              /* and what it measured */
} gathered;

static int order_check(const char *slot, size_t cap)
{
	size_t n = strnlen(slot, cap);
	if (n == cap)
		return SIM_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (slot[i] < ' ' || slot[i] > '~')
			return SIM_EINVAL;
	return 0;
}

static int gather(const plan *p, const measured m[2], const hw_store_job *sj,
		  const hw_store_res *sr, gathered *gt)
{
	const measured *m0 = m[0].n ? &m[0] : &m[1];
	int ranks = hw_comm_size();
	uint32_t P = p->cfg.pp;
	gt->fps = hw_comm_sum(m0->compute_s > 0 ? m0->flops_done / m0->compute_s : 0) / ranks;
	gt->flops_done = hw_comm_sum(m0->flops_done) / ranks;
	for (int k = 0; k < 2; k++)
		gt->half_rtt_s[k] = hw_comm_max(m[k].half_rtt_s);
	gt->sj = sj;
	hw_replay_store_sum(sj, sr, &gt->ss);
	if (P == 1)
		return 0;
	gt->stage = calloc(P, sizeof *gt->stage);
	gt->order = malloc((size_t)ranks * HW_MSG_MAX);
	if (!gt->stage || !gt->order)  /* the same on every rank but for memory: end them all */
		return hw_fail(SIM_ENOMEM, "out of memory");
	for (uint32_t s = 0; s < P; s++) {
		const hw_pipe_count *c = &m0->pc;
		bool me = p->stage == s;
		gt->stage[s].fwd_sent = (uint64_t)hw_comm_sum(me ? (double)c->fwd_sent : 0);
		gt->stage[s].bwd_sent = (uint64_t)hw_comm_sum(me ? (double)c->bwd_sent : 0);
		gt->stage[s].fwd_recv = (uint64_t)hw_comm_sum(me ? (double)c->fwd_recv : 0);
		gt->stage[s].bwd_recv = (uint64_t)hw_comm_sum(me ? (double)c->bwd_recv : 0);
		gt->stage[s].p2p_s = hw_comm_max(me ? c->p2p_s : 0);
		gt->stage[s].bubble_s = hw_comm_max(me ? c->bubble_s : 0);
	}
	return hw_comm_exchange(m0->order, gt->order, order_check);
}

static void gathered_free(gathered *gt)
{
	free(gt->stage);
	free(gt->order);
}

static int put_variant(rep_variant *rv, const scn_scenario *s, const plan *p,
		       const measured *m, const gathered *gt, double half_rtt_s, const loader *l)
{
	const scn_training *t = &s->jobs[0].wl.train;
	double *sorted = malloc(m->n * sizeof *sorted), mean = 0, parts = 0;
	static const char *const names[NPARTS] = { "data_stall", "compute", "exposed_comm",
						   "pipeline_bubble", "other" };
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
		/* FLOPs as run per rank (x scale), the mean over ranks (pipeline
		 * stages differ): no MFU, as the scaled GEMMs are not the model's */
		wl_iter_run run = { .iter_s = mean, .batch = t->global_batch,
				    .flops_run = gt->flops_done / m->n, .gpus = 1,
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
		if ((k != P_DATA || l) && (k != P_BUBBLE || p->cfg.pp > 1))
			err = rep_variant_set_breakdown(rv, names[k], parts > 0 ? v / parts * mean : 0);
	}
	if (!err && p->replicas > 1) {
		double bytes = (double)p->grad_count * sizeof(float), ts = m->comm_s / m->n;
		double algbw = bytes / ts / 1e9;
		err = rep_variant_add_collective(rv, &(rep_collective){ .op = "allreduce",
			.algo = "ring", .ranks = p->replicas, .bytes = (uint64_t)bytes,
			.time_s = ts, .algbw_GBps = algbw,
			.busbw_GBps = algbw * hw_allreduce_bus_factor((int)p->replicas),
			.time_min_s = NAN, .time_p10_s = NAN, .time_p90_s = NAN });
	}
	/* The simulator's row: the whole stage boundary (its tp slices move
	 * together), the time of one message. */
	if (!err && p->cfg.pp > 1)
		err = run_put_collective(rv, COLL_SENDRECV, "p2p", 2,
					 (uint64_t)wl_stage_boundary_bytes(&p->cfg.model.tf,
									   p->cfg.micro_batch),
					 half_rtt_s);
	return err;
}

/* info replay.pipeline*: how ranks map onto stages and replicas, the
 * message size, and per stage what it sent and received. */
static int put_pipeline(rep_report *r, const plan *p, const measured *m0, const gathered *gt)
{
	const train_config *c = &p->cfg;
	uint32_t P = c->pp, R = p->replicas;
	char key[64], fewer[320] = "", plain[200] = "";
	int err = 0;
	/* wl_1f1b_op is the plain schedule: an interleaved scenario's order
	 * (wl_interleaved_op) is not what runs here, and the report says so. */
	if (c->vp > 1)
		snprintf(plain, sizeof plain, "; the scenario's interleaved schedule (virtual_stages "
			 "%u) replayed as plain 1F1B: one chunk per stage, %u times fewer sends "
			 "than the simulator's", c->vp, c->vp);
	if (R < c->dp)
		snprintf(fewer, sizeof fewer, "; dp %u replicas replayed as %u (one rank per stage "
			 "per replica needs mpirun -np %u): %s", c->dp, R, P * c->dp,
			 R > 1 ? "each stage's gradient all-reduce ran over that many ranks"
			       : "no gradient all-reduce ran (one replica)");
	err = rep_set_infof(r, "replay.pipeline", "pp %u stages x %u replicas on %u ranks: rank "
			 "r is stage r / %u, replica r %% %u (Megatron's order, data parallel "
			 "inside each stage's block; one rank per stage per replica, standing "
			 "for its first tensor-parallel GPU); activations and their gradients sent "
			 "between neighbouring stages in 1F1B order (wl_1f1b_op, the simulator's), "
			 "each checked by its receiver%s%s", P, R, P * R, R, R, fewer, plain) ||
	      rep_set_infof(r, "replay.pipeline_message_bytes", "%zu per message and GPU: the "
			 "stage boundary (wl_stage_boundary_bytes, seq x micro x hidden x 2 B = "
			 "%.6g) / tp "
			 "%u, full size whatever --scale; the sendrecv row holds the whole boundary "
			 "(the tp slices move together, as the simulator's row) and the median half "
			 "round trip of one message between neighbouring stages, measured alone "
			 "before the iterations (the slowest pair)", p->msg_bytes,
			 wl_stage_boundary_bytes(&c->model.tf, c->micro_batch), c->tp);
	for (uint32_t s = 0; s < P && !err; s++) {
		const hw_pipe_count *k = &gt->stage[s];
		snprintf(key, sizeof key, "replay.pipeline_stage%u", s);
		err = rep_set_infof(r, key, "activations sent %llu, received %llu; gradients "
				 "sent %llu, received %llu (%u measured iterations x %u replicas); "
				 "%.4g s per "
				 "iteration in sends and receives (slowest replica), of which %.4g s "
				 "waiting for the neighbouring stage to send (pipeline bubble) and "
				 "the rest transfers; passes of one iteration: %s",
				 (unsigned long long)k->fwd_sent, (unsigned long long)k->fwd_recv,
				 (unsigned long long)k->bwd_sent, (unsigned long long)k->bwd_recv,
				 m0->n, R, k->p2p_s / m0->n, k->bubble_s / m0->n,
				 gt->order + (size_t)train_rank(R, 1, 0, s, 0) * HW_MSG_MAX);
	}
	return err;
}

/* What the replay does instead of ZeRO's collectives (the simulator's,
 * models/train.c dp_chain): one all-reduce of the gradients. */
static const char *zero_note(uint32_t stage)
{
	if (stage >= 3)
		return "; ZeRO 3's collectives: its gradient reduce-scatter and parameter "
		       "all-gather after the step run as one all-reduce of the same bytes, its "
		       "parameter all-gather for the backward (a third of its traffic) not at all";
	if (stage >= 1)
		return "; ZeRO's collectives (a gradient reduce-scatter, a parameter all-gather "
		       "after the step): one all-reduce of the same bytes instead";
	return "";
}

static int put_info(rep_report *r, const scn_scenario *s, const replay_opts *o, const plan *p,
		    const measured *m, const loader *l, const hw_gemm *g, const gathered *gt)
{
	const char *v = p->v->name, *st0 = p->cfg.pp > 1 ? " of stage 0" : "";
	char key[128];
	int err = rep_set_infof(r, "replay.scale", "%g", o->scale) ||
		  rep_set_infof(r, "replay.compute", "%s", hw_gemm_describe(g)) ||
		  rep_set_infof(r, "replay.flops_per_gpu_iteration", "%.6g%s (the scenario's, "
			     "wl_gpu_iter_flops; %.6g run: x scale, in whole GEMMs)", p->flops_full,
			     st0, m->flops_done / m->n) ||
		  rep_set_infof(r, "replay.compute_flops_per_s", "%.6g (measured: FLOPs run / GEMM "
			     "time, mean over ranks)", gt->fps) ||
		  rep_set_infof(r, "replay.gradient_bytes", "%.6g per GPU%s (the scenario's: stage "
			     "parameters / tp x %g B); %zu all-reduced (x scale, whole floats)",
			     p->grad_full_bytes, st0, p->cfg.grad_bytes_per_param,
			     p->grad_count * sizeof(float)) ||
		  rep_set_infof(r, "replay.data", "%s", l ? l->mode : "none (no --data)");
	if (!err && l)
		err = rep_set_infof(r, "replay.data_per_rank_iteration", "%llu bytes: %u samples x "
				 "%.6g B (%s), prefetched one iteration ahead; %llu bytes read in all",
				 (unsigned long long)p->batch_bytes, p->samples_per_rank,
				 p->sample_bytes, p->sample_src, (unsigned long long)l->bytes_read);
	if (!err)
		err = rep_set_infof(r, "replay.extrapolate", "compute and the gradient all-reduce "
				 "ran at %g of the scenario's size: full-size compute takes about "
				 "flops_per_gpu_iteration / compute_flops_per_s = %.6g s per "
				 "iteration on this compute; data reads%s are full size", o->scale,
				 p->flops_full / gt->fps,
				 p->cfg.pp > 1 ? " and pipeline messages" : "");
	if (!err && p->cfg.pp > 1)
		err = put_pipeline(r, p, m, gt);
	if (!err && p->cfg.pp > 1)
		err = rep_set_infof(r, "replay.pipeline_bubble", "each pipeline receive's wait w "
				 "is split as the simulator splits a stage's wait (models/train.c: "
				 "until the neighbouring stage sent is pipeline_bubble, from then on "
				 "exposed_comm), taking the transfer to last what one message alone "
				 "does (the sendrecv row's time, measured before the iterations): "
				 "min(w, that) is exposed_comm, the rest pipeline_bubble; no clock is "
				 "compared across ranks");
	if (!err)
		err = hw_replay_store_info(r, s, &p->cfg, gt->sj, &gt->ss,
					   train_ckpt_bytes(s, &p->cfg), o->scale);
	if (!err)
		err = rep_set_infof(r, "replay.not_replayed", "tensor-parallel all-reduces (tp %u: "
				 "NVLink inside a node), %soverlap of the gradient all-reduce with "
				 "backward (here it follows compute: exposed_comm is all of it), "
				 "the optimizer step, sample decode%s", p->cfg.tp,
				 p->cfg.pp > 1 ? "" : "pipeline stages (pp 1), ",
				 zero_note(p->cfg.zero_stage));
	for (size_t i = 0; i < diag_count(p->notes) && i < MAX_NOTES && !err; i++) {
		snprintf(key, sizeof key, "%s.note%zu", v, i + 1);
		err = rep_set_info(r, key, diag_msg(p->notes, i));
	}
	return err ? SIM_ENOMEM : 0;
}

/* One variant's entry: the pass its crypto stands for (m[1]: crypto
 * host), or why it was not replayed (info VARIANT.not_replayed). */
static int add_variant(rep_report *r, const scn_scenario *s, const replay_opts *o, const plan *p,
		       const scn_variant *v, const measured m[2], const gathered *gt,
		       const hw_crypt_cost *cost, const loader *l)
{
	const char *why = why_not(v, o);
	bool host = v->crypto == SCN_CRYPTO_HOST;
	rep_variant *rv;
	int err;
	char key[SCN_NAME_MAX + 32];
	/* its storage path is measured whether or not the rest runs */
	if ((err = hw_replay_store_variant(r, v, &gt->ss)))
		return err;
	if (why) {
		snprintf(key, sizeof key, "%s.not_replayed", v->name);
		return rep_set_info(r, key, why) ? SIM_ENOMEM : 0;
	}
	if (!(rv = rep_add_variant(r, v->name)))
		return SIM_ENOMEM;
	err = hw_replay_set_offload(rv, v);
	if (!err)
		err = put_variant(rv, s, p, &m[host], gt, gt->half_rtt_s[host], l);
	if (!err && host)
		err = hw_replay_crypto_info(r, s, v, cost);
	return err;
}

static int report(const scn_scenario *s, const replay_opts *o, const plan *p,
		  const measured m[2], const hw_crypt_cost *cost, const loader *l,
		  const hw_gemm *g, const hw_store_job *sj, const hw_store_res *sr)
{
	rep_report *r = NULL;
	/* the first pass run */
	const measured *m0 = m[0].n ? &m[0] : &m[1];
	gathered gt = { 0 };
	int err = gather(p, m, sj, sr, &gt);
	if (err || hw_comm_rank() != 0)
		return gathered_free(&gt), err;
	if ((err = hw_replay_report_new(s, o, &r)))
		return gathered_free(&gt), err;
	for (size_t v = 0; v < s->nvariants && !err; v++)
		err = add_variant(r, s, o, p, &s->variants[v], m, &gt, cost, l);
	if (!err)
		err = put_info(r, s, o, p, m0, l, g, &gt);
	if (!err)
		err = rep_compute_speedup(r);
	if (err)
		err = hw_fail(err, "cannot build the replay report: %s", sim_strerror(err));
	if (!err) {
		printf("compute: %.3g FLOP/s measured per rank (%s); scale %g\n", gt.fps,
		       hw_gemm_describe(g), o->scale);
		err = hw_replay_write(r, o);
	}
	rep_free(r);
	gathered_free(&gt);
	return err;
}

/* ---- the command ------------------------------------------------------- */

/* The transports (collective calls): pp 1, one ring of the replicas; else
 * each replica's ring of stages (every R-th rank, R replicas) and, with
 * two replicas or more, each stage's replicas' ring (its R consecutive
 * ranks), as train_rank places them. Room for the tag: the crypto:
 * host pass sends through them too. 0, or 2 (logged). */
static int open_lanes(const replay_opts *o, const plan *p, hw_pipe *pp, lanes *k)
{
	size_t grad = p->grad_count * sizeof(float) + HW_CRYPT_TAG;
	if (p->cfg.pp == 1)
		return (k->dp = hw_replay_transport(o, grad, 1, 0)) ? 0 : 2;
	k->pp = pp;
	if (!(k->pipe = hw_replay_transport(o, pp->msg_bytes + HW_CRYPT_TAG, (int)p->replicas, 0)))
		return 2;
	if (p->replicas > 1 && !(k->dp = hw_replay_transport(o, grad, 1, (int)p->replicas)))
		return 2;
	return 0;
}

static void close_lanes(lanes *k)
{
	hw_xport_free(k->dp);
	hw_xport_free(k->pipe);
}

/* The cipher of each transport: its own key (nonces are unique per
 * transport only). */
typedef struct sealed {
	hw_crypt c[2];                /* gradients, activations */
	lanes k;
} sealed;

static int seal_lanes(const scn_scenario *s, const plan *p, const lanes *k, sealed *z)
{
	static const char *const use[2] = { "gradients", "activations" };
	hw_xport *inner[2] = { k->dp, k->pipe }, **outer[2] = { &z->k.dp, &z->k.pipe };
	size_t max[2] = { p->grad_count * sizeof(float), p->msg_bytes };
	unsigned char key[HW_CRYPT_KEY];
	int err = 0;
	z->k.pp = k->pp;
	for (int i = 0; i < 2 && !err; i++) {
		if ((err = hw_replay_key(s->seed, use[i], key)) || (err = hw_crypt_init(&z->c[i], key)))
			break;
		if (inner[i] && !(*outer[i] = hw_crypt_xport_new(inner[i], &z->c[i], max[i], false)))
			err = hw_fail(SIM_ENOMEM, "out of memory for the AES-256-GCM buffers");
	}
	return err;
}

static void unseal_lanes(sealed *z)
{
	close_lanes(&z->k);
	hw_crypt_fini(&z->c[0]);
	hw_crypt_fini(&z->c[1]);
}

/* The crypto: host pass: the same iterations with every gradient and
 * pipeline message sealed by its sender and opened, tag checked, by its
 * receiver. */
static int crypto_pass(const lanes *k, const scn_scenario *s, hw_gemm *g, loader *l,
		       const plan *p, measured *m, hw_crypt_cost *cost)
{
	sealed z = { 0 };
	hw_crypt_cost part[2];
	int err = seal_lanes(s, p, k, &z);
	if (!err && hw_comm_rank() == 0)
		printf("crypto host: the gradients%s sealed with AES-256-GCM (OpenSSL EVP) on every "
		       "rank\n", k->pp ? " and pipeline messages" : "");
	if (!err)
		err = run_iterations(&z.k, g, l, p, m);
	if (!err) {
		hw_replay_crypto_cost(&z.c[0], &part[0]);
		hw_replay_crypto_cost(&z.c[1], &part[1]);
		*cost = (hw_crypt_cost){ .cpu_s = part[0].cpu_s + part[1].cpu_s,
					 .bytes = part[0].bytes + part[1].bytes,
					 .msgs = part[0].msgs + part[1].msgs };
	}
	unseal_lanes(&z);
	return err;
}

/* The passes the variants need: plain (crypto none), crypto host. */
static int run_passes(const lanes *k, const scn_scenario *s, const replay_opts *o, hw_gemm *g,
		      loader *l, const plan *p, measured m[2], hw_crypt_cost *cost)
{
	bool want[2] = { false, false };
	int err = 0;
	for (size_t v = 0; v < s->nvariants; v++)
		if (stands_for(&s->variants[v], o))
			want[s->variants[v].crypto == SCN_CRYPTO_HOST] = true;
	if (want[0])
		err = run_iterations(k, g, l, p, &m[0]);
	if (!err && want[1] && l && want[0])
		loader_rewind(l);
	if (!err && want[1])
		err = crypto_pass(k, s, g, l, p, &m[1], cost);
	return err;
}

static void say_start(const scn_scenario *s, const replay_opts *o, const plan *p,
		      const hw_gemm *g, const loader *l)
{
	char pipe[160] = "";
	if (hw_comm_rank() != 0)
		return;
	if (p->cfg.pp > 1)
		snprintf(pipe, sizeof pipe, " (pp %u stages x %u replicas), %zu-byte pipeline "
			 "messages", p->cfg.pp, p->replicas, p->msg_bytes);
	printf("dpusim-hw replay %s (training, variant %s): %d ranks%s over %s, %s; per rank "
	       "and iteration %.4g FLOPs (%.3g x scale %g), %zu gradient bytes, %s\n", s->name,
	       p->v->name, hw_comm_size(), pipe, o->transport, hw_gemm_describe(g), p->flops,
	       p->flops_full, o->scale, p->grad_count * sizeof(float),
	       l ? "data from --data" : "no data read");
}

/* The storage replay (a collective call): the loader's reads on stage 0's
 * ranks, one run's worth of samples (warm-up included), when the workload
 * reads data; each rank's share of the checkpoint (x scale) when the
 * scenario takes checkpoints; cuFile too when a variant reads with gds. 0, 1 (a byte read back wrong) or 2, the same on every rank. */
static int storage_pass(const scn_scenario *s, const replay_opts *o, const plan *p,
			hw_store_job *j, hw_store_res *r)
{
	const train_config *c = &p->cfg;
	int err;
	*j = (hw_store_job){ .dir = o->dir, .sample_bytes = p->sample_bytes };
	if (c->data && p->stage == 0)
		j->samples = (uint64_t)p->samples_per_rank * (c->warmup + c->iterations);
	if (s->failures.enabled)
		j->ckpt_bytes = train_ckpt_bytes(s, c) / train_gpus(c) * o->scale;
	for (size_t v = 0; v < s->nvariants; v++)
		j->gds |= s->variants[v].storage == SCN_STOR_GDS;
	err = hw_replay_store(j, r);
	if (hw_comm_all(err == 0))
		return 0;
	return hw_comm_all(err != SIM_EVERIFY) ? 2 : 1;
}

/* Buffers and sizes of this rank's stage (pp > 1). 0 or SIM_ENOMEM. */
static int pipe_of(const plan *p, hw_pipe *pp)
{
	if (p->cfg.pp == 1)
		return 0;
	*pp = (hw_pipe){ .stages = p->cfg.pp, .microbatches = p->cfg.microbatches,
			 .stage = p->stage, .msg_bytes = p->msg_bytes, .fwd_flops = p->fwd_flops,
			 .bwd_flops = p->bwd_flops,
			 .corrupt = hw_comm_rank() == p->fault_rank && !strcmp(p->fault, "corrupt") };
	return hw_pipe_init(pp);
}

int hw_replay_train(const scn_scenario *s, const replay_opts *o)
{
	plan p = { 0 };
	measured m[2] = { { 0 }, { 0 } };
	hw_crypt_cost cost = { 0 };
	hw_store_job sj = { 0 };
	hw_store_res sr = { 0 };
	loader ld = { 0 }, *l = NULL;
	hw_pipe pp = { 0 };
	lanes k = { 0 };
	hw_gemm *g = NULL;
	int err = plan_of(s, o, hw_comm_size(), &p);
	/* the loader feeds stage 0, as the simulator's */
	if (!err && o->data && p.stage == 0) {
		err = loader_init(&ld, o->data, p.batch_bytes, (int)p.replica, (int)p.replicas);
		l = &ld;
	}
	if (!err && (err = hw_gemm_open(o->compute, p.gemm_n, &g)))
		err = 2;
	if (!err && (!(m[0].iter_s = calloc(p.cfg.iterations, sizeof *m[0].iter_s)) ||
		     !(m[1].iter_s = calloc(p.cfg.iterations, sizeof *m[1].iter_s)) ||
		     pipe_of(&p, &pp)))
		err = hw_fail(2, "out of memory");
	if (!hw_comm_all(err == 0)) {
		err = 2;
		goto out;
	}
	if ((err = open_lanes(o, &p, &pp, &k)))
		goto out;
	say_start(s, o, &p, g, l);
	err = run_passes(&k, s, o, g, l, &p, m, &cost);
	if (err && err != SIM_EVERIFY) {
		hw_error("replay failed (%s); ending every rank", sim_strerror(err));
		hw_comm_abort(2);
	}
	if (!err && (err = storage_pass(s, o, &p, &sj, &sr)) == 1)
		err = SIM_EVERIFY;
	if (!err)
		err = report(s, o, &p, m, &cost, l, g, &sj, &sr) ? 2 : 0;
	if (!hw_comm_all(err == 0) && !err)
		err = 2;
	err = err == SIM_EVERIFY ? 1 : err ? 2 : 0;
out:
	close_lanes(&k);
	hw_pipe_release(&pp);
	hw_gemm_close(g);
	if (l)
		loader_free(l);
	free(m[0].iter_s);
	free(m[1].iter_s);
	diag_free(p.notes);
	return err;
}
