/*
 * dwarf_scan.c - the fast index's reader (see dwarf_index.c): one thread's
 * run of units read straight from the bytes of .debug_info, each unit's
 * abbreviations decoded once, every top-level DIE's name, declaration flag,
 * sibling and specification read form by form, and the names put in the
 * thread's own maps (dw_fx_run).  Also the paging of .debug_info: pages mapped
 * ahead of the reader and dropped behind it (dw_fx_drop, which ctx_warm uses
 * too).  Setting up the threads and merging their maps is dwarf_index.c's.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dwarf_internal.h"

struct fx_abbrev {
	uint16_t tag;
	bool children;
	uint32_t first, nattr;        /* into fx_cu.attrs */
};

struct fx_attr {
	uint16_t at, form;
	int64_t implicit;
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
	struct hent *he = dw_hm_find(&t->ix[k], name);

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
	if ((he = dw_hm_add(&t->ix[k], name)) == NULL)
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
void
dw_fx_drop(const struct fsec *s, uint64_t from, uint64_t to)
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

void *
dw_fx_run(void *arg)
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
			dw_fx_drop(&sh->info, dropped, sh->cu[i + 1]);
			dropped = sh->cu[i + 1];
		}
	}
	if (sh->drop)
		dw_fx_drop(&sh->info, dropped, sh->cu[i]);
	return NULL;
}
