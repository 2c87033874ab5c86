/*
 * dwarf.c - struct layouts and variable types from the kernel's DWARF: the
 * handle (open, options, close), its string maps, the answer cache and
 * the kvs_dwarf_* entry points of types.h.  The work behind them is split
 * by job, with dwarf_internal.h for what the files share:
 *
 *   dwarf_index.c   the name index: its rule, libdwarf's walk, the fast
 *                   index's sections, threads and merge; name lookup
 *   dwarf_scan.c    the fast index's reader: a run of units read from the
 *                   bytes of .debug_info, on one thread
 *   dwarf_die.c     one DIE through libdwarf: tag, name, constants,
 *                   references, member locations; libdwarf's errors
 *   dwarf_layout.c  answers built from DIEs: peeling, sizes, array bounds,
 *                   member paths, bitfields, member lists
 *   dwarf_tname.c   the C spelling of a type
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
 * Every libdwarf failure is turned into struct kvs_error in these files
 * (dw_fail, dwarf_die.c), with libdwarf's own text; no Dwarf_* type leaves
 * them (dwarf_internal.h is theirs alone).
 */
#include <gelf.h>
#include <libelf.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_internal.h"

/* ------------------------------------------------------------ hash map */

/* The maps of struct hmap (dwarf_internal.h). */

struct hent *
dw_hm_find(const struct hmap *m, const char *key)
{
	uint32_t v = kvs_htab_find_str(&m->tab, key, m->ent, sizeof(*m->ent),
	    offsetof(struct hent, key));

	return v != 0 ? &m->ent[v - 1] : NULL;
}

/* Insert a key that is known to be absent.  With own_keys the key is
 * copied.  Returns the new zeroed entry, or NULL (ENOMEM; the map is
 * unchanged). */
struct hent *
dw_hm_add(struct hmap *m, const char *key)
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

void
dw_hm_free(struct hmap *m, void (*freeval)(void *))
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

/* A cached answer. */
struct centry {
	kvs_status_t status;          /* KVS_OK or KVS_E_NOTYPE */
	struct kvs_typeinfo ti;
	const char *msg;              /* interned, for KVS_E_NOTYPE */
};

int
dw_nomem(struct kvs_error *e)
{
	return kerr_errno(e, ENOMEM, "DWARF index");
}

const char *
dw_intern(struct kvs_dwarf *d, const char *s)
{
	struct hent *he = dw_hm_find(&d->strs, s);

	if (he == NULL)
		he = dw_hm_add(&d->strs, s);
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
		return dw_nomem(e);
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
		dw_hm_free(&d->ix[i], NULL);
	dw_hm_free(&d->cache, free_centry);
	dw_hm_free(&d->strs, NULL);
	free(d->index_err);
	while (d->nblk > 0)
		free(d->blk[--d->nblk]);
	free(d->blk);
	free(d->cu_die);
	(void)dwarf_finish(d->dbg, &err);
	free(d);
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
	struct hent *he = dw_hm_find(&d->cache, key);
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
		ce->msg = dw_intern(d, e->msg);
		if (ce->msg == NULL) {
			free(ce);
			return;
		}
	}
	he = dw_hm_add(&d->cache, key);
	if (he == NULL) {
		free(ce);
		return;
	}
	he->val = ce;
}

/* ------------------------------------------------------------- queries */

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
		return dw_nomem(e);
	if (!cache_get(d, key, ti, &rc, e)) {
		rc = dw_type_uncached(d, type, ti, e);
		cache_put(d, key, rc, ti, e);
	}
	if (heap)
		free(key);
	return rc;
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
		return dw_nomem(e);
	if (!cache_get(d, key, ti, &rc, e)) {
		rc = dw_member_uncached(d, type, path, ti, e);
		cache_put(d, key, rc, ti, e);
	}
	if (heap)
		free(key);
	return rc;
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
		return dw_nomem(e);
	if (!cache_get(d, key, ti, &rc, e)) {
		rc = dw_variable_uncached(d, var, ti, e);
		cache_put(d, key, rc, ti, e);
	}
	if (heap)
		free(key);
	return rc;
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
	if (dw_find_type(d, type, &off, e) != 0)
		return -1;
	if (dw_peel(d, off, &off, &tag, e) != 0)
		return kerr_push(e, "type %s", type);
	if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
	    tag != DW_TAG_class_type)
		return kerr_set(e, KVS_E_INVAL, "type %s is not a struct or union",
		    type);
	rc = dw_walk_members(d, off, 0, 0, cb, arg, e);
	if (rc == -1 && e->status != KVS_OK)
		return kerr_push(e, "members of %s", type);
	return rc;
}

int
kvs_dwarf_version(struct kvs_dwarf *d)
{
	if (d == NULL)
		return 0;
	if (d->version == 0 && !d->indexed)
		dw_walk_cus(d, false);
	return d->version;
}

bool
kvs_dwarf_fast_indexed(const struct kvs_dwarf *d)
{
	return d != NULL && d->fast;
}

/* ------------------------------------------------ peeling, enumerators */

/* The C spelling of the type at off (0: "void"), interned. */
static const char *
spell(struct kvs_dwarf *d, Dwarf_Off off, struct kvs_error *e)
{
	char buf[TNAME_MAX] = "";
	const char *s;

	if (dw_tname(d, off, buf, sizeof(buf), 0, e) != 0)
		return NULL;
	if ((s = dw_intern(d, buf)) == NULL)
		dw_nomem(e);
	return s;
}

int
kvs_dwarf_peel(struct kvs_dwarf *d, const char *type, struct kvs_typepeel *p,
    struct kvs_error *e)
{
	Dwarf_Off off, pe, t;
	Dwarf_Half tag = 0, ptag = 0;
	Dwarf_Die die;
	uint64_t enc = 0;
	bool has = false;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (type == NULL)
		return kerr_set(e, KVS_E_INVAL, "no type name");
	if (dw_find_type(d, type, &off, e) != 0)
		return -1;
	if (dw_die_at(d, off, &die, e) != 0)
		return kerr_push(e, "type %s", type);
	if (dw_die_tag(d, die, &tag, e) != 0 ||
	    (tag == DW_TAG_typedef && dw_die_ref(d, die, DW_AT_type, &t, e) != 0))
		rc = -1;
	dwarf_dealloc_die(die);
	if (rc != 0 || (tag == DW_TAG_typedef && (p->target = spell(d, t, e)) == NULL) ||
	    dw_peel(d, off, &pe, &ptag, e) != 0 || (p->name = spell(d, pe, e)) == NULL)
		return kerr_push(e, "type %s", type);
	if (pe == 0 || (ptag != DW_TAG_base_type && ptag != DW_TAG_enumeration_type))
		return 0;
	if (dw_die_at(d, pe, &die, e) != 0)
		return kerr_push(e, "type %s", type);
	if (ptag == DW_TAG_base_type) {
		if (dw_die_uconst(d, die, DW_AT_encoding, &enc, &has, e) != 0)
			rc = -1;
		else if (enc == DW_ATE_boolean)
			p->encoding = KVS_ENC_BOOL;
		else if (enc == DW_ATE_float || enc == DW_ATE_complex_float)
			p->encoding = KVS_ENC_FLOAT;
		else if (enc == DW_ATE_signed || enc == DW_ATE_signed_char)
			p->encoding = KVS_ENC_SIGNED;
		else
			p->encoding = KVS_ENC_UNSIGNED;
	} else {
		/* An enum reads as its underlying type (DWARF 3+: DW_AT_type;
		 * GCC picks unsigned int when no value is negative); without
		 * it (DWARF 2), unsigned. */
		Dwarf_Off u = 0;
		if (dw_die_ref(d, die, DW_AT_type, &u, e) != 0)
			rc = -1;
		else if (u != 0) {
			struct kvs_typepeel up;
			const char *un = spell(d, u, e);
			dwarf_dealloc_die(die);
			if (un == NULL || kvs_dwarf_peel(d, un, &up, e) != 0)
				return kerr_push(e, "type %s", type);
			p->encoding = up.encoding;
			return 0;
		} else
			p->encoding = KVS_ENC_UNSIGNED;
	}
	dwarf_dealloc_die(die);
	if (rc != 0)
		return kerr_push(e, "type %s", type);
	return 0;
}

int
kvs_dwarf_enumerators(struct kvs_dwarf *d, const char *type, kvs_enum_cb cb,
    void *arg, struct kvs_error *e)
{
	Dwarf_Die die, c = NULL, s = NULL;
	Dwarf_Error err = NULL;
	Dwarf_Off off;
	Dwarf_Half tag;
	int rc, ret = 0;

	if (type == NULL || cb == NULL)
		return kerr_set(e, KVS_E_INVAL, "no type name or callback");
	if (dw_find_type(d, type, &off, e) != 0)
		return -1;
	if (dw_peel(d, off, &off, &tag, e) != 0)
		return kerr_push(e, "type %s", type);
	if (off == 0 || tag != DW_TAG_enumeration_type)
		return kerr_set(e, KVS_E_INVAL, "type %s is not an enum", type);
	if (dw_die_at(d, off, &die, e) != 0)
		return kerr_push(e, "type %s", type);
	rc = dwarf_child(die, &c, &err);
	if (rc == DW_DLV_ERROR)
		ret = dw_fail(d, e, err, "reading enumerators", off);
	while (rc == DW_DLV_OK) {
		const char *name;
		int64_t v = 0;
		bool has = false;

		if (dw_die_tag(d, c, &tag, e) != 0 || dw_die_name(d, c, &name, e) != 0) {
			ret = -1;
			break;
		}
		if (tag == DW_TAG_enumerator) {
			if (dw_die_sconst(d, c, DW_AT_const_value, &v, &has, e) != 0) {
				ret = -1;
				break;
			}
			if ((ret = cb(arg, name != NULL ? name : "", v)) != 0)
				break;
		}
		rc = dw_next_sibling(d, c, &s, &err);
		if (rc == DW_DLV_ERROR) {
			ret = dw_fail(d, e, err, "reading enumerators", off);
			break;
		}
		dwarf_dealloc_die(c);
		c = rc == DW_DLV_OK ? s : NULL;
	}
	if (c != NULL)
		dwarf_dealloc_die(c);
	dwarf_dealloc_die(die);
	if (ret == -1 && e->status != KVS_OK)
		return kerr_push(e, "enumerators of %s", type);
	return ret;
}
