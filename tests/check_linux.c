/*
 * check_linux.c - the Linux layer and the SLUB walker against the truth of
 * fixtures/gen/mkcore_linux.py: one fixture vmlinux (6.1 layouts) booted
 * with KASLR (an ELF vmcore whose VMCOREINFO is a note, and a raw image in
 * which it must be found by scanning), without (nokaslr), and hostile
 * (corrupt per-CPU lists; a slab_caches that loops).  The truth is the
 * generator's model, never a reading of the dumps.
 */
#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "kvmprof.h"
#include "kvmstat.h"
#include "memstat.h"
#include "testutil.h"

struct lx {
	const char *dir, *core;
	int flags;
};
static const struct lx dumps[] = {
	{ "linux-kaslr", "vmcore", 0 },
	{ "linux-kaslr", "mem.raw", KVS_O_RAW },
	{ "linux-nokaslr", "vmcore", 0 },
	{ "linux-hostile", "mem.raw", KVS_O_RAW },
};
#define NDUMPS ((int)(sizeof(dumps) / sizeof(dumps[0])))

static char kernel_path[4096];

static const char *
kernel(void)
{
	snprintf(kernel_path, sizeof(kernel_path), "%s", fixture_path("linux-kaslr/vmlinux"));
	return kernel_path;
}

static const char *
core_path(const struct lx *d)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "%s/%s", d->dir, d->core);
	return fixture_path(rel);
}

static kvs_t *
open_dump(const struct lx *d)
{
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(kernel(), core_path(d), d->flags, err);

	ck_assert_msg(kd != NULL, "%s/%s: %s", d->dir, d->core, err);
	return kd;
}

static json_t *
truth_of(const struct lx *d)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "%s/truth.json", d->dir);
	return load_truth(rel);
}

static const char *
jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	ck_assert_msg(s != NULL, "truth has no string '%s'", key);
	return s;
}

static struct memory_type *
find_addr(struct memory_type_list *l, uint64_t addr)
{
	struct memory_type *mt;

	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
		if (memstat_get_kaddr(mt) == addr)
			return mt;
	return NULL;
}

/* One cache of the list against its truth row. */
static void
check_row(struct memory_type *mt, const json_t *row, unsigned ncpus)
{
	const char *name = jstr(row, "name");
	json_t *pc = json_object_get(row, "percpu_free");
	unsigned c;

	ck_assert_str_eq(memstat_get_name(mt), name);
	ck_assert_int_eq(memstat_get_allocator(mt), ALLOCATOR_SLAB);
	ck_assert_uint_eq(memstat_get_size(mt), jget(row, "object_size"));
	ck_assert_uint_eq(memstat_get_rsize(mt), jget(row, "size"));
	ck_assert_uint_eq(memstat_get_slab_objperslab(mt), jget(row, "objects_per_slab"));
	ck_assert_uint_eq(memstat_get_slab_pagesperslab(mt), jget(row, "pages_per_slab"));
	ck_assert_uint_eq(memstat_get_slab_numslabs(mt), jget(row, "num_slabs"));
	ck_assert_uint_eq(memstat_get_slab_numobjs(mt), jget(row, "num_objs"));
	ck_assert_uint_eq(memstat_get_slab_active(mt), jget(row, "active_objs"));
	ck_assert_uint_eq(memstat_get_maxcpus(mt), ncpus);
	ck_assert_uint_eq(json_array_size(pc), ncpus);
	if (!json_is_true(json_object_get(row, "corrupt"))) {
		ck_assert_msg(memstat_get_count(mt) == jget(row, "allocated"),
		    "%s: allocated %llu, truth %llu", name,
		    (unsigned long long)memstat_get_count(mt),
		    (unsigned long long)jget(row, "allocated"));
		ck_assert_uint_eq(memstat_get_free(mt), jget(row, "free"));
		ck_assert_uint_eq(memstat_get_bytes(mt), jget(row, "bytes"));
		ck_assert_uint_eq(memstat_get_slab_flags(mt) & MEMSTAT_SLAB_CORRUPT, 0);
		for (c = 0; c < ncpus; c++)
			ck_assert_msg(memstat_get_percpu_free(mt, (int)c) ==
			    jnum(json_array_get(pc, c)), "%s CPU %u: free %llu, truth %llu", name,
			    c, (unsigned long long)memstat_get_percpu_free(mt, (int)c),
			    (unsigned long long)jnum(json_array_get(pc, c)));
	} else {
		/* What a corrupt list holds cannot be trusted: the count lies
		 * between the model's (every listed object free) and the upper
		 * bound that counts none of the corrupt list. */
		json_t *pmin = json_object_get(row, "percpu_free_min");
		ck_assert_uint_ne(memstat_get_slab_flags(mt) & MEMSTAT_SLAB_CORRUPT, 0);
		ck_assert_msg(memstat_get_count(mt) >= jget(row, "allocated_min") &&
		    memstat_get_count(mt) <= jget(row, "allocated_max"),
		    "%s: allocated %llu outside [%llu, %llu]", name,
		    (unsigned long long)memstat_get_count(mt),
		    (unsigned long long)jget(row, "allocated_min"),
		    (unsigned long long)jget(row, "allocated_max"));
		ck_assert_uint_eq(memstat_get_free(mt), jget(row, "num_objs") - memstat_get_count(mt));
		for (c = 0; c < ncpus; c++) {
			uint64_t f = memstat_get_percpu_free(mt, (int)c);
			ck_assert_msg(f >= jnum(json_array_get(pmin, c)) &&
			    f <= jnum(json_array_get(pc, c)), "%s CPU %u: free %llu outside "
			    "[%llu, %llu]", name, c, (unsigned long long)f,
			    (unsigned long long)jnum(json_array_get(pmin, c)),
			    (unsigned long long)jnum(json_array_get(pc, c)));
		}
	}
}

static struct memory_type_list *
slab_list(const struct lx *d)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	kvs_t *kd = open_dump(d);

	ck_assert_msg(memstat_kvm_slab(l, kd) == 0, "%s", kvs_geterr(kd));
	kvs_close(kd);
	return l;
}

/* memstat_kvm_slab on every dump: each cache's figures equal the truth. */
START_TEST(slab_equals_truth)
{
	const struct lx *d = &dumps[_i];
	json_t *t = truth_of(d), *caches = json_object_get(t, "caches"), *row;
	unsigned ncpus = (unsigned)jget(json_object_get(t, "cpus"), "nr_cpu_ids");
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	kvs_t *kd = open_dump(d);
	int hostile = json_object_get(t, "hostile") != NULL;
	size_t i, ncorrupt = 0;
	const char *warn;
	int pass;

	for (pass = 0; pass < 2; pass++) {   /* a second refresh says the same */
		ck_assert_msg(memstat_kvm_slab(l, kd) == 0, "%s/%s: %s", d->dir, d->core,
		    kvs_geterr(kd));
		ck_assert_uint_eq(memstat_mtl_count(l), json_array_size(caches));
		/* The list holds the newest entry first: the kernel's list order,
		 * which the truth keeps, reversed. */
		mt = memstat_mtl_first(l);
		for (i = json_array_size(caches); i-- > 0; mt = memstat_mtl_next(mt)) {
			ck_assert_ptr_nonnull(mt);
			ck_assert_uint_eq(memstat_get_kaddr(mt),
			    jget(json_array_get(caches, i), "address"));
		}
		ck_assert_ptr_null(mt);
		json_array_foreach(caches, i, row) {
			mt = find_addr(l, jget(row, "address"));
			ck_assert_ptr_nonnull(mt);
			check_row(mt, row, ncpus);
			ncorrupt += json_is_true(json_object_get(row, "corrupt"));
		}
		if (hostile) {
			ck_assert_uint_eq(kvs_warnings(kd, &warn) > 0, 1);
			ck_assert_msg(strstr(warn, "leaves its slab or loops") != NULL, "%s", warn);
		} else
			ck_assert_uint_eq(kvs_warnings(kd, &warn), 0);
	}
	ck_assert_uint_eq(ncorrupt, hostile ? 2 * 3 : 0);
	/* memstat_kvm_all reads the kernel's own allocator: SLUB. */
	{
		struct memory_type_list *all = memstat_mtl_alloc();
		ck_assert_int_eq(memstat_kvm_all(all, kd), 0);
		ck_assert_uint_eq(memstat_mtl_count(all), json_array_size(caches));
		memstat_mtl_free(all);
	}
	memstat_mtl_free(l);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* The generator's one CPU slab whose lockless freelist holds every object
 * of the slab: a walk bounded by the slab's object count takes exactly
 * that many steps, and the row is sound, its CPU's free count whole. */
START_TEST(freelist_at_bound)
{
	const struct lx *d = &dumps[_i];
	json_t *t = truth_of(d), *b = json_object_get(t, "boundary"), *row, *hit = NULL;
	struct memory_type_list *l;
	struct memory_type *mt;
	unsigned cpu;
	size_t i;

	ck_assert_msg(b != NULL, "%s: the truth has no full-freelist slab", d->dir);
	cpu = (unsigned)jget(b, "cpu");
	ck_assert_uint_ge(jget(b, "objects"), 2);
	ck_assert_uint_eq(jget(b, "lockless"), jget(b, "objects"));
	json_array_foreach(json_object_get(t, "caches"), i, row)
		if (strcmp(jstr(row, "name"), jstr(b, "cache")) == 0)
			hit = row;
	ck_assert_ptr_nonnull(hit);
	ck_assert_uint_eq(jget(hit, "objects_per_slab"), jget(b, "objects"));
	ck_assert(!json_is_true(json_object_get(hit, "corrupt")));
	ck_assert_uint_ge(jnum(json_array_get(json_object_get(hit, "percpu_free"), cpu)),
	    jget(b, "objects"));
	l = slab_list(d);
	mt = find_addr(l, jget(hit, "address"));
	ck_assert_ptr_nonnull(mt);
	ck_assert_uint_eq(memstat_get_slab_flags(mt) & MEMSTAT_SLAB_CORRUPT, 0);
	ck_assert_uint_eq(memstat_get_percpu_free(mt, (int)cpu),
	    jnum(json_array_get(json_object_get(hit, "percpu_free"), cpu)));
	ck_assert_uint_eq(memstat_get_count(mt), jget(hit, "allocated"));
	memstat_mtl_free(l);
	json_decref(t);
}
END_TEST

static char *
kvmstat(const struct lx *d, const char *args, int *st)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "%s -N %s -M %s%s %s 2>/dev/null",
	    build_path("analyzers/kvmstat"), kernel(), core_path(d),
	    d->flags & KVS_O_RAW ? " --raw" : "", args);
	return run_capture(cmd, st);
}

/* `kvmstat slab --json --percpu`: every figure of every cache, in the
 * kernel's list order. */
START_TEST(cli_json_equals_truth)
{
	const struct lx *d = &dumps[_i];
	json_t *t = truth_of(d), *caches = json_object_get(t, "caches"), *row, *j, *rows;
	json_error_t jerr;
	char *out;
	size_t i;
	int st;

	out = kvmstat(d, "slab --json --percpu", &st);
	ck_assert_int_eq(st, 0);
	j = json_loads(out, 0, &jerr);
	ck_assert_msg(j != NULL, "%s: %s", d->core, jerr.text);
	rows = json_object_get(j, "caches");
	ck_assert_uint_eq(json_array_size(rows), json_array_size(caches));
	json_array_foreach(caches, i, row) {
		json_t *o = json_array_get(rows, i);
		const char *name = jstr(row, "name");
		static const char *const exact[] = { "object_size", "size", "objects_per_slab",
		    "pages_per_slab", "num_slabs", "num_objs", "active_objs", "cache_bytes" };
		size_t k;
		int corrupt = json_is_true(json_object_get(row, "corrupt"));

		ck_assert_str_eq(json_string_value(json_object_get(o, "name")), name);
		ck_assert_uint_eq(strtoull(json_string_value(json_object_get(o, "kaddr")), NULL, 16),
		    jget(row, "address"));
		for (k = 0; k < sizeof(exact) / sizeof(exact[0]); k++)
			ck_assert_msg(jnum(json_object_get(o, exact[k])) == jget(row, exact[k]),
			    "%s %s: %llu, truth %llu", name, exact[k],
			    (unsigned long long)jnum(json_object_get(o, exact[k])),
			    (unsigned long long)jget(row, exact[k]));
		ck_assert_int_eq(json_is_true(json_object_get(o, "corrupt")), corrupt);
		if (!corrupt) {
			json_t *pc = json_object_get(o, "percpu"), *pt = json_object_get(row,
			    "percpu_free");
			size_t c;
			ck_assert_uint_eq(jnum(json_object_get(o, "count")), jget(row, "allocated"));
			ck_assert_uint_eq(jnum(json_object_get(o, "free")), jget(row, "free"));
			ck_assert_uint_eq(jnum(json_object_get(o, "bytes")), jget(row, "bytes"));
			/* kvmstat: [{cpu, free}]; the truth: one number a CPU. */
			ck_assert_uint_eq(json_array_size(pc), json_array_size(pt));
			for (c = 0; c < json_array_size(pt); c++) {
				ck_assert_uint_eq(jget(json_array_get(pc, c), "cpu"), c);
				ck_assert_uint_eq(jget(json_array_get(pc, c), "free"),
				    jnum(json_array_get(pt, c)));
			}
		} else {
			uint64_t a = jnum(json_object_get(o, "count"));
			ck_assert(a >= jget(row, "allocated_min") && a <= jget(row, "allocated_max"));
		}
	}
	json_decref(j);
	free(out);
	json_decref(t);
}
END_TEST

/* `kvmstat slab`: /proc/slabinfo 2.1 as the kernel prints it. */
START_TEST(cli_slabinfo_equals_truth)
{
	const struct lx *d = &dumps[_i];
	json_t *t = truth_of(d), *line;
	char *out, *want = calloc(1, 1 << 20);
	size_t i, len = 0;
	int st;

	json_array_foreach(json_object_get(t, "slabinfo"), i, line) {
		len += (size_t)snprintf(want + len, (1 << 20) - len, "%s\n", json_string_value(line));
	}
	out = kvmstat(d, "slab", &st);
	ck_assert_int_eq(st, 0);
	ck_assert_str_eq(out, want);
	free(out);
	free(want);
	json_decref(t);
}
END_TEST

/* The printk ring buffer: ids that wrap past 2^62, positions past 2^64, a
 * text block stored from the start of the ring, reusable, reserved and
 * data-less records skipped. */
START_TEST(dmesg_equals_truth)
{
	const struct lx *d = &dumps[_i];
	json_t *t = truth_of(d), *dm = json_object_get(t, "dmesg");
	const char *want = jstr(dm, "text");
	kvs_t *kd = open_dump(d);
	char *text, *out;
	size_t len;
	int st;

	ck_assert_uint_ge(json_array_size(json_object_get(dm, "wrapped_block_seq")), 1);
	ck_assert_int_eq(kvs_msgbuf(kd, &text, &len), 0);
	ck_assert_uint_eq(len, strlen(want));
	ck_assert_str_eq(text, want);
	free(text);
	kvs_close(kd);
	out = kvmstat(d, "dmesg", &st);
	ck_assert_int_eq(st, 0);
	ck_assert_str_eq(out, want);
	free(out);
	json_decref(t);
}
END_TEST

static size_t
count_in(const char *hay, size_t len, const char *needle)
{
	size_t n = 0, nl = strlen(needle);
	const char *p = hay, *end = hay + len;

	while ((p = memmem(p, (size_t)(end - p), needle, nl)) != NULL) {
		n++;
		p++;
	}
	return n;
}

/* Bytes from a truth's hex string; the count, or (size_t)-1 if malformed. */
static size_t
unhex(const char *h, uint8_t *out, size_t cap)
{
	size_t n = strlen(h), i;

	if (n % 2 != 0 || n / 2 > cap)
		return (size_t)-1;
	for (i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return (size_t)-1;
		out[i] = (uint8_t)v;
	}
	return n / 2;
}

/* A record whose block wraps to the start of the ring, its text_len
 * overstated: the reader prints exactly its block (the generator's bytes
 * after the block's 8-byte id up to the block's end: the text, its newline
 * and NUL, then what the ring held there before), each newline among them
 * followed by the indent of a continued line, and nothing of the block
 * after it (whose id opens right at that end).  Every other record's line
 * is as the truth has it, and the block after is shown once, on its own. */
START_TEST(dmesg_wrapped_block_bounded)
{
	const struct lx *d = &dumps[_i];
	json_t *t = truth_of(d), *dm = json_object_get(t, "dmesg"), *w;
	const char *want = jstr(dm, "text"), *after, *own, *at;
	char err[KVS_ERRBUF_SIZE], cp[4096], pre[64], *text, *line, *exp;
	uint8_t blk[65536], nid[8];
	size_t len, tlen, wlen = strlen(want), blen, elen, llen, p, k, indent;
	uint8_t *img;
	uint64_t pa, ts;
	int pl;
	kvs_t *kd;

	ck_assert_msg(d->flags & KVS_O_RAW, "a raw image is patched at physical addresses");
	w = json_array_get(json_object_get(dm, "wrapped_text_len"), 0);
	ck_assert_msg(w != NULL, "%s: the truth has no wrapped record with a block after it",
	    d->dir);
	after = jstr(w, "block_after");
	own = jstr(w, "text");
	pa = jget(w, "pa");
	ts = jget(w, "ts");
	ck_assert_uint_eq(jget(w, "width"), 2);
	blen = unhex(jstr(w, "block_bytes"), blk, sizeof(blk));
	ck_assert_uint_eq(unhex(jstr(w, "next_id"), nid, sizeof(nid)), 8);
	/* The block: id, then the text, its newline and NUL, within its size. */
	ck_assert_uint_eq(blen + 8, jget(w, "block_size"));
	ck_assert_uint_ge(blen, strlen(own) + 2);
	ck_assert(memcmp(blk, own, strlen(own)) == 0);
	ck_assert(blk[strlen(own)] == '\n' && blk[strlen(own) + 1] == '\0');
	/* Its line in the truth: the prefix and own text, at one place. */
	pl = snprintf(pre, sizeof(pre), "[%5" PRIu64 ".%06" PRIu64 "] ",
	    ts / UINT64_C(1000000000), ts % UINT64_C(1000000000) / 1000);
	ck_assert(pl > 0 && (size_t)pl < sizeof(pre));
	llen = (size_t)pl + strlen(own) + 1;
	line = malloc(llen + 1);
	ck_assert_ptr_nonnull(line);
	snprintf(line, llen + 1, "%s%s\n", pre, own);
	ck_assert_uint_eq(count_in(want, wlen, line), 1);
	at = strstr(want, line);
	ck_assert_msg(at == want || at[-1] == '\n', "%s: the record's line starts a line",
	    d->dir);
	p = (size_t)(at - want);
	/* What the reader must print for it: the prefix, every byte of the
	 * block, a continuation indent after each newline, a final newline. */
	indent = (size_t)pl < 30 ? (size_t)pl : 30;
	exp = malloc((size_t)pl + blen * (1 + indent) + 2);
	ck_assert_ptr_nonnull(exp);
	memcpy(exp, pre, (size_t)pl);
	elen = (size_t)pl;
	for (k = 0; k < blen; k++) {
		exp[elen++] = (char)blk[k];
		if (blk[k] == '\n') {
			memset(exp + elen, ' ', indent);
			elen += indent;
		}
	}
	exp[elen++] = '\n';

	img = read_file(core_path(d), &len);
	ck_assert_ptr_nonnull(img);
	ck_assert_uint_lt(pa + 2, len);
	ck_assert_uint_eq(img[pa] | img[pa + 1] << 8, strlen(own));
	img[pa] = img[pa + 1] = 0xff;
	snprintf(cp, sizeof(cp), "%s", path_join(test_tmpdir(), "longtext.raw"));
	ck_assert_int_eq(write_file(cp, img, len), 0);
	free(img);
	kd = kvs_open(kernel(), cp, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_msgbuf(kd, &text, &tlen), 0);
	/* Exactly the truth with the record's line replaced by its block. */
	ck_assert_msg(tlen == wlen - llen + elen, "%s: %zu bytes, want %zu", d->dir, tlen,
	    wlen - llen + elen);
	ck_assert_msg(memcmp(text, want, p) == 0, "%s: the lines before the record", d->dir);
	ck_assert_msg(memcmp(text + p, exp, elen) == 0, "%s: the record's line is not its "
	    "block's %zu bytes", d->dir, blen);
	ck_assert_msg(memcmp(text + p + elen, want + p + llen, wlen - p - llen) == 0,
	    "%s: the lines after the record", d->dir);
	ck_assert_ptr_null(memmem(text, tlen, nid, sizeof(nid)));
	ck_assert_uint_ge(count_in(want, wlen, after), 1);
	ck_assert_uint_eq(count_in(text, tlen, after), count_in(want, wlen, after));
	ck_assert_uint_eq(count_in(text, tlen, own), count_in(want, wlen, own));
	free(exp);
	free(line);
	free(text);
	kvs_close(kd);
	json_decref(t);
}
END_TEST

START_TEST(kernel_info_equals_truth)
{
	const struct lx *d = &dumps[_i];
	json_t *t = truth_of(d), *k = json_object_get(t, "kernel");
	struct kvs_kernelinfo ki;
	kvs_t *kd = open_dump(d);

	ck_assert_int_eq(kvs_kernel_info(kd, &ki), 0);
	ck_assert_str_eq(ki.os, "Linux");
	ck_assert_str_eq(ki.version, jstr(k, "version"));
	ck_assert_int_eq(ki.ncpus, (int)jget(k, "ncpus"));
	ck_assert_int_eq(ki.maxid, (int)jget(k, "maxid"));
	ck_assert_ptr_nonnull(ki.panic);
	ck_assert_str_eq(ki.panic, jstr(k, "panic"));
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* Symbols slide by KERNELOFFSET; kernel, direct-map, vmemmap and per-CPU
 * addresses translate as the model placed them. */
START_TEST(translation_equals_truth)
{
	const struct lx *d = &dumps[_i];
	json_t *t = truth_of(d), *syms = json_object_get(t, "symbols"), *s, *x;
	kvs_t *kd = open_dump(d);
	const char *name;
	uint64_t a, pa, off;
	size_t i;

	json_object_foreach(syms, name, s) {
		ck_assert_int_eq(kvs_symbol(kd, name, &a, NULL), 0);
		ck_assert_msg(a == jget(s, "runtime"), "%s: 0x%llx, truth 0x%llx", name,
		    (unsigned long long)a, (unsigned long long)jget(s, "runtime"));
		if (strcmp(name, "_text") != 0) {
			ck_assert_str_eq(kvs_symbol_at(kd, a + 1, &off), name);
			ck_assert_uint_eq(off, 1);
		}
	}
	json_array_foreach(json_object_get(t, "translations"), i, x) {
		ck_assert_msg(kvs_kvtop(kd, jget(x, "va"), &pa) == 0, "%s: %s",
		    jstr(x, "kind"), kvs_geterr(kd));
		ck_assert_msg(pa == jget(x, "pa"), "%s 0x%llx: pa 0x%llx, truth 0x%llx",
		    jstr(x, "kind"), (unsigned long long)jget(x, "va"), (unsigned long long)pa,
		    (unsigned long long)jget(x, "pa"));
	}
	json_array_foreach(json_object_get(t, "unmapped"), i, x) {
		ck_assert_int_eq(kvs_kvtop(kd, jnum(x), &pa), -1);
		ck_assert_int_eq(kvs_errstatus(kd), KVS_E_UNMAPPED);
	}
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* Two lists of the same caches: every figure equal, addresses aside
 * (same_addr: the addresses too). */
static void
lists_equal(struct memory_type_list *a, struct memory_type_list *b, int same_addr)
{
	struct memory_type *x = memstat_mtl_first(a), *y = memstat_mtl_first(b);
	unsigned c;

	ck_assert_uint_eq(memstat_mtl_count(a), memstat_mtl_count(b));
	for (; x != NULL && y != NULL; x = memstat_mtl_next(x), y = memstat_mtl_next(y)) {
		ck_assert_str_eq(memstat_get_name(x), memstat_get_name(y));
		if (same_addr)
			ck_assert_uint_eq(memstat_get_kaddr(x), memstat_get_kaddr(y));
		ck_assert_uint_eq(memstat_get_size(x), memstat_get_size(y));
		ck_assert_uint_eq(memstat_get_rsize(x), memstat_get_rsize(y));
		ck_assert_uint_eq(memstat_get_count(x), memstat_get_count(y));
		ck_assert_uint_eq(memstat_get_free(x), memstat_get_free(y));
		ck_assert_uint_eq(memstat_get_bytes(x), memstat_get_bytes(y));
		ck_assert_uint_eq(memstat_get_slab_objperslab(x), memstat_get_slab_objperslab(y));
		ck_assert_uint_eq(memstat_get_slab_pagesperslab(x), memstat_get_slab_pagesperslab(y));
		ck_assert_uint_eq(memstat_get_slab_numslabs(x), memstat_get_slab_numslabs(y));
		ck_assert_uint_eq(memstat_get_slab_numobjs(x), memstat_get_slab_numobjs(y));
		ck_assert_uint_eq(memstat_get_slab_active(x), memstat_get_slab_active(y));
		ck_assert_uint_eq(memstat_get_slab_flags(x), memstat_get_slab_flags(y));
		ck_assert_uint_eq(memstat_get_maxcpus(x), memstat_get_maxcpus(y));
		for (c = 0; c < memstat_get_maxcpus(x); c++)
			ck_assert_uint_eq(memstat_get_percpu_free(x, (int)c),
			    memstat_get_percpu_free(y, (int)c));
	}
	ck_assert_ptr_null(x);
	ck_assert_ptr_null(y);
}

/* One boot model placed two ways: the tables are the same. */
START_TEST(kaslr_equals_nokaslr)
{
	json_t *tk = truth_of(&dumps[0]), *tn = truth_of(&dumps[2]);
	json_t *kk = json_object_get(tk, "kaslr"), *kn = json_object_get(tn, "kaslr");
	struct memory_type_list *a = slab_list(&dumps[0]), *b = slab_list(&dumps[2]);

	/* The fixtures are what they say: slid with a negative phys_base,
	 * and not. */
	ck_assert_uint_ne(jget(kk, "kerneloffset"), 0);
	ck_assert_int_lt((int64_t)jget(kk, "phys_base"), 0);
	ck_assert_uint_ne(jget(kk, "page_offset_base"), jget(kn, "page_offset_base"));
	ck_assert_uint_ne(jget(kk, "vmemmap_base"), jget(kn, "vmemmap_base"));
	ck_assert_uint_eq(jget(kn, "kerneloffset"), 0);
	ck_assert_uint_eq(jget(kn, "phys_base"), 0);
	lists_equal(a, b, 0);
	memstat_mtl_free(a);
	memstat_mtl_free(b);
	json_decref(tk);
	json_decref(tn);
}
END_TEST

/* The raw image (VMCOREINFO found by scanning memory, past the format
 * string "OSRELEASE=%s" in the image) reads as the ELF dump does. */
START_TEST(raw_equals_elf)
{
	json_t *t = truth_of(&dumps[0]), *vi = json_object_get(t, "vmcoreinfo");
	struct memory_type_list *a = slab_list(&dumps[0]), *b = slab_list(&dumps[1]);
	kvs_t *ke = open_dump(&dumps[0]), *kr = open_dump(&dumps[1]);
	struct kvs_kernelinfo ie, ir;
	char *te, *tr, buf[16];
	size_t le, lr;

	lists_equal(a, b, 1);
	ck_assert_int_eq(kvs_msgbuf(ke, &te, &le), 0);
	ck_assert_int_eq(kvs_msgbuf(kr, &tr, &lr), 0);
	ck_assert_uint_eq(le, lr);
	ck_assert_str_eq(te, tr);
	ck_assert_int_eq(kvs_kernel_info(ke, &ie), 0);
	ck_assert_int_eq(kvs_kernel_info(kr, &ir), 0);
	ck_assert_str_eq(ie.version, ir.version);
	ck_assert_str_eq(ie.panic, ir.panic);
	ck_assert_int_eq(ie.ncpus, ir.ncpus);
	ck_assert_int_eq(ie.maxid, ir.maxid);
	/* The scan had a decoy to pass. */
	ck_assert_uint_lt(jget(vi, "decoy_pa"), jget(vi, "data_pa"));
	ck_assert_uint_lt(jget(vi, "decoy_pa"), jget(vi, "note_pa"));
	ck_assert_int_eq(kvs_read_phys(kr, jget(vi, "decoy_pa"), buf, 13), 0);
	ck_assert_int_eq(memcmp(buf, "OSRELEASE=%s\n", 13), 0);
	free(te);
	free(tr);
	kvs_close(ke);
	kvs_close(kr);
	memstat_mtl_free(a);
	memstat_mtl_free(b);
	json_decref(t);
}
END_TEST

/* "FILE@ADDR": the raw image less its first MiB (which the ELF vmcore, as
 * x86 kdump, leaves out too) opened with its first byte at physical
 * 0x100000 reads as the whole image does; below ADDR nothing is read; a bad
 * ADDR is a clear error. */
START_TEST(raw_at_base)
{
	static const char *const bad[] = { "@", "@zz", "@0x123", "@-4096", "@0x1000x" };
	const uint64_t base = 0x100000;
	json_t *t = truth_of(&dumps[1]);
	char err[KVS_ERRBUF_SIZE], cp[4096], spec[4200], b1[64], b2[64];
	struct memory_type_list *a = slab_list(&dumps[1]), *l = memstat_mtl_alloc();
	struct kvs_kernelinfo ie, ir;
	size_t len, i, le, lr;
	uint8_t *img = read_file(core_path(&dumps[1]), &len);
	char *te, *tr;
	kvs_t *kd, *kw = open_dump(&dumps[1]);

	snprintf(cp, sizeof(cp), "%s", path_join(test_tmpdir(), "high.raw"));
	ck_assert_ptr_nonnull(img);
	ck_assert_uint_gt(len, base);
	ck_assert_int_eq(write_file(cp, img + base, len - base), 0);
	snprintf(spec, sizeof(spec), "%s@0x%llx", cp, (unsigned long long)base);
	kd = kvs_open(kernel(), spec, 0, err);
	ck_assert_msg(kd != NULL, "%s: %s", spec, err);
	ck_assert_int_eq(memstat_kvm_slab(l, kd), 0);
	lists_equal(a, l, 1);
	ck_assert_int_eq(kvs_read_phys(kd, base + 0x1234, b1, sizeof(b1)), 0);
	ck_assert_int_eq(memcmp(b1, img + base + 0x1234, sizeof(b1)), 0);
	ck_assert_int_ne(kvs_read_phys(kd, base - 4096, b2, sizeof(b2)), 0);
	ck_assert_int_eq(kvs_msgbuf(kd, &te, &le), 0);
	ck_assert_int_eq(kvs_msgbuf(kw, &tr, &lr), 0);
	ck_assert_str_eq(te, tr);
	ck_assert_int_eq(kvs_kernel_info(kd, &ie), 0);
	ck_assert_int_eq(kvs_kernel_info(kw, &ir), 0);
	ck_assert_str_eq(ie.version, ir.version);
	ck_assert_str_eq(ie.version, jstr(json_object_get(t, "kernel"), "version"));
	free(te);
	free(tr);
	kvs_close(kd);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(spec, sizeof(spec), "%s%s", cp, bad[i]);
		ck_assert_ptr_null(kvs_open(kernel(), spec, 0, err));
		ck_assert_msg(strstr(err, "after '@'") != NULL || strstr(err, "no physical") != NULL,
		    "%s: %s", spec, err);
	}
	free(img);
	kvs_close(kw);
	memstat_mtl_free(a);
	memstat_mtl_free(l);
	json_decref(t);
}
END_TEST

/* Without VMCOREINFO anywhere in memory the KASLR image cannot be found:
 * a clear error, not a wrong answer. */
START_TEST(raw_without_vmcoreinfo)
{
	json_t *t = truth_of(&dumps[1]), *vi = json_object_get(t, "vmcoreinfo");
	const char *copy = path_join(test_tmpdir(), "novmcoreinfo.raw");
	char err[KVS_ERRBUF_SIZE], cp[4096];
	size_t len;
	uint8_t *img = read_file(core_path(&dumps[1]), &len);
	uint64_t at[2] = { jget(vi, "data_pa"), jget(vi, "note_pa") + 24 };
	int k;

	snprintf(cp, sizeof(cp), "%s", copy);
	ck_assert_ptr_nonnull(img);
	for (k = 0; k < 2; k++) {
		ck_assert_int_eq(memcmp(img + at[k], "OSRELEASE=", 10), 0);
		memcpy(img + at[k], "XSRELEASE=", 10);
	}
	ck_assert_int_eq(write_file(cp, img, len), 0);
	free(img);
	ck_assert_ptr_null(kvs_open(kernel(), cp, KVS_O_RAW, err));
	ck_assert_msg(strstr(err, "no VMCOREINFO") != NULL, "%s", err);
	json_decref(t);
}
END_TEST

/* A block of VMCOREINFO's format strings ("OSRELEASE=%s\nPAGESIZE=%ld\n
 * ...") below the real text, in low memory the model leaves unused: the scan
 * passes it by and finds the kernel where the truth put it. */
START_TEST(raw_decoy_format_block)
{
	static const char decoy[] = "OSRELEASE=%s\nPAGESIZE=%ld\nKERNELOFFSET=%lx\n"
	    "NUMBER(phys_base)=%ld\nSYMBOL(init_top_pgt)=%lx\n";
	json_t *t = truth_of(&dumps[1]), *vi = json_object_get(t, "vmcoreinfo");
	json_t *sym = json_object_get(json_object_get(t, "symbols"), "linux_banner");
	const uint64_t at = 0x3000;
	char err[KVS_ERRBUF_SIZE], cp[4096];
	struct kvs_kernelinfo ki;
	uint64_t a;
	size_t len, i;
	uint8_t *img = read_file(core_path(&dumps[1]), &len);
	kvs_t *kd;

	snprintf(cp, sizeof(cp), "%s", path_join(test_tmpdir(), "decoy.raw"));
	ck_assert_ptr_nonnull(img);
	ck_assert_uint_lt(at + sizeof(decoy), jget(vi, "data_pa"));
	ck_assert_uint_lt(at + sizeof(decoy), jget(vi, "decoy_pa"));
	for (i = 0; i < 4096; i++)
		ck_assert_uint_eq(img[at + i], 0);
	memcpy(img + at, decoy, sizeof(decoy));
	ck_assert_int_eq(write_file(cp, img, len), 0);
	free(img);
	kd = kvs_open(kernel(), cp, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_symbol(kd, "linux_banner", &a, NULL), 0);
	ck_assert_uint_eq(a, jget(sym, "runtime"));
	ck_assert_int_eq(kvs_kernel_info(kd, &ki), 0);
	ck_assert_str_eq(ki.version, jstr(json_object_get(t, "kernel"), "version"));
	kvs_close(kd);
	json_decref(t);
}
END_TEST

/* A slab_caches list that loops: the refresh fails naming a node of the
 * cycle, the list keeps what it had, the command says so; nothing hangs. */
/*
 * A partial dump (makedumpfile leaves out a page): the table keeps every
 * row.  A copy of the raw image whose one cache's name pointer and another
 * cache's node[0] pointer lead outside memory: every cache of the truth is
 * there, the first without its name, the second without its counts (the
 * sizes from its kmem_cache stand), each flagged; every other row equals
 * the truth; the CLI prints ? and exits 1, saying the answer is incomplete.
 */
START_TEST(partial_rows_kept)
{
	const struct lx *d = &dumps[1];
	json_t *t = truth_of(d), *caches = json_object_get(t, "caches"), *c;
	kvs_t *kd = open_dump(d);
	struct kvs_typeinfo tn, tnode;
	const char *copy = path_join(test_tmpdir(), "partial.raw");
	uint64_t a_name, a_node, pa1, pa2, bad = 0xffff8880fff00000ULL;
	char err[KVS_ERRBUF_SIZE];
	struct memory_type_list *l;
	struct memory_type *mt;
	size_t len, i, seen = 0;
	uint8_t *img;

	ck_assert_ptr_nonnull(caches);
	ck_assert_uint_gt(json_array_size(caches), 3);
	a_name = jget(json_array_get(caches, 1), "address");
	a_node = jget(json_array_get(caches, 2), "address");
	ck_assert_int_eq(kvs_member(kd, "struct kmem_cache", "name", &tn), 0);
	ck_assert_int_eq(kvs_member(kd, "struct kmem_cache", "node", &tnode), 0);
	ck_assert_int_eq(kvs_kvtop(kd, a_name + tn.offset, &pa1), 0);
	ck_assert_int_eq(kvs_kvtop(kd, a_node + tnode.offset, &pa2), 0);
	kvs_close(kd);
	img = read_file(fixture_path("linux-kaslr/mem.raw"), &len);
	ck_assert_ptr_nonnull(img);
	ck_assert_uint_lt(pa1 + 8, len);
	ck_assert_uint_lt(pa2 + 8, len);
	memcpy(img + pa1, &bad, 8);
	memcpy(img + pa2, &bad, 8);
	ck_assert_int_eq(write_file(copy, img, len), 0);
	free(img);
	kd = kvs_open(kernel(), copy, KVS_O_RAW, err);
	ck_assert_msg(kd != NULL, "%s", err);
	l = memstat_mtl_alloc();
	ck_assert_int_eq(memstat_kvm_slab(l, kd), 0);
	json_array_foreach(caches, i, c) {
		uint64_t addr = jget(c, "address");
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
			if (memstat_get_kaddr(mt) == addr)
				break;
		ck_assert_msg(mt != NULL, "cache at 0x%llx lost", (unsigned long long)addr);
		seen++;
		if (addr == a_name) {
			ck_assert(memstat_get_slab_flags(mt) & MEMSTAT_SLAB_NAME_UNREADABLE);
			ck_assert_str_eq(memstat_get_name(mt), "");
			ck_assert_uint_eq(memstat_get_slab_numobjs(mt), jget(c, "num_objs"));
		} else if (addr == a_node) {
			ck_assert(memstat_get_slab_flags(mt) & MEMSTAT_SLAB_COUNTS_UNREADABLE);
			ck_assert_str_eq(memstat_get_name(mt), json_string_value(json_object_get(c, "name")));
			ck_assert_uint_eq(memstat_get_size(mt), jget(c, "object_size"));
			ck_assert_uint_eq(memstat_get_slab_objperslab(mt), jget(c, "objects_per_slab"));
		} else {
			ck_assert_uint_eq(memstat_get_slab_flags(mt) &
			    (MEMSTAT_SLAB_NAME_UNREADABLE | MEMSTAT_SLAB_COUNTS_UNREADABLE), 0);
			ck_assert_uint_eq(memstat_get_slab_numobjs(mt), jget(c, "num_objs"));
		}
	}
	ck_assert_uint_eq(seen, json_array_size(caches));
	ck_assert_uint_ge(kvs_warnings(kd, NULL), 2);
	memstat_mtl_free(l);
	kvs_close(kd);
	{
		char cmd[8192], line[512];
		FILE *f;
		int rc, q = 0;
		snprintf(cmd, sizeof(cmd), "'%s' -N '%s' --raw -M '%s' slab 2>&1; echo rc=$?",
		    build_path("analyzers/kvmstat"), kernel(), copy);
		f = popen(cmd, "r");
		ck_assert_ptr_nonnull(f);
		rc = -1;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, "rc=", 3) == 0)
				rc = atoi(line + 3);
			if (strncmp(line, "?  ", 3) == 0 || strstr(line, "      ?      ?") != NULL)
				q++;
			if (strstr(line, "the answer is incomplete") != NULL)
				q += 10;
		}
		pclose(f);
		ck_assert_int_eq(rc, 1);
		ck_assert_int_ge(q, 12);
	}
	json_decref(t);
}
END_TEST

START_TEST(hostile_list_loops)
{
	json_t *t = load_truth("linux-hostile/truth.json");
	json_t *loop = json_object_get(json_object_get(t, "hostile"), "loop"), *x;
	const struct lx good = { "linux-hostile", "mem.raw", KVS_O_RAW };
	const struct lx bad = { "linux-hostile", "vmcore.loop", 0 };
	struct memory_type_list *l = slab_list(&good);
	size_t n = memstat_mtl_count(l), i;
	kvs_t *kd = open_dump(&bad);
	const char *m;
	uint64_t at;
	int on_cycle = 0, st;
	char *out;

	ck_assert_int_eq(memstat_kvm_slab(l, kd), -1);
	ck_assert_int_eq(memstat_mtl_geterror(l), MEMSTAT_ERROR_KVM);
	ck_assert_int_eq(kvs_errstatus(kd), KVS_E_DATA);
	m = strstr(kvs_geterr(kd), "slab_caches list loops back to 0x");
	ck_assert_msg(m != NULL, "%s", kvs_geterr(kd));
	at = strtoull(m + strlen("slab_caches list loops back to "), NULL, 16);
	json_array_foreach(json_object_get(loop, "cycle"), i, x)
		on_cycle |= jnum(x) == at;
	ck_assert_msg(on_cycle, "%s", kvs_geterr(kd));
	ck_assert_uint_eq(memstat_mtl_count(l), n);
	/* The rest of the dump still reads. */
	{
		struct kvs_kernelinfo ki;
		ck_assert_int_eq(kvs_kernel_info(kd, &ki), 0);
		ck_assert_str_eq(ki.panic, jstr(json_object_get(t, "kernel"), "panic"));
	}
	kvs_close(kd);
	out = kvmstat(&bad, "slab", &st);
	ck_assert_int_eq(st, 1);
	ck_assert_str_eq(out, "");
	free(out);
	memstat_mtl_free(l);
	json_decref(t);
}
END_TEST

/* The corrupt rows are the ones the model corrupted. */
START_TEST(hostile_rows_named)
{
	json_t *t = load_truth("linux-hostile/truth.json"), *h = json_object_get(t, "hostile");
	json_t *row, *names = json_object_get(h, "corrupt");
	const struct lx d = { "linux-hostile", "mem.raw", KVS_O_RAW };
	struct memory_type_list *l = slab_list(&d);
	size_t i, k, flagged = 0;

	ck_assert_uint_eq(json_array_size(names), 3);
	ck_assert_uint_eq(json_array_size(json_object_get(h, "freelist_loop")), 1);
	ck_assert_uint_eq(json_array_size(json_object_get(h, "freelist_leaves")), 1);
	ck_assert_uint_eq(json_array_size(json_object_get(h, "partial_loop")), 1);
	json_array_foreach(json_object_get(t, "caches"), i, row) {
		struct memory_type *mt = find_addr(l, jget(row, "address"));
		int want = 0;
		json_t *nm;
		json_array_foreach(names, k, nm)
			want |= strcmp(json_string_value(nm), jstr(row, "name")) == 0;
		ck_assert_ptr_nonnull(mt);
		ck_assert_int_eq(!!(memstat_get_slab_flags(mt) & MEMSTAT_SLAB_CORRUPT), want);
		flagged += want;
	}
	ck_assert_uint_eq(flagged, 3);
	memstat_mtl_free(l);
	json_decref(t);
}
END_TEST

/* A kernel whose banner is not the dump's is refused, whatever the dump's
 * format; kernels of the wrong family fail cleanly. */
START_TEST(wrong_kernel)
{
	const struct lx *d = &dumps[_i];
	json_t *t = truth_of(d);
	char err[KVS_ERRBUF_SIZE], other[4096];
	kvs_t *kd;

	snprintf(other, sizeof(other), "%s", fixture_path("linux-kaslr/vmlinux.other"));
	ck_assert_ptr_null(kvs_open(other, core_path(d), d->flags, err));
	ck_assert_msg(strstr(err, "kernel does not match dump") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "kernel is \"Linux version 6.1.0-other-amd64") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "dump is \"Linux version 6.1.0-fixture-amd64") != NULL, "%s", err);
	/* Told not to verify, it opens (the layouts are the same). */
	kd = kvs_open(other, core_path(d), d->flags | KVS_O_NOVERIFY, err);
	ck_assert_msg(kd != NULL, "%s", err);
	kvs_close(kd);
	/* A FreeBSD kernel with a Linux dump. */
	snprintf(other, sizeof(other), "%s", fixture_path("fbsd14/kernel"));
	kd = kvs_open(other, core_path(d), d->flags, err);
	ck_assert_ptr_null(kd);
	ck_assert_str_ne(err, "");
	json_decref(t);
}
END_TEST

/* The Linux kernel with a FreeBSD dump: no VMCOREINFO, no image where an
 * unrandomised kernel would be. */
START_TEST(linux_kernel_freebsd_dump)
{
	char err[KVS_ERRBUF_SIZE];

	ck_assert_ptr_null(kvs_open(kernel(), fixture_path("fbsd14/vmcore.elf"), 0, err));
	ck_assert_msg(strstr(err, "no VMCOREINFO") != NULL, "%s", err);
}
END_TEST


/* ------------------------------------------------- kallsyms from memory */

/*
 * A kernel's kallsyms arrays, written into a raw memory image by this test
 * the way the encoding is defined (the names as token numbers, each token a
 * string in the token table; a length of 128 or more takes two bytes, low
 * seven bits first; offsets relative to kallsyms_relative_base, or, with
 * absolute per-CPU symbols, non-negative = absolute and negative = counting
 * down from base - 1), with VMCOREINFO naming them.  kvs_open without a
 * kernel file must find every symbol at the address the test chose.
 */
#define KS_IMG (4u << 20)
#define KS_PHYS_BASE 0x200000ULL
#define KS_SLIDE 0x1c00000ULL
#define KS_START 0xffffffff80000000ULL
#define KS_NSYMS 1500

struct ks_sym {
	char name[400];
	char type;
	uint64_t addr;            /* runtime */
};

static uint64_t
ks_va(uint64_t pa)
{
	return pa - KS_PHYS_BASE + KS_START;
}

/*
 * A kernel booted with profile=N (prof_buffer), for ks_image: symbols 1-6
 * become the profile's variables (prof_on, prof_shift, prof_len,
 * prof_buffer, tick_nsec) and _etext, the variables and the counters lie in
 * a 2 MiB page that page tables the image builds map above the symbols.
 */
#define KP_BINS 2001
#define KP_PAGE_PA 0x200000ULL
#define KP_VARS_PA 0x3a0000ULL
#define KP_BUF_PA 0x3b0000ULL
struct ks_prof {
	uint32_t on, shift_stored;   /* prof_on; prof_shift as the kernel holds it */
	unsigned shift;              /* the shift prof_len and _etext agree on */
	uint64_t tick_nsec;
	uint32_t bins[KP_BINS];
	uint64_t stext, etext, buf;  /* runtime addresses, filled by ks_image */
};

/* Build the image: mode 0 relative offsets, 1 absolute per-CPU; stext: put
 * SYMBOL(_stext) into VMCOREINFO; drop: a key left out; cut: the names
 * stream cut short; prof: a profile buffer (mode 0 only).  Returns the
 * file's path. */
static const char *
ks_image(struct ks_sym *syms, int mode, bool stext, const char *drop, bool cut,
    struct ks_prof *prof)
{
	static char path[4096];
	uint8_t *img = calloc(1, KS_IMG);
	uint64_t a_offs = 0x100000, a_base = 0x108000, a_num = 0x108100, a_names = 0x110000;
	uint64_t a_ttab = 0x300000, a_tidx = 0x300800, a_vmci = 0x380000, a_pgt = 0x390000;
	uint64_t base = KS_START + 0x1000000 + KS_SLIDE, pos = 0, stext_addr = 0;
	char vi[4096], *tok;
	uint16_t tidx[256];
	size_t tl = 0;
	int i, k, n;

	ck_assert_ptr_nonnull(img);
	/* Tokens: byte b stands for the character b, except two longer ones. */
	tok = (char *)img + a_ttab;
	for (k = 0; k < 256; k++) {
		const char *t = k == 0x80 ? "kmem_" : k == 0x81 ? "_cache" : NULL;
		char one[2] = { (char)k, '\0' };
		if (t == NULL)
			t = k >= 0x21 && k < 0x7f ? one : "?";
		tidx[k] = (uint16_t)tl;
		memcpy(tok + tl, t, strlen(t) + 1);
		tl += strlen(t) + 1;
	}
	memcpy(img + a_tidx, tidx, sizeof(tidx));
	for (i = 0; i < KS_NSYMS; i++) {
		struct ks_sym *y = &syms[i];
		uint8_t enc[400];
		int32_t off;
		size_t ne = 0, j;

		if (i == 0)
			snprintf(y->name, sizeof(y->name), "_stext");
		else if (prof != NULL && i <= 6) {
			static const char *const pn[] = { "prof_on", "prof_shift", "prof_len",
			    "prof_buffer", "tick_nsec", "_etext" };
			snprintf(y->name, sizeof(y->name), "%s", pn[i - 1]);
		} else if (i % 97 == 0) {      /* long: a two-byte length */
			/* 200-odd tokens (high byte 1) and, every other one,
			 * 300-odd (high byte 2: the low byte's top bit is not
			 * the high byte's). */
			int ll = i % 194 == 0 ? 300 : 200;
			memset(y->name, 'L', (size_t)ll);
			snprintf(y->name + ll, 40, "_%d", i);
		} else if (i % 5 == 0)
			snprintf(y->name, sizeof(y->name), "kmem_cache_fn_%d", i);
		else
			snprintf(y->name, sizeof(y->name), "sym_%d", i);
		y->type = i % 7 == 3 ? 'd' : i % 3 == 0 ? 't' : 'T';
		if (i % 50 == 7) {           /* per-CPU: absolute when the mode has them */
			y->type = 'D';
			y->addr = mode == 1 ? (uint64_t)i * 64 : base + 0x800000 + (uint64_t)i * 64;
		} else
			y->addr = base + 16 * (uint64_t)i + 0x40;
		if (prof != NULL && i >= 1 && i <= 5) {
			/* In the mapped page, at KP_VARS_PA + 16 * i. */
			y->type = 'D';
			y->addr = base + 0xa00000 + KP_VARS_PA - KP_PAGE_PA + 16 * (uint64_t)i;
		} else if (prof != NULL && i == 6) {
			/* _etext: not a multiple of 16 from _stext, so no other
			 * symbol shares its address. */
			y->type = 'T';
			y->addr = base + 0x40 + ((uint64_t)KP_BINS << prof->shift);
		}
		if (i == 0)
			stext_addr = y->addr;
		enc[ne++] = (uint8_t)y->type;
		for (j = 0; y->name[j] != '\0'; ) {
			if (strncmp(y->name + j, "kmem_", 5) == 0) {
				enc[ne++] = 0x80;
				j += 5;
			} else if (strncmp(y->name + j, "_cache", 6) == 0) {
				enc[ne++] = 0x81;
				j += 6;
			} else
				enc[ne++] = (uint8_t)y->name[j++];
		}
		if (ne >= 128) {
			img[a_names + pos++] = (uint8_t)(0x80 | (ne & 0x7f));
			img[a_names + pos++] = (uint8_t)(ne >> 7);
		} else
			img[a_names + pos++] = (uint8_t)ne;
		memcpy(img + a_names + pos, enc, ne);
		pos += ne;
		if (mode == 0)
			off = (int32_t)(uint32_t)(y->addr - base);
		else if (i % 50 == 7)
			off = (int32_t)y->addr;
		else
			off = (int32_t)(int64_t)(base - 1 - y->addr);
		memcpy(img + a_offs + 4 * (uint64_t)i, &off, 4);
	}
	ck_assert_uint_lt(a_names + pos, a_ttab);
	if (prof != NULL) {
		/* PML4[511] -> PDPT[510] -> PD: one 2 MiB page at base + 10 MiB
		 * holding the variables and the counters. */
		uint64_t va = base + 0xa00000, e, len = KP_BINS;
		ck_assert_int_eq(mode, 0);
		ck_assert_uint_eq(va & 0x1fffff, 0);
		e = (a_pgt + 0x1000) | 3;
		memcpy(img + a_pgt + 8 * ((va >> 39) & 511), &e, 8);
		e = (a_pgt + 0x2000) | 3;
		memcpy(img + a_pgt + 0x1000 + 8 * ((va >> 30) & 511), &e, 8);
		e = KP_PAGE_PA | 0x83;
		memcpy(img + a_pgt + 0x2000 + 8 * ((va >> 21) & 511), &e, 8);
		prof->stext = syms[0].addr;
		prof->etext = syms[6].addr;
		prof->buf = va + KP_BUF_PA - KP_PAGE_PA;
		memcpy(img + KP_VARS_PA + 16 * 1, &prof->on, 4);
		memcpy(img + KP_VARS_PA + 16 * 2, &prof->shift_stored, 4);
		memcpy(img + KP_VARS_PA + 16 * 3, &len, 8);
		memcpy(img + KP_VARS_PA + 16 * 4, &prof->buf, 8);
		memcpy(img + KP_VARS_PA + 16 * 5, &prof->tick_nsec, 8);
		memcpy(img + KP_BUF_PA, prof->bins, sizeof(prof->bins));
		ck_assert_uint_eq(syms[1].addr, va + KP_VARS_PA - KP_PAGE_PA + 16);
	}
	if (cut)
		memset(img + a_names + pos / 2, 0xff, a_ttab - a_names - pos / 2);
	n = KS_NSYMS;
	memcpy(img + a_num, &n, 4);
	memcpy(img + a_base, &base, 8);
	n = snprintf(vi, sizeof(vi), "OSRELEASE=6.1.0-kstest\nPAGESIZE=4096\n"
	    "SYMBOL(kallsyms_names)=%llx\nSYMBOL(kallsyms_num_syms)=%llx\n"
	    "SYMBOL(kallsyms_token_table)=%llx\nSYMBOL(kallsyms_token_index)=%llx\n"
	    "SYMBOL(kallsyms_offsets)=%llx\nSYMBOL(kallsyms_relative_base)=%llx\n"
	    "%sNUMBER(phys_base)=%lld\nSYMBOL(init_top_pgt)=%llx\nKERNELOFFSET=%llx\n",
	    (unsigned long long)(ks_va(a_names) + KS_SLIDE), (unsigned long long)(ks_va(a_num) + KS_SLIDE),
	    (unsigned long long)(ks_va(a_ttab) + KS_SLIDE), (unsigned long long)(ks_va(a_tidx) + KS_SLIDE),
	    (unsigned long long)(ks_va(a_offs) + KS_SLIDE), (unsigned long long)(ks_va(a_base) + KS_SLIDE),
	    stext ? "SYMBOL(_stext)=" : "", (long long)KS_PHYS_BASE - (long long)KS_SLIDE,
	    (unsigned long long)(ks_va(a_pgt) + KS_SLIDE), (unsigned long long)KS_SLIDE);
	/* The _stext line, when wanted, goes where the %s was. */
	if (stext) {
		char *at = strstr(vi, "SYMBOL(_stext)=");
		char rest[4096], num[40];
		snprintf(rest, sizeof(rest), "%s", at + 15);
		snprintf(num, sizeof(num), "%llx\n", (unsigned long long)stext_addr);
		snprintf(at + 15, sizeof(vi) - (size_t)(at + 15 - vi), "%s%s", num, rest);
	}
	if (drop != NULL) {
		char *at = strstr(vi, drop);
		ck_assert_ptr_nonnull(at);
		memmove(at, strchr(at, '\n') + 1, strlen(strchr(at, '\n') + 1) + 1);
	}
	memcpy(img + a_vmci, vi, strlen(vi) + 1);
	/* As under KASLR, the image runs KS_SLIDE above its link address and
	 * phys_base (negative here) compensates: runtime ks_va(pa) + KS_SLIDE
	 * is physical pa. */
	snprintf(path, sizeof(path), "%s", path_join(test_tmpdir(), "kallsyms.raw"));
	ck_assert_int_eq(write_file(path, img, KS_IMG), 0);
	free(img);
	return path;
}

START_TEST(kallsyms_from_memory)
{
	static struct ks_sym syms[KS_NSYMS];
	int mode = _i / 2;
	bool stext = _i % 2 == 0;
	char err[KVS_ERRBUF_SIZE];
	const char *img = ks_image(syms, mode, stext, NULL, false, NULL);
	kvs_t *kd = kvs_open(NULL, img, KVS_O_RAW, err);
	uint64_t top = 0;
	int i;

	ck_assert_msg(kd != NULL, "mode %d: %s", mode, err);
	for (i = 0; i < KS_NSYMS; i++)
		if (syms[i].addr > top)
			top = syms[i].addr;
	for (i = 0; i < KS_NSYMS; i++) {
		uint64_t a, off;
		const char *at;
		ck_assert_msg(kvs_symbol(kd, syms[i].name, &a, NULL) == 0, "mode %d %s: %s", mode,
		    syms[i].name, kvs_geterr(kd));
		ck_assert_msg(a == syms[i].addr, "mode %d %s at 0x%llx, not 0x%llx", mode,
		    syms[i].name, (unsigned long long)a, (unsigned long long)syms[i].addr);
		if (mode == 1 && i % 50 == 7)
			continue;
		at = kvs_symbol_at(kd, syms[i].addr + 3, &off);
		if (syms[i].addr == top) {
			/* the highest symbol has no size: an address past it (a
			 * module's) is in no symbol of the kernel */
			ck_assert_msg(at == NULL, "mode %d: 0x%llx past the last symbol is %s", mode,
			    (unsigned long long)syms[i].addr + 3, at);
			continue;
		}
		ck_assert_msg(at != NULL && strcmp(at, syms[i].name) == 0 && off == 3,
		    "mode %d: 0x%llx is %s+%llu, not %s+3", mode,
		    (unsigned long long)syms[i].addr + 3, at ? at : "(none)",
		    (unsigned long long)off, syms[i].name);
	}
	kvs_close(kd);
}
END_TEST

START_TEST(kallsyms_bad)
{
	static struct ks_sym syms[KS_NSYMS];
	char err[KVS_ERRBUF_SIZE];
	const char *img = ks_image(syms, 1, true, "SYMBOL(kallsyms_names)", false, NULL);

	ck_assert_ptr_null(kvs_open(NULL, img, KVS_O_RAW, err));
	/* a VMCOREINFO without the names: the tables are searched for (this
	 * image's are not where kallsyms_find.c looks), and the message says
	 * both */
	ck_assert_msg(strstr(err, "does not name the kallsyms tables") != NULL &&
	    strstr(err, "-N") != NULL, "%s", err);
	img = ks_image(syms, 1, true, NULL, true, NULL);
	ck_assert_ptr_null(kvs_open(NULL, img, KVS_O_RAW, err));
	ck_assert_msg(strstr(err, "kallsyms_names is corrupt") != NULL, "%s", err);
	ck_assert_ptr_null(kvs_open(NULL, fixture_path("fbsd14/vmcore.minidump3"), 0, err));
	ck_assert_msg(strstr(err, "no kernel file given (-N)") != NULL, "%s", err);
}
END_TEST

/*
 * prof_buffer read as a kvmprof histogram: every counter where the test put
 * it, the text from _stext to _etext in bins of 2^prof_shift bytes, the last
 * bin readprofile's *unknown*, the rate HZ from tick_nsec rounded to the
 * nearest (an NTP-adjusted tick a little longer than 1/250 s is 250 Hz).
 */
static struct ks_prof *
kp_model(void)
{
	struct ks_prof *p = calloc(1, sizeof(*p));
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t i;

	ck_assert_ptr_nonnull(p);
	p->on = 1;
	p->shift = p->shift_stored = 3;
	p->tick_nsec = 4000250;
	for (i = 0; i < KP_BINS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p->bins[i] = i % 3 == 0 ? 0 : (uint32_t)(x % 100000);
	}
	p->bins[KP_BINS - 1] = 777777;
	return p;
}

START_TEST(profile_from_memory)
{
	static struct ks_sym syms[KS_NSYMS];
	struct ks_prof *p = kp_model();
	char err[KVS_ERRBUF_SIZE];
	const char *img = ks_image(syms, 0, true, NULL, false, p);
	kvs_t *kd = kvs_open(NULL, img, KVS_O_RAW, err);
	kvmprof_gmon_t *g;
	uint64_t a;
	size_t i;

	ck_assert_msg(kd != NULL, "%s", err);
	ck_assert_int_eq(kvs_symbol(kd, "_etext", &a, NULL), 0);
	ck_assert_uint_eq(a, p->etext);
	g = kvmprof_gmon_read(kd);
	ck_assert_msg(g != NULL, "%s", kvs_geterr(kd));
	ck_assert_int_eq(kvmprof_gmon_state(g), KVMPROF_ON);
	ck_assert_int_eq(kvmprof_gmon_format(g), KVMPROF_FMT_READPROFILE);
	ck_assert_int_eq(kvmprof_gmon_counter_bits(g), 32);
	ck_assert_int_eq(kvmprof_gmon_profrate(g), 250);
	ck_assert_uint_eq(kvmprof_gmon_lowpc(g), p->stext);
	ck_assert_uint_eq(kvmprof_gmon_highpc(g), p->stext + ((uint64_t)KP_BINS << p->shift));
	ck_assert_uint_eq(kvmprof_gmon_highpc(g), p->etext);
	ck_assert_uint_eq(kvmprof_gmon_nbins(g), KP_BINS);
	ck_assert_uint_eq(kvmprof_gmon_binsize(g), 1ULL << p->shift);
	for (i = 0; i < KP_BINS; i++)
		ck_assert_msg(kvmprof_gmon_bin(g, i) == p->bins[i], "bin %zu: %llu, put %u", i,
		    (unsigned long long)kvmprof_gmon_bin(g, i), p->bins[i]);
	kvmprof_gmon_free(g);
	kvs_close(kd);
	free(p);
}
END_TEST

/* Profiling off, and a prof_shift that prof_len and _etext contradict:
 * no histogram, each with its reason. */
START_TEST(profile_refused)
{
	static struct ks_sym syms[KS_NSYMS];
	struct ks_prof *p = kp_model();
	char err[KVS_ERRBUF_SIZE];
	kvs_t *kd;
	int k;

	for (k = 0; k < 2; k++) {
		p->on = k == 0 ? 0 : 1;
		p->shift_stored = k == 0 ? 3 : 4;
		kd = kvs_open(NULL, ks_image(syms, 0, true, NULL, false, p), KVS_O_RAW, err);
		ck_assert_msg(kd != NULL, "%s", err);
		ck_assert_ptr_null(kvmprof_gmon_read(kd));
		if (k == 0) {
			ck_assert_int_eq(kvs_errstatus(kd), KVS_E_NOSYMBOL);
			ck_assert_msg(strstr(kvs_geterr(kd), "prof_on is 0") != NULL, "%s",
			    kvs_geterr(kd));
		} else {
			ck_assert_int_eq(kvs_errstatus(kd), KVS_E_DATA);
			ck_assert_msg(strstr(kvs_geterr(kd), "prof_shift (4)") != NULL, "%s",
			    kvs_geterr(kd));
		}
		kvs_close(kd);
	}
	free(p);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("linux");
	TCase *tc = tcase_create("slub");
	TCase *tk = tcase_create("kernel");
	TCase *th = tcase_create("hostile");

	tcase_set_timeout(tc, 60);
	tcase_set_timeout(tk, 60);
	tcase_set_timeout(th, 60);
	tcase_add_loop_test(tc, slab_equals_truth, 0, NDUMPS);
	tcase_add_loop_test(tc, cli_json_equals_truth, 0, NDUMPS);
	tcase_add_loop_test(tc, cli_slabinfo_equals_truth, 0, NDUMPS);
	tcase_add_loop_test(tc, freelist_at_bound, 0, NDUMPS);
	tcase_add_test(tc, kaslr_equals_nokaslr);
	tcase_add_test(tc, raw_equals_elf);
	tcase_add_test(tc, raw_at_base);
	tcase_add_test(tc, partial_rows_kept);
	tcase_add_loop_test(tk, dmesg_equals_truth, 0, NDUMPS);
	tcase_add_loop_test(tk, dmesg_wrapped_block_bounded, 1, 2);
	tcase_add_loop_test(tk, dmesg_wrapped_block_bounded, 3, 4);
	tcase_add_loop_test(tk, kernel_info_equals_truth, 0, NDUMPS);
	tcase_add_loop_test(tk, translation_equals_truth, 0, NDUMPS);
	tcase_add_test(tk, raw_without_vmcoreinfo);
	tcase_add_test(tk, raw_decoy_format_block);
	tcase_add_loop_test(tk, wrong_kernel, 0, NDUMPS);
	tcase_add_test(tk, linux_kernel_freebsd_dump);
	tcase_add_loop_test(tk, kallsyms_from_memory, 0, 4);
	tcase_add_test(tk, kallsyms_bad);
	tcase_add_test(tk, profile_from_memory);
	tcase_add_test(tk, profile_refused);
	tcase_add_test(th, hostile_list_loops);
	tcase_add_test(th, hostile_rows_named);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tk);
	suite_add_tcase(s, th);
	return run_suite(s);
}
