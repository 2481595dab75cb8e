/* dpusim plot --kind timeline: a Gantt chart of a Chrome/Perfetto trace
 * (tools/trace.h): one row per track (GPU, host CPU, DPU, link group) in the
 * trace's own sort order, one box per "X" span, coloured by category. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libfyaml.h>

#include "sim/alloc.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tools/plot.h"

struct track {
	long pid, tid;
	long psort, tsort;      /* process/thread sort index (default pid/tid) */
	char name[96];          /* "node 0 / GPU 3" */
	int row;                /* plot row, -1 not plotted */
};

struct tl {
	struct track *tr;
	size_t ntr, cap;
	size_t *slot;           /* open-addressing index of tr by (pid, tid): */
	size_t nslots;          /* index + 1, 0 empty; a power of two >= 2 ntr */
	char pname[64][48];     /* process names by pid (0..63) */
	long psort[64];         /* process sort index by pid ... */
	bool has_psort[64];     /* ... when the trace gives one */
	double t_max_us;
	size_t nspans;
};

static const char *const cats[] = { "compute", "comm", "data", "stall", "other" };
static const char *const cat_colors[] = { "#4477aa", "#ee7733", "#228833", "#cc3311",
					  "#999999" };
#define NCATS 5

static const char *str_of(struct fy_node *ev, const char *key)
{
	return fy_node_mapping_lookup_scalar0_by_simple_key(ev, key, (size_t)-1);
}

/* A numeric field; false when absent or not a number. */
static bool num_of(struct fy_node *ev, const char *key, double *out)
{
	const char *s = str_of(ev, key);
	char *end;
	if (!s || !*s)
		return false;
	*out = strtod(s, &end);
	return !*end && isfinite(*out);
}

/* An id or sort index: a whole number within +-2^53, so the cast to long
 * below is defined (1e300 was not); false skips the event as unreadable. */
static bool id_of(struct fy_node *ev, const char *key, double *out)
{
	return num_of(ev, key, out) && *out == floor(*out) && fabs(*out) <= 9007199254740992.0;
}

/* Tracks are found through a hash of (pid, tid): a linear search made a
 * trace of 300,000 tracks take minutes (every event searched them all). */
static size_t hash_ids(long pid, long tid, size_t mask)
{
	uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15u ^ (uint64_t)tid * 0xc2b2ae3d27d4eb4fu;
	return (size_t)(h ^ (h >> 29)) & mask;
}

/* Where (pid, tid) is or would go in t->slot. */
static size_t *find_slot(const struct tl *t, long pid, long tid)
{
	size_t mask = t->nslots - 1, i = hash_ids(pid, tid, mask);
	while (t->slot[i] && (t->tr[t->slot[i] - 1].pid != pid || t->tr[t->slot[i] - 1].tid != tid))
		i = (i + 1) & mask;
	return &t->slot[i];
}

/* Rebuilds the index for t->tr as it is now (after growing or sorting). */
static int reindex(struct tl *t, size_t nslots)
{
	size_t *slot = calloc(nslots, sizeof *slot);
	if (!slot)
		return SIM_ENOMEM;
	free(t->slot);
	t->slot = slot;
	t->nslots = nslots;
	for (size_t i = 0; i < t->ntr; i++)
		*find_slot(t, t->tr[i].pid, t->tr[i].tid) = i + 1;
	return 0;
}

static struct track *track_of(struct tl *t, long pid, long tid)
{
	size_t *at;
	if (t->nslots && *(at = find_slot(t, pid, tid)))
		return &t->tr[*at - 1];
	if (sim_grow(&t->tr, &t->cap, t->ntr + 1, sizeof *t->tr, 64))
		return NULL;
	if (2 * (t->ntr + 1) > t->nslots && reindex(t, t->nslots ? 2 * t->nslots : 128))
		return NULL;
	t->tr[t->ntr] = (struct track){ .pid = pid, .tid = tid, .psort = pid, .tsort = tid,
					.row = -1 };
	snprintf(t->tr[t->ntr].name, sizeof t->tr[t->ntr].name, "track %ld/%ld", pid, tid);
	*find_slot(t, pid, tid) = t->ntr + 1;
	return &t->tr[t->ntr++];
}

/* "M" events: process and thread names and sort indices. */
static int meta_event(struct tl *t, struct fy_node *ev, long pid, long tid)
{
	const char *what = str_of(ev, "name");
	struct fy_node *args = fy_node_mapping_lookup_value_by_simple_key(ev, "args", (size_t)-1);
	const char *name = args ? str_of(args, "name") : NULL;
	double idx;
	struct track *k;
	if (!what || !args)
		return 0;
	if (!strcmp(what, "process_name") && name && pid >= 0 && pid < 64)
		snprintf(t->pname[pid], sizeof t->pname[pid], "%s", name);
	if (!strcmp(what, "process_sort_index") && pid >= 0 && pid < 64 &&
	    id_of(args, "sort_index", &idx)) {
		t->psort[pid] = (long)idx;
		t->has_psort[pid] = true;
	}
	if (strcmp(what, "thread_name") && strcmp(what, "thread_sort_index"))
		return 0;
	if (!(k = track_of(t, pid, tid)))
		return SIM_ENOMEM;
	if (!strcmp(what, "thread_name") && name)
		snprintf(k->name, sizeof k->name, "%s", name);
	else if (id_of(args, "sort_index", &idx))
		k->tsort = (long)idx;
	return 0;
}

static int cat_index(const char *c)
{
	for (int i = 0; i < NCATS - 1; i++)
		if (c && !strcmp(c, cats[i]))
			return i;
	return NCATS - 1;
}

static int cmp_track(const void *a, const void *b)
{
	const struct track *x = a, *y = b;
	if (x->psort != y->psort)
		return x->psort < y->psort ? -1 : 1;
	if (x->tsort != y->tsort)
		return x->tsort < y->tsort ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Span times in microseconds: from 0 to the simulator's end of time (2^63
 * ps, 106 days). Outside it gnuplot's axis breaks ("x range is invalid")
 * and a negative duration draws a box backwards. */
#define SPAN_MAX_US 9.223372036854775807e12

/* A span outside that range: its 'ts' placed in the file; SIM_ERANGE. */
static int bad_span(const char *path, struct fy_node *ev, double ts, double dur)
{
	struct fy_node *n = fy_node_mapping_lookup_value_by_simple_key(ev, "ts", (size_t)-1);
	struct fy_token *tok = n ? fy_node_get_scalar_token(n) : NULL;
	const struct fy_mark *m = tok ? fy_token_start_mark(tok) : NULL;
	cli_error("%s:%d:%d: span with ts %g us and dur %g us, expected both >= 0 and ending "
		  "by %g us (the simulator's end of time)", path, m ? m->line + 1 : 0,
		  m ? m->column + 1 : 0, ts, dur, SPAN_MAX_US);
	return SIM_ERANGE;
}

/* First pass: tracks from metadata and from spans; order and rows. */
static int scan(struct tl *t, const char *path, struct fy_node *events, unsigned max_tracks)
{
	struct fy_node *ev;
	void *it = NULL;
	double pid, tid, ts, dur;
	int err;
	while ((ev = fy_node_sequence_iterate(events, &it))) {
		const char *ph = fy_node_is_mapping(ev) ? str_of(ev, "ph") : NULL;
		if (!ph || !id_of(ev, "pid", &pid) || !id_of(ev, "tid", &tid))
			continue;
		if (!strcmp(ph, "M") && (err = meta_event(t, ev, (long)pid, (long)tid)))
			return err;
		if (!strcmp(ph, "X") && num_of(ev, "ts", &ts) && num_of(ev, "dur", &dur)) {
			if (!(ts >= 0 && dur >= 0 && ts + dur <= SPAN_MAX_US))
				return bad_span(path, ev, ts, dur);
			if (!track_of(t, (long)pid, (long)tid))
				return SIM_ENOMEM;
			t->t_max_us = fmax(t->t_max_us, ts + dur);
			t->nspans++;
		}
	}
	/* process sort indices come before their threads are known */
	for (size_t i = 0; i < t->ntr; i++)
		if (t->tr[i].pid >= 0 && t->tr[i].pid < 64 && t->has_psort[t->tr[i].pid])
			t->tr[i].psort = t->psort[t->tr[i].pid];
	if (t->ntr) /* qsort's array may not be NULL, even for no elements */
		qsort(t->tr, t->ntr, sizeof *t->tr, cmp_track);
	for (size_t i = 0; i < t->ntr && i < max_tracks; i++)
		t->tr[i].row = (int)i;
	return t->nslots ? reindex(t, t->nslots) : 0; /* the sort moved every track */
}

/* Second pass: one data block per category that has spans (x_mid y
 * half_width half_height); block[c] is its gnuplot index, -1 for none.
 * Empty blocks are not written: gnuplot counts a run of blank lines as one
 * separator, so a trace with no 'compute' spans pointed 'other' at a block
 * that did not exist ("x range is invalid"). */
static void write_spans(struct tl *t, struct fy_node *events, FILE *d, int block[NCATS])
{
	int nblocks = 0;
	for (int c = 0; c < NCATS; c++) {
		struct fy_node *ev;
		void *it = NULL;
		double pid, tid, ts, dur;
		while ((ev = fy_node_sequence_iterate(events, &it))) {
			const char *ph = fy_node_is_mapping(ev) ? str_of(ev, "ph") : NULL;
			struct track *k;
			if (!ph || strcmp(ph, "X") || cat_index(str_of(ev, "cat")) != c ||
			    !id_of(ev, "pid", &pid) || !id_of(ev, "tid", &tid) ||
			    !num_of(ev, "ts", &ts) || !num_of(ev, "dur", &dur))
				continue;
			k = track_of(t, (long)pid, (long)tid);
			if (!k || k->row < 0)
				continue;
			/* microseconds in the file, milliseconds on the axis */
			fprintf(d, "%.17g %d %.17g 0.35\n", (ts + dur / 2) / 1e3, k->row, dur / 2e3);
			block[c] = block[c] < 0 ? nblocks++ : block[c];
		}
		if (block[c] >= 0)
			fputs("\n\n", d);
	}
}

static void write_script(struct tl *t, const struct plot_opts *o, gp_job *p,
			 const int block[NCATS])
{
	size_t rows = t->ntr < o->max_tracks ? t->ntr : o->max_tracks;
	bool first = true;
	char title[256];
	snprintf(title, sizeof title, "Timeline: %zu spans on %zu tracks%s", t->nspans, t->ntr,
		 rows < t->ntr ? " (first tracks shown, see --tracks)" : "");
	fputs("set title ", p->f);
	gp_put_str(p->f, title);
	fprintf(p->f, "\nset xlabel 'time (ms)'\nset ylabel 'track'\nset yrange [%zu.5:-0.5]\n"
		"set xrange [0:*]\nset style fill solid 0.9 noborder\nset grid xtics\n"
		"set key outside right top vertical\nset ytics (", rows ? rows - 1 : 0);
	for (size_t i = 0; i < rows; i++) {
		char label[160];
		const struct track *k = &t->tr[i];
		const char *pn = k->pid >= 0 && k->pid < 64 ? t->pname[k->pid] : "";
		snprintf(label, sizeof label, "%s%s%s", pn, *pn ? " / " : "", k->name);
		fputs(i ? ", " : "", p->f);
		gp_put_str(p->f, label);
		fprintf(p->f, " %zu", i);
	}
	fputs(")\nplot ", p->f);
	for (int c = 0; c < NCATS; c++) {
		if (block[c] < 0)
			continue;
		fprintf(p->f, "%s'%s' index %d using 1:2:3:4 with boxxyerror lc rgb '%s' title '%s'",
			first ? "" : ", ", p->data, block[c], cat_colors[c], cats[c]);
		first = false;
	}
	fputc('\n', p->f);
}

/* Without --size the picture grows with its rows, 18 pixels each (an 11-pt
 * label's height and a gap), so labels never overlap; at most 8000 high. */
#define ROW_PX 18u
#define FRAME_PX 140u
static const struct plot_opts *sized(const struct plot_opts *o, const struct tl *t,
				     struct plot_opts *grown)
{
	size_t rows = t->ntr < o->max_tracks ? t->ntr : o->max_tracks;
	size_t need = FRAME_PX + ROW_PX * rows;
	if (o->size_given || need <= o->h)
		return o;
	*grown = *o;
	grown->h = need > 8000 ? 8000 : (unsigned)need;
	return grown;
}

/* The events list: {"traceEvents": [...]} or a bare [...]. */
static struct fy_node *events_of(struct fy_document *doc)
{
	struct fy_node *root = fy_document_root(doc);
	if (root && fy_node_is_mapping(root))
		root = fy_node_mapping_lookup_value_by_simple_key(root, "traceEvents", (size_t)-1);
	return root && fy_node_is_sequence(root) ? root : NULL;
}

#define TRACE_WANTED "expected a trace (the JSON 'dpusim run --trace' writes)"

/* Where the trace's JSON value starts, 1-based, for errors about it. */
struct trace_at {
	int line, col;
};

/* Whether f (opened from path) can be parsed: not a folder, and holding
 * more than whitespace; else the error, placed at 1:1 as the report
 * reader places an empty report. f is left at its start. */
static bool trace_readable(FILE *f, const char *path, struct trace_at *root)
{
	struct stat st;
	long blank = 0;
	int c;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
		return cli_error("%s: is a directory, %s", path, TRACE_WANTED), false;
	/* /dev/zero was read without end; a pipe could not be read twice
	 * (rewind below, past_last_byte) anyway */
	if (fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode))
		return cli_error("%s: not a regular file, %s", path, TRACE_WANTED), false;
	*root = (struct trace_at){ 1, 1 };
	while ((c = getc(f)) == ' ' || c == '\t' || c == '\r' || c == '\n') {
		blank++;
		*root = c == '\n' ? (struct trace_at){ root->line + 1, 1 }
				 : (struct trace_at){ root->line, root->col + 1 };
	}
	if (c == EOF && ferror(f))
		return cli_error("%s: cannot read: %s", path, strerror(errno)), false;
	if (c == EOF)
		return cli_error("%s:1:1: %s, %s", path, blank ? "only whitespace" : "empty",
				 TRACE_WANTED), false;
	rewind(f);
	return true;
}

/* Whether (line, col), 1-based, lies after the last byte of f that is not
 * whitespace: a syntax error there means the file was cut short (the
 * report reader says the same, report_read.c past_text). */
static bool past_last_byte(FILE *f, int line, int col)
{
	struct trace_at at = { 1, 0 }, last = { 1, 0 };
	int c;
	rewind(f);
	while ((c = getc(f)) != EOF) {
		at = c == '\n' ? (struct trace_at){ at.line + 1, 0 }
			       : (struct trace_at){ at.line, at.col + 1 };
		if (c != '\n' && c != ' ' && c != '\t' && c != '\r')
			last = at;
	}
	return line > last.line || (line == last.line && col > last.col);
}

static struct fy_document *load_trace(const char *path, struct trace_at *root)
{
	struct fy_diag_cfg dcfg;
	struct fy_diag *diag;
	struct fy_parse_cfg pcfg;
	struct fy_document *doc = NULL;
	struct fy_diag_error *e;
	void *it = NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return cli_error("%s: cannot open: %s", path, strerror(errno)), NULL;
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	if (!trace_readable(f, path, root) || !(diag = fy_diag_create(&dcfg))) {
		fclose(f);
		return NULL;
	}
	fy_diag_set_collect_errors(diag, true);
	pcfg = (struct fy_parse_cfg){ .flags = FYPCF_QUIET | FYPCF_JSON_FORCE, .diag = diag };
	if (!(doc = fy_document_build_from_fp(&pcfg, f))) {
		e = fy_diag_errors_iterate(diag, &it);
		if (e)
			cli_error("%s:%d:%d: invalid JSON: %s%s", path, e->line, e->column, e->msg,
				  past_last_byte(f, e->line, e->column) ? " (the file ends here, "
				  "before its JSON does: cut short?)" : "");
		else
			cli_error("%s: cannot read: %s", path, strerror(errno));
	}
	fclose(f);
	fy_diag_destroy(diag);
	return doc;
}

int plot_timeline(const struct plot_opts *o)
{
	struct trace_at at;
	struct fy_document *doc = load_trace(o->src[0], &at);
	struct fy_node *events = doc ? events_of(doc) : NULL;
	struct tl *t = calloc(1, sizeof *t);
	struct plot_opts grown;
	gp_job p = { .f = NULL };
	int block[NCATS] = { -1, -1, -1, -1, -1 };
	FILE *d = NULL;
	int rc = 0;
	if (!doc || !t)
		rc = doc ? (cli_error("out of memory"), CLI_USAGE) : CLI_USAGE;
	else if (!events)
		rc = (cli_error("%s:%d:%d: not a trace: expected an object with a 'traceEvents' "
				"list, or a list of events", o->src[0], at.line, at.col), CLI_USAGE);
	else if ((rc = scan(t, o->src[0], events, o->max_tracks)))
		rc = rc == SIM_ERANGE ? CLI_USAGE : (cli_error("out of memory"), CLI_USAGE);
	else if (t->nspans == 0)
		rc = (cli_error("%s:%d:%d: the trace has no spans: expected \"ph\": \"X\" events",
				o->src[0], at.line, at.col), CLI_USAGE);
	else if (!(rc = plot_begin(&p, sized(o, t, &grown))) && !(d = plot_open_data(&p)))
		rc = CLI_USAGE;
	if (!rc) {
		write_spans(t, events, d, block);
		rc = plot_close_data(d);
		write_script(t, o, &p, block);
	}
	if (t)
		free(t->tr), free(t->slot);
	free(t);
	fy_document_destroy(doc);
	return p.dir[0] ? plot_finish(&p, o->out, rc) : rc;
}
