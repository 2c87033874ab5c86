/*
 * cmd_mem.c - the memory census's summary commands:
 *
 *   mem        Linux: /proc/meminfo's lines, names and layout as the kernel
 *              prints them; FreeBSD: vm_cnt's counters as `vmstat -s` lines,
 *              then top's Mem: line, then the allocators' totals
 *   buddyinfo  Linux: /proc/buddyinfo; FreeBSD: `sysctl vm.phys_free`
 *   zoneinfo   Linux: /proc/zoneinfo, as far as the dump holds it
 *
 * Each has --json (docs/json.md) and --csv.  A value the dump does not
 * hold prints as `?` (null in JSON); the command then says the answer is
 * incomplete on stderr and exits 1.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "census.h"

/* top's figures (format_k, through humanize_number in a 6-byte buffer):
 * at most four digits and a unit, K upwards, one decimal below 10. */
static void
top_k(char *b, size_t n, uint64_t kib)
{
	static const char unit[] = "KMGTP";
	double v = (double)kib;
	int i = 0;

	while (v >= 9999.5 && i < 4) {
		v /= 1024;
		i++;
	}
	if (i > 0 && v < 9.95)
		snprintf(b, n, "%.1f%c", v, unit[i]);
	else
		snprintf(b, n, "%.0f%c", v, unit[i]);
}

static const char *
family(kvs_t *kd)
{
	struct kvs_kernelinfo ki;

	if (kvs_kernel_info(kd, &ki) == 0 && ki.os != NULL && strcmp(ki.os, "FreeBSD") == 0)
		return "FreeBSD";
	return "Linux";
}

static int
fail(kvs_t *kd, const struct opts *o, const char *cmd)
{
	char clean[4 * KVS_ERRBUF_SIZE];
	const char *msg = kvs_geterr(kd);

	fprintf(stderr, "kvmstat: %s: %s\n", cmd, sanitize(clean, sizeof(clean), msg,
	    strlen(msg), false));
	if (o->json)
		json_error("read", msg);
	return 1;
}

static int
finish(int r, int out_rc, const char *cmd)
{
	if (r > 0) {
		fprintf(stderr, "kvmstat: %s: the answer is incomplete: some values are not in "
		    "the dump (shown as ?)\n", cmd);
		return 1;
	}
	return out_rc;
}

static json_t *
flag_list(unsigned f)
{
	json_t *a = json_array();

	if (f & KVS_CF_LIVE)
		json_array_append_new(a, json_string("live"));
	if (f & KVS_CF_UNREADABLE)
		json_array_append_new(a, json_string("unreadable"));
	if (f & KVS_CF_ESTIMATE)
		json_array_append_new(a, json_string("estimate"));
	return a;
}

static json_t *
cvalue(const struct kvs_counter *c)
{
	return c->flags & KVS_CF_UNREADABLE ? json_null() : json_integer((json_int_t)c->value);
}

/* ---- mem ------------------------------------------------------------------ */

static void
meminfo_line(const struct kvs_counter *c)
{
	char label[80], val[32];

	snprintf(label, sizeof(label), "%s:", c->name);
	if (c->flags & KVS_CF_UNREADABLE)
		snprintf(val, sizeof(val), "?");
	else
		snprintf(val, sizeof(val), "%" PRIu64, c->value);
	if (strlen(label) > 16)    /* HardwareCorrupted: the kernel's own width */
		printf("%s %5s kB\n", label, val);
	else if (c->unit == KVS_UNIT_COUNT)
		printf("%-16s%8s\n", label, val);
	else
		printf("%-16s%8s kB\n", label, val);
}

static const char *
unit_str(kvs_unit_t u)
{
	return u == KVS_UNIT_KIB ? "KiB" : u == KVS_UNIT_PAGES ? "pages" :
	    u == KVS_UNIT_BYTES ? "bytes" : "count";
}

int
cmd_mem(kvs_t *kd, const struct opts *o)
{
	struct kvs_counter *c = NULL;
	size_t n = 0, i;
	bool bsd = strcmp(family(kd), "FreeBSD") == 0;
	int r, rc = 0;

	if ((r = kvs_meminfo(kd, &c, &n)) < 0)
		return fail(kd, o, "mem");
	if (o->json) {
		struct emitter e;
		json_t *root, *groups = json_object(), *flags = json_object();
		emit_init(&e, true, stdout);
		root = emit_json_root(&e);
		for (i = 0; i < n; i++) {
			const char *g = bsd ? c[i].group : "meminfo";
			json_t *obj = json_object_get(groups, g);
			if (obj == NULL) {
				obj = json_object();
				json_object_set_new(groups, g, obj);
			}
			/* FreeBSD: vm_cnt by field, top's queues by top's words
			 * (Active, Inact, ...), the allocators by key */
			json_object_set_new(obj, bsd && strcmp(g, "queues") != 0 ? c[i].key :
			    c[i].name, cvalue(&c[i]));
			if (c[i].flags)
				json_object_set_new(flags, c[i].name, flag_list(c[i].flags));
		}
		json_object_update(root, groups);
		json_decref(groups);
		if (!bsd && json_object_get(root, "meminfo") == NULL)
			json_object_set_new(root, "meminfo", json_object());
		if (json_object_size(flags) > 0)
			json_object_set_new(root, "flags", flags);
		else
			json_decref(flags);
		rc = emit_finish(&e);
	} else if (o->csv) {
		fputs("group,name,key,value,unit,flags,note", stdout);
		csv_end(stdout);
		for (i = 0; i < n; i++) {
			char fl[64] = "";
			csv_field(stdout, c[i].group, true);
			csv_field(stdout, c[i].name, false);
			csv_field(stdout, c[i].key, false);
			if (c[i].flags & KVS_CF_UNREADABLE)
				csv_field(stdout, "", false);
			else
				csv_u64(stdout, c[i].value, false);
			csv_field(stdout, unit_str(c[i].unit), false);
			snprintf(fl, sizeof(fl), "%s%s%s", c[i].flags & KVS_CF_LIVE ? "live " : "",
			    c[i].flags & KVS_CF_UNREADABLE ? "unreadable " : "",
			    c[i].flags & KVS_CF_ESTIMATE ? "estimate" : "");
			csv_field(stdout, fl, false);
			csv_field(stdout, c[i].note, false);
			csv_end(stdout);
		}
		rc = fflush(stdout) == 0 ? 0 : 1;
	} else if (!bsd) {
		for (i = 0; i < n; i++)
			meminfo_line(&c[i]);
	} else {
		/* vmstat -s's lines, then top's Mem: line, then the allocators. */
		bool mem = false;
		for (i = 0; i < n; i++) {
			if (strcmp(c[i].group, "queues") == 0) {
				/* top: "Mem: 154M Active, 2404K Inact, ..." */
				char hb[32];
				if (c[i].flags & KVS_CF_UNREADABLE)
					snprintf(hb, sizeof(hb), "?");
				else
					top_k(hb, sizeof(hb), c[i].value);
				printf("%s%s %s", mem ? ", " : "Mem: ", hb, c[i].name);
				mem = true;
				continue;
			}
			if (mem) {
				putchar('\n');
				mem = false;
			}
			if (c[i].flags & KVS_CF_UNREADABLE)
				printf("%9s %s\n", "?", c[i].name);
			else
				printf("%9" PRIu64 " %s\n", c[i].value, c[i].name);
		}
		if (mem)
			putchar('\n');
	}
	kvs_counters_free(c, n);
	return finish(r, rc, "mem");
}

/* ---- buddyinfo ------------------------------------------------------------ */

/* A zone whose struct the dump does not hold: listed, its figures unknown. */
static bool
zone_lost(const struct kvs_pzone *z)
{
	return (z->flags & KVS_CF_UNREADABLE) && z->norders == 0;
}

static void
phys_free(const struct kvs_pzone *z, size_t n)
{
	/* sysctl vm.phys_free: per domain, a table per free list of each
	 * order's free blocks per pool. */
	size_t i;
	unsigned o, p;
	int dom = -1;

	for (i = 0; i < n; i++) {
		if (z[i].node != dom) {
			dom = z[i].node;
			printf("\nDOMAIN %d:\n", dom);
		}
		printf("\nFREE LIST %d:\n\n  ORDER (SIZE)  |  NUMBER\n              ", z[i].index);
		for (p = 0; p < z[i].npools; p++)
			printf("  |  POOL %u", p);
		printf("\n--            ");
		for (p = 0; p < z[i].npools; p++)
			printf("-- --      ");
		printf("--\n");
		for (o = z[i].norders; o-- > 0;) {
			printf("  %2u (%6" PRIu64 "K)", o, (uint64_t)1 << (o + 2));
			for (p = 0; p < z[i].npools; p++)
				printf("  |  %6" PRIu64, z[i].pool_free[p][o]);
			printf("\n");
		}
	}
}

int
cmd_buddyinfo(kvs_t *kd, const struct opts *o)
{
	struct kvs_pzone *z = NULL;
	size_t n = 0, i;
	unsigned k;
	int r, rc = 0;

	if ((r = kvs_pzones(kd, &z, &n)) < 0)
		return fail(kd, o, "buddyinfo");
	if (o->json) {
		struct emitter e;
		json_t *arr = json_array();
		emit_init(&e, true, stdout);
		for (i = 0; i < n; i++) {
			json_t *zz, *f;
			if (!z[i].populated && !zone_lost(&z[i]))
				continue;
			zz = json_object();
			f = json_array();
			json_object_set_new(zz, "node", json_integer(z[i].node));
			json_object_set_new(zz, "zone", json_dumpstr(z[i].name));
			for (k = 0; k < z[i].norders; k++)
				json_array_append_new(f, json_integer((json_int_t)z[i].free[k]));
			json_object_set_new(zz, "free", zone_lost(&z[i]) ? json_null() : f);
			if (zone_lost(&z[i]))
				json_decref(f);
			if (z[i].npools > 0) {
				json_t *pools = json_object();
				unsigned p;
				for (p = 0; p < z[i].npools; p++) {
					json_t *pa = json_array();
					for (k = 0; k < z[i].norders; k++)
						json_array_append_new(pa, json_integer((json_int_t)
						    z[i].pool_free[p][k]));
					json_object_set_new(pools, z[i].pool_name[p], pa);
				}
				json_object_set_new(zz, "pools", pools);
			}
			json_array_append_new(arr, zz);
		}
		json_object_set_new(emit_json_root(&e), "zones", arr);
		rc = emit_finish(&e);
	} else if (o->csv) {
		fputs("node,zone,order,free", stdout);
		csv_end(stdout);
		for (i = 0; i < n; i++)
			for (k = 0; z[i].populated && k < z[i].norders; k++) {
				csv_i64(stdout, z[i].node, true);
				csv_field(stdout, z[i].name, false);
				csv_u64(stdout, k, false);
				csv_u64(stdout, z[i].free[k], false);
				csv_end(stdout);
			}
		rc = fflush(stdout) == 0 ? 0 : 1;
	} else if (strcmp(family(kd), "FreeBSD") == 0) {
		phys_free(z, n);
	} else {
		for (i = 0; i < n; i++) {
			if (zone_lost(&z[i])) {
				printf("Node %d, zone %8s ?\n", z[i].node, z[i].name);
				continue;
			}
			if (!z[i].populated)
				continue;
			printf("Node %d, zone %8s ", z[i].node, z[i].name);
			for (k = 0; k < z[i].norders; k++)
				printf("%6" PRIu64 " ", z[i].free[k]);
			printf("\n");
		}
	}
	kvs_pzones_free(z, n);
	return finish(r, rc, "buddyinfo");
}

/* ---- zoneinfo ------------------------------------------------------------- */

static json_t *
stats_json(const struct kvs_counter *c, size_t n)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_set_new(o, c[i].name, cvalue(&c[i]));
	return o;
}

static void
stat_lines(const struct kvs_counter *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (c[i].flags & KVS_CF_UNREADABLE)
			printf("\n      %-12s ?", c[i].name);
		else
			printf("\n      %-12s %" PRIu64, c[i].name, c[i].value);
	}
}

static void
zone_text(const struct kvs_pzone *z)
{
	unsigned k;
	size_t i;

	printf("Node %d, zone %8s", z->node, z->name);
	if (zone_lost(z)) {
		printf("\n  ?\n");
		return;
	}
	if (z->node_stat != NULL) {
		printf("\n  per-node stats");
		stat_lines(z->node_stat, z->nnode_stat);
	}
	printf("\n  pages free     %" PRIu64 "\n        boost    %" PRIu64
	    "\n        min      %" PRIu64 "\n        low      %" PRIu64
	    "\n        high     %" PRIu64 "\n        spanned  %" PRIu64
	    "\n        present  %" PRIu64 "\n        managed  %" PRIu64
	    "\n        cma      %" PRIu64, z->free_pages, z->wmark_boost,
	    z->wmark_min + z->wmark_boost, z->wmark_low + z->wmark_boost,
	    z->wmark_high + z->wmark_boost, z->spanned, z->present, z->managed, z->cma);
	printf("\n        protection: (");
	for (k = 0; k < z->nprotection; k++)
		printf("%s%" PRId64, k ? ", " : "", (int64_t)z->protection[k]);
	printf(")");
	if (!z->populated) {
		printf("\n");
		return;
	}
	stat_lines(z->stat, z->nstat);
	printf("\n  pagesets");
	for (i = 0; i < z->npcp; i++) {
		const struct kvs_pzone_pcp *p = &z->pcp[i];
		printf("\n    cpu: %d\n              count: %" PRId64 "\n              high:  %"
		    PRId64 "\n              batch: %" PRId64, p->cpu, p->count, p->high, p->batch);
		if (p->stat_threshold >= 0)
			printf("\n  vm stats threshold: %" PRId64, p->stat_threshold);
	}
	if (z->unreclaimable >= 0)
		printf("\n  node_unreclaimable:  %d", z->unreclaimable);
	printf("\n  start_pfn:           %" PRIu64 "\n", z->start_pfn);
}

int
cmd_zoneinfo(kvs_t *kd, const struct opts *o)
{
	struct kvs_pzone *z = NULL;
	size_t n = 0, i;
	unsigned k;
	int r, rc = 0;

	if ((r = kvs_pzones(kd, &z, &n)) < 0)
		return fail(kd, o, "zoneinfo");
	if (o->json) {
		struct emitter e;
		json_t *arr = json_array();
		emit_init(&e, true, stdout);
		for (i = 0; i < n; i++) {
			json_t *zz = json_object(), *pr = json_array();
#define U(k, v) json_object_set_new(zz, k, json_integer((json_int_t)(v)))
			U("node", z[i].node);
			json_object_set_new(zz, "zone", json_dumpstr(z[i].name));
			json_object_set_new(zz, "kaddr", json_kaddr(z[i].kaddr));
			json_object_set_new(zz, "populated", json_boolean(z[i].populated));
			U("pages_free", z[i].free_pages);
			U("boost", z[i].wmark_boost);
			U("min", z[i].wmark_min + z[i].wmark_boost);
			U("low", z[i].wmark_low + z[i].wmark_boost);
			U("high", z[i].wmark_high + z[i].wmark_boost);
			U("spanned", z[i].spanned);
			U("present", z[i].present);
			U("managed", z[i].managed);
			U("cma", z[i].cma);
			U("start_pfn", z[i].start_pfn);
			for (k = 0; k < z[i].nprotection; k++)
				json_array_append_new(pr, json_integer((json_int_t)z[i].protection[k]));
			json_object_set_new(zz, "protection", pr);
			if (z[i].populated)
				json_object_set_new(zz, "stats", stats_json(z[i].stat, z[i].nstat));
			if (z[i].node_stat != NULL)
				json_object_set_new(zz, "node_stats", stats_json(z[i].node_stat,
				    z[i].nnode_stat));
			if (z[i].populated && z[i].unreclaimable >= 0)
				json_object_set_new(zz, "node_unreclaimable",
				    json_boolean(z[i].unreclaimable));
			if (z[i].npcp > 0) {
				json_t *ps = json_array();
				size_t j;
				for (j = 0; j < z[i].npcp; j++) {
					json_t *p = json_object();
					json_object_set_new(p, "cpu", json_integer(z[i].pcp[j].cpu));
					json_object_set_new(p, "count", json_integer(z[i].pcp[j].count));
					json_object_set_new(p, "high", json_integer(z[i].pcp[j].high));
					json_object_set_new(p, "batch", json_integer(z[i].pcp[j].batch));
					json_object_set_new(p, "stat_threshold",
					    z[i].pcp[j].stat_threshold < 0 ? json_null() :
					    json_integer(z[i].pcp[j].stat_threshold));
					json_array_append_new(ps, p);
				}
				json_object_set_new(zz, "pagesets", ps);
			}
			if (z[i].flags & KVS_CF_UNREADABLE)
				json_object_set_new(zz, "unreadable", json_string(z[i].note));
#undef U
			json_array_append_new(arr, zz);
		}
		json_object_set_new(emit_json_root(&e), "zones", arr);
		rc = emit_finish(&e);
	} else if (o->csv) {
		fputs("node,zone,populated,pages_free,min,low,high,spanned,present,managed,cma,"
		    "start_pfn", stdout);
		csv_end(stdout);
		for (i = 0; i < n; i++) {
			csv_i64(stdout, z[i].node, true);
			csv_field(stdout, z[i].name, false);
			csv_u64(stdout, (uint64_t)z[i].populated, false);
			csv_u64(stdout, z[i].free_pages, false);
			csv_u64(stdout, z[i].wmark_min + z[i].wmark_boost, false);
			csv_u64(stdout, z[i].wmark_low + z[i].wmark_boost, false);
			csv_u64(stdout, z[i].wmark_high + z[i].wmark_boost, false);
			csv_u64(stdout, z[i].spanned, false);
			csv_u64(stdout, z[i].present, false);
			csv_u64(stdout, z[i].managed, false);
			csv_u64(stdout, z[i].cma, false);
			csv_u64(stdout, z[i].start_pfn, false);
			csv_end(stdout);
		}
		rc = fflush(stdout) == 0 ? 0 : 1;
	} else if (strcmp(family(kd), "FreeBSD") == 0) {
		for (i = 0; i < n; i++) {
			printf("domain %d, free list %d (%s):", z[i].node, z[i].index, z[i].name);
			for (k = 0; k < z[i].norders; k++)
				printf(" %" PRIu64, z[i].free[k]);
			printf("\n");
		}
	} else {
		for (i = 0; i < n; i++)
			zone_text(&z[i]);
	}
	kvs_pzones_free(z, n);
	return finish(r, rc, "zoneinfo");
}
