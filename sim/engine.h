/* The discrete-event engine: a clock, a deterministic event queue and a run
 * loop. Events come from a pool (no malloc per event), are ordered by
 * (time, insertion sequence), and may be cancelled. Knows nothing of what
 * the events mean. */
#ifndef DPUSIM_SIM_ENGINE_H
#define DPUSIM_SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/time.h"

typedef struct sim_engine sim_engine;

/* An event's action: obj and data are what the scheduler passed. Handlers
 * may schedule and cancel events, and call sim_stop. */
typedef void sim_handler(sim_engine *eng, void *obj, uint64_t data);

/* Names one scheduled event; stale ids are harmless (cancel returns false).
 * The all-zero id names nothing. */
typedef struct sim_event_id {
	uint32_t slot;
	uint32_t gen;
} sim_event_id;

#define SIM_EVENT_NONE ((sim_event_id){ 0, 0 })

/* A new engine at time 0, or NULL when out of memory. Free with
 * sim_engine_free (NULL is a no-op); pending events are dropped. */
sim_engine *sim_engine_new(void);
void sim_engine_free(sim_engine *eng);

sim_time sim_now(const sim_engine *eng);

/* Schedules fn(eng, obj, data) at absolute time t. Scheduling before
 * sim_now is a model bug and aborts with the caller's location. Returns 0,
 * or SIM_ENOMEM. *id (if id is not NULL) names the event for cancelling. */
#define sim_schedule_at(eng, t, fn, obj, data, id) \
	sim_schedule_at_loc((eng), (t), (fn), (obj), (data), (id), __FILE__, __LINE__)
/* As sim_schedule_at, delay after now; SIM_EOVERFLOW if now + delay overflows. */
#define sim_schedule_in(eng, delay, fn, obj, data, id) \
	sim_schedule_in_loc((eng), (delay), (fn), (obj), (data), (id), __FILE__, __LINE__)

int sim_schedule_at_loc(sim_engine *eng, sim_time t, sim_handler *fn, void *obj,
			uint64_t data, sim_event_id *id, const char *file, int line);
int sim_schedule_in_loc(sim_engine *eng, sim_time delay, sim_handler *fn, void *obj,
			uint64_t data, sim_event_id *id, const char *file, int line);

/* Cancels a pending event. Returns true if it was pending (it will not run),
 * false if it already ran, was cancelled, or id names nothing. */
bool sim_cancel(sim_engine *eng, sim_event_id id);

/* True while the event named by id is pending. */
bool sim_pending_id(const sim_engine *eng, sim_event_id id);

/* Runs events in order until the queue is empty, sim_stop is called or
 * the run has failed (sim_fail). Returns the number of events run by this
 * call. */
uint64_t sim_run(sim_engine *eng);

/* Runs every event with time <= t, then advances the clock to t (unless
 * stopped first, or t is earlier than now). Returns events run. */
uint64_t sim_run_until(sim_engine *eng, sim_time t);

/* Asks the running loop to return after the current event. */
void sim_stop(sim_engine *eng);

/* Stops the simulation for good: a handler found it cannot go on (a time
 * past SIM_TIME_MAX that input such as a rate or a size led to). The loop
 * returns after the current event, and every later sim_run or
 * sim_run_until returns at once, running nothing; pending events stay
 * queued (freed with the engine). Only the first failure is kept: err (a
 * SIM_E* code, < 0) and its one-line explanation (printf format; cut at
 * about 300 characters). Whoever runs an engine checks sim_error after
 * sim_run and returns the code up, with sim_error_msg for the user. */
void sim_fail(sim_engine *eng, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The first sim_fail code, or 0; and its explanation ("" when none). */
int sim_error(const sim_engine *eng);
const char *sim_error_msg(const sim_engine *eng);

/* Events run since creation, and events pending now (cancelled excluded). */
uint64_t sim_events_run(const sim_engine *eng);
size_t sim_events_pending(const sim_engine *eng);

/* A process-wide heartbeat for long runs: fn(ctx, now) is called by every
 * engine's run loop once per SIM_HEARTBEAT_EVENTS events it runs, with
 * that engine's clock (the caller decides from its own wall clock whether
 * to say anything: the engine keeps none). fn NULL: none (the default).
 * fn must not schedule, cancel or stop anything. */
/* 256: an all-reduce of 64 MiB over 65,536 ranks runs about 11,000 events
 * in 7.6 s (each re-solves thousands of flows), which 65,536 left silent;
 * a heartbeat's cost (one clock read) is then under 0.1% of the
 * instructions of a run (callgrind, scenarios/capacity.yaml). */
#define SIM_HEARTBEAT_EVENTS 256
typedef void sim_heartbeat_fn(void *ctx, sim_time now);
void sim_set_heartbeat(sim_heartbeat_fn *fn, void *ctx);

/* Testing hook: continue insertion numbering from seq, so tests can reach
 * the renumbering that happens when the sequence space runs out. */
void sim_engine_debug_set_next_seq(sim_engine *eng, uint64_t seq);

#endif
