/*
 * types.h - the types layer: the kernel image's symbols (symtab.c) and its
 * types, asked through one front (types.c), which keeps the chain of
 * providers: the layout cache (cache.c), BTF (btf.c), DWARF (dwarf*.c) and
 * the modules' DWARF.  All work on libelf handles the caller owns; none
 * includes or calls the core: memory, when a provider needs it, comes
 * through the read callback the front is given.
 */
#ifndef KVS_TYPES_H
#define KVS_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct Elf; /* libelf's opaque type, kept out of the public header */
struct kvs_notify;
struct kvs_member_info;
struct kvs_typepeel;

/* -------------------------------------------------------------- the front */

/* What the front's owner gives it.  The files stay the owner's and must
 * outlive the front; so must *note. */
struct kvs_types_config {
	struct Elf *kelf;           /* the kernel file (NULL: none given) */
	int kfd;
	const char *kernel_path;    /* for messages (copied) */
	struct Elf *delf;           /* its separate kernel.debug, or NULL */
	int dfd;
	bool file_mapped;           /* the ELF handles are ELF_C_READ_MMAP */
	bool progress;              /* a progress bar for a slow DWARF index */
	bool no_cache;              /* no layout cache */
	const struct kvs_notify *note;
	/* The kernel's memory, for types it keeps there (BTF, asked only when
	 * the files hold none): where its BTF lies (0, or non-zero: none)
	 * and a read of kernel virtual memory (0 or -1 with e set).  Either
	 * NULL: no memory to ask. */
	int (*btf_where)(void *arg, uint64_t *kva, uint64_t *len, struct kvs_error *e);
	int (*read)(void *arg, uint64_t kva, void *buf, size_t len, struct kvs_error *e);
	void *arg;
};
struct kvs_types;
/* NULL when out of memory.  Nothing is opened before the first question. */
KVS_HIDDEN struct kvs_types *kvs_types_new(const struct kvs_types_config *cfg);
/* write_cache: save the layout cache's new answers. */
KVS_HIDDEN void kvs_types_free(struct kvs_types *t, bool write_cache);
/* A module's ELF (the owner's, outliving the front): its DWARF is asked
 * after the kernel's.  0, or -1 with e set. */
KVS_HIDDEN int kvs_types_add_module(struct kvs_types *t, struct Elf *elf,
    struct kvs_error *e);
enum kvs_tq { KVS_TQ_TYPE, KVS_TQ_MEMBER, KVS_TQ_VARIABLE };
/* kvs_type (a: the type), kvs_member (a: the type, b: the member path),
 * kvs_variable (a: the variable): 0 with *ti, -1 with e set (KVS_E_NOTYPE:
 * not found anywhere). */
KVS_HIDDEN int kvs_types_query(struct kvs_types *t, enum kvs_tq q, const char *a,
    const char *b, struct kvs_typeinfo *ti, struct kvs_error *e);
/* kvs_type_members (kvmstat.h): 0, -1 with e set, or cb's non-zero value. */
typedef int (*kvs_member_cb)(void *arg, const struct kvs_member_info *m);
KVS_HIDDEN int kvs_types_members(struct kvs_types *t, const char *type,
    kvs_member_cb cb, void *arg, struct kvs_error *e);
/* kvs_type_peel and kvs_type_enumerators (kvmstat.h): BTF, then DWARF,
 * then the modules' DWARF; not cached.  0, cb's non-zero value, or -1 with
 * e set. */
typedef int (*kvs_enum_cb)(void *arg, const char *name, int64_t value);
KVS_HIDDEN int kvs_types_peel(struct kvs_types *t, const char *type,
    struct kvs_typepeel *p, struct kvs_error *e);
KVS_HIDDEN int kvs_types_enumerators(struct kvs_types *t, const char *type,
    kvs_enum_cb cb, void *arg, struct kvs_error *e);
KVS_HIDDEN int kvs_types_constant(struct kvs_types *t, const char *name, int64_t *value,
    const char **enum_type, struct kvs_error *e);
/* The kernel DWARF's version when DWARF is, or would be, asked; 0 when BTF
 * answers or there is no DWARF. */
KVS_HIDDEN int kvs_types_dwarf_version(struct kvs_types *t);
/* Which providers have been opened (for tests). */
KVS_HIDDEN void kvs_types_used(const struct kvs_types *t, bool *btf, bool *btf_tried,
    bool *dwarf);
/* Whether elf has a section of that name. */
KVS_HIDDEN bool kvs_elf_has_section(struct Elf *elf, const char *want);

/* ---------------------------------------------------------------- symbols */

struct kvs_symtab;
KVS_HIDDEN int kvs_symtab_load(struct kvs_symtab **out, struct Elf *elf,
    struct kvs_error *e);
/* For relocatable modules: symbol values are offsets into section
 * st_shndx, placed at secaddr[st_shndx] (0 = not loaded: symbol dropped). */
KVS_HIDDEN int kvs_symtab_load_biased(struct kvs_symtab **out, struct Elf *elf,
    const uint64_t *secaddr, size_t nsec, struct kvs_error *e);
/* A table from a list (symbols a kernel keeps in memory: Linux kallsyms).
 * bind/type are ELF's STB_ and STT_ values; names point into `names`, which
 * the table takes over (freed with it, also on failure). */
struct kvs_symdef {
	const char *name;
	uint64_t value, size;
	unsigned char bind, type;
};
KVS_HIDDEN int kvs_symtab_from_list(struct kvs_symtab **out, char *names,
    const struct kvs_symdef *defs, size_t n, struct kvs_error *e);
KVS_HIDDEN void kvs_symtab_free(struct kvs_symtab *st);
/* The lowest function/object symbol value above addr: 0, or -1 if none. */
KVS_HIDDEN int kvs_symtab_next(struct kvs_symtab *st, uint64_t addr, uint64_t *next);
/* name may carry one a.out-style leading '_'.  Returns 0 or -1 (KVS_E_NOSYMBOL). */
KVS_HIDDEN int kvs_symtab_lookup(struct kvs_symtab *st, const char *name,
    uint64_t *addr, uint64_t *size, struct kvs_error *e);
KVS_HIDDEN const char *kvs_symtab_at(struct kvs_symtab *st, uint64_t addr,
    uint64_t *off);

/* ------------------------------------------------------------------ DWARF */

struct kvs_dwarf;
/* Binds libdwarf to the given Elf handle (which stays owned by the caller).
 * Returns 0, or -1 with KVS_E_DWARF ("no DWARF in kernel" included). The
 * name index is built lazily on the first lookup. */
KVS_HIDDEN int kvs_dwarf_open(struct kvs_dwarf **out, struct Elf *elf,
    struct kvs_error *e);
KVS_HIDDEN void kvs_dwarf_close(struct kvs_dwarf *d);
/* file_mapped: elf was opened ELF_C_READ_MMAP, so the index pass may unmap
 * the .debug_info pages it has read (they stay in the page cache);
 * progress: draw a progress bar on stderr when it is a terminal and the
 * index takes more than half a second. */
KVS_HIDDEN void kvs_dwarf_set_opts(struct kvs_dwarf *d, bool file_mapped,
    bool progress);
KVS_HIDDEN int kvs_dwarf_type(struct kvs_dwarf *d, const char *type,
    struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int kvs_dwarf_member(struct kvs_dwarf *d, const char *type,
    const char *path, struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int kvs_dwarf_variable(struct kvs_dwarf *d, const char *var,
    struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int kvs_dwarf_version(struct kvs_dwarf *d); /* max CU version, 0 if unknown */
/* Whether the name index was read from the section bytes (fast_index)
 * rather than by libdwarf's walk (for tests). */
KVS_HIDDEN bool kvs_dwarf_fast_indexed(const struct kvs_dwarf *d);
/* As kvs_types_members, from this DWARF alone. */
KVS_HIDDEN int kvs_dwarf_members(struct kvs_dwarf *d, const char *type,
    kvs_member_cb cb, void *arg, struct kvs_error *e);
/* As kvs_types_peel and kvs_types_enumerators, from this DWARF alone. */
KVS_HIDDEN int kvs_dwarf_peel(struct kvs_dwarf *d, const char *type,
    struct kvs_typepeel *p, struct kvs_error *e);
KVS_HIDDEN int kvs_dwarf_enumerators(struct kvs_dwarf *d, const char *type,
    kvs_enum_cb cb, void *arg, struct kvs_error *e);

/* -------------------------------------------------------------------- BTF */

/* The same questions answered from BTF (btf.c, parsed by libbpf), with the
 * same kvs_typeinfo, type_name spelling and KVS_E_NOTYPE for "not found" as
 * the kvs_dwarf_* functions; type_name strings are borrowed until
 * kvs_btf_close.  BTF holds only per-CPU variables: kvs_btf_variable says
 * KVS_E_NOTYPE for the others. */
struct kvs_btf;
/* The .BTF section of elf (which stays owned by the caller; the bytes are
 * copied).  Returns 0, 1 if the file has no .BTF section (*out NULL, no
 * error set), or -1 (e set: unreadable or corrupt BTF). */
KVS_HIDDEN int kvs_btf_open_elf(struct kvs_btf **out, struct Elf *elf,
    struct kvs_error *e);
/* BTF bytes from anywhere (a dump's __start_BTF..__stop_BTF); copied. */
KVS_HIDDEN int kvs_btf_open_mem(struct kvs_btf **out, const void *buf, size_t len,
    struct kvs_error *e);
KVS_HIDDEN void kvs_btf_close(struct kvs_btf *b);
KVS_HIDDEN int kvs_btf_type(struct kvs_btf *b, const char *type,
    struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int kvs_btf_member(struct kvs_btf *b, const char *type,
    const char *path, struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int kvs_btf_variable(struct kvs_btf *b, const char *var,
    struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int kvs_btf_members(struct kvs_btf *b, const char *type,
    kvs_member_cb cb, void *arg, struct kvs_error *e);
KVS_HIDDEN int kvs_btf_peel(struct kvs_btf *b, const char *type,
    struct kvs_typepeel *p, struct kvs_error *e);
KVS_HIDDEN int kvs_btf_enumerators(struct kvs_btf *b, const char *type,
    kvs_enum_cb cb, void *arg, struct kvs_error *e);
KVS_HIDDEN int kvs_btf_constant(struct kvs_btf *b, const char *name, int64_t *value,
    const char **enum_type, struct kvs_error *e);

/* ------------------------------------------------------- layout cache */

/* cache.c: answers to type questions kept on disk per kernel file (see
 * the file's comment).  q is 'T' (kvs_type), 'M' (kvs_member: b the path)
 * or 'V' (kvs_variable); members lists have their own pair. */
struct kvs_lcache;
/* Where a handle's messages for a person go (kvs_set_notify): custom false,
 * stderr; else fn(arg, msg), or nowhere when fn is NULL. */
struct kvs_notify {
	void (*fn)(void *arg, const char *msg);
	void *arg;
	bool custom;
};
/* NULL when there is no cache directory (no $XDG_CACHE_HOME or $HOME) or no
 * memory; a bad file costs one warning (to *note, which must outlive the
 * cache) and an empty cache.  mode: which types answer ("btf", "dwarf"),
 * part of the identity. */
KVS_HIDDEN struct kvs_lcache *kvs_lcache_open(struct Elf *kelf, int kfd,
    struct Elf *delf, int dfd, const char *mode, const struct kvs_notify *note);
/* 1 with *ti (type_name borrowed until close) or, *notfound non-NULL,
 * "not found" and its message; 0 when the question is not cached. */
KVS_HIDDEN int kvs_lcache_get(struct kvs_lcache *c, char q, const char *a,
    const char *b, struct kvs_typeinfo *ti, const char **notfound);
/* Keep an answer: ti, or ti NULL and the not-found message. */
KVS_HIDDEN void kvs_lcache_put(struct kvs_lcache *c, char q, const char *a,
    const char *b, const struct kvs_typeinfo *ti, const char *notfound);
KVS_HIDDEN int kvs_lcache_members_get(struct kvs_lcache *c, const char *type,
    const struct kvs_member_info **m, size_t *n, const char **notfound);
KVS_HIDDEN void kvs_lcache_members_put(struct kvs_lcache *c, const char *type,
    const struct kvs_member_info *m, size_t n, const char *notfound);
/* write: save new answers (merged with the file, atomically). */
KVS_HIDDEN void kvs_lcache_close(struct kvs_lcache *c, bool write);
/* The one parser of cache bytes, for tests and fuzzing: 0 if the library
 * would use buf (checksum, every record's bounds), -1 if not. */
KVS_HIDDEN int kvs_lcache_parse(const void *buf, size_t len);

#endif
