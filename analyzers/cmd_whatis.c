/*
 * cmd_whatis.c - `kvmstat whatis ADDR...|-`: what holds each address (a
 * slab object, a page, a vmalloc area, a symbol, a task's stack), crash's
 * `kmem ADDR` (FreeBSD: also the kernel_map entry, or the gap between two,
 * that holds it); and `kvmstat vmalloc`: the kernel's vmalloc areas as
 * /proc/vmallocinfo prints them (FreeBSD: the vmem arenas).
 *
 * An answer the dump holds only in part is printed with `?` for what is
 * missing (JSON null), a note on stderr, and exit status 1.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "census.h"
#include "cli.h"

static int
lib_error(kvs_t *kd, const struct opts *o, const char *cmd)
{
	char clean[4 * KVS_ERRBUF_SIZE];
	const char *msg = kvs_geterr(kd);

	fprintf(stderr, "kvmstat: %s: %s\n", cmd, sanitize(clean, sizeof(clean), msg,
	    strlen(msg), false));
	if (o->json)
		json_error("read", msg);
	return 1;
}

static void
incomplete(const char *cmd)
{
	fprintf(stderr, "kvmstat: %s: the answer is incomplete: some of its memory is not "
	    "in the dump\n", cmd);
}

static bool
parse_addr(const char *s, uint64_t *v)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!isxdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 16);
	while (isspace((unsigned char)*end))
		end++;
	return errno == 0 && *end == '\0';
}

static json_t *
flags_array(const char *s)
{
	json_t *a = json_array();
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, "| ", &save); tok != NULL; tok = strtok_r(NULL, "| ", &save))
		json_array_append_new(a, json_string(tok));
	return a;
}

static json_t *
whatis_json(const struct kvs_whatis *w, int rc)
{
	json_t *r = json_object();

	json_object_set_new(r, "address", json_kaddr(w->addr));
	json_object_set_new(r, "kind", json_string(kvs_whatis_kind_str(w->kind)));
	if (w->kind == KVS_WHATIS_SLAB) {
		bool known = w->state != KVS_OBJ_UNKNOWN;
		json_object_set_new(r, "cache", w->cache[0] ? json_dumpstr(w->cache) : json_null());
		json_object_set_new(r, "cache_address", json_kaddr(w->cache_kaddr));
		json_object_set_new(r, "object", json_kaddr(w->object));
		json_object_set_new(r, "offset", json_integer((json_int_t)w->offset));
		json_object_set_new(r, "index", json_integer((json_int_t)w->obj_index));
		json_object_set_new(r, "object_size", json_integer((json_int_t)w->objsize));
		json_object_set_new(r, "allocated", known ? json_boolean(w->state ==
		    KVS_OBJ_ALLOCATED) : json_null());
		json_object_set_new(r, "state", known ? json_string(kvs_obj_state_str(w->state)) :
		    json_null());
		json_object_set_new(r, "cpu", w->cpu >= 0 ? json_integer(w->cpu) : json_null());
		if (w->alloc_caller != 0)
			json_object_set_new(r, "alloc_caller", json_kaddr(w->alloc_caller));
		if (w->free_caller != 0)
			json_object_set_new(r, "free_caller", json_kaddr(w->free_caller));
		if (w->malloc_zone[0] != '\0')
			json_object_set_new(r, "malloc_zone", json_dumpstr(w->malloc_zone));
	}
	if (w->page != 0) {
		json_object_set_new(r, "pfn", json_integer((json_int_t)w->pfn));
		json_object_set_new(r, "page", json_kaddr(w->page));
		json_object_set_new(r, "page_flags", rc > 0 && w->page_flags == 0 ? json_null() :
		    flags_array(w->page_flags_str));
		if (w->kind == KVS_WHATIS_PAGE) {
			json_object_set_new(r, "mapping", json_kaddr(w->mapping));
			json_object_set_new(r, "order", json_integer(w->order));
			json_object_set_new(r, "head", w->head ? json_kaddr(w->head) : json_null());
		}
	}
	if (w->kind == KVS_WHATIS_VMALLOC) {
		json_object_set_new(r, "area_start", json_kaddr(w->area_start));
		json_object_set_new(r, "area_end", json_kaddr(w->area_end));
		json_object_set_new(r, "caller", w->symbol[0] ? json_dumpstr(w->symbol) :
		    json_null());
	}
	if (w->kind == KVS_WHATIS_VMALLOC && w->map_name[0] != '\0') {
		/* FreeBSD: the vm_map entry */
		json_object_set_new(r, "map", json_dumpstr(w->map_name));
		json_object_set_new(r, "map_entry", json_kaddr(w->map_entry));
		json_object_set_new(r, "map_object", w->map_object ? json_kaddr(w->map_object) :
		    json_null());
		json_object_set_new(r, "map_offset", json_integer((json_int_t)w->map_offset));
		json_object_set_new(r, "map_eflags", json_integer(w->map_eflags));
		json_object_set_new(r, "map_protection", json_integer(w->map_prot));
		json_object_set_new(r, "map_max_protection", json_integer(w->map_maxprot));
	}
	if (w->kind == KVS_WHATIS_UNKNOWN && w->map_name[0] != '\0') {
		/* in a vm_map's range, between its entries */
		json_object_set_new(r, "map", json_dumpstr(w->map_name));
		json_object_set_new(r, "gap_start", json_kaddr(w->area_start));
		json_object_set_new(r, "gap_end", json_kaddr(w->area_end));
		json_object_set_new(r, "prev_entry", w->map_prev ? json_kaddr(w->map_prev) :
		    json_null());
		json_object_set_new(r, "next_entry", w->map_next ? json_kaddr(w->map_next) :
		    json_null());
	}
	if (w->kind == KVS_WHATIS_SYMBOL)
		json_object_set_new(r, "symbol", json_dumpstr(w->symbol));
	if (w->kind == KVS_WHATIS_STACK) {
		json_object_set_new(r, "pid", json_integer(w->pid));
		json_object_set_new(r, "comm", json_dumpstr(w->comm));
		json_object_set_new(r, "task", json_kaddr(w->task));
		if (w->tid >= 0) {               /* FreeBSD: the thread */
			json_object_set_new(r, "tid", json_integer(w->tid));
			json_object_set_new(r, "thread", json_kaddr(w->task));
		}
	}
	if (w->note[0] != '\0')
		json_object_set_new(r, "note", json_dumpstr(w->note));
	return r;
}

static void
caller_text(kvs_t *kd, uint64_t a, char *buf, size_t len)
{
	uint64_t off;
	const char *s = kvs_symbol_at(kd, a, &off);

	if (s != NULL)
		snprintf(buf, len, "%s+0x%" PRIx64, s, off);
	else
		snprintf(buf, len, "0x%" PRIx64, a);
}

/* VM_PROT_* as "rwx". */
static const char *
prot_text(unsigned p, char buf[4])
{
	buf[0] = p & 1 ? 'r' : '-';
	buf[1] = p & 2 ? 'w' : '-';
	buf[2] = p & 4 ? 'x' : '-';
	buf[3] = '\0';
	return buf;
}

/* FreeBSD's vm_map entry, or the gap between two. */
static void
map_text(const struct kvs_whatis *w)
{
	char clean[128], p1[4], p2[4], a[24], b[24];

	sanitize(clean, sizeof(clean), w->map_name, strlen(w->map_name), false);
	if (w->kind == KVS_WHATIS_VMALLOC) {
		printf("  MAP %s ENTRY %016" PRIx64 " OBJECT %016" PRIx64 " OFFSET 0x%" PRIx64
		    " EFLAGS 0x%" PRIx32 " PROT %s/%s\n", clean, w->map_entry, w->map_object,
		    w->map_offset, w->map_eflags, prot_text(w->map_prot, p1),
		    prot_text(w->map_maxprot, p2));
		return;
	}
	snprintf(a, sizeof(a), "%016" PRIx64, w->map_prev);
	snprintf(b, sizeof(b), "%016" PRIx64, w->map_next);
	printf("  GAP %016" PRIx64 "-%016" PRIx64 " in %s  PREV %s  NEXT %s\n", w->area_start,
	    w->area_end, clean, w->map_prev ? a : "-", w->map_next ? b : "-");
}

static void
whatis_text(kvs_t *kd, const struct kvs_whatis *w)
{
	char clean[1024], c2[512];

	printf("%016" PRIx64 ": %s\n", w->addr, kvs_whatis_kind_str(w->kind));
	switch (w->kind) {
	case KVS_WHATIS_SLAB:
		printf("  CACHE %016" PRIx64 " %s  OBJSIZE %" PRIu64 "\n", w->cache_kaddr,
		    w->cache[0] ? sanitize(clean, sizeof(clean), w->cache, strlen(w->cache),
		    false) : "?", w->objsize);
		printf("  OBJECT %016" PRIx64 " +%" PRIu64 "  INDEX %" PRIu64 "  %s",
		    w->object, w->offset, w->obj_index, w->state == KVS_OBJ_UNKNOWN ? "?" :
		    w->state == KVS_OBJ_ALLOCATED ? "[ALLOCATED]" : "FREE");
		if (w->state != KVS_OBJ_ALLOCATED && w->state != KVS_OBJ_UNKNOWN)
			printf(" %s", kvs_obj_state_str(w->state));
		if (w->cpu >= 0)
			printf(" cpu %d", w->cpu);
		printf("\n");
		if (w->malloc_zone[0] != '\0')
			printf("  MALLOC ZONE %s\n", sanitize(clean, sizeof(clean), w->malloc_zone,
			    strlen(w->malloc_zone), false));
		if (w->alloc_caller != 0) {
			caller_text(kd, w->alloc_caller, c2, sizeof(c2));
			printf("  ALLOCATED BY %s\n", c2);
		}
		if (w->free_caller != 0) {
			caller_text(kd, w->free_caller, c2, sizeof(c2));
			printf("  FREED BY %s\n", c2);
		}
		break;
	case KVS_WHATIS_VMALLOC:
		printf("  AREA %016" PRIx64 "-%016" PRIx64 "  %s\n", w->area_start, w->area_end,
		    w->symbol[0] ? sanitize(clean, sizeof(clean), w->symbol, strlen(w->symbol),
		    false) : "-");
		if (w->map_name[0] != '\0')
			map_text(w);
		break;
	case KVS_WHATIS_SYMBOL:
		printf("  %s\n", sanitize(clean, sizeof(clean), w->symbol, strlen(w->symbol),
		    false));
		break;
	case KVS_WHATIS_STACK:
		if (w->tid >= 0)
			printf("  STACK of PID %d TID %d \"%s\" thread %016" PRIx64 "\n", w->pid,
			    w->tid, sanitize(clean, sizeof(clean), w->comm, strlen(w->comm), false),
			    w->task);
		else
			printf("  STACK of PID %d \"%s\" task %016" PRIx64 "\n", w->pid,
			    sanitize(clean, sizeof(clean), w->comm, strlen(w->comm), false), w->task);
		break;
	default:
		if (w->map_name[0] != '\0')
			map_text(w);
		break;
	}
	if (w->page != 0)
		printf("  PAGE %016" PRIx64 " PFN %" PRIu64 " FLAGS %" PRIx64 " %s%s%s\n",
		    w->page, w->pfn, w->page_flags, w->page_flags_str[0] ? "(" : "",
		    w->page_flags_str, w->page_flags_str[0] ? ")" : "");
	if (w->kind == KVS_WHATIS_PAGE)
		printf("  MAPPING %016" PRIx64 " ORDER %u HEAD %016" PRIx64 "\n", w->mapping,
		    w->order, w->head);
	if (w->note[0] != '\0')
		printf("  (%s)\n", sanitize(clean, sizeof(clean), w->note, strlen(w->note), false));
}

static int
one(kvs_t *kd, const char *arg, json_t *arr, int *status)
{
	struct kvs_whatis w;
	uint64_t a;
	int rc;

	if (!parse_addr(arg, &a)) {
		fprintf(stderr, "kvmstat: whatis: '%s' is not a hex address\n", arg);
		*status = 2;
		return 0;
	}
	rc = kvs_whatis(kd, a, &w);
	if (rc < 0)
		return -1;
	if (rc > 0 && *status == 0)
		*status = 1;
	if (arr != NULL)
		json_array_append_new(arr, whatis_json(&w, rc));
	else
		whatis_text(kd, &w);
	return 0;
}

int
cmd_whatis(kvs_t *kd, const struct opts *o)
{
	json_t *arr = o->json ? json_array() : NULL;
	int i, status = 0, rc = 0;

	if (o->nargs == 0) {
		json_decref(arr);
		return usage_error(o->json, "whatis needs an address (or - to read them from "
		    "standard input)");
	}
	for (i = 0; i < o->nargs && rc == 0; i++) {
		if (strcmp(o->args[i], "-") == 0) {
			char line[256];
			while (rc == 0 && fgets(line, sizeof(line), stdin) != NULL) {
				line[strcspn(line, "\r\n")] = '\0';
				if (line[0] == '\0')
					continue;
				rc = one(kd, line, arr, &status);
			}
		} else
			rc = one(kd, o->args[i], arr, &status);
	}
	if (rc < 0) {
		/* the walk's error, before the family question clears it */
		char why[KVS_ERRBUF_SIZE], clean[4 * KVS_ERRBUF_SIZE];
		snprintf(why, sizeof(why), "%s", kvs_geterr(kd));
		json_decref(arr);
		/* Only a kernel family without answers (census.c's "reads no"). */
		if (strncmp(kvs_geterr(kd), "kvmstat reads no ", 17) == 0 &&
		    wrong_family(kd, o, "Linux", "whatis", "Linux slab caches and pages",
		    "`zone` or `malloc`"))
			return 1;
		fprintf(stderr, "kvmstat: whatis: %s\n", sanitize(clean, sizeof(clean), why,
		    strlen(why), false));
		if (o->json)
			json_error("read", why);
		return 1;
	}
	if (arr != NULL) {
		struct emitter e;
		emit_init(&e, true, stdout);
		json_object_set_new(emit_json_root(&e), "addresses", arr);
		if (emit_finish(&e) != 0)
			return 1;
	}
	if (status == 1)
		incomplete("whatis");
	return status;
}

/* FreeBSD: the vmem arenas' totals. */
static int
arenas(const struct opts *o, struct kvs_arena *a, size_t n, int rc)
{
	size_t i;

	if (o->json) {
		struct emitter e;
		json_t *arr = json_array();
		emit_init(&e, true, stdout);
		for (i = 0; i < n; i++) {
			json_t *r = json_object();
			json_object_set_new(r, "name", json_dumpstr(a[i].name));
			json_object_set_new(r, "address", json_kaddr(a[i].kaddr));
#define U(k, v) json_object_set_new(r, k, (a[i].cflags & KVS_CF_UNREADABLE) ? json_null() : \
	json_integer((json_int_t)(v)))
			U("size", a[i].size);
			U("inuse", a[i].inuse);
			U("free", a[i].free);
			U("quantum", a[i].quantum);
#undef U
			json_array_append_new(arr, r);
		}
		json_object_set_new(emit_json_root(&e), "arenas", arr);
		if (emit_finish(&e) != 0)
			rc = -1;
	} else {
		printf("%-20s %18s %16s %16s %16s %8s\n", "ARENA", "ADDRESS", "SIZE", "INUSE",
		    "FREE", "QUANTUM");
		for (i = 0; i < n; i++) {
			char clean[128];
			if (a[i].cflags & KVS_CF_UNREADABLE) {
				printf("%-20s 0x%016" PRIx64 " ? (%s)\n", sanitize(clean, sizeof(clean),
				    a[i].name, strlen(a[i].name), false), a[i].kaddr, a[i].note);
				continue;
			}
			printf("%-20s 0x%016" PRIx64 " %16" PRIu64 " %16" PRIu64 " %16" PRIu64
			    " %8" PRIu64 "\n", sanitize(clean, sizeof(clean), a[i].name,
			    strlen(a[i].name), false), a[i].kaddr, a[i].size, a[i].inuse, a[i].free,
			    a[i].quantum);
		}
	}
	kvs_arenas_free(a, n);
	if (rc == 1)
		incomplete("vmalloc");
	return rc != 0 ? 1 : 0;
}

int
cmd_vmalloc(kvs_t *kd, const struct opts *o)
{
	struct kvs_varea *v = NULL;
	size_t n = 0, i;
	int rc = kvs_vmalloc(kd, &v, &n);

	if (rc < 0 && kvs_errstatus(kd) == KVS_E_INVAL) {
		/* A kernel without vmalloc areas: its vmem arenas, if any. */
		struct kvs_arena *a = NULL;
		int ar = kvs_arenas(kd, &a, &n);
		if (ar >= 0)
			return arenas(o, a, n, ar);
	}
	if (rc < 0)
		return lib_error(kd, o, "vmalloc");
	if (o->json) {
		struct emitter e;
		json_t *arr = json_array();
		emit_init(&e, true, stdout);
		for (i = 0; i < n; i++) {
			json_t *r = json_object();
			bool bad = (v[i].cflags & KVS_CF_UNREADABLE) != 0;
			json_object_set_new(r, "start", json_kaddr(v[i].start));
			json_object_set_new(r, "end", json_kaddr(v[i].end));
			json_object_set_new(r, "size", bad ? json_null() :
			    json_integer((json_int_t)v[i].size));
			{
				/* "sym+0xoff/0xsize [module]": the module apart */
				char cs[sizeof(v[i].caller_sym)], *br;
				snprintf(cs, sizeof(cs), "%s", v[i].caller_sym);
				br = strstr(cs, " [");
				if (br != NULL && cs[strlen(cs) - 1] == ']') {
					cs[strlen(cs) - 1] = '\0';
					json_object_set_new(r, "module", json_dumpstr(br + 2));
					*br = '\0';
				}
				json_object_set_new(r, "caller", cs[0] ? json_dumpstr(cs) : json_null());
			}
			json_object_set_new(r, "caller_address", v[i].caller ?
			    json_kaddr(v[i].caller) : json_null());
			json_object_set_new(r, "pages", json_integer((json_int_t)v[i].nr_pages));
			json_object_set_new(r, "phys", v[i].phys_addr ? json_kaddr(v[i].phys_addr) :
			    json_null());
			if (v[i].vm_flags == 0 && v[i].caller == 0) {
				/* "vm_map_ram", "unpurged vm_area": one word each. */
				json_t *one = json_array();
				if (v[i].flags[0])
					json_array_append_new(one, json_string(v[i].flags));
				json_object_set_new(r, "flags", one);
			} else
				json_object_set_new(r, "flags", flags_array(v[i].flags));
			json_object_set_new(r, "vmap_area", json_kaddr(v[i].kaddr));
			if (v[i].note[0])
				json_object_set_new(r, "note", json_dumpstr(v[i].note));
			json_array_append_new(arr, r);
		}
		json_object_set_new(emit_json_root(&e), "areas", arr);
		if (emit_finish(&e) != 0)
			rc = -1;
	} else if (o->csv) {
		fputs("start,end,size,caller,pages,phys,flags", stdout);
		csv_end(stdout);
		for (i = 0; i < n; i++) {
			char a[24];
			snprintf(a, sizeof(a), "0x%016" PRIx64, v[i].start);
			csv_field(stdout, a, true);
			snprintf(a, sizeof(a), "0x%016" PRIx64, v[i].end);
			csv_field(stdout, a, false);
			csv_u64(stdout, v[i].size, false);
			csv_field(stdout, v[i].caller_sym, false);
			csv_u64(stdout, v[i].nr_pages, false);
			snprintf(a, sizeof(a), "0x%016" PRIx64, v[i].phys_addr);
			csv_field(stdout, v[i].phys_addr ? a : "", false);
			csv_field(stdout, v[i].flags, false);
			csv_end(stdout);
		}
	} else {
		for (i = 0; i < n; i++) {
			char clean[512];
			if (v[i].cflags & KVS_CF_UNREADABLE) {
				printf("0x%016" PRIx64 "-? ? (%s)\n", v[i].kaddr, v[i].note);
				continue;
			}
			printf("0x%016" PRIx64 "-0x%016" PRIx64 " %7" PRIu64, v[i].start, v[i].end,
			    v[i].size);
			if (v[i].vm_flags == 0 && v[i].caller == 0) {
				printf(" %s\n", v[i].flags);
				continue;
			}
			if (v[i].caller_sym[0])
				printf(" %s", sanitize(clean, sizeof(clean), v[i].caller_sym,
				    strlen(v[i].caller_sym), false));
			if (v[i].nr_pages)
				printf(" pages=%" PRIu64, v[i].nr_pages);
			if (v[i].phys_addr)
				printf(" phys=0x%016" PRIx64, v[i].phys_addr);
			if (v[i].flags[0])
				printf(" %s", v[i].flags);
			printf("\n");
		}
	}
	kvs_vareas_free(v, n);
	if (rc == 1)
		incomplete("vmalloc");
	return rc != 0 ? 1 : 0;
}
