/*
 * dwarf_tname.c - the C spelling of a DWARF type ("struct x *",
 * "char [32]", "int (*)(int)", "const char *"), built from the inside out
 * with tname.h's steps, as btf.c spells a BTF type.  The DIEs are read by
 * dwarf_die.c, array bounds counted by dwarf_layout.c (dw_dim_count), and the
 * result interned by the caller (dw_describe).
 */
#include <stdio.h>
#include <string.h>

#include "dwarf_internal.h"
#include "tname.h"

/*
 * C spelling of the type at off, with `decl` the declarator built so far
 * (e.g. "*" for a pointer, "[32]" for an array): "struct x *",
 * "char [32]", "int (*)(int)", "const char *".  Built outward-in as a
 * C declaration is read.
 */
static int
spell(struct kvs_dwarf *d, Dwarf_Off off, char *decl, size_t n, int depth,
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
	if (dw_die_at(d, off, &die, e) != 0)
		return -1;
	if (dw_die_tag(d, die, &tag, e) != 0 || dw_die_name(d, die, &name, e) != 0)
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
		if (dw_die_ref(d, die, DW_AT_type, &next, e) != 0)
			goto out;
		ret = spell(d, next, decl, n, depth + 1, e);
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
		if (dw_die_ref(d, die, DW_AT_type, &next, e) != 0)
			goto out;
		if (next != 0) {
			if (dw_die_at(d, next, &t, e) != 0)
				goto out;
			if (dw_die_tag(d, t, &ttag, e) != 0) {
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
			ret = spell(d, next, decl, n, depth + 1, e);
		} else {
			ret = spell(d, next, decl, n, depth + 1, e);
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
			if (dw_die_tag(d, c, &dtag, e) != 0 || (is_dim(dtag) &&
			    dw_dim_count(d, c, &cnt, &known, e) != 0)) {
				dwarf_dealloc_die(c);
				goto out;
			}
			if (is_dim(dtag) && known)
				snprintf(dims + l, sizeof(dims) - l, "[%llu]",
				    (unsigned long long)cnt);
			else if (is_dim(dtag))
				snprintf(dims + l, sizeof(dims) - l, "[]");
			rc = dw_next_sibling(d, c, &s, &err);
			dwarf_dealloc_die(c);
			if (rc == DW_DLV_ERROR) {
				dw_fail(d, e, err, "reading array dimensions", off);
				goto out;
			}
			c = rc == DW_DLV_OK ? s : NULL;
		}
		if (strlen(decl) + strlen(dims) < n)
			strcat(decl, dims);
		if (dw_die_ref(d, die, DW_AT_type, &next, e) != 0)
			goto out;
		ret = spell(d, next, decl, n, depth + 1, e);
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
			if (dw_die_tag(d, c, &ptag, e) != 0) {
				dwarf_dealloc_die(c);
				goto out;
			}
			if (ptag == DW_TAG_formal_parameter) {
				if (dw_die_ref(d, c, DW_AT_type, &pt, e) != 0 ||
				    spell(d, pt, p, sizeof(p), depth + 1, e) != 0) {
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
			rc = dw_next_sibling(d, c, &s, &err);
			dwarf_dealloc_die(c);
			if (rc == DW_DLV_ERROR) {
				dw_fail(d, e, err, "reading function parameters", off);
				goto out;
			}
			c = rc == DW_DLV_OK ? s : NULL;
		}
		if (np == 0) {
			bool proto = false;
			if (dw_die_has(d, die, DW_AT_prototyped, &proto, e) != 0)
				goto out;
			if (proto)
				strcat(params, "void");
		}
		strcat(params, ")");
		if (strlen(decl) + strlen(params) < n)
			strcat(decl, params);
		if (dw_die_ref(d, die, DW_AT_type, &next, e) != 0)
			goto out;
		ret = spell(d, next, decl, n, depth + 1, e);
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

/* The C spelling of the type at off (decl: what has been spelled around it
 * so far, n bytes of room), out of line of its own recursion. */
int
dw_tname(struct kvs_dwarf *d, Dwarf_Off off, char *decl, size_t n, int depth,
    struct kvs_error *e)
{
	if (n == 0)
		return 0;
	return spell(d, off, decl, n, depth, e);
}
