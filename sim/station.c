/* Multi-server FIFO station: a growable ring of waiting jobs, a stack of
 * free server ids, and one engine event per job in service whose data is
 * the server id. Time integrals (busy servers, waiting jobs) are brought up
 * to date before every change of state. */
#include "sim/station.h"

#include <math.h>
#include <stdlib.h>

#include "sim/err.h"

struct job {
	sim_time service;   /* at speed 1 */
	sim_time submitted;
	sim_handler *fn;
	void *obj;
	uint64_t data;
};

struct server {
	sim_handler *fn;
	void *obj;
	uint64_t data;
};

struct station {
	sim_engine *eng;
	uint32_t servers;
	uint32_t nfree;
	uint32_t *free_ids;     /* stack of idle server ids */
	struct server *srv;
	struct job *ring;       /* waiting jobs, FIFO */
	size_t head, len, cap;
	double speed;
	/* observation window */
	sim_time t0, last;
	double busy_ps;         /* server-picoseconds */
	double queue_ps;        /* job-picoseconds of waiting */
	uint64_t served;
	stats_acc wait_s;
};

station *station_new(sim_engine *eng, uint32_t servers)
{
	station *st;
	if (servers == 0)
		return NULL;
	st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->free_ids = malloc(servers * sizeof *st->free_ids);
	if (!st->free_ids)
		goto fail_st;
	st->srv = calloc(servers, sizeof *st->srv);
	if (!st->srv)
		goto fail_ids;
	st->eng = eng;
	st->servers = st->nfree = servers;
	/* Server 0 on top, so an idle station uses servers in id order. */
	for (uint32_t i = 0; i < servers; i++)
		st->free_ids[i] = servers - 1 - i;
	st->speed = 1.0;
	station_reset_stats(st);
	return st;
fail_ids:
	free(st->free_ids);
fail_st:
	free(st);
	return NULL;
}

void station_free(station *st)
{
	if (!st)
		return;
	free(st->ring);
	free(st->srv);
	free(st->free_ids);
	free(st);
}

/* Brings the time integrals up to now. */
static void advance(station *st)
{
	sim_time now = sim_now(st->eng);
	double dt = (double)(now - st->last);
	st->busy_ps += dt * (double)(st->servers - st->nfree);
	st->queue_ps += dt * (double)st->len;
	st->last = now;
}

/* Service time at the current speed; SIM_EOVERFLOW when it does not fit. */
static int scaled(const station *st, sim_time service, sim_time *out)
{
	double t;
	if (st->speed == 1.0) {
		*out = service;
		return SIM_OK;
	}
	t = nearbyint((double)service / st->speed);
	/* 2^63 is exactly representable; anything at or above it overflows. */
	if (!(t < 9223372036854775808.0))
		return SIM_EOVERFLOW;
	*out = (sim_time)t;
	return SIM_OK;
}

static void on_done(sim_engine *eng, void *obj, uint64_t data);

/* Puts job j on a free server: schedules its end, records its wait. */
static int start(station *st, const struct job *j)
{
	sim_time dur;
	uint32_t id;
	int rc = scaled(st, j->service, &dur);
	if (rc)
		return rc;
	id = st->free_ids[st->nfree - 1];
	rc = sim_schedule_in(st->eng, dur, on_done, st, id, NULL);
	if (rc)
		return rc;
	st->nfree--;
	st->srv[id] = (struct server){ .fn = j->fn, .obj = j->obj, .data = j->data };
	stats_acc_add(&st->wait_s, sim_time_to_s(sim_now(st->eng) - j->submitted));
	return SIM_OK;
}

static int ring_grow(station *st)
{
	size_t cap = st->cap ? st->cap * 2 : 64;
	struct job *r;
	if (cap > SIZE_MAX / sizeof *r)
		return SIM_ENOMEM;
	r = malloc(cap * sizeof *r);
	if (!r)
		return SIM_ENOMEM;
	for (size_t i = 0; i < st->len; i++)
		r[i] = st->ring[(st->head + i) % st->cap];
	free(st->ring);
	st->ring = r;
	st->head = 0;
	st->cap = cap;
	return SIM_OK;
}

static int enqueue(station *st, const struct job *j)
{
	int rc;
	if (st->len == st->cap && (rc = ring_grow(st)))
		return rc;
	st->ring[(st->head + st->len) % st->cap] = *j;
	st->len++;
	return SIM_OK;
}

/* The completion event of server `data`: hand the server to the next
 * waiting job first (FIFO even if the callback submits), then tell the
 * job's owner. */
static void on_done(sim_engine *eng, void *obj, uint64_t data)
{
	station *st = obj;
	struct server done = st->srv[data];
	advance(st);
	st->free_ids[st->nfree++] = (uint32_t)data;
	st->served++;
	if (st->len) {
		struct job j = st->ring[st->head];
		int rc;
		st->head = (st->head + 1) % st->cap;
		st->len--;
		rc = start(st, &j);
		SIM_ASSERT(rc == SIM_OK, "station: cannot start a waiting job: %s",
			   sim_strerror(rc));
	}
	if (done.fn)
		done.fn(eng, done.obj, done.data);
}

int station_submit(station *st, sim_time service, sim_handler *done, void *obj,
		   uint64_t data)
{
	struct job j = { .service = service, .submitted = sim_now(st->eng),
			 .fn = done, .obj = obj, .data = data };
	sim_time dur;
	int rc;
	if (service < 0)
		return SIM_EINVAL;
	if ((rc = scaled(st, service, &dur)))
		return rc;
	advance(st);
	if (st->nfree)
		return start(st, &j);
	return enqueue(st, &j);
}

int station_set_speed(station *st, double factor)
{
	if (!(factor > 0.0 && factor < INFINITY))
		return SIM_EINVAL;
	st->speed = factor;
	return SIM_OK;
}

double station_speed(const station *st)
{
	return st->speed;
}

uint32_t station_servers(const station *st)
{
	return st->servers;
}

uint32_t station_busy(const station *st)
{
	return st->servers - st->nfree;
}

size_t station_queue_len(const station *st)
{
	return st->len;
}

void station_reset_stats(station *st)
{
	st->t0 = st->last = sim_now(st->eng);
	st->busy_ps = 0;
	st->queue_ps = 0;
	st->served = 0;
	stats_acc_init(&st->wait_s);
}

double station_elapsed_s(const station *st)
{
	return sim_time_to_s(sim_now(st->eng) - st->t0);
}

/* The integrals as of now, without changing the station. */
static double busy_ps_now(const station *st)
{
	return st->busy_ps +
	       (double)(sim_now(st->eng) - st->last) * (double)(st->servers - st->nfree);
}

static double queue_ps_now(const station *st)
{
	return st->queue_ps + (double)(sim_now(st->eng) - st->last) * (double)st->len;
}

double station_busy_s(const station *st)
{
	return busy_ps_now(st) / (double)SIM_S;
}

double station_utilisation(const station *st)
{
	sim_time el = sim_now(st->eng) - st->t0;
	return el > 0 ? busy_ps_now(st) / ((double)st->servers * (double)el) : NAN;
}

double station_queue_len_mean(const station *st)
{
	sim_time el = sim_now(st->eng) - st->t0;
	return el > 0 ? queue_ps_now(st) / (double)el : NAN;
}

uint64_t station_jobs_served(const station *st)
{
	return st->served;
}

const stats_acc *station_wait_s(const station *st)
{
	return &st->wait_s;
}
