/*
 * check_btf.c - BTF layouts (libkvmstat/types/btf.c) and the handle's use
 * of them (core/kvs.c: BTF first, DWARF for what BTF lacks).
 *
 * Inputs (fixtures/btf-test/, rebuilt by its build.sh, committed):
 *   t.pahole, t.clang, t.gcc: one C file (shapes.h, t.c) compiled with
 *   DWARF and given BTF by pahole -J (as a kernel gets it) or by gcc -gbtf.
 *   Each binary holds both, so every answer through BTF is compared with
 *   the answer through DWARF of the same binary: every member of every
 *   struct of shapes.h by dotted path (the member list from libbpf itself,
 *   not from btf.c), types by name, variables.  Offsets, sizes and
 *   bit-field positions are also checked against this file's compiler
 *   (shapes.h is included here), and the C spellings against a table.
 *   kernel.btf: the fbsd14 fixture kernel plus pahole -J, opened with the
 *   fbsd14 dumps through kvs_open, against the same kernel without BTF.
 */
#include <bpf/btf.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <jansson.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvs_private.h"
#include "testutil.h"
#include "../fixtures/btf-test/shapes.h"

static const char *const bins[] = { "t.pahole", "t.clang", "t.gcc" };
#define NBINS ((int)(sizeof(bins) / sizeof(bins[0])))

static const char *
test_input(const char *name)
{
	static char buf[8][4096];
	static int k;
	const char *s = getenv("KVS_SRCDIR");

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/fixtures/btf-test/%s", s ? s : ".", name);
	return buf[k];
}

struct opened {
	int fd;
	Elf *elf;
	struct kvs_btf *b;
	struct kvs_dwarf *d;
	struct btf *raw;            /* libbpf's own view, for member lists */
	struct kvs_error e;
};

static void
open_bin(const char *name, struct opened *o)
{
	const char *path = test_input(name);

	memset(o, 0, sizeof(*o));
	kerr_clear(&o->e);
	ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
	o->fd = open(path, O_RDONLY);
	ck_assert_msg(o->fd >= 0, "open %s: %s", path, strerror(errno));
	o->elf = elf_begin(o->fd, ELF_C_READ_MMAP, NULL);
	ck_assert_msg(o->elf != NULL, "elf_begin %s: %s", path, elf_errmsg(-1));
	ck_assert_msg(kvs_btf_open_elf(&o->b, o->elf, &o->e) == 0, "%s: BTF: %s",
	    name, o->e.msg);
	ck_assert_ptr_nonnull(o->b);
	ck_assert_msg(kvs_dwarf_open(&o->d, o->elf, &o->e) == 0, "%s: DWARF: %s",
	    name, o->e.msg);
	o->raw = btf__parse_elf(path, NULL);
	ck_assert_msg(o->raw != NULL, "libbpf cannot read %s", path);
}

static void
close_bin(struct opened *o)
{
	btf__free(o->raw);
	kvs_btf_close(o->b);
	kvs_dwarf_close(o->d);
	elf_end(o->elf);
	close(o->fd);
}

/*
 * A C spelling with each run of array dimensions replaced by their product
 * ("int [3][5]" -> "int [15]", "[0]" and "[]" -> "[0]"): the two things BTF
 * cannot keep.  A zero-length array is nelems 0 like a flexible one, and
 * pahole writes a multi-dimensional array as one dimension (gcc 12's -gbtf
 * nests them in reverse order).  Everything else must be equal.
 */
static void
dims_folded(const char *s, char *out, size_t n)
{
	size_t o = 0;

	while (*s != '\0' && o + 24 < n) {
		unsigned long long prod = 1;
		if (*s != '[') {
			out[o++] = *s++;
			continue;
		}
		while (*s == '[') {
			char *end;
			unsigned long long v = strtoull(s + 1, &end, 10);
			if (*end != ']')
				break;
			prod = end == s + 1 ? 0 : prod * v;
			s = end + 1;
		}
		o += (size_t)snprintf(out + o, n - o, "[%llu]", prod);
	}
	out[o] = '\0';
}

static bool
same_spelling(const char *dw, const char *bt, bool exact)
{
	char a[1024], b[1024];

	if (strcmp(dw, bt) == 0)
		return true;
	if (exact)
		return false;
	dims_folded(dw, a, sizeof(a));
	dims_folded(bt, b, sizeof(b));
	return strcmp(a, b) == 0;
}

static void
describe(char *buf, size_t n, int rc, const struct kvs_typeinfo *ti,
    const struct kvs_error *e)
{
	if (rc != 0)
		snprintf(buf, n, "error %d (%s)", e->status, e->msg);
	else
		snprintf(buf, n, "off %llu size %llu kind %d count %llu elem %llu/%d "
		    "bits %u@%u \"%s\"", (unsigned long long)ti->offset,
		    (unsigned long long)ti->size, ti->kind,
		    (unsigned long long)ti->count, (unsigned long long)ti->elem_size,
		    ti->elem_kind, ti->bit_size, ti->bit_offset, ti->type_name);
}

enum q { Q_TYPE, Q_MEMBER, Q_VAR };

static int
ask_btf(struct kvs_btf *b, enum q q, const char *a, const char *p,
    struct kvs_typeinfo *ti, struct kvs_error *e)
{
	kerr_clear(e);
	memset(ti, 0xa5, sizeof(*ti));
	return q == Q_TYPE ? kvs_btf_type(b, a, ti, e) : q == Q_MEMBER ?
	    kvs_btf_member(b, a, p, ti, e) : kvs_btf_variable(b, a, ti, e);
}

static int
ask_dwarf(struct kvs_dwarf *d, enum q q, const char *a, const char *p,
    struct kvs_typeinfo *ti, struct kvs_error *e)
{
	kerr_clear(e);
	memset(ti, 0x5a, sizeof(*ti));
	return q == Q_TYPE ? kvs_dwarf_type(d, a, ti, e) : q == Q_MEMBER ?
	    kvs_dwarf_member(d, a, p, ti, e) : kvs_dwarf_variable(d, a, ti, e);
}

/* One question to both: the same status, and when found the same answer
 * in every field.  Returns 1 if found. */
static int
compare(struct opened *o, const char *bin, enum q q, const char *a, const char *p)
{
	struct kvs_typeinfo bt, dw;
	struct kvs_error be, de;
	char bs[1500], ds[1500];
	int brc = ask_btf(o->b, q, a, p, &bt, &be);
	int drc = ask_dwarf(o->d, q, a, p, &dw, &de);
	bool same = brc == drc && be.status == de.status;

	if (same && brc == 0)
		same = bt.offset == dw.offset && bt.size == dw.size &&
		    bt.kind == dw.kind && bt.count == dw.count &&
		    bt.elem_size == dw.elem_size && bt.elem_kind == dw.elem_kind &&
		    bt.bit_size == dw.bit_size && bt.bit_offset == dw.bit_offset &&
		    same_spelling(dw.type_name, bt.type_name, false);
	if (!same) {
		describe(bs, sizeof(bs), brc, &bt, &be);
		describe(ds, sizeof(ds), drc, &dw, &de);
	}
	ck_assert_msg(same, "%s: %s%s%s:\n  BTF   %s\n  DWARF %s", bin, a,
	    p ? " " : "", p ? p : "", bs, ds);
	/* Member errors read the same whichever answered (but for the name
	 * of the debug information). */
	if (brc != 0 && q == Q_MEMBER) {
		char want[KVS_MSG_MAX + 8];
		const char *w = strstr(be.msg, " in BTF");
		if (w != NULL)
			snprintf(want, sizeof(want), "%.*s in DWARF%s",
			    (int)(w - be.msg), be.msg, w + 7);
		else
			snprintf(want, sizeof(want), "%s", be.msg);
		ck_assert_str_eq(want, de.msg);
	}
	return brc == 0;
}

static const struct btf_type *
raw_peel(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	int n = 0;

	while (t != NULL && n++ < 32 && (btf_is_mod(t) || btf_is_typedef(t)))
		t = btf__type_by_id(btf, t->type);
	return t;
}

/* Every member path of t (anonymous members' by their own names, named
 * structs and unions descended into), compared.  Returns the count. */
static int
compare_members(struct opened *o, const char *bin, const char *type,
    const struct btf_type *t, const char *prefix, int depth)
{
	const struct btf_member *m = btf_members(t);
	unsigned i;
	int n = 0;

	ck_assert_int_lt(depth, 8);
	for (i = 0; i < btf_vlen(t); i++) {
		const char *nm = btf__name_by_offset(o->raw, m[i].name_off);
		const struct btf_type *mt = raw_peel(o->raw, m[i].type);
		char path[512];

		if (nm == NULL || nm[0] == '\0') {
			if (mt != NULL && btf_is_composite(mt))
				n += compare_members(o, bin, type, mt, prefix, depth + 1);
			continue;
		}
		snprintf(path, sizeof(path), "%s%s", prefix, nm);
		ck_assert_msg(compare(o, bin, Q_MEMBER, type, path), "%s: %s %s not "
		    "found", bin, type, path);
		n++;
		if (mt != NULL && btf_is_composite(mt)) {
			char sub[520];
			snprintf(sub, sizeof(sub), "%s.", path);
			n += compare_members(o, bin, type, mt, sub, depth + 1);
		}
	}
	return n;
}

static const char *const structs[] = { BT_STRUCTS };

/* Which of the handle's type providers have been opened. */
static bool
used(kvs_t *kd, const char *what)
{
	bool btf, tried, dwarf;

	kvs_types_used(kd->types, &btf, &tried, &dwarf);
	return strcmp(what, "btf") == 0 ? btf : strcmp(what, "dwarf") == 0 ? dwarf : tried;
}

/* ------------------------------------------------- BTF equals DWARF */

START_TEST(btf_answers_as_dwarf)
{
	static const char *const names[] = {
		/* typedefs, base types, tags, bare tags, enums */
		"u_long", "my_ulong", "cv_ulong", "row_t", "outer_t", "handler_t",
		"int", "unsigned int", "char", "long int", "long unsigned int",
		"_Bool", "float", "double", "uint64_t", "size_t",
		"union uu", "enum color", "enum wide", "stats", "outer", " struct  later",
		/* not found, or declared only: KVS_E_NOTYPE from both */
		"struct fwd", "fwd", "struct nosuch", "nosuch", "struct outer_t",
		"union stats", "enum stats", "void",
	};
	static const char *const paths[][2] = {
		/* dotted paths through anonymous members, and failing ones */
		{ "struct outer", "nest.q" }, { "struct outer", "nest.r" },
		{ "struct outer", "s2" }, { "struct outer", "hi" },
		{ "struct outer", "bf.spill" }, { "struct outer", "list.next" },
		{ "outer_t", "st.frees" }, { "union uu", "pair.b" },
		{ "struct outer", "nosuch" }, { "struct outer", "st.nosuch" },
		{ "struct outer", "x.y" }, { "struct outer", "sp.allocs" },
		{ "struct outer", "fwdp" }, { "struct fwd", "x" },
		{ "struct nosuch", "x" },
	};
	const char *bin = bins[_i];
	struct opened o;
	int i, n = 0, nvar = 0;
	__u32 id, cnt;

	open_bin(bin, &o);
	for (i = 0; i < (int)(sizeof(structs) / sizeof(structs[0])); i++) {
		char type[128];
		__s32 sid = btf__find_by_name_kind(o.raw, structs[i], BTF_KIND_STRUCT);

		ck_assert_msg(sid > 0, "%s: no struct %s in BTF", bin, structs[i]);
		snprintf(type, sizeof(type), "struct %s", structs[i]);
		ck_assert(compare(&o, bin, Q_TYPE, type, NULL));
		n += compare_members(&o, bin, type, btf__type_by_id(o.raw, (__u32)sid),
		    "", 0);
	}
	ck_assert(compare(&o, bin, Q_TYPE, "union uu", NULL));
	n += compare_members(&o, bin, "union uu", btf__type_by_id(o.raw,
	    (__u32)btf__find_by_name_kind(o.raw, "uu", BTF_KIND_UNION)), "", 0);
	ck_assert_int_gt(n, 80);
	for (i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		compare(&o, bin, Q_TYPE, names[i], NULL);
	for (i = 0; i < (int)(sizeof(paths) / sizeof(paths[0])); i++)
		compare(&o, bin, Q_MEMBER, paths[i][0], paths[i][1]);

	/* Every BTF variable, as DWARF has it. */
	cnt = btf__type_cnt(o.raw);
	for (id = 1; id < cnt; id++) {
		const struct btf_type *t = btf__type_by_id(o.raw, id);
		if (btf_is_var(t)) {
			ck_assert(compare(&o, bin, Q_VAR,
			    btf__name_by_offset(o.raw, t->name_off), NULL));
			nvar++;
		}
	}
	/* pahole: the per-CPU ones only, as in a kernel; gcc: every global. */
	ck_assert_int_ge(nvar, 2);
	if (strcmp(bin, "t.gcc") == 0)
		ck_assert_int_ge(nvar, 10);
	else
		ck_assert_int_eq(nvar, 2);
	close_bin(&o);
}
END_TEST

/* ----------------------------------------- BTF matches the compiler */

#define SZ(T, P) sizeof(((T *)0)->P)
#define LAY(T, P) { #T, #P, offsetof(T, P), SZ(T, P) }
#define LAYF(T, P) { #T, #P, offsetof(T, P), 0 } /* flexible: no sizeof */

static const struct { const char *type, *path; size_t off, size; } lays[] = {
	LAY(struct outer, x), LAY(struct outer, st), LAY(struct outer, st.frees),
	LAY(struct outer, nest), LAY(struct outer, nest.p), LAY(struct outer, nest.q),
	LAY(struct outer, nest.r), LAY(struct outer, u_i), LAY(struct outer, s1),
	LAY(struct outer, s2), LAY(struct outer, bf), LAY(struct outer, bf.after),
	LAY(struct outer, grid), LAY(struct outer, cube), LAY(struct outer, rows),
	LAY(struct outer, sp), LAY(struct outer, vp), LAY(struct outer, name),
	LAY(struct outer, cp), LAY(struct outer, argv), LAY(struct outer, cvl),
	LAY(struct outer, chain), LAY(struct outer, fn), LAY(struct outer, cb),
	LAY(struct outer, vfn), LAY(struct outer, handler), LAY(struct outer, fwdp),
	LAY(struct outer, laterp), LAY(struct outer, next), LAY(struct outer, list),
	LAY(struct outer, list.prev), LAY(struct outer, heads), LAY(struct outer, color),
	LAY(struct outer, wide), LAY(struct outer, f), LAY(struct outer, d),
	LAY(struct outer, flag), LAY(struct outer, ptrs), LAY(struct outer, fnarr),
	LAY(struct outer, parr), LAY(struct outer, nflex), LAYF(struct outer, flex),
	LAY(union uu, c), LAY(union uu, pair.b), LAYF(struct with_flex_char, data),
	LAY(struct zero_len, zero), LAY(struct pcpu_stats, misses),
	LAY(struct later, o),
};

static const struct { const char *type; size_t size; } tsizes[] = {
	{ "struct outer", sizeof(struct outer) }, { "struct bits", sizeof(struct bits) },
	{ "union uu", sizeof(union uu) }, { "outer_t", sizeof(outer_t) },
	{ "row_t", sizeof(row_t) }, { "enum wide", sizeof(enum wide) },
	{ "enum color", sizeof(enum color) }, { "cv_ulong", sizeof(cv_ulong) },
	{ "handler_t", sizeof(handler_t) }, { "struct zero_len", sizeof(struct zero_len) },
};

/* Where the compiler put a bit-field: the struct filled with zeroes, the
 * field with ones, the first and last bits that changed. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverflow"
#pragma GCC diagnostic ignored "-Wconversion"
#define PROBE(S, F, SETV) do { \
	S s_; \
	memset(&s_, 0, sizeof(s_)); \
	s_.F = SETV; \
	probe_bits(#S, #F, &s_, sizeof(s_), out, &n); \
} while (0)

struct bitpos { const char *type, *path; unsigned first, width; };

static void
probe_bits(const char *type, const char *path, const void *p, size_t len,
    struct bitpos *out, int *n)
{
	const uint8_t *b = p;
	unsigned first = ~0u, last = 0, i;

	for (i = 0; i < len * 8; i++)
		if (b[i / 8] & (1u << (i % 8))) {
			if (first == ~0u)
				first = i;
			last = i;
		}
	ck_assert_uint_ne(first, ~0u);
	out[*n].type = type;
	out[*n].path = path;
	out[*n].first = first;
	out[*n].width = last - first + 1;
	(*n)++;
}

static int
bit_truth(struct bitpos *out)
{
	int n = 0;

	PROBE(struct bits, a, 7);
	PROBE(struct bits, b, 127);
	PROBE(struct bits, c, 0x3fffff);
	PROBE(struct bits, d, 0xffffffffffUL);
	PROBE(struct bits, e, 1);
	PROBE(struct bits, f, -1);
	PROBE(struct bits, spill, 0xfff);
	PROBE(struct bits, flag, 1);
	PROBE(struct bits, col, 15);
	PROBE(struct bits, full, ~0ULL);
	PROBE(struct outer, lo, 15);
	PROBE(struct outer, hi, 15);
	PROBE(struct outer, bf.c, 0x3fffff);
	return n;
}
#pragma GCC diagnostic pop

START_TEST(btf_matches_compiler)
{
	const char *bin = bins[_i];
	struct bitpos bp[32];
	struct kvs_typeinfo ti;
	struct opened o;
	int i, nb;

	open_bin(bin, &o);
	for (i = 0; i < (int)(sizeof(lays) / sizeof(lays[0])); i++) {
		ck_assert_msg(kvs_btf_member(o.b, lays[i].type, lays[i].path, &ti,
		    &o.e) == 0, "%s: %s.%s: %s", bin, lays[i].type, lays[i].path, o.e.msg);
		ck_assert_msg(ti.offset == lays[i].off && ti.size == lays[i].size,
		    "%s: %s.%s at %llu size %llu, compiler %zu size %zu", bin,
		    lays[i].type, lays[i].path, (unsigned long long)ti.offset,
		    (unsigned long long)ti.size, lays[i].off, lays[i].size);
		ck_assert_uint_eq(ti.bit_size, 0);
	}
	for (i = 0; i < (int)(sizeof(tsizes) / sizeof(tsizes[0])); i++) {
		ck_assert_msg(kvs_btf_type(o.b, tsizes[i].type, &ti, &o.e) == 0, "%s: %s",
		    bin, o.e.msg);
		ck_assert_msg(ti.size == tsizes[i].size, "%s: sizeof(%s) %llu, compiler "
		    "%zu", bin, tsizes[i].type, (unsigned long long)ti.size, tsizes[i].size);
	}
	nb = bit_truth(bp);
	for (i = 0; i < nb; i++) {
		ck_assert_msg(kvs_btf_member(o.b, bp[i].type, bp[i].path, &ti, &o.e) == 0,
		    "%s: %s.%s: %s", bin, bp[i].type, bp[i].path, o.e.msg);
		/* A bit-field filling whole aligned bytes may be described as
		 * a plain member (clang: no DW_AT_bit_size for "full : 64"). */
		if (ti.bit_size == 0)
			ck_assert_msg(ti.offset * 8 == bp[i].first && ti.size * 8 ==
			    bp[i].width, "%s: %s.%s at %llu size %llu, compiler bit %u "
			    "width %u", bin, bp[i].type, bp[i].path,
			    (unsigned long long)ti.offset, (unsigned long long)ti.size,
			    bp[i].first, bp[i].width);
		else
			ck_assert_msg(ti.offset * 8 + ti.bit_offset == bp[i].first &&
			    ti.bit_size == bp[i].width, "%s: %s.%s at bit %llu+%u width "
			    "%u, compiler bit %u width %u", bin, bp[i].type, bp[i].path,
			    (unsigned long long)ti.offset, ti.bit_offset, ti.bit_size,
			    bp[i].first, bp[i].width);
		ck_assert_uint_lt(ti.bit_offset, 8);
		if (ti.bit_size != 0)
			ck_assert_uint_eq(ti.size, (ti.bit_offset + ti.bit_size + 7) / 8);
	}
	close_bin(&o);
}
END_TEST

/* ------------------------------------------- kinds, counts, spellings */

struct mexp {
	const char *type, *path;
	kvs_kind_t kind;
	uint64_t count, elem_size;
	kvs_kind_t elem_kind;
	const char *type_name;
};

/* From shapes.h.  Spellings are dwarf.c's (and so C's); a NULL name is
 * one that depends on the encoder (multi-dimensional arrays). */
static const struct mexp mexps[] = {
	{ "struct outer", "x", KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "int" },
	{ "struct outer", "st", KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "struct stats" },
	{ "struct outer", "st.frees", KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "uint64_t" },
	{ "struct outer", "nest.r", KVS_KIND_ARRAY, 3, 1, KVS_KIND_BASE, "char [3]" },
	{ "struct outer", "grid", KVS_KIND_ARRAY, 15, 4, KVS_KIND_BASE, NULL },
	{ "struct outer", "cube", KVS_KIND_ARRAY, 24, 1, KVS_KIND_BASE, NULL },
	{ "struct outer", "rows", KVS_KIND_ARRAY, 0, 0, KVS_KIND_OTHER, NULL },
	{ "struct outer", "sp", KVS_KIND_POINTER, 0, 16, KVS_KIND_STRUCT, "struct stats *" },
	{ "struct outer", "vp", KVS_KIND_POINTER, 0, 0, KVS_KIND_VOID, "void *" },
	{ "struct outer", "name", KVS_KIND_POINTER, 0, 1, KVS_KIND_BASE, "const char *" },
	{ "struct outer", "cp", KVS_KIND_POINTER, 0, 1, KVS_KIND_BASE, "char *const" },
	{ "struct outer", "argv", KVS_KIND_POINTER, 0, 8, KVS_KIND_POINTER,
	    "const char *const *" },
	{ "struct outer", "chain", KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "my_ulong" },
	{ "struct outer", "fn", KVS_KIND_POINTER, 0, 0, KVS_KIND_FUNCTION,
	    "int (*)(int, const char *)" },
	{ "struct outer", "cb", KVS_KIND_POINTER, 0, 0, KVS_KIND_FUNCTION, "void (*)(void)" },
	{ "struct outer", "vfn", KVS_KIND_POINTER, 0, 0, KVS_KIND_FUNCTION,
	    "int (*)(const char *, ...)" },
	{ "struct outer", "handler", KVS_KIND_POINTER, 0, 0, KVS_KIND_FUNCTION, "handler_t" },
	/* declared only: a struct of unknown size */
	{ "struct outer", "fwdp", KVS_KIND_POINTER, 0, 0, KVS_KIND_STRUCT, "struct fwd *" },
	{ "struct outer", "laterp", KVS_KIND_POINTER, 0, 16, KVS_KIND_STRUCT, "struct later *" },
	{ "struct outer", "next", KVS_KIND_POINTER, 0, sizeof(struct outer), KVS_KIND_STRUCT,
	    "struct outer *" },
	{ "struct outer", "heads", KVS_KIND_ARRAY, 4, 16, KVS_KIND_STRUCT,
	    "struct list_head [4]" },
	{ "struct outer", "color", KVS_KIND_ENUM, 0, 0, KVS_KIND_OTHER, "enum color" },
	{ "struct outer", "wide", KVS_KIND_ENUM, 0, 0, KVS_KIND_OTHER, "enum wide" },
	{ "struct outer", "d", KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "double" },
	{ "struct outer", "flag", KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "_Bool" },
	{ "struct outer", "ptrs", KVS_KIND_ARRAY, 2, 8, KVS_KIND_POINTER, "struct stats *[2]" },
	{ "struct outer", "fnarr", KVS_KIND_ARRAY, 2, 8, KVS_KIND_POINTER, "int (*[2])(void)" },
	{ "struct outer", "parr", KVS_KIND_POINTER, 0, 8, KVS_KIND_ARRAY, "char (*)[8]" },
	{ "struct outer", "flex", KVS_KIND_ARRAY, 0, 16, KVS_KIND_STRUCT, "struct stats []" },
	{ "struct outer", "bf.col", KVS_KIND_ENUM, 0, 0, KVS_KIND_OTHER, "enum color" },
	{ "struct with_flex_char", "data", KVS_KIND_ARRAY, 0, 1, KVS_KIND_BASE, "char []" },
	/* BTF: "int []" (nelems 0), DWARF: "int [0]" */
	{ "struct zero_len", "zero", KVS_KIND_ARRAY, 0, 4, KVS_KIND_BASE, "int []" },
	{ "union uu", "pair", KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "struct <anonymous>" },
	{ "outer_t", "nest", KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "struct <anonymous>" },
	/* types */
	{ "row_t", NULL, KVS_KIND_ARRAY, 4, 4, KVS_KIND_BASE, "row_t" },
	{ "cv_ulong", NULL, KVS_KIND_BASE, 0, 0, KVS_KIND_OTHER, "cv_ulong" },
	{ "outer_t", NULL, KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "outer_t" },
	{ "stats", NULL, KVS_KIND_STRUCT, 0, 0, KVS_KIND_OTHER, "struct stats" },
	{ "union uu", NULL, KVS_KIND_UNION, 0, 0, KVS_KIND_OTHER, "union uu" },
	{ "enum color", NULL, KVS_KIND_ENUM, 0, 0, KVS_KIND_OTHER, "enum color" },
	{ "handler_t", NULL, KVS_KIND_POINTER, 0, 0, KVS_KIND_FUNCTION, "handler_t" },
};

START_TEST(kinds_counts_names)
{
	const char *bin = bins[_i];
	struct kvs_typeinfo ti;
	struct opened o;
	size_t i;

	open_bin(bin, &o);
	for (i = 0; i < sizeof(mexps) / sizeof(mexps[0]); i++) {
		const struct mexp *x = &mexps[i];
		int rc = x->path != NULL ? kvs_btf_member(o.b, x->type, x->path, &ti, &o.e) :
		    kvs_btf_type(o.b, x->type, &ti, &o.e);

		ck_assert_msg(rc == 0, "%s: %s %s: %s", bin, x->type, x->path, o.e.msg);
		ck_assert_msg(ti.kind == x->kind, "%s: %s %s: kind %d", bin, x->type,
		    x->path, ti.kind);
		if (strcmp(x->path ? x->path : "", "rows") == 0) {
			/* row_t rows[2]: gcc flattens it to int [2][4], clang keeps
			 * the typedef (row_t [2]); both describe 32 bytes. */
			ck_assert_uint_eq(ti.size, 32);
			ck_assert(ti.count == 8 || (ti.count == 2 && ti.elem_size == 16));
			continue;
		}
		ck_assert_msg(ti.count == x->count && ti.elem_size == x->elem_size &&
		    ti.elem_kind == x->elem_kind, "%s: %s %s: count %llu elem %llu/%d", bin,
		    x->type, x->path, (unsigned long long)ti.count,
		    (unsigned long long)ti.elem_size, ti.elem_kind);
		if (x->type_name != NULL)
			ck_assert_msg(strcmp(ti.type_name, x->type_name) == 0,
			    "%s: %s %s: \"%s\", want \"%s\"", bin, x->type, x->path,
			    ti.type_name, x->type_name);
	}
	/* Multi-dimensional arrays: as C says, or as the encoder kept them. */
	ck_assert_int_eq(kvs_btf_member(o.b, "struct outer", "grid", &ti, &o.e), 0);
	if (strcmp(bin, "t.gcc") == 0)
		ck_assert_str_eq(ti.type_name, "int [5][3]"); /* gcc 12: reversed */
	else
		ck_assert_str_eq(ti.type_name, "int [15]");   /* pahole: one dimension */
	ck_assert_uint_eq(ti.size, 60);
	close_bin(&o);
}
END_TEST

START_TEST(strings_interned)
{
	struct kvs_typeinfo a, b;
	struct opened o;
	int i;

	open_bin(bins[_i], &o);
	ck_assert_int_eq(kvs_btf_member(o.b, "struct outer", "st.frees", &a, &o.e), 0);
	for (i = 0; i < 1000; i++) {
		ck_assert_int_eq(kvs_btf_member(o.b, "struct outer", "st.frees", &b, &o.e), 0);
		ck_assert_mem_eq(&a, &b, sizeof(a));
	}
	/* One pointer per spelling, valid until close. */
	ck_assert_int_eq(kvs_btf_member(o.b, "struct outer", "st", &a, &o.e), 0);
	ck_assert_int_eq(kvs_btf_type(o.b, "struct stats", &b, &o.e), 0);
	ck_assert_ptr_eq(a.type_name, b.type_name);
	ck_assert_str_eq(a.type_name, "struct stats");
	close_bin(&o);
}
END_TEST

/* ------------------------------------------------------------ errors */

START_TEST(errors_name_what_is_missing)
{
	struct kvs_typeinfo ti;
	struct opened o;
	int round;

	open_bin(bins[_i], &o);
	for (round = 0; round < 2; round++) {
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_btf_type(o.b, "struct nosuch", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		ck_assert_ptr_nonnull(strstr(o.e.msg, "struct nosuch"));
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_btf_type(o.b, "struct fwd", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		ck_assert_ptr_nonnull(strstr(o.e.msg, "declared but never defined"));
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_btf_member(o.b, "struct outer", "nosuch", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		ck_assert_str_eq(o.e.msg, "struct outer has no member \"nosuch\"");
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_btf_member(o.b, "struct outer", "st.nosuch", &ti,
		    &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		ck_assert_str_eq(o.e.msg, "struct outer has no member \"st.nosuch\": "
		    "no \"nosuch\" in st");
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_btf_member(o.b, "struct outer", "sp.allocs", &ti,
		    &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		ck_assert_str_eq(o.e.msg, "struct outer has no member \"sp.allocs\": "
		    "sp is not a struct or union");
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_btf_member(o.b, "struct outer", "st..a", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_INVAL);
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_btf_member(o.b, "struct outer", "", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_INVAL);
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_btf_member(o.b, NULL, "x", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_INVAL);
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_btf_variable(o.b, "no_such_var", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		ck_assert_ptr_nonnull(strstr(o.e.msg, "no_such_var"));
		/* Tag and typedef namespaces stay apart. */
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_btf_type(o.b, "struct outer_t", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
		kerr_clear(&o.e);
		ck_assert_int_eq(kvs_btf_type(o.b, "union stats", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
	}
	/* A non-per-CPU global: in gcc's BTF, not in pahole's (as in a kernel). */
	kerr_clear(&o.e);
	if (strcmp(bins[_i], "t.gcc") == 0)
		ck_assert_int_eq(kvs_btf_variable(o.b, "g_outer", &ti, &o.e), 0);
	else {
		ck_assert_int_eq(kvs_btf_variable(o.b, "g_outer", &ti, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
	}
	kerr_clear(&o.e);
	ck_assert_int_eq(kvs_btf_variable(o.b, "pcpu_stats_var", &ti, &o.e), 0);
	ck_assert_str_eq(ti.type_name, "struct pcpu_stats");
	ck_assert_uint_eq(ti.size, sizeof(struct pcpu_stats));
	ck_assert_int_eq(kvs_btf_variable(o.b, "pcpu_counter", &ti, &o.e), 0);
	ck_assert_int_eq(ti.kind, KVS_KIND_ARRAY);
	ck_assert_uint_eq(ti.count, 8);
	ck_assert_uint_eq(ti.offset, 0);
	close_bin(&o);
}
END_TEST

/* ------------------------------------------------- opening, not opening */

/* The bytes of path's .BTF section, malloc'ed. */
static void *
section_bytes(const char *path, size_t *len)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	void *out = NULL;
	Elf *elf;
	int fd;

	ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
		if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".BTF") != 0)
			continue;
		d = elf_getdata(scn, NULL);
		ck_assert_ptr_nonnull(d);
		out = malloc(d->d_size);
		ck_assert_ptr_nonnull(out);
		memcpy(out, d->d_buf, d->d_size);
		*len = d->d_size;
	}
	elf_end(elf);
	close(fd);
	ck_assert_ptr_nonnull(out);
	return out;
}

/* BTF read from memory (as from a dump's __start_BTF) answers as the
 * section does; the bytes may go away after opening. */
START_TEST(open_mem_as_elf)
{
	const char *bin = bins[_i];
	struct kvs_typeinfo a, b;
	struct kvs_btf *m;
	struct opened o;
	size_t len, i;
	void *buf = section_bytes(test_input(bin), &len);

	open_bin(bin, &o);
	ck_assert_int_eq(kvs_btf_open_mem(&m, buf, len, &o.e), 0);
	memset(buf, 0xff, len);
	free(buf);
	for (i = 0; i < sizeof(mexps) / sizeof(mexps[0]); i++) {
		const struct mexp *x = &mexps[i];
		if (x->path == NULL) {
			ck_assert_int_eq(kvs_btf_type(o.b, x->type, &a, &o.e), 0);
			ck_assert_int_eq(kvs_btf_type(m, x->type, &b, &o.e), 0);
		} else {
			ck_assert_int_eq(kvs_btf_member(o.b, x->type, x->path, &a, &o.e), 0);
			ck_assert_int_eq(kvs_btf_member(m, x->type, x->path, &b, &o.e), 0);
		}
		ck_assert_str_eq(a.type_name, b.type_name);
		a.type_name = b.type_name = NULL;
		ck_assert_mem_eq(&a, &b, sizeof(a));
	}
	kvs_btf_close(m);
	close_bin(&o);
}
END_TEST

START_TEST(no_btf_section)
{
	struct kvs_btf *b = (struct kvs_btf *)&b;
	struct kvs_error e;
	char path[4096];
	Elf *elf;
	int fd;

	/* A DWARF-only binary (the DWARF tests' input). */
	snprintf(path, sizeof(path), "%s/fixtures/dwarf-test/t.dwarf4",
	    getenv("KVS_SRCDIR") ? getenv("KVS_SRCDIR") : ".");
	ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
	fd = open(path, O_RDONLY);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ck_assert_ptr_nonnull(elf);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_btf_open_elf(&b, elf, &e), 1);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(e.status, KVS_OK);
	elf_end(elf);
	close(fd);
	kvs_btf_close(NULL);
	/* Not BTF at all. */
	ck_assert_int_eq(kvs_btf_open_mem(&b, "not BTF, not at all", 20, &e), -1);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(e.status, KVS_E_DWARF);
	ck_assert_ptr_nonnull(strstr(e.msg, "BTF"));
	kerr_clear(&e);
	ck_assert_int_eq(kvs_btf_open_mem(&b, NULL, 0, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_INVAL);
}
END_TEST

/* Damaged BTF: opening fails with a message, or every query succeeds or
 * fails with one; never a crash or a leak (ASan).  Positions spread over
 * the section, several byte values. */
START_TEST(corrupt_btf)
{
	static const uint8_t vals[] = { 0xff, 0x00, 0x7f, 0x13 };
	size_t len, i, pos;
	uint8_t *buf = section_bytes(test_input("t.pahole"), &len);
	struct kvs_typeinfo ti;
	struct kvs_error e;
	struct kvs_btf *b;

	pos = 24 + (len - 24 - 4) * (size_t)(_i / 4) / 16;
	memset(buf + pos, vals[_i % 4], 4);
	kerr_clear(&e);
	if (kvs_btf_open_mem(&b, buf, len, &e) != 0) {
		ck_assert_int_eq(e.status, KVS_E_DWARF);
		ck_assert_uint_gt(strlen(e.msg), 0);
		free(buf);
		return;
	}
	for (i = 0; i < sizeof(mexps) / sizeof(mexps[0]); i++) {
		int rc;
		kerr_clear(&e);
		rc = mexps[i].path != NULL ? kvs_btf_member(b, mexps[i].type,
		    mexps[i].path, &ti, &e) : kvs_btf_type(b, mexps[i].type, &ti, &e);
		if (rc != 0) {
			ck_assert_msg(e.status == KVS_E_NOTYPE || e.status == KVS_E_DWARF,
			    "status %d: %s", e.status, e.msg);
			ck_assert_uint_gt(strlen(e.msg), 0);
		} else
			ck_assert_ptr_nonnull(ti.type_name);
	}
	kerr_clear(&e);
	(void)kvs_btf_variable(b, "pcpu_stats_var", &ti, &e);
	kvs_btf_close(b);
	free(buf);
}
END_TEST

/* Type graphs libbpf accepts but no compiler writes: cycles, references
 * past the last type. */
START_TEST(cycles_and_bad_ids)
{
	struct btf *w = btf__new_empty();
	struct kvs_typeinfo ti;
	struct kvs_error e;
	struct kvs_btf *b;
	const void *raw;
	__u32 rawlen;
	int i_int, s;

	ck_assert_ptr_nonnull(w);
	i_int = btf__add_int(w, "int", 4, BTF_INT_SIGNED);      /* 1 */
	ck_assert_int_eq(i_int, 1);
	ck_assert_int_eq(btf__add_typedef(w, "loop_a", 3), 2);  /* 2 -> 3 */
	ck_assert_int_eq(btf__add_typedef(w, "loop_b", 2), 3);  /* 3 -> 2 */
	ck_assert_int_eq(btf__add_ptr(w, 4), 4);                /* 4 -> 4 */
	ck_assert_int_eq(btf__add_typedef(w, "far", 999), 5);   /* past the end */
	s = btf__add_struct(w, "bad", 16);                      /* 6 */
	ck_assert_int_eq(s, 6);
	ck_assert_int_eq(btf__add_field(w, "a", 2, 0, 0), 0);
	ck_assert_int_eq(btf__add_field(w, "p", 4, 64, 0), 0);
	ck_assert_int_eq(btf__add_field(w, "f", 5, 96, 0), 0);
	ck_assert_int_eq(btf__add_field(w, "ok", 1, 32, 0), 0);
	ck_assert_int_eq(btf__add_array(w, 1, 6, 3), 7);        /* index type: a struct */
	ck_assert_int_eq(btf__add_fwd(w, "gone", BTF_FWD_UNION), 8);
	ck_assert_int_eq(btf__add_typedef(w, "gone_t", 8), 9);
	raw = btf__raw_data(w, &rawlen);
	ck_assert_ptr_nonnull(raw);
	kerr_clear(&e);
	if (kvs_btf_open_mem(&b, raw, rawlen, &e) != 0) {
		/* A stricter libbpf may refuse it; that is an answer too. */
		ck_assert_int_eq(e.status, KVS_E_DWARF);
		btf__free(w);
		return;
	}
	btf__free(w);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_btf_type(b, "loop_a", &ti, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_DWARF);
	ck_assert_ptr_nonnull(strstr(e.msg, "cycle"));
	kerr_clear(&e);
	ck_assert_int_eq(kvs_btf_type(b, "far", &ti, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_DWARF);
	ck_assert_ptr_nonnull(strstr(e.msg, "out of range"));
	kerr_clear(&e);
	ck_assert_int_eq(kvs_btf_member(b, "struct bad", "a", &ti, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_DWARF);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_btf_member(b, "struct bad", "p", &ti, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_DWARF);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_btf_member(b, "struct bad", "f", &ti, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_DWARF);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_btf_member(b, "struct bad", "ok", &ti, &e), 0);
	ck_assert_uint_eq(ti.offset, 4);
	ck_assert_str_eq(ti.type_name, "int");
	/* A union declared, never defined: no size, no members. */
	ck_assert_int_eq(kvs_btf_type(b, "gone_t", &ti, &e), 0);
	ck_assert_int_eq(ti.kind, KVS_KIND_UNION);
	ck_assert_uint_eq(ti.size, 0);
	ck_assert_str_eq(ti.type_name, "gone_t");
	kerr_clear(&e);
	ck_assert_int_eq(kvs_btf_member(b, "gone_t", "x", &ti, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTYPE);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_btf_type(b, "union gone", &ti, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTYPE);
	ck_assert_ptr_nonnull(strstr(e.msg, "declared but never defined"));
	kvs_btf_close(b);
}
END_TEST

/*
 * BTF written by hand, as the BTF format document lays it out, for what the
 * fixtures' encoders never write:
 *   - the legacy bit-field encoding (struct kflag 0): the member's type is
 *     an INT whose encoding gives the width and a bit offset that adds to
 *     the member's.  struct lg holds shapes.h's struct bits a, b, c at the
 *     positions this file's compiler gives them (bit_truth): a with a plain
 *     offset, b with its offset split between member and INT, c with its
 *     whole offset in the INT;
 *   - a pointer to a declaration (FWD) whose definition comes later: the
 *     element is the definition (24 bytes here);
 *   - a struct declared, never defined, as the very last type.
 */
struct rawbtf {
	uint8_t buf[1024];
	size_t tlen;          /* type bytes, after the 24-byte header */
	char str[256];
	size_t slen;
};

static uint32_t
rb_str(struct rawbtf *r, const char *s)
{
	uint32_t off = (uint32_t)r->slen;

	if (s == NULL || *s == '\0')
		return 0;
	ck_assert_uint_lt(r->slen + strlen(s) + 1, sizeof(r->str));
	memcpy(r->str + r->slen, s, strlen(s) + 1);
	r->slen += strlen(s) + 1;
	return off;
}

static void
rb_u32(struct rawbtf *r, uint32_t v)
{
	ck_assert_uint_lt(24 + r->tlen + 4, sizeof(r->buf) - sizeof(r->str));
	memcpy(r->buf + 24 + r->tlen, &v, 4);
	r->tlen += 4;
}

/* A type record: name, kind, kflag, vlen, size or type. */
static void
rb_type(struct rawbtf *r, const char *name, unsigned kind, unsigned kflag,
    unsigned vlen, uint32_t size_or_type)
{
	rb_u32(r, rb_str(r, name));
	rb_u32(r, (uint32_t)kflag << 31 | (uint32_t)kind << 24 | vlen);
	rb_u32(r, size_or_type);
}

static size_t
rb_finish(struct rawbtf *r)
{
	uint32_t hdr[6];
	uint16_t magic = 0xeB9F;

	memcpy(r->buf, &magic, 2);
	r->buf[2] = 1;          /* version */
	r->buf[3] = 0;          /* flags */
	hdr[1] = 24;            /* hdr_len */
	hdr[2] = 0;             /* type_off */
	hdr[3] = (uint32_t)r->tlen;
	hdr[4] = (uint32_t)r->tlen;  /* str_off */
	hdr[5] = (uint32_t)r->slen;
	memcpy(r->buf + 4, &hdr[1], 20);
	memcpy(r->buf + 24 + r->tlen, r->str, r->slen);
	return 24 + r->tlen + r->slen;
}

START_TEST(legacy_bitfields_and_declarations)
{
	struct bitpos bp[32];
	int nbp = bit_truth(bp), i, k;
	unsigned first[3] = { 0, 0, 0 }, width[3] = { 0, 0, 0 };
	static const char *const f[3] = { "a", "b", "c" };
	struct rawbtf r;
	struct kvs_btf *b;
	struct kvs_typeinfo ti;
	struct kvs_error e;
	size_t len;

	for (k = 0; k < 3; k++) {
		for (i = 0; i < nbp; i++)
			if (strcmp(bp[i].type, "struct bits") == 0 && strcmp(bp[i].path, f[k]) == 0) {
				first[k] = bp[i].first;
				width[k] = bp[i].width;
			}
		ck_assert_uint_ne(width[k], 0);
	}
	/* b's offset is split: 2 bits in its INT, the rest in the member */
	ck_assert_uint_ge(first[1], 2);
	memset(&r, 0, sizeof(r));
	r.slen = 1;             /* offset 0: the empty name */
	rb_type(&r, "unsigned int", BTF_KIND_INT, 0, 0, 4);        /* 1 */
	rb_u32(&r, 32);
	rb_type(&r, "unsigned int", BTF_KIND_INT, 0, 0, 4);        /* 2: a */
	rb_u32(&r, width[0]);
	rb_type(&r, "unsigned int", BTF_KIND_INT, 0, 0, 4);        /* 3: b */
	rb_u32(&r, 2u << 16 | width[1]);
	rb_type(&r, "unsigned int", BTF_KIND_INT, 0, 0, 4);        /* 4: c */
	rb_u32(&r, first[2] << 16 | width[2]);
	rb_type(&r, "lg", BTF_KIND_STRUCT, 0, 3, 4);               /* 5 */
	rb_u32(&r, rb_str(&r, "a")); rb_u32(&r, 2); rb_u32(&r, first[0]);
	rb_u32(&r, rb_str(&r, "b")); rb_u32(&r, 3); rb_u32(&r, first[1] - 2);
	rb_u32(&r, rb_str(&r, "c")); rb_u32(&r, 4); rb_u32(&r, 0);
	rb_type(&r, NULL, BTF_KIND_PTR, 0, 0, 7);                  /* 6 */
	rb_type(&r, "later", BTF_KIND_FWD, 0, 0, 0);               /* 7 */
	rb_type(&r, "holder", BTF_KIND_STRUCT, 0, 1, 8);           /* 8 */
	rb_u32(&r, rb_str(&r, "p")); rb_u32(&r, 6); rb_u32(&r, 0);
	rb_type(&r, "later", BTF_KIND_STRUCT, 0, 1, 24);           /* 9 */
	rb_u32(&r, rb_str(&r, "x")); rb_u32(&r, 1); rb_u32(&r, 128);
	rb_type(&r, "only_decl", BTF_KIND_FWD, 0, 0, 0);           /* 10, last */
	len = rb_finish(&r);

	kerr_clear(&e);
	ck_assert_msg(kvs_btf_open_mem(&b, r.buf, len, &e) == 0, "%s", e.msg);
	for (k = 0; k < 3; k++) {
		kerr_clear(&e);
		ck_assert_msg(kvs_btf_member(b, "struct lg", f[k], &ti, &e) == 0, "%s", e.msg);
		ck_assert_msg(ti.offset * 8 + ti.bit_offset == first[k] && ti.bit_size == width[k],
		    "lg.%s at bit %llu width %u; the compiler: bit %u width %u", f[k],
		    (unsigned long long)(ti.offset * 8 + ti.bit_offset), ti.bit_size,
		    first[k], width[k]);
	}
	kerr_clear(&e);
	ck_assert_msg(kvs_btf_member(b, "struct holder", "p", &ti, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(ti.kind, KVS_KIND_POINTER);
	ck_assert_int_eq(ti.elem_kind, KVS_KIND_STRUCT);
	ck_assert_uint_eq(ti.elem_size, 24);
	kerr_clear(&e);
	ck_assert_msg(kvs_btf_member(b, "struct later", "x", &ti, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(ti.offset, 16);
	kerr_clear(&e);
	ck_assert_int_eq(kvs_btf_type(b, "struct only_decl", &ti, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOTYPE);
	ck_assert_msg(strstr(e.msg, "declared but never defined") != NULL, "%s", e.msg);
	kvs_btf_close(b);
}
END_TEST

/* A 32-bit ELF's .BTF that names no "long" (libbpf cannot guess the
 * pointer size from it): pointers are the ELF class's 4 bytes.  The ELF
 * is objcopy's (elf32-i386) around hand-written BTF. */
START_TEST(elf_class_gives_pointer_size)
{
	struct rawbtf r;
	struct kvs_btf *b;
	struct kvs_typeinfo ti;
	struct kvs_error e;
	char bin[4096], elfp[4096], cmd[12288], *out;
	size_t len;
	int st, fd;
	Elf *elf;

	memset(&r, 0, sizeof(r));
	r.slen = 1;
	rb_type(&r, "int", BTF_KIND_INT, 0, 0, 4);                 /* 1 */
	rb_u32(&r, 1u << 24 | 32);                                 /* signed */
	rb_type(&r, NULL, BTF_KIND_PTR, 0, 0, 1);                  /* 2 */
	rb_type(&r, "pp", BTF_KIND_STRUCT, 0, 2, 8);               /* 3 */
	rb_u32(&r, rb_str(&r, "p")); rb_u32(&r, 2); rb_u32(&r, 0);
	rb_u32(&r, rb_str(&r, "n")); rb_u32(&r, 1); rb_u32(&r, 32);
	len = rb_finish(&r);
	snprintf(bin, sizeof(bin), "%s", path_join(test_tmpdir(), "btf32.bin"));
	snprintf(elfp, sizeof(elfp), "%s", path_join(test_tmpdir(), "btf32.o"));
	ck_assert_int_eq(write_file(bin, r.buf, len), 0);
	snprintf(cmd, sizeof(cmd), "objcopy -I binary -O elf32-i386 "
	    "--rename-section .data=.BTF,contents,readonly %s %s 2>&1", bin, elfp);
	out = run_capture(cmd, &st);
	ck_assert_msg(st == 0, "objcopy: %s", out != NULL ? out : "");
	free(out);
	fd = open(elfp, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	ck_assert_int_eq(gelf_getclass(elf), ELFCLASS32);
	kerr_clear(&e);
	ck_assert_msg(kvs_btf_open_elf(&b, elf, &e) == 0, "%s", e.msg);
	ck_assert_msg(kvs_btf_member(b, "struct pp", "p", &ti, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(ti.kind, KVS_KIND_POINTER);
	ck_assert_uint_eq(ti.size, 4);
	kvs_btf_close(b);
	elf_end(elf);
	close(fd);
}
END_TEST

/* ---------------------------------------------------------- the handle */

static const char *
core_path(void)
{
	return fixture_path("fbsd14/vmcore.minidump3");
}

/* Open kernel with the fbsd14 dump; with dwarf_only through KVS_TYPES,
 * which the handle reads at its first type query. */
static kvs_t *
open_handle(const char *kernel, bool dwarf_only)
{
	char err[KVS_ERRBUF_SIZE];
	struct kvs_typeinfo ti;
	kvs_t *kd;

	if (dwarf_only)
		setenv("KVS_TYPES", "dwarf", 1);
	/* the layout cache off: this is about which types answer */
	kd = kvs_open(kernel, core_path(), KVS_O_NO_CACHE, err);
	ck_assert_msg(kd != NULL, "%s: %s", kernel, err);
	ck_assert_int_eq(kvs_type(kd, "struct malloc_type", &ti), 0);
	unsetenv("KVS_TYPES");
	return kd;
}

/* Every layout of the fbsd14 truth, asked of a kernel with BTF and of the
 * same kernel's DWARF alone: the same answers, and no DWARF loaded for
 * them; what BTF lacks (most variables) comes from DWARF. */
/*
 * kvs_btf_peel / kvs_dwarf_peel and the enumerators: BTF and DWARF of one
 * binary give the same answers, and those the source (shapes.h) says: a
 * typedef's target one step down, every typedef and qualifier peeled, the
 * base types' encodings, and each enum's values in declaration order.
 */
struct enum_seen {
	char names[8][32];
	int64_t vals[8];
	int n;
};

static int
enum_cb(void *arg, const char *name, int64_t v)
{
	struct enum_seen *s = arg;

	if (s->n < 8) {
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
		s->vals[s->n] = v;
	}
	s->n++;
	return 0;
}

/* s is one of the '|'-separated spellings in alts. */
static bool
one_of(const char *s, const char *alts)
{
	size_t n = strlen(s);

	for (;;) {
		const char *bar = strchr(alts, '|');
		size_t l = bar ? (size_t)(bar - alts) : strlen(alts);
		if (l == n && strncmp(s, alts, n) == 0)
			return true;
		if (bar == NULL)
			return false;
		alts = bar + 1;
	}
}

START_TEST(peel_and_enumerators)
{
	static const struct {
		const char *type, *name, *target;
		kvs_encoding_t enc;
	} want[] = {
		/* '|' between the spellings compilers use */
		{ "u_long", "long unsigned int|unsigned long", "long unsigned int|unsigned long",
		  KVS_ENC_UNSIGNED },
		{ "my_ulong", "long unsigned int|unsigned long", "u_long", KVS_ENC_UNSIGNED },
		{ "cv_ulong", "long unsigned int|unsigned long",
		  "const volatile my_ulong|volatile const my_ulong", KVS_ENC_UNSIGNED },
		{ "row_t", "int [4]", "int [4]", KVS_ENC_NONE },
		{ "outer_t", "struct outer", "struct outer", KVS_ENC_NONE },
		{ "handler_t", "int (*)(void *, long unsigned int)|int (*)(void *, unsigned long)",
		  "int (*)(void *, long unsigned int)|int (*)(void *, unsigned long)", KVS_ENC_NONE },
		{ "int", "int", NULL, KVS_ENC_SIGNED },
		{ "char", "char", NULL, KVS_ENC_SIGNED },           /* amd64 */
		{ "unsigned int", "unsigned int", NULL, KVS_ENC_UNSIGNED },
		{ "_Bool", "_Bool", NULL, KVS_ENC_BOOL },
		{ "struct outer", "struct outer", NULL, KVS_ENC_NONE },
	};
	const char *bin = bins[_i];
	struct opened o;
	size_t i;

	open_bin(bin, &o);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct kvs_typepeel b, d;
		ck_assert_msg(kvs_btf_peel(o.b, want[i].type, &b, &o.e) == 0, "%s: BTF %s: %s",
		    bin, want[i].type, o.e.msg);
		ck_assert_msg(kvs_dwarf_peel(o.d, want[i].type, &d, &o.e) == 0, "%s: DWARF %s: %s",
		    bin, want[i].type, o.e.msg);
		ck_assert_msg(one_of(d.name, want[i].name), "%s: %s peels to %s",
		    bin, want[i].type, d.name);
		ck_assert_msg(same_spelling(d.name, b.name, false), "%s: %s: DWARF %s, BTF %s",
		    bin, want[i].type, d.name, b.name);
		if (want[i].target == NULL) {
			ck_assert_ptr_null(d.target);
			ck_assert_ptr_null(b.target);
		} else {
			ck_assert_msg(d.target != NULL && b.target != NULL &&
			    one_of(d.target, want[i].target) &&
			    same_spelling(d.target, b.target, false), "%s: %s's target %s / %s",
			    bin, want[i].type, d.target ? d.target : "-", b.target ? b.target : "-");
		}
		ck_assert_msg(d.encoding == want[i].enc && b.encoding == want[i].enc,
		    "%s: %s encoding DWARF %d BTF %d", bin, want[i].type, d.encoding, b.encoding);
	}
	{
		struct enum_seen sb = { .n = 0 }, sd = { .n = 0 };
		struct kvs_typepeel pb, pd;
		ck_assert_int_eq(kvs_btf_enumerators(o.b, "enum color", enum_cb, &sb, &o.e), 0);
		ck_assert_int_eq(kvs_dwarf_enumerators(o.d, "enum color", enum_cb, &sd, &o.e), 0);
		ck_assert_int_eq(sb.n, 3);
		ck_assert_int_eq(sd.n, 3);
		ck_assert_str_eq(sd.names[0], "RED");
		ck_assert_str_eq(sd.names[1], "GREEN");
		ck_assert_str_eq(sd.names[2], "BLUE");
		ck_assert(sd.vals[0] == 0 && sd.vals[1] == 5 && sd.vals[2] == 6);
		ck_assert_mem_eq(&sb, &sd, sizeof(sb));
		/* An enum's values read as its underlying type's: the same
		 * from both (gcc and clang pick unsigned int for these). */
		ck_assert_int_eq(kvs_btf_peel(o.b, "enum color", &pb, &o.e), 0);
		ck_assert_int_eq(kvs_dwarf_peel(o.d, "enum color", &pd, &o.e), 0);
		ck_assert_int_eq(pb.encoding, pd.encoding);
		ck_assert(pd.encoding == KVS_ENC_SIGNED || pd.encoding == KVS_ENC_UNSIGNED);
		memset(&sb, 0, sizeof(sb));
		memset(&sd, 0, sizeof(sd));
		ck_assert_int_eq(kvs_btf_enumerators(o.b, "enum wide", enum_cb, &sb, &o.e), 0);
		ck_assert_int_eq(kvs_dwarf_enumerators(o.d, "enum wide", enum_cb, &sd, &o.e), 0);
		ck_assert_int_eq(sd.n, 2);
		ck_assert(sd.vals[0] == 1 && sd.vals[1] == 0x100000000LL);
		/* gcc 12's own BTF cannot hold a 64-bit enum (it keeps one
		 * value); pahole's and clang's ENUM64 hold both. */
		if (strcmp(bin, "t.gcc") != 0)
			ck_assert_mem_eq(&sb, &sd, sizeof(sb));
	}
	/* A float: DWARF's encoding says so (BTF may not: pahole and clang
	 * here write doubles as plain 8-byte integers). */
	{
		struct kvs_typepeel d;
		ck_assert_int_eq(kvs_dwarf_peel(o.d, "double", &d, &o.e), 0);
		ck_assert_int_eq(d.encoding, KVS_ENC_FLOAT);
	}
	/* An enumerator by name alone (BTF). */
	{
		int64_t v = 0;
		const char *et = NULL;
		ck_assert_msg(kvs_btf_constant(o.b, "GREEN", &v, &et, &o.e) == 0, "%s: %s", bin,
		    o.e.msg);
		ck_assert_int_eq(v, 5);
		ck_assert_str_eq(et, "enum color");
		ck_assert_int_eq(kvs_btf_constant(o.b, "BLUE", &v, &et, &o.e), 0);
		ck_assert_int_eq(v, 6);
		ck_assert_int_eq(kvs_btf_constant(o.b, "NO_SUCH_ENUMERATOR", &v, &et, &o.e), -1);
		ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
	}
	/* Not an enum; no such type. */
	ck_assert_int_eq(kvs_btf_enumerators(o.b, "struct outer", enum_cb, NULL, &o.e), -1);
	ck_assert_int_eq(o.e.status, KVS_E_INVAL);
	ck_assert_int_eq(kvs_dwarf_enumerators(o.d, "struct outer", enum_cb, NULL, &o.e), -1);
	ck_assert_int_eq(o.e.status, KVS_E_INVAL);
	ck_assert_int_eq(kvs_btf_peel(o.b, "nosuch", &(struct kvs_typepeel){ 0 }, &o.e), -1);
	ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
	ck_assert_int_eq(kvs_dwarf_peel(o.d, "nosuch", &(struct kvs_typepeel){ 0 }, &o.e), -1);
	ck_assert_int_eq(o.e.status, KVS_E_NOTYPE);
	close_bin(&o);
}
END_TEST

START_TEST(handle_prefers_btf)
{
	const char *kb = test_input("kernel.btf");
	json_t *truth = load_truth("fbsd14/truth.json");
	json_t *layouts = json_object_get(truth, "layouts"), *lay, *mem;
	kvs_t *bt = open_handle(kb, false), *dw = open_handle(kb, true);
	struct kvs_typeinfo a, b;
	struct kvs_dumpinfo di;
	const char *tname, *path;
	int n = 0;

	ck_assert_ptr_nonnull(layouts);
	json_object_foreach(layouts, tname, lay) {
		json_object_foreach(json_object_get(lay, "members"), path, mem) {
			ck_assert_msg(kvs_member(bt, tname, path, &a) == 0, "%s.%s: %s",
			    tname, path, kvs_geterr(bt));
			ck_assert_msg(kvs_member(dw, tname, path, &b) == 0, "%s.%s: %s",
			    tname, path, kvs_geterr(dw));
			ck_assert_msg(same_spelling(b.type_name, a.type_name, false),
			    "%s.%s: \"%s\" / \"%s\"", tname, path, a.type_name, b.type_name);
			a.type_name = b.type_name = NULL;
			ck_assert_mem_eq(&a, &b, sizeof(a));
			ck_assert_uint_eq(a.offset, jget(mem, "offset"));
			n++;
		}
		ck_assert_int_eq(kvs_type(bt, tname, &a), 0);
		ck_assert_uint_eq(a.size, jget(lay, "size"));
	}
	ck_assert_int_gt(n, 20);
	ck_assert(used(bt, "btf"));
	ck_assert(!used(bt, "dwarf"));
	ck_assert(!used(dw, "btf"));
	ck_assert(used(dw, "dwarf"));
	/* A member a BTF type lacks is lacking: no DWARF load for a probe. */
	ck_assert_int_eq(kvs_has_member(bt, "struct malloc_type", "no_such_member"), 0);
	ck_assert_int_eq(kvs_member(bt, "struct malloc_type", "no_such_member", &a), -1);
	ck_assert_int_eq(kvs_errstatus(bt), KVS_E_NOTYPE);
	ck_assert_int_eq(kvs_has_member(dw, "struct malloc_type", "no_such_member"), 0);
	ck_assert(!used(bt, "dwarf"));
	/* dwarf_version costs no DWARF load while BTF answers everything. */
	ck_assert_int_eq(kvs_dumpinfo(bt, &di), 0);
	ck_assert_int_eq(di.dwarf_version, 0);
	ck_assert(!used(bt, "dwarf"));
	ck_assert_int_eq(kvs_dumpinfo(dw, &di), 0);
	ck_assert_int_eq(di.dwarf_version, 4);
	/* A type BTF does not have: DWARF is asked, and says the same. */
	ck_assert_int_eq(kvs_type(bt, "struct no_such_type", &a), -1);
	ck_assert_int_eq(kvs_errstatus(bt), KVS_E_NOTYPE);
	ck_assert_ptr_nonnull(strstr(kvs_geterr(bt), "not found in DWARF"));
	ck_assert(used(bt, "dwarf"));
	/* An ordinary global: not in pahole's BTF, so from DWARF. */
	ck_assert_int_eq(kvs_variable(bt, "kmemstatistics", &a), 0);
	ck_assert_int_eq(kvs_variable(dw, "kmemstatistics", &b), 0);
	ck_assert_str_eq(a.type_name, b.type_name);
	ck_assert_uint_eq(a.size, b.size);
	ck_assert_int_eq(kvs_dumpinfo(bt, &di), 0);
	ck_assert_int_eq(di.dwarf_version, 4);
	kvs_close(bt);
	kvs_close(dw);
	json_decref(truth);
}
END_TEST

/* A kernel without .BTF (every FreeBSD kernel): DWARF as before. */
START_TEST(handle_without_btf)
{
	kvs_t *kd = open_handle(fixture_path("fbsd14/kernel"), false);
	struct kvs_typeinfo ti;
	struct kvs_dumpinfo di;

	ck_assert_int_eq(kvs_dumpinfo(kd, &di), 0);
	ck_assert_int_eq(di.dwarf_version, 4);
	ck_assert_int_eq(kvs_member(kd, "struct malloc_type", "ks_next", &ti), 0);
	ck_assert(!used(kd, "btf"));
	ck_assert(used(kd, "btf_tried"));
	ck_assert(used(kd, "dwarf"));
	ck_assert_int_eq(kvs_has_member(kd, "struct malloc_type", "no_such_member"), 0);
	kvs_close(kd);
}
END_TEST

/* ------------------------------------------------- the types front */

/* The kernel's memory as the types front sees it: BTF bytes at a kernel
 * address, and what the front asked. */
struct fake_mem {
	const uint8_t *btf;
	size_t len;
	uint64_t kva;
	int where_rc;          /* what btf_where answers */
	bool read_fails;
	unsigned wheres, reads;
	uint64_t read_kva;
	size_t read_len;
};

static int
fake_where(void *arg, uint64_t *kva, uint64_t *len, struct kvs_error *e)
{
	struct fake_mem *m = arg;

	m->wheres++;
	if (m->where_rc < 0)
		return kerr_set(e, KVS_E_DATA, "no BTF here");
	*kva = m->kva;
	*len = m->len;
	return m->where_rc;
}

static int
fake_read(void *arg, uint64_t kva, void *buf, size_t len, struct kvs_error *e)
{
	struct fake_mem *m = arg;

	m->reads++;
	m->read_kva = kva;
	m->read_len = len;
	if (m->read_fails || kva != m->kva || len > m->len)
		return kerr_set(e, KVS_E_NOTDUMPED, "page not in dump");
	memcpy(buf, m->btf, len);
	return 0;
}

/* No kernel file: the front asks the owner where the kernel keeps its BTF,
 * reads exactly those bytes through the read callback and answers from
 * them, as the compiler lays the types out (shapes.h); a type BTF lacks is
 * "not found" (not "no DWARF"); no BTF in memory, an error saying where,
 * or a read that fails leave "no DWARF" as the answer; KVS_TYPES=dwarf
 * never asks memory. */
START_TEST(front_memory_btf)
{
	size_t len;
	void *btf = section_bytes(test_input("t.gcc"), &len);
	struct fake_mem m = { .btf = btf, .len = len, .kva = 0xffffffff82a00000ULL };
	struct kvs_types_config c = { .kfd = -1, .dfd = -1, .kernel_path = "(none)",
		.no_cache = true, .btf_where = fake_where, .read = fake_read, .arg = &m };
	struct kvs_typeinfo ti;
	struct kvs_error e;
	struct kvs_types *t;
	bool used_btf;
	int mode = _i;

	if (mode == 4)
		setenv("KVS_TYPES", "dwarf", 1);
	m.where_rc = mode == 1 ? 1 : mode == 2 ? -1 : 0;
	m.read_fails = mode == 3;
	ck_assert_ptr_nonnull(t = kvs_types_new(&c));
	kerr_clear(&e);
	if (mode == 0) {
		ck_assert_msg(kvs_types_query(t, KVS_TQ_TYPE, "struct stats", NULL, &ti, &e) == 0,
		    "%s", e.msg);
		ck_assert_uint_eq(ti.size, sizeof(struct stats));
		ck_assert_int_eq(kvs_types_query(t, KVS_TQ_MEMBER, "struct stats", "frees", &ti,
		    &e), 0);
		ck_assert_uint_eq(ti.offset, offsetof(struct stats, frees));
		ck_assert_uint_eq(m.reads, 1);
		ck_assert_uint_eq(m.read_kva, m.kva);
		ck_assert_uint_eq(m.read_len, len);
		kerr_clear(&e);
		ck_assert_int_eq(kvs_types_query(t, KVS_TQ_TYPE, "struct no_such", NULL, &ti,
		    &e), -1);
		ck_assert_int_eq(e.status, KVS_E_NOTYPE);
	} else {
		ck_assert_int_eq(kvs_types_query(t, KVS_TQ_TYPE, "struct stats", NULL, &ti, &e), -1);
		ck_assert_int_eq(e.status, KVS_E_DWARF);
		ck_assert_msg(strstr(e.msg, "no kernel file") != NULL, "%s", e.msg);
		ck_assert_uint_eq(m.reads, mode == 3 ? 1 : 0);
		ck_assert_uint_eq(m.wheres, mode == 4 ? 0 : 1);
	}
	kvs_types_used(t, &used_btf, NULL, NULL);
	ck_assert(used_btf == (mode == 0));
	/* asked once: the answer is kept */
	kerr_clear(&e);
	(void)kvs_types_query(t, KVS_TQ_TYPE, "struct stats", NULL, &ti, &e);
	ck_assert_uint_le(m.wheres, 1);
	kvs_types_free(t, false);
	free(btf);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("btf");
	TCase *tc = tcase_create("small");
	TCase *th = tcase_create("handle");

	tcase_add_loop_test(tc, btf_answers_as_dwarf, 0, NBINS);
	tcase_add_loop_test(tc, peel_and_enumerators, 0, NBINS);
	tcase_add_loop_test(tc, btf_matches_compiler, 0, NBINS);
	tcase_add_loop_test(tc, kinds_counts_names, 0, NBINS);
	tcase_add_loop_test(tc, strings_interned, 0, NBINS);
	tcase_add_loop_test(tc, errors_name_what_is_missing, 0, NBINS);
	tcase_add_loop_test(tc, open_mem_as_elf, 0, NBINS);
	tcase_add_test(tc, no_btf_section);
	tcase_add_loop_test(tc, corrupt_btf, 0, 64);
	tcase_add_test(tc, cycles_and_bad_ids);
	tcase_add_test(tc, legacy_bitfields_and_declarations);
	tcase_add_test(tc, elf_class_gives_pointer_size);
	suite_add_tcase(s, tc);
	tcase_add_test(th, handle_prefers_btf);
	tcase_add_test(th, handle_without_btf);
	tcase_add_loop_test(th, front_memory_btf, 0, 5);
	suite_add_tcase(s, th);
	return run_suite(s);
}
