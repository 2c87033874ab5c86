/*
 * dwarf_layout.c - answers built from DIEs: a type peeled of typedefs and
 * qualifiers (a declaration replaced by its definition from the index),
 * its kind and size, array bounds and counts, kvs_typeinfo for a type, a
 * member path (through anonymous members, bitfields included) or a
 * variable, and the walk over a struct's members.  The DIEs are read by
 * dwarf_die.c, a type's spelling is dwarf_tname.c's, and caching the
 * answers is dwarf.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "dwarf_internal.h"

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
int
dw_peel(struct kvs_dwarf *d, Dwarf_Off off, Dwarf_Off *out, Dwarf_Half *tagp,
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
		if (dw_die_at(d, off, &die, e) != 0)
			return -1;
		if (dw_die_tag(d, die, &tag, e) != 0)
			goto fail;
		if (is_qualifier(tag)) {
			if (dw_die_ref(d, die, DW_AT_type, &next, e) != 0)
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
		if (dw_die_has(d, die, DW_AT_declaration, &decl, e) != 0)
			goto fail;
		if (decl) {
			struct hent *he;
			if (dw_die_name(d, die, &name, e) != 0)
				goto fail;
			if (name != NULL && dw_ensure_index(d, e) == 0 &&
			    (he = dw_hm_find(&d->ix[k], name)) != NULL && !he->decl)
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
		return dw_fail(d, e, err, "reading address size", dw_die_off(d, die));
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
		    dw_die_off(d, dim));
	if (dw_die_at(d, cuoff, &cu, e) != 0)
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
 * The one place that reads bounds: array_count and dw_tname both use it.
 */
int
dw_dim_count(struct kvs_dwarf *d, Dwarf_Die dim, uint64_t *count, bool *known,
    struct kvs_error *e)
{
	int64_t ub, lb;
	bool has;

	if (dw_die_uconst(d, dim, DW_AT_count, count, known, e) != 0)
		return -1;
	if (*known)
		return 0;
	if (dw_die_sconst(d, dim, DW_AT_upper_bound, &ub, &has, e) != 0)
		return -1;
	if (!has)
		return 0; /* char x[], or a bound computed at run time */
	if (dw_die_has(d, dim, DW_AT_lower_bound, &has, e) != 0)
		return -1;
	if (has) {
		if (dw_die_sconst(d, dim, DW_AT_lower_bound, &lb, &has, e) != 0)
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
		return dw_fail(d, e, err, "reading array dimensions", dw_die_off(d, arr));
	while (rc == DW_DLV_OK) {
		Dwarf_Half tag;
		if (dw_die_tag(d, c, &tag, e) != 0)
			goto fail;
		if (is_dim(tag)) {
			uint64_t cnt;
			bool known;
			if (dw_dim_count(d, c, &cnt, &known, e) != 0)
				goto fail;
			if (!known)
				*flex = true;
			else
				n *= cnt;
		}
		rc = dw_next_sibling(d, c, &s, &err);
		if (rc == DW_DLV_ERROR) {
			dw_fail(d, e, err, "reading array dimensions", dw_die_off(d, c));
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
	if (dw_die_at(d, off, &die, e) != 0)
		return -1;
	switch (sh->kind) {
	case KVS_KIND_POINTER:
		if (dw_die_uconst(d, die, DW_AT_byte_size, &sh->size, &has, e) != 0)
			goto out;
		if (!has && addr_size(d, die, &sh->size, e) != 0)
			goto out;
		if (dw_die_ref(d, die, DW_AT_type, &sh->elem, e) != 0)
			goto out;
		break;
	case KVS_KIND_ARRAY: {
		uint64_t esz;
		kvs_kind_t ek;
		if (dw_die_ref(d, die, DW_AT_type, &sh->elem, e) != 0 ||
		    array_count(d, die, &sh->count, &sh->flexible, e) != 0)
			goto out;
		if (type_size(d, sh->elem, &esz, &ek, depth + 1, e) != 0)
			goto out;
		if (dw_die_uconst(d, die, DW_AT_byte_size, &sh->size, &has, e) != 0)
			goto out;
		if (!has)
			sh->size = sh->count * esz;
		break;
	}
	case KVS_KIND_FUNCTION:
	case KVS_KIND_VOID:
		break;
	default:
		if (dw_die_uconst(d, die, DW_AT_byte_size, &sh->size, &has, e) != 0)
			goto out;
		if (!has && sh->kind == KVS_KIND_ENUM) {
			/* DWARF 5 allows the size to come from DW_AT_type. */
			Dwarf_Off ut;
			kvs_kind_t uk;
			if (dw_die_ref(d, die, DW_AT_type, &ut, e) != 0)
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

	if (dw_peel(d, off, &p, &tag, e) != 0 ||
	    shape_of(d, p, tag, &sh, depth, e) != 0)
		return -1;
	*size = sh.size;
	*kind = sh.kind;
	return 0;
}

/* Fill ti (all but offset and bitfield fields) for the type at off. */
int
dw_describe(struct kvs_dwarf *d, Dwarf_Off off, struct kvs_typeinfo *ti,
    Dwarf_Off *peeled, Dwarf_Half *ptag, struct kvs_error *e)
{
	char buf[TNAME_MAX] = "";
	struct shape sh;
	Dwarf_Off p;
	Dwarf_Half tag;

	if (dw_peel(d, off, &p, &tag, e) != 0 || shape_of(d, p, tag, &sh, 0, e) != 0)
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
	if (dw_tname(d, off, buf, sizeof(buf), 0, e) != 0)
		return -1;
	if ((ti->type_name = dw_intern(d, buf)) == NULL)
		return dw_nomem(e);
	if (peeled != NULL)
		*peeled = p;
	if (ptag != NULL)
		*ptag = tag;
	return 0;
}

/* ------------------------------------------------------------- queries */

int
dw_type_uncached(struct kvs_dwarf *d, const char *type, struct kvs_typeinfo *ti,
    struct kvs_error *e)
{
	Dwarf_Off off;

	memset(ti, 0, sizeof(*ti));
	if (dw_find_type(d, type, &off, e) != 0)
		return -1;
	if (dw_describe(d, off, ti, NULL, NULL, e) != 0)
		return kerr_push(e, "type %s", type);
	return 0;
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
	if (dw_die_at(d, sou, &die, e) != 0)
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

		if (dw_die_tag(d, c, &tag, e) != 0 || dw_die_name(d, c, &mn, e) != 0) {
			found = -1;
			break;
		}
		if (tag == DW_TAG_member && mn != NULL && strlen(mn) == len &&
		    memcmp(mn, name, len) == 0) {
			if (dw_member_location(d, c, &loc, e) != 0) {
				found = -1;
				break;
			}
			*mloc = loc;
			*moff = dw_die_off(d, c);
			found = 1;
			break;
		}
		if (tag == DW_TAG_member && mn == NULL && nanon < 16) {
			Dwarf_Off t, p;
			Dwarf_Half ptag;
			if (dw_die_ref(d, c, DW_AT_type, &t, e) != 0 ||
			    dw_peel(d, t, &p, &ptag, e) != 0 ||
			    dw_member_location(d, c, &loc, e) != 0) {
				found = -1;
				break;
			}
			if (ptag == DW_TAG_structure_type || ptag == DW_TAG_union_type ||
			    ptag == DW_TAG_class_type) {
				anon[nanon] = p;
				anon_loc[nanon++] = loc;
			}
		}
		rc = dw_next_sibling(d, c, &s, &err);
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
	if (dw_die_uconst(d, m, DW_AT_bit_size, &bsz, &has, e) != 0)
		return -1;
	if (!has)
		return 0;
	*bits = (unsigned)bsz;
	if (dw_die_uconst(d, m, DW_AT_data_bit_offset, &dbo, &hasdbo, e) != 0)
		return -1;
	if (hasdbo) {
		/* DWARF 4/5: from the start of the containing struct. */
		*bitpos = dbo;
		return 0;
	}
	if (dw_die_sconst(d, m, DW_AT_bit_offset, &bo, &hasbo, e) != 0)
		return -1;
	if (!hasbo)
		return 0;
	/* DWARF 2/3: bits from the most significant bit of a storage unit of
	 * DW_AT_byte_size bytes at the member location (little-endian here). */
	if (dw_die_uconst(d, m, DW_AT_byte_size, &storage, &hasst, e) != 0)
		return -1;
	if (!hasst) {
		Dwarf_Off t;
		kvs_kind_t k;
		if (dw_die_ref(d, m, DW_AT_type, &t, e) != 0 ||
		    type_size(d, t, &storage, &k, 0, e) != 0)
			return -1;
	}
	*bitpos = loc * 8 + (uint64_t)((int64_t)storage * 8 - bo - (int64_t)bsz);
	return 0;
}

int
dw_member_uncached(struct kvs_dwarf *d, const char *type, const char *path,
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
	if (dw_find_type(d, type, &cur, e) != 0)
		return -1;
	if (dw_peel(d, cur, &cur, &tag, e) != 0)
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
		if (dw_die_at(d, moff, &m, e) != 0)
			return -1;
		rc = dw_die_ref(d, m, DW_AT_type, &mtype, e);
		dwarf_dealloc_die(m);
		if (rc != 0)
			return -1;
		if (dot == NULL)
			break;
		if (dw_peel(d, mtype, &cur, &tag, e) != 0)
			return kerr_push(e, "%s.%s", type, path);
		p = dot + 1;
	}
	if (dw_describe(d, mtype, ti, NULL, NULL, e) != 0)
		return kerr_push(e, "%s.%s", type, path);
	if (dw_die_at(d, moff, &m, e) != 0)
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
dw_variable_uncached(struct kvs_dwarf *d, const char *var, struct kvs_typeinfo *ti,
    struct kvs_error *e)
{
	struct hent *he;
	Dwarf_Off off, t = 0;
	int depth;

	memset(ti, 0, sizeof(*ti));
	if (dw_ensure_index(d, e) != 0)
		return -1;
	he = dw_hm_find(&d->ix[IX_VAR], var);
	if (he == NULL)
		return dw_not_found(d, e, "variable %s not found in DWARF", var);
	/* The definition may carry only DW_AT_specification; its type is then
	 * the declaration's (a definition that completes an array has its
	 * own DW_AT_type, which wins). */
	for (off = he->off, depth = 0; off != 0 && depth < 4; depth++) {
		Dwarf_Die die;
		Dwarf_Off spec = 0;
		int rc;

		if (dw_die_at(d, off, &die, e) != 0)
			return -1;
		rc = dw_die_ref(d, die, DW_AT_type, &t, e);
		if (rc == 0 && t == 0) {
			rc = dw_die_ref(d, die, DW_AT_specification, &spec, e);
			if (rc == 0 && spec == 0)
				rc = dw_die_ref(d, die, DW_AT_abstract_origin, &spec, e);
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
	if (dw_describe(d, t, ti, NULL, NULL, e) != 0)
		return kerr_push(e, "variable %s", var);
	return 0;
}

/*
 * kvs_dwarf_members: the DW_TAG_member children of the struct/union DIE at
 * sou, which starts `base` bits from the start of the named type; an
 * anonymous struct/union member is reported, then walked one level deeper.
 * As btf.c's walk.
 */
int
dw_walk_members(struct kvs_dwarf *d, Dwarf_Off sou, uint64_t base, unsigned depth,
    kvs_member_cb cb, void *arg, struct kvs_error *e)
{
	Dwarf_Die die, c = NULL, s = NULL;
	Dwarf_Error err = NULL;
	int rc, ret = 0;

	if (depth > MAX_TYPE_DEPTH)
		return kerr_set(e, KVS_E_DWARF, "anonymous members nest too deep");
	if (dw_die_at(d, sou, &die, e) != 0)
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

		if (dw_die_tag(d, c, &tag, e) != 0 || dw_die_name(d, c, &mn, e) != 0) {
			ret = -1;
			break;
		}
		if (tag == DW_TAG_member) {
			memset(&mi, 0, sizeof(mi));
			memset(&ti, 0, sizeof(ti));
			if (dw_die_ref(d, c, DW_AT_type, &t, e) != 0 ||
			    dw_member_location(d, c, &loc, e) != 0 ||
			    bitfield(d, c, loc, &bitpos, &bits, e) != 0 ||
			    dw_describe(d, t, &ti, &p, &ptag, e) != 0) {
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
			    (ret = dw_walk_members(d, p, mi.bit_offset, depth + 1, cb,
			    arg, e)) != 0)
				break;
		}
		rc = dw_next_sibling(d, c, &s, &err);
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
