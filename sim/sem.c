/* Counting semaphore: a count of available units and a growable ring of
 * waiting requests. Grants schedule the requester's own handler, so pending
 * grant events never point back at the semaphore. */
#include "sim/sem.h"

#include <stdlib.h>

#include "sim/err.h"

struct waiter {
	uint64_t n;
	sim_time requested;
	sim_handler *fn;
	void *obj;
	uint64_t data;
};

struct sem {
	sim_engine *eng;
	uint64_t capacity;
	uint64_t available;
	struct waiter *ring;
	size_t head, len, cap;
	uint64_t grants;
	uint64_t waits;
	double wait_total_ps;   /* exact up to 2^53 ps (about 2.5 hours) */
};

sem *sem_new(sim_engine *eng, uint64_t capacity)
{
	sem *s;
	if (capacity == 0)
		return NULL;
	s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	*s = (sem){ .eng = eng, .capacity = capacity, .available = capacity };
	return s;
}

void sem_free(sem *s)
{
	if (!s)
		return;
	free(s->ring);
	free(s);
}

static int ring_grow(sem *s)
{
	size_t cap = s->cap ? s->cap * 2 : 16;
	struct waiter *r;
	if (cap > SIZE_MAX / sizeof *r)
		return SIM_ENOMEM;
	r = malloc(cap * sizeof *r);
	if (!r)
		return SIM_ENOMEM;
	for (size_t i = 0; i < s->len; i++)
		r[i] = s->ring[(s->head + i) % s->cap];
	free(s->ring);
	s->ring = r;
	s->head = 0;
	s->cap = cap;
	return SIM_OK;
}

/* Takes w's units and schedules its handler now; on failure nothing is
 * taken. */
static int grant(sem *s, const struct waiter *w)
{
	sim_time now = sim_now(s->eng);
	int rc = sim_schedule_at(s->eng, now, w->fn, w->obj, w->data, NULL);
	if (rc)
		return rc;
	s->available -= w->n;
	s->grants++;
	s->wait_total_ps += (double)(now - w->requested);
	return SIM_OK;
}

int sem_acquire(sem *s, uint64_t n, sim_handler *fn, void *obj, uint64_t data)
{
	struct waiter w = { .n = n, .requested = sim_now(s->eng), .fn = fn, .obj = obj,
			    .data = data };
	int rc;
	if (n == 0 || !fn)
		return SIM_EINVAL;
	if (n > s->capacity)
		return SIM_ERANGE;
	if (s->len == 0 && n <= s->available)
		return grant(s, &w);
	if (s->len == s->cap && (rc = ring_grow(s)))
		return rc;
	s->ring[(s->head + s->len) % s->cap] = w;
	s->len++;
	s->waits++;
	return SIM_OK;
}

bool sem_try_acquire(sem *s, uint64_t n)
{
	if (n == 0 || s->len || n > s->available)
		return false;
	s->available -= n;
	s->grants++;
	return true;
}

int sem_release(sem *s, uint64_t n)
{
	if (n > s->capacity - s->available)
		return SIM_ERANGE;
	s->available += n;
	while (s->len && s->ring[s->head].n <= s->available) {
		int rc = grant(s, &s->ring[s->head]);
		if (rc)
			return rc;
		s->head = (s->head + 1) % s->cap;
		s->len--;
	}
	return SIM_OK;
}

uint64_t sem_capacity(const sem *s)
{
	return s->capacity;
}

uint64_t sem_available(const sem *s)
{
	return s->available;
}

uint64_t sem_in_use(const sem *s)
{
	return s->capacity - s->available;
}

size_t sem_waiting(const sem *s)
{
	return s->len;
}

uint64_t sem_grants(const sem *s)
{
	return s->grants;
}

uint64_t sem_waits(const sem *s)
{
	return s->waits;
}

double sem_wait_total_s(const sem *s)
{
	return s->wait_total_ps / (double)SIM_S;
}
