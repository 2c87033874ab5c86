/*
 * dwarf_internal.h - what the DWARF files (types/dwarf*.c) share and nothing
 * outside them sees: the handle (struct kvs_dwarf), the string maps it
 * keeps, the fast index's per-thread state, three small readers every file
 * inlines, and each file's functions that another one calls.  Dwarf_* types
 * stop here: types.h, the layer's header, has none.
 */
#ifndef KVS_DWARF_INTERNAL_H
#define KVS_DWARF_INTERNAL_H

#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#include <libelf.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashtab.h"
#include "types.h"

/* Guards against malformed (cyclic) type chains. */
#define MAX_TYPE_DEPTH 64
#define TNAME_MAX 512

/* ------------------------------------------------------------ hash map */

/* String -> one record, over the library's shared table (hashtab.h): the
 * records sit in a dense array and the table holds index + 1, so a slot is
 * 8 bytes and growing the table moves no record.  A pointer returned by
 * dw_hm_find or dw_hm_add stays valid until the next dw_hm_add on the same map (the
 * record array may move). */
struct hent {
	const char *key;
	bool decl;         /* index: this entry is only a declaration */
	Dwarf_Off off;     /* index: DIE offset */
	void *val;         /* cache: struct centry * */
};

struct hmap {
	struct hent *ent;  /* [n], room for cap */
	size_t n, cap;
	struct kvs_htab tab;
	bool own_keys;
};

/* ------------------------------------------------------------ the handle */

enum ix_kind { IX_STRUCT, IX_UNION, IX_ENUM, IX_TYPEDEF, IX_BASE, IX_VAR, IX__N };

struct kvs_dwarf {
	Dwarf_Debug dbg;
	Elf *elf;                     /* the caller's; sections for fast_index */
	bool linked;                  /* not ET_REL: sections hold final values */
	bool progress;                /* progress bar on a terminal's stderr */
	bool mapped;                  /* elf is ELF_C_READ_MMAP (the caller says) */
	/* After fast_index: blocks holding copies of names written inside
	 * .debug_info (DW_FORM_string), and the units' DIE offsets, so that
	 * libdwarf's list of units is built in steps whose pages are dropped
	 * (see ctx_warm). */
	char **blk;
	size_t nblk;
	uint64_t *cu_die;
	size_t ncu, ctx_next;
	const uint8_t *info_p;
	size_t info_n;
	Dwarf_Obj_Access_Methods methods; /* linked ELF: libelf's, no relocation */
	bool indexed;                 /* index walk done */
	bool fast;                    /* ... by fast_index */
	bool index_failed;            /* some CU could not be indexed ... */
	char *index_err;              /* ... first such error */
	int version;                  /* max CU version, 0 unknown */
	struct hmap ix[IX__N];        /* borrowed keys */
	struct hmap cache;            /* own keys; val: struct centry * */
	struct hmap strs;             /* interned strings (own keys) */
};

/* ------------------------------------------------ the fast index (linked) */

/* The state fast_index (dwarf_index.c) shares with the threads that read
 * the units (dwarf_scan.c). */
struct fsec {
	const uint8_t *p;
	size_t n;
};

struct fx_abbrev;
struct fx_attr;

struct fx_shared {
	struct fsec info, abbrev, str, line_str, str_offsets;
	uint64_t *cu;                 /* CU start offsets, [ncu + 1] (end) */
	uint64_t *cu_die;             /* [ncu]: each unit's DIE offset */
	size_t ncu;
	atomic_uint_fast64_t done;    /* bytes of .debug_info indexed */
	atomic_bool stop;             /* a thread gave up */
	bool drop;                    /* .debug_info is mapped from the file */
};

struct fx_thread {
	struct fx_shared *sh;
	size_t cu0, cu1;              /* CUs [cu0, cu1) */
	struct hmap ix[IX__N];
	struct fx_abbrev *ab;         /* by code - 1 */
	size_t nab, capab;
	struct fx_attr *attrs;
	size_t nattrs, capattrs;
	int maxver;
	bool failed, nomem;
	pthread_t tid;
	char **blk;                   /* name copies (fx_copy) */
	size_t nblk, capblk, blkused;
};

/* ----------------------------------------------------- small readers */

/* An unsigned LEB128 at *p, not past end (*ok = false when it runs out):
 * member location expressions (dwarf_die.c) and the fast index's forms. */
static inline uint64_t
read_uleb(const uint8_t **p, const uint8_t *end, bool *ok)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if ((b & 0x80) == 0)
			return v;
	}
	*ok = false;
	return 0;
}

/* n bytes at p, little-endian (unit headers and forms of the fast index). */
static inline uint64_t
fx_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	/* a wider constant (DW_FORM_data16) keeps its low 64 bits */
	for (i = 0; i < n && i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A child of an array DIE that is one of its dimensions. */
static inline bool
is_dim(Dwarf_Half tag)
{
	return tag == DW_TAG_subrange_type || tag == DW_TAG_enumeration_type;
}

/* ---------------------------------------------- across the files */

/* dwarf.c: the maps, interned strings, ENOMEM. */
KVS_HIDDEN struct hent *dw_hm_find(const struct hmap *m, const char *key);
KVS_HIDDEN struct hent *dw_hm_add(struct hmap *m, const char *key);
KVS_HIDDEN void dw_hm_free(struct hmap *m, void (*freeval)(void *));
KVS_HIDDEN int dw_nomem(struct kvs_error *e);
KVS_HIDDEN const char *dw_intern(struct kvs_dwarf *d, const char *s);

/* dwarf_index.c: the index (built on first use), lookups, "not found". */
KVS_HIDDEN void dw_walk_cus(struct kvs_dwarf *d, bool index);
KVS_HIDDEN int dw_ensure_index(struct kvs_dwarf *d, struct kvs_error *e);
KVS_HIDDEN int dw_not_found(struct kvs_dwarf *d, struct kvs_error *e,
    const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
KVS_HIDDEN int dw_find_type(struct kvs_dwarf *d, const char *type, Dwarf_Off *off,
    struct kvs_error *e);

/* dwarf_scan.c: one thread of the fast index; dropping read pages. */
KVS_HIDDEN void *dw_fx_run(void *arg);
KVS_HIDDEN void dw_fx_drop(const struct fsec *s, uint64_t from, uint64_t to);

/* dwarf_die.c: libdwarf errors and one DIE's parts. */
KVS_HIDDEN int dw_fail(struct kvs_dwarf *d, struct kvs_error *e,
    Dwarf_Error err, const char *what, Dwarf_Off off);
KVS_HIDDEN int dw_die_at(struct kvs_dwarf *d, Dwarf_Off off, Dwarf_Die *die,
    struct kvs_error *e);
KVS_HIDDEN Dwarf_Off dw_die_off(struct kvs_dwarf *d, Dwarf_Die die);
KVS_HIDDEN int dw_next_sibling(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Die *sib,
    Dwarf_Error *err);
KVS_HIDDEN int dw_die_tag(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half *tag,
    struct kvs_error *e);
KVS_HIDDEN int dw_die_name(struct kvs_dwarf *d, Dwarf_Die die, const char **name,
    struct kvs_error *e);
KVS_HIDDEN int dw_die_has(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at,
    bool *has, struct kvs_error *e);
KVS_HIDDEN int dw_die_sconst(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at,
    int64_t *v, bool *present, struct kvs_error *e);
KVS_HIDDEN int dw_die_uconst(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at,
    uint64_t *v, bool *present, struct kvs_error *e);
KVS_HIDDEN int dw_die_ref(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at,
    Dwarf_Off *ref, struct kvs_error *e);
KVS_HIDDEN int dw_member_location(struct kvs_dwarf *d, Dwarf_Die die,
    uint64_t *loc, struct kvs_error *e);

/* dwarf_layout.c: answers (ti zeroed first; kvs_typeinfo as types.h). */
KVS_HIDDEN int dw_peel(struct kvs_dwarf *d, Dwarf_Off off, Dwarf_Off *out,
    Dwarf_Half *tagp, struct kvs_error *e);
KVS_HIDDEN int dw_dim_count(struct kvs_dwarf *d, Dwarf_Die dim, uint64_t *count,
    bool *known, struct kvs_error *e);
KVS_HIDDEN int dw_describe(struct kvs_dwarf *d, Dwarf_Off off,
    struct kvs_typeinfo *ti, Dwarf_Off *peeled, Dwarf_Half *ptag,
    struct kvs_error *e);
KVS_HIDDEN int dw_type_uncached(struct kvs_dwarf *d, const char *type,
    struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int dw_member_uncached(struct kvs_dwarf *d, const char *type,
    const char *path, struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int dw_variable_uncached(struct kvs_dwarf *d, const char *var,
    struct kvs_typeinfo *ti, struct kvs_error *e);
KVS_HIDDEN int dw_walk_members(struct kvs_dwarf *d, Dwarf_Off sou, uint64_t base,
    unsigned depth, kvs_member_cb cb, void *arg, struct kvs_error *e);

/* dwarf_tname.c: the C spelling of the type at off, around decl. */
KVS_HIDDEN int dw_tname(struct kvs_dwarf *d, Dwarf_Off off, char *decl, size_t n,
    int depth, struct kvs_error *e);

#endif
