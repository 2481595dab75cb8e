/* Chrome/Perfetto trace-event writer: tracks in a small hash (so declaring a
 * track twice is cheap and idempotent), span names in one string arena (no
 * malloc per span), JSON written deterministically and atomically. */
#include "tools/trace.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/err.h"
#include "report/atomic.h"
#include "report/json.h"

typedef enum track_kind { K_HOST, K_DPU, K_GPU, K_LINK } track_kind;

struct track {
	track_kind kind;
	int node;          /* -1 for link groups */
	int gpu;           /* K_GPU only */
	size_t name_off;   /* K_LINK only: offset in the arena */
};

struct span {
	int track;
	trace_cat cat;
	double start_s, dur_s;
	size_t name_off;
};

struct trace {
	struct track *tracks;
	size_t ntracks, captracks;
	int *slots;        /* open addressing: track id + 1, 0 empty */
	size_t nslots;     /* power of two, at least twice ntracks */
	struct span *spans;
	size_t nspans, capspans;
	char *arena;       /* NUL-terminated names back to back */
	size_t arena_len, arena_cap;
};

static const char *const cat_names[] = { "compute", "comm", "data", "stall" };

const char *trace_cat_name(trace_cat c)
{
	return (unsigned)c < sizeof cat_names / sizeof cat_names[0] ? cat_names[c] : NULL;
}

trace *trace_new(void)
{
	trace *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->nslots = 64;
	if (!(t->slots = calloc(t->nslots, sizeof *t->slots))) {
		free(t);
		return NULL;
	}
	return t;
}

void trace_free(trace *t)
{
	if (!t)
		return;
	free(t->tracks);
	free(t->slots);
	free(t->spans);
	free(t->arena);
	free(t);
}

size_t trace_ntracks(const trace *t) { return t->ntracks; }
size_t trace_nspans(const trace *t) { return t->nspans; }

/* p (an array of *cap elements of size sz) grown to hold at least need:
 * p itself when it is big enough, a new pointer, or NULL (p untouched) when
 * out of memory. */
static void *grow(void *p, size_t *cap, size_t need, size_t sz)
{
	size_t n = *cap ? *cap : 16;
	void *q;
	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	if (!(q = realloc(p, n * sz)))
		return NULL;
	*cap = n;
	return q;
}

/* Copies s into the arena; *off gets its offset. */
static int intern(trace *t, const char *s, size_t *off)
{
	size_t n = strlen(s) + 1;
	char *a = grow(t->arena, &t->arena_cap, t->arena_len + n, 1);
	if (!a)
		return SIM_ENOMEM;
	t->arena = a;
	memcpy(t->arena + t->arena_len, s, n);
	*off = t->arena_len;
	t->arena_len += n;
	return 0;
}

/* FNV-1a over the track's identity: kind plus node, GPU number or name. */
static uint64_t track_hash(track_kind kind, int num, const char *name)
{
	uint64_t h = 1469598103934665603u ^ (uint64_t)kind;
	const unsigned char *s = (const unsigned char *)name;
	h = (h ^ (uint32_t)num) * 1099511628211u;
	while (s && *s)
		h = (h ^ *s++) * 1099511628211u;
	return h ^ (h >> 29);
}

/* The identity key of a track: the GPU number for GPUs, else the node. */
static int track_num(const struct track *k)
{
	return k->kind == K_GPU ? k->gpu : k->node;
}

static bool same_track(const trace *t, const struct track *a, const struct track *b,
		       const char *bname)
{
	if (a->kind != b->kind || track_num(a) != track_num(b))
		return false;
	return a->kind != K_LINK || !strcmp(t->arena + a->name_off, bname);
}

/* The slot holding track k (name: k's link name), or the empty slot where
 * it would go. */
static int *find_slot(trace *t, const struct track *k, const char *name)
{
	size_t mask = t->nslots - 1;
	size_t i = (size_t)track_hash(k->kind, track_num(k), name) & mask;
	while (t->slots[i] && !same_track(t, &t->tracks[t->slots[i] - 1], k, name))
		i = (i + 1) & mask;
	return &t->slots[i];
}

/* Doubles the slot table and reinserts every track. */
static int rehash(trace *t)
{
	int *old = t->slots;
	size_t nold = t->nslots;
	if (!(t->slots = calloc(nold * 2, sizeof *t->slots))) {
		t->slots = old;
		return SIM_ENOMEM;
	}
	t->nslots = nold * 2;
	for (size_t id = 0; id < t->ntracks; id++) {
		const struct track *k = &t->tracks[id];
		*find_slot(t, k, k->kind == K_LINK ? t->arena + k->name_off : NULL) = (int)id + 1;
	}
	free(old);
	return 0;
}

/* The id of track k, declared now if new. SIM_EEXIST when GPU k.gpu was
 * declared in another node. */
static int declare(trace *t, struct track k, const char *name)
{
	struct track *tracks;
	int *slot;
	/* keep the table at most half full, so probes stay short and end */
	if (2 * (t->ntracks + 1) > t->nslots && rehash(t))
		return SIM_ENOMEM;
	slot = find_slot(t, &k, name);
	if (*slot) {
		const struct track *old = &t->tracks[*slot - 1];
		return old->node == k.node ? *slot - 1 : SIM_EEXIST;
	}
	if (t->ntracks >= INT32_MAX - 1 ||
	    !(tracks = grow(t->tracks, &t->captracks, t->ntracks + 1, sizeof *tracks)))
		return SIM_ENOMEM;
	t->tracks = tracks;
	if (name && intern(t, name, &k.name_off))
		return SIM_ENOMEM;
	t->tracks[t->ntracks] = k;
	*slot = (int)++t->ntracks;
	return (int)t->ntracks - 1;
}

int trace_gpu(trace *t, int node, int gpu)
{
	if (node < 0 || gpu < 0)
		return SIM_EINVAL;
	return declare(t, (struct track){ .kind = K_GPU, .node = node, .gpu = gpu }, NULL);
}

int trace_host(trace *t, int node)
{
	if (node < 0)
		return SIM_EINVAL;
	return declare(t, (struct track){ .kind = K_HOST, .node = node }, NULL);
}

int trace_dpu(trace *t, int node)
{
	if (node < 0)
		return SIM_EINVAL;
	return declare(t, (struct track){ .kind = K_DPU, .node = node }, NULL);
}

int trace_link(trace *t, const char *name)
{
	if (!name || !*name)
		return SIM_EINVAL;
	return declare(t, (struct track){ .kind = K_LINK, .node = -1 }, name);
}

int trace_span(trace *t, int track, double start_s, double dur_s, trace_cat cat,
	       const char *name)
{
	struct span s = { .track = track, .cat = cat, .start_s = start_s, .dur_s = dur_s };
	if (track < 0 || (size_t)track >= t->ntracks)
		return SIM_ENOENT;
	if (!trace_cat_name(cat) || !name || !*name)
		return SIM_EINVAL;
	if (!isfinite(start_s) || !isfinite(dur_s) || start_s < 0 || dur_s < 0)
		return SIM_ERANGE;
	struct span *spans = grow(t->spans, &t->capspans, t->nspans + 1, sizeof *spans);
	if (!spans)
		return SIM_ENOMEM;
	t->spans = spans;
	if (intern(t, name, &s.name_off))
		return SIM_ENOMEM;
	t->spans[t->nspans++] = s;
	return 0;
}

/* ---- writing ----------------------------------------------------------- */

/* Seconds as microseconds with picosecond resolution, trailing zeros cut:
 * 1.5e-6 -> "1.5". */
static void put_us(FILE *f, double s)
{
	char buf[64];
	size_t n = (size_t)snprintf(buf, sizeof buf, "%.6f", s * 1e6);
	while (n > 1 && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 1 && buf[n - 1] == '.')
		buf[--n] = '\0';
	fputs(buf, f);
}

static int pid_of(const struct track *k) { return k->kind == K_LINK ? 0 : k->node + 1; }

/* Where a thread goes inside its process: host CPU, DPU, GPUs by number;
 * link groups in declaration order. */
static long thread_sort(const struct track *k, size_t id)
{
	switch (k->kind) {
	case K_HOST: return 0;
	case K_DPU: return 1;
	case K_GPU: return 2L + k->gpu;
	case K_LINK: break;
	}
	return (long)id;
}

static void put_meta(FILE *f, bool *first, const char *what, int pid, long tid,
		     const char *key, const char *sval, long ival)
{
	fprintf(f, "%s\n{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%ld,\"args\":{\"%s\":",
		*first ? "" : ",", what, pid, tid, key);
	if (sval)
		json_put_str(f, sval);
	else
		fprintf(f, "%ld", ival);
	fputs("}}", f);
	*first = false;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* process_name and process_sort_index for every node in use (ascending) and
 * for "fabric" after them when there are link groups. */
static int put_processes(const trace *t, FILE *f, bool *first)
{
	int *nodes = malloc((t->ntracks + 1) * sizeof *nodes), maxnode = -1;
	size_t n = 0;
	bool links = false;
	char name[32];
	if (!nodes)
		return SIM_ENOMEM;
	for (size_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].kind == K_LINK)
			links = true;
		else
			nodes[n++] = t->tracks[i].node;
	qsort(nodes, n, sizeof *nodes, cmp_int);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && nodes[i] == nodes[i - 1])
			continue;
		snprintf(name, sizeof name, "node %d", nodes[i]);
		put_meta(f, first, "process_name", nodes[i] + 1, 0, "name", name, 0);
		put_meta(f, first, "process_sort_index", nodes[i] + 1, 0, "sort_index", NULL, nodes[i]);
		maxnode = nodes[i];
	}
	if (links) {
		put_meta(f, first, "process_name", 0, 0, "name", "fabric", 0);
		put_meta(f, first, "process_sort_index", 0, 0, "sort_index", NULL, maxnode + 1L);
	}
	free(nodes);
	return 0;
}

static void put_threads(const trace *t, FILE *f, bool *first)
{
	char name[32];
	for (size_t id = 0; id < t->ntracks; id++) {
		const struct track *k = &t->tracks[id];
		const char *nm = name;
		switch (k->kind) {
		case K_HOST: nm = "host CPU"; break;
		case K_DPU: nm = "DPU"; break;
		case K_GPU: snprintf(name, sizeof name, "GPU %d", k->gpu); break;
		case K_LINK: nm = t->arena + k->name_off; break;
		}
		put_meta(f, first, "thread_name", pid_of(k), (long)id + 1, "name", nm, 0);
		put_meta(f, first, "thread_sort_index", pid_of(k), (long)id + 1, "sort_index", NULL,
			 thread_sort(k, id));
	}
}

static void put_spans(const trace *t, FILE *f, bool *first)
{
	for (size_t i = 0; i < t->nspans; i++) {
		const struct span *s = &t->spans[i];
		fprintf(f, "%s\n{\"name\":", *first ? "" : ",");
		json_put_str(f, t->arena + s->name_off);
		fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":", cat_names[s->cat]);
		put_us(f, s->start_s);
		fputs(",\"dur\":", f);
		put_us(f, s->dur_s);
		fprintf(f, ",\"pid\":%d,\"tid\":%d}", pid_of(&t->tracks[s->track]), s->track + 1);
		*first = false;
	}
}

int trace_write(const trace *t, FILE *f)
{
	bool first = true;
	int err;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	if ((err = put_processes(t, f, &first)))
		return err;
	put_threads(t, f, &first);
	put_spans(t, f, &first);
	fputs("\n]}\n", f);
	return ferror(f) ? SIM_EIO : 0;
}

static int write_to(FILE *f, const void *t)
{
	return trace_write(t, f);
}

int trace_write_file(const trace *t, const char *path, char *errbuf, size_t errlen)
{
	return atomic_write_file(path, write_to, t, errbuf, errlen);
}
