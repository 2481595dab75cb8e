/* `dpusim sweep` machinery: the file hash, which points still need running,
 * computing one point, the message a worker sends back, storing results
 * (one transaction per point) with progress, and the serial and --jobs
 * drivers. The MPI driver is tools/sweep_mpi.c. */
#include "tools/sweep.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "models/canon.h"
#include "report/atomic.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tools/human.h"
#include "tools/progress.h"

/* ---- the file and the plan ------------------------------------------ */

static int read_all(FILE *f, char **text, size_t *len)
{
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap), *nb;
	if (!buf)
		return SIM_ENOMEM;
	while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n - 1 == 0) {
			if (!(nb = realloc(buf, cap * 2)))
				return free(buf), SIM_ENOMEM;
			buf = nb;
			cap *= 2;
		}
	}
	if (ferror(f))
		return free(buf), SIM_EIO;
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

int sweep_hash_file(sweep *c)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	size_t len = 0;
	FILE *f = fopen(c->file, "rb");
	int rc;
	if (!f) {
		cli_error("%s: cannot read: %s", c->file, strerror(errno));
		return SIM_EIO;
	}
	rc = read_all(f, &c->text, &len);
	fclose(f);
	if (rc) {
		cli_error("%s: cannot read: %s", c->file, sim_strerror(rc));
		return rc;
	}
	if (!EVP_Digest(c->text, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) {
		cli_error("%s: SHA-256 failed (OpenSSL EVP_Digest)", c->file);
		return SIM_EIO;
	}
	for (unsigned i = 0; i < mdlen; i++)
		snprintf(c->sha256 + 2 * i, 3, "%02x", md[i]);
	return 0;
}

void sweep_label(const sweep *c, size_t i, char *buf, size_t n)
{
	char value[CANON_MAX + 1];
	size_t len = 0;
	buf[0] = '\0';
	for (size_t a = 0; a < c->s->sweep.naxes && len < n; a++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", a ? "," : "",
					c->s->sweep.axes[a].key,
					scn_sweep_value(c->s, a, i, value, sizeof value));
}

/* The seed point i runs with: --seed, else the scenario's, unless the
 * sweep itself runs through seeds. */
static int point_seed(const sweep *c, size_t i, uint64_t *seed)
{
	scn_scenario *p = NULL;
	diag *d;
	int rc;
	*seed = c->ro.has_seed ? c->ro.seed : c->s->seed;
	for (size_t a = 0; a < c->s->sweep.naxes && !c->ro.has_seed; a++) {
		if (strcmp(c->s->sweep.axes[a].key, "seed"))
			continue;
		if (!(d = diag_new()))
			return SIM_ENOMEM;
		if (!(rc = scn_sweep_point(c->s, i, &p, d)))
			*seed = p->seed;
		scn_free(p);
		diag_free(d);
		return rc;
	}
	return 0;
}

int sweep_plan(sweep *c, size_t shard, size_t nshards)
{
	size_t points = c->s->sweep.points;
	char label[SWEEP_LABEL_MAX], err[512];
	if (!(c->todo = malloc((points / nshards + 1) * sizeof *c->todo)))
		return cli_error("out of memory"), SIM_ENOMEM;
	for (size_t p = shard; p < points; p += nshards) {
		db_key k = { .scenario = c->s->name, .sha256 = c->sha256, .point = label,
			     .source = "sim" };
		int64_t id;
		int rc = point_seed(c, p, &k.seed);
		if (rc)
			return cli_error("sweep point %zu: %s", p, sim_strerror(rc)), rc;
		sweep_label(c, p, label, sizeof label);
		if (!label[0])
			k.point = NULL;
		if ((id = db_find_run(c->d, &k, err, sizeof err)) < 0)
			return cli_error("%s", err), (int)id;
		if (id > 0)
			c->skipped++;
		else
			c->todo[c->ntodo++] = p;
	}
	return 0;
}

int sweep_plan_eta(sweep *c, unsigned par)
{
	if (sweep_eta_init(&c->eta, c->ntodo, par))
		return cli_error("out of memory"), SIM_ENOMEM;
	for (size_t k = 0; k < c->ntodo; k++) {
		scn_scenario *p = NULL;
		diag *d = diag_new();
		if (!d)
			return cli_error("out of memory"), SIM_ENOMEM;
		if (!scn_sweep_point(c->s, c->todo[k], &p, d))
			c->eta.work[k] = sweep_point_work(p);
		scn_free(p);
		diag_free(d);
	}
	return 0;
}

/* Point i's place in c->todo (ascending), or c->ntodo. */
static size_t todo_pos(const sweep *c, size_t i)
{
	size_t lo = 0, hi = c->ntodo;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->todo[mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ntodo && c->todo[lo] == i ? lo : c->ntodo;
}

void sweep_started(sweep *c, size_t i)
{
	sweep_eta_start(&c->eta, todo_pos(c, i), cli_wall_s());
}

/* ---- one point ------------------------------------------------------- */

/* Puts the sweep's identity into r: label, hash, file; index as info. */
static int mark_report(const sweep *c, size_t i, rep_report *r)
{
	const rep_scenario *old = rep_get_scenario(r);
	char name[SCN_NAME_MAX], label[SWEEP_LABEL_MAX], idx[32], npts[32];
	int rc;
	snprintf(name, sizeof name, "%s", old->name ? old->name : c->s->name);
	sweep_label(c, i, label, sizeof label);
	rc = rep_set_scenario(r, &(rep_scenario){ .name = name, .file = c->file,
						 .sha256 = c->sha256, .seed = old->seed,
						 .point = label[0] ? label : NULL });
	snprintf(idx, sizeof idx, "%zu", i);
	snprintf(npts, sizeof npts, "%zu", c->s->sweep.points);
	if (!rc)
		rc = rep_set_info(r, "sweep_index", idx);
	if (!rc)
		rc = rep_set_info(r, "sweep_points", npts);
	return rc;
}

/* Point i as sweep_compute, its progress lines ending with tail's text. */
static int compute(const sweep *c, size_t i, rep_report **out, diag *d, progress_tail_fn *tail)
{
	char label[SWEEP_LABEL_MAX], prefix[SWEEP_LABEL_MAX + 32];
	scn_scenario *p = NULL;
	int rc;
	cli_test_stop_at("DPUSIM_TEST_SWEEP_STOP", "point", i); /* tools/sweep.h */
	sweep_label(c, i, label, sizeof label);
	snprintf(prefix, sizeof prefix, "sweep point (%s)", label[0] ? label : "no sweep");
	progress_context(prefix, tail, (void *)c);
	rc = scn_sweep_point(c->s, i, &p, d);
	*out = NULL;
	if (!rc)
		rc = run_scenario(p, &c->ro, out, d);
	scn_free(p);
	if (!rc && (rc = mark_report(c, i, *out))) {
		diag_add(d, NULL, 0, 0, "labelling the report: %s", sim_strerror(rc));
		rep_free(*out);
		*out = NULL;
	}
	if (rc && !diag_count(d))
		diag_add(d, NULL, 0, 0, "%s", sim_strerror(rc));
	progress_context(NULL, NULL, NULL);
	return rc;
}

int sweep_compute(const sweep *c, size_t i, rep_report **out, diag *d)
{
	return compute(c, i, out, d, NULL);
}

/* header + body into one malloc'd message. */
static int make_msg(long point, int status, const char *body, size_t blen, char **msg,
		    size_t *len)
{
	char hdr[SWEEP_HDR_MAX];
	size_t h = (size_t)snprintf(hdr, sizeof hdr, "%s %ld %d %zu\n", SWEEP_MSG_MAGIC, point,
				    status, blen);
	if (!(*msg = malloc(h + blen + 1)))
		return SIM_ENOMEM;
	memcpy(*msg, hdr, h);
	memcpy(*msg + h, body, blen);
	(*msg)[h + blen] = '\0';
	*len = h + blen;
	return 0;
}

int sweep_compute_msg(const sweep *c, size_t i, char **msg, size_t *len)
{
	diag *d = diag_new();
	rep_report *r = NULL;
	char *body = NULL;
	size_t blen = 0;
	FILE *f;
	int rc, status;
	if (!d)
		return SIM_ENOMEM;
	status = sweep_compute(c, i, &r, d);
	if (!(f = open_memstream(&body, &blen))) {
		rep_free(r);
		diag_free(d);
		return SIM_ENOMEM;
	}
	if (status)
		diag_print(d, f);
	else if ((status = rep_write_json(r, f)))
		fputs("serializing the report failed\n", f);
	rc = fclose(f) ? SIM_ENOMEM : make_msg((long)i, status, body, blen, msg, len);
	free(body);
	rep_free(r);
	diag_free(d);
	return rc;
}

int sweep_parse_header(const char *hdr, long *point, int *status, size_t *len)
{
	char magic[sizeof SWEEP_MSG_MAGIC + 1];
	char nl = 0;
	if (sscanf(hdr, "%15s %ld %d %zu%c", magic, point, status, len, &nl) != 5 || nl != '\n' ||
	    strcmp(magic, SWEEP_MSG_MAGIC) || *point < -1)
		return SIM_EPARSE;
	return 0;
}

/* ---- storing and progress ------------------------------------------- */

/* "45.2 s elapsed, about 1.1 min left" (sweep_eta_text) */
static void elapsed_text(const sweep *c, char *buf, size_t n)
{
	double now = cli_wall_s();
	sweep_eta_text(c->eta.n == c->ntodo ? &c->eta : NULL, now - c->t0_s, now, buf, n);
}

/* "3/6 points done, 45.2 s elapsed, about 1.1 min left" */
static void status_text(const sweep *c, char *buf, size_t n)
{
	char el[128];
	elapsed_text(c, el, sizeof el);
	snprintf(buf, n, "%zu/%zu points done, %s", c->done + c->failed + c->late, c->ntodo, el);
}

static void draw_bar(sweep *c);

/* progress_bar's callback: the terminal's bar, redrawn while a point runs. */
static void redraw_bar(void *ctx)
{
	draw_bar(ctx);
}

void sweep_progress_bar(sweep *c)
{
	if (c->progress && c->tty)
		progress_bar(redraw_bar, c);
}

static void draw_bar(sweep *c)
{
	size_t n = c->done + c->failed + c->late, width = 30, fill = c->ntodo ? n * width / c->ntodo : width;
	char bar[64], el[128];
	memset(bar, '#', fill);
	memset(bar + fill, '.', width - fill);
	bar[width] = '\0';
	elapsed_text(c, el, sizeof el);
	fprintf(c->progress, "\r[%s] %zu/%zu points  %s ", bar, n, c->ntodo, el);
	fputs("\033[K", c->progress); /* the rest of a longer line before */
	fflush(c->progress);
}

/* A running point's lines in the serial driver end with the sweep's own
 * progress (progress_context). */
static void serial_tail(void *ctx, char *buf, size_t n)
{
	char st[256];
	status_text(ctx, st, sizeof st);
	snprintf(buf, n, "; sweep: %s", st);
}

void sweep_progress_start(sweep *c)
{
	c->t0_s = cli_wall_s();
	if (c->progress && c->s)
		fprintf(c->progress, "sweep: %zu point%s to run, %zu already stored\n", c->ntodo,
			c->ntodo == 1 ? "" : "s", c->skipped);
	if (c->progress && c->tty && c->ntodo)
		draw_bar(c);
}

void sweep_progress_end(sweep *c)
{
	if (c->progress && c->tty && c->ntodo)
		fputc('\n', c->progress);
}

static void note_point(sweep *c, size_t i, int64_t run_id, const char *what)
{
	char label[SWEEP_LABEL_MAX], st[128], t[32];
	double took;
	size_t k;
	if (!c->progress)
		return;
	if (c->tty)
		return draw_bar(c);
	sweep_label(c, i, label, sizeof label);
	k = todo_pos(c, i);
	took = k < c->eta.n ? c->eta.took_s[k] : NAN;
	elapsed_text(c, st, sizeof st);
	fprintf(c->progress, "sweep: point %zu/%zu %s %lld (%s)%s%s; %s\n",
		c->done + c->failed + c->late, c->ntodo, what, (long long)run_id,
		label[0] ? label : "no sweep", isfinite(took) ? " in " : "",
		isfinite(took) ? hum_duration(t, sizeof t, took) : "", st);
}

void sweep_progress_tick(sweep *c)
{
	char st[256], label[SWEEP_LABEL_MAX], el[32];
	double now = cli_wall_s(), longest = -1;
	size_t running = 0, at = 0;
	if (!c->progress || now - c->tick_s < SWEEP_TICK_MIN_S || !c->eta.n)
		return;
	if (c->tty) { /* the bar, with its clock moving */
		if (now - c->tick_s >= PROGRESS_BAR_S) {
			c->tick_s = now;
			draw_bar(c);
		}
		return;
	}
	for (size_t k = 0; k < c->eta.n; k++)
		if (isfinite(c->eta.start_s[k]) && !c->eta.over[k]) {
			running++;
			if (now - c->eta.start_s[k] > longest) {
				longest = now - c->eta.start_s[k];
				at = k;
			}
		}
	if (!running || !progress_due())
		return;
	c->tick_s = now;
	status_text(c, st, sizeof st);
	sweep_label(c, c->todo[at], label, sizeof label);
	fprintf(c->progress, "sweep: %s; %zu running, the longest for %s (%s)\n", st, running,
		hum_duration(el, sizeof el, longest), label[0] ? label : "no sweep");
	fflush(c->progress);
}

/* -o DIR: DIR/NAME.pINDEX.json */
static int write_point_file(const sweep *c, size_t i, const rep_report *r)
{
	char path[4096], err[1024];
	if (cli_path(path, sizeof path, "%s/%s.p%zu.json", c->out_dir, c->s->name, i))
		return SIM_EIO; /* make_out_dir refused it before the points */
	if (rep_write_file(r, path, err, sizeof err)) {
		cli_error("%s", err);
		return SIM_EIO;
	}
	return 0;
}

int sweep_accept(sweep *c, size_t i, rep_report *report, const char *why)
{
	char label[SWEEP_LABEL_MAX], err[1024];
	int64_t id = 0;
	bool added = true;
	int rc = 0;
	sweep_eta_end(&c->eta, todo_pos(c, i), cli_wall_s(), report != NULL);
	if (!report) {
		c->failed++;
		sweep_label(c, i, label, sizeof label);
		if (c->tty && c->progress)
			fputc('\n', c->progress);
		fflush(stdout);
		fprintf(stderr, "dpusim: error: sweep point %zu (%s) failed:\n%s", i,
			label[0] ? label : "no sweep", why ? why : "(no reason given)\n");
		if (c->tty && c->progress)
			draw_bar(c);
		return 0;
	}
	if (c->out_dir)
		rc = write_point_file(c, i, report);
	if (!rc && (rc = db_store_report(c->d, report, c->text, &id, &added, err, sizeof err)))
		cli_error("%s", err);
	rep_free(report);
	if (!rc && !added) {
		c->late++;  /* another sweep of the scenario stored it since the plan */
		note_point(c, i, id, "already stored as run");
	} else if (!rc) {
		c->done++;
		note_point(c, i, id, "stored as run");
	}
	return rc;
}

int sweep_accept_msg(sweep *c, size_t i, int status, const char *payload, size_t len)
{
	char err[1024];
	rep_report *r = NULL;
	if (status)
		return sweep_accept(c, i, NULL, payload);
	if (rep_read_string("(sweep worker)", payload, len, &r, err, sizeof err)) {
		size_t n = strlen(err);
		snprintf(err + n, sizeof err - n, "\n");
		return sweep_accept(c, i, NULL, err);
	}
	return sweep_accept(c, i, r, NULL);
}

double sweep_timeout_s(const sweep *c)
{
	if (c->timeout_s != SWEEP_TIMEOUT_AUTO)
		return c->timeout_s;
	return fmax(SWEEP_AUTO_MIN_S, SWEEP_AUTO_FACTOR * c->slowest_s);
}

/* ---- serial driver --------------------------------------------------- */

int sweep_run_serial(sweep *c)
{
	for (size_t k = 0; k < c->ntodo; k++) {
		diag *d = diag_new();
		rep_report *r = NULL;
		char *why = NULL;
		size_t wlen = 0;
		FILE *f;
		int rc;
		if (!d)
			return SIM_ENOMEM;
		sweep_started(c, c->todo[k]);
		if (compute(c, c->todo[k], &r, d, c->progress && !c->tty ? serial_tail : NULL) &&
		    (f = open_memstream(&why, &wlen))) {
			diag_print(d, f);
			fclose(f);
		}
		rc = sweep_accept(c, c->todo[k], r, why);
		free(why);
		diag_free(d);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- --jobs driver: forked workers over pipes ------------------------ */

struct worker {
	pid_t pid;
	int to_fd;     /* point indices, one per line; closed: stop */
	int from_fd;   /* messages */
	long point;    /* the point it is computing, -1 idle */
	double since_s;  /* when it got that point (cli_wall_s) */
};

/* All len bytes through a pipe, either way, whatever the signals:
 * SIM_EIO when the other end is gone (end of file or an error). */
static int pipe_all(int fd, char *buf, size_t len, bool out)
{
	while (len > 0) {
		ssize_t n = out ? write(fd, buf, len) : read(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return SIM_EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	return pipe_all(fd, (char *)buf, len, true);
}

static int read_full(int fd, char *buf, size_t len)
{
	return pipe_all(fd, buf, len, false);
}

/* One line (newline kept) into buf; SIM_EIO at EOF, SIM_EPARSE when too long. */
static int read_line(int fd, char *buf, size_t n)
{
	for (size_t k = 0; k + 1 < n; k++) {
		if (read_full(fd, buf + k, 1))
			return SIM_EIO;
		if (buf[k] == '\n') {
			buf[k + 1] = '\0';
			return 0;
		}
	}
	return SIM_EPARSE;
}

/* The child: compute each point it is sent until its input closes. */
static _Noreturn void worker_main(const sweep *c, int in_fd, int out_fd)
{
	char line[32];
	if (c->tty)
		progress_mute(true); /* the coordinator's bar says how it goes */
	while (!read_line(in_fd, line, sizeof line)) {
		unsigned long long i;
		char *msg = NULL;
		size_t len = 0;
		line[strcspn(line, "\n")] = '\0';
		if (!cli_parse_u64(line, &i) || i >= c->s->sweep.points ||
		    sweep_compute_msg(c, (size_t)i, &msg, &len) || write_all(out_fd, msg, len))
			_exit(1);
		free(msg);
	}
	_exit(0);
}

/* Starts worker k of n; the child keeps none of the other workers' pipes
 * (slots not started hold -1). */
static int spawn(const sweep *c, struct worker *w, size_t n, size_t k)
{
	int to[2], from[2];
	pid_t parent = getpid();
	if (pipe(to))
		return SIM_EIO;
	if (pipe(from))
		return close(to[0]), close(to[1]), SIM_EIO;
	fflush(stdout);
	fflush(stderr);
	w[k].pid = fork();
	if (w[k].pid == 0) {
		atomic_worker_init(parent);
		for (size_t j = 0; j < n; j++) {
			if (j != k && w[j].to_fd >= 0)
				close(w[j].to_fd);
			if (j != k && w[j].from_fd >= 0)
				close(w[j].from_fd);
		}
		close(to[1]);
		close(from[0]);
		worker_main(c, to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	w[k] = (struct worker){ .pid = w[k].pid, .to_fd = to[1], .from_fd = from[0], .point = -1 };
	if (w[k].pid < 0) {
		close(to[1]), close(from[0]);
		w[k] = (struct worker){ .pid = -1, .to_fd = -1, .from_fd = -1, .point = -1 };
		return SIM_EIO;
	}
	return 0;
}

/* Sends worker w its next point, or closes its input when none is left. */
static void assign(sweep *c, struct worker *w, size_t *next, bool stop)
{
	char line[32];
	if (!stop && *next < c->ntodo) {
		w->point = (long)c->todo[(*next)++];
		w->since_s = cli_wall_s();
		sweep_started(c, (size_t)w->point);
		snprintf(line, sizeof line, "%ld\n", w->point);
		if (!write_all(w->to_fd, line, strlen(line)))
			return;
		(*next)--;  /* it died: the point goes to someone else */
	}
	w->point = -1;
	if (w->to_fd >= 0)
		close(w->to_fd);
	w->to_fd = -1;
}

/* Why worker w stopped answering, reaping it: its exit status or signal. */
static void worker_death(struct worker *w, char *why, size_t n)
{
	int st = 0;
	if (w->to_fd >= 0)
		close(w->to_fd);  /* a live but confused worker: make it exit */
	close(w->from_fd);    /* and never leave it blocked writing to us */
	w->to_fd = w->from_fd = -1;
	if (waitpid(w->pid, &st, 0) != w->pid)
		snprintf(why, n, "sweep worker %ld vanished\n", (long)w->pid);
	else if (WIFSIGNALED(st))
		snprintf(why, n, "sweep worker %ld was killed by signal %d (%s)\n", (long)w->pid,
			 WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(why, n, "sweep worker %ld exited with status %d before answering\n",
			 (long)w->pid, WEXITSTATUS(st));
	w->pid = -1;
}

/* Reads worker w's message and hands it to the coordinator. A worker that
 * died (EOF, bad or cut message) fails its point and is dropped. */
static int collect(sweep *c, struct worker *w)
{
	char hdr[SWEEP_HDR_MAX], why[128], *body = NULL;
	long point;
	int status, rc;
	size_t len;
	if (read_line(w->from_fd, hdr, sizeof hdr) ||
	    sweep_parse_header(hdr, &point, &status, &len) || point != w->point ||
	    !(body = malloc(len + 1)) || read_full(w->from_fd, body, len)) {
		free(body);
		worker_death(w, why, sizeof why);
		rc = sweep_accept(c, (size_t)w->point, NULL, why);
		w->point = -1;
		return rc;
	}
	body[len] = '\0';
	c->slowest_s = fmax(c->slowest_s, cli_wall_s() - w->since_s);
	rc = sweep_accept_msg(c, (size_t)point, status, body, len);
	free(body);
	w->point = -1;
	return rc;
}

/* Milliseconds until the first busy worker's point times out (0 when one
 * has), -1 with no timeout. */
static int wait_ms(const sweep *c, const struct worker *w, size_t n)
{
	double limit = sweep_timeout_s(c), now = cli_wall_s(), left = INFINITY;
	for (size_t k = 0; k < n && limit > 0; k++)
		if (w[k].point >= 0)
			left = fmin(left, w[k].since_s + limit - now);
	if (isinf(left))
		return -1;
	return left <= 0 ? 0 : (int)fmin(ceil(left * 1000), INT_MAX);
}

/* ms (-1: none) shortened to the next progress line (off a terminal) or
 * the bar's next redraw (on one). */
static int tick_ms(const sweep *c, int ms)
{
	int tick;
	if (!c->progress)
		return ms;
	tick = (int)ceil((c->tty ? PROGRESS_BAR_S : fmax(progress_wait_s(), SWEEP_TICK_MIN_S)) * 1000);
	return ms < 0 || tick < ms ? tick : ms;
}

/* Worker k did not answer in time: killed (SIGKILL ends a stopped process
 * too), its point failed, and a new worker started in its slot. */
static int expire(sweep *c, struct worker *w, size_t n, size_t k)
{
	char why[160];
	long point = w[k].point;
	snprintf(why, sizeof why, "sweep worker %ld did not answer within %g s (--point-timeout) "
		 "and was killed\n", (long)w[k].pid, sweep_timeout_s(c));
	kill(w[k].pid, SIGKILL);
	close(w[k].to_fd);
	close(w[k].from_fd);
	waitpid(w[k].pid, NULL, 0);
	w[k] = (struct worker){ .pid = -1, .to_fd = -1, .from_fd = -1, .point = -1 };
	if (spawn(c, w, n, k))
		cli_error("cannot start a sweep worker in place of the one killed: %s",
			  strerror(errno));
	return sweep_accept(c, (size_t)point, NULL, why);
}

/* Waits for any busy worker's message, or the first timeout; 0, or the
 * first fatal error. */
static int poll_round(sweep *c, struct worker *w, size_t n, size_t *next, int *fatal)
{
	struct pollfd *pf = calloc(n, sizeof *pf);
	double limit = sweep_timeout_s(c);
	int rc = 0, err;
	if (!pf)
		return SIM_ENOMEM;
	for (size_t k = 0; k < n; k++)
		pf[k] = (struct pollfd){ .fd = w[k].point >= 0 ? w[k].from_fd : -1, .events = POLLIN };
	if (poll(pf, (nfds_t)n, tick_ms(c, wait_ms(c, w, n))) < 0 && errno != EINTR)
		rc = SIM_EIO;
	sweep_progress_tick(c);
	for (size_t k = 0; k < n && !rc; k++) {
		if (pf[k].fd < 0)
			continue;
		if (pf[k].revents)
			err = collect(c, &w[k]);
		else if (limit > 0 && cli_wall_s() - w[k].since_s >= limit)
			err = expire(c, w, n, k);
		else
			continue;
		if (err && !*fatal)
			*fatal = err;
		assign(c, &w[k], next, *fatal != 0 || w[k].from_fd < 0);
	}
	free(pf);
	return rc;
}

/* Waits for a worker whose input is closed to exit; one stopped (SIGSTOP)
 * after its last answer would never do so, and after REAP_GRACE_S it is
 * killed. */
#define REAP_GRACE_S 30.0
static void reap(pid_t pid)
{
	double t0 = cli_wall_s();
	while (waitpid(pid, NULL, WNOHANG) == 0) {
		if (cli_wall_s() - t0 > REAP_GRACE_S) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return;
		}
		poll(NULL, 0, 10);
	}
}

static bool any_busy(const struct worker *w, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (w[k].point >= 0)
			return true;
	return false;
}

int sweep_run_jobs(sweep *c, unsigned jobs)
{
	size_t n = jobs < c->ntodo ? jobs : c->ntodo, next = 0, started = 0;
	struct worker *w = calloc(n ? n : 1, sizeof *w);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);  /* a dead worker is an EPIPE, not our death */
	int rc = w ? 0 : SIM_ENOMEM, fatal = 0;
	for (size_t k = 0; w && k < n; k++)
		w[k] = (struct worker){ .pid = -1, .to_fd = -1, .from_fd = -1, .point = -1 };
	for (; !rc && started < n; started++)
		if ((rc = spawn(c, w, n, started)))
			cli_error("cannot start sweep worker %zu: %s", started, strerror(errno));
	for (size_t k = 0; k < started; k++)
		assign(c, &w[k], &next, rc != 0);
	while (!rc && any_busy(w, started))
		rc = poll_round(c, w, started, &next, &fatal);
	for (size_t k = 0; k < started; k++) {
		if (w[k].to_fd >= 0)
			close(w[k].to_fd);
		if (w[k].from_fd >= 0)
			close(w[k].from_fd);
		if (w[k].pid > 0)
			reap(w[k].pid);
	}
	if (!rc && !fatal && next < c->ntodo)
		for (; next < c->ntodo; next++)  /* every worker died */
			sweep_accept(c, c->todo[next], NULL, "no sweep worker left\n");
	signal(SIGPIPE, old);
	free(w);
	return rc ? rc : fatal;
}
