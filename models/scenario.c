/* Scenario loading: files and extends: chains into one merged tree, the
 * sweep (every point is resolved and validated before anything runs), and
 * the scenario's lifetime. Sections are read in scenario_resolve.c. */
#include "models/scenario.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/canon.h"
#include "models/datadir.h"
#include "models/offload.h"
#include "models/scenario_int.h"
#include "sim/err.h"

#define MAX_EXTENDS_DEPTH 16
#define MAX_REPORTED_POINTS 20

const char *scn_topology_name(scn_topology v) { return scn_topology_words[v]; }
const char *scn_network_name(scn_network v) { return offload_word(OFFLOAD_NETWORK, (int)v); }
const char *scn_storage_path_name(scn_storage_path v) { return offload_word(OFFLOAD_STORAGE, (int)v); }
const char *scn_crypto_name(scn_crypto v) { return offload_word(OFFLOAD_CRYPTO, (int)v); }
const char *scn_vswitch_name(scn_vswitch v) { return offload_word(OFFLOAD_VSWITCH, (int)v); }
const char *scn_precision_name(scn_precision v) { return scn_precision_words[v]; }
const char *scn_coll_op_name(scn_coll_op v) { return scn_op_words[v]; }
const char *scn_coll_algo_name(scn_coll_algo v) { return scn_algo_words[v]; }
const char *scn_routing_name(scn_routing v) { return scn_routing_words[v]; }
const char *scn_p2p_test_name(scn_p2p_test v) { return scn_p2p_test_words[v]; }
bool scn_p2p_is_lat(scn_p2p_test v)
{
	return v == SCN_P2P_WRITE_LAT || v == SCN_P2P_SEND_LAT || v == SCN_P2P_READ_LAT;
}

void scn_routing_why(const scn_cluster *c, char *buf, size_t n)
{
	static const char *const what[] = {
		[SCN_ROUTE_ECMP] = "ECMP, each flow's path by a hash of it (Ethernet/RoCE switches)",
		[SCN_ROUTE_ADAPTIVE] = "adaptive, each flow on the least loaded path",
		[SCN_ROUTE_DMODK] = "D-mod-K, each destination's path fixed by its place in the tree "
				    "(an InfiniBand subnet manager's fat-tree routing)",
	};
	const scn_fabric *f = &c->fabric;
	const scn_hw *from = f->ll_from == SCN_LL_NIC ? &c->nic : &f->sw;
	const char *one = f->topology == SCN_TOPO_SINGLE_SWITCH
				  ? "; one switch: every path is the same, so it chooses nothing" : "";
	if (f->routing_given)
		snprintf(buf, n, "%s: %s, as the scenario sets (cluster.fabric.routing)%s",
			 scn_routing_words[f->routing], what[f->routing], one);
	else if (f->ll_from == SCN_LL_UNKNOWN)
		snprintf(buf, n, "%s: %s, the default where the link layer is not known (switch '%s' "
			 "and NIC '%s' give no link_layer that decides it)%s",
			 scn_routing_words[f->routing], what[f->routing], f->sw.name, c->nic.name, one);
	else
		snprintf(buf, n, "%s: %s, the default for an %s fabric (%s '%s': link_layer %s)%s",
			 scn_routing_words[f->routing], what[f->routing],
			 f->link_layer == PROFILE_LL_INFINIBAND ? "InfiniBand" : "Ethernet",
			 f->ll_from == SCN_LL_NIC ? "NIC" : "switch", from->name,
			 profile_link_layer_words[f->link_layer], one);
}

/* ---- sources ---- */

static void src_release(scn_src *src)
{
	if (!src || --src->refs > 0)
		return;
	yt_free(src->root);
	yt_free(src->sweep);
	for (size_t i = 0; i < src->nfiles; i++)
		free(src->files[i]);
	free(src->files);
	profile_set_free(src->ps);
	free(src);
}

/* Keeps a copy of name for the nodes that point at it. */
static const char *src_file(scn_src *src, const char *name)
{
	char **f = realloc(src->files, (src->nfiles + 1) * sizeof *f);
	if (!f)
		return NULL;
	src->files = f;
	if (!(f[src->nfiles] = strdup(name)))
		return NULL;
	return f[src->nfiles++];
}

static scn_src *src_new(const scn_opts *opts, diag *d)
{
	scn_src *src = calloc(1, sizeof *src);
	char def[DATADIR_PATH_MAX];
	const char *dir = opts && opts->profile_dir ? opts->profile_dir
						    : datadir_profiles(def, sizeof def);
	struct stat st;
	if (!src)
		return NULL;
	/* One message, not one "unknown profile" per name the file uses; with
	 * the reason stat gives where it is not "no such folder" (a path too
	 * long, a folder not searchable) */
	if (!*dir) {
		diag_add(d, NULL, 0, 0, "no hardware profiles: %s", datadir_profiles_too_long());
		return free(src), NULL;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		int e = stat(dir, &st) && errno != ENOENT ? errno : 0;
		diag_add(d, NULL, 0, 0, "no hardware profiles: '%s' is not a folder%s%s (give "
			 "--profile-dir DIR, or set DPUSIM_DATADIR to dpusim's data folder: its "
			 "source tree or PREFIX/share/dpusim)", dir, e ? ": " : "", e ? strerror(e) : "");
		return free(src), NULL;
	}
	src->refs = 1;
	src->fit_unchecked = opts && opts->fit_unchecked;
	if (!(src->ps = profile_set_new(dir)))
		return free(src), NULL;
	for (size_t i = 0; opts && i < opts->nprofile_files; i++)
		if (profile_set_add_file(src->ps, opts->profile_files[i], d))
			return src_release(src), NULL;
	return src;
}

/* ---- files and extends ---- */

typedef struct chain {
	const char *real[MAX_EXTENDS_DEPTH + 1]; /* for comparison */
	const char *shown[MAX_EXTENDS_DEPTH + 1]; /* as the user wrote them, for messages */
	size_t n;
} chain;

static int load_tree(scn_src *src, const char *name, const char *buf, size_t len, chain *ch,
		     yt_node **out, diag *d);

/* dir(of) + "/" + rel, or rel when absolute. */
static void relative_to(const char *of, const char *rel, char *out, size_t n)
{
	const char *slash = strrchr(of, '/');
	if (rel[0] == '/' || !slash)
		snprintf(out, n, "%s", rel);
	else
		snprintf(out, n, "%.*s/%s", (int)(slash - of), of, rel);
}

static int circular(const chain *ch, const char *shown, const yt_node *at, diag *d)
{
	char path[2048] = "";
	size_t len = 0;
	for (size_t i = 0; i < ch->n && len < sizeof path; i++)
		len += (size_t)snprintf(path + len, sizeof path - len, "%s -> ", ch->shown[i]);
	diag_add(d, at->file, at->line, at->col, "circular extends: %s%s", path, shown);
	return SIM_EPARSE;
}

/* Loads the file tree extends: names and merges tree over it. */
static int apply_extends(scn_src *src, const char *name, chain *ch, yt_node **tree, diag *d)
{
	yt_node *ext = yt_get(*tree, "extends"), *parent = NULL;
	char path[PATH_MAX], real[PATH_MAX];
	int rc;
	if (!ext)
		return SIM_OK;
	if (ext->type != YT_SCALAR || !ext->text[0])
		return diag_add(d, ext->file, ext->line, ext->col,
				"'extends' must be the path of another scenario file"), SIM_EPARSE;
	relative_to(name, ext->text, path, sizeof path);
	if (!realpath(path, real))
		return diag_add(d, ext->file, ext->line, ext->col, "cannot read extended scenario '%s': %s",
				ext->text, strerror(errno)), SIM_EPARSE;
	for (size_t i = 0; i < ch->n; i++)
		if (!strcmp(ch->real[i], real))
			return circular(ch, path, ext, d);
	if (ch->n >= MAX_EXTENDS_DEPTH)
		return diag_add(d, ext->file, ext->line, ext->col, "extends chain deeper than %d files",
				MAX_EXTENDS_DEPTH), SIM_EPARSE;
	const char *kept = src_file(src, real), *shown = src_file(src, path);
	if (!kept || !shown)
		return SIM_ENOMEM;
	ch->shown[ch->n] = shown;
	ch->real[ch->n++] = kept;
	rc = load_tree(src, path, NULL, 0, ch, &parent, d);
	ch->n--;
	if (rc)
		return rc;
	for (size_t i = 0; i < (*tree)->nkids; i++)
		if ((*tree)->kids[i] == ext) {
			memmove(&(*tree)->kids[i], &(*tree)->kids[i + 1],
				((*tree)->nkids - i - 1) * sizeof(yt_node *));
			(*tree)->nkids--;
			yt_free(ext);
			break;
		}
	rc = yt_merge(parent, *tree);
	*tree = parent;
	return rc;
}

/* Reads (buf NULL: from the file name) and parses one scenario file, and
 * whatever it extends. *out is a mapping. */
static int load_tree(scn_src *src, const char *name, const char *buf, size_t len, chain *ch,
		     yt_node **out, diag *d)
{
	char *owned = NULL;
	const char *file = src_file(src, name);
	yt_node *tree = NULL;
	int rc;
	if (!file)
		return SIM_ENOMEM;
	if (!buf) {
		if ((rc = yt_read_file(name, &owned, &len, d)))
			return rc;
		buf = owned;
	}
	rc = yt_parse(file, buf, len, &tree, d);
	free(owned);
	if (rc)
		return rc;
	if (!tree)
		return diag_add(d, file, 1, 1, "empty scenario (expected a mapping with cluster, workload and variants)"),
		       SIM_EPARSE;
	if (tree->type != YT_MAP) {
		diag_add(d, file, tree->line, tree->col,
			 "a scenario must be a mapping with cluster, workload and variants, not %s",
			 yt_type_name(tree->type));
		return yt_free(tree), SIM_EPARSE;
	}
	if ((rc = apply_extends(src, file, ch, &tree, d)))
		return yt_free(tree), rc;
	*out = tree;
	return SIM_OK;
}

/* ---- sweeps ---- */

static const yt_node *axis_node(const scn_src *src, size_t a)
{
	size_t k = 0;
	for (size_t i = 0; i < src->sweep->nkids; i++)
		if (strcmp(src->sweep->kids[i]->key, "mode") && k++ == a)
			return src->sweep->kids[i];
	return NULL;
}

/* Value index of axis a at point i. */
static size_t axis_index(const scn_scenario *s, size_t a, size_t i)
{
	if (s->sweep.zip)
		return i;
	for (size_t b = s->sweep.naxes; b-- > a + 1;)
		i /= s->sweep.axes[b].nvalues;
	return i % s->sweep.axes[a].nvalues;
}

/* A sweepable setting path: not a name, extends, jobs or the sweep itself,
 * and variants only as a whole (each value is that point's list of
 * variants: the offload and hardware choices become a sweep dimension). */
static bool valid_path(const char *p)
{
	static const char *const roots[] = { "name", "description", "extends", "sweep", "jobs", "variants" };
	size_t seg = 0;
	if (!strcmp(p, "variants"))
		return true;
	for (size_t i = 0; i < sizeof roots / sizeof *roots; i++)
		if (!strncmp(p, roots[i], strlen(roots[i])) &&
		    (p[strlen(roots[i])] == '.' || !p[strlen(roots[i])]))
			return false;
	for (const char *c = p; *c; c++) {
		if (*c == '.') {
			if (!seg)
				return false;
			seg = 0;
		} else {
			seg++;
		}
	}
	return seg > 0;
}

static void read_axis(scn_rd *r, scn_scenario *s, const yt_node *an)
{
	scn_sweep_axis *ax = &s->sweep.axes[s->sweep.naxes];
	if (!valid_path(an->key) || strlen(an->key) >= sizeof ax->key)
		return scn_err_key(r, an, "sweep key '%s' is not a setting path such as cluster.nodes "
				   "(names, jobs and sweep cannot be swept, and variants only as a "
				   "whole list)", an->key);
	if (an->type != YT_SEQ || !an->nkids)
		return scn_err(r, an, "sweep '%s' must be a non-empty list of values", an->key);
	snprintf(ax->key, sizeof ax->key, "%s", an->key);
	ax->nvalues = an->nkids;
	s->sweep.naxes++;
}

static void read_sweep(scn_rd *r, scn_scenario *s, const yt_node *sw)
{
	static const char *const modes[] = { "cartesian", "zip", NULL };
	int mode = 0;
	double points = 1;
	s->sweep.points = 1;
	if (!sw)
		return;
	if (sw->type != YT_MAP)
		return scn_err(r, sw, "'sweep' must be a mapping of setting paths to lists of values");
	if (scn_get_enum(r, sw, "mode", false, modes, &mode))
		s->sweep.zip = mode == 1;
	for (size_t i = 0; i < sw->nkids; i++) {
		if (!strcmp(sw->kids[i]->key, "mode"))
			continue;
		if (s->sweep.naxes == SCN_MAX_AXES)
			return scn_err_key(r, sw->kids[i], "at most %d sweep keys", SCN_MAX_AXES);
		read_axis(r, s, sw->kids[i]);
	}
	if (!s->sweep.naxes && sw->nkids == (yt_get(sw, "mode") ? 1u : 0u))
		return scn_err(r, sw, "'sweep' lists no setting to vary");
	if (!s->sweep.naxes)
		return;
	for (size_t a = 0; a < s->sweep.naxes; a++) {
		if (s->sweep.zip && s->sweep.axes[a].nvalues != s->sweep.axes[0].nvalues)
			return scn_err(r, sw, "sweep mode zip needs lists of one length ('%s' has %zu, '%s' %zu)",
				       s->sweep.axes[0].key, s->sweep.axes[0].nvalues, s->sweep.axes[a].key,
				       s->sweep.axes[a].nvalues);
		points *= s->sweep.zip ? 1 : (double)s->sweep.axes[a].nvalues;
	}
	points = s->sweep.zip ? (double)s->sweep.axes[0].nvalues : points;
	if (points > SCN_MAX_SWEEP_POINTS)
		return scn_err(r, sw, "the sweep has %.0f points, at most %d", points, SCN_MAX_SWEEP_POINTS);
	s->sweep.points = (size_t)points;
}

char *scn_sweep_value(const scn_scenario *s, size_t a, size_t i, char *buf, size_t n)
{
	return canon_value(axis_node(s->src, a)->kids[axis_index(s, a, i)], buf, n);
}

char *scn_sweep_label(const scn_scenario *s, size_t i, char *buf, size_t n)
{
	char value[CANON_MAX + 1];
	size_t len = 0;
	buf[0] = '\0';
	for (size_t a = 0; a < s->sweep.naxes && len < n; a++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", a ? " " : "", s->sweep.axes[a].key,
					scn_sweep_value(s, a, i, value, sizeof value));
	return buf;
}

/* ---- resolution ---- */

static void default_name(scn_scenario *s)
{
	const char *base = strrchr(s->file, '/');
	size_t len;
	if (s->name[0])
		return;
	base = base ? base + 1 : s->file;
	len = strcspn(base, ".");
	snprintf(s->name, sizeof s->name, "%.*s", (int)(len < sizeof s->name ? len : sizeof s->name - 1),
		 base);
}

static int resolve(scn_src *src, const yt_node *tree, const char *file, scn_scenario **out,
		   diag *d);

/* The keys that give a variant hardware and prices of its own. */
static const char *const own_keys[] = { "cluster", "cost" };

/* Variant vn's own tree: tree with vn's cluster: and cost: merged over the
 * scenario's (a null removes a component, as under extends:), and vn alone,
 * without them, as its variants. Positions are kept, so an error in an
 * override points at the variant. 0, SIM_EPARSE (an override that is not a
 * mapping, in d) or SIM_ENOMEM. */
/* Override o (a variant's cluster: or cost:) over t's section key: merged
 * key by key where t has that section as a mapping, else set whole (cost:
 * given only by variants; a malformed section is the scenario's own error). */
static int merge_own(yt_node *t, const char *key, const yt_node *o)
{
	yt_node *base = yt_get(t, key), *oc;
	if (!base || base->type != YT_MAP)
		return yt_set_path(t, key, o);
	if (!(oc = yt_clone(o)))
		return SIM_ENOMEM;
	return yt_merge(base, oc);
}

static int variant_tree(const yt_node *tree, const yt_node *vn, yt_node **out, diag *d)
{
	const size_t nkeys = sizeof own_keys / sizeof *own_keys;
	yt_node *t = yt_clone(tree), *v = yt_clone(vn);
	const yt_node *vs = yt_get(tree, "variants");
	int rc = t && v ? SIM_OK : SIM_ENOMEM;
	for (size_t k = 0; k < nkeys && !rc; k++) {
		const yt_node *o = yt_get(vn, own_keys[k]);
		if (!o)
			continue;
		if (o->type != YT_MAP) {
			diag_add(d, o->file, o->line, o->col, "a variant's '%s' must be a mapping of "
				 "the scenario's %s fields it changes, not %s", own_keys[k],
				 own_keys[k], yt_type_name(o->type));
			rc = SIM_EPARSE;
		} else {
			rc = merge_own(t, own_keys[k], o);
		}
	}
	for (size_t k = 0; k < nkeys && !rc; k++)
		yt_remove(v, own_keys[k]);
	if (!rc) {
		yt_node *kids[1] = { v };
		yt_node seq = { .type = YT_SEQ, .file = vs->file, .line = vs->line, .col = vs->col,
				.kids = kids, .nkids = 1 };
		rc = yt_set_path(t, "variants", &seq);
	}
	yt_free(v);
	if (rc)
		return yt_free(t), rc;
	*out = t;
	return SIM_OK;
}

/* Resolves every variant with hardware of its own into s->variant_hw. */
static int resolve_variants(scn_src *src, const yt_node *tree, const char *file, scn_scenario *s,
			    diag *d)
{
	const yt_node *vs = yt_get(tree, "variants");
	int rc = SIM_OK;
	for (size_t i = 0; i < s->nvariants && vs && i < vs->nkids && !rc; i++) {
		yt_node *t = NULL;
		if (!s->variants[i].own_hw)
			continue;
		if (!(rc = variant_tree(tree, vs->kids[i], &t, d)))
			rc = resolve(src, t, file, &s->variant_hw[i], d);
		yt_free(t);
		if (!rc)
			s->variant_hw[i]->sweep = (scn_sweep){ .points = 1 };
	}
	return rc;
}

void scn_variant_view(const scn_scenario *s, size_t i, const scn_scenario **vs,
		      const scn_variant **v)
{
	SIM_ASSERT(i < s->nvariants, "variant %zu of %zu", i, s->nvariants);
	*vs = s->variant_hw[i] ? s->variant_hw[i] : s;
	*v = s->variant_hw[i] ? &s->variant_hw[i]->variants[0] : &s->variants[i];
}

/* Resolves tree into a new scenario sharing src. Messages in d. */
static int resolve(scn_src *src, const yt_node *tree, const char *file, scn_scenario **out, diag *d)
{
	scn_rd r = { .d = d, .ps = src->ps, .fit_unchecked = src->fit_unchecked };
	size_t before = diag_count(d);
	scn_scenario *s = calloc(1, sizeof *s);
	if (!s || !(s->file = strdup(file)))
		return free(s), SIM_ENOMEM;
	s->src = src;
	src->refs++;
	scn_resolve(&r, tree, s);
	read_sweep(&r, s, src->sweep);
	default_name(s);
	if (diag_count(d) == before && resolve_variants(src, tree, file, s, d) == SIM_ENOMEM)
		return scn_free(s), SIM_ENOMEM;
	if (diag_count(d) > before)
		return scn_free(s), SIM_EPARSE;
	*out = s;
	return SIM_OK;
}

static int point_tree(const scn_scenario *s, size_t i, yt_node **out, const yt_node **bad)
{
	yt_node *t = yt_clone(s->src->root);
	if (!t)
		return SIM_ENOMEM;
	for (size_t a = 0; a < s->sweep.naxes; a++) {
		const yt_node *an = axis_node(s->src, a);
		yt_node v = *an->kids[axis_index(s, a, i)];
		v.key_line = an->key_line;
		v.key_col = an->key_col;
		v.key = NULL;
		int rc = yt_set_path(t, s->sweep.axes[a].key, &v);
		if (rc)
			return yt_free(t), *bad = an, rc;
	}
	*out = t;
	return SIM_OK;
}

int scn_sweep_point(const scn_scenario *s, size_t i, scn_scenario **out, diag *d)
{
	yt_node *t;
	const yt_node *bad = NULL;
	int rc;
	if (i >= s->sweep.points)
		return SIM_ERANGE;
	if (!s->sweep.naxes)
		return resolve(s->src, s->src->root, s->file, out, d) ? SIM_EPARSE : SIM_OK;
	if ((rc = point_tree(s, i, &t, &bad))) {
		if (rc == SIM_ENOENT)
			diag_add(d, bad->file, bad->key_line, bad->key_col,
				 "sweep key '%s' runs through a value that is not a mapping (write the component "
				 "as { profile: NAME } to sweep one of its fields)", bad->key);
		return rc == SIM_ENOENT ? SIM_EPARSE : rc;
	}
	rc = resolve(s->src, t, s->file, out, d);
	if (!rc) {
		(*out)->sweep = (scn_sweep){ .points = 1 };
	}
	yt_free(t);
	return rc;
}

void scn_sweep_point_msgs(const scn_scenario *s, size_t i, const diag *pd, diag *d, diag *seen)
{
	char label[512];
	scn_sweep_label(s, i, label, sizeof label);
	for (size_t k = 0; k < diag_count(pd) && k < DIAG_MAX; k++) {
		const char *m = diag_msg(pd, k);
		bool dup = false;
		for (size_t j = 0; j < diag_count(seen) && j < DIAG_MAX && !dup; j++)
			dup = !strcmp(diag_msg(seen, j), m);
		if (dup)
			continue;
		diag_add(seen, NULL, 0, 0, "%s", m);
		diag_add(d, NULL, 0, 0, "%s (at sweep point %zu: %s)", m, i + 1, label);
	}
}

/* Every point must resolve: a sweep that breaks halfway is caught here.
 * Messages already in d (the scenario's own) are not repeated per point. */
static int validate_points(const scn_scenario *s, diag *d)
{
	diag *seen = diag_new();
	size_t bad = 0;
	if (!seen)
		return SIM_ENOMEM;
	for (size_t k = 0; k < diag_count(d) && k < DIAG_MAX; k++)
		diag_add(seen, NULL, 0, 0, "%s", diag_msg(d, k));
	for (size_t i = 0; i < s->sweep.points && bad < MAX_REPORTED_POINTS; i++) {
		diag *pd = diag_new();
		scn_scenario *p = NULL;
		if (!pd)
			return diag_free(seen), SIM_ENOMEM;
		if (scn_sweep_point(s, i, &p, pd)) {
			scn_sweep_point_msgs(s, i, pd, d, seen);
			bad++;
		}
		scn_free(p);
		diag_free(pd);
	}
	diag_free(seen);
	return bad ? SIM_EPARSE : SIM_OK;
}

/* The scenario itself did not resolve: its sweep's points are checked all
 * the same, so a bad sweep key or value is reported in the same pass as the
 * scenario's other errors rather than after they are mended. */
static void validate_points_anyway(scn_src *src, const char *file, diag *d)
{
	scn_scenario *s = calloc(1, sizeof *s);
	diag *quiet = diag_new();
	if (s && quiet && (s->file = strdup(file))) {
		scn_rd r = { .d = quiet, .ps = src->ps };
		s->src = src;
		src->refs++;
		read_sweep(&r, s, src->sweep); /* its own errors are d's already */
		if (!diag_count(quiet) && s->sweep.naxes)
			validate_points(s, d);
	}
	scn_free(s);
	diag_free(quiet);
}

static int finish(scn_src *src, const char *file, scn_scenario **out, diag *d)
{
	scn_scenario *s = NULL;
	int rc;
	for (size_t i = 0; i < src->root->nkids; i++) {
		if (strcmp(src->root->kids[i]->key, "sweep"))
			continue;
		src->sweep = src->root->kids[i];
		memmove(&src->root->kids[i], &src->root->kids[i + 1],
			(src->root->nkids - i - 1) * sizeof(yt_node *));
		src->root->nkids--;
		break;
	}
	rc = resolve(src, src->root, file, &s, d);
	if (rc == SIM_EPARSE && src->sweep)
		validate_points_anyway(src, file, d);
	src_release(src);
	if (!rc && s->sweep.naxes && (rc = validate_points(s, d)))
		scn_free(s), s = NULL;
	if (rc)
		return rc;
	*out = s;
	return SIM_OK;
}

static int load_any(const char *name, const char *buf, size_t len, const scn_opts *opts,
		    scn_scenario **out, diag *d)
{
	chain ch = { .n = 0 };
	char real[PATH_MAX];
	scn_src *src = src_new(opts, d);
	int rc;
	*out = NULL;
	if (!src)
		return diag_count(d) ? SIM_EPARSE : SIM_ENOMEM;
	if (!buf && realpath(name, real)) {
		if (!(ch.real[0] = src_file(src, real)) || !(ch.shown[0] = src_file(src, name)))
			return src_release(src), SIM_ENOMEM;
		ch.n = 1;
	}
	if ((rc = load_tree(src, name, buf, len, &ch, &src->root, d)))
		return src_release(src), rc;
	return finish(src, name, out, d);
}

int scn_load(const char *path, const scn_opts *opts, scn_scenario **out, diag *d)
{
	return load_any(path, NULL, 0, opts, out, d);
}

int scn_load_buffer(const char *name, const char *buf, size_t len, const scn_opts *opts,
		    scn_scenario **out, diag *d)
{
	return load_any(name, buf ? buf : "", buf ? len : 0, opts, out, d);
}

const char *const *scn_files(const scn_scenario *s, size_t *n)
{
	*n = s->src ? s->src->nfiles : 0;
	return s->src ? (const char *const *)s->src->files : NULL;
}

void scn_free(scn_scenario *s)
{
	if (!s)
		return;
	free(s->description);
	free(s->file);
	for (size_t i = 0; i < SCN_MAX_VARIANTS; i++)
		scn_free(s->variant_hw[i]);
	src_release(s->src);
	free(s);
}
