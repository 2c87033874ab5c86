/*
 * os.h - the OS layer: one const ops table per kernel family
 * (os/<family>/kernel.c), chosen by probing the kernel's symbols.
 *
 * An OS knows where its kernel keeps the facts translation needs, how to
 * tell that kernel and dump belong together, and where its version, panic
 * message, message buffer and loaded modules are.  It reaches memory only
 * through the handle's read / symbol / type calls, and never a file format.
 * Its walkers (malloc, UMA, ... for FreeBSD) live in the same folder.
 */
#ifndef KVS_OS_H
#define KVS_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "kvmstat.h"
#include "census.h"

struct Elf;
struct memory_type_list;
struct kvs_btf;
struct kvmprof_gmon;

struct kvs_os_ops {
	const char *name;           /* "FreeBSD" */
	/* Whether the kernel (its symbols, already loaded) is of this family:
	 * 0 yes, KVS_NOTMINE no.  Reads no memory. */
	int (*probe)(kvs_t *kd);
	/* Fill in what translation needs beyond what the source gave (the
	 * page-table root, the direct map).  May read physical memory.  0, or
	 * -1 with the handle's error set. */
	int (*xlat_setup)(kvs_t *kd, struct kvs_xlat_params *p);
	/* Check that the kernel file and the memory belong together.  0 (also
	 * when there is nothing to compare), or -1 with KVS_E_MISMATCH. */
	int (*verify)(kvs_t *kd);
	/* Version, panic message, CPU counts.  Strings go into the handle's
	 * kinfo buffers.  Always 0: what is unreadable stays NULL / -1. */
	int (*kernel_info)(kvs_t *kd, struct kvs_kernelinfo *ki);
	/* The message buffer, linear, oldest first, NULs dropped (malloc'ed).
	 * 0, or -1 with the handle's error set. */
	int (*msgbuf)(kvs_t *kd, char **text, size_t *len);
	/* Where module `name` (a file's base name) was loaded: 0 with its
	 * address range, 1 if it is not loaded, -1 on error. */
	int (*module_find)(kvs_t *kd, const char *name, uint64_t *base, uint64_t *size);
	/* Address of each section of the module's ELF file as the kernel's
	 * linker placed it from base (0 = not loaded); *used receives the
	 * bytes the placement needs.  0 or -1. */
	int (*module_place)(kvs_t *kd, struct Elf *elf, uint64_t base, uint64_t *secaddr,
	    size_t nsec, uint64_t *used);
	/* Optional.  No kernel file was given: whether the dump (kd->src and
	 * kd->info are set) holds a kernel of this family.  0 with *machine
	 * (the ELF e_machine of its architecture), or KVS_NOTMINE, with the
	 * handle's error set to what the dump lacks for this family (a few
	 * words: the message the user sees names them) or clear. */
	int (*probe_dump)(kvs_t *kd, unsigned *machine);
	/* Optional, for every dump once it is open, before translation: take
	 * what the dump says of its kernel (where it was loaded); with no
	 * kernel file (kd->syms NULL) also load the kernel's symbols from
	 * memory.  0, or -1 with the handle's error set. */
	int (*attach)(kvs_t *kd);
	/* Optional: where the kernel keeps its type information (BTF) in
	 * memory, for kernels whose file gives none (or none was given); the
	 * types front reads and parses it.  0 with *kva and *len, 1 if there is
	 * none, -1 with the handle's error set. */
	int (*memory_btf)(kvs_t *kd, uint64_t *kva, uint64_t *len);
	/* Optional: the kernel's profile buffer as a kvmprof profile
	 * (profile/profile.h), NULL with the handle's error set; a family
	 * without one has none (kvmprof_gmon_read says so). */
	struct kvmprof_gmon *(*profile_read)(kvs_t *kd);
	/* memstat_kvm_all(): every allocator this kernel family has. */
	int (*memstat_all)(struct memory_type_list *list, kvs_t *kd);
	/* The memory census (census.h), each optional: a family without one
	 * has no such answer (os/census.c says so).  Each returns 0, 1 when
	 * the answer is incomplete (unreadable values kept and flagged), or -1
	 * with the handle's error set; arrays are malloc'ed, except meminfo's:
	 * it writes at most cap counters into buf and sets *n to how many the
	 * summary has (more than cap: the caller grows buf and asks again),
	 * allocating nothing once the handle holds its scratch. */
	int (*meminfo)(kvs_t *kd, struct kvs_counter *buf, size_t cap, size_t *n);
	int (*pzones)(kvs_t *kd, struct kvs_pzone **out, size_t *n);
	int (*vmalloc)(kvs_t *kd, struct kvs_varea **out, size_t *n);
	int (*arenas)(kvs_t *kd, struct kvs_arena **out, size_t *n);
	int (*slab_objects)(kvs_t *kd, const char *cache,
	    int (*cb)(void *arg, const struct kvs_slab_object *o), void *arg);
	/* w is zeroed with w->addr set and cpu/pid -1 before the call. */
	int (*whatis)(kvs_t *kd, uint64_t addr, struct kvs_whatis *w);
	/* Optional: free kd->os_priv. */
	void (*close)(kvs_t *kd);
	/* Optional: where the family installs its kernels (NULL-terminated),
	 * tried in order for a dump opened without one. */
	const char *const *installed;
};

/* The lowest kernel symbol above addr (runtime addresses): 0 or -1. */
KVS_HIDDEN int kvs_symbol_next(kvs_t *kd, uint64_t addr, uint64_t *next);

/* Probe order of the kernel families. */
extern KVS_HIDDEN const struct kvs_os_ops *const kvs_os_table[];
extern KVS_HIDDEN const size_t kvs_os_count;

extern KVS_HIDDEN const struct kvs_os_ops kvs_os_freebsd;
extern KVS_HIDDEN const struct kvs_os_ops kvs_os_linux;

#endif
