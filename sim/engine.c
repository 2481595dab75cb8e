/* Event pool, cancellation and run loop over the 4-ary heap in pq.c.
 *
 * A heap entry's key packs (insertion sequence << SLOT_BITS | pool slot):
 * ordering by key is ordering by insertion, and the slot finds the event
 * without a pointer in the heap. Cancellation is lazy: the pool slot is
 * freed at once and the heap entry becomes stale (its sequence no longer
 * matches the slot's); stale entries are skipped when popped and swept out
 * when they outnumber live ones. This keeps every heap move to one 16-byte
 * write instead of also chasing a back-pointer into the pool. */
#include "sim/engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/err.h"
#include "sim/pq.h"

#define SLOT_BITS 28
#define SLOT_MASK ((UINT64_C(1) << SLOT_BITS) - 1)
#define SEQ_LIMIT (UINT64_C(1) << (64 - SLOT_BITS))
#define SEQ_FREE UINT64_MAX
#define NO_SLOT UINT32_MAX

typedef struct sim_event {
	uint64_t seq;          /* SEQ_FREE when the slot is not pending */
	sim_handler *fn;
	void *obj;
	uint64_t data;
	uint32_t gen;          /* bumped each time the slot is freed */
	uint32_t next_free;
} sim_event;

struct sim_engine {
	pq q;
	sim_event *pool;
	uint32_t pool_cap;
	uint32_t free_head;
	sim_time now;
	uint64_t next_seq;
	uint64_t events_run;
	size_t live;
	size_t stale;
	bool stop;
	int err;            /* first sim_fail code; 0 while the run may go on */
	char err_msg[320];  /* its explanation */
};

sim_engine *sim_engine_new(void)
{
	sim_engine *eng = calloc(1, sizeof *eng);
	if (!eng)
		return NULL;
	pq_init(&eng->q);
	eng->free_head = NO_SLOT;
	return eng;
}

void sim_engine_free(sim_engine *eng)
{
	if (!eng)
		return;
	pq_release(&eng->q);
	free(eng->pool);
	free(eng);
}

sim_time sim_now(const sim_engine *eng)
{
	return eng->now;
}

static int grow_pool(sim_engine *eng)
{
	uint64_t cap = eng->pool_cap ? (uint64_t)eng->pool_cap * 2 : 1024;
	sim_event *p;
	if (cap > SLOT_MASK + 1)
		cap = SLOT_MASK + 1;
	if (cap <= eng->pool_cap)
		return SIM_ENOMEM;
	p = realloc(eng->pool, (size_t)cap * sizeof *p);
	if (!p)
		return SIM_ENOMEM;
	/* Thread new slots so the lowest index is handed out first. */
	for (uint64_t i = cap; i-- > eng->pool_cap;) {
		p[i] = (sim_event){ .seq = SEQ_FREE, .gen = 1, .next_free = eng->free_head };
		eng->free_head = (uint32_t)i;
	}
	eng->pool = p;
	eng->pool_cap = (uint32_t)cap;
	return SIM_OK;
}

static void free_slot(sim_engine *eng, uint32_t slot)
{
	sim_event *ev = &eng->pool[slot];
	ev->seq = SEQ_FREE;
	ev->gen = ev->gen + 1 ? ev->gen + 1 : 1; /* gen 0 is never valid */
	ev->next_free = eng->free_head;
	eng->free_head = slot;
}

static inline bool entry_live(const sim_engine *eng, const pq_entry *e)
{
	return eng->pool[e->key & SLOT_MASK].seq == e->key >> SLOT_BITS;
}

/* Drops stale entries and restores heap order. */
static void sweep(sim_engine *eng)
{
	pq_entry *a = pq_entries(&eng->q);
	size_t n = pq_size(&eng->q), k = 0;
	for (size_t i = 0; i < n; i++)
		if (entry_live(eng, &a[i]))
			a[k++] = a[i];
	pq_truncate(&eng->q, k);
	pq_heapify(&eng->q);
	eng->stale = 0;
}

/* The sequence space is exhausted: renumber pending events 0..n-1 in their
 * current order, which keeps every future comparison the same. */
static void renumber(sim_engine *eng)
{
	pq_entry *a;
	size_t n;
	sweep(eng);
	pq_sort(&eng->q);
	a = pq_entries(&eng->q);
	n = pq_size(&eng->q);
	for (size_t i = 0; i < n; i++) {
		uint64_t slot = a[i].key & SLOT_MASK;
		eng->pool[slot].seq = i;
		a[i].key = (uint64_t)i << SLOT_BITS | slot;
	}
	eng->next_seq = n;
}

static inline int schedule(sim_engine *eng, sim_time t, sim_handler *fn, void *obj,
			   uint64_t data, sim_event_id *id, const char *file, int line)
{
	uint32_t slot;
	sim_event *ev;
	int rc;
	if (t < eng->now)
		sim_die_at(file, line, "event scheduled in the past (t=%lld ps < now=%lld ps)",
			   (long long)t, (long long)eng->now);
	if (eng->free_head == NO_SLOT && (rc = grow_pool(eng)))
		return rc;
	if (eng->next_seq >= SEQ_LIMIT)
		renumber(eng);
	slot = eng->free_head;
	ev = &eng->pool[slot];
	rc = pq_push(&eng->q, t, eng->next_seq << SLOT_BITS | slot);
	if (rc)
		return rc;
	eng->free_head = ev->next_free;
	ev->seq = eng->next_seq++;
	ev->fn = fn;
	ev->obj = obj;
	ev->data = data;
	eng->live++;
	if (id)
		*id = (sim_event_id){ .slot = slot, .gen = ev->gen };
	return SIM_OK;
}

int sim_schedule_at_loc(sim_engine *eng, sim_time t, sim_handler *fn, void *obj,
			uint64_t data, sim_event_id *id, const char *file, int line)
{
	return schedule(eng, t, fn, obj, data, id, file, line);
}

int sim_schedule_in_loc(sim_engine *eng, sim_time delay, sim_handler *fn, void *obj,
			uint64_t data, sim_event_id *id, const char *file, int line)
{
	sim_time t;
	if (delay < 0)
		sim_die_at(file, line, "event scheduled in the past (delay=%lld ps)",
			   (long long)delay);
	if (sim_time_add(eng->now, delay, &t))
		return SIM_EOVERFLOW;
	return schedule(eng, t, fn, obj, data, id, file, line);
}

bool sim_pending_id(const sim_engine *eng, sim_event_id id)
{
	return id.gen != 0 && id.slot < eng->pool_cap && eng->pool[id.slot].gen == id.gen &&
	       eng->pool[id.slot].seq != SEQ_FREE;
}

bool sim_cancel(sim_engine *eng, sim_event_id id)
{
	if (!sim_pending_id(eng, id))
		return false;
	free_slot(eng, id.slot);
	eng->live--;
	if (++eng->stale > 1024 && eng->stale > eng->live)
		sweep(eng);
	return true;
}

static sim_heartbeat_fn *heartbeat;
static void *heartbeat_ctx;

void sim_set_heartbeat(sim_heartbeat_fn *fn, void *ctx)
{
	heartbeat = fn;
	heartbeat_ctx = ctx;
}

/* Pops entries up to limit, running live ones. */
static uint64_t run_loop(sim_engine *eng, sim_time limit)
{
	uint64_t ran = 0;
	const pq_entry *top;
	eng->stop = eng->err != 0; /* a failed run stays stopped */
	while (!eng->stop && (top = pq_top(&eng->q)) && top->time <= limit) {
		pq_entry e;
		sim_event *ev;
		sim_handler *fn;
		void *obj;
		uint64_t data;
		/* The event's slot is a likely cache miss: start loading it
		 * before the heap is reordered. */
		__builtin_prefetch(&eng->pool[top->key & SLOT_MASK]);
		pq_pop(&eng->q, &e);
		if (!entry_live(eng, &e)) {
			eng->stale--;
			continue;
		}
		ev = &eng->pool[e.key & SLOT_MASK];
		fn = ev->fn;
		obj = ev->obj;
		data = ev->data;
		free_slot(eng, (uint32_t)(e.key & SLOT_MASK));
		eng->live--;
		eng->now = e.time;
		eng->events_run++;
		ran++;
		fn(eng, obj, data);
		if (heartbeat && eng->events_run % SIM_HEARTBEAT_EVENTS == 0)
			heartbeat(heartbeat_ctx, eng->now);
	}
	return ran;
}

uint64_t sim_run(sim_engine *eng)
{
	return run_loop(eng, SIM_TIME_MAX);
}

uint64_t sim_run_until(sim_engine *eng, sim_time t)
{
	uint64_t ran = run_loop(eng, t);
	if (!eng->stop && t > eng->now)
		eng->now = t;
	return ran;
}

void sim_stop(sim_engine *eng)
{
	eng->stop = true;
}

void sim_fail(sim_engine *eng, int err, const char *fmt, ...)
{
	va_list ap;
	SIM_ASSERT(err < 0, "sim_fail needs an error code, not %d", err);
	eng->stop = true;
	if (eng->err)
		return; /* the first failure is the one to report */
	eng->err = err;
	va_start(ap, fmt);
	vsnprintf(eng->err_msg, sizeof eng->err_msg, fmt, ap);
	va_end(ap);
}

int sim_error(const sim_engine *eng)
{
	return eng->err;
}

const char *sim_error_msg(const sim_engine *eng)
{
	return eng->err ? eng->err_msg : "";
}

uint64_t sim_events_run(const sim_engine *eng)
{
	return eng->events_run;
}

size_t sim_events_pending(const sim_engine *eng)
{
	return eng->live;
}

void sim_engine_debug_set_next_seq(sim_engine *eng, uint64_t seq)
{
	SIM_ASSERT(seq >= eng->next_seq && seq <= SEQ_LIMIT,
		   "next_seq may only move forward, up to the limit");
	eng->next_seq = seq;
}
