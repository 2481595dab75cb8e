/* dpusim bench scale, training part: one iteration of GPT-3 175B (tp 8,
 * pp 16, data-parallel to fill) at growing GPU counts, each in its own
 * process so its peak memory is its own. Figures, never pass/fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "models/scenario.h"
#include "models/train.h"
#include "report/atomic.h"
#include "sim/err.h"
#include "tools/bench_train.h"
#include "tools/cli.h"

/* The scenario of scenarios/gpt3-175b-1024xh100.yaml reduced to what the
 * benchmark needs, with the node count as the parameter; with full
 * recomputation (as Megatron-LM trains its largest models, SC21), since at
 * 128 GPUs (dp 1) ZeRO shards nothing and bf16's fp32 gradients leave a
 * GPU 81.6 GB of its 80 without it. */
static const char scenario_fmt[] =
	"name: bench-gpt3\n"
	"seed: 1\n"
	"cluster:\n"
	"  nodes: %u\n"
	"  gpus_per_node: 8\n"
	"  gpu: H100-SXM5\n"
	"  cpu: Xeon-8480C\n"
	"  host_costs: host-costs-linux\n"
	"  nic: { profile: ConnectX-7-NDR, rdma_latency: 0.6us }\n"
	"  nics_per_node: 8\n"
	"  fabric:\n"
	"    topology: fat-tree\n"
	"    switch: { profile: QM9700-NDR, latency: 130ns }\n"
	"    tiers: %u\n"
	"    routing: %s\n"
	"workload:\n"
	"  model: gpt3-175b\n"
	"  precision: bf16\n"
	"  parallelism: { tp: 8, pp: 16, zero_stage: 1 }\n"
	"  batch: { global: %llu, micro: 1 }\n"
	"  recompute: true\n"
	"  iterations: 1\n"
	"variants:\n"
	"  - { name: %s, network: %s }\n"
	"collectives: { ring_steps: %s }\n";

/* What a size's child hands its parent for the curve (in memory shared
 * across the fork: the child's figures are its own process's). */
struct size_result {
	bool ok;
	double wall_s;
	uint64_t events;
	uint64_t solves;
	double work;  /* GPUs x microbatches per pipeline */
};

/* One size in this process: prints the line (and fills *out) or an error. */
static int one_size(uint32_t gpus, const bench_train_case *k, struct size_result *out)
{
	/* pp 16 and tp 8: dp = gpus / 128 pipelines of k->microbatches each */
	unsigned long long global = k->microbatches ? (unsigned long long)k->microbatches * (gpus / 128)
						    : k->global_batch;
	char text[2048];
	scn_scenario *s = NULL;
	diag *d = diag_new();
	train_config c;
	train_result r;
	double t0, t1;
	int rc;
	snprintf(text, sizeof text, scenario_fmt, gpus / 8, gpus > 2048 ? 3u : 2u, k->routing, global,
		 k->network, k->network, k->lumped ? "lumped" : "exact");
	rc = d ? scn_load_buffer("bench-gpt3", text, strlen(text), NULL, &s, d) : SIM_ENOMEM;
	if (!rc)
		rc = train_config_of(s, &s->jobs[0], &s->variants[0], s->seed, &c, d, NULL);
	if (!rc) {
		c.warmup = 0; /* one iteration, from a cold start */
		t0 = cli_wall_s();
		rc = train_sim(&c, &r, d);
		t1 = cli_wall_s();
	}
	if (rc) {
		if (d)
			diag_print(d, stderr);
	} else {
		/* wall_s to the microsecond: the curve's ratios are recomputed
		 * from these lines, and a 128-GPU size takes milliseconds */
		printf("train gpt3-175b gpus=%u network=%s routing=%s microbatches=%llu wall_s=%.6f "
		       "peak_rss_kb=%ld events=%llu solves=%llu iteration_s=%.4f ring_steps=%s\n", gpus,
		       k->network, k->routing, global / (gpus / 128), t1 - t0, cli_peak_rss_kb(),
		       (unsigned long long)r.events, (unsigned long long)r.solves, r.iter_s[0],
		       k->lumped ? "lumped" : "exact");
		*out = (struct size_result){ .ok = true, .wall_s = t1 - t0, .events = r.events,
					     .solves = r.solves,
					     .work = (double)gpus * (double)(global / (gpus / 128)) };
		train_result_release(&r);
	}
	scn_free(s);
	diag_free(d);
	return rc;
}

/* The case as --train-cases spells it, with its ring steps. */
static void case_label(const bench_train_case *k, char *buf, size_t n)
{
	if (k->microbatches)
		snprintf(buf, n, "%s/%s/%u %s", k->network, k->routing, k->microbatches,
			 k->lumped ? "lumped" : "exact");
	else
		snprintf(buf, n, "%s/%s/g%u %s", k->network, k->routing, k->global_batch,
			 k->lumped ? "lumped" : "exact");
}

/* The curve of one case: per step between consecutive sizes that ran, how
 * wall time, work (GPUs x microbatches), events and the flow solver's
 * re-solves grew, and the wall time per event at both ends, so growth
 * reads as algorithmic (events grow faster than work), the solver's
 * (re-solves outgrow events: a change reaches more shared resources, as
 * ECMP's collisions grow with the fabric) or per-event otherwise (ns/event
 * grows: memory). Nothing when fewer than two sizes ran. */
static void print_curve(const uint32_t *gpus, int n, const bench_train_case *k,
			const struct size_result *res)
{
	char label[128];
	int prev = -1, steps = 0;
	case_label(k, label, sizeof label);
	for (int i = 0; i < n; i++) {
		const struct size_result *a = &res[prev < 0 ? i : prev], *b = &res[i];
		if (!b->ok || !b->events)
			continue;
		char solves[32] = "-"; /* none at the smaller size: no ratio */
		if (prev >= 0 && a->solves)
			snprintf(solves, sizeof solves, "%.3g", (double)b->solves / (double)a->solves);
		if (prev >= 0)
			printf("%s %u->%u wall x%.3g work x%.3g events x%.3g solves x%s ns/event %.0f->%.0f",
			       steps++ ? ";" : "", gpus[prev], gpus[i], b->wall_s / a->wall_s,
			       b->work / a->work, (double)b->events / (double)a->events, solves,
			       1e9 * a->wall_s / (double)a->events, 1e9 * b->wall_s / (double)b->events);
		else
			for (int j = i + 1; j < n; j++)
				if (res[j].ok && res[j].events) {
					printf("scale %s:", label); /* a step will follow */
					break;
				}
		prev = i;
	}
	if (steps)
		putchar('\n');
}

int bench_train(const uint32_t *gpus, int n, const bench_train_case *cases, int ncases)
{
	int failed = 0;
	pid_t parent = getpid();
	struct size_result *res = n > 0 && ncases > 0 ? mmap(NULL, sizeof *res * (size_t)(n * ncases),
						    PROT_READ | PROT_WRITE,
						    MAP_SHARED | MAP_ANONYMOUS, -1, 0)
					     : NULL;
	if (res == MAP_FAILED)
		return cli_error("bench scale: out of memory"), CLI_USAGE;
	for (int i = 0; i < n * ncases; i++) {
		const bench_train_case *k = &cases[i / n];
		pid_t pid;
		int status;
		fflush(stdout);
		res[i].ok = false;
		pid = fork();
		if (pid == 0) {
			atomic_worker_init(parent);
			_exit(one_size(gpus[i % n], k, &res[i]) || fflush(stdout) ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			cli_error("bench scale: training at %u GPUs (%s, %s) failed", gpus[i % n],
				  k->network, k->routing);
			res[i].ok = false;
			failed++;
		}
		if (i % n == n - 1)
			print_curve(gpus, n, k, &res[i - n + 1]);
	}
	if (res)
		munmap(res, sizeof *res * (size_t)(n * ncases));
	return failed ? CLI_USAGE : CLI_OK;
}
