/*
 * check_type.c - `kvmstat type` against gdb's `ptype /o`, the oracle.
 *
 * For every fixture kernel and test object, and every struct the walkers
 * (or the test objects) use, gdb prints the layout; the text and the JSON
 * of `kvmstat -N FILE type ...` must give the same members: depth (inside
 * anonymous members), offset, bit within the byte for a bit-field, size,
 * and the declaration ("unsigned int bf_a : 3", "int (*fn)(int)").  gdb
 * expands a named struct member in place; kvmstat shows it as one line:
 * the parser keeps gdb's expansion of anonymous members only.  Base type
 * names are compared in one spelling (gcc's DWARF says "long unsigned
 * int", gdb prints "unsigned long").
 *
 * On the objects with both BTF and DWARF, the JSON from BTF and from
 * KVS_TYPES=dwarf must be equal, up to what BTF cannot say (btf.c): array
 * dimensions as the encoder kept them ([3][5] vs [15]), [0] vs [].
 *
 * The library call itself: kvs_type_members on a KVS_O_KERNEL_ONLY handle
 * (reads fail with a clear error), callback stop, errors.
 *
 * gdb is a required oracle: without it the suite fails, unless
 * KVS_ALLOW_MISSING_ORACLES=1 (then "SKIPPED: gdb missing", exit 77).
 */
#include <check.h>
#include <ctype.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvmstat.h"
#include "testutil.h"

#define MAXENT 4096

/* One member line, as either side shows it. */
struct ent {
	unsigned depth;
	uint64_t off;
	int bit;            /* bit within the byte; -1 none; -2 not shown */
	uint64_t size;
	char decl[1024];    /* anonymous: "struct" / "union" */
};

struct layout {
	char name[256];     /* "struct x" */
	struct ent *e;
	size_t n;
	bool found;
};

static const char *const fbsd_types[] = {
	"gmonparam", "linker_file", "malloc_type", "malloc_type_internal",
	"malloc_type_stats", "msgbuf", "pcpu", "proc", "pstats", "uma_bucket",
	"uma_cache", "uma_cache_bucket", "uma_domain", "uma_keg", "uma_zone",
	"uma_zone_domain", NULL,
};
static const char *const linux_types[] = {
	"kmem_cache", "kmem_cache_cpu", "kmem_cache_node", "page", "slab",
	"list_head", "kmem_cache_order_objects", "printk_ringbuffer",
	"prb_desc_ring", "prb_data_ring", "prb_desc", "printk_info", NULL,
};
static const char *const dwtest_types[] = {
	"stats", "inner", "outer", "pcpu", "fwd", NULL,
};
static const char *const btftest_types[] = {
	"stats", "list_head", "bits", "outer", "later", "with_flex_char",
	"zero_len", "pcpu_stats", "fwd", NULL,
};
static const char *const btftest_unions[] = { "uu", NULL };

struct target {
	const char *file;              /* under fixtures/ */
	const char *const *structs;
	const char *const *unions;
	bool btf;                      /* has .BTF beside its DWARF */
};

static const struct target targets[] = {
	{ "fbsd14/kernel", fbsd_types, NULL, false },
	{ "fbsd14/kernel.dwarf2", fbsd_types, NULL, false },
	{ "fbsd14/kernel.dwarf5", fbsd_types, NULL, false },
	{ "fbsd12/kernel", fbsd_types, NULL, false },
	{ "fbsd11/kernel", fbsd_types, NULL, false },
	{ "fbsd5/kernel", fbsd_types, NULL, false },
	{ "linux-kaslr/vmlinux", linux_types, NULL, false },
	{ "../dwarf-test/t.dwarf2", dwtest_types, btftest_unions, false },
	{ "../dwarf-test/t.dwarf3", dwtest_types, btftest_unions, false },
	{ "../dwarf-test/t.dwarf4", dwtest_types, btftest_unions, false },
	{ "../dwarf-test/t.dwarf5", dwtest_types, btftest_unions, false },
	{ "../dwarf-test/t.clang4", dwtest_types, btftest_unions, false },
	{ "../dwarf-test/t.clang5", dwtest_types, btftest_unions, false },
	{ "../dwarf-test/t.exec4", dwtest_types, btftest_unions, false },
	{ "../dwarf-test/t.exec5", dwtest_types, btftest_unions, false },
	{ "../btf-test/t.gcc", btftest_types, btftest_unions, true },
	{ "../btf-test/t.clang", btftest_types, btftest_unions, true },
	{ "../btf-test/t.pahole", btftest_types, btftest_unions, true },
	{ "../btf-test/kernel.btf", fbsd_types, NULL, true },
};
#define NTARGETS (sizeof(targets) / sizeof(targets[0]))

/* --------------------------------------------------------- spellings */

static bool
is_int_word(const char *w, size_t n)
{
	static const char *const words[] = { "unsigned", "signed", "short", "long",
		"int", "char", NULL };
	int i;

	for (i = 0; words[i] != NULL; i++)
		if (strlen(words[i]) == n && strncmp(words[i], w, n) == 0)
			return true;
	return false;
}

/* One spelling for C's integer names ("long unsigned int" -> "unsigned
 * long"), and single spaces. */
static void
canon(char *s)
{
	char out[1024] = "";
	size_t o = 0;
	const char *p = s;

	while (*p != '\0' && o < sizeof(out) - 64) {
		if (isalpha((unsigned char)*p) || *p == '_') {
			const char *q = p;
			int uns = 0, sig = 0, sh = 0, lng = 0, chr = 0, in = 0, any = 0;
			const char *end = p;
			/* a run of integer words separated by single spaces */
			for (;;) {
				size_t n = 0;
				while (isalnum((unsigned char)q[n]) || q[n] == '_')
					n++;
				if (!is_int_word(q, n))
					break;
				any = 1;
				if (strncmp(q, "unsigned", n) == 0) uns = 1;
				else if (strncmp(q, "signed", n) == 0) sig = 1;
				else if (strncmp(q, "short", n) == 0) sh = 1;
				else if (strncmp(q, "long", n) == 0) lng++;
				else if (strncmp(q, "char", n) == 0) chr = 1;
				else in = 1;
				end = q + n;
				if (q[n] == ' ' && (isalpha((unsigned char)q[n + 1])))
					q += n + 1;
				else
					break;
			}
			(void)in;
			if (any) {
				o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s%s",
				    uns ? "unsigned " : (sig && chr) ? "signed " : "",
				    chr ? "char" : sh ? "short" : lng == 2 ? "long long" :
				    lng ? "long" : "int", "");
				p = end;
				continue;
			}
			while (isalnum((unsigned char)*p) || *p == '_')
				out[o++] = *p++;
			continue;
		}
		if (isspace((unsigned char)*p)) {
			/* "char * const" (gdb) is "char *const" */
			if (o > 0 && out[o - 1] != ' ' && out[o - 1] != '*')
				out[o++] = ' ';
			p++;
			continue;
		}
		out[o++] = *p++;
	}
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	strcpy(s, out);
}

/* The declaration of name with type t, as cmd_type writes it. */
static void
make_decl(char *buf, size_t n, const char *type, const char *name)
{
	char t[512];
	const char *a = strstr(type, "<anonymous>");
	size_t hole;

	if (a != NULL)
		snprintf(t, sizeof(t), "%.*s{...}%s", (int)(a - type), type,
		    a + strlen("<anonymous>"));
	else
		snprintf(t, sizeof(t), "%s", type);
	hole = strcspn(t, ")[");
	if (t[hole] != '\0')
		snprintf(buf, n, "%.*s%s%s", (int)hole, t, name, t + hole);
	else
		snprintf(buf, n, "%s%s%.400s", t, t[0] != '\0' &&
		    t[strlen(t) - 1] == '*' ? "" : " ", name);
}

/* ------------------------------------------------------- ptype parser */

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/*
 * Parse one `ptype /o` block (gdb's or kvmstat's text) starting at *pp
 * (the "type = " line); *pp is left after the block.  Named composite
 * members that are expanded are folded back into one entry.
 */
static void
parse_block(char **pp, struct layout *L)
{
	struct { size_t idx; bool uni; } stack[64];
	int sp = 0;
	char *p = *pp, *line;

	L->e = calloc(MAXENT, sizeof(*L->e));
	L->n = 0;
	L->found = true;
	while (p != NULL && *p != '\0') {
		char *nl = strchr(p, '\n');
		if (nl != NULL)
			*nl = '\0';
		line = p;
		p = nl != NULL ? nl + 1 : NULL;
		if (strstr(line, "type = ") != NULL && strncmp(line, "/* offset", 9) == 0) {
			stack[0].idx = (size_t)-1;
			stack[0].uni = strstr(line, "type = union") != NULL;
			sp = 1;
			continue;
		}
		if (sp == 0)
			continue;
		if (strncmp(line, "/* XXX", 6) == 0)
			continue;
		if (strncmp(line, "/*", 2) == 0) {
			struct ent *e = &L->e[L->n < MAXENT - 1 ? L->n++ : L->n];
			char *c = line + 2, *code, *end;
			memset(e, 0, sizeof(*e));
			e->bit = -1;
			e->depth = (unsigned)(sp - 1);
			while (*c == ' ')
				c++;
			if (stack[sp - 1].uni) {
				e->size = strtoull(c, &end, 10);
				e->off = stack[sp - 1].idx == (size_t)-1 ? 0 :
				    L->e[stack[sp - 1].idx].off;
			} else {
				e->off = strtoull(c, &end, 10);
				if (*end == ':')
					e->bit = (int)strtol(end + 1, &end, 10);
				end = strchr(end, '|');
				e->size = end != NULL ? strtoull(end + 1, &end, 10) : 0;
			}
			code = strstr(line, "*/");
			code = trim(code != NULL ? code + 2 : line);
			if (stack[sp - 1].uni && strstr(code, " : ") != NULL)
				e->bit = -2;
			if (code[0] != '\0' && code[strlen(code) - 1] == '{') {
				code[strlen(code) - 1] = '\0';
				snprintf(e->decl, sizeof(e->decl), "%s", trim(code));
				if (sp < 64) {
					stack[sp].idx = (size_t)(e - L->e);
					stack[sp].uni = strncmp(e->decl, "union", 5) == 0;
					sp++;
				}
			} else {
				size_t l = strlen(code);
				if (l > 0 && code[l - 1] == ';')
					code[l - 1] = '\0';
				snprintf(e->decl, sizeof(e->decl), "%s", code);
			}
			continue;
		}
		line = trim(line);
		if (line[0] != '}')
			continue;
		if (--sp == 0)
			break;
		{
			/* "} name;": a named member, its expansion dropped;
			 * "};": anonymous, its members stay. */
			char *rest = trim(line + 1);
			size_t idx = stack[sp].idx, l = strlen(rest);
			if (l > 0 && rest[l - 1] == ';')
				rest[--l] = '\0';
			rest = trim(rest);
			if (rest[0] != '\0') {
				struct ent *e = &L->e[idx];
				char hdr[256];
				snprintf(hdr, sizeof(hdr), "%.255s", e->decl);
				if (strcmp(hdr, "struct") == 0 || strcmp(hdr, "union") == 0)
					snprintf(e->decl, sizeof(e->decl), "%s {...} %.700s", hdr, rest);
				else
					snprintf(e->decl, sizeof(e->decl), "%s %.700s", hdr, rest);
				L->n = idx + 1;
			}
		}
	}
	*pp = p;
}

/* Blocks of text in order: kvmstat's output, or gdb's after a marker. */
static size_t
parse_all(char *text, struct layout *out, size_t max)
{
	size_t n = 0;
	char *p = text;

	while (p != NULL && n < max) {
		char *h = strstr(p, "/* offset      |    size */  type = ");
		if (h == NULL)
			break;
		parse_block(&h, &out[n++]);
		p = h;
	}
	return n;
}

/* JSON members, flattened as the parser flattens text. */
static void
flatten(const json_t *members, unsigned depth, struct layout *L)
{
	size_t i;
	const json_t *m;

	json_array_foreach(members, i, m) {
		struct ent *e = &L->e[L->n < MAXENT - 1 ? L->n++ : L->n];
		const json_t *nm = json_object_get(m, "name");
		const json_t *bs = json_object_get(m, "bit_size");
		const char *type = json_string_value(json_object_get(m, "type"));
		const json_t *sub = json_object_get(m, "members");

		memset(e, 0, sizeof(*e));
		e->depth = depth;
		e->off = (uint64_t)json_integer_value(json_object_get(m, "offset"));
		e->size = (uint64_t)json_integer_value(json_object_get(m, "size"));
		e->bit = -1;
		ck_assert_ptr_nonnull(type);
		if (bs != NULL) {
			uint64_t bo = (uint64_t)json_integer_value(json_object_get(m,
			    "bit_offset"));
			ck_assert_uint_eq(bo / 8, e->off);
			e->bit = (int)(bo % 8);
		}
		if (json_is_null(nm) && sub != NULL) {
			snprintf(e->decl, sizeof(e->decl), "%s",
			    strncmp(type, "union", 5) == 0 ? "union" : "struct");
			flatten(sub, depth + 1, L);
			continue;
		}
		ck_assert_msg(json_is_string(nm), "member without a name: %s", type);
		make_decl(e->decl, sizeof(e->decl), type, json_string_value(nm));
		if (bs != NULL) {
			size_t l = strlen(e->decl);
			snprintf(e->decl + l, sizeof(e->decl) - l, " : %" JSON_INTEGER_FORMAT,
			    json_integer_value(bs));
		}
	}
}

static unsigned checked_members, checked_types;
static void norm_dims(char *s);

/* btf: kvmstat answered from BTF, whose array spellings are the
 * encoder's (btf.c): dimensions are compared as their product. */
static void
compare(const char *what, const struct layout *g, const struct layout *k,
    bool btf)
{
	size_t i;

	ck_assert_msg(g->n == k->n, "%s %s: gdb has %zu members, kvmstat %zu", what,
	    g->name, g->n, k->n);
	for (i = 0; i < g->n; i++) {
		struct ent a = g->e[i], b = k->e[i];
		canon(a.decl);
		canon(b.decl);
		if (btf) {
			norm_dims(a.decl);
			norm_dims(b.decl);
		}
		ck_assert_msg(strcmp(a.decl, b.decl) == 0, "%s %s member %zu: gdb "
		    "\"%s\", kvmstat \"%s\"", what, g->name, i, a.decl, b.decl);
		ck_assert_msg(a.depth == b.depth && a.off == b.off && a.size == b.size,
		    "%s %s.%s: gdb depth %u offset %" PRIu64 " size %" PRIu64 ", kvmstat "
		    "depth %u offset %" PRIu64 " size %" PRIu64, what, g->name, a.decl,
		    a.depth, a.off, a.size, b.depth, b.off, b.size);
		if (a.bit != -2 && b.bit != -2)
			ck_assert_msg(a.bit == b.bit, "%s %s.%s: gdb bit %d, kvmstat %d",
			    what, g->name, a.decl, a.bit, b.bit);
		checked_members++;
	}
	checked_types++;
}

/* ------------------------------------------------------------- runs */

static size_t
type_names(const struct target *t, char names[][128], size_t max)
{
	size_t n = 0, i;

	for (i = 0; t->structs != NULL && t->structs[i] != NULL && n < max; i++)
		snprintf(names[n++], 128, "struct %s", t->structs[i]);
	for (i = 0; t->unions != NULL && t->unions[i] != NULL && n < max; i++)
		snprintf(names[n++], 128, "union %s", t->unions[i]);
	return n;
}

/* gdb's layouts: g[i].found says whether gdb knows names[i].  One gdb, a
 * -ex per type (an unknown type fails its command only). */
static void
run_gdb(const char *file, char names[][128], size_t n, struct layout *g)
{
	char cmd[16384];
	char *out, *p;
	size_t i, o;
	int st;

	o = (size_t)snprintf(cmd, sizeof(cmd), "gdb -batch -nx -ex 'set width 0' "
	    "-ex 'set pagination off'");
	for (i = 0; i < n; i++)
		o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, " -ex 'echo @@KVS %zu\\n' "
		    "-ex 'ptype /o %s'", i, names[i]);
	snprintf(cmd + o, sizeof(cmd) - o, " -ex 'echo @@KVS end\\n' '%s' 2>&1", file);
	out = run_capture(cmd, &st);
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(strstr(out, "@@KVS end") != NULL, "gdb on %s: %.300s", file, out);
	p = out;
	for (i = 0; i < n; i++) {
		char mark[32];
		char *next, *q;
		snprintf(mark, sizeof(mark), "@@KVS %zu\n", i);
		memset(&g[i], 0, sizeof(g[i]));
		snprintf(g[i].name, sizeof(g[i].name), "%.127s", names[i]);
		p = strstr(p, mark);
		ck_assert_msg(p != NULL, "gdb on %s: no mark %zu", file, i);
		p += strlen(mark);
		next = strstr(p, "@@KVS ");
		ck_assert_ptr_nonnull(next);
		next[-1] = '\0';
		q = p;
		if (strstr(q, "type = ") != NULL)
			parse_block(&q, &g[i]);
		p = next;
	}
	free(out);
}

static void
free_layouts(struct layout *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(l[i].e);
}

/* `kvmstat -N file [--json] type names...` (the ones gdb knows). */
static char *
run_kvmstat(const char *file, bool json, const char *env, char names[][128],
    size_t n, const struct layout *g, int *st)
{
	char cmd[16384];
	size_t i, o;

	o = (size_t)snprintf(cmd, sizeof(cmd), "%s '%s' -N '%s' %s type", env,
	    build_path("analyzers/kvmstat"), file, json ? "--json" : "");
	for (i = 0; i < n; i++)
		if (g == NULL || g[i].found)
			o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, " '%s'", names[i]);
	snprintf(cmd + o, sizeof(cmd) - o, " 2>/dev/null");
	return run_capture(cmd, st);
}

START_TEST(type_matches_gdb)
{
	const struct target *t = &targets[_i];
	char names[32][128], *out, file[4096];
	struct layout g[32], k[32];
	size_t n, i, j, nk;
	json_t *doc, *types, *ty;
	json_error_t jerr;
	int st, known = 0;

	snprintf(file, sizeof(file), "%s", fixture_path(t->file));
	ck_assert_msg(access(file, R_OK) == 0, "fixture %s missing", file);
	n = type_names(t, names, 32);
	run_gdb(file, names, n, g);
	for (i = 0; i < n; i++)
		known += g[i].found;
	ck_assert_msg(known > 0, "gdb knows none of the types of %s", file);

	/* text */
	out = run_kvmstat(file, false, "", names, n, g, &st);
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(st == 0, "kvmstat type on %s: exit %d", file, st);
	nk = parse_all(out, k, 32);
	ck_assert_uint_eq(nk, (size_t)known);
	for (i = 0, j = 0; i < n; i++)
		if (g[i].found) {
			snprintf(k[j].name, sizeof(k[j].name), "%.127s", names[i]);
			compare(t->file, &g[i], &k[j++], t->btf);
		}
	free(out);
	free_layouts(k, nk);

	/* JSON */
	out = run_kvmstat(file, true, "", names, n, g, &st);
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(st == 0, "kvmstat --json type on %s: exit %d", file, st);
	doc = json_loads(out, 0, &jerr);
	ck_assert_msg(doc != NULL, "JSON: %s", jerr.text);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "schema")), "kvmstat/1");
	/* schema, types and errors (none here: every name is known). */
	ck_assert_uint_eq(json_object_size(doc), 3);
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "errors")), 0);
	types = json_object_get(doc, "types");
	ck_assert_uint_eq(json_array_size(types), (size_t)known);
	for (i = 0, j = 0; i < n; i++) {
		struct layout L = { "", NULL, 0, true };
		if (!g[i].found)
			continue;
		ty = json_array_get(types, j++);
		ck_assert_str_eq(json_string_value(json_object_get(ty, "name")), names[i]);
		ck_assert_str_eq(json_string_value(json_object_get(ty, "kind")),
		    strncmp(names[i], "union", 5) == 0 ? "union" : "struct");
		ck_assert_uint_eq(json_object_size(ty), 4);
		snprintf(L.name, sizeof(L.name), "%s", names[i]);
		L.e = calloc(MAXENT, sizeof(*L.e));
		flatten(json_object_get(ty, "members"), 0, &L);
		compare(t->file, &g[i], &L, t->btf);
		free(L.e);
	}
	json_decref(doc);
	free(out);

	/* what gdb does not know, kvmstat does not either; the others are
	 * still printed */
	for (i = 0; i < n; i++) {
		char cmd[16384], *o2;
		size_t first = 0;
		if (g[i].found)
			continue;
		while (!g[first].found)
			first++;
		snprintf(cmd, sizeof(cmd), "'%s' -N '%s' type '%s' '%s' 2>&1",
		    build_path("analyzers/kvmstat"), file, names[first], names[i]);
		o2 = run_capture(cmd, &st);
		ck_assert_ptr_nonnull(o2);
		ck_assert_msg(st == 1, "%s on %s: exit %d", names[i], file, st);
		ck_assert_msg(strstr(o2, names[i]) != NULL && strstr(o2, "type = ") != NULL,
		    "%.300s", o2);
		free(o2);
	}
	free_layouts(g, n);
}
END_TEST

/* BTF and DWARF give the same JSON, up to array dimensions and [0]. */
static void
norm_dims(char *s)
{
	char out[4096];
	size_t o = 0;
	const char *p = s;

	while (*p != '\0' && o < sizeof(out) - 32) {
		if (*p == '[') {
			uint64_t prod = 1;
			bool flex = false;
			while (*p == '[') {
				char *e;
				uint64_t v = strtoull(p + 1, &e, 10);
				if (e == p + 1 || v == 0)
					flex = true;
				else
					prod *= v;
				p = strchr(p, ']');
				if (p == NULL)
					break;
				p++;
			}
			o += flex ? (size_t)snprintf(out + o, sizeof(out) - o, "[]") :
			    (size_t)snprintf(out + o, sizeof(out) - o, "[%" PRIu64 "]", prod);
			if (p == NULL)
				break;
			continue;
		}
		out[o++] = *p++;
	}
	out[o] = '\0';
	strcpy(s, out);
}

START_TEST(btf_json_equals_dwarf_json)
{
	const struct target *t = &targets[_i];
	char names[32][128], *a, *b;
	size_t n;
	int sa, sb;

	if (!t->btf)
		return;
	n = type_names(t, names, 32);
	/* fwd is declared only: both fail the same way (exit 1) */
	a = run_kvmstat(fixture_path(t->file), true, "", names, n, NULL, &sa);
	b = run_kvmstat(fixture_path(t->file), true, "KVS_TYPES=dwarf", names, n, NULL, &sb);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(sa, sb);
	norm_dims(a);
	norm_dims(b);
	ck_assert_msg(strcmp(a, b) == 0, "%s: BTF and DWARF JSON differ", t->file);
	ck_assert_msg(strstr(a, "\"members\"") != NULL, "%s: no members", t->file);
	free(a);
	free(b);
}
END_TEST

/* ---------------------------------------------------------- library */

struct acc {
	unsigned n, stop_at;
	unsigned anon, bitfields, maxdepth;
};

static int
count_cb(void *arg, const struct kvs_member_info *m)
{
	struct acc *a = arg;

	a->n++;
	a->anon += m->name == NULL;
	a->bitfields += m->bit_size != 0;
	if (m->depth > a->maxdepth)
		a->maxdepth = m->depth;
	ck_assert_ptr_nonnull(m->type_name);
	ck_assert_uint_eq(m->offset, m->bit_offset / 8);
	return a->stop_at != 0 && a->n == a->stop_at ? 42 : 0;
}

START_TEST(kernel_only_handle)
{
	char errbuf[KVS_ERRBUF_SIZE], buf[8];
	struct acc a = { 0, 0, 0, 0, 0 };
	struct kvs_typeinfo ti;
	struct kvs_dumpinfo di;
	uint64_t addr, pa;
	kvs_t *kd;

	/* no dump at all: the core argument is ignored */
	kd = kvs_open(fixture_path("../dwarf-test/t.dwarf4"), "/nonexistent",
	    KVS_O_KERNEL_ONLY, errbuf);
	ck_assert_msg(kd != NULL, "%s", errbuf);
	ck_assert_int_eq(kvs_type_members(kd, "struct outer", count_cb, &a), 0);
	ck_assert_uint_eq(a.anon, 2);
	ck_assert_uint_eq(a.bitfields, 5);
	ck_assert_uint_eq(a.maxdepth, 2);
	ck_assert_int_eq(kvs_type(kd, "struct outer", &ti), 0);
	/* a stop from the callback is returned as is */
	a.n = 0;
	a.stop_at = 3;
	ck_assert_int_eq(kvs_type_members(kd, "struct outer", count_cb, &a), 42);
	ck_assert_uint_eq(a.n, 3);
	ck_assert_int_eq(kvs_type_members(kd, "struct nosuch", count_cb, &a), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_NOTYPE);
	ck_assert_int_eq(kvs_type_members(kd, "int", count_cb, &a), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_INVAL);
	/* reads fail, saying why */
	ck_assert_int_eq(kvs_read(kd, 0xffffffff80000000ULL, buf, sizeof(buf)), -1);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_INVAL);
	ck_assert_msg(strstr(kvs_geterr(kd), "without a dump") != NULL, "%s",
	    kvs_geterr(kd));
	ck_assert_int_eq(kvs_read_phys(kd, 0, buf, sizeof(buf)), -1);
	ck_assert_int_eq(kvs_kvtop(kd, 0xffffffff80000000ULL, &pa), -1);
	ck_assert_msg(strstr(kvs_geterr(kd), "without a dump") != NULL, "%s",
	    kvs_geterr(kd));
	ck_assert_int_eq(kvs_dumpinfo(kd, &di), 0);
	ck_assert_str_eq(di.format, "none");
	kvs_close(kd);

	/* a real kernel: its OS is known, symbols answer, memory does not */
	kd = kvs_open(fixture_path("fbsd14/kernel"), NULL, KVS_O_KERNEL_ONLY,
	    errbuf);
	ck_assert_msg(kd != NULL, "%s", errbuf);
	ck_assert_int_eq(kvs_symbol(kd, "version", &addr, NULL), 0);
	ck_assert_int_eq(kvs_read(kd, addr, buf, sizeof(buf)), -1);
	ck_assert_msg(strstr(kvs_geterr(kd), "without a dump") != NULL, "%s",
	    kvs_geterr(kd));
	a.n = 0;
	a.stop_at = 0;
	ck_assert_int_eq(kvs_type_members(kd, "struct uma_zone", count_cb, &a), 0);
	ck_assert_uint_gt(a.n, 10);
	kvs_close(kd);

	/* without the flag, a userland object is still refused */
	kd = kvs_open(fixture_path("../dwarf-test/t.dwarf4"), fixture_path("fbsd14/mem.raw"),
	    0, errbuf);
	ck_assert_ptr_null(kd);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("type");
	TCase *tc = tcase_create("gdb");
	TCase *tl = tcase_create("library");
	SRunner *sr;
	int nf;

	if (!have_tool("gdb")) {
		if (oracles_optional()) {
			fprintf(stderr, "SKIPPED: gdb missing (check_type)\n");
			return 77;
		}
		fprintf(stderr, "FAILED: check_type: oracle gdb missing; install it "
		    "(scripts/setup.sh) or set KVS_ALLOW_MISSING_ORACLES=1 to skip "
		    "this suite\n");
		return EXIT_FAILURE;
	}
	tcase_set_timeout(tc, 240);
	tcase_add_loop_test(tc, type_matches_gdb, 0, NTARGETS);
	tcase_add_loop_test(tc, btf_json_equals_dwarf_json, 0, NTARGETS);
	suite_add_tcase(s, tc);
	tcase_add_test(tl, kernel_only_handle);
	suite_add_tcase(s, tl);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	printf("check_type: %u types, %u members compared with gdb\n", checked_types,
	    checked_members);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
