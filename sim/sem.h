/* A counting semaphore on the engine: a pool of identical units (prefetch
 * buffers, transport credits). Acquirers wait in strict FIFO order; a grant
 * is delivered as an event at the instant the units are taken. */
#ifndef DPUSIM_SIM_SEM_H
#define DPUSIM_SIM_SEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"

typedef struct sem sem;

/* A new semaphore on eng with `capacity` (>= 1) units, all available, or
 * NULL when out of memory or capacity is 0. Free with sem_free (NULL is a
 * no-op); waiters still queued are dropped without being called. Grant
 * events already scheduled do not refer to the semaphore and still run. */
sem *sem_new(sim_engine *eng, uint64_t capacity);
void sem_free(sem *s);

/* Asks for n units. When they are available and nobody waits, they are
 * taken now; otherwise the request waits behind earlier ones (strict FIFO:
 * a small request never overtakes a large one ahead of it). Once granted,
 * fn(eng, obj, data) runs as an event at the grant instant (so never from
 * inside this call). Returns 0; SIM_EINVAL when n is 0 or fn is NULL;
 * SIM_ERANGE when n exceeds the capacity (it could never be granted);
 * SIM_ENOMEM. On error nothing changes. */
int sem_acquire(sem *s, uint64_t n, sim_handler *fn, void *obj, uint64_t data);

/* Takes n units now if they are available and nobody waits (a try never
 * overtakes a waiter); returns whether it did. n = 0 takes nothing and
 * returns false. */
bool sem_try_acquire(sem *s, uint64_t n);

/* Gives back n units and grants waiting requests, in FIFO order, while the
 * one at the head fits. Returns 0; SIM_ERANGE when n exceeds the units in
 * use (nothing changes); SIM_ENOMEM when a grant event cannot be scheduled
 * (the units are back, that waiter and those behind it still wait; the next
 * release retries). */
int sem_release(sem *s, uint64_t n);

uint64_t sem_capacity(const sem *s);
uint64_t sem_available(const sem *s);
uint64_t sem_in_use(const sem *s);
/* Requests waiting now. */
size_t sem_waiting(const sem *s);

/* Requests granted so far (immediately or after waiting). */
uint64_t sem_grants(const sem *s);
/* Requests that had to wait (queued rather than granted on the spot). */
uint64_t sem_waits(const sem *s);
/* Sum over granted requests of (grant time - request time), in seconds. */
double sem_wait_total_s(const sem *s);

#endif
