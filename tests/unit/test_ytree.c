/* models/ytree: positions, anchors, aliases and merge keys and their
 * limits, duplicate keys, merging (extends) and path setting (sweeps), text
 * checks. */
/* The module itself, not its header, and before check.h (whose fail()
 * macro would rename a function of it): one test drives the static
 * run_parser past the text check, to show that an early end is an error. */
#include "models/ytree.c"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "tests/unit/check_main.h"
#include "tests/unit/fixture.h"

static void parse_bad(const char *text, const char *want)
{
	diag *d = diag_new();
	yt_node *t = NULL;
	ck_assert_int_ne(yt_parse("t.yaml", text, strlen(text), &t, d), SIM_OK);
	ck_assert_ptr_null(t);
	ck_assert_uint_eq(diag_count(d), 1);
	ck_assert_str_eq(diag_msg(d, 0), want);
	diag_free(d);
}

START_TEST(positions_and_types)
{
	yt_node *t = fx_parse("a: 1\nb:\n  c: [x, \"y\"]\n  e: ~\n  f: ''\n");
	yt_node *b = yt_get(t, "b"), *c = yt_get(b, "c");
	ck_assert_int_eq(t->type, YT_MAP);
	ck_assert_str_eq(yt_get(t, "a")->text, "1");
	ck_assert_int_eq(yt_get(t, "a")->line, 1);
	ck_assert_int_eq(yt_get(t, "a")->col, 4);
	ck_assert_int_eq(b->key_line, 2);
	ck_assert_int_eq(c->type, YT_SEQ);
	ck_assert_uint_eq(c->nkids, 2);
	ck_assert_int_eq(c->kids[1]->line, 3);
	ck_assert_int_eq(c->kids[1]->col, 10); /* the opening quote */
	ck_assert_int_eq(yt_get(b, "e")->type, YT_NULL);
	ck_assert_int_eq(yt_get(b, "f")->type, YT_SCALAR); /* quoted empty is a value */
	ck_assert_ptr_null(yt_get(t, "zzz"));
	ck_assert_ptr_null(yt_get(c, "x")); /* not a mapping */
	yt_free(t);
}
END_TEST

START_TEST(anchors_expand)
{
	yt_node *t = fx_parse("a: &v { n: 1 }\nb: *v\n");
	yt_node *b = yt_get(t, "b");
	ck_assert_int_eq(b->type, YT_MAP);
	ck_assert_str_eq(yt_get(b, "n")->text, "1");
	ck_assert_int_eq(b->line, 2); /* the alias's own position */
	yt_free(t);
}
END_TEST

/* An anchor on a mapping key was freed with the key, and an alias to it
 * read freed memory (exit 139; ASan: heap-use-after-free in count_nodes). */
START_TEST(anchor_on_a_key)
{
	yt_node *t = fx_parse("&k nodes: 4\nx: *k\n");
	ck_assert_str_eq(yt_get(t, "nodes")->text, "4");
	ck_assert_int_eq(yt_get(t, "x")->type, YT_SCALAR);
	ck_assert_str_eq(yt_get(t, "x")->text, "nodes");
	yt_free(t);
	t = fx_parse("a: &k b\n*k : 1\n? &q c\n: *q\n"); /* aliases as keys */
	ck_assert_str_eq(yt_get(t, "b")->text, "1");
	ck_assert_str_eq(yt_get(t, "c")->text, "c");
	yt_free(t);
}
END_TEST

START_TEST(aliases_everywhere)
{
	yt_node *t = fx_parse("a: &l [1, &s two, {k: &n ~}]\nb: [*s, *l]\nc: *n\nd: &m {x: *l}\ne: *m\n");
	yt_node *b = yt_get(t, "b"), *e = yt_get(t, "e");
	ck_assert_str_eq(b->kids[0]->text, "two");
	ck_assert_uint_eq(b->kids[1]->nkids, 3);
	ck_assert_int_eq(yt_get(t, "c")->type, YT_NULL); /* an alias to null is null */
	ck_assert_int_eq(yt_get(t, "c")->line, 3);        /* at the alias */
	ck_assert_int_eq(yt_get(t, "c")->col, 4);
	ck_assert_uint_eq(yt_get(e, "x")->nkids, 3);      /* alias of a collection holding an alias */
	ck_assert_int_eq(e->line, 5);
	yt_free(t);
	t = fx_parse("- &a [1]\n- &a [2]\n- *a\n"); /* a redefined anchor: the latest */
	ck_assert_str_eq(t->kids[2]->kids[0]->text, "2");
	yt_free(t);
}
END_TEST

/* YAML 1.1 merge keys: keys written in the mapping win, then the earlier
 * mappings of a list; a quoted "<<" is an ordinary key. */
START_TEST(merge_key_semantics)
{
	yt_node *t = fx_parse("a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\n"
			      "c: {y: 0, <<: [*a, *b], w: 0}\nd:\n  <<: *a\n  x: 5\n"
			      "e: {\"<<\": 1}\nf: {<<: &i {p: 1}}\ng: *i\n");
	yt_node *c = yt_get(t, "c"), *d = yt_get(t, "d");
	ck_assert_uint_eq(c->nkids, 4);
	ck_assert_ptr_null(yt_get(c, "<<"));
	ck_assert_str_eq(yt_get(c, "y")->text, "0");
	ck_assert_str_eq(yt_get(c, "x")->text, "1");
	ck_assert_str_eq(yt_get(c, "z")->text, "2");
	ck_assert_str_eq(yt_get(c, "w")->text, "0");
	ck_assert_int_eq(yt_get(c, "x")->line, 1); /* merged values keep their place */
	ck_assert_str_eq(yt_get(d, "x")->text, "5");
	ck_assert_str_eq(yt_get(d, "y")->text, "1");
	ck_assert_str_eq(yt_get(yt_get(t, "e"), "<<")->text, "1");
	ck_assert_str_eq(yt_get(yt_get(t, "f"), "p")->text, "1");
	ck_assert_str_eq(yt_get(yt_get(t, "g"), "p")->text, "1"); /* anchor inside a merge value */
	yt_free(t);
}
END_TEST

START_TEST(alias_and_merge_refusals)
{
	parse_bad("a: &a [*a]\n", "t.yaml:1:8: alias '*a' inside the collection it names (recursive alias)");
	parse_bad("a: &a {b: [*a]}\n", "t.yaml:1:12: alias '*a' inside the collection it names (recursive alias)");
	parse_bad("a: {<<: 5}\n", "t.yaml:1:9: the merge key '<<' takes a mapping or a list of mappings, not a value");
	parse_bad("n: &n ~\na: {<<: *n}\n",
		  "t.yaml:2:9: the merge key '<<' takes a mapping or a list of mappings, not nothing");
	parse_bad("a: {<<: [{x: 1}, [2]]}\n",
		  "t.yaml:1:18: the merge key '<<' takes a mapping or a list of mappings, not a list");
	parse_bad("a: {<<: {x: 1}, <<: {y: 1}}\n", "t.yaml:1:17: duplicate key '<<'");
	parse_bad("a: {<<: {x: 1}, x: 2, x: 3}\n", "t.yaml:1:23: duplicate key 'x'");
	parse_bad("l: &l [1]\n*l : 1\n", "t.yaml:2:1: mapping keys must be plain values");
	parse_bad("a: &x 1\nb: &y *x\n", "t.yaml:2:8: invalid YAML: unexpected alias");
}
END_TEST

static void text_is(const char *yaml, const char *want)
{
	yt_node *t = fx_parse(yaml);
	ck_assert_str_eq(yt_get(t, "a")->text, want);
	yt_free(t);
}

/* Quoted scalars are read from the text: libfyaml 0.7.12 read runs of
 * doubled single quotes wrong (past its buffer, leaking), and dropped or
 * kept characters around escaped line breaks (found by make fuzz; the
 * expected values are PyYAML's). */
START_TEST(quoted_scalars)
{
	text_is("a: 'x '''' y'\n", "x '' y");
	text_is("a: ''''\n", "'");
	text_is("a: 'ab'''\n", "ab'");
	text_is("a: ''''''''''''\n", "'''''");
	text_is("a: 'one  \n   two\n\n  three'\n", "one two\nthree");
	text_is("a: 'cr\r\n  lf'\r\n", "cr lf");
	text_is("a: \"x\\\\\t\n  y\"\n", "x\\ y");              /* a literal tab before a break goes */
	text_is("a: \"x\\t\n  y\"\n", "x\t y");                 /* an escaped one stays */
	text_is("a: \"ab\\\n  cd\\\n  \\\n  \t\tx\n\n  \"\n", "abcdx\n");
	text_is("a: \"\\N\\_\\L\\P\\U0001F600\\e\\x41\\u00e9\\/\"\n",
		"\xc2\x85\xc2\xa0\xe2\x80\xa8\xe2\x80\xa9\xf0\x9f\x98\x80\x1b" "A\xc3\xa9/");
	parse_bad("a: \"x\\0y\"\n", "t.yaml:1:4: value contains a NUL character");
}
END_TEST

START_TEST(refusals)
{
	parse_bad("a: 1\na: 2\n", "t.yaml:2:1: duplicate key 'a'");
	parse_bad("a: *nope\n", "t.yaml:1:4: alias to an unknown anchor");
	parse_bad("a: !!str x\n", "t.yaml:1:4: YAML tags are not supported");
	parse_bad("a: 1\n---\nb: 2\n", "t.yaml:2:1: more than one YAML document in the file");
	parse_bad("[a]: 1\n", "t.yaml:1:1: mapping keys must be plain values");
	parse_bad("a: \"\\0\"\n", "t.yaml:1:4: value contains a NUL character");
}
END_TEST

START_TEST(alias_bomb_is_bounded)
{
	char text[2048];
	size_t len = (size_t)snprintf(text, sizeof text, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int i = 1; i < 8; i++)
		len += (size_t)snprintf(text + len, sizeof text - len,
					"a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n",
					i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	diag *d = diag_new();
	yt_node *t = NULL;
	ck_assert_int_eq(yt_parse("t.yaml", text, len, &t, d), SIM_EPARSE);
	ck_assert_ptr_nonnull(strstr(diag_msg(d, 0), "document too large (more than 200000 nodes)"));
	diag_free(d);
}
END_TEST

START_TEST(deep_nesting_is_bounded)
{
	char text[400];
	memset(text, '[', 150);
	memset(text + 150, ']', 150);
	text[300] = '\0';
	diag *d = diag_new();
	yt_node *t = NULL;
	ck_assert_int_ne(yt_parse("t.yaml", text, 300, &t, d), SIM_OK);
	ck_assert_uint_eq(diag_count(d), 1);
	diag_free(d);
}
END_TEST

START_TEST(merge_and_set_path)
{
	yt_node *base = fx_parse("a: 1\nm: { x: 1, y: 2 }\nl: [1, 2]\ngone: 3\n");
	yt_node *over = fx_parse("m: { y: 20, z: 30 }\nl: [9]\ngone: null\nnew: 4\n");
	ck_assert_int_eq(yt_merge(base, over), SIM_OK);
	ck_assert_str_eq(yt_get(yt_get(base, "m"), "x")->text, "1");
	ck_assert_str_eq(yt_get(yt_get(base, "m"), "y")->text, "20");
	ck_assert_str_eq(yt_get(yt_get(base, "m"), "z")->text, "30");
	ck_assert_uint_eq(yt_get(base, "l")->nkids, 1);
	ck_assert_ptr_null(yt_get(base, "gone"));
	ck_assert_str_eq(yt_get(base, "new")->text, "4");
	/* The null that removed 'gone' is kept for messages, at its place. */
	ck_assert_ptr_nonnull(yt_removed(base, "gone"));
	ck_assert_int_eq(yt_removed(base, "gone")->line, 3);
	ck_assert_int_eq(yt_removed(base, "gone")->col, 7);
	ck_assert_ptr_null(yt_removed(base, "a"));

	yt_node v = { .type = YT_SCALAR, .file = "s.yaml", .line = 7, .col = 3, .text = (char *)"5" };
	ck_assert_int_eq(yt_set_path(base, "m.x", &v), SIM_OK);
	ck_assert_str_eq(yt_get(yt_get(base, "m"), "x")->text, "5");
	ck_assert_int_eq(yt_set_path(base, "p.q.r", &v), SIM_OK); /* creates mappings */
	ck_assert_str_eq(yt_get(yt_get(yt_get(base, "p"), "q"), "r")->text, "5");
	ck_assert_int_eq(yt_set_path(base, "a.b", &v), SIM_ENOENT); /* a value in the way */
	yt_node *c = yt_clone(base);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(yt_get(yt_get(c, "m"), "x")->file, "s.yaml");
	ck_assert_int_eq(yt_removed(c, "gone")->line, 3); /* cloned with the tree */
	yt_free(c);
	yt_free(base);
}
END_TEST

START_TEST(text_checks)
{
	diag *d = diag_new();
	ck_assert_int_eq(yt_check_text("f", "ok: é\n", 7, d), SIM_OK);
	ck_assert_int_eq(yt_check_text("f", "a\nb\0c", 5, d), SIM_EPARSE);
	ck_assert_str_eq(diag_msg(d, 0), "f:2:2: not a text file (NUL byte at offset 3)");
	ck_assert_int_eq(yt_check_text("f", "x: \xc3\x28\n", 6, d), SIM_EPARSE);
	ck_assert_str_eq(diag_msg(d, 1), "f:1:4: invalid UTF-8: a truncated sequence (byte 0xc3 at offset 3)");
	ck_assert_int_eq(yt_check_text("f", "x: \xe2\x82", 5, d), SIM_EPARSE); /* truncated */
	ck_assert_int_eq(yt_read_file("/nonexistent/x.yaml", &(char *){ NULL }, &(size_t){ 0 }, d), SIM_EIO);
	ck_assert_str_eq(diag_msg(d, 3), "/nonexistent/x.yaml: cannot open: No such file or directory");
	diag_free(d);
}
END_TEST

static void text_bad(const char *text, const char *want)
{
	diag *d = diag_new();
	ck_assert_int_eq(yt_check_text("f", text, strlen(text), d), SIM_EPARSE);
	ck_assert_str_eq(diag_msg(d, 0), want);
	diag_free(d);
}

/* RFC 3629: libfyaml stopped reading, without an error, at each of these
 * (the rest of the file was ignored), so each is refused where it is. */
START_TEST(utf8_rfc3629)
{
	diag *d = diag_new();
	const char *ok = "a: \xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf "
			 "\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf\n"; /* the edges that are valid */
	ck_assert_int_eq(yt_check_text("f", ok, strlen(ok), d), SIM_OK);
	diag_free(d);
	text_bad("a: 1 # \xe0\x80\xaf\nb: 2\n", "f:1:8: invalid UTF-8: an overlong encoding (byte 0xe0 at offset 7)");
	text_bad("a: \xc0\xaf\n", "f:1:4: invalid UTF-8: an overlong encoding (byte 0xc0 at offset 3)");
	text_bad("a: \xf0\x8f\xbf\xbf\n", "f:1:4: invalid UTF-8: an overlong encoding (byte 0xf0 at offset 3)");
	text_bad("\na: \xed\xa0\x80\n", "f:2:4: invalid UTF-8: a UTF-16 surrogate (byte 0xed at offset 4)");
	text_bad("a: \xf4\x90\x80\x80\n", "f:1:4: invalid UTF-8: a code point above U+10FFFF (byte 0xf4 at offset 3)");
	text_bad("a: \xf5\x80\x80\x80\n", "f:1:4: invalid UTF-8: not a UTF-8 byte (byte 0xf5 at offset 3)");
	text_bad("a: \x80\n", "f:1:4: invalid UTF-8: a continuation byte without a lead byte (byte 0x80 at offset 3)");
	text_bad("a: \xf0\x90\x80", "f:1:4: invalid UTF-8: a truncated sequence (byte 0xf0 at offset 3)");
	/* yt_parse checks the text itself (cmd_validate's case files, tests). */
	parse_bad("a: \xed\xa0\x80\nb: 1\n", "t.yaml:1:4: invalid UTF-8: a UTF-16 surrogate (byte 0xed at offset 3)");
}
END_TEST

/* Behind the text check: had libfyaml ended the stream before the end of
 * the input without an error, the document would have been cut short in
 * silence. */
START_TEST(early_end_is_an_error)
{
	const char *text = "a: 1 # \xe0\x80\xaf\nzzz: 2\n";
	diag *d = diag_new();
	builder b = { .file = "t.yaml", .d = d };
	ck_assert_int_eq(run_parser(&b, text, strlen(text)), SIM_EPARSE);
	ck_assert_uint_eq(diag_count(d), 1);
	ck_assert_str_eq(diag_msg(d, 0), "t.yaml:1:8: the YAML parser stopped reading here, before the end "
					 "of the file (byte 0xe0 at offset 7)");
	builder_release(&b);
	yt_free(b.root);
	diag_free(d);
}
END_TEST

/* libfyaml 0.7.12 freed a simple key twice after this error: the parser
 * crashed when destroyed (found by make fuzz). */
START_TEST(libfyaml_double_free_avoided)
{
	parse_bad("? a:\t>\n", "t.yaml:1:5: invalid YAML: cannot use tab for indentation of block entry");
	parse_bad("? ., Nr8@# &y<<: \t>%YAML 1.2\nc=# E]c\"",
		  "t.yaml:1:18: invalid YAML: cannot use tab for indentation of block entry");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ytree");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, positions_and_types);
	tcase_add_test(tc, anchors_expand);
	tcase_add_test(tc, anchor_on_a_key);
	tcase_add_test(tc, aliases_everywhere);
	tcase_add_test(tc, merge_key_semantics);
	tcase_add_test(tc, alias_and_merge_refusals);
	tcase_add_test(tc, quoted_scalars);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, alias_bomb_is_bounded);
	tcase_add_test(tc, deep_nesting_is_bounded);
	tcase_add_test(tc, merge_and_set_path);
	tcase_add_test(tc, text_checks);
	tcase_add_test(tc, utf8_rfc3629);
	tcase_add_test(tc, early_end_is_an_error);
	tcase_add_test(tc, libfyaml_double_free_avoided);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
