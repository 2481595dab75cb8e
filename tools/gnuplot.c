/* Drawing one picture with gnuplot (gnuplot.h). */
#include "tools/gnuplot.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/err.h"
#include "report/atomic.h"


void gp_put_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
	fputc('\'', f);
}

static bool is_svg(const char *out)
{
	size_t n = strlen(out);
	return n > 4 && !strcmp(out + n - 4, ".svg");
}

int gp_begin(gp_job *g, const char *out, char *errbuf, size_t errlen)
{
	int err;
	const char *tmpdir = getenv("TMPDIR");
	*g = (gp_job){ .f = NULL };
	/* $TMPDIR when it can be quoted in a gnuplot script as it is */
	if (!tmpdir || tmpdir[0] != '/' || strpbrk(tmpdir, "'\"\n\\") ||
	    strlen(tmpdir) > sizeof g->dir - 32)
		tmpdir = NULL;
	snprintf(g->dir, sizeof g->dir, "%s/dpusim-plot.XXXXXX", tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(g->dir)) {
		g->dir[0] = '\0';
		return sim_errbuf(errbuf, errlen, SIM_EIO, "cannot create a temporary folder in '%s'%s: %s",
				  tmpdir ? tmpdir : "/tmp", tmpdir ? " ($TMPDIR)" : "", strerror(errno));
	}
	snprintf(g->script, sizeof g->script, "%s/plot.gp", g->dir);
	snprintf(g->data, sizeof g->data, "%s/data", g->dir);
	snprintf(g->log, sizeof g->log, "%s/gnuplot.log", g->dir);
	/* the folder is ours alone (mkdtemp, 0700): plain names are safe in it */
	if (atomic_temp_register(g->dir, true) || atomic_temp_register(g->script, false) ||
	    atomic_temp_register(g->data, false) || atomic_temp_register(g->log, false))
		return sim_errbuf(errbuf, errlen, SIM_EIO, "too many temporary files at once");
	if (!(g->f = fopen(g->script, "w")))
		return sim_errbuf(errbuf, errlen, SIM_EIO, "cannot write %s: %s", g->script,
			    strerror(errno));
	/* the picture's own temporary, made now: an unwritable place is found
	 * before the work, not from gnuplot's message after it */
	if ((err = atomic_temp_create(out, g->tmp, sizeof g->tmp, errbuf, errlen)))
		g->tmp[0] = '\0';
	return err;
}

void gp_set_output(gp_job *g)
{
	fputs("set output ", g->f);
	gp_put_str(g->f, g->tmp);
	fputc('\n', g->f);
}

FILE *gp_open_data(gp_job *g, char *errbuf, size_t errlen)
{
	FILE *d = fopen(g->data, "w");
	if (!d)
		sim_errbuf(errbuf, errlen, 0, "cannot write %s: %s", g->data, strerror(errno));
	return d;
}

bool gp_picture_whole(const char *path, bool svg)
{
	static const unsigned char png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	static const unsigned char iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D',
						0xae, 0x42, 0x60, 0x82 };
	unsigned char head[8], tail[64];
	FILE *f = fopen(path, "rb");
	long size;
	size_t n;
	bool whole = false;
	if (!f)
		return false;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 12)
		goto done;
	rewind(f);
	n = (size_t)(size < (long)sizeof tail ? size : (long)sizeof tail);
	if (fread(head, 1, sizeof head, f) != sizeof head || fseek(f, size - (long)n, SEEK_SET) ||
	    fread(tail, 1, n, f) != n)
		goto done;
	if (!svg) {
		whole = !memcmp(head, png_sig, 8) && !memcmp(tail + n - 12, iend, 12);
	} else {
		while (n && isspace(tail[n - 1]))
			n--;
		whole = n >= 6 && !memcmp(tail + n - 6, "</svg>", 6);
	}
done:
	fclose(f);
	return whole;
}

/* gnuplot, stderr into g->log, stdout to /dev/null. Its exit status, or -1
 * (errbuf set) when it could not be run or did not exit normally. */
static int spawn(const gp_job *g, char *errbuf, size_t errlen)
{
	char *argv[] = { (char *)"gnuplot", (char *)g->script, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, err;
	if (posix_spawn_file_actions_init(&fa))
		return sim_errbuf(errbuf, errlen, -1, "cannot run gnuplot: out of memory");
	err = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (!err)
		err = posix_spawn_file_actions_addopen(&fa, 2, g->log,
						       O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (!err)
		err = atomic_temp_spawnp(&pid, "gnuplot", &fa, argv);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		return sim_errbuf(errbuf, errlen, -1, "cannot run gnuplot: %s (install gnuplot-nox)",
			    strerror(err));
	if ((err = atomic_temp_wait(pid, &status)))
		return sim_errbuf(errbuf, errlen, -1, "waiting for gnuplot: %s", strerror(err));
	if (!WIFEXITED(status))
		return sim_errbuf(errbuf, errlen, -1, "gnuplot was killed by signal %d",
			    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return WEXITSTATUS(status);
}

static bool is_warning(const char *line)
{
	for (const char *p = line; *p; p++)
		if (!strncasecmp(p, "warning", 7))
			return true;
	return false;
}

/* gnuplot's messages: warnings are passed on to stderr, with the indented
 * lines that continue them ("warning: Terminal canvas area too small to
 * hold plot." then "\t    Check plot boundary and font sizes."); anything
 * else is an error, its first line (with the status) into errbuf. true
 * when the run is good. */
static bool read_log(const gp_job *g, int status, char *errbuf, size_t errlen)
{
	char line[512], first[512] = "";
	bool warned = false; /* the last message line was (part of) a warning */
	FILE *f = fopen(g->log, "r");
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || strspn(line, " ^") == strlen(line))
			continue;
		warned = is_warning(line) || (warned && (line[0] == '\t' || line[0] == ' '));
		if (warned)
			fprintf(stderr, "dpusim: gnuplot: %s\n", line);
		else if (!first[0])
			snprintf(first, sizeof first, "%s", line);
	}
	if (f)
		fclose(f);
	if (status == 0 && !first[0])
		return true;
	sim_errbuf(errbuf, errlen, 0, "gnuplot failed (exit status %d)%s%s", status,
	     first[0] ? ": " : "", first);
	return false;
}

static int draw(gp_job *g, const char *out, char *errbuf, size_t errlen)
{
	int status = spawn(g, errbuf, errlen);
	if (status < 0 || !read_log(g, status, errbuf, errlen))
		return SIM_EIO;
	if (!gp_picture_whole(g->tmp, is_svg(out)))
		return sim_errbuf(errbuf, errlen, SIM_EIO, "%s: gnuplot left the picture incomplete (a "
			    "full disk?)", out);
	return atomic_commit(g->tmp, out, errbuf, errlen);
}

int gp_finish(gp_job *g, const char *out, bool draw_it, char *errbuf, size_t errlen)
{
	int err = 0;
	bool bad = g->f && ferror(g->f);
	if (g->f && (fclose(g->f) || bad) && draw_it)
		err = sim_errbuf(errbuf, errlen, SIM_EIO, "cannot write %s: %s", g->script,
			   strerror(errno));
	g->f = NULL;
	if (draw_it && !err)
		err = draw(g, out, errbuf, errlen);
	if (g->tmp[0])
		atomic_temp_drop(g->tmp); /* a no-op after the rename */
	if (g->dir[0]) {
		atomic_temp_drop(g->script);
		atomic_temp_drop(g->data);
		atomic_temp_drop(g->log);
		rmdir(g->dir);
		atomic_temp_drop(g->dir);
	}
	g->dir[0] = g->tmp[0] = '\0';
	return err;
}
