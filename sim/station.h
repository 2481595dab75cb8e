/* A multi-server FIFO station on the engine: c identical servers (CPU cores,
 * DPU Arm cores, storage servers). Jobs carry a service time and a
 * completion callback; they wait in arrival order while every server is
 * busy. The station measures busy time, queueing delay and queue length. */
#ifndef DPUSIM_SIM_STATION_H
#define DPUSIM_SIM_STATION_H

#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/stats.h"
#include "sim/time.h"

typedef struct station station;

/* A new idle station with `servers` (>= 1) servers on eng, or NULL when out
 * of memory or servers is 0. Its observation window starts at sim_now(eng).
 * Free with station_free (NULL is a no-op) before the engine; completion
 * events still pending in the engine must then never run (free the engine
 * without running it further). */
station *station_new(sim_engine *eng, uint32_t servers);
void station_free(station *st);

/* Submits a job needing `service` of work at speed 1 (>= 0). It starts at
 * once if a server is free, else waits behind every job already waiting.
 * When its service ends, the station first hands the server to the next
 * waiting job, then calls done(eng, obj, data) from the completion event
 * (done may be NULL: nobody is told). Returns 0; SIM_EINVAL for a negative
 * service; SIM_EOVERFLOW when the scaled service time does not fit in
 * sim_time, or (for a job that starts at once) its end does not; SIM_ENOMEM.
 * On error the station is unchanged. A waiting job whose end turns out not
 * to fit when it starts is a model bug and aborts.
 * Steady state allocates nothing: the wait queue is a ring that only grows. */
int station_submit(station *st, sim_time service, sim_handler *done, void *obj,
		   uint64_t data);

/* Service speed of every server (1 = nominal; 0.5 = half as fast, so a job
 * takes twice its service time). Applies to jobs that START service from
 * now on; jobs already in service keep their end time. Returns 0, or
 * SIM_EINVAL unless 0 < factor < infinity. */
int station_set_speed(station *st, double factor);
double station_speed(const station *st);

uint32_t station_servers(const station *st);
/* Servers busy now, and jobs waiting now (not counting those in service). */
uint32_t station_busy(const station *st);
size_t station_queue_len(const station *st);

/* Starts a new observation window at now (to drop a warm-up period): busy
 * time, queue-length integral, waits and the served count restart from
 * zero. Jobs in service or waiting are kept; a waiting job's delay counts
 * in full when it starts service. */
void station_reset_stats(station *st);

/* Length of the observation window so far, in seconds. */
double station_elapsed_s(const station *st);
/* Integral of busy servers over the window, in server-seconds. */
double station_busy_s(const station *st);
/* busy / (servers * elapsed); NaN when the window is empty. */
double station_utilisation(const station *st);
/* Time-average number of waiting jobs over the window; NaN when empty. */
double station_queue_len_mean(const station *st);
/* Jobs that completed service in the window. */
uint64_t station_jobs_served(const station *st);
/* Queueing delay (submission to start of service, in seconds) of each job
 * that started service in the window; owned by st, valid until the next
 * change to the station. */
const stats_acc *station_wait_s(const station *st);

#endif
