/*
 * kvmprof.h - kernel profiling buffers read from a dump: the gprof state in
 * _gmonparam (histogram and call arcs), written out as kgmon's gmon.out.
 * Objects are opaque; everything they return is owned by the object.
 */
#ifndef KVMPROF_H
#define KVMPROF_H

#include <stddef.h>
#include <stdint.h>

#include "kvmstat.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kvmprof_gmon kvmprof_gmon_t;

/* GMON_PROF_* states */
#define KVMPROF_ON    0
#define KVMPROF_BUSY  1
#define KVMPROF_ERROR 2
#define KVMPROF_OFF   3

/* Read _gmonparam and its buffers.  NULL with the error on kd when the
 * kernel has no profiling state or it is inconsistent. */
kvmprof_gmon_t *kvmprof_gmon_read(kvs_t *kd);
void kvmprof_gmon_free(kvmprof_gmon_t *g);

int kvmprof_gmon_state(const kvmprof_gmon_t *g);
/* Which report the buffer is made for: gprof's (a BSD _gmonparam, with
 * arcs), or readprofile's (Linux profile=N: ticks only, one bin per
 * step = binsize bytes, the last bin counting samples outside the text,
 * reported as unknown). */
#define KVMPROF_FMT_GPROF 0
#define KVMPROF_FMT_READPROFILE 1
int kvmprof_gmon_format(const kvmprof_gmon_t *g);
uint64_t kvmprof_gmon_lowpc(const kvmprof_gmon_t *g);
uint64_t kvmprof_gmon_highpc(const kvmprof_gmon_t *g);
/* Histogram ticks per second: profrate, or the kernel's profhz when 0. */
int kvmprof_gmon_profrate(const kvmprof_gmon_t *g);
/* Counter width in bits: histcounter_type, else the DWARF type kcount
 * points to, else 16 (u_short).  Widths other than 8/16/32/64 are refused. */
int kvmprof_gmon_counter_bits(const kvmprof_gmon_t *g);
size_t kvmprof_gmon_nbins(const kvmprof_gmon_t *g);
/* Text bytes per bin. */
uint64_t kvmprof_gmon_binsize(const kvmprof_gmon_t *g);
uint64_t kvmprof_gmon_bin(const kvmprof_gmon_t *g, size_t i);
size_t kvmprof_gmon_narcs(const kvmprof_gmon_t *g);
void kvmprof_gmon_arc(const kvmprof_gmon_t *g, size_t i, uint64_t *frompc,
    uint64_t *selfpc, int64_t *count);

/* Write the BSD gmon.out that `kgmon -p` writes (header, raw histogram,
 * raw arcs) to path, or to standard output when path is NULL.  A new or
 * regular file is written atomically: a temporary file beside it, created
 * under the umask (a replaced file's permissions kept), renamed into place.  Refuses to replace an existing file
 * unless `force` (without it the final step is link(2), so a file that
 * appears meanwhile is not clobbered either): EEXIST.  A symbolic link is
 * followed: the file it names is replaced, never the link (a link to
 * nothing: ENOENT).  A FIFO or a character device is written in place, as
 * cp(1) does, force or not; a directory (EISDIR), a socket or a block
 * device (EINVAL) is never replaced.  0 or -1 with errno set (a full device:
 * ENOSPC).
 *
 * GNU gprof reads this file as is: it recognises the BSD 4.4 header by its
 * version word (GMONVERSION) and takes the histogram bounds, counter count
 * and rate from it, so `gprof kernel gmon.out` needs no conversion.  It
 * assumes 16-bit counters, though: a GPROF4 kernel's 64-bit histogram is
 * written as the kernel holds it (as kgmon does) and only BSD tools read it. */
int kvmprof_gmon_write(const kvmprof_gmon_t *g, const char *path, int force);

/* ------------------------------------------------------ flat profile */

/* One function of a flat profile.  The name belongs to the flat profile. */
struct kvmprof_func {
	const char *name;
	uint64_t addr;              /* symbol value */
	uint64_t ticks;             /* histogram ticks attributed to it */
	uint64_t calls;             /* counts of every arc into it, summed */
	uint64_t size;              /* bytes to the next symbol (readprofile's
	                             * function length), 0 if none follows */
};

typedef struct kvmprof_flat kvmprof_flat_t;

/*
 * The flat profile of a histogram, binned against the kernel's function and
 * object symbols (kvs_symbol_at, so added modules count too).  A bin's ticks
 * go to the symbol its first byte lies in (gprof spreads a bin over the
 * functions it overlaps; with 16-byte-aligned functions and 16-byte bins the
 * two agree); ticks of bins outside every symbol are counted as unknown.
 * "calls" sums the counts of all arcs whose selfpc lies in the function,
 * self-recursive ones included.  Functions with neither ticks nor calls are
 * left out.  Sorted busiest first: ticks, then calls descending, then name,
 * then address.  Independent of g and kd once built.  NULL with the error
 * on kd when out of memory.
 */
kvmprof_flat_t *kvmprof_gmon_flat(const kvmprof_gmon_t *g, kvs_t *kd);
void kvmprof_flat_free(kvmprof_flat_t *f);
size_t kvmprof_flat_count(const kvmprof_flat_t *f);
/* i < kvmprof_flat_count(f), else NULL. */
const struct kvmprof_func *kvmprof_flat_get(const kvmprof_flat_t *f, size_t i);
/* Every tick of the histogram. */
uint64_t kvmprof_flat_total(const kvmprof_flat_t *f);
/* Ticks in bins that lie in no symbol (included in the total). */
uint64_t kvmprof_flat_unknown(const kvmprof_flat_t *f);

/* ------------------------------------------------------------ DTrace */

/* One DTrace probe.  Strings belong to the probe set. */
struct kvmprof_probe {
	uint32_t id;
	const char *provider, *module, *function, *name;
	int enabled;                /* an ECB is attached */
	/* profile provider only: */
	int is_profile;
	int kind;                   /* 0: profile-N (every CPU), 1: tick-N (one CPU) */
	uint64_t interval_sbt;      /* sbintime (1 s = 2^32) */
	uint64_t interval_ns;       /* decoded as profile.c does */
	double hz;
	uint64_t next_fire_ns;      /* enabled tick- probes: expected fire time */
	const uint64_t *next_fire_percpu; /* enabled profile- probes: [maxcpus], 0 = none */
};

typedef struct kvmprof_probes kvmprof_probes_t;

/* Walk dtrace_probes[0..dtrace_nprobes) and the provider list (symbols of
 * dtrace.ko / profile.ko: add the modules first, see kvs_add_module).
 * all = 0 keeps only the profile provider's probes. */
kvmprof_probes_t *kvmprof_probes_read(kvs_t *kd, int all);
size_t kvmprof_probes_count(const kvmprof_probes_t *p);
const struct kvmprof_probe *kvmprof_probes_get(const kvmprof_probes_t *p, size_t i);
unsigned kvmprof_probes_maxcpus(const kvmprof_probes_t *p);
void kvmprof_probes_free(kvmprof_probes_t *p);

/* ----------------------------------------------------------- profil(2) */

struct kvmprof_proc {
	int pid;
	char comm[20];
	uint64_t pr_base, pr_size, pr_off, pr_scale;
};

/* Processes with P_PROFIL set, from allproc.  *out is malloc'ed (free it). */
int kvmprof_profil_read(kvs_t *kd, struct kvmprof_proc **out, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
