/* dpusim bench flows|scale: measured figures of the flow solver and of
 * collectives at scale, never pass/fail. Each figure is the median of
 * --reps runs; peak_rss_kb is the process's peak so far (sizes run in
 * increasing order, so it is the peak of the largest size yet). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "models/coll.h"
#include "models/fabric.h"
#include "sim/engine.h"
#include "sim/err.h"
#include "sim/flow.h"
#include "tools/bench_coll.h"
#include "tools/bench_train.h"
#include "tools/cli.h"

#define MAX_REPS 101
/* 1 PiB: a ring all-reduce of it on the 50 GB/s links below takes about
 * 2 x 2^50 / 50e9 = 45000 simulated seconds, well inside the engine's
 * 106 days; 2^64-1 bytes ran past the end of time and aborted. */
#define MAX_SCALE_BYTES (UINT64_C(1) << 50)

static double median(double *v, size_t n)
{
	gsl_sort(v, 1, n);
	return gsl_stats_median_from_sorted_data(v, 1, n);
}

/* --reps R, and --quick (only the first, smallest case: for tests). */
static int parse_reps(int argc, char **argv, const char *what, unsigned long long *reps,
		      size_t *ncases)
{
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--reps") && cli_parse_u64(v, reps) && *reps > 0 && *reps <= MAX_REPS)
			i++;
		else if (!strcmp(argv[i], "--quick"))
			*ncases = 1;
		else if (!strcmp(argv[i], "--reps"))
			return cli_usage_error("bench %s: --reps wants a count from 1 to %d, not '%s'", what,
					       MAX_REPS, v ? v : "(nothing)");
		else
			return cli_usage_error("bench %s: unknown option '%s' (see 'dpusim bench --help')",
					       what, argv[i]);
	}
	return 0;
}

/* n flows, each alone on its own resource (links = n) or all on one
 * (links = 1), sizes spread so completions do not coincide. Returns wall s. */
static double flows_run(uint32_t n, uint32_t links)
{
	sim_engine *eng = sim_engine_new();
	flow_net *net = flow_net_new(eng);
	double t0, t1;
	if (!net)
		SIM_DIE("out of memory in the flow benchmark");
	for (uint32_t i = 0; i < links; i++)
		if (flow_res_add(net, 50e9, NULL))
			SIM_DIE("out of memory in the flow benchmark");
	t0 = cli_wall_s();
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = i % links;
		flow_spec fs = { .bytes = 1000000 + (uint64_t)i * 4099, .path = &r, .path_len = 1 };
		if (flow_start(net, &fs, NULL))
			SIM_DIE("out of memory in the flow benchmark");
	}
	sim_run(eng);
	t1 = cli_wall_s();
	SIM_ASSERT(!sim_error(eng), "flow benchmark: %s", sim_error_msg(eng)); /* fixed sizes: a bug */
	SIM_ASSERT(flow_bytes_sent(net) == flow_bytes_delivered(net), "flow benchmark lost bytes");
	flow_net_free(net);
	sim_engine_free(eng);
	return t1 - t0;
}

int bench_flows(int argc, char **argv)
{
	static const struct { const char *name; uint32_t n, links; } cases[] = {
		{ "independent", 1000, 1000 }, { "independent", 100000, 100000 },
		{ "independent", 1000000, 1000000 },
		{ "shared", 100, 1 }, { "shared", 1000, 1 }, { "shared", 4000, 1 },
	};
	unsigned long long reps = 5;
	size_t ncases = sizeof cases / sizeof cases[0];
	int rc = parse_reps(argc, argv, "flows", &reps, &ncases);
	if (rc)
		return rc;
	for (size_t c = 0; c < ncases; c++) {
		double wall[MAX_REPS], w;
		for (unsigned long long k = 0; k < reps; k++)
			wall[k] = flows_run(cases[c].n, cases[c].links);
		w = median(wall, (size_t)reps);
		printf("flows %s n=%u wall_s=%.6f flows_per_s=%.0f peak_rss_kb=%ld\n", cases[c].name,
		       cases[c].n, w, cases[c].n / w, cli_peak_rss_kb());
		fflush(stdout);
	}
	return CLI_OK;
}

/* One ring all-reduce of `bytes` on n ranks under one switch (NDR 400 Gb/s
 * ports; the figures only set the simulated time, not the work). */
static double ring_run(uint32_t n, uint64_t bytes, double *sim_s)
{
	fab_config fc = { .topo = FAB_SINGLE_SWITCH, .nodes = n, .gpus_per_node = 1,
			  .nics_per_node = 1, .link_Bps = 50e9, .hop_lat_ps = 60 * SIM_NS,
			  .switch_lat_ps = 130 * SIM_NS, .seed = 1 };
	coll_config cc = { .transport = { .kind = COLL_RDMA_GDR } };
	coll_params p = { .op = COLL_ALLREDUCE, .algo = COLL_RING, .bytes = bytes };
	coll_result r;
	sim_engine *eng = sim_engine_new();
	flow_net *net = flow_net_new(eng);
	fab *f = NULL;
	coll_ctx *c = NULL;
	double t0 = cli_wall_s(), t1;
	int rc = net ? fab_new(&fc, net, &f) : SIM_ENOMEM;
	if (rc || (rc = coll_ctx_new(eng, net, f, &cc, &c)) || (rc = coll_run(c, &p, &r)))
		SIM_DIE("scale benchmark: %s", sim_error(eng) ? sim_error_msg(eng) : sim_strerror(rc));
	t1 = cli_wall_s();
	*sim_s = sim_time_to_s(r.time_ps);
	coll_ctx_free(c);
	fab_free(f);
	flow_net_free(net);
	sim_engine_free(eng);
	return t1 - t0;
}

static int parse_ranks(const char *v, uint32_t *out, int max)
{
	int n = 0;
	char *copy = v && !cli_list_has_empty(v) ? strdup(v) : NULL, *save = NULL;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
		unsigned long long r;
		if (n == max || !cli_parse_u64(t, &r) || r < 2 || r > 1000000) {
			n = -1;
			break;
		}
		out[n++] = (uint32_t)r;
	}
	free(copy);
	return n > 0 ? n : -1;
}

/* "NET/ROUTING/M|gB[/lumped],..." into cases (pointing into a copy, *keep,
 * freed by the caller): how many, or -1. */
static int parse_cases(const char *v, bench_train_case *cases, int max, char **keep)
{
	static const char *const nets[] = { "host-tcp", "rdma", "rdma-gdr" };
	char *save = NULL, *tok;
	int n = 0;
	free(*keep);
	if (cli_list_has_empty(v) || !(*keep = strdup(v)))
		return -1;
	for (tok = strtok_r(*keep, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *r = strchr(tok, '/'), *m = r ? strchr(r + 1, '/') : NULL, *end;
		char *lump = m ? strchr(m + 1, '/') : NULL;
		unsigned long mb;
		bool net_ok = false;
		if (!m || n == max || (lump && strcmp(lump, "/lumped")))
			return -1;
		*r++ = '\0', *m++ = '\0';
		if (lump)
			*lump = '\0';
		for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++)
			net_ok |= !strcmp(tok, nets[k]);
		/* M microbatches per pipeline, or gB: a global batch of B at every size */
		mb = strtoul(m + (*m == 'g'), &end, 10);
		if (!net_ok || (strcmp(r, "ecmp") && strcmp(r, "dmodk") && strcmp(r, "adaptive")) ||
		    *end || !isdigit((unsigned char)m[*m == 'g']) || mb < 1 || mb > 100000)
			return -1;
		cases[n++] = (bench_train_case){ .network = tok, .routing = r,
						 .microbatches = *m == 'g' ? 0 : (uint32_t)mb,
						 .global_batch = *m == 'g' ? (uint32_t)mb : 0,
						 .lumped = lump != NULL };
	}
	return n > 0 ? n : -1;
}

int bench_scale(int argc, char **argv)
{
	uint32_t ranks[16] = { 512, 1024, 2048, 4096 };
	/* What planners run (issue 14): 64 microbatches per pipeline, host-tcp
	 * and RDMA; D-mod-K, the routing an InfiniBand fabric such as this
	 * one gets by default, ECMP and adaptive; exact ring steps and the
	 * opt-in lumped ones; from one pipeline (128 GPUs, dp 1) to 16,384 GPUs. */
	uint32_t gpus[16] = { 128, 1024, 4096, 16384 };
	int nranks = 4, ngpus = 4, ncases = 7;
	bench_train_case cases[8] = {
		{ .network = "host-tcp", .routing = "dmodk", .microbatches = 64 },
		{ .network = "rdma-gdr", .routing = "dmodk", .microbatches = 64 },
		{ .network = "host-tcp", .routing = "ecmp", .microbatches = 64 },
		{ .network = "rdma-gdr", .routing = "ecmp", .microbatches = 64 },
		{ .network = "rdma-gdr", .routing = "adaptive", .microbatches = 64 },
		{ .network = "host-tcp", .routing = "ecmp", .microbatches = 64, .lumped = true },
		{ .network = "rdma-gdr", .routing = "ecmp", .microbatches = 64, .lumped = true },
	};
	char *spec = NULL;
	unsigned long long bytes = UINT64_C(1) << 30, reps = 3;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--reps") && cli_parse_u64(v, &reps) && reps > 0 && reps <= MAX_REPS)
			i++;
		else if (!strcmp(argv[i], "--bytes") && cli_parse_u64(v, &bytes) && bytes > 0 &&
			 bytes <= MAX_SCALE_BYTES)
			i++;
		else if (!strcmp(argv[i], "--ranks") && (nranks = parse_ranks(v, ranks, 16)) > 0)
			i++;
		else if (!strcmp(argv[i], "--train-gpus") && v && !strcmp(v, "none"))
			ngpus = 0, i++;
		else if (!strcmp(argv[i], "--train-gpus") && (ngpus = parse_ranks(v, gpus, 16)) > 0)
			i++;
		else if (!strcmp(argv[i], "--train-cases") && v && (ncases = parse_cases(v, cases, 8, &spec)) > 0)
			i++;
		else if (!strcmp(argv[i], "--train-cases")) {
			free(spec);
			return cli_usage_error("bench scale: --train-cases wants NETWORK/ROUTING/"
					       "MICROBATCHES[/lumped][,...] (host-tcp, rdma or rdma-gdr; "
					       "ecmp, dmodk or adaptive; 1 to 100000 per pipeline, or gN "
					       "for a global batch of N at every size; /lumped: ring steps "
					       "lumped; at most 8, no item empty), not '%s'",
					       v ? v : "(nothing)");
		} else if (!strcmp(argv[i], "--reps"))
			return cli_usage_error("bench scale: --reps wants a count from 1 to %d, not '%s'",
					       MAX_REPS, v ? v : "(nothing)");
		else if (!strcmp(argv[i], "--bytes"))
			return cli_usage_error("bench scale: --bytes wants whole bytes from 1 to %llu, "
					       "not '%s'", (unsigned long long)MAX_SCALE_BYTES,
					       v ? v : "(nothing)");
		else if (!strcmp(argv[i], "--ranks") || !strcmp(argv[i], "--train-gpus"))
			return cli_usage_error("bench scale: %s wants counts from 2 to 1000000, comma "
					       "separated, no item empty (at most 16)%s, not '%s'", argv[i],
					       strcmp(argv[i], "--ranks") ? ", or none" : "",
					       v ? v : "(nothing)");
		else
			return cli_usage_error("bench scale: unknown option '%s' (see 'dpusim bench --help')",
					       argv[i]);
	}
	for (int i = 0; i < nranks; i++) {
		double wall[MAX_REPS], sim_s = 0;
		for (unsigned long long k = 0; k < reps; k++)
			wall[k] = ring_run(ranks[i], bytes, &sim_s);
		printf("coll ring ranks=%u bytes=%llu sim_time_s=%.9f wall_s=%.6f peak_rss_kb=%ld\n",
		       ranks[i], bytes, sim_s, median(wall, (size_t)reps), cli_peak_rss_kb());
		fflush(stdout);
	}
	int rc = bench_train(gpus, ngpus, cases, ncases);
	free(spec);
	return rc;
}
