/*
 * cmd_zone.c - `kvmstat zone` (alias -z): UMA zones as vmstat -z prints
 * them.  --format 12 is the older table (no XDOMAIN, blank line after the
 * header and after the table), 14 adds XDOMAIN, 15 is the 15-CURRENT layout;
 * the default follows the kernel (XDOMAIN exists from the counter(9) era).
 * --percpu adds each CPU's cached items and each memory domain's free items
 * (full buckets in the zone, free items in the keg); --json has them all.
 * A partial dump keeps every zone it reaches: a name or counts the dump does
 * not hold are ? in text, null in JSON, empty in CSV (the zone's size,
 * limit and sleeps stand), the JSON row says "incomplete": true, and the
 * exit status is 1 (report_incomplete).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "memstat.h"

/* Items and bytes in use are allocations less frees: signed in every
 * format (cli.h, signed_count). */
static int64_t
count_of(const struct memory_type *mt)
{
	return signed_count(memstat_get_count(mt));
}

static int64_t
bytes_of(const struct memory_type *mt)
{
	return signed_count(memstat_get_bytes(mt));
}

int
cmd_zone(kvs_t *kd, const struct opts *o)
{
	struct memory_type_list *l = memstat_mtl_alloc();
	struct memory_type *mt;
	const char *fmt = o->format;
	unsigned c;
	int rc = 0;

	if (l == NULL)
		return 1;
	if (wrong_family(kd, o, "FreeBSD", "zone", "FreeBSD UMA zones", "`slab`")) {
		memstat_mtl_free(l);
		return 1;
	}
	if (memstat_kvm_uma(l, kd) < 0) {
		int err = memstat_mtl_geterror(l);
		const char *msg = err == MEMSTAT_ERROR_KVM || err == MEMSTAT_ERROR_VERSION ?
		    kvs_geterr(kd) : memstat_strerror(err);
		char clean[4 * KVS_ERRBUF_SIZE];
		fprintf(stderr, "kvmstat: zone: %s\n", sanitize(clean, sizeof(clean), msg,
		    strlen(msg), false));
		if (o->json)
			json_error("read", msg);
		memstat_mtl_free(l);
		return 1;
	}
	if (fmt == NULL)
		fmt = memstat_kvm_vmstat_format(kd, ALLOCATOR_UMA) == 14 ? "14" : "12";
	print_warnings(kd);
	if (o->csv && o->percpu) {
		/* a row per zone and CPU: the items each CPU's caches hold */
		fputs("name,kaddr,cpu,free", stdout);
		csv_end(stdout);
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
			for (c = 0; c < memstat_get_maxcpus(mt); c++) {
				csv_type(stdout, mt);
				csv_u64(stdout, c, false);
				csv_known_u64(stdout, !row_nocount(mt),
				    memstat_get_percpu_free(mt, (int)c));
				csv_end(stdout);
			}
		rc = fflush(stdout) == 0 ? 0 : 1;
		goto out;
	}
	if (o->csv) {
		fputs("name,kaddr,size,limit,count,free,requests,frees,failures,sleeps,xdomain,"
		    "bytes", stdout);
		csv_end(stdout);
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
			bool known = !row_nocount(mt);
			csv_type(stdout, mt);
			csv_u64(stdout, memstat_get_size(mt), false);
			csv_u64(stdout, memstat_get_countlimit(mt), false);
			csv_known_i64(stdout, known, signed_count(memstat_get_count(mt)));
			csv_known_u64(stdout, known, memstat_get_free(mt));
			csv_known_u64(stdout, known, memstat_get_numallocs(mt));
			csv_known_u64(stdout, known, memstat_get_numfrees(mt));
			csv_known_u64(stdout, known, memstat_get_failures(mt));
			csv_u64(stdout, memstat_get_sleeps(mt), false);
			csv_known_u64(stdout, known, memstat_get_xdomain(mt));
			csv_known_i64(stdout, known, signed_count(memstat_get_bytes(mt)));
			csv_end(stdout);
		}
		rc = fflush(stdout) == 0 ? 0 : 1;
		goto out;
	}
	if (o->json && o->libxo) {
		/* FreeBSD's `vmstat -z --libxo json`: container
		 * memory-zone-statistics, list zone, its key names. */
		json_t *root = json_object(), *cont = json_object(), *list = json_array();
		json_object_set_new(root, "__version", json_string("1"));
		json_object_set_new(root, "schema", json_string(KVS_JSON_SCHEMA));
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
			json_t *r = json_object();
			bool known = !row_nocount(mt);
			json_object_set_new(r, "name", row_noname(mt) ? json_null() :
			    json_dumpstr(memstat_get_name(mt)));
#define U(k, f) json_object_set_new(r, k, json_integer((json_int_t)f(mt)))
#define C(k, f) json_object_set_new(r, k, json_known(known, (int64_t)f(mt)))
			U("size", memstat_get_size); U("limit", memstat_get_countlimit);
			C("used", count_of); C("free", memstat_get_free);
			C("requests", memstat_get_numallocs); C("fail", memstat_get_failures);
			U("sleep", memstat_get_sleeps); C("xdomain", memstat_get_xdomain);
			json_array_append_new(list, r);
		}
		json_object_set_new(cont, "zone", list);
		json_object_set_new(root, "memory-zone-statistics", cont);
		rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0;
		putchar('\n');
		json_decref(root);
		rc = rc == 0 && fflush(stdout) == 0 ? 0 : 1;
		goto out;
	}
	if (o->json) {
		struct emitter e;
		json_t *arr = json_array();
		emit_init(&e, true, stdout);
		json_object_set_new(emit_json_root(&e), "format", json_string(fmt));
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
			json_t *r = json_object();
			bool known = !row_nocount(mt);
			json_object_set_new(r, "name", row_noname(mt) ? json_null() :
			    json_dumpstr(memstat_get_name(mt)));
			json_object_set_new(r, "kaddr", json_kaddr(memstat_get_kaddr(mt)));
			U("size", memstat_get_size); U("rsize", memstat_get_rsize);
			U("limit", memstat_get_countlimit); U("byteslimit", memstat_get_byteslimit);
			C("count", count_of); C("free", memstat_get_free);
			C("bytes", bytes_of);
			C("requests", memstat_get_numallocs); C("frees", memstat_get_numfrees);
			C("failures", memstat_get_failures); U("sleeps", memstat_get_sleeps);
			C("xdomain", memstat_get_xdomain); C("zonefree", memstat_get_zonefree);
			C("kegfree", memstat_get_kegfree);
			if (!known || row_noname(mt))
				json_object_set_new(r, "incomplete", json_true());
			{
				json_t *doms = json_array();
				unsigned d;
				for (d = 0; d < memstat_get_ndomains(mt); d++) {
					json_t *dj = json_object();
					json_object_set_new(dj, "domain", json_integer(d));
					json_object_set_new(dj, "zonefree", json_known(known, (int64_t)memstat_get_domain_zonefree(mt, d)));
					json_object_set_new(dj, "kegfree", json_known(known, (int64_t)memstat_get_domain_kegfree(mt, d)));
					json_array_append_new(doms, dj);
				}
				json_object_set_new(r, "domains", doms);
			}
			if (o->percpu) {
				json_t *pc = json_array();
				for (c = 0; c < memstat_get_maxcpus(mt); c++) {
					json_t *cj = json_object();
					json_object_set_new(cj, "cpu", json_integer(c));
					json_object_set_new(cj, "free", json_known(known, (int64_t)memstat_get_percpu_free(mt, (int)c)));
					json_array_append_new(pc, cj);
				}
				json_object_set_new(r, "percpu", pc);
			}
			json_array_append_new(arr, r);
		}
#undef U
#undef C
		json_object_set_new(emit_json_root(&e), "zones", arr);
		rc = emit_finish(&e);
		goto out;
	}
	if (strcmp(fmt, "12") == 0)
		printf("%-20s %6s %6s %8s %8s %8s %4s %4s\n\n", "ITEM", "SIZE", "LIMIT", "USED",
		    "FREE", "REQ", "FAIL", "SLEEP");
	else if (strcmp(fmt, "15") == 0)
		printf("%-19s %7s %7s %8s %8s %8s %4s %4s %4s\n", "ITEM", "SIZE", "LIMIT", "USED",
		    "FREE", "REQ", "FAIL", "SLEEP", "XDOM");
	else
		printf("%-20s %6s %6s %8s %8s %8s %8s%4s %4s\n", "ITEM", "SIZE", "LIMIT", "USED",
		    "FREE", "REQ", "FAIL", "SLEEP", "XDOMAIN");
	for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
		char name[4 * MEMTYPE_MAXNAME + 2];
		const char *nm = row_name(mt);
		sanitize(name, sizeof(name) - 1, nm, strlen(nm), false);
		strcat(name, ":");
		if (row_nocount(mt)) {
			/* The figures the dump does not hold: ? in their columns. */
			const char *q = "?";
			if (strcmp(fmt, "15") == 0) {
				int w = 26 - (int)strlen(name);
				printf("%s%*" PRIu64 ",%7" PRIu64 ",%8s,%8s,%8s,%4s,%4" PRIu64 ",%4s\n",
				    name, w < 1 ? 1 : w, memstat_get_size(mt),
				    memstat_get_countlimit(mt), q, q, q, q, memstat_get_sleeps(mt), q);
				continue;
			}
			printf("%-20s %6" PRIu64 ", %6" PRIu64 ",%8s,%8s,%8s,%4s,%4" PRIu64, name,
			    memstat_get_size(mt), memstat_get_countlimit(mt), q, q, q, q,
			    memstat_get_sleeps(mt));
			if (strcmp(fmt, "12") != 0)
				printf(",%4s", q);
			printf("\n");
			continue;
		}
		if (strcmp(fmt, "15") == 0) {
			int w = 26 - (int)strlen(name);
			printf("%s%*" PRIu64 ",%7" PRIu64 ",%8" PRId64 ",%8" PRIu64 ",%8" PRIu64 ",%4" PRIu64
			    ",%4" PRIu64 ",%4" PRIu64 "\n", name, w < 1 ? 1 : w, memstat_get_size(mt),
			    memstat_get_countlimit(mt), signed_count(memstat_get_count(mt)),
			    memstat_get_free(mt),
			    memstat_get_numallocs(mt), memstat_get_failures(mt), memstat_get_sleeps(mt),
			    memstat_get_xdomain(mt));
			continue;
		}
		printf("%-20s %6" PRIu64 ", %6" PRIu64 ",%8" PRId64 ",%8" PRIu64 ",%8" PRIu64 ",%4" PRIu64
		    ",%4" PRIu64, name, memstat_get_size(mt), memstat_get_countlimit(mt),
		    signed_count(memstat_get_count(mt)), memstat_get_free(mt), memstat_get_numallocs(mt),
		    memstat_get_failures(mt), memstat_get_sleeps(mt));
		if (strcmp(fmt, "12") != 0)
			printf(",%4" PRIu64, memstat_get_xdomain(mt));
		printf("\n");
		if (o->percpu) {
			unsigned d;
			for (c = 0; c < memstat_get_maxcpus(mt); c++)
				if (memstat_get_percpu_free(mt, (int)c))
					printf("%20s cpu%-3u cached %" PRIu64 "\n", "", c,
					    memstat_get_percpu_free(mt, (int)c));
			for (d = 0; d < memstat_get_ndomains(mt); d++)
				printf("%20s domain%-2u zone free %" PRIu64 ", keg free %" PRIu64 "\n", "", d,
				    memstat_get_domain_zonefree(mt, d), memstat_get_domain_kegfree(mt, d));
		}
	}
	if (strcmp(fmt, "12") == 0)
		printf("\n");
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	if (rc == 0)
		rc = report_incomplete(kd, l, "zone", "zones", o->json, true);
	memstat_mtl_free(l);
	return rc;
}
