/*
 * dwarf.c - struct layouts and variable types from the kernel's DWARF.
 *
 * Design story.  A FreeBSD or Linux kernel carries tens of thousands of CUs
 * and has no usable accelerator table (.debug_names / .gdb_index), so any
 * "find struct uma_zone" is a linear scan of .debug_info.  Most runs of the
 * tools need a few dozen layouts, some (`kvmstat info`, dmesg) need none.
 * Hence, as drgn does:
 *
 *   - open only binds libdwarf to the caller's Elf handle; nothing is read.
 *     Only a relocatable file (.ko) gets its .rela.debug_* applied; a linked
 *     one (vmlinux, kernel.debug) is read as linked (bind_elf).
 *   - the first lookup walks every CU's top-level DIEs exactly once (in a
 *     linked file straight from the section bytes, by threads: fast_index;
 *     KVS_DWARF_SLOW=1 forces libdwarf's walk, which tests compare) and
 *     fills one hash table per tag family (struct, union, enum, typedef,
 *     base type, variable): name -> DIE offset.  A complete definition
 *     replaces a declaration (DW_AT_declaration) seen earlier; otherwise the
 *     first one wins.  Variable definitions that only carry
 *     DW_AT_specification are named through their declaration.  The names
 *     are borrowed from libdwarf's section data (valid until dwarf_finish),
 *     so the index costs one small entry per distinct name.
 *   - types are then built on demand from the DIE offsets (dwarf_offdie_b),
 *     and each answer - kvs_typeinfo for (type), (type, path) and (var),
 *     including "not found" - is cached, so a repeated query is one hash
 *     lookup with no libdwarf call and no allocation.  type_name strings are
 *     interned in the handle and live until kvs_dwarf_close.
 *
 * Measured (gcc 12, 400 CUs, 4.9 MB .debug_info, 189k top-level DIEs):
 * open 0.1 ms, version-only header pass 3.5 ms, index + first layout 67 ms,
 * a new (type, path) ~20 us, a cached one ~90 ns.  Debian 12's vmlinux
 * (DWARF 5, 2,352 CUs, 174 MB .debug_info): index + first layout 1.8-2.5 s
 * of CPU, peak RSS 253 MB (mostly .debug_info pages) through libdwarf's
 * walk; 0.55 s of CPU and 60 MB through fast_index (drgn: 1 s, 229 MB).
 * A damaged CU is skipped
 * (the rest is still indexed) and "not found" then says the index is
 * incomplete, with KVS_E_DWARF instead of KVS_E_NOTYPE, so feature probes
 * (kvs_has_member) never mistake corruption for absence.
 *
 * Every libdwarf failure is turned into struct kvs_error in this file
 * (dw_fail), with libdwarf's own text; no Dwarf_* type leaves it.
 */
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#include <gelf.h>
#include <libelf.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hashtab.h"
#include "kvs_private.h"
#include "tname.h"

/* Guards against malformed (cyclic) type chains. */
#define MAX_TYPE_DEPTH 64
#define TNAME_MAX 512

/* ------------------------------------------------------------ hash map */

/* String -> one record, over the library's shared table (hashtab.h): the
 * records sit in a dense array and the table holds index + 1, so a slot is
 * 8 bytes and growing the table moves no record.  A pointer returned by
 * hm_find or hm_add stays valid until the next hm_add on the same map (the
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

static struct hent *
hm_find(const struct hmap *m, const char *key)
{
	uint32_t v = kvs_htab_find_str(&m->tab, key, m->ent, sizeof(*m->ent),
	    offsetof(struct hent, key));

	return v != 0 ? &m->ent[v - 1] : NULL;
}

/* Insert a key that is known to be absent.  With own_keys the key is
 * copied.  Returns the new zeroed entry, or NULL (ENOMEM; the map is
 * unchanged). */
static struct hent *
hm_add(struct hmap *m, const char *key)
{
	struct hent *he;
	char *k = NULL;

	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 32;
		struct hent *ne = realloc(m->ent, ncap * sizeof(*ne));
		if (ne == NULL)
			return NULL;
		m->ent = ne;
		m->cap = ncap;
	}
	if (m->own_keys && (k = strdup(key)) == NULL)
		return NULL;
	if (kvs_htab_add(&m->tab, kvs_fnv1a(key), (uint32_t)(m->n + 1)) != 0) {
		free(k);
		return NULL;
	}
	he = &m->ent[m->n++];
	memset(he, 0, sizeof(*he));
	he->key = m->own_keys ? k : key;
	return he;
}

static void
hm_free(struct hmap *m, void (*freeval)(void *))
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		if (freeval != NULL)
			freeval(m->ent[i].val);
		if (m->own_keys)
			free((char *)m->ent[i].key);
	}
	free(m->ent);
	kvs_htab_free(&m->tab);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------ the handle */

enum ix_kind { IX_STRUCT, IX_UNION, IX_ENUM, IX_TYPEDEF, IX_BASE, IX_VAR, IX__N };

/* A cached answer. */
struct centry {
	kvs_status_t status;          /* KVS_OK or KVS_E_NOTYPE */
	struct kvs_typeinfo ti;
	const char *msg;              /* interned, for KVS_E_NOTYPE */
};

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

/* Wrap a libdwarf error: message "<what>: libdwarf: <errmsg>". */
static int
dw_fail(struct kvs_dwarf *d, struct kvs_error *e, Dwarf_Error err,
    const char *what, Dwarf_Off off)
{
	char where[40] = "";

	if (off != 0)
		snprintf(where, sizeof(where), " (DIE 0x%llx)",
		    (unsigned long long)off);
	if (err != NULL) {
		kerr_set(e, KVS_E_DWARF, "%s%s: libdwarf: %s", what, where,
		    dwarf_errmsg(err));
		dwarf_dealloc(d->dbg, err, DW_DLA_ERROR);
	} else
		kerr_set(e, KVS_E_DWARF, "%s%s: malformed DWARF", what, where);
	return -1;
}

static int
nomem(struct kvs_error *e)
{
	return kerr_errno(e, ENOMEM, "DWARF index");
}

static const char *
intern(struct kvs_dwarf *d, const char *s)
{
	struct hent *he = hm_find(&d->strs, s);

	if (he == NULL)
		he = hm_add(&d->strs, s);
	return he != NULL ? he->key : NULL;
}

/* libdwarf also accepts an ELF whose only "DWARF" is .eh_frame; layouts
 * need .debug_info (possibly compressed as .zdebug_info). */
static bool
has_debug_info(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *nm;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type == SHT_NOBITS)
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm != NULL && (strcmp(nm, ".debug_info") == 0 ||
		    strcmp(nm, ".zdebug_info") == 0) && sh.sh_size > 0)
			return true;
	}
	return false;
}

/*
 * libdwarf 20210528 reads every unit header of .debug_rnglists and
 * .debug_loclists when it first loads .debug_info, and when one is bad it
 * frees the table it is building and then goes on using it (a double free:
 * fuzz_dwarf found it; tests/fuzz-regress/ keeps the input).  The headers
 * are checked here first, as that reader checks them (initial length within
 * the section, version 5, address size 2, 4 or 8, the fixed fields present),
 * and a bad one is refused before libdwarf sees it.  Compressed sections are
 * left to libdwarf.
 */
static int
check_list_headers(Elf *elf, struct kvs_error *e)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shstrndx;
	bool be;

	if (gelf_getehdr(elf, &eh) == NULL || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	be = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const uint8_t *p;
		const char *nm, *why = NULL;
		uint64_t n, off = 0;
		Elf_Data *data;
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_COMPRESSED) != 0)
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm == NULL || (strcmp(nm, ".debug_rnglists") != 0 &&
		    strcmp(nm, ".debug_loclists") != 0))
			continue;
		data = elf_getdata(scn, NULL);
		if (data == NULL || data->d_buf == NULL)
			continue;
		p = data->d_buf;
		n = data->d_size;
		while (off < n && why == NULL) {
			uint64_t len = 0, hdr = 4;
			unsigned ver, asz;
			int k;

			if (n - off < 4) {
				why = "truncated unit length";
				break;
			}
			for (k = 0; k < 4; k++)
				len |= (uint64_t)p[off + (be ? 3 - k : k)] << (8 * k);
			if (len == 0xffffffffULL) {
				if (n - off < 12) {
					why = "truncated 64-bit unit length";
					break;
				}
				len = 0;
				for (k = 0; k < 8; k++)
					len |= (uint64_t)p[off + 4 + (be ? 7 - k : k)] << (8 * k);
				hdr = 12;
			} else if (len >= 0xfffffff0ULL)
				why = "reserved unit length";
			if (why == NULL && len > n)
				why = "unit longer than the section";
			if (why == NULL && n - off - hdr < 8)
				why = "truncated unit header";
			if (why != NULL)
				break;
			ver = be ? (unsigned)p[off + hdr] << 8 | p[off + hdr + 1] :
			    (unsigned)p[off + hdr + 1] << 8 | p[off + hdr];
			asz = p[off + hdr + 2];
			if (ver != 5)
				why = "version is not 5";
			else if (asz != 2 && asz != 4 && asz != 8)
				why = "address size is not 2, 4 or 8";
			else
				off += hdr + len;
		}
		if (why != NULL)
			return kerr_set(e, KVS_E_DWARF, "corrupt DWARF: %s unit at offset "
			    "0x%llx: %s", nm, (unsigned long long)off, why);
	}
	return 0;
}

/*
 * libdwarf 20210528 exports these two, the libelf object access that
 * dwarf_elf_init() is built on, but declares them only in its private
 * dwarf_elf_access.h.  See bind_elf().
 */
int dwarf_elf_object_access_init(dwarf_elf_handle elf, int libdwarf_owns_elf,
    Dwarf_Obj_Access_Interface **ret_obj, int *err);
void dwarf_elf_object_access_finish(Dwarf_Obj_Access_Interface *obj);

/*
 * Bind libdwarf to elf.  Returns a DW_DLV_* code; on error *err or (when
 * the access object could not be made) *errnum says why.
 *
 * Only a relocatable file (ET_REL: a FreeBSD amd64 .ko, see core/module.c)
 * needs its .rela.debug_* applied.  In a linked file (ET_EXEC, ET_DYN) the
 * debug sections already hold final values, but a kernel linked with
 * --emit-relocs (Linux, for KASLR) keeps the relocations, and
 * dwarf_elf_init() applies any it finds: for Debian 12's vmlinux it reads
 * 271 MB of .rela.debug_info, copies every page it patches (1 GB peak RSS),
 * and then fails on the R_X86_64_NONE entries that --gc-sections leaves
 * (DW_DLE_RELOC_SECTION_RELOC_TARGET_SIZE_UNKNOWN), so nothing is indexed.
 *
 * libdwarf.h has two ways to say "do not relocate": the process-wide
 * dwarf_set_reloc_application(0), which libdwarf reads whenever it loads a
 * section (lazily, so it would race with a module .ko being read through
 * another handle), and dwarf_object_init_b() with an access object whose
 * relocate_a_section is NULL, which is per handle.  We take the second,
 * with libdwarf's own libelf object and a copy of its methods minus
 * relocation, rather than a home-made object: libdwarf keeps a global hook
 * (_dwarf_get_elf_flags_func_ptr, for SHF_COMPRESSED) that every
 * dwarf_elf_init() points at a function which reads *any* access object as
 * its own libelf layout, and dwarf_finish() releases the object by its tag.
 */
static int
bind_elf(struct kvs_dwarf *d, Elf *elf, Dwarf_Error *err, int *errnum)
{
	Dwarf_Obj_Access_Interface *oi = NULL;
	GElf_Ehdr eh;
	int rc;

	*errnum = 0;
	d->elf = elf;
	if (gelf_getehdr(elf, &eh) != NULL && eh.e_type == ET_REL)
		return dwarf_elf_init(elf, DW_DLC_READ, NULL, NULL, &d->dbg, err);
	d->linked = true;
	rc = dwarf_elf_object_access_init(elf, 0, &oi, errnum);
	if (rc != DW_DLV_OK)
		return rc;
	d->methods = *oi->methods;
	d->methods.relocate_a_section = NULL;
	oi->methods = &d->methods;
	rc = dwarf_object_init_b(oi, NULL, NULL, DW_GROUPNUMBER_ANY, &d->dbg, err);
	if (rc != DW_DLV_OK)
		dwarf_elf_object_access_finish(oi);
	return rc;
}

int
kvs_dwarf_open(struct kvs_dwarf **out, struct Elf *elf, struct kvs_error *e)
{
	struct kvs_dwarf *d;
	Dwarf_Error err = NULL;
	int i, rc, errnum;

	*out = NULL;
	if (elf == NULL)
		return kerr_set(e, KVS_E_INVAL, "no ELF handle for DWARF");
	if (!has_debug_info(elf))
		return kerr_set(e, KVS_E_DWARF, "no DWARF debug information in "
		    "ELF file (no .debug_info section; use kernel.debug or a "
		    "kernel built with -g)");
	if (check_list_headers(elf, e) != 0)
		return -1;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return nomem(e);
	rc = bind_elf(d, elf, &err, &errnum);
	if (rc == DW_DLV_NO_ENTRY) {
		free(d);
		return kerr_set(e, KVS_E_DWARF, "no DWARF debug information in "
		    "ELF file (libdwarf found no debug sections)");
	}
	if (rc != DW_DLV_OK) {
		kerr_set(e, KVS_E_DWARF, "cannot read DWARF: libdwarf: %s",
		    err != NULL ? dwarf_errmsg(err) : errnum != 0 ?
		    dwarf_errmsg_by_number((Dwarf_Unsigned)errnum) :
		    "unknown error");
		if (err != NULL)
			dwarf_dealloc(NULL, err, DW_DLA_ERROR);
		free(d);
		return -1;
	}
	for (i = 0; i < IX__N; i++)
		d->ix[i].own_keys = false;
	d->cache.own_keys = true;
	d->strs.own_keys = true;
	*out = d;
	return 0;
}

void
kvs_dwarf_set_opts(struct kvs_dwarf *d, bool file_mapped, bool progress)
{
	d->mapped = file_mapped;
	d->progress = progress;
}

static void
free_centry(void *p)
{
	free(p);
}

void
kvs_dwarf_close(struct kvs_dwarf *d)
{
	Dwarf_Error err = NULL;
	int i;

	if (d == NULL)
		return;
	for (i = 0; i < IX__N; i++)
		hm_free(&d->ix[i], NULL);
	hm_free(&d->cache, free_centry);
	hm_free(&d->strs, NULL);
	free(d->index_err);
	while (d->nblk > 0)
		free(d->blk[--d->nblk]);
	free(d->blk);
	free(d->cu_die);
	(void)dwarf_finish(d->dbg, &err);
	free(d);
}

/* ------------------------------------------------------- DIE primitives */

static void ctx_warm(struct kvs_dwarf *d, Dwarf_Off off);

static int
die_at(struct kvs_dwarf *d, Dwarf_Off off, Dwarf_Die *die, struct kvs_error *e)
{
	Dwarf_Error err = NULL;
	int rc;

	ctx_warm(d, off);
	rc = dwarf_offdie_b(d->dbg, off, 1, die, &err);

	if (rc == DW_DLV_OK)
		return 0;
	if (rc == DW_DLV_NO_ENTRY)
		err = NULL;
	return dw_fail(d, e, err, "reading DIE", off);
}

/* Only for messages and index entries; 0 if unknown.  (Every libdwarf
 * call gets an error pointer: with none, libdwarf aborts on error.) */
static Dwarf_Off
die_off(struct kvs_dwarf *d, Dwarf_Die die)
{
	Dwarf_Off off = 0;
	Dwarf_Error err = NULL;

	if (dwarf_dieoffset(die, &off, &err) != DW_DLV_OK) {
		if (err != NULL)
			dwarf_dealloc(d->dbg, err, DW_DLA_ERROR);
		return 0;
	}
	return off;
}

/*
 * The DIE after die at its level.  libdwarf follows a DW_AT_sibling as the
 * file gives it, so a sibling that points back makes every walk over a DIE's
 * children endless (fuzz_dwarf found one); a sibling must lie after the DIE.
 * One that does not is an error (*err NULL: "malformed DWARF").
 */
static int
next_sibling(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Die *sib, Dwarf_Error *err)
{
	int rc = dwarf_siblingof_b(d->dbg, die, 1, sib, err);

	if (rc == DW_DLV_OK && die_off(d, *sib) <= die_off(d, die)) {
		dwarf_dealloc_die(*sib);
		*sib = NULL;
		*err = NULL;
		return DW_DLV_ERROR;
	}
	return rc;
}

static int
die_tag(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half *tag, struct kvs_error *e)
{
	Dwarf_Error err = NULL;

	if (dwarf_tag(die, tag, &err) != DW_DLV_OK)
		return dw_fail(d, e, err, "reading DIE tag", die_off(d, die));
	return 0;
}

/* *name = NULL if the DIE has no name.  The string is libdwarf's (section
 * data), valid until dwarf_finish. */
static int
die_name(struct kvs_dwarf *d, Dwarf_Die die, const char **name,
    struct kvs_error *e)
{
	Dwarf_Error err = NULL;
	char *s = NULL;
	int rc = dwarf_diename(die, &s, &err);

	*name = NULL;
	if (rc == DW_DLV_ERROR)
		return dw_fail(d, e, err, "reading DIE name", die_off(d, die));
	if (rc == DW_DLV_OK)
		*name = s;
	return 0;
}

/* 1 present, 0 absent, -1 error. */
static int
die_attr(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at, Dwarf_Attribute *a,
    struct kvs_error *e)
{
	Dwarf_Error err = NULL;
	int rc = dwarf_attr(die, at, a, &err);

	if (rc == DW_DLV_NO_ENTRY)
		return 0;
	if (rc != DW_DLV_OK)
		return dw_fail(d, e, err, "reading DIE attribute", die_off(d, die));
	return 1;
}

static int
die_has(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at, bool *has,
    struct kvs_error *e)
{
	Dwarf_Error err = NULL;
	Dwarf_Bool b = 0;

	if (dwarf_hasattr(die, at, &b, &err) != DW_DLV_OK)
		return dw_fail(d, e, err, "reading DIE attribute", die_off(d, die));
	*has = b != 0;
	return 0;
}

static bool
form_is_data(Dwarf_Half form)
{
	switch (form) {
	case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4:
	case DW_FORM_data8: case DW_FORM_udata: case DW_FORM_sdata:
	case DW_FORM_implicit_const:
		return true;
	}
	return false;
}

/*
 * Integer attribute as a signed value.  data1..8 are read unsigned, with
 * the all-ones pattern of the form's width read as -1 (gcc's upper bound of
 * a zero-length array); sdata/implicit_const are signed.  *present = false
 * for an absent or non-constant attribute (e.g. a VLA bound).
 */
static int
die_sconst(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at, int64_t *v,
    bool *present, struct kvs_error *e)
{
	Dwarf_Attribute a;
	Dwarf_Error err = NULL;
	Dwarf_Half form = 0;
	Dwarf_Unsigned u = 0;
	Dwarf_Signed s = 0;
	int rc = die_attr(d, die, at, &a, e);

	*present = false;
	*v = 0;
	if (rc <= 0)
		return rc;
	if (dwarf_whatform(a, &form, &err) != DW_DLV_OK)
		goto fail;
	if (!form_is_data(form)) {
		dwarf_dealloc(d->dbg, a, DW_DLA_ATTR);
		return 0;
	}
	if (form == DW_FORM_sdata || form == DW_FORM_implicit_const) {
		if (dwarf_formsdata(a, &s, &err) != DW_DLV_OK)
			goto fail;
		*v = s;
	} else {
		if (dwarf_formudata(a, &u, &err) != DW_DLV_OK)
			goto fail;
		/* Unsigned forms are taken as they are: gcc writes an array of
		 * 256 as upper bound 255 in DW_FORM_data1, so an all-ones small
		 * form is a real bound, not -1 (flexible arrays have no bound). */
		*v = (int64_t)u;
	}
	*present = true;
	dwarf_dealloc(d->dbg, a, DW_DLA_ATTR);
	return 0;
fail:
	dwarf_dealloc(d->dbg, a, DW_DLA_ATTR);
	return dw_fail(d, e, err, "reading constant attribute", die_off(d, die));
}

/* Unsigned constant attribute (sizes, counts); absent -> *present false. */
static int
die_uconst(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at, uint64_t *v,
    bool *present, struct kvs_error *e)
{
	Dwarf_Attribute a;
	Dwarf_Error err = NULL;
	Dwarf_Half form = 0;
	Dwarf_Unsigned u = 0;
	Dwarf_Signed s = 0;
	int rc = die_attr(d, die, at, &a, e);

	*present = false;
	*v = 0;
	if (rc <= 0)
		return rc;
	if (dwarf_whatform(a, &form, &err) != DW_DLV_OK)
		goto fail;
	if (!form_is_data(form)) {
		dwarf_dealloc(d->dbg, a, DW_DLA_ATTR);
		return 0;
	}
	if (form == DW_FORM_sdata || form == DW_FORM_implicit_const) {
		if (dwarf_formsdata(a, &s, &err) != DW_DLV_OK)
			goto fail;
		u = (Dwarf_Unsigned)s;
	} else if (dwarf_formudata(a, &u, &err) != DW_DLV_OK)
		goto fail;
	*v = u;
	*present = true;
	dwarf_dealloc(d->dbg, a, DW_DLA_ATTR);
	return 0;
fail:
	dwarf_dealloc(d->dbg, a, DW_DLA_ATTR);
	return dw_fail(d, e, err, "reading constant attribute", die_off(d, die));
}

/* Reference attribute as a global .debug_info offset; absent -> 0. */
static int
die_ref(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *ref,
    struct kvs_error *e)
{
	Dwarf_Attribute a;
	Dwarf_Error err = NULL;
	int rc = die_attr(d, die, at, &a, e);

	*ref = 0;
	if (rc <= 0)
		return rc;
	rc = dwarf_global_formref(a, ref, &err);
	dwarf_dealloc(d->dbg, a, DW_DLA_ATTR);
	if (rc != DW_DLV_OK)
		return dw_fail(d, e, err, "reading type reference", die_off(d, die));
	return 0;
}

static uint64_t
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

/*
 * A member location expression.  C compilers emit DW_OP_plus_uconst N
 * (DWARF 2/3 style); DW_OP_constu/litN followed by DW_OP_plus are accepted
 * too.  Anything else (virtual bases) is not a fixed offset.
 */
static bool
eval_member_expr(const uint8_t *p, size_t len, uint64_t *out)
{
	const uint8_t *end = p + len;
	uint64_t stack[4];
	int sp = 1;
	bool ok = true;

	stack[0] = 0; /* the struct's base address */
	while (p < end && ok) {
		uint8_t op = *p++;
		if (op == DW_OP_plus_uconst)
			stack[sp - 1] += read_uleb(&p, end, &ok);
		else if (op == DW_OP_constu && sp < 4)
			stack[sp++] = read_uleb(&p, end, &ok);
		else if (op >= DW_OP_lit0 && op <= DW_OP_lit31 && sp < 4)
			stack[sp++] = op - DW_OP_lit0;
		else if (op == DW_OP_plus && sp >= 2) {
			stack[sp - 2] += stack[sp - 1];
			sp--;
		} else
			return false;
	}
	if (!ok || sp != 1)
		return false;
	*out = stack[0];
	return true;
}

/* DW_AT_data_member_location: a constant (DWARF 3+) or an expression
 * (DWARF 2).  Absent (union members) -> 0. */
static int
member_location(struct kvs_dwarf *d, Dwarf_Die die, uint64_t *loc,
    struct kvs_error *e)
{
	Dwarf_Attribute a;
	Dwarf_Error err = NULL;
	Dwarf_Half form = 0;
	int rc = die_attr(d, die, DW_AT_data_member_location, &a, e);
	bool okexpr = false;

	*loc = 0;
	if (rc <= 0)
		return rc;
	if (dwarf_whatform(a, &form, &err) != DW_DLV_OK)
		goto fail;
	if (form_is_data(form)) {
		Dwarf_Unsigned u = 0;
		Dwarf_Signed s = 0;
		if (form == DW_FORM_sdata || form == DW_FORM_implicit_const) {
			if (dwarf_formsdata(a, &s, &err) != DW_DLV_OK)
				goto fail;
			u = (Dwarf_Unsigned)s;
		} else if (dwarf_formudata(a, &u, &err) != DW_DLV_OK)
			goto fail;
		*loc = u;
		okexpr = true;
	} else if (form == DW_FORM_exprloc) {
		Dwarf_Unsigned len = 0;
		Dwarf_Ptr p = NULL;
		if (dwarf_formexprloc(a, &len, &p, &err) != DW_DLV_OK)
			goto fail;
		okexpr = eval_member_expr(p, len, loc);
	} else if (form == DW_FORM_block1 || form == DW_FORM_block2 ||
	    form == DW_FORM_block4 || form == DW_FORM_block) {
		Dwarf_Block *b = NULL;
		if (dwarf_formblock(a, &b, &err) != DW_DLV_OK)
			goto fail;
		okexpr = eval_member_expr(b->bl_data, b->bl_len, loc);
		dwarf_dealloc(d->dbg, b, DW_DLA_BLOCK);
	}
	dwarf_dealloc(d->dbg, a, DW_DLA_ATTR);
	if (!okexpr)
		return kerr_set(e, KVS_E_DWARF, "member at DIE 0x%llx: location is "
		    "not a constant offset (form 0x%x)",
		    (unsigned long long)die_off(d, die), form);
	return 0;
fail:
	dwarf_dealloc(d->dbg, a, DW_DLA_ATTR);
	return dw_fail(d, e, err, "reading member location", die_off(d, die));
}

/* ----------------------------------------------------------- the index */

static int
ix_put(struct kvs_dwarf *d, enum ix_kind k, const char *name, Dwarf_Off off,
    bool decl)
{
	struct hent *he = hm_find(&d->ix[k], name);

	if (he != NULL) {
		/* A definition replaces a declaration; otherwise first wins. */
		if (he->decl && !decl) {
			he->off = off;
			he->decl = false;
		}
		return 0;
	}
	he = hm_add(&d->ix[k], name);
	if (he == NULL)
		return -1;
	he->off = off;
	he->decl = decl;
	return 0;
}

static int
index_die(struct kvs_dwarf *d, Dwarf_Die die, struct kvs_error *e)
{
	Dwarf_Half tag;
	enum ix_kind k;
	const char *name;
	bool decl = false;
	Dwarf_Off off;

	if (die_tag(d, die, &tag, e) != 0)
		return -1;
	switch (tag) {
	case DW_TAG_structure_type: case DW_TAG_class_type: k = IX_STRUCT; break;
	case DW_TAG_union_type: k = IX_UNION; break;
	case DW_TAG_enumeration_type: k = IX_ENUM; break;
	case DW_TAG_typedef: k = IX_TYPEDEF; break;
	case DW_TAG_base_type: k = IX_BASE; break;
	case DW_TAG_variable: k = IX_VAR; break;
	default:
		return 0;
	}
	if (die_name(d, die, &name, e) != 0)
		return -1;
	if ((off = die_off(d, die)) == 0)
		return kerr_set(e, KVS_E_DWARF, "DIE without offset");
	if (name == NULL && k == IX_VAR) {
		/* A definition completing an earlier declaration: named
		 * through DW_AT_specification. */
		Dwarf_Off spec;
		Dwarf_Die sd;
		if (die_ref(d, die, DW_AT_specification, &spec, e) != 0)
			return -1;
		if (spec == 0)
			return 0;
		if (die_at(d, spec, &sd, e) != 0)
			return -1;
		if (die_name(d, sd, &name, e) != 0) {
			dwarf_dealloc_die(sd);
			return -1;
		}
		dwarf_dealloc_die(sd);
	} else if (die_has(d, die, DW_AT_declaration, &decl, e) != 0)
		return -1;
	if (name == NULL)
		return 0; /* anonymous type: reachable only through references */
	if (ix_put(d, k, name, off, decl) != 0)
		return nomem(e);
	return 0;
}

/*
 * Walk CU headers to the end (libdwarf restarts at the first CU after
 * NO_ENTRY).  With index, visit every top-level DIE.  A damaged CU does not
 * stop the walk: the rest of that CU is skipped, the first such error is
 * kept in d->index_err (lookups that find nothing then report it), and the
 * next CU is read from its header.  Only a damaged CU header ends the walk.
 */
static void
note_index_error(struct kvs_dwarf *d, const struct kvs_error *e)
{
	if (d->index_err == NULL)
		d->index_err = strdup(e->msg);
	d->index_failed = true;
}

static void
walk_cus(struct kvs_dwarf *d, bool index)
{
	Dwarf_Unsigned hlen, typeoff, next;
	Dwarf_Half ver, asz, lsz, esz, cutype;
	Dwarf_Off abbr;
	Dwarf_Sig8 sig;
	Dwarf_Error err = NULL;
	struct kvs_error e;
	int rc, maxver = 0;

	kerr_clear(&e);
	for (;;) {
		Dwarf_Die cu = NULL, die = NULL, sib = NULL;
		bool bad = false;

		rc = dwarf_next_cu_header_d(d->dbg, 1, &hlen, &ver, &abbr, &asz,
		    &lsz, &esz, &sig, &typeoff, &next, &cutype, &err);
		if (rc == DW_DLV_NO_ENTRY)
			break;
		if (rc != DW_DLV_OK) {
			dw_fail(d, &e, err, "reading compilation unit header", 0);
			if (index)
				note_index_error(d, &e);
			break;
		}
		if (ver > maxver)
			maxver = ver;
		if (!index)
			continue;
		rc = dwarf_siblingof_b(d->dbg, NULL, 1, &cu, &err);
		if (rc != DW_DLV_OK) {
			if (rc == DW_DLV_ERROR) {
				dw_fail(d, &e, err, "reading compilation unit DIE", 0);
				note_index_error(d, &e);
			}
			continue;
		}
		rc = dwarf_child(cu, &die, &err);
		if (rc == DW_DLV_ERROR) {
			dw_fail(d, &e, err, "reading compilation unit children",
			    die_off(d, cu));
			bad = true;
		}
		while (rc == DW_DLV_OK) {
			if (index_die(d, die, &e) != 0) {
				bad = true;
				break;
			}
			rc = next_sibling(d, die, &sib, &err);
			if (rc == DW_DLV_ERROR) {
				dw_fail(d, &e, err, "walking top-level DIEs",
				    die_off(d, die));
				bad = true;
			}
			dwarf_dealloc_die(die);
			die = rc == DW_DLV_OK ? sib : NULL;
		}
		if (die != NULL)
			dwarf_dealloc_die(die);
		dwarf_dealloc_die(cu);
		if (bad)
			note_index_error(d, &e);
		if (e.status == KVS_E_NOMEM)
			break;
	}
	if (maxver > d->version)
		d->version = maxver;
}

static int fast_index(struct kvs_dwarf *d);

static int
ensure_index(struct kvs_dwarf *d, struct kvs_error *e)
{
	(void)e;
	if (!d->indexed) {
		d->indexed = true;
		if (d->linked && fast_index(d) == 0)
			d->fast = true;
		else
			walk_cus(d, true);
	}
	return 0;
}

bool
kvs_dwarf_fast_indexed(const struct kvs_dwarf *d)
{
	return d != NULL && d->fast;
}

/* A name was not found: KVS_E_NOTYPE, unless the index is incomplete (then
 * absence proves nothing, and KVS_E_DWARF says why). */
static int
not_found(struct kvs_dwarf *d, struct kvs_error *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int
not_found(struct kvs_dwarf *d, struct kvs_error *e, const char *fmt, ...)
{
	char msg[KVS_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (d->index_failed)
		return kerr_set(e, KVS_E_DWARF, "%s (DWARF index incomplete: %s)",
		    msg, d->index_err != NULL ? d->index_err : "out of memory");
	return kerr_set(e, KVS_E_NOTYPE, "%s", msg);
}

int
kvs_dwarf_version(struct kvs_dwarf *d)
{
	if (d == NULL)
		return 0;
	if (d->version == 0 && !d->indexed)
		walk_cus(d, false);
	return d->version;
}

/* ------------------------------------------------ the fast index (linked) */

/*
 * fast_index: the same index as walk_cus, read straight from the section
 * bytes of a linked file, the CUs spread over threads.  libdwarf builds a
 * DIE, an attribute list and an allocation per DIE and cannot be shared
 * between threads; here a CU's abbreviation table is decoded once, each
 * top-level DIE costs a few byte reads, and the children of a DIE (function
 * bodies, members) are jumped over by DW_AT_sibling, which gcc writes on
 * every DIE with children (they are walked form by form when it is absent).
 * Names point into the section data (.debug_str, .debug_line_str or the
 * DIE itself), which libelf maps from the file and keeps until elf_end.
 *
 * Each thread indexes a contiguous run of CUs into its own maps with the
 * index's rule (a definition replaces a declaration, else the first wins);
 * the maps are merged in CU order with the same rule, which gives the
 * answer one walk in CU order gives.  Anything this reader does not expect
 * (a compressed or relocatable section, an unknown form or unit, a
 * reference into another CU, a truncated DIE) makes it give up as a whole:
 * walk_cus then does the work through libdwarf, damaged CUs included.
 */
struct fsec {
	const uint8_t *p;
	size_t n;
};

struct fx_abbrev {
	uint16_t tag;
	bool children;
	uint32_t first, nattr;        /* into fx_cu.attrs */
};

struct fx_attr {
	uint16_t at, form;
	int64_t implicit;
};

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

#define FX_BLK (64u << 10)

/* A copy of a name written inside .debug_info, so that looking it up
 * later does not fault a page of that section back in. */
static const char *
fx_copy(struct fx_thread *t, const char *s)
{
	size_t n = strlen(s) + 1;
	char *r;

	if (n > FX_BLK)
		return NULL;
	if (t->nblk == 0 || t->blkused + n > FX_BLK) {
		if (t->nblk == t->capblk) {
			size_t nc = t->capblk ? t->capblk * 2 : 16;
			char **nb = realloc(t->blk, nc * sizeof(*nb));
			if (nb == NULL)
				return NULL;
			t->blk = nb;
			t->capblk = nc;
		}
		if ((t->blk[t->nblk] = malloc(FX_BLK)) == NULL)
			return NULL;
		t->nblk++;
		t->blkused = 0;
	}
	r = t->blk[t->nblk - 1] + t->blkused;
	memcpy(r, s, n);
	t->blkused += n;
	return r;
}

/* One unit's reading state. */
struct fx_cu {
	const uint8_t *base, *end;    /* the unit: header start, end */
	unsigned osz, asz, ver;
	uint64_t stroff_base;
	bool has_stroff;
};

static bool
fx_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	bool ok = true;

	*v = read_uleb(p, end, &ok);
	return ok;
}

static bool
fx_sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t r = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*p >= end)
			return false;
		b = *(*p)++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		r |= ~(uint64_t)0 << shift;
	*v = (int64_t)r;
	return true;
}

static uint64_t
fx_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	/* a wider constant (DW_FORM_data16) keeps its low 64 bits */
	for (i = 0; i < n && i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The abbreviation table at off, into t->ab (codes must be dense from 1,
 * as compilers write them).  false: malformed or unexpected. */
static bool
fx_abbrevs(struct fx_thread *t, uint64_t off)
{
	const struct fsec *s = &t->sh->abbrev;
	const uint8_t *p, *end = s->p + s->n;
	uint64_t code, tag, at, form;

	t->nab = t->nattrs = 0;
	if (off >= s->n)
		return false;
	for (p = s->p + off;;) {
		struct fx_abbrev *a;

		if (!fx_uleb(&p, end, &code))
			return false;
		if (code == 0)
			return true;
		if (code != t->nab + 1 || !fx_uleb(&p, end, &tag) || p >= end ||
		    tag > 0xffff)
			return false;
		if (t->nab == t->capab) {
			size_t nc = t->capab ? t->capab * 2 : 256;
			struct fx_abbrev *n = realloc(t->ab, nc * sizeof(*n));
			if (n == NULL)
				return t->nomem = true, false;
			t->ab = n;
			t->capab = nc;
		}
		a = &t->ab[t->nab++];
		a->tag = (uint16_t)tag;
		a->children = *p++ != 0;
		a->first = (uint32_t)t->nattrs;
		for (;;) {
			struct fx_attr *fa;
			int64_t ic = 0;

			if (!fx_uleb(&p, end, &at) || !fx_uleb(&p, end, &form))
				return false;
			if (at == 0 && form == 0)
				break;
			if (at > 0xffff || form > 0xffff)
				return false;
			if (form == DW_FORM_implicit_const && !fx_sleb(&p, end, &ic))
				return false;
			if (t->nattrs == t->capattrs) {
				size_t nc = t->capattrs ? t->capattrs * 2 : 1024;
				struct fx_attr *n = realloc(t->attrs, nc * sizeof(*n));
				if (n == NULL)
					return t->nomem = true, false;
				t->attrs = n;
				t->capattrs = nc;
			}
			fa = &t->attrs[t->nattrs++];
			fa->at = (uint16_t)at;
			fa->form = (uint16_t)form;
			fa->implicit = ic;
		}
		a->nattr = (uint32_t)(t->nattrs - a->first);
	}
}

/* A string of section s at off (NUL inside the section), or NULL. */
static const char *
fx_str(const struct fsec *s, uint64_t off)
{
	if (s->p == NULL || off >= s->n ||
	    memchr(s->p + off, 0, s->n - off) == NULL)
		return NULL;
	return (const char *)s->p + off;
}

/* What a top-level DIE says about itself. */
struct fx_die {
	const struct fx_abbrev *ab;
	const char *name;
	bool decl;
	uint64_t sibling, spec;       /* unit-relative; 0 = absent */
	uint64_t stroff_base;
	bool has_stroff;
	bool unit;                    /* the unit DIE: its name is not read
	                               * (clang puts it, as strx, before
	                               * DW_AT_str_offsets_base) */
};

/*
 * Read (or, with out NULL, skip) one DIE's attributes at *pp.  false:
 * malformed or a form this reader does not know.
 */
static bool
fx_die(struct fx_thread *t, const struct fx_cu *u, const uint8_t **pp,
    const struct fx_abbrev *ab, struct fx_die *out)
{
	const uint8_t *p = *pp, *end = u->end;
	uint32_t i;

	for (i = 0; i < ab->nattr; i++) {
		const struct fx_attr *fa = &t->attrs[ab->first + i];
		uint64_t form = fa->form, v = 0, n;
		const char *str = NULL;
		bool isref = false, isstr = false, isflag = false;

again:
		switch (form) {
		case DW_FORM_flag_present:
			v = 1; isflag = true;
			break;
		case DW_FORM_implicit_const:
			v = (uint64_t)fa->implicit;
			break;
		case DW_FORM_addr:
			n = u->asz; goto fixed;
		case DW_FORM_flag:
			isflag = true; /* FALLTHROUGH */
		case DW_FORM_data1: case DW_FORM_addrx1:
			n = 1; goto fixed;
		case DW_FORM_ref1:
			isref = true; n = 1; goto fixed;
		case DW_FORM_strx1:
			isstr = true; n = 1; goto fixed;
		case DW_FORM_data2: case DW_FORM_addrx2:
			n = 2; goto fixed;
		case DW_FORM_ref2:
			isref = true; n = 2; goto fixed;
		case DW_FORM_strx2:
			isstr = true; n = 2; goto fixed;
		case DW_FORM_addrx3:
			n = 3; goto fixed;
		case DW_FORM_strx3:
			isstr = true; n = 3; goto fixed;
		case DW_FORM_data4: case DW_FORM_addrx4: case DW_FORM_ref_sup4:
			n = 4; goto fixed;
		case DW_FORM_ref4:
			isref = true; n = 4; goto fixed;
		case DW_FORM_strx4:
			isstr = true; n = 4; goto fixed;
		case DW_FORM_data8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
			n = 8; goto fixed;
		case DW_FORM_ref8:
			isref = true; n = 8; goto fixed;
		case DW_FORM_data16:
			n = 16; goto fixed;
		case DW_FORM_strp: case DW_FORM_line_strp:
		case DW_FORM_sec_offset: case DW_FORM_strp_sup:
			n = u->osz; goto fixed;
		case DW_FORM_ref_addr:
			/* another unit's DIE: not resolvable here */
			if (out != NULL && (fa->at == DW_AT_specification ||
			    fa->at == DW_AT_sibling))
				return false;
			n = u->ver <= 2 ? u->asz : u->osz;
			goto fixed;
		case DW_FORM_udata: case DW_FORM_addrx: case DW_FORM_loclistx:
		case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index:
			if (!fx_uleb(&p, end, &v))
				return false;
			break;
		case DW_FORM_ref_udata:
			if (!fx_uleb(&p, end, &v))
				return false;
			isref = true;
			break;
		case DW_FORM_strx: case DW_FORM_GNU_str_index:
			if (!fx_uleb(&p, end, &v))
				return false;
			isstr = true;
			break;
		case DW_FORM_sdata: {
			int64_t sv;
			if (!fx_sleb(&p, end, &sv))
				return false;
			v = (uint64_t)sv;
			break;
		}
		case DW_FORM_string: {
			const uint8_t *z = memchr(p, 0, (size_t)(end - p));
			if (z == NULL)
				return false;
			str = (const char *)p;
			p = z + 1;
			break;
		}
		case DW_FORM_block1:
			if (end - p < 1) return false;
			n = *p++; goto block;
		case DW_FORM_block2:
			if (end - p < 2) return false;
			n = fx_le(p, 2); p += 2; goto block;
		case DW_FORM_block4:
			if (end - p < 4) return false;
			n = fx_le(p, 4); p += 4; goto block;
		case DW_FORM_block: case DW_FORM_exprloc:
			if (!fx_uleb(&p, end, &n))
				return false;
block:
			if ((uint64_t)(end - p) < n)
				return false;
			p += n;
			break;
		case DW_FORM_indirect:
			if (!fx_uleb(&p, end, &form))
				return false;
			if (form == DW_FORM_implicit_const || form == DW_FORM_indirect)
				return false;
			goto again;
		default:
			return false;
		}
		goto have;
fixed:
		if ((uint64_t)(end - p) < n)
			return false;
		v = fx_le(p, (unsigned)n);
		p += n;
have:
		if (out == NULL)
			continue;
		switch (fa->at) {
		case DW_AT_name:
			if (out->unit)
				break;
			if (str == NULL) {
				if (form == DW_FORM_strp)
					str = fx_str(&t->sh->str, v);
				else if (form == DW_FORM_line_strp)
					str = fx_str(&t->sh->line_str, v);
				else if (isstr) {
					const struct fsec *so = &t->sh->str_offsets;
					uint64_t at = u->stroff_base + v * u->osz;
					if (!u->has_stroff || so->p == NULL ||
					    at + u->osz > so->n || at < u->stroff_base)
						return false;
					str = fx_str(&t->sh->str, fx_le(so->p + at, u->osz));
				} else
					return false;
				if (str == NULL)
					return false;
			}
			out->name = str;
			break;
		case DW_AT_declaration:
			out->decl = isflag && v != 0;
			break;
		case DW_AT_sibling:
			if (!isref)
				return false;
			out->sibling = v;
			break;
		case DW_AT_specification:
			if (!isref)
				return false;
			out->spec = v;
			break;
		case DW_AT_str_offsets_base:
			out->stroff_base = v;
			out->has_stroff = true;
			break;
		}
	}
	*pp = p;
	return true;
}

/* The abbreviation of the DIE at *pp (its code read), NULL for a null
 * entry; *bad on a malformed one. */
static const struct fx_abbrev *
fx_code(struct fx_thread *t, const struct fx_cu *u, const uint8_t **pp,
    bool *bad)
{
	uint64_t code;

	if (!fx_uleb(pp, u->end, &code) || code > t->nab) {
		*bad = true;
		return NULL;
	}
	return code == 0 ? NULL : &t->ab[code - 1];
}

/* Skip the children of a DIE without DW_AT_sibling: to after its null. */
static bool
fx_skip_children(struct fx_thread *t, const struct fx_cu *u, const uint8_t **pp)
{
	unsigned depth = 1;
	bool bad = false;

	while (depth > 0) {
		const struct fx_abbrev *ab = fx_code(t, u, pp, &bad);
		if (bad)
			return false;
		if (ab == NULL) {
			depth--;
			continue;
		}
		if (!fx_die(t, u, pp, ab, NULL))
			return false;
		if (ab->children && ++depth > 4096)
			return false;
	}
	return true;
}

static int
fx_kind(uint16_t tag)
{
	switch (tag) {
	case DW_TAG_structure_type: case DW_TAG_class_type: return IX_STRUCT;
	case DW_TAG_union_type: return IX_UNION;
	case DW_TAG_enumeration_type: return IX_ENUM;
	case DW_TAG_typedef: return IX_TYPEDEF;
	case DW_TAG_base_type: return IX_BASE;
	case DW_TAG_variable: return IX_VAR;
	}
	return -1;
}

static bool
fx_put(struct fx_thread *t, int k, const char *name, uint64_t off, bool decl)
{
	const struct fsec *info = &t->sh->info;
	struct hent *he = hm_find(&t->ix[k], name);

	if (he != NULL) {
		if (he->decl && !decl) {
			he->off = off;
			he->decl = false;
		}
		return true;
	}
	if ((const uint8_t *)name >= info->p && (const uint8_t *)name <
	    info->p + info->n && (name = fx_copy(t, name)) == NULL)
		return t->nomem = true, false;
	if ((he = hm_add(&t->ix[k], name)) == NULL)
		return t->nomem = true, false;
	he->off = off;
	he->decl = decl;
	return true;
}

/* One unit: header, abbreviations, the unit DIE, its children. */
static bool
fx_unit(struct fx_thread *t, size_t cui, uint64_t start, uint64_t stop)
{
	const struct fsec *info = &t->sh->info;
	const uint8_t *p = info->p + start;
	struct fx_cu u;
	struct fx_die top;
	const struct fx_abbrev *ab;
	uint64_t len, aoff;
	unsigned ut = DW_UT_compile;
	bool bad = false;

	memset(&u, 0, sizeof(u));
	u.base = p;
	u.end = info->p + stop;
	len = fx_le(p, 4);
	p += 4;
	u.osz = 4;
	if (len == 0xffffffff) {
		p += 8;
		u.osz = 8;
	}
	if (u.end - p < 2)
		return false;
	u.ver = (unsigned)fx_le(p, 2);
	p += 2;
	if (u.ver < 2 || u.ver > 5)
		return false;
	if (u.ver >= 5) {
		if (u.end - p < 2 + u.osz)
			return false;
		ut = p[0];
		u.asz = p[1];
		aoff = fx_le(p + 2, u.osz);
		p += 2 + u.osz;
		if (ut == DW_UT_skeleton || ut == DW_UT_split_compile)
			p += 8;
		else if (ut == DW_UT_type || ut == DW_UT_split_type)
			p += 8 + u.osz;
		else if (ut != DW_UT_compile && ut != DW_UT_partial)
			return false;
	} else {
		if (u.end - p < u.osz + 1)
			return false;
		aoff = fx_le(p, u.osz);
		u.asz = p[u.osz];
		p += u.osz + 1;
	}
	if (p >= u.end || (u.asz != 4 && u.asz != 8))
		return p == u.end; /* a unit without DIEs */
	if ((int)u.ver > t->maxver)
		t->maxver = (int)u.ver;
	if (!fx_abbrevs(t, aoff))
		return false;
	t->sh->cu_die[cui] = (uint64_t)(p - info->p);
	ab = fx_code(t, &u, &p, &bad);
	if (bad)
		return false;
	if (ab == NULL)
		return true;
	memset(&top, 0, sizeof(top));
	top.unit = true;
	if (!fx_die(t, &u, &p, ab, &top))
		return false;
	u.stroff_base = top.stroff_base;
	u.has_stroff = top.has_stroff;
	if (!ab->children)
		return true;
	while (p < u.end) {
		struct fx_die d;
		uint64_t off = (uint64_t)(p - info->p);
		int k;

		ab = fx_code(t, &u, &p, &bad);
		if (bad)
			return false;
		if (ab == NULL)
			break; /* the unit DIE's children end */
		memset(&d, 0, sizeof(d));
		if (!fx_die(t, &u, &p, ab, &d))
			return false;
		k = fx_kind(ab->tag);
		if (k == IX_VAR && d.name == NULL && d.spec != 0) {
			/* named through its declaration, in this unit */
			const uint8_t *q = u.base + d.spec;
			const struct fx_abbrev *sab;
			struct fx_die sd;

			if (d.spec >= (uint64_t)(u.end - u.base))
				return false;
			sab = fx_code(t, &u, &q, &bad);
			if (bad || sab == NULL)
				return false;
			memset(&sd, 0, sizeof(sd));
			if (!fx_die(t, &u, &q, sab, &sd))
				return false;
			d.name = sd.name;
		}
		if (k >= 0 && d.name != NULL && !fx_put(t, k, d.name, off,
		    k != IX_VAR || d.spec == 0 ? d.decl : false))
			return false;
		if (!ab->children)
			continue;
		if (d.sibling != 0) {
			if (d.sibling >= (uint64_t)(u.end - u.base) ||
			    u.base + d.sibling < p)
				return false;
			p = u.base + d.sibling;
		} else if (!fx_skip_children(t, &u, &p))
			return false;
	}
	return true;
}

/*
 * Unmap the whole pages of .debug_info in [from, to): read-only pages of
 * the file, which stay in the page cache and fault back in if a lookup
 * reads them again.  Without this a 174 MB .debug_info (Debian's vmlinux)
 * ends up counted whole in the process's RSS after one pass.
 */
static void
fx_drop(const struct fsec *s, uint64_t from, uint64_t to)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)s->p + from + pg - 1) & ~(pg - 1);
	uintptr_t b = ((uintptr_t)s->p + to) & ~(pg - 1);

	if (b > a)
		(void)madvise((void *)a, b - a, MADV_DONTNEED);
}

/*
 * Map the pages of .debug_info in [from, to) ahead of the scan, in one call
 * instead of a fault per few pages (a fault is dear in a virtual machine);
 * a kernel without MADV_POPULATE_READ (before 5.14) faults them in as read.
 */
static void
fx_populate(const struct fsec *s, uint64_t from, uint64_t to)
{
#ifdef MADV_POPULATE_READ
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)s->p + from) & ~(pg - 1);
	uintptr_t b = ((uintptr_t)s->p + to + pg - 1) & ~(pg - 1);

	if (b > a)
		(void)madvise((void *)a, b - a, MADV_POPULATE_READ);
#else
	(void)s;
	(void)from;
	(void)to;
#endif
}

static void *
fx_run(void *arg)
{
	struct fx_thread *t = arg;
	struct fx_shared *sh = t->sh;
	uint64_t dropped = sh->cu[t->cu0], populated = sh->cu[t->cu0];
	size_t i;

	for (i = t->cu0; i < t->cu1; i++) {
		if (atomic_load(&sh->stop))
			break;
		if (sh->cu[i + 1] > populated) {
			uint64_t to = populated + (2u << 20);
			if (to < sh->cu[i + 1])
				to = sh->cu[i + 1];
			if (to > sh->cu[t->cu1])
				to = sh->cu[t->cu1];
			fx_populate(&sh->info, populated, to);
			populated = to;
		}
		if (!fx_unit(t, i, sh->cu[i], sh->cu[i + 1])) {
			t->failed = true;
			atomic_store(&sh->stop, true);
			break;
		}
		atomic_fetch_add(&sh->done, sh->cu[i + 1] - sh->cu[i]);
		if (sh->drop && sh->cu[i + 1] - dropped >= (4u << 20)) {
			fx_drop(&sh->info, dropped, sh->cu[i + 1]);
			dropped = sh->cu[i + 1];
		}
	}
	if (sh->drop)
		fx_drop(&sh->info, dropped, sh->cu[i]);
	return NULL;
}

/* The data of an uncompressed section by name; false when it is absent
 * (s zeroed), or compressed/unreadable (then the fast path gives up). */
static bool
fx_section(Elf *elf, size_t shstrndx, const char *want, struct fsec *s)
{
	Elf_Scn *scn = NULL;

	s->p = NULL;
	s->n = 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *nm;
		Elf_Data *data;

		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm == NULL || strcmp(nm, want) != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED))
			return false;
		data = elf_getdata(scn, NULL);
		if (data == NULL || data->d_buf == NULL || data->d_size != sh.sh_size)
			return false;
		s->p = data->d_buf;
		s->n = data->d_size;
		return true;
	}
	return true;
}

static double
fx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Draw the bar on stderr (a terminal) once the work has taken 0.5 s. */
static void
fx_bar(double t0, uint64_t done, uint64_t total, bool *shown, bool last)
{
	char bar[41];
	unsigned i, fill;

	if (!*shown && (last || fx_now() - t0 < 0.5))
		return;
	if (last) {
		fprintf(stderr, "\r%60s\r", "");
		return;
	}
	*shown = true;
	fill = total ? (unsigned)(done * 40 / total) : 40;
	for (i = 0; i < 40; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[40] = '\0';
	fprintf(stderr, "\rindexing DWARF [%s] %3u%%", bar,
	    total ? (unsigned)(done * 100 / total) : 100);
	fflush(stderr);
}

/*
 * libdwarf finds the unit of a DIE offset by reading every unit header (and
 * unit DIE) from the last one it knows up to that offset.  On a file mapping
 * each of those reads faults in a page and its neighbours (fault-around,
 * large folios): for Debian's vmlinux, 2,352 units mapped ~70 MB of
 * .debug_info back in for one lookup.  So, when fast_index knows the units,
 * they are handed to libdwarf 64 at a time, and the pages read for them
 * are dropped after each step.
 */
static void
ctx_warm(struct kvs_dwarf *d, Dwarf_Off off)
{
	size_t first = d->ctx_next;
	struct fsec info = { d->info_p, d->info_n };

	while (d->ctx_next < d->ncu && d->cu_die[d->ctx_next] <= off) {
		Dwarf_Die die = NULL;
		Dwarf_Error err = NULL;
		size_t i = d->ctx_next++;

		if (d->cu_die[i] != 0 &&
		    dwarf_offdie_b(d->dbg, d->cu_die[i], 1, &die, &err) == DW_DLV_OK)
			dwarf_dealloc_die(die);
		else if (err != NULL)
			dwarf_dealloc(d->dbg, err, DW_DLA_ERROR);
		if (d->ctx_next - first >= 64 || d->ctx_next == d->ncu ||
		    d->cu_die[d->ctx_next] > off) {
			fx_drop(&info, d->cu_die[first], d->cu_die[i]);
			first = d->ctx_next;
		}
	}
}

static int
fast_index(struct kvs_dwarf *d)
{
	struct fx_shared sh;
	struct fx_thread *th = NULL;
	size_t shstrndx, i, k, ncpu, nth = 0, cap = 0;
	uint64_t off, chunk, dropped;
	long np;
	int rc = -1;
	bool shown = false, tty;
	double t0 = fx_now();

	memset(&sh, 0, sizeof(sh));
	if (getenv("KVS_DWARF_SLOW") != NULL ||
	    elf_getshdrstrndx(d->elf, &shstrndx) != 0)
		return -1;
	if (!fx_section(d->elf, shstrndx, ".debug_info", &sh.info) ||
	    !fx_section(d->elf, shstrndx, ".debug_abbrev", &sh.abbrev) ||
	    !fx_section(d->elf, shstrndx, ".debug_str", &sh.str) ||
	    !fx_section(d->elf, shstrndx, ".debug_line_str", &sh.line_str) ||
	    !fx_section(d->elf, shstrndx, ".debug_str_offsets", &sh.str_offsets) ||
	    sh.info.p == NULL || sh.abbrev.p == NULL)
		return -1;
	if (d->mapped) {
		/* pages of libelf's own mapping of the file, never its copies */
		size_t fsz = 0;
		char *raw = elf_rawfile(d->elf, &fsz);
		sh.drop = raw != NULL && (const char *)sh.info.p >= raw &&
		    sh.info.n <= fsz && (const char *)sh.info.p - raw <=
		    (ptrdiff_t)(fsz - sh.info.n);
	}
	/* The unit boundaries. */
	for (off = 0, dropped = 0; off < sh.info.n;) {
		uint64_t len = sh.info.n - off >= 4 ? fx_le(sh.info.p + off, 4) : 0;
		unsigned hl = 4;

		if (len == 0xffffffff) {
			if (sh.info.n - off < 12)
				goto out;
			len = fx_le(sh.info.p + off + 4, 8);
			hl = 12;
		}
		if (len == 0 || len > sh.info.n - off - hl)
			goto out;
		if (sh.ncu + 1 >= cap) {
			size_t nc = cap ? cap * 2 : 1024;
			uint64_t *n = realloc(sh.cu, nc * sizeof(*n));
			if (n == NULL)
				goto out;
			sh.cu = n;
			cap = nc;
		}
		sh.cu[sh.ncu++] = off;
		off += hl + len;
		/* each header read maps pages around it: let them go */
		if (sh.drop && off - dropped >= (8u << 20)) {
			fx_drop(&sh.info, dropped, off);
			dropped = off;
		}
	}
	if (sh.drop)
		fx_drop(&sh.info, dropped, sh.info.n);
	if (sh.ncu == 0)
		goto out;
	sh.cu[sh.ncu] = sh.info.n;
	if ((sh.cu_die = calloc(sh.ncu, sizeof(*sh.cu_die))) == NULL)
		goto out;
	np = sysconf(_SC_NPROCESSORS_ONLN);
	ncpu = np < 1 ? 1 : np > 16 ? 16 : (size_t)np;
	/* A thread is worth it past ~4 MB of .debug_info. */
	nth = sh.info.n / (4u << 20) + 1;
	if (nth > ncpu)
		nth = ncpu;
	if (nth > sh.ncu)
		nth = sh.ncu;
	th = calloc(nth, sizeof(*th));
	if (th == NULL)
		goto out;
	/* Contiguous runs of CUs of about equal bytes. */
	chunk = sh.info.n / nth + 1;
	for (i = 0, k = 0; k < nth; k++) {
		th[k].sh = &sh;
		th[k].cu0 = i;
		while (i < sh.ncu && (k == nth - 1 || sh.cu[i + 1] <= chunk * (k + 1)))
			i++;
		th[k].cu1 = i;
		for (size_t j = 0; j < IX__N; j++)
			th[k].ix[j].own_keys = false;
	}
	for (k = 1; k < nth; k++)
		if (pthread_create(&th[k].tid, NULL, fx_run, &th[k]) != 0) {
			/* run it here instead */
			th[k].tid = pthread_self();
			fx_run(&th[k]);
		}
	tty = d->progress && isatty(2);
	if (!tty || nth == 1)
		fx_run(&th[0]);
	else {
		/* The calling thread draws the bar; its run goes to a thread. */
		pthread_t t0id;
		if (pthread_create(&t0id, NULL, fx_run, &th[0]) != 0)
			fx_run(&th[0]);
		else {
			for (;;) {
				uint64_t done = atomic_load(&sh.done);
				struct timespec ts = { 0, 50 * 1000 * 1000 };
				if (done >= sh.info.n || atomic_load(&sh.stop))
					break;
				fx_bar(t0, done, sh.info.n, &shown, false);
				nanosleep(&ts, NULL);
			}
			pthread_join(t0id, NULL);
		}
	}
	for (k = 1; k < nth; k++)
		if (!pthread_equal(th[k].tid, pthread_self()))
			pthread_join(th[k].tid, NULL);
	fx_bar(t0, 0, 0, &shown, true);
	for (k = 0; k < nth; k++)
		if (th[k].failed || th[k].nomem)
			goto out;
	/* Merge in CU order, with the index's rule. */
	for (k = 0; k < nth; k++) {
		for (i = 0; i < IX__N; i++) {
			struct hmap *m = &th[k].ix[i];
			for (size_t j = 0; j < m->n; j++)
				if (ix_put(d, (enum ix_kind)i, m->ent[j].key,
				    m->ent[j].off, m->ent[j].decl) != 0)
					goto fail_merge;
		}
		if (th[k].maxver > d->version)
			d->version = th[k].maxver;
	}
	/* The name copies now belong to the handle. */
	for (k = 0; k < nth; k++) {
		char **nb = realloc(d->blk, (d->nblk + th[k].nblk + 1) * sizeof(*nb));
		if (nb == NULL)
			goto fail_merge;
		d->blk = nb;
		if (th[k].nblk > 0)     /* a thread that kept no names has no blk */
			memcpy(d->blk + d->nblk, th[k].blk, th[k].nblk * sizeof(*nb));
		d->nblk += th[k].nblk;
		th[k].nblk = 0;
	}
	if (sh.drop) {
		d->cu_die = sh.cu_die;
		sh.cu_die = NULL;
		d->ncu = sh.ncu;
		d->info_p = sh.info.p;
		d->info_n = sh.info.n;
	}
	rc = 0;
	goto out;
fail_merge:
	for (i = 0; i < IX__N; i++)
		hm_free(&d->ix[i], NULL);
	while (d->nblk > 0)
		free(d->blk[--d->nblk]);
out:
	for (k = 0; th != NULL && k < nth; k++) {
		for (i = 0; i < IX__N; i++)
			hm_free(&th[k].ix[i], NULL);
		free(th[k].ab);
		free(th[k].attrs);
		while (th[k].nblk > 0)
			free(th[k].blk[--th[k].nblk]);
		free(th[k].blk);
	}
	free(th);
	free(sh.cu);
	free(sh.cu_die);
	return rc;
}

/* --------------------------------------------------------------- types */

static bool
is_qualifier(Dwarf_Half tag)
{
	return tag == DW_TAG_typedef || tag == DW_TAG_const_type ||
	    tag == DW_TAG_volatile_type || tag == DW_TAG_restrict_type ||
	    tag == DW_TAG_atomic_type;
}

static kvs_kind_t
tag_kind(Dwarf_Half tag)
{
	switch (tag) {
	case DW_TAG_base_type: return KVS_KIND_BASE;
	case DW_TAG_pointer_type: case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: return KVS_KIND_POINTER;
	case DW_TAG_array_type: return KVS_KIND_ARRAY;
	case DW_TAG_structure_type: case DW_TAG_class_type: return KVS_KIND_STRUCT;
	case DW_TAG_union_type: return KVS_KIND_UNION;
	case DW_TAG_enumeration_type: return KVS_KIND_ENUM;
	case DW_TAG_subroutine_type: return KVS_KIND_FUNCTION;
	case DW_TAG_unspecified_type: return KVS_KIND_VOID;
	}
	return KVS_KIND_OTHER;
}

/*
 * Peel typedefs and qualifiers starting at off (0 = void), and replace a
 * struct/union/enum declaration by its definition from the index when one
 * exists.  Returns the final offset (0 = void) and tag.
 */
static int
peel(struct kvs_dwarf *d, Dwarf_Off off, Dwarf_Off *out, Dwarf_Half *tagp,
    struct kvs_error *e)
{
	Dwarf_Die die = NULL;
	Dwarf_Half tag = 0;
	int depth;

	for (depth = 0; off != 0; depth++) {
		Dwarf_Off next;
		bool decl = false;
		enum ix_kind k;
		const char *name;

		if (depth > MAX_TYPE_DEPTH)
			return kerr_set(e, KVS_E_DWARF, "type chain at DIE 0x%llx "
			    "too deep (cycle?)", (unsigned long long)off);
		if (die_at(d, off, &die, e) != 0)
			return -1;
		if (die_tag(d, die, &tag, e) != 0)
			goto fail;
		if (is_qualifier(tag)) {
			if (die_ref(d, die, DW_AT_type, &next, e) != 0)
				goto fail;
			dwarf_dealloc_die(die);
			die = NULL;
			off = next;
			continue;
		}
		if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type)
			k = IX_STRUCT;
		else if (tag == DW_TAG_union_type)
			k = IX_UNION;
		else if (tag == DW_TAG_enumeration_type)
			k = IX_ENUM;
		else
			break;
		if (die_has(d, die, DW_AT_declaration, &decl, e) != 0)
			goto fail;
		if (decl) {
			struct hent *he;
			if (die_name(d, die, &name, e) != 0)
				goto fail;
			if (name != NULL && ensure_index(d, e) == 0 &&
			    (he = hm_find(&d->ix[k], name)) != NULL && !he->decl)
				off = he->off;
		}
		break;
	}
	if (die != NULL)
		dwarf_dealloc_die(die);
	*out = off;
	*tagp = off != 0 ? tag : 0;
	return 0;
fail:
	dwarf_dealloc_die(die);
	return -1;
}

static int
addr_size(struct kvs_dwarf *d, Dwarf_Die die, uint64_t *sz, struct kvs_error *e)
{
	Dwarf_Half as = 0;
	Dwarf_Error err = NULL;

	if (dwarf_get_die_address_size(die, &as, &err) != DW_DLV_OK)
		return dw_fail(d, e, err, "reading address size", die_off(d, die));
	*sz = as;
	return 0;
}

struct shape {
	kvs_kind_t kind;
	uint64_t size;
	uint64_t count;     /* arrays */
	Dwarf_Off elem;     /* arrays: element type (unpeeled); pointers: target */
	bool flexible;      /* arrays: some dimension unknown */
};

static int type_size(struct kvs_dwarf *d, Dwarf_Off off, uint64_t *size,
    kvs_kind_t *kind, int depth, struct kvs_error *e);

/* DWARF 5 table 7.17: where an array index starts when DW_AT_lower_bound
 * is absent.  C and most others: 0. */
static int64_t
lang_lower_bound(Dwarf_Unsigned lang)
{
	switch (lang) {
	case DW_LANG_Ada83: case DW_LANG_Ada95:
	case DW_LANG_Cobol74: case DW_LANG_Cobol85:
	case DW_LANG_Fortran77: case DW_LANG_Fortran90: case DW_LANG_Fortran95:
	case DW_LANG_Fortran03: case DW_LANG_Fortran08:
	case DW_LANG_Julia: case DW_LANG_Modula2: case DW_LANG_Modula3:
	case DW_LANG_Pascal83: case DW_LANG_PLI:
		return 1;
	}
	return 0;
}

/* The default lower bound for a dimension DIE: its CU's language's. */
static int
default_lower_bound(struct kvs_dwarf *d, Dwarf_Die dim, int64_t *lb,
    struct kvs_error *e)
{
	Dwarf_Off cuoff = 0;
	Dwarf_Unsigned lang = 0;
	Dwarf_Error err = NULL;
	Dwarf_Die cu;
	int rc;

	*lb = 0;
	if (dwarf_CU_dieoffset_given_die(dim, &cuoff, &err) != DW_DLV_OK)
		return dw_fail(d, e, err, "finding the compilation unit",
		    die_off(d, dim));
	if (die_at(d, cuoff, &cu, e) != 0)
		return -1;
	err = NULL;
	rc = dwarf_srclang(cu, &lang, &err);
	dwarf_dealloc_die(cu);
	if (rc == DW_DLV_ERROR)
		return dw_fail(d, e, err, "reading the source language", cuoff);
	if (rc == DW_DLV_OK)
		*lb = lang_lower_bound(lang);
	return 0;
}

/*
 * Element count of one dimension of an array: dim is a child of the array
 * DIE, a DW_TAG_subrange_type (or, for Ada or Pascal arrays indexed by an
 * enumeration, a DW_TAG_enumeration_type).  DW_AT_count, else
 * DW_AT_upper_bound - DW_AT_lower_bound + 1, where an absent lower bound is
 * the language's default (0 in C, 1 in Ada or Fortran).  *known = false for
 * a flexible or variable-length dimension: no constant count or upper
 * bound, a non-constant lower bound, or an upper bound below lower - 1.
 * The one place that reads bounds: array_count and tname both use it.
 */
static int
dim_count(struct kvs_dwarf *d, Dwarf_Die dim, uint64_t *count, bool *known,
    struct kvs_error *e)
{
	int64_t ub, lb;
	bool has;

	if (die_uconst(d, dim, DW_AT_count, count, known, e) != 0)
		return -1;
	if (*known)
		return 0;
	if (die_sconst(d, dim, DW_AT_upper_bound, &ub, &has, e) != 0)
		return -1;
	if (!has)
		return 0; /* char x[], or a bound computed at run time */
	if (die_has(d, dim, DW_AT_lower_bound, &has, e) != 0)
		return -1;
	if (has) {
		if (die_sconst(d, dim, DW_AT_lower_bound, &lb, &has, e) != 0)
			return -1;
		if (!has)
			return 0; /* a lower bound computed at run time */
	} else if (default_lower_bound(d, dim, &lb, e) != 0)
		return -1;
	/* Unsigned arithmetic: any two int64_t bounds, no overflow. */
	if (ub >= lb) {
		*count = (uint64_t)ub - (uint64_t)lb + 1;
		*known = true;
	} else if ((uint64_t)lb - (uint64_t)ub == 1)
		*known = true; /* empty: upper = lower - 1 (count 0) */
	return 0;
}

static bool
is_dim(Dwarf_Half tag)
{
	return tag == DW_TAG_subrange_type || tag == DW_TAG_enumeration_type;
}

/* Array dimensions of an array DIE: product of the dimension counts,
 * *flex if any is unknown (then *count = 0). */
static int
array_count(struct kvs_dwarf *d, Dwarf_Die arr, uint64_t *count, bool *flex,
    struct kvs_error *e)
{
	Dwarf_Die c = NULL, s = NULL;
	Dwarf_Error err = NULL;
	uint64_t n = 1;
	int rc;

	*flex = false;
	rc = dwarf_child(arr, &c, &err);
	if (rc == DW_DLV_ERROR)
		return dw_fail(d, e, err, "reading array dimensions", die_off(d, arr));
	while (rc == DW_DLV_OK) {
		Dwarf_Half tag;
		if (die_tag(d, c, &tag, e) != 0)
			goto fail;
		if (is_dim(tag)) {
			uint64_t cnt;
			bool known;
			if (dim_count(d, c, &cnt, &known, e) != 0)
				goto fail;
			if (!known)
				*flex = true;
			else
				n *= cnt;
		}
		rc = next_sibling(d, c, &s, &err);
		if (rc == DW_DLV_ERROR) {
			dw_fail(d, e, err, "reading array dimensions", die_off(d, c));
			goto fail;
		}
		dwarf_dealloc_die(c);
		c = rc == DW_DLV_OK ? s : NULL;
	}
	*count = *flex ? 0 : n;
	return 0;
fail:
	dwarf_dealloc_die(c);
	return -1;
}

/* Shape of an already peeled type (off != 0). */
static int
shape_of(struct kvs_dwarf *d, Dwarf_Off off, Dwarf_Half tag, struct shape *sh,
    int depth, struct kvs_error *e)
{
	Dwarf_Die die;
	bool has;
	int ret = -1;

	memset(sh, 0, sizeof(*sh));
	if (off == 0) {
		sh->kind = KVS_KIND_VOID;
		return 0;
	}
	if (depth > MAX_TYPE_DEPTH)
		return kerr_set(e, KVS_E_DWARF, "type at DIE 0x%llx nests too deep",
		    (unsigned long long)off);
	sh->kind = tag_kind(tag);
	if (die_at(d, off, &die, e) != 0)
		return -1;
	switch (sh->kind) {
	case KVS_KIND_POINTER:
		if (die_uconst(d, die, DW_AT_byte_size, &sh->size, &has, e) != 0)
			goto out;
		if (!has && addr_size(d, die, &sh->size, e) != 0)
			goto out;
		if (die_ref(d, die, DW_AT_type, &sh->elem, e) != 0)
			goto out;
		break;
	case KVS_KIND_ARRAY: {
		uint64_t esz;
		kvs_kind_t ek;
		if (die_ref(d, die, DW_AT_type, &sh->elem, e) != 0 ||
		    array_count(d, die, &sh->count, &sh->flexible, e) != 0)
			goto out;
		if (type_size(d, sh->elem, &esz, &ek, depth + 1, e) != 0)
			goto out;
		if (die_uconst(d, die, DW_AT_byte_size, &sh->size, &has, e) != 0)
			goto out;
		if (!has)
			sh->size = sh->count * esz;
		break;
	}
	case KVS_KIND_FUNCTION:
	case KVS_KIND_VOID:
		break;
	default:
		if (die_uconst(d, die, DW_AT_byte_size, &sh->size, &has, e) != 0)
			goto out;
		if (!has && sh->kind == KVS_KIND_ENUM) {
			/* DWARF 5 allows the size to come from DW_AT_type. */
			Dwarf_Off ut;
			kvs_kind_t uk;
			if (die_ref(d, die, DW_AT_type, &ut, e) != 0)
				goto out;
			if (ut != 0 && type_size(d, ut, &sh->size, &uk, depth + 1, e) != 0)
				goto out;
		}
		break;
	}
	ret = 0;
out:
	dwarf_dealloc_die(die);
	return ret;
}

/* Size and kind of an unpeeled type. */
static int
type_size(struct kvs_dwarf *d, Dwarf_Off off, uint64_t *size, kvs_kind_t *kind,
    int depth, struct kvs_error *e)
{
	Dwarf_Off p;
	Dwarf_Half tag;
	struct shape sh;

	if (peel(d, off, &p, &tag, e) != 0 ||
	    shape_of(d, p, tag, &sh, depth, e) != 0)
		return -1;
	*size = sh.size;
	*kind = sh.kind;
	return 0;
}

/* ---------------------------------------------------------- type names */

/*
 * C spelling of the type at off, with `decl` the declarator built so far
 * (e.g. "*" for a pointer, "[32]" for an array): "struct x *",
 * "char [32]", "int (*)(int)", "const char *".  Built outward-in as a
 * C declaration is read.
 */
static int
tname(struct kvs_dwarf *d, Dwarf_Off off, char *decl, size_t n, int depth,
    struct kvs_error *e)
{
	Dwarf_Die die = NULL;
	Dwarf_Half tag;
	const char *name, *kw = NULL;
	Dwarf_Off next = 0;
	char head[TNAME_MAX];
	int ret = -1;

	if (depth > MAX_TYPE_DEPTH)
		return kerr_set(e, KVS_E_DWARF, "type at DIE 0x%llx nests too deep",
		    (unsigned long long)off);
	if (off == 0) {
		snprintf(head, sizeof(head), "void%s", decl[0] != '\0' ? " " : "");
		kvs_tn_prepend(decl, n, head);
		return 0;
	}
	if (die_at(d, off, &die, e) != 0)
		return -1;
	if (die_tag(d, die, &tag, e) != 0 || die_name(d, die, &name, e) != 0)
		goto out;
	switch (tag) {
	case DW_TAG_structure_type: case DW_TAG_class_type: kw = "struct "; break;
	case DW_TAG_union_type: kw = "union "; break;
	case DW_TAG_enumeration_type: kw = "enum "; break;
	default: kw = ""; break;
	}
	switch (tag) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		kvs_tn_prepend(decl, n, tag == DW_TAG_pointer_type ? "*" : "&");
		if (die_ref(d, die, DW_AT_type, &next, e) != 0)
			goto out;
		ret = tname(d, next, decl, n, depth + 1, e);
		break;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type: {
		const char *q = tag == DW_TAG_const_type ? "const" :
		    tag == DW_TAG_volatile_type ? "volatile" :
		    tag == DW_TAG_restrict_type ? "restrict" : "_Atomic";
		Dwarf_Die t;
		Dwarf_Half ttag = 0;
		if (die_ref(d, die, DW_AT_type, &next, e) != 0)
			goto out;
		if (next != 0) {
			if (die_at(d, next, &t, e) != 0)
				goto out;
			if (die_tag(d, t, &ttag, e) != 0) {
				dwarf_dealloc_die(t);
				goto out;
			}
			dwarf_dealloc_die(t);
		}
		if (ttag == DW_TAG_pointer_type) {
			/* char *const p: the qualifier binds to the declarator */
			snprintf(head, sizeof(head), "%s%s", q,
			    decl[0] != '\0' ? " " : "");
			kvs_tn_prepend(decl, n, head);
			ret = tname(d, next, decl, n, depth + 1, e);
		} else {
			ret = tname(d, next, decl, n, depth + 1, e);
			snprintf(head, sizeof(head), "%s ", q);
			if (ret == 0)
				kvs_tn_prepend(decl, n, head);
		}
		break;
	}
	case DW_TAG_array_type: {
		Dwarf_Die c = NULL, s = NULL;
		Dwarf_Error err = NULL;
		char dims[TNAME_MAX] = "";
		int rc;
		if (decl[0] == '*' || decl[0] == '&') {
			kvs_tn_prepend(decl, n, "(");
			if (strlen(decl) + 2 < n)
				strcat(decl, ")");
		}
		rc = dwarf_child(die, &c, &err);
		if (rc == DW_DLV_ERROR) {
			dw_fail(d, e, err, "reading array dimensions", off);
			goto out;
		}
		while (rc == DW_DLV_OK) {
			Dwarf_Half dtag;
			uint64_t cnt;
			bool known;
			size_t l = strlen(dims);
			if (die_tag(d, c, &dtag, e) != 0 || (is_dim(dtag) &&
			    dim_count(d, c, &cnt, &known, e) != 0)) {
				dwarf_dealloc_die(c);
				goto out;
			}
			if (is_dim(dtag) && known)
				snprintf(dims + l, sizeof(dims) - l, "[%llu]",
				    (unsigned long long)cnt);
			else if (is_dim(dtag))
				snprintf(dims + l, sizeof(dims) - l, "[]");
			rc = next_sibling(d, c, &s, &err);
			dwarf_dealloc_die(c);
			if (rc == DW_DLV_ERROR) {
				dw_fail(d, e, err, "reading array dimensions", off);
				goto out;
			}
			c = rc == DW_DLV_OK ? s : NULL;
		}
		if (strlen(decl) + strlen(dims) < n)
			strcat(decl, dims);
		if (die_ref(d, die, DW_AT_type, &next, e) != 0)
			goto out;
		ret = tname(d, next, decl, n, depth + 1, e);
		break;
	}
	case DW_TAG_subroutine_type: {
		Dwarf_Die c = NULL, s = NULL;
		Dwarf_Error err = NULL;
		char params[TNAME_MAX] = "(", p[TNAME_MAX];
		int rc, np = 0;
		if (decl[0] == '*') {
			kvs_tn_prepend(decl, n, "(");
			if (strlen(decl) + 2 < n)
				strcat(decl, ")");
		}
		rc = dwarf_child(die, &c, &err);
		if (rc == DW_DLV_ERROR) {
			dw_fail(d, e, err, "reading function parameters", off);
			goto out;
		}
		while (rc == DW_DLV_OK) {
			Dwarf_Half ptag;
			Dwarf_Off pt;
			p[0] = '\0';
			if (die_tag(d, c, &ptag, e) != 0) {
				dwarf_dealloc_die(c);
				goto out;
			}
			if (ptag == DW_TAG_formal_parameter) {
				if (die_ref(d, c, DW_AT_type, &pt, e) != 0 ||
				    tname(d, pt, p, sizeof(p), depth + 1, e) != 0) {
					dwarf_dealloc_die(c);
					goto out;
				}
			} else if (ptag == DW_TAG_unspecified_parameters)
				snprintf(p, sizeof(p), "...");
			if (p[0] != '\0') {
				size_t l = strlen(params);
				snprintf(params + l, sizeof(params) - l, "%s%s",
				    np++ ? ", " : "", p);
			}
			rc = next_sibling(d, c, &s, &err);
			dwarf_dealloc_die(c);
			if (rc == DW_DLV_ERROR) {
				dw_fail(d, e, err, "reading function parameters", off);
				goto out;
			}
			c = rc == DW_DLV_OK ? s : NULL;
		}
		if (np == 0) {
			bool proto = false;
			if (die_has(d, die, DW_AT_prototyped, &proto, e) != 0)
				goto out;
			if (proto)
				strcat(params, "void");
		}
		strcat(params, ")");
		if (strlen(decl) + strlen(params) < n)
			strcat(decl, params);
		if (die_ref(d, die, DW_AT_type, &next, e) != 0)
			goto out;
		ret = tname(d, next, decl, n, depth + 1, e);
		break;
	}
	default:
		snprintf(head, sizeof(head), "%s%s%s", kw,
		    name != NULL ? name : "<anonymous>", decl[0] != '\0' ? " " : "");
		kvs_tn_prepend(decl, n, head);
		ret = 0;
		break;
	}
out:
	dwarf_dealloc_die(die);
	return ret;
}

/* Fill ti (all but offset and bitfield fields) for the type at off. */
static int
describe(struct kvs_dwarf *d, Dwarf_Off off, struct kvs_typeinfo *ti,
    Dwarf_Off *peeled, Dwarf_Half *ptag, struct kvs_error *e)
{
	char buf[TNAME_MAX] = "";
	struct shape sh;
	Dwarf_Off p;
	Dwarf_Half tag;

	if (peel(d, off, &p, &tag, e) != 0 || shape_of(d, p, tag, &sh, 0, e) != 0)
		return -1;
	ti->size = sh.size;
	ti->kind = sh.kind;
	ti->count = 0;
	ti->elem_size = 0;
	ti->elem_kind = KVS_KIND_OTHER;
	if (sh.kind == KVS_KIND_ARRAY) {
		ti->count = sh.count;
		if (type_size(d, sh.elem, &ti->elem_size, &ti->elem_kind, 1, e) != 0)
			return -1;
	} else if (sh.kind == KVS_KIND_POINTER) {
		if (type_size(d, sh.elem, &ti->elem_size, &ti->elem_kind, 1, e) != 0)
			return -1;
		if (ti->elem_kind == KVS_KIND_VOID || ti->elem_kind == KVS_KIND_FUNCTION)
			ti->elem_size = 0;
	}
	if (tname(d, off, buf, sizeof(buf), 0, e) != 0)
		return -1;
	if ((ti->type_name = intern(d, buf)) == NULL)
		return nomem(e);
	if (peeled != NULL)
		*peeled = p;
	if (ptag != NULL)
		*ptag = tag;
	return 0;
}

/* ------------------------------------------------------- name lookup */

/*
 * "struct x" / "union x" / "enum x", or a bare name tried as typedef, base
 * type, struct, union, enum.  Returns 1 found (*off, *decl), 0 not found.
 */
static int
lookup_type(struct kvs_dwarf *d, const char *type, Dwarf_Off *off, bool *decl)
{
	static const struct { const char *kw; enum ix_kind k; } pre[] = {
		{ "struct ", IX_STRUCT }, { "union ", IX_UNION }, { "enum ", IX_ENUM },
		{ "class ", IX_STRUCT },
	};
	static const enum ix_kind bare[] = {
		IX_TYPEDEF, IX_BASE, IX_STRUCT, IX_UNION, IX_ENUM,
	};
	struct hent *he = NULL;
	size_t i;

	while (*type == ' ')
		type++;
	for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t l = strlen(pre[i].kw);
		if (strncmp(type, pre[i].kw, l) == 0) {
			const char *nm = type + l;
			while (*nm == ' ')
				nm++;
			he = hm_find(&d->ix[pre[i].k], nm);
			goto done;
		}
	}
	for (i = 0; i < sizeof(bare) / sizeof(bare[0]) && he == NULL; i++)
		he = hm_find(&d->ix[bare[i]], type);
done:
	if (he == NULL)
		return 0;
	*off = he->off;
	*decl = he->decl;
	return 1;
}

/* --------------------------------------------------------------- cache */

#define KEYBUF 512

/* Key "<c>\x1f<a>\x1f<b>" in buf, or malloc'ed if long (*heap set). */
static char *
cache_key(char *buf, char c, const char *a, const char *b, bool *heap)
{
	size_t n = 4 + strlen(a) + (b ? strlen(b) : 0);
	char *k = buf;

	*heap = false;
	if (n > KEYBUF) {
		k = malloc(n);
		if (k == NULL)
			return NULL;
		*heap = true;
	}
	{
		size_t la = strlen(a), lb = b ? strlen(b) : 0;
		k[0] = c;
		k[1] = '\x1f';
		memcpy(k + 2, a, la);
		k[2 + la] = '\x1f';
		if (lb != 0)
			memcpy(k + 3 + la, b, lb);
		k[3 + la + lb] = '\0';
	}
	return k;
}

/* A cached answer: 1 (ti filled or error set), 0 miss. */
static int
cache_get(struct kvs_dwarf *d, const char *key, struct kvs_typeinfo *ti,
    int *rc, struct kvs_error *e)
{
	struct hent *he = hm_find(&d->cache, key);
	struct centry *ce;

	if (he == NULL)
		return 0;
	ce = he->val;
	if (ce->status == KVS_OK) {
		*ti = ce->ti;
		*rc = 0;
	} else
		*rc = kerr_set(e, ce->status, "%s", ce->msg);
	return 1;
}

/* Remember a success or a KVS_E_NOTYPE; other errors are not cached.  A
 * failure to cache is not an error. */
static void
cache_put(struct kvs_dwarf *d, const char *key, int rc,
    const struct kvs_typeinfo *ti, const struct kvs_error *e)
{
	struct centry *ce;
	struct hent *he;

	if (rc != 0 && e->status != KVS_E_NOTYPE)
		return;
	ce = calloc(1, sizeof(*ce));
	if (ce == NULL)
		return;
	if (rc == 0) {
		ce->status = KVS_OK;
		ce->ti = *ti;
	} else {
		ce->status = e->status;
		ce->msg = intern(d, e->msg);
		if (ce->msg == NULL) {
			free(ce);
			return;
		}
	}
	he = hm_add(&d->cache, key);
	if (he == NULL) {
		free(ce);
		return;
	}
	he->val = ce;
}

/* ------------------------------------------------------------- queries */

/* The defined type DIE for a type name, or -1 with KVS_E_NOTYPE. */
static int
find_type(struct kvs_dwarf *d, const char *type, Dwarf_Off *off,
    struct kvs_error *e)
{
	bool decl;

	if (ensure_index(d, e) != 0)
		return -1;
	if (!lookup_type(d, type, off, &decl))
		return not_found(d, e, "type %s not found in DWARF", type);
	if (decl)
		return not_found(d, e, "type %s is declared but never defined in "
		    "DWARF", type);
	return 0;
}

static int
type_uncached(struct kvs_dwarf *d, const char *type, struct kvs_typeinfo *ti,
    struct kvs_error *e)
{
	Dwarf_Off off;

	memset(ti, 0, sizeof(*ti));
	if (find_type(d, type, &off, e) != 0)
		return -1;
	if (describe(d, off, ti, NULL, NULL, e) != 0)
		return kerr_push(e, "type %s", type);
	return 0;
}

int
kvs_dwarf_type(struct kvs_dwarf *d, const char *type, struct kvs_typeinfo *ti,
    struct kvs_error *e)
{
	char kb[KEYBUF], *key;
	bool heap;
	int rc;

	if (type == NULL)
		return kerr_set(e, KVS_E_INVAL, "no type name");
	key = cache_key(kb, 'T', type, NULL, &heap);
	if (key == NULL)
		return nomem(e);
	if (!cache_get(d, key, ti, &rc, e)) {
		rc = type_uncached(d, type, ti, e);
		cache_put(d, key, rc, ti, e);
	}
	if (heap)
		free(key);
	return rc;
}

/*
 * Find member `name` (len bytes) among the children of the struct/union at
 * sou, also inside anonymous struct/union members.  On success (1) *moff
 * is the member DIE, *mloc its own DW_AT_data_member_location, and *base
 * has the offsets of the anonymous members crossed added (so *base is the
 * offset of the struct that directly holds it).  0: not found.
 */
static int
find_member(struct kvs_dwarf *d, Dwarf_Off sou, const char *name, size_t len,
    uint64_t *base, uint64_t *mloc, Dwarf_Off *moff, int depth,
    struct kvs_error *e)
{
	Dwarf_Die die, c = NULL, s = NULL;
	Dwarf_Error err = NULL;
	Dwarf_Off anon[16];
	uint64_t anon_loc[16];
	int nanon = 0, rc, found = 0, i;

	if (depth > MAX_TYPE_DEPTH)
		return kerr_set(e, KVS_E_DWARF, "anonymous members nest too deep");
	if (die_at(d, sou, &die, e) != 0)
		return -1;
	rc = dwarf_child(die, &c, &err);
	if (rc == DW_DLV_ERROR) {
		dw_fail(d, e, err, "reading members", sou);
		found = -1;
	}
	while (rc == DW_DLV_OK) {
		Dwarf_Half tag;
		const char *mn;
		uint64_t loc;

		if (die_tag(d, c, &tag, e) != 0 || die_name(d, c, &mn, e) != 0) {
			found = -1;
			break;
		}
		if (tag == DW_TAG_member && mn != NULL && strlen(mn) == len &&
		    memcmp(mn, name, len) == 0) {
			if (member_location(d, c, &loc, e) != 0) {
				found = -1;
				break;
			}
			*mloc = loc;
			*moff = die_off(d, c);
			found = 1;
			break;
		}
		if (tag == DW_TAG_member && mn == NULL && nanon < 16) {
			Dwarf_Off t, p;
			Dwarf_Half ptag;
			if (die_ref(d, c, DW_AT_type, &t, e) != 0 ||
			    peel(d, t, &p, &ptag, e) != 0 ||
			    member_location(d, c, &loc, e) != 0) {
				found = -1;
				break;
			}
			if (ptag == DW_TAG_structure_type || ptag == DW_TAG_union_type ||
			    ptag == DW_TAG_class_type) {
				anon[nanon] = p;
				anon_loc[nanon++] = loc;
			}
		}
		rc = next_sibling(d, c, &s, &err);
		if (rc == DW_DLV_ERROR) {
			dw_fail(d, e, err, "reading members", sou);
			found = -1;
			break;
		}
		dwarf_dealloc_die(c);
		c = rc == DW_DLV_OK ? s : NULL;
	}
	if (c != NULL)
		dwarf_dealloc_die(c);
	dwarf_dealloc_die(die);
	/* Not a direct member: look inside the anonymous ones. */
	for (i = 0; found == 0 && i < nanon; i++) {
		uint64_t a = *base + anon_loc[i];
		found = find_member(d, anon[i], name, len, &a, mloc, moff, depth + 1, e);
		if (found == 1)
			*base = a;
	}
	return found;
}

/* Bitfield position of member m; total bit offset from the member's
 * enclosing struct start in *bitpos, *bits = 0 if not a bitfield. */
static int
bitfield(struct kvs_dwarf *d, Dwarf_Die m, uint64_t loc, uint64_t *bitpos,
    unsigned *bits, struct kvs_error *e)
{
	uint64_t bsz, dbo, storage;
	int64_t bo;
	bool has, hasdbo, hasbo, hasst;

	*bits = 0;
	*bitpos = loc * 8;
	if (die_uconst(d, m, DW_AT_bit_size, &bsz, &has, e) != 0)
		return -1;
	if (!has)
		return 0;
	*bits = (unsigned)bsz;
	if (die_uconst(d, m, DW_AT_data_bit_offset, &dbo, &hasdbo, e) != 0)
		return -1;
	if (hasdbo) {
		/* DWARF 4/5: from the start of the containing struct. */
		*bitpos = dbo;
		return 0;
	}
	if (die_sconst(d, m, DW_AT_bit_offset, &bo, &hasbo, e) != 0)
		return -1;
	if (!hasbo)
		return 0;
	/* DWARF 2/3: bits from the most significant bit of a storage unit of
	 * DW_AT_byte_size bytes at the member location (little-endian here). */
	if (die_uconst(d, m, DW_AT_byte_size, &storage, &hasst, e) != 0)
		return -1;
	if (!hasst) {
		Dwarf_Off t;
		kvs_kind_t k;
		if (die_ref(d, m, DW_AT_type, &t, e) != 0 ||
		    type_size(d, t, &storage, &k, 0, e) != 0)
			return -1;
	}
	*bitpos = loc * 8 + (uint64_t)((int64_t)storage * 8 - bo - (int64_t)bsz);
	return 0;
}

static int
member_uncached(struct kvs_dwarf *d, const char *type, const char *path,
    struct kvs_typeinfo *ti, struct kvs_error *e)
{
	Dwarf_Off cur, moff = 0, mtype = 0;
	Dwarf_Half tag;
	uint64_t acc = 0, base = 0, mloc = 0, bitpos;
	const char *p = path, *dot;
	Dwarf_Die m;
	unsigned bits;
	int rc;

	memset(ti, 0, sizeof(*ti));
	if (find_type(d, type, &cur, e) != 0)
		return -1;
	if (peel(d, cur, &cur, &tag, e) != 0)
		return kerr_push(e, "type %s", type);
	for (;;) {
		size_t len;

		dot = strchr(p, '.');
		len = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (len == 0)
			return kerr_set(e, KVS_E_INVAL, "bad member path \"%s\" for %s",
			    path, type);
		if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
		    tag != DW_TAG_class_type) {
			return kerr_set(e, KVS_E_NOTYPE, "%s has no member \"%s\": "
			    "%.*s is not a struct or union", type, path,
			    (int)(p - path - 1), path);
		}
		base = acc;
		rc = find_member(d, cur, p, len, &base, &mloc, &moff, 0, e);
		if (rc < 0)
			return kerr_push(e, "%s.%s", type, path);
		if (rc == 0) {
			if (p == path)
				return kerr_set(e, KVS_E_NOTYPE, "%s has no member \"%.*s\"",
				    type, (int)len, p);
			return kerr_set(e, KVS_E_NOTYPE, "%s has no member \"%s\": "
			    "no \"%.*s\" in %.*s", type, path, (int)len, p,
			    (int)(p - path - 1), path);
		}
		acc = base + mloc;
		if (die_at(d, moff, &m, e) != 0)
			return -1;
		rc = die_ref(d, m, DW_AT_type, &mtype, e);
		dwarf_dealloc_die(m);
		if (rc != 0)
			return -1;
		if (dot == NULL)
			break;
		if (peel(d, mtype, &cur, &tag, e) != 0)
			return kerr_push(e, "%s.%s", type, path);
		p = dot + 1;
	}
	if (describe(d, mtype, ti, NULL, NULL, e) != 0)
		return kerr_push(e, "%s.%s", type, path);
	if (die_at(d, moff, &m, e) != 0)
		return -1;
	rc = bitfield(d, m, mloc, &bitpos, &bits, e);
	dwarf_dealloc_die(m);
	if (rc != 0)
		return kerr_push(e, "%s.%s", type, path);
	ti->offset = acc;
	if (bits != 0) {
		/* offset: the byte holding the field's lowest bit. */
		ti->offset = base + bitpos / 8;
		ti->bit_offset = (unsigned)(bitpos % 8);
		ti->bit_size = bits;
		/* size: bytes to read (little-endian) to cover the field. */
		ti->size = (ti->bit_offset + bits + 7) / 8;
	}
	return 0;
}

int
kvs_dwarf_member(struct kvs_dwarf *d, const char *type, const char *path,
    struct kvs_typeinfo *ti, struct kvs_error *e)
{
	char kb[KEYBUF], *key;
	bool heap;
	int rc;

	if (type == NULL || path == NULL)
		return kerr_set(e, KVS_E_INVAL, "no type or member name");
	key = cache_key(kb, 'M', type, path, &heap);
	if (key == NULL)
		return nomem(e);
	if (!cache_get(d, key, ti, &rc, e)) {
		rc = member_uncached(d, type, path, ti, e);
		cache_put(d, key, rc, ti, e);
	}
	if (heap)
		free(key);
	return rc;
}

static int
variable_uncached(struct kvs_dwarf *d, const char *var, struct kvs_typeinfo *ti,
    struct kvs_error *e)
{
	struct hent *he;
	Dwarf_Off off, t = 0;
	int depth;

	memset(ti, 0, sizeof(*ti));
	if (ensure_index(d, e) != 0)
		return -1;
	he = hm_find(&d->ix[IX_VAR], var);
	if (he == NULL)
		return not_found(d, e, "variable %s not found in DWARF", var);
	/* The definition may carry only DW_AT_specification; its type is then
	 * the declaration's (a definition that completes an array has its
	 * own DW_AT_type, which wins). */
	for (off = he->off, depth = 0; off != 0 && depth < 4; depth++) {
		Dwarf_Die die;
		Dwarf_Off spec = 0;
		int rc;

		if (die_at(d, off, &die, e) != 0)
			return -1;
		rc = die_ref(d, die, DW_AT_type, &t, e);
		if (rc == 0 && t == 0) {
			rc = die_ref(d, die, DW_AT_specification, &spec, e);
			if (rc == 0 && spec == 0)
				rc = die_ref(d, die, DW_AT_abstract_origin, &spec, e);
		}
		dwarf_dealloc_die(die);
		if (rc != 0)
			return kerr_push(e, "variable %s", var);
		if (t != 0)
			break;
		off = spec;
	}
	if (t == 0)
		return kerr_set(e, KVS_E_DWARF, "variable %s has no type in DWARF", var);
	if (describe(d, t, ti, NULL, NULL, e) != 0)
		return kerr_push(e, "variable %s", var);
	return 0;
}

int
kvs_dwarf_variable(struct kvs_dwarf *d, const char *var, struct kvs_typeinfo *ti,
    struct kvs_error *e)
{
	char kb[KEYBUF], *key;
	bool heap;
	int rc;

	if (var == NULL)
		return kerr_set(e, KVS_E_INVAL, "no variable name");
	key = cache_key(kb, 'V', var, NULL, &heap);
	if (key == NULL)
		return nomem(e);
	if (!cache_get(d, key, ti, &rc, e)) {
		rc = variable_uncached(d, var, ti, e);
		cache_put(d, key, rc, ti, e);
	}
	if (heap)
		free(key);
	return rc;
}

/*
 * kvs_dwarf_members: the DW_TAG_member children of the struct/union DIE at
 * sou, which starts `base` bits from the start of the named type; an
 * anonymous struct/union member is reported, then walked one level deeper.
 * As btf.c's walk.
 */
static int
walk_members(struct kvs_dwarf *d, Dwarf_Off sou, uint64_t base, unsigned depth,
    kvs_member_cb cb, void *arg, struct kvs_error *e)
{
	Dwarf_Die die, c = NULL, s = NULL;
	Dwarf_Error err = NULL;
	int rc, ret = 0;

	if (depth > MAX_TYPE_DEPTH)
		return kerr_set(e, KVS_E_DWARF, "anonymous members nest too deep");
	if (die_at(d, sou, &die, e) != 0)
		return -1;
	rc = dwarf_child(die, &c, &err);
	if (rc == DW_DLV_ERROR)
		ret = dw_fail(d, e, err, "reading members", sou);
	while (rc == DW_DLV_OK) {
		struct kvs_member_info mi;
		struct kvs_typeinfo ti;
		Dwarf_Off t, p;
		Dwarf_Half tag, ptag;
		const char *mn;
		uint64_t loc, bitpos;
		unsigned bits;

		if (die_tag(d, c, &tag, e) != 0 || die_name(d, c, &mn, e) != 0) {
			ret = -1;
			break;
		}
		if (tag == DW_TAG_member) {
			memset(&mi, 0, sizeof(mi));
			memset(&ti, 0, sizeof(ti));
			if (die_ref(d, c, DW_AT_type, &t, e) != 0 ||
			    member_location(d, c, &loc, e) != 0 ||
			    bitfield(d, c, loc, &bitpos, &bits, e) != 0 ||
			    describe(d, t, &ti, &p, &ptag, e) != 0) {
				ret = -1;
				break;
			}
			mi.name = mn;
			mi.bit_offset = base + bitpos;
			mi.offset = mi.bit_offset / 8;
			mi.bit_size = bits;
			mi.size = ti.size;
			mi.type_name = ti.type_name;
			mi.kind = ti.kind;
			mi.depth = depth;
			if ((ret = cb(arg, &mi)) != 0)
				break;
			if (mn == NULL && (ptag == DW_TAG_structure_type ||
			    ptag == DW_TAG_union_type || ptag == DW_TAG_class_type) &&
			    (ret = walk_members(d, p, mi.bit_offset, depth + 1, cb,
			    arg, e)) != 0)
				break;
		}
		rc = next_sibling(d, c, &s, &err);
		if (rc == DW_DLV_ERROR) {
			ret = dw_fail(d, e, err, "reading members", sou);
			break;
		}
		dwarf_dealloc_die(c);
		c = rc == DW_DLV_OK ? s : NULL;
	}
	if (c != NULL)
		dwarf_dealloc_die(c);
	dwarf_dealloc_die(die);
	return ret;
}

int
kvs_dwarf_members(struct kvs_dwarf *d, const char *type, kvs_member_cb cb,
    void *arg, struct kvs_error *e)
{
	Dwarf_Off off;
	Dwarf_Half tag;
	int rc;

	if (type == NULL || cb == NULL)
		return kerr_set(e, KVS_E_INVAL, "no type name or callback");
	if (find_type(d, type, &off, e) != 0)
		return -1;
	if (peel(d, off, &off, &tag, e) != 0)
		return kerr_push(e, "type %s", type);
	if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
	    tag != DW_TAG_class_type)
		return kerr_set(e, KVS_E_INVAL, "type %s is not a struct or union",
		    type);
	rc = walk_members(d, off, 0, 0, cb, arg, e);
	if (rc == -1 && e->status != KVS_OK)
		return kerr_push(e, "members of %s", type);
	return rc;
}
