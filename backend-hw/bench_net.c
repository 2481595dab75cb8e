/* Transport microbenchmarks of dpusim-hw bench: point-to-point latency and
 * bandwidth between ranks 0 and 1 (perftest style), the CPU time TCP spends
 * per byte, and the verified ring all-reduce over every size. */
#include "backend-hw/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend-hw/allreduce.h"
#include "backend-hw/cmd.h"
#include "backend-hw/comm.h"
#include "backend-hw/log.h"

/* CPU seconds of the calling thread, which alone drives the transport: to
 * the nanosecond, where getrusage(RUSAGE_SELF) also counts MPI's helper
 * threads and a quick size's stream lasts only a few scheduler ticks. */
static double cpu_s(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "<transport>_<what>" into name. */
static const char *bench_name(const hw_bench *h, const char *what, char *name, size_t n)
{
	snprintf(name, n, "%s_%s", h->p2p_name, what);
	return name;
}

/* Ping-pong between ranks 0 and 1: half round-trip times of `bytes`. */
static int p2p_lat(hw_bench *h, hw_xport *x, char *buf, size_t bytes)
{
	int iters = h->quick ? 200 : 2000, warm = 20, err = 0;
	double *t = malloc((size_t)iters * sizeof *t), sum = 0;
	if (!t)
		return hw_fail(SIM_ENOMEM, "out of memory");
	for (int i = -warm; i < iters && !err; i++) {
		double t0 = hw_now_s();
		if (h->rank == 0)
			err = hw_send(x, HW_RIGHT, buf, bytes) || hw_recv(x, HW_RIGHT, buf, bytes);
		else
			err = hw_recv(x, HW_LEFT, buf, bytes) || hw_send(x, HW_LEFT, buf, bytes);
		if (i >= 0)
			sum += t[i] = (hw_now_s() - t0) / 2;
	}
	if (!err && h->rank == 0) {
		char name[40];
		hw_median(t, (size_t)iters);
		err = hw_bench_emit(h, &(rep_benchmark){ .name = bench_name(h, "lat", name, sizeof name),
			.transport = h->transport, .memory = "host", .bytes = bytes, .ranks = 2,
			.iters = (uint64_t)iters, .value = sum / iters, .unit = "s",
			.p50 = hw_quantile_sorted(t, (size_t)iters, 0.5),
			.p99 = hw_quantile_sorted(t, (size_t)iters, 0.99), .stddev = NAN });
	}
	free(t);
	return err ? (err < 0 ? err : SIM_EPEER) : 0;
}

static void fill_bytes(char *buf, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)((i * 31 + seed) & 0xff);
}

/* Rank 0 streams `count` messages to rank 1, which acknowledges the last;
 * *secs is rank 0's time, *cpu each side's CPU seconds. Rank 1 verifies the
 * last message. */
static int p2p_stream(hw_bench *h, hw_xport *x, char *buf, size_t bytes, int count, double *secs,
		      double *cpu)
{
	char ack = 0;
	double t0 = hw_now_s(), c0 = cpu_s();
	int err = 0;
	if (h->rank == 0) {
		fill_bytes(buf, bytes, 7);
		for (int i = 0; i < count && !err; i++)
			err = hw_send(x, HW_RIGHT, buf, bytes);
		if (!err)
			err = hw_recv(x, HW_RIGHT, &ack, 1);
	} else {
		for (int i = 0; i < count && !err; i++)
			err = hw_recv(x, HW_LEFT, buf, bytes);
		if (!err) {
			char *want = malloc(bytes);
			if (want)
				fill_bytes(want, bytes, 7);
			ack = (char)(want && !memcmp(want, buf, bytes));
			free(want);
			err = hw_send(x, HW_LEFT, &ack, 1);
		}
	}
	*secs = hw_now_s() - t0;
	*cpu = cpu_s() - c0;
	if (!err && h->rank == 0 && !ack)
		return hw_fail(SIM_EVERIFY, "rank 1 received %zu-byte messages that differ from what "
			       "rank 0 sent", bytes);
	return err;
}

static int p2p_bw(hw_bench *h, hw_xport *x, char *buf, size_t bytes, double hz)
{
	/* every size streams the same bytes (at most 1<<17 messages): with 2000
	 * messages a 4 KiB size lasted 70 ms on the lab, too short for its CPU
	 * time to weigh in the per-byte fit against the large sizes' */
	size_t target = h->quick ? (size_t)8 << 20 : (size_t)512 << 20;
	int count = (int)(target / bytes), err = 0;
	double secs = 0, cpu = 0, tx_cpu, rx_cpu;
	count = count < 4 ? 4 : count > (1 << 17) ? (1 << 17) : count;
	/* no spinning here: a receiver that polls while the next message is on
	 * the wire bills the wait as TCP's CPU cost (all of it, at 4 KiB on the
	 * shaped lab) */
	if (h->rank == 0)
		hw_bench_fault(h, "p2p-stream");
	if (h->rank <= 1 && !(err = hw_xport_spin(x, false)))
		err = p2p_stream(h, x, buf, bytes, count, &secs, &cpu);
	if (h->rank <= 1 && !err)
		err = hw_xport_spin(x, true);
	if (err)
		return err;
	hw_comm_barrier();
	tx_cpu = cpu;
	rx_cpu = hw_comm_sum(h->rank == 1 ? cpu : 0);
	if (h->rank != 0)
		return 0;
	char name[40];
	err = hw_bench_emit(h, &(rep_benchmark){ .name = bench_name(h, "bw", name, sizeof name),
		.transport = h->transport, .memory = "host", .bytes = bytes, .ranks = 2,
		.iters = (uint64_t)count, .value = (double)bytes * count / secs, .unit = "B/s",
		.p50 = NAN, .p99 = NAN, .stddev = NAN });
	if (!err && !strcmp(h->transport, "tcp") && hz > 0)
		err = hw_bench_emit(h, &(rep_benchmark){ .name = "tcp_cpu_tx", .transport = "tcp",
			.memory = "host", .bytes = bytes, .ranks = 2, .iters = (uint64_t)count,
			.value = tx_cpu * hz / ((double)bytes * count), .unit = "cycles/B",
			.p50 = NAN, .p99 = NAN, .stddev = NAN });
	if (!err && !strcmp(h->transport, "tcp") && hz > 0)
		err = hw_bench_emit(h, &(rep_benchmark){ .name = "tcp_cpu_rx", .transport = "tcp",
			.memory = "host", .bytes = bytes, .ranks = 2, .iters = (uint64_t)count,
			.value = rx_cpu * hz / ((double)bytes * count), .unit = "cycles/B",
			.p50 = NAN, .p99 = NAN, .stddev = NAN });
	return err;
}

/* One all-reduce size: an untimed warm-up, then every iteration refilled,
 * started together, timed alone and verified. An iteration's time is its
 * slowest rank's; the figure is the median iteration's (dpusim-hw replay
 * times its calls the same way), p99 the bus bandwidth of the slowest
 * percent. */
static int allreduce_size(hw_bench *h, hw_xport *x, size_t bytes, float *data, float *tmp)
{
	size_t count = bytes / sizeof(float), bad = count;
	int iters = h->quick ? 5 : 20, err = 0;
	double t[64], algbw, bus = hw_allreduce_bus_factor(h->size);
	hw_stats st;
	float want = 0;
	bool corrupt = h->fault_rank == h->rank && !strcmp(h->fault, "corrupt");
	for (int i = -1; i < iters && !err && bad == count; i++) {
		double t0;
		hw_allreduce_fill(data, count, h->rank);
		hw_comm_start_together();
		if (i == -1)
			hw_bench_fault(h, "allreduce-ring");
		t0 = hw_now_s();
		err = hw_allreduce_ring(x, data, count, tmp, corrupt);
		if (i >= 0)
			t[i] = hw_now_s() - t0;
		if (!err)
			bad = hw_allreduce_check(data, count, h->size, &want);
	}
	if (err)
		return err;
	if (bad != count)
		hw_error("all-reduce of %zu bytes over %s gave a wrong sum: element %zu is %g, "
			 "expected %g", bytes, h->transport, bad, (double)data[bad], (double)want);
	if (!hw_comm_all(bad == count))
		return SIM_EVERIFY;
	hw_comm_max_each(t, (size_t)iters);
	hw_stats_of(t, (size_t)iters, &st);
	algbw = (double)bytes / st.median;
	if (h->rank == 0)
		printf("  %-24s %-8s %10zu B  %12.4g GB/s     time %.1f us (median of %d; p10 %.1f, "
		       "p90 %.1f us)  algbw %.3f GB/s  verified x%d\n", "allreduce_ring_busbw",
		       h->transport, bytes, algbw * bus / 1e9, st.median * 1e6, iters,
		       st.p10 * 1e6, st.p90 * 1e6, algbw / 1e9, iters + 1);
	return hw_bench_add(h, &(rep_benchmark){ .name = "allreduce_ring_busbw",
		.transport = h->transport, .memory = "host", .bytes = bytes,
		.ranks = (uint32_t)h->size, .iters = (uint64_t)iters, .value = algbw * bus,
		.unit = "B/s", .p50 = algbw * bus,
		.p99 = (double)bytes / hw_quantile_sorted(t, (size_t)iters, 0.99) * bus,
		.stddev = NAN });
}

static int bench_allreduce(hw_bench *h, hw_xport *x)
{
	size_t max = 0;
	float *data, *tmp;
	int err = 0;
	for (int i = 0; i < h->nsizes; i++)
		max = h->sizes[i] > max ? h->sizes[i] : max;
	data = malloc(max + sizeof(float));
	tmp = malloc(hw_allreduce_tmp_count(max / sizeof(float), h->size) * sizeof(float));
	if (!data || !tmp)
		err = hw_fail(SIM_ENOMEM, "all-reduce: cannot allocate %zu bytes", max);
	for (int i = 0; i < h->nsizes && !err; i++) {
		size_t bytes = h->sizes[i] / sizeof(float) * sizeof(float);
		if (bytes / sizeof(float) < (size_t)h->size)
			continue; /* fewer elements than ranks: nothing to split */
		err = allreduce_size(h, x, bytes, data, tmp);
	}
	free(data);
	free(tmp);
	return err;
}

/* Latency over a few small sizes, then bandwidth over every size. */
static int p2p_all(hw_bench *h, hw_xport *x, char *buf, double hz)
{
	static const size_t lat_quick[] = { 8, 4096 }, lat_full[] = { 8, 64, 512, 4096, 32768 };
	int err = 0;
	for (size_t i = 0; i < (h->quick ? 2u : 5u) && !err; i++)
		if (h->rank <= 1)
			err = p2p_lat(h, x, buf, h->quick ? lat_quick[i] : lat_full[i]);
	if (!err)
		hw_comm_barrier();
	for (int i = 0; i < h->nsizes && !err; i++)
		err = p2p_bw(h, x, buf, h->sizes[i], hz);
	return err;
}

int hw_bench_net(hw_bench *h, hw_xport *x)
{
	size_t max = 32768;
	double hz = h->rank <= 1 ? hw_cpu_hz(NULL) : 0;
	bool verbs = strcmp(h->transport, "tcp") != 0;
	char *buf;
	int err;
	for (int i = 0; i < h->nsizes; i++)
		max = h->sizes[i] > max ? h->sizes[i] : max;
	if (!(buf = malloc(max)))
		return hw_fail(SIM_ENOMEM, "cannot allocate %zu bytes", max);
	memset(buf, 0, max);
	h->p2p_name = verbs ? "rdma_write" : "tcp";
	err = p2p_all(h, x, buf, hz);
	if (!err && verbs) {  /* perftest's ib_send_lat / ib_send_bw counterparts */
		h->p2p_name = "rdma_send";
		err = hw_verbs_use_send(x, true);
		if (!err)
			err = p2p_all(h, x, buf, hz);
		if (!err)
			err = hw_verbs_use_send(x, false);
	}
	free(buf);
	if (!err)
		err = bench_allreduce(h, x);
	return err;
}
