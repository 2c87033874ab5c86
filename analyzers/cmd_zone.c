/*
 * cmd_zone.c - `kvmstat zone` (alias -z): UMA zones as vmstat -z prints
 * them.  --format 12 is the older table (no XDOMAIN, blank line after the
 * header and after the table), 14 adds XDOMAIN, 15 is the 15-CURRENT layout;
 * the default follows the kernel (XDOMAIN exists from the counter(9) era).
 * --percpu adds each CPU's cached items and each memory domain's free items
 * (full buckets in the zone, free items in the keg); --json has them all.
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
	{
		const char *w;
		unsigned nw = kvs_warnings(kd, &w);
		if (nw > 0)
			fprintf(stderr, "kvmstat: warning: %s%s\n", w, nw > 1 ? " (and more)" : "");
	}
	if (o->csv && o->percpu) {
		/* a row per zone and CPU: the items each CPU's caches hold */
		fputs("name,kaddr,cpu,free", stdout);
		csv_end(stdout);
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt))
			for (c = 0; c < memstat_get_maxcpus(mt); c++) {
				csv_type(stdout, mt);
				csv_u64(stdout, c, false);
				csv_u64(stdout, memstat_get_percpu_free(mt, (int)c), false);
				csv_end(stdout);
			}
		memstat_mtl_free(l);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (o->csv) {
		fputs("name,kaddr,size,limit,count,free,requests,frees,failures,sleeps,xdomain,"
		    "bytes", stdout);
		csv_end(stdout);
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
			char name[4 * MEMTYPE_MAXNAME + 1], addr[24];
			const char *nm = memstat_get_name(mt);
			snprintf(addr, sizeof(addr), "0x%016" PRIx64, memstat_get_kaddr(mt));
			csv_field(stdout, sanitize(name, sizeof(name), nm, strlen(nm), false), true);
			csv_field(stdout, addr, false);
			csv_u64(stdout, memstat_get_size(mt), false);
			csv_u64(stdout, memstat_get_countlimit(mt), false);
			csv_i64(stdout, signed_count(memstat_get_count(mt)), false);
			csv_u64(stdout, memstat_get_free(mt), false);
			csv_u64(stdout, memstat_get_numallocs(mt), false);
			csv_u64(stdout, memstat_get_numfrees(mt), false);
			csv_u64(stdout, memstat_get_failures(mt), false);
			csv_u64(stdout, memstat_get_sleeps(mt), false);
			csv_u64(stdout, memstat_get_xdomain(mt), false);
			csv_i64(stdout, signed_count(memstat_get_bytes(mt)), false);
			csv_end(stdout);
		}
		memstat_mtl_free(l);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (o->json && o->libxo) {
		/* FreeBSD's `vmstat -z --libxo json`: container
		 * memory-zone-statistics, list zone, its key names. */
		json_t *root = json_object(), *cont = json_object(), *list = json_array();
		json_object_set_new(root, "__version", json_string("1"));
		json_object_set_new(root, "schema", json_string(KVS_JSON_SCHEMA));
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
			json_t *r = json_object();
			json_object_set_new(r, "name", json_dumpstr(memstat_get_name(mt)));
#define U(k, f) json_object_set_new(r, k, json_integer((json_int_t)f(mt)))
			U("size", memstat_get_size); U("limit", memstat_get_countlimit);
			U("used", count_of); U("free", memstat_get_free);
			U("requests", memstat_get_numallocs); U("fail", memstat_get_failures);
			U("sleep", memstat_get_sleeps); U("xdomain", memstat_get_xdomain);
#undef U
			json_array_append_new(list, r);
		}
		json_object_set_new(cont, "zone", list);
		json_object_set_new(root, "memory-zone-statistics", cont);
		rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0;
		putchar('\n');
		json_decref(root);
		memstat_mtl_free(l);
		return rc == 0 && fflush(stdout) == 0 ? 0 : 1;
	}
	if (o->json) {
		struct emitter e;
		json_t *arr = json_array();
		emit_init(&e, true, stdout);
		json_object_set_new(emit_json_root(&e), "format", json_string(fmt));
		for (mt = memstat_mtl_first(l); mt != NULL; mt = memstat_mtl_next(mt)) {
			json_t *r = json_object();
			json_object_set_new(r, "name", json_dumpstr(memstat_get_name(mt)));
			json_object_set_new(r, "kaddr", json_kaddr(memstat_get_kaddr(mt)));
#define U(k, f) json_object_set_new(r, k, json_integer((json_int_t)f(mt)))
			U("size", memstat_get_size); U("rsize", memstat_get_rsize);
			U("limit", memstat_get_countlimit); U("byteslimit", memstat_get_byteslimit);
			U("count", count_of); U("free", memstat_get_free);
			U("bytes", bytes_of);
			U("requests", memstat_get_numallocs); U("frees", memstat_get_numfrees);
			U("failures", memstat_get_failures); U("sleeps", memstat_get_sleeps);
			U("xdomain", memstat_get_xdomain); U("zonefree", memstat_get_zonefree);
			U("kegfree", memstat_get_kegfree);
#undef U
			{
				json_t *doms = json_array();
				unsigned d;
				for (d = 0; d < memstat_get_ndomains(mt); d++) {
					json_t *dj = json_object();
					json_object_set_new(dj, "domain", json_integer(d));
					json_object_set_new(dj, "zonefree", json_integer((json_int_t)memstat_get_domain_zonefree(mt, d)));
					json_object_set_new(dj, "kegfree", json_integer((json_int_t)memstat_get_domain_kegfree(mt, d)));
					json_array_append_new(doms, dj);
				}
				json_object_set_new(r, "domains", doms);
			}
			if (o->percpu) {
				json_t *pc = json_array();
				for (c = 0; c < memstat_get_maxcpus(mt); c++) {
					json_t *cj = json_object();
					json_object_set_new(cj, "cpu", json_integer(c));
					json_object_set_new(cj, "free", json_integer((json_int_t)memstat_get_percpu_free(mt, (int)c)));
					json_array_append_new(pc, cj);
				}
				json_object_set_new(r, "percpu", pc);
			}
			json_array_append_new(arr, r);
		}
		json_object_set_new(emit_json_root(&e), "zones", arr);
		rc = emit_finish(&e);
		memstat_mtl_free(l);
		return rc;
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
		const char *nm = memstat_get_name(mt);
		sanitize(name, sizeof(name) - 1, nm, strlen(nm), false);
		strcat(name, ":");
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
	memstat_mtl_free(l);
	return fflush(stdout) == 0 ? 0 : 1;
}
