/*
 * cmd_profile.c - `kvmstat gmon` writes kgmon's gmon.out from a dump;
 * `kvmstat profile` reports it directly: a flat profile (ticks, %, seconds
 * at profrate, calls) per ELF function symbol and the busiest call arcs.
 * The flat profile is the library's (kvmprof_gmon_flat, which kvmtop's
 * profile screen shows too): a bin's ticks go to the function its first
 * byte lies in, and "calls" counts every arc into a function, self-recursive
 * ones included, where gprof prints those as "+N" apart.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "kvmprof.h"

static const char *
state_name(int s)
{
	static const char *const n[] = { "on", "busy", "error", "off" };
	return s >= 0 && s <= 3 ? n[s] : "unknown";
}

static kvmprof_gmon_t *
read_gmon(kvs_t *kd, bool json)
{
	kvmprof_gmon_t *g = kvmprof_gmon_read(kd);
	char clean[4 * KVS_ERRBUF_SIZE];

	if (g == NULL) {
		fprintf(stderr, "kvmstat: %s\n", sanitize(clean, sizeof(clean), kvs_geterr(kd),
		    strlen(kvs_geterr(kd)), false));
		if (json)
			json_error("read", kvs_geterr(kd));
	}
	return g;
}

/*
 * -o FILE: a new file, or with -f a regular one replaced (atomically, the
 * file a symbolic link names rather than the link); a FIFO or a character
 * device is written in place; '-' is standard output.  What cannot be
 * written is said with the reason (output_refused).
 */
int
cmd_gmon(kvs_t *kd, const struct opts *o)
{
	const char *out = o->output ? o->output : "gmon.out";
	bool to_stdout = strcmp(out, "-") == 0;
	kvmprof_gmon_t *g;

	if (!to_stdout && output_refused("gmon", out, o->force))
		return 1;
	if ((g = read_gmon(kd, o->json && !to_stdout)) == NULL)
		return 1;
	if (kvmprof_gmon_write(g, to_stdout ? NULL : out, o->force) != 0) {
		int e = errno;
		if (to_stdout || !output_refused("gmon", out, o->force))
			fprintf(stderr, "kvmstat: gmon: writing %s: %s\n",
			    to_stdout ? "standard output" : out, strerror(e));
		kvmprof_gmon_free(g);
		return 1;
	}
	int rc = 0;
	if (o->json && !to_stdout)     /* what was written, as a document */
		rc = emit_wrote_json("gmon", out, -1, json_pack("{s:I,s:I,s:s,s:i}",
		    "bins", (json_int_t)kvmprof_gmon_nbins(g),
		    "arcs", (json_int_t)kvmprof_gmon_narcs(g),
		    "state", state_name(kvmprof_gmon_state(g)),
		    "profrate", kvmprof_gmon_profrate(g)));
	else
		fprintf(stderr, "kvmstat: wrote %s: %zu bins, %zu arcs, profiling %s, %d Hz\n",
		    to_stdout ? "standard output" : out, kvmprof_gmon_nbins(g),
		    kvmprof_gmon_narcs(g), state_name(kvmprof_gmon_state(g)),
		    kvmprof_gmon_profrate(g));
	kvmprof_gmon_free(g);
	return rc;
}

struct arcrow {
	uint64_t frompc, selfpc;
	int64_t count;
};

static int
cmp_arc(const void *a, const void *b)
{
	const struct arcrow *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->frompc < y->frompc ? -1 : x->frompc > y->frompc;
}

static const char *
where(kvs_t *kd, uint64_t pc, char *buf, size_t len)
{
	uint64_t off;
	const char *s = kvs_symbol_at(kd, pc, &off);

	if (s == NULL)
		snprintf(buf, len, "0x%" PRIx64, pc);
	else if (off == 0)
		snprintf(buf, len, "%s", s);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, s, off);
	return buf;
}

static int
cmp_func_addr(const void *a, const void *b)
{
	const struct kvmprof_func *x = *(const struct kvmprof_func *const *)a;
	const struct kvmprof_func *y = *(const struct kvmprof_func *const *)b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * A Linux profile=N buffer, reported as readprofile does: per function
 * with ticks, in address order, its ticks, name and load (ticks per byte of
 * the function, up to the next symbol); then *unknown* (the last bin,
 * samples outside the text) and the total (load over the whole text).
 * --json: step, total, unknown and the functions busiest first.
 */
static int
readprofile_report(kvs_t *kd, const struct opts *o, kvmprof_gmon_t *g)
{
	kvmprof_flat_t *flat = kvmprof_gmon_flat(g, kd);
	const struct kvmprof_func **byaddr;
	uint64_t total, unknown, text = kvmprof_gmon_highpc(g) - kvmprof_gmon_lowpc(g);
	size_t i, nf;
	int rc;

	byaddr = flat != NULL ? calloc(kvmprof_flat_count(flat) + 1, sizeof(*byaddr)) : NULL;
	if (byaddr == NULL) {
		fprintf(stderr, "kvmstat: out of memory\n");
		kvmprof_flat_free(flat);
		kvmprof_gmon_free(g);
		return 1;
	}
	nf = kvmprof_flat_count(flat);
	total = kvmprof_flat_total(flat);
	unknown = kvmprof_flat_unknown(flat);
	if (o->json) {
		struct emitter e;
		json_t *jf = json_array();
		emit_init(&e, true, stdout);
		json_object_set_new(emit_json_root(&e), "step",
		    json_integer((json_int_t)kvmprof_gmon_binsize(g)));
		json_object_set_new(emit_json_root(&e), "total", json_integer((json_int_t)total));
		json_object_set_new(emit_json_root(&e), "unknown", json_integer((json_int_t)unknown));
		for (i = 0; i < nf; i++) {
			const struct kvmprof_func *fn = kvmprof_flat_get(flat, i);
			json_t *r = json_object();
			char a[32];
			snprintf(a, sizeof(a), "0x%016" PRIx64, fn->addr);
			json_object_set_new(r, "function", json_string(fn->name));
			json_object_set_new(r, "address", json_string(a));
			json_object_set_new(r, "ticks", json_integer((json_int_t)fn->ticks));
			json_object_set_new(r, "load", json_real(fn->size ? (double)fn->ticks /
			    (double)fn->size : 0.0));
			json_array_append_new(jf, r);
		}
		json_object_set_new(emit_json_root(&e), "functions", jf);
		rc = emit_finish(&e);
	} else {
		for (i = 0; i < nf; i++)
			byaddr[i] = kvmprof_flat_get(flat, i);
		qsort(byaddr, nf, sizeof(*byaddr), cmp_func_addr);
		for (i = 0; i < nf; i++)
			printf("%6" PRIu64 " %-40s %8.4f\n", byaddr[i]->ticks, byaddr[i]->name,
			    byaddr[i]->size ? (double)byaddr[i]->ticks / (double)byaddr[i]->size : 0.0);
		if (unknown)
			printf("%6" PRIu64 " %-40s %8.4f\n", unknown, "*unknown*", 0.0);
		printf("%6" PRIu64 " %-40s %8.4f\n", total, "total",
		    text ? (double)total / (double)text : 0.0);
		rc = fflush(stdout) == 0 ? 0 : 1;
	}
	free(byaddr);
	kvmprof_flat_free(flat);
	kvmprof_gmon_free(g);
	return rc;
}

int
cmd_profile(kvs_t *kd, const struct opts *o)
{
	kvmprof_gmon_t *g = read_gmon(kd, o->json);
	kvmprof_flat_t *flat;
	const struct kvmprof_func *fn;
	size_t i, nf, na;
	struct arcrow *arcs;
	uint64_t total, unknown;
	double hz;
	int top = o->top > 0 ? o->top : 20;

	if (g == NULL)
		return 1;
	if (kvmprof_gmon_format(g) == KVMPROF_FMT_READPROFILE)
		return readprofile_report(kd, o, g);
	na = kvmprof_gmon_narcs(g);
	flat = kvmprof_gmon_flat(g, kd);
	arcs = calloc(na + 1, sizeof(*arcs));
	if (flat == NULL || arcs == NULL) {
		fprintf(stderr, "kvmstat: out of memory\n");
		kvmprof_flat_free(flat);
		free(arcs);
		kvmprof_gmon_free(g);
		return 1;
	}
	nf = kvmprof_flat_count(flat);
	total = kvmprof_flat_total(flat);
	unknown = kvmprof_flat_unknown(flat);
	hz = kvmprof_gmon_profrate(g) > 0 ? kvmprof_gmon_profrate(g) : 1;
	for (i = 0; i < na; i++)
		kvmprof_gmon_arc(g, i, &arcs[i].frompc, &arcs[i].selfpc, &arcs[i].count);
	qsort(arcs, na, sizeof(*arcs), cmp_arc);
	if (o->json) {
		struct emitter e;
		json_t *jf = json_array(), *ja = json_array();
		char b1[256], b2[256];
		emit_init(&e, true, stdout);
		json_object_set_new(emit_json_root(&e), "state", json_string(state_name(kvmprof_gmon_state(g))));
		json_object_set_new(emit_json_root(&e), "profrate", json_integer(kvmprof_gmon_profrate(g)));
		json_object_set_new(emit_json_root(&e), "total_ticks", json_integer((json_int_t)total));
		json_object_set_new(emit_json_root(&e), "unattributed_ticks", json_integer((json_int_t)unknown));
		for (i = 0; i < nf; i++) {
			json_t *r = json_object();
			fn = kvmprof_flat_get(flat, i);
			json_object_set_new(r, "name", json_dumpstr(fn->name));
			json_object_set_new(r, "ticks", json_integer((json_int_t)fn->ticks));
			json_object_set_new(r, "percent", json_real(total ? 100.0 * fn->ticks / total : 0));
			json_object_set_new(r, "seconds", json_real(fn->ticks / hz));
			json_object_set_new(r, "calls", json_integer((json_int_t)fn->calls));
			json_array_append_new(jf, r);
		}
		for (i = 0; i < na && (int)i < top; i++) {
			json_t *r = json_object();
			json_object_set_new(r, "from", json_dumpstr(where(kd, arcs[i].frompc, b1, sizeof(b1))));
			json_object_set_new(r, "to", json_dumpstr(where(kd, arcs[i].selfpc, b2, sizeof(b2))));
			json_object_set_new(r, "frompc", json_kaddr(arcs[i].frompc));
			json_object_set_new(r, "selfpc", json_kaddr(arcs[i].selfpc));
			json_object_set_new(r, "calls", json_integer(arcs[i].count));
			json_array_append_new(ja, r);
		}
		json_object_set_new(emit_json_root(&e), "functions", jf);
		json_object_set_new(emit_json_root(&e), "arcs", ja);
		kvmprof_flat_free(flat);
		free(arcs);
		kvmprof_gmon_free(g);
		return emit_finish(&e);
	}
	if (o->csv) {
		/* The flat profile, every function (--top limits the text). */
		fputs("name,ticks,percent,seconds,calls", stdout);
		csv_end(stdout);
		for (i = 0; i < nf; i++) {
			char name[1024];
			fn = kvmprof_flat_get(flat, i);
			csv_field(stdout, sanitize(name, sizeof(name), fn->name, strlen(fn->name),
			    false), true);
			printf(",%" PRIu64 ",%.4f,%.4f,%" PRIu64, fn->ticks,
			    total ? 100.0 * fn->ticks / total : 0.0, fn->ticks / hz, fn->calls);
			csv_end(stdout);
		}
		kvmprof_flat_free(flat);
		free(arcs);
		kvmprof_gmon_free(g);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	printf("kernel profile: profiling %s, %d Hz, %" PRIu64 " ticks (%.2f s)\n\n",
	    state_name(kvmprof_gmon_state(g)), kvmprof_gmon_profrate(g), total, total / hz);
	printf("%7s %10s %9s %12s  %s\n", "%time", "ticks", "seconds", "calls", "name");
	for (i = 0; i < nf && (int)i < top; i++) {
		fn = kvmprof_flat_get(flat, i);
		printf("%7.2f %10" PRIu64 " %9.2f %12" PRIu64 "  %s\n",
		    total ? 100.0 * fn->ticks / total : 0.0, fn->ticks, fn->ticks / hz,
		    fn->calls, fn->name);
	}
	if (unknown)
		printf("%7.2f %10" PRIu64 " %9.2f %12s  (outside any function)\n",
		    100.0 * unknown / total, unknown, unknown / hz, "");
	if (nf == 0 && unknown == 0)
		printf("%7s  (no samples and no calls recorded)\n", "");
	printf("\n%12s  %-32s %s\n", "count", "call site", "callee");
	if (na == 0)
		printf("%12s  (no call arcs)\n", "");
	for (i = 0; i < na && (int)i < top; i++) {
		char b1[256], b2[256];
		printf("%12" PRId64 "  %-32s %s\n", arcs[i].count,
		    where(kd, arcs[i].frompc, b1, sizeof(b1)), where(kd, arcs[i].selfpc, b2, sizeof(b2)));
	}
	kvmprof_flat_free(flat);
	free(arcs);
	kvmprof_gmon_free(g);
	return fflush(stdout) == 0 ? 0 : 1;
}
