/*
 * cmd_type.c - `kvmstat type NAME...`: the layout of kernel types, as gdb's
 * `ptype /o` shows one: each member's offset (byte:bit for a bit-field) and
 * size, holes and padding, anonymous struct/union members nested and
 * indented, the total size.  Named struct members are one line (their type
 * is another `kvmstat type`).  Only the kernel is needed: main.c opens it
 * with KVS_O_KERNEL_ONLY.
 *
 * --json: {"schema": "kvmstat/1", "types": [{"name", "kind", "size",
 * "members": [{"name", "offset", "bit_offset", "bit_size", "size", "type",
 * "members"}]}]}: "name" null and its own "members" for an anonymous
 * member, "bit_offset" (bits from the start of the type) and "bit_size"
 * only for bit-fields.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* One member, copied out of the callback. */
struct tmember {
	struct kvs_member_info mi;
};

struct tlist {
	struct tmember *m;
	size_t n, cap;
	bool nomem;
};

static int
collect(void *arg, const struct kvs_member_info *mi)
{
	struct tlist *l = arg;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 32;
		struct tmember *n = realloc(l->m, ncap * sizeof(*n));
		if (n == NULL) {
			l->nomem = true;
			return 1;
		}
		l->m = n;
		l->cap = ncap;
	}
	l->m[l->n++].mi = *mi;
	return 0;
}

static const char *
kind_name(kvs_kind_t k)
{
	switch (k) {
	case KVS_KIND_BASE: return "base";
	case KVS_KIND_POINTER: return "pointer";
	case KVS_KIND_ARRAY: return "array";
	case KVS_KIND_STRUCT: return "struct";
	case KVS_KIND_UNION: return "union";
	case KVS_KIND_ENUM: return "enum";
	case KVS_KIND_FUNCTION: return "function";
	case KVS_KIND_VOID: return "void";
	default: return "other";
	}
}

static bool
is_sou(kvs_kind_t k)
{
	return k == KVS_KIND_STRUCT || k == KVS_KIND_UNION;
}

/* An anonymous member whose members follow it. */
static bool
opens(const struct kvs_member_info *mi)
{
	return mi->name == NULL && is_sou(mi->kind);
}

/*
 * The C declaration of name with the type spelled t: the name goes where
 * the declarator's hole is, before the first ')' or '[' ("int (*fn)(int)",
 * "char name[32]"), else at the end ("struct x *p", "int x").
 */
static void
declaration(char *buf, size_t n, const char *t, const char *name)
{
	size_t hole = strcspn(t, ")[");

	if (t[hole] != '\0') {
		size_t h = hole;
		/* "char [32]": the space before '[' goes before the name */
		if (t[hole] == '[' && hole > 0 && t[hole - 1] == ' ')
			h = hole - 1;
		snprintf(buf, n, "%.*s%s%s%s", (int)h, t, h != hole ? " " : "", name,
		    t + hole);
		return;
	}
	snprintf(buf, n, "%s%s%s", t, t[0] != '\0' && t[strlen(t) - 1] == '*' ? "" :
	    " ", name);
}

/* ------------------------------------------------------------ text */

static void
indent(FILE *f, unsigned n)
{
	fprintf(f, "%*s", (int)n, "");
}

/* gdb's hole and padding lines. */
static void
hole(FILE *f, uint64_t bits, const char *what)
{
	if (bits % 8 != 0)
		fprintf(f, "/* XXX %2u-bit %-7s    */\n", (unsigned)(bits % 8), what);
	if (bits / 8 != 0)
		fprintf(f, "/* XXX %2" PRIu64 "-byte %-7s   */\n", bits / 8, what);
}

/*
 * Members [*i, end of this level) at depth, inside a struct (union false)
 * or union starting at bit `start` of `size` bytes.  Returns with *i past
 * the level.
 */
static void
print_level(FILE *f, const struct tlist *l, size_t *i, unsigned depth,
    bool in_union, uint64_t start, uint64_t size)
{
	uint64_t end = start;
	char decl[1024], clean[4096];

	while (*i < l->n && l->m[*i].mi.depth == depth) {
		const struct kvs_member_info *mi = &l->m[*i].mi;
		unsigned col = 4 + 4 * depth;

		if (!in_union && mi->bit_offset > end)
			hole(f, mi->bit_offset - end, "hole");
		if (in_union)
			fprintf(f, "/*                %6" PRIu64 " */", mi->size);
		else if (mi->bit_size != 0)
			fprintf(f, "/* %6" PRIu64 ":%2u   |  %6" PRIu64 " */", mi->offset,
			    (unsigned)(mi->bit_offset % 8), mi->size);
		else
			fprintf(f, "/* %6" PRIu64 "      |  %6" PRIu64 " */", mi->offset,
			    mi->size);
		indent(f, col);
		(*i)++;
		if (opens(mi)) {
			const char *t = mi->type_name;
			bool anon = strstr(t, "<anonymous>") != NULL;
			fprintf(f, "%s {\n", anon ? (mi->kind == KVS_KIND_UNION ?
			    "union" : "struct") : sanitize(clean, sizeof(clean), t,
			    strlen(t), false));
			print_level(f, l, i, depth + 1, mi->kind == KVS_KIND_UNION,
			    mi->bit_offset, mi->size);
			indent(f, 27 + col);
			fprintf(f, "};\n");
		} else {
			char t[1024];
			const char *a = strstr(mi->type_name, "<anonymous>");
			/* gdb's spelling of an anonymous type: "struct {...}" */
			if (a != NULL)
				snprintf(t, sizeof(t), "%.*s{...}%s", (int)(a - mi->type_name),
				    mi->type_name, a + strlen("<anonymous>"));
			else
				snprintf(t, sizeof(t), "%s", mi->type_name);
			declaration(decl, sizeof(decl), t, mi->name != NULL ? mi->name : "");
			fputs(sanitize(clean, sizeof(clean), decl, strlen(decl), false), f);
			if (mi->bit_size != 0)
				fprintf(f, " : %u", mi->bit_size);
			fputs(";\n", f);
		}
		if (!in_union) {
			uint64_t e = mi->bit_offset + (mi->bit_size != 0 ? mi->bit_size :
			    mi->size * 8);
			if (e > end)
				end = e;
		}
	}
	if (!in_union && start + size * 8 > end && *i <= l->n)
		hole(f, start + size * 8 - end, "padding");
	fputc('\n', f);
	indent(f, 27 + 4 + 4 * depth);
	fprintf(f, "/* total size (bytes): %4" PRIu64 " */\n", size);
}

static void
print_text(FILE *f, const char *name, const struct kvs_typeinfo *ti,
    const struct tlist *l)
{
	char clean[4096];
	size_t i = 0;

	/* gdb's spelling ("type = struct x"), or the name asked for. */
	if (ti->type_name != NULL && strstr(ti->type_name, "<anonymous>") == NULL)
		name = ti->type_name;
	fprintf(f, "/* offset      |    size */  type = %s", sanitize(clean,
	    sizeof(clean), name, strlen(name), false));
	if (!is_sou(ti->kind)) {
		fprintf(f, "\n\n%31s/* total size (bytes): %4" PRIu64 " */\n", "",
		    ti->size);
		return;
	}
	fputs(" {\n", f);
	print_level(f, l, &i, 0, ti->kind == KVS_KIND_UNION, 0, ti->size);
	fprintf(f, "%29s}\n", "");
}

/* ------------------------------------------------------------ JSON */

static json_t *
jstr(const char *s)
{
	return json_dumpstr(s);
}

/* The members of one level, as a JSON array. */
static json_t *
json_level(const struct tlist *l, size_t *i, unsigned depth)
{
	json_t *arr = json_array();

	while (*i < l->n && l->m[*i].mi.depth == depth) {
		const struct kvs_member_info *mi = &l->m[*i].mi;
		json_t *o = json_object();

		(*i)++;
		json_object_set_new(o, "name", mi->name != NULL ? jstr(mi->name) :
		    json_null());
		json_object_set_new(o, "offset", json_integer((json_int_t)mi->offset));
		if (mi->bit_size != 0) {
			json_object_set_new(o, "bit_offset",
			    json_integer((json_int_t)mi->bit_offset));
			json_object_set_new(o, "bit_size", json_integer(mi->bit_size));
		}
		json_object_set_new(o, "size", json_integer((json_int_t)mi->size));
		json_object_set_new(o, "type", jstr(mi->type_name));
		if (opens(mi))
			json_object_set_new(o, "members", json_level(l, i, depth + 1));
		json_array_append_new(arr, o);
	}
	return arr;
}

/* ------------------------------------------------------------ command */

int
cmd_type(kvs_t *kd, const struct opts *o)
{
	json_t *root = NULL, *types = NULL, *errors = NULL;
	char clean[4096];
	int i, rc = 0;

	if (o->nargs == 0)
		return usage_error(o->json, "type needs a type name: kvmstat -N kernel "
		    "type NAME...");
	if (o->json) {
		root = json_object();
		types = json_array();
		json_object_set_new(root, "schema", json_string(KVS_JSON_SCHEMA));
		json_object_set(root, "types", types);
		errors = json_array();
		json_object_set(root, "errors", errors);
	}
	for (i = 0; i < o->nargs; i++) {
		const char *name = o->args[i];
		struct kvs_typeinfo ti;
		struct tlist l = { NULL, 0, 0, false };

		if (kvs_type(kd, name, &ti) != 0 ||
		    (is_sou(ti.kind) && kvs_type_members(kd, name, collect, &l) != 0)) {
			const char *err = l.nomem ? "out of memory" : kvs_geterr(kd);
			fprintf(stderr, "kvmstat: type %s: %s\n", sanitize(clean,
			    sizeof(clean), name, strlen(name), false), err);
			if (errors != NULL) {
				json_t *e = json_object();
				json_object_set_new(e, "name", jstr(name));
				json_object_set_new(e, "message", jstr(err));
				json_array_append_new(errors, e);
			}
			free(l.m);
			rc = 1;
			continue;
		}
		if (o->json) {
			json_t *t = json_object();
			size_t k = 0;
			json_object_set_new(t, "name", jstr(name));
			json_object_set_new(t, "kind", json_string(kind_name(ti.kind)));
			json_object_set_new(t, "size", json_integer((json_int_t)ti.size));
			json_object_set_new(t, "members", json_level(&l, &k, 0));
			json_array_append_new(types, t);
		} else {
			if (i > 0)
				putchar('\n');
			print_text(stdout, name, &ti, &l);
		}
		free(l.m);
	}
	if (o->json) {
		if (json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0)
			rc = 1;
		putchar('\n');
		json_decref(types);
		json_decref(errors);
		json_decref(root);
	}
	if (fflush(stdout) != 0)
		rc = 1;
	return rc;
}
