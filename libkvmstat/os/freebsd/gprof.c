/*
 * gprof.c - FreeBSD's kernel gprof buffers behind _gmonparam, read into a
 * kvmprof profile (profile/gmon.c keeps it, writes gmon.out from it and
 * makes the flat profile).
 *
 * The histogram (kcount) has one counter per HISTFRACTION*sizeof(counter)
 * bytes of text; call arcs are hashed by call site: froms[(frompc - lowpc) /
 * (hashfraction * 2)] indexes tos[], whose `link` chains further callees of
 * the same site (tos[0] is a sentinel).  Every size read from the kernel is
 * checked against the text range and against a hard cap before anything is
 * allocated, and every chain is bounded by tolimit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freebsd.h"
#include "kvs_private.h"
#include "kread.h"
#include "kvmprof.h"
#include "profile.h"

#define GMON_MAX_BYTES (64u << 20)      /* no kernel profile buffer is bigger */
#define TOS_SIZE 24                     /* selfpc, count, link, pad */

static const char G[] = "struct gmonparam";

static int
field(kvs_t *kd, const uint8_t *buf, size_t len, const char *name, uint64_t *v)
{
	struct kfield f;

	if (kfield(kd, G, name, &f, true) != 0)
		return -1;
	*v = kfield_get(buf, len, &f);
	return 0;
}

static void *
read_buf(kvs_t *kd, uint64_t addr, uint64_t size, const char *what)
{
	void *b;

	if (size == 0)
		return calloc(1, 1);
	if (size > GMON_MAX_BYTES) {
		kerr_set(&kd->err, KVS_E_DATA, "%s size %llu is implausible (over %u bytes)",
		    what, (unsigned long long)size, GMON_MAX_BYTES);
		return NULL;
	}
	b = malloc(size);
	if (b == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "%s: out of memory", what);
		return NULL;
	}
	if (kvs_read(kd, addr, b, size) != 0) {
		kerr_push(&kd->err, "%s at 0x%llx", what, (unsigned long long)addr);
		free(b);
		return NULL;
	}
	return b;
}

/*
 * Counter width.  histcounter_type says it in bits (negative for signed
 * GUPROF counters); kernels without the member, or with 0 there, are read
 * by the type kcount points to in DWARF, then by the historical u_short.
 * Only whole 1/2/4/8-byte counters make sense: anything else is corrupt.
 */
static int
counter_width(kvs_t *kd, const uint8_t *gp, size_t len, int *bits)
{
	struct kvs_typeinfo kt;
	uint64_t v;
	int b = 0;

	if (kvs_has_member(kd, G, "histcounter_type") == 1 &&
	    field(kd, gp, len, "histcounter_type", &v) == 0)
		b = (int)(int32_t)v;
	if (b == 0 && kvs_member(kd, G, "kcount", &kt) == 0 && kt.kind == KVS_KIND_POINTER &&
	    kt.elem_size >= 1 && kt.elem_size <= 8)
		b = (int)kt.elem_size * 8;
	kerr_clear(&kd->err);
	if (b == 0)
		b = 16;
	switch (b) {    /* never negated: the dump may say INT_MIN */
	case -64: case -32: case -16: case -8:
	case 8: case 16: case 32: case 64:
		*bits = b;
		return 0;
	}
	return kerr_set(&kd->err, KVS_E_DATA, "histcounter_type %d is not a counter width "
	    "(8, 16, 32 or 64 bits)", b);
}

struct kvmprof_gmon *
freebsd_gprof_read(kvs_t *kd)
{
	struct kvs_typeinfo ti;
	kvmprof_gmon_t *g;
	uint64_t addr, v[16];
	uint8_t gp[512];
	uint16_t *froms = NULL;
	uint8_t *tos = NULL;
	uint64_t fromssize, tossize, tolimit, kcount, fromsp, tosp, i;
	size_t cap = 0;

	kvs_tlb_flush(kd);
	if (kvs_symbol(kd, "_gmonparam", &addr, NULL) != 0) {
		kerr_push(&kd->err, "no kernel profiling (a kernel built without GPROF)");
		return NULL;
	}
	if (kvs_type(kd, G, &ti) != 0 || ti.size == 0 || ti.size > sizeof(gp))
		return NULL;
	if (kvs_read(kd, addr, gp, ti.size) != 0) {
		kerr_push(&kd->err, "reading _gmonparam");
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL) {
		kerr_set(&kd->err, KVS_E_NOMEM, "out of memory");
		return NULL;
	}
	if (field(kd, gp, ti.size, "state", &v[0]) || field(kd, gp, ti.size, "kcount", &kcount) ||
	    field(kd, gp, ti.size, "kcountsize", &v[1]) || field(kd, gp, ti.size, "froms", &fromsp) ||
	    field(kd, gp, ti.size, "fromssize", &fromssize) || field(kd, gp, ti.size, "tos", &tosp) ||
	    field(kd, gp, ti.size, "tossize", &tossize) || field(kd, gp, ti.size, "tolimit", &tolimit) ||
	    field(kd, gp, ti.size, "lowpc", &g->lowpc) || field(kd, gp, ti.size, "highpc", &g->highpc) ||
	    field(kd, gp, ti.size, "textsize", &g->textsize) ||
	    field(kd, gp, ti.size, "hashfraction", &g->hashfraction) ||
	    field(kd, gp, ti.size, "profrate", &v[2]))
		goto fail;
	g->state = (int)v[0];
	g->profrate = (int)(int32_t)v[2];
	if (counter_width(kd, gp, ti.size, &g->histcounter_type) != 0)
		goto fail;
	if (g->profrate == 0)
		g->profrate = (int)kread_sym_uint_or(kd, "profhz", 0);
	if (g->highpc < g->lowpc || g->textsize != g->highpc - g->lowpc) {
		kerr_set(&kd->err, KVS_E_DATA, "text range [0x%llx, 0x%llx) and textsize %llu disagree",
		    (unsigned long long)g->lowpc, (unsigned long long)g->highpc,
		    (unsigned long long)g->textsize);
		goto fail;
	}
	if (v[1] > g->textsize) {
		kerr_set(&kd->err, KVS_E_DATA, "kcountsize %llu is larger than the text range (%llu bytes)",
		    (unsigned long long)v[1], (unsigned long long)g->textsize);
		goto fail;
	}
	if (v[1] % (unsigned)(kvmprof_gmon_counter_bits(g) / 8) != 0) {
		kerr_set(&kd->err, KVS_E_DATA, "kcountsize %llu is not a whole number of %d-bit counters",
		    (unsigned long long)v[1], kvmprof_gmon_counter_bits(g));
		goto fail;
	}
	/* tolimit is only sanity-checked (the chains are bounded by tossize),
	 * without multiplying a kernel value that could overflow. */
	if (fromssize > g->textsize || tossize > (uint64_t)(65535 + 1) * TOS_SIZE ||
	    (int64_t)tolimit < 0 || tolimit > tossize / TOS_SIZE + 1 ||
	    g->hashfraction == 0) {
		kerr_set(&kd->err, KVS_E_DATA, "arc tables inconsistent: fromssize %llu, tossize %llu, "
		    "tolimit %lld, hashfraction %llu", (unsigned long long)fromssize,
		    (unsigned long long)tossize, (long long)tolimit, (unsigned long long)g->hashfraction);
		goto fail;
	}
	g->kcountsize = (size_t)v[1];
	if ((g->kcount = read_buf(kd, kcount, v[1], "histogram")) == NULL ||
	    (froms = read_buf(kd, fromsp, fromssize, "call-site table (froms)")) == NULL ||
	    (tos = read_buf(kd, tosp, tossize, "arc table (tos)")) == NULL)
		goto fail;

	/* Arcs: each call site's chain, bounded by the table. */
	uint64_t ntos = tossize / TOS_SIZE;
	for (i = 0; i < fromssize / 2; i++) {
		uint64_t t = froms[i], steps = 0;
		uint64_t frompc = g->lowpc + i * g->hashfraction * 2;

		while (t != 0) {
			struct arc *a;
			if (t >= ntos) {
				kerr_set(&kd->err, KVS_E_DATA, "arc index %llu past the arc table "
				    "(%llu entries) from call site 0x%llx", (unsigned long long)t,
				    (unsigned long long)ntos, (unsigned long long)frompc);
				goto fail;
			}
			if (++steps > ntos) {
				kerr_set(&kd->err, KVS_E_DATA, "arc chain from call site 0x%llx loops",
				    (unsigned long long)frompc);
				goto fail;
			}
			if (g->narcs == cap) {
				struct arc *na;
				cap = cap ? cap * 2 : 64;
				na = realloc(g->arcs, cap * sizeof(*na));
				if (na == NULL)
					goto fail;
				g->arcs = na;
			}
			a = &g->arcs[g->narcs++];
			a->frompc = frompc;
			memcpy(&a->selfpc, tos + t * TOS_SIZE, 8);
			memcpy(&a->count, tos + t * TOS_SIZE + 8, 8);
			uint16_t link;
			memcpy(&link, tos + t * TOS_SIZE + 16, 2);
			t = link;
		}
	}
	free(froms);
	free(tos);
	return g;
fail:
	free(froms);
	free(tos);
	kvmprof_gmon_free(g);
	return NULL;
}
