/*
 * cmd_slab.c - `kvmstat slab`: a Linux kernel's SLUB caches.
 *
 *   --format slabinfo (default)  /proc/slabinfo 2.1, byte for byte the
 *                                kernel's columns, caches in the kernel's
 *                                list order (oldest first)
 *   --format crash               crash's `kmem -s`: CACHE OBJSIZE ALLOCATED
 *                                TOTAL SLABS SSIZE NAME
 *   --json                       every figure of every cache
 *   --percpu                     also each CPU's free objects: JSON
 *                                "percpu"; in the tables a line per CPU
 *                                that holds some, under its cache; with
 *                                --csv a row per cache and CPU instead
 *   --objects CACHE              every object of the cache with its state,
 *                                crash's `kmem -S` (--json, --csv too)
 * ALLOCATED (and JSON "allocated") is the exact count of objects in use;
 * slabinfo's active_objs also counts the free objects cached per CPU.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "census.h"
#include "cli.h"
#include "memstat.h"

/* why: the handle's error as the walk left it (a later library call, such
 * as wrong_family's question, clears the handle's). */
static void
print_error(const char *why, struct memory_type_list *l, bool json)
{
	int err = memstat_mtl_geterror(l);
	const char *msg = err == MEMSTAT_ERROR_KVM || err == MEMSTAT_ERROR_VERSION ||
	    err == MEMSTAT_ERROR_KVM_NOSYMBOL ? why : memstat_strerror(err);
	char clean[4 * KVS_ERRBUF_SIZE];

	fprintf(stderr, "kvmstat: slab: %s\n", sanitize(clean, sizeof(clean), msg,
	    strlen(msg), false));
	if (json)
		json_error("read", msg);
}

/* --percpu in the tables: under a cache, the CPUs that hold free objects
 * of it (as `zone --percpu` shows a zone's). */
static void
percpu_lines(const struct memory_type *mt)
{
	unsigned c;

	for (c = 0; c < memstat_get_maxcpus(mt); c++)
		if (memstat_get_percpu_free(mt, (int)c) != 0)
			printf("%20s cpu%-3u free %" PRIu64 "\n", "", c,
			    memstat_get_percpu_free(mt, (int)c));
}

struct objs {
	const struct opts *o;
	json_t *arr;
	uint64_t last_slab;
	bool any;
};

static int
object_row(void *arg, const struct kvs_slab_object *ob)
{
	struct objs *x = arg;
	bool known = ob->state != KVS_OBJ_UNKNOWN;

	if (x->arr != NULL) {
		json_t *r = json_object();
		json_object_set_new(r, "address", json_kaddr(ob->addr));
		json_object_set_new(r, "slab", json_kaddr(ob->slab));
		json_object_set_new(r, "index", json_integer((json_int_t)ob->index));
		json_object_set_new(r, "state", known ? json_string(kvs_obj_state_str(ob->state)) :
		    json_null());
		json_object_set_new(r, "allocated", known ? json_boolean(ob->state ==
		    KVS_OBJ_ALLOCATED) : json_null());
		json_object_set_new(r, "cpu", ob->cpu >= 0 ? json_integer(ob->cpu) : json_null());
		json_array_append_new(x->arr, r);
	} else if (x->o->csv) {
		char a[24];
		snprintf(a, sizeof(a), "0x%016" PRIx64, ob->addr);
		csv_field(stdout, a, true);
		snprintf(a, sizeof(a), "0x%016" PRIx64, ob->slab);
		csv_field(stdout, a, false);
		csv_u64(stdout, ob->index, false);
		csv_field(stdout, known ? kvs_obj_state_str(ob->state) : "", false);
		if (ob->cpu >= 0)
			csv_i64(stdout, ob->cpu, false);
		else
			csv_field(stdout, "", false);
		csv_end(stdout);
	} else {
		if (!x->any || ob->slab != x->last_slab)
			printf("  SLAB %016" PRIx64 "\n", ob->slab);
		if (!known)
			printf("  %s%016" PRIx64 "%s  ?\n", " ", ob->addr, " ");
		else if (ob->state == KVS_OBJ_ALLOCATED)
			printf("  [%016" PRIx64 "]\n", ob->addr);
		else if (ob->cpu >= 0)
			printf("   %016" PRIx64 "   %s %d\n", ob->addr, kvs_obj_state_str(ob->state),
			    ob->cpu);
		else
			printf("   %016" PRIx64 "   %s\n", ob->addr, kvs_obj_state_str(ob->state));
	}
	x->last_slab = ob->slab;
	x->any = true;
	return 0;
}

/* --objects CACHE: [addr] allocated, addr free, as crash's kmem -S. */
static int
slab_objects(kvs_t *kd, const struct opts *o)
{
	struct objs x = { .o = o, .arr = o->json ? json_array() : NULL };
	char clean[4 * KVS_ERRBUF_SIZE];
	int rc;

	if (o->csv) {
		fputs("address,slab,index,state,cpu", stdout);
		csv_end(stdout);
	} else if (!o->json)
		printf("CACHE %s\n", sanitize(clean, sizeof(clean), o->objects,
		    strlen(o->objects), false));
	rc = kvs_slab_objects(kd, o->objects, object_row, &x);
	if (rc < 0) {
		char msg[KVS_ERRBUF_SIZE];
		snprintf(msg, sizeof(msg), "%s", kvs_geterr(kd));
		json_decref(x.arr);
		if (strncmp(msg, "kvmstat reads no ", 17) == 0 &&
		    wrong_family(kd, o, "Linux", "slab", "Linux SLUB caches",
		    "`zone` or `malloc`"))
			return 1;
		fprintf(stderr, "kvmstat: slab: %s\n", sanitize(clean, sizeof(clean), msg,
		    strlen(msg), false));
		if (o->json)
			json_error("read", msg);
		return 1;
	}
	if (x.arr != NULL) {
		struct emitter e;
		emit_init(&e, true, stdout);
		json_object_set_new(emit_json_root(&e), "cache", json_dumpstr(o->objects));
		json_object_set_new(emit_json_root(&e), "objects", x.arr);
		if (emit_finish(&e) != 0)
			return 1;
	}
	if (rc > 0) {
		fprintf(stderr, "kvmstat: slab: the answer is incomplete: some slabs of \"%s\" "
		    "are not in the dump\n", sanitize(clean, sizeof(clean), o->objects,
		    strlen(o->objects), false));
		return 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

int
cmd_slab(kvs_t *kd, const struct opts *o)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt, **rows = NULL;
	size_t n = 0, i;
	bool crash = false;
	int rc = 0;

	if (l == NULL)
		return 1;
	if (o->objects != NULL) {
		memstat_mtl_free(l);
		return slab_objects(kd, o);
	}
	if (o->format != NULL) {
		if (strcmp(o->format, "crash") == 0)
			crash = true;
		else if (strcmp(o->format, "slabinfo") != 0) {
			fprintf(stderr, "kvmstat: slab: unknown --format '%s' (slabinfo, crash)\n",
			    o->format);
			memstat_mtl_free(l);
			return 2;
		}
	}
	if (memstat_kvm_slab(l, kd) < 0) {
		char why[KVS_ERRBUF_SIZE];
		snprintf(why, sizeof(why), "%s", kvs_geterr(kd));
		/* Asked only now: the family's question reads the Linux log. */
		if (!wrong_family(kd, o, "Linux", "slab", "Linux SLUB caches",
		    "`zone` or `malloc`"))
			print_error(why, l, o->json);
		memstat_mtl_free(l);
		return 1;
	}
	print_warnings(kd);
	/* The list holds the newest entry first: the kernel's order is the
	 * reverse. */
	rows = malloc((memstat_mtl_count(l) + 1) * sizeof(*rows));
	if (rows == NULL) {
		memstat_mtl_free(l);
		return 1;
	}
	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
		rows[n++] = mt;
	for (i = 0; i < n / 2; i++) {
		struct memory_type *t = rows[i];
		rows[i] = rows[n - 1 - i];
		rows[n - 1 - i] = t;
	}
	if (o->json) {
		struct emitter e;
		json_t *arr = json_array();
		emit_init(&e, true, stdout);
		for (i = 0; i < n; i++) {
			json_t *r = json_object();
			mt = rows[i];
			uint64_t fl = memstat_get_slab_flags(mt);
			bool noname = (fl & MEMSTAT_SLAB_NAME_UNREADABLE) != 0;
			bool nocount = (fl & MEMSTAT_SLAB_COUNTS_UNREADABLE) != 0;
			/* without the CPUs' slabs, the exact count is not known */
			bool noexact = nocount || (fl & MEMSTAT_SLAB_PERCPU_UNREADABLE) != 0;
			json_object_set_new(r, "name", noname ? json_null() :
			    json_dumpstr(memstat_get_name(mt)));
			json_object_set_new(r, "kaddr", json_kaddr(memstat_get_kaddr(mt)));
#define U(k, v) json_object_set_new(r, k, json_integer((json_int_t)(v)))
#define C(k, v) json_object_set_new(r, k, nocount ? json_null() : json_integer((json_int_t)(v)))
			U("object_size", memstat_get_size(mt));
			U("size", memstat_get_rsize(mt));
			U("objects_per_slab", memstat_get_slab_objperslab(mt));
			U("pages_per_slab", memstat_get_slab_pagesperslab(mt));
			C("num_slabs", memstat_get_slab_numslabs(mt));
			C("num_objs", memstat_get_slab_numobjs(mt));
			C("active_objs", memstat_get_slab_active(mt));
#define X(k, v) json_object_set_new(r, k, noexact ? json_null() : json_integer((json_int_t)(v)))
			X("count", memstat_get_count(mt));
			X("free", memstat_get_free(mt));
			X("bytes", memstat_get_bytes(mt));
#undef X
			C("cache_bytes", memstat_get_slab_numslabs(mt) *
			    memstat_get_slab_pagesperslab(mt) * 4096);
#undef U
#undef C
			if (noname || noexact)
				json_object_set_new(r, "incomplete", json_true());
			json_object_set_new(r, "corrupt", json_boolean(memstat_get_slab_flags(mt) &
			    MEMSTAT_SLAB_CORRUPT));
			if (o->percpu && (fl & MEMSTAT_SLAB_PERCPU_UNREADABLE))
				json_object_set_new(r, "percpu", json_null());
			else if (o->percpu) {
				json_t *pc = json_array();
				unsigned c, nc = memstat_get_maxcpus(mt);
				for (c = 0; c < nc; c++) {
					json_t *cj = json_object();
					json_object_set_new(cj, "cpu", json_integer(c));
					json_object_set_new(cj, "free", json_integer((json_int_t)
					    memstat_get_percpu_free(mt, (int)c)));
					json_array_append_new(pc, cj);
				}
				json_object_set_new(r, "percpu", pc);
			}
			json_array_append_new(arr, r);
		}
		json_object_set_new(emit_json_root(&e), "caches", arr);
		rc = emit_finish(&e);
	} else if (o->csv && o->percpu) {
		fputs("name,kaddr,cpu,free", stdout);
		csv_end(stdout);
		for (i = 0; i < n; i++) {
			unsigned c;
			for (c = 0; c < memstat_get_maxcpus(rows[i]); c++) {
				csv_type(stdout, rows[i]);
				csv_u64(stdout, c, false);
				csv_known_u64(stdout, !row_nocount(rows[i]),
				    memstat_get_percpu_free(rows[i], (int)c));
				csv_end(stdout);
			}
		}
		rc = fflush(stdout) == 0 ? 0 : 1;
	} else if (o->csv) {
		fputs("name,kaddr,object_size,size,objects_per_slab,pages_per_slab,num_slabs,"
		    "num_objs,active_objs,count,free,bytes,cache_bytes", stdout);
		csv_end(stdout);
		for (i = 0; i < n; i++) {
			bool known = !row_nocount(rows[i]);
			mt = rows[i];
			csv_type(stdout, mt);
			csv_u64(stdout, memstat_get_size(mt), false);
			csv_u64(stdout, memstat_get_rsize(mt), false);
			csv_u64(stdout, memstat_get_slab_objperslab(mt), false);
			csv_u64(stdout, memstat_get_slab_pagesperslab(mt), false);
			{
				/* without the CPUs' slabs the exact count is not known */
				bool exact = known && !(memstat_get_flags(mt) &
				    MEMSTAT_SLAB_PERCPU_UNREADABLE);
				csv_known_u64(stdout, known, memstat_get_slab_numslabs(mt));
				csv_known_u64(stdout, known, memstat_get_slab_numobjs(mt));
				csv_known_u64(stdout, known, memstat_get_slab_active(mt));
				csv_known_u64(stdout, exact, memstat_get_count(mt));
				csv_known_u64(stdout, exact, memstat_get_free(mt));
				csv_known_u64(stdout, exact, memstat_get_bytes(mt));
				csv_known_u64(stdout, known, memstat_get_slab_numslabs(mt) *
				    memstat_get_slab_pagesperslab(mt) * 4096);
			}
			csv_end(stdout);
		}
		rc = fflush(stdout) == 0 ? 0 : 1;
	} else if (crash) {
		printf("CACHE             OBJSIZE  ALLOCATED     TOTAL  SLABS  SSIZE  NAME\n");
		for (i = 0; i < n; i++) {
			char name[4 * MEMTYPE_MAXNAME];
			const char *nm = memstat_get_slab_flags(rows[i]) & MEMSTAT_SLAB_NAME_UNREADABLE ?
			    "?" : memstat_get_name(rows[i]);
			char alloc[24];
			mt = rows[i];
			if (memstat_get_slab_flags(mt) & (MEMSTAT_SLAB_PERCPU_UNREADABLE |
			    MEMSTAT_SLAB_COUNTS_UNREADABLE))
				snprintf(alloc, sizeof(alloc), "?");
			else
				snprintf(alloc, sizeof(alloc), "%" PRIu64, memstat_get_count(mt));
			printf("%016" PRIx64 " %8" PRIu64 " %10s %9" PRIu64 " %6" PRIu64
			    " %5" PRIu64 "k  %s\n", memstat_get_kaddr(mt), memstat_get_size(mt),
			    alloc, memstat_get_slab_numobjs(mt),
			    memstat_get_slab_numslabs(mt), memstat_get_slab_pagesperslab(mt) * 4,
			    sanitize(name, sizeof(name), nm, strlen(nm), false));
			if (o->percpu)
				percpu_lines(mt);
		}
	} else {
		printf("slabinfo - version: 2.1\n");
		printf("# name            <active_objs> <num_objs> <objsize> <objperslab> "
		    "<pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata "
		    "<active_slabs> <num_slabs> <sharedavail>\n");
		for (i = 0; i < n; i++) {
			char name[4 * MEMTYPE_MAXNAME];
			const char *nm = memstat_get_name(rows[i]);
			mt = rows[i];
			uint64_t fl = memstat_get_slab_flags(mt);
			if (fl & MEMSTAT_SLAB_NAME_UNREADABLE)
				nm = "?";
			if (fl & MEMSTAT_SLAB_COUNTS_UNREADABLE)
				printf("%-17s %6s %6s %6" PRIu64 " %4" PRIu64 " %4" PRIu64
				    " : tunables %4u %4u %4u : slabdata %6s %6s %6u\n",
				    sanitize(name, sizeof(name), nm, strlen(nm), false), "?", "?",
				    memstat_get_rsize(mt), memstat_get_slab_objperslab(mt),
				    memstat_get_slab_pagesperslab(mt), 0u, 0u, 0u, "?", "?", 0u);
			else
			printf("%-17s %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %4" PRIu64 " %4" PRIu64
			    " : tunables %4u %4u %4u : slabdata %6" PRIu64 " %6" PRIu64 " %6u\n",
			    sanitize(name, sizeof(name), nm, strlen(nm), false),
			    memstat_get_slab_active(mt), memstat_get_slab_numobjs(mt),
			    memstat_get_rsize(mt), memstat_get_slab_objperslab(mt),
			    memstat_get_slab_pagesperslab(mt), 0u, 0u, 0u,
			    memstat_get_slab_numslabs(mt), memstat_get_slab_numslabs(mt), 0u);
			if (o->percpu)
				percpu_lines(mt);
		}
	}
	/* A partial dump: every row is there, some of their figures not. */
	{
		size_t nocpu = 0;
		for (i = 0; i < n; i++)
			if (memstat_get_flags(rows[i]) & MEMSTAT_SLAB_PERCPU_UNREADABLE)
				nocpu++;
		if (nocpu > 0) {
			fprintf(stderr, "kvmstat: slab: the CPUs' slabs are not known (no per-CPU "
			    "offsets): the exactly allocated count of %zu caches is not known "
			    "(%s)\n", nocpu, o->json ? "null in JSON" : "? where shown");
			if (rc == 0)
				rc = 1;
		}
	}
	if (rc == 0)
		rc = report_incomplete(kd, l, "slab", "caches", o->json, true);
	free(rows);
	memstat_mtl_free(l);
	return rc;
}
