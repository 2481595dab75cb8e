/* dpusim bench: measured figures on this machine, never pass/fail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim/engine.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "tools/bench_coll.h"
#include "tools/cli.h"
#include "tools/commands.h"

#define HOLD_TABLE 65536 /* power of two */
/* About 92 B per pending event (10^7: 924 MB peak RSS, measured with `dpusim
 * bench engine --events 1000 --reps 1 --pending 10000000`): 5 x 10^7 stays
 * under 5 GB, where 10^10 ran out of memory instead of answering. */
#define MAX_PENDING 50000000u
/* 10^10 hold operations take about ten minutes (15-30 M a second on this
 * machine, `dpusim bench engine --events 100000000 --reps 1 --pending
 * 1000`); past them a run is a hang, and near 9 x 10^12 (the 1 us mean
 * increment) it would pass the engine's horizon of 2^63 ps. */
#define MAX_EVENTS 10000000000ull

struct hold {
	sim_time *incr;
	uint64_t next;
	uint64_t left;
};

static void hold_event(sim_engine *eng, void *obj, uint64_t data)
{
	struct hold *h = obj;
	(void)data;
	if (h->left-- == 0) {
		sim_stop(eng);
		return;
	}
	int rc = sim_schedule_in(eng, h->incr[h->next++ & (HOLD_TABLE - 1)], hold_event, h, 0, NULL);
	if (rc)
		SIM_DIE("the hold benchmark cannot schedule: %s", sim_strerror(rc));
}

/* One timed run: fill to `pending`, then `events` hold operations. */
static double hold_run(size_t pending, uint64_t events, sim_time *incr)
{
	struct hold h = { .incr = incr, .left = events };
	sim_engine *eng = sim_engine_new();
	double t0, t1;
	if (!eng)
		SIM_DIE("out of memory in the hold benchmark");
	for (size_t i = 0; i < pending; i++)
		if (sim_schedule_in(eng, incr[(i * 7919) & (HOLD_TABLE - 1)], hold_event, &h, 0, NULL))
			SIM_DIE("out of memory in the hold benchmark");
	/* Warm up so the heap has the steady-state shape before timing. */
	h.left = pending < 100000 ? pending : 100000;
	sim_run(eng);
	h.left = events;
	t0 = cli_wall_s();
	sim_run(eng);
	t1 = cli_wall_s();
	SIM_ASSERT(!sim_error(eng), "hold benchmark: %s", sim_error_msg(eng)); /* no flows: a bug */
	sim_engine_free(eng);
	return (double)events / (t1 - t0);
}

static int parse_sizes(const char *s, size_t *out, int max)
{
	int n = 0;
	char *copy = cli_list_has_empty(s) ? NULL : strdup(s), *save = NULL;
	if (!copy)
		return -1;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long long v;
		if (n == max || !cli_parse_u64(tok, &v) || v == 0 || v > MAX_PENDING) {
			free(copy);
			return -1;
		}
		out[n++] = (size_t)v;
	}
	free(copy);
	return n;
}

static int bench_engine(int argc, char **argv)
{
	unsigned long long events = 4000000, reps = 5;
	size_t sizes[16] = { 1000, 100000, 1000000 };
	int nsizes = 3;
	sim_time incr[HOLD_TABLE];
	sim_rng *r;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--events") && cli_parse_u64(v, &events) && events > 0 &&
		    events <= MAX_EVENTS)
			i++;
		else if (!strcmp(argv[i], "--reps") && cli_parse_u64(v, &reps) && reps > 0 && reps <= 101)
			i++;
		else if (!strcmp(argv[i], "--pending") && v && (nsizes = parse_sizes(v, sizes, 16)) > 0)
			i++;
		else if (!strcmp(argv[i], "--events") || !strcmp(argv[i], "--reps"))
			return cli_usage_error("bench engine: %s wants a count from 1 to %s, not '%s'",
					       argv[i], strcmp(argv[i], "--reps") ? "10^10" : "101",
					       v ? v : "(nothing)");
		else if (!strcmp(argv[i], "--pending"))
			return cli_usage_error("bench engine: --pending wants sizes from 1 to %u, comma "
					       "separated, no item empty (at most 16), not '%s'", MAX_PENDING,
					       v ? v : "");
		else
			return cli_usage_error("bench engine: unknown option '%s' (see 'dpusim bench --help')",
					       argv[i]);
	}
	r = sim_rng_new(1, "bench.hold");
	if (!r)
		return cli_usage_error("out of memory");
	for (int i = 0; i < HOLD_TABLE; i++)
		incr[i] = (sim_time)(sim_rng_exponential(r, 1e6) + 1); /* mean 1 us in ps */
	sim_rng_free(r);
	for (int s = 0; s < nsizes; s++) {
		double rate[101];
		for (unsigned long long k = 0; k < reps; k++)
			rate[k] = hold_run(sizes[s], events, incr);
		gsl_sort(rate, 1, (size_t)reps);
		printf("engine hold pending=%zu events_per_s=%.0f\n", sizes[s],
		       gsl_stats_median_from_sorted_data(rate, 1, (size_t)reps));
		fflush(stdout);
	}
	return CLI_OK;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} benches[] = {
	{ "engine", bench_engine },
	{ "flows", bench_flows },
	{ "scale", bench_scale },
};

int cmd_bench(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("bench: which benchmark? (engine, flows, scale)");
	for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
		if (!strcmp(argv[1], benches[i].name))
			return benches[i].run(argc - 1, argv + 1);
	return cli_usage_error("bench: unknown benchmark '%s' (engine, flows, scale)", argv[1]);
}
