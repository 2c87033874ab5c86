/*
 * fuzz_lcache_roundtrip.c - libFuzzer harness for the layout cache's write
 * and read (types/cache.c): answers kept, written, then read back by the
 * next handle must be the answers kept.
 *
 * The input is decoded into a list of answers as the type readers hand
 * them to the cache (kvs_lcache_put, kvs_lcache_members_put): questions
 * T/M/V/L with arbitrary names (any bytes but NUL, up to 5000 of them),
 * type infos and member lists of arbitrary numbers, kinds, bit sizes up
 * to 64 and bit offsets within their byte, as BTF and DWARF give them, or
 * "not found" messages.  Three handles on one kernel file
 * (fixtures/dwarf-test/t.dwarf4), in a private $XDG_CACHE_HOME emptied
 * before each input:
 *   1. keeps the first half, and is closed (written);
 *   2. must answer the first half as handle 1 did, keeps the second half,
 *      and is closed (merged with the file and written);
 *   3. must answer every question as the handle that kept it did.
 * A question never kept is not answered; no handle may warn (a warning
 * means the file written was refused).
 */
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvs_private.h"
#include "types.h"
#include "fz.h"

#define MAXQ 48

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static Elf *kelf;
static int kfd = -1;
static char cache_sub[300];
static int warned;
static char warning[512];

static void
on_warning(void *arg, const char *msg)
{
	(void)arg;
	warned = 1;
	snprintf(warning, sizeof(warning), "%s", msg);
}
static const struct kvs_notify note = { on_warning, NULL, true };

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *k = fz_fixture("../dwarf-test/t.dwarf4");

	(void)argc;
	(void)argv;
	snprintf(cache_sub, sizeof(cache_sub), "%s/kvmstat", fz_private_cache());
	elf_version(EV_CURRENT);
	if ((kfd = open(k, O_RDONLY | O_CLOEXEC)) < 0)
		fz_die("open", k);
	if ((kelf = elf_begin(kfd, ELF_C_READ, NULL)) == NULL)
		fz_die("elf_begin", k);
	return 0;
}

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t
take(struct in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		v |= (uint64_t)(in->n > 0 ? *in->p : 0) << (8 * i);
		if (in->n > 0) {
			in->p++;
			in->n--;
		}
	}
	return v;
}

/* A string: a length byte (0xff: 5000 bytes, past what the cache keeps),
 * then its bytes, NULs made 'x'; NULL for length 0xfe. */
static char *
take_str(struct in *in, int may_null)
{
	unsigned len = (unsigned)take(in, 1);
	char *s;

	if (len == 0xfe && may_null)
		return NULL;
	if (len == 0xff)
		len = 5000;
	if ((s = malloc(len + 1)) == NULL)
		abort();
	for (unsigned i = 0; i < len; i++) {
		uint8_t c = in->n > 0 ? in->p[i % in->n] : 'a';
		s[i] = c != 0 ? (char)c : 'x';
	}
	s[len] = '\0';
	/* a long string repeats the input's bytes; a short one uses them up */
	if (len < 0xfe) {
		size_t k = len < in->n ? len : in->n;
		in->p += k;
		in->n -= k;
	}
	return s;
}

static kvs_kind_t
take_kind(struct in *in)
{
	return (kvs_kind_t)(take(in, 1) % (KVS_KIND_VOID + 1));
}

struct q {
	char q;
	char *a, *b;
	/* what the keeping handle answered right after keeping it */
	int cached;
	struct kvs_typeinfo ti;
	char *type_name, *msg;
	struct kvs_member_info *mem;
	size_t nmem;
};

static void
q_free(struct q *q)
{
	free(q->a);
	free(q->b);
	free(q->type_name);
	free(q->msg);
	for (size_t i = 0; i < q->nmem; i++) {
		free((char *)q->mem[i].name);
		free((char *)q->mem[i].type_name);
	}
	free(q->mem);
	memset(q, 0, sizeof(*q));
}

static char *
dup_or_null(const char *s)
{
	char *d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		abort();
	return d;
}

static void
die(const struct q *q, const char *what)
{
	fprintf(stderr, "fuzz_lcache_roundtrip: %c \"%.60s\" \"%.60s\": %s\n", q->q, q->a,
	    q->b != NULL ? q->b : "", what);
	abort();
}

/* The answer c gives to q, into r (copies); cached 0 when none. */
static void
answer(struct kvs_lcache *c, const struct q *q, struct q *r)
{
	const char *nf = NULL;

	r->cached = 0;
	if (q->q == 'L') {
		const struct kvs_member_info *m = NULL;
		size_t n = 0;
		if (kvs_lcache_members_get(c, q->a, &m, &n, &nf) != 1)
			return;
		r->cached = 1;
		r->msg = dup_or_null(nf);
		if (nf == NULL && n > 0) {
			if ((r->mem = calloc(n, sizeof(*r->mem))) == NULL)
				abort();
			for (size_t i = 0; i < n; i++) {
				r->mem[i] = m[i];
				r->mem[i].name = dup_or_null(m[i].name);
				r->mem[i].type_name = dup_or_null(m[i].type_name);
			}
			r->nmem = n;
		}
		return;
	}
	if (kvs_lcache_get(c, q->q, q->a, q->b, &r->ti, &nf) != 1)
		return;
	r->cached = 1;
	r->msg = dup_or_null(nf);
	if (nf == NULL)
		r->type_name = dup_or_null(r->ti.type_name);
	r->ti.type_name = NULL;
}

static int
str_eq(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void
same(const struct q *q, const struct q *want, const struct q *got)
{
	if (want->cached != got->cached)
		die(q, got->cached ? "answered, but never kept" : "kept, but not answered");
	if (!want->cached)
		return;
	if (!str_eq(want->msg, got->msg))
		die(q, "the not-found message differs");
	if (want->msg != NULL)
		return;
	if (q->q != 'L') {
		const struct kvs_typeinfo *a = &want->ti, *b = &got->ti;
		if (a->offset != b->offset || a->size != b->size || a->kind != b->kind ||
		    a->count != b->count || a->elem_size != b->elem_size ||
		    a->elem_kind != b->elem_kind || a->bit_size != b->bit_size ||
		    a->bit_offset != b->bit_offset || !str_eq(want->type_name, got->type_name))
			die(q, "the type info differs");
		return;
	}
	if (want->nmem != got->nmem)
		die(q, "the member count differs");
	for (size_t i = 0; i < want->nmem; i++) {
		const struct kvs_member_info *a = &want->mem[i], *b = &got->mem[i];
		if (!str_eq(a->name, b->name) || a->offset != b->offset ||
		    a->bit_offset != b->bit_offset || a->bit_size != b->bit_size ||
		    a->size != b->size || !str_eq(a->type_name, b->type_name) ||
		    a->kind != b->kind || a->depth != b->depth)
			die(q, "a member differs");
	}
}

/* Decode one answer from in and keep it in c; the question into q. */
static void
keep(struct kvs_lcache *c, struct in *in, struct q *q)
{
	static const char qs[] = "TMVL";
	unsigned op = (unsigned)take(in, 1);
	int found = !(op & 4);

	q->q = qs[op & 3];
	q->a = take_str(in, 0);
	q->b = q->q == 'M' ? take_str(in, 0) : NULL;
	if (!found) {
		char *msg = take_str(in, 0);
		if (q->q == 'L')
			kvs_lcache_members_put(c, q->a, NULL, 0, msg);
		else
			kvs_lcache_put(c, q->q, q->a, q->b, NULL, msg);
		free(msg);
		return;
	}
	if (q->q != 'L') {
		struct kvs_typeinfo ti;
		ti.offset = take(in, 8);
		ti.size = take(in, 8);
		ti.kind = take_kind(in);
		ti.count = take(in, 8);
		ti.elem_size = take(in, 8);
		ti.elem_kind = take_kind(in);
		ti.bit_size = (unsigned)(take(in, 1) % 65);
		ti.bit_offset = (unsigned)(take(in, 1) % 8);
		ti.type_name = take_str(in, 1);
		kvs_lcache_put(c, q->q, q->a, q->b, &ti, NULL);
		free((char *)ti.type_name);
		return;
	}
	{
		size_t n = (size_t)(take(in, 1) % 8), i;
		struct kvs_member_info m[8];
		for (i = 0; i < n; i++) {
			m[i].name = take_str(in, 1);
			m[i].bit_offset = take(in, 8);
			m[i].offset = m[i].bit_offset / 8;
			m[i].bit_size = (unsigned)(take(in, 1) % 65);
			m[i].size = take(in, 8);
			m[i].type_name = take_str(in, 1);
			m[i].kind = take_kind(in);
			m[i].depth = (unsigned)(take(in, 1) % 65);
		}
		kvs_lcache_members_put(c, q->a, m, n, NULL);
		for (i = 0; i < n; i++) {
			free((char *)m[i].name);
			free((char *)m[i].type_name);
		}
	}
}

/* What a handle must answer to qs[i] once qs[0..n) were kept: the first
 * answer kept for that question (a later one is not taken), else none. */
static const struct q *
expect(const struct q *qs, const struct q *want, size_t i, size_t n)
{
	for (size_t j = 0; j < n; j++)
		if (want[j].cached && qs[j].q == qs[i].q && strcmp(qs[j].a, qs[i].a) == 0 &&
		    str_eq(qs[j].b, qs[i].b))
			return &want[j];
	return &want[i];
}

static struct kvs_lcache *
open_cache(void)
{
	struct kvs_lcache *c = kvs_lcache_open(kelf, kfd, NULL, -1, "dwarf", &note);

	if (c == NULL)
		fz_die("kvs_lcache_open", cache_sub);
	return c;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct q qs[MAXQ], want[MAXQ], got;
	struct in in = { data, size };
	struct kvs_lcache *c;
	size_t n = 0, half, i;

	fz_rm_tree(cache_sub, 0);
	warned = 0;
	/* handle 1: the first half */
	c = open_cache();
	half = (size_t)(take(&in, 1) % (MAXQ / 2 + 1));
	for (; n < half && in.n > 0; n++) {
		keep(c, &in, &qs[n]);
		answer(c, &qs[n], &want[n]);
	}
	half = n;
	kvs_lcache_close(c, true);
	/* handle 2: the first half back, then the second half */
	c = open_cache();
	for (i = 0; i < half; i++) {
		answer(c, &qs[i], &got);
		same(&qs[i], expect(qs, want, i, half), &got);
		q_free(&got);
	}
	for (; n < MAXQ && in.n > 0; n++) {
		keep(c, &in, &qs[n]);
		answer(c, &qs[n], &want[n]);
	}
	kvs_lcache_close(c, true);
	/* handle 3: everything */
	c = open_cache();
	for (i = 0; i < n; i++) {
		answer(c, &qs[i], &got);
		same(&qs[i], expect(qs, want, i, n), &got);
		q_free(&got);
	}
	kvs_lcache_close(c, false);
	if (warned) {
		fprintf(stderr, "fuzz_lcache_roundtrip: the cache warned: %s\n", warning);
		abort();
	}
	for (i = 0; i < n; i++) {
		q_free(&qs[i]);
		q_free(&want[i]);
	}
	return 0;
}
