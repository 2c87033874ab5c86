/*
 * cmd_malloc.c - `kvmstat malloc` (alias -m): vmstat -m from a dump.
 *
 * Formats follow the vmstat of each generation (--format 5, 6, 14; the
 * default is detected from the kernel): 5.x printed the kernel's own table
 * with a HighUse column, 6-13 printed HighUse as "-" and derived sizes as
 * powers of two, 14 dropped HighUse and takes sizes from kmemzones.
 * Text output skips types never used, as vmstat does; --json keeps every row.
 * A partial dump keeps every row it reaches: a name or counts the dump does
 * not hold are ? in text, null in JSON, empty in CSV, the JSON row says
 * "incomplete": true, and the exit status is 1 (report_incomplete).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cli.h"
#include "memstat.h"

enum mfmt { MFMT_5, MFMT_6, MFMT_14 };

struct row {
	const struct memory_type *mt;
};

static const char *sort_key;

static int
cmp_rows(const void *a, const void *b)
{
	const struct memory_type *x = ((const struct row *)a)->mt;
	const struct memory_type *y = ((const struct row *)b)->mt;
	uint64_t vx, vy;
	int64_t sx, sy;

	if (strcmp(sort_key, "name") == 0)
		return strcmp(memstat_get_name(x), memstat_get_name(y));
	if (strcmp(sort_key, "requests") == 0) {
		vx = memstat_get_numallocs(x);
		vy = memstat_get_numallocs(y);
		if (vx != vy)
			return vx < vy ? 1 : -1;       /* largest first */
		return strcmp(memstat_get_name(x), memstat_get_name(y));
	}
	/* Count and bytes in use are signed (a type freed more than it
	 * allocated on the dump's CPUs is below zero): a negative one last. */
	if (strcmp(sort_key, "inuse") == 0 || strcmp(sort_key, "count") == 0) {
		sx = signed_count(memstat_get_count(x));
		sy = signed_count(memstat_get_count(y));
	} else {        /* memuse / bytes */
		sx = signed_count(memstat_get_bytes(x));
		sy = signed_count(memstat_get_bytes(y));
	}
	if (sx != sy)
		return sx < sy ? 1 : -1;       /* largest first */
	return strcmp(memstat_get_name(x), memstat_get_name(y));
}

/* Comma-separated zone sizes used by the type. */
static void
sizes_str(const struct memory_type *mt, enum mfmt f, char *buf, size_t len)
{
	size_t n = 0, i, count;
	int first = 1;

	buf[0] = '\0';
	if (f == MFMT_14) {
		count = memstat_malloc_zone_get_count();
		for (i = 0; i < count && i < 64; i++) {
			if (!memstat_malloc_zone_used(mt, i))
				continue;
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%zu",
			    first ? "" : ",", memstat_malloc_zone_get_size(i));
			first = 0;
		}
		return;
	}
	for (i = 0; i < 32; i++) {
		if (!(memstat_get_sizemask(mt) & (1ULL << i)))
			continue;
		if (f == MFMT_5 && i < memstat_malloc_zone_get_count())
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%zu",
			    first ? "" : ",", memstat_malloc_zone_get_size(i));
		else
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%llu",
			    first ? "" : ",", 1ULL << (i + 4));
		first = 0;
	}
}

static enum mfmt
pick_format(kvs_t *kd, const struct opts *o)
{
	if (o->format != NULL) {
		if (strcmp(o->format, "5") == 0)
			return MFMT_5;
		if (strcmp(o->format, "14") == 0)
			return MFMT_14;
		return MFMT_6;
	}
	switch (memstat_kvm_vmstat_format(kd, ALLOCATOR_MALLOC)) {
	case 5:
		return MFMT_5;
	case 14:
		return MFMT_14;
	default:
		return MFMT_6;
	}
}

/* Zone sizes of the kernel's malloc table; a zero size marks no zone (the
 * table's terminator). */
static size_t
nzones(void)
{
	size_t n = memstat_malloc_zone_get_count();

	while (n > 0 && memstat_malloc_zone_get_size(n - 1) == 0)
		n--;
	return n > 64 ? 64 : n;
}

static json_t *
sizes_json(const struct memory_type *mt)
{
	json_t *sz = json_array();
	size_t i;

	for (i = 0; i < nzones(); i++)
		if (memstat_malloc_zone_used(mt, i) && memstat_malloc_zone_get_size(i) != 0)
			json_array_append_new(sz, json_integer((json_int_t)memstat_malloc_zone_get_size(i)));
	return sz;
}

#define JU(o, k, v) json_object_set_new(o, k, json_integer((json_int_t)(v)))
/* A count of the row: null when the dump does not hold it. */
#define JC(o, k, v) json_object_set_new(o, k, json_known(known, (int64_t)(v)))

static json_t *
row_json(const struct memory_type *mt, bool percpu, unsigned maxcpus)
{
	json_t *r = json_object();
	bool known = !row_nocount(mt);
	size_t i;

	json_object_set_new(r, "name", row_noname(mt) ? json_null() :
	    json_dumpstr(memstat_get_name(mt)));
	json_object_set_new(r, "kaddr", json_kaddr(memstat_get_kaddr(mt)));
	JC(r, "count", signed_count(memstat_get_count(mt)));
	JC(r, "bytes", signed_count(memstat_get_bytes(mt)));
	JC(r, "requests", memstat_get_numallocs(mt));
	JC(r, "frees", memstat_get_numfrees(mt));
	JC(r, "memalloced", memstat_get_memalloced(mt));
	JC(r, "memfreed", memstat_get_memfreed(mt));
	JC(r, "sizemask", memstat_get_sizemask(mt));
	json_object_set_new(r, "sizes", known ? sizes_json(mt) : json_null());
	if (!known || row_noname(mt))
		json_object_set_new(r, "incomplete", json_true());
	if (percpu) {
		json_t *pc = json_array();
		for (i = 0; i < maxcpus; i++) {
			json_t *c = json_object();
			JU(c, "cpu", i);
			JC(c, "requests", memstat_get_percpu_numallocs(mt, i));
			JC(c, "frees", memstat_get_percpu_numfrees(mt, i));
			JC(c, "memalloced", memstat_get_percpu_memalloced(mt, i));
			JC(c, "memfreed", memstat_get_percpu_memfreed(mt, i));
			JC(c, "sizemask", memstat_get_percpu_sizemask(mt, i));
			json_array_append_new(pc, c);
		}
		json_object_set_new(r, "percpu", pc);
	}
	return r;
}

/* Text: a type never used is left out, as vmstat does; one whose counts
 * are not known is shown. */
static bool
shown(const struct memory_type *m)
{
	return row_nocount(m) || memstat_get_numallocs(m) != 0 || memstat_get_count(m) != 0;
}

/* --json --libxo: the document FreeBSD's `vmstat -m --libxo json` writes
 * (container malloc-statistics, list memory; memory-use in kilobytes,
 * rounded up; types never used left out, as in its table). */
static json_t *
libxo_json(struct row *rows, size_t n)
{
	json_t *root = json_object(), *c = json_object(), *list = json_array();
	size_t i;

	json_object_set_new(root, "__version", json_string("1"));
	json_object_set_new(root, "schema", json_string(KVS_JSON_SCHEMA));
	for (i = 0; i < n; i++) {
		const struct memory_type *m = rows[i].mt;
		bool known = !row_nocount(m);
		json_t *r;
		if (!shown(m))
			continue;
		r = json_object();
		json_object_set_new(r, "type", row_noname(m) ? json_null() :
		    json_dumpstr(memstat_get_name(m)));
		JC(r, "in-use", signed_count(memstat_get_count(m)));
		JC(r, "memory-use", kbytes_signed(signed_count(memstat_get_bytes(m))));
		JC(r, "requests", memstat_get_numallocs(m));
		json_object_set_new(r, "size", known ? sizes_json(m) : json_null());
		json_array_append_new(list, r);
	}
	json_object_set_new(c, "memory", list);
	json_object_set_new(root, "malloc-statistics", c);
	return root;
}

/* --csv --percpu: a row per type and CPU, the figures JSON's "percpu"
 * gives. */
static void
csv_percpu_rows(struct row *rows, size_t n)
{
	size_t i, c;

	fputs("name,kaddr,cpu,requests,frees,memalloced,memfreed,sizemask", stdout);
	csv_end(stdout);
	for (i = 0; i < n; i++) {
		const struct memory_type *m = rows[i].mt;
		bool known = !row_nocount(m);
		for (c = 0; c < memstat_get_maxcpus(m); c++) {
			csv_type(stdout, m);
			csv_u64(stdout, c, false);
			csv_known_u64(stdout, known, memstat_get_percpu_numallocs(m, c));
			csv_known_u64(stdout, known, memstat_get_percpu_numfrees(m, c));
			csv_known_u64(stdout, known, memstat_get_percpu_memalloced(m, c));
			csv_known_u64(stdout, known, memstat_get_percpu_memfreed(m, c));
			csv_known_u64(stdout, known, memstat_get_percpu_sizemask(m, c));
			csv_end(stdout);
		}
	}
}

static void
csv_rows(struct row *rows, size_t n)
{
	size_t i, k;

	fputs("name,kaddr,count,bytes,requests,frees,memalloced,memfreed,sizes", stdout);
	csv_end(stdout);
	for (i = 0; i < n; i++) {
		const struct memory_type *m = rows[i].mt;
		bool known = !row_nocount(m);
		char sizes[512];
		size_t len = 0;

		sizes[0] = '\0';
		for (k = 0; known && k < nzones(); k++)
			if (memstat_malloc_zone_used(m, k) && len < sizeof(sizes))
				len += (size_t)snprintf(sizes + len, sizeof(sizes) - len, "%s%zu",
				    len ? "," : "", memstat_malloc_zone_get_size(k));
		csv_type(stdout, m);
		csv_known_i64(stdout, known, signed_count(memstat_get_count(m)));
		csv_known_i64(stdout, known, signed_count(memstat_get_bytes(m)));
		csv_known_u64(stdout, known, memstat_get_numallocs(m));
		csv_known_u64(stdout, known, memstat_get_numfrees(m));
		csv_known_u64(stdout, known, memstat_get_memalloced(m));
		csv_known_u64(stdout, known, memstat_get_memfreed(m));
		csv_field(stdout, sizes, false);
		csv_end(stdout);
	}
}

int
cmd_malloc(kvs_t *kd, const struct opts *o)
{
	struct memory_type_list *mtlp;
	struct memory_type *mt;
	struct row *rows = NULL;
	size_t n = 0, cap = 0, i;
	enum mfmt f;
	int rc = 0;

	if (wrong_family(kd, o, "FreeBSD", "malloc", "FreeBSD malloc(9) types", "`slab`"))
		return 1;
	mtlp = memstat_mtl_alloc();
	if (mtlp == NULL) {
		fprintf(stderr, "kvmstat: out of memory\n");
		return 1;
	}
	if (memstat_kvm_malloc(mtlp, kd) < 0) {
		int err = memstat_mtl_geterror(mtlp);
		char clean[4 * KVS_ERRBUF_SIZE];
		const char *msg = err == MEMSTAT_ERROR_KVM ? kvs_geterr(kd) : memstat_strerror(err);
		fprintf(stderr, "kvmstat: malloc: %s\n", sanitize(clean, sizeof(clean), msg,
		    strlen(msg), false));
		if (o->json)
			json_error("read", msg);
		memstat_mtl_free(mtlp);
		return 1;
	}
	f = pick_format(kd, o);
	for (mt = memstat_mtl_first(mtlp); mt != NULL; mt = memstat_mtl_next(mt)) {
		if (n == cap) {
			struct row *nr;
			cap = cap ? cap * 2 : 256;
			nr = realloc(rows, cap * sizeof(*rows));
			if (nr == NULL) {
				rc = 1;
				goto out;
			}
			rows = nr;
		}
		rows[n++].mt = mt;
	}
	if (o->sort != NULL) {
		sort_key = o->sort;
		qsort(rows, n, sizeof(*rows), cmp_rows);
	}
	if (o->csv) {
		if (o->percpu)
			csv_percpu_rows(rows, n);
		else
			csv_rows(rows, n);
		rc = fflush(stdout) == 0 ? 0 : 1;
		goto out;
	}
	if (o->json && o->libxo) {
		json_t *root = libxo_json(rows, n);
		rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0;
		putchar('\n');
		json_decref(root);
		rc = rc == 0 && fflush(stdout) == 0 ? 0 : 1;
		goto out;
	}
	if (o->json) {
		struct emitter e;
		json_t *arr = json_array(), *zs = json_array();
		emit_init(&e, true, stdout);
		json_object_set_new(emit_json_root(&e), "format",
		    json_string(f == MFMT_5 ? "5" : f == MFMT_14 ? "14" : "6"));
		json_object_set_new(emit_json_root(&e), "layout", json_integer(memstat_kvm_malloc_layout(kd)));
		for (i = 0; i < nzones(); i++)
			json_array_append_new(zs, json_integer((json_int_t)memstat_malloc_zone_get_size(i)));
		json_object_set_new(emit_json_root(&e), "zone_sizes", zs);
		for (i = 0; i < n; i++)
			json_array_append_new(arr, row_json(rows[i].mt, o->percpu,
			    memstat_get_maxcpus(rows[i].mt)));
		json_object_set_new(emit_json_root(&e), "types", arr);
		rc = emit_finish(&e);
		goto out;
	}
	if (f == MFMT_5)
		printf("\n        Type  InUse MemUse HighUse Requests  Size(s)\n");
	else if (f == MFMT_6)
		printf("%13s %5s %6s %7s %8s  Size(s)\n", "Type", "InUse", "MemUse",
		    "HighUse", "Requests");
	else
		printf("%13s %5s %6s %8s  Size(s)\n", "Type", "InUse", "MemUse", "Requests");
	for (i = 0; i < n; i++) {
		char name[4 * MEMTYPE_MAXNAME + 1], sizes[512], a[4];
		const char *nm;
		int64_t inuse, memuse;

		const struct memory_type *m = rows[i].mt;
		if (!shown(m))
			continue;
		nm = row_name(m);
		sanitize(name, sizeof(name), nm, strlen(nm), false);
		sizes_str(m, f, sizes, sizeof(sizes));
		/* InUse and MemUse signed, as in every other format: vmstat's
		 * unsigned %ju would print a negative MemUse as its 64-bit wrap
		 * (18014398509481921K for -65216 bytes). */
		inuse = signed_count(memstat_get_count(m));
		memuse = kbytes_signed(signed_count(memstat_get_bytes(m)));
		if (row_nocount(m)) {
			/* The figures the dump does not hold: ? in their columns. */
			text_known(a, sizeof(a), false, 0);
			if (f == MFMT_5)
				printf("%13s%6s%6sK%7sK%9s  %s\n", name, a, a, a, a, a);
			else if (f == MFMT_6)
				printf("%13s %5s %5sK %7s %8s  %s\n", name, a, a, "-", a, a);
			else
				printf("%13s %5s %5sK %8s  %s\n", name, a, a, a, a);
			continue;
		}
		if (f == MFMT_5)
			printf("%13s%6" PRId64 "%6" PRId64 "K%7" PRIu64 "K%9" PRIu64 "  %s\n",
			    name, inuse, memuse, (memstat_get_maxused(m) + 1023) / 1024,
			    memstat_get_numallocs(m), sizes);
		else if (f == MFMT_6)
			printf("%13s %5" PRId64 " %5" PRId64 "K %7s %8" PRIu64 "  %s\n", name,
			    inuse, memuse, "-", memstat_get_numallocs(m), sizes);
		else
			printf("%13s %5" PRId64 " %5" PRId64 "K %8" PRIu64 "  %s\n", name,
			    inuse, memuse, memstat_get_numallocs(m), sizes);
		if (o->percpu) {
			unsigned c;
			for (c = 0; c < memstat_get_maxcpus(m); c++) {
				uint64_t a = memstat_get_percpu_numallocs(m, c);
				uint64_t fr = memstat_get_percpu_numfrees(m, c);
				if (a == 0 && fr == 0)
					continue;
				printf("%13s   cpu%-3u allocs %" PRIu64 " frees %" PRIu64
				    " bytes %" PRId64 "\n", "", c, a, fr,
				    (int64_t)(memstat_get_percpu_memalloced(m, c) -
				    memstat_get_percpu_memfreed(m, c)));
			}
		}
	}
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	if (rc == 0 && mtlp != NULL)
		rc = report_incomplete(kd, mtlp, "malloc", "types", o->json, false);
	free(rows);
	memstat_mtl_free(mtlp);
	return rc;
}
