/* dpusim-hw bench: microbenchmarks across MPI ranks, written as a
 * dpusim-report/1 (source "hw", benchmarks section) and printed as a table. */
#include "backend-hw/bench.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend-hw/cmd.h"
#include "backend-hw/comm.h"
#include "backend-hw/log.h"
#include "backend-hw/mem.h"
#include "report/atomic.h"

static const size_t quick_sizes[] = { 4096, 65536, 1048576 };
static const size_t full_sizes[] = { 1024, 8192, 65536, 524288, 4194304, 33554432 };

double hw_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void hw_bench_fault(const hw_bench *h, const char *point)
{
	if (h->fault_rank != h->rank)
		return;
	if (!strcmp(h->fault, "late") && !strcmp(point, "p2p-stream")) {
		/* its peer waits for the first bytes: tests that the wait is not
		 * billed as TCP's CPU cost */
		nanosleep(&(struct timespec){ .tv_nsec = 300000000 }, NULL);
		return;
	}
	if (strcmp(point, "allreduce-ring"))
		return;
	if (!strcmp(h->fault, "exit")) {
		fprintf(stderr, "dpusim-hw: rank %d: fault hook: exiting early on purpose\n", h->rank);
		_exit(3);
	}
	if (!strcmp(h->fault, "hang")) {
		fprintf(stderr, "dpusim-hw: rank %d: fault hook: hanging on purpose\n", h->rank);
		for (;;)
			pause();
	}
}

static void print_row(const rep_benchmark *b)
{
	double v = b->value;
	const char *u = b->unit;
	char extra[96] = "";
	if (!strcmp(u, "B/s"))
		v /= 1e9, u = "GB/s";
	else if (!strcmp(u, "FLOP/s"))
		v /= 1e12, u = "TFLOP/s";
	else if (!strcmp(u, "s")) {
		v *= 1e6, u = "us";
		if (!isnan(b->p50))
			snprintf(extra, sizeof extra, "  p50 %.2f us  p99 %.2f us", b->p50 * 1e6,
				 b->p99 * 1e6);
	}
	printf("  %-24s %-8s %10llu B  %12.4g %-8s%s\n", b->name, b->transport,
	       (unsigned long long)b->bytes, v, u, extra);
}

int hw_bench_add(hw_bench *h, const rep_benchmark *b)
{
	int err;
	if (!h->rep)
		return 0;
	if ((err = rep_add_benchmark(h->rep, b)))
		return hw_fail(err, "benchmark '%s' refused by the report: %s", b->name,
			       sim_strerror(err));
	return 0;
}

int hw_bench_skip(hw_bench *h, const char *what, const char *fmt, ...)
{
	char key[64], why[512];
	va_list ap;
	if (h->rank != 0)
		return 0;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	printf("  %s: skipped: %s\n", what, why);
	snprintf(key, sizeof key, "skipped.%s", what);
	if (h->rep && rep_set_info(h->rep, key, why))
		return hw_fail(SIM_ENOMEM, "out of memory");
	return 0;
}

int hw_bench_emit(hw_bench *h, const rep_benchmark *b)
{
	int err = hw_bench_add(h, b);
	if (!err && h->rep) {
		print_row(b);
		fflush(stdout);
	}
	return err;
}

/* "4096", "64K", "1M", "2G" (binary multiples). */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;
	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end == 'K' || *end == 'M' || *end == 'G') {
		int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : 30;
		if (v > (1ull << (63 - shift)))
			return -1;
		v <<= shift;
		end++;
	}
	if (*end || v == 0 || v > ((size_t)1 << 34))
		return -1;
	*out = (size_t)v;
	return 0;
}

typedef struct bench_opts {
	const char *out;
	hw_bench h;
} bench_opts;

/* Only the first rank prints usage errors: every rank parses the same argv. */
static int usage_error(const char *fmt, const char *arg)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK");
	if (!r || !strcmp(r, "0")) {
		fputs("dpusim-hw: error: ", stderr);
		fprintf(stderr, fmt, arg);
		fputs(" (see 'dpusim-hw bench --help')\n", stderr);
	}
	return 2;
}

static int parse_sizes(hw_bench *h, const char *list)
{
	size_t len = strlen(list);
	/* strtok_r skips empty items: "4K,,1M" or "4K," is a typo, refused */
	char *copy = len && list[0] != ',' && list[len - 1] != ',' && !strstr(list, ",,")
			     ? strdup(list) : NULL, *save = NULL;
	int bad = !copy;
	h->nsizes = 0;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && !bad;
	     t = strtok_r(NULL, ",", &save))
		bad = h->nsizes == HW_BENCH_MAX_SIZES || parse_size(t, &h->sizes[h->nsizes++]);
	free(copy);
	return bad || h->nsizes == 0 ? -1 : 0;
}

static int parse_fault(hw_bench *h)
{
	const char *f = getenv("DPUSIM_HW_FAULT");
	char kind[16];
	int rank;
	h->fault_rank = -1;
	if (!f || !*f)
		return 0;
	if (sscanf(f, "%15[a-z]:%d", kind, &rank) != 2 || rank < 0 ||
	    (strcmp(kind, "exit") && strcmp(kind, "hang") && strcmp(kind, "corrupt") &&
	     strcmp(kind, "late")))
		return usage_error("DPUSIM_HW_FAULT='%s': expected exit|hang|corrupt|late:RANK", f);
	snprintf(h->fault, sizeof h->fault, "%s", kind);
	h->fault_rank = rank;
	return 0;
}

static int parse_opts(int argc, char **argv, bench_opts *o)
{
	bool sizes_given = false;
	o->h = (hw_bench){ .transport = "tcp", .mem = "host", .timeout_ms = 30000 };
	o->h.dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool takes = strcmp(a, "--quick") != 0;
		if (takes && !v)
			return usage_error("option '%s' needs a value", a);
		if (!strcmp(a, "--quick"))
			o->h.quick = true;
		else if (!strcmp(a, "-o"))
			o->out = v;
		else if (!strcmp(a, "--transport") && (!strcmp(v, "tcp") || !strcmp(v, "verbs")))
			o->h.transport = v;
		else if (!strcmp(a, "--transport"))
			return usage_error("unknown transport '%s' (expected tcp or verbs)", v);
		else if (!strcmp(a, "--mem") && hw_mem_backend(v))
			o->h.mem = v;
		else if (!strcmp(a, "--mem"))
			return usage_error("memory '%s' is not available in this build (host, or cuda "
					   "when built with CUDA)", v);
		else if (!strcmp(a, "--dir"))
			o->h.dir = v;
		else if (!strcmp(a, "--sizes") && !parse_sizes(&o->h, v))
			sizes_given = true;
		else if (!strcmp(a, "--sizes"))
			return usage_error("bad --sizes '%s' (expected N[K|M|G][,...], no item empty, at most 32)", v);
		else if (!strcmp(a, "--timeout")) {
			if (hw_parse_timeout_ms(v, &o->h.timeout_ms))
				return usage_error("bad --timeout '%s' (seconds, 0.001 <= T <= 3600)", v);
		} else if (!strcmp(a, "--start-timeout")) {
			if (hw_parse_timeout_ms(v, &o->h.start_timeout_ms))
				return usage_error("bad --start-timeout '%s' (seconds, 0.001 <= T <= 3600)",
						   v);
		} else {
			return usage_error("unknown option '%s'", a);
		}
		i += takes;
	}
	if (strcmp(o->h.mem, "host") && strcmp(o->h.transport, "verbs"))
		return usage_error("--mem %s needs --transport verbs (tcp moves host memory)", o->h.mem);
	if (!sizes_given) {
		const size_t *s = o->h.quick ? quick_sizes : full_sizes;
		o->h.nsizes = o->h.quick ? 3 : 6;
		memcpy(o->h.sizes, s, (size_t)o->h.nsizes * sizeof *s);
	}
	return parse_fault(&o->h);
}

static rep_report *new_report(const hw_bench *h)
{
	rep_report *r = rep_new(REP_HW);
	char host[256] = "unknown", ranks[16], hz[64];
	const char *src = NULL;
	double cpu_hz = hw_cpu_hz(&src);
	int err;
	if (!r)
		return NULL;
	gethostname(host, sizeof host - 1);
	snprintf(ranks, sizeof ranks, "%d", h->size);
	snprintf(hz, sizeof hz, "%.0f", cpu_hz);
	err = rep_set_scenario(r, &(rep_scenario){ .name = h->quick ? "hw-bench-quick" : "hw-bench" });
	if (!err)
		err = rep_set_info(r, "host", host) || rep_set_info(r, "ranks", ranks) ||
		      rep_set_info(r, "transport", h->transport) ||
		      rep_set_info(r, "memory", h->mem) ||
		      rep_set_info(r, "compiled_paths", hw_compiled_paths()) ||
		      rep_set_info(r, "cpu_hz", hz) ||
		      rep_set_info(r, "cpu_hz_source", src ? src : "unknown") ||
		      rep_set_info(r, "cycles_per_byte_basis",
				   "CPU seconds of the sending and the receiving thread "
				   "(CLOCK_THREAD_CPUTIME_ID, waits not spinning) x cpu_hz / bytes");
	if (err) {
		rep_free(r);
		return NULL;
	}
	return r;
}

static int write_report(const bench_opts *o)
{
	char why[512];
	if (rep_validate(o->h.rep, why, sizeof why))
		return hw_fail(SIM_EINVAL, "the bench report does not validate: %s", why);
	if (!o->out)
		return 0;
	if (rep_write_file(o->h.rep, o->out, why, sizeof why))
		return hw_fail(SIM_EIO, "cannot write the report: %s", why);
	printf("report written to %s\n", o->out);
	return 0;
}

static hw_xport *open_transport(const hw_bench *h, size_t max_msg)
{
	hw_xport_opts xo = { .timeout_ms = h->timeout_ms, .max_msg = max_msg, .mem = h->mem,
			     .gid_index = -1 };
	if (!strcmp(h->transport, "verbs"))
		return hw_verbs_new(&xo);
	return hw_tcp_new(&xo);
}

/* The transport part; SIM_EPEER when the transport could not be set up on
 * every rank (all ranks agree on that). */
static int run_net(hw_bench *h)
{
	size_t max = 32768;
	hw_xport *x;
	int err;
	if (h->size < 2) {
		return hw_bench_skip(h, "transports", "1 rank (run under mpirun -np N, N >= 2)");
	}
	for (int i = 0; i < h->nsizes; i++)
		max = h->sizes[i] > max ? h->sizes[i] : max;
	if (!(x = open_transport(h, max)))
		return SIM_EPEER;
	err = hw_bench_net(h, x);
	hw_xport_free(x);
	return err;
}

/* -o's folder is there to write in: said before the benchmarks run, not
 * after them (a missing folder failed the write at the end of a full run).
 * 0 or SIM_EIO, said. */
static int out_folder_ok(const char *out)
{
	const char *why;
	char dir[4096];
	struct stat st;
	char why_name[512];
	/* a name the file system cannot take, or an input: said now, as the
	 * write would say it */
	if (atomic_check_target(out, why_name, sizeof why_name))
		return hw_fail(SIM_EIO, "-o: %s", why_name);
	atomic_dir_of(out, dir, sizeof dir);
	why = stat(dir, &st)         ? strerror(errno)
	      : !S_ISDIR(st.st_mode) ? "not a folder"
	      : access(dir, W_OK)    ? strerror(errno)
				     : NULL;
	return why ? hw_fail(SIM_EIO, "-o '%s': cannot write in folder '%s': %s", out, dir, why) : 0;
}

int hw_cmd_bench(int argc, char **argv)
{
	bench_opts o = { 0 };
	hw_bench *h = &o.h;
	int err = parse_opts(argc, argv, &o);
	if (err)
		return err;
	if (hw_comm_init(&argc, &argv, h->timeout_ms, h->start_timeout_ms))
		return 2;
	h->rank = hw_comm_rank();
	h->size = hw_comm_size();
	if (h->rank == 0 && o.out)
		err = out_folder_ok(o.out);
	if (!err && h->rank == 0 && !(h->rep = new_report(h)))
		err = hw_fail(SIM_ENOMEM, "cannot start the report");
	if (!hw_comm_all(err == 0))
		return hw_comm_finalize(), 2;
	if (h->rank == 0)
		printf("dpusim-hw bench: %d rank(s), transport %s, %s\n", h->size, h->transport,
		       h->quick ? "quick" : "full");
	err = hw_bench_local(h);
	if (!err)
		err = run_net(h);
	if (err && err != SIM_EVERIFY && err != SIM_EPEER) {
		/* A local failure (a dead or hung peer, a failed call): others may be
		 * waiting on this rank, so end them all now. */
		hw_error("bench failed (%s); ending every rank", sim_strerror(err));
		hw_comm_abort(2);
	}
	if (!err && h->rank == 0)
		err = write_report(&o);
	if (err == SIM_EVERIFY && h->rank == 0)
		hw_error("data verification failed: the report is not written");
	rep_free(h->rep);
	hw_comm_finalize();
	return err == SIM_EVERIFY ? 1 : err ? 2 : 0;
}
