/* Profile files: validation against the schema table, and the set of
 * profiles a scenario can name (a directory, plus --profile files). */
#include "models/profile.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"

#define NAME_MAX_LEN 64

static const char *const kind_names[PROFILE_NKINDS] = {
	"gpu", "cpu", "nic", "dpu", "switch", "storage", "host-costs",
};

const char *profile_kind_name(profile_kind k)
{
	return k < PROFILE_NKINDS ? kind_names[k] : "?";
}

int profile_kind_parse(const char *s, profile_kind *out)
{
	for (int k = 0; k < PROFILE_NKINDS; k++)
		if (!strcmp(s, kind_names[k]))
			return *out = (profile_kind)k, SIM_OK;
	return SIM_ENOENT;
}

bool profile_has(double v)
{
	return !isnan(v);
}

const profile_field *profile_field_find(profile_kind kind, const char *name)
{
	for (size_t i = 0; i < profile_nfields; i++)
		if (profile_fields[i].kind == kind && !strcmp(profile_fields[i].name, name))
			return &profile_fields[i];
	return NULL;
}

size_t profile_field_index(const profile_field *f)
{
	return (size_t)(f - profile_fields);
}

double profile_field_get(const profile_values *v, const profile_field *f)
{
	double x;
	memcpy(&x, (const char *)v + f->offset, sizeof x);
	return x;
}

void profile_field_set(profile_values *v, const profile_field *f, double x)
{
	memcpy((char *)v + f->offset, &x, sizeof x);
}

const char *profile_field_word(const profile_field *f, double v)
{
	size_t n = 0;
	while (f->words && f->words[n])
		n++;
	return v >= 0 && v < (double)n ? f->words[(size_t)v] : "?";
}

/* A word field's value: the index of text in its list. */
static int parse_word(const profile_field *f, const yt_node *n, double *out, diag *d)
{
	char list[128] = "";
	size_t at = 0, nw = 0;
	const char *best;
	for (; f->words[nw]; nw++)
		if (!strcmp(n->text, f->words[nw]))
			return *out = (double)nw, SIM_OK;
	for (size_t i = 0; i < nw && at < sizeof list; i++)
		at += (size_t)snprintf(list + at, sizeof list - at, "%s%s",
				       i == 0 ? "" : i + 1 == nw ? " or " : ", ", f->words[i]);
	best = diag_suggest(n->text, f->words, nw);
	diag_add(d, n->file, n->line, n->col, "unknown %s '%s' (expected %s%s%s%s)", f->name, n->text,
		 list, best ? "; did you mean '" : "", best ? best : "", best ? "'?" : "");
	return SIM_EPARSE;
}

const char *profile_field_suggest(profile_kind kind, const char *name)
{
	const char *cands[64];
	size_t n = 0;
	for (size_t i = 0; i < profile_nfields && n < 64; i++)
		if (profile_fields[i].kind == kind)
			cands[n++] = profile_fields[i].name;
	return diag_suggest(name, cands, n);
}

/* "(0, 1e13]" style range text for messages, in the field's SI unit. */
static void range_text(const profile_field *f, char *buf, size_t n)
{
	char lo[48], hi[48];
	unit_format(f->lo, f->dim, lo, sizeof lo);
	unit_format(f->hi, f->dim, hi, sizeof hi);
	snprintf(buf, n, "%s%s, %s]", f->lo_open ? "(" : "[", lo, hi);
}

int profile_field_parse(const profile_field *f, const yt_node *n, double *out, diag *d)
{
	unit_err e;
	double v;
	bool b;
	char range[112];
	if (n->type != YT_SCALAR) {
		diag_add(d, n->file, n->line, n->col, "'%s' must be %s, not %s", f->name,
			 f->is_bool ? "true or false" : f->words ? "a word" : unit_dim_name(f->dim),
			 yt_type_name(n->type));
		return SIM_EPARSE;
	}
	if (f->words)
		return parse_word(f, n, out, d);
	if (f->is_bool) {
		if (unit_parse_bool(n->text, &b, &e))
			return diag_add(d, n->file, n->line, n->col, "%s in '%s'", e.msg, f->name), SIM_EPARSE;
		*out = b;
		return SIM_OK;
	}
	int rc = unit_parse(n->text, f->dim, &v, &e);
	if (rc && !(rc == SIM_ERANGE && (v < f->lo || v > f->hi))) { /* else the range says more */
		diag_add(d, n->file, n->line, n->col, "%s in '%s'%s%s%s", e.msg, f->name,
			 e.hint[0] ? " (" : "", e.hint, e.hint[0] ? ")" : "");
		return rc;
	}
	if (v < f->lo || v > f->hi || (f->lo_open && v == f->lo)) {
		range_text(f, range, sizeof range);
		diag_add(d, n->file, n->line, n->col, "'%s' is out of range for '%s' (accepted: %s)",
			 n->text, f->name, range);
		return SIM_ERANGE;
	}
	*out = v;
	return SIM_OK;
}

/* ---- one profile ---- */

struct profile {
	profile_kind kind;
	char name[NAME_MAX_LEN];
	char *summary;
	char *file;
	profile_values v;
	char **source;  /* per schema row: NULL when absent */
	char **missing; /* per schema row: reason, or NULL */
};

void profile_free(profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < profile_nfields; i++) {
		free(p->source[i]);
		free(p->missing[i]);
	}
	free(p->source);
	free(p->missing);
	free(p->summary);
	free(p->file);
	free(p);
}

static profile *profile_alloc(const char *path)
{
	profile *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->source = calloc(profile_nfields, sizeof *p->source);
	p->missing = calloc(profile_nfields, sizeof *p->missing);
	p->file = strdup(path);
	if (!p->source || !p->missing || !p->file)
		return profile_free(p), NULL;
	for (size_t i = 0; i < profile_nfields; i++)
		profile_field_set(&p->v, &profile_fields[i], NAN);
	return p;
}

static const char *scalar_text(const yt_node *n)
{
	return n && n->type == YT_SCALAR ? n->text : NULL;
}

static int need_text(const yt_node *root, const char *key, const char **out, diag *d)
{
	const yt_node *n = yt_get(root, key);
	if (!n)
		return diag_add(d, root->file, root->line, root->col, "missing '%s'", key), SIM_EPARSE;
	if (!(*out = scalar_text(n)) || !**out)
		return diag_add(d, n->file, n->line, n->col, "'%s' must be a non-empty value", key),
		       SIM_EPARSE;
	return SIM_OK;
}

static void unknown_field(profile *p, const yt_node *n, diag *d)
{
	const char *s = profile_field_suggest(p->kind, n->key);
	if (s)
		diag_add(d, n->file, n->key_line, n->key_col,
			 "unknown field '%s' for a %s profile (did you mean '%s'?)", n->key,
			 kind_names[p->kind], s);
	else
		diag_add(d, n->file, n->key_line, n->key_col, "unknown field '%s' for a %s profile",
			 n->key, kind_names[p->kind]);
}

/* One entry under fields: { value: Q, source: "..." }. */
static int load_field(profile *p, const yt_node *n, diag *d)
{
	const profile_field *f = profile_field_find(p->kind, n->key);
	const yt_node *val, *src;
	double x;
	if (!f)
		return unknown_field(p, n, d), SIM_EPARSE;
	if (n->type != YT_MAP)
		return diag_add(d, n->file, n->line, n->col,
				"field '%s' must be a mapping { value: ..., source: \"...\" }", n->key),
		       SIM_EPARSE;
	for (size_t i = 0; i < n->nkids; i++)
		if (strcmp(n->kids[i]->key, "value") && strcmp(n->kids[i]->key, "source"))
			diag_add(d, n->file, n->kids[i]->key_line, n->kids[i]->key_col,
				 "unknown key '%s' in field '%s' (expected value and source)",
				 n->kids[i]->key, n->key);
	val = yt_get(n, "value");
	src = yt_get(n, "source");
	if (!src || !scalar_text(src) || !*src->text)
		diag_add(d, n->file, n->line, n->col, "field '%s' has no source (every value cites one)",
			 n->key);
	if (!val)
		return diag_add(d, n->file, n->line, n->col, "field '%s' has no value", n->key), SIM_EPARSE;
	if (profile_field_parse(f, val, &x, d) || !src || !scalar_text(src) || !*src->text)
		return SIM_EPARSE;
	profile_field_set(&p->v, f, x);
	return (p->source[profile_field_index(f)] = strdup(src->text)) ? SIM_OK : SIM_ENOMEM;
}

/* One entry under missing: "field: why it is not given". */
static int load_missing(profile *p, const yt_node *n, diag *d)
{
	const char *t = scalar_text(n), *colon = t ? strchr(t, ':') : NULL;
	char name[NAME_MAX_LEN];
	const profile_field *f;
	if (!colon || colon == t || (size_t)(colon - t) >= sizeof name || !colon[1])
		return diag_add(d, n->file, n->line, n->col,
				"a missing entry must read \"field: reason\""), SIM_EPARSE;
	memcpy(name, t, (size_t)(colon - t));
	name[colon - t] = '\0';
	if (!(f = profile_field_find(p->kind, name)))
		return diag_add(d, n->file, n->line, n->col, "missing entry names unknown field '%s'", name),
		       SIM_EPARSE;
	if (p->source[profile_field_index(f)])
		return diag_add(d, n->file, n->line, n->col, "field '%s' is both given and missing", name),
		       SIM_EPARSE;
	while (*++colon == ' ')
		;
	return (p->missing[profile_field_index(f)] = strdup(colon)) ? SIM_OK : SIM_ENOMEM;
}

static int load_section(profile *p, const yt_node *root, const char *key, yt_type t,
			int (*each)(profile *, const yt_node *, diag *), diag *d)
{
	const yt_node *s = yt_get(root, key);
	int rc = SIM_OK;
	if (!s)
		return SIM_OK;
	if (s->type != t)
		return diag_add(d, s->file, s->line, s->col, "'%s' must be %s, not %s", key,
				yt_type_name(t), yt_type_name(s->type)), SIM_EPARSE;
	for (size_t i = 0; i < s->nkids; i++) {
		int r = each(p, s->kids[i], d);
		if (r && !rc)
			rc = r;
	}
	return rc;
}

static int check_top_keys(const yt_node *root, diag *d)
{
	static const char *const keys[] = { "kind", "name", "summary", "fields", "missing" };
	int rc = SIM_OK;
	for (size_t i = 0; i < root->nkids; i++) {
		const yt_node *k = root->kids[i];
		const char *best;
		bool known = false;
		for (size_t j = 0; j < 5; j++)
			known |= !strcmp(k->key, keys[j]);
		if (known)
			continue;
		best = diag_suggest(k->key, keys, 5);
		diag_add(d, root->file, k->key_line, k->key_col, "unknown key '%s'%s%s%s", k->key,
			 best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "");
		rc = SIM_EPARSE;
	}
	return rc;
}

/* Every field of the kind is given with a source or listed under missing:
 * an absent value is always explained. */
static int check_complete(const profile *p, const yt_node *root, diag *d)
{
	int rc = SIM_OK;
	for (size_t i = 0; i < profile_nfields; i++) {
		if (profile_fields[i].kind != p->kind || p->source[i] || p->missing[i])
			continue;
		diag_add(d, root->file, root->line, root->col,
			 "field '%s' is neither given under fields nor listed under missing",
			 profile_fields[i].name);
		rc = SIM_EPARSE;
	}
	return rc;
}

static int profile_from_tree(profile *p, const yt_node *root, diag *d)
{
	const char *kind, *name, *summary;
	int rc = check_top_keys(root, d);
	if (need_text(root, "kind", &kind, d) | need_text(root, "name", &name, d) |
	    need_text(root, "summary", &summary, d))
		return SIM_EPARSE;
	if (profile_kind_parse(kind, &p->kind)) {
		const yt_node *k = yt_get(root, "kind");
		return diag_add(d, k->file, k->line, k->col,
				"unknown kind '%s' (expected gpu, cpu, nic, dpu, switch, storage or host-costs)",
				kind), SIM_EPARSE;
	}
	if (strlen(name) >= sizeof p->name) {
		const yt_node *n = yt_get(root, "name");
		return diag_add(d, n->file, n->line, n->col, "profile name too long (%zu "
				"characters, at most %zu)", strlen(name), sizeof p->name - 1),
		       SIM_EPARSE;
	}
	snprintf(p->name, sizeof p->name, "%s", name);
	if (!(p->summary = strdup(summary)))
		return SIM_ENOMEM;
	if (!yt_get(root, "fields"))
		diag_add(d, root->file, root->line, root->col, "missing 'fields'"), rc = SIM_EPARSE;
	if (load_section(p, root, "fields", YT_MAP, load_field, d))
		rc = SIM_EPARSE;
	if (load_section(p, root, "missing", YT_SEQ, load_missing, d))
		rc = SIM_EPARSE;
	return rc ? rc : check_complete(p, root, d);
}

int profile_load(const char *path, profile **out, diag *d)
{
	char *buf = NULL;
	size_t len;
	yt_node *root = NULL;
	profile *p = NULL;
	int rc = yt_read_file(path, &buf, &len, d);
	if (rc)
		return rc;
	if (!(p = profile_alloc(path)))
		return free(buf), SIM_ENOMEM;
	rc = yt_parse(p->file, buf, len, &root, d);
	free(buf);
	/* An empty or comments-only file has no root: its place is 1:1. */
	if (!rc && (!root || root->type != YT_MAP)) {
		diag_add(d, path, root && root->line ? root->line : 1, root && root->line ? root->col : 1,
			 "a profile must be a mapping with kind, name, summary and fields");
		rc = SIM_EPARSE;
	}
	if (!rc)
		rc = profile_from_tree(p, root, d);
	yt_free(root);
	if (rc)
		return profile_free(p), rc;
	*out = p;
	return SIM_OK;
}

profile_kind profile_get_kind(const profile *p) { return p->kind; }
const char *profile_name(const profile *p) { return p->name; }
const char *profile_summary(const profile *p) { return p->summary; }
const char *profile_file(const profile *p) { return p->file; }
const profile_values *profile_get_values(const profile *p) { return &p->v; }

const char *profile_source(const profile *p, const profile_field *f)
{
	return p->source[profile_field_index(f)];
}

const char *profile_missing(const profile *p, const profile_field *f)
{
	return p->missing[profile_field_index(f)];
}

/* ---- the set ---- */

struct profile_set {
	char *dir;
	profile **loaded;
	size_t nloaded;
	char **names;
	size_t nnames;
};

profile_set *profile_set_new(const char *dir)
{
	profile_set *s = calloc(1, sizeof *s);
	if (s && !(s->dir = strdup(dir)))
		return free(s), NULL;
	return s;
}

static void free_names(profile_set *s)
{
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
	s->names = NULL;
	s->nnames = 0;
}

void profile_set_free(profile_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nloaded; i++)
		profile_free(s->loaded[i]);
	free(s->loaded);
	free_names(s);
	free(s->dir);
	free(s);
}

const char *profile_set_dir(const profile_set *s)
{
	return s->dir;
}

static const profile *loaded(const profile_set *s, const char *name)
{
	for (size_t i = s->nloaded; i-- > 0;)
		if (!strcmp(s->loaded[i]->name, name))
			return s->loaded[i];
	return NULL;
}

static int keep(profile_set *s, profile *p)
{
	profile **l = realloc(s->loaded, (s->nloaded + 1) * sizeof *l);
	if (!l)
		return profile_free(p), SIM_ENOMEM;
	s->loaded = l;
	s->loaded[s->nloaded++] = p;
	return SIM_OK;
}

int profile_set_add_file(profile_set *s, const char *path, diag *d)
{
	profile *p;
	int rc = profile_load(path, &p, d);
	return rc ? rc : keep(s, p);
}

static bool valid_name(const char *name)
{
	if (!*name || strlen(name) >= NAME_MAX_LEN || name[0] == '.')
		return false;
	for (const char *c = name; *c; c++)
		if (*c == '/' || *c == '\\')
			return false;
	return true;
}

int profile_set_find(profile_set *s, const char *name, const profile **out, diag *d)
{
	char path[4096];
	profile *p;
	FILE *f;
	int rc;
	if ((*out = loaded(s, name)))
		return SIM_OK;
	if (!valid_name(name))
		return SIM_ENOENT;
	if ((size_t)snprintf(path, sizeof path, "%s/%s.yaml", s->dir, name) >= sizeof path)
		return SIM_ENOENT; /* past the path limit: no such file (a cut name is another) */
	if (!(f = fopen(path, "r")))
		return SIM_ENOENT;
	fclose(f);
	if ((rc = profile_load(path, &p, d)))
		return rc;
	if (strcmp(p->name, name)) {
		diag_add(d, path, 0, 0, "profile is named '%s', but its file name says '%s'", p->name, name);
		return profile_free(p), SIM_EPARSE;
	}
	if ((rc = keep(s, p)))
		return rc;
	*out = p;
	return SIM_OK;
}

static int add_name(profile_set *s, const char *name, size_t len)
{
	char **n;
	for (size_t i = 0; i < s->nnames; i++)
		if (strlen(s->names[i]) == len && !strncmp(s->names[i], name, len))
			return SIM_OK;
	if (!(n = realloc(s->names, (s->nnames + 1) * sizeof *n)))
		return SIM_ENOMEM;
	s->names = n;
	if (!(s->names[s->nnames] = strndup(name, len)))
		return SIM_ENOMEM;
	s->nnames++;
	return SIM_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int profile_set_names(profile_set *s, const char *const **names, size_t *n)
{
	DIR *dir;
	struct dirent *e;
	int rc = SIM_OK;
	free_names(s);
	for (size_t i = 0; i < s->nloaded && !rc; i++)
		rc = add_name(s, s->loaded[i]->name, strlen(s->loaded[i]->name));
	if ((dir = opendir(s->dir))) {
		while (!rc && (e = readdir(dir))) {
			size_t len = strlen(e->d_name);
			if (len > 5 && e->d_name[0] != '.' && !strcmp(e->d_name + len - 5, ".yaml"))
				rc = add_name(s, e->d_name, len - 5);
		}
		closedir(dir);
	}
	if (s->nnames)
		qsort(s->names, s->nnames, sizeof *s->names, cmp_str);
	*names = (const char *const *)s->names;
	*n = s->nnames;
	return rc;
}
