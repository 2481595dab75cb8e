/* YAML to yt_node tree through libfyaml's event API: the events carry marks
 * (line, column) for every node, which the document API of libfyaml 0.7
 * does not expose. */
#include "models/ytree.h"

#include <ctype.h>
#include <errno.h>
#include <libfyaml.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/alloc.h"
#include "sim/err.h"

#define YT_MAX_DEPTH 64

const char *yt_type_name(yt_type t)
{
	static const char *const names[] = { "nothing", "a value", "a list", "a mapping" };
	return t <= YT_MAP ? names[t] : "?";
}

/* ---- files ---- */

/* Bounds of the second byte after lead byte c (RFC 3629's table): tighter
 * than 80..BF where a wider range would encode an overlong form (E0, F0), a
 * UTF-16 surrogate (ED) or a code point above U+10FFFF (F4). */
static void second_byte_range(unsigned c, unsigned *lo, unsigned *hi)
{
	*lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
	*hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
}

/* What a second byte outside second_byte_range would encode. */
static const char *range_reason(unsigned c)
{
	if (c == 0xED)
		return "a UTF-16 surrogate";
	if (c == 0xF4)
		return "a code point above U+10FFFF";
	return "an overlong encoding";
}

/* Offset of the first invalid UTF-8 sequence in s (why in *reason), or len
 * when the whole text is valid UTF-8 as RFC 3629 defines it. libfyaml stops
 * reading at such bytes without an error (even inside a comment), so
 * everything it could not read is refused here. */
static size_t utf8_invalid_at(const unsigned char *s, size_t len, const char **reason)
{
	size_t i = 0;
	while (i < len) {
		unsigned c = s[i], n, lo, hi;
		if (c < 0x80) { i++; continue; }
		if (c <= 0xBF)
			return *reason = "a continuation byte without a lead byte", i;
		if (c == 0xC0 || c == 0xC1)
			return *reason = "an overlong encoding", i;
		if (c >= 0xF5)
			return *reason = "not a UTF-8 byte", i;
		n = c <= 0xDF ? 1 : c <= 0xEF ? 2 : 3;
		second_byte_range(c, &lo, &hi);
		for (unsigned k = 1; k <= n; k++) {
			if (i + k >= len || (s[i + k] & 0xC0) != 0x80)
				return *reason = "a truncated sequence", i;
			if (k == 1 && (s[i + 1] < lo || s[i + 1] > hi))
				return *reason = range_reason(c), i;
		}
		i += n + 1;
	}
	return len;
}

/* Line and column (1-based, in bytes) of offset off in buf. */
static void position_of(const char *buf, size_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

int yt_check_text(const char *path, const char *buf, size_t len, diag *d)
{
	const char *nul = memchr(buf, '\0', len);
	const char *why = NULL;
	size_t bad;
	int line, col;
	if (nul) {
		position_of(buf, (size_t)(nul - buf), &line, &col);
		diag_add(d, path, line, col, "not a text file (NUL byte at offset %zu)",
			 (size_t)(nul - buf));
		return SIM_EPARSE;
	}
	bad = utf8_invalid_at((const unsigned char *)buf, len, &why);
	if (bad < len) {
		position_of(buf, bad, &line, &col);
		diag_add(d, path, line, col, "invalid UTF-8: %s (byte 0x%02x at offset %zu)", why,
			 (unsigned char)buf[bad], bad);
		return SIM_EPARSE;
	}
	return SIM_OK;
}

int yt_read_file(const char *path, char **buf, size_t *len, diag *d)
{
	struct stat st;
	FILE *f;
	char *b;
	size_t n;
	if (stat(path, &st))
		return diag_add(d, path, 0, 0, "cannot open: %s", strerror(errno)), SIM_EIO;
	if (S_ISDIR(st.st_mode))
		return diag_add(d, path, 0, 0, "is a directory, expected a YAML file"), SIM_EIO;
	if (S_ISFIFO(st.st_mode)) /* a shell's <(...) among them */
		return diag_add(d, path, 0, 0, "a pipe, not a file: sweep and plan read a scenario "
				"or profile more than once, so dpusim takes files only (write it to a "
				"file first)"), SIM_EIO;
	if (!S_ISREG(st.st_mode))
		return diag_add(d, path, 0, 0, "not a regular file"), SIM_EIO;
	if ((size_t)st.st_size > YT_MAX_FILE_BYTES)
		return diag_add(d, path, 0, 0, "file too large (%lld bytes, at most %zu)",
				(long long)st.st_size, YT_MAX_FILE_BYTES), SIM_EIO;
	f = fopen(path, "rb");
	if (!f)
		return diag_add(d, path, 0, 0, "cannot open: %s", strerror(errno)), SIM_EIO;
	b = malloc(YT_MAX_FILE_BYTES + 1);
	if (!b)
		return fclose(f), SIM_ENOMEM;
	n = fread(b, 1, YT_MAX_FILE_BYTES + 1, f);
	if (ferror(f) || n > YT_MAX_FILE_BYTES) {
		diag_add(d, path, 0, 0, ferror(f) ? "read error" : "file too large (more than %zu bytes)",
			 YT_MAX_FILE_BYTES);
		return free(b), fclose(f), SIM_EIO;
	}
	fclose(f);
	b[n] = '\0';
	if (yt_check_text(path, b, n, d))
		return free(b), SIM_EPARSE;
	*buf = b;
	*len = n;
	return SIM_OK;
}

/* ---- nodes ---- */

static yt_node *node_new(yt_type t, const char *file, int line, int col)
{
	yt_node *n = calloc(1, sizeof *n);
	if (n)
		*n = (yt_node){ .type = t, .file = file, .line = line, .col = col };
	return n;
}

void yt_free(yt_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		yt_free(n->kids[i]);
	free(n->kids);
	yt_free(n->gone);
	free(n->key);
	free(n->text);
	free(n);
}

static int node_append(yt_node *parent, yt_node *kid)
{
	if (sim_grow(&parent->kids, &parent->cap, parent->nkids + 1, sizeof *parent->kids, 4))
		return SIM_ENOMEM;
	parent->kids[parent->nkids++] = kid;
	return SIM_OK;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

yt_node *yt_clone(const yt_node *n)
{
	yt_node *c = node_new(n->type, n->file, n->line, n->col);
	if (!c)
		return NULL;
	c->key_line = n->key_line;
	c->key_col = n->key_col;
	c->key = dup_or_null(n->key);
	c->text = dup_or_null(n->text);
	if ((n->key && !c->key) || (n->text && !c->text) || (n->gone && !(c->gone = yt_clone(n->gone))))
		return yt_free(c), NULL;
	for (size_t i = 0; i < n->nkids; i++) {
		yt_node *k = yt_clone(n->kids[i]);
		if (!k || node_append(c, k))
			return yt_free(k), yt_free(c), NULL;
	}
	return c;
}

yt_node *yt_get(const yt_node *m, const char *key)
{
	if (!m || m->type != YT_MAP)
		return NULL;
	for (size_t i = 0; i < m->nkids; i++)
		if (!strcmp(m->kids[i]->key, key))
			return m->kids[i];
	return NULL;
}

static size_t index_of(const yt_node *m, const char *key)
{
	for (size_t i = 0; i < m->nkids; i++)
		if (!strcmp(m->kids[i]->key, key))
			return i;
	return m->nkids;
}

const yt_node *yt_removed(const yt_node *m, const char *key)
{
	return m && m->type == YT_MAP ? yt_get(m->gone, key) : NULL;
}

/* Keeps null, which removes its key from base, in base->gone (consumed). */
static int bury(yt_node *base, yt_node *null)
{
	size_t j;
	if (!base->gone && !(base->gone = node_new(YT_MAP, null->file, null->line, null->col)))
		return yt_free(null), SIM_ENOMEM;
	j = index_of(base->gone, null->key);
	if (j == base->gone->nkids)
		return node_append(base->gone, null) ? (yt_free(null), SIM_ENOMEM) : SIM_OK;
	yt_free(base->gone->kids[j]);
	base->gone->kids[j] = null;
	return SIM_OK;
}

int yt_merge(yt_node *base, yt_node *over)
{
	int rc = SIM_OK;
	for (size_t i = 0; i < over->nkids; i++) {
		yt_node *o = over->kids[i];
		size_t j = index_of(base, o->key);
		over->kids[i] = NULL;
		if (o->type == YT_NULL) {
			/* key: null over a base removes the inherited value. */
			if (j < base->nkids) {
				yt_free(base->kids[j]);
				memmove(&base->kids[j], &base->kids[j + 1], (base->nkids - j - 1) * sizeof(yt_node *));
				base->nkids--;
			}
			rc = bury(base, o);
		} else if (j == base->nkids) {
			if ((rc = node_append(base, o)))
				yt_free(o);
		} else if (base->kids[j]->type == YT_MAP && o->type == YT_MAP) {
			rc = yt_merge(base->kids[j], o);
		} else {
			yt_free(base->kids[j]);
			base->kids[j] = o;
		}
		if (rc)
			break;
	}
	yt_free(over);
	return rc;
}

int yt_remove(yt_node *m, const char *key)
{
	size_t j = index_of(m, key);
	if (j >= m->nkids)
		return SIM_ENOENT;
	yt_free(m->kids[j]);
	memmove(&m->kids[j], &m->kids[j + 1], (m->nkids - j - 1) * sizeof(yt_node *));
	m->nkids--;
	return SIM_OK;
}

static int set_here(yt_node *m, const char *key, const yt_node *val)
{
	size_t j = index_of(m, key);
	yt_node *c = yt_clone(val);
	if (!c)
		return SIM_ENOMEM;
	free(c->key);
	if (!(c->key = strdup(key)))
		return yt_free(c), SIM_ENOMEM;
	c->key_line = val->key_line ? val->key_line : val->line;
	c->key_col = val->key_line ? val->key_col : val->col;
	if (j < m->nkids) {
		yt_free(m->kids[j]);
		m->kids[j] = c;
		return SIM_OK;
	}
	return node_append(m, c) ? (yt_free(c), SIM_ENOMEM) : SIM_OK;
}

int yt_set_path(yt_node *root, const char *path, const yt_node *val)
{
	const char *dot = strchr(path, '.');
	char head[128];
	yt_node *next;
	if (root->type != YT_MAP)
		return SIM_ENOENT;
	if (!dot)
		return set_here(root, path, val);
	if ((size_t)(dot - path) >= sizeof head)
		return SIM_ENOENT;
	memcpy(head, path, (size_t)(dot - path));
	head[dot - path] = '\0';
	next = yt_get(root, head);
	if (!next) {
		yt_node empty = { .type = YT_MAP, .file = val->file, .line = val->line, .col = val->col };
		int rc = set_here(root, head, &empty);
		if (rc)
			return rc;
		next = yt_get(root, head);
	}
	return yt_set_path(next, dot + 1, val);
}

/* ---- the event-driven builder ---- */

typedef struct anchor {
	char *name;
	yt_node *node;
} anchor;

/* Anchors name nodes by pointer. A node the builder takes out of the tree
 * (a mapping key, the value of a merge key) may be named by an anchor, on
 * itself or under it, so it goes to the spare list, freed only with the
 * builder: an alias never reads freed memory. */
typedef struct builder {
	const char *file;
	diag *d;
	yt_node *stack[YT_MAX_DEPTH + 1];
	bool stack_merge[YT_MAX_DEPTH + 1]; /* this open collection is a '<<' value */
	yt_node *merge[YT_MAX_DEPTH + 1];   /* this open mapping's '<<' value, or NULL */
	int depth;
	yt_node *root;
	char *pending_key;  /* a mapping key waiting for its value */
	int key_line, key_col;
	size_t seen_end;    /* where the last event with a place in the text ends */
	bool pending_merge; /* the pending key is the merge key << */
	bool quoted;        /* the scalar being attached was quoted */
	anchor *anchors;
	size_t nanchors;
	yt_node **spare;
	size_t nspare, spare_cap;
	size_t nodes;
	int docs;
	int err;
	char yaml_msg[512];  /* libfyaml's first diagnostic line */
	const char *buf;     /* the text parsed, len bytes */
	size_t len;
} builder;

static void fy_output(struct fy_diag *fyd, void *user, const char *buf, size_t len)
{
	builder *b = user;
	(void)fyd;
	if (b->yaml_msg[0] || !len)
		return;
	snprintf(b->yaml_msg, sizeof b->yaml_msg, "%.*s", (int)len, buf);
}

static int fail(builder *b, int line, int col, const char *msg, const char *arg)
{
	if (!b->err)
		diag_add(b->d, b->file, line, col, msg, arg);
	b->err = SIM_EPARSE;
	return SIM_EPARSE;
}

static size_t count_nodes(const yt_node *n)
{
	size_t c = 1;
	for (size_t i = 0; i < n->nkids; i++)
		c += count_nodes(n->kids[i]);
	return c;
}

/* Counts k more nodes against YT_MAX_NODES (aliases and merges copy). */
static int add_nodes(builder *b, size_t k, int line, int col)
{
	b->nodes += k;
	if (b->nodes > YT_MAX_NODES)
		return fail(b, line, col, "document too large (more than %s nodes)", "200000");
	return SIM_OK;
}

/* Takes n out of the tree for good (see builder). */
static int retire(builder *b, yt_node *n)
{
	if (sim_grow(&b->spare, &b->spare_cap, b->nspare + 1, sizeof *b->spare, 16))
		return yt_free(n), b->err = SIM_ENOMEM;
	b->spare[b->nspare++] = n;
	return SIM_OK;
}

/* n is a mapping key of top: a plain value, not there yet. Its text waits
 * for the value; the plain key << announces a merge (YAML 1.1 merge key). */
static int take_key(builder *b, yt_node *top, yt_node *n, int line, int col)
{
	bool merge;
	if (n->type != YT_SCALAR)
		return yt_free(n), fail(b, line, col, "%s", "mapping keys must be plain values");
	merge = !b->quoted && !strcmp(n->text, "<<");
	if (merge ? b->merge[b->depth - 1] != NULL : yt_get(top, n->text) != NULL)
		return fail(b, line, col, "duplicate key '%s'", n->text), yt_free(n), SIM_EPARSE;
	/* Copied, not taken: an anchor on the key names n, text included. */
	if (!(b->pending_key = strdup(n->text)))
		return yt_free(n), b->err = SIM_ENOMEM;
	b->pending_merge = merge;
	b->key_line = n->line;
	b->key_col = n->col;
	return retire(b, n);
}

/* The part of a merge key's value that is not a mapping, or NULL. */
static const yt_node *not_mergeable(const yt_node *n)
{
	if (n->type == YT_MAP)
		return NULL;
	if (n->type != YT_SEQ)
		return n;
	for (size_t i = 0; i < n->nkids; i++)
		if (n->kids[i]->type != YT_MAP)
			return n->kids[i];
	return NULL;
}

/* n, the value of a merge key in the open mapping: a mapping or a list of
 * mappings whose keys the mapping takes when it closes (merge_into). */
static int keep_merge(builder *b, yt_node *n)
{
	const yt_node *bad = not_mergeable(n);
	if (bad) {
		fail(b, bad->line, bad->col, "the merge key '<<' takes a mapping or a list of mappings, not %s",
		     yt_type_name(bad->type));
		return yt_free(n), SIM_EPARSE;
	}
	b->merge[b->depth - 1] = n;
	return SIM_OK;
}

/* Hangs a finished node under the open collection (or as the root).
 * merge: n is a collection that was opened as the value of '<<'. */
static int attach(builder *b, yt_node *n, bool merge, int line, int col)
{
	yt_node *top = b->depth ? b->stack[b->depth - 1] : NULL;
	if (++b->nodes > YT_MAX_NODES)
		return yt_free(n), fail(b, line, col, "document too large (more than %s nodes)", "200000");
	if (!top) {
		if (b->root)
			return yt_free(n), fail(b, line, col, "%s", "more than one YAML document in the file");
		b->root = n;
		return SIM_OK;
	}
	if (top->type == YT_MAP && !n->key) {
		if (!b->pending_key)
			return take_key(b, top, n, line, col);
		n->key = b->pending_key;
		n->key_line = b->key_line;
		n->key_col = b->key_col;
		b->pending_key = NULL;
		merge = b->pending_merge;
		b->pending_merge = false;
	}
	if (merge)
		return keep_merge(b, n);
	if (node_append(top, n))
		return yt_free(n), b->err = SIM_ENOMEM;
	return SIM_OK;
}

/* Copies into map the keys of from it does not have: keys written in the
 * mapping win over merged ones, earlier merged mappings over later ones. */
static int merge_keys(builder *b, yt_node *map, const yt_node *from)
{
	for (size_t i = 0; i < from->nkids; i++) {
		const yt_node *k = from->kids[i];
		yt_node *c;
		if (yt_get(map, k->key))
			continue;
		if (add_nodes(b, count_nodes(k), k->line, k->col))
			return SIM_EPARSE;
		if (!(c = yt_clone(k)) || node_append(map, c))
			return yt_free(c), b->err = SIM_ENOMEM;
	}
	return SIM_OK;
}

static int merge_into(builder *b, yt_node *map, yt_node *src)
{
	int rc = SIM_OK;
	if (src->type == YT_MAP)
		rc = merge_keys(b, map, src);
	for (size_t i = 0; src->type == YT_SEQ && !rc && i < src->nkids; i++)
		rc = merge_keys(b, map, src->kids[i]);
	if (rc)
		return yt_free(src), rc;
	return retire(b, src);
}

static int remember_anchor(builder *b, struct fy_token *t, yt_node *n)
{
	size_t len;
	const char *a = t ? fy_token_get_text(t, &len) : NULL;
	anchor *na;
	if (!a)
		return SIM_OK;
	na = realloc(b->anchors, (b->nanchors + 1) * sizeof *na);
	if (!na)
		return b->err = SIM_ENOMEM;
	b->anchors = na;
	na[b->nanchors].name = strndup(a, len);
	na[b->nanchors].node = n;
	if (!na[b->nanchors].name)
		return b->err = SIM_ENOMEM;
	b->nanchors++;
	return SIM_OK;
}

static bool is_open(const builder *b, const yt_node *n)
{
	for (int i = 0; i < b->depth; i++)
		if (b->stack[i] == n)
			return true;
	return false;
}

static int on_alias(builder *b, struct fy_event *e, int line, int col)
{
	size_t len;
	const char *a = fy_token_get_text(e->alias.anchor, &len);
	b->quoted = false;
	for (size_t i = b->nanchors; a && i-- > 0;) {
		if (strlen(b->anchors[i].name) != len || memcmp(b->anchors[i].name, a, len))
			continue;
		/* A collection holding an alias to itself would be infinite. */
		if (is_open(b, b->anchors[i].node))
			return fail(b, line, col, "alias '*%s' inside the collection it names (recursive alias)",
				    b->anchors[i].name);
		if (add_nodes(b, count_nodes(b->anchors[i].node) - 1, line, col)) /* attach counts one */
			return SIM_EPARSE;
		yt_node *c = yt_clone(b->anchors[i].node);
		if (!c)
			return b->err = SIM_ENOMEM;
		c->line = line;
		c->col = col;
		free(c->key);
		c->key = NULL;
		c->key_line = c->key_col = 0;
		return attach(b, c, false, line, col);
	}
	return fail(b, line, col, "%s", "alias to an unknown anchor");
}

static bool is_white(char c)
{
	return c == ' ' || c == '\t';
}

/* Length of the line break at s (CRLF, LF or CR), 0 if none. */
static size_t break_len(const char *s, const char *e)
{
	if (s < e && *s == '\r')
		return s + 1 < e && s[1] == '\n' ? 2 : 1;
	return s < e && *s == '\n';
}

/* The value of a single-quoted scalar from its body s..e (between the
 * quotes), as YAML 1.2 section 7.3.2 reads it: two quotes are one; a line
 * break and the white space around it fold to one space, n breaks in a row
 * (empty lines) to n-1 newlines. libfyaml 0.7.12 (Debian 12) reads a run of
 * doubled quotes wrong (the body  x '''' y  gave "x ''' ", or bytes past its
 * buffer, and leaked; fixed upstream), so this never goes through it.
 * Caller frees; NULL when out of memory. */
static char *single_quoted(const char *s, const char *e, size_t *len)
{
	char *o = malloc((size_t)(e - s) + 1), *p = o, *line = o;
	if (!o)
		return NULL;
	while (s < e) {
		size_t bl = break_len(s, e), breaks = 0;
		if (!bl) {
			*p++ = *s;
			s += *s == '\'' && s + 1 < e ? 2 : 1; /* quotes come in pairs here */
			continue;
		}
		while (p > line && is_white(p[-1]))
			p--;
		for (; bl; bl = break_len(s, e)) {
			breaks++;
			for (s += bl; s < e && is_white(*s); s++)
				;
		}
		if (breaks == 1)
			*p++ = ' ';
		for (; breaks > 1; breaks--)
			*p++ = '\n';
		line = p;
	}
	*p = '\0';
	*len = (size_t)(p - o);
	return o;
}

/* Value of the n hex digits at s (n <= 8), or -1. */
static long hex_value(const char *s, const char *e, int n)
{
	long v = 0;
	if (e - s < n)
		return -1;
	for (int i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (!isxdigit(c))
			return -1;
		v = v * 16 + (isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
	}
	return v;
}

static char *put_utf8(char *p, unsigned long cp)
{
	if (cp < 0x80) {
		*p++ = (char)cp;
	} else if (cp < 0x800) {
		*p++ = (char)(0xC0 | cp >> 6);
		*p++ = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*p++ = (char)(0xE0 | cp >> 12);
		*p++ = (char)(0x80 | (cp >> 6 & 0x3F));
		*p++ = (char)(0x80 | (cp & 0x3F));
	} else {
		*p++ = (char)(0xF0 | cp >> 18);
		*p++ = (char)(0x80 | (cp >> 12 & 0x3F));
		*p++ = (char)(0x80 | (cp >> 6 & 0x3F));
		*p++ = (char)(0x80 | (cp & 0x3F));
	}
	return p;
}

/* Writes the escape after a backslash at s (YAML 1.2 section 5.7) at *p;
 * returns the characters it took, 0 when invalid (a code point that is no
 * Unicode scalar value included). */
static size_t escape(const char *s, const char *e, char **p)
{
	static const char in[] = "0abt\tnvfre \"/\\", out[] = "\0\a\b\t\t\n\v\f\r\x1b \"/\\";
	static const char named[] = "N_LP";
	static const unsigned long named_cp[] = { 0x85, 0xA0, 0x2028, 0x2029 };
	const char *hit = s < e && *s ? strchr(in, *s) : NULL;
	int digits = s < e ? (*s == 'x' ? 2 : *s == 'u' ? 4 : *s == 'U' ? 8 : 0) : 0;
	long cp;
	if (hit) {
		*(*p)++ = out[hit - in];
		return 1;
	}
	if (s < e && *s && (hit = strchr(named, *s))) {
		*p = put_utf8(*p, named_cp[hit - named]);
		return 1;
	}
	cp = digits ? hex_value(s + 1, e, digits) : -1;
	if (cp < 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	*p = put_utf8(*p, (unsigned long)cp);
	return 1 + (size_t)digits;
}

/* Empty lines after an escaped line break: one newline each. */
static const char *empty_lines(const char *s, const char *e, char **p)
{
	for (;;) {
		const char *t = s;
		size_t bl;
		while (t < e && is_white(*t))
			t++;
		if (!(bl = break_len(t, e)))
			return t;
		*(*p)++ = '\n';
		s = t + bl;
	}
}

/* The value of a double-quoted scalar from its body s..e, as YAML 1.2
 * sections 5.7 and 7.3.1 read it: escapes; a backslash before a line break
 * joins the lines; else breaks fold as in single_quoted, white space written
 * by an escape being kept. libfyaml 0.7.12 (Debian 12) drops characters and
 * keeps trailing tabs around escaped breaks (fixed upstream). Returns 0,
 * SIM_EPARSE (*bad: the offending escape) or SIM_ENOMEM; *out to free. */
static int double_quoted(const char *s, const char *e, char **out, size_t *len, const char **bad)
{
	char *o = malloc(2 * (size_t)(e - s) + 1), *p = o, *keep = o; /* \L: 2 bytes in, 3 out */
	if (!o)
		return SIM_ENOMEM;
	while (s < e) {
		size_t bl = break_len(s, e), used;
		if (*s == '\\' && (bl = break_len(s + 1, e))) {
			s = empty_lines(s + 1 + bl, e, &p);
			keep = p;
		} else if (*s == '\\') {
			if (!(used = escape(s + 1, e, &p)))
				return *bad = s, free(o), SIM_EPARSE;
			s += 1 + used;
			keep = p;
		} else if (!bl) {
			*p++ = *s++;
		} else {
			size_t breaks = 0;
			while (p > keep && is_white(p[-1]))
				p--;
			for (; bl; bl = break_len(s, e))
				for (breaks++, s += bl; s < e && is_white(*s); s++)
					;
			for (*p++ = breaks == 1 ? ' ' : '\n'; breaks > 2; breaks--)
				*p++ = '\n';
			keep = p;
		}
	}
	*p = '\0';
	*len = (size_t)(p - o);
	*out = o;
	return SIM_OK;
}

/* The scalar's text (*out, caller frees): 0, SIM_EPARSE (an escape that is
 * no character, at *bad) or SIM_ENOMEM. Quoted scalars are read from the
 * buffer, not through libfyaml (see single_quoted and double_quoted). */
static int scalar_text(builder *b, struct fy_token *t, enum fy_scalar_style style, char **out,
		       size_t *len, const char **bad)
{
	const struct fy_mark *s = fy_token_start_mark(t), *e = fy_token_end_mark(t);
	bool raw = s && e && s->input_pos <= e->input_pos && e->input_pos <= b->len;
	const char *text;
	if (raw && style == FYSS_SINGLE_QUOTED)
		return (*out = single_quoted(b->buf + s->input_pos, b->buf + e->input_pos, len)) ? SIM_OK
												    : SIM_ENOMEM;
	if (raw && style == FYSS_DOUBLE_QUOTED)
		return double_quoted(b->buf + s->input_pos, b->buf + e->input_pos, out, len, bad);
	if (!(text = fy_token_get_text(t, len)))
		text = "", *len = 0;
	return (*out = strndup(text, *len)) ? SIM_OK : SIM_ENOMEM;
}

static bool is_null_text(const char *s, enum fy_scalar_style style)
{
	return style == FYSS_PLAIN && (!*s || !strcmp(s, "~") || !strcmp(s, "null") ||
				       !strcmp(s, "Null") || !strcmp(s, "NULL"));
}

/* An empty sequence item ('-' alone, or before a comment) has no place
 * of its own in libfyaml's events, and a message about it must still say
 * where it is: its '-' is the first thing after the last event's end but
 * blanks and comments. */
static void empty_item_place(builder *b, int *line, int *col)
{
	size_t p = b->seen_end;
	while (p < b->len) {
		if (b->buf[p] == '#')
			while (p < b->len && b->buf[p] != '\n')
				p++;
		else if (b->buf[p] == ' ' || b->buf[p] == '\t' || b->buf[p] == '\n' ||
			 b->buf[p] == '\r')
			p++;
		else
			break;
	}
	position_of(b->buf, p < b->len ? p : b->seen_end, line, col);
	if (p < b->len)
		b->seen_end = p + 1; /* the next empty item is after this one's '-' */
}

static int on_scalar(builder *b, struct fy_event *e, int line, int col)
{
	size_t len;
	enum fy_scalar_style style = fy_token_scalar_style(e->scalar.value);
	const char *bad = NULL;
	char *t = NULL;
	yt_node *n;
	int rc = scalar_text(b, e->scalar.value, style, &t, &len, &bad);
	if (rc == SIM_EPARSE) {
		position_of(b->buf, (size_t)(bad - b->buf), &line, &col);
		return fail(b, line, col, "%s", "escape of no Unicode character in a double-quoted value");
	}
	if (rc)
		return b->err = rc;
	b->quoted = style != FYSS_PLAIN;
	if ((style == FYSS_SINGLE_QUOTED || style == FYSS_DOUBLE_QUOTED) && col > 1)
		col--; /* the mark is after the opening quote; point at the quote */
	if (strlen(t) != len)
		return free(t), fail(b, line, col, "%s", "value contains a NUL character");
	if (line == 0 && b->pending_key)
		line = b->key_line, col = b->key_col;
	if (line == 0)
		empty_item_place(b, &line, &col);
	if (!(n = node_new(YT_SCALAR, b->file, line, col)))
		return free(t), b->err = SIM_ENOMEM;
	n->text = t;
	if (is_null_text(n->text, style) && !(b->depth && b->stack[b->depth - 1]->type == YT_MAP &&
					      !b->pending_key))
		n->type = YT_NULL;
	if (remember_anchor(b, e->scalar.anchor, n))
		return yt_free(n), b->err;
	return attach(b, n, false, line, col);
}

static int on_start(builder *b, yt_type t, struct fy_token *anchor_tok, int line, int col)
{
	yt_node *n;
	if (b->depth >= YT_MAX_DEPTH)
		return fail(b, line, col, "nesting deeper than %s levels", "64");
	if (b->depth && b->stack[b->depth - 1]->type == YT_MAP && !b->pending_key)
		return fail(b, line, col, "%s", "mapping keys must be plain values");
	n = node_new(t, b->file, line, col);
	if (!n)
		return b->err = SIM_ENOMEM;
	b->stack_merge[b->depth] = false;
	if (b->depth && b->stack[b->depth - 1]->type == YT_MAP) {
		n->key = b->pending_key;
		n->key_line = b->key_line;
		n->key_col = b->key_col;
		b->pending_key = NULL;
		b->stack_merge[b->depth] = b->pending_merge;
		b->pending_merge = false;
	}
	if (remember_anchor(b, anchor_tok, n))
		return yt_free(n), b->err;
	b->merge[b->depth] = NULL;
	b->stack[b->depth++] = n;
	return SIM_OK;
}

static int on_end(builder *b, int line, int col)
{
	int depth = --b->depth;
	yt_node *n = b->stack[depth], *src = b->merge[depth];
	b->merge[depth] = NULL;
	if (src && merge_into(b, n, src))
		return yt_free(n), b->err;
	return attach(b, n, b->stack_merge[depth], line, col);
}

static struct fy_token *event_tag(struct fy_event *e)
{
	switch (e->type) {
	case FYET_SCALAR: return e->scalar.tag;
	case FYET_SEQUENCE_START: return e->sequence_start.tag;
	case FYET_MAPPING_START: return e->mapping_start.tag;
	default: return NULL;
	}
}

static int on_event(builder *b, struct fy_event *e)
{
	const struct fy_mark *m = fy_event_start_mark(e);
	int line = m ? m->line + 1 : 0, col = m ? m->column + 1 : 0;
	const struct fy_mark *end = fy_event_end_mark(e);
	if (m && end && end->input_pos <= b->len)
		b->seen_end = end->input_pos;
	if (event_tag(e)) {
		const struct fy_mark *tm = fy_token_start_mark(event_tag(e));
		return fail(b, tm ? tm->line + 1 : line, tm ? tm->column + 1 : col, "%s",
			    "YAML tags are not supported");
	}
	switch (e->type) {
	case FYET_DOCUMENT_START:
		if (++b->docs > 1)
			return fail(b, line, col, "%s", "more than one YAML document in the file");
		return SIM_OK;
	case FYET_SCALAR: return on_scalar(b, e, line, col);
	case FYET_ALIAS: return on_alias(b, e, line, col > 1 ? col - 1 : col); /* mark is after '*' */
	case FYET_SEQUENCE_START: return on_start(b, YT_SEQ, e->sequence_start.anchor, line, col);
	case FYET_MAPPING_START: return on_start(b, YT_MAP, e->mapping_start.anchor, line, col);
	case FYET_SEQUENCE_END:
	case FYET_MAPPING_END: return on_end(b, line, col);
	default: return SIM_OK;
	}
}

/* libfyaml writes "<input>:L:C: error: MSG"; keep L, C and MSG. */
static void report_yaml_error(builder *b)
{
	const char *e = strstr(b->yaml_msg, ": error: ");
	int line = 0, col = 0;
	char msg[400];
	if (!e) {
		diag_add(b->d, b->file, 0, 0, "invalid YAML");
		return;
	}
	snprintf(msg, sizeof msg, "%s", e + 9);
	msg[strcspn(msg, "\n")] = '\0';
	const char *p = e;
	while (p > b->yaml_msg && p[-1] != ':')
		p--;
	col = atoi(p);
	if (p > b->yaml_msg + 1) {
		const char *q = p - 1;
		while (q > b->yaml_msg && q[-1] != ':')
			q--;
		line = atoi(q);
	}
	diag_add(b->d, b->file, line, col, "invalid YAML: %s", msg);
}

static void builder_release(builder *b)
{
	while (b->depth) {
		b->depth--;
		yt_free(b->stack[b->depth]);
		yt_free(b->merge[b->depth]);
	}
	for (size_t i = 0; i < b->nspare; i++)
		yt_free(b->spare[i]);
	free(b->spare);
	for (size_t i = 0; i < b->nanchors; i++)
		free(b->anchors[i].name);
	free(b->anchors);
	free(b->pending_key);
}

/* libfyaml 0.7.12 (Debian 12) frees a simple key twice when this error
 * comes from a value after a complex key ("? a:<TAB>>"): fy_fetch_value
 * recycles the key, then its error path recycles it again, and
 * fy_parser_destroy crashes (fixed upstream by clearing the pointer). Such a
 * parser is never destroyed: it stays on a list (reachable, a few kB, once
 * per refused file) instead. */
#define FY_DOUBLE_FREE_MSG "cannot use tab for indentation of block entry"

static void abandon(struct fy_parser *fyp)
{
	static struct fy_parser **kept;
	static size_t nkept, cap;
	if (nkept == cap) {
		size_t c = cap ? 2 * cap : 8;
		struct fy_parser **k = realloc(kept, c * sizeof *k);
		if (!k)
			return; /* unreachable now: a leak, never a crash */
		kept = k;
		cap = c;
	}
	kept[nkept++] = fyp;
}

/* libfyaml ends the stream without an error where it cannot go on (it did
 * so at invalid UTF-8, even in a comment): the rest of the file would be
 * ignored in silence. */
static void stopped_early(builder *b, const char *buf, size_t at)
{
	int line, col;
	position_of(buf, at, &line, &col);
	diag_add(b->d, b->file, line, col,
		 "the YAML parser stopped reading here, before the end of the file (byte 0x%02x at offset %zu)",
		 (unsigned char)buf[at], at);
	b->err = SIM_EPARSE;
}

static int run_parser(builder *b, const char *buf, size_t len)
{
	struct fy_diag_cfg dc;
	struct fy_diag *fyd;
	struct fy_parser *fyp;
	struct fy_event *e;
	size_t end = 0; /* where the stream ended: len when all was read */
	b->buf = buf;
	b->len = len;
	fy_diag_cfg_default(&dc);
	dc = (struct fy_diag_cfg){ .fp = NULL, .output_fn = fy_output, .user = b,
				    .level = FYET_ERROR, .module_mask = dc.module_mask,
				    .show_position = true };
	if (!(fyd = fy_diag_create(&dc)))
		return SIM_ENOMEM;
	struct fy_parse_cfg cfg = { .flags = FYPCF_QUIET, .diag = fyd };
	if (!(fyp = fy_parser_create(&cfg)))
		return fy_diag_unref(fyd), SIM_ENOMEM;
	if (fy_parser_set_string(fyp, buf, len))
		b->err = SIM_ENOMEM;
	while (!b->err && (e = fy_parser_parse(fyp))) {
		const struct fy_mark *m = fy_event_start_mark(e);
		if (e->type == FYET_STREAM_END)
			end = m ? m->input_pos : 0;
		on_event(b, e);
		fy_parser_event_free(fyp, e);
	}
	if (!b->err && fy_parser_get_stream_error(fyp)) {
		report_yaml_error(b);
		b->err = SIM_EPARSE;
	}
	if (!b->err && end < len)
		stopped_early(b, buf, end);
	if (strstr(b->yaml_msg, FY_DOUBLE_FREE_MSG))
		abandon(fyp);
	else
		fy_parser_destroy(fyp);
	fy_diag_unref(fyd);
	return b->err;
}

int yt_parse(const char *file, const char *buf, size_t len, yt_node **out, diag *d)
{
	builder b = { .file = file, .d = d };
	int rc = yt_check_text(file, buf, len, d);
	if (!rc)
		rc = run_parser(&b, buf, len);
	builder_release(&b);
	if (rc) {
		yt_free(b.root);
		*out = NULL;
		return rc;
	}
	*out = b.root;
	return SIM_OK;
}
