/*
 * btf_members.c - members from the kernel's BTF: a dotted member path
 * (kvs_btf_member: offset, bit-field position, anonymous struct and union
 * members crossed) and a struct's members list (kvs_btf_members), with the
 * same answers and order as dwarf.c's; and what a type is under its
 * typedefs (kvs_btf_peel) and an enum's enumerators (kvs_btf_enumerators).
 * Opening the BTF, resolving type
 * names and chains, and describing a member's type are btf.c's (the
 * handle's design story is there).
 */
#include <string.h>

#include "btf_internal.h"

/* A struct, union, or a declaration of one (a FWD left unresolved). */
static bool
is_sou(const struct btf_type *t)
{
	return t != NULL && (btf_is_composite(t) || btf_is_fwd(t));
}

/* Where a member was found. */
struct mfound {
	const struct btf_type *sou;   /* the struct/union that holds it */
	unsigned idx;                 /* its index there */
};

/*
 * Find member `name` (len bytes) among the members of the struct/union t,
 * also inside anonymous struct/union members (all direct members first,
 * then the anonymous ones in order, as dwarf.c searches).  On success (1)
 * *f says where, and *base has the byte offsets of the anonymous members
 * crossed added (so *base is the offset of the struct that directly holds
 * it).  0: not found.
 */
static int
find_member(struct kvs_btf *b, const struct btf_type *t, const char *name,
    size_t len, uint64_t *base, struct mfound *f, int depth, struct kvs_error *e)
{
	const struct btf_member *m;
	unsigned i, vlen;

	if (depth > MAX_TYPE_DEPTH)
		return kerr_set(e, KVS_E_DWARF, "anonymous members nest too deep");
	if (!btf_is_composite(t))
		return 0; /* a declaration: no members */
	m = btf_members(t);
	vlen = btf_vlen(t);
	for (i = 0; i < vlen; i++) {
		const char *mn = btf__name_by_offset(b->btf, m[i].name_off);
		if (mn != NULL && strlen(mn) == len && memcmp(mn, name, len) == 0) {
			f->sou = t;
			f->idx = i;
			return 1;
		}
	}
	for (i = 0; i < vlen; i++) {
		const char *mn = btf__name_by_offset(b->btf, m[i].name_off);
		const struct btf_type *at;
		uint64_t a;
		uint32_t p;
		int rc;

		if (mn != NULL && mn[0] != '\0')
			continue;
		if (bt_peel(b, m[i].type, &p, &at, e) != 0)
			return -1;
		if (at == NULL || !btf_is_composite(at))
			continue;
		a = *base + btf_member_bit_offset(t, i) / 8;
		rc = find_member(b, at, name, len, &a, f, depth + 1, e);
		if (rc != 0) {
			if (rc == 1)
				*base = a;
			return rc;
		}
	}
	return 0;
}

/*
 * Bit-field position of member idx of t: *bitpos its first bit from the
 * start of t, *bits its width (0: not a bit-field).  With kflag set the
 * member carries its width; without it (older encoders) a bit-field's type
 * is an INT whose encoding gives the width and a bit offset.
 */
static int
bitfield(struct kvs_btf *b, const struct btf_type *t, unsigned idx,
    uint64_t *bitpos, unsigned *bits, struct kvs_error *e)
{
	const struct btf_type *it;
	uint32_t p;

	*bitpos = btf_member_bit_offset(t, idx);
	*bits = btf_member_bitfield_size(t, idx);
	if (btf_kflag(t))
		return 0;
	if (bt_peel(b, btf_members(t)[idx].type, &p, &it, e) != 0)
		return -1;
	if (it != NULL && btf_is_int(it) && (btf_int_offset(it) != 0 ||
	    (uint64_t)btf_int_bits(it) != (uint64_t)it->size * 8)) {
		*bitpos += btf_int_offset(it);
		*bits = btf_int_bits(it);
	}
	return 0;
}

int
kvs_btf_member(struct kvs_btf *b, const char *type, const char *path,
    struct kvs_typeinfo *ti, struct kvs_error *e)
{
	const struct btf_type *cur;
	struct mfound f = { NULL, 0 };
	uint64_t acc = 0, base = 0, bitpos;
	const char *p = path, *dot;
	uint32_t id, mtype = 0;
	unsigned bits;
	int rc;

	if (type == NULL || path == NULL)
		return kerr_set(e, KVS_E_INVAL, "no type or member name");
	memset(ti, 0, sizeof(*ti));
	if (bt_find_type(b, type, &id, e) != 0)
		return -1;
	if (bt_peel(b, id, &id, &cur, e) != 0)
		return kerr_push(e, "type %s", type);
	for (;;) {
		size_t len;

		dot = strchr(p, '.');
		len = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (len == 0)
			return kerr_set(e, KVS_E_INVAL, "bad member path \"%s\" for %s",
			    path, type);
		if (!is_sou(cur))
			return kerr_set(e, KVS_E_NOTYPE, "%s has no member \"%s\": "
			    "%.*s is not a struct or union", type, path,
			    (int)(p - path - 1), path);
		base = acc;
		rc = find_member(b, cur, p, len, &base, &f, 0, e);
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
		acc = base + btf_member_bit_offset(f.sou, f.idx) / 8;
		mtype = btf_members(f.sou)[f.idx].type;
		if (dot == NULL)
			break;
		if (bt_peel(b, mtype, &id, &cur, e) != 0)
			return kerr_push(e, "%s.%s", type, path);
		p = dot + 1;
	}
	if (bt_describe(b, mtype, ti, e) != 0 ||
	    bitfield(b, f.sou, f.idx, &bitpos, &bits, e) != 0)
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

/*
 * kvs_btf_members: the members of the struct/union t, which starts `base`
 * bits from the start of the named type; an anonymous struct/union member
 * is reported, then walked one level deeper.  As dwarf.c's walk.
 */
static int
walk_members(struct kvs_btf *b, const struct btf_type *t, uint64_t base,
    unsigned depth, kvs_member_cb cb, void *arg, struct kvs_error *e)
{
	const struct btf_member *m = btf_members(t);
	unsigned i, vlen = btf_vlen(t);

	if (depth > MAX_TYPE_DEPTH)
		return kerr_set(e, KVS_E_DWARF, "anonymous members nest too deep");
	for (i = 0; i < vlen; i++) {
		const char *mn = btf__name_by_offset(b->btf, m[i].name_off);
		struct kvs_member_info mi;
		struct kvs_typeinfo ti;
		const struct btf_type *at;
		uint64_t bitpos;
		unsigned bits;
		uint32_t p;
		int rc;

		memset(&mi, 0, sizeof(mi));
		memset(&ti, 0, sizeof(ti));
		if (bt_describe(b, m[i].type, &ti, e) != 0 ||
		    bitfield(b, t, i, &bitpos, &bits, e) != 0 ||
		    bt_peel(b, m[i].type, &p, &at, e) != 0)
			return -1;
		mi.name = mn != NULL && mn[0] != '\0' ? mn : NULL;
		mi.bit_offset = base + bitpos;
		mi.offset = mi.bit_offset / 8;
		mi.bit_size = bits;
		mi.size = ti.size;
		mi.type_name = ti.type_name;
		mi.kind = ti.kind;
		mi.depth = depth;
		if ((rc = cb(arg, &mi)) != 0)
			return rc;
		if (mi.name == NULL && at != NULL && btf_is_composite(at) &&
		    (rc = walk_members(b, at, mi.bit_offset, depth + 1, cb, arg, e)) != 0)
			return rc;
	}
	return 0;
}

int
kvs_btf_members(struct kvs_btf *b, const char *type, kvs_member_cb cb,
    void *arg, struct kvs_error *e)
{
	const struct btf_type *t;
	uint32_t id;
	int rc;

	if (type == NULL || cb == NULL)
		return kerr_set(e, KVS_E_INVAL, "no type name or callback");
	if (bt_find_type(b, type, &id, e) != 0)
		return -1;
	if (bt_peel(b, id, &id, &t, e) != 0)
		return kerr_push(e, "type %s", type);
	if (t == NULL || !btf_is_composite(t))
		return kerr_set(e, KVS_E_INVAL, "type %s is not a struct or union",
		    type);
	rc = walk_members(b, t, 0, 0, cb, arg, e);
	if (rc == -1 && e->status != KVS_OK)
		return kerr_push(e, "members of %s", type);
	return rc;
}

/* ------------------------------------------------ peeling, enumerators */

int
kvs_btf_peel(struct kvs_btf *b, const char *type, struct kvs_typepeel *p,
    struct kvs_error *e)
{
	const struct btf_type *t, *pt;
	uint32_t id, pid;

	memset(p, 0, sizeof(*p));
	if (bt_find_type(b, type, &id, e) != 0)
		return -1;
	if ((t = btf__type_by_id(b->btf, id)) == NULL)
		return kerr_set(e, KVS_E_DWARF, "BTF type id %u out of range", id);
	if (btf_is_typedef(t) && (p->target = bt_name(b, t->type, e)) == NULL)
		return kerr_push(e, "type %s", type);
	if (bt_peel(b, id, &pid, &pt, e) != 0 || (p->name = bt_name(b, pid, e)) == NULL)
		return kerr_push(e, "type %s", type);
	if (pt == NULL)
		return 0;
	if (btf_is_int(pt)) {
		uint8_t enc = btf_int_encoding(pt);
		p->encoding = enc & BTF_INT_BOOL ? KVS_ENC_BOOL :
		    enc & BTF_INT_SIGNED ? KVS_ENC_SIGNED : KVS_ENC_UNSIGNED;
	} else if (btf_is_float(pt))
		p->encoding = KVS_ENC_FLOAT;
	else if (btf_is_any_enum(pt))
		/* kflag: signed values (pahole copies the DWARF's choice: GCC
		 * makes an enum unsigned when none of its values is negative). */
		p->encoding = btf_kflag(pt) ? KVS_ENC_SIGNED : KVS_ENC_UNSIGNED;
	return 0;
}

int
kvs_btf_enumerators(struct kvs_btf *b, const char *type, kvs_enum_cb cb, void *arg,
    struct kvs_error *e)
{
	const struct btf_type *t;
	uint32_t id, pid;
	unsigned i, n;
	int rc;

	if (bt_find_type(b, type, &id, e) != 0)
		return -1;
	if (bt_peel(b, id, &pid, &t, e) != 0)
		return kerr_push(e, "type %s", type);
	if (t == NULL || !btf_is_any_enum(t))
		return kerr_set(e, KVS_E_INVAL, "type %s is not an enum", type);
	n = btf_vlen(t);
	for (i = 0; i < n; i++) {
		const char *name;
		int64_t v;
		if (btf_is_enum(t)) {
			const struct btf_enum *en = btf_enum(t) + i;
			name = btf__name_by_offset(b->btf, en->name_off);
			/* 32-bit values: signed, or unsigned with kflag clear */
			v = btf_kflag(t) ? (int64_t)en->val : (int64_t)(uint32_t)en->val;
		} else {
			const struct btf_enum64 *en = btf_enum64(t) + i;
			name = btf__name_by_offset(b->btf, en->name_off);
			v = (int64_t)btf_enum64_value(en);
		}
		if ((rc = cb(arg, name != NULL ? name : "", v)) != 0)
			return rc;
	}
	return 0;
}

int
kvs_btf_constant(struct kvs_btf *b, const char *name, int64_t *value, const char **enum_type,
    struct kvs_error *e)
{
	uint32_t id, n = btf__type_cnt(b->btf);

	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(b->btf, id);
		unsigned i, vl;

		if (t == NULL || !btf_is_any_enum(t))
			continue;
		vl = btf_vlen(t);
		for (i = 0; i < vl; i++) {
			const char *en;
			int64_t v;
			if (btf_is_enum(t)) {
				const struct btf_enum *x = btf_enum(t) + i;
				en = btf__name_by_offset(b->btf, x->name_off);
				v = btf_kflag(t) ? (int64_t)x->val : (int64_t)(uint32_t)x->val;
			} else {
				const struct btf_enum64 *x = btf_enum64(t) + i;
				en = btf__name_by_offset(b->btf, x->name_off);
				v = (int64_t)btf_enum64_value(x);
			}
			if (en != NULL && strcmp(en, name) == 0) {
				if ((*enum_type = bt_name(b, id, e)) == NULL)
					return -1;
				*value = v;
				return 0;
			}
		}
	}
	return kerr_set(e, KVS_E_NOTYPE, "no enum in BTF declares %s", name);
}
