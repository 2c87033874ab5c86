/*
 * check_symtab.c - the kernel symbol table (libkvmstat/types/symtab.c)
 * against `nm` as the oracle: name -> address and size for every defined
 * symbol, locals included; one a.out-style leading '_' tolerated; duplicate
 * names (a global beats a local, else the first local in table order wins);
 * address -> name at every symbol's first byte, last byte and one past its
 * end; a file without a symbol table.
 *
 * Two ELF files: a small executable built here with gcc from two
 * translation units written to exercise each rule, and the fixture kernel.
 * `nm -p -f sysv --defined-only` lists their symbols in table order with
 * class (binding), ELF type and size; the expectations below are computed
 * from that listing by the rules symtab.c documents, never from the library.
 */
#include <check.h>
#include <ctype.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>
#include <unistd.h>

#include "types.h"
#include "testutil.h"

/* ------------------------------------------------------------ the oracle */

struct nsym {
	char name[256];
	uint64_t value, size;
	int local;              /* nm class letter in lower case (not u/v/w) */
	int func_or_object;     /* ELF type FUNC or OBJECT: in the address index */
};

struct nmlist {
	struct nsym *v;
	size_t n;
};

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

/* nm's sysv listing of `path`, in symbol-table order. */
static struct nmlist
nm_list(const char *path)
{
	char cmd[4200], *out, *line, *save = NULL;
	struct nmlist l = { NULL, 0 };
	size_t cap = 0;
	int st;

	snprintf(cmd, sizeof(cmd), "nm -p -f sysv --defined-only '%s'", path);
	out = run_capture(cmd, &st);
	ck_assert_msg(out != NULL && st == 0, "nm failed on %s", path);
	for (line = strtok_r(out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *f[7];
		int k;
		struct nsym s;

		if (strchr(line, '|') == NULL)
			continue;                       /* headings */
		f[0] = line;
		for (k = 1; k < 7; k++) {
			char *bar = strchr(f[k - 1], '|');
			ck_assert_msg(bar != NULL, "nm line with %d fields: %s", k, line);
			*bar = '\0';
			f[k] = bar + 1;
		}
		memset(&s, 0, sizeof(s));
		snprintf(s.name, sizeof(s.name), "%s", trim(f[0]));
		s.value = strtoull(trim(f[1]), NULL, 16);
		{
			char c = *trim(f[2]);
			s.local = islower((unsigned char)c) && strchr("uvw", c) == NULL;
		}
		s.func_or_object = strcmp(trim(f[3]), "FUNC") == 0 || strcmp(trim(f[3]), "OBJECT") == 0;
		s.size = *trim(f[4]) ? strtoull(trim(f[4]), NULL, 16) : 0;
		if (l.n == cap) {
			cap = cap ? cap * 2 : 64;
			l.v = realloc(l.v, cap * sizeof(*l.v));
			ck_assert_ptr_nonnull(l.v);
		}
		l.v[l.n++] = s;
	}
	free(out);
	ck_assert_msg(l.n > 0, "nm listed no symbols in %s", path);
	return l;
}

/* By name: the first global definition in table order, else the first local. */
static const struct nsym *
nm_winner(const struct nmlist *l, const char *name)
{
	const struct nsym *first = NULL;
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].name, name) != 0)
			continue;
		if (!l->v[i].local)
			return &l->v[i];
		if (first == NULL)
			first = &l->v[i];
	}
	return first;
}

static size_t
nm_count(const struct nmlist *l, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < l->n; i++)
		n += strcmp(l->v[i].name, name) == 0;
	return n;
}

/* Rank among FUNC/OBJECT symbols at one address: sized beats unsized, then
 * global beats local, then the later in table order. */
static int
at_better(const struct nmlist *l, size_t a, size_t b)
{
	const struct nsym *x = &l->v[a], *y = &l->v[b];

	if ((x->size != 0) != (y->size != 0))
		return x->size != 0;
	if (x->local != y->local)
		return !x->local;
	return a > b;
}

/* By address: the best symbol at the highest value <= addr; none if that one
 * is sized and addr lies past its end.  *ties counts symbols that rank equal
 * to it (the library may return any of those). */
static const struct nsym *
nm_at(const struct nmlist *l, uint64_t addr, size_t *ties)
{
	size_t i, best = (size_t)-1;

	for (i = 0; i < l->n; i++) {
		const struct nsym *s = &l->v[i];
		if (!s->func_or_object || s->value > addr)
			continue;
		if (best == (size_t)-1 || s->value > l->v[best].value ||
		    (s->value == l->v[best].value && at_better(l, i, best)))
			best = i;
	}
	if (best == (size_t)-1)
		return NULL;
	*ties = 0;
	for (i = 0; i < l->n; i++)
		if (l->v[i].func_or_object && l->v[i].value == l->v[best].value &&
		    (l->v[i].size != 0) == (l->v[best].size != 0) && l->v[i].local == l->v[best].local)
			(*ties)++;
	if (l->v[best].size != 0 && addr - l->v[best].value >= l->v[best].size)
		return NULL;
	return &l->v[best];
}

/* ---------------------------------------------------------- the library */

struct loaded {
	int fd;
	Elf *elf;
	struct kvs_symtab *st;
};

static int
load(const char *path, struct loaded *o, struct kvs_error *e)
{
	memset(o, 0, sizeof(*o));
	kerr_clear(e);
	ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
	o->fd = open(path, O_RDONLY);
	ck_assert_msg(o->fd >= 0, "%s", path);
	o->elf = elf_begin(o->fd, ELF_C_READ, NULL);
	ck_assert_msg(o->elf != NULL, "%s: %s", path, elf_errmsg(-1));
	return kvs_symtab_load(&o->st, (struct Elf *)o->elf, e);
}

static void
unload(struct loaded *o)
{
	kvs_symtab_free(o->st);
	elf_end(o->elf);
	close(o->fd);
}

/* Every name nm lists resolves to its winner, with its size; so does the
 * a.out spelling "_name" unless "_name" is a symbol of its own. */
static void
check_lookups(struct kvs_symtab *st, const struct nmlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct nsym *w = nm_winner(l, l->v[i].name);
		struct kvs_error e;
		uint64_t addr = 1, size = 1;
		char us[300];

		kerr_clear(&e);
		ck_assert_msg(kvs_symtab_lookup(st, l->v[i].name, &addr, &size, &e) == 0, "%s: %s",
		    l->v[i].name, e.msg);
		ck_assert_msg(addr == w->value && size == w->size, "%s: 0x%llx/%llu, nm 0x%llx/%llu",
		    w->name, (unsigned long long)addr, (unsigned long long)size,
		    (unsigned long long)w->value, (unsigned long long)w->size);
		/* Either output may be omitted. */
		ck_assert_int_eq(kvs_symtab_lookup(st, l->v[i].name, NULL, NULL, &e), 0);
		snprintf(us, sizeof(us), "_%s", l->v[i].name);
		if (nm_count(l, us) == 0) {
			addr = size = 1;
			ck_assert_msg(kvs_symtab_lookup(st, us, &addr, &size, &e) == 0, "%s: %s", us, e.msg);
			ck_assert_uint_eq(addr, w->value);
			ck_assert_uint_eq(size, w->size);
		}
	}
}

/* kvs_symtab_at at each symbol's first and last byte, one past its end, and
 * one before its start, against nm_at. */
static void
check_at_one(struct kvs_symtab *st, const struct nmlist *l, uint64_t addr)
{
	size_t ties = 0;
	const struct nsym *want = nm_at(l, addr, &ties);
	uint64_t off = 12345;
	const char *got = kvs_symtab_at(st, addr, &off);

	if (want == NULL) {
		ck_assert_msg(got == NULL, "0x%llx: got %s, nm says none", (unsigned long long)addr, got);
		return;
	}
	ck_assert_msg(got != NULL, "0x%llx: got none, nm says %s", (unsigned long long)addr, want->name);
	if (ties > 1) {
		/* Equal-ranking symbols at one address: any of them. */
		const struct nsym *g = NULL;
		size_t i;
		for (i = 0; i < l->n; i++)
			if (strcmp(l->v[i].name, got) == 0 && l->v[i].value == want->value &&
			    l->v[i].func_or_object)
				g = &l->v[i];
		ck_assert_msg(g != NULL, "0x%llx: got %s, not among the symbols at 0x%llx",
		    (unsigned long long)addr, got, (unsigned long long)want->value);
	} else
		ck_assert_msg(strcmp(got, want->name) == 0, "0x%llx: got %s, nm says %s",
		    (unsigned long long)addr, got, want->name);
	ck_assert_uint_eq(off, addr - want->value);
	/* off may be omitted. */
	ck_assert_ptr_nonnull(kvs_symtab_at(st, addr, NULL));
}

static size_t
check_at(struct kvs_symtab *st, const struct nmlist *l)
{
	size_t i, sized = 0;

	for (i = 0; i < l->n; i++) {
		const struct nsym *s = &l->v[i];
		check_at_one(st, l, s->value);
		check_at_one(st, l, s->value - 1);
		if (s->size != 0) {
			check_at_one(st, l, s->value + s->size - 1);
			check_at_one(st, l, s->value + s->size);
			sized += s->func_or_object;
		}
	}
	check_at_one(st, l, 0);
	check_at_one(st, l, UINT64_MAX);
	return sized;
}

/* kvs_symtab_next at every symbol's address and the byte before it (and
 * 0): the lowest FUNC/OBJECT address above it in nm's listing, or none. */
static size_t
check_next(struct kvs_symtab *st, const struct nmlist *l)
{
	size_t i, j, k, checked = 0;

	for (i = 0; i < l->n; i++)
		for (k = 0; k < 3; k++) {
			uint64_t a = k == 0 ? l->v[i].value : k == 1 ? l->v[i].value - 1 : 0;
			uint64_t want = 0, got = 0;
			int have = 0, rc;
			for (j = 0; j < l->n; j++)
				if (l->v[j].func_or_object && l->v[j].value > a &&
				    (!have || l->v[j].value < want)) {
					want = l->v[j].value;
					have = 1;
				}
			rc = kvs_symtab_next(st, a, &got);
			if (!have)
				ck_assert_msg(rc == -1, "next(0x%llx) = 0x%llx, nm has none above",
				    (unsigned long long)a, (unsigned long long)got);
			else {
				ck_assert_msg(rc == 0 && got == want, "next(0x%llx) = 0x%llx (rc %d), "
				    "nm says 0x%llx", (unsigned long long)a, (unsigned long long)got,
				    rc, (unsigned long long)want);
				checked++;
			}
		}
	return checked;
}

static void
expect_missing(struct kvs_symtab *st, const char *name)
{
	struct kvs_error e;
	char want[300];
	uint64_t addr = 7, size = 7;

	kerr_clear(&e);
	ck_assert_int_eq(kvs_symtab_lookup(st, name, &addr, &size, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOSYMBOL);
	snprintf(want, sizeof(want), "symbol '%s' not found", name);
	ck_assert_str_eq(e.msg, want);
	ck_assert_uint_eq(addr, 7);                       /* outputs untouched */
	ck_assert_uint_eq(size, 7);
}

/* ------------------------------------------------------- the small ELF */

static const char tu_a[] =
    "__attribute__((used)) static int st_local_dup[3] = { 1, 2, 3 };\n"
    "__attribute__((used)) static long st_gl_vs_local = 5;\n"
    "int st_global_obj[10] = { 1 };\n"
    "int _st_under = 1;\n"
    "int st_under = 2;\n"
    "int st_plain = 3;\n"
    "int st_alias_target[4] = { 1 };\n"
    "extern int st_alias[4] __attribute__((alias(\"st_alias_target\")));\n"
    "int st_func(int x) { return x * 2 + st_local_dup[0]; }\n"
    "void st_entry(void) { for (;;) ; }\n"
    /* A zero-size NOTYPE label: named, but not in the address index. */
    "__asm__(\".data\\n.globl st_label\\nst_label:\\n.quad 0\\n.text\\n\");\n"
    /* An object nobody gave a size: by address it covers what follows. */
    "__asm__(\".data\\n.balign 16\\n.globl st_nosize\\n.type st_nosize,@object\\n"
    "st_nosize:\\n.quad 3, 4\\n.text\\n\");\n"
    /* Three objects at one address: a sized local, a sized global and an
     * unsized global; by address the sized global wins. */
    "__asm__(\".data\\n.balign 16\\n"
    ".type st_pair_local,@object\\n.size st_pair_local,16\\nst_pair_local:\\n"
    ".globl st_pair_global\\n.type st_pair_global,@object\\n.size st_pair_global,16\\n"
    "st_pair_global:\\n.globl st_pair_zero\\n.type st_pair_zero,@object\\n"
    ".size st_pair_zero,0\\nst_pair_zero:\\n.quad 1, 2\\n.text\\n\");\n";
static const char tu_b[] =
    "__attribute__((used)) static int st_local_dup[5] = { 4, 5, 6, 7, 8 };\n"
    "long st_gl_vs_local = 6;\n"
    "__attribute__((used)) static char st_local_only[7] = \"local\";\n"
    "__attribute__((used)) static char st_bss_local[100];\n"
    /* Two globals, renamed to one name after the link (see small_elf). */
    "int st_twinA[2] = { 1, 2 };\n"
    "int st_twinB[3] = { 3, 4, 5 };\n";

/* Build the small executable (and a stripped copy); returns its path. */
static const char *
small_elf(int stripped)
{
	const char *dir = test_tmpdir();
	static char path[2][512];
	char cmd[4096];

	if (path[stripped][0] != '\0')
		return path[stripped];
	ck_assert_int_eq(write_file(path_join(dir, "a.c"), tu_a, sizeof(tu_a) - 1), 0);
	ck_assert_int_eq(write_file(path_join(dir, "b.c"), tu_b, sizeof(tu_b) - 1), 0);
	snprintf(path[0], sizeof(path[0]), "%s/small.elf", dir);
	snprintf(path[1], sizeof(path[1]), "%s/small.stripped", dir);
	snprintf(cmd, sizeof(cmd), "cd '%s' && gcc -O0 -g0 -fno-pie -no-pie -nostdlib -static "
	    "-Wl,-e,st_entry -o small.elf a.c b.c && gcc -O0 -g0 -fno-pie -no-pie -nostdlib "
	    "-static -s -Wl,-e,st_entry -o small.stripped a.c b.c", dir);
	ck_assert_msg(system(cmd) == 0, "could not build the test ELF: %s", cmd);
	/* No linker makes two global definitions of one name; a hand-edited
	 * string table does: rename st_twinB to st_twinA. */
	{
		size_t len;
		char *img = read_file(path[0], &len), *at;
		ck_assert_ptr_nonnull(img);
		at = memmem(img, len, "st_twinB", 9);
		ck_assert_ptr_nonnull(at);
		ck_assert_ptr_null(memmem(at + 9, len - (size_t)(at + 9 - img), "st_twinB", 9));
		at[7] = 'A';
		ck_assert_int_eq(write_file(path[0], img, len), 0);
		free(img);
	}
	return path[stripped];
}

START_TEST(small_elf_matches_nm)
{
	struct kvs_error e;
	struct loaded o;
	struct nmlist l;
	const char *path = small_elf(0);
	uint64_t addr, size;

	l = nm_list(path);
	ck_assert_msg(load(path, &o, &e) == 0, "%s", e.msg);
	/* The scenarios are really there. */
	ck_assert_uint_eq(nm_count(&l, "st_local_dup"), 2);
	ck_assert_uint_eq(nm_count(&l, "st_gl_vs_local"), 2);
	ck_assert_uint_eq(nm_count(&l, "st_local_only"), 1);
	ck_assert_uint_eq(nm_count(&l, "_st_under"), 1);
	ck_assert_uint_eq(nm_count(&l, "st_under"), 1);
	ck_assert_uint_eq(nm_count(&l, "_st_plain"), 0);
	ck_assert_uint_eq(nm_count(&l, "st_twinA"), 2);
	ck_assert_uint_eq(nm_count(&l, "st_twinB"), 0);
	ck_assert(nm_winner(&l, "st_local_only")->local);
	ck_assert(nm_winner(&l, "st_alias")->value == nm_winner(&l, "st_alias_target")->value);
	check_lookups(o.st, &l);
	ck_assert_uint_ge(check_at(o.st, &l), 8);
	ck_assert_uint_ge(check_next(o.st, &l), 8);

	/* The rules, spelled out. */
	/* Two locals of one name: the first in table order (12 bytes, a.c). */
	ck_assert_int_eq(kvs_symtab_lookup(o.st, "st_local_dup", &addr, &size, &e), 0);
	ck_assert_uint_eq(size, 12);
	/* A local and a global: the global (b.c), wherever it comes. */
	ck_assert_int_eq(kvs_symtab_lookup(o.st, "st_gl_vs_local", &addr, &size, &e), 0);
	{
		size_t i;
		int found = 0;
		for (i = 0; i < l.n; i++)
			if (strcmp(l.v[i].name, "st_gl_vs_local") == 0 && !l.v[i].local) {
				ck_assert_uint_eq(addr, l.v[i].value);
				found = 1;
			}
		ck_assert(found);
	}
	/* Two globals of one name: the first in table order. */
	{
		size_t i;
		for (i = 0; i < l.n && strcmp(l.v[i].name, "st_twinA") != 0; i++)
			;
		ck_assert_int_eq(kvs_symtab_lookup(o.st, "st_twinA", &addr, &size, &e), 0);
		ck_assert_uint_eq(addr, l.v[i].value);
		ck_assert_uint_eq(size, l.v[i].size);
	}
	/* "_st_under" is a symbol itself: no stripping; "_st_plain" is not. */
	ck_assert_int_eq(kvs_symtab_lookup(o.st, "_st_under", &addr, NULL, &e), 0);
	ck_assert_uint_eq(addr, nm_winner(&l, "_st_under")->value);
	ck_assert_int_eq(kvs_symtab_lookup(o.st, "st_under", &addr, NULL, &e), 0);
	ck_assert_uint_eq(addr, nm_winner(&l, "st_under")->value);
	ck_assert_int_eq(kvs_symtab_lookup(o.st, "_st_plain", &addr, &size, &e), 0);
	ck_assert_uint_eq(addr, nm_winner(&l, "st_plain")->value);
	ck_assert_uint_eq(size, 4);
	ck_assert_int_eq(kvs_symtab_lookup(o.st, "_st_global_obj", &addr, &size, &e), 0);
	ck_assert_uint_eq(size, 40);
	/* Only one '_' is dropped, and a lone '_' is a name like any other. */
	expect_missing(o.st, "__st_plain");
	expect_missing(o.st, "_");
	expect_missing(o.st, "");
	expect_missing(o.st, "st_no_such");
	expect_missing(o.st, "_st_no_such");
	expect_missing(o.st, "st_local_dup ");
	/* A NOTYPE label is found by name but never by address. */
	ck_assert_int_eq(kvs_symtab_lookup(o.st, "st_label", &addr, &size, &e), 0);
	ck_assert_uint_eq(size, 0);
	{
		uint64_t off;
		const char *n = kvs_symtab_at(o.st, addr, &off);
		ck_assert(n == NULL || strcmp(n, "st_label") != 0);
	}
	/* A function: start, middle, last byte, and just past it. */
	{
		const struct nsym *f = nm_winner(&l, "st_func");
		uint64_t off;
		ck_assert_uint_gt(f->size, 2);
		ck_assert_str_eq(kvs_symtab_at(o.st, f->value, &off), "st_func");
		ck_assert_uint_eq(off, 0);
		ck_assert_str_eq(kvs_symtab_at(o.st, f->value + f->size - 1, &off), "st_func");
		ck_assert_uint_eq(off, f->size - 1);
		ck_assert(kvs_symtab_at(o.st, f->value + f->size, &off) == NULL ||
		    strcmp(kvs_symtab_at(o.st, f->value + f->size, &off), "st_func") != 0);
	}
	/* One address, three objects: the sized global. */
	{
		const struct nsym *g = nm_winner(&l, "st_pair_global");
		uint64_t off;
		ck_assert_uint_eq(g->value, nm_winner(&l, "st_pair_local")->value);
		ck_assert_uint_eq(g->value, nm_winner(&l, "st_pair_zero")->value);
		ck_assert_str_eq(kvs_symtab_at(o.st, g->value, &off), "st_pair_global");
		ck_assert_str_eq(kvs_symtab_at(o.st, g->value + 15, &off), "st_pair_global");
		ck_assert_uint_eq(off, 15);
	}
	/* An unsized object: its own address and the bytes after it. */
	{
		const struct nsym *z = nm_winner(&l, "st_nosize");
		uint64_t off;
		ck_assert(z->func_or_object && z->size == 0);
		ck_assert_ptr_eq(nm_at(&l, z->value + 8, &(size_t){ 0 }), z);
		ck_assert_str_eq(kvs_symtab_at(o.st, z->value, &off), "st_nosize");
		ck_assert_uint_eq(off, 0);
		ck_assert_str_eq(kvs_symtab_at(o.st, z->value + 8, &off), "st_nosize");
		ck_assert_uint_eq(off, 8);
	}
	/* Below every symbol: nothing. */
	ck_assert_ptr_null(kvs_symtab_at(o.st, 0, NULL));
	unload(&o);
	free(l.v);
}
END_TEST

START_TEST(fixture_kernel_matches_nm)
{
	struct kvs_error e;
	struct loaded o;
	struct nmlist l;
	char path[4096];
	uint64_t addr, size;

	snprintf(path, sizeof(path), "%s", fixture_path("fbsd14/kernel"));
	l = nm_list(path);
	ck_assert_msg(load(path, &o, &e) == 0, "%s", e.msg);
	check_lookups(o.st, &l);
	ck_assert_uint_ge(check_at(o.st, &l), 20);
	ck_assert_uint_ge(check_next(o.st, &l), 20);
	/* File-local statics are indexed (kmemstatistics is static in the kernel). */
	ck_assert(nm_winner(&l, "kmemstatistics")->local);
	ck_assert_int_eq(kvs_symtab_lookup(o.st, "kmemstatistics", &addr, &size, &e), 0);
	ck_assert_uint_eq(size, 8);
	ck_assert_int_eq(kvs_symtab_lookup(o.st, "_kmemstatistics", &addr, &size, &e), 0);
	ck_assert_uint_eq(addr, nm_winner(&l, "kmemstatistics")->value);
	expect_missing(o.st, "no_such_symbol");
	unload(&o);
	free(l.v);
}
END_TEST

START_TEST(no_symbol_table)
{
	struct kvs_error e;
	struct loaded o;

	ck_assert_int_eq(load(small_elf(1), &o, &e), -1);
	ck_assert_int_eq(e.status, KVS_E_NOSYMBOL);
	ck_assert_msg(strstr(e.msg, "no symbol table") != NULL, "%s", e.msg);
	elf_end(o.elf);
	close(o.fd);
}
END_TEST

/* ------------------------------------------------------------- modules */

/*
 * A module's symbols (kvs_add_module: core/module.c, and symtab.c's biased
 * load) against the fixture generator: it copied each allocated section of
 * dtrace.ko and profile.ko into the dump at the module's base and recorded
 * base and size in truth.json "dtrace.modules".  So a module symbol in
 * .data must lie in [base, base + size) and the dump's bytes there must be
 * the .ko's bytes of that symbol (read from the file with libelf here); a
 * .bss symbol must lie in the module too.
 */
static const json_t *
truth_module(const json_t *t, const char *name)
{
	const json_t *mods = json_object_get(json_object_get(t, "dtrace"), "modules"), *m;
	size_t i;

	ck_assert_msg(json_array_size(mods) > 0, "truth.json has no dtrace.modules");
	json_array_foreach(mods, i, m)
		if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0)
			return m;
	ck_abort_msg("truth.json: no module %s", name);
	return NULL;
}

/* The size of symbol `name` in the relocatable file at path; its first
 * bytes (its section's data at st_value, at most cap) into buf; the
 * symbol's section type in *shtype. */
static size_t
ko_symbol_bytes(const char *path, const char *name, uint8_t *buf, size_t cap,
    unsigned *shtype)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t n = 0;
	int found = 0;

	ck_assert_int_ge(fd, 0);
	ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB ||
		    (d = elf_getdata(scn, NULL)) == NULL)
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			GElf_Shdr ts;
			Elf_Scn *tscn;
			Elf_Data *td;
			const char *nm;

			if (gelf_getsym(d, (int)i, &s) == NULL ||
			    (nm = elf_strptr(elf, sh.sh_link, s.st_name)) == NULL ||
			    strcmp(nm, name) != 0)
				continue;
			tscn = elf_getscn(elf, s.st_shndx);
			ck_assert(tscn != NULL && gelf_getshdr(tscn, &ts) != NULL);
			*shtype = ts.sh_type;
			n = s.st_size;
			if (ts.sh_type != SHT_NOBITS) {
				size_t k = n < cap ? n : cap;
				td = elf_getdata(tscn, NULL);
				ck_assert(td != NULL && s.st_value + k <= td->d_size);
				memcpy(buf, (const uint8_t *)td->d_buf + s.st_value, k);
			}
			found = 1;
			break;
		}
	}
	ck_assert_msg(found, "%s: no symbol %s", path, name);
	elf_end(elf);
	close(fd);
	return n;
}

static kvs_t *
open_fbsd14(void)
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(fixture_path("fbsd14/kernel"),
	    fixture_path("fbsd14/vmcore.minidump3"), 0, err);

	ck_assert_msg(kd != NULL, "%s", err);
	return kd;
}

START_TEST(module_symbols_at_their_sections)
{
	static const struct { const char *ko, *sym; } cases[] = {
		{ "profile.ko", "profile_max" },            /* .data */
		{ "profile.ko", "profile_percpu_example" }, /* .bss, not at 0 */
		{ "profile.ko", "profile_total" },          /* .bss */
	};
	json_t *t = load_truth("fbsd14/truth.json");
	kvs_t *kd = open_fbsd14();
	size_t i, ndata = 0;

	ck_assert_int_eq(kvs_add_module(kd, fixture_path("fbsd14/dtrace.ko")), 1);
	ck_assert_int_eq(kvs_add_module(kd, fixture_path("fbsd14/profile.ko")), 1);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const json_t *m = truth_module(t, cases[i].ko);
		uint64_t base = jget(m, "base"), msize = jget(m, "size"), addr, size;
		uint8_t want[64], got[64];
		unsigned shtype = 0;
		size_t n = ko_symbol_bytes(fixture_path(path_join("fbsd14", cases[i].ko)),
		    cases[i].sym, want, sizeof(want), &shtype);

		ck_assert_msg(kvs_symbol(kd, cases[i].sym, &addr, &size) == 0, "%s: %s",
		    cases[i].sym, kvs_geterr(kd));
		ck_assert_msg(addr >= base && addr + size <= base + msize,
		    "%s at 0x%llx size %llu, outside %s [0x%llx, +%llu)", cases[i].sym,
		    (unsigned long long)addr, (unsigned long long)size, cases[i].ko,
		    (unsigned long long)base, (unsigned long long)msize);
		ck_assert_uint_eq(size, n);
		if (shtype != SHT_NOBITS) {
			ck_assert_uint_le(n, sizeof(want));
			ck_assert_int_eq(kvs_read(kd, addr, got, n), 0);
			ck_assert_msg(memcmp(got, want, n) == 0, "%s: the dump's bytes are "
			    "not the .ko's", cases[i].sym);
			ndata++;
		}
	}
	ck_assert_uint_ge(ndata, 1);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* A module file that is not the one loaded: profile.ko needs more bytes
 * than truth says dtrace.ko was loaded in, so a copy of it named dtrace.ko
 * is refused; a dtrace.ko whose e_machine says AArch64 is not this
 * kernel's. */
START_TEST(module_not_the_loaded_file)
{
	json_t *t = load_truth("fbsd14/truth.json");
	kvs_t *kd = open_fbsd14();
	const char *dir = path_join(test_tmpdir(), "mods");
	char path[4096];
	size_t len;
	uint8_t *img;

	ck_assert(jget(truth_module(t, "dtrace.ko"), "size") < jget(truth_module(t,
	    "profile.ko"), "size"));
	ck_assert(mkdir(dir, 0700) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/dtrace.ko", dir);
	img = read_file(fixture_path("fbsd14/profile.ko"), &len);
	ck_assert_ptr_nonnull(img);
	ck_assert_int_eq(write_file(path, img, len), 0);
	free(img);
	ck_assert_int_eq(kvs_add_module(kd, path), -1);
	ck_assert_msg(kvs_errstatus(kd) == KVS_E_MISMATCH, "%s", kvs_geterr(kd));

	img = read_file(fixture_path("fbsd14/dtrace.ko"), &len);
	ck_assert_ptr_nonnull(img);
	ck_assert_uint_gt(len, 20);
	img[18] = 183;          /* e_machine: EM_AARCH64, little-endian */
	img[19] = 0;
	ck_assert_int_eq(write_file(path, img, len), 0);
	free(img);
	ck_assert_int_eq(kvs_add_module(kd, path), -1);
	ck_assert_msg(kvs_errstatus(kd) == KVS_E_FORMAT, "%s", kvs_geterr(kd));
	/* the real one still goes in */
	ck_assert_int_eq(kvs_add_module(kd, fixture_path("fbsd14/dtrace.ko")), 1);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("symtab");
	TCase *tc = tcase_create("nm");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, small_elf_matches_nm);
	tcase_add_test(tc, fixture_kernel_matches_nm);
	tcase_add_test(tc, no_symbol_table);
	tcase_add_test(tc, module_symbols_at_their_sections);
	tcase_add_test(tc, module_not_the_loaded_file);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
