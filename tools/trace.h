/* Chrome/Perfetto trace-event JSON for a per-GPU timeline: tracks (GPUs,
 * host CPUs, DPUs, link groups) and spans on them, written atomically as
 * {"traceEvents":[...]} with "M" metadata naming processes and threads and
 * "X" complete events. Opens in ui.perfetto.dev and chrome://tracing. */
#ifndef DPUSIM_TOOLS_TRACE_H
#define DPUSIM_TOOLS_TRACE_H

#include <stddef.h>
#include <stdio.h>

typedef struct trace trace;

/* What a span is: its "cat" in the file. */
typedef enum trace_cat {
	TRACE_COMPUTE,  /* "compute": kernels, optimizer step */
	TRACE_COMM,     /* "comm": collectives, point-to-point transfers */
	TRACE_DATA,     /* "data": storage reads, decode, host-to-device copies */
	TRACE_STALL,    /* "stall": waiting (data, CPU, pipeline bubble) */
} trace_cat;

/* "compute", "comm", "data" or "stall"; NULL for a value outside the enum. */
const char *trace_cat_name(trace_cat c);

/* A new, empty trace, or NULL when out of memory. Free with trace_free. */
trace *trace_new(void);
/* Frees t with its tracks and spans; NULL is a no-op. */
void trace_free(trace *t);

/* Tracks. Each call returns a track id (>= 0) for trace_span, or a negative
 * SIM_E* code: SIM_EINVAL for a negative node or GPU number or an empty
 * name, SIM_EEXIST for a GPU number already declared in another node,
 * SIM_ENOMEM. Declaring the same track twice returns the same id.
 * Node tracks are grouped as process "node N" (pid N + 1), ordered host
 * CPU, DPU, then GPUs by number; link groups go under process "fabric"
 * (pid 0), listed after the nodes. */

/* GPU `gpu` (the global GPU number, its rank) in node `node`: "GPU gpu". */
int trace_gpu(trace *t, int node, int gpu);
/* The host CPU of node `node`: "host CPU". */
int trace_host(trace *t, int node);
/* The DPU of node `node`: "DPU". */
int trace_dpu(trace *t, int node);
/* A group of links, e.g. "leaf 0 uplinks" (name copied). */
int trace_link(trace *t, const char *name);

/* A span on track `track`: from start_s for dur_s seconds (both finite,
 * >= 0), named `name` (copied; non-empty), of category cat. 0, SIM_ENOENT
 * for an undeclared track, SIM_EINVAL for a bad category or empty name,
 * SIM_ERANGE for a negative or non-finite time, SIM_ENOMEM. */
int trace_span(trace *t, int track, double start_s, double dur_s, trace_cat cat,
	       const char *name);

/* Number of tracks declared and spans added. */
size_t trace_ntracks(const trace *t);
size_t trace_nspans(const trace *t);

/* Writes the trace as JSON to f: metadata events first (process names and
 * sort order, then thread names and sort order, in declaration order), then
 * spans in the order they were added, with "ts" and "dur" in microseconds.
 * Same trace => byte-identical output. 0 or SIM_EIO. */
int trace_write(const trace *t, FILE *f);

/* Writes atomically: PATH.tmp.PID, fsync, rename over path; on failure the
 * temporary is removed and path is untouched. 0, SIM_EIO or SIM_ENOMEM;
 * errbuf (may be NULL) gets "path: reason". */
int trace_write_file(const trace *t, const char *path, char *errbuf, size_t errlen);

#endif
