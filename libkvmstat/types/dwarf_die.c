/*
 * dwarf_die.c - one DIE read through libdwarf: find it by offset (handing
 * libdwarf the units step by step when the fast index knows them:
 * ctx_warm), its offset, next sibling, tag, name, flags, constants and
 * references, and a member's location (constant or DWARF 2 expression).
 * libdwarf's errors become struct kvs_error here (dw_fail).  What the
 * answers mean is dwarf_layout.c's; which DIE to read, the index's.
 */
#include <stdio.h>

#include "dwarf_internal.h"

/* ------------------------------------------------------- DIE primitives */

/* Wrap a libdwarf error: message "<what>: libdwarf: <errmsg>". */
int
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
			dw_fx_drop(&info, d->cu_die[first], d->cu_die[i]);
			first = d->ctx_next;
		}
	}
}

int
dw_die_at(struct kvs_dwarf *d, Dwarf_Off off, Dwarf_Die *die, struct kvs_error *e)
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
Dwarf_Off
dw_die_off(struct kvs_dwarf *d, Dwarf_Die die)
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
int
dw_next_sibling(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Die *sib, Dwarf_Error *err)
{
	int rc = dwarf_siblingof_b(d->dbg, die, 1, sib, err);

	if (rc == DW_DLV_OK && dw_die_off(d, *sib) <= dw_die_off(d, die)) {
		dwarf_dealloc_die(*sib);
		*sib = NULL;
		*err = NULL;
		return DW_DLV_ERROR;
	}
	return rc;
}

int
dw_die_tag(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half *tag, struct kvs_error *e)
{
	Dwarf_Error err = NULL;

	if (dwarf_tag(die, tag, &err) != DW_DLV_OK)
		return dw_fail(d, e, err, "reading DIE tag", dw_die_off(d, die));
	return 0;
}

/* *name = NULL if the DIE has no name.  The string is libdwarf's (section
 * data), valid until dwarf_finish. */
int
dw_die_name(struct kvs_dwarf *d, Dwarf_Die die, const char **name,
    struct kvs_error *e)
{
	Dwarf_Error err = NULL;
	char *s = NULL;
	int rc = dwarf_diename(die, &s, &err);

	*name = NULL;
	if (rc == DW_DLV_ERROR)
		return dw_fail(d, e, err, "reading DIE name", dw_die_off(d, die));
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
		return dw_fail(d, e, err, "reading DIE attribute", dw_die_off(d, die));
	return 1;
}

int
dw_die_has(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at, bool *has,
    struct kvs_error *e)
{
	Dwarf_Error err = NULL;
	Dwarf_Bool b = 0;

	if (dwarf_hasattr(die, at, &b, &err) != DW_DLV_OK)
		return dw_fail(d, e, err, "reading DIE attribute", dw_die_off(d, die));
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
int
dw_die_sconst(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at, int64_t *v,
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
	return dw_fail(d, e, err, "reading constant attribute", dw_die_off(d, die));
}

/* Unsigned constant attribute (sizes, counts); absent -> *present false. */
int
dw_die_uconst(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at, uint64_t *v,
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
	return dw_fail(d, e, err, "reading constant attribute", dw_die_off(d, die));
}

/* Reference attribute as a global .debug_info offset; absent -> 0. */
int
dw_die_ref(struct kvs_dwarf *d, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *ref,
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
		return dw_fail(d, e, err, "reading type reference", dw_die_off(d, die));
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
int
dw_member_location(struct kvs_dwarf *d, Dwarf_Die die, uint64_t *loc,
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
		    (unsigned long long)dw_die_off(d, die), form);
	return 0;
fail:
	dwarf_dealloc(d->dbg, a, DW_DLA_ATTR);
	return dw_fail(d, e, err, "reading member location", dw_die_off(d, die));
}
