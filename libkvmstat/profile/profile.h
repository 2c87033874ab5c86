/*
 * profile.h - the kernel profile (profile/gmon.c) as the kernel families'
 * readers fill it: a histogram over the text, call arcs, and the symbols to
 * bin them against.  Public face: kvmprof.h (kvmprof_gmon_t).
 */
#ifndef KVS_PROFILE_H
#define KVS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvmstat.h"

struct kvs_symtab;

struct arc {
	uint64_t frompc, selfpc;
	int64_t count;
};

struct kvmprof_gmon {
	int state, profrate, histcounter_type;
	uint64_t lowpc, highpc, textsize, hashfraction;
	uint8_t *kcount;
	size_t kcountsize;
	struct arc *arcs;
	size_t narcs;
	bool last_overflow;             /* the last bin counts what fell outside */
	struct kvs_symtab *syms;        /* bin against these (owned), else the handle's */
	uint64_t slide;                 /* their runtime minus link addresses */
};

/* A profile from a family's own histogram buffer: `bits`-wide little-endian
 * counters (taken over, freed with it), one per textsize / ncounters bytes
 * from lowpc, no arcs.  last_overflow: the last counter holds samples
 * outside the text (unknown).  NULL with the handle's error on failure
 * (counts freed). */
KVS_HIDDEN struct kvmprof_gmon *kvmprof_gmon_hist(kvs_t *kd, int state, int profrate,
    int bits, uint64_t lowpc, uint64_t textsize, uint8_t *counts, size_t bytes,
    bool last_overflow);
/* Bin g against st (taken over) instead of the handle's symbols; st holds
 * link addresses, runtime = link + slide. */
KVS_HIDDEN void kvmprof_gmon_set_symbols(struct kvmprof_gmon *g, struct kvs_symtab *st,
    uint64_t slide);

#endif
