/* dpusim-hw replay FILE: runs a collective scenario's sizes for real over the
 * ranks (ring all-reduce over tcp or verbs, every result verified) and writes
 * a dpusim-report/1 with source "hw" and the same keys the simulator writes
 * for that scenario: per variant, one collective per size (time_s the median
 * call, with the calls' spread) and iteration_s (the sum over sizes of the
 * medians). Training scenarios go to backend-hw/replay_train.c. */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "backend-hw/allreduce.h"
#include "backend-hw/bench.h"
#include "backend-hw/cmd.h"
#include "backend-hw/comm.h"
#include "backend-hw/crypt.h"
#include "backend-hw/log.h"
#include "backend-hw/mem.h"
#include "backend-hw/replay.h"
#include "backend-hw/xport.h"
#include "models/diag.h"
#include "models/scenario.h"
#include "report/atomic.h"
#include "report/report.h"
#include "tools/cli.h"
#include "tools/run.h"
#include "tools/scn_cli.h"
#include "tools/sweep.h"

int hw_replay_usage(const char *fmt, ...)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK");
	va_list ap;
	if (!r || !strcmp(r, "0")) {
		fputs("dpusim-hw: error: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputs(" (see 'dpusim-hw replay --help')\n", stderr);
	}
	return 2;
}

static int usage(const char *fmt, const char *arg)
{
	return hw_replay_usage(fmt, arg);
}

/* A whole number lo..hi, the whole string (sscanf's %lu took "64k" as 64,
 * and " 5" and "+5"): 0, or -1. */
static int parse_count(const char *v, unsigned long lo, unsigned long hi, unsigned long *n)
{
	unsigned long long u;
	if (!isdigit((unsigned char)v[0]) || !cli_parse_u64(v, &u) || u < lo || u > hi)
		return -1;
	*n = (unsigned long)u;
	return 0;
}

static int parse(int argc, char **argv, replay_opts *o)
{
	double scale;
	unsigned long n;
	*o = (replay_opts){ .transport = "tcp", .mem = "host", .compute = "cpu", .scale = 1,
			    .timeout_ms = 30000, .point = -1,
			    .dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp" };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (a[0] != '-') {
			if (o->file)
				return usage("more than one scenario file ('%s')", a);
			o->file = a;
			continue;
		}
		if (!v)
			return usage("option '%s' needs a value", a);
		if (!strcmp(a, "-o"))
			o->out = v;
		else if (!strcmp(a, "--transport") && (!strcmp(v, "tcp") || !strcmp(v, "verbs")))
			o->transport = v;
		else if (!strcmp(a, "--transport"))
			return usage("unknown transport '%s' (expected tcp or verbs)", v);
		else if (!strcmp(a, "--mem") && hw_mem_backend(v))
			o->mem = v;
		else if (!strcmp(a, "--mem"))
			return usage("memory '%s' is not available in this build", v);
		else if (!strcmp(a, "--timeout")) {
			if (hw_parse_timeout_ms(v, &o->timeout_ms))
				return usage("bad --timeout '%s' (seconds, 0.001 <= T <= 3600)", v);
		} else if (!strcmp(a, "--start-timeout")) {
			if (hw_parse_timeout_ms(v, &o->start_timeout_ms))
				return usage("bad --start-timeout '%s' (seconds, 0.001 <= T <= 3600)", v);
		} else if (!strcmp(a, "--point") && parse_count(v, 0, 999999, &n))
			return usage("bad --point '%s' (a sweep point's index, from 0)", v);
		else if (!strcmp(a, "--point"))
			o->point = (long)n;
		else if (!strcmp(a, "--reps") && parse_count(v, 1, 100000, &n))
			return usage("bad --reps '%s' (timed calls per size, 1..100000)", v);
		else if (!strcmp(a, "--reps"))
			o->reps = (int)n;
		else if (!strcmp(a, "--data"))
			o->data = v;
		else if (!strcmp(a, "--dir"))
			o->dir = v;
		else if (!strcmp(a, "--compute") && (!strcmp(v, "cpu") || !strcmp(v, "cuda")))
			o->compute = v;
		else if (!strcmp(a, "--compute"))
			return usage("unknown --compute '%s' (expected cpu or cuda)", v);
		else if (!strcmp(a, "--scale") && (!cli_parse_double(v, &scale) ||
						    !(scale > 0 && scale <= 1)))
			return usage("bad --scale '%s' (a fraction, 0 < S <= 1)", v);
		else if (!strcmp(a, "--scale"))
			o->scale = scale;
		else if (!strcmp(a, "--gemm-n") && parse_count(v, 16, 16384, &n))
			return usage("bad --gemm-n '%s' (16 <= N <= 16384)", v);
		else if (!strcmp(a, "--gemm-n"))
			o->gemm_n = n;
		else
			return usage("unknown option '%s'", a);
		i++;
	}
	if (!o->file)
		return usage("%s", "missing the scenario FILE");
	o->where = o->file;
	if (strcmp(o->mem, "host") && strcmp(o->transport, "verbs"))
		return usage("--mem %s needs --transport verbs (tcp moves host memory)", o->mem);
	return 0;
}

/* The scenario network this run stands for. */
scn_network hw_replay_network(const replay_opts *o)
{
	if (!strcmp(o->transport, "tcp"))
		return SCN_NET_HOST_TCP;
	return strcmp(o->mem, "cuda") ? SCN_NET_RDMA : SCN_NET_RDMA_GDR;
}

/* Why variant v is not replayed by this run, or NULL when it is: the
 * network the transport stands for, crypto none or host (host: AES-256-GCM
 * on the ranks, crypto_pass), no virtual switch (as the training replay). */
static const char *not_replayed(const scn_variant *v, const replay_opts *o)
{
	if (v->network != hw_replay_network(o))
		return "its network is not the one this run's --transport and --mem stand for";
	if (v->crypto == SCN_CRYPTO_DPU_INLINE)
		return "crypto dpu-inline needs a DPU's inline IPsec/TLS engine, which dpusim-hw "
		       "does not drive";
	if (v->crypto == SCN_CRYPTO_NIC_INLINE)
		return "crypto nic-inline needs the NIC's inline IPsec/TLS engine, which dpusim-hw "
		       "does not drive";
	if (v->vswitch != SCN_VSW_NONE)
		return "a virtual switch is not replayed";
	return NULL;
}

/* Checks what this backend can replay; a message names what it cannot. */
static int replayable(const scn_scenario *s, const replay_opts *o, int ranks)
{
	const scn_collective *c = &s->jobs[0].wl.coll;
	bool any = false;
	if (s->njobs != 1)
		return hw_fail(2, "%s: dpusim-hw replays one workload; this scenario has %zu jobs",
			       o->where, s->njobs);
	if (c->op != SCN_OP_ALLREDUCE)
		return hw_fail(2, "%s: collective '%s' is not implemented on hardware (allreduce only)",
			       o->where, scn_coll_op_name(c->op));
	if (c->algo != SCN_ALGO_RING && c->algo != SCN_ALGO_AUTO)
		return hw_fail(2, "%s: algorithm '%s' is not implemented on hardware (ring only)",
			       o->where, scn_coll_algo_name(c->algo));
	if (c->ranks != ranks)
		return hw_fail(2, "%s: the scenario has %d ranks; run it with mpirun -np %d (this run "
			       "has %d)", o->where, c->ranks, c->ranks, ranks);
	for (size_t v = 0; v < s->nvariants; v++)
		any |= !not_replayed(&s->variants[v], o);
	if (!any)
		return hw_fail(2, "%s: no variant has network '%s', which --transport %s --mem %s "
			       "stands for, and crypto none or host", o->where, scn_network_name(hw_replay_network(o)), o->transport,
			       o->mem);
	return 0;
}

/* Hex SHA-256 of the file's bytes, as the report's scenario.sha256. */
static int file_sha256(const char *path, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE], buf[65536];
	unsigned len = 0;
	size_t n;
	FILE *f = fopen(path, "rb");
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok = f && c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1;
	while (ok && (n = fread(buf, 1, sizeof buf, f)) > 0)
		ok = EVP_DigestUpdate(c, buf, n) == 1;
	ok = ok && !ferror(f) && EVP_DigestFinal_ex(c, md, &len) == 1 && len == 32;
	if (f)
		fclose(f);
	EVP_MD_CTX_free(c);
	if (!ok)
		return hw_fail(SIM_EIO, "%s: cannot hash: %s", path, strerror(errno));
	for (unsigned i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}

/* One size: a warm-up call, then `reps` calls, each refilled, started
 * together (a barrier), timed alone and verified. A call's time is its
 * slowest rank's; *st describes the reps calls (the median is what the
 * report's time_s says). SIM_EVERIFY on every rank when any result was
 * wrong. */
static int replay_size(hw_xport *x, const hw_crypt *c, size_t bytes, int reps, float *data,
		       float *tmp, hw_stats *st)
{
	size_t count = bytes / sizeof(float), bad = count;
	double *t = calloc((size_t)reps, sizeof *t);
	float want = 0;
	int err = t ? 0 : hw_fail(SIM_ENOMEM, "out of memory");
	/* the warm-up (i = -1) pays for first touches and connection start-up,
	 * which a steady stream of calls, the simulator's, does not */
	for (int i = -1; i < reps && !err && bad == count; i++) {
		double t0;
		hw_allreduce_fill(data, count, x->rank);
		hw_comm_start_together();
		t0 = hw_now_s();
		err = hw_allreduce_ring(x, data, count, tmp, false);
		if (i >= 0)
			t[i] = hw_now_s() - t0;
		if (!err)
			bad = hw_allreduce_check(data, count, x->size, &want);
	}
	if (!err && bad != count)
		hw_error("all-reduce of %zu bytes gave a wrong sum: element %zu is %g, expected %g",
			 bytes, bad, (double)data[bad], (double)want);
	/* a message failing its tag check was zeroed and logged (crypt.c) */
	if (!err && !hw_comm_all(bad == count && (!c || c->failed == 0)))
		err = SIM_EVERIFY;
	if (!err) {
		hw_comm_max_each(t, (size_t)reps);
		hw_stats_of(t, (size_t)reps, st);
	}
	free(t);
	return err;
}

/* Timed calls per size: --reps, else the scenario's iterations but at
 * least HW_REPLAY_MIN_REPS. */
static int reps_of(const replay_opts *o, const scn_collective *c)
{
	if (o->reps > 0)
		return o->reps;
	return c->iterations > HW_REPLAY_MIN_REPS ? (int)c->iterations : HW_REPLAY_MIN_REPS;
}

/* Runs every size `reps` times; rank 0 appends the collectives to `cols`
 * (nsizes long). */
static int replay_sizes(hw_xport *x, const hw_crypt *cr, const scn_collective *c, int reps,
			rep_collective *cols)
{
	size_t max = 4;
	float *data, *tmp;
	int err = 0;
	for (size_t i = 0; i < c->nsizes; i++) {
		size_t b = (size_t)c->sizes_bytes[i];
		if (b % sizeof(float) || b == 0)
			return hw_fail(SIM_EINVAL, "size %zu bytes is not a whole number of floats", b);
		max = b > max ? b : max;
	}
	data = malloc(max);
	tmp = malloc(hw_allreduce_tmp_count(max / sizeof(float), x->size) * sizeof(float));
	if (!data || !tmp)
		err = hw_fail(SIM_ENOMEM, "cannot allocate %zu bytes for the all-reduce", max);
	for (size_t i = 0; i < c->nsizes && !err; i++) {
		size_t b = (size_t)c->sizes_bytes[i];
		hw_stats st;
		double algbw;
		if ((err = replay_size(x, cr, b, reps, data, tmp, &st)))
			break;
		algbw = (double)b / st.median / 1e9;
		cols[i] = (rep_collective){ .op = "allreduce", .algo = "ring", .ranks = (uint32_t)x->size,
					    .bytes = b, .time_s = st.median, .algbw_GBps = algbw,
					    .busbw_GBps = algbw * hw_allreduce_bus_factor(x->size),
					    .calls = st.n, .time_min_s = st.min, .time_p10_s = st.p10,
					    .time_p90_s = st.p90 };
		if (x->rank == 0)
			printf("  allreduce ring %4d ranks %12zu B  %12.1f us  algbw %8.3f GB/s  busbw "
			       "%8.3f GB/s  (median of %d; p10 %.1f, p90 %.1f us)  verified x%d%s\n",
			       x->size, b, st.median * 1e6, algbw, cols[i].busbw_GBps, reps,
			       st.p10 * 1e6, st.p90 * 1e6, reps + 1, cr ? "  AES-256-GCM" : "");
	}
	free(data);
	free(tmp);
	return err;
}

int hw_replay_set_offload(rep_variant *rv, const scn_variant *v)
{
	return run_put_offload(rv, v);
}

int hw_replay_report_new(const scn_scenario *s, const replay_opts *o, rep_report **out)
{
	char sha[65], host[256] = "unknown", ranks[16];
	rep_report *r = rep_new(REP_HW);
	int err = r ? file_sha256(o->file, sha) : SIM_ENOMEM;
	gethostname(host, sizeof host - 1);
	snprintf(ranks, sizeof ranks, "%d", hw_comm_size());
	if (!err)
		err = rep_set_scenario(r, &(rep_scenario){ .name = s->name, .file = o->file,
							    .sha256 = sha, .seed = s->seed });
	if (!err && o->point_label)
		err = rep_set_scenario(r, &(rep_scenario){ .name = s->name, .file = o->file,
							    .sha256 = sha, .seed = s->seed,
							    .point = o->point_label });
	if (!err && o->point_label) {
		char idx[32], n[32];
		snprintf(idx, sizeof idx, "%zu", o->point_index);
		snprintf(n, sizeof n, "%zu", o->points);
		err = rep_set_info(r, "sweep_index", idx) || rep_set_info(r, "sweep_points", n)
		      ? SIM_ENOMEM : 0;
	}
	if (!err)
		err = rep_set_info(r, "host", host) || rep_set_info(r, "ranks", ranks) ||
		      rep_set_info(r, "transport", o->transport) || rep_set_info(r, "memory", o->mem) ||
		      rep_set_info(r, "compiled_paths", hw_compiled_paths()) ? SIM_ENOMEM : 0;
	if (err) {
		rep_free(r);
		return hw_fail(err, "cannot build the replay report: %s", sim_strerror(err));
	}
	*out = r;
	return 0;
}

/* One pass over the sizes: plain, or through AES-256-GCM (crypto: host);
 * for the latter, the cipher's cost summed over the ranks. */
typedef struct coll_pass {
	rep_collective *cols;
	bool ran;
	hw_crypt_cost cost;
} coll_pass;

/* The measured CPU cost of the cipher next to the one the scenario's
 * host-costs profile implies (aes_gcm_cycles_per_byte at the scenario
 * CPU's clock), per byte encrypted or decrypted. Cycles are the measured
 * thread CPU seconds times this machine's clock (hw_cpu_hz). */
int hw_replay_crypto_info(rep_report *r, const scn_scenario *s, const scn_variant *v,
			  const hw_crypt_cost *p)
{
	const char *src = NULL;
	double hz = hw_cpu_hz(&src), spb = p->cpu_s / p->bytes;
	double model_cpb = s->cluster.host_costs.v.host.aes_gcm_cycles_per_byte;
	double model_hz = s->cluster.cpu.v.cpu.freq_hz;
	int err = rep_set_variant_infof(r, v->name, "crypto_replayed", "AES-256-GCM through OpenSSL EVP on the "
			   "sending and receiving ranks; %.0f messages, every tag checked", p->msgs) ||
		  rep_set_variant_infof(r, v->name, "crypto_bytes", "%.0f", p->bytes) ||
		  rep_set_variant_infof(r, v->name, "crypto_cpu_s_per_byte", "%.6g", spb) ||
		  rep_set_variant_infof(r, v->name, "crypto_model_cycles_per_byte", "%.6g", model_cpb) ||
		  rep_set_variant_infof(r, v->name, "crypto_model_cpu_s_per_byte", "%.6g", model_cpb / model_hz);
	if (!err && hz > 0)
		err = rep_set_variant_infof(r, v->name, "crypto_cycles_per_byte", "%.6g", spb * hz) ||
		      rep_set_variant_infof(r, v->name, "crypto_clock_Hz", "%.6g", hz) ||
		      rep_set_variant_infof(r, v->name, "crypto_clock_source", "%s", src ? src : "unknown");
	else if (!err)
		err = rep_set_variant_infof(r, v->name, "crypto_cycles_per_byte", "unknown: no CPU clock found "
			       "(compare crypto_cpu_s_per_byte)");
	return err;
}

/* One variant's entry: the pass its crypto stands for, or why it was not
 * replayed (info VARIANT.not_replayed). */
static int add_variant(rep_report *r, const scn_scenario *s, const replay_opts *o,
		       const scn_variant *v, const coll_pass pass[2], size_t n)
{
	const char *why = not_replayed(v, o);
	const coll_pass *p = &pass[v->crypto == SCN_CRYPTO_HOST];
	rep_variant *rv;
	double total = 0;
	int err;
	if (why && v->network != hw_replay_network(o))
		return rep_set_variant_infof(r, v->name, "not_replayed", "network %s: this run (--transport %s "
				"--mem %s) stands for %s", scn_network_name(v->network), o->transport,
				o->mem, scn_network_name(hw_replay_network(o)));
	if (why)
		return rep_set_variant_infof(r, v->name, "not_replayed", "%s", why);
	if (!(rv = rep_add_variant(r, v->name)))
		return SIM_ENOMEM;
	err = hw_replay_set_offload(rv, v);
	for (size_t i = 0; i < n && !err; i++) {
		err = rep_variant_add_collective(rv, &p->cols[i]);
		total += p->cols[i].time_s;
	}
	if (!err)
		err = rep_variant_set_stat(rv, "iteration_s", total, NAN, NAN, NAN);
	if (!err && v->crypto == SCN_CRYPTO_HOST)
		err = hw_replay_crypto_info(r, s, v, &p->cost);
	return err;
}

/* The report: every variant this run stands for gets the collectives of
 * its pass; the others are listed with the reason. */
static int build_report(const scn_scenario *s, const replay_opts *o, const coll_pass pass[2],
			size_t n, rep_report **out)
{
	rep_report *r = NULL;
	char how[256];
	int err = hw_replay_report_new(s, o, &r);
	if (err)
		return err;
	snprintf(how, sizeof how, "each size's time_s is the median of %d calls after one "
		 "untimed warm-up, a call's time its slowest rank's; calls, time_min_s, time_p10_s "
		 "and time_p90_s give their spread", reps_of(o, &s->jobs[0].wl.coll));
	err = rep_set_info(r, "replay.collective_time", how) ? SIM_ENOMEM : 0;
	for (size_t v = 0; v < s->nvariants && !err; v++)
		err = add_variant(r, s, o, &s->variants[v], pass, n);
	if (err) {
		rep_free(r);
		return hw_fail(err, "cannot build the replay report: %s", sim_strerror(err));
	}
	*out = r;
	return 0;
}

int hw_replay_write(const rep_report *r, const replay_opts *o)
{
	char why[512];
	int err = 0;
	if (rep_validate(r, why, sizeof why))
		err = hw_fail(SIM_EINVAL, "the replay report does not validate: %s", why);
	if (!err && o->out && rep_write_file(r, o->out, why, sizeof why))
		err = hw_fail(SIM_EIO, "cannot write the report: %s", why);
	if (!err && o->out)
		printf("report written to %s\n", o->out);
	else if (!err)
		rep_write_json(r, stdout);
	return err;
}

static int write_out(const scn_scenario *s, const replay_opts *o, const coll_pass pass[2])
{
	rep_report *r = NULL;
	int err = build_report(s, o, pass, s->jobs[0].wl.coll.nsizes, &r);
	if (!err)
		err = hw_replay_write(r, o);
	rep_free(r);
	return err;
}

static int load(const replay_opts *o, scn_scenario **s)
{
	diag *d = diag_new();
	int err = d ? scn_load(o->file, NULL, s, d) : SIM_ENOMEM;
	char why[512];
	/* -o must not replace the scenario or a profile it read: said now,
	 * not after the whole replay */
	if (!err && scn_cli_protect_inputs(&(scn_cli){ .file = o->file }, *s))
		err = SIM_ENOMEM;
	if (!err && o->out && (err = atomic_check_target(o->out, why, sizeof why))) {
		if (hw_comm_rank() == 0)
			hw_error("%s", why);
		diag_free(d);
		return err;
	}
	if (err && hw_comm_rank() == 0) {
		if (d && diag_count(d)) {
			diag_print(d, stderr);
			/* the closing line dpusim's commands print (scn_cli_load) */
			hw_error("'%s' is not a valid scenario (%zu error%s)", o->file, diag_count(d),
				 diag_count(d) == 1 ? "" : "s");
		} else {
			hw_error("%s: %s", o->file, sim_strerror(err));
		}
	}
	diag_free(d);
	return err;
}

hw_xport *hw_replay_transport(const replay_opts *o, size_t max_msg, int stride, int block)
{
	hw_xport_opts xo = { .timeout_ms = o->timeout_ms, .mem = o->mem, .gid_index = -1,
			     .max_msg = max_msg, .stride = stride, .block = block };
	return strcmp(o->transport, "verbs") ? hw_tcp_new(&xo) : hw_verbs_new(&xo);
}

/* The largest size (a ring chunk never exceeds the whole). */
static size_t max_size(const scn_collective *c)
{
	size_t max_msg = 0;
	for (size_t i = 0; i < c->nsizes; i++)
		if ((size_t)c->sizes_bytes[i] > max_msg)
			max_msg = (size_t)c->sizes_bytes[i];
	return max_msg;
}

/* Can this run replay s (one sweep point, or the scenario)? 0, or 2 with
 * the reason said. Same answer on every rank (same inputs). */
static int point_check(const scn_scenario *s, const replay_opts *o)
{
	int err;
	if (s->njobs == 1 && s->jobs[0].wl.kind == SCN_WL_TRAINING && o->reps)
		return hw_replay_usage("%s: --reps applies to collective scenarios; a training "
				       "replay runs the scenario's iterations", o->where);
	if (s->njobs == 1 && s->jobs[0].wl.kind == SCN_WL_TRAINING)
		return hw_replay_train_check(s, o, hw_comm_size());
	if (s->njobs == 1 && s->jobs[0].wl.kind == SCN_WL_P2P)
		return hw_replay_p2p_check(s, o, hw_comm_size());
	err = replayable(s, o, hw_comm_size());
	if (!err && (o->data || o->scale != 1 || strcmp(o->compute, "cpu") || o->gemm_n))
		err = hw_replay_usage("%s: --data, --scale, --compute and --gemm-n apply to training "
				      "scenarios; this one is a collective workload", o->where);
	return err;
}

/* DPUSIM_HW_FAULT=tamper:RANK (a fault hook for tests): that rank flips a
 * ciphertext byte of every message of the crypto: host pass. *rank -1 when
 * unset; 2 (said) when malformed. */
static int tamper_rank(int *rank)
{
	const char *f = getenv("DPUSIM_HW_FAULT");
	char tail;
	*rank = -1;
	if (!f || !*f)
		return 0;
	if (sscanf(f, "tamper:%d%c", rank, &tail) != 1 || *rank < 0)
		return hw_replay_usage("DPUSIM_HW_FAULT='%s': the collective replay takes tamper:RANK",
				       f);
	return 0;
}

int hw_replay_key(uint64_t seed, const char *use, unsigned char key[HW_CRYPT_KEY])
{
	char text[96];
	unsigned len = 0;
	int n = snprintf(text, sizeof text, "dpusim-hw replay key, seed %llu, %s",
			 (unsigned long long)seed, use);
	if (EVP_Digest(text, (size_t)n, key, &len, EVP_sha256(), NULL) != 1 || len != HW_CRYPT_KEY)
		return hw_fail(SIM_EIO, "cannot derive the AES-256-GCM key (SHA-256 failed)");
	return 0;
}

void hw_replay_crypto_cost(const hw_crypt *c, hw_crypt_cost *out)
{
	out->cpu_s = hw_comm_sum(c->cpu_s);
	out->bytes = hw_comm_sum((double)c->bytes);
	out->msgs = hw_comm_sum((double)c->sealed);
}


/* The crypto: host pass: every message sealed by its sender and opened by
 * its receiver; the cipher's CPU time and bytes summed over the ranks. */
static int crypto_pass(hw_xport *x, const scn_scenario *s, const replay_opts *o, int tamper,
		       coll_pass *p)
{
	const scn_collective *coll = &s->jobs[0].wl.coll;
	unsigned char key[HW_CRYPT_KEY];
	hw_crypt c = { 0 };
	hw_xport *cx = NULL;
	int err = hw_replay_key(s->seed, "collective", key);
	if (!err && !(err = hw_crypt_init(&c, key)) &&
	    !(cx = hw_crypt_xport_new(x, &c, max_size(coll), tamper == x->rank)))
		err = hw_fail(SIM_ENOMEM, "out of memory for the AES-256-GCM buffers");
	if (!err && x->rank == 0)
		printf("crypto host: AES-256-GCM (OpenSSL EVP) on every rank\n");
	if (!err)
		err = replay_sizes(cx, &c, coll, reps_of(o, coll), p->cols);
	if (!err)
		hw_replay_crypto_cost(&c, &p->cost);
	hw_xport_free(cx);
	hw_crypt_fini(&c);
	return err;
}

/* Which passes the variants need: [0] plain, [1] crypto host. */
static void passes_wanted(const scn_scenario *s, const replay_opts *o, coll_pass pass[2])
{
	for (size_t v = 0; v < s->nvariants; v++)
		if (!not_replayed(&s->variants[v], o))
			pass[s->variants[v].crypto == SCN_CRYPTO_HOST].ran = true;
}

static int run_passes(const scn_scenario *s, const replay_opts *o, coll_pass pass[2], int tamper)
{
	/* room for the tag: the crypto pass sends through the same transport */
	hw_xport *x = hw_replay_transport(o, max_size(&s->jobs[0].wl.coll) + HW_CRYPT_TAG, 1, 0);
	int err = x ? 0 : SIM_EPEER;
	if (x && hw_comm_rank() == 0)
		printf("dpusim-hw replay %s: %d ranks over %s\n", s->name, x->size, o->transport);
	if (!err && pass[0].ran)
		err = replay_sizes(x, NULL, &s->jobs[0].wl.coll, reps_of(o, &s->jobs[0].wl.coll),
				   pass[0].cols);
	if (!err && pass[1].ran)
		err = crypto_pass(x, s, o, tamper, &pass[1]);
	hw_xport_free(x);
	return err;
}

/* A collective scenario on these ranks. Exit status 0, 1 (a wrong result,
 * or a message failing its tag check) or 2, the same on every rank. */
static int replay_coll(const scn_scenario *s, const replay_opts *o)
{
	size_t n = s->jobs[0].wl.coll.nsizes;
	coll_pass pass[2] = { { .cols = calloc(n, sizeof(rep_collective)) },
			      { .cols = calloc(n, sizeof(rep_collective)) } };
	int tamper = -1, st;
	int err = pass[0].cols && pass[1].cols ? 0 : hw_fail(2, "out of memory");
	if (!err)
		err = tamper_rank(&tamper);
	if (!hw_comm_all(err == 0))
		return free(pass[0].cols), free(pass[1].cols), 2;
	passes_wanted(s, o, pass);
	err = run_passes(s, o, pass, tamper);
	if (err && err != SIM_EVERIFY && err != SIM_EPEER) {
		hw_error("replay failed (%s); ending every rank", sim_strerror(err));
		hw_comm_abort(2);
	}
	if (!err && hw_comm_rank() == 0)
		err = write_out(s, o, pass);
	free(pass[0].cols);
	free(pass[1].cols);
	st = err == SIM_EVERIFY ? 1 : err ? 2 : 0;
	/* rank 0 alone writes: the others learn whether that worked */
	return !hw_comm_all(st == 0) && st == 0 ? 2 : st;
}

/* Sweep point i of s (s itself when it has no sweep); NULL said. Free
 * with point_free. */
static scn_scenario *point_of(scn_scenario *s, size_t i)
{
	scn_scenario *p = NULL;
	diag *d;
	if (s->sweep.points <= 1)
		return s;
	d = diag_new();
	if (!d || scn_sweep_point(s, i, &p, d)) {
		if (hw_comm_rank() == 0 && d)
			diag_print(d, stderr);
		hw_fail(2, "%s: cannot resolve sweep point %zu", s->file, i);
		p = NULL;
	}
	diag_free(d);
	return p;
}

static void point_free(scn_scenario *s, scn_scenario *p)
{
	if (p != s)
		scn_free(p);
}

/* Names point i in o (messages, the report) and, for a whole sweep, its
 * report file DIR/NAME.pINDEX.json, as `dpusim sweep -o DIR` names it. */
static void name_point(const scn_scenario *s, size_t i, const replay_opts *base, replay_opts *o,
		       char *label, size_t lcap, char *where, size_t wcap, char *out, size_t ocap)
{
	sweep sw = { .s = s };
	*o = *base;
	if (s->sweep.points <= 1)
		return;
	sweep_label(&sw, i, label, lcap);
	snprintf(where, wcap, "%s, sweep point %zu (%s)", base->file, i, label);
	o->where = where;
	o->point_label = label;
	o->point_index = i;
	o->points = s->sweep.points;
	if (base->point < 0) {
		snprintf(out, ocap, "%s/%s.p%zu.json", base->out, s->name, i);
		o->out = out;
	}
}

/* The points to run, [*first, *last]; 0, or 2 said. Every rank reaches
 * the same answer. */
static int select_points(const scn_scenario *s, const replay_opts *o, size_t *first,
			 size_t *last)
{
	size_t n = s->sweep.points;
	*first = 0, *last = n - 1;
	if (o->point >= 0 && (size_t)o->point >= n)
		return hw_replay_usage("--point %ld: %s has %zu sweep point%s (0 to %zu)", o->point,
				       o->file, n, n == 1 ? "" : "s", n - 1);
	if (o->point >= 0)
		*first = *last = (size_t)o->point;
	if (n <= 1 || o->point >= 0)
		return 0;
	if (!o->out)
		return hw_replay_usage("%s: a sweep of %zu points writes one report per point: give "
				       "-o DIR (DIR/%s.pINDEX.json, as 'dpusim sweep -o DIR' names "
				       "them), or --point INDEX for one point", o->file, n, s->name);
	return 0;
}

/* Rank 0 makes -o DIR for a whole sweep; 0, or 2 on every rank. */
static int make_out_dir(const scn_scenario *s, const replay_opts *o)
{
	char last[4096]; /* run_points' out: the last point's report, the longest name */
	struct stat st;
	int err = 0;
	if (s->sweep.points <= 1 || o->point >= 0)
		return 0;
	if ((size_t)snprintf(last, sizeof last, "%s/%s.p%zu.json", o->out, s->name,
			     s->sweep.points - 1) >= sizeof last)
		err = hw_comm_rank() == 0 ? hw_fail(2, "-o '%s': a point's report would be named "
						    "past the path limit (%zu bytes)", o->out,
						    sizeof last - 1)
					  : 2; /* every rank finds it, rank 0 says it */
	else if (hw_comm_rank() == 0 && mkdir(o->out, 0777) && errno != EEXIST)
		err = hw_fail(2, "-o '%s': cannot create the folder: %s", o->out, strerror(errno));
	else if (hw_comm_rank() == 0 && (stat(o->out, &st) || !S_ISDIR(st.st_mode)))
		err = hw_fail(2, "-o '%s': a sweep writes one report per point into a folder; this "
			      "is not one", o->out);
	return hw_comm_all(err == 0) ? 0 : 2;
}

/* Checks every selected point before any runs: a sweep is refused whole,
 * naming each point that cannot be replayed here, rather than half run. */
static int check_points(scn_scenario *s, const replay_opts *base, size_t first, size_t last)
{
	char label[SWEEP_LABEL_MAX], where[SWEEP_LABEL_MAX + 4096], out[4096];
	int bad = 0;
	for (size_t i = first; i <= last && bad < 5; i++) {
		replay_opts o;
		scn_scenario *p = point_of(s, i);
		name_point(s, i, base, &o, label, sizeof label, where, sizeof where, out, sizeof out);
		bad += !p || point_check(p, &o);
		point_free(s, p);
	}
	return bad ? 2 : 0;
}

/* Replays points first..last in order; stops at the first that fails.
 * The worst exit status. */
static int run_points(scn_scenario *s, const replay_opts *base, size_t first, size_t last)
{
	char label[SWEEP_LABEL_MAX], where[SWEEP_LABEL_MAX + 4096], out[4096];
	int st = 0;
	for (size_t i = first; i <= last && st == 0; i++) {
		replay_opts o;
		scn_scenario *p = point_of(s, i);
		name_point(s, i, base, &o, label, sizeof label, where, sizeof where, out, sizeof out);
		if (p && o.point_label && hw_comm_rank() == 0)
			printf("sweep point %zu of %zu: %s\n", i, s->sweep.points, label);
		if (!p)
			st = 2;
		else if (p->njobs == 1 && p->jobs[0].wl.kind == SCN_WL_TRAINING)
			st = hw_replay_train(p, &o);
		else if (p->njobs == 1 && p->jobs[0].wl.kind == SCN_WL_P2P)
			st = hw_replay_p2p(p, &o);
		else
			st = replay_coll(p, &o);
		point_free(s, p);
		if (st && i < last && hw_comm_rank() == 0)
			hw_error("sweep point %zu failed: points %zu to %zu are not replayed", i, i + 1,
				 last);
	}
	return st;
}

int hw_cmd_replay(int argc, char **argv)
{
	replay_opts o;
	scn_scenario *s = NULL;
	size_t first = 0, last = 0;
	int err = parse(argc, argv, &o);
	if (err)
		return err;
	if (hw_comm_init(&argc, &argv, o.timeout_ms, o.start_timeout_ms))
		return 2;
	err = load(&o, &s) ? 2 : 0;
	if (!err)
		err = select_points(s, &o, &first, &last);
	if (!err)
		err = check_points(s, &o, first, last);
	if (!hw_comm_all(err == 0))
		err = 2;
	if (!err)
		err = make_out_dir(s, &o);
	if (!err)
		err = run_points(s, &o, first, last);
	scn_free(s);
	hw_comm_finalize();
	return err;
}
