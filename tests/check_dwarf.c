/*
 * check_dwarf.c - DWARF layouts (libkvmstat/types/dwarf.c).
 *
 * Expected values come from the compiler, never from dwarf.c:
 *   - fixtures/dwarf-test/: small programs built with gcc -gdwarf-2/3/4/5
 *     and clang-14 -gdwarf-5 (build.sh); truth.json is what they print
 *     (offsetof/sizeof, bitfield positions probed at run time).  The kinds,
 *     counts and type names checked below follow from the C declarations in
 *     fixtures/dwarf-test/types.h.  t.exec4/5 are linked like a Linux
 *     vmlinux (ET_EXEC keeping .rela.debug_*) and add lbound.ads, Ada arrays
 *     with non-zero lower bounds; t.rel5 is relocatable, like a .ko.
 *   - $KVS_FIXTURES/fbsd14/{kernel,kernel.dwarf2,kernel.dwarf5} with
 *     truth.json "layouts", when those fixtures exist.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvs_private.h"
#include "testutil.h"

struct bin {
	const char *file;
	int version;
};

static const struct bin bins[] = {
	{ "t.dwarf2", 2 },
	{ "t.dwarf3", 3 },
	{ "t.dwarf4", 4 },
	{ "t.dwarf5", 5 },
	{ "t.clang5", 5 },
	{ "t.clang4", 4 },
	{ "t.gz", 4 },      /* SHF_COMPRESSED .debug_* */
	/* ET_EXEC with .rela.debug_* (--emit-relocs) holding R_X86_64_NONE
	 * (--gc-sections), as in a Linux vmlinux: must not be relocated. */
	{ "t.exec4", 4 },
	{ "t.exec5", 5 },
	/* ET_REL (ld -r, like a FreeBSD .ko): must be relocated. */
	{ "t.rel5", 5 },
};
#define NBINS ((int)(sizeof(bins) / sizeof(bins[0])))

struct opened {
	int fd;
	Elf *elf;
	struct kvs_dwarf *d;
	struct kvs_error e;
};

static const char *
srcdir(void)
{
	const char *s = getenv("KVS_SRCDIR");
	return s != NULL ? s : ".";
}

static const char *
test_input(const char *name)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf), "%s/fixtures/dwarf-test/%s", srcdir(), name);
	return buf;
}

/* Open path with libelf and bind DWARF; returns kvs_dwarf_open's result. */
static int
open_bin(const char *path, struct opened *o)
{
	memset(o, 0, sizeof(*o));
	kerr_clear(&o->e);
	ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
	o->fd = open(path, O_RDONLY);
	ck_assert_msg(o->fd >= 0, "open %s: %s", path, strerror(errno));
	o->elf = elf_begin(o->fd, ELF_C_READ, NULL);
	ck_assert_msg(o->elf != NULL, "elf_begin %s: %s", path, elf_errmsg(-1));
	return kvs_dwarf_open(&o->d, o->elf, &o->e);
}

static void
close_bin(struct opened *o)
{
	kvs_dwarf_close(o->d);
	elf_end(o->elf);
	close(o->fd);
}

static uint64_t
ju(const json_t *j)
{
	return (uint64_t)json_integer_value(j);
}

static json_t *
dw_load_truth(const char *path)
{
	json_error_t je;
	json_t *t = json_load_file(path, 0, &je);

	ck_assert_msg(t != NULL, "%s: %s", path, je.text);
	return t;
}

/* Every layout in truth["layouts"]: type size, member offset and size. */
static int
check_layouts(struct opened *o, json_t *truth, const char *what)
{
	json_t *layouts = json_object_get(truth, "layouts"), *lay, *mem;
	const char *tname, *path;
	int nchecked = 0;

	ck_assert_ptr_nonnull(layouts);
	json_object_foreach(layouts, tname, lay) {
		struct kvs_typeinfo ti;
		json_t *members = json_object_get(lay, "members");

		kerr_clear(&o->e);
		ck_assert_msg(kvs_dwarf_type(o->d, tname, &ti, &o->e) == 0,
		    "%s: type %s: %s", what, tname, o->e.msg);
		ck_assert_msg(ti.size == ju(json_object_get(lay, "size")),
		    "%s: sizeof(%s) = %llu, truth %lld", what, tname,
		    (unsigned long long)ti.size,
		    (long long)ju(json_object_get(lay, "size")));
		json_object_foreach(members, path, mem) {
			json_t *sz = json_object_get(mem, "size");
			kerr_clear(&o->e);
			ck_assert_msg(kvs_dwarf_member(o->d, tname, path, &ti, &o->e) == 0,
			    "%s: %s.%s: %s", what, tname, path, o->e.msg);
			ck_assert_msg(ti.offset == ju(json_object_get(mem,
			    "offset")), "%s: offsetof(%s, %s) = %llu, truth %lld", what,
			    tname, path, (unsigned long long)ti.offset,
			    (long long)ju(json_object_get(mem, "offset")));
			if (sz != NULL)
				ck_assert_msg(ti.size == ju(sz),
				    "%s: sizeof(%s.%s) = %llu, truth %lld", what, tname,
				    path, (unsigned long long)ti.size,
				    (long long)ju(sz));
			nchecked++;
		}
	}
	return nchecked;
}

/* ------------------------------------------------- small test programs */

START_TEST(layouts_match_compiler)
{
	struct opened o;
	json_t *truth = dw_load_truth(test_input("truth.json"));
	json_t *sizes, *vars, *bfs, *v;
	const char *k;
	int n;

	ck_assert_msg(open_bin(test_input(bins[_i].file), &o) == 0, "%s: %s",
	    bins[_i].file, o.e.msg);
	n = check_layouts(&o, truth, bins[_i].file);
	ck_assert_int_gt(n, 30);

	sizes = json_object_get(truth, "sizes");
	json_object_foreach(sizes, k, v) {
		struct kvs_typeinfo ti;
		ck_assert_msg(kvs_dwarf_type(o.d, k, &ti, &o.e) == 0, "%s: %s: %s",
		    bins[_i].file, k, o.e.msg);
		ck_assert_msg(ti.size == ju(v), "%s: sizeof(%s)=%llu",
		    bins[_i].file, k, (unsigned long long)ti.size);
	}
	vars = json_object_get(truth, "variables");
	json_object_foreach(vars, k, v) {
		struct kvs_typeinfo ti;
		ck_assert_msg(kvs_dwarf_variable(o.d, k, &ti, &o.e) == 0, "%s: %s: %s",
		    bins[_i].file, k, o.e.msg);
		ck_assert_msg(ti.size == ju(v), "%s: sizeof(%s)=%llu",
		    bins[_i].file, k, (unsigned long long)ti.size);
		ck_assert_uint_eq(ti.offset, 0);
	}
	bfs = json_object_get(truth, "bitfields");
	json_object_foreach(bfs, k, v) {
		struct kvs_typeinfo ti;
		ck_assert_msg(kvs_dwarf_member(o.d, "struct outer", k, &ti, &o.e) == 0,
		    "%s: %s: %s", bins[_i].file, k, o.e.msg);
		ck_assert_msg(ti.offset * 8 + ti.bit_offset ==
		    (uint64_t)ju(json_object_get(v, "bitpos")),
		    "%s: %s at bit %llu+%u", bins[_i].file, k,
		    (unsigned long long)ti.offset, ti.bit_offset);
		ck_assert_uint_eq(ti.bit_size, ju(json_object_get(v, "width")));
		ck_assert_uint_lt(ti.bit_offset, 8);
		ck_assert_uint_eq(ti.size, (ti.bit_offset + ti.bit_size + 7) / 8);
		ck_assert_int_eq(ti.kind, KVS_KIND_BASE);
	}
	json_decref(truth);
	close_bin(&o);
}
END_TEST

struct mexp {
	const char *type, *path;
	kvs_kind_t kind;
	uint64_t count, elem_size;
	kvs_kind_t elem_kind;
	const char *type_name;
};

/* From the declarations in types.h / t_b.c. */
static const struct mexp mexps[] = {
	{ "struct outer", "x", KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "int" },
	{ "struct outer", "in", KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "struct inner" },
	{ "struct outer", "in.name", KVS_KIND_ARRAY, 32, 1, KVS_KIND_BASE, "char [32]" },
	{ "struct outer", "in.vals", KVS_KIND_ARRAY, 4, 8, KVS_KIND_BASE, "u_long [4]" },
	{ "struct outer", "in.st.frees", KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "uint64_t" },
	{ "struct outer", "nest.r", KVS_KIND_ARRAY, 3, 1, KVS_KIND_BASE, "char [3]" },
	/* base type spelling is the compiler's ("short int" / "short") */
	{ "struct outer", "s2", KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, NULL },
	{ "struct outer", "grid", KVS_KIND_ARRAY, 15, 4, KVS_KIND_BASE, "int [3][5]" },
	{ "struct outer", "sp", KVS_KIND_POINTER, 0, 16, KVS_KIND_STRUCT, "struct stats *" },
	{ "struct outer", "vp", KVS_KIND_POINTER, 0, 0, KVS_KIND_VOID, "void *" },
	{ "struct outer", "name", KVS_KIND_POINTER, 0, 1, KVS_KIND_BASE, "const char *" },
	/* gcc drops the volatile already inside cv_ulong, clang keeps it */
	{ "struct outer", "cvl", KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, NULL },
	{ "struct outer", "chain", KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "my_ulong" },
	{ "struct outer", "fn", KVS_KIND_POINTER, 0, 0, KVS_KIND_FUNCTION, "int (*)(int)" },
	/* struct fwd is only declared in t_a.c's CU: completed from t_b.c. */
	{ "struct outer", "fwdp", KVS_KIND_POINTER, 0, 24, KVS_KIND_STRUCT, "struct fwd *" },
	{ "struct outer", "next", KVS_KIND_POINTER, 0, 264, KVS_KIND_STRUCT, "struct outer *" },
	{ "struct outer", "flex", KVS_KIND_ARRAY, 0, 1, KVS_KIND_BASE, "char []" },
	{ "outer_t", "nest", KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, NULL },
	{ "union uu", "c", KVS_KIND_ARRAY, 12, 1, KVS_KIND_BASE, "char [12]" },
	{ "union uu", "d", KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "double" },
	{ "struct fwd", "self", KVS_KIND_POINTER, 0, 24, KVS_KIND_STRUCT, "struct fwd *" },
};

static void
check_exp(const char *bin, const struct kvs_typeinfo *ti, const struct mexp *x)
{
	ck_assert_msg(ti->kind == x->kind, "%s: %s %s kind %d want %d", bin, x->type,
	    x->path ? x->path : "", ti->kind, x->kind);
	ck_assert_msg(ti->count == x->count, "%s: %s %s count %llu want %llu", bin,
	    x->type, x->path ? x->path : "", (unsigned long long)ti->count,
	    (unsigned long long)x->count);
	if (x->kind == KVS_KIND_ARRAY || x->kind == KVS_KIND_POINTER) {
		ck_assert_msg(ti->elem_size == x->elem_size, "%s: %s %s elem_size %llu",
		    bin, x->type, x->path ? x->path : "",
		    (unsigned long long)ti->elem_size);
		ck_assert_msg(ti->elem_kind == x->elem_kind, "%s: %s %s elem_kind %d",
		    bin, x->type, x->path ? x->path : "", ti->elem_kind);
	}
	ck_assert_ptr_nonnull(ti->type_name);
	if (x->type_name != NULL)
		ck_assert_msg(strcmp(ti->type_name, x->type_name) == 0,
		    "%s: %s %s type_name \"%s\" want \"%s\"", bin, x->type,
		    x->path ? x->path : "", ti->type_name, x->type_name);
}

START_TEST(kinds_counts_names)
{
	struct opened o;
	struct kvs_typeinfo ti;
	size_t i;
	const char *bin = bins[_i].file;

	ck_assert_msg(open_bin(test_input(bin), &o) == 0, "%s", o.e.msg);
	for (i = 0; i < sizeof(mexps) / sizeof(mexps[0]); i++) {
		ck_assert_msg(kvs_dwarf_member(o.d, mexps[i].type, mexps[i].path, &ti,
		    &o.e) == 0, "%s: %s.%s: %s", bin, mexps[i].type, mexps[i].path,
		    o.e.msg);
		check_exp(bin, &ti, &mexps[i]);
	}
	close_bin(&o);
}
END_TEST

static const struct mexp texps[] = {
	{ "struct outer", NULL, KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "struct outer" },
	{ "outer_t", NULL, KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "outer_t" },
	{ "struct fwd", NULL, KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "struct fwd" },
	{ "union uu", NULL, KVS_KIND_UNION, 0, 0, KVS_KIND_OTHER, "union uu" },
	{ "enum color", NULL, KVS_KIND_ENUM, 0, 0, KVS_KIND_OTHER, "enum color" },
	{ "row_t", NULL, KVS_KIND_ARRAY, 4, 4, KVS_KIND_BASE, "row_t" },
	{ "cv_ulong", NULL, KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "cv_ulong" },
	{ "u_long", NULL, KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "u_long" },
	{ "int", NULL, KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "int" },
	/* bare tag name falls back to the struct */
	{ "stats", NULL, KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "struct stats" },
};

/* Variables: pointer vs array of the same struct, statics, definitions
 * that complete a declaration in another CU. */
static const struct mexp vexps[] = {
	{ "pcpu_ptr", NULL, KVS_KIND_POINTER, 0, 64, KVS_KIND_STRUCT, "struct pcpu *" },
	{ "pcpu_arr", NULL, KVS_KIND_ARRAY, 8, 64, KVS_KIND_STRUCT, "struct pcpu [8]" },
	{ "fwd_global", NULL, KVS_KIND_POINTER, 0, 24, KVS_KIND_STRUCT, "struct fwd *" },
	{ "g_outer", NULL, KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "outer_t" },
	{ "g_str", NULL, KVS_KIND_POINTER, 0, 1, KVS_KIND_BASE, "const char *" },
	{ "g_color", NULL, KVS_KIND_ENUM, 0, 0, KVS_KIND_OTHER, "enum color" },
	{ "static_a", NULL, KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "struct stats" },
	{ "static_b", NULL, KVS_KIND_ARRAY, 3, 8, KVS_KIND_BASE, NULL },
	{ "fwd_storage", NULL, KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "struct fwd" },
};

START_TEST(types_and_variables)
{
	struct opened o;
	struct kvs_typeinfo ti;
	size_t i;
	const char *bin = bins[_i].file;

	ck_assert_msg(open_bin(test_input(bin), &o) == 0, "%s", o.e.msg);
	for (i = 0; i < sizeof(texps) / sizeof(texps[0]); i++) {
		ck_assert_msg(kvs_dwarf_type(o.d, texps[i].type, &ti, &o.e) == 0,
		    "%s: %s: %s", bin, texps[i].type, o.e.msg);
		check_exp(bin, &ti, &texps[i]);
	}
	for (i = 0; i < sizeof(vexps) / sizeof(vexps[0]); i++) {
		ck_assert_msg(kvs_dwarf_variable(o.d, vexps[i].type, &ti, &o.e) == 0,
		    "%s: %s: %s", bin, vexps[i].type, o.e.msg);
		check_exp(bin, &ti, &vexps[i]);
	}
	ck_assert_int_eq(kvs_dwarf_variable(o.d, "static_b", &ti, &o.e), 0);
	ck_assert_uint_eq(ti.size, 3 * sizeof(long));
	ck_assert_msg(strcmp(ti.type_name, "long int [3]") == 0 ||
	    strcmp(ti.type_name, "long [3]") == 0, "%s", ti.type_name);
	/* row_t g_rows[2]: gcc flattens it to int [2][4], clang keeps the
	 * typedef (row_t [2]); both describe 32 bytes. */
	ck_assert_int_eq(kvs_dwarf_variable(o.d, "g_rows", &ti, &o.e), 0);
	ck_assert_int_eq(ti.kind, KVS_KIND_ARRAY);
	ck_assert_uint_eq(ti.size, 32);
	if (strcmp(ti.type_name, "int [2][4]") == 0) {
		ck_assert_uint_eq(ti.count, 8);
		ck_assert_uint_eq(ti.elem_size, 4);
		ck_assert_int_eq(ti.elem_kind, KVS_KIND_BASE);
	} else {
		ck_assert_str_eq(ti.type_name, "row_t [2]");
		ck_assert_uint_eq(ti.count, 2);
		ck_assert_uint_eq(ti.elem_size, 16);
		ck_assert_int_eq(ti.elem_kind, KVS_KIND_ARRAY);
	}
	close_bin(&o);
}
END_TEST

START_TEST(errors_name_what_is_missing)
{
	struct opened o;
	struct kvs_typeinfo ti;
	char first[KVS_MSG_MAX];
	int round;

	ck_assert_msg(open_bin(test_input(bins[_i].file), &o) == 0, "%s", o.e.msg);
	/* Twice: the second answer comes from the negative cache. */
	for (round = 0; round < 2; round++) {
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_dwarf_type(o.d, "struct nosuch", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		ck_assert_ptr_nonnull(strstr(o.e.msg, "struct nosuch"));

		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_dwarf_member(o.d, "struct outer", "in.nosuch",
		    &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		ck_assert_ptr_nonnull(strstr(o.e.msg, "struct outer"));
		ck_assert_ptr_nonnull(strstr(o.e.msg, "nosuch"));
		if (round == 0)
			strcpy(first, o.e.msg);
		else
			ck_assert_str_eq(o.e.msg, first);

		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_dwarf_member(o.d, "struct outer", "nosuch",
		    &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		ck_assert_str_eq(o.e.msg, "struct outer has no member \"nosuch\"");

		/* Path through a scalar and through a pointer. */
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_dwarf_member(o.d, "struct outer", "x.y", &ti,
		    &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_dwarf_member(o.d, "struct outer", "sp.frees",
		    &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);

		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_dwarf_member(o.d, "struct outer", "in..a",
		    &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_INVAL);

		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_dwarf_variable(o.d, "no_such_var", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		ck_assert_ptr_nonnull(strstr(o.e.msg, "no_such_var"));

		/* A tag namespace is not a typedef namespace. */
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_dwarf_type(o.d, "struct outer_t", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_dwarf_type(o.d, "union stats", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
	}
	/* Lookups still work after errors. */
	kerr_clear(&o.e);
	ck_assert_int_eq(kvs_dwarf_member(o.d, "struct outer", "in.st", &ti, &o.e), 0);
	ck_assert_int_eq(o.e.status, KVS_OK);
	close_bin(&o);
}
END_TEST

START_TEST(cache_returns_same_answer)
{
	struct opened o;
	struct kvs_typeinfo a, b;
	int i;

	ck_assert_msg(open_bin(test_input(bins[_i].file), &o) == 0, "%s", o.e.msg);
	ck_assert_int_eq(kvs_dwarf_member(o.d, "struct outer", "in.st.frees", &a,
	    &o.e), 0);
	for (i = 0; i < 1000; i++) {
		ck_assert_int_eq(kvs_dwarf_member(o.d, "struct outer", "in.st.frees",
		    &b, &o.e), 0);
		ck_assert_mem_eq(&a, &b, sizeof(a));
	}
	/* type_name strings are interned: one pointer per spelling. */
	ck_assert_int_eq(kvs_dwarf_member(o.d, "struct outer", "sp", &a, &o.e), 0);
	ck_assert_int_eq(kvs_dwarf_member(o.d, "struct outer", "in.st", &b, &o.e), 0);
	ck_assert_str_eq(b.type_name, "struct stats");
	ck_assert_int_eq(kvs_dwarf_type(o.d, "struct stats", &b, &o.e), 0);
	ck_assert_int_eq(kvs_dwarf_member(o.d, "struct inner", "st", &a, &o.e), 0);
	ck_assert_ptr_eq(a.type_name, b.type_name);
	close_bin(&o);
}
END_TEST

START_TEST(version_per_binary)
{
	struct opened o;
	struct kvs_typeinfo ti;

	ck_assert_msg(open_bin(test_input(bins[_i].file), &o) == 0, "%s", o.e.msg);
	/* Before the index exists (header-only pass) and after. */
	ck_assert_int_eq(kvs_dwarf_version(o.d), bins[_i].version);
	ck_assert_int_eq(kvs_dwarf_type(o.d, "struct outer", &ti, &o.e), 0);
	ck_assert_int_eq(kvs_dwarf_version(o.d), bins[_i].version);
	close_bin(&o);
	/* Index first, version afterwards. */
	ck_assert_int_eq(open_bin(test_input(bins[_i].file), &o), 0);
	ck_assert_int_eq(kvs_dwarf_variable(o.d, "pcpu_arr", &ti, &o.e), 0);
	ck_assert_int_eq(kvs_dwarf_version(o.d), bins[_i].version);
	close_bin(&o);
}
END_TEST

START_TEST(elf_without_dwarf)
{
	struct opened o;

	ck_assert_int_eq(open_bin(test_input("t.nodwarf"), &o), -1);
	ck_assert_ptr_null(o.d);
	ck_assert_int_eq(o.e.status, KVS_E_DWARF);
	ck_assert_msg(strstr(o.e.msg, "no DWARF debug information") != NULL, "%s",
	    o.e.msg);
	elf_end(o.elf);
	close(o.fd);
	kvs_dwarf_close(NULL);
}
END_TEST

/* File offset and size of .debug_info in path. */
static void
debug_info_range(const char *path, uint64_t *off, uint64_t *size)
{
	struct opened o;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(&o, 0, sizeof(o));
	ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
	o.fd = open(path, O_RDONLY);
	ck_assert_int_ge(o.fd, 0);
	o.elf = elf_begin(o.fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(o.elf);
	ck_assert_int_eq(elf_getshdrstrndx(o.elf, &shstrndx), 0);
	*off = *size = 0;
	while ((scn = elf_nextscn(o.elf, scn)) != NULL) {
		GElf_Shdr sh;
		ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
		if (strcmp(elf_strptr(o.elf, shstrndx, sh.sh_name), ".debug_info") == 0) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
		}
	}
	elf_end(o.elf);
	close(o.fd);
	ck_assert_uint_gt(*size, 64);
}

/*
 * Damaged .debug_info: lookups succeed or fail with KVS_E_DWARF/NOTYPE and a
 * message, never crash or leak (run under valgrind, see README).  Loop over
 * positions spread through the section; _i == 0 hits the first CU header.
 */
START_TEST(corrupt_debug_info)
{
	const char *src = test_input("t.dwarf4");
	const char *dst = path_join(test_tmpdir(), "corrupt");
	uint64_t off, size, pos;
	size_t len;
	uint8_t *buf = read_file(src, &len);
	struct opened o;
	struct kvs_typeinfo ti;
	int rc;

	ck_assert_ptr_nonnull(buf);
	debug_info_range(src, &off, &size);
	pos = off + (size - 16) * (uint64_t)_i / 16;
	memset(buf + pos, 0xff, 16);
	ck_assert_int_eq(write_file(dst, buf, len), 0);
	free(buf);
	rc = open_bin(dst, &o);
	if (rc != 0) {
		ck_assert_int_eq(o.e.status, KVS_E_DWARF);
		elf_end(o.elf);
		close(o.fd);
		return;
	}
	rc = kvs_dwarf_member(o.d, "struct outer", "in.st.frees", &ti, &o.e);
	if (rc != 0) {
		ck_assert_msg(o.e.status == KVS_E_DWARF || o.e.status == KVS_E_NOTYPE,
		    "status %d: %s", o.e.status, o.e.msg);
		ck_assert_uint_gt(strlen(o.e.msg), 0);
	}
	kerr_clear(&o.e);
	rc = kvs_dwarf_variable(o.d, "pcpu_arr", &ti, &o.e);
	if (rc != 0)
		ck_assert_msg(o.e.status == KVS_E_DWARF || o.e.status == KVS_E_NOTYPE,
		    "status %d: %s", o.e.status, o.e.msg);
	(void)kvs_dwarf_version(o.d);
	close_bin(&o);
}
END_TEST

/* ------------------------------------- linked and relocatable objects */

/* ELF type of path, and how many relocations of each kind its
 * .rela.debug_info holds: R_X86_64_NONE in *nnone, all in *nrel. */
static void
debug_info_relocs(const char *path, int *etype, size_t *nrel, size_t *nnone)
{
	struct opened o;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shstrndx;

	memset(&o, 0, sizeof(o));
	ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
	o.fd = open(path, O_RDONLY);
	ck_assert_msg(o.fd >= 0, "open %s: %s", path, strerror(errno));
	o.elf = elf_begin(o.fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(o.elf);
	ck_assert_ptr_nonnull(gelf_getehdr(o.elf, &eh));
	*etype = eh.e_type;
	ck_assert_int_eq(elf_getshdrstrndx(o.elf, &shstrndx), 0);
	*nrel = *nnone = 0;
	while ((scn = elf_nextscn(o.elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		int i;

		ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
		if (sh.sh_type != SHT_RELA || strcmp(elf_strptr(o.elf, shstrndx,
		    sh.sh_name), ".rela.debug_info") != 0)
			continue;
		data = elf_getdata(scn, NULL);
		ck_assert_ptr_nonnull(data);
		for (i = 0; (size_t)i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			ck_assert_ptr_nonnull(gelf_getrela(data, i, &r));
			(*nrel)++;
			if (GELF_R_TYPE(r.r_info) == R_X86_64_NONE)
				(*nnone)++;
		}
	}
	elf_end(o.elf);
	close(o.fd);
}

/* The inputs are what they claim: a linked kernel-like executable with
 * relocations libdwarf cannot apply (a Linux vmlinux has 15,610
 * R_X86_64_NONE in .rela.debug_info), and a relocatable object.  The
 * per-binary tests above then show lookups on both give the compiler's
 * offsets. */
START_TEST(linked_and_relocatable_inputs)
{
	static const struct { const char *file; int etype; bool none; } in[] = {
		{ "t.exec4", ET_EXEC, true },
		{ "t.exec5", ET_EXEC, true },
		{ "t.rel5", ET_REL, false },
	};
	size_t i, nrel, nnone;
	int etype;

	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		debug_info_relocs(test_input(in[i].file), &etype, &nrel, &nnone);
		ck_assert_msg(etype == in[i].etype, "%s: e_type %d", in[i].file,
		    etype);
		ck_assert_msg(nrel > 100, "%s: %zu relocations", in[i].file, nrel);
		if (in[i].none)
			ck_assert_msg(nnone > 0, "%s: no R_X86_64_NONE", in[i].file);
	}
}
END_TEST

/*
 * Handles on linked and relocatable files side by side in one process,
 * opened in both orders and used interleaved: libdwarf keeps some state
 * global (a section-flags hook that each libelf binding resets), and a
 * relocatable file opened first must not leave relocation off or on for
 * the next one.
 */
START_TEST(linked_and_relocatable_together)
{
	static const char *const order[] = {
		"t.rel5", "t.exec5", "t.gz", "t.rel5", "t.dwarf5", "t.exec4",
	};
	enum { N = sizeof(order) / sizeof(order[0]) };
	struct opened o[N];
	struct kvs_typeinfo ti;
	int i, round;

	for (i = 0; i < N; i++)
		ck_assert_msg(open_bin(test_input(order[i]), &o[i]) == 0, "%s: %s",
		    order[i], o[i].e.msg);
	for (round = 0; round < 2; round++)
		for (i = N - 1; i >= 0; i--) {
			ck_assert_msg(kvs_dwarf_member(o[i].d, "struct outer",
			    "in.st.frees", &ti, &o[i].e) == 0, "%s: %s", order[i],
			    o[i].e.msg);
			ck_assert_uint_eq(ti.size, 8);
			ck_assert_msg(kvs_dwarf_variable(o[i].d, "fwd_global", &ti,
			    &o[i].e) == 0, "%s: %s", order[i], o[i].e.msg);
			ck_assert_str_eq(ti.type_name, "struct fwd *");
		}
	for (i = 0; i < N; i++)
		close_bin(&o[i]);
}
END_TEST

/*
 * Arrays whose index does not start at 0 (fixtures/dwarf-test/lbound.ads,
 * linked into t.exec4/5): the element count, the size derived from it and
 * the spelled type name all come from one reading of the bounds.
 * -2 .. 5 and 3 .. 10 carry DW_AT_lower_bound; in 1 .. 2 GNAT omits it, as
 * 1 is Ada's default (C's is 0: an upper bound of 2 would mean 3 elements).
 */
static const struct { const char *file; } lb_bins[] = {
	{ "t.exec4" }, { "t.exec5" },
};

START_TEST(array_lower_bounds)
{
	static const struct {
		char q;                 /* 'T' type, 'M' member, 'V' variable */
		const char *name, *path;
		uint64_t size, count;
		const char *type_name;
	} x[] = {
		{ 'V', "lbound__g_arr", NULL, 32, 8, "integer [8]" },
		{ 'V', "lbound__g_grid", NULL, 24, 6, "integer [2][3]" },
		{ 'T', "lbound__arr", NULL, 32, 8, "lbound__arr" },
		{ 'M', "lbound__rec", "a", 32, 8, "lbound__arr" },
	};
	const char *bin = lb_bins[_i].file;
	struct opened o;
	struct kvs_typeinfo ti;
	size_t i;

	ck_assert_msg(open_bin(test_input(bin), &o) == 0, "%s: %s", bin, o.e.msg);
	for (i = 0; i < sizeof(x) / sizeof(x[0]); i++) {
		int rc = x[i].q == 'T' ? kvs_dwarf_type(o.d, x[i].name, &ti, &o.e) :
		    x[i].q == 'M' ? kvs_dwarf_member(o.d, x[i].name, x[i].path, &ti,
		    &o.e) : kvs_dwarf_variable(o.d, x[i].name, &ti, &o.e);
		ck_assert_msg(rc == 0, "%s: %s: %s", bin, x[i].name, o.e.msg);
		ck_assert_int_eq(ti.kind, KVS_KIND_ARRAY);
		ck_assert_msg(ti.count == x[i].count, "%s: %s count %llu", bin,
		    x[i].name, (unsigned long long)ti.count);
		ck_assert_msg(ti.size == x[i].size, "%s: %s size %llu", bin,
		    x[i].name, (unsigned long long)ti.size);
		ck_assert_uint_eq(ti.elem_size, 4);
		ck_assert_int_eq(ti.elem_kind, KVS_KIND_BASE);
		ck_assert_str_eq(ti.type_name, x[i].type_name);
	}
	ck_assert_int_eq(kvs_dwarf_member(o.d, "lbound__rec", "a", &ti, &o.e), 0);
	ck_assert_uint_eq(ti.offset, 4);
	ck_assert_int_eq(kvs_dwarf_type(o.d, "lbound__rec", &ti, &o.e), 0);
	ck_assert_uint_eq(ti.size, 36);
	close_bin(&o);
}
END_TEST

/* ------------------------------------------------ FreeBSD 14 fixtures */

static const struct bin kernels[] = {
	{ "fbsd14/kernel", 4 },
	{ "fbsd14/kernel.dwarf2", 2 },
	{ "fbsd14/kernel.dwarf5", 5 },
};

START_TEST(fbsd14_kernel_layouts)
{
	const char *tp = fixture_path("fbsd14/truth.json");
	char kpath[4096];
	struct opened o;
	json_t *truth;
	int n;

	snprintf(kpath, sizeof(kpath), "%s", fixture_path(kernels[_i].file));
	/* Missing fixtures or layouts fail: the truth is what this checks against. */
	ck_assert_msg(access(tp, R_OK) == 0 && access(kpath, R_OK) == 0, "%s or %s missing",
	    tp, kpath);
	truth = dw_load_truth(tp);
	ck_assert_msg(json_object_get(truth, "layouts") != NULL, "%s has no layouts", tp);
	ck_assert_msg(open_bin(kpath, &o) == 0, "%s: %s", kpath, o.e.msg);
	n = check_layouts(&o, truth, kernels[_i].file);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(kvs_dwarf_version(o.d), kernels[_i].version);
	json_decref(truth);
	close_bin(&o);
}
END_TEST

/*
 * The fast index (section bytes, threads) and libdwarf's walk
 * (KVS_DWARF_SLOW=1) give the same answer to every question truth.json
 * asks, on every input: the fast one falls back to libdwarf for what it
 * does not read (ET_REL, compressed sections) and must agree where it does.
 */
static void
same_answers(struct opened *a, struct opened *b, json_t *truth, const char *what)
{
	json_t *layouts = json_object_get(truth, "layouts"), *lay, *mem;
	const char *tname, *mname;
	struct kvs_typeinfo x, y;
	int ra, rb;

	json_object_foreach(layouts, tname, lay) {
		ra = kvs_dwarf_type(a->d, tname, &x, &a->e);
		rb = kvs_dwarf_type(b->d, tname, &y, &b->e);
		ck_assert_msg(ra == rb && (ra != 0 || (x.size == y.size &&
		    strcmp(x.type_name, y.type_name) == 0)), "%s: %s differs "
		    "between the fast and the libdwarf index", what, tname);
		json_object_foreach(json_object_get(lay, "members"), mname, mem) {
			ra = kvs_dwarf_member(a->d, tname, mname, &x, &a->e);
			rb = kvs_dwarf_member(b->d, tname, mname, &y, &b->e);
			ck_assert_msg(ra == rb && (ra != 0 || (x.offset == y.offset &&
			    x.size == y.size && x.bit_offset == y.bit_offset &&
			    strcmp(x.type_name, y.type_name) == 0)),
			    "%s: %s.%s differs between the two indexes", what,
			    tname, mname);
		}
	}
}

static void
open_both(const char *path, struct opened *fast, struct opened *slow)
{
	struct kvs_typeinfo ti;

	ck_assert_int_eq(unsetenv("KVS_DWARF_SLOW"), 0);
	ck_assert_msg(open_bin(path, fast) == 0, "%s", fast->e.msg);
	/* the index is built on the first lookup: the fast one's now, before
	 * KVS_DWARF_SLOW is set for the other */
	ck_assert_msg(kvs_dwarf_type(fast->d, "int", &ti, &fast->e) == 0, "%s",
	    fast->e.msg);
	ck_assert_int_eq(setenv("KVS_DWARF_SLOW", "1", 1), 0);
	ck_assert_msg(open_bin(path, slow) == 0, "%s", slow->e.msg);
	/* the index is built on the first lookup */
	(void)kvs_dwarf_version(slow->d);
}

START_TEST(fast_index_matches_libdwarf)
{
	struct opened f, l;
	json_t *truth = dw_load_truth(test_input("truth.json"));
	static const char *vars[] = { "pcpu_ptr", "pcpu_arr", "fwd_global",
	    "g_outer", "g_rows", "g_str", "static_b", "nosuchvar" };
	struct kvs_typeinfo x, y;
	size_t i;

	open_both(test_input(bins[_i].file), &f, &l);
	/* Every linked file with plain sections is read by the fast index
	 * (gcc's and clang's, DWARF 2 to 5); a compressed or relocatable one,
	 * and any under KVS_DWARF_SLOW, by libdwarf's walk. */
	ck_assert_msg(kvs_dwarf_fast_indexed(f.d) == (strcmp(bins[_i].file, "t.gz") != 0 &&
	    strcmp(bins[_i].file, "t.rel5") != 0), "%s: fast index %s", bins[_i].file,
	    kvs_dwarf_fast_indexed(f.d) ? "used" : "not used");
	ck_assert(!kvs_dwarf_fast_indexed(l.d));
	same_answers(&f, &l, truth, bins[_i].file);
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		int ra = kvs_dwarf_variable(f.d, vars[i], &x, &f.e);
		int rb = kvs_dwarf_variable(l.d, vars[i], &y, &l.e);
		ck_assert_msg(ra == rb && (ra != 0 || (x.size == y.size &&
		    strcmp(x.type_name, y.type_name) == 0)), "%s: variable %s "
		    "differs between the two indexes", bins[_i].file, vars[i]);
	}
	ck_assert_int_eq(kvs_dwarf_version(f.d), kvs_dwarf_version(l.d));
	unsetenv("KVS_DWARF_SLOW");
	close_bin(&f);
	close_bin(&l);
	json_decref(truth);
}
END_TEST

/*
 * Kernels built the way real ones are (fixtures/gen/big-kernel.sh): a few
 * hundred CUs, the same structs defined in many of them, declarations seen
 * before any definition, anonymous unions and structs, bit-fields, flexible
 * arrays; DWARF 4, and DWARF 5 linked with --emit-relocs as a vmlinux.
 * Every member of every struct against the compiler's offsetof/sizeof
 * (truth.json), through the fast index on a mapped file (its pages are
 * dropped as it goes) and through libdwarf's walk.
 */
static const char *const manycu_args[] = {
	"--cus 200 --dwarf 4",
	"--cus 200 --dwarf 5 --emit-relocs",
};

START_TEST(many_cu_kernels)
{
	char cmd[8192], path[4096];
	FILE *p;
	json_t *truth, *types, *ty, *mem;
	const char *tname, *mname;
	struct opened o[2];
	int k, n = 0;

	/* built once per machine, under /var/tmp (not the test run's cache) */
	snprintf(cmd, sizeof(cmd), "env -u XDG_CACHE_HOME %s/fixtures/gen/"
	    "big-kernel.sh %s", srcdir(), manycu_args[_i]);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_msg(fgets(path, sizeof(path), p) != NULL, "%s printed nothing",
	    cmd);
	ck_assert_int_eq(pclose(p), 0);
	path[strcspn(path, "\n")] = '\0';
	snprintf(cmd, sizeof(cmd), "%.*s/truth.json",
	    (int)(strrchr(path, '/') - path), path);
	truth = dw_load_truth(cmd);
	types = json_object_get(truth, "types");
	ck_assert_int_gt((int)json_object_size(types), 500);
	ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
	for (k = 0; k < 2; k++) {
		struct opened *x = &o[k];
		if (k == 1)
			setenv("KVS_DWARF_SLOW", "1", 1);
		memset(x, 0, sizeof(*x));
		x->fd = open(path, O_RDONLY);
		ck_assert_int_ge(x->fd, 0);
		x->elf = elf_begin(x->fd, ELF_C_READ_MMAP, NULL);
		ck_assert_ptr_nonnull(x->elf);
		ck_assert_msg(kvs_dwarf_open(&x->d, x->elf, &x->e) == 0, "%s",
		    x->e.msg);
		kvs_dwarf_set_opts(x->d, true, false);
		ck_assert_int_eq(kvs_dwarf_version(x->d), strstr(manycu_args[_i],
		    "dwarf 5") ? 5 : 4);
		unsetenv("KVS_DWARF_SLOW");
	}
	json_object_foreach(types, tname, ty) {
		struct kvs_typeinfo ti;
		for (k = 0; k < 2; k++) {
			ck_assert_msg(kvs_dwarf_type(o[k].d, tname, &ti, &o[k].e) == 0,
			    "%s: %s: %s", path, tname, o[k].e.msg);
			ck_assert_msg(ti.size == ju(json_object_get(ty, "size")),
			    "%s: sizeof(%s) = %llu, truth %lld", path, tname,
			    (unsigned long long)ti.size,
			    (long long)json_integer_value(json_object_get(ty, "size")));
		}
		json_object_foreach(json_object_get(ty, "members"), mname, mem) {
			for (k = 0; k < 2; k++) {
				ck_assert_msg(kvs_dwarf_member(o[k].d, tname, mname, &ti,
				    &o[k].e) == 0, "%s: %s.%s: %s", path, tname, mname,
				    o[k].e.msg);
				ck_assert_msg(ti.offset == ju(json_object_get(mem, "offset")) &&
				    ti.size == ju(json_object_get(mem, "size")),
				    "%s: %s.%s at %llu size %llu, truth %lld size %lld "
				    "(%s index)", path, tname, mname,
				    (unsigned long long)ti.offset,
				    (unsigned long long)ti.size,
				    (long long)json_integer_value(json_object_get(mem, "offset")),
				    (long long)json_integer_value(json_object_get(mem, "size")),
				    k == 0 ? "fast" : "libdwarf");
			}
			n++;
		}
	}
	ck_assert_int_gt(n, 5000);
	for (k = 0; k < 2; k++)
		close_bin(&o[k]);
	json_decref(truth);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("dwarf");
	TCase *tc = tcase_create("small");
	TCase *tk = tcase_create("fbsd14");

	tcase_add_loop_test(tc, layouts_match_compiler, 0, NBINS);
	tcase_add_loop_test(tc, kinds_counts_names, 0, NBINS);
	tcase_add_loop_test(tc, types_and_variables, 0, NBINS);
	tcase_add_loop_test(tc, errors_name_what_is_missing, 0, NBINS);
	tcase_add_loop_test(tc, cache_returns_same_answer, 0, NBINS);
	tcase_add_loop_test(tc, version_per_binary, 0, NBINS);
	tcase_add_test(tc, elf_without_dwarf);
	tcase_add_loop_test(tc, corrupt_debug_info, 0, 16);
	tcase_add_test(tc, linked_and_relocatable_inputs);
	tcase_add_test(tc, linked_and_relocatable_together);
	tcase_add_loop_test(tc, array_lower_bounds, 0,
	    (int)(sizeof(lb_bins) / sizeof(lb_bins[0])));
	suite_add_tcase(s, tc);
	tcase_add_loop_test(tk, fbsd14_kernel_layouts, 0,
	    (int)(sizeof(kernels) / sizeof(kernels[0])));
	tcase_set_timeout(tk, 240);
	suite_add_tcase(s, tk);
	tcase_add_loop_test(tc, fast_index_matches_libdwarf, 0, NBINS);
	{
		TCase *tm = tcase_create("manycu");
		tcase_add_loop_test(tm, many_cu_kernels, 0,
		    (int)(sizeof(manycu_args) / sizeof(manycu_args[0])));
		tcase_set_timeout(tm, 280);
		suite_add_tcase(s, tm);
	}
	return run_suite(s);
}
