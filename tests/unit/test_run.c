/* tools/run.c: one collective model. A collective of a size on given
 * hardware costs the same through `dpusim run` (a collective benchmark
 * scenario), `dpusim coll` (its options spelled from the same scenario's
 * fabric) and the training model (the tensor-parallel all-reduce of a
 * training scenario on that node), under NCCL's cost model by default and
 * under the closed form when the scenario says `collectives: { protocol:
 * ideal }` (coll: --proto ideal). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "fixture.h"
#include "models/setup.h"
#include "sim/err.h"
#include "tools/commands.h"
#include "report/report.h"
#include "tools/progress.h"
#include "tools/run.h"
#include "tools/sweep_eta.h"

/* One node of 8 A100s (NVSwitch; NCCL's 24 channels, the profile's
 * nccl_channels) or two, 8 HDR adapters each, one switch. */
#define CLUSTER(nodes)                                                              \
	"cluster:\n"                                                                \
	"  nodes: " nodes "\n"                                                      \
	"  gpus_per_node: 8\n"                                                      \
	"  gpu: A100-SXM4-80GB\n"                                                   \
	"  cpu: EPYC-7742\n"                                                        \
	"  nic: ConnectX-6-HDR\n"                                                   \
	"  nics_per_node: 8\n"                                                      \
	"  fabric: { topology: single-switch, switch: QM8700-HDR }\n"               \
	"variants: [{ name: gdr, network: rdma-gdr }]\n"

/* The tensor-parallel all-reduce of megatron-18.4b at micro batch 1:
 * sequence 2048 x hidden 6144 x 2 bytes (fp16). */
#define TP_BYTES "25165824"

/* The report of `dpusim run` on text. Free with rep_free. */
static rep_report *run_text(const char *text, scn_scenario **sp)
{
	scn_scenario *s = fx_load(text);
	diag *d = diag_new();
	rep_report *rep = NULL;
	int rc = run_scenario(s, &(run_opts){ 0 }, &rep, d);
	if (rc)
		diag_print(d, stderr);
	ck_assert_int_eq(rc, SIM_OK);
	diag_free(d);
	if (sp)
		*sp = s;
	else
		scn_free(s);
	return rep;
}

/* Time of collective row i of the first variant, and its size. */
static double row_s(const rep_report *rep, size_t i, uint64_t *bytes)
{
	const rep_variant *v = rep_variant_at(rep, 0);
	ck_assert_uint_gt(rep_variant_ncollectives(v), i);
	if (bytes)
		*bytes = rep_variant_collective(v, i)->bytes;
	return rep_variant_collective(v, i)->time_s;
}

/* `dpusim coll` on the fabric and transport the scenario s gives `ranks`
 * ranks, every option spelled from setup's figures and the GPU and NIC
 * profiles (NCCL's architecture and PCIe figure: --gpu, --nic), at `bytes`, with
 * extra (NULL-terminated) options after them: the time in seconds. */
static double coll_s(const scn_scenario *s, uint32_t ranks, const char *bytes,
		     const char *const *extra)
{
	fab_config fc;
	coll_transport t;
	setup_host h;
	diag *d = diag_new();
	char a[16][64], out[4096] = "";
	char *argv[48];
	int argc = 0, fd = dup(1);
	FILE *tmp = tmpfile();
	ck_assert_int_eq(setup_host_of(s, &h, d), 0);
	ck_assert_int_eq(setup_fabric(s, &s->variants[0], ranks, &fc, d), 0);
	ck_assert_int_eq(setup_transport(s, &s->variants[0], &h, &t, d, NULL), 0);
	ck_assert_int_eq(fc.topo, FAB_SINGLE_SWITCH);
	ck_assert_int_eq(t.kind, COLL_RDMA_GDR);
	ck_assert(t.conn_cap_Bps == 0 && t.jitter_mean_ps == 0);
	diag_free(d);
	snprintf(a[0], sizeof a[0], "%u", ranks);
	snprintf(a[1], sizeof a[1], "%u", fc.gpus_per_node);
	snprintf(a[2], sizeof a[2], "%u", fc.nics_per_node);
	snprintf(a[3], sizeof a[3], "%.17gBps", fc.link_Bps);
	snprintf(a[4], sizeof a[4], "%.17gBps", fc.nvlink_Bps);
	snprintf(a[5], sizeof a[5], "%.17gBps", fc.pcie_Bps);
	snprintf(a[6], sizeof a[6], "%.17gBps", fc.host_mem_Bps);
	snprintf(a[7], sizeof a[7], "%lldps", (long long)fc.hop_lat_ps);
	snprintf(a[8], sizeof a[8], "%lldps", (long long)fc.switch_lat_ps);
	snprintf(a[9], sizeof a[9], "%lldps", (long long)fc.nvlink_lat_ps);
	snprintf(a[10], sizeof a[10], "%lldps", (long long)fc.pcie_lat_ps);
	snprintf(a[11], sizeof a[11], "%lldps", (long long)t.msg_lat_ps);
	snprintf(a[12], sizeof a[12], "%llu", s->seed);
	const char *fixed[] = { "coll", "--json", "--op", "allreduce", "--transport", "rdma-gdr",
				"--bytes", bytes, "--ranks", a[0], "--gpus-per-node", a[1],
				"--nics-per-node", a[2], "--link", a[3], "--nvlink", a[4],
				"--pcie", a[5], "--host-mem", a[6], "--hop-latency", a[7],
				"--switch-latency", a[8], "--nvlink-latency", a[9],
				"--pcie-latency", a[10], "--msg-latency", a[11], "--seed", a[12],
				"--gpu", s->cluster.gpu.name, "--nic", s->cluster.nic.name };
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		argv[argc++] = (char *)fixed[i];
	for (size_t i = 0; extra && extra[i]; i++)
		argv[argc++] = (char *)extra[i];
	ck_assert(tmp && fd >= 0);
	fflush(stdout);
	dup2(fileno(tmp), 1);
	int rc = cmd_coll(argc, argv);
	fflush(stdout);
	dup2(fd, 1);
	close(fd);
	ck_assert_int_eq(rc, 0);
	rewind(tmp);
	out[fread(out, 1, sizeof out - 1, tmp)] = '\0';
	fclose(tmp);
	const char *at = strstr(out, "\"time_us\": ");
	ck_assert_msg(at != NULL, "coll printed: %s", out);
	return strtod(at + strlen("\"time_us\": "), NULL) * 1e-6;
}

/* One node: the tensor-parallel all-reduce of a training job, the same
 * all-reduce as a benchmark, and as `dpusim coll` take one time, under
 * either model; the models differ. */
static void one_node(const char *proto, double *t_out)
{
	char train[2048], bench[2048];
	snprintf(train, sizeof train, "name: t\n%s" CLUSTER("1")
		 "workload:\n  model: megatron-18.4b\n  precision: fp16\n  recompute: true\n"
		 "  parallelism: { tp: 8, pp: 1 }\n  batch: { global: 8, micro: 1 }\n"
		 "  iterations: 1\n", proto);
	snprintf(bench, sizeof bench, "name: b\n%s" CLUSTER("1")
		 "workload:\n  kind: collective\n  collective: { op: allreduce, sizes: ["
		 TP_BYTES "B] }\n", proto);
	uint64_t tb, bb;
	scn_scenario *s;
	rep_report *rt = run_text(train, NULL), *rb = run_text(bench, &s);
	double t_train = row_s(rt, 0, &tb), t_bench = row_s(rb, 0, &bb);
	const char *ideal[] = { "--proto", "ideal", NULL }, *nccl[] = { "--channels", "24", NULL };
	double t_coll = coll_s(s, 8, TP_BYTES, *proto ? ideal : nccl);
	ck_assert_uint_eq(tb, 25165824); /* the row is the tensor-parallel all-reduce */
	ck_assert_uint_eq(bb, tb);
	/* the benchmark's row is the mean of its 20 iterations: a rounding apart */
	ck_assert_msg(fabs(t_train - t_bench) <= 1e-12 * t_bench, "%s training %.17g s, run %.17g s",
		      proto, t_train, t_bench);
	/* coll prints microseconds to 6 decimals: one picosecond */
	ck_assert_msg(fabs(t_coll - t_bench) <= 1e-12, "%s coll %.12g s, run %.12g s", proto,
		      t_coll, t_bench);
	ck_assert_ptr_nonnull(strstr(rep_info(rt, "collectives"), *proto ? "ideal closed form" : "NCCL's cost model"));
	ck_assert_str_eq(rep_info(rt, "collectives"), rep_info(rb, "collectives"));
	*t_out = t_bench;
	rep_free(rt);
	rep_free(rb);
	scn_free(s);
}

START_TEST(one_node_same_time)
{
	double nccl, ideal;
	one_node("", &nccl);
	one_node("collectives: { protocol: ideal }\n", &ideal);
	ck_assert_msg(nccl > ideal * 1.05, "NCCL %.9g s, ideal %.9g s", nccl, ideal);
}
END_TEST

/* Across nodes: a benchmark scenario and `dpusim coll` on its fabric, a
 * latency-bound size and a bandwidth-bound one, under NCCL's model (the
 * default of both) and the closed form (the scenario's key, coll's
 * --proto ideal). */
START_TEST(two_nodes_same_time)
{
	static const char *const proto[] = { "", "collectives: { protocol: ideal }\n" };
	const char *ideal[] = { "--proto", "ideal", NULL };
	double t[2][2];
	for (int p = 0; p < 2; p++) {
		char bench[2048];
		scn_scenario *s;
		snprintf(bench, sizeof bench, "name: b\n%s" CLUSTER("2")
			 "workload:\n  kind: collective\n  collective: { op: allreduce, "
			 "sizes: [1MiB, 256MiB] }\n", proto[p]);
		rep_report *rb = run_text(bench, &s);
		for (int i = 0; i < 2; i++) {
			double want = row_s(rb, (size_t)i, NULL);
			double got = coll_s(s, 16, i ? "256MiB" : "1MiB", p ? ideal : NULL);
			ck_assert_msg(fabs(got - want) <= 1e-12, "%s row %d: coll %.12g s, run %.12g s",
				      proto[p], i, got, want);
			t[p][i] = want;
		}
		rep_free(rb);
		scn_free(s);
	}
	ck_assert(t[0][0] > 2 * t[1][0]); /* NCCL's latencies dominate at 1 MiB */
	ck_assert(t[0][1] > t[1][1]);
}
END_TEST

/* The scenario key takes nccl or ideal, and nothing else. */
START_TEST(protocol_key)
{
	const char *bad = "name: b\ncollectives: { protocol: simple }\n" CLUSTER("1")
			  "workload:\n  kind: collective\n  collective: { op: allreduce, sizes: [1MiB] }\n";
	diag *d = diag_new();
	scn_scenario *s = NULL;
	ck_assert_int_eq(scn_load_buffer("t.yaml", bad, strlen(bad), NULL, &s, d), SIM_EPARSE);
	ck_assert_ptr_null(s);
	ck_assert_uint_ge(diag_count(d), 1);
	ck_assert_ptr_nonnull(strstr(diag_msg(d, 0), "t.yaml:2:"));
	ck_assert_ptr_nonnull(strstr(diag_msg(d, 0), "protocol"));
	diag_free(d);
}
END_TEST

/* A run's time left (progress_left_s): the running part's own estimate,
 * the parts to come at the mean wall time of the parts known; and
 * `run --jobs`' coordinator, several at once (sweep_eta, the parts of
 * equal work). */
START_TEST(run_left_counts_parts)
{
	char buf[64];
	sweep_eta e;
	/* nothing known yet: no figure */
	ck_assert(isnan(progress_left_s(3, 0, 0, 4, NAN)));
	/* part 1 of 3 at 4 s with 6 s to go: 6 s + 2 x 10 s */
	ck_assert_double_eq_tol(progress_left_s(3, 0, 0, 4, 6), 26, 1e-9);
	/* two done in 8 and 12 s, the third just begun without its own estimate:
	 * the mean less what it ran */
	ck_assert_double_eq_tol(progress_left_s(3, 2, 20, 1, NAN), 9, 1e-9);
	/* the same with its own estimate: that, not the mean */
	ck_assert_double_eq_tol(progress_left_s(3, 2, 20, 4, 6), 6, 1e-9);
	/* one done in 2 s, the second running for 5 s with no estimate: it is
	 * at least 5 s long, so is the third to come */
	ck_assert_double_eq_tol(progress_left_s(3, 1, 2, 5, NAN), 5, 1e-9);
	/* all done */
	ck_assert(progress_left_s(3, 3, 30, 0, NAN) == 0);
	/* --jobs 2: one done in 10 s, two running for 4 and 1 s, one to come:
	 * 6 + 9 + 10 s over two at once */
	ck_assert_int_eq(sweep_eta_init(&e, 4, 2), 0);
	for (size_t i = 0; i < 4; i++)
		e.work[i] = 1;
	sweep_eta_start(&e, 0, 0);
	sweep_eta_end(&e, 0, 10, true);
	sweep_eta_start(&e, 1, 6);
	sweep_eta_start(&e, 2, 9);
	ck_assert_double_eq_tol(sweep_eta_left_s(&e, 10), (6 + 9 + 10) / 2.0, 1e-9);
	sweep_eta_free(&e);
	progress_left_text(buf, sizeof buf, 26);
	ck_assert_str_eq(buf, ", about 26 s left");
	progress_left_text(buf, sizeof buf, 2.5);
	ck_assert_str_eq(buf, ", about 2.5 s left");
	progress_left_text(buf, sizeof buf, NAN);
	ck_assert_str_eq(buf, "");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("run");
	TCase *tc = tcase_create("collective model");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_node_same_time);
	tcase_add_test(tc, two_nodes_same_time);
	tcase_add_test(tc, protocol_key);
	suite_add_tcase(s, tc);
	tc = tcase_create("progress");
	tcase_add_test(tc, run_left_counts_parts);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
