/*
 * cmd_profile.c - `kvmstat gmon` writes kgmon's gmon.out from a dump;
 * `kvmstat profile` reports it directly: a flat profile (ticks, %, seconds
 * at profrate, calls) per ELF function symbol and the busiest call arcs.
 * A bin's ticks go to the function its first byte lies in (gprof spreads a
 * bin over the functions it overlaps; with 16-byte-aligned functions and
 * 16-byte bins the two agree).  "calls" counts every arc into a function,
 * self-recursive ones included, where gprof prints those as "+N" apart.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kvmprof.h"

struct fn {
	const char *name;
	uint64_t addr, ticks, calls;
};

static const char *
state_name(int s)
{
	static const char *const n[] = { "on", "busy", "error", "off" };
	return s >= 0 && s <= 3 ? n[s] : "unknown";
}

static kvmprof_gmon_t *
read_gmon(kvs_t *kd)
{
	kvmprof_gmon_t *g = kvmprof_gmon_read(kd);
	char clean[4 * KVS_ERRBUF_SIZE];

	if (g == NULL)
		fprintf(stderr, "kvmstat: %s\n", sanitize(clean, sizeof(clean), kvs_geterr(kd),
		    strlen(kvs_geterr(kd)), false));
	return g;
}

int
cmd_gmon(kvs_t *kd, const struct opts *o)
{
	const char *out = o->output ? o->output : "gmon.out";
	kvmprof_gmon_t *g = read_gmon(kd);

	if (g == NULL)
		return 1;
	if (kvmprof_gmon_write(g, out, o->force) != 0) {
		if (errno == EEXIST)
			fprintf(stderr, "kvmstat: %s exists (use -f to replace it)\n", out);
		else
			fprintf(stderr, "kvmstat: writing %s: %s\n", out, strerror(errno));
		kvmprof_gmon_free(g);
		return 1;
	}
	fprintf(stderr, "kvmstat: wrote %s: %zu bins, %zu arcs, profiling %s, %d Hz\n", out,
	    kvmprof_gmon_nbins(g), kvmprof_gmon_narcs(g), state_name(kvmprof_gmon_state(g)),
	    kvmprof_gmon_profrate(g));
	kvmprof_gmon_free(g);
	return 0;
}

static struct fn *
find_fn(struct fn *fns, size_t *n, size_t cap, const char *name, uint64_t addr)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (fns[i].addr == addr)
			return &fns[i];
	if (*n == cap)
		return NULL;
	fns[*n] = (struct fn){ name, addr, 0, 0 };
	return &fns[(*n)++];
}

static int
cmp_fn(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;

	if (x->ticks != y->ticks)
		return x->ticks < y->ticks ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->name, y->name);
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

int
cmd_profile(kvs_t *kd, const struct opts *o)
{
	kvmprof_gmon_t *g = read_gmon(kd);
	size_t nb, i, nf = 0, cap, na;
	struct fn *fns;
	struct arcrow *arcs;
	uint64_t total = 0, unknown = 0;
	double hz;
	int top = o->top > 0 ? o->top : 20;

	if (g == NULL)
		return 1;
	nb = kvmprof_gmon_nbins(g);
	na = kvmprof_gmon_narcs(g);
	cap = nb + na + 1;
	fns = calloc(cap, sizeof(*fns));
	arcs = calloc(na + 1, sizeof(*arcs));
	if (fns == NULL || arcs == NULL) {
		free(fns);
		free(arcs);
		kvmprof_gmon_free(g);
		return 1;
	}
	hz = kvmprof_gmon_profrate(g) > 0 ? kvmprof_gmon_profrate(g) : 1;
	for (i = 0; i < nb; i++) {
		uint64_t t = kvmprof_gmon_bin(g, i), off;
		uint64_t pc = kvmprof_gmon_lowpc(g) + i * kvmprof_gmon_binsize(g);
		const char *s;
		struct fn *f;

		if (t == 0)
			continue;
		total += t;
		s = kvs_symbol_at(kd, pc, &off);
		if (s == NULL || (f = find_fn(fns, &nf, cap, s, pc - off)) == NULL) {
			unknown += t;
			continue;
		}
		f->ticks += t;
	}
	for (i = 0; i < na; i++) {
		uint64_t off;
		const char *s;
		struct fn *f;

		kvmprof_gmon_arc(g, i, &arcs[i].frompc, &arcs[i].selfpc, &arcs[i].count);
		s = kvs_symbol_at(kd, arcs[i].selfpc, &off);
		if (s != NULL && (f = find_fn(fns, &nf, cap, s, arcs[i].selfpc - off)) != NULL)
			f->calls += (uint64_t)arcs[i].count;
	}
	qsort(fns, nf, sizeof(*fns), cmp_fn);
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
			json_object_set_new(r, "name", json_string(fns[i].name));
			json_object_set_new(r, "ticks", json_integer((json_int_t)fns[i].ticks));
			json_object_set_new(r, "percent", json_real(total ? 100.0 * fns[i].ticks / total : 0));
			json_object_set_new(r, "seconds", json_real(fns[i].ticks / hz));
			json_object_set_new(r, "calls", json_integer((json_int_t)fns[i].calls));
			json_array_append_new(jf, r);
		}
		for (i = 0; i < na && (int)i < top; i++) {
			json_t *r = json_object();
			json_object_set_new(r, "from", json_string(where(kd, arcs[i].frompc, b1, sizeof(b1))));
			json_object_set_new(r, "to", json_string(where(kd, arcs[i].selfpc, b2, sizeof(b2))));
			json_object_set_new(r, "frompc", json_integer((json_int_t)arcs[i].frompc));
			json_object_set_new(r, "selfpc", json_integer((json_int_t)arcs[i].selfpc));
			json_object_set_new(r, "count", json_integer(arcs[i].count));
			json_array_append_new(ja, r);
		}
		json_object_set_new(emit_json_root(&e), "functions", jf);
		json_object_set_new(emit_json_root(&e), "arcs", ja);
		free(fns);
		free(arcs);
		kvmprof_gmon_free(g);
		return emit_finish(&e);
	}
	printf("kernel profile: profiling %s, %d Hz, %" PRIu64 " ticks (%.2f s)\n\n",
	    state_name(kvmprof_gmon_state(g)), kvmprof_gmon_profrate(g), total, total / hz);
	printf("%7s %10s %9s %12s  %s\n", "%time", "ticks", "seconds", "calls", "name");
	for (i = 0; i < nf && (int)i < top; i++)
		printf("%7.2f %10" PRIu64 " %9.2f %12" PRIu64 "  %s\n",
		    total ? 100.0 * fns[i].ticks / total : 0.0, fns[i].ticks, fns[i].ticks / hz,
		    fns[i].calls, fns[i].name);
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
	free(fns);
	free(arcs);
	kvmprof_gmon_free(g);
	return fflush(stdout) == 0 ? 0 : 1;
}
