/*
 * cmd_diff.c - `kvmstat [-N kernel] diff CORE_A CORE_B [--kernel-b KERNEL]`:
 * what grew between two dumps, or two moments of one system.  For every
 * malloc type, UMA zone and SLUB cache, the memory and the allocations in
 * use in A and in B and the change, largest growth first.
 *
 * Either side may be a saved `kvmstat --json malloc|zone|slab` document
 * instead of a dump; then only the allocators both sides hold are compared.
 * Entries are first paired as one kernel object: same allocator, address
 * ("kaddr" in a saved document), name, and item size for UMA zones.  If any
 * pair so (two moments of one boot), every entry left over is its own row,
 * appeared (only in B) or vanished (only in A), even when the other side has
 * one of its name: a module's type unloaded and another's loaded.  If none
 * pairs (other boots or KASLR slides), or the sides are dumps of two kernel
 * files (--kernel-b), rows are matched by allocator and name (and UMA item
 * size), rows of one name summed (FreeBSD has several "devbuf" types).  Text
 * shows the rows that changed; --json has every row (docs/json.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "memstat.h"
#include "sysdefault.h"

enum { AL_MALLOC, AL_UMA, AL_SLAB, AL_N };
static const char *const al_names[AL_N] = { "malloc", "uma", "slab" };

/* One malloc type, zone or cache of one side, as read. */
struct dent {
	int alloc, side;
	char *name;
	uint64_t size;          /* UMA item size; 0 for the others */
	uint64_t kaddr;         /* 0: not known (a saved row without one) */
	uint64_t bytes, count;
	bool used;              /* already in a row */
};

struct drow {
	int alloc;
	const char *name;       /* an entry's */
	uint64_t size;
	bool in[2];
	uint64_t kaddr[2];      /* matched by address: each side's; else 0 */
	uint64_t bytes[2], count[2];
};

struct dtable {
	struct dent *e;
	size_t ne, cape;
	struct drow *r;
	size_t n, cap;
	bool have[2][AL_N];     /* which allocators each side holds */
	bool one_kernel;        /* not two kernel files: addresses may pair */
	bool by_addr;           /* some entry paired by address: one boot */
};

/* Room for one more element of size sz in *v (n used of *cap). */
static int
grow(void **v, size_t *cap, size_t n, size_t sz)
{
	size_t nc;
	void *nv;

	if (n < *cap)
		return 0;
	nc = *cap ? 2 * *cap : 256;
	if ((nv = realloc(*v, nc * sz)) == NULL)
		return -1;
	*v = nv;
	*cap = nc;
	return 0;
}

static int
add(struct dtable *t, int side, int alloc, const char *name, uint64_t size,
    uint64_t kaddr, uint64_t bytes, uint64_t count)
{
	struct dent *e;

	if (grow((void **)&t->e, &t->cape, t->ne, sizeof(*e)) != 0)
		return -1;
	e = &t->e[t->ne];
	*e = (struct dent){ .alloc = alloc, .side = side, .size = size, .kaddr = kaddr,
	    .bytes = bytes, .count = count };
	if ((e->name = strdup(name)) == NULL)
		return -1;
	t->ne++;
	return 0;
}

static struct drow *
new_row(struct dtable *t, const struct dent *e)
{
	struct drow *r;

	if (grow((void **)&t->r, &t->cap, t->n, sizeof(*r)) != 0)
		return NULL;
	r = &t->r[t->n++];
	*r = (struct drow){ .alloc = e->alloc, .name = e->name, .size = e->size };
	return r;
}

/* Matching by name: the row of e's allocator, name and size, or a new one. */
static struct drow *
name_row(struct dtable *t, const struct dent *e)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->r[i].alloc == e->alloc && t->r[i].size == e->size &&
		    strcmp(t->r[i].name, e->name) == 0)
			return &t->r[i];
	return new_row(t, e);
}

static void
put(struct dtable *t, struct drow *r, struct dent *e)
{
	r->in[e->side] = true;
	r->bytes[e->side] += e->bytes;
	r->count[e->side] += e->count;
	if (t->by_addr)
		r->kaddr[e->side] = e->kaddr;
	e->used = true;
}

/* x of A and y of B are one kernel object. */
static bool
same_object(const struct dent *x, const struct dent *y)
{
	return x->side == 0 && y->side == 1 && !y->used && x->alloc == y->alloc &&
	    x->kaddr != 0 && x->kaddr == y->kaddr && x->size == y->size &&
	    strcmp(x->name, y->name) == 0;
}

/* The rows: pairs by address first; what is left is a row of its own if any
 * entry paired so, else is matched by name. */
static int
match(struct dtable *t)
{
	struct drow *r;
	size_t i, j;

	for (i = 0; i < t->ne && t->one_kernel; i++)
		for (j = 0; j < t->ne; j++) {
			if (!same_object(&t->e[i], &t->e[j]))
				continue;
			t->by_addr = true;
			if ((r = new_row(t, &t->e[i])) == NULL)
				return -1;
			put(t, r, &t->e[i]);
			put(t, r, &t->e[j]);
			break;
		}
	for (i = 0; i < t->ne; i++) {
		if (t->e[i].used)
			continue;
		if ((r = t->by_addr ? new_row(t, &t->e[i]) : name_row(t, &t->e[i])) == NULL)
			return -1;
		put(t, r, &t->e[i]);
	}
	return 0;
}

static int
fail(const struct opts *o, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(const struct opts *o, const char *code, const char *fmt, ...)
{
	char msg[2048], clean[4 * sizeof(msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "kvmstat: diff: %s\n", sanitize(clean, sizeof(clean), msg,
	    strlen(msg), false));
	if (o->json) {
		char m[sizeof(msg) + 8];
		snprintf(m, sizeof(m), "diff: %s", msg);
		json_error(code, m);
	}
	return 1;
}

/* A saved --json document: malloc "types", zone "zones" or slab "caches". */
static int
load_json(const struct opts *o, struct dtable *t, int side, const char *path)
{
	static const struct { const char *key; int alloc; } kinds[] = {
		{ "types", AL_MALLOC }, { "zones", AL_UMA }, { "caches", AL_SLAB },
	};
	json_error_t je;
	json_t *doc = json_load_file(path, 0, &je), *rows, *r;
	const char *schema;
	size_t k, i;
	int found = 0;

	if (doc == NULL)
		return fail(o, "read", "%s: not a JSON document: %s (line %d)", path, je.text,
		    je.line);
	schema = json_string_value(json_object_get(doc, "schema"));
	if (schema == NULL || strcmp(schema, KVS_JSON_SCHEMA) != 0) {
		json_decref(doc);
		return fail(o, "read", "%s: not a kvmstat --json document (schema %s, "
		    "wanted %s)", path, schema ? schema : "missing", KVS_JSON_SCHEMA);
	}
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		if ((rows = json_object_get(doc, kinds[k].key)) == NULL || !json_is_array(rows))
			continue;
		found = 1;
		t->have[side][kinds[k].alloc] = true;
		json_array_foreach(rows, i, r) {
			const char *name = json_string_value(json_object_get(r, "name"));
			json_t *c = json_object_get(r, "count"), *b = json_object_get(r, "bytes");
			json_t *s = json_object_get(r, "size");
			const char *ka = json_string_value(json_object_get(r, "kaddr"));
			if (name == NULL || !json_is_integer(c) || !json_is_integer(b) ||
			    (kinds[k].alloc == AL_UMA && !json_is_integer(s))) {
				json_decref(doc);
				return fail(o, "read", "%s: %s row %zu lacks name, count or bytes",
				    path, kinds[k].key, i);
			}
			if (add(t, side, kinds[k].alloc, name, kinds[k].alloc == AL_UMA ?
			    (uint64_t)json_integer_value(s) : 0, ka ? strtoull(ka, NULL, 16) : 0,
			    (uint64_t)json_integer_value(b),
			    (uint64_t)json_integer_value(c)) != 0) {
				json_decref(doc);
				return fail(o, "read", "out of memory");
			}
		}
	}
	json_decref(doc);
	if (!found)
		return fail(o, "read", "%s: a kvmstat document without malloc types, zones "
		    "or slab caches (save `kvmstat --json malloc`, `zone` or `slab`)", path);
	return 0;
}

/* Which of diff's allocators an entry is, or -1. */
static int
al_of(const struct memory_type *mt)
{
	switch (memstat_get_allocator(mt)) {
	case ALLOCATOR_MALLOC:
		return AL_MALLOC;
	case ALLOCATOR_UMA:
		return AL_UMA;
	case ALLOCATOR_SLAB:
		return AL_SLAB;
	}
	return -1;
}

/* A dump: every allocator its kernel has, through the family-neutral
 * memstat_kvm_all.  The side holds the allocators its entries come from.
 * A failed read keeps the allocators it read before failing (a fresh list
 * holds only what was read whole), so a kernel whose UMA layout is not
 * readable still compares its malloc types. */
static int
load_dump(const struct opts *o, struct dtable *t, int side, const char *path,
    const char *kernel)
{
	char errbuf[KVS_ERRBUF_SIZE];
	kvs_t *kd = kvs_open(kernel, path, o->open_flags, errbuf);
	struct memory_type_list *l;
	struct memory_type *mt;
	int any = 0;

	if (kd == NULL)
		return fail(o, "open", "%s", errbuf);
	if ((l = memstat_mtl_alloc()) == NULL) {
		kvs_close(kd);
		return fail(o, "read", "out of memory");
	}
	(void)memstat_kvm_all(l, kd);
	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
		int a = al_of(mt);
		if (a < 0)
			continue;
		any = 1;
		t->have[side][a] = true;
		if (add(t, side, a, memstat_get_name(mt), a == AL_UMA ?
		    memstat_get_size(mt) : 0, memstat_get_kaddr(mt), memstat_get_bytes(mt),
		    memstat_get_count(mt)) != 0) {
			memstat_mtl_free(l);
			kvs_close(kd);
			return fail(o, "read", "out of memory");
		}
	}
	memstat_mtl_free(l);
	kvs_close(kd);
	if (!any)
		return fail(o, "read", "%s: no malloc types, UMA zones or slab caches could be "
		    "read", path);
	return 0;
}

/* A file whose first non-blank byte is '{' is a saved JSON document. */
static int
is_json(const char *path)
{
	FILE *f = fopen(path, "rb");
	int c = EOF;

	if (f == NULL)
		return 0;
	while ((c = fgetc(f)) != EOF && (c == ' ' || c == '\t' || c == '\n' || c == '\r'))
		;
	fclose(f);
	return c == '{';
}

static int64_t
delta_b(const struct drow *r)
{
	return (int64_t)(r->bytes[1] - r->bytes[0]);
}

static int64_t
delta_c(const struct drow *r)
{
	return (int64_t)(r->count[1] - r->count[0]);
}

static int
cmp_growth(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	int c;

	if (delta_b(x) != delta_b(y))
		return delta_b(x) < delta_b(y) ? 1 : -1;
	if (delta_c(x) != delta_c(y))
		return delta_c(x) < delta_c(y) ? 1 : -1;
	if (x->alloc != y->alloc)
		return x->alloc - y->alloc;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->kaddr[0] != y->kaddr[0])
		return x->kaddr[0] < y->kaddr[0] ? -1 : 1;
	return x->kaddr[1] < y->kaddr[1] ? -1 : x->kaddr[1] > y->kaddr[1];
}

static const char *
status(const struct drow *r)
{
	if (!r->in[0])
		return "appeared";
	if (!r->in[1])
		return "vanished";
	return r->bytes[0] == r->bytes[1] && r->count[0] == r->count[1] ? "same" : "changed";
}

static int
load_side(const struct opts *o, struct dtable *t, int side, const char *path,
    const char *kernel, char *kbuf, size_t klen, const char **kused)
{
	*kused = NULL;
	if (is_json(path))
		return load_json(o, t, side, path);
	if (kernel == NULL) {
		if (sys_default_kernel(kbuf, klen) != 0)
			return fail(o, "open", "%s is a dump and needs its kernel: %s", path, kbuf);
		kernel = kbuf;
	}
	*kused = kernel;
	return load_dump(o, t, side, path, kernel);
}

int
cmd_diff(kvs_t *unused, const struct opts *o)
{
	struct dtable t = { 0 };
	char ka[4096], kb[4096];
	const char *kused[2];
	size_t i, kept = 0, same = 0;
	int rc = 1;

	(void)unused;
	if (o->nargs != 2)
		return usage_error(o->json, "diff takes two dumps (or saved --json outputs): "
		    "CORE_A CORE_B");
	if (o->core != NULL || o->demo)
		return usage_error(o->json, "diff takes its dumps as arguments, not -M or --demo");
	if (load_side(o, &t, 0, o->args[0], o->kernel, ka, sizeof(ka), &kused[0]) != 0 ||
	    load_side(o, &t, 1, o->args[1], o->kernel_b ? o->kernel_b : o->kernel, kb,
	    sizeof(kb), &kused[1]) != 0)
		goto out;
	/* Only what both sides hold: a saved malloc document against a dump
	 * compares malloc types alone. */
	for (i = 0; i < t.ne; i++) {
		int a = t.e[i].alloc;
		if (t.have[0][a] && t.have[1][a])
			t.e[kept++] = t.e[i];
		else
			free(t.e[i].name);
	}
	t.ne = kept;
	/* Two kernel files (--kernel-b): one address means nothing across them. */
	t.one_kernel = kused[0] == NULL || kused[1] == NULL || strcmp(kused[0], kused[1]) == 0;
	if (match(&t) != 0) {
		fail(o, "read", "out of memory");
		goto out;
	}
	if (t.n == 0) {
		bool both = false;
		for (i = 0; i < AL_N; i++)
			both |= t.have[0][i] && t.have[1][i];
		if (!both) {
			fail(o, "read", "%s and %s hold no allocator in common", o->args[0],
			    o->args[1]);
			goto out;
		}
	}
	qsort(t.r, t.n, sizeof(t.r[0]), cmp_growth);
	if (o->json) {
		struct emitter e;
		json_t *rows = json_array();
		int s;
		emit_init(&e, true, stdout);
		for (s = 0; s < 2; s++) {
			json_t *src = json_object();
			json_object_set_new(src, "source", json_dumpstr(o->args[s]));
			json_object_set_new(src, "kernel", json_dumpstr(kused[s]));
			json_object_set_new(emit_json_root(&e), s == 0 ? "a" : "b", src);
		}
		for (i = 0; i < t.n; i++) {
			const struct drow *r = &t.r[i];
			json_t *j = json_object();
			json_object_set_new(j, "allocator", json_string(al_names[r->alloc]));
			json_object_set_new(j, "name", json_dumpstr(r->name));
			if (r->alloc == AL_UMA)
				json_object_set_new(j, "size", json_integer((json_int_t)r->size));
			json_object_set_new(j, "status", json_string(status(r)));
			for (s = 0; s < 2 && t.by_addr; s++)
				json_object_set_new(j, s == 0 ? "kaddr_a" : "kaddr_b",
				    r->in[s] ? json_kaddr(r->kaddr[s]) : json_null());
			/* In use: signed, as malloc's and zone's (cli.h). */
			json_object_set_new(j, "bytes_a", json_integer(signed_count(r->bytes[0])));
			json_object_set_new(j, "bytes_b", json_integer(signed_count(r->bytes[1])));
			json_object_set_new(j, "delta_bytes", json_integer(delta_b(r)));
			json_object_set_new(j, "count_a", json_integer(signed_count(r->count[0])));
			json_object_set_new(j, "count_b", json_integer(signed_count(r->count[1])));
			json_object_set_new(j, "delta_count", json_integer(delta_c(r)));
			json_array_append_new(rows, j);
		}
		json_object_set_new(emit_json_root(&e), "matched_by",
		    json_string(t.by_addr ? "address" : "name"));
		json_object_set_new(emit_json_root(&e), "rows", rows);
		rc = emit_finish(&e);
		goto out;
	}
	printf("%-6s %-26s %14s %14s %14s %10s %10s %10s  %s\n", "ALLOC", "NAME", "BYTES A",
	    "BYTES B", "DELTA BYTES", "COUNT A", "COUNT B", "DELTA", "STATUS");
	for (i = 0; i < t.n; i++) {
		const struct drow *r = &t.r[i];
		char name[4 * MEMTYPE_MAXNAME + 32], clean[4 * MEMTYPE_MAXNAME + 1];

		if (strcmp(status(r), "same") == 0) {
			same++;
			continue;
		}
		sanitize(clean, sizeof(clean), r->name, strlen(r->name), false);
		if (r->alloc == AL_UMA)
			snprintf(name, sizeof(name), "%s (%" PRIu64 ")", clean, r->size);
		else
			snprintf(name, sizeof(name), "%s", clean);
		printf("%-6s %-26s %14" PRId64 " %14" PRId64 " %+14" PRId64 " %10" PRId64
		    " %10" PRId64 " %+10" PRId64 "  %s\n", al_names[r->alloc], name,
		    signed_count(r->bytes[0]), signed_count(r->bytes[1]), delta_b(r),
		    signed_count(r->count[0]), signed_count(r->count[1]), delta_c(r),
		    strcmp(status(r), "changed") == 0 ? "" : status(r));
	}
	if (same > 0)
		printf("(%zu unchanged not shown)\n", same);
	printf("(matched by %s)\n", t.by_addr ? "kernel address: one boot" :
	    "name: no entry at one address in both");
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	for (i = 0; i < t.ne; i++)
		free(t.e[i].name);
	free(t.e);
	free(t.r);
	return rc;
}
